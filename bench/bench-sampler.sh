#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-sampler.sh - overhead of the libnettrace sampler on a CPU-bound multi-threaded
# workload (bench/bench-sampler-work.c) at 100 Hz and 1 kHz, next to no profiler,
# gperftools' CPU profiler (libprofiler, CPUPROFILE_FREQUENCY) and perf record -g at the
# same rates, all measured in the same run with the configurations interleaved (A B C ...
# A B C ...), and the median of N runs of each. This is a benchmark, not a test.
#
#   bench/bench-sampler.sh [-n RUNS] [-t THREADS] [-m MILLION_ITERATIONS] [-c CONFIGS]
#
#   -n RUNS     runs per configuration (default 5; env N)
#   -t THREADS  workload threads (default: the number of CPUs; env THREADS)
#   -m M        million iterations per thread (default 1200, about 2 s; env MITER)
#   -b LIB      also run ntsbase-100/ntsbase-1000: the perf_events backend of another build
#               of libnettrace-sampler.so (e.g. the last commit's), for a before/after in one
#               run (env BASE_LIB)
#   -c CONFIGS  the configurations to run, e.g. 'none nts-1000 ntsperf-1000' (default:
#               every one this machine can run; env CONFIGS); "none" is always run
#
# Reported per configuration: median wall time and CPU time (user + system of the whole
# process tree, so the sampler thread and perf itself count), their ratios to the run
# without a profiler, the samples taken, and the cost per sample: (CPU - CPU without a
# profiler) / samples. On a shared machine the CPU time is the steadier figure (it does
# not count waiting for a core); compare ratios, not absolute times.
#
# gperftools: libprofiler.so.0 from libgoogle-perftools-dev (apt-get install -y
# libgoogle-perftools-dev google-perftools when missing and run as root; otherwise its
# rows are skipped). Its ITIMER_PROF timer fires at most once per kernel tick (CONFIG_HZ,
# 250 here: doc/sampler-design.md §0), so "1000 Hz" gives fewer samples. perf: skipped with
# a note when perf_event_open is not permitted. Output and builds go to bench/out/sampler/
# (gitignored). Environment: CC (default cc), BENCH_CFLAGS (default -O2 -g), BENCH_NO_INSTALL
# (set: never apt-get; the tests set it).
# Floors: ftgkill-1000 and ftimer-1000 run bench/floor-sampler.c, signals with an empty
# handler at 1 kHz (from a sampler thread with tgkill to the threads whose CPU clock moved,
# as ours does; or per-thread kernel timers): what the machine charges for the signals
# alone, which no signal-based sampler avoids. "samples" is their signal count.
# fperf*-1000 run it with FLOOR=perf: the perf_events backend's events and rings with
# nobody reading the samples (the ring freed every round): what the kernel charges for
# perf sampling itself. fperf-1000 is the backend's event as it is (16 KiB stack copies,
# switch records, a wake-up every round); fperfk8-1000 wakes every 8 rounds; only with -c:
# fperf0-1000 (no stack copy), fperf4k-1000 and fperf8k-1000 (4 and 8 KiB copies),
# fperfnosw-1000 (no switch records), fperfk64-1000 (a wake-up every 64 rounds) and
# fperfbare-1000 (registers only: no stack copy, no switch records, a wake-up every 64
# rounds: the least any perf_events sampler pays). "samples" is the samples in their rings.
# nts-* use the signal backend, ntsperf-* the perf_events backend (NETTRACE_BACKEND; the
# latter only where perf_event_open is permitted).
# Goal (issue): <= 1% slowdown at 1 kHz, and less than gperftools at the same rate.
set -u

cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=$TOP/bench/out/sampler
BUILD=$OUT/build
N=${N:-5}
THREADS=${THREADS:-$(nproc 2>/dev/null || echo 2)}
MITER=${MITER:-1200}
CC=${CC:-cc}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}
. "$TOP/bench/lib-build.sh"

die() { printf 'bench-sampler.sh: %s\n' "$*" >&2; exit 1; }
say() { printf '==> %s\n' "$*" >&2; }

PICK=${CONFIGS-}
BASE_LIB=${BASE_LIB-}
while getopts n:t:m:c:b:h opt; do
	case $opt in
	n) N=$OPTARG ;;
	t) THREADS=$OPTARG ;;
	m) MITER=$OPTARG ;;
	c) PICK=$OPTARG ;;
	b) BASE_LIB=$OPTARG ;;
	h) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "Try 'bench/bench-sampler.sh -h'." >&2; exit 1 ;;
	esac
done
case $N in ''|*[!0-9]*|0) die "bad run count '$N'" ;; esac
case $THREADS in ''|*[!0-9]*|0) die "bad thread count '$THREADS'" ;; esac

