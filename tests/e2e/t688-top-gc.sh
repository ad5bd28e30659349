#!/bin/sh
# SPDX-License-Identifier: MIT
# t688-top-gc.sh - GC pauses in nettrace-top: a workload that induces collections in a
# loop is recorded by nettrace-collect; nettrace-top over the whole trace counts one pause
# per collection the runtime reports (its GCEnd events, counted by nettrace-info), the
# sampler's own suspensions (reason 0) are not pauses, and the GC state shows in the states.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
attach_need "$COLLECT" "$TOP" "$INFO"

"$NT_WORKLOADS" gc 100000 >"$T/gc.out" 2>&1 &
gpid=$!
i=0
while ! grep -q '^pid=' "$T/gc.out" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.3
run "$COLLECT" -q -p "$gpid" --duration 2s -o "$T/gc.nettrace"
kill "$gpid"
wait "$gpid" 2>/dev/null
is_rc 0 "nettrace-collect of the GC workload"
"$INFO" "$T/gc.nettrace" >"$T/info" 2>&1
gcs=$(awk '$2 == 2 && $4 == "GCEnd" { s += $1 } END { print s + 0 }' "$T/info")
susp=$(awk '$2 == 9 && $4 == "GCSuspendEEBegin" { s += $1 } END { print s + 0 }' "$T/info")
run "$TOP" --once --window 600 "$T/gc.nettrace"
is_rc 0 "nettrace-top --once over the trace"
pauses=$(sed -n 's/^GC: \([0-9]*\) pauses.*/\1/p' "$T/out")
diag "$gcs collections (GCEnd), $susp suspensions, nettrace-top: $pauses pauses"
[ "$gcs" -gt 10 ] && pass "the trace has $gcs collections" || fail "the trace has collections ($gcs)"
awk -v p="$pauses" -v g="$gcs" 'BEGIN { d = p - g; if (d < 0) d = -d; exit !(d <= 1) }' &&
	pass "one pause per collection ($pauses for $gcs)" ||
	{ fail "one pause per collection ($pauses for $gcs)"; diag "$(head -5 "$T/out")"; }
[ "$susp" -gt "$pauses" ] && pass "the sampler's suspensions are not counted ($susp suspensions)" ||
	fail "the sampler's suspensions are not counted ($susp suspensions, $pauses pauses)"
grep -q '^states: .*gc [0-9]' "$T/out" && pass "the gc state is shown" ||
	{ fail "the gc state is shown"; diag "$(head -5 "$T/out")"; }
awk '/^GC:/ { for (i = 1; i <= NF; i++) if ($i == "longest") { v = $(i + 1) + 0 } } END { exit !(v > 0) }' "$T/out" &&
	pass "the longest pause is measured" || fail "the longest pause is measured"
done_testing
