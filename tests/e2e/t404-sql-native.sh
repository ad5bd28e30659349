#!/bin/sh
# SPDX-License-Identifier: MIT
# t404-sql-native.sh - native frames in the SQLite store: the synthetic trace of
# t110-fold-native.sh (tests/mknative: ModuleMap events for tests/unit/test-dwarf-prog, a
# "-g -O2" program, and samples in it) imported by nettrace-sql: the folded stacks are
# nettrace-fold's, each function of an address's inline chain is a frame of that address
# with its inline depth and source line, and the module keeps its path and build id.
. "$top_srcdir/tests/e2e/lib.sh"
SQL=$top_builddir/tools/nettrace-sql
FOLD=$top_builddir/tools/nettrace-fold
MK=$top_builddir/tests/mknative
BIN=$top_builddir/tests/unit/test-dwarf-prog
need_tool "$SQL"
need_tool "$FOLD"
need_tool "$MK"
need_tool "$BIN"
. "$E2E/lib-native.sh"
q() { "$SQL" "$T/n.db" --csv -q "$1" 2>&1 | tail -n +2; }

# The leaf: the address of dp_worker with the longest inline chain; the caller: main's
# return address after its call to dp_worker (as t110-fold-native.sh picks them).
set -- $(nm -S "$BIN" | awk '$4 == "dp_worker" { print $1, $2 }')
start=$1 size=$2
i=0
: >"$T/addrs"
while [ "$i" -lt $((0x$size)) ]; do
	printf '0x%x\n' $((0x$start + i)) >>"$T/addrs"
	i=$((i + 1))
done
"$A2L" -a -i -f -e "$BIN" <"$T/addrs" | awk '
	/^0x[0-9a-f]+$/ { if (a != "") print a, n; a = $0; n = 0; next }
	{ n++ } END { if (a != "") print a, n }' >"$T/chains"
leaf=$(awk '{ if ($2 > best) { best = $2; a = $1 } } END { print a }' "$T/chains")
depth=$(awk -v a="$leaf" '$1 == a { print $2 / 2 }' "$T/chains")
ret=$(objdump -d "$BIN" | awk '/<main>:$/ { m = 1; next } /^$/ { m = 0 }
	m && /call.*<dp_worker>/ { c = 1; next } c { sub(/:.*/, ""); sub(/^ +/, ""); print; exit }')
leafhex=$(printf '%x' $((leaf)))
run "$MK" "$T/native.nettrace" "$BIN" "$leafhex,$ret" "gone+2345,gone+3000,$ret" "nomodule,$ret"
is_rc 0 "mknative writes the trace"

run "$SQL" "$T/native.nettrace" -o "$T/n.db"
is_rc 0 "nettrace-sql imports it"
"$FOLD" --unit samples "$T/native.nettrace" >"$T/want"
q "SELECT stack || ' ' || COUNT(*) FROM sample_stacks GROUP BY stack ORDER BY stack" >"$T/got"
same "$T/got" "$T/want" "folded stacks = nettrace-fold's (inline chains, missing module, no module)"

# the leaf's runtime address (mknative maps the program at a base address of its own)
L="(SELECT address FROM frames WHERE name = 'test-dwarf-prog!dp_worker' AND inline_depth = 0)"
is "$(q "SELECT COUNT(*) FROM frames f JOIN modules m ON m.id = f.module_id WHERE m.name = 'test-dwarf-prog' AND f.address = $L")" \
	"$depth" "the leaf address gives $depth frames, one per function of its inline chain"
is "$(q "SELECT group_concat(inline_depth, ' ') FROM (SELECT inline_depth FROM frames WHERE address = $L ORDER BY inline_depth)")" \
	"$(awk -v n="$depth" 'BEGIN { for (i = 0; i < n; i++) printf "%s%d", i ? " " : "", i; print "" }')" \
	"their inline depths are 0..$((depth - 1))"
is "$(q "SELECT COUNT(*) FROM frames WHERE address = $L AND file LIKE '%/dwarf-prog.%' AND line > 0")" \
	"$depth" "each with its source file and line"
is "$(q "SELECT COUNT(*) FROM callsites c JOIN frames f ON f.id = c.frame_id WHERE f.address = $L AND c.depth = 1 + f.inline_depth")" \
	"$depth" "the chain is nested in the callsite tree, outermost function first"
is "$(q "SELECT printf('%x', $L - (SELECT address FROM frames WHERE name = 'test-dwarf-prog!main') + $((0x$ret)))")" \
	"$leafhex" "frames.address is the sampled address (here relative to the caller's)"
is "$(q "SELECT COUNT(*) FROM modules WHERE name = 'test-dwarf-prog' AND path LIKE '%test-dwarf-prog' AND length(build_id) = 40")" \
	1 "the module has the path and the build id of its ModuleMap event"
is "$(q "SELECT function FROM frame_names WHERE name LIKE 'libgone.so.1+%' ORDER BY 1 LIMIT 1")" \
	"libgone.so.1+0x2345" "a frame of a missing file: module+0xOFFSET"
done_testing
