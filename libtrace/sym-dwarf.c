/* SPDX-License-Identifier: MIT */
/* sym-dwarf.c - native symbols: IP -> "module!function" frames, with the DWARF inline chain
 * (each inlined function a frame of its own, innermost first) and file:line, through the
 * module map the sampler records (ModuleMap events, doc/format/sampler-events.md).
 * The only file of libnettrace that includes libdwarf; libelf reads the ELF side (program
 * headers, the build-id note, symbol tables, the DWARF sections the direct readers use).
 *
 * libdwarf opens the DWARF, lists the compile units and their address ranges, builds the
 * file name tables and resolves names through DW_AT_abstract_origin/specification. Two hot
 * loops read the section bytes themselves, through bounds-checked cursors: the line
 * programs (libdwarf 20210528 gives DWARF 5 rows before the first DW_LNS_set_file the wrong
 * file) and the walk of a unit's scope DIEs (libdwarf allocates per DIE and per attribute,
 * which cost most of the time); the libdwarf walk stays as the fallback for what the direct
 * reader does not know, and as the reference tests/unit/test-dwarf.c compares it with.
 *
 * Sections, in order: arena and interned strings; intervals (scope and unit ranges
 * flattened into address segments); DWARF attributes through libdwarf; a unit's scopes via
 * libdwarf; the direct DIE reader; sections, line tables and parsing a unit; ELF objects
 * (open, build id, PT_LOAD, symbols, DWARF handle, compile-unit index); modules; resolving
 * and the cache; the public API.
 *
 * The answers are those of "eu-addr2line -i -f", "addr2line -i -f" and llvm-symbolizer for
 * the same address (tests/unit/test-dwarf.c compares them): the function is the linkage
 * name, else the name, following DW_AT_abstract_origin / DW_AT_specification; the
 * innermost frame's file:line is the last line-table row at or below the address; each
 * outer frame's is the DW_AT_call_file/line/column of the inlined instance it contains.
 * Not here: managed symbols (symtab.c); which IPs are return addresses (profile.c). */
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
static const char *const sec_names[SEC_COUNT] = {
	"info", "abbrev", "str", "line_str", "str_offsets", "addr", "rnglists", "ranges", "line",
	"loclists",
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
	/* interned strings: open addressing, power-of-two capacity */
	const char **strs;
	uint64_t *strh;
	size_t nstrs, strcap;
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

/* ------------------------------------------------------------------ arena and strings */

static void *arena_alloc(nt_native *nn, size_t size)
{
	size_t a = sizeof(max_align_t);
	if (size > SIZE_MAX - a)
		return NULL;
	size = (size + a - 1) / a * a;
	nn_chunk *c = nn->arena;
	if (!c || c->cap - c->used < size) {
		size_t cap = size > 65536 ? size : 65536;
		c = malloc(sizeof(nn_chunk) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = nn->arena;
		nn->arena = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += size;
	return p;
}

static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

static int strs_rehash(nt_native *nn)
{
	size_t ncap = nn->strcap ? nn->strcap * 2 : 1024;
	const char **s = calloc(ncap, sizeof *s);
	uint64_t *h = calloc(ncap, sizeof *h);
	if (!s || !h) {
		free(s);
		free(h);
		return -1;
	}
	for (size_t i = 0; i < nn->strcap; i++) {
		if (!nn->strs[i])
			continue;
		size_t k = (size_t)nn->strh[i] & (ncap - 1);
		while (s[k])
			k = (k + 1) & (ncap - 1);
		s[k] = nn->strs[i];
		h[k] = nn->strh[i];
	}
	free(nn->strs);
	free(nn->strh);
	nn->strs = s;
	nn->strh = h;
	nn->strcap = ncap;
	return 0;
}

/* The interned copy of s[0..len) (valid until nt_native_free()), NULL when out of memory. */
static const char *intern_n(nt_native *nn, const char *s, size_t len)
{
	if ((nn->nstrs + 1) * 2 > nn->strcap && strs_rehash(nn))
		return NULL;
	uint64_t h = str_hash(s, len);
	size_t k = (size_t)h & (nn->strcap - 1);
	while (nn->strs[k]) {
		if (nn->strh[k] == h && strncmp(nn->strs[k], s, len) == 0 &&
		    nn->strs[k][len] == '\0')
			return nn->strs[k];
		k = (k + 1) & (nn->strcap - 1);
	}
	char *c = arena_alloc(nn, len + 1);
	if (!c)
		return NULL;
	memcpy(c, s, len);
	c[len] = '\0';
	nn->strs[k] = c;
	nn->strh[k] = h;
	nn->nstrs++;
	return c;
}

static const char *intern(nt_native *nn, const char *s)
{
	return intern_n(nn, s, strlen(s));
}

/* Interns s unless NULL; sets *oom on allocation failure. */
static const char *intern_opt(nt_native *nn, const char *s, int *oom)
{
	if (!s)
		return NULL;
	const char *r = intern(nn, s);
	if (!r)
		*oom = 1;
	return r;
}

static char *xstrdup_printf(const char *fmt, ...) NT_PRINTF(1, 2);
static char *xstrdup_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* ------------------------------------------------------------------ intervals */

static int cmp_iv(const void *a, const void *b)
{
	const nn_iv *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1; /* outer first */
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int seg_emit(nn_seg **segs, size_t *n, size_t *cap, uint64_t start, uint32_t id)
{
	if (*n && (*segs)[*n - 1].start == start) {
		(*segs)[*n - 1].id = id; /* later (inner) wins at the same address */
		if (*n >= 2 && (*segs)[*n - 2].id == id)
			(*n)--;
		return 0;
	}
	if (*n && (*segs)[*n - 1].id == id)
		return 0;
	if (nt_grow((void **)segs, cap, *n + 1, sizeof(nn_seg)))
		return -1;
	(*segs)[*n].start = start;
	(*segs)[*n].id = id;
	(*n)++;
	return 0;
}

/* Flattens intervals into segments mapping each address to the innermost interval that
 * contains it (the one opened last). Valid DWARF nests scopes; an interval that overlaps
 * the end of the one it starts in is cut there, so bad input still gives a partition. */
static int flatten(nn_iv *iv, size_t n, nn_seg **out, size_t *nout)
{
	nn_seg *segs = NULL;
	size_t ns = 0, cap = 0;
	nn_iv *stack = NULL;
	size_t sp = 0;
	*out = NULL;
	*nout = 0;
	if (n == 0)
		return 0;
	qsort(iv, n, sizeof *iv, cmp_iv);
	stack = malloc(n * sizeof *stack);
	if (!stack)
		return -1;
	for (size_t i = 0; i <= n; i++) {
		/* close the intervals that end before this one starts (all of them at the end) */
		while (sp && (i == n || stack[sp - 1].hi <= iv[i].lo)) {
			uint64_t end = stack[--sp].hi;
			if (seg_emit(&segs, &ns, &cap, end, sp ? stack[sp - 1].id : NN_NONE))
				goto fail;
		}
		if (i == n)
			break;
		nn_iv v = iv[i];
		if (sp && v.hi > stack[sp - 1].hi)
			v.hi = stack[sp - 1].hi;
		if (v.hi <= v.lo)
			continue;
		stack[sp++] = v;
		if (seg_emit(&segs, &ns, &cap, v.lo, v.id))
			goto fail;
	}
	free(stack);
	*out = segs;
	*nout = ns;
	return 0;
fail:
	free(stack);
	free(segs);
	return -1;
}

/* The id of the segment holding addr, or NN_NONE. */
static uint32_t seg_find(const nn_seg *s, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? s[lo - 1].id : NN_NONE;
}

static int push_iv(nt_native *nn, uint64_t lo, uint64_t hi, uint32_t depth, uint32_t id)
{
	/* Linkers resolve addresses in discarded sections (unused COMDAT copies, gc'd
	 * functions) to 0, or to -1/-2 (lld): such intervals describe no code. */
	if (lo == 0 || hi <= lo)
		return 0;
	if (nt_grow((void **)&nn->ivs, &nn->ivcap, nn->nivs + 1, sizeof(nn_iv)))
		return -1;
	nn_iv *v = &nn->ivs[nn->nivs++];
	v->lo = lo;
	v->hi = hi;
	v->depth = depth;
	v->id = id;
	return 0;
}

/* ------------------------------------------------------------------ DWARF attributes */

static void dw_clear(Dwarf_Debug dbg, Dwarf_Error *e)
{
	if (*e) {
		dwarf_dealloc_error(dbg, *e);
		*e = NULL;
	}
}

/* An unsigned constant. DW_FORM_implicit_const (DWARF 5: the value lives in the
 * abbreviation; GCC uses it for DW_AT_call_file) is readable only through dwarf_formsdata
 * in libdwarf 20210528. Returns 1 and sets *u, or 0. */
static int form_udata(Dwarf_Debug dbg, Dwarf_Attribute at, Dwarf_Unsigned *u)
{
	Dwarf_Error e = NULL;
	Dwarf_Half form = 0;
	Dwarf_Signed sv = 0;
	int ok = 0;
	if (dwarf_whatform(at, &form, &e) != DW_DLV_OK)
		ok = 0;
	else if (form == DW_FORM_implicit_const) {
		ok = dwarf_formsdata(at, &sv, &e) == DW_DLV_OK && sv >= 0;
		*u = (Dwarf_Unsigned)sv;
	} else
		ok = dwarf_formudata(at, u, &e) == DW_DLV_OK;
	dw_clear(dbg, &e);
	return ok;
}

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

static int push_rng(nt_native *nn, uint64_t lo, uint64_t hi)
{
	if (nt_grow((void **)&nn->rng, &nn->rngcap, nn->nrng + 2, sizeof(uint64_t)))
		return -1;
	nn->rng[nn->nrng++] = lo;
	nn->rng[nn->nrng++] = hi;
	return 0;
}

/* Appends the ranges of a DW_AT_ranges attribute to nn->rng. DWARF 5 uses .debug_rnglists
 * (libdwarf cooks the entries into addresses), DWARF 2-4 .debug_ranges (entries relative to
 * the CU base address, which an address-selection entry replaces). Returns -1 only when out
 * of memory; unreadable lists are skipped. */
static int read_ranges(nt_native *nn, Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Attribute at,
		       uint64_t cu_base, Dwarf_Half version)
{
	Dwarf_Error e = NULL;
	Dwarf_Half form = 0;
	if (dwarf_whatform(at, &form, &e) != DW_DLV_OK) {
		dw_clear(dbg, &e);
		return 0;
	}
	Dwarf_Unsigned val = 0;
	if (form == DW_FORM_rnglistx || form == DW_FORM_udata || form == DW_FORM_data4 ||
	    form == DW_FORM_data8) {
		if (dwarf_formudata(at, &val, &e) != DW_DLV_OK) {
			dw_clear(dbg, &e);
			return 0;
		}
	} else {
		Dwarf_Off off = 0;
		if (dwarf_global_formref(at, &off, &e) != DW_DLV_OK) {
			dw_clear(dbg, &e);
			return 0;
		}
		val = off;
	}
	if (version >= 5 || form == DW_FORM_rnglistx) {
		Dwarf_Rnglists_Head head = NULL;
		Dwarf_Unsigned count = 0, global = 0;
		if (dwarf_rnglists_get_rle_head(at, form, val, &head, &count, &global, &e) !=
		    DW_DLV_OK) {
			dw_clear(dbg, &e);
			return 0;
		}
		int rc = 0;
		for (Dwarf_Unsigned i = 0; i < count && rc == 0; i++) {
			unsigned len = 0, code = 0;
			Dwarf_Unsigned r1 = 0, r2 = 0, c1 = 0, c2 = 0;
			Dwarf_Bool unavailable = 0;
			if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &r1, &r2,
							      &unavailable, &c1, &c2,
							      &e) != DW_DLV_OK) {
				dw_clear(dbg, &e);
				break;
			}
			if (code == DW_RLE_end_of_list)
				break;
			if (unavailable || code == DW_RLE_base_address ||
			    code == DW_RLE_base_addressx)
				continue;
			rc = push_rng(nn, c1, c2);
		}
		dwarf_dealloc_rnglists_head(head);
		return rc;
	}
	Dwarf_Ranges *r = NULL;
	Dwarf_Signed n = 0;
	Dwarf_Unsigned bytes = 0;
	Dwarf_Off real = 0;
	if (dwarf_get_ranges_b(dbg, val, die, &real, &r, &n, &bytes, &e) != DW_DLV_OK) {
		dw_clear(dbg, &e);
		return 0;
	}
	int rc = 0;
	uint64_t base = cu_base;
	for (Dwarf_Signed i = 0; i < n && rc == 0; i++) {
		if (r[i].dwr_type == DW_RANGES_END)
			break;
		if (r[i].dwr_type == DW_RANGES_ADDRESS_SELECTION) {
			base = r[i].dwr_addr2;
			continue;
		}
		rc = push_rng(nn, base + r[i].dwr_addr1, base + r[i].dwr_addr2);
	}
	dwarf_ranges_dealloc(dbg, r, n);
	return rc;
}

/* Reads the attributes of die into *di; with want_ranges, DW_AT_ranges lists go to
 * nn->rng (reset first). Returns -1 only when out of memory. */
static int read_die(nt_native *nn, Dwarf_Debug dbg, Dwarf_Die die, int want_ranges,
		    uint64_t cu_base, Dwarf_Half version, dinfo *di)
{
	memset(di, 0, sizeof *di);
	nn->nrng = 0;
	Dwarf_Error e = NULL;
	Dwarf_Attribute *al = NULL;
	Dwarf_Signed n = 0;
	int rc = dwarf_attrlist(die, &al, &n, &e);
	if (rc != DW_DLV_OK) {
		dw_clear(dbg, &e);
		return 0;
	}
	int ret = 0;
	for (Dwarf_Signed i = 0; i < n; i++) {
		Dwarf_Attribute at = al[i];
		Dwarf_Half an = 0, form = 0;
		Dwarf_Unsigned u = 0;
		Dwarf_Addr a = 0;
		Dwarf_Off off = 0;
		char *s = NULL;
		if (ret || dwarf_whatattr(at, &an, &e) != DW_DLV_OK) {
			dw_clear(dbg, &e);
			continue;
		}
		switch (an) {
		case DW_AT_low_pc:
			if (dwarf_formaddr(at, &a, &e) == DW_DLV_OK) {
				di->lo = a;
				di->has_lo = 1;
			}
			break;
		case DW_AT_high_pc:
			if (dwarf_whatform(at, &form, &e) != DW_DLV_OK)
				break;
			if (form == DW_FORM_addr || dwarf_addr_form_is_indexed(form)) {
				if (dwarf_formaddr(at, &a, &e) == DW_DLV_OK) {
					di->hi = a;
					di->has_hi = 1;
				}
			} else if (form_udata(dbg, at, &u)) {
				di->hi = u;
				di->has_hi = 1;
				di->hi_is_off = 1;
			}
			break;
		case DW_AT_ranges:
			if (want_ranges) {
				if (read_ranges(nn, dbg, die, at, cu_base, version))
					ret = -1;
				di->has_ranges = 1;
			}
			break;
		case DW_AT_name:
			if (dwarf_formstring(at, &s, &e) == DW_DLV_OK)
				di->name = s;
			break;
		case DW_AT_linkage_name:
		case DW_AT_MIPS_linkage_name:
			if (dwarf_formstring(at, &s, &e) == DW_DLV_OK)
				di->linkage = s;
			break;
		case DW_AT_abstract_origin:
		case DW_AT_specification:
			/* abstract_origin first, as elfutils' dwarf_attr_integrate; references
			 * into a supplementary file (dwz) cannot be followed here */
			if (di->origin_is_abstract || dwarf_whatform(at, &form, &e) != DW_DLV_OK)
				break;
			if (form == DW_FORM_GNU_ref_alt || form == DW_FORM_ref_sup4 ||
			    form == DW_FORM_ref_sup8 || form == DW_FORM_ref_sig8)
				break;
			if (dwarf_global_formref(at, &off, &e) == DW_DLV_OK) {
				di->origin = off;
				di->has_origin = 1;
				di->origin_is_abstract = an == DW_AT_abstract_origin;
			}
			break;
		case DW_AT_call_file:
			if (form_udata(dbg, at, &u)) {
				di->call_file = u;
				di->has_call_file = 1;
			}
			break;
		case DW_AT_call_line:
			if (form_udata(dbg, at, &u))
				di->call_line = u;
			break;
		case DW_AT_call_column:
			if (form_udata(dbg, at, &u))
				di->call_col = u;
			break;
		case DW_AT_stmt_list:
			if (dwarf_global_formref(at, &off, &e) == DW_DLV_OK) {
				di->stmt_list = off;
				di->has_stmt_list = 1;
			} else {
				dw_clear(dbg, &e);
				if (form_udata(dbg, at, &u)) {
					di->stmt_list = u;
					di->has_stmt_list = 1;
				}
			}
			break;
		default:
			break;
		}
		dw_clear(dbg, &e);
	}
	for (Dwarf_Signed i = 0; i < n; i++)
		dwarf_dealloc_attribute(al[i]);
	dwarf_dealloc(dbg, al, DW_DLA_LIST);
	if (di->has_hi && di->hi_is_off)
		di->hi = di->has_lo ? di->lo + di->hi : 0;
	return ret;
}

/* Names of the DIE at off integrated over its origin chain, cached per DIE: the first
 * linkage name and the first name found along DW_AT_abstract_origin / DW_AT_specification
 * links, as elfutils' dwarf_attr_integrate. Returns -1 only when out of memory. */
static int origin_names(nt_native *nn, nn_object *o, Dwarf_Off off, unsigned hops,
			nn_oname *out)
{
	size_t idx;
	out->linkage = out->name = NULL;
	if (nt_idmap_get(&o->origins, off, &idx)) {
		*out = o->onames[idx];
		return 0;
	}
	Dwarf_Error e = NULL;
	Dwarf_Die d = NULL;
	dinfo di;
	if (dwarf_offdie_b(o->dbg, off, 1, &d, &e) != DW_DLV_OK) {
		dw_clear(o->dbg, &e);
		memset(&di, 0, sizeof di);
	} else {
		int rc = read_die(nn, o->dbg, d, 0, 0, 0, &di);
		dwarf_dealloc_die(d);
		if (rc)
			return -1;
	}
	int oom = 0;
	out->linkage = intern_opt(nn, di.linkage, &oom);
	out->name = intern_opt(nn, di.name, &oom);
	if (oom)
		return -1;
	if ((!out->linkage || !out->name) && di.has_origin && di.origin != off &&
	    hops < NN_MAX_ORIGIN_HOPS) {
		nn_oname up;
		if (origin_names(nn, o, di.origin, hops + 1, &up))
			return -1;
		if (!out->linkage)
			out->linkage = up.linkage;
		if (!out->name)
			out->name = up.name;
	}
	if (nt_grow((void **)&o->onames, &o->onamecap, o->nonames + 1, sizeof(nn_oname)) ||
	    nt_idmap_put(&o->origins, off, o->nonames))
		return -1;
	o->onames[o->nonames++] = *out;
	return 0;
}

/* ------------------------------------------------------------------ scopes via libdwarf */

typedef struct cuwalk {
	nt_native *nn;
	nn_object *o;
	nn_cu *cu;
	Dwarf_Half version;
	size_t scap;
} cuwalk;

/* Adds the scope of a subprogram or inlined instance (parent NN_NONE for a subprogram).
 * *scope gets its index, or NN_NONE when the DIE covers no code (a declaration, an
 * abstract instance): then its children are not walked. */
static int add_scope_di(cuwalk *w, const dinfo *dip, uint32_t parent, uint32_t depth,
			uint32_t *scope)
{
	nt_native *nn = w->nn;
	nn_cu *cu = w->cu;
	dinfo di = *dip;
	*scope = NN_NONE;
	if (!di.has_ranges && !(di.has_lo && di.has_hi))
		return 0;
	if (cu->nscopes >= NN_NONE - 1)
		return 0; /* more scopes than ids: ignore the rest */
	uint32_t id = (uint32_t)cu->nscopes;
	size_t before = nn->nivs;
	if (di.has_ranges) {
		for (size_t i = 0; i + 1 < nn->nrng; i += 2)
			if (push_iv(nn, nn->rng[i], nn->rng[i + 1], depth, id))
				return -1;
	} else if (push_iv(nn, di.lo, di.hi, depth, id)) {
		return -1;
	}
	if (nn->nivs == before)
		return 0; /* only discarded code */
	nn_oname on = {di.linkage, di.name};
	int oom = 0;
	on.linkage = intern_opt(nn, on.linkage, &oom);
	on.name = intern_opt(nn, on.name, &oom);
	if (oom)
		return -1;
	if ((!on.linkage || !on.name) && di.has_origin) {
		nn_oname up;
		if (origin_names(nn, w->o, di.origin, 1, &up))
			return -1;
		if (!on.linkage)
			on.linkage = up.linkage;
		if (!on.name)
			on.name = up.name;
	}
	if (nt_grow((void **)&cu->scopes, &w->scap, cu->nscopes + 1, sizeof(nn_scope)))
		return -1;
	nn_scope *s = &cu->scopes[cu->nscopes++];
	s->name = on.linkage ? on.linkage : on.name;
	s->fname = s->fname_mod = NULL;
	s->parent = parent;
	s->call_file = NULL;
	if (di.has_call_file && di.call_file < cu->nfiles)
		s->call_file = cu->files[di.call_file];
	s->call_line = di.call_line > UINT32_MAX ? 0 : (uint32_t)di.call_line;
	s->call_col = di.call_col > UINT32_MAX ? 0 : (uint32_t)di.call_col;
	*scope = id;
	return 0;
}

/* add_scope_di() for a DIE read through libdwarf. */
static int add_scope(cuwalk *w, Dwarf_Die d, uint32_t parent, uint32_t depth, uint32_t *scope)
{
	dinfo di;
	*scope = NN_NONE;
	if (read_die(w->nn, w->o->dbg, d, 1, w->cu->base, w->version, &di))
		return -1;
	return add_scope_di(w, &di, parent, depth, scope);
}

/* Walks the siblings from first (and the children that can hold code), adding scopes.
 * Takes ownership of first. Returns -1 only when out of memory. */
static int walk(cuwalk *w, Dwarf_Die first, uint32_t parent, uint32_t depth)
{
	Dwarf_Debug dbg = w->o->dbg;
	Dwarf_Die d = first;
	int rc = 0;
	while (d && rc == 0) {
		Dwarf_Error e = NULL;
		Dwarf_Half tag = 0;
		if (dwarf_tag(d, &tag, &e) != DW_DLV_OK)
			dw_clear(dbg, &e);
		uint32_t scope = parent;
		int descend = 0;
		switch (tag) {
		case DW_TAG_subprogram:
			/* a nested function is a function of its own, not part of its parent */
			rc = add_scope(w, d, NN_NONE, depth, &scope);
			descend = scope != NN_NONE;
			break;
		case DW_TAG_inlined_subroutine:
			rc = add_scope(w, d, parent, depth, &scope);
			descend = scope != NN_NONE;
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_namespace:
			descend = 1;
			break;
		default:
			break;
		}
		if (rc == 0 && descend && depth < NN_MAX_DIE_DEPTH) {
			Dwarf_Die child = NULL;
			int r = dwarf_child(d, &child, &e);
			if (r == DW_DLV_OK)
				rc = walk(w, child, scope, depth + 1);
			else
				dw_clear(dbg, &e);
		}
		Dwarf_Die next = NULL;
		int r = rc ? DW_DLV_NO_ENTRY : dwarf_siblingof_b(dbg, d, 1, &next, &e);
		dw_clear(dbg, &e);
		dwarf_dealloc_die(d);
		d = r == DW_DLV_OK ? next : NULL;
	}
	if (d)
		dwarf_dealloc_die(d);
	return rc;
}

/* Signed LEB128 (at most 10 bytes). */
static int cur_sleb(nt_cursor *c, int64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (int i = 0; i < 10; i++) {
		uint8_t b;
		if (nt_cur_u8(c, &b))
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~0ull << shift;
			*out = (int64_t)v;
			return 0;
		}
	}
	return -1;
}

/* ------------------------------------------------------------------ direct DIE reader */

/* The walk above costs an allocation per DIE and per attribute inside libdwarf, most of the
 * time spent symbolizing. This reader walks the same DIEs of a unit straight from the
 * section bytes (DWARF 2-5 unit headers, abbreviations, forms; DWARF 5 section 7.5),
 * through bounds-checked cursors, and builds the same scopes with add_scope_di(). It
 * answers "unsupported" (and the libdwarf walk runs instead) for anything it does not
 * know: an unknown form, a unit type without code, abbreviation codes it cannot index,
 * malformed bytes. tests/unit/test-dwarf.c checks both walks give the same frames. */

/* Forms of DWARF 5 (7.5.6) and the GNU ones GCC emits (not in libdwarf 20210528's dwarf.h
 * under these names everywhere, hence the numbers). */
#define NN_FORM_GNU_ADDR_INDEX 0x1f01
#define NN_FORM_GNU_STR_INDEX 0x1f02
#define NN_FORM_GNU_REF_ALT 0x1f20
#define NN_FORM_GNU_STRP_ALT 0x1f21
#define NN_AT_GNU_ADDR_BASE 0x2133
/* Abbreviation codes are indexed directly; GCC and clang number them 1..n. */
#define NN_MAX_ABBREV_CODE 65536u

typedef struct nn_aspec {
	uint32_t at, form;
	int64_t implicit;   /* DW_FORM_implicit_const value */
} nn_aspec;

enum { K_SKIP = 0, K_SUBPROGRAM, K_INLINED, K_DESCEND, K_UNIT };

typedef struct nn_abbrev {
	uint32_t first, n;  /* specs[first, first + n) */
	int32_t fixed;      /* size of the attributes when every form has a fixed size, else -1 */
	uint8_t kind;       /* K_*: what the walk does with the DIE */
	uint8_t children;
	uint8_t valid;
} nn_abbrev;

typedef struct dread {
	nt_native *nn;
	nn_object *o;
	uint64_t unit_off, unit_end; /* the unit in .debug_info: [unit_off, unit_end) */
	uint16_t version;
	uint8_t addr_size, off_size;
	uint64_t str_offsets_base, addr_base, rnglists_base;
	int has_addr_base, has_rnglists_base, has_str_offsets_base;
	nn_abbrev *ab;      /* by code */
	size_t nab;
	nn_aspec *specs;
	size_t nspecs, speccap;
} dread;

/* Value classes of a form, as far as the walk needs them. */
enum {
	CL_NONE = 0, CL_CONST, CL_SCONST, CL_ADDR, CL_ADDRX, CL_REF, CL_REFADDR, CL_STRP,
	CL_LINESTRP, CL_STRX, CL_STRING, CL_SECOFF, CL_RNGLISTX, CL_OTHER
};

static int cur_uleb(nt_cursor *c, uint64_t *v)
{
	return nt_cur_varu64(c, v) ? -1 : 0;
}

/* An offset_size (4 or 8) or address_size (1..8) little-endian integer. */
static int cur_uN(nt_cursor *c, unsigned n, uint64_t *v)
{
	const uint8_t *b;
	if (n == 0 || n > 8 || nt_cur_bytes(c, n, &b))
		return -1;
	uint64_t x = 0;
	for (unsigned i = 0; i < n; i++)
		x |= (uint64_t)b[i] << (8 * i);
	*v = x;
	return 0;
}

/* Fixed size of a form's value in this unit, -1 when variable, -2 when unknown. */
static int form_size(const dread *r, uint32_t form)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const: return 0;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1: return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2: return 2;
	case DW_FORM_strx3:
	case DW_FORM_addrx3: return 3;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_ref_sup4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4: return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8: return 8;
	case DW_FORM_data16: return 16;
	case DW_FORM_addr: return r->addr_size;
	case DW_FORM_ref_addr: return r->version <= 2 ? r->addr_size : r->off_size;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case NN_FORM_GNU_REF_ALT:
	case NN_FORM_GNU_STRP_ALT: return r->off_size;
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
	case DW_FORM_block:
	case DW_FORM_exprloc:
	case DW_FORM_string:
	case DW_FORM_udata:
	case DW_FORM_sdata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_indirect:
	case NN_FORM_GNU_ADDR_INDEX:
	case NN_FORM_GNU_STR_INDEX: return -1;
	default: return -2;
	}
}

