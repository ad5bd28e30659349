/* SPDX-License-Identifier: MIT */
/* export-svg.c - interactive flame graph SVG (flamegraph.pl's layout and controls): the
 * flame tree of one source (export-flame.c), or of two for a differential graph, drawn as
 * one <g> per frame with its name in <title>, a <rect> and a fitted <text> label, and the
 * script of export-svg.js (hover details, zoom, search, reset) compiled in.
 *
 * Safety: every name is written through nt_out_xml() (markup characters escaped, invalid
 * UTF-8 and control characters replaced), and the script reads names back only as text,
 * so a frame named "<script>..." is shown, never run.
 * Size: frames narrower than min_width are left out with their callees (flamegraph.pl's
 * --minwidth), so the document grows with what can be seen, not with the input.
 * Not here: merging stacks (export-flame.c), reading inputs (export-stacks.c). */
#include "export.h"

#include <inttypes.h>

#include <math.h>
#include <stdio.h>

/* The script (export-svg.js), as a C string literal generated at build time. */
static const char SVG_JS[] =
#include "libtrace/export-svg-js.h" /* in the build tree (VPATH builds) */
	;

#define XPAD 10.0
#define FONT_SIZE 12.0
#define FONT_WIDTH 0.59 /* average glyph width / font size (Verdana), as flamegraph.pl */
#define TL_HEIGHT 40.0  /* px of the timeline strip's tallest bar */
#define TL_MAX 100000u  /* timeline buckets, at most */

typedef struct svg_ctx {
	nt_ftree *t;
	nt_out out;
	nt_flame_opts o;
	int diff;
	int unit;
	double plotw;         /* px for the whole total */
	double minw;          /* px */
	double total, btotal; /* side-0 and side-1 root totals */
	double maxdelta;      /* largest |share change| among drawn frames (diff) */
	double top, bottom;   /* y of the first frame row (icicle), y below the root (flame) */
	uint32_t maxdepth;    /* deepest drawn frame */
} svg_ctx;

/* Deterministic 0..1 values from a name, for colours (flamegraph.pl hashes names too). */
static void name_rand(nt_xframe f, double v[3])
{
	uint32_t h1 = 2166136261u, h2 = 0x9747b28cu;
	for (size_t i = 0; i < f.n; i++) {
		h1 = (h1 ^ (unsigned char)f.s[i]) * 16777619u;
		h2 = (h2 ^ (unsigned char)f.s[f.n - 1 - i]) * 0x5bd1e995u;
	}
	v[0] = (double)(h1 & 0xffff) / 65535.0;
	v[1] = (double)(h2 & 0xffff) / 65535.0;
	v[2] = (double)((h1 >> 16) ^ (h2 >> 16)) / 65535.0;
}

typedef struct rgb {
	int r, g, b;
} rgb;

static int clamp255(double x)
{
	return x < 0 ? 0 : x > 255 ? 255 : (int)(x + 0.5);
}

/* Category palettes: a base colour plus a per-name variation (cpu: flamegraph.pl's "hot"). */
static rgb cat_color(int cat, const double v[3])
{
	double r, g, b;
	switch (cat) {
	case NT_CAT_CPU: r = 205 + 50 * v[2], g = 230 * v[0], b = 55 * v[1]; break;
	case NT_CAT_LOCK: r = 165 + 60 * v[0], g = 70 + 50 * v[1], b = 190 + 55 * v[2]; break;
	case NT_CAT_IO: r = 50 + 60 * v[0], g = 135 + 60 * v[1], b = 200 + 55 * v[2]; break;
	case NT_CAT_SLEEP: r = 120 + 50 * v[0], g = 145 + 50 * v[0], b = 175 + 50 * v[0]; break;
	case NT_CAT_WAIT: r = 190 + 55 * v[0], g = 180 + 55 * v[0], b = 40 + 30 * v[1]; break;
	case NT_CAT_GC: r = 60 + 60 * v[0], g = 175 + 60 * v[1], b = 60 + 60 * v[2]; break;
	case NT_CAT_EXTERNAL: r = 175 + 40 * v[0], g = 145 + 40 * v[0], b = 110 + 40 * v[1]; break;
	case NT_CAT_READY: r = 235 + 20 * v[0], g = 160 + 40 * v[1], b = 150 + 40 * v[2]; break;
	case NT_CAT_RUNNING: r = 205 + 50 * v[2], g = 120 + 80 * v[0], b = 40 + 30 * v[1]; break;
	default: r = g = b = 150 + 60 * v[0]; break;
	}
	rgb c = {clamp255(r), clamp255(g), clamp255(b)};
	return c;
}

