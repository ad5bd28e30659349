/* SPDX-License-Identifier: MIT */
/* sampler.c - the sampler runtime: nts_start/nts_stop, sessions, the sampler thread and
 * its deadline loop, the thread registry, draining the per-thread buffers, fork handling
 * and the environment-driven start (LD_PRELOAD, nettrace-record).
 *
 * The sampler thread (doc/sampler-design.md §0): each session keeps its own cumulative
 * schedule (schedule.c); the thread sleeps on CLOCK_MONOTONIC until the earliest deadline
 * (ppoll on an eventfd, so adding or removing a session wakes it at once), takes one
 * sampling round for the sessions that are due (a 64-bit mask), and every record carries
 * that mask, so each session receives exactly its own samples whatever the others do.
 *
 * A round: list the threads (/proc/self/task, kept open), then for each thread that a due
 * session wants: read its CPU clock; if it used almost no CPU since its last sample and
 * that sample found it blocked, write the previous stack again without disturbing it
 * (no signal: no EINTR, no cost); otherwise put the request (mask) in its slot and send
 * the signal with rt_tgsigqueueinfo (si_value = slot index). A thread whose previous
 * signal is still pending (signal blocked, uninterruptible sleep) is not signalled again
 * and its sample counts as dropped. The handlers' records are drained at the start of the
 * next wake-up, sorted by time, and written (drain.c).
 *
 * The end of the process: exit() runs the destructor, which finalizes the environment
 * session; _exit/_Exit are interposed to do the same; when the main thread ended with
 * pthread_exit and every other thread has ended, the sampler thread (which would keep the
 * process alive for ever) finalizes and exits as glibc does. With NETTRACE_FOLLOW=1 a
 * forked or exec'd child records into a file of its own (child_path).
 *
 * Locking: rt.mu serialises everything but the handler and the samplepoint fast path.
 * The sampler thread holds it except while sleeping.
 * Not here: the handler (signal.c), unwinding (unwind.c), schedules (schedule.c), the
 * output format (drain.c), samplepoint mode (samplepoint.c). */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../libtrace/internal.h"

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
/* samplepoint mode: the control pipe is read at most this often (one system call), and a
 * SIGINT/SIGTERM that no samplepoint check takes up within SP_SIGNAL_GRACE_NS ends the
 * program without finalizing the file (the blocks written so far stay readable) */
#define SP_POLL_NS 20000000u
#define SP_SIGNAL_GRACE_NS 1000000000u
/* Loaded objects are checked for changes (dlopen) at most this often. */
#define MODULE_CHECK_NS 100000000u

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
	int wake_fd;
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
	uint64_t sweep_ns;     /* when threads were last listed */
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
} nts_runtime;

static nts_runtime rt = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake_fd = -1, .env_status_fd = -1,
			 .env_control_fd = -1};

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void rt_log(const char *fmt, ...) NT_PRINTF(1, 2);
static void rt_log(const char *fmt, ...)
{
	if (!rt.o.log_fn)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	rt.o.log_fn(rt.o.log_ctx, buf);
}

static void wake_sampler(void)
{
	uint64_t one = 1;
	if (rt.wake_fd >= 0) {
		ssize_t n = write(rt.wake_fd, &one, sizeof one);
		(void)n;
	}
}

/* ---------------------------------------------------------------------------------------
 * Module snapshot
 * ------------------------------------------------------------------------------------- */

/* exec guard (the exec interposers below): the thread in execve, never signalled while
 * it is set, and whether the sampler is sending a round's signals. */
static _Atomic pid_t exec_tid;
static _Atomic int in_round;

/* Snapshots replaced by newer ones: freed once no walk uses a snapshot (nts_snap_get
 * counts the walkers before it loads the pointer, so a walker of an old one keeps
 * snap_users above 0 until it is done). Beyond RETIRED_MAX pending, older ones are kept
 * for good rather than freed under a walker. */
#define RETIRED_MAX 64
static nts_modsnap *retired[RETIRED_MAX];
static unsigned nretired;

static void retired_free(void)
{
	if (!nretired || atomic_load(&nts_g.snap_users) != 0)
		return;
	for (unsigned i = 0; i < nretired; i++)
		free(retired[i]);
	nretired = 0;
}

/* Refreshes the object list; publishes a new snapshot for the handler when it changed and
 * writes ModuleMap events for new objects to every live session. */
static void modules_check(uint64_t now, int force)
{
	retired_free();
	/* after a dlclose: now, and the snapshot is trusted again once rebuilt */
	uint64_t unloads = atomic_load(&nts_g.unload_end);
	if (unloads != atomic_load(&nts_g.snap_gen))
		force = 1;
	if (!force && now < rt.mod_check_ns)
		return;
	rt.mod_check_ns = now + MODULE_CHECK_NS;
	nts_modsnap *snap = NULL;
	int rc = nts_modules_refresh(&rt.ml, &snap, rt.mod_gen + 1);
	if (rc < 0)
		return; /* the old snapshot stays, untrusted if an unload is pending */
	if (rc == 0) {
		atomic_store(&nts_g.snap_gen, unloads); /* the maps read after it: unchanged */
		return;
	}
	rt.mod_gen++;
	nts_modsnap *old = atomic_exchange(&nts_g.snap, snap);
	if (old && nretired < RETIRED_MAX)
		retired[nretired++] = old;
	atomic_store(&nts_g.snap_gen, unloads);
	for (int i = 0; i < NTS_MAX_SESSIONS; i++)
		if (rt.sess[i])
			nts_out_modules(rt.sess[i], &rt.ml, now, rt.sampler_tid);
}

/* dlclose unmaps an object that the module snapshot may still list: a walk that read its
 * .eh_frame or code afterwards would fault in the signal handler. This interposer (the
 * library exports dlclose; a preloaded or linked copy comes before libc) marks every
 * snapshot untrusted first, waits (at most UNLOAD_WAIT_NS) for the walks that use one to
 * finish, then unloads; walks use frame pointers only until the sampler thread (or, in
 * samplepoint mode, the next check) has rebuilt the snapshot from the new maps. */
#define UNLOAD_WAIT_NS 100000000u
/* Programs call dlclose by version (glibc 2.34+: dlclose@GLIBC_2.34; older ones bind
 * dlclose@GLIBC_2.2.5 of libdl), and the loader binds a versioned call only to a
 * definition of that version: the interposer is exported under both (sampler.map). */
int dl_interpose(void *handle);
__asm__(".symver dl_interpose, dlclose@@GLIBC_2.34");
__asm__(".symver dl_interpose_old, dlclose@GLIBC_2.2.5");
NTS_API int dl_interpose(void *handle)
{
	static int (*real)(void *);
	if (!real) {
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!real) {
			errno = ENOSYS;
			return -1;
		}
	}
	atomic_fetch_add(&nts_g.unload_begin, 1);
	uint64_t t0 = 0;
	while (atomic_load(&nts_g.snap_users) > 0) {
		uint64_t now = nts_now();
		if (!t0)
			t0 = now;
		else if (now - t0 > UNLOAD_WAIT_NS)
			break; /* a walker stopped for good (a debugger): unload anyway */
		sched_yield();
	}
	int rc = real(handle);
	atomic_fetch_add(&nts_g.unload_end, 1);
	return rc;
}

NTS_API int dl_interpose_old(void *handle);
NTS_API int dl_interpose_old(void *handle)
{
	return dl_interpose(handle);
}

/* exec: a sampling signal sent to a thread while it is in execve stays pending across it,
 * and the new image, whose handlers are reset to the default action, dies of it (a
 * real-time signal terminates). The exec functions are interposed like dlclose: before
 * the real call the thread is taken out of the rounds (exec_tid), a round being sent is
 * waited for, and one system call lets a signal already queued reach the handler while
 * it is still installed. If the exec fails, the thread is sampled again. Exported under
 * glibc's versions of these functions (sampler.map); async-signal-safe (no malloc up to
 * the execl* argument lists of more than EXEC_ARGS_MAX arguments, which fail with E2BIG,
 * as an exec with that many arguments would). */
#define EXEC_ARGS_MAX 4096

static void exec_prepare(void)
{
	if (!atomic_load(&nts_g.active))
		return;
	atomic_store(&exec_tid, (pid_t)syscall(SYS_gettid));
	uint64_t t0 = nts_now();
	while (atomic_load(&in_round) && nts_now() - t0 < UNLOAD_WAIT_NS)
		sched_yield();
	sched_yield(); /* a signal queued before: delivered on this call's way back */
}

static void exec_failed(void)
{
	atomic_store(&exec_tid, 0);
}

#define EXEC_REAL(var, name, type)                                                         \
	static type var;                                                                   \
	if (!var && !(var = (type)dlsym(RTLD_NEXT, name))) {                              \
		errno = ENOSYS;                                                            \
		return -1;                                                                 \
	}
/* the real call between exec_prepare() and, when it returns (the exec failed),
 * exec_failed(), keeping its errno */
#define EXEC_CALL(call)                                                                    \
	do {                                                                               \
		exec_prepare();                                                            \
		int rc_ = (call), e_ = errno;                                              \
		exec_failed();                                                             \
		errno = e_;                                                                \
		return rc_;                                                                \
	} while (0)

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

