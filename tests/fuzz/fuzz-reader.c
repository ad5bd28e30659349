/* SPDX-License-Identifier: MIT */
/* fuzz-reader.c - libFuzzer target for the nettrace reader. Every input is an untrusted
 * trace: it is opened from memory and read to the end twice, in timestamp order and in
 * file order; every event's payload is rendered as JSON into a memory sink, a field is
 * looked up by name, and the stack and metadata are touched, so ASan/UBSan see every byte
 * the reader hands out. The two passes decode the same blocks, so they must agree on the
 * result; a disagreement traps (it is a reader bug, like a crash).
 * Compressed inputs (gzip, zip) that inflate to more than INFLATE_CAP bytes are skipped:
 * reading a trace costs time in proportion to its inflated size, and a 64 KB input that
 * inflates to 64 MB of events would only report a slow unit, not a bug.
 * Build and run: tests/fuzz/run-fuzz.sh (or "make fuzz"). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-inflate.h"
#include "nettrace.h"



typedef struct pass {
	int rc;
	nt_error err;
	uint64_t events;
	uint64_t sum; /* folds what was delivered, so both passes can be compared */
} pass;

static void run(const uint8_t *data, size_t size, unsigned flags, pass *p)
{
	nt_reader *r = NULL;
	nt_reader_opts o = {sizeof o, flags, "fuzz"};
	memset(p, 0, sizeof *p);
	nt_error_clear(&p->err);
	p->rc = nt_reader_open_mem(&r, data, size, &o, &p->err);
	if (p->rc < 0) {
		if (r != NULL || p->err.code == 0)
			__builtin_trap(); /* failure must leave *out NULL and fill err */
		return;
	}
	const nt_trace_header *h = nt_reader_header(r);
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	const nt_event *ev;
	while ((p->rc = nt_reader_next(r, &ev, &p->err)) == 1) {
		nt_value v;
		p->events++;
		mb.len = 0;
		if (nt_payload_write_json(ev, h->pointer_size, &sink) == 0)
			p->sum += mb.len;
		if (nt_event_field(ev, h->pointer_size, "ClrInstanceID", &v) == 1)
			p->sum += v.raw_len;
		if (ev->meta && ev->meta->nfields && ev->meta->fields[0].name &&
		    nt_event_field(ev, h->pointer_size, ev->meta->fields[0].name, &v) == 1)
			p->sum += v.u & 0xff;
		(void)nt_event_is_sample(ev, NULL);
		for (uint32_t i = 0; i < ev->stack_depth; i++)
			p->sum += ev->stack[i] & 0xff;
		if (ev->payload_len)
			p->sum += ev->payload[ev->payload_len - 1];
		p->sum += ev->seq + ev->timestamp;
		if (ev->meta)
			p->sum += strlen(ev->meta->provider) + strlen(ev->meta->name);
	}
	if (p->rc < 0 && p->err.code == 0)
		__builtin_trap(); /* an error must say what it is */
	for (size_t i = 0; i < nt_reader_metadata_count(r); i++) {
		const nt_metadata *m = nt_reader_metadata_at(r, i);
		if (m->raw_len)
			p->sum += m->raw[m->raw_len - 1];
	}
	uint64_t off, tid, lost;
	const char *w = nt_reader_warning(r, &off);
	if (w)
		p->sum += strlen(w);
	for (size_t i = 0; nt_reader_lost(r, i, &tid, &lost) == 1; i++)
		p->sum += lost;
	nt_membuf_free(&mb);
	nt_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pass ts, fo;
	if (too_big_when_inflated(data, size))
		return 0;
	run(data, size, 0, &ts);
	run(data, size, NT_READ_FILE_ORDER, &fo);
	/* Timestamp order alone may run out of its queue budget (reader-event.c MAX_QUEUED_BYTES). */
	if (ts.rc == NT_ELIMIT && fo.rc >= 0)
		return 0;
	if (ts.rc != fo.rc || ts.err.code != fo.err.code || ts.err.offset != fo.err.offset ||
	    strcmp(ts.err.msg, fo.err.msg) != 0)
		__builtin_trap();
	/* The delivery order differs, the set of events does not (the sum is order-free). */
	if (ts.rc == 0 && (ts.events != fo.events || ts.sum != fo.sum))
		__builtin_trap();
	return 0;
}
