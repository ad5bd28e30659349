#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-symbolize.sh - native symbolization benchmark: ADDRS unique addresses of a large
# "-g -O2" binary resolved by libnettrace (bench/bench-symbolize.c: nt_native_resolve_batch,
# output as llvm-symbolizer prints it), by llvm-symbolizer and by eu-addr2line -i -f, from the
# same address file. It first checks that the answers are identical (every frame: function,
# inline chain, file:line:column), then times each program and prints the medians and the
# speed-up over the fastest of the other two. A benchmark, not a test.
#
#   bench/bench-symbolize.sh [-n RUNS] [-m EU_RUNS] [-a ADDRS] [-e ELF] [-j JOBS]
#
#   -n RUNS     timed runs of libnettrace and llvm-symbolizer (default 5; env N)
#   -m EU_RUNS  timed runs of eu-addr2line (default 1; env EU_N): it takes minutes per run
#               (it walks a compile unit's DIEs again for each address); its first run also
#               gives its answers; 0 leaves eu-addr2line out
#   -a ADDRS    unique addresses (default 100000; env ADDRS)
#   -e ELF      symbolize ELF (built with -g) instead of the generated program
#   -j JOBS     parallel compilations for the generated program (default: nproc)
#
# The generated program (bench/out/symbolize/bigprog, built once): 40 files of 50 functions
# each, built from loops, switches and calls through nested static inline helpers (some in a
# shared header), about 1.2 MB of code and 10 MB of DWARF 5 with a few inline levels at
# most addresses. Addresses: every byte of every function symbol, taken at an even stride
# down to ADDRS, then shuffled (awk rand, seed 42), as a profile's IPs come.
# Identical answers: llvm-symbolizer names the outermost frame after the ELF symbol when
# there is one ("f.constprop.0", "f.cold" for the DWARF "f"): that suffix is dropped before
# comparing; nothing else is normalised. eu-addr2line's layout ("f inlined at X in g", no
# column when it is 0) is rewritten into llvm-symbolizer's.
# Times are of the whole process (start, read the addresses, resolve, print to /dev/null),
# measured by bench-symbolize --time (wait4): wall and CPU (user + sys); on a busy machine
# compare the CPU ratios. Everything goes to bench/out/symbolize/ (gitignored). Environment:
# CC (default cc), BENCH_CFLAGS (default -O2 -g).
# Goal (issue): >= 5x faster than the fastest of eu-addr2line and llvm-symbolizer.
set -u

cd "$(dirname "$0")/.." || exit 1
TOP=$(pwd)
OUT=$TOP/bench/out/symbolize
BUILD=$OUT/build
N=${N:-5}
EU_N=${EU_N:-1}
ADDRS=${ADDRS:-100000}
ELF=
JOBS=$(nproc 2>/dev/null || echo 2)
CC=${CC:-cc}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}

. "$TOP/bench/lib-build.sh"

while getopts n:m:a:e:j:h opt; do
	case $opt in
	n) N=$OPTARG ;;
	m) EU_N=$OPTARG ;;
	a) ADDRS=$OPTARG ;;
	e) ELF=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	h) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "Try 'bench/bench-symbolize.sh -h'." >&2; exit 1 ;;
	esac
done
for v in "$N" "$ADDRS" "$JOBS"; do
	bench_count "$v" number
done
case $EU_N in ''|*[!0-9]*) die "bad number '$EU_N'" ;; esac
command -v nm >/dev/null 2>&1 || die "nm (binutils) is needed"
mkdir -p "$BUILD" || die "cannot create $BUILD"

# ------------------------------------------------------------------ build
# libtrace into one static archive, optimised (the project's own build may use sanitizers),
# as bench/run.sh does; the driver needs only what sym-native.c uses.
say "building (optimised: $CC $BENCH_CFLAGS) in bench/out/symbolize/build"
bench_lib "$BUILD" sym-native || die "cannot build the library"
SYM=$BUILD/bench-symbolize
bench_link "$BUILD" bench-symbolize "$TOP/bench/bench-symbolize.c" || die "bench-symbolize"

