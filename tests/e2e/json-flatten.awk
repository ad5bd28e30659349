# SPDX-License-Identifier: MIT
# json-flatten.awk - prints one line "PATH<TAB>VALUE" per scalar of a JSON text, so shell
# tests can check values with grep instead of needing jq or python3 (neither is certain on
# a fresh Debian). PATH joins object keys with "." and array indexes as "[N]", e.g.
# "providers[0].events[2].count"; strings keep their quotes and escapes; an empty object
# or array prints "{}" or "[]". A syntax error prints "json-flatten: ..." to stderr and
# exits 1. Written for POSIX awk (mawk, gawk, busybox): character by character, no gensub.
{ buf = buf $0 "\n" }

function fail(msg) {
	printf "json-flatten: %s at character %d\n", msg, i > "/dev/stderr"
	err = 1
	exit 1
}

# Path of the value about to be emitted at the current depth.
function path(   p, l) {
	p = ""
	for (l = 1; l <= depth; l++) {
		if (type[l] == "o")
			p = p (p == "" ? "" : ".") key[l]
		else
			p = p "[" idx[l] "]"
	}
	return p
}

function emit(v) {
	if (depth > 0 && type[depth] == "o" && !have_key)
		fail("value without a key")
	print path() "\t" v
	after_value()
}

function after_value() {
	if (depth > 0)
		count[depth]++
	have_key = 0
	expect_value = 0
	if (depth == 0)
		done = 1
}

END {
	if (err)
		exit 1
	n = length(buf)
	i = 1
	depth = 0
	done = 0
	expect_value = 1
	while (i <= n) {
		c = substr(buf, i, 1)
		if (c == " " || c == "\t" || c == "\n" || c == "\r") {
			i++
			continue
		}
		if (done)
			fail("text after the top-level value")
		if (c == "{" || c == "[") {
			if (!expect_value)
				fail("unexpected '" c "'")
			if (depth > 0 && type[depth] == "o" && !have_key)
				fail("object member without a key")
			depth++
			type[depth] = c == "{" ? "o" : "a"
			count[depth] = 0
			idx[depth] = 0
			have_key = 0
			expect_value = c == "["
			i++
			continue
		}
		if (c == "}" || c == "]") {
			if (depth == 0 || (c == "}") != (type[depth] == "o"))
				fail("unbalanced '" c "'")
			empty = count[depth] == 0
			if (!empty && expect_value)
				fail("trailing comma")
			depth--
			if (empty) {
				print path() "\t" (c == "}" ? "{}" : "[]")
			}
			after_value()
			i++
			continue
		}
		if (c == ",") {
			if (depth == 0 || expect_value || count[depth] == 0)
				fail("unexpected ','")
			if (type[depth] == "a")
				idx[depth]++
			expect_value = type[depth] == "a"
			i++
			continue
		}
		if (c == ":") {
			if (depth == 0 || type[depth] != "o" || !have_key || expect_value)
				fail("unexpected ':'")
			expect_value = 1
			i++
			continue
		}
		if (c == "\"") {
			j = i + 1
			while (j <= n) {
				d = substr(buf, j, 1)
				if (d == "\\")
					j += 2
				else if (d == "\"")
					break
				else if (d == "\n")
					fail("newline in a string")
				else
					j++
			}
			if (j > n)
				fail("unterminated string")
			s = substr(buf, i, j - i + 1)
			i = j + 1
			if (depth > 0 && type[depth] == "o" && !have_key && !expect_value) {
				key[depth] = substr(s, 2, length(s) - 2)
				have_key = 1
				continue
			}
			if (!expect_value)
				fail("unexpected string")
			emit(s)
			continue
		}
		if (!expect_value)
			fail("unexpected '" c "'")
		j = i
		while (j <= n && index("+-0123456789.eEtrufalsn", substr(buf, j, 1)) > 0)
			j++
		if (j == i)
			fail("unexpected '" c "'")
		v = substr(buf, i, j - i)
		if (v != "true" && v != "false" && v != "null" && v !~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/)
			fail("bad literal '" v "'")
		emit(v)
		i = j
	}
	if (!done)
		fail("incomplete JSON text")
}
