#!/bin/sh
# SPDX-License-Identifier: MIT
# t010-info-json.sh - "nettrace-info --json" on every real trace of data/traces equals its
# golden file expected/t010-info-json/<dir>/<name>.json (the numbers in those files were
# checked against data/traces/EXPECTED.md; t011 re-checks them mechanically). The output
# must be valid JSON, stderr empty (the truncated trace: one warning line), exit code 0.
. "$top_srcdir/tests/e2e/lib.sh"
need_tool "$INFO"

cd "$TRACES" || exit 1  # relative paths keep the "file" member machine-independent
for f in $TRACE_FILES; do
	want=$EXPECTED/t010-info-json/${f%.nettrace}.json
	run "$INFO" --json "$f"
	is_rc 0 "--json $f exits 0"
	if [ "$f" = "$TRUNCATED" ]; then
		is "$(wc -l <"$T/err" | tr -d ' ')" 1 "--json $f: one warning line"
	else
		is_empty "$T/err" "--json $f: nothing on stderr"
	fi
	if flatten "$T/out" "$T/flat" 2>"$T/ferr"; then
		pass "--json $f: valid JSON"
	else
		fail "--json $f: valid JSON"
		diag "$(cat "$T/ferr")"
	fi
	# A second, independent JSON parser when the machine has one.
	if command -v jq >/dev/null 2>&1; then
		jq -e . "$T/out" >/dev/null 2>&1
		is $? 0 "--json $f: jq parses it"
	elif command -v python3 >/dev/null 2>&1; then
		python3 -m json.tool "$T/out" >/dev/null 2>&1
		is $? 0 "--json $f: python3 -m json.tool parses it"
	else
		skip "--json $f: a second JSON parser accepts it" "neither jq nor python3 found"
	fi
	golden "$T/out" "$want" "--json $f equals ${want#"$top_srcdir"/}"
done
done_testing
