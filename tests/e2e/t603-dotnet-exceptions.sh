#!/bin/sh
# SPDX-License-Identifier: MIT
# t603-dotnet-exceptions.sh - a loop throws and catches 1000 exceptions; recorded by the
# runtime's own file session and by dotnet-trace, each trace reads whole, its managed
# frames resolve, and it holds one ExceptionThrown per exception the program saw thrown
# (its FirstChanceException count) and caught.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
dotnet_workloads
dotnet_trace_tool

for how in file dotnet-trace; do
	tr=$T/exc-$how.nettrace
	dotnet_run "$how" exceptions "$tr" 1000 || continue
	dotnet_check_trace "$tr" "exceptions ($how)"
	dotnet_events "$tr"
	thrown=$(dotnet_count "$tr" ExceptionThrown)
	is "$thrown" "$(truth first_chance "$tr.truth")" \
		"exceptions ($how): ExceptionThrown events = first-chance exceptions the program saw"
	is "$thrown" "$(truth exceptions "$tr.truth")" "exceptions ($how): = exceptions it caught"
done
done_testing
