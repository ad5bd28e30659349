/* SPDX-License-Identifier: MIT */
/* test-pdb.c - the portable PDB and PE debug-directory reader (libtrace/pdb.c) on inputs
 * built here byte by byte from the format's definition (doc/format/managed-lines.md): a
 * PDB with one document and two methods (single-document and multi-document sequence
 * points, hidden points, signed deltas, 2-byte compressed integers), an assembly whose
 * debug directory holds its CodeView entry and the same PDB deflate'd; then every
 * truncation and many byte flips of both, which must fail with an offset or parse, never
 * crash (the sanitizer build checks the reads). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pdb.h"
#include "tap.h"

typedef struct buf {
	uint8_t b[4096];
	size_t n;
} buf;

static void put(buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}
static void u8(buf *b, unsigned v) { b->b[b->n++] = (uint8_t)v; }
static void u16(buf *b, unsigned v) { u8(b, v & 0xFF); u8(b, v >> 8 & 0xFF); }
static void u32(buf *b, uint32_t v) { u16(b, v & 0xFFFF); u16(b, v >> 16); }
static void u64(buf *b, uint64_t v) { u32(b, (uint32_t)v); u32(b, (uint32_t)(v >> 32)); }
static void at32(buf *b, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}
static void pad4(buf *b)
{
	while (b->n % 4)
		u8(b, 0);
}

static const uint8_t PDB_ID[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
				   0xAA, 0xBB, 0xCC, 0xDD};

/* The PDB: streams #Pdb, #~, #Blob, #GUID. */
static void build_pdb(buf *p)
{
	buf pdb = {{0}, 0}, tbl = {{0}, 0}, blob = {{0}, 0}, guid = {{0}, 0};
	/* #Pdb: id, entry point, no type system tables */
	put(&pdb, PDB_ID, 20);
	u32(&pdb, 0);
	u64(&pdb, 0);
	/* #Blob: 0 empty; 1 "home"; 6 "x.cs"; 11 the name "/" + parts ("", "home", "x.cs") */
	u8(&blob, 0);
	u8(&blob, 4), put(&blob, "home", 4);
	u8(&blob, 4), put(&blob, "x.cs", 4);
	u8(&blob, 4), u8(&blob, '/'), u8(&blob, 0), u8(&blob, 1), u8(&blob, 6);
	/* 16: method 1 (single document): LocalSignature 0;
	 * IL 0 line 10 col 9..14; IL 4 hidden; IL 7 line 12 col 5, to line 13 col 3 */
	static const uint8_t sp1[] = {0, 0, 0, 5, 10, 9, 4, 0, 0, 3, 1, 0x7d, 4, 0x79};
	u8(&blob, sizeof sp1), put(&blob, sp1, sizeof sp1);
	/* 31: method 2 (no Document: InitialDocument 1): IL 2 line 300 (2-byte integer) col
	 * 1..2, a document record (document 1), IL 7 line 299 col 1..3 */
	static const uint8_t sp2[] = {0, 1, 2, 0, 1, 0x81, 0x2c, 1, 0, 1, 5, 0, 2, 0x7f, 0};
	u8(&blob, sizeof sp2), put(&blob, sp2, sizeof sp2);
	pad4(&blob);
	/* #GUID: one (the language) */
	for (int i = 0; i < 16; i++)
		u8(&guid, 0x30 + (unsigned)i);
	/* #~: row counts of Document (1) and MethodDebugInformation (2), then the rows */
	u32(&tbl, 0);
	u8(&tbl, 2), u8(&tbl, 0), u8(&tbl, 0), u8(&tbl, 1);
	u64(&tbl, 1ull << 0x30 | 1ull << 0x31);
	u64(&tbl, 0);
	u32(&tbl, 1);
	u32(&tbl, 2);
	u16(&tbl, 11), u16(&tbl, 0), u16(&tbl, 0), u16(&tbl, 1); /* Document row 1 */
	u16(&tbl, 1), u16(&tbl, 16);                              /* method 1 */
	u16(&tbl, 0), u16(&tbl, 31);                              /* method 2 */
	pad4(&tbl);

	p->n = 0;
	u32(p, 0x424A5342);
	u16(p, 1), u16(p, 1), u32(p, 0);
	u32(p, 12), put(p, "PDB v1.0\0\0\0\0", 12);
	u16(p, 0), u16(p, 4);
	size_t hdr = p->n;
	const char *names[4] = {"#Pdb", "#~", "#Blob", "#GUID"};
	for (int i = 0; i < 4; i++) {
		u32(p, 0), u32(p, 0);
		put(p, names[i], strlen(names[i]) + 1);
		pad4(p);
	}
	buf *st[4] = {&pdb, &tbl, &blob, &guid};
	size_t h = hdr;
	for (int i = 0; i < 4; i++) {
		at32(p, h, (uint32_t)p->n);
		at32(p, h + 4, (uint32_t)st[i]->n);
		put(p, st[i]->b, st[i]->n);
		h += 8 + ((strlen(names[i]) + 4) & ~(size_t)3);
	}
}

