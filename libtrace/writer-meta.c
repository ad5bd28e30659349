/* SPDX-License-Identifier: MIT */
/* writer-meta.c - the writer's metadata encoding: an nt_metadata_desc as a V4/V5
 * metadata payload (field descriptions V1, or V2 when arrays need it) or as a V6
 * metadata row, with the type checks of each format (spec §4, §7.4). */
#include "internal.h"
#include "writer.h"

#include <inttypes.h>

/* ---------------------------------------------------------------------------------------
 * Metadata encoding
 * ------------------------------------------------------------------------------------- */

/* Type codes a V4/V5 record may carry outside arrays (spec §4): Object and 3..18. */
static int v5_type_ok(uint32_t t)
{
	return t == NT_TYPE_OBJECT || (t >= NT_TYPE_BOOL32 && t <= NT_TYPE_STRING);
}

/* Type codes of V6 (spec §7.4): Object and 3..26. */
static int v6_type_ok(uint32_t t)
{
	return t == NT_TYPE_OBJECT || (t >= NT_TYPE_BOOL32 && t <= NT_TYPE_BOOL8);
}

static int v6_has_elem(uint32_t t)
{
	return t == NT_TYPE_ARRAY || t == NT_TYPE_FIXED_ARRAY || t == NT_TYPE_RELLOC ||
	       t == NT_TYPE_DATALOC;
}

static int bad_type(nt_error *err, const nt_field *f, uint32_t t, const char *fmt_name)
{
	return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
		       "field '%s': type %" PRIu32 " cannot be written in format %s",
		       f->name ? f->name : "", t, fmt_name);
}

static int bad_fields(nt_error *err, const char *why)
{
	return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "metadata fields: %s", why);
}

/* 1 when some field, at any depth, is an array: V5 can describe arrays only in the
 * V2Params tag (spec §4). */
static int fields_have_array(const nt_field *f, uint32_t n, unsigned depth)
{
	if (!f || depth > WR_MAX_FIELD_DEPTH)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		if (f[i].type == NT_TYPE_ARRAY)
			return 1;
		if (f[i].type == NT_TYPE_OBJECT &&
		    fields_have_array(f[i].fields, f[i].nfields, depth + 1))
			return 1;
	}
	return 0;
}

/* V1 field list: int32 count, then per field int32 TypeCode, [nested list if Object],
 * UTF-16z name (spec §4). */
static int v5_fields_v1(wbuf *b, const nt_field *f, uint32_t n, unsigned depth, nt_error *err)
{
	if (depth > WR_MAX_FIELD_DEPTH)
		return bad_fields(err, "nested deeper than 32 levels");
	if (n && !f)
		return bad_fields(err, "nfields > 0 but fields is NULL");
	int bad = wb_u32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		if (!v5_type_ok(f[i].type))
			return bad_type(err, &f[i], f[i].type, "5");
		bad |= wb_u32(b, f[i].type);
		if (f[i].type == NT_TYPE_OBJECT) {
			int rc = v5_fields_v1(b, f[i].fields, f[i].nfields, depth + 1, err);
			if (rc)
				return rc;
		}
		bad |= wb_utf16z(b, f[i].name);
	}
	return bad ? wr_oom(err) : 0;
}

/* V2Params field list: int32 count, then per field int32 FieldSize (including itself),
 * UTF-16z name, int32 TypeCode, [int32 element type if Array], [nested list if Object or
 * array of Object] (spec §4; ep-metadata-generator.c for the order). */
