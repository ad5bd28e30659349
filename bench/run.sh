#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - decode and fold benchmarks: throughput and peak RSS of nt_reader (both orders),
# nettrace-info and nettrace-fold on large generated traces, next to `cat FILE > /dev/null`
# measured in the same run. Prints medians over N runs and ratios to cat (machines are
# shared and noisy: compare ratios, not absolute times), by wall-clock and by CPU time
# (user + system, which does not count waiting for a core, so it is the steadier figure
# on a loaded machine). This is a benchmark, not a test.
# Peers: on one more trace (-p, default 40M: the .NET side is slow) nettrace-info,
# nettrace-fold and nettrace-flame --format speedscope run next to TraceEvent's
# EventPipeEventSource.Process() (tests/dotnet/oracle's `parse`: TraceEvent 3.2.5 from
# NuGet), interleaved, with ratios to nettrace-info; and on a smaller trace (-c, default
# 4M: dotnet-trace needs ~2 GB and minutes for 40M, and writes a speedscope file ~80 times
# the trace's size) `dotnet-trace convert --format speedscope` (dotnet-trace 10.0.750501,
# with its own TraceEvent) next to nettrace-flame --format speedscope. Skipped with the
# reason where dotnet (or NuGet) is missing. pyroscope's dotnetdiag (Go, built outside the
# tree) has its own script: bench/bench-dotnetdiag.sh.
#
#   bench/run.sh [-n RUNS] [-s "SIZE..."] [-p SIZE] [-c SIZE] [-f 5|6] [-k]
#
#   -n RUNS    repetitions per measurement (default 5; env N)
#   -s SIZES   trace sizes, gen-trace syntax (default "150M 600M"; env SIZES): two sizes
#              show whether peak RSS depends on the file size
#   -p SIZE    trace size of the peer comparison (default 40M; env PEER_SIZE; "" skips it)
#   -c SIZE    trace size of the speedscope comparison (default 4M; env CONVERT_SIZE; ""
#              skips it)
#   -f FORMAT  trace format 5 or 6 (default 5; env FORMAT)
#   -k         keep going when nettrace-fold cannot be built (it is then skipped)
#
# Output goes to bench/out/ (gitignored): the traces, bench/out/trace-SIZE-vFORMAT.nettrace
# (generated once, deterministic, regenerated when gen-trace.c changes; other benchmarks
# reuse them), and in bench/out/decode/ an optimised build of the library and the programs
# (the project's own build may use sanitizers, which would measure ASan) and the raw
# measurements (results-vFORMAT.txt); bench/out/dotnet/ the .NET peers and their outputs. Environment: CC (default cc), BENCH_CFLAGS
# (default -O2 -g), BENCH_LIBS (default: those of -ldwarf -lelf -lsqlite3 -lz -liberty -lm -lpthread that link,
# i.e. the libraries configure.ac requires).
# Goals (issue): nettrace-info --no-symbols (decode, counts only) >= 600 MB/s and
# nettrace-fold --jobs 1 >= 300 MB/s on one core, peak RSS < 64 MB whatever the file size.
set -u

cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=$TOP/bench/out
WORK=$OUT/decode
BUILD=$WORK/build
N=${N:-5}
SIZES=${SIZES:-150M 600M}
PEER_SIZE=${PEER_SIZE-40M}
CONVERT_SIZE=${CONVERT_SIZE-4M}
FORMAT=${FORMAT:-5}
KEEP_GOING=0
CC=${CC:-cc}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}
BENCH_LIBS=${BENCH_LIBS-}

. "$TOP/bench/lib-build.sh"
die() { printf 'bench/run.sh: %s\n' "$*" >&2; exit 1; }
# the CPUs this process may run on: nettrace-fold's default --jobs
NCPU=$(nproc 2>/dev/null || echo 1)
say() { printf '==> %s\n' "$*" >&2; }

