/* SPDX-License-Identifier: MIT */
/* nettrace-example.c - a small program to profile (./run.sh demo records it): named
 * threads that compute, sleep, contend on a lock and wait for I/O, so that one recording
 * shows each kind of time.
 *
 *   compute     mandelbrot rows and a sort, all CPU
 *   sleeper     wakes every 10 ms, works 2 ms, sleeps again
 *   lock-a/-b   share one mutex: each works 3 ms holding it, then 1 ms without it
 *   io-reader   reads a pipe that io-writer feeds a few bytes every 5 ms
 *
 * Usage: nettrace-example [SECONDS]   (default 2) */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double run_seconds = 2;
static volatile int stopping;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---- compute */
__attribute__((noinline)) static int mandel_point(double cr, double ci)
{
	double zr = 0, zi = 0;
	int n = 0;
	while (n < 200 && zr * zr + zi * zi < 4) {
		double t = zr * zr - zi * zi + cr;
		zi = 2 * zr * zi + ci;
		zr = t;
		n++;
	}
	return n;
}

__attribute__((noinline)) static uint64_t mandel_row(int y)
{
	uint64_t sum = 0;
	for (int x = 0; x < 400; x++)
		sum += (uint64_t)mandel_point(-2.0 + x * 3.0 / 400, -1.2 + y * 2.4 / 300);
	return sum;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void sort_numbers(uint32_t *v, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = seed;
	}
	qsort(v, n, sizeof *v, cmp_u32);
}

static void *compute(void *arg)
{
	(void)arg;
	static uint32_t v[20000];
	uint32_t seed = 1;
	for (int y = 0; !stopping; y = (y + 1) % 300) {
		sink += mandel_row(y);
		if (y % 10 == 0)
			sort_numbers(v, sizeof v / sizeof v[0], seed++);
	}
	return NULL;
}

/* ---- sleeper */
__attribute__((noinline)) static void short_task(void)
{
	uint64_t until = now_ns() + 2000000u;
	while (now_ns() < until)
		sink += (uint64_t)mandel_point(-0.5, 0.5);
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (uint64_t t = now_ns(); !stopping; t += 10000000u) {
		short_task();
		sleep_until(t + 10000000u);
	}
	return NULL;
}

/* ---- lock contention */
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void update_shared_state(void)
{
	uint64_t until = now_ns() + 3000000u;
	while (now_ns() < until)
		sink += (uint64_t)mandel_point(0.3, 0.5);
}

__attribute__((noinline)) static void prepare_update(void)
{
	uint64_t until = now_ns() + 1000000u;
	while (now_ns() < until)
		sink += (uint64_t)mandel_point(-0.7, 0.2);
}

static void *locker(void *arg)
{
	(void)arg;
	while (!stopping) {
		prepare_update();
		pthread_mutex_lock(&shared);
		update_shared_state();
		pthread_mutex_unlock(&shared);
	}
	return NULL;
}

/* ---- I/O */
static int pipefd[2];

__attribute__((noinline)) static size_t consume(const char *buf, size_t n)
{
	size_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += (unsigned char)buf[i];
	return s;
}

static void *io_reader(void *arg)
{
	(void)arg;
	char buf[256];
	ssize_t n;
	while ((n = read(pipefd[0], buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		sink += consume(buf, (size_t)n);
	}
	return NULL;
}

static void *io_writer(void *arg)
{
	(void)arg;
	for (uint64_t t = now_ns(); !stopping; t += 5000000u) {
		ssize_t w = write(pipefd[1], "record", 6);
		(void)w;
		sleep_until(t + 5000000u);
	}
	close(pipefd[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		run_seconds = atof(argv[1]);
	if (!(run_seconds > 0) || pipe(pipefd)) {
		fprintf(stderr, "usage: nettrace-example [SECONDS]\n");
		return 1;
	}
	struct {
		const char *name;
		void *(*fn)(void *);
		pthread_t th;
	} t[] = {{"compute", compute, 0},     {"sleeper", sleeper, 0},
		 {"lock-a", locker, 0},       {"lock-b", locker, 0},
		 {"io-reader", io_reader, 0}, {"io-writer", io_writer, 0}};
	size_t n = sizeof t / sizeof t[0];
	for (size_t i = 0; i < n; i++) {
		if (pthread_create(&t[i].th, NULL, t[i].fn, NULL)) {
			fprintf(stderr, "nettrace-example: cannot create a thread\n");
			return 1;
		}
		pthread_setname_np(t[i].th, t[i].name);
	}
	sleep_until(now_ns() + (uint64_t)(run_seconds * 1e9));
	stopping = 1;
	for (size_t i = 0; i < n; i++)
		pthread_join(t[i].th, NULL);
	printf("nettrace-example: %zu threads ran for %.1f s\n", n, run_seconds);
	return 0;
}
