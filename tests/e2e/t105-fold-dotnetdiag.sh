#!/bin/sh
# SPDX-License-Identifier: MIT
# t105-fold-dotnetdiag.sh - --compat=pyroscope prints what pyroscope dotnetdiag itself
# prints (its SampleProfiler through bench/dotnetdiag-fold.go), sorted, on every bundled
# trace dotnetdiag reads, with and without --managed-only. Runs only where dotnetdiag is
# at hand: DOTNETDIAG (the driver, built) or DOTNETDIAG_SRC (a dotnetdiag checkout, the
# driver is built with go, offline); dotnetdiag is not in the tree and CI has no checkout,
# so there it skips. t100 checks the goldens that dotnetdiag ships.
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FOLD"

DD=${DOTNETDIAG-}
if [ -z "$DD" ] && [ -n "${DOTNETDIAG_SRC-}" ]; then
	if ! command -v go >/dev/null 2>&1; then
		skip "dotnetdiag" "DOTNETDIAG_SRC is set but go is not installed"
		done_testing
	fi
	gp=$T/gopath
	mkdir -p "$gp/src/github.com/pyroscope-io" &&
		ln -s "$(cd "$DOTNETDIAG_SRC" && pwd)" "$gp/src/github.com/pyroscope-io/dotnetdiag" ||
		{ echo "Bail out! cannot lay out $gp"; exit 1; }
	if GO111MODULE=off GOPATH=$gp GOFLAGS= go build -o "$T/dotnetdiag-fold" \
		"$top_srcdir/bench/dotnetdiag-fold.go" >"$T/go.log" 2>&1; then
		DD=$T/dotnetdiag-fold
		pass "bench/dotnetdiag-fold.go builds against $DOTNETDIAG_SRC"
	else
		fail "bench/dotnetdiag-fold.go builds against $DOTNETDIAG_SRC"
		diag "$(tail -n 20 "$T/go.log")"
		done_testing
	fi
fi
if [ -z "$DD" ]; then
	skip "dotnetdiag" "no dotnetdiag (set DOTNETDIAG to the driver or DOTNETDIAG_SRC to a checkout)"
	done_testing
fi

# The traces dotnetdiag reads (it stops at the truncated 2019 file and cannot read V6).
# The sentry trace was taken on Windows: Go's filepath.Base splits module paths on '\'
# only on Windows, so dotnetdiag on Linux prints "C:\...\Module!"; our module names are
# the file names whatever the separator, as the agent (on Windows) prints them.
for f in pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace \
	dotnet10/dotnet-trace-exceptions.nettrace dotnet10/file-session-lock.nettrace \
	perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace \
	perfview/mixed_managed_external_samples.nettrace perfview/only_managed_samples.nettrace \
	sentry-dotnet/sample.nettrace; do
	for m in "" managed-only; do
		"$DD" ${m:+-$m} "$TRACES/$f" >"$T/dd" 2>"$T/dd.err" ||
			{ fail "dotnetdiag reads $f"; diag "$(cat "$T/dd.err")"; continue; }
		sed -E 's/(^|;)[^;!]*\\/\1/g' "$T/dd" | sort >"$T/want"
		"$FOLD" --compat=pyroscope ${m:+--$m} "$TRACES/$f" 2>/dev/null | sort >"$T/got"
		same "$T/got" "$T/want" "$f${m:+ --$m}: --compat=pyroscope = dotnetdiag ($(wc -l <"$T/want") stacks)"
	done
done
done_testing
