/* SPDX-License-Identifier: MIT */
/* profile-chunks.c - reads one trace on two cores by chunks: a helper thread reads every
 * other few chunks of the file with a reader of its own into a partial profile, and the
 * caller's thread reads the rest straight into the profile and merges each partial, in
 * file order, as it comes to it. The result is the single-thread read's, to the byte.
 * Not here: the per-event work (profile.c), the reader's side of chunks (reader.c).
 *
 * A chunk is whole sequence-point regions: from the previous chunk's end to the end of
 * the first sequence point that ends NTP_CHUNK bytes or more further (the last to the
 * input's end), so both readers find the same boundaries as they go, every chunk holds
 * events, and at a boundary no stack, queued event or compressed header carries over. A
 * reader that passes a chunk reads its blocks but decodes only its metadata
 * (nt_reader_chunk_skip()).
 *
 * What does carry over is the profile's state, which a partial cannot know at its
 * chunk's start. It is settled at the merge, where the state of the chunks before is
 * known:
 *  - the rate estimator needs every sample in order: a partial logs (time, thread,
 *    capture thread) and the merge feeds them to the session's estimator;
 *  - symbols, GC pauses, thread names and the other events that are not samples: a
 *    partial copies them and the merge replays them, in order, through the same code;
 *  - what brackets a thread's time (inside a contention or a wait) until the chunk says
 *    so: a sample's category is then a code (NTP_DEFER) the merge resolves with the
 *    thread's state at the chunk's start;
 *  - the GC pauses a thread sat in between its last sample before the chunk and its first
 *    in it: charged at the merge, to a group the partial made in its place (the groups
 *    are numbered in the order of their first sample, as the single read numbers them);
 *  - NT_COMPAT_PYROSCOPE's per-thread state (the interval a sample ends starts at the
 *    thread's sample before, of its kind): a thread's first Managed or External sample in
 *    a chunk is charged at the merge, with the state before the chunk; any start leaves
 *    the same state after it, up to what is never read again;
 *  - each capture thread's sequence numbers (lost events): the helper's reader starts
 *    each chunk from none, records each thread's first number, and the merge counts the
 *    loss against the number before the chunk.
 * A chunk that cannot be merged exactly is read again by the caller's thread: one that
 * starts inside a GC suspension (a partial does not know it is in one), that holds a
 * sample with a CPU clock (its cpu/ready split carries over from sample to sample) or
 * Universal events, or that the helper could not read (a damaged or cut file: the
 * caller's read then fails or stops exactly where a single read would). After a chunk of
 * the last two kinds the helper stops and the rest is read without it.
 *
 * Used when nt_profile_opts.jobs >= 2, the weights are not TraceEvent's, no hook
 * sees events or samples as they come, no sequence or time histograms are kept, and the
 * input can be opened twice (a regular file or memory, V4/V5, not compressed; either order:
 * pyroscope's mode reads in file order). */
#include "profile-int.h"

#include <pthread.h>
#include <stdlib.h>

/* Chunk size. Larger chunks merge less often (a merge costs about a fifth of reading a
 * chunk of 8 MiB on the bench trace: its distinct stacks and groups, its rate samples);
 * smaller ones keep the two threads' shares even near the end. NETTRACE_CHUNK_BYTES (a
 * testing knob: the bundled traces are a few MB) overrides it. */
#define NTP_CHUNK ((uint64_t)8 << 20)
#define NTP_CHUNK_MIN ((uint64_t)256)

/* A partial's log of rate samples at most (bytes): a chunk longer than that (a file whose
 * sequence points are far apart) is read by the caller's thread, so that memory stays
 * bounded whatever the file. */
#define NTP_RATE_MAX ((size_t)24 << 20)

/* Partials in flight: the helper fills one while the caller merges the other. */
#define NTP_SLOTS 2

/* Which chunks the caller's thread reads itself: 3 of every 7. It also merges the
 * helper's 4 (about a fifth of a read each) and feeds their samples to the rate
 * estimator, so its share is the smaller (the two threads were even on the bench
 * trace at 3/7). */
#define NTP_PERIOD 7
static const unsigned char ntp_own[NTP_PERIOD] = {1, 0, 1, 0, 0, 1, 0};

/* The group a partial makes at a thread's first sample, in place of the GC charge the
 * merge may make there (stack index no stack has). */
#define NTP_PH_STACK (UINT32_MAX - 1)

