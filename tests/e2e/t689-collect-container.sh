#!/bin/sh
# SPDX-License-Identifier: MIT
# t689-collect-container.sh - a .NET process in a container of its own (new mount and pid
# namespaces, a private /tmp): its socket is not in our /tmp and is named with the pid it
# sees. nettrace-collect --list and -p HOSTPID find it through /proc/PID/root, and the
# trace records the process's own pid. Needs root and unshare(1); skipped otherwise.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
dotnet_need
need_tool "$COLLECT"
need_tool "$INFO"
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null 2>&1 ||
	! unshare --mount --pid --fork --mount-proc sh -c 'mount -t tmpfs none /tmp' 2>/dev/null; then
	echo "1..0 # SKIP needs root and unshare with mount and pid namespaces"
	exit 0
fi
case $(cd "$top_builddir" && pwd -P)/ in
/tmp/*)
	# the container's private /tmp would hide the workload it has to run
	echo "1..0 # SKIP the build tree is under /tmp, which the container's private /tmp hides"
	exit 0 ;;
esac
dotnet_workloads

mkfifo "$T/in"
unshare --mount --pid --fork --mount-proc sh -c \
	'exec <"$1" && mount -t tmpfs none /tmp && TMPDIR= exec "$0" serve 61' "$NT_WORKLOADS" "$T/in" \
	>"$T/serve.out" 2>&1 &
upid=$!
# the child opens the fifo before its private /tmp hides it; read-write here, so that the
# open does not wait for a child that failed
exec 8<>"$T/in"
hpid=
i=0
while [ -z "$hpid" ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
	"$COLLECT" --list >"$T/list" 2>&1
	hpid=$(awk -v f="$NT_WORKLOADS" '$4 == f && /serve 61/ { print $1; exit }' "$T/list")
done
if [ -n "$hpid" ]; then
	pass "--list finds the process in its container (host pid $hpid)"
else
	fail "--list finds the process in its container"; diag "$(cat "$T/list")"
	exec 8>&-
	wait "$upid"
	done_testing
fi
nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$hpid/status")
[ "$nspid" != "$hpid" ] && pass "it has a pid of its own there ($nspid)" || fail "it has a pid of its own there"
if ls /tmp/dotnet-diagnostic-"$hpid"-* >/dev/null 2>&1; then
	fail "its socket is only in its own /tmp"
elif [ -S "$(ls /proc/"$hpid"/root/tmp/dotnet-diagnostic-"$nspid"-*-socket 2>/dev/null | head -1)" ]; then
	pass "its socket is only in its own /tmp, named with its own pid"
else
	fail "its socket is only in its own /tmp, named with its own pid"
	diag "$(ls -la /proc/"$hpid"/root/tmp/)"
fi
run "$COLLECT" -p "$hpid" --duration 2s -o "$T/ns.nettrace"
is_rc 0 "nettrace-collect -p HOSTPID"
exec 8>&-
wait "$upid"
run "$INFO" "$T/ns.nettrace"
if [ "$rc" -eq 0 ] && grep -q '^Truncated: *no' "$T/out" && grep -q '^Samples: *[1-9]' "$T/out"; then
	pass "the trace is whole and has samples"
else
	fail "the trace is whole and has samples"; diag "$(cat "$T/out" "$T/err")"
fi
grep -q "^Process: *pid $nspid," "$T/out" && pass "the trace names the pid the process sees ($nspid)" ||
	{ fail "the trace names the pid the process sees ($nspid)"; diag "$(grep ^Process "$T/out")"; }
done_testing
