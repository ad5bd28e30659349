/* SPDX-License-Identifier: MIT */
/* testutil.h - helpers shared by the tests: locating bundled data, reading files, copying
 * a trace's events through the writer. */
#ifndef NT_TESTUTIL_H
#define NT_TESTUTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace.h"

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
/* Reader metadata ids -> writer ids, for the tests that copy a trace (tests/rewrite,
 * test-writer's round trips); 0 is "not copied yet". */
typedef struct tu_idmap {
	uint32_t *v;
	size_t n;
} tu_idmap;

/* The slot of id, grown (zeroed) on demand; NULL out of memory. */
static inline uint32_t *tu_idmap_slot(tu_idmap *m, uint32_t id)
{
	if (id >= m->n) {
		size_t nn = (size_t)id + 64;
		uint32_t *p = realloc(m->v, nn * sizeof *p);
		if (!p)
			return NULL;
		memset(p + m->n, 0, (nn - m->n) * sizeof *p);
		m->v = p;
		m->n = nn;
	}
	return &m->v[id];
}

/* What the writer needs to write e again: all but the metadata id (the writer's own) and
 * the process id (the caller's choice). */
static inline void tu_event_desc(nt_event_desc *d, const nt_event *e)
{
	memset(d, 0, sizeof *d);
	d->seq = e->seq;
	d->thread_id = e->thread_id;
	d->capture_thread_id = e->capture_thread_id;
	d->processor = e->processor;
	d->timestamp = e->timestamp;
	d->activity_id = e->activity_id;
	d->related_activity_id = e->related_activity_id;
	d->stack = e->stack;
	d->stack_depth = e->stack_depth;
	d->payload = e->payload;
	d->payload_len = e->payload_len;
}

#endif
