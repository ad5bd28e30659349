/* SPDX-License-Identifier: MIT */
/* select.c - stack selections: which samples a view keeps and how their frames read.
 * --focus RE / --exclude RE keep the stacks that go (or do not go) through a matching
 * frame; --group 'PAT->NAME' / 'PAT=>NAME' rename frames into groups and merge consecutive
 * frames of one group (PerfView's GroupPats, with entry groups); --fold PAT removes frames,
 * their time going to their caller (PerfView's FoldPats); no_signature drops the argument
 * list. A profile applies the selection of nt_profile_opts.select in nt_profile_foreach(),
 * so every view (fold, tree, flame graphs, exports, SQL) sees the same stacks; the cache
 * below does the work once per stack. Pattern syntax: doc/man/nettrace-tree.1 (SELECTION). */
#include "internal.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>

enum { SEL_FOCUS = NT_SELECT_FOCUS, SEL_EXCLUDE = NT_SELECT_EXCLUDE,
       SEL_GROUP = NT_SELECT_GROUP, SEL_FOLD = NT_SELECT_FOLD };

#define SEL_MAX_PATTERNS 1024u
#define SEL_MAX_CAPTURES 10

typedef struct selpat {
	int kind;
	regex_t re;
	char *name;  /* SEL_GROUP: the group's name, "$1".."$9" are captures; "" keeps the frame */
	int entry;   /* SEL_GROUP written "PAT=>NAME": the entry frame is part of the name */
} selpat;

struct nt_select {
	selpat *p;
	size_t n, cap;
	int no_signature;
	int nrewrite; /* group and fold patterns */
};

int nt_select_new(nt_select **out, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	nt_select *s = calloc(1, sizeof *s);
	if (!s)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	*out = s;
	return 0;
}

void nt_select_free(nt_select *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		regfree(&s->p[i].re);
		free(s->p[i].name);
	}
	free(s->p);
	free(s);
}

void nt_select_no_signature(nt_select *s, int on)
{
	s->no_signature = on != 0;
}

int nt_select_rewrites(const nt_select *s)
{
	return s && (s->nrewrite || s->no_signature);
}

int nt_select_empty(const nt_select *s)
{
	return !s || (s->n == 0 && !s->no_signature);
}

/* A PerfView pattern as a POSIX extended regex: '*' any text, '%' an identifier (letters,
 * digits, '_' and '.'), '^' (first) anchors at the start, '{' '}' a capture ($1..$9 in the
 * group name); every other character is itself. */
static char *perfview_regex(const char *pat, size_t n)
{
	size_t cap = n * 14 + 2;
	char *r = malloc(cap);
	if (!r)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char c = pat[i];
		if (c == '*') {
			memcpy(r + k, ".*", 2);
			k += 2;
		} else if (c == '%') {
			memcpy(r + k, "[[:alnum:]_.]*", 14);
			k += 14;
		} else if (c == '^' && i == 0) {
			r[k++] = '^';
		} else if (c == '{') {
			r[k++] = '(';
		} else if (c == '}') {
			r[k++] = ')';
		} else if (strchr(".[]()\\+?|$^*{}", c)) {
			r[k++] = '\\'; /* ERE: a backslash makes a special character literal */
			r[k++] = c;
		} else {
			r[k++] = c;
		}
	}
	r[k] = '\0';
	return r;
}

static int compile(selpat *sp, const char *re, const char *what, nt_error *err)
{
	int rc = regcomp(&sp->re, re, REG_EXTENDED | REG_ICASE);
	if (rc) {
		char msg[160];
		regerror(rc, &sp->re, msg, sizeof msg);
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad %s pattern '%s': %s", what, re,
			       msg);
	}
	return 0;
}

static int add_one(nt_select *s, int kind, const char *text, size_t n, const char *orig,
		   nt_error *err)
{
	if (s->n >= SEL_MAX_PATTERNS)
		return nt_fail(err, NT_ELIMIT, NT_NO_OFFSET, "more than %u selection patterns",
			       SEL_MAX_PATTERNS);
	if (nt_grow((void **)&s->p, &s->cap, s->n + 1, sizeof *s->p))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	selpat sp;
	memset(&sp, 0, sizeof sp);
	sp.kind = kind;
	int rc;
	if (kind == SEL_FOCUS || kind == SEL_EXCLUDE) {
		char *re = malloc(n + 1);
		if (!re)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		memcpy(re, text, n);
		re[n] = '\0';
		rc = compile(&sp, re, kind == SEL_FOCUS ? "--focus" : "--exclude", err);
		free(re);
		if (rc)
			return rc;
	} else {
		const char *pat = text, *pe = text + n, *name = NULL;
		if (kind == SEL_GROUP) {
			const char *arrow = NULL;
			for (const char *q = text; q + 1 < pe; q++)
				if ((q[0] == '-' || q[0] == '=') && q[1] == '>') {
					arrow = q;
					break;
				}
			if (!arrow)
				return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
					       "bad --group '%s': expected PAT->NAME or PAT=>NAME", orig);
			sp.entry = arrow[0] == '=';
			pe = arrow;
			name = arrow + 2;
		}
		while (pat < pe && isspace((unsigned char)*pat))
			pat++;
		while (pe > pat && isspace((unsigned char)pe[-1]))
			pe--;
		if (pat == pe)
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad --%s '%s': empty pattern",
				       kind == SEL_GROUP ? "group" : "fold", orig);
		char *re = perfview_regex(pat, (size_t)(pe - pat));
		if (!re)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		rc = compile(&sp, re, kind == SEL_GROUP ? "--group" : "--fold", err);
		free(re);
		if (rc)
			return rc;
		if (name) {
			const char *ne = text + n;
			while (name < ne && isspace((unsigned char)*name))
				name++;
			while (ne > name && isspace((unsigned char)ne[-1]))
				ne--;
			sp.name = malloc((size_t)(ne - name) + 1);
			if (!sp.name) {
				regfree(&sp.re);
				return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
			}
			memcpy(sp.name, name, (size_t)(ne - name));
			sp.name[ne - name] = '\0';
		}
		s->nrewrite++;
	}
	s->p[s->n++] = sp;
	return 0;
}

