#!/bin/sh
# SPDX-License-Identifier: MIT
# t772-record-traceevent-cpu.sh - TraceEvent counts the sampler's running samples as CPU
# (doc/format/sampler-events.md, "Type"): nts-work sleep (5 ms busy, 5 ms asleep) recorded
# at 1 kHz with each backend; TraceEvent's own SampleProfilerThreadTimeComputer (the oracle
# of tests/dotnet/oracle, as dotnet-trace convert runs it) must charge the thread
#  - CPU_TIME for the intervals from its running samples (State 1) to its next sample, and
#    UNMANAGED_CODE_TIME (blocked) for the intervals from the others, as the trace's
#    sample times say (0.5 ms + 0.1%);
#  - at least 90% of the CPU time its own clock says it used as CPU_TIME, and no more
#    blocked time than it spent in the sleep call (+5%); both at least a tenth of the run
#    (before, every sample was External, and TraceEvent showed no CPU at all);
# while this toolkit reads the file as before: every sample External (nettrace-info), and
# `nettrace-fold --compat=traceevent` gives TraceEvent's per-thread totals to 0.01 ms.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
FOLD=$top_builddir/tools/nettrace-fold
INFO=$top_builddir/tools/nettrace-info
need_tool "$FOLD"
need_tool "$INFO"
dotnet_oracle

backends="signal"
env LD_PRELOAD="$SAMPLER_LIB" NETTRACE_OUTPUT="$T/probe.nettrace" NETTRACE_BACKEND=perf \
	NETTRACE_STATUS_FD=9 true 9>"$T/status" 2>/dev/null
if grep -q '^ok ' "$T/status"; then
	backends="perf signal"
else
	skip "the perf_events backend" "not permitted here: $(cat "$T/status")"
fi

for b in $backends; do
	for secs in 2 4; do
		F=$T/$b.nettrace
		record_q --backend="$b" -F 1000 -o "$F" -- "$WORK" sleep "$secs"
		[ "$rc" = 0 ] || break
		sleep_wall=$(sed -n 's/^truth sleep_wall=\([0-9.]*\).*/\1/p' "$T/rec.out")
		cpu_share=$(sed -n 's/.*cpu_share=//p' "$T/rec.out")
		samples "$F" "$T/s"
		tid=$(awk 'NR == 1 { print $1 }' "$T/s")
		# samples per state, the time from each to the thread's next sample summed by
		# the state (ms: what TraceEvent must charge), and the span of the samples (ms)
		read -r nrun nblk want_run want_blk span <<EOT
$(awk '{ if ($2 == 1) r++; else b++; if (NR == 1) t0 = $4; else if (ps == 1) wr += $4 - pt; else wb += $4 - pt
	ps = $2; pt = $4; t1 = $4 }
	END { printf "%d %d %.3f %.3f %.3f\n", r, b, wr / 1e6, wb / 1e6, (t1 - t0) / 1e6 }' "$T/s")
EOT
		if ! "$NT_ORACLE" threadtime "$F" >"$T/te" 2>"$T/te.err"; then
			rc=9
			break
		fi
		te_totals "$T/te" >"$T/te.tot"
		te_cpu=$(awk -v t="$tid" '$1 == t && $2 == "CPU_TIME" { print $3 }' "$T/te.tot")
		te_blk=$(awk -v t="$tid" '$1 == t && $2 == "UNMANAGED_CODE_TIME" { print $3 }' "$T/te.tot")
		te_cpu=${te_cpu:-0} te_blk=${te_blk:-0}
		# the thread's CPU time and time in the sleep call over the span of its samples
		truth_cpu=$(awk -v c="$cpu_share" -v s="$span" 'BEGIN { printf "%.1f", c * s }')
		truth_slp=$(awk -v c="$sleep_wall" -v s="$span" 'BEGIN { printf "%.1f", c * s }')
		good=$(awk -v c="$te_cpu" -v k="$te_blk" -v tc="$truth_cpu" -v ts="$truth_slp" -v s="$span" \
			'BEGIN { print (c >= 0.9 * tc && k <= 1.05 * ts + 5 && c >= 0.1 * s && k >= 0.1 * s) ? 1 : 0 }')
		[ "$good" = 1 ] && break
		diag "$b, $secs s: TraceEvent CPU_TIME $te_cpu ms, blocked $te_blk ms; truth cpu $truth_cpu ms, asleep $truth_slp ms; running once more, twice as long"
	done
	if [ "$rc" = 9 ]; then
		fail "$b: TraceEvent computes the thread time"; diag "$(cat "$T/te.err")"
		continue
	fi
	is_rc 0 "$b: recorded nts-work sleep at 1 kHz"
	[ "$rc" = 0 ] || { diag "$(cat "$T/rec.err")"; continue; }
	# each sample is charged the time to the thread's next one (the last one nothing),
	# as CPU when it is a running sample
	if awk -v c="$te_cpu" -v k="$te_blk" -v r="$want_run" -v b="$want_blk" \
		'BEGIN { d = c - r; e = k - b; if (d < 0) d = -d; if (e < 0) e = -e
			 exit !(d <= 0.5 + 1e-3 * r && e <= 0.5 + 1e-3 * b) }'; then
		pass "$b: TraceEvent charges the $nrun running samples' $want_run ms as CPU_TIME ($te_cpu ms), the $nblk blocked ones' $want_blk ms as UNMANAGED_CODE_TIME ($te_blk ms)"
	else
		fail "$b: TraceEvent charges the $nrun running samples' $want_run ms as CPU_TIME ($te_cpu ms), the $nblk blocked ones' $want_blk ms as UNMANAGED_CODE_TIME ($te_blk ms)"
	fi
	if [ "$good" = 1 ]; then
		pass "$b: CPU_TIME $te_cpu ms >= 90% of the thread's CPU clock ($truth_cpu ms); blocked $te_blk ms <= its time asleep ($truth_slp ms)"
	else
		fail "$b: CPU_TIME $te_cpu ms >= 90% of the thread's CPU clock ($truth_cpu ms); blocked $te_blk ms <= its time asleep ($truth_slp ms)"
	fi
	# this toolkit's reading is unchanged: native samples are External, running or not
	line=$("$INFO" "$F" | sed -n 's/^Samples: *\([0-9]*\) (error \([0-9]*\), external \([0-9]*\), managed \([0-9]*\)).*/\1 \2 \3 \4/p')
	is "$line" "$((nrun + nblk)) 0 $((nrun + nblk)) 0" "$b: nettrace-info reads every sample as External"
	"$FOLD" --compat=traceevent --per-thread --unit ns "$F" 2>/dev/null |
		awk '{ w = $NF; $NF = ""; sub(/ $/, ""); printf "%s %.6f\n", $0, w / 1e6 }' >"$T/ours"
	te_totals "$T/ours" >"$T/our.tot"
	te_same_totals "$T/our.tot" "$T/te.tot" "$b: nettrace-fold --compat=traceevent has TraceEvent's per-thread totals"
done
done_testing
