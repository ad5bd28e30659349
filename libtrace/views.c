/* SPDX-License-Identifier: MIT */
/* views.c - the views of a profile beside the call tree: callers and callees of one
 * function (a butterfly, as PerfView's Caller-Callee view and pprof's -peek), the
 * difference of two trees by function, the JSON form of every tree view, and the
 * shortening of names to a terminal's width (cut in the middle), which tree-print.c shares.
 * Not here: building trees (tree.c) and their text (tree-print.c), the selection (select.c). */
#include "export.h"

#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>

/* ------------------------------------------------------------------ names */

/* Display columns of UTF-8 text (continuation bytes take none). */
size_t nt_text_columns(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

/* Byte length of the first `cols` columns of s (n bytes), on a character boundary. */
static size_t prefix_bytes(const char *s, size_t n, size_t cols)
{
	size_t i = 0, c = 0;
	while (i < n) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (c == cols)
				break;
			c++;
		}
		i++;
	}
	return i;
}

/* Byte offset where the last `cols` columns of s (n bytes) start. */
static size_t suffix_start(const char *s, size_t n, size_t cols)
{
	size_t i = n, c = 0;
	while (i > 0 && c < cols) {
		i--;
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			c++;
	}
	return i;
}

int nt_text_cut_middle(const char *s, size_t n, size_t cols, int ascii, size_t *head,
		       size_t *tail_at, const char **mark)
{
	size_t have = nt_text_columns(s, n);
	if (cols == 0 || have <= cols)
		return 0;
	if (cols < NT_MIN_NAME_COLUMNS)
		cols = NT_MIN_NAME_COLUMNS;
	if (have <= cols)
		return 0;
	size_t ml = ascii ? 3 : 1;
	*mark = ascii ? "..." : "\xe2\x80\xa6"; /* U+2026 HORIZONTAL ELLIPSIS */
	size_t keep = cols - ml;
	/* the end of a frame name (method and signature) tells more than the middle of its
	 * namespace: give the tail the larger half */
	size_t hcols = keep / 2, tcols = keep - hcols;
	*head = prefix_bytes(s, n, hcols);
	*tail_at = suffix_start(s, n, tcols);
	return 1;
}

/* The name with nt_tree_opts.no_module's rule: the text after the first '!'. */
static const char *drop_module(const char *f)
{
	const char *b = strchr(f, '!');
	return b ? b + 1 : f;
}

/* ------------------------------------------------------------------ butterfly */

typedef struct bent {
	nt_butterfly_entry pub;
	uint64_t mark;       /* last group (1-based) that counted it */
} bent;

typedef struct bside {
	bent *e;             /* e[i] is the entry of the name of id i in names */
	size_t n, cap;
	nt_strpool names;    /* the entries' names, interned */
	const nt_butterfly_entry **sorted;
} bside;

struct nt_butterfly {
	nt_butterfly_opts o;
	char *func;          /* the function's name */
	nt_butterfly_entry self; /* the function: total over stacks through it, self as leaf */
	double all_ns;       /* the whole selection */
	uint64_t all_samples;
	bside side[2];
	uint64_t groups;
	int rc;
	/* choosing the function: distinct frame names matching the regex */
	regex_t re;
	int have_re;
	char **cand;
	size_t ncand, candcap;
	int exact;
};

static bent *side_get(bside *sd, const char *name)
{
	size_t n = strlen(name);
	uint64_t h = nt_strpool_hash(name, n);
	int64_t i = nt_strpool_find(&sd->names, name, n, h);
	if (i >= 0)
		return &sd->e[i];
	if (nt_grow((void **)&sd->e, &sd->cap, sd->n + 1, sizeof *sd->e) ||
	    (i = nt_strpool_intern_h(&sd->names, name, n, h)) < 0)
		return NULL;
	NT_ASSERT((size_t)i == sd->n);
	bent *e = &sd->e[sd->n++];
	memset(e, 0, sizeof *e);
	e->pub.name = sd->names.ents[i].s;
	return e;
}

static const char *frame_at(const nt_butterfly *b, const nt_sample_group *g, uint32_t i)
{
	return b->o.no_module ? drop_module(g->frames[i]) : g->frames[i];
}

