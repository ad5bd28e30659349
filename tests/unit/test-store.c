/* SPDX-License-Identifier: MIT */
/* test-store.c - unit tests of the SQLite store (store-sqlite.c): what an import writes
 * (sessions, threads, the callsite prefix tree, frames, functions, modules, samples with
 * their time, category and weight, events with paired durations, thread names), the
 * category filter, compat weights, SQL errors, and the file rules: the import appears only
 * at commit, nothing is left behind without one, appending shares the interned stacks, and
 * an unknown schema_version or a file that is not a database is refused untouched.
 * Input traces are written in memory with the writer, as in test-tree.c; every check reads
 * the database back through nt_store_query(). */
#include "config.h" /* mkdtemp, popen */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nettrace.h"
#include "tap.h"
#include "pbuf.h"

/* ------------------------------------------------------------------ building traces */

enum { M_MAIN, M_SLOW, M_FAST, M_WORK, M_REC, M_COUNT };
static const char *const method_names[M_COUNT] = {"Main", "Slow", "Fast", "Work", "Rec"};

#define MODULE_ID 0x77
#define IP(m) (0x10000ull + 0x1000ull * (uint64_t)(m) + 0x10)
#define SYNC_QPC 1000000ull

/* One sample, 1 ms after the previous one: thread, type, stack root first (method + 1). */
typedef struct tsample {
	uint64_t tid;
	uint32_t type; /* 1 External, 2 Managed */
	int frames[8];
} tsample;

/* 12 samples (root first):
 *   thread 100: Main>Slow>Work x6, Main>Fast>Work x3
 *   thread 101: Main>Slow x1, Main>Rec>Rec>Rec x2 (recursion: one frame, three callsites) */
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

typedef struct tw {
	nt_writer *w;
	nt_error err;
	uint32_t sid, mid, did, cstart, cstop, tname;
} tw;

static int emit(tw *t, uint32_t meta, uint64_t tid, uint64_t cap, uint64_t ts,
		const uint64_t *ips, uint32_t depth, const pbuf *p)
{
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = meta;
	e.thread_id = tid;
	e.capture_thread_id = cap;
	e.timestamp = ts;
	e.stack = depth ? ips : NULL;
	e.stack_depth = depth;
	e.payload = p->b;
	e.payload_len = (uint32_t)p->n;
	if (nt_writer_write_event(t->w, &e, &t->err)) {
		printf("# writer: %s\n", t->err.msg);
		return -1;
	}
	return 0;
}

/* Writes the samples (1 ms apart, from 1 ms after the session start), then the rundown.
 * With contention: thread 100 holds ContentionStart..Stop (3.5 ms to 7.5 ms) around its 3rd
 * to 5th samples (at 4, 6 and 7 ms), and a ThreadName event names thread 100 "worker". */