/* A per-thread root: "NAME (TID)" or "Thread (TID)" (nt_profile_thread_label()). */
static int is_thread_label(nt_xframe name)
{
	size_t n = name.n;
	if (n > 4 && name.s[n - 1] == ']') { /* " [S]": several sessions */
		size_t j = n - 1;
		while (j > 0 && name.s[j - 1] >= '0' && name.s[j - 1] <= '9')
			j--;
		if (j >= 2 && name.s[j - 1] == '[' && name.s[j - 2] == ' ')
			n = j - 2;
	}
	if (n < 4 || name.s[n - 1] != ')')
		return 0;
	size_t k = n - 1;
	while (k > 0 && name.s[k - 1] >= '0' && name.s[k - 1] <= '9')
		k--;
	return k >= 3 && k < n - 1 && name.s[k - 1] == '(' && name.s[k - 2] == ' ';
}

static rgb node_color(svg_ctx *c, size_t i)
{
	const nt_fnode *n = nt_ftree_node(c->t, i);
	nt_xframe name = nt_ftree_name(c->t, i);
	if (c->diff) {
		/* change of the frame's share of the total: red grew, blue shrank */
		double d = (c->total > 0 ? n->total[0] / c->total : 0) -
			   (c->btotal > 0 ? n->total[1] / c->btotal : 0);
		double k = c->maxdelta > 0 ? fabs(d) / c->maxdelta : 0;
		int lo = clamp255(225 - 190 * k);
		rgb r = {255, lo, lo}, b = {lo, lo, 255}, w = {225, 225, 225};
		return d > 0 && k > 0 ? r : d < 0 && k > 0 ? b : w;
	}
	double v[3];
	name_rand(name, v);
	if (i == 0 || (n->depth == 1 && is_thread_label(name))) {
		rgb g = {clamp255(195 + 30 * v[0]), clamp255(195 + 30 * v[0]), clamp255(200 + 30 * v[0])};
		return g;
	}
	if (!nt_ftree_has_categories(c->t))
		return cat_color(NT_CAT_CPU, v);
	return cat_color(nt_ftree_category(c->t, i), v);
}

static void put_num(nt_out *o, double v, int decimals)
{
	char tmp[64];
	int k = nt_fmt_num(tmp, sizeof tmp, v, decimals);
	if (k > 0)
		nt_out_put(o, tmp, (size_t)k);
}

/* Human text for a value of the unit: "1234 samples", "12.345 ms". */
static void fmt_value(char *buf, size_t n, int unit, double v)
{
	if (unit == NT_UNIT_SAMPLES) {
		char num[40];
		nt_fmt_num(num, sizeof num, v, 2);
		snprintf(buf, n, "%s sample%s", num, strcmp(num, "1") == 0 ? "" : "s");
		return;
	}
	double ns = v * (unit == NT_UNIT_US ? 1e3 : unit == NT_UNIT_MS ? 1e6 : 1);
	double a = fabs(ns);
	if (a >= 1e9)
		snprintf(buf, n, "%.3f s", ns / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%.3f ms", ns / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%.3f us", ns / 1e3);
	else
		snprintf(buf, n, "%.0f ns", ns);
}

