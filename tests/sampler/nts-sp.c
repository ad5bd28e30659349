/* SPDX-License-Identifier: MIT */
/* nts-sp.c - samplepoint mode under test (tests/e2e/t507-record-samplepoint.sh). Built
 * twice: nts-sp calls nts_samplepoint() in its loops; nts-sp-instr is built with
 * -finstrument-functions, so every function entry and exit is a samplepoint as well and
 * the hooks keep the shadow stack the samples are taken from.
 *
 * Usage: nts-sp OUT.nettrace SECONDS INTERVAL_MS split|alt
 *        nts-sp - SECONDS INTERVAL_MS split|alt   (under nettrace-record --samplepoint:
 *          no session of its own, no statistics; SECONDS of CPU time, then exit 0)
 *   split  work_a runs 7 chunks, work_b 3 chunks, alternately; a chunk is the same leaf
 *          work followed by a samplepoint, so visits are spread like time (70/30)
 *   alt    a loop that calls alt_a then alt_b, equal cost, one samplepoint each: a fixed
 *          visit count would always stop in the same one (count-domain aliasing)
 * Prints the session statistics: "samples=N rounds=N late=N missed=N hz=F". */
#ifdef NTS_SP_INSTR
#define NTS_INSTRUMENT_HOOKS
#endif
#include "ntsampler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "noipa.h"

static volatile uint64_t sink;

NOIPA uint64_t sp_leaf(uint64_t n);
NOIPA uint64_t sp_leaf(uint64_t n)
{
	uint64_t x = n;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 11;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOIPA void work_a(int chunks);
NOIPA void work_a(int chunks)
{
	for (int i = 0; i < chunks; i++) {
		sink += sp_leaf(2000);
		nts_samplepoint();
	}
}

NOIPA void work_b(int chunks);
NOIPA void work_b(int chunks)
{
	for (int i = 0; i < chunks; i++) {
		sink += sp_leaf(2000);
		nts_samplepoint();
	}
}

NOIPA void alt_a(void);
NOIPA void alt_a(void)
{
	sink += sp_leaf(1000);
	nts_samplepoint();
}

NOIPA void alt_b(void);
NOIPA void alt_b(void)
{
	sink += sp_leaf(1000);
	nts_samplepoint();
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: nts-sp OUT.nettrace SECONDS INTERVAL_MS split|alt\n");
		return 1;
	}
	double secs = atof(argv[2]);
	int alt = strcmp(argv[4], "alt") == 0;
	nt_error err;
	memset(&err, 0, sizeof err);
	int env = strcmp(argv[1], "-") == 0; /* nettrace-record's session */
	nts_session *s = NULL;
	if (!env) {
		nts_opts o;
		memset(&o, 0, sizeof o);
		o.sz = sizeof o;
		o.mode = NTS_MODE_SAMPLEPOINT;
		if (nts_start(&o, &err)) {
			fprintf(stderr, "nts-sp: %s\n", err.msg);
			return 1;
		}
		nts_session_opts so;
		memset(&so, 0, sizeof so);
		so.sz = sizeof so;
		so.path = argv[1];
		so.fd = -1;
		so.interval_ms = (uint32_t)atoi(argv[3]);
		so.seed = 7;
		if (nts_session_open(&s, &so, &err)) {
			fprintf(stderr, "nts-sp: %s: %s\n", argv[1], err.msg);
			return 1;
		}
	}
	uint64_t end = cpu_ns() + (uint64_t)(secs * 1e9);
	while (cpu_ns() < end) {
		for (int k = 0; k < 50; k++) {
			if (alt) {
				alt_a();
				alt_b();
			} else {
				work_a(7);
				work_b(3);
			}
		}
	}
	if (env)
		return 0;
	nts_stats st = {.sz = sizeof(nts_stats)};
	if (nts_session_close(s, &st, &err) || nts_stop(&err)) {
		fprintf(stderr, "nts-sp: %s\n", err.msg);
		return 1;
	}
	printf("samples=%llu rounds=%llu late=%llu missed=%llu hz=%.3f\n",
	       (unsigned long long)st.samples, (unsigned long long)st.rounds,
	       (unsigned long long)st.late, (unsigned long long)st.missed, st.realized_hz);
	return 0;
}
