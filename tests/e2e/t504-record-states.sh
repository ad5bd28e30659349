#!/bin/sh
# SPDX-License-Identifier: MIT
# t504-record-states.sh - wall time against CPU time (doc/sampler-design.md §7 test 4).
#
# nts-work sleep alternates 5 ms of work (busy_phase) and 5 ms in clock_nanosleep
# (sleep_phase), and measures the wall-time share of sleep_phase (near 50%; more on a busy
# machine, where waking up takes time). The samples whose stack is in sleep_phase must
# match that share within delta 0.03 + 4 sigma: the sampler samples every thread on the
# wall clock, blocked or not. (delta 0.03, plus the share of rounds the sampler took late:
# a sampler thread without real-time priority on a loaded machine competes for a CPU with
# the workload, more when the workload is busy, so its late rounds are not independent of
# the workload's phase; and the samples of a thread that waits come in clusters, so the
# bound uses their effective number; lib-record.sh.) Their State tells which of them were
# blocked: a sample in busy_phase is never "blocked" (2), and the blocked ones are in the
# sleep call. The
# thread's CpuTimeNs must account for its CPU share (measured by the program) within
# 10% (Go's TestCPUProfileMultithreadMagnitude bound).
#
# nts-work lock: the main thread (lock_waiter) waits for a mutex that another thread holds
# 4 ms at a time. Every blocked sample of the two loops must be in pthread_mutex_lock,
# the frame the category rules call "lock", and the waiter must be blocked there in a
# tenth of its samples at least (on an idle machine, nearly all: a busy one preempts it
# while it holds the lock, and then the holder waits).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"

for secs in 2 4; do
	F=$T/sleep.nettrace
	record_q -F 1000 -o "$F" -- "$WORK" sleep "$secs"
	truth=$(sed -n 's/^truth sleep_wall=\([0-9.]*\).*/\1/p' "$T/rec.out")
	cpu_share=$(sed -n 's/.*cpu_share=//p' "$T/rec.out")
	samples "$F" "$T/s"
	read -r k n ne <<EOT
$(wall_share "$T/s" '(^|;)sleep_phase;' '.')
EOT
	d=$(late_delta "$F" 0.03)
	res=$(within "${truth:-0.5}" "$n" "$d" "$k" "$ne") && break
	diag "sleep, $secs s: $res; running once more, twice as long"
done
is_rc 0 "recorded nts-work sleep"
if within "${truth:-0.5}" "$n" "$d" "$k" "$ne" >/dev/null; then
	pass "samples in sleep_phase match its wall-time share: $res"
else
	fail "samples in sleep_phase match its wall-time share: $res"
fi
bad=$(awk '$2 == 2 && $6 !~ /(^|;)sleep_phase;/' "$T/s" | wc -l)
is "$bad" "0" "no blocked sample outside the sleep call"
blocked=$(awk '$2 == 2 && $6 ~ /^clock_nanosleep;sleep_phase;/' "$T/s" | wc -l)
if [ "$blocked" -gt 0 ]; then
	pass "blocked samples are in clock_nanosleep, called by sleep_phase ($blocked)"
else
	fail "blocked samples are in clock_nanosleep, called by sleep_phase"
fi
busy_running=$(awk '$6 ~ /(^|;)busy_phase;/ { n++; if ($2 == 1) k++ } END { print (n && k == n) }' "$T/s")
is "$busy_running" "1" "every sample in busy_phase is running"
# CPU time: last minus first CpuTimeNs over last minus first timestamp
awk -v want="${cpu_share:-0}" 'NR == 1 { c0 = $3; t0 = $4 } { c1 = $3; t1 = $4 }
	END { got = (c1 - c0) / (t1 - t0); printf "cpu share %.3f, measured %.3f\n", got, want;
	      exit !(got >= want * 0.9 - 0.01 && got <= want * 1.1 + 0.01) }' "$T/s" >"$T/cpu"
if [ $? = 0 ]; then pass "CpuTimeNs follows the thread's CPU: $(cat "$T/cpu")"; else
	fail "CpuTimeNs follows the thread's CPU: $(cat "$T/cpu")"; fi

# ---- a lock-contended thread
F=$T/lock.nettrace
record_q -F 500 -o "$F" -- "$WORK" lock 1.5
is_rc 0 "recorded nts-work lock"
samples "$F" "$T/s"
main=$(awk '$6 ~ /(^|;)lock_waiter;run_lock;/ { print $1; exit }' "$T/s")
awk -v t="$main" '$1 == t { n++; if ($2 == 2 && $6 ~ /(^|;)(__)?pthread_mutex_lock;lock_waiter;/) k++ }
	END { printf "%d %d\n", k, n }' "$T/s" >"$T/c"
read -r k n <"$T/c"
if [ "$n" -gt 0 ] && [ $((k * 10)) -ge "$n" ]; then
	pass "the waiting thread is blocked in pthread_mutex_lock ($k of $n samples)"
else
	fail "the waiting thread is blocked in pthread_mutex_lock ($k of $n samples)"
	diag "$(awk -v t="$main" '$1 == t { print $2, $6 }' "$T/s" | sort | uniq -c | sort -rn | head -n 5)"
fi
# (main also blocks in pthread_join at the end, waiting for the holder)
bad=$(awk '$2 == 2 && $6 ~ /(^|;)(lock_waiter|holder);/ && $6 !~ /(^|;)(__)?pthread_mutex_lock;/' \
	"$T/s" | wc -l)
is "$bad" "0" "every blocked sample in lock_waiter or holder is in pthread_mutex_lock"
done_testing
