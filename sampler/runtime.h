/* SPDX-License-Identifier: MIT */
/* runtime.h - the sampler runtime's state (not installed), shared by the files it is split
 * into: sampler.c (sessions, the sampler thread, rounds, draining, start and stop),
 * threads.c (the thread registry), env.c (the environment-driven start: LD_PRELOAD,
 * nettrace-record) and interpose.c (dlclose, exec and _exit interposers).
 * Everything here is serialised by nts_rt.mu except what is _Atomic. */
#ifndef NTS_RUNTIME_H
#define NTS_RUNTIME_H

#include "internal.h"

#include <dirent.h>
#include <time.h>


/* A session whose deadline is this close counts as due now (a later wake-up just for it
 * would cost more than sampling it 50 us early). */
#define DUE_SLACK_NS 50000u
/* A blocked thread that used at most this much CPU since its last sample is still
 * blocked (async-profiler's RUNNABLE_THRESHOLD_NS is 10 us; the handler itself, the
 * kernel's signal delivery and a restarted call cost a few us on a VM). */
#define IDLE_CPU_NS 30000u
/* How long nts_session_close() waits for handlers still running. */
#define CLOSE_WAIT_NS 50000000u
/* Thread names are re-read this often to catch renames. */
#define NAME_REFRESH_NS 1000000000u
/* Threads are listed at most this often (new threads wait that long for a sample). */
#define SWEEP_NS 5000000u
/* ... but listed in full only when their number changed, or at least this often. */
#define SWEEP_FULL_NS 100000000u
/* samplepoint mode: the control pipe is read at most this often (one system call), and a
 * SIGINT/SIGTERM that no samplepoint check takes up within SP_SIGNAL_GRACE_NS ends the
 * program without finalizing the file (the blocks written so far stay readable) */
#define SP_POLL_NS 20000000u
#define SP_SIGNAL_GRACE_NS 1000000000u
/* Loaded objects are checked for changes (dlopen) at most this often. */
#define MODULE_CHECK_NS 100000000u
/* nettrace-record's control pipe ("stop") is looked at this often. */
#define CONTROL_POLL_NS 20000000u

/* Samples are stamped with their session's scheduled time, not the time the round ran:
 * each session's timeline is then exactly its schedule (a late round, or a round that
 * caught up, does not distort the intervals the toolkit infers), and lateness is counted
 * in the session's statistics instead. Rounds older than the history keep their own time. */
#define NTS_ROUND_HIST 256u
typedef struct nts_round {
	uint64_t seq;
	uint64_t now;
	uint64_t ideal[NTS_MAX_SESSIONS];
} nts_round;

/* One sample to write in a drain: a handler's record, or a round that waited for it. */
typedef struct nts_item {
	uint64_t round, mask;
	nts_record *rec;
	uint32_t slot;
	int primary; /* the record's own request (updates the thread's last stack) */
} nts_item;