static double width_of(const svg_ctx *c, const nt_fnode *n)
{
	return c->total > 0 ? n->total[0] / c->total * c->plotw : 0;
}

static int drawn(const svg_ctx *c, const nt_fnode *n)
{
	return n->total[0] > 0 && width_of(c, n) >= c->minw;
}

/* Explicit-stack walks: stacks may be 65536 frames deep. */
typedef struct walk_item {
	uint32_t node;
	double offset;        /* from the root's left edge, in the unit */
} walk_item;

typedef struct walker {
	walk_item *v;
	size_t n, cap;
} walker;

static int walk_push(walker *w, uint32_t node, double offset)
{
	if (nt_grow((void **)&w->v, &w->cap, w->n + 1, sizeof(walk_item)))
		return -1;
	w->v[w->n++] = (walk_item){node, offset};
	return 0;
}

/* Pushes the drawn children of node, last first so that they pop in name order. */
static int push_kids(svg_ctx *c, walker *w, uint32_t node, double offset)
{
	const nt_fnode *n = nt_ftree_node(c->t, node);
	const uint32_t *kv = nt_ftree_kids(c->t, node);
	double off = offset;
	size_t base = w->n;
	for (uint32_t j = 0; j < n->nkids; j++) {
		const nt_fnode *k = nt_ftree_node(c->t, kv[j]);
		if (drawn(c, k) && walk_push(w, kv[j], off))
			return -1;
		off += k->total[0] > 0 ? k->total[0] : 0;
	}
	/* reverse the pushed slice */
	for (size_t a = base, b = w->n; a + 1 < b; a++, b--) {
		walk_item tmp = w->v[a];
		w->v[a] = w->v[b - 1];
		w->v[b - 1] = tmp;
	}
	return 0;
}

/* Visits every drawn frame, parents before children, children left to right; stops
 * early once the output has failed when stop_on_out_error. 0 or NT_ENOMEM. */
static int walk_drawn(svg_ctx *c, void (*visit)(svg_ctx *c, uint32_t node, double offset),
		      int stop_on_out_error)
{
	walker w = {NULL, 0, 0};
	if (!drawn(c, nt_ftree_node(c->t, 0)))
		return 0;
	if (walk_push(&w, 0, 0))
		goto nomem;
	while (w.n && (!stop_on_out_error || c->out.rc == 0)) {
		walk_item it = w.v[--w.n];
		visit(c, it.node, it.offset);
		if (push_kids(c, &w, it.node, it.offset))
			goto nomem;
	}
	free(w.v);
	return 0;
nomem:
	free(w.v);
	return NT_ENOMEM;
}

static void measure_frame(svg_ctx *c, uint32_t node, double offset)
{
	(void)offset;
	const nt_fnode *n = nt_ftree_node(c->t, node);
	if (n->depth > c->maxdepth)
		c->maxdepth = n->depth;
	if (c->diff) {
		double d = fabs((c->total > 0 ? n->total[0] / c->total : 0) -
				(c->btotal > 0 ? n->total[1] / c->btotal : 0));
		if (d > c->maxdelta)
			c->maxdelta = d;
	}
}

/* First pass: depth of the deepest drawn frame and the largest share change. */
static int measure(svg_ctx *c)
{
	c->maxdepth = 0;
	c->maxdelta = 0;
	return walk_drawn(c, measure_frame, 0);
}

static void put_label(svg_ctx *c, nt_xframe name, double w)
{
	double chars = floor((w - 6) / (FONT_SIZE * FONT_WIDTH));
	if (chars < 3)
		return;
	/* count code points, cutting on a character boundary */
	size_t maxc = (size_t)chars, cps = 0, cut2 = 0, i = 0;
	while (i < name.n) {
		size_t k = nt_utf8_seq((const unsigned char *)name.s + i, name.n - i);
		if (k == 0)
			k = 1;
		if (cps == maxc - 2)
			cut2 = i;
		cps++;
		i += k;
	}
	if (cps <= maxc) {
		nt_out_xml(&c->out, name.s, name.n);
	} else {
		nt_out_xml(&c->out, name.s, cut2);
		nt_out_str(&c->out, "..");
	}
}