/* Pass 1: the distinct names that match FUNC (exactly, or as a regex). */
static int bf_candidates(void *ctx, const nt_sample_group *g)
{
	nt_butterfly *b = ctx;
	for (uint32_t i = 0; i < g->depth && !b->exact; i++) {
		const char *f = frame_at(b, g, i);
		if (strcmp(f, b->func) == 0) {
			b->exact = 1;
			return 0;
		}
		if (!b->have_re || b->ncand > 16 || regexec(&b->re, f, 0, NULL, 0) != 0)
			continue;
		size_t k;
		for (k = 0; k < b->ncand && strcmp(b->cand[k], f) != 0; k++)
			;
		if (k < b->ncand)
			continue;
		if (nt_grow((void **)&b->cand, &b->candcap, b->ncand + 1, sizeof *b->cand) ||
		    !(b->cand[b->ncand] = nt_strdup(f))) {
			b->rc = NT_ENOMEM;
			return NT_ENOMEM;
		}
		b->ncand++;
	}
	return 0;
}

static void ent_add(bent *e, uint64_t mark, const nt_sample_group *g, int self)
{
	if (e->mark != mark) {
		e->mark = mark;
		e->pub.samples += g->samples;
		e->pub.total_ns += g->weight_ns;
	}
	if (self) {
		e->pub.self_samples += g->samples;
		e->pub.self_ns += g->weight_ns;
	}
}

/* Pass 2: per stack, the function's total (once), its self (as the leaf), and each
 * distinct caller (the frame above an occurrence, "[no caller]" at the root) and callee
 * (the frame below) once, with the stack's weight as self when the pair ends the stack. */
static int bf_group(void *ctx, const nt_sample_group *g)
{
	nt_butterfly *b = ctx;
	b->all_ns += g->weight_ns;
	b->all_samples += g->samples;
	int through = 0;
	b->groups++;
	for (uint32_t i = 0; i < g->depth; i++) {
		/* frames are leaf first: frames[i + 1] calls frames[i] */
		if (strcmp(frame_at(b, g, i), b->func) != 0)
			continue;
		if (!through) {
			through = 1;
			b->self.samples += g->samples;
			b->self.total_ns += g->weight_ns;
		}
		if (i == 0) {
			b->self.self_samples += g->samples;
			b->self.self_ns += g->weight_ns;
		}
		const char *caller = i + 1 < g->depth ? frame_at(b, g, i + 1) : "[no caller]";
		bent *e = side_get(&b->side[NT_BUTTERFLY_CALLERS], caller);
		if (!e)
			goto nomem;
		ent_add(e, b->groups, g, i == 0);
		if (i > 0) {
			e = side_get(&b->side[NT_BUTTERFLY_CALLEES], frame_at(b, g, i - 1));
			if (!e)
				goto nomem;
			ent_add(e, b->groups, g, i == 1);
		}
	}
	return 0;
nomem:
	b->rc = NT_ENOMEM;
	return NT_ENOMEM;
}

/* Heaviest first (by time, or by samples), ties by name: qsort has no context argument,
 * hence one comparator per metric (no global state). */
static int cmp_ent_by(const void *x, const void *y, int by_samples)
{
	const nt_butterfly_entry *a = *(const nt_butterfly_entry *const *)x;
	const nt_butterfly_entry *c = *(const nt_butterfly_entry *const *)y;
	double va = by_samples ? (double)a->samples : a->total_ns;
	double vc = by_samples ? (double)c->samples : c->total_ns;
	if (va != vc)
		return va > vc ? -1 : 1;
	return strcmp(a->name, c->name);
}

static int cmp_ent_ns(const void *x, const void *y)
{
	return cmp_ent_by(x, y, 0);
}

static int cmp_ent_samples(const void *x, const void *y)
{
	return cmp_ent_by(x, y, 1);
}

