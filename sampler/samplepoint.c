/* SPDX-License-Identifier: MIT */
/* samplepoint.c - samplepoint mode, for programs that cannot host a sampler thread or
 * signals: each thread samples itself when it visits a samplepoint (nts_samplepoint(), or
 * the enter/exit hooks of -finstrument-functions, which also keep a shadow stack).
 *
 * Algorithm (doc/sampler-design.md §6; dotnet/runtime Mono browser.c should_record_frame,
 * with its stall fix and our changes):
 *  - fast path: one thread-local decrement and compare, no clock read;
 *  - every Nth visit (a "check") the thread reads the clock and re-estimates N so that
 *    checks come every T_check = a quarter of the shortest open interval: N follows the
 *    visit rate of the period that just ended (counted visits / elapsed time), smoothed
 *    with the previous N and clamped to [1, SP_NMAX]; an elapsed time of 0 keeps N (Mono's
 *    stall: N must never become infinite);
 *  - N is randomised, uniform in [N/2, 3N/2), so a loop whose visits alternate between
 *    two functions cannot lock the checks to one of them (count-domain aliasing);
 *  - at a check, each session whose deadline passed (per thread, on the session's own
 *    fixed or Poisson schedule, schedule.c) gets a sample of the thread: the shadow stack
 *    when hooks keep one, else the thread's own stack unwound from here (unwind.c).
 * Samples therefore land on samplepoint visits: time is attributed in proportion to
 * visits near each deadline, so samplepoints belong where time is spent (loop bodies,
 * function entries and exits). Writing takes the runtime's lock (nts_rt.mu, runtime.h);
 * the runtime only publishes the sessions' generation and check period (nts_g).
 * Not here: sessions and output (sampler.c, drain.c). */
#include "runtime.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SP_NMAX 10000000.0   /* visits between checks, at most */
#define SP_IDLE_VISITS 4096  /* visits between checks while no session is open */
#define SP_SHADOW 512        /* shadow-stack entries kept (deeper frames are counted only) */

typedef struct sp_thread {
	uint64_t last_check_ns;
	uint64_t counted;        /* visits in the period that ends at the next check */
	double n;                /* current mean visits per check period */
	nts_rng rng;
	uint64_t gen;            /* session generation the schedules belong to */
	uint64_t sched_mask;
	uint64_t uid[NTS_MAX_SESSIONS];
	nts_sched sched[NTS_MAX_SESSIONS];
	uint64_t named_mask;
	char name[32];
	pid_t tid;
	uint64_t stack_lo, stack_hi;
	uint32_t depth;          /* shadow-stack depth (may exceed SP_SHADOW) */
	uint64_t fn[SP_SHADOW], site[SP_SHADOW], pos[SP_SHADOW];
	nts_cfi_cache cache;
	uint64_t *ips;           /* max_depth entries */
} sp_thread;

static __thread int64_t sp_left __attribute__((tls_model("initial-exec")));
static __thread sp_thread *sp_self __attribute__((tls_model("initial-exec")));

static pthread_key_t sp_key;
static pthread_once_t sp_once = PTHREAD_ONCE_INIT;

/* A scheduled session as samplepoint threads see it. */
typedef struct nts_sp_sess {
	uint64_t uid;          /* unique per session (an index is reused) */
	uint64_t interval_ns;
	uint64_t seed;
	int kind;              /* enum nts_schedule */
} nts_sp_sess;

/* ---------------------------------------------------------------------------------------
 * The runtime's side: sessions, writing a thread's own sample, the sampler thread's duties
 * ------------------------------------------------------------------------------------- */

static uint64_t sp_rt_sessions(nts_sp_sess out[NTS_MAX_SESSIONS])
{
	pthread_mutex_lock(&nts_rt.mu);
	uint64_t mask = nts_rt.mode == NTS_MODE_SAMPLEPOINT ? nts_rt.sched_mask : 0;
	for (uint64_t m = mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		const struct nts_session *s = nts_rt.sess[i];
		out[i].uid = s->uid;
		out[i].interval_ns = s->sched.interval_ns;
		out[i].seed = s->seed;
		out[i].kind = s->sched.kind;
	}
	pthread_mutex_unlock(&nts_rt.mu);
	return mask;
}

