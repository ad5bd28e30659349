#!/bin/sh
# SPDX-License-Identifier: MIT
# check-man.sh - every hand-written man page in doc/man renders without a groff warning
# (-ww: all warnings) and has the sections a reader looks for first: NAME, SYNOPSIS and
# DESCRIPTION. Output: TAP, one test point per page.
: "${top_srcdir:=.}"

if ! command -v groff >/dev/null 2>&1; then
	echo "1..0 # SKIP groff not found (Debian: groff-base)"
	exit 0
fi
n=0
fail=0
for page in "$top_srcdir"/doc/man/*.[1-8]; do
	[ -f "$page" ] || continue
	n=$((n + 1))
	name=${page##*/}
	warn=$(LC_ALL=C groff -man -Tutf8 -ww -z "$page" 2>&1)
	missing=""
	for sec in NAME SYNOPSIS DESCRIPTION; do
		grep -q "^\.SH \"\{0,1\}$sec\"\{0,1\}\$" "$page" || missing="$missing $sec"
	done
	if [ -z "$warn" ] && [ -z "$missing" ] && grep -q '^\.TH ' "$page"; then
		echo "ok $n - $name renders cleanly and has NAME, SYNOPSIS, DESCRIPTION"
	else
		echo "not ok $n - $name renders cleanly and has NAME, SYNOPSIS, DESCRIPTION"
		[ -n "$warn" ] && printf '%s\n' "$warn" | sed 's/^/#   /'
		[ -n "$missing" ] && echo "#   missing sections:$missing"
		grep -q '^\.TH ' "$page" || echo "#   no .TH line"
		fail=1
	fi
done
if [ "$n" -eq 0 ]; then
	echo "Bail out! no man pages in $top_srcdir/doc/man"
	exit 1
fi
echo "1..$n"
exit $fail
