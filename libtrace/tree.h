/* SPDX-License-Identifier: MIT */
/* tree.h - the call tree's model (struct nt_tree and its nodes, names, subsystems and
 * sessions), private to the builder (tree.c) and the text printer (tree-print.c). */
#ifndef NT_TREE_H
#define NT_TREE_H

#include "internal.h"

typedef struct tname {
	nt_tree_func f;       /* flat statistics; f.name is the interned text */
	uint64_t mark;        /* last group (1-based) whose total was added to f */
	int is_func;          /* used as a frame (thread roots are not functions) */
} tname;

typedef struct tnode {
	nt_tree_node pub;     /* what callers see; must stay first (see node_of) */
	uint32_t parent;      /* node index, NO_NODE for the root */
	uint32_t name;        /* index into t->names */
	uint32_t nchild;      /* children counted while building */
} tnode;

#define NO_NODE UINT32_MAX

/* Time per subsystem (nt_tree_subsystem) and the mark that counts a sample once. */
typedef struct tsub {
	nt_tree_subsystem pub;
	uint64_t mark;        /* last group (1-based) whose total was added */
} tsub;

/* What the header shows about one session (copied, the profile may go away). */
typedef struct tsession {
	char *name;
	uint64_t samples;     /* ThreadSample events read */
	int has_samples;
	double first_s, last_s; /* first/last sample, seconds since the session start */
	double weight_ns;     /* one sample's weight (0: compat weights) */
	uint64_t declared_ns; /* the header's interval */
	uint64_t pauses;      /* GC pauses, their time, and the gc time charged for them */
	uint64_t pause_ns;
	double gc_charged_ns;
} tsession;

struct nt_tree {
	nt_tree_opts o;
	nt_profile *prof;     /* while building: o.lines, thread labels */
	char *linebuf;        /* o.lines: "NAME at FILE:LINE" */
	size_t linecap;
	nt_strpool strs;      /* names (interned: id = index in names) and subsystem names */

	tname *names;
	size_t nnames, namecap;

	tnode *nodes;         /* [0] is the root */
	size_t nnodes, nodecap;
	uint32_t *node_ht;    /* node index + 1, keyed by (parent, name) */
	size_t node_htcap;

	const nt_tree_node **kids; /* all children arrays, one slice per node */
	const nt_tree_func **by_self, **by_total; /* flat orders */
	size_t nfuncs;

	tsession *sess;
	size_t nsess;

	uint32_t *path;       /* scratch: name indices of the current group */
	size_t pathcap;
	uint64_t groups;      /* groups seen, the mark generation */
	int rc;               /* first failure inside the foreach callback */

	/* time histograms (o.when_buckets): wb display buckets per node, name, subsystem */
	uint32_t wb;          /* o.when_buckets, 0 = none */
	nt_tree_when_info winfo;
	uint32_t wfirst;      /* first fine bucket of display bucket 0 */
	uint32_t wfine;       /* fine buckets the display buckets cover (winfo.fine) */
	uint32_t *wn;         /* fine buckets in each display bucket (0 when wfine < wb) */
	uint64_t *nwhen;      /* node i: nwhen[i * wb ..] */
	size_t nwhencap;      /* in elements */
	uint64_t *fwhen;      /* name i: fwhen[i * wb ..] */
	size_t fwhencap;
	uint32_t *gwb;        /* scratch: the current group's display buckets... */
	uint64_t *gwc;        /* ... and their samples */
	size_t ngw, gwcap, gwccap;

	/* subsystems (when the profile classifies them); entry 0 is "other" */
	tsub *subs;
	size_t nsubs;
	const nt_tree_subsystem **sub_by_self, **sub_by_total; /* entries with samples */
	size_t nsub_shown;
	uint64_t *swhen;      /* subsystem i: swhen[i * wb ..] */
};

#endif
