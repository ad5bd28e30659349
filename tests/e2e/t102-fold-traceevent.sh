#!/bin/sh
# SPDX-License-Identifier: MIT
# t102-fold-traceevent.sh - --compat=traceevent: TraceEvent's thread-time attribution with
# the CPU_TIME / UNMANAGED_CODE_TIME leaf pseudo-frames. Per-thread totals are compared with
# those of dotnet-trace's own speedscope export of the sentry trace
# (data/traces/sentry-dotnet/sample.speedscope.json, EXPECTED.md section 4) for the threads
# that no TPL activity touches (others differ, as EXPECTED.md explains), to 0.001 ms.
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FOLD"

totals() { # FILE -> "TID PSEUDO MS" lines
	awk '{ w = $NF; n = split($0, f, ";"); leaf = f[n]; sub(/ [0-9]+$/, "", leaf);
	       t = f[1]; gsub(/[^0-9]/, "", t); s[t " " leaf] += w }
	     END { for (k in s) printf "%s %.3f\n", k, s[k] / 1e6 }' "$1" | sort
}

run "$FOLD" --compat=traceevent --per-thread --unit ns "$TRACES/sentry-dotnet/sample.nettrace"
is_rc 0 "sentry trace exits 0"
totals "$T/out" >"$T/tot"
is "$(grep '^4688 UNMANAGED_CODE_TIME ' "$T/tot")" "4688 UNMANAGED_CODE_TIME 117.073" \
	"thread 4688 UNMANAGED_CODE_TIME = TraceEvent's 117.073 ms"
is "$(grep '^7860 ' "$T/tot" | tr '\n' '|')" "7860 UNMANAGED_CODE_TIME 4.022|" \
	"thread 7860: UNMANAGED_CODE_TIME 4.022 ms and no CPU_TIME, as TraceEvent"
# Thread 4688's first sample is Managed: TraceEvent 3.0.x (this export) and today's 3.2.5
# (t621) both charge its first interval as CPU_TIME
is "$(grep '^4688 CPU_TIME ' "$T/tot")" "4688 CPU_TIME 1.321" \
	"thread 4688 CPU_TIME = TraceEvent's 1.321 ms (its first interval)"
is "$(grep -c . "$T/tot")" 13 "sentry: 13 (thread, pseudo-frame) totals"

# Every line ends in a pseudo-frame and starts with a thread frame.
bad=$(grep -v -E '^Thread \([0-9]+\);.*(CPU_TIME|UNMANAGED_CODE_TIME) [0-9]+$' "$T/out" | head -n 3)
is "$bad" "" "every line: Thread root, pseudo-frame leaf"

# The macOS single-thread loop: golden totals (reviewed: 6331 samples at ~1.38 ms)
run "$FOLD" --compat=traceevent --per-thread "$TRACES/perfview/mixed_managed_external_samples.nettrace"
is_rc 0 "mixed trace exits 0"
totals "$T/out" >"$T/tot"
golden "$T/tot" "$EXPECTED/t102-mixed-totals.txt" "mixed trace: per-thread pseudo-frame totals"
done_testing
