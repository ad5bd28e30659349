/* SPDX-License-Identifier: MIT */
/* export-speedscope.c - speedscope JSON (https://www.speedscope.app/file-format-schema.json):
 * "sampled" profiles with explicit weights, one per (session, thread) plus "All threads"
 * when there are several, frames shared by all. Sampled rather than evented: TraceEvent's
 * evented per-thread files with synthetic leaf frames are what speedscope rejected as
 * unbalanced (speedscope #286/#299), and weights keep the inferred interval exact.
 * One pass collects the stacks (frame indexes, root first) grouped by thread; the second
 * writes them: in time order from the profile's sample sequence when it has one (each
 * sample is its group's stack; the time between samples an empty sample, so the profile
 * spans the session), else one entry per stack. Not here: reading inputs
 * (export-stacks.c). */
#include "export.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

typedef struct ss_frame {
	const char *s;
	size_t n;
	uint64_t hash;
	const char *file;     /* profile input: the frame's source file (native DWARF or managed
				 PDB, nt_xstack_native), borrowed from the profile; NULL none */
	uint32_t line;        /* the smallest line of that file seen for the frame */
} ss_frame;

typedef struct ss_stack {
	uint32_t prof;        /* index into profs */
	size_t off;           /* first frame index in idx */
	size_t depth;
	double weight;        /* rounded as written */
	double value;         /* unrounded, in the source's unit */
	uint64_t samples;
} ss_stack;

typedef struct ss_prof {
	uint32_t session;
	uint64_t thread_id;
	double total;
	size_t nstacks;
} ss_prof;

typedef struct ss_ctx {
	ss_frame *frames;
	size_t nframes, fcap;
	uint32_t *fht;        /* frame index + 1 */
	size_t fhtcap;
	uint32_t *idx;        /* frame indexes of all stacks */
	size_t nidx, idxcap;
	ss_stack *stacks;
	size_t nstacks, scap;
	ss_prof *profs;
	size_t nprofs, pcap;
	uint32_t *pht;        /* profile index + 1, keyed by (session, thread) */
	size_t phtcap;
	size_t *order;        /* stack indexes grouped by profile (counting sort) */
	size_t *pstart;       /* first position in order of each profile, nprofs + 1 */
	int decimals;         /* of weights: 0 for ns, 3 otherwise */
	uint32_t max_session;
	uint32_t *gstack;     /* profile input: group index -> stack index + 1 (0: not exported) */
	size_t ngstack;
	nt_xprev prev;        /* the previous stack: its frame indexes end idx */
	size_t prev_off;
	nt_error *err;
} ss_ctx;

static uint64_t pkey_hash(uint32_t session, uint64_t tid)
{
	return nt_mix64(tid ^ (uint64_t)session << 48);
}

/* Profile i's hash in the profile table (hash.c's slots). */
static int prof_hash_of(const void *ctx, size_t i, uint64_t *h)
{
	const ss_ctx *c = ctx;
	*h = pkey_hash(c->profs[i].session, c->profs[i].thread_id);
	return 1;
}

static int64_t frame_index(ss_ctx *c, const nt_xframe *f)
{
	uint64_t h = nt_hash_bytes(f->s, f->n);
	if ((c->nframes + 1) * 2 > c->fhtcap &&
	    nt_slots_grow(&c->fht, &c->fhtcap, 1024, c->frames, c->nframes, sizeof *c->frames,
			  offsetof(ss_frame, hash)))
		return -1;
	size_t k = (size_t)h & (c->fhtcap - 1);
	while (c->fht[k]) {
		const ss_frame *e = &c->frames[c->fht[k] - 1];
		if (e->hash == h && e->n == f->n && memcmp(e->s, f->s, f->n) == 0)
			return c->fht[k] - 1;
		k = (k + 1) & (c->fhtcap - 1);
	}
	if (c->nframes >= UINT32_MAX - 1 ||
	    nt_grow((void **)&c->frames, &c->fcap, c->nframes + 1, sizeof(ss_frame)))
		return -1;
	c->frames[c->nframes] = (ss_frame){f->s, f->n, h, NULL, 0};
	c->fht[k] = (uint32_t)c->nframes + 1;
	return (int64_t)c->nframes++;
}

