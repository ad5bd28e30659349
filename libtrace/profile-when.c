/* SPDX-License-Identifier: MIT */
/* profile-when.c - when each group's samples happened (nt_profile_opts.when, for
 * nettrace-tree --when): a sparse histogram per group over one growing time grid, kept
 * while reading and sorted at finish (nt_profile_when_grid). */
#include "profile-int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ time histograms */

/* When each group's samples happened (opts.when), for nettrace-tree --when.
 *
 * Design: a profile aggregates samples into groups without timestamps, and when
 * streaming the time range is only known at the end. Two ways to keep time: record a
 * (group, timestamp) pair per sample (exact, but memory grows with the samples: 16 bytes
 * each, hundreds of MB for a long trace), or give each group a histogram over a common
 * grid whose span grows. We do the latter, sparsely: one grid of NT_WHEN_FINE buckets of
 * width 2^k ns starts at the first sample recorded with width 1 ns; a sample beyond its
 * end doubles the width (merging pairs of buckets), one before its start doubles it
 * towards the past (the old grid becomes the right half). Within a session samples
 * arrive in time order, so widening happens at most ~64 times, each a pass over the
 * entries. A hash table holds only non-empty (group, bucket) pairs: memory is bounded by
 * min(samples, groups x NT_WHEN_FINE), never grows with samples alone, and a trace
 * short enough to fit the first grids keeps its full resolution. The data then spans at
 * least half the grid (a quarter after widening towards the past), >= 256 buckets:
 * enough to rebin into NT_WHEN_MAX_BUCKETS display buckets.
 * Measured on a generated 200 MB trace (17 M samples, 25 k groups, 1150 s): 2 M
 * entries, peak RSS 120 MB instead of 14 MB, +40% CPU (hash probes that miss the cache);
 * pairs per sample would have taken 270 MB. */

/* Widest fine bucket: NT_WHEN_FINE x 2^52 ns = 2^62 ns (146 years) still fits int64. */
#define WHEN_MAX_WIDTH ((uint64_t)1 << 52)

static uint64_t when_hash(uint64_t key)
{
	return nt_mix64(key ^ 0x2545f4914f6cdd1dull);
}

/* Rebuilds the hash table over went[0..nwent) (after a widening changed keys, or to
 * grow it), merging entries whose keys became equal. Returns 0 or -1 (no memory). */
static int when_rehash(nt_profile *p, size_t cap)
{
	uint32_t *ht = calloc(cap, sizeof(uint32_t));
	if (!ht)
		return -1;
	size_t n = 0; /* entries kept, compacted in place (n <= i) */
	for (size_t i = 0; i < p->nwent; i++) {
		pwhen e = p->went[i];
		size_t k = (size_t)when_hash(e.key) & (cap - 1);
		while (ht[k] && p->went[ht[k] - 1].key != e.key)
			k = (k + 1) & (cap - 1);
		if (ht[k]) {
			p->went[ht[k] - 1].samples += e.samples;
			continue;
		}
		p->went[n] = e;
		ht[k] = (uint32_t)++n;
	}
	p->nwent = n;
	free(p->when_ht);
	p->when_ht = ht;
	p->when_htcap = cap;
	return 0;
}

/* Doubles the grid's width, towards the past when left. Returns 0 or -1 (no memory). */
static int when_widen(nt_profile *p, int left)
{
	for (size_t i = 0; i < p->nwent; i++) {
		uint64_t key = p->went[i].key;
		uint64_t b = key & 0xffffffffu;
		b = left ? NT_WHEN_FINE / 2 + b / 2 : b / 2;
		p->went[i].key = (key & ~(uint64_t)0xffffffffu) | b;
	}
	if (left)
		p->when_origin -= (int64_t)(NT_WHEN_FINE * p->when_width);
	p->when_width *= 2;
	return p->when_htcap ? when_rehash(p, p->when_htcap) : 0;
}

