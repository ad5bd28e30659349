#!/bin/sh
# SPDX-License-Identifier: MIT
# t200-tree-counts.sh - nettrace-tree against independent figures for the pyroscope
# single-thread trace (data/traces/EXPECTED.md section 3): the raw sample stacks
# Work<-Slow<-Main x4443, Work<-Fast<-Main x1105, Slow<-Main x8, Fast<-Main x8 (with
# --unit samples, top-down and bottom-up), and, with --compat pyroscope, node times equal
# to the prefix sums of pyroscope's own folded goldens (with and without --managed-only).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
cd "$TRACES" || exit 1

M='mvc-hello-world!Example.Program.Main(class System.String[])'
SLOW='mvc-hello-world!Example.Program.Slow()'
FAST='mvc-hello-world!Example.Program.Fast()'
WORK='mvc-hello-world!Example.Program.Work(int32)'

# Top-down, sample counts: every node of the tree.
run "$TREE" --unit samples --min-percent 0 "$PYRO"
is_rc 0 "--unit samples exits 0"
tree_paths "$T/out" samples | sort >"$T/got"
printf '%s\t%s\n' \
	"$M" 5564 \
	"$M;$FAST" 1113 \
	"$M;$FAST;$WORK" 1105 \
	"$M;$SLOW" 4451 \
	"$M;$SLOW;$WORK" 4443 | sort >"$T/want"
same "$T/got" "$T/want" "top-down sample counts: Work<-Slow 4443, Work<-Fast 1105, Slow 4451, Fast 1113"
golden_if_ok 0 "$T/out" "$EXPECTED/t200-tree-counts/samples.out" "top-down tree in samples (golden)"

# Bottom-up: the leaf functions carry the raw stack counts.
run "$TREE" --unit samples --min-percent 0 --invert "$PYRO"
is_rc 0 "--invert exits 0"
tree_paths "$T/out" samples | sort >"$T/got"
printf '%s\t%s\n' \
	"$WORK" 5548 \
	"$WORK;$SLOW" 4443 \
	"$WORK;$SLOW;$M" 4443 \
	"$WORK;$FAST" 1105 \
	"$WORK;$FAST;$M" 1105 \
	"$SLOW" 8 \
	"$SLOW;$M" 8 \
	"$FAST" 8 \
	"$FAST;$M" 8 | sort >"$T/want"
same "$T/got" "$T/want" "bottom-up sample counts: Work 5548 (4443 + 1105), Slow 8, Fast 8"
golden_if_ok 0 "$T/out" "$EXPECTED/t200-tree-counts/invert.out" "bottom-up tree in samples (golden)"

# pyroscope weights: each node's time is the sum of the folded lines below it.
for mode in full managed; do
	if [ $mode = full ]; then
		folded=$PYRO_FOLDED
		set -- --compat pyroscope
	else
		folded=$PYRO_FOLDED_MANAGED
		set -- --compat pyroscope --managed-only
	fi
	run "$TREE" "$@" --unit ns --min-percent 0 "$PYRO"
	is_rc 0 "$* --unit ns exits 0"
	tree_paths "$T/out" | sort >"$T/got"
	folded_paths "$folded" | sort >"$T/want"
	same "$T/got" "$T/want" "$*: node times (ns) = prefix sums of ${folded#*/}"
	golden_if_ok 0 "$T/out" "$EXPECTED/t200-tree-counts/pyroscope-$mode.out" "$*: tree in ns (golden)"
done
done_testing