int exec_ve(const char *path, char *const argv[], char *const envp[]);
__asm__(".symver exec_ve, execve@@GLIBC_2.2.5");
NTS_API int exec_ve(const char *path, char *const argv[], char *const envp[])
{
	EXEC_REAL(real, "execve", execve_fn);
	EXEC_CALL(real(path, argv, envp));
}

int exec_v(const char *path, char *const argv[]);
__asm__(".symver exec_v, execv@@GLIBC_2.2.5");
NTS_API int exec_v(const char *path, char *const argv[])
{
	EXEC_REAL(real, "execv", execv_fn);
	EXEC_CALL(real(path, argv));
}

int exec_vp(const char *file, char *const argv[]);
__asm__(".symver exec_vp, execvp@@GLIBC_2.2.5");
NTS_API int exec_vp(const char *file, char *const argv[])
{
	EXEC_REAL(real, "execvp", execv_fn);
	EXEC_CALL(real(file, argv));
}

int exec_vpe(const char *file, char *const argv[], char *const envp[]);
__asm__(".symver exec_vpe, execvpe@@GLIBC_2.11");
NTS_API int exec_vpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_REAL(real, "execvpe", execve_fn);
	EXEC_CALL(real(file, argv, envp));
}

int exec_fve(int fd, char *const argv[], char *const envp[]);
__asm__(".symver exec_fve, fexecve@@GLIBC_2.2.5");
NTS_API int exec_fve(int fd, char *const argv[], char *const envp[])
{
	EXEC_REAL(real, "fexecve", fexecve_fn);
	EXEC_CALL(real(fd, argv, envp));
}

int exec_veat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags);
__asm__(".symver exec_veat, execveat@@GLIBC_2.34");
NTS_API int exec_veat(int dirfd, const char *path, char *const argv[], char *const envp[],
		      int flags)
{
	EXEC_REAL(real, "execveat", execveat_fn);
	EXEC_CALL(real(dirfd, path, argv, envp, flags));
}

/* The execl* forms: their variable arguments as an argv (and envp for execle), then the
 * v forms above. kind: 0 execl, 1 execlp, 2 execle. */
static int exec_list(int kind, const char *path, const char *arg0, va_list ap)
{
	const char *argv[EXEC_ARGS_MAX + 1];
	size_t n = 0;
	argv[n++] = arg0;
	while (arg0) {
		const char *a = va_arg(ap, const char *);
		if (n == EXEC_ARGS_MAX) {
			errno = E2BIG;
			return -1;
		}
		argv[n++] = a;
		if (!a)
			break;
	}
	if (kind == 2) {
		char *const *envp = va_arg(ap, char *const *);
		return exec_ve(path, (char *const *)argv, envp);
	}
	return kind == 1 ? exec_vp(path, (char *const *)argv) : exec_v(path, (char *const *)argv);
}

int exec_l(const char *path, const char *arg, ...);
__asm__(".symver exec_l, execl@@GLIBC_2.2.5");
NTS_API int exec_l(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(0, path, arg, ap);
	va_end(ap);
	return rc;
}

int exec_lp(const char *file, const char *arg, ...);
__asm__(".symver exec_lp, execlp@@GLIBC_2.2.5");
NTS_API int exec_lp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(1, file, arg, ap);
	va_end(ap);
	return rc;
}

int exec_le(const char *path, const char *arg, ...);
__asm__(".symver exec_le, execle@@GLIBC_2.2.5");
NTS_API int exec_le(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(2, path, arg, ap);
	va_end(ap);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Thread registry
 * ------------------------------------------------------------------------------------- */

static size_t map_hash(int32_t tid, size_t cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

static long map_get(int32_t tid)
{
	if (!rt.map_cap)
		return -1;
	for (size_t i = map_hash(tid, rt.map_cap);; i = (i + 1) & (rt.map_cap - 1)) {
		if (rt.map_tid[i] == 0)
			return -1;
		if (rt.map_tid[i] == tid)
			return rt.map_slot[i];
	}
}

static void map_put(int32_t tid, uint32_t slot)
{
	size_t i = map_hash(tid, rt.map_cap);
	while (rt.map_tid[i] != 0)
		i = (i + 1) & (rt.map_cap - 1);
	rt.map_tid[i] = tid;
	rt.map_slot[i] = slot;
}

static void map_del(int32_t tid)
{
	size_t mask = rt.map_cap - 1, i = map_hash(tid, rt.map_cap);
	while (rt.map_tid[i] != tid) {
		if (rt.map_tid[i] == 0)
			return;
		i = (i + 1) & mask;
	}
	/* backward-shift deletion keeps probe chains intact without tombstones */
	for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		if (rt.map_tid[j] == 0)
			break;
		size_t home = map_hash(rt.map_tid[j], rt.map_cap);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			rt.map_tid[i] = rt.map_tid[j];
			rt.map_slot[i] = rt.map_slot[j];
			i = j;
		}
	}
	rt.map_tid[i] = 0;
}

static void read_comm(pid_t tid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	buf[0] = 0;
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = 0;
		return;
	}
	buf[n] = 0;
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
}

/* Stack bounds of the main thread: the [stack] mapping of /proc/self/maps. */
static void stack_mapping_of(uint64_t sp, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		unsigned long long a, b;
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s", &a, &b, perms) != 3)
			continue;
		if (sp >= a && sp < b) {
			if (perms[0] == 'r')
				*lo = a, *hi = b;
			break;
		}
	}
	fclose(f);
}

static nts_slot *slot_new(pid_t tid)
{
	uint32_t idx;
	if (rt.nfree)
		idx = rt.free_slots[--rt.nfree];
	else if (rt.slots_made < nts_g.nslots)
		idx = rt.slots_made++;
	else
		return NULL;
	nts_slot *t = &nts_g.slots[idx];
	if (!t->recs) {
		t->backlog_round = calloc(NTS_BACKLOG, 3 * sizeof(uint64_t));
		t->backlog_mask = t->backlog_round ? t->backlog_round + NTS_BACKLOG : NULL;
		t->backlog_seq = t->backlog_round ? t->backlog_round + 2 * NTS_BACKLOG : NULL;
		t->recs = calloc(nts_g.nrecs, nts_g.rec_size);
		t->cache = calloc(1, sizeof *t->cache);
		t->last = calloc(1, nts_g.rec_size);
		if (!t->recs || !t->cache || !t->last || !t->backlog_round) {
			free(t->backlog_round);
			t->backlog_round = t->backlog_mask = t->backlog_seq = NULL;
			free(t->recs);
			free(t->cache);
			free(t->last);
			t->recs = NULL;
			t->cache = NULL;
			t->last = NULL;
			rt.free_slots[rt.nfree++] = idx;
			return NULL;
		}
	}
	/* Reset while no request can be outstanding for this slot (it was retired, or new). */
	atomic_store(&t->req_mask, 0);
	atomic_store(&t->pending, 0);
	atomic_store(&t->drop_count, 0);
	atomic_store(&t->drop_mask, 0);
	uint32_t h = atomic_load(&t->head);
	atomic_store(&t->tail, h);
	t->stack_lo = t->stack_hi = 0;
	t->have_last = 0;
	t->last_cpu = 0;
	t->named_mask = 0;
	t->name_ts = 0;
	t->name[0] = 0;
	t->req_ns = 0;
	t->nbacklog = 0;
	atomic_store(&t->tid, tid);
	atomic_store(&t->state, NTS_SLOT_ACTIVE);
	map_put(tid, idx);
	rt.active[rt.nactive++] = idx;
	return t;
}

static void count_dropped(uint64_t mask, uint64_t n);

static void slot_retire(uint32_t pos)
{
	uint32_t idx = rt.active[pos];
	nts_slot *t = &nts_g.slots[idx];
	for (uint32_t k = 0; k < t->nbacklog; k++)
		count_dropped(t->backlog_mask[k], 1);
	t->nbacklog = 0;
	map_del(atomic_load(&t->tid));
	atomic_store(&t->req_mask, 0);
	atomic_store(&t->tid, 0);
	atomic_store(&t->state, NTS_SLOT_FREE);
	rt.active[pos] = rt.active[--rt.nactive];
	rt.free_slots[rt.nfree++] = idx;
}

/* 1 when the main thread has ended (a zombie until the whole process ends). */
static int main_is_zombie(void)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)nts_g.pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* Lists the process's threads; creates slots for new ones and retires the ones gone. */
static void sweep(void)
{
	if (!rt.task_dir) {
		rt.task_dir = opendir("/proc/self/task");
		if (!rt.task_dir)
			return;
	} else {
		rewinddir(rt.task_dir);
	}
	uint64_t gen = ++rt.sweep_gen;
	uint64_t over = 0;
	struct dirent *de;
	unsigned others = 0;
	int main_listed = 0;
	while ((de = readdir(rt.task_dir)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);
		if (tid <= 0 || tid == rt.sampler_tid)
			continue;
		if (tid == nts_g.pid) {
			/* an ended main thread stays listed (a zombie) while others run; a
			 * signal to it stays pending for ever: it is no longer sampled */
			main_listed = 1;
			if (rt.main_gone)
				continue;
			long mi = map_get(tid);
			if (mi >= 0 && atomic_load(&nts_g.slots[mi].pending) && main_is_zombie()) {
				rt.main_gone = 1;
				continue;
			}
		} else {
			others++;
		}
		long idx = map_get(tid);
		nts_slot *t = idx >= 0 ? &nts_g.slots[idx] : slot_new(tid);
		if (!t) {
			over++;
			continue;
		}
		t->seen_sweep = gen;
	}
	rt.over_threads = over;
	/* The main thread ended with pthread_exit and every other thread has ended too: the
	 * process would wait for the sampler thread for ever (glibc exits when its last
	 * thread ends, and ours is one); the sampler thread finishes it (sampler_main). The
	 * main thread's state is read only while a request to it is pending (a zombie never
	 * answers), not at every sweep. */
	rt.only_sampler = others == 0 && (!main_listed || rt.main_gone);
	for (uint32_t i = 0; i < rt.nactive;) {
		nts_slot *t = &nts_g.slots[rt.active[i]];
		if (t->seen_sweep != gen)
			slot_retire(i);
		else
			i++;
	}
}

