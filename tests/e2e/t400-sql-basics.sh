#!/bin/sh
# SPDX-License-Identifier: MIT
# t400-sql-basics.sh - nettrace-sql: import and query, the three output formats (aligned
# table, CSV, JSON), databases told apart from traces by their header, SQL errors (SQLite's
# message, exit 3), usage errors, the shared profile options checked against
# nettrace-fold, subsystems (samples.subsystem, subsystem_time, --subsystems) checked
# against nettrace-tree --by-subsystem, standard input, truncated and bad traces, and the
# stock sqlite3 shell reading the result when it is installed.
. "$top_srcdir/tests/e2e/lib.sh"
SQL=$top_builddir/tools/nettrace-sql
FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
need_tool "$SQL"
need_tool "$FOLD"
need_tool "$TREE"
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
SENTRY=$TRACES/sentry-dotnet/sample.nettrace
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
sum() { awk '{ s += $NF } END { printf "%.0f", s }' "$1"; }
# last: the last line of the last run's stdout (a one-value CSV result)
last() { tail -n 1 "$T/out"; }

# ---------------------------------------------------------------- query over an import
run "$SQL" "$PYRO" -q "SELECT COUNT(*) AS n FROM samples"
is_rc 0 "query over an in-memory import exits 0"
printf '   n\n----\n5564\n' >"$T/want"
same "$T/out" "$T/want" "aligned table: header, dashes, numbers right-aligned"
is_empty "$T/err" "nothing on stderr"

run "$SQL" "$PYRO" -q "SELECT 'é' AS u, 'ab' AS v, NULL AS n, 1 AS i; SELECT 2 AS x"
printf 'u  v   n  i\n-  --  -  -\né  ab     1\n\nx\n-\n2\n' >"$T/want"
same "$T/out" "$T/want" "table: UTF-8 width, NULL empty, one result per statement"

# ---------------------------------------------------------------- CSV and JSON
Q="SELECT 'a,b' AS x, 'say \"hi\"' AS y, NULL AS z, 1.5 AS w, 3 AS v, ' pad' AS p, 2.0 AS r"
run "$SQL" "$PYRO" --csv -q "$Q"
printf 'x,y,z,w,v,p,r\n"a,b","say ""hi""",,1.5,3," pad",2.0\n' >"$T/want"
same "$T/out" "$T/want" "--csv: header, RFC 4180 quoting, NULL empty"
run "$SQL" "$PYRO" --json -q "$Q; SELECT 1 AS one WHERE 0"
printf '[\n{"x":"a,b","y":"say \\"hi\\"","z":null,"w":1.5,"v":3,"p":" pad","r":2.0}\n]\n[]\n' >"$T/want"
same "$T/out" "$T/want" "--json: an array of objects per statement, null, escapes"
run "$SQL" "$SENTRY" --json -q "SELECT id, tid, name FROM threads ORDER BY tid"
if flatten "$T/out" "$T/flat"; then pass "--json output parses"; else fail "--json output parses"; fi
is "$(grep -c '^\[[0-9]*\]\.tid' "$T/flat")" "$(grep -c '^\[[0-9]*\]\.id' "$T/flat")" "--json: every row has its columns"

# ---------------------------------------------------------------- SQL errors
run "$SQL" "$PYRO" -q "SELEC 1"
is_rc 1 "SQL syntax error: exit 1 (the query is the user's, not a system error)"
is "$(cat "$T/err")" 'nettrace-sql: SQL error: near "SELEC": syntax error (at byte 0 of the query)' \
	"SQL syntax error: SQLite's message and where"
is_empty "$T/out" "SQL syntax error: no output"
run "$SQL" "$PYRO" -q "SELECT 1 AS a; SELECT * FROM nope"
is_rc 1 "missing table: exit 1"
is "$(cat "$T/err")" "nettrace-sql: SQL error: no such table: nope" "missing table: SQLite's message"
printf 'a\n-\n1\n' >"$T/want"
same "$T/out" "$T/want" "the statements before the error are printed"

