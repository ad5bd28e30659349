#!/bin/sh
# SPDX-License-Identifier: MIT
# t640-time-native-cpu.sh - cpu time from the CPU clock (nettrace-rules(5), CATEGORIES):
# nts-work fair runs 3 busy threads, all pinned to one core (taskset), recorded at 997 Hz;
# each thread prints the CPU time its own clock says it used (the truth). Per thread, the
# profile's cpu time must be within 10% of that, cpu + ready must be the thread's sampled
# wall time (ready is the rest: the threads wait for the one core), and the threads show
# by name ('spin-K (TID)') in the tree, the folded stacks, the SQLite store and speedscope,
# with the same per-thread cpu totals in each. --thread takes the names and globs,
# --hide-idle drops the main thread (blocked in pthread_join all along).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
SQL=$top_builddir/tools/nettrace-sql
FLAME=$top_builddir/tools/nettrace-flame
need_tool "$FOLD"
need_tool "$TREE"
if ! command -v taskset >/dev/null 2>&1; then
	echo "1..0 # SKIP taskset is not installed (util-linux): cannot pin the threads to one core"
	exit 0
fi
core=$(taskset -p $$ 2>/dev/null | sed 's/.*: *//' | awk '{ m = strtonum("0x" $0); for (i = 0; i < 64; i++) if (and(m, lshift(1, i))) { print i; exit } }' 2>/dev/null)
[ -n "$core" ] || core=0

# per_thread FOLDED CAT: "TID NS" per thread for category CAT ([CAT] root frame after the thread)
per_thread() {
	awk -v c="[$2]" -F';' '$2 == c { n = split($0, w, " "); tid = $1; sub(/.*\(/, "", tid); sub(/\).*/, "", tid); s[tid] += w[n] }
		END { for (t in s) printf "%s %.0f\n", t, s[t] }' "$1" | sort
}

for secs in 2 4; do
	F=$T/fair.nettrace
	taskset -c "$core" "$RECORD" -q -F 997 -o "$F" -- "$WORK" fair "$secs" >"$T/rec.out" 2>"$T/rec.err"
	rc=$?
	[ "$rc" = 0 ] || break
	"$FOLD" --per-thread --category-frame root "$F" >"$T/fold" 2>"$T/err"
	per_thread "$T/fold" cpu >"$T/cpu"
	good=1
	while read -r name tid cpu wall; do
		tid=${tid#tid=} cpu=${cpu#cpu_ns=}
		got=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/cpu")
		awk -v g="${got:-0}" -v w="$cpu" 'BEGIN { exit !(g >= 0.9 * w && g <= 1.1 * w) }' || good=0
	done <<EOT
$(sed -n 's/^truth thread=\([^ ]*\) \(tid=[0-9]*\) \(cpu_ns=[0-9]*\) .*/\1 \2 \3 x/p' "$T/rec.out")
EOT
	[ "$good" = 1 ] && break
	diag "$secs s: cpu off by more than 10%; running once more, twice as long"
done
is_rc 0 "recorded nts-work fair pinned to core $core at 997 Hz"
n=$(grep -c '^truth thread=spin-' "$T/rec.out")
is "$n" 3 "the three threads report their CPU clocks"
sed -n 's/^truth thread=\([^ ]*\) tid=\([0-9]*\) cpu_ns=\([0-9]*\) wall_ns=\([0-9]*\)/\1 \2 \3 \4/p' \
	"$T/rec.out" >"$T/truth"
per_thread "$T/fold" ready >"$T/ready"
awk -F';' '{ n = split($0, w, " "); tid = $1; sub(/.*\(/, "", tid); sub(/\).*/, "", tid); s[tid] += w[n] }
	END { for (t in s) printf "%s %.0f\n", t, s[t] }' "$T/fold" | sort >"$T/all"
while read -r name tid cpu wall; do
	got=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/cpu")
	if awk -v g="${got:-0}" -v w="$cpu" 'BEGIN { exit !(g >= 0.9 * w && g <= 1.1 * w) }'; then
		pass "$name: cpu $((${got:-0} / 1000000)) ms, its CPU clock says $((cpu / 1000000)) ms (within 10%)"
	else
		fail "$name: cpu $((${got:-0} / 1000000)) ms, its CPU clock says $((cpu / 1000000)) ms (within 10%)"
	fi
	rdy=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/ready")
	all=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/all")
	# the rest of its time is ready: runnable all along, waiting for the core
	if awk -v c="${got:-0}" -v r="${rdy:-0}" -v a="${all:-0}" -v w="$wall" -v u="$cpu" \
		'BEGIN { exit !(a > 0 && (c + r) >= 0.98 * a && r >= 0.9 * (w - u) - 0.05 * w && r <= 1.1 * (w - u) + 0.05 * w) }'; then
		pass "$name: ready $((${rdy:-0} / 1000000)) ms is the rest of its $((wall / 1000000)) ms"
	else
		fail "$name: ready $((${rdy:-0} / 1000000)) ms is the rest of its $((wall / 1000000)) ms (cpu ${got:-0}, all ${all:-0})"
	fi
	if grep -q "^$name ($tid);" "$T/fold"; then
		pass "fold: the thread is '$name ($tid)'"
	else
		fail "fold: the thread is '$name ($tid)'"
	fi
done <"$T/truth"

# the tree: same names, same cpu, busiest first
run "$TREE" --per-thread --by-category --depth 1 --unit ns --min-percent 0 "$F"
is_rc 0 "nettrace-tree --per-thread"
for name in spin-0 spin-1 spin-2; do
	if grep -q " $name ([0-9]*)\$" "$T/out"; then pass "tree: a root '$name (TID)'"; else
		fail "tree: a root '$name (TID)'"; fi
done
first=$(awk '/ frame$/ { getline; print $(NF - 1); exit }' "$T/out")
case $first in spin-*) pass "tree: a busy thread comes first ($first)" ;;
*) fail "tree: a busy thread comes first (got $first)" ;; esac
tree_cpu=$(sed -n 's/^Categories:.* cpu [0-9.]*% (\([^)]*\)).*/\1/p' "$T/out")
fold_cpu=$(awk '{ s += $2 } END { printf "%.0f", s }' "$T/cpu")
if echo "$tree_cpu" | awk -v f="$fold_cpu" '{ m = $2 == "s" ? 1e9 : $2 == "ms" ? 1e6 : $2 == "us" ? 1e3 : 1
	v = $1 * m; d = v - f; if (d < 0) d = -d; exit !(f > 0 && d <= 0.001 * f) }'; then
	pass "tree and fold: the same cpu total ($tree_cpu)"
