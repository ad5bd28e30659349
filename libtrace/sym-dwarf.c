/* SPDX-License-Identifier: MIT */
/* sym-dwarf.c - native symbols, DWARF through libdwarf: opening it, the compile-unit index,
 * DIE attributes and range lists, names through the origin chain, a unit's scopes (the
 * libdwarf walk, the fallback of the direct reader: sym-native.h says when), its file
 * names and line table (rows from sym-dwarf-direct.c), parsing a unit. */
#include "sym-native.h"

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

int nn_push_rng(nt_native *nn, uint64_t lo, uint64_t hi)
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
			rc = nn_push_rng(nn, c1, c2);
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
		rc = nn_push_rng(nn, base + r[i].dwr_addr1, base + r[i].dwr_addr2);
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
	out->linkage = nn_intern_opt(nn, di.linkage, &oom);
	out->name = nn_intern_opt(nn, di.name, &oom);
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

/* Adds the scope of a subprogram or inlined instance (parent NN_NONE for a subprogram).
 * *scope gets its index, or NN_NONE when the DIE covers no code (a declaration, an
 * abstract instance): then its children are not walked. */
int nn_add_scope_di(cuwalk *w, const dinfo *dip, uint32_t parent, uint32_t depth,
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
			if (nn_push_iv(nn, nn->rng[i], nn->rng[i + 1], depth, id))
				return -1;
	} else if (nn_push_iv(nn, di.lo, di.hi, depth, id)) {
		return -1;
	}
	if (nn->nivs == before)
		return 0; /* only discarded code */
	nn_oname on = {di.linkage, di.name};
	int oom = 0;
	on.linkage = nn_intern_opt(nn, on.linkage, &oom);
	on.name = nn_intern_opt(nn, on.name, &oom);
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

/* nn_add_scope_di() for a DIE read through libdwarf. */
static int add_scope(cuwalk *w, Dwarf_Die d, uint32_t parent, uint32_t depth, uint32_t *scope)
{
	dinfo di;
	*scope = NN_NONE;
	if (read_die(w->nn, w->o->dbg, d, 1, w->cu->base, w->version, &di))
		return -1;
	return nn_add_scope_di(w, &di, parent, depth, scope);
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
		nn_load_sections(o);
	if (!o->sec[SEC_LINE].p)
		return 0;
	size_t nraw = 0;
	unsigned lver = 0;
	if (nn_run_line_program(o->sec[SEC_LINE].p, o->sec[SEC_LINE].len, cu->line_off, &nn->rows,
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
				cu->files[(size_t)i + shift] = nn_intern(nn, sf[i]);
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
const nn_row *nn_row_find(const nn_cu *cu, uint64_t addr)
{
	size_t lo;
	NT_PARTITION(lo, cu->nrows, mid, cu->rows[mid].addr <= addr);
	if (lo == 0 || cu->rows[lo - 1].file == NN_ROW_END)
		return NULL;
	return &cu->rows[lo - 1];
}

/* Parses one compile unit: line table, file names, scopes. A unit libdwarf cannot open is
 * marked unusable (its addresses get ELF symbols). Returns -1 only when out of memory. */
int nn_cu_parse(nt_native *nn, nn_object *o, nn_cu *cu)
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
			nn_load_sections(o);
		rc = o->sec[SEC_INFO].p && o->sec[SEC_ABBREV].p ? nn_dr_walk(&w) : 1;
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
		rc = nn_flatten(nn->ivs, nn->nivs, &cu->segs, &cu->nsegs);
	nn->nivs = 0;
	if (rc == 0)
		cu->state = 1;
	return rc;
}

void nn_cu_free(nn_cu *cu)
{
	free(cu->scopes);
	free(cu->segs);
	free(cu->rows);
	free(cu->files);
}

/* Opens libdwarf on path; 1 if it has DWARF, 0 if not (or unreadable). */
int nn_dwarf_open(nn_object *o, const char *path)
{
	int fd = nn_open_regular(path);
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
int nn_cu_index(nt_native *nn, nn_object *o)
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
				if (nn_push_iv(nn, nn->rng[i], nn->rng[i + 1], 0, id))
					ret = -1;
		} else if (di.has_lo && di.has_hi) {
			if (nn_push_iv(nn, di.lo, di.hi, 0, id))
				ret = -1;
		}
	}
	if (ret == 0)
		ret = nn_flatten(nn->ivs, nn->nivs, &o->cusegs, &o->ncusegs);
	nn->nivs = 0;
	return ret;
}
