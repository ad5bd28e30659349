/* SPDX-License-Identifier: MIT */
/* sampler.c - the sampler runtime: nts_start/nts_stop, sessions, the sampler thread and
 * its deadline loop, sampling rounds, draining the per-thread buffers, fork handling.
 *
 * The sampler thread (doc/sampler-design.md §0): each session keeps its own cumulative
 * schedule (schedule.c); the thread sleeps on CLOCK_MONOTONIC until the earliest deadline
 * (a futex wait, so adding or removing a session wakes it at once), takes one
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
 * Locking: nts_rt.mu serialises everything but the handler and the samplepoint fast path.
 * The sampler thread holds it except while sleeping.
 * Not here: the handler (signal.c), unwinding (unwind.c), schedules (schedule.c), the
 * output format (drain.c), samplepoint mode (samplepoint.c), the thread registry
 * (threads.c), the environment-driven start (env.c), the interposers (interpose.c); the
 * state they share is nts_rt (runtime.h).
 *
 * Size: about 1,260 lines, over the project's ~1,200. What is left is one lock's work:
 * every part runs under nts_rt.mu and shares this file's static helpers (slot_retire from
 * the sweep, a round and nts_stop; count_dropped from the drain and a round; wake_sampler
 * from session open, close and stop), which a further split would have to export. */
#include "runtime.h"

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
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../libtrace/internal.h"
nts_runtime nts_rt = {.mu = PTHREAD_MUTEX_INITIALIZER, .env_status_fd = -1,
		      .env_control_fd = -1};

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void rt_log(const char *fmt, ...) NT_PRINTF(1, 2);
static void rt_log(const char *fmt, ...)
{
	if (!nts_rt.o.log_fn)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	nts_rt.o.log_fn(nts_rt.o.log_ctx, buf);
}

/* The sampler thread sleeps on a futex (cheaper than polling a descriptor: it wakes up
 * a thousand times a second): a waker bumps the word and wakes it; the thread compares
 * with the value it read before it last looked at the state. Async-signal-safe. */
