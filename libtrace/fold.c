/* SPDX-License-Identifier: MIT */
/* fold.c - folded-stack export ("root;...;leaf WEIGHT" per line, as flamegraph.pl,
 * inferno and speedscope read). Lines are merged by identical text and sorted bytewise,
 * so the output is deterministic. Not here: building the profile (profile.c); the unit and
 * range option parsers (profile-opts.c). */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

typedef struct fline {
	char *text;
	size_t len;
	uint64_t hash;
	uint64_t samples;
	double weight;
} fline;

typedef struct fold_ctx {
	const nt_fold_opts *o;
	nt_profile *p;
	const nt_subsystems *subs; /* the profile's, for subsystem_frame */
	fline *lines;
	size_t n, cap;
	uint32_t *ht;
	size_t htcap;
	char *buf;      /* line being built */
	size_t blen, bcap;
	nt_idmap keyed; /* group_key() -> index into lines: groups of one stack share a line */
	int rc;
} fold_ctx;

/* A line's hash (it only places the line in the table: the output is sorted). */
static uint64_t line_hash(const char *s, size_t n)
{
	return nt_hash_bytes(s, n);
}

static int bput(fold_ctx *c, const char *s, size_t n)
{
	if (n > SIZE_MAX - c->blen - 1 || nt_grow((void **)&c->buf, &c->bcap, c->blen + n + 1, 1))
		return -1;
	memcpy(c->buf + c->blen, s, n);
	c->blen += n;
	c->buf[c->blen] = '\0';
	return 0;
}

static int put_frame(fold_ctx *c, const char *f)
{
	if (c->o->no_module) {
		const char *bang = strchr(f, '!');
		if (bang)
			f = bang + 1;
	}
	/* ';' separates frames and a trailing " N" is the weight: keep both out of names
	 * (signatures never contain ';', but native or user names might). */
	size_t n = strlen(f);
	/* One bput for the whole name, then the rare replacements in place: a bput per byte
	 * was a tenth of nettrace-fold's time (every frame of every group goes through
	 * here). */
	size_t at = c->blen;
	if (bput(c, f, n))
		return -1;
	/* the buffer is NUL-terminated: strcspn() finds the next one, many bytes at a time
	 * (a loop over every byte was a tenth of the fold's instructions) */
	for (char *q = c->buf + at; *(q += strcspn(q, ";\n\r")); q++)
		*q = *q == ';' ? ':' : ' ';
	return 0;
}

/* "[json]": the group's subsystem (names are restricted to characters that need no
 * escaping in a frame), "[other]" when no rule matched. */
static int put_subsystem(fold_ctx *c, const nt_sample_group *g)
{
	const char *name = nt_subsystems_name(c->subs, g->subsystem);
	char tmp[64];
	snprintf(tmp, sizeof tmp, "[%s]", name ? name : "other");
	return bput(c, tmp, strlen(tmp));
}

static int rehash(fold_ctx *c)
{
	return nt_slots_grow(&c->ht, &c->htcap, 1024, c->lines, c->n, sizeof *c->lines,
			     offsetof(fline, hash));
}

/* The fields a group's line depends on besides the global options, packed into one
 * exact key (0: not packable, e.g. per-thread lines): its stack (which fixes the session
 * and frames), category, sample type (TraceEvent's pseudo-frame) and subsystem. Groups of
 * one stack that differ only in thread or thread state then cost one lookup instead of
 * formatting and hashing a line of ~30 names again (a sixth of nettrace-fold's time). */
static uint64_t group_key(const fold_ctx *c, const nt_sample_group *g)
{
	if (c->o->per_thread || g->category < 0 || g->category > 0xFE || g->sample_type > 0xFF ||
	    g->subsystem < -1 || g->subsystem > 0xFFFE)
		return 0;
	return ((uint64_t)g->stack << 32 | (uint64_t)(g->category + 1) << 24 |
		(uint64_t)g->sample_type << 16 | (uint64_t)(g->subsystem + 1)) +
	       1; /* never 0: category + 1 >= 1 */
}

static int add_line(fold_ctx *c, uint64_t samples, double weight, size_t *index)
{
	uint64_t h = line_hash(c->buf, c->blen);
	if ((c->n + 1) * 2 > c->htcap && rehash(c))
		return -1;
	size_t k = (size_t)h & (c->htcap - 1);
	while (c->ht[k]) {
		fline *l = &c->lines[c->ht[k] - 1];
		if (l->hash == h && l->len == c->blen && memcmp(l->text, c->buf, c->blen) == 0) {
			l->samples += samples;
			l->weight += weight;
			*index = c->ht[k] - 1;
			return 0;
		}
		k = (k + 1) & (c->htcap - 1);
	}
	if (nt_grow((void **)&c->lines, &c->cap, c->n + 1, sizeof(fline)))
		return -1;
	char *t = malloc(c->blen + 1);
	if (!t)
		return -1;
	memcpy(t, c->buf, c->blen + 1);
	c->lines[c->n] = (fline){t, c->blen, h, samples, weight};
	c->ht[k] = (uint32_t)c->n + 1;
	*index = c->n++;
	return 0;
}