# ------------------------------------------------------------------ the binary
GEN_FILES=40
GEN_FUNCS=50
gen_program() { # writes the sources of the generated program into $1
	awk -v files=$GEN_FILES -v funcs=$GEN_FUNCS -v dir="$1" '
	function hdr(   f, i, j) {
		f = dir "/gen-common.h"
		print "#include <stddef.h>\n#include <stdint.h>" > f
		print "static inline uint32_t g_rotl(uint32_t x, unsigned r)\n{\n\treturn (x << (r & 31)) | (x >> ((32 - r) & 31));\n}" > f
		print "static inline uint32_t g_mix(uint32_t h, uint32_t v)\n{\n\tv *= 0xcc9e2d51u;\n\tv = g_rotl(v, 15);\n\th ^= v * 0x1b873593u;\n\treturn g_rotl(h, 13) * 5 + 0xe6546b64u;\n}" > f
		print "static inline uint32_t g_fold(const uint32_t *v, size_t n, uint32_t s)\n{\n\tfor (size_t i = 0; i < n; i++)\n\t\ts = g_mix(s, v[i]);\n\treturn s;\n}" > f
		for (i = 0; i < files; i++)
			for (j = 0; j < funcs; j++)
				printf "uint32_t f%d_%d(uint32_t *v, size_t n, uint32_t s);\n", i, j > f
		close(f)
	}
	function src(i,   f, j, k, r, nst) {
		f = sprintf("%s/gen-%03d.c", dir, i)
		print "#include \"gen-common.h\"" > f
		for (k = 0; k < 6; k++)
			printf "static inline uint32_t h%d_%d(uint32_t x, uint32_t y)\n{\n\tif (x & %d)\n\t\treturn g_mix(x, y + %du);\n\treturn g_rotl(x ^ y, %d) + %du;\n}\n", i, k, int(rand() * 31) + 1, int(rand() * 1000003), int(rand() * 29) + 1, int(rand() * 1000003) > f
		for (k = 0; k < 4; k++)
			printf "static inline uint32_t m%d_%d(const uint32_t *v, size_t n, uint32_t s)\n{\n\tuint32_t acc = s;\n\tfor (size_t i = 0; i < n; i++)\n\t\tacc = h%d_%d(acc, v[i]) ^ h%d_%d(v[i], acc >> %d);\n\treturn acc;\n}\n", i, k, i, int(rand() * 6), i, int(rand() * 6), int(rand() * 20) + 1 > f
		for (j = 0; j < funcs; j++) {
			printf "uint32_t f%d_%d(uint32_t *v, size_t n, uint32_t s)\n{\n\tuint32_t acc = s + %du;\n", i, j, int(rand() * 100000) > f
			nst = int(rand() * 4) + 2
			for (k = 0; k < nst; k++) {
				r = int(rand() * 5)
				if (r == 0)
					printf "\tacc = m%d_%d(v, n, acc);\n", i, int(rand() * 4) > f
				else if (r == 1)
					printf "\tfor (size_t i = 0; i < n; i++)\n\t\tv[i] = h%d_%d(v[i], acc + (uint32_t)i);\n", i, int(rand() * 6) > f
				else if (r == 2)
					printf "\tswitch (acc %% 5) {\n\tcase 0: acc = h%d_%d(acc, %du); break;\n\tcase 1: acc = g_fold(v, n, acc); break;\n\tcase 3: acc ^= m%d_%d(v, n / 2, acc); break;\n\tdefault: acc += g_mix(acc, (uint32_t)n); break;\n\t}\n", i, int(rand() * 6), int(rand() * 1000), i, int(rand() * 4) > f
				else if (r == 3)
					printf "\tif (n > %d)\n\t\tacc = f%d_%d(v + 1, n - 1, acc);\n", int(rand() * 8) + 4, i, (j + 1) % funcs > f
				else
					printf "\tacc = g_mix(acc, h%d_%d(acc, v[n ? n - 1 : 0]));\n", i, int(rand() * 6) > f
			}
			print "\treturn acc;\n}" > f
		}
		close(f)
	}
	BEGIN {
		srand(7)
		hdr()
		for (i = 0; i < files; i++)
			src(i)
		f = dir "/gen-main.c"
		print "#include <stdio.h>\n#include \"gen-common.h\"\ntypedef uint32_t (*fn)(uint32_t *, size_t, uint32_t);\nstatic const fn table[] = {" > f
		for (i = 0; i < files; i++)
			for (j = 0; j < funcs; j++)
				printf "\tf%d_%d,\n", i, j > f
		print "};\nint main(int argc, char **argv)\n{\n\tuint32_t v[16] = {1, 2, 3};\n\tuint32_t s = (uint32_t)argc;\n\t(void)argv;\n\tfor (size_t i = 0; i < sizeof table / sizeof table[0]; i++)\n\t\ts = table[i](v, 16, s);\n\tprintf(\"%u\\n\", (unsigned)s);\n\treturn 0;\n}" > f
		close(f)
	}'
}
if [ -n "$ELF" ]; then
	BIN=$ELF
	[ -r "$BIN" ] || die "cannot read $BIN"
