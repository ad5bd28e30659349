/* SPDX-License-Identifier: MIT */
/* nettrace-flame.c - flame graphs and profile exports: an interactive SVG flame graph (plain,
 * icicle or differential), speedscope JSON, gzip'd pprof or callgrind, from nettrace files or
 * folded stacks (detected by content, or --folded). A thin command over nt_profile,
 * nt_stacks and the nt_*_write exporters; the sample selection is nettrace-fold's. */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	OPT_FORMAT = OPT_PROFILE_LAST + 1, OPT_FOLDED, OPT_DIFF, OPT_TITLE, OPT_SUBTITLE,
	OPT_WIDTH, OPT_HEIGHT, OPT_MINWIDTH, OPT_ICICLE, OPT_TIMELINE, OPT_SORT, OPT_LABEL,
};

/* Buckets of the --timeline strip (the tree's display buckets, at most NT_WHEN_MAX_BUCKETS) */
#define TIMELINE_BUCKETS 100u

static const tool_opt OPTS[] = {
	TOOL_PROFILE_OPTS,
	TOOL_SYMBOLS_OPT,
	TOOL_UNIVERSAL_OPTS,
	TOOL_SELECT_OPTS,
	TOOL_DEMANGLE_OPT,
	{"output", required_argument, 'o', "FILE", "write to FILE instead of standard output"},
	{"format", required_argument, OPT_FORMAT, "FMT",
	 "svg (default), speedscope, pprof or callgrind (KCachegrind)"},
	{"folded", no_argument, OPT_FOLDED, NULL,
	 "inputs are folded stacks (default: detected; nettrace, even gzip'd or zipped, is a trace)"},
	{"diff", required_argument, OPT_DIFF, "BASE",
	 "differential flame graph against BASE (nettrace or folded)"},
	{"title", required_argument, OPT_TITLE, "TEXT", "title of the SVG"},
	{"subtitle", required_argument, OPT_SUBTITLE, "TEXT", "subtitle of the SVG"},
	{"width", required_argument, OPT_WIDTH, "PX", "width of the SVG (default 1200)"},
	{"height", required_argument, OPT_HEIGHT, "PX", "height of a frame (default 16)"},
	{"minwidth", required_argument, OPT_MINWIDTH, "PX|N%",
	 "leave out frames narrower than PX pixels or N% of the total (default 0.1)"},
	{"icicle", no_argument, OPT_ICICLE, NULL, "draw the root at the top (icicle graph)"},
	{"sort", required_argument, OPT_SORT, "ORDER",
	 "siblings by name (default: stable across graphs) or by weight (heaviest first)"},
	{"timeline", no_argument, OPT_TIMELINE, NULL,
	 "draw the sample density over time above the graph; selecting a span of it shows "
	 "its --range (nettrace input)"},
	{"label", required_argument, OPT_LABEL, "KEY=VALUE",
	 "pprof: a string label on every sample (service_name=api; repeatable; KEY of letters, "
	 "digits and _)"},
	{"verbose", no_argument, 'v', NULL, "print the inferred sampling rate of each session"},
	TOOL_STD_OPTS,
	{NULL, 0, 0, NULL, NULL},
};

enum { FMT_SVG, FMT_SPEEDSCOPE, FMT_PPROF, FMT_CALLGRIND };
static const char *const fmt_names[] = {"svg", "speedscope", "pprof", "callgrind"};

/* An input file read into memory (folded text, or a nettrace file from standard input). */
typedef struct input {
	const char *path;
	char *data;           /* NULL for a nettrace file read by path */
	size_t len;
	int mapped;           /* data is mmap'd (a regular file), else malloc'd */
	int nettrace;
} input;

typedef struct side {
	input *in;
	size_t n;
	nt_profile *p;
	nt_stacks *s;
} side;

