/* SPDX-License-Identifier: MIT */
/* test-hash.c - unit tests of the library's one hash module (hash.c): the index slots
 * over a caller's array (nt_slots_regrow with a hash callback that leaves entries out,
 * nt_slots_grow with stored hashes) and nt_idmap, each checked against a linear scan of
 * the same entries; keys whose hashes all collide in the low bits, so probing wraps. Not
 * here: the tables that use them (their exporters' tests). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

#define N 5000

typedef struct ent {
	uint64_t key;
	uint64_t hash;
} ent;

static ent ents[N];

/* every entry with an odd key is left out of the table */
static int even_hash(const void *ctx, size_t i, uint64_t *h)
{
	const ent *e = ctx;
	*h = e[i].hash;
	return !(e[i].key & 1);
}

/* The index of key in the slots by probing, or -1: what every table's lookup does. */
static long probe(const uint32_t *slots, size_t cap, uint64_t key, uint64_t h)
{
	for (size_t k = (size_t)h & (cap - 1); slots[k]; k = (k + 1) & (cap - 1))
		if (ents[slots[k] - 1].key == key)
			return (long)slots[k] - 1;
	return -1;
}

/* The index of key by scanning the entries (the oracle), or -1. */
static long scan(size_t n, uint64_t key, int only_even)
{
	for (size_t i = 0; i < n; i++)
		if (ents[i].key == key && (!only_even || !(key & 1)))
			return (long)i;
	return -1;
}

static size_t used(const uint32_t *slots, size_t cap)
{
	size_t n = 0;
	for (size_t k = 0; k < cap; k++)
		n += slots[k] != 0;
	return n;
}

/* Adds the entries one by one as a table does (grow at half full) and checks each key. */
static void fill(int regrow)
{
	uint32_t *slots = NULL;
	size_t cap = 0, bad = 0, grows = 0;
	for (size_t i = 0; i < N; i++) {
		if ((i + 1) * 2 > cap) {
			size_t old = cap;
			int rc = regrow ? nt_slots_regrow(&slots, &cap, 64, i, even_hash, ents)
					: nt_slots_grow(&slots, &cap, 64, ents, i, sizeof *ents,
							offsetof(ent, hash));
			if (rc || cap != (old ? old * 2 : 64)) {
				ok(0, "grow from %zu", old);
				free(slots);
				return;
			}
			grows++;
		}
		if (!regrow || !(ents[i].key & 1)) {
			size_t k = (size_t)ents[i].hash & (cap - 1);
			while (slots[k])
				k = (k + 1) & (cap - 1);
			slots[k] = (uint32_t)i + 1;
		}
	}
	for (size_t i = 0; i < N + 100; i++) {
		uint64_t key = i * 7 + 3;
		if (probe(slots, cap, key, key << 12) != scan(N, key, regrow))
			bad++;
	}
	is_int((int)bad, 0, "%s: every key found where the scan finds it, no other",
	       regrow ? "nt_slots_regrow" : "nt_slots_grow");
	is_int((int)used(slots, cap), regrow ? N / 2 : N, "%s: one slot per kept entry",
	       regrow ? "nt_slots_regrow" : "nt_slots_grow");
	ok(grows == 9 && cap == 16384, "%s: 64 first, doubled up to 16384 (%zu tables, cap %zu)",
	   regrow ? "nt_slots_regrow" : "nt_slots_grow", grows, cap);
	free(slots);
}

int main(void)
{
	for (size_t i = 0; i < N; i++) {
		ents[i].key = i * 7 + 3; /* odd and even keys alternate */
		ents[i].hash = ents[i].key << 12; /* the low 12 bits collide */
	}
	fill(1);
	fill(0);

	/* a table that was full keeps its slots when the new ones cannot be had */
	uint32_t *slots = NULL;
	size_t cap = (size_t)1 << 62;
	ok(nt_slots_regrow(&slots, &cap, 64, 0, even_hash, ents) == -1 && !slots &&
		   cap == (size_t)1 << 62,
	   "nt_slots_regrow: an impossible size fails and keeps the old table");

	nt_idmap m = {0};
	size_t bad = 0, idx;
	for (size_t i = 0; i < N; i++)
		if (nt_idmap_put(&m, ents[i].hash, i))
			bad++;
	nt_idmap_put(&m, ents[5].hash, 77); /* a second put replaces */
	for (size_t i = 0; i < N; i++)
		if (!nt_idmap_get(&m, ents[i].hash, &idx) || idx != (i == 5 ? 77 : i))
			bad++;
	if (nt_idmap_get(&m, 1, &idx) || m.n != N)
		bad++;
	is_int((int)bad, 0, "nt_idmap: every id maps to its index; a put replaces");
	nt_idmap_free(&m);
	return tap_done();
}
