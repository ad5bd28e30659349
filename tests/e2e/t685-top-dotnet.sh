#!/bin/sh
# SPDX-License-Identifier: MIT
# t685-top-dotnet.sh - nettrace-top on a running .NET 10 workload (the 70/30 split): --once
# shows the hot function with names from the rundown session (methods jitted before the
# attach), samples/s, the realized interval and the threads with their state; the same
# view of a recorded file and of standard input agree; --plain prints a view per interval;
# and its CPU use stays small.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
attach_need "$TOP" "$COLLECT"

serve_start 60 || { fail "the workload started"; done_testing; }
run "$TOP" -p "$SERVE_PID" --once --duration 3s
is_rc 0 "nettrace-top -p PID --once"
cp "$T/out" "$T/once"
# the spinning leaf, named, among the first rows with over a third of the samples (the
# other half is the thread blocked reading stdin)
# (.NET 10's JIT puts a GC poll in the loop: its self time is split with PollGCWorker, so
# the check is on its total)
awk '/FUNCTION \(by self\)/ { f = 1; next } f && ++n <= 3 && /NtWorkloads\.Spin\.Until/ && $2 > 33 { ok = 1 }
	END { exit !ok }' "$T/once" && pass "Spin.Until is a top function by self, named" ||
	{ fail "Spin.Until is a top function by self, named"; diag "$(cat "$T/once")"; }
rate=$(sed -n 's/.*samples, \([0-9]*\)\/s, realized interval \([0-9.]*\) ms.*/\1 \2/p' "$T/once")
read -r sps ms <<EOT
$rate
EOT
if [ "${sps:-0}" -gt 100 ] && awk -v m="${ms:-0}" 'BEGIN { exit !(m > 0.5 && m < 20) }'; then
	pass "samples/s ($sps) and the realized interval ($ms ms) are shown"
else
	fail "samples/s and the realized interval are shown"; diag "$(cat "$T/once")"
fi
grep -q "methods known" "$T/once" && ! grep -q " 0 methods known" "$T/once" &&
	pass "methods are known from the rundown session" || fail "methods are known from the rundown session"

run "$TOP" -p "$SERVE_PID" --once --duration 2s --view threads
is_rc 0 "--view threads"
awk -v pid="$SERVE_PID" '$1 == pid && $6 == "running" && $3 > 90 { ok = 1 } END { exit !ok }' "$T/out" &&
	pass "the main thread is running" ||
	{ fail "the main thread is running"; diag "$(cat "$T/out")"; }
awk '$6 == "io" && /Sys\.Read/ { ok = 1 } END { exit !ok }' "$T/out" &&
	pass "the stdin thread waits in a read (io)" ||
	{ fail "the stdin thread waits in a read (io)"; diag "$(cat "$T/out")"; }

run "$TOP" -p "$SERVE_PID" --view total --once --duration 2s
awk '/FUNCTION \(by total\)/ { f = 1; next } f && /SplitA\.Spin70/ { a = $2 } f && /SplitB\.Spin30/ { b = $2 }
	END { exit !(a > b && b > 0) }' "$T/out" &&
	pass "by total, Spin70 holds more than Spin30" ||
	{ fail "by total, Spin70 holds more than Spin30"; diag "$(cat "$T/out")"; }

# --plain: one view per interval, for logs; and its CPU use (GNU time, where installed)
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%U %S %e' -o "$T/time" "$TOP" -p "$SERVE_PID" --plain --duration 4s \
		>"$T/plain" 2>"$T/err"
	rc=$?
	read -r u s e <"$T/time"
	cpu=$(awk -v u="$u" -v s="$s" -v e="$e" 'BEGIN { printf "%.1f", 100 * (u + s) / e }')
	diag "nettrace-top used ${cpu}% of one core (user ${u} s, system ${s} s in ${e} s)"
	awk -v c="$cpu" 'BEGIN { exit !(c < 25) }' && pass "CPU use ${cpu}% of one core" ||
		fail "CPU use ${cpu}% of one core"
else
	"$TOP" -p "$SERVE_PID" --plain --duration 4s >"$T/plain" 2>"$T/err"
	rc=$?
	skip "CPU use" "no /usr/bin/time"
fi
is_rc 0 "--plain --duration 4s"
views=$(grep -c '^nettrace-top: pid' "$T/plain")
[ "$views" -ge 3 ] && pass "--plain printed $views views" || fail "--plain printed $views views"
grep -q $(printf '\033') "$T/plain" && fail "--plain writes no escape codes" || pass "--plain writes no escape codes"

# a file being written: followed as it grows, to its end
"$COLLECT" -q -p "$SERVE_PID" --duration 4s -o "$T/rec.nettrace" &
cpid=$!
sleep 1
run "$TOP" --plain --interval 1s "$T/rec.nettrace"
wait "$cpid"
serve_stop
is_rc 0 "--plain FILE follows a trace being written to its end"
views=$(grep -c '^window' "$T/out")
if [ "$views" -ge 3 ] && grep -q '\[stream ended\]' "$T/out"; then
	pass "it showed $views views, the last at the end of the stream"
else
	fail "it showed views until the end of the stream"; diag "$(grep '^window\|^nettrace-top' "$T/out")"
fi

# the recorded file and the same on standard input give the same view
run "$TOP" --once "$T/rec.nettrace"
is_rc 0 "--once FILE"
sed 1d "$T/out" >"$T/file.view"
run "$TOP" --once - <"$T/rec.nettrace"
is_rc 0 "--once - (standard input)"
sed 1d "$T/out" >"$T/stdin.view"
same "$T/stdin.view" "$T/file.view" "the file and standard input give the same view"
grep -q "NtWorkloads.Spin.Until" "$T/file.view" && pass "the file's view names Spin.Until (rundown at its end)" ||
	fail "the file's view names Spin.Until"
done_testing
