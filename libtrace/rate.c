/* SPDX-License-Identifier: MIT */
/* rate.c - infer the real sampling interval of a SampleProfiler trace from its samples.
 * Input: samples in timestamp order (raw ticks, sampled thread, sampler thread); output:
 * nt_rate_info (mean/median/p10/p90 of the round-to-round interval, CV, schedule guess,
 * pauses). Not here: reading samples (reader.c), deciding what is a sample (payload.c).
 *
 * Why (spec §8): the runtime's sampler thread suspends the runtime, writes one ThreadSample
 * per managed thread (ThreadId = sampled thread, CaptureThreadId = sampler thread), resumes
 * and only then sleeps the period, so the real period is longer than the declared one and
 * drifts with the thread count (observed medians 1.34-2.0 ms for 1 ms declared; 5.3 ms and
 * 33 ms in older Windows traces).
 *
 * Sections, in order: constants and thresholds; state; histograms; the gap heap;
 * streaming (nt_rate_add: round grouping); finalisation (nt_rate_result: gaps, statistics,
 * schedule guess); the public API.
 *
 * Model. A "round" is one sampler wake-up: the samples of one capture thread that are close
 * together in time. Rounds are kept per capture thread (concatenated sessions have
 * different sampler threads, and a pause between sessions is not a sampling interval).
 * A new round starts when
 *  (a) a thread already sampled in the current round appears again (the common case: the
 *      runtime samples each thread once per round; this rule alone splits back-to-back
 *      rounds correctly however short the interval, which matters for Poisson schedules
 *      where P(X < 0.3 mean) = 26%), or
 *  (b) the delta from the previous sample of that capture thread exceeds a threshold that
 *      adapts to both scales being separated: the spacing of samples inside a round (stack
 *      walk time, microseconds) and the pause between rounds (the sleep, milliseconds).
 *      See rt_update_threshold(). Rule (b) only matters when the set of sampled threads changes
 *      from round to round (threads without managed frames produce no sample).
 * Round time = timestamp of its first sample; the statistics are over round-to-round deltas.
 *
 * Memory is bounded whatever the sample count: two log-scale histograms (1000 bins per
 * decade, 1 ns .. 1000 s: quantiles within 0.12%), exact sums, the deltas that may be gaps
 * (longer than twice the running median: at most NT_RATE_MAX_GAPS of them, the longest, in
 * a min-heap that grows as needed), per-thread/per-capture-thread state capped at
 * RT_MAX_THREADS, and fixed lookup tables (about 1.2 MiB, mostly untouched pages).
 *
 * Cost: nt_rate_add() runs for every sample, so its usual case, the sampler's next thread
 * in the same round or the next (rt_add_steady()), is a leaf function with five
 * comparisons against state kept in the estimator's first cache line, a ln() from a table
 * and a short series (rt_log()), and a histogram bin from a table of tick-count buckets
 * (rt_count()); everything else goes to rt_add(). Each shortcut gives the same doubles as
 * the general computation, so the statistics do not depend on which path a sample took. */
#include "internal.h"

#include <math.h>

/* ---------------------------------------------------------------------------------------
 * Constants and thresholds
 * ------------------------------------------------------------------------------------- */

/* Histogram: bin 0 holds deltas < 1 ns (equal timestamps, sub-ns ticks of a 4 GHz clock),
 * bins 1..12000 cover [1 ns, 1000 s) at 1000 bins per decade (each bin is 0.23% wide, so a
 * quantile interpolated inside its bin is off by at most ~0.12%), the last bin >= 1000 s. */
#define RT_BINS_PER_DECADE 1000
#define RT_DECADES 12
#define RT_NBINS (RT_BINS_PER_DECADE * RT_DECADES + 2)

/* Distinct sampled threads and capture threads tracked. Real processes have at most a few
 * thousand threads; the cap bounds memory (about 3 MiB) if a corrupt or synthetic file
 * gives every sample a new thread id. Beyond it, samples of untracked threads still count
 * in `samples` but cannot start rounds by rule (a) and give no per-thread deltas, and
 * `threads` stops growing. */
#define RT_MAX_THREADS 65536u
#define RT_MAX_CAPTURES 65536u
/* rt->cur_ix with rt->cur = &rt->nocap: no thread's cap (an index below RT_MAX_CAPTURES,
 * or UINT32_MAX for the dummy), so rt_add_steady() takes no sample then */
#define RT_NOCAP_IX (UINT32_MAX - 1)

/* The round-splitting scales are exponentially weighted means of log(delta), weight 1/32
 * (they settle within ~100 rounds), each update clipped to +-ln 4 around the current value
 * so one stall or one back-to-back round moves the threshold by at most ~4%. */
#define RT_LN2 0.69314718055994531
#define RT_LN4 1.3862943611198906
#define RT_LN16 2.7725887222397812
#define RT_EWMA_W (1.0 / 32.0)
#define RT_LOG_CLIP RT_LN4

/* ln(delta) without libm: nt_rate_add() needs it for every sample (rule (b) and the
 * EWMAs); log() was a tenth of nettrace-fold, and a memo table of recent deltas that
 * replaced it missed the L1 cache on most lookups (13% of the fold). delta = m * 2^e with
 * m in [1, 2); the top RT_LN_BITS bits of m pick c near m, so ln(delta) = e ln 2 - log(1/c)
 * + ln(1 + u) with u = m/c - 1, |u| < 2^-(RT_LN_BITS+1), and five terms of the series of
 * ln(1 + u) leave an error below u^6/6 < 1e-17: the result is within a few ulps of log()'s.
 * The round decisions compare it with thresholds that are means of such values, so they can
 * differ from log()'s only for a delta within ~1e-15 of a threshold (a tick is a relative
 * 1e-5 of a 100 us threshold at 1 GHz): the inferred rates of every trace in data/ and of
 * the generated benchmark traces are unchanged. The table is indexed by the top bits of the
 * double, exponent and RT_LN_BITS of mantissa together (e = 0..64 for delta in [1, 2^64]),
 * and holds what the formula needs of e and c: 2^-e / c, so delta * (2^-e / c) is m / c
 * rounded once, as m * (1 / c) is (scaling by 2^-e is exact), and e ln 2 - log(1/c), the
 * same double as computed per sample before (1 / c and -log(1/c) from libm at start-up).
 * 65 x 2^8 entries of 16 bytes: 260 KiB, of which a delta's few exponents are read. */
#define RT_LN_BITS 8
#define RT_LN_EXPS 65
typedef struct rt_lnent {
	double sinv; /* 2^-e / c, c the middle of the entry's mantissa interval */
	double base; /* e ln 2 - log(1 / c) */
} rt_lnent;

/* Mantissa bits that rt_bin_fast() looks up: 2^10 entries of 8 bytes, each spanning 0.42
 * bins. */
#define RT_MANT_BITS 10

/* The interior of regular bin k (0-based) for rt_bin_fast(): the values more than a
 * relative 1e-9 inside its edges 10^(k/1000) and 10^((k+1)/1000), products computed once
 * at start-up (the same doubles a per-sample multiplication gives). Entry k and k + 1 are
 * one 32-byte read; the entry after the last regular bin is empty (lo = HUGE_VAL). */
