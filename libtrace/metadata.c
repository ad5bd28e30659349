/* SPDX-License-Identifier: MIT */
/* metadata.c - event metadata: parsing V4/V5 metadata payloads (V1 field lists, V5 tags
 * OpCode and V2Params with arrays) and V6 metadata rows, the id -> record store, and the
 * built-in payload layouts of schema-less runtime events (spec §4, §8, §9, §10).
 * Not here: decoding payloads with those layouts (payload.c). */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>

/* Nested Object descriptions are recursive; real metadata nests 1-2 levels. */
#define MAX_NESTING 8
/* Field count sanity limit: each field takes at least 6 bytes, and the payload is
 * bounded by the block; this only guards the recursion's total. */
#define MAX_FIELDS 65536u

typedef struct meta_rec {
	nt_metadata m;    /* first: nt_meta_events() finds the record from it */
	char *provider, *name;
	nt_field *fields; /* owned tree */
	uint32_t nfields;
	uint8_t *raw;
	uint64_t events;  /* the reader's count (nt_reader_metadata_events()) */
} meta_rec;

struct nt_meta_store {
	meta_rec **recs; /* in definition order */
	size_t n, cap;
	nt_idmap by_id;  /* id -> index of its latest definition in recs */
};

nt_meta_store *nt_meta_store_new(void)
{
	return calloc(1, sizeof(nt_meta_store));
}

static void free_fields(nt_field *f, uint32_t n)
{
	if (!f)
		return;
	for (uint32_t i = 0; i < n; i++) {
		free((char *)f[i].name);
		free_fields((nt_field *)f[i].fields, f[i].nfields);
	}
	free(f);
}

static void rec_free(meta_rec *r)
{
	if (!r)
		return;
	free(r->provider);
	free(r->name);
	free_fields(r->fields, r->nfields);
	free(r->raw);
	free(r);
}

void nt_meta_store_free(nt_meta_store *ms)
{
	if (!ms)
		return;
	for (size_t i = 0; i < ms->n; i++)
		rec_free(ms->recs[i]);
	free(ms->recs);
	nt_idmap_free(&ms->by_id);
	free(ms);
}

const nt_metadata *nt_meta_lookup(const nt_meta_store *ms, uint32_t id)
{
	size_t i;
	return nt_idmap_get(&ms->by_id, id, &i) ? &ms->recs[i]->m : NULL;
}

size_t nt_meta_count(const nt_meta_store *ms)
{
	return ms->n;
}

const nt_metadata *nt_meta_at(const nt_meta_store *ms, size_t i)
{
	return i < ms->n ? &ms->recs[i]->m : NULL;
}

/* Adds rec; a redefinition replaces the id mapping (V6 allows it after a metadata
 * flush; TraceEvent rejects it in V4, we keep the latest). */
static int store_add(nt_meta_store *ms, meta_rec *rec)
{
	if (nt_grow((void **)&ms->recs, &ms->cap, ms->n + 1, sizeof(meta_rec *)))
		return -1;
	/* A hash map, not a direct array: a direct map let one 30-byte record with id 2^20-1
	 * allocate 4 MB, and ids above it fell back to a linear scan per event (quadratic
	 * time for a file with many such ids). */
	if (nt_idmap_put(&ms->by_id, rec->m.id, ms->n))
		return -1;
	ms->recs[ms->n++] = rec;
	return 0;
}

static void rec_finish(meta_rec *rec)
{
	rec->m.provider = rec->provider ? rec->provider : "";
	rec->m.file_has_name = rec->name && rec->name[0];
	rec->m.fields = rec->fields;
	rec->m.nfields = rec->nfields;
	if (rec->nfields == 0) {
		const char *bname = NULL;
		uint32_t n = 0;
		const nt_field *bf = nt_builtin_layout(rec->m.provider, rec->m.event_id,
						       rec->m.version, &n, &bname);
		if (bf) {
			rec->m.fields = bf;
			rec->m.nfields = n;
			rec->m.builtin_layout = 1;
		}
		if (!rec->m.file_has_name && bname)
			rec->m.name = bname;
	}
	if (!rec->m.name)
		rec->m.name = rec->name ? rec->name : "";
	/* what its events are, worked out once: from the text (m is not marked yet), then
	 * kept as the provider pointer (internal.h) */
	int kind = nt_meta_sample_kind_text(&rec->m);
	if (kind)
		rec->m.provider = nt_sample_provider[kind == NT_META_NATIVE_SAMPLE];
	rec->m.sample_kind = (uint32_t)kind; /* (NT_META_* are NT_SAMPLE_KIND_*) */
}

uint64_t *nt_meta_events(const nt_metadata *m)
{
	return &((meta_rec *)(uintptr_t)m)->events;
}

/* ---------------------------------------------------------------- V4/V5 */

typedef struct mparse {
	nt_cursor c;
	nt_error *err;
	uint32_t total_fields;
} mparse;

static int mp_fail(mparse *mp, const char *what)
{
	return nt_fail(mp->err, NT_EFORMAT, nt_cur_offset(&mp->c), "bad metadata: %s", what);
}

static int mp_str16(mparse *mp, char **out, const char *what)
{
	size_t n = nt_utf16z_dup(mp->c.p + mp->c.pos, nt_cur_left(&mp->c), out);
	if (n == (size_t)-1)
		return nt_fail(mp->err, NT_ENOMEM, nt_cur_offset(&mp->c), "out of memory");
	if (n == 0)
		return mp_fail(mp, what);
	mp->c.pos += n;
	return 0;
}

/* The three field-list encodings (V1, V2Params, V6) differ only in the count's width,
 * the least size one field takes, their messages and how one field is read: one loop
 * reads them all. */
typedef struct {
	int count16;		/* the count is a uint16 (V6), else a uint32 */
	size_t min_field;	/* the fewest bytes one field takes */
	const char *deep;	/* nested deeper than MAX_NESTING */
	const char *no_count;	/* the input ends inside the count */
	const char *what;	/* "" or "V2 ": the count's name in its message */
	const char *within;	/* "payload" or "row" */
	int (*one)(mparse *mp, nt_field *f, int depth);
} field_list;

static int mp_field_list(mparse *mp, const field_list *k, nt_field **out, uint32_t *nout,
			 int depth)
{
	uint32_t n;
	*out = NULL;
	*nout = 0;
	if (depth > MAX_NESTING)
		return mp_fail(mp, k->deep);
	if (k->count16) {
		uint16_t n16;
		if (nt_cur_u16(&mp->c, &n16))
			return mp_fail(mp, k->no_count);
		n = n16;
	} else if (nt_cur_u32(&mp->c, &n)) {
		return mp_fail(mp, k->no_count);
	}
	if (n > nt_cur_left(&mp->c) / k->min_field || mp->total_fields + n > MAX_FIELDS)
		return nt_fail(mp->err, NT_EFORMAT, nt_cur_offset(&mp->c) - (k->count16 ? 2 : 4),
			       "bad metadata: %sfield count %" PRIu32 " exceeds the metadata %s "
			       "(%zu bytes left)",
			       k->what, n, k->within, nt_cur_left(&mp->c));
	mp->total_fields += n;
	if (n == 0)
		return 0;
	nt_field *f = calloc(n, sizeof *f);
	if (!f)
		return nt_fail(mp->err, NT_ENOMEM, nt_cur_offset(&mp->c), "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		int rc = k->one(mp, &f[i], depth);
		if (rc) {
			free_fields(f, n);
			return rc;
		}
	}
	*out = f;
	*nout = n;
	return 0;
}

