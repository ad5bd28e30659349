/* SPDX-License-Identifier: MIT */
/* reader.c - the streaming nettrace reader: container framing (V4/V5 FastSerialization
 * objects, V6 blocks), block dispatch, compressed/uncompressed event headers, stack
 * blocks, sequence points, lost-event accounting, and timestamp ordering.
 *
 * Ordering (doc/format/nettrace-format.md, spec §6): events are queued per capture thread; a
 * sorted event with timestamp T guarantees that no later event is older than T, so after
 * each block every queued event with timestamp <= the largest such T is dispatched in
 * timestamp order (k-way merge; ties by file order). Sequence points and the end of the
 * stream dispatch everything. Memory is bounded by one sequence-point region.
 * Not here: metadata parsing (metadata.c), payload decoding (payload.c), input (input.c). */
#include "input.h"
#include "internal.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

/* One decoded event waiting for dispatch (or about to be returned in file order). */
typedef struct qev {
	uint64_t timestamp;
	uint64_t thread_id;
	uint64_t capture_thread_id;
	uint64_t offset;      /* file offset of the blob */
	uint64_t order;       /* arrival number (tie-break) */
	size_t payload_off;   /* queued: logical offset in its thread's arena (see cthread) */
	const uint8_t *payload_ptr; /* file-order mode: points into the block */
	uint32_t payload_len;
	uint32_t meta_id;
	const nt_metadata *meta; /* resolved when decoded (a later redefinition must not apply) */
	size_t stack_off;     /* resolved stack: r->ips[stack_off .. +stack_depth) */
	uint32_t stack_depth;
	uint8_t stack_ok;     /* stack_id was defined when the event was decoded */
	uint32_t stack_slot;  /* index + 1 of the definition in r->stacks, 0 if none */
	uint32_t seq;
	uint32_t processor;
	uint32_t stack_id;
	uint32_t label_id;    /* V6 label list id */
	uint64_t process_id;  /* V6: from the thread table row of thread_id; else the header's */
	uint8_t sorted;
	uint8_t activity_id[16];
	uint8_t related_activity_id[16];
} qev;

/* Per capture thread: sequence accounting and its FIFO of queued events. */
typedef struct cthread {
	uint64_t id;       /* OS thread id (V6: thread index until mapped) */
	uint32_t last_seq;
	uint64_t lost;
	qev *q;            /* ring of cap (a power of two) entries: queue positions
			      [head, len), position i in q[i & (cap - 1)] (QI) */
	size_t head, len, cap;
	/* Payload bytes of the queued events, in queue order. Offsets are logical: byte i of
	 * arena is logical offset arena_base + i, so sliding the live bytes to the front
	 * only changes arena_base. All reset to 0 whenever the queue empties. */
	uint8_t *arena;
	size_t arena_len, arena_cap;
	size_t arena_base;
} cthread;

/* A stack of the current region: IPs in r->ips[off .. off+depth). */
typedef struct stackref {
	size_t off;
	uint32_t depth;
} stackref;

/* V6 label list: activity ids. */
typedef struct labellist {
	uint8_t activity_id[16];
	uint8_t related_activity_id[16];
} labellist;

/* V6 thread table entry. */
typedef struct v6thread {
	uint64_t index;
	uint64_t os_tid;
	uint64_t os_pid;
} v6thread;

struct nt_reader {
	nt_input in;
	uint64_t stack_gen;   /* stack-table generation (nt_event.stack_key): +1 per reset */
	char *name;
	unsigned flags;
	nt_trace_header hdr;
	int v6;
	nt_meta_store *meta;
	nt_reader_stats stats;

	/* stacks of the current sequence-point region, in definition order, found by id
	 * through stack_map (sparse: a StackBlock may start at any id, and filling the gap
	 * below it would cost memory and time the file does not pay for) */
	stackref *stacks;
	size_t nstacks, stacks_cap;
	nt_idmap stack_map;
	int stacks_sparse;    /* 0 while the region's ids are 1..nstacks in definition order
				 (the usual case): then stacks[id - 1] is id's stack, no hashing */
	uint64_t *ips;
	size_t nips, ips_cap;

	/* capture threads */
	cthread *threads;
	size_t nthreads, threads_cap;
	size_t last_thread; /* cache for thread lookup */
	nt_idmap thread_map;  /* capture thread id -> index in threads */
	/* min-heap of indexes of threads with queued events, keyed by their oldest queued
	 * event (timestamp, arrival): the k-way merge costs O(log k) per event, where a scan
	 * of all threads made a file with many capture threads quadratic */
	size_t *heap;
	size_t nheap, heap_cap;

	size_t queued;        /* events queued in all threads */
	uint64_t queued_bytes; /* their size: sizeof(qev) + payload each (MAX_QUEUED_BYTES) */
	uint64_t order;       /* arrival counter */
	uint64_t bound;       /* dispatch events with timestamp <= bound */
	int have_bound;
	int flush_all;        /* dispatch everything (SP or end) */

	/* file-order mode: events of the current block decoded one at a time */
	qev cur;

	/* current block being decoded incrementally (file-order mode) */
	nt_cursor blk;
	int in_block;         /* 1 while a block's events are being returned */
	size_t blk_consume;   /* bytes to consume from input when the block is done */
	int blk_compressed;
	qev prev;             /* compressed-header state */
	uint64_t blk_cur_thread;
	int blk_fast;         /* V5, compressed: fast_event() / fast_qev() may decode */
	int ev_act_sync;      /* ev's activity ids equal prev's (fast_event copies them
				 only when a header changes them) */

	/* V6 */
	labellist *labels;
	size_t nlabels, labels_cap;
	v6thread *v6threads;
	size_t nv6threads, v6threads_cap;
	nt_idmap v6thread_map; /* thread index -> position in v6threads */

	/* per-event shortcuts (decoding costs ~10 ns per event, so these matter) */
	const nt_metadata *meta_last; /* nt_meta_lookup(meta_last_id); NULL after any
					 MetadataBlock, which may (re)define ids */
	uint32_t meta_last_id;
	uint64_t ns_freq;     /* the frequency ns_mul was computed for (0: none yet) */
	uint64_t ns_mul;      /* 1e9 / frequency when the frequency divides 1e9, else 0 */
	uint64_t ns_max;      /* with ns_mul: larger tick deltas saturate (INT64_MAX / ns_mul) */

	/* delivered event */
	nt_event ev;
	int done;             /* end reached (0 returned) */
	int failed;
	char warning[256];
	uint64_t warning_offset;
	size_t trunc_need, trunc_have; /* a cut object header: bytes needed and present */
};

/* ------------------------------------------------------------------ helpers */

static int fmt_err(nt_reader *r, nt_error *err, uint64_t off, const char *fmt, ...)
	NT_PRINTF(4, 5);
static int fmt_err(nt_reader *r, nt_error *err, uint64_t off, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	r->failed = 1;
	return nt_fail(err, NT_EFORMAT, off, "%s", buf);
}

static cthread *get_thread_slow(nt_reader *r, uint64_t id);

/* The capture thread with OS id `id`, created if new; NULL when out of memory. Nearly
 * every event has the same capture thread as the one before (the sampler's), so the
 * cache check is inline and the table lookup is not. */
static inline cthread *get_thread(nt_reader *r, uint64_t id)
{
	if (r->last_thread < r->nthreads && r->threads[r->last_thread].id == id)
		return &r->threads[r->last_thread];
	return get_thread_slow(r, id);
}

static cthread *get_thread_slow(nt_reader *r, uint64_t id)
{
	size_t i;
	if (nt_idmap_get(&r->thread_map, id, &i)) {
		r->last_thread = i;
		return &r->threads[i];
	}
	if (nt_grow((void **)&r->threads, &r->threads_cap, r->nthreads + 1, sizeof(cthread)) ||
	    nt_idmap_put(&r->thread_map, id, r->nthreads))
		return NULL;
	cthread *t = &r->threads[r->nthreads];
	memset(t, 0, sizeof *t);
	t->id = id;
	r->last_thread = r->nthreads++;
	return t;
}

static uint64_t v6_tid(nt_reader *r, uint64_t index)
{
	size_t i;
	if (nt_idmap_get(&r->v6thread_map, index, &i))
		return r->v6threads[i].os_tid;
	return index;
}

/* OS process id of V6 thread index `index` (its thread table row), or the header's. */
static uint64_t v6_pid(nt_reader *r, uint64_t index)
{
	size_t i;
	if (nt_idmap_get(&r->v6thread_map, index, &i) && r->v6threads[i].os_pid)
		return r->v6threads[i].os_pid;
	return r->hdr.process_id;
}

static void reset_stacks(nt_reader *r)
{
	r->stack_gen++;
	r->nstacks = 0;
	r->stacks_sparse = 0;
	/* freed, not cleared: clearing costs the table's capacity, and a file of many small
	 * regions after one large one would pay it at every sequence point */
	nt_idmap_free(&r->stack_map);
	r->nips = 0;
}

/* Accounts sequence number s of capture thread t (spec §6 "Dropped events"). */
static void account_seq(nt_reader *r, cthread *t, uint32_t s)
{
	if (t->last_seq != 0 || r->v6) {
		uint32_t dropped = s - 1 - t->last_seq;
		/* A huge value means the number went backwards (thread id reuse); not a loss. */
		if (dropped != 0 && dropped < 0x80000000u) {
			t->lost += dropped;
			r->stats.lost_events += dropped;
		}
	}
	t->last_seq = s;
}

