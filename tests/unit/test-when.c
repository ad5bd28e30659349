/* SPDX-License-Identifier: MIT */
/* test-when.c - unit tests of the time histograms ("when"): the profile's shared grid
 * (profile.c: one sparse histogram per group, widened by doubling as samples arrive, also
 * towards the past; bins add up to each group's samples; resolution kept for short
 * traces; absurd times clamp) and the trees built on it (tree.c: display buckets that are
 * whole fine buckets covering the samples; every node's, function's and the root's
 * histogram adds up to its samples; a function that only runs in the second half of a
 * trace has an empty first half; category filters; the text column and header; errors).
 * Traces are written in memory with the writer; frames resolve through rundown events. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace.h"
#include "tap.h"
#include "pbuf.h"

/* ------------------------------------------------------------------ building traces */

enum { M_MAIN, M_LOAD, M_COMPUTE, M_LOCK, M_REC, M_COUNT };
static const char *const ns_of[M_COUNT] = {"App", "App", "App", "System.Threading.Monitor",
					   "App"};
static const char *const name_of[M_COUNT] = {"Main", "Load", "Compute", "Enter", "Rec"};
#define IP(m) (0x10000ull + 0x1000ull * (uint64_t)(m) + 0x10)
#define SYNC 1000000000ull /* SyncTimeQPC; samples may come before it */
/* Ticks per second of the traces written: 1 GHz (times in ns) except for the test of
 * absurd times. */
static uint64_t g_freq = 1000000000;

/* One sample: thread, time in ns relative to SYNC (1 GHz clock), stack root first
 * (method + 1, 0 ends). */
typedef struct wsample {
	uint64_t tid;
	int64_t t;
	int frames[6];
} wsample;

/* Writes the samples (time order) and the rundown into *mb. */
static int write_trace(nt_membuf *mb, const wsample *s, size_t n)
{
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.sync_qpc = SYNC;
	h.qpc_frequency = g_freq;
	h.pointer_size = 8;
	h.expected_sampling_ns = 1000000;
	nt_sink sink = nt_sink_membuf(mb);
	nt_writer *w = NULL;
	nt_error err;
	nt_error_clear(&err);
	uint32_t sid, mid, did;
	nt_metadata_desc ds = {NT_PROVIDER_SAMPLER, 0, "ThreadSample", 0, 0, 5, 0, NULL, 0};
	nt_metadata_desc dm = {NT_PROVIDER_RUNDOWN, 144, "MethodDCEndVerbose", 0x30, 1, 4, 0, NULL, 0};
	nt_metadata_desc dd = {NT_PROVIDER_RUNDOWN, 152, "DomainModuleDCEnd", 0x8, 1, 4, 0, NULL, 0};
	if (nt_writer_open(&w, &sink, &h, NULL, &err) || nt_writer_add_metadata(w, &ds, &sid, &err) ||
	    nt_writer_add_metadata(w, &dm, &mid, &err) || nt_writer_add_metadata(w, &dd, &did, &err))
		goto fail;
	uint64_t last = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t ips[6];
		uint32_t depth = 0;
		while (depth < 6 && s[i].frames[depth])
			depth++;
		for (uint32_t k = 0; k < depth; k++)
			ips[k] = IP(s[i].frames[depth - 1 - k] - 1);
		pbuf p = {{0}, 0};
		pb_u32(&p, 2);
		nt_event_desc e;
		memset(&e, 0, sizeof e);
		e.metadata_id = sid;
		e.thread_id = s[i].tid;
		e.capture_thread_id = 7;
		e.timestamp = last = SYNC + (uint64_t)s[i].t; /* wraps for t < 0 */
		e.stack = ips;
		e.stack_depth = depth;
		e.payload = p.b;
		e.payload_len = (uint32_t)p.n;
		if (nt_writer_write_event(w, &e, &err))
			goto fail;
	}
	for (int m = 0; m < M_COUNT; m++) {
		pbuf p = {{0}, 0};
		pb_u64(&p, 0x500 + (uint64_t)m);
		pb_u64(&p, 0x77);
		pb_u64(&p, IP(m) - 0x10);
		pb_u32(&p, 0x100);
		pb_u32(&p, 0x06000001u + (uint32_t)m);
		pb_u32(&p, 0x8);
		pb_str(&p, ns_of[m]);
		pb_str(&p, name_of[m]);
		pb_str(&p, "void  ()");
		pb_u16(&p, 9);
		nt_event_desc e;
		memset(&e, 0, sizeof e);
		e.metadata_id = mid;
		e.thread_id = e.capture_thread_id = 8;
		e.timestamp = last + 1000 + (uint64_t)m;
		e.payload = p.b;
		e.payload_len = (uint32_t)p.n;
		if (nt_writer_write_event(w, &e, &err))
			goto fail;
	}
	pbuf p = {{0}, 0};
	pb_u64(&p, 0x77);
	pb_u64(&p, 0x99);
	pb_u64(&p, 0x1);
	pb_u32(&p, 0);
	pb_u32(&p, 0);
	pb_str(&p, "C:\\app\\app.dll");
	pb_str(&p, "");
	pb_u16(&p, 9);
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = did;
	e.thread_id = e.capture_thread_id = 8;
	e.timestamp = last + 2000;
	e.payload = p.b;
	e.payload_len = (uint32_t)p.n;
	if (nt_writer_write_event(w, &e, &err) || nt_writer_close(w, &err)) {
		w = NULL;
		goto fail;
	}
	return 0;
