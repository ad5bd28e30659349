/* SPDX-License-Identifier: MIT */
/* nettrace-top.c - a live view of a .NET process's samples, as top does for processes:
 * attaches to the process (nt_diag_collect; a short rundown session beside it names the
 * methods jitted before), or follows a trace file being written, or reads standard input;
 * a reader thread feeds the live window profile (nt_live), the main thread redraws it every
 * second: top functions by self or total samples, threads and their state, samples/s and
 * the realized sampling interval, GC pauses. Keys switch the view and freeze it; --once
 * and --plain print text for logs. */
#include "config.h"
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum { OPT_WINDOW = 300, OPT_INTERVAL, OPT_ONCE, OPT_PLAIN, OPT_DURATION, OPT_VIEW,
       OPT_NO_FOLLOW };

static const tool_opt OPTS[] = {
	{"pid", required_argument, 'p', "PID", "attach to this .NET process"},
	{"window", required_argument, OPT_WINDOW, "SECONDS",
	 "the sliding window the view covers (default 10)"},
	{"interval", required_argument, OPT_INTERVAL, "TIME", "redraw every TIME (default 1s)"},
	{"once", no_argument, OPT_ONCE, NULL,
	 "print one view as text and exit: after --duration (default 3s) when attached, at the "
	 "end of the data for a file"},
	{"plain", no_argument, OPT_PLAIN, NULL,
	 "print a text view every interval (no screen control, no keys): for logs"},
	{"duration", required_argument, OPT_DURATION, "TIME", "stop after TIME"},
	{"view", required_argument, OPT_VIEW, "VIEW", "start with: self, total or threads"},
	{"top", required_argument, 'n', "N", "functions shown in text views (default 20)"},
	{"no-follow", no_argument, OPT_NO_FOLLOW, NULL,
	 "read a FILE to its current end instead of following it as it grows"},
	TOOL_STD_OPTS,
	{NULL, 0, 0, NULL, NULL},
};

enum { VIEW_SELF = 0, VIEW_TOTAL, VIEW_THREADS };

static volatile sig_atomic_t g_quit;

static void on_signal(int sig)
{
	(void)sig;
	g_quit = 1;
}

/* ---------------------------------------------------------------- shared state */

typedef struct shared {
	pthread_mutex_t lock;
	nt_live *lv;
	int fd;                  /* the stream */
	atomic_int ended;        /* the reader thread is done */
	int rc;                  /* its result */
	nt_error err;
	char warning[256];
	uint64_t warning_off;
	uint64_t lost, bytes;
	int have_header;
	int own_fd;              /* close fd when the reader is done (the follower's pipe) */
} shared;

static void *reader_main(void *arg)
{
	shared *sh = arg;
	nt_reader *r = NULL;
	nt_reader_opts ro = {sizeof ro, NT_READ_FILE_ORDER, "stream"};
	nt_error err;
	nt_error_clear(&err);
	int rc = nt_reader_open_fd(&r, sh->fd, &ro, &err);
	if (rc == 0) {
		pthread_mutex_lock(&sh->lock);
		rc = nt_live_begin(sh->lv, nt_reader_header(r), &err);
		sh->have_header = rc == 0;
		pthread_mutex_unlock(&sh->lock);
	}
	const nt_event *ev;
	uint64_t n = 0;
	while (rc == 0 && (rc = nt_reader_next(r, &ev, &err)) == 1) {
		pthread_mutex_lock(&sh->lock);
		rc = nt_live_add(sh->lv, ev, &err);
		if ((++n & 255) == 0) {
			sh->lost = nt_reader_stats_get(r)->lost_events;
			sh->bytes = nt_reader_stats_get(r)->bytes;
		}
		pthread_mutex_unlock(&sh->lock);
		if (g_quit)
			break;
	}
	pthread_mutex_lock(&sh->lock);
	sh->rc = rc < 0 ? rc : 0;
	sh->err = err;
	if (r) {
		sh->lost = nt_reader_stats_get(r)->lost_events;
		sh->bytes = nt_reader_stats_get(r)->bytes;
		uint64_t off = 0;
		const char *w = nt_reader_warning(r, &off);
		if (w) {
			snprintf(sh->warning, sizeof sh->warning, "%s", w);
			sh->warning_off = off;
		}
	}
	pthread_mutex_unlock(&sh->lock);
	nt_reader_free(r);
	sh->ended = 1;
	if (sh->own_fd)
		close(sh->fd);
	return NULL;
}

