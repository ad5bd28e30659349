/* SPDX-License-Identifier: MIT */
/* fuzz-unwind.c - libFuzzer target for the sampler's call-frame information parser and
 * interpreter (sampler/unwind.c): the .eh_frame_hdr checks, the CIE and FDE decoding, the
 * CFA programs, and the stack walk over a stack made of the input.
 *
 * Input layout (little-endian):
 *   [0..1]   offset of the .eh_frame_hdr in the input
 *   [2..3]   offset of the first interrupted pc in the input
 *   [4..5]   offset of the stack image in the input (STACK_WORDS words, zero past the end)
 *   [6]      RBP as a word index into the stack image (>= STACK_WORDS: a value outside it)
 *   the rest: anything (CIEs, FDEs, code bytes)
 * The whole input is both the object's executable segment and its CFI window, so every
 * read the unwinder may make of code or CFI lies in the input's allocation (libFuzzer
 * gives it exactly the input's size) and ASan reports one byte beyond. Stack words whose
 * value is below 0x10000 are taken as offsets into the input (return addresses and frame
 * pointers that lead somewhere); the stack image is its own allocation, and the walk is
 * given its exact end, so a stack read outside it is reported too.
 * Build and run: tests/fuzz/run-fuzz.sh -T unwind. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_WORDS 64
#define MAX_FRAMES 64

static uint16_t u16(const uint8_t *d)
{
	return (uint16_t)(d[0] | d[1] << 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8 || size > 0xffff)
		return 0;
	uint64_t lo = (uint64_t)(uintptr_t)data, hi = lo + size;
	nts_modsnap *snap = malloc(sizeof *snap + sizeof(nts_modseg));
	if (!snap)
		return 0;
	snap->gen = 1;
	snap->nseg = 1;
	nts_modseg *seg = &snap->seg[0];
	memset(seg, 0, sizeof *seg);
	seg->lo = lo;
	seg->hi = hi;
	nts_eh_hdr_parse(data + u16(data) % size, lo, hi, seg);
	if (seg->eh_hdr && (seg->cfi_lo != lo || seg->cfi_hi != hi ||
			    (uint64_t)(uintptr_t)seg->table + (uint64_t)seg->fde_count * 8 > hi))
		__builtin_trap(); /* the table must lie in the window */

	/* lookups: every address of the input (bounded), then the table's own starts */
	nts_cfi_rule r;
	for (size_t i = 0; i < size && i < 512; i++) {
		int rc = nts_cfi_lookup(snap, lo + i, &r);
		if ((rc == 0) != (r.kind != NTS_RULE_NONE))
			__builtin_trap(); /* the result and the rule's kind agree */
		if (rc == 0 && r.kind != NTS_RULE_END &&
		    (r.cfa_off < -(8 << 20) || r.cfa_off > (8 << 20)))
			__builtin_trap(); /* offsets are bounded */
	}

	/* the walk */
	uint64_t *stack = calloc(STACK_WORDS, sizeof *stack);
	if (!stack) {
		free(snap);
		return 0;
	}
	size_t soff = u16(data + 4) % size;
	for (size_t i = 0; i < STACK_WORDS && soff + i * 8 + 8 <= size; i++) {
		uint64_t w;
		memcpy(&w, data + soff + i * 8, 8);
		if (w < 0x10000)
			w = w < size ? lo + w : (uint64_t)(uintptr_t)&stack[w % STACK_WORDS];
		stack[i] = w;
	}
	nts_regs regs;
	regs.pc = lo + u16(data + 2) % size;
	regs.sp = (uint64_t)(uintptr_t)stack;
	regs.fp = data[6] < STACK_WORDS ? (uint64_t)(uintptr_t)&stack[data[6]] : 0x12345678;
	uint64_t ips[MAX_FRAMES], ips2[MAX_FRAMES];
	uint64_t stack_hi = (uint64_t)(uintptr_t)&stack[STACK_WORDS];
	nts_cfi_cache *cache = calloc(1, sizeof *cache);
	int end;
	uint32_t n = nts_unwind_ex(snap, &regs, stack_hi, ips, MAX_FRAMES, NULL, &end);
	if (n < 1 || n > MAX_FRAMES || ips[0] != regs.pc)
		__builtin_trap();
#ifdef FUZZ_UNWIND_VERBOSE /* the walk, as offsets into the input: to check a seed */
	fprintf(stderr, "%u frames, end %d:", n, end);
	for (uint32_t i = 0; i < n; i++)
		fprintf(stderr, " %lld", (long long)(ips[i] - lo));
	fprintf(stderr, "\n");
#endif
	if (cache) {
		/* the per-thread cache changes nothing */
		for (int k = 0; k < 2; k++) {
			int end2;
			uint32_t n2 = nts_unwind_ex(snap, &regs, stack_hi, ips2, MAX_FRAMES, cache, &end2);
			if (n2 != n || end2 != end || memcmp(ips, ips2, n * sizeof ips[0]) != 0)
				__builtin_trap();
		}
	}
	/* without module information: frame pointers only, nothing but the stack is read */
	(void)nts_unwind_ex(NULL, &regs, stack_hi, ips2, MAX_FRAMES, NULL, &end);
	free(cache);
	free(stack);
	free(snap);
	return 0;
}
