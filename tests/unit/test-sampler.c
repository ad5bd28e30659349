/* SPDX-License-Identifier: MIT */
/* test-sampler.c - unit tests of the sampler's parts that do not need timing: the random
 * generator and schedules (statistics with fixed seeds, doc/sampler-design.md §7), the
 * module snapshot, the CFI unwinder (on hand-written assembly with known CFI and on a
 * fake stack), and the session output format read back with the reader. The timing and
 * accuracy tests are end-to-end (tests/e2e/t5NN-record-*.sh). */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

/* ---------------------------------------------------------------- schedules */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void test_sampler_rng_is_seeded(void)
{
	nts_rng a, b, c;
	nts_rng_seed(&a, 42);
	nts_rng_seed(&b, 42);
	nts_rng_seed(&c, 43);
	int same = 1, differ = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = nts_rng_next(&a), y = nts_rng_next(&b), z = nts_rng_next(&c);
		same &= x == y;
		differ |= x != z;
	}
	ok(same, "test_sampler_rng_is_seeded: same seed, same sequence");
	ok(differ, "test_sampler_rng_is_seeded: another seed, another sequence");
}

/* n exponential gaps with mean 1 ms: mean within 1 +- 4/sqrt(n), CV within 1 +- 4/sqrt(n)
 * (delta method, sampler-design §7), Kolmogorov-Smirnov D below 1.95/sqrt(n) (alpha 0.001). */
static void test_sampler_exponential_gaps(void)
{
	enum { N = 20000 };
	static double x[N];
	nts_rng r;
	nts_rng_seed(&r, 12345);
	const double mean = 1e6;
	double sum = 0, sq = 0;
	for (int i = 0; i < N; i++) {
		x[i] = (double)nts_rng_exp(&r, (uint64_t)mean) / mean;
		sum += x[i];
		sq += x[i] * x[i];
	}
	double m = sum / N, sd = sqrt(sq / N - m * m), cv = sd / m, tol = 4 / sqrt((double)N);
	ok(fabs(m - 1) <= tol, "test_sampler_exponential_gaps: mean %.4f within 1 +- %.4f", m, tol);
	ok(fabs(cv - 1) <= tol, "test_sampler_exponential_gaps: CV %.4f within 1 +- %.4f", cv, tol);
	qsort(x, N, sizeof x[0], cmp_double);
	double d = 0;
	for (int i = 0; i < N; i++) {
		double f = 1 - exp(-x[i]);
		double a = fabs(f - (double)i / N), b = fabs((double)(i + 1) / N - f);
		if (a > d)
			d = a;
		if (b > d)
			d = b;
	}
	ok(d <= 1.95 / sqrt((double)N), "test_sampler_exponential_gaps: KS D %.5f <= %.5f", d,
	   1.95 / sqrt((double)N));
}

static void test_sampler_fixed_schedule(void)
{
	nts_sched s;
	const uint64_t iv = 1000000, start = 5000000000ull;
	nts_sched_init(&s, NTS_SCHED_FIXED, iv, 99, start);
	uint64_t first = s.next_ns;
	ok(first > start && first <= start + iv, "test_sampler_fixed_schedule: first sample within "
						"the first interval");
	int exact = 1;
	for (int i = 0; i < 100; i++) {
		uint64_t prev = s.next_ns;
		nts_sched_advance(&s, prev);
		exact &= s.next_ns == prev + iv;
	}
	ok(exact && s.late == 0 && s.missed == 0 && s.taken == 100,
	   "test_sampler_fixed_schedule: on time: one interval apart, nothing late or missed");
	/* 3 intervals late: taken at once, counted late, then caught up one by one */
	uint64_t ideal = s.next_ns, now = ideal + 3 * iv;
	uint64_t behind = nts_sched_advance(&s, now);
	is_u64(behind, 3 * iv, "test_sampler_fixed_schedule: lateness reported");
	is_u64(s.late, 1, "test_sampler_fixed_schedule: a late round is counted");
	is_u64(s.next_ns, ideal + iv, "test_sampler_fixed_schedule: catch-up keeps the schedule");
	/* 20 intervals behind: skipped rounds are missed, the phase is kept */
	ideal = s.next_ns;
	now = ideal + 20 * iv + iv / 3;
	nts_sched_advance(&s, now);
	ok(s.next_ns > now && s.next_ns - now <= iv, "test_sampler_fixed_schedule: resynchronised "
						    "after a stall");
	ok((s.next_ns - first) % iv == 0, "test_sampler_fixed_schedule: phase kept");
	ok(s.missed >= 19 && s.missed <= 21, "test_sampler_fixed_schedule: %llu missed rounds "
					      "counted (about 20)",
	   (unsigned long long)s.missed);
}