while getopts n:s:p:c:f:kh opt; do
	case $opt in
	n) N=$OPTARG ;;
	s) SIZES=$OPTARG ;;
	p) PEER_SIZE=$OPTARG ;;
	c) CONVERT_SIZE=$OPTARG ;;
	f) FORMAT=$OPTARG ;;
	k) KEEP_GOING=1 ;;
	h) sed -n '3,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "Try 'bench/run.sh -h'." >&2; exit 1 ;;
	esac
done
case $N in ''|*[!0-9]*|0) die "bad run count '$N'" ;; esac
case $FORMAT in 5|6) ;; *) die "bad format '$FORMAT' (5 or 6)" ;; esac

mkdir -p "$BUILD" || die "cannot create $BUILD"

# ------------------------------------------------------------------ build
# All of libtrace/*.c goes into one static archive; each program links what it needs, so
# a module that does not build yet only disables the programs that use it.
say "building (optimised: $CC $BENCH_CFLAGS) in bench/out/decode/build"
# config.h: configure's when the tree is configured (it only says which headers exist),
# else the one thing every file needs.
if [ -f "$TOP/config.h" ]; then
	cp "$TOP/config.h" "$BUILD/config.h"
else
	printf '#define _GNU_SOURCE 1\n' >"$BUILD/config.h"
