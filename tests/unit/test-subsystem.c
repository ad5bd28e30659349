/* SPDX-License-Identifier: MIT */
/* test-subsystem.c - unit tests of the subsystem rules (category.c, nt_subsystems_*): the
 * parser (names, "other", outer, errors with line and offset), matching (leaf first, outer
 * rules, "other" stops the search, each frame's own subsystem, frames without names), the
 * built-in rules (the compiled-in text agrees with data/rules/subsystems.rules; what they
 * say about typical .NET and glibc stacks), and subsystems in profiles: groups, folded
 * frames, and trees (self partitions the samples, total >= self), also with TraceEvent's
 * pseudo-frames. Profiles are built from traces written in memory with the writer. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace.h"
#include "tap.h"
#include "testutil.h"
#include "pbuf.h"

/* ------------------------------------------------------------------ helpers */

static nt_subsystems *parse(const char *text, nt_error *err)
{
	nt_subsystems *s = NULL;
	nt_error_clear(err);
	if (nt_subsystems_parse(&s, text, strlen(text), "t.rules", err))
		return NULL;
	return s;
}

/* Subsystem name of a stack given leaf first, "other" when none, "(null)" on NULL s. */
static const char *sub_of(const nt_subsystems *s, const char *const *frames, size_t n)
{
	if (!s)
		return "(null)";
	const char *nm = nt_subsystems_name(s, nt_subsystems_match(s, frames, n, NULL));
	return nm ? nm : "other";
}

/* The same with the frames as arguments, leaf first (NULL-terminated). */
#define SUB(s, ...) sub_of((s), (const char *const[]){__VA_ARGS__}, \
			   sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

/* ------------------------------------------------------------------ parser */

static void test_subsystem_parse_names(void)
{
	nt_error err;
	nt_subsystems *s = parse("# comment\n"
				 "json *!System.Text.Json.*\n"
				 "  \n"
				 "storage\t*!System.IO.File.*   # trailing comment\n"
				 "json *!Newtonsoft.Json.*\r\n"
				 "other *!App.Dispatch(*\n"
				 "outer database *!Microsoft.EntityFrameworkCore.*\n"
				 "io/disk_2.x+y-z *!Disk.*\n",
				 &err);
	ok(s != NULL, "a valid file parses");
	if (!s) {
		printf("#   %s\n", err.msg);
		return;
	}
	is_int(nt_subsystems_count(s), 4, "4 distinct names ('other' is not one, json once)");
	is_str(nt_subsystems_name(s, 0), "json", "names in order of first appearance: json");
	is_str(nt_subsystems_name(s, 1), "storage", "then storage");
	is_str(nt_subsystems_name(s, 2), "database", "then database (after 'outer')");
	is_str(nt_subsystems_name(s, 3), "io/disk_2.x+y-z", "names may hold _ . + - /");
	ok(nt_subsystems_name(s, 4) == NULL && nt_subsystems_name(s, -1) == NULL,
	   "out-of-range names are NULL");
	nt_subsystems_free(s);
	nt_subsystems_free(NULL);
	ok(1, "nt_subsystems_free(NULL) is harmless");

	s = parse("", &err);
	ok(s && nt_subsystems_count(s) == 0, "an empty file is a valid empty rule set");
	is_int(s ? nt_subsystems_match(s, (const char *const[]){"a!b"}, 1, NULL) : 0, -1,
	       "an empty rule set matches nothing");
	nt_subsystems_free(s);
}

