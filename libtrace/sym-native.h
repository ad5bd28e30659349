/* SPDX-License-Identifier: MIT */
/* sym-native.h - native symbols (nt_native: IP -> "module!function" frames with the DWARF
 * inline chain and file:line), the private header of its four files:
 *   sym-native.c        the resolver: arena and interned strings, address intervals,
 *                       the module map, resolving and its cache, the public API;
 *   sym-elf.c           ELF objects: open, build id, PT_LOAD, symbol tables, the
 *                       separate debug file, which DWARF handle the object uses;
 *   sym-dwarf.c         DWARF through libdwarf: attributes, origin names, the scope walk,
 *                       compile units, their index and file names;
 *   sym-dwarf-direct.c  DWARF straight from the section bytes: the DIE walk of a unit,
 *                       line programs, the sections (read with libelf).
 * These are the only files of libnettrace that include libdwarf and libelf.
 *
 * When one DWARF reader defers to the other:
 * - libdwarf always opens the DWARF, lists the compile units and their address ranges
 *   (nn_cu_index), builds each unit's file name table (dwarf_srcfiles) and follows
 *   DW_AT_abstract_origin / DW_AT_specification for names (origin names), whichever
 *   reader found the scope.
 * - Line programs are always run from the bytes (nn_run_line_program), never through
 *   libdwarf: libdwarf 20210528 gives DWARF 5 rows before the first DW_LNS_set_file the
 *   wrong file, and costs more per row.
 * - A unit's scope DIEs are walked from the bytes (nn_dr_walk) when the object allows it
 *   (nn_object.direct: NT_NATIVE_LIBDWARF_ONLY not set) and .debug_info and .debug_abbrev
 *   were read. The direct walk returns 1, "unsupported", for anything it does not know:
 *   a unit header it cannot find or read (libdwarf gave no offset, version outside 2..5,
 *   a DWARF 5 unit type other than compile/partial), an abbreviation code it cannot index
 *   (>= NN_MAX_ABBREV_CODE), an unknown form, or bytes that end early. Then everything it
 *   built for the unit is dropped and the libdwarf walk (walk() in sym-dwarf.c) reads the
 *   whole unit again, so a unit's scopes always come from one reader.
 * - tests/unit/test-dwarf.c checks both walks give the same frames.
 * - Before libdwarf sees a file, nn_object_load checks the DWARF 5 .debug_rnglists and
 *   .debug_loclists unit headers itself (libdwarf 20210528 frees memory twice on some
 *   malformed ones); a file that fails is read for its ELF symbols only. */
#ifndef NT_SYM_NATIVE_H
#define NT_SYM_NATIVE_H

#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>
/* Debian installs <libdwarf/libdwarf.h>, others <libdwarf.h> (configure.ac probes both;
 * builds without config.h, such as bench/run.sh's, ask the compiler). */
#if defined(HAVE_LIBDWARF_LIBDWARF_H)
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#elif defined(HAVE_LIBDWARF_H)
#include <dwarf.h>
#include <libdwarf.h>
#elif defined(__has_include)
#if __has_include(<libdwarf/libdwarf.h>)
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#else
#include <dwarf.h>
#include <libdwarf.h>
#endif
#else
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#endif

#define NN_NONE UINT32_MAX
/* Scope DIEs nested deeper than this are not followed: GCC and clang nest inline chains a
 * few dozen levels at most, and the libdwarf walk recurses once per level. */
#define NN_MAX_DIE_DEPTH 256u
/* DW_AT_abstract_origin / DW_AT_specification hops followed for a name (elfutils: 8). */
#define NN_MAX_ORIGIN_HOPS 8u
/* GNU build ids are 16 or 20 bytes; longer notes are not build ids we can compare. */
#define NN_MAX_BUILD_ID 64u

/* ------------------------------------------------------------------ data */

typedef struct nn_chunk {
	struct nn_chunk *next;
	size_t used, cap;   /* bytes of data */
	max_align_t data[]; /* allocations, never moved */
} nn_chunk;

/* [start, next segment's start) maps to id (NN_NONE: nothing). */
typedef struct nn_seg {
	uint64_t start;
	uint32_t id;
} nn_seg;

