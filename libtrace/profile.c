/* SPDX-License-Identifier: MIT */
/* profile.c - turns traces into weighted, categorised sample groups: reads each trace once
 * (timestamp order), interns stacks, tracks the events that bracket time on a thread
 * (contention, GC suspensions, wait handles), runs the weighting rules (inferred interval,
 * pyroscope's or TraceEvent's state machines), and aggregates identical samples. Memory
 * grows with distinct stacks and threads, not with the number of samples. Optional hooks
 * (nt_profile_opts.sample_fn/event_fn) see each counted sample and every other event as
 * they are read: the SQLite store (store-sqlite.c) writes its rows from them. On request,
 * each group also keeps when its samples happened (opts.when: a sparse histogram over a
 * shared, growing time grid; see "time histograms") and each stack its subsystem
 * (opts.subsystems).
 * Not here: rate inference (rate.c), symbols (symtab.c), rules (category.c), output
 * (fold.c, tree.c). */
#include "profile-int.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* ------------------------------------------------------------------ hashing */

static uint64_t hash_ips(uint32_t session, const uint64_t *ips, uint32_t n)
{
	uint64_t h = nt_mix64(0x9e3779b97f4a7c15ull ^ session ^ ((uint64_t)n << 32));
	for (uint32_t i = 0; i < n; i++)
		h = nt_mix64(h ^ ips[i]) + i;
	return h;
}

/* ------------------------------------------------------------------ lifecycle */

int nt_profile_new(nt_profile **out, const nt_profile_opts *opts, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	nt_profile_opts o;
	int orc = nt_opts_load(&o, sizeof o, offsetof(nt_profile_opts, read_fn), opts,
			       "profile options", err);
	if (orc)
		return orc;
	nt_profile *p = calloc(1, sizeof *p);
	if (!p)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate profile");
	p->o = o;
	if (p->o.compat == NT_COMPAT_NONE)
		p->o.skip_rate = 0; /* its weights are the inferred interval */
	p->add_rest = p->o.when || p->o.sequence || p->o.sample_fn;
	if (p->o.nthreads) {
		p->threads = malloc(p->o.nthreads * sizeof(uint64_t));
		if (!p->threads) {
			free(p);
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate profile");
		}
		memcpy(p->threads, p->o.threads, p->o.nthreads * sizeof(uint64_t));
		p->o.threads = p->threads;
	}
	if (p->o.rules) {
		p->rules = p->o.rules;
	} else {
		int rc = nt_rules_default(&p->own_rules, err);
		if (rc) {
			free(p->threads);
			free(p);
			return rc;
		}
		p->rules = p->own_rules;
	}
	if (p->o.subsystems) {
		if (p->o.subsystem_rules) {
			p->subs = p->o.subsystem_rules;
		} else {
			int rc = nt_subsystems_default(&p->own_subs, err);
			if (rc) {
				nt_profile_free(p);
				return rc;
			}
			p->subs = p->own_subs;
		}
	}
	*out = p;
	return 0;
}

void nt_profile_free(nt_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->ns; i++) {
		nt_symtab_free(p->s[i].sym);
		nt_universal_free(p->s[i].univ);
		nt_native_free(p->s[i].native);
		nt_mlines_free(p->s[i].mlines);
		nt_rate_free(p->s[i].rate);
		nt_pauses_free(p->s[i].pauses);
		nt_idmap_free(&p->s[i].tids);
		free(p->s[i].name);
		free(p->s[i].gaps);
		free(p->s[i].key_cache);
	}
	free(p->s);
	free(p->stacks);
	free(p->ips);
	free(p->stack_ht);
	free(p->groups);
	free(p->group_ht);
	for (size_t i = 0; i < p->nth; i++)
		free(p->th[i].name);
	free(p->th);
	free(p->names);
	free(p->collapsed);
	free(p->cips);
	free(p->natives);
	free(p->threads);
	nt_rules_memo_free(&p->rules_memo);
	nt_rules_memo_free(&p->subs_memo);
	nt_rules_free(p->own_rules);
	nt_subsystems_free(p->own_subs);
	free(p->frame_subs);
	free(p->went);
	free(p->when_ht);
	free(p->when_bins);
	free(p->when_off);
	nt_selcache_free(p->selc);
	free(p->seq);
	free(p);
}

/* ------------------------------------------------------------------ interning */

/* Returns the stack index of (session, ips) or -1 on allocation failure. */
static int64_t intern_stack_pid(nt_profile *p, uint32_t session, uint64_t pid,
				const uint64_t *ips, uint32_t n)
{
	uint64_t h = hash_ips(session, ips, n) ^ (pid ? nt_mix64(pid) : 0);
	if ((p->nstacks + 1) * 2 > p->stack_htcap &&
	    nt_slots_grow(&p->stack_ht, &p->stack_htcap, 1024, p->stacks, p->nstacks,
			  sizeof *p->stacks, offsetof(pstack, hash)))
		return -1;
	size_t k = (size_t)h & (p->stack_htcap - 1);
	while (p->stack_ht[k]) {
		pstack *s = &p->stacks[p->stack_ht[k] - 1];
		if (s->hash == h && s->session == session && s->depth == n && s->pid == pid &&
		    (n == 0 || memcmp(p->ips + s->off, ips, n * sizeof(uint64_t)) == 0))
			return p->stack_ht[k] - 1;
		k = (k + 1) & (p->stack_htcap - 1);
	}
	if (p->nstacks >= UINT32_MAX - 1 ||
	    nt_grow((void **)&p->stacks, &p->stackcap, p->nstacks + 1, sizeof(pstack)) ||
	    /* at least one slot: when every stack is empty, p->ips would stay NULL, and the
	     * groups' ips (p->ips + off) would be NULL + 0, undefined behaviour */
	    nt_grow((void **)&p->ips, &p->ipcap, p->nips + (n ? n : 1), sizeof(uint64_t)))
		return -1;
	pstack *s = &p->stacks[p->nstacks];
	s->session = session;
	s->depth = n;
	s->off = p->nips;
	s->hash = h;
	s->rule_cat = -1;
	s->collapsed = 0;
	s->names_off = 0;
	s->pid = pid;
	if (n)
		memcpy(p->ips + p->nips, ips, n * sizeof(uint64_t));
	p->nips += n;
	p->stack_ht[k] = (uint32_t)p->nstacks + 1;
	return (int64_t)p->nstacks++;
}

