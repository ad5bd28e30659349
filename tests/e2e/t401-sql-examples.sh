#!/bin/sh
# SPDX-License-Identifier: MIT
# t401-sql-examples.sh - the example queries of doc/sqlite-schema.md, run against the
# database the document describes (three real traces, the third appended), each result
# compared with its reviewed golden file, and the numbers cross-checked against
# nettrace-fold and data/traces/EXPECTED.md wherever another tool can compute them.
. "$top_srcdir/tests/e2e/lib.sh"
SQL=$top_builddir/tools/nettrace-sql
FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
need_tool "$SQL"
need_tool "$FOLD"
need_tool "$TREE"
DOC=$top_srcdir/doc/sqlite-schema.md
GOLD=$EXPECTED/t401-sql-examples
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
ONLY=$TRACES/perfview/only_managed_samples.nettrace
OBJ=$TRACES/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
DB=$T/example.db
TAB=$(printf '\t')

run "$SQL" "$MIXED" "$ONLY" -o "$DB"
is_rc 0 "import of two traces into a new database"
run "$SQL" "$OBJ" -o "$DB"
is_rc 0 "a third trace appended"

# The queries: the ```sql block under each "### QN." heading, into $T/qN.sql.
awk -v dir="$T" '
	/^### Q[0-9]+\./ { q = $2; sub(/^Q/, "", q); sub(/\.$/, "", q); next }
	/^```sql$/ { if (q != "") { f = dir "/q" q ".sql"; inq = 1; nq[q]++ } ; next }
	/^```$/ { if (inq) close(f); inq = 0; next }
	inq { print > f }
	END { for (k in nq) if (nq[k] != 1) { print "Q" k " has " nq[k] " sql blocks" > "/dev/stderr"; exit 1 } }
' "$DOC"
is "$?" 0 "each example heading has one sql block"
n=0
while [ -f "$T/q$((n + 1)).sql" ]; do n=$((n + 1)); done
ok=0; [ "$n" -ge 10 ] && ok=1
is "$ok" 1 "doc/sqlite-schema.md has at least ten examples, Q1..Q$n"

# Every example runs and prints its reviewed result.
i=1
while [ "$i" -le "$n" ]; do
	run "$SQL" "$DB" --query-file "$T/q$i.sql"
	cp "$T/out" "$T/q$i.out"
	is_rc 0 "Q$i runs"
	is_empty "$T/err" "Q$i: nothing on stderr"
	golden "$T/out" "$GOLD/q$i.out" "Q$i: result as reviewed"
	i=$((i + 1))
done

# cols N COL...: the columns of each row of query N (run with --json, read back with
# json-flatten.awk), tab-separated, strings without their quotes.
cols() {
	q=$1
	shift
	"$SQL" "$DB" --json --query-file "$T/q$q.sql" >"$T/cols.json" 2>/dev/null || { echo ERROR; return; }
	flatten "$T/cols.json" "$T/cols.flat" || { echo BADJSON; return; }
	awk -F '\t' -v want="$*" '
		BEGIN { nw = split(want, w, " ") }
		{
			if (match($1, /^\[[0-9]+\]\./) == 0) next
			i = substr($1, 2, RLENGTH - 3) + 0
			k = substr($1, RLENGTH + 1)
			v = $2
			if (v ~ /^".*"$/) { v = substr(v, 2, length(v) - 2); gsub(/\\"/, "\"", v); gsub(/\\\\/, "\\", v) }
			val[i, k] = v
			if (i + 1 > rows) rows = i + 1
		}
		END {
			for (r = 0; r < rows; r++) {
				line = ""
				for (c = 1; c <= nw; c++) line = line (c > 1 ? "\t" : "") val[r, w[c]]
				print line
			}
		}' "$T/cols.flat"
}

# fold_sum FILE: the weights of nettrace-fold output, added up.
fold_sum() { awk '{ s += $NF } END { printf "%.0f\n", s }' "$1"; }

# Q1: the sessions hold the ThreadSample counts of EXPECTED.md.
is "$(cols 1 id samples | tr '\t\n' ': ')" "1:6331 2:7423 3:35161 " "Q1: 6331, 7423 and 35161 samples (EXPECTED.md)"