static void draw_frame(svg_ctx *c, uint32_t node, double offset)
{
	const nt_fnode *n = nt_ftree_node(c->t, node);
	nt_xframe name = nt_ftree_name(c->t, node);
	nt_out *o = &c->out;
	double x = XPAD + (c->total > 0 ? offset / c->total * c->plotw : 0);
	double w = width_of(c, n);
	double fh = (double)c->o.frame_height;
	double y = c->o.icicle ? c->top + n->depth * fh : c->bottom - (n->depth + 1) * fh;
	rgb col = node_color(c, node);
	nt_out_str(o, "<g v=\"");
	put_num(o, n->total[0], 3);
	nt_out_str(o, "\" s=\"");
	put_num(o, n->self[0], 3);
	nt_out_str(o, "\" o=\"");
	put_num(o, offset, 3);
	if (c->diff) {
		nt_out_str(o, "\" b=\"");
		put_num(o, n->total[1], 3);
	}
	int cat = nt_ftree_category(c->t, node);
	if (cat >= 0 && !c->diff) {
		nt_out_str(o, "\" c=\"");
		nt_out_str(o, nt_category_name(cat));
	}
	nt_out_str(o, "\"><title>");
	nt_out_xml(o, name.s, name.n);
	if (n->file) { /* the source lines of the frame: " (File.cs:12)" or " (File.cs:12-15)" */
		const char *base = strrchr(n->file, '/');
		base = base ? base + 1 : n->file;
		nt_out_str(o, " (");
		nt_out_xml(o, base, strlen(base));
		if (n->line_hi > n->line_lo)
			nt_out_printf(o, ":%" PRIu32 "-%" PRIu32 ")", n->line_lo, n->line_hi);
		else
			nt_out_printf(o, ":%" PRIu32 ")", n->line_lo);
	}
	nt_out_printf(o, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
			 "fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
		      x, y, w, fh - 1, col.r, col.g, col.b, x + 3, y + fh / 2 + FONT_SIZE / 2 - 2.5);
	put_label(c, name, w);
	nt_out_str(o, "</text></g>\n");
}

static int draw_frames(svg_ctx *c)
{
	return walk_drawn(c, draw_frame, 1);
}

static const char *unit_key(int unit)
{
	switch (unit) {
	case NT_UNIT_SAMPLES: return "samples";
	case NT_UNIT_US: return "us";
	case NT_UNIT_MS: return "ms";
	default: return "ns";
	}
}

/* The category legend under the subtitle: a swatch and "name N%" per category present. */
static void draw_legend(svg_ctx *c, double y)
{
	double cat[NT_CAT_COUNT];
	double sum = 0;
	for (int k = 0; k < NT_CAT_COUNT; k++) {
		cat[k] = nt_ftree_cat(c->t, 0, k);
		sum += cat[k];
	}
	if (sum <= 0)
		return;
	double x = XPAD;
	double v[3] = {0.5, 0.5, 0.5};
	nt_out_str(&c->out, "<g id=\"legend\">");
	for (int k = 0; k < NT_CAT_COUNT; k++) {
		if (cat[k] <= 0)
			continue;
		rgb col = cat_color(k, v);
		char lab[64];
		snprintf(lab, sizeof lab, "%s %.1f%%", nt_category_name(k), 100 * cat[k] / sum);
		nt_out_printf(&c->out,
			      "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" "
			      "fill=\"rgb(%d,%d,%d)\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>",
			      x, y - 9, col.r, col.g, col.b, x + 14, y, lab);
		x += 14 + (double)strlen(lab) * FONT_SIZE * FONT_WIDTH + 12;
	}
	nt_out_str(&c->out, "</g>\n");
}