static void test_sampler_poisson_schedule(void)
{
	nts_sched a, b;
	nts_sched_init(&a, NTS_SCHED_POISSON, 2000000, 7, 0);
	nts_sched_init(&b, NTS_SCHED_POISSON, 2000000, 7, 0);
	int same = 1;
	uint64_t t0 = a.next_ns;
	for (int i = 0; i < 5000; i++) {
		nts_sched_advance(&a, a.next_ns);
		nts_sched_advance(&b, b.next_ns);
		same &= a.next_ns == b.next_ns;
	}
	ok(same, "test_sampler_poisson_schedule: a seed reproduces the schedule");
	double mean = (double)(a.next_ns - t0) / 5000 / 2e6;
	ok(fabs(mean - 1) <= 4 / sqrt(5000.0), "test_sampler_poisson_schedule: mean gap %.4f of the "
					      "interval",
	   mean);
	uint64_t now = a.next_ns + 100 * 2000000ull;
	nts_sched_advance(&a, now);
	ok(a.next_ns > now && a.missed > 0, "test_sampler_poisson_schedule: resynchronised after a "
					    "stall, %llu missed",
	   (unsigned long long)a.missed);
}

/* ---------------------------------------------------------------- modules and unwinding */

/* Leaf with known CFI: "push %rbx" then a body, as gcc emits for a frameless leaf that
 * saves a register. Labels mark the addresses the test looks up. */
__asm__(".text\n"
	".globl nts_test_leaf\n"
	".type nts_test_leaf, @function\n"
	"nts_test_leaf:\n"
	".cfi_startproc\n"
	"nts_test_leaf_entry:\n"
	"	pushq %rbx\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbx, -16\n"
	"nts_test_leaf_body:\n"
	"	movq %rdi, %rax\n"
	"	popq %rbx\n"
	".cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size nts_test_leaf, .-nts_test_leaf\n"
	/* a function with a frame pointer */
	".globl nts_test_fp\n"
	".type nts_test_fp, @function\n"
	"nts_test_fp:\n"
	".cfi_startproc\n"
	"	pushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"	call nts_test_leaf\n"
	"nts_test_fp_body:\n"
	"	movq %rdi, %rax\n"
	"	popq %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size nts_test_fp, .-nts_test_fp\n"
	/* an epilogue as gcc -O2 writes it without frame pointers (fib): rbp is saved and
	 * used as a general register; after "pop %rbp" its save slot is below the stack
	 * pointer and the register holds the caller's value again */
	".globl nts_test_epi\n"
	".type nts_test_epi, @function\n"
	"nts_test_epi:\n"
	".cfi_startproc\n"
	"	pushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	pushq %rbx\n"
	".cfi_def_cfa_offset 24\n"
	".cfi_offset %rbx, -24\n"
	"	movl %edi, %ebp\n"
	"	popq %rbx\n"
	".cfi_def_cfa_offset 16\n"
	"	popq %rbp\n"
	".cfi_def_cfa_offset 8\n"
	"nts_test_epi_ret:\n"
	"	ret\n"
	".cfi_endproc\n"
	".size nts_test_epi, .-nts_test_epi\n"
	/* the outermost frame: return address undefined, as _start and clone mark it */
	".globl nts_test_outer\n"
	".type nts_test_outer, @function\n"
	"nts_test_outer:\n"
	".cfi_startproc\n"
	".cfi_undefined %rip\n"
	"	call nts_test_fp\n"
	"nts_test_outer_body:\n"
	"	hlt\n"
	".cfi_endproc\n"
	".size nts_test_outer, .-nts_test_outer\n"
	/* the signal return trampoline (never run: its bytes are what the unwinder matches) */
	".globl nts_test_tramp\n"
	".type nts_test_tramp, @function\n"
	"nts_test_tramp:\n"
	"	movq $15, %rax\n"
	"	syscall\n"
	".size nts_test_tramp, .-nts_test_tramp\n"
	/* code without CFI (a stub): only [rsp] tells where it returns */
	".globl nts_test_nocfi\n"
	".type nts_test_nocfi, @function\n"
	"nts_test_nocfi:\n"
	"	nop\n"
	"	ret\n"
	".size nts_test_nocfi, .-nts_test_nocfi\n");
