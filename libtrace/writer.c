/* SPDX-License-Identifier: MIT */
/* writer.c - the nettrace writer: turns metadata definitions and events into a V4/V5
 * FastSerialization stream (what the .NET runtime writes) or a V6 block stream, through
 * an nt_sink.
 *
 * Sections, in order: hash tables; sink output and block framing; compressed event rows;
 * stack and label-list interning; the per-capture-thread queue and its flush; sequence
 * points; the public API. The byte buffer is in writer.h, the metadata encoding (V5
 * payloads, V6 rows) in writer-meta.c.
 *
 * The model is the runtime's writer (dotnet/runtime ep-file.c, ep-block.c,
 * ep-buffer-manager.c; spec §2-§7):
 *  - events are queued per capture thread and written at flush time, one thread's run at
 *    a time, oldest run first, the first event of each run marked IsSorted (spec §6);
 *  - an event is encoded only when it is written: its metadata record goes to the
 *    MetadataBlock on first use (carrying that event's thread, processor and timestamp, as
 *    the runtime's metadata events do), its stack is interned into the StackBlock, then
 *    the row goes to the EventBlock;
 *  - a full EventBlock flushes the metadata, stack (V6: thread and label-list) blocks
 *    first, so everything an event references precedes it in the file (spec §5);
 *  - stack ids (V6: label-list ids) restart at 1 after every sequence point.
 * Limitation (inherent in the API, documented in nettrace.h terms): events are sorted
 * across capture threads only among those queued together. An event older than something
 * already flushed is still written, after it; readers then deliver it late.
 * About 1,350 lines: block framing, row encoding, interning, the queue and sequence points
 * all work on one writer state (struct nt_writer) and its invariants; the parts that do not
 * (the byte buffer, metadata encoding) are writer.h and writer-meta.c.
 * Not here: reading (reader.c), sinks (sink.c), UTF conversion (utf16.c). */
#include "internal.h"
#include "writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

/* Defaults and limits. */
#define WR_DEFAULT_BLOCK_SIZE (100u * 1024u)          /* ep-file.c: ep_*_block_alloc(100 * 1024) */
#define WR_DEFAULT_SP_INTERVAL (10ull * 1024 * 1024)  /* ep-session.c sequence_point_alloc_budget */
#define WR_MIN_BLOCK_SIZE 64u                         /* block header + a few small rows */
#define WR_QUEUE_LIMIT (1u << 20) /* queued bytes that force a flush: bounds memory */
#define WR_V6_MAX_BLOCK 0xFFFFFFu /* V6 block sizes are 24-bit (spec §7.1) */
#define WR_EVENT_HEADER_SIZE 20u  /* EventBlock/MetadataBlock header (spec §3.1) */
#define WR_ID_HEADER_SIZE 8u      /* StackBlock/LabelList header: first id, count */
/* Longest compressed row header: flags, metadata id (5), seq (5) + capture thread (10) +
 * processor (5), thread (10), stack (5), timestamp (10), 2 GUIDs (32), payload size (5). */
#define WR_ROW_HEADER_MAX 88u

/* V6 block kinds (spec §7.1); V5 uses the FastSerialization type names instead. */
enum wr_kind {
	WR_K_END = 0,
	WR_K_TRACE = 1,
	WR_K_EVENT = 2,
	WR_K_METADATA = 3,
	WR_K_SP = 4,
	WR_K_STACK = 5,
	WR_K_THREAD = 6,
	WR_K_LABEL = 8,
};

/* ---------------------------------------------------------------------------------------
 * Writer state
 * ------------------------------------------------------------------------------------- */

/* Compressed-header state: the previous row of the same block (spec §3.2). */
typedef struct hstate {
	uint32_t meta_id;
	uint32_t seq;
	uint64_t capture;     /* V6: thread index */
	uint32_t processor;
	uint64_t thread;      /* V6: thread index */
	uint32_t stack_id;
	uint64_t timestamp;
	uint8_t act[16];      /* V5 only */
	uint8_t rel[16];      /* V5 only */
	uint32_t label_id;    /* V6 only */
	uint32_t payload_len;
} hstate;

/* One row to encode: the header fields plus the IsSorted flag. */
typedef struct rowdesc {
	hstate h;
	int sorted;
} rowdesc;

/* An EventBlock or (V5) MetadataBlock being filled. */
typedef struct rowblock {
	wbuf b;           /* content; the first WR_EVENT_HEADER_SIZE bytes are the header */
	size_t nrows;
	uint64_t min_ts;
	uint64_t max_ts;
	hstate prev;
} rowblock;

/* A StackBlock or (V6) LabelList block being filled. */
typedef struct idblock {
	wbuf b;           /* content; the first WR_ID_HEADER_SIZE bytes are the header */
	uint32_t first_id;
	uint32_t count;
} idblock;

/* A defined event type. */
typedef struct wmeta {
	uint8_t *data;    /* V5: the metadata payload; V6: the row including its uint16 size */
	size_t len;
	uint8_t emitted;  /* already written to a metadata block */
} wmeta;

/* A queued event; stack bytes (pointer-size little-endian IPs) and payload follow it in
 * w->queue, and the whole record is padded to a multiple of 8 bytes. */
typedef struct qrec {
	uint64_t timestamp;
	uint64_t thread_id;
	uint64_t process_id;  /* V6: the thread's process (0: the header's) */
	uint32_t meta_id;
	uint32_t seq;
	uint32_t processor;
	uint32_t stack_len;   /* bytes */
	uint32_t payload_len; /* bytes */
	uint8_t has_ids;      /* activity or related activity id is non-zero */
	uint8_t act[16];
	uint8_t rel[16];
} qrec;

/* A capture thread: sequence numbers, ordering check and its queue. */
typedef struct wthread {
	uint64_t id;       /* OS thread id */
	uint64_t last_ts;  /* newest timestamp queued */
	uint32_t last_seq; /* last sequence number assigned */
	uint8_t has_ts;
	size_t *q;         /* offsets of queued records in w->queue, oldest first */
	size_t qlen, qcap;
} wthread;

