/* SPDX-License-Identifier: MIT */
/* test-api.c - the API's contracts (nettrace.h, "Conventions") through public functions
 * only: a reused or uninitialised nt_error describes the call that just failed and is
 * clear after a success; every options struct is checked the same way (a short sz, or a
 * larger struct with non-zero bytes the library does not know, is NT_EINVAL; a larger
 * struct with a zero tail and NULL are the defaults); nt_version() is configure's version. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace.h"
#include "tap.h"
#include "testutil.h"

/* A byte that is not a valid start of a nettrace stream, and garbage error contents. */
static const unsigned char junk[64] = {'N', 'o', 't', 'T', 'r', 'a', 'c', 'e'};

static void poison(nt_error *e)
{
	memset(e, 0xA5, sizeof *e);
}

/* A larger options struct as a caller built against a newer header would pass. */
struct bigger_reader_opts {
	nt_reader_opts o;
	unsigned char future[24];
};
struct bigger_profile_opts {
	nt_profile_opts o;
	uint64_t future[2];
};

/* read_fn of test 9: counts what it sees. */
typedef struct seen {
	uint64_t events, samples, last_offset;
	int backwards; /* an offset below the one before: not file order */
} seen;

static int count_read(void *ctx, uint32_t session, const nt_trace_header *h, const nt_event *ev,
		      nt_error *err)
{
	(void)session;
	(void)h;
	(void)err;
	seen *sn = ctx;
	sn->backwards |= sn->events && ev->offset < sn->last_offset;
	sn->last_offset = ev->offset;
	sn->events++;
	sn->samples += ev->meta && strcmp(ev->meta->provider, "Microsoft-DotNETCore-SampleProfiler") == 0 &&
		       ev->meta->event_id == 0;
	return 0;
}

/* read_fn of test 10: every field of every event, in order, into one FNV-1a hash (the
 * metadata by what it says, not by its address, which is the reader's). */
typedef struct digest {
	uint64_t h, events;
} digest;

static void mix(digest *d, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ b[i]) * 0x100000001b3ull;
}

static void mix_u64(digest *d, uint64_t v)
{
	mix(d, &v, sizeof v);
}

static int digest_read(void *ctx, uint32_t session, const nt_trace_header *h, const nt_event *ev,
		       nt_error *err)
{
	(void)h;
	(void)err;
	digest *d = ctx;
	d->events++;
	mix_u64(d, session);
	if (ev->meta) {
		mix(d, ev->meta->provider, strlen(ev->meta->provider));
		mix_u64(d, ev->meta->event_id);
		mix_u64(d, ev->meta->version);
	}
	uint64_t f[] = {ev->offset, ev->seq, ev->thread_id, ev->capture_thread_id, ev->processor,
			ev->timestamp, (uint64_t)ev->time_ns, ev->stack_id, ev->stack_depth,
			ev->payload_len, ev->sorted, ev->stack_key, ev->process_id,
			ev->process_index};
	mix(d, f, sizeof f);
	mix(d, ev->activity_id, 16);
	mix(d, ev->related_activity_id, 16);
	if (ev->stack_depth)
		mix(d, ev->stack, ev->stack_depth * sizeof ev->stack[0]);
	if (ev->payload_len)
		mix(d, ev->payload, ev->payload_len);
	return 0;
}

/* Test 10: what read_fn sees of path with opts.jobs = jobs, and the result. */
static int digest_trace(const char *path, unsigned jobs, digest *d)
{
	nt_error err;
	d->h = 0xcbf29ce484222325ull;
	d->events = 0;
	nt_reader *r = NULL;
	nt_profile *p = NULL;
	nt_profile_opts po = NT_INIT(nt_profile_opts);
	po.read_fn = digest_read;
	po.hook_ctx = d;
	po.jobs = jobs;
	int rc = nt_reader_open_file(&r, path, NULL, &err);
	if (rc == 0)
		rc = nt_profile_new(&p, &po, &err);
	if (rc == 0)
		rc = nt_profile_add_trace(p, r, path, &err);
	nt_profile_free(p);
	nt_reader_free(r);
	return rc;
}