static int mp_fields_v1(mparse *mp, nt_field **out, uint32_t *nout, int depth);

/* One V1 field: int32 type, [nested if Object], UTF-16z name. */
static int mp_field_v1(mparse *mp, nt_field *f, int depth)
{
	uint32_t type;
	if (nt_cur_u32(&mp->c, &type))
		return mp_fail(mp, "field list ends inside a type code");
	f->type = type;
	if (type == NT_TYPE_OBJECT) {
		nt_field *sub;
		uint32_t nsub;
		int rc = mp_fields_v1(mp, &sub, &nsub, depth + 1);
		if (rc)
			return rc;
		f->fields = sub;
		f->nfields = nsub;
	}
	char *name;
	int rc = mp_str16(mp, &name, "unterminated field name");
	if (rc)
		return rc;
	f->name = name;
	return 0;
}

static int mp_fields_v1(mparse *mp, nt_field **out, uint32_t *nout, int depth)
{
	/* each field takes at least 6 bytes (type + empty name) */
	static const field_list v1 = {0, 6, "nested field descriptions deeper than 8 levels",
				      "field list ends inside the field count", "", "payload",
				      mp_field_v1};
	return mp_field_list(mp, &v1, out, nout, depth);
}

static int mp_fields_v2(mparse *mp, nt_field **out, uint32_t *nout, int depth);

/* One V2Params field: int32 size (incl. itself), UTF-16z name, int32 type, [int32
 * element type if array], [nested if Object], padding to size. */
static int mp_field_v2(mparse *mp, nt_field *f, int depth)
{
	size_t start = mp->c.pos;
	uint32_t size, type;
	char *name;
	if (nt_cur_u32(&mp->c, &size))
		return mp_fail(mp, "V2 field ends inside its size");
	if (size < 4 || size - 4 > nt_cur_left(&mp->c))
		return mp_fail(mp, "V2 field size exceeds the metadata payload");
	int rc = mp_str16(mp, &name, "unterminated V2 field name");
	if (rc)
		return rc;
	f->name = name;
	if (nt_cur_u32(&mp->c, &type))
		return mp_fail(mp, "V2 field ends inside its type");
	f->type = type;
	uint32_t et = type;
	if (type == NT_TYPE_ARRAY) {
		if (nt_cur_u32(&mp->c, &et))
			return mp_fail(mp, "V2 field ends inside its element type");
		f->elem_type = et;
	}
	if (et == NT_TYPE_OBJECT) {
		nt_field *sub;
		uint32_t nsub;
		rc = mp_fields_v2(mp, &sub, &nsub, depth + 1);
		if (rc)
			return rc;
		f->fields = sub;
		f->nfields = nsub;
	}
	if (mp->c.pos - start > size)
		return mp_fail(mp, "V2 field description is longer than its size");
	mp->c.pos = start + size;
	return 0;
}

/* V2Params tag content: int32 count, then the fields. */
static int mp_fields_v2(mparse *mp, nt_field **out, uint32_t *nout, int depth)
{
	static const field_list v2 = {0, 10, "nested V2 field descriptions deeper than 8 levels",
				      "V2Params ends inside the field count", "V2 ", "payload",
				      mp_field_v2};
	return mp_field_list(mp, &v2, out, nout, depth);
}

/* The fields of a V5 metadata payload p into rec (the caller's, freed by it on failure). */
static int parse_v5(mparse *mp, meta_rec *rec, const uint8_t *p, size_t len, uint64_t offset)
{
	nt_error *err = mp->err;
	int rc;
	uint32_t id, evid, version, level;
	uint64_t kw;
	if (nt_cur_u32(&mp->c, &id)) {
		rc = mp_fail(mp, "payload ends inside the metadata id");
		goto fail;
	}
	rec->m.id = id;
	if (id == 0) {
		rc = nt_fail(err, NT_EFORMAT, offset, "bad metadata: metadata id 0 is reserved");
		goto fail;
	}
	if ((rc = mp_str16(mp, &rec->provider, "unterminated provider name")))
		goto fail;
	if (nt_cur_u32(&mp->c, &evid)) {
		rc = mp_fail(mp, "payload ends inside the event id");
		goto fail;
	}
	if ((rc = mp_str16(mp, &rec->name, "unterminated event name")))
		goto fail;
	if (nt_cur_u64(&mp->c, &kw) || nt_cur_u32(&mp->c, &version) || nt_cur_u32(&mp->c, &level)) {
		rc = mp_fail(mp, "payload ends inside keywords/version/level");
		goto fail;
	}
	rec->m.event_id = evid;
	rec->m.keywords = kw;
	rec->m.version = version;
	rec->m.level = level;
	/* "if the payload ends right after Level, treat as 0 fields" (TraceEvent) */
	if (nt_cur_left(&mp->c) > 0) {
		if ((rc = mp_fields_v1(mp, &rec->fields, &rec->nfields, 0)))
			goto fail;
		/* V5 tags until the end of the payload */
		while (nt_cur_left(&mp->c) > 0) {
			uint32_t tlen;
			uint8_t kind;
			if (nt_cur_u32(&mp->c, &tlen) || nt_cur_u8(&mp->c, &kind)) {
				rc = mp_fail(mp, "payload ends inside a V5 tag header");
				goto fail;
			}
			if (tlen > nt_cur_left(&mp->c)) {
				rc = mp_fail(mp, "V5 tag size exceeds the metadata payload");
				goto fail;
			}
			size_t tend = mp->c.pos + tlen;
			if (kind == 1 && tlen >= 1) {
				rec->m.opcode = mp->c.p[mp->c.pos];
			} else if (kind == 2) {
				nt_field *f2;
				uint32_t n2;
				mparse sub = *mp;
				sub.c.len = tend;
				rc = mp_fields_v2(&sub, &f2, &n2, 0);
				if (rc)
					goto fail;
				if (n2) {
					free_fields(rec->fields, rec->nfields);
					rec->fields = f2;
					rec->nfields = n2;
				}
			}
			mp->c.pos = tend; /* unknown tags are skipped */
		}
	}
	rec->raw = malloc(len ? len : 1);
	if (!rec->raw) {
		rc = nt_fail(err, NT_ENOMEM, offset, "out of memory");
		goto fail;
	}
	memcpy(rec->raw, p, len);
	rec->m.raw = rec->raw;
	rec->m.raw_len = len;
	return 0;
fail:
	return rc;
}

