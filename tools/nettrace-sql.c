/* SPDX-License-Identifier: MIT */
/* nettrace-sql.c - SQL over the samples of nettrace files: imports traces into an SQLite
 * database (-o FILE, created or appended to) and/or runs a query (-q SQL, --query-file)
 * over the import (in memory without -o) or over an existing database, printing the
 * result as an aligned table, CSV or JSON; or streams the import into ClickHouse (--to
 * URL, one trace per file, known by a hash of the file's bytes).
 * Input: FILE... (traces, "-" = stdin; or one database, told apart by its header);
 * output: stdout; diagnostics and the progress line: stderr. The work is libnettrace's
 * (profile.c, store-sqlite.c); this file parses options and formats results. */
#include "config.h" /* _GNU_SOURCE and friends: strdup, O_CLOEXEC, sigaction */

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

enum {
	OPT_QUERY = 'e',
	OPT_QUERY_OLD = 'q',   /* -q, the short option of --query before 0.2: still read */
	OPT_OUTPUT = 'o',
	OPT_JSON = 'j',
	OPT_QUERY_FILE = OPT_PROFILE_LAST, /* long-only options: codes >= 256 */
	OPT_CSV,
	OPT_NO_EVENTS,
	OPT_TO,
	OPT_REPLACE,
	OPT_LABEL,
	OPT_RAW,
};

/* The shared profile rows that make sense for a database (no --unit, --per-thread,
 * --category-frame or --no-module: those shape printed stacks, and SQL does that here). */
static const tool_opt sql_opts[] = {
	{"output", required_argument, OPT_OUTPUT, "FILE",
	 "import into the SQLite database FILE (created, or appended to)"},
	{"query", required_argument, OPT_QUERY, "SQL", "run SQL and print its result"},
	{"query-file", required_argument, OPT_QUERY_FILE, "FILE", "run the SQL in FILE ('-': stdin)"},
	{"csv", no_argument, OPT_CSV, NULL, "print the result as CSV (with a header line)"},
	{"json", no_argument, OPT_JSON, NULL, "print the result as a JSON array of objects"},
	{"raw", no_argument, OPT_RAW, NULL,
	 "print values as they are, tab-separated, no header (folded stacks for flamegraph.pl)"},
	{"no-events", no_argument, OPT_NO_EVENTS, NULL, "import samples only, no events"},
	{"to", required_argument, OPT_TO, "URL",
	 "import into ClickHouse: clickhouse://[USER[:PW]@]HOST[:PORT][/DB]"},
	{"replace", no_argument, OPT_REPLACE, NULL,
	 "with --to: import traces that are there already again"},
	{"label", required_argument, OPT_LABEL, "KEY=VALUE",
	 "with --to: a label of the traces (service=api, deploy=v42; repeatable)"},
	TOOL_DEMANGLE_OPT,
	{"range", required_argument, OPT_RANGE, "A..B",
	 "import samples in [A, B) only: 1.5s..3s, 200ms.., ..2s, ts:N..ts:M"},
	{"thread", required_argument, OPT_THREAD, "TID,...", "import samples of these threads only"},
	{"category", required_argument, OPT_CATEGORY, "CAT,...",
	 "import these categories only (cpu,lock,io,sleep,wait,gc,external,unknown)"},
	TOOL_RULES_OPTS,
	{"focus", required_argument, OPT_FOCUS, "RE",
	 "import only stacks through a frame matching RE (regex, any case)"},
	{"exclude", required_argument, OPT_EXCLUDE, "RE",
	 "import no stack through a frame matching RE"},
	TOOL_SUBSYSTEMS_OPT,
	TOOL_SYMBOLS_OPT,
	{"compat", required_argument, OPT_COMPAT, "MODE",
	 "weights: none (inferred interval, default), pyroscope or traceevent"},
	{"managed-only", no_argument, OPT_MANAGED_ONLY, NULL, "drop External (native) samples"},
	{"jobs", required_argument, OPT_JOBS, "N",
	 "threads of the import (1: one; default $NETTRACE_JOBS, else the CPUs)"},
	{"verbose", no_argument, 'v', NULL, "print what was imported on standard error"},
	TOOL_STD_OPTS,
	{NULL, 0, 0, NULL, NULL},
};

enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_RAW };