else
	fail "tree and fold: the same cpu total (tree $tree_cpu, fold $fold_cpu ns)"
fi

# names and globs for --thread; --hide-idle
run "$FOLD" --per-thread --thread 'spin-*' "$F"
is "$(sed 's/ (.*//' "$T/out" | sort -u | tr '\n' ' ')" "spin-0 spin-1 spin-2 " "--thread 'spin-*' keeps the three spinning threads"
tid1=$(awk '$1 == "spin-1" { print $2 }' "$T/truth")
run "$FOLD" --per-thread --thread "spin-0,$tid1" "$F"
is "$(sed 's/ (.*//' "$T/out" | sort -u | tr '\n' ' ')" "spin-0 spin-1 " "--thread takes a name and an id together"
run "$FOLD" --per-thread --hide-idle "$F"
is "$(sed 's/ (.*//' "$T/out" | sort -u | tr '\n' ' ')" "spin-0 spin-1 spin-2 " "--hide-idle drops the main thread, blocked in pthread_join"

# the SQLite store and speedscope: same names, same cpu per thread
if [ -x "$SQL" ] && command -v sqlite3 >/dev/null 2>&1; then
	"$SQL" -o "$T/db" "$F" >/dev/null 2>&1
	sqlite3 "$T/db" "SELECT tid, ROUND(time_ns) FROM category_time WHERE category = 'cpu' AND thread_name LIKE 'spin-%' ORDER BY tid" |
		tr '|' ' ' | awk '{ printf "%s %.0f\n", $1, $2 }' | sort >"$T/sqlcpu"
	if awk 'NR == FNR { a[$1] = $2; next } !($1 in a) { next } { d = a[$1] - $2; if (d < 0) d = -d; if (d > 1000) bad++; n++ }
		END { exit !(n == 3 && !bad) }' "$T/sqlcpu" "$T/cpu"; then
		pass "SQL category_time: the same cpu per thread as fold"
	else
		fail "SQL category_time: the same cpu per thread as fold"; diag "$(cat "$T/sqlcpu")"
	fi
else
	skip "SQL category_time: nettrace-sql or sqlite3 missing"
fi
# ss_check CATEGORY WANT MESSAGE: each spinner's time of CATEGORY in speedscope's
# time-ordered export is WANT's (fold's) or up to 2% less
ss_check() {
	"$FLAME" --format speedscope --category "$1" -o "$T/ss-$1.json" "$F" 2>/dev/null
	jq -r '.profiles[] | select(.name | startswith("spin-")) | "\(.name) \([[.samples, .weights] | transpose[] | select(.[0] | length > 0) | .[1]] | add)"' "$T/ss-$1.json" |
		sed 's/^[^(]*(\([0-9]*\)) /\1 /' | awk '{ printf "%s %.0f\n", $1, $2 }' | sort >"$T/ss-$1"
	if awk 'NR == FNR { a[$1] = $2; next } !($1 in a) { next } { if (a[$1] > $2 + 1000 || a[$1] < 0.98 * $2) bad++; n++ }
		END { exit !(n == 3 && !bad) }' "$T/ss-$1" "$2"; then
		pass "$3"
	else
		fail "$3"; diag "$(paste "$T/ss-$1" "$2")"
	fi
}
if command -v jq >/dev/null 2>&1; then
	# speedscope lays each thread's samples on the recording's time axis, a sample lasting
	# until the thread's next one (nettrace-flame(1))
	ss_check cpu "$T/cpu" "speedscope: profiles 'spin-K (TID)' with the cpu per thread of fold (up to 2% less)"
	# the rounds a waiting thread answered late share the time of the one it answered:
	# laid out back from it, so its ready time is on the axis too
	ss_check ready "$T/ready" "speedscope: each spinner's ready time is fold's (up to 2% less)"
else
	skip "speedscope: jq missing"
fi
done_testing
