/* SPDX-License-Identifier: MIT */
/* fuzz-folded.c - libFuzzer target for the parsers of user text files: folded stacks
 * ("root;...;leaf COUNT" lines, what nettrace-flame reads), category rules
 * (nt_rules_parse, nettrace-rules(5)) and subsystem rules (nt_subsystems_parse). Every
 * input is all three at once. The folded stacks go through the SVG flame graph (plain,
 * icicle and differential, the base being the input's first half), speedscope, pprof
 * and callgrind writers into a memory sink; rules that parse are matched against the frames of the
 * input's own lines, so hostile patterns meet hostile names.
 * The input is not NUL-terminated: every parser takes a length, and ASan reports a read
 * past it.
 * Build and run: tests/fuzz/run-fuzz.sh -T folded. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace.h"

/* Frames matched against the rules: the first MAX_FRAMES ';'-separated fields of the input. */
#define MAX_FRAMES 64

static void check(int rc, const nt_error *err)
{
	if (rc < 0 && err->code == 0)
		__builtin_trap(); /* an error must say what it is */
}

static void exports(const char *text, size_t len, int variant, nt_membuf *mb,
		    const nt_sink *sink)
{
	nt_error err;
	nt_stacks *s = NULL, *base = NULL;
	nt_error_clear(&err);
	int rc = nt_stacks_from_folded(&s, text, len, 1 + variant % 4, "fuzz", &err);
	check(rc, &err);
	if (rc < 0)
		return;
	nt_flame_opts fo;
	memset(&fo, 0, sizeof fo);
	fo.sz = sizeof fo;
	fo.icicle = (variant >> 2) & 1;
	fo.min_width_percent = (variant >> 3) & 1;
	fo.min_width = fo.min_width_percent ? 0.5 : -1;
	mb->len = 0;
	rc = nt_flame_write_svg(s, NULL, &fo, sink, &err);
	check(rc, &err);
	if (rc == NT_EFORMAT && nt_stacks_error_input(s) == NULL)
		__builtin_trap(); /* a format error names its input */
	mb->len = 0;
	check(nt_speedscope_write(s, sink, &err), &err);
	nt_pprof_opts po = {sizeof po, (variant >> 4) & 1 ? 1 : -1, NULL, 0};
	mb->len = 0;
	check(nt_pprof_write(s, &po, sink, &err), &err);
	mb->len = 0;
	check(nt_callgrind_write(s, sink, &err), &err);

	/* Differential: the first half as the base, the second half appended to the source. */
	size_t half = len / 2;
	rc = nt_stacks_from_folded(&base, text, half, 1 + variant % 4, "base", &err);
	check(rc, &err);
	if (rc == 0) {
		check(nt_stacks_add_folded(s, text + half, len - half, "more", &err), &err);
		mb->len = 0;
		check(nt_flame_write_svg(s, base, NULL, sink, &err), &err);
	}
	nt_stacks_free(base);
	nt_stacks_free(s);
}

/* Splits the input into NUL-terminated frames at ';', blanks and newlines. */
static size_t frames_of(const char *text, size_t len, char *copy, const char **frames)
{
	size_t n = 0;
	memcpy(copy, text, len);
	copy[len] = '\0';
	char *f = copy;
	for (size_t i = 0; i <= len && n < MAX_FRAMES; i++) {
		char c = copy[i];
		if (c == ';' || c == ' ' || c == '\n' || c == '\t' || c == '\0') {
			copy[i] = '\0';
			if (copy + i > f)
				frames[n++] = f;
			f = copy + i + 1;
		}
	}
	return n;
}

static void rules(const char *text, size_t len)
{
	nt_error err;
	nt_rules *r = NULL;
	nt_subsystems *ss = NULL;
	const char *frames[MAX_FRAMES];
	int32_t fsub[MAX_FRAMES];
	char *copy = malloc(len + 1);
	if (!copy)
		return;
	size_t n = frames_of(text, len, copy, frames);
	nt_error_clear(&err);
	int rc = nt_rules_parse(&r, text, len, "fuzz.rules", &err);
	check(rc, &err);
	if (rc == 0) {
		int cat = nt_rules_match(r, frames, n);
		if (cat < -1 || cat >= NT_CAT_COUNT)
			__builtin_trap();
		for (size_t i = 0; i < n; i++)
			(void)nt_rules_match(r, frames + i, 1);
	}
	nt_rules_free(r);
	nt_error_clear(&err);
	rc = nt_subsystems_parse(&ss, text, len, "fuzz.subsystems", &err);
	check(rc, &err);
	if (rc == 0) {
		int k = nt_subsystems_match(ss, frames, n, fsub);
		if (k < -1 || (k >= 0 && (size_t)k >= nt_subsystems_count(ss)))
			__builtin_trap();
		for (size_t i = 0; i < n; i++)
			if (fsub[i] >= 0 && nt_subsystems_name(ss, fsub[i]) == NULL)
				__builtin_trap(); /* a frame's subsystem is a known name */
		if (k >= 0 && nt_subsystems_name(ss, k) == NULL)
			__builtin_trap();
	}
	nt_subsystems_free(ss);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	/* The options follow the length, so that byte mutations keep them. */
	exports(text, size, (int)(size % 32), &mb, &sink);
	nt_membuf_free(&mb);
	rules(text, size);
	return 0;
}
