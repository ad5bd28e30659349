#!/bin/sh
# SPDX-License-Identifier: MIT
# t300-flame-svg.sh - nettrace-flame's SVG from the real traces: its frames add up to
# nettrace-fold's totals under every selecting/weighting option (--range, --thread,
# --category, --unit, --compat, --per-thread), the layout options, folded input (detected
# or forced, equal to the nettrace input it was folded from), escaping, --minwidth pruning,
# and the usage and input errors. The browser checks are in t301-flame-browser.sh.
. "$top_srcdir/tests/e2e/lib.sh"
FLAME=$top_builddir/tools/nettrace-flame
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FLAME"
need_tool "$FOLD"
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
SENTRY=$TRACES/sentry-dotnet/sample.nettrace
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
sum() { awk '{ s += $NF } END { printf "%.0f", s }' "$1"; }
# frames FILE: "name<TAB>total<TAB>self<TAB>offset" per drawn frame, in document order
frames() {
	sed -n 's|^<g v="\([^"]*\)" s="\([^"]*\)" o="\([^"]*\)"[^>]*><title>\([^<]*\)</title>.*|\4\t\1\t\2\t\3|p' "$1"
}
# root FILE: total of the root frame "all"
root() { frames "$1" | awk -F'\t' '$1 == "all" { print $2; exit }'; }
# near A B TOL: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

# ---- the default graph of a trace
run "$FLAME" -o "$T/p.svg" "$PYRO"
is_rc 0 "pyroscope trace: exit 0"
is_empty "$T/out" "-o: nothing on standard output"
is "$(head -c 38 "$T/p.svg")" '<?xml version="1.0" standalone="no"?>' "an XML document"
is "$(grep -c '<script' "$T/p.svg")" 1 "one script element"
is "$(tail -n 1 "$T/p.svg")" "</svg>" "the document is complete"
run "$FOLD" "$PYRO"
fold_ns=$(sum "$T/out")
lines=$(wc -l <"$T/out" | tr -d ' ')
if near "$(root "$T/p.svg")" "$fold_ns" "$lines"; then
	pass "root weight equals nettrace-fold's total ($fold_ns ns)"
else
	fail "root weight equals nettrace-fold's total ($fold_ns ns)"
	diag "root $(root "$T/p.svg")"
fi
is "$(grep -c '<title>mvc-hello-world!Example.Program.Slow()</title>' "$T/p.svg")" 1 "frame names are the folded names"
grep -q '<g id="legend">.*<text [^>]*>running 99.9%</text>' "$T/p.svg" &&
	pass "the legend gives the categories' shares" || fail "the legend gives the categories' shares"
"$FLAME" -o "$T/p2.svg" "$PYRO"
same "$T/p2.svg" "$T/p.svg" "output is deterministic"
run "$FLAME" "$PYRO"
same "$T/out" "$T/p.svg" "standard output equals -o FILE"

# ---- every selecting/weighting option: the root equals nettrace-fold's total, same options
check_opts() { # DESC OPTIONS... (last is the trace)
	desc=$1; shift
	"$FOLD" "$@" >"$T/f.txt" 2>/dev/null
	"$FLAME" -o "$T/o.svg" "$@" 2>/dev/null
	want=$(sum "$T/f.txt")
	got=$(root "$T/o.svg")
	n=$(wc -l <"$T/f.txt" | tr -d ' ')
	if [ -n "$got" ] && near "$got" "$want" "$((n + 1))"; then
		pass "$desc: root $got = nettrace-fold total $want"
	else
		fail "$desc: root ${got:-none} = nettrace-fold total $want"
	fi
}
check_opts "--unit samples" --unit samples "$PYRO"
check_opts "--unit ms" --unit ms "$PYRO"
check_opts "--range ..4s" --unit samples --range ..4s "$PYRO"
check_opts "--range 4000ms.." --unit samples --range 4000ms.. "$PYRO"
check_opts "--thread 4688,7860" --unit samples --thread 4688,7860 "$SENTRY"
check_opts "--category running" --unit samples --category running "$MIXED"
check_opts "--category external" --category external "$MIXED"
check_opts "--managed-only" --unit samples --managed-only "$MIXED"
check_opts "--compat pyroscope" --compat pyroscope "$PYRO"
check_opts "--compat traceevent" --compat traceevent "$MIXED"
check_opts "--rules" --unit samples --rules "$top_srcdir/data/rules/default.rules" "$SENTRY"