struct nt_writer {
	nt_sink sink;
	nt_trace_header hdr;
	int v6;
	uint32_t ptr_size;
	uint32_t block_size;   /* content limit of a block holding more than one item */
	uint32_t hard_max;     /* content limit of any block (a lone oversized item) */
	uint64_t sp_interval;  /* event-block bytes between automatic sequence points */
	uint64_t out_off;      /* bytes written to the sink = file offset */
	int failed;            /* sticky NT_E* code once the stream is inconsistent */

	wmeta *meta;           /* by id - 1 */
	size_t nmeta, meta_cap;
	size_t meta_pending;   /* defined but not yet written */

	rowblock evb;          /* EventBlock */
	rowblock mdb;          /* V5 MetadataBlock */
	wbuf v6md;             /* V6 metadata block: uint16 header size, then rows */
	idblock stk;           /* StackBlock */
	idblock lbl;           /* V6 LabelList block */
	wbuf thr;              /* V6 Thread block rows */
	nt_strpool stacks;     /* stacks of the current sequence-point region (id = pool id + 1) */
	nt_strpool labels;     /* V6 label lists of the current region */
	nt_idmap v6idx;        /* V6: OS thread id -> thread index */
	uint32_t v6next;       /* V6: last thread index given out */

	wthread *threads;      /* capture threads in first-seen order */
	size_t nthreads, threads_cap;
	nt_idmap thread_map;   /* OS thread id -> index in threads */
	size_t *active;        /* threads with queued events */
	size_t nactive, active_cap;
	wbuf queue;            /* qrec records */

	uint64_t max_ts;       /* newest timestamp written into any block */
	int have_ts;
	uint64_t last_sp_ts;
	uint64_t sp_bytes;     /* event-block bytes since the last sequence point */
	wbuf tmp;              /* scratch for small blocks and keys */
};

static const uint8_t zero16[16];

/* Marks the writer unusable: a partly written block cannot be taken back. */
static int wr_broken(nt_writer *w, int rc)
{
	if (rc < 0 && !w->failed)
		w->failed = rc;
	return rc;
}

/* 1 when need more bytes fit after len bytes under limit. len can exceed limit: a block
 * holding one oversized item is full. */
static int fits(size_t len, size_t need, size_t limit)
{
	return len <= limit && need <= limit - len;
}

/* ---------------------------------------------------------------------------------------
 * Sink output and block framing
 * ------------------------------------------------------------------------------------- */

/* Writes n bytes; a failure makes the writer unusable and is reported with the sink's code
 * (NT_EIO with errno when the sink left one). */
static int wr_out(nt_writer *w, const void *p, size_t n, nt_error *err)
{
	if (n == 0)
		return 0;
	errno = 0;
	int rc = w->sink.write(w->sink.ctx, p, n);
	if (rc < 0) {
		int e = errno;
		if (rc == NT_EIO && e != 0)
			rc = nt_fail_errno(err, e,
					   "cannot write %zu bytes at output offset %" PRIu64, n,
					   w->out_off);
		else
			nt_fail(err, rc, NT_NO_OFFSET,
				"cannot write %zu bytes at output offset %" PRIu64 ": %s", n,
				w->out_off, nt_strerror(rc));
		return wr_broken(w, rc);
	}
	w->out_off += n;
	return 0;
}

/* V4/V5 object header: BeginPrivateObject, the type object (version 2, minimum reader 2 for
 * blocks, spec §2.2) and EndObject of the type. Returns its length in h (room for 64). */
static size_t fs_object_header(uint8_t *h, const char *type, uint32_t version)
{
	size_t nl = strlen(type), n = 0;
	h[n++] = 0x05; /* BeginPrivateObject */
	h[n++] = 0x05; /* BeginPrivateObject of the type */
	h[n++] = 0x01; /* NullReference: the type of a type */
	nt_put32(h + n, version);
	nt_put32(h + n + 4, version); /* minimum reader version */
	nt_put32(h + n + 8, (uint32_t)nl);
	n += 12;
	memcpy(h + n, type, nl);
	n += nl;
	h[n++] = 0x06; /* EndObject of the type */
	return n;
}

/* FastSerialization type name of a V5 block (spec §2.2 table). */
static const char *fs_block_name(enum wr_kind kind)
{
	switch (kind) {
	case WR_K_EVENT:
		return "EventBlock";
	case WR_K_METADATA:
		return "MetadataBlock";
	case WR_K_STACK:
		return "StackBlock";
	default:
		NT_ASSERT(kind == WR_K_SP); /* V6-only kinds never reach V5 framing */
		return "SPBlock";
	}
}

/* Writes one block: V5 as a FastSerialization object (int32 size, zero padding to a 4-byte
 * file offset, content, EndObject; spec §2.4), V6 as uint32 size | kind << 24 then content
 * (spec §7.1). */
static int wr_block(nt_writer *w, enum wr_kind kind, const uint8_t *content, size_t len,
		    nt_error *err)
{
	if (len > w->hard_max)
		return wr_broken(w, nt_fail(err, NT_EINTERNAL, NT_NO_OFFSET,
					    "writer: block of %zu bytes exceeds %" PRIu32, len,
					    w->hard_max));
	uint8_t h[80];
	size_t n;
	if (w->v6) {
		nt_put32(h, (uint32_t)len | (uint32_t)kind << 24);
		n = 4;
	} else {
		n = fs_object_header(h, fs_block_name(kind), 2);
		nt_put32(h + n, (uint32_t)len);
		n += 4;
		/* The content must start at a file offset that is a multiple of 4. */
		size_t pad = (size_t)((4 - ((w->out_off + n) & 3)) & 3);
		memset(h + n, 0, pad);
		n += pad;
	}
	int rc = wr_out(w, h, n, err);
	if (!rc)
		rc = wr_out(w, content, len, err);
	if (!rc && !w->v6) {
		static const uint8_t end_object = 0x06;
		rc = wr_out(w, &end_object, 1, err);
	}
	return rc;
}

