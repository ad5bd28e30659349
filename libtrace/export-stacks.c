/* SPDX-License-Identifier: MIT */
/* export-stacks.c - the stack sources every exporter reads (nt_stacks): the groups of a
 * profile shaped as nettrace-fold prints them, or the lines of a folded-stacks text; and the
 * buffered, escaping output the exporters write with.
 *
 * Sections: sources; profile stacks; folded stacks (parser); output and escaping.
 * Frames handed to consumers stay valid until nt_stacks_free(): profile frame names are the
 * profile's, folded frames point into the caller's text, and the few frames made here
 * (thread roots, names rewritten for the folded format) are kept in the source. */
#include "export.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* ------------------------------------------------------------------ sources */

typedef struct ftext {
	const char *text;     /* borrowed */
	size_t len;
	char *name;
} ftext;

struct nt_stacks {
	nt_profile *p;        /* profile source, or NULL */
	nt_fold_opts fo;      /* profile: how frames are shaped (as nettrace-fold) */
	struct ftext *texts;  /* folded source: its texts, in order */
	size_t ntexts, tcap;
	const char *failed;   /* name of the text of the last format error */
	int unit;             /* enum nt_unit of nt_xstack.value */
	char *name;           /* for messages and output names */

	/* made frames, kept until free: owned strings, looked up by key */
	nt_idmap made;        /* key -> index into madev */
	char **madev;
	size_t nmade, madecap;
	nt_xframe *frames;    /* scratch: the current stack, root first */
	size_t fcap;
};

static int stacks_new(nt_stacks **out, const char *name, nt_error *err)
{
	nt_stacks *s = calloc(1, sizeof *s);
	if (!s)
		goto nomem;
	s->name = nt_strdup(name ? name : "-");
	if (!s->name)
		goto nomem;
	*out = s;
	return 0;
nomem:
	free(s);
	return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory creating a stack source");
}

int nt_stacks_from_profile(nt_stacks **out, nt_profile *p, const nt_fold_opts *fo, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	if (!p)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no profile");
	int rc = nt_profile_finish(p, err);
	if (rc)
		return rc;
	nt_fold_opts o;
	rc = nt_opts_load(&o, sizeof o, sizeof o, fo, "fold options", err);
	if (rc)
		return rc;
	if (o.unit == NT_UNIT_DEFAULT)
		o.unit = NT_UNIT_NS;
	if (o.unit < NT_UNIT_SAMPLES || o.unit > NT_UNIT_MS)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "unknown unit %d", o.unit);
	const nt_session_info *si = nt_profile_session_count(p) ? nt_profile_session(p, 0) : NULL;
	rc = stacks_new(out, si && si->name ? si->name : "profile", err);
	if (rc)
		return rc;
	(*out)->p = p;
	(*out)->fo = o;
	(*out)->unit = o.unit;
	return 0;
}

int nt_stacks_add_folded(nt_stacks *s, const char *text, size_t len, const char *name,
			 nt_error *err)
{
	nt_error_clear(err);
	if (!s || s->p || (!text && len))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "not a folded source, or no text");
	if (nt_grow((void **)&s->texts, &s->tcap, s->ntexts + 1, sizeof(ftext)))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory adding folded text");
	ftext *f = &s->texts[s->ntexts];
	f->text = text ? text : "";
	f->len = len;
	f->name = nt_strdup(name ? name : "-");
	if (!f->name)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory adding folded text");
	s->ntexts++;
	return 0;
}

int nt_stacks_from_folded(nt_stacks **out, const char *text, size_t len, int unit,
			  const char *name, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	if (!text && len)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no folded text");
	if (unit == NT_UNIT_DEFAULT)
		unit = NT_UNIT_SAMPLES;
	if (unit < NT_UNIT_SAMPLES || unit > NT_UNIT_MS)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "unknown unit %d", unit);
	int rc = stacks_new(out, name, err);
	if (rc)
		return rc;
	(*out)->unit = unit;
	rc = nt_stacks_add_folded(*out, text, len, name, err);
	if (rc) {
		nt_stacks_free(*out);
		*out = NULL;
	}
	return rc;
}

const char *nt_stacks_error_input(const nt_stacks *s)
{
	return s ? s->failed : NULL;
}

void nt_stacks_free(nt_stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmade; i++)
		free(s->madev[i]);
	free(s->madev);
	nt_idmap_free(&s->made);
	for (size_t i = 0; i < s->ntexts; i++)
		free(s->texts[i].name);
	free(s->texts);
	free(s->frames);
	free(s->name);
	free(s);
}

int nt_stacks_unit(const nt_stacks *s)
{
	return s->unit;
}

const char *nt_stacks_name(const nt_stacks *s)
{
	return s->name;
}

