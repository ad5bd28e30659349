/* SPDX-License-Identifier: MIT */
/* pipeline.c - decodes a trace on a second thread: nt_pipe_next() hands the consumer the
 * events nt_reader_next() would, in the same order, as copies made by the decoding thread
 * in batches. The reader and the profile then each have a core; the consumer (the caller's
 * thread, where the hooks of nt_profile_opts keep running) sees exactly the event sequence
 * of the single-thread path, so every output is the same. Not here: what is done with the
 * events (profile.c). The rate estimator stays with the consumer: run on this thread it
 * made the decoder, in timestamp order the heavier side, the limit (fold --jobs 2 on the
 * 150M bench trace: 1.95-2.32 s wall against 1.67-1.71 s with it on the consumer). */
#include "config.h"

#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Batches in flight: the decoder fills one while the consumer drains another, the others
 * absorb jitter. A batch closes at PIPE_EVENTS events or when its arena (stacks, long
 * payloads, whole events) is full: 8 x (1024 x 80 + 512 KiB), ~4.7 MiB at most, whatever
 * the trace's size (one event larger than the arena gets a batch of its own). A batch of
 * 1024 keeps the decoder's writes and the consumer's reads of one batch apart in time
 * (256 was 10 % slower, 2048 no faster; fold --jobs 2 on the 150M bench trace). */
#define PIPE_BATCHES 8
#define PIPE_EVENTS 1024
#define PIPE_ARENA ((size_t)1 << 19)

/* Stacks already in a batch, by nt_event.stack_key (direct-mapped): an event whose stack
 * is there points to that copy. A thread sampled in the same stack again and again is the
 * common case, and the copies (and the consumer's cache misses on them, the data comes
 * from another core) were most of the pipeline's cost. 512 entries: with 128, 40 % of the
 * events of the 10M bench trace copied their stack. */
#define PIPE_DEDUP_BITS 9

/* A distance that keeps two threads' data off each other's cache lines (two 64-byte
 * lines: x86 fetches lines in adjacent pairs). */
#define PIPE_LINE 128

/* An event in a batch. The consumer reads every byte of a batch from another core's
 * cache, so a record holds what changes from event to event, 80 bytes, not the 168 of an
 * nt_event: the fields that stay the same along a run (capture thread, processor,
 * process, activity ids: prun) are the previous event's, and an event where one of them
 * changes (or the byte offset moves by 2 GiB or more) is kept whole in the arena (FULL).
 * The first event of a batch is always whole, so a batch needs no earlier one. */
typedef struct prec {
	const nt_metadata *meta;
	uint64_t thread_id;
	uint64_t timestamp;
	int64_t time_ns;
	uint64_t stack_key;
	const uint64_t *stack;
	union {                  /* a payload of up to 8 bytes is here, a longer one in */
		uint8_t bytes[8];    /* the arena; FULL: the whole event (an nt_event) */
		const void *ptr;
	} pay;
	int32_t off_delta;       /* offset - the previous event's offset */
	uint32_t seq;
	uint32_t stack_id;
	uint32_t stack_depth;
	uint32_t payload_len;
	uint32_t flags;          /* PREC_* */
} prec;

#define PREC_FULL 1u
#define PREC_SORTED 2u

/* What a record takes from the previous event (the decoder's copy). */
typedef struct prun {
	uint64_t offset, capture_thread_id, process_id;
	uint32_t processor, process_index;
	uint8_t activity_id[16], related_activity_id[16];
} prun;

typedef struct pipe_batch {
	prec *ev;
	size_t nev;
	unsigned char *arena;
	size_t alen, acap;
	uint64_t dkey[1u << PIPE_DEDUP_BITS];  /* stack_key, 0 empty */
	const uint64_t *dstack[1u << PIPE_DEDUP_BITS];
	uint32_t ddepth[1u << PIPE_DEDUP_BITS];
} pipe_batch;

