/* SPDX-License-Identifier: MIT */
/* test-tree.c - unit tests of the call tree (tree.c): self/total sums, ordering, inverted
 * trees, per-thread roots, recursion in the flat lists, category breakdown, several
 * sessions, and the text rendering (depth, min-percent, hot path, top-N, units).
 * The input traces are written in memory with the writer (writer.c): SampleProfiler
 * samples whose IPs fall into methods defined by rundown MethodDCEndVerbose events (spec
 * §9.2) and one DomainModuleDCEnd, so frames resolve to "app!App.Name()". */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace.h"
#include "tap.h"
#include "pbuf.h"

/* ------------------------------------------------------------------ building traces */

enum { M_MAIN, M_SLOW, M_FAST, M_WORK, M_REC, M_LOCK, M_COUNT };
static const char *const method_names[M_COUNT] = {"Main", "Slow", "Fast", "Work", "Rec", "Lock"};

#define MODULE_ID 0x77
#define IP(m) (0x10000ull + 0x1000ull * (uint64_t)(m) + 0x10)

/* One sample: thread, sample type, stack root first (0-terminated method list + 1). */
typedef struct tsample {
	uint64_t tid;
	uint32_t type;        /* 1 External, 2 Managed */
	int frames[8];        /* method + 1, root first, 0 ends */
} tsample;

/* The standard profile, 12 samples (root first):
 *   thread 100: Main>Slow>Work x6, Main>Fast>Work x3
 *   thread 101: Main>Slow x1, Main>Rec>Rec>Rec x2 (recursion) */
static const tsample std_samples[] = {
	{100, 2, {M_MAIN + 1, M_SLOW + 1, M_WORK + 1}}, {100, 2, {M_MAIN + 1, M_FAST + 1, M_WORK + 1}},
	{101, 2, {M_MAIN + 1, M_SLOW + 1}},             {100, 2, {M_MAIN + 1, M_SLOW + 1, M_WORK + 1}},
	{101, 2, {M_MAIN + 1, M_REC + 1, M_REC + 1, M_REC + 1}},
	{100, 2, {M_MAIN + 1, M_SLOW + 1, M_WORK + 1}}, {100, 2, {M_MAIN + 1, M_FAST + 1, M_WORK + 1}},
	{100, 2, {M_MAIN + 1, M_SLOW + 1, M_WORK + 1}}, {100, 2, {M_MAIN + 1, M_SLOW + 1, M_WORK + 1}},
	{101, 2, {M_MAIN + 1, M_REC + 1, M_REC + 1, M_REC + 1}},
	{100, 2, {M_MAIN + 1, M_FAST + 1, M_WORK + 1}}, {100, 2, {M_MAIN + 1, M_SLOW + 1, M_WORK + 1}},
};
#define NSTD (sizeof std_samples / sizeof std_samples[0])

/* Non-zero: write_trace() has every other sample written by a second capture thread. */
static int split_capture;

