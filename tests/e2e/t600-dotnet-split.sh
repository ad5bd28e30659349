#!/bin/sh
# SPDX-License-Identifier: MIT
# t600-dotnet-split.sh - a real .NET 10 runtime records the 70/30 workload with its own
# EventPipe file session; the trace reads with no error, the managed frames resolve and the
# samples split 70/30 between the two methods as the program's own clock says.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FOLD"
dotnet_workloads

tr=$T/split.nettrace
if dotnet_record split "$tr" 3; then
	pass "nt-workloads split ran under a file session"
else
	fail "nt-workloads split ran under a file session"; diag "$(cat "$tr.err")"
fi
share=$(truth a_share "$tr.truth")

run "$INFO" "$tr"
if [ "$rc" -eq 0 ] && grep -q '^Truncated: *no' "$T/out"; then
	pass "nettrace-info reads the .NET 10 trace whole"
else
	fail "nettrace-info reads the .NET 10 trace whole (exit $rc)"; diag "$(cat "$T/err")"
fi

run "$FOLD" --unit samples "$tr"
cp "$T/out" "$T/folded"
# Managed frames resolve: of all frames of managed stacks, how many stay unnamed?
awk '{ $NF = ""; n = split($0, f, ";"); for (i = 1; i <= n; i++) { tot++; if (f[i] ~ /^\?|0x[0-9a-f]+$/) bad++ } }
	END { printf "%d %d\n", tot, bad }' "$T/folded" >"$T/cov"
read -r tot bad <"$T/cov"
if [ "$tot" -gt 0 ] && [ $((bad * 100)) -le "$tot" ]; then
	pass "managed frames resolve ($bad of $tot unnamed)"
else
	fail "managed frames resolve ($bad of $tot unnamed)"
fi

# The split: samples under Spin70 vs Spin30, against the program's measured share.
awk -v want="$share" '
	/SplitA\.Spin70/ { a += $NF } /SplitB\.Spin30/ { b += $NF }
	END {
		n = a + b; p = a / n; sd = sqrt(want * (1 - want) / n)
		tol = 0.02 + 4 * sd; d = p - want; if (d < 0) d = -d
		printf "%s %.4f %.4f %.4f %d\n", (d <= tol ? "ok" : "bad"), p, want, tol, n }' \
	"$T/folded" >"$T/split"
read -r verdict got want tol n <"$T/split"
if [ "$verdict" = ok ]; then
	pass "70/30 split: $got of $n samples in Spin70, program measured $want (tolerance $tol)"
else
	fail "70/30 split: $got of $n samples in Spin70, program measured $want (tolerance $tol)"
fi
done_testing