typedef struct rt_inner {
	double lo, hi;
} rt_inner;

/* The histogram bin of a tick count from a table (rt_count()), without arithmetic: the
 * count's double cut to its exponent and RT_BKT_BITS mantissa bits is a bucket, a relative
 * 2^-13 wide (1/25 of a bin), and most buckets' counts all fall in the interior (rt_inner)
 * of one bin once converted to ns, which is then every such count's bin. An entry
 * (uint16_t) is 0 until a count of the bucket first comes, then bin + 1, or RT_BKT_EDGE
 * for a bucket that a bin's edge (or 1 ns, or 1e12 ns) cuts: one in ~25, whose counts go
 * to rt_bin_fast(). Counts in [1, 2^40): 640 KiB, of which only the pages of the counts
 * seen are touched (calloc). */
#define RT_BKT_BITS 13
#define RT_BKT_N (40u << RT_BKT_BITS)
#define RT_BKT_EDGE 0xFFFFu

/* Timestamps of one capture thread going backwards are ignored (the API asks for timestamp
 * order). So many in a row means the clock was reset (e.g. a second session reusing the
 * sampler thread id): the capture thread's stream restarts, with no delta across it. */
#define RT_BACKWARDS_RESET 64u

/* Schedule guess (see rt_classify() for the reasoning behind each number). */
#define RT_MIN_ROUNDS 10      /* fewer rounds: "unknown" */
#define RT_FIXED_CV 0.05      /* CV below this: "fixed" */
#define RT_POISSON_R10_LO 0.07 /* exponential: p10/median = ln(10/9)/ln 2 = 0.152 */
#define RT_POISSON_R10_HI 0.30
#define RT_POISSON_R90_LO 2.3  /* exponential: p90/median = ln 10/ln 2 = 3.32 */
#define RT_POISSON_R90_HI 5.0
#define RT_POISSON_CV_LO 0.75 /* exponential: CV = 1 */
#define RT_POISSON_CV_HI 1.35
/* Gap cut-off for a Poisson schedule: an interval is a pause only if an exponential with
 * the observed mean would exceed it with probability alpha/n over the n intervals, i.e.
 * fewer than alpha = 1% false pauses per trace. */
#define RT_POISSON_GAP_ALPHA 0.01

/* ---------------------------------------------------------------------------------------
 * State
 * ------------------------------------------------------------------------------------- */

/* One sampled thread. */
typedef struct rt_thread {
	uint64_t id;
	uint64_t last_ts;      /* timestamp of its previous sample */
	uint64_t round_serial; /* capture-thread round its previous sample belonged to */
	uint32_t cap;          /* index of the capture thread that sampled it last */
	uint32_t next;         /* index + 1 of the thread sampled after it last time, 0 none */
} rt_thread;

/* One capture (sampler) thread: its own stream of rounds. */
typedef struct rt_capture {
	uint64_t last_ts;      /* timestamp of its previous accepted sample */
	uint64_t round_ts;     /* first sample of the current round */
	uint64_t round_serial; /* current round number (never reused, even after a restart) */
	uint32_t nbackwards;   /* consecutive samples with a timestamp going backwards */
	uint8_t started;       /* a round is open */
	uint8_t has_intra;     /* log_intra is set */
	uint8_t has_inter;     /* log_inter is set */
	double log_intra;      /* EWMA of ln(delta ticks) inside rounds (rule (b)) */
	double log_inter;      /* EWMA of ln(delta ticks), last sample -> next round's first */
	double log_thr;        /* ln of the rule (b) threshold in ticks (rt_update_threshold) */
} rt_capture;

/* A candidate pause: a round-to-round delta longer than twice the running median (among
 * the NT_RATE_MAX_GAPS longest). */
typedef struct rt_cand {
	uint64_t len;   /* delta, ticks */
	uint64_t start; /* timestamp of the round before it */
} rt_cand;

/* Statistics of the round deltas for one gap cut-off (rt_compute()). */
typedef struct rt_stats {
	double mean_ns, cv, p10_ns, p50_ns, p90_ns;
	size_t ngaps;           /* listed gaps (in rt->res_gaps) */
	uint64_t gaps_count;    /* all gaps, listed or not */
	long double gaps_ticks; /* total length of all gaps, listed or not */
} rt_stats;

struct nt_rate {
	/* What rt_add_steady() reads of the estimator, together: the capture thread it may
	 * continue (rt->nocap if none) and the thread it expects (0: the dummy). */
	rt_capture *cur;
	uint64_t cur_id;        /* cur's capture thread id */
	uint32_t cur_ix;        /* cur's index into caps */
	uint32_t guess;         /* threads[last_thread - 1].next, 0 none */
	rt_thread *threads;     /* tslots + 1; threads[-1] is a dummy that never matches */
	rt_lnent *lns;          /* RT_LN_EXPS x 2^RT_LN_BITS intervals of deltas (rt_log) */
	uint16_t *bkt;          /* RT_BKT_N buckets' bins + 1 (rt_count) */
	uint64_t miss_ticks;    /* rt_count_miss()'s last count and its bin + 1 (0: none) */
	size_t miss_bin;
	uint64_t *thist;        /* RT_NBINS: per-thread consecutive-sample deltas (median only) */
	uint64_t tcount;
	uint64_t tmin, tmax;    /* ticks (UINT64_MAX and 0 before the first) */
	uint64_t samples;       /* fed, including ignored ones */
	uint64_t rounds;        /* all capture threads */
	uint32_t last_thread;   /* index + 1 of the previous sample's thread, 0 none */
	int ns_ticks;           /* a tick is 1 ns (ns_per_tick == 1): rt_ns_u() converts only */
	double ns_int;          /* ns_per_tick when a whole number in [2, 1024], else 0 */

	uint64_t declared_ns;   /* header's period, a hint for the first round only */
	uint64_t freq;          /* ticks per second, > 0 */
	uint64_t sync_qpc;      /* session start, ticks */
	long double ns_per_tick;
	double log_half_declared; /* ln(declared / 2 in ticks), HUGE_VAL if no declared period */

	uint64_t ndeltas;       /* round-to-round deltas recorded */
	uint64_t ignored;       /* backwards timestamps and duplicates */

	/* Round-to-round deltas: exact sums (long double holds a 64-bit integer exactly on
	 * x86-64 and aarch64, and up to 2^53 ticks elsewhere), histogram, extremes. */
	long double sum;        /* sum of deltas, ticks */
	long double sumk;       /* sum of (delta - shift) */
	long double sumsq;      /* sum of (delta - shift)^2: shifted so the variance of a
				 * near-fixed schedule does not cancel out */
	uint64_t shift;         /* first delta seen */
	uint64_t min_delta;     /* smallest delta, ticks */
	uint64_t *hist;         /* RT_NBINS counts of round deltas, binned in ns */
	uint64_t *scratch;      /* RT_NBINS: hist minus the gaps, at finalisation */


