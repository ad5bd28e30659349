#!/bin/sh
# SPDX-License-Identifier: MIT
# t682-collect-exit.sh - the recorded process goes away during the session: exiting
# normally (the runtime ends the stream itself) and killed with SIGKILL (the stream just
# stops). nettrace-collect says so, keeps every complete event, and the trace reads.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
attach_need "$COLLECT" "$INFO"

# 1. a normal exit 2 s into the session
serve_start 2.5 || { fail "the workload started"; done_testing; }
run "$COLLECT" -p "$SERVE_PID" -o "$T/exit.nettrace"
is_rc 0 "nettrace-collect exits 0 when the process exits"
grep -q "the stream ended before the session was stopped" "$T/err" &&
	pass "it says the stream ended before the stop" ||
	{ fail "it says the stream ended before the stop"; diag "$(cat "$T/err")"; }
serve_stop
run "$INFO" "$T/exit.nettrace"
if [ "$rc" -eq 0 ] && grep -q '^Samples: *[1-9]' "$T/out"; then
	pass "the trace of the exited process reads, with samples"
else
	fail "the trace of the exited process reads, with samples"; diag "$(cat "$T/err" "$T/out")"
fi

# 2. SIGKILL 2 s into the session
serve_start 60 || { fail "the workload started"; done_testing; }
"$COLLECT" -p "$SERVE_PID" -o "$T/kill.nettrace" >"$T/out" 2>"$T/err" &
cpid=$!
sleep 2
serve_kill
wait "$cpid"
rc=$?
is_rc 0 "nettrace-collect exits 0 when the process is killed"
grep -q "the stream ended before the session was stopped" "$T/err" &&
	pass "it says the stream ended before the stop" ||
	{ fail "it says the stream ended before the stop"; diag "$(cat "$T/err")"; }
events=$(sed -n 's/.* in [0-9.]* s: \([0-9]*\) events.*/\1/p' "$T/err")
run "$INFO" "$T/kill.nettrace"
is_rc 0 "nettrace-info reads the trace of the killed process"
got=$(sed -n 's/^Events: *\([0-9]*\).*/\1/p' "$T/out")
is "$got" "$events" "nettrace-info reads the events nettrace-collect counted ($events)"
if grep -q '^Truncated: *yes' "$T/out"; then
	pass "the cut is reported"
else
	fail "the cut is reported"; diag "$(cat "$T/out")"
fi
done_testing
