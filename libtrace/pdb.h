/* SPDX-License-Identifier: MIT */
/* pdb.h - managed source lines, internal to the library (not installed): the portable PDB
 * and PE/COFF reader (pdb.c) and the IP -> file:line resolver of JIT'd .NET code built on
 * it (sym-managed.c). doc/format/managed-lines.md describes the formats and the search. */
#ifndef NT_PDB_H
#define NT_PDB_H

#include "internal.h"

/* ---- pdb.c: portable PDBs (ECMA-335 metadata with the debugging tables) ---- */

#define NT_PDB_ID_LEN 20          /* the #Pdb stream's id: GUID (16) + stamp (4) */
#define NT_PDB_MAX_FILE (256u << 20) /* larger PDBs / assemblies are not read */

typedef struct nt_pdb nt_pdb;

/* Parses a portable PDB held in p[0..n) (copied). Errors: NT_EFORMAT / NT_ELIMIT with the
 * byte offset in the PDB, NT_ENOMEM. */
int nt_pdb_parse(nt_pdb **out, const uint8_t *p, size_t n, nt_error *err);
void nt_pdb_free(nt_pdb *pdb);
/* The 20-byte PDB id. */
const uint8_t *nt_pdb_id(const nt_pdb *pdb);
/* Rows of the MethodDebugInformation table (= MethodDef rows). */
uint32_t nt_pdb_methods(const nt_pdb *pdb);

/* One sequence point of a method. */
typedef struct nt_pdb_line {
	uint32_t il_offset;
	uint32_t line, column;     /* start line and column */
	uint32_t end_line, end_column;
	uint32_t document;         /* Document row id */
	int hidden;
} nt_pdb_line;

/* The source position of il_offset in method row (MethodDef token & 0xFFFFFF): the last
 * non-hidden sequence point at or before il_offset. Returns 1 and fills *out (*file
 * borrowed from pdb: its Document name), 0 when the method has no sequence point there,
 * or < 0 (NT_EFORMAT with the blob's offset, NT_ENOMEM). */
int nt_pdb_lookup(nt_pdb *pdb, uint32_t method_row, uint32_t il_offset, nt_pdb_line *out,
		  const char **file, nt_error *err);
/* Every sequence point of a method, for tests and the fuzzer: fn is called for each in
 * blob order; returns the count, or < 0 on a malformed blob. */
int nt_pdb_method_lines(nt_pdb *pdb, uint32_t method_row,
			void (*fn)(void *ctx, const nt_pdb_line *l), void *ctx, nt_error *err);
/* Name of Document row doc (1-based), NULL when out of range or malformed. Borrowed. */
const char *nt_pdb_document(nt_pdb *pdb, uint32_t doc, nt_error *err);

/* ---- pdb.c: PE/COFF assemblies: the debug directory ---- */

typedef struct nt_pe_debug {
	int has_codeview;          /* a CodeView RSDS entry */
	uint8_t guid[16];          /* its GUID (the PDB id's first 16 bytes) */
	uint32_t age;
	uint32_t stamp;            /* its TimeDateStamp (the PDB id's last 4 bytes) */
	char pdb_path[512];        /* its path, "" if none */
	uint8_t *embedded;         /* the embedded portable PDB, inflated (malloc'd), or NULL */
	size_t embedded_len;
} nt_pe_debug;

/* 1 when p starts like a PE file ("MZ"), 2 like portable PDB metadata ("BSJB"), else 0. */
int nt_pdb_sniff(const uint8_t *p, size_t n);
/* Reads the debug directory of the PE image p[0..n). Errors carry the byte offset. */
int nt_pe_read_debug(const uint8_t *p, size_t n, nt_pe_debug *out, nt_error *err);
void nt_pe_debug_free(nt_pe_debug *d);

/* ---- sym-managed.c: IL maps from the trace, modules' PDBs, IP -> file:line ---- */

typedef struct nt_mlines nt_mlines;

/* symbol_path: ':'-separated directories searched for PDBs and assemblies (NULL none);
 * root: prefix of the module paths of the trace (NULL none), as nt_native_opts.root. */
int nt_mlines_new(nt_mlines **out, const char *symbol_path, const char *root, nt_error *err);
void nt_mlines_free(nt_mlines *ml);
/* Records module, method and IL-map events (runtime and rundown). Returns 1 if used, 0
 * if not, < 0 when out of memory. */
int nt_mlines_add_event(nt_mlines *ml, const nt_event *ev);
/* The frame of a managed IP (ret: a return address, looked up at ip - 1) whose symtab
 * frame name is name ("Module!Ns.Method(sig)"): its file and line, or NULL when none
 * (then *status says why). Borrowed until nt_mlines_free(). */
const nt_native_frame *nt_mlines_resolve(nt_mlines *ml, uint64_t ip, int ret, const char *name,
					 int *status);
/* Counts for nt_profile_managed_lines(). */
size_t nt_mlines_module_count(const nt_mlines *ml);
int nt_mlines_module_at(const nt_mlines *ml, size_t i, nt_managed_module *out);
uint64_t nt_mlines_il_maps(const nt_mlines *ml);
uint64_t nt_mlines_code_versions(const nt_mlines *ml);
/* The status nt_mlines_resolve() gave (ip, ret), or -1 when it was not asked; *pdb_read
 * (if not NULL) whether the frame's module had its PDB read. */
int nt_mlines_cached_status(const nt_mlines *ml, uint64_t ip, int ret, int *pdb_read);
/* The resolver of a profile's session (finishing the profile), NULL if out of range
 * (profile.c). */
nt_mlines *nt_profile_mlines(nt_profile *p, size_t session);

#endif