struct nt_pipe {
	nt_reader *r;
	pthread_t th;
	int started;               /* th runs (nt_pipe_free joins it) */
	pthread_mutex_t mu;        /* with cv: only to sleep (pipe_wait) and to wake */
	pthread_cond_t cv;
	pipe_batch b[PIPE_BATCHES];
	_Atomic size_t produced, consumed; /* batches handed over / given back (mod BATCHES) */
	_Atomic int done;          /* the decoder is finished: rc and err are final */
	_Atomic int stop;          /* the consumer gave up: the decoder stops at a batch end */
	_Atomic int sleepers;      /* threads in (or entering) pthread_cond_wait */
	int spins;                 /* PIPE_SPINS, 0 when the process has one CPU */
	int rc;                    /* nt_reader_next()'s last result (0 end, < 0 error) */
	nt_error err;
	/* Each thread's own state on cache lines of its own: the decoder writes last and
	 * the consumer cur at every event, and with both on one line each write waited for
	 * the other core (fold --jobs 2 took 1.45 times as long). */
	_Alignas(PIPE_LINE) prun last;     /* decoder: of the previous event put in the batch */
	_Alignas(PIPE_LINE) nt_event cur;  /* consumer: what nt_pipe_next() returned last */
	size_t pos;                /* next event of the consumer's batch */
	int holding;               /* the consumer holds batch consumed % BATCHES */
	_Alignas(PIPE_LINE) char end[1];
};

/* The fields a record leaves to the previous event are ev's as well as l's. */
static int same_run(const nt_event *ev, const prun *l)
{
	return ev->capture_thread_id == l->capture_thread_id && ev->processor == l->processor &&
	       ev->process_id == l->process_id && ev->process_index == l->process_index &&
	       memcmp(ev->activity_id, l->activity_id, 16) == 0 &&
	       memcmp(ev->related_activity_id, l->related_activity_id, 16) == 0;
}

static void run_set(prun *l, const nt_event *ev)
{
	l->offset = ev->offset;
	l->capture_thread_id = ev->capture_thread_id;
	l->process_id = ev->process_id;
	l->processor = ev->processor;
	l->process_index = ev->process_index;
	memcpy(l->activity_id, ev->activity_id, 16);
	memcpy(l->related_activity_id, ev->related_activity_id, 16);
}

/* Copies ev into batch b, or returns 0 when it does not fit (then b is closed); -1 when
 * out of memory. last is the previous event of b (unused for b's first). */
static int batch_add(pipe_batch *b, const nt_event *ev, const prun *last)
{
	size_t slen = (size_t)ev->stack_depth * sizeof(uint64_t);
	int64_t dof = (int64_t)(ev->offset - last->offset);
	int full = b->nev == 0 || dof < INT32_MIN || dof > INT32_MAX || !same_run(ev, last);
	/* a payload goes to the arena when it does not fit the record (or the record is the
	 * whole event's) */
	size_t plen = ev->payload_len > 8 || (full && ev->payload_len)
			      ? ((ev->payload_len + 7u) & ~(size_t)7)
			      : 0;
	size_t need = slen + plen + (full ? sizeof(nt_event) : 0);
	if (b->nev == PIPE_EVENTS || need > b->acap - b->alen) {
		if (b->nev)
			return 0;
		/* an empty batch takes any event: its arena grows to fit */
		size_t cap = need > PIPE_ARENA ? need : PIPE_ARENA;
		if (cap > b->acap) {
			unsigned char *a = malloc(cap);
			if (!a)
				return -1;
			free(b->arena);
			b->arena = a;
			b->acap = cap;
		}
	}
	prec *e = &b->ev[b->nev++];
	const uint64_t *stack = ev->stack;
	size_t d = (size_t)((ev->stack_key * 0x9E3779B97F4A7C15ull) >> (64 - PIPE_DEDUP_BITS));
	if (slen && ev->stack_key && b->dkey[d] == ev->stack_key &&
	    b->ddepth[d] == ev->stack_depth) {
		stack = b->dstack[d];
		slen = 0;
	} else if (slen && ev->stack_key) {
		b->dkey[d] = ev->stack_key;
		b->ddepth[d] = ev->stack_depth;
		b->dstack[d] = (const uint64_t *)(void *)(b->arena + b->alen);
	}
	if (slen) {
		memcpy(b->arena + b->alen, ev->stack, slen);
		stack = (const uint64_t *)(void *)(b->arena + b->alen);
		b->alen += slen;
	}
	const uint8_t *payload = ev->payload;
	if (plen) {
		memcpy(b->arena + b->alen, ev->payload, ev->payload_len);
		payload = b->arena + b->alen;
		b->alen += plen;
	}
	if (full) {
		nt_event *w = (nt_event *)(void *)(b->arena + b->alen);
		b->alen += sizeof(nt_event);
		*w = *ev;
		w->stack = stack;
		w->payload = payload;
		e->pay.ptr = w;
		e->flags = PREC_FULL;
		e->payload_len = ev->payload_len;
		return 1;
	}
	e->meta = ev->meta;
	e->thread_id = ev->thread_id;
	e->timestamp = ev->timestamp;
	e->time_ns = ev->time_ns;
	e->stack_key = ev->stack_key;
	e->stack = stack;
	if (plen)
		e->pay.ptr = payload;
	else
		nt_copy_small(e->pay.bytes, ev->payload, ev->payload_len);
	e->off_delta = (int32_t)dof;
	e->seq = ev->seq;
	e->stack_id = ev->stack_id;
	e->stack_depth = ev->stack_depth;
	e->payload_len = ev->payload_len;
	e->flags = ev->sorted ? PREC_SORTED : 0;
	return 1;
}

