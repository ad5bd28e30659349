/* SPDX-License-Identifier: MIT */
/* test-reader.c - unit tests of the nettrace reader (reader.c, metadata.c, payload.c,
 * input.c): the smallest real V4 file, compressed headers (sequence wrap, negative
 * timestamp deltas, every optional field), uncompressed headers, V5 metadata tags, ordering
 * across capture threads, lost events, stacks and sequence points, 4-byte pointers, a V6
 * stream, truncation at every byte, reading from a pipe, nt_event_field_ref() against
 * nt_event_field(), nt_utf16z_dup() against a plain converter, and regressions for the
 * bugs the fuzzer and the corrupt corpus found. Inputs are built byte by byte with
 * tests/ntbuild.h. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h" /* nt_event_field_ref */
#include "reader-int.h" /* ntr_isa_generic, r->isa */
#include "nettrace.h"
#include "ntbuild.h"
#include "tap.h"
#include "testutil.h"

/* The smallest real runtime-written file (spec §2.5), relative to data/. */
#define CHECKPOINTS_TRACE \
	"traces/perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace"

/* ------------------------------------------------------------------ helpers */

/* A delivered event, copied out of the reader (nt_event is only valid until the next call). */
typedef struct rec {
	uint64_t offset, thread_id, capture_thread_id, timestamp, process_id;
	int64_t time_ns;
	uint32_t meta_id, seq, processor, stack_id, stack_depth, payload_len;
	uint64_t stack[8];
	uint8_t activity_id[16], related_activity_id[16];
	int sorted;
	char json[512];
} rec;

typedef struct result {
	int open_rc;      /* nt_reader_open_mem() */
	int rc;           /* last nt_reader_next() */
	nt_error err;
	rec ev[64];
	size_t n;         /* events delivered (all counted, the first 64 kept) */
	nt_reader_stats stats;
	nt_trace_header hdr;
	uint64_t lost_tid[8], lost[8];
	size_t nlost;
	char warning[256];
	uint64_t warning_offset;
	int json_ok;      /* every payload rendered as syntactically valid JSON */
} result;

static int json_valid(const char *s, size_t len);

/* Opens buf, reads every event (flags: NT_READ_FILE_ORDER or 0), and records everything. */
static void read_mem(const void *buf, size_t len, unsigned flags, result *res)
{
	nt_reader *r = NULL;
	nt_reader_opts o = {sizeof o, flags, "test"};
	memset(res, 0, sizeof *res);
	nt_error_clear(&res->err);
	res->json_ok = 1;
	res->open_rc = nt_reader_open_mem(&r, buf, len, &o, &res->err);
	if (res->open_rc < 0) {
		res->rc = res->open_rc;
		return;
	}
	res->hdr = *nt_reader_header(r);
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	const nt_event *e;
	while ((res->rc = nt_reader_next(r, &e, &res->err)) == 1) {
		mb.len = 0;
		if (nt_payload_write_json(e, res->hdr.pointer_size, &sink) != 0 ||
		    !json_valid((const char *)mb.data, mb.len))
			res->json_ok = 0;
		if (res->n < sizeof res->ev / sizeof res->ev[0]) {
			rec *x = &res->ev[res->n];
			x->offset = e->offset;
			x->thread_id = e->thread_id;
			x->process_id = e->process_id;
			x->capture_thread_id = e->capture_thread_id;
			x->timestamp = e->timestamp;
			x->time_ns = e->time_ns;
			x->meta_id = e->meta ? e->meta->id : 0;
			x->seq = e->seq;
			x->processor = e->processor;
			x->stack_id = e->stack_id;
			x->stack_depth = e->stack_depth;
			x->payload_len = e->payload_len;
			for (uint32_t i = 0; i < e->stack_depth && i < 8; i++)
				x->stack[i] = e->stack[i];
			memcpy(x->activity_id, e->activity_id, 16);
			memcpy(x->related_activity_id, e->related_activity_id, 16);
			x->sorted = e->sorted;
			size_t k = mb.len < sizeof x->json - 1 ? mb.len : sizeof x->json - 1;
			memcpy(x->json, mb.data, k);
			x->json[k] = '\0';
		}
		res->n++;
	}
	nt_membuf_free(&mb);
	res->stats = *nt_reader_stats_get(r);
	uint64_t tid, lost;
	for (size_t i = 0; res->nlost < 8 && nt_reader_lost(r, i, &tid, &lost) == 1; i++) {
		res->lost_tid[res->nlost] = tid;
		res->lost[res->nlost++] = lost;
	}
	const char *w = nt_reader_warning(r, &res->warning_offset);
	if (w)
		snprintf(res->warning, sizeof res->warning, "%s", w);
	nt_reader_free(r);
}

/* Lost events of capture thread tid, or -1 if the reader does not know the thread. */
static long long lost_of(const result *res, uint64_t tid)
{
	for (size_t i = 0; i < res->nlost; i++)
		if (res->lost_tid[i] == tid)
			return (long long)res->lost[i];
	return -1;
}

/* Minimal JSON syntax check (RFC 8259 grammar, no semantic limits): payload rendering
 * must produce valid JSON even when the payload does not match its layout. */
typedef struct jp {
	const char *s;
	size_t len, pos;
	int depth;
} jp;
static void jp_ws(jp *j)
{
	while (j->pos < j->len && strchr(" \t\r\n", j->s[j->pos]))
		j->pos++;
}
static int jp_value(jp *j);
static int jp_string(jp *j)
{
	if (j->pos >= j->len || j->s[j->pos] != '"')
		return 0;
	for (j->pos++; j->pos < j->len; j->pos++) {
		unsigned char c = (unsigned char)j->s[j->pos];
		if (c == '"') {
			j->pos++;
			return 1;
		}
		if (c < 0x20)
			return 0;
		if (c == '\\') {
			j->pos++;
			if (j->pos >= j->len)
				return 0;
			if (j->s[j->pos] == 'u') {
				for (int i = 0; i < 4; i++)
					if (++j->pos >= j->len || !strchr("0123456789abcdefABCDEF", j->s[j->pos]))
						return 0;
			} else if (!strchr("\"\\/bfnrt", j->s[j->pos])) {
				return 0;
			}
		}
	}
	return 0;
}
static int jp_value(jp *j)
{
	jp_ws(j);
	if (j->pos >= j->len || ++j->depth > 64)
		return 0;
	char c = j->s[j->pos];
	int ok = 1;
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		j->pos++;
		jp_ws(j);
		if (j->pos < j->len && j->s[j->pos] == close) {
			j->pos++;
		} else {
			for (;;) {
				if (c == '{') {
					jp_ws(j);
					if (!jp_string(j))
						return 0;
					jp_ws(j);
					if (j->pos >= j->len || j->s[j->pos++] != ':')
						return 0;
				}
				if (!jp_value(j))
					return 0;
				jp_ws(j);
				if (j->pos >= j->len)
					return 0;
				if (j->s[j->pos] == ',') {
					j->pos++;
					continue;
				}
				if (j->s[j->pos] != close)
					return 0;
				j->pos++;
				break;
			}
		}
	} else if (c == '"') {
		ok = jp_string(j);
	} else if (strncmp(j->s + j->pos, "true", 4) == 0 && j->len - j->pos >= 4) {
		j->pos += 4;
	} else if (strncmp(j->s + j->pos, "false", 5) == 0 && j->len - j->pos >= 5) {
		j->pos += 5;
	} else if (strncmp(j->s + j->pos, "null", 4) == 0 && j->len - j->pos >= 4) {
		j->pos += 4;
	} else {
		size_t start = j->pos;
		if (j->s[j->pos] == '-')
			j->pos++;
		while (j->pos < j->len && strchr("0123456789.eE+-", j->s[j->pos]))
			j->pos++;
		ok = j->pos > start && (j->s[j->pos - 1] >= '0' && j->s[j->pos - 1] <= '9');
	}
	j->depth--;
	return ok;
}
static int json_valid(const char *s, size_t len)
{
	jp j = {s ? s : "", s ? len : 0, 0, 0};
	if (!jp_value(&j))
		return 0;
	jp_ws(&j);
	return j.pos == j.len;
}

/* A V4 file with the given MetadataBlock payloads already added: header + metadata. */
static void v4_start(nbuf *b, uint32_t ptrsize, const nbuf *md, size_t nmd)
{
	nb_v4_header(b, ptrsize, 1000, 1000000000);
	if (nmd)
		nb_v4_metadata_block(b, md, nmd);
}

/* Metadata payload: id, provider "P", event id, name, no fields. */
static nbuf meta_simple(uint32_t id, const char *name)
{
	nbuf m = {NULL, 0, 0};
	nb_meta5_head(&m, id, "P", id, name, 0, 0, 4);
	return m;
}

/* Writes one EventBlock holding events ev[0..n) (compressed headers). */
static void event_block(nbuf *b, const nb_ev *ev, size_t n)
{
	size_t at = nb_v4_block_begin(b, "EventBlock");
	nb_blk_header(b, 1, 0, 0);
	nb_hdrstate s;
	nb_hdr_reset(&s);
	for (size_t i = 0; i < n; i++)
		nb_cev(b, &s, &ev[i]);
	nb_v4_block_end(b, at);
}

static nb_ev mkev(uint32_t meta, uint32_t seq, uint64_t ctid, uint64_t tid, uint32_t stack,
		  uint64_t ts, int sorted)
{
	nb_ev e = {meta, seq, ctid, 0xFFFFFFFFu, tid, stack, ts, sorted, NULL, 0};
	return e;
}

/* ------------------------------------------------------------------ the real file */

static void test_reader_smallest_v4_file(void)
{
	size_t len;
	unsigned char *buf = tu_slurp(tu_data(CHECKPOINTS_TRACE), &len);
	if (!ok(buf && len == 582, "read the 582-byte checkpoints trace from data/")) {
		free(buf);
		return;
	}
	result res;
	read_mem(buf, len, 0, &res);
	is_int(res.rc, 0, "checkpoints: reads to the end");
	is_int(res.hdr.format_version, 4, "checkpoints: V4 container");
	is_int(res.hdr.pointer_size, 8, "checkpoints: pointer size 8");
	is_int(res.hdr.process_id, 9832, "checkpoints: pid 9832");
	is_int(res.hdr.processors, 8, "checkpoints: 8 processors");
	is_u64(res.hdr.qpc_frequency, 10000000, "checkpoints: QPC frequency 10 MHz");
	is_u64(res.hdr.sync_qpc, 11111925758331ull, "checkpoints: sync QPC");
	is_int(res.hdr.sync_time_utc[0], 2021, "checkpoints: sync year 2021");
	is_int(res.hdr.expected_sampling_ns, 1000000, "checkpoints: sampling rate 1 ms");
	is_int(res.n, 3, "checkpoints: 3 events");
	static const uint64_t ts[3] = {11111943296237ull, 11111943296409ull, 11111943296514ull};
	static const char *const names[3] = {"RuntimeInit", "RuntimeSuspend", "RuntimeResumed"};
	for (int i = 0; i < 3 && i < (int)res.n; i++) {
		const rec *e = &res.ev[i];
		is_int(e->seq, i + 1, "checkpoints: event %d has seq %d", i, i + 1);
		is_u64(e->timestamp, ts[i], "checkpoints: event %d timestamp", i);
		is_u64(e->thread_id, 25112, "checkpoints: event %d thread 25112", i);
		is_u64(e->capture_thread_id, 25112, "checkpoints: event %d capture thread 25112", i);
		is_u64(e->processor, 0xFFFFFFFFu, "checkpoints: event %d processor unknown", i);
		is_int(e->stack_id, 1, "checkpoints: event %d stack id 1", i);
		is_int(e->stack_depth, 0, "checkpoints: event %d empty stack", i);
		is_int(e->sorted, i == 0, "checkpoints: event %d sorted flag", i);
		ok(strstr(e->json, names[i]) != NULL, "checkpoints: event %d payload names %s", i,
		   names[i]);
	}
	is_u64(res.ev[0].offset, 0x180, "checkpoints: event 0 at byte 0x180");
	/* (11111943296237 - 11111925758331) ticks at 10 MHz */
	is_int(res.ev[0].time_ns, 1753790600, "checkpoints: event 0 time since session start");
	is_str(res.ev[0].json,
	       "{\"ClrInstanceID\":9,\"Name\":\"RuntimeInit\",\"Timestamp\":11111925598665}",
	       "checkpoints: event 0 payload as JSON (built-in layout)");
	is_int(res.stats.blocks_metadata, 1, "checkpoints: 1 MetadataBlock");
	is_int(res.stats.blocks_stack, 1, "checkpoints: 1 StackBlock");
	is_int(res.stats.blocks_event, 1, "checkpoints: 1 EventBlock");
	is_int(res.stats.blocks_sp, 1, "checkpoints: 1 SPBlock");
	is_int(res.stats.metadata_records, 1, "checkpoints: 1 metadata record");
	is_int(res.stats.events_sorted, 1, "checkpoints: 1 sorted event");
	is_int(res.stats.end_tag, 1, "checkpoints: end tag seen");
	is_int(res.stats.truncated, 0, "checkpoints: not truncated");
	is_u64(res.stats.lost_events, 0, "checkpoints: nothing lost");
	is_u64(res.stats.bytes, 582, "checkpoints: 582 bytes consumed");
	ok(res.json_ok, "checkpoints: payload JSON is valid");

	/* Field lookup by name on the built-in layout. */
	nt_reader *r;
	nt_error err;
	nt_error_clear(&err);
	const nt_event *e;
	if (nt_reader_open_mem(&r, buf, len, NULL, &err) == 0) {
		nt_value v;
		ok(nt_reader_next(r, &e, &err) == 1, "checkpoints: first event again");
		ok(nt_event_field(e, 8, "Timestamp", &v) == 1 && v.i == 11111925598665ll,
		   "checkpoints: nt_event_field Timestamp");
		ok(nt_event_field(e, 8, "ClrInstanceID", &v) == 1 && v.u == 9,
		   "checkpoints: nt_event_field ClrInstanceID");
		ok(nt_event_field(e, 8, "NoSuchField", &v) == 0, "checkpoints: unknown field is absent");
		is_str(e->meta->provider, NT_PROVIDER_RUNDOWN, "checkpoints: provider");
		is_int(e->meta->event_id, 300, "checkpoints: event id 300");
		nt_reader_free(r);
	}
	result fo;
	read_mem(buf, len, NT_READ_FILE_ORDER, &fo);
	ok(fo.rc == 0 && fo.n == 3 && fo.ev[2].timestamp == ts[2],
	   "checkpoints: file order gives the same 3 events");
	free(buf);
}

