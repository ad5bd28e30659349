/* SPDX-License-Identifier: MIT */
/* nts-multi.c - the sampler's C API in one process, for tests/e2e/t505-record-multi.sh:
 *
 *   nts-multi rates OUTDIR SECONDS fixed|poisson
 *       sessions at 1, 3 and 7 ms on one spinning worker thread (thread filter), opened
 *       one after the other (the 3 ms one 0.2 s after the 1 ms one, the 7 ms one 0.2 s
 *       later) and closed together after SECONDS more; files OUTDIR/s1, s3, s7.nettrace.
 *       Prints per session "session MS samples=N rounds=N missed=N late=N dropped=N
 *       min_ns=N max_ns=N" (bounds of the session's duration, from the API calls).
 *   nts-multi wake OUTDIR
 *       a 1000 ms session, then 30 ms later a 1 ms session (OUTDIR/fast.nettrace) for
 *       200 ms: the sampler thread, asleep until the slow deadline, must wake for it.
 *   nts-multi filter OUTDIR
 *       two spinning threads, a session that wants only the first (OUTDIR/filter.nettrace);
 *       prints "wanted TID" and "other TID".
 *   nts-multi api
 *       argument checks of the API (prints "ok"/"FAIL" lines).
 * Sessions and threads use the public API only (ntsampler.h). */
#include "ntsampler.h"
#include "noipa.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic int stop_flag;
static volatile uint64_t sink;

