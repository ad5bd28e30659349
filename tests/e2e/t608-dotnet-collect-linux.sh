#!/bin/sh
# SPDX-License-Identifier: MIT
# t608-dotnet-collect-linux.sh - `dotnet-trace collect-linux` (perf_events, V6 output) on
# the serve workload, where it can run: as root with tracefs mounted. The V6 trace reads
# whole and the perf CPU samples of the workload's main thread symbolize into its Split
# loop. .NET providers need the kernel's user_events (doc/format/dotnet10.md): without
# them only perf events are recorded. Skips with the reason elsewhere (a fresh VM has no
# tracefs mount; the test does not mount it).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP collect-linux needs root"
	exit 0
fi
if [ ! -r /sys/kernel/tracing/available_events ]; then
	echo "1..0 # SKIP tracefs is not mounted at /sys/kernel/tracing (collect-linux needs it)"
	exit 0
fi
need_tool "$INFO"
dotnet_workloads
dotnet_trace_need

# serve runs split until its stdin closes: a FIFO held open by this shell.
mkfifo "$T/stdin" || { echo "Bail out! mkfifo failed"; exit 1; }
"$NT_WORKLOADS" serve 30 <"$T/stdin" >"$T/serve.truth" 2>"$T/serve.err" &
serve=$!
exec 8>"$T/stdin"
i=0
while ! grep -q '^pid=' "$T/serve.truth" && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
pid=$(truth pid "$T/serve.truth")
sleep 0.5 # past the JIT of the loop
tr=$T/cl.nettrace
if "$NT_DOTNET_TRACE" collect-linux -p "$pid" --profile cpu-sampling -o "$tr" \
	--duration 00:00:00:02 >"$T/cl.out" 2>&1 && [ -s "$tr" ]; then
	pass "collect-linux recorded pid $pid"
else
	fail "collect-linux recorded pid $pid"; diag "$(cat "$T/cl.out")"
fi
exec 8>&-
wait "$serve"

run "$INFO" "$tr"
if [ "$rc" -eq 0 ] && grep -q '^Format: *nettrace V6' "$T/out" && grep -q '^Truncated: *no' "$T/out"; then
	pass "collect-linux: a V6 stream, read whole"
else
	fail "collect-linux: a V6 stream, read whole (exit $rc)"; diag "$(cat "$T/err")"
fi
"$INFO" --events --stacks "$tr" >"$tr.events" 2>"$T/err"
dotnet_v6_symbolized "$tr.events" "$pid" 'NtWorkloads\.Program::Split' >"$T/sym"
read -r h n <"$T/sym"
if [ "$n" -gt 100 ] && [ $((h * 100)) -ge $((n * 90)) ]; then
	pass "collect-linux: $h of the main thread's $n CPU samples symbolize into Program::Split"
else
	fail "collect-linux: $h of the main thread's $n CPU samples symbolize into Program::Split"
fi
done_testing
