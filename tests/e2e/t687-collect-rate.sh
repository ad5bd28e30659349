#!/bin/sh
# SPDX-License-Identifier: MIT
# t687-collect-rate.sh - what a session's sampling rate really is on .NET 10
# (doc/format/diagnostics-ipc.md, "Sampling rate"): the runtime has one sampler for all
# sessions, so two concurrent sessions asking for 100 Hz and 1000 Hz (--rate) both get the
# same rounds, and nettrace-collect warns the one that asked for 100 Hz; the process-wide
# DOTNET_EventPipeThreadSamplingRate (milliseconds, read as hexadecimal, at startup) does
# set it, and the realized interval (inferred from the samples) is longer than declared.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
attach_need "$COLLECT" "$INFO"

serve_start 60 || { fail "the workload started"; done_testing; }
"$COLLECT" -p "$SERVE_PID" --duration 3s --rate 100 -o "$T/r100.nettrace" >/dev/null 2>"$T/r100.err" &
c1=$!
"$COLLECT" -p "$SERVE_PID" --duration 3s --rate 1000 -o "$T/r1000.nettrace" >/dev/null 2>"$T/r1000.err" &
c2=$!
wait "$c1"
rc1=$?
wait "$c2"
rc2=$?
serve_stop
is "$rc1 $rc2" "0 0" "two concurrent sessions with --rate 100 and --rate 1000"
"$INFO" "$T/r100.nettrace" >"$T/i100" 2>&1
"$INFO" "$T/r1000.nettrace" >"$T/i1000" 2>&1
a=$(inferred "$T/i100") b=$(inferred "$T/i1000")
diag "--rate 100: realized ${a} ms; --rate 1000: realized ${b} ms (one global sampler)"
awk -v a="$a" -v b="$b" 'BEGIN { r = a / b; exit !(a > 0 && r > 0.7 && r < 1.4) }' &&
	pass "both sessions got the same interval ($a vs $b ms)" ||
	fail "both sessions got the same interval ($a vs $b ms)"
grep -q "warning: asked for 100 Hz, the runtime sampled at" "$T/r100.err" &&
	pass "the 100 Hz session is told what it got" ||
	{ fail "the 100 Hz session is told what it got"; diag "$(cat "$T/r100.err")"; }

# the process-wide setting: 0x14 = 20 ms
serve_start 60 DOTNET_EventPipeThreadSamplingRate=14 || { fail "the workload started"; done_testing; }
run "$COLLECT" -p "$SERVE_PID" --duration 3s -o "$T/env20.nettrace"
serve_stop
is_rc 0 "a session of a process started with DOTNET_EventPipeThreadSamplingRate=14"
"$INFO" "$T/env20.nettrace" >"$T/ienv" 2>&1
d=$(declared "$T/ienv") i=$(inferred "$T/ienv")
diag "DOTNET_EventPipeThreadSamplingRate=14: declared ${d} ns, realized ${i} ms"
is "$d" 20000000 "the header declares 20 ms (the value is hexadecimal milliseconds)"
awk -v i="$i" 'BEGIN { exit !(i >= 19 && i < 80) }' &&
	pass "the realized interval is at least the declared one ($i ms)" ||
	fail "the realized interval is at least the declared one ($i ms)"
done_testing
