/* SPDX-License-Identifier: MIT */
/* category.c - blocked-time categories and the frame rules that assign them.
 * Input: the text of a rules file (format in doc/man/nettrace-rules.5; the built-in
 * defaults are data/rules/default.rules, compiled in as libtrace/default-rules.h);
 * output: an immutable nt_rules that maps a stack (frame names, leaf first) to a
 * category. Not here: where frame names come from (sym-*.c) or what a caller does when
 * no rule matches (sample type, runtime events; see doc/format spec §8 and §10).
 *
 * Subsystem rules (nt_subsystems, data/rules/subsystems.rules) are the same rules with a
 * free-form name where a category would be: they share the parser, the matcher and the
 * prefilter; a rule's label is then an index into the subsystem's names.
 *
 * Sections: category names; compiled patterns, the glob matcher and the prefilter that
 * picks the few rules worth trying on a name; stack matching; prefilter construction;
 * the parser; the public entry points; subsystems. A compiled nt_rules is never written
 * after nt_rules_parse() returns, so threads may share it. */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

/* Longest pattern accepted (bytes after unescaping). Real frame names are rarely longer
 * than a few hundred bytes; the bound keeps segment offsets and error messages small. */
#define CAT_MAX_PATTERN 1024u
/* Largest rules text accepted: the default file is ~15 KiB; this is a sanity bound that
 * keeps every offset in the compiled rules within uint32_t. */
#define CAT_MAX_TEXT (16u << 20)

#define CAT_NONE UINT32_MAX /* "no rule" in rule-index variables */
#define CAT_NO_MASK UINT32_MAX
#define CAT_HASH_BITS 16u
#define CAT_HASH_SIZE (1u << CAT_HASH_BITS)

/* ---------------------------------------------------------------------------------------
 * Category names
 * ------------------------------------------------------------------------------------- */

/* A char array, not an array of pointers: keeps the table in .rodata (no relocations). */
static const char cat_names[NT_CAT_COUNT][9] = {
	"cpu", "lock", "io", "sleep", "wait", "gc", "external", "unknown", "ready", "running",
};

const char *nt_category_name(int cat)
{
	if (cat < 0 || cat >= NT_CAT_COUNT)
		return NULL;
	return cat_names[cat];
}

int nt_category_parse(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < NT_CAT_COUNT; i++)
		if (strcmp(name, cat_names[i]) == 0)
			return i;
	return -1;
}

/* ---------------------------------------------------------------------------------------
 * Compiled patterns
 *
 * A pattern is split at its '*'s into segments (runs of literal bytes and '?'); empty
 * segments ("**", leading/trailing '*') are dropped. A name matches when the first
 * segment sits at its start (unless the pattern starts with '*'), the last at its end
 * (unless the pattern ends with '*'), and the middle ones appear in order in between.
 * Segments have a fixed length, so taking the leftmost occurrence of each middle segment
 * is always right (it leaves the most room for the rest): no backtracking, and the worst
 * case is O(name length x pattern length) (memmem() is linear for '?'-free segments).
 * ------------------------------------------------------------------------------------- */

typedef struct cat_seg {
	uint32_t off;  /* first byte in nt_rules.pool */
	uint32_t len;  /* length in bytes; a '?' counts as one */
	uint32_t wild; /* pool offset of len mask bytes (1 = '?'), or CAT_NO_MASK */
} cat_seg;

typedef struct cat_rule {
	uint8_t cat;        /* enum nt_category */
	uint8_t outer;      /* 1: "outer" rule (decides from the root-most matching frame) */
	uint8_t has_star;   /* pattern contains a '*' */
	uint8_t lead_star;  /* pattern starts with '*': first segment not anchored */
	uint8_t trail_star; /* pattern ends with '*': last segment not anchored */
	uint32_t seg0;      /* index of the first segment in nt_rules.segs */
	uint32_t nseg;      /* number of (non-empty) segments */
	uint32_t minlen;    /* sum of the segment lengths: shorter names cannot match */
	uint32_t line;      /* line number in the rules text */
	uint32_t label;     /* subsystem rules: index into nt_subsystems.names */
} cat_rule;

/* Prefilter. Each rule gets one key: a run of literal bytes of its pattern, which every
 * name it matches contains. A table holds keys of one length L (8, 5 or 4 bytes) and is
 * probed with the 4-byte windows of the name that start at multiples of S = L - 3: an
 * occurrence of a key covers exactly one such window, at offset 0..S-1 in the key, so the
 * table lists each key under its first S 4-byte windows. The bang table holds 4-byte keys
 * that start with '!' and is only probed where the name has a '!' (the module!symbol
 * separator, usually once per name). A 65536-bit bloom bitmap (8 KiB, stays in L1) in
 * front of each table makes almost every probe a single bit test. */
typedef struct cat_entry {
	uint64_t key;  /* the whole key: L bytes as loaded by cat_load() */
	uint32_t sub;  /* the 4-byte window of the key this entry is listed under */
	uint32_t hash; /* cat_hash(sub) */
	uint32_t rule; /* index in nt_rules.rules */
	uint32_t off;  /* offset of sub in the key */
} cat_entry;

typedef struct cat_table {
	uint64_t bloom[CAT_HASH_SIZE / 64]; /* bit h set: some entry has hash h */
	cat_entry *ents;                    /* sorted by hash */
	size_t nents, cap_ents;
	uint32_t len;    /* key length L */
	uint32_t stride; /* probe every stride bytes (L - 3); 0 for the bang table */
} cat_table;

