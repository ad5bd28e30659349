#!/bin/sh
# SPDX-License-Identifier: MIT
# t660-record-whole-stacks.sh - every sample's stack is whole: it reaches main,
# start_thread or clone (the outermost frames of a program's threads). nts-fib is built as
# most programs are (gcc -g -O2, no frame pointers): recursive fib spends much of its time
# in prologues and epilogues (where a saved register's slot is below the stack pointer),
# "signal" runs fib in a SIGALRM handler (the walk crosses the kernel's signal frame),
# "plt" calls libc through PLT stubs; "threads" runs fib on two threads. Recorded at 997 Hz
# (not a divisor of the timer tick); at most 0.5% of the samples may be truncated. Also
# the split workload (tests/sampler/nts-work, frame pointers, frameless leaves).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
FIB=$top_builddir/tests/sampler/nts-fib
need_tool "$FIB"

FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FOLD"
# Stacks by nettrace-fold (root first, "module!function" frames; it reads libc's own
# symbol table, where start_thread is), one line per sample.
stacks() {
	"$FOLD" --unit=samples --no-module "$1" |
		awk '{ w = $NF; sub(/ [0-9]+$/, ""); for (i = 0; i < w; i++) print }' >"$2"
}
WHOLE='(^|;)(main|start_thread|clone|clone3)(;|$)'

check_whole() {
	desc=$1
	stacks "$2" "$T/s"
	n=$(wc -l <"$T/s")
	t=$(grep -v -E -c "$WHOLE" "$T/s")
	if [ "$n" -ge 200 ] && [ $((t * 1000)) -le $((n * 5)) ]; then
		pass "$desc: $t of $n stacks truncated (<= 0.5%)"
	else
		fail "$desc: $t of $n stacks truncated (<= 0.5%, >= 200 samples)"
		diag "$(grep -v -E "$WHOLE" "$T/s" | sort | uniq -c | sort -rn | head -n 5)"
	fi
}

for mode in fib threads signal plt; do
	F=$T/$mode.nettrace
	record_q -F 997 -o "$F" -- "$FIB" "$mode" 1.5
	is_rc 0 "$mode: recorded"
	check_whole "$mode" "$F"
	case $mode in
	signal)
		# the handler's samples are there, and they reach main through the signal frame
		k=$(grep -c -E ';main;.*;on_alarm;(fib;)*fib$' "$T/s")
		if [ "$k" -ge 5 ]; then pass "signal: samples in the handler reach main ($k)"
		else fail "signal: samples in the handler reach main ($k)"; fi
		;;
	threads)
		k=$(grep -c -E '(^|;)start_thread;worker;(fib;)*fib$' "$T/s")
		if [ "$k" -ge 100 ]; then pass "threads: worker stacks reach start_thread ($k)"
		else fail "threads: worker stacks reach start_thread ($k)"; fi
		;;
	fib)
		# the epilogue case the old unwinder stopped at: a lone fib frame
		k=$(grep -c -x 'fib' "$T/s")
		is "$k" "0" "fib: no sample is a lone fib frame"
		;;
	esac
done

F=$T/split.nettrace
record_q -F 997 -o "$F" -- "$WORK" split 1.5
is_rc 0 "split: recorded"
check_whole "split" "$F"
done_testing
