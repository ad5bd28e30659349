#!/bin/sh
# SPDX-License-Identifier: MIT
# t014-info-text.sh - the human summary (golden files for a small trace and for one with
# samples and many providers), and several FILE operands: text summaries separated by a
# blank line, --json as an array whose elements equal the single-file objects.
. "$top_srcdir/tests/e2e/lib.sh"
need_tool "$INFO"
cd "$TRACES" || exit 1

run "$INFO" "$CHECKPOINTS"
is_rc 0 "$CHECKPOINTS exits 0"
is_empty "$T/err" "$CHECKPOINTS: nothing on stderr"
golden "$T/out" "$EXPECTED/t014-info-text-checkpoints.out" "summary of $CHECKPOINTS equals its golden file"
cp "$T/out" "$T/one"

f=sentry-dotnet/sample.nettrace
run "$INFO" "$f"
is_rc 0 "$f exits 0"
golden "$T/out" "$EXPECTED/t014-info-text-sentry.out" "summary of $f equals its golden file"
cp "$T/out" "$T/two"

run "$INFO" "$CHECKPOINTS" "$f"
is_rc 0 "two files exit 0"
{ cat "$T/one"; echo; cat "$T/two"; } >"$T/want"
same "$T/out" "$T/want" "two files: both summaries, separated by a blank line"

# --json with several files: one array; element i equals the single-file object.
run "$INFO" --json "$CHECKPOINTS" "$f"
is_rc 0 "--json with two files exits 0"
if flatten "$T/out" "$T/flat"; then
	pass "--json with two files: valid JSON"
else
	fail "--json with two files: valid JSON"
fi
i=0
for g in "$CHECKPOINTS" "$f"; do
	"$INFO" --json "$g" >"$T/single" 2>/dev/null
	flatten "$T/single" "$T/sflat"
	sed "s/^/[$i]/; s/^\[$i\]\([^[]\)/[$i].\1/" "$T/sflat" >"$T/want"
	grep "^\[$i\]" "$T/flat" >"$T/got"
	same "$T/got" "$T/want" "--json with two files: element $i equals --json $g"
	i=$((i + 1))
done
head -c 1 "$T/out" >"$T/first"
is "$(cat "$T/first")" "[" "--json with two files: the output is an array"
done_testing
