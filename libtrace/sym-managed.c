/* SPDX-License-Identifier: MIT */
/* sym-managed.c - source lines of JIT'd .NET frames: the code versions of methods
 * (MethodLoadVerbose, rundown MethodDC{Start,End}Verbose: one per start address, so tiered
 * re-JIT and OSR code each have their own), their IL maps (MethodILToNativeMap, rundown
 * MethodILToNativeMap{DCStart,DCEnd}), the modules' PDB identity (ModuleLoad / ModuleDC*
 * V2: ModuleILPath, ManagedPdbSignature, ManagedPdbBuildPath), the search for each
 * module's portable PDB (pdb.c) and IP -> IL offset -> file:line.
 *
 * An IL-map event has no start address, only the MethodID: the runtime writes it on the
 * thread that loaded the code, right after (JIT) or right before (rundown) that code's
 * method event, so a map is paired with the method event of the same MethodID adjacent to
 * it on its thread (doc/format/managed-lines.md). Not here: method names (symtab.c). */
#include "pdb.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#define IL_PROLOG 0xFFFFFFFEu
#define IL_EPILOG 0xFFFFFFFDu
#define IL_NONE 0xFFFFFFFFu
#define MAX_MAP_ENTRIES 65535u   /* CountOfMapEntries is a uint16 */
#define FRAME_CHUNK 256u

typedef struct mmod {
	uint64_t id;
	char *il_path, *name, *build_path;
	uint8_t sig[16];
	int has_sig;
	char sig_text[40];
	int state;           /* NT_MANAGED_UNUSED until the PDB search ran */
	nt_pdb *pdb;
	char *pdb_path;
	char *message;
	uint64_t lookups, lines;
} mmod;

typedef struct mcode {
	uint64_t start, end;
	uint64_t method_id, module_id;
	uint32_t token;
	int rundown;
	int64_t map;         /* index into maps, -1 none */
} mcode;

typedef struct ilmap {
	uint32_t n;
	uint32_t *native, *il; /* sorted by native offset */
	uint32_t max_native;
	uint32_t max_il;     /* largest real IL offset, for epilogs */
} ilmap;

typedef struct pend {
	int kind;            /* 0 none, 1 a method event (code), 2 an IL map */
	int rundown;
	uint64_t method_id;
	size_t idx;
} pend;

typedef struct mframe {
	nt_native_frame f;
	int status;
	int pdb_read;        /* its module's PDB was read */
} mframe;

struct nt_mlines {
	char **dirs;
	size_t ndirs;
	char *root;
	mmod *mod;
	size_t nmod, modcap;
	nt_idmap mod_ix;     /* module id -> index */
	mcode *code;
	size_t ncode, codecap;
	nt_idmap code_ix;    /* start address -> index (before sealing) */
	ilmap *maps;
	size_t nmaps, mapcap;
	pend *pend;
	size_t npend, pendcap;
	nt_idmap pend_ix;    /* thread id -> pend index */
	int sealed;
	mframe **chunks;     /* frames, FRAME_CHUNK per chunk (pointers stay valid) */
	size_t nframes, chunkcap;
	nt_idmap frame_ix;   /* ip << 1 | ret -> frame index */
};

int nt_mlines_new(nt_mlines **out, const char *symbol_path, const char *root, nt_error *err)
{
	nt_mlines *ml = calloc(1, sizeof *ml);
	if (!ml)
		goto nomem;
	ml->root = nt_strdup(root ? root : "");
	if (!ml->root)
		goto nomem;
	size_t lr = strlen(ml->root);
	while (lr > 0 && ml->root[lr - 1] == '/')
		ml->root[--lr] = '\0';
	for (const char *s = symbol_path; s && *s;) {
		const char *e = strchr(s, ':');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n) {
			char **nd = realloc(ml->dirs, (ml->ndirs + 1) * sizeof(char *));
			if (!nd)
				goto nomem;
			ml->dirs = nd;
			if (!(ml->dirs[ml->ndirs] = malloc(n + 1)))
				goto nomem;
			memcpy(ml->dirs[ml->ndirs], s, n);
			ml->dirs[ml->ndirs++][n] = '\0';
		}
		s = e ? e + 1 : s + n;
	}
	*out = ml;
	return 0;
