#!/bin/sh
# SPDX-License-Identifier: MIT
# t902-fuzz-regress.sh - the saved reproducers of the analysis and text-parser fuzz targets
# (tests/fuzz/fuzz-profile.c, fuzz-folded.c) run through those targets again, as plain
# programs (tests/fuzz/replay.c): tests/corpus/regress-profile/ through the profile,
# tree, fold and export pipeline, tests/corpus/regress-folded/ through the folded-stacks
# and rules parsers and the exporters. A target traps on a bug it detects, and in a
# sanitizer build (./run.sh test) ASan and UBSan report what the fuzzer reported; either
# kills the replay. The reader's reproducers (tests/corpus/regress/) and the rules files
# replay too, as small seeds of the same code. The sampler's unwinder target
# (tests/fuzz/fuzz-unwind.c) replays tests/corpus/regress-unwind/ and the seeds that
# tests/fuzz/gen-unwind-seeds writes.
. "$top_srcdir/tests/e2e/lib.sh"
PROFILE=$top_builddir/tests/fuzz/replay-profile
FOLDED=$top_builddir/tests/fuzz/replay-folded
UNWIND=$top_builddir/tests/fuzz/replay-unwind
need_tool "$PROFILE"
need_tool "$FOLDED"
if sampler_built; then
	need_tool "$UNWIND"
	need_tool "$top_builddir/tests/fuzz/gen-unwind-seeds"
fi
C=$top_srcdir/tests/corpus

# replay TOOL DESC FILE...: every file is replayed, and the tool ends normally.
replay() {
	tool=$1
	desc=$2
	shift 2
	"$tool" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$(wc -l <"$T/out")" -eq $# ]; then
		pass "$desc ($# files)"
	else
		fail "$desc (exit $rc after $(wc -l <"$T/out" | tr -d ' ') of $# files)"
		diag "$(tail -n 20 "$T/err")"
	fi
}

replay "$PROFILE" "profile reproducers run through the analysis pipeline" \
	"$C"/regress-profile/* "$C"/regress/*
replay "$PROFILE" "a real trace runs through the analysis pipeline" "$TRACES/$CHECKPOINTS"
replay "$FOLDED" "folded-stacks and rules reproducers run through the parsers and exporters" \
	"$C"/regress-folded/* "$top_srcdir"/data/rules/*.rules
if sampler_built; then
	mkdir -p "$T/unwind-seeds"
	"$top_builddir/tests/fuzz/gen-unwind-seeds" "$T/unwind-seeds" 2>"$T/err"
	rc=$?
	is_rc 0 "the unwinder's seeds are written"
	replay "$UNWIND" "unwinder reproducers and seeds run through the CFI parser and the walk" \
		"$C"/regress-unwind/* "$T"/unwind-seeds/*
else
	skip "the unwinder's reproducers" "the sampler is not built (configure --disable-sampler)"
fi
done_testing
