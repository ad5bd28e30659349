#!/bin/sh
# SPDX-License-Identifier: MIT
# t641-time-gc-pauses.sh - GC pauses as time (nettrace-rules(5), CATEGORIES) on the .NET
# Core 3.0 trace (478 GCs). The oracle is an awk pass over the events nettrace-info
# --events lists (no profile code): GCStart..GCEnd per thread, GCSuspendEEBegin (reason 1
# or 6)..GCRestartEEEnd per thread, and each thread's sample times.
#  - nettrace-info's GC line: 478 GCs whose total is the events' sum (within 1%), and the
#    pauses' total; the sampling-gap line says how much of the gaps GC pauses explain.
#  - each thread's gc time (fold --per-thread --category-frame root) is the pauses it sat
#    in (sampled before the pause and after it, not inside) plus its samples taken inside
#    a pause, within 0.1%; also when the trace is read in 4 KiB chunks on two threads.
#  - the process-wide gc figure (tree header) is at least the pause total; fold, SQL and
#    the tree give the same gc and the same total; SQL's charges table has one row per
#    pause and thread that sat in it; speedscope's time-ordered timelines cover them.
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
SQL=$top_builddir/tools/nettrace-sql
need_tool "$INFO"
need_tool "$FOLD"
need_tool "$TREE"
F=$TRACES/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace

