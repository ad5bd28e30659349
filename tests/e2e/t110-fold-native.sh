#!/bin/sh
# SPDX-License-Identifier: MIT
# t110-fold-native.sh - native frames in nettrace-fold (and nettrace-tree): a synthetic trace
# written by tests/mknative, as the sampler records one (ModuleMap events for the PT_LOAD
# segments of tests/unit/test-dwarf-prog, a "-g -O2" program, then samples whose stacks are
# addresses in it), must fold into "test-dwarf-prog!function" frames with each inlined
# function a frame of its own. The expected frames come from eu-addr2line -i -f (addr2line
# -i -f without elfutils) on the same addresses: the leaf at its address, the caller at its
# return address - 1 (the call instruction). Also: a module whose file is missing gives
# "libgone.so.1+0xOFFSET" (callers at offset - 1), an address in no module "?!?".
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
FLAME=$top_builddir/tools/nettrace-flame
MK=$top_builddir/tests/mknative
BIN=$top_builddir/tests/unit/test-dwarf-prog
need_tool "$FOLD"
need_tool "$MK"
need_tool "$BIN"

. "$E2E/lib-native.sh"

# chains FILE: for each address in FILE (hex, one per line), one line "ADDR f1;f2;..." with
# the functions of its inline chain, innermost first ("inlined at" parts dropped).
chains() {
	"$A2L" -a -i -f -e "$BIN" <"$1" | awk '
		/^0x[0-9a-f]+$/ { if (a != "") print a, c; a = $0; c = ""; n = 0; next }
		n % 2 == 0 { f = $0; sub(/ inlined at .*/, "", f); c = c == "" ? f : c ";" f }
		{ n++ }
		END { if (a != "") print a, c }'
}

# reverse "a;b;c" -> "test-dwarf-prog!c;test-dwarf-prog!b;test-dwarf-prog!a"
root_first() {
	echo "$1" | awk -F';' '{ s = ""; for (i = NF; i >= 1; i--) s = s (s == "" ? "" : ";") "test-dwarf-prog!" $i; print s }'
}

# The leaf: the address of dp_worker with the longest inline chain (the first of them).
set -- $(nm -S "$BIN" | awk '$4 == "dp_worker" { print $1, $2 }')
if [ $# -ne 2 ]; then
	fail "nm lists dp_worker with its size in $BIN"
	done_testing
fi
start=$1 size=$2
i=0
: >"$T/worker-addrs"
while [ "$i" -lt $((0x$size)) ]; do
	printf '0x%x\n' $((0x$start + i)) >>"$T/worker-addrs"
	i=$((i + 1))
done
chains "$T/worker-addrs" >"$T/worker-chains"
leaf=$(awk '{ n = split($2, f, ";"); if (n > best) { best = n; a = $1 } } END { print a }' "$T/worker-chains")
leaf_chain=$(awk -v a="$leaf" '$1 == a { print $2 }' "$T/worker-chains")
depth=$(echo "$leaf_chain" | awk -F';' '{ print NF }')
if [ "$depth" -ge 3 ]; then
	pass "dp_worker has an address with $depth inlined frames ($leaf: $leaf_chain)"
elif ! objdump --dwarf=info "$BIN" 2>/dev/null | grep -m 1 DW_AT_producer | grep -q "GNU C"; then
	# the program is written for gcc's inlining; another compiler may inline less
	skip "dp_worker has an address with at least 3 inlined frames (got $depth)" \
		"test-dwarf-prog was not built by gcc"
else
	fail "dp_worker has an address with at least 3 inlined frames (got $depth)"
fi

# The caller: main's return address after its call to dp_worker.
ret=$(objdump -d "$BIN" | awk '/<main>:$/ { m = 1; next } /^$/ { m = 0 }
	m && /(call|bl|jal)[a-z]* .*<dp_worker>/ { c = 1; next } c { sub(/:.*/, ""); sub(/^ +/, ""); print; exit }')
is "$(echo "$ret" | grep -c '^[0-9a-f][0-9a-f]*$')" 1 "main calls dp_worker (return address $ret)"
printf '0x%x\n' $((0x$ret - 1)) >"$T/caller-addr"
caller_chain=$(chains "$T/caller-addr" | awk '{ print $2 }')
case $caller_chain in
*main) pass "the call site resolves to main ($caller_chain)" ;;
*) fail "the call site resolves to main (got '$caller_chain')" ;;
esac

