/* SPDX-License-Identifier: MIT */
/* nettrace-record.c - run a command under the in-process sampler and write a nettrace
 * file: "nettrace-record [-F HZ | -i MS] [--poisson] [-o FILE] -- CMD ARGS...".
 *
 * The sampling happens inside CMD: this tool starts it with libnettrace-sampler.so in
 * LD_PRELOAD and the settings in NETTRACE_* variables (the library's constructor reads
 * them, see ntsampler.h), and a pipe on which the library reports how the trace ended.
 * NETTRACE_PID names the process to record, so CMD's children do not overwrite the file;
 * a program that execs another keeps its pid, and the last program image wins.
 *
 * SIGINT or SIGTERM to nettrace-record: it asks the library to finalize the file ("stop" on
 * a control pipe, which the sampler thread watches), waits for its report, then passes the
 * signal on to CMD. (A terminal's ^C reaches CMD directly too: the library then finalizes
 * the file before CMD dies of it, when CMD left SIGINT at its default action.) A second
 * signal sends SIGTERM, a third SIGKILL.
 *
 * The output is opened before CMD runs (an unwritable one is refused at once). The
 * library reports on the status pipe, which is read while CMD runs: the recorded
 * process's end, and its children (counted when not recorded; with --follow-children
 * each records into FILE with its pid before ".nettrace" and reports its own end).
 * Exit status: CMD's (its exit code, or 128 + the signal that killed it) when the trace
 * was finalized, 1 usage, 3 when no complete trace was written (unwritable output, CMD
 * could not run, did not load the sampler, or ended without finalizing it). */
#include "config.h" /* _GNU_SOURCE: fork, sigaction, setenv, strsignal */

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef NTS_PRELOAD_PATH
#define NTS_PRELOAD_PATH "libnettrace-sampler.so.0"
#endif
#define PRELOAD_NAME "libnettrace-sampler.so.0"

enum {
	OPT_FREQ = 'F',
	OPT_INTERVAL = 'i',
	OPT_OUTPUT = 'o',
	OPT_QUIET = 'q',
	OPT_POISSON = 256,
	OPT_SEED,
	OPT_SAMPLEPOINT,
	OPT_SIGNAL,
	OPT_DEPTH,
	OPT_FOLLOW,
	OPT_FORMAT,
	OPT_BACKEND,
};

static const tool_opt record_opts[] = {
	{"frequency", required_argument, OPT_FREQ, "HZ", "sample HZ times a second (1 to 1000)"},
	{"interval", required_argument, OPT_INTERVAL, "MS",
	 "sample every MS milliseconds (1 to 1000; default 10)"},
	{"poisson", no_argument, OPT_POISSON, NULL,
	 "random (exponential) gaps between samples: no aliasing with periodic work"},
	{"seed", required_argument, OPT_SEED, "N", "seed of the schedule (default: drawn, and kept "
						   "in the trace)"},
	{"output", required_argument, OPT_OUTPUT, "FILE", "trace file (default record.nettrace)"},
	{"samplepoint", no_argument, OPT_SAMPLEPOINT, NULL,
	 "samplepoint mode: CMD calls nts_samplepoint() or is built with -finstrument-functions"},
	{"signal", required_argument, OPT_SIGNAL, "SIG",
	 "real-time signal number to sample with (default: the highest free one)"},
	{"depth", required_argument, OPT_DEPTH, "N", "frames kept per sample (default 128, at most "
						     "1024)"},
	{"backend", required_argument, OPT_BACKEND, "B",
	 "auto (default: perf where permitted), perf (perf_events, else fail) or signal"},
	{"follow-children", no_argument, OPT_FOLLOW, NULL,
	 "record CMD's child processes too, each into OUTPUT with its pid before '.nettrace'"},
	{"quiet", no_argument, OPT_QUIET, NULL, "no summary line on stderr"},
	{"format", required_argument, OPT_FORMAT, "FMT",
	 "nettrace (default) or universal (the V6 Universal events TraceEvent and PerfView read)"},
	TOOL_STD_OPTS,
	{NULL, 0, 0, NULL, NULL},
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static int readable(const char *p)
{
	return access(p, R_OK) == 0;
}

/* The sampler library: $NETTRACE_PRELOAD, next to a build tree's binary (tools/.libs/X
 * or tools/X -> sampler/.libs/), or the installed one. */
static int find_preload(char *out, size_t len)
{
	const char *env = getenv("NETTRACE_PRELOAD");
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return readable(out) ? 0 : -1;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			const char *rel[] = {"/../../sampler/.libs/", "/../sampler/.libs/"};
			for (size_t i = 0; i < 2; i++) {
				if ((size_t)snprintf(out, len, "%s%s%s", exe, rel[i], PRELOAD_NAME) <
					    len &&
				    readable(out))
					return 0;
			}
		}
	}
	snprintf(out, len, "%s", NTS_PRELOAD_PATH);
	return readable(out) ? 0 : -1;
}

