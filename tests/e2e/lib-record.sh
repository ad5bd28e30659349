# SPDX-License-Identifier: MIT
# lib-record.sh - helpers for the sampler tests (t5NN-record-*.sh), sourced after lib.sh:
# the paths of nettrace-record, the sampler library and the test programs
# (tests/sampler/), and the statistical checks of doc/sampler-design.md §7
#
# Bounds. An estimated fraction p^ = k/n of a true p passes when
#   |p^ - p| <= delta + z * sqrt(p (1 - p) / n)
# with z = 4 (a false failure once in ~16000 checks; about 10 checks per test file at
# alpha 1e-3 after Bonferroni) and delta a systematic allowance stated by each test. A
# statistical check that fails is run once more with twice the duration before the test
# fails (sampler-design §7, as Go's testCPUProfile does): a loaded 2-core CI machine can
# starve a workload for a while, which is not what these tests measure.

RECORD=$top_builddir/tools/nettrace-record
WORK=$top_builddir/tests/sampler/nts-work
CHECK=$top_builddir/tests/sampler/nts-check
MULTI=$top_builddir/tests/sampler/nts-multi
SP=$top_builddir/tests/sampler/nts-sp
SP_INSTR=$top_builddir/tests/sampler/nts-sp-instr
SAMPLER_LIB=$top_builddir/sampler/.libs/libnettrace-sampler.so.0
NETTRACE_PRELOAD=$SAMPLER_LIB
export NETTRACE_PRELOAD

if ! sampler_built; then
	# sourced after some results (a test whose sampler part is optional should check
	# sampler_built itself): the rest is skipped, the plan stays right
	if [ "$tap_n" -gt 0 ]; then
		skip "the rest of this test" "the sampler is not built (configure --disable-sampler)"
		done_testing
	fi
	echo "1..0 # SKIP the sampler is not built (configure --disable-sampler, or not x86-64 Linux)"
	exit 0
fi
need_tool "$RECORD"
need_tool "$WORK"
need_tool "$CHECK"
if [ ! -f "$SAMPLER_LIB" ]; then
	echo "Bail out! $SAMPLER_LIB is not built"
	exit 1
fi

# Samples are not independent. A thread that waits for a CPU (or blocks) keeps the same
# user stack, and every round until it runs again samples that stack: on a loaded
# machine the samples come in clusters, recognisable by an unchanged CpuTimeNs. The
# binomial bound then uses the effective sample size n_eff = n^2 / sum(cluster size^2)
# (Kish's design effect) instead of n.
#
# wall_share FILE_OF_SAMPLES NUM_REGEX DEN_REGEX: "K N NEFF" over the samples whose stack
# matches DEN_REGEX, K of them matching NUM_REGEX; clusters are runs of one thread's
# samples with the same CpuTimeNs.
wall_share() {
	awk -v num="$2" -v den="$3" '$6 ~ den {
		n++; if ($6 ~ num) k++
		key = $1
		if ((key in cpu) && cpu[key] == $3) size[key]++
		else { if (key in size) sq += size[key] * size[key]; size[key] = 1 }
		cpu[key] = $3
	} END { for (t in size) sq += size[t] * size[t]
		printf "%d %d %.1f\n", k, n, sq ? n * n / sq : 0 }' "$1"
}

# cpu_share FILE_OF_SAMPLES NUM_REGEX DEN_REGEX: the same by CPU time: each sample weighs
# the CPU time its thread used since its previous sample (CpuTimeNs delta), which is what
# a CPU profile estimates; "KW NW NEFF" with n_eff = (sum w)^2 / sum(w^2).
cpu_share() {
	awk -v num="$2" -v den="$3" '{
		key = $1; w = (key in prev) ? $3 - prev[key] : 0; prev[key] = $3
		if ($6 !~ den || w <= 0) next
		nw += w; sq += w * w; if ($6 ~ num) kw += w
	} END { printf "%.0f %.0f %.1f\n", kw, nw, sq ? nw * nw / sq : 0 }' "$1"
}

# late_delta FILE DELTA: DELTA plus the share of the session's rounds the sampler took
# late (SamplerStats Late over the rounds, i.e. distinct sample times): a round more than
# half an interval
# late may land in another phase of the program than its scheduled time would have, and
# without real-time priority on a busy machine it is late because the program was using
# the CPU, so those rounds can bias a share by at most their share.
late_delta() {
	"$CHECK" summary "$1" | awk -v d="$2" -F= '
		$1 == "stats_late" { late = $2 } $1 == "rounds" { r = $2 }
		END { printf "%.4f\n", d + (r > 0 ? late / r : 0) }'
}

# within P N DELTA K [NEFF]: exit status 0 when K/N is within DELTA + 4 sigma of P, sigma
# from NEFF samples (default N); prints "p^=... bound=..." for the diagnostics.
within() {
	awk -v p="$1" -v n="$2" -v d="$3" -v k="$4" -v ne="${5:-$2}" 'BEGIN {
		if (n <= 0 || ne <= 0) { print "no samples"; exit 1 }
		ph = k / n; b = d + 4 * sqrt(p * (1 - p) / ne)
		printf "p^=%.4f (k=%.0f n=%.0f n_eff=%.0f) p=%.4f bound=%.4f\n", ph, k, n, ne, p, b
		exit (ph - p <= b && p - ph <= b) ? 0 : 1
	}'
}

# samples FILE OUT: the trace's samples, one per line (nts-check samples), without names.
samples() {
	"$CHECK" samples "$1" | grep -v '^#' >"$2"
}

# summary_get FILE KEY: a value of "nts-check summary".
summary_get() {
	"$CHECK" summary "$1" | sed -n "s/^$2=//p"
}

# record_q ARGS...: nettrace-record -q with stdout in $T/rec.out, stderr in $T/rec.err.
record_q() {
	"$RECORD" -q "$@" >"$T/rec.out" 2>"$T/rec.err"
	rc=$?
}
