/* SPDX-License-Identifier: MIT */
/* ntsampler.h - public API of libnettrace-sampler: an in-process sampling profiler that
 * writes nettrace files (doc/format/sampler-events.md) through libnettrace's writer.
 *
 * Two modes:
 *  - signal (default): one sampler thread keeps a deadline per session, sleeps on the
 *    monotonic clock until the earliest one, and samples every thread of the process with a
 *    real-time signal (never SIGPROF) sent by rt_tgsigqueueinfo; the handler unwinds the
 *    thread's native stack (DWARF CFI of the loaded modules, frame pointers as fallback)
 *    into a per-thread buffer allocated in advance, and the sampler thread writes the
 *    samples to the sessions that were due;
 *  - samplepoint: no thread and no signal; the program calls nts_samplepoint() (or is
 *    built with -finstrument-functions, see NTS_INSTRUMENT_HOOKS below) and each thread
 *    samples itself every Nth visit, N adapted so that samples arrive at each session's
 *    interval.
 *
 * Sessions are independent: each has its own interval, schedule, thread filter and output
 * file, and receives samples at exactly its own schedule; opening a session never changes
 * another one's rate. Up to NTS_MAX_SESSIONS sessions may be open at once.
 *
 * Conventions are libnettrace's (nettrace.h): functions return 0 or a negative NT_E* code
 * and fill a caller-owned nt_error (which may be NULL; zero it before the call, e.g.
 * "nt_error err = {0};": this library does not need libnettrace.so, whose
 * nt_error_clear() does the same); option structs start with
 * "size_t sz" (set it to sizeof the struct); a NULL options pointer means defaults.
 * The library never prints unless a log function is given (nts_opts.log_fn).
 *
 * Environment (when the library is loaded with LD_PRELOAD, as nettrace-record does, or
 * linked into a program): if NETTRACE_OUTPUT is set, a session recording the whole process
 * starts before main() and is finalized at exit(). See nettrace-record(1) for the
 * variables (NETTRACE_OUTPUT, NETTRACE_FREQUENCY, NETTRACE_INTERVAL, NETTRACE_SCHEDULE,
 * NETTRACE_SEED, NETTRACE_MODE, NETTRACE_SIGNAL, NETTRACE_DEPTH, NETTRACE_BACKEND,
 * NETTRACE_REALTIME, NETTRACE_PID).
 *
 * Thread safety: every function may be called from any thread; calls are serialised by an
 * internal lock. nts_samplepoint() takes the lock only when it takes a sample. Do not call
 * these functions from a signal handler.
 *
 * dlclose and exec: the library defines dlclose and the exec functions (execve, execv,
 * execvp, execvpe, execl, execlp, execle, fexecve, execveat; under glibc's symbol
 * versions, so the program's calls reach them first) and forwards to libc's. dlclose first
 * keeps stack walks off the object being unloaded: a walk never reads unwind tables that
 * may be gone; samples taken while an unload is in progress, until the module list is
 * read again (the next round, or the next samplepoint check), are walked with frame
 * pointers only. An exec first takes the calling thread out of the sampling rounds and
 * lets a signal already sent reach the handler: a sampling signal pending across execve
 * would kill the new image, whose handlers are reset (the rounds it misses count as
 * dropped). */
#ifndef NTSAMPLER_H
#define NTSAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nettrace.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NTS_BUILDING_LIB) && defined(__GNUC__)
#define NTS_API __attribute__((visibility("default")))
#else
#define NTS_API
#endif

#define NTS_MAX_SESSIONS 64      /* sessions open at once (a 64-bit session mask) */
#define NTS_MIN_INTERVAL_MS 1    /* interval_ms range */
#define NTS_MAX_INTERVAL_MS 1000
#define NTS_DEFAULT_INTERVAL_MS 10

enum nts_mode {
	NTS_MODE_SIGNAL = 0,      /* sampler thread + per-thread signals */
	NTS_MODE_SAMPLEPOINT = 1, /* threads sample themselves at nts_samplepoint() */
};

