/* SPDX-License-Identifier: MIT */
/* tree.c - call trees: merges the sample groups of a profile (profile.c) by call path into
 * nodes with self and total weight, samples and a per-category breakdown; builds the
 * bottom-up (inverted) variant and per-thread roots on request; keeps flat per-function
 * statistics (total counted once per sample even through recursion); renders the tree, its
 * hot path or the top-N lists as text through an nt_sink.
 *
 * With nt_tree_opts.when_buckets, every node, function and subsystem also gets a time
 * histogram (the profile's fine time buckets rebinned into display buckets); when the
 * profile classifies subsystems, the tree keeps the time per subsystem (self, total, by
 * category) for the --by-subsystem table.
 *
 * Sections: string pool and name interning; node table; building (one pass over the
 * groups); sealing (children arrays, sort orders); queries; text rendering.
 * Memory grows with distinct call paths and distinct names, never with samples: a node is
 * found from (parent, name) through one hash table, names are interned once by text.
 * Not here: weighting and categories (profile.c), folded output (fold.c). */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* ------------------------------------------------------------------ string pool */

/* Names live in chunks that never move, so interned pointers stay valid. */
typedef struct pchunk {
	struct pchunk *next;
	size_t used, cap;
	char data[];
} pchunk;

#define POOL_CHUNK (64u * 1024u)

static void pool_free(pchunk *c)
{
	while (c) {
		pchunk *n = c->next;
		free(c);
		c = n;
	}
}

/* Copies s[0..n) plus a NUL into the pool; NULL when out of memory. A string longer than a
 * chunk gets a chunk of its own, linked behind the current one so that the current chunk
 * keeps filling. */
static char *pool_dup(pchunk **head, const char *s, size_t n)
{
	pchunk *c = *head;
	if (n >= SIZE_MAX - sizeof(pchunk) - 1)
		return NULL;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = n + 1 > POOL_CHUNK ? n + 1 : POOL_CHUNK;
		pchunk *nc = malloc(sizeof(pchunk) + cap);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		if (c && cap > POOL_CHUNK) {
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			*head = nc;
		}
		c = nc;
	}
	char *d = c->data + c->used;
	memcpy(d, s, n);
	d[n] = '\0';
	c->used += n + 1;
	return d;
}

/* ------------------------------------------------------------------ data */

typedef struct tname {
	nt_tree_func f;       /* flat statistics; f.name is the interned text */
	size_t len;
	uint64_t hash;
	uint64_t mark;        /* last group (1-based) whose total was added to f */
	int is_func;          /* used as a frame (thread roots are not functions) */
} tname;

typedef struct tnode {
	nt_tree_node pub;     /* what callers see; must stay first (see node_of) */
	uint32_t parent;      /* node index, NO_NODE for the root */
	uint32_t name;        /* index into t->names */
	uint32_t nchild;      /* children counted while building */
} tnode;

#define NO_NODE UINT32_MAX

/* Time per subsystem (nt_tree_subsystem) and the mark that counts a sample once. */
typedef struct tsub {
	nt_tree_subsystem pub;
	uint64_t mark;        /* last group (1-based) whose total was added */
} tsub;

/* What the header shows about one session (copied, the profile may go away). */
typedef struct tsession {
	char *name;
	uint64_t samples;     /* ThreadSample events read */
	int has_samples;
	double first_s, last_s; /* first/last sample, seconds since the session start */
	double weight_ns;     /* one sample's weight (0: compat weights) */
	uint64_t declared_ns; /* the header's interval */
	uint64_t pauses;      /* GC pauses, their time, and the gc time charged for them */
	uint64_t pause_ns;
	double gc_charged_ns;
} tsession;

struct nt_tree {
	nt_tree_opts o;
	nt_profile *prof;     /* while building: o.lines, thread labels */
	char *linebuf;        /* o.lines: "NAME at FILE:LINE" */
	size_t linecap;
	pchunk *pool;

	tname *names;
	size_t nnames, namecap;
	uint32_t *name_ht;    /* name index + 1, open addressing */
	size_t name_htcap;

	tnode *nodes;         /* [0] is the root */
	size_t nnodes, nodecap;
	uint32_t *node_ht;    /* node index + 1, keyed by (parent, name) */
	size_t node_htcap;

	const nt_tree_node **kids; /* all children arrays, one slice per node */
	const nt_tree_func **by_self, **by_total; /* flat orders */
	size_t nfuncs;

	tsession *sess;
	size_t nsess;

	uint32_t *path;       /* scratch: name indices of the current group */
	size_t pathcap;
	uint64_t groups;      /* groups seen, the mark generation */
	int rc;               /* first failure inside the foreach callback */

	/* time histograms (o.when_buckets): wb display buckets per node, name, subsystem */
	uint32_t wb;          /* o.when_buckets, 0 = none */
	nt_tree_when_info winfo;
	uint32_t wfirst;      /* first fine bucket of display bucket 0 */
	uint32_t wfine;       /* fine buckets the display buckets cover (winfo.fine) */
	uint32_t *wn;         /* fine buckets in each display bucket (0 when wfine < wb) */
	uint64_t *nwhen;      /* node i: nwhen[i * wb ..] */
	size_t nwhencap;      /* in elements */
	uint64_t *fwhen;      /* name i: fwhen[i * wb ..] */
	size_t fwhencap;
	uint32_t *gwb;        /* scratch: the current group's display buckets... */
	uint64_t *gwc;        /* ... and their samples */
	size_t ngw, gwcap, gwccap;

