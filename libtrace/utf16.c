/* SPDX-License-Identifier: MIT */
/* utf16.c - UTF-16LE <-> UTF-8 conversion of the strings nettrace files hold (unpaired
 * surrogates become U+FFFD). */
#include "internal.h"

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

/* The code point at unit *i of the nunits units at p; a surrogate pair moves *i on to
 * its second unit, an unpaired surrogate is U+FFFD. */
static uint32_t utf16_at(const uint8_t *p, size_t nunits, size_t *i)
{
	uint32_t u = nt_le16(p + 2 * *i);
	if (u >= 0xD800 && u <= 0xDBFF && *i + 1 < nunits) {
		uint32_t l = nt_le16(p + 2 * (*i + 1));
		if (l < 0xDC00 || l > 0xDFFF)
			return 0xFFFD;
		++*i;
		return 0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00);
	}
	return u >= 0xD800 && u <= 0xDFFF ? 0xFFFD : u;
}

/* Decodes UTF-16LE units [p, p+nunits*2) into out (which must hold 3*nunits+1 bytes:
 * a surrogate pair (2 units) gives 4 bytes, a lone unit at most 3). Unpaired surrogates
 * become U+FFFD. Returns the UTF-8 length. */
static size_t utf16_to_utf8(const uint8_t *p, size_t nunits, char *out)
{
	size_t o = 0;
	size_t i = 0;
	/* ASCII, nearly every unit of a method or type name, is its own UTF-8 byte: four
	 * units at a time while all four are (one decoding call per unit was a fifth of a
	 * rundown-heavy trace's fold); any other unit is decoded alone */
	while (i < nunits) {
		if (nunits - i >= 4) {
			uint64_t x = nt_le64(p + 2 * i);
			if ((x & 0xFF80FF80FF80FF80ull) == 0) {
				out[o] = (char)x;
				out[o + 1] = (char)(x >> 16);
				out[o + 2] = (char)(x >> 32);
				out[o + 3] = (char)(x >> 48);
				o += 4;
				i += 4;
				continue;
			}
		}
		o += put_utf8(out + o, utf16_at(p, nunits, &i));
		i++;
	}
	out[o] = '\0';
	return o;
}

/* Number of UTF-16 units before the NUL within len bytes, or -1 if unterminated: four
 * units at a time while none of them is 0 (a 16-bit lane of a word is zero exactly when
 * the word has one, by the borrow test below). */
static long utf16z_units(const uint8_t *p, size_t len)
{
	size_t i = 0;
	while (len - i >= 8) {
		uint64_t x = nt_le64(p + i);
		if (((x - 0x0001000100010001ull) & ~x & 0x8000800080008000ull) != 0)
			break;
		i += 8;
	}
	for (; i + 1 < len; i += 2)
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

char *nt_payload_utf16z(const nt_event *ev, size_t *pos)
{
	char *s;
	if (*pos > ev->payload_len)
		return NULL;
	size_t used = nt_utf16z_dup(ev->payload + *pos, ev->payload_len - *pos, &s);
	if (used == 0 || used == (size_t)-1)
		return NULL;
	*pos += used;
	return s;
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
	for (size_t i = 0; i < (size_t)n; i++) {
		size_t k = put_utf8(tmp, utf16_at(p, (size_t)n, &i));
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
