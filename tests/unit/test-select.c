/* SPDX-License-Identifier: MIT */
/* test-select.c - unit tests of stack selections (select.c) on frame lists given by hand:
 * PerfView patterns ('*', '%', '^', captures, literal regex characters), group runs that
 * merge, entry groups, "PAT->" that keeps frames from later patterns, fold (frames gone,
 * recursion kept), focus (every pattern) and exclude (any), no_signature, the frame each
 * selected frame stands for, and bad patterns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

/* Applies s to the root-first list "a;b;c" and returns the selected frames root first
 * ("a;b"), "(dropped)" or "(error)"; static buffer. */
static const char *apply(const nt_select *s, const char *rootfirst)
{
	static char out[1024];
	static size_t key = 0;
	const char *fr[32];
	char buf[512];
	snprintf(buf, sizeof buf, "%s", rootfirst);
	uint32_t n = 0;
	char *tok[32];
	for (char *p = strtok(buf, ";"); p && n < 32; p = strtok(NULL, ";"))
		tok[n++] = p;
	for (uint32_t i = 0; i < n; i++)
		fr[i] = tok[n - 1 - i]; /* leaf first */
	nt_selcache *c;
	if (nt_selcache_new(&c, s))
		return "(error)";
	const char *const *sf;
	const uint32_t *src;
	uint32_t sn;
	int kept = nt_selcache_apply(c, key++, fr, n, &sf, &src, &sn);
	if (kept < 0) {
		nt_selcache_free(c);
		return "(error)";
	}
	if (!kept) {
		nt_selcache_free(c);
		return "(dropped)";
	}
	size_t k = 0;
	out[0] = '\0';
	for (uint32_t i = sn; i-- > 0;) {
		/* each frame with the index (root first) of the frame it stands for */
		int w = snprintf(out + k, sizeof out - k, "%s%s@%u", k ? ";" : "", sf[i],
				 (unsigned)(n - 1 - src[i]));
		k += w > 0 ? (size_t)w : 0;
	}
	nt_selcache_free(c);
	return out;
}

static nt_select *sel(int kind, const char *spec)
{
	nt_select *s;
	nt_error err;
	nt_error_clear(&err);
	if (nt_select_new(&s, &err))
		return NULL;
	if (spec && nt_select_add(s, kind, spec, &err)) {
		fprintf(stderr, "nt_select_add(%s): %s\n", spec, err.msg);
		nt_select_free(s);
		return NULL;
	}
	return s;
}

