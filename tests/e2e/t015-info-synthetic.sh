#!/bin/sh
# SPDX-License-Identifier: MIT
# t015-info-synthetic.sh - what the real traces lack, on traces written by mktrace (V5 and
# V6; see mktrace.c for their content): lost events per capture thread, the V6 header and
# its extra blocks, a known processor number, and names that need escaping in JSON and
# sanitising on a terminal.
. "$top_srcdir/tests/e2e/lib.sh"
need_tool "$INFO"
MKTRACE=$top_builddir/tests/mktrace
need_tool "$MKTRACE"
cd "$T" || exit 1

for fmt in 5 6; do
	f=v$fmt.nettrace
	if ! "$MKTRACE" "$fmt" "$f" 2>"$T/err"; then
		fail "mktrace $fmt writes $f"
		diag "$(cat "$T/err")"
		continue
	fi
	run "$INFO" --json "$f"
	is_rc 0 "--json $f exits 0"
	is_empty "$T/err" "--json $f: nothing on stderr"
	if ! flatten "$T/out" "$T/flat"; then
		fail "--json $f: valid JSON"
		continue
	fi
	if [ "$fmt" = 6 ]; then
		want_version="version	6
minor_version	0
trace_object_version	0"
	else
		want_version="version	4
minor_version	0
trace_object_version	4"
	fi
	# The figures mktrace.c sets up, in the order of the JSON object.
	cat >"$T/want" <<END
$want_version
pointer_size	8
process_id	42
processors	2
qpc_frequency	1000000000
sync_qpc	1000
sync_time_utc	"2024-01-02T03:04:05.006Z"
expected_sampling_interval_ns	1000000
first_timestamp	1500
last_timestamp	2090
duration_ns	590
metadata_records	2
events	11
max_stack_depth	3
missing_stacks	0
samples.total	10
samples.error	4
samples.external	3
samples.managed	3
samples.other	0
samples.threads	2
samples.capture_threads	1
capture_threads	2
lost_events.total	3
lost_events.by_capture_thread[0].thread_id	7
lost_events.by_capture_thread[0].lost	3
truncated	false
providers[0].name	"Microsoft-DotNETCore-SampleProfiler"
providers[0].events[0].id	0
providers[0].events[0].version	0
providers[0].events[0].name	"ThreadSample"
providers[0].events[0].count	10
providers[1].name	"My\\"Prov\\\\\\u0001"
providers[1].events[0].id	7
providers[1].events[0].version	1
providers[1].events[0].name	"Evé"
providers[1].events[0].count	1
END
	awk -F '\t' 'NR == FNR { line[$1] = $0; next } ($1 in line) { print line[$1] }' \
		"$T/flat" "$T/want" >"$T/got"
	same "$T/got" "$T/want" "--json $f: header, samples, lost events, escaped names"
	if [ "$fmt" = 6 ]; then
		grep -q '^blocks\.other	[1-9]' "$T/flat"
		is $? 0 "--json $f: V6 thread blocks count as \"other\""
	fi

	run "$INFO" "$f"
	is_rc 0 "summary of $f exits 0"
	grep -q '^Lost events: *3 (3 on thread 7)$' "$T/out"
	is $? 0 "summary of $f: lost events per capture thread"
	# The control character of the provider name is shown as '?'.
	grep -q '^ *1  My"Prov\\?$' "$T/out"
	is $? 0 "summary of $f: control characters in names are replaced"

	run "$INFO" --events "$f"
	is_rc 0 "--events $f exits 0"
	is "$(head -n 1 "$T/out")" \
		'[+0.000000500s] ts=1500 My"Prov\?/Evé(id=7, v=1) tid=9 ctid=9 seq=1 proc=1 stack=0 frames {}' \
		"--events $f: first event (time since sync, known processor, sanitised name)"
	is "$(grep -c 'ThreadSample(id=0, v=0) tid=10[01] ctid=7 .* proc=- stack=3 frames {"Type":[012]}$' "$T/out")" 10 \
		"--events $f: 10 samples with 3-frame stacks"
	is "$(grep -o ' seq=[0-9]*' "$T/out" | tr -d '\n')" " seq=1 seq=1 seq=2 seq=3 seq=4 seq=5 seq=9 seq=10 seq=11 seq=12 seq=13" \
		"--events $f: sequence numbers, with the gap"
done
if [ -f v6.nettrace ]; then
	"$INFO" v6.nettrace | grep -q '^Format: *nettrace V6\.0$'
	is $? 0 "summary of v6.nettrace: format V6.0"
fi
done_testing
