/* SPDX-License-Identifier: MIT */
/* json.c - UTF-8 validation and the one JSON string escaper, shared by the payload renderer, the exporters and
 * (through nt_json_write_string) the tools. Whatever bytes it is given, it produces valid
 * UTF-8 JSON: " and \ escaped, \n \r \t by name, other control characters and DEL as
 * \u00XX, invalid UTF-8 (truncated, overlong, surrogates, beyond U+10FFFF) as U+FFFD. */
#include "internal.h"

#include <stdio.h>

size_t nt_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t k;
	uint32_t cp, min;
	if ((c & 0xE0) == 0xC0) {
		k = 2, cp = c & 0x1F, min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		k = 3, cp = c & 0x0F, min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		k = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3Fu);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	/* U+FFFE and U+FFFF are not XML characters */
	if (cp == 0xFFFE || cp == 0xFFFF)
		return 0;
	return k;
}

static const char REPLACEMENT[] = "\xEF\xBF\xBD"; /* U+FFFD */

void nt_json_escape(const char *s, size_t n, nt_put_fn put, void *ctx)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0; /* bytes [i - run, i) are copied as they are */
	while (i < n) {
		unsigned c = u[i];
		char tmp[8];
		const char *rep = NULL;
		size_t k = 1, rlen = 2;
		if (c < 0x80) {
			switch (c) {
			case '"': rep = "\\\""; break;
			case '\\': rep = "\\\\"; break;
			case '\n': rep = "\\n"; break;
			case '\r': rep = "\\r"; break;
			case '\t': rep = "\\t"; break;
			default:
				if (c < 0x20 || c == 0x7f) {
					snprintf(tmp, sizeof tmp, "\\u%04x", c);
					rep = tmp;
					rlen = 6;
				}
			}
		} else if ((k = nt_utf8_seq(u + i, n - i)) == 0) {
			rep = REPLACEMENT;
			rlen = 3;
			k = 1;
		}
		if (rep) {
			if (run)
				put(ctx, s + i - run, run);
			run = 0;
			put(ctx, rep, rlen);
		} else {
			run += k;
		}
		i += k;
	}
	if (run)
		put(ctx, s + i - run, run);
}

typedef struct sink_put {
	const nt_sink *sink;
	int rc;
} sink_put;

static void put_sink(void *ctx, const char *s, size_t n)
{
	sink_put *sp = ctx;
	if (sp->rc == 0)
		sp->rc = sp->sink->write(sp->sink->ctx, s, n);
}

int nt_json_write_string(const nt_sink *sink, const char *s, size_t n)
{
	sink_put sp = {sink, 0};
	put_sink(&sp, "\"", 1);
	if (s)
		nt_json_escape(s, n, put_sink, &sp);
	put_sink(&sp, "\"", 1);
	return sp.rc;
}
