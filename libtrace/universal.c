/* SPDX-License-Identifier: MIT */
/* universal.c - the machine-wide Universal.System / Universal.Events providers of
 * one-collect and `dotnet-trace collect-linux` (doc/format/universal-events.md): the
 * process table (names from ProcessCreate/ExistingProcess), each process's mappings
 * (ProcessMapping, with the ELF build id of ProcessMappingMetadata), the symbol ranges of
 * ProcessSymbol, and the name of an address in a process: a ProcessSymbol range first
 * (JIT'd code, symbols the writer exported), else the mapped ELF file through the DWARF
 * resolver (sym-native.c, build id checked). Payloads are read with nt_event_field();
 * a malformed one is an error with the event's byte offset. Not here: turning cpu and
 * cswitch events into samples (profile.c). */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>

typedef struct usym {
	uint64_t start, end; /* [start, end], end inclusive as the provider defines it */
	char *name;
	char *frame;         /* "module!name", made on first use */
} usym;

typedef struct umap {
	uint64_t id;
	uint64_t start, end; /* [start, end) */
	uint64_t file_offset;
	char *file;
	uint64_t meta_id;
	usym *syms;
	size_t nsyms, symcap;
	int sorted;
	int added;           /* given to the process's native resolver */
} umap;

typedef struct umref {
	uint64_t start;
	size_t idx;          /* into u->maps */
} umref;

typedef struct uproc {
	uint64_t pid;
	char *name;          /* NULL until a ProcessCreate/ExistingProcess names it */
	umref *maps;         /* its mappings, sorted by start when sorted is set */
	size_t nmaps, mapcap;
	int sorted;
	nt_native *native;   /* created on the first ELF lookup */
} uproc;

typedef struct umeta {
	uint64_t id;
	char *build_id;      /* lowercase hex, "" if the metadata names none */
} umeta;

struct nt_universal {
	nt_native_opts nopts;
	int has_nopts;
	uproc *procs;
	size_t nprocs, proccap;
	nt_idmap proc_map;   /* pid -> index */
	umap *maps;
	size_t nmaps, mapcap;
	nt_idmap map_map;    /* mapping id -> index */
	umeta *metas;
	size_t nmetas, metacap;
	nt_idmap meta_map;
	uint64_t events;     /* Universal events seen */
};

int nt_universal_new(nt_universal **out, const nt_native_opts *nopts, nt_error *err)
{
	nt_universal *u = calloc(1, sizeof *u);
	*out = u;
	if (!u)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (nopts) {
		u->nopts = *nopts;
		u->has_nopts = 1;
	}
	return 0;
}

void nt_universal_free(nt_universal *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nprocs; i++) {
		free(u->procs[i].name);
		free(u->procs[i].maps);
		nt_native_free(u->procs[i].native);
	}
	for (size_t i = 0; i < u->nmaps; i++) {
		free(u->maps[i].file);
		for (size_t k = 0; k < u->maps[i].nsyms; k++)
			free(u->maps[i].syms[k].name), free(u->maps[i].syms[k].frame);
		free(u->maps[i].syms);
	}
	for (size_t i = 0; i < u->nmetas; i++)
		free(u->metas[i].build_id);
	free(u->procs);
	free(u->maps);
	free(u->metas);
	nt_idmap_free(&u->proc_map);
	nt_idmap_free(&u->map_map);
	nt_idmap_free(&u->meta_map);
	free(u);
}

int nt_meta_universal(const nt_metadata *m)
{
	if (!m || !m->provider)
		return 0;
	if (strcmp(m->provider, NT_PROVIDER_UNIVERSAL_EVENTS) == 0) {
		if (m->name && strcmp(m->name, "cpu") == 0)
			return NT_UNIV_CPU;
		if (m->name && strcmp(m->name, "cswitch") == 0)
			return NT_UNIV_CSWITCH;
		return NT_UNIV_OTHER;
	}
	if (strcmp(m->provider, NT_PROVIDER_UNIVERSAL_SYSTEM) == 0)
		return NT_UNIV_SYSTEM;
	return 0;
}

