/* SPDX-License-Identifier: MIT */
/* perf.c - the perf_events capture of the sampler (doc/sampler-design.md §9): one
 * software event per sampled thread, PERF_COUNT_SW_TASK_CLOCK, which the kernel samples
 * every period of the thread's own CPU time, in user mode only (what perf_event_paranoid 2
 * permits a process on its own threads), with the user registers and a copy of the top of
 * the user stack (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER) in a ring mapped by the
 * sampler. The sampler thread takes a thread's newest sample at each round and unwinds the
 * copy with the CFI unwinder (unwind.c), so a running thread costs the target no signal,
 * no handler and no stack walk: only the kernel's timer interrupt and the copy.
 *
 * Every record read from the ring is untrusted input: sizes are checked against the ring
 * and the record before any field is read. Runs on the sampler thread or in API calls
 * (nts_rt.mu held). The runtime's side (the end of the file): choosing the backend at
 * start, the period as sessions come and go, the descriptors' budget.
 * Not here: which thread gets what (the rounds, sampler.c), the unwinder (unwind.c). */
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../libtrace/internal.h"

/* Bytes of user stack copied per sample (a multiple of 8; the record must stay under
 * 64 KiB): enough for a few hundred frames of ordinary code. A deeper stack is cut there
 * and counted as truncated like any walk that cannot go on. */
#define PERF_STACK 16384u
/* Ring data pages (a power of two): about four samples, so that a round finds its thread's
 * newest sample even when a few came since the last one. */
#define PERF_DATA_PAGES 16u
/* x86-64 perf register numbers (asm/perf_regs.h) of the registers the unwinder needs */
#define PERF_REG_BP 6
#define PERF_REG_SP 7
#define PERF_REG_IP 8
/* The CPU-time estimate from switch records is checked against the thread's CPU clock
 * this often (one system call instead of one a round). */
#define PERF_CPU_ANCHOR_NS 100000000u
#define PERF_REGS_MASK ((1ull << PERF_REG_BP) | (1ull << PERF_REG_SP) | (1ull << PERF_REG_IP))

static void attr_init(struct perf_event_attr *a, uint64_t period_ns)
{
	memset(a, 0, sizeof *a);
	a->size = sizeof *a;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_TASK_CLOCK;
	a->sample_period = period_ns < 10000 ? 10000 : period_ns; /* the kernel's floor */
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_REGS_USER |
			 PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = PERF_REGS_MASK;
	a->sample_stack_user = PERF_STACK;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	/* PERF_RECORD_SWITCH records in the ring at each switch of the thread: whether it is
	 * on a CPU, preempted (still runnable) or blocked, without reading /proc */
	a->context_switch = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC; /* sample times on the sampler's clock */
	/* nobody polls the ring: no wake-ups */
	a->watermark = 1;
	a->wakeup_watermark = PERF_DATA_PAGES * 4096u;
}

static int perf_open(const struct perf_event_attr *a, pid_t tid)
{
	return (int)syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (size_t)p : 4096u;
}

int nts_perf_probe(char *why, size_t len)
{
	struct perf_event_attr a;
	attr_init(&a, 1000000u);
	a.disabled = 1;
	int fd = perf_open(&a, 0);
	if (fd < 0) {
		int e = errno;
		snprintf(why, len, "perf_event_open: %s", strerror(e));
		return -e;
	}
	size_t ps = page_size(), sz = ps * (1 + PERF_DATA_PAGES);
	void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		close(fd);
		snprintf(why, len, "mmap of a perf_events ring: %s", strerror(e));
		return -e;
	}
	munmap(m, sz);
	close(fd);
	return 0;
}

