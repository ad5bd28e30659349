/* SPDX-License-Identifier: MIT */
/* fuzz-pdb.c - libFuzzer target for the portable PDB and PE debug-directory reader
 * (libtrace/pdb.c): an input starting with "MZ" is an assembly whose debug directory is
 * read (CodeView entry, embedded PDB inflated), one starting with "BSJB" a standalone
 * portable PDB; either PDB is parsed and every method's sequence points, a few IL offset
 * lookups and every document name are decoded. Errors must say what they are; a crash,
 * leak, read past the input or large allocation is a finding.
 * Build and run: tests/fuzz/run-fuzz.sh -T pdb (seeds: the .NET workloads' PDBs and
 * assemblies when tests/dotnet/build holds them, tests/corpus/regress-pdb/). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pdb.h"

#define MAX_METHODS 512u
#define MAX_DOCS 128u

static void check(int rc, const nt_error *err)
{
	if (rc < 0 && err->code == 0)
		__builtin_trap(); /* an error must say what it is */
}

static void on_line(void *ctx, const nt_pdb_line *l)
{
	uint64_t *sum = ctx;
	*sum += l->il_offset + l->line + l->column + l->end_line + l->end_column + l->document;
}

static void walk_pdb(const uint8_t *p, size_t n)
{
	nt_error err;
	nt_error_clear(&err);
	nt_pdb *pdb = NULL;
	int rc = nt_pdb_parse(&pdb, p, n, &err);
	check(rc, &err);
	if (rc)
		return;
	volatile uint64_t sum = 0;
	(void)nt_pdb_id(pdb);
	uint32_t nm = nt_pdb_methods(pdb);
	for (uint32_t row = 0; row <= nm + 1 && row <= MAX_METHODS; row++) {
		uint64_t s = 0;
		nt_error_clear(&err);
		check(nt_pdb_method_lines(pdb, row, on_line, &s, &err), &err);
		static const uint32_t il[] = {0, 1, 7, 0x40, 0x1000, 0xFFFFFFFFu};
		for (size_t k = 0; k < sizeof il / sizeof il[0]; k++) {
			nt_pdb_line l;
			const char *file = NULL;
			nt_error_clear(&err);
			rc = nt_pdb_lookup(pdb, row, il[k], &l, &file, &err);
			check(rc, &err);
			if (rc == 1)
				s += strlen(file) + l.line;
		}
		sum += s;
	}
	for (uint32_t d = 0; d <= MAX_DOCS; d++) {
		nt_error_clear(&err);
		const char *name = nt_pdb_document(pdb, d, &err);
		if (name)
			sum += strlen(name);
	}
	(void)sum; /* read: the sums only keep the calls from being optimised out */
	nt_pdb_free(pdb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (nt_pdb_sniff(data, size) == 1) {
		nt_error err;
		nt_error_clear(&err);
		nt_pe_debug d;
		int rc = nt_pe_read_debug(data, size, &d, &err);
		check(rc, &err);
		if (rc == 0) {
			if (d.embedded)
				walk_pdb(d.embedded, d.embedded_len);
			nt_pe_debug_free(&d);
		}
		return 0;
	}
	walk_pdb(data, size);
	return 0;
}
