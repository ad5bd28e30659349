#!/bin/sh
# SPDX-License-Identifier: MIT
# t702-flame-timeorder.sh - every speedscope export, replayed in time order as speedscope's
# "Time Order" view plays it (speedscope-check.js --replay: each sample starts where the
# weights before it end), reproduces the sample sequence of the trace: per thread, the runs
# of consecutive samples with one stack, their weights and their times equal those of the
# SQL store's sample_stacks view and charges table (nettrace-sql --raw, another path
# through the library: the store writes one row per sample as it is read, and one per GC
# pause charged to a thread without a sample): each run starts at its first sample's time
# and weighs its samples, a sample lasting its weight or until the thread's next sample if
# that comes first; every thread profile spans the session (startValue 0,
# endValue its end). Needs node (skipped without it).
. "$top_srcdir/tests/e2e/lib.sh"
FLAME=$top_builddir/tools/nettrace-flame
SQL=$top_builddir/tools/nettrace-sql
MKTRACE=$top_builddir/tests/mktrace
need_tool "$FLAME"
need_tool "$SQL"
if ! command -v node >/dev/null 2>&1; then
	skip "speedscope replay" "node not found (Debian: nodejs)"
	done_testing
fi
cd "$TRACES" || exit 1
"$MKTRACE" 6 "$T/syn6.nettrace" >/dev/null 2>&1

# runs: "tid<TAB>start<TAB>weight<TAB>stack<TAB>pieces" lines, consecutive equal (tid,
# stack) merged
runs() {
	awk -F '\t' '{
		if ($1 == tid && $4 == st) { w += $3; k++; next }
		if (NR > 1) printf "%s\t%.0f\t%.0f\t%s\t%d\n", tid, t0, w, st, k
		tid = $1; t0 = $2; w = $3; st = $4; k = 1
	} END { if (NR) printf "%s\t%.0f\t%.0f\t%s\t%d\n", tid, t0, w, st, k }'
}
# cut: a sample lasts until the thread's next sample at most
cut_at_next() {
	awk -F '\t' 'NR > 1 { w = pw; if (ptid == $1 && $2 - pt < w) w = $2 - pt
			printf "%s\t%s\t%.3f\t%s\n", ptid, pt, w, pst }
		{ ptid = $1; pt = $2; pw = $3; pst = $4 }
		END { if (NR) printf "%s\t%s\t%.3f\t%s\n", ptid, pt, pw, pst }'
}

for tr in $TRACE_FILES "$T/syn6.nettrace"; do
	name=$(basename "$tr")
	run "$FLAME" --format speedscope --no-collapse-unresolved -o "$T/s.json" "$tr"
	if [ "$rc" != 0 ]; then
		fail "$name: speedscope export exits 0"
		continue
	fi
	node "$E2E/speedscope-check.js" --replay "$T/s.json" >"$T/chk"
	if grep -q '^FAIL' "$T/chk"; then
		fail "$name: the export matches the speedscope schema"
		diag "$(grep '^FAIL' "$T/chk" | head -5)"
		continue
	fi
	# the samples, and the time charged without a sample (GC pauses a thread sat in, at
	# its last stack) where it happened
	"$SQL" --raw -q "SELECT tid, ts_ns, weight_ns, stack FROM (
		SELECT t.tid AS tid, s.ts_ns AS ts_ns, s.weight_ns AS weight_ns, s.stack AS stack,
		       0 AS k, s.id AS id FROM sample_stacks s JOIN threads t ON t.id = s.thread_id
		UNION ALL
		SELECT t.tid, c.ts_ns, c.weight_ns, COALESCE(cs.stack, '[empty stack]'), 1, c.id
		FROM charges c JOIN sample_groups g ON g.id = c.group_id
		JOIN threads t ON t.id = g.thread_id
		LEFT JOIN callsite_stacks cs ON cs.callsite_id = g.callsite_id)
		ORDER BY tid, ts_ns, k, id" "$tr" >"$T/sql" 2>"$T/sqlerr"
	if [ ! -s "$T/sql" ]; then
		is "$(grep -c '^REPLAY' "$T/chk")" 0 "$name: no samples, no replayed sample"
		continue
	fi
	cut_at_next <"$T/sql" | runs >"$T/want"
	sed -n 's/^REPLAY Thread (\([0-9]*\))\t/\1\t/p' "$T/chk" | sort -s -t "$(printf '\t')" -k1,1n |
		runs >"$T/got"
	cut -f1,4 "$T/want" >"$T/want-seq"
	cut -f1,4 "$T/got" >"$T/got-seq"
	same "$T/got-seq" "$T/want-seq" "$name: replayed in time order, the stacks follow the trace's sample sequence ($(wc -l <"$T/want") runs of $(wc -l <"$T/sql") samples)"
	# weights and times: one ns of rounding per sample
	iv=$(awk -F '\t' 'NR == 1 { print $3 }' "$T/sql")
	paste "$T/got" "$T/want" | awk -F '\t' '
		{ dw = $3 - $8; if (dw < 0) dw = -dw; if (dw > $10 + 1) bw++
		  dt = $2 - $7; if (dt < 0) dt = -dt; if (dt > mt) mt = dt; if (dt > n + 1) bt++; n += $10 }
		END { printf "%d %d %.0f\n", bw, bt, mt }' >"$T/cmp"
	read -r bw bt mt <"$T/cmp"
	is "$bw" 0 "$name: each run weighs its samples"
	is "$bt" 0 "$name: each run starts at its first sample's time (largest offset $mt ns)"
	# every thread spans the session: the same endValue
	awk -F '\t' '/^PROFILE/ { print $4 }' "$T/chk" | sort -u >"$T/ends"
	is "$(wc -l <"$T/ends")" 1 "$name: every thread profile spans the same session time"
	last=$(awk -F '\t' '{ if ($2 + $3 > m) m = $2 + $3 } END { printf "%.0f", m }' "$T/sql")
	awk -v a="$(cat "$T/ends")" -v b="$last" -v iv="$iv" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 2 * iv) }' &&
		pass "$name: the time axis ends with the last sample ($(cat "$T/ends") ns)" ||
		fail "$name: the time axis ends with the last sample ($(cat "$T/ends") vs $last)"
done

# nettrace-sql --raw: values as they are (no CSV quoting of the commas of signatures), so
# its folded stacks feed flamegraph.pl and equal nettrace-fold's
PYRO=pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
SENTRY=sentry-dotnet/sample.nettrace
"$SQL" --raw -q "SELECT stack || ' ' || COUNT(*) FROM sample_stacks GROUP BY stack ORDER BY stack" "$SENTRY" >"$T/raw"
"$top_builddir/tools/nettrace-fold" --unit samples "$SENTRY" >"$T/fold"
same "$T/raw" "$T/fold" "nettrace-sql --raw: doc/sqlite-schema.md's folded-stack query equals nettrace-fold --unit samples"
grep -q ',' "$T/raw" && pass "--raw keeps the commas of .NET signatures unquoted" || fail "--raw keeps commas"
done_testing