nt_profile *nt_stacks_profile(const nt_stacks *s)
{
	return s->p;
}

/* ------------------------------------------------------------------ profile stacks */

/* Returns the made string for key, creating it with make(arg) on first use; NULL when out
 * of memory. Keys: thread roots use the thread id with the top bit clear; rewritten names
 * use the address of the profile's string with the top bit set (addresses of user space
 * strings never have it, and thread ids that do are folded into the other half by the
 * mask: a collision only shares a made string between two keys that make the same text). */
static const char *made_get(nt_stacks *s, uint64_t key, char *(*make)(const void *), const void *arg)
{
	size_t i;
	if (nt_idmap_get(&s->made, key, &i))
		return s->madev[i];
	if (nt_grow((void **)&s->madev, &s->madecap, s->nmade + 1, sizeof(char *)))
		return NULL;
	char *m = make(arg);
	if (!m)
		return NULL;
	if (nt_idmap_put(&s->made, key, s->nmade)) {
		free(m);
		return NULL;
	}
	s->madev[s->nmade++] = m;
	return m;
}

typedef struct thread_arg {
	nt_profile *p;
	const nt_sample_group *g;
} thread_arg;

static char *make_thread(const void *arg)
{
	const thread_arg *a = arg;
	char tmp[160];
	nt_profile_thread_label(a->p, a->g->session, a->g->thread_id, 0, tmp, sizeof tmp);
	return nt_strdup(tmp);
}

/* The folded format reserves ';' (frame separator) and line ends: rewritten as nt_fold_write
 * does, so every export names frames exactly as nettrace-fold prints them. */
static char *make_clean(const void *arg)
{
	char *d = nt_strdup(arg);
	for (char *q = d; q && *q; q++)
		if (*q == ';')
			*q = ':';
		else if (*q == '\n' || *q == '\r')
			*q = ' ';
	return d;
}

static const char *const CAT_FRAMES[NT_CAT_COUNT + 1] = {
	"[cpu]", "[lock]", "[io]", "[sleep]", "[wait]", "[gc]", "[external]", "[unknown]",
	"[ready]", "[running]", "[unknown]",
};

typedef struct pwalk {
	nt_stacks *s;
	nt_xstack_fn fn;
	void *ctx;
	nt_error *err;
	int rc;               /* an error of ours (not fn's) */
} pwalk;

static int push_frame(nt_stacks *s, size_t *n, const char *str)
{
	if (nt_grow((void **)&s->frames, &s->fcap, *n + 1, sizeof(nt_xframe)))
		return -1;
	s->frames[*n].s = str;
	s->frames[*n].n = strlen(str);
	(*n)++;
	return 0;
}