mkdir -p "$BUILD" || die "cannot create $BUILD"

# ------------------------------------------------------------------ build
say "building (optimised: $CC $BENCH_CFLAGS) in bench/out/sampler/build"
if [ -f "$TOP/config.h" ]; then
	cp "$TOP/config.h" "$BUILD/config.h"
else
	printf '#define _GNU_SOURCE 1\n' >"$BUILD/config.h"
fi
CPPFLAGS="-I$BUILD -I$TOP/libtrace/include -I$TOP/libtrace -I$TOP/sampler"
# shellcheck disable=SC2086
$CC -std=c11 $BENCH_CFLAGS -fPIC -fvisibility=hidden -shared $CPPFLAGS -DNTS_BUILDING_LIB \
	-o "$BUILD/libnettrace-sampler.so" $(bench_sources sampler_libntsampler_la) \
	-Wl,--version-script="$TOP/sampler/sampler.map" -lm -lpthread ||
	die "cannot build the sampler library"
# shellcheck disable=SC2086
$CC -std=c11 $BENCH_CFLAGS -fPIC -shared -o "$BUILD/libfloor.so" "$TOP/bench/floor-sampler.c" \
	-ldl -lpthread -lrt || die "cannot build the floor library"
# shellcheck disable=SC2086
$CC $BENCH_CFLAGS -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread \
	-o "$BUILD/work" "$TOP/bench/bench-sampler-work.c" || die "cannot build the workload"
# shellcheck disable=SC2086
$CC $BENCH_CFLAGS -o "$BUILD/runstat" "$TOP/bench/runstat.c" || die "cannot build runstat"

# ------------------------------------------------------------------ peers
PROFILER=""
for p in /usr/lib/x86_64-linux-gnu/libprofiler.so.0 /usr/lib64/libprofiler.so.0 \
	/usr/local/lib/libprofiler.so.0; do
	[ -f "$p" ] && PROFILER=$p && break
done
if [ -z "$PROFILER" ] && [ -z "${BENCH_NO_INSTALL-}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	say "installing gperftools (libgoogle-perftools-dev google-perftools)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q libgoogle-perftools-dev \
		google-perftools >"$OUT/apt.log" 2>&1 || say "apt-get failed (see $OUT/apt.log)"
	[ -f /usr/lib/x86_64-linux-gnu/libprofiler.so.0 ] &&
		PROFILER=/usr/lib/x86_64-linux-gnu/libprofiler.so.0
fi
NOTES=""
[ -n "$PROFILER" ] || NOTES="$NOTES
gperftools: libprofiler.so.0 not found (apt-get install libgoogle-perftools-dev): skipped"
PPROF=$(command -v google-pprof || command -v pprof || true)
PERF=""
if command -v perf >/dev/null 2>&1 &&
	perf record -q -F 100 -g -o "$OUT/probe.data" -- true >/dev/null 2>&1; then
	PERF=perf
else
	NOTES="$NOTES
perf: perf record is not installed or not permitted (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)): skipped"
fi

CONFIGS="none nts-100 nts-1000 ftgkill-1000 ftimer-1000"
# the perf_events backend where this process may use it (doc/sampler-design.md §9)
if env LD_PRELOAD="$BUILD/libnettrace-sampler.so" NETTRACE_OUTPUT="$OUT/probe.nettrace" \
	NETTRACE_BACKEND=perf NETTRACE_STATUS_FD=9 true 9>"$OUT/status" 2>/dev/null &&
	grep -q '^ok ' "$OUT/status"; then
	CONFIGS="$CONFIGS ntsperf-100 ntsperf-1000 fperf-1000 fperfk8-1000"
	PERF_EXTRA="fperf0-1000 fperf4k-1000 fperf8k-1000 fperfnosw-1000 fperfk64-1000"
	PERF_EXTRA="$PERF_EXTRA fperfbare-1000"
	if [ -n "$BASE_LIB" ]; then
		[ -f "$BASE_LIB" ] || die "no library $BASE_LIB"
		CONFIGS="$CONFIGS ntsbase-100 ntsbase-1000"
	fi
else
	NOTES="$NOTES
ntsperf: the perf_events backend cannot be used here ($(cat "$OUT/status")): skipped"
fi
[ -n "$PROFILER" ] && CONFIGS="$CONFIGS gperf-100 gperf-1000"
[ -n "$PERF" ] && CONFIGS="$CONFIGS perf-100 perf-1000"
if [ -n "$PICK" ]; then
	# the picked ones this machine can run, in the order given; "none" first, always
	want="none"
	for cfg in $PICK; do
		case " $CONFIGS ${PERF_EXTRA-} " in
		*" $cfg "*) [ "$cfg" = none ] || want="$want $cfg" ;;
		*) NOTES="$NOTES