static void sp_rt_write(const nts_record *r, const uint64_t *ips,
			const uint64_t ideal[NTS_MAX_SESSIONS],
			const uint64_t uid[NTS_MAX_SESSIONS], const char *name, uint64_t *named_mask,
			const uint64_t dtaken[NTS_MAX_SESSIONS], const uint64_t dlate[NTS_MAX_SESSIONS],
			const uint64_t dmissed[NTS_MAX_SESSIONS])
{
	pthread_mutex_lock(&nts_rt.mu);
	for (uint64_t m = r->mask & nts_rt.sched_mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		struct nts_session *s = nts_rt.sess[i];
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
	pthread_mutex_unlock(&nts_rt.mu);
}

/* Samplepoint mode has no sampler thread: the threads' checks (samplepoint.c) do its
 * duties: the module snapshot (every MODULE_CHECK_NS, and after a dlclose), and for the
 * environment session the stop requests. A "stop" from nettrace-record finalizes the
 * file; a SIGINT or SIGTERM caught by env_sp_signal_handler finalizes it and re-raises
 * the signal. */
static void sp_rt_poll(uint64_t now)
{
	int unload = atomic_load(&nts_g.unload_end) != atomic_load(&nts_g.snap_gen);
	if (!unload && !atomic_load_explicit(&nts_rt.env_signal, memory_order_relaxed)) {
		uint64_t next = atomic_load_explicit(&nts_rt.sp_poll_ns, memory_order_relaxed);
		if (now < next)
			return;
		if (!atomic_compare_exchange_strong(&nts_rt.sp_poll_ns, &next, now + SP_POLL_NS))
			return; /* another thread polls */
	}
	pthread_mutex_lock(&nts_rt.mu);
	if (nts_rt.started && nts_rt.mode == NTS_MODE_SAMPLEPOINT) {
		nts_rt_modules_check(now, 0); /* objects loaded since, and after a dlclose */
		if (nts_rt.env_control_fd >= 0)
			nts_rt.env_on_control();
		if (atomic_load(&nts_rt.env_signal))
			nts_rt.env_on_signal(); /* finalizes, then the re-raised signal ends the process */
	}
	pthread_mutex_unlock(&nts_rt.mu);
}

static void sp_free(void *p)
{
	sp_thread *t = p;
	if (t == sp_self)
		sp_self = NULL;
	if (t) {
		free(t->ips);
		free(t);
	}
}

static void sp_key_init(void)
{
	if (pthread_key_create(&sp_key, sp_free))
		sp_key = (pthread_key_t)-1;
}

static sp_thread *sp_alloc(void)
{
	pthread_once(&sp_once, sp_key_init);
	uint32_t depth = nts_g.max_depth ? nts_g.max_depth : NTS_DEFAULT_DEPTH;
	sp_thread *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->ips = calloc(depth, sizeof(uint64_t));
	if (!t->ips) {
		free(t);
		return NULL;
	}
	t->tid = (pid_t)syscall(SYS_gettid);
	nts_rng_seed(&t->rng, ((uint64_t)t->tid << 20) ^ nts_now());
	pthread_attr_t a;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		void *lo;
		size_t sz;
		if (pthread_attr_getstack(&a, &lo, &sz) == 0) {
			t->stack_lo = (uint64_t)(uintptr_t)lo;
			t->stack_hi = t->stack_lo + sz;
		}
		pthread_attr_destroy(&a);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(t->name, sizeof t->name, f)) {
			size_t n = strlen(t->name);
			if (n && t->name[n - 1] == '\n')
				t->name[n - 1] = 0;
		}
		fclose(f);
	}
	sp_self = t;
	if (sp_key != (pthread_key_t)-1)
		pthread_setspecific(sp_key, t);
	return t;
}

/* The thread's per-session schedules follow the open sessions; a new session starts a
 * new schedule for this thread (seeded from the session's seed and the thread id). */
static void sp_sync(sp_thread *t, uint64_t now, uint64_t gen)
{
	nts_sp_sess ss[NTS_MAX_SESSIONS];
	uint64_t mask = sp_rt_sessions(ss);
	for (uint64_t m = mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		if ((t->sched_mask & (1ull << i)) && t->uid[i] == ss[i].uid)
			continue;
		uint64_t seed = ss[i].seed ^ ((uint64_t)t->tid * 0x9e3779b97f4a7c15ull);
		nts_sched_init(&t->sched[i], ss[i].kind, ss[i].interval_ns, seed, now);
		t->uid[i] = ss[i].uid;
		t->named_mask &= ~(1ull << i);
	}
	t->sched_mask = mask;
	t->gen = gen;
}

/* The calling thread's stack from here, without the sampler's own frames. */
__attribute__((noinline)) static uint32_t sp_unwind_self(sp_thread *t, uint64_t *ips,
							uint32_t max)
{
	nts_regs r;
	__asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2"
			 : "=r"(r.pc), "=r"(r.sp), "=r"(r.fp));
	const nts_modsnap *snap = nts_snap_get();
	uint64_t hi = r.sp >= t->stack_lo && r.sp < t->stack_hi ? t->stack_hi : 0;
	uint32_t n = nts_unwind(snap, &r, hi, ips, max, &t->cache);
	const nts_modseg *own = nts_segment(snap, (uint64_t)(uintptr_t)&sp_unwind_self);
	uint32_t k = 0;
	while (own && k < n && ips[k] >= own->lo && ips[k] < own->hi)
		k++;
	nts_snap_put(snap); /* own points into it */
	if (k && k < n)
		memmove(ips, ips + k, (n - k) * sizeof *ips);
	return n - k;
}

