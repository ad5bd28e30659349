#!/bin/sh
# SPDX-License-Identifier: MIT
# t050-progress.sh - the progress line of long reads (tools/common.c tool_progress_*):
# with NETTRACE_PROGRESS=1 every reading tool prints one line per update on stderr
# ("PROG: FILE: N% of SIZE, RATE/s", percentages rising, at most 100), every
# NT_PROGRESS_EVENTS (16384) events; standard output is the same as without it; with
# NETTRACE_PROGRESS=0 (and by default when stderr is not a terminal) nothing is printed.
# Compressed input gives bytes without a percentage.
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
FLAME=$top_builddir/tools/nettrace-flame
need_tool "$INFO"
need_tool "$FOLD"
cd "$TRACES" || exit 1
f=perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace # 105540 events: 6 updates

for prog in "$INFO" "$FOLD" "$TREE" "$FLAME"; do
	name=$(basename "$prog")
	NETTRACE_PROGRESS=1 "$prog" "$f" >"$T/out1" 2>"$T/err1"
	NETTRACE_PROGRESS=0 "$prog" "$f" >"$T/out0" 2>"$T/err0"
	"$prog" "$f" >"$T/outd" 2>"$T/errd"
	same "$T/out1" "$T/out0" "$name: the same output with and without progress"
	awk -v p="$name" -v f="$f" '
		{ n++; pre = p ": " f ": "
		  if (index($0, pre) != 1) { bad = 1; next }
		  rest = substr($0, length(pre) + 1)
		  if (rest !~ /^[0-9]+% of [0-9.]+ [kMG]B, [0-9.]+ [kMG]B\/s$/) { bad = 1; next }
		  pct = rest + 0; if (pct < last || pct > 100) bad = 1; last = pct }
		END { exit !(n == 6 && !bad) }' "$T/err1"
	if [ $? = 0 ]; then pass "$name: 6 progress lines, rising percentages"; else
		fail "$name: 6 progress lines, rising percentages"; diag "$(cat "$T/err1")"; fi
	is "$(cat "$T/err0")" "" "$name: NETTRACE_PROGRESS=0: nothing on stderr"
	is "$(cat "$T/errd")" "" "$name: stderr not a terminal: nothing by default"
done

command -v gzip >/dev/null 2>&1 || { skip "compressed input: bytes only" "gzip missing"; done_testing; }
gzip -c "$f" >"$T/t.nettrace.gz"
NETTRACE_PROGRESS=1 "$FOLD" "$T/t.nettrace.gz" >/dev/null 2>"$T/errz"
if grep -q '%' "$T/errz" || ! grep -q "^nettrace-fold: $T/t.nettrace.gz: [0-9.]* [kMG]B, " "$T/errz"; then
	fail "compressed input: bytes only, no percentage"
	diag "$(cat "$T/errz")"
else
	pass "compressed input: bytes only, no percentage"
fi
done_testing