/* ---------------------------------------------------------------- V6 */

static int v6_str(mparse *mp, char **out, const char *what)
{
	uint32_t n;
	const uint8_t *p;
	if (nt_cur_varu32(&mp->c, &n) || nt_cur_bytes(&mp->c, n, &p))
		return mp_fail(mp, what);
	char *s = malloc((size_t)n + 1);
	if (!s)
		return nt_fail(mp->err, NT_ENOMEM, nt_cur_offset(&mp->c), "out of memory");
	memcpy(s, p, n);
	s[n] = '\0';
	*out = s;
	return 0;
}

static int v6_fields(mparse *mp, nt_field **out, uint32_t *nout, int depth);

static int v6_type(mparse *mp, nt_field *f, int depth)
{
	uint8_t t;
	if (nt_cur_u8(&mp->c, &t))
		return mp_fail(mp, "field ends inside its type");
	f->type = t;
	if (t == NT_TYPE_ARRAY || t == NT_TYPE_FIXED_ARRAY || t == NT_TYPE_RELLOC ||
	    t == NT_TYPE_DATALOC) {
		uint8_t et;
		if (nt_cur_u8(&mp->c, &et))
			return mp_fail(mp, "field ends inside its element type");
		f->elem_type = et;
		if (t == NT_TYPE_FIXED_ARRAY) {
			uint16_t cnt;
			if (nt_cur_u16(&mp->c, &cnt))
				return mp_fail(mp, "field ends inside its element count");
			f->fixed_count = cnt;
		}
		if (et == NT_TYPE_OBJECT)
			return v6_fields(mp, (nt_field **)&f->fields, &f->nfields, depth + 1);
	} else if (t == NT_TYPE_OBJECT) {
		return v6_fields(mp, (nt_field **)&f->fields, &f->nfields, depth + 1);
	}
	return 0;
}

/* One V6 field: uint16 size, then within it the name, the type and the ignored rest. */
static int v6_field(mparse *mp, nt_field *f, int depth)
{
	uint16_t fsize;
	if (nt_cur_u16(&mp->c, &fsize))
		return mp_fail(mp, "field ends inside its size");
	size_t start = mp->c.pos;
	if (fsize > nt_cur_left(&mp->c))
		return mp_fail(mp, "field size exceeds the metadata row");
	mparse sub = *mp;
	sub.c.len = start + fsize;
	char *name;
	int rc = v6_str(&sub, &name, "bad field name");
	if (rc)
		return rc;
	f->name = name;
	rc = v6_type(&sub, f, depth);
	mp->total_fields = sub.total_fields;
	mp->c.pos = start + fsize; /* ignored rest */
	return rc;
}

static int v6_fields(mparse *mp, nt_field **out, uint32_t *nout, int depth)
{
	static const field_list v6 = {1, 4, "nested fields deeper than 8 levels",
				      "row ends inside the field count", "", "row", v6_field};
	return mp_field_list(mp, &v6, out, nout, depth);
}

/* The Universal.System / Universal.Events providers (one-collect, dotnet-trace
 * collect-linux) write each string as a uint16 byte length and UTF-8 bytes but declare
 * it as type 23 (UTF8CHAR, one byte): their top-level type-23 fields are read as what
 * the bytes hold (doc/format/universal-events.md). */
static void universal_strings(meta_rec *rec)
{
	if (!rec->provider || (strcmp(rec->provider, NT_PROVIDER_UNIVERSAL_SYSTEM) != 0 &&
			       strcmp(rec->provider, NT_PROVIDER_UNIVERSAL_EVENTS) != 0))
		return;
	for (uint32_t i = 0; i < rec->nfields; i++)
		if (rec->fields[i].type == NT_TYPE_UTF8CHAR)
			rec->fields[i].type = NT_TYPE_UTF8_STRING16;
}

/* The fields of a V6 metadata row p into rec (the caller's, freed by it on failure). */
static int parse_v6(mparse *mp, meta_rec *rec, const uint8_t *p, size_t len, uint64_t offset)
{
	nt_error *err = mp->err;
	int rc;
	uint32_t id, evid;
	uint16_t osize;
	if (nt_cur_varu32(&mp->c, &id)) {
		rc = mp_fail(mp, "row ends inside the metadata id");
		goto fail;
	}
	rec->m.id = id;
	if ((rc = v6_str(mp, &rec->provider, "bad provider name")))
		goto fail;
	if (nt_cur_varu32(&mp->c, &evid)) {
		rc = mp_fail(mp, "row ends inside the event id");
		goto fail;
	}
	rec->m.event_id = evid;
	if ((rc = v6_str(mp, &rec->name, "bad event name")))
		goto fail;
	if ((rc = v6_fields(mp, &rec->fields, &rec->nfields, 0)))
		goto fail;
	universal_strings(rec);
	if (nt_cur_left(&mp->c) >= 2) {
		nt_cur_u16(&mp->c, &osize);
		if (osize > nt_cur_left(&mp->c)) {
			rc = mp_fail(mp, "optional metadata size exceeds the row");
			goto fail;
		}
		nt_cursor oc;
		nt_cur_init(&oc, mp->c.p + mp->c.pos, osize, nt_cur_offset(&mp->c));
		while (nt_cur_left(&oc) > 0) {
			uint8_t kind, b;
			uint64_t v;
			char *s = NULL;
			mparse sub = {oc, err, 0};
			nt_cur_u8(&oc, &kind);
			switch (kind) {
			case 1:
				if (nt_cur_u8(&oc, &b))
					goto obad;
				rec->m.opcode = b;
				break;
			case 3:
				if (nt_cur_u64(&oc, &v))
					goto obad;
				rec->m.keywords = v;
				break;
			case 4:
			case 5:
				sub.c = oc;
				if (v6_str(&sub, &s, "bad optional string"))
					goto obad;
				free(s);
				oc = sub.c;
				break;
			case 6:
				sub.c = oc;
				if (v6_str(&sub, &s, "bad key"))
					goto obad;
				free(s);
				s = NULL;
				if (v6_str(&sub, &s, "bad value"))
					goto obad;
				free(s);
				oc = sub.c;
				break;
			case 7:
				if (nt_cur_skip(&oc, 16))
					goto obad;
				break;
			case 8:
				if (nt_cur_u8(&oc, &b))
					goto obad;
				rec->m.level = b;
				break;
			case 9:
				if (nt_cur_u8(&oc, &b))
					goto obad;
				rec->m.version = b;
				break;
			default:
				/* unknown kind: its size is unknown, so the rest is ignored */
				oc.pos = oc.len;
				break;
			}
		}
		if (0) {
obad:
			nt_error_clear(err);
			rc = nt_fail(err, NT_EFORMAT, nt_cur_offset(&oc), "bad metadata: optional entry");
			goto fail;
		}
	}
	return 0;
fail:
	return rc;
}