static void sp_take(sp_thread *t, uint64_t due, uint64_t now)
{
	uint32_t max = nts_g.max_depth ? nts_g.max_depth : NTS_DEFAULT_DEPTH;
	uint32_t depth = 0;
	if (t->depth > 0) {
		uint32_t d = t->depth < SP_SHADOW ? t->depth : SP_SHADOW;
		t->ips[depth++] = t->fn[d - 1];
		for (uint32_t i = d; i > 0 && depth < max; i--)
			t->ips[depth++] = t->site[i - 1];
	} else {
		depth = sp_unwind_self(t, t->ips, max);
	}
	uint64_t dtaken[NTS_MAX_SESSIONS] = {0}, dlate[NTS_MAX_SESSIONS] = {0},
		 dmissed[NTS_MAX_SESSIONS] = {0}, ideal[NTS_MAX_SESSIONS] = {0};
	for (uint64_t m = due; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		nts_sched *s = &t->sched[i];
		uint64_t l = s->late, mi = s->missed;
		ideal[i] = s->next_ns;
		nts_sched_advance(s, now);
		dtaken[i] = 1;
		dlate[i] = s->late - l;
		dmissed[i] = s->missed - mi;
	}
	nts_record r;
	memset(&r, 0, sizeof r);
	r.ts_ns = now;
	r.cpu_ns = r.cpu_end_ns = nts_thread_cpu();
	r.mask = due;
	r.tid = (uint32_t)t->tid;
	r.state = NTS_ST_RUNNING;
	int cpu = sched_getcpu();
	r.cpu = cpu < 0 ? 0xFFFFFFFFu : (uint32_t)cpu;
	r.depth = depth;
	sp_rt_write(&r, t->ips, ideal, t->uid, t->name, &t->named_mask, dtaken, dlate, dmissed);
}

__attribute__((noinline)) static void sp_slow(void)
{
	if (!nts_guard) {
		nts_guard++;
		sp_rt_poll(nts_now()); /* nettrace-record's stop, SIGINT, SIGTERM */
		nts_guard--;
	}
	uint64_t check = atomic_load_explicit(&nts_g.sp_check_ns, memory_order_relaxed);
	if (!check || nts_guard) {
		sp_left = SP_IDLE_VISITS;
		return;
	}
	sp_thread *t = sp_self ? sp_self : sp_alloc();
	if (!t) {
		sp_left = SP_IDLE_VISITS;
		return;
	}
	nts_guard++;
	uint64_t now = nts_now();
	double n = t->n;
	if (t->last_check_ns && now > t->last_check_ns && t->counted) {
		double est = (double)t->counted * (double)check / (double)(now - t->last_check_ns);
		n = n > 0 ? 0.5 * n + 0.5 * est : est;
	} else if (!t->last_check_ns) {
		n = 1; /* first check of the thread: calibrate on the next visit */
	}
	if (!(n >= 1.0))
		n = 1.0;
	if (n > SP_NMAX)
		n = SP_NMAX;
	t->last_check_ns = now;
	uint64_t gen = atomic_load(&nts_g.sp_gen);
	if (gen != t->gen)
		sp_sync(t, now, gen);
	uint64_t due = 0;
	for (uint64_t m = t->sched_mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		if (t->sched[i].next_ns <= now)
			due |= 1ull << i;
	}
	if (due)
		sp_take(t, due, now);
	double thr = n * (0.5 + nts_rng_unit(&t->rng));
	uint64_t left = thr < 1.0 ? 1 : (uint64_t)(thr + 0.5);
	t->n = n;
	t->counted = left;
	sp_left = (int64_t)left;
	nts_guard--;
}

void nts_samplepoint(void)
{
	if (__builtin_expect(--sp_left > 0, 1))
		return;
	sp_slow();
}

/* The hooks check before they change the shadow stack: the time before an exit was spent
 * in the returning function, the time before an enter in its caller. */
void nts_func_enter(void *fn, void *call_site)
{
	char here;
	uint64_t pos = (uint64_t)(uintptr_t)&here;
	if (__builtin_expect(--sp_left <= 0, 0))
		sp_slow();
	sp_thread *t = sp_self ? sp_self : sp_alloc();
	if (!t)
		return; /* out of memory: no shadow stack for this thread */
	/* entries at or below this frame are stale: a longjmp or an exception skipped their
	 * exits (the stack grows down, so a live ancestor's hook frame is above ours) */
	while (t->depth > 0 && t->depth <= SP_SHADOW && t->pos[t->depth - 1] <= pos)
		t->depth--;
	if (t->depth < SP_SHADOW) {
		t->fn[t->depth] = (uint64_t)(uintptr_t)fn;
		t->site[t->depth] = (uint64_t)(uintptr_t)call_site;
		t->pos[t->depth] = pos;
	}
	t->depth++;
}

void nts_func_exit(void *fn, void *call_site)
{
	(void)fn;
	(void)call_site;
	if (__builtin_expect(--sp_left <= 0, 0))
		sp_slow();
	sp_thread *t = sp_self;
	if (t && t->depth > 0)
		t->depth--;
}
