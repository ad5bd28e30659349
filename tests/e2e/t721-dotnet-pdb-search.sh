#!/bin/sh
# SPDX-License-Identifier: MIT
# t721-dotnet-pdb-search.sh - where managed lines come from when a trace is analysed
# elsewhere: the workload built with its portable PDB embedded in the assembly
# (DebugType=embedded, deflate'd in the PE debug directory) runs from a copy that is then
# moved away, so only --symbols or NETTRACE_SYMBOL_PATH can find it. A PDB of another build
# is refused (PDB mismatch), and a corrupt embedded or standalone PDB gives a warning with
# its byte offset while the trace still analyses, without lines for that module.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
TREE=$top_builddir/tools/nettrace-tree
need_tool "$TREE"
dotnet_workloads
dotnet_workloads_embedded

src=$top_srcdir/tests/dotnet/workloads/Program.cs
lo=$(grep -n 'while (sw.ElapsedTicks < until)' "$src" | head -n 1 | cut -d: -f1)
hi=$(grep -n 'x += i ^ (x >> 3);' "$src" | head -n 1 | cut -d: -f1)

app=$T/app
cp -R "$NT_WORKLOADS_EMBEDDED_DIR" "$app" || exit 1
if [ -f "$app/nt-workloads.pdb" ]; then
	fail "the embedded build has no .pdb file beside its assembly"
else
	pass "the embedded build has no .pdb file beside its assembly"
fi
tr=$T/emb.nettrace
NT_WORKLOADS=$app/nt-workloads
if dotnet_record split "$tr" 2; then
	pass "the embedded-PDB build ran under a file session"
else
	fail "the embedded-PDB build ran under a file session"; diag "$(cat "$tr.err")"
fi

# samples_with_pdb TOTAL and LINE, and the workload module's status, of --lines --json
lines_of() {
	tr -d ' \n' <"$T/out" | sed -n 's/.*"samples_with_pdb":{"total":\([0-9]*\),"line":\([0-9]*\).*/\1 \2/p'
}
status_of() {
	sed -n 's/.*"path": "[^"]*nt-workloads.dll", "status": "\([^"]*\)".*/\1/p' "$T/out"
}
message_of() {
	sed -n 's/.*"path": "[^"]*nt-workloads.dll".*"message": "\([^"]*\)".*/\1/p' "$T/out"
}

# In place: the embedded PDB of the recorded assembly.
run "$INFO" --lines --json "$tr"
read -r tot withline <<EOF
$(lines_of)
EOF
if [ "$rc" -eq 0 ] && [ "$(status_of)" = ok ] && [ "${tot:-0}" -gt 50 ] &&
	[ $((withline * 100)) -ge $((tot * 95)) ]; then
	pass "embedded PDB read from the recorded assembly: $withline of $tot samples with lines"
else
	fail "embedded PDB read from the recorded assembly: '$withline' of '$tot' ($(status_of))"
	diag "$(tail -n 8 "$T/out")"
fi
run "$TREE" --lines --unit samples "$tr"
if grep -q "Spin.Until(.*Program.cs:\($lo\|$((lo + 1))\|$hi\|$((hi + 1))\)" "$T/out"; then # +-1
	pass "the embedded PDB gives Spin.Until its loop's lines"
else
	fail "the embedded PDB gives Spin.Until its loop's lines"
fi

# Analysed elsewhere: the assembly is gone from the recorded path.
moved=$T/moved
mv "$app" "$moved"
run "$INFO" --lines --json "$tr"
if [ "$rc" -eq 0 ] && [ "$(status_of)" = "PDB not found" ]; then
	pass "without the assembly: PDB not found, and nettrace-info says so"
else
	fail "without the assembly: PDB not found (got '$(status_of)', exit $rc)"
fi
run "$INFO" --lines --json --symbols "$moved" "$tr"
read -r tot withline <<EOF
$(lines_of)
EOF
if [ "$(status_of)" = ok ] && [ $((withline * 100)) -ge $((tot * 95)) ]; then
	pass "--symbols DIR finds the assembly and its embedded PDB ($withline of $tot)"