static int write_trace(nt_membuf *mb, const tsample *s, size_t n, int contention)
{
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	static const uint16_t utc[8] = {2024, 5, 0, 5, 9, 30, 0, 250};
	memcpy(h.sync_time_utc, utc, sizeof utc);
	h.sync_qpc = SYNC_QPC;
	h.qpc_frequency = 1000000000;
	h.pointer_size = 8;
	h.process_id = 42;
	h.processors = 4;
	h.expected_sampling_ns = 1000000;
	nt_sink sink = nt_sink_membuf(mb);
	tw t;
	memset(&t, 0, sizeof t);
	nt_error_clear(&t.err);
	static const nt_field tn_fields[] = {
		{"ThreadId", NT_TYPE_U64, 0, 0, NULL, 0},
		{"Name", NT_TYPE_STRING, 0, 0, NULL, 0},
	};
	nt_metadata_desc ds = {NT_PROVIDER_SAMPLER, 0, "ThreadSample", 0, 0, 5, 0, NULL, 0};
	nt_metadata_desc dm = {NT_PROVIDER_RUNDOWN, 144, "MethodDCEndVerbose", 0x30, 1, 4, 0, NULL, 0};
	nt_metadata_desc dd = {NT_PROVIDER_RUNDOWN, 152, "DomainModuleDCEnd", 0x8, 1, 4, 0, NULL, 0};
	nt_metadata_desc dc1 = {NT_PROVIDER_RUNTIME, 81, "ContentionStart", 0x4000, 1, 4, 1, NULL, 0};
	nt_metadata_desc dc2 = {NT_PROVIDER_RUNTIME, 91, "ContentionStop", 0x4000, 1, 4, 2, NULL, 0};
	nt_metadata_desc dt = {NT_PROVIDER_NTSAMPLER, NT_NTS_THREAD_NAME, "ThreadName", 0, 0, 4, 0,
			       tn_fields, 2};
	if (nt_writer_open(&t.w, &sink, &h, NULL, &t.err) ||
	    nt_writer_add_metadata(t.w, &ds, &t.sid, &t.err) ||
	    nt_writer_add_metadata(t.w, &dm, &t.mid, &t.err) ||
	    nt_writer_add_metadata(t.w, &dd, &t.did, &t.err) ||
	    nt_writer_add_metadata(t.w, &dc1, &t.cstart, &t.err) ||
	    nt_writer_add_metadata(t.w, &dc2, &t.cstop, &t.err) ||
	    nt_writer_add_metadata(t.w, &dt, &t.tname, &t.err)) {
		printf("# writer: %s\n", t.err.msg);
		nt_writer_free(t.w);
		return -1;
	}
	uint64_t ts = SYNC_QPC;
	if (contention) {
		pbuf p = {{0}, 0};
		pb_u64(&p, 100);
		pb_str(&p, "worker");
		if (emit(&t, t.tname, 7, 7, ts + 10, NULL, 0, &p))
			goto fail;
	}
	int seen100 = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t ips[8];
		uint32_t depth = 0;
		while (depth < 8 && s[i].frames[depth])
			depth++;
		for (uint32_t k = 0; k < depth; k++) /* leaf first */
			ips[k] = IP(s[i].frames[depth - 1 - k] - 1);
		ts += 1000000;
		if (contention && s[i].tid == 100) {
			seen100++;
			pbuf p = {{0}, 0};
			pb_u8(&p, 0);
			pb_u16(&p, 9);
			/* start 0.5 ms before its 3rd sample, stop 0.5 ms after its 5th */
			if (seen100 == 3 && emit(&t, t.cstart, 100, 100, ts - 500000, NULL, 0, &p))
				goto fail;
			pbuf q = {{0}, 0};
			pb_u32(&q, s[i].type);
			if (emit(&t, t.sid, s[i].tid, 7, ts, ips, depth, &q))
				goto fail;
			if (seen100 == 5 && emit(&t, t.cstop, 100, 100, ts + 500000, NULL, 0, &p))
				goto fail;
			continue;
		}
		pbuf q = {{0}, 0};
		pb_u32(&q, s[i].type);
		if (emit(&t, t.sid, s[i].tid, 7, ts, ips, depth, &q))
			goto fail;
	}
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
		pb_u16(&p, 9);
		if (emit(&t, t.mid, 8, 8, ts + 1000000 + (uint64_t)m, NULL, 0, &p))
			goto fail;
	}
	pbuf p = {{0}, 0};
	pb_u64(&p, MODULE_ID);
	pb_u64(&p, 0x99); /* AssemblyID */
	pb_u64(&p, 0x1);  /* AppDomainID */
	pb_u32(&p, 0);    /* ModuleFlags */
	pb_u32(&p, 0);    /* Reserved */
	pb_str(&p, "C:\\app\\app.dll");
	pb_str(&p, "");
	pb_u16(&p, 9);
	if (emit(&t, t.did, 8, 8, ts + 2000000, NULL, 0, &p) || nt_writer_close(t.w, &t.err)) {
		printf("# writer: %s\n", t.err.msg);
		return -1;
	}
	return 0;
fail:
	nt_writer_free(t.w);
	return -1;
}

/* Imports `copies` sessions of the given samples into st (hooked profile with opts po);
 * returns 0 or -1. */
static int import(nt_store *st, const tsample *s, size_t n, int contention, int copies,
		  const nt_profile_opts *po)
{
	nt_membuf mb = {NULL, 0, 0};
	nt_profile *p = NULL;
	nt_error err;
	nt_error_clear(&err);
	nt_profile_opts o;
	memset(&o, 0, sizeof o);
	if (po)
		o = *po;
	o.sz = sizeof o;
	nt_store_hook_profile(st, &o);
	int rc = -1;
	if (write_trace(&mb, s, n, contention) || nt_profile_new(&p, &o, &err))
		goto out;
	for (int c = 0; c < copies; c++) {
		nt_reader *r = NULL;
		char name[32];
		snprintf(name, sizeof name, "synthetic-%d", c + 1);
		if (nt_reader_open_mem(&r, mb.data, mb.len, NULL, &err) ||
		    nt_profile_add_trace(p, r, name, &err)) {
			nt_reader_free(r);
			goto out;
		}
		nt_reader_free(r);
	}
	if (nt_store_add_profile(st, p, &err))
		goto out;
	rc = 0;
out:
	if (rc)
		printf("# import: %s\n", err.msg);
	nt_profile_free(p);
	nt_membuf_free(&mb);
	return rc;
}

/* ------------------------------------------------------------------ reading results */

/* The first column of the first row of sql as text ("NULL" for NULL, "" for no row). */
typedef struct one {
	char s[512];
	int rows;
} one;

