/* SPDX-License-Identifier: MIT */
/* nts-work.c - workloads with known answers for the sampler's accuracy tests
 * (tests/e2e/t5NN-record-*.sh; doc/sampler-design.md §7). Built with -O2
 * -fno-omit-frame-pointer -fno-optimize-sibling-calls and without sanitizers, so the
 * code the sampler walks is ordinary optimised code: the leaf functions below have no
 * frame of their own (gcc 12), which is what the unwinder must handle.
 *
 * Usage: nts-work MODE SECONDS [ARG]
 *   split    one thread: caller_a -> leaf_a 70% and caller_b -> leaf_b 30% of the work
 *   fair     3 threads, each spinning in its own leaf (spin_0, spin_1, spin_2)
 *   alias    1 ms of tick() every 10 ms (absolute deadlines), work() the rest
 *   sleep    5 ms busy (busy_phase) then 5 ms clock_nanosleep (sleep_phase), repeated
 *   lock     two threads take one mutex: the holder works 4 ms inside, lock_waiter waits
 *   churn    threads that live 0-3 ms are created continuously (ARG at a time, default 4)
 *   fork     split, plus a child forked every 100 ms that works 20 ms and exits; with
 *            ARG "exec" the child execs "nts-work split 0.05" instead
 *   idle     the main thread sleeps (the sampler must not wake it more than once)
 *   execloop works SECONDS then execs itself with ARG - 1 (default 20) generations left,
 *            while it is being sampled; the last generation prints "generations done"
 * Work is counted in iterations, not clock reads, inside the measured functions (a
 * clock-polling leaf would put the samples in the vDSO). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "noipa.h"

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Leaves: the same loop with different constants (noipa: never merged, inlined or
 * cloned, so each keeps its symbol). */
