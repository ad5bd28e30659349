/* SPDX-License-Identifier: MIT */
/* unwind.c - async-signal-safe native stack walker for x86-64: DWARF call-frame
 * information (.eh_frame, found through each object's .eh_frame_hdr binary-search table),
 * with frame pointers as the fallback.
 *
 * Why CFI and not only frame pointers (doc/sampler-design.md §2): gcc 12 -O2 emits no frame
 * in leaf functions even with -fno-omit-frame-pointer, so a frame-pointer walk from a
 * sample in a leaf skips the leaf's caller; and Debian's libc has no frame pointers, so a
 * thread blocked in libc loses every frame above it. The CFI of the interrupted address
 * says exactly where the return address and the caller's RBP are. libgcc's and libunwind's
 * CFI unwinders are not usable in a signal handler (dl_iterate_phdr takes the loader lock,
 * gperftools #1583), so this file interprets the CFI itself: the object list comes from a
 * snapshot built outside the handler (modules.c), lookups are a binary search in the
 * object's own .eh_frame_hdr, and each address's rule is cached per thread.
 *
 * Whole stacks: a saved RBP whose slot is below the stack pointer was popped already (an
 * epilogue) and is taken from the register; the kernel's signal frame is crossed by its
 * trampoline's code ("mov $15, %rax; syscall") and the ucontext above it; interrupted code
 * without usable CFI (PLT stubs) continues by the return address at [rsp]; and a frame
 * whose CFI cannot be followed continues by frame pointers while RBP is known.
 *
 * Safety: only pure computation and loads. Stack loads are checked against
 * [sp, stack_hi) (or, when the top is unknown, each new page is probed with one syscall);
 * .eh_frame and .eh_frame_hdr are read only through a bounds-checked cursor inside the
 * readable segment that holds them (nts_modseg.cfi_lo/hi), so a corrupt or hostile table
 * (tests/fuzz/fuzz-unwind.c) cannot make a read outside it; code bytes are read only
 * inside an executable segment. The objects of the snapshot stay mapped while loaded:
 * dlclose waits for the walks that use a snapshot, and later walks get none until it is
 * rebuilt (the dlclose interposer in interpose.c, nts_snap_get in internal.h).
 * Every loop is bounded. Nothing here allocates, locks or touches errno-visible state.
 * Not here: the signal handler (signal.c), building the snapshot (modules.c). */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* DWARF register numbers (x86-64 psABI). */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16

/* Pointer encodings (LSB 3.0, .eh_frame). */
#define PE_OMIT 0xff
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30

/* Bounds (none comes from a standard; each keeps a corrupt or hostile table from making
 * the handler loop long). */
#define UW_MAX_CFI_LEN (1u << 20) /* one CIE or FDE; real ones are < 1 KiB */
#define UW_MAX_OPS 4096           /* CFA instructions interpreted per lookup */
#define UW_MAX_STATE_STACK 8      /* DW_CFA_remember_state nesting */
#define UW_MAX_FRAME (8u << 20)   /* one frame's size; larger means a bad rule */
#define UW_MIN_ADDR 4096          /* addresses below are never code */

/* ---------------------------------------------------------------------------------------
 * Memory probing (gperftools check_address-inl.h: the kernel copies the new signal mask
 * from user memory before it checks "how", so an invalid "how" gives EFAULT for an
 * unreadable address and EINVAL otherwise, changing nothing).
 * ------------------------------------------------------------------------------------- */

int nts_probe_readable(uint64_t addr, size_t len)
{
	uint64_t page = addr & ~(uint64_t)4095;
	uint64_t end = addr + len;
	if (end < addr)
		return 0;
	for (; page < end; page += 4096) {
		long rc = syscall(SYS_rt_sigprocmask, ~0, (void *)(uintptr_t)page, NULL, 8);
		if (rc != -1 || errno != EINVAL)
			return 0; /* EFAULT: unreadable; anything else: be conservative */
	}
	return 1;
}

/* ---------------------------------------------------------------------------------------
 * Stack reads
 * ------------------------------------------------------------------------------------- */

