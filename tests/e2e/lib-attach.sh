# SPDX-License-Identifier: MIT
# lib-attach.sh - running .NET workloads for the attach tests (t680-t699), sourced after
# lib.sh and lib-dotnet.sh (dotnet_workloads first):
#
#   serve_start [SECONDS [VAR=VALUE...]]  starts "nt-workloads serve SECONDS" (60; $SERVE_MODE
#                                         instead of serve when set) with its
#                                         stdin on a fifo held open, waits for its
#                                         diagnostic socket; sets SERVE_PID
#   serve_stop                            closes its stdin (it stops and prints its truth
#                                         to $T/serve.out) and waits for it
#   serve_kill                            kills it with SIGKILL
#   secs_since START                      seconds since date +%s.%N gave START
#   attach_need TOOL...                   the set-up of a test with .NET: skips without
#                                         dotnet, bails out without the tools (paths),
#                                         builds the workloads (sets NT_WORKLOADS)
#   inferred FILE / declared FILE         nettrace-info's inferred sampling interval
#                                         (ms) / the header's declared one (ns)
COLLECT=$top_builddir/tools/nettrace-collect
TOP=$top_builddir/tools/nettrace-top
FOLD=$top_builddir/tools/nettrace-fold

attach_need() {
	dotnet_need
	for t in "$@"; do
		need_tool "$t"
	done
	dotnet_workloads
}

inferred() { sed -n 's/^Sampling rate: *inferred \([0-9.]*\) ms.*/\1/p' "$1"; }
declared() { sed -n 's/^Sampling interval: *\([0-9]*\) ns.*/\1/p' "$1"; }

serve_start() {
	secs=${1:-60}
	[ $# -gt 0 ] && shift
	rm -f "$T/serve.in"
	mkfifo "$T/serve.in" || return 1
	env "$@" "$NT_WORKLOADS" "${SERVE_MODE:-serve}" "$secs" <"$T/serve.in" >"$T/serve.out" 2>"$T/serve.err" &
	SERVE_PID=$!
	exec 8<>"$T/serve.in" # read-write: does not wait for a reader that may have failed
	i=0
	while [ $i -lt 200 ]; do
		for s in "${TMPDIR:-/tmp}"/dotnet-diagnostic-"$SERVE_PID"-*-socket; do
			# the program has started its work once it printed its pid
			[ -S "$s" ] && grep -q '^pid=' "$T/serve.out" && return 0
		done
		sleep 0.05
		i=$((i + 1))
	done
	echo "# the workload's diagnostic socket did not appear"
	return 1
}

serve_stop() {
	exec 8>&-
	wait "$SERVE_PID"
}

serve_kill() {
	kill -9 "$SERVE_PID" 2>/dev/null
	exec 8>&-
	wait "$SERVE_PID" 2>/dev/null
}

secs_since() {
	awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }'
}
