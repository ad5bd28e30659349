/* SPDX-License-Identifier: MIT */
/* reader-event.c - the reader's per-event path: compressed and uncompressed event
 * headers (and a fast path for the common compressed V5 ones), an event block decoded one
 * event at a time (file order) or whole into the queues (timestamp order), the tick to
 * nanosecond conversion, the delivered nt_event, and nt_reader_next. One file so that the
 * fast path is inlined into the loop that calls it; reader-event-bmi2.c compiles it a
 * second time for CPUs with a fast pext (NTR_VARIANT set there). */
#include "reader-int.h"
#include "reader-order.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ event headers */

/* nt_cur_varu64 and nt_cur_varu32 with a fast path for the common case of at least 10
 * bytes left in the block (no per-byte bounds check; one-byte values return at once).
 * Same values, same failures and same cursor position after a failure (the callers
 * name that offset in their messages), so they can replace each other anywhere. */
static inline int rd_varu64(nt_cursor *c, uint64_t *out)
{
	if (c->len - c->pos < 10)
		return nt_cur_varu64(c, out);
	const uint8_t *p = c->p + c->pos;
	if (p[0] < 0x80) {
		*out = p[0];
		c->pos++;
		return 0;
	}
	uint64_t v = p[0] & 0x7f;
	for (unsigned i = 1; i < 10; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80) {
			*out = v;
			c->pos += i + 1;
			return 0;
		}
	}
	c->pos += 10;
	return -2;
}

