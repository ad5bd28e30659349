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
 *   FLOOR=perf FLOOR_HZ=1000     the perf_events backend's design without its work
 *                                (doc/sampler-design.md §9): a sampler thread opens on
 *                                each thread the event libnettrace-sampler opens
 *                                (PERF_COUNT_SW_TASK_CLOCK every interval of its CPU, user
 *                                mode, REGS_USER, STACK_USER, context_switch records, times
 *                                on CLOCK_MONOTONIC) and, every FLOOR_WAKE intervals, frees
 *                                each ring without reading the samples (it only counts the
 *                                record headers). Variants: FLOOR_STACK=BYTES (the stack
 *                                copy, default 16384; 0: no PERF_SAMPLE_STACK_USER),
 *                                FLOOR_SWITCH=0 (no switch records), FLOOR_WAKE=K (default
 *                                1; the ring is sized for K rounds of samples).
 *
 * Prints "floor: N signals" (perf: "floor: N samples, L lost") to stderr at exit. Not part
 * of the library or the tools. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXT 256

static int mode; /* 0 off, 1 tgkill, 2 timer, 3 perf */
static long interval_ns;
static int signo;
static atomic_long nsignals;
static atomic_int stopping;
static pthread_t sampler;
static int have_sampler;
static unsigned perf_stack = 16384, perf_switch = 1, perf_wake = 1;
static atomic_long nsamples, nlost;

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

/* What every floor's sampler thread does first, as the real sampler thread does: no
 * signals, 1 ns timer slack, SCHED_FIFO 1 where permitted. */
static void floor_thread_setup(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	struct sched_param sp = {.sched_priority = 1};
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

static void *sampler_main(void *arg)
{
	(void)arg;
	floor_thread_setup();
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

/* FLOOR=perf: one event and ring per thread, opened as libnettrace-sampler's perf.c does */
struct pthr {
	pid_t tid;
	int fd;
	uint8_t *ring;
	size_t size; /* data bytes (a power of two) */
};

static size_t perf_pages(void)
{
	/* K rounds of one sample each plus the switch records, twice over */
	size_t need = 2 * (size_t)perf_wake * (perf_stack + 256) + 8192, pages = 1;
	while (pages * 4096 < need)
		pages <<= 1;
	return pages < 16 ? 16 : pages;
}

static int perf_attach(struct pthr *p, pid_t tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = (uint64_t)interval_ns;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_REGS_USER;
	a.sample_regs_user = (1ull << 6) | (1ull << 7) | (1ull << 8); /* bp, sp, ip */
	if (perf_stack) {
		a.sample_type |= PERF_SAMPLE_STACK_USER;
		a.sample_stack_user = perf_stack;
	}
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.context_switch = perf_switch;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	size_t pages = perf_pages();
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(pages * 4096);
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	void *m = mmap(NULL, (pages + 1) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return -1;
	}
	p->tid = tid;
	p->fd = fd;
	p->ring = m;
	p->size = pages * 4096;
	return 0;
}

/* Frees the ring up to its head, counting samples and lost records by their headers. */
static void perf_free(struct pthr *p)
{
	struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)(void *)p->ring;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;
	const uint8_t *data = p->ring + 4096;
	long ns = 0, nl = 0;
	while (head - tail >= sizeof(struct perf_event_header) && head - tail <= p->size) {
		struct perf_event_header h;
		uint64_t o = tail & (p->size - 1);
		if (o + sizeof h > p->size)
			break; /* a header across the end: a floor may miss one count */
		memcpy(&h, data + o, sizeof h);
		if (h.size < sizeof h)
			break;
		ns += h.type == PERF_RECORD_SAMPLE;
		nl += h.type == PERF_RECORD_LOST;
		tail += h.size;
	}
	atomic_fetch_add_explicit(&nsamples, ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&nlost, nl, memory_order_relaxed);
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
}

static void *perf_main(void *arg)
{
	(void)arg;
	floor_thread_setup();
	pid_t self = (pid_t)syscall(SYS_gettid);
	static struct pthr th[MAXT];
	int n = 0;
	long step = interval_ns * (long)perf_wake;
	DIR *d = opendir("/proc/self/task");
	nlink_t links = 0;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&stopping)) {
		next.tv_nsec += step;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		/* as the sampler: a new listing when the directory's link count changed */
		struct stat st;
		if (d && fstat(dirfd(d), &st) == 0 && st.st_nlink != links) {
			links = st.st_nlink;
			rewinddir(d);
			struct dirent *e;
			while ((e = readdir(d)) && n < MAXT) {
				pid_t t = (pid_t)atoi(e->d_name);
				int known = t <= 0 || t == self;
				for (int i = 0; i < n && !known; i++)
					known = th[i].tid == t;
				if (!known && perf_attach(&th[n], t) == 0)
					n++;
			}
		}
		for (int i = 0; i < n; i++)
			perf_free(&th[i]);
	}
	for (int i = 0; i < n; i++)
		perf_free(&th[i]);
	if (d)
		closedir(d);
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
	} else if (strcmp(m, "perf") == 0) {
		const char *v;
		if ((v = getenv("FLOOR_STACK")))
			perf_stack = (unsigned)atoi(v) & ~7u;
		if (perf_stack > 60000)
			perf_stack = 60000;
		if ((v = getenv("FLOOR_SWITCH")))
			perf_switch = atoi(v) != 0;
		if ((v = getenv("FLOOR_WAKE")) && atoi(v) > 0 && atoi(v) <= 64)
			perf_wake = (unsigned)atoi(v);
		mode = 3;
		have_sampler = pthread_create(&sampler, NULL, perf_main, NULL) == 0;
	}
}

__attribute__((destructor)) static void floor_fini(void)
{
	if (!mode)
		return;
	atomic_store(&stopping, 1);
	if (have_sampler)
		pthread_join(sampler, NULL);
	if (mode == 3)
		fprintf(stderr, "floor: %ld samples, %ld lost\n", atomic_load(&nsamples),
			atomic_load(&nlost));
	else
		fprintf(stderr, "floor: %ld signals\n", atomic_load(&nsignals));
}
