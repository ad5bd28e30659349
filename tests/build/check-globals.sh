#!/bin/sh
# SPDX-License-Identifier: MIT
# check-globals.sh - fails if libnettrace's objects hold writable global state (STYLE.md,
# "No global mutable state"): any data symbol that objdump -t places in .data, .bss (or
# their .rel/.local variants, small-data, thread-local or common sections). Read-only
# tables (.rodata, .data.rel.ro) are fine. nm cannot tell writable .data from .data.rel.ro
# (it prints "d" for both), hence objdump. Output: TAP, one test point per object file.
: "${top_builddir:=.}"
: "${OBJDUMP:=objdump}"

# The library is built once into the libtool convenience archive libntcore; its PIC
# objects are exactly what libnettrace.so is linked from.
lib="$top_builddir/libtrace/.libs/libntcore.a"
if ! command -v "$OBJDUMP" >/dev/null 2>&1; then
	echo "1..0 # SKIP $OBJDUMP not found (install binutils)"
	exit 0
fi
if [ ! -f "$lib" ]; then
	echo "Bail out! $lib not built"
	exit 1
fi

tmp=${TMPDIR:-/tmp}/nt-globals.$$
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp" || exit 1
(cd "$tmp" && ar x "$lib") || { echo "Bail out! cannot extract $lib"; exit 1; }

n=0
fail=0
for obj in "$tmp"/*.o; do
	n=$((n + 1))
	name=$(basename "$obj")
	bad=$("$OBJDUMP" -t "$obj" | awk '
		# Line: value, flag letters, section, size, [.hidden] name. "O" marks a data
		# object; thread-local symbols carry no "O", so their sections count alone.
		NF >= 4 && $1 ~ /^[0-9a-f]+$/ {
			for (i = NF - 1; i > 2; i--) if ($i ~ /^[0-9a-f]+$/ && length($i) == length($1)) break
			if (i <= 2) next
			sec = $(i - 1); obj = 0
			for (j = 2; j < i - 1; j++) if ($j == "O") obj = 1
			if (sec ~ /^\.data\.rel\.ro/) next
			if (sec ~ /^\.(tdata|tbss)(\.|$)/) obj = 1
			if (!obj) next
			if (sec ~ /^\.(data|bss|sdata|sbss|tdata|tbss)(\.|$)/ || sec == "*COM*") {
				sym = $NF
				# Sanitizer bookkeeping is compiler-generated, not our state
				# (clang names the UBSan source locations __unnamed_N).
				if (sym ~ /^(__asan_|___asan_|__ubsan_|__odr_asan|__sancov|\.L)/) next
				if (sym ~ /^__unnamed_[0-9]+$/) next
				print "#   " sec " " sym
			}
		}')
	if [ -n "$bad" ]; then
		echo "not ok $n - $name has no writable global state"
		echo "$bad"
		fail=1
	else
		echo "ok $n - $name has no writable global state"
	fi
done
if [ "$n" -eq 0 ]; then
	echo "Bail out! no objects in $lib"
	exit 1
fi
echo "1..$n"
exit $fail