/* ---------------------------------------------------------------------------------------
 * Writing records to sessions
 * ------------------------------------------------------------------------------------- */

static int thread_wanted(const struct nts_session *s, pid_t tid)
{
	if (!s->threads)
		return 1;
	size_t lo = 0, hi = s->nthreads;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->threads[mid] == tid)
			return 1;
		if (s->threads[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static const nts_round *round_get(uint64_t seq)
{
	const nts_round *rd = rt.rounds ? &rt.rounds[seq % NTS_ROUND_HIST] : NULL;
	return rd && rd->seq == seq ? rd : NULL;
}

/* Writes one sample (record header r, stack ips) of round rd (NULL: at r->ts_ns) to the
 * live sessions of r->mask, with the thread's name first for a session that has not seen
 * it. */
static void write_record(nts_slot *t, const nts_record *r, const uint64_t *ips,
			 const nts_round *rd, pid_t capture)
{
	uint64_t mask = r->mask & rt.live_mask;
	if (t && (t->name_ts == 0 || r->ts_ns - t->name_ts > NAME_REFRESH_NS)) {
		char name[32];
		read_comm((pid_t)r->tid, name, sizeof name);
		if (strcmp(name, t->name) != 0) {
			memcpy(t->name, name, sizeof name);
			t->named_mask = 0;
		}
		t->name_ts = r->ts_ns;
	}
	while (mask) {
		int i = __builtin_ctzll(mask);
		mask &= mask - 1;
		struct nts_session *s = rt.sess[i];
		if (!s)
			continue;
		uint64_t ts = rd ? rd->ideal[i] : r->ts_ns;
		if (t && !(t->named_mask & (1ull << i))) {
			nts_out_thread_name(s, r->tid, t->name, ts, capture);
			t->named_mask |= 1ull << i;
		}
		nts_out_sample(s, r, ts, ips, capture);
	}
}

static void count_dropped(uint64_t mask, uint64_t n)
{
	mask &= rt.live_mask;
	while (mask) {
		int i = __builtin_ctzll(mask);
		mask &= mask - 1;
		if (rt.sess[i])
			rt.sess[i]->st.dropped += n;
	}
}

static int item_cmp(const void *a, const void *b)
{
	const nts_item *x = a, *y = b;
	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	return x->rec->tid < y->rec->tid ? -1 : x->rec->tid > y->rec->tid;
}

static int add_item(uint64_t round, uint64_t mask, nts_record *r, uint32_t slot, int primary)
{
	if (rt.nitems == rt.items_cap) {
		size_t ncap = rt.items_cap ? rt.items_cap * 2 : 256;
		nts_item *ni = realloc(rt.items, ncap * sizeof *ni);
		if (!ni)
			return -1;
		rt.items = ni;
		rt.items_cap = ncap;
	}
	nts_item *it = &rt.items[rt.nitems++];
	it->round = round;
	it->mask = mask;
	it->rec = r;
	it->slot = slot;
	it->primary = primary;
	return 0;
}

/* Writes every record the handlers published, and the rounds that waited for them, in
 * time order; then frees their ring space. A sample's time is its round's time: the
 * thread's user state does not change between the request and the handler. */
static void drain(void)
{
	rt.nitems = 0;
	for (uint32_t i = 0; i < rt.nactive; i++) {
		uint32_t idx = rt.active[i];
		nts_slot *t = &nts_g.slots[idx];
		uint64_t nd = atomic_exchange_explicit(&t->drop_count, 0, memory_order_acquire);
		if (nd)
			count_dropped(atomic_exchange(&t->drop_mask, 0), nd);
		/* pending first: a handler publishes its record before it clears pending */
		int pend = atomic_load_explicit(&t->pending, memory_order_acquire) != 0;
		uint32_t head = atomic_load_explicit(&t->head, memory_order_acquire);
		uint32_t tail0 = atomic_load_explicit(&t->tail, memory_order_relaxed), k;
		for (k = tail0; k != head; k++) {
			nts_record *r = (nts_record *)(void *)(t->recs + (size_t)(k % nts_g.nrecs) *
								   nts_g.rec_size);
			if (add_item(r->req_round, r->mask, r, idx, 1))
				break; /* out of memory: the rest stays in the ring */
		}
		t->drain_head = k;
		/* The rounds that found a request pending take the stack of its answer: a record
		 * of this drain (the handler may not have cleared pending yet), or the copy of
		 * the one an earlier drain wrote (items are written in round order, so a newer
		 * record of this drain replaces that copy only after them). A request answered
		 * without a record (the handler dropped it) drops its rounds too. */
		uint32_t keep = 0;
		for (uint32_t b = 0; b < t->nbacklog; b++) {
			uint64_t seq = t->backlog_seq[b];
			nts_record *ans = NULL;
			for (uint32_t j = tail0; j != k && !ans; j++) {
				nts_record *r = (nts_record *)(void *)(t->recs + (size_t)(j % nts_g.nrecs) *
									   nts_g.rec_size);
				if (r->req_seq == seq)
					ans = r;
			}
			if (!ans && t->have_last && t->last->req_seq == seq)
				ans = t->last;
			if (ans) {
				if (add_item(t->backlog_round[b], t->backlog_mask[b], ans, idx, 0))
					count_dropped(t->backlog_mask[b], 1);
			} else if (seq == t->req_seq && pend) {
				t->backlog_round[keep] = t->backlog_round[b];
				t->backlog_mask[keep] = t->backlog_mask[b];
				t->backlog_seq[keep++] = seq;
			} else {
				count_dropped(t->backlog_mask[b], 1);
			}
		}
		t->nbacklog = keep;
	}
	if (rt.nitems > 1)
		qsort(rt.items, rt.nitems, sizeof *rt.items, item_cmp);
	for (size_t k = 0; k < rt.nitems; k++) {
		const nts_item *it = &rt.items[k];
		nts_record *r = it->rec;
		nts_slot *t = &nts_g.slots[it->slot];
		const nts_round *rd = round_get(it->round);
		nts_record h = *r; /* the header, with this item's round and sessions */
		h.ts_ns = rd ? rd->now : r->req_ns;
		h.mask = it->mask;
		write_record(t, &h, r->ips, rd, rt.sampler_tid);
		if (it->primary) {
			uint64_t hcpu = r->cpu_end_ns > r->cpu_ns ? r->cpu_end_ns - r->cpu_ns : 0;
			for (uint64_t m = it->mask & rt.live_mask; m; m &= m - 1)
				rt.sess[__builtin_ctzll(m)]->st.handler_cpu_ns += hcpu;
			t->last_cpu = r->cpu_end_ns;
			memcpy(t->last, r, sizeof *r + r->depth * sizeof(uint64_t));
			t->have_last = 1;
			if (!t->stack_hi && !atomic_load(&t->pending))
				stack_mapping_of(r->sp, &t->stack_lo, &t->stack_hi);
		}
	}
	/* every record up to the heads read above is written: free the space */
	for (uint32_t i = 0; i < rt.nactive; i++) {
		nts_slot *t = &nts_g.slots[rt.active[i]];
		atomic_store_explicit(&t->tail, t->drain_head, memory_order_release);
	}
}

/* ---------------------------------------------------------------------------------------
 * Sampling rounds
 * ------------------------------------------------------------------------------------- */

static int send_signal(pid_t tid, uint32_t idx)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = nts_g.signo;
	si.si_code = SI_QUEUE;
	si.si_pid = nts_g.pid;
	si.si_uid = rt.uid;
	si.si_value.sival_int = (int)idx;
	return (int)syscall(SYS_rt_tgsigqueueinfo, nts_g.pid, tid, nts_g.signo, &si);
}

static void take_round(uint64_t now, uint64_t due, const nts_round *rd)
{
	/* Listing /proc/self/task costs about as much as the rest of a round: do it at most
	 * every SWEEP_NS. A new thread waits that long for its first sample; a thread gone
	 * since is noticed when its signal fails (ESRCH). */
	if (!rt.sweep_ns || now - rt.sweep_ns >= SWEEP_NS) {
		sweep();
		rt.sweep_ns = now;
	}
	if (rt.over_threads)
		count_dropped(due, rt.over_threads);
	atomic_store(&in_round, 1); /* before exec_tid is read: see exec_prepare() */
	for (uint32_t i = 0; i < rt.nactive;) {
		uint32_t idx = rt.active[i];
		nts_slot *t = &nts_g.slots[idx];
		pid_t tid = atomic_load(&t->tid);
		uint64_t mask = 0;
		for (uint64_t m = due; m; m &= m - 1) {
			int k = __builtin_ctzll(m);
			if (rt.sess[k] && thread_wanted(rt.sess[k], tid))
				mask |= 1ull << k;
		}
		if (!mask) {
			i++;
			continue;
		}
		if (atomic_load_explicit(&t->pending, memory_order_acquire)) {
			/* not back in user mode since the request: same stack, written with the
			 * handler's record (drain) */
			if (t->nbacklog < NTS_BACKLOG) {
				t->backlog_round[t->nbacklog] = rd->seq;
				t->backlog_seq[t->nbacklog] = t->req_seq;
				t->backlog_mask[t->nbacklog++] = mask;
			} else {
				count_dropped(mask, 1);
			}
			i++;
			continue;
		}
		/* the CPU clock is read only for a thread last seen blocked (one system call; a
		 * thread last seen running is signalled anyway) */
		uint64_t cpu = 0;
		if (t->have_last && t->last->state != NTS_ST_RUNNING &&
		    (cpu = nts_tid_cpu(tid)) >= t->last_cpu && cpu - t->last_cpu <= IDLE_CPU_NS) {
			/* blocked since its last sample: same stack, no signal */
			nts_record r;
			memset(&r, 0, sizeof r);
			r.ts_ns = now;
			r.cpu_ns = r.cpu_end_ns = cpu;
			r.mask = mask;
			r.tid = (uint32_t)tid;
			r.state = t->last->state;
			r.cpu = 0xFFFFFFFFu;
			r.depth = t->last->depth;
			write_record(t, &r, t->last->ips, rd, rt.sampler_tid);
			for (uint64_t m = mask & rt.live_mask; m; m &= m - 1)
				rt.sess[__builtin_ctzll(m)]->st.idle++;
			i++;
			continue;
		}
		if (tid == atomic_load(&exec_tid)) {
			count_dropped(mask, 1); /* in execve: a signal would outlive the image */
			i++;
			continue;
		}
		t->req_ns = now;
		t->req_sent_mask = mask;
		t->req_round = rd->seq;
		t->req_seq++;
		atomic_store_explicit(&t->pending, 1, memory_order_relaxed);
		atomic_store_explicit(&t->req_mask, mask, memory_order_release);
		if (send_signal(tid, idx) != 0) {
			int e = errno;
			atomic_store(&t->req_mask, 0);
			atomic_store(&t->pending, 0);
			if (e == ESRCH) {
				slot_retire(i); /* exited since the sweep */
				continue;
			}
			count_dropped(mask, 1);
			i++;
			continue;
		}
		for (uint64_t m = mask & rt.live_mask; m; m &= m - 1)
			rt.sess[__builtin_ctzll(m)]->st.signals++;
		i++;
	}
	atomic_store(&in_round, 0);
}

/* "Can't keep up": the sampler fell so far behind that it skipped rounds (more than
 * NTS_CATCHUP_MAX intervals, schedule.c). At most one warning a second. */
static void warn_behind(struct nts_session *s, uint64_t now, uint64_t behind, uint64_t missed0)
{
	if (s->sched.missed == missed0)
		return;
	if (rt.last_warn_ns && now - rt.last_warn_ns < 1000000000u)
		return;
	rt.last_warn_ns = now;
	rt.warnings++;
	rt_log("warning: the sampler fell %.1f ms behind its %.3f ms schedule and skipped rounds "
	       "(%" PRIu64 " missed, %" PRIu64 " late so far): the machine is too busy for this "
	       "rate; results stay unbiased but have fewer samples",
	       (double)behind / 1e6, (double)s->sched.interval_ns / 1e6, s->sched.missed,
	       s->sched.late);
}

static void finish_session_locked(int i, uint64_t now, nt_error *err, int *rc);

/* The sampler thread's CPU time since the last call, charged to the live sessions (at
 * flushes and closes: one system call, not one per round). */
static void charge_sampler_cpu(void)
{
	if (!rt.have_thread || !rt.sampler_tid)
		return;
	uint64_t cpu = nts_tid_cpu(rt.sampler_tid); /* works from any thread of the process */
	if (cpu <= rt.sampler_cpu)
		return;
	for (uint64_t m = rt.live_mask; m; m &= m - 1)
		rt.sess[__builtin_ctzll(m)]->st.sampler_cpu_ns += cpu - rt.sampler_cpu;
	rt.sampler_cpu = cpu;
}

static void handle_env_signal(void);
static void handle_env_control(void);
static void env_finalize(void);

static void *sampler_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* sampler-design §5: p50 wake-up 94 -> 47 us */
	/* Real-time priority when the process may have it (root, CAP_SYS_NICE, RLIMIT_RTPRIO):
	 * on a busy machine a normal thread wakes milliseconds late, and late rounds are not
	 * independent of what the program does (they come after it yields a CPU). Priority 1,
	 * the lowest; a round is bounded work, and the kernel's RT throttling bounds the rest.
	 * Silently kept normal otherwise. */
	if (!rt.o.no_realtime) {
		struct sched_param sp = {.sched_priority = 1};
		rt.realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
	}
	prctl(PR_SET_NAME, "nts-sampler", 0, 0, 0);
	atomic_store(&rt.thread_tid, gettid_()); /* start_locked() waits for it */
	pthread_mutex_lock(&rt.mu);
	while (!rt.stop_req) {
		if (atomic_load(&rt.env_signal)) {
			handle_env_signal();
			continue;
		}
		uint64_t now = nts_now();
		uint64_t wake = UINT64_MAX;
		for (uint64_t m = rt.sched_mask; m; m &= m - 1) {
			struct nts_session *s = rt.sess[__builtin_ctzll(m)];
			if (s->sched.next_ns < wake)
				wake = s->sched.next_ns;
			if (s->next_flush_ns < wake)
				wake = s->next_flush_ns;
		}
		if (wake > now + DUE_SLACK_NS) {
			struct pollfd pfd[2] = {{rt.wake_fd, POLLIN, 0}, {rt.env_control_fd, POLLIN, 0}};
			struct timespec ts, *tsp = NULL;
			if (wake != UINT64_MAX) {
				uint64_t d = wake - now;
				ts.tv_sec = (time_t)(d / 1000000000u);
				ts.tv_nsec = (long)(d % 1000000000u);
				tsp = &ts;
			}
			pthread_mutex_unlock(&rt.mu);
			int n = ppoll(pfd, rt.env_control_fd >= 0 ? 2 : 1, tsp, NULL);
			if (n > 0 && (pfd[0].revents & POLLIN)) {
				uint64_t v;
				ssize_t r = read(rt.wake_fd, &v, sizeof v);
				(void)r;
			}
			pthread_mutex_lock(&rt.mu);
			if (n > 0 && rt.env_control_fd >= 0 && pfd[1].revents)
				handle_env_control();
			continue;
		}
		now = nts_now();
		drain();
		modules_check(now, 0);
		uint64_t due = 0;
		nts_round *rd = &rt.rounds[(rt.round_seq + 1) % NTS_ROUND_HIST];
		for (uint64_t m = rt.sched_mask; m; m &= m - 1) {
			int i = __builtin_ctzll(m);
			struct nts_session *s = rt.sess[i];
			if (s->sched.next_ns <= now + DUE_SLACK_NS) {
				rd->ideal[i] = s->sched.next_ns;
				uint64_t missed0 = s->sched.missed;
				uint64_t behind = nts_sched_advance(&s->sched, now);
				warn_behind(s, now, behind, missed0);
				due |= 1ull << i;
			}
		}
		if (due) {
			rd->seq = ++rt.round_seq;
			rd->now = now;
			take_round(now, due, rd);
		}
		if (rt.only_sampler && rt.mode == NTS_MODE_SIGNAL) {
			/* as glibc does when the last thread ends: exit(0), which runs the
			 * program's atexit handlers and our destructor (it finalizes every
			 * session; joining this thread from itself fails at once) */
			env_finalize();
			pthread_mutex_unlock(&rt.mu);
			exit(0);
		}
		int flushing = 0;
		for (uint64_t m = rt.sched_mask; m && !flushing; m &= m - 1)
			flushing = rt.sess[__builtin_ctzll(m)]->next_flush_ns <= now + DUE_SLACK_NS;
		if (flushing)
			charge_sampler_cpu();
		for (uint64_t m = rt.sched_mask; m; m &= m - 1) {
			struct nts_session *s = rt.sess[__builtin_ctzll(m)];
			if (s->next_flush_ns <= now + DUE_SLACK_NS) {
				nts_out_flush(s, now, rt.sampler_tid);
				s->next_flush_ns = now + s->flush_ns;
			}
		}
	}
	pthread_mutex_unlock(&rt.mu);
	return NULL;
}

