#!/bin/sh
# SPDX-License-Identifier: MIT
# t792-sql-clickhouse-native.sh - the samples' way into ClickHouse: Native blocks, category
# and sample_type as Enum8, a trace's samples over two connections at once. On a real
# clickhouse-server: the Enum8 columns answer string comparisons and GROUP BY as SQLite's
# text does; tables an earlier version made (String columns) still take an import, with
# the same rows as new tables; a column of another type is refused by name before any
# sample is sent; an import cut in the middle of the samples' INSERTs (two at once) fails
# with exit 3, marks no trace complete, and the retry leaves exactly SQLite's rows.
# Skipped where clickhouse-server is not installed.
. "$top_srcdir/tests/e2e/lib.sh"
SQL=$top_builddir/tools/nettrace-sql
CUT=$top_builddir/tests/tcp-cut
need_tool "$SQL"
need_tool "$CUT"
. "$top_srcdir/tests/e2e/lib-clickhouse.sh"

pid=""
cutpid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$cutpid" ] && kill "$cutpid" 2>/dev/null; rm -rf "$T"' EXIT
ch_start $(( 26000 + ($$ % 2000) * 3 )) 43

# 35161 samples: over the threshold of two connections
OBJ=$TRACES/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
lite() { "$SQL" "$OBJ" --csv -q "$1" 2>/dev/null | sed 1d; }

# ---------------------------------------------------------------- Enum8 columns
run "$SQL" -v --to "clickhouse://127.0.0.1:$H/fresh" "$OBJ"
is_rc 0 "import into new tables"
is "$(ch "SELECT type LIKE 'Enum8(%' FROM system.columns WHERE database = 'fresh'
	AND table IN ('samples', 'charges') AND name IN ('category', 'sample_type')" | sort -u)" 1 \
	"category and sample_type of samples and charges are Enum8"
want=$(lite "SELECT category, sample_type, COUNT(*), CAST(ROUND(SUM(weight_ns)) AS INTEGER) FROM samples
	GROUP BY category, sample_type ORDER BY category, sample_type")
got=$(ch "SELECT category, sample_type, count(), toInt64(round(sum(weight_ns))) FROM fresh.samples
	GROUP BY category, sample_type ORDER BY toString(category), toString(sample_type)" | tr '\t' ,)
is "$got" "$want" "samples and weight per category and sample type as in SQLite"
want=$(lite "SELECT COUNT(*) FROM samples WHERE category IN ('gc', 'lock') AND sample_type = 'external'")
got=$(ch "SELECT count() FROM fresh.samples WHERE category IN ('gc', 'lock') AND sample_type = 'external'")
is "$got" "$want" "string comparisons on the Enum8 columns ($got samples)"
[ "$got" -gt 0 ] || fail "the comparison matched samples (precondition)"

# ---------------------------------------------------------------- tables of an earlier version
dump() {
	for t in samples charges; do
		echo "== $t"
		ch "SELECT * FROM $1.$t FORMAT TabSeparated" | sort
	done
}
ch "CREATE DATABASE old" >/dev/null
for t in samples charges; do
	ch "CREATE TABLE old.$t (trace_id String, thread_id UInt32, ts_ns Int64, callsite_id UInt64,
		category String, sample_type String, weight_ns Float64, subsystem String)
		ENGINE = MergeTree ORDER BY (trace_id, ts_ns)" >/dev/null
done
run "$SQL" -v --to "clickhouse://127.0.0.1:$H/old" "$OBJ"
is_rc 0 "import into tables with String category and sample_type"
is "$(ch "SELECT type FROM system.columns WHERE database = 'old' AND table = 'samples' AND name = 'category'")" \
	String "the existing table is left as it was"
dump fresh >"$T/fresh.dump"
dump old >"$T/old.dump"
rows=$(ch "SELECT count() FROM old.samples")
if [ "$rows" -gt 0 ] && cmp -s "$T/fresh.dump" "$T/old.dump"; then
	pass "String tables hold the same rows as Enum8 ones ($rows samples)"
else
	fail "String tables hold the same rows as Enum8 ones ($rows samples)"
	diag "$(diff "$T/fresh.dump" "$T/old.dump" | head -n 10)"
fi

ch "CREATE DATABASE odd" >/dev/null
ch "CREATE TABLE odd.samples (trace_id String, thread_id UInt32, ts_ns Int64, callsite_id UInt64,
	category UInt8, sample_type String, weight_ns Float64, subsystem String)
	ENGINE = MergeTree ORDER BY (trace_id, ts_ns)" >/dev/null
run "$SQL" --to "clickhouse://127.0.0.1:$H/odd" "$OBJ"
is_rc 3 "a samples table whose category is UInt8: refused"
grep -q "odd.samples: column category is neither String nor" "$T/err" &&
	pass "the refusal names the table and column" ||
	{ fail "the refusal names the table and column"; diag "$(cat "$T/err")"; }
is "$(ch "SELECT count() FROM odd.samples")" 0 "no sample sent to it"

# ---------------------------------------------------------------- cut mid-samples, retry
ch_cut "$T/cut.port" "$H" "cut.samples%20FORMAT" 300000
run "$SQL" -v --to "clickhouse://127.0.0.1:$CP/cut" "$OBJ"
is_rc 3 "an import whose samples connection breaks fails with exit 3"
grep -q "ClickHouse" "$T/err" && pass "the failure names ClickHouse ($(grep ClickHouse "$T/err" | head -n 1))" ||
	{ fail "the failure names ClickHouse"; diag "$(cat "$T/err")"; }
kill "$cutpid" 2>/dev/null
wait "$cutpid" 2>/dev/null
cutpid=""
is "$(ch "SELECT count() FROM cut.traces")" 0 "the broken import marked no trace complete"
run "$SQL" -v --to "clickhouse://127.0.0.1:$H/cut" "$OBJ"
is_rc 0 "the retry succeeds"
want=$(lite "SELECT (SELECT COUNT(*) FROM samples), (SELECT COUNT(*) FROM charges), (SELECT COUNT(*) FROM events)")
got=$(ch "SELECT (SELECT count() FROM cut.samples), (SELECT count() FROM cut.charges),
	(SELECT count() FROM cut.events)" | tr '\t' ,)
is "$got" "$want" "after the retry: exactly the SQLite rows (samples, charges, events)"
dump cut >"$T/cut.dump"
cmp -s "$T/fresh.dump" "$T/cut.dump" && pass "and the same samples and charges as a clean import" ||
	{ fail "and the same samples and charges as a clean import"; diag "$(diff "$T/fresh.dump" "$T/cut.dump" | head -n 10)"; }
done_testing
