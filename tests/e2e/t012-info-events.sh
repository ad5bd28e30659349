#!/bin/sh
# SPDX-License-Identifier: MIT
# t012-info-events.sh - "nettrace-info --events": the three ExecutionCheckpoint events of
# the 582-byte .NET 6 trace as EXPECTED.md section 2 lists them (golden file plus explicit
# field checks), --stacks and --limit, and timestamp order over whole traces.
. "$top_srcdir/tests/e2e/lib.sh"
need_tool "$INFO"
cd "$TRACES" || exit 1

# --- the executioncheckpoints trace (EXPECTED.md section 2) ---
run "$INFO" --events "$CHECKPOINTS"
is_rc 0 "--events $CHECKPOINTS exits 0"
is_empty "$T/err" "--events $CHECKPOINTS: nothing on stderr"
golden "$T/out" "$EXPECTED/t012-info-events-checkpoints.out" "--events $CHECKPOINTS equals its golden file"
cp "$T/out" "$T/checkpoints"
is "$(wc -l <"$T/checkpoints" | tr -d ' ')" 3 "3 events"

# seq, header timestamp, name and checkpoint timestamp of each event, from EXPECTED.md.
# Time since sync: (header ts - SyncTimeQPC 11111925758331) / 10 MHz.
n=0
while read -r seq ts name cts rel; do
	n=$((n + 1))
	line=$(sed -n "${n}p" "$T/checkpoints")
	desc="event $n: seq $seq, ts $ts, $name, checkpoint $cts"
	case $line in
	"[+$rel] ts=$ts Microsoft-Windows-DotNETRuntimeRundown/"*"(id=300, v=0) tid=25112 ctid=25112 seq=$seq proc=- stack=0 frames {"*"\"Name\":\"$name\""*"\"Timestamp\":$cts}")
		pass "$desc" ;;
	*)
		fail "$desc"
		diag "$line" ;;
	esac
done <<'END'
1 11111943296237 RuntimeInit 11111925598665 1.753790600s
2 11111943296409 RuntimeSuspend 11111925877436 1.753807800s
3 11111943296514 RuntimeResumed 11111925880297 1.753818300s
END

run "$INFO" --events --limit 2 "$CHECKPOINTS"
is_rc 0 "--events --limit 2 exits 0"
head -n 2 "$T/checkpoints" >"$T/want"
same "$T/out" "$T/want" "--events --limit 2 prints the first 2 events"
run "$INFO" --events --limit 0 "$CHECKPOINTS"
is "$rc:$(wc -c <"$T/out" | tr -d ' ')" "0:0" "--events --limit 0 prints nothing"

# --- stacks: IPs leaf first, one line each below the event ---
f=perfview/mixed_managed_external_samples.nettrace
run "$INFO" --events --stacks --limit 12 "$f"
is_rc 0 "--events --stacks --limit 12 $f exits 0"
golden "$T/out" "$EXPECTED/t012-info-events-stacks.out" "--events --stacks --limit 12 $f equals its golden file"
awk '/^\[/ { n++; s += substr($0, index($0, " stack=") + 7) + 0 } /^    #/ { f++ }
	END { exit !(n == 12 && s > 0 && s == f) }' "$T/out"
is $? 0 "--stacks prints one line per frame (12 events)"

# --- timestamp order and counts over whole traces ---
for f in perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace sentry-dotnet/sample.nettrace; do
	want=$(grep '^events ' "$EXPECTED/t011-info-facts/${f%.nettrace}.facts" | cut -d' ' -f2)
	run "$INFO" --events "$f"
	is_rc 0 "--events $f exits 0"
	awk -v want="$want" '
		{ ts = $2; sub(/^ts=/, "", ts); ts += 0 }
		NR > 1 && ts < last { bad++ }
		{ last = ts; n++ }
		END { if (bad || n != want) { print "# " n " events (want " want "), " bad + 0 " out of order"; exit 1 } }' "$T/out"
	is $? 0 "--events $f: all $want events, in non-decreasing timestamp order"
	case $f in *objver4*)
		# EXPECTED.md section 2 (V4EventPipeFileHasProcNumbers): processors 0..3 all appear.
		procs=$(grep -o ' proc=[^ ]*' "$T/out" | sort -u | tr -d '\n')
		is "$procs" " proc=0 proc=1 proc=2 proc=3" "--events $f: processor numbers 0..3"
	esac
done
done_testing
