#!/bin/sh
# SPDX-License-Identifier: MIT
# t800-api-linkage.sh - a program that only reads traces links libnettrace.so alone, which
# needs zlib and no SQLite, libdwarf, libelf or libiberty (readelf NEEDED, nm undefined
# symbols, ldd of tests/fuzz/read-all, a reader-only program, and what the dynamic loader
# actually loads for it); the version is configure's everywhere (nt_version() through the
# tools' --version, the pkg-config files, the man pages).
. "$top_srcdir/tests/e2e/lib.sh"

so=$top_builddir/libtrace/.libs/libnettrace.so
READALL=$top_builddir/tests/fuzz/read-all
need_tool "$READALL"
for t in readelf nm ldd; do
	command -v "$t" >/dev/null 2>&1 || { echo "1..0 # SKIP $t not found"; exit 0; }
done
[ -f "$so" ] || { echo "Bail out! $so not built"; exit 1; }
heavy='sqlite|dwarf|libelf|iberty|nettrace-analysis'

needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if printf '%s\n' "$needed" | grep -Eq "$heavy"; then
	fail "libnettrace.so needs none of SQLite, libdwarf, libelf, libiberty (needs: $needed)"
else
	pass "libnettrace.so needs none of SQLite, libdwarf, libelf, libiberty (needs: $needed)"
fi
case " $needed " in
*" libz.so."*) pass "libnettrace.so needs zlib" ;;
*) fail "libnettrace.so needs zlib (needs: $needed)" ;;
esac
und=$(nm -D --undefined-only "$so" | awk '{ print $NF }' |
	grep -E '^(sqlite3_|dwarf_|elf_|gelf_|cplus_demangle|nt_)' | tr '\n' ' ')
if [ -z "$und" ]; then
	pass "libnettrace.so references no SQLite, DWARF, ELF, demangler or analysis symbol"
else
	fail "libnettrace.so references no SQLite, DWARF, ELF, demangler or analysis symbol: $und"
fi

# The reader-only program, as libtool linked it: its own NEEDED, and what ld.so loads.
bin=$top_builddir/tests/fuzz/.libs/read-all
[ -f "$bin" ] || bin=$READALL
rn=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $rn " in
*" libnettrace.so."*) pass "read-all links libnettrace.so ($rn)" ;;
*) fail "read-all links libnettrace.so ($rn)" ;;
esac
loaded=$(LD_LIBRARY_PATH=$top_builddir/libtrace/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$bin" 2>&1)
if printf '%s\n' "$loaded" | grep -Eq "$heavy"; then
	fail "read-all loads no SQLite, libdwarf, libelf, libiberty or libnettrace-analysis"
	diag "$loaded"
else
	pass "read-all loads no SQLite, libdwarf, libelf, libiberty or libnettrace-analysis"
fi
# and it works: reads a real trace through the reader library alone
trace=$top_srcdir/data/traces/perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace
run "$READALL" "$trace"
is_rc 0 "read-all reads a trace with libnettrace.so alone"

# The analysis library carries the heavy dependencies, and links the reader library.
an=$(readelf -d "$top_builddir/libtrace/.libs/libnettrace-analysis.so" |
	sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $an " in
*" libnettrace.so."*"libsqlite3"*|*"libsqlite3"*" libnettrace.so."*)
	pass "libnettrace-analysis.so needs libnettrace.so and SQLite" ;;
*) fail "libnettrace-analysis.so needs libnettrace.so and SQLite (needs: $an)" ;;
esac

# One version: configure's (config.h) is what nt_version() says, through a tool.
ver=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
run "$INFO" --version
if grep -qx "nettrace-info (libnettrace) $ver" "$T/out"; then
	pass "nettrace-info --version prints nt_version(), configure's $ver"
else
	fail "nettrace-info --version prints configure's $ver (got: $(cat "$T/out"))"
fi
for pc in nettrace nettrace-reader; do
	v=$(sed -n 's/^Version: //p' "$top_builddir/libtrace/$pc.pc")
	[ "$v" = "$ver" ] && pass "$pc.pc is version $ver" || fail "$pc.pc is version $ver (got $v)"
done
if command -v pkg-config >/dev/null 2>&1; then
	libs=$(PKG_CONFIG_PATH=$top_builddir/libtrace pkg-config --libs nettrace 2>&1)
	case " $libs " in
	*-lnettrace-analysis*" -lnettrace "*) pass "pkg-config nettrace still gives both libraries ($libs)" ;;
	*) fail "pkg-config nettrace gives -lnettrace-analysis -lnettrace (got: $libs)" ;;
	esac
	libs=$(PKG_CONFIG_PATH=$top_builddir/libtrace pkg-config --libs nettrace-reader 2>&1)
	case " $libs " in
	*"analysis"*|*sqlite*|*dwarf*) fail "pkg-config nettrace-reader gives libnettrace only (got: $libs)" ;;
	*" -lnettrace "*) pass "pkg-config nettrace-reader gives libnettrace only ($libs)" ;;
	*) fail "pkg-config nettrace-reader gives -lnettrace (got: $libs)" ;;
	esac
fi
bad=""
for m in "$top_srcdir"/doc/man/*.[135]; do
	grep -q "^\.TH .*\"libnettrace $ver\"" "$m" || bad="$bad $(basename "$m")"
done
if [ -z "$bad" ]; then
	pass "every man page says libnettrace $ver"
else
	fail "every man page says libnettrace $ver:$bad"
fi
done_testing
