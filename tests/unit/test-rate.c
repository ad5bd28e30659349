/* SPDX-License-Identifier: MIT */
/* test-rate.c - unit tests of sampling-rate inference (rate.c): synthetic SampleProfiler
 * sample streams (fixed, jittered and Poisson schedules, 1..16 threads per round, pauses,
 * several capture threads, several tick frequencies) are fed straight to nt_rate, plus
 * degenerate inputs and a write/read round trip through nt_writer and nt_reader.
 *
 * Tolerances. The truth is computed from the very tick values fed, as the mean of the
 * generated non-pause round-to-round deltas, so a correct round grouping reproduces it up
 * to floating-point rounding (~1e-15): the 1% bound on the mean cannot hide a sampling
 * error, it only catches grouping errors, and where grouping must be exact the number of
 * rounds is checked exactly too (one merged or split round out of 10000 moves the mean by
 * ~0.01-0.1%). Quantiles come from a histogram with 1000 bins per decade (0.23% wide) and
 * are compared with the exact order statistics of the generated deltas within 0.5%.
 * The PRNG is seeded per case, so every run feeds the same streams. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace.h"
#include "tap.h"
#include "testutil.h"

/* ------------------------------------------------------------------ helpers */

/* splitmix64: small, seedable, good enough for test schedules */
typedef struct rng {
	uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [0, 1) */
static double rng_unif(rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* exponential with the given mean */
static double rng_exp(rng *r, double mean)
{
	return -mean * log1p(-rng_unif(r));
}

typedef struct sample {
	uint64_t ts, tid, cap;
} sample;

enum { SCH_FIXED, SCH_JITTER, SCH_POISSON };

#define MAX_PAUSES 4000

/* A synthetic sampler session: rounds of samples from one capture thread. */
typedef struct gen_opts {
	int schedule;        /* SCH_* */
	double period_ns;    /* fixed period, or Poisson mean */
	double jitter;       /* SCH_JITTER: uniform +-jitter x period */
	int nthreads;        /* sampled threads */
	double spread_ns;    /* time from a round's first sample to its last */
	int subset;          /* each thread present in a round with p = 1/2 */
	int shuffle;         /* threads in a new random order each round (else fixed) */
	int same_ts;         /* every sample of a round has the round's timestamp */
	uint64_t freq;       /* ticks per second */
	uint64_t base;       /* tick of the first round */
	uint64_t sync;       /* session start tick */
	int nrounds;
	int npauses;
	const int *pause_after;   /* round indices, ascending */
	const double *pause_ns;   /* pause lengths */
	uint64_t seed;
	uint64_t cap;        /* capture (sampler) thread id */
	uint64_t tid0;       /* first sampled thread id */
} gen_opts;

/* What the generator knows: the round starts actually fed. */
typedef struct truth {
	uint64_t rounds, samples;
	long double sum_ticks; /* non-pause round deltas */
	uint64_t ndeltas;
	double mean_ns, p10_ns, p50_ns, p90_ns;
	double *deltas_ns;     /* non-pause deltas, sorted */
	int ngaps;
	nt_gap gaps[MAX_PAUSES];
	uint64_t last_ts;      /* last sample */
} truth;

static gen_opts default_opts(void)
{
	gen_opts o;
	memset(&o, 0, sizeof o);
	o.schedule = SCH_FIXED;
	o.period_ns = 1e6;
	o.nthreads = 16;
	o.spread_ns = 50e3;
	o.freq = 1000000000;
	o.base = 5000000;
	o.sync = 1000000;
	o.nrounds = 10000;
	o.seed = 1;
	o.cap = 7001;
	o.tid0 = 1000;
	return o;
}

static uint64_t ticks_of(const gen_opts *o, double ns)
{
	return (uint64_t)llroundl((long double)ns * o->freq / 1e9L);
}

static int64_t session_ns(uint64_t ts, uint64_t sync, uint64_t freq)
{
	long double d = ts >= sync ? (long double)(ts - sync) : -(long double)(sync - ts);
	return (int64_t)llroundl(d * 1e9L / freq);
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* order statistic with linear interpolation at rank p(n-1), as rate.c defines it */
static double quantile(const double *v, size_t n, double p)
{
	if (!n)
		return 0;
	double r = p * (double)(n - 1);
	size_t i = (size_t)r;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (r - (double)i) * (v[i + 1] - v[i]);
}

/* Generates the session into *out (appending at *n, growing *cap) and fills tr. */
static void generate(const gen_opts *o, sample **out, size_t *n, size_t *cap, truth *tr)
{
	rng r = {o->seed};
	memset(tr, 0, sizeof *tr);
	tr->deltas_ns = malloc((size_t)o->nrounds * sizeof *tr->deltas_ns);
	if (!tr->deltas_ns)
		abort();
	double t = 0, ideal = 0; /* ns from the first round */
	uint64_t prev_start = 0;
	int pi = 0, prev_paused = 0;
	for (int k = 0; k < o->nrounds; k++) {
		uint64_t start = o->base + ticks_of(o, t);
		if (k > 0) {
			uint64_t d = start - prev_start;
			if (prev_paused) {
				nt_gap *g = &tr->gaps[tr->ngaps++];
				g->start_ns = session_ns(prev_start, o->sync, o->freq);
				g->length_ns = (uint64_t)llroundl((long double)d * 1e9L / o->freq);
			} else {
				tr->sum_ticks += d;
				tr->deltas_ns[tr->ndeltas++] = (double)((long double)d * 1e9L / o->freq);
			}
		}
		prev_start = start;
		tr->rounds++;
		/* the round's samples: the first at the round time, the others spread evenly
		 * (+-1/4 spacing jitter) over spread_ns, threads in a fixed order */
		int m = 0;
		double spacing = o->nthreads > 1 ? o->spread_ns / (o->nthreads - 1) : 0, off = 0;
		int perm[64];
		for (int j = 0; j < o->nthreads && j < 64; j++)
			perm[j] = j;
		for (int j = o->nthreads < 64 ? o->nthreads : 64; o->shuffle && j > 1; j--) {
			int i = (int)(rng_unif(&r) * j), tmp = perm[i < j ? i : j - 1];
			perm[i < j ? i : j - 1] = perm[j - 1];
			perm[j - 1] = tmp;
		}
		for (int j = 0; j < o->nthreads; j++) {
			int last = j == o->nthreads - 1;
			if (o->subset && rng_unif(&r) < 0.5 && !(last && m == 0))
				continue;
			if (m > 0 && !o->same_ts)
				off = m * spacing + (rng_unif(&r) - 0.5) * 0.5 * spacing;
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 4096;
				*out = realloc(*out, *cap * sizeof **out);
				if (!*out)
					abort();
			}
			sample *s = &(*out)[(*n)++];
			s->ts = start + ticks_of(o, off);
			s->tid = o->tid0 + 4 * (uint64_t)(o->shuffle && j < 64 ? perm[j] : j);
			s->cap = o->cap;
			tr->last_ts = s->ts;
			tr->samples++;
			m++;
		}
		double span = off;
		/* the next round */
		double next;
		switch (o->schedule) {
		case SCH_FIXED: /* +-0.5 us timer noise */
			next = t + o->period_ns + (rng_unif(&r) - 0.5) * 1e3;
			break;
		case SCH_JITTER:
			next = t + o->period_ns * (1 + o->jitter * (2 * rng_unif(&r) - 1));
			break;
		default: /* cumulative ideal schedule; a late round starts 1 us after the last */
			ideal += rng_exp(&r, o->period_ns);
			next = ideal;
			if (next < t + span + 1e3)
				next = t + span + 1e3;
			break;
		}
		prev_paused = 0;
		if (pi < o->npauses && o->pause_after[pi] == k) {
			next += o->pause_ns[pi];
			ideal += o->pause_ns[pi];
			pi++;
			prev_paused = 1;
		}
		t = next;
	}
	qsort(tr->deltas_ns, tr->ndeltas, sizeof *tr->deltas_ns, dbl_cmp);
	tr->mean_ns = tr->ndeltas ? (double)(tr->sum_ticks / tr->ndeltas * 1e9L / o->freq) : 0;
	tr->p10_ns = quantile(tr->deltas_ns, tr->ndeltas, 0.1);
	tr->p50_ns = quantile(tr->deltas_ns, tr->ndeltas, 0.5);
	tr->p90_ns = quantile(tr->deltas_ns, tr->ndeltas, 0.9);
}

static void truth_free(truth *tr)
{
	free(tr->deltas_ns);
	tr->deltas_ns = NULL;
}

static nt_rate *new_rate(uint64_t declared, uint64_t freq, uint64_t sync)
{
	nt_rate *rt = NULL;
	nt_error err;
	nt_error_clear(&err);
	if (nt_rate_new(&rt, declared, freq, sync, &err)) {
		printf("# nt_rate_new: %s\n", err.msg);
		return NULL;
	}
	return rt;
}

static void feed(nt_rate *rt, const sample *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		nt_rate_add(rt, s[i].ts, s[i].tid, s[i].cap);
}

static double rel_err(double got, double want)
{
	return want != 0 ? fabs(got - want) / fabs(want) : fabs(got);
}

/* Every number of a result is finite and the pointers are usable. */
static int sane(const nt_rate_info *in)
{
	return in && isfinite(in->inferred_interval_ns) && isfinite(in->median_interval_ns) &&
	       isfinite(in->p10_interval_ns) && isfinite(in->p90_interval_ns) &&
	       isfinite(in->cv) && isfinite(in->per_thread_median_ns) && in->schedule &&
	       in->gaps && in->ngaps <= NT_RATE_MAX_GAPS && in->inferred_interval_ns >= 0 &&
	       in->cv >= 0;
}

/* Runs one generated session and checks the result against the truth.
 * want_schedule NULL: not checked; exact_rounds: grouping must be exact. */
static void check_session(const char *name, const gen_opts *o, const char *want_schedule,
			  int exact_rounds, int check_quantiles)
{
	sample *s = NULL;
	size_t n = 0, cap = 0;
	truth tr;
	generate(o, &s, &n, &cap, &tr);
	nt_rate *rt = new_rate(1000000, o->freq, o->sync);
	if (!rt) {
		ok(0, "%s: nt_rate_new", name);
		free(s);
		truth_free(&tr);
		return;
	}
	feed(rt, s, n);
	const nt_rate_info *in = nt_rate_result(rt);
	double e = rel_err(in->inferred_interval_ns, tr.mean_ns);
	printf("# %s: truth mean %.3f us, inferred %.3f us, rel. error %.2e; rounds %" PRIu64
	       "/%" PRIu64 "; median %.3f/%.3f us; p10 %.3f/%.3f; p90 %.3f/%.3f; cv %.4f; %s; "
	       "gaps %zu/%d; per-thread median %.3f us\n",
	       name, tr.mean_ns / 1e3, in->inferred_interval_ns / 1e3, e, in->rounds, tr.rounds,
	       in->median_interval_ns / 1e3, tr.p50_ns / 1e3, in->p10_interval_ns / 1e3,
	       tr.p10_ns / 1e3, in->p90_interval_ns / 1e3, tr.p90_ns / 1e3, in->cv, in->schedule,
	       in->ngaps, tr.ngaps, in->per_thread_median_ns / 1e3);
	ok(sane(in), "%s: result is finite", name);
	ok(e < 0.01, "%s: inferred mean within 1%% of the truth (%.2e)", name, e);
	if (exact_rounds)
		is_u64(in->rounds, tr.rounds, "%s: every round found, none split or merged", name);
	else
		ok(rel_err((double)in->rounds, (double)tr.rounds) < 0.01, "%s: rounds within 1%%",
		   name);
	is_u64(in->samples, tr.samples, "%s: samples counted", name);
	is_u64(in->threads, (uint64_t)o->nthreads, "%s: threads counted", name);
	if (want_schedule)
		is_str(in->schedule, want_schedule, "%s: schedule guess", name);
	if (check_quantiles) {
		ok(rel_err(in->median_interval_ns, tr.p50_ns) < 0.005, "%s: median within 0.5%%",
		   name);
		ok(rel_err(in->p10_interval_ns, tr.p10_ns) < 0.005, "%s: p10 within 0.5%%", name);
		ok(rel_err(in->p90_interval_ns, tr.p90_ns) < 0.005, "%s: p90 within 0.5%%", name);
	}
	is_int(in->ngaps, tr.ngaps, "%s: gaps found", name);
	if ((int)in->ngaps == tr.ngaps) {
		int good = 1;
		uint64_t total = 0;
		for (int i = 0; i < tr.ngaps; i++) {
			const nt_gap *g = &in->gaps[i], *w = &tr.gaps[i];
			total += w->length_ns;
			if (llabs(g->start_ns - w->start_ns) > 1 ||
			    llabs((long long)(g->length_ns - w->length_ns)) > 1) {
				printf("#   gap %d: got %" PRId64 " +%" PRIu64 " ns, want %" PRId64
				       " +%" PRIu64 "\n",
				       i, g->start_ns, g->length_ns, w->start_ns, w->length_ns);
				good = 0;
			}
		}
		ok(good, "%s: gap positions and lengths", name);
		ok(llabs((long long)(in->gaps_total_ns - total)) <= tr.ngaps,
		   "%s: gaps_total_ns %" PRIu64 " = %" PRIu64, name, in->gaps_total_ns, total);
	}
	nt_rate_free(rt);
	free(s);
	truth_free(&tr);
}

static const uint64_t freqs[] = {1000000000ull, 10000000ull, 3124099ull, 3999999997ull};
static const char *const freq_names[] = {"1 GHz", "10 MHz", "3.12 MHz", "4 GHz"};

/* ------------------------------------------------------------------ schedules */

static void test_rate_fixed_16_threads(void)
{
	for (int f = 0; f < 4; f++) {
		char name[96];
		gen_opts o = default_opts();
		o.freq = freqs[f];
		o.seed = 10 + (uint64_t)f;
		snprintf(name, sizeof name, "fixed 1 ms, 16 threads, %s", freq_names[f]);
		check_session(name, &o, "fixed", 1, 1);
	}
	/* the per-thread median equals the period when every thread is in every round */
	gen_opts o = default_opts();
	sample *s = NULL;
	size_t n = 0, cap = 0;
	truth tr;
	generate(&o, &s, &n, &cap, &tr);
	nt_rate *rt = new_rate(0, o.freq, o.sync);
	feed(rt, s, n);
	const nt_rate_info *in = nt_rate_result(rt);
	ok(rel_err(in->per_thread_median_ns, 1e6) < 0.005, "fixed: per-thread median %.1f ns",
	   in->per_thread_median_ns);
	ok(in->cv < 0.01, "fixed: cv %.5f", in->cv);
	is_u64(in->declared_interval_ns, 0, "fixed: declared interval passed through");
	nt_rate_free(rt);
	free(s);
	truth_free(&tr);
}

static void test_rate_jittered(void)
{
	for (int f = 0; f < 3; f++) {
		char name[96];
		gen_opts o = default_opts();
		o.schedule = SCH_JITTER;
		o.jitter = 0.2;
		o.freq = freqs[f];
		o.seed = 20 + (uint64_t)f;
		snprintf(name, sizeof name, "jittered 1 ms +-20%%, 16 threads, %s", freq_names[f]);
		check_session(name, &o, "jittered", 1, 1);
	}
	/* +-10% uniform: CV 0.058, still above the fixed line */
	gen_opts o = default_opts();
	o.schedule = SCH_JITTER;
	o.jitter = 0.1;
	o.seed = 25;
	check_session("jittered 1 ms +-10%, 16 threads", &o, "jittered", 1, 1);
}

static void test_rate_poisson(void)
{
	static const double means[] = {1e6, 3e6, 7e6};
	static const int threads[] = {1, 8};
	for (int mi = 0; mi < 3; mi++)
		for (int ti = 0; ti < 2; ti++)
			for (int f = 0; f < 3; f++) {
				char name[96];
				gen_opts o = default_opts();
				o.schedule = SCH_POISSON;
				o.period_ns = means[mi];
				o.nthreads = threads[ti];
				o.spread_ns = 25e3;
				o.freq = freqs[f];
				o.seed = 100 + (uint64_t)(mi * 10 + ti * 3 + f);
				snprintf(name, sizeof name, "poisson %.0f ms, %d thread(s), %s",
					 means[mi] / 1e6, threads[ti], freq_names[f]);
				check_session(name, &o, "poisson", 1, 1);
			}
}

/* ------------------------------------------------------------------ pauses */

static void test_rate_gaps(void)
{
	static const int at[3] = {1500, 4000, 8000};
	static const double fixed_pause[3] = {50e6, 200e6, 1e9};
	gen_opts o = default_opts();
	o.npauses = 3;
	o.pause_after = at;
	o.pause_ns = fixed_pause;
	o.seed = 200;
	check_session("fixed 1 ms with pauses 50 ms, 200 ms, 1 s", &o, "fixed", 1, 1);
	o.freq = 3124099;
	o.seed = 201;
	check_session("fixed 1 ms with pauses, 3.12 MHz", &o, "fixed", 1, 1);

	o = default_opts();
	o.npauses = 3;
	o.pause_after = at;
	o.pause_ns = fixed_pause;
	o.schedule = SCH_JITTER;
	o.jitter = 0.2;
	o.seed = 202;
	o.freq = 10000000;
	check_session("jittered 1 ms with pauses, 10 MHz", &o, "jittered", 1, 1);

	/* Poisson: a pause is only recognisable beyond the exponential's tail (for 10000
	 * intervals rate.c's cut-off is mean x ln(10000/0.01) = 13.8 x mean), so the pauses
	 * scale with the mean: 50, 200 and 1000 x mean (50 ms, 200 ms, 1 s at 1 ms). */
	static const double means[] = {1e6, 3e6, 7e6};
	for (int mi = 0; mi < 3; mi++)
		for (int nt = 1; nt <= 8; nt += 7) {
			double pause[3] = {50 * means[mi], 200 * means[mi], 1000 * means[mi]};
			char name[96];
			o = default_opts();
			o.schedule = SCH_POISSON;
			o.period_ns = means[mi];
			o.nthreads = nt;
			o.spread_ns = 25e3;
			o.npauses = 3;
			o.pause_after = at;
			o.pause_ns = pause;
			o.freq = freqs[mi];
			o.seed = 210 + (uint64_t)(mi * 2 + nt);
			snprintf(name, sizeof name, "poisson %.0f ms, %d thread(s), pauses, %s",
				 means[mi] / 1e6, nt, freq_names[mi]);
			check_session(name, &o, "poisson", 1, 1);
		}
}

/* Many pauses (more than the 1024 an earlier fixed table held, found in real traces):
 * every one is listed, in time order, and counted. */
static void test_rate_many_gaps(void)
{
	enum { NP = 3000 };
	static int at[NP];
	static double pause[NP];
	for (int i = 0; i < NP; i++) {
		at[i] = 5 + 3 * i;
		pause[i] = 10e6 + 1e3 * i; /* distinct lengths */
	}
	gen_opts o = default_opts();
	o.nthreads = 4;
	o.npauses = NP;
	o.pause_after = at;
	o.pause_ns = pause;
	o.seed = 300;
	sample *s = NULL;
	size_t n = 0, cap = 0;
	truth tr;
	generate(&o, &s, &n, &cap, &tr);
	nt_rate *rt = new_rate(0, o.freq, o.sync);
	feed(rt, s, n);
	const nt_rate_info *in = nt_rate_result(rt);
	long double total = 0;
	for (int i = 0; i < tr.ngaps; i++)
		total += tr.gaps[i].length_ns;
	double e = rel_err(in->inferred_interval_ns, tr.mean_ns);
	printf("# many gaps: %zu listed of %d, total %" PRIu64 " vs %.0Lf ns, mean error %.2e\n",
	       in->ngaps, tr.ngaps, in->gaps_total_ns, total, e);
	ok(sane(in), "many gaps: result is finite");
	is_int(in->ngaps, tr.ngaps, "many gaps: every pause is listed");
	is_int(in->gaps_count, tr.ngaps, "many gaps: the count is the true count");
	int ordered = 1, same = (int)in->ngaps == tr.ngaps;
	for (size_t i = 0; i < in->ngaps; i++) {
		if (i && in->gaps[i].start_ns <= in->gaps[i - 1].start_ns)
			ordered = 0;
		if (same && llabs((long long)in->gaps[i].length_ns - (long long)tr.gaps[i].length_ns) > 1)
			same = 0;
	}
	ok(same, "many gaps: the listed lengths are the pauses");
	ok(ordered, "many gaps: listed in time order");
	ok(rel_err((double)in->gaps_total_ns, (double)total) < 0.005,
	   "many gaps: gaps_total_ns counts every pause");
	ok(e < 0.01, "many gaps: mean within 1%% (%.2e)", e);
	is_str(in->schedule, "fixed", "many gaps: schedule");
	nt_rate_free(rt);
	free(s);
	truth_free(&tr);
}

/* ------------------------------------------------------------------ round grouping */

/* Threads come and go between rounds: rule (a) alone would merge rounds whose thread sets
 * are disjoint, the time threshold must split them. */
static void test_rate_thread_subsets(void)
{
	gen_opts o = default_opts();
	o.subset = 1;
	o.seed = 400;
	check_session("fixed 1 ms, random thread subsets", &o, "fixed", 1, 1);
	o.freq = 3124099;
	o.seed = 401;
	check_session("fixed 1 ms, random thread subsets, 3.12 MHz", &o, "fixed", 1, 1);
	o = default_opts();
	o.subset = 1;
	o.schedule = SCH_JITTER;
	o.jitter = 0.2;
	o.seed = 402;
	check_session("jittered, random thread subsets", &o, "jittered", 1, 1);
	/* Poisson with subsets: a round closer than the threshold to the previous one and
	 * with a disjoint thread set (p = 0.75^16 = 1%) is merged, so not exact */
	o = default_opts();
	o.subset = 1;
	o.schedule = SCH_POISSON;
	o.seed = 403;
	check_session("poisson 1 ms, random thread subsets", &o, "poisson", 0, 0);
	/* rate.c tries the thread that followed the previous one last round first: a new
	 * order every round (and subsets on top) must find the same threads and rounds */
	o = default_opts();
	o.shuffle = 1;
	o.seed = 404;
	check_session("fixed 1 ms, threads shuffled each round", &o, "fixed", 1, 1);
	o.subset = 1;
	o.seed = 405;
	check_session("fixed 1 ms, shuffled thread subsets", &o, "fixed", 1, 1);
}

/* Coarse clocks or writers that stamp a whole round with one time. */
static void test_rate_equal_timestamps(void)
{
	gen_opts o = default_opts();
	o.same_ts = 1;
	o.seed = 500;
	check_session("fixed, one timestamp per round", &o, "fixed", 1, 1);
	o.subset = 1;
	o.seed = 501;
	check_session("fixed, one timestamp per round, thread subsets", &o, "fixed", 1, 1);
	o = default_opts();
	o.same_ts = 1;
	o.schedule = SCH_POISSON;
	o.nthreads = 8;
	o.seed = 502;
	check_session("poisson, one timestamp per round", &o, "poisson", 1, 1);
}

/* Two sessions, one after the other, with different sampler threads (and the same
 * sampled thread ids): the pause between them is not an interval. */
static void test_rate_concatenated_sessions(void)
{
	gen_opts a = default_opts(), b = default_opts();
	a.nrounds = 5000;
	a.seed = 600;
	sample *s = NULL;
	size_t n = 0, cap = 0;
	truth ta, tb;
	generate(&a, &s, &n, &cap, &ta);
	b.nrounds = 5000;
	b.period_ns = 2e6;
	b.nthreads = 4;
	b.cap = 7002;
	b.seed = 601;
	b.base = ta.last_ts + 10000000000ull; /* 10 s later */
	generate(&b, &s, &n, &cap, &tb);
	nt_rate *rt = new_rate(1000000, a.freq, a.sync);
	feed(rt, s, n);
	const nt_rate_info *in = nt_rate_result(rt);
	double want = (double)((ta.sum_ticks + tb.sum_ticks) / (ta.ndeltas + tb.ndeltas));
	double e = rel_err(in->inferred_interval_ns, want);
	printf("# concatenated: inferred %.3f us, truth %.3f us, error %.2e, rounds %" PRIu64
	       ", gaps %zu, %s\n",
	       in->inferred_interval_ns / 1e3, want / 1e3, e, in->rounds, in->ngaps, in->schedule);
	ok(sane(in), "concatenated: result is finite");
	ok(e < 0.01, "concatenated: pooled mean within 1%% (%.2e)", e);
	is_u64(in->rounds, ta.rounds + tb.rounds, "concatenated: rounds per capture thread");
	is_int(in->ngaps, 0, "concatenated: no gap across sessions");
	is_u64(in->threads, 16, "concatenated: thread ids shared by both sessions");
	nt_rate_free(rt);
	free(s);
	truth_free(&ta);
	truth_free(&tb);
}

static int sample_cmp(const void *x, const void *y)
{
	const sample *a = x, *b = y;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->cap < b->cap ? -1 : a->cap > b->cap;
}

/* Two sampler threads at once (rounds interleaved in time, 0.5 ms apart): the interval is
 * per sampler, 1 ms, not the 0.5 ms between merged rounds. */
static void test_rate_interleaved_captures(void)
{
	gen_opts a = default_opts(), b = default_opts();
	a.nthreads = 8;
	a.seed = 700;
	b.nthreads = 8;
	b.tid0 = 5000;
	b.cap = 7002;
	b.base = a.base + 500000;
	b.seed = 701;
	sample *s = NULL;
	size_t n = 0, cap = 0;
	truth ta, tb;
	generate(&a, &s, &n, &cap, &ta);
	generate(&b, &s, &n, &cap, &tb);
	qsort(s, n, sizeof *s, sample_cmp);
	nt_rate *rt = new_rate(0, a.freq, a.sync);
	feed(rt, s, n);
	const nt_rate_info *in = nt_rate_result(rt);
	double want = (double)((ta.sum_ticks + tb.sum_ticks) / (ta.ndeltas + tb.ndeltas));
	double e = rel_err(in->inferred_interval_ns, want);
	printf("# interleaved: inferred %.3f us, truth %.3f us, error %.2e\n",
	       in->inferred_interval_ns / 1e3, want / 1e3, e);
	ok(e < 0.01, "interleaved captures: mean within 1%% (%.2e)", e);
	is_u64(in->rounds, ta.rounds + tb.rounds, "interleaved captures: rounds");
	is_u64(in->threads, 16, "interleaved captures: threads");
	is_str(in->schedule, "fixed", "interleaved captures: schedule");
	nt_rate_free(rt);
	free(s);
	truth_free(&ta);
	truth_free(&tb);
}

/* ------------------------------------------------------------------ degenerate input */

static void test_rate_bad_args(void)
{
	nt_rate *rt = (nt_rate *)&rt;
	nt_error err;
	nt_error_clear(&err);
	is_int(nt_rate_new(&rt, 1000000, 0, 0, &err), NT_EINVAL, "freq 0 is rejected");
	ok(rt == NULL, "freq 0: no estimator");
	ok(strstr(err.msg, "frequency") != NULL, "freq 0: message \"%s\"", err.msg);
	is_int(nt_rate_new(&rt, 0, 0, 0, NULL), NT_EINVAL, "freq 0 without an error object");
	nt_rate_free(NULL);
	ok(1, "nt_rate_free(NULL)");
}

static void test_rate_no_samples(void)
{
	nt_rate *rt = new_rate(1000000, 1000000000, 0);
	const nt_rate_info *in = nt_rate_result(rt);
	ok(sane(in), "no samples: result is finite");
	is_u64(in->samples, 0, "no samples: samples");
	is_u64(in->rounds, 0, "no samples: rounds");
	ok(in->inferred_interval_ns == 0, "no samples: interval 0");
	is_str(in->schedule, "unknown", "no samples: schedule");
	is_u64(in->declared_interval_ns, 1000000, "no samples: declared interval");
	is_int(in->ngaps, 0, "no samples: no gaps");
	nt_rate_free(rt);
}

static void test_rate_one_and_two_samples(void)
{
	nt_rate *rt = new_rate(0, 10000000, 0);
	nt_rate_add(rt, 1234, 1, 2);
	const nt_rate_info *in = nt_rate_result(rt);
	ok(sane(in), "one sample: result is finite");
	is_u64(in->rounds, 1, "one sample: one round");
	ok(in->inferred_interval_ns == 0, "one sample: no interval");
	is_str(in->schedule, "unknown", "one sample: schedule");
	nt_rate_add(rt, 1234 + 10000, 1, 2); /* 1 ms later at 10 MHz */
	in = nt_rate_result(rt);
	ok(sane(in), "two samples: result is finite");
	is_u64(in->rounds, 2, "two samples: two rounds");
	ok(in->inferred_interval_ns == 1e6, "two samples: interval %.1f ns",
	   in->inferred_interval_ns);
	ok(in->median_interval_ns == 1e6, "two samples: median exact (clamped to the extremes)");
	ok(in->cv == 0, "two samples: cv 0");
	is_str(in->schedule, "unknown", "two samples: schedule");
	ok(in->per_thread_median_ns == 1e6, "two samples: per-thread median");
	nt_rate_free(rt);
}

static void test_rate_few_rounds(void)
{
	gen_opts o = default_opts();
	o.nrounds = 9;
	o.seed = 800;
	check_session("fixed, 9 rounds", &o, "unknown", 1, 1);
	o.nrounds = 10;
	check_session("fixed, 10 rounds", &o, "fixed", 1, 1);
}

/* Samples going backwards are ignored: the result equals the clean stream's. */
static void test_rate_backwards_ignored(void)
{
	gen_opts o = default_opts();
	o.schedule = SCH_JITTER;
	o.jitter = 0.2;
	o.seed = 900;
	sample *s = NULL, *d = NULL;
	size_t n = 0, cap = 0, nd = 0;
	truth tr;
	generate(&o, &s, &n, &cap, &tr);
	d = malloc(2 * n * sizeof *d);
	for (size_t i = 0; i < n; i++) {
		d[nd++] = s[i];
		if (i % 97 == 50) /* a stray sample 0.3 ms in the past, of another thread */
			d[nd++] = (sample){s[i].ts - 300000, 99999, s[i].cap};
		if (i % 89 == 3) /* the same sample twice */
			d[nd++] = s[i];
	}
	nt_rate *a = new_rate(0, o.freq, o.sync), *b = new_rate(0, o.freq, o.sync);
	feed(a, s, n);
	feed(b, d, nd);
	const nt_rate_info *ia = nt_rate_result(a), *ib = nt_rate_result(b);
	ok(ia->inferred_interval_ns == ib->inferred_interval_ns,
	   "backwards/duplicates: same mean (%.3f vs %.3f ns)", ia->inferred_interval_ns,
	   ib->inferred_interval_ns);
	is_u64(ib->rounds, ia->rounds, "backwards/duplicates: same rounds");
	ok(ia->median_interval_ns == ib->median_interval_ns, "backwards/duplicates: same median");
	ok(ia->cv == ib->cv, "backwards/duplicates: same cv");
	is_u64(ib->samples, nd, "backwards/duplicates: every sample counted as fed");
	nt_rate_free(a);
	nt_rate_free(b);
	free(s);
	free(d);
	truth_free(&tr);
}

/* The same sampler thread id in a second session whose clock restarted lower: the stream
 * restarts (a few samples are lost detecting it), with no interval across the reset. */
static void test_rate_clock_reset(void)
{
	gen_opts a = default_opts(), b = default_opts();
	a.nrounds = 3000;
	a.seed = 950;
	b.nrounds = 3000;
	b.seed = 951;
	b.base = 1000; /* far below a's timestamps */
	sample *s = NULL;
	size_t n = 0, cap = 0;
	truth ta, tb;
	generate(&a, &s, &n, &cap, &ta);
	generate(&b, &s, &n, &cap, &tb);
	nt_rate *rt = new_rate(0, a.freq, 0);
	feed(rt, s, n);
	const nt_rate_info *in = nt_rate_result(rt);
	double want = (double)((ta.sum_ticks + tb.sum_ticks) / (ta.ndeltas + tb.ndeltas));
	double e = rel_err(in->inferred_interval_ns, want);
	printf("# clock reset: rounds %" PRIu64 " of %" PRIu64 ", error %.2e\n", in->rounds,
	       ta.rounds + tb.rounds, e);
	ok(sane(in), "clock reset: result is finite");
	ok(e < 0.01, "clock reset: mean within 1%% (%.2e)", e);
	ok(in->rounds <= ta.rounds + tb.rounds && in->rounds >= ta.rounds + tb.rounds - 5,
	   "clock reset: second session counted (<= 5 rounds lost)");
	is_int(in->ngaps, 0, "clock reset: no gap");
	nt_rate_free(rt);
	free(s);
	truth_free(&ta);
	truth_free(&tb);
}

/* One instant for everything: one round, no interval, no division by zero. */
static void test_rate_all_same_timestamp(void)
{
	nt_rate *rt = new_rate(1000000, 1000000000, 0);
	for (int i = 0; i < 1000; i++)
		nt_rate_add(rt, 777, (uint64_t)(i % 10), 1);
	const nt_rate_info *in = nt_rate_result(rt);
	ok(sane(in), "same timestamp: result is finite");
	is_u64(in->rounds, 1, "same timestamp: one round");
	is_u64(in->threads, 10, "same timestamp: threads");
	ok(in->inferred_interval_ns == 0, "same timestamp: no interval");
	nt_rate_free(rt);

	/* sub-nanosecond deltas on a 4 GHz clock: one tick apart, single thread */
	rt = new_rate(0, 4000000000ull, 0);
	for (uint64_t i = 0; i < 100; i++)
		nt_rate_add(rt, 1000 + i, 1, 1);
	in = nt_rate_result(rt);
	ok(sane(in), "1-tick deltas at 4 GHz: result is finite");
	ok(fabs(in->inferred_interval_ns - 0.25) < 1e-9, "1-tick deltas: interval %.4f ns",
	   in->inferred_interval_ns);
	ok(fabs(in->median_interval_ns - 0.25) < 1e-9, "1-tick deltas: median %.4f ns",
	   in->median_interval_ns);
	is_str(in->schedule, "fixed", "1-tick deltas: schedule");
	nt_rate_free(rt);
}

/* Timestamps near 2^63 at 4 GHz, and a session start after the first sample. */
static void test_rate_large_timestamps(void)
{
	static const int at[1] = {500};
	static const double pause[1] = {100e6};
	gen_opts o = default_opts();
	o.freq = 3999999997ull;
	o.base = (1ull << 63) + 12345;
	o.sync = o.base + 4000000000ull; /* 1 s after the first sample */
	o.npauses = 1;
	o.pause_after = at;
	o.pause_ns = pause;
	o.seed = 1000;
	check_session("fixed, timestamps near 2^63 at 4 GHz", &o, "fixed", 1, 1);
}

/* More distinct thread ids than rate.c tracks: bounded, and rounds still found by time. */
static void test_rate_many_threads(void)
{
	nt_rate *rt = new_rate(0, 1000000000, 0);
	uint64_t tid = 1;
	for (int k = 0; k < 20000; k++)
		for (int j = 0; j < 5; j++)
			nt_rate_add(rt, 1000000 + (uint64_t)k * 1000000 + (uint64_t)j * 2000, tid++, 9);
	const nt_rate_info *in = nt_rate_result(rt);
	ok(sane(in), "many threads: result is finite");
	ok(in->threads <= 65536 && in->threads >= 60000, "many threads: %" PRIu64 " tracked",
	   in->threads);
	is_u64(in->rounds, 20000, "many threads: rounds");
	ok(fabs(in->inferred_interval_ns - 1e6) < 1e-6, "many threads: interval %.3f ns",
	   in->inferred_interval_ns);
	nt_rate_free(rt);
}

/* nt_rate_result() may be called, then more samples added, then called again. */
static void test_rate_result_twice(void)
{
	gen_opts o = default_opts();
	o.schedule = SCH_POISSON;
	o.nthreads = 4;
	o.seed = 1100;
	sample *s = NULL;
	size_t n = 0, cap = 0;
	truth tr;
	generate(&o, &s, &n, &cap, &tr);
	nt_rate *a = new_rate(0, o.freq, o.sync), *b = new_rate(0, o.freq, o.sync);
	feed(a, s, n / 2);
	(void)nt_rate_result(a);
	(void)nt_rate_result(a);
	feed(a, s + n / 2, n - n / 2);
	feed(b, s, n);
	const nt_rate_info *ia = nt_rate_result(a), *ib = nt_rate_result(b);
	ok(ia->inferred_interval_ns == ib->inferred_interval_ns && ia->rounds == ib->rounds &&
		   ia->median_interval_ns == ib->median_interval_ns &&
		   strcmp(ia->schedule, ib->schedule) == 0,
	   "result, more samples, result: same as one pass");
	nt_rate_free(a);
	nt_rate_free(b);
	free(s);
	truth_free(&tr);
}

/* ------------------------------------------------------------------ through a file */

/* A SampleProfiler trace with a known Poisson schedule, written by nt_writer, read back
 * by nt_reader, samples picked with nt_event_is_sample(). */
static void test_rate_writer_roundtrip(void)
{
	gen_opts o = default_opts();
	o.schedule = SCH_POISSON;
	o.period_ns = 2e6;
	o.nthreads = 6;
	o.nrounds = 5000;
	o.seed = 1200;
	o.freq = 10000000;
	o.base = 20000000;
	o.sync = 19990000;
	sample *s = NULL;
	size_t n = 0, cap = 0;
	truth tr;
	generate(&o, &s, &n, &cap, &tr);

	nt_membuf mb = {0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.format_version = 4;
	h.sync_qpc = o.sync;
	h.qpc_frequency = o.freq;
	h.pointer_size = 8;
	h.process_id = 4242;
	h.processors = 4;
	h.expected_sampling_ns = 1000000;
	nt_writer *w = NULL;
	nt_error err;
	nt_error_clear(&err);
	int rc = nt_writer_open(&w, &sink, &h, NULL, &err);
	uint32_t sample_id = 0, other_id = 0;
	if (!rc) {
		nt_metadata_desc d;
		memset(&d, 0, sizeof d);
		d.provider = NT_PROVIDER_SAMPLER;
		d.event_id = 0;
		d.name = "";
		d.level = 4;
		rc = nt_writer_add_metadata(w, &d, &sample_id, &err);
	}
	if (!rc) { /* an unrelated event on a sampled thread, which must not count */
		nt_metadata_desc d;
		memset(&d, 0, sizeof d);
		d.provider = "Test-Noise";
		d.event_id = 5;
		d.name = "Noise";
		rc = nt_writer_add_metadata(w, &d, &other_id, &err);
	}
	static const uint8_t payload[4] = {2, 0, 0, 0}; /* uint32 Managed */
	static const uint64_t stack[3] = {0x7f0000001000ull, 0x7f0000002000ull, 0x7f0000003000ull};
	for (size_t i = 0; i < n && !rc; i++) {
		nt_event_desc e;
		memset(&e, 0, sizeof e);
		e.metadata_id = sample_id;
		e.thread_id = s[i].tid;
		e.capture_thread_id = s[i].cap;
		e.processor = 0xFFFFFFFFu;
		e.timestamp = s[i].ts;
		e.stack = stack;
		e.stack_depth = 3;
		e.payload = payload;
		e.payload_len = 4;
		rc = nt_writer_write_event(w, &e, &err);
		if (!rc && i % 50 == 0) {
			e.metadata_id = other_id;
			e.capture_thread_id = e.thread_id;
			e.payload_len = 0;
			e.stack_depth = 0;
			rc = nt_writer_write_event(w, &e, &err);
		}
	}
	if (!rc) {
		rc = nt_writer_close(w, &err);
		w = NULL;
	}
	nt_writer_free(w);
	ok(rc == 0, "round trip: trace written (%zu bytes) %s", mb.len, rc ? err.msg : "");

	nt_reader *r = NULL;
	nt_rate *rt = NULL;
	uint64_t nsamples = 0;
	if (!rc)
		rc = nt_reader_open_mem(&r, mb.data, mb.len, NULL, &err);
	if (!rc) {
		const nt_trace_header *rh = nt_reader_header(r);
		rc = nt_rate_new(&rt, rh->expected_sampling_ns, rh->qpc_frequency, rh->sync_qpc,
				 &err);
	}
	const nt_event *ev;
	while (!rc && (rc = nt_reader_next(r, &ev, &err)) == 1) {
		uint32_t type;
		rc = 0;
		if (nt_event_is_sample(ev, &type)) {
			nt_rate_add(rt, ev->timestamp, ev->thread_id, ev->capture_thread_id);
			nsamples++;
		}
	}
	ok(rc == 0, "round trip: trace read %s", rc ? err.msg : "");
	if (rt) {
		const nt_rate_info *in = nt_rate_result(rt);
		double e = rel_err(in->inferred_interval_ns, tr.mean_ns);
		printf("# round trip: %" PRIu64 " samples, truth %.3f us, inferred %.3f us, error "
		       "%.2e, %s\n",
		       nsamples, tr.mean_ns / 1e3, in->inferred_interval_ns / 1e3, e, in->schedule);
		is_u64(in->samples, tr.samples, "round trip: every sample read back");
		ok(e < 0.01, "round trip: mean within 1%% (%.2e)", e);
		is_u64(in->rounds, tr.rounds, "round trip: rounds");
		is_str(in->schedule, "poisson", "round trip: schedule");
		is_u64(in->declared_interval_ns, 1000000, "round trip: declared from the header");
	}
	nt_rate_free(rt);
	nt_reader_free(r);
	nt_membuf_free(&mb);
	free(s);
	truth_free(&tr);
}

/* Real runtime-written traces (data/traces): the per-thread median of consecutive-sample
 * deltas must match the medians the spec reports as verified (spec §8: 1.34-1.49 ms on
 * macOS/Linux for a 1 ms setting, 2.0 ms Windows .NET 6, 5.3 ms Windows .NET Core 3.0,
 * 33 ms in the 2019 Windows trace), within 3% (the spec gives two digits), and the
 * sample counts must match data/traces/EXPECTED.md. */
static void test_rate_real_traces(void)
{
	static const struct {
		const char *rel;
		uint64_t samples; /* EXPECTED.md; 0: not listed */
		double lo_ms, hi_ms;
	} files[] = {
		{"traces/perfview/mixed_managed_external_samples.nettrace", 6331, 1.30, 1.50},
		{"traces/perfview/only_managed_samples.nettrace", 0, 1.30, 1.50},
		{"traces/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
		 0, 1.30, 1.50},
		{"traces/sentry-dotnet/sample.nettrace", 0, 2.0 * 0.97, 2.0 * 1.03},
		{"traces/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", 35161, 5.3 * 0.97,
		 5.3 * 1.03},
		{"traces/dotnet-diagnostics/trace-2019-06-28-truncated.nettrace", 0, 33 * 0.97,
		 33 * 1.03},
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		const char *path = tu_data(files[i].rel);
		nt_reader *r = NULL;
		nt_rate *rt = NULL;
		nt_error err;
		nt_error_clear(&err);
		FILE *f = fopen(path, "rb");
		if (!f) {
			printf("ok %d - # SKIP %s not found\n", ++tap_n, files[i].rel);
			continue;
		}
		fclose(f);
		int rc = nt_reader_open_file(&r, path, NULL, &err);
		if (!rc) {
			const nt_trace_header *h = nt_reader_header(r);
			rc = nt_rate_new(&rt, h->expected_sampling_ns, h->qpc_frequency, h->sync_qpc,
					 &err);
		}
		const nt_event *ev;
		while (!rc && (rc = nt_reader_next(r, &ev, &err)) == 1) {
			rc = 0;
			if (nt_event_is_sample(ev, NULL))
				nt_rate_add(rt, ev->timestamp, ev->thread_id, ev->capture_thread_id);
		}
		ok(rc == 0, "%s: read %s", files[i].rel, rc ? err.msg : "");
		if (rt) {
			const nt_rate_info *in = nt_rate_result(rt);
			printf("# %s: %" PRIu64 " samples, %" PRIu64 " rounds, %" PRIu64
			       " threads; mean %.1f us, median %.1f, p10 %.1f, p90 %.1f, cv %.3f, %s; "
			       "per-thread median %.1f us; %zu gaps, %.1f ms\n",
			       files[i].rel, in->samples, in->rounds, in->threads,
			       in->inferred_interval_ns / 1e3, in->median_interval_ns / 1e3,
			       in->p10_interval_ns / 1e3, in->p90_interval_ns / 1e3, in->cv,
			       in->schedule, in->per_thread_median_ns / 1e3, in->ngaps,
			       in->gaps_total_ns / 1e6);
			ok(sane(in), "%s: result is finite", files[i].rel);
			if (files[i].samples)
				is_u64(in->samples, files[i].samples, "%s: samples", files[i].rel);
			double pt = in->per_thread_median_ns / 1e6;
			ok(pt >= files[i].lo_ms && pt <= files[i].hi_ms,
			   "%s: per-thread median %.3f ms in [%.2f, %.2f]", files[i].rel, pt,
			   files[i].lo_ms, files[i].hi_ms);
			/* the declared 1 ms is never the real interval */
			ok(in->inferred_interval_ns > 1.2 * (double)in->declared_interval_ns,
			   "%s: real interval above the declared %" PRIu64 " ns", files[i].rel,
			   in->declared_interval_ns);
		}
		nt_rate_free(rt);
		nt_reader_free(r);
	}
}

int main(void)
{
	test_rate_bad_args();
	test_rate_no_samples();
	test_rate_one_and_two_samples();
	test_rate_all_same_timestamp();
	test_rate_few_rounds();
	test_rate_fixed_16_threads();
	test_rate_jittered();
	test_rate_poisson();
	test_rate_gaps();
	test_rate_many_gaps();
	test_rate_thread_subsets();
	test_rate_equal_timestamps();
	test_rate_concatenated_sessions();
	test_rate_interleaved_captures();
	test_rate_backwards_ignored();
	test_rate_clock_reset();
	test_rate_large_timestamps();
	test_rate_many_threads();
	test_rate_result_twice();
	test_rate_writer_roundtrip();
	test_rate_real_traces();
	return tap_done();
}
