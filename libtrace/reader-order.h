/* SPDX-License-Identifier: MIT */
/* reader-order.h - timestamp order: each capture thread's queue of decoded events (a
 * ring, with an arena of payload bytes) and the min-heap that merges the queues, oldest
 * head first, ties by arrival (file order). Included by reader-event.c alone: these run
 * once per event, and as functions of another file (not inlined) they cost 4 % more
 * instructions per event in timestamp order. */
#ifndef NT_READER_ORDER_H
#define NT_READER_ORDER_H

#include "reader-int.h"

#include <stdlib.h>
#include <string.h>

/* Heap order of two threads with queued events: oldest head first, ties by arrival. */
static inline int heap_less(const nt_reader *r, size_t a, size_t b)
{
	const qent *x = &QI(&r->threads[a], r->threads[a].head);
	const qent *y = &QI(&r->threads[b], r->threads[b].head);
	return x->ev.timestamp < y->ev.timestamp ||
	       (x->ev.timestamp == y->ev.timestamp && x->order < y->order);
}

static void heap_sift_down(nt_reader *r, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < r->nheap && heap_less(r, r->heap[l], r->heap[m]))
			m = l;
		if (l + 1 < r->nheap && heap_less(r, r->heap[l + 1], r->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		size_t tmp = r->heap[i];
		r->heap[i] = r->heap[m];
		r->heap[m] = tmp;
		i = m;
	}
}

static void heap_sift_up(nt_reader *r, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!heap_less(r, r->heap[i], r->heap[parent]))
			return;
		size_t tmp = r->heap[i];
		r->heap[i] = r->heap[parent];
		r->heap[parent] = tmp;
		i = parent;
	}
}

/* Doubles t's full ring, its queued entries moved to positions 0.. in order. Returns 0 or
 * -1 (out of memory; t unchanged). */
static int ntr_queue_grow(cthread *t)
{
	size_t n = t->len - t->head;
	if (t->cap > SIZE_MAX / 2 / sizeof(qent))
		return -1;
	qent *nq = malloc(2 * t->cap * sizeof(qent));
	if (!nq)
		return -1;
	size_t h = t->head & (t->cap - 1);
	size_t first = n < t->cap - h ? n : t->cap - h;
	if (n) {
		memcpy(nq, t->q + h, first * sizeof(qent));
		memcpy(nq + first, t->q, (n - first) * sizeof(qent));
	}
	free(t->q);
	t->q = nq;
	t->cap *= 2;
	t->head = 0;
	t->len = n;
	return 0;
}

/* Appends a copy of ev, the event just decoded (r->ev), to its capture thread's queue:
 * its payload into the thread's arena, its stack as an offset into r->ips. */
static int ntr_enqueue(nt_reader *r, const nt_event *ev, nt_error *err)
{
	cthread *t = ntr_thread(r, ev->capture_thread_id);
	if (!t)
		return nt_fail(err, NT_ENOMEM, ev->offset, "cannot grow thread table");
	size_t ti = (size_t)(t - r->threads);
	int was_empty = t->head == t->len;
	if (was_empty)
		t->head = t->len = t->arena_len = t->arena_base = 0;
	/* A file can name a new capture thread in every event; nt_grow's first step of 8
	 * entries would then cost ~1 KB per 7-byte event. Start queues at one entry. */
	if (t->cap == 0) {
		t->q = malloc(sizeof(qent));
		if (!t->q)
			return nt_fail(err, NT_ENOMEM, ev->offset, "cannot queue event");
		t->cap = 1;
	}
	/* The queue is a FIFO that keeps being appended to while its head is dispatched: a
	 * capture thread whose newest events always lie past the dispatch bound never
	 * drains before the sequence point. So the queue is a ring that grows only when it
	 * is full, and memory follows the queued events, not the region (growing alone kept
	 * every event of a 10 MiB region: ~140 MB); sliding the live part to the front
	 * instead, as before the ring, moved ~40 bytes per event on the bench trace. The
	 * arena of payloads, a few bytes an event, still slides when it is full and at
	 * least half of it was dispatched: O(1) amortised per event. */
	uint32_t plen = ev->payload_len;
	if (plen > t->arena_cap - t->arena_len) {
		size_t dead = t->head < t->len ? QI(t, t->head).payload_off - t->arena_base
					       : t->arena_len;
		if (dead >= t->arena_cap / 2 && dead > 0) {
			memmove(t->arena, t->arena + dead, t->arena_len - dead);
			t->arena_len -= dead;
			t->arena_base += dead;
		}
	}
	/* (capacities checked inline first: this runs once per event) */
	if ((t->len - t->head == t->cap && ntr_queue_grow(t)) ||
	    (was_empty && nt_grow((void **)&r->heap, &r->heap_cap, r->nheap + 1, sizeof(size_t))) ||
	    (plen > t->arena_cap - t->arena_len &&
	     ((plen > SIZE_MAX - t->arena_len) ||
	      nt_grow((void **)&t->arena, &t->arena_cap, t->arena_len + plen, 1))))
		return nt_fail(err, NT_ENOMEM, ev->offset, "cannot queue event");
	qent *e = &QI(t, t->len);
	e->ev = *ev;
	e->payload_off = t->arena_base + t->arena_len;
	e->stack_off = ev->stack_depth ? (size_t)(ev->stack - r->ips) : 0;
	const uint8_t *p = ev->payload;
	if (plen == 0) {
		/* nothing to copy; t->arena may still be NULL, and NULL + 0 is undefined */
	} else if (plen <= 8) {
		/* most payloads are a few bytes: a byte loop cost ~20 instructions an event */
		nt_copy_small(t->arena + t->arena_len, p, plen);
	} else {
		memcpy(t->arena + t->arena_len, p, plen);
	}
	t->arena_len += plen;
	e->order = r->order++;
	t->len++;
	r->queued++;
	r->queued_bytes += sizeof(qent) + plen;
	if (was_empty) {
		/* the thread joins the merge; later events of a non-empty queue are behind its
		 * head and do not change its key */
		r->heap[r->nheap++] = ti;
		heap_sift_up(r, r->nheap - 1);
		r->ru_valid = 0;
	}
	return 0;
}