nomem:
	nt_mlines_free(ml);
	return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate managed line tables");
}

void nt_mlines_free(nt_mlines *ml)
{
	if (!ml)
		return;
	for (size_t i = 0; i < ml->ndirs; i++)
		free(ml->dirs[i]);
	free(ml->dirs);
	free(ml->root);
	for (size_t i = 0; i < ml->nmod; i++) {
		mmod *m = &ml->mod[i];
		free(m->il_path);
		free(m->name);
		free(m->build_path);
		nt_pdb_free(m->pdb);
		free(m->pdb_path);
		free(m->message);
	}
	free(ml->mod);
	nt_idmap_free(&ml->mod_ix);
	free(ml->code);
	nt_idmap_free(&ml->code_ix);
	for (size_t i = 0; i < ml->nmaps; i++) {
		free(ml->maps[i].native);
		free(ml->maps[i].il);
	}
	free(ml->maps);
	free(ml->pend);
	nt_idmap_free(&ml->pend_ix);
	for (size_t i = 0; i < (ml->nframes + FRAME_CHUNK - 1) / FRAME_CHUNK; i++)
		free(ml->chunks[i]);
	free(ml->chunks);
	nt_idmap_free(&ml->frame_ix);
	free(ml);
}

/* ------------------------------------------------------------------ events */