/* Reads one attribute value: *cls and *v (for CL_STRING, the offset of the string in
 * .debug_info). Returns 0, or 1 when the bytes or the form are not what we can read. */
static int read_form(const dread *r, nt_cursor *c, uint32_t form, int64_t implicit, int *cls,
		     uint64_t *v)
{
	const uint8_t *b;
	uint64_t n;
	*v = 0;
	*cls = CL_OTHER;
	switch (form) {
	case DW_FORM_flag_present: *cls = CL_CONST; *v = 1; return 0;
	case DW_FORM_implicit_const: *cls = CL_SCONST; *v = (uint64_t)implicit; return 0;
	case DW_FORM_data1: case DW_FORM_flag: *cls = CL_CONST; return cur_uN(c, 1, v) ? 1 : 0;
	case DW_FORM_data2: *cls = CL_CONST; return cur_uN(c, 2, v) ? 1 : 0;
	case DW_FORM_data4: *cls = CL_CONST; return cur_uN(c, 4, v) ? 1 : 0;
	case DW_FORM_data8: *cls = CL_CONST; return cur_uN(c, 8, v) ? 1 : 0;
	case DW_FORM_udata: *cls = CL_CONST; return cur_uleb(c, v) ? 1 : 0;
	case DW_FORM_sdata: {
		int64_t sv;
		*cls = CL_SCONST;
		if (cur_sleb(c, &sv))
			return 1;
		*v = (uint64_t)sv;
		return 0;
	}
	case DW_FORM_ref1: *cls = CL_REF; return cur_uN(c, 1, v) ? 1 : 0;
	case DW_FORM_ref2: *cls = CL_REF; return cur_uN(c, 2, v) ? 1 : 0;
	case DW_FORM_ref4: *cls = CL_REF; return cur_uN(c, 4, v) ? 1 : 0;
	case DW_FORM_ref8: *cls = CL_REF; return cur_uN(c, 8, v) ? 1 : 0;
	case DW_FORM_ref_udata: *cls = CL_REF; return cur_uleb(c, v) ? 1 : 0;
	case DW_FORM_ref_addr:
		*cls = CL_REFADDR;
		return cur_uN(c, r->version <= 2 ? r->addr_size : r->off_size, v) ? 1 : 0;
	case DW_FORM_addr: *cls = CL_ADDR; return cur_uN(c, r->addr_size, v) ? 1 : 0;
	case DW_FORM_addrx1: *cls = CL_ADDRX; return cur_uN(c, 1, v) ? 1 : 0;
	case DW_FORM_addrx2: *cls = CL_ADDRX; return cur_uN(c, 2, v) ? 1 : 0;
	case DW_FORM_addrx3: *cls = CL_ADDRX; return cur_uN(c, 3, v) ? 1 : 0;
	case DW_FORM_addrx4: *cls = CL_ADDRX; return cur_uN(c, 4, v) ? 1 : 0;
	case DW_FORM_addrx:
	case NN_FORM_GNU_ADDR_INDEX: *cls = CL_ADDRX; return cur_uleb(c, v) ? 1 : 0;
	case DW_FORM_strp: *cls = CL_STRP; return cur_uN(c, r->off_size, v) ? 1 : 0;
	case DW_FORM_line_strp: *cls = CL_LINESTRP; return cur_uN(c, r->off_size, v) ? 1 : 0;
	case DW_FORM_strx1: *cls = CL_STRX; return cur_uN(c, 1, v) ? 1 : 0;
	case DW_FORM_strx2: *cls = CL_STRX; return cur_uN(c, 2, v) ? 1 : 0;
	case DW_FORM_strx3: *cls = CL_STRX; return cur_uN(c, 3, v) ? 1 : 0;
	case DW_FORM_strx4: *cls = CL_STRX; return cur_uN(c, 4, v) ? 1 : 0;
	case DW_FORM_strx:
	case NN_FORM_GNU_STR_INDEX: *cls = CL_STRX; return cur_uleb(c, v) ? 1 : 0;
	case DW_FORM_string: {
		size_t left = nt_cur_left(c);
		const uint8_t *z = memchr(c->p + c->pos, 0, left);
		if (!z)
			return 1;
		*cls = CL_STRING;
		*v = nt_cur_offset(c);
		c->pos += (size_t)(z - (c->p + c->pos)) + 1;
		return 0;
	}
	case DW_FORM_sec_offset: *cls = CL_SECOFF; return cur_uN(c, r->off_size, v) ? 1 : 0;
	case DW_FORM_rnglistx: *cls = CL_RNGLISTX; return cur_uleb(c, v) ? 1 : 0;
	case DW_FORM_loclistx: return cur_uleb(c, v) ? 1 : 0;
	case DW_FORM_strp_sup:
	case NN_FORM_GNU_REF_ALT:
	case NN_FORM_GNU_STRP_ALT: return cur_uN(c, r->off_size, v) ? 1 : 0;
	case DW_FORM_ref_sup4: return nt_cur_skip(c, 4) ? 1 : 0;
	case DW_FORM_ref_sup8:
	case DW_FORM_ref_sig8: return nt_cur_skip(c, 8) ? 1 : 0;
	case DW_FORM_data16: return nt_cur_skip(c, 16) ? 1 : 0;
	case DW_FORM_block1:
		if (cur_uN(c, 1, &n))
			return 1;
		return nt_cur_bytes(c, (size_t)n, &b) ? 1 : 0;
	case DW_FORM_block2:
		if (cur_uN(c, 2, &n))
			return 1;
		return nt_cur_bytes(c, (size_t)n, &b) ? 1 : 0;
	case DW_FORM_block4:
		if (cur_uN(c, 4, &n))
			return 1;
		return n > nt_cur_left(c) || nt_cur_bytes(c, (size_t)n, &b) ? 1 : 0;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		if (cur_uleb(c, &n))
			return 1;
		return n > nt_cur_left(c) || nt_cur_bytes(c, (size_t)n, &b) ? 1 : 0;
	default:
		return 1; /* DW_FORM_indirect and unknown forms: unsupported */
	}
}

