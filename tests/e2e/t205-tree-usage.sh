#!/bin/sh
# SPDX-License-Identifier: MIT
# t205-tree-usage.sh - usage errors of nettrace-tree: each bad option or argument exits
# 1 with nothing on stdout, one line naming the problem and the "Try ... --help" line.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
cd "$TRACES" || exit 1

# usage_case MESSAGE ARGS...: exit 1, stdout empty, stderr = "nettrace-tree: MESSAGE" and
# the --help hint.
usage_case() {
	_msg=$1
	shift
	run "$TREE" "$@"
	is_rc 1 "$*: exits 1"
	is_empty "$T/out" "$*: nothing on stdout"
	printf 'nettrace-tree: %s\nTry '"'"'nettrace-tree --help'"'"'.\n' "$_msg" >"$T/want"
	same "$T/err" "$T/want" "$*: says '$_msg'"
}

usage_case "unrecognized option '--bogus'" --bogus "$PYRO"
usage_case "invalid option '-z'" -z "$PYRO"
usage_case "option '--depth' requires an argument" "$PYRO" --depth
usage_case "no input file (use - for standard input)" --unit samples
usage_case "invalid --depth value '0' (expected an integer >= 1)" --depth 0 "$PYRO"
usage_case "invalid --depth value 'x' (expected an integer >= 1)" --depth x "$PYRO"
usage_case "invalid --min-percent value '101' (expected a number from 0 to 100)" \
	--min-percent 101 "$PYRO"
usage_case "invalid --min-percent value '-1' (expected a number from 0 to 100)" \
	--min-percent -1 "$PYRO"
usage_case "invalid --top value '0' (expected an integer >= 1)" --top 0 "$PYRO"
usage_case "unknown unit '%' (use samples, ns, us or ms)" --unit % "$PYRO"
usage_case "unknown compatibility mode 'perf' (use none, pyroscope or traceevent)" \
	--compat perf "$PYRO"
usage_case "bad range '5s..1s': end is not after start" --range 5s..1s "$PYRO"
usage_case "bad range '5': expected A..B, A.. or ..B" --range 5 "$PYRO"
usage_case "bad range '1x..2s': start: unknown unit (use ns, us, ms, s or m)" \
	--range 1x..2s "$PYRO"
usage_case "bad thread list '1,,2': expected TID or NAME[,...]" --thread 1,,2 "$PYRO"
usage_case "--top and --hot cannot be combined" --top 3 --hot "$PYRO"
usage_case "--top and --depth cannot be combined" --top 3 --depth 2 "$PYRO"
usage_case "--top and --invert cannot be combined" --invert --top 3 "$PYRO"
usage_case "--top and --per-thread cannot be combined" --top 3 --per-thread "$PYRO"
usage_case "--top and --min-percent cannot be combined" --top 3 --min-percent 1 "$PYRO"
done_testing
