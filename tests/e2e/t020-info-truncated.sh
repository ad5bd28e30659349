#!/bin/sh
# SPDX-License-Identifier: MIT
# t020-info-truncated.sh - a truncated trace is summarised from what is complete, then one
# warning line "nettrace-info: FILE: at byte N (0xN): warning: ..." follows on stderr and
# the exit code is 0. The real truncated trace stops inside its last EventBlock, which
# begins at byte 4170673; shorter cuts of the small trace exercise other places.
. "$top_srcdir/tests/e2e/lib.sh"
need_tool "$INFO"
cd "$TRACES" || exit 1

f=$TRUNCATED
warning="nettrace-info: $f: at byte 4170673 (0x3fa3b1): warning: stream truncated inside EventBlock (needs 5494 bytes, 3445 present); events before it were read"
for mode in "" --json --events; do
	run "$INFO" $mode "$f"
	is_rc 0 "${mode:-summary} $f exits 0"
	is "$(cat "$T/err")" "$warning" "${mode:-summary} $f: the warning line, with the offset"
	case $mode in
	"")
		grep -q '^Truncated: *yes, at byte 4170673 ' "$T/out"
		is $? 0 "summary $f says where it is truncated" ;;
	--json)
		flatten "$T/out" "$T/flat"
		is "$(grep -E '^(truncated|truncated_at|events|warning)	' "$T/flat" | cut -f2 | tr '\n' ' ')" \
			"19842 true 4170673 \"${warning#*warning: }\" " \
			"--json $f: \"truncated\": true, \"truncated_at\": 4170673, 19842 events, the warning" ;;
	--events)
		is "$(wc -l <"$T/out" | tr -d ' ')" 19842 "--events $f prints the 19842 complete events" ;;
	esac
done

# The warning comes after the data: with stdout and stderr on one pipe, it is the last line.
"$INFO" --events "$f" 2>&1 | tail -n 1 >"$T/last"
is "$(cat "$T/last")" "$warning" "--events $f: the warning follows the events"

# Cuts of the 582-byte trace: inside the EventBlock (no event), before the SPBlock (all
# three events), and just before the final end-of-stream tag.
for cut in 400:333:0 528:528:3 581:581:3; do
	n=${cut%%:*}; at=${cut#*:}; at=${at%:*}; nev=${cut##*:}
	head -c "$n" "$CHECKPOINTS" >"$T/cut.nettrace"
	run "$INFO" --events "$T/cut.nettrace"
	is_rc 0 "first $n bytes: exit 0"
	is "$(wc -l <"$T/out" | tr -d ' ')" "$nev" "first $n bytes: $nev events"
	hex=$(printf '%x' "$at")
	case $(cat "$T/err") in
	"nettrace-info: $T/cut.nettrace: at byte $at (0x$hex): warning: "*) pass "first $n bytes: warning at byte $at" ;;
	*) fail "first $n bytes: warning at byte $at"; diag "$(cat "$T/err")" ;;
	esac
done
done_testing
