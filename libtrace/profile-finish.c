/* SPDX-License-Identifier: MIT */
/* profile-finish.c - nt_profile_finish and what it makes: frame names (symbols, inline
 * expansion, --collapse-unresolved), rule categories and subsystems, symbol coverage, each
 * thread's name and totals; then the finished profile's getters and nt_profile_foreach.
 * Not here: reading (profile.c), time histograms (profile-when.c). */
#include "profile-int.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ finishing */

static int is_unresolved(const char *name)
{
	return name[0] == '?' && strcmp(name, "?!?") == 0;
}

/* Symbol coverage of each session: every frame of every sample, and why a frame has no
 * name (nt_symbol_coverage). */
static void coverage(nt_profile *p)
{
	for (size_t i = 0; i < p->ngroups; i++) {
		const group *g = &p->groups[i];
		if (!g->samples)
			continue;
		const pstack *st = &p->stacks[g->stack];
		psession *s = &p->s[st->session];
		nt_symbol_coverage *c = &s->symbols;
		int methods = nt_symtab_methods(s->sym) > 0;
		int native = nt_native_module_count(s->native) > 0;
		for (uint32_t d = 0; d < st->nnames; d++) {
			const char *name = p->names[st->names_off + d];
			const nt_native_frame *nf = p->natives[st->names_off + d];
			uint64_t n = g->samples;
			c->frames += n;
			if (nf) {
				if (nf->function) {
					c->resolved += n;
					continue;
				}
				/* module+0xOFFSET: the module's status says why */
				int why = NT_NATIVE_NO_SYMBOLS;
				for (size_t m = 0; m < nt_native_module_count(s->native); m++) {
					nt_native_module mod;
					if (nt_native_module_at(s->native, m, &mod) == 0 &&
					    nf->module_path && mod.path &&
					    strcmp(mod.path, nf->module_path) == 0) {
						why = mod.status;
						break;
					}
				}
				if (why == NT_NATIVE_MISSING)
					c->module_missing += n;
				else if (why == NT_NATIVE_BUILD_ID_MISMATCH)
					c->build_id_mismatch += n;
				else
					c->no_symbols += n;
			} else if (!is_unresolved(name)) {
				c->resolved += n;
			} else if (native) {
				c->no_module += n;
			} else if (methods) {
				c->no_method += n;
			} else {
				c->no_method_events += n;
			}
		}
	}
}

/* opts.collapse_unresolved: each run of "?!?" frames of a stack becomes one
 * "[unresolved]" frame (names and natives compacted in place). A dropped frame is a
 * managed lookup, one frame per address: its address goes too (into p->cips), so that the
 * groups' addresses stay one per frame's IP (nt_sample_group.ips), the first of the run
 * for the "[unresolved]" frame. */
static int collapse_unresolved(nt_profile *p)
{
	if (!p->collapsed && !(p->collapsed = nt_strdup("[unresolved]")))
		return -1;
	for (size_t i = 0; i < p->nstacks; i++) {
		pstack *st = &p->stacks[i];
		const char **nm = p->names + st->names_off;
		const nt_native_frame **nf = p->natives + st->names_off;
		const uint64_t *ips = p->ips + st->off;
		uint32_t k = 0, j = 0; /* frames kept; the IP of frame d */
		size_t c0 = p->ncips;
		for (uint32_t d = 0; d < st->nnames; d++) {
			int un = !nf[d] && is_unresolved(nm[d]);
			int ends_ip = !nf[d] || nf[d]->inline_depth == 0;
			if (un && k > 0 && nm[k - 1] == p->collapsed) {
				if (!st->collapsed) {
					/* first drop: the addresses of the frames kept so far */
					if (nt_grow((void **)&p->cips, &p->cipscap, c0 + st->depth + 1,
						    sizeof(uint64_t)))
						return -1;
					memcpy(p->cips + c0, ips, j * sizeof(uint64_t));
					p->ncips = c0 + j;
					st->collapsed = 1;
				}
				j += ends_ip;
				continue;
			}
			if (st->collapsed && ends_ip && j < st->depth)
				p->cips[p->ncips++] = ips[j];
			j += ends_ip;
			nm[k] = un ? p->collapsed : nm[d];
			nf[k] = un ? NULL : nf[d];
			k++;
		}
		if (st->collapsed) {
			st->cips_off = c0;
			st->ncips = (uint32_t)(p->ncips - c0);
		}
		st->nnames = k;
	}
	return 0;
}

