/* SPDX-License-Identifier: MIT */
/* test-export.c - unit tests of the exporters (export-*.c): the folded parser and its
 * errors, shared prefixes, the flame tree (totals, self, name order, both sides),
 * XML/JSON escaping, the SVG (escaped names, one script, pruning, icicle, differential),
 * speedscope JSON and the pprof encoding (decoded here field by field). Inputs are folded
 * texts written in the tests; real traces go through the e2e tests (t30x-flame-*). */
#include "export.h"
#include "tap.h"

#include <stdio.h>
#include <zlib.h>

/* ------------------------------------------------------------------ helpers */

typedef struct got {
	char line[32][256];   /* "a;b|value|offset" */
	size_t n;
} got;

static int collect(void *ctx, const nt_xstack *st)
{
	got *g = ctx;
	if (g->n >= 32)
		return 0;
	char *p = g->line[g->n++];
	size_t k = 0;
	for (size_t i = 0; i < st->depth; i++)
		k += (size_t)snprintf(p + k, 256 - k, "%s%.*s", i ? ";" : "", (int)st->frames[i].n,
				      st->frames[i].s);
	snprintf(p + k, 256 - k, "|%g|%llu", st->value, (unsigned long long)st->offset);
	return 0;
}

static nt_stacks *folded(const char *text, int unit)
{
	nt_stacks *s = NULL;
	nt_error err;
	nt_error_clear(&err);
	if (nt_stacks_from_folded(&s, text, strlen(text), unit, "in.folded", &err))
		printf("# cannot create source: %s\n", err.msg);
	return s;
}

static size_t count(const char *hay, size_t n, const char *needle)
{
	size_t c = 0, k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(hay + i, needle, k) == 0)
			c++;
	return c;
}

static int contains(const nt_membuf *mb, const char *needle)
{
	return count((const char *)mb->data, mb->len, needle) > 0;
}

/* ------------------------------------------------------------------ folded parser */

static void test_export_folded_parses_lines(void)
{
	const char *text = "a;b 3\r\n\n  \na;c 2.5\nx\t7\nsig(int32, class X) 1\n 4";
	nt_stacks *s = folded(text, NT_UNIT_SAMPLES);
	got g;
	memset(&g, 0, sizeof g);
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_stacks_foreach(s, collect, &g, &err), 0, "folded: parses");
	is_int(g.n, 5, "folded: blank lines skipped, 5 stacks");
	is_str(g.line[0], "a;b|3|0", "folded: CRLF line, offset 0");
	is_str(g.line[1], "a;c|2.5|11", "folded: fractional count, offset of its line");
	is_str(g.line[2], "x|7|19", "folded: tab before the count");
	is_str(g.line[3], "sig(int32, class X)|1|23", "folded: spaces inside a frame name");
	is_str(g.line[4], "|4|45", "folded: empty stack, last line without newline");
	nt_stacks_free(s);
}

