#!/bin/sh
# SPDX-License-Identifier: MIT
# t642-time-dotnet.sh - time categories on real .NET 10 traces (tests/dotnet/workloads),
# against each program's own account:
#  - gc: 20 induced GCs (GC.Collect); nettrace-info counts the GCs the runtime reports
#    (gen0 collections, every GC counts there), and the main thread, which triggers them
#    all, shows their pauses as gc time (at least 90% of the pause total);
#  - lock: two threads take turns on one Monitor; their lock time is at least half the
#    waiting the program measured, and they are never "cpu" (no CPU clock: running);
#  - block: the main thread sleeps, reads a pipe and awaits a Task.Delay; at least half
#    of the time it measured blocked shows as lock/io/sleep/wait, and hardly any as running.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FOLD"
dotnet_workloads

# cats TRACE: "TID CATEGORY NS" per thread and category
cats() {
	"$FOLD" --per-thread --category-frame root "$1" |
		awk -F';' '{ n = split($0, w, " "); tid = $1; sub(/.*\(/, "", tid); sub(/\).*/, "", tid)
			c = $2; gsub(/[][]/, "", c); s[tid " " c] += w[n] }
			END { for (k in s) printf "%s %.0f\n", k, s[k] }' | sort
}
# get FILE TID CAT...: the sum of those categories of thread TID (ns)
get() {
	f=$1 tid=$2
	shift 2
	awk -v t="$tid" -v l=" $* " '$1 == t && index(l, " " $2 " ") { s += $3 } END { printf "%.0f", s }' "$f"
}

# ---- gc
tr=$T/gc.nettrace
if dotnet_record gc "$tr" 20; then pass "nt-workloads gc ran under a file session"; else
	fail "nt-workloads gc ran under a file session"; diag "$(cat "$tr.err")"; fi
pid=$(truth pid "$tr.truth")
gen0=$(truth gen0 "$tr.truth")
run "$INFO" "$tr"
gcs=$(sed -n 's/^GC: *\([0-9]*\) GCs.*/\1/p' "$T/out")
is "$gcs" "$gen0" "nettrace-info: the $gen0 GCs the program counted (20 induced)"
pause_ns=$("$INFO" --json "$tr" | sed -n 's/.*"pause_ns": \([0-9]*\).*/\1/p')
cats "$tr" >"$T/gc.cats"
gc=$(get "$T/gc.cats" "$pid" gc)
if [ "${pause_ns:-0}" -gt 0 ] && awk -v g="$gc" -v p="$pause_ns" 'BEGIN { exit !(g >= 0.9 * p) }'; then
	pass "the main thread's gc time $((gc / 1000000)) ms holds the GC pauses ($((pause_ns / 1000000)) ms)"
else
	fail "the main thread's gc time ${gc:-0} ns holds the GC pauses (${pause_ns:-0} ns)"
	diag "$(grep "^$pid " "$T/gc.cats")"
fi

# ---- lock
tr=$T/lock.nettrace
if dotnet_record lock "$tr" 2; then pass "nt-workloads lock ran under a file session"; else
	fail "nt-workloads lock ran under a file session"; diag "$(cat "$tr.err")"; fi
pid=$(truth pid "$tr.truth")
wait_ns=$(awk -v s="$(truth wait_s "$tr.truth")" 'BEGIN { printf "%.0f", s * 1e9 }')
cats "$tr" >"$T/lock.cats"
lock=$(awk -v p="$pid" '$1 != p && $2 == "lock" { s += $3 } END { printf "%.0f", s }' "$T/lock.cats")
if awk -v l="$lock" -v w="$wait_ns" 'BEGIN { exit !(w > 0 && l >= 0.5 * w) }'; then
	pass "lock: the workers' lock time $((lock / 1000000)) ms, the program waited $((wait_ns / 1000000)) ms"
else
	fail "lock: the workers' lock time ${lock} ns, the program waited ${wait_ns} ns"
	diag "$(cat "$T/lock.cats")"
fi
is "$(awk '$2 == "cpu"' "$T/lock.cats" | wc -l)" 0 "lock: no cpu time without a CPU clock (running instead)"

# ---- block
tr=$T/block.nettrace
if dotnet_record block "$tr" 1.5; then pass "nt-workloads block ran under a file session"; else
	fail "nt-workloads block ran under a file session"; diag "$(cat "$tr.err")"; fi
pid=$(truth pid "$tr.truth")
want=$(awk -v a="$(truth sleep_s "$tr.truth")" -v b="$(truth pipe_s "$tr.truth")" \
	-v c="$(truth delay_s "$tr.truth")" 'BEGIN { printf "%.0f", (a + b + c) * 1e9 }')
cats "$tr" >"$T/block.cats"
blocked=$(get "$T/block.cats" "$pid" lock io sleep wait)
running=$(get "$T/block.cats" "$pid" running cpu)
all=$(awk -v p="$pid" '$1 == p { s += $3 } END { printf "%.0f", s }' "$T/block.cats")
if awk -v b="$blocked" -v w="$want" 'BEGIN { exit !(w > 0 && b >= 0.5 * w) }'; then
	pass "block: the main thread blocked $((blocked / 1000000)) ms (lock/io/sleep/wait), the program measured $((want / 1000000)) ms"
else
	fail "block: the main thread blocked ${blocked} ns, the program measured ${want} ns"
	diag "$(grep "^$pid " "$T/block.cats")"
fi
if awk -v r="$running" -v a="$all" 'BEGIN { exit !(a > 0 && r <= 0.1 * a) }'; then
	pass "block: the main thread is hardly ever running ($((running / 1000000)) of $((all / 1000000)) ms)"
else
	fail "block: the main thread is hardly ever running (${running} of ${all} ns)"
fi
done_testing
