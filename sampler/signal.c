/* SPDX-License-Identifier: MIT */
/* signal.c - the sampling signal handler and the clocks it uses. Only async-signal-safe
 * code lives here (STYLE.md, Sampler): no malloc, no stdio, no locks, nothing from
 * libtrace. The handler takes its request from its thread's slot, records the time, the
 * thread's CPU time, whether it was blocked in a system call, and the stack (unwind.c)
 * into the slot's ring allocated in advance, and publishes the record with a release
 * store; the sampler thread drains the ring (drain in sampler.c).
 *
 * Signals that are not ours are ignored: the sender must be this process (si_pid) with
 * SI_QUEUE (rt_tgsigqueueinfo carries the slot index in si_value), and the slot must hold
 * a request. A thread-local guard (as uftrace's mcount_guard_recursion) drops the sample
 * when the signal lands in the sampler's own code on that thread; a full ring drops it
 * too; both are counted and reported in the trace (SamplerStats.Dropped).
 * Not here: sending the signals and draining (sampler.c), the unwinder (unwind.c). */
#include "internal.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* The sampler is a process-wide runtime (one signal handler, one set of threads), so its
 * state is global, unlike libtrace's. Zero-initialised: inactive. */
nts_shared nts_g = {.sp_gen = 1}; /* 1: a new samplepoint thread (gen 0) syncs first */

/* initial-exec: a global-dynamic TLS access may call __tls_get_addr, which can allocate
 * on a thread's first access; that must not happen inside the handler. */
__thread int nts_guard __attribute__((tls_model("initial-exec")));
__thread pid_t nts_tid_cache __attribute__((tls_model("initial-exec")));

uint64_t nts_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t nts_thread_cpu(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t nts_tid_cpu(pid_t tid)
{
	/* The kernel's per-thread CPU clock of a TID of our thread group:
	 * MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) = (~tid << 3) | CPUCLOCK_PERTHREAD (4) |
	 * CPUCLOCK_SCHED (2), as async-profiler's OS::threadCpuTime does. */
	clockid_t id = (clockid_t)(((~(uint32_t)tid) << 3) | 6u);
	struct timespec ts;
	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* 1 when the thread was blocked in a system call when the signal came (sampler-design §4,
 * async-profiler WallClock::getThreadState): with SA_RESTART the kernel rewinds the pc to
 * the syscall instruction (0f 05) of a restartable call (futex, read, ...); a call that
 * cannot restart (nanosleep, poll, epoll_wait) returns -EINTR with the pc just after it.
 * Code bytes are read only inside a known object. */
static int blocked_in_syscall(const nts_modsnap *snap, uint64_t rip, int64_t rax)
{
	const nts_modseg *seg = nts_segment(snap, rip);
	if (!seg)
		return 0;
	const uint8_t *p = (const uint8_t *)(uintptr_t)rip;
	if (rip + 2 <= seg->hi && p[0] == 0x0f && p[1] == 0x05)
		return 1;
	if (rip - seg->lo >= 2 && p[-2] == 0x0f && p[-1] == 0x05 && rax == -EINTR)
		return 1;
	return 0;
}

static void drop(nts_slot *t, uint64_t mask)
{
	atomic_fetch_or_explicit(&t->drop_mask, mask, memory_order_relaxed);
	atomic_fetch_add_explicit(&t->drop_count, 1, memory_order_release);
}

void nts_signal_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	(void)sig;
	if (!si || !ucv || si->si_code != SI_QUEUE || si->si_pid != nts_g.pid ||
	    !atomic_load_explicit(&nts_g.active, memory_order_acquire))
		goto out;
	uint32_t idx = (uint32_t)si->si_value.sival_int;
	if (!nts_g.slots || idx >= nts_g.nslots)
		goto out;
	nts_slot *t = &nts_g.slots[idx];
	uint64_t mask = atomic_exchange_explicit(&t->req_mask, 0, memory_order_acq_rel);
	if (!mask)
		goto out; /* stale: the request was withdrawn or already served */
	if (nts_guard) {
		drop(t, mask);
		goto done;
	}
	nts_guard = 1;
	pid_t tid = nts_tid_cache;
	if (!tid)
		tid = nts_tid_cache = (pid_t)syscall(SYS_gettid);
	uint32_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);
	if (tid != atomic_load_explicit(&t->tid, memory_order_relaxed) || !t->recs ||
	    head - tail >= nts_g.nrecs) {
		drop(t, mask);
		goto unguard;
	}
	nts_record *r = (nts_record *)(void *)(t->recs + (size_t)(head % nts_g.nrecs) *
							   nts_g.rec_size);
	r->ts_ns = nts_now();
	r->req_ns = t->req_ns; /* ordered by the acquire exchange of req_mask */
	r->req_round = t->req_round;
	r->req_seq = t->req_seq;
	r->cpu_ns = nts_thread_cpu();
	const ucontext_t *uc = ucv;
	nts_regs regs = {(uint64_t)uc->uc_mcontext.gregs[REG_RIP],
			 (uint64_t)uc->uc_mcontext.gregs[REG_RSP],
			 (uint64_t)uc->uc_mcontext.gregs[REG_RBP]};
	const nts_modsnap *snap = nts_snap_get();
	r->state = blocked_in_syscall(snap, regs.pc, (int64_t)uc->uc_mcontext.gregs[REG_RAX])
			   ? NTS_ST_BLOCKED
			   : NTS_ST_RUNNING;
	/* The stack window: the mapping the sampler found for this thread's stack when the
	 * sp is in it (exact, no probing); otherwise unknown (each page probed). */
	uint64_t hi = 0;
	if (regs.sp >= t->stack_lo && regs.sp < t->stack_hi)
		hi = t->stack_hi;
	r->sp = regs.sp;
	r->depth = nts_unwind(snap, &regs, hi, r->ips, nts_g.max_depth, t->cache);
	nts_snap_put(snap);
	r->mask = mask;
	r->tid = (uint32_t)tid;
	int cpu = sched_getcpu();
	r->cpu = cpu < 0 ? 0xFFFFFFFFu : (uint32_t)cpu;
	/* The handler's own cost, for the statistics: its elapsed time (a vDSO clock read)
	 * instead of a second CPU-clock read, a system call of ~0.5 us in a VM. It does not
	 * block, so the two differ only if it is preempted. */
	r->cpu_end_ns = r->cpu_ns + (nts_now() - r->ts_ns);
	atomic_store_explicit(&t->head, head + 1, memory_order_release);
unguard:
	nts_guard = 0;
done:
	atomic_store_explicit(&t->pending, 0, memory_order_release);
out:
	errno = saved_errno;
}
