/* SPDX-License-Identifier: MIT */
/* common.c - shared tool plumbing: --help from the option table, error printing,
 * exit codes, the progress line of long reads, and the final stdout check (as perf's
 * run_builtin does). */
#include "config.h" /* _GNU_SOURCE: clock_gettime */
#include "common.h"

#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void tool_getopt_tables(const tool *t, struct option **longopts, char **shortopts)
{
	size_t n = 0;
	while (t->opts[n].name)
		n++;
	static struct option lo[128];
	static char so[256];
	size_t k = 0, s = 0;
	for (size_t i = 0; i < n && i < 127; i++) {
		lo[k].name = t->opts[i].name;
		lo[k].has_arg = t->opts[i].has_arg;
		lo[k].flag = NULL;
		lo[k].val = t->opts[i].val;
		k++;
		if (t->opts[i].val > 0 && t->opts[i].val < 128 && s < sizeof so - 3) {
			so[s++] = (char)t->opts[i].val;
			if (t->opts[i].has_arg == required_argument)
				so[s++] = ':';
		}
	}
	memset(&lo[k], 0, sizeof lo[k]);
	so[s] = '\0';
	*longopts = lo;
	*shortopts = so;
}

/* The short options behind prefix ("+:" or ":") and before extra; opterr = 0. */
static const char *getopt_prefixed(const tool *t, struct option **longopts, const char *prefix,
				   const char *extra)
{
	static char buf[260];
	char *so;
	tool_getopt_tables(t, longopts, &so);
	snprintf(buf, sizeof buf, "%s%s%s", prefix, so, extra);
	opterr = 0;
	return buf;
}

const char *tool_getopt_colon(const tool *t, struct option **longopts, const char *extra)
{
	return getopt_prefixed(t, longopts, ":", extra);
}

const char *tool_getopt_cmd(const tool *t, struct option **longopts)
{
	return getopt_prefixed(t, longopts, "+:", "");
}

int tool_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int tool_parse_pid(tool *t, const char *s, long *out)
{
	char *end;
	errno = 0;
	long pid = strtol(s, &end, 10);
	if (*end || errno || pid <= 0 || pid > INT32_MAX)
		return tool_usage_error(t, "bad pid '%s'", s);
	*out = pid;
	return 0;
}

void tool_help(const tool *t)
{
	printf("Usage: %s %s\n%s\n\nOptions:\n", t->prog, t->usage, t->summary);
	for (const tool_opt *o = t->opts; o->name; o++) {
		char left[64];
		if (o->val > 0 && o->val < 128)
			snprintf(left, sizeof left, "-%c, --%s%s%s", o->val, o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		/* the help text wrapped at word boundaries to 79 columns, in a column of its own */
		const char *h = o->help;
		int col = printf("  %-28s", left);
		if (col > 30) {
			printf("\n%31s", "");
			col = 31;
		} else {
			putchar(' ');
			col++;
		}
		int first = 1;
		while (*h) {
			while (*h == ' ')
				h++;
			size_t w = strcspn(h, " ");
			if (!w)
				break;
			if (!first) {
				if (col + 1 + (int)w > 79) {
					printf("\n%31s", "");
					col = 31;
				} else {
					putchar(' ');
					col++;
				}
			}
			printf("%.*s", (int)w, h);
			col += (int)w;
			h += w;
			first = 0;
		}
		putchar('\n');
	}
	printf("\nExit status: 0 ok, 1 usage error, 2 bad input, 3 system error, 4 internal\n"
	       "error. See %s(1) for details.\n",
	       t->prog);
}

void tool_version(const tool *t)
{
	printf("%s (libnettrace) %s\n", t->prog, nt_version());
}

int tool_usage_error(tool *t, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", t->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", t->prog);
	if (t->rc < EXIT_USAGE)
		t->rc = EXIT_USAGE;
	return EXIT_USAGE;
}

int tool_bad_option(tool *t, int c, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	int is_long = strncmp(arg, "--", 2) == 0;
	if (c == ':')
		return is_long ? tool_usage_error(t, "option '%s' requires an argument", arg)
			       : tool_usage_error(t, "option '-%c' requires an argument", optopt);
	if (is_long && strchr(arg, '=') && optopt)
		return tool_usage_error(t, "option '%.*s' does not take an argument",
					(int)(strchr(arg, '=') - arg), arg);
	return is_long ? tool_usage_error(t, "unrecognized option '%s'", arg)
		       : tool_usage_error(t, "invalid option '-%c'", optopt);
}

