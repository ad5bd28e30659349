/* SPDX-License-Identifier: MIT */
/* nettrace-tree.c - print the call tree of the CPU samples in nettrace files: top-down or
 * bottom-up, per thread, pruned by depth or share, the hot path, or the top functions by
 * self and total time, with an optional per-category breakdown, a histogram of when each
 * row's samples happened (--when), or the time per subsystem (--by-subsystem).
 * Input: FILE... ("-" = stdin), all merged into one profile (one session per file);
 * output: stdout; diagnostics: stderr. The work is libnettrace's (profile.c, tree.c);
 * this file only turns options into nt_profile_opts / nt_tree_opts / nt_tree_print_opts. */
#include "common.h"

#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tree options; the profile options (--range, --thread, ...) are common.c's codes. */
enum {
	OPT_MINPCT = 'p',
	OPT_DEPTH = 'd',
	OPT_TOP = 'n',
	OPT_HOT = OPT_PROFILE_LAST,
	OPT_BYCAT,
	OPT_WHEN,
	OPT_WHEN_WIDTH,
	OPT_ASCII,
	OPT_BYSUB,
	OPT_LINES,
	OPT_CALLERS,
	OPT_CALLEES,
	OPT_DIFF,
	OPT_INVERT,
	OPT_WIDTH,
	OPT_JSON = 'j',   /* short options after the long-only codes (>= 256) */
	OPT_OUTPUT = 'o',
};

/* Default --when-width: PerfView's When column has 32 buckets too; enough to see phases,
 * short enough for a terminal next to the frame names. */
#define DEFAULT_WHEN_WIDTH 32
#define MIN_WHEN_WIDTH 4

/* Default --min-percent: hides the long tail of rarely sampled paths, which in a
 * real trace is most of the rows, while keeping everything worth a look. */
#define DEFAULT_MIN_PERCENT 0.5

/* The shared profile rows are written out rather than taken from TOOL_PROFILE_OPTS:
 * --category-frame has no meaning for a tree, and --unit here sets the time column. */
static const tool_opt tree_opts[] = {
	{"range", required_argument, OPT_RANGE, "A..B",
	 "only samples in [A, B): 1.5s..3s, 200ms.., ..2s, ts:N..ts:M"},
	{"thread", required_argument, OPT_THREAD, "TID|NAME,...",
	 "only samples of these threads: ids, names or globs ('worker-*')"},
	TOOL_UNIVERSAL_OPTS,
	{"category", required_argument, OPT_CATEGORY, "CAT,...",
	 "only these categories (cpu,ready,running,lock,io,...; nettrace-rules(5))"},
	TOOL_RULES_OPTS,
	{"compat", required_argument, OPT_COMPAT, "MODE",
	 "weighting: none (inferred interval, default), pyroscope or traceevent"},
	{"managed-only", no_argument, OPT_MANAGED_ONLY, NULL, "drop External (native) time"},
	{"invert", no_argument, OPT_INVERT, NULL, "bottom-up: leaf functions first, callers below"},
	{"lines", no_argument, OPT_LINES, NULL,
	 "a node per source line: 'NAME at FILE:LINE' (managed PDB or native DWARF lines)"},
	{"per-thread", no_argument, OPT_PER_THREAD, NULL,
	 "one root per thread, 'NAME (TID)' ('Thread (TID)' without a name)"},
	TOOL_THREAD_OPTS,
	{"no-module", no_argument, OPT_NO_MODULE, NULL, "drop 'Module!' from frame names"},
	{"depth", required_argument, OPT_DEPTH, "N", "show N levels at most"},
	{"min-percent", required_argument, OPT_MINPCT, "P",
	 "hide nodes below P% of the total (default 0.5; 0 shows all)"},
	{"hot", no_argument, OPT_HOT, NULL, "show only the hot path (hottest child at each level)"},
	{"top", required_argument, OPT_TOP, "N",
	 "list the top N functions by self and by total instead of the tree"},
	{"by-category", no_argument, OPT_BYCAT, NULL, "add a column per category (% of the total)"},
	{"when", no_argument, OPT_WHEN, NULL,
	 "add a histogram of when each row's samples happened"},
	{"when-width", required_argument, OPT_WHEN_WIDTH, "N",
	 "characters (time buckets) of the --when histogram (default 32, 4..256)"},
	{"ascii", no_argument, OPT_ASCII, NULL,
	 "draw --when with ASCII characters (the default when the locale is not UTF-8)"},
	{"by-subsystem", no_argument, OPT_BYSUB, NULL,
	 "print the time per subsystem (self, total, by category) instead of the tree"},
	TOOL_SUBSYSTEMS_OPT,
	TOOL_SYMBOLS_OPT,
	TOOL_SELECT_OPTS,
	TOOL_DEMANGLE_OPT,
	{"callers", required_argument, OPT_CALLERS, "FUNC",
	 "who calls FUNC (a name, or a regex matching one) and with what share of its time"},
	{"callees", required_argument, OPT_CALLEES, "FUNC",
	 "what FUNC calls and with what share of its time (with --callers: both)"},
	{"diff", required_argument, OPT_DIFF, "BASE",
	 "compare with BASE by function: share of the total here minus there"},
	{"json", no_argument, OPT_JSON, NULL, "print the view as JSON"},
	{"width", required_argument, OPT_WIDTH, "N",
	 "cut names in the middle so rows fit N columns (default: COLUMNS or the terminal; 0 = no limit)"},
	{"output", required_argument, OPT_OUTPUT, "FILE", "write to FILE instead of standard output"},
	{"unit", required_argument, OPT_UNIT, "UNIT",
	 "time column: samples, ns, us or ms (default: auto-scaled); samples also ranks"},
	TOOL_STD_OPTS,
	{NULL, 0, 0, NULL, NULL},
};