static int64_t intern_stack(nt_profile *p, uint32_t session, const uint64_t *ips, uint32_t n)
{
	return intern_stack_pid(p, session, 0, ips, n);
}

/* The stack index the session's stack-key cache holds for ev's stack, -1 if none (a
 * lookup only: the cache is reset and filled by intern_event_stack()). */
static int64_t cached_event_stack(const psession *s, const nt_event *ev)
{
	uint64_t key = ev->stack_key;
	uint32_t slot = (uint32_t)key, gen = (uint32_t)(key >> 32);
	/* (no key has slot 0, and intern_event_stack() caches neither slot 0 nor slots over
	 * 1 << 24: their entries are 0, which gives -1) */
	if (gen != s->key_gen || slot >= s->key_cap)
		return -1;
	return (int64_t)s->key_cache[slot] - 1;
}

/* intern_stack() for an event's stack, through the session's stack-key cache. */
static int64_t intern_event_stack(nt_profile *p, psession *s, uint32_t si, const nt_event *ev)
{
	uint64_t key = ev->stack_key;
	uint32_t slot = (uint32_t)key, gen = (uint32_t)(key >> 32);
	if (!key || slot > (1u << 24)) /* no key, or an absurd slot: no caching */
		return intern_stack(p, si, ev->stack, ev->stack_depth);
	if (gen != s->key_gen) {
		if (s->key_cache)
			memset(s->key_cache, 0, s->key_cap * sizeof(uint32_t));
		s->key_gen = gen;
	}
	if (slot < s->key_cap && s->key_cache[slot])
		return (int64_t)s->key_cache[slot] - 1;
	int64_t st = intern_stack(p, si, ev->stack, ev->stack_depth);
	if (st < 0)
		return st;
	if (slot >= s->key_cap) {
		size_t old = s->key_cap;
		if (nt_grow((void **)&s->key_cache, &s->key_cap, (size_t)slot + 1, sizeof(uint32_t)))
			return st; /* no room to cache: still correct */
		memset(s->key_cache + old, 0, (s->key_cap - old) * sizeof(uint32_t));
	}
	s->key_cache[slot] = (uint32_t)st + 1;
	return st;
}

static gkey group_key(uint32_t stack, uint8_t bcat, uint8_t stype)
{
	return (gkey)stack | (gkey)bcat << 32 | (gkey)stype << 40;
}

/* The group table's hash of a key (gslot): thread is an index into p->th. */
static uint64_t group_hash(uint32_t thread, gkey key)
{
	return nt_mix64(key ^ nt_mix64((uint64_t)thread + 1));
}

/* The group table holds its keys (gslot), so it rehashes from its own slots rather than
 * through nt_slots_regrow(), whose slots index an entry array. */
static int rehash_groups(nt_profile *p)
{
	size_t ncap = p->group_htcap ? p->group_htcap * 2 : 1024;
	gslot *ht = calloc(ncap, sizeof *ht);
	if (!ht)
		return -1;
	for (size_t i = 0; i < p->group_htcap; i++) {
		const gslot *e = &p->group_ht[i];
		if (!e->group)
			continue;
		size_t h = (size_t)group_hash(e->thread, e->key) & (ncap - 1);
		while (ht[h].group)
			h = (h + 1) & (ncap - 1);
		ht[h] = *e;
	}
	free(p->group_ht);
	p->group_ht = ht;
	p->group_htcap = ncap;
	return 0;
}

/* Thread state of a ThreadSample version >= 1 written by our sampler: 1 running, 2 blocked,
 * 3 disk wait, 4 stopped; 0 unknown (runtime samples, version 0). */
static uint8_t sample_state(psession *s, const nt_event *ev)
{
	nt_value v;
	if (!ev->meta || ev->meta->version < 1 ||
	    !nt_event_field_ref(ev, s->header.pointer_size, "State", &s->state_ref, &v) || v.u > 15)
		return 0;
	return (uint8_t)v.u;
}

/* The group of key (group_key()) of thread, an index into p->th, created on first sight;
 * -1 when out of memory. */
static __attribute__((noinline)) int64_t get_group(nt_profile *p, uint32_t thread, gkey key)
{
	if ((p->ngroups + 1) * 2 > p->group_htcap && rehash_groups(p))
		return -1;
	size_t k = (size_t)group_hash(thread, key) & (p->group_htcap - 1);
	for (;; k = (k + 1) & (p->group_htcap - 1)) {
		const gslot *e = &p->group_ht[k];
		if (!e->group)
			break;
		if (e->key == key && e->thread == thread)
			return e->group - 1;
	}
	if (p->ngroups >= UINT32_MAX - 1 ||
	    nt_grow((void **)&p->groups, &p->groupcap, p->ngroups + 1, sizeof(group)))
		return -1;
	const pthread_state *t = &p->th[thread];
	group *g = &p->groups[p->ngroups];
	memset(g, 0, sizeof *g);
	g->session = t->session;
	g->stack = (uint32_t)key;
	g->thread_id = t->tid;
	g->bcat = (uint8_t)(key >> 32);
	g->stype = (uint8_t)(key >> 40);
	p->group_ht[k] = (gslot){key, thread, (uint32_t)p->ngroups + 1};
	return (int64_t)p->ngroups++;
}

