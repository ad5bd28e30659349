#!/bin/sh
# SPDX-License-Identifier: MIT
# t030-info-errors.sh - exit codes and messages: bad input exits 2 with
# "nettrace-info: FILE: at byte N (0xN): message", an unreadable file 3, a usage error 1
# with "Try 'nettrace-info --help'."; nothing is printed on stdout for a failed file.
. "$top_srcdir/tests/e2e/lib.sh"
need_tool "$INFO"
cd "$TRACES" || exit 1

# err_is WANT_STDERR DESC
err_is() {
	is "$(cat "$T/err")" "$1" "$2"
}

# Not a nettrace file.
run "$INFO" EXPECTED.md
is_rc 2 "a text file exits 2"
err_is 'nettrace-info: EXPECTED.md: at byte 0 (0x0): not a nettrace file (no "Nettrace" magic)' \
	"a text file: the error line"
is_empty "$T/out" "a text file: nothing on stdout"

# Malformed inside the stream: the EventBlock's object tag 05 05 01 at byte 333 becomes 07.
cp "$CHECKPOINTS" "$T/bad.nettrace"
chmod u+w "$T/bad.nettrace"
printf '\007' | dd of="$T/bad.nettrace" bs=1 seek=333 conv=notrunc 2>/dev/null
for mode in "" --json --events; do
	run "$INFO" $mode "$T/bad.nettrace"
	is_rc 2 "${mode:-summary}: a malformed block exits 2"
	# The offset is exact; the wording after it belongs to the reader (its unit tests).
	case $(cat "$T/err") in
	"nettrace-info: $T/bad.nettrace: at byte 333 (0x14d): expected object start"*" found 07"*)
		pass "${mode:-summary}: a malformed block: the error line, at byte 333" ;;
	*)
		fail "${mode:-summary}: a malformed block: the error line, at byte 333"
		diag "$(cat "$T/err")" ;;
	esac
	is_empty "$T/out" "${mode:-summary}: a malformed block: nothing on stdout"
done

# A file that ends inside the Trace object is bad input, not a truncated trace.
head -c 100 "$CHECKPOINTS" >"$T/short.nettrace"
run "$INFO" "$T/short.nettrace"
is_rc 2 "a file ending inside the header exits 2"
err_is "nettrace-info: $T/short.nettrace: at byte 100 (0x64): file ends inside the Trace object (needed 49 bytes, have 47)" \
	"a file ending inside the header: the error line"

# Missing and unreadable files.
run "$INFO" "$T/missing.nettrace"
is_rc 3 "a missing file exits 3"
err_is "nettrace-info: cannot open $T/missing.nettrace: No such file or directory" \
	"a missing file: the error line"
run "$INFO" "$T"
is_rc 3 "a directory exits 3"

# Several files: the others are still summarised; the worst exit code wins.
run "$INFO" --json "$T/missing.nettrace" "$CHECKPOINTS" EXPECTED.md
is_rc 3 "missing + good + bad: exit 3"
flatten "$T/out" "$T/flat"
is "$(grep -c '^\[0\]\.events	3$' "$T/flat")" 1 "missing + good + bad: the good file is element 0 of the array"
is "$(wc -l <"$T/err" | tr -d ' ')" 2 "missing + good + bad: two error lines"

# Usage errors.
for args in "--bogus $CHECKPOINTS" "-x $CHECKPOINTS" "" "--json --events $CHECKPOINTS" \
	"--stacks $CHECKPOINTS" "--limit 5 $CHECKPOINTS" "--events --limit abc $CHECKPOINTS" \
	"--events --limit -1 $CHECKPOINTS" "--events --limit"; do
	run "$INFO" $args
	is_rc 1 "usage error '$args' exits 1"
	if [ "$(sed -n 2p "$T/err")" = "Try 'nettrace-info --help'." ] &&
		grep -q "^nettrace-info: " "$T/err" && [ "$(wc -l <"$T/err" | tr -d ' ')" = 2 ]; then
		pass "usage error '$args': one message and the --help hint"
	else
		fail "usage error '$args': one message and the --help hint"
		diag "$(cat "$T/err")"
	fi
	is_empty "$T/out" "usage error '$args': nothing on stdout"
done
run "$INFO" --bogus "$CHECKPOINTS"
err_is "nettrace-info: unrecognized option '--bogus'
Try 'nettrace-info --help'." "--bogus: the message"
run "$INFO"
err_is "nettrace-info: missing FILE operand
Try 'nettrace-info --help'." "no FILE: the message"

# A failed write to stdout is a system error.
if [ -w /dev/full ]; then
	"$INFO" "$CHECKPOINTS" >/dev/full 2>"$T/err"
	rc=$?
	is_rc 3 "writing to a full device exits 3"
else
	skip "writing to a full device exits 3" "no /dev/full"
fi
done_testing