/* A string of class cls at v, or NULL (unknown class, or not NUL-terminated in its section). */
static const char *dr_string(const dread *r, int cls, uint64_t v)
{
	const nn_sec *sec;
	if (cls == CL_STRX) {
		const nn_sec *so = &r->o->sec[SEC_STR_OFFSETS];
		if (!r->has_str_offsets_base || v > (so->len / r->off_size))
			return NULL;
		uint64_t at = r->str_offsets_base + v * r->off_size;
		nt_cursor c;
		if (at > so->len)
			return NULL;
		nt_cur_init(&c, so->p + at, so->len - at, at);
		if (cur_uN(&c, r->off_size, &v))
			return NULL;
		cls = CL_STRP;
	}
	if (cls == CL_STRP)
		sec = &r->o->sec[SEC_STR];
	else if (cls == CL_LINESTRP)
		sec = &r->o->sec[SEC_LINE_STR];
	else if (cls == CL_STRING)
		sec = &r->o->sec[SEC_INFO];
	else
		return NULL;
	if (v >= sec->len || !memchr(sec->p + v, 0, sec->len - v))
		return NULL;
	return (const char *)sec->p + v;
}

/* The address at index idx of the unit's .debug_addr table; 0 if unavailable. */
static int dr_addrx(const dread *r, uint64_t idx, uint64_t *out)
{
	const nn_sec *s = &r->o->sec[SEC_ADDR];
	if (!r->has_addr_base || idx > s->len / r->addr_size)
		return -1;
	uint64_t at = r->addr_base + idx * r->addr_size;
	if (at > s->len)
		return -1;
	nt_cursor c;
	nt_cur_init(&c, s->p + at, s->len - at, at);
	return cur_uN(&c, r->addr_size, out);
}

/* Appends the ranges of DW_AT_ranges (class cls, value v) to nn->rng, as read_ranges() does
 * through libdwarf. Returns 0, -1 when out of memory, 1 when unsupported. */