/* The samples for the rate estimator, ~3 bytes each (a chunk of 8 MiB holds ~700,000):
 * per sample a varint of (time difference from the previous sample << 2 | PRATE_ABS |
 * PRATE_CAP), then with PRATE_CAP a varint of its capture thread (an index into
 * ntp_part.caps; else the previous sample's), with PRATE_ABS the whole time (8 bytes,
 * for the first sample and one that goes back or far ahead), and a varint of its thread
 * (an index into the partial's threads). */
#define PRATE_CAP 1u
#define PRATE_ABS 2u
#define PRATE_MAX 30u /* bytes one sample takes at most */

/* NT_COMPAT_PYROSCOPE: a thread's first sample in the chunk (kind 0: its time) or its
 * first Managed or External one (kind 1: pyro_log()'s arguments). */
typedef struct ppyro {
	uint32_t thread;   /* index into the partial's threads */
	uint32_t kind;
	uint64_t ts;
	int64_t rel;
	int64_t group;     /* the partial's, -1 none */
	uint32_t type;
} ppyro;

/* A thread's first sample in the chunk. */
typedef struct pfirst {
	uint32_t thread;   /* index into the partial's threads */
	int64_t ns;        /* its time */
	size_t npauses;    /* the partial's GC pauses then */
} pfirst;

struct ntp_part {
	uint8_t *rate;       /* PRATE_* */
	size_t nrate, ratecap;
	uint64_t rate_ts;    /* the time of the last sample in rate */
	uint32_t rate_cap;   /* its capture thread */
	size_t nrate_samples;
	uint64_t *caps;      /* capture thread ids */
	size_t ncaps, capscap;
	nt_event *ev;        /* the events that are not samples (payload: into arena) */
	size_t *evoff;       /* each one's payload offset in arena */
	size_t nev, evcap, evoffcap;
	uint8_t *arena;
	size_t alen, acap;
	pfirst *first;
	size_t nfirst, firstcap;
	ppyro *pyro;
	size_t npyro, pyrocap;
	int aborted;
};

/* The helper reader's account of a capture thread in the chunk (nt_reader_chunk_thread()). */
typedef struct pseq {
	uint64_t tid;
	uint32_t first, last;
	uint64_t lost;
	int kind;
} pseq;

enum { SLOT_FREE, SLOT_BUSY, SLOT_READY };
enum { CHUNK_OK, CHUNK_NONE, CHUNK_FAIL, CHUNK_ABORT };

typedef struct pslot {
	nt_profile *q;       /* the partial */
	int state;           /* SLOT_* */
	uint64_t chunk;
	int status;          /* CHUNK_*: NONE past the input's end, FAIL the helper could not
				read it, ABORT it holds what a partial cannot take */
	int eof;             /* the chunk ended with the input */
	pseq *seq;
	size_t nseq, seqcap;
	nt_chunk_counts *counts; /* what the helper's reader counted in it */
	void *hctx;          /* opts.chunk_begin()'s context of its read_fn, NULL none */
} pslot;

typedef struct pctx {
	nt_profile *p;
	const nt_trace_header *h;
	nt_reader *r2;       /* the helper's reader */
	uint64_t chunk;      /* NTP_CHUNK or the knob */
	uint64_t r2_chunk;   /* the chunk the helper's reader stands at the start of */
	pslot slots[NTP_SLOTS];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;            /* the caller is done: the helper returns */
} pctx;

/* ------------------------------------------------------------------ the partial's side */

int ntp_part_rate(nt_profile *p, const pthread_state *t, const nt_event *ev)
{
	ntp_part *pt = p->part;
	uint32_t ci = 0;
	while (ci < pt->ncaps && pt->caps[ci] != ev->capture_thread_id)
		ci++;
	if (ci == pt->ncaps) {
		if (nt_grow((void **)&pt->caps, &pt->capscap, pt->ncaps + 1, sizeof *pt->caps))
			return -1;
		pt->caps[pt->ncaps++] = ev->capture_thread_id;
	}
	if (pt->nrate > NTP_RATE_MAX) {
		pt->aborted = 1; /* not a memory failure: the chunk is read again */
		return -1;
	}
	if (pt->nrate + PRATE_MAX > pt->ratecap &&
	    nt_grow((void **)&pt->rate, &pt->ratecap, pt->nrate + PRATE_MAX, 1))
		return -1;
	uint64_t d = ev->timestamp - pt->rate_ts;
	int abs = !pt->nrate_samples || ev->timestamp < pt->rate_ts || d >= ((uint64_t)1 << 60);
	int cap = !pt->nrate_samples || ci != pt->rate_cap;
	uint8_t *o = pt->rate + pt->nrate;
	o += nt_put_varu64(o, (abs ? 0 : d << 2) | (abs ? PRATE_ABS : 0) | (cap ? PRATE_CAP : 0));
	if (cap)
		o += nt_put_varu64(o, ci);
	if (abs) {
		nt_put64(o, ev->timestamp);
		o += 8;
	}
	o += nt_put_varu64(o, (uint64_t)(t - p->th));
	pt->nrate = (size_t)(o - pt->rate);
	pt->rate_ts = ev->timestamp;
	pt->rate_cap = ci;
	pt->nrate_samples++;
	return 0;
}