fi
bench_gen_headers "$BUILD" || die "cannot generate the headers of Makefile.am"
CPPFLAGS="-I$BUILD -I$TOP/libtrace/include -I$TOP/libtrace -I$TOP/tools"
# Debian puts libdwarf's headers in a subdirectory (configure.ac probes both places).
[ -d /usr/include/libdwarf ] && CPPFLAGS="$CPPFLAGS -I/usr/include/libdwarf"
rm -f "$BUILD"/*.o "$BUILD/libnt.a"
for src in "$TOP"/libtrace/*.c; do
	obj=$BUILD/$(basename "$src" .c).o
	# shellcheck disable=SC2086
	$CC -std=c11 $BENCH_CFLAGS $CPPFLAGS -c "$src" -o "$obj" 2>"$obj.log" ||
		say "warning: $(basename "$src") does not build (see $obj.log)"
done
ar rcs "$BUILD/libnt.a" "$BUILD"/*.o || die "cannot create libnt.a"
[ -z "$BENCH_LIBS" ] && BENCH_LIBS=$(bench_libs "$BUILD")
link() { # link NAME SOURCES...
	name=$1; shift
	# shellcheck disable=SC2086
	$CC -std=c11 $BENCH_CFLAGS $CPPFLAGS "$@" "$BUILD/libnt.a" $BENCH_LIBS \
		-o "$BUILD/$name" 2>"$BUILD/$name.log"
}
for p in gen-trace decode-bench runstat; do
	link "$p" "$TOP/bench/$p.c" || die "cannot build $p (see $BUILD/$p.log)"
done
FOLD=$BUILD/nettrace-fold
if ! link nettrace-fold "$TOP/tools/nettrace-fold.c" "$TOP/tools/common.c"; then
	[ "$KEEP_GOING" = 1 ] ||
		die "cannot build nettrace-fold (see $BUILD/nettrace-fold.log; -k skips it)"
	say "warning: nettrace-fold does not build; skipping it (see $BUILD/nettrace-fold.log)"
	FOLD=
fi
# the peer comparison's own tools (skipped, like fold, when they do not build)
PINFO=$BUILD/nettrace-info
PFLAME=$BUILD/nettrace-flame
link nettrace-info "$TOP/tools/nettrace-info.c" "$TOP/tools/common.c" || PINFO=
link nettrace-flame "$TOP/tools/nettrace-flame.c" "$TOP/tools/common.c" || PFLAME=

# ------------------------------------------------------------------ .NET peers
# TraceEvent (the oracle of the tests, built here) and dotnet-trace, under bench/out/dotnet;
# DOTNET_SKIP says why not, when they are missing.
DOTNET_DIR=$OUT/dotnet
DOTNET_SKIP=
ORACLE=
DTRACE=
DOTNET_TRACE_VERSION=10.0.750501
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
if [ -z "$PEER_SIZE$CONVERT_SIZE" ]; then
	DOTNET_SKIP="no peer size (-p, -c)"
elif ! command -v dotnet >/dev/null 2>&1; then
	DOTNET_SKIP="dotnet is not installed (the .NET 10 SDK runs the peers)"
else
	mkdir -p "$DOTNET_DIR" || die "cannot create $DOTNET_DIR"
	# rebuilt when a source is newer than the build (as tests/e2e/lib-dotnet.sh does)
	if [ ! -x "$DOTNET_DIR/oracle/out/nt-oracle" ] ||
		[ -n "$(find "$TOP/tests/dotnet/oracle" -newer "$DOTNET_DIR/oracle/out/nt-oracle" -type f)" ]; then
		say "building the TraceEvent oracle (tests/dotnet/oracle) in bench/out/dotnet"
		rm -rf "$DOTNET_DIR/oracle" && mkdir -p "$DOTNET_DIR/oracle/src" &&
			cp -R "$TOP/tests/dotnet/oracle/." "$DOTNET_DIR/oracle/src/" &&
			chmod -R u+w "$DOTNET_DIR/oracle/src" || die "cannot copy tests/dotnet/oracle"
		dotnet build -nologo -v q -c Release -o "$DOTNET_DIR/oracle/out" "$DOTNET_DIR/oracle/src" \
			>"$DOTNET_DIR/oracle-build.log" 2>&1 ||
			DOTNET_SKIP="the TraceEvent oracle does not build (see $DOTNET_DIR/oracle-build.log)"
	fi
	[ -z "$DOTNET_SKIP" ] && ORACLE=$DOTNET_DIR/oracle/out/nt-oracle
	d=$DOTNET_DIR/dotnet-trace-$DOTNET_TRACE_VERSION
	if [ ! -x "$d/dotnet-trace" ]; then
		say "installing dotnet-trace $DOTNET_TRACE_VERSION in bench/out/dotnet"
		dotnet tool install dotnet-trace --version "$DOTNET_TRACE_VERSION" --tool-path "$d" \
			>"$DOTNET_DIR/dotnet-trace-install.log" 2>&1 ||
			say "warning: dotnet-trace does not install (see $DOTNET_DIR/dotnet-trace-install.log)"
	fi
	[ -x "$d/dotnet-trace" ] && DTRACE=$d/dotnet-trace
fi

# ------------------------------------------------------------------ traces
to_bytes() { # gen-trace size syntax -> bytes (integer part only is enough here)
	echo "$1" | awk '{ v = $0 + 0; u = toupper(substr($0, length($0)));
		if (u == "K") v *= 1024; else if (u == "M") v *= 1048576;
		else if (u == "G") v *= 1073741824; printf "%.0f\n", v }'
}
# stale FILE: missing, or older than the generator (find -newer: test -nt is not POSIX)
stale() { [ ! -f "$1" ] || [ -n "$(find "$TOP/bench/gen-trace.c" -newer "$1")" ]; }
need=0
for s in $SIZES $PEER_SIZE $CONVERT_SIZE; do
	f=$OUT/trace-$s-v$FORMAT.nettrace
	if stale "$f"; then
		need=$((need + $(to_bytes "$s")))
	fi
done
if [ "$need" -gt 0 ]; then
	# df -P: POSIX format, 1024-byte blocks; keep 1 GiB to spare
	avail=$(df -P "$OUT" | awk 'NR == 2 { printf "%.0f\n", $4 * 1024 }')
	[ "$avail" -gt $((need + 1073741824)) ] ||
		die "not enough disk space in $OUT: need $need bytes + 1 GiB, have $avail"
fi
for s in $SIZES $PEER_SIZE $CONVERT_SIZE; do
	f=$OUT/trace-$s-v$FORMAT.nettrace
	if stale "$f"; then
		say "generating $f"
		"$BUILD/gen-trace" -s "$s" -f "$FORMAT" -o "$f.tmp" || die "cannot generate $f"
		mv "$f.tmp" "$f" || die "cannot rename $f.tmp"
	fi
done

# ------------------------------------------------------------------ measurements
RES=$WORK/results-v$FORMAT.txt
: >"$RES"
STAT=$WORK/stat.tmp
# measure SIZE WHAT CMD... : one run; appends "SIZE WHAT wall_s cpu_s maxrss_kb" to $RES
measure() {
	size=$1 what=$2; shift 2
	"$BUILD/runstat" -o "$STAT" "$@" >"$WORK/stdout.tmp" 2>"$WORK/stderr.tmp" || {
		cat "$WORK/stderr.tmp" >&2
		die "$what failed on the $size trace"
	}
	sed -n 's/^wall_s=\([0-9.]*\) cpu_s=\([0-9.]*\) maxrss_kb=\([0-9]*\).*/\1 \2 \3/p' "$STAT" |
		{ read -r w c m; echo "$size $what $w $c $m" >>"$RES"; }
}
for s in $SIZES; do
	f=$OUT/trace-$s-v$FORMAT.nettrace
	say "measuring $f ($N runs)"
	cat "$f" >/dev/null # warm the page cache
	# Correctness first: both orders must see the same events (order-independent sum).
	"$BUILD/decode-bench" -m time "$f" >"$WORK/info-$s-time.txt" || die "decode-bench failed"
	"$BUILD/decode-bench" -m file "$f" >"$WORK/info-$s-file.txt" || die "decode-bench failed"
	c1=$(sed -n 's/.*checksum=\([0-9a-f]*\).*/\1/p' "$WORK/info-$s-time.txt")
	c2=$(sed -n 's/.*checksum=\([0-9a-f]*\).*/\1/p' "$WORK/info-$s-file.txt")
	if [ -z "$c1" ] || [ "$c1" != "$c2" ]; then
		die "decode checksums differ: time $c1, file $c2"
	fi
	i=0
	while [ "$i" -lt "$N" ]; do
		# interleaved, so slow phases of a noisy machine hit every program alike
		# shellcheck disable=SC2016 # $1, $2: the inner shell's arguments
		measure "$s" cat sh -c 'exec cat "$1" >/dev/null' sh "$f"
		measure "$s" decode-time "$BUILD/decode-bench" -m time "$f"
		measure "$s" decode-file "$BUILD/decode-bench" -m file "$f"
		measure "$s" decode-light "$BUILD/decode-bench" -m file -l "$f"
		if [ -n "$PINFO" ]; then
			# shellcheck disable=SC2016
			measure "$s" info-counts sh -c 'exec "$1" --no-symbols "$2" >/dev/null' sh "$PINFO" "$f"
			# shellcheck disable=SC2016
			measure "$s" info sh -c 'exec "$1" --jobs 1 "$2" >/dev/null' sh "$PINFO" "$f"
			# shellcheck disable=SC2016
			[ "$NCPU" -gt 1 ] && measure "$s" info-jn sh -c 'exec "$1" --jobs "$3" "$2" >/dev/null' sh "$PINFO" "$f" "$NCPU"
		fi
		if [ -n "$FOLD" ]; then
			# shellcheck disable=SC2016
			measure "$s" fold sh -c 'exec "$1" --jobs 1 "$2" >/dev/null' sh "$FOLD" "$f"
			# shellcheck disable=SC2016
			[ "$NCPU" -gt 1 ] && measure "$s" fold-jn sh -c 'exec "$1" --jobs "$3" "$2" >/dev/null' sh "$FOLD" "$f" "$NCPU"
		fi
		i=$((i + 1))
	done
