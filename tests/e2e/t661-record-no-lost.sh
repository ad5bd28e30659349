#!/bin/sh
# SPDX-License-Identifier: MIT
# t661-record-no-lost.sh - no recording is lost quietly: a program that ends with _exit()
# or _Exit() (shells, forked children), or whose main thread ends with pthread_exit before
# its last thread, leaves a complete file; a 0.17 s program keeps its samples; an
# unwritable -o is refused before CMD runs; nettrace-record exits with CMD's status (its
# exit code, 128 + the signal that killed it); the summary says "N samples, file
# complete"; child processes that are not recorded are counted, and --follow-children
# records each into OUTPUT with its pid before ".nettrace". A raw exit_group system call
# cannot be caught: that is reported as an unfinished trace (exit 3), never as complete.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
FIB=$top_builddir/tests/sampler/nts-fib
need_tool "$FIB"

# complete FILE DESC MIN: the trace is finished and has at least MIN samples
complete() {
	e=$(summary_get "$1" end_tag)
	n=$(summary_get "$1" samples)
	if [ "$e" = 1 ] && [ "${n:-0}" -ge "$3" ]; then
		pass "$2: file complete, $n samples (>= $3)"
	else
		fail "$2: file complete, ${n:-0} samples (>= $3; end tag '$e')"
		diag "$(cat "$T/rec.err")"
	fi
}

# summary FILE DESC: the last line says how many samples and that the file is complete
summary() {
	n=$(summary_get "$1" samples)
	is "$(tail -n 1 "$T/rec.err" | sed 's/ (.*//')" \
		"nettrace-record: $n samples, file complete: $1" "$2: the summary line"
}

for how in _exit _Exit mainexit; do
	F=$T/$how.nettrace
	"$RECORD" -F 997 -o "$F" -- "$FIB" fib 0.4 "$how" >"$T/rec.out" 2>"$T/rec.err"
	rc=$?
	is_rc 0 "$how: exit 0"
	complete "$F" "$how" 200
	summary "$F" "$how"
done

# a raw exit_group skips everything: not complete, and said so
F=$T/exit_group.nettrace
record_q -F 997 -o "$F" -- "$FIB" fib 0.4 exit_group
is_rc 3 "exit_group: exit 3"
if grep -q "the trace was not finalized" "$T/rec.err"; then
	pass "exit_group: says the trace is not finalized"
else
	fail "exit_group: says the trace is not finalized"
	diag "$(cat "$T/rec.err")"
fi

# a short program keeps its samples (0.17 s at 997 Hz: about 170)
F=$T/short.nettrace
record_q -F 997 -o "$F" -- "$FIB" fib 0.17
is_rc 0 "0.17 s: exit 0"
complete "$F" "0.17 s" 100

# an unwritable output is refused before CMD runs
run "$RECORD" -o "$T/no-such-dir/x.nettrace" -- sh -c "touch '$T/ran'"
is_rc 3 "unwritable -o: exit 3"
is "$(cat "$T/err")" \
	"nettrace-record: $T/no-such-dir/x.nettrace: cannot write the trace: No such file or directory" \
	"unwritable -o: message"
if [ -e "$T/ran" ]; then fail "unwritable -o: CMD did not run"; else pass "unwritable -o: CMD did not run"; fi

# CMD's status: its exit code, 128 + signal; the trace is complete either way
F=$T/status.nettrace
record_q -o "$F" -- sh -c 'exit 7'
is_rc 7 "sh -c 'exit 7': exit 7"
complete "$F" "sh -c 'exit 7'" 0
record_q -F 500 -o "$F" -- "$FIB" fib 0.3 sigterm
is_rc 143 "a command killed by SIGTERM: exit 143"
complete "$F" "killed by SIGTERM" 0

# a shell's child: counted when not recorded, recorded into its own file with
# --follow-children (fork and exec), as forked children that do not exec (nts-work fork)
F=$T/sh.nettrace
"$RECORD" -F 997 -o "$F" -- sh -c "'$FIB' fib 0.4 >/dev/null; exit 0" >"$T/rec.out" 2>"$T/rec.err"
rc=$?
is_rc 0 "sh -c: exit 0"
is "$(grep -c 'note: 1 child process was not recorded (--follow-children records them)' "$T/rec.err")" \
	"1" "sh -c: the child not recorded is counted"
rm -f "$T"/follow*.nettrace
F=$T/follow.nettrace
"$RECORD" --follow-children -F 997 -o "$F" -- sh -c "'$FIB' fib 0.4 >/dev/null; exit 0" \
	>"$T/rec.out" 2>"$T/rec.err"
rc=$?
is_rc 0 "--follow-children: exit 0"
cpid=$(sed -n 's/^nettrace-record: child \([0-9]*\): .*file complete.*/\1/p' "$T/rec.err" | head -n 1)
C=$T/follow.$cpid.nettrace
if [ -n "$cpid" ] && [ -f "$C" ]; then
	pass "--follow-children: the child's file is $C"
	complete "$C" "--follow-children: the child" 200
	samples "$C" "$T/cs"
	k=$(awk '$6 ~ /^fib;/' "$T/cs" | wc -l)
	if [ "$k" -ge 100 ]; then pass "--follow-children: the child's samples are in fib ($k)"
	else fail "--follow-children: the child's samples are in fib ($k)"; fi
else
	fail "--follow-children: the child's file"
	diag "$(cat "$T/rec.err")"
fi
complete "$F" "--follow-children: the shell" 0
rm -f "$T"/fork*.nettrace
F=$T/fork.nettrace
"$RECORD" --follow-children -F 500 -o "$F" -- "$WORK" fork 0.5 >"$T/rec.out" 2>"$T/rec.err"
rc=$?
is_rc 0 "forked children: exit 0"
nc=$(grep -c '^nettrace-record: child [0-9]*: [0-9]* samples, file complete' "$T/rec.err")
nf=0
for C in "$T"/fork.[0-9]*.nettrace; do
	[ -f "$C" ] && [ "$(summary_get "$C" end_tag)" = 1 ] && nf=$((nf + 1))
done
if [ "$nc" -ge 3 ] && [ "$nf" -eq "$nc" ]; then
	pass "forked children: each recorded into a complete file ($nc)"
else
	fail "forked children: each recorded into a complete file ($nc reported, $nf complete)"
	diag "$(cat "$T/rec.err")"
fi
done_testing