static int dr_ranges(const dread *r, int cls, uint64_t v, uint64_t base)
{
	nt_native *nn = r->nn;
	nt_cursor c;
	if (r->version >= 5 || cls == CL_RNGLISTX) {
		const nn_sec *s = &r->o->sec[SEC_RNGLISTS];
		uint64_t off = v;
		if (cls == CL_RNGLISTX) {
			/* offsets table after the rnglists header, entries relative to its base */
			uint64_t at;
			if (!r->has_rnglists_base || v > s->len / r->off_size)
				return 1;
			at = r->rnglists_base + v * r->off_size;
			if (at > s->len)
				return 1;
			nt_cur_init(&c, s->p + at, s->len - at, at);
			if (cur_uN(&c, r->off_size, &off))
				return 1;
			off += r->rnglists_base;
		} else if (cls != CL_SECOFF && cls != CL_CONST) {
			return 1;
		}
		if (off >= s->len)
			return 1;
		nt_cur_init(&c, s->p + off, s->len - off, off);
		for (;;) {
			uint8_t kind;
			uint64_t a, b;
			if (nt_cur_u8(&c, &kind))
				return 1;
			switch (kind) {
			case DW_RLE_end_of_list: return 0;
			case DW_RLE_base_addressx:
				if (cur_uleb(&c, &a) || dr_addrx(r, a, &base))
					return 1;
				break;
			case DW_RLE_startx_endx:
				if (cur_uleb(&c, &a) || cur_uleb(&c, &b) || dr_addrx(r, a, &a) ||
				    dr_addrx(r, b, &b))
					return 1;
				if (push_rng(nn, a, b))
					return -1;
				break;
			case DW_RLE_startx_length:
				if (cur_uleb(&c, &a) || cur_uleb(&c, &b) || dr_addrx(r, a, &a))
					return 1;
				if (push_rng(nn, a, a + b))
					return -1;
				break;
			case DW_RLE_offset_pair:
				if (cur_uleb(&c, &a) || cur_uleb(&c, &b))
					return 1;
				if (push_rng(nn, base + a, base + b))
					return -1;
				break;
			case DW_RLE_base_address:
				if (cur_uN(&c, r->addr_size, &base))
					return 1;
				break;
			case DW_RLE_start_end:
				if (cur_uN(&c, r->addr_size, &a) || cur_uN(&c, r->addr_size, &b))
					return 1;
				if (push_rng(nn, a, b))
					return -1;
				break;
			case DW_RLE_start_length:
				if (cur_uN(&c, r->addr_size, &a) || cur_uleb(&c, &b))
					return 1;
				if (push_rng(nn, a, a + b))
					return -1;
				break;
			default:
				return 1;
			}
		}
	}
	/* DWARF 2-4 .debug_ranges: address pairs; (0, 0) ends, (max, x) sets the base */
	const nn_sec *s = &r->o->sec[SEC_RANGES];
	if ((cls != CL_SECOFF && cls != CL_CONST) || v >= s->len)
		return 1;
	uint64_t maxa = r->addr_size >= 8 ? UINT64_MAX : (1ull << (8 * r->addr_size)) - 1;
	nt_cur_init(&c, s->p + v, s->len - v, v);
	for (;;) {
		uint64_t a, b;
		if (cur_uN(&c, r->addr_size, &a) || cur_uN(&c, r->addr_size, &b))
			return 1;
		if (a == 0 && b == 0)
			return 0;
		if (a == maxa) {
			base = b;
			continue;
		}
		if (push_rng(nn, base + a, base + b))
			return -1;
	}
}

/* Reads the unit header at hdr_off and the abbreviation table it names. *c is left at the
 * first DIE. Returns 0, -1 when out of memory, 1 when unsupported. */
static int dr_open(dread *r, uint64_t hdr_off, nt_cursor *c)
{
	const nn_sec *info = &r->o->sec[SEC_INFO], *abbr = &r->o->sec[SEC_ABBREV];
	uint32_t l32;
	uint64_t len, aoff = 0;
	uint8_t utype = DW_UT_compile, asz = 0;
	if (hdr_off >= info->len)
		return 1;
	nt_cur_init(c, info->p + hdr_off, info->len - hdr_off, hdr_off);
	if (nt_cur_u32(c, &l32))
		return 1;
	r->off_size = 4;
	if (l32 == 0xffffffffu) {
		if (nt_cur_u64(c, &len))
			return 1;
		r->off_size = 8;
	} else if (l32 >= 0xfffffff0u) {
		return 1;
	} else {
		len = l32;
	}
	if (len > nt_cur_left(c))
		return 1;
	r->unit_off = hdr_off;
	r->unit_end = nt_cur_offset(c) + len;
	c->len = c->pos + (size_t)len; /* the unit only */
	if (nt_cur_u16(c, &r->version) || r->version < 2 || r->version > 5)
		return 1;
	if (r->version >= 5) {
		if (nt_cur_u8(c, &utype) || nt_cur_u8(c, &asz) || cur_uN(c, r->off_size, &aoff))
			return 1;
		if (utype != DW_UT_compile && utype != DW_UT_partial)
			return 1; /* type, skeleton and split units hold no code we can read */
	} else if (cur_uN(c, r->off_size, &aoff) || nt_cur_u8(c, &asz)) {
		return 1;
	}
	if ((asz != 4 && asz != 8) || aoff >= abbr->len)
		return 1;
	r->addr_size = asz;
	/* the abbreviation table: code, tag, children, then (attribute, form) pairs */
	nt_cursor a;
	nt_cur_init(&a, abbr->p + aoff, abbr->len - aoff, aoff);
	for (;;) {
		uint64_t code, tag, at, form;
		uint8_t ch;
		if (cur_uleb(&a, &code))
			return 1;
		if (code == 0)
			break;
		if (code >= NN_MAX_ABBREV_CODE || cur_uleb(&a, &tag) || nt_cur_u8(&a, &ch))
			return 1;
		if (code >= r->nab) {
			size_t want = (size_t)code + 1, cap = r->nab;
			if (nt_grow((void **)&r->ab, &cap, want, sizeof(nn_abbrev)))
				return -1;
			memset(r->ab + r->nab, 0, (cap - r->nab) * sizeof(nn_abbrev));
			r->nab = cap;
		}
		nn_abbrev *ab = &r->ab[code];
		if (ab->valid)
			return 1; /* a code defined twice */
		ab->valid = 1;
		ab->children = ch != 0;
		ab->first = (uint32_t)r->nspecs;
		ab->fixed = 0;
		switch (tag) {
		case DW_TAG_subprogram: ab->kind = K_SUBPROGRAM; break;
		case DW_TAG_inlined_subroutine: ab->kind = K_INLINED; break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_namespace: ab->kind = K_DESCEND; break;
		case DW_TAG_compile_unit:
		case DW_TAG_partial_unit: ab->kind = K_UNIT; break;
		default: ab->kind = K_SKIP; break;
		}
		for (;;) {
			int64_t imp = 0;
			if (cur_uleb(&a, &at) || cur_uleb(&a, &form))
				return 1;
			if (at == 0 && form == 0)
				break;
			if (form == DW_FORM_implicit_const && cur_sleb(&a, &imp))
				return 1;
			int sz = form_size(r, (uint32_t)form);
			if (sz == -2 || at > UINT32_MAX || r->nspecs >= UINT32_MAX)
				return 1;
			if (sz < 0)
				ab->fixed = -1;
			else if (ab->fixed >= 0)
				ab->fixed += sz;
			if (nt_grow((void **)&r->specs, &r->speccap, r->nspecs + 1,
				    sizeof(nn_aspec)))
				return -1;
			r->specs[r->nspecs].at = (uint32_t)at;
			r->specs[r->nspecs].form = (uint32_t)form;
			r->specs[r->nspecs++].implicit = imp;
			ab->n++;
		}
	}
	return 0;
}

/* Reads the attributes of a DIE with abbreviation ab into *di (ranges into nn->rng), as
 * read_die() does through libdwarf; *sibling gets DW_AT_sibling's offset or 0. Returns 0,
 * -1 when out of memory, 1 when unsupported. */
static int dr_attrs(dread *r, nt_cursor *c, const nn_abbrev *ab, uint64_t cu_base, dinfo *di,
		    uint64_t *sibling)
{
	memset(di, 0, sizeof *di);
	r->nn->nrng = 0;
	*sibling = 0;
	int lo_cls = 0, hi_cls = 0, rng_cls = 0;
	uint64_t lo = 0, hi = 0, rng = 0;
	for (uint32_t i = 0; i < ab->n; i++) {
		const nn_aspec *sp = &r->specs[ab->first + i];
		int cls;
		uint64_t v;
		if (read_form(r, c, sp->form, sp->implicit, &cls, &v))
			return 1;
		switch (sp->at) {
		case DW_AT_sibling:
			if (cls == CL_REF)
				*sibling = r->unit_off + v;
			break;
		case DW_AT_low_pc: lo_cls = cls; lo = v; break;
		case DW_AT_high_pc: hi_cls = cls; hi = v; break;
		case DW_AT_ranges: rng_cls = cls; rng = v; break;
		case DW_AT_name: di->name = dr_string(r, cls, v); break;
		case DW_AT_linkage_name:
		case DW_AT_MIPS_linkage_name: di->linkage = dr_string(r, cls, v); break;
		case DW_AT_abstract_origin:
		case DW_AT_specification:
			if (di->origin_is_abstract || (cls != CL_REF && cls != CL_REFADDR))
				break;
			di->origin = cls == CL_REF ? r->unit_off + v : v;
			di->has_origin = 1;
			di->origin_is_abstract = sp->at == DW_AT_abstract_origin;
			break;
		case DW_AT_call_file:
			if ((cls == CL_CONST || cls == CL_SCONST) && (int64_t)v >= 0) {
				di->call_file = v;
				di->has_call_file = 1;
			}
			break;
		case DW_AT_call_line:
			if ((cls == CL_CONST || cls == CL_SCONST) && (int64_t)v >= 0)
				di->call_line = v;
			break;
		case DW_AT_call_column:
			if ((cls == CL_CONST || cls == CL_SCONST) && (int64_t)v >= 0)
				di->call_col = v;
			break;
		default:
			break;
		}
	}
	if (lo_cls == CL_ADDR || (lo_cls == CL_ADDRX && dr_addrx(r, lo, &lo) == 0)) {
		di->lo = lo;
		di->has_lo = 1;
	}
	if (hi_cls == CL_ADDR || (hi_cls == CL_ADDRX && dr_addrx(r, hi, &hi) == 0)) {
		di->hi = hi;
		di->has_hi = 1;
	} else if (hi_cls == CL_CONST || hi_cls == CL_SCONST) {
		di->hi = di->has_lo ? di->lo + hi : 0; /* DWARF 4+: an offset from low_pc */
		di->has_hi = 1;
	}
	if (rng_cls) {
		int rc = dr_ranges(r, rng_cls, rng, cu_base);
		if (rc)
			return rc;
		di->has_ranges = 1;
	}
	return 0;
}

/* Skips the attributes of a DIE; *sibling as in dr_attrs(). Returns 0 or 1. */
static int dr_skip(dread *r, nt_cursor *c, const nn_abbrev *ab, uint64_t *sibling)
{
	*sibling = 0;
	if (ab->fixed >= 0)
		return nt_cur_skip(c, (size_t)ab->fixed) ? 1 : 0;
	for (uint32_t i = 0; i < ab->n; i++) {
		const nn_aspec *sp = &r->specs[ab->first + i];
		int cls;
		uint64_t v;
		if (read_form(r, c, sp->form, sp->implicit, &cls, &v))
			return 1;
		if (sp->at == DW_AT_sibling && cls == CL_REF)
			*sibling = r->unit_off + v;
	}
	return 0;
}

/* Walks the DIEs of w->cu as walk() does, straight from the bytes. Returns 0, -1 when out of
 * memory, 1 when unsupported (nothing of the unit is kept then: the caller resets it). */
static int dr_walk(cuwalk *w)
{
	nn_object *o = w->o;
	dread r;
	nt_cursor c;
	memset(&r, 0, sizeof r);
	r.nn = w->nn;
	r.o = o;
	int rc = dr_open(&r, w->cu->hdr_off, &c);
	/* the unit DIE: bases of the DWARF 5 index forms, then the walk of its children */
	uint64_t code, sib;
	const nn_abbrev *ab = NULL;
	if (rc == 0 && (cur_uleb(&c, &code) || code >= r.nab || !r.ab[code].valid ||
			r.ab[code].kind != K_UNIT))
		rc = 1;
	if (rc == 0) {
		ab = &r.ab[code];
		for (uint32_t i = 0; rc == 0 && i < ab->n; i++) {
			const nn_aspec *sp = &r.specs[ab->first + i];
			int cls;
			uint64_t v;
			if (read_form(&r, &c, sp->form, sp->implicit, &cls, &v)) {
				rc = 1;
			} else if (sp->at == DW_AT_str_offsets_base && cls == CL_SECOFF) {
				r.str_offsets_base = v;
				r.has_str_offsets_base = 1;
			} else if ((sp->at == DW_AT_addr_base || sp->at == NN_AT_GNU_ADDR_BASE) &&
				   cls == CL_SECOFF) {
				r.addr_base = v;
				r.has_addr_base = 1;
			} else if (sp->at == DW_AT_rnglists_base && cls == CL_SECOFF) {
				r.rnglists_base = v;
				r.has_rnglists_base = 1;
			}
		}
	}
	/* Nesting: level[d] is the scope the DIEs at depth d belong to, or "skip" (a subtree
	 * we parse only to stay in step: no scope can hold code there). */
	struct {
		uint32_t scope;
		uint8_t skip;
	} level[NN_MAX_DIE_DEPTH + 2];
	uint32_t depth = 0, extra = 0; /* extra: skipped levels deeper than level[] */
	level[0].scope = NN_NONE;
	level[0].skip = 0;
	int open = rc == 0 && ab->children;
	while (rc == 0 && open) {
		if (cur_uleb(&c, &code)) {
			rc = 1;
			break;
		}
		if (code == 0) { /* end of a list of siblings */
			if (extra)
				extra--;
			else if (depth == 0)
				open = 0;
			else
				depth--;
			continue;
		}
		if (code >= r.nab || !r.ab[code].valid) {
			rc = 1;
			break;
		}
		ab = &r.ab[code];
		int skip = extra || level[depth].skip || ab->kind == K_SKIP || ab->kind == K_UNIT;
		uint32_t scope = extra ? NN_NONE : level[depth].scope;
		int descend = 0;
		if (skip || ab->kind == K_DESCEND) {
			if (dr_skip(&r, &c, ab, &sib)) {
				rc = 1;
				break;
			}
			descend = !skip;
		} else {
			dinfo di;
			rc = dr_attrs(&r, &c, ab, w->cu->base, &di, &sib);
			if (rc == 0)
				rc =
				    add_scope_di(w, &di, ab->kind == K_SUBPROGRAM ? NN_NONE : scope,
						 depth, &scope);
			if (rc)
				break;
			descend = scope != NN_NONE;
		}
		if (!ab->children)
			continue;
		if (!descend && sib > nt_cur_offset(&c) && sib < r.unit_end) {
			c.pos = (size_t)(sib - c.base_offset); /* the whole subtree at once */
			continue;
		}
		if (extra || depth + 1 >= NN_MAX_DIE_DEPTH + 2) {
			extra++;
			continue;
		}
		depth++;
		level[depth].scope = scope;
		level[depth].skip = !descend || depth > NN_MAX_DIE_DEPTH;
	}
	free(r.ab);
	free(r.specs);
	return rc;
}

