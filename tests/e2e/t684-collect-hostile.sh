#!/bin/sh
# SPDX-License-Identifier: MIT
# t684-collect-hostile.sh - a diagnostic socket whose peer is not a sane runtime
# (tests/mkfakediag): garbage, a bad magic, a header cut short, a size that lies or is too
# small, an error reply, silence, strings that overrun their reply, a stream of garbage
# and a real trace cut in the middle of a block. nettrace-collect and nettrace-top never
# crash: they exit 2 (bad input) or 3 (timeout) with a message naming what was wrong, and a
# cut stream keeps exactly its complete events.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
need_tool "$COLLECT"
need_tool "$TOP"
need_tool "$INFO"
FAKE=$top_builddir/tests/mkfakediag
need_tool "$FAKE"
SAMPLE=$TRACES/sentry-dotnet/sample.nettrace

# fake MODE [TRACE [CUT]]: starts the server in $T/s; sets FPID
fake() {
	rm -rf "$T/s" && mkdir -p "$T/s"
	m=$1
	shift
	"$FAKE" "$m" "$T/s" "$@" >"$T/fake.out" 2>&1 &
	FPID=$!
	i=0
	while ! grep -q ready "$T/fake.out" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
unfake() {
	kill "$FPID" 2>/dev/null
	wait "$FPID" 2>/dev/null
}

# check MODE WANT_RC PATTERN: nettrace-collect against the fake in MODE
check() {
	fake "$1"
	run env TMPDIR="$T/s" "$COLLECT" -p "$FPID" --timeout 1s --duration 2s -o "$T/x.nettrace"
	unfake
	if [ "$rc" -eq "$2" ] && grep -q "$3" "$T/err"; then
		pass "$1: nettrace-collect exits $2 and says '$3'"
	else
		fail "$1: nettrace-collect exits $2 and says '$3' (exit $rc)"
		diag "$(cat "$T/err")"
	fi
}
check garbage 2 'does not start with the magic'
check badmagic 2 'does not start with the magic'
check shortheader 2 'the reply ends in its header (10 of 20 bytes)'
check liesize 2 'the reply ends after 10 of its 65515 payload bytes'
check smallsize 2 'size 3 is smaller than its header'
check error 2 'answered error 0x80131385 (unknown command)'
check silent 3 'did not answer in time'
check badstrings 2 'claims 60000 characters'
check streamgarbage 2 'stream: at byte'

# A real trace cut mid-block: the file is the bytes that came, the reader keeps the
# complete events and reports the rest.
size=$(wc -c <"$SAMPLE")
cut=$((size / 2 + 333))
head -c "$cut" "$SAMPLE" >"$T/cut.ref"
"$INFO" "$T/cut.ref" >"$T/cut.info" 2>/dev/null
want=$(sed -n 's/^Events: *\([0-9]*\).*/\1/p' "$T/cut.info")
fake stream "$SAMPLE" "$cut"
run env TMPDIR="$T/s" "$COLLECT" -p "$FPID" --timeout 1s --duration 5s -o "$T/cut.nettrace"
unfake
is_rc 0 "cut stream: nettrace-collect exits 0"
same "$T/cut.nettrace" "$T/cut.ref" "cut stream: the file holds the bytes that came"
grep -q " $want events," "$T/err" && pass "cut stream: $want complete events counted" ||
	{ fail "cut stream: $want complete events counted"; diag "$(cat "$T/err")"; }
grep -q "warning: .*end" "$T/err" && pass "cut stream: the cut is reported" ||
	{ fail "cut stream: the cut is reported"; diag "$(cat "$T/err")"; }

# nettrace-top on the same peers
for mw in garbage:2 streamgarbage:2 badstrings:2; do
	m=${mw%:*} w=${mw#*:}
	fake "$m"
	run env TMPDIR="$T/s" "$TOP" -p "$FPID" --once --duration 1s
	unfake
	if [ "$rc" -eq "$w" ]; then
		pass "$m: nettrace-top exits $rc"
	else
		fail "$m: nettrace-top exits $w (exit $rc)"; diag "$(cat "$T/err")"
	fi
done
fake stream "$SAMPLE" "$cut"
run env TMPDIR="$T/s" "$TOP" -p "$FPID" --once --duration 2s
unfake
if [ "$rc" -eq 0 ] && grep -q "samples since the start" "$T/out"; then
	pass "cut stream: nettrace-top shows what came"
else
	fail "cut stream: nettrace-top shows what came (exit $rc)"; diag "$(cat "$T/err" "$T/out")"
fi

# a pid without a socket, and no process at all
run env TMPDIR="$T/s" "$COLLECT" -p $$ --duration 1s
is_rc 1 "a process without a diagnostic socket: exit 1"
grep -q "has no diagnostic socket" "$T/err" && pass "it says there is no socket" || fail "it says there is no socket"
done_testing
