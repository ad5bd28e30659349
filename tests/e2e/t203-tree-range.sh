#!/bin/sh
# SPDX-License-Identifier: MIT
# t203-tree-range.sh - selections in nettrace-tree: --range in seconds, milliseconds and
# raw timestamps (ts:N..ts:M), ranges that partition the trace, an empty range (exit 0,
# a message with the session's span on stderr, the header of an empty tree on stdout),
# and --thread (golden output, and a thread that was never sampled).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
cd "$TRACES" || exit 1

D=t203-tree-range
samples_of() { sed -n 's/^Samples: *//p' "$T/out"; }

tree_case $D range-1s-2s --range 1s..2s --unit samples "$PYRO"
tree_case $D range-ms --range 200ms..700ms --unit samples --min-percent 0 "$PYRO"

run "$TREE" --unit samples "$PYRO"
all=$(samples_of)
is "$all" 5564 "no range: all 5564 samples"
run "$TREE" --unit samples --range ..3s "$PYRO"
a=$(samples_of)
run "$TREE" --unit samples --range 3s.. "$PYRO"
b=$(samples_of)
is "$((a + b))" "$all" "..3s ($a) and 3s.. ($b) partition the samples"
run "$TREE" --unit samples --range 0s..3000ms "$PYRO"
is "$(samples_of)" "$a" "0s..3000ms selects what ..3s selects"

# Empty range: exit 0, a message with the span, an empty tree.
run "$TREE" --unit samples --range 100s..200s "$PYRO"
is_rc 0 "empty range exits 0"
is "$(cat "$T/err")" \
	"nettrace-tree: no samples in range 100s..200s (session spans 0.001 s .. 8.174 s)" \
	"empty range: the message gives the session's span"
golden_if_ok 0 "$T/out" "$EXPECTED/$D/empty-range.out" "empty range: header and column titles only"

run "$TREE" --unit samples --range 100s.. "$PYRO" "$MIXED"
is "$(cat "$T/err")" \
	"nettrace-tree: no samples in range 100s.. (sessions span 0.001 s .. 8.174 s, 0.000 s .. 8.672 s)" \
	"empty range over two sessions: both spans"

# Raw timestamps: the message of an empty raw range gives the span in ticks; that span
# (end exclusive) selects all samples but the last, one more tick selects them all.
run "$TREE" --unit samples --range ts:1..ts:2 "$PYRO"
is_rc 0 "empty raw range exits 0"
span=$(sed -n 's/^.*(session spans ts:\([0-9]*\) \.\. ts:\([0-9]*\))$/\1 \2/p' "$T/err")
first=${span% *}
last=${span#* }
if [ -n "$span" ] && [ "$first" -lt "$last" ]; then
	pass "empty raw range: the message gives the span in ticks ($first .. $last)"
	run "$TREE" --unit samples --range "ts:$first..ts:$last" "$PYRO"
	is "$(samples_of)" $((all - 1)) "ts:first..ts:last: all but the last sample (end excluded)"
	run "$TREE" --unit samples --range "ts:$first..ts:$((last + 1))" "$PYRO"
	is "$(samples_of)" "$all" "ts:first..ts:last+1: every sample"
	grep -q "^Selected:  range ts:$first\.\.ts:$((last + 1))\$" "$T/out" &&
		pass "the header shows the raw range" || fail "the header shows the raw range"
else
	fail "empty raw range: the message gives the span in ticks"
	diag "$(cat "$T/err")"
fi

# Threads.
tree_case $D threads --thread 2152,5372 --unit samples "$SENTRY"
run "$TREE" --thread 999 --unit samples "$SENTRY"
is_rc 0 "a thread that was never sampled exits 0"
is "$(cat "$T/err")" "nettrace-tree: no samples selected (threads 999)" \
	"--thread 999: says that nothing was selected, and by what"
run "$TREE" --thread 23364 --range 50ms..60ms --unit samples --min-percent 0 "$SENTRY"
is_rc 0 "--thread with --range exits 0"
golden_if_ok 0 "$T/out" "$EXPECTED/$D/thread-range.out" "--thread with --range (golden)"
done_testing
