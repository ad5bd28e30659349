#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - set up a Debian 12 machine for libnettrace, build it, and run the demo or the tests.
#
#   ./run.sh demo       install what is missing, build, run nettrace-info on bundled traces,
#                       then record examples/nettrace-example and show its profile
#   ./run.sh test       install what is missing, build as CI does (-Werror, ASan + UBSan),
#                       make check, fuzz smoke (60 s over four targets, needs clang), the
#                       other builds (below: build + unit tests), then print
#                       whether the .NET tests ran (they need the .NET 10 SDK, which run.sh does
#                       not install) and "N passed, N failed"; exit non-zero if anything failed
#   ./run.sh builds     the other builds CI checks, build + unit tests only (no e2e suite,
#                       to keep CI time low): clang with -Werror, and gcc with plain -O2 (no
#                       -g, no sanitizers), each in a copy of the sources under build-ci/
#   ./run.sh distcheck  make distcheck: the release tarball must build, test and install
#   ./run.sh deps       only install the missing Debian packages
#
# Idempotent: apt-get runs only for packages that dpkg does not list as installed (with sudo
# when not root); autoreconf runs only when ./configure is missing; configure runs again only
# when its options change (then the old objects are cleaned). The build is in the source tree.
# Environment: FUZZ_SECONDS (default 60; 0 skips the fuzz smoke), JOBS (default: nproc),
# NT_CI_BUILDS (default "clang o2"; empty skips the other builds).
set -u

cd "$(dirname "$0")" || exit 1
mode=${1:-}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

# Debian packages: the build (compiler, autotools, the libraries configure checks for) and,
# for the tests, clang and its sanitizer and libFuzzer runtimes (libclang-rt-dev) for the
# libFuzzer targets and groff to lint the man pages. binutils
# gives objdump/nm to the build tests.
PKGS_BUILD="gcc make binutils autoconf automake libtool pkg-config
	libdwarf-dev libelf-dev zlib1g-dev libsqlite3-dev libiberty-dev"
PKGS_TEST="clang libclang-rt-dev groff-base"
# The export tests read our pprof files with the real `go tool pprof` and drive the SVG
# flame graph in headless Chromium (through playwright-core, from npm); the native-symbol
# tests compare with eu-addr2line. Node.js may come from Debian or from NodeSource (whose
# nodejs package includes npm and conflicts with Debian's npm), so it is only installed
# when there is no node at all.
PKGS_TEST="$PKGS_TEST chromium golang-go elfutils"
# nettrace-sql --to clickhouse:// is tested against two real ClickHouse servers on loopback
# ports (t410 starts and stops them itself; no system service is used).
PKGS_TEST="$PKGS_TEST clickhouse-server clickhouse-client"
command -v npm >/dev/null 2>&1 || PKGS_TEST="$PKGS_TEST nodejs npm"
PLAYWRIGHT=playwright-core@1.65.1

# playwright-core for the browser test, unless node already resolves it (global install).
install_playwright() {
	command -v npm >/dev/null 2>&1 || return 0
	node -e "require.resolve('playwright-core')" >/dev/null 2>&1 && return 0
	(NODE_PATH=$(npm root -g 2>/dev/null) node -e "require.resolve('playwright-core')") \
		>/dev/null 2>&1 && return 0
	[ -d node_modules/playwright-core ] && return 0
	say "npm install --no-save $PLAYWRIGHT (into ./node_modules)"
	npm install --no-save --no-package-lock --no-audit --no-fund "$PLAYWRIGHT" >/dev/null ||
		say "npm install failed: the browser test will be skipped"
}

install_deps() {
	missing=""
	for p in "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	command -v apt-get >/dev/null 2>&1 || die "missing packages:$missing (and no apt-get)"
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "missing packages:$missing; run as root or install sudo"
		sudo=sudo
	fi
	say "installing:$missing"
	$sudo apt-get update -q || die "apt-get update failed"
	# shellcheck disable=SC2086
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing ||
		die "apt-get install failed"
}

# configure_build OPTION...: (re)configure in the source tree when the options differ from
# those config.status was made with, then build. Returns make's status.
configure_build() {
	if [ ! -x configure ] || [ ! -f build-aux/tap-driver.sh ]; then
		say "autoreconf -fi"
		mkdir -p m4
		autoreconf -fi || die "autoreconf failed"
	fi
	want="$*"
	have=""
	if [ -x config.status ] && [ -f Makefile ]; then
		have=$(eval "set -- $(./config.status --config)"; echo "$*")
	fi
	if [ ! -f Makefile ] || [ "$have" != "$want" ]; then
		[ -f Makefile ] && make -s clean >/dev/null 2>&1
		say "./configure $want"
		./configure -q "$@" || die "configure failed (see config.log)"
	fi
	say "make -j$JOBS"
	make -s -j"$JOBS"
}

demo() {
	install_deps $PKGS_BUILD
	configure_build || die "build failed"
	info=tools/nettrace-info
	big=data/traces/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
	small=data/traces/perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace
	say "$info $big"
	$info "$big" || die "nettrace-info failed"
	say "$info --events $small"
	$info --events "$small" || die "nettrace-info --events failed"
	# the sampler: record the example program, show its tree, flame graph and a query
	sh examples/demo.sh . || die "examples/demo.sh failed"
}

# Counts from automake's test-suite.log header ("# PASS:  12" ...), one per TAP test point.
count() { awk -v k="$1" '$1 == "#" && $2 == k":" { n = $3; exit } END { print n + 0 }' test-suite.log; }

