#!/bin/sh
# SPDX-License-Identifier: MIT
# t207-tree-subsystems.sh - nettrace-tree --by-subsystem: the built-in subsystem rules on
# the real traces (golden tables; self adds up to 100% and to the samples of the tree;
# total >= self; by category, each row's columns add up to its self%; with --when),
# the trace with known phases (exact figures), a --subsystems file of one's own, and the
# errors: a malformed file exits 2 with the file, offset and line, a missing one 3,
# --subsystems without --by-subsystem and --by-subsystem with an option that shapes the
# tree exit 1.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
MKPHASES=$top_builddir/tests/mkphases
need_tool "$MKPHASES"
"$MKPHASES" "$T/phases.nettrace" || { echo "Bail out! mkphases failed"; exit 1; }
cd "$TRACES" || exit 1

D=t207-tree-subsystems
OBJV4=perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace

# rows FILE: the table rows (after the title line ending in "subsystem").
rows() {
	awk '/  subsystem$/ { t = 1; next } t' "$1"
}

tree_case $D sentry --by-subsystem --unit samples "$SENTRY"
tree_case $D sentry-by-category --by-subsystem --by-category "$SENTRY"
tree_case $D mixed --by-subsystem --unit samples "$MIXED"
tree_case $D objver4 --by-subsystem --by-category --unit samples "$OBJV4"
tree_case $D sentry-when --by-subsystem --when --unit samples "$SENTRY"

# Properties on every real trace with samples.
for f in "$PYRO" "$MIXED" "$SENTRY" "$OBJV4" "$ONLY_MANAGED"; do
	run "$TREE" --by-subsystem --unit samples "$f"
	is_rc 0 "$f: --by-subsystem exits 0"
	is_empty "$T/err" "$f: nothing on stderr"
	total=$(sed -n 's/^Samples: *//p' "$T/out")
	rows "$T/out" >"$T/rows"
	is "$(awk '{ s += $3 } END { print s + 0 }' "$T/rows")" "$total" \
		"$f: self samples add up to the tree's $total"
	is "$(awk '$4 < $3 { print }' "$T/rows")" "" "$f: total >= self on every row"
	is "$(awk '$1 + 0 > 0 && $3 == 0 { print }' "$T/rows")" "" "$f: self% only with self samples"
done
run "$TREE" --by-subsystem --by-category --unit samples "$OBJV4"
bad=$(rows "$T/out" | awk '{ s = 0; for (i = 5; i < NF; i++) s += $i; d = s - $1
	if (d > 0.25 || d < -0.25) print }')
is "$bad" "" "--by-category: each row's category columns add up to its self%"

# Real traces say what their code does: console input in the mixed trace, the idle
# thread pool (threading) and pipes (ipc) in the sentry trace; the pyroscope sample app
# is only application code.
run "$TREE" --by-subsystem --unit samples "$MIXED"
is "$(rows "$T/out" | awk '$NF == "console" { print $3 "/" $4 }')" 2424/2425 \
	"mixed: the 2425 samples in Console.ReadLine have console on the stack, one decided by a Dictionary lookup"
run "$TREE" --by-subsystem --unit samples "$SENTRY"
is "$(rows "$T/out" | awk '{ print $NF }' | head -n 2 | tr '\n' ' ')" "threading ipc " \
	"sentry: threading (idle workers) then ipc (pipes) lead"
run "$TREE" --by-subsystem --unit samples "$PYRO"
is "$(rows "$T/out" | awk '{ print $NF }')" "other" "pyroscope sample app: only 'other'"

# The trace with known phases: 900 storage, 900 json, 500 threading (Monitor.Enter).
cd "$T" || exit 1
run "$TREE" --by-subsystem --unit samples phases.nettrace
rows "$T/out" >"$T/rows"
is "$(awk '{ print $NF "=" $3 }' "$T/rows" | tr '\n' ' ')" \
	"json=900 storage=900 threading=500 " "phases: json 900, storage 900, threading 500"
golden_if_ok 0 "$T/out" "$EXPECTED/$D/phases.out" "phases: the table (golden)"

# Rules of one's own: Compute's frames are "compute", an "other" rule stops the search
# at Load, and everything else is unmatched.
printf '# test\ncompute *!App.Compute(*\nother *!App.Load(*\nthreading *!System.Threading.*\n' \
	>"$T/my.subsystems"
run "$TREE" --by-subsystem --unit samples --subsystems "$T/my.subsystems" phases.nettrace
is_rc 0 "--subsystems FILE exits 0"
rows "$T/out" >"$T/rows"
is "$(awk '{ print $NF "=" $3 "/" $4 }' "$T/rows" | tr '\n' ' ')" \
	"compute=900/900 other=900/900 threading=500/500 " \
	"--subsystems: the file's rules decide (an 'other' rule stops the search)"
grep -q "^Selected:  subsystems $T/my.subsystems\$" "$T/out" &&
	pass "--subsystems: the header names the file" || fail "--subsystems: the header names the file"

# Errors.
printf 'json *!A.*\n\nbad!name *!B.*\n' >"$T/bad.subsystems"
run "$TREE" --by-subsystem --subsystems "$T/bad.subsystems" phases.nettrace
is_rc 2 "a malformed subsystem file exits 2"
case $(sed "s|$T/||" "$T/err") in
"nettrace-tree: bad.subsystems: at byte 12 (0xc): line 3: bad subsystem name 'bad!name'"*)
	pass "the error names the file, the offset and the line" ;;
*) fail "the error names the file, the offset and the line"; diag "$(cat "$T/err")" ;;
esac
is_empty "$T/out" "malformed file: nothing on stdout"
run "$TREE" --by-subsystem --subsystems "$T/missing.subsystems" phases.nettrace
is_rc 3 "a missing subsystem file exits 3"
run "$TREE" --subsystems "$T/my.subsystems" phases.nettrace
is_rc 1 "--subsystems without --by-subsystem exits 1"
is "$(head -n 1 "$T/err")" "nettrace-tree: --subsystems needs --by-subsystem" "... says so"
for o in "--top 3" --hot "--depth 2" --invert --per-thread "--min-percent 1"; do
	# shellcheck disable=SC2086
	run "$TREE" --by-subsystem $o phases.nettrace
	is_rc 1 "--by-subsystem $o exits 1"
	is "$(head -n 1 "$T/err")" \
		"nettrace-tree: --by-subsystem and ${o% *} cannot be combined" "... says so"
done
done_testing