enum { CAT_T8, CAT_TBANG, CAT_T5, CAT_T4, CAT_NTABLES };

struct nt_rules {
	cat_rule *rules; /* in file order; the index is the rule's priority */
	size_t nrules, cap_rules;
	cat_seg *segs;
	size_t nsegs, cap_segs;
	uint8_t *pool; /* segment bytes and '?' masks */
	size_t npool, cap_pool;
	size_t nouter; /* number of outer rules (0: the first match from the leaf wins) */
	cat_table tab[CAT_NTABLES]; /* the prefilter, by key kind */
	uint32_t *always; /* rules without 4 literal bytes in a row: tried on every name */
	size_t nalways;
};

static inline uint32_t cat_hash(uint32_t sub)
{
	return (sub * 2654435761u) >> (32 - CAT_HASH_BITS);
}

/* The len (<= 8) bytes at p as an integer; byte-wise loads (memcpy): any alignment. */
static inline uint64_t cat_load(const void *p, size_t len)
{
	uint64_t v = 0;
	if (len == 8) {
		memcpy(&v, p, 8);
	} else if (len == 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		v = w;
	} else {
		uint8_t b[8] = { 0 };
		memcpy(b, p, len);
		memcpy(&v, b, 8);
	}
	return v;
}

static inline uint32_t cat_load4(const void *p)
{
	uint32_t w;
	memcpy(&w, p, 4);
	return w;
}

/* Does segment g match the g->len bytes at s? */
static int seg_eq(const nt_rules *R, const cat_seg *g, const char *s)
{
	const uint8_t *p = R->pool + g->off;
	if (g->wild == CAT_NO_MASK)
		return memcmp(s, p, g->len) == 0;
	const uint8_t *w = R->pool + g->wild;
	for (uint32_t i = 0; i < g->len; i++)
		if (!w[i] && (uint8_t)s[i] != p[i])
			return 0;
	return 1;
}

/* Leftmost position in s[0, n) where segment g matches, or NULL. */
static const char *seg_find(const nt_rules *R, const cat_seg *g, const char *s, size_t n)
{
	if (g->len > n)
		return NULL;
	const uint8_t *p = R->pool + g->off;
	if (g->wild == CAT_NO_MASK)
		return memmem(s, n, p, g->len);
	/* With '?'s: jump with memchr to the candidates for the first literal byte. */
	const uint8_t *w = R->pool + g->wild;
	uint32_t k = 0;
	while (k < g->len && w[k])
		k++;
	if (k == g->len)
		return s; /* all '?': fits at 0 (len <= n checked above) */
	size_t last = n - g->len; /* last possible start */
	size_t pos = 0;
	while (pos <= last) {
		const char *q = memchr(s + pos + k, p[k], last - pos + 1);
		if (!q)
			return NULL;
		pos = (size_t)(q - s) - k;
		if (seg_eq(R, g, s + pos))
			return s + pos;
		pos++;
	}
	return NULL;
}

/* Does rule r match the whole name s (n bytes)? */
static int rule_match(const nt_rules *R, const cat_rule *r, const char *s, size_t n)
{
	if (n < r->minlen)
		return 0;
	/* A pattern of stars only ("*") has no segment: when no rule has one, R->segs is NULL
	 * and NULL + 0 below would be undefined behaviour. Stars match any name. */
	if (r->nseg == 0)
		return r->has_star || n == 0;
	const cat_seg *g = R->segs + r->seg0;
	size_t k = r->nseg;
	if (!r->has_star)
		return n == g->len && seg_eq(R, g, s);
	size_t pos = 0, end = n;
	if (!r->lead_star) { /* first segment anchored at the start */
		if (!seg_eq(R, g, s))
			return 0;
		pos = g->len;
		g++;
		k--;
	}
	if (!r->trail_star) { /* last segment anchored at the end, after the first */
		const cat_seg *t = &g[k - 1];
		if (end - pos < t->len || !seg_eq(R, t, s + end - t->len))
			return 0;
		end -= t->len;
		k--;
	}
	for (size_t i = 0; i < k; i++) {
		const char *q = seg_find(R, &g[i], s + pos, end - pos);
		if (!q)
			return 0;
		pos = (size_t)(q - s) + g[i].len;
	}
	return 1;
}

/* Verifies rule ri against name s if it could improve the best outer (*bo) or plain
 * (*bp, only when want_plain) match found so far; lower indexes come first in the file. */
static inline void cat_consider(const nt_rules *R, uint32_t ri, const char *s, size_t n,
				int want_plain, uint32_t *bo, uint32_t *bp)
{
	const cat_rule *r = &R->rules[ri];
	uint32_t *best = r->outer ? bo : bp;
	if ((r->outer || want_plain) && ri < *best && rule_match(R, r, s, n))
		*best = ri;
}

/* A bloom hit at q in table t: verifies the rules whose key occurs in name s with its
 * 4-byte window sub at q. Out of line: the loops below stay small, and hits are rare. */
