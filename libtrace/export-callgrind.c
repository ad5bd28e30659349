/* SPDX-License-Identifier: MIT */
/* export-callgrind.c - callgrind profile format (valgrind.org/docs/manual/cl-format.html),
 * for KCachegrind/QCachegrind and callgrind_annotate: per function its self cost, and per
 * caller->callee pair the inclusive cost of the calls, from sampled stacks.
 *
 * A frame "Module!name" is function "name" of object "Module" (ob=/cob=); other frames
 * belong to object "???" (or to their module: a native frame without a symbol). Native
 * frames of a profile carry their DWARF position (nt_xstack_native): the self cost of a
 * leaf is at its sampled line, a call at the caller's line of the call, so KCachegrind
 * annotates the sources; other frames are at line 0 of file "???".
 * Costs are 64-bit integers: samples, or nanoseconds for a time unit (us and ms weights
 * are converted, so nothing is lost to rounding), each stack's weight rounded once and
 * then added up, so the totals are exact sums of the written weights. A call (caller,
 * line, callee) is counted once per stack even when recursion repeats it (as pprof does
 * per pair), so it never weighs more than the stacks through it; "calls" is the number
 * of those stacks (the format wants a count; samples have no calls). Functions, objects
 * and files are named once and then referred to by number (the format's compression),
 * in first-seen order: the output is deterministic.
 * Not here: reading inputs (export-stacks.c). */
#include "export.h"

#include <inttypes.h>
#include <math.h>

typedef struct cg_func {
	const char *name, *obj; /* borrowed from the source: valid until nt_stacks_free */
	size_t name_n, obj_n;
	uint64_t hash;
	uint32_t obj_id;        /* 1-based object number ("???" for frames without one) */
	uint32_t file_id;       /* 1-based file of its first position ("???": 1) */
	uint32_t first;         /* index + 1 of its first entry (after sorting) */
} cg_func;

/* A cost at a position of a function: its self cost (to == CG_SELF) or the inclusive cost
 * of its calls to function `to` from that line. */
#define CG_SELF UINT32_MAX
typedef struct cg_entry {
	uint32_t func, file, line, to;
	uint64_t cost, calls;
	uint64_t stamp;         /* last stack that counted it (recursion) */
} cg_entry;

/* A name table with open addressing (objects and files): borrowed strings, 1-based ids. */
typedef struct cg_names {
	const char **s;
	size_t *n;
	uint64_t *hash;
	size_t count, cap, ncap, hcap;
	uint32_t *ht;
	size_t htcap;
} cg_names;

typedef struct cg_ctx {
	cg_func *funcs;
	size_t nfuncs, fcap;
	uint32_t *fht;          /* function index + 1, by name */
	size_t fhtcap;
	cg_entry *ents;
	size_t nents, ecap;
	uint32_t *eht;          /* entry index + 1, by (func, file, line, to) */
	size_t ehtcap;
	cg_names objs, files;
	uint32_t *ids;          /* function indexes of the current stack */
	uint32_t *pos_file, *pos_line; /* and each frame's position */
	size_t idcap, pfcap, plcap;
	double scale;           /* source unit -> written unit */
	uint64_t total, stack_no;
	nt_error *err;
} cg_ctx;

static uint64_t entry_hash(uint32_t func, uint32_t file, uint32_t line, uint32_t to)
{
	return nt_mix64(((uint64_t)func << 32 | file) ^ nt_mix64((uint64_t)line << 32 | to));
}

/* Room in an index table (hash.c's slots) for one more of n entries, each hashed by
 * hash_of; -1 when out of memory. */
static int ht_room(uint32_t **ht, size_t *cap, size_t n, nt_slot_hash_fn hash_of,
		   const void *ctx)
{
	return (n + 1) * 2 <= *cap ? 0 : nt_slots_regrow(ht, cap, 1024, n, hash_of, ctx);
}

static int func_hash_of(const void *c, size_t i, uint64_t *h)
{
	*h = ((const cg_ctx *)c)->funcs[i].hash;
	return 1;
}

static int entry_hash_of(const void *c, size_t i, uint64_t *h)
{
	const cg_entry *e = &((const cg_ctx *)c)->ents[i];
	*h = entry_hash(e->func, e->file, e->line, e->to);
	return 1;
}