/* The thread state of tid in session (the last one read), created on first sight; NULL
 * when out of memory. Events come in rounds that visit the threads in the same order (the
 * runtime's sampler walks its thread list), so the thread that followed the previous
 * event's thread last time is tried first: one comparison, where the id map costs a hash
 * and a probe that may miss the cache. */
static pthread_state *find_thread(nt_profile *p, uint32_t session, uint64_t tid);

static inline pthread_state *get_thread(nt_profile *p, uint32_t session, uint64_t tid)
{
	if (p->last_th) {
		uint32_t next = p->th[p->last_th - 1].next;
		if (next) {
			pthread_state *t = &p->th[next - 1];
			if (t->tid == tid && t->session == session) {
				p->last_th = next;
				return t;
			}
		}
	}
	return find_thread(p, session, tid);
}

/* get_thread() past its guess: the session's id map, and a new thread on first sight. */
static __attribute__((noinline)) pthread_state *find_thread(nt_profile *p, uint32_t session,
							    uint64_t tid)
{
	pthread_state *prev = p->last_th ? &p->th[p->last_th - 1] : NULL;
	size_t i;
	if (!nt_idmap_get(&p->s[session].tids, tid, &i)) {
		if (nt_grow((void **)&p->th, &p->thcap, p->nth + 1, sizeof(pthread_state)) ||
		    nt_idmap_put(&p->s[session].tids, tid, p->nth))
			return NULL;
		i = p->nth++;
		pthread_state *t = &p->th[i];
		memset(t, 0, sizeof *t);
		t->tid = tid;
		t->session = session;
		t->te_cpu_group = t->te_block_group = -1;
		t->last_stack = -1;
		if (p->part) { /* what brackets it at the chunk's start is the whole trace's */
			t->contention = t->waiting = NTP_UNKNOWN;
			t->last_man = INT64_MIN;
		}
		prev = p->last_th ? &p->th[p->last_th - 1] : NULL; /* p->th may have moved */
	}
	if (prev)
		prev->next = (uint32_t)i + 1;
	p->last_th = (uint32_t)i + 1;
	return &p->th[i];
}

/* get_group() for a sample of thread t, by its key (group_key()). A thread often stays in
 * one stack from sample to sample (a blocked or idle thread nearly always does) or goes
 * back to one of a few, so its latest group in each of four stack classes is tried first:
 * a match skips the hashing and the probe into a table too large for the cache (the
 * lookup was the largest single cost of nettrace-fold). The group's session and thread
 * are t's by construction. */
static inline int64_t key_group(nt_profile *p, pthread_state *t, gkey key)
{
	gcent *c = &t->gcache[(uint32_t)key % 4]; /* the stack's class */
	if (c->group && c->key == key)
		return c->group - 1;
	int64_t gi = get_group(p, (uint32_t)(t - p->th), key);
	if (gi >= 0) /* get_group() keeps gi below UINT32_MAX - 1 */
		*c = (gcent){key, (uint32_t)gi + 1};
	return gi;
}

/* key_group() of (stack, bcat, stype). */
static inline int64_t thread_group(nt_profile *p, pthread_state *t, uint32_t stack, uint8_t bcat,
				   uint8_t stype)
{
	return key_group(p, t, group_key(stack, bcat, stype));
}

/* Starts loading what key_group() of thread t will read for key, so that it finds it in
 * the cache a little later: the group (to be counted) when t's cache holds it, else its
 * group-table slot. A hint only: nothing is changed. Always inlined: GCC takes a function
 * that only reads and prefetches for pure and drops its calls. */
static inline __attribute__((always_inline)) void
prefetch_group(const nt_profile *p, const pthread_state *t, gkey key)
{
	const gcent *c = &t->gcache[(uint32_t)key % 4];
	if (c->group && c->key == key)
		__builtin_prefetch(&p->groups[c->group - 1], 1);
	else if (p->group_htcap)
		__builtin_prefetch(&p->group_ht[(size_t)group_hash((uint32_t)(t - p->th), key) &
						(p->group_htcap - 1)]);
}

/* ------------------------------------------------------------------ selection */

static int thread_selected(const nt_profile *p, uint64_t tid)
{
	if (!p->o.nthreads || p->o.nthread_patterns)
		return 1; /* names are known at the end: filtered when finishing */
	for (size_t i = 0; i < p->o.nthreads; i++)
		if (p->o.threads[i] == tid)
			return 1;
	return 0;
}

static int time_selected(const nt_profile *p, const nt_event *ev)
{
	if (!p->o.has_start && !p->o.has_end)
		return 1;
	int64_t t = p->o.range_raw ? (int64_t)ev->timestamp : ev->time_ns;
	if (p->o.has_start && t < p->o.start)
		return 0;
	if (p->o.has_end && t >= p->o.end)
		return 0;
	return 1;
}

/* ------------------------------------------------------------------ reading */

static int is_runtime(const nt_metadata *m)
{
	return strcmp(m->provider, NT_PROVIDER_RUNTIME) == 0;
}

/* Adds weight w (ns) and one sample to group gi; the sample is the one taken at ts (raw)
 * = tns (ns since the session start), reported to sample_fn. Returns 0 or the hook's
 * error. */
static int add_to_rest(nt_profile *p, int64_t gi, double w, uint64_t ts, int64_t tns,
		       nt_error *err);

static inline int add_to(nt_profile *p, int64_t gi, double w, uint64_t ts, int64_t tns,
			 nt_error *err)
{
	group *g = &p->groups[gi];
	g->samples++;
	g->weight += w;
	if (!p->add_rest)
		return 0;
	return add_to_rest(p, gi, w, ts, tns, err);
}