/* ---------------------------------------------------------------------------------------
 * Start and stop
 * ------------------------------------------------------------------------------------- */

static int pick_signal(int want, nt_error *err)
{
	struct sigaction old;
	if (want) {
		if (want == SIGPROF || want <= 0 || want > SIGRTMAX)
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
				       "sampler: signal %d cannot be used", want);
		return want;
	}
	/* the highest free real-time signal: libraries that take one (glibc's own, Go's
	 * SIGRTMIN-based ones) usually start from the bottom */
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		if (sigaction(sig, NULL, &old) != 0)
			continue;
		if (old.sa_flags & SA_SIGINFO) {
			if (old.sa_sigaction == nts_signal_handler)
				return sig; /* ours, from an earlier start */
		} else if (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN) {
			return sig;
		}
	}
	return nt_fail(err, NT_EIO, NT_NO_OFFSET,
		       "sampler: no free real-time signal (every one has a handler)");
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&rt.mu);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&rt.mu);
}

/* The child has one thread and no sampler thread: it does not inherit the sampler. Its
 * copies of the session files are closed without writing (the parent owns the files). */
static void env_start_child(void);

static void atfork_child(void)
{
	int had_env = rt.env_sess != NULL;
	if (had_env && rt.env_status_fd >= 0 && !rt.env_follow) {
		/* nettrace-record says how many processes were not recorded */
		char buf[32];
		int n = snprintf(buf, sizeof buf, "fork %d\n", (int)getpid());
		if (n > 0) {
			ssize_t w = write(rt.env_status_fd, buf, (size_t)n);
			(void)w;
		}
	}
	pthread_mutex_init(&rt.mu, NULL);
	atomic_store(&nts_g.active, 0);
	nts_g.pid = getpid();
	nts_tid_cache = 0;
	for (int i = 0; i < NTS_MAX_SESSIONS; i++) {
		if (rt.sess[i]) {
			nts_out_abandon(rt.sess[i]);
			free(rt.sess[i]->threads);
			free(rt.sess[i]);
			rt.sess[i] = NULL;
		}
	}
	rt.live_mask = rt.sched_mask = 0;
	rt.env_sess = NULL;
	if (rt.env_status_fd >= 0 && !(had_env && rt.env_follow))
		close(rt.env_status_fd);
	if (!(had_env && rt.env_follow))
		rt.env_status_fd = -1;
	if (rt.env_control_fd >= 0)
		close(rt.env_control_fd);
	rt.env_control_fd = -1;
	if (rt.wake_fd >= 0)
		close(rt.wake_fd);
	rt.wake_fd = -1;
	if (rt.task_dir)
		closedir(rt.task_dir);
	rt.task_dir = NULL;
	rt.sweep_ns = 0;
	rt.nactive = 0;
	rt.nfree = 0;
	rt.slots_made = 0;
	if (rt.map_cap)
		memset(rt.map_tid, 0, rt.map_cap * sizeof *rt.map_tid);
	rt.have_thread = 0;
	rt.started = 0;
	rt.stop_req = 0;
	rt.only_sampler = 0;
	rt.main_gone = 0;
	nts_sp_sessions_changed(0);
	if (had_env && rt.env_follow)
		env_start_child(); /* --follow-children: the child records into its own file */
}