static void __attribute__((noinline))
cat_hit(const nt_rules *R, const cat_table *t, size_t q, uint32_t sub, uint32_t h,
	const char *s, size_t n, int want_plain, uint32_t *bo, uint32_t *bp)
{
	size_t lo; /* first entry with hash >= h */
	NT_PARTITION(lo, t->nents, mid, t->ents[mid].hash < h);
	for (; lo < t->nents && t->ents[lo].hash == h; lo++) {
		const cat_entry *e = &t->ents[lo];
		if (e->sub != sub || q < e->off || n - (q - e->off) < t->len)
			continue;
		if (t->len != 4 && cat_load(s + q - e->off, t->len) != e->key)
			continue;
		cat_consider(R, e->rule, s, n, want_plain, bo, bp);
	}
}

/* Best (lowest-index) outer rule and plain rule matching name s (n bytes). Plain rules
 * are only tried when want_plain. Each result is CAT_NONE when nothing matches. */
static void frame_best(const nt_rules *R, const char *s, size_t n, int want_plain,
		       uint32_t *best_outer, uint32_t *best_plain)
{
	uint32_t bo = CAT_NONE, bp = CAT_NONE;
	for (int k = 0; k < CAT_NTABLES; k++) {
		const cat_table *t = &R->tab[k];
		if (!t->nents || n < 4)
			continue;
		if (t->stride) {
			for (size_t q = 0; q <= n - 4; q += t->stride) {
				uint32_t sub = cat_load4(s + q), h = cat_hash(sub);
				if ((t->bloom[h >> 6] >> (h & 63)) & 1)
					cat_hit(R, t, q, sub, h, s, n, want_plain, &bo, &bp);
			}
		} else { /* the bang table */
			const char *b = memchr(s, '!', n);
			while (b && (size_t)(b - s) <= n - 4) {
				size_t q = (size_t)(b - s);
				uint32_t sub = cat_load4(b), h = cat_hash(sub);
				if ((t->bloom[h >> 6] >> (h & 63)) & 1)
					cat_hit(R, t, q, sub, h, s, n, want_plain, &bo, &bp);
				b = memchr(b + 1, '!', n - q - 1);
			}
		}
	}
	for (size_t j = 0; j < R->nalways; j++)
		cat_consider(R, R->always[j], s, n, want_plain, &bo, &bp);
	*best_outer = bo;
	*best_plain = bp;
}

/* frame_best() through memo when there is one: the result for want_plain = 1 (the outer
 * match does not depend on want_plain, and the plain one is only read where want_plain
 * would be set), kept by the address of the name. Without memo, or out of memory, the
 * match is computed as asked. */
static void frame_best_memo(const nt_rules *R, nt_rules_memo *memo, const char *s,
			    int want_plain, uint32_t *bo, uint32_t *bp)
{
	size_t ix;
	if (memo && memo->rules != R) {
		if (memo->rules)
			memo = NULL; /* another rule set's memo: not used */
		else
			memo->rules = R;
	}
	if (memo && nt_idmap_get(&memo->map, (uint64_t)(uintptr_t)s, &ix)) {
		*bo = (uint32_t)(memo->res[ix] >> 32);
		*bp = (uint32_t)memo->res[ix];
		return;
	}
	if (!memo || (memo->n == memo->cap && nt_grow((void **)&memo->res, &memo->cap,
						      memo->n + 1, sizeof *memo->res))) {
		frame_best(R, s, strlen(s), want_plain, bo, bp);
		return;
	}
	frame_best(R, s, strlen(s), 1, bo, bp);
	if (nt_idmap_put(&memo->map, (uint64_t)(uintptr_t)s, memo->n) == 0)
		memo->res[memo->n++] = (uint64_t)*bo << 32 | *bp;
}

int nt_rules_match_memo(const nt_rules *rules, nt_rules_memo *memo, const char *const *frames,
			size_t depth)
{
	if (!rules || (!frames && depth))
		return -1;
	int plain = -1;
	int outer = -1;
	for (size_t i = 0; i < depth; i++) {
		const char *s = frames[i];
		if (!s) /* a frame without a name matches nothing */
			continue;
		uint32_t bo, bp;
		frame_best_memo(rules, memo, s, plain < 0, &bo, &bp);
		if (bo != CAT_NONE)
			outer = rules->rules[bo].cat; /* keep going: the root-most one wins */
		if (plain < 0 && bp != CAT_NONE) {
			plain = rules->rules[bp].cat;
			if (rules->nouter == 0)
				return plain; /* nothing can override the leaf-most match */
		}
	}
	return outer >= 0 ? outer : plain;
}

int nt_rules_match(const nt_rules *rules, const char *const *frames, size_t depth)
{
	return nt_rules_match_memo(rules, NULL, frames, depth);
}

void nt_rules_memo_free(nt_rules_memo *memo)
{
	if (!memo)
		return;
	nt_idmap_free(&memo->map);
	free(memo->res);
	memset(memo, 0, sizeof *memo);
}

/* ---------------------------------------------------------------------------------------
 * Prefilter construction
 *
 * Key kinds in order of preference: 8 literal bytes (rarely found by accident: with 4,
 * ".Int" of "Task.InternalWait(" would sit in every "Foo.Internal" namespace; and the
 * table is probed every 5 bytes), '!' + 3 bytes (probed about once per name), 5 bytes
 * (every 2 bytes), 4 bytes (every byte); rules with none are tried on every name. Among
 * the windows of the chosen kind, the one shared by the fewest rules wins (fewer rules to
 * verify per hit), then the one with the fewest lowercase letters (runs like "read" or
 * "stem" occur in most frame names; '.', '!', '_' and capitals less), then the last one
 * (method names follow namespaces).
 * ------------------------------------------------------------------------------------- */

