/* SPDX-License-Identifier: MIT */
/* writer.h - what the writer's files share (writer.c, writer-meta.c): the growable byte
 * buffer its blocks and records are built in, and the metadata encoders. */
#ifndef NT_WRITER_H
#define NT_WRITER_H

#include "internal.h"

#define WR_MAX_FIELD_DEPTH 32u /* nested OBJECT fields; deeper is surely a cycle */

/* ---------------------------------------------------------------------------------------
 * Growable byte buffers. The wb_* appenders return 0 or -1 (out of memory); builders OR
 * the results together and report NT_ENOMEM once at the end.
 * ------------------------------------------------------------------------------------- */

typedef struct wbuf {
	uint8_t *p;
	size_t len;
	size_t cap;
} wbuf;

static inline int wb_reserve(wbuf *b, size_t n)
{
	if (n > SIZE_MAX - b->len)
		return -1;
	return nt_grow((void **)&b->p, &b->cap, b->len + n, 1);
}

static inline int wb_put(wbuf *b, const void *src, size_t n)
{
	if (n == 0)
		return 0;
	if (wb_reserve(b, n))
		return -1;
	memcpy(b->p + b->len, src, n);
	b->len += n;
	return 0;
}

static inline int wb_u8(wbuf *b, uint8_t v)
{
	return wb_put(b, &v, 1);
}

static inline int wb_u16(wbuf *b, uint16_t v)
{
	uint8_t t[2];
	nt_put16(t, v);
	return wb_put(b, t, 2);
}

static inline int wb_u32(wbuf *b, uint32_t v)
{
	uint8_t t[4];
	nt_put32(t, v);
	return wb_put(b, t, 4);
}

static inline int wb_u64(wbuf *b, uint64_t v)
{
	uint8_t t[8];
	nt_put64(t, v);
	return wb_put(b, t, 8);
}

static inline int wb_varu64(wbuf *b, uint64_t v)
{
	uint8_t t[10];
	return wb_put(b, t, nt_put_varu64(t, v));
}

/* Appends zero bytes (space for a header filled in later). */
static inline int wb_zero(wbuf *b, size_t n)
{
	if (wb_reserve(b, n))
		return -1;
	memset(b->p + b->len, 0, n);
	b->len += n;
	return 0;
}

/* V4/V5 metadata string: UTF-16LE plus a 16-bit NUL (spec §1). */
static inline int wb_utf16z(wbuf *b, const char *s)
{
	return nt_utf8_to_utf16z(s ? s : "", &b->p, &b->len, &b->cap) ? -1 : 0;
}

/* V6 string: varuint32 byte count, then UTF-8 bytes without terminator (spec §7). */
static inline int wb_v6str(wbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > UINT32_MAX)
		return -1;
	return wb_varu64(b, n) | wb_put(b, s, n);
}

static inline void wb_free(wbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static inline int wr_oom(nt_error *err)
{
	return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "writer: out of memory");
}

/* The metadata record of d under id: the V4/V5 payload (nt_wr_meta_v5) or the V6 row
 * (nt_wr_meta_v6), appended to b (writer-meta.c). */
int nt_wr_meta_v5(wbuf *b, uint32_t id, const nt_metadata_desc *d, nt_error *err);
int nt_wr_meta_v6(wbuf *b, uint32_t id, const nt_metadata_desc *d, nt_error *err);

#endif
