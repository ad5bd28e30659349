#!/bin/sh
# SPDX-License-Identifier: MIT
# t606-dotnet-block.sh - Thread.Sleep, a blocking pipe read and an awaited Task.Delay;
# recorded by the runtime's own file session and by dotnet-trace, each trace reads whole
# and its managed frames resolve, and the main thread's samples (the sampler takes blocked
# threads too, as External) split between the sleep and the pipe read, and the wait for the
# delay, as the program's own clock says: within 2% + 4 sigma, plus the share of the run the
# sampler itself lost to pauses (nettrace-info's "Sampling gaps"): with three long phases, a
# pause of the sampler thread on a loaded machine falls in one of them.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
dotnet_workloads
dotnet_trace_need

for how in file dotnet-trace; do
	tr=$T/block-$how.nettrace
	dotnet_run "$how" block "$tr" 1.5 || continue
	dotnet_check_trace "$tr" "block ($how)"
	main=$(sed -n 's/^pid=//p' "$tr.truth")
	"$top_builddir/tools/nettrace-fold" --unit samples --thread "$main" "$tr" >"$tr.main"
	gaps=$(sed -n 's/^Sampling gaps: .* pauses, \([0-9.]*\) s in all.*/\1/p' "$tr.info")
	awk -v s="$(truth sleep_s "$tr.truth")" -v p="$(truth pipe_s "$tr.truth")" \
		-v d="$(truth delay_s "$tr.truth")" -v gaps="${gaps:-0}" '
		!/Blocking\.Run/ { next }
		/Blocking\.(SleepFor|ReadPipe)/ { a += $NF } { n += $NF }
		END {
			want = (s + p) / (s + p + d); got = n ? a / n : 0
			tol = 0.02 + 4 * sqrt(want * (1 - want) / (n ? n : 1)) + gaps / (s + p + d)
			e = got - want
			if (e < 0) e = -e
			printf "%s %.4f %.4f %.4f %d\n", (n && e <= tol ? "ok" : "bad"), got, want, tol, n }' \
		"$tr.main" >"$tr.share"
	read -r verdict got want tol n <"$tr.share"
	msg="block ($how): $got of the main thread's $n samples in Blocking.Run are in SleepFor/ReadPipe, program measured $want (tolerance $tol)"
	if [ "$verdict" = ok ]; then pass "$msg"; else fail "$msg"; fi
done
done_testing