done

# Peers, on the peer trace: every program reads it all and writes its result to a file
# (or /dev/null); the speedscope files are kept in bench/out/dotnet for a look.
if [ -n "$PEER_SIZE" ]; then
	s=$PEER_SIZE
	f=$OUT/trace-$s-v$FORMAT.nettrace
	P=$OUT/dotnet
	mkdir -p "$P" || die "cannot create $P"
	say "measuring the peers on $f ($N runs)"
	cat "$f" >/dev/null
	if [ -n "$ORACLE" ]; then
		"$ORACLE" parse "$f" >"$P/te-parse.txt" 2>"$P/te-parse.err" || {
			say "warning: TraceEvent cannot read $f: $(cat "$P/te-parse.err")"
			ORACLE=
			DOTNET_SKIP="TraceEvent cannot read the trace (see $P/te-parse.err)"
		}
	fi
	: >"$P/te-parse-s.txt"
	i=0
	while [ "$i" -lt "$N" ]; do
		# shellcheck disable=SC2016
		[ -n "$PINFO" ] && measure "$s" p-info sh -c 'exec "$1" --jobs 1 "$2" >/dev/null' sh "$PINFO" "$f"
		# shellcheck disable=SC2016
		[ -n "$FOLD" ] && measure "$s" p-fold sh -c 'exec "$1" --jobs 1 "$2" >/dev/null' sh "$FOLD" "$f"
		# shellcheck disable=SC2016
		[ -n "$FOLD" ] && [ "$NCPU" -gt 1 ] && measure "$s" p-fold-jn sh -c 'exec "$1" --jobs "$3" "$2" >/dev/null' sh "$FOLD" "$f" "$NCPU"
		[ -n "$PFLAME" ] && measure "$s" p-speedscope "$PFLAME" --format speedscope -o "$P/ours.speedscope.json" "$f"
		if [ -n "$ORACLE" ]; then
			measure "$s" te-parse "$ORACLE" parse "$f"
			# its own clock, start-up excluded
			sed -n 's/^parse_s //p' "$WORK/stdout.tmp" >>"$P/te-parse-s.txt"
		fi
		i=$((i + 1))
	done
