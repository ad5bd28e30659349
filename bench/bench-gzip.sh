#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-gzip.sh - throughput of gzip'd trace input: nettrace-info --json on FILE.gz next
# to `zcat FILE.gz > /dev/null` measured in the same run (the floor: inflating alone), and
# next to nettrace-info --json on the uncompressed FILE and `cat FILE > /dev/null`.
#
#   bench/bench-gzip.sh [-n RUNS] [-s SIZE] [-f 5|6] [-l LEVEL]
#
#   -n RUNS    repetitions of each measurement, interleaved (default 5)
#   -s SIZE    uncompressed trace size, gen-trace syntax (default 200M)
#   -f FORMAT  trace format 5 or 6 (default 5)
#   -l LEVEL   gzip level (default 6, gzip's own)
#
# Builds an optimised nettrace-info, gen-trace and runstat in bench/out/gzip/build (the
# project's build may carry sanitizers), generates the trace and its .gz once
# (deterministic; bench/out is git-ignored), checks that both inputs give the same --json
# (but the "file" line), then prints medians of RUNS runs: wall seconds, MB/s of
# uncompressed trace, CPU seconds (user + system, with GNU time: on a busy shared machine
# wall time waits for the CPU, CPU time does not), and the ratios that matter: info on .gz
# / zcat (the cost of decoding on top of inflating: the reader streams and inflates in
# one pass, so it cannot go below 1) and info on .gz / info on the plain file. Compare
# ratios, not absolute times. A benchmark, not a test: make check and CI do not run it.
# Environment: CC (default cc), BENCH_CFLAGS (default -O2 -g).
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=$TOP/bench/out/gzip
BUILD=$OUT/build
N=5
SIZE=200M
FORMAT=5
LEVEL=6
CC=${CC:-cc}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}
. "$TOP/bench/lib-build.sh"
while getopts n:s:f:l:h opt; do
	case $opt in
	n) N=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	f) FORMAT=$OPTARG ;;
	l) LEVEL=$OPTARG ;;
	h) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "Try 'bench/bench-gzip.sh -h'." >&2; exit 1 ;;
	esac
done
bench_count "$N" "run count"
case $FORMAT in 5|6) ;; *) die "bad format '$FORMAT' (5 or 6)" ;; esac
case $LEVEL in [1-9]) ;; *) die "bad gzip level '$LEVEL' (1 to 9)" ;; esac
command -v gzip >/dev/null 2>&1 || die "gzip is not installed"
command -v zcat >/dev/null 2>&1 || die "zcat is not installed"
mkdir -p "$BUILD" || die "cannot create $BUILD"

# ------------------------------------------------------------------ build
say "building nettrace-info, gen-trace, runstat (optimised: $CC $BENCH_CFLAGS)"
bench_lib "$BUILD" reader || die "cannot build the library"
bench_link "$BUILD" nettrace-info "$TOP/tools/nettrace-info.c" "$TOP/tools/common.c" || die "nettrace-info"
bench_link "$BUILD" gen-trace "$TOP/bench/gen-trace.c" || die "gen-trace"
bench_link "$BUILD" runstat "$TOP/bench/runstat.c" || die "runstat"
INFO=$BUILD/nettrace-info

# ------------------------------------------------------------------ inputs
F=$OUT/trace-$SIZE-v$FORMAT.nettrace
GZ=$F.$LEVEL.gz
if [ ! -s "$F" ] || [ "$TOP/bench/gen-trace.c" -nt "$F" ]; then
	say "generating $F"
	"$BUILD/gen-trace" -q -s "$SIZE" -f "$FORMAT" -o "$F.tmp" && mv -f "$F.tmp" "$F" ||
		die "cannot generate $F"
fi
if [ ! -s "$GZ" ] || [ "$F" -nt "$GZ" ]; then
	say "compressing it: gzip -$LEVEL"
	gzip -c "-$LEVEL" "$F" >"$GZ.tmp" && mv -f "$GZ.tmp" "$GZ" || die "cannot write $GZ"
fi
BYTES=$(wc -c <"$F" | tr -d ' ')
GZBYTES=$(wc -c <"$GZ" | tr -d ' ')