extern char nts_test_leaf[], nts_test_leaf_entry[], nts_test_leaf_body[];
extern char nts_test_fp[], nts_test_fp_body[];
extern char nts_test_epi_ret[], nts_test_outer_body[], nts_test_tramp[], nts_test_nocfi[];

static nts_modsnap *snapshot(void)
{
	static nts_modlist ml;
	static nts_modsnap *snap;
	if (!snap) {
		int rc = nts_modules_refresh(&ml, &snap, 1);
		is_int(rc, 1, "test_sampler_modules: first refresh builds the list");
		nts_modsnap *again = NULL;
		is_int(nts_modules_refresh(&ml, &again, 2), 0,
		       "test_sampler_modules: unchanged objects, no rebuild");
		const nts_modseg *seg = nts_segment(snap, (uint64_t)(uintptr_t)nts_test_leaf);
		ok(seg && seg->eh_hdr && seg->fde_count > 0,
		   "test_sampler_modules: the test program's text has an .eh_frame_hdr table");
		ok(ml.n > 0 && ml.m[0].path[0] == '/' && ml.m[0].build_id[0],
		   "test_sampler_modules: main program first, absolute path '%s', build-id '%s'",
		   ml.n ? ml.m[0].path : "", ml.n ? ml.m[0].build_id : "");
		int libc = 0;
		for (size_t i = 0; i < ml.n; i++)
			libc |= strstr(ml.m[i].path, "libc.so") != NULL;
		ok(libc, "test_sampler_modules: libc is listed");
	}
	return snap;
}

static void test_sampler_cfi_rules(void)
{
	const nts_modsnap *snap = snapshot();
	nts_cfi_rule r;
	int rc = nts_cfi_lookup(snap, (uint64_t)(uintptr_t)nts_test_leaf_entry, &r);
	ok(rc == 0 && r.kind == NTS_RULE_RSP && r.cfa_off == 8 && r.ra_off == -8 &&
		   r.fp_off == NTS_FP_SAME,
	   "test_sampler_cfi_rules: leaf entry: CFA = rsp+8, RA at CFA-8, rbp unchanged");
	rc = nts_cfi_lookup(snap, (uint64_t)(uintptr_t)nts_test_leaf_body, &r);
	ok(rc == 0 && r.kind == NTS_RULE_RSP && r.cfa_off == 16 && r.ra_off == -8,
	   "test_sampler_cfi_rules: after push: CFA = rsp+16");
	rc = nts_cfi_lookup(snap, (uint64_t)(uintptr_t)nts_test_fp_body, &r);
	ok(rc == 0 && r.kind == NTS_RULE_RBP && r.cfa_off == 16 && r.fp_off == -16,
	   "test_sampler_cfi_rules: frame pointer function: CFA = rbp+16, rbp saved at CFA-16");
	rc = nts_cfi_lookup(snap, 12345, &r);
	ok(rc < 0 && r.kind == NTS_RULE_NONE, "test_sampler_cfi_rules: no rule outside any object");
}

/* A sample taken in the leaf's body (after its push): the fake stack holds the saved rbx
 * and the return address into nts_test_fp's body. The frame-pointer chain would skip
 * nts_test_fp (rbp points to an outer frame); the CFI must not. */
