/* SPDX-License-Identifier: MIT */
/* bench-sampler-work.c - the CPU-bound multi-threaded workload of bench/bench-sampler.sh:
 * THREADS threads each run a fixed amount of work (no clock reads, no I/O, no locks),
 * through a call chain about 12 frames deep ending in frameless leaves, as ordinary
 * -O2 code with frame pointers. The profilers' overhead is the difference in the time
 * this takes.
 *
 * Usage: bench-sampler-work THREADS MILLION_ITERATIONS_PER_THREAD
 * Prints "checksum X" (so the work cannot be optimised away). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#define NOIPA __attribute__((noinline)) /* clang has no noipa */
#else
#define NOIPA __attribute__((noipa))
#endif

NOIPA uint64_t bw_leaf_mix(uint64_t x, uint64_t n);
NOIPA uint64_t bw_leaf_mix(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdull;
		x ^= x >> 29;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOIPA uint64_t bw_leaf_add(uint64_t x, uint64_t n);
NOIPA uint64_t bw_leaf_add(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* depth levels of ordinary frames above the leaves */
NOIPA uint64_t bw_descend(uint64_t x, int depth, uint64_t n);
NOIPA uint64_t bw_descend(uint64_t x, int depth, uint64_t n)
{
	if (depth == 0)
		return (x & 1) ? bw_leaf_mix(x, n) : bw_leaf_add(x, n);
	return bw_descend(x + (uint64_t)depth, depth - 1, n) + 1;
}

static uint64_t per_thread;

static void *run(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull;
	const uint64_t chunk = 1000; /* iterations per descent */
	for (uint64_t done = 0; done < per_thread; done += chunk)
		x = bw_descend(x, 10, chunk);
	return (void *)(uintptr_t)x;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: bench-sampler-work THREADS MILLION_ITERATIONS\n");
		return 1;
	}
	int n = atoi(argv[1]);
	per_thread = (uint64_t)(atof(argv[2]) * 1e6);
	if (n < 1 || n > 256)
		return 1;
	pthread_t th[256];
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, run, (void *)(uintptr_t)(i + 1));
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(th[i], &r);
		sum += (uint64_t)(uintptr_t)r;
	}
	printf("checksum %llx\n", (unsigned long long)sum);
	return 0;
}
