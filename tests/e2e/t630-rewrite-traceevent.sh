#!/bin/sh
# SPDX-License-Identifier: MIT
# t630-rewrite-traceevent.sh - TraceEvent reads what our writer writes: every real trace of
# data/traces (and data/traces/dotnet10/, when present), a fresh .NET 10 recording and a
# recording of our sampler (nettrace-record) are rewritten by libtrace/writer.c as V5 and
# as V6 (tests/rewrite), and TraceEvent (tests/dotnet/oracle) must read each rewrite with
# the same header facts, the same events (timestamp, thread, provider, id, version, every
# payload field, name, opcode, level, keywords, processor, activity ids) and the same
# stacks (every address, by timestamp and thread) and thread-time stacks
# (SampleProfilerThreadTimeComputer, as dotnet-trace convert runs it) as the original;
# then TraceEvent on the rewrite against our own tools on it (`nettrace-info --events
# [--stacks]`).
#
# What TraceEvent cannot show (doc/format/nettrace-format.md §12.1, "What TraceEvent sees of our
# files"):
#  - processor numbers in V4/V5: TraceEvent gives an event the processor of its header
#    only when the event's thread is the thread that wrote it (and otherwise keeps
#    whatever the previous event of that kind had, 0 at first), so sample events, written
#    by the sampler thread about other threads, all show 0. From V6 it shows the number
#    of every event: the V6 comparison checks those against nettrace-info's instead of
#    against TraceEvent's reading of the V4/V5 original.
#  - the sampler's native frames: TraceEvent gets the addresses right but names none of
#    them ("?!?": it learns modules from the runtime's rundown and ETW image loads, not
#    from our ModuleMap events, which it decodes as plain events).
#  - a truncated original: TraceEvent stops with "Read past end of stream" some events
#    before the cut; its events are compared as a subset of the rewrite, which holds
#    every complete event we read.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
REWRITE=$top_builddir/tests/rewrite
need_tool "$INFO"
need_tool "$REWRITE"
dotnet_oracle
dotnet_gaps >"$T/gaps"

# our_procs FILE: "TS TID PROC" per event from nettrace-info, unknown processors as 0
# (TraceEvent's value for them)
our_procs() {
	"$INFO" --events "$1" 2>/dev/null | awk '/^\[/ {
		ts = $2; sub(/^ts=/, "", ts); t = p = ""
		for (i = 3; i <= NF; i++) {
			if ($i ~ /^tid=/) t = substr($i, 5)
			if ($i ~ /^proc=/) { p = substr($i, 6); break }
		}
		if (p == "-") p = 0
		print ts, t, p }' | sort
}
te_procs() { # FULL-LINES -> "TS TID PROC"
	awk '!/^#/ { for (i = NF; i > 0; i--) if ($i ~ /^proc=/) { print $1, $2, substr($i, 6); break } }' "$1" | sort
}
no_proc() { # FULL-LINES -> the lines without their proc= field, sorted
	sed 's/ proc=[0-9-]* / /' "$1" | sort
}