/* ------------------------------------------------------------------ open */

static int read_exact(nt_reader *r, size_t n, const uint8_t **p, const char *what,
		      nt_error *err)
{
	size_t avail;
	int rc = nt_in_peek(&r->in, n, p, &avail, err);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		r->failed = 1;
		return nt_fail(err, NT_ETRUNC, r->in.offset + avail,
			       "file ends inside %s (needed %zu bytes, have %zu)", what, n, avail);
	}
	return 0;
}

static int parse_v6_trace_block(nt_reader *r, nt_cursor *c, nt_error *err);

static int read_stream_header(nt_reader *r, nt_error *err)
{
	const uint8_t *p;
	size_t avail;
	int rc = nt_in_peek(&r->in, 12, &p, &avail, err);
	if (rc < 0)
		return rc;
	if (rc == 1 || memcmp(p, "Nettrace", 8) != 0) {
		if (avail >= 4 && nt_le32(p) == 20 && avail >= 12 && memcmp(p + 4, "!Fast", 5) == 0)
			return nt_fail(err, NT_EUNSUPPORTED, 0,
				       "netperf (V3) files are not supported, only nettrace V4-V6");
		if (avail < 8 && rc == 1 && (avail == 0 || memcmp(p, "Nettrace", avail) == 0))
			return nt_fail(err, NT_ETRUNC, avail, "file ends inside the magic (%zu bytes)",
				       avail);
		/* 8..11 bytes with the magic: cut inside the header, not "no magic" */
		if (rc == 1 && avail >= 8 && memcmp(p, "Nettrace", 8) == 0)
			return nt_fail(err, NT_ETRUNC, avail,
				       "file ends inside the stream header (%zu bytes)", avail);
		return nt_fail(err, NT_EFORMAT, 0, "not a nettrace file (no \"Nettrace\" magic)");
	}
	uint32_t next = nt_le32(p + 8);
	if (next == 0) {
		/* V6: uint32 0, uint32 major, uint32 minor */
		rc = read_exact(r, 20, &p, "the V6 stream header", err);
		if (rc)
			return rc;
		uint32_t major = nt_le32(p + 12), minor = nt_le32(p + 16);
		if (major != 6)
			return nt_fail(err, NT_EUNSUPPORTED, 12,
				       "unsupported nettrace major version %" PRIu32
				       " (this reader supports 4-6)",
				       major);
		r->v6 = 1;
		r->hdr.format_version = 6;
		r->hdr.minor_version = minor;
		nt_in_consume(&r->in, 20);
		/* First block must be the Trace block (kind 1). */
		rc = read_exact(r, 4, &p, "the Trace block header", err);
		if (rc)
			return rc;
		uint32_t bh = nt_le32(p);
		uint32_t size = bh & 0xFFFFFF, kind = bh >> 24;
		if (kind != 1)
			return fmt_err(r, err, r->in.offset,
				       "first V6 block has kind %" PRIu32 ", expected 1 (Trace)", kind);
		rc = read_exact(r, 4 + (size_t)size, &p, "the Trace block", err);
		if (rc)
			return rc;
		nt_cursor c;
		nt_cur_init(&c, p + 4, size, r->in.offset + 4);
		rc = parse_v6_trace_block(r, &c, err);
		if (rc)
			return rc;
		nt_in_consume(&r->in, 4 + (size_t)size);
		return 0;
	}
	if (next != 20)
		return fmt_err(r, err, 8,
			       "bad serialization header: length %" PRIu32 ", expected 20", next);
	rc = read_exact(r, 32, &p, "the serialization header", err);
	if (rc)
		return rc;
	if (memcmp(p + 12, "!FastSerialization.1", 20) != 0)
		return fmt_err(r, err, 12, "bad serialization header: expected \"!FastSerialization.1\"");
	nt_in_consume(&r->in, 32);
	r->hdr.format_version = 4;
	return 0;
}

/* Reads a FastSerialization object header (05 05 01 ver minver name 06) at the current
 * position. Returns 0 and the type name, 1 at the end-of-stream tag, 2 when the input
 * ends cleanly between objects (no end tag), < 0 on error. Consumes the header. */
static int read_object_header(nt_reader *r, char name[64], int32_t *version, nt_error *err)
{
	const uint8_t *p;
	size_t avail;
	uint64_t off = r->in.offset;
	int rc = nt_in_peek(&r->in, 1, &p, &avail, err);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return 2;
	if (p[0] == 0x01) {
		nt_in_consume(&r->in, 1);
		return 1;
	}
	rc = nt_in_peek(&r->in, 15, &p, &avail, err);
	if (rc < 0)
		return rc;
	/* Check the tag bytes that are there before calling a short tail a truncation:
	 * a stray byte instead of the end tag is corruption, not a cut. Only the available
	 * bytes may be read and printed. */
	static const uint8_t start_tag[3] = {0x05, 0x05, 0x01};
	size_t ntag = avail < 3 ? avail : 3;
	if (memcmp(p, start_tag, ntag) != 0) {
		char found[12] = "";
		for (size_t i = 0; i < ntag; i++)
			snprintf(found + strlen(found), sizeof found - strlen(found), "%s%02x",
				 i ? " " : "", p[i]);
		return fmt_err(r, err, off, "expected object start 05 05 01, found %s", found);
	}
	if (rc == 1) {
		r->stats.truncated = 1;
		r->stats.truncated_at = off;
		r->trunc_need = 15; /* for the warning: what the cut header needed and had */
		r->trunc_have = avail;
		return 3;
	}
	*version = (int32_t)nt_le32(p + 3);
	uint32_t nlen = nt_le32(p + 11);
	if (nlen == 0 || nlen > 63)
		return fmt_err(r, err, off + 11, "object type name length %" PRIu32 " out of range 1..63",
			       nlen);
	rc = nt_in_peek(&r->in, 15 + (size_t)nlen + 1, &p, &avail, err);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		r->stats.truncated = 1;
		r->stats.truncated_at = off;
		r->trunc_need = 15 + (size_t)nlen + 1;
		r->trunc_have = avail;
		return 3;
	}
	memcpy(name, p + 15, nlen);
	name[nlen] = '\0';
	for (uint32_t i = 0; i < nlen; i++)
		if (name[i] < 0x20 || (unsigned char)name[i] > 0x7e)
			return fmt_err(r, err, off + 15 + i, "object type name is not printable ASCII");
	if (p[15 + nlen] != 0x06)
		return fmt_err(r, err, off + 15 + nlen,
			       "expected end of type tag 06 after \"%s\", found %02x", name,
			       p[15 + nlen]);
	nt_in_consume(&r->in, 15 + (size_t)nlen + 1);
	return 0;
}

static int read_trace_object(nt_reader *r, nt_error *err)
{
	char name[64];
	int32_t version;
	uint64_t off = r->in.offset;
	int rc = read_object_header(r, name, &version, err);
	if (rc < 0)
		return rc;
	if (rc != 0)
		return nt_fail(err, rc == 1 ? NT_EFORMAT : NT_ETRUNC, off,
			       "file ends before the Trace object");
	if (strcmp(name, "Trace") != 0)
		return fmt_err(r, err, off, "first object is \"%s\", expected \"Trace\"", name);
	if (version != 4)
		return nt_fail(err, NT_EUNSUPPORTED, off + 3,
			       "Trace object version %" PRId32 " is not supported (expected 4)",
			       version);
	const uint8_t *p;
	rc = read_exact(r, 49, &p, "the Trace object", err);
	if (rc)
		return rc;
	for (int i = 0; i < 8; i++)
		r->hdr.sync_time_utc[i] = nt_le16(p + 2 * i);
	r->hdr.sync_qpc = nt_le64(p + 16);
	r->hdr.qpc_frequency = nt_le64(p + 24);
	r->hdr.pointer_size = nt_le32(p + 32);
	r->hdr.process_id = nt_le32(p + 36);
	r->hdr.processors = nt_le32(p + 40);
	r->hdr.expected_sampling_ns = nt_le32(p + 44);
	r->hdr.trace_object_version = (uint32_t)version;
	if (p[48] != 0x06)
		return fmt_err(r, err, r->in.offset + 48, "expected end of Trace object tag 06, found %02x",
			       p[48]);
	if (r->hdr.pointer_size != 4 && r->hdr.pointer_size != 8)
		return fmt_err(r, err, r->in.offset + 32, "pointer size %" PRIu32 " is not 4 or 8",
			       r->hdr.pointer_size);
	if (r->hdr.qpc_frequency == 0)
		return fmt_err(r, err, r->in.offset + 24, "QPC frequency is 0");
	nt_in_consume(&r->in, 49);
	return 0;
}

static int v6_string(nt_cursor *c, char *buf, size_t bufsize)
{
	uint32_t n;
	const uint8_t *p;
	if (nt_cur_varu32(c, &n) || nt_cur_bytes(c, n, &p))
		return -1;
	size_t k = n < bufsize - 1 ? n : bufsize - 1;
	memcpy(buf, p, k);
	buf[k] = '\0';
	return 0;
}