static int read_all(int fd, char **out, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;
	char *b = malloc(cap);
	if (!b)
		return ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap > SIZE_MAX / 2) {
				free(b);
				return ENOMEM;
			}
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(b);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = b;
	*len = n;
	return 0;
}

/* A nettrace file starts with the magic "Nettrace" (a file cut inside it still goes to
 * the reader, which reports the truncation). */
/* A nettrace stream, plain or compressed (gzip, zip: the reader unpacks them while it
 * reads); anything else is folded text. */
static int is_nettrace(const char *p, size_t n)
{
	if (n >= 2 && (unsigned char)p[0] == 0x1f && (unsigned char)p[1] == 0x8b)
		return 1;
	if (n >= 4 && memcmp(p, "PK\3\4", 4) == 0)
		return 1;
	return n > 0 && memcmp(p, "Nettrace", n < 8 ? n : 8) == 0;
}

/* Classifies one input: a nettrace file given by path stays on disk (the reader streams
 * it); folded text and standard input are read into memory. Returns 0 or an exit code. */
static int classify(tool *t, input *in, int folded)
{
	int fd = strcmp(in->path, "-") == 0 ? STDIN_FILENO : open(in->path, O_RDONLY);
	if (fd < 0) {
		return tool_open_error(t, in->path, "r");
	}
	if (fd != STDIN_FILENO && !folded) {
		char head[8];
		ssize_t r;
		do
			r = read(fd, head, sizeof head);
		while (r < 0 && errno == EINTR);
		if (r > 0 && is_nettrace(head, (size_t)r)) {
			close(fd);
			in->nettrace = 1;
			return 0;
		}
		if (lseek(fd, 0, SEEK_SET) != 0) {
			fprintf(stderr, "%s: cannot read %s: %s\n", t->prog, in->path, strerror(errno));
			close(fd);
			return EXIT_SYSTEM;
		}
	}
	/* a regular file is mapped rather than copied: folded inputs can be large */
	struct stat st;
	if (fd != STDIN_FILENO && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			close(fd);
			in->data = m;
			in->len = (size_t)st.st_size;
			in->mapped = 1;
			in->nettrace = !folded && is_nettrace(in->data, in->len);
			return 0;
		}
	}
	int e = read_all(fd, &in->data, &in->len);
	if (fd != STDIN_FILENO)
		close(fd);
	if (e) {
		fprintf(stderr, "%s: cannot read %s: %s\n", t->prog, in->path, strerror(e));
		return EXIT_SYSTEM;
	}
	in->nettrace = !folded && is_nettrace(in->data, in->len);
	return 0;
}

/* Reads the nettrace inputs of a side into one profile (as profile_load, plus standard
 * input already in memory). Returns 0 or an exit code (message printed). */
static int load_profile(tool *t, profile_args *a, side *sd)
{
	nt_error err;
	nt_error_clear(&err);
	tool_progress pg;
	nt_profile_opts po = a->popts;
	po.progress_fn = tool_progress_update;
	po.progress_ctx = &pg;
	/* --jobs: every input is in memory here (a file mapped, standard input read), which
	 * two readers can share */
	int jrc = profile_jobs(t, a, NULL, 0, &po.jobs);
	if (jrc)
		return jrc;
	if (nt_profile_new(&sd->p, &po, &err))
		return tool_error(t, NULL, &err);
	for (size_t i = 0; i < sd->n; i++) {
		input *in = &sd->in[i];
		nt_reader *r = NULL;
		nt_reader_opts ro = {sizeof ro, 0, in->path};
		nt_error_clear(&err);
		int rc = in->data ? nt_reader_open_mem(&r, in->data, in->len, &ro, &err)
				  : nt_reader_open_file(&r, in->path, &ro, &err);
		if (rc == 0) {
			tool_progress_begin(&pg, t, in->path);
			rc = nt_profile_add_trace(sd->p, r, in->path, &err);
			tool_progress_end(&pg);
		}
		if (rc) {
			nt_reader_free(r);
			return tool_error(t, in->path, &err);
		}
		uint64_t off;
		const char *w = nt_reader_warning(r, &off);
		if (w)
			tool_warn(t, in->path, off, w);
		nt_reader_free(r);
	}
	nt_error_clear(&err);
	if (nt_profile_finish(sd->p, &err))
		return tool_error(t, NULL, &err);
	if (t->verbose) {
		for (size_t i = 0; i < nt_profile_session_count(sd->p); i++) {
			const nt_session_info *si = nt_profile_session(sd->p, i);
			fprintf(stderr,
				"%s: %s: %llu samples, inferred interval %.0f ns (declared %llu ns, %s)\n",
				t->prog, si->name, (unsigned long long)si->samples,
				si->rate->inferred_interval_ns,
				(unsigned long long)si->rate->declared_interval_ns, si->rate->schedule);
		}
	}
	profile_check_selection(t, a, sd->p);
	if (nt_stacks_from_profile(&sd->s, sd->p, &a->fopts, &err))
		return tool_error(t, NULL, &err);
	return 0;
}