int nt_butterfly_new(nt_butterfly **out, nt_profile *p, const char *func,
		     const nt_butterfly_opts *opts, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	if (!p || !func || !*func)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_butterfly_new: no function");
	nt_butterfly *b = calloc(1, sizeof *b);
	if (!b)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	int orc = nt_opts_load(&b->o, sizeof b->o, sizeof b->o, opts, "butterfly options", err);
	if (orc) {
		free(b);
		return orc;
	}
	b->func = nt_strdup(func);
	if (!b->func)
		goto nomem;
	b->have_re = regcomp(&b->re, func, REG_EXTENDED | REG_ICASE | REG_NOSUB) == 0;
	int rc = nt_profile_foreach(p, bf_candidates, b);
	if (rc)
		goto fail;
	if (!b->exact) {
		if (b->ncand == 0) {
			nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no function matches '%s'", func);
			rc = NT_EINVAL;
			goto fail_msg;
		}
		if (b->ncand > 1) {
			/* the first two names, each cut to fit the message */
			char list[160];
			size_t k = 0;
			for (size_t i = 0; i < b->ncand && i < 2 && k < sizeof list; i++) {
				int w = snprintf(list + k, sizeof list - k, "%s%.70s%s", i ? ", " : "",
						 b->cand[i], strlen(b->cand[i]) > 70 ? "..." : "");
				k += w > 0 ? (size_t)w : 0;
			}
			nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
				"'%s' matches %s%zu functions (%s%s): give one exactly", func,
				b->ncand > 16 ? "more than " : "", b->ncand > 16 ? 16 : b->ncand, list,
				b->ncand > 2 ? ", ..." : "");
			rc = NT_EINVAL;
			goto fail_msg;
		}
		free(b->func);
		b->func = b->cand[0];
		b->cand[0] = NULL;
	}
	b->self.name = b->func;
	rc = nt_profile_foreach(p, bf_group, b);
	if (rc)
		goto fail;
	for (int s = 0; s < 2; s++) {
		bside *sd = &b->side[s];
		sd->sorted = malloc((sd->n ? sd->n : 1) * sizeof *sd->sorted);
		if (!sd->sorted)
			goto nomem;
		for (size_t i = 0; i < sd->n; i++)
			sd->sorted[i] = &sd->e[i].pub;
		qsort(sd->sorted, sd->n, sizeof *sd->sorted,
		      b->o.by_samples ? cmp_ent_samples : cmp_ent_ns);
	}
	*out = b;
	return 0;
nomem:
	rc = NT_ENOMEM;
fail:
	if (rc == NT_ENOMEM || b->rc == NT_ENOMEM)
		nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory finding callers and callees");
fail_msg:
	nt_butterfly_free(b);
	return rc;
}

void nt_butterfly_free(nt_butterfly *b)
{
	if (!b)
		return;
	for (int s = 0; s < 2; s++) {
		free(b->side[s].e);
		nt_strpool_free(&b->side[s].names);
		free(b->side[s].sorted);
	}
	for (size_t i = 0; i < b->ncand; i++)
		free(b->cand[i]);
	free(b->cand);
	if (b->have_re)
		regfree(&b->re);
	free(b->func);
	free(b);
}

const nt_butterfly_entry *nt_butterfly_func(const nt_butterfly *b)
{
	return &b->self;
}

size_t nt_butterfly_count(const nt_butterfly *b, int side)
{
	return side == 0 || side == 1 ? b->side[side].n : 0;
}

const nt_butterfly_entry *nt_butterfly_at(const nt_butterfly *b, int side, size_t i)
{
	if ((side != 0 && side != 1) || i >= b->side[side].n)
		return NULL;
	return b->side[side].sorted[i];
}

/* ------------------------------------------------------------------ text helpers */

typedef struct vcfg {
	int unit;         /* enum nt_unit or NT_TREE_UNIT_AUTO */
	int by_samples;
	uint32_t width;   /* 0: no limit */
	int ascii;
} vcfg;

static void out_cut(nt_out *o, const vcfg *c, const char *s, size_t used)
{
	size_t n = strlen(s), head, tail;
	const char *mark;
	size_t avail = c->width > used ? c->width - used : 0;
	if (c->width && nt_text_cut_middle(s, n, avail ? avail : 1, c->ascii, &head, &tail, &mark)) {
		nt_out_put(o, s, head);
		nt_out_str(o, mark);
		nt_out_put(o, s + tail, n - tail);
	} else {
		nt_out_put(o, s, n);
	}
}

/* Control characters print as '?' (one line per row). */
static void out_clean(nt_out *o, const vcfg *c, const char *s, size_t used)
{
	size_t n = strlen(s);
	int bad = 0;
	for (size_t i = 0; i < n; i++)
		bad |= (unsigned char)s[i] < 0x20 || s[i] == 0x7f;
	if (!bad) {
		out_cut(o, c, s, used);
		return;
	}
	char *cp = nt_strdup(s);
	if (!cp) {
		o->rc = NT_ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)cp[i] < 0x20 || cp[i] == 0x7f)
			cp[i] = '?';
	out_cut(o, c, cp, used);
	free(cp);
}

