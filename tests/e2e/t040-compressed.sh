#!/bin/sh
# SPDX-License-Identifier: MIT
# t040-compressed.sh - gzip and .zip input is detected by content and read while streaming:
# for every real trace, the gzip'd file (by path and through a pipe) gives the same
# nettrace-info --json, nettrace-fold, nettrace-tree and nettrace-flame output as the plain
# file; a .zip
# archive (deflated and stored) reads too; a corrupt gzip stream is an error with its offset.
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
FLAME=$top_builddir/tools/nettrace-flame
need_tool "$INFO"
need_tool "$FOLD"
need_tool "$TREE"
command -v gzip >/dev/null 2>&1 || { echo "1..0 # SKIP gzip not installed"; exit 0; }
cd "$TRACES" || exit 1

for f in $TRACE_FILES; do
	gzip -c "$f" >"$T/t.gz"
	"$INFO" --json "$f" 2>"$T/err.plain" | grep -v '"file":' >"$T/plain.json"
	sed "s|$f|FILE|" "$T/err.plain" >"$T/err.plain2"
	"$INFO" --json "$T/t.gz" 2>"$T/err.gz" | grep -v '"file":' >"$T/gz.json"
	sed "s|$T/t.gz|FILE|" "$T/err.gz" >"$T/err.gz2"
	same "$T/gz.json" "$T/plain.json" "$f.gz: nettrace-info --json equals the plain file's"
	same "$T/err.gz2" "$T/err.plain2" "$f.gz: same warnings"
	cat "$T/t.gz" | "$INFO" --json - 2>/dev/null | grep -v '"file":' >"$T/pipe.json"
	# (the symbol coverage included: it comes from the same single read)
	same "$T/pipe.json" "$T/plain.json" "$f.gz through a pipe: same --json"
	"$FOLD" --unit samples "$f" >"$T/plain.fold" 2>/dev/null
	"$FOLD" --unit samples "$T/t.gz" >"$T/gz.fold" 2>/dev/null
	same "$T/gz.fold" "$T/plain.fold" "$f.gz: same folded stacks"
	"$TREE" --unit samples "$f" 2>/dev/null | grep -v '^  \[1\]' >"$T/plain.tree"
	"$TREE" --unit samples "$T/t.gz" 2>/dev/null | grep -v '^  \[1\]' >"$T/gz.tree"
	same "$T/gz.tree" "$T/plain.tree" "$f.gz: same tree"
	"$FLAME" --format speedscope "$f" 2>/dev/null | sed "s|$f|FILE|g" >"$T/plain.ss"
	"$FLAME" --format speedscope "$T/t.gz" 2>/dev/null | sed "s|$T/t.gz|FILE|g" >"$T/gz.ss"
	same "$T/gz.ss" "$T/plain.ss" "$f.gz: nettrace-flame reads it (same speedscope)"
	"$FLAME" --format speedscope - <"$T/t.gz" 2>/dev/null |
		sed 's|^"exporter":\(.*\)"name":"-"|"exporter":\1"name":"FILE"|' >"$T/gzp.ss"
	same "$T/gzp.ss" "$T/plain.ss" "$f.gz through a pipe: nettrace-flame reads it (same speedscope)"
done

# Two gzip members concatenated (what `cat a.gz b.gz` makes) are one stream.
f=perfview/mixed_managed_external_samples.nettrace
head -c 200000 "$f" | gzip -c >"$T/m1.gz"
tail -c +200001 "$f" | gzip -c >"$T/m2.gz"
cat "$T/m1.gz" "$T/m2.gz" >"$T/multi.gz"
"$INFO" --json "$f" | grep -v '"file":' >"$T/plain.json"
"$INFO" --json "$T/multi.gz" | grep -v '"file":' >"$T/multi.json"
same "$T/multi.json" "$T/plain.json" "multi-member gzip reads as one stream"

# .zip archives (first entry), deflated and stored, written by a tiny zip writer in awk-free
# form: use python3 or zip when present.
if command -v zip >/dev/null 2>&1; then
	cp "$f" "$T/t.nettrace"
	(cd "$T" && zip -q -9 d.zip t.nettrace && zip -q -0 s.zip t.nettrace)
	for z in d s; do
		"$INFO" --json "$T/$z.zip" | grep -v '"file":' >"$T/zip.json"
		same "$T/zip.json" "$T/plain.json" "$z.zip: same --json as the plain file"
	done
elif command -v python3 >/dev/null 2>&1; then
	cp "$f" "$T/t.nettrace"
	(cd "$T" && python3 -c "
import zipfile
for n, m in (('d.zip', zipfile.ZIP_DEFLATED), ('s.zip', zipfile.ZIP_STORED)):
    z = zipfile.ZipFile(n, 'w', m); z.write('t.nettrace'); z.close()")
	for z in d s; do
		"$INFO" --json "$T/$z.zip" | grep -v '"file":' >"$T/zip.json"
		same "$T/zip.json" "$T/plain.json" "$z.zip: same --json as the plain file"
	done
else
	skip "zip input" "neither zip nor python3 is installed"
fi

# A corrupt gzip stream: exit 2 and the compressed offset in the message.
gzip -c "$f" >"$T/bad.gz"
printf '\000\001\002' | dd of="$T/bad.gz" bs=1 seek=5000 conv=notrunc 2>/dev/null
run "$INFO" "$T/bad.gz"
is_rc 2 "corrupt gzip: exit 2"
case $(cat "$T/err") in
"nettrace-info: $T/bad.gz: at byte "*" (0x"*"): corrupt gzip stream at compressed byte "*) pass "corrupt gzip: error line with its offset" ;;
*) fail "corrupt gzip: error line with its offset"; diag "$(cat "$T/err")" ;;
esac
# A gzip stream cut short: the trace inside is truncated, reported like any truncation.
head -c 100000 "$T/t.gz" >"$T/short.gz" 2>/dev/null || true
gzip -c "$f" | head -c 100000 >"$T/short.gz"
run "$INFO" --json "$T/short.gz"
is_rc 0 "gzip cut short: exit 0 (a truncated trace)"
grep -q '"truncated": true' "$T/out"
is $? 0 "gzip cut short: reported as truncated"
done_testing