static int on_group(void *ctx, const nt_sample_group *g)
{
	fold_ctx *c = ctx;
	const nt_fold_opts *o = c->o;
	uint64_t key = group_key(c, g);
	size_t li;
	if (key && nt_idmap_get(&c->keyed, key, &li)) {
		c->lines[li].samples += g->samples;
		c->lines[li].weight += g->weight_ns;
		return 0;
	}
	const char *cat = nt_category_name(g->category);
	char tmp[64];
	c->blen = 0;
	int first = 1;
#define SEP()                                                                               \
	do {                                                                                \
		if (!first && bput(c, ";", 1))                                              \
			goto nomem;                                                         \
		first = 0;                                                                  \
	} while (0)
	if (o->per_thread) {
		nt_profile_thread_label(c->p, g->session, g->thread_id, 0, tmp, sizeof tmp);
		SEP();
		if (bput(c, tmp, strlen(tmp)))
			goto nomem;
	}
	if (o->subsystem_frame == NT_CATFRAME_ROOT) {
		SEP();
		if (put_subsystem(c, g))
			goto nomem;
	}
	if (o->category_frame == NT_CATFRAME_ROOT) {
		snprintf(tmp, sizeof tmp, "[%s]", cat ? cat : "unknown");
		SEP();
		if (bput(c, tmp, strlen(tmp)))
			goto nomem;
	}
	for (uint32_t i = g->depth; i-- > 0;) {
		SEP();
		if (put_frame(c, g->frames[i]))
			goto nomem;
	}
	if (o->category_frame == NT_CATFRAME_LEAF) {
		snprintf(tmp, sizeof tmp, "[%s]", cat ? cat : "unknown");
		SEP();
		if (bput(c, tmp, strlen(tmp)))
			goto nomem;
	}
	if (o->subsystem_frame == NT_CATFRAME_LEAF) {
		SEP();
		if (put_subsystem(c, g))
			goto nomem;
	}
	if (first && bput(c, "[empty stack]", 13))
		goto nomem;
#undef SEP
	if (add_line(c, g->samples, g->weight_ns, &li) || (key && nt_idmap_put(&c->keyed, key, li)))
		goto nomem;
	return 0;
nomem:
	c->rc = NT_ENOMEM;
	return NT_ENOMEM;
}

static int cmp_line(const void *a, const void *b)
{
	const fline *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int r = memcmp(x->text, y->text, n);
	if (r)
		return r;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Formats a weight in the requested unit; integers for samples and ns (exact for the
 * integer weights of the compat modes), up to 3 decimals otherwise. */
static int format_weight(char *out, size_t n, int unit, const fline *l)
{
	switch (unit) {
	case NT_UNIT_SAMPLES:
		return snprintf(out, n, "%" PRIu64, l->samples);
	case NT_UNIT_US:
	case NT_UNIT_MS: {
		double v = l->weight / (unit == NT_UNIT_US ? 1e3 : 1e6);
		int k = snprintf(out, n, "%.3f", v);
		while (k > 1 && out[k - 1] == '0')
			out[--k] = '\0';
		if (k > 1 && out[k - 1] == '.')
			out[--k] = '\0';
		return k;
	}
	default:
		return snprintf(out, n, "%.0f", floor(l->weight + 0.5));
	}
}

int nt_fold_write(nt_profile *p, const nt_fold_opts *opts, const nt_sink *sink, nt_error *err)
{
	nt_error_clear(err);
	nt_fold_opts o;
	int rc = nt_opts_load(&o, sizeof o, sizeof o, opts, "fold options", err);
	if (rc)
		return rc;
	if (o.unit == NT_UNIT_DEFAULT)
		o.unit = NT_UNIT_NS;
	rc = nt_profile_finish(p, err);
	if (rc)
		return rc;
	fold_ctx c;
	memset(&c, 0, sizeof c);
	c.o = &o;
	c.p = p;
	c.subs = nt_profile_subsystems(p);
	if (o.subsystem_frame != NT_CATFRAME_NONE && !c.subs)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "subsystem frames need a profile that "
			       "classifies subsystems (nt_profile_opts.subsystems)");
	rc = nt_profile_foreach(p, on_group, &c);
	if (rc == 0 && c.n)
		qsort(c.lines, c.n, sizeof(fline), cmp_line);
	char *out = NULL;
	size_t olen = 0, ocap = 0;
	for (size_t i = 0; rc == 0 && i < c.n; i++) {
		char w[64];
		int k = format_weight(w, sizeof w, o.unit, &c.lines[i]);
		size_t need = olen + c.lines[i].len + 1 + (size_t)k + 1;
		if (nt_grow((void **)&out, &ocap, need, 1)) {
			rc = NT_ENOMEM;
			break;
		}
		memcpy(out + olen, c.lines[i].text, c.lines[i].len);
		olen += c.lines[i].len;
		out[olen++] = ' ';
		memcpy(out + olen, w, (size_t)k);
		olen += (size_t)k;
		out[olen++] = '\n';
		if (olen > (1u << 20)) {
			rc = sink->write(sink->ctx, out, olen);
			olen = 0;
		}
	}
	if (rc == 0 && olen)
		rc = sink->write(sink->ctx, out, olen);
	free(out);
	for (size_t i = 0; i < c.n; i++)
		free(c.lines[i].text);
	free(c.lines);
	free(c.ht);
	free(c.buf);
	nt_idmap_free(&c.keyed);
	if (rc == NT_ENOMEM)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory folding stacks");
	if (rc)
		return nt_fail(err, rc, NT_NO_OFFSET, "cannot write folded stacks");
	return 0;
}
