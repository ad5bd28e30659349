/* SPDX-License-Identifier: MIT */
/* export-pprof.c - pprof's profile.proto (google/pprof proto/profile.proto), gzip'd as
 * pprof reads it. Encoded here (varints and length-delimited fields, no protobuf library):
 * one Sample per stack (location ids leaf first; values [samples/count, time/nanoseconds]
 * for a profile; labels "thread" and "category"), one Function per distinct frame name, one
 * Location (with one Line) per function and source line: native frames of a profile
 * carry their DWARF line (nt_xstack_native; the function's file is then its source file,
 * else its module), others line 0; the string table, and the sessions' start, duration
 * (the union of their time ranges: the gap between two files is no profiled time) and
 * period, with a comment per session when there are several. Labels follow what
 * continuous-profiling servers read (doc/pprof-labels.md). Time values are rounded so
 * that their sum stays the rounded exact total.
 * Not here: reading inputs (export-stacks.c). */
#include "export.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <zlib.h>

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};
enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

/* ------------------------------------------------------------------ encoding */

typedef struct pb {
	uint8_t *p;
	size_t n, cap;
	int oom;
} pb;

static void pb_bytes(pb *b, const void *s, size_t n)
{
	if (b->oom || n == 0)
		return;
	if (n > SIZE_MAX - b->n || nt_grow((void **)&b->p, &b->cap, b->n + n, 1)) {
		b->oom = 1;
		return;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void pb_varint(pb *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t k = 0;
	while (v >= 0x80) {
		tmp[k++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[k++] = (uint8_t)v;
	pb_bytes(b, tmp, k);
}

static void pb_tag(pb *b, unsigned field, unsigned wire)
{
	pb_varint(b, ((uint64_t)field << 3) | wire);
}

/* int64 fields are plain varints of the two's complement (negative: 10 bytes) */
static void pb_int(pb *b, unsigned field, int64_t v)
{
	if (v == 0)
		return; /* proto3 default, omitted */
	pb_tag(b, field, WIRE_VARINT);
	pb_varint(b, (uint64_t)v);
}

static void pb_len(pb *b, unsigned field, const void *s, size_t n)
{
	pb_tag(b, field, WIRE_LEN);
	pb_varint(b, n);
	pb_bytes(b, s, n);
}

/* A nested message: its bytes, then appended with a length prefix. */
static void pb_msg(pb *b, unsigned field, pb *m)
{
	if (m->oom)
		b->oom = 1;
	pb_len(b, field, m->p, m->n);
	m->n = 0;
	m->oom = 0;
}

/* ------------------------------------------------------------------ tables */

typedef struct pstr {
	const char *s;
	size_t n;
	uint64_t hash;
	uint32_t func;        /* function id + 0 when not a frame name */
} pstr;

typedef struct pp_ctx {
	pstr *strs;
	size_t nstrs, scap;
	uint32_t *sht;        /* string index + 1 */
	size_t shtcap;
	uint32_t *funcs;      /* string index of each function's name (id = index + 1) */
	uint32_t *func_file;  /* string index of its source file, 0 = none (the module) */
	size_t nfuncs, fcap, ffcap;
	uint64_t *locs;       /* function id << 32 | line of each Location (id = index + 1);
				 0 for a native Location (loc_map > 0) */
	size_t nlocs, lcap;
	uint32_t *lht;        /* location index + 1 */
	size_t lhtcap;
	/* native frames of a profile: a Location per address in a module's Mapping, with a
	 * Line per function of its inline chain (innermost first) */
	uint32_t *loc_map;    /* per Location: Mapping id, 0 = none (managed, made frames) */
	uint64_t *loc_addr;
	size_t *loc_loff;     /* first entry in nlines */
	uint32_t *loc_nl;
	size_t lmcap, lacap, locap, lncap;
	uint64_t *nlines;     /* function id << 32 | line */
	size_t nnl, nlcap;
	uint32_t *nht;        /* native location index + 1, keyed by (mapping, address) */
	size_t nhtcap, nnative;
	struct pmap {
		uint32_t session;
		nt_native_module m;
	} *maps;              /* Mapping id = index + 2 (1 is the input's) */
	size_t nmaps, mcap;
	uint8_t *sess_loaded; /* the modules of session i are in maps */
	size_t last_map;      /* index + 1 of the last Mapping found */
	pb samples;           /* encoded Sample messages, each with its tag */
	pb msg, sub, packed;  /* scratch */
	int profile_input;
	int time_only;        /* folded input with a time unit: values [time] */
	int sessions;         /* label samples with their session when > 1 */
	double exact_ns, written_ns; /* for rounding time values without drift */
	uint32_t s_thread, s_category, s_session;
	uint32_t *sess_names; /* string index of each session's name */
	uint32_t *user_labels; /* opts' labels: key and value string indexes, in pairs */
	size_t nuser;
	nt_xprev prev;        /* the previous stack, whose frames' ids are in ids */
	uint32_t *ids;
	size_t idcap;
	nt_error *err;
} pp_ctx;

static int str_rehash(pp_ctx *c)
{
	return nt_slots_grow(&c->sht, &c->shtcap, 1024, c->strs, c->nstrs, sizeof(pstr),
			     offsetof(pstr, hash));
}

/* Index of s[0..n) in the string table, added on first use; -1 when out of memory. The
 * bytes are borrowed (frames live as long as the source; others are literals). */
static int64_t str_index(pp_ctx *c, const char *s, size_t n)
{
	uint64_t h = nt_hash_bytes(s, n);
	if ((c->nstrs + 1) * 2 > c->shtcap && str_rehash(c))
		return -1;
	size_t k = (size_t)h & (c->shtcap - 1);
	while (c->sht[k]) {
		const pstr *e = &c->strs[c->sht[k] - 1];
		if (e->hash == h && e->n == n && memcmp(e->s, s, n) == 0)
			return c->sht[k] - 1;
		k = (k + 1) & (c->shtcap - 1);
	}
	if (c->nstrs >= UINT32_MAX - 1 ||
	    nt_grow((void **)&c->strs, &c->scap, c->nstrs + 1, sizeof(pstr)))
		return -1;
	c->strs[c->nstrs] = (pstr){s, n, h, 0};
	c->sht[k] = (uint32_t)c->nstrs + 1;
	return (int64_t)c->nstrs++;
}

static int64_t lit(pp_ctx *c, const char *s)
{
	return str_index(c, s, strlen(s));
}

/* Function (= location) id of a frame name, created on first use; 0 when out of memory. */
static uint32_t func_id(pp_ctx *c, const nt_xframe *f)
{
	int64_t si = str_index(c, f->s, f->n);
	if (si < 0)
		return 0;
	pstr *e = &c->strs[si];
	if (e->func)
		return e->func;
	if (nt_grow((void **)&c->funcs, &c->fcap, c->nfuncs + 1, sizeof(uint32_t)) ||
	    nt_grow((void **)&c->func_file, &c->ffcap, c->nfuncs + 1, sizeof(uint32_t)))
		return 0;
	c->func_file[c->nfuncs] = 0;
	c->funcs[c->nfuncs++] = (uint32_t)si;
	c->strs[si].func = (uint32_t)c->nfuncs;
	return (uint32_t)c->nfuncs;
}

/* The key of a native Location in its table: its Mapping and address. */
static uint64_t native_key(uint32_t map, uint64_t addr)
{
	return addr * 0x9E3779B97F4A7C15ull ^ map;
}

/* Location i's hash in the table of (function, line) Locations (lht), which holds
 * the Locations without a Mapping, and in that of native ones (nht), which holds the
 * others (hash.c's slots). */
static int frame_loc_hash(const void *ctx, size_t i, uint64_t *h)
{
	const pp_ctx *c = ctx;
	*h = nt_mix64(c->locs[i]);
	return !c->loc_map[i];
}

static int native_loc_hash(const void *ctx, size_t i, uint64_t *h)
{
	const pp_ctx *c = ctx;
	*h = nt_mix64(native_key(c->loc_map[i], c->loc_addr[i]));
	return c->loc_map[i] != 0;
}

/* Room for one more Location in every per-Location array; -1 when out of memory. */
static int new_loc(pp_ctx *c)
{
	size_t n = c->nlocs + 1;
	if (c->nlocs >= UINT32_MAX - 1 || nt_grow((void **)&c->locs, &c->lcap, n, sizeof(uint64_t)) ||
	    nt_grow((void **)&c->loc_map, &c->lmcap, n, sizeof(uint32_t)) ||
	    nt_grow((void **)&c->loc_addr, &c->lacap, n, sizeof(uint64_t)) ||
	    nt_grow((void **)&c->loc_loff, &c->locap, n, sizeof(size_t)) ||
	    nt_grow((void **)&c->loc_nl, &c->lncap, n, sizeof(uint32_t)))
		return -1;
	c->locs[c->nlocs] = 0;
	c->loc_map[c->nlocs] = 0;
	c->loc_addr[c->nlocs] = 0;
	c->loc_loff[c->nlocs] = 0;
	c->loc_nl[c->nlocs] = 0;
	return 0;
}

/* Location id of (function, line), created on first use; 0 when out of memory. */
static uint32_t loc_id(pp_ctx *c, uint32_t func, uint32_t line)
{
	uint64_t key = (uint64_t)func << 32 | line;
	if ((c->nlocs + 1) * 2 > c->lhtcap &&
	    nt_slots_regrow(&c->lht, &c->lhtcap, 1024, c->nlocs, frame_loc_hash, c))
		return 0;
	size_t k = (size_t)nt_mix64(key) & (c->lhtcap - 1);
	while (c->lht[k]) {
		if (c->locs[c->lht[k] - 1] == key)
			return c->lht[k];
		k = (k + 1) & (c->lhtcap - 1);
	}
	if (new_loc(c))
		return 0;
	c->locs[c->nlocs] = key;
	c->lht[k] = (uint32_t)c->nlocs + 1;
	return (uint32_t)++c->nlocs;
}

/* Location id of frame i of st: its function at its native source line, or line 0. */
static uint32_t frame_loc(pp_ctx *c, const nt_xstack *st, size_t i)
{
	uint32_t f = func_id(c, &st->frames[i]);
	if (!f)
		return 0;
	uint32_t line = 0;
	const nt_native_frame *nf = st->group ? nt_xstack_native(st, i) : NULL;
	if (nf && nf->file && nf->line) {
		line = nf->line;
		if (!c->func_file[f - 1]) {
			int64_t fs = str_index(c, nf->file, strlen(nf->file));
			if (fs < 0)
				return 0;
			c->func_file[f - 1] = (uint32_t)fs;
		}
	}
	return loc_id(c, f, line);
}

/* The Mapping id of the module a native frame's address is in (its session's modules, as
 * the trace recorded them), 0 when none is known; sets *addr to the address in the
 * process. -1 when out of memory. */
static int64_t map_of(pp_ctx *c, nt_profile *p, uint32_t session, const nt_native_frame *nf,
		      uint64_t *addr)
{
	if (!nf->module_path)
		return 0;
	size_t ns = nt_profile_session_count(p);
	if (session >= ns)
		return 0;
	if (!c->sess_loaded) {
		c->sess_loaded = calloc(ns, 1);
		if (!c->sess_loaded)
			return -1;
	}
	if (!c->sess_loaded[session]) {
		c->sess_loaded[session] = 1;
		nt_native *nn = nt_profile_native(p, session);
		for (size_t k = 0; nn && k < nt_native_module_count(nn); k++) {
			if (nt_grow((void **)&c->maps, &c->mcap, c->nmaps + 1, sizeof *c->maps))
				return -1;
			/* a module without a file ("linux-vdso.so.1": the kernel's) gets no
			 * Mapping: pprof would try to open it */
			if (nt_native_module_at(nn, k, &c->maps[c->nmaps].m) != 1 ||
			    !c->maps[c->nmaps].m.path || !strchr(c->maps[c->nmaps].m.path, '/'))
				continue;
			c->maps[c->nmaps++].session = session;
		}
	}
	for (size_t pass = 0; pass < 2; pass++) {
		size_t from = pass ? 0 : (c->last_map ? c->last_map - 1 : 0);
		size_t to = pass ? c->nmaps : (c->last_map ? c->last_map : 0);
		for (size_t k = from; k < to; k++) {
			const struct pmap *pm = &c->maps[k];
			if (pm->session != session || !pm->m.path || strcmp(pm->m.path, nf->module_path) ||
			    nf->file_offset < pm->m.file_offset ||
			    nf->file_offset - pm->m.file_offset >= pm->m.size)
				continue;
			c->last_map = k + 1;
			*addr = nf->file_offset - pm->m.file_offset + pm->m.base;
			return (int64_t)k + 2;
		}
	}
	return 0;
}

/* Location id of a native address: frames [i, j) of st are its inline chain, outermost
 * first; the Location gets their Lines innermost first. 0 when out of memory. */
static uint32_t native_loc(pp_ctx *c, const nt_xstack *st, size_t i, size_t j, uint32_t map,
			   uint64_t addr)
{
	uint64_t key = native_key(map, addr);
	if ((c->nnative + 1) * 2 > c->nhtcap &&
	    nt_slots_regrow(&c->nht, &c->nhtcap, 1024, c->nlocs, native_loc_hash, c))
		return 0;
	size_t k = (size_t)nt_mix64(key) & (c->nhtcap - 1);
	while (c->nht[k]) {
		size_t q = c->nht[k] - 1;
		if (c->loc_map[q] == map && c->loc_addr[q] == addr)
			return (uint32_t)q + 1;
		k = (k + 1) & (c->nhtcap - 1);
	}
	if (new_loc(c) || nt_grow((void **)&c->nlines, &c->nlcap, c->nnl + (j - i), sizeof(uint64_t)))
		return 0;
	size_t q = c->nlocs;
	c->loc_map[q] = map;
	c->loc_addr[q] = addr;
	c->loc_loff[q] = c->nnl;
	for (size_t f = j; f-- > i;) {
		uint32_t fid = func_id(c, &st->frames[f]);
		if (!fid)
			return 0;
		const nt_native_frame *nf = nt_xstack_native(st, f);
		uint32_t line = nf ? nf->line : 0;
		if (nf && nf->file && !c->func_file[fid - 1]) {
			int64_t fs = str_index(c, nf->file, strlen(nf->file));
			if (fs < 0)
				return 0;
			c->func_file[fid - 1] = (uint32_t)fs;
		}
		c->nlines[c->nnl++] = (uint64_t)fid << 32 | line;
	}
	c->loc_nl[q] = (uint32_t)(j - i);
	c->nht[k] = (uint32_t)q + 1;
	c->nnative++;
	return (uint32_t)++c->nlocs;
}

/* Rounds a time value so the running sum of written values tracks the exact sum. */
static int64_t time_value(pp_ctx *c, double ns)
{
	c->exact_ns += ns;
	double target = floor(c->exact_ns + 0.5);
	double d = target - c->written_ns;
	/* A folded count can exceed int64 ns (COUNT 10^20 in ms): converting such a double is
	 * undefined behaviour, so the value saturates (NaN too, should it ever come). */
	int64_t v = d <= -0x1p63 ? INT64_MIN : !(d < 0x1p63) ? INT64_MAX : (int64_t)d;
	c->written_ns += (double)v;
	return v;
}

static void label(pp_ctx *c, uint32_t key, int is_num, int64_t num, uint32_t str)
{
	pb_int(&c->sub, LABEL_KEY, key);
	if (is_num)
		pb_int(&c->sub, LABEL_NUM, num);
	else
		pb_int(&c->sub, LABEL_STR, str);
	pb_msg(&c->msg, SAMPLE_LABEL, &c->sub);
}

static int on_stack(void *ctx, const nt_xstack *st)
{
	pp_ctx *c = ctx;
	/* location ids of the frames after those shared with the previous stack (folded
	 * input: a profile's frames of one name may be at other lines), then leaf first */
	if (nt_grow((void **)&c->ids, &c->idcap, st->depth, sizeof(uint32_t)))
		goto nomem;
	size_t shared = st->group ? 0 : nt_xprev_shared(&c->prev, st);
	if (shared == SIZE_MAX)
		goto nomem;
	size_t nids = 0;
	if (st->group) {
		/* a profile's stack: a native address (with the functions inlined at it) is one
		 * Location of its module's Mapping */
		for (size_t i = 0; i < st->depth;) {
			const nt_native_frame *nf = nt_xstack_native(st, i);
			uint64_t addr = 0;
			int64_t map = nf ? map_of(c, st->profile, st->session, nf, &addr) : 0;
			if (map < 0)
				goto nomem;
			if (!map) {
				if ((c->ids[nids++] = frame_loc(c, st, i)) == 0)
					goto nomem;
				i++;
				continue;
			}
			size_t j = i + 1;
			while (j < st->depth) {
				const nt_native_frame *nj = nt_xstack_native(st, j);
				if (!nj || nj->inline_depth == 0 || nj->file_offset != nf->file_offset ||
				    nj->module_path != nf->module_path)
					break;
				j++;
			}
			if ((c->ids[nids++] = native_loc(c, st, i, j, (uint32_t)map, addr)) == 0)
				goto nomem;
			i = j;
		}
	} else {
		for (size_t i = shared; i < st->depth; i++)
			if ((c->ids[i] = frame_loc(c, st, i)) == 0)
				goto nomem;
		nids = st->depth;
	}
	for (size_t i = nids; i-- > 0;)
		pb_varint(&c->packed, c->ids[i]);
	pb_msg(&c->msg, SAMPLE_LOCATION_ID, &c->packed);
	if (c->profile_input) {
		pb_varint(&c->packed, st->samples);
		pb_varint(&c->packed, (uint64_t)time_value(c, st->weight_ns));
	} else if (c->time_only) {
		pb_varint(&c->packed, (uint64_t)time_value(c, st->weight_ns));
	} else {
		pb_varint(&c->packed, (uint64_t)time_value(c, st->value));
	}
	pb_msg(&c->msg, SAMPLE_VALUE, &c->packed);
	if (st->has_thread) {
		label(c, c->s_thread, 1, (int64_t)st->thread_id, 0);
		/* the thread's name where the trace gives one, as the other exports show it */
		const char *tn = st->profile
					 ? nt_profile_thread_name(st->profile, st->session, st->thread_id)
					 : NULL;
		if (tn && tn[0]) {
			int64_t k = lit(c, "thread_name"), v = lit(c, tn);
			if (k < 0 || v < 0)
				goto nomem;
			label(c, (uint32_t)k, 0, 0, (uint32_t)v);
		}
	}
	if (st->category >= 0 && st->category < NT_CAT_COUNT) {
		int64_t cs = lit(c, nt_category_name(st->category));
		if (cs < 0)
			goto nomem;
		label(c, c->s_category, 0, 0, (uint32_t)cs);
	}
	if (c->sessions > 1 && st->has_thread && st->session < (uint32_t)c->sessions)
		label(c, c->s_session, 0, 0, c->sess_names[st->session]);
	for (size_t i = 0; i < c->nuser; i++)
		label(c, c->user_labels[2 * i], 0, 0, c->user_labels[2 * i + 1]);
	pb_msg(&c->samples, PROFILE_SAMPLE, &c->msg);
	if (c->samples.oom || c->msg.oom)
		goto nomem;
	return 0;
nomem:
	return nt_fail(c->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing the pprof profile");
}

static void value_type(pp_ctx *c, pb *b, unsigned field, int64_t type, int64_t unit)
{
	pb_int(&c->sub, VALUETYPE_TYPE, type);
	pb_int(&c->sub, VALUETYPE_UNIT, unit);
	pb_msg(b, field, &c->sub);
}

/* ------------------------------------------------------------------ gzip */

static int gzip_to(const uint8_t *p, size_t n, int level, const nt_sink *sink, nt_error *err)
{
	if (level < 0)
		return sink->write(sink->ctx, p, n);
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	/* windowBits 15 + 16: a gzip wrapper (header mtime 0, so output is deterministic) */
	if (deflateInit2(&zs, level ? level : 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot start gzip compression");
	uint8_t out[65536];
	int rc = 0, zr;
	do {
		/* avail_in is a uInt: feed at most 1 GiB at a time */
		if (zs.avail_in == 0 && n) {
			size_t take = n < (1u << 30) ? n : (1u << 30);
			zs.next_in = (Bytef *)(uintptr_t)p;
			zs.avail_in = (uInt)take;
			p += take;
			n -= take;
		}
		zs.next_out = out;
		zs.avail_out = sizeof out;
		zr = deflate(&zs, n ? Z_NO_FLUSH : Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			rc = nt_fail(err, NT_EINTERNAL, NT_NO_OFFSET, "gzip compression failed");
			break;
		}
		size_t have = sizeof out - zs.avail_out;
		if (have && (rc = sink->write(sink->ctx, out, have)) != 0)
			break;
	} while (zr != Z_STREAM_END);
	deflateEnd(&zs);
	return rc;
}

/* ------------------------------------------------------------------ the profile */

int nt_pprof_label_name_ok(const char *key, size_t n)
{
	if (!key || n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = key[i];
		int alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
		if (!alpha && !(i > 0 && ch >= '0' && ch <= '9'))
			return 0;
	}
	return 1;
}

typedef struct span {
	int64_t t0, t1;
} span;

static int cmp_span(const void *a, const void *b)
{
	const span *x = a, *y = b;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0 ? 1 : (x->t1 > y->t1) - (x->t1 < y->t1);
}

/* Length of the union of the spans (sorted here): time covered by one session or more. */
static int64_t union_ns(span *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_span);
	int64_t total = 0, s0 = 0, s1 = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || v[i].t0 > s1) {
			if (i)
				total = s1 - s0 > INT64_MAX - total ? INT64_MAX : total + (s1 - s0);
			s0 = v[i].t0;
			s1 = v[i].t1;
		} else if (v[i].t1 > s1) {
			s1 = v[i].t1;
		}
	}
	if (n)
		total = s1 - s0 > INT64_MAX - total ? INT64_MAX : total + (s1 - s0);
	return total;
}

int nt_pprof_write(nt_stacks *s, const nt_pprof_opts *opts, const nt_sink *sink, nt_error *err)
{
	nt_error_clear(err);
	nt_pprof_opts o;
	int orc = nt_opts_load(&o, sizeof o, sizeof o, opts, "pprof options", err);
	if (orc)
		return orc;
	if (!s || !sink)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no stacks or no sink");
	if (o.level < -1 || o.level > 9)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "gzip level %d is out of range", o.level);
	pp_ctx c;
	memset(&c, 0, sizeof c);
	c.err = err;
	pb out = {NULL, 0, 0, 0};
	int rc = 0;
	span *spans = NULL;
	int64_t *comments = NULL;
	char **ctext = NULL;      /* the comments' text (the string table borrows it) */
	size_t ncomments = 0;
	nt_profile *p = nt_stacks_profile(s);
	int unit = nt_stacks_unit(s);
	c.profile_input = p != NULL;
	c.time_only = !p && unit != NT_UNIT_SAMPLES;
	if (lit(&c, "") != 0)
		goto nomem;
	int64_t s_samples = lit(&c, "samples"), s_count = lit(&c, "count");
	int64_t s_time = lit(&c, "time"), s_ns = lit(&c, "nanoseconds");
	int64_t s_thread = lit(&c, "thread"), s_category = lit(&c, "category");
	int64_t s_session = lit(&c, "session");
	if (s_samples < 0 || s_count < 0 || s_time < 0 || s_ns < 0 || s_thread < 0 ||
	    s_category < 0 || s_session < 0)
		goto nomem;
	c.s_thread = (uint32_t)s_thread;
	c.s_category = (uint32_t)s_category;
	c.s_session = (uint32_t)s_session;

	if (o.nlabels && !o.labels) {
		rc = nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "pprof labels: none given");
		goto done;
	}
	if (o.nlabels > 1024) {
		rc = nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "pprof labels: %zu (1024 at most)",
			     o.nlabels);
		goto done;
	}
	for (size_t i = 0; i < o.nlabels; i++) {
		const char *l = o.labels[i], *eq = l ? strchr(l, '=') : NULL;
		if (!eq || !nt_pprof_label_name_ok(l, (size_t)(eq - l))) {
			rc = nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "pprof label '%s' is not KEY=VALUE "
				     "with KEY of letters, digits and _ (not first: a digit)",
				     l ? l : "(null)");
			goto done;
		}
	}
	if (o.nlabels && !(c.user_labels = calloc(2 * o.nlabels, sizeof(uint32_t))))
		goto nomem;
	for (size_t i = 0; i < o.nlabels; i++) {
		const char *eq = strchr(o.labels[i], '=');
		int64_t k = str_index(&c, o.labels[i], (size_t)(eq - o.labels[i]));
		int64_t v = lit(&c, eq + 1);
		if (k < 0 || v < 0)
			goto nomem;
		c.user_labels[2 * c.nuser] = (uint32_t)k;
		c.user_labels[2 * c.nuser + 1] = (uint32_t)v;
		c.nuser++;
	}

	int64_t start_ns = 0, covered_ns = 0, period = 0;
	if (p) {
		size_t ns = nt_profile_session_count(p);
		c.sessions = (int)(ns > 1000000 ? 1000000 : ns);
		c.sess_names = calloc(ns ? ns : 1, sizeof(uint32_t));
		spans = malloc((ns ? ns : 1) * sizeof *spans);
		comments = calloc(ns ? ns : 1, sizeof *comments);
		ctext = calloc(ns ? ns : 1, sizeof *ctext);
		if (!c.sess_names || !spans || !comments || !ctext)
			goto nomem;
		for (size_t i = 0; i < ns; i++) {
			const nt_session_info *si = nt_profile_session(p, i);
			int64_t t0 = nt_systemtime_to_unix_ns(si->header->sync_time_utc);
			int64_t d = si->duration_ns > 0 ? si->duration_ns : 0;
			int64_t t1 = t0 > 0 && d > INT64_MAX - t0 ? INT64_MAX : t0 + d;
			spans[i] = (span){t0, t1};
			if (i == 0 || t0 < start_ns)
				start_ns = t0;
			if (i == 0 && si->rate->inferred_interval_ns > 0)
				period = llround(si->rate->inferred_interval_ns);
			int64_t sn = lit(&c, si->name ? si->name : "");
			if (sn < 0)
				goto nomem;
			c.sess_names[i] = (uint32_t)sn;
			if (ns > 1) {
				/* each file's own time range: "NAME: START UTC + D s" (pprof -comments) */
				char utc[32], line[4096];
				nt_systemtime_iso(si->header->sync_time_utc, utc);
				snprintf(line, sizeof line, "%s: %s + %.9f s", si->name ? si->name : "-",
					 utc, (double)d / 1e9);
				if (!(ctext[ncomments] = nt_strdup(line)))
					goto nomem;
				int64_t ci = lit(&c, ctext[ncomments]);
				if (ci < 0)
					goto nomem;
				comments[ncomments++] = ci;
			}
		}
		/* the time the profile covers: two files an hour apart are not an hour long */
		covered_ns = union_ns(spans, ns);
	}

	rc = nt_stacks_foreach(s, on_stack, &c, err);
	if (rc)
		goto done;

	/* sample types: the count first (pprof's convention), time last (the default) */
	if (p) {
		value_type(&c, &out, PROFILE_SAMPLE_TYPE, s_samples, s_count);
		value_type(&c, &out, PROFILE_SAMPLE_TYPE, s_time, s_ns);
	} else if (c.time_only) {
		value_type(&c, &out, PROFILE_SAMPLE_TYPE, s_time, s_ns);
	} else {
		value_type(&c, &out, PROFILE_SAMPLE_TYPE, s_samples, s_count);
	}
	if (c.samples.oom)
		goto nomem;
	pb_bytes(&out, c.samples.p, c.samples.n);
	/* One Mapping for the whole profile, named after the input and marked as symbolized
	 * (has_functions), so that pprof neither looks for a binary nor warns about it. */
	int64_t mname = lit(&c, nt_stacks_name(s));
	if (mname < 0)
		goto nomem;
	pb_int(&c.msg, MAPPING_ID, 1);
	pb_int(&c.msg, MAPPING_FILENAME, mname);
	pb_int(&c.msg, MAPPING_HAS_FUNCTIONS, 1);
	pb_msg(&out, PROFILE_MAPPING, &c.msg);
	/* the native modules: where they were mapped, their file and build id, so that
	 * pprof -disasm, -list and symbol servers find the binary; symbolized already */
	for (size_t i = 0; i < c.nmaps; i++) {
		const nt_native_module *m = &c.maps[i].m;
		int64_t fn = lit(&c, m->path ? m->path : "");
		int64_t bid = lit(&c, m->build_id ? m->build_id : "");
		if (fn < 0 || bid < 0)
			goto nomem;
		pb_int(&c.msg, MAPPING_ID, (int64_t)i + 2);
		pb_int(&c.msg, MAPPING_MEMORY_START, (int64_t)m->base);
		pb_int(&c.msg, MAPPING_MEMORY_LIMIT, (int64_t)(m->base + m->size));
		pb_int(&c.msg, MAPPING_FILE_OFFSET, (int64_t)m->file_offset);
		pb_int(&c.msg, MAPPING_FILENAME, fn);
		pb_int(&c.msg, MAPPING_BUILD_ID, bid);
		pb_int(&c.msg, MAPPING_HAS_FUNCTIONS, 1);
		pb_int(&c.msg, MAPPING_HAS_FILENAMES, 1);
		pb_int(&c.msg, MAPPING_HAS_LINE_NUMBERS, 1);
		pb_int(&c.msg, MAPPING_HAS_INLINE_FRAMES, 1);
		pb_msg(&out, PROFILE_MAPPING, &c.msg);
	}
	/* one Location per (Function, line) for managed and made frames, one Line each (no
	 * addresses: managed frames are named by the runtime's events, not by an address in
	 * a mapped file); one per address for native frames */
	for (size_t i = 0; i < c.nlocs; i++) {
		if (c.loc_map[i]) {
			pb_int(&c.msg, LOCATION_ID, (int64_t)i + 1);
			pb_int(&c.msg, LOCATION_MAPPING_ID, c.loc_map[i]);
			pb_int(&c.msg, LOCATION_ADDRESS, (int64_t)c.loc_addr[i]);
			for (uint32_t k = 0; k < c.loc_nl[i]; k++) {
				uint64_t l = c.nlines[c.loc_loff[i] + k];
				pb_int(&c.sub, LINE_FUNCTION_ID, (int64_t)(l >> 32));
				if ((uint32_t)l)
					pb_int(&c.sub, LINE_LINE, (int64_t)(uint32_t)l);
				pb_msg(&c.msg, LOCATION_LINE, &c.sub);
			}
			pb_msg(&out, PROFILE_LOCATION, &c.msg);
			continue;
		}
		pb_int(&c.sub, LINE_FUNCTION_ID, (int64_t)(c.locs[i] >> 32));
		if ((uint32_t)c.locs[i])
			pb_int(&c.sub, LINE_LINE, (int64_t)(uint32_t)c.locs[i]);
		pb_int(&c.msg, LOCATION_ID, (int64_t)i + 1);
		pb_int(&c.msg, LOCATION_MAPPING_ID, 1);
		pb_msg(&c.msg, LOCATION_LINE, &c.sub);
		pb_msg(&out, PROFILE_LOCATION, &c.msg);
	}
	for (size_t i = 0; i < c.nfuncs; i++) {
		uint32_t si = c.funcs[i];
		const pstr *e = &c.strs[si];
		/* its source file, or, for "Module!Namespace.Type.Method(sig)", the module */
		const char *bang = memchr(e->s, '!', e->n);
		int64_t file = c.func_file[i];
		if (!file && bang && bang > e->s && !(e->n == 3 && memcmp(e->s, "?!?", 3) == 0) &&
		    (file = str_index(&c, e->s, (size_t)(bang - e->s))) < 0)
			goto nomem;
		pb_int(&c.msg, FUNCTION_ID, (int64_t)i + 1);
		pb_int(&c.msg, FUNCTION_NAME, si);
		/* no system_name: pprof would take a .NET signature for C++ and shorten it */
		pb_int(&c.msg, FUNCTION_SYSTEM_NAME, 0);
		pb_int(&c.msg, FUNCTION_FILENAME, file);
		pb_msg(&out, PROFILE_FUNCTION, &c.msg);
	}
	/* strings must be valid UTF-8 for protobuf readers that check it: invalid bytes
	 * become U+FFFD, as in the other exports */
	for (size_t i = 0; i < c.nstrs; i++) {
		const pstr *e = &c.strs[i];
		const unsigned char *u = (const unsigned char *)e->s;
		size_t k = 0;
		while (k < e->n) {
			size_t q = nt_utf8_seq(u + k, e->n - k);
			if (q == 0)
				break;
			k += q;
		}
		if (k == e->n) {
			pb_len(&out, PROFILE_STRING_TABLE, e->s, e->n);
			continue;
		}
		for (k = 0; k < e->n;) {
			size_t q = nt_utf8_seq(u + k, e->n - k);
			if (q == 0) {
				pb_bytes(&c.sub, "\xEF\xBF\xBD", 3);
				k++;
			} else {
				pb_bytes(&c.sub, u + k, q);
				k += q;
			}
		}
		pb_msg(&out, PROFILE_STRING_TABLE, &c.sub);
	}
	if (p) {
		pb_int(&out, PROFILE_TIME_NANOS, start_ns);
		pb_int(&out, PROFILE_DURATION_NANOS, covered_ns);
		for (size_t i = 0; i < ncomments; i++)
			pb_int(&out, PROFILE_COMMENT, comments[i]);
		if (period > 0) {
			value_type(&c, &out, PROFILE_PERIOD_TYPE, s_time, s_ns);
			pb_int(&out, PROFILE_PERIOD, period);
		}
		pb_int(&out, PROFILE_DEFAULT_SAMPLE_TYPE, s_time);
	}
	if (out.oom || c.msg.oom || c.sub.oom)
		goto nomem;
	rc = gzip_to(out.p, out.n, o.level, sink, err);
	if (rc && err && err->code == 0)
		rc = nt_fail(err, rc, NT_NO_OFFSET, "cannot write the pprof profile");
	goto done;
nomem:
	rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing the pprof profile");
done:
	free(out.p);
	free(c.strs);
	free(c.sht);
	free(c.funcs);
	free(c.func_file);
	free(c.locs);
	free(c.lht);
	free(c.loc_map);
	free(c.loc_addr);
	free(c.loc_loff);
	free(c.loc_nl);
	free(c.nlines);
	free(c.nht);
	free(c.maps);
	free(c.sess_loaded);
	free(c.samples.p);
	free(c.msg.p);
	free(c.sub.p);
	free(c.packed.p);
	free(c.sess_names);
	free(c.user_labels);
	free(spans);
	free(comments);
	for (size_t i = 0; ctext && i < ncomments; i++)
		free(ctext[i]);
	free(ctext);
	free(c.ids);
	nt_xprev_free(&c.prev);
	return rc;
}