int ntp_part_first(nt_profile *p, psession *s, pthread_state *t, int64_t now)
{
	ntp_part *pt = p->part;
	uint32_t ti = (uint32_t)(t - p->th);
	if (ntp_thread_group(p, t, NTP_PH_STACK, NT_CAT_GC, 0) < 0 ||
	    nt_grow((void **)&pt->first, &pt->firstcap, pt->nfirst + 1, sizeof *pt->first))
		return -1;
	pt->first[pt->nfirst++] = (pfirst){ti, now, s->npauses};
	return 0;
}

static int pyro_put(ntp_part *pt, ppyro e)
{
	if (nt_grow((void **)&pt->pyro, &pt->pyrocap, pt->npyro + 1, sizeof *pt->pyro))
		return -1;
	pt->pyro[pt->npyro++] = e;
	return 0;
}

int ntp_part_pyro_first(nt_profile *p, const pthread_state *t, uint64_t ts)
{
	return pyro_put(p->part, (ppyro){(uint32_t)(t - p->th), 0, ts, 0, -1, 0});
}

int ntp_part_pyro_defer(nt_profile *p, pthread_state *t, int64_t rel, int64_t gi,
			uint32_t type)
{
	if (pyro_put(p->part, (ppyro){(uint32_t)(t - p->th), 1, 0, rel, gi, type}))
		return -1;
	/* whatever the state before, a Managed sample leaves last_ext negative (only its
	 * sign is read again) and last_man its time; an External one leaves last_ext its
	 * time, and last_man as it was until a Managed sample sets it */
	t->part_pyro = 1;
	if (type == NT_SAMPLE_MANAGED) {
		t->last_ext = -1;
		t->last_man = rel;
	} else {
		t->last_ext = rel;
	}
	return 0;
}

int ntp_part_event(nt_profile *p, const nt_event *ev)
{
	ntp_part *pt = p->part;
	size_t n = ev->payload_len;
	if (nt_grow((void **)&pt->ev, &pt->evcap, pt->nev + 1, sizeof *pt->ev) ||
	    nt_grow((void **)&pt->evoff, &pt->evoffcap, pt->nev + 1, sizeof *pt->evoff) ||
	    (n && nt_grow((void **)&pt->arena, &pt->acap, pt->alen + n, 1)))
		return -1;
	nt_event *e = &pt->ev[pt->nev];
	*e = *ev;
	/* the handlers read no stack; the payload moves with the arena */
	e->stack = NULL;
	e->stack_depth = 0;
	e->stack_key = 0;
	e->payload = NULL;
	pt->evoff[pt->nev++] = pt->alen;
	if (n)
		memcpy(pt->arena + pt->alen, ev->payload, n);
	pt->alen += n;
	return 0;
}

int ntp_part_abort(nt_profile *p, const char *what, nt_error *err)
{
	p->part->aborted = 1;
	return nt_fail(err, NT_EUNSUPPORTED, NT_NO_OFFSET, "%s: not read in chunks", what);
}