/* Waiting: a thread that finds the other behind spins a little first (a batch takes the
 * other thread tens of microseconds, a futex sleep and wake-up about as long), then
 * sleeps on cv; with one CPU it sleeps at once (spinning would only delay the thread it
 * waits for: fold --jobs 2 under taskset -c 0 took 1.15 times as long). The counters are
 * sequentially consistent: a thread going to sleep announces it (sleepers) before it
 * checks again, and the other changes a counter before it checks sleepers, so one of
 * them sees the other's write and no wake-up is lost. */
#define PIPE_SPINS 4000

static int decoder_may_go(nt_pipe *pp)
{
	return atomic_load(&pp->stop) ||
	       atomic_load(&pp->produced) - atomic_load(&pp->consumed) < PIPE_BATCHES;
}

static int consumer_may_go(nt_pipe *pp)
{
	return atomic_load(&pp->produced) != atomic_load(&pp->consumed) || atomic_load(&pp->done);
}

static void pipe_wait(nt_pipe *pp, int (*ready)(nt_pipe *))
{
	for (int i = 0; i < pp->spins; i++) {
		if (ready(pp))
			return;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	pthread_mutex_lock(&pp->mu);
	atomic_fetch_add(&pp->sleepers, 1);
	while (!ready(pp))
		pthread_cond_wait(&pp->cv, &pp->mu);
	atomic_fetch_sub(&pp->sleepers, 1);
	pthread_mutex_unlock(&pp->mu);
}

static void pipe_wake(nt_pipe *pp)
{
	if (atomic_load(&pp->sleepers)) {
		pthread_mutex_lock(&pp->mu);
		pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
	}
}

static void *decoder(void *arg)
{
	nt_pipe *pp = arg;
	const nt_event *ev = NULL;
	int rc = 1, pending = 0; /* pending: ev was read but did not fit the last batch */
	nt_error err;
	memset(&err, 0, sizeof err);
	for (;;) {
		pipe_wait(pp, decoder_may_go);
		if (atomic_load(&pp->stop))
			break;
		pipe_batch *b = &pp->b[pp->produced % PIPE_BATCHES];
		b->nev = 0;
		b->alen = 0;
		memset(b->dkey, 0, sizeof b->dkey);
		for (;;) {
			if (!pending) {
				rc = nt_reader_next(pp->r, &ev, &err);
				if (rc != 1)
					break;
			}
			int k = batch_add(b, ev, &pp->last);
			if (k < 0) {
				rc = nt_fail(&err, NT_ENOMEM, ev->offset, "out of memory decoding events");
				break;
			}
			pending = !k;
			if (pending)
				break;
			run_set(&pp->last, ev);
		}
		if (b->nev)
			atomic_fetch_add(&pp->produced, 1);
		if (rc != 1) {
			pp->rc = rc;
			pp->err = err;
			atomic_store(&pp->done, 1);
		}
		pipe_wake(pp);
		if (rc != 1)
			break;
	}
	return NULL;
}

int nt_pipe_start(nt_pipe **out, nt_reader *r, nt_error *err)
{
	*out = NULL;
	nt_pipe *pp = aligned_alloc(PIPE_LINE, sizeof *pp); /* sizeof: a multiple of PIPE_LINE */
	if (!pp)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory starting the decoder");
	memset(pp, 0, sizeof *pp);
	pp->r = r;
	pp->spins = PIPE_SPINS;
#ifdef CPU_COUNT
	cpu_set_t cpus;
	if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) < 2)
		pp->spins = 0;
