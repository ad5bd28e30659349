#!/bin/sh
# SPDX-License-Identifier: MIT
# t602-dotnet-gc.sh - allocation with 20 induced collections; recorded by the runtime's own
# file session and by dotnet-trace (both see the process from its start), each trace reads
# whole, its managed frames resolve, and it holds one GCStart per collection the program
# counted (GC.CollectionCount(0): every collection counts in generation 0).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need_both

for how in file dotnet-trace; do
	tr=$T/gc-$how.nettrace
	dotnet_take "$how" gc "$tr" 20 || continue
	dotnet_events "$tr"
	is "$(dotnet_count "$tr" GCStart)" "$(truth gcs "$tr.truth")" \
		"gc ($how): GCStart events = collections the program counted ($(truth induced "$tr.truth") induced)"
	is "$(dotnet_count "$tr" GCEnd)" "$(truth gcs "$tr.truth")" "gc ($how): as many GCEnd"
done
done_testing
