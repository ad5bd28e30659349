/* SPDX-License-Identifier: MIT */
/* test-opts.c - unit tests of the one check of caller-sized structs (opts.c) for the day a
 * field is appended: a struct "v2" with one field more than its first release "v1", as the
 * library of a later release sees it. A caller built against v1 keeps every field it set
 * (issue 17: reader.c dropped the name of an old binary's options once the struct grew)
 * and the new field reads as zero, its default; an output struct filled for a v1 caller
 * gets v1's bytes and nothing beyond. Not here: the public functions' use of the same
 * checks (test-api). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

/* options: the first release, and the same struct with a field appended */
typedef struct opts_v1 {
	size_t sz;
	unsigned flags;
	const char *name;
} opts_v1;
typedef struct opts_v2 {
	size_t sz;
	unsigned flags;
	const char *name;
	double appended; /* 0 = its default */
} opts_v2;

/* an output struct, first release and grown */
typedef struct stats_v1 {
	size_t sz;
	uint64_t a, b;
} stats_v1;
typedef struct stats_v2 {
	size_t sz;
	uint64_t a, b, c;
} stats_v2;

static void test_options(void)
{
	nt_error err;
	nt_error_clear(&err);
	opts_v2 lib;
	/* a caller built against v1 */
	opts_v1 old = {sizeof old, 3u, "old-binary"};
	memset(&lib, 0xA5, sizeof lib);
	int rc = nt_opts_load(&lib, sizeof lib, sizeof(opts_v1), &old, "test options", &err);
	is_int(rc, 0, "v1 caller, v2 library: accepted");
	ok(lib.name == old.name && lib.flags == 3u, "v1 caller: its name and flags kept");
	ok(lib.appended == 0.0, "v1 caller: the appended field reads as zero (its default)");
	is_u64(lib.sz, sizeof lib, "the copy's sz is the library's");

	/* a caller built against v2 */
	opts_v2 cur = {sizeof cur, 1u, "current", 2.5};
	rc = nt_opts_load(&lib, sizeof lib, sizeof(opts_v1), &cur, "test options", &err);
	ok(rc == 0 && lib.appended == 2.5 && lib.name == cur.name, "v2 caller: every field");

	/* a v1 library reading a v2 caller's struct: the appended field set is refused, left
	 * at its default accepted */
	opts_v1 lib1;
	nt_error_clear(&err); /* as every public function does on entry */
	rc = nt_opts_load(&lib1, sizeof lib1, sizeof lib1, &cur, "test options", &err);
	is_int(rc, NT_EINVAL, "v2 caller, v1 library, appended field set: NT_EINVAL");
	ok(strstr(err.msg, "test options") != NULL, "the message names the struct (%s)", err.msg);
	cur.appended = 0;
	rc = nt_opts_load(&lib1, sizeof lib1, sizeof lib1, &cur, "test options", &err);
	ok(rc == 0 && lib1.name == cur.name && lib1.sz == sizeof lib1,
	   "v2 caller, v1 library, appended field zero: accepted");

	/* below the first release: a caller that did not set sz */
	opts_v1 unset = {0, 3u, "x"};
	memset(&lib, 0xA5, sizeof lib);
	rc = nt_opts_load(&lib, sizeof lib, sizeof(opts_v1), &unset, "test options", &err);
	is_int(rc, NT_EINVAL, "sz 0: NT_EINVAL");
	ok(lib.name == NULL && lib.flags == 0, "sz 0: the copy is all defaults, nothing read");
	unset.sz = offsetof(opts_v1, name);
	rc = nt_opts_load(&lib, sizeof lib, sizeof(opts_v1), &unset, "test options", &err);
	is_int(rc, NT_EINVAL, "sz below the first release: NT_EINVAL");

	/* NULL: the defaults */
	memset(&lib, 0xA5, sizeof lib);
	rc = nt_opts_load(&lib, sizeof lib, sizeof(opts_v1), NULL, "test options", &err);
	ok(rc == 0 && lib.sz == sizeof lib && lib.name == NULL && lib.flags == 0 &&
		   lib.appended == 0.0,
	   "NULL: every field zero, sz the library's");
}

static void test_output(void)
{
	stats_v2 val = {sizeof val, 1, 2, 3};
	/* a v1 caller's struct with a canary behind it */
	struct {
		stats_v1 s;
		uint64_t canary;
	} out;
	memset(&out, 0x5A, sizeof out);
	out.s.sz = sizeof out.s;
	is_int(nt_out_store(&out.s, &val, sizeof val, sizeof(stats_v1)), 0, "v1 caller: stored");
	ok(out.s.a == 1 && out.s.b == 2, "v1 caller: the fields it knows");
	is_u64(out.s.sz, sizeof(stats_v1), "v1 caller: its sz kept");
	ok(out.canary == 0x5A5A5A5A5A5A5A5Aull, "v1 caller: nothing written past its struct");

	stats_v2 big;
	memset(&big, 0, sizeof big);
	big.sz = sizeof big;
	ok(nt_out_store(&big, &val, sizeof val, sizeof(stats_v1)) == 0 && big.c == 3,
	   "v2 caller: every field");

	memset(&out, 0x5A, sizeof out);
	out.s.sz = 0;
	is_int(nt_out_store(&out.s, &val, sizeof val, sizeof(stats_v1)), -1, "sz 0: refused");
	ok(out.s.a == 0x5A5A5A5A5A5A5A5Aull, "sz 0: nothing written");
}

int main(void)
{
	test_options();
	test_output();
	return tap_done();
}
