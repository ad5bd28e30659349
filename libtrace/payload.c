/* SPDX-License-Identifier: MIT */
/* payload.c - decoding event payloads field by field from metadata (file or built-in):
 * JSON rendering for dumps and the SQL store, and single-field lookup for analysis.
 * Payload bytes are untrusted: every field is bounds-checked; a mismatch is reported in
 * the output, never as a failure. Not here: metadata parsing (metadata.c). */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#define MAX_DEPTH 8
/* Work limits (the layout comes from the file too): values that consume no payload bytes
 * (empty objects, fixed-length arrays of them) can nest 8 levels of 65535 elements, which
 * is 2^128 steps for a 0-byte payload, and field names repeated per array element can
 * turn a small payload into gigabytes of JSON. Real payloads stay far below both limits. */
#define STEPS_PER_BYTE 2
#define STEPS_BASE 65536u
#define JSON_PER_BYTE 64
#define JSON_BASE (1u << 20)

typedef struct jbuf {
	const nt_sink *sink;
	char buf[4096];
	size_t n;
	int rc;
	size_t total; /* bytes produced so far */
	size_t limit; /* stop decoding values past this many bytes */
} jbuf;

static void jflush(jbuf *j)
{
	if (j->n && j->rc == 0)
		j->rc = j->sink->write(j->sink->ctx, j->buf, j->n);
	j->n = 0;
}

static void jput(jbuf *j, const char *s, size_t len)
{
	j->total += len;
	while (len) {
		if (j->n == sizeof j->buf)
			jflush(j);
		size_t k = sizeof j->buf - j->n;
		if (k > len)
			k = len;
		memcpy(j->buf + j->n, s, k);
		j->n += k;
		s += k;
		len -= k;
	}
}

static void jputs(jbuf *j, const char *s)
{
	jput(j, s, strlen(s));
}