#endif
	for (int i = 0; i < PIPE_BATCHES; i++) {
		pp->b[i].ev = malloc(PIPE_EVENTS * sizeof(prec));
		pp->b[i].arena = malloc(PIPE_ARENA);
		pp->b[i].acap = PIPE_ARENA;
		if (!pp->b[i].ev || !pp->b[i].arena) {
			nt_pipe_free(pp);
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET,
				       "out of memory starting the decoder");
		}
	}
	if (pthread_mutex_init(&pp->mu, NULL)) {
		nt_pipe_free(pp);
		return nt_fail(err, NT_EIO, NT_NO_OFFSET, "cannot start the decoder thread");
	}
	if (pthread_cond_init(&pp->cv, NULL)) {
		pthread_mutex_destroy(&pp->mu);
		nt_pipe_free(pp);
		return nt_fail(err, NT_EIO, NT_NO_OFFSET, "cannot start the decoder thread");
	}
	if (pthread_create(&pp->th, NULL, decoder, pp)) {
		pthread_cond_destroy(&pp->cv);
		pthread_mutex_destroy(&pp->mu);
		nt_pipe_free(pp);
		return nt_fail(err, NT_EIO, NT_NO_OFFSET, "cannot start the decoder thread");
	}
	pp->started = 1;
	*out = pp;
	return 0;
}

int nt_pipe_next(nt_pipe *pp, const nt_event **ev, nt_error *err)
{
	for (;;) {
		if (pp->holding) {
			pipe_batch *b = &pp->b[pp->consumed % PIPE_BATCHES];
			if (pp->pos < b->nev) {
				const prec *q = &b->ev[pp->pos++];
				nt_event *e = &pp->cur;
				if (q->flags & PREC_FULL) {
					*e = *(const nt_event *)q->pay.ptr;
				} else {
					e->meta = q->meta;
					e->offset += (uint64_t)(int64_t)q->off_delta;
					e->seq = q->seq;
					e->thread_id = q->thread_id;
					e->timestamp = q->timestamp;
					e->time_ns = q->time_ns;
					e->stack_id = q->stack_id;
					e->stack = q->stack;
					e->stack_depth = q->stack_depth;
					e->payload_len = q->payload_len;
					e->payload = q->payload_len > 8 ? (const uint8_t *)q->pay.ptr
						     : q->payload_len ? q->pay.bytes
								      : (const uint8_t *)"";
					e->sorted = (q->flags & PREC_SORTED) != 0;
					e->stack_key = q->stack_key;
				}
				*ev = e;
				return 1;
			}
			pp->holding = 0;
			atomic_fetch_add(&pp->consumed, 1);
			pipe_wake(pp);
		}
		pipe_wait(pp, consumer_may_go);
		if (atomic_load(&pp->produced) == atomic_load(&pp->consumed)) {
			/* done (read before produced: no batch came after it), all consumed */
			int rc = pp->rc;
			if (rc < 0 && err && err->code == 0)
				*err = pp->err;
			return rc;
		}
		pp->holding = 1;
		pp->pos = 0;
	}
}

void nt_pipe_free(nt_pipe *pp)
{
	if (!pp)
		return;
	if (pp->started) {
		atomic_store(&pp->stop, 1);
		pthread_mutex_lock(&pp->mu);
		pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
		pthread_join(pp->th, NULL);
		pthread_cond_destroy(&pp->cv);
		pthread_mutex_destroy(&pp->mu);
	}
	for (int i = 0; i < PIPE_BATCHES; i++) {
		free(pp->b[i].ev);
		free(pp->b[i].arena);
	}
	free(pp);
}