/* ------------------------------------------------------------------ line tables, units */

typedef struct nn_seq {
	uint64_t lo;
	size_t first, n;  /* rows [first, first + n), the end_sequence row last */
} nn_seq;

static int cmp_seq(const void *a, const void *b)
{
	const nn_seq *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Finds the DWARF sections the direct readers use in the file that has the DWARF,
 * decompressed when SHF_COMPRESSED (or GNU .zdebug_*); a section that cannot be read stays
 * empty. */
static void load_sections(nn_object *o)
{
	o->secs_state = 1;
	size_t shstrndx = 0;
	if (!o->lelf || elf_getshdrstrndx(o->lelf, &shstrndx) != 0)
		return;
	for (Elf_Scn *scn = elf_nextscn(o->lelf, NULL); scn; scn = elf_nextscn(o->lelf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *name = elf_strptr(o->lelf, shstrndx, sh.sh_name), *n;
		int gnu = 0;
		if (!name)
			continue;
		if (strncmp(name, ".debug_", 7) == 0)
			n = name + 7;
		else if (strncmp(name, ".zdebug_", 8) == 0)
			n = name + 8, gnu = 1;
		else
			continue;
		for (int k = 0; k < SEC_COUNT; k++) {
			if (strcmp(n, sec_names[k]) != 0 || o->sec[k].p)
				continue;
			if (gnu ? elf_compress_gnu(scn, 0, 0) < 0
				: (sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
				break;
			Elf_Data *d = elf_getdata(scn, NULL);
			if (d && d->d_buf) {
				o->sec[k].p = d->d_buf;
				o->sec[k].len = d->d_size;
			}
			break;
		}
	}
}

/* Appends a row, keeping only what lookups can tell apart: within a sequence (addresses
 * never decrease), a row at the address of the previous one replaces it (the last row at an
 * address wins), and a row that repeats the previous location adds nothing. */
static int push_row(nn_row **rows, size_t *n, size_t *cap, uint64_t addr, uint64_t file,
		    int64_t line, uint64_t col, int end)
{
	nn_row r;
	r.addr = addr;
	r.line = line < 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
	r.file = end ? NN_ROW_END : file >= NN_FILE_NONE ? NN_FILE_NONE : (uint16_t)file;
	r.col = col > 0xffffu ? 0 : (uint16_t)col;
	nn_row *prev = *n ? &(*rows)[*n - 1] : NULL;
	if (prev && prev->file != NN_ROW_END && prev->addr <= addr) {
		if (prev->addr == addr) {
			*prev = r;
			return 0;
		}
		if (!end && prev->file == r.file && prev->line == r.line && prev->col == r.col)
			return 0;
	}
	if (nt_grow((void **)rows, cap, *n + 1, sizeof(nn_row)))
		return -1;
	(*rows)[(*n)++] = r;
	return 0;
}

/* Runs the line-number program of the unit at off in .debug_line (DWARF 2-5, section 6.2)
 * and appends its rows, in program order, to *rows. We run it ourselves rather than through
 * libdwarf: libdwarf 20210528 starts the DWARF 5 file register at 0 instead of 1, which
 * names the wrong file for the rows before the first DW_LNS_set_file (GCC emits none for
 * file 1), and its per-row objects cost more than the rows themselves. The header's file
 * table is skipped (header_length): names come from dwarf_srcfiles(). Malformed programs
 * end the table where they break; returns -1 only when out of memory. */
static int run_line_program(const uint8_t *sec, size_t seclen, uint64_t off, nn_row **rows,
			    size_t *nrows, size_t *cap, unsigned *version)
{
	nt_cursor c;
	uint32_t len32;
	uint64_t ulen;
	int off64 = 0;
	if (off >= seclen)
		return 0;
	nt_cur_init(&c, sec + off, seclen - off, off);
	if (nt_cur_u32(&c, &len32))
		return 0;
	if (len32 == 0xffffffffu) {
		if (nt_cur_u64(&c, &ulen))
			return 0;
		off64 = 1;
	} else if (len32 >= 0xfffffff0u) {
		return 0; /* reserved unit lengths */
	} else {
		ulen = len32;
	}
	if (ulen > nt_cur_left(&c))
		return 0; /* the unit must fit in the section */
	nt_cursor u;
	nt_cur_init(&u, c.p + c.pos, (size_t)ulen, nt_cur_offset(&c));
	uint16_t ver;
	uint8_t asz = 8, seg = 0, min_inst, max_ops = 1, def_stmt, line_range, opbase;
	int8_t line_base;
	uint64_t hlen;
	uint32_t h32;
	if (nt_cur_u16(&u, &ver) || ver < 2 || ver > 5)
		return 0;
	*version = ver;
	if (ver >= 5 && (nt_cur_u8(&u, &asz) || nt_cur_u8(&u, &seg)))
		return 0;
	if (off64 ? nt_cur_u64(&u, &hlen) : nt_cur_u32(&u, &h32))
		return 0;
	if (!off64)
		hlen = h32;
	if (hlen > nt_cur_left(&u))
		return 0;
	size_t prog = u.pos + (size_t)hlen;
	if (nt_cur_u8(&u, &min_inst) || (ver >= 4 && nt_cur_u8(&u, &max_ops)) ||
	    nt_cur_u8(&u, &def_stmt) || nt_cur_u8(&u, (uint8_t *)&line_base) ||
	    nt_cur_u8(&u, &line_range) || nt_cur_u8(&u, &opbase))
		return 0;
	/* line_range divides; opcode_base 0 would make every byte a special opcode */
	if (line_range == 0 || opbase == 0)
		return 0;
	const uint8_t *oplen;
	if (nt_cur_bytes(&u, (size_t)opbase - 1, &oplen) || prog > u.len)
		return 0;
	(void)max_ops; /* VLIW op_index (IA-64) is not supported: addresses only */
	(void)def_stmt;
	(void)asz;
	u.pos = prog;
	uint64_t addr = 0, file = 1, col = 0;
	int64_t line = 1;
	while (nt_cur_left(&u)) {
		uint8_t op;
		uint64_t v;
		int64_t sv;
		if (nt_cur_u8(&u, &op))
			break;
		if (op >= opbase) {
			unsigned adj = (unsigned)(op - opbase);
			addr += (uint64_t)(adj / line_range) * min_inst;
			line += line_base + (int)(adj % line_range);
			if (push_row(rows, nrows, cap, addr, file, line, col, 0))
				return -1;
			continue;
		}
		switch (op) {
		case 0: { /* extended opcode: length, sub-opcode, operands */
			const uint8_t *body;
			if (nt_cur_varu64(&u, &v) || v == 0 || v > nt_cur_left(&u) ||
			    nt_cur_bytes(&u, (size_t)v, &body))
				return 0;
			if (body[0] == DW_LNE_end_sequence) {
				if (push_row(rows, nrows, cap, addr, file, line, col, 1))
					return -1;
				addr = 0;
				file = 1;
				line = 1;
				col = 0;
			} else if (body[0] == DW_LNE_set_address) {
				if (v - 1 == 8)
					addr = nt_le64(body + 1);
				else if (v - 1 == 4)
					addr = nt_le32(body + 1);
			}
			break; /* define_file, set_discriminator, vendor: nothing we keep */
		}
		case DW_LNS_copy:
			if (push_row(rows, nrows, cap, addr, file, line, col, 0))
				return -1;
			break;
		case DW_LNS_advance_pc:
			if (nt_cur_varu64(&u, &v))
				return 0;
			addr += v * min_inst;
			break;
		case DW_LNS_advance_line:
			if (cur_sleb(&u, &sv))
				return 0;
			line += sv;
			break;
		case DW_LNS_set_file:
			if (nt_cur_varu64(&u, &file))
				return 0;
			break;
		case DW_LNS_set_column:
			if (nt_cur_varu64(&u, &col))
				return 0;
			break;
		case DW_LNS_const_add_pc:
			addr += (uint64_t)((255u - opbase) / line_range) * min_inst;
			break;
		case DW_LNS_fixed_advance_pc: {
			uint16_t d;
			if (nt_cur_u16(&u, &d))
				return 0;
			addr += d;
			break;
		}
		case DW_LNS_negate_stmt:
		case DW_LNS_set_basic_block:
		case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			break;
		default:
			/* DW_LNS_set_isa and unknown standard opcodes: skip their LEB operands,
			 * as many as the header says */
			for (unsigned i = 0; i < oplen[op - 1]; i++)
				if (nt_cur_varu64(&u, &v))
					return 0;
			break;
		}
	}
	return 0;
}

/* Reads the CU's file names and line table. Rows are kept per sequence, sequences sorted
 * by address: within a sequence addresses never decrease, so the last row at or below an
 * address is the one that describes it (as addr2line: rows at one address, the last
 * wins). Sequences at address 0 are discarded code. Returns -1 only when out of memory. */
static int cu_lines(nt_native *nn, nn_object *o, nn_cu *cu, Dwarf_Die cudie)
{
	Dwarf_Debug dbg = o->dbg;
	Dwarf_Error e = NULL;
	if (!cu->has_lines)
		return 0;
	if (o->secs_state == 0)
		load_sections(o);
	if (!o->sec[SEC_LINE].p)
		return 0;
	size_t nraw = 0;
	unsigned lver = 0;
	if (run_line_program(o->sec[SEC_LINE].p, o->sec[SEC_LINE].len, cu->line_off, &nn->rows,
			     &nraw, &nn->rowcap, &lver))
		return -1;
	nn_row *raw = nn->rows;
	if (nraw == 0)
		return 0;
	int ret = 0;
	/* File names, full paths as libdwarf joins them with the directory table and the
	 * compilation directory; DWARF 5 numbers files from 0, earlier versions from 1. */
	char **sf = NULL;
	Dwarf_Signed nsf = 0;
	if (dwarf_srcfiles(cudie, &sf, &nsf, &e) == DW_DLV_OK) {
		size_t shift = lver >= 5 ? 0 : 1;
		cu->files = calloc((size_t)nsf + shift + 1, sizeof(char *));
		if (!cu->files)
			ret = -1;
		for (Dwarf_Signed i = 0; i < nsf; i++) {
			if (cu->files && ret == 0) {
				cu->files[(size_t)i + shift] = intern(nn, sf[i]);
				if (!cu->files[(size_t)i + shift])
					ret = -1;
			}
			dwarf_dealloc(dbg, sf[i], DW_DLA_STRING);
		}
		dwarf_dealloc(dbg, sf, DW_DLA_LIST);
		if (cu->files)
			cu->nfiles = (size_t)nsf + shift;
	} else {
		dw_clear(dbg, &e);
	}
	nn_seq *seqs = NULL;
	size_t nseq = 0, seqcap = 0, start = 0;
	for (size_t i = 0; ret == 0 && i < nraw; i++) {
		if (raw[i].file != NN_ROW_END && i + 1 < nraw)
			continue;
		raw[i].file = NN_ROW_END; /* a program cut short ends its last sequence there */
		if (raw[start].addr != 0) {
			if (nt_grow((void **)&seqs, &seqcap, nseq + 1, sizeof(nn_seq))) {
				ret = -1;
				break;
			}
			seqs[nseq].lo = raw[start].addr;
			seqs[nseq].first = start;
			seqs[nseq].n = i + 1 - start;
			nseq++;
		}
		start = i + 1;
	}
	if (ret == 0 && nseq) {
		qsort(seqs, nseq, sizeof *seqs, cmp_seq);
		size_t total = 0;
		for (size_t i = 0; i < nseq; i++)
			total += seqs[i].n;
		cu->rows = malloc(total * sizeof(nn_row));
		if (!cu->rows) {
			ret = -1;
		} else {
			for (size_t i = 0; i < nseq; i++) {
				memcpy(cu->rows + cu->nrows, raw + seqs[i].first,
				       seqs[i].n * sizeof(nn_row));
				cu->nrows += seqs[i].n;
			}
		}
	}
	free(seqs);
	return ret;
}

/* The last row at or below addr, or NULL (before the first row, or in a gap after an
 * end_sequence row). */
static const nn_row *row_find(const nn_cu *cu, uint64_t addr)
{
	size_t lo = 0, hi = cu->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cu->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || cu->rows[lo - 1].file == NN_ROW_END)
		return NULL;
	return &cu->rows[lo - 1];
}

/* Parses one compile unit: line table, file names, scopes. A unit libdwarf cannot open is
 * marked unusable (its addresses get ELF symbols). Returns -1 only when out of memory. */
static int cu_parse(nt_native *nn, nn_object *o, nn_cu *cu)
{
	Dwarf_Error e = NULL;
	Dwarf_Die cudie = NULL;
	cu->state = -1;
	if (dwarf_offdie_b(o->dbg, cu->off, 1, &cudie, &e) != DW_DLV_OK) {
		dw_clear(o->dbg, &e);
		return 0;
	}
	Dwarf_Half version = 0, offsize = 0;
	if (dwarf_get_version_of_die(cudie, &version, &offsize) != DW_DLV_OK)
		version = 4;
	int rc = cu_lines(nn, o, cu, cudie);
	cuwalk w = {nn, o, cu, version, 0};
	nn->nivs = 0;
	/* the scopes: from the section bytes, else (unsupported, NT_NATIVE_LIBDWARF_ONLY)
	 * through libdwarf */
	int walked = 0;
	if (rc == 0 && o->direct) {
		if (o->secs_state == 0)
			load_sections(o);
		rc = o->sec[SEC_INFO].p && o->sec[SEC_ABBREV].p ? dr_walk(&w) : 1;
		if (rc == 1) { /* start over */
			cu->nscopes = 0;
			nn->nivs = 0;
			rc = 0;
		} else {
			walked = rc == 0;
		}
	}
	Dwarf_Die child = NULL;
	if (rc == 0 && !walked) {
		int r = dwarf_child(cudie, &child, &e);
		if (r == DW_DLV_OK)
			rc = walk(&w, child, NN_NONE, 0);
		else
			dw_clear(o->dbg, &e);
	}
	dwarf_dealloc_die(cudie);
	if (rc == 0)
		rc = flatten(nn->ivs, nn->nivs, &cu->segs, &cu->nsegs);
	nn->nivs = 0;
	if (rc == 0)
		cu->state = 1;
	return rc;
}

static void cu_free(nn_cu *cu)
{
	free(cu->scopes);
	free(cu->segs);
	free(cu->rows);
	free(cu->files);
}

/* ------------------------------------------------------------------ ELF objects */

static void set_status(nn_object *o, int status, char *msg)
{
	o->status = status;
	free(o->message);
	o->message = msg;
}

static int cmp_sym(const void *a, const void *b)
{
	const nn_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1; /* sized before sizeless */
	return strcmp(x->name, y->name);
}

/* Reads the function symbols of one symbol table section. Returns -1 when out of memory. */
static int read_symtab(nt_native *nn, nn_object *o, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || sh->sh_entsize == 0)
		return 0;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_value == 0)
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		int bind = GELF_ST_BIND(sym.st_info);
		if (nt_grow((void **)&o->syms, &o->symcap, o->nsyms + 1, sizeof(nn_sym)))
			return -1;
		nn_sym s;
		s.addr = sym.st_value;
		s.size = sym.st_size;
		s.rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		s.name = intern(nn, name);
		if (!s.name)
			return -1;
		o->syms[o->nsyms++] = s;
	}
	return 0;
}

