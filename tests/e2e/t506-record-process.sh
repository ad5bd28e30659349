#!/bin/sh
# SPDX-License-Identifier: MIT
# t506-record-process.sh - what a process does to its sampler: threads created and
# exiting during sampling, fork (the child does not inherit the sampler and does not
# touch the file), exec (the new image records again: the last image wins; a program
# that execs while it is being sampled survives it), SIGINT to nettrace-record (the file
# is finalized, the command is stopped).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"

# ---- thread churn
F=$T/churn.nettrace
record_q -F 1000 -o "$F" -- "$WORK" churn 1.5 8
is_rc 0 "threads created and exiting continuously"
made=$(sed -n 's/^threads //p' "$T/rec.out")
is "$(summary_get "$F" end_tag)" "1" "churn: the trace is finished"
nt=$(summary_get "$F" threads)
if [ "${nt:-0}" -ge 20 ]; then
	pass "churn: $nt threads sampled (of $made created)"
else
	fail "churn: $nt threads sampled (of $made created)"
fi
samples "$F" "$T/s"
# a thread just created or exiting is sampled in libc's thread start or exit code
user=$(awk '$6 ~ /(^|;)short_thread;/' "$T/s" | wc -l)
if [ "$user" -gt 0 ]; then pass "churn: short-lived threads are sampled in their function ($user)"
else fail "churn: short-lived threads are sampled in their function"; fi
deep=$(awk 'split($6, f, ";") >= 2' "$T/s" | wc -l)
all=$(wc -l <"$T/s")
if [ $((deep * 100)) -ge $((all * 95)) ]; then
	pass "churn: stacks are unwound past the leaf ($deep of $all)"
else
	fail "churn: stacks are unwound past the leaf ($deep of $all)"
	diag "$(awk 'split($6, f, ";") < 2 { print $6 }' "$T/s" | sort | uniq -c | sort -rn | head -n 5)"
fi

# ---- fork: children run leaf_b only; the parent's file must not contain them
F=$T/fork.nettrace
record_q -F 500 -o "$F" -- "$WORK" fork 0.6
is_rc 0 "a program that forks"
is "$(summary_get "$F" end_tag)" "1" "fork: the parent's trace is finished"
samples "$F" "$T/s"
kids=$(awk '$6 ~ /^leaf_b;/' "$T/s" | wc -l)
is "$kids" "0" "fork: no sample of a child"
mine=$(awk '$6 ~ /^leaf_a;caller_a;run_fork;/' "$T/s" | wc -l)
if [ "$mine" -gt 0 ]; then pass "fork: the parent is sampled ($mine)"; else fail "fork: the parent is sampled"; fi

# ---- fork + exec of another recording-capable program: NETTRACE_PID keeps it out
F=$T/forkexec.nettrace
record_q -F 500 -o "$F" -- "$WORK" fork 0.6 exec
is_rc 0 "a program whose children exec"
is "$(summary_get "$F" end_tag)" "1" "fork+exec: the parent's trace is finished"
samples "$F" "$T/s"
is "$(awk '$6 ~ /run_split/' "$T/s" | wc -l)" "0" "fork+exec: the children did not write the file"

# ---- exec in the recorded process itself: the last image wins
F=$T/exec.nettrace
record_q -F 500 -o "$F" -- sh -c "exec '$WORK' split 0.3"
is_rc 0 "a shell that execs the program"
case $(summary_get "$F" main_module) in
*/nts-work) pass "exec: the trace is the exec'ed program's" ;;
*) fail "exec: the trace is the exec'ed program's ($(summary_get "$F" main_module))" ;;
esac
is "$(summary_get "$F" end_tag)" "1" "exec: the trace is finished"

# ---- exec while being sampled: 30 generations, each busy until it execs the next; a
# sampling signal left pending across execve would kill the new image (its handler is
# reset to the default action), which the exec interposers prevent
F=$T/execloop.nettrace
record_q -F 1000 -o "$F" -- "$WORK" execloop 0.02 30
is_rc 0 "exec while sampled at 1 kHz, 30 times: the program survives"
is "$(cat "$T/rec.out")" "generations done" "exec while sampled: every generation ran"
[ "$rc" = 0 ] || diag "$(cat "$T/rec.err")"
is "$(summary_get "$F" end_tag)" "1" "exec while sampled: the last image's trace is finished"

# ---- SIGINT to nettrace-record: stop, finalize, and the command goes
F=$T/int.nettrace
start=$(date +%s)
# a background job of a script starts with SIGINT ignored, and CMD would inherit that
if env --default-signal=INT true 2>/dev/null; then
	dflt="env --default-signal=INT"
else
	dflt=""
fi
$dflt "$RECORD" -F 200 -o "$F" -- "$WORK" split 60 >/dev/null 2>"$T/int.err" &
rpid=$!
sleep 1
kill -INT "$rpid"
wait "$rpid"
irc=$?
end=$(date +%s)
is "$irc" "130" "SIGINT: exit 130 (CMD died of SIGINT, the status passed on)"
is "$(summary_get "$F" end_tag):$(summary_get "$F" truncated)" "1:0" "SIGINT: the trace is finalized"
if [ $((end - start)) -lt 30 ]; then
	pass "SIGINT: the command was stopped ($((end - start)) s)"
else
	fail "SIGINT: the command was stopped ($((end - start)) s)"
fi
if [ -n "$dflt" ]; then
	if grep -q "killed by signal 2" "$T/int.err"; then
		pass "SIGINT: the command died of the signal it was passed"
	else
		fail "SIGINT: the command died of the signal it was passed"
		diag "$(cat "$T/int.err")"
	fi
else
	skip "SIGINT: the command died of the signal it was passed" "env --default-signal missing"
fi
done_testing
