/* SPDX-License-Identifier: MIT */
/* sym-dwarf-direct.c - native symbols, DWARF straight from the section bytes through
 * bounds-checked cursors: the DWARF sections of an object (libelf, decompressed), the
 * walk of a unit's scope DIEs (DWARF 2-5 unit headers, abbreviations, forms), and line
 * programs. libdwarf allocates per DIE and per attribute, which cost most of the time, and
 * its line programs name the wrong file for some DWARF 5 rows; sym-native.h says when this
 * reader gives a unit back to the libdwarf walk (sym-dwarf.c). */
#include "sym-native.h"

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

/* The libdwarf walk (walk(), sym-dwarf.c) costs an allocation per DIE and per attribute
 * inside libdwarf, most of the time spent symbolizing. This reader walks the same DIEs of a
 * unit straight from the section bytes (DWARF 2-5 unit headers, abbreviations, forms; DWARF
 * 5 section 7.5), through bounds-checked cursors, and builds the same scopes with
 * nn_add_scope_di(). It answers "unsupported" (and the libdwarf walk runs instead) for
 * anything it does not know: an unknown form, a unit type without code, abbreviation codes
 * it cannot index, malformed bytes (sym-native.h has the whole rule). tests/unit/test-dwarf.c
 * checks both walks give the same frames. */

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

/* The class of a form's value (CL_OTHER: read and skipped, never used). */
static int form_class(uint32_t form)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_data1:
	case DW_FORM_flag:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
	case DW_FORM_udata: return CL_CONST;
	case DW_FORM_implicit_const:
	case DW_FORM_sdata: return CL_SCONST;
	case DW_FORM_ref1:
	case DW_FORM_ref2:
	case DW_FORM_ref4:
	case DW_FORM_ref8:
	case DW_FORM_ref_udata: return CL_REF;
	case DW_FORM_ref_addr: return CL_REFADDR;
	case DW_FORM_addr: return CL_ADDR;
	case DW_FORM_addrx1:
	case DW_FORM_addrx2:
	case DW_FORM_addrx3:
	case DW_FORM_addrx4:
	case DW_FORM_addrx:
	case NN_FORM_GNU_ADDR_INDEX: return CL_ADDRX;
	case DW_FORM_strp: return CL_STRP;
	case DW_FORM_line_strp: return CL_LINESTRP;
	case DW_FORM_strx1:
	case DW_FORM_strx2:
	case DW_FORM_strx3:
	case DW_FORM_strx4:
	case DW_FORM_strx:
	case NN_FORM_GNU_STR_INDEX: return CL_STRX;
	case DW_FORM_string: return CL_STRING;
	case DW_FORM_sec_offset: return CL_SECOFF;
	case DW_FORM_rnglistx: return CL_RNGLISTX;
	default: return CL_OTHER;
	}
}

/* Reads one attribute value: *cls and *v (for CL_STRING, the offset of the string in
 * .debug_info). Returns 0, or 1 when the bytes or the form are not what we can read.
 * Sizes are form_size()'s; the forms whose size it leaves variable are read here. */
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
	case DW_FORM_sdata: {
		int64_t sv;
		*cls = CL_SCONST;
		if (cur_sleb(c, &sv))
			return 1;
		*v = (uint64_t)sv;
		return 0;
	}
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
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
	case DW_FORM_block:
	case DW_FORM_exprloc:
		if (form == DW_FORM_block || form == DW_FORM_exprloc ? cur_uleb(c, &n)
		    : cur_uN(c, form == DW_FORM_block1 ? 1 : form == DW_FORM_block2 ? 2 : 4, &n))
			return 1;
		return n > nt_cur_left(c) || nt_cur_bytes(c, (size_t)n, &b) ? 1 : 0;
	case DW_FORM_indirect:
		return 1; /* unsupported */
	default:
		break;
	}
	int sz = form_size(r, form);
	if (sz == -2)
		return 1; /* unknown form */
	*cls = form_class(form);
	if (sz == -1) /* the variable forms left: ULEB128 values */
		return cur_uleb(c, v) ? 1 : 0;
	if (sz > 8)
		return nt_cur_skip(c, (size_t)sz) ? 1 : 0;
	return cur_uN(c, (unsigned)sz, v) ? 1 : 0;
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
				if (nn_push_rng(nn, a, b))
					return -1;
				break;
			case DW_RLE_startx_length:
				if (cur_uleb(&c, &a) || cur_uleb(&c, &b) || dr_addrx(r, a, &a))
					return 1;
				if (nn_push_rng(nn, a, a + b))
					return -1;
				break;
			case DW_RLE_offset_pair:
				if (cur_uleb(&c, &a) || cur_uleb(&c, &b))
					return 1;
				if (nn_push_rng(nn, base + a, base + b))
					return -1;
				break;
			case DW_RLE_base_address:
				if (cur_uN(&c, r->addr_size, &base))
					return 1;
				break;
			case DW_RLE_start_end:
				if (cur_uN(&c, r->addr_size, &a) || cur_uN(&c, r->addr_size, &b))
					return 1;
				if (nn_push_rng(nn, a, b))
					return -1;
				break;
			case DW_RLE_start_length:
				if (cur_uN(&c, r->addr_size, &a) || cur_uleb(&c, &b))
					return 1;
				if (nn_push_rng(nn, a, a + b))
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
		if (nn_push_rng(nn, base + a, base + b))
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

/* Reads attribute spec sp of a DIE at c: its class *cls and value *v, and a DW_AT_sibling
 * reference into *sibling (as an offset in the section). Returns 0, or 1 when the form is
 * unsupported or its bytes run out. */
static int dr_attr(const dread *r, nt_cursor *c, const nn_aspec *sp, int *cls, uint64_t *v,
		   uint64_t *sibling)
{
	if (read_form(r, c, sp->form, sp->implicit, cls, v))
		return 1;
	if (sp->at == DW_AT_sibling && *cls == CL_REF)
		*sibling = r->unit_off + *v;
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
		if (dr_attr(r, c, sp, &cls, &v, sibling))
			return 1;
		switch (sp->at) {
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
		int cls;
		uint64_t v;
		if (dr_attr(r, c, &r->specs[ab->first + i], &cls, &v, sibling))
			return 1;
	}
	return 0;
}

/* Walks the DIEs of w->cu as walk() does, straight from the bytes. Returns 0, -1 when out of
 * memory, 1 when unsupported (nothing of the unit is kept then: the caller resets it). */
int nn_dr_walk(cuwalk *w)
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
				    nn_add_scope_di(w, &di, ab->kind == K_SUBPROGRAM ? NN_NONE : scope,
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

static const char *const sec_names[SEC_COUNT] = {
	"info", "abbrev", "str", "line_str", "str_offsets", "addr", "rnglists", "ranges", "line",
	"loclists",
};

/* Finds the DWARF sections the direct readers use in the file that has the DWARF,
 * decompressed when SHF_COMPRESSED (or GNU .zdebug_*); a section that cannot be read stays
 * empty. */
void nn_load_sections(nn_object *o)
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
int nn_run_line_program(const uint8_t *sec, size_t seclen, uint64_t off, nn_row **rows,
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