fail:
	printf("# writer: %s\n", err.msg);
	nt_writer_free(w);
	return -1;
}

/* A profile (with when unless no_when) of one session per sample array. */
static nt_profile *make_profile(const wsample *const *s, const size_t *n, int nsess,
				unsigned category_mask, int no_when)
{
	nt_profile *p = NULL;
	nt_error err;
	nt_error_clear(&err);
	nt_profile_opts po;
	memset(&po, 0, sizeof po);
	po.sz = sizeof po;
	po.when = !no_when;
	po.category_mask = category_mask;
	if (nt_profile_new(&p, &po, &err)) {
		printf("# profile: %s\n", err.msg);
		return NULL;
	}
	for (int i = 0; i < nsess; i++) {
		nt_membuf mb = {NULL, 0, 0};
		nt_reader *r = NULL;
		int bad = write_trace(&mb, s[i], n[i]) ||
			  nt_reader_open_mem(&r, mb.data, mb.len, NULL, &err) ||
			  nt_profile_add_trace(p, r, "synthetic", &err);
		nt_reader_free(r);
		nt_membuf_free(&mb);
		if (bad) {
			printf("# profile: %s\n", err.msg);
			nt_profile_free(p);
			return NULL;
		}
	}
	return p;
}

/* ------------------------------------------------------------------ the profile's grid */

typedef struct gcheck {
	int bad;           /* a group whose bins do not add up, or out of order */
	uint64_t samples;  /* all bins */
	uint32_t lo, hi;   /* bucket range seen */
	int any;
} gcheck;

