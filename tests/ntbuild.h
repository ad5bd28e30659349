/* SPDX-License-Identifier: MIT */
/* ntbuild.h - build nettrace byte streams by hand, for tests and the corrupt-corpus
 * generator (header-only, no libnettrace needed). Every helper appends little-endian bytes
 * to a growable buffer; offsets are absolute, so the 4-byte block padding of V4 files and
 * the 24-bit V6 block sizes come out as a real writer makes them (spec §2, §7).
 * Out of memory aborts: this is test code. */
#ifndef NT_NTBUILD_H
#define NT_NTBUILD_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nbuf {
	uint8_t *p;
	size_t len, cap;
} nbuf;

static inline void nb_free(nbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
static inline void nb_bytes(nbuf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		while (nc < b->len + n)
			nc *= 2;
		uint8_t *np = realloc(b->p, nc);
		if (!np)
			abort();
		b->p = np;
		b->cap = nc;
	}
	if (n)
		memcpy(b->p + b->len, d, n);
	b->len += n;
}
static inline void nb_u8(nbuf *b, uint8_t v)
{
	nb_bytes(b, &v, 1);
}
static inline void nb_u16(nbuf *b, uint16_t v)
{
	uint8_t t[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	nb_bytes(b, t, 2);
}
static inline void nb_u32(nbuf *b, uint32_t v)
{
	uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	nb_bytes(b, t, 4);
}
static inline void nb_u64(nbuf *b, uint64_t v)
{
	nb_u32(b, (uint32_t)v);
	nb_u32(b, (uint32_t)(v >> 32));
}
static inline void nb_set32(nbuf *b, size_t at, uint32_t v)
{
	b->p[at] = (uint8_t)v;
	b->p[at + 1] = (uint8_t)(v >> 8);
	b->p[at + 2] = (uint8_t)(v >> 16);
	b->p[at + 3] = (uint8_t)(v >> 24);
}
static inline uint32_t nb_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}
/* LEB128 varuint */
static inline void nb_var(nbuf *b, uint64_t v)
{
	while (v >= 0x80) {
		nb_u8(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	nb_u8(b, (uint8_t)v);
}
/* ASCII -> UTF-16LE with a 16-bit NUL (V4/V5 metadata strings) */
static inline void nb_utf16z(nbuf *b, const char *s)
{
	for (; *s; s++)
		nb_u16(b, (uint8_t)*s);
	nb_u16(b, 0);
}
/* V6 string: varuint32 byte count + UTF-8 */
static inline void nb_str6(nbuf *b, const char *s)
{
	nb_var(b, strlen(s));
	nb_bytes(b, s, strlen(s));
}

/* ------------------------------------------------------------------ V4/V5 container */

/* "Nettrace", "!FastSerialization.1", Trace object (version 4) with a 48-byte payload. */
static inline void nb_v4_header(nbuf *b, uint32_t ptrsize, uint64_t sync_qpc, uint64_t freq)
{
	static const uint16_t st[8] = {2021, 6, 3, 9, 9, 48, 25, 902};
	nb_bytes(b, "Nettrace", 8);
	nb_u32(b, 20);
	nb_bytes(b, "!FastSerialization.1", 20);
	nb_bytes(b, "\x05\x05\x01", 3);
	nb_u32(b, 4);
	nb_u32(b, 4);
	nb_u32(b, 5);
	nb_bytes(b, "Trace", 5);
	nb_u8(b, 0x06);
	for (int i = 0; i < 8; i++)
		nb_u16(b, st[i]);
	nb_u64(b, sync_qpc);
	nb_u64(b, freq);
	nb_u32(b, ptrsize);
	nb_u32(b, 1234);    /* pid */
	nb_u32(b, 8);       /* processors */
	nb_u32(b, 1000000); /* sampling rate ns */
	nb_u8(b, 0x06);
}

/* Starts a block object: 05 05 01 version 2, min 2, name, 06, int32 size, padding.
 * Returns the offset of the size field for nb_v4_block_end(). */
static inline size_t nb_v4_block_begin(nbuf *b, const char *name)
{
	nb_bytes(b, "\x05\x05\x01", 3);
	nb_u32(b, 2);
	nb_u32(b, 2);
	nb_u32(b, (uint32_t)strlen(name));
	nb_bytes(b, name, strlen(name));
	nb_u8(b, 0x06);
	size_t at = b->len;
	nb_u32(b, 0);
	while (b->len % 4)
		nb_u8(b, 0);
	return at;
}
/* Patches the block size (content = everything after the padding) and writes 06. */
static inline void nb_v4_block_end(nbuf *b, size_t at)
{
	size_t content = at + 4 + ((4 - ((at + 4) & 3)) & 3);
	nb_set32(b, at, (uint32_t)(b->len - content));
	nb_u8(b, 0x06);
}
/* EventBlock / MetadataBlock header: size 20, flags, min/max timestamp. */
static inline void nb_blk_header(nbuf *b, uint16_t flags, uint64_t min_ts, uint64_t max_ts)
{
	nb_u16(b, 20);
	nb_u16(b, flags);
	nb_u64(b, min_ts);
	nb_u64(b, max_ts);
}
static inline void nb_v4_end(nbuf *b)
{
	nb_u8(b, 0x01);
}

/* One event (or metadata blob) for the compressed-header encoder. */
typedef struct nb_ev {
	uint32_t meta_id;
	uint32_t seq;
	uint64_t capture_tid;
	uint32_t proc;
	uint64_t tid;
	uint32_t stack_id;
	uint64_t ts;
	int sorted;
	const void *payload;
	uint32_t plen;
} nb_ev;

/* Compressed-header state, reset at every block (spec §3.2). */
typedef struct nb_hdrstate {
	nb_ev prev;
} nb_hdrstate;

static inline void nb_hdr_reset(nb_hdrstate *s)
{
	memset(s, 0, sizeof *s);
}

/* Writes e with a compressed header, choosing flags by the runtime writer's rule
 * (ep-block.c): a field is written only when it differs from the previous blob. */
static inline void nb_cev(nbuf *b, nb_hdrstate *s, const nb_ev *e)
{
	const nb_ev *p = &s->prev;
	uint8_t flags = 0;
	if (e->meta_id != p->meta_id)
		flags |= 0x01;
	if (p->seq + (e->meta_id != 0 ? 1u : 0u) != e->seq || e->capture_tid != p->capture_tid ||
	    e->proc != p->proc)
		flags |= 0x02;
	if (e->tid != p->tid)
		flags |= 0x04;
	if (e->stack_id != p->stack_id)
		flags |= 0x08;
	if (e->sorted)
		flags |= 0x40;
	if (e->plen != p->plen)
		flags |= 0x80;
	nb_u8(b, flags);
	if (flags & 0x01)
		nb_var(b, e->meta_id);
	if (flags & 0x02) {
		nb_var(b, (uint32_t)(e->seq - p->seq - 1));
		nb_var(b, e->capture_tid);
		nb_var(b, e->proc);
	}
	if (flags & 0x04)
		nb_var(b, e->tid);
	if (flags & 0x08)
		nb_var(b, e->stack_id);
	nb_var(b, e->ts - p->ts); /* modulo 2^64: an older event gives a 10-byte varuint */
	if (flags & 0x80)
		nb_var(b, e->plen);
	nb_bytes(b, e->payload, e->plen);
	s->prev = *e;
	s->prev.sorted = 0;
}

/* Uncompressed V4 header (spec §3.3): EventSize includes padding to a 4-byte offset. */
static inline void nb_uev(nbuf *b, const nb_ev *e)
{
	size_t at = b->len;
	nb_u32(b, 0);
	nb_u32(b, e->meta_id | (e->sorted ? 0u : 0x80000000u));
	nb_u32(b, e->seq);
	nb_u64(b, e->tid);
	nb_u64(b, e->capture_tid);
	nb_u32(b, e->proc);
	nb_u32(b, e->stack_id);
	nb_u64(b, e->ts);
	for (int i = 0; i < 32; i++)
		nb_u8(b, 0); /* activity ids */
	nb_u32(b, e->plen);
	nb_bytes(b, e->payload, e->plen);
	while (b->len % 4)
		nb_u8(b, 0);
	nb_set32(b, at, (uint32_t)(b->len - at - 4));
}

/* V4/V5 metadata payload up to and including Level; the caller adds the field list and
 * tags (or nothing: "payload ends after Level" = 0 fields). */
static inline void nb_meta5_head(nbuf *m, uint32_t id, const char *provider, uint32_t event_id,
				 const char *name, uint64_t keywords, uint32_t version,
				 uint32_t level)
{
	nb_u32(m, id);
	nb_utf16z(m, provider);
	nb_u32(m, event_id);
	nb_utf16z(m, name);
	nb_u64(m, keywords);
	nb_u32(m, version);
	nb_u32(m, level);
}

/* A MetadataBlock holding the given metadata payloads (compressed headers). */
static inline void nb_v4_metadata_block(nbuf *b, const nbuf *payloads, size_t n)
{
	size_t at = nb_v4_block_begin(b, "MetadataBlock");
	nb_blk_header(b, 1, 0, 0);
	nb_hdrstate s;
	nb_hdr_reset(&s);
	for (size_t i = 0; i < n; i++) {
		nb_ev e = {0, 0, 0, 0xFFFFFFFFu, 0, 0, 0, 0, payloads[i].p, (uint32_t)payloads[i].len};
		nb_cev(b, &s, &e);
	}
	nb_v4_block_end(b, at);
}

/* StackBlock with stacks of `depth[k]` IPs (pointer size ps), ids first, first+1, ... */
static inline void nb_v4_stack_block(nbuf *b, uint32_t first, uint32_t count, const uint32_t *depth,
				     const uint64_t *const *ips, uint32_t ps)
{
	size_t at = nb_v4_block_begin(b, "StackBlock");
	nb_u32(b, first);
	nb_u32(b, count);
	for (uint32_t k = 0; k < count; k++) {
		nb_u32(b, depth[k] * ps);
		for (uint32_t i = 0; i < depth[k]; i++) {
			if (ps == 8)
				nb_u64(b, ips[k][i]);
			else
				nb_u32(b, (uint32_t)ips[k][i]);
		}
	}
	nb_v4_block_end(b, at);
}

/* SPBlock: timestamp, n × (capture thread id, sequence number). */
static inline void nb_v4_sp_block(nbuf *b, uint64_t ts, uint32_t n, const uint64_t *tids,
				  const uint32_t *seqs)
{
	size_t at = nb_v4_block_begin(b, "SPBlock");
	nb_u64(b, ts);
	nb_u32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		nb_u64(b, tids[i]);
		nb_u32(b, seqs[i]);
	}
	nb_v4_block_end(b, at);
}

/* ------------------------------------------------------------------ V6 */

static inline void nb_v6_header(nbuf *b)
{
	nb_bytes(b, "Nettrace", 8);
	nb_u32(b, 0);
	nb_u32(b, 6);
	nb_u32(b, 0);
}
/* Starts a V6 block of `kind`; returns the header offset for nb_v6_block_end(). */
static inline size_t nb_v6_block_begin(nbuf *b, uint32_t kind)
{
	size_t at = b->len;
	nb_u32(b, kind << 24);
	return at;
}
static inline void nb_v6_block_end(nbuf *b, size_t at)
{
	uint32_t kind = nb_get32(b->p + at) >> 24;
	nb_set32(b, at, (uint32_t)(b->len - at - 4) | (kind << 24));
}
/* Trace block with the given key/value pairs (keys[i], vals[i]). */
static inline void nb_v6_trace_block(nbuf *b, uint32_t ptrsize, uint64_t sync_qpc, uint64_t freq,
				     size_t nkv, const char *const *keys, const char *const *vals)
{
	static const uint16_t st[8] = {2025, 1, 3, 2, 10, 0, 0, 0};
	size_t at = nb_v6_block_begin(b, 1);
	for (int i = 0; i < 8; i++)
		nb_u16(b, st[i]);
	nb_u64(b, sync_qpc);
	nb_u64(b, freq);
	nb_u32(b, ptrsize);
	nb_u32(b, (uint32_t)nkv);
	for (size_t i = 0; i < nkv; i++) {
		nb_str6(b, keys[i]);
		nb_str6(b, vals[i]);
	}
	nb_v6_block_end(b, at);
}
#endif
