#!/bin/sh
# SPDX-License-Identifier: MIT
# check-api-docs.sh - every public function of the public headers (nettrace.h,
# ntsampler.h) has a comment that states its contract, and every handle type its
# thread-safety rule, so that new functions keep the 1.0 contract. Output: TAP.
#
# The rules, per NT_API / NTS_API prototype and the comment block right above it (a run of
# prototypes without a blank line between them shares the comment above the first):
#  - there is a comment;
#  - a function taking an nt_error says how it fails: an NT_E* code, "fails"/"failure"
#    or "errors" (the reader's, the sink's...);
#  - a function returning a pointer says how long the pointer lives and when it is NULL:
#    "borrowed", "static", "valid until/for", "owned" or "free", and "NULL";
#  - a function returning int without an nt_error says what it returns ("returns",
#    "1 when", "fails", ...);
#  - a constructor (a "**out" or "**pids" argument) names what frees its result
#    ("..._free()", "free()", "close");
#  - a ..._free() function says that it accepts NULL;
#  - an opaque handle ("typedef struct X X;") has "Thread safety" in its own comment, the
#    comment of its constructor, or the section comment it stands in.
# Usage: check-api-docs.sh [HEADER...] (default: the two public headers).
: "${top_srcdir:=.}"

if [ $# -eq 0 ]; then
	set -- "$top_srcdir/libtrace/include/nettrace.h" "$top_srcdir/sampler/ntsampler.h"
fi
n=0 fail=0
for h in "$@"; do
	n=$((n + 1))
	if [ ! -r "$h" ]; then
		echo "not ok $n - $h is readable"
		fail=1
		continue
	fi
	out=$(awk -f - "$h" <<'EOF'
function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
function problem(name, what) { printf "%s:%d: %s: %s\n", FILENAME, declline, name, what; bad++ }
function check_proto(p, c,    name, ret, args, lc) {
	sub(/^NTS?_API[ \t]+/, "", p)
	name = p; sub(/\(.*/, "", name)
	ret = name; sub(/[A-Za-z0-9_]+[ \t]*$/, "", ret)
	sub(/.*[^A-Za-z0-9_]/, "", name)
	args = p; sub(/^[^(]*\(/, "", args)
	lc = tolower(c)
	if (c == "") { problem(name, "no comment above it"); return }
	if (args ~ /nt_error[ \t]*\*/ && lc !~ /nt_e[a-z]+|fail|error/)
		problem(name, "takes an nt_error but its comment says nothing of how it fails")
	if (ret ~ /\*/) {
		if (lc !~ /borrowed|static|valid (until|for)|owned|free/)
			problem(name, "returns a pointer but its comment does not say how long it lives")
		if (c !~ /NULL/)
			problem(name, "returns a pointer but its comment does not say when it is NULL")
	}
	if (ret ~ /^[ \t]*int[ \t]*$/ && args !~ /nt_error[ \t]*\*/ && \
	    lc !~ /return|fail|1 when|1 if|0 when|-1/)
		problem(name, "returns int but its comment does not say what")
	if (args !~ /const[^,]*\*\*[ \t]*out/ && args ~ /\*\*[ \t]*(out|pids)/ && lc !~ /_free\(|free\(|close/)
		problem(name, "creates something but its comment does not say what frees it")
	if (name ~ /_free$/ && lc !~ /accepts null/)
		problem(name, "frees but its comment does not say that it accepts NULL")
	for (t in handle) if (args ~ ("(^|[^A-Za-z0-9_])" t "[ \t]*\\*\\*")) ctor_comment[t] = ctor_comment[t] " " c
}
BEGIN { bad = 0 }
{
	line = $0
	if (incomment) {
		ctext = ctext " " line
		if (line ~ /\*\//) { incomment = 0; cend = NR; if (ctext ~ /-----/) section = ctext }
		next
	}
	if (inproto) {
		ptext = ptext " " line
		if (line ~ /;/) { inproto = 0; check_proto(ptext, pcomment) }
		prev_proto = NR
		next
	}
	if (line ~ /^[ \t]*\/\*/) {
		ctext = line; cstart = NR
		if (line ~ /\*\//) { cend = NR; if (ctext ~ /-----/) section = ctext }
		else incomment = 1
		next
	}
	if (line ~ /^NTS?_API[ \t]/) {
		declline = NR
		if (cend == NR - 1) pcomment = ctext
		else if (prev_proto != NR - 1) pcomment = ""
		ptext = line
		if (line ~ /;/) check_proto(ptext, pcomment)
		else inproto = 1
		prev_proto = NR
		next
	}
	if (line ~ /^typedef struct [A-Za-z0-9_]+ [A-Za-z0-9_]+;/) {
		t = line; sub(/^typedef struct /, "", t); sub(/ .*/, "", t)
		handle[t] = NR
		own = (cend == NR - 1) ? ctext : ""
		handle_comment[t] = own " " section
		next
	}
}
END {
	for (t in handle) {
		all = handle_comment[t] " " ctor_comment[t]
		if (all !~ /[Tt]hread safety/) {
			printf "%s:%d: %s: handle without a \"Thread safety\" rule\n", FILENAME, handle[t], t
			bad++
		}
	}
	exit bad > 0
}
EOF
)
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "ok $n - every public function of $(basename "$h") states its contract"
	else
		echo "not ok $n - every public function of $(basename "$h") states its contract"
		printf '%s\n' "$out" | sed 's/^/#   /'
		fail=1
	fi
done
echo "1..$n"
exit $fail
