#!/bin/sh
# SPDX-License-Identifier: MIT
# t771-record-backend-fallback.sh - where perf_event_open is refused (nts-noperf: a
# seccomp filter, as containers install), the sampler's default backend (auto) falls back
# to signals and says so in the trace (SessionSettings Backend, nettrace-info), with whole
# stacks and the asked rate; --backend=perf there fails to start, with the reason, and
# nettrace-record exits 3; an unknown backend is a usage error (1).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
FIB=$top_builddir/tests/sampler/nts-fib
NOPERF=$top_builddir/tests/sampler/nts-noperf
FOLD=$top_builddir/tools/nettrace-fold
INFO=$top_builddir/tools/nettrace-info
need_tool "$FIB"
need_tool "$NOPERF"
need_tool "$FOLD"
need_tool "$INFO"

"$NOPERF" true 2>"$T/err"
if [ $? = 3 ]; then
	echo "1..0 # SKIP cannot install a seccomp filter here: $(cat "$T/err")"
	exit 0
fi

F=$T/auto.nettrace
"$NOPERF" "$RECORD" -q -F 997 -o "$F" -- "$FIB" threads 1.5 >"$T/rec.out" 2>"$T/rec.err"
rc=$?
is_rc 0 "auto under the filter: recorded"
is "$(summary_get "$F" backend)" signal "auto under the filter: SessionSettings says Backend signal"
rate_ok() {
	hz=$(summary_get "$1" stats_hz)
	awk -v h="$hz" 'BEGIN { exit !(h >= 997 * 0.99 && h <= 997 * 1.01) }'
}
if ! rate_ok "$F"; then
	# a busy machine can make the sampler miss rounds for a while: once more, twice as long
	diag "realized rate $hz Hz; recording once more, twice as long"
	"$NOPERF" "$RECORD" -q -F 997 -o "$F.again" -- "$FIB" threads 3 >/dev/null 2>&1
	rate_ok "$F.again"
fi
if awk -v h="$hz" 'BEGIN { exit !(h >= 997 * 0.99 && h <= 997 * 1.01) }'; then
	pass "auto under the filter: realized rate $hz Hz within 1% of 997"
else
	fail "auto under the filter: realized rate $hz Hz within 1% of 997"
fi
"$FOLD" --unit=samples --no-module "$F" |
	awk '{ w = $NF; sub(/ [0-9]+$/, ""); for (i = 0; i < w; i++) print }' >"$T/s"
n=$(wc -l <"$T/s")
t=$(grep -v -E -c '(^|;)(main|start_thread|clone|clone3)(;|$)' "$T/s")
if [ "$n" -ge 200 ] && [ $((t * 1000)) -le $((n * 5)) ]; then
	pass "auto under the filter: $t of $n stacks truncated (<= 0.5%)"
else
	fail "auto under the filter: $t of $n stacks truncated (<= 0.5%, >= 200 samples)"
fi
run "$INFO" "$F"
if grep -q 'signal mode, fixed schedule .*, signal backend' "$T/out"; then
	pass "nettrace-info names the signal backend"
else
	fail "nettrace-info names the signal backend"; diag "$(grep Sampler "$T/out")"
fi

F=$T/perf.nettrace
"$NOPERF" "$RECORD" -F 997 --backend=perf -o "$F" -- "$FIB" fib 0.3 >"$T/rec.out" 2>"$T/rec.err"
rc=$?
is_rc 3 "--backend=perf under the filter: nettrace-record exits 3"
if grep -q 'perf_events backend cannot be used: perf_event_open: Permission denied' "$T/rec.err"; then
	pass "--backend=perf under the filter: the reason is reported"
else
	fail "--backend=perf under the filter: the reason is reported"; diag "$(cat "$T/rec.err")"
fi

"$RECORD" --backend=bogus -o "$T/x.nettrace" -- true >"$T/rec.out" 2>"$T/rec.err"
rc=$?
is_rc 1 "--backend=bogus: usage error"
if grep -q "unknown backend 'bogus'" "$T/rec.err"; then pass "--backend=bogus: says why"
else fail "--backend=bogus: says why"; diag "$(cat "$T/rec.err")"; fi
done_testing