/* ---------------------------------------------------------------- both formats */

/* One record parsed by parse (the format's) and added to ms: one home for the allocation,
 * the finishing and the failure path of both formats. */
static int parse_record(nt_meta_store *ms, const uint8_t *p, size_t len, uint64_t offset,
			nt_error *err,
			int (*parse)(mparse *, meta_rec *, const uint8_t *, size_t, uint64_t))
{
	mparse mp = {{0}, err, 0};
	nt_cur_init(&mp.c, p, len, offset);
	meta_rec *rec = calloc(1, sizeof *rec);
	if (!rec)
		return nt_fail(err, NT_ENOMEM, offset, "out of memory");
	int rc = parse(&mp, rec, p, len, offset);
	if (!rc) {
		rec_finish(rec);
		if (store_add(ms, rec))
			rc = nt_fail(err, NT_ENOMEM, offset, "out of memory");
	}
	if (rc)
		rec_free(rec);
	return rc;
}

int nt_meta_parse_v5(nt_meta_store *ms, const uint8_t *p, size_t len, uint64_t offset,
		     nt_error *err)
{
	return parse_record(ms, p, len, offset, err, parse_v5);
}

int nt_meta_parse_v6(nt_meta_store *ms, const uint8_t *p, size_t len, uint64_t offset,
		     nt_error *err)
{
	return parse_record(ms, p, len, offset, err, parse_v6);
}

/* ---------------------------------------------------------------- built-in layouts */

#define F(n, t) {n, t, 0, 0, NULL, 0}
#define STR NT_TYPE_STRING
#define U8 NT_TYPE_U8
#define U16 NT_TYPE_U16
#define U32 NT_TYPE_U32
#define U64 NT_TYPE_U64
#define I64 NT_TYPE_I64
#define F64 NT_TYPE_F64
#define PTR NT_TYPE_POINTER
#define GUID NT_TYPE_GUID
#define F64_ NT_TYPE_F64
#define B32 NT_TYPE_BOOL32

/* version 1 is our sampler's (doc/format/sampler-events.md) */
static const nt_field L_sample[] = {F("Type", U32), F("CpuTimeNs", U64), F("State", U32)};
/* MethodLoadVerbose / MethodUnloadVerbose / MethodDC{Start,End}Verbose (spec §9.2) */
static const nt_field L_method_verbose[] = {
	F("MethodID", U64),         F("ModuleID", U64),      F("MethodStartAddress", U64),
	F("MethodSize", U32),       F("MethodToken", U32),   F("MethodFlags", U32),
	F("MethodNamespace", STR),  F("MethodName", STR),    F("MethodSignature", STR),
	F("ClrInstanceID", U16),    F("ReJITID", U64)};
static const nt_field L_method[] = {
	F("MethodID", U64),   F("ModuleID", U64),    F("MethodStartAddress", U64),
	F("MethodSize", U32), F("MethodToken", U32), F("MethodFlags", U32),
	F("ClrInstanceID", U16), F("ReJITID", U64)};
static const nt_field L_module[] = {
	F("ModuleID", U64),          F("AssemblyID", U64),        F("ModuleFlags", U32),
	F("Reserved1", U32),         F("ModuleILPath", STR),      F("ModuleNativePath", STR),
	F("ClrInstanceID", U16),     F("ManagedPdbSignature", GUID), F("ManagedPdbAge", U32),
	F("ManagedPdbBuildPath", STR), F("NativePdbSignature", GUID), F("NativePdbAge", U32),
	F("NativePdbBuildPath", STR)};
static const nt_field L_domain_module[] = {
	F("ModuleID", U64),     F("AssemblyID", U64),   F("AppDomainID", U64),
	F("ModuleFlags", U32),  F("Reserved1", U32),    F("ModuleILPath", STR),
	F("ModuleNativePath", STR), F("ClrInstanceID", U16)};
static const nt_field L_assembly_v0[] = {F("AssemblyID", U64), F("AppDomainID", U64),
					 F("AssemblyFlags", U32),
					 F("FullyQualifiedAssemblyName", STR)};
static const nt_field L_assembly[] = {F("AssemblyID", U64),    F("AppDomainID", U64),
				      F("BindingID", U64),     F("AssemblyFlags", U32),
				      F("FullyQualifiedAssemblyName", STR),
				      F("ClrInstanceID", U16)};
static const nt_field L_contention_start[] = {F("ContentionFlags", U8), F("ClrInstanceID", U16),
					      F("LockID", PTR), F("AssociatedObjectID", PTR),
					      F("LockOwnerThreadID", U64)};
static const nt_field L_contention_stop[] = {F("ContentionFlags", U8), F("ClrInstanceID", U16),
					     F("DurationNs", F64)};
static const nt_field L_gcstart_v0[] = {F("Count", U32), F("Reason", U32)};
static const nt_field L_gcstart[] = {F("Count", U32),  F("Depth", U32),
				     F("Reason", U32), F("Type", U32),
				     F("ClrInstanceID", U16), F("ClientSequenceNumber", U64)};
static const nt_field L_gcend_v0[] = {F("Count", U32), F("Depth", U16)};
static const nt_field L_gcend[] = {F("Count", U32), F("Depth", U32), F("ClrInstanceID", U16)};
static const nt_field L_suspend_v0[] = {F("Reason", U16)};
static const nt_field L_suspend[] = {F("Reason", U32), F("Count", U32), F("ClrInstanceID", U16)};
static const nt_field L_clr[] = {F("ClrInstanceID", U16)};
static const nt_field L_thread_created[] = {F("ManagedThreadID", U64), F("AppDomainID", U64),
					    F("Flags", U32), F("ManagedThreadIndex", U32),
					    F("OSThreadID", U32), F("ClrInstanceID", U16)};
static const nt_field L_thread_terminated[] = {F("ManagedThreadID", U64), F("AppDomainID", U64),
					       F("ClrInstanceID", U16)};
static const nt_field L_thread_creating[] = {F("ID", PTR), F("ClrInstanceID", U16)};
static const nt_field L_tp_worker[] = {F("ActiveWorkerThreadCount", U32),
				       F("RetiredWorkerThreadCount", U32), F("ClrInstanceID", U16)};
static const nt_field L_checkpoint[] = {F("ClrInstanceID", U16), F("Name", STR),
					F("Timestamp", I64)};
static const nt_field L_runtime_info[] = {
	F("ClrInstanceID", U16),   F("Sku", U16),            F("BclMajorVersion", U16),
	F("BclMinorVersion", U16), F("BclBuildNumber", U16), F("BclQfeNumber", U16),
	F("VMMajorVersion", U16),  F("VMMinorVersion", U16), F("VMBuildNumber", U16),
	F("VMQfeNumber", U16),     F("StartupFlags", U32),   F("StartupMode", U8),
	F("CommandLine", STR),     F("ComObjectGuid", GUID), F("RuntimeDllPath", STR)};
