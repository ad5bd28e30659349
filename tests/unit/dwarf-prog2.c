/* SPDX-License-Identifier: MIT */
/* dwarf-prog2.c - second file of test-dwarf-prog (see dwarf-prog.c): a table-driven loop
 * and an insertion sort whose helpers are inlined, so the binary has several compile
 * units. */
#include <stddef.h>

#include "dwarf-prog.h"

typedef struct dp_entry {
	uint32_t key, value;
} dp_entry;

static inline size_t dp_slot(uint32_t key, size_t cap)
{
	return (size_t)(dp_mix(key, 0x9e3779b9u) & (cap - 1));
}

static inline void dp_put(dp_entry *t, size_t cap, uint32_t key, uint32_t value)
{
	size_t k = dp_slot(key, cap);
	while (t[k].key && t[k].key != key)
		k = (k + 1) & (cap - 1);
	t[k].key = key;
	t[k].value += value;
}

static inline uint32_t dp_get(const dp_entry *t, size_t cap, uint32_t key)
{
	size_t k = dp_slot(key, cap);
	while (t[k].key) {
		if (t[k].key == key)
			return t[k].value;
		k = (k + 1) & (cap - 1);
	}
	return 0;
}

uint32_t dp_table_run(const uint8_t *data, size_t n, uint32_t rounds)
{
	dp_entry t[256] = {{0, 0}};
	uint32_t acc = 0;
	for (uint32_t r = 0; r < rounds; r++)
		for (size_t i = 0; i + 2 <= n; i++) {
			uint32_t key = (uint32_t)data[i] << 8 | data[i + 1] | 1u << 16;
			dp_put(t, 128, key, r + 1);
			acc += dp_get(t, 128, key ^ 1);
		}
	return acc ^ dp_hash(data, n, acc);
}

static inline void dp_swap(uint32_t *a, uint32_t *b)
{
	uint32_t x = *a;
	*a = *b;
	*b = x;
}

static inline void dp_insertion_sort(uint32_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--)
			dp_swap(&v[j - 1], &v[j]);
}

int dp_sort_check(uint32_t *v, size_t n)
{
	dp_insertion_sort(v, n);
	for (size_t i = 1; i < n; i++)
		if (v[i - 1] > v[i])
			return 0;
	return 1;
}