static int64_t prof_index(ss_ctx *c, uint32_t session, uint64_t tid)
{
	if ((c->nprofs + 1) * 2 > c->phtcap &&
	    nt_slots_regrow(&c->pht, &c->phtcap, 1024, c->nprofs, prof_hash_of, c))
		return -1;
	size_t k = (size_t)pkey_hash(session, tid) & (c->phtcap - 1);
	while (c->pht[k]) {
		const ss_prof *p = &c->profs[c->pht[k] - 1];
		if (p->session == session && p->thread_id == tid)
			return c->pht[k] - 1;
		k = (k + 1) & (c->phtcap - 1);
	}
	if (nt_grow((void **)&c->profs, &c->pcap, c->nprofs + 1, sizeof(ss_prof)))
		return -1;
	c->profs[c->nprofs] = (ss_prof){session, tid, 0, 0};
	c->pht[k] = (uint32_t)c->nprofs + 1;
	return (int64_t)c->nprofs++;
}

static double round_to(double v, int decimals)
{
	double m = decimals ? pow(10, decimals) : 1;
	return floor(v * m + 0.5) / m;
}

static int collect(void *ctx, const nt_xstack *st)
{
	ss_ctx *c = ctx;
	int64_t p = prof_index(c, st->has_thread ? st->session : 0,
			       st->has_thread ? st->thread_id : 0);
	if (p < 0)
		goto nomem;
	if (st->depth > SIZE_MAX - c->nidx ||
	    nt_grow((void **)&c->idx, &c->idxcap, c->nidx + st->depth, sizeof(uint32_t)) ||
	    nt_grow((void **)&c->stacks, &c->scap, c->nstacks + 1, sizeof(ss_stack)))
		goto nomem;
	ss_stack *s = &c->stacks[c->nstacks];
	s->prof = (uint32_t)p;
	s->off = c->nidx;
	s->depth = st->depth;
	s->weight = round_to(st->value, c->decimals);
	s->value = st->value;
	s->samples = st->samples;
	if (st->group) {
		uint32_t gi = st->group->group;
		if (gi >= c->ngstack) {
			size_t old = c->ngstack;
			if (nt_grow((void **)&c->gstack, &c->ngstack, (size_t)gi + 1, sizeof(uint32_t)))
				goto nomem;
			memset(c->gstack + old, 0, (c->ngstack - old) * sizeof(uint32_t));
		}
		c->gstack[gi] = (uint32_t)c->nstacks + 1;
	}
	/* frames shared with the previous stack have the indexes it got */
	size_t shared = nt_xprev_shared(&c->prev, st);
	if (shared == SIZE_MAX)
		goto nomem;
	for (size_t i = 0; i < st->depth; i++) {
		int64_t f = i < shared ? (int64_t)c->idx[c->prev_off + i] : frame_index(c, &st->frames[i]);
		if (f < 0)
			goto nomem;
		c->idx[c->nidx++] = (uint32_t)f;
		const nt_native_frame *nf = st->group ? nt_xstack_native(st, i) : NULL;
		ss_frame *fr = &c->frames[f];
		if (nf && nf->file && nf->line && (!fr->file || (strcmp(fr->file, nf->file) == 0 &&
								 nf->line < fr->line))) {
			fr->file = nf->file;
			fr->line = nf->line;
		}
	}
	c->prev_off = s->off;
	c->profs[p].total += s->weight;
	c->profs[p].nstacks++;
	if (st->has_thread && st->session > c->max_session)
		c->max_session = st->session;
	c->nstacks++;
	return 0;
nomem:
	return nt_fail(c->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing speedscope JSON");
}

static const char *ss_unit(int unit)
{
	switch (unit) {
	case NT_UNIT_NS: return "nanoseconds";
	case NT_UNIT_US: return "microseconds";
	case NT_UNIT_MS: return "milliseconds";
	default: return "none";
	}
}

static void put_num(nt_out *o, double v, int decimals)
{
	char tmp[64];
	int k = nt_fmt_num(tmp, sizeof tmp, v, decimals);
	if (k > 0)
		nt_out_put(o, tmp, (size_t)k);
}

/* One sampled profile: the stacks of profile p, or all of them when p < 0. */
static void write_profile(ss_ctx *c, nt_out *o, const char *name, size_t nlen, long p,
			  double total, int unit)
{
	size_t from = p < 0 ? 0 : c->pstart[p], to = p < 0 ? c->nstacks : c->pstart[p + 1];
	nt_out_str(o, "{\"type\":\"sampled\",\"name\":\"");
	nt_out_json(o, name, nlen);
	nt_out_printf(o, "\",\"unit\":\"%s\",\"startValue\":0,\"endValue\":", ss_unit(unit));
	put_num(o, total, c->decimals);
	nt_out_str(o, ",\n\"samples\":[");
	for (size_t j = from; j < to && o->rc == 0; j++) {
		const ss_stack *s = &c->stacks[p < 0 ? j : c->order[j]];
		nt_out_str(o, j > from ? ",[" : "[");
		for (size_t k = 0; k < s->depth; k++) {
			if (k)
				nt_out_put(o, ",", 1);
			nt_out_u64(o, c->idx[s->off + k]);
		}
		nt_out_str(o, "]");
	}
	nt_out_str(o, "],\n\"weights\":[");
	for (size_t j = from; j < to && o->rc == 0; j++) {
		const ss_stack *s = &c->stacks[p < 0 ? j : c->order[j]];
		if (j > from)
			nt_out_str(o, ",");
		put_num(o, s->weight, c->decimals);
	}
	nt_out_str(o, "]}");
}

/* ---- time order (a profile with a sample sequence) */

typedef struct ss_ev {
	uint32_t prof;
	uint32_t stack;
	size_t seq;           /* position in the sequence: ties keep reading order */
	double t;             /* start, in the unit */
	double w;             /* weight, in the unit */
} ss_ev;

static int cmp_ev(const void *x, const void *y)
{
	const ss_ev *a = x, *b = y;
	if (a->prof != b->prof)
		return a->prof < b->prof ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* One run of a thread's timeline: a stack (or idle: UINT32_MAX) for a weight. */
typedef struct ss_run {
	uint32_t stack;
	double w;
} ss_run;

static int push_run(ss_run **r, size_t *n, size_t *cap, uint32_t stack, double w)
{
	if (w <= 0)
		return 0;
	if (*n && (*r)[*n - 1].stack == stack) {
		(*r)[*n - 1].w += w;
		return 0;
	}
	if (nt_grow((void **)r, cap, *n + 1, sizeof **r))
		return -1;
	(*r)[(*n)++] = (ss_run){stack, w};
	return 0;
}

static void write_runs(ss_ctx *c, nt_out *o, const char *name, const ss_run *r, size_t n,
		       double end, int unit)
{
	nt_out_str(o, "{\"type\":\"sampled\",\"name\":\"");
	nt_out_json(o, name, strlen(name));
	nt_out_printf(o, "\",\"unit\":\"%s\",\"startValue\":0,\"endValue\":", ss_unit(unit));
	put_num(o, end, c->decimals);
	nt_out_str(o, ",\n\"samples\":[");
	for (size_t j = 0; j < n && o->rc == 0; j++) {
		nt_out_str(o, j ? ",[" : "[");
		if (r[j].stack != UINT32_MAX) {
			const ss_stack *s = &c->stacks[r[j].stack];
			for (size_t k = 0; k < s->depth; k++) {
				if (k)
					nt_out_put(o, ",", 1);
				nt_out_u64(o, c->idx[s->off + k]);
			}
		}
		nt_out_str(o, "]");
	}
	nt_out_str(o, "],\n\"weights\":[");
	/* rounded positions, not rounded weights: the weights add up to endValue */
	double at = 0, prev = 0;
	for (size_t j = 0; j < n && o->rc == 0; j++) {
		if (j)
			nt_out_str(o, ",");
		at += r[j].w;
		double pos = j + 1 == n ? round_to(end, c->decimals) : round_to(at, c->decimals);
		put_num(o, round_to(pos - prev, c->decimals), c->decimals);
		prev = pos;
	}
	nt_out_str(o, "]}");
}

/* Every thread of every session on its session's time axis. Returns 0 or NT_ENOMEM. */
static int write_timelines(ss_ctx *c, nt_out *o, nt_profile *prof, const nt_seqent *seq,
			   size_t nseq, int unit)
{
	double f = unit == NT_UNIT_US ? 1e-3 : unit == NT_UNIT_MS ? 1e-6 : 1;
	ss_ev *ev = malloc((nseq ? nseq : 1) * sizeof *ev);
	double *send = calloc((size_t)c->max_session + 1, sizeof *send);
	double *charged = calloc(c->nstacks ? c->nstacks : 1, sizeof *charged);
	ss_run *runs = NULL;
	size_t nev = 0, nruns = 0, rcap = 0;
	int rc = NT_ENOMEM;
	if (!ev || !send || !charged)
		goto out;
	/* time charged without a sample (GC pauses) is laid out where it happened; the
	 * stack's samples share the rest of its weight */
	for (size_t i = 0; i < nseq; i++) {
		uint32_t gi = seq[i].group;
		if ((seq[i].flags & NT_SEQ_CHARGE) && gi < c->ngstack && c->gstack[gi])
			charged[c->gstack[gi] - 1] += seq[i].weight_ns * f;
	}
	for (size_t i = 0; i < nseq; i++) {
		uint32_t gi = seq[i].group;
		if (gi >= c->ngstack || !c->gstack[gi])
			continue; /* a group the selection left out */
		uint32_t si = c->gstack[gi] - 1;
		const ss_stack *s = &c->stacks[si];
		double w;
		if (seq[i].flags & NT_SEQ_CHARGE) {
			if (unit == NT_UNIT_SAMPLES)
				continue; /* no sample */
			w = seq[i].weight_ns * f;
		} else if (unit == NT_UNIT_SAMPLES)
			w = 1;
		else if (seq[i].weight_ns > 0)
			w = seq[i].weight_ns * f;
		else if (s->samples && s->value > charged[si])
			w = (s->value - charged[si]) / (double)s->samples;
		else
			w = 0;
		double t = unit == NT_UNIT_SAMPLES ? 0 : (double)seq[i].time_ns * f;
		ev[nev++] = (ss_ev){s->prof, si, i, t < 0 ? 0 : t, w};
		uint32_t sess = c->profs[s->prof].session;
		if (t + w > send[sess])
			send[sess] = t + w;
	}
	qsort(ev, nev, sizeof *ev, cmp_ev);
	/* Samples of one thread with one time are rounds it answered late: a thread that waits
	 * for a CPU misses rounds, and the sampler gives the ones it missed the time of the
	 * round it answered. They happened one interval apart before it, so they are laid out
	 * back from that time (never before the thread's previous sample), not all at it. */
	if (unit != NT_UNIT_SAMPLES) {
		for (size_t i = 0; i < nev;) {
			size_t j = i + 1;
			while (j < nev && ev[j].prof == ev[i].prof && ev[j].t == ev[i].t)
				j++;
			if (j - i > 1) {
				double floor = i > 0 && ev[i - 1].prof == ev[i].prof ? ev[i - 1].t : 0;
				double at = ev[j - 1].t;
				for (size_t k = j - 1; k-- > i;) {
					at -= ev[k].w;
					ev[k].t = at > floor ? at : floor;
				}
			}
			i = j;
		}
	}
	/* a thread whose samples overlap (a weight longer than the gap to the next) ends
	 * after its last sample: its session's axis grows to hold it */
	for (int pass = 0; pass < 2; pass++) {
		size_t i = 0;
		while (i < nev && o->rc == 0) {
			uint32_t pr = ev[i].prof;
			uint32_t sess = c->profs[pr].session;
			double cur = 0;
			nruns = 0;
			for (; i < nev && ev[i].prof == pr; i++) {
				double w = ev[i].w;
				if (unit != NT_UNIT_SAMPLES) {
					if (ev[i].t > cur) {
						if (push_run(&runs, &nruns, &rcap, UINT32_MAX, ev[i].t - cur))
							goto out;
						cur = ev[i].t;
					}
					/* a sample lasts until the thread's next one at most: the
					 * timeline stays on the samples' times */
					if (i + 1 < nev && ev[i + 1].prof == pr && ev[i + 1].t - cur < w)
						w = ev[i + 1].t > cur ? ev[i + 1].t - cur : 0;
				}
				if (push_run(&runs, &nruns, &rcap, ev[i].stack, w))
					goto out;
				cur += w;
			}
			if (pass == 0) {
				if (unit != NT_UNIT_SAMPLES && cur > send[sess])
					send[sess] = cur;
				continue;
			}
			double end = unit == NT_UNIT_SAMPLES ? cur : send[sess];
			if (end > cur && push_run(&runs, &nruns, &rcap, UINT32_MAX, end - cur))
				goto out;
			char pn[320]; /* "NAME (TID)" as every view labels threads */
			nt_profile_thread_label(prof, sess, c->profs[pr].thread_id, c->max_session > 0,
						pn, sizeof pn);
			if (pr != ev[0].prof)
				nt_out_str(o, ",\n");
			write_runs(c, o, pn, runs, nruns, end, unit);
		}
	}
	rc = 0;
out:
	free(ev);
	free(send);
	free(charged);
	free(runs);
	return rc;
}

/* Groups the stacks by profile, keeping their order within each. */
static int group_stacks(ss_ctx *c)
{
	c->order = malloc((c->nstacks ? c->nstacks : 1) * sizeof(size_t));
	c->pstart = calloc(c->nprofs + 1, sizeof(size_t));
	if (!c->order || !c->pstart)
		return -1;
	for (size_t i = 0; i < c->nprofs; i++)
		c->pstart[i + 1] = c->pstart[i] + c->profs[i].nstacks;
	for (size_t i = 0; i < c->nprofs; i++)
		c->profs[i].nstacks = 0;
	for (size_t i = 0; i < c->nstacks; i++) {
		ss_prof *p = &c->profs[c->stacks[i].prof];
		c->order[c->pstart[c->stacks[i].prof] + p->nstacks++] = i;
	}
	return 0;
}

int nt_speedscope_write(nt_stacks *s, const nt_sink *sink, nt_error *err)
{
	nt_error_clear(err);
	if (!s || !sink)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no stacks or no sink");
	ss_ctx c;
	memset(&c, 0, sizeof c);
	c.err = err;
	int unit = nt_stacks_unit(s);
	c.decimals = unit == NT_UNIT_NS ? 0 : 3;
	int rc = nt_stacks_foreach(s, collect, &c, err);
	nt_out o;
	nt_out_init(&o, sink);
	if (rc)
		goto done;
	if (group_stacks(&c)) {
		rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing speedscope JSON");
		goto done;
	}
	const char *name = nt_stacks_name(s);
	nt_out_str(&o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n");
	nt_out_str(&o, "\"exporter\":\"libnettrace " PACKAGE_VERSION "\",\"name\":\"");
	nt_out_json(&o, name, strlen(name));
	nt_out_str(&o, "\",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[");
	for (size_t i = 0; i < c.nframes; i++) {
		nt_out_str(&o, i ? ",\n{\"name\":\"" : "\n{\"name\":\"");
		nt_out_json(&o, c.frames[i].s, c.frames[i].n);
		if (c.frames[i].file) {
			nt_out_str(&o, "\",\"file\":\"");
			nt_out_json(&o, c.frames[i].file, strlen(c.frames[i].file));
			nt_out_printf(&o, "\",\"line\":%" PRIu32 "}", c.frames[i].line);
			continue;
		}
		nt_out_str(&o, "\"}");
	}
	nt_out_str(&o, "]},\n\"profiles\":[\n");
	nt_profile *prof = nt_stacks_profile(s);
	int profile_input = prof != NULL;
	size_t nseq = 0;
	const nt_seqent *seq = prof ? nt_profile_sequence(prof, &nseq) : NULL;
	if (seq) {
		if (write_timelines(&c, &o, prof, seq, nseq, unit))
			rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET,
				     "out of memory writing speedscope JSON");
		nt_out_str(&o, "\n]}\n");
		goto done;
	}
	if (!profile_input || c.nprofs != 1) {
		double total = 0;
		for (size_t i = 0; i < c.nprofs; i++)
			total += c.profs[i].total;
		const char *all = profile_input ? "All threads" : name;
		write_profile(&c, &o, all, strlen(all), -1, total, unit);
	}
	if (profile_input) {
		for (size_t i = 0; i < c.nprofs && o.rc == 0; i++) {
			char pn[160];
			nt_profile_thread_label(nt_stacks_profile(s), c.profs[i].session,
						c.profs[i].thread_id, c.max_session > 0, pn, sizeof pn);
			if (c.nprofs != 1 || i > 0)
				nt_out_str(&o, ",\n");
			write_profile(&c, &o, pn, strlen(pn), (long)i, c.profs[i].total, unit);
		}
	}
	nt_out_str(&o, "\n]}\n");
done:
	{
		int orc = nt_out_end(&o);
		if (rc == 0 && orc)
			rc = nt_fail(err, orc, NT_NO_OFFSET, orc == NT_ENOMEM ?
				     "out of memory writing speedscope JSON" :
				     "cannot write speedscope JSON");
	}
	free(c.frames);
	free(c.fht);
	free(c.idx);
	free(c.stacks);
	free(c.profs);
	free(c.pht);
	free(c.order);
	free(c.pstart);
	free(c.gstack);
	nt_xprev_free(&c.prev);
	return rc;
}
