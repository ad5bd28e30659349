#!/bin/sh
# SPDX-License-Identifier: MIT
# t202-tree-categories.sh - categories in nettrace-tree: --by-category columns (tree and
# --top), --category filters, --rules with a valid file (golden outputs), and the errors:
# a malformed rules file exits 2 with the file, offset and line number on stderr, a
# missing one exits 3, an unknown category name exits 1. The objver4 trace has
# contention (lock) and GC samples besides external ones.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
cd "$TRACES" || exit 1

OBJV4=perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
D=t202-tree-categories
tree_case $D by-category --by-category --unit samples --depth 3 "$OBJV4"
tree_case $D by-category-time --by-category --compat pyroscope --depth 3 "$MIXED"
tree_case $D by-category-top --by-category --top 4 --unit samples --no-module "$OBJV4"
tree_case $D category-lock --category lock --unit samples --min-percent 0 "$OBJV4"
tree_case $D category-lock-gc --category lock,gc --unit samples --depth 4 "$OBJV4"

# The category columns of a row add up to its total% (to rounding).
run "$TREE" --by-category --unit samples --min-percent 0 "$OBJV4"
bad=$(awk '/  frame$/ { t = 1; next }
	t { s = 0; for (i = 4; i <= 7; i++) s += $i; d = s - $1; if (d > 0.25 || d < -0.25) print }' "$T/out")
is "$bad" "" "--by-category: the columns of each row add up to its total%"

# --category keeps exactly the samples the --by-category header gives that category.
run "$TREE" --by-category --unit samples "$OBJV4"
want=$(sed -n 's/^Categories:.* lock [0-9.]*% (\([0-9]*\)).*/\1/p' "$T/out")
run "$TREE" --category lock --unit samples "$OBJV4"
got=$(sed -n 's/^Samples: *//p' "$T/out")
is "$got" "$want" "--category lock keeps the $want lock samples of the breakdown"

# A category that no sample has: an empty tree, and a message.
run "$TREE" --category io --unit samples "$OBJV4"
is_rc 0 "--category io (no such samples) exits 0"
is "$(cat "$T/err")" "nettrace-tree: no samples selected (categories io)" \
	"--category io: says that nothing was selected, and by what"
is "$(tree_paths "$T/out" samples | wc -l)" 0 "--category io: no rows"

# Rules: everything under Main is "io", the rest falls back to the defaults.
printf '# test rules\nio *Program.Main(*\n' >"$T/main-io.rules"
run "$TREE" --rules "$T/main-io.rules" --by-category --unit samples --depth 2 "$MIXED"
sed "s|$T/||" "$T/out" >"$T/out2"
is_rc 0 "--rules with a valid file exits 0"
golden_if_ok 0 "$T/out2" "$EXPECTED/$D/rules.out" "--rules: categories from the file (golden)"

printf '# test rules\ncpu *Foo*\n\nlok *Bar*\n' >"$T/bad.rules"
run "$TREE" --rules "$T/bad.rules" "$MIXED"
is_rc 2 "--rules with an unknown category exits 2"
# (the parser may add a hint after the message: compare up to the category name)
case $(sed "s|$T/||" "$T/err") in
"nettrace-tree: bad.rules: at byte 24 (0x18): line 4: unknown category 'lok'"*)
	pass "--rules: the error names the file, the offset and the line" ;;
*)
	fail "--rules: the error names the file, the offset and the line"
	diag "$(cat "$T/err")" ;;
esac
is "$(wc -l <"$T/err")" 1 "--rules: one line on stderr"
is_empty "$T/out" "--rules error: nothing on stdout"

run "$TREE" --rules "$T/missing.rules" "$MIXED"
is_rc 3 "--rules with a missing file exits 3"
is_empty "$T/out" "--rules missing: nothing on stdout"

run "$TREE" --category lock,bogus "$MIXED"
is_rc 1 "--category with an unknown name exits 1"
is "$(head -n 1 "$T/err")" \
	"nettrace-tree: unknown category 'bogus' (use cpu, ready, running, lock, io, sleep, wait, gc, external or unknown)" \
	"--category bogus: names the bad category"
done_testing