/* Stream header and trace header (spec §2.1, §2.3; V6 §7.1, §7.2). */
static int wr_stream_header(nt_writer *w, nt_error *err)
{
	static const char magic[8] = {'N', 'e', 't', 't', 'r', 'a', 'c', 'e'};
	const nt_trace_header *hd = &w->hdr;
	wbuf *b = &w->tmp;
	int bad = 0;
	b->len = 0;
	bad |= wb_put(b, magic, 8);
	if (!w->v6) {
		static const char fs[] = "!FastSerialization.1";
		uint8_t oh[64];
		bad |= wb_u32(b, (uint32_t)strlen(fs));
		bad |= wb_put(b, fs, strlen(fs));
		/* The Trace object: version 4, minimum reader 4, a 48-byte payload. */
		bad |= wb_put(b, oh, fs_object_header(oh, "Trace", 4));
	} else {
		bad |= wb_u32(b, 0); /* Reserved */
		bad |= wb_u32(b, 6); /* MajorVersion */
		bad |= wb_u32(b, 0); /* MinorVersion: what this writer implements */
	}
	size_t trace_start = b->len;
	if (w->v6)
		bad |= wb_u32(b, 0); /* block header, patched below */
	for (int i = 0; i < 8; i++)
		bad |= wb_u16(b, hd->sync_time_utc[i]);
	bad |= wb_u64(b, hd->sync_qpc);
	bad |= wb_u64(b, hd->qpc_frequency);
	bad |= wb_u32(b, hd->pointer_size);
	if (!w->v6) {
		bad |= wb_u32(b, hd->process_id);
		bad |= wb_u32(b, hd->processors);
		bad |= wb_u32(b, hd->expected_sampling_ns);
		bad |= wb_u8(b, 0x06); /* EndObject of the Trace object */
	} else {
		/* V6 moved these fields into well-known key/value pairs (spec §7.2). */
		static const char *const keys[3] = {"ProcessId", "HardwareThreadCount",
						    "ExpectedCPUSamplingRate"};
		uint32_t vals[3] = {hd->process_id, hd->processors, hd->expected_sampling_ns};
		bad |= wb_u32(b, 3);
		for (int i = 0; i < 3; i++) {
			char num[16];
			snprintf(num, sizeof num, "%" PRIu32, vals[i]);
			bad |= wb_v6str(b, keys[i]) | wb_v6str(b, num);
		}
		if (!bad)
			nt_put32(b->p + trace_start,
				 (uint32_t)(b->len - trace_start - 4) | (uint32_t)WR_K_TRACE << 24);
	}
	if (bad)
		return wr_broken(w, wr_oom(err));
	return wr_out(w, b->p, b->len, err);
}

/* ---------------------------------------------------------------------------------------
 * Blocks being filled
 * ------------------------------------------------------------------------------------- */

static int rowblock_reset(rowblock *rb)
{
	rb->b.len = 0;
	rb->nrows = 0;
	rb->min_ts = UINT64_MAX;
	rb->max_ts = 0;
	memset(&rb->prev, 0, sizeof rb->prev);
	return wb_zero(&rb->b, WR_EVENT_HEADER_SIZE);
}

static int idblock_reset(idblock *ib)
{
	ib->b.len = 0;
	ib->first_id = 0;
	ib->count = 0;
	return wb_zero(&ib->b, WR_ID_HEADER_SIZE);
}

/* Writes an EventBlock/MetadataBlock if it has rows: header size 20, flags 1 (compressed
 * headers), min and max timestamp (spec §3.1). */
static int flush_rowblock(nt_writer *w, rowblock *rb, enum wr_kind kind, nt_error *err)
{
	if (!rb->nrows)
		return 0;
	nt_put16(rb->b.p, WR_EVENT_HEADER_SIZE);
	nt_put16(rb->b.p + 2, 1);
	nt_put64(rb->b.p + 4, rb->min_ts);
	nt_put64(rb->b.p + 12, rb->max_ts);
	int rc = wr_block(w, kind, rb->b.p, rb->b.len, err);
	if (rc)
		return rc;
	return rowblock_reset(rb) ? wr_broken(w, wr_oom(err)) : 0;
}

static int flush_idblock(nt_writer *w, idblock *ib, enum wr_kind kind, nt_error *err)
{
	if (!ib->count)
		return 0;
	nt_put32(ib->b.p, ib->first_id);
	nt_put32(ib->b.p + 4, ib->count);
	int rc = wr_block(w, kind, ib->b.p, ib->b.len, err);
	if (rc)
		return rc;
	return idblock_reset(ib) ? wr_broken(w, wr_oom(err)) : 0;
}

static int flush_meta(nt_writer *w, nt_error *err)
{
	if (!w->v6)
		return flush_rowblock(w, &w->mdb, WR_K_METADATA, err);
	if (w->v6md.len <= 2)
		return 0;
	nt_put16(w->v6md.p, 0); /* HeaderSize: no extra header bytes */
	int rc = wr_block(w, WR_K_METADATA, w->v6md.p, w->v6md.len, err);
	w->v6md.len = 2;
	return rc;
}

static int flush_threads(nt_writer *w, nt_error *err)
{
	if (!w->thr.len)
		return 0;
	int rc = wr_block(w, WR_K_THREAD, w->thr.p, w->thr.len, err);
	w->thr.len = 0;
	return rc;
}

/* Writes every pending block, in an order where each block precedes the blocks that
 * reference it: threads, metadata, stacks, label lists, then events (ep_file_flush). */