static int alloc_shared(const nts_opts *o, nt_error *err)
{
	if (nts_g.slots)
		return 0; /* kept from a previous start: the handler may still see it */
	uint32_t depth = o->max_depth ? o->max_depth : NTS_DEFAULT_DEPTH;
	uint32_t nrecs = o->buffer_samples ? o->buffer_samples : NTS_DEFAULT_BUFFER;
	uint32_t nthreads = o->max_threads ? o->max_threads : NTS_DEFAULT_THREADS;
	size_t cap = 16;
	while (cap < 2 * (size_t)nthreads)
		cap *= 2;
	rt.map_tid = calloc(cap, sizeof *rt.map_tid);
	rt.map_slot = calloc(cap, sizeof *rt.map_slot);
	rt.free_slots = calloc(nthreads, sizeof *rt.free_slots);
	rt.active = calloc(nthreads, sizeof *rt.active);
	nts_slot *slots = calloc(nthreads, sizeof *slots);
	rt.rounds = calloc(NTS_ROUND_HIST, sizeof *rt.rounds);
	if (!rt.map_tid || !rt.map_slot || !rt.free_slots || !rt.active || !slots || !rt.rounds) {
		free(rt.rounds);
		rt.rounds = NULL;
		free(rt.map_tid);
		free(rt.map_slot);
		free(rt.free_slots);
		free(rt.active);
		free(slots);
		rt.map_tid = NULL;
		rt.map_slot = NULL;
		rt.free_slots = rt.active = NULL;
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "sampler: out of memory");
	}
	rt.map_cap = cap;
	nts_g.max_depth = depth;
	nts_g.nrecs = nrecs;
	nts_g.rec_size = (sizeof(nts_record) + (size_t)depth * sizeof(uint64_t) + 63) & ~(size_t)63;
	nts_g.nslots = nthreads;
	nts_g.slots = slots;
	return 0;
}

static int start_locked(const nts_opts *opts, nt_error *err)
{
	nts_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	if (opts) {
		if (opts->sz < sizeof(size_t))
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: opts sz %zu is too small",
				       opts->sz);
		memcpy(&o, opts, opts->sz < sizeof o ? opts->sz : sizeof o);
		o.sz = sizeof o;
	}
	if (rt.started)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: already started");
	if (o.mode != NTS_MODE_SIGNAL && o.mode != NTS_MODE_SAMPLEPOINT)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: unknown mode %d", o.mode);
	if (o.max_depth > NTS_MAX_DEPTH || o.buffer_samples > NTS_MAX_BUFFER ||
	    o.max_threads > NTS_MAX_THREADS)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "sampler: max_depth (<= %u), buffer_samples (<= %u) or max_threads "
			       "(<= %u) out of range",
			       NTS_MAX_DEPTH, NTS_MAX_BUFFER, NTS_MAX_THREADS);
	static int atfork_done;
	if (!atfork_done) {
		if (pthread_atfork(atfork_prepare, atfork_parent, atfork_child))
			return nt_fail(err, NT_EIO, NT_NO_OFFSET, "sampler: pthread_atfork failed");
		atfork_done = 1;
	}
	int rc = alloc_shared(&o, err);
	if (rc)
		return rc;
	rt.o = o;
	rt.mode = o.mode;
	nts_g.pid = getpid();
	rt.uid = getuid();
	rt.mod_check_ns = 0;
	modules_check(nts_now(), 1);
	if (o.mode == NTS_MODE_SAMPLEPOINT) {
		rt.sampler_tid = 0;
		rt.started = 1;
		return 0;
	}
	int sig = pick_signal(o.signo, err);
	if (sig < 0)
		return sig;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = nts_signal_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL))
		return nt_fail_errno(err, errno, "sampler: sigaction(%d) failed", sig);
	nts_g.signo = sig;
	rt.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rt.wake_fd < 0)
		return nt_fail_errno(err, errno, "sampler: eventfd failed");
	rt.stop_req = 0;
	atomic_store(&nts_g.active, 1);
	/* the sampler thread must not inherit the caller's blocked signals into a state that
	 * matters: it blocks everything itself first thing */
	int e = pthread_create(&rt.thread, NULL, sampler_main, NULL);
	if (e) {
		atomic_store(&nts_g.active, 0);
		close(rt.wake_fd);
		rt.wake_fd = -1;
		return nt_fail_errno(err, e, "sampler: cannot create the sampler thread");
	}
	/* Sessions name the sampler thread as the capture thread of every event, from their
	 * first one on: wait for its id (the thread sets it before it takes rt.mu). */
	while (!atomic_load(&rt.thread_tid)) {
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	rt.sampler_tid = atomic_exchange(&rt.thread_tid, 0);
	rt.sampler_cpu = 0;
	rt.have_thread = 1;
	rt.started = 1;
	return 0;
}

