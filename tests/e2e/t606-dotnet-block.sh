#!/bin/sh
# SPDX-License-Identifier: MIT
# t606-dotnet-block.sh - Thread.Sleep, a blocking pipe read and an awaited Task.Delay;
# recorded by the runtime's own file session and by dotnet-trace, each trace reads whole
# and its managed frames resolve, and the main thread's time (the sampler takes blocked
# threads too, as External) splits between the sleep and the pipe read, and the wait for
# the delay, as the program's own clock says, within 2% + 4 sigma of its samples. Time, not
# sample counts: with three long phases, a pause of the sampler on a loaded machine falls
# in one of them; --compat traceevent charges each sample the time to the thread's next.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need_both

for how in file dotnet-trace; do
	tr=$T/block-$how.nettrace
	dotnet_take "$how" block "$tr" 1.5 || continue
	main=$(sed -n 's/^pid=//p' "$tr.truth")
	"$top_builddir/tools/nettrace-fold" --unit samples --thread "$main" "$tr" >"$tr.main"
	"$top_builddir/tools/nettrace-fold" --compat traceevent --unit ms --thread "$main" "$tr" \
		>"$tr.main-ms"
	n=$(awk '/Blocking\.Run/ { n += $NF } END { print n + 0 }' "$tr.main")
	awk -v s="$(truth sleep_s "$tr.truth")" -v p="$(truth pipe_s "$tr.truth")" \
		-v d="$(truth delay_s "$tr.truth")" -v n="$n" '
		!/Blocking\.Run/ { next }
		/Blocking\.(SleepFor|ReadPipe)/ { a += $NF } { t += $NF }
		END {
			want = (s + p) / (s + p + d); got = t ? a / t : 0
			tol = 0.02 + 4 * sqrt(want * (1 - want) / (n ? n : 1)); e = got - want
			if (e < 0) e = -e
			printf "%s %.4f %.4f %.4f %d\n", (n && e <= tol ? "ok" : "bad"), got, want, tol, n }' \
		"$tr.main-ms" >"$tr.share"
	read -r verdict got want tol n <"$tr.share"
	msg="block ($how): $got of the main thread's time in Blocking.Run ($n samples) in SleepFor/ReadPipe, program measured $want (tolerance $tol)"
	if [ "$verdict" = ok ]; then pass "$msg"; else fail "$msg"; fi
done
done_testing
