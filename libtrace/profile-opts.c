/* SPDX-License-Identifier: MIT */
/* profile-opts.c - the option parsers shared by the profile tools: weight units
 * (nt_unit_parse) and time ranges (nt_range_parse, "1.5s..200ms", "ts:N..ts:M"). */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>

int nt_unit_parse(const char *s)
{
	if (!s)
		return -1;
	if (strcmp(s, "samples") == 0)
		return NT_UNIT_SAMPLES;
	if (strcmp(s, "ns") == 0)
		return NT_UNIT_NS;
	if (strcmp(s, "us") == 0)
		return NT_UNIT_US;
	if (strcmp(s, "ms") == 0)
		return NT_UNIT_MS;
	return -1;
}

/* Parses one side of a range: "1.5s", "200ms", "30us", "10ns", "2m", "12" (seconds) or
 * "ts:123456" (raw). Returns 0, or -1 with why set. */
static int parse_bound(const char *s, size_t n, int64_t *out, int *raw, const char **why)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf) {
		*why = n ? "bound too long" : "empty bound";
		return -1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (strncmp(buf, "ts:", 3) == 0) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(buf + 3, &end, 10);
		if (errno || end == buf + 3 || *end || !isdigit((unsigned char)buf[3]) ||
		    v > INT64_MAX) {
			*why = "raw timestamp must be a decimal integer after 'ts:'";
			return -1;
		}
		*out = (int64_t)v;
		*raw = 1;
		return 0;
	}
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || errno || !isfinite(v)) {
		*why = "expected a number with a unit (ns, us, ms, s, m) or ts:RAW";
		return -1;
	}
	double mul;
	if (*end == '\0' || strcmp(end, "s") == 0)
		mul = 1e9;
	else if (strcmp(end, "ms") == 0)
		mul = 1e6;
	else if (strcmp(end, "us") == 0)
		mul = 1e3;
	else if (strcmp(end, "ns") == 0)
		mul = 1;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		mul = 60e9;
	else {
		*why = "unknown unit (use ns, us, ms, s or m)";
		return -1;
	}
	double ns = v * mul;
	if (ns > 9.2e18 || ns < -9.2e18) {
		*why = "time out of range";
		return -1;
	}
	*out = (int64_t)llround(ns);
	*raw = 0;
	return 0;
}

int nt_range_parse(const char *s, nt_profile_opts *o, nt_error *err)
{
	nt_error_clear(err);
	const char *dots = s ? strstr(s, "..") : NULL;
	const char *why = NULL;
	if (!dots)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "bad range '%s': expected A..B, A.. or ..B", s ? s : "");
	size_t la = (size_t)(dots - s), lb = strlen(dots + 2);
	int64_t a = 0, b = 0;
	int ra = -1, rb = -1;
	if (la == 0 && lb == 0)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad range '%s': both bounds are empty", s);
	if (la && parse_bound(s, la, &a, &ra, &why))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad range '%s': start: %s", s, why);
	if (lb && parse_bound(dots + 2, lb, &b, &rb, &why))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad range '%s': end: %s", s, why);
	if (la && lb && ra != rb)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "bad range '%s': mixes a raw timestamp and a relative time", s);
	if (la && lb && b <= a)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad range '%s': end is not after start",
			       s);
	o->has_start = la != 0;
	o->has_end = lb != 0;
	o->start = a;
	o->end = b;
	o->range_raw = (la ? ra : rb) == 1;
	return 0;
}
