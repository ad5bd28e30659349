#!/bin/sh
# SPDX-License-Identifier: MIT
# t503-record-alias.sh - aliasing (doc/sampler-design.md §7 test 3; py-spy #94): nts-work
# alias runs tick() for 1 ms at every 10 ms deadline and work() the rest of the time, so
# tick() holds about 10% of the wall time (the program measures the exact share, which a
# busy machine shifts a little). A Poisson sampler sees time averages (PASTA): the share
# of samples with tick on the stack must match the measured share within delta 0.02 (plus
# the share of late rounds, lib-record.sh) + 4 sigma. A fixed 10 ms sampler is locked to one phase of the tick and sees 0% or
# 100%: shown as the negative control, not checked (its exact value depends on the phase
# and on scheduling jitter). Samples of a thread waiting for a CPU come in clusters: the
# bound uses their effective number (lib-record.sh).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"


for secs in 4 8; do
	F=$T/alias-poisson.nettrace
	record_q -i 2 --poisson -o "$F" -- "$WORK" alias "$secs"
	truth=$(sed -n 's/^truth tick_wall=//p' "$T/rec.out")
	samples "$F" "$T/s"
	read -r k n ne <<EOT
$(wall_share "$T/s" '(^|;)tick;' '.')
EOT
	d=$(late_delta "$F" 0.02)
	res=$(within "${truth:-0.1}" "$n" "$d" "$k" "$ne") && break
	diag "poisson, $secs s: $res; running once more, twice as long"
done
is_rc 0 "recorded with a Poisson schedule, mean 2 ms"
# 10% on an idle machine; a busy one stretches or shortens the ticks (a thread preempted
# in tick() stays there), which is why the program measures the share
case $truth in
0.0[2-9]* | 0.[1-3]*) pass "tick() ran: $truth of the wall time (0.1 on an idle machine)" ;;
*) fail "tick() ran: ${truth:-no} share of the wall time (0.1 on an idle machine)" ;;
esac
if within "${truth:-0.1}" "$n" "$d" "$k" "$ne" >/dev/null; then
	pass "poisson: tick share matches the time share: $res"
else
	fail "poisson: tick share matches the time share: $res"
fi
is "$(summary_get "$F" schedule)" "poisson" "the trace says poisson"

F=$T/alias-fixed.nettrace
record_q -i 10 -o "$F" -- "$WORK" alias 2
is_rc 0 "recorded with a fixed 10 ms schedule (negative control)"
samples "$F" "$T/s"
read -r k n ne <<EOT
$(wall_share "$T/s" '(^|;)tick;' '.')
EOT
diag "negative control: fixed 10 ms sampling saw tick() in $k of $n samples" \
	"(time share $(sed -n 's/^truth tick_wall=//p' "$T/rec.out"); expected far off, 0% or 100%)"
done_testing