int tool_exit_code(int code)
{
	switch (code) {
	case NT_OK: return EXIT_OK;
	case NT_EFORMAT: case NT_ETRUNC: case NT_EUNSUPPORTED: case NT_ELIMIT: return EXIT_BADINPUT;
	case NT_EINVAL: return EXIT_USAGE;
	case NT_EIO: case NT_ENOMEM: case NT_ESQL: return EXIT_SYSTEM;
	default: return EXIT_INTERNAL;
	}
}

int tool_error(tool *t, const char *file, const nt_error *err)
{
	/* "cannot open FILE: reason" names the file already: one error style, the file once */
	if (file && err->code == NT_EIO && err->offset == NT_NO_OFFSET && strstr(err->msg, file))
		file = NULL;
	fprintf(stderr, "%s: ", t->prog);
	if (file)
		fprintf(stderr, "%s: ", file);
	if (err->offset != NT_NO_OFFSET)
		fprintf(stderr, "at byte %" PRIu64 " (0x%" PRIx64 "): ", err->offset, err->offset);
	fprintf(stderr, "%s\n", err->msg[0] ? err->msg : nt_strerror(err->code));
	int ec = tool_exit_code(err->code);
	if (ec > t->rc)
		t->rc = ec;
	return ec;
}

void tool_warn(tool *t, const char *file, uint64_t offset, const char *msg)
{
	fprintf(stderr, "%s: ", t->prog);
	if (file)
		fprintf(stderr, "%s: ", file);
	if (offset != NT_NO_OFFSET)
		fprintf(stderr, "at byte %" PRIu64 " (0x%" PRIx64 "): ", offset, offset);
	fprintf(stderr, "warning: %s\n", msg);
}

int tool_open_error(tool *t, const char *path, const char *mode)
{
	int e = errno;
	struct stat st;
	if (mode[0] == 'w' && e == EISDIR)
		fprintf(stderr, "%s: cannot open %s: %s (an output file is needed)\n", t->prog, path,
			strerror(e));
	else if (mode[0] == 'r' && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		fprintf(stderr, "%s: cannot open %s: Is a directory\n", t->prog, path);
	else
		fprintf(stderr, "%s: cannot open %s: %s\n", t->prog, path, strerror(e));
	if (t->rc < EXIT_SYSTEM)
		t->rc = EXIT_SYSTEM;
	return EXIT_SYSTEM;
}

int tool_close_output(tool *t, FILE *fp, const char *path)
{
	int bad = ferror(fp);
	int e = errno;
	if (fclose(fp) != 0) {
		bad = 1;
		e = errno;
	}
	if (!bad)
		return 0;
	fprintf(stderr, "%s: cannot write %s: %s\n", t->prog, path, strerror(e));
	if (t->rc < EXIT_SYSTEM)
		t->rc = EXIT_SYSTEM;
	return EXIT_SYSTEM;
}

unsigned tool_term_width(FILE *fp)
{
	const char *c = getenv("COLUMNS");
	if (c && *c) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(c, &end, 10);
		if (!errno && !*end && v > 0 && v <= 100000)
			return (unsigned)v;
	}
	struct winsize ws;
	if (isatty(fileno(fp)) && ioctl(fileno(fp), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

int tool_finish(tool *t)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: cannot write to standard output: %s\n", t->prog, strerror(errno));
		return EXIT_SYSTEM;
	}
	return t->rc;
}

/* ---------------------------------------------------------------- profile options */

/* --jobs and NETTRACE_JOBS: 1..MAX_JOBS (more threads than the pipeline uses are
 * accepted, for the day it uses more). Returns 0, or -1 when s is not such a number. */
#define MAX_JOBS 1024
static int parse_jobs(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > MAX_JOBS)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int profile_jobs(tool *t, const profile_args *a, char *const *files, int nfiles,
		 unsigned *jobs)
{
	*jobs = a->jobs;
	const char *env = getenv("NETTRACE_JOBS");
	if (!*jobs && env && *env && parse_jobs(env, jobs))
		return tool_usage_error(t, "bad NETTRACE_JOBS '%s' (a number from 1 to %d)", env,
					MAX_JOBS);
	if (!*jobs) {
		cpu_set_t set;
		*jobs = 1;
		if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1)
			*jobs = (unsigned)CPU_COUNT(&set);
	}
	for (int i = 0; i < nfiles && *jobs > 1; i++) {
		struct stat st;
		if (strcmp(files[i], "-") == 0 || stat(files[i], &st) || !S_ISREG(st.st_mode))
			*jobs = 1;
	}
	return 0;
}