int nts_perf_open(nts_slot *t, pid_t tid, uint64_t period_ns, uint64_t cpu_now)
{
	struct perf_event_attr a;
	attr_init(&a, period_ns);
	int fd = perf_open(&a, tid);
	if (fd < 0) {
		t->perf_state = NTS_PERF_FAILED;
		return -1;
	}
	size_t ps = page_size(), sz = ps * (1 + PERF_DATA_PAGES);
	void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) { /* out of locked memory (perf_event_mlock_kb): signals */
		close(fd);
		t->perf_state = NTS_PERF_FAILED;
		return -1;
	}
	t->perf_fd = fd;
	t->perf_ring = m;
	t->perf_ring_size = sz;
	t->perf_period = a.sample_period;
	t->perf_cpu = cpu_now;
	t->perf_sw = NTS_SW_UNKNOWN;
	t->perf_sw_in++;
	t->cpu_est_ok = 0;
	t->perf_state = NTS_PERF_OPEN;
	return 0;
}

int nts_perf_runnable(nts_slot *t, pid_t tid)
{
	/* the thread's last switch record (nts_perf_take) says it at no cost */
	if (t->perf_sw == NTS_SW_IN || t->perf_sw == NTS_SW_PREEMPTED)
		return 1;
	if (t->perf_sw == NTS_SW_BLOCKED)
		return 0;
	if (t->stat_fd1 == 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		t->stat_fd1 = fd + 1;
	}
	char buf[512];
	ssize_t n = pread(t->stat_fd1 - 1, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	if (!paren || paren[1] != ' ')
		return -1;
	return paren[2] == 'R';
}

void nts_perf_close(nts_slot *t)
{
	if (t->stat_fd1)
		close(t->stat_fd1 - 1);
	t->stat_fd1 = 0;
	if (t->perf_state == NTS_PERF_OPEN) {
		munmap(t->perf_ring, t->perf_ring_size);
		close(t->perf_fd);
	}
	t->perf_ring = NULL;
	t->perf_ring_size = 0;
	t->perf_fd = -1;
	t->perf_state = NTS_PERF_NONE;
}

void nts_perf_forget(nts_slot *t)
{
	/* a forked child: the fd is a copy, the ring was not inherited (VM_DONTCOPY) */
	if (t->stat_fd1)
		close(t->stat_fd1 - 1);
	t->stat_fd1 = 0;
	if (t->perf_state == NTS_PERF_OPEN)
		close(t->perf_fd);
	t->perf_ring = NULL;
	t->perf_ring_size = 0;
	t->perf_fd = -1;
	t->perf_state = NTS_PERF_NONE;
}

void nts_perf_period(nts_slot *t, uint64_t period_ns)
{
	if (period_ns < 10000)
		period_ns = 10000;
	if (t->perf_state != NTS_PERF_OPEN || t->perf_period == period_ns)
		return;
	uint64_t p = period_ns;
	if (ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &p) == 0)
		t->perf_period = period_ns;
}

/* The CPU-time estimate: the thread's CPU clock read at cpu_est_wall, plus the time it
 * spent on a CPU since, summed from its switch records (in at t_in, out at t_out). */
static void switch_time(nts_slot *t, int in, uint64_t when)
{
	if (!t->cpu_est_ok)
		return;
	if (when < t->cpu_est_wall)
		when = t->cpu_est_wall; /* written between the ring's reading and the clock's */
	if (in) {
		t->cpu_est_in = when;
	} else if (t->cpu_est_in) {
		t->cpu_est_run += when - t->cpu_est_in;
		t->cpu_est_in = 0;
	}
}

uint64_t nts_perf_cpu(nts_slot *t, pid_t tid, uint64_t now)
{
	if (t->perf_state == NTS_PERF_OPEN && t->cpu_est_ok && t->perf_sw != NTS_SW_UNKNOWN &&
	    now >= t->cpu_est_wall && now - t->cpu_est_wall < PERF_CPU_ANCHOR_NS) {
		uint64_t run = t->cpu_est_run;
		if (t->perf_sw == NTS_SW_IN && t->cpu_est_in && now > t->cpu_est_in)
			run += now - t->cpu_est_in;
		return t->cpu_est_base + run;
	}
	uint64_t cpu = nts_tid_cpu(tid);
	t->cpu_est_base = cpu;
	t->cpu_est_wall = now;
	t->cpu_est_run = 0;
	t->cpu_est_in = t->perf_sw == NTS_SW_IN ? now : 0;
	t->cpu_est_ok = cpu != 0 && t->perf_sw != NTS_SW_UNKNOWN;
	return cpu;
}