int nt_select_add(nt_select *s, int kind, const char *spec, nt_error *err)
{
	nt_error_clear(err);
	if (!s || !spec || kind < SEL_FOCUS || kind > SEL_FOLD)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_select_add: bad argument");
	if (kind == SEL_FOCUS || kind == SEL_EXCLUDE) {
		if (!*spec)
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "empty --%s pattern",
				       kind == SEL_FOCUS ? "focus" : "exclude");
		return add_one(s, kind, spec, strlen(spec), spec, err);
	}
	/* PerfView's pattern text: an optional "[description]", then patterns separated
	 * by ';' */
	const char *p = spec;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '[') {
		const char *e = strchr(p, ']');
		if (e)
			p = e + 1;
	}
	int any = 0;
	while (*p) {
		const char *e = strchr(p, ';');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		size_t k = 0;
		while (k < n && isspace((unsigned char)p[k]))
			k++;
		if (k < n) {
			int rc = add_one(s, kind, p, n, spec, err);
			if (rc)
				return rc;
			any = 1;
		}
		p += n + (e ? 1 : 0);
	}
	if (!any)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad --%s '%s': empty pattern",
			       kind == SEL_GROUP ? "group" : "fold", spec);
	return 0;
}

/* ------------------------------------------------------------------ the cache */

struct nt_selcache {
	const nt_select *s;
	uint8_t *state;      /* per key: 0 not seen, 1 kept, 2 dropped */
	uint32_t *cnt;       /* per key: frames kept */
	size_t *off;         /* per key: into frames/src */
	size_t nkeys;
	const char **frames;
	uint32_t *src;
	size_t nf, fcap, srccap;
	nt_strpool strs;     /* names made here, interned */
	/* scratch for one stack, root first */
	const char **tf;
	uint32_t *ts;
	size_t tcap, tscap;
	char *buf;
	size_t bcap;
};

/* The interned copy of s[0..n). */
static const char *intern(nt_selcache *c, const char *s, size_t n)
{
	return nt_strpool_intern(&c->strs, s, n);
}

int nt_selcache_new(nt_selcache **out, const nt_select *s)
{
	nt_selcache *c = calloc(1, sizeof *c);
	if (!c)
		return NT_ENOMEM;
	c->s = s;
	*out = c;
	return 0;
}

void nt_selcache_free(nt_selcache *c)
{
	if (!c)
		return;
	free(c->state);
	free(c->cnt);
	free(c->off);
	free(c->frames);
	free(c->src);
	nt_strpool_free(&c->strs);
	free(c->tf);
	free(c->ts);
	free(c->buf);
	free(c);
}

/* Length of name without its trailing argument list: ".Method(int32,class X)" ends at
 * "Method", "operator()(int)" at "operator()". Names without one keep their length. */
size_t nt_select_strip_signature(const char *f)
{
	size_t n = strlen(f);
	if (n < 2 || f[n - 1] != ')')
		return n;
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		if (f[i] == ')')
			depth++;
		else if (f[i] == '(' && --depth == 0)
			return i > 0 ? i : n;
	}
	return n;
}

static int matches(const selpat *p, const char *f, regmatch_t *m, size_t nm)
{
	return regexec(&p->re, f, nm, m, 0) == 0;
}

/* The group name of pattern p for frame f (captures substituted) into c->buf; returns its
 * length or -1 when out of memory. */
static long group_name(nt_selcache *c, const selpat *p, const char *f, const regmatch_t *m)
{
	size_t k = 0;
	for (const char *q = p->name;; q++) {
		const char *piece = q;
		size_t n = 1;
		if (*q == '\0')
			break;
		if (q[0] == '$' && q[1] >= '1' && q[1] <= '9') {
			int j = q[1] - '0';
			q++;
			if (m[j].rm_so >= 0) {
				piece = f + m[j].rm_so;
				n = (size_t)(m[j].rm_eo - m[j].rm_so);
			} else {
				n = 0;
			}
		}
		if (nt_grow((void **)&c->buf, &c->bcap, k + n + 1, 1))
			return -1;
		memcpy(c->buf + k, piece, n);
		k += n;
	}
	if (nt_grow((void **)&c->buf, &c->bcap, k + 1, 1))
		return -1;
	c->buf[k] = '\0';
	return (long)k;
}

