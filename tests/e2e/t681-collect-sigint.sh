#!/bin/sh
# SPDX-License-Identifier: MIT
# t681-collect-sigint.sh - SIGINT (Ctrl-C) stops a nettrace-collect session cleanly: the
# session is stopped, the rundown arrives, the file ends with its end tag, the exit code
# is 0, and it all takes little time after the signal. "-o -" streams the same to stdout.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
attach_need "$COLLECT" "$INFO"

serve_start 60 || { fail "the workload started"; done_testing; }
tr=$T/int.nettrace
"$COLLECT" -p "$SERVE_PID" -o "$tr" >"$T/out" 2>"$T/err" &
cpid=$!
sleep 2
t0=$(date +%s.%N)
kill -INT "$cpid"
wait "$cpid"
rc=$?
took=$(secs_since "$t0")
is_rc 0 "nettrace-collect exits 0 after SIGINT"
awk -v s="$took" 'BEGIN { exit !(s < 10) }' && pass "it finished ${took} s after the signal" ||
	fail "it finished ${took} s after the signal"
run "$INFO" "$tr"
if [ "$rc" -eq 0 ] && grep -q '^Truncated: *no' "$T/out"; then
	pass "the trace is whole after SIGINT"
else
	fail "the trace is whole after SIGINT"; diag "$(cat "$T/err" "$T/out")"
fi
grep -q "MethodDCEndVerbose" "$T/out" && pass "the rundown arrived" || fail "the rundown arrived"

# to standard output, stopped by --duration
"$COLLECT" -q -p "$SERVE_PID" --duration 1s -o - >"$T/stdout.nettrace" 2>"$T/err2"
rc=$?
is "$rc" 0 "-o - exits 0"
is_empty "$T/err2" "-q prints nothing"
run "$INFO" "$T/stdout.nettrace"
if [ "$rc" -eq 0 ] && grep -q '^Truncated: *no' "$T/out" && grep -q '^Samples: *[1-9]' "$T/out"; then
	pass "the trace written to standard output is whole and has samples"
else
	fail "the trace written to standard output is whole and has samples"; diag "$(cat "$T/out")"
fi
serve_stop
done_testing
