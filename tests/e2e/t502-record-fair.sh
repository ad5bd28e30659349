#!/bin/sh
# SPDX-License-Identifier: MIT
# t502-record-fair.sh - fairness across threads (doc/sampler-design.md §7 test 2; the
# process-wide timer bias of golang/go #14434): three threads spin in spin_0, spin_1 and
# spin_2. Each gets a third of the samples in those functions, within delta 0.02 + 4
# sigma, whatever the scheduler does: the sampler signals every thread each round, and a
# thread waiting for a CPU is sampled where it waits. The thread's samples are its own
# (the leaf of thread k is spin_k), and the CPU time the samples carry grows.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"

for secs in 1.5 3; do
	F=$T/fair.nettrace
	record_q -F 500 -o "$F" -- "$WORK" fair "$secs"
	samples "$F" "$T/s"
	n=$(awk '$6 ~ /^spin_[012];fair_thread;/' "$T/s" | wc -l)
	good=1
	for k in 0 1 2; do
		c=$(awk -v k="$k" '$6 ~ "^spin_" k ";fair_thread;"' "$T/s" | wc -l)
		within 0.3333333 "$n" 0.02 "$c" >/dev/null || good=0
	done
	[ "$good" = 1 ] && break
	diag "$secs s: unfair; running once more, twice as long"
done
is_rc 0 "recorded 3 spinning threads"
for k in 0 1 2; do
	c=$(awk -v k="$k" '$6 ~ "^spin_" k ";fair_thread;"' "$T/s" | wc -l)
	if res=$(within 0.3333333 "$n" 0.02 "$c"); then
		pass "spin_$k has a third of the samples: $res"
	else
		fail "spin_$k has a third of the samples: $res"
	fi
	tids=$(awk -v k="$k" '$6 ~ "^spin_" k ";" { print $1 }' "$T/s" | sort -u | wc -l)
	is "$tids" "1" "spin_$k samples come from one thread"
done
awk '$6 ~ /^spin_/ { if ($1 in first) last[$1] = $3; else first[$1] = $3 }
	END { for (t in first) if (last[t] <= first[t]) bad++; exit bad > 0 }' "$T/s"
is "$?" "0" "CpuTimeNs grows along each spinning thread's samples"
done_testing
