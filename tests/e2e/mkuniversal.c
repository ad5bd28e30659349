/* SPDX-License-Identifier: MIT */
/* mkuniversal.c - writes a machine-wide V6 trace with the Universal.System and
 * Universal.Events providers, laid out as one-collect (dotnet-trace collect-linux)
 * writes them (doc/format/universal-events.md), with a known truth, for t741-t743 and
 * the TraceEvent check (tests/dotnet/universal). Uses only the public API; built as
 * tests/mkuniversal.
 *
 * Usage: mkuniversal OUT.nettrace [bad-symbol]
 * ("bad-symbol" cuts the last ProcessSymbol payload short: a malformed payload.)
 * Content (1 GHz ticks, declared sampling period 1 ms):
 *  - process 100 "alpha": mapping 1 [0x400000, 0x500000) /opt/alpha/alpha with symbols
 *    main, work, spin; mapping 3 /memfd:doublemapper with the JIT'd method
 *    "void [App] App.Program::Compute(int32)[OptimizedTier1]";
 *  - process 200 "beta": mapping 2 at the same addresses, /opt/beta/beta, with main,
 *    idle, waitfor (so an address means different functions in the two processes);
 *  - cpu samples: thread 101 (pid 100) 40 x Value 1 at spin <- work <- main and
 *    10 x Value 3 at Compute <- main; thread 201 (pid 200) 25 x Value 1 at idle <- main;
 *  - cswitch: thread 201 switched in 5 times after 2,000,000 ticks off CPU, blocked at
 *    waitfor <- main (10 ms blocked in all); thread 101 once after 1,000,000 ticks at
 *    work <- main.
 * Truth: alpha 70 samples (70 ms), beta 25 (25 ms); blocked: beta 10 ms, alpha 1 ms. */
#include "nettrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const nt_error *err)
{
	fprintf(stderr, "mkuniversal: %s: %s\n", what, err->msg);
	return 1;
}

typedef struct buf {
	uint8_t b[512];
	size_t n;
} buf;

