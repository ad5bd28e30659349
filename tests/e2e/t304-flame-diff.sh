#!/bin/sh
# SPDX-License-Identifier: MIT
# t304-flame-diff.sh - differential flame graphs (--diff BASE): widths follow the profile
# drawn, each frame carries its base weight, colours follow the change of share (grey for
# an identical base, red for a frame that grew, blue for one that shrank), a nettrace or a
# folded base, the same selection options on both nettrace sides, and the errors.
. "$top_srcdir/tests/e2e/lib.sh"
FLAME=$top_builddir/tools/nettrace-flame
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FLAME"
need_tool "$FOLD"
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
sum() { awk '{ s += $NF } END { printf "%.0f", s }' "$1"; }
# attr FILE NAME ATTR: attribute of the frame named NAME
attr() { grep "<title>$2</title>" "$1" | head -n 1 | sed -n "s/.* $3=\"\([^\"]*\)\".*/\1/p"; }
fill() { grep "<title>$2</title>" "$1" | head -n 1 | sed -n 's/.* fill="\([^"]*\)".*/\1/p'; }

# identical base: nothing changed, every frame grey
run "$FLAME" --unit samples --diff "$PYRO" -o "$T/same.svg" "$PYRO"
is_rc 0 "--diff with the same trace: exit 0"
grep -q '>Differential Flame Graph<' "$T/same.svg" && pass "default title" || fail "default title"
is "$(grep '^<g v=' "$T/same.svg" | grep -vc 'fill="rgb(225,225,225)"')" 0 "identical base: every frame grey"
is "$(attr "$T/same.svg" all b)" 5564 "the root carries the base total"

# a folded base from the first half, the second half drawn
"$FOLD" --unit samples --range ..4s "$PYRO" >"$T/base.folded"
run "$FLAME" --unit samples --range 4s.. --diff "$T/base.folded" -o "$T/d.svg" "$PYRO"
is_rc 0 "--diff with a folded base: exit 0"
"$FOLD" --unit samples --range 4s.. "$PYRO" >"$T/new.txt"
is "$(attr "$T/d.svg" all v)" "$(sum "$T/new.txt")" "widths follow the profile drawn"
is "$(attr "$T/d.svg" all b)" "$(sum "$T/base.folded")" "the base weights come from BASE"
slow=mvc-hello-world!Example.Program.Slow\(\)
fast=mvc-hello-world!Example.Program.Fast\(\)
# shares: which of Slow/Fast grew decides red/blue
dir=$(awk -v sv="$(attr "$T/d.svg" "$slow" v)" -v sb="$(attr "$T/d.svg" "$slow" b)" \
	-v tv="$(attr "$T/d.svg" all v)" -v tb="$(attr "$T/d.svg" all b)" \
	'BEGIN { d = sv / tv - sb / tb; print (d > 0 ? "red" : d < 0 ? "blue" : "grey") }')
# colour class of a fill: red (r = 255 > b), blue (b = 255 > r) or grey
hue() { echo "$1" | awk -F'[(,)]' '{ print ($2 == 255 && $4 < 255) ? "red" : ($4 == 255 && $2 < 255) ? "blue" : "grey" }'; }
opp() { case $1 in red) echo blue ;; blue) echo red ;; *) echo grey ;; esac; }
is "$(hue "$(fill "$T/d.svg" "$slow")")" "$dir" "Slow() is coloured $dir, as its share changed"
is "$(hue "$(fill "$T/d.svg" "$fast")")" "$(opp "$dir")" "Fast() has the opposite colour"

# nettrace base: the selection options apply to both sides
run "$FLAME" --unit samples --category running --diff "$MIXED" -o "$T/m.svg" "$MIXED"
is "$(attr "$T/m.svg" all b)" 3904 "a nettrace base is selected with the same options"
is "$(attr "$T/m.svg" all v)" 3904 "... as the profile drawn"

# errors
run "$FLAME" --diff "$T/missing.nettrace" "$PYRO"
is_rc 3 "missing base: exit 3"
printf 'x 1\ny\n' >"$T/bad.folded"
run "$FLAME" --diff "$T/bad.folded" "$PYRO"
is_rc 2 "malformed base: exit 2"
is "$(cat "$T/err")" "nettrace-flame: $T/bad.folded: at byte 4 (0x4): line 2: no count: expected 'frame;...;frame COUNT'" \
	"malformed base: named in the error"
run "$FLAME" --diff "$PYRO" --format speedscope "$PYRO"
is_rc 1 "--diff with --format speedscope: exit 1"
done_testing
