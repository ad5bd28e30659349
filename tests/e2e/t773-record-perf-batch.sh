#!/bin/sh
# SPDX-License-Identifier: MIT
# t773-record-perf-batch.sh - the perf_events backend's batches of rounds
# (doc/sampler-design.md §5; NETTRACE_PERF_BATCH=1, experimental): with every thread on a
# perf_events ring, the sampler thread wakes once every 8 rounds and answers the rounds
# since from the rings; a thread that blocks and wakes between two wake-ups stops the
# batches.
#
# The oracle of the wake-ups is the kernel's: the sampler thread's context switches
# (voluntary + involuntary, /proc/PID/task/TID/status) over one second of the run.
#   - two busy fib threads at 997 Hz: at most a quarter of the rounds wake the sampler
#     (about an eighth, plus the flushes), and still one sample per thread per round
#     (the realized rate within 1%), each thread's CpuTimeNs never stepping back, whole
#     stacks (<= 0.5% truncated, t660);
#   - nts-work sleep (5 ms busy, 5 ms in clock_nanosleep): its blocks end between
#     wake-ups, so the sampler wakes every round again (at least half of the rounds in
#     that second); every blocked sample is in the sleep call and every busy_phase sample
#     running (t504's checks), and the rounds dropped for it (the blocked stack of a
#     round of a batch whose block has ended is nowhere) are at most 1% of the samples.
# Skips where perf_events are not permitted (t771 tests that fallback).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
FIB=$top_builddir/tests/sampler/nts-fib
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FIB"
need_tool "$FOLD"

# run_env OUT CMD...: CMD under the environment session at 997 Hz on the perf backend,
# in the background ($pid); its status line goes to $T/status
run_env() {
	out=$1
	shift
	env LD_PRELOAD="$SAMPLER_LIB" NETTRACE_OUTPUT="$out" NETTRACE_FREQUENCY=997 \
		NETTRACE_BACKEND=perf NETTRACE_PERF_BATCH=1 NETTRACE_STATUS_FD=9 "$@" \
		>/dev/null 2>"$T/st.err" \
		9>"$T/status" &
	pid=$!
}
st() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$T/status" | tail -n 1; }

run_env "$T/probe.nettrace" "$FIB" fib 0.2
wait "$pid"
if grep -q 'perf_events backend cannot be used' "$T/status"; then
	echo "1..0 # SKIP perf_events are not permitted here ($(sed 's/^error //' "$T/status"))"
	exit 0
fi

# switches: the sampler thread's context switches so far (the process $pid)
switches() {
	for d in /proc/"$pid"/task/*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = nts-sampler ] || continue
		awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ { n += $2 } END { print n + 0 }' \
			"$d/status"
		return
	done
	echo -1
}
# wakeups CMD...: runs CMD, prints the sampler thread's context switches from 0.5 s to
# 1.5 s into the run (-1: not found)
wakeups() {
	run_env "$T/w.nettrace" "$@"
	sleep 0.5
	w0=$(switches)
	sleep 1
	w1=$(switches)
	wait "$pid"
	if [ "$w0" -ge 0 ] && [ "$w1" -ge 0 ]; then echo $((w1 - w0)); else echo -1; fi
}

# --- busy threads: batches
w=$(wakeups "$FIB" threads 2.5)
if [ "$w" -ge 0 ] && [ "$w" -le $((997 / 4)) ]; then
	pass "busy threads: the sampler thread switched $w times in 1 s at 997 Hz (<= 249)"
else
	fail "busy threads: the sampler thread switched $w times in 1 s at 997 Hz (<= 249)"
	diag "$(cat "$T/status")"
fi
hz=$(summary_get "$T/w.nettrace" stats_hz)
if awk -v h="$hz" 'BEGIN { exit !(h >= 997 * 0.99 && h <= 997 * 1.01) }'; then
	pass "busy threads: realized rate $hz Hz within 1% of 997"
else
	fail "busy threads: realized rate $hz Hz within 1% of 997"
fi
samples "$T/w.nettrace" "$T/s"
back=$(awk '{ if (($1 in c) && $3 < c[$1]) n++; c[$1] = $3 } END { print n + 0 }' "$T/s")
is "$back" 0 "busy threads: CpuTimeNs never steps back within a thread"
# symbolised by nettrace-fold (libc's frames too), as t770 does
"$FOLD" --unit=samples --no-module "$T/w.nettrace" |
	awk '{ w = $NF; sub(/ [0-9]+$/, ""); for (i = 0; i < w; i++) print }' >"$T/f"
n=$(wc -l <"$T/f")
t=$(grep -v -E -c '(^|;)(main|start_thread|clone|clone3)(;|$)' "$T/f")
if [ "$n" -ge 1000 ] && [ $((t * 1000)) -le $((n * 5)) ]; then
	pass "busy threads: $t of $n stacks truncated (<= 0.5%)"
else
	fail "busy threads: $t of $n stacks truncated (<= 0.5%, >= 1000 samples)"
fi
p=$(st perf) s=$(st samples)
if [ "${p:-0}" -ge $(( ${s:-0} / 3 )) ] && [ "${p:-0}" -gt 0 ]; then
	pass "busy threads: $p of $s samples from perf_events"
else
	fail "busy threads: $p of $s samples from perf_events (>= a third)"
fi

# --- a thread that blocks and wakes between wake-ups: no batches
w=$(wakeups "$WORK" sleep 2.5)
if [ "$w" -ge $((997 / 2)) ]; then
	pass "sleep: the sampler thread switched $w times in 1 s at 997 Hz (>= 498: every round)"
else
	fail "sleep: the sampler thread switched $w times in 1 s at 997 Hz (>= 498: every round)"
	diag "$(cat "$T/status")"
fi
samples "$T/w.nettrace" "$T/s"
bad=$(awk '$2 == 2 && $6 !~ /(^|;)sleep_phase;/' "$T/s" | wc -l)
is "$bad" 0 "sleep: no blocked sample outside the sleep call"
blocked=$(awk '$2 == 2 && $6 ~ /^clock_nanosleep;sleep_phase;/' "$T/s" | wc -l)
if [ "$blocked" -gt 0 ]; then
	pass "sleep: blocked samples are in clock_nanosleep, called by sleep_phase ($blocked)"
else
	fail "sleep: blocked samples are in clock_nanosleep, called by sleep_phase"
fi
busy_running=$(awk '$6 ~ /(^|;)busy_phase;/ { n++; if ($2 == 1) k++ }
	END { print (n && k == n) }' "$T/s")
is "$busy_running" 1 "sleep: every sample in busy_phase is running"
d=$(st dropped) s=$(st samples)
if [ -n "$d" ] && [ "${s:-0}" -gt 0 ] && [ $((d * 100)) -le "$s" ]; then
	pass "sleep: $d rounds dropped of $s samples (<= 1%)"
else
	fail "sleep: ${d:-?} rounds dropped of ${s:-0} samples (<= 1%)"
	diag "$(cat "$T/status")"
fi
done_testing
