#!/bin/sh
# SPDX-License-Identifier: MIT
# check-exports.sh - the shared library exports only nt_* symbols (libtrace/libtrace.map),
# all of them under the version node NT_1.0, and its SONAME is set (-version-info).
# Output: TAP.
: "${top_builddir:=.}"
: "${NM:=nm}"
: "${OBJDUMP:=objdump}"

so="$top_builddir/libtrace/.libs/libnettrace.so"
if ! command -v "$NM" >/dev/null 2>&1 || ! command -v "$OBJDUMP" >/dev/null 2>&1; then
	echo "1..0 # SKIP nm/objdump not found (install binutils)"
	exit 0
fi
if [ ! -f "$so" ]; then
	echo "Bail out! $so not built"
	exit 1
fi
fail=0

# nm -D lists the version node itself as an absolute symbol ("A NT_1.0"); skip it.
syms=$("$NM" -D --defined-only "$so" | awk '$2 != "A" { print $NF }')
bad=$(printf '%s\n' "$syms" | grep -v '^nt_' | grep -v '^$')
if [ -z "$bad" ]; then
	echo "ok 1 - $(basename "$so") exports only nt_* symbols"
else
	echo "not ok 1 - $(basename "$so") exports only nt_* symbols"
	printf '%s\n' "$bad" | sed 's/^/#   unexpected: /'
	fail=1
fi

count=$(printf '%s\n' "$syms" | grep -c '^nt_')
if [ "$count" -gt 0 ]; then
	echo "ok 2 - exports $count nt_* symbols"
else
	echo "not ok 2 - exports at least one nt_* symbol"
	fail=1
fi

# Every export carries the version node of the map (nm -D shows name@@NT_1.0 or name@NT_1.0).
unver=$("$NM" -D --defined-only --with-symbol-versions "$so" 2>/dev/null |
	awk '$2 != "A" && $NF ~ /^nt_/ && $NF !~ /@@?NT_[0-9.]+$/ { print $NF }')
if [ -z "$unver" ]; then
	echo "ok 3 - every export is versioned by libtrace.map"
else
	echo "not ok 3 - every export is versioned by libtrace.map"
	printf '%s\n' "$unver" | sed 's/^/#   unversioned: /'
	fail=1
fi

soname=$("$OBJDUMP" -p "$so" | awk '$1 == "SONAME" { print $2 }')
case $soname in
libnettrace.so.[0-9]*)
	echo "ok 4 - SONAME is $soname" ;;
*)
	echo "not ok 4 - SONAME is libnettrace.so.N (got '$soname')"
	fail=1 ;;
esac
echo "1..4"
exit $fail