typedef struct rec_cfg {
	const char *output;
	const char *freq, *interval, *seed, *signo, *depth, *backend;
	int poisson, samplepoint, quiet, follow;
	int universal;  /* --format universal */
} rec_cfg;

/* --format universal: rewrites the finished trace in place through the library's
 * Universal writer (nt_universal_write), symbols resolved now, while the modules exist. */
static int to_universal(tool *t, const char *path)
{
	size_t n = strlen(path) + 16;
	char *tmp = malloc(n);
	if (!tmp) {
		fprintf(stderr, "%s: out of memory\n", t->prog);
		return EXIT_SYSTEM;
	}
	snprintf(tmp, n, "%s.universal", path);
	nt_error err;
	nt_error_clear(&err);
	nt_reader *r;
	int ec = EXIT_OK;
	if (nt_reader_open_file(&r, path, NULL, &err)) {
		ec = tool_error(t, path, &err);
		free(tmp);
		return ec;
	}
	FILE *fp = fopen(tmp, "wb");
	if (!fp) {
		fprintf(stderr, "%s: %s: %s\n", t->prog, tmp, strerror(errno));
		nt_reader_free(r);
		free(tmp);
		return EXIT_SYSTEM;
	}
	nt_sink sink = nt_sink_stdio(fp);
	int rc = nt_universal_write(r, &sink, NULL, &err);
	nt_reader_free(r);
	if (fclose(fp) != 0 && rc == 0) {
		fprintf(stderr, "%s: %s: %s\n", t->prog, tmp, strerror(errno));
		ec = EXIT_SYSTEM;
	} else if (rc) {
		ec = tool_error(t, path, &err);
	} else if (rename(tmp, path) != 0) {
		fprintf(stderr, "%s: %s: %s\n", t->prog, path, strerror(errno));
		ec = EXIT_SYSTEM;
	}
	if (ec)
		unlink(tmp);
	free(tmp);
	return ec;
}

/* In the child: the environment for the library, then exec. Never returns. */
static void run_child(const rec_cfg *c, const char *preload, int status_fd, int control_fd,
		      char **argv)
{
	char buf[64];
	setenv("NETTRACE_OUTPUT", c->output, 1);
	unsetenv("NETTRACE_INTERVAL");
	unsetenv("NETTRACE_FREQUENCY");
	if (c->freq)
		setenv("NETTRACE_FREQUENCY", c->freq, 1);
	if (c->interval)
		setenv("NETTRACE_INTERVAL", c->interval, 1);
	setenv("NETTRACE_SCHEDULE", c->poisson ? "poisson" : "fixed", 1);
	setenv("NETTRACE_MODE", c->samplepoint ? "samplepoint" : "signal", 1);
	if (c->seed)
		setenv("NETTRACE_SEED", c->seed, 1);
	else
		unsetenv("NETTRACE_SEED");
	if (c->signo)
		setenv("NETTRACE_SIGNAL", c->signo, 1);
	if (c->backend)
		setenv("NETTRACE_BACKEND", c->backend, 1);
	if (c->depth)
		setenv("NETTRACE_DEPTH", c->depth, 1);
	snprintf(buf, sizeof buf, "%ld", (long)getpid());
	setenv("NETTRACE_PID", buf, 1);
	snprintf(buf, sizeof buf, "%d", status_fd);
	setenv("NETTRACE_STATUS_FD", buf, 1);
	snprintf(buf, sizeof buf, "%d", control_fd);
	setenv("NETTRACE_CONTROL_FD", buf, 1);
	struct stat sb;
	if (fstat(status_fd, &sb) == 0) {
		/* which pipe the descriptor is: a descendant may reuse the number */
		snprintf(buf, sizeof buf, "%llu:%llu", (unsigned long long)sb.st_dev,
			 (unsigned long long)sb.st_ino);
		setenv("NETTRACE_STATUS_ID", buf, 1);
	}
	if (c->follow)
		setenv("NETTRACE_FOLLOW", "1", 1);
	else
		unsetenv("NETTRACE_FOLLOW");
	const char *old = getenv("LD_PRELOAD");
	size_t need = strlen(preload) + (old ? strlen(old) + 2 : 1);
	char *pre = malloc(need);
	if (pre) {
		snprintf(pre, need, "%s%s%s", preload, old && *old ? ":" : "", old ? old : "");
		setenv("LD_PRELOAD", pre, 1);
	}
	execvp(argv[0], argv);
	int e = errno;
	dprintf(status_fd, "exec %d\n", e);
	_exit(127);
}

