#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-dotnetdiag.sh - nettrace-fold next to pyroscope's dotnetdiag (Go, the reader and
# SampleProfiler of the pyroscope .NET agent) on the same generated trace: medians over N
# interleaved runs of wall time, CPU time (user + system: the steadier figure on a shared
# machine) and peak RSS of `nettrace-fold --compat=pyroscope` (our copy of dotnetdiag's
# attribution), `nettrace-fold --jobs 1`, `nettrace-fold` (the default --jobs: the CPUs,
# the trace read in chunks on two threads) and dotnetdiag, the ratios dotnetdiag / ours, and
# whether dotnetdiag's folded stacks equal ours (sorted). This is a benchmark, not a test.
#
#   bench/bench-dotnetdiag.sh [-n RUNS] [-s "SIZE..."]
#
#   -n RUNS    repetitions per measurement (default 5; env N)
#   -s SIZES   trace sizes, gen-trace syntax (default 40M; env SIZES)
#
# dotnetdiag (github.com/pyroscope-io/dotnetdiag, Apache-2.0) is not in this tree: fetch and
# build it outside. Environment:
#   DOTNETDIAG      a driver binary: DRIVER FILE prints FILE's folded stacks on stdout (the
#                   driver bench/dotnetdiag-fold.go, built); or a dotnetdiag checkout, as
#                   DOTNETDIAG_SRC
#   DOTNETDIAG_SRC  a dotnetdiag checkout: bench/dotnetdiag-fold.go is built against it with
#                   go (GOPATH mode, offline: its nettrace packages need only Go's standard
#                   library) into bench/out/dotnetdiag/dotnetdiag-fold
#   GO              the go command (default go)
# Without either, the dotnetdiag row is skipped (one line says how to enable it) and only
# ours are measured. Builds an optimised copy of the library and nettrace-fold in
# bench/out/dotnetdiag/build (the project's build may carry sanitizers), reuses bench/run.sh's
# traces (bench/out/trace-SIZE-v5.nettrace, deterministic) and writes the raw measurements
# to bench/out/dotnetdiag/results.txt and both folded outputs next to them. Also: CC (default
# cc), BENCH_CFLAGS (default -O2 -g). Goal (issue): nettrace-fold >= 20x faster than
# dotnetdiag on the same file.
set -u

cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=$TOP/bench/out
WORK=$OUT/dotnetdiag
BUILD=$WORK/build
N=${N:-5}
SIZES=${SIZES:-40M}
CC=${CC:-cc}
GO=${GO:-go}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}
NCPU=$(nproc 2>/dev/null || echo 1) # nettrace-fold's default --jobs
DOTNETDIAG=${DOTNETDIAG-}
DOTNETDIAG_SRC=${DOTNETDIAG_SRC-}
. "$TOP/bench/lib-build.sh"

while getopts n:s:h opt; do
	case $opt in
	n) N=$OPTARG ;;
	s) SIZES=$OPTARG ;;
	h) sed -n '3,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "Try 'bench/bench-dotnetdiag.sh -h'." >&2; exit 1 ;;
	esac
done
bench_count "$N" "run count"
[ -n "$SIZES" ] || die "no trace size (-s)"
mkdir -p "$BUILD" || die "cannot create $BUILD"

# ------------------------------------------------------------------ build
say "building (optimised: $CC $BENCH_CFLAGS) in bench/out/dotnetdiag/build"
bench_lib "$BUILD" fold || die "cannot build the library"
for p in gen-trace runstat; do
	bench_link "$BUILD" "$p" "$TOP/bench/$p.c" || die "$p"
done
bench_link "$BUILD" nettrace-fold "$TOP/tools/nettrace-fold.c" "$TOP/tools/common.c" ||
	die "nettrace-fold"
FOLD=$BUILD/nettrace-fold

# the peer: a binary, or our driver built against a dotnetdiag checkout
if [ -n "$DOTNETDIAG" ] && [ -d "$DOTNETDIAG" ]; then
	DOTNETDIAG_SRC=$DOTNETDIAG DOTNETDIAG=
