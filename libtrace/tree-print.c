/* SPDX-License-Identifier: MIT */
/* tree-print.c - renders a call tree (tree.c) as text through an nt_sink: the header
 * (sessions, totals, categories), the tree or its hot path, the flat top-N lists, the
 * subsystem table and time histograms (nt_tree_write_text, nt_tree_fmt_time). */
#include "internal.h"
#include "tree.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* ------------------------------------------------------------------ text output */

/* Text goes through nt_out (out.c): buffered, the first failure sticks. */

static void out_spaces(nt_out *o, size_t n)
{
	static const char sp[] = "                                ";
	while (n) {
		size_t k = n < sizeof sp - 1 ? n : sizeof sp - 1;
		nt_out_put(o, sp, k);
		n -= k;
	}
}

/* A name on one line: control characters (a newline in a native symbol, say) print as
 * '?' so that every row stays one line. */
static void out_name_n(nt_out *o, const char *s, size_t n)
{
	const char *run = s, *e = s + n;
	for (; s < e; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			nt_out_put(o, run, (size_t)(s - run));
			nt_out_put(o, "?", 1);
			run = s + 1;
		}
	}
	nt_out_put(o, run, (size_t)(s - run));
}

static void out_name(nt_out *o, const char *s)
{
	out_name_n(o, s, strlen(s));
}

/* A row's name after `used` columns: cut in the middle to fit the width (if any). */
static void out_row_name(nt_out *o, const nt_tree_print_opts *po, const char *s, size_t used)
{
	size_t n = strlen(s), head, tail;
	const char *mark;
	if (po->width && nt_text_cut_middle(s, n, po->width > used ? po->width - used : 1,
					    po->ascii, &head, &tail, &mark)) {
		out_name_n(o, s, head);
		nt_out_str(o, mark);
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

static void out_cat_titles(nt_out *o, const tcols *c)
{
	for (int i = 0; i < c->ncats; i++) {
		char tmp[32];
		snprintf(tmp, sizeof tmp, "%s%%", cat_name(c->cats[i]));
		out_spaces(o, 2 + cat_width(c->cats[i]) - strlen(tmp));
		nt_out_str(o, tmp);
	}
}

static void out_cat_values(nt_out *o, const tcols *c, const double *cat_ns,
			   const uint64_t *cat_samples)
{
	for (int i = 0; i < c->ncats; i++) {
		int k = c->cats[i];
		char tmp[32];
		snprintf(tmp, sizeof tmp, "%.1f%%", pct(c, metric_total(c, cat_ns[k], cat_samples[k])));
		size_t w = cat_width(k);
		out_spaces(o, 2 + (strlen(tmp) < w ? w - strlen(tmp) : 0));
		nt_out_str(o, tmp);
	}
}

/* ---- time histograms */

/* One character per bucket, scaled to the row's fullest bucket: blank for no sample, then
 * eight levels, level = ceil(8 x samples / max), so any sample shows. */
static void out_when(nt_out *o, const tcols *c, const uint64_t *row)
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
			nt_out_put(o, " ", 1);
			continue;
		}
		int lv = (int)ceil(8.0 * ((double)row[i] / t->wn[i]) / max - 1e-9); /* 1..8 */
		lv = lv < 1 ? 1 : lv > 8 ? 8 : lv;
		if (c->po->ascii) {
			nt_out_put(o, ascii + lv - 1, 1);
		} else {
			/* U+2581 LOWER ONE EIGHTH BLOCK .. U+2588 FULL BLOCK */
			char u[3] = {(char)0xe2, (char)0x96, (char)(0x80 + lv)};
			nt_out_put(o, u, 3);
		}
	}
}

/* The column title: "when" padded (or cut) to the histogram's width. */
static void out_when_title(nt_out *o, const tcols *c)
{
	uint32_t wb = c->t->wb;
	nt_out_str(o, "  ");
	nt_out_put(o, "when", wb < 4 ? wb : 4);
	if (wb > 4)
		out_spaces(o, wb - 4);
}

