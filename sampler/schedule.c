/* SPDX-License-Identifier: MIT */
/* schedule.c - when each session samples: a seeded random generator, exponential gaps,
 * and the cumulative ideal schedule with bounded catch-up (doc/sampler-design.md §3).
 *
 * A session's ideal sample times are start + phase + the sum of its gaps: the interval
 * (fixed) or exponential draws with the interval as mean (poisson, which cannot alias with
 * a periodic workload: Poisson arrivals see time averages). The schedule is cumulative, so
 * the time a round takes does not drift the rate; a round that is late is taken at once
 * (catch-up) and counted as late when more than half an interval behind; when the sampler
 * falls more than NTS_CATCHUP_MAX intervals behind (a stall, a suspended process), the
 * skipped samples are counted as missed and the schedule restarts from now, instead of
 * firing a burst of back-to-back samples. The seed fixes the phase and every gap, so a
 * run's schedule can be reproduced. Pure computation: no clock reads, no I/O. */
#include "internal.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void nts_rng_seed(nts_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna). */
uint64_t nts_rng_next(nts_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double nts_rng_unit(nts_rng *r)
{
	return (double)(nts_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t nts_rng_exp(nts_rng *r, uint64_t mean_ns)
{
	/* inverse CDF; u < 1 so log1p(-u) is finite (at most 36.7 means) */
	double d = -(double)mean_ns * log1p(-nts_rng_unit(r));
	uint64_t v = (uint64_t)(d + 0.5);
	return v ? v : 1;
}

static uint64_t gap(nts_sched *s)
{
	return s->kind == NTS_SCHED_POISSON ? nts_rng_exp(&s->rng, s->interval_ns) : s->interval_ns;
}

void nts_sched_init(nts_sched *s, int kind, uint64_t interval_ns, uint64_t seed,
		    uint64_t start_ns)
{
	s->kind = kind;
	s->interval_ns = interval_ns;
	s->late = s->missed = s->taken = 0;
	s->max_behind_ns = 0;
	nts_rng_seed(&s->rng, seed);
	/* First sample: a random phase in the first interval for a fixed schedule (as Go's
	 * per-thread timers, so short-lived sessions are not biased to their start), an
	 * exponential gap for Poisson (memoryless from the start). */
	if (kind == NTS_SCHED_POISSON)
		s->next_ns = start_ns + nts_rng_exp(&s->rng, interval_ns);
	else
		s->next_ns = start_ns + 1 + (uint64_t)(nts_rng_unit(&s->rng) * (double)interval_ns);
}

uint64_t nts_sched_advance(nts_sched *s, uint64_t now)
{
	uint64_t behind = now > s->next_ns ? now - s->next_ns : 0;
	s->taken++;
	if (behind > s->interval_ns / 2)
		s->late++;
	if (behind > s->max_behind_ns)
		s->max_behind_ns = behind;
	s->next_ns += gap(s);
	if (now > s->next_ns && now - s->next_ns > NTS_CATCHUP_MAX * s->interval_ns) {
		uint64_t skipped = (now - s->next_ns) / s->interval_ns + 1;
		s->missed += skipped;
		if (s->kind == NTS_SCHED_POISSON)
			s->next_ns = now + gap(s);
		else
			s->next_ns += skipped * s->interval_ns; /* keep the phase */
	}
	return behind;
}