NOIPA uint64_t spin_leaf(uint64_t n);
NOIPA uint64_t spin_leaf(uint64_t n)
{
	uint64_t x = n;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 7;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

typedef struct worker {
	pthread_t th;
	_Atomic pid_t tid;
} worker;

static void *spin_thread(void *arg)
{
	worker *w = arg;
	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	while (!atomic_load(&stop_flag))
		sink += spin_leaf(20000);
	return NULL;
}

static void start_worker(worker *w)
{
	atomic_store(&w->tid, 0);
	pthread_create(&w->th, NULL, spin_thread, w);
	while (!atomic_load(&w->tid)) {
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static int open_session(nts_session **s, const char *dir, const char *name, uint32_t ms,
			int sched, const pid_t *tids, size_t ntids, uint64_t span[2])
{
	span[0] = now_ns();
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.nettrace", dir, name);
	nts_session_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.path = path;
	o.fd = -1;
	o.interval_ms = ms;
	o.schedule = sched;
	o.seed = 1000 + ms;
	o.threads = tids;
	o.nthreads = ntids;
	nt_error err;
	memset(&err, 0, sizeof err);
	if (nts_session_open(s, &o, &err)) {
		fprintf(stderr, "nts-multi: %s: %s\n", path, err.msg);
		return -1;
	}
	span[1] = now_ns();
	return 0;
}

/* The session lives between open's start (before[0]) and return (after[0]) and between
 * close's start and return: its duration is known within those bounds (min_ns, max_ns). */
static int close_session(nts_session *s, uint32_t ms, const uint64_t open_span[2])
{
	nts_stats st = {.sz = sizeof(nts_stats)};
	nt_error err;
	memset(&err, 0, sizeof err);
	uint64_t c0 = now_ns();
	if (nts_session_close(s, &st, &err)) {
		fprintf(stderr, "nts-multi: close: %s\n", err.msg);
		return -1;
	}
	uint64_t c1 = now_ns();
	printf("session %u samples=%llu rounds=%llu missed=%llu late=%llu dropped=%llu "
	       "min_ns=%llu max_ns=%llu\n",
	       ms, (unsigned long long)st.samples, (unsigned long long)st.rounds,
	       (unsigned long long)st.missed, (unsigned long long)st.late,
	       (unsigned long long)st.dropped, (unsigned long long)(c0 - open_span[1]),
	       (unsigned long long)(c1 - open_span[0]));
	return 0;
}

static int run_rates(const char *dir, double secs, int sched)
{
	worker w;
	start_worker(&w);
	pid_t tid = atomic_load(&w.tid);
	nts_session *s1, *s3, *s7;
	uint64_t t1[2], t3[2], t7[2];
	nt_error err;
	memset(&err, 0, sizeof err);
	if (nts_start(NULL, &err)) { /* so that opening the first session is quick */
		fprintf(stderr, "nts-multi: %s\n", err.msg);
		return 1;
	}
	if (open_session(&s1, dir, "s1", 1, sched, &tid, 1, t1))
		return 1;
	sleep_s(0.2);
	if (open_session(&s3, dir, "s3", 3, sched, &tid, 1, t3))
		return 1;
	sleep_s(0.2);
	if (open_session(&s7, dir, "s7", 7, sched, &tid, 1, t7))
		return 1;
	sleep_s(secs);
	int rc = close_session(s7, 7, t7) | close_session(s3, 3, t3) | close_session(s1, 1, t1);
	atomic_store(&stop_flag, 1);
	pthread_join(w.th, NULL);
	return rc ? 1 : 0;
}

static int run_wake(const char *dir)
{
	worker w;
	start_worker(&w);
	pid_t tid = atomic_load(&w.tid);
	nts_session *slow, *fast;
	uint64_t ts[2], tf[2];
	if (open_session(&slow, dir, "slow", 1000, NTS_SCHED_FIXED, &tid, 1, ts))
		return 1;
	sleep_s(0.03);
	if (open_session(&fast, dir, "fast", 1, NTS_SCHED_FIXED, &tid, 1, tf))
		return 1;
	sleep_s(0.2);
	int rc = close_session(fast, 1, tf) | close_session(slow, 1000, ts);
	atomic_store(&stop_flag, 1);
	pthread_join(w.th, NULL);
	return rc ? 1 : 0;
}

static int run_filter(const char *dir)
{
	worker a, b;
	start_worker(&a);
	start_worker(&b);
	pid_t tid = atomic_load(&a.tid);
	printf("wanted %d\nother %d\n", (int)tid, (int)atomic_load(&b.tid));
	nts_session *s;
	uint64_t t[2];
	if (open_session(&s, dir, "filter", 2, NTS_SCHED_FIXED, &tid, 1, t))
		return 1;
	sleep_s(0.3);
	int rc = close_session(s, 2, t);
	atomic_store(&stop_flag, 1);
	pthread_join(a.th, NULL);
	pthread_join(b.th, NULL);
	return rc ? 1 : 0;
}

static void check(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok" : "FAIL", what);
}

static int run_api(void)
{
	nt_error err;
	nts_session *s = NULL;
	nts_session_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.path = "/nonexistent-dir/x.nettrace";
	o.fd = -1;
	memset(&err, 0, sizeof err);
	check(nts_session_open(&s, &o, &err) == NT_EIO && s == NULL && strstr(err.msg, "x.nettrace"),
	      "unwritable path fails with NT_EIO and names the file");
	o.path = "/dev/null";
	o.interval_ms = 1001;
	memset(&err, 0, sizeof err);
	check(nts_session_open(&s, &o, &err) == NT_EINVAL && strstr(err.msg, "1001"),
	      "interval 1001 ms is rejected");
	o.interval_ms = 0;
	o.hz = 0.5;
	memset(&err, 0, sizeof err);
	check(nts_session_open(&s, &o, &err) == NT_EINVAL, "0.5 Hz is rejected");
	o.hz = 100;
	o.interval_ms = 10;
	memset(&err, 0, sizeof err);
	check(nts_session_open(&s, &o, &err) == NT_EINVAL, "interval and frequency together");
	o.interval_ms = 0;
	o.schedule = 7;
	memset(&err, 0, sizeof err);
	check(nts_session_open(&s, &o, &err) == NT_EINVAL, "unknown schedule");
	o.schedule = NTS_SCHED_POISSON;
	memset(&err, 0, sizeof err);
	check(nts_session_open(&s, &o, &err) == 0 && s != NULL, "open at 100 Hz, poisson");
	nts_stats st = {.sz = sizeof(nts_stats)};
	check(nts_session_stats(s, &st) == 0 && st.interval_ns == 10000000u && st.seed != 0,
	      "stats give the interval and the drawn seed");
	nts_opts so;
	memset(&so, 0, sizeof so);
	so.sz = sizeof so;
	memset(&err, 0, sizeof err);
	check(nts_start(&so, &err) == NT_EINVAL, "a second nts_start fails");
	memset(&err, 0, sizeof err);
	check(nts_session_close(s, &st, &err) == 0, "close");
	check(nts_session_close(NULL, NULL, NULL) == 0, "close(NULL)");
	memset(&err, 0, sizeof err);
	check(nts_stop(&err) == 0, "stop");
	check(nts_stop(NULL) == 0, "stop again");
	so.mode = 9;
	memset(&err, 0, sizeof err);
	check(nts_start(&so, &err) == NT_EINVAL, "unknown mode");
	so.mode = NTS_MODE_SIGNAL;
	so.signo = 27; /* SIGPROF */
	memset(&err, 0, sizeof err);
	check(nts_start(&so, &err) == NT_EINVAL, "SIGPROF is refused");
	so.signo = 0;
	memset(&err, 0, sizeof err);
	check(nts_start(&so, &err) == 0, "restart");
	memset(&err, 0, sizeof err);
	check(nts_stop(&err) == 0, "stop after restart");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "rates") == 0)
		return run_rates(argv[2], atof(argv[3]),
				 strcmp(argv[4], "poisson") == 0 ? NTS_SCHED_POISSON : NTS_SCHED_FIXED);
	if (argc >= 3 && strcmp(argv[1], "wake") == 0)
		return run_wake(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "filter") == 0)
		return run_filter(argv[2]);
	if (argc >= 2 && strcmp(argv[1], "api") == 0)
		return run_api();
	fprintf(stderr, "usage: nts-multi rates OUTDIR SECONDS fixed|poisson | wake OUTDIR | "
			"filter OUTDIR | api\n");
	return 1;
}
