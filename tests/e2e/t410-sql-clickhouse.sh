#!/bin/sh
# SPDX-License-Identifier: MIT
# t410-sql-clickhouse.sh - nettrace-sql --to clickhouse://: two real clickhouse-server
# instances on loopback ports, a Distributed table over both shards; three traces imported
# (two into shard 1, one into shard 2). Cross-trace queries over the Distributed tables
# must equal the sums of the per-trace answers of the SQLite store (samples and weight per
# category, samples per leaf function, per-trace counts). Then: importing a trace again
# adds nothing; an import cut mid-INSERT by a proxy fails (exit 3) and leaves no complete
# trace, and the retry deletes what it left and gives exactly the SQLite rows; a corrupt
# trace imports nothing; an unreachable server is exit 3 with the address.
# Skipped where clickhouse-server is not installed (run.sh installs it).
. "$top_srcdir/tests/e2e/lib.sh"
SQL=$top_builddir/tools/nettrace-sql
CUT=$top_builddir/tests/tcp-cut
need_tool "$SQL"
need_tool "$CUT"
. "$top_srcdir/tests/e2e/lib-clickhouse.sh"

A=$TRACES/sentry-dotnet/sample.nettrace
B=$TRACES/perfview/only_managed_samples.nettrace
C=$TRACES/perfview/mixed_managed_external_samples.nettrace

# ---------------------------------------------------------------- two servers
pids=""
stop_servers() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$p" 2>/dev/null
	done
}
trap 'stop_servers; rm -rf "$T"' EXIT

# Ports: a base from the process id, moved on when a server does not come up.
base=$(( 20000 + ($$ % 2000) * 10 ))
started=0
for attempt in 1 2 3; do
	H1=$base T1=$((base + 1)) H2=$((base + 2)) T2=$((base + 3))
	ch_config "$T/ch1" "$H1" "$T1" "$T1" "$T2"
	ch_config "$T/ch2" "$H2" "$T2" "$T1" "$T2"
	"$CHS" --config-file="$T/ch1/config.xml" >"$T/ch1/out.log" 2>&1 &
	p1=$!
	"$CHS" --config-file="$T/ch2/config.xml" >"$T/ch2/out.log" 2>&1 &
	p2=$!
	pids="$p1 $p2"
	if ch_up "$T1" "$H1" && ch_up "$T2" "$H2"; then
		started=1
		break
	fi
	stop_servers
	pids=""
	base=$((base + 37))
done
if [ "$started" -ne 1 ]; then
	echo "Bail out! clickhouse-server did not start: $(tail -n 3 "$T/ch1/error.log" 2>/dev/null)"
	exit 1
fi
pass "two clickhouse-server instances on 127.0.0.1:$T1 and :$T2"

ch() { "$CHC" --port "$1" -q "$2" 2>&1; }   # ch TCP SQL
U1=clickhouse://127.0.0.1:$H1/nt
U2=clickhouse://127.0.0.1:$H2/nt

# ---------------------------------------------------------------- imports
run "$SQL" -v --to "$U1" "$A" "$B"
is_rc 0 "import of two traces into shard 1"
grep -q "ClickHouse: 2 trace(s) imported, 0 there already" "$T/err" ||
	{ fail "shard 1 reports two traces imported"; diag "$(cat "$T/err")"; }
run "$SQL" -v --label service=gallery --label deploy=v2 --to "$U2" "$C"
is_rc 0 "import of one trace into shard 2, with labels"
is "$(ch "$T2" "SELECT label_values[indexOf(label_keys, 'service')], label_values[indexOf(label_keys, 'deploy')] FROM nt.traces" | tr '\t' ' ')" \
	"gallery v2" "the labels are stored with the trace"

for t in traces sessions threads stacks samples events; do
	for port in "$T1" "$T2"; do
		ch "$port" "CREATE TABLE IF NOT EXISTS nt.${t}_all AS nt.$t ENGINE = Distributed(nt_cluster, nt, $t)" >"$T/ddl"
		[ -s "$T/ddl" ] && { fail "Distributed table ${t}_all"; diag "$(cat "$T/ddl")"; }
	done
done
is "$(ch "$T1" "SELECT count() FROM nt.traces_all")" 3 "the Distributed table sees the three traces of both shards"

# ---------------------------------------------------------------- cross-trace = sum of SQLite
# per category: samples and weight (ns, rounded)
: >"$T/lite.cat"
for f in "$A" "$B" "$C"; do
	"$SQL" "$f" --csv -q "SELECT category, COUNT(*), SUM(weight_ns) FROM samples GROUP BY category" |
		sed 1d >>"$T/lite.cat"
done
awk -F, '{ n[$1] += $2; w[$1] += $3 } END { for (c in n) printf "%s %d %.0f\n", c, n[c], w[c] }' \
	"$T/lite.cat" | sort >"$T/want.cat"