static void out_header(nt_out *o, const tcols *c)
{
	const nt_tree *t = c->t;
	const nt_tree_print_opts *po = c->po;
	const nt_tree_node *root = &t->nodes[0].pub;
	char a[48], b[48];
	nt_out_printf(o, "Sessions:  %zu\n", t->nsess);
	for (size_t i = 0; i < t->nsess; i++) {
		const tsession *s = &t->sess[i];
		nt_out_printf(o, "  [%zu] ", i + 1);
		out_name(o, s->name);
		if (s->has_samples) {
			fmt_secs(a, sizeof a, s->first_s);
			fmt_secs(b, sizeof b, s->last_s);
			nt_out_printf(o, ": %" PRIu64 " sample%s, %s .. %s", s->samples,
				s->samples == 1 ? "" : "s", a, b);
			if (s->weight_ns > 0) {
				/* the weight of a sample: often not the declared interval (the
				 * runtime sleeps that long after each round of samples) */
				fmt_time(a, sizeof a, s->weight_ns, NT_TREE_UNIT_AUTO);
				nt_out_printf(o, "; 1 sample = %s", a);
				if (s->declared_ns) {
					fmt_time(a, sizeof a, (double)s->declared_ns, NT_TREE_UNIT_AUTO);
					nt_out_printf(o, " (declared %s)", a);
				}
			}
			nt_out_str(o, "\n");
			if (s->pauses) {
				fmt_time(a, sizeof a, (double)s->pause_ns, NT_TREE_UNIT_AUTO);
				fmt_time(b, sizeof b, s->gc_charged_ns, NT_TREE_UNIT_AUTO);
				nt_out_printf(o, "      GC pauses: %" PRIu64 ", %s; as gc time of the threads "
					   "they stopped: %s\n", s->pauses, a, b);
			}
		} else {
			nt_out_str(o, ": no samples\n");
		}
	}
	nt_out_printf(o, "Samples:   %" PRIu64 "\n", root->samples);
	if (po->unit != NT_UNIT_SAMPLES) {
		fmt_time(a, sizeof a, root->total_ns, NT_TREE_UNIT_AUTO);
		nt_out_printf(o, "Time:      %s\n", a);
	}
	if (po->selection && po->selection[0]) {
		nt_out_str(o, "Selected:  ");
		out_name(o, po->selection);
		nt_out_str(o, "\n");
	}
	if (po->when) {
		const nt_tree_when_info *w = &t->winfo;
		nt_out_str(o, "When:      |");
		out_when(o, c, t->nwhen);
		fmt_secs(a, sizeof a, (double)w->start_ns / 1e9);
		fmt_secs(b, sizeof b, (double)w->end_ns / 1e9);
		nt_out_printf(o, "|  %" PRIu64 " sample%s, %s .. %s, %" PRIu32 " buckets of ", w->samples,
			w->samples == 1 ? "" : "s", a, b, w->buckets);
		fmt_time(a, sizeof a, (double)(w->end_ns - w->start_ns) / w->buckets,
			 NT_TREE_UNIT_AUTO);
		nt_out_printf(o, "%s, busiest %" PRIu64 "\n", a, w->peak);
	}
	if (po->by_category && c->ncats) {
		nt_out_str(o, "Categories:");
		for (int i = 0; i < c->ncats; i++) {
			int k = c->cats[i];
			if (po->unit == NT_UNIT_SAMPLES)
				snprintf(a, sizeof a, "%" PRIu64, root->cat_samples[k]);
			else
				fmt_time(a, sizeof a, root->cat_ns[k], NT_TREE_UNIT_AUTO);
			nt_out_printf(o, "%s %s %.1f%% (%s)", i ? "," : "", cat_name(k),
				pct(c, metric_total(c, root->cat_ns[k], root->cat_samples[k])), a);
		}
		nt_out_str(o, "\n");
	}
	/* View: how to read what follows. */
	nt_out_str(o, "View:      ");
	if (po->by_subsystem) {
		nt_out_str(o, "time per subsystem: self (the subsystem that decides, from the leaf) "
			   "and total (anywhere on the stack)");
	} else if (po->top) {
		nt_out_printf(o, "top %zu functions by self and by total", po->top);
	} else {
		nt_out_str(o, t->o.invert ? "bottom-up (callers below each function)"
				       : "top-down (callees below each caller)");
		if (t->o.per_thread)
			nt_out_str(o, ", per thread");
		if (po->hot)
			nt_out_str(o, t->o.per_thread ? ", hot path of each thread" : ", hot path only");
		if (po->max_depth)
			nt_out_printf(o, ", depth <= %" PRIu32, po->max_depth);
		if (po->min_percent > 0)
			nt_out_printf(o, ", hiding nodes < %g%%", po->min_percent);
	}
	nt_out_printf(o, "\nUnits:     %% of the total %s; ", t->o.by_samples ? "samples" : "time");
	if (po->unit == NT_TREE_UNIT_AUTO)
		nt_out_str(o, "time auto-scaled (s, ms, us, ns)\n");
	else if (po->unit == NT_UNIT_SAMPLES)
		nt_out_str(o, "counts in samples\n");
	else
		nt_out_printf(o, "time in %s\n", unit_name(po->unit));
	if (po->when)
		nt_out_str(o, "           when: samples over time, each row scaled to its busiest "
			   "bucket\n");
	nt_out_str(o, "\n");
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

static void out_tree_titles(nt_out *o, const tcols *c)
{
	nt_out_printf(o, "%7s  %7s", "total%", "self%");
	if (c->po->unit != NT_UNIT_SAMPLES)
		nt_out_printf(o, "  %11s", c->po->unit == NT_TREE_UNIT_AUTO ? "time" : unit_name(c->po->unit));
	nt_out_printf(o, "  %8s", "samples");
	out_cat_titles(o, c);
	if (c->po->when)
		out_when_title(o, c);
	nt_out_str(o, "  frame\n");
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

static void out_tree_row(nt_out *o, const tcols *c, const nt_tree_node *n)
{
	char tb[48];
	nt_out_printf(o, "%6.1f%%  %6.1f%%", pct(c, metric_total(c, n->total_ns, n->samples)),
		pct(c, metric_total(c, n->self_ns, n->self_samples)));
	if (c->po->unit != NT_UNIT_SAMPLES) {
		fmt_time(tb, sizeof tb, n->total_ns, c->po->unit);
		nt_out_printf(o, "  %11s", tb);
	}
	nt_out_printf(o, "  %8" PRIu64, n->samples);
	out_cat_values(o, c, n->cat_ns, n->cat_samples);
	if (c->po->when) {
		nt_out_str(o, "  ");
		out_when(o, c, n->when);
	}
	nt_out_str(o, "  ");
	out_spaces(o, 2 * (size_t)(n->depth - 1));
	out_row_name(o, c->po, n->name, row_prefix(c) + 2 * (size_t)(n->depth - 1));
	nt_out_str(o, "\n");
}

/* Depth-first, children in their order, with an explicit stack: stacks may be tens of
 * thousands of frames deep, too deep for recursion. */
static void out_tree(nt_out *o, const tcols *c)
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
static void out_flat_title(nt_out *o, const tcols *c, const char *label)
{
	const nt_tree_print_opts *po = c->po;
	const char *u = po->unit == NT_TREE_UNIT_AUTO || po->unit == NT_UNIT_SAMPLES
				? "" : unit_name(po->unit);
	char ts[24], tt[24];
	snprintf(ts, sizeof ts, "self%s%s", *u ? " " : "", u);
	snprintf(tt, sizeof tt, "total%s%s", *u ? " " : "", u);
	nt_out_printf(o, "%7s  %7s  %11s  %11s", "self%", "total%", ts, tt);
	out_cat_titles(o, c);
	if (po->when)
		out_when_title(o, c);
	nt_out_printf(o, "  %s\n", label);
}

/* One row of a flat list, with the columns of out_flat_title(). */
static void out_flat_row(nt_out *o, const tcols *c, const char *name, double self_ns,
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
	nt_out_printf(o, "%6.1f%%  %6.1f%%  %11s  %11s", pct(c, metric_total(c, self_ns, self_samples)),
		pct(c, metric_total(c, total_ns, total_samples)), a, b);
	out_cat_values(o, c, cat_ns, cat_samples);
	if (po->when) {
		nt_out_str(o, "  ");
		out_when(o, c, when);
	}
	nt_out_str(o, "  ");
	out_row_name(o, po, name, row_prefix_of(c, 1));
	nt_out_str(o, "\n");
}

static void out_flat(nt_out *o, const tcols *c, int order)
{
	const nt_tree *t = c->t;
	const nt_tree_print_opts *po = c->po;
	size_t n = po->top < t->nfuncs ? po->top : t->nfuncs;
	const char *what = t->o.by_samples ? "samples" : "time";
	nt_out_printf(o, "Top %zu functions by %s %s:\n", po->top, order == NT_TREE_BY_SELF ? "self" : "total",
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
static void out_subsystems(nt_out *o, const tcols *c)
{
	const nt_tree *t = c->t;
	out_flat_title(o, c, "subsystem");
	for (size_t i = 0; i < t->nsub_shown && !o->rc; i++) {
		const nt_tree_subsystem *s = t->sub_by_self[i];
		out_flat_row(o, c, s->name, s->self_ns, s->self_samples, s->total_ns,
			     s->total_samples, s->cat_ns, s->cat_samples, s->when);
	}
}

int nt_tree_print_opts_load(nt_tree_print_opts *po, const nt_tree_print_opts *opts,
			    nt_error *err)
{
	int orc = nt_opts_load(po, sizeof *po, sizeof *po, opts, "tree print options", err);
	if (orc)
		return orc;
	if (po->unit == NT_UNIT_DEFAULT)
		po->unit = NT_TREE_UNIT_AUTO;
	if (po->unit != NT_TREE_UNIT_AUTO && (po->unit < NT_UNIT_SAMPLES || po->unit > NT_UNIT_MS))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "unknown time unit %d", po->unit);
	if (!(po->min_percent >= 0) || po->min_percent > 100)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "min_percent %g is not in 0..100",
			       po->min_percent);
	return 0;
}

int nt_tree_write_text(const nt_tree *t, const nt_tree_print_opts *opts, const nt_sink *sink,
		       nt_error *err)
{
	nt_error_clear(err);
	if (!t || !sink || !sink->write) {
		NT_ASSERT(t && sink && sink->write);
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_tree_write_text: NULL argument");
	}
	nt_tree_print_opts po;
	int orc = nt_tree_print_opts_load(&po, opts, err);
	if (orc)
		return orc;
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

	nt_out o;
	nt_out_init(&o, sink);
	if (!po.no_header)
		out_header(&o, &c);
	if (po.by_subsystem) {
		out_subsystems(&o, &c);
	} else if (po.top) {
		out_flat(&o, &c, NT_TREE_BY_SELF);
		nt_out_str(&o, "\n");
		out_flat(&o, &c, NT_TREE_BY_TOTAL);
	} else {
		out_tree_titles(&o, &c);
		out_tree(&o, &c);
	}
	nt_out_end(&o);
	if (o.rc == NT_ENOMEM)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing the call tree");
	if (o.rc)
		return nt_fail(err, o.rc, NT_NO_OFFSET, "cannot write the call tree");
	return 0;
}