typedef struct tree_cfg {
	profile_args pa;        /* the shared profile options (common.c) */
	nt_tree_opts to;        /* invert, per-thread, no-module, by-samples */
	nt_tree_print_opts pr;  /* unit, depth, min-percent, hot, top, by-category */
	const char *range;      /* --range text, for the header and messages */
	const char *threads_arg; /* --thread text */
	const char *cats_arg;   /* --category text */
	int min_pct_given;      /* --min-percent was on the command line */
	int ascii_given;        /* --ascii */
	int when_width_given;   /* --when-width */
	const char *callers;    /* --callers FUNC */
	const char *callees;    /* --callees FUNC */
	const char *diff;       /* --diff BASE */
	const char *output;     /* -o FILE */
	int json;               /* --json */
	int width_given;        /* --width */
	struct {
		const char *opt, *arg;
	} sel[16];              /* the selection options, for the header */
	int nsel;
} tree_cfg;

/* ------------------------------------------------------------------ option parsing */

/* Whether the user's locale (LC_ALL, LC_CTYPE, LANG) uses UTF-8, so that the --when
 * blocks display. The tool's own locale is put back to "C" afterwards: nothing else here
 * depends on it. */
static int locale_is_utf8(void)
{
	int utf8 = 0;
	if (setlocale(LC_CTYPE, "")) {
		const char *cs = nl_langinfo(CODESET);
		utf8 = cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
	}
	setlocale(LC_CTYPE, "C");
	return utf8;
}