static int name_hash_of(const void *c, size_t i, uint64_t *h)
{
	*h = ((const cg_names *)c)->hash[i];
	return 1;
}

/* The 1-based id of a name, added when new; 0 when out of memory. */
static uint32_t name_id(cg_names *t, const char *s, size_t n)
{
	uint64_t h = nt_hash_bytes(s, n);
	if (ht_room(&t->ht, &t->htcap, t->count, name_hash_of, t))
		return 0;
	size_t k = (size_t)h & (t->htcap - 1);
	while (t->ht[k]) {
		size_t i = t->ht[k] - 1;
		if (t->hash[i] == h && t->n[i] == n && memcmp(t->s[i], s, n) == 0)
			return (uint32_t)i + 1;
		k = (k + 1) & (t->htcap - 1);
	}
	if (t->count >= UINT32_MAX - 1 ||
	    nt_grow((void **)&t->s, &t->cap, t->count + 1, sizeof(char *)) ||
	    nt_grow((void **)&t->n, &t->ncap, t->count + 1, sizeof(size_t)) ||
	    nt_grow((void **)&t->hash, &t->hcap, t->count + 1, sizeof(uint64_t)))
		return 0;
	t->s[t->count] = s;
	t->n[t->count] = n;
	t->hash[t->count] = h;
	t->ht[k] = (uint32_t)t->count + 1;
	return (uint32_t)++t->count;
}

static void names_free(cg_names *t)
{
	free(t->s);
	free(t->n);
	free(t->hash);
	free(t->ht);
}

static int64_t func_index(cg_ctx *c, const nt_xframe *f, const nt_native_frame *nf,
			  uint32_t file)
{
	uint64_t h = nt_hash_bytes(f->s, f->n);
	if (ht_room(&c->fht, &c->fhtcap, c->nfuncs, func_hash_of, c))
		return -1;
	size_t k = (size_t)h & (c->fhtcap - 1);
	while (c->fht[k]) {
		const cg_func *e = &c->funcs[c->fht[k] - 1];
		const char *es = e->obj && e->obj + e->obj_n + 1 == e->name ? e->obj : e->name;
		size_t en = (size_t)(e->name + e->name_n - es);
		if (e->hash == h && en == f->n && memcmp(es, f->s, f->n) == 0)
			return c->fht[k] - 1;
		k = (k + 1) & (c->fhtcap - 1);
	}
	if (c->nfuncs >= UINT32_MAX - 1 ||
	    nt_grow((void **)&c->funcs, &c->fcap, c->nfuncs + 1, sizeof(cg_func)))
		return -1;
	cg_func *fn = &c->funcs[c->nfuncs];
	memset(fn, 0, sizeof *fn);
	fn->hash = h;
	fn->file_id = file;
	/* "Module!name": the object is what precedes the first '!', if anything does; a
	 * native frame without a function ("libfoo.so+0x1a2b") belongs to its module */
	const char *bang = f->n ? memchr(f->s, '!', f->n) : NULL;
	if (bang && bang > f->s && bang + 1 < f->s + f->n &&
	    !(f->n == 3 && memcmp(f->s, "?!?", 3) == 0)) { /* "?!?": nothing known */
		fn->obj = f->s;
		fn->obj_n = (size_t)(bang - f->s);
		fn->name = bang + 1;
		fn->name_n = f->n - fn->obj_n - 1;
	} else {
		fn->name = f->s;
		fn->name_n = f->n;
		if (nf && nf->module) {
			fn->obj = nf->module;
			fn->obj_n = strlen(nf->module);
		}
	}
	fn->obj_id = fn->obj ? name_id(&c->objs, fn->obj, fn->obj_n)
			     : name_id(&c->objs, "???", 3); /* as callgrind names the unknown */
	if (!fn->obj_id)
		return -1;
	c->fht[k] = (uint32_t)c->nfuncs + 1;
	return (int64_t)c->nfuncs++;
}

