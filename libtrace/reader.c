/* SPDX-License-Identifier: MIT */
/* reader.c - the streaming nettrace reader's container: opening a trace, the stream and
 * FastSerialization object headers (V4/V5) and V6 blocks, stack, metadata and
 * sequence-point blocks, lost-event accounting, and the reader's getters. The events
 * themselves are decoded in reader-event.c, ordered in reader-order.h; V6 side blocks are
 * in reader-v6.c (reader-int.h says what they share).
 *
 * Ordering (doc/format/nettrace-format.md, spec §6): events are queued per capture thread; a
 * sorted event with timestamp T guarantees that no later event is older than T, so after
 * each block every queued event with timestamp <= the largest such T is dispatched in
 * timestamp order (k-way merge; ties by file order). Sequence points and the end of the
 * stream dispatch everything. Memory is bounded by one sequence-point region.
 * Not here: metadata parsing (metadata.c), payload decoding (payload.c), input (input.c). */
#include "reader-int.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#ifdef NTR_HAVE_BMI2
#include <cpuid.h>
#endif

/* ------------------------------------------------------------------ helpers */

int ntr_err(nt_reader *r, nt_error *err, uint64_t off, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	r->failed = 1;
	return nt_fail(err, NT_EFORMAT, off, "%s", buf);
}

cthread *ntr_thread_slow(nt_reader *r, uint64_t id)
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

void ntr_reset_stacks(nt_reader *r)
{
	r->stack_gen++;
	r->nstacks = 0;
	r->stacks_sparse = 0;
	/* freed, not cleared: clearing costs the table's capacity, and a file of many small
	 * regions after one large one would pay it at every sequence point */
	nt_idmap_free(&r->stack_map);
	r->nips = 0;
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
			return ntr_err(r, err, r->in.offset,
				       "first V6 block has kind %" PRIu32 ", expected 1 (Trace)", kind);
		rc = read_exact(r, 4 + (size_t)size, &p, "the Trace block", err);
		if (rc)
			return rc;
		nt_cursor c;
		nt_cur_init(&c, p + 4, size, r->in.offset + 4);
		rc = ntr_v6_trace_block(r, &c, err);
		if (rc)
			return rc;
		nt_in_consume(&r->in, 4 + (size_t)size);
		return 0;
	}
	if (next != 20)
		return ntr_err(r, err, 8,
			       "bad serialization header: length %" PRIu32 ", expected 20", next);
	rc = read_exact(r, 32, &p, "the serialization header", err);
	if (rc)
		return rc;
	if (memcmp(p + 12, "!FastSerialization.1", 20) != 0)
		return ntr_err(r, err, 12, "bad serialization header: expected \"!FastSerialization.1\"");
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
		return ntr_err(r, err, off, "expected object start 05 05 01, found %s", found);
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
		return ntr_err(r, err, off + 11, "object type name length %" PRIu32 " out of range 1..63",
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
			return ntr_err(r, err, off + 15 + i, "object type name is not printable ASCII");
	if (p[15 + nlen] != 0x06)
		return ntr_err(r, err, off + 15 + nlen,
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
		return ntr_err(r, err, off, "first object is \"%s\", expected \"Trace\"", name);
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
		return ntr_err(r, err, r->in.offset + 48, "expected end of Trace object tag 06, found %02x",
			       p[48]);
	if (r->hdr.pointer_size != 4 && r->hdr.pointer_size != 8)
		return ntr_err(r, err, r->in.offset + 32, "pointer size %" PRIu32 " is not 4 or 8",
			       r->hdr.pointer_size);
	if (r->hdr.qpc_frequency == 0)
		return ntr_err(r, err, r->in.offset + 24, "QPC frequency is 0");
	nt_in_consume(&r->in, 49);
	return 0;
}

/* ------------------------------------------------------------------ open/close */

int ntr_isa_generic;

int ntr_isa_pick(void)
{
#ifdef NTR_HAVE_BMI2
	if (ntr_isa_generic)
		return 0;
	unsigned a, b, c, d;
	if (!__get_cpuid(0, &a, &b, &c, &d) || a < 7)
		return 0;
	/* "AuthenticAMD": ebx, edx, ecx */
	int amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	unsigned family = (a >> 8) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (amd && family < 0x19)
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b >> 8) & 1; /* CPUID.(EAX=7,ECX=0):EBX bit 8: BMI2 */
#else
	return 0;
#endif
}

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
	r->isa = ntr_isa_pick();
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