static int one_fn(void *ctx, const nt_sql_row *row)
{
	one *o = ctx;
	if (!row->values)
		return 0;
	if (o->rows++ == 0) {
		const nt_sql_value *v = &row->values[0];
		switch (v->type) {
		case NT_SQL_INTEGER: snprintf(o->s, sizeof o->s, "%" PRId64, v->i); break;
		case NT_SQL_REAL: snprintf(o->s, sizeof o->s, "%.6f", v->d); break;
		case NT_SQL_TEXT: snprintf(o->s, sizeof o->s, "%s", v->text); break;
		case NT_SQL_NULL: snprintf(o->s, sizeof o->s, "NULL"); break;
		default: snprintf(o->s, sizeof o->s, "BLOB"); break;
		}
	}
	return 0;
}

static const char *q1(nt_store *st, const char *sql)
{
	static one o;
	memset(&o, 0, sizeof o);
	nt_error err;
	nt_error_clear(&err);
	if (nt_store_query(st, sql, one_fn, &o, &err)) {
		snprintf(o.s, sizeof o.s, "ERROR: %s", err.msg);
		printf("# %s\n#   %s\n", sql, err.msg);
	}
	return o.s;
}

static int64_t qi(nt_store *st, const char *sql)
{
	const char *s = q1(st, sql);
	return strncmp(s, "ERROR", 5) == 0 || !*s ? -999999 : strtoll(s, NULL, 10);
}

static nt_store *open_mem(unsigned flags)
{
	nt_store *st = NULL;
	nt_error err;
	nt_error_clear(&err);
	nt_store_opts o = {sizeof o, flags, NULL, NULL};
	if (nt_store_open(&st, ":memory:", &o, &err))
		printf("# nt_store_open: %s\n", err.msg);
	return st;
}

static int file_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

/* Number of entries of dir (besides . and ..), to catch leftover temporary files. */
static int dir_entries(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
	FILE *fp = popen(cmd, "r");
	int n = -1;
	if (fp) {
		if (fscanf(fp, "%d", &n) != 1)
			n = -1;
		pclose(fp);
	}
	return n;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	unsigned char *b = malloc(1 << 20);
	*len = b ? fread(b, 1, 1 << 20, fp) : 0;
	fclose(fp);
	return b;
}

/* ------------------------------------------------------------------ tests */

static void test_store_probe_recognises_the_sqlite_header(void)
{
	static const char db[] = "SQLite format 3\0\x10\0";
	is_int(nt_store_probe(db, 16), 1, "probe: the 16-byte SQLite header");
	is_int(nt_store_probe(db, 15), 0, "probe: 15 bytes are not enough");
	is_int(nt_store_probe("Nettrace", 8), 0, "probe: a nettrace file is not a database");
	is_int(nt_store_probe("SQLite format 3!", 16), 0, "probe: the header ends with a NUL");
}

