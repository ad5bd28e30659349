/* SPDX-License-Identifier: MIT */
/* export-flame.c - the flame tree the SVG is drawn from: the stacks of one or two sources
 * (side 0 drawn, side 1 the base of a differential graph) merged by call path, with self
 * and total weight per side, children in name (or weight) order and a dominant category
 * per node.
 *
 * Built for speed on large folded inputs (the benchmark's goal is 200 MB/s): each stack is
 * first compared with the previous one of the same side, frame by frame, and the common
 * prefix reuses the previous path's nodes without hashing (folded files are sorted, so
 * most of a line repeats the line before); only the frames after it are interned and looked
 * up by (parent, name) in one hash table (a node holds its name: no separate name table,
 * so one probe per new frame). Weight is added to the leaf only; totals come
 * from one pass in reverse creation order at seal time (a parent is always created before
 * its children). Memory grows with distinct call paths, not with lines.
 * Not here: drawing (export-svg.c), reading sources (export-stacks.c). */
#include "export.h"

/* A node's name: bytes borrowed from a source (or the literal "all"), and their hash. */
typedef struct nname {
	const char *s;
	size_t n;
	uint64_t hash;
} nname;

struct nt_ftree {
	nt_fnode *nodes;
	nname *names;         /* one per node */
	size_t nnodes, nodecap, namecap;
	uint32_t *node_ht;    /* node index + 1, keyed by (parent, name) */
	size_t node_htcap;

	double *cat;          /* NT_CAT_COUNT per node: side-0 self, then total; or NULL */
	size_t catcap;        /* nodes the cat array holds */
	int8_t *dom;          /* dominant category per node, after seal */

	uint32_t *kids;       /* children of every node, one slice per node, after seal */

	/* previous stack of the side being added, and its nodes */
	nt_xprev prev;
	uint32_t *prevnode;
	size_t prevnodecap;
	int side;
	int sealed;
	nt_error *err;
	int rc;
};

static uint64_t pair_hash(uint32_t parent, uint32_t name)
{
	return nt_mix64(((uint64_t)parent << 32) | name);
}

nt_ftree *nt_ftree_new(void)
{
	nt_ftree *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	/* the root, named "all" as in flamegraph.pl */
	if (nt_grow((void **)&t->names, &t->namecap, 1, sizeof(nname)) ||
	    nt_grow((void **)&t->nodes, &t->nodecap, 1, sizeof(nt_fnode))) {
		nt_ftree_free(t);
		return NULL;
	}
	t->names[0] = (nname){"all", 3, 0};
	memset(&t->nodes[0], 0, sizeof(nt_fnode));
	t->nodes[0].parent = UINT32_MAX;
	t->nnodes = 1;
	return t;
}

void nt_ftree_free(nt_ftree *t)
{
	if (!t)
		return;
	free(t->names);
	free(t->nodes);
	free(t->node_ht);
	free(t->cat);
	free(t->dom);
	free(t->kids);
	nt_xprev_free(&t->prev);
	free(t->prevnode);
	free(t);
}

/* Node i's hash in the node table (hash.c's slots); the root (0) is no one's child. */
static int node_hash_of(const void *ctx, size_t i, uint64_t *h)
{
	const nt_ftree *t = ctx;
	*h = pair_hash(t->nodes[i].parent, (uint32_t)t->names[i].hash);
	return i > 0;
}

/* Child of parent named f, created on first use; -1 when out of memory or full. */
static int64_t child(nt_ftree *t, uint32_t parent, const nt_xframe *f)
{
	if ((t->nnodes + 1) * 2 > t->node_htcap &&
	    nt_slots_regrow(&t->node_ht, &t->node_htcap, 4096, t->nnodes, node_hash_of, t))
		return -1;
	uint64_t h = nt_hash_bytes(f->s, f->n);
	size_t mask = t->node_htcap - 1, k = (size_t)pair_hash(parent, h) & mask;
	while (t->node_ht[k]) {
		uint32_t i = t->node_ht[k] - 1;
		const nname *nm = &t->names[i];
		if (t->nodes[i].parent == parent && nm->hash == h && nm->n == f->n &&
		    memcmp(nm->s, f->s, f->n) == 0)
			return i;
		k = (k + 1) & mask;
	}
	/* UINT32_MAX marks "no parent" and node_ht stores index + 1 */
	if (t->nnodes >= UINT32_MAX - 2 ||
	    nt_grow((void **)&t->nodes, &t->nodecap, t->nnodes + 1, sizeof(nt_fnode)) ||
	    nt_grow((void **)&t->names, &t->namecap, t->nnodes + 1, sizeof(nname)))
		return -1;
	nt_fnode *c = &t->nodes[t->nnodes];
	memset(c, 0, sizeof *c);
	c->parent = parent;
	c->depth = t->nodes[parent].depth + 1;
	t->names[t->nnodes] = (nname){f->s, f->n, h};
	t->node_ht[k] = (uint32_t)t->nnodes + 1;
	/* the category array keeps pace with the nodes once it exists */
	if (t->cat && t->catcap < t->nodecap) {
		double *nc = realloc(t->cat, t->nodecap * NT_CAT_COUNT * sizeof(double));
		if (!nc)
			return -1;
		memset(nc + t->catcap * NT_CAT_COUNT, 0,
		       (t->nodecap - t->catcap) * NT_CAT_COUNT * sizeof(double));
		t->cat = nc;
		t->catcap = t->nodecap;
	}
	return (int64_t)t->nnodes++;
}

