#!/bin/sh
# SPDX-License-Identifier: MIT
# t501-record-split.sh - known split (doc/sampler-design.md §7 test 1): nts-work split
# spends 70% of its work in leaf_a (called by caller_a) and 30% in leaf_b (called by
# caller_b), identical loops. The share of leaf_a in the CPU time of the samples in either
# leaf (each sample weighs its thread's CPU time since the previous sample, lib-record.sh)
# must be 0.7 within delta 0.02 (iteration counts are not a perfect clock) + 4 sigma. The
# leaves
# are frameless (gcc -O2), so the unwinder must get their caller from the CFI: frame 1 of
# a leaf_a sample must be caller_a, of leaf_b caller_b, in 99% of the samples at least
# (a sample can land on the leaf's ret or in the caller's prologue bookkeeping, where the
# leaf is no longer the innermost frame; those are not counted as wrong here). Also the
# Poisson schedule at the same rate.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"

for sched in fixed poisson; do
	opt=
	[ "$sched" = poisson ] && opt=--poisson
	for secs in 2 4; do
		F=$T/split-$sched.nettrace
		record_q -F 1000 $opt -o "$F" -- "$WORK" split "$secs"
		samples "$F" "$T/s"
		read -r k n ne <<EOT
$(cpu_share "$T/s" '^leaf_a;' '^leaf_[ab];')
EOT
		if res=$(within 0.7 "$n" 0.02 "$k" "$ne"); then
			break
		fi
		diag "$sched, $secs s: $res; running once more, twice as long"
	done
	is_rc 0 "$sched: recorded"
	if within 0.7 "$n" 0.02 "$k" "$ne" >/dev/null; then
		pass "$sched: leaf_a has 70% of the CPU time: $res"
	else
		fail "$sched: leaf_a has 70% of the CPU time: $res"
	fi
	for x in a b; do
		awk -v x="$x" '$6 ~ "^leaf_" x ";" { n++; split($6, f, ";");
			if (f[2] == "caller_" x && f[3] == "run_split") k++ }
			END { printf "%d %d\n", k, n }' "$T/s" >"$T/c"
		read -r k n <"$T/c"
		if [ "$n" -gt 0 ] && [ $((k * 100)) -ge $((n * 99)) ]; then
			pass "$sched: leaf_$x samples have caller_$x then run_split above ($k of $n)"
		else
			fail "$sched: leaf_$x samples have caller_$x then run_split above ($k of $n)"
			diag "$(awk -v x="$x" '$6 ~ "^leaf_" x ";" { print $6 }' "$T/s" | sort | uniq -c | sort -rn | head -n 5)"
		fi
	done
	ok=$(awk '$6 ~ /;main;/ && $6 ~ /_start$/' "$T/s" | wc -l)
	all=$(wc -l <"$T/s")
	if [ $((ok * 100)) -ge $((all * 99)) ]; then
		pass "$sched: stacks reach main and _start through libc ($ok of $all)"
	else
		fail "$sched: stacks reach main and _start through libc ($ok of $all)"
		diag "$(awk '!($6 ~ /;main;/ && $6 ~ /_start$/) { print $6 }' "$T/s" | sort | uniq -c | sort -rn | head -n 5)"
	fi
done
done_testing