static int flush_blocks(nt_writer *w, nt_error *err)
{
	int rc = 0;
	if (w->v6)
		rc = flush_threads(w, err);
	if (!rc)
		rc = flush_meta(w, err);
	if (!rc)
		rc = flush_idblock(w, &w->stk, WR_K_STACK, err);
	if (!rc && w->v6)
		rc = flush_idblock(w, &w->lbl, WR_K_LABEL, err);
	if (!rc)
		rc = flush_rowblock(w, &w->evb, WR_K_EVENT, err);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Compressed rows (spec §3.2, V6 §7.3)
 * ------------------------------------------------------------------------------------- */

/* Encodes the compressed header of r relative to prev into out (WR_ROW_HEADER_MAX bytes),
 * applying the runtime's rule for each flag (ep-block.c ep_event_block_base_write_event).
 * Returns the length. */
static size_t encode_row_header(const hstate *prev, const rowdesc *r, int v6, uint8_t *out)
{
	const hstate *h = &r->h;
	uint8_t flags = 0;
	size_t n = 1;
	if (h->meta_id != prev->meta_id) {
		n += nt_put_varu64(out + n, h->meta_id);
		flags |= NT_ROW_META_ID;
	}
	/* Without NT_ROW_SEQ_CAPTURE a reader computes seq = prev + 1 for events (metadata id != 0)
	 * and keeps prev for metadata rows; uint32 arithmetic wraps on purpose. */
	uint32_t implied = prev->seq + (h->meta_id != 0 ? 1u : 0u);
	if (implied != h->seq || prev->capture != h->capture ||
	    prev->processor != h->processor) {
		n += nt_put_varu64(out + n, (uint32_t)(h->seq - prev->seq - 1u));
		n += nt_put_varu64(out + n, h->capture);
		n += nt_put_varu64(out + n, h->processor);
		flags |= NT_ROW_SEQ_CAPTURE;
	}
	if (h->thread != prev->thread) {
		n += nt_put_varu64(out + n, h->thread);
		flags |= NT_ROW_THREAD;
	}
	if (h->stack_id != prev->stack_id) {
		n += nt_put_varu64(out + n, h->stack_id);
		flags |= NT_ROW_STACK;
	}
	/* Always present; an older timestamp than the previous row (another capture
	 * thread's run) wraps to a 10-byte varint, as in runtime-written files. */
	n += nt_put_varu64(out + n, h->timestamp - prev->timestamp);
	if (!v6) {
		if (memcmp(h->act, prev->act, 16) != 0) {
			memcpy(out + n, h->act, 16);
			n += 16;
			flags |= NT_ROW_ACTIVITY;
		}
		if (memcmp(h->rel, prev->rel, 16) != 0) {
			memcpy(out + n, h->rel, 16);
			n += 16;
			flags |= NT_ROW_RELATED;
		}
	} else if (h->label_id != prev->label_id) {
		n += nt_put_varu64(out + n, h->label_id);
		flags |= NT_ROW_LABEL_LIST;
	}
	if (r->sorted)
		flags |= NT_ROW_SORTED;
	if (h->payload_len != prev->payload_len) {
		n += nt_put_varu64(out + n, h->payload_len);
		flags |= NT_ROW_PAYLOAD_SIZE;
	}
	out[0] = flags;
	return n;
}

/* Appends a row to an EventBlock (is_event) or V5 MetadataBlock. When the block is full it
 * is written first (an EventBlock together with every block it may reference) and the
 * header is re-encoded against the reset state. A row too large for any block on its own
 * still goes alone into one (the caller checked it against hard_max). */
static int append_row(nt_writer *w, rowblock *rb, int is_event, const rowdesc *r,
		      const uint8_t *payload, nt_error *err)
{
	uint8_t hb[WR_ROW_HEADER_MAX];
	size_t hn = encode_row_header(&rb->prev, r, w->v6, hb);
	size_t need = hn + r->h.payload_len;
	if (rb->nrows && !fits(rb->b.len, need, w->block_size)) {
		int rc = is_event ? flush_blocks(w, err) : flush_meta(w, err);
		if (rc)
			return rc;
		hn = encode_row_header(&rb->prev, r, w->v6, hb);
		need = hn + r->h.payload_len;
	}
	if (!fits(rb->b.len, need, w->hard_max))
		return wr_broken(w, nt_fail(err, NT_EINTERNAL, NT_NO_OFFSET,
					    "writer: row of %zu bytes does not fit a block", need));
	if (wb_put(&rb->b, hb, hn) || wb_put(&rb->b, payload, r->h.payload_len))
		return wr_broken(w, wr_oom(err));
	rb->prev = r->h;
	rb->nrows++;
	if (r->h.timestamp < rb->min_ts)
		rb->min_ts = r->h.timestamp;
	if (r->h.timestamp > rb->max_ts)
		rb->max_ts = r->h.timestamp;
	if (!w->have_ts || r->h.timestamp > w->max_ts)
		w->max_ts = r->h.timestamp;
	w->have_ts = 1;
	if (is_event)
		w->sp_bytes += need;
	return 0;
}

/* Writes metadata record id to the metadata block unless done already. V5 records are
 * rows with metadata id 0, sequence 0, capture thread 0 and IsSorted, stamped with the
 * thread, processor and timestamp of the event that first uses them (ep-file.c
 * ep_file_write_event; spec §2.5 shows such a row). */
static int emit_meta(nt_writer *w, uint32_t id, uint64_t thread, uint32_t processor,
		     uint64_t ts, nt_error *err)
{
	wmeta *m = &w->meta[id - 1];
	if (m->emitted)
		return 0;
	if (w->v6) {
		if (w->v6md.len > 2 && !fits(w->v6md.len, m->len, w->block_size)) {
			int rc = flush_meta(w, err);
			if (rc)
				return rc;
		}
		if (wb_put(&w->v6md, m->data, m->len))
			return wr_broken(w, wr_oom(err));
	} else {
		rowdesc r;
		memset(&r, 0, sizeof r);
		r.h.processor = processor;
		r.h.thread = thread;
		r.h.timestamp = ts;
		r.h.payload_len = (uint32_t)m->len;
		r.sorted = 1;
		int rc = append_row(w, &w->mdb, 0, &r, m->data, err);
		if (rc)
			return rc;
	}
	m->emitted = 1;
	w->meta_pending--;
	return 0;
}

/* Returns in *id the id of a stack or label list (key bytes) in the current region,
 * adding it to its pending block when new. */
static int intern_id(nt_writer *w, nt_strpool *t, idblock *ib, enum wr_kind kind,
		     const uint8_t *key, size_t len, int size_prefix, uint32_t *id,
		     nt_error *err)
{
	const char *k = (const char *)key;
	uint64_t h = nt_strpool_hash(k, len);
	int64_t found = nt_strpool_find(t, k, len, h);
	if (found >= 0) {
		*id = (uint32_t)found + 1;
		return 0;
	}
	size_t need = len + (size_prefix ? 4 : 0);
	if (ib->count && !fits(ib->b.len, need, w->block_size)) {
		int rc = flush_idblock(w, ib, kind, err);
		if (rc)
			return rc;
	}
	if (!fits(ib->b.len, need, w->hard_max))
		return wr_broken(w, nt_fail(err, NT_EINTERNAL, NT_NO_OFFSET,
					    "writer: %zu-byte stack does not fit a block", len));
	int64_t added = nt_strpool_intern_h(t, k, len, h);
	if (added < 0)
		return wr_broken(w, wr_oom(err));
	*id = (uint32_t)added + 1;
	if (!ib->count)
		ib->first_id = *id;
	ib->count++;
	if ((size_prefix && wb_u32(&ib->b, (uint32_t)len)) || wb_put(&ib->b, key, len))
		return wr_broken(w, wr_oom(err));
	return 0;
}

/* V6: thread index of an OS thread id, defining it in a Thread block row when new: uint16
 * RowSize, varuint64 index, kind 3 OSThreadId, kind 2 OSProcessId (spec §7.5). Indexes are
 * never removed, so sequence points keep flags 0 (no thread-cache flush). */
static int v6_thread_index(nt_writer *w, uint64_t os_tid, uint64_t pid, uint64_t *index,
			   nt_error *err)
{
	size_t v;
	if (!pid)
		pid = w->hdr.process_id;
	/* threads of the header's process are keyed by their id (the capture threads of the
	 * sequence points are looked up so); machine-wide traces' others by (pid, tid) */
	uint64_t key = pid == w->hdr.process_id ? os_tid : (pid << 32) | (os_tid & 0xffffffffu);
	if (nt_idmap_get(&w->v6idx, key, &v)) {
		*index = v;
		return 0;
	}
	if (w->v6next >= UINT32_MAX - 1)
		return wr_broken(w, nt_fail(err, NT_ELIMIT, NT_NO_OFFSET,
					    "writer: too many threads"));
	uint32_t idx = w->v6next + 1;
	uint8_t row[2 + 10 + 1 + 10 + 1 + 10];
	size_t n = 2;
	n += nt_put_varu64(row + n, idx);
	row[n++] = 3;
	n += nt_put_varu64(row + n, os_tid);
	row[n++] = 2;
	n += nt_put_varu64(row + n, pid);
	nt_put16(row, (uint16_t)(n - 2));
	if (w->thr.len && !fits(w->thr.len, n, w->block_size)) {
		int rc = flush_threads(w, err);
		if (rc)
			return rc;
	}
	if (wb_put(&w->thr, row, n) || nt_idmap_put(&w->v6idx, key, idx))
		return wr_broken(w, wr_oom(err));
	w->v6next = idx;
	*index = idx;
	return 0;
}

/* V6 label list holding the activity ids (kinds 1 and 2; high bit on the last label). */
static size_t encode_labels(const qrec *q, uint8_t out[34])
{
	size_t n = 0, last = 0;
	if (memcmp(q->act, zero16, 16) != 0) {
		last = n;
		out[n++] = NT_LABEL_ACTIVITY_ID;
		memcpy(out + n, q->act, 16);
		n += 16;
	}
	if (memcmp(q->rel, zero16, 16) != 0) {
		last = n;
		out[n++] = NT_LABEL_RELATED_ACTIVITY_ID;
		memcpy(out + n, q->rel, 16);
		n += 16;
	}
	if (n)
		out[last] |= NT_LABEL_LAST;
	return n;
}

/* Writes one queued event of capture thread `capture` into the blocks. */
static int emit_event(nt_writer *w, const qrec *q, uint64_t capture, int sorted,
		      nt_error *err)
{
	const uint8_t *stack = (const uint8_t *)(q + 1);
	const uint8_t *payload = stack + q->stack_len;
	rowdesc r;
	int rc;
	memset(&r, 0, sizeof r);
	r.sorted = sorted;
	r.h.meta_id = q->meta_id;
	r.h.seq = q->seq;
	r.h.processor = q->processor;
	r.h.timestamp = q->timestamp;
	r.h.payload_len = q->payload_len;
	if (w->v6) {
		rc = v6_thread_index(w, q->thread_id, q->process_id, &r.h.thread, err);
		if (!rc)
			rc = v6_thread_index(w, capture, 0, &r.h.capture, err);
		if (rc)
			return rc;
	} else {
		r.h.thread = q->thread_id;
		r.h.capture = capture;
		memcpy(r.h.act, q->act, 16);
		memcpy(r.h.rel, q->rel, 16);
	}
	rc = emit_meta(w, q->meta_id, q->thread_id, q->processor, q->timestamp, err);
	if (rc)
		return rc;
	/* Events without a stack reference an interned empty stack: the runtime never
	 * writes stack id 0 (spec §3.5). */
	rc = intern_id(w, &w->stacks, &w->stk, WR_K_STACK, stack, q->stack_len, 1,
		       &r.h.stack_id, err);
	if (rc)
		return rc;
	if (w->v6 && q->has_ids) {
		uint8_t lab[34];
		size_t ln = encode_labels(q, lab);
		rc = intern_id(w, &w->labels, &w->lbl, WR_K_LABEL, lab, ln, 0, &r.h.label_id,
			       err);
		if (rc)
			return rc;
	}
	return append_row(w, &w->evb, 1, &r, payload, err);
}

/* ---------------------------------------------------------------------------------------
 * Queue and sequence points
 * ------------------------------------------------------------------------------------- */

typedef struct runkey {
	uint64_t ts;   /* timestamp of the thread's oldest queued event */
	size_t thread; /* index in w->threads */
} runkey;

static int runkey_cmp(const void *a, const void *b)
{
	const runkey *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Writes every queued event into blocks (which are written when full). As the runtime
 * does (ep_buffer_manager_write_all_buffers_to_file_v4), the capture thread whose oldest
 * event is oldest goes first and all its queued events follow, the first one IsSorted.
 * Taking a whole thread never changes the other threads' oldest events, so the order is
 * simply the threads sorted by oldest event (ties: first-seen thread first). */
static int flush_queue(nt_writer *w, nt_error *err)
{
	if (!w->nactive)
		return 0;
	runkey *keys = malloc(w->nactive * sizeof *keys);
	if (!keys)
		return wr_broken(w, wr_oom(err));
	for (size_t i = 0; i < w->nactive; i++) {
		const wthread *t = &w->threads[w->active[i]];
		keys[i].ts = ((const qrec *)(w->queue.p + t->q[0]))->timestamp;
		keys[i].thread = w->active[i];
	}
	qsort(keys, w->nactive, sizeof *keys, runkey_cmp);
	int rc = 0;
	for (size_t i = 0; i < w->nactive && !rc; i++) {
		wthread *t = &w->threads[keys[i].thread];
		for (size_t j = 0; j < t->qlen && !rc; j++)
			rc = emit_event(w, (const qrec *)(w->queue.p + t->q[j]), t->id, j == 0,
					err);
		t->qlen = 0;
	}
	free(keys);
	w->nactive = 0;
	w->queue.len = 0;
	return wr_broken(w, rc);
}

/* Writes a sequence point: timestamp, then each capture thread with its last sequence
 * number (V5: int64 id + int32; V6: flags 0, varuint64 index + varuint32; spec §6, §7.5).
 * The caller has flushed everything, so the timestamp (the newest written) is >= every
 * event before it. Stack and label-list ids restart afterwards. */
static int write_sp(nt_writer *w, nt_error *err)
{
	uint64_t ts = w->last_sp_ts;
	if (w->have_ts && w->max_ts > ts)
		ts = w->max_ts;
	if (!w->have_ts && ts == 0)
		ts = w->hdr.sync_qpc; /* nothing written yet: the session start */
	wbuf *b = &w->tmp;
	int bad = 0;
	b->len = 0;
	bad |= wb_u64(b, ts);
	if (w->v6)
		bad |= wb_u32(b, 0); /* flags: keep threads and metadata */
	bad |= wb_u32(b, (uint32_t)w->nthreads);
	for (size_t i = 0; i < w->nthreads && !bad; i++) {
		const wthread *t = &w->threads[i];
		if (w->v6) {
			size_t idx = 0;
			/* every capture thread was flushed, so it has an index */
			if (!nt_idmap_get(&w->v6idx, t->id, &idx))
				return wr_broken(w, nt_fail(err, NT_EINTERNAL, NT_NO_OFFSET,
							    "writer: capture thread %" PRIu64
							    " has no V6 index",
							    t->id));
			bad |= wb_varu64(b, idx) | wb_varu64(b, t->last_seq);
		} else {
			bad |= wb_u64(b, t->id) | wb_u32(b, t->last_seq);
		}
	}
	if (bad)
		return wr_broken(w, wr_oom(err));
	if (b->len > w->hard_max)
		return wr_broken(w, nt_fail(err, NT_ELIMIT, NT_NO_OFFSET,
					    "writer: %zu capture threads do not fit a sequence "
					    "point",
					    w->nthreads));
	int rc = wr_block(w, WR_K_SP, b->p, b->len, err);
	if (rc)
		return rc;
	w->last_sp_ts = ts;
	w->sp_bytes = 0;
	nt_strpool_reset(&w->stacks);
	nt_strpool_reset(&w->labels);
	return 0;
}

/* Flushes the queue and all blocks, then writes a sequence point. */
static int flush_and_sp(nt_writer *w, nt_error *err)
{
	int rc = flush_queue(w, err);
	if (!rc)
		rc = flush_blocks(w, err);
	if (!rc)
		rc = write_sp(w, err);
	return rc;
}

/* After a flush of the queue: a sequence point when enough event bytes went out. */
static int maybe_sp(nt_writer *w, nt_error *err)
{
	if (w->sp_bytes < w->sp_interval)
		return 0;
	int rc = flush_blocks(w, err);
	return rc ? rc : write_sp(w, err);
}

/* ---------------------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------------------- */

/* Common entry check: a usable writer. */
static int wr_check(nt_writer *w, nt_error *err)
{
	if (!w)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "writer is NULL");
	if (w->failed)
		return nt_fail(err, w->failed, NT_NO_OFFSET,
			       "writer is unusable after an earlier failure (%s)",
			       nt_strerror(w->failed));
	return 0;
}

int nt_writer_open(nt_writer **out, const nt_sink *sink, const nt_trace_header *hdr,
		   const nt_writer_opts *opts, nt_error *err)
{
	nt_error_clear(err);
	nt_writer_opts o = {sizeof o, 5, WR_DEFAULT_BLOCK_SIZE, WR_DEFAULT_SP_INTERVAL};
	nt_writer *w = NULL;
	int rc;

	if (!out)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "writer: out is NULL");
	*out = NULL;
	if (!sink || !sink->write || !hdr)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "writer: sink or header is NULL");
	nt_writer_opts u; /* the caller's; zero fields keep the defaults in o */
	rc = nt_opts_load(&u, sizeof u, sizeof u, opts, "writer options", err);
	if (rc)
		return rc;
	if (u.format_version)
		o.format_version = u.format_version;
	if (u.block_size)
		o.block_size = u.block_size;
	if (u.sp_interval_bytes)
		o.sp_interval_bytes = u.sp_interval_bytes;
	/* 4 names the same container (a nettrace V4 stream); V5 only adds metadata tags. */
	if (o.format_version != 4 && o.format_version != 5 && o.format_version != 6)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "writer: format version %" PRIu32 " is not 5 or 6",
			       o.format_version);
	uint32_t hard_max = o.format_version == 6 ? WR_V6_MAX_BLOCK : NT_MAX_BLOCK_SIZE;
	if (o.block_size < WR_MIN_BLOCK_SIZE || o.block_size > hard_max)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "writer: block size %" PRIu32 " is outside [%u, %" PRIu32 "]",
			       o.block_size, WR_MIN_BLOCK_SIZE, hard_max);
	if (hdr->pointer_size != 4 && hdr->pointer_size != 8)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "writer: pointer size %" PRIu32 " is not 4 or 8", hdr->pointer_size);
	if (hdr->qpc_frequency == 0 || hdr->qpc_frequency > INT64_MAX)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "writer: tick frequency %" PRIu64 " is not in [1, 2^63)",
			       hdr->qpc_frequency);

	w = calloc(1, sizeof *w);
	if (!w)
		return wr_oom(err);
	w->sink = *sink;
	w->hdr = *hdr;
	w->v6 = o.format_version == 6;
	w->ptr_size = hdr->pointer_size;
	w->block_size = o.block_size;
	w->hard_max = hard_max;
	w->sp_interval = o.sp_interval_bytes;
	if (rowblock_reset(&w->evb) || rowblock_reset(&w->mdb) || idblock_reset(&w->stk) ||
	    idblock_reset(&w->lbl) || wb_zero(&w->v6md, 2)) {
		rc = wr_oom(err);
		goto fail;
	}
	rc = wr_stream_header(w, err);
	if (rc)
		goto fail;
	*out = w;
	return 0;
