#!/bin/sh
# SPDX-License-Identifier: MIT
# t810-configure-sampler.sh - the x86-64-only sampler is gated in configure (issue 17):
# --disable-sampler exists and leaves the sampler and nettrace-record out of the build;
# a host the sampler does not support gets no sampler by default and an error with
# --enable-sampler; this build has the sampler exactly when its host and options say so.
# configure runs in a scratch copy of the sources (git's tracked files and what
# autoreconf made), as run.sh's other builds do, so that this build is left alone. Not
# here: whether the sampler works (t5NN-record-*).
. "$top_srcdir/tests/e2e/lib.sh"

[ -x "$top_srcdir/configure" ] || { echo "1..0 # SKIP no configure in $top_srcdir"; exit 0; }

"$top_srcdir/configure" --help >"$T/help" 2>&1
if grep -q -- '--disable-sampler' "$T/help"; then
	pass "configure --help lists --disable-sampler"
else
	fail "configure --help lists --disable-sampler"
fi

# This build: NT_SAMPLER (make check exports it) follows the host and the options.
bmk=$top_builddir/Makefile
host_cpu=$(sed -n 's/^host_cpu = //p' "$bmk")
host_os=$(sed -n 's/^host_os = //p' "$bmk")
args=$("$top_builddir/config.status" --config 2>/dev/null)
want=no
case "$host_cpu-$host_os" in x86_64-linux*) want=yes ;; esac
case " $args " in *"--disable-sampler"* | *"--enable-sampler=no"*) want=no ;; esac
is "${NT_SAMPLER:-}" "$want" "this build: sampler $want on $host_cpu-$host_os (configure $args)"
rec=$top_builddir/tools/nettrace-record
lib=$top_builddir/sampler/.libs/libnettrace-sampler.so
if [ "$want" = yes ]; then
	[ -x "$rec" ] && [ -f "$lib" ] && pass "this build has nettrace-record and the sampler" ||
		fail "this build has nettrace-record and the sampler"
else
	d="this build has no nettrace-record, no sampler"
	[ ! -e "$rec" ] && [ ! -e "$lib" ] && pass "$d" || fail "$d"
fi

# A scratch copy of the sources to configure.
if ! git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	skip "configure --disable-sampler in a copy" "not a git checkout"
	done_testing
fi
src=$T/src
mkdir -p "$src"
(
	cd "$top_srcdir" &&
		{ git ls-files | grep -v '^data/'; echo configure; echo Makefile.in;
		  echo config.h.in; find build-aux m4 -type f; } | tar cf - -T - |
		(cd "$src" && tar xf -)
) || { fail "a copy of the sources"; done_testing; }
cc=${CC:-cc}

# configure_in LOG ARG...: configure the copy; rc set, output in LOG.
configure_in() {
	_log=$1
	shift
	(cd "$src" && ./configure -q "$@") >"$_log" 2>&1
	rc=$?
}

configure_in "$T/disable.log" --disable-sampler CC="$cc"
if [ "$rc" -ne 0 ]; then
	fail "configure --disable-sampler succeeds"
	diag "$(tail -n 5 "$T/disable.log")"
else
	pass "configure --disable-sampler succeeds"
	is "$(sed -n 's/^NT_SAMPLER = //p' "$src/Makefile")" no "--disable-sampler: NT_SAMPLER = no"
	n=$(cd "$src" && make -n all 2>/dev/null |
		grep -c 'nettrace-record\|libnettrace-sampler\|sampler/')
	is "$n" 0 "--disable-sampler: make builds neither nettrace-record nor the sampler"
fi

# A host the sampler does not support (a cross configure for aarch64, with this compiler).
configure_in "$T/cross.log" --build=x86_64-pc-linux-gnu --host=aarch64-linux-gnu CC="$cc"
if [ "$rc" -ne 0 ]; then
	skip "aarch64 host: no sampler by default" \
		"cross configure failed: $(tail -n 1 "$T/cross.log")"
else
	is "$(sed -n 's/^NT_SAMPLER = //p' "$src/Makefile")" no \
		"aarch64 host: no sampler by default"
fi
configure_in "$T/enable.log" --build=x86_64-pc-linux-gnu --host=aarch64-linux-gnu CC="$cc" \
	--enable-sampler
is "$rc" 1 "aarch64 host, --enable-sampler: configure fails"
if grep -q 'error: --enable-sampler: the sampler supports x86-64 Linux only' "$T/enable.log"; then
	pass "aarch64 host, --enable-sampler: configure says the sampler is x86-64 Linux only"
else
	fail "aarch64 host, --enable-sampler: configure says the sampler is x86-64 Linux only"
	diag "$(tail -n 3 "$T/enable.log")"
fi
done_testing
