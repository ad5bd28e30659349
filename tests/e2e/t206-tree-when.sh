#!/bin/sh
# SPDX-License-Identifier: MIT
# t206-tree-when.sh - time histograms in nettrace-tree (--when, --when-width, --ascii): on a
# generated trace with known phases (mkphases.c: Load runs only in the first 900 ms,
# Compute only after 1100 ms, a worker all along), a function of the second phase has an
# empty first half and the other way round, at several widths; the column and the
# "When:" header (golden outputs, UTF-8 and ASCII); the locale chooses UTF-8 or ASCII;
# histograms of --top, --per-thread, --range and several sessions; real traces (every
# bar of a row is drawn, the header adds up); usage errors.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
MKPHASES=$top_builddir/tests/mkphases
need_tool "$MKPHASES"

D=t206-tree-when
cd "$T" || exit 1
if ! "$MKPHASES" phases.nettrace 2>"$T/err"; then
	fail "mkphases writes the trace"
	diag "$(cat "$T/err")"
	done_testing
fi

# when_of NAME: the when column of the first row whose frame is NAME (ASCII output of the
# last run, whose title row gives the column's position and width).
when_of() {
	awk -v name="$1" '
		/  when +(frame|function|subsystem)$/ { c = index($0, "  when") + 2
			w = match($0, /when +/); w = RLENGTH - 2; next }
		c && index($0, name) && substr($0, length($0) - length(name) + 1) == name {
			print substr($0, c, w); exit }' "$T/out"
}

# Golden outputs: UTF-8 bars (C.UTF-8 is built into glibc >= 2.35), ASCII, widths.
utf8=0
[ "$(LC_ALL=C.UTF-8 locale charmap 2>/dev/null)" = UTF-8 ] && utf8=1
if [ "$utf8" = 1 ]; then
	run env LC_ALL=C.UTF-8 "$TREE" --when --unit samples phases.nettrace
	is_rc 0 "--when exits 0"
	golden_if_ok 0 "$T/out" "$EXPECTED/$D/phases-utf8.out" "--when in a UTF-8 locale (golden)"
else
	skip "--when in a UTF-8 locale (golden)" "no C.UTF-8 locale"
fi
tree_case $D phases-ascii --when --unit samples phases.nettrace
tree_case $D phases-ascii-64 --when --when-width 64 --by-category --no-module phases.nettrace
tree_case $D phases-top --when --ascii --top 3 --unit samples --no-module phases.nettrace
tree_case $D phases-per-thread --when --when-width 16 --per-thread --unit samples \
	--no-module phases.nettrace

# Known phases, at several widths: Compute (after 1100 ms of 2000) has an empty first
# half and samples in every bucket of its last 40%; Load (before 900 ms) the other way.
for w in 4 10 32 57 100 256; do
	run "$TREE" --when --when-width "$w" --unit samples --no-module --min-percent 0 phases.nettrace
	c=$(when_of "App.Compute()")
	l=$(when_of "App.Load()")
	m=$(when_of "App.Worker()")
	half=$((w / 2))
	tail=$((w * 2 / 5))
	is "${#c}" "$w" "width $w: the column has $w characters"
	case $(printf '%s' "$c" | cut -c1-"$half") in
	*[!\ ]*) fail "width $w: Compute (second phase) has an empty first half"; diag "'$c'" ;;
	*) pass "width $w: Compute (second phase) has an empty first half" ;;
	esac
	case $(printf '%s' "$c" | cut -c$((w - tail + 1))-) in
	*\ *) fail "width $w: Compute has samples in each bucket of its last 40%"; diag "'$c'" ;;
	*) pass "width $w: Compute has samples in each bucket of its last 40%" ;;
	esac
	case $(printf '%s' "$l" | cut -c$((half + 1))-) in
	*[!\ ]*) fail "width $w: Load (first phase) has an empty second half"; diag "'$l'" ;;
	*) pass "width $w: Load (first phase) has an empty second half" ;;
	esac
	case $m in
	*\ *) fail "width $w: the worker runs in every bucket"; diag "'$m'" ;;
	*) pass "width $w: the worker runs in every bucket" ;;
	esac
done

# The header: the selection's samples, span and buckets.
run "$TREE" --when --unit samples phases.nettrace
case $(grep '^When:' "$T/out") in
"When:      |"*"|  2300 samples, 0.001 s .. "*" s, 32 buckets of "*" ms, busiest "*)
	pass "the When: header gives samples, span, buckets and the busiest bucket" ;;