typedef struct uw_stack {
	uint64_t lo, hi;       /* readable window; hi == 0: unknown, probe pages */
	uint64_t probed_lo, probed_hi; /* pages known readable when probing */
	const uint8_t *img;    /* a copy of the stack from base (perf_events), or NULL */
	uint64_t base;
} uw_stack;

static int uw_read(uw_stack *st, uint64_t addr, uint64_t *out)
{
	if (addr < st->lo || (addr & 7))
		return -1;
	if (st->hi) {
		if (addr > st->hi - 8 || st->hi < 8)
			return -1;
	} else {
		if (addr - st->lo > UW_MAX_FRAME * 4)
			return -1;
		if (addr < st->probed_lo || addr + 8 > st->probed_hi) {
			uint64_t page = addr & ~(uint64_t)4095;
			if (!nts_probe_readable(page, 4096))
				return -1;
			if (page == st->probed_hi)
				st->probed_hi = page + 4096;
			else {
				st->probed_lo = page;
				st->probed_hi = page + 4096;
			}
		}
	}
	if (st->img) { /* hi is set: [lo, hi) lies inside the copy */
		memcpy(out, st->img + (addr - st->base), sizeof *out);
		return 0;
	}
	*out = *(const volatile uint64_t *)(uintptr_t)addr;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Objects of the snapshot
 * ------------------------------------------------------------------------------------- */

const nts_modseg *nts_segment(const nts_modsnap *snap, uint64_t pc)
{
	if (!snap)
		return NULL;
	size_t lo = 0, hi = snap->nseg;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const nts_modseg *s = &snap->seg[mid];
		if (pc < s->lo)
			hi = mid;
		else if (pc >= s->hi)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

/* ---------------------------------------------------------------------------------------
 * A bounds-checked cursor over CFI bytes: p never passes end; a read that does not fit
 * marks the cursor bad and yields 0, and every later read fails too.
 * ------------------------------------------------------------------------------------- */

typedef struct uw_cur {
	const uint8_t *p, *end;
	int bad;
} uw_cur;

static size_t cur_left(const uw_cur *c)
{
	return c->bad || c->p >= c->end ? 0 : (size_t)(c->end - c->p);
}

static void cur_skip(uw_cur *c, uint64_t n)
{
	if (n > cur_left(c)) {
		c->bad = 1;
		c->p = c->end;
		return;
	}
	c->p += n;
}

static uint64_t cur_u(uw_cur *c, size_t n)
{
	uint64_t v = 0;
	if (n > cur_left(c)) {
		c->bad = 1;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t cur_uleb(uw_cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (!cur_left(c)) {
			c->bad = 1;
			return 0;
		}
		uint8_t b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

static int64_t cur_sleb(uw_cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;
	do {
		if (!cur_left(c) || shift >= 64) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* x * f in two's complement (a hostile table must not make it undefined). */
static int64_t mul_s(uint64_t x, int64_t f)
{
	return (int64_t)(x * (uint64_t)f);
}

/* Reads an encoded pointer; pcrel is relative to the field's own address. Indirect and
 * other bases are not needed for pc_begin/pc_range and mark the cursor bad. */
static uint64_t cur_ptr(uw_cur *c, uint8_t enc)
{
	uint64_t field = (uint64_t)(uintptr_t)c->p;
	uint64_t v;
	if (enc == PE_OMIT)
		return 0;
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = cur_u(c, 8); break;
	case PE_ULEB128: v = cur_uleb(c); break;
	case PE_UDATA2: v = cur_u(c, 2); break;
	case PE_UDATA4: v = cur_u(c, 4); break;
	case PE_UDATA8: v = cur_u(c, 8); break;
	case PE_SLEB128: v = (uint64_t)cur_sleb(c); break;
	case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)cur_u(c, 2); break;
	case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)cur_u(c, 4); break;
	case PE_SDATA8: v = cur_u(c, 8); break;
	default: c->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_PCREL: v += field; break;
	default: c->bad = 1; return 0;
	}
	if (enc & 0x80)
		c->bad = 1; /* indirect */
	return v;
}

/* 1 when [addr, addr + len) lies in the segment's CFI window. */
static int win_has(const nts_modseg *seg, uint64_t addr, uint64_t len)
{
	return seg->cfi_hi > seg->cfi_lo && addr >= seg->cfi_lo && addr <= seg->cfi_hi &&
	       len <= seg->cfi_hi - addr;
}

void nts_eh_hdr_parse(const uint8_t *hdr, uint64_t lo, uint64_t hi, nts_modseg *s)
{
	s->eh_hdr = NULL;
	s->table = NULL;
	s->fde_count = 0;
	s->cfi_lo = s->cfi_hi = 0;
	uint64_t h = (uint64_t)(uintptr_t)hdr;
	if (!hdr || hi <= lo || h < lo || h >= hi || hi - h < 4)
		return;
	if (hdr[0] != 1 || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return;
	uint64_t ptrsz;
	switch (hdr[1] & 0x0f) {
	case 0x03: case 0x0b: ptrsz = 4; break;
	case 0x00: case 0x04: case 0x0c: ptrsz = 8; break;
	default: return;
	}
	if (hi - h < 4 + ptrsz + 4)
		return;
	uint32_t n;
	memcpy(&n, hdr + 4 + ptrsz, 4);
	uint64_t table = h + 4 + ptrsz + 4;
	if ((uint64_t)n > (hi - table) / 8)
		return; /* the table would run past the segment */
	s->eh_hdr = hdr;
	s->table = hdr + 4 + ptrsz + 4;
	s->fde_count = n;
	s->cfi_lo = lo;
	s->cfi_hi = hi;
}

/* Opens the CIE or FDE at addr: *body gets the cursor over its contents (after the
 * length), inside the window. */
static int cfi_entry(const nts_modseg *seg, uint64_t addr, uw_cur *body)
{
	if (!win_has(seg, addr, 4))
		return -1;
	const uint8_t *p = (const uint8_t *)(uintptr_t)addr;
	uw_cur c = {p, p + 4, 0};
	uint64_t len = cur_u(&c, 4);
	if (len == 0xffffffffu) {
		if (!win_has(seg, addr + 4, 8))
			return -1;
		c.end = p + 12;
		len = cur_u(&c, 8);
	}
	if (c.bad || len == 0 || len > UW_MAX_CFI_LEN ||
	    !win_has(seg, (uint64_t)(uintptr_t)c.p, len))
		return -1;
	body->p = c.p;
	body->end = c.p + len;
	body->bad = 0;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * CFA program interpretation
 * ------------------------------------------------------------------------------------- */

enum { RR_UNDEF = 0, RR_SAME, RR_OFFSET, RR_BAD };

typedef struct cfa_state {
	int cfa_reg;     /* DW_RSP or DW_RBP; -1 unsupported (expression) */
	int64_t cfa_off;
	uint8_t fp_rule, ra_rule;
	int64_t fp_off, ra_off;
} cfa_state;

typedef struct cie_info {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int has_z;
	uw_cur insns;    /* initial instructions */
} cie_info;

static int parse_cie(const nts_modseg *seg, uint64_t cie, cie_info *ci)
{
	uw_cur c;
	if (cfi_entry(seg, cie, &c))
		return -1;
	uint32_t id = (uint32_t)cur_u(&c, 4);
	if (c.bad || id != 0)
		return -1;
	uint8_t version = (uint8_t)cur_u(&c, 1);
	if (version != 1 && version != 3 && version != 4)
		return -1;
	char aug[8];
	size_t na = 0;
	for (;;) {
		uint8_t ch = (uint8_t)cur_u(&c, 1);
		if (c.bad)
			return -1;
		if (!ch)
			break;
		if (na >= sizeof aug - 1)
			return -1;
		aug[na++] = (char)ch;
	}
	aug[na] = 0;
	if (version == 4) {
		uint8_t asz = (uint8_t)cur_u(&c, 1);
		(void)cur_u(&c, 1);
		if (asz != 8)
			return -1;
	}
	ci->code_align = cur_uleb(&c);
	ci->data_align = cur_sleb(&c);
	ci->ra_reg = version == 1 ? cur_u(&c, 1) : cur_uleb(&c);
	ci->fde_enc = PE_ABSPTR;
	ci->has_z = 0;
	if (na && aug[0] == 'z') {
		ci->has_z = 1;
		uint64_t alen = cur_uleb(&c);
		if (c.bad || alen > cur_left(&c))
			return -1;
		uw_cur a = {c.p, c.p + alen, 0};
		for (size_t i = 1; i < na; i++) {
			switch (aug[i]) {
			case 'R': ci->fde_enc = (uint8_t)cur_u(&a, 1); break;
			case 'L': (void)cur_u(&a, 1); break;
			case 'P': {
				uint8_t penc = (uint8_t)cur_u(&a, 1);
				/* skip the personality pointer: only its size matters */
				switch (penc & 0x0f) {
				case PE_ABSPTR: case PE_UDATA8: case PE_SDATA8: cur_skip(&a, 8); break;
				case PE_UDATA4: case PE_SDATA4: cur_skip(&a, 4); break;
				case PE_UDATA2: case PE_SDATA2: cur_skip(&a, 2); break;
				case PE_ULEB128: (void)cur_uleb(&a); break;
				case PE_SLEB128: (void)cur_sleb(&a); break;
				default: return -1;
				}
				break;
			}
			case 'S': break; /* signal frame: handled by its code (is_sigreturn) */
			default: i = na; break; /* unknown: the rest is skipped by alen */
			}
		}
		if (a.bad)
			return -1;
		cur_skip(&c, alen);
	} else if (na) {
		return -1; /* augmentation without 'z': sizes unknown */
	}
	if (c.bad || ci->code_align == 0)
		return -1;
	ci->insns = c;
	return 0;
}

/* Runs CFA instructions until the location passes target. initial holds the CIE's state
 * for DW_CFA_restore. Returns 0, or -1 on an unsupported or malformed instruction that
 * matters (an expression for the CFA, RA or RBP). */
static int run_cfa(uw_cur *c, const cie_info *ci, uint64_t loc, uint64_t target,
		   cfa_state *st, const cfa_state *initial, int *ops)
{
	cfa_state stack[UW_MAX_STATE_STACK];
	int depth = 0;
	while (cur_left(c)) {
		if (++*ops > UW_MAX_OPS)
			return -1;
		uint8_t op = (uint8_t)cur_u(c, 1);
		uint8_t hi2 = op & 0xc0, low = op & 0x3f;
		uint64_t reg = 0, delta = 0;
		int64_t off = 0;
		if (hi2 == 0x40) { /* advance_loc */
			delta = low * ci->code_align;
			goto advance;
		}
		if (hi2 == 0x80) { /* offset */
			reg = low;
			off = mul_s(cur_uleb(c), ci->data_align);
			goto set_offset;
		}
		if (hi2 == 0xc0) { /* restore */
			reg = low;
			goto restore;
		}
		switch (op) {
		case 0x00: continue; /* nop */
		case 0x01: /* set_loc */
			loc = cur_ptr(c, ci->fde_enc);
			if (loc > target)
				return c->bad ? -1 : 0;
			continue;
		case 0x02: delta = cur_u(c, 1) * ci->code_align; goto advance;
		case 0x03: delta = cur_u(c, 2) * ci->code_align; goto advance;
		case 0x04: delta = cur_u(c, 4) * ci->code_align; goto advance;
		case 0x05: /* offset_extended */
			reg = cur_uleb(c);
			off = mul_s(cur_uleb(c), ci->data_align);
			goto set_offset;
		case 0x06: reg = cur_uleb(c); goto restore;
		case 0x07: /* undefined */
			reg = cur_uleb(c);
			if (reg == DW_RBP)
				st->fp_rule = RR_UNDEF;
			else if (reg == ci->ra_reg)
				st->ra_rule = RR_UNDEF;
			continue;
		case 0x08: /* same_value */
			reg = cur_uleb(c);
			if (reg == DW_RBP)
				st->fp_rule = RR_SAME;
			else if (reg == ci->ra_reg)
				st->ra_rule = RR_BAD;
			continue;
		case 0x09: /* register */
			reg = cur_uleb(c);
			(void)cur_uleb(c);
			if (reg == DW_RBP)
				st->fp_rule = RR_BAD;
			else if (reg == ci->ra_reg)
				st->ra_rule = RR_BAD;
			continue;
		case 0x0a: /* remember_state */
			if (depth >= UW_MAX_STATE_STACK)
				return -1;
			stack[depth++] = *st;
			continue;
		case 0x0b: /* restore_state */
			if (depth <= 0)
				return -1;
			*st = stack[--depth];
			continue;
		case 0x0c: /* def_cfa */
			st->cfa_reg = (int)(cur_uleb(c) & 0xffff);
			st->cfa_off = (int64_t)cur_uleb(c);
			continue;
		case 0x0d: st->cfa_reg = (int)(cur_uleb(c) & 0xffff); continue;
		case 0x0e: st->cfa_off = (int64_t)cur_uleb(c); continue;
		case 0x0f: { /* def_cfa_expression */
			uint64_t n = cur_uleb(c);
			if (c->bad || n > cur_left(c))
				return -1;
			cur_skip(c, n);
			st->cfa_reg = -1;
			continue;
		}
		case 0x10: /* expression */
		case 0x16: { /* val_expression */
			reg = cur_uleb(c);
			uint64_t n = cur_uleb(c);
			if (c->bad || n > cur_left(c))
				return -1;
			cur_skip(c, n);
			if (reg == DW_RBP)
				st->fp_rule = RR_BAD;
			else if (reg == ci->ra_reg)
				st->ra_rule = RR_BAD;
			continue;
		}
		case 0x11: /* offset_extended_sf */
			reg = cur_uleb(c);
			off = mul_s((uint64_t)cur_sleb(c), ci->data_align);
			goto set_offset;
		case 0x12: /* def_cfa_sf */
			st->cfa_reg = (int)(cur_uleb(c) & 0xffff);
			st->cfa_off = mul_s((uint64_t)cur_sleb(c), ci->data_align);
			continue;
		case 0x13: st->cfa_off = mul_s((uint64_t)cur_sleb(c), ci->data_align); continue;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = cur_uleb(c);
			if (op == 0x14)
				(void)cur_uleb(c);
			else
				(void)cur_sleb(c);
			if (reg == DW_RBP)
				st->fp_rule = RR_BAD;
			else if (reg == ci->ra_reg)
				st->ra_rule = RR_BAD;
			continue;
		case 0x2e: (void)cur_uleb(c); continue; /* GNU_args_size */
		case 0x2f: /* GNU_negative_offset_extended */
			reg = cur_uleb(c);
			off = mul_s(0 - cur_uleb(c), ci->data_align);
			goto set_offset;
		default:
			return -1;
		}
	advance:
		if (c->bad)
			return -1;
		if (loc > target || delta > target - loc)
			return 0;
		loc += delta;
		continue;
	set_offset:
		if (c->bad)
			return -1;
		if (reg == DW_RBP) {
			st->fp_rule = RR_OFFSET;
			st->fp_off = off;
		} else if (reg == ci->ra_reg) {
			st->ra_rule = RR_OFFSET;
			st->ra_off = off;
		}
		continue;
	restore:
		if (!initial)
			return -1; /* restore inside the CIE's own program */
		if (reg == DW_RBP) {
			st->fp_rule = initial->fp_rule;
			st->fp_off = initial->fp_off;
		} else if (reg == ci->ra_reg) {
			st->ra_rule = initial->ra_rule;
			st->ra_off = initial->ra_off;
		}
		continue;
	}
	return c->bad ? -1 : 0;
}

/* Finds the FDE of pc in the segment's .eh_frame_hdr table (sdata4, datarel entries;
 * nts_eh_hdr_parse checked that the table lies in the window). Returns its address, or 0. */
static uint64_t find_fde(const nts_modseg *seg, uint64_t pc)
{
	if (!seg->table || !seg->fde_count)
		return 0;
	uint64_t hdr = (uint64_t)(uintptr_t)seg->eh_hdr;
	size_t lo = 0, hi = seg->fde_count;
	int32_t v;
	/* largest initial_loc <= pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		memcpy(&v, seg->table + mid * 8, 4);
		uint64_t start = hdr + (uint64_t)(int64_t)v;
		if (start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	memcpy(&v, seg->table + (lo - 1) * 8 + 4, 4);
	return hdr + (uint64_t)(int64_t)v;
}

/* Computes the rule for pc (the address to look up: the interrupted pc for the first
 * frame, return address - 1 for the others). */
int nts_cfi_lookup(const nts_modsnap *snap, uint64_t pc, nts_cfi_rule *out)
{
	memset(out, 0, sizeof *out);
	out->pc = pc;
	out->kind = NTS_RULE_NONE;
	const nts_modseg *seg = nts_segment(snap, pc);
	if (!seg)
		return -1;
	uint64_t fde = find_fde(seg, pc);
	uw_cur c;
	if (!fde || cfi_entry(seg, fde, &c))
		return -1;
	uint64_t idfield = (uint64_t)(uintptr_t)c.p;
	uint32_t cie_off = (uint32_t)cur_u(&c, 4);
	if (c.bad || cie_off == 0 || cie_off > idfield - seg->cfi_lo)
		return -1;
	cie_info ci;
	if (parse_cie(seg, idfield - cie_off, &ci))
		return -1;
	uint64_t start = cur_ptr(&c, ci.fde_enc);
	uint64_t range = cur_ptr(&c, (uint8_t)(ci.fde_enc & 0x0f));
	if (c.bad || pc < start || pc - start >= range)
		return -1;
	if (ci.has_z) {
		uint64_t alen = cur_uleb(&c);
		if (c.bad || alen > cur_left(&c))
			return -1;
		cur_skip(&c, alen);
	}
	cfa_state st = {DW_RSP, 8, RR_SAME, RR_UNDEF, 0, 0};
	int ops = 0;
	uw_cur ic = ci.insns;
	if (run_cfa(&ic, &ci, start, pc, &st, NULL, &ops))
		return -1;
	cfa_state initial = st;
	if (run_cfa(&c, &ci, start, pc, &st, &initial, &ops))
		return -1;
	if (st.ra_rule == RR_UNDEF) {
		out->kind = NTS_RULE_END;
		return 0;
	}
	if (st.ra_rule != RR_OFFSET || st.fp_rule == RR_BAD)
		return -1;
	if (st.cfa_reg != DW_RSP && st.cfa_reg != DW_RBP)
		return -1;
	if (st.cfa_off < -(int64_t)UW_MAX_FRAME || st.cfa_off > (int64_t)UW_MAX_FRAME ||
	    st.ra_off < -(int64_t)UW_MAX_FRAME || st.ra_off > (int64_t)UW_MAX_FRAME ||
	    st.fp_off < -(int64_t)UW_MAX_FRAME || st.fp_off > (int64_t)UW_MAX_FRAME)
		return -1;
	out->kind = st.cfa_reg == DW_RSP ? NTS_RULE_RSP : NTS_RULE_RBP;
	out->cfa_off = (int32_t)st.cfa_off;
	out->ra_off = (int32_t)st.ra_off;
	out->fp_off = st.fp_rule == RR_OFFSET ? (int32_t)st.fp_off : NTS_FP_SAME;
	return 0;
}

static void rule_for(const nts_modsnap *snap, nts_cfi_cache *cache, uint64_t pc,
		     nts_cfi_rule *r)
{
	nts_cfi_rule *e = NULL;
	if (cache) {
		if (cache->gen != snap->gen) {
			memset(cache->e, 0, sizeof cache->e);
			cache->gen = snap->gen;
		}
		uint64_t h = (pc * 0x9e3779b97f4a7c15ull) >> 58; /* 64 entries */
		e = &cache->e[h & (NTS_CFI_CACHE - 1)];
		if (e->pc == pc) {
			*r = *e;
			return;
		}
	}
	(void)nts_cfi_lookup(snap, pc, r);
	if (e)
		*e = *r;
}

/* ---------------------------------------------------------------------------------------
 * Code patterns: return addresses, the signal return trampoline
 * ------------------------------------------------------------------------------------- */

/* 1 when ra points just after a call instruction inside a known object. Used only for a
 * first frame without CFI (PLT stubs, code without .eh_frame). */
static int looks_like_return(const nts_modsnap *snap, uint64_t ra)
{
	const nts_modseg *seg = nts_segment(snap, ra);
	if (!seg || ra - seg->lo < 7)
		return 0;
	const uint8_t *p = (const uint8_t *)(uintptr_t)ra;
	if (p[-5] == 0xe8)
		return 1; /* call rel32 */
	if (p[-6] == 0xff && (p[-5] & 0x38) == 0x10)
		return 1; /* call *disp32(...) */
	if (p[-2] == 0xff && (p[-1] & 0x38) == 0x10)
		return 1; /* call *%reg */
	if (p[-3] == 0xff && (p[-2] & 0x38) == 0x10)
		return 1; /* call *disp8(%reg) */
	return 0;
}

/* 1 when pc is the kernel's signal return trampoline, "mov $15, %rax; syscall"
 * (rt_sigreturn: glibc's __restore_rt and every libc's equivalent): the handler
 * returned there, and the stack pointer points at the ucontext_t the kernel saved. Its
 * CFI is a DWARF expression, so the code is matched instead. */
static int is_sigreturn(const nts_modsnap *snap, uint64_t pc)
{
	static const uint8_t tramp[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
	const nts_modseg *seg = nts_segment(snap, pc);
	if (!seg || seg->hi - pc < sizeof tramp)
		return 0;
	return memcmp((const void *)(uintptr_t)pc, tramp, sizeof tramp) == 0;
}

/* Offsets in the ucontext_t of x86-64 Linux: uc_flags, uc_link, uc_stack (24 bytes), then
 * uc_mcontext.gregs[], REG_RBP 10, REG_RSP 15, REG_RIP 16. */
#define UC_GREGS 40u
#define UC_RBP (UC_GREGS + 10u * 8u)
#define UC_RSP (UC_GREGS + 15u * 8u)
#define UC_RIP (UC_GREGS + 16u * 8u)

/* ---------------------------------------------------------------------------------------
 * The walk
 * ------------------------------------------------------------------------------------- */

/* One step by frame pointers: [fp] = caller's fp, [fp+8] = return address. */
static int fp_step(uw_stack *st, uint64_t sp, uint64_t fp, uint64_t *cfa, uint64_t *ra,
		   uint64_t *nfp)
{
	if (fp < sp || (fp & 7) || fp - sp > UW_MAX_FRAME)
		return -1;
	if (uw_read(st, fp, nfp) || uw_read(st, fp + 8, ra))
		return -1;
	*cfa = fp + 16;
	if (*nfp != 0 && *nfp <= fp)
		*nfp = 0; /* the chain must go up; stop after this frame */
	return 0;
}

uint32_t nts_unwind(const nts_modsnap *snap, const nts_regs *regs, uint64_t stack_hi,
		    uint64_t *ips, uint32_t max, nts_cfi_cache *cache)
{
	int end;
	return nts_unwind_ex(snap, regs, stack_hi, ips, max, cache, &end);
}

/* The walk. Each frame: a signal return trampoline restores the interrupted registers
 * from the ucontext; otherwise the CFI rule of the address gives the CFA, the return
 * address and the caller's RBP. A saved RBP whose slot is below the stack pointer was
 * already popped (an epilogue): the register holds it. When the CFI is missing or cannot
 * be followed (an unreadable slot), the walk goes on by frame pointers, or, for the
 * interrupted frame, by a return address at [rsp] (a frameless function or a PLT stub
 * without usable CFI). fp_ok is 0 when the caller's RBP is not known (its slot could not
 * be read): frame pointers cannot be used after that. */
static uint32_t walk(const nts_modsnap *snap, const nts_regs *regs, uw_stack st,
		     uint64_t *ips, uint32_t max, nts_cfi_cache *cache, int *end);

uint32_t nts_unwind_ex(const nts_modsnap *snap, const nts_regs *regs, uint64_t stack_hi,
		       uint64_t *ips, uint32_t max, nts_cfi_cache *cache, int *end)
{
	uw_stack st = {regs->sp, stack_hi, 0, 0, NULL, 0};
	return walk(snap, regs, st, ips, max, cache, end);
}

uint32_t nts_unwind_copy(const nts_modsnap *snap, const nts_regs *regs, const uint8_t *img,
			 size_t len, uint64_t *ips, uint32_t max, nts_cfi_cache *cache, int *end)
{
	len &= ~(size_t)7;
	if (!img || len < 8 || regs->sp < 8 || regs->sp > UINT64_MAX - len) {
		*end = NTS_END_STOP; /* no stack to read: the interrupted pc alone */
		if (max == 0)
			return 0;
		ips[0] = regs->pc;
		return 1;
	}
	uw_stack st = {regs->sp, regs->sp + len, 0, 0, img, regs->sp};
	return walk(snap, regs, st, ips, max, cache, end);
}

static uint32_t walk(const nts_modsnap *snap, const nts_regs *regs, uw_stack st,
		     uint64_t *ips, uint32_t max, nts_cfi_cache *cache, int *end)
{
	*end = NTS_END_MAX;
	if (max == 0)
		return 0;
	uint64_t pc = regs->pc, sp = regs->sp, fp = regs->fp;
	int fp_ok = 1;
	uint32_t n = 0;
	ips[n++] = pc;
	/* exact: pc is an interrupted instruction (the first frame, or below a signal frame),
	 * not a return address */
	for (int exact = 1, sigframes = 0; n < max;) {
		uint64_t cfa = 0, ra = 0, nfp = fp;
		int nfp_ok = fp_ok, next_exact = 0, done = 0;
		if (snap && sigframes < 8 && is_sigreturn(snap, pc)) {
			uint64_t nsp;
			if (uw_read(&st, sp + UC_RIP, &ra) || uw_read(&st, sp + UC_RSP, &nsp) ||
			    uw_read(&st, sp + UC_RBP, &nfp)) {
				*end = NTS_END_STOP;
				break;
			}
			if (ra < UW_MIN_ADDR || ra == ~(uint64_t)0 || (nsp & 7)) {
				*end = NTS_END_STOP;
				break;
			}
			/* The interrupted code ran on the same stack, above the signal frame.
			 * Another stack (a handler on a sigaltstack interrupted code on the
			 * thread's stack) is followed only when the window is unknown (each page
			 * probed): a known window is a promise to read nothing else. */
			if (st.hi && (nsp < sp || nsp >= st.hi)) {
				*end = NTS_END_STOP;
				break;
			}
			sigframes++;
			ips[n++] = ra;
			pc = ra;
			fp = nfp;
			fp_ok = 1;
			sp = nsp;
			st.lo = sp;
			exact = 1;
			continue;
		}
		nts_cfi_rule r;
		r.kind = NTS_RULE_NONE;
		if (snap)
			rule_for(snap, cache, exact ? pc : pc - 1, &r);
		if (r.kind == NTS_RULE_END) {
			*end = NTS_END_OUTER;
			break;
		}
		if ((r.kind == NTS_RULE_RSP || (r.kind == NTS_RULE_RBP && fp_ok))) {
			cfa = (r.kind == NTS_RULE_RSP ? sp : fp) + (uint64_t)(int64_t)r.cfa_off;
			if (cfa > sp && cfa - sp <= UW_MAX_FRAME &&
			    uw_read(&st, cfa + (uint64_t)(int64_t)r.ra_off, &ra) == 0) {
				done = 1;
				if (r.fp_off != NTS_FP_SAME) {
					uint64_t slot = cfa + (uint64_t)(int64_t)r.fp_off;
					if (slot < sp)
						nfp = fp; /* popped already: still in the register */
					else if (uw_read(&st, slot, &nfp))
						nfp_ok = 0;
					else
						nfp_ok = 1;
				}
			}
		}
		if (!done && exact && snap) {
			uint64_t top = 0, fra = 0;
			if (uw_read(&st, sp, &top) == 0 && looks_like_return(snap, top) &&
			    (!fp_ok || fp < sp || uw_read(&st, fp + 8, &fra) || fra != top)) {
				/* no usable CFI for the interrupted code, a return address at [rsp]
				 * that the frame chain does not give: a frameless function */
				cfa = sp + 8;
				ra = top;
				done = 1;
			}
		}
		if (!done && fp_ok && fp_step(&st, sp, fp, &cfa, &ra, &nfp) == 0) {
			done = 1;
			nfp_ok = 1;
		}
		if (!done || ra < UW_MIN_ADDR || ra == ~(uint64_t)0) {
			*end = NTS_END_STOP;
			break;
		}
		ips[n++] = ra;
		pc = ra;
		sp = cfa;
		fp = nfp;
		fp_ok = nfp_ok;
		st.lo = sp;
		exact = next_exact;
	}
	return n;
}