static void test_export_folded_rejects_bad_lines(void)
{
	const char *cases[][3] = {
		{"a;b 1\nc;d\n", "line 2: no count: expected 'frame;...;frame COUNT'", "6"},
		{"a;b 1\nc;d 1x\n", "line 2: the count is not a decimal number", "10"},
		{"a 1\nb -3\n", "line 2: the count is not a decimal number", "6"},
		{"a 1\nb 1.5.2\n", "line 2: the count is not a decimal number", "6"},
		{"12\n", "line 1: no count: expected 'frame;...;frame COUNT'", "0"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		nt_stacks *s = folded(cases[i][0], NT_UNIT_SAMPLES);
		got g;
		memset(&g, 0, sizeof g);
		nt_error err;
		nt_error_clear(&err);
		int rc = nt_stacks_foreach(s, collect, &g, &err);
		is_int(rc, NT_EFORMAT, "bad folded %zu: NT_EFORMAT", i);
		is_str(err.msg, cases[i][1], "bad folded %zu: message", i);
		is_u64(err.offset, strtoull(cases[i][2], NULL, 10), "bad folded %zu: offset", i);
		is_str(nt_stacks_error_input(s), "in.folded", "bad folded %zu: names its input", i);
		nt_stacks_free(s);
	}
}

static void test_export_folded_several_texts(void)
{
	nt_stacks *s = folded("a 1\n", NT_UNIT_SAMPLES);
	nt_error err;
	nt_error_clear(&err);
	const char *t2 = "b 2\nbad\n";
	is_int(nt_stacks_add_folded(s, t2, strlen(t2), "second", &err), 0, "add a second text");
	got g;
	memset(&g, 0, sizeof g);
	is_int(nt_stacks_foreach(s, collect, &g, &err), NT_EFORMAT, "second text's bad line fails");
	is_int(g.n, 2, "lines of both texts before it");
	is_str(nt_stacks_error_input(s), "second", "the error names the second text");
	is_u64(err.offset, 4, "offset within the second text");
	nt_stacks_free(s);
}

/* ------------------------------------------------------------------ shared prefixes */

typedef struct shared_ctx {
	nt_xprev pv;
	size_t got[8];
	size_t n;
} shared_ctx;

static int on_shared(void *ctx, const nt_xstack *st)
{
	shared_ctx *c = ctx;
	if (c->n < 8)
		c->got[c->n++] = nt_xprev_shared(&c->pv, st);
	return 0;
}

static void test_export_prefix_sharing(void)
{
	const char *text = "a;bc;d 1\na;b;d 1\na;b;d;e 1\na;b;dd 1\na;b 1\nz 1\na;b;dd 1\n";
	nt_stacks *s = folded(text, NT_UNIT_SAMPLES);
	shared_ctx c;
	memset(&c, 0, sizeof c);
	nt_error err;
	nt_error_clear(&err);
	nt_stacks_foreach(s, on_shared, &c, &err);
	is_int(c.n, 7, "prefix: 7 stacks");
	is_int(c.got[0], 0, "prefix: first stack shares nothing");
	is_int(c.got[1], 1, "prefix: 'bc' and 'b' differ although one starts the other");
	is_int(c.got[2], 3, "prefix: a deeper stack shares all of the previous one");
	is_int(c.got[3], 2, "prefix: 'd' and 'dd' differ");
	is_int(c.got[4], 2, "prefix: a shorter stack shares all of itself");
	is_int(c.got[5], 0, "prefix: another root shares nothing");
	is_int(c.got[6], 0, "prefix: nothing after a different root");
	nt_xprev_free(&c.pv);
	nt_stacks_free(s);
}

/* ------------------------------------------------------------------ flame tree */

static void test_export_ftree_totals_and_order(void)
{
	nt_stacks *s = folded("main;b 2\nmain;a 3\nmain 1\nother 4\nmain;b;x 0.5\n",
			      NT_UNIT_SAMPLES);
	nt_stacks *b = folded("main;a 6\nother 2\n", NT_UNIT_SAMPLES);
	nt_ftree *t = nt_ftree_new();
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_ftree_add(t, 0, s, &err), 0, "ftree: add side 0");
	is_int(nt_ftree_add(t, 1, b, &err), 0, "ftree: add side 1");
	is_int(nt_ftree_seal(t, 0, &err), 0, "ftree: seal");
	const nt_fnode *root = nt_ftree_node(t, 0);
	ok(root->total[0] == 10.5 && root->total[1] == 8, "ftree: root totals 10.5 and 8");
	long m = nt_ftree_child(t, 0, "main");
	ok(m > 0, "ftree: main under the root");
	const nt_fnode *mn = nt_ftree_node(t, (size_t)m);
	ok(mn->total[0] == 6.5 && mn->self[0] == 1 && mn->total[1] == 6,
	   "ftree: main total 6.5, self 1, base 6");
	is_int(mn->nkids, 2, "ftree: main has 2 children");
	nt_xframe k0 = nt_ftree_name(t, nt_ftree_kids(t, (size_t)m)[0]);
	nt_xframe k1 = nt_ftree_name(t, nt_ftree_kids(t, (size_t)m)[1]);
	ok(k0.n == 1 && k0.s[0] == 'a' && k1.n == 1 && k1.s[0] == 'b', "ftree: children in name order");
	nt_xframe r0 = nt_ftree_name(t, nt_ftree_kids(t, 0)[0]);
	ok(r0.n == 4 && memcmp(r0.s, "main", 4) == 0, "ftree: 'main' before 'other'");
	is_int(nt_ftree_category(t, 0), -1, "ftree: folded input has no categories");
	is_int(nt_ftree_count(t), 6, "ftree: 6 nodes (root, main, a, b, x, other)");
	nt_ftree_free(t);
	/* by weight: heaviest first (a 3 before b 2.5 under main; at the root main 6.5, then
	 * other and z, 4 each, by name) */
	t = nt_ftree_new();
	nt_stacks *w = folded("main;b 2\nmain;a 3\nmain 1\nother 4\nmain;b;x 0.5\nz 4\n",
			      NT_UNIT_SAMPLES);
	nt_ftree_add(t, 0, w, &err);
	is_int(nt_ftree_seal(t, 1, &err), 0, "ftree: seal by weight");
	m = nt_ftree_child(t, 0, "main");
	const uint32_t *rk = nt_ftree_kids(t, 0);
	nt_xframe w0 = nt_ftree_name(t, rk[0]), w1 = nt_ftree_name(t, rk[1]),
		  w2 = nt_ftree_name(t, rk[2]);
	ok(w0.n == 4 && memcmp(w0.s, "main", 4) == 0 && w1.n == 5 && memcmp(w1.s, "other", 5) == 0 &&
	   w2.n == 1 && w2.s[0] == 'z',
	   "ftree by weight: main (6.5), then the tie other/z (4) by name");
	nt_xframe m0 = nt_ftree_name(t, nt_ftree_kids(t, (size_t)m)[0]);
	ok(m0.n == 1 && m0.s[0] == 'a', "ftree by weight: a (3) before b (2.5)");
	nt_ftree_free(t);
	nt_stacks_free(w);
	nt_stacks_free(s);
	nt_stacks_free(b);
}