static void test_store_writes_samples_and_stacks(void)
{
	nt_store *st = open_mem(0);
	ok(st && import(st, std_samples, NSTD, 0, 1, NULL) == 0, "import of the standard trace");
	if (!st)
		return;
	is_int(qi(st, "SELECT COUNT(*) FROM samples"), 12, "12 samples");
	is_int(qi(st, "SELECT COUNT(*) FROM sessions"), 1, "1 session");
	is_str(q1(st, "SELECT file || ' ' || process_id || ' ' || start_utc || ' ' || qpc_frequency "
		      "|| ' ' || trace_samples || ' ' || samples || ' ' || compat FROM sessions"),
	       "synthetic-1 42 2024-05-05T09:30:00.250Z 1000000000 12 12 none",
	       "sessions: file, pid, start time, frequency, counts, compat");
	is_int(qi(st, "SELECT COUNT(*) FROM threads"), 3, "threads: 100, 101 and the rundown's 8");
	is_int(qi(st, "SELECT COUNT(*) FROM callsites"), 8,
	       "8 callsites: every distinct stack prefix once");
	is_int(qi(st, "SELECT COUNT(*) FROM callsites WHERE parent_id IS NULL AND depth = 0"), 1,
	       "one root callsite (Main), depth 0");
	is_int(qi(st, "SELECT MAX(depth) FROM callsites"), 3, "deepest callsite: Main>Rec>Rec>Rec");
	is_int(qi(st, "SELECT COUNT(*) FROM callsites c JOIN callsites p ON p.id = c.parent_id "
		      "WHERE c.depth <> p.depth + 1"),
	       0, "a callsite is one deeper than its parent");
	is_int(qi(st, "SELECT COUNT(*) FROM frames"), 5, "5 frames (the recursive Rec is one)");
	is_int(qi(st, "SELECT COUNT(*) FROM functions"), 5, "5 functions");
	is_str(q1(st, "SELECT name || ' ' || path FROM modules"), "app C:\\app\\app.dll",
	       "the module, named as in frames, with its path from DomainModuleDCEnd");
	is_str(q1(st, "SELECT printf('0x%x', address) FROM frame_names WHERE function = "
		      "'App.Work()'"),
	       "0x13010", "frames.address is the sampled IP");
	is_str(q1(st, "SELECT file IS NULL AND line IS NULL AND inline_depth = 0 FROM frames "
		      "LIMIT 1"),
	       "1", "managed frames: no file/line, inline depth 0");
	is_str(q1(st, "SELECT group_concat(ts_ns, ',') FROM (SELECT ts_ns FROM samples ORDER BY id "
		      "LIMIT 3)"),
	       "1000000,2000000,3000000", "ts_ns: ns since the session start, in reading order");
	is_int(qi(st, "SELECT COUNT(*) FROM samples s JOIN sessions ss ON ss.id = s.session_id "
		      "WHERE abs(s.weight_ns - COALESCE(ss.inferred_interval_ns, "
		      "ss.declared_interval_ns)) > 1e-6"),
	       0, "each sample weighs its session's interval");
	is_int(qi(st, "SELECT COUNT(*) FROM sample_rows WHERE weight_ns IS NOT NULL"), 0,
	       "default mode: no per-row weight stored");
	is_int(qi(st, "SELECT COUNT(*) FROM sample_stacks WHERE stack = "
		      "'app!App.Main();app!App.Slow();app!App.Work()'"),
	       6, "sample_stacks: folded text root first");
	is_int(qi(st, "SELECT COUNT(*) FROM samples WHERE category = 'running' AND sample_type = "
		      "'managed'"),
	       12, "Managed samples are running (no CPU clock)");
	is_str(q1(st, "SELECT frame || ' ' || samples FROM top_self LIMIT 1"), "app!App.Work() 9",
	       "top_self: Work is the leaf of 9 samples");
	is_int(qi(st, "SELECT samples FROM top_total WHERE function = 'App.Rec()'"), 2,
	       "top_total: recursion counts a sample once");
	is_int(qi(st, "SELECT samples FROM top_total WHERE function = 'App.Main()'"), 12,
	       "top_total: Main is on every stack");
	is_int(qi(st, "SELECT SUM(samples) FROM category_time WHERE tid = 100"), 9,
	       "category_time: 9 samples on thread 100");
	is_int(qi(st, "SELECT version FROM schema_version"), NT_STORE_SCHEMA_VERSION,
	       "schema_version row");
	is_int(qi(st, "PRAGMA user_version"), NT_STORE_SCHEMA_VERSION, "PRAGMA user_version");
	nt_store_stats ss = NT_INIT(nt_store_stats);
	nt_store_stats_get(st, &ss);
	ok(ss.sessions == 1 && ss.samples == 12 && ss.callsites == 8 && ss.frames == 5,
	   "stats: 1 session, 12 samples, 8 callsites, 5 frames");
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_store_commit(st, &err), 0, "commit of an in-memory import");
	is_int(qi(st, "SELECT COUNT(*) FROM samples"), 12, "queries after the commit");
	nt_store_free(st);
}

static void test_store_classifies_subsystems(void)
{
	/* the hook turns subsystems on (built-in rules: nothing of App matches) */
	nt_store *st = open_mem(0);
	ok(st && import(st, std_samples, NSTD, 0, 1, NULL) == 0, "import with the built-in rules");
	if (!st)
		return;
	is_int(qi(st, "SELECT COUNT(*) FROM samples WHERE subsystem IS NULL"), 12,
	       "built-in rules: no subsystem for App's frames (NULL)");
	is_str(q1(st, "SELECT subsystem || ' ' || SUM(samples) || ' ' || SUM(pct) "
		      "FROM subsystem_time GROUP BY subsystem"),
	       "other 12 100.0", "subsystem_time: all 12 samples 'other', 100 percent");
	nt_store_free(st);

	/* given rules are kept */
	static const char rules[] = "work *!App.Work(*\nrec *!App.Rec(*\n";
	nt_subsystems *subs = NULL;
	nt_error err;
	nt_error_clear(&err);
	ok(nt_subsystems_parse(&subs, rules, strlen(rules), "test", &err) == 0, "rules parse");
	nt_profile_opts po;
	memset(&po, 0, sizeof po);
	po.subsystem_rules = subs;
	st = open_mem(0);
	ok(st && import(st, std_samples, NSTD, 0, 1, &po) == 0, "import with rules of one's own");
	if (st) {
		is_int(qi(st, "SELECT COUNT(*) FROM samples WHERE subsystem = 'work'"), 9,
		       "samples.subsystem 'work': the 9 samples with Work as leaf");
		is_int(qi(st, "SELECT COUNT(*) FROM sample_groups WHERE subsystem IS NOT NULL "
			      "AND subsystem NOT IN ('work', 'rec')"),
		       0, "only the rules' subsystem names");
		is_int(qi(st, "SELECT SUM(samples) FROM subsystem_time"), 12,
		       "subsystem_time: every sample once");
		is_int(qi(st, "SELECT COUNT(*) FROM (SELECT COALESCE(subsystem, 'other') AS s, "
			      "COUNT(*) AS n FROM samples GROUP BY 1) x JOIN (SELECT subsystem, "
			      "SUM(samples) AS n FROM subsystem_time GROUP BY 1) y "
			      "ON y.subsystem = x.s AND y.n = x.n"),
		       qi(st, "SELECT COUNT(DISTINCT COALESCE(subsystem, 'other')) FROM samples"),
		       "subsystem_time sums the samples view's subsystem column");
	}
	nt_store_free(st);
	nt_subsystems_free(subs);
}