# our_stacked FILE: `nettrace-info --events --stacks` without the events whose stacks
# TraceEvent drops: it never gives a stack to the rundown provider's events nor to the
# runtime's method events 140-144 and 190 (MethodLoad...MethodILToNativeMap), whose stacks
# it calls bookkeeping
our_stacked() {
	"$INFO" --events --stacks "$1" 2>/dev/null | awk '
		/^\[/ { pn = $3; id = pn; sub(/\/.*/, "", pn); sub(/.*\(id=/, "", id); sub(/,.*/, "", id)
			drop = pn == "Microsoft-Windows-DotNETRuntimeRundown" ||
			    (pn == "Microsoft-Windows-DotNETRuntime" && ((id >= 140 && id <= 144) || id == 190)) }
		!drop'
}

# Every trace: "LABEL|FILE|TRUNCATED|FORMATS" lines; the rewrites are $T/N.v5, $T/N.v6.
: >"$T/list"
cd "$TRACES" || exit 1
for f in $TRACE_FILES dotnet10/*.nettrace; do
	[ -f "$f" ] || continue
	vers="5 6"
	case $f in *collect-linux*)
		# machine-wide Universal events: their fields are varints, which V5 has not
		vers=6
		skip "$f: rewritten as V5" "V5 has no varint fields (Universal events)" ;;
	esac
	cut=0
	[ "$f" = "$TRUNCATED" ] && cut=1
	echo "$f|$TRACES/$f|$cut|$vers" >>"$T/list"
done
cd "$T" || exit 1

# a fresh .NET 10 recording (newer event versions than data/traces holds)
dotnet_workloads
if dotnet_record gc "$T/gc.nettrace"; then
	echo ".NET 10 gc|$T/gc.nettrace|0|5 6" >>"$T/list"
else
	fail "nt-workloads gc ran under a file session"; diag "$(cat "$T/gc.nettrace.err")"
fi

# our sampler's recording of a native program (none with configure --disable-sampler)
if sampler_built; then
	. "$top_srcdir/tests/e2e/lib-record.sh"
	run "$RECORD" -q -F 500 -o "$T/rec.nettrace" -- "$WORK" split 0.3
	if [ "$rc" -eq 0 ]; then
		echo "nettrace-record|$T/rec.nettrace|0|5 6" >>"$T/list"
	else
		fail "nettrace-record recorded nts-work"; diag "$(cat "$T/err")"
	fi
else
	skip "nettrace-record recorded nts-work" "the sampler is not built (configure --disable-sampler)"
fi

# Rewrite everything, then let one oracle process read it all (a TraceEvent start-up
# per file would cost more than the reading).
n=0
: >"$T/batch"
while IFS='|' read -r l f cut vers; do
	n=$((n + 1))
	echo "full $f $T/$n.o.full" >>"$T/batch"
	echo "stacks $f $T/$n.o.stacks" >>"$T/batch"
	[ "$cut" = 0 ] && echo "threadtime $f $T/$n.o.tt" >>"$T/batch"
	for v in $vers; do
		rw=$T/$n.v$v
		if "$REWRITE" -f "$v" "$f" "$rw" 2>"$rw.err"; then
			"$INFO" --events "$rw" >"$rw.ours" 2>/dev/null
			echo "full $rw $rw.full" >>"$T/batch"
			echo "stacks $rw $rw.stacks" >>"$T/batch"
			[ "$cut" = 0 ] && echo "threadtime $rw $rw.tt" >>"$T/batch"
			echo "diff $rw $rw.diff $rw.ours" >>"$T/batch"
			our_stacked "$rw" >"$rw.ourst"
			echo "ourstacks - $rw.our.stacks $rw.ourst" >>"$T/batch"
		fi
	done
done <"$T/list"
[ -f "$T/rec.nettrace" ] && echo "threadtime $T/rec.nettrace $T/rec.tt" >>"$T/batch"
"$NT_ORACLE" batch <"$T/batch" 2>"$T/batch.err"

n=0
while IFS='|' read -r l f cut vers; do
	n=$((n + 1))
	o=$T/$n.o
	if [ -f "$o.full.err" ] && [ "$cut" = 0 ]; then
		fail "$l: TraceEvent reads the original"; diag "$(cat "$o.full.err")"
		continue
	fi
	sort "$o.full" >"$o.sorted"
	sort "$o.stacks" >"$o.ssorted"
	our_procs "$f" >"$o.procs"
	for v in $vers; do
		r=$T/$n.v$v
		if [ -s "$r.err" ] || [ ! -f "$r" ]; then
			fail "$l: rewritten as V$v"; diag "$(cat "$r.err")"
			continue
		fi
		if [ -f "$r.full.err" ]; then
			fail "$l V$v: TraceEvent reads our rewrite"; diag "$(cat "$r.full.err")"
			continue
		fi
		sort "$r.full" >"$r.sorted"
		sort "$r.stacks" >"$r.ssorted"
		k=$(grep -vc '^#' "$r.full")
		if [ "$cut" = 1 ]; then
			# TraceEvent's events of the truncated original: all in the rewrite
			grep -v '^#' "$o.sorted" | comm -23 - "$r.sorted" >"$T/lost"
			is_empty "$T/lost" "$l V$v: TraceEvent's events of the original, all in the rewrite (of $k)"
			comm -23 "$o.ssorted" "$r.ssorted" >"$T/lost"
			is_empty "$T/lost" "$l V$v: TraceEvent's stacks of the original, all in the rewrite"
			want=$("$INFO" "$f" 2>/dev/null | sed -n 's/^Events: *\([0-9]*\).*/\1/p')
			is "$k" "$want" "$l V$v: TraceEvent reads every event we read in the original"
		elif [ "$v" = 5 ]; then
			same "$r.sorted" "$o.sorted" "$l V5: TraceEvent reads the same header, events, payloads and threads ($k events)"
			same "$r.ssorted" "$o.ssorted" "$l V5: TraceEvent reads the same stacks ($(grep -c . "$r.stacks"))"
		else
			no_proc "$r.sorted" >"$r.np"
			no_proc "$o.sorted" >"$o.np"
			same "$r.np" "$o.np" "$l V6: TraceEvent reads the same header, events, payloads and threads ($k events)"
			same "$r.ssorted" "$o.ssorted" "$l V6: TraceEvent reads the same stacks ($(grep -c . "$r.stacks"))"
		fi
		if [ "$cut" = 0 ]; then
			# what dotnet-trace convert makes of it: thread-time stacks, method names
			# (from the rundown we copied) included
			same "$r.tt" "$o.tt" "$l V$v: TraceEvent's thread-time stacks are the original's ($(grep -c . "$r.tt") stacks)"
		fi
		if [ "$v" = 6 ]; then
			te_procs "$r.full" >"$r.procs"
			same "$r.procs" "$o.procs" "$l V6: TraceEvent's processor of each event is ours"
		fi

		# TraceEvent on the rewrite against our tools on it
		awk 'NR == FNR { gap[$1 " " $2] = 1; next }
			!($1 == "missing" && (($2 " " $3) in gap))' "$T/gaps" "$r.diff" >"$r.left"
		[ -f "$r.diff.err" ] && cat "$r.diff.err" >>"$r.left"
		is_empty "$r.left" "$l V$v: nettrace-info reads the rewrite as TraceEvent does"
		sort "$r.our.stacks" >"$r.our.ssorted"
		same "$r.our.ssorted" "$r.ssorted" "$l V$v: nettrace-info's stacks of the rewrite are TraceEvent's"
	done
done <"$T/list"

# TraceEvent has the sampler's addresses but no name for them (see above): a fact to show,
# not to hold against either side
[ -f "$T/rec.tt" ] && diag "TraceEvent's thread time of the sampler's trace: $(head -n 1 "$T/rec.tt")"
done_testing
