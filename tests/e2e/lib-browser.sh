# SPDX-License-Identifier: MIT
# lib-browser.sh - the headless-browser checks of the flame graph (t301, t305), sourced
# after lib.sh: finds Chromium, node and playwright-core, and runs the driver.
#
# browser_ready DESC: exports CHROMIUM and NODE_PATH, or skips DESC and ends the test when
# something is missing (the skip says what to install).
browser_ready() {
	CHROMIUM=${CHROMIUM:-}
	if [ -z "$CHROMIUM" ]; then
		for c in chromium chromium-browser google-chrome; do
			CHROMIUM=$(command -v "$c" 2>/dev/null) && break
			CHROMIUM=
		done
	fi
	why=
	if ! command -v node >/dev/null 2>&1; then
		why="node not found (Debian: nodejs)"
	elif [ -z "$CHROMIUM" ]; then
		why="chromium not found (Debian: chromium)"
	else
		# playwright-core from the build tree, the source tree or npm's global root
		NODE_PATH=$top_builddir/node_modules:$top_srcdir/node_modules${NODE_PATH:+:$NODE_PATH}
		command -v npm >/dev/null 2>&1 && NODE_PATH=$NODE_PATH:$(npm root -g 2>/dev/null)
		export NODE_PATH
		node -e 'require("playwright-core")' 2>/dev/null ||
			why="playwright-core not installed (npm install -g playwright-core)"
	fi
	if [ -n "$why" ]; then
		skip "$1" "$why"
		done_testing
	fi
	export CHROMIUM
}

# browser DESC ARGS...: runs the driver (tests/e2e/flame-browser.js) and turns its lines
# into TAP
browser() {
	desc=$1; shift
	node "$E2E/flame-browser.js" "$@" >"$T/b.out" 2>"$T/b.err"
	brc=$?
	if [ "$brc" -ne 0 ]; then
		fail "$desc: the browser runs"
		diag "$(cat "$T/b.out" "$T/b.err" | head -n 20)"
		return
	fi
	while IFS= read -r line; do
		case $line in
		PASS\ *) pass "$desc: ${line#PASS }" ;;
		FAIL\ *) fail "$desc: ${line#FAIL }" ;;
		INFO\ *) diag "$desc: ${line#INFO }" ;;
		SKIP\ *) skip "$desc" "${line#SKIP }" ;;
		esac
	done <"$T/b.out"
}