static void test_subsystem_parse_errors(void)
{
	static const struct {
		const char *text;
		const char *msg;
		uint64_t offset;
	} cases[] = {
		{"json *!A.*\n.json *!B.*\n", "t.rules: line 2: bad subsystem name '.json'", 11},
		{"json *!A.*\njs;on *!B.*\n", "t.rules: line 2: bad subsystem name 'js;on'", 11},
		{"abcdefghijklmnopqrstuvwxyz0123456 *!A.*\n",
		 "t.rules: line 1: bad subsystem name 'abcdefghijklmnopqrstuvwxyz012345...'", 0},
		{"json\n", "t.rules: line 1: missing pattern after subsystem 'json'", 0},
		{"x *!A.*\nouter\n", "t.rules: line 2: missing subsystem name after 'outer'", 8},
		{"json *!A.* extra\n", "t.rules: line 1: unexpected 'extra' after the pattern", 0},
		{"json *!A\\q\n", "t.rules: line 1: invalid escape '\\q' in pattern", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		nt_error err;
		nt_subsystems *s = parse(cases[i].text, &err);
		ok(s == NULL && err.code == NT_EFORMAT, "rejected: case %zu", i + 1);
		ok(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0,
		   "message of case %zu: %s", i + 1, cases[i].msg);
		if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
			printf("#   got '%s'\n", err.msg);
		is_u64(err.offset, cases[i].offset, "offset of case %zu is the line's", i + 1);
		nt_subsystems_free(s);
	}
	/* 32 bytes is the longest name */
	nt_error err;
	nt_subsystems *s = parse("abcdefghijklmnopqrstuvwxyz012345 *!A.*\n", &err);
	ok(s != NULL, "a 32-byte name is accepted");
	nt_subsystems_free(s);

	nt_subsystems *out = (nt_subsystems *)&err; /* must be reset to NULL */
	nt_error_clear(&err);
	is_int(nt_subsystems_load(&out, "/nonexistent/sub.rules", &err), NT_EIO,
	       "a missing file: NT_EIO");
	ok(out == NULL, "... and *out is NULL");
	ok(strstr(err.msg, "cannot open /nonexistent/sub.rules") != NULL,
	   "... the message names the file");
}

/* ------------------------------------------------------------------ matching */

static void test_subsystem_match(void)
{
	nt_error err;
	nt_subsystems *s = parse("other *!App.Dispatch(*\n"
				 "json *!System.Text.Json.*\n"
				 "collections *!System.Collections.*\n"
				 "threading *!System.Threading.*\n"
				 "outer database *!Microsoft.EntityFrameworkCore.*\n"
				 "networking *!System.Net.*\n",
				 &err);
	ok(s != NULL, "matching rules parse");
	if (!s)
		return;
	is_str(SUB(s, "m!System.Collections.Generic.Dictionary.FindValue()",
		   "m!System.Text.Json.JsonSerializer.Serialize()", "m!App.Main()"),
	       "collections", "the first match from the leaf decides");
	is_str(SUB(s, "m!System.Buffer.Memmove()", "m!System.Text.Json.Utf8JsonWriter.Write()",
		   "m!System.Threading.Thread.StartCallback()"),
	       "json", "unmatched leaf frames take the subsystem of the first match above");
	is_str(SUB(s, "m!App.Work()", "m!App.Dispatch(int)", "m!System.Threading.Worker.Run()"),
	       "other", "an 'other' rule stops the search: no subsystem");
	is_str(SUB(s, "m!System.Net.Sockets.Socket.Receive()",
		   "m!Microsoft.EntityFrameworkCore.Query.Run()", "m!App.Main()"),
	       "database", "an outer rule beats the leaf-most match");
	is_str(SUB(s, "m!Microsoft.EntityFrameworkCore.Inner()", "m!System.Net.X()",
		   "m!Microsoft.EntityFrameworkCore.Outer()"),
	       "database", "the outer match nearest the root decides");
	is_str(SUB(s, "m!App.A()", "m!App.B()"), "other", "no match: no subsystem");
	is_str(sub_of(s, NULL, 0), "other", "an empty stack has no subsystem");
	is_str(SUB(s, NULL, "m!System.Text.Json.X()"), "json", "a frame without a name matches nothing");

	const char *fr[] = {"m!System.Collections.List.Sort()", "m!App.Cmp()",
			    "m!System.Text.Json.X()", "m!App.Dispatch(int)",
			    "m!System.Threading.Thread.StartCallback()", NULL};
	int32_t own[6] = {7, 7, 7, 7, 7, 7};
	int d = nt_subsystems_match(s, fr, 6, own);
	is_str(nt_subsystems_name(s, d), "collections", "with frame subsystems: same decision");
	ok(own[0] == 1 && own[1] == -1 && own[2] == 0 && own[3] == -1 && own[4] == 2 &&
		   own[5] == -1,
	   "each frame's own subsystem: collections, none, json, none ('other'), threading, none");
	printf("#   own: %d %d %d %d %d %d\n", own[0], own[1], own[2], own[3], own[4], own[5]);
	const char *fo[] = {"m!System.Net.Http.Send()", "m!Microsoft.EntityFrameworkCore.Save()"};
	int32_t own2[2];
	d = nt_subsystems_match(s, fo, 2, own2);
	ok(d == 3 && own2[0] == 4 && own2[1] == 3,
	   "an outer decision is one of the frames' own subsystems");
	ok(nt_subsystems_match(NULL, fo, 2, own2) == -1 && own2[0] == -1 && own2[1] == -1,
	   "NULL rules: no subsystem, frames cleared");
	nt_subsystems_free(s);
}

/* ------------------------------------------------------------------ built-in rules */

#define CL "System.Private.CoreLib!System."

static void test_subsystem_defaults(void)
{
	nt_subsystems *d = NULL, *f = NULL;
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_subsystems_default(&d, &err), 0, "nt_subsystems_default");
	nt_error_clear(&err);
	is_int(nt_subsystems_load(&f, tu_data("rules/subsystems.rules"), &err), 0,
	       "nt_subsystems_load(data/rules/subsystems.rules)");
	if (err.code)
		printf("#   %s\n", err.msg);
	int same = d && f && nt_subsystems_count(d) == nt_subsystems_count(f);
	for (size_t i = 0; same && i < nt_subsystems_count(d); i++)
		same = strcmp(nt_subsystems_name(d, (int)i), nt_subsystems_name(f, (int)i)) == 0;
	ok(same, "the compiled-in rules have the names of data/rules/subsystems.rules (%zu)",
	   nt_subsystems_count(d));
	nt_subsystems_free(f);
	if (!d)
		return;
	is_str(SUB(d, CL "Text.Json.Utf8JsonWriter.WriteStringValue(string)", "App!App.Run()"),
	       "json", "System.Text.Json is json");
	is_str(SUB(d, CL "SpanHelpers.IndexOf(char&,char,int32)",
		   "System.Text.Json!System.Text.Json.JsonSerializer.Serialize(!!0)"),
	       "json", "a helper under System.Text.Json is json");
	is_str(SUB(d, "System.Net.Sockets!System.Net.Sockets.Socket.Receive(uint8[])"),
	       "networking", "sockets are networking");
	is_str(SUB(d, "libc.so.6!__libc_recv", "libSystem.Native.so!SystemNative_Receive"),
	       "networking", "libc recv is networking");
	is_str(SUB(d, "libc.so.6!read", CL "IO.FileStream.Read(uint8[],int32,int32)"),
	       "storage", "libc read is storage");
	is_str(SUB(d, CL "IO.Strategies.UnixFileStreamStrategy.Read(value class System.Span`1)"),
	       "storage", "FileStream strategies are storage");
	is_str(SUB(d, "libc.so.6!malloc", "libcoreclr.so!EEJitManager::allocCode"),
	       "allocator", "malloc is the allocator");
	is_str(SUB(d, "libc.so.6!_int_free"), "allocator", "glibc internals too");
	is_str(SUB(d, "libcoreclr.so!WKS::gc_heap::mark_object_simple(unsigned char**)"),
	       "runtime", "the GC is runtime");
	is_str(SUB(d, "libclrjit.so!Compiler::compCompile"), "jit", "the JIT is jit");
	is_str(SUB(d, CL "Linq.Enumerable.Sum(class System.Collections.Generic.IEnumerable`1)"),
	       "linq", "LINQ");
	is_str(SUB(d, CL "Collections.Generic.Dictionary`2[System.__Canon,System.Int32].FindValue(!0)"),
	       "collections", "collections");
	is_str(SUB(d, "System.Text.RegularExpressions!System.Text.RegularExpressions.Regex.Match(string)"),
	       "regex", "regex before the System.Text rule");
	is_str(SUB(d, CL "Text.UTF8Encoding.GetBytes(string)"), "text", "encodings are text");
	is_str(SUB(d, "Microsoft.EntityFrameworkCore!Microsoft.EntityFrameworkCore.DbContext.SaveChanges()"),
	       "database", "Entity Framework Core is database");
	is_str(SUB(d, "Microsoft.AspNetCore.Server.Kestrel.Core!Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpParser`1.ParseHeaders()"),
	       "aspnet", "ASP.NET Core is aspnet");
	is_str(SUB(d, "Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets!Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets.Internal.SocketConnection.DoReceive()"),
	       "networking", "Kestrel's socket transport is networking");
	is_str(SUB(d, CL "Threading.LowLevelLifoSemaphore.WaitForSignal(int32)",
		   CL "Threading.PortableThreadPool+WorkerThread.WorkerThreadStart()",
		   CL "Threading.Thread.StartCallback()"),
	       "threading", "an idle thread-pool worker is threading");
	is_str(SUB(d, "App!App.Handler.Process()", CL "Threading.Tasks.Task.InnerInvoke()",
		   CL "Threading.Tasks.Task.ExecuteWithThreadLocal(class System.Threading.Tasks.Task&)",
		   CL "Threading.ThreadPoolWorkQueue.Dispatch()",
		   CL "Threading.Thread.StartCallback()"),
	       "other", "application code run by a task is not threading");
	is_str(SUB(d, "App!App.Program+<Run>d__1.MoveNext()",
		   CL "Runtime.CompilerServices.AsyncMethodBuilderCore.Start(!!0&)", "App!App.Main()"),
	       "other", "an async method's body is not threading");
	is_str(SUB(d, "App!App.Program.Main()"), "other", "application code is other");
	is_str(SUB(d, "System.Console!System.IO.StdInReader.ReadKey(bool&)"), "console",
	       "System.Console is console");
	is_str(SUB(d, "libc.so.6!__futex_abstimed_wait_common64", "libc.so.6!pthread_cond_wait@@GLIBC_2.3.2"),
	       "threading", "glibc waits are threading");
	is_str(SUB(d, "libcrypto.so.3!EVP_DigestUpdate"), "crypto", "OpenSSL is crypto");
	nt_subsystems_free(d);
}