/* Input that is neither a trace nor folded text: nothing at all, or binary data (a NUL
 * byte, which folded text never holds, in its first 4 KiB: an executable, an image, a
 * database). Bad input (exit 2) with what it looks like, instead of an empty graph or
 * "line 1: the count is not a decimal number". Returns 0 or the exit code. */
static int check_folded(tool *t, const input *in)
{
	if (in->nettrace)
		return 0;
	const char *what = NULL;
	if (in->len == 0)
		what = "empty input: neither a nettrace trace nor folded stacks";
	else if (in->len >= 4 && memcmp(in->data, "\177ELF", 4) == 0)
		what = "an ELF file, not a nettrace trace or folded stacks";
	else if (nt_store_probe(in->data, in->len))
		what = "an SQLite database, not a nettrace trace or folded stacks "
		       "(query it with nettrace-sql)";
	else if (memchr(in->data, '\0', in->len < 4096 ? in->len : 4096))
		what = "binary data, not a nettrace trace or folded stacks";
	if (!what)
		return 0;
	fprintf(stderr, "%s: %s: %s\n", t->prog, strcmp(in->path, "-") ? in->path : "standard input",
		what);
	if (t->rc < EXIT_BADINPUT)
		t->rc = EXIT_BADINPUT;
	return EXIT_BADINPUT;
}

/* Builds the stack source of one side: all nettrace (one profile) or all folded. */
static int load_side(tool *t, profile_args *a, side *sd, int folded, const char *nettrace_only,
		     int unit)
{
	size_t nn = 0;
	for (size_t i = 0; i < sd->n; i++) {
		int ec = classify(t, &sd->in[i], folded);
		if (ec)
			return ec;
		if ((ec = check_folded(t, &sd->in[i])) != 0)
			return ec;
		nn += sd->in[i].nettrace != 0;
	}
	if (nn && nn != sd->n)
		return tool_usage_error(t, "cannot mix nettrace files and folded stacks in one graph");
	if (nn)
		return load_profile(t, a, sd);
	if (nettrace_only)
		return tool_usage_error(t, "--%s applies to nettrace files, and %s holds folded stacks",
					nettrace_only, sd->in[0].path);
	nt_error err;
	nt_error_clear(&err);
	for (size_t i = 0; i < sd->n; i++) {
		input *in = &sd->in[i];
		int rc = i == 0 ? nt_stacks_from_folded(&sd->s, in->data, in->len, unit, in->path, &err)
				: nt_stacks_add_folded(sd->s, in->data, in->len, in->path, &err);
		if (rc)
			return tool_error(t, NULL, &err);
	}
	return 0;
}