static int v5_fields_v2(wbuf *b, const nt_field *f, uint32_t n, unsigned depth, nt_error *err)
{
	if (depth > WR_MAX_FIELD_DEPTH)
		return bad_fields(err, "nested deeper than 32 levels");
	if (n && !f)
		return bad_fields(err, "nfields > 0 but fields is NULL");
	if (wb_u32(b, n))
		return wr_oom(err);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t t = f[i].type;
		size_t start = b->len;
		int rc = 0;
		int bad = wb_u32(b, 0) | wb_utf16z(b, f[i].name) | wb_u32(b, t);
		if (t == NT_TYPE_ARRAY) {
			/* nt_field has one element type, so arrays of arrays are not describable */
			if (!v5_type_ok(f[i].elem_type))
				return bad_type(err, &f[i], f[i].elem_type, "5 (array element)");
			bad |= wb_u32(b, f[i].elem_type);
			if (f[i].elem_type == NT_TYPE_OBJECT)
				rc = v5_fields_v2(b, f[i].fields, f[i].nfields, depth + 1, err);
		} else if (t == NT_TYPE_OBJECT) {
			rc = v5_fields_v2(b, f[i].fields, f[i].nfields, depth + 1, err);
		} else if (!v5_type_ok(t)) {
			return bad_type(err, &f[i], t, "5");
		}
		if (rc)
			return rc;
		if (bad)
			return wr_oom(err);
		if (b->len - start > INT32_MAX)
			return bad_fields(err, "field description too large");
		nt_put32(b->p + start, (uint32_t)(b->len - start));
	}
	return 0;
}

/* V4/V5 metadata payload (spec §4): int32 id, UTF-16z provider, int32 event id, UTF-16z
 * name, int64 keywords, int32 version, int32 level, V1 fields, then the V5 OpCode tag when
 * opcode != 0 and the V2Params tag (with V1 field count 0) when a field is an array, as
 * the runtime's metadata generator does. */
int nt_wr_meta_v5(wbuf *b, uint32_t id, const nt_metadata_desc *d, nt_error *err)
{
	int has_array = fields_have_array(d->fields, d->nfields, 0);
	int rc;
	int bad = wb_u32(b, id) | wb_utf16z(b, d->provider) | wb_u32(b, d->event_id) |
		  wb_utf16z(b, d->name) | wb_u64(b, d->keywords) | wb_u32(b, d->version) |
		  wb_u32(b, d->level);
	if (bad)
		return wr_oom(err);
	if (has_array)
		rc = wb_u32(b, 0) ? wr_oom(err) : 0;
	else
		rc = v5_fields_v1(b, d->fields, d->nfields, 0, err);
	if (rc)
		return rc;
	if (d->opcode != 0) {
		if (d->opcode > 0xFF)
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
				       "opcode %" PRIu32 " does not fit the 8-bit OpCode tag",
				       d->opcode);
		/* tag payload size 1, kind 1 = OpCode, the opcode */
		if (wb_u32(b, 1) | wb_u8(b, 1) | wb_u8(b, (uint8_t)d->opcode))
			return wr_oom(err);
	}
	if (has_array) {
		size_t start = b->len;
		/* tag payload size (patched: bytes after the kind byte), kind 2 = V2Params */
		if (wb_u32(b, 0) | wb_u8(b, 2))
			return wr_oom(err);
		rc = v5_fields_v2(b, d->fields, d->nfields, 0, err);
		if (rc)
			return rc;
		if (b->len - start - 5 > INT32_MAX)
			return bad_fields(err, "V2Params tag too large");
		nt_put32(b->p + start, (uint32_t)(b->len - start - 5));
	}
	return 0;
}

static int v6_fields(wbuf *b, const nt_field *f, uint32_t n, unsigned depth, nt_error *err);

/* V6 Type: uint8 code, [element Type if Array/FixedLengthArray/RelLoc/DataLoc], [uint16
 * count if FixedLengthArray], [FieldDescriptions if Object] (spec §7.4). */