/* Whether queued event e is older than the oldest head below the heap's top (r->ru_ts,
 * r->ru_order: ru_valid), so that it comes out before any of them. */
static inline int ntr_before_ru(const nt_reader *r, const qent *e)
{
	return e->ev.timestamp < r->ru_ts ||
	       (e->ev.timestamp == r->ru_ts && e->order < r->ru_order);
}

/* Pops the oldest queued event with timestamp <= bound (or any when flush_all). Returns
 * it, its stack and payload pointers set, or NULL. The entry and its payload stay in place (behind the
 * queue head) until the next enqueue, so the caller uses it at once: no copy. */
static qent *ntr_pop_ready(nt_reader *r)
{
	if (r->nheap == 0)
		return NULL;
	/* The heap top is the oldest head of all queues: if it is not ready, none is. */
	cthread *best = &r->threads[r->heap[0]];
	qent *h = &QI(best, best->head);
	if (!r->flush_all && (!r->have_bound || h->ev.timestamp > r->bound))
		return NULL;
	best->head++;
	/* (an empty payload: the thread's arena may be NULL, and NULL + 0 is undefined) */
	h->ev.payload = h->ev.payload_len ? best->arena + (h->payload_off - best->arena_base)
					  : (const uint8_t *)"";
	h->ev.stack = h->ev.stack_depth ? r->ips + h->stack_off : NULL;
	r->queued--;
	r->queued_bytes -= sizeof(qent) + h->ev.payload_len;
	if (best->head == best->len) {
		r->heap[0] = r->heap[--r->nheap];
		r->ru_valid = 0;
		if (r->nheap)
			heap_sift_down(r, 0);
		return h;
	}
	/* The top thread's next event stays on top while it is older than the oldest head
	 * of the others, which is the older of the top's two children: the usual case (the
	 * sampler's run of samples between other threads' few events) then costs one
	 * comparison against that key, kept until the heap below the top changes, instead of
	 * a sift; and the events after it that will stay on top too, until the next enqueue
	 * (which only a pop that finds nothing starts), are counted once for
	 * ntr_pop_run(). */
	if (!r->ru_valid) {
		r->ru_ts = UINT64_MAX;
		r->ru_order = UINT64_MAX;
		for (size_t c = 1; c <= 2 && c < r->nheap; c++) {
			const qent *x = &QI(&r->threads[r->heap[c]], r->threads[r->heap[c]].head);
			if (x->ev.timestamp < r->ru_ts ||
			    (x->ev.timestamp == r->ru_ts && x->order < r->ru_order)) {
				r->ru_ts = x->ev.timestamp;
				r->ru_order = x->order;
			}
		}
		r->ru_valid = 1;
	}
	if (!ntr_before_ru(r, &QI(best, best->head))) {
		heap_sift_down(r, 0);
		r->ru_valid = 0;
		return h;
	}
	/* n stays on top: it and the next ones come out while each is ready and older than
	 * ru (the others' heads and the bound stay as they are meanwhile), but for the
	 * queue's last event, whose pop takes the thread out of the heap */
	uint64_t limit = r->flush_all ? UINT64_MAX : r->bound;
	size_t i = best->head, end = best->len - 1;
	for (; i < end; i++) {
		const qent *e = &QI(best, i);
		if (e->ev.timestamp > limit || !ntr_before_ru(r, e))
			break;
	}
	r->run_left = i - best->head;
	r->run_t = best;
	return h;
}

/* The next event of the run ntr_pop_ready() counted (r->run_left > 0): the queue head of
 * r->run_t, as ntr_pop_ready() would pop it, without its tests. */
static inline qent *ntr_pop_run(nt_reader *r)
{
	cthread *t = r->run_t;
	qent *h = &QI(t, t->head);
	t->head++;
	r->run_left--;
	h->ev.payload = h->ev.payload_len ? t->arena + (h->payload_off - t->arena_base)
					  : (const uint8_t *)"";
	h->ev.stack = h->ev.stack_depth ? r->ips + h->stack_off : NULL;
	r->queued--;
	r->queued_bytes -= sizeof(qent) + h->ev.payload_len;
	if (r->run_left == 0) {
		/* the run's end: the next head (the run never takes a queue's last event) is
		 * ntr_pop_ready()'s again, which expects the heap's top to be the oldest head */
		if (!ntr_before_ru(r, &QI(t, t->head))) {
			heap_sift_down(r, 0);
			r->ru_valid = 0;
		}
	}
	return h;
}

#endif