/* add_to() past the counting: the time histograms, the sequence and the hook. */
static __attribute__((noinline)) int add_to_rest(nt_profile *p, int64_t gi, double w, uint64_t ts,
						 int64_t tns, nt_error *err)
{
	const group *g = &p->groups[gi];
	if (p->o.when && ntp_when_add(p, gi, tns))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory recording sample times");
	if (p->o.sequence) {
		if (nt_grow((void **)&p->seq, &p->seqcap, p->nseq + 1, sizeof *p->seq))
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory recording samples");
		p->seq[p->nseq++] = (nt_seqent){(uint32_t)gi, 0, tns, w};
	}
	if (!p->o.sample_fn)
		return 0;
	nt_profile_sample ps = {g->session, (uint32_t)gi, g->thread_id, ts, tns, w};
	return p->o.sample_fn(p->o.hook_ctx, &ps, err);
}

static inline uint8_t bracket_cat(const psession *s, const pthread_state *t)
{
	if (t->contention)
		return t->contention == 1 ? NT_CAT_LOCK : ntp_bracket_defer(s->in_gc, t);
	if (s->in_gc)
		return NT_CAT_GC;
	if (t->waiting)
		return t->waiting == 1 ? NT_CAT_WAIT : ntp_bracket_defer(s->in_gc, t);
	return 0xFF;
}

/* TraceEvent's per-thread state machine (spec §8.1; SampleProfilerThreadTimeComputer
 * ThreadState.LogThreadStack): the interval from a thread's previous sample to this one
 * is charged to the previous sample's stack, as CPU time when that sample was on CPU
 * (Managed) and as blocked time otherwise. A thread's state starts "uninitialised" and
 * becomes blocked/running only through an External sample, exactly as TraceEvent. */
static int te_log(nt_profile *p, pthread_state *t, double tms, int64_t gi, int on_cpu,
		  const nt_event *ev, nt_error *err)
{
	int rc = 0;
	if (on_cpu) {
		if (t->te_last_block == 0)
			t->te_last_block = -tms; /* uninitialised: running from its first on-CPU stack */
		if (t->te_last_block < 0) {
			if (t->te_last_cpu > 0 && t->te_cpu_group >= 0)
				rc = add_to(p, t->te_cpu_group, (tms - t->te_last_cpu) * 1e6,
					    t->te_cpu_ts, t->te_cpu_ns, err);
		} else if (t->te_last_block > 0) {
			if (t->te_block_group >= 0)
				rc = add_to(p, t->te_block_group, (tms - t->te_last_block) * 1e6,
					    t->te_block_ts, t->te_block_ns, err);
			t->te_last_block = -tms;
		}
		t->te_last_cpu = tms;
		t->te_cpu_group = gi;
		t->te_cpu_ts = ev->timestamp;
		t->te_cpu_ns = ev->time_ns;
	} else {
		if (t->te_last_block > 0) {
			if (t->te_block_group >= 0)
				rc = add_to(p, t->te_block_group, (tms - t->te_last_block) * 1e6,
					    t->te_block_ts, t->te_block_ns, err);
		} else if (t->te_last_block < 0) {
			if (t->te_last_cpu > 0 && t->te_cpu_group >= 0)
				rc = add_to(p, t->te_cpu_group, (tms - t->te_last_cpu) * 1e6,
					    t->te_cpu_ts, t->te_cpu_ns, err);
		}
		t->te_last_block = tms;
		t->te_block_group = gi;
		t->te_block_ts = ev->timestamp;
		t->te_block_ns = ev->time_ns;
	}
	return rc;
}

/* pyroscope dotnetdiag's per-thread rules (EXPECTED.md §3): the interval ending at a
 * sample is charged to that sample; rel is integer ns with an integer ns-per-tick. */
static int pyro_log(nt_profile *p, pthread_state *t, int64_t rel, int64_t gi, uint32_t type,
		    const nt_event *ev, nt_error *err)
{
	int managed_only = p->o.managed_only;
	uint64_t ts = ev->timestamp;
	int64_t tns = ev->time_ns;
	int rc = 0;
	if (type == NT_SAMPLE_MANAGED) {
		if (t->last_ext == 0) {
			t->last_ext = -1;
		} else if (t->last_ext < 0) {
			if (t->last_man > 0 && gi >= 0)
				rc = add_to(p, gi, (double)(rel - t->last_man), ts, tns, err);
		} else {
			if (!managed_only && gi >= 0)
				rc = add_to(p, gi, (double)(rel - t->last_ext), ts, tns, err);
			t->last_ext = -rel;
		}
		t->last_man = rel;
	} else if (type == NT_SAMPLE_EXTERNAL) {
		if (t->last_ext >= 0) {
			if (t->last_ext > 0 && !managed_only && gi >= 0)
				rc = add_to(p, gi, (double)(rel - t->last_ext), ts, tns, err);
		} else {
			if (t->last_man > 0 && gi >= 0)
				rc = add_to(p, gi, (double)(rel - t->last_man), ts, tns, err);
		}
		t->last_ext = rel;
	}
	return rc;
}

/* The thread's CPU clock at a ThreadSample of version >= 1 (our sampler): 1 and *cpu, or 0
 * (runtime samples have none). */
static int sample_clock(psession *s, const nt_event *ev, uint64_t *cpu)
{
	nt_value v;
	if (!ev->meta || ev->meta->version < 1 ||
	    !nt_event_field_ref(ev, s->header.pointer_size, "CpuTimeNs", &s->cpu_ref, &v))
		return 0;
	*cpu = v.u;
	return 1;
}

/* GC pauses (NONE mode): the pauses that began after thread t's previous sample and ended
 * by this one (at now) are time the thread sat suspended; each is charged as gc to the
 * stack of that previous sample (its last known stack), without a sample. A thread first
 * sampled after a pause, or sampled inside one, did not sit in it. */