$cfg: not a configuration this machine can run: skipped" ;;
		esac
	done
	CONFIGS=$want
fi

# ------------------------------------------------------------------ runs
RES=$OUT/results.txt
: >"$RES"
: >"$OUT/split.txt"
STAT=$OUT/stat.txt

# run_one CONFIG: one run, appends "CONFIG wall cpu samples" to $RES.
run_one() {
	cfg=$1
	rate=${cfg#*-}
	samples=0
	case $cfg in
	none)
		"$BUILD/runstat" -o "$STAT" env "$BUILD/work" "$THREADS" "$MITER" >/dev/null ;;
	nts-*|ntsperf-*|ntsbase-*)
		rm -f "$OUT/status"
		backend=signal lib=$BUILD/libnettrace-sampler.so
		case $cfg in ntsperf-*) backend=perf ;; ntsbase-*) backend=perf lib=$BASE_LIB ;; esac
		# env, not runstat, gets the preload (runstat must not record itself)
		"$BUILD/runstat" -o "$STAT" env LD_PRELOAD="$lib" \
			NETTRACE_OUTPUT="$OUT/nts.nettrace" NETTRACE_FREQUENCY="$rate" \
			NETTRACE_BACKEND=$backend \
			NETTRACE_STATUS_FD=9 "$BUILD/work" "$THREADS" "$MITER" \
			>/dev/null 9>"$OUT/status" 2>/dev/null
		samples=$(sed -n 's/.*samples=\([0-9]*\).*/\1/p' "$OUT/status" | tail -n 1)
		# the sampler's own accounting: handler and sampler-thread CPU per sample
		sed -n 's/.* handler_ns=\([0-9]*\) sampler_ns=\([0-9]*\).*/\1 \2/p' "$OUT/status" |
			tail -n 1 | awk -v c="$cfg" -v s="${samples:-0}" '{ if (s > 0)
			printf "%s %.0f %.0f\n", c, $1 / s, $2 / s }' >>"$OUT/split.txt" ;;
	ftgkill-*|ftimer-*)
		m=${cfg%%-*}
		"$BUILD/runstat" -o "$STAT" env LD_PRELOAD="$BUILD/libfloor.so" FLOOR="${m#f}" \
			FLOOR_HZ="$rate" "$BUILD/work" "$THREADS" "$MITER" >/dev/null 2>"$OUT/floor.txt"
		samples=$(sed -n 's/^floor: \([0-9]*\) signals.*/\1/p' "$OUT/floor.txt") ;;
	fperf*)
		# the variant: stack copy bytes, switch records, rounds per wake-up
		fst=16384 fsw=1 fk=1
		case ${cfg%%-*} in
		fperf0) fst=0 ;;
		fperf4k) fst=4096 ;;
		fperf8k) fst=8192 ;;
		fperfnosw) fsw=0 ;;
		fperfk8) fk=8 ;;
		fperfk64) fk=64 ;;
		fperfbare) fst=0 fsw=0 fk=64 ;;
		esac
		"$BUILD/runstat" -o "$STAT" env LD_PRELOAD="$BUILD/libfloor.so" FLOOR=perf \
			FLOOR_HZ="$rate" FLOOR_STACK=$fst FLOOR_SWITCH=$fsw FLOOR_WAKE=$fk \
			"$BUILD/work" "$THREADS" "$MITER" >/dev/null 2>"$OUT/floor.txt"
		samples=$(sed -n 's/^floor: \([0-9]*\) samples.*/\1/p' "$OUT/floor.txt") ;;
	gperf-*)
		rm -f "$OUT/gperf.prof"
		"$BUILD/runstat" -o "$STAT" env LD_PRELOAD="$PROFILER" \
			CPUPROFILE="$OUT/gperf.prof" CPUPROFILE_FREQUENCY="$rate" \
			"$BUILD/work" "$THREADS" "$MITER" >/dev/null 2>/dev/null
		if [ -n "$PPROF" ]; then
			samples=$("$PPROF" --text "$BUILD/work" "$OUT/gperf.prof" 2>/dev/null |
				sed -n 's/^Total: \([0-9]*\) samples.*/\1/p')
		fi ;;
	perf-*)
		"$BUILD/runstat" -o "$STAT" perf record -q -F "$rate" -g -o "$OUT/perf.data" \
			-- "$BUILD/work" "$THREADS" "$MITER" >/dev/null 2>&1
		samples=$(perf script -i "$OUT/perf.data" -F tid 2>/dev/null | grep -c .) ;;
	esac
	wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$STAT")
	cpu=$(sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$STAT")
	echo "$cfg ${wall:-0} ${cpu:-0} ${samples:-0}" >>"$RES"
}

