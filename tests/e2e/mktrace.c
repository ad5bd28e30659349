/* SPDX-License-Identifier: MIT */
/* mktrace.c - writes a small synthetic trace for the nettrace-info end-to-end tests
 * (t015-info-synthetic.sh; built as tests/mktrace), covering what the real traces in
 * data/traces lack: the V6 format, lost events (a sequence-number gap), a known processor
 * number, and provider and event names that need escaping. Uses only the public API.
 *
 * Usage: mktrace 5|6 OUT.nettrace
 * Content: SyncTimeQPC 1000 at 1 GHz; 10 SampleProfiler samples by capture thread 7 on
 * threads 100 and 101 (types 0, 1, 2, 0, ...; stack 0x1000 <- 0x2000 <- 0x3000), with
 * sequence numbers 1-5 then 9-13 (3 lost); one event of provider "My\"Prov\\\x01" named
 * "Ev\u00e9" (id 7, version 1) on thread 9, processor 1, at tick 1500. */
#include "nettrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const nt_error *err)
{
	fprintf(stderr, "mktrace: %s: %s\n", what, err->msg);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "5") != 0 && strcmp(argv[1], "6") != 0)) {
		fprintf(stderr, "usage: mktrace 5|6 OUT.nettrace\n");
		return 1;
	}
	FILE *fp = fopen(argv[2], "wb");
	if (!fp) {
		perror(argv[2]);
		return 1;
	}
	nt_sink sink = nt_sink_stdio(fp);
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.sync_time_utc[0] = 2024; /* 2024-01-02T03:04:05.006Z */
	h.sync_time_utc[1] = 1;
	h.sync_time_utc[3] = 2;
	h.sync_time_utc[4] = 3;
	h.sync_time_utc[5] = 4;
	h.sync_time_utc[6] = 5;
	h.sync_time_utc[7] = 6;
	h.sync_qpc = 1000;
	h.qpc_frequency = 1000000000;
	h.pointer_size = 8;
	h.process_id = 42;
	h.processors = 2;
	h.expected_sampling_ns = 1000000;
	nt_writer_opts wo = {sizeof wo, (uint32_t)atoi(argv[1]), 0, 0};
	nt_writer *w;
	nt_error err;
	nt_error_clear(&err);
	if (nt_writer_open(&w, &sink, &h, &wo, &err))
		return fail("open", &err);

	static const nt_field sample_fields[] = {{"Type", NT_TYPE_U32, 0, 0, NULL, 0}};
	nt_metadata_desc sample = {NT_PROVIDER_SAMPLER, 0, "ThreadSample", 0, 0, 0, 0, sample_fields, 1};
	nt_metadata_desc odd = {"My\"Prov\\\x01", 7, "Ev\xc3\xa9", 0, 1, 4, 0, NULL, 0};
	uint32_t sample_id, odd_id;
	if (nt_writer_add_metadata(w, &sample, &sample_id, &err) ||
	    nt_writer_add_metadata(w, &odd, &odd_id, &err))
		return fail("metadata", &err);

	static const uint64_t stack[3] = {0x1000, 0x2000, 0x3000};
	for (uint32_t i = 0; i < 10; i++) {
		uint8_t type[4] = {(uint8_t)(i % 3), 0, 0, 0};
		nt_event_desc ev = {sample_id, i < 5 ? i + 1 : i + 4, 100 + i % 2, 7, 0xFFFFFFFFu,
				    2000 + 10 * (uint64_t)i, NULL, NULL, stack, 3, type, 4, 0};
		if (nt_writer_write_event(w, &ev, &err))
			return fail("sample", &err);
	}
	nt_event_desc ev = {odd_id, 0, 9, 9, 1, 1500, NULL, NULL, NULL, 0, NULL, 0, 0};
	if (nt_writer_write_event(w, &ev, &err))
		return fail("event", &err);
	if (nt_writer_close(w, &err))
		return fail("close", &err);
	if (fclose(fp) != 0) {
		perror(argv[2]);
		return 1;
	}
	return 0;
}
