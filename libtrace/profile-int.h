/* SPDX-License-Identifier: MIT */
/* profile-int.h - what the profile's files share: struct nt_profile and its sessions,
 * threads, stacks and groups, and the functions one profile file calls in another.
 * Internal: nothing here is public API.
 *
 * The profile is three files: profile.c (creating it, interning stacks and groups, reading
 * traces: the per-event path), profile-when.c (when each group's samples happened:
 * opts.when's time histograms), profile-finish.c (nt_profile_finish: names, categories,
 * coverage, the threads' totals; then the getters and nt_profile_foreach). */
#ifndef NT_PROFILE_INT_H
#define NT_PROFILE_INT_H

#include "internal.h"
#include "pdb.h"

typedef struct pstack {
	uint32_t session;
	uint32_t depth;
	size_t off;          /* into p->ips */
	uint64_t hash;
	int rule_cat;        /* category from frame rules (after finish), -1 none */
	size_t names_off;    /* into p->names (after finish) */
	uint32_t nnames;     /* its frames there: depth, more where native IPs expand into
				inlined functions (after finish) */
	int sub;             /* subsystem (after finish, opts.subsystems), -1 none */
	uint64_t pid;        /* Universal sessions: the process whose addresses these are
				(0 otherwise); part of the stack's identity */
	int collapsed;       /* opts.collapse_unresolved dropped frames: its addresses are
				p->cips[cips_off .. + ncips), one per remaining frame's IP */
	size_t cips_off;
	uint32_t ncips;
} pstack;

typedef struct group { /* 48 bytes: the per-sample lookup reads one, mostly from memory */
	uint32_t session;
	uint32_t stack;      /* index into p->stacks */
	uint64_t thread_id;
	uint64_t samples;
	double weight;       /* compat weight in ns (NONE: set when finishing) */
	double extra_ns;     /* NONE: time charged without a sample (GC pauses), ns */
	uint32_t when_last;  /* opts.when: index + 1 into went of its last sample's entry */
	uint8_t bcat;        /* bracket category (NT_CAT_*) or 0xFF none */
	uint8_t stype;       /* sample type / TraceEvent interval kind (low 4 bits) and the
				thread state of ThreadSample v1 (high 4 bits: STATE_*) */
	uint8_t own_weight;  /* weight given per sample (Universal cpu/cswitch): kept */
} group;

/* A group's key within its thread (profile.c group_key()): stack | bcat << 32 | stype << 40,
 * one comparison. */
typedef uint64_t gkey;

/* One slot of the group table (get_group): a group's key, so that a probe reads no group
 * (a lookup is then one cache miss, not two in a row). thread indexes p->th, which holds
 * the session and thread id. 16 bytes. */
typedef struct gslot {
	gkey key;
	uint32_t thread;
	uint32_t group;      /* index + 1 into p->groups; 0 marks an empty slot */
} gslot;

/* A thread's recent group in one stack class (pthread_state.gcache): its key and index. */
typedef struct gcent {
	gkey key;
	uint32_t group;      /* index + 1 into p->groups; 0 none */
} gcent;

/* One (group, fine time bucket) pair of the when histograms. */
typedef struct pwhen {
	uint64_t key;        /* group << 32 | bucket */
	uint64_t samples;
} pwhen;

typedef struct pthread_state {
	uint64_t tid;
	uint32_t session;
	int contention;      /* inside ContentionStart..Stop */
	int waiting;         /* inside WaitHandleWaitStart..Stop */
	/* pyroscope */
	int64_t last_ext, last_man;
	uint8_t part_pyro;   /* a partial's thread: its first interval was deferred to the merge
				(last_man: INT64_MIN until a Managed sample sets it) */
	uint64_t pyro_ts;    /* raw time of the thread's previous sample (samples_unordered) */
	/* TraceEvent */
	double te_last_block;  /* 0 uninit, >0 blocked since, <0 running since -t */
	double te_last_cpu;
	int64_t te_cpu_group, te_block_group; /* -1 none */
	uint64_t te_cpu_ts, te_block_ts;      /* raw time of those samples (for sample_fn) */
	int64_t te_cpu_ns, te_block_ns;       /* the same in ns since the session start */
	gcent gcache[4];     /* its latest group in a stack s, at s % 4 (key_group) */
	uint32_t next;       /* index + 1 into p->th of the thread whose event came after
				this thread's the last time, 0 none (get_thread) */
	/* the CPU clock of ThreadSample v1 (NONE mode) */
	int clk_seen;        /* clk_cpu and clk_ns hold its previous sample's clock */
	uint64_t clk_cpu;    /* CpuTimeNs of that sample */
	int64_t clk_ns;      /* its time, ns since the session start */
	double clk_carry;    /* CPU time used and not charged to a cpu sample yet (ns) */
	/* GC pauses (NONE mode) */
	int seen;            /* sampled at least once */
	int64_t last_ns;     /* time of its previous sample */
	int64_t last_stack;  /* stack of its previous selected sample, -1 none */
	uint8_t last_stype;
	size_t next_pause;   /* first pause of the session not yet considered for it */
	/* after finishing */
	char *name;          /* last ThreadName of the thread, or NULL */
	double oncpu_ns;     /* cpu + running time */
	double total_ns;     /* all its time */
	int keep;            /* selected by the name patterns (opts.thread_patterns) */
} pthread_state;

