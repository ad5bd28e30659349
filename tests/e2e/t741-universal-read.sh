#!/bin/sh
# SPDX-License-Identifier: MIT
# t741-universal-read.sh - machine-wide V6 traces with the Universal providers (the
# format of dotnet-trace collect-linux / one-collect), written by tests/mkuniversal with a
# known truth: cpu samples weighted by Value x the declared period, frames named per
# process from ProcessSymbol ranges (the same addresses are different functions in the
# two processes; JIT'd .NET names become Module!Method), --pid / --process, the
# thread-time view from cswitch (blocked time within 5% of the truth: here exact),
# nettrace-info's process table, and a malformed payload rejected with its byte offset.
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
INFO=$top_builddir/tools/nettrace-info
MK=$top_builddir/tests/mkuniversal
need_tool "$FOLD"
need_tool "$INFO"
need_tool "$MK"
U=$T/u.nettrace
"$MK" "$U" || { echo "Bail out! mkuniversal failed"; exit 1; }

# the truth, as mkuniversal.c writes it (weights in ns: 1 ms per sample)
cat >"$T/cpu" <<'X'
alpha!main;App!App.Program::Compute(int32) 30000000
alpha!main;alpha!work;alpha!spin 40000000
beta!main;beta!idle 25000000
X
run "$FOLD" "$U"
is_rc 0 "nettrace-fold reads the Universal trace"
same "$T/out" "$T/cpu" "cpu samples: Value x 1 ms, frames per process, JIT'd method as Module!Method"

run "$FOLD" "$U" --unit samples
printf 'alpha!main;App!App.Program::Compute(int32) 30\nalpha!main;alpha!work;alpha!spin 40\nbeta!main;beta!idle 25\n' >"$T/want"
same "$T/out" "$T/want" "--unit samples: a cpu event of Value 3 counts 3 samples"

run "$FOLD" "$U" --pid 200
grep '^beta' "$T/cpu" >"$T/want"
same "$T/out" "$T/want" "--pid 200: only beta's samples"
run "$FOLD" "$U" --process alpha
grep '^alpha' "$T/cpu" >"$T/want"
same "$T/out" "$T/want" "--process alpha: only alpha's samples"
run "$FOLD" "$U" --pid 100,200
same "$T/out" "$T/cpu" "--pid 100,200: both"
run "$FOLD" "$U" --pid x
is_rc 1 "--pid x is a usage error"

# thread time: blocked 10 ms (beta, 5 x 2 ms at waitfor) and 1 ms (alpha, at work)
run "$FOLD" "$U" --thread-time
{
	cat "$T/cpu"
	echo 'alpha!main;alpha!work 1000000'
	echo 'beta!main;beta!waitfor 10000000'
} | LC_ALL=C sort >"$T/want"
same "$T/out" "$T/want" "--thread-time: cswitch off-CPU time at the blocked stack"
blocked=$(awk '/waitfor/ { s += $NF } END { print s + 0 }' "$T/out")
ok=$(awk -v b="$blocked" 'BEGIN { d = b - 10000000; if (d < 0) d = -d; print (d <= 500000) ? 1 : 0 }')
is "$ok" 1 "blocked time of beta within 5% of the truth (10 ms): $blocked ns"
if [ -x "$TREE" ]; then
	run "$TREE" "$U" --thread-time --process beta --by-category
	is_rc 0 "nettrace-tree --thread-time --by-category"
	grep -q 'wait 28.6% (10.000 ms)' "$T/out"
	is $? 0 "tree: beta's blocked time is the wait category (10 of 35 ms)"
fi

# the process table
run "$INFO" "$U"
is_rc 0 "nettrace-info reads it"
grep -A3 '^Processes' "$T/out" | tail -n 2 | awk '{ print $1, $3, $4, $5, $6 }' >"$T/got"
printf '100 70 1 1.000 alpha\n200 25 5 10.000 beta\n' >"$T/want"
same "$T/got" "$T/want" "process table: pid, cpu samples, cswitches, off-CPU ms, name"

# a malformed ProcessSymbol payload: an error with the byte offset, exit 2
"$MK" "$T/bad.nettrace" bad-symbol || { echo "Bail out! mkuniversal failed"; exit 1; }
run "$FOLD" "$T/bad.nettrace"
is_rc 2 "a malformed Universal payload is bad input"
grep -q 'at byte [0-9]* (0x[0-9a-f]*): malformed Universal.System ProcessSymbol event: no Name' "$T/err"
is $? 0 "the message names the event and its byte offset"
done_testing
