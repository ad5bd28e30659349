#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzz.sh - build a libFuzzer target of tests/fuzz/ with clang straight from the library
# sources (ASan + UBSan, no configure needed) and run it for a while. Prints one TAP line;
# exits non-zero when the fuzzer finds a crash, leak, timeout, out-of-memory or a trap (CI
# runs each target for a short smoke). Targets (-T):
#   reader  fuzz-reader.c: the nettrace reader (the default). Seeds: data/traces/*, the
#           generated corrupt corpus (tests/corpus/gen-corrupt.c), tests/corpus/regress/.
#   profile fuzz-profile.c: a trace through a profile, tree, folded stacks and the
#           exporters. Seeds: those of reader, tests/corpus/regress-profile/.
#   folded  fuzz-folded.c: the folded-stacks, category rules and subsystem rules parsers
#           and the exporters. Seeds: data/rules/*, tests/corpus/regress-folded/, and the
#           folded stacks of data/traces when tools/nettrace-fold is built.
#   unwind  fuzz-unwind.c: the sampler's CFI parser and interpreter and its stack walk
#           (sampler/unwind.c). Seeds: tests/fuzz/gen-unwind-seeds.c, tests/corpus/regress-unwind/.
#   pdb     fuzz-pdb.c: the portable PDB and PE debug-directory reader (libtrace/pdb.c).
#           Seeds: the PDBs and assemblies of the .NET workloads when top_builddir's
#           tests/dotnet/build holds them, tests/corpus/regress-pdb/.
#   all     each of them in turn, for SECONDS each (one TAP line per target).
#
# Usage: tests/fuzz/run-fuzz.sh [-T TARGET] [-t SECONDS] [-j JOBS] [-o DIR] [-b]
#                               [-- LIBFUZZER-ARGS...]
#   -T TARGET   reader (default), profile, folded, unwind, pdb or all
#   -t SECONDS  fuzzing time per target (default $FUZZ_SECONDS or 60)
#   -j JOBS     parallel fuzzing processes (default 1)
#   -o DIR      work directory: binaries, corpus, artifacts (default ./fuzz-out); targets
#               other than reader work in DIR/TARGET
#   -b          build only
# Environment: CLANG (default clang), top_srcdir (default: this script's ../..),
# top_builddir (where tools/nettrace-fold is built; default top_srcdir).
# Findings land in DIR/artifacts/; replay one with DIR/fuzz-TARGET FILE (or, for the reader,
# tests/fuzz/read-all). Copy small reproducers of fixed bugs to tests/corpus/regress/ (reader),
# regress-profile/, regress-folded/ or regress-unwind/: the test suite replays them.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=${top_srcdir:-$(cd "$here/../.." && pwd)}
build=${top_builddir:-$top}
secs=${FUZZ_SECONDS:-60}
jobs=1
out=./fuzz-out
build_only=0
target=reader
usage="usage: $0 [-T reader|profile|folded|unwind|pdb|all] [-t SECONDS] [-j JOBS] [-o DIR] [-b]"
usage="$usage [-- LIBFUZZER-ARGS...]"
while [ $# -gt 0 ]; do
	case $1 in
	-T) target=$2; shift 2 ;;
	-t) secs=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-o) out=$2; shift 2 ;;
	-b) build_only=1; shift ;;
	--) shift; break ;;
	*) echo "$usage" >&2; exit 1 ;;
	esac
done
case $target in
reader | profile | folded | unwind | pdb) targets=$target ;;
all) targets="reader profile folded unwind pdb" ;;
*) echo "$usage" >&2; exit 1 ;;
esac
CLANG=${CLANG:-clang}

mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
lib="$top/libtrace"
cflags="-g -O1 -std=c11 -I$lib -I$lib/include -fno-omit-frame-pointer"

