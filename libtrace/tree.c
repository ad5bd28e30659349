/* SPDX-License-Identifier: MIT */
/* tree.c - call trees: merges the sample groups of a profile (profile.c) by call path into
 * nodes with self and total weight, samples and a per-category breakdown; builds the
 * bottom-up (inverted) variant and per-thread roots on request; keeps flat per-function
 * statistics (total counted once per sample even through recursion). The model's types
 * are in tree.h; the text rendering of the tree, its hot path and the top-N lists is
 * tree-print.c.
 *
 * With nt_tree_opts.when_buckets, every node, function and subsystem also gets a time
 * histogram (the profile's fine time buckets rebinned into display buckets); when the
 * profile classifies subsystems, the tree keeps the time per subsystem (self, total, by
 * category) for the --by-subsystem table.
 *
 * Sections: string pool and name interning; node table; building (one pass over the
 * groups); sealing (children arrays, sort orders); queries.
 * Memory grows with distinct call paths and distinct names, never with samples: a node is
 * found from (parent, name) through one hash table, names are interned once by text.
 * Not here: weighting and categories (profile.c), folded output (fold.c). */
#include "internal.h"
#include "tree.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* ------------------------------------------------------------------ string pool */

/* Names are interned in t->strs (nt_strpool): a name's pool id is its index in t->names. */

static uint64_t hash_edge(uint32_t parent, uint32_t name)
{
	return nt_mix64(((uint64_t)parent << 32) ^ name ^ 0x9e3779b97f4a7c15ull);
}

/* ------------------------------------------------------------------ names */

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
static int64_t find_name(const nt_tree *t, const char *s, size_t n)
{
	return nt_strpool_find(&t->strs, s, n, nt_strpool_hash(s, n));
}

/* Interns s[0..n); returns its index or -1 when out of memory (or past the limit). */
static int64_t intern(nt_tree *t, const char *s, size_t n)
{
	uint64_t h = nt_strpool_hash(s, n);
	int64_t i = nt_strpool_find(&t->strs, s, n, h);
	if (i >= 0)
		return i;
	if (nt_grow((void **)&t->names, &t->namecap, t->nnames + 1, sizeof(tname)) ||
	    when_row(t, &t->fwhen, &t->fwhencap, t->nnames))
		return -1;
	i = nt_strpool_intern_h(&t->strs, s, n, h);
	if (i < 0)
		return -1;
	NT_ASSERT((size_t)i == t->nnames);
	tname *nm = &t->names[t->nnames];
	memset(nm, 0, sizeof *nm);
	nm->f.name = t->strs.ents[i].s;
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

/* Node i's hash in the node table (hash.c's slots); the root (0) is no one's child. */
static int node_hash_of(const void *ctx, size_t i, uint64_t *h)
{
	const nt_tree *t = ctx;
	*h = hash_edge(t->nodes[i].parent, t->nodes[i].name);
	return i > 0;
}

/* Child of parent named name (created when absent): its index, or -1 when out of memory,
 * -2 past the node limit. */
static int64_t child_of(nt_tree *t, uint32_t parent, uint32_t name, int kind)
{
	uint64_t h = hash_edge(parent, name);
	if (t->node_htcap) {
		size_t k = (size_t)h & (t->node_htcap - 1);
		while (t->node_ht[k]) {
			const tnode *n = &t->nodes[t->node_ht[k] - 1];
			if (n->parent == parent && n->name == name)
				return t->node_ht[k] - 1;
			k = (k + 1) & (t->node_htcap - 1);
		}
	}
	/* Indexes must fit uint32 with NO_NODE left free. */
	if (t->nnodes >= UINT32_MAX - 1)
		return -2;
	if ((t->nnodes + 1) * 2 > t->node_htcap &&
	    nt_slots_regrow(&t->node_ht, &t->node_htcap, 1024, t->nnodes, node_hash_of, t))
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
	t->node_ht[k] = (uint32_t)t->nnodes + 1;
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
	nt_strpool_free(&t->strs);
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
		double f = si->header->qpc_frequency ? (double)si->header->qpc_frequency : 1.0;
		/* signed: a sample may precede the session start (spec: RuntimeInit example) */
		s->first_s = (double)(int64_t)(si->first_ts - si->header->sync_qpc) / f;
		s->last_s = (double)(int64_t)(si->last_ts - si->header->sync_qpc) / f;
		s->weight_ns = si->sample_weight_ns;
		s->declared_ns = si->header->expected_sampling_ns;
		s->pauses = si->pauses->pauses;
		s->pause_ns = si->pauses->pause_ns;
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
		nt_when_grid gr = NT_INIT(nt_when_grid);
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
			t->subs[i].pub.name = nt_strpool_dup(&t->strs, nm, strlen(nm));
			if (!t->subs[i].pub.name)
				return TREE_NOMEM(err);
		}
	}
	return 0;
}

int nt_tree_new(nt_tree **out, nt_profile *p, const nt_tree_opts *opts, nt_error *err)
{
	nt_error_clear(err);
	nt_tree *t = NULL;
	if (!out || !p) {
		NT_ASSERT(out && p);
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_tree_new: NULL argument");
	}
	*out = NULL;
	nt_tree_opts to;
	int rc = nt_opts_load(&to, sizeof to, sizeof to, opts, "tree options", err);
	if (rc)
		return rc;
	rc = nt_profile_finish(p, err);
	if (rc)
		return rc;
	t = calloc(1, sizeof *t);
	if (!t)
		return TREE_NOMEM(err);
	t->o = to;
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
		int64_t nm = find_name(t, path[i], len);
		if (nm < 0 || !t->node_htcap)
			return NULL;
		size_t k = (size_t)hash_edge(cur, (uint32_t)nm) & (t->node_htcap - 1);
		uint32_t found = 0;
		while (t->node_ht[k]) {
			const tnode *c = &t->nodes[t->node_ht[k] - 1];
			if (c->parent == cur && c->name == (uint32_t)nm) {
				found = t->node_ht[k] - 1;
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
	if (out && nt_out_store(out, &t->winfo, sizeof t->winfo, sizeof t->winfo))
		return 0;
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