/* Counts one sample of group gi at t (ns since its session's start). Returns 0 or -1. */
int ntp_when_add(nt_profile *p, int64_t gi, int64_t t)
{
	if (!p->when_started) {
		p->when_started = 1;
		p->when_origin = t;
		p->when_width = 1;
	}
	/* Widen until t fits; past WHEN_MAX_WIDTH (absurd timestamps) t is clamped to the
	 * grid's first or last bucket instead. */
	uint64_t b;
	for (;;) {
		uint64_t span = NT_WHEN_FINE * p->when_width;
		if (t < p->when_origin) {
			if (p->when_width >= WHEN_MAX_WIDTH ||
			    p->when_origin < INT64_MIN + (int64_t)span) {
				b = 0;
				break;
			}
			if (when_widen(p, 1))
				return -1;
		} else if ((uint64_t)t - (uint64_t)p->when_origin >= span) {
			if (p->when_width >= WHEN_MAX_WIDTH) {
				b = NT_WHEN_FINE - 1;
				break;
			}
			if (when_widen(p, 0))
				return -1;
		} else {
			b = ((uint64_t)t - (uint64_t)p->when_origin) / p->when_width;
			break;
		}
	}
	uint64_t key = ((uint64_t)gi << 32) | b;
	/* A group's samples come in time order, mostly several per fine bucket: its last
	 * entry is the likely one (checked, as widening moves entries). */
	uint32_t last = p->groups[gi].when_last;
	if (last && last <= p->nwent && p->went[last - 1].key == key) {
		p->went[last - 1].samples++;
		return 0;
	}
	if ((p->nwent + 1) * 2 > p->when_htcap &&
	    when_rehash(p, p->when_htcap ? p->when_htcap * 2 : 1024))
		return -1;
	size_t k = (size_t)when_hash(key) & (p->when_htcap - 1);
	while (p->when_ht[k]) {
		pwhen *e = &p->went[p->when_ht[k] - 1];
		if (e->key == key) {
			e->samples++;
			p->groups[gi].when_last = p->when_ht[k];
			return 0;
		}
		k = (k + 1) & (p->when_htcap - 1);
	}
	if (p->nwent >= UINT32_MAX - 1 ||
	    nt_grow((void **)&p->went, &p->wentcap, p->nwent + 1, sizeof(pwhen)))
		return -1;
	p->went[p->nwent].key = key;
	p->went[p->nwent].samples = 1;
	p->when_ht[k] = (uint32_t)++p->nwent;
	p->groups[gi].when_last = (uint32_t)p->nwent;
	return 0;
}

static int cmp_pwhen(const void *a, const void *b)
{
	uint64_t x = ((const pwhen *)a)->key, y = ((const pwhen *)b)->key;
	return x < y ? -1 : x > y;
}

/* The entries become the bins in place (same size: a large trace holds millions). */
_Static_assert(sizeof(pwhen) == sizeof(nt_when_bin), "pwhen and nt_when_bin differ in size");

/* Finishing: sorts the entries by (group, bucket) and turns them into when_bins with
 * per-group offsets; fills the grid summary. Returns 0 or -1 (no memory). */
int ntp_when_finish(nt_profile *p)
{
	nt_when_grid *gr = &p->when_grid;
	memset(gr, 0, sizeof *gr);
	gr->origin_ns = p->when_origin;
	gr->width_ns = p->when_width ? p->when_width : 1;
	gr->nbuckets = NT_WHEN_FINE;
	free(p->when_ht);
	p->when_ht = NULL;
	p->when_htcap = 0;
	p->when_off = calloc(p->ngroups + 1, sizeof(size_t));
	if (!p->when_off)
		return -1;
	if (p->nwent)
		qsort(p->went, p->nwent, sizeof(pwhen), cmp_pwhen);
	else if (!(p->went = malloc(sizeof(pwhen))))
		return -1;
	uint32_t lo = UINT32_MAX, hi = 0;
	for (size_t i = 0; i < p->nwent; i++) {
		pwhen e = p->went[i];
		uint32_t g = (uint32_t)(e.key >> 32), b = (uint32_t)e.key;
		nt_when_bin bin;
		memset(&bin, 0, sizeof bin);
		bin.samples = e.samples;
		bin.bucket = b;
		memcpy(&p->went[i], &bin, sizeof bin); /* from here on, went[i] is a bin */
		p->when_off[g + 1]++;
		gr->samples += e.samples;
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	for (size_t g = 0; g < p->ngroups; g++)
		p->when_off[g + 1] += p->when_off[g];
	gr->first = p->nwent ? lo : 0;
	gr->last = hi;
	p->when_bins = (nt_when_bin *)(void *)p->went;
	p->went = NULL;
	p->nwent = p->wentcap = 0;
	return 0;
}

int nt_profile_when_grid(nt_profile *p, nt_when_grid *out, nt_error *err)
{
	nt_error_clear(err);
	if (!p || !out) {
		NT_ASSERT(p && out);
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_profile_when_grid: NULL argument");
	}
	if (!p->o.when)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "the profile keeps no time histograms (nt_profile_opts.when)");
	int rc = nt_profile_finish(p, err);
	if (rc)
		return rc;
	if (nt_out_store(out, &p->when_grid, sizeof p->when_grid, sizeof p->when_grid))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "nt_profile_when_grid: out->sz is not set (NT_INIT)");
	return 0;
}