/* Parses argv into cfg; returns -1 to go on, or the exit code to return. */
static int parse_args(tool *t, tree_cfg *cfg, int argc, char **argv)
{
	struct option *lo;
	const char *shortopts = tool_getopt_colon(t, &lo, "");
	int c;
	uint64_t v;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		switch (c) {
		case OPT_RULES: case OPT_NO_DEFAULT_RULES:
		case OPT_UNIT: case OPT_COMPAT: case OPT_PER_THREAD: case OPT_THREAD:
		case OPT_RANGE: case OPT_CATEGORY: case OPT_MANAGED_ONLY: case OPT_NO_MODULE:
		case OPT_SUBSYSTEMS: case OPT_SYMBOLS: case OPT_PID: case OPT_PROCESS:
		case OPT_THREAD_TIME: case OPT_HIDE_IDLE: case OPT_COLLAPSE_UNRESOLVED:
		case OPT_NO_COLLAPSE_UNRESOLVED: case OPT_FOCUS: case OPT_EXCLUDE: case OPT_GROUP:
		case OPT_FOLD_PAT: case OPT_NO_SIGNATURE: case OPT_NO_DEMANGLE: case OPT_JOBS: {
			int r = profile_args_handle(t, &cfg->pa, c, optarg);
			if (r < 0)
				return -r;
			if (c == OPT_RANGE)
				cfg->range = optarg;
			else if (c == OPT_THREAD)
				cfg->threads_arg = optarg;
			else if (c == OPT_CATEGORY)
				cfg->cats_arg = optarg;
			else if (c >= OPT_FOCUS && c <= OPT_NO_SIGNATURE && cfg->nsel < 16) {
				static const char *const names[] = {"focus", "exclude", "group", "fold",
								    "no signatures"};
				cfg->sel[cfg->nsel].opt = names[c - OPT_FOCUS];
				cfg->sel[cfg->nsel].arg = c == OPT_NO_SIGNATURE ? "" : optarg;
				cfg->nsel++;
			}
			break;
		}
		case OPT_INVERT: cfg->to.invert = 1; break;
		case OPT_LINES: cfg->to.lines = 1; break;
		case OPT_DEPTH:
			if (tool_parse_u64(optarg, 1, UINT32_MAX, &v))
				return tool_usage_error(t, "invalid --depth value '%s' (expected an "
							   "integer >= 1)",
							optarg);
			cfg->pr.max_depth = (uint32_t)v;
			break;
		case OPT_MINPCT: {
			char *end;
			errno = 0;
			double p = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(p >= 0 && p <= 100))
				return tool_usage_error(t, "invalid --min-percent value '%s' (expected "
							   "a number from 0 to 100)",
							optarg);
			cfg->pr.min_percent = p;
			cfg->min_pct_given = 1;
			break;
		}
		case OPT_HOT: cfg->pr.hot = 1; break;
		case OPT_TOP:
			if (tool_parse_u64(optarg, 1, SIZE_MAX, &v))
				return tool_usage_error(t, "invalid --top value '%s' (expected an "
							   "integer >= 1)",
							optarg);
			cfg->pr.top = (size_t)v;
			break;
		case OPT_BYCAT: cfg->pr.by_category = 1; break;
		case OPT_WHEN: cfg->pr.when = 1; break;
		case OPT_WHEN_WIDTH:
			if (tool_parse_u64(optarg, MIN_WHEN_WIDTH, NT_WHEN_MAX_BUCKETS, &v))
				return tool_usage_error(t, "invalid --when-width value '%s' (expected an "
							   "integer from %d to %u)",
							optarg, MIN_WHEN_WIDTH, NT_WHEN_MAX_BUCKETS);
			cfg->to.when_buckets = (uint32_t)v;
			cfg->when_width_given = 1;
			break;
		case OPT_ASCII: cfg->ascii_given = 1; break;
		case OPT_BYSUB: cfg->pr.by_subsystem = 1; break;
		case OPT_CALLERS: cfg->callers = optarg; break;
		case OPT_CALLEES: cfg->callees = optarg; break;
		case OPT_DIFF: cfg->diff = optarg; break;
		case OPT_JSON: cfg->json = 1; break;
		case OPT_OUTPUT: cfg->output = optarg; break;
		case OPT_WIDTH:
			if (tool_parse_u64(optarg, 0, 100000, &v))
				return tool_usage_error(t, "invalid --width value '%s' (expected an "
							   "integer from 0 to 100000)",
							optarg);
			cfg->pr.width = (uint32_t)v;
			cfg->width_given = 1;
			break;
		case 'h': tool_help(t); return tool_finish(t);
		case 'V': tool_version(t); return tool_finish(t);
		case ':':
		default:
			return tool_bad_option(t, c, argv);
		}
	}
	cfg->to.per_thread = cfg->pa.fopts.per_thread;
	cfg->to.no_module = cfg->pa.fopts.no_module;
	if (cfg->pa.unit_set) {
		cfg->pr.unit = cfg->pa.fopts.unit;
		cfg->to.by_samples = cfg->pr.unit == NT_UNIT_SAMPLES;
	}
	if (optind >= argc)
		return tool_usage_error(t, "no input file (use - for standard input)");
	/* --top replaces the tree: options that shape the tree would be silently ignored. */
	if (cfg->pr.top) {
		const char *clash = cfg->pr.hot ? "--hot" : cfg->pr.max_depth ? "--depth"
				    : cfg->to.invert ? "--invert" : cfg->to.per_thread ? "--per-thread"
				    : cfg->min_pct_given ? "--min-percent" : NULL;
		if (clash)
			return tool_usage_error(t, "--top and %s cannot be combined", clash);
	}
	/* --by-subsystem replaces the tree too. */
	if (cfg->pr.by_subsystem) {
		const char *clash = cfg->pr.top ? "--top" : cfg->pr.hot ? "--hot"
				    : cfg->pr.max_depth ? "--depth" : cfg->to.invert ? "--invert"
				    : cfg->to.per_thread ? "--per-thread"
				    : cfg->min_pct_given ? "--min-percent" : NULL;
		if (clash)
			return tool_usage_error(t, "--by-subsystem and %s cannot be combined", clash);
		cfg->pa.popts.subsystems = 1;
	}
	/* --callers/--callees and --diff are views of their own */
	if (cfg->callers || cfg->callees || cfg->diff) {
		const char *view = cfg->diff ? "--diff" : cfg->callers ? "--callers" : "--callees";
		const char *clash = (cfg->callers || cfg->callees) && cfg->diff ? "--diff"
				    : cfg->pr.top ? "--top" : cfg->pr.by_subsystem ? "--by-subsystem"
				    : cfg->pr.hot ? "--hot" : cfg->pr.max_depth ? "--depth"
				    : cfg->to.invert ? "--invert" : cfg->to.per_thread ? "--per-thread"
				    : cfg->pr.when ? "--when" : cfg->pr.by_category ? "--by-category"
				    : NULL;
		if (clash)
			return tool_usage_error(t, "%s and %s cannot be combined", view, clash);
	}
	if (cfg->pa.subsystems_path && !cfg->pr.by_subsystem)
		return tool_usage_error(t, "--subsystems needs --by-subsystem");
	if ((cfg->when_width_given || cfg->ascii_given) && !cfg->pr.when)
		return tool_usage_error(t, "%s needs --when",
					cfg->when_width_given ? "--when-width" : "--ascii");
	if (cfg->pr.when) {
		cfg->pa.popts.when = 1;
		if (!cfg->when_width_given)
			cfg->to.when_buckets = DEFAULT_WHEN_WIDTH;
		cfg->pr.ascii = cfg->ascii_given || !locale_is_utf8();
	}
	if (!cfg->min_pct_given)
		cfg->pr.min_percent = cfg->pr.top ? 0 : DEFAULT_MIN_PERCENT;
	if (!cfg->pr.when)
		cfg->pr.ascii = cfg->ascii_given || !locale_is_utf8(); /* the cut mark */
	return -1;
}