static int check_group(void *ctx, const nt_sample_group *g)
{
	gcheck *c = ctx;
	uint64_t sum = 0;
	if (!g->when && g->samples) {
		c->bad = 1;
		return 0;
	}
	for (size_t i = 0; i < g->nwhen; i++) {
		sum += g->when[i].samples;
		if (g->when[i].bucket >= NT_WHEN_FINE || g->when[i].samples == 0 ||
		    (i && g->when[i].bucket <= g->when[i - 1].bucket))
			c->bad = 1;
		if (!c->any || g->when[i].bucket < c->lo)
			c->lo = g->when[i].bucket;
		if (!c->any || g->when[i].bucket > c->hi)
			c->hi = g->when[i].bucket;
		c->any = 1;
	}
	if (sum != g->samples)
		c->bad = 1;
	c->samples += sum;
	return 0;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static void test_when_grid(void)
{
	/* 3000 samples 1 ms apart from 5 ms after the session start, two stacks */
	wsample *s = calloc(3000, sizeof *s);
	for (int i = 0; s && i < 3000; i++) {
		s[i].tid = 100;
		s[i].t = 5000000 + 1000000LL * i;
		s[i].frames[0] = M_MAIN + 1;
		s[i].frames[1] = (i % 3 ? M_LOAD : M_COMPUTE) + 1;
	}
	size_t n = 3000;
	const wsample *ss[1] = {s};
	nt_profile *p = s ? make_profile(ss, &n, 1, 0, 0) : NULL;
	nt_when_grid g = NT_INIT(nt_when_grid);
	nt_error err;
	nt_error_clear(&err);
	ok(p && nt_profile_when_grid(p, &g, &err) == 0, "the grid of a profile with when");
	if (!p) {
		free(s);
		return;
	}
	is_int(g.nbuckets, NT_WHEN_FINE, "NT_WHEN_FINE buckets");
	ok(is_pow2(g.width_ns), "the width is a power of two ns (%" PRIu64 ")", g.width_ns);
	is_int(g.origin_ns, 5000000, "the grid starts at the first sample");
	ok(g.width_ns * NT_WHEN_FINE >= 2999000000ull && g.width_ns * NT_WHEN_FINE / 2 < 2999000000ull,
	   "the grid is the narrowest power of two that holds the span");
	is_u64(g.samples, 3000, "every sample recorded");
	is_int(g.first, 0, "the first sample is in bucket 0");
	is_int(g.last, (int)(2999000000ull / g.width_ns), "the last in its bucket");
	ok(g.last >= NT_WHEN_FINE / 2, "the samples cover at least half the grid");
	gcheck c;
	memset(&c, 0, sizeof c);
	nt_profile_foreach(p, check_group, &c);
	ok(!c.bad, "each group's bins are in order and add up to its samples");
	is_u64(c.samples, 3000, "all bins add up to the samples");
	nt_profile_free(p);

	/* a short trace keeps its resolution: 10 samples 1 us apart */
	for (int i = 0; i < 10; i++)
		s[i].t = 1000 * i;
	n = 10;
	p = make_profile(ss, &n, 1, 0, 0);
	int grid_ok = p && nt_profile_when_grid(p, &g, &err) == 0;
	ok(grid_ok && g.width_ns <= 16 && g.samples == 10,
	   "10 samples over 9 us: fine buckets of <= 16 ns (%" PRIu64 ")", grid_ok ? g.width_ns : 0);
	memset(&c, 0, sizeof c);
	nt_profile_foreach(p, check_group, &c);
	ok(!c.bad && c.lo == 0 && c.hi == 9000 / g.width_ns, "and the bins reflect it");
	nt_profile_free(p);

	/* two sessions: the second starts 2 s before its session start (negative times), so
	 * the grid widens towards the past */
	wsample *s2 = calloc(100, sizeof *s2);
	for (int i = 0; s2 && i < 100; i++) {
		s2[i].tid = 200;
		s2[i].t = -2000000000LL + 10000000LL * i;
		s2[i].frames[0] = M_MAIN + 1;
		s2[i].frames[1] = M_LOCK + 1;
	}
	n = 3000;
	size_t ns[2] = {3000, 100};
	const wsample *sv[2] = {NULL, s2};
	for (int i = 0; i < 3000; i++)
		s[i].t = 5000000 + 1000000LL * i;
	sv[0] = s;
	p = s2 ? make_profile(sv, ns, 2, 0, 0) : NULL;
	ok(p && nt_profile_when_grid(p, &g, &err) == 0, "grid over two sessions");
	ok(p && g.origin_ns <= -2000000000LL && g.origin_ns + (int64_t)(g.width_ns * NT_WHEN_FINE) > 2999000000LL,
	   "the grid widened towards the past: it holds -2 s .. 3 s");
	ok(p && is_pow2(g.width_ns) && g.samples == 3100, "3100 samples, width a power of two");
	memset(&c, 0, sizeof c);
	nt_profile_foreach(p, check_group, &c);
	ok(!c.bad && c.samples == 3100, "bins still add up after widening both ways");
	ok(p && c.lo == g.first && c.hi == g.last, "first and last bucket of the grid");

	/* trees: display buckets cover the samples */
	nt_tree_opts to;
	memset(&to, 0, sizeof to);
	to.sz = sizeof to;
	to.when_buckets = 10;
	nt_tree *t = NULL;
	nt_error_clear(&err);
	is_int(p ? nt_tree_new(&t, p, &to, &err) : -1, 0, "tree with 10 time buckets");
	nt_tree_when_info wi = NT_INIT(nt_tree_when_info);
	ok(nt_tree_when(t, &wi) == 1 && wi.buckets == 10, "nt_tree_when: 10 buckets");
	ok(t && wi.fine_ns == g.width_ns && wi.start_ns <= -2000000000LL &&
		   wi.start_ns > -2000000000LL - (int64_t)g.width_ns && wi.end_ns > 3004000000LL &&
		   wi.end_ns <= 3004000000LL + (int64_t)g.width_ns &&
		   (uint64_t)(wi.end_ns - wi.start_ns) == (uint64_t)wi.fine * wi.fine_ns,
	   "display buckets: the fine buckets from the first sample's to the last's");
	uint64_t sum = 0;
	for (uint32_t i = 0; t && i < 10; i++)
		sum += nt_tree_root(t)->when[i];
	is_u64(sum, 3100, "the root's histogram adds up to its samples");
	ok(t && nt_tree_root(t)->when[0] > 0 && wi.peak > 0 && wi.samples == 3100,
	   "bucket 0 has the first samples; peak and samples set");
	nt_tree_free(t);
	nt_profile_free(p);

	/* absurd times: a 1 Hz clock, samples 1e9 ticks before the session start (-1e18 ns),
	 * at it, and 5e18 ticks after it (the reader saturates at INT64_MAX ns): 1e19 ns is
	 * beyond the widest grid, so the last sample is clamped into the last bucket */
	g_freq = 1;
	s2[0].t = -(int64_t)SYNC;
	s2[1].t = 0;
	s2[2].t = 5000000000000000000LL;
	ns[1] = 3;
	sv[0] = s2;
	p = make_profile(sv, ns + 1, 1, 0, 0);
	memset(&c, 0, sizeof c);
	nt_profile_foreach(p, check_group, &c);
	ok(p && nt_profile_when_grid(p, &g, &err) == 0 && !c.bad && c.samples == 3 &&
		   c.hi == NT_WHEN_FINE - 1,
	   "times 2^63 ns apart: every sample in some bucket, the last one clamped");
	nt_profile_free(p);
	g_freq = 1000000000;

	/* errors */
	p = make_profile(ss, &n, 1, 0, 1);
	nt_error_clear(&err);
	is_int(p ? nt_profile_when_grid(p, &g, &err) : 0, NT_EINVAL,
	       "nt_profile_when_grid without when: NT_EINVAL");
	memset(&c, 0, sizeof c);
	nt_profile_foreach(p, check_group, &c);
	ok(c.bad && c.samples == 0, "without when, groups have no bins");
	nt_error_clear(&err);
	t = NULL;
	is_int(p ? nt_tree_new(&t, p, &to, &err) : 0, NT_EINVAL,
	       "a tree with when_buckets over a profile without when: NT_EINVAL");
	ok(t == NULL && strstr(err.msg, "nt_profile_opts.when") != NULL, "... says why");
	nt_profile_free(p);
	p = make_profile(ss, &n, 1, 0, 0);
	to.when_buckets = NT_WHEN_MAX_BUCKETS + 1;
	nt_error_clear(&err);
	is_int(p ? nt_tree_new(&t, p, &to, &err) : 0, NT_EINVAL, "too many buckets: NT_EINVAL");
	to.when_buckets = 0;
	nt_error_clear(&err);
	ok(p && nt_tree_new(&t, p, &to, &err) == 0 && nt_tree_when(t, &wi) == 0 &&
		   nt_tree_root(t)->when == NULL,
	   "when_buckets 0: no histograms");
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_tree_print_opts pr;
	memset(&pr, 0, sizeof pr);
	pr.sz = sizeof pr;
	pr.when = 1;
	nt_error_clear(&err);
	is_int(t ? nt_tree_write_text(t, &pr, &sink, &err) : 0, NT_EINVAL,
	       "printing when without histograms: NT_EINVAL");
	nt_membuf_free(&mb);
	nt_tree_free(t);
	nt_profile_free(p);
	free(s);
	free(s2);
}

/* ------------------------------------------------------------------ phases in trees */

/* Sums of every node's histogram equal its samples (recursively); returns nodes checked,
 * or 0 on a mismatch. */
static size_t check_nodes(const nt_tree_node *n, uint32_t wb)
{
	uint64_t sum = 0;
	for (uint32_t i = 0; i < wb; i++)
		sum += n->when[i];
	if (sum != n->samples) {
		printf("# '%s': histogram %" PRIu64 ", samples %" PRIu64 "\n", n->name, sum, n->samples);
		return 0;
	}
	size_t k = 1;
	for (size_t i = 0; i < n->nchildren; i++) {
		size_t c = check_nodes(n->children[i], wb);
		if (!c)
			return 0;
		k += c;
	}
	return k;
}

static const nt_tree_node *child(const nt_tree_node *n, const char *name)
{
	for (size_t i = 0; n && i < n->nchildren; i++)
		if (strcmp(n->children[i]->name, name) == 0)
			return n->children[i];
	return NULL;
}

static char *render(const nt_tree *t, const nt_tree_print_opts *pr)
{
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_error err;
	nt_error_clear(&err);
	char *s = NULL;
	if (nt_tree_write_text(t, pr, &sink, &err) == 0 && (s = malloc(mb.len + 1))) {
		memcpy(s, mb.data, mb.len);
		s[mb.len] = '\0';
	} else if (err.code) {
		printf("# render: %s\n", err.msg);
	}
	nt_membuf_free(&mb);
	return s;
}

static void test_when_phases(void)
{
	/* 2000 ms, one sample per ms on thread 100: Main > Load for the first 1000, then
	 * Main > Compute; thread 101 every 5 ms: Main > Monitor.Enter (a lock), with
	 * recursion Main > Rec > Rec in the second half on thread 102 */
	wsample *s = calloc(3000, sizeof *s);
	size_t n = 0;
	for (int i = 0; s && i < 2000; i++) {
		wsample *w = &s[n++];
		w->tid = 100;
		w->t = 1000000LL * i;
		w->frames[0] = M_MAIN + 1;
		w->frames[1] = (i < 1000 ? M_LOAD : M_COMPUTE) + 1;
		if (i % 5 == 0) {
			w = &s[n++];
			w->tid = 101;
			w->t = 1000000LL * i + 100;
			w->frames[0] = M_MAIN + 1;
			w->frames[1] = M_LOCK + 1;
		}
		if (i >= 1000 && i % 10 == 0) {
			w = &s[n++];
			w->tid = 102;
			w->t = 1000000LL * i + 200;
			w->frames[0] = M_MAIN + 1;
			w->frames[1] = M_REC + 1;
			w->frames[2] = M_REC + 1;
		}
	}
	const wsample *ss[1] = {s};
	nt_profile *p = s ? make_profile(ss, &n, 1, 0, 0) : NULL;
	nt_tree_opts to;
	memset(&to, 0, sizeof to);
	to.sz = sizeof to;
	to.when_buckets = 20;
	to.by_samples = 1;
	to.no_module = 1;
	nt_tree *t = NULL;
	nt_error err;
	nt_error_clear(&err);
	is_int(p ? nt_tree_new(&t, p, &to, &err) : -1, 0, "tree of the phases trace, 20 buckets");
	if (!t) {
		nt_profile_free(p);
		free(s);
		return;
	}
	const nt_tree_node *root = nt_tree_root(t);
	size_t nodes = check_nodes(root, 20);
	ok(nodes == nt_tree_node_count(t), "every node's histogram adds up to its samples (%zu)",
	   nodes);
	const nt_tree_node *main_ = child(root, "App.Main()");
	const nt_tree_node *load = child(main_, "App.Load()");
	const nt_tree_node *compute = child(main_, "App.Compute()");
	ok(load && compute, "Load and Compute nodes");
	if (!load || !compute) {
		nt_tree_free(t);
		nt_profile_free(p);
		free(s);
		return;
	}
	/* the boundary (1000 ms) falls inside display bucket 9 at most */
	int first_empty = 1, second_empty = 1, first_full = 1, second_full = 1;
	for (int i = 0; i < 9; i++) {
		first_empty &= compute->when[i] == 0;
		first_full &= load->when[i] > 0;
	}
	for (int i = 11; i < 20; i++) {
		second_empty &= load->when[i] == 0;
		second_full &= compute->when[i] > 0;
	}
	ok(first_empty, "Compute (second half only): an empty first half");
	ok(second_full, "Compute: samples all over the second half");
	ok(second_empty, "Load (first half only): an empty second half");
	ok(first_full, "Load: samples all over the first half");
	uint64_t total = 0;
	for (int i = 0; i < 20; i++)
		total += main_->when[i];
	ok(total == main_->samples, "Main's histogram: all its samples");

	/* functions: a recursive function counts once per sample */
	const nt_tree_func *rec = NULL;
	for (size_t i = 0; i < nt_tree_func_count(t); i++) {
		const nt_tree_func *f = nt_tree_func_at(t, NT_TREE_BY_TOTAL, i);
		if (strcmp(f->name, "App.Rec()") == 0)
			rec = f;
	}
	uint64_t rs = 0, first = 0;
	for (int i = 0; rec && i < 20; i++) {
		rs += rec->when[i];
		first += i < 9 ? rec->when[i] : 0;
	}
	ok(rec && rs == rec->total_samples && rs == 100 && first == 0,
	   "a recursive function's histogram counts each sample once (100), second half only");

	/* rendering: ASCII column and header */
	nt_tree_print_opts pr;
	memset(&pr, 0, sizeof pr);
	pr.sz = sizeof pr;
	pr.unit = NT_UNIT_SAMPLES;
	pr.when = 1;
	pr.ascii = 1;
	char *out = render(t, &pr);
	const char *row = out ? strstr(out, "App.Compute()") : NULL;
	const char *bol = row;
	while (bol && bol > out && bol[-1] != '\n')
		bol--;
	/* the row: "  total%  self%  samples  <20 chars>  <indent>name" */
	ok(bol && strncmp(row - 4 - 20, "         ", 9) == 0 &&
		   strncmp(row - 4 - 10, "@@@@@@@@@", 9) == 0,
	   "text: Compute's column is blank, then full");
	if (bol)
		printf("# %.*s\n", (int)(strchr(bol, '\n') - bol), bol);
	ok(out && strstr(out, "\nWhen:      |") && strstr(out, "|  2500 samples, 0.000 s .. ") &&
		   strstr(out, ", 20 buckets of ") && strstr(out, ", busiest "),
	   "header: the overall histogram, samples, span, buckets, busiest bucket");
	ok(out && strstr(out, "  when                  frame\n"), "column title 'when', 20 wide");
	for (const char *q = out; q && *q; q++)
		if ((unsigned char)*q >= 0x80) {
			ok(0, "ascii output has only ASCII bytes");
			q = NULL;
			break;
		}
	free(out);
	pr.ascii = 0;
	out = render(t, &pr);
	ok(out && strstr(out, "\xe2\x96\x88") != NULL, "UTF-8: full blocks U+2588");
	free(out);
	pr.top = 3;
	out = render(t, &pr);
	ok(out && strstr(out, "  when                  function\n"), "top lists have the column too");
	free(out);
	nt_tree_free(t);
	nt_profile_free(p);

	/* a category filter: the tree holds only the lock samples, so its buckets span them */
	p = make_profile(ss, &n, 1, 1u << NT_CAT_LOCK, 0);
	to.when_buckets = 4;
	t = NULL;
	nt_error_clear(&err);
	ok(p && nt_tree_new(&t, p, &to, &err) == 0 && nt_tree_root(t)->samples == 400 &&
		   check_nodes(nt_tree_root(t), 4) == nt_tree_node_count(t),
	   "category filter: 400 lock samples, histograms add up");
	nt_tree_free(t);
	nt_profile_free(p);

	/* an empty selection */
	p = make_profile(ss, &n, 1, 1u << NT_CAT_IO, 0);
	t = NULL;
	nt_tree_when_info wi = NT_INIT(nt_tree_when_info);
	ok(p && nt_tree_new(&t, p, &to, &err) == 0 && nt_tree_when(t, &wi) && wi.samples == 0 &&
		   wi.peak == 0,
	   "no samples: an empty histogram");
	out = t ? render(t, &pr) : NULL;
	ok(out && strstr(out, "When:      |    |  0 samples"), "... printed as blanks");
	free(out);
	nt_tree_free(t);
	nt_profile_free(p);
	free(s);
}

int main(void)
{
	test_when_grid();
	test_when_phases();
	return tap_done();
}