else
	BIN=$OUT/bigprog
	GEN=$OUT/gen
	stamp="generator v1: $GEN_FILES x $GEN_FUNCS, $CC -g -O2" # v2 when gen_program changes
	if [ ! -x "$BIN" ] || [ "$(cat "$OUT/bigprog.stamp" 2>/dev/null)" != "$stamp" ]; then
		say "generating and building the program to symbolize (once; $JOBS jobs)"
		rm -rf "$GEN" && mkdir -p "$GEN" || die "cannot create $GEN"
		gen_program "$GEN"
		# shellcheck disable=SC2016
		(cd "$GEN" && ls ./*.c | xargs -P "$JOBS" -I{} sh -c \
			'"$0" -g -O2 -c "$1" -o "${1%.c}.o"' "$CC" {}) ||
			die "cannot compile the generated program"
		$CC -o "$BIN" "$GEN"/*.o || die "cannot link the generated program"
		echo "$stamp" >"$OUT/bigprog.stamp"
	fi
fi

# ------------------------------------------------------------------ addresses
ADDRFILE=$OUT/addrs-$ADDRS.txt
nm -n -S --defined-only "$BIN" | awk -v want="$ADDRS" '
	function hex(s,   i, v) {
		v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
		return v
	}
	BEGIN { n = 0; end = 0 }
	# in address order; aliases and overlaps count once
	NF == 4 && $3 ~ /^[tTwW]$/ && hex($1) >= end {
		a[n] = hex($1); s[n] = hex($2); end = a[n] + s[n]; total += s[n]; n++
	}
	END {
		if (total < want) {
			printf "only %d bytes of functions for %d addresses\n", total, want > "/dev/stderr"
			exit 1
		}
		srand(42)
		step = total / want; k = 0; next_at = 0; m = 0
		for (i = 0; i < n && m < want; i++)
			for (b = 0; b < s[i] && m < want; b++) {
				if (k >= next_at) { pick[m++] = a[i] + b; next_at += step }
				k++
			}
		for (i = m - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = pick[i]; pick[i] = pick[j]; pick[j] = t }
		for (i = 0; i < m; i++)
			printf "0x%x\n", pick[i]
	}' >"$ADDRFILE" || die "cannot pick $ADDRS addresses in $BIN"
naddr=$(sort -u "$ADDRFILE" | wc -l | tr -d ' ')
[ "$naddr" -eq "$ADDRS" ] || die "picked $naddr unique addresses, not $ADDRS"

# ------------------------------------------------------------------ identical answers
HAVE_LLVM=0 HAVE_EU=0
command -v llvm-symbolizer >/dev/null 2>&1 && HAVE_LLVM=1
command -v eu-addr2line >/dev/null 2>&1 && [ "$EU_N" -gt 0 ] && HAVE_EU=1
[ "$HAVE_LLVM" = 1 ] || say "llvm-symbolizer not found (apt-get install llvm): skipped"
[ "$HAVE_EU" = 1 ] || [ "$EU_N" = 0 ] ||
	say "eu-addr2line not found (apt-get install elfutils): skipped"

# normalise FILE: llvm-symbolizer layout; the outermost function of each address without a
# GCC clone suffix (.part.N, .isra.N, .constprop.N, .cold, ...)
normalise() {
	awk 'function flush(   i, f) {
		if (!n) return
		f = L[last]
		while (f ~ /\.(part|isra|constprop|cold|lto_priv|clone)(\.[0-9]+)?$/)
			sub(/\.(part|isra|constprop|cold|lto_priv|clone)(\.[0-9]+)?$/, "", f)
		L[last] = f
		for (i = 1; i <= n; i++) print L[i]
		print ""; n = 0
	}
	$0 == "" { flush(); next }
	{ L[++n] = $0; if (n % 2 == 1) last = n }
	END { flush() }' "$1"
}
# eu-addr2line -a -i -f output in llvm-symbolizer layout
eu_layout() {
	awk 'function flush() { if (started) print "" }
	/^0x[0-9a-f]+$/ { flush(); started = 1; st = 0; next }
	st == 0 { f = $0; sub(/ inlined at .*/, "", f); print f; st = 1; next }
	{ l = $0; if (l == "??:0") l = "??:0:0"; else if (l !~ /:[0-9]+:[0-9]+$/) l = l ":0"; print l; st = 0 }
	END { flush() }' "$1"
}
# compare WHAT FILE1 FILE2: prints "identical on X of N addresses" and keeps the differences
compare() {
	awk -v what="$1" -v diffs="$OUT/diff-$1.txt" -v addrs="$ADDRFILE" '
	BEGIN { while ((getline l < addrs) > 0) A[++na] = l; RS = "" }
	FNR == NR { a[FNR] = $0; next }
	{ b[FNR] = $0; n = FNR }
	END {
		same = 0
		printf "" > diffs
		for (i = 1; i <= n; i++)
			if (a[i] == b[i]) same++
			else printf "%s\n--- libnettrace\n%s\n--- %s\n%s\n\n", A[i], a[i], what, b[i] > diffs
		printf "%d %d\n", same, n
	}' "$2" "$3"
}
say "checking the answers ($ADDRS addresses of $(basename "$BIN"))"
"$SYM" "$BIN" "$ADDRFILE" >"$OUT/ours.txt" || die "bench-symbolize failed"
normalise "$OUT/ours.txt" >"$OUT/ours.norm"
nframes=$(awk 'NF { n++ } END { print n / 2 }' "$OUT/ours.txt")
RESULT_LLVM="-" RESULT_EU="-"
if [ "$HAVE_LLVM" = 1 ]; then
	llvm-symbolizer --obj="$BIN" <"$ADDRFILE" >"$OUT/llvm.txt" || die "llvm-symbolizer failed"
	normalise "$OUT/llvm.txt" >"$OUT/llvm.norm"
	RESULT_LLVM=$(compare llvm-symbolizer "$OUT/ours.norm" "$OUT/llvm.norm")
