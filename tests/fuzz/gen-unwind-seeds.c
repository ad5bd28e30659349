/* SPDX-License-Identifier: MIT */
/* gen-unwind-seeds.c - writes the seed inputs of the unwinder's fuzz target
 * (tests/fuzz/fuzz-unwind.c, whose header comment gives the layout): small objects made
 * by hand as gcc and ld make them - x86-64 code of four functions (a leaf that saves a
 * register, a frame-pointer function, a fib-like function that saves three, an outermost
 * one), a signal return trampoline, an .eh_frame_hdr with its sorted table, a CIE ("zR",
 * pcrel sdata4) and an FDE per function whose CFA programs describe the code exactly -
 * and two stack images: a call chain, and the same chain under a signal frame. One seed
 * per interrupted instruction of each function and per stack.
 *
 *   gen-unwind-seeds DIR
 *
 * Exit status 0, 1 usage, 3 cannot write. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint8_t buf[2048];
static size_t len;

static size_t put(const void *p, size_t n)
{
	size_t at = len;
	memcpy(buf + len, p, n);
	len += n;
	return at;
}

static void put8(uint8_t v)
{
	buf[len++] = v;
}

static void set32(size_t at, uint32_t v)
{
	memcpy(buf + at, &v, 4);
}

static void set64(size_t at, uint64_t v)
{
	memcpy(buf + at, &v, 8);
}

/* code offsets */
static size_t f0, f1, f2, f3, tramp;
static const uint8_t c_f0[] = {0x53, 0x48, 0x89, 0xf8, 0x5b, 0xc3};
static const uint8_t c_f1[] = {0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0, 0x5d, 0xc3};
static const uint8_t c_f2[] = {0x41, 0x54, 0x55, 0x53, 0xe8, 0, 0, 0, 0, 0x5b, 0x5d, 0x41, 0x5c, 0xc3};
static const uint8_t c_f3[] = {0xe8, 0, 0, 0, 0, 0xf4};
static const uint8_t c_tramp[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

static void call_to(size_t call, size_t target)
{
	set32(call + 1, (uint32_t)((int64_t)target - (int64_t)(call + 5)));
}

/* An FDE for the code at [at, at + n) with the CFA program prog. */
static size_t fde(size_t cie, size_t at, size_t n, const uint8_t *prog, size_t plen)
{
	size_t start = len;
	len += 4;                                       /* length */
	set32(len, (uint32_t)(len - cie));               /* CIE pointer */
	len += 4;
	set32(len, (uint32_t)((int64_t)at - (int64_t)len)); /* pc_begin, pcrel */
	len += 4;
	set32(len, (uint32_t)n);
	len += 4;
	put8(0); /* augmentation data length */
	put(prog, plen);
	while ((len - start) % 4)
		put8(0); /* DW_CFA_nop */
	set32(start, (uint32_t)(len - start - 4));
	return start;
}

static size_t stack_off;

/* stack word i: a pointer to stack word k (fuzz-unwind.c maps 0x8000 + k, which is past
 * the input, to &stack[k]) or an offset into the input */
static void sw(size_t i, uint64_t v)
{
	set64(stack_off + i * 8, v);
}

#define SPTR(k) (0x8000u + (k))

static int write_seed(const char *dir, const char *name, size_t pc, int rbp_word)
{
	buf[2] = (uint8_t)pc;
	buf[3] = (uint8_t)(pc >> 8);
	buf[6] = (uint8_t)rbp_word;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "gen-unwind-seeds: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen-unwind-seeds DIR\n");
		return 1;
	}
	memset(buf, 0, sizeof buf);
	len = 8;
	f0 = put(c_f0, sizeof c_f0);
	f1 = put(c_f1, sizeof c_f1);
	f2 = put(c_f2, sizeof c_f2);
	f3 = put(c_f3, sizeof c_f3);
	tramp = put(c_tramp, sizeof c_tramp);
	call_to(f1 + 4, f0);
	call_to(f2 + 4, f1);
	call_to(f3, f2);
	while (len % 4)
		put8(0x90);
	/* .eh_frame_hdr: version 1, eh_frame_ptr pcrel sdata4, fde_count udata4, table
	 * datarel sdata4 */
	size_t hdr = len;
	static const uint8_t h[4] = {1, 0x1b, 0x03, 0x3b};
	put(h, 4);
	size_t ehp = len;
	len += 4;
	set32(len, 4);
	len += 4;
	size_t table = len;
	len += 4 * 8;
	/* .eh_frame: the CIE */
	size_t eh = len, cie = len;
	static const uint8_t cie_body[] = {
		0, 0, 0, 0,       /* CIE id */
		1,                /* version */
		'z', 'R', 0,      /* augmentation */
		1,                /* code alignment */
		0x78,             /* data alignment -8 */
		16,               /* return address register */
		1, 0x1b,          /* augmentation data: FDE pointers pcrel sdata4 */
		0x0c, 7, 8,       /* def_cfa rsp+8 */
		0x90, 1,          /* offset ra, cfa-8 */
		0, 0,
	};
	len += 4;
	put(cie_body, sizeof cie_body);
	set32(cie, (uint32_t)(len - cie - 4));
	set32(ehp, (uint32_t)((int64_t)eh - (int64_t)ehp));
	/* f0: push rbx | mov | pop rbx | ret */
	static const uint8_t p0[] = {0x41, 0x0e, 16, 0x83, 2, 0x44, 0x0e, 8};
	/* f1: push rbp | mov rsp,rbp | call | pop rbp | ret */
	static const uint8_t p1[] = {0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x46, 0x0c, 7, 8};
	/* f2: push r12 | push rbp | push rbx | call | pop rbx | pop rbp | pop r12 | ret,
	 * with remember/restore_state around the epilogue as gcc writes for early returns */
	static const uint8_t p2[] = {0x42, 0x0e, 16, 0x8c, 2, 0x41, 0x0e, 24, 0x86, 3, 0x41, 0x0e,
				     32,   0x83, 4, 0x0a, 0x46, 0x0e, 24, 0x41, 0x0e, 16, 0x42, 0x0e,
				     8,    0x0b};
	/* f3: the outermost frame, return address undefined */
	static const uint8_t p3[] = {0x07, 16};
	size_t fdes[4];
	fdes[0] = fde(cie, f0, sizeof c_f0, p0, sizeof p0);
	fdes[1] = fde(cie, f1, sizeof c_f1, p1, sizeof p1);
	fdes[2] = fde(cie, f2, sizeof c_f2, p2, sizeof p2);
	fdes[3] = fde(cie, f3, sizeof c_f3, p3, sizeof p3);
	size_t starts[4] = {f0, f1, f2, f3};
	for (int i = 0; i < 4; i++) {
		set32(table + (size_t)i * 8, (uint32_t)((int64_t)starts[i] - (int64_t)hdr));
		set32(table + (size_t)i * 8 + 4, (uint32_t)((int64_t)fdes[i] - (int64_t)hdr));
	}
	while (len % 8)
		put8(0);
	stack_off = len;
	len += 64 * 8;
	buf[0] = (uint8_t)hdr;
	buf[1] = (uint8_t)(hdr >> 8);
	buf[4] = (uint8_t)stack_off;
	buf[5] = (uint8_t)(stack_off >> 8);
	/* the call chain f3 -> f2 -> f1 -> f0, interrupted in f0 after its push */
	sw(0, 0x1111);             /* f0's saved rbx */
	sw(1, f1 + 9);             /* return into f1 */
	sw(2, SPTR(40));           /* f1's saved rbp (f2 does not use rbp as a frame pointer) */
	sw(3, f2 + 9);             /* return into f2 */
	sw(4, 0x2222);             /* f2's saved rbx */
	sw(5, SPTR(40));           /* rbp */
	sw(6, 0x3333);             /* r12 */
	sw(7, f3 + 5);             /* return into f3 */
	char name[64];
	for (size_t i = 0; i < sizeof c_f0; i++) {
		snprintf(name, sizeof name, "chain-f0-%zu", i);
		if (write_seed(argv[1], name, f0 + i, 2))
			return 3;
	}
	for (size_t i = 0; i < sizeof c_f1; i++) {
		snprintf(name, sizeof name, "chain-f1-%zu", i);
		if (write_seed(argv[1], name, f1 + i, 2))
			return 3;
	}
	for (size_t i = 0; i < sizeof c_f2; i++) {
		snprintf(name, sizeof name, "chain-f2-%zu", i);
		if (write_seed(argv[1], name, f2 + i, 200))
			return 3;
	}
	/* a signal handler (f0) interrupted f1 at its "pop rbp": the trampoline, then the
	 * ucontext at stack word 2 (RBP gregs[10], RSP [15], RIP [16]) */
	memset(buf + stack_off, 0, 64 * 8);
	sw(0, 0x1111);
	sw(1, tramp);
	sw(2 + 5 + 10, SPTR(30));  /* RBP */
	sw(2 + 5 + 15, SPTR(30));  /* RSP */
	sw(2 + 5 + 16, f1 + 9);    /* RIP */
	sw(30, SPTR(40));          /* f1's saved rbp */
	sw(31, f2 + 9);
	sw(32, 0x2222);
	sw(33, SPTR(40));
	sw(34, 0x3333);
	sw(35, f3 + 5);
	if (write_seed(argv[1], "signal-f0-1", f0 + 1, 200) ||
	    write_seed(argv[1], "signal-tramp", tramp, 200))
		return 3;
	/* Hostile variants of the signal seed, each a read past the end of the object for an
	 * unwinder that trusts the tables: */
	size_t base = len;
	uint8_t saved[16];
	/* a table with more entries than the object holds */
	memcpy(saved, buf + hdr + 8, 4);
	set32(hdr + 8, 0x10000000u);
	if (write_seed(argv[1], "hostile-table-past-end", f0 + 1, 200))
		return 3;
	memcpy(buf + hdr + 8, saved, 4);
	/* f0's FDE moved to the very end, its length running past it */
	size_t at = len;
	len += 4;
	set32(len, (uint32_t)(len - cie));
	len += 4;
	set32(len, (uint32_t)((int64_t)f0 - (int64_t)len));
	len += 4;
	set32(len, (uint32_t)sizeof c_f0);
	len += 4;
	set32(at, 0x1000);
	set32(table + 4, (uint32_t)((int64_t)at - (int64_t)hdr));
	if (write_seed(argv[1], "hostile-fde-past-end", f0 + 1, 200))
		return 3;
	/* a CIE whose personality pointer (8 bytes) is longer than its augmentation data
	 * (1 byte), then an FDE of f0 that uses it: the CIE is refused */
	len = base;
	size_t cie2 = len;
	static const uint8_t cie2_body[] = {
		0, 0, 0, 0, 1, 'z', 'P', 'R', 0, 1, 0x78, 16,
		1,    /* augmentation data: 1 byte */
		0x00, /* personality: an 8-byte absolute pointer */
		0x1b, 0x0c, 7, 8, 0x90, 1,
	};
	len += 4;
	put(cie2_body, sizeof cie2_body);
	set32(cie2, (uint32_t)(len - cie2 - 4));
	at = fde(cie2, f0, sizeof c_f0, p0, sizeof p0);
	set32(table + 4, (uint32_t)((int64_t)at - (int64_t)hdr));
	if (write_seed(argv[1], "hostile-cie-personality", f0 + 1, 200))
		return 3;
	return 0;
}