static void test_store_pairs_events_and_names_threads(void)
{
	nt_store *st = open_mem(0);
	ok(st && import(st, std_samples, NSTD, 1, 1, NULL) == 0, "import with contention events");
	if (!st)
		return;
	is_int(qi(st, "SELECT duration_ns FROM events WHERE name = 'ContentionStart'"), 4000000,
	       "ContentionStart gets the time to its ContentionStop (4 ms)");
	is_str(q1(st, "SELECT duration_ns FROM events WHERE name = 'ContentionStop'"), "NULL",
	       "the stop itself has no duration");
	is_str(q1(st, "SELECT provider || '/' || event_id || ' ' || payload FROM events "
		      "WHERE name = 'ContentionStart'"),
	       "Microsoft-Windows-DotNETRuntime/81 {\"ContentionFlags\":0,\"ClrInstanceID\":9}",
	       "events: provider, id and the payload as JSON");
	is_int(qi(st, "SELECT json_extract(payload, '$.ClrInstanceID') FROM events WHERE name = "
		      "'ContentionStop'"),
	       9, "the payload works with SQLite's JSON functions");
	is_int(qi(st, "SELECT COUNT(*) FROM samples s JOIN threads t ON t.id = s.thread_id "
		      "WHERE t.tid = 100 AND s.category = 'lock'"),
	       3, "the 3 samples inside the contention are lock");
	is_int(qi(st, "SELECT COUNT(*) FROM samples s JOIN events e ON e.session_id = s.session_id "
		      "AND e.thread_id = s.thread_id AND e.name = 'ContentionStart' AND s.ts_ns "
		      ">= e.ts_ns AND s.ts_ns < e.ts_ns + e.duration_ns"),
	       3, "samples join events by time");
	is_str(q1(st, "SELECT name FROM threads WHERE tid = 100"), "worker",
	       "threads.name from the sampler's ThreadName event");
	is_str(q1(st, "SELECT thread_name FROM category_time WHERE category = 'lock'"), "worker",
	       "category_time shows the thread name");
	is_int(qi(st, "SELECT COUNT(*) FROM events WHERE name LIKE 'Method%'"), M_COUNT,
	       "rundown events are stored too");
	nt_store_free(st);

	st = open_mem(NT_STORE_NO_EVENTS);
	ok(st && import(st, std_samples, NSTD, 1, 1, NULL) == 0, "import with NT_STORE_NO_EVENTS");
	if (!st)
		return;
	is_int(qi(st, "SELECT COUNT(*) FROM events"), 0, "NT_STORE_NO_EVENTS: no event rows");
	is_str(q1(st, "SELECT name FROM threads WHERE tid = 100"), "worker",
	       "NT_STORE_NO_EVENTS: thread names still kept");
	is_int(qi(st, "SELECT COUNT(*) FROM samples"), 12, "NT_STORE_NO_EVENTS: every sample");
	nt_store_free(st);
}

static void test_store_category_filter_drops_rows(void)
{
	nt_profile_opts po;
	memset(&po, 0, sizeof po);
	po.category_mask = 1u << NT_CAT_LOCK;
	nt_store *st = open_mem(0);
	ok(st && import(st, std_samples, NSTD, 1, 1, &po) == 0, "import of lock samples only");
	if (!st)
		return;
	is_int(qi(st, "SELECT COUNT(*) FROM samples"), 3, "3 lock samples remain");
	is_int(qi(st, "SELECT COUNT(*) FROM sample_rows"), 3, "the other rows are gone");
	is_int(qi(st, "SELECT SUM(samples) FROM sample_groups"), 3, "groups hold 3 samples");
	is_int(qi(st, "SELECT samples FROM sessions"), 3, "sessions.samples: rows stored");
	is_int(qi(st, "SELECT trace_samples FROM sessions"), 12, "sessions.trace_samples: read");
	nt_store_stats ss = NT_INIT(nt_store_stats);
	nt_store_stats_get(st, &ss);
	is_u64(ss.samples, 3, "stats count the rows kept");
	nt_store_free(st);
}