	/* subsystems (when the profile classifies them); entry 0 is "other" */
	tsub *subs;
	size_t nsubs;
	const nt_tree_subsystem **sub_by_self, **sub_by_total; /* entries with samples */
	size_t nsub_shown;
	uint64_t *swhen;      /* subsystem i: swhen[i * wb ..] */
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_text(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return mix64(h);
}

static uint64_t hash_edge(uint32_t parent, uint32_t name)
{
	return mix64(((uint64_t)parent << 32) ^ name ^ 0x9e3779b97f4a7c15ull);
}

/* ------------------------------------------------------------------ names */

static int rehash_names(nt_tree *t)
{
	size_t ncap = t->name_htcap ? t->name_htcap * 2 : 1024;
	uint32_t *ht = calloc(ncap, sizeof(uint32_t));
	if (!ht)
		return -1;
	for (size_t i = 0; i < t->nnames; i++) {
		size_t k = (size_t)t->names[i].hash & (ncap - 1);
		while (ht[k])
			k = (k + 1) & (ncap - 1);
		ht[k] = (uint32_t)i + 1;
	}
	free(t->name_ht);
	t->name_ht = ht;
	t->name_htcap = ncap;
	return 0;
}

/* Makes row `row` of a histogram array (wb counts per row) exist and zeroes it; nothing
 * without histograms. Returns 0 or -1 (no memory). */
static int when_row(nt_tree *t, uint64_t **arr, size_t *cap, size_t row)
{
	size_t need;
	if (!t->wb)
		return 0;
	if (nt_mul_size(row + 1, t->wb, &need) ||
	    nt_grow((void **)arr, cap, need, sizeof(uint64_t)))
		return -1;
	memset(*arr + row * t->wb, 0, t->wb * sizeof(uint64_t));
	return 0;
}

/* Index of the name with text s[0..n), or -1 when absent. */
static int64_t find_name(const nt_tree *t, const char *s, size_t n, uint64_t h)
{
	if (!t->name_htcap)
		return -1;
	size_t k = (size_t)h & (t->name_htcap - 1);
	while (t->name_ht[k]) {
		const tname *nm = &t->names[t->name_ht[k] - 1];
		if (nm->hash == h && nm->len == n && memcmp(nm->f.name, s, n) == 0)
			return t->name_ht[k] - 1;
		k = (k + 1) & (t->name_htcap - 1);
	}
	return -1;
}

/* Interns s[0..n); returns its index or -1 when out of memory (or past the limit). */
static int64_t intern(nt_tree *t, const char *s, size_t n)
{
	uint64_t h = hash_text(s, n);
	int64_t i = find_name(t, s, n, h);
	if (i >= 0)
		return i;
	if (t->nnames >= UINT32_MAX - 1 ||
	    ((t->nnames + 1) * 2 > t->name_htcap && rehash_names(t)) ||
	    nt_grow((void **)&t->names, &t->namecap, t->nnames + 1, sizeof(tname)) ||
	    when_row(t, &t->fwhen, &t->fwhencap, t->nnames))
		return -1;
	char *d = pool_dup(&t->pool, s, n);
	if (!d)
		return -1;
	tname *nm = &t->names[t->nnames];
	memset(nm, 0, sizeof *nm);
	nm->f.name = d;
	nm->len = n;
	nm->hash = h;
	size_t k = (size_t)h & (t->name_htcap - 1);
	while (t->name_ht[k])
		k = (k + 1) & (t->name_htcap - 1);
	t->name_ht[k] = (uint32_t)t->nnames + 1;
	return (int64_t)t->nnames++;
}

/* Frame text as the tree shows it: without "Module!" when no_module is set (as fold.c). */
static int64_t intern_frame(nt_tree *t, const char *f)
{
	if (!f)
		f = "?";
	if (t->o.no_module) {
		const char *bang = strchr(f, '!');
		if (bang)
			f = bang + 1;
	}
	int64_t i = intern(t, f, strlen(f));
	if (i >= 0)
		t->names[i].is_func = 1;
	return i;
}

/* ------------------------------------------------------------------ nodes */

static int rehash_nodes(nt_tree *t)
{
	size_t ncap = t->node_htcap ? t->node_htcap * 2 : 1024;
	uint32_t *ht = calloc(ncap, sizeof(uint32_t));
	if (!ht)
		return -1;
	for (size_t i = 1; i < t->nnodes; i++) {
		size_t k = (size_t)hash_edge(t->nodes[i].parent, t->nodes[i].name) & (ncap - 1);
		while (ht[k])
			k = (k + 1) & (ncap - 1);
		ht[k] = (uint32_t)i;
	}
	free(t->node_ht);
	t->node_ht = ht;
	t->node_htcap = ncap;
	return 0;
}

/* Child of parent named name (created when absent): its index, or -1 when out of memory,
 * -2 past the node limit. Node indexes start at 1 for children (0 is the root), so the
 * hash table stores them as they are. */
static int64_t child_of(nt_tree *t, uint32_t parent, uint32_t name, int kind)
{
	uint64_t h = hash_edge(parent, name);
	if (t->node_htcap) {
		size_t k = (size_t)h & (t->node_htcap - 1);
		while (t->node_ht[k]) {
			const tnode *n = &t->nodes[t->node_ht[k]];
			if (n->parent == parent && n->name == name)
				return t->node_ht[k];
			k = (k + 1) & (t->node_htcap - 1);
		}
	}
	/* Indexes must fit uint32 with NO_NODE left free. */
	if (t->nnodes >= UINT32_MAX - 1)
		return -2;
	if ((t->nnodes + 1) * 2 > t->node_htcap && rehash_nodes(t))
		return -1;
	if (nt_grow((void **)&t->nodes, &t->nodecap, t->nnodes + 1, sizeof(tnode)) ||
	    when_row(t, &t->nwhen, &t->nwhencap, t->nnodes))
		return -1;
	tnode *n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof *n);
	n->parent = parent;
	n->name = name;
	n->pub.kind = kind;
	n->pub.depth = t->nodes[parent].pub.depth + 1;
	t->nodes[parent].nchild++;
	size_t k = (size_t)h & (t->node_htcap - 1);
	while (t->node_ht[k])
		k = (k + 1) & (t->node_htcap - 1);
	t->node_ht[k] = (uint32_t)t->nnodes;
	return (int64_t)t->nnodes++;
}

static void node_add(tnode *n, const nt_sample_group *g, int cat)
{
	n->pub.samples += g->samples;
	n->pub.total_ns += g->weight_ns;
	n->pub.cat_samples[cat] += g->samples;
	n->pub.cat_ns[cat] += g->weight_ns;
}

/* ------------------------------------------------------------------ building */

/* The current group's samples by display bucket (gwb/gwc, ngw entries, bucket order),
 * from its fine buckets. Returns 0 or -1 (no memory). */
static int group_when(nt_tree *t, const nt_sample_group *g)
{
	t->ngw = 0;
	if (!t->wb || !g->when || !g->nwhen)
		return 0;
	if (nt_grow((void **)&t->gwb, &t->gwcap, g->nwhen, sizeof(uint32_t)) ||
	    nt_grow((void **)&t->gwc, &t->gwccap, g->nwhen, sizeof(uint64_t)))
		return -1;
	for (size_t i = 0; i < g->nwhen; i++) {
		uint32_t b = g->when[i].bucket;
		/* wfirst is the first bucket of every group we are given (the pre-pass), and
		 * the display buckets cover up to the last: clamp only as a safeguard */
		uint32_t d = b < t->wfirst ? 0
					   : (uint32_t)((uint64_t)(b - t->wfirst) * t->wb / t->wfine);
		if (d >= t->wb)
			d = t->wb - 1;
		if (t->ngw && t->gwb[t->ngw - 1] == d) {
			t->gwc[t->ngw - 1] += g->when[i].samples;
		} else {
			t->gwb[t->ngw] = d;
			t->gwc[t->ngw++] = g->when[i].samples;
		}
	}
	return 0;
}

/* Adds the current group's display buckets to a histogram row. */
static void when_add(const nt_tree *t, uint64_t *row)
{
	for (size_t i = 0; i < t->ngw; i++)
		row[t->gwb[i]] += t->gwc[i];
}

/* The subsystem statistics of one group: self for the subsystem that decides, total for
 * each subsystem on its frames, once per group (the mark). */
static void subsystems_add(nt_tree *t, const nt_sample_group *g, int cat)
{
	size_t self = g->subsystem >= 0 && (size_t)g->subsystem + 1 < t->nsubs
			      ? (size_t)g->subsystem + 1 : 0;
	nt_tree_subsystem *sp = &t->subs[self].pub;
	sp->self_samples += g->samples;
	sp->self_ns += g->weight_ns;
	sp->cat_samples[cat] += g->samples;
	sp->cat_ns[cat] += g->weight_ns;
	if (t->wb)
		when_add(t, t->swhen + self * t->wb);
	if (self == 0) { /* "other" is no subsystem of a frame: its total is its self */
		sp->total_samples += g->samples;
		sp->total_ns += g->weight_ns;
	}
	/* the frames above an "other" rule may still have subsystems (a thread pool's
	 * dispatch loop under its worker's start): they count in those totals */
	for (uint32_t i = 0; i < g->depth; i++) {
		int32_t k = g->frame_subsystems[i];
		if (k < 0 || (size_t)k + 1 >= t->nsubs)
			continue;
		tsub *ts = &t->subs[k + 1];
		if (ts->mark == t->groups)
			continue;
		ts->mark = t->groups;
		ts->pub.total_samples += g->samples;
		ts->pub.total_ns += g->weight_ns;
	}
}

/* One group: its path of names (thread, then frames root first, or leaf first when
 * inverted), walked from the root, adding the group to every node on the way. */
