#!/bin/sh
# SPDX-License-Identifier: MIT
# t900-reject-corpus.sh - every file of the rejected-input corpus is read without a crash,
# hang or internal error, and ends the way its name says (tests/corpus/gen-corrupt.c):
#   ok-*     read to the end, no error, no truncation
#   trunc-*  no error, truncation reported with an offset
#   bad-*    exit 2 with "read-all: FILE: at byte N (0xN): message"
#   any-*    ok, truncated or exit 2 (byte flips that may still be valid)
# plus the saved fuzzer reproducers in tests/corpus/regress/ (ok, truncated or exit 2).
# The corpus is generated here, in the scratch directory; tests/fuzz/read-all reads each
# file in timestamp and in file order and reports a disagreement as a bug (exit 4); a
# sample is read again through a pipe.
. "$top_srcdir/tests/e2e/lib.sh"
GEN=$top_builddir/tests/corpus/gen-corrupt
READ=$top_builddir/tests/fuzz/read-all
need_tool "$GEN"
need_tool "$READ"

mkdir "$T/c" || exit 1
"$GEN" -q "$TRACES" "$T/c"
is $? 0 "gen-corrupt writes the corpus"
cp "$top_srcdir"/tests/corpus/regress/*.nettrace "$T/c/" 2>/dev/null
cd "$T/c" || exit 1
ls >"$T/files"
is "$(grep -c -v -E '^(ok|trunc|bad|any|regress)-' "$T/files")" 0 "every corpus file has a known prefix"

# One read-all process for the whole corpus (fast under the sanitizers too); if it dies,
# the files it did not report are run one by one to name the culprit.
"$READ" -t $(cat "$T/files") >"$T/table" 2>"$T/stderr"
rc=$?
if [ "$rc" -ge 128 ] || [ "$(wc -l <"$T/table")" -ne "$(wc -l <"$T/files")" ]; then
	fail "read-all survives the corpus (exit $rc)"
	cut -f1 "$T/table" >"$T/done"
	for f in $(grep -v -x -F -f "$T/done" "$T/files"); do
		"$READ" -t "$f" >>"$T/table" 2>"$T/one.err"
		r=$?
		[ "$r" -ge 128 ] && diag "$f: killed by signal $((r - 128))" "$(tail -n 5 "$T/one.err")"
	done
else
	pass "read-all survives the corpus ($(wc -l <"$T/files") files)"
fi

# check PREFIX AWK-CONDITION DESC: every file with PREFIX satisfies the condition on its
# table line ($2 status, $3 events, $4 offset).
check() {
	awk -F '\t' -v p="$1-" "index(\$1, p) == 1 && !($2) { print \$1 \": \" \$2 \" \" \$3 \" \" \$4 }" \
		"$T/table" >"$T/bad"
	n=$(awk -F '\t' -v p="$1-" 'index($1, p) == 1' "$T/table" | wc -l | tr -d ' ')
	if [ "$n" -gt 0 ] && [ ! -s "$T/bad" ]; then
		pass "$3 ($n files)"
	else
		fail "$3 ($n files)"
		diag "$(head -n 20 "$T/bad")"
	fi
}
check ok '$2 == "ok"' "ok-* files are read without error or truncation"
check trunc '$2 == "truncated" && $4 != "-"' "trunc-* files report truncation with an offset"
check bad '$2 == "error-2" && $4 != "-"' "bad-* files fail as bad input, with an offset"
check any '$2 == "ok" || $2 == "truncated" || ($2 == "error-2" && $4 != "-")' \
	"any-* files end cleanly (read, truncated, or bad input with an offset)"
check regress '$2 == "ok" || $2 == "truncated" || ($2 == "error-2" && $4 != "-")' \
	"regress-* reproducers end cleanly"

# No internal errors (the two reading orders disagree) and every error line is well formed.
is "$(grep -c -v -E '^read-all: [^:]+: at byte [0-9]+ \(0x[0-9a-f]+\): [^ ].*$' "$T/stderr")" 0 \
	"every error line is 'read-all: FILE: at byte N (0xN): message'"
is "$(awk -F '\t' '$2 == "bug"' "$T/table" | wc -l | tr -d ' ')" 0 \
	"timestamp order and file order agree on every file"

# A sample through a pipe (the reader cannot know the size; compressed input is detected
# on the stream): the same outcome, event count and offset as from the file.
ls ok-* bad-ec-* trunc-ec-cut-*[05].nettrace *.gz *.zip 2>/dev/null | sort -u >"$T/some"
"$READ" -p -t $(cat "$T/some") >"$T/pipe" 2>/dev/null
awk -F '\t' 'NR == FNR { want[$1] = 1; next } $1 in want' "$T/some" "$T/table" |
	sort >"$T/from-file"
sort "$T/pipe" >"$T/from-pipe"
same "$T/from-pipe" "$T/from-file" "$(wc -l <"$T/some" | tr -d ' ') files read through a pipe end as when read from the file"

# Cuts of the 582-byte file: inside the stream header or the Trace object they fail; from
# the first block on they are truncations that deliver the three events only once the
# EventBlock (bytes 333..527) is complete.
awk -F '\t' '/^(bad|trunc)-ec-cut-/ {
	n = substr($1, length($1) - 12, 4) + 0
	want = n < 102 ? "error-2" : "truncated"
	ev = n >= 528 ? 3 : 0
	if ($2 != want || $3 != ev) print $1 ": " $2 " " $3 " events, want " want " " ev
}' "$T/table" >"$T/bad"
is_empty "$T/bad" "every prefix of the 582-byte file: error inside the header, else all complete events"
done_testing
