/* SPDX-License-Identifier: MIT */
/* tap.h - minimal TAP producer for the unit tests (header-only).
 * ok(cond, fmt...) prints "ok N - desc" or "not ok N - desc"; tap_done() prints the plan
 * and returns the exit status. */
#ifndef NT_TAP_H
#define NT_TAP_H
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline __attribute__((format(printf, 2, 0))) int tap_vok(int cond, const char *fmt,
								   va_list ap)
{
	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}
static inline __attribute__((format(printf, 2, 3))) int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = tap_vok(cond, fmt, ap);
	va_end(ap);
	return r;
}
#define is_int(got, want, ...)                                                              \
	do {                                                                                 \
		long long g_ = (long long)(got), w_ = (long long)(want);                     \
		if (!ok(g_ == w_, __VA_ARGS__))                                              \
			printf("#   got %lld, want %lld\n", g_, w_);                             \
	} while (0)
#define is_u64(got, want, ...)                                                              \
	do {                                                                                 \
		unsigned long long g_ = (got), w_ = (want);                                  \
		if (!ok(g_ == w_, __VA_ARGS__))                                              \
			printf("#   got %llu, want %llu\n", g_, w_);                             \
	} while (0)
#define is_str(got, want, ...)                                                              \
	do {                                                                                 \
		const char *g_ = (got), *w_ = (want);                                        \
		if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))                       \
			printf("#   got \"%s\", want \"%s\"\n", g_ ? g_ : "(null)",              \
			       w_ ? w_ : "(null)");                                          \
	} while (0)
static inline void tap_diag(const char *s)
{
	printf("# %s\n", s);
}
static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
#endif