static int tree_on_group(void *ctx, const nt_sample_group *g)
{
	nt_tree *t = ctx;
	int cat = g->category >= 0 && g->category < NT_CAT_COUNT ? g->category : NT_CAT_UNKNOWN;
	size_t n = 0, need = (size_t)g->depth + 2;
	if (nt_grow((void **)&t->path, &t->pathcap, need, sizeof(uint32_t)))
		goto nomem;
	int64_t id;
	if (t->o.per_thread) {
		char tmp[160];
		nt_profile_thread_label(t->prof, g->session, g->thread_id, t->nsess > 1, tmp,
					sizeof tmp);
		if ((id = intern(t, tmp, strlen(tmp))) < 0)
			goto nomem;
		t->path[n++] = (uint32_t)id;
	}
	size_t first_frame = n;
	if (g->depth == 0) {
		if ((id = intern_frame(t, "[empty stack]")) < 0)
			goto nomem;
		t->path[n++] = (uint32_t)id;
	} else {
		for (uint32_t i = 0; i < g->depth; i++) {
			/* frames are leaf first: the top-down path reads them backwards */
			uint32_t fi = t->o.invert ? i : g->depth - 1 - i;
			const char *fname = g->frames[fi];
			const nt_native_frame *nf =
				t->o.lines ? nt_profile_frame_native(t->prof, g, fi) : NULL;
			if (nf && nf->file && nf->line) {
				const char *base = strrchr(nf->file, '/');
				base = base ? base + 1 : nf->file;
				size_t ln = strlen(fname ? fname : "?") + strlen(base) + 16;
				if (nt_grow((void **)&t->linebuf, &t->linecap, ln, 1))
					goto nomem;
				snprintf(t->linebuf, ln, "%s at %s:%" PRIu32, fname ? fname : "?", base,
					 nf->line);
				fname = t->linebuf;
			}
			if ((id = intern_frame(t, fname)) < 0)
				goto nomem;
			t->path[n++] = (uint32_t)id;
		}
	}
	/* The leaf frame's node gets the self weight: last on the path top-down, first frame
	 * bottom-up. */
	size_t leaf_at = t->o.invert ? first_frame : n - 1;
	uint32_t cur = 0;
	if (group_when(t, g))
		goto nomem;
	node_add(&t->nodes[0], g, cat);
	if (t->wb)
		when_add(t, t->nwhen);
	for (size_t i = 0; i < n; i++) {
		int64_t c = child_of(t, cur, t->path[i], i < first_frame ? NT_TREE_THREAD : NT_TREE_FRAME);
		if (c == -2) {
			t->rc = NT_ELIMIT;
			return NT_ELIMIT;
		}
		if (c < 0)
			goto nomem;
		cur = (uint32_t)c;
		tnode *nd = &t->nodes[cur];
		if (i < first_frame) {
			nd->pub.thread_id = g->thread_id;
			nd->pub.session = g->session;
		}
		node_add(nd, g, cat);
		if (t->wb)
			when_add(t, t->nwhen + (size_t)cur * t->wb);
		if (i == leaf_at) {
			nd->pub.self_samples += g->samples;
			nd->pub.self_ns += g->weight_ns;
		}
	}
	/* Flat statistics: a function's total counts each group once, however often the
	 * function recurses in it (the mark remembers the last group that counted it). */
	t->groups++;
	for (size_t i = first_frame; i < n; i++) {
		tname *nm = &t->names[t->path[i]];
		if (nm->mark == t->groups)
			continue;
		nm->mark = t->groups;
		nm->f.total_samples += g->samples;
		nm->f.total_ns += g->weight_ns;
		nm->f.cat_samples[cat] += g->samples;
		nm->f.cat_ns[cat] += g->weight_ns;
		if (t->wb)
			when_add(t, t->fwhen + (size_t)t->path[i] * t->wb);
	}
	tname *leaf = &t->names[t->path[leaf_at]];
	leaf->f.self_samples += g->samples;
	leaf->f.self_ns += g->weight_ns;
	if (t->nsubs && g->frame_subsystems)
		subsystems_add(t, g, cat);
	return 0;
nomem:
	t->rc = NT_ENOMEM;
	return NT_ENOMEM;
}

/* ------------------------------------------------------------------ sealing */

/* Orders: highest first by weight or samples, then by name (bytewise), so the output is
 * deterministic. qsort has no context argument, hence one comparator per metric. */
static int cmp_desc_then_name(double a, double b, const char *na, const char *nb)
{
	if (a != b)
		return a > b ? -1 : 1;
	return strcmp(na, nb);
}

static int cmp_node_ns(const void *x, const void *y)
{
	const nt_tree_node *a = *(const nt_tree_node *const *)x, *b = *(const nt_tree_node *const *)y;
	/* threads: the busiest on a CPU first (measured cpu time; none without a CPU clock) */
	if (a->kind == NT_TREE_THREAD && b->kind == NT_TREE_THREAD &&
	    a->cat_ns[NT_CAT_CPU] != b->cat_ns[NT_CAT_CPU])
		return a->cat_ns[NT_CAT_CPU] > b->cat_ns[NT_CAT_CPU] ? -1 : 1;
	return cmp_desc_then_name(a->total_ns, b->total_ns, a->name, b->name);
}

static int cmp_node_samples(const void *x, const void *y)
{
	const nt_tree_node *a = *(const nt_tree_node *const *)x, *b = *(const nt_tree_node *const *)y;
	return cmp_desc_then_name((double)a->samples, (double)b->samples, a->name, b->name);
}

static int cmp_self_ns(const void *x, const void *y)
{
	const nt_tree_func *a = *(const nt_tree_func *const *)x, *b = *(const nt_tree_func *const *)y;
	return cmp_desc_then_name(a->self_ns, b->self_ns, a->name, b->name);
}

static int cmp_self_samples(const void *x, const void *y)
{
	const nt_tree_func *a = *(const nt_tree_func *const *)x, *b = *(const nt_tree_func *const *)y;
	return cmp_desc_then_name((double)a->self_samples, (double)b->self_samples, a->name,
				  b->name);
}

static int cmp_total_ns(const void *x, const void *y)
{
	const nt_tree_func *a = *(const nt_tree_func *const *)x, *b = *(const nt_tree_func *const *)y;
	return cmp_desc_then_name(a->total_ns, b->total_ns, a->name, b->name);
}

static int cmp_total_samples(const void *x, const void *y)
{
	const nt_tree_func *a = *(const nt_tree_func *const *)x, *b = *(const nt_tree_func *const *)y;
	return cmp_desc_then_name((double)a->total_samples, (double)b->total_samples, a->name,
				  b->name);
}

static int cmp_sub_self_ns(const void *x, const void *y)
{
	const nt_tree_subsystem *a = *(const nt_tree_subsystem *const *)x;
	const nt_tree_subsystem *b = *(const nt_tree_subsystem *const *)y;
	return cmp_desc_then_name(a->self_ns, b->self_ns, a->name, b->name);
}

static int cmp_sub_self_samples(const void *x, const void *y)
{
	const nt_tree_subsystem *a = *(const nt_tree_subsystem *const *)x;
	const nt_tree_subsystem *b = *(const nt_tree_subsystem *const *)y;
	return cmp_desc_then_name((double)a->self_samples, (double)b->self_samples, a->name,
				  b->name);
}

static int cmp_sub_total_ns(const void *x, const void *y)
{
	const nt_tree_subsystem *a = *(const nt_tree_subsystem *const *)x;
	const nt_tree_subsystem *b = *(const nt_tree_subsystem *const *)y;
	return cmp_desc_then_name(a->total_ns, b->total_ns, a->name, b->name);
}

