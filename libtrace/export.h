/* SPDX-License-Identifier: MIT */
/* export.h - what the exporters share (not installed): the stack sources behind nt_stacks
 * (export-stacks.c), a buffered output with XML/JSON escaping that always produces valid
 * UTF-8 (export-stacks.c), and the merged flame tree the SVG is drawn from (export-flame.c).
 * Each exporter reads its input only through nt_stacks_foreach(), so a profile and a
 * folded-stacks file export the same way. */
#ifndef NT_EXPORT_H
#define NT_EXPORT_H

#include "internal.h"

/* ------------------------------------------------------------------ stack sources */

/* One frame: bytes, not NUL-terminated (folded text is not split in place). The bytes
 * stay valid and unchanged until nt_stacks_free(), so consumers may keep the pointer. */
typedef struct nt_xframe {
	const char *s;
	size_t n;
} nt_xframe;

/* One weighted stack, as nt_fold_write() would print it (plus what fold drops). */
typedef struct nt_xstack {
	const nt_xframe *frames; /* root first; borrowed until the callback returns */
	size_t depth;            /* 0: empty stack (folded " 5"); a profile says "[empty stack]" */
	int has_thread;          /* thread_id and session are known (profile input) */
	uint32_t session;        /* index of the session in the profile */
	uint64_t thread_id;
	int category;            /* enum nt_category, or -1 when unknown (folded input) */
	uint64_t samples;        /* samples (profile; folded with unit samples: the count) */
	double value;            /* weight in the source's unit (nt_stacks_unit) */
	double weight_ns;        /* weight in ns; 0 when the source has no time (folded counts) */
	uint64_t offset;         /* folded: byte offset of the line; else NT_NO_OFFSET */
	const char *text;        /* folded: the stack's text (frames and ';'), else NULL */
	size_t text_n;
	/* profile: the group behind the stack, whose frames are frames[gfirst .. gfirst +
	 * group->depth) in reverse (nt_xstack_native()); NULL for folded input */
	const nt_sample_group *group;
	nt_profile *profile;
	size_t gfirst;
} nt_xstack;

/* The native frame behind frames[i] of a profile's stack (DWARF function, file, line),
 * or NULL: folded input, a managed or made frame (thread, category), or no symbols. */
const nt_native_frame *nt_xstack_native(const nt_xstack *st, size_t i);

typedef int (*nt_xstack_fn)(void *ctx, const nt_xstack *st);

/* Calls fn for every stack of s, in the source's order (profile: nt_profile_foreach order;
 * folded: line order). Stops when fn returns non-zero and returns that value (fn fills err
 * itself). A malformed folded line fails with NT_EFORMAT: "line N: why" at the line's
 * offset in its text (nt_stacks_error_input() names the text). */
int nt_stacks_foreach(nt_stacks *s, nt_xstack_fn fn, void *ctx, nt_error *err);
/* The previous stack a consumer saw, to find how many leading frames the next one shares
 * with it without comparing names (sorted folded files repeat most of each line). */
typedef struct nt_xprev {
	nt_xframe *f;            /* copies of the previous stack's frames */
	size_t n, cap;
	const char *text;        /* its text (folded input), else NULL */
	size_t text_n;
} nt_xprev;

/* Number of leading frames st shares with the stack remembered in pv (0 after a reset),
 * then remembers st. Folded stacks compare their texts once, 8 bytes at a time; others
 * compare frame by frame. Returns SIZE_MAX when out of memory. */
size_t nt_xprev_shared(nt_xprev *pv, const nt_xstack *st);
void nt_xprev_reset(nt_xprev *pv);
void nt_xprev_free(nt_xprev *pv);

/* enum nt_unit of nt_xstack.value. */
int nt_stacks_unit(const nt_stacks *s);
/* The source's name: first session's file (profile) or the folded input's name. */
const char *nt_stacks_name(const nt_stacks *s);
/* The profile behind s, or NULL for folded input. */
nt_profile *nt_stacks_profile(const nt_stacks *s);

/* Formats v with up to `decimals` decimals, trailing zeros dropped ("12", "0.5"). */
int nt_fmt_num(char *buf, size_t n, double v, int decimals);

/* ------------------------------------------------------------------ flame tree */

/* Stacks merged by call path, for two sides (0: the profile drawn, 1: the base of a
 * differential graph). Node 0 is the root; a node's parent always has a smaller index. */
typedef struct nt_fnode {
	uint32_t parent;      /* UINT32_MAX for the root */
	uint32_t depth;       /* 0 for the root */
	uint32_t nkids;       /* children, after nt_ftree_seal */
	uint32_t kids;        /* first child in the kid table, after nt_ftree_seal */
	double self[2];       /* weight of stacks ending here, per side */
	double total[2];      /* self plus the children's totals (after nt_ftree_seal) */
	const char *file;     /* side 0, profile input: the source file of the node's frames
				 (nt_xstack_native; the first seen), NULL none */
	uint32_t line_lo, line_hi; /* the range of its lines in that file */
} nt_fnode;

typedef struct nt_ftree nt_ftree;

nt_ftree *nt_ftree_new(void);
void nt_ftree_free(nt_ftree *t);
/* Adds every stack of s to side (0 or 1). Names are borrowed from s: keep s alive while
 * the tree is used. Fails with NT_ENOMEM, NT_ELIMIT (2^32-2 nodes) or the source's error. */
int nt_ftree_add(nt_ftree *t, int side, nt_stacks *s, nt_error *err);
/* Computes totals, sorts children by name (bytewise, as flamegraph.pl does) or, with
 * by_weight, heaviest first (side 0; ties by name), and the dominant category of each
 * node. Call once, after every nt_ftree_add. */
int nt_ftree_seal(nt_ftree *t, int by_weight, nt_error *err);
size_t nt_ftree_count(const nt_ftree *t);
const nt_fnode *nt_ftree_node(const nt_ftree *t, size_t i);
/* Children of node i, in the order of nt_ftree_seal: indexes into the node table. */
const uint32_t *nt_ftree_kids(const nt_ftree *t, size_t i);
/* Name of node i ("all" for the root). */
nt_xframe nt_ftree_name(const nt_ftree *t, size_t i);
/* Category with most side-0 weight through node i, or -1 when no stack had one. */
int nt_ftree_category(const nt_ftree *t, size_t i);
/* Side-0 weight through node i in category k (0 when the input has no categories). */
double nt_ftree_cat(const nt_ftree *t, size_t i, int k);
/* 1 when some stack of side 0 carried a category. */
int nt_ftree_has_categories(const nt_ftree *t);
/* Finds a child of node by name; returns its index or -1. */
long nt_ftree_child(const nt_ftree *t, size_t node, const char *name);

#endif