static inline int rd_varu32(nt_cursor *c, uint32_t *out)
{
	uint64_t v;
	int rc = rd_varu64(c, &v);
	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

/* A V5 header's 16-byte activity id at c into a and b. Returns 0, or -1 when it ends past
 * the block. */
static inline int rd_guid(nt_cursor *c, uint8_t *a, uint8_t *b)
{
	const uint8_t *g;
	if (nt_cur_bytes(c, 16, &g))
		return -1;
	memcpy(a, g, 16);
	memcpy(b, g, 16);
	return 0;
}

/* Decodes one event header at c into e, updating the compressed-header state prev.
 * Returns 0, or < 0 with err set. */
int ntr_decode_header(nt_reader *r, nt_cursor *c, int compressed, qev *prev, qev *e,
		      nt_error *err)
{
	uint64_t off = nt_cur_offset(c);
	e->offset = off;
	if (compressed) {
		/* The header state is decoded in locals, then stored to e (a copy of the
		 * previous header for the other fields) and back to prev. (Copying a struct
		 * right after storing some of its fields makes 16-byte loads of 4- and 8-byte
		 * stores still in flight: store forwarding fails, and that stall was most of a
		 * header's cost; stores of locals cannot be merged into such loads.) */
		uint8_t flags;
		if (nt_cur_u8(c, &flags))
			goto trunc;
		uint32_t meta_id = prev->meta_id, seq = prev->seq, processor = prev->processor;
		uint32_t stack_id = prev->stack_id, label_id = prev->label_id;
		uint32_t payload_len = prev->payload_len, seq_delta;
		uint64_t capture_tid = prev->capture_thread_id, tid = prev->thread_id;
		uint64_t ts = prev->timestamp, ts_delta;
		/* Every other field of e is stored below or by the callers (meta, stack, order,
		 * payload position) before it is read, except the activity ids, which a flag
		 * may leave as they were: copy those, not the whole 144-byte entry. */
		memcpy(e->activity_id, prev->activity_id, 16);
		memcpy(e->related_activity_id, prev->related_activity_id, 16);
		if ((flags & NT_ROW_META_ID) && rd_varu32(c, &meta_id))
			goto bad;
		if (flags & NT_ROW_SEQ_CAPTURE) {
			if (rd_varu32(c, &seq_delta) || rd_varu64(c, &capture_tid) ||
			    rd_varu32(c, &processor))
				goto bad;
			seq = seq + seq_delta + 1; /* uint32 wrap-around */
		} else if (meta_id != 0) {
			seq = seq + 1;
		}
		if (((flags & NT_ROW_THREAD) && rd_varu64(c, &tid)) ||
		    ((flags & NT_ROW_STACK) && rd_varu32(c, &stack_id)) || rd_varu64(c, &ts_delta))
			goto bad;
		if (ts_delta >= 0x8000000000000000ull)
			r->stats.negative_ts_deltas++;
		ts += ts_delta; /* modulo 2^64 */
		if (!r->v6) {
			if (((flags & NT_ROW_ACTIVITY) &&
			     rd_guid(c, e->activity_id, prev->activity_id)) ||
			    ((flags & NT_ROW_RELATED) &&
			     rd_guid(c, e->related_activity_id, prev->related_activity_id)))
				goto trunc;
		} else if ((flags & NT_ROW_LABEL_LIST) && rd_varu32(c, &label_id)) {
			goto bad;
		}
		if ((flags & NT_ROW_PAYLOAD_SIZE) && rd_varu32(c, &payload_len))
			goto bad;
		prev->offset = off;
		e->meta_id = prev->meta_id = meta_id;
		e->seq = prev->seq = seq;
		e->capture_thread_id = prev->capture_thread_id = capture_tid;
		e->processor = prev->processor = processor;
		e->thread_id = prev->thread_id = tid;
		e->stack_id = prev->stack_id = stack_id;
		e->timestamp = prev->timestamp = ts;
		e->label_id = prev->label_id = label_id;
		e->payload_len = prev->payload_len = payload_len;
		e->sorted = (flags & NT_ROW_SORTED) ? 1 : 0; /* per event: prev->sorted stays 0 */
		return 0;
	}
	/* Uncompressed (spec §3.3 / §7.3). */
	uint32_t size, mid, seq, proc, stack, plen, label = 0;
	uint64_t tid, ctid, ts;
	size_t start = c->pos;
	if (nt_cur_u32(c, &size))
		goto trunc;
	size_t after_size = c->pos;
	if (size > nt_cur_left(c))
		return ntr_err(r, err, off, "event size %" PRIu32 " exceeds the block (%zu bytes left)",
			       size, nt_cur_left(c));
	if (nt_cur_u32(c, &mid) || nt_cur_u32(c, &seq) || nt_cur_u64(c, &tid) ||
	    nt_cur_u64(c, &ctid) || nt_cur_u32(c, &proc) || nt_cur_u32(c, &stack) ||
	    nt_cur_u64(c, &ts))
		goto trunc;
	memset(e, 0, sizeof *e);
	e->offset = off;
	if (!r->v6) {
		const uint8_t *g;
		if (nt_cur_bytes(c, 16, &g))
			goto trunc;
		memcpy(e->activity_id, g, 16);
		if (nt_cur_bytes(c, 16, &g))
			goto trunc;
		memcpy(e->related_activity_id, g, 16);
	} else if (nt_cur_u32(c, &label)) {
		goto trunc;
	}
	if (nt_cur_u32(c, &plen))
		goto trunc;
	e->meta_id = mid & 0x7FFFFFFFu;
	e->sorted = (mid & 0x80000000u) ? 0 : 1; /* bit 31 set = NOT sorted */
	e->seq = seq;
	e->thread_id = tid;
	e->capture_thread_id = ctid;
	e->processor = proc;
	e->stack_id = stack;
	e->timestamp = ts;
	e->label_id = label;
	e->payload_len = plen;
	if ((size_t)(c->pos - after_size) > size)
		return ntr_err(r, err, off, "event size %" PRIu32 " is smaller than its %zu-byte header",
			       size, (size_t)(c->pos - after_size));
	if (plen > size - (c->pos - after_size))
		return ntr_err(r, err, off,
			       "event payload size %" PRIu32 " exceeds its event size %" PRIu32, plen,
			       size);
	/* Remember where the next event starts (EventSize covers header rest + payload +
	 * padding); the caller reads the payload then jumps there. */
	e->payload_off = start + 4 + size;
	return 0;
bad:
	return ntr_err(r, err, nt_cur_offset(c), "bad varint in event header at blob offset %" PRIu64,
		       off);
trunc:
	return ntr_err(r, err, nt_cur_offset(c), "event header ends past the end of the block");
}

/* ------------------------------------------------------------------ per-event steps */

/* The steps the checked path (block_next_event()) and the fast path (fast_event_at())
 * share; always inlined, so that each stays one loop body. */
#define FAST_INLINE inline __attribute__((always_inline))

/* The metadata record of meta_id through the one-entry cache r->meta_last, which a hit
 * refills; NULL when the id is not defined (the cache is then left as it was). */
static FAST_INLINE const nt_metadata *rd_meta(nt_reader *r, uint32_t meta_id)
{
	if (r->meta_last && meta_id == r->meta_last_id)
		return r->meta_last;
	const nt_metadata *m = nt_meta_lookup(r->meta, meta_id);
	if (m) {
		r->meta_last = m;
		r->meta_last_id = meta_id;
		r->meta_last_events = nt_meta_events(m);
		r->meta_last_sample = nt_meta_is_sample(m);
	}
	return m;
}

/* The slot of stack_id's (not 0) definition in this region: its index in r->stacks + 1
 * (index < nstacks <= ids in 32 bits), or 0 when it has none (counted as missing). */
static FAST_INLINE uint32_t rd_stack(nt_reader *r, uint32_t stack_id)
{
	size_t si = (size_t)stack_id - 1;
	/* dense ids: stack_map maps exactly 1..nstacks to 0..nstacks-1 */
	if (!r->stacks_sparse ? stack_id <= r->nstacks : nt_idmap_get(&r->stack_map, stack_id, &si))
		return (uint32_t)si + 1;
	r->stats.missing_stacks++;
	return 0;
}

/* Counts a decoded event with timestamp ts (sorted: its sorted flag) in r->stats. */
static FAST_INLINE void rd_count(nt_reader *r, uint64_t ts, unsigned sorted)
{
	r->stats.events++;
	r->stats.events_sorted += sorted;
	if (r->stats.events == 1 || ts < r->stats.first_timestamp)
		r->stats.first_timestamp = ts;
	if (ts > r->stats.last_timestamp)
		r->stats.last_timestamp = ts;
}

/* Decodes the next event of the current block into *e (payload pointer *pp). Returns 1
 * with an event, 0 at the end of the block, < 0 on error. Metadata ids must be known. */
static int block_next_event(nt_reader *r, qev *e, const uint8_t **pp, nt_error *err)
{
	nt_cursor *c = &r->blk;
	if (nt_cur_left(c) == 0)
		return 0;
	int rc = ntr_decode_header(r, c, r->blk_compressed, &r->prev, e, err);
	if (rc)
		return rc;
	if (nt_cur_bytes(c, e->payload_len, pp))
		return ntr_err(r, err, e->offset,
			       "event payload size %" PRIu32 " exceeds the block (%zu bytes left)",
			       e->payload_len, nt_cur_left(c));
	if (!r->blk_compressed)
		c->pos = e->payload_off;
	e->process_id = r->hdr.process_id;
	e->process_index = 0;
	if (r->v6) {
		e->capture_thread_id = ntr_v6_tid(r, e->capture_thread_id);
		e->thread_id = ntr_v6_thread(r, e->thread_id, &e->process_id, &e->process_index);
		if (e->label_id && e->label_id <= r->nlabels) {
			memcpy(e->activity_id, r->labels[e->label_id - 1].activity_id, 16);
			memcpy(e->related_activity_id, r->labels[e->label_id - 1].related_activity_id, 16);
		}
	}
	if (e->meta_id == 0 && !r->v6)
		return ntr_err(r, err, e->offset, "event with metadata id 0 in an EventBlock");
	e->meta = rd_meta(r, e->meta_id);
	if (!e->meta)
		return ntr_err(r, err, e->offset, "event references undefined metadata id %" PRIu32,
			       e->meta_id);
	/* Resolve the stack now, as file order does: in timestamp order the event may be
	 * dispatched after a later StackBlock of the same region redefined its id. The
	 * offsets stay valid until the region's stacks are reset, after its last dispatch. */
	uint32_t slot = e->stack_id ? rd_stack(r, e->stack_id) : 0;
	e->stack_ok = slot != 0;
	e->stack_slot = slot;
	e->stack_off = slot ? r->stacks[slot - 1].off : 0;
	e->stack_depth = slot ? r->stacks[slot - 1].depth : 0;
	rd_count(r, e->timestamp, e->sorted);
	cthread *t = ntr_thread(r, e->capture_thread_id);
	if (!t)
		return nt_fail(err, NT_ENOMEM, e->offset, "cannot grow thread table");
	ntr_account_event(r, t, e->seq);
	return 1;
}
/* ------------------------------------------------------------------ dispatch */


/* ns since session start of tick count ts: split to avoid overflow of delta * 1e9.
 * Timestamps and the frequency are untrusted, so the result saturates at +-INT64_MAX
 * (negating an unclamped value was signed overflow) and the remainder product, which
 * overflows for frequencies above ~18 GHz, falls back to floating point. */
static inline int64_t ticks_to_ns(nt_reader *r, uint64_t ts)
{
	uint64_t dd = ts - r->hdr.sync_qpc;
	int neg = dd >> 63;
	uint64_t ad = neg ? (uint64_t)0 - dd : dd;
	uint64_t f = r->hdr.qpc_frequency;
	if (r->ns_freq != f) {
		r->ns_freq = f;
		r->ns_mul = 1000000000ull % f == 0 ? 1000000000ull / f : 0;
		r->ns_max = r->ns_mul ? (uint64_t)INT64_MAX / r->ns_mul : 0;
	}
	uint64_t ns;
	if (r->ns_mul) {
		/* The usual clocks (1 GHz on Linux, 10 MHz on Windows) divide 1e9: then the
		 * split below is exactly ad * ns_mul, saturating at the same point, without
		 * two 64-bit divisions per event. */
		ns = ad > r->ns_max ? (uint64_t)INT64_MAX : ad * r->ns_mul;
	} else {
		uint64_t whole = ad / f, rem = ad % f;
		if (whole > (uint64_t)INT64_MAX / 1000000000ull) {
			ns = (uint64_t)INT64_MAX;
		} else {
			uint64_t frac = rem <= UINT64_MAX / 1000000000ull
						? rem * 1000000000ull / f
						: (uint64_t)((double)rem / (double)f * 1e9);
			ns = whole * 1000000000ull + (frac < 1000000000ull ? frac : 999999999ull);
			if (ns > (uint64_t)INT64_MAX)
				ns = (uint64_t)INT64_MAX;
		}
	}
	return neg ? -(int64_t)ns : (int64_t)ns;
}

/* The delivered event's stack: its key from slot (its definition's index + 1, 0: none)
 * and its frames r->ips[off .. off + depth) (none when depth is 0). Each definition in a
 * region has its own slot and every reset a new generation, so equal keys mean equal
 * stacks (a redefined id gets a new slot). */
static FAST_INLINE void event_stack(nt_reader *r, nt_event *ev, uint32_t slot, size_t off,
				    uint32_t depth)
{
	ev->stack_key = slot ? (r->stack_gen << 32) | slot : 0;
	ev->stack = depth ? r->ips + off : NULL;
	ev->stack_depth = depth;
}

static void fill_event(nt_reader *r, const qev *q)
{
	nt_event *ev = &r->ev;
	ev->meta = q->meta;
	ev->offset = q->offset;
	ev->seq = q->seq;
	ev->thread_id = q->thread_id;
	ev->capture_thread_id = q->capture_thread_id;
	ev->process_id = q->process_id;
	ev->process_index = q->process_index;
	ev->processor = q->processor;
	ev->timestamp = q->timestamp;
	ev->time_ns = ticks_to_ns(r, q->timestamp);
	memcpy(ev->activity_id, q->activity_id, 16);
	memcpy(ev->related_activity_id, q->related_activity_id, 16);
	ev->stack_id = q->stack_id;
	event_stack(r, ev, q->stack_slot, q->stack_off, q->stack_ok ? q->stack_depth : 0);
	ev->payload = q->payload_ptr ? q->payload_ptr : (const uint8_t *)"";
	ev->payload_len = q->payload_len;
	ev->sorted = q->sorted;
}

/* ------------------------------------------------------------------ fast path */

/* The fast path is a handful of small functions so that each can be read on its own;
 * they must still compile to one loop body (GCC kept a decoding step out of line, which
 * cost a fifth of the instructions per event). */

/* The varint at p, when it takes at most 8 bytes (8 bytes must be readable): returns its
 * length, or 0 for a longer one (the caller then takes the checked path). No loop and
 * no branch per byte: the stop byte is found with one count of trailing zeros, and the
 * 7-bit groups are packed together in three steps. */
static FAST_INLINE unsigned fast_var(const uint8_t *p, uint64_t *out)
{
	/* one byte: most fields of most headers (a sequence delta, a processor, a small
	 * id); each field's test is its own branch, so each predicts well */
	if (p[0] < 0x80) {
		*out = p[0];
		return 1;
	}
	uint64_t x = nt_le64(p);
	uint64_t stop = ~x & 0x8080808080808080ull;
	if (stop == 0)
		return 0;
	x &= stop ^ (stop - 1); /* the bytes up to the stop byte */
#ifdef NTR_PEXT
	*out = __builtin_ia32_pext_di(x, 0x7f7f7f7f7f7f7f7full); /* reader-event-bmi2.c */
#else
	x &= 0x7f7f7f7f7f7f7f7full;
	x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
	x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
	x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
	*out = x;
#endif
	return ((unsigned)__builtin_ctzll(stop) + 1) >> 3;
}

/* fast_var() of the varint at *p into *out, *p moved past it: 1, or 0 for a longer one. */
static FAST_INLINE int fast_u64(const uint8_t **p, uint64_t *out)
{
	unsigned n = fast_var(*p, out);
	*p += n;
	return n != 0;
}

/* fast_u64() truncated to 32 bits, as rd_varu32() does. */
static FAST_INLINE int fast_u32(const uint8_t **p, uint32_t *out)
{
	uint64_t v;
	if (!fast_u64(p, &v))
		return 0;
	*out = (uint32_t)v;
	return 1;
}

/* The longest compressed V5 header fast_event() decodes: flags, 8 varints of at most 8
 * bytes each read as 8-byte words, two GUIDs; a header this close to the end of its
 * block takes the checked path. */
#define FAST_HEADER_MAX (1 + 8 * 8 + 32)

/* File order keeps the compressed-header state of a run of fast events in r->ev itself
 * (r->ev_state): a header names only what changed, so an event costs the stores of what
 * its flags carry, not a copy of the whole state into r->prev and again into r->ev (the
 * fields a header leaves alone, the stack of an unchanged stack id among them, are still
 * right from the event before). fast_begin() starts a run from r->prev, fast_end() hands
 * the state back before the checked path decodes; a run never leaves its block (the
 * checked path decodes a block's last bytes). Out of line: once per run. */
static __attribute__((noinline)) void fast_begin(nt_reader *r)
{
	nt_event *ev = &r->ev;
	const qev *s = &r->prev;
	ev->seq = s->seq;
	ev->thread_id = s->thread_id;
	ev->capture_thread_id = s->capture_thread_id;
	ev->processor = s->processor;
	ev->timestamp = s->timestamp;
	ev->stack_id = s->stack_id;
	ev->payload_len = s->payload_len;
	memcpy(ev->activity_id, s->activity_id, 16);
	memcpy(ev->related_activity_id, s->related_activity_id, 16);
	ev->process_id = r->hdr.process_id;
	ev->process_index = 0;
	/* NULL: the next header must name a metadata id (fast_event() checks) */
	ev->meta = s->meta_id ? rd_meta(r, s->meta_id) : NULL;
	/* the stack of an unchanged id, looked up without counting it missing (each event
	 * that carries it over is counted: r->fast_missing) */
	size_t si = (size_t)s->stack_id - 1;
	uint32_t slot = 0;
	if (s->stack_id && (!r->stacks_sparse ? s->stack_id <= r->nstacks
					      : nt_idmap_get(&r->stack_map, s->stack_id, &si)))
		slot = (uint32_t)si + 1;
	r->fast_missing = s->stack_id && !slot;
	event_stack(r, ev, slot, slot ? r->stacks[slot - 1].off : 0,
		    slot ? r->stacks[slot - 1].depth : 0);
	/* the capture thread, when it is the cached one (else found when the run's first
	 * event needs it) */
	r->fast_t = r->last_thread < r->nthreads && r->threads[r->last_thread].id == s->capture_thread_id
			    ? &r->threads[r->last_thread]
			    : NULL;
	(void)ticks_to_ns(r, 0); /* computes ns_mul and ns_max for this frequency */
	r->ev_state = 1;
}

static __attribute__((noinline)) void fast_end(nt_reader *r)
{
	const nt_event *ev = &r->ev;
	qev *s = &r->prev;
	s->seq = ev->seq;
	s->thread_id = ev->thread_id;
	s->capture_thread_id = ev->capture_thread_id;
	s->processor = ev->processor;
	s->timestamp = ev->timestamp;
	s->stack_id = ev->stack_id;
	s->payload_len = ev->payload_len;
	memcpy(s->activity_id, ev->activity_id, 16);
	memcpy(s->related_activity_id, ev->related_activity_id, 16);
	r->ev_state = 0;
}

/* File order: the next event of a compressed V5 block, decoded against and into r->ev (a
 * run's state, r->ev_state set), checked as ntr_decode_header() + block_next_event() would
 * check it. Everything it cannot vouch for returns 0 before any state changes (a header
 * near the block's end, a varint over 8 bytes, a timestamp that goes backwards or wraps,
 * a payload past the block, an unknown metadata id...): the caller then ends the run and
 * the checked path decodes the same bytes with its checks and messages. Returns 1 with
 * the event.
 * flags is the header's flags byte (a constant in fast_event()'s copy for the usual
 * sample header); first is 1 for a run's first event, 0 for the others, which know more:
 * the event before was this run's, so ev->meta and r->fast_t are set, the capture thread's
 * last sequence number is ev->seq (no loss to count without a sequence delta) and the
 * first timestamp is at most ev->timestamp. */
static FAST_INLINE int fast_event_at(nt_reader *r, const uint8_t *p0, size_t left,
				     unsigned flags, int first)
{
	nt_cursor *c = &r->blk;
	nt_event *ev = &r->ev;
	const uint8_t *p = p0 + 1;
	uint32_t meta_id = 0, seq_delta = 0, processor = 0, stack_id = 0;
	uint32_t payload_len = ev->payload_len;
	uint64_t ctid = 0, tid = 0, ts_delta;
	const nt_metadata *m = ev->meta;
	if (flags & NT_ROW_META_ID) {
		if (!fast_u32(&p, &meta_id) || meta_id == 0 || !(m = rd_meta(r, meta_id)))
			return 0; /* (rd_meta() fills a cache: no state) */
	} else if (first && !m) {
		return 0;
	}
	if ((flags & NT_ROW_SEQ_CAPTURE) &&
	    (!fast_u32(&p, &seq_delta) || !fast_u64(&p, &ctid) || !fast_u32(&p, &processor)))
		return 0;
	if (((flags & NT_ROW_THREAD) && !fast_u64(&p, &tid)) ||
	    ((flags & NT_ROW_STACK) && !fast_u32(&p, &stack_id)) || !fast_u64(&p, &ts_delta))
		return 0;
	uint64_t ts = ev->timestamp + ts_delta;
	if (ts < ev->timestamp)
		return 0; /* backwards (counted by the checked path) or wrapped */
	const uint8_t *act = p;
	if (flags & NT_ROW_ACTIVITY)
		p += 16;
	const uint8_t *rel = p;
	if (flags & NT_ROW_RELATED)
		p += 16;
	if ((flags & NT_ROW_PAYLOAD_SIZE) && !fast_u32(&p, &payload_len))
		return 0;
	size_t hlen = (size_t)(p - p0);
	if (payload_len > left - hlen)
		return 0;
	cthread *t = r->fast_t;
	if (flags & NT_ROW_SEQ_CAPTURE) {
		/* the thread table may grow (as the checked path's would for this event); that
		 * moves it, so the run's pointer is refreshed here */
		if (!(t = ntr_thread(r, ctid)))
			return 0;
		r->fast_t = t;
		ev->capture_thread_id = ctid;
		ev->processor = processor;
	} else if (first && !t) {
		if (!(t = ntr_thread(r, ev->capture_thread_id)))
			return 0;
		r->fast_t = t;
	}
	/* committed from here */
	if (flags & NT_ROW_META_ID) {
		r->prev.meta_id = meta_id; /* (r->prev keeps the metadata id during a run) */
		ev->meta = m;
	}
	uint32_t seq = ev->seq + seq_delta + 1; /* uint32 wrap-around; meta_id != 0 */
	ev->seq = seq;
	if (flags & NT_ROW_THREAD)
		ev->thread_id = tid;
	if (flags & NT_ROW_STACK) {
		ev->stack_id = stack_id;
		uint32_t slot = stack_id ? rd_stack(r, stack_id) : 0;
		r->fast_missing = stack_id && !slot;
		event_stack(r, ev, slot, slot ? r->stacks[slot - 1].off : 0,
			    slot ? r->stacks[slot - 1].depth : 0);
	} else {
		r->stats.missing_stacks += r->fast_missing;
	}
	ev->timestamp = ts;
	uint64_t dd = ts - r->hdr.sync_qpc;
	/* (ns_mul and ns_max are the frequency's: fast_begin()) */
	ev->time_ns = r->ns_mul && dd <= r->ns_max ? (int64_t)(dd * r->ns_mul) : ticks_to_ns(r, ts);
	if (flags & NT_ROW_ACTIVITY)
		memcpy(ev->activity_id, act, 16);
	if (flags & NT_ROW_RELATED)
		memcpy(ev->related_activity_id, rel, 16);
	ev->payload_len = payload_len;
	ev->payload = payload_len ? p : (const uint8_t *)"";
	ev->offset = c->base_offset + c->pos;
	unsigned sorted = (flags >> 6) & 1;
	ev->sorted = (uint8_t)sorted;
	c->pos += hlen + payload_len;
	if (first || (flags & NT_ROW_SEQ_CAPTURE)) {
		rd_count(r, ts, sorted);
		ntr_account_event(r, t, seq);
	} else {
		/* rd_count() and ntr_account_event() less what cannot happen (above) */
		r->stats.events++;
		r->stats.events_sorted += sorted;
		if (ts > r->stats.last_timestamp)
			r->stats.last_timestamp = ts;
		(*r->meta_last_events)++;
		t->samples += r->meta_last_sample;
		t->last_seq = seq;
	}
	return 1;
}

/* fast_event_at() for the next header of the block, with a copy for the usual header of
 * a sample (thread and stack; the metadata id, capture thread and payload size those of
 * the event before), in which the flags are constants. */
static FAST_INLINE int fast_event(nt_reader *r, int first)
{
	nt_cursor *c = &r->blk;
	size_t left = c->len - c->pos;
	if (left < FAST_HEADER_MAX)
		return 0;
	const uint8_t *p0 = c->p + c->pos;
	unsigned flags = p0[0];
	if (flags == (NT_ROW_THREAD | NT_ROW_STACK))
		return fast_event_at(r, p0, left, NT_ROW_THREAD | NT_ROW_STACK, first);
	return fast_event_at(r, p0, left, flags, first);
}

/* The next block, parsed (an event block: its header): 1 with its kind, 0 at the end
 * (done set, the bytes read counted), < 0 on error (the reader failed). */
static int read_block(nt_reader *r, int *kind, nt_error *err)
{
	int rc = ntr_next_block(r, kind, err);
	if (rc == 0) {
		r->done = 1;
		r->stats.bytes = r->stats.truncated ? nt_in_seen(&r->in) : r->in.offset;
		return 0;
	}
	if (rc > 0)
		rc = ntr_process_block(r, *kind, err);
	if (rc < 0) {
		r->failed = 1;
		return rc;
	}
	return 1;
}

/* The next event of the current event block into r->ev: 1, 0 at the block's end, < 0 on
 * error (the reader failed). One path for both orders: file order returns it, timestamp
 * order queues a copy (queue_event_block()). A fast run (r->ev_state) never outlives its
 * block: near the block's end fast_event() declines and the checked path takes over. */
static FAST_INLINE int block_event(nt_reader *r, nt_error *err)
{
	if (r->ev_state) {
		if (fast_event(r, 0))
			return 1;
		fast_end(r);
	} else if (r->blk_fast && r->blk.len - r->blk.pos >= FAST_HEADER_MAX) {
		fast_begin(r);
		if (fast_event(r, 1))
			return 1;
		fast_end(r);
	}
	const uint8_t *p;
	int rc = block_next_event(r, &r->cur, &p, err);
	if (rc < 0) {
		r->failed = 1;
		return rc;
	}
	if (rc == 1) {
		r->cur.payload_ptr = p;
		fill_event(r, &r->cur);
	}
	return rc;
}

/* Timestamp order holds events until a sorted event or a sequence point allows them out.
 * The runtime sets the sorted flag at every capture-thread switch and writes a sequence
 * point every ~10 MB, so little is ever queued; a file without either (or a gzip input
 * that inflates to millions of 2-byte events, ~190 bytes each once queued) would queue
 * without bound. Past this limit, timestamp order fails; file order needs no queue. */
#define MAX_QUEUED_BYTES ((uint64_t)512 << 20)

/* Decodes the rest of the current event block into the queues (timestamp order), each
 * event as file order decodes it (the fast path keeps the header state in r->ev) and
 * then copied. Fails with NT_ELIMIT when the queues exceed MAX_QUEUED_BYTES. */
static int queue_event_block(nt_reader *r, nt_error *err)
{
	int rc;
	while ((rc = block_event(r, err)) == 1) {
		const nt_event *ev = &r->ev;
		if (ev->sorted && (!r->have_bound || ev->timestamp > r->bound)) {
			r->bound = ev->timestamp;
			r->have_bound = 1;
		}
		if ((rc = ntr_enqueue(r, ev, err)) != 0)
			return rc;
		if (r->queued_bytes > MAX_QUEUED_BYTES) {
			r->failed = 1;
			return nt_fail(err, NT_ELIMIT, ev->offset,
				       "%zu events (%" PRIu64 " MiB) wait for a sorted event or sequence "
				       "point, over the %" PRIu64 " MiB limit of timestamp order; read in "
				       "file order",
				       r->queued, r->queued_bytes >> 20, MAX_QUEUED_BYTES >> 20);
		}
	}
	return rc;
}

/* nt_reader_next() but for a run's next fast event: the loop over blocks, the checked
 * path and timestamp order. Out of line, so that the fast path's caller saves no
 * registers it does not use. */
static __attribute__((noinline)) int reader_next(nt_reader *r, const nt_event **out,
						 nt_error *err)
{
	int rc, kind;
	*out = NULL;
	if (r->failed)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "reader already failed");
	if (r->flags & NT_READ_FILE_ORDER) {
		for (;;) {
			if (r->in_block) {
				rc = block_event(r, err);
				if (rc < 0)
					return rc;
				if (rc == 1) {
					*out = &r->ev;
					return 1;
				}
				ntr_finish_block(r);
			}
			if (r->done || r->chunk_stop)
				return 0;
			rc = read_block(r, &kind, err);
			if (rc <= 0)
				return rc;
			if (kind == BLK_SP) {
				ntr_reset_stacks(r);
				/* a chunk's end (the block is consumed below) */
				if (r->chunk_end && r->in.offset + r->blk_consume >= r->chunk_end)
					r->chunk_stop = 1;
			}
			if (kind == BLK_EVENT)
				r->in_block = 1;
			else
				ntr_finish_block(r);
		}
	}
	for (;;) {
		const qent *q = ntr_pop_ready(r);
		if (q) {
			*out = &q->ev;
			return 1;
		}
		if (r->flush_all) {
			/* everything of the region was dispatched: stacks can go */
			r->flush_all = 0;
			ntr_reset_stacks(r);
		}
		if (r->done || r->chunk_stop)
			return 0;
		rc = read_block(r, &kind, err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			r->flush_all = 1;
			continue;
		}
		if (kind == BLK_EVENT && (rc = queue_event_block(r, err)) < 0) {
			r->failed = 1;
			return rc;
		}
		ntr_finish_block(r);
		if (kind == BLK_SP) {
			r->flush_all = 1;
			/* the chunk's last region: dispatched, then the chunk ends */
			if (r->chunk_end && r->in.offset >= r->chunk_end)
				r->chunk_stop = 1;
		}
	}
}

/* The next event of a run (r->ev_state), else reader_next(). Out of line, so that
 * nt_reader_next() saves no registers: outside a run (V6, timestamp order) it is a clear
 * and a jump. */
static __attribute__((noinline)) int run_next(nt_reader *r, const nt_event **out, nt_error *err)
{
	if (fast_event(r, 0)) {
		*out = &r->ev;
		return 1;
	}
	return reader_next(r, out, err);
}

int nt_reader_next(nt_reader *r, const nt_event **out, nt_error *err)
{
#if defined(NTR_HAVE_BMI2) && !defined(NTR_VARIANT)
	if (r->isa)
		return ntr_next_bmi2(r, out, err);
#endif
	nt_err_clear(err);
	if (r->ev_state)
		return run_next(r, out, err);
	if (r->run_left) {
		*out = &ntr_pop_run(r)->ev;
		return 1;
	}
	return reader_next(r, out, err);
}