/* ------------------------------------------------------------------ escaping */

static void test_export_escapes_xml_and_json(void)
{
	nt_membuf mb = {0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_out o;
	nt_out_init(&o, &sink);
	const char in[] = "<script>&\"'\x01\t\xff\xc3\xa9\xed\xa0\x80]]>";
	nt_out_xml(&o, in, sizeof in - 1);
	nt_out_str(&o, "|");
	nt_out_json(&o, in, sizeof in - 1);
	is_int(nt_out_end(&o), 0, "escape: written");
	char *s = malloc(mb.len + 1);
	memcpy(s, mb.data, mb.len);
	s[mb.len] = '\0';
	is_str(s,
	       "&lt;script&gt;&amp;&quot;&#39;?\t\xEF\xBF\xBD\xc3\xa9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD]]&gt;"
	       "|<script>&\\\"'\\u0001\\t\xEF\xBF\xBD\xc3\xa9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD]]>",
	       "escape: markup, control bytes, invalid UTF-8 and surrogates replaced");
	free(s);
	nt_membuf_free(&mb);
}

/* ------------------------------------------------------------------ memory buffers */

static void test_export_out_memory(void)
{
	nt_out o;
	nt_out_init(&o, NULL);
	ok(nt_out_data(&o) == NULL && nt_out_len(&o) == 0, "out mem: empty, nothing allocated");
	is_str(nt_out_cstr(&o), "", "out mem: an empty string");
	nt_out_str(&o, "SELECT ");
	nt_out_printf(&o, "%d, '%s'", 42, "x");
	is_int((long long)nt_out_len(&o), 14, "out mem: 14 bytes");
	is_str(nt_out_cstr(&o), "SELECT 42, 'x'", "out mem: NUL-terminated when asked");
	is_int(nt_out_flush(&o), 0, "out mem: flush without a sink");
	is_int((long long)nt_out_len(&o), 14, "out mem: flush keeps the bytes");
	char big[600];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	nt_out_reset(&o);
	nt_out_printf(&o, "<%s>", big); /* longer than printf's stack copy */
	ok(nt_out_len(&o) == sizeof big + 1 && nt_out_cstr(&o)[0] == '<' &&
	   nt_out_cstr(&o)[sizeof big] == '>' && nt_out_cstr(&o)[sizeof big + 1] == '\0',
	   "out mem: a long printf after reset");
	/* past the 1 MiB at which a sink's buffer flushes: a memory buffer keeps all */
	nt_out_reset(&o);
	for (int i = 0; i < 3000; i++)
		nt_out_put(&o, big, sizeof big - 1);
	ok(o.rc == 0 && nt_out_len(&o) == 3000 * (sizeof big - 1), "out mem: 1.8 MB kept");
	nt_out_reset(&o);
	ok(nt_out_reserve(&o, 24) == 0 && o.cap >= 24, "out mem: reserve");
	memcpy(nt_out_tail(&o), "abc", 3);
	nt_out_advance(&o, 3);
	nt_out_put(&o, "d", 1);
	char *s = nt_out_take(&o);
	is_str(s, "abcd", "out mem: take hands over the bytes");
	ok(nt_out_data(&o) == NULL && nt_out_len(&o) == 0, "out mem: empty after take");
	free(s);
	/* a failure sticks: later writes are dropped, no string is returned */
	nt_out_put(&o, "x", 1);
	is_int(nt_out_reserve(&o, SIZE_MAX), -1, "out mem: an impossible reserve fails");
	is_int(o.rc, NT_ENOMEM, "out mem: NT_ENOMEM sticks");
	nt_out_put(&o, "y", 1);
	ok(nt_out_len(&o) == 1 && nt_out_cstr(&o) == NULL && nt_out_take(&o) == NULL,
	   "out mem: after the failure, no write and no string");
	is_int(nt_out_end(&o), NT_ENOMEM, "out mem: end reports it");
	nt_out z = {0};
	nt_out_put(&z, "zero", 4);
	is_str(nt_out_cstr(&z), "zero", "out mem: a zeroed nt_out is a memory buffer");
	is_int(nt_out_end(&z), 0, "out mem: end frees");
}

/* ------------------------------------------------------------------ SVG */

static int svg_of(nt_stacks *s, nt_stacks *base, const nt_flame_opts *o, nt_membuf *mb)
{
	nt_sink sink = nt_sink_membuf(mb);
	nt_error err;
	nt_error_clear(&err);
	int rc = nt_flame_write_svg(s, base, o, &sink, &err);
	if (rc)
		printf("# svg: %s\n", err.msg);
	return rc;
}

static void test_export_svg_escapes_names(void)
{
	nt_stacks *s = folded("main;<script>alert(1)</script> 5\nmain;x]]><script>y</script> 1\n"
			      "main;a&b\"c 1\n", NT_UNIT_SAMPLES);
	nt_membuf mb = {0};
	is_int(svg_of(s, NULL, NULL, &mb), 0, "svg: written");
	const char *d = (const char *)mb.data;
	ok(mb.len > 100 && memcmp(d, "<?xml", 5) == 0, "svg: an XML document");
	is_int(count(d, mb.len, "<script"), 1, "svg: one <script> element, ours");
	is_int(count(d, mb.len, "]]>"), 1, "svg: one CDATA end, ours (the script has none)");
	ok(contains(&mb, "<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>"),
	   "svg: the <script> frame name is escaped text");
	ok(contains(&mb, "<title>x]]&gt;&lt;script&gt;y&lt;/script&gt;</title>"),
	   "svg: a CDATA end in a name is escaped");
	ok(contains(&mb, "<title>a&amp;b&quot;c</title>"), "svg: & and \" escaped");
	ok(contains(&mb, "var cfg = {") && contains(&mb, "window.flamegraph"), "svg: has its script");
	ok(contains(&mb, "<g v=\"7\" s=\"0\" o=\"0\"><title>all</title>"), "svg: root 'all' of 7");
	nt_membuf_free(&mb);
	nt_stacks_free(s);
}

static void test_export_svg_minwidth_and_layout(void)
{
	nt_stacks *s = folded("a;b 100000\na;c 1\n", NT_UNIT_SAMPLES);
	nt_membuf mb = {0};
	svg_of(s, NULL, NULL, &mb);
	is_int(count((char *)mb.data, mb.len, "<g v=\""), 3, "svg: default minwidth drops a 0.01 px frame");
	nt_membuf_free(&mb);
	/* zero is the default in every options struct: min_width 0 is not "keep everything" */
	nt_flame_opts zero = NT_INIT(nt_flame_opts);
	svg_of(s, NULL, &zero, &mb);
	is_int(count((char *)mb.data, mb.len, "<g v=\""), 3,
	       "svg: min_width 0 (NT_INIT) is the default: the 0.01 px frame is dropped too");
	nt_membuf_free(&mb);
	nt_flame_opts o = {sizeof o, "My <title>", "sub", 800, 20, -1, 0, 1, 0, NULL, 0, 0, 0};
	svg_of(s, NULL, &o, &mb);
	is_int(count((char *)mb.data, mb.len, "<g v=\""), 4, "svg: min_width < 0 keeps every frame");
	ok(contains(&mb, ">My &lt;title&gt;</text>"), "svg: escaped title");
	ok(contains(&mb, "width=\"800\"") && contains(&mb, "icicle: 1"), "svg: width and icicle");
	/* icicle: the root row is the top one */
	ok(contains(&mb, "<title>all</title><rect x=\"10.00\" y=\"48.0\""), "svg: icicle root at the top");
	nt_membuf_free(&mb);
	nt_flame_opts pct = {sizeof pct, NULL, NULL, 0, 0, 60, 1, 0, 0, NULL, 0, 0, 0};
	svg_of(s, NULL, &pct, &mb);
	is_int(count((char *)mb.data, mb.len, "<g v=\""), 3, "svg: --minwidth 60%% keeps 3 frames");
	nt_membuf_free(&mb);
	nt_flame_opts bad = {sizeof bad, NULL, NULL, 50, 0, -1, 0, 0, 0, NULL, 0, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_flame_write_svg(s, NULL, &bad, &sink, &err), NT_EINVAL, "svg: width 50 rejected");
	nt_membuf_free(&mb);
	nt_stacks_free(s);
}

static void test_export_svg_timeline(void)
{
	nt_stacks *s = folded("a;b 6\na;c 4\n", NT_UNIT_SAMPLES);
	nt_membuf mb = {0};
	uint64_t bins[4] = {2, 0, 4, 4};
	nt_flame_opts o = {sizeof o, NULL, NULL, 0, 0, -1, 0, 0, 0, NULL, 0, 0, 0};
	o.timeline_n = 4;
	o.timeline = bins;
	o.timeline_start_ns = 1000000000;
	o.timeline_end_ns = 3000000000;
	is_int(svg_of(s, NULL, &o, &mb), 0, "timeline svg: written");
	is_int(count((char *)mb.data, mb.len, "<rect n=\""), 4, "timeline svg: one bar per bucket");
	ok(contains(&mb, "<g id=\"timeline\" samples=\"10\">"), "timeline svg: total samples");
	ok(contains(&mb, "<rect n=\"4\" x=\"600.00\" y=\"48.00\" width=\"295.00\" height=\"40.00\""),
	   "timeline svg: the fullest bar is 40 px");
	ok(contains(&mb, ">1.000s</text>") && contains(&mb, ">3.000s</text>"),
	   "timeline svg: start and end in seconds");
	ok(contains(&mb, "id=\"timeline-range\"") && contains(&mb, "tl: {n: 4, start: 1000000000"),
	   "timeline svg: range text and the script's timeline");
	nt_membuf_free(&mb);
	svg_of(s, NULL, NULL, &mb);
	ok(!contains(&mb, "id=\"timeline\"") && contains(&mb, "tl: null"), "no timeline by default");
	nt_membuf_free(&mb);
	o.timeline = NULL;
	nt_sink sink = nt_sink_membuf(&mb);
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_flame_write_svg(s, NULL, &o, &sink, &err), NT_EINVAL, "timeline svg: no counts rejected");
	nt_membuf_free(&mb);
	nt_stacks_free(s);
}