static const uint32_t cat_kind_len[CAT_NTABLES] = { 8, 4, 5, 4 };

static int ent_cmp_hash(const void *a, const void *b)
{
	const cat_entry *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/* Calls fn(ctx, gram, bytes) for every window of rule r of the given kind; stops early
 * when fn returns nonzero. */
static void rule_grams(const nt_rules *R, const cat_rule *r, int kind,
		       int (*fn)(void *ctx, uint64_t gram, const uint8_t *bytes), void *ctx)
{
	size_t width = cat_kind_len[kind];
	for (uint32_t si = 0; si < r->nseg; si++) {
		const cat_seg *g = &R->segs[r->seg0 + si];
		const uint8_t *p = R->pool + g->off;
		const uint8_t *w = g->wild == CAT_NO_MASK ? NULL : R->pool + g->wild;
		size_t run = 0; /* literal bytes ending at i */
		for (uint32_t i = 0; i < g->len; i++) {
			run = (w && w[i]) ? 0 : run + 1;
			if (run < width)
				continue;
			const uint8_t *b = p + i + 1 - width;
			if (kind == CAT_TBANG && b[0] != '!')
				continue;
			if (fn(ctx, cat_load(b, width), b))
				return;
		}
	}
}

/* The distinct windows of one kind over all rules: each gram's index in the map, and
 * there how many rules contain it (a window twice in one rule counts once: last). */
typedef struct gram_seen {
	uint32_t n;    /* rules containing the gram */
	uint32_t last; /* the last rule counted for it */
} gram_seen;

typedef struct gram_count {
	nt_idmap map;  /* gram -> index into v */
	gram_seen *v;
	size_t len, cap;
} gram_count;

typedef struct key_collect {
	gram_count *gc;
	uint32_t rule;
	int oom;
} key_collect;

static int collect_gram(void *ctx, uint64_t gram, const uint8_t *bytes)
{
	(void)bytes;
	key_collect *kc = ctx;
	gram_count *gc = kc->gc;
	size_t ix;
	if (nt_idmap_get(&gc->map, gram, &ix)) {
		if (gc->v[ix].last != kc->rule) {
			gc->v[ix].last = kc->rule;
			gc->v[ix].n++;
		}
		return 0;
	}
	if (nt_grow((void **)&gc->v, &gc->cap, gc->len + 1, sizeof *gc->v) ||
	    nt_idmap_put(&gc->map, gram, gc->len)) {
		kc->oom = 1;
		return 1;
	}
	gc->v[gc->len++] = (gram_seen){1, kc->rule};
	return 0;
}

static void gram_count_free(gram_count *gc)
{
	nt_idmap_free(&gc->map);
	free(gc->v);
	memset(gc, 0, sizeof *gc);
}

typedef struct key_pick {
	const gram_count *gc;
	size_t width;
	int found;
	uint8_t bytes[8]; /* the best window so far */
	uint32_t df;     /* rules sharing it */
	uint32_t lower;  /* lowercase letters in it */
} key_pick;

static int pick_gram(void *ctx, uint64_t gram, const uint8_t *bytes)
{
	key_pick *kp = ctx;
	size_t ix;
	int known = nt_idmap_get(&kp->gc->map, gram, &ix);
	NT_ASSERT(known);
	uint32_t df = known ? kp->gc->v[ix].n : 0, lower = 0;
	for (size_t i = 0; i < kp->width; i++)
		lower += bytes[i] >= 'a' && bytes[i] <= 'z';
	/* "<=" on the last criterion: later windows win ties */
	if (!kp->found || df < kp->df || (df == kp->df && lower <= kp->lower)) {
		kp->found = 1;
		memcpy(kp->bytes, bytes, kp->width);
		kp->df = df;
		kp->lower = lower;
	}
	return 0;
}

/* Counts, for every distinct window of the given kind, how many rules contain it (a hash
 * map: sorting every window of every rule was 9 M instructions, most of the built-in
 * rules' set-up, which every profile tool pays at start). Returns 0 or NT_ENOMEM. */
static int count_grams(const nt_rules *R, int kind, gram_count *gc)
{
	key_collect kc = { gc, 0, 0 };
	for (size_t i = 0; i < R->nrules; i++) {
		kc.rule = (uint32_t)i;
		rule_grams(R, &R->rules[i], kind, collect_gram, &kc);
		if (kc.oom)
			return NT_ENOMEM;
	}
	return 0;
}

/* Lists rule ri's key (bytes, kind) in its table under each of its first stride windows. */
static int table_add(nt_rules *R, int kind, uint32_t ri, const uint8_t *bytes)
{
	cat_table *t = &R->tab[kind];
	uint32_t nsub = t->stride ? t->stride : 1;
	if (nt_grow((void **)&t->ents, &t->cap_ents, t->nents + nsub, sizeof *t->ents))
		return NT_ENOMEM;
	for (uint32_t o = 0; o < nsub; o++) {
		cat_entry *e = &t->ents[t->nents++];
		e->key = cat_load(bytes, t->len);
		e->sub = cat_load4(bytes + o);
		e->hash = cat_hash(e->sub);
		e->rule = ri;
		e->off = o;
		t->bloom[e->hash >> 6] |= (uint64_t)1 << (e->hash & 63);
	}
	return 0;
}

static int build_prefilter(nt_rules *R)
{
	gram_count gc[CAT_NTABLES];
	memset(gc, 0, sizeof gc);
	int rc = NT_ENOMEM;

	for (int k = 0; k < CAT_NTABLES; k++) {
		R->tab[k].len = cat_kind_len[k];
		R->tab[k].stride = k == CAT_TBANG ? 0 : cat_kind_len[k] - 3;
		if (count_grams(R, k, &gc[k]))
			goto out;
	}
	R->always = malloc((R->nrules ? R->nrules : 1) * sizeof *R->always);
	if (!R->always)
		goto out;
	for (size_t i = 0; i < R->nrules; i++) {
		int k;
		key_pick kp;
		for (k = 0; k < CAT_NTABLES; k++) {
			memset(&kp, 0, sizeof kp);
			kp.gc = &gc[k];
			kp.width = cat_kind_len[k];
			rule_grams(R, &R->rules[i], k, pick_gram, &kp);
			if (kp.found)
				break;
		}
		if (k == CAT_NTABLES)
			R->always[R->nalways++] = (uint32_t)i;
		else if (table_add(R, k, (uint32_t)i, kp.bytes))
			goto out;
	}
	for (int k = 0; k < CAT_NTABLES; k++)
		if (R->tab[k].nents)
			qsort(R->tab[k].ents, R->tab[k].nents, sizeof *R->tab[k].ents, ent_cmp_hash);
	rc = 0;
out:
	for (int k = 0; k < CAT_NTABLES; k++)
		gram_count_free(&gc[k]);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Parser
 * ------------------------------------------------------------------------------------- */

/* Subsystem rules: compiled rules whose labels index names (see the last section). */
struct nt_subsystems {
	nt_rules *rules;
	char **names;    /* distinct names, in order of first appearance */
	size_t nnames, cap_names;
};

/* Longest subsystem name (bytes): names are labels in tables and folded frames. */
#define SUB_MAX_NAME 32u
/* Most distinct names in one file: a breakdown by hundreds of subsystems is no longer
 * a breakdown; the bound keeps the name lookup cheap. */
#define SUB_MAX_NAMES 4096u
/* The label of a rule named "other": no subsystem (the search stops there). */
#define SUB_OTHER UINT32_MAX

typedef struct cat_parse {
	nt_rules *R;
	nt_subsystems *S; /* parsing subsystem rules: names instead of categories */
	const char *name; /* for messages; may be NULL */
	nt_error *err;
	uint32_t line;    /* current line number, 1-based */
	size_t line_off;  /* its byte offset in the text */
} cat_parse;

/* Fails with "NAME: line N: message" at the current line's offset. */
static int NT_PRINTF(2, 3) parse_fail(cat_parse *P, const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (P->name)
		return nt_fail(P->err, NT_EFORMAT, P->line_off, "%s: line %" PRIu32 ": %s",
			       P->name, P->line, msg);
	return nt_fail(P->err, NT_EFORMAT, P->line_off, "line %" PRIu32 ": %s", P->line, msg);
}

/* Copies at most 32 bytes of a token into buf for a message (36 bytes at most, with the
 * NUL), non-printable bytes shown as '?' and "..." marking a cut. */
static const char *show_token(char buf[40], const char *s, size_t n)
{
	size_t k = n > 32 ? 32 : n;
	for (size_t i = 0; i < k; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	if (n > k) {
		memcpy(buf + k, "...", 4);
	} else {
		buf[k] = '\0';
	}
	return buf;
}

static inline int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int pool_add(nt_rules *R, const void *p, size_t n, uint32_t *off)
{
	if (nt_grow((void **)&R->pool, &R->cap_pool, R->npool + n, 1))
		return -1;
	memcpy(R->pool + R->npool, p, n);
	*off = (uint32_t)R->npool; /* < CAT_MAX_TEXT * 2: the text bound keeps it small */
	R->npool += n;
	return 0;
}

/* Compiles an unescaped pattern (bytes lit[0..n), with wild[i] = 1 for a '?' and
 * star[i] = 1 for a '*') into rule r's segments. */
static int compile_pattern(nt_rules *R, cat_rule *r, const uint8_t *lit, const uint8_t *wild,
			   const uint8_t *star, size_t n)
{
	r->seg0 = (uint32_t)R->nsegs;
	r->nseg = 0;
	r->minlen = 0;
	r->has_star = r->lead_star = r->trail_star = 0;
	for (size_t i = 0; i < n; i++)
		r->has_star |= star[i];
	if (n) {
		r->lead_star = star[0];
		r->trail_star = star[n - 1];
	}
	size_t i = 0;
	while (i <= n) {
		size_t j = i;
		while (j < n && !star[j])
			j++;
		if (j > i || !r->has_star) { /* empty segments only in "*"-free patterns */
			cat_seg g;
			int any_wild = 0;
			for (size_t k = i; k < j; k++)
				any_wild |= wild[k];
			if (pool_add(R, lit + i, j - i, &g.off))
				return NT_ENOMEM;
			g.len = (uint32_t)(j - i);
			g.wild = CAT_NO_MASK;
			if (any_wild && pool_add(R, wild + i, j - i, &g.wild))
				return NT_ENOMEM;
			if (nt_grow((void **)&R->segs, &R->cap_segs, R->nsegs + 1, sizeof g))
				return NT_ENOMEM;
			R->segs[R->nsegs++] = g;
			r->nseg++;
			r->minlen += g.len;
		}
		i = j + 1;
	}
	return 0;
}

static int sub_name_char(unsigned char c, int first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '_')
		return 1;
	return !first && (c == '.' || c == '-' || c == '+' || c == '/');
}

/* Subsystem rules: checks the name s[0..n) and interns it in P->S; *label gets its index.
 * The characters are limited so that a name is safe as a folded frame ("[json]"), a
 * table cell and an SQL value without quoting. */
static int sub_label(cat_parse *P, const char *s, size_t n, uint32_t *label)
{
	char show[40];
	int ok = n >= 1 && n <= SUB_MAX_NAME;
	for (size_t k = 0; ok && k < n; k++)
		ok = sub_name_char((unsigned char)s[k], k == 0);
	if (!ok)
		return parse_fail(P, "bad subsystem name '%s' (1 to %u letters, digits, '_', '.', "
				  "'-', '+' or '/', not starting with a punctuation mark)",
				  show_token(show, s, n), SUB_MAX_NAME);
	if (n == 5 && memcmp(s, "other", 5) == 0) {
		*label = SUB_OTHER;
		return 0;
	}
	nt_subsystems *S = P->S;
	/* names are few (tens); the bound keeps this linear search from going quadratic */
	if (S->nnames >= SUB_MAX_NAMES)
		return parse_fail(P, "more than %u distinct subsystem names", SUB_MAX_NAMES);
	for (size_t k = 0; k < S->nnames; k++) {
		if (strlen(S->names[k]) == n && memcmp(S->names[k], s, n) == 0) {
			*label = (uint32_t)k;
			return 0;
		}
	}
	char *d = malloc(n + 1);
	if (!d || nt_grow((void **)&S->names, &S->cap_names, S->nnames + 1, sizeof *S->names)) {
		free(d);
		return nt_fail(P->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory for subsystem names");
	}
	memcpy(d, s, n);
	d[n] = '\0';
	S->names[S->nnames] = d;
	*label = (uint32_t)S->nnames++;
	return 0;
}

/* Parses one line (without its '\n'). Adds a rule, or nothing for blank and comment
 * lines. */
static int parse_line(cat_parse *P, const char *s, size_t n)
{
	char show[40];
	size_t i = 0;

	/* A NUL could never match a frame name (frame names are C strings) and would cut
	 * the messages short: reject it rather than silently keep a dead rule. */
	if (memchr(s, '\0', n))
		return parse_fail(P, "NUL byte in rule");
	while (i < n && is_blank(s[i]))
		i++;
	if (i == n || s[i] == '#')
		return 0;

	/* [outer] CATEGORY */
	size_t w0 = i;
	while (i < n && !is_blank(s[i]))
		i++;
	int outer = 0;
	if (i - w0 == 5 && memcmp(s + w0, "outer", 5) == 0) {
		outer = 1;
		while (i < n && is_blank(s[i]))
			i++;
		if (i == n || s[i] == '#')
			return parse_fail(P, "missing %s after 'outer'",
					  P->S ? "subsystem name" : "category");
		w0 = i;
		while (i < n && !is_blank(s[i]))
			i++;
	}
	char word[SUB_MAX_NAME + 1];
	int cat = -1;
	uint32_t label = 0;
	if (P->S) {
		int rc = sub_label(P, s + w0, i - w0, &label);
		if (rc)
			return rc;
		memcpy(word, s + w0, i - w0); /* checked: at most SUB_MAX_NAME bytes */
		word[i - w0] = '\0';
		cat = 0;
	} else if (i - w0 < sizeof word) {
		memcpy(word, s + w0, i - w0);
		word[i - w0] = '\0';
		cat = nt_category_parse(word);
	}
	if (cat < 0)
		return parse_fail(P, "unknown category '%s' (expected cpu, lock, io, sleep, wait, "
				  "gc, external or unknown)", show_token(show, s + w0, i - w0));

	/* PATTERN: up to the next unescaped blank */
	while (i < n && is_blank(s[i]))
		i++;
	if (i == n || s[i] == '#')
		return parse_fail(P, "missing pattern after %s '%s'",
				  P->S ? "subsystem" : "category", word);
	uint8_t lit[CAT_MAX_PATTERN], wild[CAT_MAX_PATTERN], star[CAT_MAX_PATTERN];
	size_t plen = 0;
	while (i < n && !is_blank(s[i])) {
		char c = s[i++];
		int is_wild = 0, is_star = 0;
		if (c == '\\') {
			if (i == n)
				return parse_fail(P, "pattern ends with an unfinished escape '\\'");
			c = s[i++];
			if (c != '\\' && c != '*' && c != '?' && c != '#' && c != ' ' && c != '\t')
				return parse_fail(P, "invalid escape '\\%s' in pattern (only \\\\, \\*, "
						  "\\?, \\#, '\\ ' and '\\<tab>')",
						  show_token(show, s + i - 1, 1));
		} else if (c == '*') {
			is_star = 1;
		} else if (c == '?') {
			is_wild = 1;
		}
		if (plen == CAT_MAX_PATTERN)
			return parse_fail(P, "pattern longer than %u bytes", CAT_MAX_PATTERN);
		lit[plen] = is_wild || is_star ? 0 : (uint8_t)c;
		wild[plen] = (uint8_t)is_wild;
		star[plen] = (uint8_t)is_star;
		plen++;
	}
	while (i < n && is_blank(s[i]))
		i++;
	if (i < n && s[i] != '#') {
		size_t g0 = i;
		while (i < n && !is_blank(s[i]))
			i++;
		return parse_fail(P, "unexpected '%s' after the pattern (escape blanks in "
				  "patterns as '\\ ')", show_token(show, s + g0, i - g0));
	}

	nt_rules *R = P->R;
	if (nt_grow((void **)&R->rules, &R->cap_rules, R->nrules + 1, sizeof *R->rules))
		return nt_fail(P->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory for rule %zu",
			       R->nrules + 1);
	cat_rule *r = &R->rules[R->nrules];
	memset(r, 0, sizeof *r);
	r->cat = (uint8_t)cat;
	r->outer = (uint8_t)outer;
	r->line = P->line;
	r->label = label;
	if (compile_pattern(R, r, lit, wild, star, plen))
		return nt_fail(P->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory for rule %zu",
			       R->nrules + 1);
	R->nrules++;
	R->nouter += (size_t)outer;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Public entry points
 * ------------------------------------------------------------------------------------- */

void nt_rules_free(nt_rules *rules)
{
	if (!rules)
		return;
	free(rules->rules);
	free(rules->segs);
	free(rules->pool);
	for (int k = 0; k < CAT_NTABLES; k++)
		free(rules->tab[k].ents);
	free(rules->always);
	free(rules);
}

/* Compiles rules text; with S, a subsystem's rules (names go to S). */
static int rules_parse(nt_rules **out, const char *text, size_t len, const char *name,
		       nt_subsystems *S, nt_error *err)
{
	nt_rules *R = NULL;
	int rc;

	*out = NULL;
	if (!text && len)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_rules_parse: NULL text");
	if (len > CAT_MAX_TEXT)
		return nt_fail(err, NT_ELIMIT, NT_NO_OFFSET, "%s: rules text is %zu bytes, limit %u",
			       name ? name : "rules", len, CAT_MAX_TEXT);
	R = calloc(1, sizeof *R);
	if (!R)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory for rules");

	cat_parse P = { R, S, name, err, 0, 0 };
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		P.line++;
		P.line_off = pos;
		rc = parse_line(&P, text + pos, end - pos);
		if (rc)
			goto fail;
		pos = nl ? end + 1 : len;
	}
	rc = build_prefilter(R);
	if (rc) {
		nt_fail(err, rc, NT_NO_OFFSET, "out of memory for the rules prefilter");
		goto fail;
	}
	*out = R;
	return 0;
fail:
	nt_rules_free(R);
	return rc;
}

int nt_rules_parse(nt_rules **out, const char *text, size_t len, const char *name,
		   nt_error *err)
{
	nt_error_clear(err);
	if (!out)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_rules_parse: NULL output pointer");
	return rules_parse(out, text, len, name, NULL, err);
}

/* Reads a rules file whole (at most CAT_MAX_TEXT + 1 bytes: enough for the parser to
 * say "too big"). *buf is malloc'd (NULL when empty). */
static int rules_read(const char *path, const char *what, char **buf, size_t *len,
		      nt_error *err)
{
	FILE *f = NULL;
	size_t cap = 0;
	int rc = 0;

	*buf = NULL;
	*len = 0;
	f = fopen(path, "rb");
	if (!f)
		return nt_fail_errno(err, errno, "cannot open %s", path);
	while (*len <= CAT_MAX_TEXT) {
		if (*len == cap && nt_grow((void **)buf, &cap, *len + 4096, 1)) {
			rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory reading %s file '%s'",
				     what, path);
			break;
		}
		size_t r = fread(*buf + *len, 1, cap - *len, f);
		*len += r;
		if (r == 0)
			break;
	}
	if (!rc && ferror(f))
		rc = nt_fail_errno(err, errno ? errno : EIO, "cannot read %s", path);
	fclose(f);
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

/* The checks and the read both nt_rules_load entry points start with. */
static int rules_load_text(nt_rules **out, const char *path, char **buf, size_t *len,
			   nt_error *err)
{
	nt_error_clear(err);
	*buf = NULL;
	*len = 0;
	if (!out)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_rules_load: NULL output pointer");
	*out = NULL;
	if (!path)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_rules_load: NULL path");
	return rules_read(path, "rules", buf, len, err);
}

int nt_rules_load(nt_rules **out, const char *path, nt_error *err)
{
	char *buf;
	size_t len;
	int rc = rules_load_text(out, path, &buf, &len, err);
	if (rc == 0)
		rc = nt_rules_parse(out, buf, len, path, err);
	free(buf);
	return rc;
}

/* The text of data/rules/default.rules, generated by the build (Makefile.am). */
static const char cat_default_text[] =
#include "libtrace/default-rules.h"
	;

const char *nt_rules_default_source(size_t *len)
{
	if (len)
		*len = sizeof cat_default_text - 1;
	return cat_default_text;
}

int nt_rules_load_with_defaults(nt_rules **out, const char *path, nt_error *err)
{
	char *buf;
	size_t len;
	int rc = rules_load_text(out, path, &buf, &len, err);
	if (rc)
		return rc;
	/* the file first (its line numbers stay those of its errors), a line break in case
	 * its last line has none, then the defaults */
	size_t dl = sizeof cat_default_text - 1;
	char *all = malloc(len + 1 + dl);
	if (!all) {
		free(buf);
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory reading rules file '%s'",
			       path);
	}
	memcpy(all, buf, len);
	all[len] = '\n';
	memcpy(all + len + 1, cat_default_text, dl);
	free(buf);
	rc = nt_rules_parse(out, all, len + 1 + dl, path, err);
	free(all);
	return rc;
}

int nt_rules_default(nt_rules **out, nt_error *err)
{
	nt_error_clear(err);
	return nt_rules_parse(out, cat_default_text, sizeof cat_default_text - 1,
			      "default.rules", err);
}

/* ---------------------------------------------------------------------------------------
 * Subsystems
 * ------------------------------------------------------------------------------------- */

void nt_subsystems_free(nt_subsystems *S)
{
	if (!S)
		return;
	nt_rules_free(S->rules);
	for (size_t i = 0; i < S->nnames; i++)
		free(S->names[i]);
	free(S->names);
	free(S);
}

int nt_subsystems_parse(nt_subsystems **out, const char *text, size_t len, const char *name,
			nt_error *err)
{
	nt_error_clear(err);
	if (!out)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "nt_subsystems_parse: NULL output pointer");
	*out = NULL;
	nt_subsystems *S = calloc(1, sizeof *S);
	if (!S)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory for subsystem rules");
	int rc = rules_parse(&S->rules, text, len, name, S, err);
	if (rc) {
		nt_subsystems_free(S);
		return rc;
	}
	*out = S;
	return 0;
}

int nt_subsystems_load(nt_subsystems **out, const char *path, nt_error *err)
{
	nt_error_clear(err);
	char *buf = NULL;
	size_t len = 0;

	if (!out)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "nt_subsystems_load: NULL output pointer");
	*out = NULL;
	if (!path)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_subsystems_load: NULL path");
	int rc = rules_read(path, "subsystem rules", &buf, &len, err);
	if (rc == 0)
		rc = nt_subsystems_parse(out, buf, len, path, err);
	free(buf);
	return rc;
}

