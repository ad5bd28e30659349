#!/bin/sh
# SPDX-License-Identifier: MIT
# check-example.sh - the library example of README.md ("Using the library") compiles as a
# user would build it (only <nettrace.h>, -std=c99 -pedantic, every warning an error), links
# against the built libnettrace.so and prints the right count for a bundled trace. The
# header must also compile as C++ when a C++ compiler is around. Output: TAP.
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
: "${CC:=cc}"

readme="$top_srcdir/README.md"
libdir="$top_builddir/libtrace/.libs"
trace="$top_srcdir/data/traces/perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace"
if [ ! -f "$libdir/libnettrace.so" ]; then
	echo "Bail out! $libdir/libnettrace.so not built"
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nt-example.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# The first ```c block after the "## Using the library" heading.
awk '/^## Using the library/ { s = 1 } s && /^```c$/ { p = 1; next } p && /^```$/ { exit } p' \
	"$readme" >"$tmp/count.c"
# NT_SAN_CFLAGS: a sanitizer build's library needs the sanitizer runtimes in the program.
# shellcheck disable=SC2086
if [ -s "$tmp/count.c" ] &&
	$CC -std=c99 -pedantic -Wall -Wextra -Werror $NT_SAN_CFLAGS -I"$top_srcdir/libtrace/include" \
		-o "$tmp/count" "$tmp/count.c" -L"$libdir" -lnettrace 2>"$tmp/cc.err"; then
	echo "ok 1 - README example compiles and links (c99, -pedantic -Werror)"
else
	echo "not ok 1 - README example compiles and links (c99, -pedantic -Werror)"
	sed 's/^/#   /' "$tmp/cc.err"
	fail=1
fi

out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/count" "$trace" 2>&1)
if [ "$out" = "3 events" ]; then
	echo "ok 2 - README example counts 3 events in the checkpoints trace"
else
	echo "not ok 2 - README example counts 3 events in the checkpoints trace"
	printf '%s\n' "$out" | sed 's/^/#   got: /'
	fail=1
fi

cxx=$(command -v c++ || command -v g++ || command -v clang++)
if [ -n "$cxx" ]; then
	printf '#include <nettrace.h>\nint main() { nt_error e; nt_error_clear(&e); return 0; }\n' \
		>"$tmp/hdr.cc"
	if "$cxx" -Wall -Wextra -Werror -fsyntax-only -I"$top_srcdir/libtrace/include" \
		"$tmp/hdr.cc" 2>"$tmp/cxx.err"; then
		echo "ok 3 - nettrace.h compiles as C++ ($cxx)"
	else
		echo "not ok 3 - nettrace.h compiles as C++ ($cxx)"
		sed 's/^/#   /' "$tmp/cxx.err"
		fail=1
	fi
else
	echo "ok 3 # SKIP no C++ compiler"
fi
echo "1..3"
exit $fail