*) fail "the When: header gives samples, span, buckets and the busiest bucket"
	diag "$(grep '^When:' "$T/out")" ;;
esac
grep -q "^ *when: samples over time, each row scaled to its busiest bucket$" "$T/out" &&
	pass "the header says how bars scale" || fail "the header says how bars scale"

# The locale decides: C gives ASCII, C.UTF-8 blocks; --ascii forces ASCII.
run env LC_ALL=C "$TREE" --when phases.nettrace
if LC_ALL=C grep -q "$(printf '[\200-\377]')" "$T/out"; then
	fail "LC_ALL=C: ASCII bars"
else
	pass "LC_ALL=C: ASCII bars"
fi
if [ "$utf8" = 1 ]; then
	run env LC_ALL=C.UTF-8 "$TREE" --when phases.nettrace
	grep -q "$(printf '\342\226\210')" "$T/out" && pass "LC_ALL=C.UTF-8: block elements" ||
		fail "LC_ALL=C.UTF-8: block elements"
else
	skip "LC_ALL=C.UTF-8: block elements" "no C.UTF-8 locale"
fi
run env LC_ALL=C.UTF-8 "$TREE" --when --ascii phases.nettrace
if LC_ALL=C grep -q "$(printf '[\200-\377]')" "$T/out"; then
	fail "--ascii in a UTF-8 locale: ASCII bars"
else
	pass "--ascii in a UTF-8 locale: ASCII bars"
fi

# A range: the histogram spans the selected samples only (1.2 s .. 1.8 s: 600 Compute
# samples and 150 of the worker; Compute in every bucket).
run "$TREE" --when --when-width 8 --range 1.2s..1.8s --unit samples --no-module phases.nettrace
c=$(when_of "App.Compute()")
case $c in
*\ *) fail "--range 1.2s..1.8s: Compute is in every bucket"; diag "'$c'" ;;
*) pass "--range 1.2s..1.8s: Compute is in every bucket" ;;
esac
case $(grep '^When:' "$T/out") in
*"|  750 samples, 1.200 s .. "*) pass "--range: the header spans the selection" ;;
*) fail "--range: the header spans the selection"; diag "$(grep '^When:' "$T/out")" ;;
esac

# Two sessions overlay on one time axis (time since each session's start).
cp phases.nettrace phases2.nettrace
run "$TREE" --when --when-width 8 --unit samples --no-module phases.nettrace phases2.nettrace
c=$(when_of "App.Compute()")
is "$(printf '%s' "$c" | cut -c1-4)" "    " "two sessions: still an empty first half"
grep -q "|  4600 samples, 0.001 s .. " "$T/out" && pass "two sessions: 4600 samples" ||
	fail "two sessions: 4600 samples"

# Real traces: every row has a full-width column, the root's row has no blank bucket
# between its first and last bar, exit 0, nothing on stderr.
cd "$TRACES" || exit 1
for f in "$PYRO" "$MIXED" "$SENTRY" perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace; do
	run "$TREE" --when --when-width 40 --unit samples "$f"
	is_rc 0 "$f: --when exits 0"
	bad=$(awk '/  when +frame$/ { c = index($0, "  when") + 2; next }
		c { w = substr($0, c, 40); if (length(w) != 40 || w !~ /[.:=+*#@-]/) print }' "$T/out")
	is "$bad" "" "$f: every row has a 40-character column with bars"
	h=$(sed -n 's/^When:      |\(.*\)|  .*/\1/p' "$T/out")
	is "${#h}" 40 "$f: the header histogram is 40 wide"
done
tree_case $D sentry-when --when --when-width 24 --unit samples --depth 3 "$SENTRY"

# Usage errors.
run "$TREE" --when-width 10 "$PYRO"
is_rc 1 "--when-width without --when: exit 1"
is "$(head -n 1 "$T/err")" "nettrace-tree: --when-width needs --when" "... says so"
run "$TREE" --ascii "$PYRO"
is_rc 1 "--ascii without --when: exit 1"
run "$TREE" --when --when-width 3 "$PYRO"
is_rc 1 "--when-width 3: exit 1"
is "$(head -n 1 "$T/err")" \
	"nettrace-tree: invalid --when-width value '3' (expected an integer from 4 to 256)" \
	"--when-width 3: says the range"
run "$TREE" --when --when-width 257 "$PYRO"
is_rc 1 "--when-width 257: exit 1"
done_testing