static const nt_field L_alloc_tick[] = {
	F("AllocationAmount", U32), F("AllocationKind", U32), F("ClrInstanceID", U16),
	F("AllocationAmount64", U64), F("TypeID", PTR),       F("TypeName", STR),
	F("HeapIndex", U32),        F("Address", PTR),        F("ObjectSize", U64)};
static const nt_field L_waithandle_start[] = {F("WaitSource", U8), F("AssociatedObjectID", PTR),
					      F("ClrInstanceID", U16)};
static const nt_field L_process_info[] = {F("CommandLine", STR), F("OSInformation", STR),
					  F("ArchInformation", STR)};
/* The layouts below are TraceEvent's decoding of the events (field names, order and values),
 * each field's size found by matching TraceEvent's values against the payload bytes of every
 * event of the kind in data/traces and in .NET 10 recordings (tests/dotnet/oracle "infer");
 * t620 compares every decoded value with TraceEvent's. Pointer-sized fields are those
 * TraceEvent reads as addresses (seen in 64-bit traces only). */
static const nt_field L_finalizers_end[] = {F("Count", U32), F("ClrInstanceID", U16)};
static const nt_field L_jitting_started[] = {
	F("MethodID", U64),         F("ModuleID", U64),       F("MethodToken", U32),
	F("MethodILSize", U32),     F("MethodNamespace", STR), F("MethodName", STR),
	F("MethodSignature", STR),  F("ClrInstanceID", U16)};
static const nt_field L_jit_memory[] = {
	F("MethodID", U64),         F("ModuleID", U64),       F("JitHotCodeRequestSize", U64),
	F("JitRODataRequestSize", U64), F("AllocatedSizeForJitCode", U64),
	F("JitAllocFlag", U32),     F("ClrInstanceID", U16)};
static const nt_field L_appdomain[] = {F("AppDomainID", U64), F("AppDomainFlags", U32),
				       F("AppDomainName", STR), F("AppDomainIndex", U32),
				       F("ClrInstanceID", U16)};
static const nt_field L_r2r_entry[] = {F("MethodID", U64),         F("MethodNamespace", STR),
				       F("MethodName", STR),       F("MethodSignature", STR),
				       F("EntryPoint", U64),       F("ClrInstanceID", U16)};
static const nt_field L_mark_with_type[] = {F("HeapNum", U32), F("ClrInstanceID", U16),
					    F("Type", U32), F("Promoted", U64)};
static const nt_field L_global_heap_history[] = {
	F("FinalYoungestDesired", U64), F("NumHeaps", U32),      F("CondemnedGeneration", U32),
	F("Gen0ReductionCount", U32),   F("Reason", U32),        F("GlobalMechanisms", U32),
	F("ClrInstanceID", U16),        F("PauseMode", U32),     F("MemoryPressure", U32),
	F("CondemnReasons0", U32),      F("CondemnReasons1", U32), F("Count", U32)};
static const nt_field L_bulk_ranges[] = {F("Index", U32), F("Count", U32),
					 F("ClrInstanceID", U16)};
static const nt_field L_generation_range[] = {F("Generation", U8),   F("RangeStart", PTR),
					      F("RangeUsedLength", U64),
					      F("RangeReservedLength", U64),
					      F("ClrInstanceID", U16)};
static const nt_field L_exception_catch[] = {F("EntryEIP", U64), F("MethodID", U64),
					     F("MethodName", STR), F("ClrInstanceID", U16)};
static const nt_field L_clr_count[] = {F("ClrInstanceID", U16), F("NewMethodCount", U32)};
static const nt_field L_clr_pending[] = {F("ClrInstanceID", U16), F("PendingMethodCount", U32),
					 F("JittedMethodCount", U32)};
static const nt_field L_finalize_object[] = {F("TypeID", PTR), F("ObjectID", PTR),
					     F("ClrInstanceID", U16)};
static const nt_field L_loader_start[] = {
	F("ClrInstanceID", U16),          F("AssemblyName", STR), F("AssemblyPath", STR),
	F("RequestingAssembly", STR),     F("AssemblyLoadContext", STR),
	F("RequestingAssemblyLoadContext", STR), F("Success", B32),
	F("ResultAssemblyName", STR),     F("ResultAssemblyPath", STR), F("Cached", B32)};
static const nt_field L_resolution_attempted[] = {
	F("ClrInstanceID", U16),     F("AssemblyName", STR),       F("Stage", U16),
	F("AssemblyLoadContext", STR), F("Result", U16),           F("ResultAssemblyName", STR),
	F("ResultAssemblyPath", STR), F("ErrorMessage", STR)};
static const nt_field L_known_path_probed[] = {F("ClrInstanceID", U16), F("FilePath", STR),
					       F("Source", U16), F("Result", U32)};
static const nt_field L_pin_object[] = {F("HandleID", PTR),   F("ObjectID", PTR),
					F("ObjectSize", U64), F("TypeName", STR),
					F("ClrInstanceID", U16)};
static const nt_field L_triggered[] = {F("Reason", U32), F("ClrInstanceID", U16)};
static const nt_field L_heap_stats[] = {
	F("GenerationSize0", U64),  F("TotalPromotedSize0", U64), F("GenerationSize1", U64),
	F("TotalPromotedSize1", U64), F("GenerationSize2", U64), F("TotalPromotedSize2", U64),
	F("GenerationSize3", U64),  F("TotalPromotedSize3", U64),
	F("FinalizationPromotedSize", U64), F("FinalizationPromotedCount", U64),
	F("PinnedObjectCount", U32), F("SinkBlockCount", U32),   F("GCHandleCount", U32),
	F("ClrInstanceID", U16),    F("GenerationSize4", U64),   F("TotalPromotedSize4", U64)};
static const nt_field L_create_segment[] = {F("Address", PTR), F("Size", U64), F("Type", U32),
					    F("ClrInstanceID", U16)};
static const nt_field L_free_segment[] = {F("Address", U64), F("ClrInstanceID", U16)};
static const nt_field L_tp_sample[] = {F("Throughput", F64_), F("ClrInstanceID", U16)};
static const nt_field L_tp_adjustment[] = {F("AverageThroughput", F64_),
					   F("NewWorkerThreadCount", U32), F("Reason", U32),
					   F("ClrInstanceID", U16)};
static const nt_field L_tp_stats[] = {
	F("Duration", F64_),          F("Throughput", F64_),     F("ThreadWave", F64_),
	F("ThroughputWave", F64_),    F("ThroughputErrorEstimate", F64_),
	F("AverageThroughputErrorEstimate", F64_), F("ThroughputRatio", F64_),
	F("Confidence", F64_),        F("NewControlSetting", F64_),
	F("NewThreadWaveMagnitude", U16), F("ClrInstanceID", U16)};
