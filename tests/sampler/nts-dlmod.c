/* SPDX-License-Identifier: MIT */
/* nts-dlmod.c - the shared object tests/sampler/nts-dl loads and unloads over and over
 * while it is sampled (tests/e2e/t508-record-dlclose.sh): one function that spins, so
 * samples land in the object while it comes and goes. */
#include <stdint.h>

uint64_t dlmod_spin(uint64_t n);
uint64_t dlmod_spin(uint64_t n)
{
	uint64_t x = n;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}