static void test_export_svg_differential(void)
{
	nt_stacks *s = folded("m;grew 3\nm;same 1\n", NT_UNIT_SAMPLES);
	nt_stacks *b = folded("m;grew 1\nm;same 1\nm;gone 2\n", NT_UNIT_SAMPLES);
	nt_membuf mb = {0};
	is_int(svg_of(s, b, NULL, &mb), 0, "diff svg: written");
	ok(contains(&mb, ">Differential Flame Graph<"), "diff svg: default title");
	ok(contains(&mb, "diff: 1"), "diff svg: the script knows");
	/* grew: 75% now, 25% before: the strongest change, full red */
	ok(contains(&mb, "<g v=\"3\" s=\"3\" o=\"0\" b=\"1\"><title>grew</title>") &&
	   contains(&mb, "fill=\"rgb(255,35,35)\""), "diff svg: 'grew' is full red");
	ok(!contains(&mb, "<title>gone</title>"), "diff svg: frames only in the base are not drawn");
	nt_membuf_free(&mb);
	/* a base equal to the profile: no colour */
	nt_stacks *same = folded("m;grew 3\nm;same 1\n", NT_UNIT_SAMPLES);
	svg_of(s, same, NULL, &mb);
	is_int(count((char *)mb.data, mb.len, "fill=\"rgb(225,225,225)\""), 4,
	       "diff svg: identical profiles are all grey");
	nt_membuf_free(&mb);
	nt_stacks_free(same);
	nt_stacks_free(s);
	nt_stacks_free(b);
}

