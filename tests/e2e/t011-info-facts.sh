#!/bin/sh
# SPDX-License-Identifier: MIT
# t011-info-facts.sh - the figures of "nettrace-info --json" for every real trace match the
# facts transcribed from data/traces/EXPECTED.md into expected/t011-info-facts/*.facts:
# header fields, block counts, metadata records, events, sorted events, stacks, max
# depth, samples by type, sampled and capture threads, and the complete raw event count
# table keyed by (provider, event id, metadata version). Independent of the golden files.
. "$top_srcdir/tests/e2e/lib.sh"
need_tool "$INFO"

cd "$TRACES" || exit 1
for f in $TRACE_FILES; do
	facts=$EXPECTED/t011-info-facts/${f%.nettrace}.facts
	if [ ! -f "$facts" ]; then
		fail "$f: facts file ${facts#"$top_srcdir"/} exists"
		continue
	fi
	run "$INFO" --json "$f"
	is_rc 0 "--json $f exits 0"
	if ! flatten "$T/out" "$T/flat"; then
		fail "--json $f: valid JSON"
		continue
	fi
	# Scalar facts: "KEY VALUE" must appear as "KEY<TAB>VALUE".
	grep -v -e '^#' -e '^event ' -e '^name ' -e '^$' "$facts" |
		awk '{ k = $1; sub(/^[^ ]+ /, ""); print k "\t" $0 }' >"$T/want-scalars"
	n=0
	bad=
	while IFS= read -r line; do
		n=$((n + 1))
		if ! grep -q -x -F -e "$line" "$T/flat"; then
			key=${line%%"	"*}
			got=$(grep "^$key	" "$T/flat" | cut -f2)
			bad="$bad$key: want ${line#*"	"}, got ${got:-(missing)}
"
		fi
	done <"$T/want-scalars"
	if [ -z "$bad" ] && [ "$n" -gt 20 ]; then
		pass "$f: $n header and count figures match EXPECTED.md"
	else
		fail "$f: $n header and count figures match EXPECTED.md"
		diag "$(printf "%s" "$bad")"
	fi
	# Event tables: "event P ID VER COUNT" and "name P ID VER NAME" from the JSON.
	awk -F '\t' '
		{ n = split($1, p, /[^A-Za-z0-9_]+/) }
		n == 3 && p[1] == "providers" && p[3] == "name" { prov[p[2]] = $2 }
		n == 5 && p[1] == "providers" && p[3] == "events" { v[p[2], p[4], p[5]] = $2; m[p[2], p[4]] = 1 }
		END {
			for (k in m) {
				split(k, ij, SUBSEP)
				name = v[ij[1], ij[2], "name"]
				pn = prov[ij[1]]
				gsub(/^"|"$/, "", name)
				gsub(/^"|"$/, "", pn)
				print "event", pn, v[ij[1], ij[2], "id"], v[ij[1], ij[2], "version"], v[ij[1], ij[2], "count"]
				print "name", pn, v[ij[1], ij[2], "id"], v[ij[1], ij[2], "version"], name
			}
		}' "$T/flat" >"$T/rows"
	grep '^event ' "$T/rows" | sort >"$T/got-events"
	grep '^event ' "$facts" | sort >"$T/want-events"
	if cmp -s "$T/got-events" "$T/want-events"; then
		pass "$f: raw event counts ($(wc -l <"$T/want-events" | tr -d ' ') rows) match EXPECTED.md"
	else
		fail "$f: raw event counts match EXPECTED.md"
		diag "$(diff "$T/want-events" "$T/got-events")"
	fi
	grep '^name ' "$facts" | sort >"$T/want-names"
	if [ -s "$T/want-names" ]; then
		if [ -z "$(sort "$T/rows" | comm -13 - "$T/want-names")" ]; then
			pass "$f: event names match EXPECTED.md"
		else
			fail "$f: event names match EXPECTED.md"
			diag "$(sort "$T/rows" | comm -13 - "$T/want-names")"
		fi
	fi
done
done_testing
