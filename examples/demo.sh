#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh - the whole toolkit in one go (./run.sh demo ends with it): record the bundled
# example program (examples/nettrace-example: threads that compute, sleep, contend on a
# lock and wait for I/O) with nettrace-record, then show the recording with
# nettrace-info, nettrace-tree, nettrace-flame and nettrace-sql, when they are built.
#
#   examples/demo.sh [OUTPUT_DIR]     (default: the current directory)
#
# Writes OUTPUT_DIR/demo.nettrace and OUTPUT_DIR/demo.svg. Run from a built tree.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-.}
tools=$top/tools
trace=$out/demo.nettrace

say() { printf '==> %s\n' "$*" >&2; }

[ -x "$tools/nettrace-record" ] && [ -x "$top/examples/nettrace-example" ] || {
	echo "demo.sh: build first (make)" >&2
	exit 1
}
say "nettrace-record -F 1000 -o $trace -- examples/nettrace-example 2"
"$tools/nettrace-record" -F 1000 -o "$trace" -- "$top/examples/nettrace-example" 2 || exit 1
say "nettrace-info $trace"
"$tools/nettrace-info" "$trace" | sed -n '1,/^Truncated/p'
say "nettrace-tree --per-thread --depth 7 --min-percent 1 $trace"
"$tools/nettrace-tree" --per-thread --depth 7 --min-percent 1 "$trace"
if [ -x "$tools/nettrace-flame" ]; then
	say "nettrace-flame $trace -o $out/demo.svg   (open it in a browser)"
	"$tools/nettrace-flame" "$trace" -o "$out/demo.svg"
fi
if [ -x "$tools/nettrace-sql" ]; then
	q="SELECT t.name AS thread, s.category, count(*) AS samples,
	          round(sum(s.weight_ns) / 1e6, 1) AS ms
	   FROM samples s JOIN threads t ON t.id = s.thread_id
	   GROUP BY t.name, s.category ORDER BY t.name, samples DESC"
	say "nettrace-sql $trace -e 'time per thread and category'"
	"$tools/nettrace-sql" "$trace" -e "$q"
fi
