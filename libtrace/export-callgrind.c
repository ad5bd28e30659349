/* SPDX-License-Identifier: MIT */
/* export-callgrind.c - callgrind profile format (valgrind.org/docs/manual/cl-format.html),
 * for KCachegrind/QCachegrind and callgrind_annotate: per function its self cost, and per
 * caller->callee pair the inclusive cost of the calls, from sampled stacks.
 *
 * A frame "Module!name" is function "name" of object "Module" (ob=/cob=); other frames
 * belong to object "???". Stacks carry no source positions, so every cost line is at line 0 of
 * one file "???". Costs are 64-bit integers: samples, or nanoseconds for a time unit
 * (us and ms weights are converted, so nothing is lost to rounding), each stack's weight
 * rounded once and then added up, so the totals are exact sums of the written weights.
 * A pair is counted once per stack even when recursion repeats it (as pprof does), so a
 * caller's inclusive cost never exceeds the weight of the stacks through it; "calls" is
 * the number of stacks through the pair (the format wants a count; samples have no
 * calls). Functions, objects and names are written once and then referred to by number
 * (the format's name compression), in first-seen order: the output is deterministic.
 * Not here: reading inputs (export-stacks.c). */
#include "export.h"

#include <inttypes.h>
#include <math.h>

typedef struct cg_func {
	const char *name, *obj; /* borrowed from the source: valid until nt_stacks_free */
	size_t name_n, obj_n;
	uint64_t hash;
	uint32_t obj_id;        /* 1-based object number ("???" for frames without one) */
	uint64_t self;
	uint32_t first_edge;    /* index + 1 of its first outgoing pair (after grouping) */
} cg_func;

typedef struct cg_edge {
	uint32_t from, to;      /* function indexes */
	uint64_t cost, calls;
	uint64_t stamp;         /* last stack that counted it (recursion) */
} cg_edge;

typedef struct cg_ctx {
	cg_func *funcs;
	size_t nfuncs, fcap;
	uint32_t *fht;          /* function index + 1, by name */
	size_t fhtcap;
	cg_edge *edges;
	size_t nedges, ecap;
	uint32_t *eht;          /* edge index + 1, by (from, to) */
	size_t ehtcap;
	const char **objs;      /* distinct object names, 1-based ids */
	size_t *obj_n;
	size_t nobjs, ocap, oncap;
	uint32_t *ids;          /* function indexes of the current stack */
	size_t idcap;
	double scale;           /* source unit -> written unit */
	uint64_t total, stack_no;
	nt_error *err;
} cg_ctx;