/* ------------------------------------------------------------------ messages */

/* "range 1s..2s; threads 1,2; categories lock; managed code only; weights as pyroscope":
 * what the header's "Selected:" line and the empty-selection message show. */
static void describe_selection(const tree_cfg *cfg, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = '\0';
#define ADD(...)                                                                            \
	do {                                                                                \
		if (k < n) {                                                                \
			int w_ = snprintf(buf + k, n - k, "%s", k ? "; " : "");             \
			k += w_ > 0 ? (size_t)w_ : 0;                                       \
		}                                                                           \
		if (k < n) {                                                                \
			int w_ = snprintf(buf + k, n - k, __VA_ARGS__);                     \
			k += w_ > 0 ? (size_t)w_ : 0;                                       \
		}                                                                           \
	} while (0)
	if (cfg->range)
		ADD("range %s", cfg->range);
	if (cfg->threads_arg)
		ADD("threads %s", cfg->threads_arg);
	if (cfg->cats_arg)
		ADD("categories %s", cfg->cats_arg);
	if (cfg->pa.popts.managed_only)
		ADD("managed code only");
	if (cfg->pa.popts.compat == NT_COMPAT_PYROSCOPE)
		ADD("weights as pyroscope");
	else if (cfg->pa.popts.compat == NT_COMPAT_TRACEEVENT)
		ADD("weights as traceevent");
	if (cfg->pa.rules_path)
		ADD("rules %s%s", cfg->pa.rules_path, cfg->pa.no_default_rules ? " only" : "");
	else if (cfg->pa.no_default_rules)
		ADD("no category rules");
	if (cfg->pa.subsystems_path)
		ADD("subsystems %s", cfg->pa.subsystems_path);
	for (int i = 0; i < cfg->nsel; i++)
		ADD("%s%s%s", cfg->sel[i].opt, cfg->sel[i].arg[0] ? " " : "", cfg->sel[i].arg);
#undef ADD
}