static int cmp_sub_total_samples(const void *x, const void *y)
{
	const nt_tree_subsystem *a = *(const nt_tree_subsystem *const *)x;
	const nt_tree_subsystem *b = *(const nt_tree_subsystem *const *)y;
	return cmp_desc_then_name((double)a->total_samples, (double)b->total_samples, a->name,
				  b->name);
}

/* Fixes the public pointers (the node array no longer moves), builds every children
 * slice in one array and sorts it, and builds the two flat orders. */
static int tree_seal(nt_tree *t)
{
	size_t nn = t->nnodes;
	t->kids = malloc((nn > 1 ? nn - 1 : 1) * sizeof *t->kids);
	if (!t->kids)
		return -1;
	/* slice offsets: a prefix sum of the child counts, kept in pub.nchildren for now */
	size_t off = 0;
	for (size_t i = 0; i < nn; i++) {
		tnode *n = &t->nodes[i];
		n->pub.name = t->names[n->name].f.name;
		n->pub.children = t->kids + off;
		n->pub.nchildren = 0;
		n->pub.parent = i ? &t->nodes[n->parent].pub : NULL;
		n->pub.when = t->wb ? t->nwhen + i * t->wb : NULL;
		off += n->nchild;
	}
	NT_ASSERT(off == (nn ? nn - 1 : 0));
	for (size_t i = 1; i < nn; i++) {
		nt_tree_node *p = &t->nodes[t->nodes[i].parent].pub;
		((const nt_tree_node **)p->children)[p->nchildren++] = &t->nodes[i].pub;
	}
	int (*cmp)(const void *, const void *) = t->o.by_samples ? cmp_node_samples : cmp_node_ns;
	for (size_t i = 0; i < nn; i++) {
		nt_tree_node *p = &t->nodes[i].pub;
		NT_ASSERT(p->nchildren == t->nodes[i].nchild);
		if (p->nchildren > 1)
			qsort((void *)p->children, p->nchildren, sizeof *p->children, cmp);
	}

	size_t nf = 0;
	for (size_t i = 0; i < t->nnames; i++)
		nf += t->names[i].is_func != 0;
	t->by_self = malloc((nf ? nf : 1) * sizeof *t->by_self);
	t->by_total = malloc((nf ? nf : 1) * sizeof *t->by_total);
	if (!t->by_self || !t->by_total)
		return -1;
	nf = 0;
	for (size_t i = 0; i < t->nnames; i++) {
		t->names[i].f.when = t->wb ? t->fwhen + i * t->wb : NULL;
		if (t->names[i].is_func)
			t->by_self[nf++] = &t->names[i].f;
	}
	memcpy(t->by_total, t->by_self, nf * sizeof *t->by_self);
	qsort(t->by_self, nf, sizeof *t->by_self, t->o.by_samples ? cmp_self_samples : cmp_self_ns);
	qsort(t->by_total, nf, sizeof *t->by_total,
	      t->o.by_samples ? cmp_total_samples : cmp_total_ns);
	t->nfuncs = nf;

	/* subsystems with samples, in both orders */
	size_t ns = 0;
	for (size_t i = 0; i < t->nsubs; i++) {
		t->subs[i].pub.when = t->wb ? t->swhen + i * t->wb : NULL;
		ns += t->subs[i].pub.self_samples || t->subs[i].pub.total_samples;
	}
	t->sub_by_self = malloc((ns ? ns : 1) * sizeof *t->sub_by_self);
	t->sub_by_total = malloc((ns ? ns : 1) * sizeof *t->sub_by_total);
	if (!t->sub_by_self || !t->sub_by_total)
		return -1;
	ns = 0;
	for (size_t i = 0; i < t->nsubs; i++)
		if (t->subs[i].pub.self_samples || t->subs[i].pub.total_samples)
			t->sub_by_self[ns++] = &t->subs[i].pub;
	memcpy(t->sub_by_total, t->sub_by_self, ns * sizeof *t->sub_by_self);
	qsort(t->sub_by_self, ns, sizeof *t->sub_by_self,
	      t->o.by_samples ? cmp_sub_self_samples : cmp_sub_self_ns);
	qsort(t->sub_by_total, ns, sizeof *t->sub_by_total,
	      t->o.by_samples ? cmp_sub_total_samples : cmp_sub_total_ns);
	t->nsub_shown = ns;
	return 0;
}

/* ------------------------------------------------------------------ lifecycle */

void nt_tree_free(nt_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nsess; i++)
		free(t->sess[i].name);
	free(t->sess);
	free(t->names);
	free(t->name_ht);
	free(t->nodes);
	free(t->node_ht);
	free(t->kids);
	free(t->by_self);
	free(t->by_total);
	free(t->path);
	free(t->nwhen);
	free(t->fwhen);
	free(t->gwb);
	free(t->gwc);
	free(t->subs);
	free(t->sub_by_self);
	free(t->sub_by_total);
	free(t->swhen);
	free(t->wn);
	pool_free(t->pool);
	free(t);
}

#define TREE_NOMEM(err) nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory building the call tree")

/* Copies the session summaries the header shows. */
static int copy_sessions(nt_tree *t, nt_profile *p, nt_error *err)
{
	size_t ns = nt_profile_session_count(p);
	t->sess = calloc(ns ? ns : 1, sizeof *t->sess);
	if (!t->sess)
		return TREE_NOMEM(err);
	for (size_t i = 0; i < ns; i++) {
		const nt_session_info *si = nt_profile_session(p, i);
		if (!si)
			return nt_fail(err, NT_EINTERNAL, NT_NO_OFFSET, "session %zu has no summary", i);
		tsession *s = &t->sess[t->nsess++];
		s->name = nt_strdup(si->name ? si->name : "-");
		if (!s->name)
			return TREE_NOMEM(err);
		s->samples = si->samples;
		s->has_samples = si->samples > 0;
		double f = si->header.qpc_frequency ? (double)si->header.qpc_frequency : 1.0;
		/* signed: a sample may precede the session start (spec: RuntimeInit example) */
		s->first_s = (double)(int64_t)(si->first_ts - si->header.sync_qpc) / f;
		s->last_s = (double)(int64_t)(si->last_ts - si->header.sync_qpc) / f;
		s->weight_ns = si->sample_weight_ns;
		s->declared_ns = si->header.expected_sampling_ns;
		s->pauses = si->pauses.pauses;
		s->pause_ns = si->pauses.pause_ns;
		s->gc_charged_ns = si->gc_charged_ns;
	}
	return 0;
}

/* Pre-pass over the groups the tree will hold: their first and last fine bucket. */
typedef struct wrange {
	uint32_t lo, hi;
	int any;
} wrange;

static int when_range_cb(void *ctx, const nt_sample_group *g)
{
	wrange *r = ctx;
	if (!g->when || !g->nwhen)
		return 0;
	uint32_t a = g->when[0].bucket, b = g->when[g->nwhen - 1].bucket; /* bucket order */
	if (!r->any || a < r->lo)
		r->lo = a;
	if (!r->any || b > r->hi)
		r->hi = b;
	r->any = 1;
	return 0;
}

/* Histograms: the display buckets split the fine buckets the tree's groups use, M of
 * them from the first used one, as evenly as whole fine buckets allow: fine bucket j
 * goes to display bucket floor(j * buckets / M), so widths differ by one fine bucket at
 * most and the histogram spans exactly the samples (rounding M up to a multiple of the
 * buckets would leave up to buckets - 1 empty fine buckets at the end: several blank
 * display buckets when there are few fine buckets per display bucket). The text scales
 * bars by samples per fine bucket, so the uneven widths do not show.
 * Subsystems: one entry per name of the profile's rules, after "other". */