/* The timeline strip at y: one bar per bucket (height proportional to its samples, the
 * count in n=), the start and end in seconds under it, the selection rectangle and the
 * text showing the --range of the selection (filled by the script). */
static void draw_timeline(svg_ctx *c, double y)
{
	nt_out *o = &c->out;
	uint32_t n = c->o.timeline_n;
	uint64_t peak = 0, sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (c->o.timeline[i] > peak)
			peak = c->o.timeline[i];
		sum += c->o.timeline[i];
	}
	double bw = c->plotw / n;
	nt_out_printf(o, "<g id=\"timeline\" samples=\"%llu\">\n<rect id=\"timeline-bg\" "
			 "x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
			 "fill=\"rgb(255,255,255)\" fill-opacity=\"0.6\"/>\n",
		      (unsigned long long)sum, XPAD, y, c->plotw, TL_HEIGHT);
	nt_out_str(o, "<g id=\"timeline-bars\">\n");
	for (uint32_t i = 0; i < n; i++) {
		double h = peak ? (double)c->o.timeline[i] / (double)peak * TL_HEIGHT : 0;
		nt_out_printf(o, "<rect n=\"%llu\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
				 "height=\"%.2f\" fill=\"rgb(70,110,180)\"/>\n",
			      (unsigned long long)c->o.timeline[i], XPAD + i * bw,
			      y + TL_HEIGHT - h, bw, h);
	}
	nt_out_str(o, "</g>\n");
	nt_out_printf(o, "<rect id=\"timeline-sel\" class=\"hide\" x=\"%.2f\" y=\"%.1f\" "
			 "width=\"0\" height=\"%.1f\" fill=\"rgb(230,0,230)\" "
			 "fill-opacity=\"0.25\" stroke=\"rgb(230,0,230)\"/>\n",
		      XPAD, y, TL_HEIGHT);
	double ty = y + TL_HEIGHT + FONT_SIZE + 2;
	nt_out_printf(o, "<text id=\"timeline-start\" x=\"%.1f\" y=\"%.1f\">%.3fs</text>\n",
		      XPAD, ty, (double)c->o.timeline_start_ns / 1e9);
	nt_out_printf(o, "<text id=\"timeline-end\" x=\"%.1f\" y=\"%.1f\" "
			 "text-anchor=\"end\">%.3fs</text>\n",
		      XPAD + c->plotw, ty, (double)c->o.timeline_end_ns / 1e9);
	nt_out_printf(o, "<text id=\"timeline-range\" x=\"%.1f\" y=\"%.1f\" "
			 "text-anchor=\"middle\"> </text>\n</g>\n",
		      XPAD + c->plotw / 2, ty);
}

static const char SVG_STYLE[] =
	"<style type=\"text/css\">\n"
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	"#title { text-anchor: middle; font-size: 17px; }\n"
	"#subtitle { text-anchor: middle; fill: rgb(90,90,90); }\n"
	"#frames > g { cursor: pointer; }\n"
	"#frames > g:hover > rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	"#frames text { pointer-events: none; }\n"
	"#unzoom, #search, #ignorecase { cursor: pointer; }\n"
	"#search, #ignorecase { opacity: 0.3; }\n"
	"#search:hover, #ignorecase:hover, #search.show, #ignorecase.show { opacity: 1; }\n"
	"#matched { text-anchor: end; }\n"
	"#timeline { cursor: crosshair; }\n"
	"#timeline text { pointer-events: none; }\n"
	".hide { display: none; }\n"
	".parent { opacity: 0.5; }\n"
	"</style>\n";