static pthread_state *find_thread(nt_profile *p, uint32_t session, uint64_t tid)
{
	size_t i;
	if (session >= p->ns || !nt_idmap_get(&p->s[session].tids, tid, &i))
		return NULL;
	return &p->th[i];
}

static int final_category(const nt_profile *p, const group *g);

/* Per thread: the time on a CPU (hide_idle, nt_profile_thread_oncpu) and the
 * name filter. Returns 0 or -1 when out of memory. */
static int threads_finish(nt_profile *p)
{
	for (size_t i = 0; i < p->nth; i++) {
		pthread_state *t = &p->th[i];
		t->keep = 1;
		if (!p->o.nthread_patterns)
			continue;
		t->keep = 0;
		for (size_t k = 0; k < p->o.nthreads && !t->keep; k++)
			t->keep = p->o.threads[k] == t->tid;
		for (size_t k = 0; k < p->o.nthread_patterns && !t->keep; k++)
			t->keep = t->name && fnmatch(p->o.thread_patterns[k], t->name, 0) == 0;
	}
	for (size_t i = 0; i < p->ngroups; i++) {
		const group *g = &p->groups[i];
		int cat = final_category(p, g);
		pthread_state *t = find_thread(p, g->session, g->thread_id);
		if (!t)
			continue;
		t->total_ns += g->weight;
		if (cat == NT_CAT_CPU || cat == NT_CAT_RUNNING)
			t->oncpu_ns += g->weight;
	}
	return 0;
}

const char *nt_profile_thread_name(nt_profile *p, uint32_t session, uint64_t tid)
{
	if (!p || nt_profile_finish(p, NULL))
		return NULL;
	const pthread_state *t = find_thread(p, session, tid);
	return t ? t->name : NULL;
}

double nt_profile_thread_oncpu(nt_profile *p, uint32_t session, uint64_t tid)
{
	if (!p || nt_profile_finish(p, NULL))
		return 0;
	const pthread_state *t = find_thread(p, session, tid);
	return t ? t->oncpu_ns : 0;
}

size_t nt_profile_thread_label(nt_profile *p, uint32_t session, uint64_t tid, int with_session,
			       char *buf, size_t n)
{
	if (!buf || !n)
		return 0;
	const char *name = p && p->o.compat == NT_COMPAT_NONE
				   ? nt_profile_thread_name(p, session, tid)
				   : NULL;
	int k;
	if (name && name[0])
		k = snprintf(buf, n, "%s (%" PRIu64 ")", name, tid);
	else
		k = snprintf(buf, n, "Thread (%" PRIu64 ")", tid);
	if (k < 0)
		k = 0;
	size_t len = (size_t)k < n ? (size_t)k : n - 1;
	if (with_session && len + 1 < n) {
		int j = snprintf(buf + len, n - len, " [%" PRIu32 "]", session + 1);
		if (j > 0)
			len = len + (size_t)j < n ? len + (size_t)j : n - 1;
	}
	for (size_t i = 0; i < len; i++)
		if (buf[i] == ';' || buf[i] == '\n' || buf[i] == '\r')
			buf[i] = buf[i] == ';' ? ':' : ' ';
	return len;
}

