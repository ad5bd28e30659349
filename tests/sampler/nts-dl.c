/* SPDX-License-Identifier: MIT */
/* nts-dl.c - dlopen/dlclose churn under the sampler (tests/e2e/t508-record-dlclose.sh). One
 * thread loads MODULE, spins in it (dlmod_spin, about 0.3 ms) and unloads it, over and
 * over; another spins in this program; for SECONDS of wall time. A stack walk that read
 * an unloaded object's unwind tables would crash the program: the sampler's dlclose
 * interposer keeps walks off them (sampler.c).
 *
 * Usage: nts-dl MODULE SECONDS
 * Prints "dlclose N" (the unloads that succeeded). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "noipa.h"

static const char *module;
static uint64_t deadline_ns;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOIPA uint64_t local_spin(uint64_t n);
NOIPA uint64_t local_spin(uint64_t n)
{
	uint64_t x = n;
	for (uint64_t i = 0; i < n; i++) {
		x ^= x >> 31;
		x *= 0x9e3779b97f4a7c15ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static void *spinner(void *arg)
{
	(void)arg;
	while (now_ns() < deadline_ns)
		sink += local_spin(100000);
	return NULL;
}

static void *loader(void *arg)
{
	long *unloads = arg;
	while (now_ns() < deadline_ns) {
		void *h = dlopen(module, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "nts-dl: %s\n", dlerror());
			exit(1);
		}
		uint64_t (*spin)(uint64_t) = (uint64_t(*)(uint64_t))dlsym(h, "dlmod_spin");
		if (!spin) {
			fprintf(stderr, "nts-dl: dlmod_spin: %s\n", dlerror());
			exit(1);
		}
		sink += spin(300000);
		if (dlclose(h) == 0)
			++*unloads;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: nts-dl MODULE SECONDS\n");
		return 1;
	}
	module = argv[1];
	deadline_ns = now_ns() + (uint64_t)(atof(argv[2]) * 1e9);
	long unloads = 0;
	pthread_t a, b;
	if (pthread_create(&a, NULL, spinner, NULL) || pthread_create(&b, NULL, loader, &unloads))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("dlclose %ld\n", unloads);
	return 0;
}
