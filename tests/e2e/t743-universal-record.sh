#!/bin/sh
# SPDX-License-Identifier: MIT
# t743-universal-record.sh - nettrace-record --format universal writes a recorded native
# program as Universal events (cpu samples, ProcessMapping with the build id,
# ProcessSymbol per sampled address): TraceEvent (tests/dotnet/universal) opens it with
# >= 99% of the native frames named, and its stacks are the ones our tools read from the
# same file; the default format is still the SampleProfiler one.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
FOLD=$top_builddir/tools/nettrace-fold
INFO=$top_builddir/tools/nettrace-info
need_tool "$FOLD"

U=$T/u.nettrace
run "$RECORD" -F 500 --format universal -q -o "$U" -- "$WORK" split 1
is_rc 0 "nettrace-record --format universal records nts-work"
run "$INFO" "$U"
grep -q '^Format: *nettrace V6' "$T/out" && grep -q 'ProcessSymbol' "$T/out" &&
	grep -q 'nts-work$' "$T/out"
is $? 0 "a V6 trace with Universal events, ProcessSymbol, and the process named nts-work"
run "$FOLD" "$U" --unit samples
is_rc 0 "nettrace-fold reads it"
cp "$T/out" "$T/ours"
grep -q 'nts-work!run_split;nts-work!caller_a;nts-work!leaf_a ' "$T/ours"
is $? 0 "our tools name the frames (caller_a <- leaf_a)"
run "$RECORD" -F 200 -q -o "$T/n.nettrace" -- "$WORK" split 1
run "$INFO" "$T/n.nettrace"
grep -q '^Format: *nettrace V4/V5' "$T/out" && grep -q 'Microsoft-DotNETCore-SampleProfiler' "$T/out"
is $? 0 "the default format is unchanged (V5 SampleProfiler)"

. "$top_srcdir/tests/e2e/lib-dotnet.sh"
if ! command -v dotnet >/dev/null 2>&1; then
	skip "TraceEvent names >= 99% of the native frames" "dotnet is not installed"
	skip "TraceEvent's stacks are ours" "dotnet is not installed"
	done_testing
fi
if ! dotnet_build_project universal; then
	skip "TraceEvent names >= 99% of the native frames" "the TraceEvent check did not build"
	skip "TraceEvent's stacks are ours" "the TraceEvent check did not build"
	done_testing
fi
run "$DOTNET_BUILD/universal/out/nt-universal-check" "$U"
is_rc 0 "TraceEvent reads the recording"
awk -F '\t' '$1 == "cpu" { n = split($6, f, ";"); for (i = 1; i <= n; i++) { t++; if (f[i] ~ /!\?$/) u++ } }
	END { printf "%d %d\n", t, u }' "$T/out" >"$T/named"
read -r total unnamed <"$T/named"
ok=$(awk -v t="$total" -v u="$unnamed" 'BEGIN { print (t > 1000 && (t - u) >= 0.99 * t) ? 1 : 0 }')
is "$ok" 1 "TraceEvent names >= 99% of the native frames ($unnamed of $total unnamed)"
# the same stacks: unnamed frames as "?" (TraceEvent's "module!?", our "module+0xOFFSET":
# e.g. libc's signal-return code, where a perf_events sample can land while the first
# round's signal handler runs), module names without case
norm() {
	awk '{ w = $NF; sub(/ [^ ]*$/, ""); n = split($0, f, ";"); s = "";
	       for (i = 1; i <= n; i++) { if (f[i] ~ /!\?$/ || f[i] == "?!?" || f[i] ~ /^[^!]*\+0x[0-9a-f]+$/) f[i] = "?";
	           k = index(f[i], "!"); if (k) f[i] = tolower(substr(f[i], 1, k - 1)) substr(f[i], k);
	           s = s (i > 1 ? ";" : "") f[i] }
	       print s, w }' | LC_ALL=C sort
}
awk -F '\t' '$1 == "cpu" { w[$6] += $5 } END { for (k in w) print k, w[k] }' "$T/out" | norm >"$T/want"
norm <"$T/ours" >"$T/got"
same "$T/got" "$T/want" "TraceEvent's stacks and counts are ours"
done_testing
