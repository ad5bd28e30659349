/* SPDX-License-Identifier: MIT */
/* test-chunks.c - reading a trace in chunks on two threads (profile-chunks.c, opts.jobs 2)
 * gives the single-thread read's profile, group for group in the same order: the samples
 * and their categories, the GC pauses charged, the inferred rate, lost events, the counts.
 * The traces are written here, with what the chunks must carry across their boundaries:
 * GC suspensions, contentions and waits that span sequence points, threads that first
 * appear late, sequence-number gaps (lost events), thread names, rundown; chunk sizes from
 * 4 KiB up (NETTRACE_CHUNK_BYTES), from memory and from a file. Then the cases the second
 * thread gives back (a trace with CPU clocks: chunks read again, same output), a cut file
 * (same result and warning), an input that cannot be read twice (a pipe), and the
 * reader's chunk API (boundaries agree, skips keep the metadata). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "nettrace.h"
#include "pbuf.h"
#include "tap.h"

#define SYNC 1000000000ull
#define NTHREADS 9
#define NSTACKS 12

/* ------------------------------------------------------------------ the traces */

typedef struct wopts {
	int clocked;       /* ThreadSample v1 with CpuTimeNs and State (our sampler's) */
	uint32_t rounds;
	uint32_t sp_rounds; /* a sequence point every so many rounds */
} wopts;

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((rng_state >> 33) % n);
}

typedef struct wctx {
	nt_writer *w;
	nt_error err;
	int bad;
} wctx;

static void put(wctx *c, uint32_t meta, uint64_t tid, uint64_t cap, uint64_t ts,
		const uint64_t *stack, uint32_t depth, const pbuf *p, uint32_t seq)
{
	if (c->bad)
		return;
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = meta;
	e.seq = seq;
	e.thread_id = tid;
	e.capture_thread_id = cap;
	e.timestamp = ts;
	e.stack = stack;
	e.stack_depth = depth;
	e.payload = p ? p->b : NULL;
	e.payload_len = p ? (uint32_t)p->n : 0;
	if (nt_writer_write_event(c->w, &e, &c->err))
		c->bad = 1;
}

/* A sampler (capture thread 7) that visits NTHREADS threads every ~1 ms (threads 5..8
 * appear only later), GC suspensions by thread 300 (some of them for a GC, reason 1),
 * contentions and waits on the sampled threads, lost events (gaps in the sampler's
 * sequence numbers), names for a few threads, and a rundown of the methods at the end. */