/* ------------------------------------------------------------------ compressed headers */

/* The metadata blob of the real file: flags C6, sequence delta 0xFFFFFFFF (the number
 * wraps to 0), capture thread 0, processor 0xFFFFFFFF; and the same delta on an event. */
static void test_reader_compressed_seq_wrap(void)
{
	nbuf b = {NULL, 0, 0};
	nb_v4_header(&b, 8, 0, 1000);
	size_t at = nb_v4_block_begin(&b, "MetadataBlock");
	nb_blk_header(&b, 1, 0, 0);
	nbuf md = meta_simple(7, "Wrap");
	nb_bytes(&b, "\xc6\xff\xff\xff\xff\x0f\x00\xff\xff\xff\xff\x0f\x98\xc4\x01\x05", 16);
	nb_var(&b, md.len);
	nb_bytes(&b, md.p, md.len);
	nb_free(&md);
	nb_v4_block_end(&b, at);
	at = nb_v4_block_begin(&b, "EventBlock");
	nb_blk_header(&b, 1, 0, 0);
	/* event 1: flags 0x47 = metadata id, seq/capture/proc, thread, sorted:
	 * seq delta 0xFFFFFFFF from 0 -> seq 0; capture thread 9, proc 3, thread 10 */
	nb_bytes(&b, "\x47\x07\xff\xff\xff\xff\x0f\x09\x03\x0a\x64", 11);
	/* event 2: flags 0: seq = 0 + 1 = 1, ts + 1 */
	nb_bytes(&b, "\x00\x01", 2);
	/* event 3: flags 0x02 with delta 0xFFFFFFFE -> seq 1 + 0xFFFFFFFE + 1 = 0 again */
	nb_bytes(&b, "\x02\xfe\xff\xff\xff\x0f\x09\x03\x01", 9);
	nb_v4_block_end(&b, at);
	nb_v4_end(&b);

	result res;
	read_mem(b.p, b.len, NT_READ_FILE_ORDER, &res);
	is_int(res.rc, 0, "seq wrap: reads");
	is_int(res.n, 3, "seq wrap: 3 events");
	is_int(res.stats.metadata_records, 1, "seq wrap: the C6 metadata blob is parsed");
	is_int(res.ev[0].meta_id, 7, "seq wrap: metadata id 7");
	is_u64(res.ev[0].seq, 0, "seq wrap: delta 0xFFFFFFFF from 0 wraps to 0");
	is_u64(res.ev[1].seq, 1, "seq wrap: next event without 0x02 is seq 1");
	is_u64(res.ev[2].seq, 0, "seq wrap: delta 0xFFFFFFFE from 1 wraps to 0");
	is_u64(res.ev[0].capture_thread_id, 9, "seq wrap: capture thread 9");
	is_u64(res.ev[0].processor, 3, "seq wrap: processor 3");
	is_u64(res.ev[1].processor, 3, "seq wrap: processor carried over");
	is_u64(res.ev[0].thread_id, 10, "seq wrap: thread 10");
	is_u64(res.ev[2].thread_id, 10, "seq wrap: thread carried over");
	is_u64(res.ev[0].timestamp, 100, "seq wrap: ts 100");
	is_u64(res.ev[2].timestamp, 102, "seq wrap: ts deltas add up");
	is_int(res.ev[0].sorted, 1, "seq wrap: sorted flag 0x40");
	is_int(res.ev[1].sorted, 0, "seq wrap: sorted flag is not carried over");
	is_u64(res.stats.lost_events, 0, "seq wrap: backwards numbers are not losses");
	nb_free(&b);
}

/* Every optional field of the compressed header, and fields carried from the previous
 * blob (including the payload size). */
static void test_reader_compressed_all_fields(void)
{
	nbuf md[2] = {meta_simple(1, "A"), meta_simple(2, "B")};
	nbuf b = {NULL, 0, 0};
	v4_start(&b, 8, md, 2);
	nb_free(&md[0]);
	nb_free(&md[1]);
	uint64_t ips[2] = {0x1111, 0x2222};
	const uint64_t *stk[1] = {ips};
	uint32_t depth[1] = {2};
	nb_v4_stack_block(&b, 1, 1, depth, stk, 8);
	size_t at = nb_v4_block_begin(&b, "EventBlock");
	nb_blk_header(&b, 1, 0, 0);
	/* flags 0xFF: everything present */
	nb_u8(&b, 0xFF);
	nb_var(&b, 2);          /* metadata id */
	nb_var(&b, 4);          /* seq delta: 0 + 4 + 1 = 5 */
	nb_var(&b, 77);         /* capture thread */
	nb_var(&b, 6);          /* processor */
	nb_var(&b, 88);         /* thread */
	nb_var(&b, 1);          /* stack id */
	nb_var(&b, 5000);       /* timestamp */
	for (int i = 0; i < 16; i++)
		nb_u8(&b, (uint8_t)(0xA0 + i)); /* activity id */
	for (int i = 0; i < 16; i++)
		nb_u8(&b, (uint8_t)(0xB0 + i)); /* related activity id */
	nb_var(&b, 3);          /* payload size */
	nb_bytes(&b, "xyz", 3);
	/* flags 0: everything carried over, seq + 1, payload size 3 again */
	nb_u8(&b, 0x00);
	nb_var(&b, 10);
	nb_bytes(&b, "abc", 3);
	/* flags 0x09: metadata id 1, stack id 0 */
	nb_u8(&b, 0x09);
	nb_var(&b, 1);
	nb_var(&b, 0);
	nb_var(&b, 10);
	nb_bytes(&b, "def", 3);
	nb_v4_block_end(&b, at);
	nb_v4_end(&b);

	result res;
	read_mem(b.p, b.len, NT_READ_FILE_ORDER, &res);
	is_int(res.rc, 0, "all fields: reads");
	is_int(res.n, 3, "all fields: 3 events");
	const rec *e = &res.ev[0];
	is_int(e->meta_id, 2, "all fields: metadata id");
	is_int(e->seq, 5, "all fields: sequence number");
	is_u64(e->capture_thread_id, 77, "all fields: capture thread");
	is_int(e->processor, 6, "all fields: processor");
	is_u64(e->thread_id, 88, "all fields: thread");
	is_int(e->stack_id, 1, "all fields: stack id");
	ok(e->stack_depth == 2 && e->stack[0] == 0x1111 && e->stack[1] == 0x2222,
	   "all fields: the stack, leaf first");
	is_u64(e->timestamp, 5000, "all fields: timestamp");
	ok(e->activity_id[0] == 0xA0 && e->activity_id[15] == 0xAF, "all fields: activity id");
	ok(e->related_activity_id[0] == 0xB0 && e->related_activity_id[15] == 0xBF,
	   "all fields: related activity id");
	is_int(e->sorted, 1, "all fields: sorted");
	is_str(e->json, "{\"_raw\":\"78797a\"}", "all fields: payload (no layout: raw hex)");
	e = &res.ev[1];
	ok(e->meta_id == 2 && e->seq == 6 && e->capture_thread_id == 77 && e->thread_id == 88 &&
		   e->stack_depth == 2 && e->activity_id[0] == 0xA0 && e->payload_len == 3,
	   "all fields: flags 0 carries every field over, seq + 1");
	is_u64(e->timestamp, 5010, "all fields: carried event ts = prev + delta");
	is_int(e->sorted, 0, "all fields: sorted is not carried");
	e = &res.ev[2];
	ok(e->meta_id == 1 && e->stack_id == 0 && e->stack_depth == 0 && e->seq == 7,
	   "all fields: new metadata id, stack id 0 = no stack");
	is_u64(res.stats.missing_stacks, 0, "all fields: stack id 0 is not a missing stack");
	nb_free(&b);
}

/* One event of test_reader_fast_path_fields(), as written. */
typedef struct fx {
	uint64_t off, tid, ctid, ts;
	uint32_t meta, seq, proc, stack, plen;
	uint8_t act[16], rel[16], pay[40];
	int sorted;
} fx;

static uint64_t fx_rand(uint64_t *st)
{
	*st = *st * 6364136223846793005ull + 1442695040888963407ull;
	return *st >> 11;
}

/* A value of 1 to 64 significant bits, so its varint takes 1 to 10 bytes. */
static uint64_t fx_wide(uint64_t *st)
{
	unsigned bits = 1 + (unsigned)(fx_rand(st) % 64);
	uint64_t v = fx_rand(st) ^ (fx_rand(st) << 53);
	return bits == 64 ? v : v & ((1ull << bits) - 1);
}

static int fx_same(const nt_event *e, const fx *x, const uint64_t *const *stk,
		   const uint32_t *depth)
{
	uint32_t d = x->stack >= 1 && x->stack <= 4 ? depth[x->stack - 1] : 0;
	return e->offset == x->off && e->meta && e->meta->id == x->meta && e->seq == x->seq &&
	       e->capture_thread_id == x->ctid && e->processor == x->proc &&
	       e->thread_id == x->tid && e->stack_id == x->stack && e->timestamp == x->ts &&
	       e->sorted == x->sorted && e->payload_len == x->plen &&
	       memcmp(e->payload, x->pay, x->plen) == 0 &&
	       memcmp(e->activity_id, x->act, 16) == 0 &&
	       memcmp(e->related_activity_id, x->rel, 16) == 0 && e->stack_depth == d &&
	       (d == 0 || memcmp(e->stack, stk[x->stack - 1], d * sizeof(uint64_t)) == 0) &&
	       (e->stack_key != 0) == (x->stack >= 1 && x->stack <= 4);
}

/* Long compressed blocks, so that most headers are far from the block's end and take the
 * reader's fast header path, with every flag, varints of every length (1 to 10 bytes:
 * the fast path takes up to 8 and hands longer ones to the checked path mid-block),
 * backwards timestamp deltas, capture-thread switches, an undefined stack id and payload
 * size changes: every field of every event, in both orders, must be the one written. */
static void test_reader_fast_path_fields(void)
{
	enum { N = 4000, NBLK = 2 };
	nbuf md[3] = {meta_simple(1, "A"), meta_simple(2, "B"), meta_simple(3, "C")};
	nbuf b = {NULL, 0, 0};
	v4_start(&b, 8, md, 3);
	for (int i = 0; i < 3; i++)
		nb_free(&md[i]);
	static const uint64_t s1[1] = {0x10}, s2[2] = {0x20, 0x21}, s3[3] = {0x30, 0x31, 0x32},
			      s4[4] = {0x40, 0x41, 0x42, 0x43};
	const uint64_t *stk[4] = {s1, s2, s3, s4};
	uint32_t depth[4] = {1, 2, 3, 4};
	nb_v4_stack_block(&b, 1, 4, depth, stk, 8);
	fx *x = calloc(NBLK * N, sizeof *x);
	if (!x) {
		ok(0, "fast path: out of memory");
		nb_free(&b);
		return;
	}
	uint64_t st = 42, missing = 0;
	static const uint64_t ctids[3] = {5, (uint64_t)1 << 40, UINT64_MAX - 3};
	size_t n = 0;
	for (int k = 0; k < NBLK; k++) {
		size_t at = nb_v4_block_begin(&b, "EventBlock");
		nb_blk_header(&b, 1, 0, 0);
		fx prev;
		memset(&prev, 0, sizeof prev); /* the header state restarts at each block */
		for (int i = 0; i < N; i++, n++) {
			fx *e = &x[n];
			*e = prev;
			uint64_t r = fx_rand(&st);
			uint8_t flags = 0;
			e->off = b.len;
			if (i == 0 || r % 7 == 0) {
				flags |= 0x01;
				e->meta = 1 + (uint32_t)(fx_rand(&st) % 3);
			}
			uint32_t seq_delta = 0;
			if (i == 0 || r % 5 == 0) {
				flags |= 0x02;
				seq_delta = (uint32_t)(fx_rand(&st) % 4 ? 0 : fx_wide(&st));
				e->seq = prev.seq + seq_delta + 1;
				e->ctid = ctids[fx_rand(&st) % 3];
				e->proc = (uint32_t)fx_wide(&st);
			} else {
				e->seq = prev.seq + 1;
			}
			if (r % 3 == 0) {
				flags |= 0x04;
				e->tid = fx_wide(&st);
			}
			if (r % 4 == 0) {
				flags |= 0x08;
				e->stack = (uint32_t)(fx_rand(&st) % 6); /* 5: never defined */
			}
			/* mostly forward; 1 in 50 backwards (a 10-byte varint) */
			uint64_t delta = fx_rand(&st) % 50 == 0 ? (uint64_t)0 - fx_wide(&st) % 1000000
								 : fx_wide(&st) >> 8;
			e->ts = prev.ts + delta;
			if (r % 11 == 0) {
				flags |= 0x10;
				for (int j = 0; j < 16; j++)
					e->act[j] = (uint8_t)fx_rand(&st);
			}
			if (r % 13 == 0) {
				flags |= 0x20;
				for (int j = 0; j < 16; j++)
					e->rel[j] = (uint8_t)fx_rand(&st);
			}
			e->sorted = (int)(fx_rand(&st) & 1);
			if (e->sorted)
				flags |= 0x40;
			if (i == 0 || r % 9 == 0) {
				flags |= 0x80;
				e->plen = (uint32_t)(fx_rand(&st) % 41);
			}
			for (uint32_t j = 0; j < e->plen; j++)
				e->pay[j] = (uint8_t)fx_rand(&st);
			nb_u8(&b, flags);
			if (flags & 0x01)
				nb_var(&b, e->meta);
			if (flags & 0x02) {
				nb_var(&b, seq_delta);
				nb_var(&b, e->ctid);
				nb_var(&b, e->proc);
			}
			if (flags & 0x04)
				nb_var(&b, e->tid);
			if (flags & 0x08)
				nb_var(&b, e->stack);
			nb_var(&b, delta);
			if (flags & 0x10)
				nb_bytes(&b, e->act, 16);
			if (flags & 0x20)
				nb_bytes(&b, e->rel, 16);
			if (flags & 0x80)
				nb_var(&b, e->plen);
			nb_bytes(&b, e->pay, e->plen);
			if (e->stack == 5)
				missing++;
			prev = *e;
			prev.sorted = 0;
		}
		nb_v4_block_end(&b, at);
	}
	nb_v4_end(&b);

	/* both copies of the per-event path (reader-event-bmi2.c): generic, then the one
	 * this CPU picks (the same one again where it has no fast pext) */
	for (int run = 0; run < 4; run++) {
		int order = run & 1;
		ntr_isa_generic = run < 2;
		const char *what = run == 0   ? "file order"
				   : run == 1 ? "timestamp order"
				   : run == 2 ? "file order, CPU's copy"
					      : "timestamp order, CPU's copy";
		nt_reader *r = NULL;
		nt_reader_opts o = {sizeof o, order ? 0u : NT_READ_FILE_ORDER, "test"};
		nt_error err;
		int opened = nt_reader_open_mem(&r, b.p, b.len, &o, &err);
		ntr_isa_generic = 0;
		if (opened < 0) {
			ok(0, "fast path, %s: opens (%s)", what, err.msg);
			continue;
		}
		if (run == 0)
			ok(r->isa == 0, "fast path: ntr_isa_generic gives the generic copy");
		char *seen = calloc(n, 1);
		const nt_event *e;
		int rc;
		size_t got = 0, bad = 0, first_bad = SIZE_MAX;
		while ((rc = nt_reader_next(r, &e, &err)) == 1) {
			/* file order: the i-th event is x[i]; timestamp order: found by offset */
			size_t lo = 0, hi = n;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (x[mid].off < e->offset)
					lo = mid + 1;
				else
					hi = mid;
			}
			size_t i = order ? lo : got;
			if (i >= n || seen[i] || !fx_same(e, &x[i], stk, depth)) {
				if (first_bad == SIZE_MAX)
					first_bad = got;
				bad++;
			} else {
				seen[i] = 1;
			}
			got++;
		}
		is_int(rc, 0, "fast path, %s: reads to the end", what);
		is_u64(got, n, "fast path, %s: %zu events", what, n);
		if (!ok(bad == 0, "fast path, %s: every field as written", what))
			printf("#   %zu events wrong, the first is #%zu\n", bad, first_bad);
		const nt_reader_stats *rs = nt_reader_stats_get(r);
		is_u64(rs->missing_stacks, missing, "fast path, %s: the undefined stack ids", what);
		ok(rs->negative_ts_deltas > 0, "fast path, %s: backwards deltas counted", what);
		free(seen);
		nt_reader_free(r);
	}
	free(x);
	nb_free(&b);
}

