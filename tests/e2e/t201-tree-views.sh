#!/bin/sh
# SPDX-License-Identifier: MIT
# t201-tree-views.sh - one golden output per option that shapes or prunes the tree
# (expected/t201-tree-views/CASE.out): the default view, --invert, --per-thread,
# --depth, --hot, --min-percent, --top, --no-module, --unit, --managed-only and
# --compat traceevent, on the real traces. Most cases use --unit samples or
# --compat pyroscope, whose figures do not depend on the inferred sampling interval.
# Plus properties that hold whatever the goldens say: --depth N never prints a row
# deeper than N, --hot prints one row per level, --min-percent P no row below P%.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
cd "$TRACES" || exit 1

D=t201-tree-views
tree_case $D default "$PYRO"
tree_case $D default-mixed "$MIXED"
tree_case $D invert --invert --unit samples "$SENTRY"
tree_case $D per-thread --per-thread --unit samples --depth 4 "$SENTRY"
tree_case $D per-thread-invert --per-thread --invert --unit samples --depth 3 "$SENTRY"
tree_case $D depth --depth 2 --unit samples "$MIXED"
tree_case $D hot --hot --unit samples "$SENTRY"
tree_case $D hot-per-thread --hot --per-thread --unit samples --min-percent 0 "$SENTRY"
tree_case $D min-percent-0 --min-percent 0 --unit samples "$MIXED"
tree_case $D min-percent-5 --min-percent 5 --unit samples "$SENTRY"
tree_case $D top --top 5 --unit samples "$SENTRY"
tree_case $D top-pyroscope --top 3 --compat pyroscope --no-module "$PYRO"
tree_case $D no-module --no-module --unit samples "$MIXED"
tree_case $D unit-ms --unit ms --compat pyroscope "$PYRO"
tree_case $D unit-us --unit us --compat pyroscope "$PYRO"
tree_case $D managed-only --managed-only --unit samples "$MIXED"
tree_case $D compat-traceevent --compat traceevent --unit samples --depth 3 "$SENTRY"

# Properties of the printed rows.
run "$TREE" --depth 3 --unit samples --min-percent 0 "$SENTRY"
deepest=$(tree_paths "$T/out" samples | awk -F '\t' '{ n = split($1, f, ";"); if (n > m) m = n } END { print m + 0 }')
is "$deepest" 3 "--depth 3: the deepest row is at level 3"

run "$TREE" --hot --unit samples --min-percent 0 "$SENTRY"
levels=$(tree_paths "$T/out" samples | awk -F '\t' '{ n = split($1, f, ";"); if (seen[n]++) dup = 1 } END { print dup ? "duplicate" : "one per level" }')
is "$levels" "one per level" "--hot: one row per level"
run "$TREE" --unit samples --min-percent 0 "$SENTRY"
first=$(tree_paths "$T/out" samples | head -n 1)
run "$TREE" --hot --unit samples --min-percent 0 "$SENTRY"
hot_first=$(tree_paths "$T/out" samples | head -n 1)
is "$hot_first" "$first" "--hot starts with the full tree's first (hottest) row"

run "$TREE" --min-percent 5 --unit samples "$SENTRY"
low=$(awk '/  frame$/ { t = 1; next } t && $1 + 0 < 5 { print }' "$T/out")
is "$low" "" "--min-percent 5: no row below 5%"
run "$TREE" --min-percent 0 --unit samples "$SENTRY"
all=$(tree_paths "$T/out" samples | wc -l)
run "$TREE" --unit samples "$SENTRY"
default=$(tree_paths "$T/out" samples | wc -l)
if [ "$all" -gt "$default" ]; then
	pass "--min-percent 0 shows more rows ($all) than the default 0.5 ($default)"
else
	fail "--min-percent 0 shows more rows ($all) than the default 0.5 ($default)"
fi
done_testing
