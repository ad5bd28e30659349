#!/bin/sh
# SPDX-License-Identifier: MIT
# t901-reject-messages.sh - selected files of the rejected-input corpus
# (tests/corpus/gen-corrupt.c) make nettrace-info exit 2 with the exact line
# "nettrace-info: FILE: at byte N (0xN): message": the offset names the field that is
# wrong (offsets refer to the 582-byte checkpoints trace annotated in spec §2.5). Cuts at
# an object boundary exit 0 with the truncation warning at that boundary.
. "$top_srcdir/tests/e2e/lib.sh"
GEN=$top_builddir/tests/corpus/gen-corrupt
need_tool "$GEN"
need_tool "$INFO"

mkdir "$T/c" || exit 1
"$GEN" -q "$TRACES" "$T/c" || { echo "Bail out! gen-corrupt failed"; exit 1; }
cd "$T/c" || exit 1

# FILE|OFFSET|MESSAGE
while IFS='|' read -r f off msg; do
	[ -n "$f" ] || continue
	run "$INFO" "$f"
	is_rc 2 "$f exits 2"
	is "$(cat "$T/err")" "nettrace-info: $f: at byte $off ($(printf '0x%x' "$off")): $msg" \
		"$f: the error line"
	is_empty "$T/out" "$f: nothing on stdout"
done <<'EOF'
bad-empty.nettrace|0|file ends inside the magic (0 bytes)
bad-short-not-magic.nettrace|0|not a nettrace file (no "Nettrace" magic)
bad-magic-only.nettrace|10|file ends inside the stream header (10 bytes)
bad-not-nettrace.nettrace|0|not a nettrace file (no "Nettrace" magic)
bad-netperf-v3.nettrace|0|netperf (V3) files are not supported, only nettrace V4-V6
bad-ec-magic.nettrace|0|not a nettrace file (no "Nettrace" magic)
bad-ec-fastser-len.nettrace|8|bad serialization header: length 21, expected 20
bad-ec-fastser-name.nettrace|12|bad serialization header: expected "!FastSerialization.1"
bad-ec-v6-major7.nettrace|12|unsupported nettrace major version 7 (this reader supports 4-6)
bad-ec-trace-tag.nettrace|32|expected object start 05 05 01, found 04 05 01
bad-ec-trace-version5.nettrace|35|Trace object version 5 is not supported (expected 4)
bad-ec-trace-name.nettrace|32|first object is "Trade", expected "Trace"
bad-ec-trace-namelen0.nettrace|43|object type name length 0 out of range 1..63
bad-ec-trace-namelen-huge.nettrace|43|object type name length 4294967295 out of range 1..63
bad-ec-trace-endtag.nettrace|101|expected end of Trace object tag 06, found 07
bad-ec-qpc-zero.nettrace|77|QPC frequency is 0
bad-ec-ptrsize3.nettrace|85|pointer size 3 is not 4 or 8
bad-ec-cut-0100.nettrace|100|file ends inside the Trace object (needed 49 bytes, have 47)
bad-ec-mb-tag.nettrace|102|expected object start 05 05 01, found 05 05 02
bad-ec-mb-version3.nettrace|105|MetadataBlock version 3 is not supported (expected 2)
bad-ec-mb-name.nettrace|102|unknown object type "MetadateBlock"
bad-ec-mb-name-ctrl.nettrace|121|object type name is not printable ASCII
bad-ec-mb-namelen64.nettrace|113|object type name length 64 out of range 1..63
bad-ec-mb-typeend.nettrace|130|expected end of type tag 06 after "MetadataBlock", found 05
bad-ec-mb-size-huge.nettrace|131|MetadataBlock size 4294967295 exceeds the 67108864 byte limit
bad-ec-mb-size-64m.nettrace|131|MetadataBlock size 67108865 exceeds the 67108864 byte limit
bad-ec-mb-size-small.nettrace|286|expected end of MetadataBlock tag 06, found 00
bad-ec-mb-pad.nettrace|135|non-zero padding byte 01 before MetadataBlock content
bad-ec-mb-hdrsize19.nettrace|136|block header size 19 is smaller than 20
bad-ec-mb-hdrsize-huge.nettrace|136|block header size 65535 exceeds the block (151 bytes)
bad-ec-mb-endtag.nettrace|287|expected end of MetadataBlock tag 06, found 07
bad-ec-mb-varint11.nettrace|167|bad varint in event header at blob offset 156
bad-ec-mb-plen-huge.nettrace|156|metadata payload size 2147483647 exceeds the block (108 bytes left)
bad-ec-md-id0.nettrace|179|bad metadata: metadata id 0 is reserved
bad-ec-md-provider-unterminated.nettrace|183|bad metadata: unterminated provider name
bad-ec-md-fieldcount-huge.nettrace|283|bad metadata: field count 4294967295 exceeds the metadata payload (0 bytes left)
bad-ec-sb-count-huge.nettrace|324|stack count 4294967295 exceeds the StackBlock (4 bytes left)
bad-ec-sb-first0.nettrace|320|stack block first id is 0
bad-ec-sb-stacksize-huge.nettrace|328|stack size 4294967288 exceeds the StackBlock (0 bytes left)
bad-ec-sb-stacksize-odd.nettrace|328|stack size 7 is not a multiple of the pointer size 8
bad-ec-eb-name.nettrace|333|unknown object type "EventBlocc"
bad-ec-eb-uncompressed.nettrace|384|event size 2550137295 exceeds the block (139 bytes left)
bad-ec-ev-meta-undefined.nettrace|384|event references undefined metadata id 2
bad-ec-ev-meta0.nettrace|384|event with metadata id 0 in an EventBlock
bad-ec-ev-meta-huge.nettrace|384|event references undefined metadata id 4294967295
bad-ec-ev-plen-huge.nettrace|384|event payload size 2147483647 exceeds the block (120 bytes left)
bad-ec-ev-varint11.nettrace|409|bad varint in event header at blob offset 384
bad-ec-sp-count-huge.nettrace|564|sequence point thread count 4294967295 exceeds the block
bad-ec-endtag.nettrace|581|expected object start 05 05 01, found 02
bad-ec-garbage-instead-of-end.nettrace|581|expected object start 05 05 01, found ff
bad-mixed-block001-stackcount-huge.nettrace|804|stack count 4294967295 exceeds the StackBlock (56 bytes left)
bad-v6-kv-count-huge.nettrace|60|key/value count 4294967295 exceeds the Trace block
EOF