/* The function symbol covering addr: the greatest start at or below it, within its size
 * (a sizeless symbol extends to the next one). NULL if none. */
static const nn_sym *sym_find(const nn_object *o, uint64_t addr)
{
	size_t lo = 0, hi = o->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* the best symbol at that address comes first among equals */
	uint64_t a = o->syms[lo - 1].addr;
	size_t i = lo - 1;
	while (i > 0 && o->syms[i - 1].addr == a)
		i--;
	const nn_sym *s = &o->syms[i];
	if (s->size == 0 || addr - s->addr < s->size)
		return s;
	return NULL;
}

/* Hex of the NT_GNU_BUILD_ID note in a SHT_NOTE section, if there is one. */
static void read_build_id(Elf_Scn *scn, char *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data)
		return;
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= NN_MAX_BUILD_ID) {
			const uint8_t *d = (const uint8_t *)data->d_buf + desc_off;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(out + 2 * i, 3, "%02x", d[i]);
			return;
		}
	}
}

typedef struct elfinfo {
	int has_debug_info;  /* a .debug_info section with contents */
	Elf_Scn *symtab, *dynsym;
	GElf_Shdr symtab_sh, dynsym_sh;
} elfinfo;

/* Program headers (PT_LOAD), build id, symbol table sections, presence of DWARF. */
static void elf_scan(nn_object *o, Elf *elf, int main_file, elfinfo *ei, int *oom)
{
	memset(ei, 0, sizeof *ei);
	size_t nph = 0;
	if (main_file && elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (nt_grow((void **)&o->loads, &o->loadcap, o->nloads + 1,
				    sizeof(nn_load))) {
				*oom = 1;
				return;
			}
			o->loads[o->nloads].offset = ph.p_offset;
			o->loads[o->nloads].filesz = ph.p_filesz;
			o->loads[o->nloads].vaddr = ph.p_vaddr;
			o->nloads++;
		}
	}
	size_t shstrndx = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_NOTE && main_file && !o->build_id[0])
			read_build_id(scn, o->build_id);
		else if (sh.sh_type == SHT_SYMTAB) {
			ei->symtab = scn;
			ei->symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			ei->dynsym = scn;
			ei->dynsym_sh = sh;
		} else if (sh.sh_type == SHT_PROGBITS && sh.sh_size > 0) {
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && (strcmp(name, ".debug_info") == 0 ||
				     strcmp(name, ".zdebug_info") == 0))
				ei->has_debug_info = 1;
		}
	}
}

/* Opens path read-only if it is a regular file: a FIFO or a device named in a trace must
 * neither block us nor be read. Returns the fd, -1 with errno set, or -2 when path is not a
 * regular file. */
static int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -2;
	}
	return fd;
}

/* Checks the unit headers of a .debug_rnglists or .debug_loclists section (DWARF 5,
 * 7.28/7.29): libdwarf 20210528 reads them as soon as it lists the compile units, and frees
 * memory twice on some malformed ones (a unit_length beyond the section), so such a file
 * must not reach it. Returns 1 when every header is sound (or the section is absent). */
static int lists_ok(const nn_sec *s)
{
	nt_cursor c;
	nt_cur_init(&c, s->p, s->len, 0);
	while (nt_cur_left(&c)) {
		uint32_t l32, count;
		uint64_t len;
		uint16_t ver;
		uint8_t asz, seg;
		unsigned offsize = 4;
		if (nt_cur_u32(&c, &l32))
			return 0;
		if (l32 == 0xffffffffu) {
			if (nt_cur_u64(&c, &len))
				return 0;
			offsize = 8;
		} else if (l32 >= 0xfffffff0u) {
			return 0;
		} else {
			len = l32;
		}
		if (len > nt_cur_left(&c))
			return 0;
		if (len == 0)
			continue; /* padding */
		size_t end = c.pos + (size_t)len;
		if (len < 8 || nt_cur_u16(&c, &ver) || nt_cur_u8(&c, &asz) || nt_cur_u8(&c, &seg) ||
		    nt_cur_u32(&c, &count))
			return 0;
		if (ver != 5 || (asz != 4 && asz != 8) || seg != 0 || count > (len - 8) / offsize)
			return 0;
		c.pos = end;
	}
	return 1;
}

/* Opens libdwarf on path; 1 if it has DWARF, 0 if not (or unreadable). */
static int dwarf_open(nn_object *o, const char *path)
{
	int fd = open_regular(path);
	if (fd < 0)
		return 0;
	Dwarf_Debug dbg = NULL;
	Dwarf_Error e = NULL;
	int rc = dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &dbg, &e);
	if (rc != DW_DLV_OK) {
		if (e)
			dwarf_dealloc_error(NULL, e);
		close(fd);
		return 0;
	}
	o->dbg = dbg;
	o->dwfd = fd;
	return 1;
}

/* Lists the compile units and the addresses each covers (DW_AT_low_pc/high_pc or
 * DW_AT_ranges of the CU DIE). Returns -1 only when out of memory. */
static int cu_index(nt_native *nn, nn_object *o)
{
	Dwarf_Debug dbg = o->dbg;
	Dwarf_Error e = NULL;
	size_t cap = 0;
	int ret = 0;
	nn->nivs = 0;
	for (;;) {
		Dwarf_Unsigned hlen = 0, typeoff = 0, next = 0;
		Dwarf_Half ver = 0, asz = 0, lsz = 0, esz = 0, utype = 0;
		Dwarf_Off abbr = 0;
		Dwarf_Sig8 sig;
		int rc = dwarf_next_cu_header_d(dbg, 1, &hlen, &ver, &abbr, &asz, &lsz, &esz, &sig,
						&typeoff, &next, &utype, &e);
		if (rc != DW_DLV_OK) {
			dw_clear(dbg, &e);
			break; /* the end, or a header libdwarf cannot read: keep what we have */
		}
		if (ret)
			continue; /* finish the iteration so libdwarf's state is reset */
		Dwarf_Die cudie = NULL;
		if (dwarf_siblingof_b(dbg, NULL, 1, &cudie, &e) != DW_DLV_OK) {
			dw_clear(dbg, &e);
			continue;
		}
		Dwarf_Half tag = 0;
		Dwarf_Off off = 0;
		if (dwarf_tag(cudie, &tag, &e) != DW_DLV_OK ||
		    (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit &&
		     tag != DW_TAG_skeleton_unit) ||
		    dwarf_dieoffset(cudie, &off, &e) != DW_DLV_OK) {
			dw_clear(dbg, &e);
			dwarf_dealloc_die(cudie);
			continue;
		}
		/* the CU base address first: DWARF 2-4 range lists are relative to it */
		dinfo di;
		uint64_t base = 0;
		Dwarf_Addr lo = 0;
		Dwarf_Off hdr = 0, ulen = 0;
		if (dwarf_lowpc(cudie, &lo, &e) == DW_DLV_OK)
			base = lo;
		dw_clear(dbg, &e);
		if (dwarf_die_CU_offset_range(cudie, &hdr, &ulen, &e) != DW_DLV_OK)
			hdr = UINT64_MAX; /* the direct reader will not find it: libdwarf walks */
		dw_clear(dbg, &e);
		if (read_die(nn, dbg, cudie, 1, base, ver, &di)) {
			dwarf_dealloc_die(cudie);
			ret = -1;
			continue;
		}
		dwarf_dealloc_die(cudie);
		if (o->ncus >= NN_NONE - 1 ||
		    nt_grow((void **)&o->cus, &cap, o->ncus + 1, sizeof(nn_cu))) {
			ret = -1;
			continue;
		}
		uint32_t id = (uint32_t)o->ncus;
		nn_cu *cu = &o->cus[o->ncus++];
		memset(cu, 0, sizeof *cu);
		cu->off = off;
		cu->base = base;
		cu->hdr_off = hdr;
		cu->line_off = di.stmt_list;
		cu->has_lines = di.has_stmt_list;
		if (di.has_ranges) {
			for (size_t i = 0; i + 1 < nn->nrng; i += 2)
				if (push_iv(nn, nn->rng[i], nn->rng[i + 1], 0, id))
					ret = -1;
		} else if (di.has_lo && di.has_hi) {
			if (push_iv(nn, di.lo, di.hi, 0, id))
				ret = -1;
		}
	}
	if (ret == 0)
		ret = flatten(nn->ivs, nn->nivs, &o->cusegs, &o->ncusegs);
	nn->nivs = 0;
	return ret;
}