int main(void)
{
	nt_error err;
	nt_reader *r = NULL;

	/* 1. reuse: the second failure is the one reported, not the first */
	nt_error_clear(&err);
	int rc = nt_reader_open_file(&r, "/nonexistent/dir/none.nettrace", NULL, &err);
	is_int(rc, NT_EIO, "missing file: NT_EIO");
	ok(strstr(err.msg, "none.nettrace") != NULL, "missing file: message names it (%s)", err.msg);
	rc = nt_reader_open_mem(&r, junk, sizeof junk, NULL, &err);
	ok(rc < 0 && rc != NT_EIO, "garbage after a failure: its own code (%d)", rc);
	is_int(err.code, rc, "reused nt_error: code of the new failure");
	ok(strstr(err.msg, "none.nettrace") == NULL && err.msg[0],
	   "reused nt_error: message of the new failure (%s)", err.msg);
	ok(err.offset != NT_NO_OFFSET, "reused nt_error: the new failure's offset (%llu)",
	   (unsigned long long)err.offset);

	/* 2. an uninitialised nt_error gets the failure's code and message */
	poison(&err);
	rc = nt_reader_open_mem(&r, junk, sizeof junk, NULL, &err);
	ok(rc < 0, "garbage: fails");
	is_int(err.code, rc, "uninitialised nt_error: code set");
	ok(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof err.msg) != NULL &&
	   (unsigned char)err.msg[0] != 0xA5, "uninitialised nt_error: message set (%.60s)", err.msg);

	/* 3. a success clears a reused nt_error, in the analysis library too */
	poison(&err);
	nt_select *sel = NULL;
	rc = nt_select_new(&sel, &err);
	is_int(rc, 0, "nt_select_new succeeds");
	is_int(err.code, 0, "success: code cleared");
	is_str(err.msg, "", "success: message cleared");
	rc = nt_select_add(sel, NT_SELECT_FOCUS, "([unclosed", &err);
	is_int(rc, NT_EINVAL, "bad regex: NT_EINVAL");
	ok(strstr(err.msg, "[unclosed") != NULL, "bad regex: message names it (%s)", err.msg);
	rc = nt_select_add(sel, NT_SELECT_FOCUS, "Main", &err);
	ok(rc == 0 && err.code == 0 && err.msg[0] == '\0', "good pattern after a bad one: clear");
	nt_select_free(sel);

	/* 4. options: NT_INIT, short sz, unknown tails */
	nt_reader_opts ro = NT_INIT(nt_reader_opts);
	is_u64(ro.sz, sizeof(nt_reader_opts), "NT_INIT sets sz");
	ok(ro.flags == 0 && ro.name == NULL, "NT_INIT zeroes the rest");
	ro.sz = sizeof(size_t);
	poison(&err);
	rc = nt_reader_open_mem(&r, junk, sizeof junk, &ro, &err);
	is_int(rc, NT_EINVAL, "short sz: NT_EINVAL, before the input is read");
	ok(strstr(err.msg, "reader options") && strstr(err.msg, "sz is 8"),
	   "short sz: message says so (%s)", err.msg);
	ok(r == NULL, "short sz: no reader");
	ro.sz = 0;
	rc = nt_reader_open_mem(&r, junk, sizeof junk, &ro, &err);
	is_int(rc, NT_EINVAL, "sz 0 (not set): NT_EINVAL");

	struct bigger_reader_opts big;
	memset(&big, 0, sizeof big);
	big.o.sz = sizeof big;
	big.o.name = "named-by-opts";
	rc = nt_reader_open_mem(&r, junk, sizeof junk, &big.o, &err);
	ok(rc < 0 && rc != NT_EINVAL, "larger struct, zero tail: accepted (then the input fails)");
	big.future[5] = 1;
	rc = nt_reader_open_mem(&r, junk, sizeof junk, &big.o, &err);
	is_int(rc, NT_EINVAL, "larger struct, non-zero tail: NT_EINVAL");
	char want[64];
	snprintf(want, sizeof want, "byte %zu is set", sizeof(nt_reader_opts) + 5);
	ok(strstr(err.msg, want) != NULL, "non-zero tail: message names the byte (%s)", err.msg);

	nt_profile *p = NULL;
	struct bigger_profile_opts bp;
	memset(&bp, 0, sizeof bp);
	bp.o.sz = sizeof bp;
	rc = nt_profile_new(&p, &bp.o, &err);
	ok(rc == 0 && p != NULL, "profile options, larger struct, zero tail: accepted");
	nt_profile_free(p);
	p = NULL;
	bp.future[1] = 42;
	rc = nt_profile_new(&p, &bp.o, &err);
	ok(rc == NT_EINVAL && p == NULL && strstr(err.msg, "profile options"),
	   "profile options, non-zero tail: NT_EINVAL (%s)", err.msg);
	nt_profile_opts po = NT_INIT(nt_profile_opts);
	po.sz = offsetof(nt_profile_opts, sequence);
	rc = nt_profile_new(&p, &po, &err);
	ok(rc == NT_EINVAL && p == NULL, "profile options, short sz: NT_EINVAL (%s)", err.msg);
	rc = nt_profile_new(&p, NULL, &err);
	ok(rc == 0 && p != NULL && err.code == 0, "profile options NULL: defaults");
	nt_profile_free(p);

	nt_membuf mb = {0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_stacks *st = NULL;
	static const char folded[] = "main;work 10\n";
	rc = nt_stacks_from_folded(&st, folded, sizeof folded - 1, NT_UNIT_SAMPLES, "t", &err);
	is_int(rc, 0, "folded stacks");
	nt_pprof_opts pp = NT_INIT(nt_pprof_opts);
	pp.sz = 1;
	rc = nt_pprof_write(st, &pp, &sink, &err);
	ok(rc == NT_EINVAL && strstr(err.msg, "pprof options"), "pprof options, short sz (%s)",
	   err.msg);
	pp.sz = sizeof pp;
	rc = nt_pprof_write(st, &pp, &sink, &err);
	ok(rc == 0 && mb.len > 0, "pprof options, NT_INIT: written");
	nt_stacks_free(st);
	nt_membuf_free(&mb);

	/* 5. output structs the caller allocates carry sz too */
	nt_store *store = NULL;
	rc = nt_store_open(&store, ":memory:", NULL, &err);
	is_int(rc, 0, "in-memory store");
	nt_store_stats ss;
	memset(&ss, 0x5A, sizeof ss);
	ss.sz = 0;
	is_int(store ? nt_store_stats_get(store, &ss) : -1, NT_EINVAL, "store stats, sz 0: NT_EINVAL");
	ok(ss.sessions == 0x5A5A5A5A5A5A5A5Aull, "store stats, sz 0: nothing written");
	nt_store_stats ss2 = NT_INIT(nt_store_stats);
	ss2.sessions = 77;
	ok(store && nt_store_stats_get(store, &ss2) == 0 && ss2.sessions == 0 &&
	   ss2.sz == sizeof ss2, "store stats, NT_INIT: filled, sz kept");
	nt_store_free(store);

	/* 6. zero units are each use's default: ns for folded output */
	st = NULL;
	rc = nt_stacks_from_folded(&st, folded, sizeof folded - 1, NT_UNIT_DEFAULT, "t", &err);
	is_int(rc, 0, "folded input, unit 0 (samples)");
	nt_stacks_free(st);

	/* 7. a constructor that fails leaves *out NULL, whatever it held; every nt_X_free()
	 * accepts NULL (the header's contract for each) */
	{
		static const char bad_rules[] = "lok Foo*\n";
		void *const junkp = (void *)&poison;
		nt_rules *ru = junkp;
		ok(nt_rules_parse(&ru, bad_rules, sizeof bad_rules - 1, "t", &err) == NT_EFORMAT &&
		   ru == NULL, "nt_rules_parse fails: *out NULL");
		ru = junkp;
		ok(nt_rules_load(&ru, "/nonexistent/x.rules", &err) == NT_EIO && ru == NULL,
		   "nt_rules_load fails: *out NULL");
		nt_subsystems *su = junkp;
		static const char bad_sub[] = "!bad Foo*\n";
		ok(nt_subsystems_parse(&su, bad_sub, sizeof bad_sub - 1, "t", &err) < 0 &&
		   su == NULL, "nt_subsystems_parse fails: *out NULL");
		nt_reader *rd = junkp;
		ok(nt_reader_open_mem(&rd, junk, sizeof junk, NULL, &err) < 0 && rd == NULL,
		   "nt_reader_open_mem fails: *out NULL");
		nt_writer *wr = junkp;
		ok(nt_writer_open(&wr, NULL, NULL, NULL, &err) == NT_EINVAL && wr == NULL,
		   "nt_writer_open fails: *out NULL");
		nt_rate *ra = junkp;
		ok(nt_rate_new(&ra, 0, 0, 0, &err) == NT_EINVAL && ra == NULL,
		   "nt_rate_new fails: *out NULL");
		nt_profile_opts bad = NT_INIT(nt_profile_opts);
		bad.sz = 1;
		nt_profile *pr = junkp;
		ok(nt_profile_new(&pr, &bad, &err) == NT_EINVAL && pr == NULL,
		   "nt_profile_new fails: *out NULL");
		nt_native_opts nbad = NT_INIT(nt_native_opts);
		nbad.sz = 1;
		nt_native *na = junkp;
		ok(nt_native_new(&na, &nbad, &err) == NT_EINVAL && na == NULL,
		   "nt_native_new fails: *out NULL");
		nt_live_opts lbad = NT_INIT(nt_live_opts);
		lbad.window_s = 100000;
		nt_live *li = junkp;
		ok(nt_live_new(&li, &lbad, &err) == NT_EINVAL && li == NULL,
		   "nt_live_new fails: *out NULL");
		nt_stacks *sk = junkp;
		ok(nt_stacks_from_folded(&sk, folded, sizeof folded - 1, 99, "t", &err) == NT_EINVAL &&
		   sk == NULL, "nt_stacks_from_folded fails: *out NULL");
		nt_store *so = junkp;
		ok(nt_store_open(&so, "/nonexistent/dir/x.db", NULL, &err) < 0 && so == NULL,
		   "nt_store_open fails: *out NULL");
		nt_profile *empty = NULL;
		ok(nt_profile_new(&empty, NULL, &err) == 0, "empty profile");
		nt_butterfly *bf = junkp;
		ok(nt_butterfly_new(&bf, empty, "NoSuchFunction", NULL, &err) < 0 && bf == NULL,
		   "nt_butterfly_new fails: *out NULL");
		nt_tree_opts tbad = NT_INIT(nt_tree_opts);
		tbad.sz = 1;
		nt_tree *tr = junkp;
		ok(nt_tree_new(&tr, empty, &tbad, &err) == NT_EINVAL && tr == NULL,
		   "nt_tree_new fails: *out NULL");
		nt_profile_free(empty);
		uint32_t *pids = junkp;
		size_t npids = 7;
		nt_error_clear(&err);
		rc = nt_diag_list(&pids, &npids, &err);
		ok(rc == 0 ? (npids == 0) == (pids == NULL) : pids == NULL,
		   "nt_diag_list: *pids NULL exactly when there are none");
		free(pids);

		nt_reader_free(NULL);
		nt_writer_free(NULL);
		nt_rate_free(NULL);
		nt_pauses_free(NULL);
		nt_rules_free(NULL);
		nt_symtab_free(NULL);
		nt_profile_free(NULL);
		nt_select_free(NULL);
		nt_tree_free(NULL);
		nt_butterfly_free(NULL);
		nt_stacks_free(NULL);
		nt_store_free(NULL);
		nt_native_free(NULL);
		nt_subsystems_free(NULL);
		nt_diag_providers_free(NULL);
		nt_live_free(NULL);
		nt_membuf_free(NULL);
		ok(1, "every nt_X_free() accepts NULL");
	}

	/* 8. a symbol table sealed again after more events: names returned before stay valid,
	 * and the same frame is the same string (one copy per name, however often it is
	 * sealed: nettrace-top reseals on every redraw after new methods) */
	{
		nt_reader *tr = NULL;
		nt_symtab *sy = NULL;
		const char *path = tu_data("traces/perfview/only_managed_samples.nettrace");
		ok(nt_reader_open_file(&tr, path, NULL, &err) == 0 &&
		   nt_symtab_new(&sy, 0, &err) == 0, "a trace with rundown, a symbol table");
		const nt_event *ev;
		enum { NIP = 64 };
		uint64_t ips[NIP];
		size_t nip = 0;
		while (tr && sy && nt_reader_next(tr, &ev, &err) == 1) {
			nt_symtab_add_event(sy, ev, nt_reader_header(tr)->pointer_size);
			for (uint32_t k = 0; k < ev->stack_depth && nip < NIP; k++)
				ips[nip++] = ev->stack[k];
		}
		ok(sy && nt_symtab_seal(sy, &err) == 0 && nt_symtab_methods(sy) > 0,
		   "sealed: %zu methods", sy ? nt_symtab_methods(sy) : 0);
		const char *first[NIP];
		size_t named = 0;
		for (size_t k = 0; k < nip; k++) {
			first[k] = nt_symtab_name(sy, ips[k]);
			named += strcmp(first[k], "?!?") != 0;
		}
		ok(named > 0, "%zu of %zu sampled addresses named", named, nip);
		/* the same events again (every method is then defined twice), sealed twice */
		nt_reader_free(tr);
		tr = NULL;
		ok(nt_reader_open_file(&tr, path, NULL, &err) == 0, "the trace again");
		while (tr && nt_reader_next(tr, &ev, &err) == 1)
			nt_symtab_add_event(sy, ev, nt_reader_header(tr)->pointer_size);
		ok(nt_symtab_seal(sy, &err) == 0 && nt_symtab_seal(sy, &err) == 0, "sealed again");
		size_t same_ptr = 0, same_text = 0;
		for (size_t k = 0; k < nip; k++) {
			const char *again = nt_symtab_name(sy, ips[k]);
			same_text += strcmp(again, first[k]) == 0;
			same_ptr += again == first[k];
		}
		is_u64(same_text, nip, "every address has the name it had (names kept valid)");
		is_u64(same_ptr, nip, "and the very same string: one copy per name");
		nt_reader_free(tr);
		nt_symtab_free(sy);
	}

	/* 9. nt_profile_opts.read_fn (appended): a struct of the size before it is accepted;
	 * it sees every event the reader delivers, samples included, in the reader's order */
	{
		nt_profile_opts old = NT_INIT(nt_profile_opts);
		old.sz = offsetof(nt_profile_opts, read_fn);
		nt_profile *op = NULL;
		ok(nt_profile_new(&op, &old, &err) == 0 && op, "profile options of the size before "
		   "read_fn: accepted");
		nt_profile_free(op);
		const char *path = tu_data("traces/perfview/only_managed_samples.nettrace");
		seen sn = {0};
		nt_reader_opts fo = NT_INIT(nt_reader_opts);
		fo.flags = NT_READ_FILE_ORDER;
		nt_reader *fr = NULL;
		nt_profile *rp = NULL;
		nt_profile_opts rpo = NT_INIT(nt_profile_opts);
		rpo.read_fn = count_read;
		rpo.hook_ctx = &sn;
		ok(nt_reader_open_file(&fr, path, &fo, &err) == 0 && nt_profile_new(&rp, &rpo, &err) == 0 &&
		   nt_profile_add_trace(rp, fr, path, &err) == 0, "profile with read_fn reads the trace");
		const nt_reader_stats *rs = fr ? nt_reader_stats_get(fr) : NULL;
		const nt_session_info *si = rp ? nt_profile_session(rp, 0) : NULL;
		ok(rs && rs->events > 0 && sn.events == rs->events,
		   "read_fn saw every event the reader counted (%llu of %llu)",
		   (unsigned long long)sn.events, rs ? (unsigned long long)rs->events : 0ull);
		ok(si && si->samples > 0 && sn.samples == si->samples,
		   "read_fn saw every sample the profile read (%llu of %llu)",
		   (unsigned long long)sn.samples, si ? (unsigned long long)si->samples : 0ull);
		ok(!sn.backwards, "in the reader's order (file order: offsets grow)");
		nt_profile_free(rp);
		nt_reader_free(fr);
	}

	/* 10. opts.jobs = 2 (a decoding thread, pipeline.c, whose batches keep only what
	 * changes from event to event) hands read_fn every field of every event as the
	 * single-thread path does, and the read ends the same, on every bundled trace (V4,
	 * V5, V6, one cut short) */
	{
		static const char *const traces[] = {
			"traces/sentry-dotnet/sample.nettrace",
			"traces/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
			"traces/dotnet10/dotnet-trace-exceptions.nettrace",
			"traces/dotnet10/file-session-lock.nettrace",
			"traces/dotnet10/collect-linux-cpu.nettrace",
			"traces/perfview/mixed_managed_external_samples.nettrace",
			"traces/perfview/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace",
			"traces/perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace",
			"traces/perfview/only_managed_samples.nettrace",
			"traces/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
			"traces/dotnet-diagnostics/trace-2019-06-28-truncated.nettrace",
		};
		for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
			const char *path = tu_data(traces[i]);
			digest one, two;
			int rc1 = digest_trace(path, 1, &one);
			int rc2 = digest_trace(path, 2, &two);
			ok(rc1 == rc2 && one.events > 0 && one.events == two.events && one.h == two.h,
			   "--jobs 2 gives read_fn the events of --jobs 1: %s (%llu events, rc %d)",
			   traces[i], (unsigned long long)one.events, rc1);
		}
	}

	/* 11. the version is configure's */
	is_str(nt_version(), PACKAGE_VERSION, "nt_version() is configure.ac's version");
	return tap_done();
}
