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
CHS=$(command -v clickhouse-server || ls /usr/sbin/clickhouse-server 2>/dev/null)
CHC=$(command -v clickhouse-client)
if [ -z "$CHS" ] || [ -z "$CHC" ]; then
	echo "1..0 # SKIP clickhouse-server/clickhouse-client not installed (apt-get install clickhouse-server clickhouse-client)"
	exit 0
fi

# ---------------------------------------------------------------- one server
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT
base=$(( 24000 + ($$ % 2000) * 3 ))
started=0
for attempt in 1 2 3; do
	H=$base TP=$((base + 1))
	mkdir -p "$T/ch/data" "$T/ch/tmp"
	cat >"$T/ch/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$T/ch/server.log</log><errorlog>$T/ch/error.log</errorlog><console>0</console></logger>
  <http_port>$H</http_port><tcp_port>$TP</tcp_port><listen_host>127.0.0.1</listen_host>
  <path>$T/ch/data/</path><tmp_path>$T/ch/tmp/</tmp_path>
  <users_config>$T/ch/users.xml</users_config>
  <default_profile>default</default_profile><default_database>default</default_database>
  <mark_cache_size>5368709120</mark_cache_size>
</yandex>
EOF
	cat >"$T/ch/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
EOF
	"$CHS" --config-file="$T/ch/config.xml" >"$T/ch/out.log" 2>&1 &
	pid=$!
	i=0
	while [ $i -lt 600 ] && kill -0 "$pid" 2>/dev/null; do
		"$CHC" --port "$TP" -q "SELECT 1" >/dev/null 2>&1 && "$CUT" --probe "$H" && { started=1; break; }
		sleep 0.1
		i=$((i + 1))
	done
	[ $started = 1 ] && break
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	pid=""
	base=$((base + 41))
done
if [ $started != 1 ]; then
	echo "Bail out! clickhouse-server did not start: $(tail -n 3 "$T/ch/error.log" 2>/dev/null)"
	exit 1
fi
pass "clickhouse-server on 127.0.0.1:$TP"
ch() { "$CHC" --port "$TP" -q "$1" 2>&1; }

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