fi
# speedscope files: ours next to dotnet-trace's (which names its file OUT.speedscope.json)
if [ -n "$CONVERT_SIZE" ]; then
	s=$CONVERT_SIZE
	f=$OUT/trace-$s-v$FORMAT.nettrace
	P=$OUT/dotnet
	mkdir -p "$P" || die "cannot create $P"
	say "measuring the speedscope writers on $f ($N runs)"
	cat "$f" >/dev/null
	i=0
	while [ "$i" -lt "$N" ]; do
		[ -n "$PFLAME" ] && measure "$s" p-speedscope "$PFLAME" --format speedscope -o "$P/ours.speedscope.json" "$f"
		if [ -n "$DTRACE" ]; then
			rm -f "$P/dotnet-trace.speedscope.json"
			measure "$s" dt-speedscope "$DTRACE" convert --format speedscope -o "$P/dotnet-trace" "$f"
			wc -c <"$P/dotnet-trace.speedscope.json" >"$P/dotnet-trace.size" 2>/dev/null
			rm -f "$P/dotnet-trace.speedscope.json" # big: its size is kept
		fi
		i=$((i + 1))
	done
fi
rm -f "$STAT" "$WORK/stdout.tmp" "$WORK/stderr.tmp"

# ------------------------------------------------------------------ report
median() { # median SIZE WHAT COLUMN (3 wall, 4 cpu, 5 maxrss); "-" when not measured
	awk -v s="$1" -v w="$2" -v c="$3" '$1 == s && $2 == w { print $c }' "$RES" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
			else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
label() {
	case $1 in
	cat) echo "cat FILE > /dev/null" ;;
	decode-time) echo "decode (timestamp order)" ;;
	decode-file) echo "decode (file order)" ;;
	decode-light) echo "  same, headers only" ;;
	info-counts) echo "nettrace-info --no-symbols" ;;
	info) echo "nettrace-info --jobs 1" ;;
	info-jn) echo "nettrace-info --jobs $NCPU" ;;
	fold) echo "nettrace-fold --jobs 1" ;;
	fold-jn) echo "nettrace-fold --jobs $NCPU" ;;
	p-info) echo "nettrace-info --jobs 1" ;;
	p-fold) echo "nettrace-fold --jobs 1" ;;
	p-fold-jn) echo "nettrace-fold --jobs $NCPU" ;;
	p-speedscope) echo "nettrace-flame (speedscope)" ;;
	te-parse) echo "TraceEvent Process()" ;;
	dt-speedscope) echo "dotnet-trace convert (speedscope)" ;;
	esac
}
echo
echo "nettrace decode/fold benchmark: format $FORMAT, $N runs each, medians (raw: $RES)"
echo "host: $(uname -srm), $(nproc 2>/dev/null || echo '?') CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo "x cat = time / cat's time in the same run; GB/s = trace bytes / time"
for s in $SIZES; do
	f=$OUT/trace-$s-v$FORMAT.nettrace
	bytes=$(wc -c <"$f")
	events=$(sed -n 's/.* events=\([0-9]*\).*/\1/p' "$WORK/info-$s-file.txt")
	echo
	printf 'trace %s: %s bytes, %s events (%.1f bytes/event)\n' "$s" "$bytes" "$events" \
		"$(echo "$bytes $events" | awk '{ print $2 ? $1 / $2 : 0 }')"
	printf '  %-26s %9s %7s %7s | %9s %7s %7s | %9s\n' "" "wall (s)" "GB/s" "x cat" \
		"cpu (s)" "GB/s" "x cat" "peak RSS"
	wcat=$(median "$s" cat 3)
	ccat=$(median "$s" cat 4)
	for w in cat decode-time decode-file decode-light info-counts info info-jn fold fold-jn; do
		t=$(median "$s" $w 3)
		[ "$t" = - ] && continue
		c=$(median "$s" $w 4)
		m=$(median "$s" $w 5)
		echo "$t $wcat $c $ccat $bytes $m" | awk -v l="$(label $w)" '{
			cr = ($4 > 0) ? sprintf("%7.1f", $3 / $4) : "      -"
			cg = ($3 > 0) ? sprintf("%7.3f", $5 / $3 / 1e9) : "      -"
			printf "  %-26s %9.3f %7.3f %7.1f | %9.3f %s %s | %6.1f MB\n", l, $1,
				$5 / $1 / 1e9, $1 / $2, $3, cg, cr, $6 / 1024 }'
	done
	# the scaling the issue asks for: --jobs NCPU against --jobs 1, same run
	for tool in fold info; do
		w1=$(median "$s" $tool 3) wn=$(median "$s" $tool-jn 3)
		c1=$(median "$s" $tool 4) cn=$(median "$s" $tool-jn 4)
		[ "$NCPU" -gt 1 ] && [ "$w1" != - ] && [ "$wn" != - ] || continue
		echo "$w1 $wn $c1 $cn" | awk -v n="$NCPU" -v t="$tool" '$2 > 0 && $3 > 0 {
			printf "  %s --jobs %d against --jobs 1: %.2fx the speed (wall), %.2fx the CPU " \
			       "time (goal: >= 1.8x on 2 cores)\n", t, n, $1 / $2, $4 / $3 }'
	done