typedef struct sql_cfg {
	profile_args pa;
	const char *out;        /* -o */
	const char *query;      /* -q */
	const char *query_file; /* --query-file */
	int fmt;                /* enum fmt */
	int no_events;
	const char *to;         /* --to */
	int replace;
	const char *labels[64]; /* --label */
	size_t nlabels;
} sql_cfg;

/* The temporary file of the import in progress, removed by the signal handler so that an
 * interrupted import leaves nothing behind (the library removes it on every other path). */
static char tmp_path[4096];

static void on_signal(int sig)
{
	if (tmp_path[0])
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_signals(void)
{
	static const int SIGS[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof SIGS / sizeof SIGS[0]; i++)
		sigaction(SIGS[i], &sa, NULL);
}

/* ------------------------------------------------------------------ progress */

typedef struct progress {
	int tty;            /* stderr is a terminal */
	double start, last; /* seconds (monotonic) */
	int shown;          /* a progress line is on the screen */
	const char *prog;
} progress;

/* Imports longer than a second get a line on a terminal's stderr, rewritten in place. */
static void on_progress(void *ctx, uint64_t samples, uint64_t events)
{
	progress *pg = ctx;
	if (!pg->tty)
		return;
	double t = tool_mono_s();
	if (t - pg->start < 1.0 || t - pg->last < 0.25)
		return;
	pg->last = t;
	pg->shown = 1;
	fprintf(stderr, "\r%s: importing: %" PRIu64 " samples, %" PRIu64 " events, %.0f s\033[K",
		pg->prog, samples, events, t - pg->start);
	fflush(stderr);
}

static void progress_done(progress *pg)
{
	if (pg->shown)
		fprintf(stderr, "\r\033[K");
	pg->shown = 0;
}

/* ------------------------------------------------------------------ result output */

/* One cell, formatted as text. */
typedef struct cell {
	char *s;
	int type;  /* enum nt_sql_type */
} cell;

typedef struct printer {
	tool *t;
	int fmt;
	size_t ncols;
	char **names;        /* current statement's column names (owned) */
	cell *cells;         /* table mode: rows x ncols (owned) */
	size_t nrows, cap;   /* rows; cells allocated */
	size_t statements;   /* result sets printed so far */
	int in_json;         /* a JSON array is open */
	size_t json_rows;
	int oom;
} printer;

/* REAL as SQLite's shell prints it: 15 significant digits, always with a '.' or exponent. */
static void fmt_real(char *buf, size_t n, double d)
{
	snprintf(buf, n, "%.15g", d);
	if (!strpbrk(buf, ".eEni"))
		strncat(buf, ".0", n - strlen(buf) - 1);
}

static char *format_value(const nt_sql_value *v)
{
	char buf[64];
	switch (v->type) {
	case NT_SQL_INTEGER:
		snprintf(buf, sizeof buf, "%" PRId64, v->i);
		return strdup(buf);
	case NT_SQL_REAL:
		fmt_real(buf, sizeof buf, v->d);
		return strdup(buf);
	case NT_SQL_TEXT: {
		char *s = malloc(v->len + 1);
		if (s) {
			memcpy(s, v->text, v->len);
			s[v->len] = '\0';
		}
		return s;
	}
	case NT_SQL_BLOB: {
		char *s = malloc(v->len * 2 + 4);
		if (!s)
			return NULL;
		size_t k = 0;
		s[k++] = 'x';
		s[k++] = '\'';
		for (size_t i = 0; i < v->len; i++)
			k += (size_t)sprintf(s + k, "%02x", (unsigned char)v->text[i]);
		s[k++] = '\'';
		s[k] = '\0';
		return s;
	}
	default:
		return strdup("");
	}
}

/* Display width: UTF-8 code points (continuation bytes do not count). */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

static void put_padded(const char *s, size_t w, int right, int last)
{
	size_t sw = width(s);
	if (right)
		for (size_t i = sw; i < w; i++)
			putchar(' ');
	for (const char *c = s; *c; c++) /* control characters would break the layout */
		putchar((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
	if (!right && !last)
		for (size_t i = sw; i < w; i++)
			putchar(' ');
}

static void flush_table(printer *pr)
{
	if (!pr->names)
		return;
	size_t nc = pr->ncols;
	size_t *w = calloc(nc ? nc : 1, sizeof *w);
	int *right = calloc(nc ? nc : 1, sizeof *right);
	if (!w || !right) {
		pr->oom = 1;
		free(w);
		free(right);
		return;
	}
	for (size_t c = 0; c < nc; c++) {
		w[c] = width(pr->names[c]);
		int numeric = pr->nrows > 0;
		for (size_t r = 0; r < pr->nrows; r++) {
			const cell *x = &pr->cells[r * nc + c];
			size_t cw = width(x->s);
			if (cw > w[c])
				w[c] = cw;
			if (x->type != NT_SQL_INTEGER && x->type != NT_SQL_REAL &&
			    x->type != NT_SQL_NULL)
				numeric = 0;
		}
		right[c] = numeric;
	}
	if (pr->statements)
		putchar('\n');
	for (size_t c = 0; c < nc; c++) {
		if (c)
			fputs("  ", stdout);
		put_padded(pr->names[c], w[c], right[c], c + 1 == nc);
	}
	putchar('\n');
	for (size_t c = 0; c < nc; c++) {
		if (c)
			fputs("  ", stdout);
		for (size_t i = 0; i < w[c]; i++)
			putchar('-');
	}
	putchar('\n');
	for (size_t r = 0; r < pr->nrows; r++) {
		for (size_t c = 0; c < nc; c++) {
			if (c)
				fputs("  ", stdout);
			put_padded(pr->cells[r * nc + c].s, w[c], right[c], c + 1 == nc);
		}
		putchar('\n');
	}
	free(w);
	free(right);
}

static void csv_field(const char *s)
{
	int quote = s[0] == ' ' || (s[0] && s[strlen(s) - 1] == ' ') ||
		    strpbrk(s, ",\"\r\n") != NULL;
	if (!quote) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/* A JSON string through the library's escaper: invalid UTF-8 (a BLOB cast to TEXT)
 * becomes U+FFFD, so the output stays valid JSON. */
static void json_string(const char *s, size_t n)
{
	nt_sink k = nt_sink_stdio(stdout);
	nt_json_write_string(&k, s, n);
}

static void json_value(const nt_sql_value *v)
{
	char buf[64];
	switch (v->type) {
	case NT_SQL_INTEGER: printf("%" PRId64, v->i); break;
	case NT_SQL_REAL:
		if (!isfinite(v->d)) {
			fputs("null", stdout);
			break;
		}
		fmt_real(buf, sizeof buf, v->d);
		fputs(buf, stdout);
		break;
	case NT_SQL_TEXT: json_string(v->text, v->len); break;
	case NT_SQL_BLOB: {
		putchar('"');
		for (size_t i = 0; i < v->len; i++)
			printf("%02x", (unsigned char)v->text[i]);
		putchar('"');
		break;
	}
	default: fputs("null", stdout); break;
	}
}

static void end_result(printer *pr)
{
	if (pr->fmt == FMT_TABLE) {
		flush_table(pr);
		for (size_t i = 0; i < pr->nrows * pr->ncols; i++)
			free(pr->cells[i].s);
		pr->nrows = 0;
	} else if (pr->fmt == FMT_JSON && pr->in_json) {
		fputs(pr->json_rows ? "\n]\n" : "]\n", stdout);
		pr->in_json = 0;
	}
	if (pr->names) {
		for (size_t i = 0; i < pr->ncols; i++)
			free(pr->names[i]);
		free(pr->names);
		pr->names = NULL;
		pr->statements++;
	}
}

static int on_row(void *ctx, const nt_sql_row *row)
{
	printer *pr = ctx;
	size_t nc = row->ncols;
	if (!row->values) { /* a new result set */
		end_result(pr);
		pr->names = calloc(nc, sizeof(char *));
		if (!pr->names)
			return NT_ENOMEM;
		pr->ncols = nc;
		for (size_t i = 0; i < nc; i++)
			if (!(pr->names[i] = strdup(row->names[i])))
				return NT_ENOMEM;
		if (pr->fmt == FMT_CSV) {
			if (pr->statements)
				putchar('\n');
			for (size_t i = 0; i < nc; i++) {
				if (i)
					putchar(',');
				csv_field(row->names[i]);
			}
			putchar('\n');
		} else if (pr->fmt == FMT_JSON) {
			fputs("[", stdout);
			pr->in_json = 1;
			pr->json_rows = 0;
		}
		return 0;
	}
	if (pr->fmt == FMT_JSON) {
		fputs(pr->json_rows++ ? ",\n{" : "\n{", stdout);
		for (size_t i = 0; i < nc; i++) {
			if (i)
				putchar(',');
			json_string(row->names[i], strlen(row->names[i]));
			putchar(':');
			json_value(&row->values[i]);
		}
		putchar('}');
		return 0;
	}
	if (pr->fmt == FMT_RAW) {
		/* as they are: a tab between values, a newline after each row (a tab or newline
		 * inside a value becomes a space, so that every row stays one line) */
		for (size_t i = 0; i < nc; i++) {
			if (i)
				putchar('\t');
			char *s = format_value(&row->values[i]);
			if (!s)
				return NT_ENOMEM;
			for (char *q = s; *q; q++)
				if (*q == '\t' || *q == '\n' || *q == '\r')
					*q = ' ';
			fputs(s, stdout);
			free(s);
		}
		putchar('\n');
		return 0;
	}
	if (pr->fmt == FMT_CSV) {
		for (size_t i = 0; i < nc; i++) {
			if (i)
				putchar(',');
			char *s = format_value(&row->values[i]);
			if (!s)
				return NT_ENOMEM;
			csv_field(s);
			free(s);
		}
		putchar('\n');
		return 0;
	}
	if ((pr->nrows + 1) * nc > pr->cap) { /* cap counts cells */
		size_t ncap = pr->cap ? pr->cap * 2 : 64;
		while (ncap < (pr->nrows + 1) * nc)
			ncap *= 2;
		cell *n = realloc(pr->cells, ncap * sizeof(cell));
		if (!n)
			return NT_ENOMEM;
		pr->cells = n;
		pr->cap = ncap;
	}
	for (size_t i = 0; i < nc; i++) {
		cell *x = &pr->cells[pr->nrows * nc + i];
		x->type = row->values[i].type;
		if (!(x->s = format_value(&row->values[i]))) {
			for (size_t j = 0; j < i; j++)
				free(pr->cells[pr->nrows * nc + j].s);
			return NT_ENOMEM;
		}
	}
	pr->nrows++;
	return 0;
}

/* Runs sql on st and prints the results; returns the exit code. */
static int run_query(tool *t, nt_store *st, const char *sql, int fmt)
{
	printer pr;
	memset(&pr, 0, sizeof pr);
	pr.t = t;
	pr.fmt = fmt;
	nt_error err;
	nt_error_clear(&err);
	int rc = nt_store_query(st, sql, on_row, &pr, &err);
	end_result(&pr); /* what ran before an error is printed */
	free(pr.cells);
	if (rc == NT_ENOMEM && !err.msg[0]) {
		fprintf(stderr, "%s: out of memory\n", t->prog);
		t->rc = EXIT_SYSTEM;
		return EXIT_SYSTEM;
	}
	if (rc == NT_ESQL) {
		/* SQLite's result code says whose fault it is: the query's (SQLITE_ERROR: not
		 * valid SQL, no such table...) is a usage error, a file that is no sound
		 * database (SQLITE_CORRUPT, SQLITE_NOTADB) bad input, the rest the system's */
		int sc = err.sys_errno;
		int ec = sc == 1 ? EXIT_USAGE : sc == 11 || sc == 26 ? EXIT_BADINPUT : EXIT_SYSTEM;
		fprintf(stderr, "%s: %s\n", t->prog, err.msg);
		if (ec > t->rc)
			t->rc = ec;
		return ec;
	}
	if (rc)
		return tool_error(t, NULL, &err);
	return 0;
}

/* ------------------------------------------------------------------ inputs */

/* Reads a whole file ("-" = stdin) into a NUL-terminated string; NULL with errno. */
static char *slurp(const char *path)
{
	FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!fp)
		return NULL;
	size_t n = 0, cap = 4096;
	char *b = malloc(cap);
	while (b) {
		size_t r = fread(b + n, 1, cap - n - 1, fp);
		n += r;
		if (r == 0)
			break;
		if (n + 1 == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	int bad = ferror(fp);
	if (fp != stdin)
		fclose(fp);
	if (!b || bad) {
		free(b);
		errno = bad ? EIO : ENOMEM;
		return NULL;
	}
	b[n] = '\0';
	return b;
}

/* 1 when path is a regular file that starts with the SQLite header, 0 otherwise. Only
 * regular files are read: the first bytes of a pipe would be lost to the trace reader. */
static int is_database(const char *path)
{
	struct stat sb;
	if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* the reader reports why it cannot be opened */
	unsigned char head[16];
	ssize_t n = read(fd, head, sizeof head);
	close(fd);
	return n == (ssize_t)sizeof head && nt_store_probe(head, sizeof head);
}

/* ------------------------------------------------------------------ ClickHouse */

/* The id of a trace in ClickHouse: CRC-32 and Adler-32 of the file's bytes (zlib's) and
 * its size, in hex. Not a cryptographic digest: two files share an id only if made to. */
static int file_id(tool *t, const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", t->prog, path, strerror(errno));
		return EXIT_SYSTEM;
	}
	uLong crc = crc32(0L, Z_NULL, 0), adl = adler32(0L, Z_NULL, 0);
	uint64_t size = 0;
	unsigned char buf[1 << 16];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: %s: %s\n", t->prog, path, strerror(errno));
			close(fd);
			return EXIT_SYSTEM;
		}
		crc = crc32(crc, buf, (uInt)n);
		adl = adler32(adl, buf, (uInt)n);
		size += (uint64_t)n;
	}
	close(fd);
	snprintf(out, cap, "%08lx%08lx%016" PRIx64, crc & 0xffffffffUL, adl & 0xffffffffUL, size);
	return 0;
}

/* Streams the committed store into ClickHouse, one trace per file; the samples from prof
 * when it is not NULL (the import kept them there, not in the store). */
static int export_clickhouse(tool *t, sql_cfg *cfg, nt_store *st, const nt_profile *prof,
			     char **files, int nfiles)
{
	char (*idbuf)[41] = calloc((size_t)nfiles, sizeof *idbuf);
	const char **ids = calloc((size_t)nfiles, sizeof *ids);
	int ec = 0;
	if (!idbuf || !ids) {
		fprintf(stderr, "%s: out of memory\n", t->prog);
		ec = EXIT_SYSTEM;
	}
	for (int i = 0; !ec && i < nfiles; i++) {
		ec = file_id(t, files[i], idbuf[i], sizeof idbuf[i]);
		ids[i] = idbuf[i];
	}
	nt_store_stats ss = NT_INIT(nt_store_stats);
	nt_store_stats_get(st, &ss);
	if (!ec && ss.sessions != (uint64_t)nfiles) {
		fprintf(stderr, "%s: %d files gave %" PRIu64 " sessions; --to needs one each\n",
			t->prog, nfiles, ss.sessions);
		ec = EXIT_BADINPUT;
	}
	if (!ec) {
		nt_ch_opts o = {sizeof o, cfg->to, ids, (size_t)nfiles,
				(cfg->replace ? NT_CH_REPLACE : 0u) |
					(cfg->no_events ? NT_CH_NO_EVENTS : 0u),
				cfg->labels, cfg->nlabels, prof};
		nt_ch_stats cs = {sizeof cs, 0, 0, 0, 0, 0, 0, 0};
		nt_error err;
		nt_error_clear(&err);
		double t0 = tool_mono_s();
		if (nt_store_export_clickhouse(st, &o, &cs, &err)) {
			ec = tool_error(t, NULL, &err);
		} else if (t->verbose) {
			double dt = tool_mono_s() - t0;
			fprintf(stderr,
				"%s: ClickHouse: %" PRIu64 " trace(s) imported, %" PRIu64
				" there already, %" PRIu64 " samples, %" PRIu64 " events, %" PRIu64
				" rows (%.1f MB) in %.3f s\n",
				t->prog, cs.imported, cs.skipped, cs.samples, cs.events, cs.rows,
				(double)cs.bytes / 1e6, dt);
		}
	}
	free(idbuf);
	free(ids);
	return ec;
}

/* ------------------------------------------------------------------ main */

static int parse_args(tool *t, sql_cfg *cfg, int argc, char **argv)
{
	struct option *lo;
	/* -e SQL is --query (-q, its letter before, is still read: -q is --quiet elsewhere) */
	const char *shortopts = tool_getopt_colon(t, &lo, "q:");
	int c;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		switch (c) {
		case OPT_COMPAT: case OPT_THREAD: case OPT_RANGE: case OPT_CATEGORY:
		case OPT_MANAGED_ONLY: case OPT_RULES: case OPT_SUBSYSTEMS: case OPT_SYMBOLS:
		case OPT_NO_DEMANGLE: case OPT_NO_DEFAULT_RULES: case OPT_JOBS:
		case OPT_FOCUS: case OPT_EXCLUDE: {
			int r = profile_args_handle(t, &cfg->pa, c, optarg);
			if (r < 0)
				return -r;
			break;
		}
		case OPT_OUTPUT: cfg->out = optarg; break;
		case OPT_QUERY:
		case OPT_QUERY_OLD:
			if (cfg->query || cfg->query_file)
				return tool_usage_error(t, "give one query (-e or --query-file)");
			cfg->query = optarg;
			break;
		case OPT_QUERY_FILE:
			if (cfg->query || cfg->query_file)
				return tool_usage_error(t, "give one query (-e or --query-file)");
			cfg->query_file = optarg;
			break;
		case OPT_CSV: cfg->fmt = FMT_CSV; break;
		case OPT_JSON: cfg->fmt = FMT_JSON; break;
		case OPT_RAW: cfg->fmt = FMT_RAW; break;
		case OPT_NO_EVENTS: cfg->no_events = 1; break;
		case OPT_TO: cfg->to = optarg; break;
		case OPT_REPLACE: cfg->replace = 1; break;
		case OPT_LABEL:
			if (cfg->nlabels == sizeof cfg->labels / sizeof cfg->labels[0])
				return tool_usage_error(t, "too many --label options (64 at most)");
			cfg->labels[cfg->nlabels++] = optarg;
			break;
		case 'v': t->verbose = 1; break;
		case 'h': tool_help(t); return tool_finish(t);
		case 'V': tool_version(t); return tool_finish(t);
		case ':':
		default:
			return tool_bad_option(t, c, argv);
		}
	}
	if (optind >= argc)
		return tool_usage_error(t, "no input file (use - for standard input)");
	if (!cfg->out && !cfg->query && !cfg->query_file && !cfg->to)
		return tool_usage_error(t, "nothing to do: give -o FILE to import, -q SQL to query, "
					   "--to URL to import into ClickHouse, or several");
	if ((cfg->replace || cfg->nlabels) && !cfg->to)
		return tool_usage_error(t, "%s needs --to", cfg->replace ? "--replace" : "--label");
	return -1;
}

/* Imports the traces into st; returns 0 or the exit code (message printed). With keep
 * (an import into ClickHouse only), the samples stay in the profile, returned in *keep
 * for the export, instead of going through the store's sample rows. */
static int import(tool *t, sql_cfg *cfg, nt_store *st, char **files, int nfiles,
		  nt_profile **keep)
{
	nt_profile *p = NULL;
	if (keep)
		nt_store_hook_profile_clickhouse(st, &cfg->pa.popts);
	else
		nt_store_hook_profile(st, &cfg->pa.popts);
	int ec = profile_load(t, &cfg->pa, files, nfiles, &p);
	if (ec)
		return ec;
	nt_error err;
	nt_error_clear(&err);
	if (nt_store_add_profile(st, p, &err)) {
		nt_profile_free(p);
		return tool_error(t, NULL, &err);
	}
	profile_check_selection(t, &cfg->pa, p);
	if (keep)
		*keep = p;
	else
		nt_profile_free(p);
	return 0;
}

int main(int argc, char **argv)
{
	tool t = {"nettrace-sql", "[OPTIONS] FILE... (-o DB | -e SQL)",
		  "Import the samples and events of nettrace (.NET EventPipe) files into an SQLite\n"
		  "database (-o), or query them with SQL (-e): over a temporary in-memory import\n"
		  "of the traces, or over a database given as the only FILE. Schema and example\n"
		  "queries: doc/sqlite-schema.md.",
		  sql_opts, 0, 0};
	sql_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	profile_args_init(&cfg.pa);
	nt_store *st = NULL;
	nt_profile *prof = NULL;
	char *sql = NULL;
	nt_error err;
	nt_error_clear(&err);
	int rc = parse_args(&t, &cfg, argc, argv);
	if (rc >= 0)
		goto out;
	char **files = argv + optind;
	int nfiles = argc - optind;
	int ndb = 0;
	for (int i = 0; i < nfiles; i++)
		ndb += is_database(files[i]);
	if (cfg.to) {
		for (int i = 0; i < nfiles; i++)
			if (strcmp(files[i], "-") == 0) {
				rc = tool_usage_error(&t, "--to reads files, not standard input (a "
							  "trace's id is a hash of its file)");
				goto out;
			}
		if (ndb) {
			rc = tool_usage_error(&t, "--to imports traces, not a database");
			goto out;
		}
		/* the URL is checked before the import (no session: nothing is sent) */
		nt_ch_opts o = {sizeof o, cfg.to, NULL, 0, 0, cfg.labels, cfg.nlabels, NULL};
		if (nt_store_export_clickhouse(NULL, &o, NULL, &err) == NT_EINVAL) {
			rc = tool_usage_error(&t, "%s", err.msg);
			goto out;
		}
	}
	if (ndb && (nfiles > 1 || cfg.out)) {
		rc = tool_usage_error(&t, "a database is queried alone: give either one database "
					  "with -q, or traces");
		goto out;
	}
	if (cfg.query_file) {
		if (strcmp(cfg.query_file, "-") == 0)
			for (int i = 0; i < nfiles; i++)
				if (strcmp(files[i], "-") == 0) {
					rc = tool_usage_error(&t, "standard input cannot hold both a "
								  "trace and the query");
					goto out;
				}
		if (!(sql = slurp(cfg.query_file))) {
			fprintf(stderr, "%s: cannot read %s: %s\n", t.prog, cfg.query_file,
				strerror(errno));
			rc = EXIT_SYSTEM;
			goto out;
		}
	}
	const char *query = sql ? sql : cfg.query;

	if (ndb) {
		nt_store_opts so = {sizeof so, NT_STORE_READONLY, NULL, NULL};
		if (nt_store_open(&st, files[0], &so, &err)) {
			tool_error(&t, NULL, &err);
			goto finish;
		}
	} else {
		progress pg = {isatty(2), tool_mono_s(), 0, 0, t.prog};
		nt_store_opts so = {sizeof so, cfg.no_events ? NT_STORE_NO_EVENTS : 0, on_progress,
				    &pg};
		if (nt_store_open(&st, cfg.out ? cfg.out : ":memory:", &so, &err)) {
			tool_error(&t, NULL, &err);
			goto finish;
		}
		const char *tmp = nt_store_temp_path(st);
		if (tmp && strlen(tmp) < sizeof tmp_path) {
			strcpy(tmp_path, tmp);
			catch_signals();
		}
		/* --to alone: the samples go from the profile to ClickHouse, not through SQLite */
		int direct = cfg.to && !cfg.out && !query;
		int ec = import(&t, &cfg, st, files, nfiles, direct ? &prof : NULL);
		if (!ec && nt_store_commit(st, &err))
			ec = tool_error(&t, NULL, &err);
		tmp_path[0] = '\0';
		progress_done(&pg);
		if (ec) {
			if (t.rc < ec)
				t.rc = ec;
			goto finish;
		}
		if (t.verbose) {
			nt_store_stats ss = NT_INIT(nt_store_stats);
			nt_store_stats_get(st, &ss);
			fprintf(stderr,
				"%s: imported %" PRIu64 " session(s), %" PRIu64 " samples in %" PRIu64
				" groups, %" PRIu64 " events, %" PRIu64 " new callsites%s%s\n",
				t.prog, ss.sessions, ss.samples, ss.groups, ss.events, ss.callsites,
				cfg.out ? " into " : "", cfg.out ? cfg.out : "");
		}
		if (cfg.to) {
			int xc = export_clickhouse(&t, &cfg, st, prof, files, nfiles);
			if (xc) {
				if (t.rc < xc)
					t.rc = xc;
				goto finish;
			}
		}
	}
	if (query)
		run_query(&t, st, query, cfg.fmt);
finish:
	rc = tool_finish(&t);
out:
	nt_profile_free(prof);
	nt_store_free(st);
	free(sql);
	profile_args_free(&cfg.pa);
	return rc;
}