static void jprintf(jbuf *j, const char *fmt, ...) NT_PRINTF(2, 3);
static void jprintf(jbuf *j, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		jput(j, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void jput_cb(void *ctx, const char *s, size_t n)
{
	jput(ctx, s, n);
}

/* A JSON string of UTF-8 text s[0..n) (json.c: always valid UTF-8 JSON). */
static void jstrn(jbuf *j, const char *s, size_t n)
{
	jput(j, "\"", 1);
	nt_json_escape(s, n, jput_cb, j);
	jput(j, "\"", 1);
}

static void jstr(jbuf *j, const char *s)
{
	jstrn(j, s, strlen(s));
}

static void jguid(jbuf *j, const uint8_t *g)
{
	jprintf(j, "\"%08" PRIx32 "-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x\"", nt_le32(g),
		nt_le16(g + 4), nt_le16(g + 6), g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

static size_t scalar_size(uint32_t type, uint32_t ptrsize)
{
	switch (type) {
	case NT_TYPE_BOOL32: return 4;
	case NT_TYPE_CHAR: return 2;
	case NT_TYPE_I8: case NT_TYPE_U8: case NT_TYPE_BOOL8: case NT_TYPE_UTF8CHAR: return 1;
	case NT_TYPE_I16: case NT_TYPE_U16: return 2;
	case NT_TYPE_I32: case NT_TYPE_U32: case NT_TYPE_F32: return 4;
	case NT_TYPE_I64: case NT_TYPE_U64: case NT_TYPE_F64: case NT_TYPE_DATETIME: return 8;
	case NT_TYPE_DECIMAL: case NT_TYPE_GUID: return 16;
	case NT_TYPE_RELLOC: case NT_TYPE_DATALOC: return 4;
	case NT_TYPE_POINTER: return ptrsize;
	default: return 0;
	}
}

typedef struct pctx {
	const uint8_t *p;
	size_t len, pos;
	uint32_t ptrsize;
	const char *error; /* first decoding problem */
	size_t steps, max_steps; /* decode_value calls so far, and the budget */
} pctx;

/* Pointer-sized fields read 4 or 8 bytes; any other caller-supplied size would make the
 * bounds check (by size) and the load (4 or 8 bytes) disagree. */
static uint32_t norm_ptrsize(uint32_t ps)
{
	return ps == 4 ? 4 : 8;
}

static void pctx_init(pctx *c, const nt_event *ev, uint32_t pointer_size)
{
	c->p = ev->payload;
	c->len = ev->payload ? ev->payload_len : 0;
	c->pos = 0;
	c->ptrsize = norm_ptrsize(pointer_size);
	c->error = NULL;
	c->steps = 0;
	c->max_steps = c->len <= (SIZE_MAX - STEPS_BASE) / STEPS_PER_BYTE
			       ? c->len * STEPS_PER_BYTE + STEPS_BASE
			       : SIZE_MAX;
}

static int decode_value(pctx *c, jbuf *j, uint32_t type, uint32_t elem, uint32_t fixed,
			const nt_field *sub, uint32_t nsub, int depth);

static int decode_fields(pctx *c, jbuf *j, const nt_field *f, uint32_t n, int depth)
{
	if (j)
		jputs(j, "{");
	for (uint32_t i = 0; i < n; i++) {
		if (j) {
			if (i)
				jputs(j, ",");
			jstr(j, f[i].name ? f[i].name : "");
			jputs(j, ":");
		}
		size_t before = j ? j->total : 0;
		if (decode_value(c, j, f[i].type, f[i].elem_type, f[i].fixed_count, f[i].fields,
				 f[i].nfields, depth + 1)) {
			/* A failed scalar wrote nothing; a failed array or object already wrote
			 * its closed prefix, and another "null" would make the JSON invalid. */
			if (j && j->total == before)
				jputs(j, "null");
			if (j)
				jputs(j, "}");
			return -1;
		}
	}
	if (j)
		jputs(j, "}");
	return 0;
}

static int need(pctx *c, size_t n, const char *what)
{
	if (c->len - c->pos < n) {
		if (!c->error)
			c->error = what;
		return -1;
	}
	return 0;
}

/* The value of the fixed-size scalar of `type` (scalar_size() sz > 0) whose bytes are at
 * p, into *v (already zeroed, its type set): read_scalar()'s, and nt_event_field_ref()'s
 * at a known offset. */
static inline void read_fixed(const uint8_t *p, uint32_t type, uint32_t ptrsize, size_t sz,
			      nt_value *v)
{
	v->raw = p;
	v->raw_len = sz;
	switch (type) {
	case NT_TYPE_BOOL8: case NT_TYPE_U8: case NT_TYPE_UTF8CHAR:
		v->u = p[0];
		v->i = (int64_t)v->u;
		break;
	case NT_TYPE_I8: v->i = (int8_t)p[0]; v->u = (uint64_t)v->i; break;
	case NT_TYPE_CHAR: case NT_TYPE_U16: v->u = nt_le16(p); v->i = (int64_t)v->u; break;
	case NT_TYPE_I16: v->i = (int16_t)nt_le16(p); v->u = (uint64_t)v->i; break;
	case NT_TYPE_BOOL32: case NT_TYPE_U32: case NT_TYPE_RELLOC: case NT_TYPE_DATALOC:
		v->u = nt_le32(p);
		v->i = (int64_t)v->u;
		break;
	case NT_TYPE_I32: v->i = (int32_t)nt_le32(p); v->u = (uint64_t)v->i; break;
	case NT_TYPE_I64: case NT_TYPE_DATETIME:
		v->i = (int64_t)nt_le64(p);
		v->u = (uint64_t)v->i;
		break;
	case NT_TYPE_U64: v->u = nt_le64(p); v->i = (int64_t)v->u; break;
	case NT_TYPE_POINTER:
		v->u = ptrsize == 8 ? nt_le64(p) : nt_le32(p);
		v->i = (int64_t)v->u;
		break;
	case NT_TYPE_F32: {
		uint32_t u = nt_le32(p);
		float fl;
		memcpy(&fl, &u, 4);
		v->d = fl;
		break;
	}
	case NT_TYPE_F64: {
		uint64_t u = nt_le64(p);
		memcpy(&v->d, &u, 8);
		break;
	}
	default: break; /* DECIMAL, GUID: raw bytes only */
	}
}

/* Decodes the scalar of `type` at c->pos into *v and moves past it: with read_fixed(),
 * its fixed-size half, the one place that knows how each field type is encoded (the JSON
 * renderer and nt_event_field both read values through it). Strings are not converted:
 * v->raw/raw_len give their bytes (UTF-16LE with the terminator for STRING, the UTF-8
 * bytes for UTF8_STRING16). */
static int read_scalar(pctx *c, uint32_t type, nt_value *v)
{
	memset(v, 0, sizeof *v);
	v->type = type;
	if (type == NT_TYPE_STRING) {
		size_t i;
		for (i = c->pos; i + 1 < c->len; i += 2)
			if (c->p[i] == 0 && c->p[i + 1] == 0)
				break;
		if (i + 1 >= c->len) {
			c->error = c->error ? c->error : "unterminated string";
			return -1;
		}
		v->raw = c->p + c->pos; /* only now: with an empty payload c->p may be NULL */
		v->raw_len = i + 2 - c->pos;
		c->pos = i + 2;
		return 0;
	}
	if (type == NT_TYPE_UTF8_STRING16) {
		if (need(c, 2, "payload ends inside a string length"))
			return -1;
		size_t n = nt_le16(c->p + c->pos);
		if (c->len - c->pos - 2 < n) {
			c->error = c->error ? c->error : "string longer than the payload";
			return -1;
		}
		v->raw = c->p + c->pos + 2;
		v->raw_len = n;
		v->u = n;
		c->pos += 2 + n;
		return 0;
	}
	if (type == NT_TYPE_VARINT || type == NT_TYPE_VARUINT) {
		nt_cursor cur;
		uint64_t u;
		nt_cur_init(&cur, c->p, c->len, 0);
		cur.pos = c->pos;
		if (nt_cur_varu64(&cur, &u)) {
			c->error = c->error ? c->error : "bad varint";
			return -1;
		}
		v->raw = c->p + c->pos;
		v->raw_len = cur.pos - c->pos;
		c->pos = cur.pos;
		if (type == NT_TYPE_VARINT) {
			v->i = (int64_t)((u >> 1) ^ (0 - (u & 1)));
			v->u = (uint64_t)v->i;
		} else {
			v->u = u;
			v->i = (int64_t)u;
		}
		return 0;
	}
	size_t sz = scalar_size(type, c->ptrsize);
	if (sz == 0) {
		c->error = c->error ? c->error : "unknown field type";
		return -1;
	}
	if (need(c, sz, "payload shorter than its fields"))
		return -1;
	read_fixed(c->p + c->pos, type, c->ptrsize, sz, v);
	c->pos += sz;
	return 0;
}

/* Writes a value decoded by read_scalar as JSON. */
static void json_scalar(jbuf *j, const nt_value *v)
{
	switch (v->type) {
	case NT_TYPE_STRING: {
		char *s;
		size_t used = nt_utf16z_dup(v->raw, v->raw_len, &s);
		if (used == (size_t)-1 || !s) {
			jputs(j, "null");
		} else {
			jstr(j, s);
			free(s);
		}
		break;
	}
	case NT_TYPE_UTF8_STRING16: jstrn(j, (const char *)v->raw, v->raw_len); break;
	case NT_TYPE_BOOL32: case NT_TYPE_BOOL8: jputs(j, v->u ? "true" : "false"); break;
	case NT_TYPE_CHAR: case NT_TYPE_UTF8CHAR: case NT_TYPE_U8: case NT_TYPE_U16:
	case NT_TYPE_U32: case NT_TYPE_RELLOC: case NT_TYPE_DATALOC: case NT_TYPE_U64:
	case NT_TYPE_VARUINT:
		jprintf(j, "%" PRIu64, v->u);
		break;
	case NT_TYPE_I8: case NT_TYPE_I16: case NT_TYPE_I32: case NT_TYPE_I64:
	case NT_TYPE_DATETIME: case NT_TYPE_VARINT:
		jprintf(j, "%" PRId64, v->i);
		break;
	case NT_TYPE_F32:
		if (isfinite(v->d))
			jprintf(j, "%.9g", v->d);
		else
			jputs(j, "null");
		break;
	case NT_TYPE_F64:
		if (isfinite(v->d))
			jprintf(j, "%.17g", v->d);
		else
			jputs(j, "null");
		break;
	case NT_TYPE_GUID: jguid(j, v->raw); break;
	case NT_TYPE_POINTER: jprintf(j, "\"0x%" PRIx64 "\"", v->u); break;
	default:
		/* DECIMAL: raw hex */
		jputs(j, "\"");
		for (size_t i = 0; i < v->raw_len; i++)
			jprintf(j, "%02x", v->raw[i]);
		jputs(j, "\"");
	}
}

static int decode_scalar(pctx *c, jbuf *j, uint32_t type)
{
	nt_value v;
	if (read_scalar(c, type, &v))
		return -1;
	if (j)
		json_scalar(j, &v);
	return 0;
}

static int decode_value(pctx *c, jbuf *j, uint32_t type, uint32_t elem, uint32_t fixed,
			const nt_field *sub, uint32_t nsub, int depth)
{
	if (depth > MAX_DEPTH) {
		c->error = c->error ? c->error : "nesting too deep";
		return -1;
	}
	if (++c->steps > c->max_steps) {
		c->error = c->error ? c->error : "too many values for the payload size";
		return -1;
	}
	if (j && j->total > j->limit) {
		c->error = c->error ? c->error : "JSON output limit reached";
		return -1;
	}
	if (type == NT_TYPE_OBJECT)
		return decode_fields(c, j, sub, nsub, depth);
	if (type == NT_TYPE_ARRAY || type == NT_TYPE_FIXED_ARRAY) {
		uint32_t n = fixed;
		if (type == NT_TYPE_ARRAY) {
			if (need(c, 2, "payload ends inside an array count"))
				return -1;
			n = nt_le16(c->p + c->pos);
			c->pos += 2;
		}
		if (j)
			jputs(j, "[");
		for (uint32_t i = 0; i < n; i++) {
			if (j && i)
				jputs(j, ",");
			size_t before = j ? j->total : 0;
			if (decode_value(c, j, elem, 0, 0, sub, nsub, depth + 1)) {
				/* as in decode_fields: keep the JSON valid after a "," */
				if (j && j->total == before && i)
					jputs(j, "null");
				if (j)
					jputs(j, "]");
				return -1;
			}
		}
		if (j)
			jputs(j, "]");
		return 0;
	}
	return decode_scalar(c, j, type);
}

int nt_payload_write_json(const nt_event *ev, uint32_t pointer_size, const nt_sink *sink)
{
	jbuf *j = malloc(sizeof *j);
	if (!j)
		return NT_ENOMEM;
	j->sink = sink;
	j->n = 0;
	j->rc = 0;
	j->total = 0;
	pctx c;
	pctx_init(&c, ev, pointer_size);
	j->limit = c.len <= (SIZE_MAX - JSON_BASE) / JSON_PER_BYTE ? c.len * JSON_PER_BYTE + JSON_BASE
								   : SIZE_MAX;
	const nt_metadata *m = ev->meta;
	if (m && m->nfields) {
		int bad = decode_fields(&c, j, m->fields, m->nfields, 0);
		/* Close with the problem and the undecoded rest, so nothing is lost. */
		if (bad || c.pos < c.len) {
			j->n--; /* drop the closing brace (just written, so still in the buffer) */
			j->total--;
			if (bad)
				jprintf(j, ",\"_error\":\"%s\"", c.error ? c.error : "decode error");
			if (c.pos < c.len) {
				jputs(j, ",\"_rest\":\"");
				for (size_t i = c.pos; i < c.len; i++)
					jprintf(j, "%02x", c.p[i]);
				jputs(j, "\"");
			}
			jputs(j, "}");
		}
	} else if (c.len) {
		jputs(j, "{\"_raw\":\"");
		for (size_t i = 0; i < c.len; i++)
			jprintf(j, "%02x", c.p[i]);
		jputs(j, "\"}");
	} else {
		jputs(j, "{}");
	}
	jflush(j);
	int rc = j->rc;
	free(j);
	return rc;
}

static int is_compound(uint32_t type)
{
	return type == NT_TYPE_OBJECT || type == NT_TYPE_ARRAY || type == NT_TYPE_FIXED_ARRAY;
}

int nt_event_field(const nt_event *ev, uint32_t pointer_size, const char *name, nt_value *out)
{
	const nt_metadata *m = ev->meta;
	if (!m)
		return 0;
	pctx c;
	pctx_init(&c, ev, pointer_size);
	for (uint32_t i = 0; i < m->nfields; i++) {
		const nt_field *f = &m->fields[i];
		size_t start = c.pos;
		int match = f->name && strcmp(f->name, name) == 0;
		if (match && !is_compound(f->type))
			return read_scalar(&c, f->type, out) == 0;
		/* skipped (or a compound field: its bytes only) by the same decoder */
		if (decode_value(&c, NULL, f->type, f->elem_type, f->fixed_count, f->fields,
				 f->nfields, 0))
			return 0;
		if (match) {
			memset(out, 0, sizeof *out);
			out->type = f->type;
			out->raw = c.p + start;
			out->raw_len = c.pos - start;
			return 1;
		}
	}
	return 0;
}

/* Where nt_event_field() would find name in m's events: a fixed offset, NT_FIELD_WALK, or
 * NT_FIELD_NONE. The first field of that name decides, as there. */
static void field_ref_resolve(const nt_metadata *m, uint32_t ptrsize, const char *name,
			      nt_field_ref *ref)
{
	ref->meta = m;
	ref->ptrsize = ptrsize;
	ref->off = NT_FIELD_NONE;
	ref->type = 0;
	ref->size = 0;
	size_t off = 0;
	int fixed = 1; /* every field so far a scalar of fixed size */
	for (uint32_t i = 0; i < m->nfields; i++) {
		const nt_field *f = &m->fields[i];
		size_t sz = is_compound(f->type) ? 0 : scalar_size(f->type, ptrsize);
		if (f->name && strcmp(f->name, name) == 0) {
			if (fixed && sz && off <= INT32_MAX) {
				ref->off = (int32_t)off;
				ref->type = f->type;
				ref->size = (uint32_t)sz;
			} else {
				ref->off = NT_FIELD_WALK;
			}
			return;
		}
		if (!sz)
			fixed = 0;
		off += sz;
	}
}

int nt_event_field_ref(const nt_event *ev, uint32_t pointer_size, const char *name,
		       nt_field_ref *ref, nt_value *out)
{
	const nt_metadata *m = ev->meta;
	if (!m)
		return 0;
	uint32_t ps = norm_ptrsize(pointer_size);
	if (ref->meta != m || ref->ptrsize != ps)
		field_ref_resolve(m, ps, name, ref);
	if (ref->off == NT_FIELD_NONE)
		return 0;
	if (ref->off == NT_FIELD_WALK)
		return nt_event_field(ev, pointer_size, name, out);
	/* a payload too short for the field or those before: nt_event_field() fails there
	 * too (pctx_init(): no payload is an empty one) */
	size_t len = ev->payload ? ev->payload_len : 0;
	if (len < (size_t)ref->off || len - (size_t)ref->off < ref->size)
		return 0;
	memset(out, 0, sizeof *out);
	out->type = ref->type;
	read_fixed(ev->payload + ref->off, ref->type, ps, ref->size, out);
	return 1;
}

/* The provider text of the records whose events are SampleProfiler samples: theirs points
 * at one of these instead of their own copy (metadata.c), [0] for the runtime's, [1] for a
 * native sampler's (NT_META_NATIVE_SAMPLE), so that a record's kind is a pointer. */
const char nt_sample_provider[2][sizeof NT_PROVIDER_SAMPLER] = {NT_PROVIDER_SAMPLER,
								 NT_PROVIDER_SAMPLER};

/* A native sampler's ThreadSample (version >= 1 with State, doc/format/sampler-events.md)
 * says Managed (2) for a running thread only so that TraceEvent's thread-time computer
 * counts it as CPU: its stack is native code, External to this toolkit, whose tools read
 * running or not from State. */
int nt_meta_sample_kind_text(const nt_metadata *m)
{
	/* event 0 of the reader's other records, and any record a caller made */
	if (!m || m->event_id != 0 || !m->provider ||
	    strcmp(m->provider, NT_PROVIDER_SAMPLER) != 0)
		return 0;
	return m->version >= 1 && m->nfields >= 3 && m->fields && m->fields[2].name &&
			       strcmp(m->fields[2].name, "State") == 0
		       ? NT_META_NATIVE_SAMPLE
		       : NT_META_SAMPLE;
}

int nt_event_is_sample(const nt_event *ev, uint32_t *type)
{
	int kind = nt_meta_sample_kind(ev->meta);
	if (!kind)
		return 0;
	if (type)
		*type = nt_sample_type(ev, kind);
	return 1;
}