int nt_profile_finish(nt_profile *p, nt_error *err)
{
	nt_error_clear(err);
	if (p->finished)
		return 0;
	for (size_t i = 0; i < p->ns; i++) {
		p->s[i].info.header = &p->s[i].header;
		p->s[i].info.symbols = &p->s[i].symbols;
	}
	for (size_t i = 0; i < p->ns; i++) {
		psession *s = &p->s[i];
		int rc = nt_symtab_seal(s->sym, err);
		if (rc)
			return rc;
		const nt_rate_info *ri = nt_rate_result(s->rate);
		s->rate_info = *ri;
		s->rate_info.lost_samples = s->info.lost_events;
		if (ri->ngaps) {
			s->gaps = malloc(ri->ngaps * sizeof(nt_gap));
			if (!s->gaps)
				return NOMEM(p, err);
			memcpy(s->gaps, ri->gaps, ri->ngaps * sizeof(nt_gap));
		}
		s->rate_info.gaps = s->gaps;
		s->info.rate = &s->rate_info;
		s->pauses_info = *nt_pauses_result(s->pauses);
		s->info.pauses = &s->pauses_info;
	}
	/* Resolve every stack once: names (leaf first) and the frame-rule category. An IP
	 * that no managed method covers, in a session with a module map, is native: it becomes
	 * its inlined functions (innermost first) and the function they are in. Frames above
	 * the leaf are return addresses, looked up at ip - 1 (the call), as addr2line users do. */
	size_t k = 0;
	if (nt_grow((void **)&p->names, &p->namescap, 1, sizeof(char *)) ||
	    nt_grow((void **)&p->natives, &p->nativescap, 1, sizeof(*p->natives)))
		return NOMEM(p, err);
	for (size_t i = 0; i < p->nstacks; i++) {
		pstack *st = &p->stacks[i];
		psession *s = &p->s[st->session];
		int native = nt_native_module_count(s->native) > 0;
		st->names_off = k;
		for (uint32_t d = 0; d < st->depth; d++) {
			uint64_t ip = p->ips[st->off + d];
			const char *name = nt_symtab_name(s->sym, ip);
			const nt_native_frame *nf = NULL;
			size_t n = 1;
			if (strcmp(name, "?!?") != 0) /* managed: its source line, if any */
				nf = nt_mlines_resolve(s->mlines, ip, d > 0, name, NULL);
			else if (st->pid && s->univ) {
				const char *sym, *file;
				int rc = nt_universal_resolve(s->univ, st->pid, ip,
							      d > 0 && ip > 0 ? ip - 1 : ip, &sym,
							      &file, &nf, &n, err);
				if (rc)
					return rc;
				if (sym)
					name = sym;
				if (n == 0) {
					n = 1;
					nf = NULL;
				}
			} else if (native) {
				int rc = nt_native_resolve(s->native, d > 0 && ip > 0 ? ip - 1 : ip, &nf,
							   &n, err);
				if (rc)
					return rc;
				if (n == 0)
					n = 1; /* in no module: stays "?!?" */
			}
			if (nt_grow((void **)&p->names, &p->namescap, k + n, sizeof(char *)) ||
			    nt_grow((void **)&p->natives, &p->nativescap, k + n, sizeof(*p->natives)))
				return NOMEM(p, err);
			for (size_t j = 0; j < n; j++, k++) {
				p->names[k] = nf ? nf[j].name : name;
				p->natives[k] = nf ? &nf[j] : NULL;
			}
		}
		st->nnames = (uint32_t)(k - st->names_off);
		st->rule_cat = nt_rules_match_memo(p->rules, &p->rules_memo, p->names + st->names_off,
						   st->nnames);
	}
	p->nnames = k;
	nt_rules_memo_free(&p->rules_memo);
	coverage(p);
	if (p->o.collapse_unresolved && collapse_unresolved(p))
		return NOMEM(p, err);
	/* Subsystems: each stack's, and each frame's own, parallel to names. */
	if (p->subs && !(p->frame_subs = malloc((k ? k : 1) * sizeof(int32_t))))
		return NOMEM(p, err);
	for (size_t i = 0; i < p->nstacks; i++) {
		pstack *st = &p->stacks[i];
		st->sub = p->subs ? nt_subsystems_match_memo(p->subs, &p->subs_memo,
							      p->names + st->names_off, st->nnames,
							      p->frame_subs + st->names_off)
				  : -1;
	}
	nt_rules_memo_free(&p->subs_memo);
	if (p->o.when && ntp_when_finish(p))
		return NOMEM(p, err);
	/* Default weights: each sample carries its session's inferred interval; when too few
	 * samples to infer one, the declared interval, else 1 ms. */
	if (p->o.compat == NT_COMPAT_NONE) {
		for (size_t i = 0; i < p->ns; i++) {
			nt_session_info *si = &p->s[i].info;
			double iv = si->rate->inferred_interval_ns;
			si->sample_weight_ns = iv > 0 ? iv
					       : si->header->expected_sampling_ns
						       ? (double)si->header->expected_sampling_ns
						       : 1e6;
		}
		for (size_t i = 0; i < p->ngroups; i++) {
			group *g = &p->groups[i];
			if (g->own_weight)
				continue;
			const nt_session_info *si = &p->s[g->session].info;
			double iv = si->rate->inferred_interval_ns;
			if (!(iv > 0))
				iv = si->header->expected_sampling_ns ? si->header->expected_sampling_ns
								     : 1e6;
			g->weight = (double)g->samples * iv + g->extra_ns;
		}
	}
	if (threads_finish(p))
		return NOMEM(p, err);
	p->finished = 1;
	return 0;
}