/* Opens the object's file: ELF headers, build id, symbols, DWARF (from the file or from
 * DEBUG_DIR/.build-id/xx/yyyy.debug). File problems set the status; returns -1 only when
 * out of memory. */
static int object_load(nt_native *nn, nn_object *o)
{
	int fd = -1, dfd = -1, oom = 0;
	Elf *elf = NULL, *delf = NULL;
	char *dpath = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		set_status(o, NT_NATIVE_BAD_FILE, xstrdup_printf("libelf is unusable"));
		return 0;
	}
	fd = open_regular(o->path);
	if (fd < 0) {
		set_status(o, NT_NATIVE_MISSING,
			   xstrdup_printf("cannot open: %s",
					  fd == -2 ? "not a regular file" : strerror(errno)));
		return 0;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		set_status(o, NT_NATIVE_BAD_FILE, xstrdup_printf("not an ELF file"));
		goto done;
	}
	elfinfo ei, dei;
	elf_scan(o, elf, 1, &ei, &oom);
	if (oom)
		goto done;
	memset(&dei, 0, sizeof dei);
	if (!ei.has_debug_info && o->build_id[0] && strlen(o->build_id) > 2 && nn->debug_dir[0]) {
		dpath = xstrdup_printf("%s%s/.build-id/%.2s/%s.debug", nn->root, nn->debug_dir,
				       o->build_id, o->build_id + 2);
		if (!dpath) {
			oom = 1;
			goto done;
		}
		dfd = open_regular(dpath);
		if (dfd >= 0) {
			delf = elf_begin(dfd, ELF_C_READ_MMAP, NULL);
			if (delf && elf_kind(delf) == ELF_K_ELF)
				elf_scan(o, delf, 0, &dei, &oom);
			if (oom)
				goto done;
		}
	}
	/* symbols: the full table of either file, else the dynamic one */
	if (ei.symtab)
		oom = read_symtab(nn, o, elf, ei.symtab, &ei.symtab_sh) != 0;
	else if (dei.symtab)
		oom = read_symtab(nn, o, delf, dei.symtab, &dei.symtab_sh) != 0;
	else if (ei.dynsym)
		oom = read_symtab(nn, o, elf, ei.dynsym, &ei.dynsym_sh) != 0;
	if (oom)
		goto done;
	if (o->nsyms)
		qsort(o->syms, o->nsyms, sizeof(nn_sym), cmp_sym);
	/* The file with the DWARF keeps its libelf handle: the direct readers use its sections. */
	int have_dwarf = 0;
	const char *dwpath = NULL;
	if (ei.has_debug_info) {
		o->lelf = elf;
		o->lfd = fd;
		elf = NULL;
		fd = -1;
		dwpath = o->path;
	} else if (dei.has_debug_info) {
		o->lelf = delf;
		o->lfd = dfd;
		delf = NULL;
		dfd = -1;
		dwpath = dpath;
	}
	const char *bad = NULL;
	if (dwpath) {
		load_sections(o);
		bad = !lists_ok(&o->sec[SEC_RNGLISTS])   ? ".debug_rnglists"
		      : !lists_ok(&o->sec[SEC_LOCLISTS]) ? ".debug_loclists"
							 : NULL;
		have_dwarf = !bad && dwarf_open(o, dwpath);
	}
	if (have_dwarf && cu_index(nn, o)) {
		oom = 1;
		goto done;
	}
	if (bad)
		set_status(o, o->nsyms ? NT_NATIVE_SYMBOLS_ONLY : NT_NATIVE_NO_SYMBOLS,
			   xstrdup_printf("malformed %s: %s", bad,
					  o->nsyms ? "ELF symbols only" : "no symbols"));
	else if (have_dwarf && o->ncus)
		set_status(o, NT_NATIVE_OK, NULL);
	else if (o->nsyms)
		set_status(o, NT_NATIVE_SYMBOLS_ONLY, xstrdup_printf("no DWARF: ELF symbols only"));
	else
		set_status(o, NT_NATIVE_NO_SYMBOLS, xstrdup_printf("no DWARF and no ELF symbols"));
done:
	if (delf)
		elf_end(delf);
	if (dfd >= 0)
		close(dfd);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(dpath);
	return oom ? -1 : 0;
}

static void object_free(nn_object *o)
{
	if (o->dbg) {
		Dwarf_Error e = NULL;
		dwarf_finish(o->dbg, &e);
		if (e)
			dwarf_dealloc_error(NULL, e);
	}
	if (o->dwfd >= 0)
		close(o->dwfd);
	if (o->lelf)
		elf_end(o->lelf);
	if (o->lfd >= 0)
		close(o->lfd);
	for (size_t i = 0; i < o->ncus; i++)
		cu_free(&o->cus[i]);
	free(o->cus);
	free(o->cusegs);
	free(o->loads);
	free(o->syms);
	free(o->onames);
	nt_idmap_free(&o->origins);
	free(o->message);
	free(o->path);
}

