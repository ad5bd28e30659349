/* SPDX-License-Identifier: MIT */
/* sym-native.c - native symbols, the resolver: IP -> "module!function" frames, with the
 * DWARF inline chain (each inlined function a frame of its own, innermost first) and
 * file:line, through the module map the sampler records (ModuleMap events,
 * doc/format/sampler-events.md). The layout of the four sym-* files and the rule for when
 * one DWARF reader defers to the other are in sym-native.h.
 *
 * The answers are those of "eu-addr2line -i -f", "addr2line -i -f" and llvm-symbolizer for
 * the same address (tests/unit/test-dwarf.c compares them): the function is the linkage
 * name, else the name, following DW_AT_abstract_origin / DW_AT_specification; the
 * innermost frame's file:line is the last line-table row at or below the address; each
 * outer frame's is the DW_AT_call_file/line/column of the inlined instance it contains.
 *
 * Sections, in order: arena and interned strings; intervals (scope and unit ranges
 * flattened into address segments); modules; resolving and the cache; the public API.
 * Not here: managed symbols (symtab.c); which IPs are return addresses (profile.c). */
#include "sym-native.h"

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
	uint64_t h = nt_fnv1a(NT_FNV1A_BASIS, s, len);
	return h ^ (h >> 29);
}

/* The interned copy of s[0..len) (valid until nt_native_free()), NULL when out of memory. */
static const char *intern_n(nt_native *nn, const char *s, size_t len)
{
	return nt_strpool_intern(&nn->strs, s, len);
}

const char *nn_intern(nt_native *nn, const char *s)
{
	return intern_n(nn, s, strlen(s));
}

/* Interns s unless NULL; sets *oom on allocation failure. */
const char *nn_intern_opt(nt_native *nn, const char *s, int *oom)
{
	if (!s)
		return NULL;
	const char *r = nn_intern(nn, s);
	if (!r)
		*oom = 1;
	return r;
}

char *nn_xstrdup_printf(const char *fmt, ...)
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
int nn_flatten(nn_iv *iv, size_t n, nn_seg **out, size_t *nout)
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
	size_t lo;
	NT_PARTITION(lo, n, mid, s[mid].start <= addr);
	return lo ? s[lo - 1].id : NN_NONE;
}

int nn_push_iv(nt_native *nn, uint64_t lo, uint64_t hi, uint32_t depth, uint32_t id)
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
	size_t lo;
	NT_PARTITION(lo, nn->nmods, mid, nn->mods[nn->order[mid]].base <= ip);
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
	char *path = nn_xstrdup_printf("%s%s", nn->root, m->path);
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
		if (nn_object_load(nn, o))
			return -1;
	}
	free(path);
	m->obj = oi;
	nn_object *o = &nn->objs[oi];
	m->status = o->status;
	m->message = o->message ? o->message : "";
	if (m->status != NT_NATIVE_MISSING && m->status != NT_NATIVE_BAD_FILE && m->build_id[0] &&
	    strcmp(m->build_id, o->build_id) != 0) {
		m->own_message = nn_xstrdup_printf("build id mismatch: trace %s, file %s", m->build_id,
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
			if (cu->state == 0 && nn_cu_parse(nn, o, cu))
				return -1;
			if (cu->state == 1) {
				const nn_row *r = nn_row_find(cu, va);
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
		} else if (sc->parent == NN_NONE && (sym = nn_sym_find(o, va))) {
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
	if (*n == 0 && ((sym = nn_sym_find(o, va)) || file)) {
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
		if (usable && nn_file_to_vaddr(o, off, &va) && symbolize(nn, o, va, m->name, off, &n))
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
	nt_error_clear(err);
	nt_native_opts o;
	*out = NULL;
	int orc = nt_opts_load(&o, sizeof o, sizeof o, opts, "native options", err);
	if (orc)
		return orc;
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
		nn_object_free(&nn->objs[i]);
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
	nt_strpool_free(&nn->strs);
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
	nt_error_clear(err);
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
	m->name = nn_intern(nn, base_name(path));
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
	nt_error_clear(err);
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
	nt_error_clear(err);
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