	/* The gap candidates: min-heap on len, at most NT_RATE_MAX_GAPS (grown as needed).
	 * A delta enters when longer than adm_ticks, twice the running median (every final
	 * cut-off is at least 4 x the final median): memory then grows with the pauses, not
	 * with the samples. A delta the running median kept out, or that a full heap pushed
	 * out, is still in the histogram, from which the result counts it. */
	rt_cand *heap;
	size_t nheap, heapcap;
	uint64_t heap_dropped;  /* deltas pushed out of (or never let into) the heap */
	uint64_t adm_ticks;     /* admission threshold (0: everything, at first) */
	uint64_t max_delta;     /* longest delta, ticks */

	nt_idmap thread_map;    /* thread id -> index into threads */
	rt_thread *tslots;      /* cthreads entries: the dummy, then the threads */
	size_t nthreads, cthreads;
	uint64_t untracked;     /* samples of threads beyond RT_MAX_THREADS or lost to ENOMEM */

	nt_idmap cap_map;       /* capture thread id -> index into caps */
	rt_capture *caps;
	size_t ncaps, ccaps;
	long last_cap;          /* index of the previous sample's capture thread, -1 if none */
	uint64_t last_cap_id;
	rt_capture nocap;       /* rt->cur when rt_add_steady() may not take a sample */

	rt_inner *inner;        /* RT_BINS_PER_DECADE * RT_DECADES + 1 bin interiors and */
	double *mant_bins;      /* 2^RT_MANT_BITS bin offsets of mantissas (rt_bin_fast) */

	nt_gap *res_gaps;       /* the gaps of the last result (rescap entries) */
	size_t rescap;
	nt_rate_info info;      /* the last result */
};

/* ---------------------------------------------------------------------------------------
 * Histograms
 * ------------------------------------------------------------------------------------- */

/* (double)v, the same value, by the signed conversion (one instruction on x86-64) when v
 * fits in it: the per-sample path converts three tick counts. */
static inline double rt_u2d(uint64_t v)
{
	return v <= INT64_MAX ? (double)(int64_t)v : (double)v;
}

static double rt_ns(const nt_rate *rt, long double ticks)
{
	return (double)(ticks * rt->ns_per_tick);
}

/* rt_ns() of a tick count, which on a 1 GHz clock is the count itself (the long double
 * product by 1 rounds to the same double). */
static inline double rt_ns_u(const nt_rate *rt, uint64_t ticks)
{
	if (rt->ns_ticks)
		return rt_u2d(ticks);
	/* a whole ns_per_tick N <= 2^10 and ticks < 2^53: (double)ticks is exact and so is
	 * the long double product (< 2^63), so both round the exact product once, alike */
	if (rt->ns_int != 0 && ticks < (1ull << 53))
		return rt_u2d(ticks) * rt->ns_int;
	return rt_ns(rt, ticks);
}

static size_t rt_bin(double ns)
{
	if (!(ns >= 1.0))
		return 0;
	if (ns >= 1e12)
		return RT_NBINS - 1;
	long b = (long)floor(log10(ns) * RT_BINS_PER_DECADE);
	/* log10() rounding at bin edges must not push a value out of the regular range */
	if (b < 0)
		b = 0;
	if (b > RT_BINS_PER_DECADE * RT_DECADES - 1)
		b = RT_BINS_PER_DECADE * RT_DECADES - 1;
	return (size_t)b + 1;
}

/* rt_bin() without its log10() (which, with the log() it calls, was a tenth of
 * nettrace-fold: one per sample for the per-thread histogram). An estimate k of the bin
 * from the exponent and the top RT_MANT_BITS mantissa bits (a table lookup: at most 0.43
 * bins low, so the bin is k or k + 1) is checked against the interiors of bins k and k + 1
 * (rt_inner: edges 10^(k/1000), k = 0..12000, from pow(), within an ulp or two). A value
 * more than a relative 1e-9 inside its bin, 4e-7 bins, is certainly binned so by rt_bin()
 * too, whose log10() is off by less than 1e-11 bins; values nearer an edge (about one in a
 * million) go to rt_bin() itself, so the result is always rt_bin()'s. */
static inline __attribute__((always_inline)) size_t rt_bin_fast(const nt_rate *rt, double ns)
{
	if (__builtin_expect(!(ns >= 1.0) || ns >= 1e12, 0))
		return rt_bin(ns);
	uint64_t bits;
	memcpy(&bits, &ns, sizeof bits);
	/* ns is normal, in [1, 1e12): ns = (1 + mantissa) * 2^e, e in 0..39 */
	int e = (int)(bits >> 52) - 1023;
	size_t top = (size_t)(bits >> (52 - RT_MANT_BITS)) & (((size_t)1 << RT_MANT_BITS) - 1);
	double est = (double)e * (RT_BINS_PER_DECADE * 0.30102999566398120) + rt->mant_bins[top];
	long k = (long)est;
	long last = RT_BINS_PER_DECADE * RT_DECADES - 1;
	if (k < 0)
		k = 0;
	if (k > last)
		k = last;
	const rt_inner *in = &rt->inner[k];
	if (ns > in[0].lo && ns < in[0].hi)
		return (size_t)k + 1;
	if (ns > in[1].lo && ns < in[1].hi)
		return (size_t)k + 2;
	return rt_bin(ns);
}

/* The rt->bkt entry of bucket i (RT_BKT_BITS): the whole tick counts it holds, converted
 * by rt_ns_u() (monotonic: a count between two others has an ns value between theirs),
 * are all in bin 0, all in the last bin, or all in one regular bin's interior, or it is
 * RT_BKT_EDGE. */
static uint16_t rt_bkt_entry(const nt_rate *rt, uint64_t i)
{
	uint64_t lob = (i + (1023ull << RT_BKT_BITS)) << (52 - RT_BKT_BITS);
	uint64_t hib = lob | ((1ull << (52 - RT_BKT_BITS)) - 1);
	double lo, hi;
	memcpy(&lo, &lob, sizeof lo);
	memcpy(&hi, &hib, sizeof hi);
	/* in [1, 2^40) every whole number is a double: the first and last count */
	uint64_t first = (uint64_t)lo, last = (uint64_t)hi;
	if ((double)first < lo)
		first++;
	if (first > last)
		return RT_BKT_EDGE;
	double a = rt_ns_u(rt, first), b = rt_ns_u(rt, last);
	if (b < 1.0)
		return 1; /* bin 0 */
	if (a >= 1e12)
		return RT_NBINS; /* the last bin */
	if (!(a >= 1.0) || !(b < 1e12))
		return RT_BKT_EDGE;
	size_t k = rt_bin_fast(rt, a); /* a regular bin */
	const rt_inner *in = &rt->inner[k - 1];
	return a > in->lo && b < in->hi ? (uint16_t)(k + 1) : RT_BKT_EDGE;
}

/* The bucket of a tick count (RT_BKT_BITS); counts below 1 wrap to a large index. */
static inline uint64_t rt_bkt_index(uint64_t ticks)
{
	double v = rt_u2d(ticks);
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	return (bits >> (52 - RT_BKT_BITS)) - (1023ull << RT_BKT_BITS);
}