static uint64_t edge_hash(uint32_t a, uint32_t b)
{
	uint64_t k = ((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ull;
	return k ^ (k >> 29);
}

/* Grows an open-addressing table of indexes + 1 to hold n + 1 entries at most half full;
 * hash_of gives each existing entry's hash. */
static int ht_grow(uint32_t **ht, size_t *cap, size_t n, cg_ctx *c,
		   uint64_t (*hash_of)(const cg_ctx *, size_t))
{
	if ((n + 1) * 2 <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 1024;
	uint32_t *nh = calloc(ncap, sizeof(uint32_t));
	if (!nh)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t k = (size_t)hash_of(c, i) & (ncap - 1);
		while (nh[k])
			k = (k + 1) & (ncap - 1);
		nh[k] = (uint32_t)i + 1;
	}
	free(*ht);
	*ht = nh;
	*cap = ncap;
	return 0;
}

static uint64_t func_hash_of(const cg_ctx *c, size_t i)
{
	return c->funcs[i].hash;
}

static uint64_t edge_hash_of(const cg_ctx *c, size_t i)
{
	return edge_hash(c->edges[i].from, c->edges[i].to);
}

/* The object id of a module name (1-based), added when new; 0 when out of memory. */
static uint32_t obj_id(cg_ctx *c, const char *s, size_t n)
{
	for (size_t i = c->nobjs; i-- > 0;) /* few objects; recent ones first */
		if (c->obj_n[i] == n && memcmp(c->objs[i], s, n) == 0)
			return (uint32_t)i + 1;
	if (nt_grow((void **)&c->objs, &c->ocap, c->nobjs + 1, sizeof(char *)) ||
	    nt_grow((void **)&c->obj_n, &c->oncap, c->nobjs + 1, sizeof(size_t)))
		return 0;
	c->objs[c->nobjs] = s;
	c->obj_n[c->nobjs] = n;
	return (uint32_t)++c->nobjs;
}

static int64_t func_index(cg_ctx *c, const nt_xframe *f)
{
	uint64_t h = nt_hash_bytes(f->s, f->n);
	if (ht_grow(&c->fht, &c->fhtcap, c->nfuncs, c, func_hash_of))
		return -1;
	size_t k = (size_t)h & (c->fhtcap - 1);
	while (c->fht[k]) {
		const cg_func *e = &c->funcs[c->fht[k] - 1];
		size_t en = (size_t)(e->name + e->name_n - (e->obj ? e->obj : e->name));
		if (e->hash == h && en == f->n &&
		    memcmp(e->obj ? e->obj : e->name, f->s, f->n) == 0)
			return c->fht[k] - 1;
		k = (k + 1) & (c->fhtcap - 1);
	}
	if (c->nfuncs >= UINT32_MAX - 1 ||
	    nt_grow((void **)&c->funcs, &c->fcap, c->nfuncs + 1, sizeof(cg_func)))
		return -1;
	cg_func *fn = &c->funcs[c->nfuncs];
	memset(fn, 0, sizeof *fn);
	fn->hash = h;
	/* "Module!name": the object is what precedes the first '!', if anything does */
	const char *bang = f->n ? memchr(f->s, '!', f->n) : NULL;
	if (bang && bang > f->s && bang + 1 < f->s + f->n) {
		fn->obj = f->s;
		fn->obj_n = (size_t)(bang - f->s);
		fn->name = bang + 1;
		fn->name_n = f->n - fn->obj_n - 1;
		if (!(fn->obj_id = obj_id(c, fn->obj, fn->obj_n)))
			return -1;
	} else {
		fn->name = f->s;
		fn->name_n = f->n;
		if (!(fn->obj_id = obj_id(c, "???", 3))) /* as callgrind names the unknown */
			return -1;
	}
	c->fht[k] = (uint32_t)c->nfuncs + 1;
	return (int64_t)c->nfuncs++;
}

static int add_edge(cg_ctx *c, uint32_t from, uint32_t to, uint64_t w)
{
	if (ht_grow(&c->eht, &c->ehtcap, c->nedges, c, edge_hash_of))
		return -1;
	size_t k = (size_t)edge_hash(from, to) & (c->ehtcap - 1);
	while (c->eht[k]) {
		cg_edge *e = &c->edges[c->eht[k] - 1];
		if (e->from == from && e->to == to) {
			if (e->stamp != c->stack_no) { /* once per stack */
				e->stamp = c->stack_no;
				e->cost += w;
				e->calls++;
			}
			return 0;
		}
		k = (k + 1) & (c->ehtcap - 1);
	}
	if (c->nedges >= UINT32_MAX - 1 ||
	    nt_grow((void **)&c->edges, &c->ecap, c->nedges + 1, sizeof(cg_edge)))
		return -1;
	c->edges[c->nedges] = (cg_edge){from, to, w, 1, c->stack_no};
	c->eht[k] = (uint32_t)c->nedges + 1;
	c->nedges++;
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
	if (nt_grow((void **)&c->ids, &c->idcap, st->depth, sizeof(uint32_t)))
		goto nomem;
	for (size_t i = 0; i < st->depth; i++) {
		int64_t f = func_index(c, &st->frames[i]);
		if (f < 0)
			goto nomem;
		c->ids[i] = (uint32_t)f;
	}
	c->funcs[c->ids[st->depth - 1]].self += w;
	for (size_t i = 0; i + 1 < st->depth; i++)
		if (add_edge(c, c->ids[i], c->ids[i + 1], w))
			goto nomem;
	c->total += w;
	return 0;
nomem:
	return nt_fail(c->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing a callgrind profile");
}

/* "(id) name" the first time a name is written, "(id)" after (the format's compression).
 * Names cannot hold a newline: one would end the line; they are replaced by spaces. */
static void put_name(nt_out *o, uint32_t id, const char *s, size_t n, uint8_t *seen)
{
	nt_out_printf(o, "(%" PRIu32 ")", id);
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

static int edge_cmp(const void *a, const void *b)
{
	const cg_edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

int nt_callgrind_write(nt_stacks *s, const nt_sink *sink, nt_error *err)
{
	if (!s || !sink)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no stacks or no sink");
	cg_ctx c;
	memset(&c, 0, sizeof c);
	c.err = err;
	int unit = nt_stacks_unit(s);
	const char *event = unit == NT_UNIT_SAMPLES ? "Samples" : "Nanoseconds";
	c.scale = unit == NT_UNIT_US ? 1e3 : unit == NT_UNIT_MS ? 1e6 : 1;
	uint8_t *fseen = NULL, *oseen = NULL;
	nt_out o;
	nt_out_init(&o, sink);
	int rc = nt_stacks_foreach(s, collect, &c, err);
	if (rc)
		goto done;
	/* the pairs grouped by caller (the hash order is not an order) */
	if (c.nedges > 1)
		qsort(c.edges, c.nedges, sizeof *c.edges, edge_cmp);
	for (size_t i = c.nedges; i-- > 0;)
		c.funcs[c.edges[i].from].first_edge = (uint32_t)i + 1;
	fseen = calloc(c.nfuncs ? c.nfuncs : 1, 1);
	oseen = calloc(c.nobjs + 1, 1);
	if (!fseen || !oseen) {
		rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing a callgrind profile");
		goto done;
	}
	const char *name = nt_stacks_name(s);
	nt_out_str(&o, "# callgrind format\nversion: 1\ncreator: libnettrace " NT_VERSION_STRING
		   "\ncmd: ");
	for (const char *p = name; *p; p++)
		nt_out_put(&o, *p == '\n' ? " " : p, 1);
	nt_out_printf(&o, "\npositions: line\nevents: %s\nsummary: %" PRIu64 "\n\nfl=(1) ???\n",
		      event, c.total);
	uint32_t cur_obj = UINT32_MAX;
	for (size_t i = 0; i < c.nfuncs && o.rc == 0; i++) {
		const cg_func *f = &c.funcs[i];
		if (f->obj_id != cur_obj) {
			cur_obj = f->obj_id;
			nt_out_str(&o, "ob=");
			put_name(&o, cur_obj, c.objs[cur_obj - 1], c.obj_n[cur_obj - 1],
				 &oseen[cur_obj]);
		}
		nt_out_str(&o, "fn=");
		put_name(&o, (uint32_t)i + 1, f->name, f->name_n, &fseen[i]);
		if (f->self)
			nt_out_printf(&o, "0 %" PRIu64 "\n", f->self);
		for (size_t k = f->first_edge; k && k <= c.nedges && c.edges[k - 1].from == i; k++) {
			const cg_edge *e = &c.edges[k - 1];
			const cg_func *t = &c.funcs[e->to];
			if (t->obj_id != cur_obj) {
				nt_out_str(&o, "cob=");
				put_name(&o, t->obj_id, c.objs[t->obj_id - 1], c.obj_n[t->obj_id - 1],
					 &oseen[t->obj_id]);
			}
			nt_out_str(&o, "cfn=");
			put_name(&o, e->to + 1, t->name, t->name_n, &fseen[e->to]);
			nt_out_printf(&o, "calls=%" PRIu64 " 0\n0 %" PRIu64 "\n", e->calls, e->cost);
		}
		nt_out_str(&o, "\n");
	}
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
	free(c.funcs);
	free(c.fht);
	free(c.edges);
	free(c.eht);
	free(c.objs);
	free(c.obj_n);
	free(c.ids);
	return rc;
}