static int parse_v6_trace_block(nt_reader *r, nt_cursor *c, nt_error *err)
{
	uint64_t u;
	uint32_t ptr, kvs;
	for (int i = 0; i < 8; i++) {
		uint16_t v;
		if (nt_cur_u16(c, &v))
			goto trunc;
		r->hdr.sync_time_utc[i] = v;
	}
	if (nt_cur_u64(c, &u))
		goto trunc;
	r->hdr.sync_qpc = u;
	if (nt_cur_u64(c, &u))
		goto trunc;
	r->hdr.qpc_frequency = u;
	if (nt_cur_u32(c, &ptr) || nt_cur_u32(c, &kvs))
		goto trunc;
	r->hdr.pointer_size = ptr;
	if (ptr != 4 && ptr != 8)
		return fmt_err(r, err, nt_cur_offset(c) - 8, "pointer size %" PRIu32 " is not 4 or 8", ptr);
	if (r->hdr.qpc_frequency == 0)
		return fmt_err(r, err, nt_cur_offset(c), "tick frequency is 0");
	/* Each pair takes at least 2 bytes, so the count is bounded by the block. */
	if (kvs > nt_cur_left(c) / 2)
		return fmt_err(r, err, nt_cur_offset(c) - 4,
			       "key/value count %" PRIu32 " exceeds the Trace block", kvs);
	for (uint32_t i = 0; i < kvs; i++) {
		char k[64], v[64];
		if (v6_string(c, k, sizeof k) || v6_string(c, v, sizeof v))
			goto trunc;
		unsigned long val = strtoul(v, NULL, 10);
		if (strcmp(k, "ProcessId") == 0)
			r->hdr.process_id = (uint32_t)val;
		else if (strcmp(k, "HardwareThreadCount") == 0)
			r->hdr.processors = (uint32_t)val;
		else if (strcmp(k, "ExpectedCPUSamplingRate") == 0)
			r->hdr.expected_sampling_ns = (uint32_t)val;
	}
	return 0;
trunc:
	return fmt_err(r, err, nt_cur_offset(c), "Trace block ends inside a field");
}

/* ------------------------------------------------------------------ open/close */

static int reader_new(nt_reader **out, const nt_reader_opts *opts, const char *defname,
		      nt_error *err)
{
	nt_reader_opts o;
	int orc = nt_opts_load(&o, sizeof o, sizeof o, opts, "reader options", err);
	if (orc)
		return orc;
	nt_reader *r = calloc(1, sizeof *r);
	if (!r)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate reader");
	r->flags = o.flags;
	const char *name = o.name ? o.name : defname;
	r->name = nt_strdup(name ? name : "-");
	r->meta = nt_meta_store_new();
	r->in.fd = -1;
	if (!r->name || !r->meta) {
		nt_meta_store_free(r->meta);
		free(r->name);
		free(r);
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate reader");
	}
	*out = r;
	return 0;
}

static int reader_start(nt_reader *r, nt_error *err)
{
	/* gzip / zip input is detected by content and inflated while streaming */
	int rc = nt_in_detect(&r->in, err);
	if (rc)
		return rc;
	rc = read_stream_header(r, err);
	if (rc == 0 && !r->v6)
		rc = read_trace_object(r, err);
	return rc;
}