static int charge_pauses(nt_profile *p, psession *s, pthread_state *t, int64_t now, nt_error *err)
{
	if (!t->seen) {
		t->next_pause = s->npauses;
		/* a chunk's partial profile: what the thread sat in before is charged when the
		 * chunk is merged, to a group made here, where it would have been */
		if (p->part && ntp_part_first(p, s, t, now))
			return NOMEM(p, err);
		return 0;
	}
	if (t->next_pause >= s->npauses)
		return 0; /* nearly every sample: no pause ended since this thread's last one */
	const nt_pauses_info *in = nt_pauses_result(s->pauses);
	for (; t->next_pause < in->nlist; t->next_pause++) {
		const nt_pause *pa = &in->list[t->next_pause];
		if (pa->end_ns > now)
			break;
		if (pa->start_ns < t->last_ns || t->last_stack < 0)
			continue;
		int64_t gi = thread_group(p, t, (uint32_t)t->last_stack, NT_CAT_GC, t->last_stype);
		if (gi < 0)
			return NOMEM(p, err);
		double len = (double)(pa->end_ns - pa->start_ns);
		p->groups[gi].extra_ns += len;
		if (p->o.sequence) {
			if (nt_grow((void **)&p->seq, &p->seqcap, p->nseq + 1, sizeof *p->seq))
				return NOMEM(p, err);
			p->seq[p->nseq++] = (nt_seqent){(uint32_t)gi, NT_SEQ_CHARGE, pa->start_ns, len};
		}
		if (p->o.charge_fn) {
			nt_profile_sample cs = {p->groups[gi].session, (uint32_t)gi, t->tid, 0,
						pa->start_ns, len};
			int rc = p->o.charge_fn(p->o.hook_ctx, &cs, err);
			if (rc)
				return rc;
		}
		s->info.gc_charged_ns += len;
		s->info.gc_charges++;
	}
	return 0;
}

/* NONE mode, a selected sample with the thread's CPU clock: cpu when the thread ran, else
 * ready when it was runnable, or what the rules and its state say when it was blocked.
 * "Ran" is decided by the CPU time the clock says the thread used and no sample has been
 * charged yet (its credit): the clock's delta since the thread's previous sample is added,
 * and a sample is cpu when the credit reaches half a sampling interval (the declared one),
 * which it then takes off. The thread's cpu samples times the interval are then its CPU
 * time within half an interval, every sample stays one sample of one category (so counts,
 * SQL rows and weights agree), and a thread that ran a third of the time has a third of its
 * samples cpu. Not the time since the previous sample: the sampler gives the rounds a
 * thread missed while it waited for a CPU the time of the round it answered, so a thread's
 * samples come in runs with one timestamp, and the delta of the whole run falls on its
 * first sample. The first sample of a thread has no delta (ready or blocked). */
static int add_clocked(nt_profile *p, psession *s, pthread_state *t, uint32_t st, uint8_t stype,
		       uint64_t cpu, const nt_event *ev, nt_error *err)
{
	int running = (stype >> 4) == 1;
	double w = s->header.expected_sampling_ns ? (double)s->header.expected_sampling_ns
						       : 1e6;
	int on_cpu = 0;
	if (t->clk_seen) {
		t->clk_carry += cpu >= t->clk_cpu ? (double)(cpu - t->clk_cpu) : 0.0;
		if (t->clk_carry > 1e10)
			t->clk_carry = 1e10; /* a clock jump, not CPU time to spread */
		if (t->clk_carry >= w / 2) {
			on_cpu = 1;
			t->clk_carry -= w;
		}
	}
	int64_t gi = thread_group(p, t, st, on_cpu ? NT_CAT_CPU : running ? NT_CAT_READY : 0xFF,
				  stype);
	if (gi < 0)
		return NOMEM(p, err);
	return add_to(p, gi, 0, ev->timestamp, ev->time_ns, err);
}