static void guid_text(const uint8_t g[16], char out[40])
{
	snprintf(out, 40,
		 "%08" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 nt_le32(g), (uint32_t)g[4] | (uint32_t)g[5] << 8, (uint32_t)g[6] | (uint32_t)g[7] << 8,
		 g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

static int add_module(nt_mlines *ml, const nt_event *ev, uint32_t version)
{
	/* ModuleID u64, AssemblyID u64, Flags u32, Reserved u32, ILPath, NativePath; V2:
	 * ClrInstanceID u16, ManagedPdbSignature GUID, ManagedPdbAge u32, ManagedPdbBuildPath */
	if (ev->payload_len < 24)
		return 0;
	uint64_t id = nt_le64(ev->payload);
	size_t pos = 24, k;
	int known = nt_idmap_get(&ml->mod_ix, id, &k);
	if (known && ml->mod[k].has_sig)
		return 1; /* the first definition with a PDB identity wins */
	char *il = nt_payload_utf16z(ev, &pos);
	if (!il)
		return 0;
	char *native = nt_payload_utf16z(ev, &pos);
	int have_native = native != NULL;
	free(native);
	char *build = NULL;
	uint8_t sig[16];
	int has_sig = 0;
	if (have_native && version >= 2 && ev->payload_len - pos >= 2 + 16 + 4) {
		memcpy(sig, ev->payload + pos + 2, 16);
		pos += 2 + 16 + 4;
		build = nt_payload_utf16z(ev, &pos);
		for (int i = 0; i < 16; i++)
			has_sig |= sig[i];
	}
	if (!known) {
		if (nt_grow((void **)&ml->mod, &ml->modcap, ml->nmod + 1, sizeof(mmod)) ||
		    nt_idmap_put(&ml->mod_ix, id, ml->nmod))
			goto nomem;
		k = ml->nmod++;
		memset(&ml->mod[k], 0, sizeof(mmod));
		ml->mod[k].id = id;
		ml->mod[k].state = NT_MANAGED_UNUSED;
	}
	mmod *m = &ml->mod[k];
	free(m->il_path);
	free(m->name);
	free(m->build_path);
	m->il_path = il;
	m->build_path = build ? build : nt_strdup("");
	m->name = nt_strdup(nt_path_base(il));
	if (!m->build_path || !m->name)
		return NT_ENOMEM;
	char *dot = strrchr(m->name, '.');
	if (dot && dot != m->name)
		*dot = '\0';
	m->has_sig = has_sig;
	if (has_sig) {
		memcpy(m->sig, sig, 16);
		guid_text(sig, m->sig_text);
	}
	return 1;
nomem:
	free(il);
	free(build);
	return NT_ENOMEM;
}

static pend *thread_pend(nt_mlines *ml, uint64_t tid)
{
	size_t k;
	if (nt_idmap_get(&ml->pend_ix, tid, &k))
		return &ml->pend[k];
	if (nt_grow((void **)&ml->pend, &ml->pendcap, ml->npend + 1, sizeof(pend)) ||
	    nt_idmap_put(&ml->pend_ix, tid, ml->npend))
		return NULL;
	memset(&ml->pend[ml->npend], 0, sizeof(pend));
	return &ml->pend[ml->npend++];
}

/* A map fits a code version when its native offsets lie inside the code. */
static void pair(nt_mlines *ml, size_t code, size_t map)
{
	mcode *c = &ml->code[code];
	if (c->map >= 0 || (uint64_t)ml->maps[map].max_native >= c->end - c->start)
		return;
	c->map = (int64_t)map;
}

static int add_method(nt_mlines *ml, const nt_event *ev, int rundown, int pairs)
{
	/* MethodID u64, ModuleID u64, MethodStartAddress u64, MethodSize u32, MethodToken u32 */
	if (ev->payload_len < 32)
		return 0;
	const uint8_t *p = ev->payload;
	uint64_t mid = nt_le64(p), start = nt_le64(p + 16);
	uint32_t size = nt_le32(p + 24);
	if (size == 0)
		return 0;
	size_t k;
	if (!nt_idmap_get(&ml->code_ix, start, &k)) {
		if (nt_grow((void **)&ml->code, &ml->codecap, ml->ncode + 1, sizeof(mcode)) ||
		    nt_idmap_put(&ml->code_ix, start, ml->ncode))
			return NT_ENOMEM;
		k = ml->ncode++;
		mcode *c = &ml->code[k];
		c->start = start;
		c->end = start + size < start ? UINT64_MAX : start + size;
		c->method_id = mid;
		c->module_id = nt_le64(p + 8);
		c->token = nt_le32(p + 28);
		c->rundown = rundown;
		c->map = -1;
		ml->sealed = 0;
	} else if (ml->code[k].method_id != mid) {
		return 1; /* reused address: the first definition keeps it */
	}
	if (!pairs)
		return 1;
	pend *t = thread_pend(ml, ev->thread_id);
	if (!t)
		return NT_ENOMEM;
	if (t->kind == 2 && t->method_id == mid && t->rundown == rundown) {
		pair(ml, k, t->idx);
		t->kind = 0;
	} else {
		*t = (pend){1, rundown, mid, k};
	}
	return 1;
}

static int cmp_u64pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return *x < *y ? -1 : *x > *y;
}

static int add_map(nt_mlines *ml, const nt_event *ev, int rundown)
{
	/* MethodID u64, ReJITID u64, MethodExtent u8, CountOfMapEntries u16,
	 * ILOffsets u32[n], NativeOffsets u32[n] */
	if (ev->payload_len < 19)
		return 0;
	const uint8_t *p = ev->payload;
	uint64_t mid = nt_le64(p);
	uint32_t n = (uint32_t)p[17] | (uint32_t)p[18] << 8;
	if (n == 0 || n > MAX_MAP_ENTRIES || ev->payload_len - 19 < (size_t)n * 8)
		return 0;
	uint64_t *tmp = malloc((size_t)n * sizeof(uint64_t));
	ilmap m = {n, malloc((size_t)n * 4), malloc((size_t)n * 4), 0, 0};
	if (!tmp || !m.native || !m.il ||
	    nt_grow((void **)&ml->maps, &ml->mapcap, ml->nmaps + 1, sizeof(ilmap))) {
		free(tmp);
		free(m.native);
		free(m.il);
		return NT_ENOMEM;
	}
	/* sort by native offset, keeping the event's order for equal ones (the index) */
	for (uint32_t i = 0; i < n; i++)
		tmp[i] = (uint64_t)nt_le32(p + 19 + (size_t)n * 4 + (size_t)i * 4) << 32 | i;
	qsort(tmp, n, sizeof(uint64_t), cmp_u64pair);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = (uint32_t)tmp[i];
		m.native[i] = (uint32_t)(tmp[i] >> 32);
		m.il[i] = nt_le32(p + 19 + (size_t)j * 4);
		if (m.native[i] > m.max_native)
			m.max_native = m.native[i];
		if (m.il[i] < IL_EPILOG && m.il[i] > m.max_il)
			m.max_il = m.il[i];
	}
	free(tmp);
	size_t mi = ml->nmaps++;
	ml->maps[mi] = m;
	pend *t = thread_pend(ml, ev->thread_id);
	if (!t)
		return NT_ENOMEM;
	if (t->kind == 1 && t->method_id == mid && t->rundown == rundown) {
		pair(ml, t->idx, mi);
		t->kind = 0;
	} else {
		*t = (pend){2, rundown, mid, mi};
	}
	return 1;
}