# prepare WORKDIR: the directories of a run. Findings of an earlier run are kept aside:
# this run reports only its own.
prepare() {
	mkdir -p "$1/inc" "$1/corpus" "$1/seeds" || return 1
	if [ -n "$(ls "$1/artifacts" 2>/dev/null)" ]; then
		mkdir -p "$1/artifacts.prev" && mv "$1"/artifacts/* "$1/artifacts.prev/"
	fi
	mkdir -p "$1/artifacts" || return 1
	# The library includes "config.h" (autoconf); the fuzz build needs only the feature
	# macro.
	[ -f "$1/inc/config.h" ] || printf '#define _GNU_SOURCE 1\n' >"$1/inc/config.h"
}

# gen_headers WORKDIR: the generated sources (rules texts, the SVG script), made as
# Makefile.am makes them: every "libtrace/X.h: $(top_srcdir)/F" rule there turns a text
# file into C string literal lines with the same sed script.
gen_headers() {
	mkdir -p "$1/inc/libtrace" || return 1
	# shellcheck disable=SC2016 # $(top_srcdir) is make syntax, matched literally
	sed -n 's|^\(libtrace/[A-Za-z0-9_-]*\.h\): $(top_srcdir)/\([^ ]*\)$|\1 \2|p' \
		"$top/Makefile.am" |
		while read -r gen from; do
			sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/"/' \
				-e 's/$/\\n"/' "$top/$from" >"$1/inc/$gen" || exit 1
		done
}

# trace_seeds WORKDIR: the generated corpus (small files, many truncated/corrupted
# variants), the saved reproducers, and the smallest real trace. The large real traces are
# left out because libFuzzer would spend its time on them; gen-corrupt cuts them into small
# valid files. Keep the initial pass short (CI runs a smoke): inputs are cut at -max_len
# anyway, and the byte flips and prefixes are what the fuzzer's own mutations produce.
trace_seeds() {
	"$1/gen-corrupt" -q "$top/data/traces" "$1/seeds" || return 1
	find "$1/seeds" -type f \( -size +64k -o -name 'any-*-flip*' -o -name '*-cut-*' \) \
		-exec rm -f {} +
	cp "$top"/tests/corpus/regress/* "$1/seeds/" 2>/dev/null
	cp "$top/data/traces/perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace" \
		"$1/seeds/"
}

# folded_seeds WORKDIR: the rules files, the saved reproducers, and the folded stacks of
# the real traces (several shapes), when nettrace-fold is built; each cut to 16 KiB.
folded_seeds() {
	cp "$top"/data/rules/*.rules "$1/seeds/" || return 1
	cp "$top"/tests/corpus/regress-folded/* "$1/seeds/" 2>/dev/null
	fold=$build/tools/nettrace-fold
	[ -x "$fold" ] || return 0
	for tr in "$top"/data/traces/*/*.nettrace; do
		b=$(basename "$tr" .nettrace)
		"$fold" "$tr" 2>/dev/null | head -c 16384 >"$1/seeds/$b.folded"
		"$fold" --per-thread --category-frame=leaf --unit=samples "$tr" 2>/dev/null |
			head -c 16384 >"$1/seeds/$b-thread.folded"
	done
	find "$1/seeds" -type f -size 0 -exec rm -f {} +
}