/* What the library (or the child before exec) reports on the status pipe, one line each:
 *   ok samples=N ... | error MESSAGE | exec ERRNO     the recorded process (the last image)
 *   fork PID                                        a child process that is not recorded
 *   child PID start path=FILE                        a child recorded (--follow-children)
 *   child PID ok samples=N ... path=FILE | child PID error MESSAGE path=FILE
 * Read while CMD runs (many children would fill the pipe) and at the end. */
typedef struct rec_state {
	char line[8192];
	size_t len;
	char last[1024];       /* the last line about the recorded process */
	unsigned long forks;   /* children not recorded */
	int *started;          /* children recording, not yet reported */
	char **started_path;
	size_t nstarted, capstarted;
	unsigned long children_ok, children_bad;
	int quiet;
	const char *prog;
} rec_state;

static uint64_t field_u64(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static void child_line(rec_state *rs, const char *l)
{
	char *end;
	long pid = strtol(l, &end, 10);
	if (end == l || *end != ' ')
		return;
	const char *what = end + 1;
	const char *pp = strstr(what, " path=");
	const char *path = pp ? pp + 6 : "";
	size_t i;
	for (i = 0; i < rs->nstarted && rs->started[i] != (int)pid; i++)
		;
	if (strncmp(what, "start ", 6) == 0) {
		if (i < rs->nstarted)
			return; /* an exec'd image of a child already recording */
		if (rs->nstarted == rs->capstarted) {
			size_t nc = rs->capstarted ? 2 * rs->capstarted : 16;
			int *np = realloc(rs->started, nc * sizeof *np);
			if (!np)
				return;
			rs->started = np;
			char **nq = realloc(rs->started_path, nc * sizeof *nq);
			if (!nq)
				return;
			rs->started_path = nq;
			rs->capstarted = nc;
		}
		rs->started_path[rs->nstarted] = strdup(what + 11);
		rs->started[rs->nstarted++] = (int)pid;
		return;
	}
	if (i < rs->nstarted) {
		free(rs->started_path[i]);
		rs->started[i] = rs->started[rs->nstarted - 1];
		rs->started_path[i] = rs->started_path[rs->nstarted - 1];
		rs->nstarted--;
	}
	if (strncmp(what, "ok ", 3) == 0) {
		rs->children_ok++;
		if (!rs->quiet)
			fprintf(stderr, "%s: child %ld: %" PRIu64 " samples, file complete: %s\n",
				rs->prog, pid, field_u64(what, "samples="), path);
	} else if (strncmp(what, "error ", 6) == 0) {
		rs->children_bad++;
		fprintf(stderr, "%s: child %ld: %s: %.*s\n", rs->prog, pid, path,
			(int)(pp ? pp - (what + 6) : (ptrdiff_t)strlen(what + 6)), what + 6);
	}
}

static void status_line(rec_state *rs, const char *l)
{
	if (!strncmp(l, "ok ", 3) || !strncmp(l, "error ", 6) || !strncmp(l, "exec ", 5))
		snprintf(rs->last, sizeof rs->last, "%s", l);
	else if (!strncmp(l, "fork ", 5))
		rs->forks++;
	else if (!strncmp(l, "child ", 6))
		child_line(rs, l + 6);
}

static void read_status(rec_state *rs, int fd)
{
	for (;;) {
		if (rs->len == sizeof rs->line - 1)
			rs->len = 0; /* a line this long is not ours */
		ssize_t r = read(fd, rs->line + rs->len, sizeof rs->line - 1 - rs->len);
		if (r <= 0)
			return;
		rs->len += (size_t)r;
		rs->line[rs->len] = 0;
		char *p = rs->line, *nl;
		while ((nl = strchr(p, '\n')) != NULL) {
			*nl = 0;
			status_line(rs, p);
			p = nl + 1;
		}
		rs->len = strlen(p);
		memmove(rs->line, p, rs->len + 1);
	}
}

/* Asks the library to finalize the trace and waits (at most 10 s, or until CMD exits)
 * for its report. In samplepoint mode the request is read at CMD's next samplepoint
 * check, which may never come (a program blocked for good): 2 s, then the signal passed
 * on does the rest (the library finalizes at the next check, or CMD ends a second later
 * without it, as the signal's default action would). */
static void request_stop(rec_state *rs, int control_fd, int status_fd, pid_t pid, int samplepoint)
{
	ssize_t w = write(control_fd, "stop\n", 5);
	(void)w;
	rs->last[0] = 0;
	for (int i = 0; i < (samplepoint ? 200 : 1000); i++) {
		read_status(rs, status_fd);
		if (rs->last[0])
			return;
		siginfo_t si; /* CMD ended? (left for the caller's waitpid to collect) */
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != 0)
			return;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
}

/* CMD's status as ours: its exit status, or 128 + the signal that killed it (as shells
 * report it). */
static int cmd_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_SYSTEM;
}