/* When a block switches to a capture thread whose events are older, the timestamp delta
 * is "negative": a 10-byte varuint that wraps modulo 2^64. */
static void test_reader_negative_timestamp_delta(void)
{
	nbuf md[1] = {meta_simple(1, "E")};
	nbuf b = {NULL, 0, 0};
	v4_start(&b, 8, md, 1);
	nb_free(&md[0]);
	nb_ev ev[3] = {mkev(1, 1, 100, 100, 0, 1000, 1), mkev(1, 2, 100, 100, 0, 2000, 0),
		       mkev(1, 1, 200, 200, 0, 1500, 1)};
	size_t before = b.len;
	event_block(&b, ev, 3);
	/* the third blob's timestamp delta is 1500 - 2000 as a 10-byte varuint */
	static const uint8_t neg500[10] = {0x8c, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	int found = 0;
	for (size_t i = before; i + 10 <= b.len; i++)
		if (memcmp(b.p + i, neg500, 10) == 0)
			found = 1;
	ok(found, "negative delta: the block holds the 10-byte varuint of -500");
	nb_v4_end(&b);

	result fo, ts;
	read_mem(b.p, b.len, NT_READ_FILE_ORDER, &fo);
	read_mem(b.p, b.len, 0, &ts);
	ok(fo.rc == 0 && fo.n == 3, "negative delta: file order reads 3 events");
	ok(fo.ev[0].timestamp == 1000 && fo.ev[1].timestamp == 2000 && fo.ev[2].timestamp == 1500,
	   "negative delta: file order timestamps 1000 2000 1500");
	is_u64(fo.stats.negative_ts_deltas, 1, "negative delta: counted once");
	ok(ts.rc == 0 && ts.n == 3, "negative delta: timestamp order reads 3 events");
	ok(ts.ev[0].timestamp == 1000 && ts.ev[1].timestamp == 1500 && ts.ev[2].timestamp == 2000,
	   "negative delta: timestamp order 1000 1500 2000");
	ok(ts.ev[1].capture_thread_id == 200, "negative delta: 1500 is capture thread 200's");
	nb_free(&b);
}

/* ------------------------------------------------------------------ uncompressed headers */

/* Flags bit 0 clear: 80-byte headers; bit 31 of the metadata id means NOT sorted; the
 * EventSize includes the padding to a 4-byte file offset (spec §3.3). */
static void test_reader_uncompressed_headers(void)
{
	nbuf b = {NULL, 0, 0};
	nb_v4_header(&b, 8, 0, 1000);
	/* uncompressed MetadataBlock */
	size_t at = nb_v4_block_begin(&b, "MetadataBlock");
	nb_blk_header(&b, 0, 0, 0);
	nbuf md = meta_simple(3, "Unc");
	nb_ev me = {0, 0, 0, 0, 0, 0, 0, 1, md.p, (uint32_t)md.len};
	nb_uev(&b, &me);
	nb_v4_block_end(&b, at);
	nb_free(&md);
	at = nb_v4_block_begin(&b, "EventBlock");
	nb_blk_header(&b, 0, 0, 0);
	nb_ev e1 = {3, 1, 50, 2, 51, 0, 700, 1, "abc", 3};   /* sorted, 3-byte payload + 1 pad */
	nb_ev e2 = {3, 2, 50, 2, 51, 0, 800, 0, "hello", 5}; /* not sorted: bit 31 set */
	nb_ev e3 = {3, 3, 50, 2, 51, 0, 900, 0, "", 0};
	size_t ev1 = b.len;
	nb_uev(&b, &e1);
	size_t ev2 = b.len;
	nb_uev(&b, &e2);
	nb_uev(&b, &e3);
	nb_v4_block_end(&b, at);
	nb_v4_end(&b);
	ok(nb_get32(b.p + ev1) == 76 + 3 + 1 && ev2 - ev1 == 84,
	   "uncompressed: EventSize 80 covers the rest of the header, payload and 1 pad byte");
	ok((nb_get32(b.p + ev2 + 4) & 0x80000000u) != 0, "uncompressed: bit 31 set on event 2");

	result res;
	read_mem(b.p, b.len, NT_READ_FILE_ORDER, &res);
	is_int(res.rc, 0, "uncompressed: reads");
	is_int(res.stats.metadata_records, 1, "uncompressed: metadata blob parsed");
	is_int(res.n, 3, "uncompressed: 3 events");
	ok(res.ev[0].meta_id == 3 && res.ev[1].meta_id == 3, "uncompressed: bit 31 masked off the id");
	is_int(res.ev[0].sorted, 1, "uncompressed: bit 31 clear = sorted");
	is_int(res.ev[1].sorted, 0, "uncompressed: bit 31 set = not sorted");
	ok(res.ev[1].payload_len == 5 && strcmp(res.ev[1].json, "{\"_raw\":\"68656c6c6f\"}") == 0,
	   "uncompressed: payload after the padded previous event");
	ok(res.ev[2].seq == 3 && res.ev[2].timestamp == 900 && res.ev[2].thread_id == 51 &&
		   res.ev[2].capture_thread_id == 50 && res.ev[2].processor == 2,
	   "uncompressed: all header fields");
	/* An event whose payload size exceeds its EventSize is rejected. */
	nb_set32(&b, ev1 + 76, 200); /* PayloadSize, the header's last field */
	read_mem(b.p, b.len, NT_READ_FILE_ORDER, &res);
	is_int(res.rc, NT_EFORMAT, "uncompressed: payload size beyond EventSize is malformed");
	is_u64(res.err.offset, ev1, "uncompressed: the error names the event's offset");
	nb_free(&b);
}

/* ------------------------------------------------------------------ V5 metadata */

static void test_reader_v5_metadata_tags(void)
{
	nbuf m1 = {NULL, 0, 0}, m2 = {NULL, 0, 0};
	/* V1 fields: u32 A, Object O {u16 X, string S}, then an OpCode tag and an unknown tag */
	nb_meta5_head(&m1, 1, "MyProvider", 5, "TestEvent1", 0xF0, 1, 4);
	nb_u32(&m1, 2);
	nb_u32(&m1, 10);
	nb_utf16z(&m1, "A");
	nb_u32(&m1, 1);
	nb_u32(&m1, 2);
	nb_u32(&m1, 8);
	nb_utf16z(&m1, "X");
	nb_u32(&m1, 18);
	nb_utf16z(&m1, "S");
	nb_utf16z(&m1, "O");
	nb_u32(&m1, 1); /* OpCode tag: 1 byte */
	nb_u8(&m1, 1);
	nb_u8(&m1, 24);
	nb_u32(&m1, 3); /* unknown tag 99: skipped */
	nb_u8(&m1, 99);
	nb_bytes(&m1, "???", 3);
	/* FieldCount 0 then V2Params: u32[] Arr (array of u32), u8 Last */
	nb_meta5_head(&m2, 2, "MyProvider", 6, "TestEvent2", 0, 0, 5);
	nb_u32(&m2, 0);
	nbuf v2 = {NULL, 0, 0};
	nb_u32(&v2, 2);
	size_t f0 = v2.len;
	nb_u32(&v2, 0);
	nb_utf16z(&v2, "Arr");
	nb_u32(&v2, 19);
	nb_u32(&v2, 10);
	nb_set32(&v2, f0, (uint32_t)(v2.len - f0));
	size_t f1 = v2.len;
	nb_u32(&v2, 0);
	nb_utf16z(&v2, "Last");
	nb_u32(&v2, 6);
	nb_u16(&v2, 0); /* padding inside the field's size */
	nb_set32(&v2, f1, (uint32_t)(v2.len - f1));
	nb_u32(&m2, (uint32_t)v2.len);
	nb_u8(&m2, 2);
	nb_bytes(&m2, v2.p, v2.len);
	nb_free(&v2);

	nbuf md[2] = {m1, m2};
	nbuf b = {NULL, 0, 0};
	v4_start(&b, 8, md, 2);
	nbuf p1 = {NULL, 0, 0}, p2 = {NULL, 0, 0};
	nb_u32(&p1, 42);
	nb_u16(&p1, 7);
	nb_utf16z(&p1, "hi\"");
	nb_u16(&p2, 3);
	nb_u32(&p2, 1);
	nb_u32(&p2, 2);
	nb_u32(&p2, 0xFFFFFFFFu);
	nb_u8(&p2, 9);
	nb_ev ev[2] = {mkev(1, 1, 1, 1, 0, 10, 1), mkev(2, 2, 1, 1, 0, 11, 0)};
	ev[0].payload = p1.p;
	ev[0].plen = (uint32_t)p1.len;
	ev[1].payload = p2.p;
	ev[1].plen = (uint32_t)p2.len;
	event_block(&b, ev, 2);
	nb_v4_end(&b);

	result res;
	read_mem(b.p, b.len, NT_READ_FILE_ORDER, &res);
	is_int(res.rc, 0, "V5 metadata: reads");
	is_int(res.n, 2, "V5 metadata: 2 events");
	is_str(res.ev[0].json, "{\"A\":42,\"O\":{\"X\":7,\"S\":\"hi\\\"\"}}",
	       "V5 metadata: V1 fields with a nested object");
	is_str(res.ev[1].json, "{\"Arr\":[1,2,4294967295],\"Last\":9}",
	       "V5 metadata: V2Params array field");
	ok(res.json_ok, "V5 metadata: valid JSON");

	nt_reader *r;
	nt_error err;
	nt_error_clear(&err);
	const nt_event *e;
	if (nt_reader_open_mem(&r, b.p, b.len, NULL, &err) == 0) {
		ok(nt_reader_next(r, &e, &err) == 1, "V5 metadata: first event");
		const nt_metadata *m = e->meta;
		is_str(m->provider, "MyProvider", "V5 metadata: provider");
		is_str(m->name, "TestEvent1", "V5 metadata: name");
		is_int(m->opcode, 24, "V5 metadata: OpCode tag");
		is_int(m->version, 1, "V5 metadata: version");
		is_int(m->level, 4, "V5 metadata: level");
		is_u64(m->keywords, 0xF0, "V5 metadata: keywords");
		ok(m->nfields == 2 && m->fields[1].type == NT_TYPE_OBJECT && m->fields[1].nfields == 2,
		   "V5 metadata: nested object description");
		is_int(m->file_has_name, 1, "V5 metadata: the file named the event");
		is_int(m->builtin_layout, 0, "V5 metadata: fields from the file");
		nt_value v;
		ok(nt_event_field(e, 8, "O", &v) == 1 && v.raw_len == 2 + 8,
		   "V5 metadata: nt_event_field on an object gives its bytes");
		ok(nt_reader_next(r, &e, &err) == 1, "V5 metadata: second event");
		m = e->meta;
		ok(m->nfields == 2 && m->fields[0].type == NT_TYPE_ARRAY &&
			   m->fields[0].elem_type == NT_TYPE_U32,
		   "V5 metadata: V2Params replaces the empty V1 list");
		ok(nt_event_field(e, 8, "Last", &v) == 1 && v.u == 9,
		   "V5 metadata: field after an array");
		nt_reader_free(r);
	}
	nb_free(&p1);
	nb_free(&p2);
	nb_free(&m1);
	nb_free(&m2);
	nb_free(&b);
}

/* ------------------------------------------------------------------ ordering and losses */

/* Two capture threads, events interleaved by time and written per thread (as the runtime
 * does): timestamp order merges them; the sorted flag bounds what may be delivered. */
static void test_reader_timestamp_order_two_threads(void)
{
	nbuf md[1] = {meta_simple(1, "E")};
	nbuf b = {NULL, 0, 0};
	v4_start(&b, 8, md, 1);
	nb_free(&md[0]);
	/* block 1: thread A 10,30,50 (sorted at 10), thread B 20,40 (sorted at 20) */
	nb_ev b1[5] = {mkev(1, 1, 0xA, 1, 0, 10, 1), mkev(1, 2, 0xA, 1, 0, 30, 0),
		       mkev(1, 3, 0xA, 1, 0, 50, 0), mkev(1, 1, 0xB, 2, 0, 20, 1),
		       mkev(1, 2, 0xB, 2, 0, 40, 0)};
	event_block(&b, b1, 5);
	/* block 2: thread A 60 (sorted), thread B 45 (sorted: older than A's 60!) is not
	 * allowed by the runtime; instead B 70 sorted, A 65 */
	nb_ev b2[3] = {mkev(1, 4, 0xA, 1, 0, 60, 1), mkev(1, 3, 0xB, 2, 0, 70, 1),
		       mkev(1, 5, 0xA, 1, 0, 80, 1)};
	event_block(&b, b2, 3);
	uint64_t tids[2] = {0xA, 0xB};
	uint32_t seqs[2] = {5, 3};
	nb_v4_sp_block(&b, 100, 2, tids, seqs);
	nb_ev b3[2] = {mkev(1, 1, 0xC, 3, 0, 110, 1), mkev(1, 6, 0xA, 1, 0, 105, 1)};
	event_block(&b, b3, 2);
	nb_v4_end(&b);

	result ts, fo;
	read_mem(b.p, b.len, 0, &ts);
	read_mem(b.p, b.len, NT_READ_FILE_ORDER, &fo);
	is_int(ts.rc, 0, "two threads: timestamp order reads");
	is_int(ts.n, 10, "two threads: 10 events");
	static const uint64_t want[10] = {10, 20, 30, 40, 50, 60, 70, 80, 105, 110};
	int sorted = 1;
	for (size_t i = 0; i < 10; i++)
		if (ts.ev[i].timestamp != want[i])
			sorted = 0;
	ok(sorted, "two threads: delivered in timestamp order across threads and blocks");
	static const uint64_t want_fo[10] = {10, 30, 50, 20, 40, 60, 70, 80, 110, 105};
	int same = fo.n == 10;
	for (size_t i = 0; same && i < 10; i++)
		if (fo.ev[i].timestamp != want_fo[i])
			same = 0;
	ok(same, "two threads: file order keeps the file's order");
	is_u64(ts.stats.lost_events, 0, "two threads: nothing lost");
	is_int(ts.stats.events_sorted, 7, "two threads: 7 sorted events");
	nb_free(&b);
}

/* Timestamp order against a model: capture threads buffer events stamped by a shared
 * clock (ties included) and flush them as the runtime does, the thread holding the oldest
 * buffered event first, a run that starts with a sorted event, in blocks cut anywhere and
 * regions ended by sequence points. Every event after a sorted one is then no older than
 * it, so the delivery must be each region's events stably sorted by timestamp. Long runs
 * of one thread between others' short ones (the sampler's case) come out of the merge's
 * shortcut (ntr_pop_run()); the others' heads and the bound end them. */
static uint64_t order_rng;
static uint32_t order_rnd(uint32_t n)
{
	order_rng = order_rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((order_rng >> 33) % n);
}

typedef struct oev {
	uint64_t ts, ctid;
	uint32_t seq;
	size_t pos;      /* file position */
	size_t region;
} oev;

static int oev_cmp(const void *a, const void *b)
{
	const oev *x = a, *y = b;
	if (x->region != y->region)
		return x->region < y->region ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void test_reader_timestamp_order_model(void)
{
	enum { NT = 5, NEV = 3000, BUF = 400 };
	int bad_runs = 0;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		order_rng = seed * 0x9e3779b97f4a7c15ull;
		nbuf md[1] = {meta_simple(1, "E")};
		nbuf b = {NULL, 0, 0};
		v4_start(&b, 8, md, 1);
		nb_free(&md[0]);
		oev *file = calloc(NEV, sizeof *file);
		nb_ev *blk = calloc(NEV, sizeof *blk);
		uint64_t buf_ts[NT][BUF];
		size_t nbuffered[NT] = {0};
		uint32_t seq[NT] = {0};
		uint64_t tids[NT], clock = 1000;
		for (int t = 0; t < NT; t++)
			tids[t] = 0x100 + (uint64_t)t;
		/* thread 0 is the sampler: most events are its */
		size_t nfile = 0, nblk = 0, region = 0, made = 0;
		while (made < NEV || nbuffered[0] + nbuffered[1] + nbuffered[2] + nbuffered[3] + nbuffered[4]) {
			if (made < NEV) {
				int t = order_rnd(10) < 7 ? 0 : 1 + (int)order_rnd(NT - 1);
				clock += order_rnd(3); /* 0: a tie */
				if (nbuffered[t] < BUF) {
					buf_ts[t][nbuffered[t]++] = clock;
					made++;
				}
			}
			int flush = made >= NEV || order_rnd(40) == 0;
			while (flush) {
				/* the thread with the oldest buffered event writes a run */
				int best = -1;
				for (int t = 0; t < NT; t++)
					if (nbuffered[t] && (best < 0 || buf_ts[t][0] < buf_ts[best][0]))
						best = t;
				if (best < 0)
					break;
				size_t k = 1 + order_rnd((uint32_t)nbuffered[best]);
				for (size_t i = 0; i < k; i++) {
					oev *e = &file[nfile];
					e->ts = buf_ts[best][i];
					e->ctid = tids[best];
					e->seq = ++seq[best];
					e->pos = nfile;
					e->region = region;
					blk[nblk++] = mkev(1, e->seq, e->ctid, 0x500 + (uint64_t)best, 0,
							   e->ts, i == 0);
					nfile++;
					/* blocks cut anywhere, runs across them */
					if (order_rnd(25) == 0) {
						event_block(&b, blk, nblk);
						nblk = 0;
					}
				}
				memmove(buf_ts[best], buf_ts[best] + k, (nbuffered[best] - k) * sizeof(uint64_t));
				nbuffered[best] -= k;
				flush = order_rnd(3) != 0;
			}
			int empty = !(nbuffered[0] + nbuffered[1] + nbuffered[2] + nbuffered[3] + nbuffered[4]);
			if (empty && nfile && order_rnd(8) == 0) {
				if (nblk)
					event_block(&b, blk, nblk);
				nblk = 0;
				nb_v4_sp_block(&b, clock, NT, tids, seq);
				region++;
			}
		}
		if (nblk)
			event_block(&b, blk, nblk);
		nb_v4_end(&b);

		qsort(file, nfile, sizeof *file, oev_cmp);
		nt_reader *r = NULL;
		nt_reader_opts o = {sizeof o, 0, "model"};
		nt_error err;
		size_t got = 0, wrong = 0;
		int rc = nt_reader_open_mem(&r, b.p, b.len, &o, &err);
		const nt_event *ev;
		while (rc >= 0 && (rc = nt_reader_next(r, &ev, &err)) == 1) {
			if (got < nfile && (ev->capture_thread_id != file[got].ctid ||
					    ev->seq != file[got].seq || ev->timestamp != file[got].ts))
				wrong++;
			got++;
		}
		bad_runs += rc != 0 || got != nfile || wrong != 0;
		if (rc != 0 || got != nfile || wrong != 0)
			printf("#   seed %" PRIu64 ": rc %d (%s), %zu of %zu events, %zu out of place\n", seed,
			     rc, rc ? err.msg : "", got, nfile, wrong);
		nt_reader_free(r);
		nb_free(&b);
		free(file);
		free(blk);
	}
	is_int(bad_runs, 0, "timestamp order: 6 modelled files (5 threads, ties, runs across "
			    "blocks and regions) come out as their regions stably sorted by time");
}

/* Sequence gaps inside a capture thread and at sequence points count as lost events. */
static void test_reader_lost_events(void)
{
	nbuf md[1] = {meta_simple(1, "E")};
	nbuf b = {NULL, 0, 0};
	v4_start(&b, 8, md, 1);
	nb_free(&md[0]);
	/* thread 5: seq 1, 2, 5 (3 and 4 lost); thread 6: seq 1 */
	nb_ev ev[4] = {mkev(1, 1, 5, 5, 0, 10, 1), mkev(1, 2, 5, 5, 0, 11, 0),
		       mkev(1, 5, 5, 5, 0, 12, 0), mkev(1, 1, 6, 6, 0, 13, 1)};
	event_block(&b, ev, 4);
	/* SP: thread 5 last wrote 9 (6..9 lost), thread 6 still 1, thread 7 unseen at 4 */
	uint64_t tids[3] = {5, 6, 7};
	uint32_t seqs[3] = {9, 1, 4};
	nb_v4_sp_block(&b, 100, 3, tids, seqs);
	/* after the SP thread 5 continues at 10: no gap */
	nb_ev ev2[1] = {mkev(1, 10, 5, 5, 0, 110, 1)};
	event_block(&b, ev2, 1);
	nb_v4_end(&b);

	result res;
	read_mem(b.p, b.len, 0, &res);
	is_int(res.rc, 0, "lost events: reads");
	is_int(res.n, 5, "lost events: 5 events");
	is_u64(res.stats.lost_events, 6, "lost events: 2 from the gap + 4 from the SP");
	is_int(lost_of(&res, 5), 6, "lost events: all on capture thread 5");
	is_int(lost_of(&res, 6), 0, "lost events: none on capture thread 6");
	is_int(lost_of(&res, 7), 0, "lost events: a thread first seen in an SP lost nothing");
	nb_free(&b);
}

/* ------------------------------------------------------------------ stacks */

/* Stack ids restart at 1 after every sequence point (spec §5): the same id means another
 * stack in the next region, and ids of the previous region are gone. */
static void test_reader_stack_ids_reset_after_sp(void)
{
	nbuf md[1] = {meta_simple(1, "E")};
	nbuf b = {NULL, 0, 0};
	v4_start(&b, 8, md, 1);
	nb_free(&md[0]);
	uint64_t s1[1] = {0xAAAA}, s2[2] = {0xBBBB, 0xCCCC};
	const uint64_t *r1[2] = {s1, s2};
	uint32_t d1[2] = {1, 2};
	nb_v4_stack_block(&b, 1, 2, d1, r1, 8);
	nb_ev ev1[2] = {mkev(1, 1, 1, 1, 1, 10, 1), mkev(1, 2, 1, 1, 2, 11, 0)};
	event_block(&b, ev1, 2);
	uint64_t tid = 1;
	uint32_t seq = 2;
	nb_v4_sp_block(&b, 50, 1, &tid, &seq);
	uint64_t s3[3] = {0xD, 0xE, 0xF};
	const uint64_t *r2[1] = {s3};
	uint32_t d2[1] = {3};
	nb_v4_stack_block(&b, 1, 1, d2, r2, 8);
	/* id 1 is the new stack; id 2 belonged to the previous region */
	nb_ev ev2[2] = {mkev(1, 3, 1, 1, 1, 60, 1), mkev(1, 4, 1, 1, 2, 61, 0)};
	event_block(&b, ev2, 2);
	nb_v4_end(&b);

	for (int mode = 0; mode < 2; mode++) {
		const char *m = mode ? "file order" : "timestamp order";
		result res;
		read_mem(b.p, b.len, mode ? NT_READ_FILE_ORDER : 0, &res);
		ok(res.rc == 0 && res.n == 4, "stacks/SP (%s): 4 events", m);
		ok(res.ev[0].stack_depth == 1 && res.ev[0].stack[0] == 0xAAAA,
		   "stacks/SP (%s): region 1 id 1", m);
		ok(res.ev[1].stack_depth == 2 && res.ev[1].stack[1] == 0xCCCC,
		   "stacks/SP (%s): region 1 id 2", m);
		ok(res.ev[2].stack_depth == 3 && res.ev[2].stack[0] == 0xD && res.ev[2].stack[2] == 0xF,
		   "stacks/SP (%s): region 2 id 1 is the new stack", m);
		ok(res.ev[3].stack_id == 2 && res.ev[3].stack_depth == 0,
		   "stacks/SP (%s): region 2 id 2 is undefined (reset at the SP)", m);
		is_u64(res.stats.missing_stacks, 1, "stacks/SP (%s): one missing stack", m);
		is_u64(res.stats.stacks, 3, "stacks/SP (%s): 3 stacks defined", m);
		is_int(res.stats.max_stack_depth, 3, "stacks/SP (%s): max depth 3", m);
	}
	nb_free(&b);
}

/* 32-bit traces carry 4-byte IPs; they are widened to 64 bits. */
static void test_reader_4byte_pointer_stacks(void)
{
	nbuf md[1] = {meta_simple(1, "E")};
	nbuf b = {NULL, 0, 0};
	v4_start(&b, 4, md, 1);
	nb_free(&md[0]);
	uint64_t s1[3] = {0x80001000u, 0x80002000u, 0xFFFFFFFFu};
	const uint64_t *r1[1] = {s1};
	uint32_t d1[1] = {3};
	size_t sb = b.len;
	nb_v4_stack_block(&b, 1, 1, d1, r1, 4);
	nb_ev ev[1] = {mkev(1, 1, 1, 1, 1, 10, 1)};
	event_block(&b, ev, 1);
	nb_v4_end(&b);
	result res;
	read_mem(b.p, b.len, 0, &res);
	is_int(res.rc, 0, "4-byte pointers: reads");
	is_int(res.hdr.pointer_size, 4, "4-byte pointers: header pointer size 4");
	ok(res.n == 1 && res.ev[0].stack_depth == 3 && res.ev[0].stack[0] == 0x80001000u &&
		   res.ev[0].stack[2] == 0xFFFFFFFFu,
	   "4-byte pointers: 3 frames, zero-extended");
	/* a stack size that is not a multiple of 4 is malformed: patch 12 -> 10 */
	size_t at = sb;
	while (nb_get32(b.p + at) != 12)
		at++;
	nb_set32(&b, at, 10);
	read_mem(b.p, b.len, 0, &res);
	is_int(res.rc, NT_EFORMAT, "4-byte pointers: a 10-byte stack is malformed");
	is_str(res.err.msg, "stack size 10 is not a multiple of the pointer size 4",
	       "4-byte pointers: the message");
	is_u64(res.err.offset, at, "4-byte pointers: the error names the stack's offset");
	nb_free(&b);
}

/* ------------------------------------------------------------------ V6 */

/* A V6 stream with a Trace block (key/values), Thread, Metadata (optional entries), Stack,
 * LabelList, Event and SequencePoint blocks, an unknown block kind, and EndOfStream. */
static void build_v6(nbuf *b, size_t *trace_end)
{
	static const char *const keys[] = {"ProcessId", "HardwareThreadCount",
					   "ExpectedCPUSamplingRate", "Other"};
	static const char *const vals[] = {"4242", "16", "500000", "x"};
	nb_v6_header(b);
	nb_v6_trace_block(b, 8, 1000, 1000000000, 4, keys, vals);
	*trace_end = b->len;
	/* Thread block: index 1 -> OS tid 100, index 2 -> 200 (with a name and a key/value) */
	size_t at = nb_v6_block_begin(b, 6);
	for (uint64_t i = 1; i <= 2; i++) {
		nbuf row = {NULL, 0, 0};
		nb_var(&row, i);
		nb_u8(&row, 1);
		nb_str6(&row, "worker");
		nb_u8(&row, 2);
		nb_var(&row, 4242);
		nb_u8(&row, 3);
		nb_var(&row, i * 100);
		nb_u8(&row, 4);
		nb_str6(&row, "k");
		nb_str6(&row, "v");
		nb_u16(b, (uint16_t)row.len);
		nb_bytes(b, row.p, row.len);
		nb_free(&row);
	}
	nb_v6_block_end(b, at);
	/* Metadata block: id 1 Prov/Ev: u32 A, string S, fixed array of 2 u16 Arr, varint V,
	 * varuint U, with optional opcode 5, level 4, version 1, keywords 0x10 */
	at = nb_v6_block_begin(b, 3);
	nb_u16(b, 0);
	nbuf row = {NULL, 0, 0};
	nb_var(&row, 1);
	nb_str6(&row, "Prov");
	nb_var(&row, 7);
	nb_str6(&row, "Ev");
	nb_u16(&row, 5);
	static const struct {
		const char *name;
		uint8_t type, elem;
	} fl[5] = {{"A", 10, 0}, {"S", 18, 0}, {"Arr", 22, 8}, {"V", 20, 0}, {"U", 21, 0}};
	for (int i = 0; i < 5; i++) {
		nbuf f = {NULL, 0, 0};
		nb_str6(&f, fl[i].name);
		nb_u8(&f, fl[i].type);
		if (fl[i].type == 22) {
			nb_u8(&f, fl[i].elem);
			nb_u16(&f, 2);
		}
		nb_u16(&row, (uint16_t)f.len);
		nb_bytes(&row, f.p, f.len);
		nb_free(&f);
	}
	nb_u16(&row, 2 + 2 + 2 + 9);
	nb_bytes(&row, "\x01\x05\x08\x04\x09\x01\x03", 7);
	nb_u64(&row, 0x10);
	nb_u16(b, (uint16_t)row.len);
	nb_bytes(b, row.p, row.len);
	nb_free(&row);
	nb_v6_block_end(b, at);
	/* Stack block: id 1 = {0x1000, 0x2000} */
	at = nb_v6_block_begin(b, 5);
	nb_u32(b, 1);
	nb_u32(b, 1);
	nb_u32(b, 16);
	nb_u64(b, 0x1000);
	nb_u64(b, 0x2000);
	nb_v6_block_end(b, at);
	/* LabelList block: list 1 = activity id 0x11.., then (last) opcode 3 */
	at = nb_v6_block_begin(b, 8);
	nb_u32(b, 1);
	nb_u32(b, 1);
	nb_u8(b, 1);
	for (int i = 0; i < 16; i++)
		nb_u8(b, 0x11);
	nb_u8(b, 0x80 | 7);
	nb_u8(b, 3);
	nb_v6_block_end(b, at);
	/* Event block: capture thread index 1, thread index 2, stack 1, label list 1 */
	at = nb_v6_block_begin(b, 2);
	nb_blk_header(b, 1, 2000, 2100);
	nbuf pl = {NULL, 0, 0};
	nb_u32(&pl, 77);
	nb_utf16z(&pl, "hi");
	nb_u16(&pl, 1);
	nb_u16(&pl, 2);
	nb_var(&pl, 5); /* zig-zag -3 */
	nb_var(&pl, 300); /* two bytes */
	nb_u8(b, 0x40 | 0x80 | 0x10 | 0x08 | 0x04 | 0x02 | 0x01);
	nb_var(b, 1);           /* metadata id */
	nb_var(b, 0);           /* seq delta -> 1 */
	nb_var(b, 1);           /* capture thread index */
	nb_var(b, 0);           /* processor */
	nb_var(b, 2);           /* thread index */
	nb_var(b, 1);           /* stack id */
	nb_var(b, 2000);        /* timestamp */
	nb_var(b, 1);           /* label list id */
	nb_var(b, pl.len);
	nb_bytes(b, pl.p, pl.len);
	nb_u8(b, 0x00); /* second event: all carried, seq 2 */
	nb_var(b, 100);
	nb_bytes(b, pl.p, pl.len);
	nb_free(&pl);
	nb_v6_block_end(b, at);
	/* SequencePoint: ts 3000, flags 0, thread index 1 at seq 4 (2 lost) */
	at = nb_v6_block_begin(b, 4);
	nb_u64(b, 3000);
	nb_u32(b, 0);
	nb_u32(b, 1);
	nb_var(b, 1);
	nb_var(b, 4);
	nb_v6_block_end(b, at);
	at = nb_v6_block_begin(b, 42); /* unknown kind: skipped */
	nb_u32(b, 0xdeadbeef);
	nb_v6_block_end(b, at);
	nb_u32(b, 0); /* EndOfStream */
}

static void test_reader_v6_stream(void)
{
	nbuf b = {NULL, 0, 0};
	size_t trace_end;
	build_v6(&b, &trace_end);
	ok(memcmp(b.p, "Nettrace\0\0\0\0\x06\0\0\0\0\0\0\0", 20) == 0,
	   "V6: header Nettrace, 0, 6, 0");
	for (int mode = 0; mode < 2; mode++) {
		const char *m = mode ? "file order" : "timestamp order";
		result res;
		read_mem(b.p, b.len, mode ? NT_READ_FILE_ORDER : 0, &res);
		is_int(res.rc, 0, "V6 (%s): reads", m);
		is_int(res.hdr.format_version, 6, "V6 (%s): format 6", m);
		ok(res.hdr.process_id == 4242 && res.hdr.processors == 16 &&
			   res.hdr.expected_sampling_ns == 500000,
		   "V6 (%s): pid, processors and sampling rate from the key/values", m);
		ok(res.hdr.qpc_frequency == 1000000000 && res.hdr.sync_qpc == 1000 &&
			   res.hdr.pointer_size == 8,
		   "V6 (%s): tick frequency, sync ticks, pointer size", m);
		is_int(res.n, 2, "V6 (%s): 2 events", m);
		const rec *e = &res.ev[0];
		ok(e->capture_thread_id == 100 && e->thread_id == 200,
		   "V6 (%s): thread indexes mapped to OS thread ids", m);
		ok(e->stack_depth == 2 && e->stack[0] == 0x1000 && e->stack[1] == 0x2000,
		   "V6 (%s): stack", m);
		ok(e->activity_id[0] == 0x11 && e->activity_id[15] == 0x11,
		   "V6 (%s): activity id from the label list", m);
		is_int(e->time_ns, 1000, "V6 (%s): time since sync at 1 GHz", m);
		is_str(e->json, "{\"A\":77,\"S\":\"hi\",\"Arr\":[1,2],\"V\":-3,\"U\":300}",
		       "V6 (%s): payload with string, fixed array and varints", m);
		ok(res.ev[1].seq == 2 && res.ev[1].timestamp == 2100, "V6 (%s): second event", m);
		is_u64(res.stats.lost_events, 2, "V6 (%s): 2 lost at the sequence point", m);
		is_int(res.stats.end_tag, 1, "V6 (%s): EndOfStream seen", m);
		is_int(res.stats.truncated, 0, "V6 (%s): not truncated", m);
	}
	nt_reader *r;
	nt_error err;
	nt_error_clear(&err);
	if (nt_reader_open_mem(&r, b.p, b.len, NULL, &err) == 0) {
		ok(nt_reader_metadata_count(r) == 0, "V6: no metadata before the first event is read");
		const nt_event *e;
		ok(nt_reader_next(r, &e, &err) == 1, "V6: first event");
		const nt_metadata *m = e->meta;
		ok(m && strcmp(m->provider, "Prov") == 0 && strcmp(m->name, "Ev") == 0 &&
			   m->event_id == 7,
		   "V6: metadata provider, name, event id");
		ok(m && m->opcode == 5 && m->level == 4 && m->version == 1 && m->keywords == 0x10,
		   "V6: optional metadata opcode, level, version, keywords");
		/* nt_event_field decodes with the JSON renderer's decoder (issue: it returned
		 * found with 0 for V6 varints that the JSON showed as -3 and 300). */
		nt_value v;
		ok(nt_event_field(e, 8, "V", &v) == 1 && v.i == -3 && v.type == NT_TYPE_VARINT &&
			   v.raw_len == 1,
		   "V6: nt_event_field VARINT V = -3");
		ok(nt_event_field(e, 8, "U", &v) == 1 && v.u == 300 && v.i == 300 && v.raw_len == 2,
		   "V6: nt_event_field VARUINT U = 300, after a fixed array and a varint");
		ok(nt_event_field(e, 8, "A", &v) == 1 && v.u == 77, "V6: nt_event_field U32 A = 77");
		ok(nt_event_field(e, 8, "S", &v) == 1 && v.type == NT_TYPE_STRING && v.raw_len == 6,
		   "V6: nt_event_field string S: its UTF-16 bytes with the terminator");
		ok(nt_event_field(e, 8, "Arr", &v) == 1 && v.raw_len == 4 && v.raw && v.raw[0] == 1,
		   "V6: nt_event_field fixed array Arr: its bytes");
		ok(nt_event_field(e, 8, "Nope", &v) == 0, "V6: nt_event_field absent field");
		nt_reader_free(r);
	}
	/* Label lists end at a sequence point, like stacks (spec §7.5). */
	{
		nbuf c = {NULL, 0, 0};
		static const char *const k[] = {"ProcessId"};
		static const char *const v[] = {"1"};
		nb_v6_header(&c);
		nb_v6_trace_block(&c, 8, 0, 1000, 1, k, v);
		size_t at = nb_v6_block_begin(&c, 3);
		nb_u16(&c, 0);
		nb_bytes(&c, "\x08\x00\x01\x01P\x01\x01" "E\x00\x00", 10); /* id 1, P/E, no fields */
		nb_v6_block_end(&c, at);
		at = nb_v6_block_begin(&c, 8);
		nb_u32(&c, 1);
		nb_u32(&c, 1);
		nb_u8(&c, 0x80 | 1);
		for (int i = 0; i < 16; i++)
			nb_u8(&c, 0x22);
		nb_v6_block_end(&c, at);
		for (int region = 0; region < 2; region++) {
			at = nb_v6_block_begin(&c, 2);
			nb_blk_header(&c, 1, 0, 0);
			/* flags 0x53: metadata id, seq/capture/proc, label list, sorted */
			nb_bytes(&c, "\x53\x01\x00\x01\x00", 5);
			nb_var(&c, 10 + (uint64_t)region * 100);
			nb_var(&c, 1);
			nb_v6_block_end(&c, at);
			at = nb_v6_block_begin(&c, 4);
			nb_u64(&c, 50 + (uint64_t)region * 100);
			nb_u32(&c, 0);
			nb_u32(&c, 0);
			nb_v6_block_end(&c, at);
		}
		nb_u32(&c, 0);
		result lr;
		read_mem(c.p, c.len, 0, &lr);
		ok(lr.rc == 0 && lr.n == 2 && lr.ev[0].activity_id[0] == 0x22 &&
			   lr.ev[1].activity_id[0] == 0 && lr.ev[1].activity_id[15] == 0,
		   "V6: label list 1 applies before the sequence point, not after it");
		nb_free(&c);
	}
	/* Thread rows give each event its (pid, tid); a sequence point with flag 1 clears the
	 * table (one-collect writes one at every flush, then the table again): an index used
	 * after it without a new row is no longer the old thread. */
	{
		nbuf c = {NULL, 0, 0};
		static const char *const k[] = {"ProcessId"};
		static const char *const v[] = {"7"};
		nb_v6_header(&c);
		nb_v6_trace_block(&c, 8, 0, 1000, 1, k, v);
		size_t at = nb_v6_block_begin(&c, 3);
		nb_u16(&c, 0);
		nb_bytes(&c, "\x08\x00\x01\x01P\x01\x01" "E\x00\x00", 10);
		nb_v6_block_end(&c, at);
		/* rows: index, kind 2 pid, kind 3 tid */
		static const uint8_t rows[3][3] = {{1, 10, 100}, {2, 20, 120}, {2, 30, 44}};
		for (int step = 0; step < 3; step++) {
			if (step != 1) {
				at = nb_v6_block_begin(&c, 6);
				for (int q = step ? 2 : 0; q < (step ? 3 : 2); q++) {
					nb_u16(&c, 5);
					nb_u8(&c, rows[q][0]);
					nb_u8(&c, 2);
					nb_u8(&c, rows[q][1]);
					nb_u8(&c, 3);
					nb_u8(&c, rows[q][2]);
				}
				nb_v6_block_end(&c, at);
			}
			at = nb_v6_block_begin(&c, 2);
			nb_blk_header(&c, 1, 0, 0);
			/* flags 0x47: metadata id, seq/capture/proc, thread, sorted; thread index 2 */
			nb_bytes(&c, "\x47\x01\x00\x01\x00\x02", 6);
			nb_var(&c, 10 + (uint64_t)step * 100);
			nb_v6_block_end(&c, at);
			at = nb_v6_block_begin(&c, 4);
			nb_u64(&c, 50 + (uint64_t)step * 100);
			nb_u32(&c, step == 0 ? 1 : 0); /* flag 1 after the first event only */
			nb_u32(&c, 0);
			nb_v6_block_end(&c, at);
		}
		nb_u32(&c, 0);
		result tr;
		read_mem(c.p, c.len, 0, &tr);
		ok(tr.rc == 0 && tr.n == 3, "V6 threads: 3 events");
		if (tr.rc || tr.n != 3)
			printf("# rc %d n %zu: %s at %llu\n", tr.rc, tr.n, tr.err.msg, (unsigned long long)tr.err.offset);
		ok(tr.ev[0].thread_id == 120 && tr.ev[0].process_id == 20,
		   "V6 threads: thread index 2 is (pid 20, tid 120) from its row");
		ok(tr.ev[1].thread_id == 2 && tr.ev[1].process_id == 7,
		   "V6 threads: after a flag-1 sequence point index 2 is no longer that thread");
		ok(tr.ev[2].thread_id == 44 && tr.ev[2].process_id == 30,
		   "V6 threads: a new row gives index 2 a new thread (pid 30, tid 44)");
		nb_free(&c);
	}
	/* Major version 7 is refused, with the offset of the version field. */
	b.p[12] = 7;
	result res;
	read_mem(b.p, b.len, 0, &res);
	ok(res.rc == NT_EUNSUPPORTED && res.err.offset == 12,
	   "V6: major version 7 is unsupported (at byte 12)");
	nb_free(&b);
}

/* ------------------------------------------------------------------ truncation */

/* Every prefix of the 582-byte file: the header and Trace object must be complete (else a
 * truncation error); afterwards reading never fails, reports the truncation where the
 * incomplete object starts, and delivers every event of the complete blocks. */
static void test_reader_truncation_every_byte(void)
{
	size_t len;
	unsigned char *buf = tu_slurp(tu_data(CHECKPOINTS_TRACE), &len);
	if (!buf || len != 582) {
		ok(0, "truncation: the checkpoints trace");
		free(buf);
		return;
	}
	/* object starts: MetadataBlock, StackBlock, EventBlock, SPBlock, end tag */
	static const size_t obj[] = {0x66, 0x120, 0x14d, 0x210, 0x245};
	int bad_open = 0, bad_read = 0, bad_count = 0, bad_warn = 0, bad_boundary = 0;
	for (size_t n = 0; n < len; n++) {
		/* a copy of exactly n bytes, so ASan sees any read past the end */
		unsigned char *cut = malloc(n ? n : 1);
		memcpy(cut, buf, n);
		for (int mode = 0; mode < 2; mode++) {
			result res;
			read_mem(cut, n, mode ? NT_READ_FILE_ORDER : 0, &res);
			if (n < 0x66) {
				if (res.open_rc != NT_ETRUNC)
					bad_open++;
				continue;
			}
			if (res.open_rc != 0 || res.rc != 0) {
				bad_read++;
				continue;
			}
			size_t want = n >= 0x210 ? 3 : 0;
			if (res.n != want)
				bad_count++;
			/* the incomplete object is the last one starting at or before n */
			size_t start = obj[0];
			for (size_t k = 0; k < sizeof obj / sizeof obj[0]; k++)
				if (obj[k] <= n)
					start = obj[k];
			if (!res.stats.truncated || res.stats.end_tag || res.warning[0] == '\0' ||
			    res.warning_offset != start || res.stats.truncated_at != start)
				bad_warn++;
			for (size_t k = 0; k < sizeof obj / sizeof obj[0]; k++)
				if (n == obj[k] &&
				    strstr(res.warning, "without the end-of-stream marker") == NULL)
					bad_boundary++;
		}
		free(cut);
	}
	is_int(bad_open, 0, "truncation: every cut inside the header/Trace object fails as truncated");
	is_int(bad_read, 0, "truncation: every later cut reads without error (both orders)");
	is_int(bad_count, 0, "truncation: all events of complete blocks, none of incomplete ones");
	is_int(bad_warn, 0, "truncation: reported at the start of the incomplete object");
	is_int(bad_boundary, 0, "truncation: a cut at an object boundary says the end marker is missing");

	/* the exact messages for two cuts */
	result res;
	read_mem(buf, 0x14d + 100, 0, &res);
	is_str(res.warning,
	       "stream truncated inside EventBlock (needs 169 bytes, 74 present); events before it "
	       "were read",
	       "truncation: the warning inside the EventBlock");
	read_mem(buf, 100, 0, &res);
	is_int(res.open_rc, NT_ETRUNC, "truncation: 100 bytes end inside the Trace object");
	is_str(res.err.msg, "file ends inside the Trace object (needed 49 bytes, have 47)",
	       "truncation: the Trace object message");
	is_u64(res.err.offset, 100, "truncation: at byte 100");
	read_mem(buf, 10, 0, &res);
	ok(res.open_rc == NT_ETRUNC && strcmp(res.err.msg, "file ends inside the stream header (10 bytes)") == 0,
	   "truncation: 10 bytes with the magic end inside the stream header");
	read_mem(buf, 5, 0, &res);
	ok(res.open_rc == NT_ETRUNC && strcmp(res.err.msg, "file ends inside the magic (5 bytes)") == 0,
	   "truncation: 5 bytes end inside the magic");
	free(buf);

	/* every prefix of the V6 stream */
	nbuf b = {NULL, 0, 0};
	size_t trace_end;
	build_v6(&b, &trace_end);
	int v6_bad = 0;
	for (size_t n = 0; n < b.len; n++) {
		unsigned char *cut = malloc(n ? n : 1);
		memcpy(cut, b.p, n);
		for (int mode = 0; mode < 2; mode++) {
			result r6;
			read_mem(cut, n, mode ? NT_READ_FILE_ORDER : 0, &r6);
			if (n < trace_end ? r6.open_rc >= 0 : (r6.rc != 0 || !r6.stats.truncated))
				v6_bad++;
		}
		free(cut);
	}
	is_int(v6_bad, 0, "truncation: every V6 prefix: an error before the Trace block ends, "
			  "else a truncated read");
	nb_free(&b);
}

/* ------------------------------------------------------------------ pipes */

/* Writes buf to fd in chunks of `chunk` bytes from a child process, then exits. */
static pid_t feed_pipe(int fd, const uint8_t *buf, size_t len, size_t chunk)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (size_t off = 0; off < len;) {
			size_t k = len - off < chunk ? len - off : chunk;
			ssize_t w = write(fd, buf + off, k);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	return pid;
}

/* Reads everything from a pipe fed by a child; returns the events and fills *res. */
static void read_pipe(const uint8_t *buf, size_t len, size_t chunk, unsigned flags, result *res)
{
	int fds[2];
	memset(res, 0, sizeof *res);
	if (pipe(fds) != 0) {
		res->rc = -100;
		return;
	}
	pid_t pid = feed_pipe(fds[1], buf, len, chunk);
	close(fds[1]);
	nt_reader *r = NULL;
	nt_reader_opts o = {sizeof o, flags, "pipe"};
	nt_error_clear(&res->err);
	res->open_rc = nt_reader_open_fd(&r, fds[0], &o, &res->err);
	if (res->open_rc == 0) {
		const nt_event *e;
		while ((res->rc = nt_reader_next(r, &e, &res->err)) == 1) {
			if (res->n < sizeof res->ev / sizeof res->ev[0])
				res->ev[res->n].timestamp = e->timestamp;
			res->n++;
		}
		res->stats = *nt_reader_stats_get(r);
		nt_reader_free(r);
	} else {
		res->rc = res->open_rc;
	}
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
}

static void test_reader_pipe(void)
{
	size_t len;
	unsigned char *buf = tu_slurp(tu_data(CHECKPOINTS_TRACE), &len);
	if (!buf) {
		ok(0, "pipe: the checkpoints trace");
		return;
	}
	signal(SIGPIPE, SIG_IGN);
	result res;
	read_pipe(buf, len, 7, 0, &res);
	ok(res.rc == 0 && res.n == 3 && res.stats.end_tag && !res.stats.truncated,
	   "pipe: 7-byte writes: 3 events, end tag");
	read_pipe(buf, 0x210, 64, NT_READ_FILE_ORDER, &res);
	ok(res.rc == 0 && res.n == 3 && res.stats.truncated && res.stats.truncated_at == 0x210,
	   "pipe: a writer that stops before the SPBlock: 3 events, truncated at 0x210");
	read_pipe(buf, 40, 64, 0, &res);
	ok(res.open_rc == NT_ETRUNC, "pipe: ending inside the Trace object fails to open");
	free(buf);

	/* A 3 MB trace (larger than the reader's 1 MiB read chunk): ten 300 KB blocks. */
	nbuf md[1] = {meta_simple(1, "Big")};
	nbuf b = {NULL, 0, 0};
	v4_start(&b, 8, md, 1);
	nb_free(&md[0]);
	static uint8_t payload[1000];
	for (size_t i = 0; i < sizeof payload; i++)
		payload[i] = (uint8_t)i;
	uint64_t ts = 1;
	uint32_t seq = 1;
	for (int blk = 0; blk < 10; blk++) {
		size_t at = nb_v4_block_begin(&b, "EventBlock");
		nb_blk_header(&b, 1, 0, 0);
		nb_hdrstate s;
		nb_hdr_reset(&s);
		for (int i = 0; i < 300; i++) {
			nb_ev e = mkev(1, seq++, 3, 3, 0, ts++, i == 0);
			e.payload = payload;
			e.plen = sizeof payload;
			nb_cev(&b, &s, &e);
		}
		nb_v4_block_end(&b, at);
	}
	nb_v4_end(&b);
	read_pipe(b.p, b.len, 65536, 0, &res);
	ok(res.rc == 0 && res.n == 3000 && res.stats.end_tag,
	   "pipe: a 3 MB trace in 64 KB writes: 3000 events");
	int inorder = 1;
	for (size_t i = 0; i < 64 && i < res.n; i++)
		if (res.ev[i].timestamp != i + 1)
			inorder = 0;
	ok(inorder, "pipe: events in order");
	read_pipe(b.p, b.len, 4093, NT_READ_FILE_ORDER, &res);
	ok(res.rc == 0 && res.n == 3000, "pipe: the same in 4093-byte writes, file order");
	/* A block that claims 64 MiB, on a pipe that then ends: a truncation, not a 64 MiB
	 * allocation up front (the buffer grows only as data arrives). */
	nbuf c = {NULL, 0, 0};
	nb_v4_header(&c, 8, 0, 1000);
	size_t at = nb_v4_block_begin(&c, "EventBlock");
	nb_blk_header(&c, 1, 0, 0);
	nb_set32(&c, at, 64u << 20);
	read_pipe(c.p, c.len, 4096, 0, &res);
	ok(res.rc == 0 && res.n == 0 && res.stats.truncated,
	   "pipe: a 64 MiB block claim on a short pipe is a truncation");
	nb_free(&c);
	nb_free(&b);
}

/* ------------------------------------------------------------------ errors */

/* Corrupt inputs fail with the first problem's message and offset. */
static void test_reader_rejects_corrupt_fields(void)
{
	size_t len;
	unsigned char *buf = tu_slurp(tu_data(CHECKPOINTS_TRACE), &len);
	if (!buf || len != 582) {
		ok(0, "errors: the checkpoints trace");
		free(buf);
		return;
	}
	static const struct {
		size_t off;
		const char *bytes;
		size_t n;
		int code;
		uint64_t err_off;
		const char *msg;
	} cases[] = {
		{0, "X", 1, NT_EFORMAT, 0, "not a nettrace file (no \"Nettrace\" magic)"},
		{0x4d, "\0\0\0\0", 4, NT_EFORMAT, 0x4d, "QPC frequency is 0"},
		{0x55, "\x03", 1, NT_EFORMAT, 0x55, "pointer size 3 is not 4 or 8"},
		{0x23, "\x05", 1, NT_EUNSUPPORTED, 0x23, "Trace object version 5 is not supported (expected 4)"},
		{0x83, "\xff\xff\xff\xff", 4, NT_ELIMIT, 0x83,
		 "MetadataBlock size 4294967295 exceeds the 67108864 byte limit"},
		{0x87, "\x01", 1, NT_EFORMAT, 0x87, "non-zero padding byte 01 before MetadataBlock content"},
		{0x88, "\x13", 1, NT_EFORMAT, 0x88, "block header size 19 is smaller than 20"},
		{0x144, "\xff\xff\xff\xff", 4, NT_EFORMAT, 0x144,
		 "stack count 4294967295 exceeds the StackBlock (4 bytes left)"},
		{0x140, "\0\0\0\0", 4, NT_EFORMAT, 0x140, "stack block first id is 0"},
		{0x181, "\x02", 1, NT_EFORMAT, 0x180, "event references undefined metadata id 2"},
		{0x181, "\x00", 1, NT_EFORMAT, 0x180, "event with metadata id 0 in an EventBlock"},
		{0x15c, "EventBlocc", 10, NT_EFORMAT, 0x14d, "unknown object type \"EventBlocc\""},
		{0x234, "\xff\xff\xff\xff", 4, NT_EFORMAT, 0x234,
		 "sequence point thread count 4294967295 exceeds the block"},
		{0x245, "\x02", 1, NT_EFORMAT, 0x245, "expected object start 05 05 01, found 02"},
		{0x11b, "\xff\xff\xff\xff", 4, NT_EFORMAT, 0x11b,
		 "bad metadata: field count 4294967295 exceeds the metadata payload (0 bytes left)"},
		{0x66, "\x05\x05\x02", 3, NT_EFORMAT, 0x66,
		 "expected object start 05 05 01, found 05 05 02"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned char *c = malloc(len);
		memcpy(c, buf, len);
		memcpy(c + cases[i].off, cases[i].bytes, cases[i].n);
		for (int mode = 0; mode < 2; mode++) {
			result res;
			read_mem(c, len, mode ? NT_READ_FILE_ORDER : 0, &res);
			ok(res.rc == cases[i].code && res.err.offset == cases[i].err_off &&
				   strcmp(res.err.msg, cases[i].msg) == 0,
			   "errors (%s): \"%s\" at byte %" PRIu64, mode ? "file order" : "timestamp order",
			   cases[i].msg, cases[i].err_off);
			if (res.rc != cases[i].code || res.err.offset != cases[i].err_off ||
			    strcmp(res.err.msg, cases[i].msg) != 0)
				printf("#   got %d at %" PRIu64 ": %s\n", res.rc, res.err.offset, res.err.msg);
		}
		free(c);
	}
	/* an 11-byte varint in an event header */
	nbuf b = {NULL, 0, 0};
	nb_bytes(&b, buf, 0x18f);
	nb_bytes(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
	nb_bytes(&b, buf + 0x196, len - 0x196);
	nb_set32(&b, 0x167, nb_get32(b.p + 0x167) + 4);
	result res;
	read_mem(b.p, b.len, 0, &res);
	ok(res.rc == NT_EFORMAT && res.err.offset == 0x18f + 10 &&
		   strcmp(res.err.msg, "bad varint in event header at blob offset 384") == 0,
	   "errors: an 11-byte varint is malformed, at its 11th byte");
	/* 6 bytes that are not the magic (a fuzzer find: 8 bytes were compared) */
	unsigned char *six = malloc(6);
	memcpy(six, "Netcce", 6);
	read_mem(six, 6, 0, &res);
	ok(res.rc == NT_EFORMAT && res.err.offset == 0 &&
		   strcmp(res.err.msg, "not a nettrace file (no \"Nettrace\" magic)") == 0,
	   "errors: 6 bytes without the magic are not a nettrace file");
	free(six);
	/* a stray byte where the end tag should be */
	nb_free(&b);
	nb_bytes(&b, buf, 0x245);
	nb_u8(&b, 0xff);
	read_mem(b.p, b.len, 0, &res);
	ok(res.rc == NT_EFORMAT && res.err.offset == 0x245 &&
		   strcmp(res.err.msg, "expected object start 05 05 01, found ff") == 0,
	   "errors: one stray byte instead of the end tag is malformed, not a truncation");
	/* garbage after the end tag is ignored */
	nb_free(&b);
	nb_bytes(&b, buf, len);
	nb_bytes(&b, "junk", 4);
	read_mem(b.p, b.len, 0, &res);
	ok(res.rc == 0 && res.n == 3 && res.stats.end_tag, "errors: bytes after the end tag are ignored");
	nb_free(&b);
	/* the reader refuses to continue after an error */
	unsigned char *c = malloc(len);
	memcpy(c, buf, len);
	c[0x181] = 2;
	nt_reader *r;
	nt_error err;
	nt_error_clear(&err);
	const nt_event *e;
	if (nt_reader_open_mem(&r, c, len, NULL, &err) == 0) {
		int rc1 = nt_reader_next(r, &e, &err);
		nt_error_clear(&err);
		int rc2 = nt_reader_next(r, &e, &err);
		ok(rc1 == NT_EFORMAT && rc2 == NT_EINVAL, "errors: a failed reader stays failed");
		nt_reader_free(r);
	}
	free(c);
	free(buf);
}

/* ------------------------------------------------------------------ regressions */

/* Bugs found by the fuzzer and the corrupt corpus (tests/corpus/regress/ has the inputs). */
static void test_reader_regressions(void)
{
	result res, fo;
	/* 1. Huge tick deltas with frequency 1: time_ns saturated instead of overflowing
	 *    (negating INT64_MIN was undefined behaviour). */
	{
		nbuf md[1] = {meta_simple(1, "E")};
		nbuf b = {NULL, 0, 0};
		nb_v4_header(&b, 8, 0, 1);
		nb_v4_metadata_block(&b, md, 1);
		nb_free(&md[0]);
		nb_ev ev[2] = {mkev(1, 1, 1, 1, 0, 0x8000000000000000ull, 1),
			       mkev(1, 2, 1, 1, 0, 0xFFFFFFFFFFFFFFFFull, 0)};
		event_block(&b, ev, 2);
		nb_v4_end(&b);
		read_mem(b.p, b.len, NT_READ_FILE_ORDER, &res);
		ok(res.rc == 0 && res.n == 2 && res.ev[0].time_ns == -INT64_MAX &&
			   res.ev[1].time_ns == -1000000000,
		   "regress: time_ns saturates for 2^63 ticks at 1 Hz; -1 tick is -1 s");
		nb_free(&b);
	}
	/* 2. Metadata ids beyond 2^20 and many capture threads: hash lookups, no quadratic
	 *    scans, no large direct-map allocation. */
	{
		nbuf md[2] = {meta_simple(0xFFFFFFFFu, "Max"), meta_simple(0x000FFFFFu, "Big")};
		nbuf b = {NULL, 0, 0};
		nb_v4_header(&b, 8, 0, 1000);
		nb_v4_metadata_block(&b, md, 2);
		nb_free(&md[0]);
		nb_free(&md[1]);
		static nb_ev ev[20000];
		for (uint32_t i = 0; i < 20000; i++)
			ev[i] = mkev(i & 1 ? 0xFFFFFFFFu : 0x000FFFFFu, 1, 1000 + i, i, 0, 20000 - i, 0);
		event_block(&b, ev, 20000);
		nb_v4_end(&b);
		clock_t t0 = clock();
		read_mem(b.p, b.len, 0, &res);
		double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
		ok(res.rc == 0 && res.n == 20000 && res.ev[0].timestamp == 1 &&
			   res.ev[0].meta_id == 0xFFFFFFFFu,
		   "regress: 20000 capture threads, huge metadata ids, merged by timestamp");
		ok(secs < 20, "regress: ... in %.2f s (quadratic lookups took minutes)", secs);
		nb_free(&b);
	}
	/* 3. A stack id redefined in the same region after an event used it: both orders
	 *    give the event the stack defined before it. And first id 0 with count 0. */
	{
		nbuf md[1] = {meta_simple(1, "E")};
		nbuf b = {NULL, 0, 0};
		v4_start(&b, 8, md, 1);
		nb_free(&md[0]);
		uint64_t s1[1] = {0x111}, s2[1] = {0x222};
		const uint64_t *r1[1] = {s1}, *r2[1] = {s2};
		uint32_t d[1] = {1};
		nb_v4_stack_block(&b, 1, 1, d, r1, 8);
		nb_ev ev1[1] = {mkev(1, 1, 1, 1, 1, 10, 0)}; /* not sorted: stays queued */
		event_block(&b, ev1, 1);
		nb_v4_stack_block(&b, 1, 1, d, r2, 8); /* redefines id 1 */
		nb_v4_stack_block(&b, 0, 0, NULL, NULL, 8);
		nb_ev ev2[1] = {mkev(1, 2, 1, 1, 1, 20, 1)};
		event_block(&b, ev2, 1);
		nb_v4_end(&b);
		read_mem(b.p, b.len, 0, &res);
		read_mem(b.p, b.len, NT_READ_FILE_ORDER, &fo);
		ok(res.rc == 0 && res.n == 2 && res.ev[0].stack[0] == 0x111 &&
			   res.ev[1].stack[0] == 0x222,
		   "regress: timestamp order: each event keeps the stack defined before it");
		ok(fo.rc == 0 && fo.n == 2 && fo.ev[0].stack[0] == 0x111 && fo.ev[1].stack[0] == 0x222,
		   "regress: file order: the same stacks; an empty block with first id 0 is fine");
		nb_free(&b);
	}
	/* 4. A StackBlock starting at id 2^32-1 (sparse ids: no gap filling). */
	{
		nbuf md[1] = {meta_simple(1, "E")};
		nbuf b = {NULL, 0, 0};
		v4_start(&b, 8, md, 1);
		nb_free(&md[0]);
		uint64_t s1[1] = {0x333};
		const uint64_t *r1[1] = {s1};
		uint32_t d[1] = {1};
		nb_v4_stack_block(&b, 0xFFFFFFFFu, 1, d, r1, 8);
		nb_ev ev1[1] = {mkev(1, 1, 1, 1, 0xFFFFFFFFu, 10, 1)};
		event_block(&b, ev1, 1);
		nb_v4_end(&b);
		read_mem(b.p, b.len, 0, &res);
		ok(res.rc == 0 && res.n == 1 && res.ev[0].stack_depth == 1 &&
			   res.ev[0].stack[0] == 0x333,
		   "regress: stack id 2^32-1 is found");
		/* the same block with two stacks: the second id would wrap to 0 */
		nbuf c = {NULL, 0, 0};
		v4_start(&c, 8, NULL, 0);
		size_t sb = c.len;
		uint32_t d2[2] = {1, 1};
		const uint64_t *r2[2] = {s1, s1};
		nb_v4_stack_block(&c, 0xFFFFFFFFu, 2, d2, r2, 8); /* content at sb + 30 */
		nb_v4_end(&c);
		read_mem(c.p, c.len, 0, &res);
		ok(res.rc == NT_EFORMAT && strcmp(res.err.msg, "stack ids 4294967295+2 exceed 2^32-1") == 0 &&
			   res.err.offset == sb + 30,
		   "regress: stack ids past 2^32-1 are malformed (at the first id)");
		nb_free(&c);
		nb_free(&b);
	}
	/* 5. Payload layouts that would take forever or produce gigabytes of JSON: nested
	 *    fixed-length arrays of empty objects (65535 x 65535 zero-byte elements). The
	 *    JSON stays valid and bounded, with an _error. */
	{
		nbuf b = {NULL, 0, 0};
		nb_v6_header(&b);
		static const char *const k[] = {"ProcessId"};
		static const char *const v[] = {"1"};
		nb_v6_trace_block(&b, 8, 0, 1000, 1, k, v);
		size_t at = nb_v6_block_begin(&b, 3);
		nb_u16(&b, 0);
		nbuf row = {NULL, 0, 0}, f = {NULL, 0, 0}, g = {NULL, 0, 0};
		nb_var(&row, 1);
		nb_str6(&row, "P");
		nb_var(&row, 1);
		nb_str6(&row, "Deep");
		nb_u16(&row, 1);
		nb_str6(&f, "A");
		nb_bytes(&f, "\x16\x01\xff\xff", 4); /* fixed array of 65535 objects */
		nb_u16(&f, 1);
		nb_str6(&g, "B");
		nb_bytes(&g, "\x16\x01\xff\xff", 4);
		nb_u16(&g, 0); /* objects with no fields */
		nb_u16(&f, (uint16_t)g.len);
		nb_bytes(&f, g.p, g.len);
		nb_u16(&row, (uint16_t)f.len);
		nb_bytes(&row, f.p, f.len);
		nb_u16(&row, 0);
		nb_u16(&b, (uint16_t)row.len);
		nb_bytes(&b, row.p, row.len);
		nb_free(&row);
		nb_free(&f);
		nb_free(&g);
		nb_v6_block_end(&b, at);
		at = nb_v6_block_begin(&b, 2);
		nb_blk_header(&b, 1, 0, 0);
		nb_bytes(&b, "\x43\x01\x00\x01\x00\x05", 6); /* meta 1, seq 1, ctid 1, ts 5, no payload */
		nb_v6_block_end(&b, at);
		nb_u32(&b, 0);
		clock_t t0 = clock();
		nt_reader *r;
		nt_error err;
		nt_error_clear(&err);
		const nt_event *e;
		if (nt_reader_open_mem(&r, b.p, b.len, NULL, &err) == 0 &&
		    nt_reader_next(r, &e, &err) == 1) {
			nt_membuf mb = {NULL, 0, 0};
			nt_sink s = nt_sink_membuf(&mb);
			is_int(nt_payload_write_json(e, 8, &s), 0, "regress: nested empty arrays: rendered");
			ok(mb.len < (4u << 20) && json_valid((const char *)mb.data, mb.len),
			   "regress: nested empty arrays: valid JSON, %zu bytes", mb.len);
			ok(mb.len > 20 && strstr((const char *)mb.data, "\"_error\":") != NULL,
			   "regress: nested empty arrays: the output says why it stopped");
			nt_value val;
			ok(nt_event_field(e, 8, "NoSuch", &val) == 0, "regress: nested empty arrays: field lookup ends");
			nt_membuf_free(&mb);
			nt_reader_free(r);
		} else {
			ok(0, "regress: nested empty arrays: read (%s)", err.msg);
			nt_reader_free(r);
		}
		double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
		ok(secs < 20, "regress: nested empty arrays: %.2f s (was 4e9 iterations)", secs);
		nb_free(&b);
	}
	/* 6. A payload that ends inside an array of objects: JSON stays valid (a "null" used
	 *    to follow the partial array). */
	{
		nbuf m = {NULL, 0, 0};
		nb_meta5_head(&m, 1, "P", 1, "Arr", 0, 0, 4);
		nb_u32(&m, 0);
		nbuf v2 = {NULL, 0, 0};
		nb_u32(&v2, 2);
		size_t f0 = v2.len;
		nb_u32(&v2, 0);
		nb_utf16z(&v2, "Items");
		nb_u32(&v2, 19);
		nb_u32(&v2, 1); /* array of objects */
		nb_u32(&v2, 1);
		size_t g0 = v2.len;
		nb_u32(&v2, 0);
		nb_utf16z(&v2, "X");
		nb_u32(&v2, 10);
		nb_set32(&v2, g0, (uint32_t)(v2.len - g0));
		nb_set32(&v2, f0, (uint32_t)(v2.len - f0));
		size_t f1 = v2.len;
		nb_u32(&v2, 0);
		nb_utf16z(&v2, "After");
		nb_u32(&v2, 10);
		nb_set32(&v2, f1, (uint32_t)(v2.len - f1));
		nb_u32(&m, (uint32_t)v2.len);
		nb_u8(&m, 2);
		nb_bytes(&m, v2.p, v2.len);
		nb_free(&v2);
		nbuf md[1] = {m};
		nbuf b = {NULL, 0, 0};
		v4_start(&b, 8, md, 1);
		nb_free(&m);
		/* count 3, but only one element and a half */
		nb_ev ev[1] = {mkev(1, 1, 1, 1, 0, 10, 1)};
		ev[0].payload = "\x03\x00\x01\x00\x00\x00\x02\x00";
		ev[0].plen = 8;
		event_block(&b, ev, 1);
		nb_v4_end(&b);
		read_mem(b.p, b.len, 0, &res);
		ok(res.rc == 0 && res.n == 1 && res.json_ok,
		   "regress: a payload ending inside an array of objects gives valid JSON");
		is_str(res.ev[0].json,
		       "{\"Items\":[{\"X\":1},{\"X\":null}],\"_error\":\"payload shorter than its fields\","
		       "\"_rest\":\"0200\"}",
		       "regress: ... with the error and the undecoded rest");
		nb_free(&b);
	}
	/* 7. V6 label list at a huge first index: no 512 MB allocation. */
	{
		nbuf b = {NULL, 0, 0};
		static const char *const k[] = {"x"};
		static const char *const v[] = {"y"};
		nb_v6_header(&b);
		nb_v6_trace_block(&b, 8, 0, 1000, 1, k, v);
		size_t at = nb_v6_block_begin(&b, 8);
		nb_u32(&b, 0x00FFFFF0u);
		nb_u32(&b, 1);
		nb_u8(&b, 0x80 | 7);
		nb_u8(&b, 1);
		nb_v6_block_end(&b, at);
		nb_u32(&b, 0);
		read_mem(b.p, b.len, 0, &res);
		ok(res.rc == NT_EFORMAT && strstr(res.err.msg, "bad label list range") != NULL,
		   "regress: a label list index far beyond the defined ones is malformed");
		nb_free(&b);
	}
	/* 8. nt_event_field/JSON with an unusual pointer size argument read only checked
	 *    bytes; a NULL payload of length 0 is fine. */
	{
		nt_field f[1] = {{"P", NT_TYPE_POINTER, 0, 0, NULL, 0}};
		nt_metadata m;
		memset(&m, 0, sizeof m);
		m.provider = "P";
		m.name = "E";
		m.fields = f;
		m.nfields = 1;
		nt_event e;
		memset(&e, 0, sizeof e);
		e.meta = &m;
		uint8_t pl[4] = {1, 2, 3, 4};
		e.payload = pl;
		e.payload_len = 4;
		nt_value val;
		ok(nt_event_field(&e, 4, "P", &val) == 1 && val.u == 0x04030201,
		   "regress: 4-byte pointer field");
		ok(nt_event_field(&e, 3, "P", &val) == 0,
		   "regress: pointer size 3 is treated as 8: too short, not an over-read");
		e.payload = NULL;
		e.payload_len = 0;
		nt_membuf mb = {NULL, 0, 0};
		nt_sink s = nt_sink_membuf(&mb);
		ok(nt_payload_write_json(&e, 8, &s) == 0 && json_valid((const char *)mb.data, mb.len),
		   "regress: a NULL empty payload renders");
		/* nt_event_is_sample() on records a caller made (not the reader's, whose kind
		 * is worked out when parsed): the rule from the text, a native sampler's
		 * running sample (version >= 1, State third) External */
		nt_field sf[3] = {{"Type", NT_TYPE_U32, 0, 0, NULL, 0},
				  {"Seq", NT_TYPE_U32, 0, 0, NULL, 0},
				  {"State", NT_TYPE_U32, 0, 0, NULL, 0}};
		uint8_t managed[4] = {2, 0, 0, 0};
		uint32_t type = 99;
		m.provider = NT_PROVIDER_SAMPLER;
		m.event_id = 0;
		m.fields = sf;
		m.nfields = 3;
		e.payload = managed;
		e.payload_len = 4;
		ok(nt_event_is_sample(&e, &type) == 1 && type == NT_SAMPLE_MANAGED,
		   "a caller's ThreadSample record, version 0: Managed stays Managed");
		m.version = 1;
		ok(nt_event_is_sample(&e, &type) == 1 && type == NT_SAMPLE_EXTERNAL,
		   "version 1 with State: a native sampler's running sample is External");
		m.nfields = 2;
		ok(nt_event_is_sample(&e, &type) == 1 && type == NT_SAMPLE_MANAGED,
		   "version 1 without State: Managed");
		m.event_id = 1;
		ok(nt_event_is_sample(&e, NULL) == 0, "event 1 of the provider is no sample");
		m.event_id = 0;
		m.provider = NULL;
		ok(nt_event_is_sample(&e, NULL) == 0, "a record without a provider is no sample");
		nt_membuf_free(&mb);
	}
}


/* nt_event_field_ref() gives what nt_event_field() gives (its oracle: the field walk), for
 * every field name of every event of the bundled traces, and for every cut of the payloads
 * of the first events of each record (fields past the cut absent, as there), with refs
 * that are reused across records (each resolves again when the record changes). */
static int same_value(const nt_value *a, const nt_value *b, const nt_event *e)
{
	return a->type == b->type && a->u == b->u && a->i == b->i &&
	       memcmp(&a->d, &b->d, sizeof a->d) == 0 && a->raw_len == b->raw_len &&
	       (a->raw - e->payload) == (b->raw - e->payload);
}

static void test_reader_field_ref(void)
{
	static const char *const traces[] = {
		"traces/sentry-dotnet/sample.nettrace",
		"traces/dotnet10/dotnet-trace-exceptions.nettrace",
		"traces/dotnet10/collect-linux-cpu.nettrace",
		"traces/perfview/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace",
		"traces/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
		CHECKPOINTS_TRACE,
	};
	uint64_t calls = 0, diffs = 0, fixed = 0, cuts = 0;
	for (size_t t = 0; t < sizeof traces / sizeof traces[0]; t++) {
		nt_reader *r = NULL;
		nt_error err;
		if (nt_reader_open_file(&r, tu_data(traces[t]), NULL, &err)) {
			ok(0, "field refs: cannot open %s: %s", traces[t], err.msg);
			continue;
		}
		nt_field_ref refs[32];
		memset(refs, 0, sizeof refs);
		const nt_metadata *cut_done[64] = {0};
		size_t ncut = 0;
		const nt_event *e;
		while (nt_reader_next(r, &e, &err) == 1) {
			const nt_metadata *m = e->meta;
			if (!m)
				continue;
			int cut = 1; /* the first event of each record: every cut too */
			for (size_t k = 0; k < ncut; k++)
				cut &= cut_done[k] != m;
			if (cut && ncut < 64)
				cut_done[ncut++] = m;
			else
				cut = 0;
			for (uint32_t i = 0; i < m->nfields && i < 32; i++) {
				const char *name = m->fields[i].name;
				if (!name)
					continue;
				nt_event c = *e;
				for (uint32_t len = cut ? 0 : e->payload_len; len <= e->payload_len; len++) {
					c.payload_len = len;
					nt_value a, b;
					memset(&a, 0, sizeof a);
					memset(&b, 0, sizeof b);
					int ra = nt_event_field(&c, 8, name, &a);
					int rb = nt_event_field_ref(&c, 8, name, &refs[i], &b);
					calls++;
					cuts += len < e->payload_len;
					fixed += refs[i].off >= 0;
					if (ra != rb || (ra == 1 && !same_value(&a, &b, &c)))
						diffs++;
				}
			}
		}
		nt_reader_free(r);
	}
	ok(calls > 100000 && fixed > 1000 && cuts > 1000,
	   "field refs: %llu lookups (%llu at a remembered offset, %llu on a cut payload)",
	   (unsigned long long)calls, (unsigned long long)fixed, (unsigned long long)cuts);
	is_u64(diffs, 0, "field refs: the same result and value as nt_event_field()");
}

/* nt_utf16z_dup() (its four-units-at-a-time paths) against a plain converter written here
 * from the definitions: UTF-16LE units to code points (a high surrogate followed by a low
 * one is a pair; any other surrogate is U+FFFD), code points to UTF-8. Random strings over
 * units that sit on every edge (ASCII, 0x80, 0x7FF/0x800, units whose low byte is ASCII,
 * both surrogate halves), at every alignment, terminated or not. */
static size_t ref_utf8(uint32_t cp, char *o)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static void test_reader_utf16_dup(void)
{
	static const uint16_t alphabet[] = {'a', 'Z', ' ', 0x7F, 0x80, 0xE9, 0x7FF, 0x800, 0x100,
					    0x4100, 0x2041, 0xFFFF, 0xD83D, 0xDE00, 0xDBFF, 0xDC00};
	uint64_t seed = 0x9E3779B97F4A7C15ull;
	size_t cases = 0, bad = 0;
	for (int round = 0; round < 4000; round++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		size_t nunits = (size_t)(seed >> 59) + (size_t)(round % 3) * 9; /* 0..49 */
		size_t align = (size_t)(seed >> 20) & 7;
		int terminated = (seed >> 30) % 5 != 0;
		uint16_t units[64];
		for (size_t i = 0; i < nunits; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/* mostly ASCII, as names are */
			units[i] = (seed >> 61) ? alphabet[(seed >> 40) % 3]
						: alphabet[(seed >> 40) % (sizeof alphabet / 2)];
		}
		uint8_t buf[8 + 2 * 64 + 2];
		uint8_t *p = buf + align;
		for (size_t i = 0; i < nunits; i++) {
			p[2 * i] = (uint8_t)units[i];
			p[2 * i + 1] = (uint8_t)(units[i] >> 8);
		}
		size_t len = 2 * nunits;
		if (terminated) {
			p[len] = p[len + 1] = 0;
			len += 2;
		}
		char want[4 * 64 + 1];
		size_t w = 0;
		for (size_t i = 0; i < nunits; i++) {
			uint32_t u = units[i], cp = u;
			if (u >= 0xD800 && u <= 0xDBFF && i + 1 < nunits && units[i + 1] >= 0xDC00 &&
			    units[i + 1] <= 0xDFFF) {
				cp = 0x10000 + ((u - 0xD800) << 10) + (units[i + 1] - 0xDC00);
				i++;
			} else if (u >= 0xD800 && u <= 0xDFFF) {
				cp = 0xFFFD;
			}
			w += ref_utf8(cp, want + w);
		}
		want[w] = '\0';
		char *got = NULL;
		size_t used = nt_utf16z_dup(p, len, &got);
		cases++;
		if (terminated ? used != len || !got || strcmp(got, want) != 0
			       : used != 0 || got != NULL)
			bad++;
		free(got);
	}
	is_u64(bad, 0, "UTF-16: nt_utf16z_dup() = the plain converter on %zu random strings",
	       cases);
}

/* The two copies of the per-event path (reader-event.c and reader-event-bmi2.c, which
 * packs varints with pext) read the same events from the bundled traces and the same
 * failures from their cuts: every field of every event, the payload and stack bytes, the
 * return code and error of the last call, in both orders. Where the CPU has no fast pext
 * both readers run the generic copy and the test says so. */
static int same_event(const nt_event *a, const nt_event *b)
{
	/* (each reader has its own metadata records: compared by id) */
	return !a->meta == !b->meta && (!a->meta || (a->meta->id == b->meta->id &&
						     a->meta->event_id == b->meta->event_id)) &&
	       a->offset == b->offset && a->seq == b->seq &&
	       a->thread_id == b->thread_id && a->capture_thread_id == b->capture_thread_id &&
	       a->processor == b->processor && a->timestamp == b->timestamp &&
	       a->time_ns == b->time_ns && !memcmp(a->activity_id, b->activity_id, 16) &&
	       !memcmp(a->related_activity_id, b->related_activity_id, 16) &&
	       a->stack_id == b->stack_id && a->stack_depth == b->stack_depth &&
	       (!a->stack_depth ||
		!memcmp(a->stack, b->stack, a->stack_depth * sizeof *a->stack)) &&
	       a->payload_len == b->payload_len &&
	       (!a->payload_len || !memcmp(a->payload, b->payload, a->payload_len)) &&
	       a->sorted == b->sorted && a->stack_key == b->stack_key &&
	       a->process_id == b->process_id && a->process_index == b->process_index;
}

/* Reads buf with both copies side by side; returns the number of events, or SIZE_MAX at
 * the first difference (what differs said in *why). */
static size_t isa_compare(const uint8_t *buf, size_t len, unsigned flags, const char **why)
{
	nt_reader *r[2] = {NULL, NULL};
	nt_error err[2];
	int orc[2];
	nt_reader_opts o = {sizeof o, flags, "isa"};
	for (int k = 0; k < 2; k++) {
		ntr_isa_generic = k == 0;
		orc[k] = nt_reader_open_mem(&r[k], buf, len, &o, &err[k]);
	}
	ntr_isa_generic = 0;
	size_t n = 0;
	*why = NULL;
	if (orc[0] != orc[1]) {
		*why = "open";
	} else if (orc[0] == 0) {
		for (;;) {
			const nt_event *e[2];
			int rc[2];
			for (int k = 0; k < 2; k++)
				rc[k] = nt_reader_next(r[k], &e[k], &err[k]);
			if (rc[0] != rc[1]) {
				*why = "return code";
				break;
			}
			if (rc[0] < 0 && (err[0].offset != err[1].offset ||
					  strcmp(err[0].msg, err[1].msg) != 0)) {
				*why = "error";
				break;
			}
			if (rc[0] != 1)
				break;
			if (!same_event(e[0], e[1])) {
				*why = "event";
				break;
			}
			n++;
		}
	}
	for (int k = 0; k < 2; k++)
		nt_reader_free(r[k]);
	return *why ? SIZE_MAX : n;
}

static void test_reader_isa_copies(void)
{
	static const char *const traces[] = {
		"traces/sentry-dotnet/sample.nettrace",
		"traces/dotnet10/dotnet-trace-exceptions.nettrace",
		"traces/dotnet10/collect-linux-cpu.nettrace",
		"traces/perfview/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace",
		"traces/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
		CHECKPOINTS_TRACE,
	};
	if (!ntr_isa_pick())
		printf("# this CPU has no fast pext: both readers run the generic copy\n");
	for (size_t t = 0; t < sizeof traces / sizeof traces[0]; t++) {
		size_t len = 0;
		uint8_t *buf = tu_slurp(tu_data(traces[t]), &len);
		if (!buf) {
			ok(0, "isa copies: cannot read %s", traces[t]);
			continue;
		}
		const char *why = NULL;
		size_t events = 0, cuts = 0, bad = 0;
		for (int order = 0; order < 2 && !why; order++) {
			size_t n = isa_compare(buf, len, order ? 0u : NT_READ_FILE_ORDER, &why);
			if (n != SIZE_MAX)
				events += n;
		}
		/* 40 cuts spread over the file, each a truncated read in both orders */
		for (size_t c = 1; c <= 40 && !why; c++, cuts++) {
			size_t at = (size_t)((uint64_t)len * c / 41);
			for (int order = 0; order < 2 && !why; order++)
				if (isa_compare(buf, at, order ? 0u : NT_READ_FILE_ORDER, &why) ==
				    SIZE_MAX)
					bad++;
		}
		if (!ok(!why && bad == 0 && events > 0,
			"isa copies: %s: %zu events and %zu cuts read alike", traces[t], events, cuts))
			printf("#   first difference: %s\n", why ? why : "none");
		free(buf);
	}
}

int main(void)
{
	test_reader_isa_copies();
	test_reader_utf16_dup();
	test_reader_field_ref();
	test_reader_smallest_v4_file();
	test_reader_compressed_seq_wrap();
	test_reader_compressed_all_fields();
	test_reader_fast_path_fields();
	test_reader_negative_timestamp_delta();
	test_reader_uncompressed_headers();
	test_reader_v5_metadata_tags();
	test_reader_timestamp_order_two_threads();
	test_reader_timestamp_order_model();
	test_reader_lost_events();
	test_reader_stack_ids_reset_after_sp();
	test_reader_4byte_pointer_stacks();
	test_reader_v6_stream();
	test_reader_truncation_every_byte();
	test_reader_pipe();
	test_reader_rejects_corrupt_fields();
	test_reader_regressions();
	return tap_done();
}
