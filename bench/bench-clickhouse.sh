#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-clickhouse.sh - ClickHouse import benchmark: samples/s of `nettrace-sql --no-events
# --to clickhouse://` into a local clickhouse-server started for the run, next to the SQLite
# import of the same trace (`nettrace-sql --no-events -o DB`, the baseline) and to
# nettrace-fold (the reading and profiling alone). Prints medians over N runs of wall time,
# our CPU time (user + system: the steadier figure on a shared machine) and the server's
# CPU time (from /proc), as samples per second. This is a benchmark, not a test.
#
#   bench/bench-clickhouse.sh [-n RUNS] [-s SIZE]
#
#   -n RUNS   repetitions of each measurement (default 3; env N)
#   -s SIZE   trace size, gen-trace syntax (default 40M: about 3.4 million samples; env SIZE)
#
# Builds an optimised copy of the library and the programs in bench/out/clickhouse/ (the
# project's build may carry sanitizers), reuses the generated traces of bench/run.sh
# (bench/out/trace-SIZE-v5.nettrace, deterministic), and writes raw results to
# bench/out/clickhouse/results.txt. Each ClickHouse run imports into a database of its own
# (a trace already there would be skipped). Environment: CC (default cc), BENCH_CFLAGS
# (default -O2 -g). Needs clickhouse-server and clickhouse-client (run.sh installs them).
# Goal (issue): >= 1M samples/s into a local ClickHouse.
set -u

cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=$TOP/bench/out
WORK=$OUT/clickhouse
BUILD=$WORK/build
N=${N:-3}
SIZE=${SIZE:-40M}
CC=${CC:-cc}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}
. "$TOP/bench/lib-build.sh"

while getopts n:s:h opt; do
	case $opt in
	n) N=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	h) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "Try 'bench/bench-clickhouse.sh -h'." >&2; exit 1 ;;
	esac
done
bench_count "$N" "run count"
CHS=$(command -v clickhouse-server || ls /usr/sbin/clickhouse-server 2>/dev/null)
CHC=$(command -v clickhouse-client)
[ -n "$CHS" ] && [ -n "$CHC" ] || die "clickhouse-server and clickhouse-client are needed"
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is needed for the CPU times"
mkdir -p "$BUILD/libtrace" || die "cannot create $BUILD"

# ------------------------------------------------------------------ build
say "building (optimised: $CC $BENCH_CFLAGS) in bench/out/clickhouse/build"
bench_sql_build "$BUILD" store-clickhouse
SQL=$BUILD/nettrace-sql
FOLD=$BUILD/nettrace-fold

# ------------------------------------------------------------------ trace
bench_trace "$BUILD" "$OUT" "$SIZE"
cat "$TRACE" >/dev/null # warm the page cache

# ------------------------------------------------------------------ the server
CHD=$WORK/server
rm -rf "$CHD" && mkdir -p "$CHD/data" "$CHD/tmp" || die "cannot create $CHD"
CHPID=
trap '[ -n "$CHPID" ] && kill "$CHPID" 2>/dev/null; rm -rf "$CHD"' EXIT
started=0
base=$(( 33000 + ($$ % 1000) * 2 ))
for attempt in 1 2 3; do
	CHH=$base CHT=$((base + 1))
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
	i=0
	while [ $i -lt 300 ] && kill -0 "$CHPID" 2>/dev/null; do
		"$CHC" --port "$CHT" -q "SELECT 1" >/dev/null 2>&1 && { started=1; break; }
		sleep 0.1
		i=$((i + 1))
	done
	[ $started = 1 ] && break
	kill "$CHPID" 2>/dev/null; wait "$CHPID" 2>/dev/null
	CHPID=
	base=$((base + 37))
done
[ $started = 1 ] || die "clickhouse-server did not start: $(tail -n 3 "$CHD/error.log" 2>/dev/null)"
say "clickhouse-server $("$CHC" --port "$CHT" -q "SELECT version()") on 127.0.0.1:$CHH"