else
	fail "--symbols DIR finds the assembly and its embedded PDB (got '$(status_of)')"
fi
run env NETTRACE_SYMBOL_PATH="/nonexistent:$moved" "$INFO" --lines --json "$tr"
if [ "$(status_of)" = ok ]; then
	pass "NETTRACE_SYMBOL_PATH finds it too"
else
	fail "NETTRACE_SYMBOL_PATH finds it too (got '$(status_of)')"
fi

# A PDB of another build (the portable one) is not this assembly's.
other=$T/other
mkdir -p "$other" && cp "$DOTNET_BUILD/workloads/out/nt-workloads.pdb" "$other/"
run "$INFO" --lines --json --symbols "$other" "$tr"
if [ "$rc" -eq 0 ] && [ "$(status_of)" = "PDB mismatch" ] &&
	grep -q "warning: module .*nt-workloads.dll: PDB mismatch: .*nt-workloads.pdb: PDB id " "$T/err"; then
	pass "a PDB of another build: PDB mismatch, warned"
else
	fail "a PDB of another build: PDB mismatch, warned (got '$(status_of)')"; diag "$(cat "$T/err")"
fi

# A corrupt embedded PDB: bytes of its deflate stream overwritten.
bad=$T/bad
mkdir -p "$bad" && cp "$moved/nt-workloads.dll" "$bad/" || exit 1
at=$(grep -obUa 'MPDB' "$bad/nt-workloads.dll" | head -n 1 | cut -d: -f1)
if [ -n "$at" ]; then
	pass "the assembly holds an embedded PDB (MPDB at byte $at)"
	printf '\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377' |
		dd of="$bad/nt-workloads.dll" bs=1 seek=$((at + 8)) conv=notrunc 2>/dev/null
else
	fail "the assembly holds an embedded PDB (MPDB)"
fi
run "$INFO" --lines --json --symbols "$bad" "$tr"
if [ "$rc" -eq 0 ] && [ "$(status_of)" = "bad PDB" ] &&
	grep -q "warning: module .*: bad PDB: .*nt-workloads.dll: at byte [0-9]* (0x[0-9a-f]*): embedded PDB: deflate data" "$T/err"; then
	pass "a corrupt embedded PDB: bad PDB, warned with its byte offset, exit 0"
else
	fail "a corrupt embedded PDB: bad PDB, warned with its byte offset (got '$(status_of)', exit $rc)"
	diag "$(cat "$T/err")"
fi
run "$TREE" --lines --unit samples --symbols "$bad" "$tr"
if [ "$rc" -eq 0 ] && grep -q "Spin.Until" "$T/out" && ! grep -q "Program.cs:" "$T/out"; then
	pass "the tree of that trace still shows the frames, without lines"
else
	fail "the tree of that trace still shows the frames, without lines (exit $rc)"
fi

# A corrupt standalone PDB (a stream that runs past the end of the file), found by name.
cp "$DOTNET_BUILD/workloads/out/nt-workloads.pdb" "$bad/nt-workloads.pdb"
rm -f "$bad/nt-workloads.dll"
size=$(wc -c <"$bad/nt-workloads.pdb")
head -c $((size / 2)) "$bad/nt-workloads.pdb" >"$bad/half" && mv "$bad/half" "$bad/nt-workloads.pdb"
run "$INFO" --lines --json --symbols "$bad" "$tr"
if [ "$rc" -eq 0 ] && [ "$(status_of)" = "bad PDB" ] &&
	message_of | grep -q 'nt-workloads.pdb: at byte [0-9]* (0x[0-9a-f]*): PDB: '; then
	pass "a truncated PDB: bad PDB with its byte offset ($(message_of | sed 's/.*): //'))"
else
	fail "a truncated PDB: bad PDB with its byte offset (got '$(status_of)': $(message_of))"
fi
done_testing
