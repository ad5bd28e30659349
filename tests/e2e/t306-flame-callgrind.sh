#!/bin/sh
# SPDX-License-Identifier: MIT
# t306-flame-callgrind.sh - nettrace-flame --format callgrind: a crafted folded input gives
# exactly the expected profile (self costs, caller/callee pairs counted once per stack
# under recursion, "Module!name" split into object and function, name compression); on a
# real trace the summary equals the sum of the self costs and nettrace-fold's total, and
# callgrind_annotate (valgrind, when installed) reads it with the same total.
. "$top_srcdir/tests/e2e/lib.sh"
FLAME=$top_builddir/tools/nettrace-flame
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FLAME"
need_tool "$FOLD"
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace

printf 'a;b;a;b 2\na;c 3\na 1\nlib!x;lib!y 4\na;lib!y 5\n' >"$T/in.folded"
run "$FLAME" --format callgrind "$T/in.folded"
is_rc 0 "folded input: exit 0"
sed 1,3d "$T/out" >"$T/got"
cat >"$T/want" <<'X'
cmd: IN
positions: line
events: Samples
summary: 15

ob=(1) ???
fl=(1) ???
fn=(1) a
0 1
cfn=(2) b
calls=1 0
0 2
cfn=(3) c
calls=1 0
0 3
cob=(2) lib
cfn=(5) y
calls=1 0
0 5

fl=(1)
fn=(2)
0 2
cfn=(1)
calls=1 0
0 2

fl=(1)
fn=(3)
0 3

ob=(2)
fl=(1)
fn=(4) x
cfn=(5)
calls=1 0
0 4

fl=(1)
fn=(5)
0 9

X
sed -i "s|^cmd: $T/in.folded|cmd: IN|" "$T/got"
same "$T/got" "$T/want" "folded input: the expected callgrind profile"
is "$(head -n 1 "$T/out")" "# callgrind format" "the format's first line"

# a real trace, in ns: summary = sum of self costs = nettrace-fold's total (each stack's
# weight is rounded to whole ns once: within 1 ns per line of nettrace-fold's output)
"$FLAME" --format callgrind -o "$T/m.cg" "$MIXED"
"$FOLD" --unit ns "$MIXED" >"$T/m.fold"
summary=$(sed -n 's/^summary: //p' "$T/m.cg")
# (a cost line is a call's when it follows calls=, else a self cost)
selfsum=$(awk '/^calls=/ { call = 1; next }
	/^[0-9]+ [0-9]+$/ { if (call) call = 0; else s += $2 } END { printf "%.0f", s }' "$T/m.cg")
foldsum=$(awk '{ s += $NF } END { printf "%.0f", s }' "$T/m.fold")
is "$selfsum" "$summary" "real trace: the self costs add up to the summary"
lines=$(wc -l <"$T/m.fold" | tr -d ' ')
if awk -v a="$summary" -v b="$foldsum" -v t="$lines" 'BEGIN { d = a - b; exit !(d <= t && -d <= t) }'
then
	pass "real trace: the summary is nettrace-fold's total, $foldsum ns (within 1 ns per stack)"
else
	fail "real trace: the summary $summary is nettrace-fold's total $foldsum ns"
fi
is "$(sed -n 's/^events: //p' "$T/m.cg")" "Nanoseconds" "real trace: events in ns"
if command -v callgrind_annotate >/dev/null 2>&1; then
	tot=$(callgrind_annotate "$T/m.cg" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
	is "$tot" "$summary" "callgrind_annotate reads it: PROGRAM TOTALS = the summary"
else
	skip "callgrind_annotate reads it" "valgrind is not installed"
fi
run "$FLAME" --format callgrind --diff "$MIXED" "$MIXED"
is_rc 1 "--diff with --format callgrind: usage error"
done_testing