"$INFO" --events "$F" >"$T/events" 2>/dev/null
awk '
function t(s) { sub(/^\[\+/, "", s); sub(/s\]$/, "", s); return s * 1e9 }
function tid() { match($0, / tid=[0-9]+/); return substr($0, RSTART + 5, RLENGTH - 5) }
/\/GCStart\(/ { gs[tid()] = t($1) }
/\/GCEnd\(/ { k = tid(); if (k in gs) { n++; sum += t($1) - gs[k]; delete gs[k] } }
/\/GCSuspendEEBegin\(/ { r = $0; sub(/.*"Reason":/, "", r); r += 0; if (r == 1 || r == 6) ss[tid()] = t($1) }
/\/GCRestartEEEnd\(/ { k = tid(); if (k in ss) { np++; ps[np] = ss[k]; pe[np] = t($1); psum += t($1) - ss[k]; delete ss[k] } }
/\/ThreadSample\(/ { k = tid(); ns[k]++; st[k, ns[k]] = t($1) }
END {
	printf "gcs %d %.0f\npauses %d %.0f\n", n, sum, np, psum
	# per thread: the pauses it sat in, and its samples inside a pause
	for (k in ns) {
		c = 0; inside = 0; j = 1
		for (p = 1; p <= np; p++) {
			while (j <= ns[k] && st[k, j] <= ps[p]) j++
			# st[k, j - 1] <= start < st[k, j]
			if (j > 1 && j <= ns[k] && st[k, j] >= pe[p]) {
				c += pe[p] - ps[p]
				printf "sat %s %.0f %.0f\n", k, ps[p], pe[p]
			}
		}
		for (i = 1; i <= ns[k]; i++)
			for (p = 1; p <= np; p++) if (st[k, i] >= ps[p] && st[k, i] < pe[p]) { inside++; break }
		printf "thread %s %.0f %d\n", k, c, inside
	}
}' "$T/events" >"$T/oracle"
read -r _ gcs gc_ns <<EOT
$(grep '^gcs ' "$T/oracle")
EOT
read -r _ npause pause_ns <<EOT
$(grep '^pauses ' "$T/oracle")
EOT
is "$gcs" 478 "the oracle finds the trace's 478 GCs"

run "$INFO" "$F"
line=$(grep '^GC: ' "$T/out")
got_gcs=$(echo "$line" | sed -n 's/^GC: *\([0-9]*\) GCs, \([0-9.]*\) s (GCStart..GCEnd); \([0-9]*\) pauses, \([0-9.]*\) s .*/\1 \2 \3 \4/p')
read -r g1 g2 p1 p2 <<EOT
$got_gcs
EOT
is "$g1" 478 "nettrace-info: 478 GCs"
if awk -v a="$g2" -v b="$gc_ns" 'BEGIN { d = a * 1e9 - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.01 * b) }'; then
	pass "nettrace-info: GC total $g2 s, the 478 GCs sum to $(awk -v b="$gc_ns" 'BEGIN { printf "%.3f", b / 1e9 }') s (within 1%)"
else
	fail "nettrace-info: GC total $g2 s, the 478 GCs sum to $gc_ns ns"
fi
if [ "$p1" = "$npause" ] && awk -v a="$p2" -v b="$pause_ns" 'BEGIN { d = a * 1e9 - b; if (d < 0) d = -d; exit !(d <= 0.001 * b + 1e6) }'; then
	pass "nettrace-info: $p1 GC pauses, $p2 s, as the suspension events say"
else
	fail "nettrace-info: GC pauses $p1 / $p2 s, the events say $npause / $pause_ns ns"
fi
if grep -q '^Sampling gaps: .* of which [0-9.]* s in GC pauses, [0-9.]* s unexplained' "$T/out"; then
	pass "nettrace-info explains the sampling gaps with the GC pauses"
else
	fail "nettrace-info explains the sampling gaps with the GC pauses"; diag "$(grep '^Sampling gaps' "$T/out")"
fi

# per thread: gc = pauses sat in + samples inside a pause x the sample weight
iv=$("$INFO" --json "$F" | sed -n 's/.*"inferred_interval_ns": \([0-9.]*\).*/\1/p' | head -n 1)
# gc_vs_oracle FOLDFILE DESC: each thread's gc in FOLDFILE against the awk oracle
gc_vs_oracle() {
	awk -F';' '$2 == "[gc]" { n = split($0, w, " "); tid = $1; sub(/.*\(/, "", tid); sub(/\).*/, "", tid); s[tid] += w[n] }
		END { for (t in s) printf "%s %.0f\n", t, s[t] }' "$1" | sort >"$T/gc"
	awk -v iv="$iv" 'NR == FNR { if ($1 == "thread") want[$2] = $3 + $4 * iv; next }
		{ got[$1] = $2 }
		END { for (k in want) { g = got[k] + 0; d = g - want[k]; if (d < 0) d = -d
			if (d > 1e6 + 0.001 * want[k]) { bad++; printf "# thread %s: gc %.0f, want %.0f\n", k, g, want[k] }
			if (want[k] > 0) sat++ }
		      printf "%d %d\n", bad, sat }' "$T/oracle" "$T/gc" >"$T/cmp"
	bad=$(tail -n 1 "$T/cmp" | cut -d' ' -f1) sat=$(tail -n 1 "$T/cmp" | cut -d' ' -f2)
	if [ "$bad" = 0 ] && [ "$sat" -gt 0 ]; then
		pass "$2: each of $sat threads: gc time = the pauses it sat in (and its samples inside one)"
	else
		fail "$2: each thread's gc time = the pauses it sat in"; diag "$(grep '^#' "$T/cmp" | head -n 5)"
	fi
}
# read in 4 KiB chunks by two threads (the 18 sequence-point regions: pauses and threads'
# samples on both sides of chunk boundaries, charged at the merge)
NETTRACE_CHUNK_BYTES=4096 "$FOLD" --jobs 2 --per-thread --category-frame root "$F" >"$T/fold2"
gc_vs_oracle "$T/fold2" "chunks on two threads"
# one thread (its fold and gc are what the checks below compare with)
"$FOLD" --jobs 1 --per-thread --category-frame root "$F" >"$T/fold"
gc_vs_oracle "$T/fold" "one thread"

# process-wide: tree >= the pause total; fold, SQL, tree agree
run "$TREE" --by-category --depth 1 "$F"
tree_gc=$(sed -n 's/^Categories:.* gc [0-9.]*% (\([^)]*\)).*/\1/p' "$T/out" | awk '{ m = $2 == "s" ? 1e9 : $2 == "ms" ? 1e6 : $2 == "us" ? 1e3 : 1; printf "%.0f", $1 * m }')
tree_total=$(sed -n 's/^Time: *//p' "$T/out" | awk '{ m = $2 == "s" ? 1e9 : $2 == "ms" ? 1e6 : $2 == "us" ? 1e3 : 1; printf "%.0f", $1 * m }')
fold_gc=$(awk '{ s += $2 } END { printf "%.0f", s }' "$T/gc")
fold_total=$(awk '{ s += $NF } END { printf "%.0f", s }' "$T/fold")
if awk -v a="$tree_gc" -v b="$pause_ns" 'BEGIN { exit !(a >= b && b > 0) }'; then
	pass "tree: process-wide gc $tree_gc ns >= the pause total $pause_ns ns"
else
	fail "tree: process-wide gc $tree_gc ns >= the pause total $pause_ns ns"
fi
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.0005 * b) }'; }
if close "$tree_gc" "$fold_gc" && close "$tree_total" "$fold_total"; then
	pass "tree and fold agree: gc and total"
else
	fail "tree and fold agree: gc $tree_gc/$fold_gc, total $tree_total/$fold_total"
fi
if [ -x "$SQL" ] && command -v sqlite3 >/dev/null 2>&1; then
	"$SQL" -o "$T/db" "$F" >/dev/null 2>&1
	sql_gc=$(sqlite3 "$T/db" "SELECT ROUND(SUM(time_ns)) FROM category_time WHERE category = 'gc'" | cut -d. -f1)
	sql_total=$(sqlite3 "$T/db" "SELECT ROUND(SUM(weight_ns)) FROM sample_groups" | cut -d. -f1)
	if close "$sql_gc" "$fold_gc" && close "$sql_total" "$fold_total"; then
		pass "SQL and fold agree: gc and total"
	else
		fail "SQL and fold agree: gc $sql_gc/$fold_gc, total $sql_total/$fold_total"
	fi
	# the pauses as rows of charges, per thread, at their times
	sqlite3 -separator ' ' "$T/db" "SELECT t.tid, c.ts_ns, c.ts_ns + CAST(c.weight_ns AS INTEGER)
		FROM charges c JOIN sample_groups g ON g.id = c.group_id JOIN threads t ON t.id = g.thread_id
		ORDER BY t.tid, c.ts_ns" >"$T/charges"
	awk '$1 == "sat" { print $2, $3, $4 }' "$T/oracle" | sort -k1,1n -k2,2n >"$T/sat"
	awk 'NR == FNR { w[$1 " " $2] = $3; n++; next }
		{ k = $1 " " $2; if (!(k in w) || w[k] - $3 > 1000 || $3 - w[k] > 1000) bad++; m++ }
		END { exit !(n == m && n > 0 && !bad) }' "$T/sat" "$T/charges" &&
		pass "SQL charges: one row per pause and thread that sat in it, at its time ($(wc -l <"$T/charges") rows)" ||
		{ fail "SQL charges: one row per pause and thread that sat in it, at its time"; diag "$(wc -l "$T/sat" "$T/charges")"; }
else
	skip "SQL: nettrace-sql or sqlite3 missing"
fi

# speedscope's time order: each thread shows a stack through every pause it sat in
if command -v node >/dev/null 2>&1; then
	"$top_builddir/tools/nettrace-flame" --format speedscope -o "$T/s.json" "$F"
	awk '$1 == "sat" { print $2, $3, $4 }' "$T/oracle" >"$T/sat"
	node -e '
const fs = require("fs"), j = JSON.parse(fs.readFileSync(process.argv[1]));
const sat = {};
for (const l of fs.readFileSync(process.argv[2], "utf8").split("\n")) {
	const f = l.split(" "); if (f.length < 3) continue;
	(sat[f[0]] = sat[f[0]] || []).push([+f[1], +f[2]]);
}
let want = 0, got = 0;
for (const p of j.profiles) {
	const m = /\((\d+)\)$/.exec(p.name); if (!m || !sat[m[1]]) continue;
	let t = 0; const busy = [];
	p.samples.forEach((s, i) => { if (s.length) busy.push([t, t + p.weights[i]]); t += p.weights[i]; });
	for (const [a, b] of sat[m[1]]) {
		want += b - a;
		for (const [x, y] of busy) { const lo = Math.max(a, x), hi = Math.min(b, y); if (hi > lo) got += hi - lo; }
	}
}
console.log(want.toFixed(0), got.toFixed(0));' "$T/s.json" "$T/sat" >"$T/sscov"
	read -r want got <"$T/sscov"
	if awk -v a="$got" -v b="$want" 'BEGIN { exit !(b > 0 && a >= 0.999 * b && a <= b * 1.000001) }'; then
		pass "speedscope: the threads' timelines cover the GC pauses they sat in ($got of $want ns)"
	else
		fail "speedscope: the threads' timelines cover the GC pauses they sat in ($got of $want ns)"
	fi
else
	skip "speedscope: node missing"
fi
done_testing