fi

# ------------------------------------------------------------------ timings
RES=$OUT/results.txt
: >"$RES"
# measure_to OUTFILE WHAT CMD...: one run, stdin from the address file
measure_to() {
	to=$1 what=$2; shift 2
	"$SYM" --time "$OUT/stat.tmp" "$@" <"$ADDRFILE" >"$to" 2>"$OUT/stderr.tmp" || {
		cat "$OUT/stderr.tmp" >&2
		die "$what failed"
	}
	sed -n 's/^wall_s=\([0-9.]*\) user_s=\([0-9.]*\) sys_s=\([0-9.]*\).*/\1 \2 \3/p' \
		"$OUT/stat.tmp" | { read -r w u s; echo "$what $w $u $s" >>"$RES"; }
}
measure() { measure_to /dev/null "$@"; }
cat "$BIN" >/dev/null # warm the page cache
# eu-addr2line takes minutes: its first timed run also gives its answers
if [ "$HAVE_EU" = 1 ]; then
	say "eu-addr2line: answers and $EU_N timed run(s) (minutes each)"
	measure_to "$OUT/eu.raw" eu-addr2line eu-addr2line -a -i -f -e "$BIN"
	eu_layout "$OUT/eu.raw" >"$OUT/eu.txt"
	normalise "$OUT/eu.txt" >"$OUT/eu.norm"
	RESULT_EU=$(compare eu-addr2line "$OUT/ours.norm" "$OUT/eu.norm")