fail:
	nt_writer_free(w);
	return rc;
}

/* Stores an encoded record and gives it the next id. */
static int add_record(nt_writer *w, wbuf *b, uint32_t *id, nt_error *err)
{
	/* A V5 record is a row payload: it must fit a block with its header. */
	if (b->len > w->hard_max - WR_EVENT_HEADER_SIZE - WR_ROW_HEADER_MAX ||
	    b->len > UINT32_MAX)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "metadata record of %zu bytes is too large", b->len);
	if (nt_grow((void **)&w->meta, &w->meta_cap, w->nmeta + 1, sizeof *w->meta))
		return wr_oom(err);
	w->meta[w->nmeta].data = b->p;
	w->meta[w->nmeta].len = b->len;
	w->meta[w->nmeta].emitted = 0;
	b->p = NULL;
	w->nmeta++;
	w->meta_pending++;
	*id = (uint32_t)w->nmeta;
	return 0;
}

/* What adding a metadata record checks first: the writer, the arguments (args_ok; what
 * names the source) and room for an id (int32 in V5; 1, 2, 3 ... in definition order). */
static int meta_check(nt_writer *w, int args_ok, const char *what, nt_error *err)
{
	int rc = wr_check(w, err);
	if (rc)
		return rc;
	if (!args_ok)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "metadata: %s, provider or id is NULL",
			       what);
	if (w->nmeta >= INT32_MAX)
		return nt_fail(err, NT_ELIMIT, NT_NO_OFFSET, "metadata: too many records");
	return 0;
}