done
echo
echo "peak RSS (MB, median) by trace size (goal: < 64 MB, independent of the size):"
printf '  %-26s' ""
for s in $SIZES; do printf ' %10s' "$s"; done
echo
first=$(echo "$SIZES" | awk '{ print $1 }')
for w in decode-time decode-file info-counts fold fold-jn; do
	[ "$(median "$first" $w 5)" = - ] && continue
	printf '  %-26s' "$(label $w)"
	for s in $SIZES; do
		printf ' %10.1f' "$(median "$s" $w 5 | awk '{ print $1 / 1024 }')"
	done
	echo
done
echo
echo "goals: nettrace-info --no-symbols (decode, counts) >= 0.6 GB/s and nettrace-fold"
echo "--jobs 1 >= 0.3 GB/s on one core; see the CPU GB/s column (one core's throughput)."
echo "nettrace-info without --no-symbols also builds a profile in the same read, whose"
echo "finish resolves the samples' frames, as the profile tools do."
echo "nettrace-fold and nettrace-info --jobs $NCPU read the trace in chunks on two threads,"
echo "each with a reader, and merge them (info's counts too). Both cost CPU time; wall time"
echo "shrinks when a second core is free: compare wall times on an idle machine."
echo "Decode touches every stack IP and payload byte; \"headers only\" skips that, to show"
echo "the reader's own share."

