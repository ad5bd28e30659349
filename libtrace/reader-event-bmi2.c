/* SPDX-License-Identifier: MIT */
/* reader-event-bmi2.c - reader-event.c compiled a second time with BMI2, for x86-64 CPUs
 * whose pext is fast: a varint's 7-bit groups are then packed by one instruction instead
 * of three shift-and-mask steps (~45 fewer instructions an event of a sample trace, 11 %
 * of nettrace-info --no-symbols). Its nt_reader_next() is ntr_next_bmi2(), which the
 * generic nt_reader_next() calls when the reader chose it at open (r->isa,
 * ntr_isa_pick() in reader.c). Nothing else: no code of its own, and empty on other
 * targets. */
#include "reader-int.h"

#ifdef NTR_HAVE_BMI2
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("bmi2"))), apply_to = function)
#else
#pragma GCC target("bmi2")
#endif
#define NTR_VARIANT 1
#define NTR_PEXT 1
#define nt_reader_next ntr_next_bmi2
#define ntr_decode_header ntr_decode_header_bmi2
int ntr_decode_header_bmi2(nt_reader *r, nt_cursor *c, int compressed, qev *prev, qev *e,
			   nt_error *err);
#include "reader-event.c"
#ifdef __clang__
#pragma clang attribute pop
#endif
#else
typedef int ntr_no_bmi2_copy; /* ISO C wants a declaration in every file */
#endif
