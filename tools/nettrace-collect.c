/* SPDX-License-Identifier: MIT */
/* nettrace-collect.c - records a running .NET process: attaches to its diagnostic socket,
 * starts an EventPipe session (nt_diag_collect), copies the nettrace stream to a file while
 * a reader thread follows it for the progress line, and stops the session on SIGINT or at
 * the duration (nt_diag_stop: the rundown arrives, the file ends properly). --list lists
 * the .NET processes. */
#include "config.h"
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { OPT_DURATION = 300, OPT_PROVIDERS, OPT_PROFILE, OPT_RATE, OPT_LIST, OPT_BUFFER,
       OPT_NO_RUNDOWN, OPT_LIST_PROFILES, OPT_TIMEOUT, OPT_NAME };

static const tool_opt OPTS[] = {
	{"pid", required_argument, 'p', "PID", "the process to record"},
	{"name", required_argument, 'n', "NAME",
	 "the process to record, by name (its command, entry assembly or program file)"},
	{"output", required_argument, 'o', "FILE",
	 "write the trace to FILE ('-': standard output); default trace-PID.nettrace"},
	{"duration", required_argument, OPT_DURATION, "TIME",
	 "stop after TIME (10s, 500ms, 2m); default: until SIGINT (Ctrl-C)"},
	{"providers", required_argument, OPT_PROVIDERS, "SPEC",
	 "providers in dotnet-trace's syntax Name[:Keywords[:Level[:Args]]],... (repeatable)"},
	{"profile", required_argument, OPT_PROFILE, "NAME",
	 "a provider profile (--list-profiles; default cpu-sampling when no --providers)"},
	{"rate", required_argument, OPT_RATE, "HZ",
	 "sampling rate: for -- CMD, set at its start (DOTNET_EventPipeThreadSamplingRate); "
	 "a running process keeps its own"},
	{"buffer", required_argument, OPT_BUFFER, "MB", "the session's buffer size (default 256)"},
	{"no-rundown", no_argument, OPT_NO_RUNDOWN, NULL,
	 "no rundown at the end (smaller; methods jitted before the session stay unnamed)"},
	{"timeout", required_argument, OPT_TIMEOUT, "TIME",
	 "how long to wait for the runtime's replies and the rundown (default 5s and 30s)"},
	{"list", no_argument, OPT_LIST, NULL, "list the .NET processes and exit"},
	{"list-profiles", no_argument, OPT_LIST_PROFILES, NULL, "list the profiles and exit"},
	{"quiet", no_argument, 'q', NULL, "no progress line and no summary"},
	TOOL_STD_OPTS,
	{NULL, 0, 0, NULL, NULL},
};

static volatile sig_atomic_t g_stop; /* 1: stop the session; 2+: give up at once */

static void on_signal(int sig)
{
	(void)sig;
	g_stop++;
}

/* /proc/PID/comm without its newline ("" when unreadable). */
static void proc_comm(uint32_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%" PRIu32 "/comm", pid);
	buf[0] = '\0';
	FILE *fp = fopen(path, "r");
	if (!fp)
		return;
	if (fgets(buf, (int)len, fp))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
}

/* The file name of the command line's first word. */
static void cmd_base(const char *cmd, char *buf, size_t len)
{
	size_t n = strcspn(cmd, " ");
	const char *s = cmd;
	for (size_t i = 0; i < n; i++)
		if (cmd[i] == '/')
			s = cmd + i + 1;
	size_t k = (size_t)(cmd + n - s);
	if (k >= len)
		k = len - 1;
	memcpy(buf, s, k);
	buf[k] = '\0';
}

static int do_list(tool *t)
{
	nt_error err;
	nt_error_clear(&err);
	uint32_t *pids;
	size_t n;
	if (nt_diag_list(&pids, &n, &err))
		return tool_error(t, NULL, &err);
	printf("%-8s %-20s %-12s %s\n", "PID", "NAME", "RUNTIME", "COMMAND LINE");
	for (size_t i = 0; i < n; i++) {
		char path[4096], comm[64];
		nt_diag_info info = NT_INIT(nt_diag_info);
		proc_comm(pids[i], comm, sizeof comm);
		nt_error_clear(&err);
		if (nt_diag_socket_path(pids[i], path, sizeof path, &err) ||
		    nt_diag_process_info(path, 0, &info, &err)) {
			printf("%-8" PRIu32 " %-20s %-12s (%s)\n", pids[i], comm, "?", err.msg);
			continue;
		}
		printf("%-8" PRIu32 " %-20s %-12s %s\n", pids[i], comm,
		       info.clr_version[0] ? info.clr_version : "?", info.command_line);
	}
	free(pids);
	return tool_finish(t);
}