static uproc *get_proc(nt_universal *u, uint64_t pid)
{
	size_t i;
	if (nt_idmap_get(&u->proc_map, pid, &i))
		return &u->procs[i];
	if (nt_grow((void **)&u->procs, &u->proccap, u->nprocs + 1, sizeof(uproc)) ||
	    nt_idmap_put(&u->proc_map, pid, u->nprocs))
		return NULL;
	uproc *p = &u->procs[u->nprocs++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	return p;
}

/* A string field (UTF-8 with its length, or UTF-16) as a new string; "" when absent.
 * Returns 0, 1 when the field is malformed (payload too short), -1 out of memory. */
static int field_string(const nt_event *ev, uint32_t ps, const char *name, char **out)
{
	nt_value v;
	*out = NULL;
	if (!nt_event_field(ev, ps, name, &v))
		return 1;
	if (v.type == NT_TYPE_UTF8_STRING16) {
		char *s = malloc(v.raw_len + 1);
		if (!s)
			return -1;
		if (v.raw_len)
			memcpy(s, v.raw, v.raw_len);
		s[v.raw_len] = '\0';
		/* an embedded NUL ends the name, as it would in C */
		*out = s;
		return 0;
	}
	if (v.type == NT_TYPE_STRING) {
		size_t used = nt_utf16z_dup(v.raw, v.raw_len, out);
		if (used == (size_t)-1)
			return -1;
		return used == 0 ? 1 : 0;
	}
	return 1;
}

static int field_u64(const nt_event *ev, uint32_t ps, const char *name, uint64_t *out)
{
	nt_value v;
	if (!nt_event_field(ev, ps, name, &v))
		return 1;
	*out = v.u;
	return 0;
}

/* The "build_id" string of ELF symbol metadata JSON ({"type":"ELF","build_id":"ab12..",
 * ...}); a small scan, not a JSON parser: only a hex string value is taken. */
static char *json_build_id(const char *json)
{
	const char *k = json ? strstr(json, "\"build_id\"") : NULL;
	if (!k)
		return nt_strdup("");
	k += 10;
	while (*k == ' ' || *k == '\t' || *k == '\n' || *k == '\r')
		k++;
	if (*k++ != ':')
		return nt_strdup("");
	while (*k == ' ' || *k == '\t' || *k == '\n' || *k == '\r')
		k++;
	if (*k++ != '"')
		return nt_strdup("");
	size_t n = 0;
	while (k[n] && k[n] != '"') {
		char c = k[n];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return nt_strdup("");
		n++;
	}
	if (k[n] != '"' || n > 256)
		return nt_strdup("");
	char *s = malloc(n + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = (char)((k[i] >= 'A' && k[i] <= 'F') ? k[i] - 'A' + 'a' : k[i]);
	s[n] = '\0';
	return s;
}

#define BAD(what)                                                                          \
	nt_fail(err, NT_EFORMAT, ev->offset, "malformed Universal.System %s event: %s",    \
		m->name && m->name[0] ? m->name : "?", what)
#define NOMEM() nt_fail(err, NT_ENOMEM, ev->offset, "out of memory reading Universal events")

/* A string field the event must have: 0 with *out (malloc'd), else the error. */
static int need_string(const nt_event *ev, uint32_t ps, const char *field, char **out,
		       nt_error *err)
{
	const nt_metadata *m = ev->meta;
	int rc = field_string(ev, ps, field, out);
	if (rc < 0)
		return NOMEM();
	if (rc) {
		char what[64];
		snprintf(what, sizeof what, "no %s", field);
		return BAD(what);
	}
	return 0;
}

/* The four integer fields an event must have, in order. */
static int need_u64x4(const nt_event *ev, uint32_t ps, const char *const names[4],
		      uint64_t *const outs[4], nt_error *err)
{
	const nt_metadata *m = ev->meta;
	for (int i = 0; i < 4; i++)
		if (field_u64(ev, ps, names[i], outs[i]))
			return BAD("fields missing or payload too short");
	return 0;
}

int nt_universal_add_event(nt_universal *u, const nt_event *ev, uint32_t ps, int kind,
			   uint64_t *value, nt_error *err)
{
	const nt_metadata *m = ev->meta;
	u->events++;
	if (kind == NT_UNIV_CPU || kind == NT_UNIV_CSWITCH) {
		if (field_u64(ev, ps, "Value", value))
			return nt_fail(err, NT_EFORMAT, ev->offset,
				       "malformed Universal.Events %s event: no Value", m->name);
		return get_proc(u, ev->process_id) ? 0 : NOMEM();
	}
	if (kind != NT_UNIV_SYSTEM)
		return 0;
	switch (m->event_id) {
	case 0: /* ExistingProcess */
	case 1: { /* ProcessCreate */
		char *name;
		int rc = need_string(ev, ps, "Name", &name, err);
		if (rc)
			return rc;
		uproc *p = get_proc(u, ev->process_id);
		if (!p) {
			free(name);
			return NOMEM();
		}
		free(p->name);
		p->name = name;
		return 0;
	}
	case 2: /* ProcessExit */
		return get_proc(u, ev->process_id) ? 0 : NOMEM();
	case 3: { /* ProcessMapping */
		uint64_t id, start, end, off, meta = 0;
		static const char *const names[4] = {"Id", "StartAddress", "EndAddress", "FileOffset"};
		char *file;
		int rc = need_u64x4(ev, ps, names, (uint64_t *const[4]){&id, &start, &end, &off}, err);
		if (rc || (rc = need_string(ev, ps, "FileName", &file, err)))
			return rc;
		field_u64(ev, ps, "MetadataId", &meta); /* optional */
		uproc *p = get_proc(u, ev->process_id);
		size_t mi;
		if (!p)
			goto map_oom;
		if (nt_idmap_get(&u->map_map, id, &mi)) {
			/* a mapping id seen again (another process, or re-sent after a flush) */
			umap *mp = &u->maps[mi];
			free(file);
			file = NULL;
			if (mp->start != start || mp->end != end)
				return 0; /* ids are trace-wide: keep the first definition */
		} else {
			if (nt_grow((void **)&u->maps, &u->mapcap, u->nmaps + 1, sizeof(umap)) ||
			    nt_idmap_put(&u->map_map, id, u->nmaps))
				goto map_oom;
			mi = u->nmaps++;
			umap *mp = &u->maps[mi];
			memset(mp, 0, sizeof *mp);
			mp->id = id;
			mp->start = start;
			mp->end = end;
			mp->file_offset = off;
			mp->file = file;
			mp->meta_id = meta;
			file = NULL;
		}
		for (size_t k = 0; k < p->nmaps; k++)
			if (p->maps[k].idx == mi)
				return 0;
		if (nt_grow((void **)&p->maps, &p->mapcap, p->nmaps + 1, sizeof(umref)))
			goto map_oom;
		p->maps[p->nmaps++] = (umref){u->maps[mi].start, mi};
		p->sorted = 0;
		return 0;
map_oom:
		free(file);
		return NOMEM();
	}
	case 4: { /* ProcessSymbol */
		uint64_t id, mid, start, end;
		static const char *const names[4] = {"Id", "MappingId", "StartAddress", "EndAddress"};
		char *name;
		int rc = need_u64x4(ev, ps, names, (uint64_t *const[4]){&id, &mid, &start, &end}, err);
		if (rc || (rc = need_string(ev, ps, "Name", &name, err)))
			return rc;
		size_t mi;
		if (end < start || !nt_idmap_get(&u->map_map, mid, &mi)) {
			free(name); /* an empty range, or a mapping never defined: unusable */
			return 0;
		}
		umap *mp = &u->maps[mi];
		if (nt_grow((void **)&mp->syms, &mp->symcap, mp->nsyms + 1, sizeof(usym))) {
			free(name);
			return NOMEM();
		}
		mp->syms[mp->nsyms++] = (usym){start, end, name, NULL};
		mp->sorted = 0;
		return 0;
	}
	case 5: { /* ProcessMappingMetadata */
		uint64_t id;
		if (field_u64(ev, ps, "Id", &id))
			return BAD("no Id");
		char *json;
		int rc = need_string(ev, ps, "SymbolMetadata", &json, err);
		if (rc)
			return rc;
		char *bid = json_build_id(json);
		free(json);
		if (!bid)
			return NOMEM();
		size_t i;
		if (nt_idmap_get(&u->meta_map, id, &i)) {
			free(u->metas[i].build_id);
			u->metas[i].build_id = bid;
			return 0;
		}
		if (nt_grow((void **)&u->metas, &u->metacap, u->nmetas + 1, sizeof(umeta)) ||
		    nt_idmap_put(&u->meta_map, id, u->nmetas)) {
			free(bid);
			return NOMEM();
		}
		u->metas[u->nmetas++] = (umeta){id, bid};
		return 0;
	}
	default:
		return 0;
	}
}

size_t nt_universal_process_count(const nt_universal *u)
{
	return u ? u->nprocs : 0;
}

int nt_universal_process_at(const nt_universal *u, size_t i, uint64_t *pid, const char **name)
{
	if (!u || i >= u->nprocs)
		return 0;
	*pid = u->procs[i].pid;
	*name = u->procs[i].name;
	return 1;
}

const char *nt_universal_process_name(const nt_universal *u, uint64_t pid)
{
	size_t i;
	if (!u || !nt_idmap_get(&u->proc_map, pid, &i))
		return NULL;
	return u->procs[i].name;
}

static int cmp_mref(const void *a, const void *b)
{
	const umref *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_sym(const void *a, const void *b)
{
	const usym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* The mapping of p holding ip (the latest-starting one when they overlap), or NULL. */
static umap *find_map(nt_universal *u, uproc *p, uint64_t ip)
{
	if (!p->sorted && p->nmaps) {
		qsort(p->maps, p->nmaps, sizeof(umref), cmp_mref);
		p->sorted = 1;
	}
	size_t lo; /* first mapping starting after ip */
	NT_PARTITION(lo, p->nmaps, mid, p->maps[mid].start <= ip);
	for (size_t k = lo; k-- > 0;) {
		umap *mp = &u->maps[p->maps[k].idx];
		if (ip >= mp->start && ip < mp->end)
			return mp;
		if (lo - k > 8)
			break; /* overlaps are rare: a bounded look back */
	}
	return NULL;
}

static usym *find_sym(umap *mp, uint64_t ip)
{
	if (!mp->sorted && mp->nsyms) { /* qsort of NULL, 0 is undefined */
		qsort(mp->syms, mp->nsyms, sizeof(usym), cmp_sym);
		mp->sorted = 1;
	}
	size_t lo;
	NT_PARTITION(lo, mp->nsyms, mid, mp->syms[mid].start <= ip);
	for (size_t k = lo; k-- > 0;) {
		if (ip >= mp->syms[k].start && ip <= mp->syms[k].end)
			return &mp->syms[k];
		if (lo - k > 8)
			break;
	}
	return NULL;
}

/* The frame name of symbol s in mapping mp: .NET JIT'd code is named
 * "RETURN [MODULE] Namespace.Class::Method(ARGS)[TIER]" (as perf maps write it), which
 * becomes "MODULE!Namespace.Class::Method(ARGS)" (the module and method TraceEvent shows);
 * other symbols are "FILE!NAME" with the file name of the mapping. NULL: out of memory. */
static char *frame_name(const umap *mp, const char *name)
{
	size_t n = strlen(name);
	const char *lb = strstr(name, " [");
	if (lb && n && name[n - 1] == ']') {
		const char *mod = lb + 2, *rb = strchr(mod, ']');
		const char *tier = strrchr(name, '[');
		if (rb && rb > mod && rb[1] == ' ' && tier > rb) {
			const char *sig = rb + 2;
			while (*sig == ' ')
				sig++;
			size_t sl = (size_t)(tier - sig);
			while (sl && sig[sl - 1] == ' ')
				sl--;
			size_t ml = (size_t)(rb - mod);
			char *f = malloc(ml + 1 + sl + 1);
			if (!f)
				return NULL;
			memcpy(f, mod, ml);
			f[ml] = '!';
			memcpy(f + ml + 1, sig, sl);
			f[ml + 1 + sl] = '\0';
			return f;
		}
	}
	const char *file = mp->file ? mp->file : "";
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (!*base)
		return nt_strdup(name);
	size_t bl = strlen(base);
	char *f = malloc(bl + 1 + n + 1);
	if (!f)
		return NULL;
	memcpy(f, base, bl);
	f[bl] = '!';
	memcpy(f + bl + 1, name, n + 1);
	return f;
}

static const char *meta_build_id(const nt_universal *u, uint64_t id)
{
	size_t i;
	if (id && nt_idmap_get(&u->meta_map, id, &i))
		return u->metas[i].build_id;
	return "";
}

int nt_universal_resolve(nt_universal *u, uint64_t pid, uint64_t ip, uint64_t lookup_ip,
			 const char **sym, const char **file, const nt_native_frame **frames,
			 size_t *n, nt_error *err)
{
	*sym = NULL;
	*file = NULL;
	*frames = NULL;
	*n = 0;
	size_t pi;
	if (!nt_idmap_get(&u->proc_map, pid, &pi))
		return 0;
	uproc *p = &u->procs[pi];
	umap *mp = find_map(u, p, lookup_ip);
	if (!mp)
		mp = find_map(u, p, ip);
	if (!mp)
		return 0;
	*file = mp->file;
	usym *s = find_sym(mp, lookup_ip);
	if (!s && lookup_ip != ip)
		s = find_sym(mp, ip);
	if (s) {
		if (!s->frame && !(s->frame = frame_name(mp, s->name)))
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		*sym = s->frame;
		return 0;
	}
	/* An ELF file (not JIT'd code in an anonymous or memfd mapping): DWARF/ELF symbols. */
	if (!mp->file || mp->file[0] != '/' || strncmp(mp->file, "/memfd:", 7) == 0)
		return 0;
	if (!p->native) {
		int rc = nt_native_new(&p->native, u->has_nopts ? &u->nopts : NULL, err);
		if (rc)
			return rc;
	}
	if (!mp->added) {
		mp->added = 1;
		int rc = nt_native_add_module(p->native, mp->start, mp->end - mp->start,
					      mp->file_offset, mp->file,
					      meta_build_id(u, mp->meta_id), NULL);
		if (rc == NT_ENOMEM)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	}
	return nt_native_resolve(p->native, lookup_ip, frames, n, err);
}

const nt_native *nt_universal_native(const nt_universal *u, size_t proc_index)
{
	if (!u || proc_index >= u->nprocs)
		return NULL;
	return u->procs[proc_index].native;
}
