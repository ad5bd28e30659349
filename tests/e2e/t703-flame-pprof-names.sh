#!/bin/sh
# SPDX-License-Identifier: MIT
# t703-flame-pprof-names.sh - go tool pprof (the oracle: Go's own pprof) keeps .NET names as
# nettrace-tree prints them: with an empty system_name pprof does not take a signature for
# C++ and shorten it (PipeStream.ReadCore(value class System.Span`1<...>) stayed
# "ReadCore"; two overloads became one row). For every bundled trace with samples, the
# functions of "go tool pprof -top" (every node, by self time in ns) are the functions of
# "nettrace-tree --top" with their self and total times (to the rounding of each stack to whole ns). Skipped
# without go (Debian: golang-go).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
FLAME=$top_builddir/tools/nettrace-flame
need_tool "$FLAME"
if ! command -v go >/dev/null 2>&1 || ! go tool pprof -h >/dev/null 2>&1; then
	skip "go tool pprof -top" "go not found (Debian: golang-go)"
	done_testing
fi
cd "$TRACES" || exit 1
HOME=${HOME:-$T}
export HOME
for tr in $TRACE_FILES; do
	name=$(basename "$tr")
	run "$FLAME" --format pprof -o "$T/p.pb.gz" "$tr"
	is_rc 0 "$name: pprof export exits 0"
	# pprof: "flat flat% sum% cum cum% name" (name may hold spaces), values in ns
	go tool pprof -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 -unit=ns "$T/p.pb.gz" 2>/dev/null |
		awk '/^ *flat  *flat%/ { go = 1; next }
		     go && NF >= 6 { f = $1; c = $4; sub(/ns$/, "", f); sub(/ns$/, "", c)
			n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", n)
			if (f + 0 > 0 || c + 0 > 0) printf "%s\t%s\t%s\n", n, f, c }' | sort >"$T/pprof"
	if [ ! -s "$T/pprof" ]; then
		is "$("$TREE" --top 1 "$tr" 2>/dev/null | grep -c '^Samples:   0$')" 1 "$name: no samples, no pprof node"
		continue
	fi
	"$TREE" --top 1000000 --unit ns "$tr" 2>/dev/null |
		awk '/^Top .* by self/ { go = 1; next } /^$/ { go = 0 }
		     go && /%/ && !/^  self%/ { n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", n)
			printf "%s\t%s\t%s\n", n, $3, $4 }' | sort >"$T/tree"
	cut -f1 "$T/pprof" >"$T/pn"
	cut -f1 "$T/tree" >"$T/tn"
	same "$T/pn" "$T/tn" "$name: go tool pprof -top names the functions as nettrace-tree does ($(wc -l <"$T/tn"))"
	paste "$T/pprof" "$T/tree" | awk -F '\t' '{ d = $2 - $5; e = $3 - $6; if (d < 0) d = -d; if (e < 0) e = -e
		if (d > 2 + 1e-8 * $5 || e > 2 + 1e-8 * $6) bad++ } END { exit bad > 0 }' &&
		pass "$name: and with their self and total times" ||
		{ fail "$name: self and total times"; diag "$(paste "$T/pprof" "$T/tree" | head -3)"; }
done
done_testing