/* ------------------------------------------------------------------ chunks */

int nt_reader_reopen(const nt_reader *r, uint64_t min_size, nt_reader **out, nt_error *err)
{
	if (!out)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "NULL output pointer");
	*out = NULL;
	if (!r)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "NULL reader");
	nt_reader_opts o = {sizeof o, r->flags, r->name};
	if (r->v6 || r->in.z != NT_Z_NONE || r->in.known_size == UINT64_MAX ||
	    r->in.known_size < min_size)
		return nt_fail(err, NT_EUNSUPPORTED, NT_NO_OFFSET, "input cannot be read in chunks");
	if (r->in.direct)
		return nt_reader_open_mem(out, r->in.mem, r->in.memlen, &o, err);
	if (r->in.start_pos < 0)
		return nt_fail(err, NT_EUNSUPPORTED, NT_NO_OFFSET, "input cannot be read twice");
	/* a new open file description of the same file: an offset of its own */
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", r->in.fd);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return nt_fail_errno(err, errno, "cannot open %s again", r->name);
	struct stat a, b;
	if (fstat(fd, &a) || fstat(r->in.fd, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino ||
	    lseek(fd, (off_t)r->in.start_pos, SEEK_SET) != (off_t)r->in.start_pos) {
		close(fd);
		return nt_fail(err, NT_EUNSUPPORTED, NT_NO_OFFSET, "input cannot be read twice");
	}
	return open_fd_common(out, fd, 1, &o, r->name, err);
}

void nt_reader_chunk_begin(nt_reader *r, uint64_t len, unsigned flags)
{
	int track = (flags & NT_CHUNK_TRACK) != 0;
	if (!r)
		return;
	r->chunk_end = len ? r->in.offset + len : 0;
	r->chunk_stop = 0;
	r->chunk_track = track;
	if (!track)
		return;
	/* the chunk's own losses, against sequence numbers of its own */
	r->stats.lost_events = 0;
	for (size_t i = 0; i < r->nthreads; i++) {
		r->threads[i].last_seq = 0;
		r->threads[i].chunk_kind = 0;
		r->threads[i].lost = 0;
		r->threads[i].chunk_samples = r->threads[i].samples;
	}
	/* and the counts the chunk's are taken from (without the memory to keep them,
	 * nt_reader_chunk_counts() fails: SIZE_MAX) */
	r->chunk_stats = r->stats;
	r->chunk_meta_negative_ts = r->meta_negative_ts;
	size_t n = nt_meta_count(r->meta);
	r->chunk_nmeta = SIZE_MAX;
	if (n > r->chunk_meta_cap &&
	    nt_grow((void **)&r->chunk_meta, &r->chunk_meta_cap, n, sizeof *r->chunk_meta))
		return;
	for (size_t i = 0; i < n; i++)
		r->chunk_meta[i] = *nt_meta_events(nt_meta_at(r->meta, i));
	r->chunk_nmeta = n;
}

struct nt_chunk_counts {
	nt_reader_stats d;    /* events, events_sorted, stacks, missing_stacks and
				 negative_ts_deltas: the chunk's; max_stack_depth and the
				 timestamps: the reader's so far */
	uint64_t *meta;       /* each record's events in the chunk */
	size_t nmeta, metacap;
	struct cc_thread {
		uint64_t id, samples;
	} *thr;
	size_t nthr, thrcap;
};

