#!/bin/sh
# SPDX-License-Identifier: MIT
# t761-jobs-identical.sh - --jobs changes how a trace is read (a decoding thread next to the
# aggregating one), never what comes out: for every real trace of data/traces, and in
# every compat mode, nettrace-fold, nettrace-tree, nettrace-flame (speedscope, pprof),
# nettrace-info (text, JSON: its read with symbols) and nettrace-sql (every table of the
# database, row by row) give byte-identical output, stderr and exit code with --jobs 1, 2 and 3; the same for
# two files at once, a gzip-compressed copy, NETTRACE_JOBS, and a truncated trace (its
# warning and offset); and the same read in chunks of 4 KiB by two readers (nettrace-info's
# counts too: its hook reads the second reader's chunks on contexts of their own). Standard
# input is read on one thread whatever --jobs says.
. "$top_srcdir/tests/e2e/lib.sh"

FOLD=$top_builddir/tools/nettrace-fold
TREE=$top_builddir/tools/nettrace-tree
FLAME=$top_builddir/tools/nettrace-flame
INFO=$top_builddir/tools/nettrace-info
SQL=$top_builddir/tools/nettrace-sql
need_tool "$INFO"
need_tool "$SQL"
need_tool "$FOLD"
need_tool "$TREE"
need_tool "$FLAME"

# identical DESC CMD...: CMD --jobs 1 against --jobs 2 and 3 (output, stderr, exit code).
identical() {
	desc=$1
	shift
	"$@" --jobs 1 >"$T/o1" 2>"$T/e1"
	r1=$?
	ok=1
	for j in 2 3; do
		"$@" --jobs $j >"$T/o$j" 2>"$T/e$j"
		rj=$?
		if [ "$rj" != "$r1" ] || ! cmp -s "$T/o1" "$T/o$j" || ! cmp -s "$T/e1" "$T/e$j"; then
			ok=0
			diag "--jobs $j: exit $rj (--jobs 1: $r1)" "$(diff "$T/o1" "$T/o$j" | head -n 5)" \
				"$(diff "$T/e1" "$T/e$j" | head -n 5)"
		fi
	done
	# traces without samples print nothing but say so on stderr
	if [ "$ok" = 1 ] && { [ -s "$T/o1" ] || [ -s "$T/e1" ]; }; then
		pass "$desc: --jobs 1, 2, 3 identical"
	elif [ "$ok" = 1 ]; then
		fail "$desc: --jobs 1, 2, 3 identical, but empty (exit $r1: $(head -n 2 "$T/e1"))"
	else
		fail "$desc: --jobs 1, 2, 3 identical"
	fi
}

# flame FORMAT ARGS...: nettrace-flame's file for FORMAT, on standard output
flame() {
	fmt=$1
	shift
	rm -f "$T/flame.out"
	"$FLAME" --format "$fmt" -o "$T/flame.out" "$@" || return $?
	od -An -v -tx1 "$T/flame.out"
}

