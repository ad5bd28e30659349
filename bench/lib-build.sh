# SPDX-License-Identifier: MIT
# lib-build.sh - sourced by the bench/ scripts, which build an optimised copy of the library
# outside the autotools build (that one may carry sanitizers): the generated headers as
# Makefile.am makes them, and the libraries to link. One home, so that a new generated
# header or a new required library breaks no benchmark (both did: a fresh clone's
# bench-sql.sh could not link, demangle.c needs libiberty). Needs TOP (the source tree)
# and CC.

# The scripts' messages: die TEXT (to stderr, prefixed with the script's name, exit 1) and
# say TEXT (a "==> TEXT" progress line on stderr); the name is BENCH_NAME (set it before
# sourcing, else the script's file name). bench_count VALUE WHAT dies unless VALUE is a
# whole number > 0 ("bad WHAT 'VALUE'").
: "${BENCH_NAME:=$(basename "$0")}"
die() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }
say() { printf '==> %s\n' "$*" >&2; }
bench_count() {
	case $1 in ''|*[!0-9]*|0) die "bad $2 '$1'" ;; esac
}

# bench_gen_headers BUILD: every "libtrace/X.h: $(top_srcdir)/F" rule of Makefile.am, made
# with the same sed script (a text file as C string literal lines) into BUILD/libtrace/X.h.
bench_gen_headers() {
	mkdir -p "$1/libtrace" || return 1
	# shellcheck disable=SC2016 # $(top_srcdir) is make syntax, matched literally
	sed -n 's|^\(libtrace/[A-Za-z0-9_-]*\.h\): $(top_srcdir)/\([^ ]*\)$|\1 \2|p' "$TOP/Makefile.am" |
		while read -r gen from; do
			sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/"/' -e 's/$/\\n"/' \
				"$TOP/$from" >"$1/$gen" || return 1
		done
}

# bench_libs BUILD: prints the -l flags, of those configure.ac requires, that link here.
bench_libs() {
	printf 'int main(void) { return 0; }\n' >"$1/probe.c"
	libs=
	for l in dwarf elf sqlite3 z iberty m pthread; do
		$CC "$1/probe.c" -l$l -o "$1/probe" 2>/dev/null && libs="$libs -l$l"
	done
	rm -f "$1/probe" "$1/probe.c"
	echo "$libs"
}

# bench_sources VAR: the .c files of Makefile.am's VAR_SOURCES list (e.g.
# sampler_libntsampler_la), as paths under TOP, so that a file the build adds to a library
# is in the benchmark's copy too (the sampler's copy once missed libtrace/opts.c).
bench_sources() {
	awk -v var="$1_SOURCES" '
		$1 == var && $2 == "=" { on = 1; $1 = ""; $2 = "" }
		on { line = $0; more = sub(/\\$/, "", line); n = split(line, w, /[ \t]+/)
		     for (i = 1; i <= n; i++) if (w[i] ~ /\.c$/) print w[i]
		     if (!more) on = 0 }' "$TOP/Makefile.am" | sed "s|^|$TOP/|"
}

# bench_lib BUILD NEED: the optimised library for the tools: config.h, the generated
# headers and every libtrace/*.c compiled into BUILD/libnt.a (a file that does not build is
# reported and left out; NEED, e.g. store-sqlite, must build). Sets CPPFLAGS and LIBS for
# bench_link. Needs BENCH_CFLAGS. Returns non-zero with the reason on stderr.
bench_lib() {
	printf '#define _GNU_SOURCE 1\n' >"$1/config.h"
	bench_gen_headers "$1" || { echo "cannot generate the headers of Makefile.am" >&2; return 1; }
	CPPFLAGS="-I$1 -I$1/libtrace -I$TOP/libtrace/include -I$TOP/libtrace -I$TOP/tools"
	# Debian puts libdwarf's headers in a subdirectory (configure.ac probes both places).
	[ -d /usr/include/libdwarf ] && CPPFLAGS="$CPPFLAGS -I/usr/include/libdwarf"
	rm -f "$1"/*.o "$1/libnt.a"
	for src in "$TOP"/libtrace/*.c; do
		obj=$1/$(basename "$src" .c).o
		# shellcheck disable=SC2086
		$CC -std=c11 $BENCH_CFLAGS $CPPFLAGS -c "$src" -o "$obj" 2>"$obj.log" ||
			echo "==> warning: $(basename "$src") does not build (see $obj.log)" >&2
	done
	[ -f "$1/$2.o" ] || { echo "$2.c does not build (see $1/$2.o.log)" >&2; return 1; }
	ar rcs "$1/libnt.a" "$1"/*.o || { echo "cannot create libnt.a" >&2; return 1; }
	LIBS=$(bench_libs "$1")
}

# bench_link BUILD NAME SOURCES...: BUILD/NAME from SOURCES and bench_lib's library.
bench_link() {
	b=$1 name=$2
	shift 2
	# shellcheck disable=SC2086
	$CC -std=c11 $BENCH_CFLAGS $CPPFLAGS "$@" "$b/libnt.a" $LIBS -o "$b/$name" 2>"$b/$name.log" ||
		{ echo "cannot build $name (see $b/$name.log)" >&2; return 1; }
}
