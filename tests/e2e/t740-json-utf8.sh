#!/bin/sh
# SPDX-License-Identifier: MIT
# t740-json-utf8.sh - the one JSON escaper (libtrace/json.c) behind the tools: text that is
# not UTF-8 (a BLOB cast to TEXT in nettrace-sql) becomes U+FFFD and control characters
# are escaped, so --json output is valid UTF-8 JSON; python3's strict decoder (when
# installed) is the oracle, the exact bytes are checked as well.
. "$top_srcdir/tests/e2e/lib.sh"
SQL=$top_builddir/tools/nettrace-sql
need_tool "$SQL"
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace

# valid: strict UTF-8 decoding and a JSON parser both accept FILE
valid_json() {
	python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$1" 2>"$T/pyerr"
}

run "$SQL" "$PYRO" --json -q "SELECT CAST(x'ff41' AS TEXT) AS t"
is_rc 0 "nettrace-sql --json: a BLOB cast to TEXT"
if od -An -tx1 "$T/out" | grep -qw ff; then
	fail "no raw 0xFF byte in the JSON"
else
	pass "no raw 0xFF byte in the JSON"
fi
printf '[\n{"t":"\357\277\275A"}\n]\n' >"$T/want"
same "$T/out" "$T/want" "the invalid byte is U+FFFD, the valid one stays"
if command -v python3 >/dev/null 2>&1; then
	valid_json "$T/out"
	is $? 0 "python3 decodes it as strict UTF-8 JSON"
else
	skip "python3 decodes it as strict UTF-8 JSON" "python3 not found"
fi

# truncated and overlong sequences, a lone surrogate (CESU), controls, DEL, quotes
run "$SQL" "$PYRO" --json -q "SELECT CAST(x'c3' AS TEXT) AS a, CAST(x'c0af' AS TEXT) AS b, \
CAST(x'eda080' AS TEXT) AS c, 'q\"' || char(92) || char(10) || char(9) || char(13) || char(1) || char(127) AS d, \
CAST(x'e282ac' AS TEXT) AS e"
is_rc 0 "nettrace-sql --json: malformed UTF-8 of several kinds"
printf '[\n{"a":"\357\277\275","b":"\357\277\275\357\277\275","c":"\357\277\275\357\277\275\357\277\275","d":"q\\"\\\\\\n\\t\\r\\u0001\\u007f","e":"\342\202\254"}\n]\n' >"$T/want"
same "$T/out" "$T/want" "each invalid byte is U+FFFD, controls escaped, the euro sign kept"
if command -v python3 >/dev/null 2>&1; then
	valid_json "$T/out"
	is $? 0 "python3 decodes it as strict UTF-8 JSON"
else
	skip "python3 decodes it as strict UTF-8 JSON" "python3 not found"
fi
done_testing