/* Empties partial q for its next chunk, keeping its memory. */
static int part_reset(nt_profile *q, const nt_trace_header *h, nt_error *err)
{
	psession *s = &q->s[0];
	q->ngroups = 0;
	if (q->group_ht)
		memset(q->group_ht, 0, q->group_htcap * sizeof *q->group_ht);
	q->nstacks = 0;
	q->nips = 0;
	if (q->stack_ht)
		memset(q->stack_ht, 0, q->stack_htcap * sizeof *q->stack_ht);
	for (size_t i = 0; i < q->nth; i++)
		free(q->th[i].name);
	q->nth = 0;
	q->last_th = 0;
	nt_idmap_free(&s->tids);
	if (s->key_cache)
		memset(s->key_cache, 0, s->key_cap * sizeof *s->key_cache);
	const char *name = s->info.name;
	memset(&s->info, 0, sizeof s->info);
	s->info.name = name;
	ntp_session_header(s, h);
	nt_pauses_free(s->pauses);
	s->pauses = NULL;
	s->npauses = 0;
	s->in_gc = 0;
	ntp_part *pt = q->part;
	pt->nrate = pt->ncaps = pt->nev = pt->alen = pt->nfirst = pt->nrate_samples = 0;
	pt->npyro = 0;
	pt->rate_ts = 0;
	pt->rate_cap = 0;
	pt->aborted = 0;
	return nt_pauses_new(&s->pauses, err);
}

static void part_free(nt_profile *q)
{
	if (!q)
		return;
	ntp_part *pt = q->part;
	if (pt) {
		free(pt->rate);
		free(pt->caps);
		free(pt->ev);
		free(pt->evoff);
		free(pt->arena);
		free(pt->first);
		free(pt->pyro);
		free(pt);
	}
	nt_profile_free(q);
}

/* A partial with p's options, less what it does not do (hooks, progress, subsystems),
 * and p's rules (its own would be compiled for nothing: it is never finished). */
static int part_new(nt_profile **out, const nt_profile *p, const char *name, nt_error *err)
{
	nt_profile_opts o = p->o;
	o.sz = sizeof o;
	o.rules = p->rules;
	o.subsystems = 0;
	o.subsystem_rules = NULL;
	o.progress_fn = NULL;
	o.jobs = 1;
	nt_profile *q = NULL;
	int rc = nt_profile_new(&q, &o, err);
	if (rc)
		return rc;
	q->part = calloc(1, sizeof *q->part);
	q->s = calloc(1, sizeof *q->s);
	if (!q->part || !q->s) {
		part_free(q);
		return NOMEM(q, err);
	}
	q->scap = q->ns = 1;
	q->s[0].name = nt_strdup(name);
	q->s[0].info.name = q->s[0].name;
	if (!q->s[0].name) {
		part_free(q);
		return NOMEM(q, err);
	}
	*out = q;
	return 0;
}

/* ------------------------------------------------------------------ the helper thread */

static int own_chunk(uint64_t k)
{
	return ntp_own[k % NTP_PERIOD];
}

/* Moves the helper's reader to the start of chunk k (>= where it stands): 1 there, 0
 * past the input's end, < 0 on failure. */
static int skip_to(pctx *c, uint64_t k, nt_error *err)
{
	for (; c->r2_chunk < k; c->r2_chunk++) {
		int rc = nt_reader_chunk_skip(c->r2, c->chunk, err);
		if (rc <= 0)
			return rc;
	}
	return 1;
}

/* Reads chunk k into slot sl with the helper's reader. */
static void fill_slot(pctx *c, pslot *sl, uint64_t k)
{
	nt_error err;
	nt_error_clear(&err);
	sl->eof = 0;
	sl->nseq = 0;
	int rc = skip_to(c, k, &err);
	if (rc <= 0) {
		sl->status = rc == 0 ? CHUNK_NONE : CHUNK_FAIL;
		return;
	}
	nt_reader_chunk_begin(c->r2, c->chunk, NT_CHUNK_TRACK);
	c->r2_chunk = k + 1;
	nt_profile *q = sl->q;
	if (part_reset(q, c->h, &err)) {
		sl->status = CHUNK_FAIL;
		return;
	}
	/* the caller's hook reads this chunk's events on a context of their own (the
	 * caller took the slot's last one back: chunk_end()) */
	if (c->p->o.read_fn) {
		sl->hctx = c->p->o.chunk_begin(c->p->o.hook_ctx);
		if (!sl->hctx) {
			sl->status = CHUNK_FAIL;
			return;
		}
		q->o.hook_ctx = sl->hctx;
	}
	rc = ntp_read_events(q, &q->s[0], 0, c->r2, c->h, &err);
	if (rc || nt_reader_stats_get(c->r2)->truncated) {
		sl->status = q->part->aborted ? CHUNK_ABORT : CHUNK_FAIL;
		return;
	}
	sl->eof = !nt_reader_chunk_stopped(c->r2);
	pseq e;
	for (size_t i = 0; nt_reader_chunk_thread(c->r2, i, &e.tid, &e.kind, &e.first, &e.last, &e.lost);
	     i++) {
		if (!e.kind)
			continue;
		if (nt_grow((void **)&sl->seq, &sl->seqcap, sl->nseq + 1, sizeof *sl->seq)) {
			sl->status = CHUNK_FAIL;
			return;
		}
		sl->seq[sl->nseq++] = e;
	}
	if (nt_reader_chunk_counts(c->r2, &sl->counts)) {
		sl->status = CHUNK_FAIL;
		return;
	}
	sl->status = CHUNK_OK;
}