static void test_export_svg_empty(void)
{
	nt_stacks *s = folded("", NT_UNIT_SAMPLES);
	nt_membuf mb = {0};
	is_int(svg_of(s, NULL, NULL, &mb), 0, "empty svg: written");
	ok(contains(&mb, ">No samples</text>") && count((char *)mb.data, mb.len, "<g v=\"") == 0,
	   "empty svg: says so, no frames");
	nt_membuf_free(&mb);
	nt_stacks_free(s);
}

/* ------------------------------------------------------------------ speedscope */

static void test_export_speedscope(void)
{
	nt_stacks *s = folded("a;b 2\na;c 1.25\na;b 3\n", NT_UNIT_MS);
	nt_membuf mb = {0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_speedscope_write(s, &sink, &err), 0, "speedscope: written");
	ok(contains(&mb, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""),
	   "speedscope: schema");
	ok(contains(&mb, "\"frames\":[\n{\"name\":\"a\"},\n{\"name\":\"b\"},\n{\"name\":\"c\"}]"),
	   "speedscope: shared frames, each once");
	ok(contains(&mb, "{\"type\":\"sampled\",\"name\":\"in.folded\",\"unit\":\"milliseconds\","
			 "\"startValue\":0,\"endValue\":6.25,"),
	   "speedscope: one sampled profile in ms, endValue the total");
	ok(contains(&mb, "\"samples\":[[0,1],[0,2],[0,1]],\n\"weights\":[2,1.25,3]"),
	   "speedscope: samples root first with their weights");
	nt_membuf_free(&mb);
	nt_stacks_free(s);
}