/* The text of data/rules/subsystems.rules, generated by the build (Makefile.am). Tools
 * that compile the library sources on their own (bench/run.sh) may not generate it yet: they
 * then get no built-in subsystem rules rather than a build failure. */
#if defined(__has_include)
#if __has_include("libtrace/subsystems-rules.h")
#define SUB_HAVE_DEFAULT 1
static const char sub_default_text[] =
#include "libtrace/subsystems-rules.h"
	;
#endif
#endif

static const char *sub_default(size_t *len)
{
#ifdef SUB_HAVE_DEFAULT
	if (len)
		*len = sizeof sub_default_text - 1;
	return sub_default_text;
#else
	if (len)
		*len = 0;
	return NULL;
#endif
}

int nt_subsystems_default(nt_subsystems **out, nt_error *err)
{
	nt_error_clear(err);
	size_t len;
	const char *text = sub_default(&len);
	if (!text) {
		if (out)
			*out = NULL;
		return nt_fail(err, NT_EUNSUPPORTED, NT_NO_OFFSET,
			       "built without the default subsystem rules");
	}
	return nt_subsystems_parse(out, text, len, "subsystems.rules", err);
}

size_t nt_subsystems_count(const nt_subsystems *S)
{
	return S ? S->nnames : 0;
}

const char *nt_subsystems_name(const nt_subsystems *S, int i)
{
	if (!S || i < 0 || (size_t)i >= S->nnames)
		return NULL;
	return S->names[i];
}

