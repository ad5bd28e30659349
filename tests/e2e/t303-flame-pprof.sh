#!/bin/sh
# SPDX-License-Identifier: MIT
# t303-flame-pprof.sh - nettrace-flame --format pprof, read by a real reader: `go tool
# pprof` (Debian: golang-go; skipped without it). Its totals equal nettrace-fold's, in
# samples and in time, under the selection options; samples carry thread and category
# labels; functions keep their names; folded input gives a samples/count profile.
. "$top_srcdir/tests/e2e/lib.sh"
FLAME=$top_builddir/tools/nettrace-flame
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FLAME"
need_tool "$FOLD"
SENTRY=$TRACES/sentry-dotnet/sample.nettrace
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
sum() { awk '{ s += $NF } END { printf "%.0f", s }' "$1"; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

run "$FLAME" --format pprof -o "$T/s.pb.gz" "$SENTRY"
is_rc 0 "pprof: exit 0"
is "$(od -An -tx1 -N3 "$T/s.pb.gz" | tr -d ' ')" 1f8b08 "gzip (deflate) magic"
"$FLAME" --format pprof -o "$T/s2.pb.gz" "$SENTRY"
same "$T/s2.pb.gz" "$T/s.pb.gz" "output is deterministic"

if ! command -v go >/dev/null 2>&1; then
	skip "go tool pprof reads the profile" "go not found (Debian: golang-go)"
	done_testing
fi
# go wants a home and a cache; pprof a directory for its state
HOME=$T GOCACHE=$T/gocache PPROF_TMPDIR=$T GOFLAGS= GOTOOLCHAIN=local
export HOME GOCACHE PPROF_TMPDIR GOFLAGS GOTOOLCHAIN
# total FILE INDEX: pprof's "N total" for a sample index, in samples or ns
total() {
	go tool pprof -top -sample_index="$2" -unit=ns "$1" >"$T/top" 2>"$T/top.err" || {
		cat "$T/top.err" >&2; echo "error"; return; }
	sed -n 's/^Showing nodes accounting for .* of \([0-9.]*\)\(ns\)\{0,1\} total$/\1/p' "$T/top"
}
check_total() { # DESC TRACE OPTIONS...
	desc=$1; trace=$2; shift 2
	"$FLAME" --format pprof -o "$T/o.pb.gz" "$@" "$trace"
	"$FOLD" --unit samples "$@" "$trace" >"$T/fs.txt"
	"$FOLD" "$@" "$trace" >"$T/fn.txt"
	is "$(total "$T/o.pb.gz" samples)" "$(sum "$T/fs.txt")" "$desc: pprof's sample total is nettrace-fold's"
	got=$(total "$T/o.pb.gz" time)
	want=$(sum "$T/fn.txt")
	if near "$got" "$want" "$(wc -l <"$T/fn.txt")"; then
		pass "$desc: pprof's time total is nettrace-fold's ($want ns)"
	else
		fail "$desc: pprof's time total is nettrace-fold's"
		diag "pprof $got, fold $want"
	fi
}
check_total "sentry" "$SENTRY"
check_total "pyroscope" "$PYRO"
check_total "--range 1s..5s" "$PYRO" --range 1s..5s
check_total "--thread 4688,2152" "$SENTRY" --thread 4688,2152
check_total "--category running" "$MIXED" --category running
check_total "--compat traceevent" "$MIXED" --compat traceevent

go tool pprof -raw "$T/s.pb.gz" >"$T/raw" 2>"$T/raw.err"
grep -q '^samples/count time/nanoseconds\[dflt\]' "$T/raw" && pass "sample types samples/count and time/nanoseconds (default)" ||
	{ fail "sample types"; diag "$(head -n 12 "$T/raw")"; }
grep -q 'thread:\[4688\]' "$T/raw" && pass "samples carry the thread label" || fail "samples carry the thread label"
grep -q 'category:\[wait\]' "$T/raw" && pass "samples carry the category label" || fail "samples carry the category label"
grep -q '^PeriodType: time nanoseconds' "$T/raw" && pass "period type time/nanoseconds" || fail "period type"
grep -q '^Time: 2023-03-16' "$T/raw" && pass "the session's start time" || fail "the session's start time"
go tool pprof -top -sample_index=samples "$T/s.pb.gz" >"$T/top" 2>&1
grep -q 'System.IO.Pipes!System.IO.Pipes.PipeStream.ReadCore' "$T/top" && pass "-top lists the functions by name" ||
	{ fail "-top lists the functions by name"; diag "$(head -n 12 "$T/top")"; }
is "$(grep -c 'Main binary filename not available' "$T/top")" 0 "pprof finds the profile symbolized"
go tool pprof -top -sample_index=samples -tagfocus=category=wait "$T/s.pb.gz" >"$T/wait" 2>&1
"$FOLD" --unit samples --category wait "$SENTRY" >"$T/w.txt"
is "$(sed -n 's/^Showing nodes accounting for \([0-9]*\), .*/\1/p' "$T/wait")" "$(sum "$T/w.txt")" \
	"-tagfocus category=wait selects the wait samples"

# folded input: counts only
"$FOLD" --unit samples "$PYRO" >"$T/p.folded"
"$FLAME" --format pprof -o "$T/f.pb.gz" "$T/p.folded"
go tool pprof -raw "$T/f.pb.gz" >"$T/fraw" 2>&1
grep -q '^samples/count$' "$T/fraw" && pass "folded input: one samples/count value" || { fail "folded input: samples/count"; diag "$(head "$T/fraw")"; }
is "$(total "$T/f.pb.gz" samples)" 5564 "folded input: 5564 samples"
"$FOLD" "$PYRO" >"$T/n.folded"
"$FLAME" --unit ns --format pprof -o "$T/fn.pb.gz" "$T/n.folded"
is "$(total "$T/fn.pb.gz" time)" "$(sum "$T/n.folded")" "folded ns input: time/nanoseconds, exact total"
done_testing