static void *helper_main(void *arg)
{
	pctx *c = arg;
	size_t next_slot = 0;
	for (uint64_t k = 1;; k++) {
		if (own_chunk(k))
			continue;
		pslot *sl = &c->slots[next_slot];
		next_slot = (next_slot + 1) % NTP_SLOTS;
		pthread_mutex_lock(&c->mu);
		while (sl->state != SLOT_FREE && !c->stop)
			pthread_cond_wait(&c->cv, &c->mu);
		int stop = c->stop;
		if (!stop)
			sl->state = SLOT_BUSY;
		pthread_mutex_unlock(&c->mu);
		if (stop)
			break;
		sl->chunk = k;
		fill_slot(c, sl, k);
		int last = sl->status != CHUNK_OK || sl->eof;
		pthread_mutex_lock(&c->mu);
		sl->state = SLOT_READY;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		if (last)
			break;
	}
	return NULL;
}

/* ------------------------------------------------------------------ merging */

/* The bracket category of a deferred code (NTP_DEFER) for thread t as the chunk began. */
static uint8_t bracket_resolve(uint8_t code, const pthread_state *t)
{
	int c = (code & 1) ? t->contention : 0;
	int g = (code >> 1) & 1;
	int w = (code >> 2) & 3;
	if (w == NTP_UNKNOWN)
		w = t->waiting;
	if (c)
		return NT_CAT_LOCK;
	if (g)
		return NT_CAT_GC;
	return w ? NT_CAT_WAIT : 0xFF;
}

/* Can sl's chunk be merged into p exactly, as things stand at its start? */
static int mergeable(const psession *s, nt_reader *r, const pslot *sl)
{
	const nt_profile *q = sl->q;
	if (sl->status != CHUNK_OK || s->in_gc)
		return 0;
	if ((uint64_t)s->npauses + q->s[0].npauses > NT_PAUSE_MAX)
		return 0;
	for (size_t i = 0; i < sl->nseq; i++) {
		const pseq *e = &sl->seq[i];
		uint32_t last;
		if (e->kind != 2)
			continue;
		/* a sequence point the single read would not take (its number is behind the
		 * thread's): the helper's later numbers would differ */
		if (nt_reader_thread_seq(r, e->tid, &last))
			return 0;
		if (last != 0 && e->first - last >= 0x80000000u)
			return 0;
	}
	return 1;
}

/* The pause at index i of the session's list as it will be once the chunk's events are
 * replayed: p's own, then the partial's (mergeable() holds). */
static const nt_pause *pause_at(const nt_pauses_info *pi, const nt_pauses_info *qi, size_t i)
{
	return i < pi->nlist ? &pi->list[i] : &qi->list[i - pi->nlist];
}

/* The GC pauses thread t sat in from its last sample before the chunk to its first in it
 * (f): charge_pauses() at that sample, against the list as it was then. */
static int merge_first(nt_profile *p, psession *s, uint32_t ti, const pfirst *f,
		       const nt_pauses_info *pi, const nt_pauses_info *qi, nt_error *err)
{
	pthread_state *t = &p->th[ti];
	size_t limit = pi->nlist + f->npauses;
	if (!t->seen) {
		t->next_pause = limit;
		return 0;
	}
	for (; t->next_pause < limit; t->next_pause++) {
		const nt_pause *pa = pause_at(pi, qi, t->next_pause);
		if (pa->end_ns > f->ns)
			break;
		if (pa->start_ns < t->last_ns || t->last_stack < 0)
			continue;
		int64_t gi = ntp_thread_group(p, &p->th[ti], (uint32_t)t->last_stack, NT_CAT_GC,
					      t->last_stype);
		if (gi < 0)
			return NOMEM(p, err);
		t = &p->th[ti];
		double len = (double)(pa->end_ns - pa->start_ns);
		p->groups[gi].extra_ns += len;
		s->info.gc_charged_ns += len;
		s->info.gc_charges++;
	}
	return 0;
}

