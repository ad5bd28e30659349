/* SPDX-License-Identifier: MIT */
/* dwarf-prog.c - test-dwarf-prog, a program built with "gcc -g -O2" by make check so
 * test-dwarf.c and tests/e2e/t110-fold-native.sh can symbolize real optimised code: static
 * inline functions nested three and four deep, always_inline and noinline functions, a
 * cold path, inline helpers from a header (dwarf-prog.h) and a second file
 * (dwarf-prog2.c). What it computes does not matter; it must not be optimised away. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf-prog.h"

typedef struct dp_state {
	uint32_t acc;
	uint32_t counts[16];
	uint8_t buf[256];
	size_t len;
} dp_state;

static inline int dp_classify(uint32_t v)
{
	if (v % 7 == 0)
		return 0;
	if (v % 5 == 1)
		return 1;
	return (int)(v & 3) + 2;
}

static inline void dp_count(dp_state *s, uint32_t v)
{
	s->counts[dp_classify(v) & 15]++;
	s->acc = dp_mix(s->acc, v);
}

static inline void dp_push(dp_state *s, uint8_t b)
{
	if (s->len < sizeof s->buf)
		s->buf[s->len++] = b;
	else
		dp_count(s, dp_hash(s->buf, s->len, s->acc));
	if (s->len == sizeof s->buf)
		s->len = 0;
}

static __attribute__((noinline)) void dp_report_error(const char *what, uint32_t v)
{
	fprintf(stderr, "dwarf-prog: unexpected %s %u\n", what, (unsigned)v);
}

/* worker: the function the e2e test samples, with inline chains dp_push -> dp_count ->
 * dp_mix -> dp_rotl inside its loops. */
__attribute__((noinline)) uint32_t dp_worker(dp_state *s, const char *text, uint32_t rounds)
{
	size_t n = strlen(text);
	for (uint32_t r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n; i++) {
			uint8_t c = (uint8_t)text[i];
			if (__builtin_expect(c == 0xff, 0)) {
				dp_report_error("byte", c);
				continue;
			}
			dp_push(s, (uint8_t)(c ^ r));
			if ((i & 63) == 63)
				dp_count(s, dp_hash((const uint8_t *)text, i, r));
		}
	}
	return s->acc ^ dp_hash(s->buf, s->len, rounds);
}

static __attribute__((noinline)) uint32_t dp_checksum(const dp_state *s)
{
	uint32_t h = 0;
	for (int i = 0; i < 16; i++)
		h = dp_mix(h, s->counts[i]);
	return h;
}

int main(int argc, char **argv)
{
	dp_state s;
	memset(&s, 0, sizeof s);
	const char *text = argc > 1 ? argv[1] : "the quick brown fox jumps over the lazy dog";
	uint32_t rounds = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 3;
	uint32_t v = dp_worker(&s, text, rounds);
	v ^= dp_table_run((const uint8_t *)text, strlen(text), rounds);
	uint32_t sorted[64];
	for (size_t i = 0; i < 64; i++)
		sorted[i] = dp_mix(v, (uint32_t)i);
	if (!dp_sort_check(sorted, 64))
		dp_report_error("order", v);
	printf("%08x %08x\n", (unsigned)v, (unsigned)dp_checksum(&s));
	return 0;
}