# ------------------------------------------------------------------ measurements
# measure WHAT CMD...: one run; appends "WHAT wall_s cpu_s maxrss_kb server_cpu_s export_s" to
# $RES (export_s: the wall time of the ClickHouse export after the reading, from -v; else -).
RES=$WORK/results.txt
: >"$RES"
TIMEF=$WORK/time.tmp
chcpu() { awk '{ printf "%.2f\n", ($14 + $15) / 100 }' "/proc/$CHPID/stat"; }
measure() {
	what=$1; shift
	c0=$(chcpu)
	/usr/bin/time -f '%e %U %S %M' -o "$TIMEF" "$@" >"$WORK/stdout.tmp" 2>"$WORK/stderr.tmp" || {
		cat "$WORK/stderr.tmp" >&2
		die "$what failed"
	}
	c1=$(chcpu)
	x=$(sed -n 's/.*ClickHouse: .* in \([0-9.]*\) s$/\1/p' "$WORK/stderr.tmp" | tail -n 1)
	awk -v w="$what" -v s="$(echo "$c0 $c1" | awk '{ printf "%.2f", $2 - $1 }')" -v x="${x:--}" \
		'{ printf "%s %s %.3f %s %s %s\n", w, $1, $2 + $3, $4, s, x }' "$TIMEF" >>"$RES"
}
DB=$WORK/bench.db
say "measuring on $TRACE ($N runs)"
i=0
while [ "$i" -lt "$N" ]; do
	# interleaved, so slow phases of a noisy machine hit every program alike
	measure fold "$FOLD" "$TRACE"
	rm -f "$DB"
	measure sqlite "$SQL" "$TRACE" --no-events -o "$DB"
	measure clickhouse "$SQL" "$TRACE" -v --no-events --to "clickhouse://127.0.0.1:$CHH/bench_$i"
	i=$((i + 1))
done
SAMPLES=$("$CHC" --port "$CHT" -q "SELECT count() FROM bench_0.samples")
LITE=$("$SQL" "$DB" --csv -q "SELECT COUNT(*) FROM sample_rows" | tail -n 1)
[ "$SAMPLES" = "$LITE" ] || say "warning: ClickHouse has $SAMPLES samples, SQLite $LITE"
rm -f "$DB"

# ------------------------------------------------------------------ report
median() { # median of column $2 for WHAT
	awk -v w="$1" -v c="$2" '$1 == w && $c != "-" { print $c }' "$RES" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
			else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
rate() { # million samples per second for a time, or "-"
	echo "$SAMPLES $1" | awk '{ if ($2 == "-" || $2 <= 0) print "-"; else printf "%.2f\n", $1 / $2 / 1e6 }'
}
echo
echo "ClickHouse import benchmark: $N runs each, medians (raw: $RES)"
echo "host: $(uname -srm), $(nproc 2>/dev/null || echo '?') CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo "trace: $TRACE, $(wc -c <"$TRACE") bytes, $SAMPLES samples"
echo
printf '  %-40s %8s %8s %9s %9s %11s %11s\n' "" "wall (s)" "CPU (s)" "peak RSS" "server" "Ms/s wall" "Ms/s CPU"
for w in fold sqlite clickhouse; do
	case $w in
	fold) label="nettrace-fold (reading, profiling)" ;;
	sqlite) label="baseline: nettrace-sql --no-events -o DB" ;;
	clickhouse) label="nettrace-sql --no-events --to ClickHouse" ;;
	esac
	t=$(median "$w" 2)
	c=$(median "$w" 3)
	printf '  %-40s %8s %8s %6s MB %7s s %11s %11s\n' "$label" "$t" "$c" \
		"$(median "$w" 4 | awk '{ printf "%.0f", $1 / 1024 }')" "$(median "$w" 5)" \
		"$(rate "$t")" "$(rate "$c")"
done
echo "  (server: the clickhouse-server's CPU time during the run; Ms/s: million samples per second)"
# what the machine's load hides: the wall time two free cores would need at least for our
# CPU and the server's, and the export's share of the wall time
echo "$(median clickhouse 3) $(median clickhouse 5) $(median clickhouse 6) $(median clickhouse 2) $SAMPLES $(nproc 2>/dev/null || echo 2)" |
	awk '{ b = ($1 + $2) / $6; printf "  ClickHouse import: our CPU + the server'"'"'s = %.2f s, on %d free cores at least %.2f s of wall (%.2f Ms/s);\n", $1 + $2, $6, b, $5 / b / 1e6
	       printf "  the export after the reading took %s s of the %s s of wall\n", $3, $4 }'
rm -f "$WORK"/*.tmp