int nt_subsystems_match_memo(const nt_subsystems *S, nt_rules_memo *memo,
			     const char *const *frames, size_t depth, int32_t *frame_subsystems)
{
	if (frame_subsystems)
		for (size_t i = 0; i < depth; i++)
			frame_subsystems[i] = -1;
	if (!S || (!frames && depth))
		return -1;
	const nt_rules *R = S->rules;
	uint32_t outer = CAT_NONE, plain = CAT_NONE;
	for (size_t i = 0; i < depth; i++) {
		const char *s = frames[i];
		if (!s) /* a frame without a name matches nothing */
			continue;
		/* per-frame subsystems need every frame's plain match, not only the first */
		uint32_t bo, bp;
		frame_best_memo(R, memo, s, plain == CAT_NONE || frame_subsystems, &bo, &bp);
		if (bo != CAT_NONE)
			outer = bo; /* keep going: the root-most one wins */
		if (plain == CAT_NONE)
			plain = bp;
		if (frame_subsystems) {
			uint32_t own = bo != CAT_NONE ? bo : bp;
			if (own != CAT_NONE && R->rules[own].label != SUB_OTHER)
				frame_subsystems[i] = (int32_t)R->rules[own].label;
		} else if (plain != CAT_NONE && R->nouter == 0) {
			break; /* nothing can override the leaf-most match */
		}
	}
	uint32_t ri = outer != CAT_NONE ? outer : plain;
	if (ri == CAT_NONE || R->rules[ri].label == SUB_OTHER)
		return -1;
	return (int)R->rules[ri].label;
}

int nt_subsystems_match(const nt_subsystems *S, const char *const *frames, size_t depth,
			int32_t *frame_subsystems)
{
	return nt_subsystems_match_memo(S, NULL, frames, depth, frame_subsystems);
}