/* ------------------------------------------------------------------ profiles */

/* Methods of the synthetic trace: IP(m) falls into method m. */
enum { M_MAIN, M_JSON, M_MEMMOVE, M_READ, M_TASK, M_WORK, M_COUNT };
static const char *const ns_of[M_COUNT] = {
	"App", "System.Text.Json.JsonSerializer", "System.Buffer", "System.IO.File",
	"System.Threading.Tasks.Task", "App",
};
static const char *const name_of[M_COUNT] = {"Main", "Serialize", "Memmove", "ReadAllBytes",
					     "InnerInvoke", "Work"};
#define IP(m) (0x10000ull + 0x1000ull * (uint64_t)(m) + 0x10)

/* Stacks, root first (method + 1, 0 ends), with their sample counts:
 *   Main > Serialize > Memmove          x4  json (Memmove takes its caller's)
 *   Main > ReadAllBytes                 x3  storage
 *   Main > Serialize > ReadAllBytes     x2  storage (leaf first); json in total
 *   Main > InnerInvoke > Work           x1  other ('other' rule), threading nowhere
 *   Main                                x2  other (no rule) */
static const struct {
	int frames[4];
	int count;
} stacks[] = {
	{{M_MAIN + 1, M_JSON + 1, M_MEMMOVE + 1}, 4},
	{{M_MAIN + 1, M_READ + 1}, 3},
	{{M_MAIN + 1, M_JSON + 1, M_READ + 1}, 2},
	{{M_MAIN + 1, M_TASK + 1, M_WORK + 1}, 1},
	{{M_MAIN + 1}, 2},
};