# --per-thread: one "Thread (TID)" frame per thread under the root, as nettrace-fold's roots
"$FLAME" --unit samples --per-thread -o "$T/t.svg" "$SENTRY"
"$FOLD" --unit samples --per-thread "$SENTRY" >"$T/t.txt"
frames "$T/t.svg" | awk -F'\t' '$1 ~ /^Thread \(/ { print $1 "\t" $2 }' | sort >"$T/got"
awk '{ sub(/;.*/, "", $0); n[$0]++ } END { for (k in n) print k }' "$T/t.txt" >/dev/null
awk '{ w = $NF; sub(/;.*/, ""); s[$0] += w } END { for (k in s) print k "\t" s[k] }' \
	"$T/t.txt" | sort >"$T/want"
same "$T/got" "$T/want" "--per-thread: each thread's frame weighs its samples"
# --category-frame root and --no-module shape the frames as in nettrace-fold
"$FLAME" --unit samples --category-frame root --no-module -o "$T/c.svg" "$MIXED"
is "$(frames "$T/c.svg" | awk -F'\t' '$1 ~ /^\[/ { print $1 "=" $2 }' | sort | tr '\n' ' ')" \
	"[external]=2427 [running]=3904 " "--category-frame root: category frames with their samples"
is "$(frames "$T/c.svg" | grep -c '^[^(!]*!')" 0 "--no-module: no 'Module!' in frame names"

# ---- --sort: siblings by name (default) or heaviest first
printf 'main;alpha 1\nmain;beta 5\nmain;gamma 3\n' >"$T/sort.folded"
"$FLAME" --sort weight -o "$T/sw.svg" "$T/sort.folded"
"$FLAME" --sort name -o "$T/sn.svg" "$T/sort.folded"
"$FLAME" -o "$T/sd.svg" "$T/sort.folded"
# the children of main in left-to-right order (by their x offset)
order() { frames "$1" | awk -F'\t' '$1 ~ /^(alpha|beta|gamma)$/ { print $4, $1 }' | sort -g |
	awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 } END { print "" }'; }
is "$(order "$T/sw.svg")" "beta gamma alpha" "--sort weight: heaviest first"
is "$(order "$T/sn.svg")" "alpha beta gamma" "--sort name: by name"
same "$T/sd.svg" "$T/sn.svg" "the default is --sort name"
run "$FLAME" --sort size "$T/sort.folded"
is_rc 1 "--sort size: usage error"

# ---- layout options
"$FLAME" --title 'My <Title> & more' --subtitle 'sub "x"' --width 600 --height 20 --icicle \
	-o "$T/l.svg" "$PYRO"
grep -q '^<svg version="1.1" width="600" ' "$T/l.svg" && pass "--width 600" || fail "--width 600"
grep -q '<text id="title" x="300.0" y="24">My &lt;Title&gt; &amp; more</text>' "$T/l.svg" &&
	pass "--title, escaped" || fail "--title, escaped"
grep -q '<text id="subtitle" [^>]*>sub &quot;x&quot;</text>' "$T/l.svg" &&
	pass "--subtitle, escaped" || fail "--subtitle, escaped"
grep -q 'height="19.0" fill=' "$T/l.svg" && pass "--height 20 (frames 19 px + 1 px gap)" ||
	fail "--height 20"
