#!/bin/sh
# SPDX-License-Identifier: MIT
# t101-fold-weights.sh - default weights: every sample weighs its session's inferred
# interval (the one nettrace-info reports under "rate"), and --unit samples gives the raw
# counts. Expected counts come from EXPECTED.md section 3 (raw sample stacks of the
# pyroscope single-thread trace: Work<-Slow<-Main x4443, Work<-Fast<-Main x1105,
# Slow<-Main x8, Fast<-Main x8).
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FOLD"
need_tool "$INFO"
f=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace

M='mvc-hello-world!Example.Program'
cat >"$T/want" <<EOT
$M.Main(class System.String[]);$M.Fast() 8
$M.Main(class System.String[]);$M.Fast();$M.Work(int32) 1105
$M.Main(class System.String[]);$M.Slow() 8
$M.Main(class System.String[]);$M.Slow();$M.Work(int32) 4443
EOT
run "$FOLD" --unit samples "$f"
is_rc 0 "--unit samples exits 0"
same "$T/out" "$T/want" "--unit samples: the raw stack counts of EXPECTED.md"

# ns weights = samples x inferred interval (nettrace-info prints it to 0.1 ns, hence the
# tolerance of 0.05 ns per sample plus the rounding of the line)
"$INFO" --json "$f" >"$T/info.json"
flatten "$T/info.json" "$T/flat"
iv=$(grep '^rate.inferred_interval_ns	' "$T/flat" | cut -f2)
run "$FOLD" "$f"
is_rc 0 "default unit exits 0"
bad=$(awk -v iv="$iv" -v want="$T/want" '
	BEGIN { while ((getline l < want) > 0) { n = l; sub(/ [0-9]+$/, "", n); c[n] = l; sub(/.* /, "", c[n]) } }
	{ w = $NF; s = $0; sub(/ [0-9]+$/, "", s); e = c[s] * iv; d = w - e; if (d < 0) d = -d;
	  if (!(s in c) || d > 0.5 + 0.051 * c[s]) print "bad: " $0 " want " e }' "$T/out")
is "$bad" "" "default weights are samples x the inferred interval ($iv ns)"
is "$(wc -l <"$T/out" | tr -d ' ')" 4 "default: 4 lines"

# us and ms are the same weights scaled
run "$FOLD" --unit ms "$f"
tot_ms=$(awk '{ s += $NF } END { printf "%.0f", s }' "$T/out")
tot_ns=$("$FOLD" "$f" | awk '{ s += $NF } END { printf "%.0f", s / 1e6 }')
is "$tot_ms" "$tot_ns" "--unit ms total equals the ns total / 1e6"

# Several files: one session each, merged lines, each with its own interval
run "$FOLD" --unit samples "$f" "$f"
awk '{ $NF = $NF / 2; print }' "$T/out" >"$T/half"
same "$T/half" "$T/want" "two copies of a file: every count doubles"
done_testing
