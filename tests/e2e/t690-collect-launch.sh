#!/bin/sh
# SPDX-License-Identifier: MIT
# t690-collect-launch.sh - nettrace-collect -- CMD: starts a .NET program with --rate set
# in its environment (DOTNET_EventPipeThreadSamplingRate, the only per-process rate .NET 10
# has) and records it until it exits. The header declares the interval asked, the samples
# show the realized one (longer: the runtime sleeps the interval after each round), the
# split still matches the program's clock; two programs launched at once at 50 Hz and
# 200 Hz each get their own rate. A command without a runtime exits 3.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
attach_need "$COLLECT" "$INFO" "$FOLD"

"$COLLECT" --rate 50 -o "$T/r50.nettrace" -- "$NT_WORKLOADS" split 4 >"$T/r50.truth" 2>"$T/r50.err" &
c1=$!
"$COLLECT" --rate 200 -o "$T/r200.nettrace" -- "$NT_WORKLOADS" split 4 >"$T/r200.truth" 2>"$T/r200.err" &
c2=$!
wait "$c1"
rc1=$?
wait "$c2"
rc2=$?
is "$rc1 $rc2" "0 0" "nettrace-collect --rate 50 / --rate 200 -- nt-workloads split 4"
grep -q "the command exited with status 0" "$T/r50.err" && pass "it reports how the command ended" ||
	{ fail "it reports how the command ended"; diag "$(cat "$T/r50.err")"; }
for hz in 50 200; do
	"$INFO" "$T/r$hz.nettrace" >"$T/i$hz" 2>&1
	d=$(declared "$T/i$hz") i=$(inferred "$T/i$hz")
	want=$((1000000000 / hz))
	diag "--rate $hz: declared $d ns, realized $i ms"
	is "$d" "$want" "--rate $hz: the header declares $((want / 1000000)) ms"
	awk -v i="$i" -v w="$want" 'BEGIN { exit !(i * 1e6 >= 0.95 * w && i * 1e6 < 4 * w) }' &&
		pass "--rate $hz: realized $i ms, at least the declared interval" ||
		fail "--rate $hz: realized $i ms, at least the declared interval"
done
awk -v a="$(inferred "$T/i50")" -v b="$(inferred "$T/i200")" 'BEGIN { exit !(a > 1.5 * b) }' &&
	pass "the two programs got different rates" || fail "the two programs got different rates"

run "$FOLD" --unit samples "$T/r200.nettrace"
share=$(truth a_share "$T/r200.truth")
awk -v want="$share" '
	/SplitA\.Spin70/ { a += $NF } /SplitB\.Spin30/ { b += $NF }
	END { n = a + b; p = n ? a / n : 0; sd = sqrt(want * (1 - want) / (n ? n : 1))
		tol = 0.02 + 4 * sd; d = p - want; if (d < 0) d = -d
		printf "%s %.4f %.4f %.4f %d\n", (n && d <= tol ? "ok" : "bad"), p, want, tol, n }' \
	"$T/out" >"$T/split"
read -r verdict got want tol n <"$T/split"
[ "$verdict" = ok ] && pass "split at 200 Hz: $got of $n samples, program $want (tolerance $tol)" ||
	fail "split at 200 Hz: $got of $n samples, program $want (tolerance $tol)"

run "$COLLECT" -o "$T/none.nettrace" -- true
is_rc 3 "a command without a .NET runtime: exit 3"
grep -q "ended before its runtime listened" "$T/err" && pass "it says so" ||
	{ fail "it says so"; diag "$(cat "$T/err")"; }
done_testing
