#!/bin/sh
# SPDX-License-Identifier: MIT
# t500-record-basic.sh - nettrace-record end to end: usage errors and exit codes, a trace
# with everything doc/format/sampler-events.md promises (ThreadSample v1, ModuleMap with
# build-id, ThreadName, SessionSettings, SamplerStats, the end of the stream), the same
# through environment variables without nettrace-record, every tool of the project reads
# it, a program killed before the end leaves a readable prefix, and a command's exit
# status is reported and passed on.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"

# ---- the library: only nts_* exported (sampler/sampler.map), and dlclose and the exec
# functions under glibc's versions (the interposers), a SONAME, and no sanitizer runtime among its dependencies
# (it is preloaded into programs built without one)
if command -v nm >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1; then
	other=$(nm -D --defined-only "$SAMPLER_LIB" | awk '$3 !~ /^nts_[a-z_]*@@NTS_1\.0$/ &&
		$3 != "NTS_1.0" && $3 !~ /^GLIBC_2\.(2\.5|11|34)$/ &&
		$3 !~ /^(dlclose|execve|execv|execvp|execvpe|execl|execlp|execle|fexecve|execveat|_exit|_Exit)@@?GLIBC_2\.(2\.5|11|34)$/')
	is "$other" "" "libnettrace-sampler.so exports only nts_* (NTS_1.0) and its interposers"
	n=$(nm -D --defined-only "$SAMPLER_LIB" | grep -c ' T nts_')
	if [ "$n" -ge 8 ]; then pass "it exports the API ($n functions)"; else fail "it exports the API ($n)"; fi
	readelf -d "$SAMPLER_LIB" >"$T/dyn"
	if grep -q 'SONAME.*libnettrace-sampler\.so\.0' "$T/dyn"; then pass "SONAME libnettrace-sampler.so.0"
	else fail "SONAME libnettrace-sampler.so.0"; fi
	is "$(grep NEEDED "$T/dyn" | grep -c -e asan -e ubsan -e nettrace)" "0" \
		"it needs neither a sanitizer runtime nor libnettrace.so"
else
	skip "library exports" "nm or readelf missing (binutils)"
fi

# ---- usage errors: exit 1, one line and the hint
run "$RECORD"
is_rc 1 "no command: usage error"
is "$(head -n 1 "$T/err")" "nettrace-record: no command to run" "no command: message"
is "$(sed -n 2p "$T/err")" "Try 'nettrace-record --help'." "no command: hint"
run "$RECORD" -F 0 -- true
is_rc 1 "-F 0 is refused"
is "$(head -n 1 "$T/err")" "nettrace-record: bad frequency '0' (1 to 1000 Hz)" "-F 0: message"
run "$RECORD" -i 1001 -- true
is_rc 1 "-i 1001 is refused"
run "$RECORD" -F 100 -i 10 -- true
is_rc 1 "-F and -i together are refused"
run "$RECORD" --bogus -- true
is "$rc:$(head -n 1 "$T/err")" "1:nettrace-record: unrecognized option '--bogus'" \
	"unknown option: exit 1 and message"
run "$RECORD" -o
is "$rc:$(head -n 1 "$T/err")" "1:nettrace-record: option '-o' requires an argument" \
	"missing argument: exit 1 and message"

# ---- a command that cannot run: exit 3
run "$RECORD" -o "$T/none.nettrace" -- "$T/no-such-program"
is_rc 3 "a missing command: system error"
is "$(cat "$T/err")" "nettrace-record: cannot run '$T/no-such-program': No such file or directory" \
	"a missing command: message"

# ---- options after CMD belong to CMD ('+' in the option string)
run "$RECORD" -q -o "$T/ls.nettrace" -- ls -d "$T"
is_rc 0 "CMD's own options are passed to it"
is "$(cat "$T/out")" "$T" "CMD's output is untouched"

# ---- a normal recording
F=$T/split.nettrace
run "$RECORD" -F 500 -o "$F" -- "$WORK" split 0.4
is_rc 0 "record nts-work split at 500 Hz"
if grep -q "^nettrace-record: [0-9][0-9]* samples, file complete: $F (" "$T/err"; then
	pass "summary line on stderr"
else
	fail "summary line on stderr"
	diag "$(cat "$T/err")"
fi
"$CHECK" summary "$F" >"$T/sum"
get() { sed -n "s/^$1=//p" "$T/sum"; }
is "$(get end_tag):$(get truncated)" "1:0" "the stream is finished"
is "$(get sample_version)" "1" "ThreadSample version 1"
is "$(get interval_ns):$(get schedule):$(get mode)" "2000000:fixed:signal" "SessionSettings"
is "$(get settings_events)" "1" "one SessionSettings event"
n=$(get samples)
if [ "$n" -ge 100 ]; then pass "samples recorded ($n)"; else fail "samples recorded ($n)"; fi
is "$(get stats_samples)" "$n" "SamplerStats counts every sample"
# nettrace-info reports the sampler's own account: settings and the last statistics
run "$INFO" "$F"
want="Sampler:           libnettrace-sampler, signal mode, fixed schedule every 2.000 ms (seed $(get seed)), $(get backend) backend: $(get stats_samples) samples, $(get stats_dropped) dropped, $(get stats_late) late, $(get stats_missed) missed, "
case $(grep '^Sampler:' "$T/out") in
"$want"*" rounds/s") pass "nettrace-info: the Sampler line gives the settings and statistics" ;;
*) fail "nettrace-info: the Sampler line gives the settings and statistics"
	diag "want: $want..." "got:  $(grep '^Sampler:' "$T/out")" ;;
