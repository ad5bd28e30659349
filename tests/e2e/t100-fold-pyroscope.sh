#!/bin/sh
# SPDX-License-Identifier: MIT
# t100-fold-pyroscope.sh - --compat=pyroscope reproduces pyroscope dotnetdiag's golden
# folded stacks byte for byte, with and without External time. The goldens are the ones
# shipped by pyroscope-io/dotnetdiag (data/traces/pyroscope-dotnetdiag), not ours.
. "$top_srcdir/tests/e2e/lib.sh"
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FOLD"
d=$TRACES/pyroscope-dotnetdiag
f=$d/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace

run "$FOLD" --compat=pyroscope "$f"
is_rc 0 "--compat=pyroscope exits 0"
same "$T/out" "$d/dotnet-5.0-SampleProfiler-single-thread.txt" \
	"--compat=pyroscope equals pyroscope's golden byte for byte"
is_empty "$T/err" "--compat=pyroscope: nothing on stderr"

run "$FOLD" --compat pyroscope --managed-only "$f"
is_rc 0 "--compat=pyroscope --managed-only exits 0"
same "$T/out" "$d/dotnet-5.0-SampleProfiler-single-thread-managed-only.txt" \
	"--compat=pyroscope --managed-only equals pyroscope's managed-only golden byte for byte"

# -v infers the rate the plain run skips (opts.skip_rate): the same stacks, and the
# interval nettrace-info infers from the same samples.
run "$FOLD" --compat=pyroscope -v "$f"
same "$T/out" "$d/dotnet-5.0-SampleProfiler-single-thread.txt" "--compat=pyroscope -v: the same stacks"
iv=$("$top_builddir/tools/nettrace-info" --json --no-symbols "$f" |
	sed -n 's/.*"inferred_interval_ns": \([0-9.]*\).*/\1/p' | head -1)
want=$(printf '%.0f' "${iv:-0}")
case $(cat "$T/err") in
*"inferred interval $want ns"*) [ "$want" -gt 0 ] && pass "--compat=pyroscope -v infers the interval ($want ns)" ||
	fail "nettrace-info infers no interval" ;;
*) fail "--compat=pyroscope -v infers the interval"; diag "got: $(cat "$T/err")" "want: $want ns" ;;
esac

# The same from standard input.
run sh -c "cat '$f' | '$FOLD' --compat=pyroscope -"
same "$T/out" "$d/dotnet-5.0-SampleProfiler-single-thread.txt" "--compat=pyroscope from stdin"
done_testing
