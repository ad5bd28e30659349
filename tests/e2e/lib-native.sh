# SPDX-License-Identifier: MIT
# lib-native.sh - what the native-symbol tests (t110, t404) compare with, sourced after
# lib.sh: nm and objdump (binutils) to find addresses in tests/unit/test-dwarf-prog, and
# A2L, the reference symbolizer: eu-addr2line, else addr2line. The whole test is skipped
# when they are missing.
for t in nm objdump; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "1..0 # SKIP $t (binutils) is not installed"
		exit 0
	fi
done
if command -v eu-addr2line >/dev/null 2>&1; then
	A2L=eu-addr2line
elif command -v addr2line >/dev/null 2>&1; then
	A2L=addr2line
else
	echo "1..0 # SKIP neither eu-addr2line nor addr2line is installed"
	exit 0
fi