void profile_args_init(profile_args *a)
{
	memset(a, 0, sizeof *a);
	a->popts.sz = sizeof a->popts;
	a->fopts.sz = sizeof a->fopts;
	a->fopts.unit = NT_UNIT_NS;
}

void profile_args_free(profile_args *a)
{
	free(a->threads);
	free(a->pids);
	a->pids = NULL;
	for (size_t i = 0; i < a->nthread_patterns; i++)
		free(a->thread_patterns[i]);
	free(a->thread_patterns);
	a->thread_patterns = NULL;
	a->nthread_patterns = 0;
	nt_rules_free(a->rules);
	nt_subsystems_free(a->subsystems);
	free(a->symbols);
	a->symbols = NULL;
	nt_select_free(a->select);
	a->select = NULL;
	a->threads = NULL;
	a->rules = NULL;
	a->subsystems = NULL;
}

/* A rules or subsystems file that did not load: a read error as it is, anything else bad
 * input (exit 2) with the message's leading "F: " moved in front of the offset, where
 * tool_error() puts file names. Returns the exit code negated. */
static int rules_file_error(tool *t, const char *path, nt_error *err)
{
	if (err->code == NT_EIO || !path)
		return -tool_error(t, NULL, err);
	if (err->code != NT_ENOMEM)
		err->code = NT_EFORMAT;
	size_t n = strlen(path);
	if (strncmp(err->msg, path, n) == 0 && err->msg[n] == ':' && err->msg[n + 1] == ' ')
		memmove(err->msg, err->msg + n + 2, strlen(err->msg + n + 2) + 1);
	return -tool_error(t, path, err);
}

/* --subsystems FILE. A bad rule is bad input (exit 2) whatever code the parser chose; the
 * parser's "FILE: line N: ..." moves the file name in front of the offset, where
 * tool_error() puts file names. */
static int load_subsystems(tool *t, profile_args *a, const char *path)
{
	nt_error err;
	nt_error_clear(&err);
	nt_subsystems_free(a->subsystems);
	a->subsystems = NULL;
	a->popts.subsystem_rules = NULL;
	if (nt_subsystems_load(&a->subsystems, path, &err) == 0) {
		a->subsystems_path = path;
		a->popts.subsystem_rules = a->subsystems;
		a->popts.subsystems = 1;
		return 1;
	}
	return rules_file_error(t, path, &err);
}

/* The category rules of --rules and --no-default-rules (in either order): the file's
 * rules before the built-in ones, or alone, or none at all. A bad rule is bad input (exit
 * 2) whatever code the parser chose; the message names the file, the line and (as "at
 * byte N") the line's offset. Returns 1, or an exit code < 0 after printing the error. */
static int load_rules(tool *t, profile_args *a)
{
	nt_error err;
	nt_error_clear(&err);
	nt_rules_free(a->rules);
	a->rules = NULL;
	a->popts.rules = NULL;
	const char *path = a->rules_path;
	int rc = !path ? nt_rules_parse(&a->rules, "", 0, "(no rules)", &err)
		 : a->no_default_rules ? nt_rules_load(&a->rules, path, &err)
				       : nt_rules_load_with_defaults(&a->rules, path, &err);
	if (rc == 0) {
		a->popts.rules = a->rules;
		return 1;
	}
	return rules_file_error(t, path, &err);
}

/* A list "ID[,ID...]" of --thread or --pid (what: "thread" / "process", key "TID"/"PID")
 * into *out (owned, replaced) and *nout. Returns 1 or -exit code. */
