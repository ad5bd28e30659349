#!/bin/sh
# SPDX-License-Identifier: MIT
# t723-dotnet-lines-nomap.sh - a .NET 10 trace recorded without IL maps (the runtime
# keyword without 0x20000, and no rundown: DOTNET_EventPipeRundown=0): the workload's PDB
# is found and read, but no managed frame can get a line, and nettrace-info --lines says
# why (no IL map) and how to record one that has them.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-dotnet.sh"
dotnet_need
need_tool "$INFO"
dotnet_workloads

# NT_DOTNET_CONFIG's runtime keywords without MethodILToNativeMap (0x20000)
kw=$(printf '%s' "$NT_DOTNET_CONFIG" | sed -n 's/.*Microsoft-Windows-DotNETRuntime:\(0x[0-9a-fA-F]*\):.*/\1/p')
nomap=$(printf '0x%x' $((kw & ~0x20000)))
if [ -n "$kw" ] && [ $((kw & 0x20000)) -ne 0 ]; then
	pass "the tests' session config asks for IL maps ($kw has 0x20000)"
else
	fail "the tests' session config asks for IL maps ('$kw')"
fi
NT_DOTNET_CONFIG=$(printf '%s' "$NT_DOTNET_CONFIG" | sed "s/$kw/$nomap/")
tr=$T/nomap.nettrace
DOTNET_EventPipeRundown=0
export DOTNET_EventPipeRundown
if dotnet_record split "$tr" 1; then
	pass "nt-workloads split ran under a file session without IL maps"
else
	fail "nt-workloads split ran under a file session without IL maps"; diag "$(cat "$tr.err")"
fi
unset DOTNET_EventPipeRundown
run "$INFO" --lines "$tr"
is_rc 0 "nettrace-info --lines exits 0"
if grep -q '^IL maps: *0 events for [0-9]* code versions (record with the runtime keyword 0x20000 for lines)' "$T/out"; then
	pass "no IL-map events, and the hint to record them"
else
	fail "no IL-map events, and the hint to record them"; diag "$(grep -A3 '^Managed lines' "$T/out")"
fi
if grep -q '^Frames without: *no IL map [0-9]* (100.0%);$' "$T/out" &&
	grep -q 'module nt-workloads: ok, 0 of [0-9]* frames with lines' "$T/out"; then
	pass "every managed frame lacks a line for want of IL maps, though the PDB was read"
else
	fail "every managed frame lacks a line for want of IL maps"; diag "$(grep -A6 '^Managed lines' "$T/out")"
fi
done_testing
