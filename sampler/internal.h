/* SPDX-License-Identifier: MIT */
/* internal.h - definitions shared between the sampler's modules (not installed):
 * the per-thread slots and their sample buffers, the module snapshot the unwinder reads,
 * the unwinder, the schedule, the session writer, and the runtime that ties them.
 *
 * Who touches what (the rules that make the signal handler safe):
 *  - the handler (signal.c) runs on a sampled thread; it reads the runtime's arena and
 *    module snapshot through atomic pointers, writes only its own slot's ring, drop
 *    counters and CFI cache, and calls only async-signal-safe code (signal.c, unwind.c);
 *  - everything else runs on the sampler thread or in API calls, serialised by rt.mu;
 *  - memory the handler may reach (arena, rings, caches, module snapshots) is never freed
 *    while the process runs: slots and their buffers are reused, old snapshots are kept. */
#ifndef NTS_INTERNAL_H
#define NTS_INTERNAL_H

#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ntsampler.h"

#define NTS_DEFAULT_DEPTH 128u
#define NTS_MAX_DEPTH 1024u
#define NTS_DEFAULT_BUFFER 8u
#define NTS_MAX_BUFFER 1024u
#define NTS_DEFAULT_THREADS 4096u
#define NTS_MAX_THREADS 65536u
#define NTS_DEFAULT_FLUSH_MS 250u
#define NTS_BACKLOG 256u /* rounds remembered for a thread whose signal is pending */

/* ThreadSample v1 State values (doc/format/sampler-events.md). */
enum nts_state {
	NTS_ST_UNKNOWN = 0,
	NTS_ST_RUNNING = 1,
	NTS_ST_BLOCKED = 2, /* sleeping or blocked (interruptible wait) */
	NTS_ST_DISK = 3,    /* uninterruptible wait */
	NTS_ST_STOPPED = 4,
};

/* ---------------------------------------------------------------------------------------
 * Module snapshot (modules.c builds it, unwind.c reads it in the handler)
 * ------------------------------------------------------------------------------------- */

/* One executable PT_LOAD segment of a loaded object. Every read of its call-frame
 * information stays in [cfi_lo, cfi_hi): the readable PT_LOAD segment that holds its
 * .eh_frame_hdr (GNU linkers put .eh_frame in the same one); a table or an entry that
 * points outside is not used. */
typedef struct nts_modseg {
	uint64_t lo, hi;         /* [lo, hi) in memory */
	const uint8_t *eh_hdr;   /* its object's .eh_frame_hdr (in memory), NULL if unusable */
	const uint8_t *table;    /* the hdr's sorted (initial_loc, fde) table: sdata4 pairs */
	uint32_t fde_count;
	uint32_t module;         /* index in nts_modlist */
	uint64_t cfi_lo, cfi_hi; /* the window of CFI reads (0, 0: none) */
} nts_modseg;

/* Checks the .eh_frame_hdr at hdr (LSB 3.0: version 1, the encodings of eh_frame_ptr,
 * fde_count and the table) against the window [lo, hi) it must lie in and fills s's
 * eh_hdr, table, fde_count and window; when it is not the layout every GNU linker writes
 * (fde_count udata4, table datarel|sdata4) or does not fit, s gets no table. Reads only
 * inside [lo, hi). */
void nts_eh_hdr_parse(const uint8_t *hdr, uint64_t lo, uint64_t hi, nts_modseg *s);

/* Read-only once published; sorted by lo, non-overlapping. */
typedef struct nts_modsnap {
	uint64_t gen;            /* changes whenever the set of objects changes */
	size_t nseg;
	nts_modseg seg[];
} nts_modsnap;

/* What ModuleMap events say about one segment (sampler thread only). */
typedef struct nts_module {
	uint64_t base, size, file_offset;
	char *path;              /* malloc'd */
	char build_id[65];       /* lowercase hex, "" if none */
} nts_module;

typedef struct nts_modlist {
	nts_module *m;
	size_t n, cap;
	unsigned long long adds, subs; /* dl_iterate_phdr counters when built */
} nts_modlist;

/* Rebuilds the list and a new snapshot when objects were loaded or unloaded since *ml was
 * built (cheap check otherwise). Returns 1 when it changed (*snap_out then gets a new
 * snapshot, malloc'd, which the caller publishes and keeps), 0 if not, < 0 out of memory. */
int nts_modules_refresh(nts_modlist *ml, nts_modsnap **snap_out, uint64_t gen);
void nts_modlist_free(nts_modlist *ml);