size_t nt_profile_session_count(nt_profile *p)
{
	return p->ns;
}

const nt_session_info *nt_profile_session(nt_profile *p, size_t i)
{
	if (i >= p->ns || nt_profile_finish(p, NULL))
		return NULL;
	return &p->s[i].info;
}

static int final_category(const nt_profile *p, const group *g)
{
	if (g->bcat != 0xFF)
		return g->bcat;
	int rc = p->stacks[g->stack].rule_cat;
	if (rc == NT_CAT_CPU)
		return NT_CAT_RUNNING; /* "cpu" is measured time only (a CPU clock) */
	if (rc >= 0)
		return rc;
	/* The sampler's thread state says whether the thread ran (doc/format/sampler-events.md);
	 * the frame rules above still decide why it waited (a thread just woken from a sleep
	 * and waiting for a CPU is "running" with its leaf in the sleep call). */
	switch (g->stype >> 4) {
	case 1: return NT_CAT_RUNNING;
	case 2: return NT_CAT_WAIT;
	case 3: return NT_CAT_IO;
	default: break;
	}
	switch (g->stype & 0x0F) {
	case NT_SAMPLE_MANAGED: return NT_CAT_RUNNING;
	case NT_SAMPLE_EXTERNAL: return NT_CAT_EXTERNAL;
	default: return NT_CAT_UNKNOWN;
	}
}