/* An address interval of a scope (or of a compile unit) before flattening. */
typedef struct nn_iv {
	uint64_t lo, hi;    /* [lo, hi) */
	uint32_t depth;     /* DIE nesting: inner scopes win */
	uint32_t id;
} nn_iv;

typedef struct nn_scope {
	const char *name;      /* function (interned), NULL if DWARF names none */
	const char *fname;     /* "module!name" for the module named fname_mod (a cache) */
	const char *fname_mod;
	const char *call_file; /* inlined instances: the call site, NULL if unknown */
	uint32_t call_line, call_col;
	uint32_t parent;       /* enclosing function's scope, NN_NONE for a subprogram */
} nn_scope;

typedef struct nn_row {
	uint64_t addr;
	uint32_t line;
	uint16_t file;      /* DWARF file number, NN_FILE_NONE if too large, NN_ROW_END for the
			       end_sequence row (no code from addr on) */
	uint16_t col;       /* 0 if unknown or above 65535 */
} nn_row;
#define NN_ROW_END 0xffffu
#define NN_FILE_NONE 0xfffeu

typedef struct nn_cu {
	Dwarf_Off off;      /* global offset of the CU DIE */
	uint64_t base;      /* DW_AT_low_pc: base address of DWARF 2-4 range lists */
	uint64_t line_off;  /* DW_AT_stmt_list: its line table in .debug_line */
	uint64_t hdr_off;   /* its unit header in .debug_info */
	int has_lines;
	int state;          /* 0 not parsed, 1 parsed, -1 unusable */
	nn_scope *scopes;
	size_t nscopes;
	nn_seg *segs;       /* address -> innermost scope */
	size_t nsegs;
	nn_row *rows;       /* line table, sequences sorted by address */
	size_t nrows;
	const char **files; /* by DWARF file number (interned full paths, NULL unknown) */
	size_t nfiles;
} nn_cu;

/* The DWARF sections the direct readers use (line programs, DIE walks). */
enum {
	SEC_INFO, SEC_ABBREV, SEC_STR, SEC_LINE_STR, SEC_STR_OFFSETS, SEC_ADDR, SEC_RNGLISTS,
	SEC_RANGES, SEC_LINE, SEC_LOCLISTS, SEC_COUNT
};

typedef struct nn_sec {
	const uint8_t *p;
	size_t len;
} nn_sec;

typedef struct nn_load {
	uint64_t offset, filesz, vaddr;
} nn_load;

typedef struct nn_sym {
	uint64_t addr, size;
	const char *name;   /* interned */
	int rank;           /* binding preference at equal addresses: lower wins */
} nn_sym;

typedef struct nn_oname {
	const char *linkage, *name; /* integrated over the origin chain (interned or NULL) */
} nn_oname;

/* One file on disk, shared by the mappings of the same path. */
typedef struct nn_object {
	char *path;           /* path opened (root prefix included) */
	int status;           /* enum nt_native_status of the file itself */
	char *message;        /* "" or why the status is not OK */
	char build_id[2 * NN_MAX_BUILD_ID + 1]; /* found in the file, "" if none */
	nn_load *loads;
	size_t nloads, loadcap;
	nn_sym *syms;         /* sorted by address */
	size_t nsyms, symcap;
	Dwarf_Debug dbg;      /* NULL when there is no DWARF */
	int dwfd;             /* the fd libdwarf reads, -1 if none */
	Elf *lelf;            /* libelf handle of the file with the DWARF (sections below) */
	int lfd;              /* its fd, -1 if none */
	int secs_state;       /* 0 not looked up yet, 1 done */
	nn_sec sec[SEC_COUNT]; /* DWARF sections read directly (owned by lelf), empty if none */
	int direct;           /* read DIEs directly (else only through libdwarf) */
	nn_cu *cus;
	size_t ncus;
	nn_seg *cusegs;       /* address -> compile unit */
	size_t ncusegs;
	nt_idmap origins;     /* DIE offset -> index in onames */
	nn_oname *onames;
	size_t nonames, onamecap;
} nn_object;