# ---------------------------------------------------------------- databases
DB=$T/pyro.db
run "$SQL" "$PYRO" -o "$DB"
is_rc 0 "-o imports"
is_empty "$T/out" "-o: nothing on stdout"
is "$(head -c 15 "$DB")" "SQLite format 3" "-o writes an SQLite database"
run "$SQL" "$DB" --csv -q "SELECT COUNT(*) FROM samples"
is "$(last)" 5564 "a database given as FILE is queried"
cp "$DB" "$T/no-extension"
run "$SQL" "$T/no-extension" --csv -q "SELECT COUNT(*) FROM sessions"
is "$(last)" 1 "a database is recognised by its header, not its name"
run "$SQL" "$DB" --csv -q "DELETE FROM sample_rows"
is_rc 3 "an existing database is opened read-only"
case $(cat "$T/err") in *readonly*) pass "read-only: SQLite says so" ;; *) fail "read-only: SQLite says so"; diag "$(cat "$T/err")" ;; esac
run "$SQL" "$MIXED" -o "$T/both.db" --csv -q "SELECT COUNT(*) FROM samples"
is_rc 0 "-o and -q together"
is "$(last)" 6331 "-o and -q: the query runs over the imported database"
printf 'SELECT COUNT(*) FROM sessions;\n' >"$T/q.sql"
run "$SQL" "$T/both.db" --csv --query-file "$T/q.sql"
is "$(last)" 1 "--query-file"
run sh -c 'printf "SELECT 6 * 7;" | "$1" "$2" --csv --query-file -' sh "$SQL" "$T/both.db"
is "$(last)" 42 "--query-file - reads standard input"

# ---------------------------------------------------------------- what is imported
run "$SQL" "$SENTRY" --csv -q "SELECT COUNT(*) FROM threads t WHERE EXISTS (SELECT 1 FROM sample_groups g WHERE g.thread_id = t.id)"
is "$(last)" 7 "sentry: 7 sampled threads (EXPECTED.md)"
run "$SQL" "$SENTRY" --csv -q "SELECT COUNT(*) FROM events"
is "$(last)" "$((8829 - 311))" "sentry: every event but the 311 samples is in events"
run "$SQL" "$SENTRY" --no-events --csv -q "SELECT COUNT(*) FROM events"
is "$(last)" 0 "--no-events: no events"
run "$SQL" -v "$PYRO" -q "SELECT 1"
is "$(cat "$T/err")" "nettrace-sql: imported 1 session(s), 5564 samples in 38 groups, 22387 events, 36 new callsites" \
	"-v: what was imported"
run "$SQL" "$PYRO" --csv -q "SELECT name || ' ' || path FROM modules WHERE name = 'mvc-hello-world'"
case $(last) in "mvc-hello-world "*mvc-hello-world.dll) pass "modules: path from the module events" ;; *) fail "modules: path from the module events"; diag "$(last)" ;; esac

# ---------------------------------------------------------------- profile options = nettrace-fold
# the folded lines of a selection, rebuilt from the database
folded() {
	run "$SQL" "$@" --csv -q "SELECT stack || ' ' || COUNT(*) FROM sample_stacks GROUP BY stack ORDER BY stack"
	tail -n +2 "$T/out" | sed -e 's/^"//' -e 's/"$//' -e 's/""/"/g' >"$T/sqlfold"
}
for opts in "--range 2s..4s" "--thread 4688,7860" "--category io,wait" "--managed-only" \
	"--range ts:294500000000.."; do
	# shellcheck disable=SC2086
	"$FOLD" --unit samples $opts "$SENTRY" >"$T/fold" 2>/dev/null
	# shellcheck disable=SC2086
	folded $opts "$SENTRY"
	same "$T/sqlfold" "$T/fold" "$opts: the same samples as nettrace-fold"