/* rt_count() of a count whose bucket's entry is not a bin: first seen (the entry is then
 * worked out), cut by an edge, or beyond the table. A call of its own, so that the
 * per-sample path stays a leaf (this is its tail call). */
static __attribute__((noinline)) void rt_count_miss(nt_rate *rt, uint64_t *h, uint64_t ticks)
{
	/* the count of the last miss again: a sampler on a fixed schedule whose timestamps
	 * are the schedule's gives the same delta every round, and 1 ms is a bin edge (the
	 * bucket of a count on an edge is RT_BKT_EDGE, its bin a log10() in rt_bin()) */
	if (ticks == rt->miss_ticks && rt->miss_bin) {
		h[rt->miss_bin - 1]++;
		return;
	}
	uint64_t i = rt_bkt_index(ticks);
	if (i < RT_BKT_N && !rt->bkt[i])
		rt->bkt[i] = rt_bkt_entry(rt, i);
	size_t b = rt_bin_fast(rt, rt_ns_u(rt, ticks));
	rt->miss_ticks = ticks;
	rt->miss_bin = b + 1;
	h[b]++;
}

/* Counts a delta of ticks in histogram h: h[rt_bin_fast(rt_ns_u(ticks))]++. */
static inline __attribute__((always_inline)) void rt_count(nt_rate *rt, uint64_t *h,
							   uint64_t ticks)
{
	uint64_t i = rt_bkt_index(ticks);
	if (__builtin_expect(i < RT_BKT_N, 1)) {
		unsigned e = rt->bkt[i];
		if (__builtin_expect(e - 1 < RT_BKT_EDGE - 1, 1)) {
			h[e - 1]++;
			return;
		}
	}
	rt_count_miss(rt, h, ticks);
}

/* Lower edge (ns) of regular bin b (1..RT_NBINS-2); geometric mid-point with f = 0.5. */
static double rt_bin_value(size_t b, double f)
{
	return pow(10.0, ((double)(b - 1) + f) / RT_BINS_PER_DECADE);
}

/* Value (ns) at quantile p of histogram h holding total entries; the rank is p*(total-1)
 * between the sorted values (as numpy's default), and inside its bin the entries are
 * taken as spread evenly in log scale. Clamped to [vmin, vmax], the exact extremes, so
 * an all-equal sample gives its exact value. Returns 0 for an empty histogram. */
static double rt_quantile(const uint64_t *h, uint64_t total, double p, double vmin, double vmax)
{
	if (total == 0)
		return 0;
	double rank = p * (double)(total - 1);
	uint64_t cum = 0;
	double v = vmax;
	for (size_t b = 0; b < RT_NBINS; b++) {
		if (!h[b])
			continue;
		if ((double)(cum + h[b]) > rank) {
			if (b == 0)
				v = vmin;
			else if (b == RT_NBINS - 1)
				v = vmax;
			else
				v = rt_bin_value(b, (rank - (double)cum + 0.5) / (double)h[b]);
			break;
		}
		cum += h[b];
	}
	if (v < vmin)
		v = vmin;
	if (v > vmax)
		v = vmax;
	return v;
}

/* ---------------------------------------------------------------------------------------
 * The gap heap: the round deltas longer than twice the running median, the longest
 * NT_RATE_MAX_GAPS of them. The final gap list is exact whenever fewer than
 * NT_RATE_MAX_GAPS deltas exceed the final cut-off and the median did not fall below half
 * of a running estimate; otherwise the deltas left out are counted (and their length
 * estimated) from the histogram.
 * ------------------------------------------------------------------------------------- */

static void rt_heap_sift_down(rt_cand *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && h[l].len < h[m].len)
			m = l;
		if (r < n && h[r].len < h[m].len)
			m = r;
		if (m == i)
			return;
		rt_cand t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void rt_heap_offer(nt_rate *rt, uint64_t len, uint64_t start)
{
	if (len <= rt->adm_ticks) {
		rt->heap_dropped++;
		return;
	}
	if (rt->nheap == rt->heapcap && rt->heapcap < NT_RATE_MAX_GAPS) {
		size_t ncap = rt->heapcap * 2;
		ncap = ncap > NT_RATE_MAX_GAPS ? NT_RATE_MAX_GAPS : ncap;
		rt_cand *nh = realloc(rt->heap, ncap * sizeof *nh);
		if (nh) {
			rt->heap = nh;
			rt->heapcap = ncap;
		}
	}
	rt_cand *h = rt->heap;
	if (rt->nheap < rt->heapcap) {
		size_t i = rt->nheap++;
		h[i].len = len;
		h[i].start = start;
		while (i > 0 && h[(i - 1) / 2].len > h[i].len) {
			rt_cand t = h[i];
			h[i] = h[(i - 1) / 2];
			h[(i - 1) / 2] = t;
			i = (i - 1) / 2;
		}
		return;
	}
	rt->heap_dropped++;
	if (len <= h[0].len)
		return;
	h[0].len = len;
	h[0].start = start;
	rt_heap_sift_down(h, rt->nheap, 0);
}

/* ---------------------------------------------------------------------------------------
 * Streaming
 * ------------------------------------------------------------------------------------- */

#define RT_ADM_FIRST 256
#define RT_ADM_EVERY 4096

/* Records one round-to-round delta (ticks); start = first sample of the earlier round. */
static void rt_record_delta(nt_rate *rt, uint64_t d, uint64_t start)
{
	if (rt->ndeltas == 0) {
		rt->shift = d;
		rt->min_delta = d;
	}
	rt->ndeltas++;
	rt->sum += d;
	long double k = (long double)d - (long double)rt->shift;
	rt->sumk += k;
	rt->sumsq += k * k;
	if (d < rt->min_delta)
		rt->min_delta = d;
	if (d > rt->max_delta)
		rt->max_delta = d;
	rt_count(rt, rt->hist, d);
	/* the admission threshold follows the median, from the histogram every RT_ADM_EVERY
	 * deltas (a scan of its bins: a few ns per delta) once RT_ADM_FIRST are in */
	if (rt->ndeltas >= RT_ADM_FIRST && rt->ndeltas % RT_ADM_EVERY == 0) {
		double m = rt_quantile(rt->hist, rt->ndeltas, 0.5, rt_ns(rt, rt->min_delta),
				       rt_ns(rt, rt->max_delta));
		long double t = 2.0L * (long double)m / rt->ns_per_tick;
		rt->adm_ticks = t >= 1.8e19L ? UINT64_MAX : (uint64_t)t;
	}
	rt_heap_offer(rt, d, start);
}

/* ln(d) for d >= 1 (see RT_LN_BITS). */
static inline __attribute__((always_inline)) double rt_log(const nt_rate *rt, uint64_t d)
{
	double v = rt_u2d(d);
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	/* d >= 1: v is normal, its exponent 0..64 */
	const rt_lnent *t = &rt->lns[(bits >> (52 - RT_LN_BITS)) - (1023ull << RT_LN_BITS)];
	double u = v * t->sinv - 1.0;
	double p = u * (1.0 - u * (0.5 - u * (1.0 / 3 - u * (0.25 - u * 0.2))));
	return t->base + p;
}

