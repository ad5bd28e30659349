/* SPDX-License-Identifier: MIT */
/* nettrace-fold.c - folded stacks ("root;...;leaf WEIGHT") from nettrace files, for
 * flamegraph.pl, inferno and speedscope. A thin command over nt_profile + nt_fold_write. */
#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_PRINT_RULES = OPT_PROFILE_LAST };

static const tool_opt OPTS[] = {
	TOOL_PROFILE_OPTS,
	TOOL_UNIVERSAL_OPTS,
	TOOL_SUBSYSTEMS_OPT,
	TOOL_SYMBOLS_OPT,
	TOOL_SUBSYSTEM_FRAME_OPT,
	TOOL_SELECT_OPTS,
	TOOL_DEMANGLE_OPT,
	{"output", required_argument, 'o', "FILE", "write to FILE instead of standard output"},
	{"verbose", no_argument, 'v', NULL, "print the inferred sampling rate of each session"},
	{"print-rules", no_argument, OPT_PRINT_RULES, NULL,
	 "print the built-in category rules (nettrace-rules(5)) and exit"},
	TOOL_STD_OPTS,
	{NULL, 0, 0, NULL, NULL},
};

int main(int argc, char **argv)
{
	tool t = {"nettrace-fold", "[OPTIONS] FILE...",
		  "Print the stacks of nettrace files as folded lines 'root;...;leaf WEIGHT',\n"
		  "sorted bytewise. The default weight is each session's inferred sampling\n"
		  "interval per sample, in nanoseconds.",
		  OPTS, 0, 0};
	struct option *lo;
	const char *out_path = NULL;
	profile_args a;
	profile_args_init(&a);
	const char *shortopts = tool_getopt_colon(&t, &lo, "");
	int c;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		int r = profile_args_handle(&t, &a, c, optarg);
		if (r < 0) {
			profile_args_free(&a);
			return -r;
		}
		if (r == 1)
			continue;
		switch (c) {
		case 'o': out_path = optarg; break;
		case 'v': t.verbose = 1; break;
		case OPT_PRINT_RULES: {
			size_t n;
			const char *text = nt_rules_default_source(&n);
			fwrite(text, 1, n, stdout);
			profile_args_free(&a);
			return tool_finish(&t);
		}
		case 'h': tool_help(&t); profile_args_free(&a); return tool_finish(&t);
		case 'V': tool_version(&t); profile_args_free(&a); return tool_finish(&t);
		default:
			profile_args_free(&a);
			return tool_bad_option(&t, c, argv);
		}
	}
	if (a.subsystems_path && a.fopts.subsystem_frame == NT_CATFRAME_NONE) {
		profile_args_free(&a);
		return tool_usage_error(&t, "--subsystems needs --subsystem-frame leaf or root");
	}
	/* pyroscope's output is integer nanoseconds; the compat modes' weights come from the
	 * timestamps, so only -v shows an inferred rate (the library infers it regardless in
	 * the default mode) */
	a.popts.skip_rate = !t.verbose;
	nt_profile *p;
	int ec = profile_load(&t, &a, argv + optind, argc - optind, &p);
	if (ec) {
		profile_args_free(&a);
		return ec;
	}
	if (t.verbose) {
		for (size_t i = 0; i < nt_profile_session_count(p); i++) {
			const nt_session_info *si = nt_profile_session(p, i);
			fprintf(stderr,
				"%s: %s: %llu samples, inferred interval %.0f ns (declared %llu ns, %s)\n",
				t.prog, si->name, (unsigned long long)si->samples,
				si->rate->inferred_interval_ns,
				(unsigned long long)si->rate->declared_interval_ns, si->rate->schedule);
		}
	}
	profile_check_selection(&t, &a, p);
	FILE *fp = stdout;
	if (out_path && !(fp = fopen(out_path, "w"))) {
		tool_open_error(&t, out_path, "w");
		nt_profile_free(p);
		profile_args_free(&a);
		return EXIT_SYSTEM;
	}
	nt_sink sink = nt_sink_stdio(fp);
	nt_error err;
	nt_error_clear(&err);
	if (nt_fold_write(p, &a.fopts, &sink, &err))
		tool_error(&t, out_path, &err);
	if (fp != stdout && fclose(fp) != 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", t.prog, out_path, strerror(errno));
		t.rc = EXIT_SYSTEM;
	}
	nt_profile_free(p);
	profile_args_free(&a);
	return tool_finish(&t);
}
