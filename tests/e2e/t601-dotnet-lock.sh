#!/bin/sh
# SPDX-License-Identifier: MIT
# t601-dotnet-lock.sh - two threads contend for one Monitor; recorded by the runtime's own
# file session and by dotnet-trace, each trace reads whole, its managed frames resolve,
# and the time between each thread's ContentionStart and ContentionStop, and the
# DurationNs the Stops carry, add up to the time the program measured around its
# Monitor.Enter calls (within 10%).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need_both

for how in file dotnet-trace; do
	tr=$T/lock-$how.nettrace
	dotnet_take "$how" lock "$tr" 2 || continue
	dotnet_events "$tr"
	want=$(truth wait_s "$tr.truth")
	dotnet_contention "$tr" >"$tr.cont"
	read -r n got dur <"$tr.cont"
	dotnet_within "$got" "$want" \
		"lock ($how): $n contentions, ${got}s from ContentionStart to Stop, program measured ${want}s"
	dotnet_within "$dur" "$want" "lock ($how): ContentionStop DurationNs add up to ${dur}s"
done
done_testing