static void test_store_compat_weights_per_row(void)
{
	nt_profile_opts po;
	memset(&po, 0, sizeof po);
	po.compat = NT_COMPAT_PYROSCOPE;
	nt_store *st = open_mem(0);
	ok(st && import(st, std_samples, NSTD, 0, 1, &po) == 0, "import with pyroscope weights");
	if (!st)
		return;
	/* pyroscope charges the interval ending at a sample: each thread's first sample gets
	 * nothing, so 12 samples on 2 threads are 10 charged intervals */
	is_int(qi(st, "SELECT COUNT(*) FROM samples"), 10, "10 charged intervals");
	is_int(qi(st, "SELECT COUNT(*) FROM sample_rows WHERE weight_ns IS NULL"), 0,
	       "each row carries its weight");
	is_int(qi(st, "SELECT abs(SUM(s.weight_ns) - (SELECT SUM(weight_ns) FROM sample_groups)) "
		      "< 1e-3 FROM samples s"),
	       1, "row weights add up to the groups' weights");
	is_str(q1(st, "SELECT compat FROM sessions"), "pyroscope", "sessions.compat");
	nt_store_free(st);

	/* TraceEvent charges the interval starting at a sample when the thread's next sample
	 * comes (and only once an External sample has initialised the thread): 5 samples give
	 * 4 intervals, each row at the time of the sample it is charged to */
	static const tsample te[] = {
		{100, 1, {M_MAIN + 1, M_SLOW + 1}}, {100, 2, {M_MAIN + 1, M_SLOW + 1, M_WORK + 1}},
		{100, 2, {M_MAIN + 1, M_SLOW + 1, M_WORK + 1}}, {100, 1, {M_MAIN + 1, M_SLOW + 1}},
		{100, 2, {M_MAIN + 1, M_FAST + 1}},
	};
	po.compat = NT_COMPAT_TRACEEVENT;
	st = open_mem(0);
	ok(st && import(st, te, sizeof te / sizeof te[0], 0, 1, &po) == 0,
	   "import with TraceEvent weights");
	if (!st)
		return;
	is_str(q1(st, "SELECT group_concat(ts_ns, ',') FROM (SELECT ts_ns FROM samples ORDER BY "
		      "id)"),
	       "1000000,2000000,3000000,4000000", "traceevent: 4 intervals, at their samples");
	is_int(qi(st, "SELECT SUM(weight_ns) FROM samples"), 4000000, "each 1 ms long");
	is_int(qi(st, "SELECT COUNT(*) FROM frames WHERE address IS NULL AND module_id IS NULL"), 2,
	       "traceevent: the pseudo-frames have no address and no module");
	is_str(q1(st, "SELECT group_concat(stack, ' | ') FROM (SELECT stack FROM sample_stacks "
		      "ORDER BY id)"),
	       "app!App.Main();app!App.Slow();UNMANAGED_CODE_TIME | "
	       "app!App.Main();app!App.Slow();app!App.Work();CPU_TIME | "
	       "app!App.Main();app!App.Slow();app!App.Work();CPU_TIME | "
	       "app!App.Main();app!App.Slow();UNMANAGED_CODE_TIME",
	       "traceevent: the pseudo-frame is the leaf");
	nt_store_free(st);
}

typedef struct stopper {
	int calls;
} stopper;

static int stop_at_second(void *ctx, const nt_sql_row *row)
{
	stopper *s = ctx;
	(void)row;
	return ++s->calls == 2 ? 77 : 0;
}

static void test_store_query_errors(void)
{
	nt_store *st = open_mem(0);
	if (!ok(st != NULL, "in-memory store"))
		return;
	nt_error err;
	nt_error_clear(&err);
	stopper sp = {0};
	int rc = nt_store_query(st, "SELEC 1", stop_at_second, &sp, &err);
	is_int(rc, NT_ESQL, "a syntax error is NT_ESQL");
	ok(strstr(err.msg, "SQL error: near \"SELEC\": syntax error") != NULL,
	   "with SQLite's message (%s)", err.msg);
	nt_error_clear(&err);
	rc = nt_store_query(st, "SELECT 1; SELECT * FROM no_such_table", stop_at_second, &sp, &err);
	ok(rc == 77, "the callback's value stops the query (got %d)", rc);
	nt_error_clear(&err);
	sp.calls = -100;
	rc = nt_store_query(st, "SELECT 1; SELECT * FROM no_such_table", stop_at_second, &sp, &err);
	is_int(rc, NT_ESQL, "the second statement fails");
	ok(strstr(err.msg, "no such table: no_such_table") != NULL, "message: %s", err.msg);
	is_int(sp.calls, -98, "the first statement ran first (columns and a row)");
	nt_error_clear(&err);
	rc = nt_store_query(st, "  -- nothing\n ; ", stop_at_second, &sp, &err);
	is_int(rc, 0, "whitespace and comments are no statement");
	nt_store_free(st);
}

