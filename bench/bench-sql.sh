#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-sql.sh - SQLite store benchmark: import throughput (samples/s) of nettrace-sql on a
# large generated trace, next to nettrace-fold on the same trace (the same reading and
# profiling, without the database) measured in the same run; database bytes per sample
# (whole file, and per table with SQLite's dbstat); and the time of the views on the
# result (top_self must answer in under a second on ten million samples). Prints medians
# over N runs, wall and CPU time (the machine may be shared: CPU time is the steadier
# figure). This is a benchmark, not a test.
#
#   bench/bench-sql.sh [-n RUNS] [-s SIZE] [-k]
#
#   -n RUNS   repetitions of each measurement (default 3; env N)
#   -s SIZE   trace size, gen-trace syntax (default 125M: about 10.7 million samples; env SIZE)
#   -k        keep the database (bench/out/sql/bench.db) for your own queries
#
# Builds an optimised copy of the library and the programs in bench/out/sql/ (the project's
# build may carry sanitizers), reuses bench/run.sh's generated traces (bench/out/trace-SIZE-v5
# .nettrace, deterministic), and writes raw results to bench/out/sql/results.txt.
# Environment: CC (default cc), BENCH_CFLAGS (default -O2 -g).
# Goals (issue): import >= 1M samples/s; <= 24 bytes per sample plus the deduplicated
# stacks; top_self on 10M samples in under a second.
# ClickHouse: where clickhouse-server and clickhouse-client are installed, one server is
# started on a loopback port under bench/out/sql/ch and `nettrace-sql --no-events --to`
# is measured next to the in-memory import without events (its baseline), each run into a
# database of its own; the server's CPU time is read from /proc and reported beside ours.
# Goal (issue): >= 1M samples/s into a local ClickHouse.
set -u

cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=$TOP/bench/out
WORK=$OUT/sql
BUILD=$WORK/build
N=${N:-3}
SIZE=${SIZE:-125M}
KEEP=0
CC=${CC:-cc}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}

. "$TOP/bench/lib-build.sh"

while getopts n:s:kh opt; do
	case $opt in
	n) N=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	k) KEEP=1 ;;
	h) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "Try 'bench/bench-sql.sh -h'." >&2; exit 1 ;;
	esac
done
bench_count "$N" "run count"
mkdir -p "$BUILD/libtrace" || die "cannot create $BUILD"

# ------------------------------------------------------------------ build
say "building (optimised: $CC $BENCH_CFLAGS) in bench/out/sql/build"
bench_sql_build "$BUILD" store-sqlite
SQL=$BUILD/nettrace-sql
FOLD=$BUILD/nettrace-fold

# ------------------------------------------------------------------ trace
bench_trace "$BUILD" "$OUT" "$SIZE"

# ------------------------------------------------------------------ measurements
# measure WHAT CMD...: one run; appends "WHAT wall_s cpu_s maxrss_kb" to $RES. CPU time
# (user + system) comes from GNU time when installed, else it is reported as "-".
RES=$WORK/results.txt
: >"$RES"
TIMEF=$WORK/time.tmp
measure() {
	what=$1; shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%e %U %S %M' -o "$TIMEF" "$@" >"$WORK/stdout.tmp" 2>"$WORK/stderr.tmp" || {
			cat "$WORK/stderr.tmp" >&2
			die "$what failed"
		}
		awk -v w="$what" '{ printf "%s %s %.3f %s\n", w, $1, $2 + $3, $4 }' "$TIMEF" >>"$RES"
	else
		s0=$(date +%s.%N)
		"$@" >"$WORK/stdout.tmp" 2>"$WORK/stderr.tmp" || { cat "$WORK/stderr.tmp" >&2; die "$what failed"; }
		s1=$(date +%s.%N)
		echo "$what $(echo "$s0 $s1" | awk '{ printf "%.3f", $2 - $1 }') - -" >>"$RES"
	fi
}
DB=$WORK/bench.db
cat "$TRACE" >/dev/null # warm the page cache

