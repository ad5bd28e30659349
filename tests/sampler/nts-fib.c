/* SPDX-License-Identifier: MIT */
/* nts-fib.c - workloads for the whole-stack tests (t660): recursive code built as most
 * programs are (gcc -g -O2, no frame pointers), so that a sample lands often in a
 * prologue or an epilogue (fib's leaf calls are mostly both), in a signal handler, and in
 * PLT stubs. Every stack of a sample must reach main, start_thread or clone.
 *
 * Usage: nts-fib MODE SECONDS [END]
 *   fib      fib(27) over and over on the main thread
 *   threads  the same on two threads (the main thread waits in pthread_join)
 *   signal   fib(20) in a SIGALRM handler every 2 ms (setitimer), fib(27) meanwhile
 *   plt      calls through the PLT (strlen, memchr of libc) in a loop, with fib(15)
 * END, how the program ends (t661): return (the default), _exit, _Exit, exit_group (the
 * raw system call), sigterm (raise(SIGTERM), the default action), or mainexit (the work runs on a second thread and the main thread
 * ends with pthread_exit first).
 * Prints the sum of what it computed, so that nothing is optimised away. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "noipa.h"

static volatile uint64_t sink;
static volatile sig_atomic_t handler_runs;

NOIPA long fib(int n);
NOIPA long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double secs;

static void *worker(void *arg)
{
	(void)arg;
	uint64_t s = 0;
	double end = now_s() + secs;
	while (now_s() < end)
		s += (uint64_t)fib(27);
	sink += s;
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	sink += (uint64_t)fib(20);
	handler_runs++;
}

/* a string whose length the compiler cannot know */
static char text[64];

NOIPA uint64_t plt_calls(int n);
NOIPA uint64_t plt_calls(int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++) {
		s += strlen(text + (i & 7));
		s += (uint64_t)(uintptr_t)memchr(text, 'z', sizeof text - 1) & 1;
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: nts-fib fib|threads|signal|plt SECONDS [END]\n");
		return 1;
	}
	const char *mode = argv[1];
	const char *how = argc == 4 ? argv[3] : "return";
	secs = atof(argv[2]);
	memset(text, 'a', sizeof text - 1);
	if (strcmp(how, "mainexit") == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, worker, NULL))
			return 3;
		pthread_exit(NULL);
	}
	if (strcmp(mode, "fib") == 0) {
		worker(NULL);
	} else if (strcmp(mode, "threads") == 0) {
		pthread_t th[2];
		for (int i = 0; i < 2; i++)
			if (pthread_create(&th[i], NULL, worker, NULL))
				return 3;
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
	} else if (strcmp(mode, "signal") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = {{0, 2000}, {0, 2000}};
		setitimer(ITIMER_REAL, &it, NULL);
		worker(NULL);
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_REAL, &off, NULL);
		printf("handler runs %d\n", (int)handler_runs);
	} else if (strcmp(mode, "plt") == 0) {
		uint64_t s = 0;
		double end = now_s() + secs;
		while (now_s() < end)
			s += plt_calls(20000) + (uint64_t)fib(15);
		sink += s;
	} else {
		fprintf(stderr, "nts-fib: unknown mode '%s'\n", mode);
		return 1;
	}
	printf("sum %llu\n", (unsigned long long)sink);
	fflush(stdout);
	if (strcmp(how, "_exit") == 0)
		_exit(0);
	if (strcmp(how, "_Exit") == 0)
		_Exit(0);
	if (strcmp(how, "exit_group") == 0)
		syscall(SYS_exit_group, 0);
	if (strcmp(how, "sigterm") == 0)
		raise(SIGTERM);
	return 0;
}