# One line on the .NET tests (those that call dotnet_need, tests/e2e/lib-dotnet.sh): whether
# they ran, from their logs; they skip where no .NET 10 SDK is installed (and a few where
# the machine lacks something else, e.g. t608 without a tracefs mount).
dotnet_summary() {
	total=0 ran=0 other=""
	for t in tests/e2e/t*.sh; do
		grep -q '^dotnet_need' "$t" || continue
		total=$((total + 1))
		log=${t%.sh}.log
		if [ ! -f "$log" ] || ! grep -q '^1\.\.0 # SKIP' "$log"; then
			ran=$((ran + 1))
		elif ! grep -q '^1\.\.0 # SKIP \(dotnet is not installed\|no \.NET 10 SDK\)' "$log"; then
			other="$other $(basename "$t" .sh)"
		fi
	done
	[ "$total" -gt 0 ] || return 0
	ver=$(dotnet --list-sdks 2>/dev/null | sed -n 's/^\([^ ]*\) .*/\1/p' | tail -n 1)
	if [ -z "$ver" ]; then
		echo "dotnet not found: $((total - ran)) of $total .NET tests skipped (install the .NET 10 SDK to run them)"
	else
		echo "dotnet: found SDK $ver, $ran of $total .NET tests ran${other:+ (skipped by the machine:$other)}"
	fi
}

run_tests() {
	install_deps $PKGS_BUILD $PKGS_TEST
	install_playwright
	pass=0 fail=0 skip=0
	if configure_build --enable-werror --enable-sanitizers; then
		rm -f test-suite.log
		say "make -j$JOBS check"
		make -s -j"$JOBS" check
		if [ -f test-suite.log ]; then
			pass=$(( $(count PASS) + $(count XFAIL) ))
			fail=$(( $(count FAIL) + $(count XPASS) + $(count ERROR) ))
			skip=$(count SKIP)
			# make check shows only the summary: print the logs of what failed.
			[ "$fail" -gt 0 ] && sed -n '/^\.\. contents:: :depth: 2/,$p' test-suite.log
		else
			say "make check did not run the tests (build of the tests failed)"
			fail=1
		fi
	else
		say "build failed"
		fail=1
	fi

	# Fuzz smoke: the libFuzzer targets (reader, profile, folded, unwind, pdb) for
	# FUZZ_SECONDS in all, a fifth each ("make fuzz FUZZ_TARGET=all"), when clang is there.
	if [ "$FUZZ_SECONDS" -gt 0 ] && [ -f Makefile ] && grep -q '^fuzz:' Makefile &&
		command -v clang >/dev/null 2>&1; then
		each=$((FUZZ_SECONDS / 5))
		[ "$each" -gt 0 ] || each=1
		say "make fuzz FUZZ_TARGET=all FUZZ_SECONDS=$each"
		if make -s fuzz FUZZ_TARGET=all FUZZ_SECONDS="$each"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
		fi
	else
		say "fuzz smoke skipped"
	fi

	# The other compilers and flags: build + unit tests only (a few minutes each).
	other_builds
	n=$?
	fail=$((fail + n))

	dotnet_summary
	if [ "${skip:-0}" -gt 0 ]; then
		echo "$pass passed, $fail failed, $skip skipped"
	else
		echo "$pass passed, $fail failed"
	fi
	[ "$fail" -eq 0 ]
}

# other_build NAME CONFIGURE-ARG...: configures, builds and runs the unit and build tests
# (make check TESTS='$(UNIT_TESTS) $(BUILD_TESTS)') in build-ci/NAME, a fresh copy of the
# sources (git's tracked files, or the tree without its build outputs), so that the in-tree
# build is left alone. Its log: build-ci/NAME.log. Returns non-zero on any failure.
other_build() {
	name=$1
	shift
	dir=build-ci/$name
	log=build-ci/$name.log
	rm -rf "$dir"
	mkdir -p "$dir" || return 1
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z | xargs -0 tar cf - | (cd "$dir" && tar xf -) || return 1
	else
		tar cf - --exclude=./build-ci --exclude=./bench/out --exclude=./fuzz-out . |
			(cd "$dir" && tar xf -) || return 1
		[ -f "$dir/Makefile" ] && (cd "$dir" && make -s distclean >/dev/null 2>&1)
	fi
	say "$name build: ./configure $* (log: $log)"
	(
		cd "$dir" || exit 1
		mkdir -p m4 && autoreconf -fi && ./configure -q "$@" && make -s -j"$JOBS" &&
			make -s -j"$JOBS" check TESTS='$(UNIT_TESTS) $(BUILD_TESTS)'
	) >"$log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		say "$name build: ok"
	else
		say "$name build: FAILED; the end of $log:"
		tail -n 40 "$log" >&2
	fi
	return $rc
}

# other_builds: the builds of NT_CI_BUILDS; prints "N other builds failed" and returns
# their number.
other_builds() {
	nfail=0
	for b in ${NT_CI_BUILDS-clang o2}; do
		case $b in
		clang)
			if ! command -v clang >/dev/null 2>&1; then
				say "clang build skipped: no clang"
				continue
			fi
			other_build clang CC=clang --enable-werror || nfail=$((nfail + 1)) ;;
		o2) other_build o2 CFLAGS=-O2 --enable-werror || nfail=$((nfail + 1)) ;;
		*) say "unknown build '$b' in NT_CI_BUILDS"; nfail=$((nfail + 1)) ;;
		esac
	done
	return $nfail
}

distcheck() {
	install_deps $PKGS_BUILD
	configure_build || die "build failed"
	make -j"$JOBS" distcheck
}

case $mode in
demo) demo ;;
test) run_tests ;;
builds) install_deps $PKGS_BUILD clang; other_builds ;;
distcheck) distcheck ;;
deps) install_deps $PKGS_BUILD $PKGS_TEST && install_playwright ;;
*) echo "usage: ./run.sh demo|test|builds|distcheck|deps" >&2; exit 1 ;;
esac
