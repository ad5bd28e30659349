#!/bin/sh
# SPDX-License-Identifier: MIT
# t700-tree-callers.sh - nettrace-tree --callers/--callees against the folded stacks
# (nettrace-fold --unit samples, an independent path through the library: no tree, no
# butterfly code): for the heaviest functions of every bundled trace and of the synthetic
# V5/V6 traces, the function's total and self samples and each caller's and callee's
# total and self samples equal what awk computes from the folded lines (a line counts
# once per caller or callee, "[no caller]" where the function is the root).
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/e2e/lib-tree.sh"
need_tool "$TREE"
FOLD=$top_builddir/tools/nettrace-fold
MKTRACE=$top_builddir/tests/mktrace
cd "$TRACES" || exit 1

"$MKTRACE" 5 "$T/syn5.nettrace" >/dev/null 2>&1 || fail "mktrace 5 writes a trace"
"$MKTRACE" 6 "$T/syn6.nettrace" >/dev/null 2>&1 || fail "mktrace 6 writes a trace"

# butterfly_from_folded FUNC < folded: "side<TAB>name<TAB>samples<TAB>self" lines, side
# "func", "caller" or "callee".
butterfly_from_folded() {
	awk -v fn="$1" '
	{
		c = $NF; line = $0; sub(/ [^ ]*$/, "", line)
		n = split(line, f, ";")
		through = 0; delete seenc; delete seend
		for (i = 1; i <= n; i++) {
			if (f[i] != fn) continue
			if (!through) { through = 1; tot += c }
			if (i == n) self += c
			cl = i > 1 ? f[i - 1] : "[no caller]"
			if (!(cl in seenc)) { seenc[cl] = 1; ct[cl] += c }
			if (i == n) cs[cl] += c
			if (i < n) {
				d = f[i + 1]
				if (!(d in seend)) { seend[d] = 1; dt[d] += c }
				if (i + 1 == n) ds[d] += c
			}
		}
	}
	END {
		printf "func\t%s\t%d\t%d\n", fn, tot, self
		for (k in ct) printf "caller\t%s\t%d\t%d\n", k, ct[k], cs[k]
		for (k in dt) printf "callee\t%s\t%d\t%d\n", k, dt[k], ds[k]
	}'
}

# butterfly_from_json FLAT: the same lines from the flattened --json output.
butterfly_from_json() {
	awk -F '\t' '
	function unq(s) { s = substr(s, 2, length(s) - 2); gsub(/\\"/, "\"", s); gsub(/\\\\/, "\\", s); return s }
	$1 == "function" { fn = unq($2) }
	$1 == "samples" { fs = $2 }
	$1 == "self_samples" { fss = $2 }
	match($1, /^(callers|callees)\[[0-9]+\]\./) {
		side = substr($1, 1, 7) == "callers" ? "caller" : "callee"
		k = substr($1, 1, RLENGTH - 1); fld = substr($1, RLENGTH + 1)
		if (fld == "name") nm[k] = unq($2)
		if (fld == "samples") sm[k] = $2
		if (fld == "self_samples") ss[k] = $2
		sd[k] = side
	}
	END {
		printf "func\t%s\t%d\t%d\n", fn, fs, fss
		for (k in nm) printf "%s\t%s\t%d\t%d\n", sd[k], nm[k], sm[k], ss[k]
	}' "$1"
}

checked=0
for tr in $TRACE_FILES "$T/syn5.nettrace" "$T/syn6.nettrace"; do
	name=$(basename "$tr")
	"$FOLD" --unit samples "$tr" >"$T/folded" 2>/dev/null
	if [ ! -s "$T/folded" ]; then
		diag "$name: no samples"
		continue
	fi
	# the three functions on most samples, and the heaviest leaf
	funcs=$(awk '{ c = $NF; line = $0; sub(/ [^ ]*$/, "", line); n = split(line, f, ";")
		delete s; for (i = 1; i <= n; i++) if (!(f[i] in s)) { s[f[i]] = 1; t[f[i]] += c }
		leaf[f[n]] += c }
		END { for (k in t) printf "%d\t%s\n", t[k], k
		      for (k in leaf) printf "%d\t%s\n", leaf[k], k }' "$T/folded" |
		sort -t "$(printf '\t')" -k1,1nr -k2 | cut -f2 | awk '!seen[$0]++' | head -4)
	printf '%s\n' "$funcs" >"$T/funcs"
	while IFS= read -r fn; do
		butterfly_from_folded "$fn" <"$T/folded" | sort >"$T/want"
		run "$TREE" --unit samples --no-collapse-unresolved --callers "$fn" --callees "$fn" --json "$tr"
		if [ "$rc" != 0 ]; then
			fail "$name: --callers/--callees '$fn' exits 0"
			diag "$(cat "$T/err")"
			continue
		fi
		if ! flatten "$T/out" "$T/flat"; then
			fail "$name: --json is valid JSON"
			continue
		fi
		butterfly_from_json "$T/flat" | sort >"$T/got"
		same "$T/got" "$T/want" "$name: callers and callees of $fn equal the folded stacks'"
		checked=$((checked + 1))
	done <"$T/funcs"
done
[ "$checked" -ge 20 ] && pass "$checked functions checked" || fail "only $checked functions checked"

# The text view: the same totals as the JSON, percentages of the function's total.
run "$TREE" --unit samples --callers 'Program.Work' "$PYRO"
is_rc 0 "--callers REGEX matching one function exits 0"
grep -q '^Function:  mvc-hello-world!Example.Program.Work(int32)$' "$T/out" &&
	pass "the regex names its function" || fail "the regex names its function"
grep -q '^  80\.1%    80\.1%      4443    mvc-hello-world!Example.Program.Slow()$' "$T/out" &&
	pass "Slow calls Work in 4443 of its 5548 samples (80.1%)" ||
	{ fail "Slow calls Work in 4443 of its 5548 samples"; diag "$(cat "$T/out")"; }

# Errors: no such function (bad input for this trace), several matches, bad regex.
run "$TREE" --callers nosuchfunction "$PYRO"
is_rc 2 "--callers with no match exits 2"
is "$(cat "$T/err")" "nettrace-tree: no function matches 'nosuchfunction'" "no match: the message"
run "$TREE" --callers 'Program\.' "$PYRO"
is_rc 2 "--callers matching several functions exits 2"
grep -q "^nettrace-tree: 'Program\\\\.' matches 4 functions (.*): give one exactly$" "$T/err" &&
	pass "several matches: the message counts them" || { fail "several matches: the message"; diag "$(cat "$T/err")"; }
run "$TREE" --callers Work --callees Slow "$PYRO"
is_rc 1 "--callers and --callees of different functions exit 1"
is "$(head -1 "$T/err")" "nettrace-tree: --callers and --callees name different functions ('Work', 'Slow')" \
	"different functions: the message"
run "$TREE" --callers Work --top 3 "$PYRO"
is_rc 1 "--callers with --top exits 1"
is "$(head -1 "$T/err")" "nettrace-tree: --callers and --top cannot be combined" "--callers --top: the message"
done_testing