/* Adds w to the entry (func, file, line, to), once per stack (recursion repeats pairs). */
static int add_entry(cg_ctx *c, uint32_t func, uint32_t file, uint32_t line, uint32_t to,
		     uint64_t w)
{
	if (ht_room(&c->eht, &c->ehtcap, c->nents, entry_hash_of, c))
		return -1;
	size_t k = (size_t)entry_hash(func, file, line, to) & (c->ehtcap - 1);
	while (c->eht[k]) {
		cg_entry *e = &c->ents[c->eht[k] - 1];
		if (e->func == func && e->file == file && e->line == line && e->to == to) {
			if (e->stamp != c->stack_no) {
				e->stamp = c->stack_no;
				e->cost += w;
				e->calls++;
			}
			return 0;
		}
		k = (k + 1) & (c->ehtcap - 1);
	}
	if (c->nents >= UINT32_MAX - 1 ||
	    nt_grow((void **)&c->ents, &c->ecap, c->nents + 1, sizeof(cg_entry)))
		return -1;
	c->ents[c->nents] = (cg_entry){func, file, line, to, w, 1, c->stack_no};
	c->eht[k] = (uint32_t)c->nents + 1;
	c->nents++;
	return 0;
}

static int collect(void *ctx, const nt_xstack *st)
{
	cg_ctx *c = ctx;
	double v = st->value * c->scale;
	uint64_t w = v > 0 && v < 1.8e19 ? (uint64_t)llround(v) : 0;
	if (st->depth == 0 || w == 0)
		return 0;
	c->stack_no++;
	if (nt_grow((void **)&c->ids, &c->idcap, st->depth, sizeof(uint32_t)) ||
	    nt_grow((void **)&c->pos_file, &c->pfcap, st->depth, sizeof(uint32_t)) ||
	    nt_grow((void **)&c->pos_line, &c->plcap, st->depth, sizeof(uint32_t)))
		goto nomem;
	for (size_t i = 0; i < st->depth; i++) {
		/* a native frame's source position: the sampled line for the leaf, the line of
		 * the call for its callers (resolved at return address - 1, or the "inlined at"
		 * line of an inline chain) */
		const nt_native_frame *nf = nt_xstack_native(st, i);
		uint32_t file = 1, line = 0;
		if (nf && nf->file && nf->line) {
			if (!(file = name_id(&c->files, nf->file, strlen(nf->file))))
				goto nomem;
			line = nf->line;
		}
		int64_t f = func_index(c, &st->frames[i], nf, file);
		if (f < 0)
			goto nomem;
		c->ids[i] = (uint32_t)f;
		c->pos_file[i] = file;
		c->pos_line[i] = line;
	}
	size_t leaf = st->depth - 1;
	if (add_entry(c, c->ids[leaf], c->pos_file[leaf], c->pos_line[leaf], CG_SELF, w))
		goto nomem;
	for (size_t i = 0; i < leaf; i++)
		if (add_entry(c, c->ids[i], c->pos_file[i], c->pos_line[i], c->ids[i + 1], w))
			goto nomem;
	c->total += w;
	return 0;
nomem:
	return nt_fail(c->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing a callgrind profile");
}

/* "(id) name" the first time a name is written, "(id)" after (the format's compression).
 * Names cannot hold a newline: one would end the line; they are replaced by spaces. */
static void put_name(nt_out *o, const char *key, uint32_t id, const char *s, size_t n,
		     uint8_t *seen)
{
	nt_out_printf(o, "%s(%" PRIu32 ")", key, id);
	if (!*seen) {
		*seen = 1;
		nt_out_str(o, " ");
		for (size_t i = 0; i < n; i++) {
			char ch = s[i] == '\n' || s[i] == '\r' ? ' ' : s[i];
			nt_out_put(o, &ch, 1);
		}
	}
	nt_out_str(o, "\n");
}

static int entry_cmp(const void *a, const void *b)
{
	const cg_entry *x = a, *y = b;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->to == y->to)
		return 0;
	if (x->to == CG_SELF || y->to == CG_SELF) /* the self cost of a line first */
		return x->to == CG_SELF ? -1 : 1;
	return x->to < y->to ? -1 : 1;
}