static int handle_sample(nt_profile *p, psession *s, uint32_t si, const nt_event *ev,
			 uint32_t type, nt_error *err)
{
	s->info.samples++;
	if (s->info.samples == 1)
		s->info.first_ts = ev->timestamp;
	s->info.last_ts = ev->timestamp;
	pthread_state *t = get_thread(p, si, ev->thread_id);
	int selected = thread_selected(p, ev->thread_id) && time_selected(p, ev);
	int64_t gi = -1, st = -1;
	int compat = p->o.compat;
	int lookup = selected && !(compat == NT_COMPAT_NONE && p->o.managed_only &&
				   type == NT_SAMPLE_EXTERNAL);
	uint8_t stype = lookup ? (uint8_t)((type > 2 ? 0 : type) | (sample_state(s, ev) << 4)) : 0;
	/* The group lookup below mostly misses the cache: its load starts here, from the
	 * stack the key cache has (the usual case) and the thread's bracket category, and
	 * arrives while the rate estimator runs. */
	int64_t cst = -1;
	uint8_t bc = 0xFF;
	gkey key = 0; /* the group's key, once the stack is known: computed once, used twice */
	if (t && lookup) {
		bc = bracket_cat(s, t); /* nothing below changes it before the lookup */
		cst = cached_event_stack(s, ev);
		if (cst >= 0) {
			key = group_key((uint32_t)cst, bc, stype);
			prefetch_group(p, t, key);
		}
	}
	if (__builtin_expect(p->part != NULL, 0)) {
		if (!t || (!p->o.skip_rate && ntp_part_rate(p, t, ev)))
			return NOMEM(p, err);
	} else if (!p->o.skip_rate) {
		nt_rate_add(s->rate, ev->timestamp, ev->thread_id, ev->capture_thread_id);
	}
	if (!t)
		return NOMEM(p, err);
	uint64_t cpu = 0;
	int clocked = compat == NT_COMPAT_NONE && sample_clock(s, ev, &cpu);
	if (clocked && p->part)
		return ntp_part_abort(p, "a sample with a CPU clock", err);
	if (clocked)
		s->info.clocked_samples++;
	if (compat == NT_COMPAT_NONE) {
		int rc = charge_pauses(p, s, t, ev->time_ns, err);
		if (rc)
			return rc;
	}
	if (lookup) {
		st = cst;
		if (st < 0) {
			st = intern_event_stack(p, s, si, ev);
			if (st < 0)
				return NOMEM(p, err);
			key = group_key((uint32_t)st, bc, stype);
		}
		if (!(clocked && bc == 0xFF)) {
			gi = key_group(p, t, key);
			if (gi < 0)
				return NOMEM(p, err);
		}
		s->info.samples_selected++;
	}
	if (compat == NT_COMPAT_NONE) {
		int rc = 0;
		if (gi >= 0)
			rc = add_to(p, gi, 0, ev->timestamp, ev->time_ns, err);
		else if (st >= 0)
			rc = add_clocked(p, s, t, (uint32_t)st, stype, cpu, ev, err);
		if (clocked) {
			t->clk_seen = 1;
			t->clk_cpu = cpu;
			t->clk_ns = ev->time_ns;
		}
		t->seen = 1;
		t->last_ns = ev->time_ns;
		t->last_stack = st;
		t->last_stype = stype;
		return rc;
	}
	if (compat == NT_COMPAT_PYROSCOPE) {
		/* the tools read this mode in file order (a thread's samples are then in time
		 * order when one capture thread wrote them all, as the runtime's sampler does);
		 * count those that are not, so that the tools can say so */
		if (p->part && !t->seen) {
			/* a chunk's partial: the thread's sample before is the merge's */
			t->seen = 1;
			if (ntp_part_pyro_first(p, t, ev->timestamp))
				return NOMEM(p, err);
		} else if (ev->timestamp < t->pyro_ts) {
			s->info.samples_unordered++;
		}
		t->pyro_ts = ev->timestamp;
		if (ev->timestamp < s->header.sync_qpc)
			return 0; /* pyroscope ignores samples before the session start */
		int64_t rel = (int64_t)((ev->timestamp - s->header.sync_qpc) * s->pyro_per_tick);
		if (p->part && !t->part_pyro &&
		    (type == NT_SAMPLE_MANAGED || type == NT_SAMPLE_EXTERNAL)) {
			if (rel <= 0) /* its state after could be "none yet": not known here */
				return ntp_part_abort(p, "a sample at the session's start", err);
			return ntp_part_pyro_defer(p, t, rel, gi, type) ? NOMEM(p, err) : 0;
		}
		return pyro_log(p, t, rel, gi, type, ev, err);
	}
	double tms = (double)(int64_t)(ev->timestamp - s->header.sync_qpc) * 1000.0 /
		     (double)s->header.qpc_frequency;
	return te_log(p, t, tms, gi, type == NT_SAMPLE_MANAGED || sample_state(s, ev) == 1, ev,
		      err);
}

/* TraceEvent also feeds allocation events with stacks to the state machine as on-CPU
 * samples (GCAllocationTick 10, GCSampledObjectAllocation 20/32). */
static int handle_te_alloc(nt_profile *p, psession *s, uint32_t si, const nt_event *ev,
			   nt_error *err)
{
	pthread_state *t = get_thread(p, si, ev->thread_id);
	if (!t)
		return NOMEM(p, err);
	int64_t gi = -1;
	if (thread_selected(p, ev->thread_id) && time_selected(p, ev)) {
		int64_t st = intern_event_stack(p, s, si, ev);
		if (st < 0)
			return NOMEM(p, err);
		gi = thread_group(p, t, (uint32_t)st, bracket_cat(s, t), NT_SAMPLE_MANAGED);
		if (gi < 0)
			return NOMEM(p, err);
	}
	double tms = (double)(int64_t)(ev->timestamp - s->header.sync_qpc) * 1000.0 /
		     (double)s->header.qpc_frequency;
	return te_log(p, t, tms, gi, 1, ev, err);
}

/* The session's managed-lines resolver, with the search path and root of the native
 * options (nt_native_opts.symbol_path, root) when the caller's struct has them. */
static int managed_lines_new(nt_profile *p, psession *s, nt_error *err)
{
	const nt_native_opts *no = p->o.native;
	const char *path = NULL, *root = NULL;
	if (no && no->sz >= offsetof(nt_native_opts, root) + sizeof(no->root))
		root = no->root;
	if (no && no->sz >= offsetof(nt_native_opts, symbol_path) + sizeof(no->symbol_path))
		path = no->symbol_path;
	return nt_mlines_new(&s->mlines, path, root, err);
}

/* The process filter (opts.pids, opts.process_name) for a Universal event of pid. */
static int process_selected(const nt_profile *p, const psession *s, uint64_t pid)
{
	if (p->o.npids) {
		size_t i = 0;
		while (i < p->o.npids && p->o.pids[i] != pid)
			i++;
		if (i == p->o.npids)
			return 0;
	}
	if (p->o.process_name) {
		const char *n = nt_universal_process_name(s->univ, pid);
		if (!n || strcmp(n, p->o.process_name) != 0)
			return 0;
	}
	return 1;
}

/* A Universal.Events cpu sample (Value samples, each one sampling period: the header's
 * declared period, else 1 ms) or, with opts.thread_time, a cswitch (the thread was off
 * CPU for Value ticks before it ran again; the stack is where it blocked): the weight
 * is given here, not inferred. Stacks are per process (machine-wide traces). */
