#!/bin/sh
# SPDX-License-Identifier: MIT
# t507-record-samplepoint.sh - samplepoint mode (doc/sampler-design.md §7 test 6):
#  - nts-sp split calls nts_samplepoint() after each equal chunk of work, 7 chunks in
#    work_a for 3 in work_b: the share of samples in work_a is 0.7 within delta 0.02 +
#    4 sigma; the samples come at the session's interval: rounds + missed within 20% of
#    the wall time over the interval;
#  - nts-sp alt alternates two equal functions with one samplepoint each: a fixed visit
#    count would always stop in the same one; the randomised count gives 50% within
#    delta 0.02 + 4 sigma;
#  - nts-sp-instr, the same program built with -finstrument-functions: the samples come
#    from the hooks' shadow stack (work_a or work_b above main) with the same 70/30 split;
#  - nettrace-record --samplepoint: SIGINT to nettrace-record, and SIGINT to the command
#    itself (a terminal's ^C), finalize the trace at the next samplepoint check and the
#    command dies of the signal; a command that never visits a samplepoint still ends
#    within seconds, and nettrace-record says its trace was not finalized (exit 3).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
need_tool "$SP"
need_tool "$SP_INSTR"

# check_share PROG MODE FUNC P DESC: records PROG MODE at 2 ms and checks FUNC's share
# among the samples in work_a/work_b (split) or alt_a/alt_b (alt).
check_share() {
	prog=$1 mode=$2 func=$3 p=$4 desc=$5
	case $mode in split) pat='(work_a|work_b)' ;; *) pat='(alt_a|alt_b)' ;; esac
	for secs in 1.5 3; do
		F=$T/sp-$mode.nettrace
		start=$(date +%s%N)
		run "$prog" "$F" "$secs" 2 "$mode"
		end=$(date +%s%N)
		samples "$F" "$T/s"
		n=$(awk -v p="$pat" '$6 ~ "(^|;)" p ";"' "$T/s" | wc -l)
		k=$(awk -v f="$func" -v p="$pat" '{ split($6, fr, ";");
			for (i = 1; i in fr; i++) if (fr[i] ~ "^" p "$") { if (fr[i] == f) c++; break } }
			END { print c + 0 }' "$T/s")
		res=$(within "$p" "$n" 0.02 "$k") && break
		diag "$desc, $secs s: $res; running once more, twice as long"
	done
	is_rc 0 "$desc: ran"
	if within "$p" "$n" 0.02 "$k" >/dev/null; then pass "$desc: $res"; else fail "$desc: $res"; fi
}

check_share "$SP" split work_a 0.7 "samplepoints: work_a has 70%"
rounds=$(sed -n 's/.*rounds=\([0-9]*\).*/\1/p' "$T/out")
missed=$(sed -n 's/.*missed=\([0-9]*\).*/\1/p' "$T/out")
awk -v r="$rounds" -v m="$missed" -v w="$(( (end - start) / 1000 ))" 'BEGIN {
	e = w / 2000; printf "rounds %d + missed %d for %.0f intervals\n", r, m, e
	exit !(r + m >= 0.8 * e && r + m <= 1.2 * e) }' >"$T/c"
if [ $? = 0 ]; then pass "samplepoints: the rate follows the interval: $(cat "$T/c")"; else
	fail "samplepoints: the rate follows the interval: $(cat "$T/c")"; fi
is "$(summary_get "$F" mode)" "samplepoint" "SessionSettings says samplepoint"
is "$(summary_get "$F" end_tag)" "1" "the trace is finished"
main_ok=$(awk '$6 ~ /;main;/' "$T/s" | wc -l)
all=$(wc -l <"$T/s")
if [ "$all" -gt 0 ] && [ $((main_ok * 100)) -ge $((all * 99)) ]; then
	pass "the stacks unwound from the samplepoint reach main ($main_ok of $all)"
else
	fail "the stacks unwound from the samplepoint reach main ($main_ok of $all)"
	diag "$(head -n 3 "$T/s")"
fi
check_share "$SP" alt alt_a 0.5 "samplepoints: alternating functions are not aliased"
check_share "$SP_INSTR" split work_a 0.7 "-finstrument-functions: work_a has 70%"
shadow=$(awk '$6 ~ /^(work_a|work_b|sp_leaf)(;|$)/' "$T/s" | wc -l)
all=$(wc -l <"$T/s")
if [ "$all" -gt 0 ] && [ $((shadow * 100)) -ge $((all * 95)) ]; then
	pass "-finstrument-functions: the leaf is an instrumented function ($shadow of $all)"
else
	fail "-finstrument-functions: the leaf is an instrumented function ($shadow of $all)"
	diag "$(head -n 3 "$T/s")"
fi

# ---- nettrace-record --samplepoint: stopping
# a background job of a script starts with SIGINT ignored, and CMD would inherit that
if env --default-signal=INT true 2>/dev/null; then dflt="env --default-signal=INT"; else dflt=""; fi
# stop_case DESC WHO PROG ARGS...: records PROG under --samplepoint, sends SIGINT after
# 1 s to nettrace-record (WHO=record) or to the command (WHO=cmd); sets rc and secs
stop_case() {
	desc=$1 who=$2
	shift 2
	F=$T/stop.nettrace
	rm -f "$F"
	start=$(date +%s)
	$dflt "$RECORD" --samplepoint -i 2 -o "$F" -- "$@" >/dev/null 2>"$T/stop.err" &
	rpid=$!
	sleep 1
	if [ "$who" = cmd ]; then pkill -INT -P "$rpid" || kill -INT "$rpid"; else kill -INT "$rpid"; fi
	wait "$rpid"
	rc=$?
	secs=$(($(date +%s) - start))
}
if [ -n "$dflt" ]; then
	for who in record cmd; do
		stop_case "SIGINT to $who" "$who" "$SP" - 60 2 split
		is "$rc" "130" "--samplepoint, SIGINT to $who: exit 130 (CMD died of SIGINT)"
		is "$(summary_get "$F" end_tag):$(summary_get "$F" truncated)" "1:0" \
			"--samplepoint, SIGINT to $who: the trace is finalized"
		n=$(summary_get "$F" samples)
		if [ "${n:-0}" -gt 100 ]; then pass "--samplepoint, SIGINT to $who: $n samples"; else
			fail "--samplepoint, SIGINT to $who: $n samples"; fi
		if [ "$secs" -lt 20 ] && grep -q "killed by signal 2" "$T/stop.err"; then
			pass "--samplepoint, SIGINT to $who: the command died of it ($secs s)"
		else
			fail "--samplepoint, SIGINT to $who: the command died of it ($secs s)"
			diag "$(cat "$T/stop.err")"
		fi
	done
	stop_case "no samplepoint" record sleep 60
	is "$rc" "3" "--samplepoint, a command without samplepoints: exit 3"
	if [ "$secs" -lt 20 ] && grep -q "not finalized" "$T/stop.err"; then
		pass "--samplepoint, a command without samplepoints: ends and says the trace is not finalized ($secs s)"
	else
		fail "--samplepoint, a command without samplepoints: ends and says the trace is not finalized ($secs s)"
		diag "$(cat "$T/stop.err")"
	fi
else
	skip "--samplepoint: SIGINT cases" "env --default-signal missing"
fi
done_testing