/* File offset -> the address in the file's own address space, through PT_LOAD. */
static int file_to_vaddr(const nn_object *o, uint64_t off, uint64_t *va)
{
	for (size_t i = 0; i < o->nloads; i++) {
		const nn_load *l = &o->loads[i];
		if (off >= l->offset && off - l->offset < l->filesz) {
			*va = l->vaddr + (off - l->offset);
			return 1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ modules */

static const char *base_name(const char *path)
{
	const char *b = path;
	for (const char *q = path; *q; q++)
		if (*q == '/')
			b = q + 1;
	return *b ? b : path;
}

typedef struct nn_mkey {
	uint64_t base;
	uint32_t i;
} nn_mkey;

static int cmp_mkey(const void *a, const void *b)
{
	const nn_mkey *x = a, *y = b;
	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Sorts the module index (after modules were added). */
static int modules_sort(nt_native *nn)
{
	if (nn->sorted)
		return 0;
	free(nn->order);
	free(nn->maxend);
	nn->order = malloc((nn->nmods ? nn->nmods : 1) * sizeof(uint32_t));
	nn->maxend = malloc((nn->nmods ? nn->nmods : 1) * sizeof(uint64_t));
	if (!nn->order || !nn->maxend)
		return -1;
	/* by (base, insertion order): the pairs carry both, so qsort is stable here */
	nn_mkey *k = malloc((nn->nmods ? nn->nmods : 1) * sizeof(nn_mkey));
	if (!k)
		return -1;
	for (size_t i = 0; i < nn->nmods; i++) {
		k[i].base = nn->mods[i].base;
		k[i].i = (uint32_t)i;
	}
	qsort(k, nn->nmods, sizeof *k, cmp_mkey);
	for (size_t i = 0; i < nn->nmods; i++)
		nn->order[i] = k[i].i;
	free(k);
	uint64_t mx = 0;
	for (size_t i = 0; i < nn->nmods; i++) {
		const nn_module *m = &nn->mods[nn->order[i]];
		if (m->base + m->size > mx)
			mx = m->base + m->size;
		nn->maxend[i] = mx;
	}
	nn->sorted = 1;
	return 0;
}

/* The module covering ip (the greatest base at or below it; for overlapping mappings, a
 * later mapping of the same base wins), or NULL. A process maps each address once, so real
 * maps nest at most a few deep; the walk back over mappings that start below ip and may
 * still cover it stops after NN_MAX_OVERLAP of them, whatever a trace declares. */
#define NN_MAX_OVERLAP 1024u
static nn_module *module_find(nt_native *nn, uint64_t ip)
{
	size_t lo = 0, hi = nn->nmods;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (nn->mods[nn->order[mid]].base <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, steps = 0; i-- > 0 && steps < NN_MAX_OVERLAP; steps++) {
		if (nn->maxend[i] <= ip)
			break;
		nn_module *m = &nn->mods[nn->order[i]];
		if (ip - m->base < m->size)
			return m;
	}
	return NULL;
}

/* Makes sure m's object is loaded and m's status set. Returns -1 when out of memory. */
static int module_ready(nt_native *nn, nn_module *m)
{
	if (m->obj != SIZE_MAX)
		return 0;
	char *path = xstrdup_printf("%s%s", nn->root, m->path);
	if (!path)
		return -1;
	size_t oi = SIZE_MAX;
	uint64_t key = str_hash(path, strlen(path));
	if (nt_idmap_get(&nn->objmap, key, &oi) && strcmp(nn->objs[oi].path, path) != 0)
		oi = SIZE_MAX; /* a hash collision: the other path keeps the map entry */
	if (oi == SIZE_MAX) {
		if (nt_grow((void **)&nn->objs, &nn->objcap, nn->nobjs + 1, sizeof(nn_object)) ||
		    (!nt_idmap_get(&nn->objmap, key, &oi) &&
		     nt_idmap_put(&nn->objmap, key, nn->nobjs))) {
			free(path);
			return -1;
		}
		oi = nn->nobjs++;
		nn_object *o = &nn->objs[oi];
		memset(o, 0, sizeof *o);
		o->dwfd = -1;
		o->lfd = -1;
		o->direct = !(nn->flags & NT_NATIVE_LIBDWARF_ONLY);
		o->path = path;
		path = NULL;
		if (object_load(nn, o))
			return -1;
	}
	free(path);
	m->obj = oi;
	nn_object *o = &nn->objs[oi];
	m->status = o->status;
	m->message = o->message ? o->message : "";
	if (m->status != NT_NATIVE_MISSING && m->status != NT_NATIVE_BAD_FILE && m->build_id[0] &&
	    strcmp(m->build_id, o->build_id) != 0) {
		m->own_message = xstrdup_printf("build id mismatch: trace %s, file %s", m->build_id,
						o->build_id[0] ? o->build_id : "(none)");
		if (!m->own_message)
			return -1;
		m->status = NT_NATIVE_BUILD_ID_MISMATCH;
		m->message = m->own_message;
	}
	return 0;
}

/* ------------------------------------------------------------------ resolving */

/* "module!function" (demangled, unless NT_NATIVE_NO_DEMANGLE) or "module+0xOFFSET",
 * interned; NULL when out of memory. */
static const char *frame_name(nt_native *nn, const char *module, const char *function,
			      uint64_t off)
{
	size_t lm = strlen(module);
	char *dm = function && !(nn->flags & NT_NATIVE_NO_DEMANGLE) ? nt_demangle(function) : NULL;
	if (dm)
		function = dm;
	size_t lf = function ? strlen(function) : 2 + 16;
	if (nt_grow((void **)&nn->tmp, &nn->tmpcap, lm + lf + 2, 1)) {
		free(dm);
		return NULL;
	}
	memcpy(nn->tmp, module, lm);
	if (function) {
		nn->tmp[lm] = '!';
		memcpy(nn->tmp + lm + 1, function, lf);
		free(dm);
		return intern_n(nn, nn->tmp, lm + 1 + lf);
	}
	int k = snprintf(nn->tmp + lm, lf + 2, "+0x%" PRIx64, off);
	return intern_n(nn, nn->tmp, lm + (size_t)k);
}

static nt_native_frame *frame_push(nt_native *nn, size_t *n)
{
	if (nt_grow((void **)&nn->fv, &nn->fvcap, *n + 1, sizeof(nt_native_frame)))
		return NULL;
	nt_native_frame *f = &nn->fv[(*n)++];
	memset(f, 0, sizeof *f);
	return f;
}

/* Fills nn->fv with the frames of file address va in object o. *n stays 0 when nothing
 * is known about va. Returns -1 when out of memory. */
static int symbolize(nt_native *nn, nn_object *o, uint64_t va, const char *mod, uint64_t off,
		     size_t *n)
{
	const char *file = NULL;
	uint32_t line = 0, col = 0, scope = NN_NONE;
	nn_scope *scopes = NULL;
	if (o->dbg) {
		uint32_t ci = seg_find(o->cusegs, o->ncusegs, va);
		if (ci != NN_NONE) {
			nn_cu *cu = &o->cus[ci];
			if (cu->state == 0 && cu_parse(nn, o, cu))
				return -1;
			if (cu->state == 1) {
				const nn_row *r = row_find(cu, va);
				if (r) {
					file = r->file < cu->nfiles ? cu->files[r->file] : NULL;
					line = r->line;
					col = r->col;
				}
				scope = seg_find(cu->segs, cu->nsegs, va);
				scopes = cu->scopes;
			}
		}
	}
	const nn_sym *sym = NULL;
	for (uint32_t s = scope; s != NN_NONE; s = scopes[s].parent) {
		nt_native_frame *f = frame_push(nn, n);
		if (!f)
			return -1;
		nn_scope *sc = &scopes[s];
		f->function = sc->name;
		if (f->function) {
			/* frame names per scope, not per address: interning hashes the text */
			if (sc->fname_mod != mod) {
				sc->fname = frame_name(nn, mod, f->function, off);
				sc->fname_mod = mod;
				if (!sc->fname)
					return -1;
			}
			f->name = sc->fname;
		} else if (sc->parent == NN_NONE && (sym = sym_find(o, va))) {
			f->function = sym->name;
		}
		f->file = file;
		f->line = line;
		f->column = col;
		file = scopes[s].call_file;
		line = scopes[s].call_line;
		col = scopes[s].call_col;
		if (*n > NN_MAX_DIE_DEPTH + 1)
			break; /* cannot happen: parents come before children */
	}
	if (*n == 0 && ((sym = sym_find(o, va)) || file)) {
		nt_native_frame *f = frame_push(nn, n);
		if (!f)
			return -1;
		f->function = sym ? sym->name : NULL;
		f->file = file;
		f->line = line;
		f->column = col;
	}
	return 0;
}

/* Resolves ip into the cache; *ce gets its entry. Returns 0 or NT_ENOMEM. */
static int resolve_ip(nt_native *nn, uint64_t ip, const nn_centry **ce)
{
	size_t idx;
	if (nt_idmap_get(&nn->cache, ip, &idx)) {
		*ce = &nn->centries[idx];
		return 0;
	}
	if (!nn->sorted && modules_sort(nn))
		return NT_ENOMEM;
	nn_module *m = module_find(nn, ip);
	size_t n = 0;
	const nt_native_frame *frames = NULL;
	if (m) {
		if (module_ready(nn, m))
			return NT_ENOMEM;
		m->lookups++;
		nn_object *o = &nn->objs[m->obj];
		uint64_t off = ip - m->base + m->file_offset;
		uint64_t va = UINT64_MAX;
		int usable = m->status == NT_NATIVE_OK || m->status == NT_NATIVE_SYMBOLS_ONLY;
		if (usable && file_to_vaddr(o, off, &va) && symbolize(nn, o, va, m->name, off, &n))
			return NT_ENOMEM;
		if (n == 0 && !frame_push(nn, &n))
			return NT_ENOMEM;
		nt_native_frame *out = arena_alloc(nn, n * sizeof(nt_native_frame));
		if (!out)
			return NT_ENOMEM;
		for (size_t i = 0; i < n; i++) {
			nt_native_frame *f = &nn->fv[i];
			f->inline_depth = (uint32_t)(n - 1 - i);
			f->module = m->name;
			f->module_path = m->path;
			f->file_offset = off;
			f->elf_address = va;
			if (!f->name)
				f->name = frame_name(nn, m->name, f->function, off);
			if (!f->name)
				return NT_ENOMEM;
		}
		memcpy(out, nn->fv, n * sizeof(nt_native_frame));
		frames = out;
	}
	if (nt_grow((void **)&nn->centries, &nn->centcap, nn->ncentries + 1, sizeof(nn_centry)) ||
	    nt_idmap_put(&nn->cache, ip, nn->ncentries))
		return NT_ENOMEM;
	nn_centry *e = &nn->centries[nn->ncentries++];
	e->frames = frames;
	e->n = (uint32_t)n;
	*ce = e;
	return 0;
}

/* ------------------------------------------------------------------ public API */

int nt_native_new(nt_native **out, const nt_native_opts *opts, nt_error *err)
{
	nt_native_opts o = {sizeof o, NULL, NULL, 0, NULL};
	*out = NULL;
	if (opts) {
		size_t n = opts->sz < sizeof o ? opts->sz : sizeof o;
		memcpy(&o, opts, n);
	}
	nt_native *nn = calloc(1, sizeof *nn);
	if (!nn)
		goto fail;
	nn->root = nt_strdup(o.root ? o.root : "");
	nn->debug_dir = nt_strdup(o.debug_dir ? o.debug_dir : "/usr/lib/debug");
	if (!nn->root || !nn->debug_dir)
		goto fail;
	/* a trailing '/' in root would double the one paths start with */
	size_t lr = strlen(nn->root);
	while (lr > 0 && nn->root[lr - 1] == '/')
		nn->root[--lr] = '\0';
	nn->flags = o.flags;
	nn->sorted = 1;
	*out = nn;
	return 0;
fail:
	nt_native_free(nn);
	return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate native symbol resolver");
}

void nt_native_free(nt_native *nn)
{
	if (!nn)
		return;
	for (size_t i = 0; i < nn->nobjs; i++)
		object_free(&nn->objs[i]);
	free(nn->objs);
	for (size_t i = 0; i < nn->nmods; i++) {
		free(nn->mods[i].path);
		free(nn->mods[i].build_id);
		free(nn->mods[i].own_message);
	}
	free(nn->mods);
	nt_idmap_free(&nn->modmap);
	nt_idmap_free(&nn->objmap);
	free(nn->order);
	free(nn->maxend);
	nt_idmap_free(&nn->cache);
	free(nn->centries);
	while (nn->arena) {
		nn_chunk *c = nn->arena;
		nn->arena = c->next;
		free(c);
	}
	free(nn->strs);
	free(nn->strh);
	free(nn->tmp);
	free(nn->fv);
	free(nn->ivs);
	free(nn->rows);
	free(nn->rng);
	free(nn->root);
	free(nn->debug_dir);
	free(nn);
}

int nt_native_add_module(nt_native *nn, uint64_t base, uint64_t size, uint64_t file_offset,
			 const char *path, const char *build_id, nt_error *err)
{
	if (!nn || !path) {
		assert(!"nt_native_add_module: NULL argument");
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_native_add_module: NULL argument");
	}
	if (size == 0 || base + size < base)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "bad module range: base 0x%" PRIx64 ", size 0x%" PRIx64, base, size);
	if (!build_id)
		build_id = "";
	/* the sampler records a mapping again on each flush: keep one (found by a hash of the
	 * range, then compared whole) */
	uint64_t key = str_hash(path, strlen(path)) ^ (base * 0x9e3779b97f4a7c15ull) ^
		       (size * 0xc2b2ae3d27d4eb4full) ^ file_offset;
	size_t idx;
	if (nt_idmap_get(&nn->modmap, key, &idx)) {
		const nn_module *m = &nn->mods[idx];
		if (m->base == base && m->size == size && m->file_offset == file_offset &&
		    strcmp(m->path, path) == 0 && strcasecmp(m->build_id, build_id) == 0)
			return 0;
	}
	if (nn->nmods >= UINT32_MAX - 1 ||
	    nt_grow((void **)&nn->mods, &nn->modcap, nn->nmods + 1, sizeof(nn_module)) ||
	    nt_idmap_put(&nn->modmap, key, nn->nmods))
		goto nomem;
	nn_module *m = &nn->mods[nn->nmods];
	memset(m, 0, sizeof *m);
	m->base = base;
	m->size = size;
	m->file_offset = file_offset;
	m->obj = SIZE_MAX;
	m->message = "";
	m->path = nt_strdup(path);
	m->build_id = nt_strdup(build_id);
	m->name = intern(nn, base_name(path));
	if (!m->path || !m->build_id || !m->name) {
		free(m->path);
		free(m->build_id);
		goto nomem;
	}
	for (char *c = m->build_id; *c; c++)
		if (*c >= 'A' && *c <= 'F')
			*c = (char)(*c - 'A' + 'a');
	nn->nmods++;
	nn->sorted = 0;
	return 0;
nomem:
	return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate module map");
}

/* A string field of a ModuleMap event as a new UTF-8 string; NULL if absent/malformed. */
static char *event_str(const nt_event *ev, uint32_t ps, const char *name, int *oom)
{
	nt_value v;
	if (!nt_event_field(ev, ps, name, &v) || v.type != NT_TYPE_STRING)
		return NULL;
	char *s = NULL;
	size_t used = nt_utf16z_dup(v.raw, v.raw_len, &s);
	if (used == (size_t)-1)
		*oom = 1;
	return used == 0 || used == (size_t)-1 ? NULL : s;
}

int nt_native_add_event(nt_native *nn, const nt_event *ev, uint32_t pointer_size)
{
	const nt_metadata *md = ev->meta;
	if (!md || md->event_id != NT_NTS_MODULE_MAP || !md->provider ||
	    strcmp(md->provider, NT_PROVIDER_NTSAMPLER) != 0)
		return 0;
	nt_value base, size, off;
	if (!nt_event_field(ev, pointer_size, "Base", &base) ||
	    !nt_event_field(ev, pointer_size, "Size", &size) ||
	    !nt_event_field(ev, pointer_size, "FileOffset", &off))
		return 0;
	int oom = 0;
	char *path = event_str(ev, pointer_size, "Path", &oom);
	char *bid = path ? event_str(ev, pointer_size, "BuildId", &oom) : NULL;
	int rc = 0;
	if (path && !oom) {
		rc = nt_native_add_module(nn, base.u, size.u, off.u, path, bid ? bid : "", NULL);
		rc = rc == 0 ? 1 : rc == NT_ENOMEM ? NT_ENOMEM : 0;
	}
	free(path);
	free(bid);
	return oom ? NT_ENOMEM : rc;
}

int nt_native_resolve(nt_native *nn, uint64_t ip, const nt_native_frame **frames, size_t *n,
		      nt_error *err)
{
	const nn_centry *ce;
	*frames = NULL;
	*n = 0;
	if (resolve_ip(nn, ip, &ce))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET,
			       "out of memory resolving native symbols");
	*frames = ce->frames;
	*n = ce->n;
	return 0;
}

typedef struct nn_pair {
	uint64_t ip;
	size_t i;     /* index in the caller's array */
} nn_pair;

/* Sorts pairs by ip: LSD radix sort, one byte per pass, skipping the bytes all keys share
 * (the high bytes of addresses in a few modules). tmp has room for n pairs. */
static void radix_pairs(nn_pair *a, nn_pair *tmp, size_t n)
{
	size_t count[256];
	for (unsigned shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof count);
		for (size_t i = 0; i < n; i++)
			count[(a[i].ip >> shift) & 0xff]++;
		if (count[(a[0].ip >> shift) & 0xff] == n)
			continue; /* every key has this byte */
		size_t sum = 0;
		for (unsigned k = 0; k < 256; k++) {
			size_t c = count[k];
			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(a[i].ip >> shift) & 0xff]++] = a[i];
		memcpy(a, tmp, n * sizeof *a);
	}
}

int nt_native_resolve_batch(nt_native *nn, const uint64_t *ips, size_t n, nt_native_result *out,
			    nt_error *err)
{
	if (n == 0)
		return 0;
	size_t bytes;
	nn_pair *p = NULL, *tmp = NULL;
	if (!nt_mul_size(n, sizeof(nn_pair), &bytes)) {
		p = malloc(bytes);
		tmp = malloc(bytes);
	}
	if (!p || !tmp) {
		free(p);
		free(tmp);
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET,
			       "out of memory resolving native symbols");
	}
	for (size_t i = 0; i < n; i++) {
		p[i].ip = ips[i];
		p[i].i = i;
	}
	radix_pairs(p, tmp, n);
	free(tmp);
	int rc = 0;
	const nn_centry *ce = NULL;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if ((i == 0 || p[i].ip != p[i - 1].ip) && resolve_ip(nn, p[i].ip, &ce)) {
			rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET,
				     "out of memory resolving native symbols");
			break;
		}
		if (out) {
			out[p[i].i].frames = ce->frames;
			out[p[i].i].n = ce->n;
		}
	}
	free(p);
	return rc;
}

size_t nt_native_module_count(const nt_native *nn)
{
	return nn ? nn->nmods : 0;
}

int nt_native_module_at(const nt_native *nn, size_t i, nt_native_module *out)
{
	if (!nn || i >= nn->nmods)
		return 0;
	const nn_module *m = &nn->mods[i];
	memset(out, 0, sizeof *out);
	out->path = m->path;
	out->name = m->name;
	out->base = m->base;
	out->size = m->size;
	out->file_offset = m->file_offset;
	out->build_id = m->build_id;
	out->file_build_id = m->obj != SIZE_MAX ? nn->objs[m->obj].build_id : "";
	out->status = m->status;
	out->message = m->message;
	out->lookups = m->lookups;
	return 1;
}

const char *nt_native_status_name(int status)
{
	switch (status) {
	case NT_NATIVE_UNUSED: return "unused";
	case NT_NATIVE_OK: return "ok";
	case NT_NATIVE_SYMBOLS_ONLY: return "symbols only";
	case NT_NATIVE_NO_SYMBOLS: return "no symbols";
	case NT_NATIVE_MISSING: return "missing";
	case NT_NATIVE_BUILD_ID_MISMATCH: return "build id mismatch";
	case NT_NATIVE_BAD_FILE: return "bad file";
	default: return "?";
	}
}