int nts_start(const nts_opts *opts, nt_error *err)
{
	nts_guard++;
	pthread_mutex_lock(&rt.mu);
	int rc = start_locked(opts, err);
	pthread_mutex_unlock(&rt.mu);
	nts_guard--;
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Sessions
 * ------------------------------------------------------------------------------------- */

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t min_interval(void)
{
	uint64_t m = 0;
	for (uint64_t b = rt.sched_mask; b; b &= b - 1) {
		uint64_t iv = rt.sess[__builtin_ctzll(b)]->sched.interval_ns;
		if (!m || iv < m)
			m = iv;
	}
	return m;
}

static int session_open_locked(nts_session **out, const nts_session_opts *opts, nt_error *err)
{
	nts_session_opts o;
	memset(&o, 0, sizeof o);
	o.fd = -1;
	if (!out)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: out is NULL");
	*out = NULL;
	if (!opts || opts->sz < sizeof(size_t))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: session options are required");
	memcpy(&o, opts, opts->sz < sizeof o ? opts->sz : sizeof o);
	uint64_t interval_ns;
	if (o.interval_ms && o.hz > 0)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "sampler: give an interval or a frequency, not both");
	if (o.interval_ms) {
		if (o.interval_ms < NTS_MIN_INTERVAL_MS || o.interval_ms > NTS_MAX_INTERVAL_MS)
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
				       "sampler: interval %" PRIu32 " ms is outside [%d, %d]",
				       o.interval_ms, NTS_MIN_INTERVAL_MS, NTS_MAX_INTERVAL_MS);
		interval_ns = (uint64_t)o.interval_ms * 1000000u;
	} else if (o.hz != 0) {
		if (!(o.hz >= 1.0 && o.hz <= 1000.0))
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
				       "sampler: frequency %g Hz is outside [1, 1000]", o.hz);
		interval_ns = (uint64_t)(1e9 / o.hz + 0.5);
	} else {
		interval_ns = (uint64_t)NTS_DEFAULT_INTERVAL_MS * 1000000u;
	}
	if (o.schedule != NTS_SCHED_FIXED && o.schedule != NTS_SCHED_POISSON)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: unknown schedule %d",
			       o.schedule);
	if (o.format_version && o.format_version != 5 && o.format_version != 6)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "sampler: format version %" PRIu32 " is not 5 or 6", o.format_version);
	if (!o.path && o.fd <= 0)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: no output path or fd");
	if (!rt.started) {
		int rc = start_locked(NULL, err);
		if (rc)
			return rc;
	}
	int idx = -1;
	for (int i = 0; i < NTS_MAX_SESSIONS; i++)
		if (!rt.sess[i]) {
			idx = i;
			break;
		}
	if (idx < 0)
		return nt_fail(err, NT_ELIMIT, NT_NO_OFFSET, "sampler: %d sessions already open",
			       NTS_MAX_SESSIONS);
	struct nts_session *s = calloc(1, sizeof *s);
	if (!s)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "sampler: out of memory");
	s->index = idx;
	s->uid = ++rt.uid_counter;
	s->fd = -1;
	s->mode = rt.mode;
	s->format_version = o.format_version ? o.format_version : 5;
	s->owner_pid = getpid();
	if (o.threads && o.nthreads) {
		s->threads = malloc(o.nthreads * sizeof(pid_t));
		if (!s->threads) {
			free(s);
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "sampler: out of memory");
		}
		memcpy(s->threads, o.threads, o.nthreads * sizeof(pid_t));
		qsort(s->threads, o.nthreads, sizeof(pid_t), pid_cmp);
		s->nthreads = o.nthreads;
	}
	if (o.path) {
		s->fd = open(o.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (s->fd < 0) {
			int e = errno;
			free(s->threads);
			free(s);
			return nt_fail_errno(err, e, "%s: cannot create the trace", o.path);
		}
		s->own_fd = 1;
	} else {
		s->fd = o.fd;
	}
	uint64_t seed = o.seed;
	if (!seed) {
		uint64_t x = nts_now() ^ ((uint64_t)getpid() << 32) ^ (++rt.seed_counter << 48);
		nts_rng r;
		nts_rng_seed(&r, x);
		seed = nts_rng_next(&r) | 1;
	}
	s->seed = seed;
	s->st.seed = seed;
	s->st.interval_ns = interval_ns;
	s->flush_ns = (uint64_t)(o.flush_ms ? o.flush_ms : NTS_DEFAULT_FLUSH_MS) * 1000000u;
	uint64_t now = nts_now();
	modules_check(now, 1);
	nts_sched_init(&s->sched, o.schedule, interval_ns, seed, now);
	pid_t capture = rt.mode == NTS_MODE_SIGNAL ? rt.sampler_tid : gettid_();
	if (!capture)
		capture = gettid_();
	int rc = nts_out_open(s, &rt.ml, now, capture, err);
	if (rc) {
		nts_out_abandon(s);
		free(s->threads);
		free(s);
		if (o.path)
			unlink(o.path);
		return rc;
	}
	s->next_flush_ns = now + s->flush_ns;
	rt.sess[idx] = s;
	rt.live_mask |= 1ull << idx;
	rt.sched_mask |= 1ull << idx;
	/* threads already known get their names written again for this session */
	for (uint32_t i = 0; i < rt.nactive; i++)
		nts_g.slots[rt.active[i]].named_mask &= ~(1ull << idx);
	if (rt.mode == NTS_MODE_SAMPLEPOINT)
		nts_sp_sessions_changed(min_interval());
	wake_sampler();
	*out = s;
	return 0;
}

int nts_session_open(nts_session **out, const nts_session_opts *opts, nt_error *err)
{
	nts_guard++;
	pthread_mutex_lock(&rt.mu);
	int rc = session_open_locked(out, opts, err);
	pthread_mutex_unlock(&rt.mu);
	nts_guard--;
	return rc;
}

/* Waits (unlocked) until no request is pending, at most CLOSE_WAIT_NS: a handler still
 * running must not have its record lost. Called with rt.mu held; returns with it held. */
static void wait_handlers(void)
{
	uint64_t end = nts_now() + CLOSE_WAIT_NS;
	for (;;) {
		int pending = 0;
		for (uint32_t i = 0; i < rt.nactive && !pending; i++)
			pending = atomic_load(&nts_g.slots[rt.active[i]].pending) != 0;
		if (!pending || nts_now() >= end)
			return;
		pthread_mutex_unlock(&rt.mu);
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&rt.mu);
	}
}

static void finish_session_locked(int i, uint64_t now, nt_error *err, int *rc)
{
	struct nts_session *s = rt.sess[i];
	charge_sampler_cpu();
	/* samples still owed to the session: a request whose handler has not run yet (the
	 * thread did not get a CPU during the close's wait), and the rounds waiting for it */
	uint64_t bit = 1ull << i;
	for (uint32_t k = 0; k < rt.nactive; k++) {
		nts_slot *t = &nts_g.slots[rt.active[k]];
		if (atomic_load(&t->pending) && (t->req_sent_mask & bit))
			s->st.dropped++;
		for (uint32_t b = 0; b < t->nbacklog; b++)
			if (t->backlog_mask[b] & bit)
				s->st.dropped++;
	}
	/* scheduled times that passed while the sampler was behind are missed, so that
	 * rounds + missed accounts for the whole session */
	if (rt.mode == NTS_MODE_SIGNAL && now > s->sched.next_ns + DUE_SLACK_NS)
		s->sched.missed += (now - s->sched.next_ns) / s->sched.interval_ns + 1;
	pid_t capture = rt.sampler_tid ? rt.sampler_tid : gettid_();
	int r = nts_out_close(s, now, capture, err);
	if (r && !*rc)
		*rc = r;
	rt.sess[i] = NULL;
	rt.live_mask &= ~(1ull << i);
	rt.sched_mask &= ~(1ull << i);
}

static void copy_stats(nts_stats *out, const nts_stats *in)
{
	size_t sz = out->sz ? out->sz : sizeof *out;
	if (sz > sizeof *out)
		sz = sizeof *out;
	if (sz <= sizeof(size_t))
		return;
	memcpy((char *)out + sizeof(size_t), (const char *)in + sizeof(size_t), sz - sizeof(size_t));
}

static int session_close_locked(nts_session *s, nts_stats *stats, nt_error *err)
{
	int i = s->index;
	if (i < 0 || i >= NTS_MAX_SESSIONS || rt.sess[i] != s)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: not an open session");
	rt.sched_mask &= ~(1ull << i);
	if (rt.mode == NTS_MODE_SIGNAL && rt.have_thread) {
		wait_handlers();
		drain();
	}
	int rc = 0;
	uint64_t now = nts_now();
	if (s->owner_pid != getpid()) {
		nts_out_abandon(s);
		rt.sess[i] = NULL;
		rt.live_mask &= ~(1ull << i);
	} else {
		finish_session_locked(i, now, err, &rc);
	}
	if (stats)
		copy_stats(stats, &s->st);
	if (s == rt.env_sess)
		rt.env_sess = NULL;
	free(s->threads);
	free(s);
	if (rt.mode == NTS_MODE_SAMPLEPOINT)
		nts_sp_sessions_changed(min_interval());
	wake_sampler();
	return rc;
}

int nts_session_close(nts_session *s, nts_stats *stats, nt_error *err)
{
	if (!s)
		return 0;
	nts_guard++;
	pthread_mutex_lock(&rt.mu);
	int rc = session_close_locked(s, stats, err);
	pthread_mutex_unlock(&rt.mu);
	nts_guard--;
	return rc;
}

int nts_session_stats(nts_session *s, nts_stats *stats)
{
	if (!s || !stats)
		return NT_EINVAL;
	pthread_mutex_lock(&rt.mu);
	int ok = s->index >= 0 && s->index < NTS_MAX_SESSIONS && rt.sess[s->index] == s;
	if (ok) {
		nts_stats st = s->st;
		st.late = s->sched.late;
		st.missed = s->sched.missed;
		st.rounds = s->sched.taken;
		uint64_t now = nts_now();
		double secs = now > s->start_ns ? (double)(now - s->start_ns) / 1e9 : 0;
		st.realized_hz = secs > 0 ? (double)st.rounds / secs : 0;
		copy_stats(stats, &st);
	}
	pthread_mutex_unlock(&rt.mu);
	return ok ? 0 : NT_EINVAL;
}

static int stop_locked(nt_error *err)
{
	if (!rt.started)
		return 0;
	if (rt.have_thread) {
		charge_sampler_cpu();
		rt.stop_req = 1;
		wake_sampler();
		pthread_t th = rt.thread;
		pthread_mutex_unlock(&rt.mu);
		pthread_join(th, NULL);
		pthread_mutex_lock(&rt.mu);
		rt.have_thread = 0;
		wait_handlers();
		drain();
	}
	int rc = 0;
	uint64_t now = nts_now();
	for (int i = 0; i < NTS_MAX_SESSIONS; i++) {
		struct nts_session *s = rt.sess[i];
		if (!s)
			continue;
		rt.sched_mask &= ~(1ull << i);
		if (s->owner_pid != getpid()) {
			nts_out_abandon(s);
			rt.sess[i] = NULL;
			rt.live_mask &= ~(1ull << i);
		} else {
			finish_session_locked(i, now, err, &rc);
		}
		if (s == rt.env_sess)
			rt.env_sess = NULL;
		free(s->threads);
		free(s);
	}
	/* The handler stays installed but idle: a signal still pending on some thread must
	 * not terminate the process (a real-time signal's default action). */
	atomic_store(&nts_g.active, 0);
	if (rt.wake_fd >= 0)
		close(rt.wake_fd);
	rt.wake_fd = -1;
	if (rt.task_dir)
		closedir(rt.task_dir);
	rt.task_dir = NULL;
	rt.sweep_ns = 0;
	while (rt.nactive)
		slot_retire(0);
	rt.sampler_tid = 0;
	rt.started = 0;
	nts_sp_sessions_changed(0);
	return rc;
}