int nt_mlines_add_event(nt_mlines *ml, const nt_event *ev)
{
	const nt_metadata *m = ev->meta;
	int who = nt_clr_provider(m); /* 0 also when there is no metadata */
	if (!who)
		return 0;
	int runtime = who == NT_CLR_RUNTIME, rundown = who == NT_CLR_RUNDOWN;
	switch (m->event_id) {
	case 143: /* MethodLoadVerbose / rundown MethodDCStartVerbose */
		return add_method(ml, ev, rundown, 1);
	case 144: /* MethodUnloadVerbose / rundown MethodDCEndVerbose */
		return add_method(ml, ev, rundown, rundown);
	case 190:
		return runtime ? add_map(ml, ev, 0) : 0;
	case 149: /* MethodILToNativeMapDCStart */
	case 150: /* MethodILToNativeMapDCEnd */
		return rundown ? add_map(ml, ev, 1) : 0;
	case 152: /* ModuleLoad */
		return runtime ? add_module(ml, ev, m->version) : 0;
	case 153: /* ModuleUnload / rundown ModuleDCStart */
	case 154: /* rundown ModuleDCEnd */
		return runtime && m->event_id == 154 ? 0 : add_module(ml, ev, m->version);
	default:
		return 0;
	}
}

uint64_t nt_mlines_il_maps(const nt_mlines *ml) { return ml->nmaps; }

uint64_t nt_mlines_code_versions(const nt_mlines *ml) { return ml->ncode; }

/* ------------------------------------------------------------------ PDB search */

static int set_msg(char **dst, const char *fmt, ...) NT_PRINTF(2, 3);
static int set_msg(char **dst, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	free(*dst);
	*dst = nt_strdup(buf);
	return *dst ? 0 : -1;
}

/* Reads a whole file (at most NT_PDB_MAX_FILE bytes); 0, or errno (ENOENT...). */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno ? errno : ENOENT;
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (;;) {
		if (n == cap) {
			if (cap >= NT_PDB_MAX_FILE) {
				rc = EFBIG;
				break;
			}
			size_t nc = cap ? cap * 2 : 65536;
			uint8_t *nb = realloc(buf, nc);
			if (!nb) {
				rc = ENOMEM;
				break;
			}
			buf = nb;
			cap = nc;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				rc = EIO;
			break;
		}
	}
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*len = n;
	return 0;
}

typedef struct search {
	int mismatch, bad, tried;
	char *why;           /* the most telling failure so far */
} search;

/* Tries one candidate file; returns 1 when m now has its PDB, 0 to go on, < 0 no memory. */
static int try_file(mmod *m, const char *path, search *s)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int e = read_file(path, &buf, &len);
	if (e == ENOMEM)
		return -1;
	if (e)
		return 0;
	s->tried++;
	nt_error err;
	nt_error_clear(&err);
	nt_pdb *pdb = NULL;
	int kind = nt_pdb_sniff(buf, len), rc = 0;
	if (kind == 1) {
		nt_pe_debug d;
		if (nt_pe_read_debug(buf, len, &d, &err) == 0) {
			if (!m->has_sig && d.has_codeview) { /* V1 events: the assembly's word */
				memcpy(m->sig, d.guid, 16);
				m->has_sig = 1;
				guid_text(d.guid, m->sig_text);
			}
			if (d.embedded)
				rc = nt_pdb_parse(&pdb, d.embedded, d.embedded_len, &err);
			else
				rc = -2; /* an assembly without an embedded PDB: not a failure */
			nt_pe_debug_free(&d);
		} else {
			rc = err.code;
		}
	} else if (kind == 2) {
		rc = nt_pdb_parse(&pdb, buf, len, &err);
	} else {
		rc = NT_EFORMAT;
		err.offset = 0;
		snprintf(err.msg, sizeof err.msg, "neither a portable PDB nor a PE file");
	}
	free(buf);
	if (rc == NT_ENOMEM)
		return -1;
	if (rc == -2)
		return 0;
	if (rc) {
		s->bad++;
		if (!s->mismatch && set_msg(&s->why, "%s: at byte %" PRIu64 " (0x%" PRIx64 "): %s", path,
					    err.offset, err.offset, err.msg))
			return -1;
		return 0;
	}
	if (m->has_sig && memcmp(nt_pdb_id(pdb), m->sig, 16) != 0) {
		char t[40];
		guid_text(nt_pdb_id(pdb), t);
		s->mismatch++;
		nt_pdb_free(pdb);
		return set_msg(&s->why, "%s: PDB id %s, the trace's %s", path, t, m->sig_text) ? -1 : 0;
	}
	m->pdb = pdb;
	m->pdb_path = nt_strdup(path);
	return m->pdb_path ? 1 : -1;
}

