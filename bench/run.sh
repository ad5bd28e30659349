#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - decode and fold benchmarks: throughput and peak RSS of nt_reader (both orders)
# and of nettrace-fold on large generated traces, next to `cat FILE > /dev/null` measured
# in the same run. Prints medians over N runs and ratios to cat (machines are shared and
# noisy: compare ratios, not absolute times), by wall-clock and by CPU time (user + system,
# which does not count waiting for a core, so it is the steadier figure on a loaded
# machine). This is a benchmark, not a test.
#
#   bench/run.sh [-n RUNS] [-s "SIZE..."] [-f 5|6] [-k]
#
#   -n RUNS    repetitions per measurement (default 5; env N)
#   -s SIZES   trace sizes, gen-trace syntax (default "150M 600M"; env SIZES): two sizes
#              show whether peak RSS depends on the file size
#   -f FORMAT  trace format 5 or 6 (default 5; env FORMAT)
#   -k         keep going when nettrace-fold cannot be built (it is then skipped)
#
# Output goes to bench/out/ (gitignored): the traces, bench/out/trace-SIZE-vFORMAT.nettrace
# (generated once, deterministic, regenerated when gen-trace.c changes; other benchmarks
# reuse them), and in bench/out/decode/ an optimised build of the library and the programs
# (the project's own build may use sanitizers, which would measure ASan) and the raw
# measurements (results-vFORMAT.txt). Environment: CC (default cc), BENCH_CFLAGS
# (default -O2 -g), BENCH_LIBS (default: those of -ldwarf -lelf -lsqlite3 -lz -lm that link,
# i.e. the libraries configure.ac requires).
# Goals (issue): decode >= 1 GB/s single-threaded, fold >= 1 GB/s of trace, peak RSS
# < 64 MB whatever the file size.
set -u

cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=$TOP/bench/out
WORK=$OUT/decode
BUILD=$WORK/build
N=${N:-5}
SIZES=${SIZES:-150M 600M}
FORMAT=${FORMAT:-5}
KEEP_GOING=0
CC=${CC:-cc}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}
BENCH_LIBS=${BENCH_LIBS-}

die() { printf 'bench/run.sh: %s\n' "$*" >&2; exit 1; }
say() { printf '==> %s\n' "$*" >&2; }

while getopts n:s:f:kh opt; do
	case $opt in
	n) N=$OPTARG ;;
	s) SIZES=$OPTARG ;;
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
# Generated sources, made as Makefile.am makes them: every "libtrace/X.h: $(top_srcdir)/F"
# rule there turns a text file into C string literal lines with the same sed script.
mkdir -p "$BUILD/libtrace"
# shellcheck disable=SC2016 # $(top_srcdir) is make syntax, matched literally
sed -n 's|^\(libtrace/[A-Za-z0-9_-]*\.h\): $(top_srcdir)/\([^ ]*\)$|\1 \2|p' "$TOP/Makefile.am" |
	while read -r gen from; do
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/"/' -e 's/$/\\n"/' \
			"$TOP/$from" >"$BUILD/$gen" || die "cannot generate $gen"
	done
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
if [ -z "$BENCH_LIBS" ]; then
	printf 'int main(void) { return 0; }\n' >"$BUILD/probe.c"
	for l in dwarf elf sqlite3 z m; do
		$CC "$BUILD/probe.c" -l$l -o "$BUILD/probe" 2>/dev/null && BENCH_LIBS="$BENCH_LIBS -l$l"
	done
	rm -f "$BUILD/probe" "$BUILD/probe.c"
fi
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

# ------------------------------------------------------------------ traces
to_bytes() { # gen-trace size syntax -> bytes (integer part only is enough here)
	echo "$1" | awk '{ v = $0 + 0; u = toupper(substr($0, length($0)));
		if (u == "K") v *= 1024; else if (u == "M") v *= 1048576;
		else if (u == "G") v *= 1073741824; printf "%.0f\n", v }'
}
# stale FILE: missing, or older than the generator (find -newer: test -nt is not POSIX)
stale() { [ ! -f "$1" ] || [ -n "$(find "$TOP/bench/gen-trace.c" -newer "$1")" ]; }
need=0
for s in $SIZES; do
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
for s in $SIZES; do
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
		if [ -n "$FOLD" ]; then
			# shellcheck disable=SC2016
			measure "$s" fold sh -c 'exec "$1" "$2" >/dev/null' sh "$FOLD" "$f"
		fi
		i=$((i + 1))
	done
done
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
	fold) echo "nettrace-fold > /dev/null" ;;
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
	for w in cat decode-time decode-file decode-light fold; do
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
done
echo
echo "peak RSS (MB, median) by trace size (goal: < 64 MB, independent of the size):"
printf '  %-26s' ""
for s in $SIZES; do printf ' %10s' "$s"; done
echo
first=$(echo "$SIZES" | awk '{ print $1 }')
for w in decode-time decode-file fold; do
	[ "$(median "$first" $w 5)" = - ] && continue
	printf '  %-26s' "$(label $w)"
	for s in $SIZES; do
		printf ' %10.1f' "$(median "$s" $w 5 | awk '{ print $1 / 1024 }')"
	done
	echo
done
echo
echo "goal: >= 1 GB/s for decode and for fold (single-threaded); see the GB/s columns."
echo "Decode touches every stack IP and payload byte; \"headers only\" skips that, to show"
echo "the reader's own share."