static const nt_field L_yield_measurement[] = {F("ClrInstanceID", U16), F("NsPerYield", F64_),
					       F("EstablishedNsPerYield", F64_)};
static const nt_field L_work_id[] = {F("WorkID", PTR), F("ClrInstanceID", U16)};
static const nt_field L_exception_thrown[] = {
	F("ExceptionType", STR),    F("ExceptionMessage", STR), F("ExceptionEIP", PTR),
	F("ExceptionHRESULT", U32), F("ExceptionFlags", U16),   F("ClrInstanceID", U16)};
static const nt_field L_lock_created[] = {F("LockID", PTR), F("AssociatedObjectID", PTR),
					  F("ClrInstanceID", U16)};
static const nt_field L_gc_settings[] = {
	F("HardLimit", U64),          F("LOHThreshold", U64),      F("PhysicalMemoryConfig", U64),
	F("Gen0MinBudgetConfig", U64), F("Gen0MaxBudgetConfig", U64),
	F("HighMemPercentConfig", U32), F("BitSettings", U32),     F("ClrInstanceID", U16)};
static const nt_field L_pin_plug[] = {F("PlugStart", PTR), F("PlugEnd", PTR),
				      F("GapBeforeSize", U64), F("ClrInstanceID", U16)};
static const nt_field L_io_thread[] = {F("IOThreadCount", U32), F("RetiredIOThreads", U32),
				       F("ClrInstanceID", U16)};

enum { P_RUNTIME = 1, P_RUNDOWN = 2, P_SAMPLER = 4, P_EVENTPIPE = 8, P_PRIVATE = 16 };

typedef struct builtin {
	uint8_t providers;     /* P_* mask */
	uint16_t event_id;
	uint8_t min_version, max_version;
	const char *name;
	const nt_field *fields;
	uint8_t nfields_by_version[4]; /* field count for versions 0..3 (>3 uses [3]) */
} builtin;