NOIPA uint64_t leaf_a(uint64_t n);
NOIPA uint64_t leaf_a(uint64_t n)
{
	uint64_t x = n;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOIPA uint64_t leaf_b(uint64_t n);
NOIPA uint64_t leaf_b(uint64_t n)
{
	uint64_t x = n ^ 0x5555;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 2862933555777941757ull + 3037000493ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOIPA uint64_t caller_a(uint64_t n);
NOIPA uint64_t caller_a(uint64_t n)
{
	return leaf_a(n) + 1; /* not a tail call */
}

NOIPA uint64_t caller_b(uint64_t n);
NOIPA uint64_t caller_b(uint64_t n)
{
	return leaf_b(n) + 1;
}

/* about 1 ms of work per 7+3 units of 100000 iterations on a 2020s core */
#define UNIT 100000u

static double seconds;

/* The CPU clock is read every 16th pass only: reading it is a system call that updates
 * the thread's runtime, and since Linux 6.6 (EEVDF) that is where a thread whose slice
 * is used up gets preempted. Read after every pass, it made the end of leaf_b the place
 * where the thread waited on a busy machine: the samples taken while it waits all land
 * there, pinned to one phase of the loop, and the CPU-time deltas between samples then
 * credit leaf_a's time to leaf_b (a 0.70 split read 0.56-0.65 under load). */
NOIPA static void run_split(void)
{
	uint64_t end = cpu_ns() + (uint64_t)(seconds * 1e9);
	for (unsigned k = 1;; k++) {
		sink += caller_a(7 * UNIT) + caller_b(3 * UNIT);
		if (k % 16 == 0 && cpu_ns() >= end)
			break;
	}
}

NOIPA uint64_t spin_0(uint64_t n);
NOIPA uint64_t spin_0(uint64_t n)
{
	uint64_t x = n;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOIPA uint64_t spin_1(uint64_t n);
NOIPA uint64_t spin_1(uint64_t n)
{
	uint64_t x = n;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 3;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOIPA uint64_t spin_2(uint64_t n);
NOIPA uint64_t spin_2(uint64_t n)
{
	uint64_t x = n;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 5;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Each fair thread is named "spin-K" and prints, when done, the CPU time its own clock
 * says it used ("truth thread=spin-K tid=TID cpu_ns=N wall_ns=N"): the truth of the
 * profile's cpu time per thread. */
static void *fair_thread(void *arg)
{
	uint64_t (*fn)(uint64_t) = (uint64_t(*)(uint64_t))arg;
	uint64_t (*fns[3])(uint64_t) = {spin_0, spin_1, spin_2};
	int k = fn == fns[0] ? 0 : fn == fns[1] ? 1 : 2;
	char name[16];
	snprintf(name, sizeof name, "spin-%d", k);
	pthread_setname_np(pthread_self(), name);
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	uint64_t t0 = now_ns();
	uint64_t end = t0 + (uint64_t)(seconds * 1e9);
	while (now_ns() < end)
		sink += fn(UNIT);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	printf("truth thread=%s tid=%ld cpu_ns=%lld wall_ns=%llu\n", name, (long)gettid(),
	       (long long)((c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec)),
	       (unsigned long long)(now_ns() - t0));
	return NULL;
}

NOIPA static void run_fair(void)
{
	pthread_t th[3];
	uint64_t (*fns[3])(uint64_t) = {spin_0, spin_1, spin_2};
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, fair_thread, (void *)fns[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
}

/* alias: work in small chunks, checking the wall clock between chunks */
NOIPA uint64_t tick(uint64_t until);
NOIPA uint64_t tick(uint64_t until)
{
	uint64_t x = 0;
	while (now_ns() < until)
		x += leaf_b(2000);
	return x;
}

NOIPA uint64_t work(uint64_t until);
NOIPA uint64_t work(uint64_t until)
{
	uint64_t x = 0;
	while (now_ns() < until)
		x += leaf_a(2000);
	return x;
}

/* Prints the wall-time share of tick(), the truth a wall-clock sampler estimates (under
 * load a preempted thread may start a tick late, so it is measured, not assumed). */
NOIPA static void run_alias(void)
{
	const uint64_t period = 10000000u, busy = 1000000u;
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), in_tick = 0;
	uint64_t k;
	for (k = 1;; k++) {
		uint64_t start = t0 + k * period;
		if (start >= end)
			break;
		sink += work(start);
		uint64_t a = now_ns();
		sink += tick(start + busy);
		in_tick += now_ns() - a;
	}
	printf("truth tick_wall=%.5f\n", (double)in_tick / (double)(now_ns() - t0));
}

/* sleep: half busy, half blocked, on absolute deadlines (EINTR-safe) */
NOIPA void busy_phase(uint64_t until);
NOIPA void busy_phase(uint64_t until)
{
	while (now_ns() < until)
		sink += leaf_a(2000);
}

NOIPA void sleep_phase(uint64_t until);
NOIPA void sleep_phase(uint64_t until)
{
	struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

NOIPA static void run_sleep(void)
{
	const uint64_t half = 5000000u;
	uint64_t t0 = now_ns(), t = t0, end = t + (uint64_t)(seconds * 1e9), asleep = 0;
	uint64_t c0 = cpu_ns();
	while (t < end) {
		busy_phase(t + half);
		uint64_t a = now_ns();
		sleep_phase(t + 2 * half);
		asleep += now_ns() - a;
		t += 2 * half;
	}
	uint64_t wall = now_ns() - t0;
	printf("truth sleep_wall=%.5f cpu_share=%.5f\n", (double)asleep / (double)wall,
	       (double)(cpu_ns() - c0) / (double)wall);
}

/* lock: the holder keeps the mutex 4 ms of every ~4.1 ms; the waiter mostly waits */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int lock_done;

NOIPA void holder_work(void);
NOIPA void holder_work(void)
{
	uint64_t until = now_ns() + 4000000u;
	while (now_ns() < until)
		sink += leaf_a(2000);
}

static void *holder(void *arg)
{
	(void)arg;
	while (!lock_done) {
		pthread_mutex_lock(&mu);
		holder_work();
		pthread_mutex_unlock(&mu);
		sink += leaf_b(20000);
	}
	return NULL;
}

NOIPA void lock_waiter(void);
NOIPA void lock_waiter(void)
{
	pthread_mutex_lock(&mu);
	sink += leaf_b(1000);
	pthread_mutex_unlock(&mu);
}

NOIPA static void run_lock(void)
{
	pthread_t th;
	pthread_create(&th, NULL, holder, NULL);
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	while (now_ns() < end)
		lock_waiter();
	lock_done = 1;
	pthread_join(th, NULL);
}

/* churn: short-lived threads */
static void *short_thread(void *arg)
{
	uint64_t n = (uint64_t)(uintptr_t)arg;
	sink += leaf_a(n);
	return NULL;
}

NOIPA static void run_churn(int width)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	unsigned seed = 12345;
	uint64_t made = 0;
	while (now_ns() < end) {
		pthread_t th[64];
		int n = width > 64 ? 64 : width;
		for (int i = 0; i < n; i++) {
			uint64_t iters = (uint64_t)(rand_r(&seed) % 300) * 1000u;
			if (pthread_create(&th[i], NULL, short_thread, (void *)(uintptr_t)iters))
				n = i;
		}
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		made += (uint64_t)n;
	}
	printf("threads %llu\n", (unsigned long long)made);
}

NOIPA static void run_fork(const char *self, int do_exec)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	int children = 0;
	while (now_ns() < end) {
		pid_t pid = fork();
		if (pid == 0) {
			if (do_exec) {
				execl(self, self, "split", "0.05", (char *)NULL);
				_exit(127);
			}
			uint64_t until = now_ns() + 20000000u;
			while (now_ns() < until)
				sink += leaf_b(2000);
			_exit(0);
		}
		if (pid > 0)
			children++;
		uint64_t until = now_ns() + 100000000u;
		while (now_ns() < until)
			sink += caller_a(UNIT);
		int st;
		while (waitpid(-1, &st, WNOHANG) > 0)
			;
	}
	while (wait(NULL) > 0)
		;
	printf("children %d\n", children);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: nts-work split|fair|alias|sleep|lock|churn|fork|idle "
				"SECONDS [ARG]\n");
		return 1;
	}
	seconds = atof(argv[2]);
	const char *mode = argv[1];
	if (strcmp(mode, "split") == 0)
		run_split();
	else if (strcmp(mode, "fair") == 0)
		run_fair();
	else if (strcmp(mode, "alias") == 0)
		run_alias();
	else if (strcmp(mode, "sleep") == 0)
		run_sleep();
	else if (strcmp(mode, "lock") == 0)
		run_lock();
	else if (strcmp(mode, "churn") == 0)
		run_churn(argc > 3 ? atoi(argv[3]) : 4);
	else if (strcmp(mode, "fork") == 0)
		run_fork(argv[0], argc > 3 && strcmp(argv[3], "exec") == 0);
	else if (strcmp(mode, "execloop") == 0) {
		/* busy up to the exec, so that the sampler signals this thread while it execs:
		 * a sampling signal left pending across execve would kill the new image (its
		 * handler is reset to the default action, which terminates) */
		int left = argc > 3 ? atoi(argv[3]) : 20;
		uint64_t until = now_ns() + (uint64_t)(seconds * 1e9);
		while (now_ns() < until)
			sink += caller_a(UNIT / 10);
		if (left > 0) {
			char n[16];
			snprintf(n, sizeof n, "%d", left - 1);
			execl(argv[0], argv[0], "execloop", argv[2], n, (char *)NULL);
			perror("nts-work: execl");
			return 1;
		}
		printf("generations done\n");
	} else if (strcmp(mode, "idle") == 0) {
		struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	} else {
		fprintf(stderr, "nts-work: unknown mode %s\n", mode);
		return 1;
	}
	return 0;
}
