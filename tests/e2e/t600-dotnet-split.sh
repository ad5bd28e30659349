#!/bin/sh
# SPDX-License-Identifier: MIT
# t600-dotnet-split.sh - a real .NET 10 runtime records the 70/30 workload with its own
# EventPipe file session; the trace reads with no error, the managed frames resolve and the
# samples split 70/30 between the two methods as the program's own clock says.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
need_tool "$top_builddir/tools/nettrace-fold"
dotnet_workloads

tr=$T/split.nettrace
if dotnet_run file split "$tr" 3; then
	dotnet_check_trace "$tr" "split (file)"
	dotnet_split "$tr.folded" "$(truth a_share "$tr.truth")"
fi
done_testing