/* Applies the selection to one stack (frames leaf first). Returns 1 (kept: *out, *src and
 * *n are the frames, leaf first, borrowed from the cache), 0 (dropped) or NT_ENOMEM. */
int nt_selcache_apply(nt_selcache *c, size_t key, const char *const *frames, uint32_t depth,
		      const char *const **out, const uint32_t **src, uint32_t *n)
{
	const nt_select *s = c->s;
	if (key >= c->nkeys) {
		size_t nk = key + 1 > c->nkeys * 2 ? key + 1 : c->nkeys * 2;
		uint8_t *st = realloc(c->state, nk);
		if (!st)
			return NT_ENOMEM;
		c->state = st;
		uint32_t *cn = realloc(c->cnt, nk * sizeof *cn);
		if (!cn)
			return NT_ENOMEM;
		c->cnt = cn;
		size_t *of = realloc(c->off, nk * sizeof *of);
		if (!of)
			return NT_ENOMEM;
		c->off = of;
		memset(c->state + c->nkeys, 0, nk - c->nkeys);
		c->nkeys = nk;
	}
	if (c->state[key] == 0) {
		if (nt_grow((void **)&c->tf, &c->tcap, (size_t)depth + 1, sizeof *c->tf) ||
		    nt_grow((void **)&c->ts, &c->tscap, (size_t)depth + 1, sizeof *c->ts))
			return NT_ENOMEM;
		size_t k = 0;
		const char *last_group = NULL; /* group of the frame above (root side), or NULL */
		regmatch_t m[SEL_MAX_CAPTURES];
		for (uint32_t i = depth; i-- > 0;) {
			const char *f = frames[i];
			if (s->no_signature) {
				size_t len = nt_select_strip_signature(f);
				if (f[len] && !(f = intern(c, f, len)))
					return NT_ENOMEM;
			}
			const char *name = f;
			const selpat *gp = NULL;
			for (size_t j = 0; j < s->n; j++)
				if (s->p[j].kind == SEL_GROUP &&
				    matches(&s->p[j], f, m, SEL_MAX_CAPTURES)) {
					gp = &s->p[j];
					break;
				}
			if (gp && gp->name[0]) {
				long gl = group_name(c, gp, f, m);
				if (gl < 0)
					return NT_ENOMEM;
				const char *g = intern(c, c->buf, (size_t)gl);
				if (!g)
					return NT_ENOMEM;
				if (g == last_group)
					continue; /* consecutive frames of one group: one frame */
				last_group = g;
				if (gp->entry) {
					size_t fl = strlen(f);
					if (nt_grow((void **)&c->buf, &c->bcap, (size_t)gl + fl + 6, 1))
						return NT_ENOMEM;
					memcpy(c->buf + gl, " <<", 3);
					memcpy(c->buf + gl + 3, f, fl);
					memcpy(c->buf + gl + 3 + fl, ">>", 3);
					if (!(name = intern(c, c->buf, (size_t)gl + fl + 5)))
						return NT_ENOMEM;
				} else {
					name = g;
				}
			} else {
				last_group = NULL;
			}
			int fold = 0;
			for (size_t j = 0; j < s->n && !fold; j++)
				fold = s->p[j].kind == SEL_FOLD && matches(&s->p[j], name, NULL, 0);
			if (fold)
				continue;
			c->tf[k] = name;
			c->ts[k] = i;
			k++;
		}
		/* focus: every --focus pattern matches some frame; exclude: none matches */
		int keep = 1;
		for (size_t j = 0; j < s->n && keep; j++) {
			const selpat *p = &s->p[j];
			if (p->kind != SEL_FOCUS && p->kind != SEL_EXCLUDE)
				continue;
			int hit = 0;
			for (size_t q = 0; q < k && !hit; q++)
				hit = matches(p, c->tf[q], NULL, 0);
			keep = p->kind == SEL_FOCUS ? hit : !hit;
		}
		if (!keep) {
			c->state[key] = 2;
		} else {
			if (nt_grow((void **)&c->frames, &c->fcap, c->nf + k + 1, sizeof *c->frames) ||
			    nt_grow((void **)&c->src, &c->srccap, c->nf + k + 1, sizeof *c->src))
				return NT_ENOMEM;
			/* leaf first */
			for (size_t q = 0; q < k; q++) {
				c->frames[c->nf + q] = c->tf[k - 1 - q];
				c->src[c->nf + q] = c->ts[k - 1 - q];
			}
			c->off[key] = c->nf;
			c->cnt[key] = (uint32_t)k;
			c->nf += k;
			c->state[key] = 1;
		}
	}
	if (c->state[key] == 2)
		return 0;
	*out = c->frames + c->off[key];
	*src = c->src + c->off[key];
	*n = c->cnt[key];
	return 1;
}
