#!/bin/sh
# SPDX-License-Identifier: MIT
# t704-record-pprof.sh - the pprof export of a recorded native program, read by go tool
# pprof (the oracle): one Mapping per module with its address range, file offset, path and
# build id (equal to readelf's), every native Location at a real address inside its
# module's Mapping; "-top" names equal to nettrace-tree's (pprof marks inlined functions
# "(inline)"); "-list" annotates the source lines of mandel_point and "-disasm" its
# instructions, with the function's time. The program is examples/nettrace-example.c built
# here without PIE: go tool pprof (Go's bundled copy, unlike the standalone pprof) does not
# relocate addresses in position-independent objects for -disasm. Skipped without go.
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-record.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
FLAME=$top_builddir/tools/nettrace-flame
if ! command -v go >/dev/null 2>&1 || ! go tool pprof -h >/dev/null 2>&1; then
	skip "go tool pprof on a recorded program" "go not found (Debian: golang-go)"
	done_testing
fi
HOME=${HOME:-$T}
export HOME
PROG=$T/ex
if ! ${CC:-cc} -O1 -g -no-pie -fno-pie -pthread -o "$PROG" "$top_srcdir/examples/nettrace-example.c" -lm 2>"$T/cc.err"; then
	skip "go tool pprof on a recorded program" "cannot build a non-PIE program: $(head -1 "$T/cc.err")"
	done_testing
fi
record_q -F 1000 -o "$T/ex.nettrace" -- "$PROG" 1
is_rc 0 "nettrace-record runs the example"
run "$FLAME" --format pprof -o "$T/ex.pb.gz" "$T/ex.nettrace"
is_rc 0 "pprof export exits 0"

# -raw: the mappings and locations
go tool pprof -raw "$T/ex.pb.gz" >"$T/raw" 2>"$T/raw.err"
bid=$(readelf -n "$PROG" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
off=$(readelf -lW "$PROG" | awk '$1 == "LOAD" && / R?W?E / { print $2; exit }')
line=$(grep " $PROG $bid " "$T/raw")
if [ -n "$line" ]; then
	pass "the program has a Mapping with its path and build id ($bid)"
else
	fail "the program has a Mapping with its path and build id"
	diag "$(sed -n '/^Mappings/,$p' "$T/raw")"
fi
moff=$(printf '%s\n' "$line" | sed 's/^ *[0-9]*: *[^/]*\/[^/]*\/\(0x[0-9a-f]*\) .*/\1/')
is "$(printf '%d' "$moff")" "$(printf '%d' "$off")" "its file offset is the executable segment's ($off)"
grep -q ' /lib/.*libc\.so\.6 [0-9a-f]\{40\} ' "$T/raw" && pass "libc has a Mapping with its build id" ||
	fail "libc has a Mapping with its build id"
# every Location of a native Mapping has an address in it (hex compared as 16-digit text)
awk 'function h(x) { sub(/^0x/, "", x); while (length(x) < 16) x = "0" x; return x }
	/^Locations/ { l = 1; next } /^Mappings/ { l = 0; m = 1; next }
	l && $3 ~ /^M=/ { id = $3; sub(/M=/, "", id); if (id != 1) { n++; addr[n] = h($2); map[n] = id } }
	m && $1 ~ /^[0-9]+:$/ { id = $1; sub(/:/, "", id); split($2, r, "/"); lo[id] = h(r[1]); hi[id] = h(r[2]) }
	END { for (i = 1; i <= n; i++) if (addr[i] < lo[map[i]] || addr[i] >= hi[map[i]]) bad++
		printf "%d %d\n", n, bad }' "$T/raw" >"$T/locs"
read -r nloc badloc <"$T/locs"
[ "$nloc" -gt 10 ] && pass "$nloc native Locations with addresses" || fail "native Locations with addresses ($nloc)"
is "$badloc" 0 "every native address is inside its module's Mapping"

# -top: the names of nettrace-tree
go tool pprof -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 -unit=ns "$T/ex.pb.gz" 2>/dev/null |
	awk '/^ *flat  *flat%/ { go = 1; next }
	     go && NF >= 6 { n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", n); sub(/ \(inline\)$/, "", n); print n }' |
	sort -u >"$T/pn"
"$TREE" --top 1000000 "$T/ex.nettrace" 2>/dev/null |
	awk '/^Top .* by self/ { go = 1; next } /^$/ { go = 0 }
	     go && /%/ && !/^  self%/ { n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ +]+ +[^ ]+ +[^ ]+  /, "", n); print n }' |
	sort -u >"$T/tn"
"$TREE" --top 1000000 --unit samples "$T/ex.nettrace" 2>/dev/null |
	awk '/^Top .* by self/ { go = 1; next } /^$/ { go = 0 }
	     go && /%/ && !/^  self%/ { n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", n); print n }' |
	sort -u >"$T/tn"
same "$T/pn" "$T/tn" "go tool pprof -top names the functions as nettrace-tree does ($(wc -l <"$T/tn"))"

# -list and -disasm of the hottest function of the example
go tool pprof -list 'mandel_point' "$T/ex.pb.gz" >"$T/list" 2>&1
grep -q 'ROUTINE =* ex!mandel_point in .*nettrace-example.c' "$T/list" &&
	grep -q '^ *[0-9.]*m\?s .* [0-9]*:.*zr \* zr + zi \* zi' "$T/list" &&
	pass "-list annotates mandel_point's source lines" || { fail "-list annotates mandel_point"; diag "$(head -20 "$T/list")"; }
go tool pprof -disasm 'mandel_point' "$T/ex.pb.gz" >"$T/dis" 2>&1
grep -q '^ROUTINE =* mandel_point' "$T/dis" && grep -q '^ *[0-9.][0-9.]*m\?s  *[0-9.]*m\?s  *[0-9a-f]*: [A-Z]' "$T/dis" &&
	pass "-disasm shows mandel_point's instructions with their samples" || { fail "-disasm"; diag "$(head -20 "$T/dis")"; }
t_dis=$(sed -n 's/^ *\([0-9.]*m\?s\) *[0-9.]*m\?s (flat, cum).*/\1/p' "$T/dis" | head -1)
t_list=$(sed -n 's/^ *\([0-9.]*m\?s\) *[0-9.]*m\?s (flat, cum).*/\1/p' "$T/list" | head -1)
# (-disasm counts the addresses inside the ELF symbol, -list the lines DWARF gives the
# function: a sample or two may fall on either side of that difference)
secs() { case $1 in *ms) echo "${1%ms}" | awk '{ print $1 / 1000 }' ;; *s) echo "${1%s}" ;; esac; }
if [ -n "$t_dis" ] && awk -v a="$(secs "$t_dis")" -v b="$(secs "$t_list")" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.05 * b) }'; then
	pass "-disasm and -list give mandel_point the same time within 5% ($t_dis, $t_list)"
else
	fail "-disasm and -list give mandel_point the same time ($t_dis, $t_list)"
fi
done_testing