typedef struct nts_runtime {
	pthread_mutex_t mu;
	int started;
	int mode;
	nts_opts o;
	pthread_t thread;
	int have_thread;
	pid_t sampler_tid;
	_Atomic pid_t thread_tid; /* set by the new sampler thread */
	_Atomic int can_wake; /* the sampler thread may be woken (it was started) */
	_Atomic uint32_t wake_word; /* its futex (nts_rt_wake) */
	uint64_t control_poll_ns; /* when the control pipe is looked at next */
	int stop_req;
	struct nts_session *sess[NTS_MAX_SESSIONS];
	uint64_t live_mask;   /* sessions that accept records */
	uint64_t sched_mask;  /* sessions that are scheduled (live and not closing) */
	nts_modlist ml;
	uint64_t mod_gen;
	uint64_t mod_check_ns;
	/* tid -> slot index (open addressing, linear probing, backward-shift deletion) */
	int32_t *map_tid;
	uint32_t *map_slot;
	size_t map_cap;
	uint32_t *free_slots;  /* stack of unused slot indexes */
	uint32_t nfree;
	uint32_t *active;      /* slots in use */
	uint32_t nactive;
	uint32_t slots_made;   /* slots with buffers allocated (0..made-1 may be reused) */
	uint64_t sweep_gen;
	uint64_t sweep_ns;     /* when threads were last counted */
	uint64_t sweep_full_ns; /* ... and listed */
	uint64_t sweep_links;  /* the task directory's link count after that listing */
	DIR *task_dir;
	uint64_t over_threads; /* threads beyond max_threads in the last sweep */
	/* the scheduled time of each session in recent rounds, by round number */
	nts_round *rounds;
	uint64_t round_seq;
	/* drain scratch */
	nts_item *items;
	size_t nitems, items_cap;
	uint64_t last_warn_ns;
	uint64_t warnings;
	/* environment session (LD_PRELOAD) */
	nts_session *env_sess;
	int env_follow;        /* NETTRACE_FOLLOW=1: child processes record too */
	int env_child;         /* this process records as a child of the recorded one */
	char env_path[4096];   /* the environment session's file (reports name it) */
	int only_sampler;      /* the last sweep found no live thread but the sampler's */
	int main_gone;         /* the main thread has ended (pthread_exit), others run */
	int env_status_fd;
	int env_control_fd;
	_Atomic int env_signal;
	_Atomic int env_signal_caught; /* env_signal's, never cleared: the exit path re-raises
					  it (env_at_exit) */
	/* samplepoint mode: the threads' checks watch the control pipe (at most every
	 * SP_POLL_NS) and the signal flag; a timer per signal (SIGINT, SIGTERM) ends the
	 * program if no check comes to finalize the file */
	_Atomic uint64_t sp_poll_ns;
	timer_t sp_timer[2];
	int sp_have_timer[2];
	uint64_t seed_counter;
	uint64_t uid_counter;
	uint64_t sampler_cpu;  /* the sampler thread's CPU time when last charged */
	uid_t uid;             /* getuid(), for the siginfo of our signals */
	int realtime;          /* the sampler thread runs SCHED_FIFO */
	/* exec guard (the exec interposers, interpose.c): the thread in execve, never
	 * signalled while it is set, and whether the sampler is sending a round's signals */
	_Atomic pid_t exec_tid;
	_Atomic int in_round;
	/* the capture backend (signal mode): enum nts_backend, SIGNAL or PERF; perf.c's
	 * period (half the shortest interval open), the sampler thread's unwinder cache and
	 * buffers for perf samples; why perf_events are not used (auto) */
	int backend;
	uint64_t perf_period_ns;
	nts_cfi_cache perf_cache;
	uint64_t *perf_ips;
	uint8_t *perf_scratch; /* NTS_PERF_SCRATCH bytes */
	uint32_t perf_nopen, perf_max; /* threads with an open event, and at most */
	char backend_why[160];
	/* the environment session's duties (env.c registers them when it starts one; the
	 * runtime calls them with nts_rt.mu held) */
	void (*env_on_signal)(void);  /* a SIGINT/SIGTERM was caught: finalize, re-raise */
	void (*env_on_control)(void); /* the control pipe is readable */
	void (*env_finalize)(void);   /* finalize the environment session now */
	void (*env_on_fork)(void);    /* a forked child (--follow-children): record it */
} nts_runtime;

#define NTS_PERF_SCRATCH 65536u /* a perf record is at most 64 KiB */
#define NTS_PERF_PER_ROUND 1u    /* perf samples of a busy thread per (shortest) interval */

extern nts_runtime nts_rt;

/* sampler.c: for the environment session (env.c) and samplepoint mode (samplepoint.c),
 * with nts_rt.mu held. nts_rt_modules_check refreshes the module snapshot (at most every
 * MODULE_CHECK_NS unless force, and after a dlclose) and writes new ModuleMap events. */
void nts_rt_modules_check(uint64_t now, int force);
void nts_rt_drain(void);
void nts_rt_finish_locked(int i, uint64_t now, nt_error *err, int *rc);
int nts_rt_close_locked(nts_session *s, nts_stats *stats, nt_error *err);

/* threads.c: the thread registry (nts_rt.mu held) */
long nts_thr_get(int32_t tid);
/* Lists the process's threads and creates slots for new ones; marks every listed slot
 * with the sweep's number, which it returns (0: /proc/self/task cannot be read). */
uint64_t nts_thr_list(void);
/* Frees the slot at nts_rt.active[pos] (its backlog already accounted for). */
void nts_thr_retire(uint32_t pos);
void nts_read_comm(pid_t tid, char *buf, size_t len);
/* Stack bounds of the main thread: the [stack] mapping of /proc/self/maps. */
void nts_stack_mapping_of(uint64_t sp, uint64_t *lo, uint64_t *hi);

/* perf.c, the runtime's side of the perf_events backend: nts_perf_choose picks
 * nts_rt.backend at start (want: enum nts_backend; fails for PERF when perf_events cannot
 * be used); nts_perf_retune sets the period to iv, the shortest interval open, or closes
 * every event when iv is 0; nts_perf_release closes a thread's descriptors. */
int nts_perf_choose(int want, nt_error *err);
void nts_perf_retune(uint64_t iv);
void nts_perf_release(nts_slot *t);

/* sampler.c: wakes the sampler thread (async-signal-safe). */
void nts_rt_wake(void);

/* env.c: finalizes and reports the environment session, then stops the sampler;
 * wait_ns > 0: gives up if the lock is not free within that time. */
void nts_env_stop(uint64_t wait_ns);

#endif