/* ---------------------------------------------------------------------------------------
 * Unwinder (unwind.c; async-signal-safe)
 * ------------------------------------------------------------------------------------- */

#define NTS_CFI_CACHE 64u /* direct-mapped entries per thread */

/* The unwind rule of one code address, as found in its FDE. */
typedef struct nts_cfi_rule {
	uint64_t pc;       /* lookup address (0: empty entry) */
	int32_t cfa_off;   /* CFA = reg + cfa_off */
	int32_t ra_off;    /* return address at CFA + ra_off */
	int32_t fp_off;    /* caller's RBP at CFA + fp_off; NTS_FP_SAME when RBP is unchanged */
	uint8_t kind;      /* enum nts_rule_kind */
} nts_cfi_rule;

#define NTS_FP_SAME INT32_MIN

enum nts_rule_kind {
	NTS_RULE_NONE = 0,   /* no FDE or unsupported CFI: fall back to frame pointers */
	NTS_RULE_RSP = 1,    /* CFA = RSP + off */
	NTS_RULE_RBP = 2,    /* CFA = RBP + off */
	NTS_RULE_END = 3,    /* return address undefined: outermost frame */
};

typedef struct nts_cfi_cache {
	uint64_t gen;      /* module snapshot generation the entries belong to */
	nts_cfi_rule e[NTS_CFI_CACHE];
} nts_cfi_cache;

typedef struct nts_regs {
	uint64_t pc, sp, fp;
} nts_regs;

/* How a walk ended (statistics of unwind tests and the fuzz target; the handler ignores
 * it). */
enum nts_unwind_end {
	NTS_END_MAX = 0,     /* max frames stored */
	NTS_END_OUTER = 1,   /* the CFI says outermost (return address undefined) */
	NTS_END_STOP = 2,    /* nothing could continue (no rule, unreadable stack, bad chain) */
};

/* Walks the stack from regs (pc = interrupted instruction) and stores up to max addresses,
 * leaf first: ips[0] = pc, then return addresses. Stack reads stay in [regs.sp, stack_hi);
 * stack_hi == 0 means unknown: each new page is then probed before it is read. Code and
 * .eh_frame are read only inside the objects of snap. cache may be NULL. Returns the
 * number of addresses stored (>= 1 when max >= 1). */
uint32_t nts_unwind(const nts_modsnap *snap, const nts_regs *regs, uint64_t stack_hi,
		    uint64_t *ips, uint32_t max, nts_cfi_cache *cache);
/* The same, saying how the walk ended in *end (enum nts_unwind_end). */
uint32_t nts_unwind_ex(const nts_modsnap *snap, const nts_regs *regs, uint64_t stack_hi,
		       uint64_t *ips, uint32_t max, nts_cfi_cache *cache, int *end);

/* The same on a copy of the stack: img holds len bytes from regs->sp (a perf_events
 * PERF_SAMPLE_STACK_USER dump); every stack read stays inside it. */
uint32_t nts_unwind_copy(const nts_modsnap *snap, const nts_regs *regs, const uint8_t *img,
			 size_t len, uint64_t *ips, uint32_t max, nts_cfi_cache *cache, int *end);

/* The executable segment holding pc, or NULL (binary search; async-signal-safe). */
const nts_modseg *nts_segment(const nts_modsnap *snap, uint64_t pc);

/* The CFI rule of one address (the interrupted pc, or a return address - 1); 0 when found,
 * -1 when there is none or it uses what the unwinder does not support (out->kind NONE). */
int nts_cfi_lookup(const nts_modsnap *snap, uint64_t pc, nts_cfi_rule *out);

/* 1 when [addr, addr+len) is readable memory (one syscall per page; async-signal-safe). */
int nts_probe_readable(uint64_t addr, size_t len);

/* ---------------------------------------------------------------------------------------
 * Per-thread slots and sample buffers
 * ------------------------------------------------------------------------------------- */

/* One captured sample in a ring (followed by its ips). */
typedef struct nts_record {
	uint64_t ts_ns;      /* CLOCK_MONOTONIC at capture */
	uint64_t req_ns;     /* time of the round that asked for it */
	uint64_t req_round;  /* that round's number (its sessions' scheduled times) */
	uint64_t req_seq;    /* the request's sequence number in its slot */
	uint64_t cpu_ns;     /* thread CPU time at capture */
	uint64_t cpu_end_ns; /* thread CPU time when the handler finished */
	uint64_t mask;       /* sessions the sample is for */
	uint64_t sp;         /* interrupted stack pointer */
	uint32_t tid;
	uint32_t state;      /* enum nts_state */
	uint32_t cpu;        /* processor, 0xFFFFFFFF if unknown */
	uint32_t depth;
	uint64_t ips[];
} nts_record;

