#!/bin/sh
# SPDX-License-Identifier: MIT
# t683-collect-perm.sh - attaching without the right to: the runtime's socket is its user's
# (mode 0600), so another user cannot connect. nettrace-collect, nettrace-top and --list
# say whose socket it is, and the tools exit 3 (system error). Run as root, the test uses
# setpriv to become nobody; as another user, a socket made unreadable.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
need_tool "$COLLECT"
need_tool "$TOP"
FAKE=$top_builddir/tests/mkfakediag
need_tool "$FAKE"

as_other=
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	as_other="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi

# 1. a socket the user may not use (a fake server's, so that no .NET is needed)
mkdir -p "$T/sock" && chmod 755 "$T" "$T/sock"
"$FAKE" stream "$T/sock" >"$T/fake.out" 2>&1 &
fpid=$!
i=0
while ! grep -q ready "$T/fake.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sock=$(ls "$T"/sock/dotnet-diagnostic-"$fpid"-*-socket)
chmod 600 "$sock"
if [ -n "$as_other" ]; then
	run env TMPDIR="$T/sock" $as_other "$COLLECT" -p "$fpid" --duration 1s -o /dev/null
else
	chmod 000 "$sock"
	run env TMPDIR="$T/sock" "$COLLECT" -p "$fpid" --duration 1s -o /dev/null
fi
is_rc 3 "nettrace-collect without permission exits 3"
if grep -q "permission denied (the socket belongs to uid $(id -u)" "$T/err"; then
	pass "it says whose socket it is"
else
	fail "it says whose socket it is"; diag "$(cat "$T/err")"
fi
if [ -n "$as_other" ]; then
	run env TMPDIR="$T/sock" $as_other "$TOP" -p "$fpid" --once
else
	run env TMPDIR="$T/sock" "$TOP" -p "$fpid" --once
fi
is_rc 3 "nettrace-top without permission exits 3"
grep -q "permission denied" "$T/err" && pass "nettrace-top says permission denied" ||
	{ fail "nettrace-top says permission denied"; diag "$(cat "$T/err")"; }
kill "$fpid"
wait "$fpid" 2>/dev/null

# 2. a real .NET process of another user (root runs the workload, nobody attaches)
if [ -z "$as_other" ] || ! command -v dotnet >/dev/null 2>&1; then
	skip "attach to a .NET process of another user" "needs root, setpriv and dotnet"
	done_testing
fi
dotnet_workloads
serve_start 60 || { fail "the workload started"; done_testing; }
run $as_other "$COLLECT" -p "$SERVE_PID" --duration 1s -o /dev/null
is_rc 3 "nettrace-collect as nobody on root's .NET process exits 3"
grep -q "permission denied" "$T/err" && pass "it says permission denied" ||
	{ fail "it says permission denied"; diag "$(cat "$T/err")"; }
run $as_other "$COLLECT" --list
is_rc 0 "--list as nobody"
grep -q "^$SERVE_PID .*permission denied" "$T/out" && pass "--list shows the process it cannot ask" ||
	{ fail "--list shows the process it cannot ask"; diag "$(cat "$T/out" "$T/err")"; }
serve_stop
done_testing