/* ------------------------------------------------------------------ pprof */

typedef struct pbr {
	const uint8_t *p;
	size_t n, i;
	int bad;
} pbr;

static uint64_t rd_varint(pbr *r)
{
	uint64_t v = 0;
	for (int sh = 0; sh < 64; sh += 7) {
		if (r->i >= r->n) {
			r->bad = 1;
			return 0;
		}
		uint8_t b = r->p[r->i++];
		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return v;
}

/* Next field: returns 0 at the end; for length-delimited fields *sub is the payload. */
static int rd_field(pbr *r, unsigned *field, uint64_t *val, pbr *sub)
{
	if (r->i >= r->n || r->bad)
		return 0;
	uint64_t tag = rd_varint(r);
	*field = (unsigned)(tag >> 3);
	if ((tag & 7) == 0) {
		*val = rd_varint(r);
	} else if ((tag & 7) == 2) {
		uint64_t len = rd_varint(r);
		if (len > r->n - r->i) {
			r->bad = 1;
			return 0;
		}
		*sub = (pbr){r->p + r->i, (size_t)len, 0, 0};
		r->i += (size_t)len;
	} else {
		r->bad = 1;
		return 0;
	}
	return !r->bad;
}

static void test_export_pprof(void)
{
	nt_stacks *s = folded("main;work 3\nmain;idle 2\nmain;work;<leaf> 1\n", NT_UNIT_SAMPLES);
	nt_membuf mb = {0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_error err;
	nt_error_clear(&err);
	nt_pprof_opts po = {sizeof po, -1, NULL, 0};
	is_int(nt_pprof_write(s, &po, &sink, &err), 0, "pprof: written uncompressed");
	pbr r = {mb.data, mb.len, 0, 0}, sub;
	unsigned f;
	uint64_t v;
	char strs[32][32];
	size_t nstr = 0, nsamples = 0, nloc = 0, nfunc = 0, ntypes = 0, nmap = 0;
	uint64_t total = 0, leaf_of_last = 0;
	while (rd_field(&r, &f, &v, &sub)) {
		if (f == 6 && nstr < 32) {
			snprintf(strs[nstr++], 32, "%.*s", (int)sub.n, (const char *)sub.p);
		} else if (f == 2) {
			nsamples++;
			unsigned g;
			uint64_t w;
			pbr s2;
			while (rd_field(&sub, &g, &w, &s2)) {
				if (g == 2)
					total += rd_varint(&s2);
				if (g == 1)
					leaf_of_last = rd_varint(&s2);
			}
		} else if (f == 4) {
			nloc++;
		} else if (f == 5) {
			nfunc++;
		} else if (f == 1) {
			ntypes++;
		} else if (f == 3) {
			nmap++;
		}
	}
	ok(!r.bad && r.i == r.n, "pprof: well-formed protobuf");
	is_int(nsamples, 3, "pprof: one sample per stack");
	is_u64(total, 6, "pprof: values add up to 6 samples");
	is_int(ntypes, 1, "pprof: folded sample counts: one sample type");
	is_int(nloc, 4, "pprof: one location per frame name");
	is_int(nfunc, 4, "pprof: one function per frame name");
	is_int(nmap, 1, "pprof: one mapping");
	ok(nstr > 0 && strs[0][0] == '\0', "pprof: string_table[0] is empty");
	size_t leafs = 0;
	for (size_t i = 0; i < nstr; i++)
		leafs += strcmp(strs[i], "<leaf>") == 0;
	is_int(leafs, 1, "pprof: frame names in the string table, once");
	is_u64(leaf_of_last, 4, "pprof: locations leaf first (the last sample starts at <leaf>)");
	nt_membuf_free(&mb);

	/* gzip'd by default, and inflates to the same bytes as level -1 */
	nt_membuf raw = {0}, gz = {0};
	nt_sink s1 = nt_sink_membuf(&raw), s2 = nt_sink_membuf(&gz);
	nt_pprof_write(s, &po, &s1, &err);
	nt_pprof_write(s, NULL, &s2, &err);
	ok(gz.len > 18 && gz.data[0] == 0x1f && gz.data[1] == 0x8b, "pprof: gzip magic");
	uint8_t *out = malloc(raw.len + 16);
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	inflateInit2(&zs, 31);
	zs.next_in = gz.data;
	zs.avail_in = (uInt)gz.len;
	zs.next_out = out;
	zs.avail_out = (uInt)raw.len + 16;
	int zr = inflate(&zs, Z_FINISH);
	ok(zr == Z_STREAM_END && zs.total_out == raw.len && memcmp(out, raw.data, raw.len) == 0,
	   "pprof: the gzip stream inflates to the profile");
	inflateEnd(&zs);
	free(out);
	nt_membuf_free(&raw);
	nt_membuf_free(&gz);
	nt_stacks_free(s);
}

/* pprof's time_nanos comes from the header's SYSTEMTIME, which is the file's word: a date
 * int64 nanoseconds cannot hold is "unknown" (0), not a signed overflow. */
static void test_export_systemtime_range(void)
{
	uint16_t t2020[8] = {2020, 3, 0, 14, 15, 9, 26, 535};
	is_int(nt_systemtime_to_unix_ns(t2020), 1584198566535000000ll,
	       "systemtime: 2020-03-14T15:09:26.535Z");
	uint16_t y0[8] = {0, 0, 0, 0, 0, 0, 0, 0}, ymax[8] = {65535, 12, 0, 31, 23, 59, 59, 999};
	uint16_t y1677[8] = {1677, 1, 0, 1, 0, 0, 0, 0}, y2262[8] = {2262, 1, 0, 1, 0, 0, 0, 0};
	is_int(nt_systemtime_to_unix_ns(y0), 0, "systemtime: year 0 is unknown (0)");
	is_int(nt_systemtime_to_unix_ns(ymax), 0, "systemtime: year 65535 is unknown (0)");
	is_int(nt_systemtime_to_unix_ns(y1677), 0, "systemtime: 1677 is out of range (0)");
	ok(nt_systemtime_to_unix_ns(y2262) == 9214646400000000000ll,
	   "systemtime: 2262-01-01 still fits");
}

int main(void)
{
	test_export_systemtime_range();
	test_export_folded_parses_lines();
	test_export_folded_rejects_bad_lines();
	test_export_folded_several_texts();
	test_export_prefix_sharing();
	test_export_ftree_totals_and_order();
	test_export_escapes_xml_and_json();
	test_export_out_memory();
	test_export_svg_escapes_names();
	test_export_svg_minwidth_and_layout();
	test_export_svg_timeline();
	test_export_svg_differential();
	test_export_svg_empty();
	test_export_speedscope();
	test_export_pprof();
	return tap_done();
}