int main(void)
{
	nt_select *s;
	nt_error err;

	/* group: a run of one group is one frame, standing for its first (outermost) frame */
	s = sel(NT_SELECT_GROUP, "System.*->BCL");
	is_str(apply(s, "App!Main;System.A!X;System.B!Y;App!Cb;System.C!Z"),
	       "App!Main@0;BCL@1;App!Cb@3;BCL@4", "group: runs merge, others stay");
	nt_select_free(s);
	/* matching ignores case and finds the pattern anywhere */
	s = sel(NT_SELECT_GROUP, "corelib->C");
	is_str(apply(s, "System.Private.CoreLib!A;x!B"), "C@0;x!B@1", "group: any case, anywhere");
	nt_select_free(s);
	/* entry groups and "PAT->": just my code */
	s = sel(NT_SELECT_GROUP, "[Just my code] App!->;!=>OTHER");
	is_str(apply(s, "Sys!Start;Sys!Run;App!Main;Sys!Sort;Sys!Cmp;App!Less"),
	       "OTHER <<Sys!Start>>@0;App!Main@2;OTHER <<Sys!Sort>>@3;App!Less@5",
	       "entry groups: named by the entry frame; PAT-> keeps the app's frames");
	nt_select_free(s);
	/* captures and '%' */
	s = sel(NT_SELECT_GROUP, "{%}!->module $1");
	is_str(apply(s, "libc.so.6!read;app!main;app!f"), "module libc.so.6@0;module app@1",
	       "captures: one group per module");
	nt_select_free(s);
	/* '^' anchors; regex characters are literal */
	s = sel(NT_SELECT_GROUP, "^a.b->X");
	is_str(apply(s, "a.b;xa.b;aXb"), "X@0;xa.b@1;aXb@2", "'^' anchors, '.' is a dot");
	nt_select_free(s);
	s = sel(NT_SELECT_FOLD, "?!?");
	is_str(apply(s, "A;?!?;B;?!?"), "A@0;B@2", "fold: '?' is itself; the frames go");
	nt_select_free(s);
	s = sel(NT_SELECT_FOLD, "Helper");
	is_str(apply(s, "Rec;Helper;Rec;Helper"), "Rec@0;Rec@2", "fold: recursion stays two frames");
	nt_select_free(s);
	s = sel(NT_SELECT_FOLD, "*");
	is_str(apply(s, "A;B"), "", "fold everything: an empty stack");
	nt_select_free(s);

	/* focus: every pattern; exclude: any */
	s = sel(NT_SELECT_FOCUS, "slow");
	is_str(apply(s, "Main;Slow;Work"), "Main@0;Slow@1;Work@2", "focus keeps a stack through it");
	is_str(apply(s, "Main;Fast;Work"), "(dropped)", "focus drops the others");
	nt_error_clear(&err);
	ok(nt_select_add(s, NT_SELECT_FOCUS, "^Work$", &err) == 0, "a second focus");
	is_str(apply(s, "Main;Slow;Work"), "Main@0;Slow@1;Work@2", "two focus: both match");
	is_str(apply(s, "Main;Slow"), "(dropped)", "two focus: one missing drops");
	nt_select_free(s);
	s = sel(NT_SELECT_EXCLUDE, "Fast|Lock");
	is_str(apply(s, "Main;Fast;Work"), "(dropped)", "exclude drops a stack through it");
	is_str(apply(s, "Main;Slow;Work"), "Main@0;Slow@1;Work@2", "exclude keeps the others");
	nt_select_free(s);
	/* focus sees the grouped names */
	s = sel(NT_SELECT_GROUP, "Slow->S");
	nt_error_clear(&err);
	ok(nt_select_add(s, NT_SELECT_FOCUS, "^S$", &err) == 0, "focus after group");
	is_str(apply(s, "Main;Slow;Work"), "Main@0;S@1;Work@2", "focus matches the group's name");
	nt_select_free(s);

	/* no_signature */
	is_int((long)nt_select_strip_signature("M!A.B(int32,bool)"), 5, "strip: the argument list");
	is_int((long)nt_select_strip_signature("x!operator()(int)"), 12, "strip: operator() stays");
	is_int((long)nt_select_strip_signature("main"), 4, "strip: no list");
	is_int((long)nt_select_strip_signature("(x)"), 3, "strip: nothing before the list");
	s = sel(NT_SELECT_GROUP, NULL);
	nt_select_no_signature(s, 1);
	ok(nt_select_rewrites(s), "no_signature rewrites");
	is_str(apply(s, "M!A(int32);M!B(class X,bool)"), "M!A@0;M!B@1", "no_signature on every frame");
	nt_select_free(s);

	/* errors */
	ok(nt_select_empty(NULL), "NULL is empty");
	s = sel(NT_SELECT_GROUP, NULL);
	ok(nt_select_empty(s), "a new selection is empty");
	nt_error_clear(&err);
	is_int(nt_select_add(s, NT_SELECT_GROUP, "noarrow", &err), NT_EINVAL, "group without ->");
	is_str(err.msg, "bad --group 'noarrow': expected PAT->NAME or PAT=>NAME", "... its message");
	nt_error_clear(&err);
	is_int(nt_select_add(s, NT_SELECT_FOCUS, "(", &err), NT_EINVAL, "a bad regex");
	ok(strncmp(err.msg, "bad --focus pattern '(': ", 25) == 0, "... its message names it");
	nt_error_clear(&err);
	is_int(nt_select_add(s, NT_SELECT_FOLD, " ; ", &err), NT_EINVAL, "an empty fold");
	nt_error_clear(&err);
	is_int(nt_select_add(s, NT_SELECT_FOCUS, "", &err), NT_EINVAL, "an empty focus");
	nt_error_clear(&err);
	is_int(nt_select_add(s, 9, "x", &err), NT_EINVAL, "an unknown kind");
	ok(nt_select_empty(s), "still empty after the errors");
	nt_select_free(s);
	return tap_done();
}