leafhex=${leaf#0x}
run "$MK" "$T/native.nettrace" "$BIN" "$leafhex,$ret" "gone+2345,gone+3000,$ret" "nomodule,$ret"
is_rc 0 "mknative writes the trace"
is_empty "$T/err" "mknative: no diagnostics"

C=$(root_first "$caller_chain")
cat >"$T/want" <<EOT
$C;$(root_first "$leaf_chain") 2
$C;libgone.so.1+0x2fff;libgone.so.1+0x2345 2
$C;?!? 2
EOT
LC_ALL=C sort "$T/want" >"$T/want.sorted"
run "$FOLD" --unit samples "$T/native.nettrace"
is_rc 0 "nettrace-fold exits 0"
same "$T/out" "$T/want.sorted" "nettrace-fold: native frames with their inline chains, as $A2L"
is "$(cat "$T/err")" "nettrace-fold: $T/native.nettrace: warning: module /nonexistent/lib/libgone.so.1: missing: cannot open: No such file or directory: its frames show as libgone.so.1+0xOFFSET" \
	"nettrace-fold: one warning, for the missing module"

# callgrind: the positions come from DWARF, as eu-addr2line gives them: the leaf's self
# cost at the innermost line of its address, main's call to dp_worker at the line of the
# call. flat FILE: "self FN FILE LINE COST" and "call FN CFN FILE LINE COST" lines, with
# the format's compressed names resolved.
flat() {
	awk '
	function nm(s, tab,   id, rest) {
		id = s; sub(/\).*/, "", id); sub(/^\(/, "", id)
		rest = s; if (sub(/^\([0-9]+\) /, "", rest)) tab[id] = rest
		return tab[id] }
	/^fl=/ { file = nm(substr($0, 4), F); next }
	/^fi=/ { file = nm(substr($0, 4), F); next }
	/^cfi=/ { nm(substr($0, 5), F); next }
	/^fn=/ { fn = nm(substr($0, 4), N); next }
	/^cfn=/ { cfn = nm(substr($0, 5), N); next }
	/^calls=/ { call = 1; next }
	/^[0-9]+ [0-9]+$/ { if (call) print "call", fn, cfn, file, $1, $2; else print "self", fn, file, $1, $2; call = 0 }' "$1"
}
# pos ADDR: "FILE LINE" of the innermost location of ADDR
pos() { "$A2L" -i -f -e "$BIN" "$1" | sed -n 2p | sed 's/:\([0-9]*\)\(:[0-9]*\)\{0,1\}$/ \1/'; }
run "$FLAME" --unit samples --format callgrind "$T/native.nettrace"
is_rc 0 "nettrace-flame --format callgrind exits 0"
flat "$T/out" >"$T/flat"
inner=$(echo "$leaf_chain" | awk -F';' '{ print $1 }')
want="self $inner $(pos "$leaf") 2"
if grep -qx "$want" "$T/flat"; then pass "callgrind: the leaf's cost at its source line ($want)"; else
	fail "callgrind: the leaf's cost at its source line ($want)"; diag "$(cat "$T/flat")"; fi
want="call main dp_worker $(pos "$(cat "$T/caller-addr")") 2"
if grep -qx "$want" "$T/flat"; then pass "callgrind: main's call at its line ($want)"; else
	fail "callgrind: main's call at its line ($want)"; diag "$(cat "$T/flat")"; fi

# pprof: the same positions, as go tool pprof shows them
if command -v go >/dev/null 2>&1; then
	"$FLAME" --unit samples --format pprof -o "$T/native.pb.gz" "$T/native.nettrace"
	HOME=$T GOCACHE=$T/go-cache go tool pprof -traces -lines "$T/native.pb.gz" >"$T/traces" 2>"$T/traces.err"
	set -- $(pos "$leaf")
	# (the directory as pprof prints it: cleaned of "..", as out-of-tree builds have; an
	# inlined function is a Line of its address's Location, which pprof marks "(inline)")
	base=$(basename "$1")
	if grep -q "test-dwarf-prog!$inner .*/$base:$2\( (inline)\)\{0,1\}\$" "$T/traces"; then
		pass "pprof: the leaf at its source line ($inner $base:$2)"
	else
		fail "pprof: the leaf at its source line ($inner $base:$2)"
		diag "$(cat "$T/traces" "$T/traces.err")"
	fi
else
	skip "pprof: the leaf at its source line" "go not found (Debian: golang-go)"
fi

if [ -x "$TREE" ]; then
	run "$TREE" --unit samples "$T/native.nettrace"
	is_rc 0 "nettrace-tree exits 0"
	inner=$(echo "$leaf_chain" | awk -F';' '{ print $1 }')
	if grep -q "test-dwarf-prog!$inner\$" "$T/out"; then
		pass "nettrace-tree shows the innermost inlined frame test-dwarf-prog!$inner"
	else
		fail "nettrace-tree shows the innermost inlined frame test-dwarf-prog!$inner"
		diag "$(cat "$T/out")"
	fi
fi
done_testing