int nt_writer_add_metadata(nt_writer *w, const nt_metadata_desc *d, uint32_t *id, nt_error *err)
{
	nt_error_clear(err);
	int rc = meta_check(w, d && id && d->provider, "descriptor", err);
	if (rc)
		return rc;
	uint32_t new_id = (uint32_t)w->nmeta + 1;
	wbuf b = {NULL, 0, 0};
	rc = w->v6 ? nt_wr_meta_v6(&b, new_id, d, err) : nt_wr_meta_v5(&b, new_id, d, err);
	if (!rc)
		rc = add_record(w, &b, id, err);
	wb_free(&b);
	return rc;
}

/* 1 when raw looks like a V4/V5 metadata payload of m: an int32 id, then m's provider as
 * UTF-16z. A record read from a V6 file is rebuilt from its fields instead. */
static int raw_is_v5(const nt_metadata *m, nt_error *err, int *is_v5)
{
	*is_v5 = 0;
	if (!m->raw || m->raw_len < 6 || !m->provider)
		return 0;
	wbuf p = {NULL, 0, 0};
	if (wb_utf16z(&p, m->provider))
		return wr_oom(err);
	*is_v5 = m->raw_len - 4 >= p.len && memcmp(m->raw + 4, p.p, p.len) == 0;
	wb_free(&p);
	return 0;
}