#define N(a) (uint8_t)(sizeof(a) / sizeof(a[0]))
static const builtin BUILTINS[] = {
	{P_SAMPLER, 0, 0, 255, "ThreadSample", L_sample, {1, 3, 3, 3}},
	{P_RUNTIME, 143, 0, 255, "MethodLoadVerbose", L_method_verbose, {9, 10, 11, 11}},
	{P_RUNTIME, 144, 0, 255, "MethodUnloadVerbose", L_method_verbose, {9, 10, 11, 11}},
	{P_RUNTIME, 139, 0, 255, "MethodDCStartVerboseV2", L_method_verbose, {9, 10, 11, 11}},
	{P_RUNTIME, 140, 0, 255, "MethodDCEndVerboseV2", L_method_verbose, {9, 10, 11, 11}},
	{P_RUNTIME, 141, 0, 255, "MethodLoad", L_method, {6, 7, 8, 8}},
	{P_RUNTIME, 142, 0, 255, "MethodUnload", L_method, {6, 7, 8, 8}},
	{P_RUNDOWN, 141, 0, 255, "MethodDCStart", L_method, {6, 7, 8, 8}},
	{P_RUNDOWN, 142, 0, 255, "MethodDCEnd", L_method, {6, 7, 8, 8}},
	{P_RUNDOWN, 143, 0, 255, "MethodDCStartVerbose", L_method_verbose, {9, 10, 11, 11}},
	{P_RUNDOWN, 144, 0, 255, "MethodDCEndVerbose", L_method_verbose, {9, 10, 11, 11}},
	{P_RUNTIME, 152, 0, 255, "ModuleLoad", L_module, {6, 7, 13, 13}},
	{P_RUNTIME, 153, 0, 255, "ModuleUnload", L_module, {6, 7, 13, 13}},
	{P_RUNDOWN, 153, 0, 255, "ModuleDCStart", L_module, {6, 7, 13, 13}},
	{P_RUNDOWN, 154, 0, 255, "ModuleDCEnd", L_module, {6, 7, 13, 13}},
	{P_RUNTIME, 151, 0, 255, "DomainModuleLoad", L_domain_module, {7, 8, 8, 8}},
	{P_RUNDOWN, 151, 0, 255, "DomainModuleDCStart", L_domain_module, {7, 8, 8, 8}},
	{P_RUNDOWN, 152, 0, 255, "DomainModuleDCEnd", L_domain_module, {7, 8, 8, 8}},
	{P_RUNTIME, 154, 0, 0, "AssemblyLoad", L_assembly_v0, {4, 4, 4, 4}},
	{P_RUNTIME, 154, 1, 255, "AssemblyLoad", L_assembly, {0, 6, 6, 6}},
	{P_RUNTIME, 155, 1, 255, "AssemblyUnload", L_assembly, {0, 6, 6, 6}},
	{P_RUNDOWN, 155, 1, 255, "AssemblyDCStart", L_assembly, {0, 6, 6, 6}},
	{P_RUNDOWN, 156, 1, 255, "AssemblyDCEnd", L_assembly, {0, 6, 6, 6}},
	{P_RUNTIME, 81, 0, 255, "ContentionStart", L_contention_start, {1, 2, 5, 5}},
	/* v1 (.NET 8) added DurationNs */
	{P_RUNTIME, 91, 0, 255, "ContentionStop", L_contention_stop, {1, 3, 3, 3}},
	{P_RUNTIME, 1, 0, 0, "GCStart", L_gcstart_v0, {2, 2, 2, 2}},
	{P_RUNTIME, 1, 1, 255, "GCStart", L_gcstart, {0, 5, 6, 6}},
	{P_RUNTIME, 2, 0, 0, "GCEnd", L_gcend_v0, {2, 2, 2, 2}},
	{P_RUNTIME, 2, 1, 255, "GCEnd", L_gcend, {0, 3, 3, 3}},
	{P_RUNTIME, 9, 0, 0, "GCSuspendEEBegin", L_suspend_v0, {1, 1, 1, 1}},
	{P_RUNTIME, 9, 1, 255, "GCSuspendEEBegin", L_suspend, {0, 3, 3, 3}},
	{P_RUNTIME, 8, 0, 255, "GCSuspendEEEnd", L_clr, {0, 1, 1, 1}},
	{P_RUNTIME, 7, 0, 255, "GCRestartEEBegin", L_clr, {0, 1, 1, 1}},
	{P_RUNTIME, 3, 0, 255, "GCRestartEEEnd", L_clr, {0, 1, 1, 1}},
	{P_RUNTIME, 85, 0, 255, "ThreadCreated", L_thread_created, {6, 6, 6, 6}},
	{P_RUNTIME, 86, 0, 255, "ThreadTerminated", L_thread_terminated, {3, 3, 3, 3}},
	{P_RUNTIME, 70, 0, 255, "ThreadCreating", L_thread_creating, {2, 2, 2, 2}},
	{P_RUNTIME, 71, 0, 255, "ThreadRunning", L_thread_creating, {2, 2, 2, 2}},
	{P_RUNTIME, 50, 0, 255, "ThreadPoolWorkerThreadStart", L_tp_worker, {3, 3, 3, 3}},
	{P_RUNTIME, 51, 0, 255, "ThreadPoolWorkerThreadStop", L_tp_worker, {3, 3, 3, 3}},
	{P_RUNTIME, 57, 0, 255, "ThreadPoolWorkerThreadWait", L_tp_worker, {3, 3, 3, 3}},
	{P_RUNTIME, 10, 0, 3, "GCAllocationTick", L_alloc_tick, {2, 3, 6, 8}},
	/* v4 (.NET 5) added ObjectSize */
	{P_RUNTIME, 10, 4, 255, "GCAllocationTick", L_alloc_tick, {9, 9, 9, 9}},
	{P_RUNTIME, 301, 0, 255, "WaitHandleWaitStart", L_waithandle_start, {3, 3, 3, 3}},
	{P_RUNTIME, 302, 0, 255, "WaitHandleWaitStop", L_clr, {1, 1, 1, 1}},
	{P_RUNDOWN, 300, 0, 255, "ExecutionCheckpointDCEnd", L_checkpoint, {3, 3, 3, 3}},
	{P_RUNDOWN, 187, 0, 255, "RuntimeInformationDCStart", L_runtime_info, {15, 15, 15, 15}},
	{P_RUNDOWN, 145, 0, 255, "DCStartComplete", L_clr, {0, 1, 1, 1}},
	{P_RUNDOWN, 146, 0, 255, "DCEndComplete", L_clr, {0, 1, 1, 1}},
	{P_RUNDOWN, 147, 0, 255, "DCStartInit", L_clr, {0, 1, 1, 1}},
	{P_RUNDOWN, 148, 0, 255, "DCEndInit", L_clr, {0, 1, 1, 1}},
	{P_EVENTPIPE, 1, 0, 255, "ProcessInfo", L_process_info, {1, 3, 3, 3}},
	/* Layouts as TraceEvent decodes them (see above); names are TraceEvent's without the
	 * '/' between task and opcode, or the runtime manifest's where that is the usual one. */
	{P_RUNTIME, 4, 1, 255, "GCHeapStats", L_heap_stats, {0, 14, 16, 16}},
	{P_RUNTIME, 5, 1, 255, "GCCreateSegment", L_create_segment, {0, 4, 4, 4}},
	{P_RUNTIME, 6, 1, 255, "GCFreeSegment", L_free_segment, {0, 2, 2, 2}},
	{P_RUNTIME, 13, 1, 255, "GCFinalizersEnd", L_finalizers_end, {0, 2, 2, 2}},
	{P_RUNTIME, 14, 1, 255, "GCFinalizersBegin", L_clr, {0, 1, 1, 1}},
	{P_RUNTIME, 11, 0, 255, "GCCreateConcurrentThread", L_clr, {0, 1, 1, 1}},
	{P_RUNTIME, 12, 0, 255, "GCTerminateConcurrentThread", L_clr, {0, 1, 1, 1}},
	{P_RUNTIME, 21, 0, 255, "GCBulkSurvivingObjectRanges", L_bulk_ranges, {3, 3, 3, 3}},
	{P_RUNTIME, 22, 0, 255, "GCBulkMovedObjectRanges", L_bulk_ranges, {3, 3, 3, 3}},
	{P_RUNTIME, 23, 0, 255, "GCGenerationRange", L_generation_range, {5, 5, 5, 5}},
	{P_RUNTIME, 29, 0, 255, "GCFinalizeObject", L_finalize_object, {3, 3, 3, 3}},
	{P_RUNTIME, 33, 0, 255, "PinObjectAtGCTime", L_pin_object, {5, 5, 5, 5}},
	{P_RUNTIME, 35, 0, 255, "GCTriggered", L_triggered, {2, 2, 2, 2}},
	{P_RUNTIME, 44, 1, 255, "IOThreadCreationStart", L_io_thread, {0, 3, 3, 3}},
	{P_RUNTIME, 54, 0, 255, "ThreadPoolWorkerThreadAdjustmentSample", L_tp_sample, {2, 2, 2, 2}},
	{P_RUNTIME, 55, 0, 255, "ThreadPoolWorkerThreadAdjustmentAdjustment", L_tp_adjustment,
	 {4, 4, 4, 4}},
	{P_RUNTIME, 56, 0, 255, "ThreadPoolWorkerThreadAdjustmentStats", L_tp_stats,
	 {11, 11, 11, 11}},
	{P_RUNTIME, 58, 0, 255, "YieldProcessorMeasurement", L_yield_measurement, {3, 3, 3, 3}},
	{P_RUNTIME, 61, 0, 255, "ThreadPoolEnqueue", L_work_id, {2, 2, 2, 2}},
	{P_RUNTIME, 62, 0, 255, "ThreadPoolDequeue", L_work_id, {2, 2, 2, 2}},
	{P_RUNTIME, 80, 1, 255, "ExceptionThrown", L_exception_thrown, {0, 6, 6, 6}},
	{P_RUNTIME, 90, 0, 255, "ContentionLockCreated", L_lock_created, {3, 3, 3, 3}},
	{P_RUNTIME, 145, 1, 255, "MethodJittingStarted", L_jitting_started, {0, 8, 8, 8}},
	{P_RUNTIME, 146, 0, 255, "MethodMemoryAllocatedForJitCode", L_jit_memory, {7, 7, 7, 7}},
	{P_RUNTIME, 156, 1, 255, "AppDomainLoad", L_appdomain, {0, 5, 5, 5}},
	{P_RUNTIME, 157, 1, 255, "AppDomainUnload", L_appdomain, {0, 5, 5, 5}},
	{P_RUNDOWN, 157, 1, 255, "AppDomainDCStart", L_appdomain, {0, 5, 5, 5}},
	{P_RUNDOWN, 158, 1, 255, "AppDomainDCEnd", L_appdomain, {0, 5, 5, 5}},
	{P_RUNTIME, 159, 0, 255, "R2RGetEntryPoint", L_r2r_entry, {6, 6, 6, 6}},
	{P_RUNTIME, 187, 0, 255, "RuntimeInformationStart", L_runtime_info, {15, 15, 15, 15}},
	{P_RUNTIME, 202, 0, 255, "GCMarkWithType", L_mark_with_type, {4, 4, 4, 4}},
	{P_RUNTIME, 205, 2, 3, "GCGlobalHeapHistory", L_global_heap_history, {0, 0, 9, 9}},
	{P_RUNTIME, 205, 4, 255, "GCGlobalHeapHistory", L_global_heap_history, {12, 12, 12, 12}},
	{P_RUNTIME, 250, 0, 255, "ExceptionCatchStart", L_exception_catch, {4, 4, 4, 4}},
	{P_RUNTIME, 252, 0, 255, "ExceptionFinallyStart", L_exception_catch, {4, 4, 4, 4}},
	{P_RUNTIME, 254, 0, 255, "ExceptionFilterStart", L_exception_catch, {4, 4, 4, 4}},
	{P_RUNTIME, 281, 0, 255, "TieredCompilationPause", L_clr, {1, 1, 1, 1}},
	{P_RUNTIME, 282, 0, 255, "TieredCompilationResume", L_clr_count, {2, 2, 2, 2}},
	{P_RUNTIME, 283, 0, 255, "TieredCompilationBackgroundJitStart", L_clr_pending,
	 {2, 2, 2, 2}},
	{P_RUNTIME, 284, 0, 255, "TieredCompilationBackgroundJitStop", L_clr_pending,
	 {3, 3, 3, 3}},
	{P_RUNTIME, 290, 0, 255, "AssemblyLoadStart", L_loader_start, {6, 6, 6, 6}},
	{P_RUNTIME, 291, 0, 255, "AssemblyLoadStop", L_loader_start, {10, 10, 10, 10}},
	{P_RUNTIME, 292, 0, 255, "ResolutionAttempted", L_resolution_attempted, {8, 8, 8, 8}},
	{P_RUNTIME, 296, 0, 255, "KnownPathProbed", L_known_path_probed, {4, 4, 4, 4}},
	{P_RUNDOWN, 10, 0, 255, "GCSettingsRundown", L_gc_settings, {8, 8, 8, 8}},
	{P_PRIVATE, 199, 0, 255, "PinPlugAtGCTime", L_pin_plug, {4, 4, 4, 4}},
	/* Names only: TraceEvent's, where it decodes arrays or fields this table cannot say
	 * (bulk events, IL maps, per-heap history) or no trace here has the event. */
	{P_RUNTIME, 15, 0, 255, "BulkType", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 16, 0, 255, "GCBulkRootEdge", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 17, 0, 255, "GCBulkRootConditionalWeakTableElementEdge", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 18, 0, 255, "GCBulkNode", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 19, 0, 255, "GCBulkEdge", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 39, 0, 255, "GCDynamicEvent", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 72, 0, 255, "MethodDetails", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 73, 0, 255, "TypeLoadStart", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 74, 0, 255, "TypeLoadStop", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 209, 0, 255, "GCFitBucketInfo", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 251, 0, 255, "ExceptionCatchStop", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 253, 0, 255, "ExceptionFinallyStop", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 255, 0, 255, "ExceptionFilterStop", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 256, 0, 255, "ExceptionThrownStop", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 280, 0, 255, "TieredCompilationSettings", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 293, 0, 255, "AssemblyLoadContextResolvingHandlerInvoked", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 294, 0, 255, "AppDomainAssemblyResolveHandlerInvoked", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 295, 0, 255, "AssemblyLoadFromResolveHandlerInvoked", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 45, 0, 255, "IOThreadCreationStop", NULL, {0, 0, 0, 0}},
	/* Names only (no built-in layout yet): TraceEvent's names, checked against the
	 * TraceLog baseline of the .NET Core 3.0 trace (data/traces/perfview). */
	{P_RUNTIME, 4, 0, 255, "GCHeapStats", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 5, 0, 255, "GCCreateSegment", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 6, 0, 255, "GCFreeSegment", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 13, 0, 255, "GCFinalizersEnd", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 14, 0, 255, "GCFinalizersBegin", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 20, 0, 255, "GCSampledObjectAllocationHigh", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 21, 0, 255, "GCBulkSurvivingObjectRanges", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 22, 0, 255, "GCBulkMovedObjectRanges", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 23, 0, 255, "GCGenerationRange", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 32, 0, 255, "GCSampledObjectAllocationLow", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 33, 0, 255, "PinObjectAtGCTime", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 35, 0, 255, "GCTriggered", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 54, 0, 255, "ThreadPoolWorkerThreadAdjustmentSample", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 55, 0, 255, "ThreadPoolWorkerThreadAdjustmentAdjustment", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 56, 0, 255, "ThreadPoolWorkerThreadAdjustmentStats", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 61, 0, 255, "ThreadPoolEnqueue", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 62, 0, 255, "ThreadPoolDequeue", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 80, 0, 255, "ExceptionThrown", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 90, 0, 255, "ContentionLockCreated", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 145, 0, 255, "MethodJittingStarted", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 159, 0, 255, "R2RGetEntryPoint", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 190, 0, 255, "MethodILToNativeMap", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 200, 0, 255, "IncreaseMemoryPressure", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 201, 0, 255, "DecreaseMemoryPressure", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 202, 0, 255, "GCMarkWithType", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 203, 0, 255, "GCJoin", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 204, 0, 255, "GCPerHeapHistory", NULL, {0, 0, 0, 0}},
	{P_RUNTIME, 205, 0, 255, "GCGlobalHeapHistory", NULL, {0, 0, 0, 0}},
	{P_RUNDOWN, 149, 0, 255, "MethodILToNativeMapDCStart", NULL, {0, 0, 0, 0}},
	{P_RUNDOWN, 150, 0, 255, "MethodILToNativeMapDCEnd", NULL, {0, 0, 0, 0}},
	{P_RUNDOWN, 157, 0, 255, "AppDomainDCStart", NULL, {0, 0, 0, 0}},
	{P_RUNDOWN, 158, 0, 255, "AppDomainDCEnd", NULL, {0, 0, 0, 0}},
	{P_RUNDOWN, 159, 0, 255, "ThreadDCEnd", NULL, {0, 0, 0, 0}},
};

const nt_field *nt_builtin_layout(const char *provider, uint32_t event_id, uint32_t version,
				  uint32_t *nfields, const char **name)
{
	unsigned pm;
	if (strcmp(provider, NT_PROVIDER_RUNTIME) == 0)
		pm = P_RUNTIME;
	else if (strcmp(provider, NT_PROVIDER_RUNDOWN) == 0)
		pm = P_RUNDOWN;
	else if (strcmp(provider, NT_PROVIDER_SAMPLER) == 0)
		pm = P_SAMPLER;
	else if (strcmp(provider, NT_PROVIDER_EVENTPIPE) == 0)
		pm = P_EVENTPIPE;
	else if (strcmp(provider, NT_PROVIDER_PRIVATE) == 0)
		pm = P_PRIVATE;
	else
		return NULL;
	for (size_t i = 0; i < sizeof BUILTINS / sizeof BUILTINS[0]; i++) {
		const builtin *b = &BUILTINS[i];
		if (!(b->providers & pm) || b->event_id != event_id || version < b->min_version ||
		    version > b->max_version)
			continue;
		*name = b->name;
		*nfields = b->nfields_by_version[version > 3 ? 3 : version];
		return *nfields ? b->fields : NULL;
	}
	return NULL;
}