/* Moves an EWMA already set towards x (rt_ewma() past its first value). */
static inline void rt_ewma_set(double *est, double x)
{
	/* written as minsd and maxsd do it (x is never NaN): no branches */
	double dx = x - *est;
	dx = dx < RT_LOG_CLIP ? dx : RT_LOG_CLIP;
	dx = dx > -RT_LOG_CLIP ? dx : -RT_LOG_CLIP;
	*est += RT_EWMA_W * dx;
}

/* Moves an EWMA of ln(delta ticks) towards x = ln(delta), delta floored at 1 tick. */
static void rt_ewma(double *est, uint8_t *has, double x)
{
	if (!*has) {
		*est = x;
		*has = 1;
		return;
	}
	rt_ewma_set(est, x);
}

/* Rule (b): a delta from the previous sample above this threshold starts a new round.
 * Kept as ln(ticks) in c->log_thr and recomputed after each estimate update, so a sample
 * costs one log(). With both scales known, the threshold is their geometric mean, the
 * natural boundary between two clusters that are each spread evenly in log scale: 3 us
 * spacing and a 1 ms sleep give 55 us; 0.39 ms walks and 2.3 ms pauses (the .NET Core
 * 3.0 Windows trace in data/traces) give 0.95 ms. It stays at least 4x the in-round
 * spacing (ordinary walk-time jitter must not split a round) and at most half the
 * between-round pause (a delta that long is surely a new wake-up); the upper bound wins.
 * For an exponential schedule the between-round estimate is the geometric mean of the
 * pause, ~0.56 x mean, so with 3 us spacing only rounds closer than ~41 us (4% at a 1 ms
 * mean) are merged, and only if rule (a) does not catch them. Before both scales are
 * known: 16x the spacing (first round of a multi-thread capture), half the pause (one
 * thread so far), half the declared period, or none (rule (a) only). */
static void rt_update_threshold_early(const nt_rate *rt, rt_capture *c);

/* rt_update_threshold() with both scales known (the steady path's). */
static inline void rt_threshold_known(rt_capture *c)
{
	double t = 0.5 * (c->log_intra + c->log_inter);
	if (t < c->log_intra + RT_LN4)
		t = c->log_intra + RT_LN4;
	if (t > c->log_inter - RT_LN2)
		t = c->log_inter - RT_LN2;
	c->log_thr = t;
}

static inline void rt_update_threshold(const nt_rate *rt, rt_capture *c)
{
	if (__builtin_expect(c->has_intra && c->has_inter, 1)) {
		rt_threshold_known(c);
		return;
	}
	rt_update_threshold_early(rt, c);
}

/* rt_update_threshold() before both scales are known: a few times per capture thread. */
static void rt_update_threshold_early(const nt_rate *rt, rt_capture *c)
{
	double half_declared = rt->log_half_declared;
	if (c->has_inter) {
		c->log_thr = c->log_inter - RT_LN2;
	} else if (c->has_intra) {
		c->log_thr = c->log_intra + RT_LN16;
		if (c->log_thr > half_declared)
			c->log_thr = half_declared;
	} else {
		c->log_thr = half_declared;
	}
}

/* The capture thread's index (created on first sight), -1 if untracked; the previous
 * sample's is checked inline by nt_rate_add(). */
static __attribute__((noinline)) long rt_capture_get(nt_rate *rt, uint64_t id)
{
	size_t ix;
	long i = nt_idmap_get(&rt->cap_map, id, &ix) ? (long)ix : -1;
	if (i < 0) {
		if (rt->ncaps >= RT_MAX_CAPTURES)
			return -1;
		if (nt_grow((void **)&rt->caps, &rt->ccaps, rt->ncaps + 1, sizeof *rt->caps))
			return -1;
		if (nt_idmap_put(&rt->cap_map, id, rt->ncaps))
			return -1;
		memset(&rt->caps[rt->ncaps], 0, sizeof rt->caps[0]);
		rt_update_threshold(rt, &rt->caps[rt->ncaps]);
		i = (long)rt->ncaps++;
	}
	rt->last_cap = i;
	rt->last_cap_id = id;
	return i;
}

/* Entry of a sampled thread, created on first sight (*fresh = 1); NULL if untracked. The
 * sampler walks the threads in the same order every round, so the thread that followed
 * the previous sample's thread last time is tried first: one comparison instead of a
 * hash probe into a table that may not be in the cache. */
static rt_thread *rt_thread_find(nt_rate *rt, uint64_t id, int *fresh);

static inline rt_thread *rt_thread_get(nt_rate *rt, uint64_t id, int *fresh)
{
	*fresh = 0;
	if (rt->last_thread) {
		uint32_t next = rt->threads[rt->last_thread - 1].next;
		if (next && rt->threads[next - 1].id == id) {
			rt->last_thread = next;
			return &rt->threads[next - 1];
		}
	}
	return rt_thread_find(rt, id, fresh);
}

/* rt_thread_get() past its guess: the id map, and a new entry on first sight. */
static __attribute__((noinline)) rt_thread *rt_thread_find(nt_rate *rt, uint64_t id, int *fresh)
{
	rt_thread *prev = rt->last_thread ? &rt->threads[rt->last_thread - 1] : NULL;
	size_t ix;
	long i = nt_idmap_get(&rt->thread_map, id, &ix) ? (long)ix : -1;
	if (i < 0) {
		if (rt->nthreads >= RT_MAX_THREADS)
			return NULL;
		if (nt_grow((void **)&rt->tslots, &rt->cthreads, rt->nthreads + 2,
			    sizeof *rt->tslots))
			return NULL;
		rt->threads = rt->tslots + 1;
		if (nt_idmap_put(&rt->thread_map, id, rt->nthreads))
			return NULL;
		/* nt_grow() may have moved the array */
		prev = rt->last_thread ? &rt->threads[rt->last_thread - 1] : NULL;
		i = (long)rt->nthreads++;
		memset(&rt->threads[i], 0, sizeof rt->threads[i]);
		rt->threads[i].id = id;
		*fresh = 1;
	}
	if (prev)
		prev->next = (uint32_t)i + 1;
	rt->last_thread = (uint32_t)i + 1;
	return &rt->threads[i];
}

/* Counts a per-thread consecutive-sample delta of td ticks. */
static inline __attribute__((always_inline)) void rt_thread_delta(nt_rate *rt, uint64_t td)
{
	if (td < rt->tmin)
		rt->tmin = td;
	if (td > rt->tmax)
		rt->tmax = td;
	rt->tcount++;
	rt_count(rt, rt->thist, td);
}

/* The steady state (rt_add_steady()) after the round decision: the capture thread's and
 * the thread's timestamps, the thread's round, its delta. */
static inline __attribute__((always_inline)) void rt_steady_end(nt_rate *rt, rt_capture *c,
								 rt_thread *t, uint64_t timestamp)
{
	c->last_ts = timestamp;
	t->round_serial = c->round_serial;
	uint64_t prev = t->last_ts;
	t->last_ts = timestamp;
	if (timestamp >= prev)
		rt_thread_delta(rt, timestamp - prev);
}

