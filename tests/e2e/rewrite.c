/* SPDX-License-Identifier: MIT */
/* rewrite.c - reads a trace and writes it again through libnettrace's writer, as V5 or
 * V6 (built as tests/rewrite; t630 hands the result to TraceEvent). Public API only.
 *
 * Usage: rewrite -f 5|6 IN OUT
 * Kept: the trace header (sync time, tick frequency, pointer size, pid, processors,
 * sampling period), every metadata record (V5 records verbatim but for their id, into V5;
 * rebuilt from their fields into V6; records no event uses are written too), every event
 * with its timestamp, thread, capture thread, sequence number (so lost events stay lost),
 * processor, activity ids, stack and payload. Not kept: where the original put its block
 * and sequence-point boundaries (the writer chooses its own) and the order of events of
 * different capture threads at one timestamp. A truncated input is rewritten up to its
 * cut, as a complete file.
 * Exit codes: 0 ok, 1 usage, 2 the input does not read, 3 the output does not write,
 * 4 the writer refused what the reader gave it (a bug). */
#include "nettrace.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(int code, const char *what, const nt_error *err)
{
	fprintf(stderr, "rewrite: %s: %s", what, err->msg);
	if (err->offset != NT_NO_OFFSET)
		fprintf(stderr, " (offset %llu)", (unsigned long long)err->offset);
	fputc('\n', stderr);
	return code;
}

/* 0 or a writer error code; code and what say how it failed. */
static int copy_meta(nt_writer *w, tu_idmap *map, const nt_metadata *m, uint32_t *out,
		     nt_error *err)
{
	uint32_t *s = tu_idmap_slot(map, m->id);
	if (!s) {
		err->code = NT_ENOMEM;
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return NT_ENOMEM;
	}
	if (!*s) {
		int rc = nt_writer_copy_metadata(w, m, s, err);
		if (rc)
			return rc;
	}
	if (out)
		*out = *s;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 5 || strcmp(argv[1], "-f") != 0 ||
	    (strcmp(argv[2], "5") != 0 && strcmp(argv[2], "6") != 0)) {
		fprintf(stderr, "usage: rewrite -f 5|6 IN OUT\n");
		return 1;
	}
	nt_error err;
	nt_error_clear(&err);
	nt_reader *r = NULL;
	if (nt_reader_open_file(&r, argv[3], NULL, &err))
		return fail(2, argv[3], &err);
	FILE *fp = fopen(argv[4], "wb");
	if (!fp) {
		perror(argv[4]);
		nt_reader_free(r);
		return 3;
	}
	nt_sink sink = nt_sink_stdio(fp);
	nt_writer_opts wo;
	memset(&wo, 0, sizeof wo);
	wo.sz = sizeof wo;
	wo.format_version = (uint32_t)atoi(argv[2]);
	nt_writer *w = NULL;
	int code = 0;
	const char *what = NULL;
	if (nt_writer_open(&w, &sink, nt_reader_header(r), &wo, &err)) {
		code = err.code == NT_EIO ? 3 : 4;
		what = "open the writer";
	}
	tu_idmap map = {NULL, 0};
	const nt_event *e;
	int rc;
	while (!code && (rc = nt_reader_next(r, &e, &err)) == 1) {
		nt_event_desc d;
		tu_event_desc(&d, e);
		if (copy_meta(w, &map, e->meta, &d.metadata_id, &err)) {
			code = err.code == NT_EIO ? 3 : 4;
			what = "copy a metadata record";
			break;
		}
		d.process_id = e->process_id;
		if (nt_writer_write_event(w, &d, &err)) {
			code = err.code == NT_EIO ? 3 : 4;
			what = "write an event";
		}
	}
	if (!code && rc < 0) {
		code = 2;
		what = argv[3];
	}
	/* metadata records that no event used */
	for (size_t i = 0; !code && i < nt_reader_metadata_count(r); i++)
		if (copy_meta(w, &map, nt_reader_metadata_at(r, i), NULL, &err)) {
			code = err.code == NT_EIO ? 3 : 4;
			what = "copy a metadata record";
		}
	if (!code) {
		nt_writer *wc = w;
		w = NULL;
		if (nt_writer_close(wc, &err)) {
			code = 3;
			what = argv[4];
		}
	}
	nt_writer_free(w);
	nt_reader_free(r);
	free(map.v);
	if (fclose(fp) != 0 && !code) {
		perror(argv[4]);
		return 3;
	}
	return code ? fail(code, what, &err) : 0;
}