done
printf '# my rules\nsleep *Example.Program.Slow*\n' >"$T/my.rules"
run "$SQL" --rules "$T/my.rules" "$PYRO" --csv -q "SELECT COUNT(*) FROM samples WHERE category = 'sleep'"
is "$(last)" 4451 "--rules: Slow() and its callees become sleep (as t103)"
"$FOLD" --compat pyroscope "$PYRO" >"$T/fold"
run "$SQL" --compat pyroscope "$PYRO" --csv -q \
	"SELECT stack || ' ' || printf('%.0f', SUM(weight_ns)) FROM sample_stacks GROUP BY stack ORDER BY stack"
tail -n +2 "$T/out" | sed -e 's/^"//' -e 's/"$//' >"$T/sqlfold"
same "$T/sqlfold" "$T/fold" "--compat pyroscope: per-sample weights add up to nettrace-fold's"
same "$T/sqlfold" "$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.txt" \
	"--compat pyroscope: pyroscope's golden output"

# ---------------------------------------------------------------- subsystems = nettrace-tree
# bysub [OPTIONS]: the self samples per subsystem of nettrace-tree --by-subsystem, and of
# the samples view's subsystem column (NULL: other) and of the subsystem_time view.
bysub() {
	"$TREE" --by-subsystem --unit samples "$@" "$SENTRY" 2>/dev/null |
		awk 'NF == 5 && $3 ~ /^[0-9]+$/ && $3 > 0 { print $5 "," $3 }' | sort >"$T/tree-sub"
	run "$SQL" "$@" "$SENTRY" --csv -q \
		"SELECT COALESCE(subsystem, 'other'), COUNT(*) FROM samples GROUP BY 1"
	tail -n +2 "$T/out" | sort >"$T/sql-sub"
	run "$SQL" "$@" "$SENTRY" --csv -q \
		"SELECT subsystem, SUM(samples) FROM subsystem_time GROUP BY 1"
	tail -n +2 "$T/out" | sort >"$T/view-sub"
}
bysub
grep -qx 'threading,189' "$T/tree-sub" && grep -qx 'ipc,61' "$T/tree-sub" &&
	grep -qx 'other,43' "$T/tree-sub" && grep -qx 'collections,8' "$T/tree-sub" &&
	pass "nettrace-tree --by-subsystem: threading 189, ipc 61, other 43, collections 8" ||
	fail "nettrace-tree --by-subsystem: threading 189, ipc 61, other 43, collections 8"
same "$T/sql-sub" "$T/tree-sub" "samples.subsystem: the self samples of nettrace-tree --by-subsystem"
same "$T/view-sub" "$T/tree-sub" "subsystem_time: the self samples of nettrace-tree --by-subsystem"
run "$SQL" "$SENTRY" --csv -q "SELECT SUM(pct) > 99.9 AND SUM(pct) < 100.1, SUM(samples) FROM subsystem_time"
is "$(last)" "1,311" "subsystem_time: the session's 311 samples, 100%"
printf '# mine\nmine *!System.Threading.*\n' >"$T/my.subsystems"
bysub --subsystems "$T/my.subsystems"
is_rc 0 "--subsystems FILE exits 0"
grep -q '^mine,' "$T/sql-sub" && pass "--subsystems: the file's subsystem names" ||
	fail "--subsystems: the file's subsystem names"
same "$T/sql-sub" "$T/tree-sub" "--subsystems: the self samples of nettrace-tree --subsystems"
same "$T/view-sub" "$T/tree-sub" "--subsystems: subsystem_time as nettrace-tree --subsystems"
printf 'json *!A.*\n\nbad!name *!B.*\n' >"$T/bad.subsystems"
run "$SQL" --subsystems "$T/bad.subsystems" "$SENTRY" -q "SELECT 1"
is_rc 2 "--subsystems with a bad rule: exit 2"

