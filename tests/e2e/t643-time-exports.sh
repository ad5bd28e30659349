#!/bin/sh
# SPDX-License-Identifier: MIT
# t643-time-exports.sh - every export uses the same categories and totals: on the .NET Core
# 3.0 trace (GC pauses charged as gc, samples of several categories) the per-category time
# of nettrace-fold (--category-frame root) is that of the tree header, the SQLite store,
# the SVG legend, pprof's category label (read by `go tool pprof -tags`) and, in total,
# speedscope's and callgrind's. On a recording of the sampler, the thread names are in
# pprof's thread_name label too.
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
FLAME=$top_builddir/tools/nettrace-flame
SQL=$top_builddir/tools/nettrace-sql
need_tool "$FOLD"
need_tool "$TREE"
need_tool "$FLAME"
F=$TRACES/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace

"$FOLD" --category-frame root "$F" >"$T/fold"
awk -F';' '{ n = split($0, w, " "); c = $1; gsub(/[][]/, "", c); s[c] += w[n]; t += w[n] }
	END { for (c in s) printf "%s %.0f\n", c, s[c]; printf "total %.0f\n", t }' "$T/fold" | sort >"$T/want"
total=$(awk '$1 == "total" { print $2 }' "$T/want")
grep -q '^gc ' "$T/want" && pass "fold: the trace has gc time" || fail "fold: the trace has gc time"

# cmp_cats NAME FILE: FILE has "CATEGORY NS" lines equal to fold's (0.01% each)
cmp_cats() {
	if awk 'NR == FNR { w[$1] = $2; next } $1 != "total" { g[$1] = $2 }
		END { for (c in w) { if (c == "total") continue; d = g[c] - w[c]; if (d < 0) d = -d
			if (d > 1e-4 * w[c] + 1000) { bad++; printf "# %s: %s vs %s\n", c, g[c], w[c] } }
		      for (c in g) if (!(c in w)) bad++
		      exit bad > 0 }' "$T/want" "$2" >"$T/cmp"; then
		pass "$1: the same time per category as nettrace-fold"
	else
		fail "$1: the same time per category as nettrace-fold"; diag "$(cat "$T/cmp")"
	fi
}
unit_ns() { awk '{ m = $2 == "s" ? 1e9 : $2 == "ms" ? 1e6 : $2 == "us" ? 1e3 : 1; printf "%.0f\n", $1 * m }'; }

# tree header (ms precision: 3 decimals of an auto unit)
"$TREE" --by-category --depth 1 "$F" >"$T/tree"
sed -n 's/^Categories: //p' "$T/tree" | tr ',' '\n' |
	sed -n 's/^ *\([a-z]*\) [0-9.]*% (\([0-9.]*\) \([a-z]*\))$/\1 \2 \3/p' |
	while read -r c v u; do printf '%s %s\n' "$c" "$(echo "$v $u" | unit_ns)"; done | sort >"$T/tree.cats"
# the tree prints 6 significant digits: compare at 0.01% + 1 ms
if awk 'NR == FNR { w[$1] = $2; next } { d = $2 - w[$1]; if (d < 0) d = -d; if (d > 1e-4 * w[$1] + 1e6) bad++; n++ }
	END { exit !(n > 0 && !bad) }' "$T/want" "$T/tree.cats"; then
	pass "tree header: the same time per category as nettrace-fold"
else
	fail "tree header: the same time per category as nettrace-fold"; diag "$(cat "$T/tree.cats")"
fi

# SQLite
if [ -x "$SQL" ] && command -v sqlite3 >/dev/null 2>&1; then
	"$SQL" -o "$T/db" "$F" >/dev/null 2>&1
	sqlite3 "$T/db" "SELECT category, ROUND(SUM(weight_ns)) FROM sample_groups GROUP BY category" |
		tr '|' ' ' | awk '{ printf "%s %.0f\n", $1, $2 }' | sort >"$T/sql.cats"
	cmp_cats "SQL sample_groups" "$T/sql.cats"
else
	skip "SQL: nettrace-sql or sqlite3 missing"
fi

# SVG legend: shares to 0.1%
"$FLAME" -o "$T/f.svg" "$F"
grep -o '<g id="legend">.*</g>' "$T/f.svg" | grep -o '<text [^>]*>[a-z]* [0-9.]*%</text>' |
	sed 's/<[^>]*>//g' | tr -d '%' | sort >"$T/svg.cats"