/* A scratch directory for the file tests. */
static char scratch[512];

static void test_store_file_import_is_atomic(void)
{
	char path[600];
	snprintf(path, sizeof path, "%s/a.db", scratch);
	nt_store *st = NULL;
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_store_open(&st, path, NULL, &err), 0, "open an import into a new file");
	if (!st)
		return;
	const char *tmp = nt_store_temp_path(st);
	ok(tmp && file_exists(tmp), "the import writes a temporary file (%s)", tmp ? tmp : "-");
	char tmpcopy[700];
	snprintf(tmpcopy, sizeof tmpcopy, "%s", tmp ? tmp : "");
	ok(import(st, std_samples, NSTD, 1, 1, NULL) == 0, "import");
	is_int(file_exists(path), 0, "the database does not exist before the commit");
	is_int(nt_store_commit(st, &err), 0, "commit");
	ok(file_exists(path) && !file_exists(tmpcopy), "after it: the database, no temporary file");
	is_int(qi(st, "SELECT COUNT(*) FROM samples"), 12, "the committed store answers queries");
	nt_error_clear(&err);
	is_int(nt_store_query(st, "DELETE FROM sample_rows", NULL, NULL, &err), NT_ESQL,
	       "a committed file store is read-only");
	nt_store_free(st);
	is_int(dir_entries(scratch), 1, "nothing else in the directory");

	/* an import that is not committed leaves nothing, and an existing file untouched */
	char path2[600];
	snprintf(path2, sizeof path2, "%s/b.db", scratch);
	st = NULL;
	nt_error_clear(&err);
	is_int(nt_store_open(&st, path2, NULL, &err), 0, "open another import");
	ok(st && import(st, std_samples, NSTD, 0, 1, NULL) == 0, "import without commit");
	nt_store_free(st);
	is_int(file_exists(path2), 0, "freed without commit: no database");
	is_int(dir_entries(scratch), 1, "and no temporary file");

	size_t n1 = 0, n2 = 0;
	unsigned char *before = slurp(path, &n1);
	st = NULL;
	is_int(nt_store_open(&st, path, NULL, &err), 0, "open an append to a.db");
	ok(st && import(st, std_samples, NSTD, 0, 1, NULL) == 0, "import without commit");
	nt_store_free(st);
	unsigned char *after = slurp(path, &n2);
	ok(before && after && n1 == n2 && memcmp(before, after, n1) == 0,
	   "an append that is not committed leaves the database byte for byte");
	free(before);
	free(after);
	is_int(dir_entries(scratch), 1, "and no temporary file");
}

static void test_store_append_shares_stacks(void)
{
	char path[600];
	snprintf(path, sizeof path, "%s/a.db", scratch);
	nt_store *st = NULL;
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_store_open(&st, path, NULL, &err), 0, "open an append");
	if (!st)
		return;
	ok(import(st, std_samples, NSTD, 1, 2, NULL) == 0, "append two more sessions");
	is_int(nt_store_commit(st, &err), 0, "commit");
	is_str(q1(st, "SELECT group_concat(id || ':' || file, ',') FROM sessions"),
	       "1:synthetic-1,2:synthetic-1,3:synthetic-2", "sessions 2 and 3 follow session 1");
	is_int(qi(st, "SELECT COUNT(*) FROM samples"), 36, "36 samples");
	is_int(qi(st, "SELECT COUNT(*) FROM functions"), 5, "functions are shared");
	is_int(qi(st, "SELECT COUNT(*) FROM frames"), 5, "frames are shared (same IPs and names)");
	is_int(qi(st, "SELECT COUNT(*) FROM callsites"), 8, "callsites are shared");
	is_int(qi(st, "SELECT COUNT(*) FROM modules"), 1, "one module");
	is_int(qi(st, "SELECT COUNT(DISTINCT session_id || ':' || tid) FROM threads"), 12,
	       "threads are per session (4 each: 100, 101, 7 and 8)");
	is_int(qi(st, "SELECT COUNT(*) FROM samples s JOIN threads t ON t.id = s.thread_id "
		      "WHERE t.session_id <> s.session_id"),
	       0, "each sample's thread belongs to its session");
	is_int(qi(st, "SELECT COUNT(*) FROM samples WHERE session_id = 2 AND category = 'lock'"), 3,
	       "the appended session's lock samples");
	is_int(qi(st, "SELECT COUNT(*) FROM events WHERE session_id = 3 AND name = "
		      "'ContentionStart' AND duration_ns = 4000000"),
	       1, "events of session 3, paired");
	is_int(qi(st, "SELECT COUNT(*) FROM top_self"), 3 * 3, "top_self: per session");
	nt_store_free(st);
}

