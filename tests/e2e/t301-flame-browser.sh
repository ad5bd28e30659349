#!/bin/sh
# SPDX-License-Identifier: MIT
# t301-flame-browser.sh - nettrace-flame's SVG in a real browser: headless Chromium
# (Debian's chromium) driven by playwright-core (npm) through flame-browser.js, with a real
# mouse and keyboard. Hover shows name, total, self and %; Search (button and Ctrl-F)
# highlights exactly the matching frames and shows the matched % (checked against
# nettrace-fold's share); Escape and Reset Search clear it; a click zooms (the frame spans
# the width, others hidden, callers dimmed), Reset Zoom restores every frame; frames named
# <script>... render as text and run nothing; a differential graph's hover shows the
# change; a 100k-stack profile opens in a few seconds.
# Skips (TAP SKIP) when node, playwright-core or chromium is missing.
. "$top_srcdir/tests/e2e/lib.sh"
FLAME=$top_builddir/tools/nettrace-flame
FOLD=$top_builddir/tools/nettrace-fold
need_tool "$FLAME"
need_tool "$FOLD"
PYRO=$TRACES/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace

. "$E2E/lib-browser.sh"
browser_ready "flame graph in a browser"

# ---- a real trace, every frame drawn: hover, search, zoom, reset
"$FLAME" --minwidth 0 -o "$T/p.svg" "$PYRO"
"$FOLD" "$PYRO" >"$T/p.txt"
matched=$(awk '{ t += $NF } /Slow/ { s += $NF } END { printf "%.2f", 100 * s / t }' "$T/p.txt")
browser "pyroscope trace" --svg "$T/p.svg" \
	--hover 'mvc-hello-world!Example.Program.Main(class System.String[])' \
	--search 'Slow' --matched "$matched" --zoom 'mvc-hello-world!Example.Program.Slow()'

# a search matching nested frames counts them once (Work under both Fast and Slow, Program
# everywhere: 100%)
browser "nested matches" --svg "$T/p.svg" --search 'Example[.]Program' --matched 100.00

# ---- hostile frame names render as text
{
	printf 'main;<script>alert(1)</script> 25\n'
	printf 'main;<img src=x onerror=alert(2)> 25\n'
	printf 'main;]]><script>alert(3)</script> 25\n'
	printf 'main;x &lt b &#60 &amp 25\n'
} >"$T/x.folded"
"$FLAME" -o "$T/x.svg" "$T/x.folded"
browser "frame named <script>" --svg "$T/x.svg" --literal '<script>alert(1)</script>'
browser "frame named ]]><script>" --svg "$T/x.svg" --literal ']]><script>alert(3)</script>'
browser "frame named <img onerror>" --svg "$T/x.svg" --literal '<img src=x onerror=alert(2)>'
browser "frame named with entities" --svg "$T/x.svg" --literal 'x &lt b &#60 &amp'

# ---- differential: hover shows the base and the change
"$FOLD" --unit samples --range ..4s "$PYRO" >"$T/base.folded"
"$FLAME" --unit samples --range 4s.. --diff "$T/base.folded" --minwidth 0 -o "$T/d.svg" "$PYRO" 2>/dev/null
browser "differential" --svg "$T/d.svg" --hover 'mvc-hello-world!Example.Program.Slow()'
if node -e '
const pw = require("playwright-core");
(async () => {
	const b = await pw.chromium.launch({ executablePath: process.env.CHROMIUM,
		args: ["--no-sandbox", "--disable-gpu"] });
	const p = await b.newPage();
	await p.goto("file://" + process.argv[1]);
	const d = await p.evaluate(() => window.flamegraph.describe(
		[...document.querySelectorAll("#frames > g")].find((g) =>
			g.querySelector("title").textContent.endsWith("Slow()"))));
	await b.close();
	console.log(d);
	process.exit(/; base [0-9]+ samples, [0-9.]+%; change [+-][0-9.]+ pp/.test(d) ? 0 : 1);
})().catch((e) => { console.log(String(e)); process.exit(1); });' "$T/d.svg" >"$T/desc" 2>&1; then
	pass "differential: hover shows the base weight, its share and the change"
else
	fail "differential: hover shows the base weight, its share and the change"
	diag "$(cat "$T/desc")"
fi

# ---- a 100k-stack profile opens in a few seconds
awk 'BEGIN {
	for (k = 0; k < 100000; k++) {
		line = "Thread (" int(k / 25000) + 1 ")"
		r = k
		for (l = 0; l < 10; l++) {
			d = r % 4; r = int(r / 4)
			line = line ";App!Ns" l ".Type" d ".Method" (k % (l + 2)) "(int32,class System.String)"
		}
		printf "%s %d\n", line, 1 + (k * 7919) % 997
	}
}' >"$T/big.folded"
is "$(wc -l <"$T/big.folded" | tr -d ' ')" 100000 "100k distinct stacks generated"
"$FLAME" -o "$T/big.svg" "$T/big.folded"
diag "100k-stack SVG: $(wc -c <"$T/big.svg" | tr -d ' ') bytes, $(grep -c '^<g v=' "$T/big.svg") frames"
browser "100k stacks" --svg "$T/big.svg" --max-load-ms 10000 --search 'Type3' \
	--zoom "$(sed -n 's|.*<title>\(App!Ns1\.[^<]*\)</title>.*|\1|p' "$T/big.svg" | head -n 1)"
done_testing
