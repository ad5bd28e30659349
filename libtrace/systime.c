/* SPDX-License-Identifier: MIT */
/* systime.c - Windows SYSTEMTIME (the trace header's sync time) to Unix nanoseconds and
 * ISO-8601 text. */
#include "internal.h"

#include <stdio.h>

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	/* Howard Hinnant's days-from-civil algorithm (proleptic Gregorian). */
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int64_t nt_systemtime_to_unix_ns(const uint16_t st[8])
{
	int64_t days = days_from_civil(st[0], st[1] ? st[1] : 1, st[3] ? st[3] : 1);
	int64_t secs = days * 86400 + (int64_t)st[4] * 3600 + (int64_t)st[5] * 60 + st[6];
	/* the header's date is the file's word: years 0..65535, of which int64 nanoseconds
	 * hold 1678..2262; outside, "unknown" rather than an overflow */
	const int64_t lim = INT64_MAX / 1000000000 - 1;
	if (secs > lim || secs < -lim)
		return 0;
	return secs * 1000000000 + (int64_t)st[7] * 1000000;
}

void nt_systemtime_iso(const uint16_t st[8], char buf[32])
{
	snprintf(buf, 32, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", st[0] % 10000u, st[1] % 100u,
		 st[3] % 100u, st[4] % 100u, st[5] % 100u, st[6] % 100u, st[7] % 1000u);
}