say "workload: $THREADS threads x $MITER M iterations; $N runs of: $CONFIGS"
i=0
while [ "$i" -lt "$N" ]; do
	i=$((i + 1))
	# rotate the order so that no configuration always runs first
	set -- $CONFIGS
	k=$(( (i - 1) % $# ))
	while [ "$k" -gt 0 ]; do
		first=$1
		shift
		set -- "$@" "$first"
		k=$((k - 1))
	done
	for cfg in "$@"; do
		run_one "$cfg"
	done
	say "run $i of $N done"
done

# ------------------------------------------------------------------ report
median() { # median CONFIG COLUMN (2 wall, 3 cpu, 4 samples)
	awk -v c="$1" -v col="$2" '$1 == c { print $col }' "$RES" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2];
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
bw=$(median none 2)
bc=$(median none 3)
echo
echo "sampler overhead: $THREADS threads x $MITER M iterations, $N runs each, medians (raw: $RES)"
printf '%-12s %9s %9s %8s %8s %9s %11s\n' config wall_s cpu_s wall/0 cpu/0 samples ns/sample
for cfg in $CONFIGS; do
	w=$(median "$cfg" 2)
	c=$(median "$cfg" 3)
	s=$(median "$cfg" 4)
	awk -v cfg="$cfg" -v w="$w" -v c="$c" -v s="$s" -v bw="$bw" -v bc="$bc" 'BEGIN {
		ns = (s > 0 && cfg != "none") ? sprintf("%.0f", (c - bc) / s * 1e9) : "-"
		printf "%-12s %9.3f %9.3f %8.4f %8.4f %9d %11s\n", cfg, w, c, w / bw, c / bc, s, ns }'
done
for cfg in nts-100 nts-1000 ntsperf-100 ntsperf-1000 ntsbase-100 ntsbase-1000; do
	h=$(awk -v c="$cfg" '$1 == c { print $2 }' "$OUT/split.txt" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
	st=$(awk -v c="$cfg" '$1 == c { print $3 }' "$OUT/split.txt" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
	[ -n "$h" ] && echo "$cfg per sample: signal handler $h ns, sampler thread $st ns" \
		"(medians; the rest of ns/sample is the kernel's: signal delivery, scheduling)"
done
fpc=$(median fperf-1000 3)
awk -v bc="$bc" -v fpc="$fpc" 'BEGIN { if (bc > 0 && fpc > 0)
	printf "perf_events floor at 1 kHz (fperf-1000, nobody reading): %+.2f%% CPU\n",
	       (fpc / bc - 1) * 100 }'
fc=$(median ftgkill-1000 3)
nc=$(median nts-1000 3)
tc=$(median ftimer-1000 3)
awk -v bc="$bc" -v fc="$fc" -v nc="$nc" -v tc="$tc" 'BEGIN { if (bc > 0 && fc > 0) {
	printf "floor at 1 kHz (empty handler): tgkill %+.2f%%", (fc / bc - 1) * 100
	if (tc > 0)
		printf ", per-thread timers %+.2f%%", (tc / bc - 1) * 100
	printf " CPU; nts-1000 %+.2f%%: %+.2f%% of the baseline over the floor of its design " \
	       "(compare with the spread of the raw runs)\n", (nc / bc - 1) * 100,
	       (nc - fc) / bc * 100 } }'
[ -n "$NOTES" ] && printf 'Notes:%s\n' "$NOTES"
pc=$(median ntsperf-1000 3)
awk -v bc="$bc" -v pc="$pc" -v fc="$fc" -v nc="$nc" -v fpc="$fpc" 'BEGIN { if (bc > 0 && pc > 0) {
	printf "perf_events backend at 1 kHz: ntsperf-1000 %+.2f%% CPU (signal backend %+.2f%%, " \
	       "its floor %+.2f%%)", (pc / bc - 1) * 100, (nc / bc - 1) * 100, (fc / bc - 1) * 100
	if (fpc > bc)
		printf "; %.2fx the perf_events floor (fperf-1000 %+.2f%%)", (pc - bc) / (fpc - bc),
		       (fpc / bc - 1) * 100
	printf "\n" } }'
echo "Goal: ntsperf-1000 cpu/0 <= 1.01 where perf_events are permitted (or <= 1.2x the" \
	"perf_events floor fperf-1000 when that is above 1%); nts-1000 (signals)" \
	"<= 1.2x its floor (ftgkill-1000) over the baseline; below gperf-1000 (fewer samples:" \
	"HZ cap)."
printf 'Spread of cpu_s over the runs (min..max):'
for cfg in $CONFIGS; do
	awk -v c="$cfg" '$1 == c { if (n++ == 0 || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
		END { if (n) printf " %s %.3f..%.3f", c, lo, hi }' "$RES"
done
echo
