#!/bin/sh
# SPDX-License-Identifier: MIT
# t204-tree-inputs.sh - what nettrace-tree reads: standard input ("-"), several files as
# sessions of one tree, a truncated trace (a warning with the offset, exit 0), a trace
# without samples (a message, an empty tree, exit 0), and bad input: a file that is not
# a trace (exit 2), a missing file (exit 3), "-" given twice (exit 1).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
cd "$TRACES" || exit 1

D=t204-tree-inputs

# Standard input: the same tree, the session is named "-".
run "$TREE" --unit samples "$PYRO"
sed "s|^  \[1\] $PYRO:|  [1] -:|" "$T/out" >"$T/want"
"$TREE" --unit samples - <"$PYRO" >"$T/out" 2>"$T/err"
rc=$?
is_rc 0 "stdin: exits 0"
is_empty "$T/err" "stdin: nothing on stderr"
same "$T/out" "$T/want" "stdin: the same tree as from the file"

# Several files: one tree, one session each; equal frames merge.
tree_case $D two-sessions --unit samples "$PYRO" "$PYRO"
if grep -q '^Samples:   11128$' "$T/out"; then
	pass "two copies of a trace: twice the samples"
else
	fail "two copies of a trace: twice the samples"
fi
tree_case $D two-sessions-per-thread --unit samples --per-thread --depth 2 "$PYRO" "$MIXED"

# A truncated trace: its complete events make the tree, with a warning.
run "$TREE" --unit samples --depth 3 "$TRUNCATED"
is_rc 0 "truncated trace: exits 0"
is "$(cat "$T/err")" \
	"nettrace-tree: $TRUNCATED: at byte 4170673 (0x3fa3b1): warning: stream truncated inside EventBlock (needs 5494 bytes, 3445 present); events before it were read" \
	"truncated trace: a warning with the offset"
golden_if_ok 0 "$T/out" "$EXPECTED/$D/truncated.out" "truncated trace: the tree of the complete events"

# A trace without samples: a message, an empty tree, exit 0.
run "$TREE" "$CHECKPOINTS"
is_rc 0 "trace without samples: exits 0"
is "$(cat "$T/err")" "nettrace-tree: no samples selected: the input has no SampleProfiler samples" \
	"trace without samples: says so"
golden_if_ok 0 "$T/out" "$EXPECTED/$D/no-samples.out" "trace without samples: an empty tree"

# Bad input.
printf 'this is not a trace\n' >"$T/text.nettrace"
run "$TREE" "$T/text.nettrace"
is_rc 2 "not a trace: exits 2"
is_empty "$T/out" "not a trace: nothing on stdout"
if grep -q "^nettrace-tree: $T/text.nettrace: at byte 0 (0x0): " "$T/err"; then
	pass "not a trace: the error names the file and the offset"
else
	fail "not a trace: the error names the file and the offset"
	diag "$(cat "$T/err")"
fi
run "$TREE" "$T/missing.nettrace"
is_rc 3 "missing file: exits 3"
is_empty "$T/out" "missing file: nothing on stdout"
run "$TREE" - - </dev/null
is_rc 1 "stdin twice: exits 1"
done_testing