/* Finds the one process called name. Returns 0 with *pid, or an exit code. */
static int find_by_name(tool *t, const char *name, uint32_t *pid)
{
	nt_error err;
	nt_error_clear(&err);
	uint32_t *pids;
	size_t n, found = 0;
	if (nt_diag_list(&pids, &n, &err))
		return tool_error(t, NULL, &err);
	for (size_t i = 0; i < n; i++) {
		char comm[64], base[256], path[4096];
		nt_diag_info info = NT_INIT(nt_diag_info);
		memset(&info, 0, sizeof info);
		proc_comm(pids[i], comm, sizeof comm);
		nt_error_clear(&err);
		if (nt_diag_socket_path(pids[i], path, sizeof path, &err) == 0)
			nt_diag_process_info(path, 0, &info, &err);
		cmd_base(info.command_line, base, sizeof base);
		if (strcmp(comm, name) == 0 || strcmp(info.assembly, name) == 0 ||
		    strcmp(base, name) == 0) {
			if (found++)
				fprintf(stderr, "%s: several .NET processes are called '%s': %" PRIu32
					" and %" PRIu32 " (use -p PID)\n", t->prog, name, *pid, pids[i]);
			*pid = pids[i];
		}
	}
	free(pids);
	if (found == 1)
		return 0;
	if (found == 0)
		fprintf(stderr, "%s: no .NET process is called '%s' (see --list)\n", t->prog, name);
	return EXIT_USAGE;
}

/* ---------------------------------------------------------------- launching */

/* Starts CMD with the sampling interval of --rate in its environment: the runtime reads
 * DOTNET_EventPipeThreadSamplingRate (milliseconds, in hexadecimal, as every CLR setting)
 * once at startup, for all its sessions (doc/format/diagnostics-ipc.md). */
static int launch(tool *t, char **cmd, double rate_hz, pid_t *out)
{
	char hex[32] = "";
	if (rate_hz > 0) {
		unsigned ms = (unsigned)(1000.0 / rate_hz + 0.5);
		snprintf(hex, sizeof hex, "%x", ms ? ms : 1u);
	}
	fflush(NULL);
	pid_t p = fork();
	if (p < 0) {
		fprintf(stderr, "%s: cannot fork: %s\n", t->prog, strerror(errno));
		return EXIT_SYSTEM;
	}
	if (p == 0) {
		if (hex[0])
			setenv("DOTNET_EventPipeThreadSamplingRate", hex, 1);
		execvp(cmd[0], cmd);
		fprintf(stderr, "%s: cannot run %s: %s\n", t->prog, cmd[0], strerror(errno));
		_exit(127);
	}
	*out = p;
	return 0;
}

static int set_err(nt_error *err, const char *msg)
{
	nt_error_clear(err);
	err->code = NT_EIO;
	snprintf(err->msg, sizeof err->msg, "%s", msg);
	return NT_EIO;
}