grep -q 'icicle: 1' "$T/l.svg" && pass "--icicle tells the script" || fail "--icicle"
# icicle: the root is the top row; flame: the bottom row
top_y() { sed -n 's|.*<title>all</title><rect x="[^"]*" y="\([^"]*\)".*|\1|p' "$1"; }
max_y() { sed -n 's|.*</title><rect x="[^"]*" y="\([^"]*\)".*|\1|p' "$1" | sort -n | tail -n 1; }
min_y() { sed -n 's|.*</title><rect x="[^"]*" y="\([^"]*\)".*|\1|p' "$1" | sort -n | head -n 1; }
is "$(top_y "$T/l.svg")" "$(min_y "$T/l.svg")" "--icicle: the root is the top row"
is "$(top_y "$T/p.svg")" "$(max_y "$T/p.svg")" "default: the root is the bottom row"
grep -q '>Icicle Graph<' "$T/p.svg" && fail "default title" || pass "default title is not Icicle Graph"

# ---- --minwidth prunes: fewer frames, never a frame narrower than asked
"$FLAME" --minwidth 0 -o "$T/m0.svg" "$SENTRY"
"$FLAME" -o "$T/m1.svg" "$SENTRY"
"$FLAME" --minwidth 5 -o "$T/m5.svg" "$SENTRY"
"$FLAME" --minwidth 2% -o "$T/mp.svg" "$SENTRY"
n0=$(frames "$T/m0.svg" | wc -l); n1=$(frames "$T/m1.svg" | wc -l)
n5=$(frames "$T/m5.svg" | wc -l); np=$(frames "$T/mp.svg" | wc -l)
ok=0; [ "$n0" -ge "$n1" ] && [ "$n1" -gt "$n5" ] && [ "$n5" -gt "$np" ] && [ "$np" -gt 0 ] && ok=1
is "$ok" 1 "--minwidth 0/0.1/5/2%: $n0 >= $n1 > $n5 > $np frames"
narrow() { sed -n 's|.*</title><rect x="[^"]*" y="[^"]*" width="\([^"]*\)".*|\1|p' "$1" |
	awk -v m="$2" '$1 < m { n++ } END { print n + 0 }'; }
is "$(narrow "$T/m5.svg" 5)" 0 "--minwidth 5: no frame under 5 px"
is "$(narrow "$T/mp.svg" 23.6)" 0 "--minwidth 2%: no frame under 2% of 1180 px"
is "$(root "$T/m5.svg")" "$(root "$T/m0.svg")" "pruning keeps the totals"

# ---- folded input: detected, forced, from standard input; equal to the nettrace graph
"$FOLD" --unit samples "$SENTRY" >"$T/s.folded"
"$FLAME" --unit samples --no-collapse-unresolved -o "$T/n.svg" "$SENTRY"
run "$FLAME" -o "$T/f.svg" "$T/s.folded"
is_rc 0 "folded input detected: exit 0"
frames "$T/n.svg" >"$T/fn"; frames "$T/f.svg" >"$T/ff"
same "$T/ff" "$T/fn" "folded input: the same frames, weights and positions as the trace"
run "$FLAME" --folded -o "$T/f2.svg" "$T/s.folded"
same "$T/f2.svg" "$T/f.svg" "--folded gives the same graph"
run "$FLAME" -o "$T/f3.svg" - <"$T/s.folded"
same "$T/f3.svg" "$T/f.svg" "folded stacks on standard input"
"$FLAME" -o "$T/n2.svg" - <"$SENTRY" 2>/dev/null
"$FLAME" -o "$T/n3.svg" "$SENTRY"
same "$T/n2.svg" "$T/n3.svg" "a nettrace file on standard input"
head -n 20 "$T/s.folded" >"$T/a.folded"; tail -n +21 "$T/s.folded" >"$T/b.folded"
"$FLAME" -o "$T/f4.svg" "$T/a.folded" "$T/b.folded"
frames "$T/f4.svg" >"$T/f4"
same "$T/f4" "$T/ff" "several folded files add up"
grep -q 'c="' "$T/f.svg" && fail "folded input has no categories" || pass "folded input has no categories"
printf 'a;b 1.5\r\nc 2\n\n' >"$T/crlf.folded"
run "$FLAME" -o "$T/crlf.svg" "$T/crlf.folded"
is "$(root "$T/crlf.svg")" 3.5 "CRLF, fractional counts and blank lines"
"$FLAME" --unit ms -o "$T/ms.svg" "$T/crlf.folded"
grep -q '>Total 3.500 ms<' "$T/ms.svg" && pass "--unit ms: folded counts are milliseconds" ||
	fail "--unit ms: folded counts are milliseconds"