static int write_trace(nt_membuf *mb, const wopts *o)
{
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.sync_qpc = SYNC;
	h.qpc_frequency = 1000000000;
	h.pointer_size = 8;
	h.expected_sampling_ns = 1000000;
	h.process_id = 4242;
	nt_writer_opts wo = {sizeof wo, 5, 4096, 0};
	nt_sink sink = nt_sink_membuf(mb);
	wctx c;
	memset(&c, 0, sizeof c);
	nt_error_clear(&c.err);
	static const nt_field sample_fields[] = {
		{"Type", NT_TYPE_U32, 0, 0, NULL, 0},
		{"CpuTimeNs", NT_TYPE_U64, 0, 0, NULL, 0},
		{"State", NT_TYPE_U32, 0, 0, NULL, 0},
	};
	static const nt_field name_fields[] = {
		{"ThreadId", NT_TYPE_U64, 0, 0, NULL, 0},
		{"Name", NT_TYPE_STRING, 0, 0, NULL, 0},
	};
	nt_metadata_desc ds = {NT_PROVIDER_SAMPLER, 0, "ThreadSample", 0, o->clocked ? 1u : 0u,
			       5, 0, o->clocked ? sample_fields : NULL, o->clocked ? 3u : 0u};
	nt_metadata_desc dsus = {NT_PROVIDER_RUNTIME, 9, "GCSuspendEEBegin", 1, 1, 4, 0, NULL, 0};
	nt_metadata_desc dres = {NT_PROVIDER_RUNTIME, 3, "GCRestartEEEnd", 1, 1, 4, 0, NULL, 0};
	nt_metadata_desc dcs = {NT_PROVIDER_RUNTIME, 81, "ContentionStart", 0x4000, 1, 4, 0, NULL, 0};
	nt_metadata_desc dce = {NT_PROVIDER_RUNTIME, 91, "ContentionStop", 0x4000, 1, 4, 0, NULL, 0};
	nt_metadata_desc dws = {NT_PROVIDER_RUNTIME, 301, "WaitHandleWaitStart", 0, 0, 4, 0, NULL, 0};
	nt_metadata_desc dwe = {NT_PROVIDER_RUNTIME, 302, "WaitHandleWaitStop", 0, 0, 4, 0, NULL, 0};
	nt_metadata_desc dnm = {NT_PROVIDER_NTSAMPLER, NT_NTS_THREAD_NAME, "ThreadName", 0, 0, 4, 0,
				name_fields, 2};
	nt_metadata_desc dm = {NT_PROVIDER_RUNDOWN, 144, "MethodDCEndVerbose", 0x30, 1, 4, 0, NULL, 0};
	uint32_t sid, sus, res, cs, ce, ws, we, nm, mid;
	if (nt_writer_open(&c.w, &sink, &h, &wo, &c.err) ||
	    nt_writer_add_metadata(c.w, &ds, &sid, &c.err) ||
	    nt_writer_add_metadata(c.w, &dsus, &sus, &c.err) ||
	    nt_writer_add_metadata(c.w, &dres, &res, &c.err) ||
	    nt_writer_add_metadata(c.w, &dcs, &cs, &c.err) ||
	    nt_writer_add_metadata(c.w, &dce, &ce, &c.err) ||
	    nt_writer_add_metadata(c.w, &dws, &ws, &c.err) ||
	    nt_writer_add_metadata(c.w, &dwe, &we, &c.err) ||
	    nt_writer_add_metadata(c.w, &dnm, &nm, &c.err) ||
	    nt_writer_add_metadata(c.w, &dm, &mid, &c.err)) {
		printf("# writer: %s\n", c.err.msg);
		nt_writer_free(c.w);
		return -1;
	}
	rng_state = 12345;
	uint64_t stacks[NSTACKS][8];
	for (int s = 0; s < NSTACKS; s++)
		for (int k = 0; k < 8; k++)
			stacks[s][k] = 0x10000ull + 0x100ull * (uint64_t)((s * 7 + k * 3) % 20) + 0x10;
	int cur[NTHREADS] = {0};
	int in_lock[NTHREADS] = {0}, in_wait[NTHREADS] = {0};
	uint64_t cpu[NTHREADS] = {0};
	uint32_t seq = 0;
	int gc_open = 0;
	uint32_t gc_reason = 0;
	uint64_t t = SYNC + 5000000;
	for (uint32_t r = 0; r < o->rounds && !c.bad; r++) {
		t += 900000 + rnd(200000);
		/* a GC suspension of 1.5 ms now and then, some spanning many rounds */
		if (!gc_open && rnd(40) == 0) {
			pbuf p = {{0}, 0};
			gc_reason = rnd(3) ? 1 : 0; /* for a GC, or the sampler's own */
			pb_u32(&p, gc_reason);
			pb_u32(&p, r);
			pb_u16(&p, 0);
			put(&c, sus, 300, 300, t - 300000, NULL, 0, &p, 0);
			gc_open = 1 + (int)rnd(3);
		} else if (gc_open && --gc_open == 0) {
			pbuf p = {{0}, 0};
			pb_u16(&p, 0);
			put(&c, res, 300, 300, t - 200000, NULL, 0, &p, 0);
		}
		if (gc_open && gc_reason == 1)
			continue; /* the runtime's threads, its sampler among them, are stopped */
		for (int i = 0; i < NTHREADS; i++) {
			uint64_t tid = 100 + (uint64_t)i;
			if (i >= 5 && r < o->rounds / 3 * (uint32_t)(i - 4) / 2)
				continue; /* threads that start later */
			/* brackets, written by the thread itself, some across many rounds */
			if (rnd(30) == 0) {
				if (in_lock[i])
					put(&c, ce, tid, tid, t - 50000, NULL, 0, NULL, 0);
				else
					put(&c, cs, tid, tid, t - 50000, NULL, 0, NULL, 0);
				in_lock[i] = !in_lock[i];
			}
			if (rnd(70) == 0) {
				put(&c, in_wait[i] ? we : ws, tid, tid, t - 40000, NULL, 0, NULL, 0);
				in_wait[i] = !in_wait[i];
			}
			if (rnd(4) == 0)
				cur[i] = (int)rnd(NSTACKS);
			uint64_t ip[8];
			uint32_t depth = 3 + (uint32_t)((i + cur[i]) % 6);
			memcpy(ip, stacks[cur[i]], sizeof ip);
			pbuf p = {{0}, 0};
			pb_u32(&p, rnd(3) ? 2 : 1);
			if (o->clocked) {
				cpu[i] += rnd(2) ? 1000000 : 200000;
				pb_u64(&p, cpu[i]);
				pb_u32(&p, 1 + rnd(2));
			}
			/* lost events: the sampler's numbers jump now and then */
			seq += rnd(500) == 0 ? 3 + rnd(5) : 1;
			put(&c, sid, tid, 7, t + 2000 * (uint64_t)i, ip, depth, &p, seq);
		}
		/* a second sampler (capture thread 17) now and then, whose samples of thread
		 * 100 land between the first sampler's in time but not in the file */
		if (r % 50 == 7 && !(gc_open && gc_reason == 1)) {
			uint64_t ip[8];
			memcpy(ip, stacks[r % NSTACKS], sizeof ip);
			pbuf p = {{0}, 0};
			pb_u32(&p, 2);
			if (o->clocked) {
				pb_u64(&p, cpu[0]);
				pb_u32(&p, 1);
			}
			put(&c, sid, 100, 17, t - 400000, ip, 4, &p, 0);
		}
		if (r % o->sp_rounds == o->sp_rounds - 1 && nt_writer_sequence_point(c.w, &c.err))
			c.bad = 1;
		if (r % 997 == 5) {
			pbuf p = {{0}, 0};
			pb_u64(&p, 100 + (uint64_t)(r % NTHREADS));
			pb_str(&p, r % 2 ? "worker" : "io");
			put(&c, nm, 7, 7, t + 50000, NULL, 0, &p, 0);
		}
	}
	for (int m = 0; m < 20 && !c.bad; m++) {
		pbuf p = {{0}, 0};
		pb_u64(&p, 0x500 + (uint64_t)m);
		pb_u64(&p, 0x77);
		pb_u64(&p, 0x10000ull + 0x100ull * (uint64_t)m);
		pb_u32(&p, 0x100);
		pb_u32(&p, 0x06000001u + (uint32_t)m);
		pb_u32(&p, 0x8);
		pb_str(&p, "App");
		pb_str(&p, m % 2 ? "Work" : "Wait");
		pb_str(&p, "void  ()");
		pb_u16(&p, 9);
		put(&c, mid, 8, 8, t + 1000000 + (uint64_t)m, NULL, 0, &p, 0);
	}
	if (c.bad) {
		printf("# writer: %s\n", c.err.msg);
		nt_writer_free(c.w);
		return -1;
	}
	if (nt_writer_close(c.w, &c.err)) { /* it frees the writer either way */
		printf("# writer: %s\n", c.err.msg);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ digests */

typedef struct digest {
	char *s;
	size_t n, cap;
} digest;

static void dput(digest *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dput(digest *d, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if (d->n + (size_t)k + 1 > d->cap) {
		d->cap = (d->n + (size_t)k + 1) * 2;
		d->s = realloc(d->s, d->cap);
		if (!d->s)
			abort();
	}
	memcpy(d->s + d->n, line, (size_t)k + 1);
	d->n += (size_t)k;
}

static int on_group(void *ctx, const nt_sample_group *g)
{
	digest *d = ctx;
	dput(d, "g%u t%" PRIu64 " c%d st%u n%" PRIu64 " w%.17g s%u:", g->group, g->thread_id,
	     g->category, g->sample_type, g->samples, g->weight_ns, g->stack);
	for (uint32_t i = 0; i < g->depth; i++)
		dput(d, "%s;", g->frames[i]);
	dput(d, "\n");
	return 0;
}

typedef struct result {
	int rc;
	char msg[300];
	digest d;
	uint64_t merged, reread;
} result;

/* The compat mode of the profiles (pyroscope's reads in file order, as the tools do), and
 * their opts.skip_rate. */
static int g_compat = NT_COMPAT_NONE;
static int g_skip_rate;

/* The profile of the trace at path (or in buf) with opts.jobs = jobs. */
static void profile(const char *path, const void *buf, size_t len, unsigned jobs, result *res)
{
	memset(res, 0, sizeof *res);
	nt_error err;
	nt_error_clear(&err);
	nt_profile_opts po;
	memset(&po, 0, sizeof po);
	po.sz = sizeof po;
	po.jobs = jobs;
	po.compat = g_compat;
	po.skip_rate = g_skip_rate;
	nt_profile *p = NULL;
	nt_reader *r = NULL;
	nt_reader_opts ro = {sizeof ro, g_compat == NT_COMPAT_PYROSCOPE ? NT_READ_FILE_ORDER : 0u,
			     "t"};
	int rc = nt_profile_new(&p, &po, &err);
	if (!rc)
		rc = path ? nt_reader_open_file(&r, path, &ro, &err)
			  : nt_reader_open_mem(&r, buf, len, &ro, &err);
	if (!rc)
		rc = nt_profile_add_trace(p, r, "t", &err);
	if (!rc)
		rc = nt_profile_finish(p, &err);
	res->rc = rc;
	snprintf(res->msg, sizeof res->msg, "%s @%" PRIu64, rc ? err.msg : "",
		 rc ? err.offset : 0);
	if (!rc) {
		nt_profile_foreach(p, on_group, &res->d);
		const nt_session_info *si = nt_profile_session(p, 0);
		const nt_rate_info *ri = si->rate;
		dput(&res->d,
		     "samples %" PRIu64 " sel %" PRIu64 " first %" PRIu64 " last %" PRIu64
		     " lost %" PRIu64 " trunc %d gc %.17g/%" PRIu64 " clocked %" PRIu64 "\n",
		     si->samples, si->samples_selected, si->first_ts, si->last_ts, si->lost_events,
		     si->truncated, si->gc_charged_ns, si->gc_charges, si->clocked_samples);
		dput(&res->d, "unordered %" PRIu64 "\n", si->samples_unordered);
		dput(&res->d,
		     "rate %.17g %.17g %.17g %.17g cv %.17g rounds %" PRIu64 " threads %" PRIu64
		     " gaps %" PRIu64 " pt %.17g\n",
		     ri->inferred_interval_ns, ri->median_interval_ns, ri->p10_interval_ns,
		     ri->p90_interval_ns, ri->cv, ri->rounds, ri->threads,
		     ri->gaps_count, ri->per_thread_median_ns);
		const nt_pauses_info *pi = si->pauses;
		dput(&res->d, "pauses %" PRIu64 " %" PRIu64 " list %zu gcs %" PRIu64 "\n",
		     pi->pauses, pi->pause_ns, pi->nlist, pi->gcs);
		for (uint64_t tid = 100; tid < 100 + NTHREADS; tid++) {
			const char *nmx = nt_profile_thread_name(p, 0, tid);
			dput(&res->d, "name %" PRIu64 " %s\n", tid, nmx ? nmx : "-");
		}
		/* the reader's counts: the caller's reader passed the merged chunks, and
		 * counts them as if it had read them (nt_reader_add_chunk_counts()) */
		const nt_reader_stats *rs = nt_reader_stats_get(r);
		dput(&res->d,
		     "reader events %" PRIu64 " sorted %" PRIu64 " stacks %" PRIu64 " depth %u"
		     " missing %" PRIu64 " negative %" PRIu64 " ts %" PRIu64 "..%" PRIu64
		     " blocks %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 " records %" PRIu64
		     " lost %" PRIu64 "\n",
		     rs->events, rs->events_sorted, rs->stacks, rs->max_stack_depth,
		     rs->missing_stacks, rs->negative_ts_deltas, rs->first_timestamp,
		     rs->last_timestamp, rs->blocks_event, rs->blocks_metadata, rs->blocks_stack,
		     rs->blocks_sp, rs->metadata_records, rs->lost_events);
		for (size_t i = 0; i < nt_reader_metadata_count(r); i++)
			dput(&res->d, "record %zu events %" PRIu64 "\n", i,
			     nt_reader_metadata_events(r, i));
		uint64_t ctid, clost;
		for (size_t i = 0; nt_reader_lost(r, i, &ctid, &clost) == 1; i++)
			if (clost || nt_reader_capture_samples(r, i))
				dput(&res->d, "capture %" PRIu64 ": %" PRIu64 " lost, %" PRIu64 " samples\n",
				     ctid, clost, nt_reader_capture_samples(r, i));
		res->merged = si->chunks_merged;
		res->reread = si->chunks_reread;
		uint64_t off;
		const char *w = nt_reader_warning(r, &off);
		if (w)
			dput(&res->d, "warning %s at %" PRIu64 "\n", w, off);
	}
	nt_reader_free(r);
	nt_profile_free(p);
}

/* Compares the profile of jobs 2 with chunks of chunk bytes against want (jobs 1). */
static void same_as(const result *want, const char *path, const void *buf, size_t len,
		    unsigned chunk, const char *what, int want_merged, int want_reread)
{
	char v[32];
	snprintf(v, sizeof v, "%u", chunk);
	setenv("NETTRACE_CHUNK_BYTES", v, 1);
	result got;
	profile(path, buf, len, 2, &got);
	int same = got.rc == want->rc && strcmp(got.msg, want->msg) == 0 && got.d.n == want->d.n &&
		   (got.d.n == 0 || memcmp(got.d.s, want->d.s, got.d.n) == 0);
	ok(same, "%s, chunks of %u bytes: the profile of --jobs 1", what, chunk);
	if (!same) {
		printf("#   rc %d/%d: %s / %s\n", got.rc, want->rc, got.msg, want->msg);
		size_t i = 0;
		while (i < got.d.n && i < want->d.n && got.d.s[i] == want->d.s[i])
			i++;
		size_t from = i > 200 ? i - 200 : 0;
		printf("#   first difference at byte %zu:\n#   got  ...%.300s\n#   want ...%.300s\n", i,
		       got.d.s ? got.d.s + from : "", want->d.s ? want->d.s + from : "");
	}
	if (want_merged)
		ok(got.merged > 0, "%s, chunks of %u bytes: %" PRIu64 " chunks merged", what, chunk,
		   got.merged);
	if (want_reread)
		ok(got.reread > 0 && got.merged == 0,
		   "%s, chunks of %u bytes: %" PRIu64 " chunks read again, %" PRIu64 " merged", what,
		   chunk, got.reread, got.merged);
	free(got.d.s);
	unsetenv("NETTRACE_CHUNK_BYTES");
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int rc = fwrite(p, 1, n, f) == n ? 0 : -1;
	return fclose(f) || rc ? -1 : 0;
}

/* ------------------------------------------------------------------ tests */

static void test_equal(void)
{
	nt_membuf mb;
	memset(&mb, 0, sizeof mb);
	wopts o = {0, 6000, 40};
	if (!ok(write_trace(&mb, &o) == 0, "a trace of %u rounds written", o.rounds))
		return;
	result want;
	profile(NULL, mb.data, mb.len, 1, &want);
	ok(want.rc == 0 && want.d.n > 1000, "--jobs 1 reads it (%zu bytes, %zu digest bytes)",
	   mb.len, want.d.n);
	ok(strstr(want.d.s, " c5 ") && strstr(want.d.s, " c1 ") && strstr(want.d.s, " c4 "),
	   "its groups include gc, lock and wait samples");
	ok(!strstr(want.d.s, "lost 0 "), "it has lost events");
	ok(!strstr(want.d.s, "gc 0/0"), "GC pauses are charged to threads");
	unsigned sizes[] = {4096, 5000, 7777, 20000, 65536};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		same_as(&want, NULL, mb.data, mb.len, sizes[i], "memory", 1, 0);
	char path[] = "/tmp/test-chunks-XXXXXX";
	int fd = mkstemp(path);
	if (ok(fd >= 0 && write_file(path, mb.data, mb.len) == 0, "written to a file")) {
		same_as(&want, path, NULL, 0, 4096, "file", 1, 0);
		same_as(&want, path, NULL, 0, 30000, "file", 1, 0);
		/* a cut file: the same events, the same warning at the same offset */
		size_t cut = mb.len * 3 / 5;
		result wcut;
		profile(NULL, mb.data, cut, 1, &wcut);
		ok(wcut.rc == 0 && strstr(wcut.d.s, "warning "), "a cut trace reads with a warning");
		write_file(path, mb.data, cut);
		same_as(&wcut, path, NULL, 0, 4096, "cut file", 0, 0);
		same_as(&wcut, path, NULL, 0, 9000, "cut file", 0, 0);
		free(wcut.d.s);
		/* a damaged block in the middle: the same failure at the same offset */
		unsigned char *bad = malloc(mb.len);
		memcpy(bad, mb.data, mb.len);
		for (size_t k = mb.len / 2; k < mb.len / 2 + 64; k++)
			bad[k] = 0xFF;
		result wbad;
		profile(NULL, bad, mb.len, 1, &wbad);
		write_file(path, bad, mb.len);
		ok(wbad.rc != 0 || strstr(wbad.d.s, "warning"), "a damaged trace fails (%s)",
		   wbad.msg);
		same_as(&wbad, path, NULL, 0, 4096, "damaged file", 0, 0);
		free(wbad.d.s);
		free(bad);
		unlink(path);
	}
	if (fd >= 0)
		close(fd);
	/* a pipe cannot be read twice: one reader, the same profile */
	int pfd[2];
	if (ok(pipe(pfd) == 0, "a pipe")) {
		pid_t pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			size_t off = 0;
			while (off < mb.len) {
				ssize_t k = write(pfd[1], mb.data + off, mb.len - off);
				if (k <= 0)
					_exit(1);
				off += (size_t)k;
			}
			_exit(0);
		}
		close(pfd[1]);
		setenv("NETTRACE_CHUNK_BYTES", "4096", 1);
		char dev[64];
		snprintf(dev, sizeof dev, "/dev/fd/%d", pfd[0]);
		result got;
		profile(dev, NULL, 0, 2, &got);
		ok(got.rc == 0 && got.d.n == want.d.n && memcmp(got.d.s, want.d.s, got.d.n) == 0 &&
			   got.merged == 0,
		   "a pipe: the profile of --jobs 1, no chunk");
		free(got.d.s);
		unsetenv("NETTRACE_CHUNK_BYTES");
		close(pfd[0]);
	}
	free(want.d.s);
	nt_membuf_free(&mb);
}

/* pyroscope's attribution charges each interval to the sample that ends it, by a state
 * per thread that crosses chunks: the merge settles each thread's first interval. */
static void test_pyroscope(void)
{
	nt_membuf mb;
	memset(&mb, 0, sizeof mb);
	wopts o = {0, 5000, 30};
	if (!ok(write_trace(&mb, &o) == 0, "a trace written for pyroscope's mode"))
		return;
	g_compat = NT_COMPAT_PYROSCOPE;
	result want;
	profile(NULL, mb.data, mb.len, 1, &want);
	ok(want.rc == 0 && want.d.n > 1000 && !strstr(want.d.s, "unordered 0\n"),
	   "--compat=pyroscope --jobs 1 reads it, samples out of their thread's order among them");
	unsigned sizes[] = {4096, 6000, 30000};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		same_as(&want, NULL, mb.data, mb.len, sizes[i], "pyroscope", 1, 0);
	free(want.d.s);
	g_compat = NT_COMPAT_NONE;
	nt_membuf_free(&mb);
}

/* The "rate ..." line of a digest, cut out of it into line (size n); 0 if none. */
static int cut_rate(digest *d, char *line, size_t n)
{
	char *at = d->s ? strstr(d->s, "\nrate ") : NULL;
	if (!at)
		return 0;
	char *end = strchr(at + 1, '\n');
	size_t len = end ? (size_t)(end - at) : strlen(at);
	snprintf(line, n, "%.*s", (int)(len - 1), at + 1);
	memmove(at, at + len, d->n - (size_t)(at + len - d->s) + 1);
	d->n -= len;
	return 1;
}

/* opts.skip_rate: the compat modes read the same groups without feeding the estimator
 * (no rounds), on one thread or in chunks on two; the default mode ignores it. */
static void test_skip_rate(void)
{
	nt_membuf mb;
	memset(&mb, 0, sizeof mb);
	wopts o = {0, 3000, 30};
	if (!ok(write_trace(&mb, &o) == 0, "a trace written for skip_rate"))
		return;
	int modes[] = {NT_COMPAT_PYROSCOPE, NT_COMPAT_TRACEEVENT, NT_COMPAT_NONE};
	for (size_t m = 0; m < 3; m++) {
		g_compat = modes[m];
		result want, got;
		g_skip_rate = 0;
		profile(NULL, mb.data, mb.len, 1, &want);
		g_skip_rate = 1;
		setenv("NETTRACE_CHUNK_BYTES", "4096", 1);
		for (unsigned jobs = 1; jobs <= 2; jobs++) {
			profile(NULL, mb.data, mb.len, jobs, &got);
			if (modes[m] == NT_COMPAT_NONE) {
				ok(got.rc == 0 && got.d.n == want.d.n &&
					   memcmp(got.d.s, want.d.s, got.d.n) == 0,
				   "default mode, --jobs %u: skip_rate ignored (the same rate)", jobs);
			} else {
				char wl[400] = "", gl[400] = "";
				int cw = cut_rate(&want.d, wl, sizeof wl), cg = cut_rate(&got.d, gl, sizeof gl);
				ok(cw && cg && strstr(wl, " rounds 0 ") == NULL &&
					   strstr(gl, "rate 0 ") == gl && strstr(gl, " rounds 0 ") != NULL,
				   "compat %d, --jobs %u: no rate inferred ('%s' against '%s')",
				   modes[m], jobs, gl, wl);
				ok(got.rc == 0 && got.d.n == want.d.n &&
					   memcmp(got.d.s, want.d.s, got.d.n) == 0,
				   "compat %d, --jobs %u: the same groups and counts as with the rate",
				   modes[m], jobs);
				/* (want lost its rate line: put it back for the next comparison) */
				free(want.d.s);
				g_skip_rate = 0;
				profile(NULL, mb.data, mb.len, 1, &want);
				g_skip_rate = 1;
			}
			if (jobs == 2 && modes[m] == NT_COMPAT_PYROSCOPE)
				ok(got.merged > 0, "pyroscope, skip_rate: %" PRIu64 " chunks merged",
				   got.merged);
			free(got.d.s);
		}
		unsetenv("NETTRACE_CHUNK_BYTES");
		free(want.d.s);
	}
	g_skip_rate = 0;
	g_compat = NT_COMPAT_NONE;
	nt_membuf_free(&mb);
}

/* opts.chunk_begin/chunk_end: a read_fn that counts events and notes the first offset it
 * sees; chunks read on the second thread count on contexts of their own, which the caller
 * takes back in file order. */
typedef struct hcount {
	uint64_t events, samples, first_off, last_off;
	int out_of_order, begun, ended, merged, fail_begin;
} hcount;

static int count_fn(void *ctx, uint32_t session, const nt_trace_header *h, const nt_event *ev,
		    nt_error *err)
{
	(void)session;
	(void)h;
	(void)err;
	hcount *c = ctx;
	if (!c->events)
		c->first_off = ev->offset;
	c->out_of_order += ev->offset < c->last_off;
	c->last_off = ev->offset;
	c->events++;
	c->samples += nt_event_is_sample(ev, NULL);
	return 0;
}

static void *count_begin(void *ctx)
{
	hcount *c = ctx;
	if (c->fail_begin && __atomic_add_fetch(&c->begun, 1, __ATOMIC_SEQ_CST) % 3 == 0)
		return NULL; /* every third chunk: "out of memory", read in the stream */
	return calloc(1, sizeof(hcount));
}

static int count_end(void *ctx, void *chunk, int merge, nt_error *err)
{
	(void)err;
	hcount *c = ctx, *k = chunk;
	c->ended++;
	if (merge)
		c->merged++;
	if (merge && k->events) {
		/* file order: the chunk starts after everything counted so far */
		c->out_of_order += k->first_off < c->last_off || k->out_of_order;
		c->last_off = k->last_off;
		c->events += k->events;
		c->samples += k->samples;
	}
	free(k);
	return 0;
}

static void test_chunk_hooks(void)
{
	nt_membuf mb;
	memset(&mb, 0, sizeof mb);
	wopts o = {0, 3000, 25};
	if (!ok(write_trace(&mb, &o) == 0, "a trace written for the chunk hooks"))
		return;
	for (int fail = 0; fail <= 1; fail++) {
		uint64_t want_events = 0, want_samples = 0;
		for (unsigned jobs = 1; jobs <= 2; jobs++) {
			hcount c;
			memset(&c, 0, sizeof c);
			c.fail_begin = fail;
			nt_profile_opts po;
			memset(&po, 0, sizeof po);
			po.sz = sizeof po;
			po.jobs = jobs;
			po.read_fn = count_fn;
			po.chunk_begin = count_begin;
			po.chunk_end = count_end;
			po.hook_ctx = &c;
			setenv("NETTRACE_CHUNK_BYTES", "4096", 1);
			nt_error err;
			nt_profile *p = NULL;
			nt_reader *r = NULL;
			/* (file order, as nettrace-info reads: offsets then rise) */
			nt_reader_opts ro = {sizeof ro, NT_READ_FILE_ORDER, "t"};
			int rc = nt_profile_new(&p, &po, &err);
			if (!rc)
				rc = nt_reader_open_mem(&r, mb.data, mb.len, &ro, &err);
			if (!rc)
				rc = nt_profile_add_trace(p, r, "t", &err);
			const nt_session_info *si = rc ? NULL : nt_profile_session(p, 0);
			unsetenv("NETTRACE_CHUNK_BYTES");
			if (jobs == 1) {
				want_events = c.events;
				want_samples = c.samples;
				ok(rc == 0 && c.events == nt_reader_stats_get(r)->events && !c.ended,
				   "one thread: the hook sees the %" PRIu64 " events, no chunk context",
				   c.events);
			} else {
				ok(rc == 0 && si && si->chunks_merged > 0 &&
					   c.merged == (int)si->chunks_merged,
				   "%s: %d chunks merged with their hook contexts (%" PRIu64 ")",
				   fail ? "chunk_begin failing" : "two threads", c.merged,
				   si ? si->chunks_merged : 0);
				ok(c.events == want_events && c.samples == want_samples && !c.out_of_order,
				   "%s: the hook counts the %" PRIu64 " events and %" PRIu64 " samples of "
				   "one thread, in file order",
				   fail ? "chunk_begin failing" : "two threads", c.events, c.samples);
				ok(c.ended >= c.merged && (!fail || si->chunks_reread > 0),
				   "%s: every context taken back (%d), %" PRIu64 " chunks read again",
				   fail ? "chunk_begin failing" : "two threads", c.ended,
				   si ? si->chunks_reread : 0);
			}
			nt_reader_free(r);
			nt_profile_free(p);
		}
	}
	nt_membuf_free(&mb);
}

/* Samples with a CPU clock carry their cpu/ready split from sample to sample: the second
 * thread gives such a chunk back, and the first reads the rest itself. */
static void test_clocked(void)
{
	nt_membuf mb;
	memset(&mb, 0, sizeof mb);
	wopts o = {1, 3000, 40};
	if (!ok(write_trace(&mb, &o) == 0, "a trace with CPU clocks written"))
		return;
	if (getenv("TEST_CHUNKS_DUMP")) {
		FILE *f = fopen(getenv("TEST_CHUNKS_DUMP"), "wb");
		fwrite(mb.data, 1, mb.len, f);
		fclose(f);
	}
	result want;
	profile(NULL, mb.data, mb.len, 1, &want);
	ok(want.rc == 0 && !strstr(want.d.s, "clocked 0\n"), "--jobs 1 reads its clocks");
	same_as(&want, NULL, mb.data, mb.len, 4096, "CPU clocks", 0, 1);
	free(want.d.s);
	nt_membuf_free(&mb);
}

/* The reader's side: two readers of one file agree on the chunks (one reads the even
 * chunks and passes the odd ones, the other the reverse: every event is read once); a
 * reader that passes chunks still reads their metadata; a tracked chunk records each
 * capture thread's first sequence number. */
static void test_reader_api(void)
{
	nt_membuf mb;
	memset(&mb, 0, sizeof mb);
	wopts o = {0, 3000, 25};
	if (!ok(write_trace(&mb, &o) == 0, "a trace written"))
		return;
	nt_error err;
	nt_reader *rd[2] = {NULL, NULL}, *whole = NULL;
	nt_reader_opts ro = {sizeof ro, 0, "t"};
	ok(nt_reader_open_mem(&rd[0], mb.data, mb.len, &ro, &err) == 0, "reader 0");
	ok(nt_reader_reopen(rd[0], 0, &rd[1], &err) == 0, "reader 1, the same input again");
	nt_reader *c = NULL;
	ok(nt_reader_reopen(rd[0], mb.len + 1, &c, &err) == NT_EUNSUPPORTED && !c,
	   "not for an input smaller than asked");
	const nt_event *ev;
	uint64_t all = 0, n[2] = {0, 0};
	nt_reader_open_mem(&whole, mb.data, mb.len, &ro, &err);
	while (nt_reader_next(whole, &ev, &err) == 1)
		all++;
	const uint64_t C = 6000;
	int done[2] = {0, 0}, bad = 0, tracked = 0, nonempty = 0;
	nt_chunk_counts *cc = NULL;
	uint64_t k_end = 0;
	for (uint64_t k = 0; !(done[0] && done[1]) && k < 100000; k++) {
		k_end = k;
		for (int i = 0; i < 2; i++) {
			if (done[i])
				continue;
			if ((int)(k % 2) != i) {
				int rc = nt_reader_chunk_skip(rd[i], C, &err);
				if (rc < 0)
					bad = 1;
				if (rc <= 0)
					done[i] = 1;
				continue;
			}
			nt_reader_chunk_begin(rd[i], C, i ? NT_CHUNK_TRACK : 0);
			uint64_t m = 0;
			int rc;
			while ((rc = nt_reader_next(rd[i], &ev, &err)) == 1)
				m++;
			n[i] += m;
			nonempty += m > 0;
			if (rc < 0)
				bad = 1;
			if (rc < 0 || !nt_reader_chunk_stopped(rd[i]))
				done[i] = 1;
			uint64_t tid, lost;
			int kind;
			uint32_t first, last;
			for (size_t t = 0;
			     i && nt_reader_chunk_thread(rd[i], t, &tid, &kind, &first, &last, &lost); t++)
				if (tid == 7 && m && kind == 1 && first > 1 && last >= first)
					tracked++;
			/* reader 0 passed this chunk: it takes reader 1's counts of it */
			if (i && (nt_reader_chunk_counts(rd[1], &cc) ||
				  nt_reader_add_chunk_counts(rd[0], cc)))
				bad = 1;
		}
	}
	nt_chunk_counts_free(cc);
	const nt_reader_stats *s0 = nt_reader_stats_get(rd[0]), *sw = nt_reader_stats_get(whole);
	int same_counts = s0->events == sw->events && s0->events_sorted == sw->events_sorted &&
			  s0->stacks == sw->stacks && s0->max_stack_depth == sw->max_stack_depth &&
			  s0->first_timestamp == sw->first_timestamp &&
			  s0->last_timestamp == sw->last_timestamp &&
			  s0->blocks_event == sw->blocks_event && s0->blocks_stack == sw->blocks_stack;
	for (size_t i = 0; i < nt_reader_metadata_count(whole); i++)
		same_counts &= nt_reader_metadata_events(rd[0], i) == nt_reader_metadata_events(whole, i);
	uint64_t tw, t0, lw, l0;
	for (size_t i = 0; nt_reader_lost(whole, i, &tw, &lw) == 1; i++) {
		int found = 0;
		for (size_t j = 0; nt_reader_lost(rd[0], j, &t0, &l0) == 1; j++)
			if (t0 == tw) {
				found = 1;
				same_counts &= nt_reader_capture_samples(rd[0], j) ==
					       nt_reader_capture_samples(whole, i);
			}
		same_counts &= found || nt_reader_capture_samples(whole, i) == 0;
	}
	ok(same_counts && s0->events == all,
	   "reader 0, given reader 1's counts of the chunks it passed, counts as a whole read "
	   "(%" PRIu64 " events, %" PRIu64 " stacks, records, samples per capture thread)",
	   s0->events, s0->stacks);
	ok(!bad && done[0] && done[1], "both readers reach the end");
	ok(nonempty > 10 && nonempty == (int)k_end + 1, "%d chunks, every one with events", nonempty);
	ok(n[0] + n[1] == all && n[0] && n[1],
	   "the even chunks (%" PRIu64 " events) and the odd ones (%" PRIu64 ") hold the %" PRIu64
	   " events once each",
	   n[0], n[1], all);
	ok(nt_reader_metadata_count(rd[0]) == nt_reader_metadata_count(whole) &&
		   nt_reader_metadata_count(rd[1]) == nt_reader_metadata_count(whole),
	   "both know every metadata record (%zu)", nt_reader_metadata_count(whole));
	ok(tracked > 0, "the tracked chunks recorded the sampler's first sequence number (%d)",
	   tracked);
	nt_reader_free(rd[0]);
	nt_reader_free(rd[1]);
	nt_reader_free(whole);
	nt_membuf_free(&mb);
}

int main(void)
{
	test_equal();
	test_pyroscope();
	test_skip_rate();
	test_chunk_hooks();
	test_clocked();
	test_reader_api();
	return tap_done();
}