static void test_store_refuses_foreign_files(void)
{
	char path[600], text[600];
	snprintf(path, sizeof path, "%s/v99.db", scratch);
	snprintf(text, sizeof text, "%s/notes.txt", scratch);
	nt_store *st = NULL;
	nt_error err;
	nt_error_clear(&err);
	/* a database of a future schema: written by this store, then relabelled */
	if (nt_store_open(&st, path, NULL, &err) ||
	    nt_store_query(st, "UPDATE schema_version SET version = 99", NULL, NULL, &err) ||
	    nt_store_commit(st, &err))
		printf("# %s\n", err.msg);
	nt_store_free(st);
	st = NULL;
	size_t n1 = 0, n2 = 0;
	unsigned char *before = slurp(path, &n1);
	nt_error_clear(&err);
	is_int(nt_store_open(&st, path, NULL, &err), NT_EUNSUPPORTED,
	       "appending to schema_version 99: NT_EUNSUPPORTED");
	ok(strstr(err.msg, "unknown schema_version 99") != NULL, "message: %s", err.msg);
	ok(st == NULL, "no store");
	unsigned char *after = slurp(path, &n2);
	ok(before && after && n1 == n2 && memcmp(before, after, n1) == 0, "the file is untouched");
	free(before);
	free(after);

	FILE *fp = fopen(text, "w");
	if (fp) {
		fputs("not a database\n", fp);
		fclose(fp);
	}
	nt_error_clear(&err);
	is_int(nt_store_open(&st, text, NULL, &err), NT_EFORMAT, "a text file: NT_EFORMAT");
	ok(strstr(err.msg, "is not an SQLite database") != NULL, "message: %s", err.msg);
	before = slurp(text, &n1);
	ok(before && n1 == 15, "the text file is untouched");
	free(before);
	is_int(dir_entries(scratch), 3, "no temporary file left (a.db, v99.db, notes.txt)");

	/* an empty file (as touch makes it) is a new database */
	char empty[600];
	snprintf(empty, sizeof empty, "%s/empty.db", scratch);
	fp = fopen(empty, "w");
	if (fp)
		fclose(fp);
	nt_error_clear(&err);
	is_int(nt_store_open(&st, empty, NULL, &err), 0, "an empty file is a new database");
	ok(st && import(st, std_samples, NSTD, 0, 1, NULL) == 0 && nt_store_commit(st, &err) == 0,
	   "import and commit");
	is_int(st ? qi(st, "SELECT COUNT(*) FROM samples") : -1, 12, "12 samples");
	nt_store_free(st);

	nt_store_opts ro = {sizeof ro, NT_STORE_READONLY, NULL, NULL};
	st = NULL;
	nt_error_clear(&err);
	is_int(nt_store_open(&st, path, &ro, &err), 0, "any database opens read-only");
	is_int(st ? qi(st, "SELECT version FROM schema_version") : -1, 99, "and can be queried");
	nt_store_free(st);
	nt_error_clear(&err);
	st = NULL;
	char missing[600];
	snprintf(missing, sizeof missing, "%s/missing.db", scratch);
	ok(nt_store_open(&st, missing, &ro, &err) < 0 && st == NULL,
	   "a missing database cannot be opened read-only (%s)", err.msg);
	is_int(file_exists(missing), 0, "and is not created");
	nt_error_clear(&err);
	ok(nt_store_open(&st, "", NULL, &err) == NT_EINVAL, "an empty path: NT_EINVAL");
	nt_store_free(NULL);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(scratch, sizeof scratch, "%s/nt-store.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch)) {
		printf("Bail out! cannot create a scratch directory\n");
		return 1;
	}
	test_store_probe_recognises_the_sqlite_header();
	test_store_writes_samples_and_stacks();
	test_store_classifies_subsystems();
	test_store_pairs_events_and_names_threads();
	test_store_category_filter_drops_rows();
	test_store_compat_weights_per_row();
	test_store_query_errors();
	test_store_file_import_is_atomic();
	test_store_append_shares_stacks();
	test_store_refuses_foreign_files();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		printf("# cannot remove %s\n", scratch);
	return tap_done();
}