int nt_flame_write_svg(nt_stacks *s, nt_stacks *base, const nt_flame_opts *opts,
		       const nt_sink *sink, nt_error *err)
{
	nt_error_clear(err);
	svg_ctx c;
	memset(&c, 0, sizeof c);
	int orc = nt_opts_load(&c.o, sizeof c.o, sizeof c.o, opts, "flame graph options", err);
	if (orc)
		return orc;
	if (!s || !sink)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no stacks or no sink");
	if (c.o.width == 0)
		c.o.width = 1200;
	if (c.o.frame_height == 0)
		c.o.frame_height = 16;
	if (c.o.width < 100 || c.o.width > 1000000)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "width %u px is out of range (100..1000000)",
			       c.o.width);
	if (c.o.frame_height < 4 || c.o.frame_height > 1000)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "frame height %u px is out of range (4..1000)", c.o.frame_height);
	if (!isfinite(c.o.min_width) || (c.o.min_width_percent && c.o.min_width > 100))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad minimum width");
	if (c.o.timeline_n && (!c.o.timeline || c.o.timeline_n > TL_MAX ||
			       c.o.timeline_end_ns < c.o.timeline_start_ns))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad timeline");
	c.diff = base != NULL;
	c.unit = nt_stacks_unit(s);
	c.plotw = c.o.width - 2 * XPAD;
	if (c.o.min_width == 0)
		c.minw = 0.1;
	else if (c.o.min_width < 0)
		c.minw = 0;
	else
		c.minw = c.o.min_width_percent ? c.o.min_width / 100 * c.plotw : c.o.min_width;

	int rc = 0;
	c.t = nt_ftree_new();
	if (!c.t)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory building the flame graph");
	if ((rc = nt_ftree_add(c.t, 0, s, err)) != 0)
		goto done;
	if (base && (rc = nt_ftree_add(c.t, 1, base, err)) != 0)
		goto done;
	if ((rc = nt_ftree_seal(c.t, c.o.sort_weight, err)) != 0)
		goto done;
	c.total = nt_ftree_node(c.t, 0)->total[0];
	c.btotal = nt_ftree_node(c.t, 0)->total[1];
	if ((rc = measure(&c)) != 0)
		goto nomem;

	/* layout: title, subtitle (and legend) above; details and matched below */
	int legend = !c.diff && nt_ftree_has_categories(c.t);
	double fh = c.o.frame_height;
	double ytop = FONT_SIZE * 4 + (legend ? FONT_SIZE * 1.5 : 0);
	double tly = ytop;
	if (c.o.timeline_n)
		ytop += TL_HEIGHT + FONT_SIZE * 2.5;
	double ybot = FONT_SIZE * 2 + 10;
	int any = drawn(&c, nt_ftree_node(c.t, 0));
	double height = ytop + (any ? (c.maxdepth + 1) * fh : fh * 2) + ybot;
	c.top = ytop;
	c.bottom = height - ybot;
	double W = c.o.width;
	const char *title = c.o.title ? c.o.title
			  : c.diff ? "Differential Flame Graph"
			  : c.o.icicle ? "Icicle Graph" : "Flame Graph";
	char sub[400], tv[96], bv[96];
	fmt_value(tv, sizeof tv, c.unit, c.total);
	if (c.diff) {
		fmt_value(bv, sizeof bv, c.unit, c.btotal);
		snprintf(sub, sizeof sub, "Total %s, base %s; red: larger share than in the base, "
			 "blue: smaller", tv, bv);
	} else {
		snprintf(sub, sizeof sub, "Total %s", tv);
	}

	nt_out *o = &c.out;
	nt_out_init(o, sink);
	nt_out_str(o, "<?xml version=\"1.0\" standalone=\"no\"?>\n");
	nt_out_printf(o, "<svg version=\"1.1\" width=\"%u\" height=\"%.0f\" viewBox=\"0 0 %u %.0f\" "
			 "xmlns=\"http://www.w3.org/2000/svg\">\n",
		      c.o.width, height, c.o.width, height);
	nt_out_str(o, "<!-- Flame graph written by libnettrace " PACKAGE_VERSION
		      " (nettrace-flame). Click a frame to zoom, Ctrl-F to search. -->\n");
	nt_out_str(o, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/>"
		      "<stop stop-color=\"#eeeeb0\" offset=\"95%\"/></linearGradient></defs>\n");
	nt_out_str(o, SVG_STYLE);
	nt_out_printf(o, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%.0f\" "
			 "fill=\"url(#background)\"/>\n", c.o.width, height);
	nt_out_printf(o, "<text id=\"title\" x=\"%.1f\" y=\"24\">", W / 2);
	nt_out_xml(o, title, strlen(title));
	nt_out_str(o, "</text>\n");
	const char *st = c.o.subtitle ? c.o.subtitle : sub;
	nt_out_printf(o, "<text id=\"subtitle\" x=\"%.1f\" y=\"%.0f\">", W / 2, 24 + FONT_SIZE * 1.5);
	nt_out_xml(o, st, strlen(st));
	nt_out_str(o, "</text>\n");
	if (legend)
		draw_legend(&c, 24 + FONT_SIZE * 3);
	nt_out_printf(o, "<text id=\"unzoom\" class=\"hide\" x=\"%.1f\" y=\"24\">Reset Zoom</text>\n",
		      XPAD);
	nt_out_printf(o, "<text id=\"search\" x=\"%.1f\" y=\"24\">Search</text>\n", W - XPAD - 110);
	nt_out_printf(o, "<text id=\"ignorecase\" x=\"%.1f\" y=\"24\">ic</text>\n", W - XPAD - 16);
	nt_out_printf(o, "<text id=\"details\" x=\"%.1f\" y=\"%.0f\"> </text>\n", XPAD,
		      height - ybot / 2);
	nt_out_printf(o, "<text id=\"matched\" class=\"hide\" x=\"%.1f\" y=\"%.0f\"> </text>\n",
		      W - XPAD, height - ybot / 2);
	if (!any)
		nt_out_printf(o, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">No samples"
				 "</text>\n", W / 2, c.top + fh);
	if (c.o.timeline_n)
		draw_timeline(&c, tly);
	nt_out_str(o, "<g id=\"frames\">\n");
	if ((rc = draw_frames(&c)) != 0)
		goto nomem;
	nt_out_str(o, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\nvar cfg = {");
	nt_out_printf(o, "xpad: %.1f, width: %u, fh: %u, fontsize: %.0f, icicle: %d, top: %.1f, "
			 "bottom: %.1f, diff: %d, unit: \"%s\", searchcolor: \"rgb(230,0,230)\", ",
		      XPAD, c.o.width, c.o.frame_height, FONT_SIZE, c.o.icicle ? 1 : 0, c.top,
		      c.bottom, c.diff, unit_key(c.unit));
	nt_out_str(o, "total: ");
	put_num(o, c.total, 3);
	nt_out_str(o, ", btotal: ");
	put_num(o, c.btotal, 3);
	if (c.o.timeline_n)
		nt_out_printf(o, ", tl: {n: %u, start: %lld, end: %lld, y: %.1f, h: %.1f}",
			      c.o.timeline_n, (long long)c.o.timeline_start_ns,
			      (long long)c.o.timeline_end_ns, tly, TL_HEIGHT);
	else
		nt_out_str(o, ", tl: null");
	nt_out_str(o, "};\n");
	nt_out_str(o, SVG_JS);
	nt_out_str(o, "]]></script>\n</svg>\n");
	rc = nt_out_end(o);
	if (rc == NT_ENOMEM)
		goto nomem;
	if (rc)
		rc = nt_fail(err, rc, NT_NO_OFFSET, "cannot write the flame graph");
	goto done;
nomem:
	nt_out_end(&c.out);
	rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing the flame graph");
done:
	nt_ftree_free(c.t);
	return rc;
}