static void fmt_value(const vcfg *c, char *b, size_t n, double ns, uint64_t samples)
{
	if (c->unit == NT_UNIT_SAMPLES)
		snprintf(b, n, "%" PRIu64, samples);
	else
		nt_tree_fmt_time(b, n, ns, c->unit);
}

static double metric(const vcfg *c, double ns, uint64_t samples)
{
	return c->by_samples ? (double)samples : ns;
}

static double share(double v, double of)
{
	return of > 0 ? 100.0 * v / of : 0.0;
}

static const char *json_num(char *b, size_t n, double v)
{
	if (!isfinite(v))
		v = 0;
	nt_fmt_num(b, n, v, 3);
	return b;
}

static void json_str(nt_out *o, const char *s)
{
	nt_out_str(o, "\"");
	nt_out_json(o, s, strlen(s));
	nt_out_str(o, "\"");
}

/* "name": ..., "total_ns": ..., "samples": ..., "self_ns": ..., "self_samples": ... */
static void json_fields(nt_out *o, const char *name, double total_ns, uint64_t samples,
			double self_ns, uint64_t self_samples)
{
	char a[64], b[64];
	nt_out_str(o, "\"name\": ");
	json_str(o, name);
	nt_out_printf(o, ", \"total_ns\": %s, \"samples\": %" PRIu64 ", \"self_ns\": %s, "
			 "\"self_samples\": %" PRIu64,
		      json_num(a, sizeof a, total_ns), samples, json_num(b, sizeof b, self_ns),
		      self_samples);
}

static vcfg view_cfg(const nt_tree_print_opts *po, int by_samples)
{
	vcfg c;
	c.unit = po ? po->unit : NT_TREE_UNIT_AUTO;
	c.by_samples = by_samples;
	c.width = po ? po->width : 0;
	c.ascii = po ? po->ascii : 0;
	return c;
}

static int view_end(nt_out *o, nt_error *err, const char *what)
{
	int rc = nt_out_end(o);
	if (rc == NT_ENOMEM)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing %s", what);
	if (rc)
		return nt_fail(err, rc < 0 ? rc : NT_EIO, NT_NO_OFFSET, "cannot write %s", what);
	return 0;
}

/* ------------------------------------------------------------------ butterfly output */

static void bf_row(nt_out *o, const vcfg *c, const nt_butterfly_entry *e, double of)
{
	char tb[48];
	char line[128];
	int k = snprintf(line, sizeof line, "%6.1f%%  %6.1f%%", share(metric(c, e->total_ns, e->samples), of),
			 share(metric(c, e->self_ns, e->self_samples), of));
	nt_out_put(o, line, (size_t)k);
	size_t used = (size_t)k;
	if (c->unit != NT_UNIT_SAMPLES) {
		nt_tree_fmt_time(tb, sizeof tb, e->total_ns, c->unit);
		k = snprintf(line, sizeof line, "  %11s", tb);
		nt_out_put(o, line, (size_t)k);
		used += (size_t)k;
	}
	k = snprintf(line, sizeof line, "  %8" PRIu64 "    ", e->samples);
	nt_out_put(o, line, (size_t)k);
	used += (size_t)k;
	out_clean(o, c, e->name, used);
	nt_out_str(o, "\n");
}

static void bf_titles(nt_out *o, const vcfg *c, const char *label)
{
	nt_out_printf(o, "%7s  %7s", "total%", "self%");
	if (c->unit != NT_UNIT_SAMPLES)
		nt_out_printf(o, "  %11s", c->unit == NT_TREE_UNIT_AUTO ? "time"
					  : c->unit == NT_UNIT_NS ? "ns" : c->unit == NT_UNIT_US ? "us" : "ms");
	nt_out_printf(o, "  %8s    %s\n", "samples", label);
}