int nt_reader_chunk_counts(const nt_reader *src, nt_chunk_counts **cp)
{
	nt_chunk_counts *c = *cp;
	if (src->chunk_nmeta == SIZE_MAX || (!c && !(c = *cp = calloc(1, sizeof *c))))
		return NT_ENOMEM;
	const nt_reader_stats *a = &src->stats, *b = &src->chunk_stats;
	memset(&c->d, 0, sizeof c->d);
	c->d.events = a->events - b->events;
	c->d.events_sorted = a->events_sorted - b->events_sorted;
	c->d.stacks = a->stacks - b->stacks;
	c->d.missing_stacks = a->missing_stacks - b->missing_stacks;
	c->d.negative_ts_deltas = (a->negative_ts_deltas - src->meta_negative_ts) -
				  (b->negative_ts_deltas - src->chunk_meta_negative_ts);
	/* (min and max over the chunks the reader read: each of them is merged, or read
	 * again by the reader that passed it, so these stay the file's) */
	c->d.max_stack_depth = a->max_stack_depth;
	c->d.first_timestamp = a->first_timestamp;
	c->d.last_timestamp = a->last_timestamp;
	size_t n = nt_meta_count(src->meta);
	c->nmeta = 0;
	if (n > c->metacap && nt_grow((void **)&c->meta, &c->metacap, n, sizeof *c->meta))
		return NT_ENOMEM;
	for (size_t i = 0; i < n; i++)
		c->meta[i] = *nt_meta_events(nt_meta_at(src->meta, i)) -
			     (i < src->chunk_nmeta ? src->chunk_meta[i] : 0);
	c->nmeta = n;
	c->nthr = 0;
	for (size_t i = 0; i < src->nthreads; i++) {
		const cthread *t = &src->threads[i];
		if (t->samples == t->chunk_samples)
			continue;
		if (c->nthr == c->thrcap &&
		    nt_grow((void **)&c->thr, &c->thrcap, c->nthr + 1, sizeof *c->thr))
			return NT_ENOMEM;
		c->thr[c->nthr++] = (struct cc_thread){t->id, t->samples - t->chunk_samples};
	}
	return 0;
}

int nt_reader_add_chunk_counts(nt_reader *r, const nt_chunk_counts *c)
{
	nt_reader_stats *s = &r->stats;
	if (c->d.events) {
		if (!s->events || c->d.first_timestamp < s->first_timestamp)
			s->first_timestamp = c->d.first_timestamp;
		if (c->d.last_timestamp > s->last_timestamp)
			s->last_timestamp = c->d.last_timestamp;
	}
	s->events += c->d.events;
	s->events_sorted += c->d.events_sorted;
	s->stacks += c->d.stacks;
	if (c->d.stacks && c->d.max_stack_depth > s->max_stack_depth)
		s->max_stack_depth = c->d.max_stack_depth;
	s->missing_stacks += c->d.missing_stacks;
	s->negative_ts_deltas += c->d.negative_ts_deltas;
	size_t n = nt_meta_count(r->meta);
	for (size_t i = 0; i < c->nmeta && i < n; i++)
		*nt_meta_events(nt_meta_at(r->meta, i)) += c->meta[i];
	for (size_t i = 0; i < c->nthr; i++) {
		cthread *t = ntr_thread(r, c->thr[i].id);
		if (!t)
			return NT_ENOMEM;
		t->samples += c->thr[i].samples;
	}
	return 0;
}

void nt_chunk_counts_free(nt_chunk_counts *c)
{
	if (!c)
		return;
	free(c->meta);
	free(c->thr);
	free(c);
}

int nt_reader_chunk_stopped(const nt_reader *r)
{
	return r && r->chunk_stop;
}

int nt_reader_chunk_skip(nt_reader *r, uint64_t len, nt_error *err)
{
	nt_error_clear(err);
	if (!r)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "NULL reader");
	if (r->failed)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "reader already failed");
	r->chunk_stop = 0;
	uint64_t target = r->in.offset + len;
	for (;;) {
		if (r->done)
			return 0;
		int kind;
		r->chunk_passing = 1;
		int rc = ntr_next_block(r, &kind, err);
		r->chunk_passing = 0;
		if (rc == 0) {
			r->done = 1;
			r->stats.bytes = r->stats.truncated ? nt_in_seen(&r->in) : r->in.offset;
			return 0;
		}
		if (rc > 0 && kind == BLK_METADATA)
			rc = ntr_process_block(r, kind, err);
		if (rc < 0) {
			r->failed = 1;
			return rc;
		}
		ntr_finish_block(r);
		if (kind == BLK_SP) {
			ntr_reset_stacks(r);
			if (r->in.offset >= target)
				return 1;
		}
	}
}

int nt_reader_chunk_thread(const nt_reader *r, size_t i, uint64_t *tid, int *kind, uint32_t *first,
		     uint32_t *last, uint64_t *lost)
{
	if (!r || i >= r->nthreads)
		return 0;
	const cthread *t = &r->threads[i];
	*tid = t->id;
	*kind = t->chunk_kind;
	*first = t->chunk_first;
	*last = t->last_seq;
	*lost = t->lost;
	return 1;
}

int nt_reader_thread_seq(nt_reader *r, uint64_t tid, uint32_t *last)
{
	cthread *t = r ? ntr_thread(r, tid) : NULL;
	if (!t)
		return NT_ENOMEM;
	*last = t->last_seq;
	return 0;
}

