#!/bin/sh
# SPDX-License-Identifier: MIT
# t742-universal-traceevent.sh - TraceEvent (4.0.0, whose NettraceUniversalConverter
# reads the Universal providers; tests/dotnet/universal) and our tools read the same
# Universal traces of tests/mkuniversal: the same samples, weights (cpu Value x 1 ms,
# cswitch Value ticks), stacks and frame names per process, and the same process names.
# Module names are compared without case (TraceEvent lowercases the JIT'd code's module).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
FOLD=$top_builddir/tools/nettrace-fold
INFO=$top_builddir/tools/nettrace-info
MK=$top_builddir/tests/mkuniversal
need_tool "$FOLD"
need_tool "$INFO"
need_tool "$MK"
if ! dotnet_build_project universal; then
	echo "1..0 # SKIP the TraceEvent check did not build (no NuGet access for TraceEvent 4.0.0?)"
	exit 0
fi
CHECK=$DOTNET_BUILD/universal/out/nt-universal-check

# lower-case the module part of each frame ("Module!method") of folded lines
lcmod() {
	awk '{ w = $NF; sub(/ [^ ]*$/, ""); n = split($0, f, ";"); s = "";
	       for (i = 1; i <= n; i++) { k = index(f[i], "!");
	           if (k) f[i] = tolower(substr(f[i], 1, k - 1)) substr(f[i], k);
	           s = s (i > 1 ? ";" : "") f[i] }
	       print s, w }' | LC_ALL=C sort
}

U=$T/u.nettrace
"$MK" "$U" || { echo "Bail out! mkuniversal failed"; exit 1; }
run "$CHECK" "$U"
is_rc 0 "TraceEvent converts and reads the trace"
cp "$T/out" "$T/te"
n=$(grep -c '^cpu' "$T/te")
is "$n" 75 "TraceEvent sees the 75 cpu events"

# cpu: TraceEvent's stacks with Value x 1 ms, against nettrace-fold
awk -F '\t' '$1 == "cpu" { w[$6] += $5 * 1000000 } END { for (k in w) print k, w[k] }' "$T/te" |
	lcmod >"$T/want"
"$FOLD" "$U" | lcmod >"$T/got"
same "$T/got" "$T/want" "cpu samples: same stacks, names and weights as TraceEvent"

# thread time: cpu plus cswitch off-CPU ticks (1 GHz: ns)
awk -F '\t' '$1 == "cpu" { w[$6] += $5 * 1000000 } $1 == "cswitch" { w[$6] += $5 }
	END { for (k in w) print k, w[k] }' "$T/te" | lcmod >"$T/want"
"$FOLD" "$U" --thread-time | lcmod >"$T/got"
same "$T/got" "$T/want" "--thread-time: cswitch blocked time at the same stacks as TraceEvent"

# per process
for pid in 100 200; do
	awk -F '\t' -v p=$pid '$1 == "cpu" && $2 == p { w[$6] += $5 * 1000000 }
		END { for (k in w) print k, w[k] }' "$T/te" | lcmod >"$T/want"
	"$FOLD" "$U" --pid $pid | lcmod >"$T/got"
	same "$T/got" "$T/want" "--pid $pid: the samples TraceEvent gives process $pid"
done

# process names
grep '^process ' "$T/te" | awk '{ print $2, $3 }' | LC_ALL=C sort >"$T/want"
"$INFO" "$U" | grep -A100 '^Processes' | awk 'NR > 2 && NF { print $1, $NF }' | LC_ALL=C sort >"$T/got"
same "$T/got" "$T/want" "nettrace-info's process names are TraceEvent's"
done_testing
