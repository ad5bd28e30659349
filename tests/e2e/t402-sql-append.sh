#!/bin/sh
# SPDX-License-Identifier: MIT
# t402-sql-append.sh - appending sessions to a nettrace database: two imports give the
# same sessions, stacks and samples as one import of both traces; the interned tables are
# shared; a database of an unknown schema version (the header's user_version patched, or
# with the sqlite3 shell the schema_version table) is refused untouched but still
# queryable; an empty file becomes a database.
. "$top_srcdir/tests/e2e/lib.sh"
SQL=$top_builddir/tools/nettrace-sql
need_tool "$SQL"
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
ONLY=$TRACES/perfview/only_managed_samples.nettrace
DB=$T/app.db
last() { tail -n 1 "$T/out"; }
q() { # q DB SQL: the last line of the CSV result
	"$SQL" "$1" --csv -q "$2" >"$T/out" 2>"$T/err" || { echo "ERROR: $(cat "$T/err")"; return; }
	last
}

run "$SQL" "$MIXED" -o "$DB"
is_rc 0 "first import"
run "$SQL" "$ONLY" -o "$DB"
is_rc 0 "second import appends"
is_empty "$T/err" "appending: nothing on stderr"
is "$(q "$DB" "SELECT group_concat(id || ':' || samples, ' ') FROM sessions")" "1:6331 2:7423" \
	"two sessions, ids 1 and 2, with their samples"
run "$SQL" "$MIXED" "$ONLY" -o "$T/one.db"
is_rc 0 "both traces in one import"
STACKS="SELECT session_id || ' ' || category || ' ' || stack || ' ' || COUNT(*) FROM sample_stacks GROUP BY session_id, category, stack ORDER BY session_id, category, stack"
"$SQL" "$DB" --csv -q "$STACKS" >"$T/a.txt"
"$SQL" "$T/one.db" --csv -q "$STACKS" >"$T/b.txt"
same "$T/a.txt" "$T/b.txt" "appending gives the samples, categories and stacks of a single import"
is "$(q "$DB" "SELECT (SELECT COUNT(*) FROM functions) || ' ' || (SELECT COUNT(*) FROM frames) || ' ' || (SELECT COUNT(*) FROM callsites)")" \
	"$(q "$T/one.db" "SELECT (SELECT COUNT(*) FROM functions) || ' ' || (SELECT COUNT(*) FROM frames) || ' ' || (SELECT COUNT(*) FROM callsites)")" \
	"functions, frames and callsites are interned across the two imports"
is "$(q "$DB" "SELECT COUNT(*) FROM threads t JOIN sample_groups g ON g.thread_id = t.id WHERE g.session_id <> t.session_id")" 0 \
	"every group's thread is of its session"

# the same trace again: a third session, no new function, frame or callsite
before=$(q "$DB" "SELECT (SELECT COUNT(*) FROM functions) || ' ' || (SELECT COUNT(*) FROM frames) || ' ' || (SELECT COUNT(*) FROM callsites)")
run "$SQL" "$MIXED" -o "$DB"
is_rc 0 "appending the first trace again"
is "$(q "$DB" "SELECT COUNT(*) || ' ' || SUM(samples) FROM sessions")" "3 20085" "three sessions, 6331 + 7423 + 6331 samples"
is "$(q "$DB" "SELECT (SELECT COUNT(*) FROM functions) || ' ' || (SELECT COUNT(*) FROM frames) || ' ' || (SELECT COUNT(*) FROM callsites)")" \
	"$before" "the same stacks again: nothing new interned"
is "$(q "$DB" "SELECT COUNT(*) FROM (SELECT stack, COUNT(*) FROM sample_stacks WHERE session_id = 1 GROUP BY stack EXCEPT SELECT stack, COUNT(*) FROM sample_stacks WHERE session_id = 3 GROUP BY stack)")" 0 \
	"sessions 1 and 3 have the same stacks"
is "$(q "$DB" "SELECT COUNT(*) FROM events WHERE session_id = 3")" "$(q "$DB" "SELECT COUNT(*) FROM events WHERE session_id = 1")" \
	"sessions 1 and 3 have the same events"

# a future schema: user_version (file header bytes 60..63, big-endian) patched to 99
cp "$DB" "$T/v99.db"
printf '\000\000\000\143' | dd of="$T/v99.db" bs=1 seek=60 conv=notrunc 2>/dev/null
cp "$T/v99.db" "$T/v99.orig"
run "$SQL" "$ONLY" -o "$T/v99.db"
is_rc 2 "appending to schema version 99: exit 2"
is "$(cat "$T/err")" "nettrace-sql: $T/v99.db: unknown schema_version 99 (this version of libnettrace appends to version 2 only)" \
	"... with the version in the message"
if cmp -s "$T/v99.db" "$T/v99.orig"; then pass "... and the file untouched"; else fail "... and the file untouched"; fi
is "$(ls -A "$T" | grep -c '\.tmp$')" 0 "... and no temporary file left"
is "$(q "$T/v99.db" "PRAGMA user_version")" 99 "a database of another version can still be queried"

# an empty file (as touch leaves it) is a new database
: >"$T/empty.db"
run "$SQL" "$ONLY" -o "$T/empty.db"
is_rc 0 "an empty file becomes a database"
is "$(q "$T/empty.db" "SELECT COUNT(*) FROM samples")" 7423 "... with the samples"

if command -v sqlite3 >/dev/null 2>&1; then
	cp "$DB" "$T/v2.db"
	sqlite3 "$T/v2.db" "UPDATE schema_version SET version = 3"
	run "$SQL" "$ONLY" -o "$T/v2.db"
	is_rc 2 "schema_version table at 3 (user_version 2): refused"
	case $(cat "$T/err") in *"unknown schema_version 3"*) pass "... unknown schema_version 3" ;; *) fail "... unknown schema_version 3"; diag "$(cat "$T/err")" ;; esac
	sqlite3 "$T/other.db" "CREATE TABLE t(x); INSERT INTO t VALUES (1)"
	run "$SQL" "$ONLY" -o "$T/other.db"
	is_rc 2 "another application's database: refused"
	is "$(cat "$T/err")" "nettrace-sql: $T/other.db: not a nettrace database (no schema_version table)" "... said so"
	is "$(sqlite3 "$T/other.db" "SELECT x FROM t")" 1 "... and left alone"
	sqlite3 "$T/blank.db" "PRAGMA user_version = 7"
	run "$SQL" "$ONLY" -o "$T/blank.db"
	is_rc 0 "an SQLite database without tables is accepted"
	is "$(sqlite3 "$DB" "SELECT COUNT(*) FROM samples")" 20085 "sqlite3 reads the appended database"
else
	skip "schema_version table at 3: refused" "sqlite3 not installed"
fi
done_testing
