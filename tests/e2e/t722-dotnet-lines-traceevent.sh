#!/bin/sh
# SPDX-License-Identifier: MIT
# t722-dotnet-lines-traceevent.sh - libnettrace's managed source lines against TraceEvent's
# own lookup (TraceCodeAddress.GetSourceLine through its SymbolReader, in
# tests/dotnet/lines-oracle) on the same .NET 10 trace of the split workload: for every
# frame address both resolve, the same file, and the same line within one (TraceEvent
# interpolates IL offsets between map entries and steps one IL byte back, libnettrace takes
# the map entry at or before the native offset and looks callers up at the call).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
SQL=$top_builddir/tools/nettrace-sql
need_tool "$SQL"
dotnet_workloads
if ! dotnet_build_project lines-oracle; then
	echo "Bail out! dotnet build of tests/dotnet/lines-oracle (TraceEvent) failed"
	exit 1
fi
ORACLE=$DOTNET_BUILD/lines-oracle/out/nt-lines-oracle

tr=$T/split.nettrace
if dotnet_record split "$tr" 2; then
	pass "nt-workloads split ran under a file session"
else
	fail "nt-workloads split ran under a file session"; diag "$(cat "$tr.err")"
fi
cp "$tr" "$T/te.nettrace" # TraceEvent writes its .etlx beside the file
if "$ORACLE" "$T/te.nettrace" "$(dirname "$NT_WORKLOADS")" >"$T/te" 2>"$T/te.err"; then
	pass "TraceEvent resolves the trace's managed lines ($(wc -l <"$T/te") frames)"
else
	fail "TraceEvent resolves the trace's managed lines"; diag "$(tail -n 5 "$T/te.err")"
fi
run "$SQL" --csv "$tr" -q "SELECT printf('%x', address), line, file FROM frame_names
	WHERE line IS NOT NULL AND file LIKE '%.cs'"
tail -n +2 "$T/out" >"$T/ours"
# Addresses TraceEvent saw in one role only (leaf or caller): the store keeps one line per
# address. Line 0 from TraceEvent is no line (its lookup found no sequence point there):
# such a frame is not one both resolve.
awk 'NR == FNR { split($0, a, ","); line[a[1]] = a[2]; n = split(a[3], p, "/"); file[a[1]] = p[n]; next }
	{ cnt[$1]++; tl[$1] = $3; tf[$1] = $4; leaf[$1] = $2 }
	END {
		for (k in cnt) {
			if (cnt[k] != 1 || !(k in line) || tl[k] == 0) continue
			both++; d = line[k] - tl[k]
			if (file[k] == tf[k]) samefile++
			if (d == 0) eq++
			if (d >= -1 && d <= 1) near++
			else printf "far %s leaf=%s ours %s TraceEvent %s\n", k, leaf[k], line[k], tl[k] > "/dev/stderr"
			if (leaf[k] == 0) { callers++; if (d == 0) ceq++ }
		}
		printf "%d %d %d %d %d %d\n", both, samefile, eq, near, callers, ceq
	}' "$T/ours" "$T/te" >"$T/cmp" 2>"$T/far"
read -r both samefile eq near callers ceq <"$T/cmp"
if [ "${both:-0}" -ge 10 ] && [ "$samefile" -eq "$both" ]; then
	pass "the same source file for all $both frames both resolve"
else
	fail "the same source file for all frames both resolve ($samefile of $both)"
fi
if [ "${both:-0}" -ge 10 ] && [ $((near * 100)) -ge $((both * 85)) ]; then
	pass "lines agree within one for $near of $both frames ($eq exactly; callers: $ceq of $callers exactly)"
else
	fail "lines agree within one for $near of $both frames (>= 85 %; $eq exactly)"
fi
[ -s "$T/far" ] && diag "$(cat "$T/far")"
done_testing
