/* SPDX-License-Identifier: MIT */
/* pbuf.h - a little-endian byte buffer for building event payloads in tests (UTF-16z
 * strings, as V4/V5 payloads carry them). Header-only; shared by the unit tests and the
 * trace generators in tests/e2e. */
#ifndef NT_TEST_PBUF_H
#define NT_TEST_PBUF_H
#include <stddef.h>
#include <stdint.h>

typedef struct pbuf {
	uint8_t b[512];
	size_t n;
} pbuf;

static inline void pb_u8(pbuf *p, uint8_t v)
{
	p->b[p->n++] = v;
}
static inline void pb_u16(pbuf *p, uint16_t v)
{
	p->b[p->n++] = (uint8_t)v;
	p->b[p->n++] = (uint8_t)(v >> 8);
}
static inline void pb_u32(pbuf *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p->b[p->n++] = (uint8_t)(v >> (8 * i));
}
static inline void pb_u64(pbuf *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p->b[p->n++] = (uint8_t)(v >> (8 * i));
}
/* ASCII s as UTF-16LE plus the 16-bit terminator. */
static inline void pb_str(pbuf *p, const char *s)
{
	for (; *s; s++)
		pb_u16(p, (uint8_t)*s);
	pb_u16(p, 0);
}
#endif