esac
run "$INFO" --json "$F"
if grep -q "\"sampler\": {\"mode\": \"signal\", \"schedule\": \"fixed\", \"interval_ns\": 2000000, \"seed\": $(get seed), \"backend\": \"$(get backend)\", \"samples\": $(get stats_samples), \"dropped\": $(get stats_dropped)," "$T/out"; then
	pass "nettrace-info --json: the sampler object"
else
	fail "nettrace-info --json: the sampler object"
	diag "$(grep '"sampler"' "$T/out")"
fi
case $(get main_module) in
*/nts-work) pass "the first ModuleMap is the program, by absolute path" ;;
*) fail "the first ModuleMap is the program, by absolute path"; diag "$(get main_module)" ;;
esac
is "$(get main_build_id)" "yes" "the program's build-id is recorded"
if [ "$(get modules)" -ge 3 ] && [ "$(get thread_names)" -ge 1 ]; then
	pass "ModuleMap for each executable mapping, ThreadName for the thread"
else
	fail "ModuleMap for each executable mapping, ThreadName for the thread"
	diag "$(cat "$T/sum")"
fi
samples "$F" "$T/s"
# (most samples; a loaded machine also catches the thread in its clock_gettime() call, or
# waiting for a CPU on its way back from it)
if awk '$6 ~ /^leaf_[ab];caller_[ab];run_split;main;/ { k++ } END { exit !(k > 0.5 * NR) }' \
	"$T/s"; then
	pass "native stacks, leaf first, down to main"
else
	fail "native stacks, leaf first, down to main"
	diag "$(head -n 5 "$T/s")"
fi

# ---- every tool of the project reads the trace
try_tool() {
	name=$(basename "$1")
	run "$@"
	shift
	if [ "$rc" = 0 ]; then
		pass "$name $*: exit 0"
	else
		fail "$name $*: exit 0"
		diag "exit $rc" "$(head -n 5 "$T/err")"
	fi
}
ntools=0
for bin in "$top_builddir"/tools/nettrace-*; do
	case $(basename "$bin") in *.*) continue ;; esac
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	ntools=$((ntools + 1))
	case $(basename "$bin") in
	nettrace-record | nettrace-collect) ntools=$((ntools - 1)) ;; # they record, not read
	nettrace-top) try_tool "$bin" --once "$F" ;;
	nettrace-info)
		try_tool "$bin" "$F"
		try_tool "$bin" --json "$F"
		try_tool "$bin" --events --stacks --limit 20 "$F" ;;
	nettrace-fold)
		try_tool "$bin" "$F"
		try_tool "$bin" --per-thread --unit samples "$F" ;;
	nettrace-tree)
		try_tool "$bin" "$F"
		try_tool "$bin" --per-thread --by-category "$F"
		try_tool "$bin" --invert "$F"
		try_tool "$bin" --top 5 "$F" ;;
	nettrace-flame)
		try_tool "$bin" "$F" -o "$T/f.svg"
		try_tool "$bin" --format speedscope "$F" -o "$T/f.json"
		try_tool "$bin" --format pprof "$F" -o "$T/f.pb.gz" ;;
	nettrace-sql)
		try_tool "$bin" "$F" -o "$T/f.sqlite"
		try_tool "$bin" "$F" -q "SELECT count(*) FROM sqlite_master" ;;
	*) try_tool "$bin" "$F" ;;
	esac
done
if [ "$ntools" -ge 3 ]; then pass "$ntools tools read the trace"; else fail "tools read the trace"; fi

# ---- the same through environment variables, without nettrace-record
E=$T/env.nettrace
LD_PRELOAD=$SAMPLER_LIB NETTRACE_OUTPUT=$E NETTRACE_INTERVAL=3 NETTRACE_SCHEDULE=poisson \
	NETTRACE_SEED=1234 "$WORK" split 0.2 >/dev/null 2>"$T/env.err"
is "$(summary_get "$E" end_tag):$(summary_get "$E" schedule):$(summary_get "$E" seed)" \
	"1:poisson:1234" "LD_PRELOAD and NETTRACE_* record a program"
is "$(summary_get "$E" interval_ns)" "3000000" "NETTRACE_INTERVAL sets the interval"

# ---- a command's failure is reported and passed on, the recording is still good
# (false calls exit(1); t661 has the other ways a program ends)
run "$RECORD" -q -o "$T/false.nettrace" -- false
is_rc 1 "CMD exiting with 1: exit 1 (CMD's status)"
is "$(summary_get "$T/false.nettrace" end_tag)" "1" "CMD exiting with 1: the trace is complete"
is "$(cat "$T/err")" "nettrace-record: note: 'false' exited with status 1" "CMD's status is reported"

# ---- killed without warning: the blocks written so far are readable
K=$T/killed.nettrace
"$RECORD" -q -F 200 -o "$K" -- "$WORK" split 30 >/dev/null 2>"$T/k.err" &
rpid=$!
sleep 1.5
pkill -KILL -P "$rpid" 2>/dev/null || kill -KILL "$rpid"
wait "$rpid"
krc=$?
is "$krc" "3" "CMD killed by SIGKILL: exit 3"
if grep -q "the trace was not finalized" "$T/k.err"; then
	pass "CMD killed by SIGKILL: says the trace is not finalized"
else
	fail "CMD killed by SIGKILL: says the trace is not finalized"
	diag "$(cat "$T/k.err")"
fi
run "$INFO" "$K"
ks=$(sed -n 's/^Samples: *\([0-9]*\).*/\1/p' "$T/out")
if [ "$rc" = 0 ] && grep -q '^Truncated: *yes' "$T/out" && [ "${ks:-0}" -gt 0 ]; then
	pass "the prefix of a killed recording reads, with its samples ($ks)"
else
	fail "the prefix of a killed recording reads, with its samples"
	diag "rc $rc" "$(cat "$T/out" "$T/err" | head -n 20)"
fi

done_testing
