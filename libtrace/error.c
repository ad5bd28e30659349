/* SPDX-License-Identifier: MIT */
/* error.c - error reporting (nt_error), and the small utilities every module needs:
 * growable arrays, UTF-16 <-> UTF-8 conversion, SYSTEMTIME conversion. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

const char *nt_strerror(int code)
{
	switch (code) {
	case NT_OK: return "success";
	case NT_EFORMAT: return "malformed input";
	case NT_ETRUNC: return "truncated input";
	case NT_EUNSUPPORTED: return "unsupported input";
	case NT_EIO: return "input/output error";
	case NT_ENOMEM: return "out of memory";
	case NT_EINVAL: return "invalid argument";
	case NT_ELIMIT: return "size limit exceeded";
	case NT_ESQL: return "SQLite error";
	case NT_EINTERNAL: return "internal error";
	default: return "unknown error";
	}
}

void nt_error_clear(nt_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->sys_errno = 0;
	err->offset = NT_NO_OFFSET;
	err->msg[0] = '\0';
}

int nt_fail(nt_error *err, int code, uint64_t offset, const char *fmt, ...)
{
	/* The first failure wins: outer layers must not overwrite the root cause. */
	if (err && err->code == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->code = code;
		err->sys_errno = 0;
		err->offset = offset;
	}
	return code;
}

int nt_fail_errno(nt_error *err, int sys_errno, const char *fmt, ...)
{
	if (err && err->code == 0) {
		char tmp[200];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(tmp, sizeof tmp, fmt, ap);
		va_end(ap);
		snprintf(err->msg, sizeof err->msg, "%s: %s", tmp, strerror(sys_errno));
		err->code = sys_errno == ENOMEM ? NT_ENOMEM : NT_EIO;
		err->sys_errno = sys_errno;
		err->offset = NT_NO_OFFSET;
	}
	return sys_errno == ENOMEM ? NT_ENOMEM : NT_EIO;
}

int nt_grow(void **pp, size_t *cap, size_t need, size_t esz)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	size_t bytes;
	if (nt_mul_size(ncap, esz, &bytes))
		return -1;
	void *np = realloc(*pp, bytes);
	if (!np)
		return -1;
	*pp = np;
	*cap = ncap;
	return 0;
}

/* splitmix64 finaliser: ids in files are often small and sequential, or adversarial. */
static size_t idmap_hash(uint64_t k, size_t mask)
{
	k ^= k >> 30;
	k *= 0xbf58476d1ce4e5b9ull;
	k ^= k >> 27;
	k *= 0x94d049bb133111ebull;
	k ^= k >> 31;
	return (size_t)k & mask;
}

static int idmap_rehash(nt_idmap *m, size_t ncap)
{
	uint64_t *keys = calloc(ncap, sizeof *keys);
	uint32_t *vals = calloc(ncap, sizeof *vals);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->vals[i])
			continue;
		size_t h = idmap_hash(m->keys[i], ncap - 1);
		while (vals[h])
			h = (h + 1) & (ncap - 1);
		keys[h] = m->keys[i];
		vals[h] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = ncap;
	return 0;
}

int nt_idmap_put(nt_idmap *m, uint64_t key, size_t index)
{
	if (index >= UINT32_MAX)
		return -1;
	/* keep the load factor <= 1/2 so probe sequences stay short */
	if ((m->n + 1) * 2 > m->cap) {
		if (m->cap > SIZE_MAX / 4 || idmap_rehash(m, m->cap ? m->cap * 2 : 16))
			return -1;
	}
	size_t h = idmap_hash(key, m->cap - 1);
	while (m->vals[h] && m->keys[h] != key)
		h = (h + 1) & (m->cap - 1);
	if (!m->vals[h])
		m->n++;
	m->keys[h] = key;
	m->vals[h] = (uint32_t)index + 1;
	return 0;
}

int nt_idmap_get(const nt_idmap *m, uint64_t key, size_t *index)
{
	if (!m->cap)
		return 0;
	size_t h = idmap_hash(key, m->cap - 1);
	while (m->vals[h]) {
		if (m->keys[h] == key) {
			*index = m->vals[h] - 1;
			return 1;
		}
		h = (h + 1) & (m->cap - 1);
	}
	return 0;
}

void nt_idmap_free(nt_idmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->n = 0;
}