fi
say "timing: $N runs of libnettrace and llvm-symbolizer"
i=0
while [ "$i" -lt "$N" ]; do
	# interleaved, so slow phases of a noisy machine hit every program alike
	measure libnettrace "$SYM" "$BIN"
	[ "$HAVE_LLVM" = 1 ] && measure llvm-symbolizer llvm-symbolizer --obj="$BIN"
	i=$((i + 1))
done
i=1
while [ "$HAVE_EU" = 1 ] && [ "$i" -lt "$EU_N" ]; do
	measure eu-addr2line eu-addr2line -a -i -f -e "$BIN"
	i=$((i + 1))
done

# ------------------------------------------------------------------ report
median() { # median WHAT COLUMN (2 wall, 5 cpu = user + sys)
	awk -v w="$1" -v c="$2" '$1 == w { print (c == 5 ? $3 + $4 : $c) }' "$RES" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
			else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo
echo "native symbolization benchmark: $ADDRS unique addresses of $BIN"
size=$(wc -c <"$BIN" | tr -d ' ')
echo "  $size bytes; $nframes frames with inline expansion (libnettrace's answer)"
echo "host: $(uname -srm), $(nproc 2>/dev/null || echo '?') CPUs; medians of $N runs ($EU_N for eu-addr2line); raw: $RES"
for r in "llvm-symbolizer $RESULT_LLVM" "eu-addr2line $RESULT_EU"; do
	set -- $r
	if [ "$2" = - ]; then
		echo "answers vs $1: not checked (not installed, or -m 0)"
	else
		echo "answers vs $1: identical on $2 of $3 addresses$([ "$2" = "$3" ] || echo " (differences: $OUT/diff-$1.txt)")"
	fi
done
printf '  %-18s %10s %10s %10s %10s\n' "" "wall (s)" "cpu (s)" "x wall" "x cpu"
ow=$(median libnettrace 2) oc=$(median libnettrace 5)
best_w= best_c= best=
for w in libnettrace llvm-symbolizer eu-addr2line; do
	tw=$(median $w 2) tc=$(median $w 5)
	[ "$tw" = - ] && continue
	echo "$tw $tc $ow $oc" | awk -v l="$w" '{ printf "  %-18s %10.3f %10.3f %10.1f %10.1f\n", l, $1, $2, $1 / $3, $2 / $4 }'
	if [ "$w" != libnettrace ] && { [ -z "$best_c" ] || awk "BEGIN { exit !($tc < $best_c) }"; }; then
		best=$w best_w=$tw best_c=$tc
	fi
done
if [ -n "$best" ]; then
	echo "$best_w $best_c $ow $oc" | awk -v b="$best" '{
		printf "speed-up over the fastest other (%s): %.1fx wall, %.1fx cpu (goal: 5x)\n", b, $1 / $3, $2 / $4 }'
fi
