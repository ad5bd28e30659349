/* SPDX-License-Identifier: MIT */
/* noipa.h - NOIPA: a function the compiler keeps as written, for the sampler's test
 * programs, whose frames the tests look for. gcc: noipa (never inlined, cloned, merged
 * or analysed across calls); clang has no noipa, noinline is the nearest. */
#ifndef NTS_TEST_NOIPA_H
#define NTS_TEST_NOIPA_H
#if defined(__clang__)
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa))
#endif
#endif
