/* SPDX-License-Identifier: MIT */
/* floor-sampler.c - the cost floor of signal-based sampling, for bench/bench-sampler.sh.
 * An LD_PRELOAD library that delivers sampling signals the way a sampler must, but whose
 * handler does nothing: no clock reads, no unwinding, no buffering, no writing. What it
 * costs is what the kernel and the machine charge for the signals themselves (timer
 * interrupts, IPIs, context switches, signal frames, sigreturn), so the benchmark can
 * show how much of libnettrace-sampler's overhead is its own and how much no signal-based
 * sampler can avoid on this machine.
 *
 *   FLOOR=tgkill FLOOR_HZ=1000   a sampler thread (timer slack 1 ns, SCHED_FIFO 1 when
 *                                allowed, absolute CLOCK_MONOTONIC deadlines) reads each
 *                                thread's CPU clock every round and signals, with tgkill,
 *                                the threads whose CPU time moved: libnettrace-sampler's
 *                                design without its work.
 *   FLOOR=timer FLOOR_HZ=1000    a per-thread CLOCK_MONOTONIC timer (timer_create,
 *                                SIGEV_THREAD_ID) armed in every thread started with
 *                                pthread_create: no sampler thread at all (the design
 *                                cannot skip blocked threads, so it is only a floor).
 *
 * Prints "floor: N signals" to stderr at exit. Not part of the library or the tools. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXT 256

static int mode; /* 0 off, 1 tgkill, 2 timer */
static long interval_ns;
static int signo;
static atomic_long nsignals;
static atomic_int stopping;
static pthread_t sampler;
static int have_sampler;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	atomic_fetch_add_explicit(&nsignals, 1, memory_order_relaxed);
}

static uint64_t tid_cpu(pid_t tid)
{
	/* MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), as the sampler does */
	clockid_t id = (clockid_t)(((~(uint32_t)tid) << 3) | 6u);
	struct timespec ts;
	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *sampler_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	struct sched_param sp = {.sched_priority = 1};
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
	pid_t tids[MAXT];
	uint64_t last[MAXT];
	int n = 0;
	struct timespec next, lastlist = {0, 0};
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&stopping)) {
		next.tv_nsec += interval_ns;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		/* the thread list every 100 ms, as the sampler's sweep */
		if ((next.tv_sec - lastlist.tv_sec) * 1000000000L + (next.tv_nsec - lastlist.tv_nsec) >=
		    100000000L) {
			lastlist = next;
			DIR *d = opendir("/proc/self/task");
			if (d) {
				struct dirent *e;
				n = 0;
				while ((e = readdir(d)) && n < MAXT) {
					pid_t t = (pid_t)atoi(e->d_name);
					if (t > 0 && t != self) {
						tids[n] = t;
						last[n++] = 0;
					}
				}
				closedir(d);
			}
		}
		for (int i = 0; i < n; i++) {
			uint64_t c = tid_cpu(tids[i]);
			if (c > last[i] + 10000)
				syscall(SYS_tgkill, pid, tids[i], signo);
			last[i] = c;
		}
	}
	return NULL;
}

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *timed_start(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	struct sigevent se;
	memset(&se, 0, sizeof se);
	se.sigev_notify = SIGEV_THREAD_ID;
	se.sigev_signo = signo;
	se._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	timer_t tm;
	if (timer_create(CLOCK_MONOTONIC, &se, &tm) == 0) {
		struct itimerspec its = {{interval_ns / 1000000000, interval_ns % 1000000000},
					 {interval_ns / 1000000000, interval_ns % 1000000000}};
		timer_settime(tm, 0, &its, NULL);
	}
	void *r = s.fn(s.arg);
	if (se._sigev_un._tid)
		timer_delete(tm);
	return r;
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	if (!real)
		real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				void *))dlsym(RTLD_NEXT, "pthread_create");
	if (mode != 2)
		return real(th, attr, fn, arg);
	struct start *s = malloc(sizeof *s);
	if (!s)
		return real(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	int rc = real(th, attr, timed_start, s);
	if (rc)
		free(s);
	return rc;
}

__attribute__((constructor)) static void floor_init(void)
{
	const char *m = getenv("FLOOR"), *hz = getenv("FLOOR_HZ");
	long f = hz ? atol(hz) : 1000;
	if (!m || f <= 0 || f > 100000)
		return;
	interval_ns = 1000000000L / f;
	signo = SIGRTMIN + 4;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(signo, &sa, NULL);
	if (strcmp(m, "tgkill") == 0) {
		mode = 1;
		have_sampler = pthread_create(&sampler, NULL, sampler_main, NULL) == 0;
	} else if (strcmp(m, "timer") == 0) {
		mode = 2;
	}
}

__attribute__((destructor)) static void floor_fini(void)
{
	if (!mode)
		return;
	atomic_store(&stopping, 1);
	if (have_sampler)
		pthread_join(sampler, NULL);
	fprintf(stderr, "floor: %ld signals\n", atomic_load(&nsignals));
}