# sqldump ARGS...: nettrace-sql's import of ARGS into a new database, every table's rows
# in rowid order, as CSV, on standard output (the import's messages on stderr)
sqldump() {
	rm -f "$T/dump.db"
	"$SQL" -o "$T/dump.db" "$@" || return $?
	for tab in $("$SQL" --raw "$T/dump.db" -e \
		"SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); do
		echo "== $tab"
		"$SQL" --csv "$T/dump.db" -e "SELECT * FROM $tab ORDER BY rowid" || return $?
	done
}

n=0
for f in $(cd "$TRACES" && find . -name '*.nettrace' | sed 's|^\./||' | sort); do
	p=$TRACES/$f
	n=$((n + 1))
	identical "$f fold" "$FOLD" "$p"
	identical "$f fold --unit samples --per-thread" "$FOLD" --unit samples --per-thread "$p"
	identical "$f fold --compat=pyroscope" "$FOLD" --compat=pyroscope "$p"
	identical "$f fold --compat=traceevent" "$FOLD" --compat=traceevent "$p"
	identical "$f tree" "$TREE" "$p"
	identical "$f flame speedscope" flame speedscope "$p"
	identical "$f flame pprof" flame pprof "$p"
	identical "$f info" "$INFO" "$p"
	identical "$f info --json" "$INFO" --json "$p"
	identical "$f sql" sqldump "$p"
done
[ "$n" -ge 10 ] && pass "$n real traces compared" || fail "only $n real traces found in $TRACES"

SENTRY=$TRACES/sentry-dotnet/sample.nettrace
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace
identical "two files" "$FOLD" --per-thread "$SENTRY" "$MIXED"
if command -v gzip >/dev/null 2>&1; then
	gzip -c "$SENTRY" >"$T/s.nettrace.gz"
	identical "gzip input" "$FOLD" "$T/s.nettrace.gz"
else
	skip "gzip input" "gzip is not installed"
fi
# a trace cut in the middle of a block: the warning names the same offset
size=$(wc -c <"$MIXED")
head -c $((size / 2)) "$MIXED" >"$T/cut.nettrace"
identical "truncated trace" "$FOLD" "$T/cut.nettrace"
identical "truncated trace info" "$INFO" "$T/cut.nettrace"
if grep -q "offset\|byte" "$T/e1"; then
	pass "truncated trace: a warning with the offset"
else
	fail "truncated trace: a warning with the offset"
	diag "$(cat "$T/e1")"
fi

# Chunks (profile-chunks.c): with --jobs 2 or more, a trace file over twice the chunk size
# is read in chunks by two readers whose partial profiles are merged; chunks of 4 KiB make
# every bundled trace such a file, cut in up to hundreds of chunks.
export NETTRACE_CHUNK_BYTES=4096
for f in $(cd "$TRACES" && find . -name '*.nettrace' | sed 's|^\./||' | sort); do
	p=$TRACES/$f
	identical "$f fold, 4 KiB chunks" "$FOLD" "$p"
	identical "$f fold --compat=pyroscope, 4 KiB chunks" "$FOLD" --compat=pyroscope "$p"
	identical "$f tree --by-category, 4 KiB chunks" "$TREE" --by-category "$p"
	identical "$f flame speedscope, 4 KiB chunks" flame speedscope "$p"
	identical "$f flame pprof, 4 KiB chunks" flame pprof "$p"
	identical "$f info, 4 KiB chunks" "$INFO" "$p"
	identical "$f info --json, 4 KiB chunks" "$INFO" --json "$p"
done
identical "truncated trace, 4 KiB chunks" "$FOLD" "$T/cut.nettrace"
identical "truncated trace, info --json, 4 KiB chunks" "$INFO" --json "$T/cut.nettrace"
unset NETTRACE_CHUNK_BYTES

# NETTRACE_JOBS, and its bad values
NETTRACE_JOBS=2 "$FOLD" "$SENTRY" >"$T/env2" 2>&1
"$FOLD" --jobs 1 "$SENTRY" >"$T/env1" 2>&1
same "$T/env2" "$T/env1" "NETTRACE_JOBS=2: the output of --jobs 1"
NETTRACE_JOBS=x run "$FOLD" "$SENTRY"
is_rc 1 "NETTRACE_JOBS=x: usage error"
run "$FOLD" --jobs 0 "$SENTRY"
is_rc 1 "--jobs 0: usage error"
run "$FOLD" --jobs 2x "$SENTRY"
is_rc 1 "--jobs 2x: usage error"
run "$SQL" --jobs 0 "$SENTRY" -e "SELECT 1"
is_rc 1 "nettrace-sql --jobs 0: usage error"
NETTRACE_JOBS=x run "$INFO" "$SENTRY"
is_rc 1 "nettrace-info, NETTRACE_JOBS=x: usage error"
NETTRACE_JOBS=x run "$INFO" --no-symbols "$SENTRY"
is_rc 0 "nettrace-info --no-symbols (one thread): NETTRACE_JOBS not read"
# standard input (one thread: a pipe)
"$FOLD" --jobs 2 - <"$SENTRY" >"$T/stdin" 2>&1
"$FOLD" --jobs 1 "$SENTRY" >"$T/file" 2>&1
same "$T/stdin" "$T/file" "--jobs 2 from standard input: the same folded stacks"
"$INFO" --jobs 2 - <"$SENTRY" 2>&1 | sed 1d >"$T/istdin"
"$INFO" --jobs 1 "$SENTRY" 2>&1 | sed 1d >"$T/ifile"
same "$T/istdin" "$T/ifile" "nettrace-info --jobs 2 from standard input: the same summary"
done_testing