static int handle_universal(nt_profile *p, psession *s, uint32_t si, const nt_event *ev,
			    uint64_t value, int cswitch, nt_error *err)
{
	if (!cswitch) {
		s->info.samples++;
		if (s->info.samples == 1)
			s->info.first_ts = ev->timestamp;
		s->info.last_ts = ev->timestamp;
	}
	if (!value || !thread_selected(p, ev->thread_id) || !time_selected(p, ev) ||
	    !process_selected(p, s, ev->process_id))
		return 0;
	pthread_state *t = get_thread(p, si, ev->thread_id);
	if (!t)
		return NOMEM(p, err);
	int64_t st = intern_stack_pid(p, si, ev->process_id ? ev->process_id : UINT64_MAX,
				      ev->stack, ev->stack_depth);
	if (st < 0)
		return NOMEM(p, err);
	/* thread state in the high bits as for our sampler: 1 running, 2 blocked */
	uint8_t stype = (uint8_t)((cswitch ? 2 : 1) << 4);
	int64_t gi = thread_group(p, t, (uint32_t)st, bracket_cat(s, t), stype);
	if (gi < 0)
		return NOMEM(p, err);
	double w;
	uint64_t n = 1;
	if (cswitch) {
		w = (double)value * 1e9 / (double)s->header.qpc_frequency;
	} else {
		uint32_t per = s->header.expected_sampling_ns;
		w = (double)value * (per ? (double)per : 1e6);
		n = value;
	}
	s->info.samples_selected++;
	group *g = &p->groups[gi];
	g->own_weight = 1;
	g->samples += n - 1; /* add_to counts one */
	return add_to(p, gi, w, ev->timestamp, ev->time_ns, err);
}

/* A ThreadName event of our sampler: the thread's name (the last one wins). Returns 0 or
 * -1 when out of memory. */
static int note_thread_name(nt_profile *p, uint32_t si, const nt_event *ev, uint32_t ps)
{
	nt_value v;
	if (!nt_event_field(ev, ps, "ThreadId", &v))
		return 0;
	uint64_t tid = v.u;
	if (!nt_event_field(ev, ps, "Name", &v) || !v.raw)
		return 0;
	char *name = NULL;
	size_t used = nt_utf16z_dup(v.raw, v.raw_len, &name);
	if (used == (size_t)-1)
		return -1;
	if (used == 0 || !name || !name[0]) {
		free(name); /* an empty name: the thread is gone, its name stays */
		return 0;
	}
	pthread_state *t = get_thread(p, si, tid);
	if (!t) {
		free(name);
		return -1;
	}
	free(t->name);
	t->name = name;
	return 0;
}

/* An event that is not a sample (nor Universal): symbols, GC pauses, thread names, the
 * brackets of a thread's time (contention, waits), TraceEvent's extra stacks. Returns 0,
 * else the failure. Also the merge's replay of a chunk's events (profile-chunks.c). */
static int handle_other(nt_profile *p, psession *s, uint32_t si, const nt_event *ev, uint32_t ps,
			nt_error *err)
{
	const nt_metadata *m = ev->meta;
	if (p->part) {
		/* a chunk's partial: the symbols are the merge's (it replays the event) */
		if (ntp_part_event(p, ev))
			return NOMEM(p, err);
	} else if (nt_symtab_add_event(s->sym, ev, ps) < 0 ||
		   nt_native_add_event(s->native, ev, ps) < 0 ||
		   nt_mlines_add_event(s->mlines, ev) < 0) {
		return NOMEM(p, err);
	}
	if (nt_pauses_add_event(s->pauses, ev, ps) < 0)
		return NOMEM(p, err);
	s->npauses = nt_pauses_result(s->pauses)->nlist;
	s->in_gc = (uint8_t)nt_pauses_in_gc(s->pauses);
	if (m->event_id == NT_NTS_THREAD_NAME &&
	    strcmp(m->provider, NT_PROVIDER_NTSAMPLER) == 0) {
		return note_thread_name(p, si, ev, ps) ? NOMEM(p, err) : 0;
	}
	/* TraceEvent's thread-time computer also logs an on-CPU stack at these TPL events
	 * (TaskScheduled 7, TaskStarted 8, TaskWaitBegin 10, AwaitTaskContinuation-
	 * Scheduled 12; SampleProfilerThreadTimeComputer with UseTasks). */
	if (p->o.compat == NT_COMPAT_TRACEEVENT &&
	    strcmp(m->provider, "System.Threading.Tasks.TplEventSource") == 0 &&
	    (m->event_id == 7 || m->event_id == 8 || m->event_id == 10 || m->event_id == 12)) {
		return handle_te_alloc(p, s, si, ev, err);
	}
	if (!is_runtime(m))
		return 0;
	switch (m->event_id) {
	case 81: /* ContentionStart */
	case 91: /* ContentionStop */
	case 301: /* WaitHandleWaitStart */
	case 302: { /* WaitHandleWaitStop */
		pthread_state *t = get_thread(p, si, ev->thread_id);
		if (!t)
			return NOMEM(p, err);
		if (m->event_id == 81)
			t->contention = 1;
		else if (m->event_id == 91)
			t->contention = 0;
		else if (m->event_id == 301)
			t->waiting = 1;
		else
			t->waiting = 0;
		break;
	}
	case 10:
	case 20:
	case 32:
		if (p->o.compat == NT_COMPAT_TRACEEVENT)
			return handle_te_alloc(p, s, si, ev, err);
		break;
	default:
		break;
	}
	return 0;
}

int ntp_handle_other(nt_profile *p, psession *s, uint32_t si, const nt_event *ev, uint32_t ps,
		     nt_error *err)
{
	return handle_other(p, s, si, ev, ps, err);
}

pthread_state *ntp_get_thread(nt_profile *p, uint32_t si, uint64_t tid)
{
	return get_thread(p, si, tid);
}

int64_t ntp_intern_stack(nt_profile *p, uint32_t si, uint64_t pid, const uint64_t *ips,
			 uint32_t n)
{
	return intern_stack_pid(p, si, pid, ips, n);
}

void ntp_session_header(psession *s, const nt_trace_header *h)
{
	s->header = *h;
	/* pyroscope's whole ns per tick, as it computes them: once here, not a division per
	 * sample (a reader refuses a frequency of 0) */
	s->pyro_per_tick = h->qpc_frequency ? 1000000000ull / h->qpc_frequency : 0;
}

int64_t ntp_thread_group(nt_profile *p, pthread_state *t, uint32_t stack, uint8_t bcat,
			 uint8_t stype)
{
	return thread_group(p, t, stack, bcat, stype);
}

static int read_events(nt_profile *p, psession *s, uint32_t si, nt_reader *r, nt_pipe *pipe,
		       const nt_trace_header *h, nt_error *err);