enum nts_slot_state { NTS_SLOT_FREE = 0, NTS_SLOT_ACTIVE = 1 };

/* One sampled thread. The handler owns ring writes (head), cache and the drop counters'
 * increments; the sampler thread owns everything else. */
typedef struct nts_slot {
	_Atomic uint32_t state;      /* enum nts_slot_state */
	_Atomic int32_t tid;
	_Atomic uint64_t req_mask;   /* request: set before the signal, taken by the handler */
	_Atomic uint32_t pending;    /* 1 from the signal until the handler is done */
	_Atomic uint32_t head;       /* records written (handler) */
	_Atomic uint32_t tail;       /* records read (drain) */
	_Atomic uint64_t drop_count; /* samples the handler dropped (full ring, recursion) */
	_Atomic uint64_t drop_mask;  /* sessions those drops were meant for (OR) */
	uint64_t req_ns, req_round, req_seq; /* the current request (written before req_mask) */
	uint64_t stack_lo, stack_hi; /* the mapping holding the thread's stack, 0 if unknown;
					written by the sampler only while no request is pending */
	uint8_t *recs;               /* ring of nrecs records of rec_size bytes */
	nts_cfi_cache *cache;
	/* sampler thread only */
	uint64_t seen_sweep;         /* last sweep that listed the thread */
	uint32_t drain_head;         /* head as read by the current drain */
	uint64_t req_sent_mask;      /* sessions of the last request sent */
	/* Rounds that found the request still pending: the thread has run no user code since
	 * (a signal is delivered on the way back to user mode), so the stack the handler will
	 * capture is the stack of those rounds too; they are written with it. */
	uint32_t nbacklog;
	uint64_t *backlog_round;     /* NTS_BACKLOG entries each (one allocation) */
	uint64_t *backlog_mask;
	uint64_t *backlog_seq;       /* the request each round waited for */
	uint64_t last_cpu;           /* CPU time after its last sample */
	nts_record *last;            /* copy of its last record (rec_size bytes) */
	int have_last;
	uint64_t named_mask;         /* sessions that have its ThreadName */
	uint64_t name_ts;            /* when comm was last read */
	char name[32];
	/* the perf_events backend (perf.c; sampler thread only) */
	int perf_state;              /* enum nts_perf_state */
	int perf_fd;
	uint8_t *perf_ring;          /* the mapped ring: a header page, then the data */
	size_t perf_ring_size;
	uint64_t perf_period;        /* the event's sample period (ns of the thread's CPU) */
	uint64_t perf_cpu;           /* its CPU time when its last perf sample was taken up */
	int last_perf;               /* the last record came from perf_events */
	int stat_fd1;                /* /proc/self/task/TID/stat, + 1 (0: not open) */
	int perf_sw;                 /* enum nts_perf_switch: its last switch record */
	uint64_t perf_sw_in;         /* switch-in records seen (UNKNOWN states reset nothing) */
	uint64_t idle_cpu, idle_sw_in; /* its CPU clock read while blocked, and perf_sw_in then */
	/* its CPU time from switch records (nts_perf_cpu): the clock read at cpu_est_wall,
	 * the time on a CPU summed since, the time of its last switch in (0: out) */
	uint64_t cpu_est_base, cpu_est_wall, cpu_est_run, cpu_est_in;
	int cpu_est_ok;
} nts_slot;

/* What a thread's last PERF_RECORD_SWITCH said (UNKNOWN: none yet, or records lost). */
enum nts_perf_switch { NTS_SW_UNKNOWN = 0, NTS_SW_IN = 1, NTS_SW_PREEMPTED = 2, NTS_SW_BLOCKED = 3 };

enum nts_perf_state { NTS_PERF_NONE = 0, NTS_PERF_OPEN = 1, NTS_PERF_FAILED = 2 };

/* ---------------------------------------------------------------------------------------
 * perf_events capture (perf.c; sampler thread only)
 * ------------------------------------------------------------------------------------- */

/* 0 when this process may sample its own threads with perf_events (an event opened and
 * its ring mapped); otherwise -errno, and why says what failed. */