void nts_rt_wake(void)
{
	if (!atomic_load(&nts_rt.can_wake))
		return;
	atomic_fetch_add(&nts_rt.wake_word, 1);
	syscall(SYS_futex, &nts_rt.wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void wake_sampler(void)
{
	nts_rt_wake();
}

/* ---------------------------------------------------------------------------------------
 * Module snapshot
 * ------------------------------------------------------------------------------------- */

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
void nts_rt_modules_check(uint64_t now, int force)
{
	retired_free();
	/* after a dlclose: now, and the snapshot is trusted again once rebuilt */
	uint64_t unloads = atomic_load(&nts_g.unload_end);
	if (unloads != atomic_load(&nts_g.snap_gen))
		force = 1;
	if (!force && now < nts_rt.mod_check_ns)
		return;
	nts_rt.mod_check_ns = now + MODULE_CHECK_NS;
	nts_modsnap *snap = NULL;
	int rc = nts_modules_refresh(&nts_rt.ml, &snap, nts_rt.mod_gen + 1);
	if (rc < 0)
		return; /* the old snapshot stays, untrusted if an unload is pending */
	if (rc == 0) {
		atomic_store(&nts_g.snap_gen, unloads); /* the maps read after it: unchanged */
		return;
	}
	nts_rt.mod_gen++;
	nts_modsnap *old = atomic_exchange(&nts_g.snap, snap);
	if (old && nretired < RETIRED_MAX)
		retired[nretired++] = old;
	atomic_store(&nts_g.snap_gen, unloads);
	for (int i = 0; i < NTS_MAX_SESSIONS; i++)
		if (nts_rt.sess[i])
			nts_out_modules(nts_rt.sess[i], &nts_rt.ml, now, nts_rt.sampler_tid);
}

/* ---------------------------------------------------------------------------------------
 * Thread registry (threads.c): retiring a slot drops the rounds that waited for it
 * ------------------------------------------------------------------------------------- */

static void count_dropped(uint64_t mask, uint64_t n);

static void slot_retire(uint32_t pos)
{
	nts_slot *t = &nts_g.slots[nts_rt.active[pos]];
	for (uint32_t k = 0; k < t->nbacklog; k++)
		count_dropped(t->backlog_mask[k], 1);
	nts_perf_release(t);
	nts_thr_retire(pos);
}

/* Lists the process's threads; creates slots for new ones and retires the ones gone. */
static void sweep(void)
{
	uint64_t gen = nts_thr_list();
	if (!gen)
		return;
	for (uint32_t i = 0; i < nts_rt.nactive;) {
		nts_slot *t = &nts_g.slots[nts_rt.active[i]];
		if (t->seen_sweep != gen)
			slot_retire(i);
		else
			i++;
	}
}

/* Samplepoint threads (samplepoint.c) read the set of sessions through nts_g: the check
 * period, a quarter of the shortest interval open (0: none, or not in samplepoint mode),
 * and a generation that changes whenever the sessions do. */
static void sp_sessions_changed(uint64_t min_interval_ns)
{
	atomic_store(&nts_g.sp_check_ns, min_interval_ns / 4);
	atomic_fetch_add(&nts_g.sp_gen, 1);
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
	const nts_round *rd = nts_rt.rounds ? &nts_rt.rounds[seq % NTS_ROUND_HIST] : NULL;
	return rd && rd->seq == seq ? rd : NULL;
}

/* Writes one sample (record header r, stack ips) of round rd (NULL: at r->ts_ns) to the
 * live sessions of r->mask, with the thread's name first for a session that has not seen
 * it. */
static void write_record(nts_slot *t, const nts_record *r, const uint64_t *ips,
			 const nts_round *rd, pid_t capture)
{
	uint64_t mask = r->mask & nts_rt.live_mask;
	if (t && (t->name_ts == 0 || r->ts_ns - t->name_ts > NAME_REFRESH_NS)) {
		char name[32];
		nts_read_comm((pid_t)r->tid, name, sizeof name);
		if (strcmp(name, t->name) != 0) {
			memcpy(t->name, name, sizeof name);
			t->named_mask = 0;
		}
		t->name_ts = r->ts_ns;
	}
	while (mask) {
		int i = __builtin_ctzll(mask);
		mask &= mask - 1;
		struct nts_session *s = nts_rt.sess[i];
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
	mask &= nts_rt.live_mask;
	while (mask) {
		int i = __builtin_ctzll(mask);
		mask &= mask - 1;
		if (nts_rt.sess[i])
			nts_rt.sess[i]->st.dropped += n;
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
	if (nts_rt.nitems == nts_rt.items_cap) {
		size_t ncap = nts_rt.items_cap ? nts_rt.items_cap * 2 : 256;
		nts_item *ni = realloc(nts_rt.items, ncap * sizeof *ni);
		if (!ni)
			return -1;
		nts_rt.items = ni;
		nts_rt.items_cap = ncap;
	}
	nts_item *it = &nts_rt.items[nts_rt.nitems++];
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
void nts_rt_drain(void)
{
	nts_rt.nitems = 0;
	for (uint32_t i = 0; i < nts_rt.nactive; i++) {
		uint32_t idx = nts_rt.active[i];
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
	if (nts_rt.nitems > 1)
		qsort(nts_rt.items, nts_rt.nitems, sizeof *nts_rt.items, item_cmp);
	for (size_t k = 0; k < nts_rt.nitems; k++) {
		const nts_item *it = &nts_rt.items[k];
		nts_record *r = it->rec;
		nts_slot *t = &nts_g.slots[it->slot];
		const nts_round *rd = round_get(it->round);
		nts_record h = *r; /* the header, with this item's round and sessions */
		h.ts_ns = rd ? rd->now : r->req_ns;
		h.mask = it->mask;
		write_record(t, &h, r->ips, rd, nts_rt.sampler_tid);
		if (it->primary) {
			uint64_t hcpu = r->cpu_end_ns > r->cpu_ns ? r->cpu_end_ns - r->cpu_ns : 0;
			for (uint64_t m = it->mask & nts_rt.live_mask; m; m &= m - 1)
				nts_rt.sess[__builtin_ctzll(m)]->st.handler_cpu_ns += hcpu;
			t->last_cpu = r->cpu_end_ns;
			memcpy(t->last, r, sizeof *r + r->depth * sizeof(uint64_t));
			t->have_last = 1;
			t->last_perf = 0;
			if (!t->stack_hi && !atomic_load(&t->pending))
				nts_stack_mapping_of(r->sp, &t->stack_lo, &t->stack_hi);
		}
	}
	/* every record up to the heads read above is written: free the space */
	for (uint32_t i = 0; i < nts_rt.nactive; i++) {
		nts_slot *t = &nts_g.slots[nts_rt.active[i]];
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
	si.si_uid = nts_rt.uid;
	si.si_value.sival_int = (int)idx;
	return (int)syscall(SYS_rt_tgsigqueueinfo, nts_g.pid, tid, nts_g.signo, &si);
}

/* The perf_events backend: the thread's newest sample since the last round (it ran
 * user code since then) is its sample for this round, written at once as a blocked
 * thread's is. Without a new one, a thread that is runnable now (running, or waiting for
 * a CPU: /proc stat R) and ran less than the period since its last perf sample (it got
 * part of a CPU, or none) is written with that sample's stack again, at most one period
 * of its CPU old, with its CPU time now, as running; a thread that is not runnable
 * (blocked: its stack is elsewhere now), or ran a period without a sample (in the
 * kernel), gets a signal. 1 when written. The event is opened at the thread's first
 * round. */
static int perf_sample(nts_slot *t, pid_t tid, uint64_t now, uint64_t mask, const nts_round *rd)
{
	if (t->perf_state == NTS_PERF_NONE && nts_rt.perf_period_ns) {
		if (nts_rt.perf_nopen >= nts_rt.perf_max)
			t->perf_state = NTS_PERF_FAILED; /* the program's descriptors come first */
		else if (nts_perf_open(t, tid, nts_rt.perf_period_ns, nts_tid_cpu(tid)) == 0)
			nts_rt.perf_nopen++;
	}
	if (t->perf_state != NTS_PERF_OPEN)
		return 0;
	nts_record r;
	uint64_t *ips = nts_rt.perf_ips;
	int got = nts_perf_take(t, &r, ips, nts_g.max_depth, &nts_rt.perf_cache,
				nts_rt.perf_scratch, NTS_PERF_SCRATCH, NULL);
	/* a sample older than about two intervals (the thread was waiting for a signal's
	 * answer meanwhile) is not this round's */
	if (got && ((pid_t)r.tid != tid ||
		    r.ts_ns + 2 * NTS_PERF_PER_ROUND * nts_rt.perf_period_ns < now))
		got = 0;
	/* blocked since (its last switch record): its stack is elsewhere now; the signal
	 * takes it, and the rounds after cost nothing (the CPU clock stays) */
	if (t->perf_sw == NTS_SW_BLOCKED)
		return 0;
	/* CpuTimeNs: the thread's CPU clock now (the sample's stack is at most a period of
	 * its CPU older), one clock for every sample of the thread */
	if (!got && (!t->have_last || !t->last_perf))
		return 0;
	uint64_t cpu = nts_perf_cpu(t, tid, nts_now());
	if (got) {
		t->perf_cpu = cpu;
	} else {
		if (cpu > t->perf_cpu + t->perf_period || nts_perf_runnable(t, tid) != 1)
			return 0;
		r = *t->last; /* its processor too: where that stack was seen last */
		ips = t->last->ips;
	}
	if (cpu < t->last_cpu)
		cpu = t->last_cpu; /* a handler's end time may run ahead of the clock */
	r.cpu_ns = r.cpu_end_ns = cpu;
	r.ts_ns = now;
	r.mask = mask;
	write_record(t, &r, ips, rd, nts_rt.sampler_tid);
	if (got) {
		memcpy(t->last, &r, sizeof r);
		memcpy(t->last->ips, ips, r.depth * sizeof *ips);
	}
	t->have_last = 1;
	t->last_perf = 1;
	t->last_cpu = r.cpu_ns;
	for (uint64_t m = mask & nts_rt.live_mask; m; m &= m - 1)
		nts_rt.sess[__builtin_ctzll(m)]->st.perf++;
	return 1;
}

/* The CPU clock of a thread last seen blocked. With perf_events, a thread whose last
 * switch record put it off the CPU blocked, and that has not been switched in since the
 * clock was last read, has used no CPU since: that reading, without a system call. */
static uint64_t idle_cpu(nts_slot *t, pid_t tid)
{
	if (t->perf_state == NTS_PERF_OPEN && t->perf_sw == NTS_SW_BLOCKED &&
	    t->perf_sw_in == t->idle_sw_in && t->idle_cpu)
		return t->idle_cpu;
	uint64_t cpu = nts_tid_cpu(tid);
	t->idle_cpu = cpu;
	t->idle_sw_in = t->perf_sw_in;
	return cpu;
}

static void take_round(uint64_t now, uint64_t due, const nts_round *rd)
{
	/* Listing /proc/self/task costs about as much as the rest of a round: do it at most
	 * every SWEEP_NS. A new thread waits that long for its first sample; a thread gone
	 * since is noticed when its signal fails (ESRCH). */
	if (!nts_rt.sweep_ns || now - nts_rt.sweep_ns >= SWEEP_NS) {
		/* the directory's link count is 2 + its threads (one fstat): an unchanged
		 * count skips the listing, up to SWEEP_FULL_NS (a thread that ended and one
		 * that started meanwhile keep the count) */
		struct stat dst;
		uint64_t links = nts_rt.task_dir && fstat(dirfd(nts_rt.task_dir), &dst) == 0
					 ? (uint64_t)dst.st_nlink
					 : 0;
		if (!links || links != nts_rt.sweep_links || now - nts_rt.sweep_full_ns >= SWEEP_FULL_NS) {
			sweep();
			nts_rt.sweep_full_ns = now;
			nts_rt.sweep_links = nts_rt.task_dir && fstat(dirfd(nts_rt.task_dir), &dst) == 0
						     ? (uint64_t)dst.st_nlink
						     : 0;
		}
		nts_rt.sweep_ns = now;
	}
	if (nts_rt.over_threads)
		count_dropped(due, nts_rt.over_threads);
	atomic_store(&nts_rt.in_round, 1); /* before exec_tid is read: see exec_prepare() */
	for (uint32_t i = 0; i < nts_rt.nactive;) {
		uint32_t idx = nts_rt.active[i];
		nts_slot *t = &nts_g.slots[idx];
		pid_t tid = atomic_load(&t->tid);
		uint64_t mask = 0;
		for (uint64_t m = due; m; m &= m - 1) {
			int k = __builtin_ctzll(m);
			if (nts_rt.sess[k] && thread_wanted(nts_rt.sess[k], tid))
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
		if (nts_rt.backend == NTS_BACKEND_PERF && perf_sample(t, tid, now, mask, rd)) {
			i++;
			continue;
		}
		/* the CPU clock is read only for a thread last seen blocked (one system call; a
		 * thread last seen running is signalled anyway) */
		uint64_t cpu = 0;
		if (t->have_last && t->last->state != NTS_ST_RUNNING &&
		    (cpu = idle_cpu(t, tid)) >= t->last_cpu && cpu - t->last_cpu <= IDLE_CPU_NS) {
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
			write_record(t, &r, t->last->ips, rd, nts_rt.sampler_tid);
			for (uint64_t m = mask & nts_rt.live_mask; m; m &= m - 1)
				nts_rt.sess[__builtin_ctzll(m)]->st.idle++;
			i++;
			continue;
		}
		if (tid == atomic_load(&nts_rt.exec_tid)) {
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
		for (uint64_t m = mask & nts_rt.live_mask; m; m &= m - 1)
			nts_rt.sess[__builtin_ctzll(m)]->st.signals++;
		i++;
	}
	atomic_store(&nts_rt.in_round, 0);
}

/* "Can't keep up": the sampler fell so far behind that it skipped rounds (more than
 * NTS_CATCHUP_MAX intervals, schedule.c). At most one warning a second. */
static void warn_behind(struct nts_session *s, uint64_t now, uint64_t behind, uint64_t missed0)
{
	if (s->sched.missed == missed0)
		return;
	if (nts_rt.last_warn_ns && now - nts_rt.last_warn_ns < 1000000000u)
		return;
	nts_rt.last_warn_ns = now;
	nts_rt.warnings++;
	rt_log("warning: the sampler fell %.1f ms behind its %.3f ms schedule and skipped rounds "
	       "(%" PRIu64 " missed, %" PRIu64 " late so far): the machine is too busy for this "
	       "rate; results stay unbiased but have fewer samples",
	       (double)behind / 1e6, (double)s->sched.interval_ns / 1e6, s->sched.missed,
	       s->sched.late);
}

/* The sampler thread's CPU time since the last call, charged to the live sessions (at
 * flushes and closes: one system call, not one per round). */
static void charge_sampler_cpu(void)
{
	if (!nts_rt.have_thread || !nts_rt.sampler_tid)
		return;
	uint64_t cpu = nts_tid_cpu(nts_rt.sampler_tid); /* works from any thread of the process */
	if (cpu <= nts_rt.sampler_cpu)
		return;
	for (uint64_t m = nts_rt.live_mask; m; m &= m - 1)
		nts_rt.sess[__builtin_ctzll(m)]->st.sampler_cpu_ns += cpu - nts_rt.sampler_cpu;
	nts_rt.sampler_cpu = cpu;
}

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
	if (!nts_rt.o.no_realtime) {
		struct sched_param sp = {.sched_priority = 1};
		nts_rt.realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
	}
	prctl(PR_SET_NAME, "nts-sampler", 0, 0, 0);
	atomic_store(&nts_rt.thread_tid, gettid_()); /* start_locked() waits for it */
	pthread_mutex_lock(&nts_rt.mu);
	while (!nts_rt.stop_req) {
		uint32_t seen = atomic_load(&nts_rt.wake_word); /* before the state is read */
		if (atomic_load(&nts_rt.env_signal)) {
			nts_rt.env_on_signal();
			continue;
		}
		uint64_t now = nts_now();
		uint64_t wake = UINT64_MAX;
		for (uint64_t m = nts_rt.sched_mask; m; m &= m - 1) {
			struct nts_session *s = nts_rt.sess[__builtin_ctzll(m)];
			if (s->sched.next_ns < wake)
				wake = s->sched.next_ns;
			if (s->next_flush_ns < wake)
				wake = s->next_flush_ns;
		}
		/* nettrace-record's control pipe: looked at every CONTROL_POLL_NS */
		if (nts_rt.env_control_fd >= 0) {
			if (now >= nts_rt.control_poll_ns) {
				struct pollfd pfd = {nts_rt.env_control_fd, POLLIN, 0};
				nts_rt.control_poll_ns = now + CONTROL_POLL_NS;
				if (poll(&pfd, 1, 0) > 0 && pfd.revents) {
					nts_rt.env_on_control();
					continue;
				}
			}
			if (nts_rt.control_poll_ns < wake)
				wake = nts_rt.control_poll_ns;
		}
		if (wake > now + DUE_SLACK_NS) {
			struct timespec ts, *tsp = NULL;
			if (wake != UINT64_MAX) {
				ts.tv_sec = (time_t)(wake / 1000000000u);
				ts.tv_nsec = (long)(wake % 1000000000u);
				tsp = &ts;
			}
			pthread_mutex_unlock(&nts_rt.mu);
			/* an absolute CLOCK_MONOTONIC deadline; returns at once if woken since */
			syscall(SYS_futex, &nts_rt.wake_word, FUTEX_WAIT_BITSET_PRIVATE, seen, tsp, NULL,
				FUTEX_BITSET_MATCH_ANY);
			pthread_mutex_lock(&nts_rt.mu);
			continue;
		}
		now = nts_now();
		nts_rt_drain();
		nts_rt_modules_check(now, 0);
		uint64_t due = 0;
		nts_round *rd = &nts_rt.rounds[(nts_rt.round_seq + 1) % NTS_ROUND_HIST];
		for (uint64_t m = nts_rt.sched_mask; m; m &= m - 1) {
			int i = __builtin_ctzll(m);
			struct nts_session *s = nts_rt.sess[i];
			if (s->sched.next_ns <= now + DUE_SLACK_NS) {
				rd->ideal[i] = s->sched.next_ns;
				uint64_t missed0 = s->sched.missed;
				uint64_t behind = nts_sched_advance(&s->sched, now);
				warn_behind(s, now, behind, missed0);
				due |= 1ull << i;
			}
		}
		if (due) {
			rd->seq = ++nts_rt.round_seq;
			rd->now = now;
			take_round(now, due, rd);
		}
		if (nts_rt.only_sampler && nts_rt.mode == NTS_MODE_SIGNAL) {
			/* as glibc does when the last thread ends: exit(0), which runs the
			 * program's atexit handlers and our destructor (it finalizes every
			 * session; joining this thread from itself fails at once) */
			if (nts_rt.env_finalize)
				nts_rt.env_finalize();
			pthread_mutex_unlock(&nts_rt.mu);
			exit(0);
		}
		int flushing = 0;
		for (uint64_t m = nts_rt.sched_mask; m && !flushing; m &= m - 1)
			flushing = nts_rt.sess[__builtin_ctzll(m)]->next_flush_ns <= now + DUE_SLACK_NS;
		if (flushing)
			charge_sampler_cpu();
		for (uint64_t m = nts_rt.sched_mask; m; m &= m - 1) {
			struct nts_session *s = nts_rt.sess[__builtin_ctzll(m)];
			if (s->next_flush_ns <= now + DUE_SLACK_NS) {
				nts_out_flush(s, now, nts_rt.sampler_tid);
				s->next_flush_ns = now + s->flush_ns;
			}
		}
	}
	pthread_mutex_unlock(&nts_rt.mu);
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
	pthread_mutex_lock(&nts_rt.mu);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&nts_rt.mu);
}

/* The child has one thread and no sampler thread: it does not inherit the sampler. Its
 * copies of the session files are closed without writing (the parent owns the files). */
static void atfork_child(void)
{
	int had_env = nts_rt.env_sess != NULL;
	if (had_env && nts_rt.env_status_fd >= 0 && !nts_rt.env_follow) {
		/* nettrace-record says how many processes were not recorded */
		char buf[32];
		int n = snprintf(buf, sizeof buf, "fork %d\n", (int)getpid());
		if (n > 0) {
			ssize_t w = write(nts_rt.env_status_fd, buf, (size_t)n);
			(void)w;
		}
	}
	pthread_mutex_init(&nts_rt.mu, NULL);
	atomic_store(&nts_g.active, 0);
	nts_g.pid = getpid();
	nts_tid_cache = 0;
	for (int i = 0; i < NTS_MAX_SESSIONS; i++) {
		if (nts_rt.sess[i]) {
			nts_out_abandon(nts_rt.sess[i]);
			free(nts_rt.sess[i]->threads);
			free(nts_rt.sess[i]);
			nts_rt.sess[i] = NULL;
		}
	}
	nts_rt.live_mask = nts_rt.sched_mask = 0;
	nts_rt.env_sess = NULL;
	if (nts_rt.env_status_fd >= 0 && !(had_env && nts_rt.env_follow))
		close(nts_rt.env_status_fd);
	if (!(had_env && nts_rt.env_follow))
		nts_rt.env_status_fd = -1;
	if (nts_rt.env_control_fd >= 0)
		close(nts_rt.env_control_fd);
	nts_rt.env_control_fd = -1;
	atomic_store(&nts_rt.can_wake, 0);
	if (nts_rt.task_dir)
		closedir(nts_rt.task_dir);
	nts_rt.task_dir = NULL;
	nts_rt.sweep_ns = 0;
	nts_rt.nactive = 0;
	nts_rt.nfree = 0;
	for (uint32_t i = 0; i < nts_rt.slots_made; i++)
		nts_perf_forget(&nts_g.slots[i]);
	nts_rt.perf_nopen = 0;
	nts_rt.slots_made = 0;
	if (nts_rt.map_cap)
		memset(nts_rt.map_tid, 0, nts_rt.map_cap * sizeof *nts_rt.map_tid);
	nts_rt.have_thread = 0;
	nts_rt.started = 0;
	nts_rt.stop_req = 0;
	nts_rt.only_sampler = 0;
	nts_rt.main_gone = 0;
	sp_sessions_changed(0);
	if (had_env && nts_rt.env_follow)
		nts_rt.env_on_fork(); /* --follow-children: the child records into its own file */
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
	nts_rt.map_tid = calloc(cap, sizeof *nts_rt.map_tid);
	nts_rt.map_slot = calloc(cap, sizeof *nts_rt.map_slot);
	nts_rt.free_slots = calloc(nthreads, sizeof *nts_rt.free_slots);
	nts_rt.active = calloc(nthreads, sizeof *nts_rt.active);
	nts_slot *slots = calloc(nthreads, sizeof *slots);
	nts_rt.rounds = calloc(NTS_ROUND_HIST, sizeof *nts_rt.rounds);
	if (!nts_rt.map_tid || !nts_rt.map_slot || !nts_rt.free_slots || !nts_rt.active || !slots || !nts_rt.rounds) {
		free(nts_rt.rounds);
		nts_rt.rounds = NULL;
		free(nts_rt.map_tid);
		free(nts_rt.map_slot);
		free(nts_rt.free_slots);
		free(nts_rt.active);
		free(slots);
		nts_rt.map_tid = NULL;
		nts_rt.map_slot = NULL;
		nts_rt.free_slots = nts_rt.active = NULL;
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "sampler: out of memory");
	}
	nts_rt.map_cap = cap;
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
	if (nts_rt.started)
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
	nts_rt.o = o;
	nts_rt.mode = o.mode;
	nts_g.pid = getpid();
	nts_rt.uid = getuid();
	nts_rt.mod_check_ns = 0;
	nts_rt_modules_check(nts_now(), 1);
	if (o.mode == NTS_MODE_SAMPLEPOINT) {
		nts_rt.sampler_tid = 0;
		nts_rt.started = 1;
		return 0;
	}
	if (o.backend < NTS_BACKEND_AUTO || o.backend > NTS_BACKEND_PERF)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: unknown backend %d", o.backend);
	int rc_b = nts_perf_choose(o.backend, err);
	if (rc_b)
		return rc_b;
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
	atomic_store(&nts_rt.can_wake, 1);
	nts_rt.stop_req = 0;
	atomic_store(&nts_g.active, 1);
	/* the sampler thread must not inherit the caller's blocked signals into a state that
	 * matters: it blocks everything itself first thing */
	int e = pthread_create(&nts_rt.thread, NULL, sampler_main, NULL);
	if (e) {
		atomic_store(&nts_g.active, 0);
		atomic_store(&nts_rt.can_wake, 0);
		return nt_fail_errno(err, e, "sampler: cannot create the sampler thread");
	}
	/* Sessions name the sampler thread as the capture thread of every event, from their
	 * first one on: wait for its id (the thread sets it before it takes nts_rt.mu). */
	while (!atomic_load(&nts_rt.thread_tid)) {
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	nts_rt.sampler_tid = atomic_exchange(&nts_rt.thread_tid, 0);
	nts_rt.sampler_cpu = 0;
	nts_rt.have_thread = 1;
	nts_rt.started = 1;
	return 0;
}

int nts_start(const nts_opts *opts, nt_error *err)
{
	nts_guard++;
	pthread_mutex_lock(&nts_rt.mu);
	int rc = start_locked(opts, err);
	pthread_mutex_unlock(&nts_rt.mu);
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
	for (uint64_t b = nts_rt.sched_mask; b; b &= b - 1) {
		uint64_t iv = nts_rt.sess[__builtin_ctzll(b)]->sched.interval_ns;
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
	if (!nts_rt.started) {
		int rc = start_locked(NULL, err);
		if (rc)
			return rc;
	}
	int idx = -1;
	for (int i = 0; i < NTS_MAX_SESSIONS; i++)
		if (!nts_rt.sess[i]) {
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
	s->uid = ++nts_rt.uid_counter;
	s->fd = -1;
	s->mode = nts_rt.mode;
	s->backend = nts_rt.backend;
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
		uint64_t x = nts_now() ^ ((uint64_t)getpid() << 32) ^ (++nts_rt.seed_counter << 48);
		nts_rng r;
		nts_rng_seed(&r, x);
		seed = nts_rng_next(&r) | 1;
	}
	s->seed = seed;
	s->st.seed = seed;
	s->st.interval_ns = interval_ns;
	s->flush_ns = (uint64_t)(o.flush_ms ? o.flush_ms : NTS_DEFAULT_FLUSH_MS) * 1000000u;
	uint64_t now = nts_now();
	nts_rt_modules_check(now, 1);
	nts_sched_init(&s->sched, o.schedule, interval_ns, seed, now);
	pid_t capture = nts_rt.mode == NTS_MODE_SIGNAL ? nts_rt.sampler_tid : gettid_();
	if (!capture)
		capture = gettid_();
	int rc = nts_out_open(s, &nts_rt.ml, now, capture, err);
	if (rc) {
		nts_out_abandon(s);
		free(s->threads);
		free(s);
		if (o.path)
			unlink(o.path);
		return rc;
	}
	s->next_flush_ns = now + s->flush_ns;
	nts_rt.sess[idx] = s;
	nts_rt.live_mask |= 1ull << idx;
	nts_rt.sched_mask |= 1ull << idx;
	/* threads already known get their names written again for this session */
	for (uint32_t i = 0; i < nts_rt.nactive; i++)
		nts_g.slots[nts_rt.active[i]].named_mask &= ~(1ull << idx);
	if (nts_rt.mode == NTS_MODE_SAMPLEPOINT)
		sp_sessions_changed(min_interval());
	else
		nts_perf_retune(min_interval());
	wake_sampler();
	*out = s;
	return 0;
}

int nts_session_open(nts_session **out, const nts_session_opts *opts, nt_error *err)
{
	nts_guard++;
	pthread_mutex_lock(&nts_rt.mu);
	int rc = session_open_locked(out, opts, err);
	pthread_mutex_unlock(&nts_rt.mu);
	nts_guard--;
	return rc;
}

/* Waits (unlocked) until no request is pending, at most CLOSE_WAIT_NS: a handler still
 * running must not have its record lost. Called with nts_rt.mu held; returns with it held. */
static void wait_handlers(void)
{
	uint64_t end = nts_now() + CLOSE_WAIT_NS;
	for (;;) {
		int pending = 0;
		for (uint32_t i = 0; i < nts_rt.nactive && !pending; i++)
			pending = atomic_load(&nts_g.slots[nts_rt.active[i]].pending) != 0;
		if (!pending || nts_now() >= end)
			return;
		pthread_mutex_unlock(&nts_rt.mu);
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&nts_rt.mu);
	}
}

void nts_rt_finish_locked(int i, uint64_t now, nt_error *err, int *rc)
{
	struct nts_session *s = nts_rt.sess[i];
	charge_sampler_cpu();
	/* samples still owed to the session: a request whose handler has not run yet (the
	 * thread did not get a CPU during the close's wait), and the rounds waiting for it */
	uint64_t bit = 1ull << i;
	for (uint32_t k = 0; k < nts_rt.nactive; k++) {
		nts_slot *t = &nts_g.slots[nts_rt.active[k]];
		if (atomic_load(&t->pending) && (t->req_sent_mask & bit))
			s->st.dropped++;
		for (uint32_t b = 0; b < t->nbacklog; b++)
			if (t->backlog_mask[b] & bit)
				s->st.dropped++;
	}
	/* scheduled times that passed while the sampler was behind are missed, so that
	 * rounds + missed accounts for the whole session */
	if (nts_rt.mode == NTS_MODE_SIGNAL && now > s->sched.next_ns + DUE_SLACK_NS)
		s->sched.missed += (now - s->sched.next_ns) / s->sched.interval_ns + 1;
	pid_t capture = nts_rt.sampler_tid ? nts_rt.sampler_tid : gettid_();
	int r = nts_out_close(s, now, capture, err);
	if (r && !*rc)
		*rc = r;
	nts_rt.sess[i] = NULL;
	nts_rt.live_mask &= ~(1ull << i);
	nts_rt.sched_mask &= ~(1ull << i);
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

int nts_rt_close_locked(nts_session *s, nts_stats *stats, nt_error *err)
{
	int i = s->index;
	if (i < 0 || i >= NTS_MAX_SESSIONS || nts_rt.sess[i] != s)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "sampler: not an open session");
	nts_rt.sched_mask &= ~(1ull << i);
	if (nts_rt.mode == NTS_MODE_SIGNAL && nts_rt.have_thread) {
		wait_handlers();
		nts_rt_drain();
	}
	int rc = 0;
	uint64_t now = nts_now();
	if (s->owner_pid != getpid()) {
		nts_out_abandon(s);
		nts_rt.sess[i] = NULL;
		nts_rt.live_mask &= ~(1ull << i);
	} else {
		nts_rt_finish_locked(i, now, err, &rc);
	}
	if (stats)
		copy_stats(stats, &s->st);
	if (s == nts_rt.env_sess)
		nts_rt.env_sess = NULL;
	free(s->threads);
	free(s);
	if (nts_rt.mode == NTS_MODE_SAMPLEPOINT)
		sp_sessions_changed(min_interval());
	else
		nts_perf_retune(min_interval());
	wake_sampler();
	return rc;
}

int nts_session_close(nts_session *s, nts_stats *stats, nt_error *err)
{
	if (!s)
		return 0;
	nts_guard++;
	pthread_mutex_lock(&nts_rt.mu);
	int rc = nts_rt_close_locked(s, stats, err);
	pthread_mutex_unlock(&nts_rt.mu);
	nts_guard--;
	return rc;
}

int nts_session_stats(nts_session *s, nts_stats *stats)
{
	if (!s || !stats)
		return NT_EINVAL;
	pthread_mutex_lock(&nts_rt.mu);
	int ok = s->index >= 0 && s->index < NTS_MAX_SESSIONS && nts_rt.sess[s->index] == s;
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
	pthread_mutex_unlock(&nts_rt.mu);
	return ok ? 0 : NT_EINVAL;
}

static int stop_locked(nt_error *err)
{
	if (!nts_rt.started)
		return 0;
	if (nts_rt.have_thread) {
		charge_sampler_cpu();
		nts_rt.stop_req = 1;
		wake_sampler();
		pthread_t th = nts_rt.thread;
		pthread_mutex_unlock(&nts_rt.mu);
		pthread_join(th, NULL);
		pthread_mutex_lock(&nts_rt.mu);
		nts_rt.have_thread = 0;
		wait_handlers();
		nts_rt_drain();
	}
	int rc = 0;
	uint64_t now = nts_now();
	for (int i = 0; i < NTS_MAX_SESSIONS; i++) {
		struct nts_session *s = nts_rt.sess[i];
		if (!s)
			continue;
		nts_rt.sched_mask &= ~(1ull << i);
		if (s->owner_pid != getpid()) {
			nts_out_abandon(s);
			nts_rt.sess[i] = NULL;
			nts_rt.live_mask &= ~(1ull << i);
		} else {
			nts_rt_finish_locked(i, now, err, &rc);
		}
		if (s == nts_rt.env_sess)
			nts_rt.env_sess = NULL;
		free(s->threads);
		free(s);
	}
	/* The handler stays installed but idle: a signal still pending on some thread must
	 * not terminate the process (a real-time signal's default action). */
	atomic_store(&nts_g.active, 0);
	atomic_store(&nts_rt.can_wake, 0);
	if (nts_rt.task_dir)
		closedir(nts_rt.task_dir);
	nts_rt.task_dir = NULL;
	nts_rt.sweep_ns = 0;
	while (nts_rt.nactive)
		slot_retire(0);
	nts_rt.sampler_tid = 0;
	nts_rt.started = 0;
	sp_sessions_changed(0);
	return rc;
}

int nts_stop(nt_error *err)
{
	nts_guard++;
	pthread_mutex_lock(&nts_rt.mu);
	int rc = stop_locked(err);
	pthread_mutex_unlock(&nts_rt.mu);
	nts_guard--;
	return rc;
}
