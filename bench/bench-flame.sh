#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-flame.sh - throughput of nettrace-flame on a large folded-stacks input.
#
#   bench/bench-flame.sh [-n RUNS] [-s STACKS] [-m MINWIDTH]
#
# Generates (once, deterministically) bench/out/flame/stacks-STACKS.folded: STACKS distinct
# stacks (default 150000, at least 100000 for the issue's goal), 8 to 44 frames deep, with
# .NET-style frame names and the prefix sharing of a real sorted folded file. Builds an
# optimised nettrace-flame in bench/out/flame/build (the project's build may carry
# sanitizers), runs it RUNS times (default 5) writing the SVG to a file, and prints the
# median time and MB/s of folded input next to `cat FILE >/dev/null` measured in the same
# run; inferno-flamegraph and flamegraph.pl are timed too when they are on PATH (inferno
# publishes ~38 MiB/s, flamegraph.pl is about 20x slower). Goal: >= 200 MB/s.
# Also prints the SVG's size and frame count (the default --minwidth 0.1 px prunes).
# A benchmark, not a test: make check and CI do not run it. Environment: CC, BENCH_CFLAGS.
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=$TOP/bench/out/flame
BUILD=$OUT/build
N=5
STACKS=150000
MINW=
CC=${CC:-cc}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}
. "$TOP/bench/lib-build.sh"
while getopts n:s:m:h opt; do
	case $opt in
	n) N=$OPTARG ;;
	s) STACKS=$OPTARG ;;
	m) MINW=$OPTARG ;;
	h) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "Try 'bench/bench-flame.sh -h'." >&2; exit 1 ;;
	esac
done
bench_count "$N" "run count"
bench_count "$STACKS" "stack count"
mkdir -p "$BUILD" || die "cannot create $BUILD"

# ------------------------------------------------------------------ build
say "building nettrace-flame (optimised: $CC $BENCH_CFLAGS)"
bench_lib "$BUILD" export-svg || die "cannot build the library"
bench_link "$BUILD" nettrace-flame "$TOP/tools/nettrace-flame.c" "$TOP/tools/common.c" ||
	die "nettrace-flame"
FLAME=$BUILD/nettrace-flame

# ------------------------------------------------------------------ input
IN=$OUT/stacks-$STACKS.folded
if [ ! -s "$IN" ] || [ "$0" -nt "$IN" ]; then
	say "generating $IN ($STACKS distinct stacks)"
	# Stack k is k written in a mixed radix (a call tree with fan-outs 2..6), each digit a
	# branch point followed by 0-2 frames every caller of it shares, so consecutive lines
	# share long prefixes as in a sorted folded file; weights 1..1000.
	awk -v n="$STACKS" 'BEGIN {
		split("System.Private.CoreLib|System.Linq|Microsoft.AspNetCore.Server.Kestrel.Core|App.Core|App.Data|Newtonsoft.Json|System.Net.Http", mods, "|")
		split("Invoke|Run|Execute|Process|Handle|Dispatch|MoveNext|ReadAsync|WriteAsync|Parse|Serialize|Compute", meths, "|")
		split("(int32,class System.String)|()|(class System.Threading.CancellationToken)|(valuetype System.ReadOnlySpan`1<uint8>,int32&)|(class System.Object[])", sigs, "|")
		nl = 0
		while (1) { f[nl] = 2 + (nl * 7 + 3) % 5; nl++; p = 1; for (i = 0; i < nl; i++) p *= f[i]; if (p >= n) break }
		srand(42)
		for (k = 0; k < n; k++) {
			line = "Thread (" 1000 + int(k * 3 / n) ")"
			r = k
			for (l = nl - 1; l >= 0; l--) { d[l] = r % f[l]; r = int(r / f[l]) }
			id = 0
			for (l = 0; l < nl; l++) {
				id = id * 7 + d[l] + 1
				for (e = 0; e <= (l * 5 + d[l]) % 3; e++) {
					h = (id * 31 + e * 17 + l) % 1000003
					line = line ";" mods[1 + h % 7] "!" mods[1 + int(h / 7) % 7] ".Component" (h % 97) ".Type" l "." meths[1 + h % 12] "_" e sigs[1 + h % 5]
				}
			}
			printf "%s %d\n", line, 1 + int(rand() * 1000)
		}
	}' >"$IN.tmp" && mv -f "$IN.tmp" "$IN" || die "cannot generate $IN"
fi
BYTES=$(wc -c <"$IN" | tr -d ' ')
LINES=$(wc -l <"$IN" | tr -d ' ')
say "input: $LINES stacks, $BYTES bytes"

# ------------------------------------------------------------------ runs
now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# time_runs CMD...: median wall time of N runs, in seconds
time_runs() {
	: >"$OUT/times"
	i=0
	while [ $i -lt "$N" ]; do
		t0=$(now)
		"$@" >/dev/null 2>"$OUT/err" || { cat "$OUT/err" >&2; return 1; }
		t1=$(now)
		echo "$t1 - $t0" | bc -l >>"$OUT/times" 2>/dev/null ||
			awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$OUT/times"
		i=$((i + 1))
	done
	median <"$OUT/times"
}
report() { # report NAME SECONDS
	awk -v n="$1" -v s="$2" -v b="$BYTES" 'BEGIN {
		printf "%-34s median %8.3f s  %8.1f MB/s  %8.1f MiB/s\n", n, s, b / s / 1e6, b / s / 1048576 }'
}
MINOPT=
[ -n "$MINW" ] && MINOPT="--minwidth $MINW"
echo "bench-flame: $LINES distinct stacks, $BYTES bytes of folded input, $N runs"
report "cat FILE >/dev/null" "$(time_runs cat "$IN")"
# shellcheck disable=SC2086
t=$(time_runs "$FLAME" --folded $MINOPT -o "$OUT/out.svg" "$IN") || die "nettrace-flame failed"
report "nettrace-flame (SVG)" "$t"
# shellcheck disable=SC2086
t=$(time_runs "$FLAME" --folded --format pprof -o "$OUT/out.pb.gz" "$IN") || die "nettrace-flame failed"
report "nettrace-flame --format pprof" "$t"
if command -v inferno-flamegraph >/dev/null 2>&1; then
	report "inferno-flamegraph" "$(time_runs inferno-flamegraph "$IN")"
fi
if command -v flamegraph.pl >/dev/null 2>&1; then
	N=1 report "flamegraph.pl (1 run)" "$(N=1 time_runs flamegraph.pl "$IN")"
fi
echo "SVG: $(wc -c <"$OUT/out.svg" | tr -d ' ') bytes, $(grep -c '^<g v=' "$OUT/out.svg") frames drawn"