int nts_perf_probe(char *why, size_t len);
/* Opens thread tid's event (period_ns of its CPU time between samples); cpu_now is its
 * CPU time now. 0, or -1 (perf_state FAILED: the thread is sampled with signals). */
int nts_perf_open(nts_slot *t, pid_t tid, uint64_t period_ns, uint64_t cpu_now);
void nts_perf_close(nts_slot *t);
/* A forked child's copy of a slot: closes the inherited descriptor. */
void nts_perf_forget(nts_slot *t);
void nts_perf_period(nts_slot *t, uint64_t period_ns);
/* 1 when the thread is runnable (running or waiting for a CPU: state R), 0 when not
 * (sleeping, disk wait, stopped), -1 when unknown (one pread of its stat file). */
int nts_perf_runnable(nts_slot *t, pid_t tid);
/* The thread's CPU time at now: from its switch records since its CPU clock was last read
 * (at most PERF_CPU_ANCHOR_NS ago), or the clock (one system call). Call after
 * nts_perf_take. */
uint64_t nts_perf_cpu(nts_slot *t, pid_t tid, uint64_t now);
/* Consumes the thread's ring; when it held a sample, fills r (time, processor, RUNNING;
 * not the CPU time, which the caller reads) and ips with its stack (unwound from the copy, at most max) and returns 1.
 * scratch (scratch_len >= 65536) holds the record; *lost counts PERF_RECORD_LOST. */
int nts_perf_take(nts_slot *t, nts_record *r, uint64_t *ips, uint32_t max,
		  nts_cfi_cache *cache, uint8_t *scratch, size_t scratch_len, uint64_t *lost);

/* ---------------------------------------------------------------------------------------
 * Schedules (schedule.c)
 * ------------------------------------------------------------------------------------- */

typedef struct nts_rng {
	uint64_t s[4];
} nts_rng;

void nts_rng_seed(nts_rng *r, uint64_t seed);
uint64_t nts_rng_next(nts_rng *r);
/* Uniform in [0, 1). */
double nts_rng_unit(nts_rng *r);
/* Exponential with the given mean, rounded to ns, at least 1. */
uint64_t nts_rng_exp(nts_rng *r, uint64_t mean_ns);

#define NTS_CATCHUP_MAX 8 /* intervals behind before the schedule is reset */

typedef struct nts_sched {
	int kind;             /* enum nts_schedule */
	uint64_t interval_ns;
	uint64_t next_ns;     /* ideal time of the next sample (cumulative schedule) */
	nts_rng rng;
	uint64_t late, missed, taken;
	uint64_t max_behind_ns; /* largest lateness seen since the last report */
} nts_sched;

/* Sets the first deadline: start + a random phase (fixed) or an exponential gap. */
void nts_sched_init(nts_sched *s, int kind, uint64_t interval_ns, uint64_t seed,
		    uint64_t start_ns);
/* Called when a round is taken for the session at time now (>= next_ns - slack): counts
 * lateness, advances the schedule; if more than NTS_CATCHUP_MAX intervals behind, resets
 * it to now (counting the skipped samples as missed). Returns how far behind it was. */
uint64_t nts_sched_advance(nts_sched *s, uint64_t now);

/* ---------------------------------------------------------------------------------------
 * Sessions and their output (drain.c)
 * ------------------------------------------------------------------------------------- */

struct nt_writer;

struct nts_session {
	int index;              /* bit in the session mask */
	uint64_t uid;           /* unique id (samplepoint threads notice a reused index) */
	int fd;                 /* output file */
	int own_fd;             /* 1 when the session opened it */
	pid_t owner_pid;        /* process that opened it (a forked child must not write) */
	struct nt_writer *w;
	uint32_t meta_sample, meta_module, meta_thread, meta_settings, meta_stats;
	nts_sched sched;
	uint64_t seed;
	int mode;
	int backend;            /* enum nts_backend: signal or perf (signal mode) */
	uint32_t format_version; /* 5 or 6 */
	pid_t *threads;         /* sorted filter, NULL = all */
	size_t nthreads;
	uint64_t start_ns;      /* session start (sync_qpc) */
	uint64_t last_ts;       /* last event timestamp (non-decreasing per capture thread) */
	uint64_t flush_ns, next_flush_ns;
	uint64_t modules_written; /* modules of the list already written */
	uint64_t mod_gen;
	nts_stats st;
	nt_error err;           /* first write error; the session stops writing after it */
	int failed;
};