int nts_stop(nt_error *err)
{
	nts_guard++;
	pthread_mutex_lock(&rt.mu);
	int rc = stop_locked(err);
	pthread_mutex_unlock(&rt.mu);
	nts_guard--;
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Samplepoint mode: writing a thread's own sample
 * ------------------------------------------------------------------------------------- */

uint64_t nts_rt_sp_sessions(nts_sp_sess out[NTS_MAX_SESSIONS])
{
	pthread_mutex_lock(&rt.mu);
	uint64_t mask = rt.mode == NTS_MODE_SAMPLEPOINT ? rt.sched_mask : 0;
	for (uint64_t m = mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		const struct nts_session *s = rt.sess[i];
		out[i].uid = s->uid;
		out[i].interval_ns = s->sched.interval_ns;
		out[i].seed = s->seed;
		out[i].kind = s->sched.kind;
	}
	pthread_mutex_unlock(&rt.mu);
	return mask;
}

void nts_rt_sp_write(const nts_record *r, const uint64_t *ips,
		     const uint64_t ideal[NTS_MAX_SESSIONS],
		     const uint64_t uid[NTS_MAX_SESSIONS], const char *name, uint64_t *named_mask,
		     const uint64_t dtaken[NTS_MAX_SESSIONS], const uint64_t dlate[NTS_MAX_SESSIONS],
		     const uint64_t dmissed[NTS_MAX_SESSIONS])
{
	pthread_mutex_lock(&rt.mu);
	for (uint64_t m = r->mask & rt.sched_mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		struct nts_session *s = rt.sess[i];
		if (s->uid != uid[i] || s->owner_pid != nts_g.pid)
			continue;
		s->sched.taken += dtaken[i];
		s->sched.late += dlate[i];
		s->sched.missed += dmissed[i];
		if (!(*named_mask & (1ull << i))) {
			nts_out_thread_name(s, r->tid, name, ideal[i], (pid_t)r->tid);
			*named_mask |= 1ull << i;
		}
		nts_out_sample(s, r, ideal[i], ips, (pid_t)r->tid);
		if (r->ts_ns >= s->next_flush_ns) {
			nts_out_flush(s, r->ts_ns, (pid_t)r->tid);
			s->next_flush_ns = r->ts_ns + s->flush_ns;
		}
	}
	pthread_mutex_unlock(&rt.mu);
}

/* Samplepoint mode has no sampler thread: the threads' checks (samplepoint.c) do its
 * duties: the module snapshot (every MODULE_CHECK_NS, and after a dlclose), and for the
 * environment session the stop requests. A "stop" from nettrace-record finalizes the
 * file; a SIGINT or SIGTERM caught by env_sp_signal_handler finalizes it and re-raises
 * the signal. */
void nts_rt_sp_poll(uint64_t now)
{
	int unload = atomic_load(&nts_g.unload_end) != atomic_load(&nts_g.snap_gen);
	if (!unload && !atomic_load_explicit(&rt.env_signal, memory_order_relaxed)) {
		uint64_t next = atomic_load_explicit(&rt.sp_poll_ns, memory_order_relaxed);
		if (now < next)
			return;
		if (!atomic_compare_exchange_strong(&rt.sp_poll_ns, &next, now + SP_POLL_NS))
			return; /* another thread polls */
	}
	pthread_mutex_lock(&rt.mu);
	if (rt.started && rt.mode == NTS_MODE_SAMPLEPOINT) {
		modules_check(now, 0); /* objects loaded since, and after a dlclose */
		if (rt.env_control_fd >= 0)
			handle_env_control();
		if (atomic_load(&rt.env_signal))
			handle_env_signal(); /* finalizes, then the re-raised signal ends the process */
	}
	pthread_mutex_unlock(&rt.mu);
}

/* ---------------------------------------------------------------------------------------
 * Environment-driven start (LD_PRELOAD, nettrace-record)
 * ------------------------------------------------------------------------------------- */

static void env_log(void *ctx, const char *msg)
{
	(void)ctx;
	char buf[600];
	int n = snprintf(buf, sizeof buf, "nettrace-sampler: %s\n", msg);
	if (n > 0) {
		ssize_t w = write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
		(void)w;
	}
}

static void env_status(const char *fmt, ...) NT_PRINTF(1, 2);
static void env_status(const char *fmt, ...)
{
	if (rt.env_status_fd < 0)
		return;
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0) {
		ssize_t w = write(rt.env_status_fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
		(void)w;
	}
}

/* The report of how the environment session ended, one line on the status pipe: "ok ..."
 * or "error MESSAGE"; a child process (--follow-children) prefixes "child PID " and ends
 * the line with " path=FILE". */
static void env_report_close(int rc, const nts_stats *st, const nt_error *err)
{
	char who[32] = "";
	if (rt.env_child)
		snprintf(who, sizeof who, "child %d ", (int)getpid());
	if (rc)
		env_status("%serror %s%s%s\n", who, err->msg, rt.env_child ? " path=" : "",
			   rt.env_child ? rt.env_path : "");
	else
		env_status("%sok samples=%" PRIu64 " rounds=%" PRIu64 " dropped=%" PRIu64
			   " late=%" PRIu64 " missed=%" PRIu64 " hz=%.3f handler_ns=%" PRIu64
			   " sampler_ns=%" PRIu64 " unloads=%" PRIu64 "%s%s\n",
			   who, st->samples, st->rounds, st->dropped, st->late, st->missed,
			   st->realized_hz, st->handler_cpu_ns, st->sampler_cpu_ns,
			   (uint64_t)atomic_load(&nts_g.unload_end), rt.env_child ? " path=" : "",
			   rt.env_child ? rt.env_path : "");
}

/* SIGINT/SIGTERM while the environment session records: the handler only wakes the
 * sampler thread, which finalizes the file and then re-raises the signal with its
 * default action. Installed only over SIG_DFL. */
static void env_signal_handler(int sig)
{
	int e = errno;
	atomic_store(&rt.env_signal, sig);
	uint64_t one = 1;
	if (rt.wake_fd >= 0) {
		ssize_t n = write(rt.wake_fd, &one, sizeof one);
		(void)n;
	}
	errno = e;
}

/* Samplepoint mode: the first SIGINT/SIGTERM is left to the next samplepoint check
 * (nts_rt_sp_poll), which finalizes the file and re-raises it; a timer re-sends it after
 * SP_SIGNAL_GRACE_NS in case no check comes (a program blocked for good), and a second
 * signal ends the program at once, as the default action would. */
static void env_sp_signal_handler(int sig)
{
	int e = errno;
	int prev = 0;
	if (atomic_compare_exchange_strong(&rt.env_signal, &prev, sig)) {
		int k = sig == SIGINT ? 0 : 1;
		if (rt.sp_have_timer[k]) {
			struct itimerspec its;
			memset(&its, 0, sizeof its);
			its.it_value.tv_sec = SP_SIGNAL_GRACE_NS / 1000000000u;
			its.it_value.tv_nsec = SP_SIGNAL_GRACE_NS % 1000000000u;
			timer_settime(rt.sp_timer[k], 0, &its, NULL);
		}
	} else {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
		sigaction(sig, &sa, NULL);
		raise(sig); /* delivered when this handler returns */
	}
	errno = e;
}

/* Finalizes the environment session now (sampler thread, rt.mu held) and reports it. */
static void env_finalize(void)
{
	nts_session *s = rt.env_sess;
	if (!s)
		return;
	nts_stats st;
	nt_error err;
	nt_error_clear(&err);
	int i = s->index;
	rt.sched_mask &= ~(1ull << i);
	drain();
	int rc = 0;
	finish_session_locked(i, nts_now(), &err, &rc);
	st = s->st;
	rt.env_sess = NULL;
	free(s->threads);
	free(s);
	env_report_close(rc, &st, &err);
}

/* nettrace-record asks to stop recording ("stop" on the control pipe) when it gets SIGINT
 * or SIGTERM, before it passes the signal on: the file is complete whatever CMD does with
 * the signal. End of file: nettrace-record is gone; recording goes on until exit. */
static void handle_env_control(void)
{
	char buf[64];
	ssize_t n = read(rt.env_control_fd, buf, sizeof buf - 1);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		buf[n] = 0;
		if (strstr(buf, "stop"))
			env_finalize();
		return;
	}
	close(rt.env_control_fd);
	rt.env_control_fd = -1;
}

static void handle_env_signal(void)
{
	int sig = atomic_exchange(&rt.env_signal, 0);
	env_finalize();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(sig, &sa, NULL);
	kill(getpid(), sig);
}

static int env_u64(const char *name, uint64_t *out)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-') {
		env_log(NULL, "ignoring a malformed environment variable");
		return -1;
	}
	*out = x;
	return 1;
}