static void put_var(buf *b, uint64_t v)
{
	while (v >= 0x80) {
		b->b[b->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->b[b->n++] = (uint8_t)v;
}

/* the providers' strings: uint16 byte length, then UTF-8 */
static void put_str(buf *b, const char *s)
{
	size_t n = strlen(s);
	b->b[b->n++] = (uint8_t)n;
	b->b[b->n++] = (uint8_t)(n >> 8);
	memcpy(b->b + b->n, s, n);
	b->n += n;
}

#define VU(name) {name, NT_TYPE_VARUINT, 0, 0, NULL, 0}
#define S8(name) {name, NT_TYPE_UTF8CHAR, 0, 0, NULL, 0} /* what one-collect declares */

static nt_writer *w;
static nt_error err;
static uint64_t now = 2000;

static int emit(uint32_t meta, uint64_t pid, uint64_t tid, const uint64_t *stack, uint32_t depth,
		const buf *pl)
{
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = meta;
	e.thread_id = tid;
	e.capture_thread_id = tid;
	e.processor = 0;
	e.timestamp = now;
	e.stack = stack;
	e.stack_depth = depth;
	e.payload = pl->b;
	e.payload_len = (uint32_t)pl->n;
	e.process_id = pid;
	now += 1000;
	return nt_writer_write_event(w, &e, &err);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "bad-symbol") != 0)) {
		fprintf(stderr, "usage: mkuniversal OUT.nettrace [bad-symbol]\n");
		return 1;
	}
	int bad_symbol = argc == 3;
	FILE *fp = fopen(argv[1], "wb");
	if (!fp) {
		perror(argv[1]);
		return 1;
	}
	nt_sink sink = nt_sink_stdio(fp);
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.sync_time_utc[0] = 2025;
	h.sync_time_utc[1] = 6;
	h.sync_time_utc[3] = 1;
	h.sync_qpc = 1000;
	h.qpc_frequency = 1000000000;
	h.pointer_size = 8;
	h.processors = 4;
	h.expected_sampling_ns = 1000000;
	nt_writer_opts wo = {sizeof wo, 6, 0, 0};
	nt_error_clear(&err);
	if (nt_writer_open(&w, &sink, &h, &wo, &err))
		return fail("open", &err);

	static const nt_field value_f[] = {VU("Value")};
	static const nt_field create_f[] = {VU("NamespaceId"), S8("Name"), S8("NamespaceName")};
	static const nt_field mapping_f[] = {VU("Id"),         VU("StartAddress"), VU("EndAddress"),
					     VU("FileOffset"), S8("FileName"),     VU("MetadataId")};
	static const nt_field symbol_f[] = {VU("Id"), VU("MappingId"), VU("StartAddress"),
					    VU("EndAddress"), S8("Name")};
	static const nt_field mmeta_f[] = {VU("Id"), S8("SymbolMetadata"), S8("VersionMetadata")};
	const char *US = NT_PROVIDER_UNIVERSAL_SYSTEM, *UE = NT_PROVIDER_UNIVERSAL_EVENTS;
	nt_metadata_desc md[] = {
		{UE, 1, "cpu", 0, 0, 0, 0, value_f, 1},
		{UE, 2, "cswitch", 0, 0, 0, 0, value_f, 1},
		{US, 0, "ExistingProcess", 0, 0, 0, 0, create_f, 3},
		{US, 1, "ProcessCreate", 0, 0, 0, 0, create_f, 3},
		{US, 2, "ProcessExit", 0, 0, 0, 0, NULL, 0},
		{US, 3, "ProcessMapping", 0, 0, 0, 0, mapping_f, 6},
		{US, 4, "ProcessSymbol", 0, 0, 0, 0, symbol_f, 5},
		{US, 5, "ProcessMappingMetadata", 0, 0, 0, 0, mmeta_f, 3},
	};
	uint32_t id[8];
	for (int i = 0; i < 8; i++)
		if (nt_writer_add_metadata(w, &md[i], &id[i], &err))
			return fail("metadata", &err);
	enum { CPU, CSWITCH, EXISTING, CREATE, EXIT, MAPPING, SYMBOL, MMETA };

	buf b;
	/* processes */
	b.n = 0;
	put_var(&b, 100);
	put_str(&b, "alpha");
	put_str(&b, "Unknown");
	if (emit(id[EXISTING], 100, 0, NULL, 0, &b))
		return fail("process", &err);
	b.n = 0;
	put_var(&b, 200);
	put_str(&b, "beta");
	put_str(&b, "Unknown");
	if (emit(id[CREATE], 200, 0, NULL, 0, &b))
		return fail("process", &err);
	/* mapping metadata 1 (ELF build id) for mapping 1 */
	b.n = 0;
	put_var(&b, 1);
	put_str(&b, "{\"type\":\"ELF\",\"build_id\":\"00112233445566778899AABBCCDDEEFF00112233\"}");
	put_str(&b, "{}");
	if (emit(id[MMETA], 100, 0, NULL, 0, &b))
		return fail("metadata event", &err);
	/* mappings */
	static const struct {
		uint64_t id, pid, start, end;
		const char *file;
		uint64_t meta;
	} maps[] = {{1, 100, 0x400000, 0x500000, "/opt/alpha/alpha", 1},
		    {2, 200, 0x400000, 0x500000, "/opt/beta/beta", 0},
		    {3, 100, 0x7f0000000000, 0x7f0000100000, "/memfd:doublemapper (deleted)", 0}};
	for (int i = 0; i < 3; i++) {
		b.n = 0;
		put_var(&b, maps[i].id);
		put_var(&b, maps[i].start);
		put_var(&b, maps[i].end);
		put_var(&b, 0);
		put_str(&b, maps[i].file);
		put_var(&b, maps[i].meta);
		if (emit(id[MAPPING], maps[i].pid, 0, NULL, 0, &b))
			return fail("mapping", &err);
	}
	/* symbols: [start, end] inclusive */
	static const struct {
		uint64_t mapping, pid, start;
		const char *name;
	} syms[] = {{1, 100, 0x401000, "main"},    {1, 100, 0x401100, "work"},
		    {1, 100, 0x401200, "spin"},    {2, 200, 0x401000, "main"},
		    {2, 200, 0x401100, "idle"},    {2, 200, 0x401200, "waitfor"},
		    {3, 100, 0x7f0000001000, "void [App] App.Program::Compute(int32)[OptimizedTier1]"}};
	for (int i = 0; i < 7; i++) {
		b.n = 0;
		put_var(&b, (uint64_t)i + 1);
		put_var(&b, syms[i].mapping);
		put_var(&b, syms[i].start);
		put_var(&b, syms[i].start + 0xff);
		put_str(&b, syms[i].name);
		if (bad_symbol && i == 6)
			b.n -= 10; /* the name's length says more than the payload holds */
		if (emit(id[SYMBOL], syms[i].pid, 0, NULL, 0, &b))
			return fail("symbol", &err);
	}
	/* samples: leaf first, return addresses above the leaf */
	static const uint64_t a_spin[] = {0x401210, 0x401120, 0x401030};
	static const uint64_t a_jit[] = {0x7f0000001010, 0x401030};
	static const uint64_t b_idle[] = {0x401110, 0x401030};
	static const uint64_t b_wait[] = {0x401220, 0x401030};
	static const uint64_t a_work[] = {0x401120, 0x401030};
	for (int i = 0; i < 50; i++) {
		b.n = 0;
		put_var(&b, i < 40 ? 1 : 3);
		if (emit(id[CPU], 100, 101, i < 40 ? a_spin : a_jit, i < 40 ? 3 : 2, &b))
			return fail("cpu", &err);
		if (i < 25) {
			b.n = 0;
			put_var(&b, 1);
			if (emit(id[CPU], 200, 201, b_idle, 2, &b))
				return fail("cpu", &err);
		}
		if (i % 10 == 5) {
			b.n = 0;
			put_var(&b, 2000000);
			if (emit(id[CSWITCH], 200, 201, b_wait, 2, &b))
				return fail("cswitch", &err);
		}
	}
	b.n = 0;
	put_var(&b, 1000000);
	if (emit(id[CSWITCH], 100, 101, a_work, 2, &b))
		return fail("cswitch", &err);
	b.n = 0;
	if (emit(id[EXIT], 200, 0, NULL, 0, &b))
		return fail("exit", &err);
	if (nt_writer_close(w, &err))
		return fail("close", &err);
	if (fclose(fp) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