int ntp_read_events(nt_profile *p, psession *s, uint32_t si, nt_reader *r,
		    const nt_trace_header *h, nt_error *err)
{
	return read_events(p, s, si, r, NULL, h, err);
}

/* nt_profile_add_trace()'s loop over the events of r (through pipe when there is one).
 * Returns 0 at the end, else the first failure or hook's non-zero result. */
static int read_events(nt_profile *p, psession *s, uint32_t si, nt_reader *r, nt_pipe *pipe,
		       const nt_trace_header *h, nt_error *err)
{
	const nt_event *ev;
	uint32_t ps = h->pointer_size;
	/* nt_meta_universal() compares provider names: the answer depends on the metadata
	 * record only, and a reader's records stay in place until it is freed, so it is kept
	 * for the last one seen, with the record's sample kind (a flag: internal.h) */
	const nt_metadata *last_meta = NULL;
	int last_kind = 0, last_univ = 0;
	uint64_t left = NT_PROGRESS_EVENTS; /* events until the next progress call */
	int rc;
	while ((rc = pipe ? nt_pipe_next(pipe, &ev, err) : nt_reader_next(r, &ev, err)) == 1) {
		if (--left == 0) {
			left = NT_PROGRESS_EVENTS;
			if (p->o.progress_fn)
				p->o.progress_fn(p->o.progress_ctx, ev->offset);
		}
		if (p->o.read_fn && (rc = p->o.read_fn(p->o.hook_ctx, si, h, ev, err)) != 0)
			return rc;
		if (!last_meta || ev->meta != last_meta) {
			last_meta = ev->meta;
			last_kind = nt_meta_sample_kind(last_meta);
			last_univ = nt_meta_universal(last_meta);
		}
		if (last_univ) {
			uint64_t value = 0;
			if (p->part)
				return ntp_part_abort(p, "Universal events", err);
			if (!s->univ && (rc = nt_universal_new(&s->univ, p->o.native, err)) != 0)
				return rc;
			if ((rc = nt_universal_add_event(s->univ, ev, ps, last_univ, &value, err)))
				return rc;
			if (last_univ == NT_UNIV_CPU ||
			    (last_univ == NT_UNIV_CSWITCH && p->o.thread_time)) {
				rc = handle_universal(p, s, si, ev, value, last_univ == NT_UNIV_CSWITCH,
						      err);
				if (rc)
					return rc;
			}
			if (p->o.event_fn && (rc = p->o.event_fn(p->o.hook_ctx, si, h, ev, err)) != 0)
				return rc;
			continue;
		}
		if (last_kind) {
			/* the compat modes read Type as the readers they copy do (a native
			 * sampler's running samples say Managed for them: payload.c) */
			rc = handle_sample(p, s, si, ev,
					   p->o.compat == NT_COMPAT_NONE ? nt_sample_type(ev, last_kind)
									 : nt_event_sample_type_raw(ev),
					   err);
			if (rc)
				return rc;
			continue;
		}
		if (p->o.event_fn && (rc = p->o.event_fn(p->o.hook_ctx, si, h, ev, err)) != 0)
			return rc;
		if ((rc = handle_other(p, s, si, ev, ps, err)) != 0)
			return rc;
	}
	return rc;
}

int nt_profile_add_trace(nt_profile *p, nt_reader *r, const char *name, nt_error *err)
{
	nt_error_clear(err);
	if (p->finished)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "profile already finished");
	if (nt_grow((void **)&p->s, &p->scap, p->ns + 1, sizeof(psession)))
		return NOMEM(p, err);
	uint32_t si = (uint32_t)p->ns;
	psession *s = &p->s[si];
	memset(s, 0, sizeof *s);
	const nt_trace_header *h = nt_reader_header(r);
	ntp_session_header(s, h);
	s->name = nt_strdup(name ? name : "-");
	if (!s->name)
		return NOMEM(p, err);
	p->ns++;
	int rc = nt_symtab_new(&s->sym,
			       p->o.compat == NT_COMPAT_PYROSCOPE ? NT_SYMTAB_RUNDOWN_ONLY : 0, err);
	if (rc)
		return rc;
	rc = nt_native_new(&s->native, p->o.native, err);
	if (rc)
		return rc;
	rc = managed_lines_new(p, s, err);
	if (rc)
		return rc;
	rc = nt_rate_new(&s->rate, h->expected_sampling_ns, h->qpc_frequency, h->sync_qpc, err);
	if (rc)
		return rc;
	rc = nt_pauses_new(&s->pauses, err);
	if (rc)
		return rc;
	s->info.name = s->name;
	/* two cores: the trace in chunks, one reader each (profile-chunks.c), where the
	 * options and the input allow; else (or for what is left) the decoding on the second
	 * core (pipeline.c) */
	rc = ntp_chunks_usable(p) ? ntp_read_chunks(p, s, si, r, h, err) : NTP_CHUNKS_NONE;
	if (rc == NTP_CHUNKS_NONE) {
		nt_pipe *pipe = NULL;
		if (p->o.jobs >= 2 && (rc = nt_pipe_start(&pipe, r, err)) != 0)
			return rc;
		rc = read_events(p, s, si, r, pipe, h, err);
		nt_pipe_free(pipe);
	}
	if (rc)
		return rc;
	const nt_reader_stats *st = nt_reader_stats_get(r);
	s->info.lost_events = st->lost_events;
	s->info.truncated = st->truncated;
	if (s->info.samples) {
		/* timestamps and the tick rate are the file's word: a span int64 ns cannot
		 * hold saturates (the conversion of a larger double is undefined) */
		double d = (double)(s->info.last_ts - s->info.first_ts) * 1e9 /
			   (double)h->qpc_frequency;
		s->info.duration_ns = d < 9.2e18 ? (int64_t)d : INT64_MAX;
	}
	return 0;
}