# Q2: samples per category = nettrace-fold's [category] roots, trace by trace.
: >"$T/want2"
s=1
for f in "$MIXED" "$ONLY" "$OBJ"; do
	"$FOLD" --unit samples --category-frame root "$f" 2>/dev/null |
		awk -v s="$s" '{ c = $1; sub(/;.*/, "", c); gsub(/[][]/, "", c); n[c] += $NF }
			END { for (c in n) print s "\t" c "\t" n[c] }' >>"$T/want2"
	s=$((s + 1))
done
sort "$T/want2" >"$T/want2s"
cols 2 session_id category samples | sort >"$T/got2"
same "$T/got2" "$T/want2s" "Q2: samples per session and category = nettrace-fold --category-frame root"

# Q3: self samples of the top five = leaf frames of nettrace-fold's lines (session 1).
"$FOLD" --unit samples "$MIXED" | awk '{ n = $NF; l = $0; sub(/ [0-9]+$/, "", l);
	k = split(l, f, ";"); leaf[f[k]] += n } END { for (x in leaf) print x "\t" leaf[x] }' |
	sort -t "$TAB" -k2,2nr -k1,1 | head -n 5 >"$T/want3"
cols 3 frame samples >"$T/got3"
same "$T/got3" "$T/want3" "Q3: top five self = leaf counts of nettrace-fold (session 1)"

# Q4: total samples per function (once per stack) from nettrace-fold (session 2).
"$FOLD" --unit samples "$ONLY" | awk '{ n = $NF; l = $0; sub(/ [0-9]+$/, "", l);
	k = split(l, f, ";"); delete seen
	for (j = 1; j <= k; j++) { g = f[j]; sub(/^[^!]*!/, "", g); if (!(g in seen)) { seen[g] = 1; tot[g] += n } } }
	END { for (x in tot) print x "\t" tot[x] }' | sort -t "$TAB" -k2,2nr -k1,1 | head -n 5 >"$T/want4"
cols 4 function samples >"$T/want4.got"
same "$T/want4.got" "$T/want4" "Q4: inclusive samples = functions on nettrace-fold's stacks (session 2)"

# Q5: lock samples per thread in [2 s, 5 s) = nettrace-fold --range --category --per-thread.
"$FOLD" --unit samples --range 2s..5s --category lock --per-thread "$OBJ" |
	awk '{ t = $0; sub(/^Thread \(/, "", t); sub(/\).*/, "", t); n[t] += $NF }
		END { for (t in n) print t "\t" n[t] }' |
	sort >"$T/want5"
cols 5 tid samples | sort >"$T/got5"
same "$T/got5" "$T/want5" "Q5: lock samples per thread in 2s..5s = nettrace-fold"

# Q6: callers of FindByte, their distance and samples, from nettrace-fold's lines.
"$FOLD" --unit samples "$MIXED" | awk -v x="FindByte(value class System.Numerics.Vector\`1<unsigned int8>&)" '
	{ n = $NF; l = $0; sub(/ [0-9]+$/, "", l); k = split(l, f, ";"); at = 0
	  for (j = 1; j <= k; j++) { g = f[j]; sub(/^[^!]*!/, "", g); sub(/^NoNativeStacks\.Program\./, "", g); if (g == x) { at = j; break } }
	  if (!at) next
	  delete seen
	  for (j = at - 1; j >= 1; j--) if (!(f[j] in seen)) { seen[f[j]] = 1; d = at - j
		if (!(f[j] in dist) || d < dist[f[j]]) dist[f[j]] = d; cnt[f[j]] += n } }
	END { for (c in cnt) print dist[c] "\t" c "\t" cnt[c] }' |
	sort -t "$TAB" -k1,1n -k2,2 | awk -F '\t' '{ print $2 "\t" $1 "\t" $3 }' >"$T/want6"
cols 6 caller distance samples >"$T/got6"
same "$T/got6" "$T/want6" "Q6: callers of FindByte = the frames above it in nettrace-fold's stacks"

# Q7: the first run's column is top_self's share of session 1 (Q3).
is "$(cols 7 frame run1_pct | grep '^NoNativeStacks!NoNativeStacks.Program.FindByte' | cut -f2)" \
	"$(cols 3 frame self_pct | grep '^NoNativeStacks!NoNativeStacks.Program.FindByte' | cut -f2)" \
	"Q7: run1_pct = top_self's self_pct of session 1"