/* A chunk's partial profile (profile-chunks.c): what it keeps for the merge. */
typedef struct ntp_part ntp_part;

/* pthread_state.contention and .waiting of a partial's thread before the chunk says. */
#define NTP_UNKNOWN 2
/* A partial's bracket category that depends on what it does not know (a thread's
 * contention or wait at the chunk's start): NTP_DEFER | contention unknown (bit 0) |
 * in_gc (bit 1) | waiting (bits 2-3: 0, 1, NTP_UNKNOWN). Resolved at the merge. */
#define NTP_DEFER 0xC0u
#define NTP_DEFER_MASK 0xF0u

typedef struct psession {
	nt_session_info info;
	nt_trace_header header;     /* info.header, info.symbols, info.rate and info.pauses */
	nt_symbol_coverage symbols; /* point at these (set when the profile is finished: */
	nt_rate_info rate_info;     /* p->s no longer moves then) */
	nt_pauses_info pauses_info;
	char *name;
	nt_symtab *sym;
	nt_native *native;   /* native symbols from ModuleMap events (sym-native.c) */
	nt_mlines *mlines;   /* managed source lines (sym-managed.c) */
	nt_rate *rate;
	uint64_t pyro_per_tick; /* NT_COMPAT_PYROSCOPE: whole ns per tick (1e9 / frequency) */
	nt_field_ref state_ref, cpu_ref; /* a sample's State and CpuTimeNs (sample_state(),
					    sample_clock()) */
	nt_pauses *pauses;   /* the runtime's GC pauses (pause.c) */
	size_t npauses;      /* its pauses so far and whether a GC suspension is open, as of
				the last event given to it (the per-sample path reads these) */
	uint8_t in_gc;
	nt_gap *gaps;        /* copy of the rate gaps (owned) */
	nt_idmap tids;       /* thread id -> index into p->th */
	/* nt_event.stack_key -> interned stack: the key's low half indexes the cache, the high
	 * half (the reader's stack generation) invalidates it, so a sample whose stack was
	 * seen in the current region costs no hashing of its IPs */
	uint64_t key_gen;
	uint32_t *key_cache; /* slot -> stack index + 1 (0: not cached) */
	size_t key_cap;
	nt_universal *univ;  /* Universal.System/Events state (universal.c), NULL if none */
} psession;

struct nt_profile {
	nt_profile_opts o;
	int add_rest;        /* o.when, o.sequence or o.sample_fn: add_to() goes on */
	uint64_t *threads;   /* copy of the thread filter */
	nt_rules *own_rules;
	const nt_rules *rules;
	nt_rules_memo rules_memo, subs_memo; /* nt_profile_finish()'s (freed there, or by
						nt_profile_free() after a failure) */

	psession *s;
	size_t ns, scap;

	pstack *stacks;
	size_t nstacks, stackcap;
	uint64_t *ips;
	size_t nips, ipcap;
	uint32_t *stack_ht;   /* open addressing: index+1 */
	size_t stack_htcap;

	group *groups;
	size_t ngroups, groupcap;
	gslot *group_ht;      /* open addressing over groups by (thread, stack, bcat, stype) */
	size_t group_htcap;

	pthread_state *th;
	size_t nth, thcap;
	uint32_t last_th;     /* index + 1 of the thread of the previous get_thread(), 0 none */

	const char **names;   /* resolved frame names of all stacks (after finish) */
	size_t nnames, namescap;
	const nt_native_frame **natives; /* per names[] entry: its native frame or NULL */
	size_t nativescap;
	int finished;
	char *collapsed;      /* "[unresolved]" (opts.collapse_unresolved), a frame name */
	uint64_t *cips;       /* the addresses of the collapsed stacks (pstack.collapsed) */
	size_t ncips, cipscap;