int nt_writer_copy_metadata(nt_writer *w, const nt_metadata *m, uint32_t *id, nt_error *err)
{
	nt_error_clear(err);
	int rc = meta_check(w, m && id && m->provider, "record", err);
	if (rc)
		return rc;
	int is_v5 = 0;
	if (!w->v6) {
		rc = raw_is_v5(m, err, &is_v5);
		if (rc)
			return rc;
	}
	if (is_v5) {
		/* Verbatim, so V5 tags round-trip; only the leading id changes. */
		wbuf b = {NULL, 0, 0};
		if (wb_put(&b, m->raw, m->raw_len))
			return wr_oom(err);
		nt_put32(b.p, (uint32_t)w->nmeta + 1);
		rc = add_record(w, &b, id, err);
		wb_free(&b);
		return rc;
	}
	/* Rebuild from the fields. Built-in layouts and names are libnettrace's, not the
	 * file's: a schema-less record is copied schema-less. */
	nt_metadata_desc d;
	memset(&d, 0, sizeof d);
	d.provider = m->provider;
	d.event_id = m->event_id;
	d.name = m->file_has_name ? m->name : "";
	d.keywords = m->keywords;
	d.version = m->version;
	d.level = m->level;
	d.opcode = m->opcode;
	if (!m->builtin_layout) {
		d.fields = m->fields;
		d.nfields = m->nfields;
	}
	return nt_writer_add_metadata(w, &d, id, err);
}

/* Looks up capture thread os_id; *idx gets its index in w->threads. Returns 1 when found
 * (or created, if create is set), 0 when absent, -1 when out of memory. */
static int find_thread(nt_writer *w, uint64_t os_id, int create, size_t *idx)
{
	size_t v;
	if (nt_idmap_get(&w->thread_map, os_id, &v)) {
		*idx = v;
		return 1;
	}
	if (!create)
		return 0;
	if (w->nthreads >= UINT32_MAX - 1 ||
	    nt_grow((void **)&w->threads, &w->threads_cap, w->nthreads + 1, sizeof *w->threads) ||
	    nt_idmap_put(&w->thread_map, os_id, w->nthreads))
		return -1;
	memset(&w->threads[w->nthreads], 0, sizeof *w->threads);
	w->threads[w->nthreads].id = os_id;
	*idx = w->nthreads++;
	return 1;
}