static int add_stack(void *ctx, const nt_xstack *st)
{
	nt_ftree *t = ctx;
	size_t d = st->depth;
	if (nt_grow((void **)&t->prevnode, &t->prevnodecap, d, sizeof(uint32_t)))
		goto nomem;
	/* the common prefix with the previous stack of this side: same nodes, no hashing */
	size_t i = nt_xprev_shared(&t->prev, st);
	if (i == SIZE_MAX)
		goto nomem;
	uint32_t node = i ? t->prevnode[i - 1] : 0;
	for (; i < d; i++) {
		int64_t c = child(t, node, &st->frames[i]);
		if (c < 0)
			goto nomem;
		node = (uint32_t)c;
		t->prevnode[i] = node;
	}
	/* source lines (profile input): each node on the path, shared prefix included */
	for (size_t j = 0; st->group && t->side == 0 && j < d; j++) {
		const nt_native_frame *nf = nt_xstack_native(st, j);
		nt_fnode *n = &t->nodes[t->prevnode[j]];
		if (!nf || !nf->file || !nf->line || (n->file && strcmp(n->file, nf->file) != 0))
			continue;
		if (!n->file) {
			n->file = nf->file;
			n->line_lo = n->line_hi = nf->line;
		} else if (nf->line < n->line_lo) {
			n->line_lo = nf->line;
		} else if (nf->line > n->line_hi) {
			n->line_hi = nf->line;
		}
	}
	t->nodes[node].self[t->side] += st->value;
	if (t->side == 0 && st->category >= 0 && st->category < NT_CAT_COUNT) {
		if (!t->cat) {
			t->cat = calloc(t->nodecap * NT_CAT_COUNT, sizeof(double));
			if (!t->cat)
				goto nomem;
			t->catcap = t->nodecap;
		}
		t->cat[(size_t)node * NT_CAT_COUNT + (size_t)st->category] += st->value;
	}
	return 0;
nomem:
	t->rc = nt_fail(t->err, t->nnodes >= UINT32_MAX - 2 ? NT_ELIMIT : NT_ENOMEM, NT_NO_OFFSET,
			t->nnodes >= UINT32_MAX - 2 ? "more than 2^32-2 flame graph frames"
						    : "out of memory building the flame graph");
	return t->rc;
}

int nt_ftree_add(nt_ftree *t, int side, nt_stacks *s, nt_error *err)
{
	NT_ASSERT(!t->sealed && (side == 0 || side == 1));
	t->side = side;
	nt_xprev_reset(&t->prev);
	t->err = err;
	t->rc = 0;
	int rc = nt_stacks_foreach(s, add_stack, t, err);
	nt_xprev_reset(&t->prev);
	return rc;
}

typedef struct kid_item {
	const char *s;
	size_t n;
	double w; /* total weight (sort by weight) */
	uint32_t node;
} kid_item;

