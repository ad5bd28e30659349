/* SPDX-License-Identifier: MIT */
/* strpool.c - the library's string pool (nt_strpool, internal.h): copies of texts in chunks
 * that never move, so a pointer stays valid until the pool is freed, and an optional
 * interning index that gives equal texts one copy and a dense id (0, 1, ...) each. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Bytes live in chunks of this size; a longer text gets a chunk of its own. */
#define STRPOOL_CHUNK (64u * 1024u)

struct nt_strchunk {
	struct nt_strchunk *next;
	size_t used, cap;
	char data[];
};

void nt_strpool_free(nt_strpool *p)
{
	if (!p)
		return;
	for (nt_strchunk *c = p->chunks; c;) {
		nt_strchunk *n = c->next;
		free(c);
		c = n;
	}
	free(p->ents);
	free(p->slots);
	memset(p, 0, sizeof *p);
}

void nt_strpool_reset(nt_strpool *p)
{
	nt_strchunk *keep = p->chunks;
	if (keep) {
		for (nt_strchunk *c = keep->next; c;) {
			nt_strchunk *n = c->next;
			free(c);
			c = n;
		}
		keep->next = NULL;
		keep->used = 0;
	}
	p->n = 0;
	if (p->slots)
		memset(p->slots, 0, p->slotcap * sizeof *p->slots);
}

char *nt_strpool_dup(nt_strpool *p, const char *s, size_t n)
{
	nt_strchunk *c = p->chunks;
	if (n >= SIZE_MAX - sizeof(nt_strchunk) - 1)
		return NULL;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = n + 1 > STRPOOL_CHUNK ? n + 1 : STRPOOL_CHUNK;
		nt_strchunk *nc = malloc(sizeof(nt_strchunk) + cap);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		/* a large text's chunk goes behind the current one, which keeps filling */
		if (c && cap > STRPOOL_CHUNK) {
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			p->chunks = nc;
		}
		c = nc;
	}
	char *d = c->data + c->used;
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	c->used += n + 1;
	return d;
}

uint64_t nt_strpool_hash(const char *s, size_t n)
{
	return nt_hash_bytes(s, n);
}

int64_t nt_strpool_find(const nt_strpool *p, const char *s, size_t n, uint64_t h)
{
	if (!p->slotcap)
		return -1;
	size_t k = (size_t)h & (p->slotcap - 1);
	while (p->slots[k]) {
		const nt_strent *e = &p->ents[p->slots[k] - 1];
		if (e->hash == h && e->len == n && memcmp(e->s, s, n) == 0)
			return (int64_t)p->slots[k] - 1;
		k = (k + 1) & (p->slotcap - 1);
	}
	return -1;
}

int64_t nt_strpool_intern_h(nt_strpool *p, const char *s, size_t n, uint64_t h)
{
	int64_t i = nt_strpool_find(p, s, n, h);
	if (i >= 0)
		return i;
	if (p->n >= UINT32_MAX - 1)
		return -1;
	if ((p->n + 1) * 2 > p->slotcap &&
	    nt_slots_grow(&p->slots, &p->slotcap, 256, p->ents, p->n, sizeof *p->ents,
			  offsetof(nt_strent, hash)))
		return -1;
	if (nt_grow((void **)&p->ents, &p->entcap, p->n + 1, sizeof *p->ents))
		return -1;
	char *d = nt_strpool_dup(p, s, n);
	if (!d)
		return -1;
	p->ents[p->n] = (nt_strent){d, n, h};
	size_t k = (size_t)h & (p->slotcap - 1);
	while (p->slots[k])
		k = (k + 1) & (p->slotcap - 1);
	p->slots[k] = (uint32_t)p->n + 1;
	return (int64_t)p->n++;
}

const char *nt_strpool_intern(nt_strpool *p, const char *s, size_t n)
{
	int64_t i = nt_strpool_intern_h(p, s, n, nt_strpool_hash(s, n));
	return i < 0 ? NULL : p->ents[i].s;
}
