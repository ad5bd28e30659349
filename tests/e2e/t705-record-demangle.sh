#!/bin/sh
# SPDX-License-Identifier: MIT
# t705-record-demangle.sh - native C++ and Rust names demangled (libtrace/demangle.c,
# libiberty's demangler): a C++ program with overloads, a template, an operator and two
# lambdas is recorded; every function of nettrace-fold's output equals what c++filt makes
# of the mangled name that --no-demangle prints, and LLVM's independent demangler
# (llvm-cxxfilt, when installed) agrees on the names without lambdas (the two spell those
# differently); the overloads and both lambdas' operator() stay apart. A Rust program
# (when rustc is installed), built with the legacy and the v0 mangling, reads as its
# source names them ("rdm::busy_a", no hash).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
FOLD=$top_builddir/tools/nettrace-fold
CXX=${CXX:-c++}
if ! command -v "$CXX" >/dev/null 2>&1 || ! command -v c++filt >/dev/null 2>&1; then
	skip "C++ demangling" "no C++ compiler or c++filt"
	done_testing
fi
cat >"$T/m.cpp" <<'CPP'
#include <cstdio>
#include <cstdlib>
#include <ctime>
namespace geo {
struct Matrix {
	double v[16];
	__attribute__((noinline)) double operator<<(int n) const
	{ double s = 0; for (int i = 0; i < n * 1000; i++) s += v[i & 15] * i; return s; }
	__attribute__((noinline)) double scale(double k) const
	{ double s = 0; for (int i = 0; i < 2000; i++) s += v[i & 15] * k; return s; }
	__attribute__((noinline)) double scale(int k) const
	{ double s = 0; for (int i = 0; i < 2000; i++) s += v[i & 15] * k; return s; }
};
}
template <typename T> __attribute__((noinline)) T work(T x)
{ T s = 0; for (int i = 0; i < 3000; i++) s += x * i; return s; }
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1, t0 = now(), acc = 0;
	geo::Matrix m;
	for (int i = 0; i < 16; i++)
		m.v[i] = i;
	auto a = [&](int k) __attribute__((noinline)) { return (m << k) + work<int>(k); };
	auto b = [&](double k) __attribute__((noinline)) { return m.scale(k) + m.scale((int)k) + work<double>(k); };
	while (now() - t0 < secs) { acc += a(3); acc += b(2.0); }
	printf("%d\n", acc > 0);
	return 0;
}
CPP
if ! "$CXX" -O1 -g -o "$T/m" "$T/m.cpp" 2>"$T/cxx.err"; then
	skip "C++ demangling" "cannot build: $(head -1 "$T/cxx.err")"
	done_testing
fi
record_q -F 1000 -o "$T/m.nettrace" -- "$T/m" 1
is_rc 0 "nettrace-record runs the C++ program"
"$FOLD" --unit samples "$T/m.nettrace" >"$T/dm"
"$FOLD" --unit samples --no-demangle "$T/m.nettrace" >"$T/raw"
# the program's own functions: "m!NAME" frames
frames() { tr ';' '\n' <"$1" | sed 's/ [0-9]*$//' | sed -n 's/^m!//p' | sort -u; }
frames "$T/dm" >"$T/f-dm"
frames "$T/raw" >"$T/f-raw"
grep -q '^_Z' "$T/f-raw" && pass "--no-demangle keeps the mangled names" || fail "--no-demangle keeps the mangled names"
grep -q '^_Z' "$T/f-dm" && fail "no mangled name is left" || pass "no mangled name is left"
c++filt <"$T/f-raw" | sort -u >"$T/want"
same "$T/f-dm" "$T/want" "every function reads as c++filt demangles it"
for n in 'geo::Matrix::operator<<(int) const' 'geo::Matrix::scale(int) const' \
	'geo::Matrix::scale(double) const' 'int work<int>(int)' 'double work<double>(double)'; do
	grep -qxF "$n" "$T/f-dm" && pass "a frame $n" || fail "a frame $n"
done
is "$(grep -c '^main::{lambda(.*)#[12]}::operator()(.*) const$' "$T/f-dm")" 2 "the two lambdas' operator() are two functions"
if command -v llvm-cxxfilt >/dev/null 2>&1; then
	grep -v '^_ZZ' "$T/f-raw" | llvm-cxxfilt | sort -u >"$T/llvm"
	grep -v lambda "$T/f-dm" >"$T/f-nolambda"
	same "$T/f-nolambda" "$T/llvm" "LLVM's demangler agrees (names without lambdas)"
else
	skip "LLVM's demangler agrees" "llvm-cxxfilt not installed"
fi
# a sample's stack keeps its shape: same lines, same counts, only the names differ
is "$(awk '{ s += $NF } END { print s }' "$T/dm")" "$(awk '{ s += $NF } END { print s }' "$T/raw")" \
	"demangling keeps every sample"

if ! command -v rustc >/dev/null 2>&1; then
	skip "Rust demangling" "rustc not installed"
	done_testing
fi
cat >"$T/rdm.rs" <<'RS'
use std::time::Instant;
#[inline(never)]
fn busy_a(n: u64) -> u64 { let mut s = 0u64; for i in 0..n { s = std::hint::black_box(s.wrapping_add(i * i)); } s }
#[inline(never)]
fn busy_b(n: u64) -> u64 { let mut s = 1u64; for i in 0..n { s = std::hint::black_box(s.wrapping_mul(i | 1)); } s }
fn main() {
	let t0 = Instant::now();
	let mut acc = 0u64;
	while t0.elapsed().as_millis() < 700 {
		acc = acc.wrapping_add(busy_a(std::hint::black_box(2000000)));
		acc = acc.wrapping_add(busy_b(std::hint::black_box(2000000)));
	}
	println!("{}", acc & 1);
}
RS
for mangling in legacy v0; do
	# legacy is rustc's default mangling
	flag=
	[ "$mangling" = v0 ] && flag="-C symbol-mangling-version=v0"
	if ! rustc -O -g $flag -o "$T/rdm-$mangling" "$T/rdm.rs" 2>"$T/rs.err"; then
		skip "Rust $mangling demangling" "rustc cannot build it: $(head -1 "$T/rs.err")"
		continue
	fi
	record_q -F 1000 -o "$T/r.nettrace" -- "$T/rdm-$mangling"
	"$FOLD" --unit samples "$T/r.nettrace" | tr ';' '\n' | sed 's/ [0-9]*$//' | sort -u >"$T/rf"
	"$FOLD" --unit samples --no-demangle "$T/r.nettrace" | tr ';' '\n' | sed 's/ [0-9]*$//' | sort -u >"$T/rraw"
	prefix=_ZN
	[ "$mangling" = v0 ] && prefix=_R
	grep -q "^rdm-$mangling!$prefix" "$T/rraw" && pass "Rust $mangling: --no-demangle shows $prefix names" ||
		fail "Rust $mangling: --no-demangle shows $prefix names"
	grep -qx "rdm-$mangling!rdm::busy_a" "$T/rf" && grep -qx "rdm-$mangling!rdm::busy_b" "$T/rf" &&
		pass "Rust $mangling: rdm::busy_a and rdm::busy_b, as the source names them" ||
		{ fail "Rust $mangling: rdm::busy_a and rdm::busy_b"; diag "$(grep rdm "$T/rf" | head -5)"; }
done
done_testing