static int v6_type(wbuf *b, const nt_field *f, unsigned depth, nt_error *err)
{
	uint32_t t = f->type;
	/* a Universal provider's string (a uint16 length and UTF-8 bytes) is declared as
	 * UTF8CHAR, as its writers do; the reader takes it back as such for those providers
	 * (metadata.c), so a payload copied from a trace keeps its meaning */
	if (t == NT_TYPE_UTF8_STRING16 && depth == 0)
		return wb_u8(b, NT_TYPE_UTF8CHAR) ? wr_oom(err) : 0;
	if (!v6_type_ok(t))
		return bad_type(err, f, t, "6");
	int bad = wb_u8(b, (uint8_t)t);
	int rc = 0;
	if (v6_has_elem(t)) {
		uint32_t et = f->elem_type;
		if (!v6_type_ok(et) || v6_has_elem(et))
			return bad_type(err, f, et, "6 (array element)");
		bad |= wb_u8(b, (uint8_t)et);
		if (et == NT_TYPE_OBJECT)
			rc = v6_fields(b, f->fields, f->nfields, depth + 1, err);
		if (!rc && t == NT_TYPE_FIXED_ARRAY) {
			if (f->fixed_count > 0xFFFF)
				return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
					       "field '%s': fixed array count %" PRIu32
					       " exceeds 65535",
					       f->name ? f->name : "", f->fixed_count);
			bad |= wb_u16(b, (uint16_t)f->fixed_count);
		}
	} else if (t == NT_TYPE_OBJECT) {
		rc = v6_fields(b, f->fields, f->nfields, depth + 1, err);
	}
	if (rc)
		return rc;
	return bad ? wr_oom(err) : 0;
}

/* V6 FieldDescriptions: uint16 count, then per field uint16 FieldSize (excluding itself),
 * string name, Type (spec §7.4). */
static int v6_fields(wbuf *b, const nt_field *f, uint32_t n, unsigned depth, nt_error *err)
{
	if (depth > WR_MAX_FIELD_DEPTH)
		return bad_fields(err, "nested deeper than 32 levels");
	if (n && !f)
		return bad_fields(err, "nfields > 0 but fields is NULL");
	if (n > 0xFFFF)
		return bad_fields(err, "more than 65535 fields");
	if (wb_u16(b, (uint16_t)n))
		return wr_oom(err);
	for (uint32_t i = 0; i < n; i++) {
		size_t start = b->len;
		if (wb_u16(b, 0) | wb_v6str(b, f[i].name))
			return wr_oom(err);
		int rc = v6_type(b, &f[i], depth, err);
		if (rc)
			return rc;
		if (b->len - start - 2 > 0xFFFF)
			return bad_fields(err, "field description larger than 65535 bytes");
		nt_put16(b->p + start, (uint16_t)(b->len - start - 2));
	}
	return 0;
}

/* V6 metadata row including its uint16 Size (spec §7.4). Keywords, level, version and
 * opcode go in OptionalMetadata, each only when non-zero (absent means 0). */
int nt_wr_meta_v6(wbuf *b, uint32_t id, const nt_metadata_desc *d, nt_error *err)
{
	if (d->level > 0xFF || d->version > 0xFF || d->opcode > 0xFF)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "level %" PRIu32 ", version %" PRIu32 " or opcode %" PRIu32
			       " does not fit the 8-bit V6 field",
			       d->level, d->version, d->opcode);
	int bad = wb_u16(b, 0) | wb_varu64(b, id) | wb_v6str(b, d->provider) |
		  wb_varu64(b, d->event_id) | wb_v6str(b, d->name);
	if (bad)
		return wr_oom(err);
	int rc = v6_fields(b, d->fields, d->nfields, 0, err);
	if (rc)
		return rc;
	size_t opt = b->len;
	bad = wb_u16(b, 0);
	if (d->opcode)
		bad |= wb_u8(b, 1) | wb_u8(b, (uint8_t)d->opcode);
	if (d->keywords)
		bad |= wb_u8(b, 3) | wb_u64(b, d->keywords);
	if (d->level)
		bad |= wb_u8(b, 8) | wb_u8(b, (uint8_t)d->level);
	if (d->version)
		bad |= wb_u8(b, 9) | wb_u8(b, (uint8_t)d->version);
	if (bad)
		return wr_oom(err);
	nt_put16(b->p + opt, (uint16_t)(b->len - opt - 2));
	if (b->len - 2 > 0xFFFF)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "metadata row of %zu bytes exceeds the V6 limit of 65535",
			       b->len - 2);
	nt_put16(b->p, (uint16_t)(b->len - 2));
	return 0;
}
