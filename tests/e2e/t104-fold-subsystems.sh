#!/bin/sh
# SPDX-License-Identifier: MIT
# t104-fold-subsystems.sh - nettrace-fold --subsystem-frame and --subsystems: exact lines
# on the trace with known phases (mkphases.c), root and leaf frames with and without
# --category-frame; on every real trace, removing the subsystem frame gives back the
# plain output (same stacks, same weights) and the subsystem totals agree with
# nettrace-tree --by-subsystem; a subsystem file of one's own; errors.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FOLD"
need_tool "$TREE"
MKPHASES=$top_builddir/tests/mkphases
need_tool "$MKPHASES"
"$MKPHASES" "$T/phases.nettrace" || { echo "Bail out! mkphases failed"; exit 1; }

cd "$T" || exit 1
run "$FOLD" --subsystem-frame root --unit samples --no-module phases.nettrace
is_rc 0 "--subsystem-frame root exits 0"
cat >"$T/want" <<'END'
[json];App.Main();App.Compute();System.Text.Json.JsonSerializer.Serialize() 900
[storage];App.Main();App.Load();System.IO.File.ReadAllBytes() 900
[threading];App.Worker();System.Threading.Monitor.Enter() 500
END
same "$T/out" "$T/want" "phases: one tower per subsystem"
run "$FOLD" --subsystem-frame leaf --category-frame leaf --unit samples --no-module phases.nettrace
cat >"$T/want" <<'END'
App.Main();App.Compute();System.Text.Json.JsonSerializer.Serialize();[running];[json] 900
App.Main();App.Load();System.IO.File.ReadAllBytes();[running];[storage] 900
App.Worker();System.Threading.Monitor.Enter();[lock];[threading] 500
END
same "$T/out" "$T/want" "phases: leaf frames, the category then the subsystem"
run "$FOLD" --subsystem-frame root --category-frame root --per-thread --unit samples \
	--no-module phases.nettrace
cat >"$T/want" <<'END'
Thread (100);[json];[running];App.Main();App.Compute();System.Text.Json.JsonSerializer.Serialize() 900
Thread (100);[storage];[running];App.Main();App.Load();System.IO.File.ReadAllBytes() 900
Thread (101);[threading];[lock];App.Worker();System.Threading.Monitor.Enter() 500
END
same "$T/out" "$T/want" "phases: the thread, then the subsystem, then the category"
run "$FOLD" --subsystem-frame none --unit samples --no-module phases.nettrace
"$FOLD" --unit samples --no-module phases.nettrace >"$T/plain"
same "$T/out" "$T/plain" "--subsystem-frame none: the plain output"

printf 'compute *!App.Compute(*\n' >"$T/my.subsystems"
run "$FOLD" --subsystems "$T/my.subsystems" --subsystem-frame root --unit samples \
	--no-module phases.nettrace
cat >"$T/want" <<'END'
[compute];App.Main();App.Compute();System.Text.Json.JsonSerializer.Serialize() 900
[other];App.Main();App.Load();System.IO.File.ReadAllBytes() 900
[other];App.Worker();System.Threading.Monitor.Enter() 500
END
same "$T/out" "$T/want" "--subsystems FILE: its rules, [other] for the rest"

# Real traces: dropping the root frame gives back the plain output once lines merge, and
# the weight under each [subsystem] is its self in nettrace-tree --by-subsystem.
cd "$TRACES" || exit 1
for f in $TRACE_FILES; do
	"$FOLD" --unit samples "$f" >"$T/plain" 2>/dev/null
	run "$FOLD" --subsystem-frame root --unit samples "$f"
	awk '{ w = $NF; sub(/ [^ ]*$/, ""); if (index($0, ";")) sub(/^[^;]*;/, "")
		else $0 = "[empty stack]"; s[$0] += w }
		END { for (k in s) print k " " s[k] }' "$T/out" | LC_ALL=C sort >"$T/stripped"
	LC_ALL=C sort "$T/plain" >"$T/plain.sorted"
	same "$T/stripped" "$T/plain.sorted" "$f: without the subsystem frame, the plain stacks"
	bad=$(awk '{ split($0, a, ";"); if (a[1] !~ /^\[[A-Za-z0-9_][A-Za-z0-9_.+\/-]*\]/) print }' "$T/out")
	is "$bad" "" "$f: every line starts with a [subsystem] frame"
	awk '{ split($0, a, ";"); sub(/ [^ ]*$/, "", a[1]); w[a[1]] += $NF }
		END { for (k in w) print substr(k, 2, length(k) - 2) " " w[k] }' "$T/out" |
		LC_ALL=C sort >"$T/fold.sums"
	"$TREE" --by-subsystem --unit samples "$f" 2>/dev/null |
		awk '/  subsystem$/ { t = 1; next } t && $3 > 0 { print $NF " " $3 }' |
		LC_ALL=C sort >"$T/tree.sums"
	same "$T/fold.sums" "$T/tree.sums" "$f: weights per subsystem agree with nettrace-tree"
done

# Errors.
run "$FOLD" --subsystem-frame top "$PYRO"
is_rc 1 "--subsystem-frame top: exit 1"
is "$(head -n 1 "$T/err")" "nettrace-fold: bad --subsystem-frame 'top' (use leaf, root or none)" \
	"... names the bad value"
printf 'j$son *!A.*\n' >"$T/bad.subsystems"
run "$FOLD" --subsystems "$T/bad.subsystems" --subsystem-frame root "$PYRO"
is_rc 2 "a malformed subsystem file: exit 2"
case $(sed "s|$T/||" "$T/err") in
"nettrace-fold: bad.subsystems: at byte 0 (0x0): line 1: bad subsystem name 'j\$son'"*)
	pass "... with the file, the offset and the line" ;;
*) fail "... with the file, the offset and the line"; diag "$(cat "$T/err")" ;;
esac
run "$FOLD" --subsystems "$T/none.subsystems" --subsystem-frame root "$PYRO"
is_rc 3 "a missing subsystem file: exit 3"
printf 'json *!A.*\n' >"$T/ok.subsystems"
run "$FOLD" --subsystems "$T/ok.subsystems" "$PYRO"
is_rc 1 "--subsystems without --subsystem-frame: exit 1"
is "$(head -n 1 "$T/err")" "nettrace-fold: --subsystems needs --subsystem-frame leaf or root" \
	"... says so"
done_testing