	/* subsystems (opts.subsystems) */
	nt_subsystems *own_subs;
	const nt_subsystems *subs; /* NULL: not classifying */
	int32_t *frame_subs;  /* each frame's own subsystem, parallel to names (after finish) */

	/* when (opts.when): see "time histograms" below */
	pwhen *went;          /* (group, fine bucket) -> samples; sorted when finishing */
	size_t nwent, wentcap;
	uint32_t *when_ht;    /* open addressing over went: index + 1 */
	size_t when_htcap;
	int when_started;     /* the grid has an origin */
	int64_t when_origin;  /* ns of fine bucket 0's start */
	uint64_t when_width;  /* ns per fine bucket, a power of two */
	nt_when_bin *when_bins; /* after finish: went by group then bucket */
	size_t *when_off;     /* after finish: group i's bins are [when_off[i], when_off[i+1]) */
	nt_when_grid when_grid; /* after finish */

	nt_selcache *selc;    /* opts.select: each stack's selected frames (select.c) */
	nt_seqent *seq;       /* opts.sequence: every counted sample, in reading order */
	size_t nseq, seqcap;

	ntp_part *part;       /* a chunk's partial profile (profile-chunks.c), else NULL */
};

/* profile.c, for profile-chunks.c: the per-event machinery. */
static inline uint8_t ntp_bracket_defer(uint8_t in_gc, const pthread_state *t)
{
	return (uint8_t)(NTP_DEFER | (t->contention == NTP_UNKNOWN) | (in_gc ? 2u : 0u) |
			 ((unsigned)t->waiting << 2));
}
/* Sets session s's trace header, and what the per-sample path derives from it. */
void ntp_session_header(psession *s, const nt_trace_header *h);
pthread_state *ntp_get_thread(nt_profile *p, uint32_t si, uint64_t tid);
int64_t ntp_intern_stack(nt_profile *p, uint32_t si, uint64_t pid, const uint64_t *ips,
			 uint32_t n);
int64_t ntp_thread_group(nt_profile *p, pthread_state *t, uint32_t stack, uint8_t bcat,
			 uint8_t stype);
int ntp_read_events(nt_profile *p, psession *s, uint32_t si, nt_reader *r,
		    const nt_trace_header *h, nt_error *err);
int ntp_handle_other(nt_profile *p, psession *s, uint32_t si, const nt_event *ev, uint32_t ps,
		     nt_error *err);

/* profile-chunks.c */
/* The partial's side: a sample's rate input, a thread's first sample (NONE mode's GC
 * charges), an event to replay (0, or -1 when out of memory); what a partial cannot
 * take (sets the error, returns its code). */
int ntp_part_rate(nt_profile *p, const pthread_state *t, const nt_event *ev);
int ntp_part_first(nt_profile *p, psession *s, pthread_state *t, int64_t now);
int ntp_part_event(nt_profile *p, const nt_event *ev);
int ntp_part_abort(nt_profile *p, const char *what, nt_error *err);
/* NT_COMPAT_PYROSCOPE in a partial: a thread's first sample in the chunk (ts: whether it is
 * older than the thread's sample before the chunk), and its first Managed or External
 * sample, whose interval depends on the thread's state before the chunk: recorded for the
 * merge, the thread's state set as any start would leave it. 0, or -1 out of memory. */
int ntp_part_pyro_first(nt_profile *p, const pthread_state *t, uint64_t ts);
int ntp_part_pyro_defer(nt_profile *p, pthread_state *t, int64_t rel, int64_t gi,
			uint32_t type);
/* Whether p's options allow reading in chunks (opts.jobs >= 2 among them). */
int ntp_chunks_usable(const nt_profile *p);
/* Reads trace r into session si in chunks on two threads: 0 at the end, < 0 on failure
 * (as the single read would fail), or NTP_CHUNKS_NONE when the rest of r (from its start,
 * or from a chunk's end) is for the caller to read. */
#define NTP_CHUNKS_NONE 1
int ntp_read_chunks(nt_profile *p, psession *s, uint32_t si, nt_reader *r,
		    const nt_trace_header *h, nt_error *err);

/* Fails with NT_ENOMEM (no byte offset). */
#define NOMEM(p, err) nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory building the profile")


/* profile-when.c */
/* Counts a sample of group gi at ns t in the group's histogram. 0, or < 0 (memory). */
int ntp_when_add(nt_profile *p, int64_t gi, int64_t t);
/* Sorts the histograms into when_bins/when_off at finish. 0, or < 0 (memory). */
int ntp_when_finish(nt_profile *p);

#endif
