#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzz.sh - build the libFuzzer target tests/fuzz/fuzz-reader.c with clang straight from
# the library sources (ASan + UBSan, no configure needed) and run it for a while, seeded
# from data/traces/*, the generated corrupt corpus (tests/corpus/gen-corrupt.c) and the
# saved reproducers (tests/corpus/regress/). Prints one TAP line; exits non-zero when the
# fuzzer finds a crash, leak, timeout, out-of-memory or a trap (CI runs it for ~60 s).
#
# Usage: tests/fuzz/run-fuzz.sh [-t SECONDS] [-j JOBS] [-o DIR] [-b] [-- LIBFUZZER-ARGS...]
#   -t SECONDS  total fuzzing time (default $FUZZ_SECONDS or 60)
#   -j JOBS     parallel fuzzing processes (default 1)
#   -o DIR      work directory: binaries, corpus, artifacts (default ./fuzz-out)
#   -b          build only
# Environment: CLANG (default clang), top_srcdir (default: this script's ../..).
# Findings land in DIR/artifacts/; replay one with DIR/fuzz-reader FILE or tests/fuzz/read-all.
# Copy small reproducers of fixed bugs to tests/corpus/regress/ (the corpus test replays them).
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=${top_srcdir:-$(cd "$here/../.." && pwd)}
secs=${FUZZ_SECONDS:-60}
jobs=1
out=./fuzz-out
build_only=0
while [ $# -gt 0 ]; do
	case $1 in
	-t) secs=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-o) out=$2; shift 2 ;;
	-b) build_only=1; shift ;;
	--) shift; break ;;
	*) echo "usage: $0 [-t SECONDS] [-j JOBS] [-o DIR] [-b] [-- LIBFUZZER-ARGS...]" >&2; exit 1 ;;
	esac
done
CLANG=${CLANG:-clang}

mkdir -p "$out/inc" "$out/corpus" "$out/seeds" || exit 1
out=$(cd "$out" && pwd)
# Findings of an earlier run are kept aside: this run reports only its own.
if [ -n "$(ls "$out/artifacts" 2>/dev/null)" ]; then
	mkdir -p "$out/artifacts.prev" && mv "$out"/artifacts/* "$out/artifacts.prev/"
fi
mkdir -p "$out/artifacts" || exit 1
# The library includes "config.h" (autoconf); the fuzz build needs only the feature macro.
[ -f "$out/inc/config.h" ] || printf '#define _GNU_SOURCE 1\n' >"$out/inc/config.h"

lib="$top/libtrace"
srcs="$lib/error.c $lib/sink.c $lib/input.c $lib/reader.c $lib/metadata.c $lib/payload.c"
cflags="-g -O1 -std=c11 -I$out/inc -I$lib -I$lib/include -fno-omit-frame-pointer"
echo "# building $out/fuzz-reader with $CLANG" >&2
# shellcheck disable=SC2086
$CLANG $cflags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-o "$out/fuzz-reader" "$here/fuzz-reader.c" $srcs -lz -lm || {
	echo "not ok 1 - fuzz-reader: build failed"; exit 1; }
# The corpus generator is plain C (no sanitizers needed).
$CLANG -O1 -std=c11 -I"$top/tests" -o "$out/gen-corrupt" "$top/tests/corpus/gen-corrupt.c" -lz || {
	echo "not ok 1 - gen-corrupt: build failed"; exit 1; }
[ "$build_only" = 1 ] && exit 0

# Seeds: the generated corpus (small files, many truncated/corrupted variants), the saved
# reproducers, and the smallest real trace. The large real traces are left out because
# libFuzzer would spend its time on them; gen-corrupt cuts them into small valid files.
rm -rf "$out/seeds" && mkdir -p "$out/seeds" || exit 1
"$out/gen-corrupt" -q "$top/data/traces" "$out/seeds" || {
	echo "not ok 1 - gen-corrupt failed"; exit 1; }
# Keep the initial pass short (CI runs 60 s): inputs are cut at -max_len anyway, and the
# byte flips and prefixes are what the fuzzer's own mutations produce.
find "$out/seeds" -type f \( -size +64k -o -name 'any-*-flip*' -o -name '*-cut-*' \) \
	-exec rm -f {} +
cp "$top"/tests/corpus/regress/* "$out/seeds/" 2>/dev/null
cp "$top/data/traces/perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace" \
	"$out/seeds/"

# -malloc_limit_mb: a small input must not make the reader allocate much (sizes are capped
# by what the file holds); -timeout: no input may take seconds (no quadratic paths).
log="$out/fuzz.log"
echo "# fuzzing for ${secs}s with $jobs job(s); log: $log" >&2
if [ "$jobs" -gt 1 ]; then
	par="-jobs=$jobs -workers=$jobs"
else
	par=""
fi
# shellcheck disable=SC2086
(cd "$out" && ./fuzz-reader -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-malloc_limit_mb=512 -max_len=65536 -dict="$here/nettrace.dict" \
	-artifact_prefix="$out/artifacts/" -print_final_stats=1 $par "$@" \
	corpus seeds) >"$log" 2>&1
rc=$?
if [ "$jobs" -gt 1 ]; then
	cat "$out"/fuzz-*.log >>"$log" 2>/dev/null
	rm -f "$out"/fuzz-*.log
fi
execs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
found=$(ls "$out/artifacts" 2>/dev/null | wc -l)
if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
	grep -h -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -20 | sed 's/^/# /'
	echo "not ok 1 - fuzz-reader ${secs}s: $execs executions, $found finding(s) in $out/artifacts (exit $rc)"
	exit 1
fi
echo "ok 1 - fuzz-reader ${secs}s: $execs executions, no findings"
echo "1..1"
exit 0