static int tree_setup(nt_tree *t, nt_profile *p, nt_error *err)
{
	if (t->o.when_buckets) {
		nt_when_grid gr;
		if (t->o.when_buckets > NT_WHEN_MAX_BUCKETS)
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
				       "%" PRIu32 " time buckets requested, at most %u",
				       t->o.when_buckets, NT_WHEN_MAX_BUCKETS);
		int rc = nt_profile_when_grid(p, &gr, err);
		if (rc)
			return rc;
		wrange r = {0, 0, 0};
		rc = nt_profile_foreach(p, when_range_cb, &r);
		if (rc)
			return nt_fail(err, rc, NT_NO_OFFSET, "cannot read the profile's groups");
		uint32_t used = r.any ? r.hi - r.lo + 1 : 1;
		t->wb = t->o.when_buckets;
		t->wfirst = r.any ? r.lo : 0;
		t->wfine = used;
		t->wn = calloc(t->wb, sizeof *t->wn);
		if (!t->wn)
			return TREE_NOMEM(err);
		for (uint32_t j = 0; j < used; j++)
			t->wn[(uint64_t)j * t->wb / used]++;
		t->winfo.buckets = t->wb;
		t->winfo.fine = used;
		t->winfo.fine_ns = gr.width_ns;
		t->winfo.start_ns = gr.origin_ns + (int64_t)((uint64_t)t->wfirst * gr.width_ns);
		t->winfo.end_ns = t->winfo.start_ns + (int64_t)((uint64_t)used * gr.width_ns);
	}
	const nt_subsystems *subs = nt_profile_subsystems(p);
	if (subs) {
		t->nsubs = nt_subsystems_count(subs) + 1;
		t->subs = calloc(t->nsubs, sizeof *t->subs);
		if (!t->subs || (t->wb && !(t->swhen = calloc(t->nsubs * t->wb, sizeof(uint64_t)))))
			return TREE_NOMEM(err);
		for (size_t i = 0; i < t->nsubs; i++) {
			const char *nm = i ? nt_subsystems_name(subs, (int)i - 1) : "other";
			t->subs[i].pub.name = pool_dup(&t->pool, nm, strlen(nm));
			if (!t->subs[i].pub.name)
				return TREE_NOMEM(err);
		}
	}
	return 0;
}

int nt_tree_new(nt_tree **out, nt_profile *p, const nt_tree_opts *opts, nt_error *err)
{
	nt_tree *t = NULL;
	if (!out || !p) {
		NT_ASSERT(out && p);
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_tree_new: NULL argument");
	}
	*out = NULL;
	int rc = nt_profile_finish(p, err);
	if (rc)
		return rc;
	t = calloc(1, sizeof *t);
	if (!t)
		return TREE_NOMEM(err);
	if (opts) {
		size_t n = opts->sz < sizeof t->o ? opts->sz : sizeof t->o;
		memcpy(&t->o, opts, n);
	}
	t->o.sz = sizeof t->o;
	rc = copy_sessions(t, p, err);
	if (!rc)
		rc = tree_setup(t, p, err);
	if (rc)
		goto fail;
	/* the root: node 0, name "" (name 0) */
	if (intern(t, "", 0) != 0 ||
	    nt_grow((void **)&t->nodes, &t->nodecap, 1, sizeof(tnode)) ||
	    when_row(t, &t->nwhen, &t->nwhencap, 0)) {
		rc = TREE_NOMEM(err);
		goto fail;
	}
	memset(&t->nodes[0], 0, sizeof t->nodes[0]);
	t->nodes[0].parent = NO_NODE;
	t->nodes[0].pub.kind = NT_TREE_ROOT;
	t->nnodes = 1;

	t->prof = p;
	rc = nt_profile_foreach(p, tree_on_group, t);
	t->prof = NULL;
	free(t->linebuf);
	t->linebuf = NULL;
	t->linecap = 0;
	if (rc) {
		if (t->rc == NT_ELIMIT)
			rc = nt_fail(err, NT_ELIMIT, NT_NO_OFFSET,
				     "call tree exceeds %" PRIu32 " nodes", UINT32_MAX - 1);
		else if (t->rc == NT_ENOMEM || rc == NT_ENOMEM)
			rc = TREE_NOMEM(err);
		else
			rc = nt_fail(err, rc, NT_NO_OFFSET, "cannot read the profile's groups");
		goto fail;
	}
	if (tree_seal(t)) {
		rc = TREE_NOMEM(err);
		goto fail;
	}
	if (t->wb) {
		t->winfo.samples = t->nodes[0].pub.samples;
		for (uint32_t i = 0; i < t->wb; i++)
			if (t->nwhen[i] > t->winfo.peak)
				t->winfo.peak = t->nwhen[i];
	}
	/* scratch no longer needed */
	free(t->path);
	free(t->gwb);
	free(t->gwc);
	t->path = NULL;
	t->gwb = NULL;
	t->gwc = NULL;
	t->pathcap = t->gwcap = t->gwccap = 0;
	*out = t;
	return 0;
fail:
	nt_tree_free(t);
	return rc;
}

/* ------------------------------------------------------------------ queries */

const nt_tree_node *nt_tree_root(const nt_tree *t)
{
	return t ? &t->nodes[0].pub : NULL;
}

size_t nt_tree_node_count(const nt_tree *t)
{
	return t ? t->nnodes : 0;
}

const nt_tree_node *nt_tree_find(const nt_tree *t, const char *const *path, size_t n)
{
	if (!t)
		return NULL;
	uint32_t cur = 0;
	for (size_t i = 0; i < n; i++) {
		if (!path[i])
			return NULL;
		size_t len = strlen(path[i]);
		int64_t nm = find_name(t, path[i], len, hash_text(path[i], len));
		if (nm < 0 || !t->node_htcap)
			return NULL;
		size_t k = (size_t)hash_edge(cur, (uint32_t)nm) & (t->node_htcap - 1);
		uint32_t found = 0;
		while (t->node_ht[k]) {
			const tnode *c = &t->nodes[t->node_ht[k]];
			if (c->parent == cur && c->name == (uint32_t)nm) {
				found = t->node_ht[k];
				break;
			}
			k = (k + 1) & (t->node_htcap - 1);
		}
		if (!found)
			return NULL;
		cur = found;
	}
	return &t->nodes[cur].pub;
}

int nt_tree_when(const nt_tree *t, nt_tree_when_info *out)
{
	if (!t || !t->wb)
		return 0;
	if (out)
		*out = t->winfo;
	return 1;
}

size_t nt_tree_subsystem_count(const nt_tree *t)
{
	return t ? t->nsub_shown : 0;
}

const nt_tree_subsystem *nt_tree_subsystem_at(const nt_tree *t, int order, size_t i)
{
	if (!t || i >= t->nsub_shown)
		return NULL;
	if (order == NT_TREE_BY_SELF)
		return t->sub_by_self[i];
	if (order == NT_TREE_BY_TOTAL)
		return t->sub_by_total[i];
	return NULL;
}

size_t nt_tree_func_count(const nt_tree *t)
{
	return t ? t->nfuncs : 0;
}

const nt_tree_func *nt_tree_func_at(const nt_tree *t, int order, size_t i)
{
	if (!t || i >= t->nfuncs)
		return NULL;
	if (order == NT_TREE_BY_SELF)
		return t->by_self[i];
	if (order == NT_TREE_BY_TOTAL)
		return t->by_total[i];
	return NULL;
}