static void test_sampler_unwind_leaf_caller(void)
{
	const nts_modsnap *snap = snapshot();
	uint64_t stack[64];
	memset(stack, 0, sizeof stack);
	uint64_t ra = (uint64_t)(uintptr_t)nts_test_fp_body;
	stack[0] = 0xdeadbeef;            /* saved rbx */
	stack[1] = ra;                    /* return address into the caller */
	stack[2] = 0;                     /* caller's saved rbp: end of the chain */
	stack[3] = 0;
	nts_regs regs = {(uint64_t)(uintptr_t)nts_test_leaf_body, (uint64_t)(uintptr_t)&stack[0],
			 (uint64_t)(uintptr_t)&stack[2]};
	uint64_t ips[16];
	uint32_t n = nts_unwind(snap, &regs, (uint64_t)(uintptr_t)&stack[64], ips, 16, NULL);
	ok(n >= 2 && ips[0] == regs.pc && ips[1] == ra,
	   "test_sampler_unwind_leaf_caller: the leaf's caller is frame 1 (%u frames)", n);
	nts_cfi_cache cache;
	memset(&cache, 0, sizeof cache);
	uint64_t ips2[16];
	uint32_t n2 = nts_unwind(snap, &regs, (uint64_t)(uintptr_t)&stack[64], ips2, 16, &cache);
	uint32_t n3 = nts_unwind(snap, &regs, (uint64_t)(uintptr_t)&stack[64], ips2, 16, &cache);
	ok(n2 == n && n3 == n && memcmp(ips, ips2, n * sizeof ips[0]) == 0,
	   "test_sampler_unwind_leaf_caller: the per-thread cache gives the same walk");
	/* the walk never leaves [sp, stack_hi): a window ending at the return address slot
	 * stops there */
	n = nts_unwind(snap, &regs, (uint64_t)(uintptr_t)&stack[1], ips, 16, NULL);
	is_int(n, 1, "test_sampler_unwind_leaf_caller: reads stay inside the stack window");
}

#define U64(p) ((uint64_t)(uintptr_t)(p))

/* Whole stacks on fake stacks: each walk must reach nts_test_outer (the outermost frame)
 * through the frame-pointer function, whose CFA is RBP-based, so RBP must be right. */
static void test_sampler_unwind_whole(void)
{
	const nts_modsnap *snap = snapshot();
	uint64_t stack[64], ips[16];
	int end;
	uint32_t n;
	/* 1. at the "ret" of an epilogue, after "pop %rbp": the saved RBP's slot (stack[-2])
	 * is below the stack pointer, RBP already holds the caller's frame pointer */
	memset(stack, 0, sizeof stack);
	stack[8] = U64(nts_test_fp_body); /* return into nts_test_fp */
	stack[9] = 0;                     /* nts_test_fp's saved rbp: end of the chain */
	stack[10] = U64(nts_test_outer_body);
	nts_regs regs = {U64(nts_test_epi_ret), U64(&stack[8]), U64(&stack[9])};
	n = nts_unwind_ex(snap, &regs, U64(&stack[64]), ips, 16, NULL, &end);
	ok(n == 3 && ips[1] == U64(nts_test_fp_body) && ips[2] == U64(nts_test_outer_body) &&
		   end == NTS_END_OUTER,
	   "test_sampler_unwind_whole: epilogue: a popped RBP is taken from the register (%u "
	   "frames, end %d)",
	   n, end);
	/* 2. a signal frame: the handler (nts_test_leaf, at its entry) returns to the
	 * trampoline; the ucontext above it holds the interrupted RIP, RSP and RBP */
	memset(stack, 0, sizeof stack);
	stack[0] = U64(nts_test_tramp);
	uint64_t *uc = &stack[1];
	uc[5 + 16] = U64(nts_test_fp_body); /* RIP: interrupted there (exact, not a return) */
	uc[5 + 15] = U64(&stack[40]);       /* RSP */
	uc[5 + 10] = U64(&stack[40]);       /* RBP */
	stack[40] = 0;
	stack[41] = U64(nts_test_outer_body);
	nts_regs sregs = {U64(nts_test_leaf_entry), U64(&stack[0]), 0x1234};
	n = nts_unwind_ex(snap, &sregs, U64(&stack[64]), ips, 16, NULL, &end);
	ok(n == 4 && ips[1] == U64(nts_test_tramp) && ips[2] == U64(nts_test_fp_body) &&
		   ips[3] == U64(nts_test_outer_body) && end == NTS_END_OUTER,
	   "test_sampler_unwind_whole: through a signal frame (%u frames, end %d)", n, end);
	/* 3. interrupted in code without CFI: the return address at [rsp] continues the walk,
	 * though the frame-pointer chain would give another */
	memset(stack, 0, sizeof stack);
	stack[0] = U64(nts_test_fp_body);
	stack[1] = 0;
	stack[2] = U64(nts_test_outer_body);
	nts_regs nregs = {U64(nts_test_nocfi), U64(&stack[0]), U64(&stack[1])};
	n = nts_unwind_ex(snap, &nregs, U64(&stack[64]), ips, 16, NULL, &end);
	ok(n == 3 && ips[1] == U64(nts_test_fp_body) && ips[2] == U64(nts_test_outer_body) &&
		   end == NTS_END_OUTER,
	   "test_sampler_unwind_whole: no CFI: the return address on the stack (%u frames, end "
	   "%d)",
	   n, end);
	/* 4. a caller without CFI (returned into nts_test_nocfi): frame pointers go on */
	memset(stack, 0, sizeof stack);
	stack[1] = U64(nts_test_nocfi + 1);
	stack[4] = 0;
	stack[5] = U64(nts_test_outer_body);
	nts_regs fregs = {U64(nts_test_leaf_body), U64(&stack[0]), U64(&stack[4])};
	n = nts_unwind_ex(snap, &fregs, U64(&stack[64]), ips, 16, NULL, &end);
	ok(n == 3 && ips[1] == U64(nts_test_nocfi + 1) && ips[2] == U64(nts_test_outer_body) &&
		   end == NTS_END_OUTER,
	   "test_sampler_unwind_whole: a caller without CFI: frame pointers continue (%u frames, "
	   "end %d)",
	   n, end);
	/* 5. the frame chain is not followed below the stack pointer */
	fregs.fp = U64(&stack[0]) - 64;
	n = nts_unwind_ex(snap, &fregs, U64(&stack[64]), ips, 16, NULL, &end);
	ok(n == 2 && end == NTS_END_STOP,
	   "test_sampler_unwind_whole: nor a frame chain below the stack pointer (%u frames)", n);
}