# Correctness first: the .gz must decode to the same summary.
"$INFO" --json "$F" | grep -v '"file":' >"$OUT/plain.json" || die "nettrace-info failed on $F"
"$INFO" --json "$GZ" | grep -v '"file":' >"$OUT/gz.json" || die "nettrace-info failed on $GZ"
cmp -s "$OUT/plain.json" "$OUT/gz.json" || die "the .gz gives another --json than the plain file"

# ------------------------------------------------------------------ runs
RES=$OUT/results.txt
: >"$RES"
# GNU time gives the CPU time too; runstat (bench/runstat.c) the wall time only.
GTIME=
/usr/bin/time -f '%e %U %S' -o "$OUT/stat" true 2>/dev/null && GTIME=/usr/bin/time
# measure WHAT CMD...: one run; appends "WHAT wall_s cpu_s" to $RES (cpu_s "-" without
# GNU time). CMD runs as "sh -c 'exec ...'", so the numbers are the program's own.
measure() {
	what=$1; shift
	if [ -n "$GTIME" ]; then
		"$GTIME" -f '%e %U %S' -o "$OUT/stat" "$@" >/dev/null 2>"$OUT/err" || {
			cat "$OUT/err" >&2
			die "$what failed"
		}
		awk -v w="$what" '{ print w, $1, $2 + $3 }' "$OUT/stat" >>"$RES"
	else
		"$BUILD/runstat" -o "$OUT/stat" "$@" >/dev/null 2>"$OUT/err" || {
			cat "$OUT/err" >&2
			die "$what failed"
		}
		sed -n "s/^wall_s=\([0-9.]*\) .*/$what \1 -/p" "$OUT/stat" >>"$RES"
	fi
}
say "measuring ($N runs each, interleaved)"
cat "$F" "$GZ" >/dev/null # warm the page cache
i=0
while [ "$i" -lt "$N" ]; do
	measure cat sh -c 'exec cat "$1" >/dev/null' sh "$F"
	measure zcat sh -c 'exec zcat "$1" >/dev/null' sh "$GZ"
	measure info-gz sh -c 'exec "$1" --json "$2" >/dev/null' sh "$INFO" "$GZ"
	measure info-plain sh -c 'exec "$1" --json "$2" >/dev/null' sh "$INFO" "$F"
	i=$((i + 1))
done

# ------------------------------------------------------------------ report
median() { # median WHAT COLUMN
	awk -v w="$1" -v c="$2" '$1 == w { print $c }' "$RES" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0 || v[1] == "-") print "-";
			else if (NR % 2) print v[(NR + 1) / 2];
			else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo
echo "gzip input benchmark: format $FORMAT, $N runs each, medians (raw: $RES)"
echo "host: $(uname -srm), $(nproc 2>/dev/null || echo '?') CPUs"
awk -v b="$BYTES" -v g="$GZBYTES" -v l="$LEVEL" 'BEGIN {
	printf "trace: %d bytes; gzip -%d: %d bytes (%.1f%%)\n", b, l, g, 100 * g / b }'
printf '  %-34s %9s %12s %9s %12s\n' "" "wall (s)" "MB/s (plain)" "CPU (s)" "MB/s per CPU"
for w in cat zcat info-gz info-plain; do
	case $w in
	cat) label="cat FILE > /dev/null" ;;
	zcat) label="zcat FILE.gz > /dev/null" ;;
	info-gz) label="nettrace-info --json FILE.gz" ;;
	info-plain) label="nettrace-info --json FILE" ;;
	esac
	awk -v l="$label" -v t="$(median $w 2)" -v c="$(median $w 3)" -v b="$BYTES" 'BEGIN {
		if (c == "-") printf "  %-34s %9.3f %12.1f %9s %12s\n", l, t, b / t / 1e6, "-", "-"
		else printf "  %-34s %9.3f %12.1f %9.3f %12.1f\n", l, t, b / t / 1e6, c,
			(c > 0 ? b / c / 1e6 : 0) }'
done
for col in 2 3; do
	[ "$(median zcat $col)" = - ] && continue
	awk -v k="$([ $col = 2 ] && echo wall || echo CPU)" -v z="$(median zcat $col)" \
		-v g="$(median info-gz $col)" -v p="$(median info-plain $col)" 'BEGIN {
		printf "ratios (%s): info on .gz / zcat = %.2f; info on .gz / info on plain = %.2f\n",
			k, g / z, g / p }'
done