/* Follows a file as it grows: copies it into a pipe, waiting at its end for more, until
 * the pipe's reader is gone (the trace ended) or the user quits. */
typedef struct follower {
	int in, out;
	int follow;
	atomic_int *ended;       /* the reader thread is done: stop */
} follower;

static void *follow_main(void *arg)
{
	follower *f = arg;
	char buf[65536];
	while (!g_quit && !*f->ended) {
		ssize_t n = read(f->in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (n == 0) {
			if (!f->follow)
				break;
			struct timespec ts = {0, 200 * 1000000};
			nanosleep(&ts, NULL);
			continue;
		}
		if (tool_write_all(f->out, buf, (size_t)n))
			goto done;
	}
done:
	close(f->out);
	close(f->in);
	return NULL;
}

/* ---------------------------------------------------------------- attaching */

/* A rundown-only session, started and stopped at once: its rundown names the methods
 * jitted before the main session began. Its events go into the live profile. */
static int read_rundown(tool *t, shared *sh, const char *sock)
{
	nt_diag_provider prov = {NT_PROVIDER_EVENTPIPE, 0, 4, NULL};
	nt_diag_collect_opts co = {sizeof co, &prov, 1, 16, NT_DIAG_RUNDOWN_DEFAULT, 1, 0, 0};
	nt_error err;
	nt_error_clear(&err);
	int fd;
	tool_stopper st = {sock, 0, 30000, 0, {0}};
	if (nt_diag_collect(sock, &co, &fd, &st.session, &err)) {
		tool_warn(t, sock, NT_NO_OFFSET, "no rundown session: methods jitted before now "
			  "stay unnamed");
		return 0;
	}
	pthread_t th;
	int started = pthread_create(&th, NULL, tool_stop_main, &st) == 0;
	nt_reader *r = NULL;
	nt_reader_opts ro = {sizeof ro, NT_READ_FILE_ORDER, "rundown"};
	if (nt_reader_open_fd(&r, fd, &ro, &err) == 0) {
		const nt_event *ev;
		while (nt_reader_next(r, &ev, &err) == 1) {
			pthread_mutex_lock(&sh->lock);
			if (sh->have_header)
				nt_live_add(sh->lv, ev, &err);
			pthread_mutex_unlock(&sh->lock);
		}
	}
	nt_reader_free(r);
	close(fd);
	if (started)
		pthread_join(th, NULL);
	return 0;
}

/* ---------------------------------------------------------------- drawing */

typedef struct screen {
	int tty;          /* interactive: clear and redraw */
	int rows, cols;
	int view;
	int frozen;
	size_t top;
	const char *source;
	char title[512];
} screen;

static void term_size(screen *sc)
{
	struct winsize ws;
	sc->rows = 24;
	sc->cols = 80;
	if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
		sc->rows = ws.ws_row;
		sc->cols = ws.ws_col;
	}
}