/* Waits (up to 10 s) for the launched runtime's socket and its first answer. */
static int wait_socket(tool *t, pid_t child, char *sock, size_t len, nt_error *err)
{
	for (int i = 0; i < 500; i++) {
		int st;
		if (waitpid(child, &st, WNOHANG) == child) {
			fprintf(stderr, "%s: the command ended before its runtime listened (%s %d)\n",
				t->prog, WIFEXITED(st) ? "exit status" : "signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			return set_err(err, "no .NET runtime in the command");
		}
		nt_error e2;
		nt_error_clear(&e2);
		nt_diag_info info = NT_INIT(nt_diag_info);
		if (nt_diag_socket_path((uint32_t)child, sock, len, &e2) == 0 &&
		    nt_diag_process_info(sock, 1000, &info, &e2) == 0)
			return 0;
		struct timespec ts = {0, 20 * 1000000};
		nanosleep(&ts, NULL);
	}
	char msg[128];
	snprintf(msg, sizeof msg, "process %d: no diagnostic socket after 10 s (not a .NET "
		 "program?)", (int)child);
	return set_err(err, msg);
}

/* Says how the launched command ended, or that it still runs. */
static void child_status(tool *t, pid_t child, int quiet, int ended)
{
	int st = 0;
	pid_t w = 0;
	/* after Ctrl-C the command got the signal too, and a stream that ended by itself means
	 * it is exiting: give it a moment */
	int wait_for_it = g_stop || ended;
	for (int i = 0; i < (wait_for_it ? 100 : 1) && w == 0; i++) {
		w = waitpid(child, &st, WNOHANG);
		if (w == 0 && wait_for_it) {
			struct timespec ts = {0, 20 * 1000000};
			nanosleep(&ts, NULL);
		}
	}
	if (quiet)
		return;
	if (w == child && WIFEXITED(st))
		fprintf(stderr, "%s: the command exited with status %d\n", t->prog, WEXITSTATUS(st));
	else if (w == child && WIFSIGNALED(st))
		fprintf(stderr, "%s: the command was killed by signal %d\n", t->prog, WTERMSIG(st));
	else
		fprintf(stderr, "%s: the command (pid %d) keeps running\n", t->prog, (int)child);
}

/* ---------------------------------------------------------------- the reader thread */

/* What the reader thread learns from the stream it follows. */
typedef struct follow {
	int fd;                      /* read end of the pipe */
	_Atomic uint64_t events, samples, bytes;
	atomic_int done;
	int rc;                      /* the reader's result */
	nt_error err;
	nt_reader_stats stats;
	char warning[256];
	uint64_t warning_off;
	uint64_t rundown_methods;    /* rundown MethodDCEndVerbose events */
	nt_rate_info rate;
	int has_rate;
	nt_trace_header hdr;
} follow;

static void *follow_main(void *arg)
{
	follow *f = arg;
	nt_reader *r = NULL;
	nt_reader_opts ro = {sizeof ro, NT_READ_FILE_ORDER, "stream"};
	nt_rate *rt = NULL;
	nt_error_clear(&f->err);
	f->rc = nt_reader_open_fd(&r, f->fd, &ro, &f->err);
	if (f->rc == 0) {
		f->hdr = *nt_reader_header(r);
		if (nt_rate_new(&rt, f->hdr.expected_sampling_ns, f->hdr.qpc_frequency,
				f->hdr.sync_qpc, &f->err))
			rt = NULL;
		const nt_event *ev;
		int k;
		while ((k = nt_reader_next(r, &ev, &f->err)) == 1) {
			uint32_t type;
			f->events++;
			if (nt_event_is_sample(ev, &type)) {
				f->samples++;
				if (rt)
					nt_rate_add(rt, ev->timestamp, ev->thread_id,
						    ev->capture_thread_id);
			} else if (ev->meta && ev->meta->event_id == 144 && ev->meta->provider &&
				   strcmp(ev->meta->provider, NT_PROVIDER_RUNDOWN) == 0) {
				f->rundown_methods++;
			}
			if ((f->events & 1023) == 0)
				f->bytes = nt_reader_stats_get(r)->bytes;
		}
		f->rc = k < 0 ? k : 0;
		f->stats = *nt_reader_stats_get(r);
		f->bytes = f->stats.bytes;
		uint64_t off = 0;
		const char *w = nt_reader_warning(r, &off);
		if (w) {
			snprintf(f->warning, sizeof f->warning, "%s", w);
			f->warning_off = off;
		}
		if (rt) {
			f->rate = *nt_rate_result(rt);
			f->rate.gaps = NULL;
			f->has_rate = 1;
		}
	}
	nt_rate_free(rt);
	nt_reader_free(r);
	/* drain whatever still comes so that the copier never blocks on a full pipe */
	char buf[65536];
	while (read(f->fd, buf, sizeof buf) > 0)
		;
	close(f->fd);
	f->done = 1;
	return NULL;
}

/* ---------------------------------------------------------------- recording */

typedef struct rec {
	tool *t;
	uint32_t pid;
	const char *sock;
	const char *out_path;
	double duration;      /* 0: until SIGINT */
	double drain_timeout; /* after StopTracing */
	int timeout_ms;
	int quiet;
	nt_diag_collect_opts co;
	double rate_hz;       /* --rate, 0 if not given */
	int launched;         /* -- CMD: the rate was set in its environment */
	int process_ended;    /* out: the stream ended before a stop */
} rec;

static int record(rec *rc_)
{
	tool *t = rc_->t;
	nt_error err;
	nt_error_clear(&err);
	int out = 1;
	int to_stdout = strcmp(rc_->out_path, "-") == 0;
	if (!to_stdout) {
		out = open(rc_->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out < 0) {
			fprintf(stderr, "%s: cannot open %s: %s\n", t->prog, rc_->out_path,
				strerror(errno));
			return EXIT_SYSTEM;
		}
	}
	int sfd;
	uint64_t session;
	if (nt_diag_collect(rc_->sock, &rc_->co, &sfd, &session, &err)) {
		if (!to_stdout) {
			close(out);
			unlink(rc_->out_path);
		}
		return tool_error(t, rc_->sock, &err);
	}
	int pfd[2];
	if (pipe(pfd) != 0) {
		fprintf(stderr, "%s: cannot create a pipe: %s\n", t->prog, strerror(errno));
		close(sfd);
		return EXIT_SYSTEM;
	}
	fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
	follow f;
	memset(&f, 0, sizeof f);
	f.fd = pfd[0];
	pthread_t th;
	if (pthread_create(&th, NULL, follow_main, &f) != 0) {
		fprintf(stderr, "%s: cannot start a thread\n", t->prog);
		close(sfd);
		return EXIT_SYSTEM;
	}
	int to_follower = pfd[1];

	tool_progress pg;
	tool_progress_begin(&pg, t, "-");
	int show = !rc_->quiet && pg.mode != 0;
	int tty_line = pg.mode == 2;
	double start = tool_mono_s(), last_show = start, stop_at = 0;
	int stopped = 0, eof = 0, write_failed = 0, stop_failed = 0, stop_started = 0;
	tool_stopper st;
	memset(&st, 0, sizeof st);
	pthread_t stop_th;
	uint64_t bytes = 0, last_samples = 0;
	double last_t = start;
	uint8_t buf[1 << 16];
	if (!rc_->quiet)
		fprintf(stderr, "%s: recording process %" PRIu32 " (session %" PRIu64 ") to %s%s\n",
			t->prog, rc_->pid, session, to_stdout ? "standard output" : rc_->out_path,
			rc_->duration > 0 ? "" : "; Ctrl-C stops");
	while (!eof) {
		double now = tool_mono_s();
		if (!stopped && (g_stop || (rc_->duration > 0 && now - start >= rc_->duration))) {
			st.sock = rc_->sock;
			st.session = session;
			st.timeout_ms = (int)(rc_->drain_timeout * 1000);
			if (pthread_create(&stop_th, NULL, tool_stop_main, &st) == 0)
				stop_started = 1;
			else
				stop_failed = 1;
			stopped = 1;
			stop_at = now;
		}
		if (stopped && (g_stop >= 2 || now - stop_at > rc_->drain_timeout))
			break;
		struct pollfd p = {sfd, POLLIN, 0};
		int pr = poll(&p, 1, 200);
		if (pr > 0) {
			ssize_t n = read(sfd, buf, sizeof buf);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				eof = 1;
			} else {
				bytes += (uint64_t)n;
				if (!write_failed && tool_write_all(out, buf, (size_t)n)) {
					fprintf(stderr, "%s: cannot write %s: %s\n", t->prog,
						to_stdout ? "standard output" : rc_->out_path,
						strerror(errno));
					write_failed = 1;
					if (!stopped)
						g_stop = 1;
				}
				if (to_follower >= 0 && tool_write_all(to_follower, buf, (size_t)n)) {
					close(to_follower);
					to_follower = -1;
				}
			}
		}
		now = tool_mono_s();
		if (show && now - last_show >= 1.0) {
			uint64_t s = f.samples;
			double rate = (double)(s - last_samples) / (now - last_t);
			last_samples = s;
			last_t = now;
			last_show = now;
			char hb[32];
			tool_human_bytes(hb, sizeof hb, (double)bytes, 1);
			fprintf(stderr, "%s%s: %.0f s, %s, %" PRIu64 " events, %" PRIu64
				" samples, %.0f samples/s%s%s", tty_line ? "\r" : "", t->prog,
				now - start, hb, (uint64_t)f.events, s, rate,
				stopped ? ", stopping" : "", tty_line ? "\033[K" : "\n");
			fflush(stderr);
		}
	}
	close(sfd);
	if (to_follower >= 0)
		close(to_follower);
	pthread_join(th, NULL);
	if (stop_started) {
		/* the reply comes with the end of the stream; a process gone meanwhile ends the
		 * stream by itself, and the stop then fails: not worth more than a warning */
		pthread_join(stop_th, NULL);
		if (st.rc) {
			if (eof && f.stats.end_tag == 0)
				tool_warn(t, rc_->sock, NT_NO_OFFSET, st.err.msg);
			stop_failed = st.rc && !f.stats.end_tag;
		}
	}
	if (show && tty_line)
		fprintf(stderr, "\r\033[K");
	if (!to_stdout && close(out) != 0 && !write_failed) {
		fprintf(stderr, "%s: cannot write %s: %s\n", t->prog, rc_->out_path, strerror(errno));
		write_failed = 1;
	}
	int ec = write_failed ? EXIT_SYSTEM : EXIT_OK;
	double secs = (stop_at ? stop_at : tool_mono_s()) - start;
	if (!rc_->quiet) {
		char hb[32];
		tool_human_bytes(hb, sizeof hb, (double)bytes, 1);
		fprintf(stderr, "%s: %s in %.1f s: %" PRIu64 " events, %" PRIu64 " samples, %" PRIu64
			" lost events, %" PRIu64 " methods in the rundown\n", t->prog, hb, secs,
			(uint64_t)f.events, (uint64_t)f.samples, f.stats.lost_events,
			f.rundown_methods);
		if (f.has_rate && f.rate.rounds > 1)
			fprintf(stderr, "%s: sampling: inferred interval %.3f ms (%.0f Hz) over %" PRIu64
				" rounds of %" PRIu64 " threads%s\n", t->prog,
				f.rate.inferred_interval_ns / 1e6,
				f.rate.inferred_interval_ns > 0 ? 1e9 / f.rate.inferred_interval_ns : 0,
				f.rate.rounds, f.rate.threads, "");
		if (rc_->rate_hz > 0 && f.has_rate && f.rate.inferred_interval_ns > 0) {
			double got = 1e9 / f.rate.inferred_interval_ns;
			unsigned ms = (unsigned)(1000.0 / rc_->rate_hz + 0.5);
			if (got > rc_->rate_hz * 1.2 || got < rc_->rate_hz * 0.8) {
				if (rc_->launched)
					fprintf(stderr, "%s: warning: asked for %.0f Hz "
						"(DOTNET_EventPipeThreadSamplingRate=%x at the start), "
						"the runtime realized %.0f Hz: it sleeps the interval "
						"after each round\n", t->prog, rc_->rate_hz,
						ms ? ms : 1u, got);
				else
					fprintf(stderr, "%s: warning: asked for %.0f Hz, the runtime "
						"sampled at %.0f Hz: its sampler serves all sessions at one "
						"rate, set when the process starts "
						"(DOTNET_EventPipeThreadSamplingRate=%x, milliseconds in "
						"hexadecimal; nettrace-collect(1))\n", t->prog,
						rc_->rate_hz, got, ms ? ms : 1u);
			}
		}
	}
	if (f.stats.lost_events)
		fprintf(stderr, "%s: warning: %" PRIu64 " events were lost (the session's buffer "
			"overflowed: --buffer, fewer providers)\n", t->prog, f.stats.lost_events);
	if (f.rc) {
		tool_error(t, "stream", &f.err);
		if (ec < EXIT_BADINPUT)
			ec = EXIT_BADINPUT;
	} else if (f.warning[0]) {
		tool_warn(t, "stream", f.warning_off, f.warning);
	}
	rc_->process_ended = !stopped || stop_failed;
	if (!stopped || stop_failed) {
		fprintf(stderr, "%s: warning: the stream ended before the session was stopped (the "
			"process exited?): the trace keeps every complete event%s\n", t->prog,
			f.stats.end_tag ? "" : ", the rest is cut");
	} else if (!eof) {
		fprintf(stderr, "%s: warning: gave up waiting for the end of the stream after "
			"stopping the session: the trace is cut (no complete rundown)\n", t->prog);
	}
	(void)ec;
	return ec;
}