static int record(tool *t, const rec_cfg *c, char **argv)
{
	char preload[PATH_MAX];
	if (find_preload(preload, sizeof preload)) {
		fprintf(stderr, "%s: cannot find the sampler library %s (set NETTRACE_PRELOAD)\n",
			t->prog, preload);
		return EXIT_SYSTEM;
	}
	/* the output must be writable before CMD runs, not found unwritable at its end */
	struct stat ost;
	int existed = stat(c->output, &ost) == 0;
	int ofd = open(c->output, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (ofd < 0) {
		fprintf(stderr, "%s: %s: cannot write the trace: %s\n", t->prog, c->output,
			strerror(errno));
		return EXIT_SYSTEM;
	}
	close(ofd);
	int pfd[2], cfd[2];
	if (pipe(pfd) || pipe(cfd)) {
		fprintf(stderr, "%s: pipe: %s\n", t->prog, strerror(errno));
		return EXIT_SYSTEM;
	}
	/* ours: the status read end and the control write end; CMD gets the others */
	fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
	fcntl(cfd[1], F_SETFD, FD_CLOEXEC);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", t->prog, strerror(errno));
		return EXIT_SYSTEM;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		close(pfd[0]);
		close(cfd[1]);
		signal(SIGPIPE, SIG_DFL);
		run_child(c, preload, pfd[1], cfd[0], argv);
	}
	close(pfd[1]);
	close(cfd[0]);
	static rec_state rs;
	rs.quiet = c->quiet;
	rs.prog = t->prog;
	int status = 0, forwarded = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			fprintf(stderr, "%s: waitpid: %s\n", t->prog, strerror(errno));
			return EXIT_SYSTEM;
		}
		if (got_signal) {
			int sig = forwarded == 0 ? (int)got_signal : forwarded == 1 ? SIGTERM : SIGKILL;
			got_signal = 0;
			if (forwarded++ == 0)
				request_stop(&rs, cfd[1], pfd[0], pid, c->samplepoint);
			kill(pid, sig);
			continue;
		}
		/* the status pipe, or at most 50 ms (CMD's end is noticed by waitpid) */
		struct pollfd pf = {pfd[0], POLLIN, 0};
		if (poll(&pf, 1, 50) > 0)
			read_status(&rs, pfd[0]);
	}
	close(cfd[1]);
	read_status(&rs, pfd[0]);
	const char *last = rs.last;
	const char *cmd = argv[0];
	int result;
	char how[128] = "";
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	if (strncmp(last, "exec ", 5) == 0) {
		fprintf(stderr, "%s: cannot run '%s': %s\n", t->prog, cmd, strerror(atoi(last + 5)));
		result = EXIT_SYSTEM;
	} else if (strncmp(last, "error ", 6) == 0) {
		fprintf(stderr, "%s: %s: %s\n", t->prog, c->output, last + 6);
		result = EXIT_SYSTEM;
	} else if (strncmp(last, "ok ", 3) != 0) {
		struct stat st;
		if (stat(c->output, &st) != 0 || st.st_size == 0)
			fprintf(stderr,
				"%s: no trace written: '%s' did not load the sampler (a static or "
				"setuid program?)%s%s\n",
				t->prog, cmd, how[0] ? "; it " : "", how);
		else
			fprintf(stderr,
				"%s: %s: the trace was not finalized ('%s' %s); the blocks written "
				"so far are readable\n",
				t->prog, c->output, cmd, how[0] ? how : "ended without reporting");
		if (!existed && stat(c->output, &st) == 0 && st.st_size == 0)
			unlink(c->output); /* the file only our check made */
		result = EXIT_SYSTEM;
	} else {
		if (how[0])
			fprintf(stderr, "%s: note: '%s' %s\n", t->prog, cmd, how);
		int uec = c->universal ? to_universal(t, c->output) : EXIT_OK;
		if (uec)
			result = uec;
		else if (!c->quiet)
			fprintf(stderr,
				"%s: %" PRIu64 " samples, file complete: %s (%.1f rounds/s; %" PRIu64
				" dropped, %" PRIu64 " missed)\n",
				t->prog, field_u64(last, "samples="), c->output,
				strstr(last, "hz=") ? strtod(strstr(last, "hz=") + 3, NULL) : 0.0,
				field_u64(last, "dropped="), field_u64(last, "missed="));
		if (!uec)
			result = cmd_status(status);
	}
	close(pfd[0]);
	for (size_t i = 0; i < rs.nstarted; i++) {
		fprintf(stderr,
			"%s: child %d: %s: the trace was not finalized; the blocks written so far "
			"are readable\n",
			t->prog, rs.started[i], rs.started_path[i] ? rs.started_path[i] : "");
		free(rs.started_path[i]);
	}
	free(rs.started);
	free(rs.started_path);
	if (rs.forks)
		fprintf(stderr,
			"%s: note: %lu child process%s not recorded (--follow-children records "
			"them)\n",
			t->prog, rs.forks, rs.forks == 1 ? " was" : "es were");
	return result;
}