/* ------------------------------------------------------------------ text output */

/* Output buffer: text accumulates here and goes to the sink in large writes. */
typedef struct tout {
	const nt_sink *sink;
	char *buf;
	size_t len, cap;
	int rc;               /* first failure: NT_ENOMEM or the sink's code */
} tout;

#define TOUT_FLUSH_AT (256u * 1024u)

static void out_flush(tout *o)
{
	if (o->rc == 0 && o->len) {
		int rc = o->sink->write(o->sink->ctx, o->buf, o->len);
		if (rc)
			o->rc = rc < 0 ? rc : NT_EIO;
	}
	o->len = 0;
}

static void out_raw(tout *o, const char *s, size_t n)
{
	if (o->rc)
		return;
	if (n > SIZE_MAX - o->len || nt_grow((void **)&o->buf, &o->cap, o->len + n, 1)) {
		o->rc = NT_ENOMEM;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	if (o->len >= TOUT_FLUSH_AT)
		out_flush(o);
}

static void out_str(tout *o, const char *s)
{
	out_raw(o, s, strlen(s));
}

static void out_fmt(tout *o, const char *fmt, ...) NT_PRINTF(2, 3);
static void out_fmt(tout *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	out_raw(o, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

static void out_spaces(tout *o, size_t n)
{
	static const char sp[] = "                                ";
	while (n) {
		size_t k = n < sizeof sp - 1 ? n : sizeof sp - 1;
		out_raw(o, sp, k);
		n -= k;
	}
}

/* A name on one line: control characters (a newline in a native symbol, say) print as
 * '?' so that every row stays one line. */
static void out_name_n(tout *o, const char *s, size_t n)
{
	const char *run = s, *e = s + n;
	for (; s < e; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			out_raw(o, run, (size_t)(s - run));
			out_raw(o, "?", 1);
			run = s + 1;
		}
	}
	out_raw(o, run, (size_t)(s - run));
}

static void out_name(tout *o, const char *s)
{
	out_name_n(o, s, strlen(s));
}

/* A row's name after `used` columns: cut in the middle to fit the width (if any). */
static void out_row_name(tout *o, const nt_tree_print_opts *po, const char *s, size_t used)
{
	size_t n = strlen(s), head, tail;
	const char *mark;
	if (po->width && nt_text_cut_middle(s, n, po->width > used ? po->width - used : 1,
					    po->ascii, &head, &tail, &mark)) {
		out_name_n(o, s, head);
		out_str(o, mark);
		out_name_n(o, s + tail, n - tail);
		return;
	}
	out_name_n(o, s, n);
}

/* "4.512 s", "11.217 ms", "812.004 us", "950 ns" (auto), or a plain number in the
 * fixed unit: ns as an integer, us and ms with 3 decimals. */
static void fmt_time(char *b, size_t n, double ns, int unit)
{
	switch (unit) {
	case NT_UNIT_NS: snprintf(b, n, "%.0f", ns); return;
	case NT_UNIT_US: snprintf(b, n, "%.3f", ns / 1e3); return;
	case NT_UNIT_MS: snprintf(b, n, "%.3f", ns / 1e6); return;
	default: break;
	}
	double a = fabs(ns);
	if (a >= 999.9995e6)
		snprintf(b, n, "%.3f s", ns / 1e9);
	else if (a >= 999.9995e3)
		snprintf(b, n, "%.3f ms", ns / 1e6);
	else if (a >= 999.9995)
		snprintf(b, n, "%.3f us", ns / 1e3);
	else
		snprintf(b, n, "%.0f ns", ns);
}

void nt_tree_fmt_time(char *b, size_t n, double ns, int unit)
{
	fmt_time(b, n, ns, unit);
}

/* Seconds with 3 decimals, "-0.000" printed as "0.000". */
static void fmt_secs(char *b, size_t n, double s)
{
	if (fabs(s) < 0.0005)
		s = 0;
	snprintf(b, n, "%.3f s", s);
}

static const char *unit_name(int unit)
{
	switch (unit) {
	case NT_UNIT_SAMPLES: return "samples";
	case NT_UNIT_NS: return "ns";
	case NT_UNIT_US: return "us";
	case NT_UNIT_MS: return "ms";
	default: return "auto";
	}
}

/* The columns shared by rows and titles. */
typedef struct tcols {
	const nt_tree *t;
	const nt_tree_print_opts *po;
	double total;         /* root metric: ns, or samples when by_samples */
	int cats[NT_CAT_COUNT]; /* categories shown with by_category */
	int ncats;
} tcols;

static double metric_total(const tcols *c, double ns, uint64_t samples)
{
	return c->t->o.by_samples ? (double)samples : ns;
}

static double pct(const tcols *c, double v)
{
	return c->total > 0 ? 100.0 * v / c->total : 0.0;
}

static const char *cat_name(int cat)
{
	const char *s = nt_category_name(cat);
	return s ? s : "?";
}

static size_t cat_width(int cat)
{
	size_t w = strlen(cat_name(cat)) + 1;
	return w < 7 ? 7 : w;
}

static void out_cat_titles(tout *o, const tcols *c)
{
	for (int i = 0; i < c->ncats; i++) {
		char tmp[32];
		snprintf(tmp, sizeof tmp, "%s%%", cat_name(c->cats[i]));
		out_spaces(o, 2 + cat_width(c->cats[i]) - strlen(tmp));
		out_str(o, tmp);
	}
}

static void out_cat_values(tout *o, const tcols *c, const double *cat_ns,
			   const uint64_t *cat_samples)
{
	for (int i = 0; i < c->ncats; i++) {
		int k = c->cats[i];
		char tmp[32];
		snprintf(tmp, sizeof tmp, "%.1f%%", pct(c, metric_total(c, cat_ns[k], cat_samples[k])));
		size_t w = cat_width(k);
		out_spaces(o, 2 + (strlen(tmp) < w ? w - strlen(tmp) : 0));
		out_str(o, tmp);
	}
}

/* ---- time histograms */

/* One character per bucket, scaled to the row's fullest bucket: blank for no sample, then
 * eight levels, level = ceil(8 x samples / max), so any sample shows. */
static void out_when(tout *o, const tcols *c, const uint64_t *row)
{
	static const char ascii[] = ".:-=+*#@";
	const nt_tree *t = c->t;
	uint32_t wb = t->wb;
	/* density: samples per fine bucket, as display buckets differ by one fine bucket */
	double max = 0;
	for (uint32_t i = 0; i < wb; i++)
		if (row[i] && (double)row[i] / t->wn[i] > max)
			max = (double)row[i] / t->wn[i];
	for (uint32_t i = 0; i < wb; i++) {
		if (!row[i]) {
			out_raw(o, " ", 1);
			continue;
		}
		int lv = (int)ceil(8.0 * ((double)row[i] / t->wn[i]) / max - 1e-9); /* 1..8 */
		lv = lv < 1 ? 1 : lv > 8 ? 8 : lv;
		if (c->po->ascii) {
			out_raw(o, ascii + lv - 1, 1);
		} else {
			/* U+2581 LOWER ONE EIGHTH BLOCK .. U+2588 FULL BLOCK */
			char u[3] = {(char)0xe2, (char)0x96, (char)(0x80 + lv)};
			out_raw(o, u, 3);
		}
	}
}

/* The column title: "when" padded (or cut) to the histogram's width. */
static void out_when_title(tout *o, const tcols *c)
{
	uint32_t wb = c->t->wb;
	out_str(o, "  ");
	out_raw(o, "when", wb < 4 ? wb : 4);
	if (wb > 4)
		out_spaces(o, wb - 4);
}

static void out_header(tout *o, const tcols *c)
{
	const nt_tree *t = c->t;
	const nt_tree_print_opts *po = c->po;
	const nt_tree_node *root = &t->nodes[0].pub;
	char a[48], b[48];
	out_fmt(o, "Sessions:  %zu\n", t->nsess);
	for (size_t i = 0; i < t->nsess; i++) {
		const tsession *s = &t->sess[i];
		out_fmt(o, "  [%zu] ", i + 1);
		out_name(o, s->name);
		if (s->has_samples) {
			fmt_secs(a, sizeof a, s->first_s);
			fmt_secs(b, sizeof b, s->last_s);
			out_fmt(o, ": %" PRIu64 " sample%s, %s .. %s", s->samples,
				s->samples == 1 ? "" : "s", a, b);
			if (s->weight_ns > 0) {
				/* the weight of a sample: often not the declared interval (the
				 * runtime sleeps that long after each round of samples) */
				fmt_time(a, sizeof a, s->weight_ns, NT_TREE_UNIT_AUTO);
				out_fmt(o, "; 1 sample = %s", a);
				if (s->declared_ns) {
					fmt_time(a, sizeof a, (double)s->declared_ns, NT_TREE_UNIT_AUTO);
					out_fmt(o, " (declared %s)", a);
				}
			}
			out_str(o, "\n");
			if (s->pauses) {
				fmt_time(a, sizeof a, (double)s->pause_ns, NT_TREE_UNIT_AUTO);
				fmt_time(b, sizeof b, s->gc_charged_ns, NT_TREE_UNIT_AUTO);
				out_fmt(o, "      GC pauses: %" PRIu64 ", %s; as gc time of the threads "
					   "they stopped: %s\n", s->pauses, a, b);
			}
		} else {
			out_str(o, ": no samples\n");
		}
	}
	out_fmt(o, "Samples:   %" PRIu64 "\n", root->samples);
	if (po->unit != NT_UNIT_SAMPLES) {
		fmt_time(a, sizeof a, root->total_ns, NT_TREE_UNIT_AUTO);
		out_fmt(o, "Time:      %s\n", a);
	}
	if (po->selection && po->selection[0]) {
		out_str(o, "Selected:  ");
		out_name(o, po->selection);
		out_str(o, "\n");
	}
	if (po->when) {
		const nt_tree_when_info *w = &t->winfo;
		out_str(o, "When:      |");
		out_when(o, c, t->nwhen);
		fmt_secs(a, sizeof a, (double)w->start_ns / 1e9);
		fmt_secs(b, sizeof b, (double)w->end_ns / 1e9);
		out_fmt(o, "|  %" PRIu64 " sample%s, %s .. %s, %" PRIu32 " buckets of ", w->samples,
			w->samples == 1 ? "" : "s", a, b, w->buckets);
		fmt_time(a, sizeof a, (double)(w->end_ns - w->start_ns) / w->buckets,
			 NT_TREE_UNIT_AUTO);
		out_fmt(o, "%s, busiest %" PRIu64 "\n", a, w->peak);
	}
	if (po->by_category && c->ncats) {
		out_str(o, "Categories:");
		for (int i = 0; i < c->ncats; i++) {
			int k = c->cats[i];
			if (po->unit == NT_UNIT_SAMPLES)
				snprintf(a, sizeof a, "%" PRIu64, root->cat_samples[k]);
			else
				fmt_time(a, sizeof a, root->cat_ns[k], NT_TREE_UNIT_AUTO);
			out_fmt(o, "%s %s %.1f%% (%s)", i ? "," : "", cat_name(k),
				pct(c, metric_total(c, root->cat_ns[k], root->cat_samples[k])), a);
		}
		out_str(o, "\n");
	}
	/* View: how to read what follows. */
	out_str(o, "View:      ");
	if (po->by_subsystem) {
		out_str(o, "time per subsystem: self (the subsystem that decides, from the leaf) "
			   "and total (anywhere on the stack)");
	} else if (po->top) {
		out_fmt(o, "top %zu functions by self and by total", po->top);
	} else {
		out_str(o, t->o.invert ? "bottom-up (callers below each function)"
				       : "top-down (callees below each caller)");
		if (t->o.per_thread)
			out_str(o, ", per thread");
		if (po->hot)
			out_str(o, t->o.per_thread ? ", hot path of each thread" : ", hot path only");
		if (po->max_depth)
			out_fmt(o, ", depth <= %" PRIu32, po->max_depth);
		if (po->min_percent > 0)
			out_fmt(o, ", hiding nodes < %g%%", po->min_percent);
	}
	out_fmt(o, "\nUnits:     %% of the total %s; ", t->o.by_samples ? "samples" : "time");
	if (po->unit == NT_TREE_UNIT_AUTO)
		out_str(o, "time auto-scaled (s, ms, us, ns)\n");
	else if (po->unit == NT_UNIT_SAMPLES)
		out_str(o, "counts in samples\n");
	else
		out_fmt(o, "time in %s\n", unit_name(po->unit));
	if (po->when)
		out_str(o, "           when: samples over time, each row scaled to its busiest "
			   "bucket\n");
	out_str(o, "\n");
}

/* ---- the tree */

static int visible(const tcols *c, const nt_tree_node *n)
{
	const nt_tree_print_opts *po = c->po;
	if (po->max_depth && n->depth > po->max_depth)
		return 0;
	if (po->min_percent > 0 && pct(c, metric_total(c, n->total_ns, n->samples)) < po->min_percent)
		return 0;
	return 1;
}

static void out_tree_titles(tout *o, const tcols *c)
{
	out_fmt(o, "%7s  %7s", "total%", "self%");
	if (c->po->unit != NT_UNIT_SAMPLES)
		out_fmt(o, "  %11s", c->po->unit == NT_TREE_UNIT_AUTO ? "time" : unit_name(c->po->unit));
	out_fmt(o, "  %8s", "samples");
	out_cat_titles(o, c);
	if (c->po->when)
		out_when_title(o, c);
	out_str(o, "  frame\n");
}

/* Columns before the name of a tree row (and of a flat row: flat = 1). */
static size_t row_prefix_of(const tcols *c, int flat)
{
	size_t w = flat ? 7 + 2 + 7 + 2 + 11 + 2 + 11 : 7 + 2 + 7 + 2 + 8;
	if (!flat && c->po->unit != NT_UNIT_SAMPLES)
		w += 2 + 11;
	for (int i = 0; i < c->ncats; i++)
		w += 2 + cat_width(c->cats[i]);
	if (c->po->when)
		w += 2 + c->t->wb;
	return w + 2;
}

static size_t row_prefix(const tcols *c)
{
	return row_prefix_of(c, 0);
}

static void out_tree_row(tout *o, const tcols *c, const nt_tree_node *n)
{
	char tb[48];
	out_fmt(o, "%6.1f%%  %6.1f%%", pct(c, metric_total(c, n->total_ns, n->samples)),
		pct(c, metric_total(c, n->self_ns, n->self_samples)));
	if (c->po->unit != NT_UNIT_SAMPLES) {
		fmt_time(tb, sizeof tb, n->total_ns, c->po->unit);
		out_fmt(o, "  %11s", tb);
	}
	out_fmt(o, "  %8" PRIu64, n->samples);
	out_cat_values(o, c, n->cat_ns, n->cat_samples);
	if (c->po->when) {
		out_str(o, "  ");
		out_when(o, c, n->when);
	}
	out_str(o, "  ");
	out_spaces(o, 2 * (size_t)(n->depth - 1));
	out_row_name(o, c->po, n->name, row_prefix(c) + 2 * (size_t)(n->depth - 1));
	out_str(o, "\n");
}

/* Depth-first, children in their order, with an explicit stack: stacks may be tens of
 * thousands of frames deep, too deep for recursion. */
static void out_tree(tout *o, const tcols *c)
{
	const nt_tree *t = c->t;
	const nt_tree_node **st = NULL;
	size_t n = 0, cap = 0;
	const nt_tree_node *root = &t->nodes[0].pub;
	/* Push the visible children of node in reverse, so the first pops first. The hot
	 * path keeps only the first (hottest) child, except below the root of a per-thread
	 * tree: there it is each thread's hot path. */
#define PUSH_CHILDREN(node)                                                                 \
	do {                                                                                \
		int all_ = !c->po->hot || ((node)->kind == NT_TREE_ROOT && t->o.per_thread); \
		size_t nk_ = all_ ? (node)->nchildren : (node)->nchildren ? 1 : 0;           \
		if (nt_grow((void **)&st, &cap, n + nk_, sizeof *st)) {                      \
			o->rc = NT_ENOMEM;                                                   \
			goto done;                                                           \
		}                                                                            \
		for (size_t j_ = nk_; j_-- > 0;)                                             \
			if (visible(c, (node)->children[j_]))                                \
				st[n++] = (node)->children[j_];                              \
	} while (0)
	PUSH_CHILDREN(root);
	while (n && !o->rc) {
		const nt_tree_node *nd = st[--n];
		out_tree_row(o, c, nd);
		PUSH_CHILDREN(nd);
	}
#undef PUSH_CHILDREN
done:
	free(st);
}

/* ---- flat lists */

/* The title line of a flat list (functions or subsystems): self%, total%, the self and
 * total columns (a fixed time unit goes in their titles; auto values carry their own,
 * samples need none), the categories and the histogram shown, then label. */
static void out_flat_title(tout *o, const tcols *c, const char *label)
{
	const nt_tree_print_opts *po = c->po;
	const char *u = po->unit == NT_TREE_UNIT_AUTO || po->unit == NT_UNIT_SAMPLES
				? "" : unit_name(po->unit);
	char ts[24], tt[24];
	snprintf(ts, sizeof ts, "self%s%s", *u ? " " : "", u);
	snprintf(tt, sizeof tt, "total%s%s", *u ? " " : "", u);
	out_fmt(o, "%7s  %7s  %11s  %11s", "self%", "total%", ts, tt);
	out_cat_titles(o, c);
	if (po->when)
		out_when_title(o, c);
	out_fmt(o, "  %s\n", label);
}

/* One row of a flat list, with the columns of out_flat_title(). */
static void out_flat_row(tout *o, const tcols *c, const char *name, double self_ns,
			 uint64_t self_samples, double total_ns, uint64_t total_samples,
			 const double *cat_ns, const uint64_t *cat_samples, const uint64_t *when)
{
	const nt_tree_print_opts *po = c->po;
	char a[48], b[48];
	if (po->unit == NT_UNIT_SAMPLES) {
		snprintf(a, sizeof a, "%" PRIu64, self_samples);
		snprintf(b, sizeof b, "%" PRIu64, total_samples);
	} else {
		fmt_time(a, sizeof a, self_ns, po->unit);
		fmt_time(b, sizeof b, total_ns, po->unit);
	}
	out_fmt(o, "%6.1f%%  %6.1f%%  %11s  %11s", pct(c, metric_total(c, self_ns, self_samples)),
		pct(c, metric_total(c, total_ns, total_samples)), a, b);
	out_cat_values(o, c, cat_ns, cat_samples);
	if (po->when) {
		out_str(o, "  ");
		out_when(o, c, when);
	}
	out_str(o, "  ");
	out_row_name(o, po, name, row_prefix_of(c, 1));
	out_str(o, "\n");
}

static void out_flat(tout *o, const tcols *c, int order)
{
	const nt_tree *t = c->t;
	const nt_tree_print_opts *po = c->po;
	size_t n = po->top < t->nfuncs ? po->top : t->nfuncs;
	const char *what = t->o.by_samples ? "samples" : "time";
	out_fmt(o, "Top %zu functions by %s %s:\n", po->top, order == NT_TREE_BY_SELF ? "self" : "total",
		what);
	out_flat_title(o, c, "function");
	for (size_t i = 0; i < n && !o->rc; i++) {
		const nt_tree_func *f = order == NT_TREE_BY_SELF ? t->by_self[i] : t->by_total[i];
		out_flat_row(o, c, f->name, f->self_ns, f->self_samples, f->total_ns, f->total_samples,
			     f->cat_ns, f->cat_samples, f->when);
	}
}

/* ---- subsystems */

/* One row per subsystem with samples, by self: self% and total% of the tree, self and
 * total time (or samples), the self share of each category shown, the histogram. */
static void out_subsystems(tout *o, const tcols *c)
{
	const nt_tree *t = c->t;
	out_flat_title(o, c, "subsystem");
	for (size_t i = 0; i < t->nsub_shown && !o->rc; i++) {
		const nt_tree_subsystem *s = t->sub_by_self[i];
		out_flat_row(o, c, s->name, s->self_ns, s->self_samples, s->total_ns,
			     s->total_samples, s->cat_ns, s->cat_samples, s->when);
	}
}

int nt_tree_write_text(const nt_tree *t, const nt_tree_print_opts *opts, const nt_sink *sink,
		       nt_error *err)
{
	if (!t || !sink || !sink->write) {
		NT_ASSERT(t && sink && sink->write);
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_tree_write_text: NULL argument");
	}
	nt_tree_print_opts po;
	memset(&po, 0, sizeof po);
	po.unit = NT_TREE_UNIT_AUTO;
	if (opts) {
		size_t n = opts->sz < sizeof po ? opts->sz : sizeof po;
		memcpy(&po, opts, n);
	}
	po.sz = sizeof po;
	if (po.unit != NT_TREE_UNIT_AUTO && (po.unit < NT_UNIT_SAMPLES || po.unit > NT_UNIT_MS))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "unknown time unit %d", po.unit);
	if (!(po.min_percent >= 0) || po.min_percent > 100)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "min_percent %g is not in 0..100",
			       po.min_percent);
	if (po.when && !t->wb)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "the call tree has no time histograms "
			       "(build it with nt_tree_opts.when_buckets)");
	if (po.by_subsystem && !t->nsubs)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "the call tree has no subsystems "
			       "(its profile needs nt_profile_opts.subsystems)");

	tcols c;
	memset(&c, 0, sizeof c);
	c.t = t;
	c.po = &po;
	const nt_tree_node *root = &t->nodes[0].pub;
	c.total = metric_total(&c, root->total_ns, root->samples);
	if (po.by_category)
		for (int k = 0; k < NT_CAT_COUNT; k++)
			if (root->cat_samples[k] || root->cat_ns[k] != 0)
				c.cats[c.ncats++] = k;

	tout o = {sink, NULL, 0, 0, 0};
	if (!po.no_header)
		out_header(&o, &c);
	if (po.by_subsystem) {
		out_subsystems(&o, &c);
	} else if (po.top) {
		out_flat(&o, &c, NT_TREE_BY_SELF);
		out_str(&o, "\n");
		out_flat(&o, &c, NT_TREE_BY_TOTAL);
	} else {
		out_tree_titles(&o, &c);
		out_tree(&o, &c);
	}
	out_flush(&o);
	free(o.buf);
	if (o.rc == NT_ENOMEM)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing the call tree");
	if (o.rc)
		return nt_fail(err, o.rc, NT_NO_OFFSET, "cannot write the call tree");
	return 0;
}
