#!/bin/sh
# SPDX-License-Identifier: MIT
# t302-flame-speedscope.sh - nettrace-flame --format speedscope: the file matches the
# published speedscope file format schema (checked by speedscope-check.js, which needs
# node: skipped without it) and carries nettrace-fold's weights: the thread profiles add up
# to the fold total, each thread's profile to that thread's samples, in every unit; folded
# input gives one profile. The JSON stays valid for hostile frame names. (The time order
# of the samples: t702-flame-timeorder.sh.)
. "$top_srcdir/tests/e2e/lib.sh"
FLAME=$top_builddir/tools/nettrace-flame
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FLAME"
need_tool "$FOLD"
SENTRY=$TRACES/sentry-dotnet/sample.nettrace
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
sum() { awk '{ s += $NF } END { printf "%.0f", s }' "$1"; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

run "$FLAME" --format speedscope -o "$T/s.json" "$SENTRY"
is_rc 0 "speedscope: exit 0"
is "$(head -c 64 "$T/s.json")" '{"$schema":"https://www.speedscope.app/file-format-schema.json",' "starts with the schema"
grep -q '"type":"evented"' "$T/s.json" && fail "sampled profiles only" || pass "sampled profiles only"

if ! command -v node >/dev/null 2>&1; then
	skip "speedscope schema checks" "node not found (Debian: nodejs)"
	done_testing
fi
# schema: every check of speedscope-check.js as a test point
schema() { # DESC FILE
	node "$E2E/speedscope-check.js" "$2" >"$T/chk"
	nfail=$(grep -c '^FAIL' "$T/chk")
	npass=$(grep -c '^PASS' "$T/chk")
	if [ "$nfail" -eq 0 ] && [ "$npass" -gt 10 ]; then
		pass "$1: matches the speedscope schema ($npass checks)"
	else
		fail "$1: matches the speedscope schema"
		diag "$(grep '^FAIL' "$T/chk" | head -n 20)"
	fi
}
profile_sum() { awk -F'\t' -v n="$1" '$1 == "PROFILE " n { print $2 }' "$T/chk"; }
threads_sum() { awk -F'\t' '$1 ~ /^PROFILE Thread / { s += $2 } END { printf "%.0f", s }' "$T/chk"; }

schema "sentry trace" "$T/s.json"
"$FOLD" "$SENTRY" >"$T/f.txt"
# In time order a sample lasts until its thread's next sample at most (t702): the thread
# profiles weigh at most nettrace-fold's total, which gives each sample the inferred interval
# (on this trace 2% less: the samples of a thread come a little closer than the interval).
if awk -v a="$(threads_sum)" -v b="$(sum "$T/f.txt")" 'BEGIN { exit !(a <= b + 10 && a >= 0.95 * b) }'; then
	pass "the thread profiles weigh nettrace-fold's total, cut where a thread's next sample starts"
else
	fail "the thread profiles weigh nettrace-fold's total"
	diag "$(threads_sum) vs $(sum "$T/f.txt")"
fi
grep -q '^PROFILE All threads' "$T/chk" && fail "no All threads profile (it has no time axis)" ||
	pass "no All threads profile (it has no time axis)"
grep -q '"unit":"nanoseconds"' "$T/s.json" && pass "unit nanoseconds" || fail "unit nanoseconds"
is "$(grep -c '^PROFILE Thread (' "$T/chk")" 7 "one profile per thread (7)"

"$FLAME" --format speedscope --unit samples -o "$T/n.json" "$SENTRY"
schema "--unit samples" "$T/n.json"
grep -q '"unit":"none"' "$T/n.json" && pass "--unit samples: unit none" || fail "--unit samples: unit none"
is "$(threads_sum)" 311 "--unit samples: 311 samples in the thread profiles"
"$FOLD" --unit samples --per-thread "$SENTRY" >"$T/t.txt"
awk '{ w = $NF; sub(/;.*/, ""); s[$0] += w } END { for (k in s) print k "\t" s[k] }' "$T/t.txt" | sort >"$T/want"
sed -n 's/^PROFILE \(Thread ([0-9]*)\)\t\([0-9.]*\)\t.*/\1\t\2/p' "$T/chk" | sort >"$T/got"
same "$T/got" "$T/want" "each thread's profile weighs that thread's samples"

"$FLAME" --format speedscope --unit ms --thread 4688 -o "$T/m.json" "$SENTRY"
schema "--unit ms --thread 4688" "$T/m.json"
grep -q '"unit":"milliseconds"' "$T/m.json" && pass "--unit ms: milliseconds" || fail "--unit ms: milliseconds"
is "$(grep -c '^PROFILE' "$T/chk")" 1 "--thread: a single thread's profile"

# two traces: thread profiles carry the session number
"$FLAME" --format speedscope --unit samples -o "$T/2.json" "$PYRO" "$SENTRY"
schema "two traces" "$T/2.json"
is "$(threads_sum)" "$((5564 + 311))" "two traces: all samples"
grep -q '^PROFILE Thread ([0-9]*) \[2\]' "$T/chk" && pass "two traces: [2] on the second's threads" ||
	fail "two traces: [2] on the second's threads"

# folded input: one profile named after the file
"$FOLD" --unit samples "$PYRO" >"$T/p.folded"
"$FLAME" --format speedscope -o "$T/f.json" "$T/p.folded"
schema "folded input" "$T/f.json"
is "$(grep -c '^PROFILE' "$T/chk")" 1 "folded input: one profile"
is "$(profile_sum "$T/p.folded")" 5564 "folded input: the counts"

# hostile names: still valid JSON, names intact
printf 'a"b\\c;\001ctl;caf\303\251;bad\377 3\n' >"$T/x.folded"
"$FLAME" --format speedscope -o "$T/x.json" "$T/x.folded"
schema "hostile names" "$T/x.json"
node -e 'const f = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	const n = f.shared.frames.map((x) => x.name).join("|");
	process.exit(n === "a\"b\\c|\u0001ctl|caf\u00e9|bad\ufffd" ? 0 : 1);' "$T/x.json" &&
	pass "quotes, backslashes, control bytes escaped; invalid UTF-8 replaced" ||
	fail "quotes, backslashes, control bytes escaped; invalid UTF-8 replaced"
done_testing
