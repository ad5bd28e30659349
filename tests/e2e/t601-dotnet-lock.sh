#!/bin/sh
# SPDX-License-Identifier: MIT
# t601-dotnet-lock.sh - two threads contend for one Monitor; recorded by the runtime's own
# file session and by dotnet-trace, each trace reads whole, its managed frames resolve,
# and the time between each thread's ContentionStart and ContentionStop adds up to the
# time the program measured around its Monitor.Enter calls (within 10%).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
dotnet_workloads
dotnet_trace_need

for how in file dotnet-trace; do
	tr=$T/lock-$how.nettrace
	dotnet_run "$how" lock "$tr" 2 || continue
	dotnet_check_trace "$tr" "lock ($how)"
	dotnet_events "$tr"
	want=$(truth wait_s "$tr.truth")
	awk -v hz="$(dotnet_ticks "$tr")" -v want="$want" '
		/\/ContentionStart\(/ || /\/ContentionStop\(/ {
			match($0, / ts=[0-9]+/); ts = substr($0, RSTART + 4, RLENGTH - 4)
			match($0, / tid=[0-9]+/); tid = substr($0, RSTART + 5, RLENGTH - 5)
			if ($0 ~ /ContentionStart\(/) start[tid] = ts
			else if (tid in start) { sum += ts - start[tid]; n++; delete start[tid] }
		}
		END {
			got = hz > 0 ? sum / hz : 0; d = got - want; if (d < 0) d = -d
			printf "%s %.6f %d\n", (want > 0 && d <= 0.10 * want ? "ok" : "bad"), got, n }' \
		"$tr.events" >"$tr.cont"
	read -r verdict got n <"$tr.cont"
	msg="lock ($how): $n contentions, ${got}s waited in the trace, program measured ${want}s"
	if [ "$verdict" = ok ]; then pass "$msg"; else fail "$msg"; fi
done
done_testing