# ------------------------------------------------------------------ ClickHouse server
CHPID=
CHS=$(command -v clickhouse-server || ls /usr/sbin/clickhouse-server 2>/dev/null)
if [ -n "$CHS" ] && command -v clickhouse-client >/dev/null 2>&1; then
	CHD=$WORK/ch
	rm -rf "$CHD" && mkdir -p "$CHD/data" "$CHD/tmp"
	CHH=$(( 31000 + ($$ % 1000) * 2 )) CHT=$(( 31001 + ($$ % 1000) * 2 ))
	cat >"$CHD/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$CHD/server.log</log><errorlog>$CHD/error.log</errorlog><console>0</console></logger>
  <http_port>$CHH</http_port><tcp_port>$CHT</tcp_port><listen_host>127.0.0.1</listen_host>
  <path>$CHD/data/</path><tmp_path>$CHD/tmp/</tmp_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile><default_database>default</default_database>
  <mark_cache_size>5368709120</mark_cache_size>
</yandex>
EOF
	"$CHS" --config-file="$CHD/config.xml" >"$CHD/out.log" 2>&1 &
	CHPID=$!
	trap 'kill $CHPID 2>/dev/null' EXIT
	i=0
	until clickhouse-client --port "$CHT" -q "SELECT 1" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 300 ] || { say "warning: clickhouse-server did not start; skipping it"; kill $CHPID; CHPID=; break; }
		sleep 0.1
	done
fi
chcpu() { awk '{ print ($14 + $15) / 100 }' "/proc/$CHPID/stat"; }
say "measuring on $TRACE ($N runs)"
i=0
while [ "$i" -lt "$N" ]; do
	# interleaved, so slow phases of a noisy machine hit every program alike
	measure fold "$FOLD" "$TRACE"
	rm -f "$DB"
	measure import "$SQL" "$TRACE" -o "$DB"
	measure import-nofile "$SQL" "$TRACE" -q "SELECT 1"
	if [ -n "$CHPID" ]; then
		measure import-noev "$SQL" "$TRACE" --no-events -q "SELECT 1"
		c0=$(chcpu)
		measure import-ch "$SQL" "$TRACE" --no-events --to "clickhouse://127.0.0.1:$CHH/bench_$i"
		echo "server-cpu - $(echo "$c0 $(chcpu)" | awk '{ printf "%.3f", $2 - $1 }') -" >>"$RES"
	fi
	i=$((i + 1))
done
"$SQL" -v "$TRACE" -o "$DB.tmp" 2>"$WORK/import.txt" >/dev/null && mv "$DB.tmp" "$DB" ||
	die "import failed: $(cat "$WORK/import.txt")"
SAMPLES=$("$SQL" "$DB" --csv -q "SELECT COUNT(*) FROM sample_rows" | tail -n 1)
QUERIES="top_self|SELECT * FROM top_self
category_time|SELECT * FROM category_time
top_total|SELECT * FROM top_total
lock_per_thread_2s_5s|SELECT thread_id, SUM(weight_ns) FROM samples WHERE category = 'lock' AND ts_ns >= 2e9 AND ts_ns < 5e9 GROUP BY thread_id
count_samples_view|SELECT COUNT(*) FROM samples
count_sample_rows|SELECT COUNT(*) FROM sample_rows"
i=0
while [ "$i" -lt "$N" ]; do
	echo "$QUERIES" | while IFS='|' read -r name q; do
		measure "q:$name" "$SQL" "$DB" -q "$q"
	done
	i=$((i + 1))
done

# ------------------------------------------------------------------ report
median() { # median of column $2 for WHAT
	awk -v w="$1" -v c="$2" '$1 == w && $c != "-" { print $c }' "$RES" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
			else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
rate() { # samples per second for a time, or "-"
	echo "$SAMPLES $1" | awk '{ if ($2 == "-" || $2 <= 0) print "-"; else printf "%.2f\n", $1 / $2 / 1e6 }'
}
bytes=$(wc -c <"$TRACE")
dbbytes=$(wc -c <"$DB")
echo
echo "SQLite store benchmark: $N runs each, medians (raw: $RES)"
echo "host: $(uname -srm), $(nproc 2>/dev/null || echo '?') CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo "trace: $TRACE, $bytes bytes, $SAMPLES samples"
echo "import: $(sed 's/^nettrace-sql: //' "$WORK/import.txt")"
echo
printf '  %-34s %9s %9s %10s %12s %12s\n' "" "wall (s)" "CPU (s)" "peak RSS" "Msamples/s" "(by CPU)"
WHATS="fold import import-nofile"
[ -n "$CHPID" ] && WHATS="$WHATS import-noev import-ch"
for w in $WHATS; do
	t=$(median "$w" 2)
	c=$(median "$w" 3)
	m=$(median "$w" 4)
	case $w in
	fold) label="baseline: nettrace-fold >/dev/null" ;;
	import) label="nettrace-sql -o DB" ;;
	import-nofile) label="nettrace-sql (in memory) -q" ;;
	import-noev) label="... --no-events (ClickHouse baseline)" ;;
	import-ch) label="nettrace-sql --no-events --to ClickHouse" ;;
	esac
	printf '  %-34s %9s %9s %7s MB %12s %12s\n' "$label" "$t" "$c" \
		"$(echo "$m" | awk '{ if ($1 == "-") print "-"; else printf "%.1f", $1 / 1024 }')" \
		"$(rate "$t")" "$(rate "$c")"
