#!/bin/sh
# SPDX-License-Identifier: MIT
# t103-fold-options.sh - every selecting/shaping option of nettrace-fold, checked by
# invariants (sums, filters) and, where the output is small, against reviewed goldens.
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FOLD"
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
SENTRY=$TRACES/sentry-dotnet/sample.nettrace
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
sum() { awk '{ s += $NF } END { printf "%.0f", s }' "$1"; }

# --per-thread: a "Thread (TID)" root on every line; 7 threads in the sentry trace (311 samples)
run "$FOLD" --unit samples --per-thread "$SENTRY"
is_rc 0 "--per-thread exits 0"
is "$(sed 's/;.*//' "$T/out" | sort -u | wc -l | tr -d ' ')" 7 "--per-thread: 7 thread roots"
is "$(sum "$T/out")" 311 "--per-thread: 311 samples in all"
is "$(grep -c -v '^Thread ([0-9]*);' "$T/out")" 0 "--per-thread: every line has the root"

# --thread: only the selected threads remain; counts equal their lines in --per-thread
grep '^Thread (4688);' "$T/out" | sed 's/^Thread (4688);//' >"$T/want4688"
run "$FOLD" --unit samples --thread 4688 "$SENTRY"
same "$T/out" "$T/want4688" "--thread 4688 equals that thread's lines of --per-thread"
run "$FOLD" --unit samples --thread 4688,7860 --per-thread "$SENTRY"
is "$(sed 's/;.*//' "$T/out" | sort -u | tr '\n' ' ')" "Thread (4688) Thread (7860) " "--thread A,B keeps two threads"

# --range: the two halves add up to the whole; an empty range says so on stderr
run "$FOLD" --unit samples "$PYRO"
all=$(sum "$T/out")
run "$FOLD" --unit samples --range ..4s "$PYRO"
a=$(sum "$T/out")
run "$FOLD" --unit samples --range 4000ms.. "$PYRO"
b=$(sum "$T/out")
is "$((a + b))" "$all" "--range ..4s plus 4000ms.. = all $all samples"
run "$FOLD" --unit samples --range 4s..4.5s "$PYRO"
c=$(sum "$T/out")
ok=0; [ "$c" -gt 300 ] && [ "$c" -lt 400 ] && ok=1
is "$ok" 1 "--range 4s..4.5s: about 0.5 s / 1.44 ms = 347 samples (got $c)"
run "$FOLD" --range 100s..200s "$PYRO"
is_rc 0 "empty range exits 0"
is_empty "$T/out" "empty range: no output"
is "$(cat "$T/err")" "nettrace-fold: no samples selected by the filters (5564 samples in the input, from 0.001 s to 8.174 s after the session start)" \
	"empty range: says so, with the session's span"
run "$FOLD" --unit samples --range ts:244940552161693.. "$PYRO"
is "$(sum "$T/out")" "$all" "--range ts:SYNC_QPC.. keeps every sample"

# --category and --category-frame: per-category sums add up; the filter keeps one
run "$FOLD" --unit samples --category-frame root "$MIXED"
golden "$T/out" "$EXPECTED/t103-mixed-catroot.txt" "--category-frame root (mixed trace)"
is "$(sed 's/;.*//' "$T/out" | sort -u | tr '\n' ' ')" "[external] [running] " "mixed trace: running and external roots"
cpu=$(grep '^\[running\];' "$T/out" | awk '{ s += $NF } END { print s }')
is "$cpu" 3904 "mixed trace: 3904 running samples (the Managed samples: no CPU clock)"
run "$FOLD" --unit samples --category running "$MIXED"
is "$(sum "$T/out")" 3904 "--category running keeps the 3904 running samples"
run "$FOLD" --unit samples --category-frame leaf --category external "$MIXED"
is "$(grep -c -v ';\[external\] [0-9]*$' "$T/out")" 0 "--category-frame leaf puts [external] at the leaf"
is "$(sum "$T/out")" 2427 "--category external keeps the 2427 External samples"
run "$FOLD" --unit samples --category-frame root "$SENTRY"
is "$(sed 's/;.*//' "$T/out" | sort -u | tr '\n' ' ')" "[external] [io] [wait] " "sentry trace: wait, io and external from the frame rules"

# --managed-only drops External samples (default mode)
run "$FOLD" --unit samples --managed-only "$MIXED"
is "$(sum "$T/out")" 3904 "--managed-only keeps the Managed samples"

# --no-module
run "$FOLD" --unit samples --no-module "$PYRO"
is "$(grep -c '!' "$T/out")" 0 "--no-module: no 'Module!' left"
is "$(head -n 1 "$T/out")" "Example.Program.Main(class System.String[]);Example.Program.Fast() 8" "--no-module: first line"

# --rules: a user file; a bad rule is reported with its line number (exit 2)
printf '# my rules\nsleep *Example.Program.Slow*\n' >"$T/my.rules"
run "$FOLD" --unit samples --rules "$T/my.rules" --category sleep "$PYRO"
is "$(sum "$T/out")" 4451 "--rules: Slow() and its callees (4443 + 8 samples) become sleep"
printf 'cpu *\nlok *Monitor*\n' >"$T/bad.rules"
run "$FOLD" --rules "$T/bad.rules" "$PYRO"
is_rc 2 "bad rules file: exit 2"
case $(cat "$T/err") in *"line 2"*) pass "bad rules file: the message names line 2" ;; *) fail "bad rules file: the message names line 2"; diag "$(cat "$T/err")" ;; esac

# -o FILE writes the same as stdout
run "$FOLD" --unit samples "$PYRO"
cp "$T/out" "$T/stdout"
run "$FOLD" --unit samples -o "$T/o.txt" "$PYRO"
same "$T/o.txt" "$T/stdout" "-o FILE equals standard output"

# usage and input errors
run "$FOLD" --unit parsecs "$PYRO"
is_rc 1 "unknown unit: exit 1"
is "$(tail -n 1 "$T/err")" "Try 'nettrace-fold --help'." "usage error: the Try line"
run "$FOLD" --range 5s..1s "$PYRO"
is_rc 1 "reversed range: exit 1"
run "$FOLD" --category lok "$PYRO"
is_rc 1 "unknown category: exit 1"
run "$FOLD" --compat speedscope "$PYRO"
is_rc 1 "unknown compat mode: exit 1"
run "$FOLD"
is_rc 1 "no input file: exit 1"
run "$FOLD" "$T/nonexistent.nettrace"
is_rc 3 "missing file: exit 3"
printf 'not a trace at all\n' >"$T/junk"
run "$FOLD" "$T/junk"
is_rc 2 "not a nettrace file: exit 2"
is "$(cat "$T/err")" "nettrace-fold: $T/junk: at byte 0 (0x0): not a nettrace file (no \"Nettrace\" magic)" "not a nettrace file: the error line"
run "$FOLD" --unit samples "$TRACES/$TRUNCATED"
is_rc 0 "truncated trace: exit 0"
case $(cat "$T/err") in *"at byte 4170673 (0x3fa3b1): warning: stream truncated"*) pass "truncated trace: warning with the offset" ;; *) fail "truncated trace: warning with the offset"; diag "$(cat "$T/err")" ;; esac
is "$(sum "$T/out")" 7293 "truncated trace: all 7293 complete samples folded"
done_testing