enum nts_schedule {
	NTS_SCHED_FIXED = 0,   /* one sample every interval, on a cumulative schedule */
	NTS_SCHED_POISSON = 1, /* exponential gaps with the interval as mean (no aliasing) */
};

/* How signal mode captures a running thread's stack (doc/sampler-design.md §7). */
enum nts_backend {
	NTS_BACKEND_AUTO = 0,   /* perf_events when this process may use them, else signals */
	NTS_BACKEND_SIGNAL = 1, /* a signal per sample, the stack walked in the handler */
	NTS_BACKEND_PERF = 2,   /* a per-thread perf_events CPU clock samples running threads
				   (kernel copy of the stack, walked by the sampler thread);
				   blocked threads and threads without an event get signals.
				   nts_start() fails when perf_events cannot be used */
};

/* Process-wide options of nts_start(). */
typedef struct nts_opts {
	size_t sz;          /* sizeof(nts_opts) */
	int mode;           /* enum nts_mode */
	int signo;          /* signal mode: the signal to use; 0 = the highest real-time signal
			       whose handler is SIG_DFL or SIG_IGN (SIGPROF is never taken) */
	uint32_t max_depth; /* frames kept per sample; 0 = 128; at most 1024 */
	uint32_t buffer_samples; /* per-thread buffer, in samples; 0 = 8. A full buffer drops
				    samples and counts them (SamplerStats.Dropped) */
	uint32_t max_threads; /* threads sampled at once; 0 = 4096; more are skipped and
				 counted as dropped */
	int no_realtime;    /* 1: keep the sampler thread at normal priority. By default it
			       asks for SCHED_FIFO priority 1 and stays normal when that is not
			       permitted: on a busy machine a normal thread wakes late, and late
			       rounds are not independent of what the program does */
	/* Warnings ("sampler is 35 ms behind ..."), at most one per second; NULL = none. */
	void (*log_fn)(void *ctx, const char *msg);
	void *log_ctx;
	int backend;        /* enum nts_backend (signal mode); the one used is written in
			       SessionSettings (Backend) */
} nts_opts;

/* One session: where samples go and how often. */
typedef struct nts_session_opts {
	size_t sz;            /* sizeof(nts_session_opts) */
	const char *path;     /* output file, created or truncated (mode 0666 & ~umask) */
	int fd;               /* used when path is NULL: an open file descriptor the session
				 writes to (not closed by the session); -1 or path for none */
	uint32_t interval_ms; /* sampling interval in [1, 1000] ms; 0 = use hz */
	double hz;            /* or a frequency in [1, 1000] Hz (interval 1e9/hz ns, rounded);
				 both 0: NTS_DEFAULT_INTERVAL_MS */
	int schedule;         /* enum nts_schedule */
	uint64_t seed;        /* random seed (first-sample phase, Poisson gaps); 0 = drawn from
				 the clock; the seed used is written in SessionSettings */
	const pid_t *threads; /* thread filter (Linux TIDs); NULL = every thread */
	size_t nthreads;
	uint32_t flush_ms;    /* write buffered blocks at least this often; 0 = 250 ms */
	uint32_t format_version; /* nettrace format: 5 (default) or 6 */
} nts_session_opts;

/* What a session has done. Set sz to sizeof(nts_stats) (0 means this version's size):
 * fields may be added at the end. */
