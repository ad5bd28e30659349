#!/bin/sh
# SPDX-License-Identifier: MIT
# t604-dotnet-threads.sh - 200 short-lived threads, one after the other, each spinning
# ~2 ms; recorded by the runtime's own file session and by dotnet-trace, each trace reads
# whole, its managed frames resolve, it has a ThreadCreated event for each OS thread id the
# program printed (gettid in each thread), and samples on most of them.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need_both

for how in file dotnet-trace; do
	tr=$T/threads-$how.nettrace
	dotnet_take "$how" threads "$tr" 200 || continue
	dotnet_events "$tr"
	truth os_tids "$tr.truth" | tr ',' '\n' | sed '/^$/d' | sort -u >"$tr.tids"
	sed -n 's/.*\/ThreadCreated(.*"OSThreadID":\([0-9]*\).*/\1/p' "$tr.events" | sort -u >"$tr.created"
	sed -n 's/.*\/ThreadSample(.* tid=\([0-9]*\) .*/\1/p' "$tr.events" | sort -u >"$tr.sampled"
	want=$(wc -l <"$tr.tids")
	created=$(comm -12 "$tr.tids" "$tr.created" | wc -l)
	sampled=$(comm -12 "$tr.tids" "$tr.sampled" | wc -l)
	is "$want" "$(truth threads "$tr.truth")" "threads ($how): the program printed an OS id per thread"
	is "$created" "$want" "threads ($how): a ThreadCreated event for each of the $want threads"
	# Each thread runs ~2 ms at a 1 ms sampling interval; a loaded machine may let a
	# sampling round miss a thread, not most of them.
	if [ "$sampled" -ge $((want / 2)) ] && [ "$want" -gt 0 ]; then
		pass "threads ($how): $sampled of the $want threads have samples"
	else
		fail "threads ($how): $sampled of the $want threads have samples"
	fi
done
done_testing