if awk -v t="$total" 'NR == FNR { w[$1] = 100 * $2 / t; next } { d = $2 - w[$1]; if (d < 0) d = -d; if (d > 0.051) bad++; n++ }
	END { exit !(n > 0 && !bad) }' "$T/want" "$T/svg.cats"; then
	pass "SVG legend: the categories' shares of nettrace-fold"
else
	fail "SVG legend: the categories' shares of nettrace-fold"; diag "$(cat "$T/svg.cats")"
fi

# speedscope and callgrind: the total
if command -v jq >/dev/null 2>&1; then
	"$FLAME" --format speedscope -o "$T/s.json" "$F"
	# per-thread profiles in time order, each sample lasting until its thread's next one
	# (nettrace-flame(1)), with empty samples for the gaps: the others weigh fold's total,
	# or up to 10% less
	ss=$(jq '[.profiles[] | [.samples, .weights] | transpose[] | select(.[0] | length > 0) | .[1]] | add' "$T/s.json")
	# the GC time charged at a thread's last stack without a sample is laid out at the
	# pause's time: it counts as well
	if awk -v a="$ss" -v b="$total" 'BEGIN { exit !(a <= b * (1 + 1e-6) + 1000 && a >= 0.9 * b) }'; then
		pass "speedscope: the threads' profiles weigh nettrace-fold's total (time axis: up to 10% less)"
	else
		fail "speedscope: the threads' profiles weigh nettrace-fold's total ($ss vs $total)"
	fi
else
	skip "speedscope: jq missing"
fi
"$FLAME" --format callgrind -o "$T/c.cg" "$F"
cg=$(sed -n 's/^summary: //p' "$T/c.cg")
if awk -v a="$cg" -v b="$total" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * b + 1000) }'; then
	pass "callgrind: the summary is nettrace-fold's total"
else
	fail "callgrind: the summary is nettrace-fold's total ($cg vs $total)"
fi

# pprof, read by go tool pprof
if command -v go >/dev/null 2>&1; then
	HOME=$T GOCACHE=$T/gocache PPROF_TMPDIR=$T GOFLAGS= GOTOOLCHAIN=local
	export HOME GOCACHE PPROF_TMPDIR GOFLAGS GOTOOLCHAIN
	"$FLAME" --format pprof -o "$T/p.pb.gz" "$F"
	go tool pprof -tags -sample_index=time -unit=ns "$T/p.pb.gz" >"$T/tags" 2>"$T/tags.err"
	awk '/^ *category:/ { on = 1; next } /^ *[a-z_]+: Total/ { on = 0 } on && NF >= 3 {
		v = $1; sub(/ns$/, "", v); printf "%s %.0f\n", $NF, v }' "$T/tags" | sort >"$T/pprof.cats"
	cmp_cats "pprof (go tool pprof -tags) category" "$T/pprof.cats"
else
	skip "pprof: go not found (Debian: golang-go)"
fi

# thread names in pprof, on a recording of the sampler
RECORD=$top_builddir/tools/nettrace-record
WORK=$top_builddir/tests/sampler/nts-work
LIB=$top_builddir/sampler/.libs/libnettrace-sampler.so.0
if command -v go >/dev/null 2>&1 && [ -x "$RECORD" ] && [ -x "$WORK" ] && [ -f "$LIB" ]; then
	NETTRACE_PRELOAD=$LIB "$RECORD" -q -F 500 -o "$T/fair.nettrace" -- "$WORK" fair 0.5 >/dev/null 2>&1
	"$FLAME" --format pprof -o "$T/n.pb.gz" "$T/fair.nettrace"
	go tool pprof -tags -sample_index=time "$T/n.pb.gz" 2>/dev/null |
		awk '/thread_name:/ { on = 1; next } /: Total/ { on = 0 } on && NF >= 3 { print $NF }' | sort >"$T/names"
	"$FOLD" --per-thread "$T/fair.nettrace" | sed 's/ (.*//' | sort -u | grep -v '^Thread$' >"$T/fnames"
	if [ -s "$T/names" ] && cmp -s "$T/names" "$T/fnames"; then
		pass "pprof thread_name labels are fold's thread names ($(tr '\n' ' ' <"$T/names"))"
	else
		fail "pprof thread_name labels are fold's thread names"; diag "$(cat "$T/names")" "fold:" "$(cat "$T/fnames")"
	fi
else
	skip "pprof thread names: go or the sampler missing"
fi
done_testing
