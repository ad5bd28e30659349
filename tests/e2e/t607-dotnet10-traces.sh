#!/bin/sh
# SPDX-License-Identifier: MIT
# t607-dotnet10-traces.sh - the .NET 10 recordings of data/traces/dotnet10 (no dotnet
# needed): each reads whole; the runtime's file session and dotnet-trace traces hold the
# workloads' own truths (71 contentions adding up to the 0.333328 s the program measured
# waiting; 1000 exceptions thrown); the V6 trace of `dotnet-trace collect-linux` decodes:
# its Universal.System strings, and its perf CPU samples symbolize through its
# ProcessSymbol ranges into the workload's methods. Facts: data/traces/EXPECTED.md.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
need_tool "$INFO"
need_tool "$top_builddir/tools/nettrace-fold"
D=$TRACES/dotnet10

# Copies: dotnet_check_trace and dotnet_events write next to the trace.
for f in file-session-lock dotnet-trace-exceptions collect-linux-cpu; do
	cp "$D/$f.nettrace" "$T/$f.nettrace" || { echo "Bail out! $D/$f.nettrace missing"; exit 1; }
done

tr=$T/file-session-lock.nettrace
dotnet_check_trace "$tr" "file session (lock)"
is "$(sed -n 's/^Format: *//p' "$tr.info")" "nettrace V4/V5 (FastSerialization, Trace object version 4)" \
	"file session: the runtime writes the V4 container"
dotnet_events "$tr"
is "$(dotnet_count "$tr" ContentionStart) $(dotnet_count "$tr" ContentionStop)" "71 71" \
	"file session: 71 ContentionStart/Stop pairs"
dotnet_contention "$tr" >"$T/cont"
read -r n got dur <"$T/cont"
dotnet_within "$got" 0.333328 "file session: ${got}s between ContentionStart and Stop, program measured 0.333328s"
dotnet_within "$dur" 0.333328 "file session: ContentionStop DurationNs add up to ${dur}s"

tr=$T/dotnet-trace-exceptions.nettrace
dotnet_check_trace "$tr" "dotnet-trace (exceptions)"
dotnet_events "$tr"
is "$(dotnet_count "$tr" ExceptionThrown)" 1000 "dotnet-trace: 1000 ExceptionThrown, as thrown"

tr=$T/collect-linux-cpu.nettrace
run "$INFO" "$tr"
if [ "$rc" -eq 0 ] && grep -q '^Format: *nettrace V6.0$' "$T/out" && grep -q '^Truncated: *no' "$T/out"; then
	pass "collect-linux: a V6 stream, read whole"
else
	fail "collect-linux: a V6 stream, read whole (exit $rc)"; diag "$(cat "$T/err")"
fi
"$INFO" --events --stacks "$tr" >"$tr.events" 2>"$T/err"
is "$(grep -c '/ExistingProcess(.*{"NamespaceId":27020,"Name":"nt-workloads","NamespaceName":"Unknown"}$' "$tr.events")" 1 \
	"collect-linux: ExistingProcess names the traced workload (pid 27020) in UTF-8 strings"
# CoreLib is mapped in 5 pieces, all with the same symbol metadata (MetadataId 1).
is "$(grep -c '/ProcessMapping(.*"FileName":"/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll","MetadataId":1,' "$tr.events")" 5 \
	"collect-linux: ProcessMapping FileName and MetadataId decode after the string"
# The cpu samples of the workload's main thread against the ProcessSymbol ranges (JIT code
# named from the runtime's perf map): how many have a frame in NtWorkloads.Program::Split?
dotnet_v6_symbolized "$tr.events" 27020 'NtWorkloads\.Program::Split' >"$T/sym"
read -r h n <"$T/sym"
if [ "$n" -eq 601 ] && [ $((h * 100)) -ge $((n * 90)) ]; then
	pass "collect-linux: $h of the workload's $n CPU samples symbolize into Program::Split"
else
	fail "collect-linux: $h of the workload's $n CPU samples symbolize into Program::Split (601 expected)"
fi
done_testing