static char *join(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = malloc(la + lb + lc + 1);
	if (s) {
		memcpy(s, a, la);
		memcpy(s + la, b, lb);
		memcpy(s + la + lb, c, lc + 1);
	}
	return s;
}

/* Finds m's PDB: in each search directory by the PDB's and the assembly's file names,
 * then at the recorded build path, beside the assembly, and embedded in the assembly. */
static int load_pdb(nt_mlines *ml, mmod *m)
{
	search s = {0, 0, 0, NULL};
	char *pdbname = NULL, *asmpdb = NULL;
	const char *asmname = nt_path_base(m->il_path);
	pdbname = nt_strdup(m->build_path[0] ? nt_path_base(m->build_path) : "");
	/* the assembly's path with its extension replaced by .pdb */
	const char *dot = strrchr(asmname, '.');
	size_t stem = dot ? (size_t)(dot - m->il_path) : strlen(m->il_path);
	if ((asmpdb = malloc(stem + 5))) {
		memcpy(asmpdb, m->il_path, stem);
		memcpy(asmpdb + stem, ".pdb", 5);
	}
	int rc = 0;
	if (!pdbname || !asmpdb)
		rc = -1;
	const char *local[3] = {m->build_path, asmpdb, m->il_path};
	for (size_t d = 0; rc == 0 && d < ml->ndirs + 3; d++) {
		for (int j = 0; rc == 0 && j < 3; j++) {
			char *path;
			if (d < ml->ndirs) {
				const char *fn = j == 0 ? pdbname : j == 1 ? nt_path_base(asmpdb) : asmname;
				if (!fn[0] || (j == 1 && strcmp(fn, pdbname) == 0))
					continue;
				path = join(ml->dirs[d], "/", fn);
			} else {
				if (j != 0)
					break;
				const char *lp = local[d - ml->ndirs];
				if (!lp[0] || lp[0] != '/')
					continue; /* Windows or relative paths are not local files */
				path = join(ml->root, "", lp);
			}
			if (!path) {
				rc = -1;
				break;
			}
			rc = try_file(m, path, &s);
			free(path);
		}
	}
	free(pdbname);
	free(asmpdb);
	if (rc < 0) {
		free(s.why);
		return -1;
	}
	if (rc == 1) {
		m->state = NT_MANAGED_LINE;
		free(s.why);
		return set_msg(&m->message, "%s", "");
	}
	m->state = s.mismatch ? NT_MANAGED_PDB_MISMATCH : s.bad ? NT_MANAGED_BAD_PDB : NT_MANAGED_NO_PDB;
	if (s.why) {
		m->message = s.why;
		return 0;
	}
	return set_msg(&m->message, "no PDB for %s found (%s%s)", m->il_path,
		       ml->ndirs ? "symbol path, " : "", "build path, beside the assembly, embedded");
}

/* ------------------------------------------------------------------ lookup */

static int cmp_code(const void *a, const void *b)
{
	const mcode *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void seal(nt_mlines *ml)
{
	if (ml->sealed)
		return;
	if (ml->ncode)
		qsort(ml->code, ml->ncode, sizeof(mcode), cmp_code);
	nt_idmap_free(&ml->code_ix); /* indexes moved; no more events come once resolving */
	ml->sealed = 1;
}

static mcode *find_code(nt_mlines *ml, uint64_t ip)
{
	size_t lo;
	NT_PARTITION(lo, ml->ncode, mid, ml->code[mid].start <= ip);
	/* ranges of different code versions do not overlap; a few steps back are enough for
	 * a reused code heap */
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 8; steps++)
		if (ip < ml->code[i].end)
			return &ml->code[i];
	return NULL;
}

