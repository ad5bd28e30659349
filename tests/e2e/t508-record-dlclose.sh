#!/bin/sh
# SPDX-License-Identifier: MIT
# t508-record-dlclose.sh - objects unloaded while they are sampled: nts-dl loads a shared
# object, spins in it and unloads it, hundreds of times, while the sampler samples every
# thread at 1 kHz. A walk that read an unloaded object's unwind tables would crash the
# program; the sampler's dlclose interposer (sampler.c) keeps walks off stale module
# snapshots. Checks: the program ends normally, every one of its dlclose calls went
# through the interposer (the library's report counts them), the trace is finished and
# has samples, and samples inside the object resolve to its function.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
DL=$top_builddir/tests/sampler/nts-dl
MOD=$top_builddir/tests/sampler/.libs/libntsdlmod.so
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$DL"
need_tool "$FOLD"
if [ ! -f "$MOD" ]; then
	echo "Bail out! $MOD is not built"
	exit 1
fi

F=$T/dl.nettrace
# the library's own report on fd 9 (what nettrace-record reads), the program's on stdout
env LD_PRELOAD="$SAMPLER_LIB" NETTRACE_OUTPUT="$F" NETTRACE_FREQUENCY=1000 \
	NETTRACE_STATUS_FD=9 "$DL" "$MOD" 2 >"$T/out" 2>"$T/err" 9>"$T/status"
rc=$?
is "$rc" "0" "nts-dl ends normally under the sampler"
[ "$rc" = 0 ] || diag "$(cat "$T/err")"
n=$(sed -n 's/^dlclose \([0-9]*\)$/\1/p' "$T/out")
u=$(sed -n 's/.* unloads=\([0-9]*\).*/\1/p' "$T/status" | tail -n 1)
if [ "${n:-0}" -ge 50 ]; then pass "the object was unloaded $n times"; else
	fail "the object was unloaded ${n:-0} times (50 or more expected)"; fi
is "${u:-none}" "${n:-0}" "every dlclose went through the sampler's interposer"
is "$(summary_get "$F" end_tag):$(summary_get "$F" truncated)" "1:0" "the trace is finished"
s=$(summary_get "$F" samples)
if [ "${s:-0}" -ge 500 ]; then pass "the trace has $s samples"; else
	fail "the trace has ${s:-0} samples (500 or more expected)"; fi
"$FOLD" "$F" >"$T/folded" 2>"$T/fold.err"
is_rc 0 "nettrace-fold reads it"
k=$(grep -c 'libntsdlmod.so!dlmod_spin' "$T/folded")
if [ "$k" -gt 0 ]; then pass "samples in the object resolve to its function ($k stacks)"; else
	fail "samples in the object resolve to its function"
	diag "$(head -n 5 "$T/folded")"
fi
done_testing
