# SPDX-License-Identifier: MIT
# lib-build.sh - sourced by the bench/ scripts, which build an optimised copy of the library
# outside the autotools build (that one may carry sanitizers): the generated headers as
# Makefile.am makes them, and the libraries to link. One home, so that a new generated
# header or a new required library breaks no benchmark (both did: a fresh clone's
# bench-sql.sh could not link, demangle.c needs libiberty). Needs TOP (the source tree)
# and CC.

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