fi
DD=
DD_WHAT=
DD_SKIP=
if [ -n "$DOTNETDIAG" ]; then
	[ -x "$DOTNETDIAG" ] || die "DOTNETDIAG=$DOTNETDIAG is not an executable file"
	DD=$DOTNETDIAG
	DD_WHAT=$DD
elif [ -n "$DOTNETDIAG_SRC" ]; then
	[ -d "$DOTNETDIAG_SRC/nettrace/profiler" ] ||
		die "DOTNETDIAG_SRC=$DOTNETDIAG_SRC is not a dotnetdiag checkout (no nettrace/profiler)"
	command -v "$GO" >/dev/null 2>&1 || die "DOTNETDIAG_SRC is set but there is no go ($GO)"
	src=$(cd "$DOTNETDIAG_SRC" && pwd)
	gp=$WORK/gopath
	mkdir -p "$gp/src/github.com/pyroscope-io" || die "cannot create $gp"
	rm -f "$gp/src/github.com/pyroscope-io/dotnetdiag"
	ln -s "$src" "$gp/src/github.com/pyroscope-io/dotnetdiag" || die "cannot link $src"
	# a go without a home has no build cache of its own
	[ -n "$("$GO" env GOCACHE 2>/dev/null)" ] || { GOCACHE=$WORK/gocache; export GOCACHE; }
	say "building bench/dotnetdiag-fold.go against $src ($("$GO" version 2>/dev/null))"
	GO111MODULE=off GOPATH=$gp GOFLAGS= "$GO" build -o "$WORK/dotnetdiag-fold" \
		"$TOP/bench/dotnetdiag-fold.go" >"$WORK/go-build.log" 2>&1 ||
		die "cannot build bench/dotnetdiag-fold.go (see $WORK/go-build.log)"
	DD=$WORK/dotnetdiag-fold
	rev=$(git -C "$src" log -1 --format='%h %cs' 2>/dev/null)
	DD_WHAT="bench/dotnetdiag-fold.go, dotnetdiag ${rev:-(not a git checkout)}"
else
	DD_SKIP="skipped: set DOTNETDIAG to a driver binary or DOTNETDIAG_SRC to a dotnetdiag checkout (with go) to measure it"
fi

# ------------------------------------------------------------------ traces
for s in $SIZES; do
	bench_trace "$BUILD" "$OUT" "$s"
done

# ------------------------------------------------------------------ measurements
RES=$WORK/results.txt
: >"$RES"
STAT=$WORK/stat.tmp
# measure SIZE WHAT CMD... : one run, stdout to $WORK/WHAT-SIZE.folded; appends
# "SIZE WHAT wall_s cpu_s maxrss_kb" to $RES
measure() {
	size=$1 what=$2
	shift 2
	"$BUILD/runstat" -o "$STAT" "$@" >"$WORK/$what-$size.folded" 2>"$WORK/stderr.tmp" || {
		cat "$WORK/stderr.tmp" >&2
		die "$what failed on the $size trace"
	}
	sed -n 's/^wall_s=\([0-9.]*\) cpu_s=\([0-9.]*\) maxrss_kb=\([0-9]*\).*/\1 \2 \3/p' "$STAT" |
		{ read -r w c m; echo "$size $what $w $c $m" >>"$RES"; }
}
for s in $SIZES; do
	f=$OUT/trace-$s-v5.nettrace
	say "measuring $f ($N runs)"
	cat "$f" >/dev/null # warm the page cache
	i=0
	while [ "$i" -lt "$N" ]; do
		# interleaved, so slow phases of a noisy machine hit every program alike
		measure "$s" compat "$FOLD" --compat=pyroscope "$f"
		measure "$s" fold "$FOLD" --jobs 1 "$f"
		measure "$s" foldn "$FOLD" "$f"
		[ -n "$DD" ] && measure "$s" dotnetdiag "$DD" "$f"
		i=$((i + 1))
	done
done
rm -f "$STAT" "$WORK/stderr.tmp"