static int parse_ids(tool *t, const char *arg, const char *what, const char *key,
		     uint64_t **out, size_t *nout)
{
	size_t n = 0;
	const char *p = arg;
	free(*out);
	*out = NULL;
	while (*p) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 0);
		if (end == p || errno || (*end && *end != ',') || *p == '-') {
			tool_usage_error(t, "bad %s list '%s': expected %s[,%s...]", what, arg, key,
					 key);
			return -EXIT_USAGE;
		}
		uint64_t *nt = realloc(*out, (n + 1) * sizeof(uint64_t));
		if (!nt) {
			fprintf(stderr, "%s: out of memory\n", t->prog);
			return -EXIT_SYSTEM;
		}
		*out = nt;
		(*out)[n++] = v;
		p = *end ? end + 1 : end;
	}
	if (!n) {
		tool_usage_error(t, "empty %s list", what);
		return -EXIT_USAGE;
	}
	*nout = n;
	return 1;
}

/* --thread TID|NAME,...: an entry of digits is a thread id, anything else a name or glob
 * (matched when the profile finishes: names come with the trace). */
static int parse_threads(tool *t, profile_args *a, const char *arg)
{
	size_t n = 0;
	const char *p = arg;
	free(a->threads);
	a->threads = NULL;
	for (size_t i = 0; i < a->nthread_patterns; i++)
		free(a->thread_patterns[i]);
	a->nthread_patterns = 0;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 0) {
			tool_usage_error(t, "bad thread list '%s': expected TID or NAME[,...]", arg);
			return -EXIT_USAGE;
		}
		size_t digits = strspn(p, "0123456789");
		int is_id = digits == len || (len > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
					      strspn(p + 2, "0123456789abcdefABCDEF") == len - 2);
		if (is_id) {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(p, &end, 0);
			if (errno || end != p + len) {
				tool_usage_error(t, "bad thread id in '%s'", arg);
				return -EXIT_USAGE;
			}
			uint64_t *nt = realloc(a->threads, (n + 1) * sizeof(uint64_t));
			if (!nt) {
				fprintf(stderr, "%s: out of memory\n", t->prog);
				return -EXIT_SYSTEM;
			}
			a->threads = nt;
			a->threads[n++] = v;
		} else {
			char **np = realloc(a->thread_patterns,
					    (a->nthread_patterns + 1) * sizeof(char *));
			char *pat = np ? malloc(len + 1) : NULL;
			if (np)
				a->thread_patterns = np;
			if (!pat) {
				fprintf(stderr, "%s: out of memory\n", t->prog);
				return -EXIT_SYSTEM;
			}
			memcpy(pat, p, len);
			pat[len] = '\0';
			a->thread_patterns[a->nthread_patterns++] = pat;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (!n && !a->nthread_patterns) {
		tool_usage_error(t, "empty thread list");
		return -EXIT_USAGE;
	}
	a->popts.threads = a->threads;
	a->popts.nthreads = n;
	a->popts.thread_patterns = (const char *const *)a->thread_patterns;
	a->popts.nthread_patterns = a->nthread_patterns;
	return 1;
}

/* Where a [CATEGORY] or [SUBSYSTEM] frame goes (--category-frame, --subsystem-frame):
 * 0, or a usage error printed and -1. */
static int parse_frame_place(tool *t, const char *opt, const char *arg, int *out)
{
	static const struct { const char *name; int v; } places[] = {
		{"leaf", NT_CATFRAME_LEAF}, {"root", NT_CATFRAME_ROOT}, {"none", NT_CATFRAME_NONE}};
	for (size_t i = 0; i < sizeof places / sizeof places[0]; i++)
		if (strcmp(arg, places[i].name) == 0) {
			*out = places[i].v;
			return 0;
		}
	tool_usage_error(t, "bad %s '%s' (use leaf, root or none)", opt, arg);
	return -1;
}

static int parse_categories(tool *t, profile_args *a, const char *arg)
{
	unsigned mask = 0;
	const char *p = arg;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char name[32];
		if (n == 0 || n >= sizeof name) {
			tool_usage_error(t, "bad category list '%s'", arg);
			return -EXIT_USAGE;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		int c = nt_category_parse(name);
		if (c < 0) {
			tool_usage_error(t, "unknown category '%s' (use cpu, ready, running, lock, "
					 "io, sleep, wait, gc, external or unknown)", name);
			return -EXIT_USAGE;
		}
		mask |= 1u << c;
		p = e ? e + 1 : p + n;
	}
	a->popts.category_mask = mask;
	return 1;
}