typedef struct nn_module {
	uint64_t base, size, file_offset;
	char *path;           /* as recorded */
	const char *name;     /* file name of path (interned) */
	char *build_id;       /* expected, lowercase hex, "" if none */
	size_t obj;           /* index in objs, SIZE_MAX until first used */
	int status;           /* enum nt_native_status for this mapping */
	const char *message;  /* "" or why (the object's, or the build id mismatch) */
	char *own_message;    /* message owned by the module (build id mismatch) */
	uint64_t lookups;
} nn_module;

typedef struct nn_centry {
	const nt_native_frame *frames;
	uint32_t n;
} nn_centry;

struct nt_native {
	unsigned flags;       /* enum nt_native_flags */
	char *root;           /* prefix of module paths, "" if none */
	char *debug_dir;      /* "" = no separate debug files */
	nn_chunk *arena;
	nt_strpool strs;       /* interned strings: names, paths, files */
	nn_module *mods;      /* insertion order */
	size_t nmods, modcap;
	nt_idmap modmap;      /* hash of a mapping -> its index in mods (duplicates) */
	nt_idmap objmap;      /* hash of a path -> its index in objs */
	uint32_t *order;      /* module indexes sorted by (base, insertion) */
	uint64_t *maxend;     /* maxend[i] = max end of order[0..i] */
	int sorted;
	nn_object *objs;
	size_t nobjs, objcap;
	nt_idmap cache;       /* ip -> index in centries */
	nn_centry *centries;
	size_t ncentries, centcap;
	/* scratch */
	char *tmp;
	size_t tmpcap;
	nt_native_frame *fv;
	size_t fvcap;
	nn_iv *ivs;
	size_t nivs, ivcap;
	nn_row *rows;         /* one unit's line rows, in program order */
	size_t rowcap;
	uint64_t *rng;        /* ranges of one DIE: lo, hi pairs */
	size_t nrng, rngcap;
};

/* What one DIE says about itself: the attributes the scope walk needs. Strings point into
 * the DWARF string sections (valid while the Dwarf_Debug is open). */
typedef struct dinfo {
	int has_lo, has_hi, hi_is_off, has_ranges, has_origin;
	uint64_t lo, hi;
	const char *name, *linkage;
	Dwarf_Off origin;       /* DW_AT_abstract_origin, else DW_AT_specification */
	int origin_is_abstract;
	uint64_t call_file, call_line, call_col;
	int has_call_file;
	uint64_t stmt_list;     /* DW_AT_stmt_list (CU DIEs) */
	int has_stmt_list;
} dinfo;

typedef struct cuwalk {
	nt_native *nn;
	nn_object *o;
	nn_cu *cu;
	Dwarf_Half version;
	size_t scap;
} cuwalk;

/* sym-native.c */
int nn_flatten(nn_iv *iv, size_t n, nn_seg **out, size_t *nout);
const char *nn_intern(nt_native *nn, const char *s);
const char *nn_intern_opt(nt_native *nn, const char *s, int *oom);
int nn_push_iv(nt_native *nn, uint64_t lo, uint64_t hi, uint32_t depth, uint32_t id);
char *nn_xstrdup_printf(const char *fmt, ...) NT_PRINTF(1, 2);

/* sym-elf.c */
int nn_file_to_vaddr(const nn_object *o, uint64_t off, uint64_t *va);
void nn_object_free(nn_object *o);
int nn_object_load(nt_native *nn, nn_object *o);
int nn_open_regular(const char *path);
const nn_sym *nn_sym_find(const nn_object *o, uint64_t addr);

/* sym-dwarf.c */
int nn_add_scope_di(cuwalk *w, const dinfo *dip, uint32_t parent, uint32_t depth,
			uint32_t *scope);
void nn_cu_free(nn_cu *cu);
int nn_cu_index(nt_native *nn, nn_object *o);
int nn_cu_parse(nt_native *nn, nn_object *o, nn_cu *cu);
int nn_dwarf_open(nn_object *o, const char *path);
int nn_push_rng(nt_native *nn, uint64_t lo, uint64_t hi);
const nn_row *nn_row_find(const nn_cu *cu, uint64_t addr);

/* sym-dwarf-direct.c */
int nn_dr_walk(cuwalk *w);
void nn_load_sections(nn_object *o);
int nn_run_line_program(const uint8_t *sec, size_t seclen, uint64_t off, nn_row **rows,
			    size_t *nrows, size_t *cap, unsigned *version);

#endif