# ------------------------------------------------------------------ report
median() { # median SIZE WHAT COLUMN (3 wall, 4 cpu, 5 maxrss); "-" when not measured
	awk -v s="$1" -v w="$2" -v c="$3" '$1 == s && $2 == w { print $c }' "$RES" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
			else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
label() {
	case $1 in
	compat) echo "nettrace-fold --compat=pyroscope" ;;
	fold) echo "nettrace-fold --jobs 1" ;;
	foldn) echo "nettrace-fold (--jobs $NCPU)" ;;
	dotnetdiag) echo "dotnetdiag (SampleProfiler)" ;;
	esac
}
echo
echo "nettrace-fold vs pyroscope dotnetdiag: $N runs each, interleaved, medians (raw: $RES)"
echo "host: $(uname -srm), $(nproc 2>/dev/null || echo '?') CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
[ -n "$DD" ] && echo "dotnetdiag: $DD_WHAT"
echo "x ours = dotnetdiag's time / that nettrace-fold line's time in the same run"
for s in $SIZES; do
	f=$OUT/trace-$s-v5.nettrace
	bytes=$(wc -c <"$f")
	echo
	printf '  %-34s %9s %7s | %9s %7s | %9s\n' "$s trace, $bytes bytes" "wall (s)" "MB/s" \
		"cpu (s)" "MB/s" "peak RSS"
	for w in compat fold foldn dotnetdiag; do
		t=$(median "$s" $w 3)
		[ "$t" = - ] && continue
		echo "$t $(median "$s" $w 4) $(median "$s" $w 5) $bytes" | awk -v l="$(label $w)" '{
			printf "  %-34s %9.3f %7.1f | %9.3f %7.1f | %6.1f MB\n", l, $1,
				($1 > 0) ? $4 / $1 / 1e6 : 0, $2, ($2 > 0) ? $4 / $2 / 1e6 : 0, $3 / 1024 }'
	done
	if [ -z "$DD" ]; then
		echo "  dotnetdiag: $DD_SKIP"
		continue
	fi
	for w in compat fold foldn; do
		echo "$(median "$s" dotnetdiag 3) $(median "$s" $w 3) $(median "$s" dotnetdiag 4) $(median "$s" $w 4)" |
			awk -v l="$(label $w)" '{ printf "  dotnetdiag / %-32s wall %6.1fx   cpu %6.1fx\n", l,
				($2 > 0) ? $1 / $2 : 0, ($4 > 0) ? $3 / $4 : 0 }'
	done
	# the same stacks and weights? (both print sorted lines; sort again to be sure)
	LC_ALL=C sort "$WORK/dotnetdiag-$s.folded" >"$WORK/dotnetdiag-$s.sorted"
	LC_ALL=C sort "$WORK/compat-$s.folded" >"$WORK/compat-$s.sorted"
	if cmp -s "$WORK/dotnetdiag-$s.sorted" "$WORK/compat-$s.sorted"; then
		echo "  folded output: dotnetdiag = nettrace-fold --compat=pyroscope ($(wc -l <"$WORK/compat-$s.sorted") stacks, identical)"
	else
		echo "  folded output: dotnetdiag and nettrace-fold --compat=pyroscope differ in" \
			"$(diff "$WORK/dotnetdiag-$s.sorted" "$WORK/compat-$s.sorted" | grep -c '^[<>]') lines" \
			"(see $WORK/*-$s.sorted)"
	fi
done
echo
echo "--compat=pyroscope charges each interval to the sample that ends it, as dotnetdiag does;"
echo "it runs with the default --jobs ($(nproc 2>/dev/null || echo '?') here: a second thread decodes when there are 2 CPUs)."
echo "--jobs 1 is the default attribution (the inferred interval per sample), on one thread;"
echo "--jobs $NCPU the same read in chunks by two threads (the default: the CPUs there are);"
echo "dotnetdiag is Go: its garbage collector runs on other threads too."
echo "goal: nettrace-fold >= 20x faster than dotnetdiag on the same file."
exit 0