# Q8: samples per second = nettrace-fold --range Ns..N+1s, and cpu samples of each second.
: >"$T/want8"
sec=0
while [ "$sec" -le 8 ]; do
	all=$("$FOLD" --unit samples --range "${sec}s..$((sec + 1))s" "$MIXED" 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
	cpu=$("$FOLD" --unit samples --category cpu --range "${sec}s..$((sec + 1))s" "$MIXED" 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
	printf '%s\t%s\t%s\n' "$sec" "$all" "$cpu" >>"$T/want8"
	sec=$((sec + 1))
done
cols 8 second samples cpu >"$T/got8"
same "$T/got8" "$T/want8" "Q8: samples and cpu samples per second = nettrace-fold --range"

# Q9: the folded lines are nettrace-fold's, byte for byte.
"$FOLD" --unit samples "$ONLY" >"$T/want9"
tail -n +3 "$T/q9.out" >"$T/got9"
same "$T/got9" "$T/want9" "Q9: folded stacks = nettrace-fold --unit samples (session 2)"

# Q10, Q11: every GCStart and ContentionStart of the trace (EXPECTED.md: 478 and 8), paired.
is "$(cols 10 gcs | awk '{ s += $1 } END { print s }')" 478 "Q10: 478 GCs (EXPECTED.md: runtime event 1 x478)"
is "$(cols 11 contentions | awk '{ s += $1 } END { print s }')" 8 "Q11: 8 contentions (EXPECTED.md: event 81 x8)"
printf 'SELECT COUNT(*) AS n FROM events WHERE session_id = 3 AND name IN (%s) AND duration_ns > 0;\n' \
	"'GCStart', 'ContentionStart'" >"$T/paired.sql"
run "$SQL" "$DB" --csv --query-file "$T/paired.sql"
is "$(tail -n 1 "$T/out")" 486 "Q10/Q11: each start has its duration (486 paired)"

# Q12: the samples inside contention intervals are the lock samples, thread by thread.
is "$(cols 12 samples lock_samples | awk -F '\t' '$1 != $2' | wc -l | tr -d ' ')" 0 "Q12: samples in contention intervals are all lock samples"
lock=$("$FOLD" --unit samples --category lock "$OBJ" | awk '{ s += $NF } END { print s }')
is "$(cols 12 samples | awk '{ s += $1 } END { print s }')" "$lock" "Q12: as many as nettrace-fold --category lock ($lock)"

# Q13: lock rows of category_time = nettrace-fold --category lock --per-thread.
"$FOLD" --unit samples --category lock --per-thread "$OBJ" |
	awk '{ t = $0; sub(/^Thread \(/, "", t); sub(/\).*/, "", t); n[t] += $NF }
		END { for (t in n) print t "\t" n[t] }' | sort >"$T/want13"
cols 13 tid category samples | awk -F '\t' '$2 == "lock" { print $1 "\t" $3 }' | sort >"$T/got13"
# (the query lists the top 8 rows, where the GC pauses charged to every thread may leave no
# lock row: the lock rows it shows must be nettrace-fold's)
if [ -s "$T/want13" ] && ! grep -Fxvq -f "$T/want13" "$T/got13"; then
	pass "Q13: lock samples per thread = nettrace-fold --category lock --per-thread"
else
	fail "Q13: lock samples per thread = nettrace-fold --category lock --per-thread"
	diag "$(cat "$T/got13")" "want a subset of:" "$(cat "$T/want13")"
fi

# Q14: self samples per module = leaf frames' modules in nettrace-fold's lines.
"$FOLD" --unit samples "$MIXED" | awk '{ n = $NF; l = $0; sub(/ [0-9]+$/, "", l);
	k = split(l, f, ";"); m = f[k]; sub(/!.*/, "", m); s[m] += n } END { for (m in s) print m "\t" s[m] }' |
	sort >"$T/want14"
cols 14 module samples | sort >"$T/got14"
same "$T/got14" "$T/want14" "Q14: self samples per module = nettrace-fold's leaf modules"

# Q15: samples per subsystem = the self column of nettrace-tree --by-subsystem.
"$TREE" --by-subsystem --unit samples "$OBJ" |
	awk 'NF == 5 && $3 ~ /^[0-9]+$/ { print $5 "\t" $3 }' | sort >"$T/want15"
cols 15 subsystem samples | sort >"$T/got15"
same "$T/got15" "$T/want15" "Q15: samples per subsystem = nettrace-tree --by-subsystem (session 3)"
done_testing