typedef struct nts_stats {
	size_t sz;
	uint64_t samples;   /* ThreadSample events written */
	uint64_t rounds;    /* sampling rounds the session took part in */
	uint64_t dropped;   /* samples lost: full buffer, signal not delivered, thread limit */
	uint64_t late;      /* rounds taken more than half an interval after their time */
	uint64_t missed;    /* rounds skipped when the sampler fell too far behind */
	uint64_t signals;   /* signals sent for the session's rounds */
	uint64_t idle;      /* samples of blocked threads taken without a signal */
	uint64_t interval_ns; /* requested interval */
	double realized_hz; /* rounds per second over the session's life */
	uint64_t seed;      /* the seed used */
	uint64_t handler_cpu_ns; /* CPU time the signal handlers spent on its samples */
	uint64_t sampler_cpu_ns; /* CPU time of the sampler thread while it was open (shared
				    with the sessions open at the same time) */
	uint64_t perf;      /* samples taken from perf_events (the perf backend) */
} nts_stats;

/* An open session. Thread safety: as every function here (any thread, serialised by the
 * library's lock). Lifetime: from nts_session_open() until nts_session_close() or
 * nts_stop(), which closes every session and frees it: the handle must not be used after
 * either. */
typedef struct nts_session nts_session;

/* Starts the sampler (signal handler and sampler thread, or samplepoint state). Fails with
 * NT_EINVAL when already started or on bad options, NT_EIO when no signal is free or the
 * thread cannot be created. */
NTS_API int nts_start(const nts_opts *opts, nt_error *err);

/* Closes every open session (finalizing its file), stops the sampler thread and leaves the
 * signal handler installed but idle (a signal still pending on some thread must not kill
 * the process). Returns the first error of the closes. Does nothing when not started. */
NTS_API int nts_stop(nt_error *err);

/* Opens a session; starts the sampler with default options if needed. The file gets the
 * trace header, SessionSettings and one ModuleMap per executable mapping at once, samples
 * from the session's first deadline on. opts is copied (threads too). Fails with
 * NT_EINVAL (opts NULL or bad, no path or fd), NT_ELIMIT (NTS_MAX_SESSIONS open
 * already), NT_EIO (the file cannot be created or written, sys_errno), NT_ENOMEM, or
 * nts_start()'s errors; *out is then NULL.
 * Close *out with nts_session_close(). */
NTS_API int nts_session_open(nts_session **out, const nts_session_opts *opts, nt_error *err);

/* Finishes a session: writes its last samples, SamplerStats and the end of the stream,
 * closes the file it opened, and frees s (also when it fails). stats (may be NULL) gets
 * the final counters. Accepts NULL (returns 0). Fails with NT_EINVAL for a handle that is
 * not open, or the writer's error (NT_EIO with sys_errno: the file is incomplete). */
NTS_API int nts_session_close(nts_session *s, nts_stats *stats, nt_error *err);

/* Current counters of an open session into *stats (its sz set, or 0). Returns 0, or
 * NT_EINVAL (nothing written) when s or stats is NULL or s is not open. */
NTS_API int nts_session_stats(nts_session *s, nts_stats *stats);

/* Samplepoint mode: counts a visit and, every Nth visit, samples the calling thread for
 * the sessions that are due. Does nothing in signal mode or when no session is open. */
NTS_API void nts_samplepoint(void);

/* Shadow-stack hooks of samplepoint mode for -finstrument-functions builds (each is also a
 * samplepoint). Programs use them through NTS_INSTRUMENT_HOOKS. */
NTS_API void nts_func_enter(void *fn, void *call_site);
NTS_API void nts_func_exit(void *fn, void *call_site);

/* Define NTS_INSTRUMENT_HOOKS in exactly one source file before including this header to
 * define gcc's -finstrument-functions hooks (compile that file without the flag, or keep
 * the attribute below). */
#ifdef NTS_INSTRUMENT_HOOKS
void __cyg_profile_func_enter(void *fn, void *call_site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *call_site) __attribute__((no_instrument_function));
void __cyg_profile_func_enter(void *fn, void *call_site)
{
	nts_func_enter(fn, call_site);
}
void __cyg_profile_func_exit(void *fn, void *call_site)
{
	nts_func_exit(fn, call_site);
}
#endif

#ifdef __cplusplus
}
#endif
#endif /* NTSAMPLER_H */
