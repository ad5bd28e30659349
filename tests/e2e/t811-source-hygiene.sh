#!/bin/sh
# SPDX-License-Identifier: MIT
# t811-source-hygiene.sh - the source tree's own rules (doc/HACKING.md, issue 17): every
# .c, .h, .sh and Makefile.am file has an SPDX line in its first lines; no file of
# libtrace/, tools/ or sampler/ is over ~1,200 lines unless its header says why (it
# names its size in lines); nothing cites a file outside the repository: no research/ or
# shared/ path, and every doc/ or data/ .md file named anywhere exists. Reads git's
# tracked files (skips outside a git checkout). Not here: the API's comments
# (tests/build/check-api-docs.sh, t802).
. "$top_srcdir/tests/e2e/lib.sh"

if ! git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "1..0 # SKIP $top_srcdir is not a git checkout"
	exit 0
fi
cd "$top_srcdir" || exit 1
git ls-files >"$T/files"

# 1. SPDX
grep -E '\.(c|h|sh)$|(^|/)Makefile\.am$' "$T/files" >"$T/code"
: >"$T/nospdx"
while read -r f; do
	[ -f "$f" ] || continue
	head -n 5 "$f" | grep -q 'SPDX-License-Identifier:' || echo "$f" >>"$T/nospdx"
done <"$T/code"
if [ -s "$T/nospdx" ]; then
	fail "every .c/.h/.sh/Makefile.am file has an SPDX line ($(wc -l <"$T/nospdx") lack it)"
	diag "$(cat "$T/nospdx")"
else
	pass "every .c/.h/.sh/Makefile.am file has an SPDX line ($(wc -l <"$T/code") files)"
fi

# 2. size: over 1,200 lines, the header (the comment before the first #include or
# #ifndef) says how long the file is and so why
: >"$T/long"
for f in $(grep -E '^(libtrace|tools|sampler)/.*\.(c|h)$' "$T/files"); do
	[ -f "$f" ] || continue
	n=$(wc -l <"$f")
	[ "$n" -gt 1200 ] || continue
	awk '/^#(include|ifndef)/ { exit } { print }' "$f" | grep -q '[0-9],*[0-9]* lines' ||
		echo "$f ($n lines)" >>"$T/long"
done
if [ -s "$T/long" ]; then
	fail "no file of libtrace/, tools/, sampler/ over 1,200 lines without its header saying why"
	diag "$(cat "$T/long")"
else
	pass "no file of libtrace/, tools/, sampler/ over 1,200 lines without its header saying why"
fi

# 3. citations of files outside the repository
grep -v '^data/\|^tests/e2e/t811-source-hygiene\.sh$' "$T/files" >"$T/text"
: >"$T/outside"
while read -r f; do
	[ -f "$f" ] || continue
	grep -nE '(^|[^/A-Za-z0-9_.-])(research|shared)/[A-Za-z0-9_]' "$f" 2>/dev/null |
		sed "s|^|$f:|" >>"$T/outside"
done <"$T/text"
if [ -s "$T/outside" ]; then
	fail "nothing cites research/ or shared/ (outside the repository)"
	diag "$(cat "$T/outside")"
else
	pass "nothing cites research/ or shared/ (outside the repository)"
fi
: >"$T/missing"
while read -r f; do
	[ -f "$f" ] || continue
	md='(^|[^A-Za-z0-9_./-])(doc|data)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.md'
	for p in $(grep -oE "$md" "$f" 2>/dev/null | sed 's|^[^dD]*||'); do
		[ -e "$p" ] || echo "$f: $p" >>"$T/missing"
	done
done <"$T/text"
if [ -s "$T/missing" ]; then
	fail "every doc/ and data/ .md file named in the tree exists"
	diag "$(sort -u "$T/missing")"
else
	pass "every doc/ and data/ .md file named in the tree exists"
fi
done_testing