/* rt_add_steady() of a sample that starts a round (one in threads-per-round). */
static __attribute__((noinline)) void rt_steady_round(nt_rate *rt, rt_capture *c, rt_thread *t,
						      uint64_t timestamp, double x)
{
	rt_record_delta(rt, timestamp - c->round_ts, c->round_ts);
	rt_ewma_set(&c->log_inter, x);
	c->round_serial++;
	c->round_ts = timestamp;
	rt->rounds++;
	rt_threshold_known(c);
	rt_steady_end(rt, c, t, timestamp);
}

/* nt_rate_add() of the steady state, nearly every sample: the previous sample's capture
 * thread again (rt->cur: a round open, both scales known, no timestamps going backwards),
 * the thread it sampled after the previous sample's thread last time (rt->guess) with
 * this capture thread, a timestamp not before the previous one and not a duplicate.
 * Returns 0, having changed nothing, when the sample is not such a one. The steps are
 * rt_add()'s with the tests these conditions settle left out. rt->cur is rt->nocap
 * (cur_ix RT_NOCAP_IX) and rt->guess 0 (the dummy thread before threads[0], cap
 * UINT32_MAX) when there is no candidate, so the tests that reject a sample reject those
 * too; the path has no call but tail calls, so that it needs no saved registers. */
static inline __attribute__((always_inline)) int
rt_add_steady(nt_rate *rt, uint64_t timestamp, uint64_t thread_id, uint64_t capture_thread_id)
{
	rt_capture *c = rt->cur;
	uint32_t g = rt->guess;
	rt_thread *t = &rt->threads[(long)g - 1];
	if (rt->cur_id != capture_thread_id || t->id != thread_id || t->cap != rt->cur_ix ||
	    timestamp < c->last_ts || t->last_ts == timestamp)
		return 0;
	rt->samples++;
	rt->last_thread = g;
	rt->guess = t->next;
	/* a sampler that stamps a round's samples with the round's time (libnettrace-
	 * sampler does) gives equal timestamps: as in rt_add(), 1 tick (x = 0) that starts
	 * no round by rule (b) */
	uint64_t d = timestamp - c->last_ts;
	double x = d ? rt_log(rt, d) : 0;
	if (t->round_serial == c->round_serial || (d && x > c->log_thr)) {
		rt_steady_round(rt, c, t, timestamp, x);
		return 1;
	}
	rt_ewma_set(&c->log_intra, x);
	rt_threshold_known(c);
	rt_steady_end(rt, c, t, timestamp);
	return 1;
}

/* Sets rt->cur, cur_id, cur_ix and guess (rt_add_steady()) from the state rt_add() left. */
static void rt_steady_refresh(nt_rate *rt)
{
	rt->guess = rt->last_thread ? rt->threads[rt->last_thread - 1].next : 0;
	rt->cur = &rt->nocap;
	rt->cur_ix = RT_NOCAP_IX;
	if (rt->last_cap < 0)
		return;
	rt_capture *c = &rt->caps[rt->last_cap];
	if (c->started && c->has_intra && c->has_inter && !c->nbackwards) {
		rt->cur = c;
		rt->cur_id = rt->last_cap_id;
		rt->cur_ix = (uint32_t)rt->last_cap;
	}
}

/* nt_rate_add() of any sample rt_add_steady() did not take (rt_add() below). */
static inline void rt_add_any(nt_rate *rt, uint64_t timestamp, uint64_t thread_id,
			      uint64_t capture_thread_id)
{
	rt->samples++;
	long ci = rt->last_cap >= 0 && rt->last_cap_id == capture_thread_id
			  ? rt->last_cap
			  : rt_capture_get(rt, capture_thread_id);
	if (ci < 0) {
		rt->untracked++;
		return;
	}
	rt_capture *c = &rt->caps[ci];
	if (c->started && timestamp < c->last_ts) {
		rt->ignored++;
		if (++c->nbackwards < RT_BACKWARDS_RESET)
			return;
		/* a clock reset, not reordering: restart this capture thread's stream */
		c->started = 0;
	}
	c->nbackwards = 0;

	int fresh;
	rt_thread *t = rt_thread_get(rt, thread_id, &fresh);
	if (!t)
		rt->untracked++;
	int same_cap = t && !fresh && t->cap == (uint32_t)ci;
	/* One thread sampled twice at the same instant by the same sampler is a duplicated
	 * event, not a sample: no sampler wakes up twice within one tick. */
	if (same_cap && c->started && t->last_ts == timestamp) {
		rt->ignored++;
		return;
	}

	if (!c->started) {
		c->started = 1;
		c->round_serial++;
		c->round_ts = timestamp;
		rt->rounds++;
	} else {
		uint64_t d = timestamp - c->last_ts;
		double x = d ? rt_log(rt, d) : 0; /* equal timestamps count as 1 tick */
		int repeated = same_cap && t->round_serial == c->round_serial;
		if (repeated || (d && x > c->log_thr)) {
			rt_record_delta(rt, timestamp - c->round_ts, c->round_ts);
			rt_ewma(&c->log_inter, &c->has_inter, x);
			c->round_serial++;
			c->round_ts = timestamp;
			rt->rounds++;
		} else {
			rt_ewma(&c->log_intra, &c->has_intra, x);
		}
		rt_update_threshold(rt, c);
	}
	c->last_ts = timestamp;

	if (t) {
		if (same_cap && timestamp >= t->last_ts)
			rt_thread_delta(rt, timestamp - t->last_ts);
		t->last_ts = timestamp;
		t->cap = (uint32_t)ci;
		t->round_serial = c->round_serial;
	}
}

static __attribute__((noinline)) void rt_add(nt_rate *rt, uint64_t timestamp, uint64_t thread_id,
					     uint64_t capture_thread_id)
{
	rt_add_any(rt, timestamp, thread_id, capture_thread_id);
	rt_steady_refresh(rt);
}

void nt_rate_add(nt_rate *rt, uint64_t timestamp, uint64_t thread_id, uint64_t capture_thread_id)
{
	NT_ASSERT(rt);
	if (!rt)
		return;
	if (!rt_add_steady(rt, timestamp, thread_id, capture_thread_id))
		rt_add(rt, timestamp, thread_id, capture_thread_id);
}

/* ---------------------------------------------------------------------------------------
 * Finalisation
 * ------------------------------------------------------------------------------------- */

static int64_t rt_session_ns(const nt_rate *rt, uint64_t ts)
{
	long double ns;
	if (ts >= rt->sync_qpc)
		ns = (long double)(ts - rt->sync_qpc) * rt->ns_per_tick;
	else
		ns = -(long double)(rt->sync_qpc - ts) * rt->ns_per_tick;
	if (ns >= 9.2e18L)
		return INT64_MAX;
	if (ns <= -9.2e18L)
		return INT64_MIN;
	return (int64_t)llroundl(ns);
}

static uint64_t rt_round_ns(long double ns)
{
	if (ns >= 1.8e19L)
		return UINT64_MAX;
	return ns > 0 ? (uint64_t)llroundl(ns) : 0;
}