int nt_callgrind_write(nt_stacks *s, const nt_sink *sink, nt_error *err)
{
	nt_error_clear(err);
	if (!s || !sink)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no stacks or no sink");
	cg_ctx c;
	memset(&c, 0, sizeof c);
	c.err = err;
	int unit = nt_stacks_unit(s);
	const char *event = unit == NT_UNIT_SAMPLES ? "Samples" : "Nanoseconds";
	c.scale = unit == NT_UNIT_US ? 1e3 : unit == NT_UNIT_MS ? 1e6 : 1;
	uint8_t *fseen = NULL, *oseen = NULL, *flseen = NULL;
	nt_out o;
	nt_out_init(&o, sink);
	int rc = 0;
	if (!name_id(&c.files, "???", 3)) /* file 1: no source position */
		goto nomem;
	if ((rc = nt_stacks_foreach(s, collect, &c, err)) != 0)
		goto done;
	/* the entries grouped by function, then by position (the hash order is no order) */
	if (c.nents > 1)
		qsort(c.ents, c.nents, sizeof *c.ents, entry_cmp);
	for (size_t i = c.nents; i-- > 0;)
		c.funcs[c.ents[i].func].first = (uint32_t)i + 1;
	fseen = calloc(c.nfuncs + 1, 1);
	oseen = calloc(c.objs.count + 1, 1);
	flseen = calloc(c.files.count + 1, 1);
	if (!fseen || !oseen || !flseen)
		goto nomem;
	const char *name = nt_stacks_name(s);
	nt_out_str(&o, "# callgrind format\nversion: 1\ncreator: libnettrace " PACKAGE_VERSION
		   "\ncmd: ");
	for (const char *p = name; *p; p++)
		nt_out_put(&o, *p == '\n' ? " " : p, 1);
	nt_out_printf(&o, "\npositions: line\nevents: %s\nsummary: %" PRIu64 "\n\n", event,
		      c.total);
	uint32_t cur_obj = 0;
	for (size_t i = 0; i < c.nfuncs && o.rc == 0; i++) {
		const cg_func *f = &c.funcs[i];
		if (f->obj_id != cur_obj) {
			cur_obj = f->obj_id;
			put_name(&o, "ob=", cur_obj, c.objs.s[cur_obj - 1], c.objs.n[cur_obj - 1],
				 &oseen[cur_obj]);
		}
		/* fl= before every fn= (the file the function is in), fi= for positions in
		 * other files (code inlined without an inline record) */
		put_name(&o, "fl=", f->file_id, c.files.s[f->file_id - 1],
			 c.files.n[f->file_id - 1], &flseen[f->file_id]);
		put_name(&o, "fn=", (uint32_t)i + 1, f->name, f->name_n, &fseen[i]);
		uint32_t cur_file = f->file_id;
		for (size_t k = f->first; k && k <= c.nents && c.ents[k - 1].func == i; k++) {
			const cg_entry *e = &c.ents[k - 1];
			if (e->file != cur_file) {
				cur_file = e->file;
				put_name(&o, "fi=", cur_file, c.files.s[cur_file - 1],
					 c.files.n[cur_file - 1], &flseen[cur_file]);
			}
			if (e->to == CG_SELF) {
				nt_out_printf(&o, "%" PRIu32 " %" PRIu64 "\n", e->line, e->cost);
				continue;
			}
			const cg_func *t = &c.funcs[e->to];
			if (t->obj_id != cur_obj)
				put_name(&o, "cob=", t->obj_id, c.objs.s[t->obj_id - 1],
					 c.objs.n[t->obj_id - 1], &oseen[t->obj_id]);
			if (t->file_id != cur_file) /* else the current file, as the format assumes */
				put_name(&o, "cfi=", t->file_id, c.files.s[t->file_id - 1],
					 c.files.n[t->file_id - 1], &flseen[t->file_id]);
			put_name(&o, "cfn=", e->to + 1, t->name, t->name_n, &fseen[e->to]);
			nt_out_printf(&o, "calls=%" PRIu64 " 0\n%" PRIu32 " %" PRIu64 "\n", e->calls,
				      e->line, e->cost);
		}
		nt_out_str(&o, "\n");
	}
	goto done;
nomem:
	rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing a callgrind profile");
done:
	{
		int orc = nt_out_end(&o);
		if (rc == 0 && orc)
			rc = nt_fail(err, orc, NT_NO_OFFSET, orc == NT_ENOMEM ?
				     "out of memory writing a callgrind profile" :
				     "cannot write a callgrind profile");
	}
	free(fseen);
	free(oseen);
	free(flseen);
	free(c.funcs);
	free(c.fht);
	free(c.ents);
	free(c.eht);
	names_free(&c.objs);
	names_free(&c.files);
	free(c.ids);
	free(c.pos_file);
	free(c.pos_line);
	return rc;
}
