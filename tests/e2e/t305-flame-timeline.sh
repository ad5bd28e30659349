#!/bin/sh
# SPDX-License-Identifier: MIT
# t305-flame-timeline.sh - nettrace-flame --timeline: the density strip above the graph has
# one bar per time bucket whose counts add up to nettrace-fold's samples (with and without
# a selection), the start and end labels, the usage errors (folded input, --format), the
# --range of a span of the strip selects about that span's samples, and, in headless
# Chromium (as t301-flame-browser.sh; skipped without node, chromium or playwright-core),
# dragging over the strip or clicking a bar shows that --range.
. "$top_srcdir/tests/e2e/lib.sh"
FLAME=$top_builddir/tools/nettrace-flame
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FLAME"
need_tool "$FOLD"
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
sum() { awk '{ s += $NF } END { printf "%.0f", s }' "$1"; }
# bars FILE: the samples of each bar, one a line
bars() { sed -n 's|^<rect n="\([0-9]*\)" .*|\1|p' "$1"; }
# cfg FILE KEY: a number of the timeline's cfg (n, start, end)
cfg() { sed -n "s|.*tl: {.*$2: \\(-\\{0,1\\}[0-9.]*\\).*|\\1|p" "$1"; }

# ---- the strip of a trace: 100 bars adding up to the samples
run "$FLAME" --timeline -o "$T/p.svg" "$PYRO"
is_rc 0 "--timeline: exit 0"
is "$(grep -c '^<g id="timeline"' "$T/p.svg")" 1 "one timeline strip"
is "$(bars "$T/p.svg" | wc -l | tr -d ' ')" 100 "100 bars"
run "$FOLD" --unit samples "$PYRO"
want=$(sum "$T/out")
is "$(bars "$T/p.svg" | awk '{ s += $1 } END { print s }')" "$want" \
	"the bars add up to nettrace-fold's samples ($want)"
is "$(grep -c 'id="timeline-range"' "$T/p.svg")" 1 "the range text is there"
grep -q '<text id="timeline-start" [^>]*>0\.001s</text>' "$T/p.svg" &&
	pass "the start label in seconds" || fail "the start label in seconds"
grep -q '<text id="timeline-end" [^>]*>8\.179s</text>' "$T/p.svg" &&
	pass "the end label in seconds" || fail "the end label in seconds"
xmllint --noout "$T/p.svg" 2>/dev/null && pass "well-formed XML" ||
	{ command -v xmllint >/dev/null 2>&1 && fail "well-formed XML" || skip "well-formed XML" "no xmllint"; }
# the strip sits between the title and the frames
top=$(sed -n 's|.*var cfg = {.* top: \([0-9.]*\),.*|\1|p' "$T/p.svg")
awk -v t="$top" 'BEGIN { exit !(t >= 120) }' && pass "the frames start below the strip" ||
	fail "the frames start below the strip" "top $top"
"$FLAME" -o "$T/n.svg" "$PYRO"
is "$(grep -c 'id="timeline' "$T/n.svg")" 0 "no strip without --timeline"
grep -q 'tl: null' "$T/n.svg" && pass "cfg.tl is null without --timeline" ||
	fail "cfg.tl is null without --timeline"

# ---- under a selection: the bars still count the selected samples
check_sel() { # DESC OPTIONS... (last is the trace)
	desc=$1; shift
	"$FOLD" --unit samples "$@" >"$T/f.txt" 2>/dev/null
	"$FLAME" --timeline -o "$T/o.svg" "$@" 2>/dev/null
	is "$(bars "$T/o.svg" | awk '{ s += $1 } END { print s + 0 }')" "$(sum "$T/f.txt")" \
		"$desc: the bars add up to nettrace-fold's samples"
}
check_sel "--range 2s..5s" --range 2s..5s "$PYRO"
check_sel "--category cpu" --category cpu "$MIXED"
check_sel "--managed-only" --managed-only "$MIXED"

# ---- the --range of a span selects about its samples: bars 20..39 of the trace
start=$(cfg "$T/p.svg" start)
end=$(cfg "$T/p.svg" end)
range=$(awk -v s="$start" -v e="$end" 'BEGIN {
	a = s + (e - s) * 20 / 100; b = s + (e - s) * 40 / 100
	a = int(a / 1e6); b = b / 1e6; b = (b == int(b)) ? b : int(b) + 1
	printf "%.3fs..%.3fs", a / 1e3, b / 1e3 }')
inbars=$(bars "$T/p.svg" | awk 'NR > 20 && NR <= 40 { s += $1 } END { print s }')
"$FOLD" --unit samples --range "$range" "$PYRO" >"$T/r.txt"
got=$(sum "$T/r.txt")
# bucket edges are whole fine buckets of the profile's grid: allow a bar's worth either side
if awk -v a="$got" -v b="$inbars" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b / 10 + 2) }'; then
	pass "--range $range selects about the span's samples ($got, bars $inbars)"
else
	fail "--range $range selects about the span's samples" "fold $got, bars $inbars"
fi

# ---- usage errors
printf 'main;a 3\nmain;b 2\n' >"$T/s.folded"
run "$FLAME" --timeline "$T/s.folded"
is_rc 1 "--timeline with folded input: exit 1"
is "$(head -n 1 "$T/err")" "nettrace-flame: --timeline applies to nettrace files, and $T/s.folded holds folded stacks" \
	"--timeline with folded input: says why"
run "$FLAME" --timeline --folded "$T/s.folded"
is_rc 1 "--timeline --folded: exit 1"
run "$FLAME" --timeline --format speedscope "$PYRO"
is_rc 1 "--timeline --format speedscope: exit 1"
is_empty "$T/out" "usage error: nothing on standard output"

# ---- in a browser: a drag and a click show the --range
. "$E2E/lib-browser.sh"
browser_ready "timeline in a browser"
browser "timeline drag" --svg "$T/p.svg" --timeline-drag 20,39 --timeline-range "--range $range"
one=$(awk -v s="$start" -v e="$end" 'BEGIN {
	a = s + (e - s) * 5 / 100; b = s + (e - s) * 6 / 100
	a = int(a / 1e6); b = b / 1e6; b = (b == int(b)) ? b : int(b) + 1
	printf "%.3fs..%.3fs", a / 1e3, b / 1e3 }')
browser "timeline click" --svg "$T/p.svg" --timeline-drag 5,5 --timeline-range "--range $one"
done_testing
