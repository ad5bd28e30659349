#!/bin/sh
# SPDX-License-Identifier: MIT
# t013-info-stdin.sh - FILE "-" reads standard input: through a pipe, the --json summary
# (the symbol coverage included: it comes from the same single read) and the --events
# listing equal those of the file itself (only the "file" member differs, and it must be
# "-").
. "$top_srcdir/tests/e2e/lib.sh"
need_tool "$INFO"
cd "$TRACES" || exit 1

for f in "$CHECKPOINTS" perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace "$TRUNCATED"; do
	run "$INFO" --json "$f"
	if grep -q '^  "symbols": ' "$T/out"; then
		pass "$f: --json has a symbols member"
	else
		fail "$f: --json has a symbols member"
	fi
	sed -e 's/^  "file": .*/  "file": "-",/' "$T/out" >"$T/want"
	cp "$T/err" "$T/want-err"
	rcf=$rc
	cat "$f" | "$INFO" --json - >"$T/out" 2>"$T/err"
	rc=$?
	is "$rc" "$rcf" "cat $f | --json -: same exit code ($rcf)"
	same "$T/out" "$T/want" "cat $f | --json -: same JSON, with \"file\": \"-\""
	sed "s|: $f: |: -: |" "$T/want-err" >"$T/want-err2"
	same "$T/err" "$T/want-err2" "cat $f | --json -: same diagnostics, naming \"-\""
done

run "$INFO" --events "$CHECKPOINTS"
cp "$T/out" "$T/want"
"$INFO" --events - <"$CHECKPOINTS" >"$T/out" 2>"$T/err"
rc=$?
is_rc 0 "--events - <$CHECKPOINTS exits 0"
same "$T/out" "$T/want" "--events - <$CHECKPOINTS equals --events $CHECKPOINTS"
done_testing