/* Copies n bytes at ring offset off (wrapping) to out. */
static void ring_copy(const uint8_t *data, uint64_t size, uint64_t off, void *out, size_t n)
{
	uint64_t o = off & (size - 1);
	size_t first = n < size - o ? n : (size_t)(size - o);
	memcpy(out, data + o, first);
	if (first < n)
		memcpy((uint8_t *)out + first, data, n - first);
}

/* A cursor over one record (copied out of the ring). */
typedef struct cur {
	const uint8_t *p;
	size_t n, at;
	int bad;
} cur;

static uint64_t get64(cur *c)
{
	uint64_t v = 0;
	if (c->bad || c->n - c->at < 8) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p + c->at, 8);
	c->at += 8;
	return v;
}

int nts_perf_take(nts_slot *t, nts_record *r, uint64_t *ips, uint32_t max,
		  nts_cfi_cache *cache, uint8_t *scratch, size_t scratch_len, uint64_t *lost)
{
	if (t->perf_state != NTS_PERF_OPEN)
		return 0;
	struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)(void *)t->perf_ring;
	size_t ps = page_size();
	uint64_t size = t->perf_ring_size - ps;
	const uint8_t *data = t->perf_ring + ps;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	uint64_t newest = UINT64_MAX, newest_len = 0;
	if (head - tail > size) /* not what the kernel writes: start over */
		tail = head;
	while (tail < head) {
		struct perf_event_header h;
		if (head - tail < sizeof h)
			break;
		ring_copy(data, size, tail, &h, sizeof h);
		if (h.size < sizeof h || h.size > head - tail)
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			newest = tail;
			newest_len = h.size;
		} else if (h.type == PERF_RECORD_SWITCH) {
			/* out: preempted while runnable, or blocked; in: on a CPU again */
			t->perf_sw = !(h.misc & PERF_RECORD_MISC_SWITCH_OUT) ? NTS_SW_IN
				     : (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? NTS_SW_PREEMPTED
										   : NTS_SW_BLOCKED;
			if (t->perf_sw == NTS_SW_IN)
				t->perf_sw_in++;
			/* its time (sample_id_all: tid, then time) for the CPU-time estimate */
			uint8_t sid[16];
			if (h.size >= sizeof h + sizeof sid) {
				ring_copy(data, size, tail + sizeof h, sid, sizeof sid);
				uint64_t when;
				memcpy(&when, sid + 8, 8);
				switch_time(t, t->perf_sw == NTS_SW_IN, when);
			} else {
				t->cpu_est_ok = 0;
			}
		} else if (h.type == PERF_RECORD_LOST) {
			t->perf_sw = NTS_SW_UNKNOWN; /* a switch may be among what was lost */
			t->perf_sw_in++;
			t->cpu_est_ok = 0;
			if (lost)
				(*lost)++;
		}
		tail += h.size;
	}
	int got = 0;
	if (newest != UINT64_MAX && newest_len <= scratch_len) {
		/* read in place unless it wraps around the end of the ring */
		const uint8_t *rec = data + (newest & (size - 1));
		if ((newest & (size - 1)) + newest_len > size) {
			ring_copy(data, size, newest, scratch, (size_t)newest_len);
			rec = scratch;
		}
		cur c = {rec, (size_t)newest_len, sizeof(struct perf_event_header), 0};
		uint64_t pidtid = get64(&c);
		uint64_t time = get64(&c);
		uint64_t cpu = get64(&c);
		uint64_t abi = get64(&c);
		nts_regs regs = {0, 0, 0};
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			regs.fp = get64(&c); /* in register-number order: BP, SP, IP */
			regs.sp = get64(&c);
			regs.pc = get64(&c);
		}
		uint64_t ssize = get64(&c);
		const uint8_t *img = NULL;
		uint64_t dyn = 0;
		if (!c.bad && ssize && ssize <= c.n - c.at && c.n - c.at - ssize >= 8) {
			img = c.p + c.at;
			memcpy(&dyn, c.p + c.at + ssize, 8);
			if (dyn > ssize)
				dyn = ssize;
		}
		if (!c.bad && abi != PERF_SAMPLE_REGS_ABI_NONE && regs.pc) {
			memset(r, 0, sizeof *r);
			r->ts_ns = time;
			r->tid = (uint32_t)(pidtid >> 32);
			r->state = NTS_ST_RUNNING; /* sampled in user mode */
			r->cpu = (uint32_t)cpu;
			r->sp = regs.sp;
			int end;
			const nts_modsnap *snap = nts_snap_get();
			r->depth = nts_unwind_copy(snap, &regs, img, (size_t)dyn, ips, max, cache, &end);
			nts_snap_put(snap);
			got = 1;
		}
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return got;
}