# Cuts at object boundaries: exit 0, the complete events, the warning at the boundary.
# FILE|OFFSET|EVENTS|WARNING
while IFS='|' read -r f off nev msg; do
	[ -n "$f" ] || continue
	run "$INFO" --events "$f"
	is_rc 0 "$f exits 0"
	is "$(wc -l <"$T/out" | tr -d ' ')" "$nev" "$f: $nev events"
	is "$(cat "$T/err")" \
		"nettrace-info: $f: at byte $off ($(printf '0x%x' "$off")): warning: $msg" \
		"$f: the warning line"
done <<'EOF'
trunc-ec-cut-0102.nettrace|102|0|stream ends without the end-of-stream marker (no end-of-stream tag after the last block)
trunc-ec-cut-0333.nettrace|333|0|stream ends without the end-of-stream marker (no end-of-stream tag after the last block)
trunc-ec-cut-0528.nettrace|528|3|stream ends without the end-of-stream marker (no end-of-stream tag after the last block)
trunc-ec-cut-0581.nettrace|581|3|stream ends without the end-of-stream marker (no end-of-stream tag after the last block)
trunc-ec-cut-0340.nettrace|333|0|stream truncated inside an object header (needs 15 bytes, 7 present); events before it were read
trunc-ec-cut-0350.nettrace|333|0|stream truncated inside an object header (needs 26 bytes, 17 present); events before it were read
trunc-ec-cut-0500.nettrace|333|0|stream truncated inside EventBlock (needs 169 bytes, 141 present); events before it were read
EOF
done_testing