static int rt_gap_cmp(const void *a, const void *b)
{
	const nt_gap *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->length_ns < y->length_ns ? -1 : x->length_ns > y->length_ns;
}

/* Statistics of the round deltas with every delta longer than cut_ns taken out as a gap.
 * Fills rt->res_gaps (time order) and *st. The heap holds every gap unless more than
 * NT_RATE_MAX_GAPS deltas exceed the cut (or the admission threshold left some out); then
 * the others are taken out of the sums by their histogram bins (approximately, to 0.12%),
 * and counted in gaps_count and gaps_ticks only. */
static void rt_compute(nt_rate *rt, double cut_ns, rt_stats *st)
{
	memset(st, 0, sizeof *st);
	memcpy(rt->scratch, rt->hist, RT_NBINS * sizeof *rt->scratch);

	long double gsum = 0, gk = 0, gsq = 0, gn = 0;
	uint64_t heap_min = UINT64_MAX, max_nongap = 0;
	int have_nongap = 0;
	for (size_t i = 0; i < rt->nheap; i++) {
		const rt_cand *e = &rt->heap[i];
		if (e->len < heap_min)
			heap_min = e->len;
		if (!(rt_ns(rt, e->len) > cut_ns)) {
			if (e->len > max_nongap)
				max_nongap = e->len;
			have_nongap = 1;
			continue;
		}
		if (st->ngaps >= rt->rescap)
			continue; /* not listed (out of memory): counted from the histogram below */
		nt_gap *g = &rt->res_gaps[st->ngaps++];
		g->start_ns = rt_session_ns(rt, e->start);
		g->length_ns = rt_round_ns((long double)e->len * rt->ns_per_tick);
		long double k = (long double)e->len - (long double)rt->shift;
		gsum += e->len;
		gk += k;
		gsq += k * k;
		gn += 1;
		rt->scratch[rt_bin(rt_ns(rt, e->len))]--;
	}
	qsort(rt->res_gaps, st->ngaps, sizeof *rt->res_gaps, rt_gap_cmp);

	/* More gaps than the heap holds: the rest sit in histogram bins above the cut (a
	 * delta in the bin that straddles the cut stays in; the bin is 0.23% wide). */
	double vmax_ns;
	if (rt->heap_dropped && (!rt->nheap || rt_ns(rt, heap_min) > cut_ns ||
				 rt_ns(rt, rt->adm_ticks) > cut_ns)) {
		for (size_t b = rt_bin(cut_ns) + 1; b < RT_NBINS; b++) {
			if (!rt->scratch[b])
				continue;
			double v = b == RT_NBINS - 1 ? rt_ns(rt, heap_min) : rt_bin_value(b, 0.5);
			long double vt = (long double)v / rt->ns_per_tick, cnt = rt->scratch[b];
			long double k = vt - (long double)rt->shift;
			gsum += cnt * vt;
			gk += cnt * k;
			gsq += cnt * k * k;
			gn += cnt;
			rt->scratch[b] = 0;
		}
		vmax_ns = cut_ns;
	} else {
		/* the longest non-gap delta is in the heap unless every entry is a gap */
		vmax_ns = have_nongap ? rt_ns(rt, max_nongap) : cut_ns;
	}
	st->gaps_ticks = gsum;
	st->gaps_count = (uint64_t)llroundl(gn);

	long double n = (long double)rt->ndeltas - gn;
	if (n < 0.5)
		return;
	long double mean = (rt->sum - gsum) / n;
	st->mean_ns = (double)(mean * rt->ns_per_tick);
	if (n >= 1.5 && mean > 0) {
		long double sk = rt->sumk - gk, sq = rt->sumsq - gsq;
		long double var = (sq - sk * sk / n) / (n - 1);
		st->cv = var > 0 ? (double)(sqrtl(var) / mean) : 0;
	}
	double vmin_ns = rt_ns(rt, rt->min_delta);
	if (vmax_ns < vmin_ns)
		vmax_ns = vmin_ns;
	uint64_t total = (uint64_t)llroundl(n);
	st->p10_ns = rt_quantile(rt->scratch, total, 0.10, vmin_ns, vmax_ns);
	st->p50_ns = rt_quantile(rt->scratch, total, 0.50, vmin_ns, vmax_ns);
	st->p90_ns = rt_quantile(rt->scratch, total, 0.90, vmin_ns, vmax_ns);
}

/* Schedule guess and the matching statistics (rt->res_gaps is left matching *st).
 *  - "unknown": fewer than RT_MIN_ROUNDS rounds; nine intervals say nothing about shape.
 *  - "fixed": CV < 0.05. A timer with wake-up jitter of ~50 us on a 1 ms period has CV
 *    ~0.03; uniform +-20% jitter has CV 0.2/sqrt 3 = 0.115, uniform +-10% 0.058; so the
 *    line sits below any deliberate jitter and above timer noise.
 *  - "poisson": exponential-like shape. Quantile ratios over all deltas (robust to a few
 *    pauses): p10/median in [0.07, 0.30] around the exponential's 0.152 and p90/median in
 *    [2.3, 5.0] around 3.32 (with 1000 intervals the standard errors are ~11% and ~5%,
 *    so these are > 4 sigma wide; uniform [0, 2T] fails p90/median = 1.8, a gamma of
 *    shape 2 fails both just), and then the CV, gaps excluded with the Poisson cut-off,
 *    in [0.75, 1.35] (SE(CV) ~ 1/sqrt(n), so 2.5 sigma at only 100 intervals).
 *    Pauses are then judged against the exponential tail, not 4 x median: an exponential
 *    exceeds 4 x median = 2.77 x mean in 6.25% of intervals, and taking those out would
 *    bias the mean 18% low. The cut-off is mean x ln(n / alpha), mean = median / ln 2.
 *  - "jittered": everything else (any CV >= 0.05 that is not exponential-like, including
 *    heavier-than-exponential tails). */
static const char *rt_classify(nt_rate *rt, rt_stats *st)
{
	double lo = rt_ns(rt, rt->min_delta);
	double hi = rt_ns(rt, rt->max_delta);
	if (hi < lo)
		hi = lo;
	double m = rt_quantile(rt->hist, rt->ndeltas, 0.5, lo, hi);
	double cut = m > 0 ? NT_RATE_GAP_FACTOR * m : HUGE_VAL;
	rt_compute(rt, cut, st);
	if (rt->ndeltas + 1 < RT_MIN_ROUNDS)
		return "unknown";
	if (st->cv < RT_FIXED_CV)
		return "fixed";
	if (!(m > 0)) /* more than half the deltas under 1 ns: no shape to speak of */
		return "jittered";
	double r10 = rt_quantile(rt->hist, rt->ndeltas, 0.1, lo, hi) / m;
	double r90 = rt_quantile(rt->hist, rt->ndeltas, 0.9, lo, hi) / m;
	if (r10 >= RT_POISSON_R10_LO && r10 <= RT_POISSON_R10_HI && r90 >= RT_POISSON_R90_LO &&
	    r90 <= RT_POISSON_R90_HI) {
		double pcut = m / RT_LN2 * log((double)rt->ndeltas / RT_POISSON_GAP_ALPHA);
		if (pcut < cut)
			pcut = cut;
		rt_stats ps;
		rt_compute(rt, pcut, &ps);
		if (ps.cv >= RT_POISSON_CV_LO && ps.cv <= RT_POISSON_CV_HI) {
			*st = ps;
			return "poisson";
		}
		rt_compute(rt, cut, st); /* restore the gap list of the 4 x median cut */
	}
	return "jittered";
}