/* Hostile CFI (the seeds of tests/fuzz/gen-unwind-seeds.c): a table longer than its
 * object, an FDE running past its object, a CIE whose personality pointer overruns its
 * augmentation data: none is used, and nothing outside the object is read (the replay
 * under ASan in t902 checks the latter). */
static void test_sampler_unwind_hostile(void)
{
	static uint8_t obj[64];
	nts_modseg seg;
	memset(obj, 0, sizeof obj);
	obj[0] = 1, obj[1] = 0x1b, obj[2] = 0x03, obj[3] = 0x3b;
	uint32_t cnt = 7; /* 7 entries of 8 bytes do not fit after the 12-byte header */
	memcpy(obj + 8, &cnt, 4);
	nts_eh_hdr_parse(obj, U64(obj), U64(obj + sizeof obj), &seg);
	ok(!seg.table && !seg.fde_count, "test_sampler_unwind_hostile: a table past the end of "
					 "its segment is refused");
	cnt = 6;
	memcpy(obj + 8, &cnt, 4);
	nts_eh_hdr_parse(obj, U64(obj), U64(obj + sizeof obj), &seg);
	ok(seg.table == obj + 12 && seg.fde_count == 6 && seg.cfi_lo == U64(obj),
	   "test_sampler_unwind_hostile: one that fits is kept");
	nts_eh_hdr_parse(obj + 60, U64(obj), U64(obj + sizeof obj), &seg);
	ok(!seg.table, "test_sampler_unwind_hostile: a header cut by the end is refused");
}

/* Walks the test's own stack: every return address recorded on the way down must appear,
 * in order. */
#if defined(__clang__)
#define CHAIN_FN __attribute__((noinline)) /* clang has no noipa */
#else
#define CHAIN_FN __attribute__((noinline, noipa))
#endif
static uint64_t chain_ra[3];
static uint64_t chain_ips[64];
static uint32_t chain_n;
static uint8_t *chain_copy;
static size_t chain_copy_len;
static nts_regs chain_copy_regs;

