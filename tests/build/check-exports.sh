#!/bin/sh
# SPDX-License-Identifier: MIT
# check-exports.sh - the two shared libraries export exactly the functions their version
# scripts list (libtrace/libnettrace.map, libtrace/libnettrace-analysis.map), all under
# a version node; the maps name functions one by one (no wildcard), each NT_API function
# of nettrace.h in exactly one map; the SONAMEs are set (-version-info). Output: TAP.
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
: "${NM:=nm}"
: "${OBJDUMP:=objdump}"

if ! command -v "$NM" >/dev/null 2>&1 || ! command -v "$OBJDUMP" >/dev/null 2>&1; then
	echo "1..0 # SKIP nm/objdump not found (install binutils)"
	exit 0
fi
n=0 fail=0
t() { # t OK DESC [DETAIL...]
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
	shift 2
	[ $# -gt 0 ] && printf '%s\n' "$@" | sed '/^$/d; s/^/#   /'
	return 0
}
tmp=${TMPDIR:-/tmp}/check-exports.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT

# names of a map's global: section
map_names() { sed -n '/global:/,/local:/p' "$1" | sed -n 's/^[[:space:]]*\(nt_[A-Za-z0-9_]*\);.*/\1/p' | sort; }
# NT_API functions declared in the header (comments removed)
sed 's://.*$::' "$top_srcdir/libtrace/include/nettrace.h" | tr '\n' ' ' | sed 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/::g' |
	grep -o 'NT_API[^;(]*(' | sed 's/.*[^A-Za-z0-9_]\(nt_[A-Za-z0-9_]*\)[[:space:]]*($/\1/' | grep '^nt_' | sort -u >"$tmp/header"

for lib in libnettrace libnettrace-analysis; do
	map=$top_srcdir/libtrace/$lib.map
	so=$top_builddir/libtrace/.libs/$lib.so
	if [ ! -f "$so" ]; then
		echo "Bail out! $so not built"
		exit 1
	fi
	map_names "$map" >"$tmp/$lib.map"
	wild=$(sed -n '/global:/,/local:/p' "$map" | grep '\*' || true)
	t "$([ -z "$wild" ] && echo 0 || echo 1)" "$lib.map lists its functions by name" "$wild"
	# nm -D lists the version node itself as an absolute symbol ("A NT_1.0"); skip it.
	"$NM" -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $NF); print $NF }' | sort >"$tmp/$lib.syms"
	d=$(diff "$tmp/$lib.map" "$tmp/$lib.syms")
	t "$([ -z "$d" ] && echo 0 || echo 1)" "$lib.so exports exactly the $(wc -l <"$tmp/$lib.map") functions of $lib.map" "$d"
	unver=$("$NM" -D --defined-only --with-symbol-versions "$so" 2>/dev/null |
		awk '$2 != "A" && $NF !~ /@@?NT_[0-9.]+$/ { print $NF }')
	t "$([ -z "$unver" ] && echo 0 || echo 1)" "every export of $lib.so is versioned" "$unver"
	soname=$("$OBJDUMP" -p "$so" | awk '$1 == "SONAME" { print $2 }')
	case $soname in
	"$lib".so.[0-9]*) t 0 "$lib SONAME is $soname" ;;
	*) t 1 "$lib SONAME is $lib.so.N (got '$soname')" ;;
	esac
done
dup=$(sort "$tmp/libnettrace.map" "$tmp/libnettrace-analysis.map" | uniq -d)
t "$([ -z "$dup" ] && echo 0 || echo 1)" "no function is in both maps" "$dup"
sort -u "$tmp/libnettrace.map" "$tmp/libnettrace-analysis.map" >"$tmp/maps"
d=$(diff "$tmp/header" "$tmp/maps")
t "$([ -z "$d" ] && echo 0 || echo 1)" "the maps list the $(wc -l <"$tmp/header") NT_API functions of nettrace.h" "$d"
echo "1..$n"
exit $fail