/* ---------------------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------------------- */

int nt_rate_new(nt_rate **out, uint64_t declared_ns, uint64_t freq, uint64_t sync_qpc,
		nt_error *err)
{
	nt_error_clear(err);
	nt_rate *rt = NULL;
	NT_ASSERT(out);
	if (!out)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "NULL output pointer");
	*out = NULL;
	if (freq == 0)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "tick frequency is 0");
	rt = calloc(1, sizeof *rt);
	if (!rt)
		goto fail;
	rt->declared_ns = declared_ns;
	rt->freq = freq;
	rt->sync_qpc = sync_qpc;
	rt->ns_per_tick = 1e9L / (long double)freq;
	rt->ns_ticks = rt->ns_per_tick == 1.0L;
	if (rt->ns_per_tick >= 2 && rt->ns_per_tick <= 1024 &&
	    rt->ns_per_tick == (long double)(uint64_t)rt->ns_per_tick)
		rt->ns_int = (double)rt->ns_per_tick;
	rt->log_half_declared = HUGE_VAL;
	if (declared_ns) {
		long double t = (long double)declared_ns / rt->ns_per_tick / 2;
		rt->log_half_declared = t >= 1 ? log((double)t) : 0;
	}
	rt->last_cap = -1;
	rt->nocap.last_ts = UINT64_MAX;
	rt->cur = &rt->nocap;
	rt->cur_ix = RT_NOCAP_IX;
	rt->cthreads = 16;
	rt->tslots = calloc(rt->cthreads, sizeof *rt->tslots);
	if (rt->tslots) {
		rt->tslots[0].cap = UINT32_MAX; /* the dummy: no capture thread's */
		rt->threads = rt->tslots + 1;
	}
	rt->tmin = UINT64_MAX;
	rt->hist = calloc(RT_NBINS, sizeof *rt->hist);
	rt->scratch = calloc(RT_NBINS, sizeof *rt->scratch);
	rt->thist = calloc(RT_NBINS, sizeof *rt->thist);
	rt->heapcap = 1024;
	rt->heap = calloc(rt->heapcap, sizeof *rt->heap);
	rt->rescap = 1;
	rt->res_gaps = calloc(rt->rescap, sizeof *rt->res_gaps);
	rt->inner = malloc((RT_BINS_PER_DECADE * RT_DECADES + 1) * sizeof *rt->inner);
	if (rt->inner) {
		double lo = 1.0; /* pow(10, 0) */
		for (size_t k = 0; k < RT_BINS_PER_DECADE * RT_DECADES; k++) {
			double hi = pow(10.0, (double)(k + 1) / RT_BINS_PER_DECADE);
			rt->inner[k].lo = lo * (1 + 1e-9);
			rt->inner[k].hi = hi * (1 - 1e-9);
			lo = hi;
		}
		rt->inner[RT_BINS_PER_DECADE * RT_DECADES] = (rt_inner){HUGE_VAL, HUGE_VAL};
	}
	rt->mant_bins = malloc(((size_t)1 << RT_MANT_BITS) * sizeof *rt->mant_bins);
	if (rt->mant_bins)
		for (size_t i = 0; i < (size_t)1 << RT_MANT_BITS; i++)
			rt->mant_bins[i] = RT_BINS_PER_DECADE *
					   log10(1 + (double)i / (double)((size_t)1 << RT_MANT_BITS));
	rt->bkt = calloc(RT_BKT_N, sizeof *rt->bkt);
	rt->lns = malloc((RT_LN_EXPS << RT_LN_BITS) * sizeof *rt->lns);
	if (rt->lns) {
		double inv[1 << RT_LN_BITS], neg_log_inv[1 << RT_LN_BITS], scale = 1.0;
		for (size_t i = 0; i < (size_t)1 << RT_LN_BITS; i++) {
			double c = 1 + ((double)i + 0.5) / (double)((size_t)1 << RT_LN_BITS);
			inv[i] = 1 / c;
			neg_log_inv[i] = -log(inv[i]);
		}
		for (size_t e = 0; e < RT_LN_EXPS; e++, scale *= 0.5)
			for (size_t i = 0; i < (size_t)1 << RT_LN_BITS; i++) {
				rt_lnent *t = &rt->lns[e << RT_LN_BITS | i];
				t->sinv = inv[i] * scale;
				t->base = (double)e * RT_LN2 + neg_log_inv[i];
			}
	}
	if (!rt->tslots || !rt->hist || !rt->scratch || !rt->thist || !rt->heap || !rt->res_gaps ||
	    !rt->inner || !rt->mant_bins || !rt->bkt || !rt->lns)
		goto fail;
	*out = rt;
	return 0;
fail:
	nt_rate_free(rt);
	return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate the rate estimator");
}

const nt_rate_info *nt_rate_result(nt_rate *rt)
{
	NT_ASSERT(rt);
	if (!rt)
		return NULL;
	nt_rate_info *in = &rt->info;
	memset(in, 0, sizeof *in);
	if (rt->rescap < rt->nheap) {
		nt_gap *ng = realloc(rt->res_gaps, rt->nheap * sizeof *ng);
		if (ng) {
			rt->res_gaps = ng;
			rt->rescap = rt->nheap;
		}
	}
	rt_stats st;
	in->schedule = rt_classify(rt, &st);
	in->declared_interval_ns = rt->declared_ns;
	in->inferred_interval_ns = st.mean_ns;
	in->median_interval_ns = st.p50_ns;
	in->p10_interval_ns = st.p10_ns;
	in->p90_interval_ns = st.p90_ns;
	in->cv = st.cv;
	in->samples = rt->samples;
	in->rounds = rt->rounds;
	in->threads = rt->nthreads;
	in->per_thread_median_ns =
		rt_quantile(rt->thist, rt->tcount, 0.5, rt_ns(rt, rt->tmin), rt_ns(rt, rt->tmax));
	in->lost_samples = 0;
	in->ngaps = st.ngaps;
	in->gaps_count = st.gaps_count;
	in->gaps = rt->res_gaps;
	in->gaps_total_ns = rt_round_ns(st.gaps_ticks * rt->ns_per_tick);
	return in;
}

void nt_rate_free(nt_rate *rt)
{
	if (!rt)
		return;
	free(rt->hist);
	free(rt->scratch);
	free(rt->thist);
	free(rt->heap);
	free(rt->res_gaps);
	free(rt->inner);
	free(rt->mant_bins);
	free(rt->bkt);
	free(rt->lns);
	nt_idmap_free(&rt->thread_map);
	free(rt->tslots);
	nt_idmap_free(&rt->cap_map);
	free(rt->caps);
	free(rt);
}