int nt_butterfly_write(const nt_butterfly *b, int sides, const nt_tree_print_opts *po,
		       int json, const nt_sink *sink, nt_error *err)
{
	nt_error_clear(err);
	nt_tree_print_opts pl;
	int orc = nt_tree_print_opts_load(&pl, po, err);
	if (orc)
		return orc;
	po = &pl;
	nt_out o;
	nt_out_init(&o, sink);
	vcfg c = view_cfg(po, b->o.by_samples);
	const nt_butterfly_entry *f = &b->self;
	double of = metric(&c, f->total_ns, f->samples);
	static const char *const keys[2] = {"callers", "callees"};
	if (json) {
		char a[64], d[64];
		nt_out_str(&o, "{\"function\": ");
		json_str(&o, f->name);
		nt_out_printf(&o, ",\n \"total_ns\": %s, \"samples\": %" PRIu64 ", \"self_ns\": %s, "
				  "\"self_samples\": %" PRIu64 ",\n",
			      json_num(a, sizeof a, f->total_ns), f->samples,
			      json_num(d, sizeof d, f->self_ns), f->self_samples);
		nt_out_printf(&o, " \"selection_ns\": %s, \"selection_samples\": %" PRIu64,
			      json_num(a, sizeof a, b->all_ns), b->all_samples);
		for (int s = 0; s < 2; s++) {
			if (!(sides & (1 << s)))
				continue;
			nt_out_printf(&o, ",\n \"%s\": [", keys[s]);
			for (size_t i = 0; i < b->side[s].n; i++) {
				const nt_butterfly_entry *e = b->side[s].sorted[i];
				nt_out_str(&o, i ? ",\n  " : "\n  ");
				nt_out_str(&o, "{");
				json_fields(&o, e->name, e->total_ns, e->samples, e->self_ns,
					    e->self_samples);
				nt_out_str(&o, "}");
			}
			nt_out_str(&o, b->side[s].n ? "\n ]" : "]");
		}
		nt_out_str(&o, "}\n");
		return view_end(&o, err, "the callers and callees");
	}
	char tb[48], sb[48];
	fmt_value(&c, tb, sizeof tb, f->total_ns, f->samples);
	fmt_value(&c, sb, sizeof sb, f->self_ns, f->self_samples);
	nt_out_str(&o, "Function:  ");
	out_clean(&o, &c, f->name, 11);
	nt_out_printf(&o, "\nTotal:     %.1f%% of the selection (%s%s%" PRIu64 " sample%s)\n",
		      share(of, metric(&c, b->all_ns, b->all_samples)),
		      c.unit == NT_UNIT_SAMPLES ? "" : tb, c.unit == NT_UNIT_SAMPLES ? "" : ", ",
		      f->samples, f->samples == 1 ? "" : "s");
	nt_out_printf(&o, "Self:      %.1f%% of the selection (%s%s)\n",
		      share(metric(&c, f->self_ns, f->self_samples), metric(&c, b->all_ns, b->all_samples)),
		      sb, c.unit == NT_UNIT_SAMPLES ? (f->self_samples == 1 ? " sample" : " samples") : "");
	nt_out_str(&o, "Units:     % of the function's total; each caller's (callee's) total is the "
		       "time of the stacks through it and the function, self the part where the "
		       "stack ends there\n");
	for (int s = 0; s < 2; s++) {
		if (!(sides & (1 << s)))
			continue;
		nt_out_printf(&o, "\n%s:\n", s == 0 ? "Callers" : "Callees");
		bf_titles(&o, &c, s == 0 ? "caller" : "callee");
		for (size_t i = 0; i < b->side[s].n && !o.rc; i++)
			bf_row(&o, &c, b->side[s].sorted[i], of);
	}
	return view_end(&o, err, "the callers and callees");
}

/* ------------------------------------------------------------------ diff by function */

typedef struct drow {
	const char *name;
	const nt_tree_func *a, *b; /* a: the tree, b: the base; NULL when absent */
	double dtotal, dself;      /* points of percentage: a's share minus b's */
} drow;

