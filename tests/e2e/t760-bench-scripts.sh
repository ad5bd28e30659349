#!/bin/sh
# SPDX-License-Identifier: MIT
# t760-bench-scripts.sh - every bench/*.sh runs to its report on a tiny input, from a copy
# of the sources as a fresh clone has them (no configure, no config.h), so that no
# benchmark rots: a new generated header, a new library to link or a renamed option
# breaks this test instead of the next person who measures. Quick settings (-O0 builds,
# one run, inputs of a megabyte or less); the numbers are not looked at, only that each
# script builds its programs, gets through its measurements and prints its report. The
# .NET peers of bench/run.sh are left out (-p "" -c ""): they take minutes; so is
# dotnetdiag in bench-dotnetdiag.sh (DOTNETDIAG unset: it is built outside the tree).
. "$top_srcdir/tests/e2e/lib.sh"

command -v cc >/dev/null 2>&1 || { skip "bench scripts" "no C compiler (cc)"; done_testing; }

# the tree as a clone has it: only the sources the scripts read
SRC=$T/tree
mkdir -p "$SRC/data" || { echo "Bail out! mkdir failed"; exit 1; }
for d in bench libtrace tools sampler data/rules; do
	cp -R "$top_srcdir/$d" "$SRC/$d" || { echo "Bail out! cannot copy $d"; exit 1; }
done
cp "$top_srcdir/Makefile.am" "$SRC/" || { echo "Bail out! cannot copy Makefile.am"; exit 1; }
chmod -R u+w "$SRC"
rm -rf "$SRC/bench/out"
export BENCH_CFLAGS="-O0 -g" BENCH_NO_INSTALL=1 CC=cc
unset N SIZES SIZE PEER_SIZE CONVERT_SIZE FORMAT THREADS MITER ADDRS EU_N DWARF_LIBS BENCH_LIBS \
	DOTNETDIAG DOTNETDIAG_SRC

# bench NAME WANT ARGS...: runs bench/NAME ARGS in the copy; its exit code must be 0 and
# its standard output must contain WANT (a line of its report).
bench() {
	name=$1 want=$2
	shift 2
	run sh "$SRC/bench/$name" "$@"
	is_rc 0 "$name $* exits 0"
	if grep -q -- "$want" "$T/out"; then
		pass "$name prints its report ($want)"
	else
		fail "$name prints its report ($want)"
		diag "$(tail -n 20 "$T/out")" "stderr:" "$(tail -n 20 "$T/err")"
	fi
}

bench run.sh "nettrace-fold --jobs 1" -n 1 -s 1M -p "" -c ""
bench bench-gzip.sh "gz" -n 1 -s 1M
bench bench-dotnetdiag.sh "nettrace-fold --compat=pyroscope" -n 1 -s 1M
bench bench-sql.sh "samples/s" -n 1 -s 1M
bench bench-flame.sh "nettrace-flame" -n 1 -s 200
# long enough (~0.2 s a run) for a 1 kHz sampler to take samples on a loaded machine
bench bench-sampler.sh "nts-1000 per sample" -n 1 -t 1 -m 40
# a small ELF of our own instead of the generated 10 MB program
printf 'int f(int x) { return x * 3 + 1; }\nint main(int c, char **v) { (void)v; return f(c); }\n' \
	>"$T/small.c"
if cc -g -O2 -o "$T/small" "$T/small.c"; then
	bench bench-symbolize.sh "libnettrace" -n 1 -m 0 -a 20 -e "$T/small"
else
	skip "bench-symbolize.sh" "cannot compile a small program"
fi
done_testing