/* Copies live stack memory as the kernel does for perf_events: other frames' bytes, ASan
 * redzones included, so the copy itself is not instrumented. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_ASAN __attribute__((no_sanitize_address))
#endif
#endif
#ifndef NO_ASAN
#if defined(__SANITIZE_ADDRESS__)
#define NO_ASAN __attribute__((no_sanitize_address))
#else
#define NO_ASAN
#endif
#endif
NO_ASAN static void copy_stack(uint8_t *out, uint64_t from, size_t len)
{
	const volatile uint64_t *p = (const volatile uint64_t *)(uintptr_t)from;
	for (size_t i = 0; i < len / 8; i++) {
		uint64_t v = p[i];
		memcpy(out + 8 * i, &v, 8);
	}
}

CHAIN_FN static void chain_c(const nts_modsnap *snap)
{
	nts_regs r;
	__asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2"
			 : "=r"(r.pc), "=r"(r.sp), "=r"(r.fp));
	chain_ra[2] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	chain_n = nts_unwind(snap, &r, 0, chain_ips, 64, NULL);
	/* the same walk on a copy of the stack (perf_events' PERF_SAMPLE_STACK_USER): the
	 * readable pages from sp, at most 64 KiB, into a heap buffer (ASan sees any read
	 * outside it) */
	size_t len = 4096 - (size_t)(r.sp & 4095);
	while (len < 65536 && nts_probe_readable(r.sp + len, 4096))
		len += 4096;
	free(chain_copy);
	chain_copy = malloc(len);
	chain_copy_len = 0;
	if (chain_copy) {
		copy_stack(chain_copy, r.sp, len);
		chain_copy_len = len;
		chain_copy_regs = r;
	}
}

