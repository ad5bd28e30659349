#!/bin/sh
# SPDX-License-Identifier: MIT
# t505-record-multi.sh - concurrent sessions through the C API (doc/sampler-design.md §7
# test 7), tests/sampler/nts-multi:
#  - sessions at 1, 3 and 7 ms on one thread, opened 0.2 s apart and open together for 2 s:
#    each file gets its own schedule. Fixed: samples + missed = duration/interval within
#    2 (the random first phase and the last partial interval), and the interval the
#    toolkit infers (nettrace-info) is the requested one within 1%; opening the second
#    and third sessions did not change the first one's rate (its inferred interval covers
#    the whole file). Poisson: samples + missed within 4 sqrt(expected) + 2 of it, and
#    the inferred mean within 4/sqrt(n) + 1% (the mean of n exponential gaps);
#  - a 1 ms session opened while the only other one sleeps until a 1 s deadline gets its
#    first sample within 20 ms: adding a session wakes the sampler thread;
#  - a thread filter keeps the other thread out;
#  - API argument checks.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
need_tool "$MULTI"

inferred() {
	"$INFO" --json "$1" | sed -n 's/.*"inferred_interval_ns": \([0-9.]*\).*/\1/p' | head -n 1
}

for sched in fixed poisson; do
	mkdir -p "$T/$sched"
	run "$MULTI" rates "$T/$sched" 2 "$sched"
	is_rc 0 "$sched: three sessions"
	for ms in 1 3 7; do
		line=$(grep "^session $ms " "$T/out")
		get() { echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
		n=$(get samples)
		missed=$(get missed)
		dmin=$(get min_ns)
		dmax=$(get max_ns)
		F=$T/$sched/s$ms.nettrace
		is "$(summary_get "$F" samples)" "$n" "$sched $ms ms: the file holds the samples the session counted"
		awk -v n="$n" -v m="$missed" -v d0="$dmin" -v d1="$dmax" -v ms="$ms" -v s="$sched" 'BEGIN {
			e0 = d0 / (ms * 1e6); e1 = d1 / (ms * 1e6)
			tol = (s == "fixed") ? 2 : 4 * sqrt(e1) + 2
			printf "samples %d + missed/dropped %d vs %.1f to %.1f expected, tolerance %.1f\n",
				n, m, e0, e1, tol
			exit !(n + m >= e0 - tol && n + m <= e1 + tol) }' >"$T/c"
		if [ $? = 0 ]; then
			pass "$sched $ms ms: $(cat "$T/c")"
		else
			fail "$sched $ms ms: $(cat "$T/c")"
		fi
		iv=$(inferred "$F")
		awk -v iv="${iv:-0}" -v ms="$ms" -v n="$n" -v s="$sched" 'BEGIN {
			want = ms * 1e6; tol = (s == "fixed") ? 0.01 : 4 / sqrt(n) + 0.01
			printf "inferred %.0f ns for %.0f, tolerance %.1f%%\n", iv, want, tol * 100
			exit !(iv >= want * (1 - tol) && iv <= want * (1 + tol)) }' >"$T/c"
		if [ $? = 0 ]; then
			pass "$sched $ms ms: $(cat "$T/c")"
		else
			fail "$sched $ms ms: $(cat "$T/c")"
		fi
		is "$(summary_get "$F" schedule)" "$sched" "$sched $ms ms: SessionSettings schedule"
	done
done

mkdir -p "$T/wake"
run "$MULTI" wake "$T/wake"
is_rc 0 "a 1 ms session next to a 1000 ms one"
first=$("$CHECK" samples "$T/wake/fast.nettrace" | awk '!/^#/ { print $4; exit }')
if [ -n "$first" ] && [ "$first" -lt 20000000 ]; then
	pass "its first sample comes ${first} ns after it opened (< 20 ms): the sampler woke up"
else
	fail "its first sample comes ${first:-never} ns after it opened (< 20 ms)"
fi

mkdir -p "$T/filter"
run "$MULTI" filter "$T/filter"
is_rc 0 "a session with a thread filter"
want=$(sed -n 's/^wanted //p' "$T/out")
tids=$("$CHECK" samples "$T/filter/filter.nettrace" | awk '!/^#/ { print $1 }' | sort -u | tr '\n' ' ')
is "$tids" "$want " "only the wanted thread is sampled"

run "$MULTI" api
is_rc 0 "API checks ran"
if grep -q FAIL "$T/out"; then
	fail "API argument checks"
	diag "$(grep FAIL "$T/out")"
else
	pass "API argument checks ($(grep -c '^ok' "$T/out") of them)"
fi
done_testing
