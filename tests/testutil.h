/* SPDX-License-Identifier: MIT */
/* testutil.h - helpers shared by unit tests: locating bundled data, reading files. */
#ifndef NT_TESTUTIL_H
#define NT_TESTUTIL_H
#include <stdio.h>
#include <stdlib.h>

/* Path of a file under $top_srcdir/data (static buffer). */
static inline const char *tu_data(const char *rel)
{
	static char buf[4096];
	const char *top = getenv("top_srcdir");
	snprintf(buf, sizeof buf, "%s/data/%s", top ? top : ".", rel);
	return buf;
}

/* Reads a whole file into a malloc'd buffer; NULL on failure. */
static inline unsigned char *tu_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	unsigned char *b = malloc(cap);
	size_t r;
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			unsigned char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
			}
			b = nb;
		}
	}
	fclose(f);
	*len = n;
	return b;
}
#endif