ch "$T1" "SELECT category, count(), sum(weight_ns) FROM nt.samples_all
	WHERE trace_id GLOBAL IN (SELECT trace_id FROM nt.traces_all) GROUP BY category" |
	awk -F'\t' '{ printf "%s %d %.0f\n", $1, $2, $3 }' | sort >"$T/got.cat"
awk 'NR == FNR { n[$1] = $2; w[$1] = $3; next }
	{ d = $3 - w[$1]; if (d < 0) d = -d; if ($2 != n[$1] || d > 1) bad++; seen++ }
	END { exit !(bad == 0 && seen == length(n) && seen > 0) }' "$T/want.cat" "$T/got.cat" &&
	pass "samples and weight per category across the shards equal the SQLite sums ($(tr '\n' ' ' <"$T/got.cat"))" ||
	{ fail "samples and weight per category across the shards equal the SQLite sums"; diag "want:
$(cat "$T/want.cat")
got:
$(cat "$T/got.cat")"; }

# per leaf function: samples (every leaf, sorted)
: >"$T/lite.leaf"
for f in "$A" "$B" "$C"; do
	# one CSV field with a tab inside: quoted (names hold commas), quotes doubled
	"$SQL" "$f" --csv -q "SELECT fr.name || char(9) || COUNT(*) FROM samples s
		JOIN callsites c ON c.id = s.callsite_id JOIN frames fr ON fr.id = c.frame_id
		GROUP BY fr.name" | sed 1d | sed 's/^"//; s/"$//; s/""/"/g' >>"$T/lite.leaf"
done
awk -F'\t' '{ n[$1] += $2 } END { for (k in n) print k "\t" n[k] }' "$T/lite.leaf" | sort >"$T/want.leaf"
ch "$T1" "SELECT leaf, count() FROM nt.samples_all GLOBAL ANY INNER JOIN
	(SELECT trace_id, callsite_id, leaf FROM nt.stacks_all) USING (trace_id, callsite_id)
	WHERE trace_id GLOBAL IN (SELECT trace_id FROM nt.traces_all) GROUP BY leaf" |
	sort >"$T/got.leaf"
if [ -s "$T/want.leaf" ] && cmp -s "$T/want.leaf" "$T/got.leaf"; then
	pass "samples per leaf function across the shards equal the SQLite sums ($(wc -l <"$T/got.leaf") functions)"
else
	fail "samples per leaf function across the shards equal the SQLite sums"
	diag "$(diff "$T/want.leaf" "$T/got.leaf" | head -n 20)"
fi

# per trace: sessions, threads, events as the SQLite store has them
for f in "$A" "$B" "$C"; do
	want=$("$SQL" "$f" --csv -q "SELECT (SELECT samples FROM sessions), (SELECT COUNT(*) FROM threads), (SELECT COUNT(*) FROM events)" | sed 1d)
	got=$(ch "$T1" "SELECT (SELECT any(samples) FROM nt.sessions_all WHERE file = '$f'),
		(SELECT count() FROM nt.threads_all WHERE trace_id GLOBAL IN (SELECT trace_id FROM nt.sessions_all WHERE file = '$f')),
		(SELECT count() FROM nt.events_all WHERE trace_id GLOBAL IN (SELECT trace_id FROM nt.sessions_all WHERE file = '$f'))" | tr '\t' ',')
	is "$got" "$want" "$(basename "$f"): samples, threads and events as in SQLite"
done
# stack frames: the deepest stack of trace A, root first, equals SQLite's callsite_stacks
want=$("$SQL" "$A" --csv -q "SELECT depth, stack FROM callsite_stacks cs WHERE cs.callsite_id IN (SELECT callsite_id FROM samples) ORDER BY depth DESC, stack LIMIT 1" | sed 1d | tr -d '"')
got=$(ch "$T1" "SELECT depth, arrayStringConcat(frames, ';') AS st FROM nt.stacks WHERE trace_id IN
	(SELECT trace_id FROM nt.sessions WHERE file = '$A') ORDER BY depth DESC, st LIMIT 1" | tr '\t' ',')
is "$got" "$want" "the deepest stack of a trace: its frames root first, as SQLite's callsite_stacks"

# ---------------------------------------------------------------- idempotent
before=$(ch "$T1" "SELECT count() FROM nt.samples")
run "$SQL" -v --to "$U1" "$A"
is_rc 0 "importing a trace again"
grep -q "ClickHouse: 0 trace(s) imported, 1 there already" "$T/err" &&
	pass "a complete trace is not imported twice" ||
	{ fail "a complete trace is not imported twice"; diag "$(cat "$T/err")"; }
is "$(ch "$T1" "SELECT count() FROM nt.samples")" "$before" "no sample row added by the second import"

# ---------------------------------------------------------------- cut mid-import, retry
ch_cut "$T/cut.port" "$H2" "nt.events%20FORMAT" 20000
run "$SQL" -v --to "clickhouse://127.0.0.1:$CP/nt" "$B"
is_rc 3 "an import whose connection breaks mid-INSERT fails with exit 3"
grep -q "ClickHouse" "$T/err" && pass "the failure names ClickHouse ($(grep ClickHouse "$T/err" | head -n 1))" ||
	{ fail "the failure names ClickHouse"; diag "$(cat "$T/err")"; }
kill "$cutpid" 2>/dev/null
idB=$(ch "$T2" "SELECT trace_id FROM nt.sessions WHERE file = '$B' LIMIT 1")
is "$(ch "$T2" "SELECT count() FROM nt.traces WHERE trace_id = '$idB'")" 0 \
	"the broken import marked no trace complete"
stray=$(ch "$T2" "SELECT count() FROM nt.samples WHERE trace_id = '$idB'")
[ "$stray" -gt 0 ] && pass "the broken import left rows behind ($stray samples), as a real failure may" ||
	fail "the broken import left rows behind (precondition of the retry test)"
run "$SQL" -v --to "$U2" "$B"
is_rc 0 "the retry succeeds"
grep -q "ClickHouse: 1 trace(s) imported" "$T/err" && pass "the retry imports the trace" ||
	{ fail "the retry imports the trace"; diag "$(cat "$T/err")"; }
want=$("$SQL" "$B" --csv -q "SELECT (SELECT COUNT(*) FROM samples), (SELECT COUNT(*) FROM events), (SELECT COUNT(*) FROM threads)" | sed 1d)
got=$(ch "$T2" "SELECT (SELECT count() FROM nt.samples WHERE trace_id = '$idB'),
	(SELECT count() FROM nt.events WHERE trace_id = '$idB'),
	(SELECT count() FROM nt.threads WHERE trace_id = '$idB')" | tr '\t' ',')
is "$got" "$want" "after the retry: exactly the SQLite rows, no duplicate (samples, events, threads)"

# ---------------------------------------------------------------- bad input, no server
# a trace cut short: imported as far as it goes, marked truncated as in SQLite
head -c 40000 "$C" >"$T/cut.nettrace"
run "$SQL" --to "$U1" "$T/cut.nettrace"
is_rc 0 "a truncated trace imports what it holds"
grep -q "warning: stream truncated" "$T/err" && pass "with the reader's warning" || fail "with the reader's warning"
is "$(ch "$T1" "SELECT truncated, samples FROM nt.sessions WHERE file = '$T/cut.nettrace'" | tr '\t' ,)" \
	"$("$SQL" "$T/cut.nettrace" --csv -q "SELECT truncated, samples FROM sessions" 2>/dev/null | sed 1d)" \
	"its session is marked truncated, with the samples SQLite has"
# a trace that is not one: nothing reaches ClickHouse
{ printf 'Nettrace'; head -c 30000 "$C" | tail -c +9; } | tr 'F' 'G' >"$T/bad.nettrace"
n0=$(ch "$T1" "SELECT count() FROM nt.traces")
s0=$(ch "$T1" "SELECT count() FROM nt.samples")
run "$SQL" --to "$U1" "$T/bad.nettrace"
is_rc 2 "a malformed trace fails with exit 2"
is "$(ch "$T1" "SELECT count() FROM nt.traces") $(ch "$T1" "SELECT count() FROM nt.samples")" "$n0 $s0" \
	"a malformed trace imports nothing"
run "$SQL" --to "clickhouse://127.0.0.1:1/nt" "$A"
is_rc 3 "an unreachable server: exit 3"
grep -q "cannot connect to ClickHouse at 127.0.0.1:1" "$T/err" && pass "the message names the address" ||
	{ fail "the message names the address"; diag "$(cat "$T/err")"; }
# hostile servers: garbage, a bad chunk size, an HTTP error without body, silence
hostile() { # hostile REPLY EXIT MESSAGE
	rm -f "$T/h.port"
	"$CUT" "$T/h.port" 0 "$1" 0 120 &
	hp=$!
	i=0; while [ ! -s "$T/h.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	run "$SQL" --to "clickhouse://127.0.0.1:$(cat "$T/h.port")/nt" "$A"
	kill "$hp" 2>/dev/null; wait "$hp" 2>/dev/null
	if [ "$rc" -eq "$2" ] && grep -q "$3" "$T/err"; then
		pass "a server answering '$(printf %s "$1" | cut -c1-30)': exit $2, '$3'"
	else
		fail "a server answering '$(printf %s "$1" | cut -c1-30)': exit $2, '$3' (exit $rc)"
		diag "$(cat "$T/err")"
	fi
}
hostile 'SSH-2.0-OpenSSH_9.2\r\n' 2 "not an HTTP reply"
hostile 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffff\r\nab' 2 "bad chunk header"
hostile 'HTTP/1.1 500 Oops\r\n\r\n' 3 "ClickHouse error (HTTP 500)"
hostile '' 3 "closed the connection without a reply"
run "$SQL" --to "postgres://x" "$A"
is_rc 1 "a URL that is not ClickHouse's is a usage error"
run "$SQL" --to "$U1" - <"$A"
is_rc 1 "--to refuses standard input (the id is a hash of the file)"
done_testing