static void side_free(side *sd)
{
	nt_stacks_free(sd->s);
	nt_profile_free(sd->p);
	for (size_t i = 0; i < sd->n; i++) {
		if (sd->in[i].mapped)
			munmap(sd->in[i].data, sd->in[i].len);
		else
			free(sd->in[i].data);
	}
	free(sd->in);
}

static int parse_px(const char *s, double lo, double hi, double *out, int *percent)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		return -1;
	if (percent) {
		*percent = *end == '%';
		if (*percent)
			end++;
	}
	if (*end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* Names the first option given that only nettrace input can honour, or NULL. */
static const char *nettrace_option(int code)
{
	switch (code) {
	case OPT_COMPAT: return "compat";
	case OPT_PER_THREAD: return "per-thread";
	case OPT_THREAD: return "thread";
	case OPT_RANGE: return "range";
	case OPT_PID: return "pid";
	case OPT_PROCESS: return "process";
	case OPT_THREAD_TIME: return "thread-time";
	case OPT_CATEGORY: return "category";
	case OPT_CATEGORY_FRAME: return "category-frame";
	case OPT_MANAGED_ONLY: return "managed-only";
	case OPT_NO_MODULE: return "no-module";
	case OPT_RULES: return "rules";
	case OPT_SYMBOLS: return "symbols";
	case OPT_HIDE_IDLE: return "hide-idle";
	case OPT_NO_DEFAULT_RULES: return "no-default-rules";
	case OPT_FOCUS: return "focus";
	case OPT_EXCLUDE: return "exclude";
	case OPT_GROUP: return "group";
	case OPT_FOLD_PAT: return "fold";
	case OPT_NO_SIGNATURE: return "no-signature";
	case OPT_NO_DEMANGLE: return "no-demangle";
	default: return NULL;
	}
}

int main(int argc, char **argv)
{
	tool t = {"nettrace-flame", "[OPTIONS] FILE... [-o OUT]",
		  "Draw the stacks of nettrace files (or folded stacks) as an interactive SVG\n"
		  "flame graph, or export them as speedscope JSON, gzip'd pprof or a callgrind\n"
		  "profile. The samples are selected and weighted as by nettrace-fold.",
		  OPTS, 0, 0};
	struct option *lo;
	const char *out_path = NULL, *diff_path = NULL, *nettrace_only = NULL;
	int format = FMT_SVG, folded = 0, timeline = 0;
	const char *labels[64]; /* --label */
	size_t nlabels = 0;
	nt_tree *tl_tree = NULL;
	nt_flame_opts fo = NT_INIT(nt_flame_opts);
	side cur = {NULL, 0, NULL, NULL}, base = {NULL, 0, NULL, NULL};
	profile_args a;
	profile_args_init(&a);
	a.popts.collapse_unresolved = 1; /* a run of "?" frames says one thing */
	const char *shortopts = tool_getopt_colon(&t, &lo, "");
	int c, ec = 0;
	double v;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		int r = profile_args_handle(&t, &a, c, optarg);
		if (r < 0) {
			ec = -r;
			goto out;
		}
		if (r == 1) {
			if (!nettrace_only)
				nettrace_only = nettrace_option(c);
			continue;
		}
		switch (c) {
		case 'o': out_path = optarg; break;
		case 'v': t.verbose = 1; break;
		case OPT_FORMAT:
			if (strcmp(optarg, "svg") == 0)
				format = FMT_SVG;
			else if (strcmp(optarg, "speedscope") == 0)
				format = FMT_SPEEDSCOPE;
			else if (strcmp(optarg, "pprof") == 0)
				format = FMT_PPROF;
			else if (strcmp(optarg, "callgrind") == 0)
				format = FMT_CALLGRIND;
			else {
				ec = tool_usage_error(&t, "unknown format '%s' (use svg, speedscope, pprof or callgrind)",
						      optarg);
				goto out;
			}
			break;
		case OPT_FOLDED: folded = 1; break;
		case OPT_DIFF: diff_path = optarg; break;
		case OPT_TITLE: fo.title = optarg; break;
		case OPT_SUBTITLE: fo.subtitle = optarg; break;
		case OPT_WIDTH:
			if (parse_px(optarg, 100, 1000000, &v, NULL) || v != floor(v)) {
				ec = tool_usage_error(&t, "bad --width '%s': expected 100..1000000 pixels",
						      optarg);
				goto out;
			}
			fo.width = (uint32_t)v;
			break;
		case OPT_HEIGHT:
			if (parse_px(optarg, 4, 1000, &v, NULL) || v != floor(v)) {
				ec = tool_usage_error(&t, "bad --height '%s': expected 4..1000 pixels", optarg);
				goto out;
			}
			fo.frame_height = (uint32_t)v;
			break;
		case OPT_MINWIDTH:
			if (parse_px(optarg, 0, 1e6, &fo.min_width, &fo.min_width_percent) ||
			    (fo.min_width_percent && fo.min_width > 100)) {
				ec = tool_usage_error(&t, "bad --minwidth '%s': expected pixels (0.1) or a "
						      "percentage (0.5%%)", optarg);
				goto out;
			}
			if (fo.min_width == 0)
				fo.min_width = -1; /* --minwidth 0: every frame (0 is the default) */
			break;
		case OPT_ICICLE: fo.icicle = 1; break;
		case OPT_SORT:
			if (strcmp(optarg, "name") == 0) {
				fo.sort_weight = 0;
			} else if (strcmp(optarg, "weight") == 0) {
				fo.sort_weight = 1;
			} else {
				ec = tool_usage_error(&t, "bad --sort '%s': expected name or weight",
						      optarg);
				goto out;
			}
			break;
		case OPT_TIMELINE: timeline = 1; break;
		case OPT_LABEL: {
			const char *eq = strchr(optarg, '=');
			if (!eq || !nt_pprof_label_name_ok(optarg, (size_t)(eq - optarg))) {
				ec = tool_usage_error(&t, "bad --label '%s': expected KEY=VALUE, KEY of "
							  "letters, digits and _ (not first: a digit)",
						      optarg);
				goto out;
			}
			if (nlabels == sizeof labels / sizeof labels[0]) {
				ec = tool_usage_error(&t, "too many --label options (64 at most)");
				goto out;
			}
			labels[nlabels++] = optarg;
			break;
		}
		case 'h': tool_help(&t); goto out;
		case 'V': tool_version(&t); goto out;
		default:
			ec = tool_bad_option(&t, c, argv);
			goto out;
		}
	}
	if (optind >= argc) {
		ec = tool_usage_error(&t, "no input file (use - for standard input)");
		goto out;
	}
	if (diff_path && format != FMT_SVG) {
		ec = tool_usage_error(&t, "--diff draws an SVG; it cannot be used with --format %s",
				      fmt_names[format]);
		goto out;
	}
	if (nlabels && format != FMT_PPROF) {
		ec = tool_usage_error(&t, "--label labels pprof samples; it needs --format pprof");
		goto out;
	}
	if (timeline && format != FMT_SVG) {
		ec = tool_usage_error(&t, "--timeline draws an SVG; it cannot be used with --format %s",
				      fmt_names[format]);
		goto out;
	}
	if (timeline && folded) {
		ec = tool_usage_error(&t, "--timeline needs nettrace input: folded stacks have no time");
		goto out;
	}
	if (timeline)
		a.popts.when = 1;
	/* speedscope lays each thread's samples out in time order (a category filter keeps
	 * the samples of the groups it keeps: every sample is in one group of one category) */
	if (format == FMT_SPEEDSCOPE)
		a.popts.sequence = 1;
	int nstdin = 0;
	for (int i = optind; i < argc; i++)
		nstdin += strcmp(argv[i], "-") == 0;
	if (diff_path && strcmp(diff_path, "-") == 0)
		nstdin++;
	if (nstdin > 1) {
		ec = tool_usage_error(&t, "standard input ('-') given more than once");
		goto out;
	}
	cur.n = (size_t)(argc - optind);
	cur.in = calloc(cur.n, sizeof(input));
	base.n = diff_path ? 1 : 0;
	base.in = calloc(1, sizeof(input));
	if (!cur.in || !base.in) {
		fprintf(stderr, "%s: out of memory\n", t.prog);
		ec = EXIT_SYSTEM;
		goto out;
	}
	for (size_t i = 0; i < cur.n; i++)
		cur.in[i].path = argv[optind + (int)i];
	base.in[0].path = diff_path;
	/* folded counts are samples unless --unit says otherwise */
	int unit = a.unit_set ? a.fopts.unit : NT_UNIT_SAMPLES;
	if ((ec = load_side(&t, &a, &cur, folded, timeline ? "timeline" : nettrace_only,
			    unit)) != 0)
		goto out;
	if (timeline) {
		/* the density of the whole selection: the root's time histogram */
		nt_tree_opts to = {sizeof to, 0, 0, 0, 0, TIMELINE_BUCKETS, 0};
		nt_tree_when_info wi = NT_INIT(nt_tree_when_info);
		nt_error terr;
		nt_error_clear(&terr);
		if (nt_tree_new(&tl_tree, cur.p, &to, &terr)) {
			ec = tool_error(&t, NULL, &terr);
			goto out;
		}
		const nt_tree_node *root = nt_tree_root(tl_tree);
		if (nt_tree_when(tl_tree, &wi) && root && root->when) {
			fo.timeline_n = wi.buckets;
			fo.timeline = root->when;
			fo.timeline_start_ns = wi.start_ns;
			fo.timeline_end_ns = wi.end_ns;
		}
	}
	/* the selection applies to nettrace inputs; a folded base is taken as it is */
	if (diff_path && (ec = load_side(&t, &a, &base, folded, NULL, unit)) != 0)
		goto out;

	FILE *fp = stdout;
	/* an SVG or a gzip'd profile is no text for a terminal (speedscope and callgrind are
	 * text: they may go there) */
	if (!out_path && (format == FMT_SVG || format == FMT_PPROF) && isatty(STDOUT_FILENO)) {
		ec = tool_usage_error(&t, "will not write %s to a terminal: use -o FILE or redirect "
					  "standard output", format == FMT_SVG ? "an SVG image"
					  : "a gzip'd pprof profile");
		goto out;
	}
	if (out_path && !(fp = fopen(out_path, "wb"))) {
		ec = tool_open_error(&t, out_path, "w");
		goto out;
	}
	nt_sink sink = nt_sink_stdio(fp);
	nt_error err;
	nt_error_clear(&err);
	nt_pprof_opts po = {sizeof po, 0, labels, nlabels};
	int rc;
	if (format == FMT_SPEEDSCOPE)
		rc = nt_speedscope_write(cur.s, &sink, &err);
	else if (format == FMT_PPROF)
		rc = nt_pprof_write(cur.s, &po, &sink, &err);
	else if (format == FMT_CALLGRIND)
		rc = nt_callgrind_write(cur.s, &sink, &err);
	else
		rc = nt_flame_write_svg(cur.s, base.s, &fo, &sink, &err);
	if (rc) {
		const char *file = nt_stacks_error_input(cur.s);
		if (!file && base.s)
			file = nt_stacks_error_input(base.s);
		if (!file && rc == NT_EIO)
			file = out_path ? out_path : "standard output";
		tool_error(&t, file, &err);
	}
	if (fp != stdout && fclose(fp) != 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", t.prog, out_path, strerror(errno));
		t.rc = EXIT_SYSTEM;
	}
out:
	nt_tree_free(tl_tree);
	side_free(&cur);
	side_free(&base);
	profile_args_free(&a);
	if (ec)
		return ec;
	return tool_finish(&t);
}
