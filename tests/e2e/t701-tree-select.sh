#!/bin/sh
# SPDX-License-Identifier: MIT
# t701-tree-select.sh - the stack selection (--focus, --exclude, --group, --fold,
# --no-signature; libtrace/select.c) against awk over the unselected folded stacks, the
# same selection in nettrace-fold and nettrace-tree, --diff (a trace against itself shows
# no function), --json, --width (names cut in the middle) and -o.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
FOLD=$top_builddir/tools/nettrace-fold
cd "$TRACES" || exit 1

"$FOLD" --unit samples "$SENTRY" >"$T/all"
total=$(awk '{ s += $NF } END { print s }' "$T/all")

# sum_of FILE: the samples of folded lines
sum_of() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
# regroup: folded "stack count" lines merged by stack, sorted
regroup() { awk '{ c = $NF; sub(/ [^ ]*$/, ""); s[$0] += c } END { for (k in s) print k " " s[k] }' | sort; }

# --focus / --exclude: lines with a frame matching the regex (any case), and the rest.
awk '{ line = $0; sub(/ [^ ]*$/, "", line); n = split(line, f, ";"); hit = 0
	for (i = 1; i <= n; i++) if (tolower(f[i]) ~ /sentry\.profiling/) hit = 1
	if (hit) print }' "$T/all" >"$T/want-focus"
"$FOLD" --unit samples --focus 'SENTRY\.Profiling' "$SENTRY" >"$T/focus"
same "$T/focus" "$T/want-focus" "--focus RE keeps the stacks through a matching frame (any case)"
"$FOLD" --unit samples --exclude 'sentry\.profiling' "$SENTRY" >"$T/excl"
is "$(($(sum_of "$T/focus") + $(sum_of "$T/excl")))" "$total" "--focus and --exclude of one RE split the samples"
run "$TREE" --unit samples --focus 'SENTRY\.Profiling' --json "$SENTRY"
flatten "$T/out" "$T/flat"
is "$(awk -F '\t' '$1 == "samples" { print $2 }' "$T/flat")" "$(sum_of "$T/want-focus")" \
	"nettrace-tree --focus selects the same samples"
"$FOLD" --unit samples --focus Sentry --focus Finish "$SENTRY" >"$T/two"
awk '/Sentry/ && /Finish/' "$T/all" >"$T/want-two"
same "$T/two" "$T/want-two" "two --focus: stacks matching both"

# nettrace-sql imports the same selection
"$top_builddir/tools/nettrace-sql" --focus 'SENTRY\.Profiling' --exclude 'Finish' --raw \
	-e 'SELECT COUNT(*) FROM samples' "$SENTRY" >"$T/sqln"
is "$(cat "$T/sqln")" "$(grep -v Finish "$T/want-focus" | awk '{ s += $NF } END { print s + 0 }')" \
	"nettrace-sql --focus/--exclude imports the samples of the selected stacks"

# --no-signature: each frame's trailing argument list dropped, lines merged.
sed -e 's/([^;]*)\(;\| \)/\1/g' "$T/all" | regroup >"$T/want-nosig"
"$FOLD" --unit samples --no-signature "$SENTRY" | sort >"$T/nosig"
same "$T/nosig" "$T/want-nosig" "--no-signature drops argument lists and merges overloads"

# --group 'PAT->NAME': matching frames renamed, consecutive ones merged.
awk '{ c = $NF; line = $0; sub(/ [^ ]*$/, "", line); n = split(line, f, ";"); out = ""; prev = ""
	for (i = 1; i <= n; i++) {
		g = index(f[i], "System.Private.CoreLib!") == 1 ? "CoreLib" : ""
		if (g != "" && prev == g) continue
		prev = g
		out = out (out == "" ? "" : ";") (g != "" ? g : f[i])
	}
	print out " " c }' "$T/all" | regroup >"$T/want-group"
"$FOLD" --unit samples --group 'System.Private.CoreLib!*->CoreLib' "$SENTRY" | sort >"$T/group"
same "$T/group" "$T/want-group" "--group PAT->NAME renames and merges runs of the group"
# entry group: the name carries the entry frame
"$FOLD" --unit samples --group '^System.Private.CoreLib!=>CL' "$SENTRY" >"$T/entry"
grep -q '^CL <<System.Private.CoreLib!System.Threading.Thread.StartCallback()>>;' "$T/entry" &&
	pass "--group PAT=>NAME names the group by its entry frame" ||
	fail "--group PAT=>NAME names the group by its entry frame"
is "$(sum_of "$T/entry")" "$total" "grouping keeps every sample"
# captures: one group per module
"$FOLD" --unit samples --group '{%}!->[$1]' "$SENTRY" | cut -d' ' -f1 | tr ';' '\n' | sort -u >"$T/mods"
grep -qx '\[System.Private.CoreLib\]' "$T/mods" && ! grep -q '!' "$T/mods" &&
	pass "--group '{%}!->[\$1]' groups every frame by its module" ||
	{ fail "--group with captures"; diag "$(head "$T/mods")"; }

# --fold PAT: frames removed, their time to the caller.
awk '{ c = $NF; line = $0; sub(/ [^ ]*$/, "", line); n = split(line, f, ";"); out = ""
	for (i = 1; i <= n; i++) if (f[i] != "?!?") out = out (out == "" ? "" : ";") f[i]
	print out " " c }' "$T/all" | regroup >"$T/want-fold"
"$FOLD" --unit samples --fold '?!?' "$SENTRY" | sort >"$T/fold"
same "$T/fold" "$T/want-fold" "--fold PAT removes the frames (PerfView's patterns: '?' is itself)"