/* Session span for messages: "0.000 s .. 4.210 s" (relative ranges) or
 * "ts:N .. ts:M" (raw ranges), "no samples" when the session has none. */
static void session_span(const tree_cfg *cfg, const nt_session_info *si, char *buf, size_t n)
{
	if (!si->samples) {
		snprintf(buf, n, "no samples");
		return;
	}
	if (cfg->pa.popts.range_raw) {
		snprintf(buf, n, "ts:%" PRIu64 " .. ts:%" PRIu64, si->first_ts, si->last_ts);
		return;
	}
	double f = si->header->qpc_frequency ? (double)si->header->qpc_frequency : 1.0;
	double a = (double)(int64_t)(si->first_ts - si->header->sync_qpc) / f;
	double b = (double)(int64_t)(si->last_ts - si->header->sync_qpc) / f;
	snprintf(buf, n, "%.3f s .. %.3f s", fabs(a) < 0.0005 ? 0.0 : a, fabs(b) < 0.0005 ? 0.0 : b);
}

/* Why the tree is empty, on stderr: the range (with each session's span), or the other
 * filters, or the input itself. */
static void report_empty(tool *t, const tree_cfg *cfg, nt_profile *p)
{
	size_t ns = nt_profile_session_count(p);
	uint64_t read = 0;
	for (size_t i = 0; i < ns; i++) {
		const nt_session_info *si = nt_profile_session(p, i);
		read += si ? si->samples : 0;
	}
	if (read == 0) {
		fprintf(stderr, "%s: no samples selected: the input has no SampleProfiler samples\n",
			t->prog);
		return;
	}
	if (cfg->range) {
		fprintf(stderr, "%s: no samples in range %s (%s", t->prog, cfg->range,
			ns == 1 ? "session spans" : "sessions span");
		for (size_t i = 0; i < ns; i++) {
			const nt_session_info *si = nt_profile_session(p, i);
			char span[96];
			if (!si)
				continue;
			session_span(cfg, si, span, sizeof span);
			fprintf(stderr, "%s %s", i ? "," : "", span);
		}
		fprintf(stderr, ")\n");
		return;
	}
	char sel[512];
	describe_selection(cfg, sel, sizeof sel);
	if (sel[0])
		fprintf(stderr, "%s: no samples selected (%s)\n", t->prog, sel);
	else
		fprintf(stderr, "%s: no samples selected\n", t->prog);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	tool t = {"nettrace-tree", "[OPTIONS] FILE...",
		  "Print the call tree of the CPU samples in nettrace (.NET EventPipe) files.\n"
		  "Several files are merged into one tree; FILE \"-\" reads standard input.",
		  tree_opts, 0, 0};
	tree_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	profile_args_init(&cfg.pa);
	cfg.pa.popts.collapse_unresolved = 1; /* a run of "?" frames says one thing */
	cfg.to.sz = sizeof cfg.to;
	cfg.pr.sz = sizeof cfg.pr;
	cfg.pr.unit = NT_TREE_UNIT_AUTO;
	nt_profile *p = NULL, *bp = NULL;
	nt_tree *tree = NULL, *btree = NULL;
	nt_butterfly *bf = NULL;
	FILE *fp = stdout;
	nt_error err;
	nt_error_clear(&err);

	int rc = parse_args(&t, &cfg, argc, argv);
	if (rc >= 0)
		goto out;
	if (profile_load(&t, &cfg.pa, argv + optind, argc - optind, &p))
		goto finish;
	if (cfg.diff) {
		char *bargv[1] = {(char *)cfg.diff};
		if (profile_load(&t, &cfg.pa, bargv, 1, &bp))
			goto finish;
	}
	if (cfg.callers || cfg.callees) {
		nt_butterfly_opts bo = {sizeof bo, cfg.to.no_module, cfg.to.by_samples};
		const char *func = cfg.callers ? cfg.callers : cfg.callees;
		if (cfg.callers && cfg.callees && strcmp(cfg.callers, cfg.callees) != 0) {
			rc = tool_usage_error(&t, "--callers and --callees name different functions "
						  "('%s', '%s')", cfg.callers, cfg.callees);
			goto out;
		}
		if (nt_butterfly_new(&bf, p, func, &bo, &err)) {
			if (err.code == NT_EINVAL) {
				/* no such function: bad input for this trace, not a usage error */
				err.code = NT_EFORMAT;
				fprintf(stderr, "%s: %s\n", t.prog, err.msg);
				t.rc = EXIT_BADINPUT;
			} else {
				tool_error(&t, NULL, &err);
			}
			goto finish;
		}
	} else {
		if (nt_tree_new(&tree, p, &cfg.to, &err)) {
			tool_error(&t, NULL, &err);
			goto finish;
		}
		if (bp && nt_tree_new(&btree, bp, &cfg.to, &err)) {
			tool_error(&t, cfg.diff, &err);
			goto finish;
		}
	}
	char sel[512];
	describe_selection(&cfg, sel, sizeof sel);
	cfg.pr.selection = sel;
	/* An empty selection is not an error: say why on stderr, print the (empty) tree. */
	if (tree && nt_tree_root(tree)->samples == 0)
		report_empty(&t, &cfg, p);
	if (cfg.output) {
		FILE *f = fopen(cfg.output, "w");
		if (!f) {
			rc = tool_open_error(&t, cfg.output, "w");
			goto out;
		}
		fp = f;
	}
	if (!cfg.width_given)
		cfg.pr.width = tool_term_width(fp);
	nt_sink out = nt_sink_stdio(fp);
	int wr;
	if (bf)
		wr = nt_butterfly_write(bf, (cfg.callers ? 1 : 0) | (cfg.callees ? 2 : 0), &cfg.pr,
					cfg.json, &out, &err);
	else if (btree)
		wr = nt_tree_write_diff(tree, btree, &cfg.pr, cfg.to.by_samples, cfg.json, &out, &err);
	else if (cfg.json)
		wr = nt_tree_write_json(tree, &cfg.pr, cfg.to.by_samples, cfg.to.per_thread, &out, &err);
	else
		wr = nt_tree_write_text(tree, &cfg.pr, &out, &err);
	if (wr && err.code != NT_EIO)
		tool_error(&t, NULL, &err); /* a failed write is reported below */
	if (fp != stdout) {
		tool_close_output(&t, fp, cfg.output);
		fp = stdout;
	}
finish:
	rc = tool_finish(&t);
out:
	nt_butterfly_free(bf);
	nt_tree_free(btree);
	nt_tree_free(tree);
	nt_profile_free(bp);
	nt_profile_free(p);
	profile_args_free(&cfg.pa);
	return rc;
}