int nt_reader_set_thread_seq(nt_reader *r, uint64_t tid, uint32_t last, uint64_t lost)
{
	cthread *t = r ? ntr_thread(r, tid) : NULL;
	if (!t)
		return NT_ENOMEM;
	t->last_seq = last;
	t->lost += lost;
	r->stats.lost_events += lost;
	return 0;
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
	free(r->chunk_meta);
	nt_idmap_free(&r->thread_map);
	nt_idmap_free(&r->v6thread_map);
	nt_idmap_free(&r->proc_map);
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

uint64_t nt_reader_capture_samples(const nt_reader *r, size_t i)
{
	return i < r->nthreads ? r->threads[i].samples : 0;
}

uint64_t nt_reader_metadata_events(const nt_reader *r, size_t i)
{
	const nt_metadata *m = nt_meta_at(r->meta, i);
	return m ? *nt_meta_events(m) : 0;
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
		return ntr_err(r, err, nt_cur_offset(c), "StackBlock ends inside its header");
	/* Every stack takes at least its 4-byte size, so count is bounded by the block. */
	if (count > nt_cur_left(c) / 4)
		return ntr_err(r, err, nt_cur_offset(c) - 4,
			       "stack count %" PRIu32 " exceeds the StackBlock (%zu bytes left)", count,
			       nt_cur_left(c));
	if (first == 0 && count > 0)
		return ntr_err(r, err, nt_cur_offset(c) - 8, "stack block first id is 0");
	/* Ids are contiguous from 1 in every region; a gap is tolerated (undefined ids are
	 * counted as missing stacks when used), ids past 2^32-1 are not. */
	if (count > 0 && (uint64_t)first + count - 1 > UINT32_MAX)
		return ntr_err(r, err, nt_cur_offset(c) - 8,
			       "stack ids %" PRIu32 "+%" PRIu32 " exceed 2^32-1", first, count);
	if (count > 0 && first != r->nstacks + 1)
		r->stacks_sparse = 1; /* a gap or a redefinition: look ids up in stack_map */
	uint32_t ps = r->hdr.pointer_size;
	for (uint32_t k = 0; k < count; k++) {
		uint32_t sz;
		const uint8_t *p;
		uint64_t off = nt_cur_offset(c);
		if (nt_cur_u32(c, &sz))
			return ntr_err(r, err, off, "StackBlock ends inside stack #%" PRIu32, k);
		if (sz % ps)
			return ntr_err(r, err, off,
				       "stack size %" PRIu32 " is not a multiple of the pointer size %" PRIu32,
				       sz, ps);
		if (nt_cur_bytes(c, sz, &p))
			return ntr_err(r, err, off,
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

/* ------------------------------------------------------------------ blocks */

/* Parses an EventBlock/MetadataBlock header. Returns 0 or < 0. */
static int parse_block_header(nt_reader *r, nt_cursor *c, int *compressed, nt_error *err)
{
	uint16_t hsize, flags;
	uint64_t off = nt_cur_offset(c);
	if (nt_cur_u16(c, &hsize) || nt_cur_u16(c, &flags))
		return ntr_err(r, err, off, "block ends inside its header");
	if (r->v6 && 0) {
		/* V6 event blocks use the same header */
	}
	if (hsize < 20)
		return ntr_err(r, err, off, "block header size %u is smaller than 20", hsize);
	if (nt_cur_skip(c, (size_t)hsize - 4))
		return ntr_err(r, err, off, "block header size %u exceeds the block (%zu bytes)", hsize,
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
		rc = ntr_decode_header(r, c, compressed, &prev, &e, err);
		if (rc)
			return rc;
		const uint8_t *p;
		uint64_t poff = nt_cur_offset(c);
		if (nt_cur_bytes(c, e.payload_len, &p))
			return ntr_err(r, err, e.offset,
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
		return ntr_err(r, err, nt_cur_offset(c), "metadata block header exceeds the block");
	while (nt_cur_left(c) > 0) {
		const uint8_t *p;
		uint64_t off = nt_cur_offset(c);
		if (nt_cur_u16(c, &rsize) || nt_cur_bytes(c, rsize, &p))
			return ntr_err(r, err, off, "metadata row size exceeds the block");
		int rc = nt_meta_parse_v6(r->meta, p, rsize, off + 2, err);
		if (rc) {
			r->failed = 1;
			return rc;
		}
		r->stats.metadata_records++;
	}
	return 0;
}

static int parse_sp_block(nt_reader *r, nt_cursor *c, nt_error *err)
{
	uint64_t ts;
	uint32_t n, flags = 0;
	if (nt_cur_u64(c, &ts))
		return ntr_err(r, err, nt_cur_offset(c), "SPBlock ends inside its timestamp");
	if (r->v6 && nt_cur_u32(c, &flags))
		return ntr_err(r, err, nt_cur_offset(c), "SPBlock ends inside its flags");
	if (nt_cur_u32(c, &n))
		return ntr_err(r, err, nt_cur_offset(c), "SPBlock ends inside its thread count");
	if (n > nt_cur_left(c) / (r->v6 ? 2 : 12))
		return ntr_err(r, err, nt_cur_offset(c) - 4,
			       "sequence point thread count %" PRIu32 " exceeds the block", n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t tid;
		uint32_t seq;
		if (r->v6) {
			if (nt_cur_varu64(c, &tid) || nt_cur_varu32(c, &seq))
				return ntr_err(r, err, nt_cur_offset(c), "bad sequence point entry");
			tid = ntr_v6_tid(r, tid);
		} else if (nt_cur_u64(c, &tid) || nt_cur_u32(c, &seq)) {
			return ntr_err(r, err, nt_cur_offset(c), "SPBlock ends inside entry %" PRIu32, i);
		}
		cthread *t = ntr_thread(r, tid);
		if (!t)
			return nt_fail(err, NT_ENOMEM, nt_cur_offset(c), "cannot grow thread table");
		if (t->last_seq == 0 && r->chunk_track && !t->chunk_kind) {
			t->chunk_kind = 2;
			t->chunk_first = seq;
		}
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

/* ------------------------------------------------------------------ main loop */

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
int ntr_next_block(nt_reader *r, int *kind, nt_error *err)
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
		return ntr_err(r, err, start, "unknown object type \"%s\"", name);
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
	if (r->chunk_passing && (*kind == BLK_EVENT || *kind == BLK_STACK)) {
		/* nt_reader_chunk_skip() passes it unread: the reader that reads the chunk
		 * checks it */
		rc = nt_in_skip(&r->in, total, err);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			set_truncated(r, start, name, total, 0);
			return 0;
		}
		nt_cur_init(&r->blk, (const uint8_t *)"", 0, off);
		r->blk_consume = 0;
		return 1;
	}
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
			return ntr_err(r, err, off + 4 + i, "non-zero padding byte %02x before %s content",
				       p[4 + i], name);
	if (p[total - 1] != 0x06)
		return ntr_err(r, err, off + total - 1, "expected end of %s tag 06, found %02x", name,
			       p[total - 1]);
	nt_cur_init(&r->blk, p + 4 + pad, size, off + 4 + pad);
	r->blk_consume = total;
	return 1;
}

void ntr_finish_block(nt_reader *r)
{
	nt_in_consume(&r->in, r->blk_consume);
	r->blk_consume = 0;
	r->in_block = 0;
}

/* Processes a non-event block (or starts an event block). */
int ntr_process_block(nt_reader *r, int kind, nt_error *err)
{
	int rc = 0;
	nt_cursor *c = &r->blk;
	switch (kind) {
	case BLK_METADATA: {
		r->meta_last = NULL;
		/* (the wrapped deltas of a metadata block's headers: every reader of a chunked
		 * read counts them, so nt_reader_chunk_counts() leaves them out) */
		uint64_t neg = r->stats.negative_ts_deltas;
		rc = r->v6 ? parse_metadata_block_v6(r, c, err) : parse_metadata_block_v5(r, c, err);
		r->meta_negative_ts += r->stats.negative_ts_deltas - neg;
		break;
	}
	case BLK_STACK:
		rc = parse_stack_block(r, c, err);
		break;
	case BLK_SP:
		rc = parse_sp_block(r, c, err);
		break;
	case BLK_THREAD:
		rc = ntr_v6_thread_block(r, c, err);
		break;
	case BLK_LABEL:
		rc = ntr_v6_label_block(r, c, err);
		break;
	case BLK_EVENT:
		rc = parse_block_header(r, c, &r->blk_compressed, err);
		memset(&r->prev, 0, sizeof r->prev);
		r->blk_fast = r->blk_compressed && !r->v6;
		break;
	default:
		break; /* unknown V6 kinds are skipped (spec §7.1) */
	}
	return rc;
}

