#!/bin/sh
# SPDX-License-Identifier: MIT
# t686-collect-usage.sh - nettrace-collect's options and what it puts on the wire, without
# .NET: usage errors exit 1; --list-profiles names dotnet-trace's profiles; and the
# CollectTracing4 and StopTracing commands a fake server receives are byte for byte the
# encoding doc/format/diagnostics-ipc.md gives for the providers asked (dotnet-trace's
# syntax: keywords in hex, level by number or name, arguments, merging of a provider named
# twice).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-attach.sh"
need_tool "$COLLECT"
need_tool "$TOP"
FAKE=$top_builddir/tests/mkfakediag
need_tool "$FAKE"

run "$COLLECT"
is_rc 1 "no process: usage error"
run "$COLLECT" -p 1 --name x
is_rc 1 "-p and --name: usage error"
run "$COLLECT" -p 1 --providers 'Foo:0xZZ'
is_rc 1 "bad keywords: usage error"
grep -q "bad keywords 'ZZ'\|bad keywords '0xZZ'" "$T/err" && pass "it names the bad keywords" || fail "it names the bad keywords"
run "$COLLECT" -p 1 --providers 'Foo:1:loud'
is_rc 1 "bad level: usage error"
run "$COLLECT" -p 1 --profile nosuch
is_rc 1 "unknown profile: usage error"
run "$COLLECT" -p 1 --rate 0
is_rc 1 "--rate 0: usage error"
run "$COLLECT" -p 1 --duration 10x
is_rc 1 "bad duration: usage error"
run "$TOP"
is_rc 1 "nettrace-top without input: usage error"
run "$TOP" -p 1 --once --plain
is_rc 1 "nettrace-top --once --plain: usage error"
run "$COLLECT" --list-profiles
is_rc 0 "--list-profiles"
for p in cpu-sampling dotnet-sampled-thread-time dotnet-common gc-verbose gc-collect database; do
	grep -q "^$p" "$T/out" && pass "profile $p" || fail "profile $p"
done
grep -q "Microsoft-DotNETCore-SampleProfiler:0:4,Microsoft-Windows-DotNETRuntime:0x14C14FCCBD:4" "$T/out" &&
	pass "cpu-sampling is dotnet-trace's (SampleProfiler + runtime keywords 0x14C14FCCBD)" ||
	fail "cpu-sampling is dotnet-trace's"

# What goes on the wire: a fake server records the commands.
mkdir -p "$T/s"
FAKE_DUMP=$T/dump "$FAKE" stream "$T/s" "$TRACES/sentry-dotnet/sample.nettrace" >"$T/fake.out" 2>&1 &
fpid=$!
i=0
while ! grep -q ready "$T/fake.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
run env TMPDIR="$T/s" "$COLLECT" -q -p "$fpid" --no-rundown --buffer 64 \
	--providers 'My-Provider:0x1F:verbose:key=value;k2=v2' --providers 'Other::2,My-Provider:0x100:4' \
	-o "$T/x.nettrace"
kill "$fpid"
wait "$fpid" 2>/dev/null
is_rc 0 "nettrace-collect against the fake server"

# expected bytes, written by hand from the protocol description
u16() { printf "\\$(printf %03o $(($1 & 255)))\\$(printf %03o $(($1 >> 8 & 255)))"; }
u32() { u16 $(($1 & 65535)); u16 $(($1 >> 16 & 65535)); }
u64() { u32 $(($1 & 4294967295)); u32 $(($1 >> 32 & 4294967295)); }
str() { n=$((${#1} + 1)); u32 "$n"; printf '%s' "$1" | sed 's/./&\n/g' | while IFS= read -r ch; do
	[ -n "$ch" ] && printf '%s\000' "$ch"; done; printf '\000\000'; }
hdr() { printf 'DOTNET_IPC_V1\000'; u16 "$1"; printf "\\$(printf %03o "$2")\\$(printf %03o "$3")"; u16 0; }
{
	hdr 20 4 4                 # ProcessInfo2, no payload
	{
		u32 64; u32 1; u64 0; printf '\001'; u32 2
		u64 $((0x11F)); u32 5; str My-Provider; str 'key=value;k2=v2'
		u64 0; u32 2; str Other; u32 0
	} >"$T/payload"
	hdr $((20 + $(wc -c <"$T/payload"))) 2 5   # CollectTracing4
	cat "$T/payload"
} >"$T/want"
# the stream ended by itself (the fake closes): no StopTracing was needed
if cmp -s "$T/dump" "$T/want"; then
	pass "ProcessInfo2 and CollectTracing4 are encoded as documented"
else
	fail "ProcessInfo2 and CollectTracing4 are encoded as documented"
	diag "$(od -An -c "$T/dump" | head -20)" "want:" "$(od -An -c "$T/want" | head -20)"
fi
done_testing