# pdb_seeds WORKDIR: the saved reproducers and, when the .NET tests have built them, the
# workloads' portable PDBs and assemblies (one with an embedded PDB).
pdb_seeds() {
	cp "$top"/tests/corpus/regress-pdb/* "$1/seeds/" 2>/dev/null
	for f in "$build"/tests/dotnet/build/workloads*/out/*.pdb \
		"$build"/tests/dotnet/build/workloads*/out/*.dll; do
		[ -f "$f" ] && cp "$f" "$1/seeds/$(basename "$(dirname "$(dirname "$f")")")-$(basename "$f")"
	done
	printf 'BSJB' >"$1/seeds/min-bsjb"
	true
}

# run_target TARGET N: builds, seeds and runs one target; prints its TAP line "ok N".
run_target() {
	t=$1
	n=$2
	shift 2 # the rest: libFuzzer arguments
	if [ "$t" = reader ]; then
		w=$out # where "make fuzz" always kept the reader's work files
	else
		w=$out/$t
	fi
	prepare "$w" || { echo "not ok $n - fuzz-$t: cannot create $w"; return 1; }
	case $t in
	reader)
		# libnettrace.so's own sources, as Makefile.am lists them (a file added there,
		# such as opts.c, is then never missing here)
		srcs=$(TOP=$top; . "$top/bench/lib-build.sh"
			bench_sources libtrace_libntbase_la; bench_sources libtrace_libntreader_la)
		libs="-lz -lm"
		dict=$here/nettrace.dict
		maxlen=65536
		;;
	unwind)
		srcs="$top/sampler/unwind.c"
		libs=""
		dict=""
		maxlen=4096
		;;
	pdb)
		srcs="$lib/error.c $lib/pdb.c"
		libs="-lz"
		dict=$here/pdb.dict
		maxlen=65536
		;;
	*)
		# Everything but the SQLite and ClickHouse stores (SQLite is their dependency).
		srcs=$(ls "$lib"/*.c | grep -v '/store-\(sqlite\|clickhouse\)[a-z-]*\.c$')
		libs="-ldwarf -lelf -liberty -lz -lm" # libiberty: demangle.c
		gen_headers "$w" || { echo "not ok $n - fuzz-$t: cannot generate headers"; return 1; }
		if [ "$t" = profile ]; then
			dict=$here/nettrace.dict
			maxlen=65536
		else
			dict=$here/folded.dict
			maxlen=16384
		fi
		;;
	esac
	# Debian puts libdwarf's headers in a subdirectory (configure.ac probes both places).
	inc="-I$w/inc"
	[ -d /usr/include/libdwarf ] && inc="$inc -I/usr/include/libdwarf"
	first="" # the sampler's internal.h before the library's
	[ "$t" = unwind ] && first="-I$top/sampler"
	echo "# building $w/fuzz-$t with $CLANG" >&2
	# shellcheck disable=SC2086
	$CLANG $first $cflags $inc -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o "$w/fuzz-$t" "$here/fuzz-$t.c" $srcs $libs || {
		echo "not ok $n - fuzz-$t: build failed"; return 1; }
	# The corpus generators are plain C (no sanitizers needed).
	if [ "$t" = unwind ]; then
		$CLANG -O1 -std=c11 -o "$w/gen-unwind-seeds" "$here/gen-unwind-seeds.c" || {
			echo "not ok $n - gen-unwind-seeds: build failed"; return 1; }
	elif [ "$t" != folded ] && [ "$t" != pdb ]; then
		$CLANG -O1 -std=c11 -I"$top/tests" -o "$w/gen-corrupt" \
			"$top/tests/corpus/gen-corrupt.c" -lz || {
			echo "not ok $n - gen-corrupt: build failed"; return 1; }
	fi
	[ "$build_only" = 1 ] && return 0

	rm -rf "$w/seeds" && mkdir -p "$w/seeds" || return 1
	case $t in
	reader) trace_seeds "$w" ;;
	profile) trace_seeds "$w" && cp "$top"/tests/corpus/regress-profile/* "$w/seeds/" 2>/dev/null
		true ;;
	folded) folded_seeds "$w" ;;
	unwind) "$w/gen-unwind-seeds" "$w/seeds" &&
		cp "$top"/tests/corpus/regress-unwind/* "$w/seeds/" 2>/dev/null
		true ;;
	pdb) pdb_seeds "$w" ;;
	esac || { echo "not ok $n - fuzz-$t: seeding failed"; return 1; }

	# -malloc_limit_mb: a small input must not make the library allocate much (sizes are
	# capped by what the input holds); -timeout: no input may take seconds (no quadratic
	# paths).
	log="$w/fuzz.log"
	echo "# fuzz-$t: fuzzing for ${secs}s with $jobs job(s); log: $log" >&2
	if [ "$jobs" -gt 1 ]; then
		par="-jobs=$jobs -workers=$jobs"
	else
		par=""
	fi
	# shellcheck disable=SC2086
	(cd "$w" && ./fuzz-$t -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-malloc_limit_mb=512 -max_len=$maxlen ${dict:+-dict="$dict"} \
		-artifact_prefix="$w/artifacts/" -print_final_stats=1 $par "$@" \
		corpus seeds) >"$log" 2>&1
	rc=$?
	if [ "$jobs" -gt 1 ]; then
		cat "$w"/fuzz-*.log >>"$log" 2>/dev/null
		rm -f "$w"/fuzz-*.log
	fi
	execs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
	# -fork=N prints no final stats: its last status line "#EXECS: cov: ..." counts them.
	[ "$execs" -gt 0 ] ||
		execs=$(sed -n 's/^#\([0-9]*\):* .*/\1/p' "$log" | tail -n 1 | awk '{print $1 + 0}')
	found=$(ls "$w/artifacts" 2>/dev/null | wc -l)
	if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
		grep -h -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -20 |
			sed 's/^/# /'
		echo "not ok $n - fuzz-$t ${secs}s: $execs executions, $found finding(s) in $w/artifacts (exit $rc)"
		return 1
	fi
	echo "ok $n - fuzz-$t ${secs}s: $execs executions, no findings"
}

# UBSan reports say where they came from.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export UBSAN_OPTIONS
status=0
n=0
for t in $targets; do
	n=$((n + 1))
	run_target "$t" "$n" "$@" || status=1
done
[ "$build_only" = 1 ] || echo "1..$n"
exit $status
