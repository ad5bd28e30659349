#!/bin/sh
# SPDX-License-Identifier: MIT
# t706-tool-errors.sh - one error style, one exit-code table and one set of short options
# across the tools (tools/common.c), each case of issue 15 with its exact message and exit
# code: a missing file and a directory read the same in every tool (the file named once);
# nettrace-flame refuses an empty file and a binary (ELF, SQLite) instead of drawing an
# empty graph or calling it malformed folded text, and will not write an SVG or gzip to a
# terminal; an SQL error in the query is a usage error (1), not a system error (3); bad
# options are worded alike (nettrace-collect and nettrace-top too, issue 17); -j is
# --json, -n a row count, -e the SQL of nettrace-sql (-q, its old letter, still read);
# --rules adds to the built-in rules unless --no-default-rules; nettrace-fold
# --print-rules prints data/rules/default.rules.
. "$top_srcdir/tests/e2e/lib.sh"
TOOLS=$top_builddir/tools
FLAME=$TOOLS/nettrace-flame
SQL=$TOOLS/nettrace-sql
SENTRY=$TRACES/sentry-dotnet/sample.nettrace
MIXED=$TRACES/perfview/mixed_managed_external_samples.nettrace

# check DESC RC MESSAGE CMD...: exit code and the whole of stderr
check() {
	_d=$1 _rc=$2 _msg=$3
	shift 3
	run "$@"
	is_rc "$_rc" "$_d: exit $_rc"
	is "$(cat "$T/err")" "$_msg" "$_d: the message"
}

for t in info fold tree sql; do
	q=
	[ "$t" = sql ] && q="-e SELECT"
	check "nettrace-$t, missing file" 3 "nettrace-$t: cannot open $T/nope.nettrace: No such file or directory" \
		"$TOOLS/nettrace-$t" $q "$T/nope.nettrace"
	check "nettrace-$t, a directory" 3 "nettrace-$t: cannot read $T: Is a directory" "$TOOLS/nettrace-$t" $q "$T"
done
check "nettrace-flame, missing file" 3 "nettrace-flame: cannot open $T/nope.nettrace: No such file or directory" \
	"$FLAME" -o "$T/x.svg" "$T/nope.nettrace"
check "nettrace-flame, a directory" 3 "nettrace-flame: cannot read $T: Is a directory" "$FLAME" -o "$T/x.svg" "$T"
check "nettrace-fold -o DIRECTORY" 3 "nettrace-fold: cannot open $T: Is a directory (an output file is needed)" \
	"$TOOLS/nettrace-fold" -o "$T" "$SENTRY"
check "nettrace-flame -o DIRECTORY" 3 "nettrace-flame: cannot open $T: Is a directory (an output file is needed)" \
	"$FLAME" -o "$T" "$SENTRY"
check "missing rules file" 3 "nettrace-tree: cannot open $T/nope.rules: No such file or directory" \
	"$TOOLS/nettrace-tree" --rules "$T/nope.rules" "$SENTRY"

# nettrace-flame: what is neither a trace nor folded stacks
: >"$T/empty"
check "nettrace-flame, an empty file" 2 "nettrace-flame: $T/empty: empty input: neither a nettrace trace nor folded stacks" \
	"$FLAME" -o "$T/x.svg" "$T/empty"
[ -f "$T/x.svg" ] && fail "no SVG for an empty file" || pass "no SVG for an empty file"
cp "$top_builddir/tools/.libs/nettrace-info" "$T/elf" 2>/dev/null || cp "$TOOLS/nettrace-info" "$T/elf"
if [ "$(head -c 4 "$T/elf" | od -An -c | tr -d ' ')" = '177ELF' ]; then
	check "nettrace-flame, an ELF file" 2 "nettrace-flame: $T/elf: an ELF file, not a nettrace trace or folded stacks" \
		"$FLAME" -o "$T/x.svg" "$T/elf"
else
	skip "nettrace-flame, an ELF file" "no ELF file at hand"
fi
"$SQL" -o "$T/db.sqlite" "$SENTRY" 2>/dev/null
check "nettrace-flame, an SQLite database" 2 \
	"nettrace-flame: $T/db.sqlite: an SQLite database, not a nettrace trace or folded stacks (query it with nettrace-sql)" \
	"$FLAME" -o "$T/x.svg" "$T/db.sqlite"
printf 'a;b 1\n\000\001\002 3\n' >"$T/bin"
check "nettrace-flame, binary data" 2 "nettrace-flame: $T/bin: binary data, not a nettrace trace or folded stacks" \
	"$FLAME" -o "$T/x.svg" "$T/bin"