char *nt_strdup(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

/* Encodes code point cp as UTF-8 into o (room for 4); returns the length. */
static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Decodes UTF-16LE units [p, p+nunits*2) into out (which must hold 3*nunits+1 bytes:
 * a surrogate pair (2 units) gives 4 bytes, a lone unit at most 3). Unpaired surrogates
 * become U+FFFD. Returns the UTF-8 length. */
static size_t utf16_to_utf8(const uint8_t *p, size_t nunits, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < nunits; i++) {
		uint32_t u = nt_le16(p + 2 * i);
		if (u >= 0xD800 && u <= 0xDBFF && i + 1 < nunits) {
			uint32_t l = nt_le16(p + 2 * (i + 1));
			if (l >= 0xDC00 && l <= 0xDFFF) {
				u = 0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00);
				i++;
			} else {
				u = 0xFFFD;
			}
		} else if (u >= 0xD800 && u <= 0xDFFF) {
			u = 0xFFFD;
		}
		o += put_utf8(out + o, u);
	}
	out[o] = '\0';
	return o;
}

/* Number of UTF-16 units before the NUL within len bytes, or -1 if unterminated. */
static long utf16z_units(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		if (p[i] == 0 && p[i + 1] == 0)
			return (long)(i / 2);
	return -1;
}

size_t nt_utf16z_dup(const uint8_t *p, size_t len, char **out)
{
	*out = NULL;
	long n = utf16z_units(p, len);
	if (n < 0)
		return 0;
	char *s = malloc((size_t)n * 3 + 1);
	if (!s)
		return (size_t)-1;
	utf16_to_utf8(p, (size_t)n, s);
	*out = s;
	return (size_t)n * 2 + 2;
}

size_t nt_utf16z_to_utf8(const uint8_t *p, size_t len, char *buf, size_t bufsize)
{
	long n = utf16z_units(p, len);
	if (bufsize)
		buf[0] = '\0';
	if (n < 0)
		return 0;
	/* Convert in chunks that fit the caller's buffer; truncate at a unit boundary. */
	size_t o = 0;
	char tmp[8];
	for (long i = 0; i < n; i++) {
		uint32_t u = nt_le16(p + 2 * i);
		size_t k;
		if (u >= 0xD800 && u <= 0xDBFF && i + 1 < n) {
			uint32_t l = nt_le16(p + 2 * (i + 1));
			if (l >= 0xDC00 && l <= 0xDFFF) {
				u = 0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00);
				i++;
			} else {
				u = 0xFFFD;
			}
		} else if (u >= 0xD800 && u <= 0xDFFF) {
			u = 0xFFFD;
		}
		k = put_utf8(tmp, u);
		if (o + k + 1 > bufsize)
			break;
		memcpy(buf + o, tmp, k);
		o += k;
	}
	if (bufsize)
		buf[o] = '\0';
	return (size_t)n * 2 + 2;
}

int nt_utf8_to_utf16z(const char *s, uint8_t **buf, size_t *len, size_t *cap)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)u);
	/* worst case: one UTF-16 unit (2 bytes) per input byte, plus the terminator */
	if (n > SIZE_MAX / 4 || nt_grow((void **)buf, cap, *len + 2 * n + 2, 1))
		return -1;
	uint8_t *o = *buf + *len;
	size_t i = 0;
	while (i < n) {
		uint32_t cp = u[i];
		size_t k = 1;
		if (cp >= 0xF0 && i + 3 < n + 0 && (u[i + 1] & 0xC0) == 0x80) {
			cp = ((cp & 0x07) << 18) | ((u[i + 1] & 0x3Fu) << 12) |
			     ((u[i + 2] & 0x3Fu) << 6) | (u[i + 3] & 0x3Fu);
			k = 4;
		} else if (cp >= 0xE0 && i + 2 < n && (u[i + 1] & 0xC0) == 0x80) {
			cp = ((cp & 0x0F) << 12) | ((u[i + 1] & 0x3Fu) << 6) | (u[i + 2] & 0x3Fu);
			k = 3;
		} else if (cp >= 0xC0 && i + 1 < n && (u[i + 1] & 0xC0) == 0x80) {
			cp = ((cp & 0x1F) << 6) | (u[i + 1] & 0x3Fu);
			k = 2;
		} else if (cp >= 0x80) {
			cp = 0xFFFD;
		}
		i += k;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			nt_put16(o, (uint16_t)(0xD800 + (cp >> 10)));
			nt_put16(o + 2, (uint16_t)(0xDC00 + (cp & 0x3FF)));
			o += 4;
		} else {
			nt_put16(o, (uint16_t)cp);
			o += 2;
		}
	}
	nt_put16(o, 0);
	o += 2;
	*len = (size_t)(o - *buf);
	return 0;
}

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
