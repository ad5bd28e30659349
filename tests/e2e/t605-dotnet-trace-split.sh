#!/bin/sh
# SPDX-License-Identifier: MIT
# t605-dotnet-trace-split.sh - t600 through dotnet-trace: `dotnet-trace collect -- CMD`
# records the 70/30 workload over the diagnostic port; the trace reads whole, its managed
# frames resolve and the samples split as the program's own clock says.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need_both

tr=$T/split.nettrace
if dotnet_take dotnet-trace split "$tr" 3; then
	dotnet_split "$tr.folded" "$(truth a_share "$tr.truth")"
fi
done_testing
