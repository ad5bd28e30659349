# SPDX-License-Identifier: MIT
# lib.sh - shared helpers for the end-to-end tests, sourced by tests/e2e/t*.sh: TAP output,
# running a command with its stdout/stderr/exit code captured, golden-file comparison,
# JSON flattening (json-flatten.awk) and the paths of the tools and the sample traces.
# Needs only POSIX sh, awk, diff, cmp and mktemp.
#
# Golden files: with NT_UPDATE_GOLDEN=1 in the environment, golden() rewrites the expected
# file instead of comparing (the test still reports ok); review that diff like code.

: "${top_srcdir:?top_srcdir is not set (make check exports it)}"
: "${top_builddir:?top_builddir is not set (make check exports it)}"

# Byte-order sorting and messages, whatever the caller's locale.
LC_ALL=C
export LC_ALL
# Terminal width (nettrace-tree cuts names to COLUMNS): golden outputs have no limit.
unset COLUMNS

E2E=$top_srcdir/tests/e2e
EXPECTED=$E2E/expected
TRACES=$top_srcdir/data/traces
INFO=$top_builddir/tools/nettrace-info

# The real traces of data/traces (EXPECTED.md section 5), relative to $TRACES.
TRACE_FILES="
perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
perfview/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace
perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace
perfview/mixed_managed_external_samples.nettrace
perfview/only_managed_samples.nettrace
pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
sentry-dotnet/sample.nettrace
dotnet-diagnostics/trace-2019-06-28-truncated.nettrace
"
CHECKPOINTS=perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace
TRUNCATED=dotnet-diagnostics/trace-2019-06-28-truncated.nettrace

# Scratch directory, removed on exit.
T=$(mktemp -d "${TMPDIR:-/tmp}/nt-e2e.XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM

tap_n=0
tap_failed=0

# pass DESC / fail DESC: one TAP result line.
pass() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}
fail() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}
# diag TEXT...: TAP comment lines (each line of the arguments prefixed with "# ").
diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}
# skip DESC REASON
skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}
# done_testing: prints the plan and exits 0 when every test passed.
done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ] && exit 0
	exit 1
}

# sampler_built: true unless configure left the sampler out (--disable-sampler, or a host
# it does not support): tests that need nettrace-record or libnettrace-sampler skip then.
sampler_built() {
	[ "${NT_SAMPLER:-yes}" != no ]
}

# need_tool PATH: bails out when a tool was not built.
need_tool() {
	if [ ! -x "$1" ]; then
		echo "Bail out! $1 is not built"
		exit 1
	fi
}

# run CMD...: runs CMD with stdout in $T/out, stderr in $T/err and the exit code in $rc.
run() {
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
}

# is GOT WANT DESC
is() {
	if [ "$1" = "$2" ]; then
		pass "$3"
	else
		fail "$3"
		diag "got:  '$1'" "want: '$2'"
	fi
}

# is_rc WANT DESC: checks $rc from the last run (shows its stderr on failure).
is_rc() {
	if [ "$rc" = "$1" ]; then
		pass "$2"
	else
		fail "$2"
		diag "exit code $rc, want $1; stderr:"
		diag "$(cat "$T/err")"
	fi
}

# is_empty FILE DESC
is_empty() {
	if [ ! -s "$1" ]; then
		pass "$2"
	else
		fail "$2"
		diag "$(head -n 20 "$1")"
	fi
}

# same GOT_FILE WANT_FILE DESC: the two files are byte-identical.
same() {
	if cmp -s "$1" "$2"; then
		pass "$3"
	else
		fail "$3"
		diag "$(diff -u "$2" "$1" | head -n 60)"
	fi
}

# golden GOT_FILE EXPECTED_FILE DESC: like same(), or rewrites EXPECTED_FILE when
# NT_UPDATE_GOLDEN=1.
golden() {
	if [ "${NT_UPDATE_GOLDEN:-0}" = 1 ]; then
		mkdir -p "$(dirname "$2")" && cp "$1" "$2"
		pass "$3 (golden file rewritten)"
		return
	fi
	if [ ! -f "$2" ]; then
		fail "$3"
		diag "missing golden file $2 (NT_UPDATE_GOLDEN=1 creates it)"
		return
	fi
	same "$1" "$2" "$3"
}

# flatten JSON_FILE OUT_FILE: "path<TAB>value" lines; returns non-zero on invalid JSON.
flatten() {
	awk -f "$E2E/json-flatten.awk" "$1" >"$2"
}