# an SVG or gzip'd pprof is not written to a terminal (script(1) gives the tool one)
if command -v script >/dev/null 2>&1 && script -qc true /dev/null >/dev/null 2>&1; then
	for f in svg pprof; do
		what="an SVG image"
		[ "$f" = pprof ] && what="a gzip'd pprof profile"
		script -qc "'$FLAME' --format $f '$SENTRY' 2>'$T/err'; echo \"rc=\$?\" >'$T/rc'" /dev/null >"$T/tty" 2>&1
		is "$(cat "$T/rc")" "rc=1" "--format $f to a terminal: exit 1"
		is "$(head -1 "$T/err")" "nettrace-flame: will not write $what to a terminal: use -o FILE or redirect standard output" \
			"--format $f to a terminal: the message"
	done
	script -qc "'$FLAME' --format speedscope '$SENTRY' >/dev/null 2>'$T/err'; echo \"rc=\$?\" >'$T/rc'" /dev/null >/dev/null 2>&1
	is "$(cat "$T/rc")" "rc=0" "speedscope (text) may go to a terminal"
else
	skip "SVG and gzip to a terminal" "script(1) cannot give a terminal here"
fi

# SQL errors: the query is the user's (1); a file that is no database is bad input (2)
check "SQL syntax error" 1 'nettrace-sql: SQL error: near "SELEC": syntax error (at byte 0 of the query)' \
	"$SQL" "$SENTRY" -e "SELEC 1"
check "SQL, no such table" 1 "nettrace-sql: SQL error: no such table: nope" "$SQL" "$SENTRY" -e "SELECT * FROM nope"

# one wording of bad options, in every tool (nettrace-record is not built without the
# sampler: configure --disable-sampler)
tools="info fold tree flame sql"
if sampler_built; then
	tools="$tools record"
else
	skip "nettrace-record's options" "the sampler is not built (configure --disable-sampler)"
fi
for t in $tools collect top; do
	check "nettrace-$t --bogus" 1 "nettrace-$t: unrecognized option '--bogus'
Try 'nettrace-$t --help'." "$TOOLS/nettrace-$t" --bogus
	case $t in info | top) continue ;; esac # (no -o)
	check "nettrace-$t -o without its argument" 1 "nettrace-$t: option '-o' requires an argument
Try 'nettrace-$t --help'." "$TOOLS/nettrace-$t" -o
done
# the attaching tools had a dialect of their own ("bad option '-p' or missing argument")
for t in collect top; do
	check "nettrace-$t --pid without its argument" 1 \
		"nettrace-$t: option '--pid' requires an argument
Try 'nettrace-$t --help'." "$TOOLS/nettrace-$t" --pid
	check "nettrace-$t -z" 1 "nettrace-$t: invalid option '-z'
Try 'nettrace-$t --help'." "$TOOLS/nettrace-$t" -z
done
check "nettrace-top --once=3" 1 "nettrace-top: option '--once' does not take an argument
Try 'nettrace-top --help'." "$TOOLS/nettrace-top" --once=3
check "nettrace-info -o" 1 "nettrace-info: invalid option '-o'
Try 'nettrace-info --help'." "$TOOLS/nettrace-info" -o x

# one set of short options: -j JSON, -n a row count, -e SQL (-q still read), no tree -i
for t in info tree; do
	run "$TOOLS/nettrace-$t" -j "$SENTRY"
	is_rc 0 "nettrace-$t -j exits 0"
	flatten "$T/out" "$T/flat" && pass "nettrace-$t -j prints JSON" || fail "nettrace-$t -j prints JSON"
done
run "$SQL" -j -e 'SELECT 7 AS x' "$SENTRY"
is "$(tr -d '\n' <"$T/out")" '[{"x":7}]' "nettrace-sql -j -e SQL"
run "$SQL" -q 'SELECT 8 AS x' --raw "$SENTRY"
is "$(cat "$T/out")" 8 "nettrace-sql -q SQL (the old letter) still runs the query"
"$SQL" --help >"$T/help"
grep -q '^  -e, --query SQL' "$T/help" && ! grep -q '^  -q' "$T/help" &&
	pass "nettrace-sql --help documents -e, not -q" || fail "nettrace-sql --help documents -e"
