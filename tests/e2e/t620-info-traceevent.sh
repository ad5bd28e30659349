#!/bin/sh
# SPDX-License-Identifier: MIT
# t620-info-traceevent.sh - TraceEvent (tests/dotnet/oracle) as the oracle of nettrace-info,
# for every real trace of data/traces (and data/traces/dotnet10/, when present) and for
# fresh .NET 10 recordings of the workloads (split, lock, gc, exceptions): the header facts,
# the event counts per (provider, id, version), every payload field TraceEvent decodes
# (names and values, against `nettrace-info --events`), and a name wherever TraceEvent
# has one. A difference is a bug of ours unless the oracle's comparison names
# TraceEvent's (tests/dotnet/oracle/Program.cs: Derived, DefaultValue, SameValue).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
dotnet_oracle
dotnet_workloads

dotnet_gaps >"$T/gaps" # kinds whose fields we do not decode yet (lib-dotnet.sh)

# Our header facts in the oracle's "key value" form, from nettrace-info's text.
our_header() {
	sed -n -e 's/^Process: *pid \([0-9]*\), \([0-9]*\) processors, \([0-9]*\)-byte pointers.*/pid \1\
processors \2\
pointer_size \3/p' \
		-e 's/^Sync time: *\([^ ]*\) (QPC \([0-9]*\), \([0-9]*\) ticks\/s).*/sync_time \1\
sync_qpc \2\
qpc_frequency \3/p' \
		-e 's/^Sampling interval: *\([0-9]*\) ns.*/sampling_ns \1/p' \
		-e 's/^Events: *\([0-9]*\).*/events \1/p' \
		-e 's/^Lost events: *\([0-9]*\).*/lost \1/p' "$1" | sort
}

# Our names of each kind: "PROVIDER ID VERSION NAME" from the "Events by provider" table.
our_names() {
	awk '/^Events by provider/ { on = 1; next }
		on && NF == 2 { p = $2 }
		on && NF == 4 { print p, $2, $3, $4 }' "$1" | sort
}

check_trace() { # FILE LABEL
	f=$1 l=$2
	run "$NT_ORACLE" header "$f"
	if [ "$rc" -ne 0 ]; then
		fail "$l: TraceEvent reads the trace"; diag "$(cat "$T/err")"
		return
	fi
	sort "$T/out" >"$T/te-header"
	"$INFO" "$f" >"$T/info" 2>"$T/info.err"
	our_header "$T/info" >"$T/our-header"
	same "$T/our-header" "$T/te-header" "$l: header facts and event count as TraceEvent's"

	# payloads, counts per kind (the oracle's diff; known gaps dropped)
	"$INFO" --events "$f" 2>/dev/null | "$NT_ORACLE" diff "$f" >"$T/diff" 2>"$T/diff.err"
	awk 'NR == FNR { gap[$1 " " $2] = 1; next }
		!($1 == "missing" && (($2 " " $3) in gap))' "$T/gaps" "$T/diff" >"$T/diff.left"
	if [ -s "$T/diff.err" ]; then
		fail "$l: every payload field as TraceEvent decodes it"; diag "$(cat "$T/diff.err")"
	elif [ -s "$T/diff.left" ]; then
		fail "$l: every payload field as TraceEvent decodes it"; diag "$(head -n 30 "$T/diff.left")"
	else
		pass "$l: every payload field as TraceEvent decodes it ($(grep -c . "$T/diff") kinds left as known gaps)"
	fi

	# a name wherever TraceEvent has one
	"$NT_ORACLE" names "$f" | sort >"$T/te-names"
	our_names "$T/info" >"$T/our-names"
	awk 'NR == FNR { te[$1 " " $2 " " $3] = $4; next }
		$4 == "-" && (($1 " " $2 " " $3) in te) { print $1, $2, $3, "TraceEvent: " te[$1 " " $2 " " $3] }' \
		"$T/te-names" "$T/our-names" >"$T/unnamed"
	is_empty "$T/unnamed" "$l: every kind TraceEvent names has a name"
}

cd "$TRACES" || exit 1
for f in $TRACE_FILES dotnet10/*.nettrace; do
	[ -f "$f" ] || continue
	if [ "$f" = "$TRUNCATED" ]; then
		# TraceEvent's EventPipeEventSource stops with "Read past end of stream" at the
		# cut instead of delivering the events before it (t621 covers it through
		# TraceLog, which goes on)
		skip "$f: TraceEvent as oracle" "TraceEvent's EventPipeEventSource throws on a truncated stream"
		continue
	fi
	check_trace "$f" "$f"
done

for m in split lock gc exceptions; do
	tr=$T/$m.nettrace
	if ! dotnet_record "$m" "$tr"; then
		fail "nt-workloads $m ran under a file session"; diag "$(cat "$tr.err")"
		continue
	fi
	check_trace "$tr" ".NET 10 $m"
done
done_testing
