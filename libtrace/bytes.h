/* SPDX-License-Identifier: MIT */
/* bytes.h - little-endian loads/stores, LEB128 varints and a bounds-checked cursor over
 * untrusted bytes. No I/O here: input.c fills buffers, the decoders read them through
 * nt_cursor. Every read compares the length it needs against what remains (never
 * pos + n, which can overflow). */
#ifndef NT_BYTES_H
#define NT_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t nt_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t nt_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}
static inline uint64_t nt_le64(const uint8_t *p)
{
	return (uint64_t)nt_le32(p) | ((uint64_t)nt_le32(p + 4) << 32);
}
/* Copies n <= 8 bytes (a small payload: a ThreadSample's is 4) without a memcpy call:
 * 4 to 8 bytes as two 4-byte words that may overlap, fewer one by one. The count is a
 * parameter, not reloaded: each byte stored through a char pointer could change it. */
static inline void nt_copy_small(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	if (n >= 4) {
		memcpy(dst, src, 4);
		memcpy(dst + n - 4, src + n - 4, 4);
	} else {
		for (uint32_t i = 0; i < n; i++)
			dst[i] = src[i];
	}
}

static inline void nt_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void nt_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
static inline void nt_put64(uint8_t *p, uint64_t v)
{
	nt_put32(p, (uint32_t)v);
	nt_put32(p + 4, (uint32_t)(v >> 32));
}

/* Encodes v as LEB128 into p (room for 10 bytes); returns the byte count. */
static inline size_t nt_put_varu64(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Read window over untrusted bytes. base_offset is the file offset of p[0], so errors
 * can name absolute byte offsets. */
typedef struct nt_cursor {
	const uint8_t *p;
	size_t len;
	size_t pos;
	uint64_t base_offset;
} nt_cursor;

static inline void nt_cur_init(nt_cursor *c, const uint8_t *p, size_t len, uint64_t base)
{
	c->p = p;
	c->len = len;
	c->pos = 0;
	c->base_offset = base;
}
static inline size_t nt_cur_left(const nt_cursor *c)
{
	return c->len - c->pos;
}
static inline uint64_t nt_cur_offset(const nt_cursor *c)
{
	return c->base_offset + c->pos;
}
/* The nt_cur_* readers return 0 on success, -1 when the bytes are not there (the
 * caller reports the error with the offset it wants to name). */
static inline int nt_cur_u8(nt_cursor *c, uint8_t *out)
{
	if (c->len - c->pos < 1)
		return -1;
	*out = c->p[c->pos++];
	return 0;
}
static inline int nt_cur_u16(nt_cursor *c, uint16_t *out)
{
	if (c->len - c->pos < 2)
		return -1;
	*out = nt_le16(c->p + c->pos);
	c->pos += 2;
	return 0;
}
static inline int nt_cur_u32(nt_cursor *c, uint32_t *out)
{
	if (c->len - c->pos < 4)
		return -1;
	*out = nt_le32(c->p + c->pos);
	c->pos += 4;
	return 0;
}
static inline int nt_cur_u64(nt_cursor *c, uint64_t *out)
{
	if (c->len - c->pos < 8)
		return -1;
	*out = nt_le64(c->p + c->pos);
	c->pos += 8;
	return 0;
}
static inline int nt_cur_bytes(nt_cursor *c, size_t n, const uint8_t **out)
{
	if (c->len - c->pos < n)
		return -1;
	*out = c->p + c->pos;
	c->pos += n;
	return 0;
}
static inline int nt_cur_skip(nt_cursor *c, size_t n)
{
	if (c->len - c->pos < n)
		return -1;
	c->pos += n;
	return 0;
}
/* LEB128, at most 10 bytes; -1 on truncation, -2 when longer than 10 bytes. */
static inline int nt_cur_varu64(nt_cursor *c, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (int i = 0; i < 10; i++) {
		if (c->pos >= c->len)
			return -1;
		uint8_t b = c->p[c->pos++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
		shift += 7;
	}
	return -2;
}
/* varuint32: as the runtime, at most 5 bytes; higher bits are dropped. */
static inline int nt_cur_varu32(nt_cursor *c, uint32_t *out)
{
	uint64_t v;
	int rc = nt_cur_varu64(c, &v);
	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

#endif