done
echo "  store cost over the baseline: $(echo "$(median import 2) $(median fold 2) $(median import 3) $(median fold 3)" |
	awk '{ printf "%.2f s wall, %.2f s CPU", $1 - $2, $3 - $4 }')"
if [ -n "$CHPID" ]; then
	echo "  ClickHouse export over its baseline: $(echo "$(median import-ch 2) $(median import-noev 2) $(median import-ch 3) $(median import-noev 3) $(median server-cpu 3) $SAMPLES" |
		awk '{ printf "%.2f s wall, %.2f s of our CPU, %.2f s of the server CPU (export alone %.2f Msamples/s by wall)", $1 - $2, $3 - $4, $5, ($1 > $2 ? $6 / ($1 - $2) / 1e6 : 0) }')"
fi
echo
echo "database: $dbbytes bytes, $(echo "$dbbytes $SAMPLES" | awk '{ printf "%.2f", $1 / $2 }') bytes per sample in all"
"$SQL" "$DB" --csv -q "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC" 2>/dev/null |
	tail -n +2 | awk -F, -v n="$SAMPLES" '
	{ b[$1] = $2; tot += $2 }
	$1 == "sample_rows" { rows = $2 }
	$1 ~ /^(callsites|frames|functions|modules|callsites_parent|callsites_frame|frames_function|sqlite_autoindex_functions_1|sqlite_autoindex_modules_1)$/ { stacks += $2 }
	$1 ~ /^(sample_groups|sample_groups_callsite|sample_groups_thread)$/ { groups += $2 }
	$1 ~ /^(events|events_name)$/ { events += $2 }
	END {
		if (!tot) { print "  (no dbstat in this SQLite)"; exit }
		printf "  sample_rows            %11d bytes  %6.2f bytes/sample\n", rows, rows / n
		printf "  sample_groups (+idx)   %11d bytes  %6.2f bytes/sample\n", groups, groups / n
		printf "  stacks (callsites, frames, functions, modules, +idx) %d bytes\n", stacks
		printf "  events (+idx)          %11d bytes\n", events
		printf "  everything but the stacks and events: %.2f bytes/sample (goal <= 24)\n", (tot - stacks - events) / n
	}'
if command -v sqlite3 >/dev/null 2>&1; then
	# baseline layout: one plain table with every column of the samples view
	cp "$DB" "$WORK/wide.db"
	sqlite3 "$WORK/wide.db" "CREATE TABLE wide(id INTEGER PRIMARY KEY, session_id INTEGER, thread_id INTEGER, ts_ns INTEGER, callsite_id INTEGER, category TEXT, weight_ns REAL); INSERT INTO wide SELECT id, session_id, thread_id, ts_ns, callsite_id, category, weight_ns FROM samples;" &&
		sqlite3 "$WORK/wide.db" "SELECT SUM(pgsize) FROM dbstat WHERE name = 'wide'" |
		awk -v n="$SAMPLES" '{ printf "  baseline: one plain samples table would take %.2f bytes/sample\n", $1 / n }'
	rm -f "$WORK/wide.db"
fi
echo
printf '  %-26s %9s %9s\n' "query" "wall (s)" "CPU (s)"
echo "$QUERIES" | while IFS='|' read -r name q; do
	printf '  %-26s %9s %9s\n' "$name" "$(median "q:$name" 2)" "$(median "q:$name" 3)"
done
[ "$KEEP" = 1 ] || rm -f "$DB"
rm -f "$WORK"/*.tmp
