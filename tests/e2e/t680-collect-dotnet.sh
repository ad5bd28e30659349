#!/bin/sh
# SPDX-License-Identifier: MIT
# t680-collect-dotnet.sh - nettrace-collect attaches to a running .NET 10 workload (the 70/30
# split, serve mode) and records 3 s: the trace is whole, has samples, named frames and the
# rundown; the samples split 70/30 as the program's own clock says; TraceEvent reads the
# same events, samples, rundown methods and split; and the split and sampling rate agree
# with the runtime's own env-var file session of the same workload.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
attach_need "$COLLECT" "$INFO" "$FOLD"
if ! dotnet_build_project te-samples; then
	echo "Bail out! dotnet build of tests/dotnet/te-samples failed"
	exit 1
fi
TE=$DOTNET_BUILD/te-samples/out/te-samples

serve_start 60 || { fail "the workload started"; done_testing; }
tr=$T/c.nettrace
run "$COLLECT" -p "$SERVE_PID" --duration 3s -o "$tr"
is_rc 0 "nettrace-collect -p PID --duration 3s"
grep -q "process $SERVE_PID: .*serve 60 (.NET 10\." "$T/err" && pass "it names the process and its runtime (ProcessInfo2)" ||
	{ fail "it names the process and its runtime (ProcessInfo2)"; diag "$(cat "$T/err")"; }
cp "$T/err" "$T/collect.err"
serve_stop
share=$(truth a_share "$T/serve.out")

run "$INFO" "$tr"
cp "$T/out" "$T/info"
if [ "$rc" -eq 0 ] && grep -q '^Truncated: *no' "$T/info"; then
	pass "the trace is whole (the session was stopped, the stream ended)"
else
	fail "the trace is whole (exit $rc)"; diag "$(cat "$T/err" "$T/info")"
fi
samples=$(sed -n 's/^Samples: *\([0-9]*\).*/\1/p' "$T/info")
events=$(sed -n 's/^Events: *\([0-9]*\).*/\1/p' "$T/info")
methods=$(awk '$2 == 144 && $4 == "MethodDCEndVerbose" { s += $1 } END { print s + 0 }' "$T/info")
[ "${samples:-0}" -gt 1000 ] && pass "$samples samples in 3 s" || fail "samples in 3 s: ${samples:-none}"
[ "${methods:-0}" -gt 100 ] && pass "the rundown names $methods methods" || fail "rundown methods: ${methods:-none}"
grep -q "^Lost events: *0$" "$T/info" && pass "no lost events" || fail "no lost events"
grep -q "$samples samples, 0 lost events, $methods methods in the rundown" "$T/collect.err" &&
	pass "the summary counts what nettrace-info reads" ||
	{ fail "the summary counts what nettrace-info reads"; diag "$(cat "$T/collect.err")"; }

run "$FOLD" --unit samples "$tr"
cp "$T/out" "$T/folded"
split() {
	awk -v want="$share" '
		/SplitA\.Spin70/ { a += $NF } /SplitB\.Spin30/ { b += $NF }
		END {
			n = a + b; if (n == 0) { print "bad 0 0 0 0 0 0"; exit }
			p = a / n; sd = sqrt(want * (1 - want) / n)
			tol = 0.02 + 4 * sd; d = p - want; if (d < 0) d = -d
			printf "%s %.4f %.4f %.4f %d %d %d\n", (d <= tol ? "ok" : "bad"), p, want, tol, n, a, b }' "$1"
}
split "$T/folded" >"$T/split"
read -r verdict got want tol n a b <"$T/split"
if [ "$verdict" = ok ]; then
	pass "70/30 split: $got of $n samples in Spin70, program measured $want (tolerance $tol)"
else
	fail "70/30 split: $got of $n samples in Spin70, program measured $want (tolerance $tol)"
fi

# TraceEvent, the oracle, reads the attached trace the same way.
if "$TE" "$tr" >"$T/te" 2>"$T/te.err"; then
	pass "TraceEvent reads the attached trace"
else
	fail "TraceEvent reads the attached trace"; diag "$(cat "$T/te.err")"
fi
is "$(truth events "$T/te")" "$events" "TraceEvent counts the same events"
is "$(truth samples "$T/te")" "$samples" "TraceEvent counts the same samples"
is "$(truth methods "$T/te")" "$methods" "TraceEvent counts the same rundown methods"
is "$(truth spin70 "$T/te") $(truth spin30 "$T/te")" "$a $b" "TraceEvent resolves the same Spin70/Spin30 samples"

# The runtime's own file session (DOTNET_EnableEventPipe) of the same work: the split and
# the sampling interval agree.
env=$T/env.nettrace
if dotnet_record split "$env" 3; then
	pass "the env-var session ran"
else
	fail "the env-var session ran"; diag "$(cat "$env.err")"
fi
run "$FOLD" --unit samples "$env"
cp "$T/out" "$T/env.folded"
eshare=$(truth a_share "$env.truth")
share=$eshare split "$T/env.folded" >"$T/esplit"
read -r everdict egot ewant etol en ea eb <"$T/esplit"
awk -v p="$got" -v q="$egot" -v t1="$tol" -v t2="$etol" \
	'BEGIN { d = p - q; if (d < 0) d = -d; exit !(d <= t1 + t2) }' &&
	pass "the split agrees with the env-var session's ($got vs $egot, $everdict)" ||
	fail "the split agrees with the env-var session's ($got vs $egot)"
"$INFO" "$env" >"$T/env.info" 2>/dev/null
i1=$(sed -n 's/^Sampling rate: *inferred \([0-9.]*\) ms.*/\1/p' "$T/info")
i2=$(sed -n 's/^Sampling rate: *inferred \([0-9.]*\) ms.*/\1/p' "$T/env.info")
diag "realized sampling interval: attached ${i1} ms, env-var session ${i2} ms"
awk -v a="$i1" -v b="$i2" 'BEGIN { r = a / b; exit !(r > 0.5 && r < 2) }' &&
	pass "the realized interval is the env-var session's within a factor 2 ($i1 vs $i2 ms)" ||
	fail "the realized interval is the env-var session's within a factor 2 ($i1 vs $i2 ms)"
done_testing