/* A PE32+ image: one section holding the debug directory (CodeView RSDS and embedded PDB
 * entries) and their data. Returns the file offset of the MPDB blob. */
static size_t build_pe(buf *pe, const buf *pdb)
{
	uint8_t z[4096];
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
	zs.next_in = (Bytef *)pdb->b;
	zs.avail_in = (uInt)pdb->n;
	zs.next_out = z;
	zs.avail_out = sizeof z;
	deflate(&zs, Z_FINISH);
	size_t zn = zs.total_out;
	deflateEnd(&zs);

	memset(pe->b, 0, sizeof pe->b);
	pe->n = 0;
	u8(pe, 'M'), u8(pe, 'Z');
	pe->n = 0x3c;
	u32(pe, 0x80);
	pe->n = 0x80;
	put(pe, "PE\0\0", 4);
	u16(pe, 0x8664), u16(pe, 1), u32(pe, 0), u32(pe, 0), u32(pe, 0);
	u16(pe, 240), u16(pe, 0x22);
	size_t opt = pe->n;
	u16(pe, 0x20b);
	pe->n = opt + 108;
	u32(pe, 16); /* NumberOfRvaAndSizes */
	pe->n = opt + 112 + 6 * 8;
	u32(pe, 0x2000), u32(pe, 2 * 28); /* debug directory: RVA, size */
	pe->n = opt + 240;
	/* section: VirtualSize, VirtualAddress 0x2000, SizeOfRawData, PointerToRawData 0x200 */
	put(pe, ".text\0\0\0", 8);
	u32(pe, 0x1000), u32(pe, 0x2000), u32(pe, 0x1000), u32(pe, 0x200);
	pe->n = 0x200;
	size_t cv = 0x200 + 2 * 28, mp = cv + 24 + 16;
	/* CodeView entry of a portable PDB (minor version 0x504d), then the embedded PDB */
	u32(pe, 0), u32(pe, 0xDDCCBBAA), u16(pe, 0x100), u16(pe, 0x504d), u32(pe, 2);
	u32(pe, 24 + 16), u32(pe, 0x2000 + (uint32_t)(cv - 0x200)), u32(pe, (uint32_t)cv);
	u32(pe, 0), u32(pe, 0), u16(pe, 0x100), u16(pe, 0x100), u32(pe, 17);
	u32(pe, 8 + (uint32_t)zn), u32(pe, 0x2000 + (uint32_t)(mp - 0x200)), u32(pe, (uint32_t)mp);
	u32(pe, 0x53445352);
	put(pe, PDB_ID, 16);
	u32(pe, 1);
	put(pe, "/src/x.pdb\0\0\0\0\0\0", 16);
	u32(pe, 0x4244504D);
	u32(pe, (uint32_t)pdb->n);
	put(pe, z, zn);
	return mp;
}