int main(int argc, char **argv)
{
	tool t = {"nettrace-record", "[OPTIONS] [--] CMD [ARGS...]",
		  "Run CMD with the in-process sampler and write its CPU samples (native stacks)\n"
		  "to a nettrace file.",
		  record_opts, 0, 0};
	struct option *lo;
	const char *shortopts = tool_getopt_cmd(&t, &lo); /* stops at CMD */
	rec_cfg c;
	memset(&c, 0, sizeof c);
	c.output = "record.nettrace";
	uint64_t v;
	int opt;
	while ((opt = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		switch (opt) {
		case 'h': tool_help(&t); return tool_finish(&t);
		case 'V': tool_version(&t); return tool_finish(&t);
		case OPT_FREQ:
			if (tool_parse_u64(optarg, 1, 1000, &v))
				return tool_usage_error(&t, "bad frequency '%s' (1 to 1000 Hz)", optarg);
			c.freq = optarg;
			break;
		case OPT_INTERVAL:
			if (tool_parse_u64(optarg, 1, 1000, &v))
				return tool_usage_error(&t, "bad interval '%s' (1 to 1000 ms)", optarg);
			c.interval = optarg;
			break;
		case OPT_POISSON: c.poisson = 1; break;
		case OPT_SEED:
			if (tool_parse_u64(optarg, 1, UINT64_MAX, &v))
				return tool_usage_error(&t, "bad seed '%s' (a positive integer)", optarg);
			c.seed = optarg;
			break;
		case OPT_OUTPUT:
			if (!*optarg)
				return tool_usage_error(&t, "empty output file name");
			c.output = optarg;
			break;
		case OPT_SAMPLEPOINT: c.samplepoint = 1; break;
		case OPT_SIGNAL:
			if (tool_parse_u64(optarg, (uint64_t)SIGRTMIN, (uint64_t)SIGRTMAX, &v))
				return tool_usage_error(&t, "bad signal '%s' (a real-time signal, %d to %d)",
							optarg, SIGRTMIN, SIGRTMAX);
			c.signo = optarg;
			break;
		case OPT_DEPTH:
			if (tool_parse_u64(optarg, 1, 1024, &v))
				return tool_usage_error(&t, "bad depth '%s' (1 to 1024)", optarg);
			c.depth = optarg;
			break;
		case OPT_BACKEND:
			if (strcmp(optarg, "auto") && strcmp(optarg, "perf") && strcmp(optarg, "signal"))
				return tool_usage_error(&t, "unknown backend '%s' (use auto, perf or "
							   "signal)",
							optarg);
			c.backend = optarg;
			break;
		case OPT_QUIET: c.quiet = 1; break;
		case OPT_FOLLOW: c.follow = 1; break;
		case OPT_FORMAT:
			if (strcmp(optarg, "universal") == 0)
				c.universal = 1;
			else if (strcmp(optarg, "nettrace") == 0)
				c.universal = 0;
			else
				return tool_usage_error(&t, "unknown format '%s' (use nettrace or "
							   "universal)",
							optarg);
			break;
		case ':':
		default:
			return tool_bad_option(&t, opt, argv);
		}
	}
	if (c.freq && c.interval)
		return tool_usage_error(&t, "--frequency and --interval exclude each other");
	if (optind >= argc)
		return tool_usage_error(&t, "no command to run");
	t.rc = record(&t, &c, argv + optind);
	return tool_finish(&t);
}