static int cmp_kid(const void *a, const void *b)
{
	const kid_item *x = a, *y = b;
	size_t n = x->n < y->n ? x->n : y->n;
	int r = memcmp(x->s, y->s, n);
	if (r)
		return r;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* heaviest first; equal weights by name, so the order stays deterministic */
static int cmp_kid_weight(const void *a, const void *b)
{
	const kid_item *x = a, *y = b;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return cmp_kid(a, b);
}

int nt_ftree_seal(nt_ftree *t, int by_weight, nt_error *err)
{
	NT_ASSERT(!t->sealed);
	kid_item *ki = NULL;
	uint32_t *fill = NULL;
	size_t n = t->nnodes;
	/* totals and category totals, children before parents */
	for (size_t i = 0; i < n; i++) {
		t->nodes[i].total[0] = t->nodes[i].self[0];
		t->nodes[i].total[1] = t->nodes[i].self[1];
		t->nodes[i].nkids = 0;
	}
	for (size_t i = n; i-- > 1;) {
		nt_fnode *c = &t->nodes[i], *p = &t->nodes[c->parent];
		p->total[0] += c->total[0];
		p->total[1] += c->total[1];
		p->nkids++;
		if (t->cat)
			for (int k = 0; k < NT_CAT_COUNT; k++)
				t->cat[(size_t)c->parent * NT_CAT_COUNT + (size_t)k] +=
					t->cat[i * NT_CAT_COUNT + (size_t)k];
	}
	if (t->cat) {
		t->dom = malloc(n);
		if (!t->dom)
			goto nomem;
		for (size_t i = 0; i < n; i++) {
			const double *c = &t->cat[i * NT_CAT_COUNT];
			int best = -1;
			for (int k = 0; k < NT_CAT_COUNT; k++)
				if (c[k] > 0 && (best < 0 || c[k] > c[best]))
					best = k;
			t->dom[i] = (int8_t)best;
		}
	}
	/* each node's children, in a slice of one table, sorted by name (bytewise) or, with
	 * by_weight, heaviest first (of the drawn side) */
	t->kids = malloc((n ? n : 1) * sizeof(uint32_t));
	fill = calloc(n ? n : 1, sizeof(uint32_t));
	if (!t->kids || !fill)
		goto nomem;
	uint32_t off = 0;
	size_t maxk = 0;
	for (size_t i = 0; i < n; i++) {
		t->nodes[i].kids = off;
		off += t->nodes[i].nkids;
		if (t->nodes[i].nkids > maxk)
			maxk = t->nodes[i].nkids;
	}
	for (size_t i = 1; i < n; i++) {
		uint32_t p = t->nodes[i].parent;
		t->kids[t->nodes[p].kids + fill[p]++] = (uint32_t)i;
	}
	ki = malloc((maxk ? maxk : 1) * sizeof *ki);
	if (!ki)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = t->nodes[i].nkids;
		if (k < 2)
			continue;
		uint32_t *kv = t->kids + t->nodes[i].kids;
		for (uint32_t j = 0; j < k; j++)
			ki[j] = (kid_item){t->names[kv[j]].s, t->names[kv[j]].n,
					   t->nodes[kv[j]].total[0], kv[j]};
		qsort(ki, k, sizeof *ki, by_weight ? cmp_kid_weight : cmp_kid);
		for (uint32_t j = 0; j < k; j++)
			kv[j] = ki[j].node;
	}
	free(ki);
	free(fill);
	t->sealed = 1;
	return 0;
nomem:
	free(ki);
	free(fill);
	return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory building the flame graph");
}

size_t nt_ftree_count(const nt_ftree *t)
{
	return t->nnodes;
}

const nt_fnode *nt_ftree_node(const nt_ftree *t, size_t i)
{
	return &t->nodes[i];
}

const uint32_t *nt_ftree_kids(const nt_ftree *t, size_t i)
{
	NT_ASSERT(t->sealed);
	return t->kids + t->nodes[i].kids;
}

nt_xframe nt_ftree_name(const nt_ftree *t, size_t i)
{
	nt_xframe x = {t->names[i].s, t->names[i].n};
	return x;
}

int nt_ftree_category(const nt_ftree *t, size_t i)
{
	return t->dom ? t->dom[i] : -1;
}

double nt_ftree_cat(const nt_ftree *t, size_t i, int k)
{
	return t->cat && k >= 0 && k < NT_CAT_COUNT ? t->cat[i * NT_CAT_COUNT + (size_t)k] : 0;
}

int nt_ftree_has_categories(const nt_ftree *t)
{
	return t->cat != NULL;
}

long nt_ftree_child(const nt_ftree *t, size_t node, const char *name)
{
	size_t n = strlen(name);
	const uint32_t *kv = nt_ftree_kids(t, node);
	for (uint32_t j = 0; j < t->nodes[node].nkids; j++) {
		const nname *f = &t->names[kv[j]];
		if (f->n == n && memcmp(f->s, name, n) == 0)
			return (long)kv[j];
	}
	return -1;
}