int main(int argc, char **argv)
{
	tool t = {"nettrace-collect", "[OPTIONS] (-p PID | --name NAME | --list | -- CMD...)",
		  "Record a running .NET process through its diagnostic socket (no SDK or\n"
		  "dotnet-trace needed on the machine): the runtime streams the trace, which is\n"
		  "written to a file; SIGINT or --duration stops the session cleanly.",
		  OPTS, 0, 0};
	struct option *lo;
	const char *so = tool_getopt_colon(&t, &lo, "");
	rec r;
	memset(&r, 0, sizeof r);
	r.t = &t;
	r.drain_timeout = 30;
	nt_diag_providers ps;
	memset(&ps, 0, sizeof ps);
	uint64_t rundown = NT_DIAG_RUNDOWN_DEFAULT;
	int no_rundown = 0, list = 0, have_providers = 0;
	const char *name = NULL, *out_path = NULL;
	long pid = 0;
	double timeout = 0;
	nt_error err;
	nt_error_clear(&err);
	int c;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (tool_parse_pid(&t, optarg, &pid)) {
				nt_diag_providers_free(&ps);
				return EXIT_USAGE;
			}
			break;
		case 'n': name = optarg; break;
		case 'o': out_path = optarg; break;
		case 'q': r.quiet = 1; break;
		case OPT_DURATION:
			r.duration = tool_parse_duration(optarg);
			if (r.duration <= 0) {
				nt_diag_providers_free(&ps);
				return tool_usage_error(&t, "bad duration '%s' (e.g. 10s, 500ms, 2m)",
							optarg);
			}
			break;
		case OPT_TIMEOUT:
			timeout = tool_parse_duration(optarg);
			if (timeout <= 0) {
				nt_diag_providers_free(&ps);
				return tool_usage_error(&t, "bad timeout '%s'", optarg);
			}
			break;
		case OPT_PROVIDERS:
			have_providers = 1;
			if (nt_diag_providers_parse(&ps, optarg, &err)) {
				nt_diag_providers_free(&ps);
				return tool_usage_error(&t, "--providers: %s", err.msg);
			}
			break;
		case OPT_PROFILE:
			have_providers = 1;
			if (nt_diag_providers_profile(&ps, optarg, &rundown, &err)) {
				nt_diag_providers_free(&ps);
				return tool_usage_error(&t, "%s (see --list-profiles)", err.msg);
			}
			break;
		case OPT_RATE: {
			char *end;
			r.rate_hz = strtod(optarg, &end);
			if (*end || !(r.rate_hz >= 1 && r.rate_hz <= 1000)) {
				nt_diag_providers_free(&ps);
				return tool_usage_error(&t, "bad rate '%s' (1..1000 Hz)", optarg);
			}
			break;
		}
		case OPT_BUFFER: {
			char *end;
			long mb = strtol(optarg, &end, 10);
			if (*end || mb < 1 || mb > 4096) {
				nt_diag_providers_free(&ps);
				return tool_usage_error(&t, "bad buffer size '%s' (1..4096 MB)", optarg);
			}
			r.co.buffer_mb = (uint32_t)mb;
			break;
		}
		case OPT_NO_RUNDOWN: no_rundown = 1; break;
		case OPT_LIST: list = 1; break;
		case OPT_LIST_PROFILES: {
			const char *alias, *prov, *desc, *nm;
			for (size_t i = 0; (nm = nt_diag_profile_at(i, &alias, &prov, &desc)); i++)
				printf("%s%s%s%s\n    %s\n    %s\n", nm, alias ? " (" : "",
				       alias ? alias : "", alias ? ")" : "", desc, prov);
			nt_diag_providers_free(&ps);
			return tool_finish(&t);
		}
		case 'h': tool_help(&t); nt_diag_providers_free(&ps); return tool_finish(&t);
		case 'V': tool_version(&t); nt_diag_providers_free(&ps); return tool_finish(&t);
		default:
			nt_diag_providers_free(&ps);
			return tool_bad_option(&t, c, argv);
		}
	}
	char **cmd = optind < argc ? argv + optind : NULL;
	if (list) {
		nt_diag_providers_free(&ps);
		if (cmd)
			return tool_usage_error(&t, "unexpected argument '%s'", argv[optind]);
		return do_list(&t);
	}
	if ((pid != 0) + (name != NULL) + (cmd != NULL) != 1) {
		nt_diag_providers_free(&ps);
		return tool_usage_error(&t, "name the process with one of -p PID, --name NAME or "
					"-- CMD ARGS...");
	}
	pid_t child = 0;
	if (cmd) {
		int ec = launch(&t, cmd, r.rate_hz, &child);
		if (ec) {
			nt_diag_providers_free(&ps);
			return ec;
		}
		pid = child;
		r.launched = 1;
	}
	if (name) {
		uint32_t p32 = 0;
		int ec = find_by_name(&t, name, &p32);
		if (ec) {
			nt_diag_providers_free(&ps);
			return ec;
		}
		pid = p32;
	}
	r.pid = (uint32_t)pid;
	if (!have_providers && nt_diag_providers_profile(&ps, "cpu-sampling", &rundown, &err)) {
		nt_diag_providers_free(&ps);
		return tool_error(&t, NULL, &err);
	}
	/* --rate: the sampler provider's argument of the per-session design; .NET 10 ignores
	 * it (doc/format/diagnostics-ipc.md, "Sampling rate"), the summary says what came */
	char rate_arg[64];
	if (r.rate_hz > 0) {
		unsigned ms = (unsigned)(1000.0 / r.rate_hz + 0.5);
		snprintf(rate_arg, sizeof rate_arg, "SampleProfilerIntervalMS=%u", ms ? ms : 1);
		int found = 0;
		for (size_t i = 0; i < ps.n; i++)
			if (strcmp(ps.v[i].name, NT_PROVIDER_SAMPLER) == 0 && !ps.v[i].arguments) {
				ps.v[i].arguments = strdup(rate_arg);
				found = 1;
			}
		if (!found)
			fprintf(stderr, "%s: warning: --rate without the provider %s has no effect\n",
				t.prog, NT_PROVIDER_SAMPLER);
	}
	r.co.sz = sizeof r.co;
	r.co.providers = ps.v;
	r.co.nproviders = ps.n;
	r.co.rundown_keyword = no_rundown ? 0 : rundown;
	if (timeout > 0) {
		r.timeout_ms = (int)(timeout * 1000);
		r.drain_timeout = timeout;
	}
	r.co.timeout_ms = r.timeout_ms;

	char sock[4096], defout[64];
	if (child ? wait_socket(&t, child, sock, sizeof sock, &err)
		  : nt_diag_socket_path(r.pid, sock, sizeof sock, &err)) {
		nt_diag_providers_free(&ps);
		return tool_error(&t, NULL, &err);
	}
	r.sock = sock;
	nt_diag_info info = NT_INIT(nt_diag_info);
	if (nt_diag_process_info(sock, r.timeout_ms, &info, &err)) {
		int ec = tool_error(&t, sock, &err);
		nt_diag_providers_free(&ps);
		return ec;
	}
	if (!r.quiet)
		fprintf(stderr, "%s: process %" PRIu32 ": %s (.NET %s, %s %s)\n", t.prog, r.pid,
			info.command_line, info.clr_version[0] ? info.clr_version : "?", info.os,
			info.arch);
	snprintf(defout, sizeof defout, "trace-%" PRIu32 ".nettrace", r.pid);
	r.out_path = out_path ? out_path : defout;
	if (strcmp(r.out_path, "-") == 0 && isatty(1)) {
		nt_diag_providers_free(&ps);
		return tool_usage_error(&t, "standard output is a terminal: redirect it or use -o FILE");
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int ec = record(&r);
	nt_diag_providers_free(&ps);
	if (child)
		child_status(&t, child, r.quiet, r.process_ended);
	int fin = tool_finish(&t);
	return ec > fin ? ec : fin;
}
