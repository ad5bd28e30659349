/* SPDX-License-Identifier: MIT */
/* out.c - the library's one growable output buffer (nt_out, internal.h): bytes accumulate
 * and go to an nt_sink in large writes (the exporters, the tree printer) or, without a sink,
 * stay in memory (the ClickHouse export's statements, rows, Native blocks and replies); the
 * first failure sticks; with the XML and JSON escapers the text writers use. Not here: the
 * sinks themselves (sink.c). */
#include "internal.h"

#include <stdio.h>

#define OUT_FLUSH_AT (1u << 20)

void nt_out_init(nt_out *o, const nt_sink *sink)
{
	memset(o, 0, sizeof *o);
	o->sink = sink;
}

int nt_out_flush(nt_out *o)
{
	if (!o->sink)
		return o->rc; /* a memory buffer keeps its bytes */
	if (o->rc == 0 && o->len) {
		int rc = o->sink->write(o->sink->ctx, o->buf, o->len);
		if (rc)
			o->rc = rc < 0 ? rc : NT_EIO; /* a sink returns 0 or an NT_E* code */
	}
	o->len = 0;
	return o->rc;
}

int nt_out_end(nt_out *o)
{
	nt_out_flush(o);
	free(o->buf);
	o->buf = NULL;
	o->cap = 0;
	return o->rc;
}

static int out_room(nt_out *o, size_t n)
{
	if (o->rc)
		return -1;
	if (n <= o->cap - o->len) /* cap >= len: no overflow, whatever n is */
		return 0;
	if (o->sink && o->len >= OUT_FLUSH_AT && nt_out_flush(o))
		return -1;
	if (n > SIZE_MAX - o->len || nt_grow((void **)&o->buf, &o->cap, o->len + n, 1)) {
		o->rc = NT_ENOMEM;
		return -1;
	}
	return 0;
}

int nt_out_reserve(nt_out *o, size_t n)
{
	return out_room(o, n);
}

const char *nt_out_cstr(nt_out *o)
{
	if (out_room(o, 1))
		return NULL;
	o->buf[o->len] = '\0';
	return o->buf;
}

char *nt_out_take(nt_out *o)
{
	if (!nt_out_cstr(o))
		return NULL;
	char *s = o->buf;
	o->buf = NULL;
	o->len = o->cap = 0;
	return s;
}

void nt_out_put(nt_out *o, const char *s, size_t n)
{
	if (n == 0)
		return;
	if ((o->rc || n > o->cap - o->len) && out_room(o, n)) /* the test first: small puts */
		return;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

void nt_out_str(nt_out *o, const char *s)
{
	nt_out_put(o, s, strlen(s));
}

size_t nt_fmt_u64(char *buf, uint64_t v)
{
	char tmp[20];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return n;
}

void nt_out_u64(nt_out *o, uint64_t v)
{
	char tmp[21];
	nt_out_put(o, tmp, nt_fmt_u64(tmp, v));
}

void nt_out_printf(nt_out *o, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (k < 0) {
		if (!o->rc)
			o->rc = NT_EINTERNAL;
		return;
	}
	if ((size_t)k < sizeof tmp) {
		nt_out_put(o, tmp, (size_t)k);
		return;
	}
	if (out_room(o, (size_t)k + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(o->buf + o->len, (size_t)k + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)k;
}

static const char REPLACEMENT[] = "\xEF\xBF\xBD"; /* U+FFFD */

void nt_out_xml(nt_out *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0; /* bytes [i - run, i) are copied as they are */
	while (i < n) {
		unsigned c = u[i];
		const char *rep = NULL;
		size_t k = 1;
		if (c < 0x80) {
			switch (c) {
			case '&': rep = "&amp;"; break;
			case '<': rep = "&lt;"; break;
			case '>': rep = "&gt;"; break;
			case '"': rep = "&quot;"; break;
			case '\'': rep = "&#39;"; break;
			case '\t': break;
			default:
				if (c < 0x20 || c == 0x7F)
					rep = "?";
			}
		} else if ((k = nt_utf8_seq(u + i, n - i)) == 0) {
			rep = REPLACEMENT;
			k = 1;
		}
		if (rep) {
			nt_out_put(o, s + i - run, run);
			run = 0;
			nt_out_str(o, rep);
			i += k;
		} else {
			i += k;
			run += k;
		}
	}
	nt_out_put(o, s + i - run, run);
}

static void out_put(void *ctx, const char *s, size_t n)
{
	nt_out_put(ctx, s, n);
}

void nt_out_json(nt_out *o, const char *s, size_t n)
{
	nt_json_escape(s, n, out_put, o);
}