static int cmp_drow(const void *x, const void *y)
{
	const drow *a = x, *b = y;
	double va = fabs(a->dtotal), vb = fabs(b->dtotal);
	if (va != vb)
		return va > vb ? -1 : 1;
	va = fabs(a->dself);
	vb = fabs(b->dself);
	if (va != vb)
		return va > vb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_func_name(const void *x, const void *y)
{
	const nt_tree_func *a = *(const nt_tree_func *const *)x;
	const nt_tree_func *b = *(const nt_tree_func *const *)y;
	return strcmp(a->name, b->name);
}

static const nt_tree_func **sorted_funcs(const nt_tree *t, size_t *n)
{
	*n = nt_tree_func_count(t);
	const nt_tree_func **v = malloc((*n ? *n : 1) * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		v[i] = nt_tree_func_at(t, NT_TREE_BY_TOTAL, i);
	qsort(v, *n, sizeof *v, cmp_func_name);
	return v;
}

int nt_tree_write_diff(const nt_tree *t, const nt_tree *base, const nt_tree_print_opts *po,
		       int by_samples, int json, const nt_sink *sink, nt_error *err)
{
	nt_error_clear(err);
	nt_tree_print_opts pl;
	int orc = nt_tree_print_opts_load(&pl, po, err);
	if (orc)
		return orc;
	po = &pl;
	size_t na, nb;
	const nt_tree_func **fa = sorted_funcs(t, &na), **fb = sorted_funcs(base, &nb);
	drow *rows = malloc((na + nb + 1) * sizeof *rows);
	if (!fa || !fb || !rows) {
		free(fa);
		free(fb);
		free(rows);
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory comparing trees");
	}
	vcfg c = view_cfg(po, by_samples);
	const nt_tree_node *ra = nt_tree_root(t), *rb = nt_tree_root(base);
	double ta = metric(&c, ra->total_ns, ra->samples), tb = metric(&c, rb->total_ns, rb->samples);
	double minp = po ? po->min_percent : 0;
	size_t nr = 0, i = 0, j = 0;
	while (i < na || j < nb) {
		int k = i >= na ? 1 : j >= nb ? -1 : strcmp(fa[i]->name, fb[j]->name);
		drow r = {NULL, NULL, NULL, 0, 0};
		if (k <= 0) {
			r.a = fa[i++];
			r.name = r.a->name;
		}
		if (k >= 0) {
			r.b = fb[j++];
			r.name = r.b->name;
		}
		double at = r.a ? share(metric(&c, r.a->total_ns, r.a->total_samples), ta) : 0;
		double as = r.a ? share(metric(&c, r.a->self_ns, r.a->self_samples), ta) : 0;
		double bt = r.b ? share(metric(&c, r.b->total_ns, r.b->total_samples), tb) : 0;
		double bs = r.b ? share(metric(&c, r.b->self_ns, r.b->self_samples), tb) : 0;
		r.dtotal = at - bt;
		r.dself = as - bs;
		/* equal shares are no difference; below min_percent points, too small to show
		 * (a function added or removed counts by its own share) */
		if (r.dtotal == 0 && r.dself == 0 && r.a && r.b)
			continue;
		if (fabs(r.dtotal) < minp && fabs(r.dself) < minp)
			continue;
		rows[nr++] = r;
	}
	qsort(rows, nr, sizeof *rows, cmp_drow);
	nt_out o;
	nt_out_init(&o, sink);
	char a1[64], a2[64], a3[64], a4[64];
	if (json) {
		nt_out_printf(&o, "{\"total\": %s, \"base_total\": %s, \"unit\": \"%s\",\n \"functions\": [",
			      json_num(a1, sizeof a1, ta), json_num(a2, sizeof a2, tb),
			      by_samples ? "samples" : "ns");
		for (size_t r = 0; r < nr; r++) {
			const drow *d = &rows[r];
			nt_out_str(&o, r ? ",\n  {\"name\": " : "\n  {\"name\": ");
			json_str(&o, d->name);
			nt_out_printf(&o, ", \"status\": \"%s\"", !d->b ? "added" : !d->a ? "removed"
										     : "changed");
			nt_out_printf(&o, ", \"total_pct\": %s, \"base_total_pct\": %s, \"self_pct\": %s, "
					  "\"base_self_pct\": %s}",
				      json_num(a1, sizeof a1, d->a ? share(metric(&c, d->a->total_ns, d->a->total_samples), ta) : 0),
				      json_num(a2, sizeof a2, d->b ? share(metric(&c, d->b->total_ns, d->b->total_samples), tb) : 0),
				      json_num(a3, sizeof a3, d->a ? share(metric(&c, d->a->self_ns, d->a->self_samples), ta) : 0),
				      json_num(a4, sizeof a4, d->b ? share(metric(&c, d->b->self_ns, d->b->self_samples), tb) : 0));
		}
		nt_out_str(&o, nr ? "\n ]}\n" : "]}\n");
	} else {
		nt_tree_fmt_time(a1, sizeof a1, ra->total_ns, NT_TREE_UNIT_AUTO);
		nt_tree_fmt_time(a2, sizeof a2, rb->total_ns, NT_TREE_UNIT_AUTO);
		nt_out_printf(&o, "Diff:      %" PRIu64 " samples (%s) against the base's %" PRIu64
				  " (%s)\n", ra->samples, a1, rb->samples, a2);
		nt_out_printf(&o, "Units:     %% of each side's total %s; delta = this minus the base, "
				  "in points%s\n\n", by_samples ? "samples" : "time",
			      minp > 0 ? "; hiding deltas below the minimum percentage" : "");
		if (nr) {
			nt_out_printf(&o, "%8s  %8s  %8s  %8s  %8s  %-7s  %s\n", "dtotal", "total%",
				      "base%", "dself", "self%", "status", "function");
			for (size_t r = 0; r < nr && !o.rc; r++) {
				const drow *d = &rows[r];
				char line[160];
				int k = snprintf(line, sizeof line, "%+7.1f%%  %7.1f%%  %7.1f%%  %+7.1f%%  %7.1f%%  %-7s  ",
						 d->dtotal,
						 d->a ? share(metric(&c, d->a->total_ns, d->a->total_samples), ta) : 0,
						 d->b ? share(metric(&c, d->b->total_ns, d->b->total_samples), tb) : 0,
						 d->dself,
						 d->a ? share(metric(&c, d->a->self_ns, d->a->self_samples), ta) : 0,
						 !d->b ? "added" : !d->a ? "removed" : "");
				nt_out_put(&o, line, (size_t)k);
				out_clean(&o, &c, d->name, (size_t)k);
				nt_out_str(&o, "\n");
			}
		}
	}
	free(fa);
	free(fb);
	free(rows);
	return view_end(&o, err, "the difference");
}

/* ------------------------------------------------------------------ JSON of a tree */

static int jvisible(const nt_tree_print_opts *po, double total, int by_samples,
		    const nt_tree_node *n)
{
	if (po->max_depth && n->depth > po->max_depth)
		return 0;
	double v = by_samples ? (double)n->samples : n->total_ns;
	if (po->min_percent > 0 && share(v, total) < po->min_percent)
		return 0;
	return 1;
}

static void json_cats(nt_out *o, const double *cat_ns, const uint64_t *cat_samples)
{
	char a[64];
	nt_out_str(o, ", \"categories\": {");
	int first = 1;
	for (int k = 0; k < NT_CAT_COUNT; k++) {
		if (!cat_samples[k] && cat_ns[k] == 0)
			continue;
		nt_out_printf(o, "%s\"%s\": {\"ns\": %s, \"samples\": %" PRIu64 "}", first ? "" : ", ",
			      nt_category_name(k), json_num(a, sizeof a, cat_ns[k]), cat_samples[k]);
		first = 0;
	}
	nt_out_str(o, "}");
}

static void json_when(nt_out *o, const uint64_t *when, uint32_t n)
{
	if (!when)
		return;
	nt_out_str(o, ", \"when\": [");
	for (uint32_t i = 0; i < n; i++)
		nt_out_printf(o, "%s%" PRIu64, i ? ", " : "", when[i]);
	nt_out_str(o, "]");
}

static void json_func(nt_out *o, const char *name, double self_ns, uint64_t self_samples,
		      double total_ns, uint64_t total_samples, const double *cat_ns,
		      const uint64_t *cat_samples, const uint64_t *when, uint32_t wb)
{
	nt_out_str(o, "{");
	json_fields(o, name, total_ns, total_samples, self_ns, self_samples);
	json_cats(o, cat_ns, cat_samples);
	json_when(o, when, wb);
	nt_out_str(o, "}");
}

/* Nodes depth-first with an explicit stack (stacks can be very deep): an entry is a node
 * to open, or (NULL) the end of the children of the node below it. */
static void json_tree(nt_out *o, const nt_tree *t, const nt_tree_print_opts *po, int by_samples,
		      int per_thread, uint32_t wb)
{
	const nt_tree_node *root = nt_tree_root(t);
	double total = by_samples ? (double)root->samples : root->total_ns;
	const nt_tree_node **st = NULL;
	size_t n = 0, cap = 0;
#define PUSH(x)                                                                              \
	do {                                                                                 \
		if (nt_grow((void **)&st, &cap, n + 1, sizeof *st)) {                         \
			o->rc = NT_ENOMEM;                                                    \
			goto done;                                                            \
		}                                                                             \
		st[n++] = (x);                                                                \
	} while (0)
#define PUSH_KIDS(node)                                                                      \
	do {                                                                                 \
		int all_ = !po->hot || ((node)->kind == NT_TREE_ROOT && per_thread);          \
		size_t nk_ = all_ ? (node)->nchildren : (node)->nchildren ? 1 : 0;            \
		if ((node) != root)                                                           \
			PUSH(NULL);                                                           \
		for (size_t j_ = nk_; j_-- > 0;)                                              \
			if (jvisible(po, total, by_samples, (node)->children[j_]))            \
				PUSH((node)->children[j_]);                                   \
	} while (0)
	PUSH_KIDS(root);
	int first = 1;
	while (n && !o->rc) {
		const nt_tree_node *nd = st[--n];
		if (!nd) {
			nt_out_str(o, "]}");
			first = 0;
			continue;
		}
		nt_out_str(o, first ? "\n" : ",\n");
		for (uint32_t d = 0; d < nd->depth; d++)
			nt_out_str(o, " ");
		nt_out_str(o, "{");
		json_fields(o, nd->name, nd->total_ns, nd->samples, nd->self_ns, nd->self_samples);
		if (nd->kind == NT_TREE_THREAD)
			nt_out_printf(o, ", \"thread\": %" PRIu64 ", \"session\": %" PRIu32,
				      nd->thread_id, nd->session);
		json_cats(o, nd->cat_ns, nd->cat_samples);
		json_when(o, nd->when, wb);
		nt_out_str(o, ", \"children\": [");
		first = 1;
		PUSH_KIDS(nd);
	}
#undef PUSH_KIDS
#undef PUSH
done:
	free(st);
}

int nt_tree_write_json(const nt_tree *t, const nt_tree_print_opts *opts, int by_samples,
		       int per_thread, const nt_sink *sink, nt_error *err)
{
	nt_error_clear(err);
	nt_tree_print_opts po;
	int orc = nt_tree_print_opts_load(&po, opts, err);
	if (orc)
		return orc;
	nt_tree_when_info wi = NT_INIT(nt_tree_when_info);
	uint32_t wb = nt_tree_when(t, &wi) ? wi.buckets : 0;
	const nt_tree_node *root = nt_tree_root(t);
	nt_out o;
	nt_out_init(&o, sink);
	char a[64], b[64];
	nt_out_printf(&o, "{\"samples\": %" PRIu64 ", \"total_ns\": %s, \"by\": \"%s\"",
		      root->samples, json_num(a, sizeof a, root->total_ns),
		      by_samples ? "samples" : "time");
	json_cats(&o, root->cat_ns, root->cat_samples);
	if (po.selection && po.selection[0]) {
		nt_out_str(&o, ", \"selection\": ");
		json_str(&o, po.selection);
	}
	if (wb)
		nt_out_printf(&o, ", \"when_range_ns\": [%s, %s]", json_num(a, sizeof a, (double)wi.start_ns),
			      json_num(b, sizeof b, (double)wi.end_ns));
	if (po.by_subsystem) {
		nt_out_str(&o, ",\n \"subsystems\": [");
		size_t n = nt_tree_subsystem_count(t);
		size_t shown = 0;
		for (size_t i = 0; i < n; i++) {
			const nt_tree_subsystem *s = nt_tree_subsystem_at(t, NT_TREE_BY_SELF, i);
			if (!s)
				break;
			nt_out_str(&o, shown++ ? ",\n  " : "\n  ");
			json_func(&o, s->name, s->self_ns, s->self_samples, s->total_ns,
				  s->total_samples, s->cat_ns, s->cat_samples, s->when, wb);
		}
		nt_out_str(&o, shown ? "\n ]" : "]");
	} else if (po.top) {
		static const char *const keys[2] = {"top_self", "top_total"};
		for (int order = 0; order < 2; order++) {
			nt_out_printf(&o, ",\n \"%s\": [", keys[order]);
			size_t n = nt_tree_func_count(t);
			if (n > po.top)
				n = po.top;
			for (size_t i = 0; i < n; i++) {
				const nt_tree_func *f = nt_tree_func_at(t, order, i);
				nt_out_str(&o, i ? ",\n  " : "\n  ");
				json_func(&o, f->name, f->self_ns, f->self_samples, f->total_ns,
					  f->total_samples, f->cat_ns, f->cat_samples, f->when, wb);
			}
			nt_out_str(&o, n ? "\n ]" : "]");
		}
	} else {
		nt_out_str(&o, ",\n \"children\": [");
		json_tree(&o, t, &po, by_samples, per_thread, wb);
		nt_out_str(&o, "]");
	}
	nt_out_str(&o, "}\n");
	return view_end(&o, err, "the call tree");
}