# ---- names are escaped
printf 'main;<script>alert(1)</script> 5\nmain;a&b 1\n' >"$T/x.folded"
"$FLAME" -o "$T/x.svg" "$T/x.folded"
is "$(grep -c '<script' "$T/x.svg")" 1 "a frame named <script> adds no script element"
grep -q '<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>' "$T/x.svg" &&
	pass "the name is escaped text" || fail "the name is escaped text"

# ---- errors
printf 'a;b 1\nc;d x\n' >"$T/bad.folded"
run "$FLAME" -o "$T/bad.svg" "$T/bad.folded"
is_rc 2 "malformed folded line: exit 2"
is "$(cat "$T/err")" "nettrace-flame: $T/bad.folded: at byte 10 (0xa): line 2: the count is not a decimal number" \
	"malformed folded line: file, offset and line"
run "$FLAME" --range 1s.. "$T/s.folded"
is_rc 1 "--range with folded input: exit 1"
is "$(head -n 1 "$T/err")" "nettrace-flame: --range applies to nettrace files, and $T/s.folded holds folded stacks" \
	"--range with folded input: says why"
run "$FLAME" "$SENTRY" "$T/s.folded"
is_rc 1 "nettrace and folded inputs mixed: exit 1"
run "$FLAME" --format png "$PYRO"
is_rc 1 "unknown format: exit 1"
is "$(tail -n 1 "$T/err")" "Try 'nettrace-flame --help'." "usage error: the Try line"
run "$FLAME" --width 10 "$PYRO"
is_rc 1 "--width 10: exit 1"
run "$FLAME" --minwidth 200% "$PYRO"
is_rc 1 "--minwidth 200%: exit 1"
run "$FLAME" --diff "$PYRO" --format pprof "$PYRO"
is_rc 1 "--diff with --format pprof: exit 1"
run "$FLAME"
is_rc 1 "no input: exit 1"
run "$FLAME" - - <"$T/s.folded"
is_rc 1 "standard input twice: exit 1"
run "$FLAME" "$T/nonexistent.nettrace"
is_rc 3 "missing file: exit 3"
run "$FLAME" -o "$T/nodir/x.svg" "$PYRO"
is_rc 3 "unwritable output: exit 3"
printf 'Nettrace junk' >"$T/junk.nettrace"
run "$FLAME" "$T/junk.nettrace"
is_rc 2 "a broken nettrace file: exit 2"
run "$FLAME" --unit samples -o "$T/tr.svg" "$TRACES/$TRUNCATED"
is_rc 0 "truncated trace: exit 0"
case $(cat "$T/err") in *"warning: stream truncated"*) pass "truncated trace: warning" ;; *) fail "truncated trace: warning" ;; esac
is "$(root "$T/tr.svg")" 7293 "truncated trace: all 7293 complete samples"
run "$FLAME" --range 100s..200s -o "$T/e.svg" "$PYRO"
is_rc 0 "empty selection: exit 0"
grep -q '>No samples</text>' "$T/e.svg" && pass "empty selection: the graph says so" ||
	fail "empty selection: the graph says so"
case $(cat "$T/err") in *"no samples selected by the filters"*) pass "empty selection: stderr says so" ;; *) fail "empty selection: stderr says so" ;; esac
done_testing