/* pyroscope's pyro_log() for a thread's first Managed or External sample e in a chunk,
 * against t's state before the chunk: 1 and the interval *w when it charges one. */
static int pyro_first(const nt_profile *p, const pthread_state *t, const ppyro *e, double *w)
{
	int managed_only = p->o.managed_only;
	if (e->type == NT_SAMPLE_MANAGED) {
		if (t->last_ext == 0)
			return 0;
		if (t->last_ext < 0) {
			*w = (double)(e->rel - t->last_man);
			return t->last_man > 0;
		}
		*w = (double)(e->rel - t->last_ext);
		return !managed_only;
	}
	if (t->last_ext >= 0) {
		*w = (double)(e->rel - t->last_ext);
		return t->last_ext > 0 && !managed_only;
	}
	*w = (double)(e->rel - t->last_man);
	return t->last_man > 0;
}

/* Merges partial q (chunk of slot sl) into session si of p, whose reader r has just
 * passed the chunk. */
static int merge(nt_profile *p, psession *s, uint32_t si, nt_reader *r, const pslot *sl,
		 nt_error *err)
{
	nt_profile *q = sl->q;
	psession *qs = &q->s[0];
	ntp_part *pt = q->part;
	int rc = 0;
	uint32_t *tmap = malloc((q->nth ? q->nth : 1) * sizeof *tmap);
	uint32_t *smap = malloc((q->nstacks ? q->nstacks : 1) * sizeof *smap);
	int64_t *gmap = malloc((q->ngroups ? q->ngroups : 1) * sizeof *gmap);
	if (!tmap || !smap || !gmap) {
		rc = NOMEM(p, err);
		goto out;
	}
	/* threads and stacks in the order the chunk first named them */
	for (size_t i = 0; i < q->nth; i++) {
		pthread_state *t = ntp_get_thread(p, si, q->th[i].tid);
		if (!t) {
			rc = NOMEM(p, err);
			goto out;
		}
		tmap[i] = (uint32_t)(t - p->th);
	}
	for (size_t i = 0; i < q->nstacks; i++) {
		const pstack *k = &q->stacks[i];
		int64_t st = ntp_intern_stack(p, si, k->pid, q->ips + k->off, k->depth);
		if (st < 0) {
			rc = NOMEM(p, err);
			goto out;
		}
		smap[i] = (uint32_t)st;
	}
	/* the groups in the order of their first sample, the GC charges of each thread's
	 * first sample where the partial left their place */
	const nt_pauses_info *pi = nt_pauses_result(s->pauses);
	const nt_pauses_info *qi = nt_pauses_result(qs->pauses);
	size_t pn = pi->nlist, nf = 0;
	for (size_t i = 0; i < q->ngroups; i++) {
		const group *g = &q->groups[i];
		size_t qti;
		if (!nt_idmap_get(&qs->tids, g->thread_id, &qti)) {
			rc = nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "chunk merge: unknown thread");
			goto out;
		}
		uint32_t ti = tmap[qti];
		gmap[i] = -1;
		if (g->stack == NTP_PH_STACK) {
			if (nf >= pt->nfirst || pt->first[nf].thread != qti) {
				rc = nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "chunk merge: first samples");
				goto out;
			}
			rc = merge_first(p, s, ti, &pt->first[nf++], pi, qi, err);
			if (rc)
				goto out;
			continue;
		}
		uint8_t bcat = g->bcat;
		if ((bcat & NTP_DEFER_MASK) == NTP_DEFER)
			bcat = bracket_resolve(bcat, &p->th[ti]);
		int64_t gi = ntp_thread_group(p, &p->th[ti], smap[g->stack], bcat, g->stype);
		if (gi < 0) {
			rc = NOMEM(p, err);
			goto out;
		}
		gmap[i] = gi;
		group *pg = &p->groups[gi];
		pg->samples += g->samples;
		pg->weight += g->weight;
		pg->extra_ns += g->extra_ns;
	}
	/* the session's counts */
	const nt_session_info *in = &qs->info;
	if (in->samples) {
		if (!s->info.samples)
			s->info.first_ts = in->first_ts;
		s->info.last_ts = in->last_ts;
	}
	s->info.samples += in->samples;
	s->info.samples_selected += in->samples_selected;
	s->info.gc_charged_ns += in->gc_charged_ns;
	s->info.gc_charges += in->gc_charges;
	s->info.samples_unordered += in->samples_unordered;
	/* pyroscope: each thread's first sample against its sample before the chunk, and its
	 * first interval, which depends on its state then */
	for (size_t i = 0; i < pt->npyro; i++) {
		const ppyro *e = &pt->pyro[i];
		const pthread_state *t = &p->th[tmap[e->thread]];
		if (e->kind == 0) {
			s->info.samples_unordered += e->ts < t->pyro_ts;
			continue;
		}
		double w;
		if (pyro_first(p, t, e, &w) && e->group >= 0) {
			group *pg = &p->groups[gmap[e->group]];
			pg->samples++;
			pg->weight += w;
		}
	}
	/* the samples, in order, to the rate estimator */
	uint64_t ts = 0, ci = 0;
	nt_cursor rd;
	nt_cur_init(&rd, pt->nrate ? pt->rate : (const uint8_t *)"", pt->nrate, 0);
	while (nt_cur_left(&rd)) {
		uint64_t v = 0, ti = 0;
		/* the partial's own bytes: they decode */
		nt_cur_varu64(&rd, &v);
		if (v & PRATE_CAP)
			nt_cur_varu64(&rd, &ci);
		if (v & PRATE_ABS)
			nt_cur_u64(&rd, &ts);
		else
			ts += v >> 2;
		nt_cur_varu64(&rd, &ti);
		nt_rate_add(s->rate, ts, q->th[ti].tid, pt->caps[ci]);
	}
	/* the other events, in order: symbols, pauses, names, brackets (the threads' state
	 * at the chunk's end) */
	for (size_t i = 0; i < pt->nev; i++) {
		nt_event ev = pt->ev[i];
		ev.payload = ev.payload_len ? pt->arena + pt->evoff[i] : (const uint8_t *)"";
		rc = ntp_handle_other(p, s, si, &ev, s->header.pointer_size, err);
		if (rc)
			goto out;
	}
	/* the threads sampled in the chunk: their last sample there */
	for (size_t i = 0; i < q->nth; i++) {
		const pthread_state *qt = &q->th[i];
		if (!qt->seen)
			continue;
		pthread_state *t = &p->th[tmap[i]];
		if (p->o.compat == NT_COMPAT_PYROSCOPE) {
			t->pyro_ts = qt->pyro_ts;
			if (qt->part_pyro) {
				t->last_ext = qt->last_ext;
				if (qt->last_man != INT64_MIN)
					t->last_man = qt->last_man;
			}
			continue;
		}
		t->seen = 1;
		t->last_ns = qt->last_ns;
		t->last_stack = qt->last_stack >= 0 ? (int64_t)smap[qt->last_stack] : -1;
		t->last_stype = qt->last_stype;
		t->next_pause = pn + qt->next_pause;
	}
	/* lost events: each capture thread's first number against the one before */
	for (size_t i = 0; i < sl->nseq; i++) {
		const pseq *e = &sl->seq[i];
		uint32_t last;
		if (nt_reader_thread_seq(r, e->tid, &last)) {
			rc = NOMEM(p, err);
			goto out;
		}
		uint64_t lost = e->lost;
		if (last != 0) {
			uint32_t d = e->kind == 1 ? e->first - 1 - last : e->first - last;
			if (d != 0 && d < 0x80000000u)
				lost += d;
		}
		if (nt_reader_set_thread_seq(r, e->tid, e->last, lost)) {
			rc = NOMEM(p, err);
			goto out;
		}
	}