static int on_group(void *ctx, const nt_sample_group *g)
{
	pwalk *w = ctx;
	nt_stacks *s = w->s;
	const nt_fold_opts *o = &s->fo;
	int cat = g->category >= 0 && g->category < NT_CAT_COUNT ? g->category : NT_CAT_COUNT;
	size_t n = 0;
	if (o->per_thread) {
		uint64_t key = g->thread_id & ~(1ull << 63);
		thread_arg ta = {s->p, g};
		const char *t = made_get(s, key, make_thread, &ta);
		if (!t || push_frame(s, &n, t))
			goto nomem;
	}
	if (o->category_frame == NT_CATFRAME_ROOT && push_frame(s, &n, CAT_FRAMES[cat]))
		goto nomem;
	size_t gfirst = n;
	for (uint32_t i = g->depth; i-- > 0;) {
		const char *f = g->frames[i];
		if (o->no_module) {
			const char *bang = strchr(f, '!');
			if (bang)
				f = bang + 1;
		}
		if (strpbrk(f, ";\n\r")) {
			f = made_get(s, (uint64_t)(uintptr_t)f | (1ull << 63), make_clean, f);
			if (!f)
				goto nomem;
		}
		if (push_frame(s, &n, f))
			goto nomem;
	}
	if (o->category_frame == NT_CATFRAME_LEAF && push_frame(s, &n, CAT_FRAMES[cat]))
		goto nomem;
	if (n == 0 && push_frame(s, &n, "[empty stack]"))
		goto nomem;
	nt_xstack st;
	st.frames = s->frames;
	st.depth = n;
	st.has_thread = 1;
	st.session = g->session;
	st.thread_id = g->thread_id;
	st.category = g->category;
	st.samples = g->samples;
	st.weight_ns = g->weight_ns;
	switch (o->unit) {
	case NT_UNIT_SAMPLES: st.value = (double)g->samples; break;
	case NT_UNIT_US: st.value = g->weight_ns / 1e3; break;
	case NT_UNIT_MS: st.value = g->weight_ns / 1e6; break;
	default: st.value = g->weight_ns; break;
	}
	st.offset = NT_NO_OFFSET;
	st.text = NULL;
	st.text_n = 0;
	st.group = g;
	st.profile = s->p;
	st.gfirst = gfirst;
	return w->fn(w->ctx, &st);
nomem:
	w->rc = nt_fail(w->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory exporting stacks");
	return w->rc;
}

const nt_native_frame *nt_xstack_native(const nt_xstack *st, size_t i)
{
	if (!st->group || !st->profile || i < st->gfirst || i - st->gfirst >= st->group->depth)
		return NULL;
	/* frames[gfirst] is the group's root, its frames[depth - 1] */
	return nt_profile_frame_native(st->profile, st->group,
				       (uint32_t)(st->group->depth - 1 - (i - st->gfirst)));
}

/* ------------------------------------------------------------------ folded stacks */

static int folded_fail(nt_stacks *s, const ftext *f, nt_error *err, uint64_t off, uint64_t line,
		       const char *why)
{
	s->failed = f->name;
	return nt_fail(err, NT_EFORMAT, off, "line %" PRIu64 ": %s", line, why);
}

/* Parses COUNT: digits with an optional fraction (flamegraph.pl's \d+(\.\d*)?). Returns 0,
 * or -1 when p[0..n) is not such a number. */
static int parse_count(const char *p, size_t n, double *out, uint64_t *iout, int *is_int)
{
	size_t i = 0;
	uint64_t v = 0;
	int big = 0;
	while (i < n && p[i] >= '0' && p[i] <= '9') {
		unsigned d = (unsigned)(p[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			big = 1;
		else
			v = v * 10 + d;
		i++;
	}
	if (i == 0)
		return -1;
	if (i == n && !big) {
		*out = (double)v;
		*iout = v;
		*is_int = 1;
		return 0;
	}
	if (i < n && p[i] != '.')
		return -1;
	for (size_t k = i + 1; k < n; k++)
		if (p[k] < '0' || p[k] > '9')
			return -1;
	char tmp[64];
	if (n >= sizeof tmp)
		return -1;
	memcpy(tmp, p, n);
	tmp[n] = '\0';
	double d = strtod(tmp, NULL);
	if (!isfinite(d))
		return -1;
	*out = d;
	*iout = (uint64_t)(d + 0.5 < 1.8e19 ? d + 0.5 : 1.8e19);
	*is_int = 0;
	return 0;
}

static int folded_text(nt_stacks *s, const ftext *ft, nt_xstack_fn fn, void *ctx, nt_error *err)
{
	const char *t = ft->text, *end = ft->text + ft->len;
	uint64_t line = 0;
	double to_ns = s->unit == NT_UNIT_NS ? 1 : s->unit == NT_UNIT_US ? 1e3
		     : s->unit == NT_UNIT_MS ? 1e6 : 0;
	nt_xstack st;
	memset(&st, 0, sizeof st);
	st.category = -1;
	while (t < end) {
		const char *nl = memchr(t, '\n', (size_t)(end - t));
		const char *le = nl ? nl : end;
		const char *next = nl ? nl + 1 : end;
		line++;
		/* trailing blanks and the CR of CRLF */
		while (le > t && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t'))
			le--;
		if (le == t) {
			t = next;
			continue;
		}
		/* COUNT follows the last blank; the stack is everything before the blanks */
		const char *sp = le;
		while (sp > t && sp[-1] != ' ' && sp[-1] != '\t')
			sp--;
		if (sp == t)
			return folded_fail(s, ft, err, (uint64_t)(t - ft->text), line,
					   "no count: expected 'frame;...;frame COUNT'");
		double v;
		uint64_t iv;
		int is_int;
		if (parse_count(sp, (size_t)(le - sp), &v, &iv, &is_int))
			return folded_fail(s, ft, err, (uint64_t)(sp - ft->text), line,
					   "the count is not a decimal number");
		const char *se = sp;
		while (se > t && (se[-1] == ' ' || se[-1] == '\t'))
			se--;
		size_t n = 0;
		const char *f = t;
		if (se > t) {
			for (;;) {
				const char *semi = memchr(f, ';', (size_t)(se - f));
				const char *fe = semi ? semi : se;
				if (n >= s->fcap &&
				    nt_grow((void **)&s->frames, &s->fcap, n + 1, sizeof(nt_xframe)))
					return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET,
						       "out of memory reading folded stacks");
				s->frames[n].s = f;
				s->frames[n].n = (size_t)(fe - f);
				n++;
				if (!semi)
					break;
				f = semi + 1;
			}
		}
		st.frames = s->frames;
		st.depth = n;
		st.value = v;
		st.samples = s->unit == NT_UNIT_SAMPLES ? iv : 0;
		st.weight_ns = v * to_ns;
		st.offset = (uint64_t)(t - ft->text);
		st.text = t;
		st.text_n = (size_t)(se - t);
		(void)is_int;
		int rc = fn(ctx, &st);
		if (rc)
			return rc;
		t = next;
	}
	return 0;
}

int nt_stacks_foreach(nt_stacks *s, nt_xstack_fn fn, void *ctx, nt_error *err)
{
	s->failed = NULL;
	if (!s->p) {
		for (size_t i = 0; i < s->ntexts; i++) {
			int rc = folded_text(s, &s->texts[i], fn, ctx, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	pwalk w = {s, fn, ctx, err, 0};
	int rc = nt_profile_foreach(s->p, on_group, &w);
	if (rc && w.rc == 0 && rc == NT_ENOMEM)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory exporting stacks");
	return rc;
}

/* ------------------------------------------------------------------ shared prefixes */

/* Length of the common prefix of a[0..n) and b[0..n). */
static size_t common_prefix(const char *a, const char *b, size_t n)
{
	size_t i = 0;
	while (n - i >= 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
			uint64_t d = x ^ y;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return i + (size_t)(__builtin_ctzll(d) >> 3);
#else
			(void)d;
			break;
#endif
		}
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

size_t nt_xprev_shared(nt_xprev *pv, const nt_xstack *st)
{
	size_t d = st->depth, lim = d < pv->n ? d : pv->n, i = 0;
	if (st->text && pv->text) {
		/* Frames lie in the text one after another, so frame i is shared when every
		 * frame before it is, it has the same length, and it ends within the common
		 * prefix of the two texts. */
		size_t m = st->text_n < pv->text_n ? st->text_n : pv->text_n;
		size_t L = common_prefix(st->text, pv->text, m);
		while (i < lim && st->frames[i].n == pv->f[i].n &&
		       (size_t)(st->frames[i].s - st->text) + st->frames[i].n <= L)
			i++;
	} else {
		while (i < lim && st->frames[i].n == pv->f[i].n &&
		       (st->frames[i].s == pv->f[i].s ||
			memcmp(st->frames[i].s, pv->f[i].s, st->frames[i].n) == 0))
			i++;
	}
	if (nt_grow((void **)&pv->f, &pv->cap, d, sizeof(nt_xframe)))
		return SIZE_MAX;
	/* An empty stack (a folded line " 5") before any other leaves pv->f NULL, and NULL + 0
	 * is undefined behaviour even for a zero-length copy. */
	if (d > i)
		memcpy(pv->f + i, st->frames + i, (d - i) * sizeof(nt_xframe));
	pv->n = d;
	pv->text = st->text;
	pv->text_n = st->text_n;
	return i;
}

void nt_xprev_reset(nt_xprev *pv)
{
	pv->n = 0;
	pv->text = NULL;
	pv->text_n = 0;
}

void nt_xprev_free(nt_xprev *pv)
{
	free(pv->f);
	memset(pv, 0, sizeof *pv);
}

/* ------------------------------------------------------------------ numbers */

int nt_fmt_num(char *buf, size_t n, double v, int decimals)
{
	if (!isfinite(v))
		v = 0;
	/* A whole number (counts, ns weights: most of them) prints as its digits whatever
	 * the decimals, as the trimming below would leave it; -0 as 0. */
	double a = v < 0 ? -v : v;
	if (n >= 22 && a < 9007199254740992.0 && a == (double)(uint64_t)a) {
		size_t k = 0;
		if (v < 0 && a != 0)
			buf[k++] = '-';
		return (int)(k + nt_fmt_u64(buf + k, (uint64_t)a));
	}
	int k = snprintf(buf, n, "%.*f", decimals, v);
	if (k > 0 && (size_t)k >= n) {
		/* A huge value (a folded COUNT of 10^70) does not fit in fixed notation, and the
		 * callers copy k bytes out of buffers sized for sane values: exponent notation
		 * fits in 25 bytes (JSON and SVG read it); a buffer smaller still gets nothing. */
		k = snprintf(buf, n, "%.17g", v);
		if (k > 0 && (size_t)k >= n) {
			buf[0] = '\0';
			return 0;
		}
		return k;
	}
	if (k <= 0)
		return k;
	if (decimals > 0) {
		while (k > 1 && buf[k - 1] == '0')
			buf[--k] = '\0';
		if (k > 1 && buf[k - 1] == '.')
			buf[--k] = '\0';
	}
	if (strcmp(buf, "-0") == 0) {
		buf[0] = '0';
		buf[1] = '\0';
		k = 1;
	}
	return k;
}