run "$TOOLS/nettrace-tree" -n 2 --unit samples "$SENTRY"
is "$(grep -c '^ *[0-9.]*%  ' "$T/out")" 4 "nettrace-tree -n 2: two rows per list"
run "$TOOLS/nettrace-info" --events -n 2 "$SENTRY"
is_rc 0 "nettrace-info --events -n 2 exits 0"
check "nettrace-tree -i (no short option: -i is nettrace-record's interval)" 1 "nettrace-tree: invalid option '-i'
Try 'nettrace-tree --help'." "$TOOLS/nettrace-tree" -i "$SENTRY"
# the short options each tool has (a long-only option must not get a letter by accident)
shorts() { "$TOOLS/nettrace-$1" --help | sed -n 's/^  -\([a-zA-Z]\), --.*/\1/p' | sort | tr -d '\n'; }
is "$(shorts info)" "Vehjns" "nettrace-info: -e -j -n -s -h -V"
is "$(shorts fold)" "Vhov" "nettrace-fold: -o -v -h -V"
is "$(shorts tree)" "Vdhjnop" "nettrace-tree: -d -j -n -o -p -h -V"
is "$(shorts flame)" "Vhov" "nettrace-flame: -o -v -h -V"
is "$(shorts sql)" "Vehjov" "nettrace-sql: -e -j -o -v -h -V"
sampler_built && is "$(shorts record)" "FVhioq" "nettrace-record: -F -i -o -q -h -V"
for t in $tools collect top; do
	n=$("$TOOLS/nettrace-$t" --help | awk 'length($0) > 79' | wc -l)
	is "$n" 0 "nettrace-$t --help fits 79 columns"
done

# --rules adds to the built-in rules; --no-default-rules drops them; --print-rules
FOLD=$TOOLS/nettrace-fold
run "$FOLD" --print-rules
is_rc 0 "--print-rules exits 0"
same "$T/out" "$top_srcdir/data/rules/default.rules" "--print-rules prints data/rules/default.rules"
"$FOLD" --unit samples --category-frame root "$MIXED" >"$T/builtin"
printf 'sleep *!NoNativeStacks.Program.InnerLoop(*\n' >"$T/app.rules"
"$FOLD" --unit samples --category-frame root --rules "$T/app.rules" "$MIXED" >"$T/added"
"$FOLD" --unit samples --category-frame root --rules "$T/app.rules" --no-default-rules "$MIXED" >"$T/only"
sum_cat() { awk -v c="$2" 'index($0, "[" c "];") == 1 { s += $NF } END { print s + 0 }' "$1"; }
inner=$(awk 'index($0, "InnerLoop(") && index($0, "[sleep];") != 1 { s += $NF } END { print s + 0 }' "$T/builtin")
[ "$inner" -gt 0 ] && pass "InnerLoop has samples outside sleep ($inner)" || fail "InnerLoop has samples"
is "$(sum_cat "$T/added" sleep)" "$(($(sum_cat "$T/builtin" sleep) + inner))" \
	"--rules FILE: the file's rule decides where it matches"
is "$(awk 'index($0, "[wait];") == 1 || index($0, "[io];") == 1 || index($0, "[lock];") == 1 { s += $NF } END { print s + 0 }' "$T/added")" \
	"$(awk 'index($0, "[wait];") == 1 || index($0, "[io];") == 1 || index($0, "[lock];") == 1 { s += $NF } END { print s + 0 }' "$T/builtin")" \
	"--rules FILE: the built-in rules still decide elsewhere"
printf 'wait *!System.Console.ReadLine(*\n' >"$T/rl.rules"
"$FOLD" --unit samples --category-frame root --rules "$T/rl.rules" --no-default-rules "$SENTRY" >"$T/o1"
"$FOLD" --unit samples --category-frame root --no-default-rules "$SENTRY" >"$T/o0"
[ "$(sum_cat "$T/o0" io)" = 0 ] && [ "$(sum_cat "$T/o0" wait)" = 0 ] &&
	pass "--no-default-rules alone: no io or wait from frame rules" ||
	fail "--no-default-rules alone: no io or wait from frame rules"
"$FOLD" --unit samples --category-frame root "$SENTRY" >"$T/b1"
[ "$(sum_cat "$T/b1" io)" -gt 0 ] && pass "the built-in rules find the sentry trace's io" ||
	fail "the built-in rules find the sentry trace's io"
printf 'lok *!X(*\n' >"$T/bad.rules"
check "a bad rule" 2 "nettrace-fold: $T/bad.rules: at byte 0 (0x0): line 1: unknown category 'lok' (expected cpu, lock, io, sleep, wait, gc, external or unknown)" \
	"$FOLD" --rules "$T/bad.rules" "$SENTRY"
done_testing