/* ---------------------------------------------------------------------------------------
 * The runtime's side
 * ------------------------------------------------------------------------------------- */

/* The perf_events backend when asked for or (auto) when this process may use it; the
 * reason it is not used is kept for the log. */
int nts_perf_choose(int want, nt_error *err)
{
	nts_rt.backend = NTS_BACKEND_SIGNAL;
	nts_rt.backend_why[0] = 0;
	if (want == NTS_BACKEND_SIGNAL)
		return 0;
	char why[160];
	if (nts_perf_probe(why, sizeof why) != 0) {
		if (want == NTS_BACKEND_PERF)
			return nt_fail(err, NT_EIO, NT_NO_OFFSET,
				       "sampler: the perf_events backend cannot be used: %s", why);
		snprintf(nts_rt.backend_why, sizeof nts_rt.backend_why, "%s", why);
		return 0;
	}
	if (!nts_rt.perf_ips)
		nts_rt.perf_ips = calloc(nts_g.max_depth, sizeof *nts_rt.perf_ips);
	if (!nts_rt.perf_scratch)
		nts_rt.perf_scratch = malloc(NTS_PERF_SCRATCH);
	if (!nts_rt.perf_ips || !nts_rt.perf_scratch)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "sampler: out of memory");
	/* two descriptors a thread (the event, its stat file): at most an eighth of the
	 * descriptors the process may open, so that the program does not run out of them */
	struct rlimit rl;
	uint64_t nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
				  ? (uint64_t)rl.rlim_cur
				  : 1024u;
	nts_rt.perf_max = nofile / 8 > 4096 ? 4096 : (uint32_t)(nofile / 8);
	nts_rt.backend = NTS_BACKEND_PERF;
	return 0;
}

/* Closes a thread's perf_events descriptors (they count against nts_rt.perf_max). */
void nts_perf_release(nts_slot *t)
{
	if (t->perf_state == NTS_PERF_OPEN && nts_rt.perf_nopen)
		nts_rt.perf_nopen--;
	nts_perf_close(t);
}

/* The perf_events period: the shortest interval open (NTS_PERF_PER_ROUND samples a
 * round for a busy thread; rounds without one keep the last stack, perf_sample); with no
 * session open
 * the events are closed (they would go on sampling) and opened again at the next round. */
void nts_perf_retune(uint64_t iv)
{
	if (nts_rt.backend != NTS_BACKEND_PERF)
		return;
	nts_rt.perf_period_ns = iv / NTS_PERF_PER_ROUND;
	for (uint32_t i = 0; i < nts_rt.nactive; i++) {
		nts_slot *t = &nts_g.slots[nts_rt.active[i]];
		if (!iv)
			nts_perf_release(t);
		else
			nts_perf_period(t, nts_rt.perf_period_ns);
	}
}