/* The file of a child process (--follow-children): the recorded process's OUTPUT with the
 * child's pid before a ".nettrace" suffix ("out.nettrace" -> "out.PID.nettrace"), or after
 * the name when it has no such suffix ("out" -> "out.PID"). */
static int child_path(const char *path, pid_t pid, char *out, size_t len)
{
	size_t n = strlen(path), sl = strlen(".nettrace");
	int k;
	if (n > sl && strcmp(path + n - sl, ".nettrace") == 0)
		k = snprintf(out, len, "%.*s.%d.nettrace", (int)(n - sl), path, (int)pid);
	else
		k = snprintf(out, len, "%s.%d", path, (int)pid);
	return k > 0 && (size_t)k < len ? 0 : -1;
}

/* Opens the environment session on path with the settings of the NETTRACE_* variables
 * and installs the SIGINT/SIGTERM handlers that finalize it. */
static void env_open(const char *path)
{
	nts_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.log_fn = env_log;
	const char *mode = getenv("NETTRACE_MODE");
	if (mode && strcmp(mode, "samplepoint") == 0)
		o.mode = NTS_MODE_SAMPLEPOINT;
	uint64_t v;
	if (env_u64("NETTRACE_SIGNAL", &v) == 1)
		o.signo = (int)v;
	if (env_u64("NETTRACE_DEPTH", &v) == 1)
		o.max_depth = (uint32_t)v;
	if (env_u64("NETTRACE_REALTIME", &v) == 1 && v == 0)
		o.no_realtime = 1;
	nts_session_opts so;
	memset(&so, 0, sizeof so);
	so.sz = sizeof so;
	so.path = path;
	so.fd = -1;
	if (env_u64("NETTRACE_INTERVAL", &v) == 1)
		so.interval_ms = v > 100000 ? 100000 : (uint32_t)v;
	const char *hz = getenv("NETTRACE_FREQUENCY");
	if (hz && *hz)
		so.hz = strtod(hz, NULL);
	const char *sched = getenv("NETTRACE_SCHEDULE");
	if (sched && strcmp(sched, "poisson") == 0)
		so.schedule = NTS_SCHED_POISSON;
	if (env_u64("NETTRACE_SEED", &v) == 1)
		so.seed = v;
	snprintf(rt.env_path, sizeof rt.env_path, "%s", path);
	nt_error err;
	nt_error_clear(&err);
	int rc = nts_start(&o, &err);
	if (rc == 0)
		rc = nts_session_open(&rt.env_sess, &so, &err);
	if (rc) {
		env_log(NULL, err.msg);
		nts_stats st;
		memset(&st, 0, sizeof st);
		env_report_close(rc, &st, &err);
		return;
	}
	if (rt.env_child)
		env_status("child %d start path=%s\n", (int)getpid(), path);
	int sigs[] = {SIGINT, SIGTERM};
	for (size_t i = 0; i < 2; i++) {
		struct sigaction old, sa;
		if (sigaction(sigs[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL) {
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = env_signal_handler;
			if (o.mode == NTS_MODE_SAMPLEPOINT) {
				struct sigevent se;
				memset(&se, 0, sizeof se);
				se.sigev_notify = SIGEV_SIGNAL;
				se.sigev_signo = sigs[i];
				rt.sp_have_timer[i] = timer_create(CLOCK_MONOTONIC, &se,
								   &rt.sp_timer[i]) == 0;
				sa.sa_handler = env_sp_signal_handler;
			}
			sigemptyset(&sa.sa_mask);
			sa.sa_flags = SA_RESTART;
			sigaction(sigs[i], &sa, NULL);
		}
	}
}

/* A forked child of a recorded process with --follow-children (atfork_child, after the
 * parent's state is dropped): a session of its own, in its own file. */
static void env_start_child(void)
{
	const char *path = getenv("NETTRACE_OUTPUT");
	char cp[4096];
	if (!path || !*path || child_path(path, getpid(), cp, sizeof cp))
		return;
	rt.env_child = 1;
	env_open(cp);
}

/* The status pipe of nettrace-record: NETTRACE_STATUS_FD, when that descriptor is open
 * and, if NETTRACE_STATUS_ID ("DEV:INODE") is set, still the same pipe (a descendant may
 * have reused the number). -1 otherwise. */
static int status_fd_env(void)
{
	uint64_t fd;
	if (env_u64("NETTRACE_STATUS_FD", &fd) != 1 || fd <= 2 || fd >= 65536 ||
	    fcntl((int)fd, F_GETFD) < 0)
		return -1;
	const char *id = getenv("NETTRACE_STATUS_ID");
	if (id && *id) {
		struct stat sb;
		char want[64];
		if (fstat((int)fd, &sb) != 0)
			return -1;
		snprintf(want, sizeof want, "%llu:%llu", (unsigned long long)sb.st_dev,
			 (unsigned long long)sb.st_ino);
		if (strcmp(want, id) != 0)
			return -1;
	}
	return (int)fd;
}

__attribute__((constructor)) static void nts_env_start(void)
{
	const char *path = getenv("NETTRACE_OUTPUT");
	if (!path || !*path)
		return;
	uint64_t v;
	rt.env_follow = env_u64("NETTRACE_FOLLOW", &v) == 1 && v == 1;
	uint64_t pid;
	int have_pid = env_u64("NETTRACE_PID", &pid) == 1;
	char cp[4096];
	if (have_pid && pid != (uint64_t)getpid()) {
		/* a descendant of the recorded process (it exec'd): recorded into its own file
		 * with --follow-children, else not at all, and said so on the status pipe when
		 * its descriptor is still that pipe (posix_spawn runs no fork handlers) */
		if (!rt.env_follow || child_path(path, getpid(), cp, sizeof cp)) {
			int sfd = status_fd_env();
			if (sfd >= 0)
				dprintf(sfd, "fork %d\n", (int)getpid());
			return;
		}
		rt.env_child = 1;
		path = cp;
	}
	if (!have_pid) {
		/* children that exec inherit the environment: they must not write this file
		 * too (an exec in this process keeps the pid, and records again) */
		char buf[32];
		snprintf(buf, sizeof buf, "%ld", (long)getpid());
		setenv("NETTRACE_PID", buf, 1);
	}
	/* kept across exec: a new program image (same pid) reports again */
	rt.env_status_fd = status_fd_env();
	uint64_t fd;
	if (!rt.env_child && env_u64("NETTRACE_CONTROL_FD", &fd) == 1 && fd > 2 && fd < 65536 &&
	    fcntl((int)fd, F_GETFD) >= 0) {
		rt.env_control_fd = (int)fd;
		fcntl(rt.env_control_fd, F_SETFL, fcntl(rt.env_control_fd, F_GETFL) | O_NONBLOCK);
	}
	env_open(path);
}

/* Finalizes and reports the environment session, then closes whatever the program left
 * open, so its files end properly. wait_ns > 0: give up (leave the files as their last
 * flush left them) if the lock is not free within that time (an _exit from a signal
 * handler that interrupted a thread holding it). A forked child has no sampler
 * (atfork_child) unless it records with --follow-children. */
static void env_stop(uint64_t wait_ns)
{
	nts_stats st;
	nt_error err;
	nt_error_clear(&err);
	memset(&st, 0, sizeof st);
	int have = 0, rc = 0;
	nts_guard++;
	if (wait_ns) {
		uint64_t t0 = nts_now();
		while (pthread_mutex_trylock(&rt.mu) != 0) {
			if (nts_now() - t0 > wait_ns) {
				nts_guard--;
				return;
			}
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	} else {
		pthread_mutex_lock(&rt.mu);
	}
	nts_session *s = rt.env_sess;
	if (s && s->owner_pid == getpid()) {
		rc = session_close_locked(s, &st, &err);
		have = 1;
	}
	pthread_mutex_unlock(&rt.mu);
	nts_guard--;
	if (have)
		env_report_close(rc, &st, &err);
	nts_stop(NULL);
}

/* At exit() (or unload). */
__attribute__((destructor)) static void nts_env_stop(void)
{
	env_stop(0);
}

/* _exit and _Exit end the process without atexit handlers or destructors (shells and
 * forked children end so): interposed like dlclose, they finalize the recording first.
 * Not in a vfork child, which shares the parent's memory (its pid differs from the one
 * the sampler runs in), nor when the calling thread is inside the sampler (a signal
 * handler that interrupted it). A raw exit_group system call cannot be caught: the file
 * then ends at its last flush (every NTS_DEFAULT_FLUSH_MS). */
#define EXIT_LOCK_WAIT_NS 1000000000u
typedef void (*exit_fn)(int);

static void exit_common(void)
{
	if (!nts_guard && rt.started && (pid_t)syscall(SYS_getpid) == nts_g.pid)
		env_stop(EXIT_LOCK_WAIT_NS);
}

void exit_u(int status) __attribute__((noreturn));
__asm__(".symver exit_u, _exit@@GLIBC_2.2.5");
NTS_API void exit_u(int status)
{
	static exit_fn real;
	exit_common();
	if (!real)
		real = (exit_fn)dlsym(RTLD_NEXT, "_exit");
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

void exit_U(int status) __attribute__((noreturn));
__asm__(".symver exit_U, _Exit@@GLIBC_2.2.5");
NTS_API void exit_U(int status)
{
	static exit_fn real;
	exit_common();
	if (!real)
		real = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}