/* Opens the writer and writes the header, metadata, SessionSettings and ModuleMap events. */
int nts_out_open(struct nts_session *s, const nts_modlist *ml, uint64_t now, pid_t capture,
		 nt_error *err);
/* Writes ModuleMap events for modules the session has not written yet. */
void nts_out_modules(struct nts_session *s, const nts_modlist *ml, uint64_t now, pid_t capture);
/* Writes a ThreadName event. */
void nts_out_thread_name(struct nts_session *s, uint32_t tid, const char *name, uint64_t ts,
			 pid_t capture);
/* Writes one sample (stack leaf first) at time ts: the session's scheduled time of the
 * round that took it. */
void nts_out_sample(struct nts_session *s, const nts_record *r, uint64_t ts, const uint64_t *ips,
		    pid_t capture);
/* Writes SamplerStats and flushes the blocks to the file. */
void nts_out_flush(struct nts_session *s, uint64_t now, pid_t capture);
/* Writes the final SamplerStats and the end of the stream; closes what it opened. */
int nts_out_close(struct nts_session *s, uint64_t now, pid_t capture, nt_error *err);
/* Frees without writing (forked child). */
void nts_out_abandon(struct nts_session *s);

/* ---------------------------------------------------------------------------------------
 * Runtime (sampler.c) and the signal handler (signal.c)
 * ------------------------------------------------------------------------------------- */

/* What the handler reads: published once by nts_start() and kept for the process's life. */
typedef struct nts_shared {
	_Atomic int active;             /* 0: the handler ignores signals */
	_Atomic(nts_modsnap *) snap;
	/* dlclose (our interposer, interpose.c) counts unloads begun and ended; a snapshot is
	 * trusted only while no unload began after the maps it was built from were read
	 * (snap_gen: unload_end at that time). The walkers that use it are counted so an
	 * unload waits for them. See nts_snap_get(). */
	_Atomic uint64_t unload_begin, unload_end, snap_gen;
	_Atomic int snap_users;
	nts_slot *slots;
	uint32_t nslots;
	uint32_t max_depth;
	uint32_t nrecs;                 /* records per ring */
	size_t rec_size;
	pid_t pid;                      /* getpid() (refreshed in a forked child) */
	int signo;
	/* samplepoint mode (samplepoint.c reads, the runtime writes): a generation bumped
	 * whenever the sessions change (from 1: a new thread, at 0, syncs first), and the
	 * check period, a quarter of the shortest interval open (0: nothing to do) */
	_Atomic uint64_t sp_gen, sp_check_ns;
} nts_shared;

extern nts_shared nts_g;

/* The module snapshot for one walk, or NULL while an object is being (or has been, since
 * the snapshot) unloaded: the walk then uses frame pointers only, reading nothing but the
 * stack, since a stale snapshot may point into unmapped memory. Async-signal-safe.
 * Every non-NULL result is given back with nts_snap_put(). */
static inline const nts_modsnap *nts_snap_get(void)
{
	atomic_fetch_add(&nts_g.snap_users, 1);
	if (atomic_load(&nts_g.unload_begin) != atomic_load(&nts_g.snap_gen)) {
		atomic_fetch_sub(&nts_g.snap_users, 1);
		return NULL;
	}
	const nts_modsnap *snap = atomic_load(&nts_g.snap);
	if (!snap)
		atomic_fetch_sub(&nts_g.snap_users, 1);
	return snap;
}

static inline void nts_snap_put(const nts_modsnap *snap)
{
	if (snap)
		atomic_fetch_sub(&nts_g.snap_users, 1);
}

/* The handler (signal.c). */
void nts_signal_handler(int sig, siginfo_t *si, void *uc);
/* Per-thread recursion guard: non-zero while the thread runs sampler code that the handler
 * must not interrupt (samplepoint slow path, API calls). */
extern __thread int nts_guard __attribute__((tls_model("initial-exec")));
/* The calling thread's TID as the handler last read it (0: not yet); reset in a forked
 * child, where the forking thread has a new TID. Saves a system call per sample. */
extern __thread pid_t nts_tid_cache __attribute__((tls_model("initial-exec")));

/* Monotonic and thread CPU clocks, in ns (async-signal-safe). */
uint64_t nts_now(void);
uint64_t nts_thread_cpu(void);
/* CPU time of another thread of this process (0 on failure). */
uint64_t nts_tid_cpu(pid_t tid);

#endif