int nt_reader_open_mem(nt_reader **out, const void *buf, size_t len, const nt_reader_opts *opts,
		       nt_error *err)
{
	nt_error_clear(err);
	nt_reader *r;
	*out = NULL;
	if (!buf && len)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "NULL buffer");
	int rc = reader_new(&r, opts, "<memory>", err);
	if (rc)
		return rc;
	nt_in_init_mem(&r->in, buf ? buf : "", len);
	rc = reader_start(r, err);
	if (rc) {
		nt_reader_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int open_fd_common(nt_reader **out, int fd, int own, const nt_reader_opts *opts,
			  const char *name, nt_error *err)
{
	nt_reader *r;
	int rc = reader_new(&r, opts, name, err);
	if (rc) {
		if (own)
			close(fd);
		return rc;
	}
	rc = nt_in_init_fd(&r->in, fd, own, err);
	if (rc == 0)
		rc = reader_start(r, err);
	if (rc) {
		nt_reader_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int nt_reader_open_fd(nt_reader **out, int fd, const nt_reader_opts *opts, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	if (fd < 0)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad file descriptor %d", fd);
	return open_fd_common(out, fd, 0, opts, "-", err);
}

int nt_reader_open_file(nt_reader **out, const char *path, const nt_reader_opts *opts,
			nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	if (!path)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "NULL path");
	if (strcmp(path, "-") == 0)
		return open_fd_common(out, 0, 0, opts, "-", err);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return nt_fail_errno(err, errno, "cannot open %s", path);
	/* a directory opens but does not read: say so with its name */
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return nt_fail_errno(err, EISDIR, "cannot read %s", path);
	}
	return open_fd_common(out, fd, 1, opts, path, err);
}

void nt_reader_free(nt_reader *r)
{
	if (!r)
		return;
	nt_in_free(&r->in);
	nt_meta_store_free(r->meta);
	for (size_t i = 0; i < r->nthreads; i++) {
		free(r->threads[i].q);
		free(r->threads[i].arena);
	}
	free(r->threads);
	nt_idmap_free(&r->thread_map);
	nt_idmap_free(&r->v6thread_map);
	free(r->heap);
	free(r->stacks);
	nt_idmap_free(&r->stack_map);
	free(r->ips);
	free(r->labels);
	free(r->v6threads);
	free(r->name);
	free(r);
}

const nt_trace_header *nt_reader_header(const nt_reader *r)
{
	return &r->hdr;
}

const nt_reader_stats *nt_reader_stats_get(const nt_reader *r)
{
	return &r->stats;
}

int nt_reader_lost(const nt_reader *r, size_t i, uint64_t *capture_thread_id, uint64_t *lost)
{
	if (i >= r->nthreads)
		return 0;
	*capture_thread_id = r->threads[i].id;
	*lost = r->threads[i].lost;
	return 1;
}

const char *nt_reader_warning(const nt_reader *r, uint64_t *offset)
{
	if (!r->warning[0])
		return NULL;
	if (offset)
		*offset = r->warning_offset;
	return r->warning;
}

size_t nt_reader_metadata_count(const nt_reader *r)
{
	return nt_meta_count(r->meta);
}

const nt_metadata *nt_reader_metadata_at(const nt_reader *r, size_t i)
{
	return nt_meta_at(r->meta, i);
}

/* ------------------------------------------------------------------ stacks */

static int parse_stack_block(nt_reader *r, nt_cursor *c, nt_error *err)
{
	uint32_t first, count;
	if (nt_cur_u32(c, &first) || nt_cur_u32(c, &count))
		return fmt_err(r, err, nt_cur_offset(c), "StackBlock ends inside its header");
	/* Every stack takes at least its 4-byte size, so count is bounded by the block. */
	if (count > nt_cur_left(c) / 4)
		return fmt_err(r, err, nt_cur_offset(c) - 4,
			       "stack count %" PRIu32 " exceeds the StackBlock (%zu bytes left)", count,
			       nt_cur_left(c));
	if (first == 0 && count > 0)
		return fmt_err(r, err, nt_cur_offset(c) - 8, "stack block first id is 0");
	/* Ids are contiguous from 1 in every region; a gap is tolerated (undefined ids are
	 * counted as missing stacks when used), ids past 2^32-1 are not. */
	if (count > 0 && (uint64_t)first + count - 1 > UINT32_MAX)
		return fmt_err(r, err, nt_cur_offset(c) - 8,
			       "stack ids %" PRIu32 "+%" PRIu32 " exceed 2^32-1", first, count);
	if (count > 0 && first != r->nstacks + 1)
		r->stacks_sparse = 1; /* a gap or a redefinition: look ids up in stack_map */
	uint32_t ps = r->hdr.pointer_size;
	for (uint32_t k = 0; k < count; k++) {
		uint32_t sz;
		const uint8_t *p;
		uint64_t off = nt_cur_offset(c);
		if (nt_cur_u32(c, &sz))
			return fmt_err(r, err, off, "StackBlock ends inside stack #%" PRIu32, k);
		if (sz % ps)
			return fmt_err(r, err, off,
				       "stack size %" PRIu32 " is not a multiple of the pointer size %" PRIu32,
				       sz, ps);
		if (nt_cur_bytes(c, sz, &p))
			return fmt_err(r, err, off,
				       "stack size %" PRIu32 " exceeds the StackBlock (%zu bytes left)", sz,
				       nt_cur_left(c));
		uint32_t depth = sz / ps;
		if (nt_grow((void **)&r->ips, &r->ips_cap, r->nips + depth, sizeof(uint64_t)))
			return nt_fail(err, NT_ENOMEM, off, "cannot grow stack storage");
		/* depth 0 with no storage yet: r->ips is NULL and NULL + 0 is undefined */
		if (depth) {
			uint64_t *dst = r->ips + r->nips;
			if (ps == 8)
				for (uint32_t i = 0; i < depth; i++)
					dst[i] = nt_le64(p + 8 * i);
			else
				for (uint32_t i = 0; i < depth; i++)
					dst[i] = nt_le32(p + 4 * i);
		}
		/* a redefinition within a region replaces the mapping: the later one wins */
		if (nt_grow((void **)&r->stacks, &r->stacks_cap, r->nstacks + 1, sizeof(stackref)) ||
		    nt_idmap_put(&r->stack_map, (uint64_t)first + k, r->nstacks))
			return nt_fail(err, NT_ENOMEM, off, "cannot grow stack table");
		r->stacks[r->nstacks++] = (stackref){r->nips, depth};
		r->nips += depth;
		r->stats.stacks++;
		if (depth > r->stats.max_stack_depth)
			r->stats.max_stack_depth = depth;
	}
	return 0;
}

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

/* Decodes one event header at c into e, updating the compressed-header state prev.
 * Returns 0, or < 0 with err set. */
static int decode_header(nt_reader *r, nt_cursor *c, int compressed, qev *prev, qev *e,
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
		uint32_t u32;
		uint64_t u64;
		if (nt_cur_u8(c, &flags))
			goto trunc;
		uint32_t meta_id = prev->meta_id, seq = prev->seq, processor = prev->processor;
		uint32_t stack_id = prev->stack_id, label_id = prev->label_id;
		uint32_t payload_len = prev->payload_len;
		uint64_t capture_tid = prev->capture_thread_id, tid = prev->thread_id;
		uint64_t ts = prev->timestamp;
		/* Every other field of e is stored below or by the callers (meta, stack, order,
		 * payload position) before it is read, except the activity ids, which a flag
		 * may leave as they were: copy those, not the whole 144-byte entry. */
		memcpy(e->activity_id, prev->activity_id, 16);
		memcpy(e->related_activity_id, prev->related_activity_id, 16);
		if (flags & 0x01) {
			if (rd_varu32(c, &u32))
				goto bad;
			meta_id = u32;
		}
		if (flags & 0x02) {
			if (rd_varu32(c, &u32))
				goto bad;
			seq = seq + u32 + 1; /* uint32 wrap-around */
			if (rd_varu64(c, &u64))
				goto bad;
			capture_tid = u64;
			if (rd_varu32(c, &u32))
				goto bad;
			processor = u32;
		} else if (meta_id != 0) {
			seq = seq + 1;
		}
		if (flags & 0x04) {
			if (rd_varu64(c, &u64))
				goto bad;
			tid = u64;
		}
		if (flags & 0x08) {
			if (rd_varu32(c, &u32))
				goto bad;
			stack_id = u32;
		}
		if (rd_varu64(c, &u64))
			goto bad;
		if (u64 >= 0x8000000000000000ull)
			r->stats.negative_ts_deltas++;
		ts += u64; /* modulo 2^64 */
		if (!r->v6) {
			const uint8_t *g;
			if (flags & 0x10) {
				if (nt_cur_bytes(c, 16, &g))
					goto trunc;
				memcpy(e->activity_id, g, 16);
				memcpy(prev->activity_id, g, 16);
			}
			if (flags & 0x20) {
				if (nt_cur_bytes(c, 16, &g))
					goto trunc;
				memcpy(e->related_activity_id, g, 16);
				memcpy(prev->related_activity_id, g, 16);
			}
		} else if (flags & 0x10) {
			if (rd_varu32(c, &u32))
				goto bad;
			label_id = u32;
		}
		if (flags & 0x80) {
			if (rd_varu32(c, &u32))
				goto bad;
			payload_len = u32;
		}
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
		e->sorted = (flags & 0x40) ? 1 : 0; /* per event: prev->sorted stays 0 */
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
		return fmt_err(r, err, off, "event size %" PRIu32 " exceeds the block (%zu bytes left)",
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
		return fmt_err(r, err, off, "event size %" PRIu32 " is smaller than its %zu-byte header",
			       size, (size_t)(c->pos - after_size));
	if (plen > size - (c->pos - after_size))
		return fmt_err(r, err, off,
			       "event payload size %" PRIu32 " exceeds its event size %" PRIu32, plen,
			       size);
	/* Remember where the next event starts (EventSize covers header rest + payload +
	 * padding); the caller reads the payload then jumps there. */
	e->payload_off = start + 4 + size;
	return 0;
bad:
	return fmt_err(r, err, nt_cur_offset(c), "bad varint in event header at blob offset %" PRIu64,
		       off);
trunc:
	return fmt_err(r, err, nt_cur_offset(c), "event header ends past the end of the block");
}

/* ------------------------------------------------------------------ blocks */

/* Parses an EventBlock/MetadataBlock header. Returns 0 or < 0. */
static int parse_block_header(nt_reader *r, nt_cursor *c, int *compressed, nt_error *err)
{
	uint16_t hsize, flags;
	uint64_t off = nt_cur_offset(c);
	if (nt_cur_u16(c, &hsize) || nt_cur_u16(c, &flags))
		return fmt_err(r, err, off, "block ends inside its header");
	if (r->v6 && 0) {
		/* V6 event blocks use the same header */
	}
	if (hsize < 20)
		return fmt_err(r, err, off, "block header size %u is smaller than 20", hsize);
	if (nt_cur_skip(c, (size_t)hsize - 4))
		return fmt_err(r, err, off, "block header size %u exceeds the block (%zu bytes)", hsize,
			       c->len);
	*compressed = flags & 1;
	return 0;
}

static int parse_metadata_block_v5(nt_reader *r, nt_cursor *c, nt_error *err)
{
	int compressed, rc;
	rc = parse_block_header(r, c, &compressed, err);
	if (rc)
		return rc;
	qev prev, e;
	memset(&prev, 0, sizeof prev);
	while (nt_cur_left(c) > 0) {
		rc = decode_header(r, c, compressed, &prev, &e, err);
		if (rc)
			return rc;
		const uint8_t *p;
		uint64_t poff = nt_cur_offset(c);
		if (nt_cur_bytes(c, e.payload_len, &p))
			return fmt_err(r, err, e.offset,
				       "metadata payload size %" PRIu32 " exceeds the block (%zu bytes left)",
				       e.payload_len, nt_cur_left(c));
		rc = nt_meta_parse_v5(r->meta, p, e.payload_len, poff, err);
		if (rc) {
			r->failed = 1;
			return rc;
		}
		r->stats.metadata_records++;
		if (!compressed)
			c->pos = e.payload_off;
	}
	return 0;
}

static int parse_metadata_block_v6(nt_reader *r, nt_cursor *c, nt_error *err)
{
	uint16_t hsize, rsize;
	if (nt_cur_u16(c, &hsize) || nt_cur_skip(c, hsize))
		return fmt_err(r, err, nt_cur_offset(c), "metadata block header exceeds the block");
	while (nt_cur_left(c) > 0) {
		const uint8_t *p;
		uint64_t off = nt_cur_offset(c);
		if (nt_cur_u16(c, &rsize) || nt_cur_bytes(c, rsize, &p))
			return fmt_err(r, err, off, "metadata row size exceeds the block");
		int rc = nt_meta_parse_v6(r->meta, p, rsize, off + 2, err);
		if (rc) {
			r->failed = 1;
			return rc;
		}
		r->stats.metadata_records++;
	}
	return 0;
}

/* The entry of queue position i of capture thread t. */
#define QI(t, i) ((t)->q[(i) & ((t)->cap - 1)])

/* Heap order of two threads with queued events: oldest head first, ties by arrival. */
static inline int heap_less(const nt_reader *r, size_t a, size_t b)
{
	const qev *x = &QI(&r->threads[a], r->threads[a].head);
	const qev *y = &QI(&r->threads[b], r->threads[b].head);
	return x->timestamp < y->timestamp || (x->timestamp == y->timestamp && x->order < y->order);
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

/* Makes room for one more event at the end of t's queue, as enqueue() would, and returns
 * that slot (queue_event_block decodes into it), or NULL when t has no queue yet or
 * memory is short (enqueue then takes the ordinary path). */
/* Doubles t's full ring, its queued entries moved to positions 0.. in order. Returns 0 or
 * -1 (out of memory; t unchanged). */
static int queue_grow(cthread *t)
{
	size_t n = t->len - t->head;
	if (t->cap > SIZE_MAX / 2 / sizeof(qev))
		return -1;
	qev *nq = malloc(2 * t->cap * sizeof(qev));
	if (!nq)
		return -1;
	size_t h = t->head & (t->cap - 1);
	size_t first = n < t->cap - h ? n : t->cap - h;
	if (n) {
		memcpy(nq, t->q + h, first * sizeof(qev));
		memcpy(nq + first, t->q, (n - first) * sizeof(qev));
	}
	free(t->q);
	t->q = nq;
	t->cap *= 2;
	t->head = 0;
	t->len = n;
	return 0;
}

static qev *queue_slot(cthread *t)
{
	if (t->cap == 0)
		return NULL;
	if (t->head == t->len)
		t->head = t->len = t->arena_len = t->arena_base = 0;
	if (t->len - t->head == t->cap && queue_grow(t))
		return NULL;
	return &QI(t, t->len);
}

/* Appends e (payload at p) to its capture thread's queue. e may already be that queue's
 * next slot (from queue_slot()): then nothing is copied. */
static int enqueue(nt_reader *r, qev *e, const uint8_t *p, nt_error *err)
{
	cthread *t = get_thread(r, e->capture_thread_id);
	if (!t)
		return nt_fail(err, NT_ENOMEM, e->offset, "cannot grow thread table");
	size_t ti = (size_t)(t - r->threads);
	/* in place: queue_slot() already reset or grew the queue for this slot */
	int in_place = t->q && e == &QI(t, t->len);
	int was_empty = t->head == t->len;
	if (was_empty)
		t->head = t->len = t->arena_len = t->arena_base = 0;
	/* A file can name a new capture thread in every event; nt_grow's first step of 8
	 * entries would then cost ~1 KB per 7-byte event. Start queues at one entry. */
	if (t->cap == 0) {
		t->q = malloc(sizeof(qev));
		if (!t->q)
			return nt_fail(err, NT_ENOMEM, e->offset, "cannot queue event");
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
	if (e->payload_len > t->arena_cap - t->arena_len) {
		size_t dead = t->head < t->len ? QI(t, t->head).payload_off - t->arena_base
					       : t->arena_len;
		if (dead >= t->arena_cap / 2 && dead > 0) {
			memmove(t->arena, t->arena + dead, t->arena_len - dead);
			t->arena_len -= dead;
			t->arena_base += dead;
		}
	}
	/* (capacities checked inline first: this runs once per event) */
	if ((t->len - t->head == t->cap && queue_grow(t)) ||
	    (was_empty && nt_grow((void **)&r->heap, &r->heap_cap, r->nheap + 1, sizeof(size_t))) ||
	    (e->payload_len > t->arena_cap - t->arena_len &&
	     ((e->payload_len > SIZE_MAX - t->arena_len) ||
	      nt_grow((void **)&t->arena, &t->arena_cap, t->arena_len + e->payload_len, 1))))
		return nt_fail(err, NT_ENOMEM, e->offset, "cannot queue event");
	e->payload_off = t->arena_base + t->arena_len;
	if (e->payload_len == 0) {
		/* nothing to copy; t->arena may still be NULL, and NULL + 0 is undefined */
	} else if (e->payload_len <= 8) {
		/* most payloads are a few bytes (a ThreadSample's is 4): no memcpy call (and
		 * the length in a local, or each byte stored reloads it: char aliases all) */
		uint8_t *dst = t->arena + t->arena_len;
		for (uint32_t i = 0, n = e->payload_len; i < n; i++)
			dst[i] = p[i];
	} else {
		memcpy(t->arena + t->arena_len, p, e->payload_len);
	}
	t->arena_len += e->payload_len;
	e->order = r->order++;
	if (!in_place)
		QI(t, t->len) = *e;
	t->len++;
	r->queued++;
	r->queued_bytes += sizeof(qev) + e->payload_len;
	if (was_empty) {
		/* the thread joins the merge; later events of a non-empty queue are behind its
		 * head and do not change its key */
		r->heap[r->nheap++] = ti;
		heap_sift_up(r, r->nheap - 1);
	}
	return 0;
}

/* Decodes the next event of the current block into *e (payload pointer *pp). Returns 1
 * with an event, 0 at the end of the block, < 0 on error. Metadata ids must be known. */
static int block_next_event(nt_reader *r, qev *e, const uint8_t **pp, nt_error *err)
{
	nt_cursor *c = &r->blk;
	if (nt_cur_left(c) == 0)
		return 0;
	int rc = decode_header(r, c, r->blk_compressed, &r->prev, e, err);
	if (rc)
		return rc;
	if (nt_cur_bytes(c, e->payload_len, pp))
		return fmt_err(r, err, e->offset,
			       "event payload size %" PRIu32 " exceeds the block (%zu bytes left)",
			       e->payload_len, nt_cur_left(c));
	if (!r->blk_compressed)
		c->pos = e->payload_off;
	e->process_id = r->hdr.process_id;
	if (r->v6) {
		e->capture_thread_id = v6_tid(r, e->capture_thread_id);
		e->process_id = v6_pid(r, e->thread_id);
		e->thread_id = v6_tid(r, e->thread_id);
		if (e->label_id && e->label_id <= r->nlabels) {
			memcpy(e->activity_id, r->labels[e->label_id - 1].activity_id, 16);
			memcpy(e->related_activity_id, r->labels[e->label_id - 1].related_activity_id, 16);
		}
	}
	if (e->meta_id == 0 && !r->v6)
		return fmt_err(r, err, e->offset, "event with metadata id 0 in an EventBlock");
	if (!r->meta_last || e->meta_id != r->meta_last_id) {
		r->meta_last = nt_meta_lookup(r->meta, e->meta_id);
		r->meta_last_id = e->meta_id;
	}
	e->meta = r->meta_last;
	if (!e->meta)
		return fmt_err(r, err, e->offset, "event references undefined metadata id %" PRIu32,
			       e->meta_id);
	/* Resolve the stack now, as file order does: in timestamp order the event may be
	 * dispatched after a later StackBlock of the same region redefined its id. The
	 * offsets stay valid until the region's stacks are reset, after its last dispatch. */
	size_t si = 0;
	int found = 0;
	e->stack_ok = 0;
	e->stack_slot = 0;
	e->stack_off = 0;
	e->stack_depth = 0;
	if (e->stack_id && !r->stacks_sparse) {
		/* dense ids: stack_map maps exactly 1..nstacks to 0..nstacks-1 */
		found = e->stack_id <= r->nstacks;
		si = (size_t)e->stack_id - 1;
	} else if (e->stack_id) {
		found = nt_idmap_get(&r->stack_map, e->stack_id, &si);
	}
	if (found) {
		e->stack_ok = 1;
		e->stack_slot = (uint32_t)si + 1; /* si < nstacks <= ids in 32 bits */
		e->stack_off = r->stacks[si].off;
		e->stack_depth = r->stacks[si].depth;
	} else if (e->stack_id) {
		r->stats.missing_stacks++;
	}
	r->stats.events++;
	if (e->sorted)
		r->stats.events_sorted++;
	if (r->stats.events == 1 || e->timestamp < r->stats.first_timestamp)
		r->stats.first_timestamp = e->timestamp;
	if (e->timestamp > r->stats.last_timestamp)
		r->stats.last_timestamp = e->timestamp;
	cthread *t = get_thread(r, e->capture_thread_id);
	if (!t)
		return nt_fail(err, NT_ENOMEM, e->offset, "cannot grow thread table");
	account_seq(r, t, e->seq);
	return 1;
}

/* Timestamp order holds events until a sorted event or a sequence point allows them out.
 * The runtime sets the sorted flag at every capture-thread switch and writes a sequence
 * point every ~10 MB, so little is ever queued; a file without either (or a gzip input
 * that inflates to millions of 2-byte events, ~160 bytes each once queued) would queue
 * without bound. Past this limit, timestamp order fails; file order needs no queue. */
#define MAX_QUEUED_BYTES ((uint64_t)512 << 20)

/* Decodes a whole event block into the queues (timestamp-order mode). Fails with
 * NT_ELIMIT when the queues exceed MAX_QUEUED_BYTES. */

static inline int fast_qev(nt_reader *r, qev *e, const uint8_t **pp);

static int queue_event_block(nt_reader *r, nt_error *err)
{
	qev e;
	const uint8_t *p;
	int rc;
	for (;;) {
		/* Decode straight into the next slot of the previous event's capture thread,
		 * nearly always this event's too (the sampler's). Building the event on the
		 * stack and copying it in stalled on store forwarding (16-byte loads of fields
		 * just stored) for a third of the time of this mode. */
		qev *d = NULL;
		if (r->last_thread < r->nthreads)
			d = queue_slot(&r->threads[r->last_thread]);
		if (!d)
			d = &e;
		if (!(r->blk_fast && fast_qev(r, d, &p)) &&
		    (rc = block_next_event(r, d, &p, err)) != 1)
			break;
		if (d->sorted && (!r->have_bound || d->timestamp > r->bound)) {
			r->bound = d->timestamp;
			r->have_bound = 1;
		}
		uint64_t off = d->offset;
		rc = enqueue(r, d, p, err);
		if (rc)
			return rc;
		if (r->queued_bytes > MAX_QUEUED_BYTES) {
			r->failed = 1;
			return nt_fail(err, NT_ELIMIT, off,
				       "%zu events (%" PRIu64 " MiB) wait for a sorted event or sequence "
				       "point, over the %" PRIu64 " MiB limit of timestamp order; read in "
				       "file order",
				       r->queued, r->queued_bytes >> 20, MAX_QUEUED_BYTES >> 20);
		}
	}
	return rc;
}

static int parse_sp_block(nt_reader *r, nt_cursor *c, nt_error *err)
{
	uint64_t ts;
	uint32_t n, flags = 0;
	if (nt_cur_u64(c, &ts))
		return fmt_err(r, err, nt_cur_offset(c), "SPBlock ends inside its timestamp");
	if (r->v6 && nt_cur_u32(c, &flags))
		return fmt_err(r, err, nt_cur_offset(c), "SPBlock ends inside its flags");
	if (nt_cur_u32(c, &n))
		return fmt_err(r, err, nt_cur_offset(c), "SPBlock ends inside its thread count");
	if (n > nt_cur_left(c) / (r->v6 ? 2 : 12))
		return fmt_err(r, err, nt_cur_offset(c) - 4,
			       "sequence point thread count %" PRIu32 " exceeds the block", n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t tid;
		uint32_t seq;
		if (r->v6) {
			if (nt_cur_varu64(c, &tid) || nt_cur_varu32(c, &seq))
				return fmt_err(r, err, nt_cur_offset(c), "bad sequence point entry");
			tid = v6_tid(r, tid);
		} else if (nt_cur_u64(c, &tid) || nt_cur_u32(c, &seq)) {
			return fmt_err(r, err, nt_cur_offset(c), "SPBlock ends inside entry %" PRIu32, i);
		}
		cthread *t = get_thread(r, tid);
		if (!t)
			return nt_fail(err, NT_ENOMEM, nt_cur_offset(c), "cannot grow thread table");
		uint32_t d = seq - t->last_seq;
		if (t->last_seq != 0 && d != 0 && d < 0x80000000u) {
			t->lost += d;
			r->stats.lost_events += d;
		}
		if (t->last_seq == 0 || d < 0x80000000u)
			t->last_seq = seq;
	}
	if (r->v6 && (flags & 2)) {
		/* flush metadata cache: ids may be redefined; we keep records (ids are looked up
		 * by latest definition in the store). */
	}
	/* Flag 1: the thread table is cleared after the sequence numbers above were checked
	 * (one-collect writes it at every flush and then the table again, with new indexes);
	 * events decoded so far already carry their OS ids. */
	if (r->v6 && (flags & 1)) {
		r->nv6threads = 0;
		nt_idmap_free(&r->v6thread_map);
	}
	/* A V6 sequence point always ends the label lists' scope, as it does the stacks'
	 * (spec §7.5). Events already decoded copied their activity ids. */
	if (r->v6)
		r->nlabels = 0;
	return 0;
}

static int parse_v6_thread_block(nt_reader *r, nt_cursor *c, nt_error *err)
{
	while (nt_cur_left(c) > 0) {
		uint16_t rs;
		const uint8_t *p;
		uint64_t off = nt_cur_offset(c);
		if (nt_cur_u16(c, &rs) || nt_cur_bytes(c, rs, &p))
			return fmt_err(r, err, off, "thread row exceeds the block");
		nt_cursor rc;
		nt_cur_init(&rc, p, rs, off + 2);
		v6thread t = {0, 0, 0};
		if (nt_cur_varu64(&rc, &t.index))
			return fmt_err(r, err, off, "bad thread index");
		t.os_tid = t.index;
		while (nt_cur_left(&rc) > 0) {
			uint8_t kind;
			uint64_t v;
			char s1[8];
			nt_cur_u8(&rc, &kind);
			if (kind == 1) {
				if (v6_string(&rc, s1, sizeof s1))
					return fmt_err(r, err, nt_cur_offset(&rc), "bad thread name");
			} else if (kind == 2 || kind == 3) {
				if (nt_cur_varu64(&rc, &v))
					return fmt_err(r, err, nt_cur_offset(&rc), "bad thread id");
				if (kind == 2)
					t.os_pid = v;
				else
					t.os_tid = v;
			} else if (kind == 4) {
				if (v6_string(&rc, s1, sizeof s1) || v6_string(&rc, s1, sizeof s1))
					return fmt_err(r, err, nt_cur_offset(&rc), "bad thread key/value");
			} else {
				break; /* unknown optional entry: the rest of the row is ignored */
			}
		}
		size_t i;
		if (!nt_idmap_get(&r->v6thread_map, t.index, &i)) {
			i = r->nv6threads;
			if (nt_grow((void **)&r->v6threads, &r->v6threads_cap, i + 1, sizeof(v6thread)) ||
			    nt_idmap_put(&r->v6thread_map, t.index, i))
				return nt_fail(err, NT_ENOMEM, off, "cannot grow thread table");
			r->nv6threads++;
		}
		r->v6threads[i] = t;
	}
	return 0;
}

static int parse_v6_label_block(nt_reader *r, nt_cursor *c, nt_error *err)
{
	uint32_t first, count;
	if (nt_cur_u32(c, &first) || nt_cur_u32(c, &count))
		return fmt_err(r, err, nt_cur_offset(c), "label list block ends inside its header");
	/* Each list takes at least one byte. Indexes below first that were never defined are
	 * filled with empty lists, so that gap is bounded by this block's size as well (the
	 * 16M-entry cap alone let a 14-byte block allocate 512 MB). */
	if (first == 0 || count > nt_cur_left(c) || (uint64_t)first + count > 16u << 20 ||
	    ((uint64_t)first - 1 > r->nlabels && (uint64_t)first - 1 - r->nlabels > c->len))
		return fmt_err(r, err, nt_cur_offset(c) - 8, "bad label list range %" PRIu32 "+%" PRIu32,
			       first, count);
	if (nt_grow((void **)&r->labels, &r->labels_cap, (size_t)first - 1 + count, sizeof(labellist)))
		return nt_fail(err, NT_ENOMEM, nt_cur_offset(c), "cannot grow label table");
	while (r->nlabels < (size_t)first - 1 + count)
		memset(&r->labels[r->nlabels++], 0, sizeof(labellist));
	for (uint32_t k = 0; k < count; k++) {
		labellist *L = &r->labels[first - 1 + k];
		memset(L, 0, sizeof *L);
		for (;;) {
			uint8_t kind;
			const uint8_t *g;
			uint64_t v;
			char s[8];
			if (nt_cur_u8(c, &kind))
				return fmt_err(r, err, nt_cur_offset(c), "label list ends early");
			int last = kind & 0x80;
			switch (kind & 0x7F) {
			case 1:
			case 2:
			case 3:
				if (nt_cur_bytes(c, 16, &g))
					return fmt_err(r, err, nt_cur_offset(c), "label ends early");
				if ((kind & 0x7F) == 1)
					memcpy(L->activity_id, g, 16);
				else if ((kind & 0x7F) == 2)
					memcpy(L->related_activity_id, g, 16);
				break;
			case 4:
			case 8:
				if (nt_cur_skip(c, 8))
					return fmt_err(r, err, nt_cur_offset(c), "label ends early");
				break;
			case 5:
				if (v6_string(c, s, sizeof s) || v6_string(c, s, sizeof s))
					return fmt_err(r, err, nt_cur_offset(c), "bad label string");
				break;
			case 6:
				if (v6_string(c, s, sizeof s) || nt_cur_varu64(c, &v))
					return fmt_err(r, err, nt_cur_offset(c), "bad label value");
				break;
			case 7:
			case 9:
			case 10:
				if (nt_cur_skip(c, 1))
					return fmt_err(r, err, nt_cur_offset(c), "label ends early");
				break;
			default:
				return fmt_err(r, err, nt_cur_offset(c) - 1, "unknown label kind %u",
					       kind & 0x7F);
			}
			if (last)
				break;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ dispatch */

/* Pops the oldest queued event with timestamp <= bound (or any when flush_all). Returns
 * it, with payload_ptr set, or NULL. The entry and its payload stay in place (behind the
 * queue head) until the next enqueue, so the caller uses it at once: no copy. */
static qev *pop_ready(nt_reader *r)
{
	if (r->nheap == 0)
		return NULL;
	/* The heap top is the oldest head of all queues: if it is not ready, none is. */
	cthread *best = &r->threads[r->heap[0]];
	qev *h = &QI(best, best->head);
	if (!r->flush_all && (!r->have_bound || h->timestamp > r->bound))
		return NULL;
	best->head++;
	h->payload_ptr = h->payload_len ? best->arena + (h->payload_off - best->arena_base) : NULL;
	r->queued--;
	r->queued_bytes -= sizeof(qev) + h->payload_len;
	if (best->head == best->len)
		r->heap[0] = r->heap[--r->nheap];
	if (r->nheap)
		heap_sift_down(r, 0);
	return h;
}

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

static void fill_event(nt_reader *r, const qev *q)
{
	nt_event *ev = &r->ev;
	ev->meta = q->meta;
	ev->offset = q->offset;
	ev->seq = q->seq;
	ev->thread_id = q->thread_id;
	ev->capture_thread_id = q->capture_thread_id;
	ev->process_id = q->process_id;
	ev->processor = q->processor;
	ev->timestamp = q->timestamp;
	ev->time_ns = ticks_to_ns(r, q->timestamp);
	memcpy(ev->activity_id, q->activity_id, 16);
	memcpy(ev->related_activity_id, q->related_activity_id, 16);
	ev->stack_id = q->stack_id;
	/* Each definition in a region has its own slot and every reset a new generation,
	 * so equal keys mean equal stacks (a redefined id gets a new slot). */
	ev->stack_key = q->stack_slot ? (r->stack_gen << 32) | q->stack_slot : 0;
	ev->stack = NULL;
	ev->stack_depth = 0;
	if (q->stack_ok && q->stack_depth) {
		ev->stack = r->ips + q->stack_off;
		ev->stack_depth = q->stack_depth;
	}
	/* payload_ptr is NULL only for an empty queued payload (its thread's arena may be
	 * NULL, and NULL + 0 is undefined) */
	ev->payload = q->payload_ptr ? q->payload_ptr : (const uint8_t *)"";
	ev->payload_len = q->payload_len;
	ev->sorted = q->sorted;
}

/* ------------------------------------------------------------------ fast path */

/* The fast path is a handful of small functions so that each can be read on its own;
 * they must still compile to one loop body (GCC kept fast_decode() out of line, which
 * cost a fifth of the instructions per event). */
#define FAST_INLINE inline __attribute__((always_inline))

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
	x &= 0x7f7f7f7f7f7f7f7full;
	x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
	x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
	x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
	*out = x;
	return ((unsigned)__builtin_ctzll(stop) + 1) >> 3;
}

/* The longest compressed V5 header fast_event() decodes: flags, 8 varints of at most 8
 * bytes each read as 8-byte words, two GUIDs; a header this close to the end of its
 * block takes the checked path. */
#define FAST_HEADER_MAX (1 + 8 * 8 + 32)

/* A compressed V5 header decoded and checked by fast_decode(), not yet committed. */
typedef struct fast_hdr {
	uint8_t flags;
	uint32_t meta_id, seq, processor, stack_id, payload_len;
	uint64_t ctid, tid, ts, off;
	const uint8_t *act, *rel; /* new activity ids in the header, or NULL */
	const uint8_t *payload;
	size_t len;               /* header + payload bytes */
	cthread *t;               /* the capture thread */
} fast_hdr;

/* Decodes the next header of a compressed V5 block into h and checks what the checked
 * path (decode_header() + block_next_event()) would. Everything it cannot vouch for
 * returns 0 before any state changes: a header near the block's end, a varint over 8
 * bytes, a backwards timestamp, a payload past the block, an unknown metadata id, a
 * capture thread other than the last one... and the checked path then decodes the same
 * bytes with its checks and messages. Returns 1 when fast_commit() may follow. */
static FAST_INLINE int fast_decode(nt_reader *r, fast_hdr *h)
{
	nt_cursor *c = &r->blk;
	size_t left = c->len - c->pos;
	if (left < FAST_HEADER_MAX)
		return 0;
	const uint8_t *p0 = c->p + c->pos, *p = p0 + 1;
	const qev *s = &r->prev;
	uint8_t flags = p0[0];
	uint64_t v;
	unsigned n;
	uint32_t meta_id = s->meta_id, seq = s->seq, processor = s->processor;
	uint32_t stack_id = s->stack_id, payload_len = s->payload_len;
	uint64_t ctid = s->capture_thread_id, tid = s->thread_id;
	if (flags & 0x01) {
		if (!(n = fast_var(p, &v)))
			return 0;
		p += n;
		meta_id = (uint32_t)v;
	}
	if (flags & 0x02) {
		if (!(n = fast_var(p, &v)))
			return 0;
		p += n;
		seq = seq + (uint32_t)v + 1;
		if (!(n = fast_var(p, &v)))
			return 0;
		p += n;
		ctid = v;
		if (!(n = fast_var(p, &v)))
			return 0;
		p += n;
		processor = (uint32_t)v;
	} else if (meta_id != 0) {
		seq = seq + 1;
	}
	if (flags & 0x04) {
		if (!(n = fast_var(p, &v)))
			return 0;
		p += n;
		tid = v;
	}
	if (flags & 0x08) {
		if (!(n = fast_var(p, &v)))
			return 0;
		p += n;
		stack_id = (uint32_t)v;
	}
	if (!(n = fast_var(p, &v)) || v >= 0x8000000000000000ull)
		return 0; /* (a backwards delta is counted by the checked path) */
	p += n;
	h->ts = s->timestamp + v;
	h->act = h->rel = NULL;
	if (flags & 0x10) {
		h->act = p;
		p += 16;
	}
	if (flags & 0x20) {
		h->rel = p;
		p += 16;
	}
	if (flags & 0x80) {
		if (!(n = fast_var(p, &v)))
			return 0;
		p += n;
		payload_len = (uint32_t)v;
	}
	size_t hlen = (size_t)(p - p0);
	if (payload_len > left - hlen || meta_id == 0)
		return 0;
	if (!r->meta_last || meta_id != r->meta_last_id) {
		const nt_metadata *m = nt_meta_lookup(r->meta, meta_id);
		if (!m)
			return 0;
		r->meta_last = m; /* a cache: setting it changes no state */
		r->meta_last_id = meta_id;
	}
	if (r->last_thread >= r->nthreads || r->threads[r->last_thread].id != ctid)
		return 0;
	h->t = &r->threads[r->last_thread];
	h->flags = flags;
	h->meta_id = meta_id;
	h->seq = seq;
	h->processor = processor;
	h->stack_id = stack_id;
	h->payload_len = payload_len;
	h->ctid = ctid;
	h->tid = tid;
	h->payload = p;
	h->len = hlen + payload_len;
	h->off = c->base_offset + c->pos;
	return 1;
}

/* Commits a header fast_decode() accepted: the compressed-header state, the cursor, the
 * counters and the sequence accounting, as block_next_event() does. Returns the slot of
 * its stack definition + 1 (0: none) and sets *sr to it. */
static FAST_INLINE uint32_t fast_commit(nt_reader *r, const fast_hdr *h, const stackref **sr)
{
	qev *s = &r->prev;
	s->offset = h->off;
	s->meta_id = h->meta_id;
	s->seq = h->seq;
	s->capture_thread_id = h->ctid;
	s->processor = h->processor;
	s->thread_id = h->tid;
	s->stack_id = h->stack_id;
	s->timestamp = h->ts;
	s->payload_len = h->payload_len;
	if (h->act)
		memcpy(s->activity_id, h->act, 16);
	if (h->rel)
		memcpy(s->related_activity_id, h->rel, 16);
	r->blk.pos += h->len;
	size_t si = 0;
	int found = 0;
	uint32_t stack_id = h->stack_id;
	if (stack_id && !r->stacks_sparse) {
		found = stack_id <= r->nstacks;
		si = (size_t)stack_id - 1;
	} else if (stack_id) {
		found = nt_idmap_get(&r->stack_map, stack_id, &si);
	}
	*sr = NULL;
	if (found)
		*sr = &r->stacks[si];
	else if (stack_id)
		r->stats.missing_stacks++;
	r->stats.events++;
	r->stats.events_sorted += (h->flags >> 6) & 1;
	uint64_t ts = h->ts;
	if (r->stats.events == 1 || ts < r->stats.first_timestamp)
		r->stats.first_timestamp = ts;
	if (ts > r->stats.last_timestamp)
		r->stats.last_timestamp = ts;
	account_seq(r, h->t, h->seq);
	return found ? (uint32_t)si + 1 : 0;
}

/* File order: the next event of a compressed V5 block straight into r->ev, as
 * block_next_event() + fill_event() would (no qev in between). Returns 1 with an event,
 * 0 for "take the checked path". */
static FAST_INLINE int fast_event(nt_reader *r)
{
	fast_hdr h;
	if (!fast_decode(r, &h))
		return 0;
	const stackref *sr;
	uint32_t slot = fast_commit(r, &h, &sr);
	nt_event *ev = &r->ev;
	if ((h.flags & 0x30) || !r->ev_act_sync) {
		memcpy(ev->activity_id, r->prev.activity_id, 16);
		memcpy(ev->related_activity_id, r->prev.related_activity_id, 16);
		r->ev_act_sync = 1;
	}
	ev->meta = r->meta_last;
	ev->offset = h.off;
	ev->seq = h.seq;
	ev->thread_id = h.tid;
	ev->capture_thread_id = h.ctid;
	ev->process_id = r->hdr.process_id;
	ev->processor = h.processor;
	ev->timestamp = h.ts;
	ev->time_ns = ticks_to_ns(r, h.ts);
	ev->stack_id = h.stack_id;
	ev->payload = h.payload_len ? h.payload : (const uint8_t *)"";
	ev->payload_len = h.payload_len;
	ev->sorted = (h.flags >> 6) & 1;
	ev->stack_key = slot ? (r->stack_gen << 32) | slot : 0;
	ev->stack = NULL;
	ev->stack_depth = 0;
	if (sr && sr->depth) {
		ev->stack = r->ips + sr->off;
		ev->stack_depth = sr->depth;
	}
	return 1;
}

/* Timestamp order: the next event of a compressed V5 block into the queue slot e, as
 * block_next_event() would. Returns 1 with the event and its payload *pp, 0 for "take
 * the checked path". */
static FAST_INLINE int fast_qev(nt_reader *r, qev *e, const uint8_t **pp)
{
	fast_hdr h;
	if (!fast_decode(r, &h))
		return 0;
	const stackref *sr;
	uint32_t slot = fast_commit(r, &h, &sr);
	e->offset = h.off;
	e->timestamp = h.ts;
	e->thread_id = h.tid;
	e->capture_thread_id = h.ctid;
	e->payload_len = h.payload_len;
	e->meta_id = h.meta_id;
	e->meta = r->meta_last;
	e->stack_slot = slot;
	e->stack_ok = sr != NULL;
	e->stack_off = sr ? sr->off : 0;
	e->stack_depth = sr ? sr->depth : 0;
	e->seq = h.seq;
	e->processor = h.processor;
	e->stack_id = h.stack_id;
	e->label_id = 0;
	e->process_id = r->hdr.process_id;
	e->sorted = (h.flags >> 6) & 1;
	memcpy(e->activity_id, r->prev.activity_id, 16);
	memcpy(e->related_activity_id, r->prev.related_activity_id, 16);
	*pp = h.payload;
	return 1;
}

/* ------------------------------------------------------------------ main loop */

enum { BLK_EVENT = 1, BLK_METADATA, BLK_STACK, BLK_SP, BLK_TRACE, BLK_THREAD, BLK_RMTHREAD,
       BLK_LABEL, BLK_END, BLK_UNKNOWN };

static int kind_from_name(const char *name)
{
	if (strcmp(name, "EventBlock") == 0)
		return BLK_EVENT;
	if (strcmp(name, "MetadataBlock") == 0)
		return BLK_METADATA;
	if (strcmp(name, "StackBlock") == 0)
		return BLK_STACK;
	if (strcmp(name, "SPBlock") == 0)
		return BLK_SP;
	return BLK_UNKNOWN;
}

static const char *kind_name(int kind)
{
	switch (kind) {
	case BLK_EVENT: return "EventBlock";
	case BLK_METADATA: return "MetadataBlock";
	case BLK_STACK: return "StackBlock";
	case BLK_SP: return "SPBlock";
	case BLK_TRACE: return "Trace block";
	case BLK_THREAD: return "Thread block";
	case BLK_RMTHREAD: return "RemoveThread block";
	case BLK_LABEL: return "LabelList block";
	default: return "block";
	}
}

static void count_block(nt_reader *r, int kind)
{
	switch (kind) {
	case BLK_EVENT: r->stats.blocks_event++; break;
	case BLK_METADATA: r->stats.blocks_metadata++; break;
	case BLK_STACK: r->stats.blocks_stack++; break;
	case BLK_SP: r->stats.blocks_sp++; break;
	default: r->stats.blocks_other++; break;
	}
}

static void set_truncated(nt_reader *r, uint64_t at, const char *what, size_t need, size_t have)
{
	r->stats.truncated = 1;
	r->stats.truncated_at = at;
	r->warning_offset = at;
	if (need)
		snprintf(r->warning, sizeof r->warning,
			 "stream truncated inside %s (needs %zu bytes, %zu present); "
			 "events before it were read",
			 what, need, have);
	else
		snprintf(r->warning, sizeof r->warning,
			 "stream ends without the end-of-stream marker (%s)", what);
}

/* Reads the next block into r->blk. Returns 1 with *kind set, 0 at the end of the
 * stream (clean or truncated), < 0 on error. Sets r->blk_consume. */
static int next_block(nt_reader *r, int *kind, nt_error *err)
{
	const uint8_t *p;
	size_t avail;
	int rc;
	uint64_t start = r->in.offset;
	if (r->v6) {
		rc = nt_in_peek(&r->in, 4, &p, &avail, err);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			if (avail == 0)
				set_truncated(r, start, "no EndOfStream block", 0, 0);
			else
				set_truncated(r, start, "a block header", 4, avail);
			return 0;
		}
		uint32_t bh = nt_le32(p);
		uint32_t size = bh & 0xFFFFFF, k = bh >> 24;
		rc = nt_in_peek(&r->in, 4 + (size_t)size, &p, &avail, err);
		if (rc < 0)
			return rc;
		static const int map[] = {BLK_END, BLK_TRACE, BLK_EVENT, BLK_METADATA, BLK_SP,
					  BLK_STACK, BLK_THREAD, BLK_RMTHREAD, BLK_LABEL};
		*kind = k < sizeof map / sizeof map[0] ? map[k] : BLK_UNKNOWN;
		if (*kind != BLK_END)
			count_block(r, *kind);
		if (rc == 1) {
			set_truncated(r, start, kind_name(*kind), 4 + (size_t)size, avail);
			return 0;
		}
		if (*kind == BLK_END) {
			nt_in_consume(&r->in, 4 + (size_t)size);
			r->stats.end_tag = 1;
			return 0;
		}
		nt_cur_init(&r->blk, p + 4, size, start + 4);
		r->blk_consume = 4 + (size_t)size;
		return 1;
	}
	char name[64];
	int32_t version;
	rc = read_object_header(r, name, &version, err);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		r->stats.end_tag = 1;
		return 0;
	}
	if (rc == 2) {
		set_truncated(r, start, "no end-of-stream tag after the last block", 0, 0);
		return 0;
	}
	if (rc == 3) {
		set_truncated(r, start, "an object header", r->trunc_need, r->trunc_have);
		return 0;
	}
	*kind = kind_from_name(name);
	if (*kind == BLK_UNKNOWN)
		return fmt_err(r, err, start, "unknown object type \"%s\"", name);
	/* A block whose header was read counts as a block even if its content is cut off
	 * (EXPECTED.md counts the truncated final EventBlock); its events are not delivered. */
	count_block(r, *kind);
	if (version > 2 || version < 1)
		return nt_fail(err, NT_EUNSUPPORTED, start + 3,
			       "%s version %" PRId32 " is not supported (expected 2)", name, version);
	/* int32 BlockSize, padding to a 4-byte file offset, content, 06 */
	uint64_t off = r->in.offset;
	rc = nt_in_peek(&r->in, 4, &p, &avail, err);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		set_truncated(r, start, name, 4, avail);
		return 0;
	}
	uint32_t size = nt_le32(p);
	size_t pad = (size_t)((4 - ((off + 4) & 3)) & 3);
	if (size > NT_MAX_BLOCK_SIZE) {
		r->failed = 1;
		return nt_fail(err, NT_ELIMIT, off,
			       "%s size %" PRIu32 " exceeds the %u byte limit", name, size,
			       NT_MAX_BLOCK_SIZE);
	}
	size_t total = 4 + pad + (size_t)size + 1;
	if (nt_in_remaining_hint(&r->in) < total) {
		set_truncated(r, start, name, total, (size_t)nt_in_remaining_hint(&r->in));
		return 0;
	}
	rc = nt_in_peek(&r->in, total, &p, &avail, err);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		set_truncated(r, start, name, total, avail);
		return 0;
	}
	for (size_t i = 0; i < pad; i++)
		if (p[4 + i] != 0)
			return fmt_err(r, err, off + 4 + i, "non-zero padding byte %02x before %s content",
				       p[4 + i], name);
	if (p[total - 1] != 0x06)
		return fmt_err(r, err, off + total - 1, "expected end of %s tag 06, found %02x", name,
			       p[total - 1]);
	nt_cur_init(&r->blk, p + 4 + pad, size, off + 4 + pad);
	r->blk_consume = total;
	return 1;
}

static void finish_block(nt_reader *r)
{
	nt_in_consume(&r->in, r->blk_consume);
	r->blk_consume = 0;
	r->in_block = 0;
}

/* Processes a non-event block (or starts an event block). */
static int process_block(nt_reader *r, int kind, nt_error *err)
{
	int rc = 0;
	nt_cursor *c = &r->blk;
	switch (kind) {
	case BLK_METADATA:
		r->meta_last = NULL;
		rc = r->v6 ? parse_metadata_block_v6(r, c, err) : parse_metadata_block_v5(r, c, err);
		break;
	case BLK_STACK:
		rc = parse_stack_block(r, c, err);
		break;
	case BLK_SP:
		rc = parse_sp_block(r, c, err);
		break;
	case BLK_THREAD:
		rc = parse_v6_thread_block(r, c, err);
		break;
	case BLK_LABEL:
		rc = parse_v6_label_block(r, c, err);
		break;
	case BLK_EVENT:
		rc = parse_block_header(r, c, &r->blk_compressed, err);
		memset(&r->prev, 0, sizeof r->prev);
		r->blk_fast = r->blk_compressed && !r->v6;
		r->ev_act_sync = 0;
		break;
	default:
		break; /* unknown V6 kinds are skipped (spec §7.1) */
	}
	return rc;
}

int nt_reader_next(nt_reader *r, const nt_event **out, nt_error *err)
{
	nt_error_clear(err);
	int rc, kind;
	*out = NULL;
	if (r->failed)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "reader already failed");
	if (r->flags & NT_READ_FILE_ORDER) {
		for (;;) {
			if (r->in_block) {
				if (r->blk_fast && fast_event(r)) {
					*out = &r->ev;
					return 1;
				}
				const uint8_t *p;
				rc = block_next_event(r, &r->cur, &p, err);
				if (rc < 0) {
					r->failed = 1;
					return rc;
				}
				if (rc == 1) {
					r->cur.payload_ptr = p;
					fill_event(r, &r->cur);
					*out = &r->ev;
					return 1;
				}
				finish_block(r);
			}
			if (r->done)
				return 0;
			rc = next_block(r, &kind, err);
			if (rc < 0) {
				r->failed = 1;
				return rc;
			}
			if (rc == 0) {
				r->done = 1;
				r->stats.bytes = r->stats.truncated ? nt_in_seen(&r->in) : r->in.offset;
				return 0;
			}
			rc = process_block(r, kind, err);
			if (rc < 0) {
				r->failed = 1;
				return rc;
			}
			if (kind == BLK_SP)
				reset_stacks(r);
			if (kind == BLK_EVENT)
				r->in_block = 1;
			else
				finish_block(r);
		}
	}
	for (;;) {
		const qev *q = pop_ready(r);
		if (q) {
			fill_event(r, q);
			*out = &r->ev;
			return 1;
		}
		if (r->flush_all) {
			/* everything of the region was dispatched: stacks can go */
			r->flush_all = 0;
			reset_stacks(r);
		}
		if (r->done)
			return 0;
		rc = next_block(r, &kind, err);
		if (rc < 0) {
			r->failed = 1;
			return rc;
		}
		if (rc == 0) {
			r->done = 1;
			r->flush_all = 1;
			r->stats.bytes = r->stats.truncated ? nt_in_seen(&r->in) : r->in.offset;
			continue;
		}
		rc = process_block(r, kind, err);
		if (rc == 0 && kind == BLK_EVENT)
			rc = queue_event_block(r, err);
		if (rc < 0) {
			r->failed = 1;
			return rc;
		}
		finish_block(r);
		if (kind == BLK_SP)
			r->flush_all = 1;
	}
}
