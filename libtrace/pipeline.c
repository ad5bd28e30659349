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
#include <stdlib.h>
#include <string.h>

/* Batches in flight: the decoder fills one while the consumer drains another, two more
 * absorb jitter. A batch closes at PIPE_EVENTS events or when its arena (stacks and
 * payloads) is full: 4 x (2048 x sizeof(nt_event) + 1 MiB), ~5.3 MiB at most, whatever
 * the trace's size (one event larger than the arena gets a batch of its own). The faster
 * thread waits at every batch (a futex sleep and wake-up each); batches of 2048 events
 * rather than 512 make those four times rarer. */
#define PIPE_BATCHES 4
#define PIPE_EVENTS 2048
#define PIPE_ARENA ((size_t)1 << 20)

/* Stacks already in a batch, by nt_event.stack_key (direct-mapped): an event whose stack
 * is there points to that copy. A thread sampled in the same stack again and again is the
 * common case, and the copies (and the consumer's cache misses on them, the data comes
 * from another core) were most of the pipeline's cost. */
#define PIPE_DEDUP_BITS 7

typedef struct pipe_batch {
	nt_event *ev;
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
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pipe_batch b[PIPE_BATCHES];
	size_t produced, consumed; /* batches handed over / given back (indexes mod BATCHES) */
	int done;                  /* the decoder is finished: rc and err are final */
	int stop;                  /* the consumer gave up: the decoder stops at a batch end */
	int rc;                    /* nt_reader_next()'s last result (0 end, < 0 error) */
	nt_error err;
	size_t pos;                /* next event of the consumer's batch */
	int holding;               /* the consumer holds batch consumed % BATCHES */
};

/* Copies ev into batch b, or returns 0 when it does not fit (then b is closed); -1 when
 * out of memory. */
static int batch_add(pipe_batch *b, const nt_event *ev)
{
	size_t slen = (size_t)ev->stack_depth * sizeof(uint64_t);
	size_t need = slen + ((ev->payload_len + 7u) & ~(size_t)7);
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
	nt_event *e = &b->ev[b->nev++];
	*e = *ev;
	size_t d = (size_t)((ev->stack_key * 0x9E3779B97F4A7C15ull) >> (64 - PIPE_DEDUP_BITS));
	if (slen && ev->stack_key && b->dkey[d] == ev->stack_key &&
	    b->ddepth[d] == ev->stack_depth) {
		e->stack = b->dstack[d];
		slen = 0;
	} else if (slen && ev->stack_key) {
		b->dkey[d] = ev->stack_key;
		b->ddepth[d] = ev->stack_depth;
		b->dstack[d] = (const uint64_t *)(void *)(b->arena + b->alen);
	}
	if (slen) {
		memcpy(b->arena + b->alen, ev->stack, slen);
		e->stack = (const uint64_t *)(void *)(b->arena + b->alen);
		b->alen += slen;
	}
	if (ev->payload_len) {
		memcpy(b->arena + b->alen, ev->payload, ev->payload_len);
		e->payload = b->arena + b->alen;
		b->alen += (ev->payload_len + 7u) & ~(size_t)7;
	}
	return 1;
}

static void *decoder(void *arg)
{
	nt_pipe *pp = arg;
	const nt_event *ev = NULL;
	int rc = 1, pending = 0; /* pending: ev was read but did not fit the last batch */
	nt_error err;
	memset(&err, 0, sizeof err);
	for (;;) {
		pthread_mutex_lock(&pp->mu);
		while (!pp->stop && pp->produced - pp->consumed >= PIPE_BATCHES)
			pthread_cond_wait(&pp->cv, &pp->mu);
		int stop = pp->stop;
		pthread_mutex_unlock(&pp->mu);
		if (stop)
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
			int k = batch_add(b, ev);
			if (k < 0) {
				rc = nt_fail(&err, NT_ENOMEM, ev->offset, "out of memory decoding events");
				break;
			}
			pending = !k;
			if (pending)
				break;
		}
		pthread_mutex_lock(&pp->mu);
		if (b->nev)
			pp->produced++;
		if (rc != 1) {
			pp->rc = rc;
			pp->err = err;
			pp->done = 1;
		}
		pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
		if (rc != 1)
			break;
	}
	return NULL;
}

int nt_pipe_start(nt_pipe **out, nt_reader *r, nt_error *err)
{
	*out = NULL;
	nt_pipe *pp = calloc(1, sizeof *pp);
	if (!pp)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory starting the decoder");
	pp->r = r;
	for (int i = 0; i < PIPE_BATCHES; i++) {
		pp->b[i].ev = malloc(PIPE_EVENTS * sizeof(nt_event));
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
				*ev = &b->ev[pp->pos++];
				return 1;
			}
			pthread_mutex_lock(&pp->mu);
			pp->consumed++;
			pp->holding = 0;
			pthread_cond_broadcast(&pp->cv);
			pthread_mutex_unlock(&pp->mu);
		}
		pthread_mutex_lock(&pp->mu);
		while (pp->produced == pp->consumed && !pp->done)
			pthread_cond_wait(&pp->cv, &pp->mu);
		if (pp->produced == pp->consumed) { /* done, everything consumed */
			int rc = pp->rc;
			if (rc < 0 && err && err->code == 0)
				*err = pp->err;
			pthread_mutex_unlock(&pp->mu);
			return rc;
		}
		pp->holding = 1;
		pp->pos = 0;
		pthread_mutex_unlock(&pp->mu);
	}
}

void nt_pipe_free(nt_pipe *pp)
{
	if (!pp)
		return;
	if (pp->started) {
		pthread_mutex_lock(&pp->mu);
		pp->stop = 1;
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