/* first_type: the sample type of the first sample (TraceEvent's state machine charges
 * nothing before an External sample); the others are Managed. */
static int write_trace(nt_membuf *mb, uint32_t first_type)
{
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.sync_qpc = 1000000;
	h.qpc_frequency = 1000000000;
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
	uint64_t ts = h.sync_qpc;
	for (size_t s = 0; s < sizeof stacks / sizeof stacks[0]; s++) {
		for (int c = 0; c < stacks[s].count; c++) {
			uint64_t ips[4];
			uint32_t depth = 0;
			while (depth < 4 && stacks[s].frames[depth])
				depth++;
			for (uint32_t k = 0; k < depth; k++)
				ips[k] = IP(stacks[s].frames[depth - 1 - k] - 1);
			pbuf p = {{0}, 0};
			pb_u32(&p, s == 0 && c == 0 ? first_type : 2);
			nt_event_desc e;
			memset(&e, 0, sizeof e);
			e.metadata_id = sid;
			e.thread_id = 100;
			e.capture_thread_id = 7;
			e.timestamp = ts += 1000000;
			e.stack = ips;
			e.stack_depth = depth;
			e.payload = p.b;
			e.payload_len = (uint32_t)p.n;
			if (nt_writer_write_event(w, &e, &err))
				goto fail;
		}
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
		e.timestamp = ts + 1000 + (uint64_t)m;
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
	e.timestamp = ts + 2000;
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

static const char test_rules[] = "other *!System.Threading.Tasks.Task.InnerInvoke(*\n"
				 "json *!System.Text.Json.*\n"
				 "storage *!System.IO.File.*\n"
				 "threading *!System.Threading.*\n";

static nt_profile *make_profile(int compat, const nt_subsystems *rules, int on)
{
	nt_membuf mb = {NULL, 0, 0};
	nt_profile *p = NULL;
	nt_reader *r = NULL;
	nt_error err;
	nt_error_clear(&err);
	nt_profile_opts po;
	memset(&po, 0, sizeof po);
	po.sz = sizeof po;
	po.compat = compat;
	po.subsystems = on;
	po.subsystem_rules = rules;
	if (write_trace(&mb, compat == NT_COMPAT_TRACEEVENT ? 1 : 2) ||
	    nt_profile_new(&p, &po, &err) ||
	    nt_reader_open_mem(&r, mb.data, mb.len, NULL, &err) ||
	    nt_profile_add_trace(p, r, "synthetic", &err) || nt_profile_finish(p, &err)) {
		printf("# profile: %s\n", err.msg);
		nt_profile_free(p);
		p = NULL;
	}
	nt_reader_free(r);
	nt_membuf_free(&mb);
	return p;
}

typedef struct gsum {
	const nt_subsystems *s;
	uint64_t by_sub[64];  /* samples by decided subsystem + 1 */
	int aligned;          /* frame_subsystems present and consistent with the decision */
	int groups;
} gsum;

static int sum_group(void *ctx, const nt_sample_group *g)
{
	gsum *c = ctx;
	c->groups++;
	if (g->subsystem >= -1 && g->subsystem < 63)
		c->by_sub[g->subsystem + 1] += g->samples;
	if (!g->frame_subsystems) {
		c->aligned = 0;
		return 0;
	}
	int found = g->subsystem < 0;
	for (uint32_t i = 0; i < g->depth; i++)
		found |= g->frame_subsystems[i] == g->subsystem;
	if (!found)
		c->aligned = 0;
	return 0;
}

static char *fold(nt_profile *p, int subframe, int catframe)
{
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_fold_opts fo;
	memset(&fo, 0, sizeof fo);
	fo.sz = sizeof fo;
	fo.unit = NT_UNIT_SAMPLES;
	fo.subsystem_frame = subframe;
	fo.category_frame = catframe;
	fo.no_module = 1;
	nt_error err;
	nt_error_clear(&err);
	char *s = NULL;
	if (nt_fold_write(p, &fo, &sink, &err) == 0 && (s = malloc(mb.len + 1))) {
		memcpy(s, mb.data, mb.len);
		s[mb.len] = '\0';
	} else if (err.code) {
		printf("# fold: %s\n", err.msg);
	}
	nt_membuf_free(&mb);
	return s;
}

static void test_subsystem_profile(void)
{
	nt_error err;
	nt_subsystems *rules = parse(test_rules, &err);
	nt_profile *p = make_profile(NT_COMPAT_NONE, rules, 1);
	ok(p != NULL, "profile with subsystems builds");
	if (!p) {
		nt_subsystems_free(rules);
		return;
	}
	ok(nt_profile_subsystems(p) == rules, "nt_profile_subsystems: the given rules");
	gsum c;
	memset(&c, 0, sizeof c);
	c.aligned = 1;
	nt_profile_foreach(p, sum_group, &c);
	is_u64(c.by_sub[0], 3, "3 samples have no subsystem (2 unmatched, 1 stopped by 'other')");
	is_u64(c.by_sub[1], 4, "4 samples are json (Memmove under Serialize)");
	is_u64(c.by_sub[2], 5, "5 samples are storage (leaf first)");
	ok(c.aligned, "every group has frame subsystems that include its decision");

	char *f = fold(p, NT_CATFRAME_ROOT, NT_CATFRAME_NONE);
	is_str(f, "[json];App.Main();System.Text.Json.JsonSerializer.Serialize();System.Buffer.Memmove() 4\n"
		  "[other];App.Main() 2\n"
		  "[other];App.Main();System.Threading.Tasks.Task.InnerInvoke();App.Work() 1\n"
		  "[storage];App.Main();System.IO.File.ReadAllBytes() 3\n"
		  "[storage];App.Main();System.Text.Json.JsonSerializer.Serialize();System.IO.File.ReadAllBytes() 2\n",
	       "folded with --subsystem-frame root");
	free(f);
	f = fold(p, NT_CATFRAME_LEAF, NT_CATFRAME_LEAF);
	ok(f && strstr(f, "App.Main();System.IO.File.ReadAllBytes();[running];[storage] 3\n"),
	   "leaf frames: the category, then the subsystem");
	free(f);
	f = fold(p, NT_CATFRAME_ROOT, NT_CATFRAME_ROOT);
	ok(f && strstr(f, "[storage];[running];App.Main();System.IO.File.ReadAllBytes() 3\n"),
	   "root frames: the subsystem, then the category");
	free(f);

	/* trees */
	nt_tree_opts to;
	memset(&to, 0, sizeof to);
	to.sz = sizeof to;
	to.by_samples = 1;
	nt_tree *t = NULL;
	nt_error_clear(&err);
	is_int(nt_tree_new(&t, p, &to, &err), 0, "tree of a profile with subsystems");
	is_int(nt_tree_subsystem_count(t), 3, "3 subsystems with samples: json, storage, other");
	uint64_t self = 0;
	const nt_tree_subsystem *json = NULL, *storage = NULL, *other = NULL;
	for (size_t i = 0; i < nt_tree_subsystem_count(t); i++) {
		const nt_tree_subsystem *s = nt_tree_subsystem_at(t, NT_TREE_BY_SELF, i);
		self += s->self_samples;
		ok(s->total_samples >= s->self_samples, "%s: total >= self", s->name);
		if (strcmp(s->name, "json") == 0)
			json = s;
		else if (strcmp(s->name, "storage") == 0)
			storage = s;
		else if (strcmp(s->name, "other") == 0)
			other = s;
	}
	is_u64(self, nt_tree_root(t)->samples, "self samples partition the tree");
	ok(storage && storage->self_samples == 5 && storage->total_samples == 5,
	   "storage: self 5, total 5");
	ok(json && json->self_samples == 4 && json->total_samples == 6,
	   "json: self 4, total 6 (Serialize over ReadAllBytes counts in total)");
	ok(other && other->self_samples == 3 && other->total_samples == 3, "other: 3, total = self");
	ok(storage && storage->cat_samples[NT_CAT_RUNNING] == 5, "storage's self is running by category");
	const nt_tree_subsystem *first = nt_tree_subsystem_at(t, NT_TREE_BY_SELF, 0);
	const nt_tree_subsystem *tfirst = nt_tree_subsystem_at(t, NT_TREE_BY_TOTAL, 0);
	ok(first && tfirst && strcmp(first->name, "storage") == 0 && strcmp(tfirst->name, "json") == 0,
	   "by self storage first, by total json first");
	ok(nt_tree_subsystem_at(t, NT_TREE_BY_SELF, 3) == NULL && nt_tree_subsystem_at(t, 7, 0) == NULL,
	   "out of range: NULL");

	/* rendering */
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_tree_print_opts pr;
	memset(&pr, 0, sizeof pr);
	pr.sz = sizeof pr;
	pr.unit = NT_UNIT_SAMPLES;
	pr.by_subsystem = 1;
	pr.no_header = 1;
	nt_error_clear(&err);
	is_int(nt_tree_write_text(t, &pr, &sink, &err), 0, "by-subsystem table renders");
	const char *want = "  self%   total%         self        total  subsystem\n"
			   "  41.7%    41.7%            5            5  storage\n"
			   "  33.3%    50.0%            4            6  json\n"
			   "  25.0%    25.0%            3            3  other\n";
	ok(mb.len == strlen(want) && memcmp(mb.data, want, mb.len) == 0,
	   "by-subsystem rows: self%%, total%%, self, total, name");
	if (mb.len != strlen(want) || memcmp(mb.data, want, mb.len) != 0)
		printf("# got:\n%.*s", (int)mb.len, (const char *)mb.data);
	nt_membuf_free(&mb);
	pr.when = 1;
	nt_error_clear(&err);
	is_int(nt_tree_write_text(t, &pr, &sink, &err), NT_EINVAL,
	       "when without time histograms: NT_EINVAL");
	nt_membuf_free(&mb);
	nt_tree_free(t);
	nt_profile_free(p);

	/* TraceEvent's pseudo-frame has no subsystem */
	p = make_profile(NT_COMPAT_TRACEEVENT, rules, 1);
	memset(&c, 0, sizeof c);
	c.aligned = 1;
	ok(p && nt_profile_foreach(p, sum_group, &c) == 0 && c.aligned && c.groups > 0,
	   "traceevent: frame subsystems aligned with the pseudo-frame");
	nt_profile_free(p);

	/* without subsystems */
	p = make_profile(NT_COMPAT_NONE, NULL, 0);
	memset(&c, 0, sizeof c);
	c.aligned = 1;
	nt_profile_foreach(p, sum_group, &c);
	ok(p && nt_profile_subsystems(p) == NULL && !c.aligned && c.by_sub[0] == 12,
	   "not asked: no rules, no frame subsystems, every group -1");
	f = p ? fold(p, NT_CATFRAME_ROOT, NT_CATFRAME_NONE) : NULL;
	ok(f == NULL, "a subsystem frame needs subsystems: nt_fold_write fails");
	free(f);
	t = NULL;
	nt_tree_new(&t, p, &to, &err);
	ok(t && nt_tree_subsystem_count(t) == 0, "a tree without subsystems has none");
	pr.when = 0;
	nt_error_clear(&err);
	ok(t && nt_tree_write_text(t, &pr, &sink, &err) == NT_EINVAL &&
		   strstr(err.msg, "no subsystems") != NULL,
	   "--by-subsystem without subsystems: NT_EINVAL");
	nt_membuf_free(&mb);
	nt_tree_free(t);
	nt_profile_free(p);

	/* the built-in rules by default */
	p = make_profile(NT_COMPAT_NONE, NULL, 1);
	const nt_subsystems *def = p ? nt_profile_subsystems(p) : NULL;
	ok(def && nt_subsystems_count(def) > 10, "no rules given: the built-in ones");
	memset(&c, 0, sizeof c);
	nt_profile_foreach(p, sum_group, &c);
	int json_i = -1;
	for (size_t i = 0; def && i < nt_subsystems_count(def); i++)
		if (strcmp(nt_subsystems_name(def, (int)i), "json") == 0)
			json_i = (int)i;
	ok(json_i >= 0 && json_i < 63 && c.by_sub[json_i + 1] == 4,
	   "built-in rules: the 4 Serialize > Memmove samples are json");
	nt_profile_free(p);
	nt_subsystems_free(rules);
}

int main(void)
{
	test_subsystem_parse_names();
	test_subsystem_parse_errors();
	test_subsystem_match();
	test_subsystem_defaults();
	test_subsystem_profile();
	return tap_done();
}