int nt_writer_write_event(nt_writer *w, const nt_event_desc *e, nt_error *err)
{
	nt_error_clear(err);
	int rc = wr_check(w, err);
	if (rc)
		return rc;
	if (!e)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "event: descriptor is NULL");
	if (e->metadata_id == 0 || e->metadata_id > w->nmeta)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "event: metadata id %" PRIu32 " is not defined (%zu defined)",
			       e->metadata_id, w->nmeta);
	if (e->payload_len && !e->payload)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "event: payload is NULL but payload_len is %" PRIu32,
			       e->payload_len);
	if (e->stack_depth && !e->stack)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "event: stack is NULL but stack_depth is %" PRIu32, e->stack_depth);
	/* Readers reject deeper stacks as corrupt (NT_MAX_STACK_DEPTH). */
	if (e->stack_depth > NT_MAX_STACK_DEPTH)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "event: stack depth %" PRIu32 " exceeds %u", e->stack_depth,
			       NT_MAX_STACK_DEPTH);
	/* Every row and stack must fit a block on its own. */
	if (e->payload_len > w->hard_max - WR_EVENT_HEADER_SIZE - WR_ROW_HEADER_MAX)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "event: payload of %" PRIu32
			       " bytes exceeds the block limit %" PRIu32,
			       e->payload_len, w->hard_max);
	size_t stack_len = (size_t)e->stack_depth * w->ptr_size; /* <= 512 KiB */

	size_t ti = 0;
	if (find_thread(w, e->capture_thread_id, 0, &ti) && w->threads[ti].has_ts &&
	    e->timestamp < w->threads[ti].last_ts)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "event: timestamp %" PRIu64 " of capture thread %" PRIu64
			       " is older than its previous event (%" PRIu64 ")",
			       e->timestamp, e->capture_thread_id, w->threads[ti].last_ts);
	if (find_thread(w, e->capture_thread_id, 1, &ti) < 0)
		return wr_oom(err);
	wthread *t = &w->threads[ti];

	/* Record: qrec, stack bytes, payload, padded to 8 so the next qrec is aligned.
	 * Sizes are bounded above (payload < 64 MiB, stack <= 512 KiB): no overflow. */
	size_t rec = (sizeof(qrec) + stack_len + e->payload_len + 7) & ~(size_t)7;
	size_t off = w->queue.len;
	if (nt_grow((void **)&t->q, &t->qcap, t->qlen + 1, sizeof *t->q) ||
	    nt_grow((void **)&w->active, &w->active_cap, w->nactive + 1, sizeof *w->active) ||
	    wb_zero(&w->queue, rec))
		return wr_oom(err);
	qrec *q = (qrec *)(w->queue.p + off);
	uint8_t *sp = (uint8_t *)(q + 1);
	q->timestamp = e->timestamp;
	q->thread_id = e->thread_id;
	q->process_id = e->process_id;
	q->meta_id = e->metadata_id;
	q->processor = e->processor;
	q->stack_len = (uint32_t)stack_len;
	q->payload_len = e->payload_len;
	if (e->activity_id)
		memcpy(q->act, e->activity_id, 16);
	if (e->related_activity_id)
		memcpy(q->rel, e->related_activity_id, 16);
	q->has_ids = memcmp(q->act, zero16, 16) != 0 || memcmp(q->rel, zero16, 16) != 0;
	/* IPs as the file stores them: pointer-size little-endian, leaf first; a 4-byte
	 * trace keeps the low 32 bits. */
	for (uint32_t i = 0; i < e->stack_depth; i++) {
		if (w->ptr_size == 8)
			nt_put64(sp + (size_t)i * 8, e->stack[i]);
		else
			nt_put32(sp + (size_t)i * 4, (uint32_t)e->stack[i]);
	}
	if (e->payload_len)
		memcpy(sp + stack_len, e->payload, e->payload_len);
	/* Sequence numbers are per capture thread; 0 asks for the next one. */
	q->seq = e->seq ? e->seq : t->last_seq + 1;
	t->last_seq = q->seq;
	t->last_ts = e->timestamp;
	t->has_ts = 1;
	if (t->qlen == 0)
		w->active[w->nactive++] = ti;
	t->q[t->qlen++] = off;

	if (w->queue.len <= WR_QUEUE_LIMIT)
		return 0;
	rc = flush_queue(w, err);
	return rc ? rc : maybe_sp(w, err);
}

int nt_writer_flush(nt_writer *w, nt_error *err)
{
	nt_error_clear(err);
	int rc = wr_check(w, err);
	if (!rc)
		rc = flush_queue(w, err);
	/* No forced sequence point, but the periodic one is still due by volume. */
	if (!rc)
		rc = maybe_sp(w, err);
	if (!rc)
		rc = flush_blocks(w, err);
	return rc;
}

int nt_writer_sequence_point(nt_writer *w, nt_error *err)
{
	nt_error_clear(err);
	int rc = wr_check(w, err);
	return rc ? rc : flush_and_sp(w, err);
}

/* Writes metadata records that no event used, so every defined record is in the file;
 * they carry the newest timestamp, thread 0 and processor "unknown". */
static int emit_pending_meta(nt_writer *w, nt_error *err)
{
	uint64_t ts = w->have_ts ? w->max_ts : w->hdr.sync_qpc;
	if (w->last_sp_ts > ts)
		ts = w->last_sp_ts;
	for (size_t i = 0; i < w->nmeta && w->meta_pending; i++) {
		int rc = emit_meta(w, (uint32_t)i + 1, 0, UINT32_MAX, ts, err);
		if (rc)
			return rc;
	}
	return 0;
}

int nt_writer_close(nt_writer *w, nt_error *err)
{
	nt_error_clear(err);
	int rc = wr_check(w, err);
	if (!rc)
		rc = flush_queue(w, err);
	if (!rc)
		rc = emit_pending_meta(w, err);
	if (!rc)
		rc = flush_blocks(w, err);
	if (!rc)
		rc = write_sp(w, err);
	if (!rc) {
		/* End of stream: V5 a NullReference tag (spec §2.2), V6 an EndOfStream block. */
		static const uint8_t end_v5 = 0x01;
		static const uint8_t end_v6[4] = {0, 0, 0, 0};
		rc = w->v6 ? wr_out(w, end_v6, 4, err) : wr_out(w, &end_v5, 1, err);
	}
	nt_writer_free(w);
	return rc;
}

void nt_writer_free(nt_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nmeta; i++)
		free(w->meta[i].data);
	free(w->meta);
	wb_free(&w->evb.b);
	wb_free(&w->mdb.b);
	wb_free(&w->v6md);
	wb_free(&w->stk.b);
	wb_free(&w->lbl.b);
	wb_free(&w->thr);
	nt_strpool_free(&w->stacks);
	nt_strpool_free(&w->labels);
	nt_idmap_free(&w->v6idx);
	for (size_t i = 0; i < w->nthreads; i++)
		free(w->threads[i].q);
	free(w->threads);
	nt_idmap_free(&w->thread_map);
	free(w->active);
	wb_free(&w->queue);
	wb_free(&w->tmp);
	free(w);
}