CHAIN_FN static void chain_b(const nts_modsnap *snap)
{
	chain_ra[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	chain_c(snap);
	__asm__ volatile("");
}

CHAIN_FN static void chain_a(const nts_modsnap *snap)
{
	chain_ra[0] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	chain_b(snap);
	__asm__ volatile("");
}

static void test_sampler_unwind_own_stack(void)
{
	chain_a(snapshot());
	int pos = -1, in_order = 1;
	for (int k = 2; k >= 0; k--) {
		int found = -1;
		for (uint32_t i = 0; i < chain_n; i++)
			if (chain_ips[i] == chain_ra[k]) {
				found = (int)i;
				break;
			}
		if (found <= pos)
			in_order = 0;
		pos = found;
	}
	ok(in_order && chain_n >= 4,
	   "test_sampler_unwind_own_stack: the callers' return addresses, in order (%u frames, "
	   "probing the stack)",
	   chain_n);
	ok(nts_probe_readable((uint64_t)(uintptr_t)chain_ips, 8) &&
		   !nts_probe_readable(8, 8),
	   "test_sampler_unwind_own_stack: page probing tells readable from unmapped");
	const nts_modsnap *snap = snapshot();
	uint64_t ips[64];
	int end;
	uint32_t n = chain_copy ? nts_unwind_copy(snap, &chain_copy_regs, chain_copy, chain_copy_len,
						  ips, 64, NULL, &end)
				: 0;
	ok(n == chain_n && memcmp(ips, chain_ips, n * sizeof *ips) == 0,
	   "test_sampler_unwind_own_stack: the walk of a copy of the stack is the live walk "
	   "(%u of %u frames, %zu bytes copied)",
	   n, chain_n, chain_copy_len);
	/* a copy cut after 64 bytes: a shorter walk, nothing read past it */
	n = chain_copy ? nts_unwind_copy(snap, &chain_copy_regs, chain_copy, 64, ips, 64, NULL, &end)
		       : 0;
	ok(n >= 1 && n < chain_n && ips[0] == chain_ips[0],
	   "test_sampler_unwind_own_stack: a copy cut short gives a shorter walk (%u frames)", n);
	n = nts_unwind_copy(snap, &chain_copy_regs, NULL, 0, ips, 64, NULL, &end);
	ok(n == 1 && end == NTS_END_STOP,
	   "test_sampler_unwind_own_stack: no copy: the pc alone");
	free(chain_copy);
	chain_copy = NULL;
}

/* ---------------------------------------------------------------- output format */

/* A walk trusts the module snapshot only while no dlclose began after it was built: in
 * between, nts_snap_get() gives NULL (frame pointers only), and every walker holding it is
 * counted so the unload can wait. */
static void test_sampler_snapshot_unload(void)
{
	nts_modsnap *saved = atomic_load(&nts_g.snap);
	atomic_store(&nts_g.snap, snapshot());
	uint64_t b = atomic_load(&nts_g.unload_begin);
	atomic_store(&nts_g.unload_end, b);
	atomic_store(&nts_g.snap_gen, b);
	const nts_modsnap *s1 = nts_snap_get();
	ok(s1 == snapshot() && atomic_load(&nts_g.snap_users) == 1,
	   "test_sampler_snapshot_unload: trusted, and the walker is counted");
	nts_snap_put(s1);
	is_int(atomic_load(&nts_g.snap_users), 0, "test_sampler_snapshot_unload: put uncounts");
	atomic_fetch_add(&nts_g.unload_begin, 1); /* a dlclose begins */
	const nts_modsnap *s2 = nts_snap_get();
	ok(s2 == NULL && atomic_load(&nts_g.snap_users) == 0,
	   "test_sampler_snapshot_unload: untrusted once an unload began");
	atomic_fetch_add(&nts_g.unload_end, 1); /* it ended, the snapshot is not rebuilt yet */
	ok(nts_snap_get() == NULL, "test_sampler_snapshot_unload: untrusted until rebuilt");
	/* a walk without the snapshot still gives the frame-pointer chain */
	chain_a(NULL);
	ok(chain_n >= 2, "test_sampler_snapshot_unload: the walk without it uses frame pointers "
			 "(%u frames)", chain_n);
	atomic_store(&nts_g.snap_gen, b + 1); /* rebuilt from the maps read after the unload */
	const nts_modsnap *s3 = nts_snap_get();
	ok(s3 == snapshot(), "test_sampler_snapshot_unload: trusted again once rebuilt");
	nts_snap_put(s3);
	atomic_store(&nts_g.snap, saved);
	free(chain_copy); /* chain_a's copy of the stack, not used here */
	chain_copy = NULL;
}

static void test_sampler_output_format(void)
{
	char path[] = "/tmp/nts-test-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		ok(0, "test_sampler_output_format: mkstemp");
		return;
	}
	unlink(path);
	nts_modlist ml;
	memset(&ml, 0, sizeof ml);
	ml.m = calloc(1, sizeof *ml.m);
	ml.n = ml.cap = 1;
	ml.m[0].base = 0x400000;
	ml.m[0].size = 0x1000;
	ml.m[0].file_offset = 0x200;
	ml.m[0].path = strdup("/opt/app/bin/prog");
	strcpy(ml.m[0].build_id, "0123abcd");
	struct nts_session s;
	memset(&s, 0, sizeof s);
	s.fd = fd;
	s.format_version = 5;
	s.seed = 77;
	s.mode = NTS_MODE_SIGNAL;
	nts_sched_init(&s.sched, NTS_SCHED_POISSON, 2000000, 77, 1000);
	nt_error err;
	nt_error_clear(&err);
	int rc = nts_out_open(&s, &ml, 1000, 4242, &err);
	is_int(rc, 0, "test_sampler_output_format: open");
	nts_out_thread_name(&s, 17, "worker-1", 1500, 4242);
	uint64_t rbuf[sizeof(nts_record) / 8 + 4];
	nts_record *r = (nts_record *)(void *)rbuf;
	memset(r, 0, sizeof *r);
	r->tid = 17;
	r->state = NTS_ST_BLOCKED;
	r->cpu_ns = 123456789;
	r->cpu = 1;
	r->depth = 3;
	uint64_t ips[3] = {0x400010, 0x400020, 0x400030};
	nts_out_sample(&s, r, 2000, ips, 4242);
	nts_out_sample(&s, r, 1900, ips, 4242); /* earlier: clamped, the file stays ordered */
	nts_out_flush(&s, 3000, 4242);
	rc = nts_out_close(&s, 4000, 4242, &err);
	is_int(rc, 0, "test_sampler_output_format: close");
	nts_modlist_free(&ml);

	nt_reader *rd = NULL;
	nt_error_clear(&err);
	nt_reader_opts ro = {sizeof ro, NT_READ_FILE_ORDER, NULL};
	if (nt_reader_open_file(&rd, path, &ro, &err) < 0) {
		/* the file was unlinked: read it through /proc */
		char p2[64];
		snprintf(p2, sizeof p2, "/proc/self/fd/%d", fd);
		nt_error_clear(&err);
		rc = nt_reader_open_file(&rd, p2, &ro, &err);
	}
	ok(rd != NULL, "test_sampler_output_format: the trace opens: %s", err.msg);
	if (!rd)
		return;
	const nt_trace_header *h = nt_reader_header(rd);
	ok(h->qpc_frequency == 1000000000u && h->sync_qpc == 1000 && h->pointer_size == 8 &&
		   h->expected_sampling_ns == 2000000,
	   "test_sampler_output_format: header: ns ticks, session start, 8-byte pointers, interval");
	const nt_event *ev;
	int samples = 0, modules = 0, names = 0, settings = 0, stats = 0, order = 1;
	uint64_t last_ts = 0;
	while ((rc = nt_reader_next(rd, &ev, &err)) == 1) {
		nt_value v;
		char buf[256];
		if (ev->timestamp < last_ts)
			order = 0;
		last_ts = ev->timestamp;
		uint32_t type;
		if (nt_event_is_sample(ev, &type)) {
			samples++;
			ok(type == 1 && ev->meta->version == 1 && ev->thread_id == 17 &&
				   ev->capture_thread_id == 4242 && ev->stack_depth == 3 &&
				   ev->stack[1] == 0x400020 && ev->processor == 1,
			   "test_sampler_output_format: ThreadSample v1, External, thread, capture "
			   "thread, stack, processor");
			ok(nt_event_field(ev, 8, "CpuTimeNs", &v) == 1 && v.u == 123456789 &&
				   nt_event_field(ev, 8, "State", &v) == 1 && v.u == NTS_ST_BLOCKED,
			   "test_sampler_output_format: CpuTimeNs and State");
			continue;
		}
		if (strcmp(ev->meta->provider, NT_PROVIDER_NTSAMPLER) != 0)
			continue;
		switch (ev->meta->event_id) {
		case NT_NTS_MODULE_MAP:
			modules++;
			nt_event_field(ev, 8, "Path", &v);
			nt_utf16z_to_utf8(v.raw, v.raw_len, buf, sizeof buf);
			ok(strcmp(buf, "/opt/app/bin/prog") == 0 &&
				   nt_event_field(ev, 8, "Base", &v) == 1 && v.u == 0x400000 &&
				   nt_event_field(ev, 8, "FileOffset", &v) == 1 && v.u == 0x200,
			   "test_sampler_output_format: ModuleMap fields");
			nt_event_field(ev, 8, "BuildId", &v);
			nt_utf16z_to_utf8(v.raw, v.raw_len, buf, sizeof buf);
			is_str(buf, "0123abcd", "test_sampler_output_format: ModuleMap BuildId");
			break;
		case NT_NTS_THREAD_NAME:
			names++;
			nt_event_field(ev, 8, "Name", &v);
			nt_utf16z_to_utf8(v.raw, v.raw_len, buf, sizeof buf);
			is_str(buf, "worker-1", "test_sampler_output_format: ThreadName");
			break;
		case NT_NTS_SESSION_SETTINGS:
			settings++;
			nt_event_field(ev, 8, "Schedule", &v);
			nt_utf16z_to_utf8(v.raw, v.raw_len, buf, sizeof buf);
			ok(strcmp(buf, "poisson") == 0 && nt_event_field(ev, 8, "Seed", &v) == 1 &&
				   v.u == 77 && nt_event_field(ev, 8, "IntervalNs", &v) == 1 &&
				   v.u == 2000000,
			   "test_sampler_output_format: SessionSettings");
			break;
		case NT_NTS_SAMPLER_STATS:
			stats++;
			ok(nt_event_field(ev, 8, "Samples", &v) == 1 && v.u == 2,
			   "test_sampler_output_format: SamplerStats counts the samples");
			break;
		}
	}
	is_int(rc, 0, "test_sampler_output_format: read to the end: %s", err.msg);
	ok(samples == 2 && modules == 1 && names == 1 && settings == 1 && stats == 2,
	   "test_sampler_output_format: 2 samples, 1 module, 1 name, 1 settings, 2 stats (%d %d "
	   "%d %d %d)",
	   samples, modules, names, settings, stats);
	ok(order, "test_sampler_output_format: timestamps never go backwards");
	ok(nt_reader_stats_get(rd)->end_tag && !nt_reader_stats_get(rd)->truncated,
	   "test_sampler_output_format: the stream is finished");
	nt_reader_free(rd);
	close(fd);
}

int main(void)
{
	test_sampler_rng_is_seeded();
	test_sampler_snapshot_unload();
	test_sampler_exponential_gaps();
	test_sampler_fixed_schedule();
	test_sampler_poisson_schedule();
	test_sampler_cfi_rules();
	test_sampler_unwind_leaf_caller();
	test_sampler_unwind_own_stack();
	test_sampler_unwind_whole();
	test_sampler_unwind_hostile();
	test_sampler_output_format();
	return tap_done();
}