/* Prints one line, cut to the screen width on a terminal; control characters as '?'. */
static void line(const screen *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(const screen *sc, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = '?';
	if (sc->tty) {
		/* cut at the width, counting UTF-8 sequences as one column */
		int col = 0;
		char *p = buf;
		for (; *p; p++) {
			if (((unsigned char)*p & 0xC0) != 0x80 && ++col > sc->cols)
				break;
		}
		*p = '\0';
		fputs(buf, stdout);
		fputs("\033[K\n", stdout);
	} else {
		fputs(buf, stdout);
		fputc('\n', stdout);
	}
}

static const char *state_name(int cat)
{
	return cat == NT_CAT_CPU ? "running" : nt_category_name(cat) ? nt_category_name(cat) : "?";
}

static void draw(screen *sc, const nt_live_view *v, const shared *sh, int ended)
{
	if (sc->tty) {
		term_size(sc);
		fputs("\033[H", stdout);
	}
	int used = 0;
	line(sc, "%s%s%s", sc->title, ended ? "  [stream ended]" : "",
	     sc->frozen ? "  [frozen]" : "");
	char rate[96] = "unknown";
	if (v->interval_ns > 0)
		snprintf(rate, sizeof rate, "%.3f ms (%.0f Hz)", v->interval_ns / 1e6,
			 1e9 / v->interval_ns);
	line(sc, "window %.1f s at %.1f s: %" PRIu64 " samples, %.0f/s, realized interval %s; %zu "
	     "threads; %" PRIu64 " lost events", v->window_s, (double)v->now_ns / 1e9, v->samples,
	     v->samples_per_s, rate, v->nthreads, sh->lost);
	char cats[256] = "";
	size_t off = 0;
	for (int c = 0; c < NT_CAT_COUNT && v->samples; c++)
		if (v->cat_samples[c] && off < sizeof cats)
			off += (size_t)snprintf(cats + off, sizeof cats - off, "%s%s %.1f%%",
						off ? "  " : "", state_name(c),
						100.0 * (double)v->cat_samples[c] / (double)v->samples);
	line(sc, "states: %s", cats[0] ? cats : "-");
	line(sc, "GC: %" PRIu32 " pauses in the window, %.1f ms in all, longest %.1f ms; %zu methods "
	     "known; %" PRIu64 " samples since the start", v->gcs, v->gc_pause_ns / 1e6,
	     v->gc_pause_max_ns / 1e6, v->methods, v->total_samples);
	line(sc, "%s", "");
	used = 5;
	size_t rows = sc->tty ? (sc->rows > used + 3 ? (size_t)(sc->rows - used - 2) : 1) : sc->top;
	double n = v->samples ? (double)v->samples : 1;
	if (sc->view == VIEW_THREADS) {
		line(sc, "%10s %8s %6s %6s %6s  %-8s %s", "TID", "SAMPLES", "RUN%", "WAIT%", "LOCK%",
		     "STATE", "LEAF (latest sample)");
		for (size_t i = 0; i < v->nthreads && i < rows; i++) {
			const nt_live_thread *th = &v->threads[i];
			double tn = th->samples ? (double)th->samples : 1;
			line(sc, "%10" PRIu64 " %8" PRIu64 " %6.1f %6.1f %6.1f  %-8s %s", th->thread_id,
			     th->samples, 100.0 * (double)th->cat_samples[NT_CAT_CPU] / tn,
			     100.0 * (double)(th->cat_samples[NT_CAT_WAIT] +
					      th->cat_samples[NT_CAT_SLEEP] +
					      th->cat_samples[NT_CAT_IO] +
					      th->cat_samples[NT_CAT_EXTERNAL]) / tn,
			     100.0 * (double)th->cat_samples[NT_CAT_LOCK] / tn, state_name(th->state),
			     th->leaf);
		}
	} else {
		const nt_live_func *f = sc->view == VIEW_SELF ? v->by_self : v->by_total;
		line(sc, "%6s %6s %8s %8s  FUNCTION (by %s)", "SELF%", "TOTAL%", "SELF", "TOTAL",
		     sc->view == VIEW_SELF ? "self" : "total");
		for (size_t i = 0; i < v->nfuncs && i < rows; i++) {
			if ((sc->view == VIEW_SELF ? f[i].self_samples : f[i].total_samples) == 0)
				break;
			line(sc, "%6.1f %6.1f %8" PRIu64 " %8" PRIu64 "  %s",
			     100.0 * (double)f[i].self_samples / n,
			     100.0 * (double)f[i].total_samples / n, f[i].self_samples,
			     f[i].total_samples, f[i].name);
		}
	}
	if (sc->tty) {
		fputs("\033[J", stdout);
		line(sc, "%s", "");
		fputs("\033[7m s self  t total  h threads  space freeze  q quit \033[0m\033[K", stdout);
	} else {
		line(sc, "%s", "");
	}
	fflush(stdout);
}

/* ---------------------------------------------------------------- main */

static struct termios g_tio;
static int g_tio_set, g_keys = -1;

static void restore_term(void)
{
	if (g_tio_set)
		tcsetattr(g_keys, TCSANOW, &g_tio);
	g_tio_set = 0;
}

int main(int argc, char **argv)
{
	tool t = {"nettrace-top", "[OPTIONS] -p PID | FILE | -",
		  "Show the samples of a running .NET process (or of a trace being written) live:\n"
		  "the top functions by self and total samples over a sliding window, the threads\n"
		  "and their state, samples/s and the realized sampling interval, GC pauses.",
		  OPTS, 0, 0};
	struct option *lo;
	const char *so = tool_getopt_colon(&t, &lo, "");
	long pid = 0;
	double window = 10, interval = 1, duration = 0;
	int once = 0, plain = 0, follow = 1;
	screen sc;
	memset(&sc, 0, sizeof sc);
	sc.top = 20;
	int c;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'p':
			if (tool_parse_pid(&t, optarg, &pid))
				return EXIT_USAGE;
			break;
		case OPT_WINDOW:
			window = strtod(optarg, &end);
			if (*end || !(window >= 1 && window <= 600))
				return tool_usage_error(&t, "bad window '%s' (1..600 seconds)", optarg);
			break;
		case OPT_INTERVAL:
			interval = tool_parse_duration(optarg);
			if (interval < 0.05)
				return tool_usage_error(&t, "bad interval '%s' (at least 50ms)", optarg);
			break;
		case OPT_DURATION:
			duration = tool_parse_duration(optarg);
			if (duration <= 0)
				return tool_usage_error(&t, "bad duration '%s'", optarg);
			break;
		case OPT_ONCE: once = 1; break;
		case OPT_PLAIN: plain = 1; break;
		case OPT_NO_FOLLOW: follow = 0; break;
		case OPT_VIEW:
			if (strcmp(optarg, "self") == 0)
				sc.view = VIEW_SELF;
			else if (strcmp(optarg, "total") == 0)
				sc.view = VIEW_TOTAL;
			else if (strcmp(optarg, "threads") == 0)
				sc.view = VIEW_THREADS;
			else
				return tool_usage_error(&t, "bad view '%s' (self, total or threads)", optarg);
			break;
		case 'n': {
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 100000)
				return tool_usage_error(&t, "bad count '%s'", optarg);
			sc.top = (size_t)v;
			break;
		}
		case 'h': tool_help(&t); return tool_finish(&t);
		case 'V': tool_version(&t); return tool_finish(&t);
		default:
			return tool_bad_option(&t, c, argv);
		}
	}
	const char *file = optind < argc ? argv[optind] : NULL;
	if (optind + 1 < argc)
		return tool_usage_error(&t, "one input only");
	if (!pid == !file)
		return tool_usage_error(&t, "give either -p PID or one FILE ('-': standard input)");
	if (once && plain)
		return tool_usage_error(&t, "--once and --plain exclude each other");

	/* static: a reader thread still blocked in read() at exit keeps using it */
	static shared sh;
	memset(&sh, 0, sizeof sh);
	pthread_mutex_init(&sh.lock, NULL);
	nt_error err;
	nt_error_clear(&err);
	nt_live_opts lo2 = {sizeof lo2, (uint32_t)(window + 0.5), NULL};
	if (nt_live_new(&sh.lv, &lo2, &err))
		return tool_error(&t, NULL, &err);
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	static char sock[4096]; /* static: read by the detached stopping thread */
	uint64_t session = 0;
	int attached = 0;
	pthread_t fth;
	int following = 0;
	if (pid) {
		nt_diag_info info = NT_INIT(nt_diag_info);
		if (nt_diag_socket_path((uint32_t)pid, sock, sizeof sock, &err) ||
		    nt_diag_process_info(sock, 0, &info, &err)) {
			int ec = tool_error(&t, NULL, &err);
			nt_live_free(sh.lv);
			return ec;
		}
		char base[64];
		const char *cl = info.command_line, *s = cl;
		size_t k = strcspn(cl, " ");
		for (size_t i = 0; i < k; i++)
			if (cl[i] == '/')
				s = cl + i + 1;
		snprintf(base, sizeof base, "%.*s", (int)(cl + k - s), s);
		snprintf(sc.title, sizeof sc.title, "nettrace-top: pid %ld %s (.NET %s)", pid,
			 info.assembly[0] ? info.assembly : base,
			 info.clr_version[0] ? info.clr_version : "?");
		nt_diag_provider prov[2] = {
			{NT_PROVIDER_SAMPLER, 0, 4, NULL},
			/* GC (pauses), Loader and JIT (names of methods jitted from now on) */
			{NT_PROVIDER_RUNTIME, 0x19, 5, NULL},
		};
		nt_diag_collect_opts co = {sizeof co, prov, 2, 64, 0, 0, 0, 0};
		if (nt_diag_collect(sock, &co, &sh.fd, &session, &err)) {
			int ec = tool_error(&t, sock, &err);
			nt_live_free(sh.lv);
			return ec;
		}
		attached = 1;
		if (once && duration <= 0)
			duration = 3;
	} else if (strcmp(file, "-") == 0) {
		sh.fd = 0;
		snprintf(sc.title, sizeof sc.title, "nettrace-top: standard input");
	} else {
		int in = open(file, O_RDONLY | O_CLOEXEC);
		int pfd[2];
		if (in < 0) {
			fprintf(stderr, "%s: cannot open %s: %s\n", t.prog, file, strerror(errno));
			nt_live_free(sh.lv);
			return EXIT_SYSTEM;
		}
		if (pipe(pfd) != 0) {
			fprintf(stderr, "%s: cannot create a pipe: %s\n", t.prog, strerror(errno));
			nt_live_free(sh.lv);
			return EXIT_SYSTEM;
		}
		static follower fo;
		fo.in = in;
		fo.out = pfd[1];
		fo.follow = follow && !once;
		fo.ended = &sh.ended;
		sh.fd = pfd[0];
		sh.own_fd = 1;
		if (pthread_create(&fth, NULL, follow_main, &fo) != 0) {
			fprintf(stderr, "%s: cannot start a thread\n", t.prog);
			nt_live_free(sh.lv);
			return EXIT_SYSTEM;
		}
		following = 1;
		snprintf(sc.title, sizeof sc.title, "nettrace-top: %s", file);
	}
	pthread_t rth;
	if (pthread_create(&rth, NULL, reader_main, &sh) != 0) {
		fprintf(stderr, "%s: cannot start a thread\n", t.prog);
		nt_live_free(sh.lv);
		return EXIT_SYSTEM;
	}
	if (attached) {
		/* the header must be known before rundown events go in */
		for (int i = 0; i < 100 && !sh.have_header && !sh.ended; i++) {
			struct timespec ts = {0, 20 * 1000000};
			nanosleep(&ts, NULL);
		}
		read_rundown(&t, &sh, sock);
	}

	sc.tty = !once && !plain && isatty(1);
	if (sc.tty) {
		g_keys = open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		/* keys only in the terminal's foreground: a background process changing the
		 * terminal's mode would be stopped (SIGTTOU) */
		if (g_keys >= 0 && tcgetpgrp(g_keys) != getpgrp()) {
			close(g_keys);
			g_keys = -1;
		}
		if (g_keys >= 0 && tcgetattr(g_keys, &g_tio) == 0) {
			struct termios raw = g_tio;
			raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
			raw.c_cc[VMIN] = 0;
			raw.c_cc[VTIME] = 0;
			if (tcsetattr(g_keys, TCSANOW, &raw) == 0) {
				g_tio_set = 1;
				atexit(restore_term);
			}
		}
		fputs("\033[?1049h\033[H\033[2J\033[?25l", stdout); /* alternate screen, no cursor */
	}
	double start = tool_mono_s(), next = start + (once ? 0 : interval);
	int ec = EXIT_OK;
	for (;;) {
		double now = tool_mono_s();
		int ended = sh.ended;
		int done = g_quit || (duration > 0 && now - start >= duration) || (once && !attached && ended);
		if (!once && now >= next) {
			next = now + interval;
			if (!sc.frozen) {
				pthread_mutex_lock(&sh.lock);
				const nt_live_view *v;
				if (nt_live_snapshot(sh.lv, &v, &err) == 0)
					draw(&sc, v, &sh, ended);
				pthread_mutex_unlock(&sh.lock);
			}
			if (plain && ended)
				break;
		}
		if (done)
			break;
		int timeout = (int)((next - tool_mono_s()) * 1000);
		if (once)
			timeout = 100;
		if (timeout < 10)
			timeout = 10;
		if (timeout > 100)
			timeout = 100;
		if (g_keys >= 0) {
			struct pollfd p = {g_keys, POLLIN, 0};
			if (poll(&p, 1, timeout) > 0) {
				char k;
				while (read(g_keys, &k, 1) == 1) {
					if (k == 'q' || k == 'Q')
						g_quit = 1;
					else if (k == 's')
						sc.view = VIEW_SELF;
					else if (k == 't')
						sc.view = VIEW_TOTAL;
					else if (k == 'h' || k == 'T')
						sc.view = VIEW_THREADS;
					else if (k == ' ' || k == 'f')
						sc.frozen = !sc.frozen;
					next = 0;
				}
			}
		} else {
			struct timespec ts = {0, (long)timeout * 1000000};
			nanosleep(&ts, NULL);
		}
	}
	if (sc.tty) {
		fputs("\033[?25h\033[?1049l", stdout);
		fflush(stdout);
		restore_term();
	}
	if (once) {
		pthread_mutex_lock(&sh.lock);
		const nt_live_view *v;
		if (nt_live_snapshot(sh.lv, &v, &err) == 0)
			draw(&sc, v, &sh, sh.ended);
		else
			ec = tool_error(&t, NULL, &err);
		pthread_mutex_unlock(&sh.lock);
	}
	if (attached) {
		/* stop politely without waiting for anything: no rundown was asked */
		nt_error e2;
		nt_error_clear(&e2);
		g_quit = 1;
		/* static: the thread is not joined and may outlive this block */
		static tool_stopper st;
		st.sock = sock;
		st.session = session;
		st.timeout_ms = 30000;
		pthread_t th;
		if (pthread_create(&th, NULL, tool_stop_main, &st) == 0) {
			for (int i = 0; i < 50 && !sh.ended; i++) {
				struct timespec ts = {0, 20 * 1000000};
				nanosleep(&ts, NULL);
			}
			pthread_detach(th);
		}
	}
	if (sh.ended) {
		pthread_join(rth, NULL);
		if (sh.rc) {
			int e = tool_error(&t, "stream", &sh.err);
			if (e > ec)
				ec = e;
		} else if (sh.warning[0]) {
			tool_warn(&t, "stream", sh.warning_off, sh.warning);
		}
		if (following)
			pthread_join(fth, NULL);
		nt_live_free(sh.lv);
	}
	/* a reader still blocked in read() keeps its thread and the live profile: exiting
	 * ends both */
	int fin = tool_finish(&t);
	return ec > fin ? ec : fin;
}