# The tree sees the same stacks as fold (one implementation).
run "$TREE" --unit samples --min-percent 0 --no-signature --group 'Sentry%!->' --group '!=>OTHER' "$SENTRY"
is_rc 0 "just my code: exits 0"
grep -q '  OTHER <<System.Private.CoreLib!System.Threading.Thread.StartCallback>>$' "$T/out" &&
	grep -q '    Sentry!Sentry.TransactionTracer.Finish$' "$T/out" &&
	pass "just my code: runtime frames are one OTHER frame, Sentry's frames stay" ||
	{ fail "just my code"; diag "$(head -20 "$T/out")"; }
grep -q '^Selected:  no signatures; group Sentry%!->; group !=>OTHER$' "$T/out" &&
	pass "the header names the selection" || fail "the header names the selection"

# --diff: a trace against itself shows no function; two traces do.
run "$TREE" --diff "$SENTRY" "$SENTRY"
is_rc 0 "--diff against itself exits 0"
is "$(grep -c '%' "$T/out")" 1 "--diff against itself: no function row (only the Units line has %)"
run "$TREE" --diff "$SENTRY" --min-percent 0 --json "$SENTRY"
flatten "$T/out" "$T/flat"
is "$(grep '^functions' "$T/flat")" "$(printf 'functions\t[]')" "--diff --json against itself: no function"
run "$TREE" --diff "$MIXED" --no-module --min-percent 0 --unit samples --json "$ONLY_MANAGED"
flatten "$T/out" "$T/flat"
grep -q 'status	"changed"' "$T/flat" && grep -q 'status	"removed"' "$T/flat" &&
	pass "--diff of two traces: changed and removed functions" || fail "--diff of two traces"
run "$TREE" --diff "$ONLY_MANAGED" --no-module --min-percent 0 --unit samples --json "$MIXED"
flatten "$T/out" "$T/flat"
grep -q 'status	"added"' "$T/flat" && pass "--diff the other way: added functions" || fail "--diff: added"

# --json of the tree: the root and every top-level node add up; the tree's text agrees.
run "$TREE" --unit samples --json --min-percent 0 "$PYRO"
flatten "$T/out" "$T/flat"
is "$(awk -F '\t' '$1 == "samples" { print $2 }' "$T/flat")" 5564 "--json tree: root samples"
is "$(awk -F '\t' '$1 == "children[0].children[1].samples" { print $2 }' "$T/flat")" 1113 \
	"--json tree: Main;Fast 1113 samples"
run "$TREE" --unit samples --top 2 --json "$PYRO"
flatten "$T/out" "$T/flat"
is "$(awk -F '\t' '$1 == "top_self[0].self_samples" { print $2 }' "$T/flat")" 5548 "--json --top: Work's self"

# --width and COLUMNS: rows fit, names cut in the middle keep their head and tail.
run "$TREE" --width 80 --min-percent 0 "$SENTRY"
# (a name keeps 24 columns at least: deep rows may be longer)
awk 'NR > 8 && length($0) > 80 { n = substr($0, 41); sub(/^ */, "", n); if (length(n) > 24) bad++ }
	END { exit bad > 0 }' "$T/out" &&
	pass "--width 80: rows fit 80 columns" || fail "--width 80: rows fit 80 columns"
grep -q '^  79.4%     0.0%   487.404 ms       247  System.Private.Cor...ad.StartCallback()$' "$T/out" &&
	pass "--width: the name is cut in the middle with '...'" || { fail "--width cuts in the middle"; diag "$(sed -n 10,12p "$T/out")"; }
COLUMNS=80 "$TREE" --min-percent 0 "$SENTRY" >"$T/cols"
same "$T/cols" "$T/out" "COLUMNS=80 is --width 80"
COLUMNS=80 "$TREE" --width 0 --min-percent 0 "$SENTRY" >"$T/w0"
"$TREE" --min-percent 0 "$SENTRY" >"$T/plain"
same "$T/w0" "$T/plain" "--width 0 never cuts (and a file gets no limit)"

# -o FILE
run "$TREE" -o "$T/o.txt" --min-percent 0 "$SENTRY"
is_rc 0 "-o FILE exits 0"
is_empty "$T/out" "-o FILE: nothing on stdout"
same "$T/o.txt" "$T/plain" "-o FILE holds the tree"
run "$TREE" -o "$T" "$SENTRY"
is_rc 3 "-o DIRECTORY exits 3"
is "$(cat "$T/err")" "nettrace-tree: cannot open $T: Is a directory (an output file is needed)" "-o DIRECTORY: the message"

# Usage errors of the selection.
run "$TREE" --group 'nothing' "$SENTRY"
is_rc 1 "--group without -> exits 1"
is "$(head -1 "$T/err")" "nettrace-tree: bad --group 'nothing': expected PAT->NAME or PAT=>NAME" "--group without ->: the message"
run "$TREE" --focus '(' "$SENTRY"
is_rc 1 "--focus with a bad regex exits 1"
grep -q "^nettrace-tree: bad --focus pattern '(': " "$T/err" && pass "bad regex: the message names it" || fail "bad regex: the message"
run "$TREE" --width x "$SENTRY"
is_rc 1 "--width x exits 1"
is "$(head -1 "$T/err")" "nettrace-tree: invalid --width value 'x' (expected an integer from 0 to 100000)" "--width x: the message"
run "$TREE" --diff "$SENTRY" --invert "$SENTRY"
is_rc 1 "--diff --invert exits 1"
is "$(head -1 "$T/err")" "nettrace-tree: --diff and --invert cannot be combined" "--diff --invert: the message"
done_testing