# ------------------------------------------------------------------ peers
# peer_table SIZE BASE WHAT...: medians of WHAT on the SIZE trace, ratios to BASE's
peer_table() {
	s=$1 base=$2
	shift 2
	bytes=$(wc -c <"$OUT/trace-$s-v$FORMAT.nettrace")
	printf '  %-34s %9s %7s %7s | %9s %7s %7s | %9s\n' "$s trace, $bytes bytes" "wall (s)" "MB/s" \
		"x base" "cpu (s)" "MB/s" "x base" "peak RSS"
	wb=$(median "$s" "$base" 3)
	cb=$(median "$s" "$base" 4)
	for w in "$@"; do
		t=$(median "$s" "$w" 3)
		[ "$t" = - ] && continue
		c=$(median "$s" "$w" 4)
		m=$(median "$s" "$w" 5)
		echo "$t $wb $c $cb $bytes $m" | awk -v l="$(label "$w")" '{
			wr = ($2 != "-" && $2 > 0) ? sprintf("%7.1f", $1 / $2) : "      -"
			cr = ($4 != "-" && $4 > 0) ? sprintf("%7.1f", $3 / $4) : "      -"
			cg = ($3 > 0) ? sprintf("%7.1f", $5 / $3 / 1e6) : "      -"
			printf "  %-34s %9.3f %7.1f %s | %9.3f %s %s | %6.1f MB\n", l, $1,
				$5 / $1 / 1e6, wr, $3, cg, cr, $6 / 1024 }'
	done
}
[ -n "$PEER_SIZE$CONVERT_SIZE" ] || exit 0
echo
echo "peers, $N runs each, medians; x base = time / the first line's time in the same run"
echo "(wall, and CPU = user + system: the steadier figure on a loaded machine)"
if [ -n "$PEER_SIZE" ]; then
	s=$PEER_SIZE
	bytes=$(wc -c <"$OUT/trace-$s-v$FORMAT.nettrace")
	peer_table "$s" p-info p-info p-fold p-fold-jn p-speedscope te-parse
	winfo=$(median "$s" p-info 3)
fi
if [ -n "$PEER_SIZE" ] && [ -s "$OUT/dotnet/te-parse-s.txt" ]; then
	tp=$(sort -g "$OUT/dotnet/te-parse-s.txt" | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	echo "$tp $winfo $bytes" | awk '{ printf "  %-34s %9.3f %7.1f %s\n", "  same, its own clock (no start-up)",
		$1, $3 / $1 / 1e6, ($2 != "-" && $2 > 0) ? sprintf("%7.1f", $1 / $2) : "      -" }'
fi
if [ -n "$CONVERT_SIZE" ]; then
	peer_table "$CONVERT_SIZE" p-speedscope p-speedscope dt-speedscope
	[ -s "$OUT/dotnet/dotnet-trace.size" ] && printf '  speedscope file: ours %s bytes, dotnet-trace'"'"'s %s bytes\n' \
		"$(wc -c <"$OUT/dotnet/ours.speedscope.json")" "$(cat "$OUT/dotnet/dotnet-trace.size")"
fi
[ -n "$DOTNET_SKIP" ] && echo "  TraceEvent and dotnet-trace: skipped: $DOTNET_SKIP"
[ -z "$DOTNET_SKIP" ] && [ -z "$DTRACE" ] && echo "  dotnet-trace convert: skipped: dotnet-trace does not install"
echo "TraceEvent's Process() decodes headers and dispatches every event without payload fields;"
echo "dotnet-trace convert builds a TraceLog (.etlx), its thread-time stacks and the speedscope file."
echo "pyroscope dotnetdiag: bench/bench-dotnetdiag.sh (DOTNETDIAG or DOTNETDIAG_SRC: built outside the tree)."
exit 0