/* The IL offset of native offset off in map m. */
static uint32_t il_offset(const ilmap *m, uint32_t off)
{
	size_t lo;
	NT_PARTITION(lo, m->n, mid, m->native[mid] <= off);
	for (size_t i = lo; i-- > 0;) {
		uint32_t il = m->il[i];
		if (il == IL_PROLOG)
			return 0;
		if (il == IL_EPILOG)
			return m->max_il;
		if (il != IL_NONE)
			return il;
	}
	return 0;
}

static mframe *new_frame(nt_mlines *ml)
{
	size_t c = ml->nframes / FRAME_CHUNK, i = ml->nframes % FRAME_CHUNK;
	if (i == 0) {
		if (nt_grow((void **)&ml->chunks, &ml->chunkcap, c + 1, sizeof(mframe *)))
			return NULL;
		if (!(ml->chunks[c] = calloc(FRAME_CHUNK, sizeof(mframe))))
			return NULL;
	}
	ml->nframes++;
	return &ml->chunks[c][i];
}

const nt_native_frame *nt_mlines_resolve(nt_mlines *ml, uint64_t ip, int ret, const char *name,
					 int *status)
{
	int st_dummy;
	if (!status)
		status = &st_dummy;
	seal(ml);
	uint64_t key = ip << 1 | (ret ? 1 : 0);
	size_t k;
	if (nt_idmap_get(&ml->frame_ix, key, &k)) {
		mframe *f = &ml->chunks[k / FRAME_CHUNK][k % FRAME_CHUNK];
		*status = f->status;
		return f->status == NT_MANAGED_LINE ? &f->f : NULL;
	}
	mframe *f = new_frame(ml);
	if (!f || nt_idmap_put(&ml->frame_ix, key, ml->nframes - 1)) {
		*status = NT_MANAGED_NO_METHOD;
		return NULL; /* out of memory: no line, as good as it gets */
	}
	f->status = NT_MANAGED_NO_METHOD;
	mcode *c = find_code(ml, ip);
	mmod *m = NULL;
	if (c && nt_idmap_get(&ml->mod_ix, c->module_id, &k))
		m = &ml->mod[k];
	if (!c || (c->token >> 24) != 0x06 || (c->token & 0xFFFFFF) == 0)
		goto done;
	if (m) {
		m->lookups++;
		if (m->state == NT_MANAGED_UNUSED && load_pdb(ml, m) < 0)
			goto done;
		f->pdb_read = m->state == NT_MANAGED_LINE;
	}
	if (c->map < 0) { /* ReadyToRun code, IL stubs, or the keyword was off */
		f->status = NT_MANAGED_NO_IL_MAP;
		goto done;
	}
	if (!m) {
		f->status = NT_MANAGED_NO_PDB;
		goto done;
	}
	if (m->state != NT_MANAGED_LINE) {
		f->status = m->state;
		goto done;
	}
	uint32_t off = (uint32_t)(ip - c->start);
	if (ret && off > 0)
		off--;
	uint32_t il = il_offset(&ml->maps[c->map], off);
	nt_pdb_line line;
	const char *file = NULL;
	nt_error err;
	nt_error_clear(&err);
	int rc = nt_pdb_lookup(m->pdb, c->token & 0xFFFFFF, il, &line, &file, &err);
	if (rc < 0) {
		f->status = NT_MANAGED_BAD_PDB;
		if (!m->message || !m->message[0])
			set_msg(&m->message, "%s: at byte %" PRIu64 " (0x%" PRIx64 "): %s", m->pdb_path,
				err.offset, err.offset, err.msg);
		goto done;
	}
	if (rc == 0) {
		f->status = NT_MANAGED_NO_SEQUENCE_POINT;
		goto done;
	}
	const char *bang = strchr(name, '!');
	f->f.name = name;
	f->f.function = bang ? bang + 1 : name;
	f->f.file = file;
	f->f.line = line.line;
	f->f.column = line.column;
	f->f.inline_depth = 0;
	f->f.module = m->name;
	f->f.module_path = m->il_path;
	f->f.file_offset = off;
	f->f.elf_address = UINT64_MAX;
	f->status = NT_MANAGED_LINE;
	m->lines++;
done:
	*status = f->status;
	return f->status == NT_MANAGED_LINE ? &f->f : NULL;
}

