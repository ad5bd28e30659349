#!/bin/sh
# SPDX-License-Identifier: MIT
# t001-help.sh - for every built tool tools/nettrace-*: --help and --version exit 0 on
# stdout, and every --long-option that --help shows is documented in doc/man/TOOL.1.
. "$top_srcdir/tests/e2e/lib.sh"

# Man page source as plain text: roff's "\-" is a hyphen, font escapes go.
man_text() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' "$1"
}

ntools=0
for bin in "$top_builddir"/tools/nettrace-*; do
	name=$(basename "$bin")
	case $name in *.*) continue ;; esac  # objects, sources
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	ntools=$((ntools + 1))

	run "$bin" --help
	is_rc 0 "$name --help exits 0"
	if grep -q "^Usage: $name " "$T/out" && [ ! -s "$T/err" ]; then
		pass "$name --help prints its usage on stdout"
	else
		fail "$name --help prints its usage on stdout"
	fi
	cp "$T/out" "$T/help"

	run "$bin" --version
	is_rc 0 "$name --version exits 0"
	if grep -q "^$name (libnettrace) " "$T/out"; then
		pass "$name --version names the tool and the package"
	else
		fail "$name --version names the tool and the package"
		diag "$(cat "$T/out")"
	fi

	page=$top_srcdir/doc/man/$name.1
	if [ ! -f "$page" ]; then
		fail "$name has a man page doc/man/$name.1"
		continue
	fi
	pass "$name has a man page doc/man/$name.1"
	man_text "$page" >"$T/man"
	opts=$(grep -o -- '--[a-z][a-z0-9-]*' "$T/help" | sort -u)
	if [ -z "$opts" ]; then
		fail "$name --help lists long options"
		continue
	fi
	for opt in $opts; do
		if grep -q -e "$opt\([^a-z0-9-]\|\$\)" "$T/man"; then
			pass "$name: $opt is in $name.1"
		else
			fail "$name: $opt is in $name.1"
		fi
	done
done
if [ "$ntools" -gt 0 ]; then
	pass "found $ntools tool(s) in $top_builddir/tools"
else
	fail "found tools in $top_builddir/tools"
fi
done_testing
