/* SPDX-License-Identifier: MIT */
/* mkphases.c - writes a trace with known phases for the --when and subsystem end-to-end
 * tests (t206-tree-when.sh, t207-tree-subsystems.sh, t104-fold-subsystems.sh; built as
 * tests/mkphases). Uses only the public API (the writer).
 *
 * Usage: mkphases OUT.nettrace
 * Content: a 1 GHz clock, SyncTimeQPC 1000000; SampleProfiler samples (Managed) by
 * capture thread 7, at 1 ms + i ms (i = 0..1999), each with the stack below, root first:
 *   thread 100, i = 0..899 (900 samples, the first phase):
 *       App.Main > App.Load > System.IO.File.ReadAllBytes
 *   thread 100, i = 1100..1999 (900 samples, the second phase; 200 ms without samples
 *   in between):
 *       App.Main > App.Compute > System.Text.Json.JsonSerializer.Serialize
 *   thread 101, every 4th i (500 samples, the whole time):
 *       App.Worker > System.Threading.Monitor.Enter
 * Rundown (MethodDCEndVerbose, DomainModuleDCEnd "C:\app\app.dll") names every method,
 * so frames read "app!App.Main()", "app!System.IO.File.ReadAllBytes()" and so on. */
#include "nettrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../pbuf.h"

enum { M_MAIN, M_LOAD, M_READ, M_COMPUTE, M_JSON, M_WORKER, M_ENTER, M_COUNT };
static const char *const ns_of[M_COUNT] = {
	"App", "App", "System.IO.File", "App", "System.Text.Json.JsonSerializer", "App",
	"System.Threading.Monitor",
};
static const char *const name_of[M_COUNT] = {
	"Main", "Load", "ReadAllBytes", "Compute", "Serialize", "Worker", "Enter",
};

#define MODULE_ID 0x77
#define IP(m) (0x10000ull + 0x1000ull * (uint64_t)(m) + 0x10)

static int fail(const char *what, const nt_error *err)
{
	fprintf(stderr, "mkphases: %s: %s\n", what, err->msg);
	return 1;
}

/* Writes one Managed sample of thread tid with the given methods (root first). */
static int sample(nt_writer *w, uint32_t id, uint64_t ts, uint64_t tid, const int *m, int n,
		  nt_error *err)
{
	uint64_t ips[8];
	for (int k = 0; k < n; k++) /* leaf first */
		ips[k] = IP(m[n - 1 - k]);
	pbuf p = {{0}, 0};
	pb_u32(&p, 2);
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = id;
	e.thread_id = tid;
	e.capture_thread_id = 7;
	e.timestamp = ts;
	e.stack = ips;
	e.stack_depth = (uint32_t)n;
	e.payload = p.b;
	e.payload_len = (uint32_t)p.n;
	return nt_writer_write_event(w, &e, err);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkphases OUT.nettrace\n");
		return 1;
	}
	FILE *fp = fopen(argv[1], "wb");
	if (!fp) {
		perror(argv[1]);
		return 1;
	}
	nt_sink sink = nt_sink_stdio(fp);
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.sync_qpc = 1000000;
	h.qpc_frequency = 1000000000;
	h.pointer_size = 8;
	h.process_id = 42;
	h.processors = 4;
	h.expected_sampling_ns = 1000000;
	nt_writer *w = NULL;
	nt_error err;
	nt_error_clear(&err);
	uint32_t sid, mid, did;
	nt_metadata_desc ds = {NT_PROVIDER_SAMPLER, 0, "ThreadSample", 0, 0, 5, 0, NULL, 0};
	nt_metadata_desc dm = {NT_PROVIDER_RUNDOWN, 144, "MethodDCEndVerbose", 0x30, 1, 4, 0,
			       NULL, 0};
	nt_metadata_desc dd = {NT_PROVIDER_RUNDOWN, 152, "DomainModuleDCEnd", 0x8, 1, 4, 0, NULL, 0};
	if (nt_writer_open(&w, &sink, &h, NULL, &err) || nt_writer_add_metadata(w, &ds, &sid, &err) ||
	    nt_writer_add_metadata(w, &dm, &mid, &err) || nt_writer_add_metadata(w, &dd, &did, &err))
		return fail("open", &err);

	static const int load[] = {M_MAIN, M_LOAD, M_READ};
	static const int compute[] = {M_MAIN, M_COMPUTE, M_JSON};
	static const int worker[] = {M_WORKER, M_ENTER};
	uint64_t ts = 0;
	for (int i = 0; i < 2000; i++) {
		ts = h.sync_qpc + 1000000ull * (uint64_t)(i + 1);
		if (i < 900 && sample(w, sid, ts, 100, load, 3, &err))
			return fail("sample", &err);
		if (i >= 1100 && sample(w, sid, ts, 100, compute, 3, &err))
			return fail("sample", &err);
		if (i % 4 == 0 && sample(w, sid, ts + 1000, 101, worker, 2, &err))
			return fail("sample", &err);
	}
	for (int m = 0; m < M_COUNT; m++) {
		pbuf p = {{0}, 0};
		pb_u64(&p, 0x500 + (uint64_t)m);       /* MethodID */
		pb_u64(&p, MODULE_ID);                 /* ModuleID */
		pb_u64(&p, IP(m) - 0x10);              /* MethodStartAddress */
		pb_u32(&p, 0x100);                     /* MethodSize */
		pb_u32(&p, 0x06000001u + (uint32_t)m); /* MethodToken */
		pb_u32(&p, 0x8);                       /* MethodFlags: Jitted */
		pb_str(&p, ns_of[m]);
		pb_str(&p, name_of[m]);
		pb_str(&p, "void  ()");
		pb_u16(&p, 9);                         /* ClrInstanceID */
		nt_event_desc e;
		memset(&e, 0, sizeof e);
		e.metadata_id = mid;
		e.thread_id = e.capture_thread_id = 8;
		e.timestamp = ts + 10000 + (uint64_t)m;
		e.payload = p.b;
		e.payload_len = (uint32_t)p.n;
		if (nt_writer_write_event(w, &e, &err))
			return fail("rundown", &err);
	}
	pbuf p = {{0}, 0};
	pb_u64(&p, MODULE_ID);
	pb_u64(&p, 0x99); /* AssemblyID */
	pb_u64(&p, 0x1);  /* AppDomainID */
	pb_u32(&p, 0);    /* ModuleFlags */
	pb_u32(&p, 0);    /* Reserved */
	pb_str(&p, "C:\\app\\app.dll");
	pb_str(&p, "");
	pb_u16(&p, 9);
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = did;
	e.thread_id = e.capture_thread_id = 8;
	e.timestamp = ts + 20000;
	e.payload = p.b;
	e.payload_len = (uint32_t)p.n;
	if (nt_writer_write_event(w, &e, &err) || nt_writer_close(w, &err))
		return fail("close", &err);
	if (fclose(fp) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
