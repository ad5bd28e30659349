#!/bin/sh
# SPDX-License-Identifier: MIT
# t791-sql-clickhouse-direct.sh - `nettrace-sql --to` alone sends the samples straight from
# the profile (nt_store_hook_profile_clickhouse), `--to` with -e builds the SQLite store and
# exports its rows (the path t410 checks against SQLite's answers). On one real
# clickhouse-server, every table (sessions, threads, stacks, samples, charges, events; traces but
# its import time) must hold the same rows either way: real traces with their events, the weight modes (--compat pyroscope, traceevent: each sample's own weight), a
# category filter and a time range (rows of left-out groups), three files in one import,
# and a truncated trace. Skipped where clickhouse-server is not installed.
. "$top_srcdir/tests/e2e/lib.sh"
SQL=$top_builddir/tools/nettrace-sql
CUT=$top_builddir/tests/tcp-cut
need_tool "$SQL"
need_tool "$CUT"
. "$top_srcdir/tests/e2e/lib-clickhouse.sh"

# ---------------------------------------------------------------- one server
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT
ch_start $(( 24000 + ($$ % 2000) * 3 )) 41

# dump DB: every table's rows, sorted (the import time of traces left out)
dump() {
	for t in sessions threads stacks samples charges events; do
		echo "== $t"
		ch "SELECT * FROM $1.$t FORMAT TabSeparated" | sort
	done
	echo "== traces"
	ch "SELECT trace_id, file, sessions, samples, events, generator, label_keys, label_values FROM $1.traces" | sort
}
n=0
# same DESC FILE... OPTIONS: the direct import and the store's export hold the same rows
same_rows() {
	desc=$1; shift
	n=$((n + 1))
	files=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do files="$files $1"; shift; done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086
	"$SQL" $files "$@" --label case=$n --to "clickhouse://127.0.0.1:$H/store_$n" -e "SELECT 1" \
		>/dev/null 2>"$T/store.err" || { fail "$desc: the store path imports"; diag "$(cat "$T/store.err")"; return; }
	# shellcheck disable=SC2086
	run "$SQL" -v $files "$@" --label case=$n --to "clickhouse://127.0.0.1:$H/direct_$n"
	[ "$rc" -eq 0 ] || { fail "$desc: the direct path imports"; diag "$(cat "$T/err")"; return; }
	dump "store_$n" >"$T/store.dump"
	dump "direct_$n" >"$T/direct.dump"
	rows=$(ch "SELECT count() FROM direct_$n.samples")
	# the GC pauses charged without a sample: as many, and as long, as in SQLite
	# shellcheck disable=SC2086
	want=$("$SQL" $files "$@" --csv -q "SELECT COUNT(*), CAST(ROUND(COALESCE(SUM(weight_ns), 0)) AS INTEGER) FROM charges" 2>/dev/null | sed 1d)
	got=$(ch "SELECT count(), toInt64(round(sum(weight_ns))) FROM direct_$n.charges" | tr '\t' ,)
	is "$got" "$want" "$desc: charges (count, ns) as in SQLite"
	if [ "$rows" -gt 0 ] && cmp -s "$T/store.dump" "$T/direct.dump"; then
		pass "$desc: every table the same ($rows samples, $(wc -l <"$T/direct.dump") lines)"
	else
		fail "$desc: every table the same ($rows samples)"
		diag "$(diff "$T/store.dump" "$T/direct.dump" | head -n 10)"
	fi
}
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
OBJ=$TRACES/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
same_rows "$(basename "$OBJ")" "$OBJ"
same_rows "$(basename "$TRUNCATED")" "$TRACES/$TRUNCATED"
same_rows "--compat pyroscope" "$MIXED" -- --compat pyroscope
same_rows "--compat traceevent" "$OBJ" -- --compat traceevent
same_rows "--category cpu,lock" "$OBJ" -- --category cpu,lock
same_rows "--range 1s..3s" "$MIXED" -- --range 1s..3s
same_rows "--no-events" "$OBJ" -- --no-events
same_rows "three files" "$MIXED" "$TRACES/sentry-dotnet/sample.nettrace" "$TRACES/perfview/only_managed_samples.nettrace"
head -c 40000 "$MIXED" >"$T/cut.nettrace"
same_rows "a truncated trace" "$T/cut.nettrace"
done_testing