out:
	free(tmap);
	free(smap);
	free(gmap);
	return rc;
}

/* ------------------------------------------------------------------ the caller's side */

int ntp_chunks_usable(const nt_profile *p)
{
	const nt_profile_opts *o = &p->o;
	return o->jobs >= 2 && o->compat != NT_COMPAT_TRACEEVENT &&
	       (!o->read_fn || (o->chunk_begin && o->chunk_end)) && !o->event_fn &&
	       !o->sample_fn && !o->charge_fn && !o->sequence && !o->when;
}

/* Gives slot sl's hook context back (opts.chunk_end()): merged or not. Returns the hook's
 * result (0 without a context). */
static int end_hook(nt_profile *p, pslot *sl, int merged, nt_error *err)
{
	if (!sl->hctx)
		return 0;
	nt_error scratch;
	nt_error_clear(&scratch);
	int rc = p->o.chunk_end(p->o.hook_ctx, sl->hctx, merged, err ? err : &scratch);
	sl->hctx = NULL;
	return merged ? rc : 0;
}

static void stop_helper(pctx *c, pthread_t th)
{
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(th, NULL);
}

/* The caller's read of its own chunk k (or of a chunk the helper could not give). */
static int read_own(pctx *c, psession *s, uint32_t si, nt_reader *r, uint64_t k, int *eof,
		    nt_error *err)
{
	nt_reader_chunk_begin(r, c->chunk, 0);
	int rc = ntp_read_events(c->p, s, si, r, c->h, err);
	if (rc == 0)
		*eof = !nt_reader_chunk_stopped(r);
	return rc;
}

