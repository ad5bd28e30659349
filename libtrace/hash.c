/* SPDX-License-Identifier: MIT */
/* hash.c - the library's hashing (internal.h): the hash map from 64-bit ids to array
 * indexes (nt_idmap, open addressing with linear probing), the index slots over a caller's
 * array (nt_slots_regrow, nt_slots_grow) and nt_hash_bytes; nt_mix64 and nt_fnv1a are
 * inline in internal.h. */
#include "internal.h"

static size_t idmap_hash(uint64_t k, size_t mask)
{
	return (size_t)nt_mix64(k) & mask; /* as nt_idmap_get() (internal.h) */
}

static int idmap_rehash(nt_idmap *m, size_t ncap)
{
	nt_idslot *slots = calloc(ncap, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].val)
			continue;
		size_t h = idmap_hash(m->slots[i].key, ncap - 1);
		while (slots[h].val)
			h = (h + 1) & (ncap - 1);
		slots[h] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
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
	while (m->slots[h].val && m->slots[h].key != key)
		h = (h + 1) & (m->cap - 1);
	if (!m->slots[h].val)
		m->n++;
	m->slots[h].key = key;
	m->slots[h].val = (uint32_t)index + 1;
	return 0;
}

void nt_idmap_free(nt_idmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

/* 8 bytes at a time, then the tail; the multipliers are splitmix64's. */
uint64_t nt_hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull);
	const unsigned char *p = (const unsigned char *)s;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
		p += 8;
		n -= 8;
	}
	uint64_t w = 0;
	for (size_t i = 0; i < n; i++)
		w |= (uint64_t)p[i] << (8 * i);
	h = (h ^ w) * 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

/* Fills fresh slots of ncap (a power of two, all 0) with the entries hash_of() keeps. */
static void slots_fill(uint32_t *ht, size_t ncap, size_t n, nt_slot_hash_fn hash_of,
		       const void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t h;
		if (!hash_of(ctx, i, &h))
			continue;
		size_t k = (size_t)h & (ncap - 1);
		while (ht[k])
			k = (k + 1) & (ncap - 1);
		ht[k] = (uint32_t)i + 1;
	}
}

int nt_slots_regrow(uint32_t **slots, size_t *cap, size_t initial, size_t n,
		    nt_slot_hash_fn hash_of, const void *ctx)
{
	if (*cap > SIZE_MAX / 2 / sizeof **slots)
		return -1;
	size_t ncap = *cap ? *cap * 2 : initial;
	uint32_t *ht = calloc(ncap, sizeof *ht);
	if (!ht)
		return -1;
	slots_fill(ht, ncap, n, hash_of, ctx);
	free(*slots);
	*slots = ht;
	*cap = ncap;
	return 0;
}

/* nt_slots_grow's entries: where they are and where each one's hash is */
typedef struct stored {
	const unsigned char *e;
	size_t stride, hash_off;
} stored;

static int stored_hash(const void *ctx, size_t i, uint64_t *h)
{
	const stored *s = ctx;
	memcpy(h, s->e + i * s->stride + s->hash_off, sizeof *h);
	return 1;
}

int nt_slots_grow(uint32_t **slots, size_t *cap, size_t initial, const void *entries,
		  size_t n, size_t stride, size_t hash_off)
{
	stored s = {entries, stride, hash_off};
	return nt_slots_regrow(slots, cap, initial, n, stored_hash, &s);
}
