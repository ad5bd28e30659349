#!/bin/sh
# SPDX-License-Identifier: MIT
# t603-dotnet-exceptions.sh - a loop throws and catches 5000 exceptions; recorded by the
# runtime's own file session and by dotnet-trace, each trace reads whole, its managed
# frames resolve, and it holds one ExceptionThrown per exception the program saw thrown
# (its FirstChanceException count) and caught. 5000, not fewer: the run must outweigh the
# runtime's start, where a rare Managed sample ends in a stub no method event covers (one
# unnamed leaf in ~150 frames of a 1000-exception run broke the 1% bound).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need_both

for how in file dotnet-trace; do
	tr=$T/exc-$how.nettrace
	dotnet_take "$how" exceptions "$tr" 5000 || continue
	dotnet_events "$tr"
	thrown=$(dotnet_count "$tr" ExceptionThrown)
	is "$thrown" "$(truth first_chance "$tr.truth")" \
		"exceptions ($how): ExceptionThrown events = first-chance exceptions the program saw"
	is "$thrown" "$(truth exceptions "$tr.truth")" "exceptions ($how): = exceptions it caught"
done
done_testing