/* Writes a trace with the given samples (1 ms apart) and the rundown; returns it in *mb. */
static int write_trace(nt_membuf *mb, const tsample *s, size_t n)
{
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.sync_qpc = 1000000;
	h.qpc_frequency = 1000000000;
	h.pointer_size = 8;
	h.process_id = 42;
	h.processors = 4;
	h.expected_sampling_ns = 1000000;
	nt_sink sink = nt_sink_membuf(mb);
	nt_writer *w = NULL;
	nt_error err;
	nt_error_clear(&err);
	uint32_t sid, mid, did;
	/* no field lists: the reader applies its built-in layouts, as for runtime files */
	nt_metadata_desc ds = {NT_PROVIDER_SAMPLER, 0, "ThreadSample", 0, 0, 5, 0, NULL, 0};
	nt_metadata_desc dm = {NT_PROVIDER_RUNDOWN, 144, "MethodDCEndVerbose", 0x30, 1, 4, 0, NULL, 0};
	nt_metadata_desc dd = {NT_PROVIDER_RUNDOWN, 152, "DomainModuleDCEnd", 0x8, 1, 4, 0, NULL, 0};
	if (nt_writer_open(&w, &sink, &h, NULL, &err) || nt_writer_add_metadata(w, &ds, &sid, &err) ||
	    nt_writer_add_metadata(w, &dm, &mid, &err) || nt_writer_add_metadata(w, &dd, &did, &err)) {
		printf("# writer: %s\n", err.msg);
		nt_writer_free(w);
		return -1;
	}
	uint64_t ts = h.sync_qpc;
	for (size_t i = 0; i < n; i++) {
		uint64_t ips[8];
		uint32_t depth = 0;
		while (depth < 8 && s[i].frames[depth])
			depth++;
		for (uint32_t k = 0; k < depth; k++) /* leaf first */
			ips[k] = IP(s[i].frames[depth - 1 - k] - 1);
		pbuf p = {{0}, 0};
		pb_u32(&p, s[i].type);
		ts += 1000000;
		nt_event_desc e;
		memset(&e, 0, sizeof e);
		e.metadata_id = sid;
		e.thread_id = s[i].tid;
		e.capture_thread_id = split_capture && (i & 1) ? 9 : 7;
		e.processor = 0;
		e.timestamp = ts;
		e.stack = depth ? ips : NULL;
		e.stack_depth = depth;
		e.payload = p.b;
		e.payload_len = (uint32_t)p.n;
		if (nt_writer_write_event(w, &e, &err)) {
			printf("# writer: %s\n", err.msg);
			nt_writer_free(w);
			return -1;
		}
	}
	/* rundown: one method per name, then the module */
	for (int m = 0; m < M_COUNT; m++) {
		pbuf p = {{0}, 0};
		pb_u64(&p, 0x500 + (uint64_t)m);       /* MethodID */
		pb_u64(&p, MODULE_ID);                 /* ModuleID */
		pb_u64(&p, IP(m) - 0x10);              /* MethodStartAddress */
		pb_u32(&p, 0x100);                     /* MethodSize */
		pb_u32(&p, 0x06000001u + (uint32_t)m); /* MethodToken */
		pb_u32(&p, 0x8);                       /* MethodFlags: Jitted */
		pb_str(&p, "App");
		pb_str(&p, method_names[m]);
		pb_str(&p, "void  ()");
		pb_u16(&p, 9);                         /* ClrInstanceID */
		nt_event_desc e;
		memset(&e, 0, sizeof e);
		e.metadata_id = mid;
		e.thread_id = e.capture_thread_id = 8;
		e.processor = 0;
		e.timestamp = ts + 1000 + (uint64_t)m;
		e.payload = p.b;
		e.payload_len = (uint32_t)p.n;
		if (nt_writer_write_event(w, &e, &err)) {
			nt_writer_free(w);
			return -1;
		}
	}
	pbuf p = {{0}, 0};
	pb_u64(&p, MODULE_ID);
	pb_u64(&p, 0x99);  /* AssemblyID */
	pb_u64(&p, 0x1);   /* AppDomainID */
	pb_u32(&p, 0);     /* ModuleFlags */
	pb_u32(&p, 0);     /* Reserved */
	pb_str(&p, "C:\\app\\app.dll");
	pb_str(&p, "");
	pb_u16(&p, 9);
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = did;
	e.thread_id = e.capture_thread_id = 8;
	e.timestamp = ts + 2000;
	e.payload = p.b;
	e.payload_len = (uint32_t)p.n;
	if (nt_writer_write_event(w, &e, &err) || nt_writer_close(w, &err)) {
		printf("# writer: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Profile of `copies` sessions, each the given samples; NULL on failure. */
static nt_profile *make_profile(const tsample *s, size_t n, int copies, const nt_profile_opts *po)
{
	nt_membuf mb = {NULL, 0, 0};
	nt_profile *p = NULL;
	nt_error err;
	nt_error_clear(&err);
	if (write_trace(&mb, s, n) || nt_profile_new(&p, po, &err)) {
		printf("# cannot build the profile: %s\n", err.msg);
		nt_membuf_free(&mb);
		return NULL;
	}
	for (int c = 0; c < copies; c++) {
		nt_reader *r = NULL;
		char name[32];
		snprintf(name, sizeof name, "synthetic-%d", c + 1);
		if (nt_reader_open_mem(&r, mb.data, mb.len, NULL, &err) ||
		    nt_profile_add_trace(p, r, name, &err)) {
			printf("# cannot read the trace: %s\n", err.msg);
			nt_reader_free(r);
			nt_profile_free(p);
			nt_membuf_free(&mb);
			return NULL;
		}
		nt_reader_free(r);
	}
	nt_membuf_free(&mb);
	return p;
}

static nt_tree *make_tree(nt_profile *p, int invert, int per_thread, int no_module,
			  int by_samples)
{
	nt_tree_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.invert = invert;
	o.per_thread = per_thread;
	o.no_module = no_module;
	o.by_samples = by_samples;
	nt_tree *t = NULL;
	nt_error err;
	nt_error_clear(&err);
	if (!p || nt_tree_new(&t, p, &o, &err)) {
		printf("# nt_tree_new: %s\n", err.msg);
		return NULL;
	}
	return t;
}

/* Node at a path of short names ("Main", "Slow") under "app!App.X()" frames. */
static const nt_tree_node *at(const nt_tree *t, const char *a, const char *b, const char *c,
			      const char *d)
{
	const char *in[4] = {a, b, c, d};
	char buf[4][64];
	const char *path[4];
	size_t n = 0;
	for (; n < 4 && in[n]; n++) {
		if (strncmp(in[n], "Thread (", 8) == 0 || in[n][0] == '[')
			snprintf(buf[n], sizeof buf[n], "%s", in[n]);
		else
			snprintf(buf[n], sizeof buf[n], "app!App.%s()", in[n]);
		path[n] = buf[n];
	}
	return nt_tree_find(t, path, n);
}

static uint64_t samples_at(const nt_tree *t, const char *a, const char *b, const char *c,
			   const char *d)
{
	const nt_tree_node *n = at(t, a, b, c, d);
	return n ? n->samples : UINT64_MAX;
}

static uint64_t self_at(const nt_tree *t, const char *a, const char *b, const char *c,
			const char *d)
{
	const nt_tree_node *n = at(t, a, b, c, d);
	return n ? n->self_samples : UINT64_MAX;
}

/* Checks, over every node: total = self + sum(children), for samples and weight (in an
 * inverted tree, where the self of a function sits at its top-level node, only
 * sum(children) <= total), the category arrays sum to the totals, children are ordered,
 * parent/depth are consistent. Returns the number of nodes visited, or 0 on the first
 * violation (printed). */
static size_t check_invariants(const nt_tree *t, int by_samples, int inverted)
{
	const nt_tree_node *stack[256];
	size_t n = 0, visited = 0;
	stack[n++] = nt_tree_root(t);
	while (n) {
		const nt_tree_node *nd = stack[--n];
		visited++;
		uint64_t s = nd->self_samples, cs = 0;
		double w = nd->self_ns, cw = 0;
		for (int k = 0; k < NT_CAT_COUNT; k++) {
			cs += nd->cat_samples[k];
			cw += nd->cat_ns[k];
		}
		for (size_t i = 0; i < nd->nchildren; i++) {
			const nt_tree_node *c = nd->children[i];
			s += c->samples;
			w += c->total_ns;
			if (c->parent != nd || c->depth != nd->depth + 1) {
				printf("# bad parent/depth at %s\n", c->name);
				return 0;
			}
			if (i) {
				const nt_tree_node *prev = nd->children[i - 1];
				double a = by_samples ? (double)prev->samples : prev->total_ns;
				double b = by_samples ? (double)c->samples : c->total_ns;
				if (a < b || (a == b && strcmp(prev->name, c->name) >= 0)) {
					printf("# children of %s out of order\n", nd->name);
					return 0;
				}
			}
			if (n < 256)
				stack[n++] = c;
		}
		int root = nd->kind == NT_TREE_ROOT;
		if (inverted) {
			/* callers' paths add up to at most the total */
			s -= nd->self_samples;
			w -= nd->self_ns;
			if (s > nd->samples || w > nd->total_ns * (1 + 1e-9) + 1e-6) {
				printf("# children exceed the total at '%s'\n", nd->name);
				return 0;
			}
			s = nd->samples;
			w = nd->total_ns;
		}
		/* the root has no self; every other node: total = self + children */
		if ((!root && s != nd->samples) || cs != nd->samples ||
		    (!root && (w - nd->total_ns > 1e-6 * nd->total_ns + 1e-6 ||
			       nd->total_ns - w > 1e-6 * nd->total_ns + 1e-6)) ||
		    cw - nd->total_ns > 1e-6 * nd->total_ns + 1e-6 ||
		    nd->total_ns - cw > 1e-6 * nd->total_ns + 1e-6) {
			printf("# sums do not add up at '%s': samples %" PRIu64 " self+children %" PRIu64
			       " categories %" PRIu64 "\n",
			       nd->name, nd->samples, s, cs);
			return 0;
		}
	}
	return visited;
}

/* Renders t with the given options into a NUL-terminated string (caller frees). */
static char *render(const nt_tree *t, const nt_tree_print_opts *o)
{
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_error err;
	nt_error_clear(&err);
	if (nt_tree_write_text(t, o, &sink, &err)) {
		printf("# nt_tree_write_text: %s\n", err.msg);
		nt_membuf_free(&mb);
		return NULL;
	}
	char *s = malloc(mb.len + 1);
	if (s) {
		if (mb.len)
			memcpy(s, mb.data, mb.len);
		s[mb.len] = '\0';
	}
	nt_membuf_free(&mb);
	return s;
}

static nt_tree_print_opts popts(int unit)
{
	nt_tree_print_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.unit = unit;
	return o;
}

/* The rows of a rendering (everything after the column titles), for exact comparison. */
static const char *rows_of(const char *text)
{
	const char *p = strstr(text ? text : "", "  frame\n");
	if (!p)
		p = strstr(text ? text : "", "  function\n");
	return p ? strchr(p, '\n') + 1 : "";
}

/* ------------------------------------------------------------------ tests */

static void test_tree_top_down_sums(void)
{
	nt_profile *p = make_profile(std_samples, NSTD, 1, NULL);
	nt_tree *t = make_tree(p, 0, 0, 0, 1);
	ok(t != NULL, "top-down tree of 12 samples builds");
	if (!t) {
		nt_profile_free(p);
		return;
	}
	const nt_tree_node *root = nt_tree_root(t);
	is_u64(root->samples, 12, "root holds every sample");
	is_int(root->kind, NT_TREE_ROOT, "root kind");
	is_int(root->nchildren, 1, "one top-level frame");
	is_str(root->nchildren ? root->children[0]->name : NULL, "app!App.Main()",
	       "frames resolve to Module!Namespace.Method() through the rundown");
	is_u64(samples_at(t, "Main", NULL, NULL, NULL), 12, "Main total 12");
	is_u64(self_at(t, "Main", NULL, NULL, NULL), 0, "Main self 0");
	is_u64(samples_at(t, "Main", "Slow", NULL, NULL), 7, "Main>Slow total 7");
	is_u64(self_at(t, "Main", "Slow", NULL, NULL), 1, "Main>Slow self 1");
	is_u64(samples_at(t, "Main", "Slow", "Work", NULL), 6, "Main>Slow>Work total 6");
	is_u64(self_at(t, "Main", "Slow", "Work", NULL), 6, "Main>Slow>Work self 6");
	is_u64(samples_at(t, "Main", "Fast", "Work", NULL), 3, "Main>Fast>Work total 3");
	is_u64(samples_at(t, "Main", "Rec", NULL, NULL), 2, "Main>Rec total 2");
	is_u64(self_at(t, "Main", "Rec", NULL, NULL), 0, "outer Rec self 0");
	is_u64(samples_at(t, "Main", "Rec", "Rec", "Rec"), 2, "Main>Rec>Rec>Rec total 2");
	is_u64(self_at(t, "Main", "Rec", "Rec", "Rec"), 2, "innermost Rec self 2");
	ok(at(t, "Main", "Work", NULL, NULL) == NULL, "no Main>Work path");
	ok(at(t, "Nope", NULL, NULL, NULL) == NULL, "unknown name is not found");
	const nt_tree_node *m = at(t, "Main", NULL, NULL, NULL);
	ok(m && m->nchildren == 3 && strcmp(m->children[0]->name, "app!App.Slow()") == 0 &&
		   strcmp(m->children[1]->name, "app!App.Fast()") == 0 &&
		   strcmp(m->children[2]->name, "app!App.Rec()") == 0,
	   "children ordered by total: Slow 7, Fast 3, Rec 2");
	is_int(nt_tree_node_count(t), 9, "9 nodes: root, Main, Slow, Work, Fast, Work, Rec x3");
	ok(check_invariants(t, 1, 0) == 9, "total = self + children, categories add up, order holds");
	ok(root->total_ns > 0 && m && m->total_ns == root->total_ns, "weights are set (ns)");
	is_u64(root->cat_samples[NT_CAT_RUNNING], 12, "managed samples without rules (no CPU clock) are running");
	nt_tree_free(t);
	nt_profile_free(p);
}

static void test_tree_by_weight(void)
{
	nt_profile *p = make_profile(std_samples, NSTD, 1, NULL);
	nt_tree *t = make_tree(p, 0, 0, 0, 0);
	ok(t && check_invariants(t, 0, 0) == 9, "weight-ordered tree keeps its invariants");
	double self = 0;
	for (size_t i = 0; t && i < nt_tree_func_count(t); i++)
		self += nt_tree_func_at(t, NT_TREE_BY_SELF, i)->self_ns;
	const nt_tree_node *root = t ? nt_tree_root(t) : NULL;
	ok(root && self > 0 && self - root->total_ns < 1e-6 * root->total_ns &&
		   root->total_ns - self < 1e-6 * root->total_ns,
	   "flat self weights add up to the total weight");
	nt_tree_free(t);
	nt_profile_free(p);
}

static void test_tree_invert(void)
{
	nt_profile *p = make_profile(std_samples, NSTD, 1, NULL);
	nt_tree *t = make_tree(p, 1, 0, 0, 1);
	ok(t != NULL, "inverted tree builds");
	if (!t) {
		nt_profile_free(p);
		return;
	}
	const nt_tree_node *root = nt_tree_root(t);
	is_int(root->nchildren, 3, "three leaf functions at the top: Work, Rec, Slow");
	ok(root->nchildren == 3 && strcmp(root->children[0]->name, "app!App.Work()") == 0 &&
		   strcmp(root->children[1]->name, "app!App.Rec()") == 0 &&
		   strcmp(root->children[2]->name, "app!App.Slow()") == 0,
	   "ordered Work 9, Rec 2, Slow 1");
	is_u64(samples_at(t, "Work", NULL, NULL, NULL), 9, "Work total 9");
	is_u64(self_at(t, "Work", NULL, NULL, NULL), 9, "Work self 9 (a top-level node is the leaf)");
	is_u64(samples_at(t, "Work", "Slow", NULL, NULL), 6, "Work<Slow 6");
	is_u64(self_at(t, "Work", "Slow", NULL, NULL), 0, "callers have no self");
	is_u64(samples_at(t, "Work", "Fast", "Main", NULL), 3, "Work<Fast<Main 3");
	is_u64(samples_at(t, "Slow", "Main", NULL, NULL), 1, "Slow<Main 1");
	is_u64(samples_at(t, "Rec", "Rec", "Rec", "Main"), 2, "Rec<Rec<Rec<Main 2");
	ok(check_invariants(t, 1, 1) > 0, "inverted tree: callers add up to at most the total");
	nt_tree_free(t);
	nt_profile_free(p);
}

static void test_tree_flat_recursion(void)
{
	nt_profile *p = make_profile(std_samples, NSTD, 1, NULL);
	nt_tree *t = make_tree(p, 0, 0, 0, 1);
	ok(t != NULL, "tree for the flat lists");
	if (!t) {
		nt_profile_free(p);
		return;
	}
	is_int(nt_tree_func_count(t), 5, "five functions (Lock never sampled)");
	static const char *const want_total[] = {"Main", "Work", "Slow", "Fast", "Rec"};
	static const uint64_t total_n[] = {12, 9, 7, 3, 2};
	for (size_t i = 0; i < 5; i++) {
		const nt_tree_func *f = nt_tree_func_at(t, NT_TREE_BY_TOTAL, i);
		char want[64];
		snprintf(want, sizeof want, "app!App.%s()", want_total[i]);
		ok(f && strcmp(f->name, want) == 0 && f->total_samples == total_n[i],
		   "by total #%zu: %s %" PRIu64, i + 1, want_total[i], total_n[i]);
	}
	const nt_tree_func *rec = nt_tree_func_at(t, NT_TREE_BY_TOTAL, 4);
	ok(rec && rec->total_samples == 2 && rec->self_samples == 2,
	   "recursive Rec counted once per sample: total 2, not 6");
	static const char *const want_self[] = {"Work", "Rec", "Slow", "Fast", "Main"};
	static const uint64_t self_n[] = {9, 2, 1, 0, 0};
	for (size_t i = 0; i < 5; i++) {
		const nt_tree_func *f = nt_tree_func_at(t, NT_TREE_BY_SELF, i);
		char want[64];
		snprintf(want, sizeof want, "app!App.%s()", want_self[i]);
		ok(f && strcmp(f->name, want) == 0 && f->self_samples == self_n[i],
		   "by self #%zu: %s %" PRIu64 " (ties by name)", i + 1, want_self[i], self_n[i]);
	}
	ok(nt_tree_func_at(t, NT_TREE_BY_SELF, 5) == NULL, "past the end: NULL");
	ok(nt_tree_func_at(t, 99, 0) == NULL, "unknown order: NULL");

	nt_tree_print_opts o = popts(NT_UNIT_SAMPLES);
	o.top = 2;
	o.no_header = 1;
	char *s = render(t, &o);
	is_str(s,
	       "Top 2 functions by self samples:\n"
	       "  self%   total%         self        total  function\n"
	       "  75.0%    75.0%            9            9  app!App.Work()\n"
	       "  16.7%    16.7%            2            2  app!App.Rec()\n"
	       "\n"
	       "Top 2 functions by total samples:\n"
	       "  self%   total%         self        total  function\n"
	       "   0.0%   100.0%            0           12  app!App.Main()\n"
	       "  75.0%    75.0%            9            9  app!App.Work()\n",
	       "top-2 text lists by self and by total");
	free(s);
	nt_tree_free(t);
	nt_profile_free(p);
}

static void test_tree_per_thread(void)
{
	nt_profile *p = make_profile(std_samples, NSTD, 1, NULL);
	nt_tree *t = make_tree(p, 0, 1, 0, 1);
	ok(t != NULL, "per-thread tree builds");
	if (!t) {
		nt_profile_free(p);
		return;
	}
	const nt_tree_node *root = nt_tree_root(t);
	ok(root->nchildren == 2 && strcmp(root->children[0]->name, "Thread (100)") == 0 &&
		   strcmp(root->children[1]->name, "Thread (101)") == 0,
	   "two thread roots, busiest first");
	const nt_tree_node *th = at(t, "Thread (100)", NULL, NULL, NULL);
	ok(th && th->kind == NT_TREE_THREAD && th->thread_id == 100 && th->samples == 9 &&
		   th->self_samples == 0,
	   "Thread (100): kind, id, 9 samples, no self");
	is_u64(samples_at(t, "Thread (101)", "Main", "Rec", NULL), 2, "Thread (101)>Main>Rec 2");
	is_u64(samples_at(t, "Thread (101)", "Main", "Slow", NULL), 1, "Thread (101)>Main>Slow 1");
	ok(at(t, "Thread (100)", "Main", "Rec", NULL) == NULL, "thread 100 never ran Rec");
	ok(check_invariants(t, 1, 0) > 0, "per-thread tree keeps its invariants");
	is_int(nt_tree_func_count(t), 5, "thread roots are not functions");
	nt_tree_print_opts o = popts(NT_UNIT_SAMPLES);
	o.hot = 1;
	o.no_header = 1;
	char *text = render(t, &o);
	is_str(rows_of(text),
	       "  75.0%     0.0%         9  Thread (100)\n"
	       "  75.0%     0.0%         9    app!App.Main()\n"
	       "  50.0%     0.0%         6      app!App.Slow()\n"
	       "  50.0%    50.0%         6        app!App.Work()\n"
	       "  25.0%     0.0%         3  Thread (101)\n"
	       "  25.0%     0.0%         3    app!App.Main()\n"
	       "  16.7%     0.0%         2      app!App.Rec()\n"
	       "  16.7%     0.0%         2        app!App.Rec()\n"
	       "  16.7%    16.7%         2          app!App.Rec()\n",
	       "per-thread hot path: every thread, each with its hottest path");
	free(text);
	nt_tree_free(t);

	t = make_tree(p, 1, 1, 0, 1);
	is_u64(t ? samples_at(t, "Thread (100)", "Work", "Fast", NULL) : 0, 3,
	       "inverted per-thread: Thread (100)>Work<Fast 3");
	is_u64(t ? self_at(t, "Thread (100)", "Work", NULL, NULL) : 0, 9,
	       "inverted per-thread: the leaf function below the thread has the self");
	nt_tree_free(t);
	nt_profile_free(p);
}

static void test_tree_sessions_and_no_module(void)
{
	nt_profile *p = make_profile(std_samples, NSTD, 2, NULL);
	nt_tree *t = make_tree(p, 0, 0, 0, 1);
	ok(t && nt_tree_root(t)->samples == 24, "two sessions: 24 samples in one tree");
	is_u64(t ? samples_at(t, "Main", "Slow", "Work", NULL) : 0, 12,
	       "equal frames of two sessions merge");
	is_int(t ? nt_tree_node_count(t) : 0, 9, "no new nodes for the second session");
	nt_tree_free(t);
	t = make_tree(p, 0, 1, 0, 1);
	ok(t && at(t, "Thread (100) [1]", NULL, NULL, NULL) && at(t, "Thread (100) [2]", NULL, NULL, NULL),
	   "per-thread roots name their session when there are several");
	nt_tree_free(t);
	t = make_tree(p, 0, 0, 1, 1);
	const char *path[] = {"App.Main()", "App.Slow()"};
	const nt_tree_node *n = t ? nt_tree_find(t, path, 2) : NULL;
	ok(n && n->samples == 14, "no_module: names lose 'app!'");
	nt_tree_free(t);
	nt_profile_free(p);
}

static void test_tree_categories(void)
{
	/* Lock frames go to "lock" by a rule; External samples without a rule are "external". */
	static const tsample s[] = {
		{100, 2, {M_MAIN + 1, M_LOCK + 1}},
		{100, 2, {M_MAIN + 1, M_LOCK + 1}},
		{100, 1, {M_MAIN + 1, M_WORK + 1}},
		{100, 2, {M_MAIN + 1, M_WORK + 1}},
	};
	static const char rules_text[] = "# test rules\nlock *Lock*\n";
	nt_rules *rules = NULL;
	nt_error err;
	nt_error_clear(&err);
	int rc = nt_rules_parse(&rules, rules_text, sizeof rules_text - 1, "test.rules", &err);
	is_int(rc, 0, "rules parse");
	nt_profile_opts po;
	memset(&po, 0, sizeof po);
	po.sz = sizeof po;
	po.rules = rules;
	nt_profile *p = make_profile(s, 4, 1, &po);
	nt_tree *t = make_tree(p, 0, 0, 0, 1);
	const nt_tree_node *m = t ? at(t, "Main", NULL, NULL, NULL) : NULL;
	ok(m && m->cat_samples[NT_CAT_LOCK] == 2 && m->cat_samples[NT_CAT_EXTERNAL] == 1 &&
		   m->cat_samples[NT_CAT_RUNNING] == 1,
	   "Main: lock 2, external 1, running 1");
	const nt_tree_node *w = t ? at(t, "Main", "Work", NULL, NULL) : NULL;
	ok(w && w->cat_samples[NT_CAT_LOCK] == 0 && w->cat_samples[NT_CAT_EXTERNAL] == 1,
	   "Main>Work: external 1, no lock");
	ok(t && check_invariants(t, 1, 0) > 0, "category arrays add up to the totals");
	const nt_tree_func *f = t ? nt_tree_func_at(t, NT_TREE_BY_TOTAL, 0) : NULL;
	ok(f && f->cat_samples[NT_CAT_LOCK] == 2 && f->cat_samples[NT_CAT_EXTERNAL] == 1,
	   "flat totals carry the categories");

	nt_tree_print_opts o = popts(NT_UNIT_SAMPLES);
	o.by_category = 1;
	o.no_header = 1;
	char *text = t ? render(t, &o) : NULL;
	is_str(text,
	       " total%    self%   samples    lock%  external%  running%  frame\n"
	       " 100.0%     0.0%         4    50.0%      25.0%     25.0%  app!App.Main()\n"
	       "  50.0%    50.0%         2    50.0%       0.0%      0.0%    app!App.Lock()\n"
	       "  50.0%    50.0%         2     0.0%      25.0%     25.0%    app!App.Work()\n",
	       "--by-category columns: categories present, share of the total");
	free(text);
	nt_tree_free(t);
	nt_profile_free(p);

	/* the profile's category filter: only lock samples reach the tree */
	po.category_mask = 1u << NT_CAT_LOCK;
	p = make_profile(s, 4, 1, &po);
	t = make_tree(p, 0, 0, 0, 1);
	ok(t && nt_tree_root(t)->samples == 2 && at(t, "Main", "Work", NULL, NULL) == NULL,
	   "category_mask lock: 2 samples, no Work");
	nt_tree_free(t);
	nt_profile_free(p);
	nt_rules_free(rules);
}

static void test_tree_empty_stack_and_empty_tree(void)
{
	static const tsample s[] = {
		{100, 2, {0}},
		{100, 2, {M_MAIN + 1}},
	};
	nt_profile *p = make_profile(s, 2, 1, NULL);
	nt_tree *t = make_tree(p, 0, 0, 0, 1);
	const char *path[] = {"[empty stack]"};
	const nt_tree_node *n = t ? nt_tree_find(t, path, 1) : NULL;
	ok(n && n->samples == 1 && n->self_samples == 1, "a sample without a stack: [empty stack]");
	nt_tree_free(t);
	nt_profile_free(p);

	/* a range after the last sample selects nothing: an empty tree, still printable */
	nt_profile_opts po;
	memset(&po, 0, sizeof po);
	po.sz = sizeof po;
	po.has_start = 1;
	po.start = 3600000000000ll;
	p = make_profile(std_samples, NSTD, 1, &po);
	t = make_tree(p, 0, 0, 0, 1);
	ok(t && nt_tree_root(t)->samples == 0 && nt_tree_root(t)->nchildren == 0 &&
		   nt_tree_func_count(t) == 0,
	   "empty selection: empty tree");
	nt_tree_print_opts o = popts(NT_UNIT_SAMPLES);
	o.selection = "range 3600s..";
	char *text = t ? render(t, &o) : NULL;
	is_str(text,
	       "Sessions:  1\n"
	       "  [1] synthetic-1: 12 samples, 0.001 s .. 0.012 s; 1 sample = 1.000 ms (declared 1.000 ms)\n"
	       "Samples:   0\n"
	       "Selected:  range 3600s..\n"
	       "View:      top-down (callees below each caller)\n"
	       "Units:     % of the total samples; counts in samples\n"
	       "\n"
	       " total%    self%   samples  frame\n",
	       "empty tree renders the header and the column titles only");
	free(text);
	nt_tree_free(t);
	nt_profile_free(p);
}

static void test_tree_render(void)
{
	nt_profile *p = make_profile(std_samples, NSTD, 1, NULL);
	nt_tree *t = make_tree(p, 0, 0, 0, 1);
	if (!t) {
		ok(0, "tree for rendering");
		nt_profile_free(p);
		return;
	}
	nt_tree_print_opts o = popts(NT_UNIT_SAMPLES);
	char *s = render(t, &o);
	is_str(rows_of(s),
	       " 100.0%     0.0%        12  app!App.Main()\n"
	       "  58.3%     8.3%         7    app!App.Slow()\n"
	       "  50.0%    50.0%         6      app!App.Work()\n"
	       "  25.0%     0.0%         3    app!App.Fast()\n"
	       "  25.0%    25.0%         3      app!App.Work()\n"
	       "  16.7%     0.0%         2    app!App.Rec()\n"
	       "  16.7%     0.0%         2      app!App.Rec()\n"
	       "  16.7%    16.7%         2        app!App.Rec()\n",
	       "full tree: depth-first, two spaces per level");
	ok(s && strstr(s, "Sessions:  1\n  [1] synthetic-1: 12 samples, 0.001 s .. 0.012 s; 1 sample = 1.000 ms (declared 1.000 ms)\n"
			  "Samples:   12\n") != NULL,
	   "header: sessions with their span, samples");
	ok(s && !strstr(s, "Time:"), "no Time line with unit samples");
	free(s);

	o.max_depth = 2;
	s = render(t, &o);
	is_str(rows_of(s),
	       " 100.0%     0.0%        12  app!App.Main()\n"
	       "  58.3%     8.3%         7    app!App.Slow()\n"
	       "  25.0%     0.0%         3    app!App.Fast()\n"
	       "  16.7%     0.0%         2    app!App.Rec()\n",
	       "max_depth 2");
	free(s);

	o.max_depth = 0;
	o.min_percent = 20;
	s = render(t, &o);
	is_str(rows_of(s),
	       " 100.0%     0.0%        12  app!App.Main()\n"
	       "  58.3%     8.3%         7    app!App.Slow()\n"
	       "  50.0%    50.0%         6      app!App.Work()\n"
	       "  25.0%     0.0%         3    app!App.Fast()\n"
	       "  25.0%    25.0%         3      app!App.Work()\n",
	       "min_percent 20 hides Rec (16.7%%) and its subtree");
	ok(s && strstr(s, "hiding nodes < 20%") != NULL, "the header says what is hidden");
	free(s);

	o.min_percent = 0;
	o.hot = 1;
	s = render(t, &o);
	is_str(rows_of(s),
	       " 100.0%     0.0%        12  app!App.Main()\n"
	       "  58.3%     8.3%         7    app!App.Slow()\n"
	       "  50.0%    50.0%         6      app!App.Work()\n",
	       "hot path: the hottest child at each level");
	free(s);

	o = popts(NT_UNIT_MS);
	o.no_header = 1;
	s = render(t, &o);
	ok(s && strncmp(s, " total%    self%           ms   samples  frame\n", 47) == 0,
	   "unit ms: the time column is titled ms");
	free(s);
	o.unit = NT_TREE_UNIT_AUTO;
	s = render(t, &o);
	ok(s && strncmp(s, " total%    self%         time   samples  frame\n", 47) == 0 &&
		   strstr(s, " ms        12  app!App.Main()\n"),
	   "unit auto: time column with a unit per value");
	free(s);
	s = render(t, NULL);
	ok(s && strstr(s, "Time:      ") && strstr(s, "time auto-scaled"), "NULL options: auto unit");
	free(s);
	nt_tree_free(t);
	nt_profile_free(p);
}

static int failing_write(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return NT_EIO;
}

static void test_tree_errors(void)
{
	nt_profile *p = make_profile(std_samples, NSTD, 1, NULL);
	nt_tree *t = make_tree(p, 0, 0, 0, 1);
	nt_error err;
	nt_error_clear(&err);
	nt_sink bad = {failing_write, NULL};
	is_int(t ? nt_tree_write_text(t, NULL, &bad, &err) : 0, NT_EIO, "a failing sink: NT_EIO");
	nt_tree_print_opts o = popts(17);
	nt_error_clear(&err);
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	is_int(t ? nt_tree_write_text(t, &o, &sink, &err) : 0, NT_EINVAL, "unknown unit: NT_EINVAL");
	o = popts(NT_UNIT_SAMPLES);
	o.min_percent = 150;
	nt_error_clear(&err);
	is_int(t ? nt_tree_write_text(t, &o, &sink, &err) : 0, NT_EINVAL,
	       "min_percent above 100: NT_EINVAL");
	nt_membuf_free(&mb);
	nt_tree_free(t);
	nt_tree_free(NULL);
	ok(nt_tree_root(NULL) == NULL && nt_tree_func_count(NULL) == 0, "NULL tree queries");
	/* options smaller than the struct's first released version (today's): rejected, and
	 * nothing past sz is read (the bytes there are garbage) */
	nt_tree_opts small;
	memset(&small, 0xff, sizeof small);
	small.sz = offsetof(nt_tree_opts, invert) + sizeof small.invert;
	small.invert = 1;
	t = NULL;
	is_int(nt_tree_new(&t, p, &small, &err), NT_EINVAL, "short nt_tree_opts: NT_EINVAL");
	ok(t == NULL && strstr(err.msg, "tree options: sz is") != NULL,
	   "short nt_tree_opts: no tree, the message names the struct (%s)", err.msg);
	nt_tree_opts exact = NT_INIT(nt_tree_opts);
	exact.invert = 1;
	is_int(nt_tree_new(&t, p, &exact, &err), 0, "NT_INIT nt_tree_opts accepted");
	ok(t && at(t, "Work", NULL, NULL, NULL) != NULL && at(t, "Thread (100)", NULL, NULL, NULL) == NULL,
	   "zero fields are the defaults (no per-thread roots)");
	nt_tree_free(t);
	nt_profile_free(p);
}

/* collapse_unresolved: a run of "?!?" frames becomes one "[unresolved]" frame, and the
 * group's addresses stay one per frame (the run's first, leaf-most, for it). */
typedef struct collapse_seen {
	int groups, good;
} collapse_seen;

static int collapse_cb(void *ctx, const nt_sample_group *g)
{
	collapse_seen *c = ctx;
	c->groups++;
	c->good = g->depth == 3 && g->nips == 3 && strstr(g->frames[0], "Work") != NULL &&
		  strcmp(g->frames[1], "[unresolved]") == 0 && strstr(g->frames[2], "Main") != NULL &&
		  g->ips[0] == IP(M_WORK) && g->ips[1] == IP(10) && g->ips[2] == IP(M_MAIN);
	return 0;
}

static void test_tree_collapse_unresolved(void)
{
	static const tsample s[] = {{100, 2, {M_MAIN + 1, 10, 11, M_WORK + 1}}};
	nt_profile_opts po;
	memset(&po, 0, sizeof po);
	po.sz = sizeof po;
	po.collapse_unresolved = 1;
	nt_profile *p = make_profile(s, 1, 1, &po);
	collapse_seen c = {0, 0};
	ok(p && nt_profile_foreach(p, collapse_cb, &c) == 0 && c.groups == 1 && c.good,
	   "collapse_unresolved: Work;?!?;?!?;Main is Work;[unresolved];Main, one address per frame");
	const nt_session_info *si = p ? nt_profile_session(p, 0) : NULL;
	ok(si && si->symbols->frames == 4 && si->symbols->resolved == 2 && si->symbols->no_method == 2,
	   "symbol coverage: 2 of 4 frames resolved, 2 with no method covering them");
	nt_profile_free(p);
	po.collapse_unresolved = 0;
	p = make_profile(s, 1, 1, &po);
	c.groups = 0;
	ok(p && nt_profile_foreach(p, collapse_cb, &c) == 0 && c.groups == 1 && !c.good,
	   "without collapse_unresolved the frames stay");
	nt_profile_free(p);
}

/* The folded stacks of pyroscope's mode over the standard samples, the reader in file or
 * timestamp order; *unordered gets the session's samples_unordered. NULL on failure. */
static char *pyro_fold(unsigned rflags, uint64_t *unordered)
{
	nt_membuf mb = {NULL, 0, 0}, out = {NULL, 0, 0};
	nt_profile_opts po = NT_INIT(nt_profile_opts);
	po.compat = NT_COMPAT_PYROSCOPE;
	nt_reader_opts ro = NT_INIT(nt_reader_opts);
	ro.flags = rflags;
	nt_fold_opts fo = NT_INIT(nt_fold_opts);
	nt_profile *p = NULL;
	nt_reader *r = NULL;
	nt_error err;
	char *text = NULL;
	nt_sink sink = nt_sink_membuf(&out);
	if (write_trace(&mb, std_samples, NSTD) == 0 && nt_profile_new(&p, &po, &err) == 0 &&
	    nt_reader_open_mem(&r, mb.data, mb.len, &ro, &err) == 0 &&
	    nt_profile_add_trace(p, r, "split", &err) == 0 && nt_profile_finish(p, &err) == 0 &&
	    nt_fold_write(p, &fo, &sink, &err) == 0) {
		*unordered = nt_profile_session(p, 0)->samples_unordered;
		text = calloc(1, out.len + 1);
		if (text && out.len)
			memcpy(text, out.data, out.len);
	}
	nt_reader_free(r);
	nt_profile_free(p);
	nt_membuf_free(&mb);
	nt_membuf_free(&out);
	return text;
}

/* --compat=pyroscope is read in file order by the tools: the same folded stacks as in
 * timestamp order when one capture thread wrote every sample, and samples_unordered
 * counts a thread's samples that a second capture thread made come out of time order
 * (the writer writes each capture thread's events as one run, so in file order thread
 * 100's samples of capture thread 9 follow all of capture thread 7's). */
static void test_tree_pyroscope_file_order(void)
{
	uint64_t u_ts = 99, u_fo = 99;
	char *ts = pyro_fold(0, &u_ts), *fo = pyro_fold(NT_READ_FILE_ORDER, &u_fo);
	ok(ts && fo && strcmp(ts, fo) == 0 && ts[0], "pyroscope: file order folds as time order");
	ok(u_ts == 0 && u_fo == 0, "pyroscope: one capture thread, no unordered samples (%llu, %llu)",
	   (unsigned long long)u_ts, (unsigned long long)u_fo);
	free(ts);
	free(fo);
	split_capture = 1;
	ts = pyro_fold(0, &u_ts);
	fo = pyro_fold(NT_READ_FILE_ORDER, &u_fo);
	split_capture = 0;
	is_u64(u_ts, 0, "pyroscope, two capture threads: none unordered in timestamp order");
	ok(u_fo > 0 && u_fo < NSTD, "pyroscope, two capture threads: file order counts %llu",
	   (unsigned long long)u_fo);
	ok(ts && fo && strcmp(ts, fo) != 0, "pyroscope, two capture threads: and folds differently");
	free(ts);
	free(fo);
}

int main(void)
{
	test_tree_pyroscope_file_order();
	test_tree_top_down_sums();
	test_tree_by_weight();
	test_tree_invert();
	test_tree_flat_recursion();
	test_tree_per_thread();
	test_tree_sessions_and_no_module();
	test_tree_categories();
	test_tree_empty_stack_and_empty_tree();
	test_tree_render();
	test_tree_errors();
	test_tree_collapse_unresolved();
	return tap_done();
}