int profile_args_handle(tool *t, profile_args *a, int code, const char *arg)
{
	nt_error err;
	nt_error_clear(&err);
	switch (code) {
	case OPT_UNIT: {
		int u = nt_unit_parse(arg);
		if (u < 0) {
			tool_usage_error(t, "unknown unit '%s' (use samples, ns, us or ms)", arg);
			return -EXIT_USAGE;
		}
		a->fopts.unit = u;
		a->unit_set = 1;
		return 1;
	}
	case OPT_COMPAT:
		if (strcmp(arg, "none") == 0)
			a->popts.compat = NT_COMPAT_NONE;
		else if (strcmp(arg, "pyroscope") == 0)
			a->popts.compat = NT_COMPAT_PYROSCOPE;
		else if (strcmp(arg, "traceevent") == 0)
			a->popts.compat = NT_COMPAT_TRACEEVENT;
		else {
			tool_usage_error(t, "unknown compatibility mode '%s' (use none, pyroscope or "
					 "traceevent)", arg);
			return -EXIT_USAGE;
		}
		return 1;
	case OPT_PER_THREAD:
		a->fopts.per_thread = 1;
		return 1;
	case OPT_SYMBOLS: {
		size_t ol = a->symbols ? strlen(a->symbols) : 0, al = strlen(arg);
		if (!al || strchr(arg, ':')) {
			tool_usage_error(t, "bad --symbols directory '%s'", arg);
			return -EXIT_USAGE;
		}
		char *ns = realloc(a->symbols, ol + al + 2);
		if (!ns) {
			fprintf(stderr, "%s: out of memory\n", t->prog);
			return -EXIT_SYSTEM;
		}
		if (ol)
			ns[ol++] = ':';
		memcpy(ns + ol, arg, al + 1);
		a->symbols = ns;
		return 1;
	}
	case OPT_HIDE_IDLE:
		a->popts.hide_idle = 1;
		return 1;
	case OPT_COLLAPSE_UNRESOLVED:
	case OPT_NO_COLLAPSE_UNRESOLVED:
		a->popts.collapse_unresolved = code == OPT_COLLAPSE_UNRESOLVED;
		return 1;
	case OPT_THREAD:
		return parse_threads(t, a, arg);
	case OPT_PID: {
		size_t n = 0;
		int r = parse_ids(t, arg, "process", "PID", &a->pids, &n);
		a->popts.pids = a->pids;
		a->popts.npids = n;
		return r;
	}
	case OPT_PROCESS:
		a->popts.process_name = arg;
		return 1;
	case OPT_THREAD_TIME:
		a->popts.thread_time = 1;
		return 1;
	case OPT_RANGE:
		if (nt_range_parse(arg, &a->popts, &err)) {
			tool_usage_error(t, "%s", err.msg);
			return -EXIT_USAGE;
		}
		return 1;
	case OPT_CATEGORY:
		return parse_categories(t, a, arg);
	case OPT_CATEGORY_FRAME:
		if (parse_frame_place(t, "--category-frame", arg, &a->fopts.category_frame))
			return -EXIT_USAGE;
		return 1;
	case OPT_MANAGED_ONLY:
		a->popts.managed_only = 1;
		return 1;
	case OPT_NO_MODULE:
		a->fopts.no_module = 1;
		return 1;
	case OPT_SUBSYSTEMS:
		return load_subsystems(t, a, arg);
	case OPT_SUBSYSTEM_FRAME:
		if (parse_frame_place(t, "--subsystem-frame", arg, &a->fopts.subsystem_frame))
			return -EXIT_USAGE;
		if (a->fopts.subsystem_frame != NT_CATFRAME_NONE)
			a->popts.subsystems = 1;
		return 1;
	case OPT_NO_DEMANGLE:
		a->no_demangle = 1; /* in the resolver's options (nopts) of profile_load() */
		return 1;
	case OPT_FOCUS: case OPT_EXCLUDE: case OPT_GROUP: case OPT_FOLD_PAT:
	case OPT_NO_SIGNATURE: {
		if (!a->select && nt_select_new(&a->select, &err))
			return -tool_error(t, NULL, &err);
		a->popts.select = a->select;
		if (code == OPT_NO_SIGNATURE) {
			nt_select_no_signature(a->select, 1);
			a->select_rewrites = 1;
			return 1;
		}
		int kind = code == OPT_FOCUS ? NT_SELECT_FOCUS : code == OPT_EXCLUDE ? NT_SELECT_EXCLUDE
			   : code == OPT_GROUP ? NT_SELECT_GROUP : NT_SELECT_FOLD;
		if (nt_select_add(a->select, kind, arg, &err)) {
			if (err.code == NT_EINVAL) {
				tool_usage_error(t, "%s", err.msg);
				return -EXIT_USAGE;
			}
			return -tool_error(t, NULL, &err);
		}
		if (kind == NT_SELECT_GROUP || kind == NT_SELECT_FOLD)
			a->select_rewrites = 1;
		return 1;
	}
	case OPT_RULES:
		a->rules_path = arg;
		return load_rules(t, a);
	case OPT_NO_DEFAULT_RULES:
		a->no_default_rules = 1;
		return load_rules(t, a);
	case OPT_JOBS:
		if (parse_jobs(arg, &a->jobs)) {
			tool_usage_error(t, "bad --jobs '%s' (a number from 1 to %d)", arg, MAX_JOBS);
			return -EXIT_USAGE;
		}
		return 1;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------ progress */

double tool_mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double tool_parse_duration(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0 || v != v)
		return -1;
	if (*end == '\0' || strcmp(end, "s") == 0)
		return v;
	if (strcmp(end, "ms") == 0)
		return v / 1e3;
	if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		return v * 60;
	if (strcmp(end, "h") == 0)
		return v * 3600;
	return -1;
}

void tool_progress_begin(tool_progress *pg, const tool *t, const char *path)
{
	memset(pg, 0, sizeof *pg);
	pg->prog = t->prog;
	pg->file = path;
	const char *env = getenv("NETTRACE_PROGRESS");
	pg->mode = env && strcmp(env, "0") == 0 ? 0 : env && strcmp(env, "1") == 0 ? 1
										: isatty(2) ? 2 : 0;
	struct stat st;
	size_t n = strlen(path);
	/* the offsets of compressed input count decompressed bytes: no percentage */
	int compressed = (n > 3 && strcmp(path + n - 3, ".gz") == 0) ||
			 (n > 4 && strcmp(path + n - 4, ".zip") == 0);
	if (strcmp(path, "-") != 0 && !compressed && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		pg->total = (uint64_t)st.st_size;
	pg->start = pg->last = tool_mono_s();
}

void tool_human_bytes(char *buf, size_t len, double b, int fine)
{
	if (b >= 1e9)
		snprintf(buf, len, "%.*f GB", fine ? 2 : 1, b / 1e9);
	else if (b >= 1e6)
		snprintf(buf, len, "%.*f MB", fine ? 1 : 0, b / 1e6);
	else
		snprintf(buf, len, "%.0f kB", b / 1e3);
}

void tool_progress_update(void *ctx, uint64_t offset)
{
	tool_progress *pg = ctx;
	if (!pg || pg->mode == 0)
		return;
	double now = tool_mono_s();
	if (pg->mode == 2 && (now - pg->start < 1.0 || now - pg->last < 0.25))
		return;
	pg->last = now;
	char done[32], total[32], rate[32];
	tool_human_bytes(done, sizeof done, (double)offset, 0);
	double per_s = now > pg->start ? (double)offset / (now - pg->start) : 0;
	tool_human_bytes(rate, sizeof rate, per_s, 0);
	/* a terminal gets one line rewritten in place, a log (mode 1) one line per update */
	const char *pre = pg->mode == 1 ? "" : "\r", *post = pg->mode == 1 ? "\n" : "\033[K";
	if (pg->total && offset <= pg->total) {
		tool_human_bytes(total, sizeof total, (double)pg->total, 0);
		fprintf(stderr, "%s%s: %s: %.0f%% of %s, %s/s%s", pre, pg->prog, pg->file,
			100.0 * (double)offset / (double)pg->total, total, rate, post);
	} else {
		fprintf(stderr, "%s%s: %s: %s, %s/s%s", pre, pg->prog, pg->file, done, rate, post);
	}
	pg->shown = pg->mode == 2;
	fflush(stderr);
}

void tool_progress_end(tool_progress *pg)
{
	if (pg->shown)
		fprintf(stderr, "\r\033[K");
	pg->shown = 0;
}

int profile_load(tool *t, profile_args *a, char **files, int nfiles, nt_profile **out)
{
	nt_error err;
	nt_error_clear(&err);
	nt_profile *p = NULL;
	*out = NULL;
	if (nfiles == 0)
		return tool_usage_error(t, "no input file (use - for standard input)");
	int stdin_used = 0;
	for (int i = 0; i < nfiles; i++)
		if (strcmp(files[i], "-") == 0 && stdin_used++)
			return tool_usage_error(t, "standard input ('-') given more than once");
	tool_progress pg;
	/* --symbols first, then NETTRACE_SYMBOL_PATH */
	const char *env = getenv("NETTRACE_SYMBOL_PATH");
	if (env && *env) {
		size_t ol = a->symbols ? strlen(a->symbols) : 0, el = strlen(env);
		char *ns = realloc(a->symbols, ol + el + 2);
		if (!ns) {
			fprintf(stderr, "%s: out of memory\n", t->prog);
			return EXIT_SYSTEM;
		}
		if (ol)
			ns[ol++] = ':';
		memcpy(ns + ol, env, el + 1);
		a->symbols = ns;
	}
	if ((a->symbols || a->no_demangle) && !a->popts.native) {
		memset(&a->nopts, 0, sizeof a->nopts);
		a->nopts.sz = sizeof a->nopts;
		a->nopts.symbol_path = a->symbols;
		a->nopts.flags = a->no_demangle ? NT_NATIVE_NO_DEMANGLE : 0;
		a->popts.native = &a->nopts;
	}
	nt_profile_opts po = a->popts;
	int jrc = profile_jobs(t, a, files, nfiles, &po.jobs);
	if (jrc)
		return jrc;
	po.progress_fn = tool_progress_update;
	po.progress_ctx = &pg;
	if (nt_profile_new(&p, &po, &err))
		return tool_error(t, NULL, &err);
	for (int i = 0; i < nfiles; i++) {
		nt_reader *r = NULL;
		/* --compat=pyroscope reads in file order: its weights depend on each thread's
		 * sequence of samples only, which file order keeps when one capture thread
		 * wrote a thread's samples (the runtime's sampler writes them all), and the
		 * time-order queue is a quarter of the read (samples_unordered says when a
		 * thread's samples came out of order) */
		unsigned rflags = a->popts.compat == NT_COMPAT_PYROSCOPE ? NT_READ_FILE_ORDER : 0u;
		nt_reader_opts ro = {sizeof ro, rflags, files[i]};
		nt_error_clear(&err);
		if (nt_reader_open_file(&r, files[i], &ro, &err)) {
			int ec = tool_error(t, files[i], &err);
			nt_profile_free(p);
			return ec;
		}
		tool_progress_begin(&pg, t, files[i]);
		int rc = nt_profile_add_trace(p, r, files[i], &err);
		tool_progress_end(&pg);
		if (rc) {
			int ec = tool_error(t, files[i], &err);
			nt_reader_free(r);
			nt_profile_free(p);
			return ec;
		}
		uint64_t off;
		const char *w = nt_reader_warning(r, &off);
		if (w)
			tool_warn(t, files[i], off, w);
		nt_reader_free(r);
	}
	nt_error_clear(&err);
	if (nt_profile_finish(p, &err)) {
		int ec = tool_error(t, NULL, &err);
		nt_profile_free(p);
		return ec;
	}
	for (size_t i = 0; i < nt_profile_session_count(p); i++) {
		const nt_session_info *si = nt_profile_session(p, i);
		if (si && si->samples_unordered) {
			char msg[256];
			snprintf(msg, sizeof msg,
				 "%llu sample%s older than its thread's sample before in file order "
				 "(a thread sampled by two capture threads, or a clock that went "
				 "back), which --compat=pyroscope reads in: pyroscope's values can "
				 "differ",
				 (unsigned long long)si->samples_unordered,
				 si->samples_unordered == 1 ? " is" : "s are");
			tool_warn(t, si->name, NT_NO_OFFSET, msg);
		}
	}
	/* Native modules whose frames degrade to module+0xOFFSET: say why, once per module
	 * (build-id mismatch, missing or unreadable file); "symbols only" is not worth a
	 * warning, stripped system libraries are the norm. */
	for (size_t i = 0; i < nt_profile_session_count(p); i++) {
		nt_native *nn = nt_profile_native(p, i);
		for (size_t k = 0; nn && k < nt_native_module_count(nn); k++) {
			nt_native_module m;
			if (nt_native_module_at(nn, k, &m) != 1 || !m.lookups)
				continue;
			/* the kernel's vDSO ("linux-vdso.so.1") has no file to read: not news */
			if (m.status == NT_NATIVE_MISSING && m.path && !strchr(m.path, '/'))
				continue;
			if (m.status == NT_NATIVE_BUILD_ID_MISMATCH || m.status == NT_NATIVE_MISSING ||
			    m.status == NT_NATIVE_BAD_FILE || m.status == NT_NATIVE_NO_SYMBOLS) {
				char msg[512];
				snprintf(msg, sizeof msg, "module %s: %s%s%s: its frames show as %s+0xOFFSET",
					 m.path ? m.path : "?", nt_native_status_name(m.status),
					 m.message && m.message[0] ? ": " : "", m.message ? m.message : "",
					 m.name ? m.name : "module");
				tool_warn(t, nt_profile_session(p, i)->name, NT_NO_OFFSET, msg);
			}
		}
	}
	/* Managed modules whose frames lack lines for a reason worth saying: a PDB that is
	 * not the one of the trace, or a malformed one (a missing PDB is the norm for the
	 * framework's assemblies). */
	for (size_t i = 0; i < nt_profile_session_count(p); i++) {
		for (size_t k = 0; k < nt_profile_managed_module_count(p, i); k++) {
			nt_managed_module m;
			if (nt_profile_managed_module_at(p, i, k, &m) != 1 ||
			    (m.status != NT_MANAGED_PDB_MISMATCH && m.status != NT_MANAGED_BAD_PDB))
				continue;
			char msg[1024];
			snprintf(msg, sizeof msg, "module %s: %s: %s: its frames have no source lines",
				 m.path, nt_managed_status_name(m.status, 1), m.message);
			tool_warn(t, nt_profile_session(p, i)->name, NT_NO_OFFSET, msg);
		}
	}
	*out = p;
	return 0;
}

static int count_group(void *ctx, const nt_sample_group *g)
{
	*(uint64_t *)ctx += g->samples;
	return 0;
}

uint64_t profile_check_selection(tool *t, const profile_args *a, nt_profile *p)
{
	uint64_t n = 0;
	nt_profile_foreach(p, count_group, &n);
	if (n)
		return n;
	uint64_t total = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < nt_profile_session_count(p); i++) {
		const nt_session_info *si = nt_profile_session(p, i);
		total += si->samples;
		if (!si->samples)
			continue;
		double f = (double)si->header->qpc_frequency;
		int64_t a0 = (int64_t)((double)(int64_t)(si->first_ts - si->header->sync_qpc) * 1e9 / f);
		int64_t a1 = (int64_t)((double)(int64_t)(si->last_ts - si->header->sync_qpc) * 1e9 / f);
		if (a0 < lo)
			lo = a0;
		if (a1 > hi)
			hi = a1;
	}
	if (total == 0)
		fprintf(stderr, "%s: no samples: the input has no SampleProfiler ThreadSample events\n",
			t->prog);
	else
		fprintf(stderr,
			"%s: no samples selected by the filters (%" PRIu64
			" samples in the input, from %.3f s to %.3f s after the session start)\n",
			t->prog, total, (double)lo / 1e9, (double)hi / 1e9);
	(void)a;
	return 0;
}

int tool_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

void *tool_stop_main(void *arg)
{
	tool_stopper *s = arg;
	nt_error_clear(&s->err);
	s->rc = nt_diag_stop(s->sock, s->session, s->timeout_ms, &s->err);
	return NULL;
}
