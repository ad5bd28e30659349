/* SPDX-License-Identifier: MIT */
/* dwarf-prog.h - static inline helpers shared by the two files of test-dwarf-prog, the
 * binary tests/unit/test-dwarf.c symbolizes: code from this header is inlined into
 * functions of both files, so frames name a file other than the caller's. */
#ifndef DWARF_PROG_H
#define DWARF_PROG_H
#include <stdint.h>

static inline uint32_t dp_rotl(uint32_t x, unsigned r)
{
	return (x << (r & 31)) | (x >> ((32 - r) & 31));
}

static inline uint32_t dp_mix(uint32_t h, uint32_t v)
{
	v *= 0xcc9e2d51u;
	v = dp_rotl(v, 15);
	v *= 0x1b873593u;
	h ^= v;
	return dp_rotl(h, 13) * 5 + 0xe6546b64u;
}

static inline __attribute__((always_inline)) uint32_t dp_hash(const uint8_t *p, size_t n,
							      uint32_t seed)
{
	uint32_t h = seed;
	for (size_t i = 0; i + 4 <= n; i += 4)
		h = dp_mix(h, (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
				      (uint32_t)p[i + 3] << 24);
	for (size_t i = n & ~(size_t)3; i < n; i++)
		h = dp_mix(h, p[i]);
	h ^= (uint32_t)n;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	return h ^ (h >> 13);
}

/* Defined in dwarf-prog2.c. */
uint32_t dp_table_run(const uint8_t *data, size_t n, uint32_t rounds);
int dp_sort_check(uint32_t *v, size_t n);

#endif