int ntp_read_chunks(nt_profile *p, psession *s, uint32_t si, nt_reader *r,
		    const nt_trace_header *h, nt_error *err)
{
	pctx c;
	memset(&c, 0, sizeof c);
	c.p = p;
	c.h = h;
	c.chunk = NTP_CHUNK;
	const char *knob = getenv("NETTRACE_CHUNK_BYTES");
	if (knob && *knob) {
		char *end;
		unsigned long long v = strtoull(knob, &end, 10);
		if (!*end && v >= NTP_CHUNK_MIN)
			c.chunk = v;
	}
	/* a file that fits in the first chunks: not worth a second reader */
	nt_error e2;
	nt_error_clear(&e2);
	if (nt_reader_reopen(r, 2 * c.chunk, &c.r2, &e2))
		return NTP_CHUNKS_NONE;
	int rc = 0;
	for (int i = 0; i < NTP_SLOTS && !rc; i++)
		rc = part_new(&c.slots[i].q, p, s->name, err);
	if (rc)
		goto free_all;
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	pthread_t th;
	if (pthread_create(&th, NULL, helper_main, &c) != 0) {
		rc = NTP_CHUNKS_NONE;
		goto destroy;
	}
	int eof = 0, helper = 1;
	size_t next_slot = 0;
	rc = read_own(&c, s, si, r, 0, &eof, err);
	for (uint64_t k = 1; !rc && !eof; k++) {
		if (own_chunk(k) || !helper) {
			if (!helper)
				break; /* the rest without chunks (the caller goes on) */
			rc = read_own(&c, s, si, r, k, &eof, err);
			continue;
		}
		pslot *sl = &c.slots[next_slot];
		next_slot = (next_slot + 1) % NTP_SLOTS;
		pthread_mutex_lock(&c.mu);
		while (sl->state != SLOT_READY)
			pthread_cond_wait(&c.cv, &c.mu);
		pthread_mutex_unlock(&c.mu);
		if (sl->chunk == k && mergeable(s, r, sl)) {
			int sk = nt_reader_chunk_skip(r, c.chunk, err);
			if (sk < 0) {
				rc = sk;
			} else {
				rc = merge(p, s, si, r, sl, err);
				/* the caller's reader counts the chunk as if it had read it */
				if (!rc && nt_reader_add_chunk_counts(r, sl->counts))
					rc = NOMEM(p, err);
				int hrc = end_hook(p, sl, !rc, err);
				if (!rc)
					rc = hrc;
				eof = sk == 0;
				s->info.chunks_merged++;
			}
		} else {
			if (sl->status != CHUNK_OK)
				helper = 0; /* it stopped after this one */
			if (sl->status != CHUNK_NONE)
				s->info.chunks_reread++;
			end_hook(p, sl, 0, NULL);
			rc = read_own(&c, s, si, r, k, &eof, err);
		}
		pthread_mutex_lock(&c.mu);
		sl->state = SLOT_FREE;
		pthread_cond_broadcast(&c.cv);
		pthread_mutex_unlock(&c.mu);
	}
	stop_helper(&c, th);
	for (int i = 0; i < NTP_SLOTS; i++)
		end_hook(p, &c.slots[i], 0, NULL); /* chunks read, never merged */
	if (!rc && !eof)
		rc = NTP_CHUNKS_NONE; /* the caller reads the rest */
	nt_reader_chunk_begin(r, 0, 0);
destroy:
	pthread_cond_destroy(&c.cv);
	pthread_mutex_destroy(&c.mu);
free_all:
	for (int i = 0; i < NTP_SLOTS; i++) {
		part_free(c.slots[i].q);
		free(c.slots[i].seq);
		nt_chunk_counts_free(c.slots[i].counts);
	}
	nt_reader_free(c.r2);
	return rc;
}