# ---------------------------------------------------------------- inputs
run sh -c 'cat "$1" | "$2" - --csv -q "SELECT file || \" \" || samples FROM sessions"' sh "$PYRO" "$SQL"
is "$(last)" "- 5564" "standard input ('-') is a trace"
run "$SQL" "$TRACES/$TRUNCATED" --csv -q "SELECT samples || ' ' || truncated FROM sessions"
is_rc 0 "truncated trace: exit 0"
case $(cat "$T/err") in *"at byte 4170673 (0x3fa3b1): warning: stream truncated"*) pass "truncated trace: the reader's warning" ;; *) fail "truncated trace: the reader's warning"; diag "$(cat "$T/err")" ;; esac
is "$(last)" "7293 1" "truncated trace: 7293 samples, sessions.truncated = 1"
run "$SQL" "$TRACES/$CHECKPOINTS" --csv -q "SELECT COUNT(*) FROM samples; SELECT COUNT(*) FROM events"
is "$(last)" 3 "a trace without samples: its 3 events"
is "$(cat "$T/err")" "nettrace-sql: no samples: the input has no SampleProfiler ThreadSample events" \
	"a trace without samples: said on stderr"
printf 'not a trace at all\n' >"$T/junk"
run "$SQL" "$T/junk" -o "$T/junk.db"
is_rc 2 "not a nettrace file: exit 2"
is "$(cat "$T/err")" "nettrace-sql: $T/junk: at byte 0 (0x0): not a nettrace file (no \"Nettrace\" magic)" \
	"not a nettrace file: the reader's error line"
if [ -e "$T/junk.db" ]; then fail "bad input: no database written"; else pass "bad input: no database written"; fi
run "$SQL" "$PYRO" -o "$T/junk"
is_rc 2 "-o onto a file that is not a database: exit 2"
is "$(cat "$T/err")" "nettrace-sql: $T/junk exists and is not an SQLite database" "... said so"
is "$(cat "$T/junk")" "not a trace at all" "... and the file is untouched"
run "$SQL" "$PYRO" -o "$T/no/such/dir/x.db"
is_rc 3 "-o into a missing directory: exit 3"
run "$SQL" "$T/nonexistent.nettrace" -q "SELECT 1"
is_rc 3 "missing input: exit 3"

# ---------------------------------------------------------------- usage errors
run "$SQL"
is_rc 1 "no input: exit 1"
is "$(tail -n 1 "$T/err")" "Try 'nettrace-sql --help'." "usage error: the Try line"
run "$SQL" "$PYRO"
is_rc 1 "neither -o nor -q: exit 1"
run "$SQL" "$PYRO" -q "SELECT 1" --query-file "$T/q.sql"
is_rc 1 "-q and --query-file: exit 1"
run "$SQL" "$DB" "$PYRO" -q "SELECT 1"
is_rc 1 "a database with a trace: exit 1"
run "$SQL" "$DB" -o "$T/other.db"
is_rc 1 "a database with -o: exit 1"
run "$SQL" --compat speedscope "$PYRO" -q "SELECT 1"
is_rc 1 "unknown --compat: exit 1"
run "$SQL" --category lok "$PYRO" -q "SELECT 1"
is_rc 1 "unknown --category: exit 1"
run "$SQL" --unit ms "$PYRO" -q "SELECT 1"
is_rc 1 "--unit is not an option of nettrace-sql: exit 1"
run sh -c 'cat "$1" | "$2" - --query-file - ' sh "$PYRO" "$SQL"
is_rc 1 "standard input for both the trace and the query: exit 1"

# ---------------------------------------------------------------- the stock sqlite3 shell
if command -v sqlite3 >/dev/null 2>&1; then
	is "$(sqlite3 "$DB" 'PRAGMA integrity_check')" ok "sqlite3: integrity_check ok"
	is "$(sqlite3 "$DB" 'SELECT COUNT(*) FROM samples')" 5564 "sqlite3 reads the samples view"
	is "$(sqlite3 "$DB" 'SELECT frame FROM top_self LIMIT 1')" \
		"mvc-hello-world!Example.Program.Work(int32)" "sqlite3 reads top_self"
	is "$(sqlite3 "$DB" 'SELECT version FROM schema_version')" 2 "sqlite3: schema_version 2"
else
	skip "sqlite3: integrity_check ok" "sqlite3 not installed"
fi
done_testing