static void test_lookups(nt_pdb *pdb)
{
	static const struct {
		uint32_t row, il;
		int found;
		uint32_t line, col;
	} cases[] = {
		{1, 0, 1, 10, 9}, {1, 3, 1, 10, 9}, {1, 5, 1, 10, 9}, {1, 7, 1, 12, 5},
		{1, 100, 1, 12, 5}, {2, 0, 0, 0, 0}, {2, 2, 1, 300, 1}, {2, 9, 1, 299, 1},
		{3, 0, 0, 0, 0}, {0, 0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		nt_pdb_line l;
		const char *file = NULL;
		nt_error err;
		nt_error_clear(&err);
		int rc = nt_pdb_lookup(pdb, cases[i].row, cases[i].il, &l, &file, &err);
		is_int(rc, cases[i].found, "method %u IL %u: %s", cases[i].row, cases[i].il,
		       cases[i].found ? "found" : "no sequence point");
		if (rc == 1) {
			is_int(l.line, cases[i].line, "  line");
			is_int(l.column, cases[i].col, "  column");
			is_str(file, "/home/x.cs", "  document name from its parts");
		}
	}
	nt_pdb_line l;
	const char *file;
	nt_error err;
	nt_error_clear(&err);
	nt_pdb_lookup(pdb, 1, 7, &l, &file, &err);
	is_int(l.end_line, 13, "end line from the line delta");
	is_int(l.end_column, 3, "end column from a signed column delta");
}

/* Truncations and byte flips: parse (and look up) without crashing; failures say where. */
static void torture(const buf *b, int pe, const char *what)
{
	int bad_offsets = 0, failures = 0;
	uint8_t *copy = malloc(b->n);
	for (size_t n = 0; n < b->n; n++) {
		memcpy(copy, b->b, n);
		nt_error err;
		nt_error_clear(&err);
		int rc;
		nt_pdb *pdb = NULL;
		nt_pe_debug d;
		if (pe) {
			rc = nt_pe_read_debug(copy, n, &d, &err);
			if (rc == 0)
				nt_pe_debug_free(&d);
		} else {
			rc = nt_pdb_parse(&pdb, copy, n, &err);
			nt_pdb_free(pdb);
		}
		if (rc) {
			failures++;
			if (err.code == 0 || err.offset == NT_NO_OFFSET || err.offset > n)
				bad_offsets++;
		}
	}
	ok(failures > 0 && bad_offsets == 0,
	   "%s: %d truncations fail, each with an offset inside the input (%d without)", what,
	   failures, bad_offsets);
	int crashes_none = 1;
	for (size_t i = 0; i < b->n; i++) {
		for (int v = 0; v < 3; v++) {
			memcpy(copy, b->b, b->n);
			copy[i] = v == 0 ? 0xFF : v == 1 ? 0x00 : (uint8_t)(copy[i] ^ 0x80);
			nt_error err;
			nt_error_clear(&err);
			nt_pdb *pdb = NULL;
			const uint8_t *pp = copy;
			size_t pn = b->n;
			nt_pe_debug d;
			memset(&d, 0, sizeof d);
			if (pe) {
				if (nt_pe_read_debug(copy, b->n, &d, &err) || !d.embedded) {
					nt_pe_debug_free(&d);
					continue;
				}
				pp = d.embedded;
				pn = d.embedded_len;
			}
			if (nt_pdb_parse(&pdb, pp, pn, &err) == 0) {
				for (uint32_t row = 0; row < 4; row++)
					for (uint32_t il = 0; il < 12; il += 3) {
						nt_pdb_line l;
						const char *file;
						nt_error e2;
						nt_error_clear(&e2);
						if (nt_pdb_lookup(pdb, row, il, &l, &file, &e2) < 0 &&
						    e2.code == 0)
							crashes_none = 0;
					}
				nt_pdb_free(pdb);
			} else if (err.code == 0) {
				crashes_none = 0;
			}
			nt_pe_debug_free(&d);
		}
	}
	ok(crashes_none, "%s: byte flips parse or fail with an error", what);
	free(copy);
}

int main(void)
{
	buf p;
	build_pdb(&p);
	is_int(nt_pdb_sniff(p.b, p.n), 2, "a PDB sniffs as metadata (BSJB)");
	nt_pdb *pdb = NULL;
	nt_error err;
	nt_error_clear(&err);
	int rc = nt_pdb_parse(&pdb, p.b, p.n, &err);
	if (!ok(rc == 0, "the PDB parses")) {
		printf("#   %s at %llu\n", err.msg, (unsigned long long)err.offset);
		return tap_done();
	}
	ok(memcmp(nt_pdb_id(pdb), PDB_ID, 20) == 0, "its PDB id");
	is_int(nt_pdb_methods(pdb), 2, "two MethodDebugInformation rows");
	test_lookups(pdb);
	nt_pdb_free(pdb);

	buf pe;
	size_t mp = build_pe(&pe, &p);
	is_int(nt_pdb_sniff(pe.b, pe.n), 1, "an assembly sniffs as PE (MZ)");
	nt_pe_debug d;
	nt_error_clear(&err);
	rc = nt_pe_read_debug(pe.b, pe.n, &d, &err);
	is_int(rc, 0, "the debug directory reads");
	ok(d.has_codeview && memcmp(d.guid, PDB_ID, 16) == 0 && d.age == 1 &&
		   d.stamp == 0xDDCCBBAA,
	   "its CodeView entry: the PDB id's GUID, age 1, the id's stamp");
	is_str(d.pdb_path, "/src/x.pdb", "its PDB path");
	ok(d.embedded && d.embedded_len == p.n && memcmp(d.embedded, p.b, p.n) == 0,
	   "the embedded PDB inflates to the PDB's bytes");
	nt_pe_debug_free(&d);

	/* a corrupt deflate stream: the error names a byte in it */
	buf bad = pe;
	memset(bad.b + mp + 8, 0xFF, 8);
	nt_error_clear(&err);
	rc = nt_pe_read_debug(bad.b, bad.n, &d, &err);
	ok(rc == NT_EFORMAT && err.offset >= mp + 8 && err.offset < bad.n &&
		   strstr(err.msg, "embedded PDB: deflate data"),
	   "a corrupt embedded PDB: NT_EFORMAT at byte %llu: %s", (unsigned long long)err.offset,
	   err.msg);
	/* a size the deflate data cannot produce */
	bad = pe;
	at32(&bad, mp + 4, 0x7FFFFFF);
	nt_error_clear(&err);
	rc = nt_pe_read_debug(bad.b, bad.n, &d, &err);
	ok(rc == NT_EFORMAT && err.offset == mp + 4, "an impossible embedded size is refused: %s",
	   err.msg);
	/* a stream running past the file */
	bad = p;
	at32(&bad, 16 + 12 + 4 + 4, 0x10000);
	nt_error_clear(&err);
	rc = nt_pdb_parse(&pdb, bad.b, bad.n, &err);
	ok(rc == NT_EFORMAT && err.offset == 16 + 12 + 4 && strstr(err.msg, "exceeds the file"),
	   "a stream past the end: NT_EFORMAT at its header: %s", err.msg);

	torture(&p, 0, "PDB");
	torture(&pe, 1, "assembly");
	return tap_done();
}