size_t nt_mlines_module_count(const nt_mlines *ml) { return ml->nmod; }

int nt_mlines_module_at(const nt_mlines *ml, size_t i, nt_managed_module *out)
{
	if (i >= ml->nmod)
		return 0;
	const mmod *m = &ml->mod[i];
	out->path = m->il_path;
	out->name = m->name;
	out->pdb_build_path = m->build_path ? m->build_path : "";
	out->pdb_id = m->sig_text;
	out->pdb_path = m->pdb_path ? m->pdb_path : "";
	out->status = m->state;
	out->message = m->message ? m->message : "";
	out->lookups = m->lookups;
	out->lines = m->lines;
	return 1;
}

const char *nt_managed_status_name(int status, int is_module)
{
	switch (status) {
	case NT_MANAGED_LINE: return is_module ? "ok" : "line";
	case NT_MANAGED_NO_METHOD: return "no method";
	case NT_MANAGED_NO_IL_MAP: return "no IL map";
	case NT_MANAGED_NO_PDB: return "PDB not found";
	case NT_MANAGED_PDB_MISMATCH: return "PDB mismatch";
	case NT_MANAGED_BAD_PDB: return "bad PDB";
	case NT_MANAGED_NO_SEQUENCE_POINT: return "no sequence point";
	case NT_MANAGED_UNUSED: return "unused";
	default: return "?";
	}
}

int nt_mlines_cached_status(const nt_mlines *ml, uint64_t ip, int ret, int *pdb_read)
{
	size_t k;
	if (!nt_idmap_get(&ml->frame_ix, ip << 1 | (ret ? 1 : 0), &k))
		return -1;
	const mframe *f = &ml->chunks[k / FRAME_CHUNK][k % FRAME_CHUNK];
	if (pdb_read)
		*pdb_read = f->pdb_read;
	return f->status;
}

/* ------------------------------------------------------------------ profile summaries */

typedef struct count_ctx {
	nt_profile *p;
	size_t session;
	nt_managed_lines *out;
} count_ctx;

static int count_group(void *ctx, const nt_sample_group *g)
{
	count_ctx *c = ctx;
	if (c->session != SIZE_MAX && g->session != c->session)
		return 0;
	nt_mlines *ml = nt_profile_mlines(c->p, g->session);
	if (!ml)
		return 0;
	int leaf_done = 0, pdb_done = 0;
	for (uint32_t j = 0; j < g->nips; j++) {
		int pdb = 0;
		int st = nt_mlines_cached_status(ml, g->ips[j], j > 0, &pdb);
		if (st < 0 || st >= NT_MANAGED_NSTATUS)
			continue;
		c->out->frames[st] += g->samples;
		if (!leaf_done) {
			c->out->leaf[st] += g->samples;
			leaf_done = 1;
		}
		if (pdb && !pdb_done) {
			c->out->pdb_leaf[st] += g->samples;
			pdb_done = 1;
		}
	}
	return 0;
}

int nt_profile_managed_lines(nt_profile *p, size_t session, nt_managed_lines *out, nt_error *err)
{
	nt_error_clear(err);
	memset(out, 0, sizeof *out);
	size_t ns = nt_profile_session_count(p);
	if (session != SIZE_MAX && session >= ns)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no session %zu", session);
	int rc = nt_profile_finish(p, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < ns; i++) {
		if (session != SIZE_MAX && i != session)
			continue;
		nt_mlines *ml = nt_profile_mlines(p, i);
		if (ml) {
			out->il_maps += ml->nmaps;
			out->code_versions += ml->ncode;
		}
	}
	count_ctx c = {p, session, out};
	return nt_profile_foreach(p, count_group, &c);
}

size_t nt_profile_managed_module_count(nt_profile *p, size_t session)
{
	nt_mlines *ml = nt_profile_mlines(p, session);
	return ml ? ml->nmod : 0;
}

int nt_profile_managed_module_at(nt_profile *p, size_t session, size_t i, nt_managed_module *out)
{
	nt_mlines *ml = nt_profile_mlines(p, session);
	return ml ? nt_mlines_module_at(ml, i, out) : 0;
}