int nt_profile_foreach(nt_profile *p, nt_group_fn fn, void *ctx)
{
	int rc = nt_profile_finish(p, NULL);
	if (rc)
		return rc;
	const char **scratch = NULL;
	int32_t *subscratch = NULL; /* TraceEvent: frame subsystems with the pseudo-frame's */
	size_t scap = 0, sscap = 0;
	int32_t *selsubs = NULL;    /* selection: frame subsystems of the selected frames */
	size_t selsubcap = 0;
	int te = p->o.compat == NT_COMPAT_TRACEEVENT;
	const nt_select *sel = nt_select_empty(p->o.select) ? NULL : p->o.select;
	int rewrites = nt_select_rewrites(sel);
	if (sel && !p->selc && nt_selcache_new(&p->selc, sel))
		return NT_ENOMEM;
	for (size_t i = 0; i < p->ngroups; i++) {
		const group *g = &p->groups[i];
		if (g->samples == 0 && p->o.compat != NT_COMPAT_NONE)
			continue; /* a compat group that never received an interval */
		if (g->samples == 0 && !(g->weight > 0))
			continue;
		int cat = final_category(p, g);
		if (p->o.category_mask && !(p->o.category_mask & (1u << cat)))
			continue;
		if (p->o.nthread_patterns || p->o.hide_idle) {
			const pthread_state *t = find_thread(p, g->session, g->thread_id);
			/* idle: on a CPU less than 1% of its time (a blocked thread still
			 * runs now and then, to wake up and block again) */
			if (t && (!t->keep || (p->o.hide_idle && !(t->oncpu_ns >= 0.01 * t->total_ns &&
								      t->oncpu_ns > 0))))
				continue;
		}
		const pstack *st = &p->stacks[g->stack];
		nt_sample_group sg;
		sg.session = g->session;
		sg.thread_id = g->thread_id;
		sg.category = cat;
		sg.sample_type = g->stype & 0x0F;
		sg.samples = g->samples;
		sg.weight_ns = g->weight;
		sg.charged_ns = g->extra_ns;
		sg.depth = st->nnames;
		sg.frames = p->names + st->names_off;
		sg.group = (uint32_t)i;
		sg.stack = g->stack;
		sg.ips = st->collapsed ? p->cips + st->cips_off : p->ips + st->off;
		sg.nips = st->collapsed ? st->ncips : st->depth;
		sg.subsystem = st->sub;
		sg.frame_subsystems = p->frame_subs ? p->frame_subs + st->names_off : NULL;
		sg.when = p->when_bins ? p->when_bins + p->when_off[i] : NULL;
		sg.nwhen = p->when_bins ? p->when_off[i + 1] - p->when_off[i] : 0;
		if (te) {
			if (nt_grow((void **)&scratch, &scap, (size_t)st->nnames + 1, sizeof(char *)) ||
			    (p->frame_subs && nt_grow((void **)&subscratch, &sscap,
						      (size_t)st->nnames + 1, sizeof(int32_t)))) {
				rc = NT_ENOMEM;
				break;
			}
			scratch[0] = (g->stype & 0x0F) == NT_SAMPLE_MANAGED ? "CPU_TIME"
									      : "UNMANAGED_CODE_TIME";
			memcpy(scratch + 1, p->names + st->names_off, st->nnames * sizeof(char *));
			sg.frames = scratch;
			sg.depth = st->nnames + 1;
			if (p->frame_subs) {
				subscratch[0] = -1;
				memcpy(subscratch + 1, sg.frame_subsystems, st->nnames * sizeof(int32_t));
				sg.frame_subsystems = subscratch;
			}
		}
		sg.frame_src = NULL;
		if (sel) {
			/* the TraceEvent pseudo-frame differs between groups of one stack */
			size_t key = (size_t)g->stack * 2 + (te && scratch[0][0] == 'C');
			const char *const *sf;
			const uint32_t *src;
			uint32_t sn;
			int kept = nt_selcache_apply(p->selc, key, sg.frames, sg.depth, &sf, &src, &sn);
			if (kept < 0) {
				rc = NT_ENOMEM;
				break;
			}
			if (!kept)
				continue;
			if (rewrites) {
				if (sg.frame_subsystems) {
					if (nt_grow((void **)&selsubs, &selsubcap, (size_t)sn + 1,
						    sizeof(int32_t))) {
						rc = NT_ENOMEM;
						break;
					}
					for (uint32_t k = 0; k < sn; k++)
						selsubs[k] = sg.frame_subsystems[src[k]];
					sg.frame_subsystems = selsubs;
				}
				sg.frames = sf;
				sg.depth = sn;
				sg.frame_src = src;
			}
		}
		rc = fn(ctx, &sg);
		if (rc)
			break;
	}
	free(scratch);
	free(subscratch);
	free(selsubs);
	return rc;
}

nt_mlines *nt_profile_mlines(nt_profile *p, size_t session)
{
	if (session >= p->ns || nt_profile_finish(p, NULL))
		return NULL;
	return p->s[session].mlines;
}

const nt_seqent *nt_profile_sequence(const nt_profile *p, size_t *n)
{
	*n = p->o.sequence ? p->nseq : 0;
	return p->o.sequence ? p->seq : NULL;
}

nt_native *nt_profile_native(nt_profile *p, size_t session)
{
	if (session >= p->ns || nt_profile_finish(p, NULL))
		return NULL;
	nt_native *nn = p->s[session].native;
	return nt_native_module_count(nn) ? nn : NULL;
}

const nt_native_frame *nt_profile_frame_native(nt_profile *p, const nt_sample_group *g,
					       uint32_t i)
{
	if (!p->finished || !g || g->stack >= p->nstacks)
		return NULL;
	const pstack *st = &p->stacks[g->stack];
	uint32_t pseudo = p->o.compat == NT_COMPAT_TRACEEVENT; /* frames[0] is CPU_TIME... */
	if (g->frame_src) {
		if (i >= g->depth)
			return NULL;
		i = g->frame_src[i]; /* a selected frame: the stack's frame it stands for */
	}
	if (i < pseudo || i - pseudo >= st->nnames)
		return NULL;
	return p->natives[st->names_off + i - pseudo];
}

const nt_subsystems *nt_profile_subsystems(const nt_profile *p)
{
	return p ? p->subs : NULL;
}
