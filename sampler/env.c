/* SPDX-License-Identifier: MIT */
/* env.c - the environment-driven start of the sampler (LD_PRELOAD, nettrace-record): a
 * constructor opens the session the NETTRACE_* variables describe, a destructor (and the
 * _exit interposers, interpose.c) finalize it; SIGINT/SIGTERM and nettrace-record's "stop"
 * on the control pipe finalize it too; the status pipe gets one line saying how it ended;
 * with NETTRACE_FOLLOW=1 forked and exec'd children record into files of their own.
 * The runtime (sampler.c) calls the duties it registers in nts_rt with nts_rt.mu held. */
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../libtrace/internal.h"

/* ---------------------------------------------------------------------------------------
 * Environment-driven start (LD_PRELOAD, nettrace-record)
 * ------------------------------------------------------------------------------------- */

static void env_log(void *ctx, const char *msg)
{
	(void)ctx;
	char buf[600];
	int n = snprintf(buf, sizeof buf, "nettrace-sampler: %s\n", msg);
	if (n > 0) {
		ssize_t w = write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
		(void)w;
	}
}

static void env_status(const char *fmt, ...) NT_PRINTF(1, 2);
static void env_status(const char *fmt, ...)
{
	if (nts_rt.env_status_fd < 0)
		return;
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0) {
		ssize_t w = write(nts_rt.env_status_fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
		(void)w;
	}
}

/* The report of how the environment session ended, one line on the status pipe: "ok ..."
 * or "error MESSAGE"; a child process (--follow-children) prefixes "child PID " and ends
 * the line with " path=FILE". */
static void env_report_close(int rc, const nts_stats *st, const nt_error *err)
{
	char who[32] = "";
	if (nts_rt.env_child)
		snprintf(who, sizeof who, "child %d ", (int)getpid());
	if (rc)
		env_status("%serror %s%s%s\n", who, err->msg, nts_rt.env_child ? " path=" : "",
			   nts_rt.env_child ? nts_rt.env_path : "");
	else
		env_status("%sok samples=%" PRIu64 " rounds=%" PRIu64 " dropped=%" PRIu64
			   " late=%" PRIu64 " missed=%" PRIu64 " hz=%.3f handler_ns=%" PRIu64
			   " sampler_ns=%" PRIu64 " unloads=%" PRIu64 " perf=%" PRIu64 " backend=%s%s%s\n",
			   who, st->samples, st->rounds, st->dropped, st->late, st->missed,
			   st->realized_hz, st->handler_cpu_ns, st->sampler_cpu_ns,
			   (uint64_t)atomic_load(&nts_g.unload_end), st->perf,
			   nts_rt.mode == NTS_MODE_SAMPLEPOINT ? "samplepoint"
			   : nts_rt.backend == NTS_BACKEND_PERF ? "perf"
								 : "signal",
			   nts_rt.env_child ? " path=" : "",
			   nts_rt.env_child ? nts_rt.env_path : "");
}

/* Gives sig its default action again (async-signal-safe: sigaction only), before the
 * signal that was caught is raised once more. */
static void env_sig_default(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(sig, &sa, NULL);
}

/* SIGINT/SIGTERM while the environment session records: the handler only wakes the
 * sampler thread, which finalizes the file and then re-raises the signal with its
 * default action. Installed only over SIG_DFL. The program goes on meanwhile, and may
 * reach exit() first (raise(SIGTERM); return 0: t661 saw exit 0 for 143 in 2 runs of
 * 6), so the signal is also kept for env_at_exit(), which re-raises it once the file is
 * finalized: the process ends by the signal either way. */
static void env_signal_handler(int sig)
{
	int e = errno;
	atomic_store(&nts_rt.env_signal_caught, sig);
	atomic_store(&nts_rt.env_signal, sig);
	nts_rt_wake();
	errno = e;
}

/* Samplepoint mode: the first SIGINT/SIGTERM is left to the next samplepoint check
 * (nts_rt_sp_poll), which finalizes the file and re-raises it; a timer re-sends it after
 * SP_SIGNAL_GRACE_NS in case no check comes (a program blocked for good), and a second
 * signal ends the program at once, as the default action would. */
static void env_sp_signal_handler(int sig)
{
	int e = errno;
	int prev = 0;
	if (atomic_compare_exchange_strong(&nts_rt.env_signal, &prev, sig)) {
		int k = sig == SIGINT ? 0 : 1;
		if (nts_rt.sp_have_timer[k]) {
			struct itimerspec its;
			memset(&its, 0, sizeof its);
			its.it_value.tv_sec = SP_SIGNAL_GRACE_NS / 1000000000u;
			its.it_value.tv_nsec = SP_SIGNAL_GRACE_NS % 1000000000u;
			timer_settime(nts_rt.sp_timer[k], 0, &its, NULL);
		}
	} else {
		env_sig_default(sig);
		raise(sig); /* delivered when this handler returns */
	}
	errno = e;
}

/* Finalizes the environment session now (sampler thread, nts_rt.mu held) and reports it. */
static void env_finalize(void)
{
	nts_session *s = nts_rt.env_sess;
	if (!s)
		return;
	nts_stats st;
	nt_error err;
	nt_error_clear(&err);
	int i = s->index;
	nts_rt.sched_mask &= ~(1ull << i);
	nts_rt_drain();
	int rc = 0;
	nts_rt_finish_locked(i, nts_now(), &err, &rc);
	st = s->st;
	nts_rt.env_sess = NULL;
	free(s->threads);
	free(s);
	env_report_close(rc, &st, &err);
}

/* nettrace-record asks to stop recording ("stop" on the control pipe) when it gets SIGINT
 * or SIGTERM, before it passes the signal on: the file is complete whatever CMD does with
 * the signal. End of file: nettrace-record is gone; recording goes on until exit. */
static void handle_env_control(void)
{
	char buf[64];
	ssize_t n = read(nts_rt.env_control_fd, buf, sizeof buf - 1);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		buf[n] = 0;
		if (strstr(buf, "stop"))
			env_finalize();
		return;
	}
	close(nts_rt.env_control_fd);
	nts_rt.env_control_fd = -1;
}

static void handle_env_signal(void)
{
	int sig = atomic_exchange(&nts_rt.env_signal, 0);
	env_finalize();
	env_sig_default(sig);
	kill(getpid(), sig);
}

static int env_u64(const char *name, uint64_t *out)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-') {
		env_log(NULL, "ignoring a malformed environment variable");
		return -1;
	}
	*out = x;
	return 1;
}

/* The file of a child process (--follow-children): the recorded process's OUTPUT with the
 * child's pid before a ".nettrace" suffix ("out.nettrace" -> "out.PID.nettrace"), or after
 * the name when it has no such suffix ("out" -> "out.PID"). */
static int child_path(const char *path, pid_t pid, char *out, size_t len)
{
	size_t n = strlen(path), sl = strlen(".nettrace");
	int k;
	if (n > sl && strcmp(path + n - sl, ".nettrace") == 0)
		k = snprintf(out, len, "%.*s.%d.nettrace", (int)(n - sl), path, (int)pid);
	else
		k = snprintf(out, len, "%s.%d", path, (int)pid);
	return k > 0 && (size_t)k < len ? 0 : -1;
}

/* Opens the environment session on path with the settings of the NETTRACE_* variables
 * and installs the SIGINT/SIGTERM handlers that finalize it. */
static void env_open(const char *path)
{
	nts_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.log_fn = env_log;
	const char *mode = getenv("NETTRACE_MODE");
	if (mode && strcmp(mode, "samplepoint") == 0)
		o.mode = NTS_MODE_SAMPLEPOINT;
	uint64_t v;
	if (env_u64("NETTRACE_SIGNAL", &v) == 1)
		o.signo = (int)v;
	if (env_u64("NETTRACE_DEPTH", &v) == 1)
		o.max_depth = (uint32_t)v;
	if (env_u64("NETTRACE_REALTIME", &v) == 1 && v == 0)
		o.no_realtime = 1;
	const char *backend = getenv("NETTRACE_BACKEND");
	if (backend && strcmp(backend, "perf") == 0)
		o.backend = NTS_BACKEND_PERF;
	else if (backend && strcmp(backend, "signal") == 0)
		o.backend = NTS_BACKEND_SIGNAL;
	nts_session_opts so;
	memset(&so, 0, sizeof so);
	so.sz = sizeof so;
	so.path = path;
	so.fd = -1;
	if (env_u64("NETTRACE_INTERVAL", &v) == 1)
		so.interval_ms = v > 100000 ? 100000 : (uint32_t)v;
	const char *hz = getenv("NETTRACE_FREQUENCY");
	if (hz && *hz)
		so.hz = strtod(hz, NULL);
	const char *sched = getenv("NETTRACE_SCHEDULE");
	if (sched && strcmp(sched, "poisson") == 0)
		so.schedule = NTS_SCHED_POISSON;
	if (env_u64("NETTRACE_SEED", &v) == 1)
		so.seed = v;
	snprintf(nts_rt.env_path, sizeof nts_rt.env_path, "%s", path);
	nt_error err;
	nt_error_clear(&err);
	int rc = nts_start(&o, &err);
	if (rc == 0)
		rc = nts_session_open(&nts_rt.env_sess, &so, &err);
	if (rc) {
		env_log(NULL, err.msg);
		nts_stats st;
		memset(&st, 0, sizeof st);
		env_report_close(rc, &st, &err);
		return;
	}
	if (nts_rt.env_child)
		env_status("child %d start path=%s\n", (int)getpid(), path);
	int sigs[] = {SIGINT, SIGTERM};
	for (size_t i = 0; i < 2; i++) {
		struct sigaction old, sa;
		if (sigaction(sigs[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL) {
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = env_signal_handler;
			if (o.mode == NTS_MODE_SAMPLEPOINT) {
				struct sigevent se;
				memset(&se, 0, sizeof se);
				se.sigev_notify = SIGEV_SIGNAL;
				se.sigev_signo = sigs[i];
				nts_rt.sp_have_timer[i] = timer_create(CLOCK_MONOTONIC, &se,
								   &nts_rt.sp_timer[i]) == 0;
				sa.sa_handler = env_sp_signal_handler;
			}
			sigemptyset(&sa.sa_mask);
			sa.sa_flags = SA_RESTART;
			sigaction(sigs[i], &sa, NULL);
		}
	}
}

/* A forked child of a recorded process with --follow-children (atfork_child, after the
 * parent's state is dropped): a session of its own, in its own file. */
static void env_start_child(void)
{
	const char *path = getenv("NETTRACE_OUTPUT");
	char cp[4096];
	if (!path || !*path || child_path(path, getpid(), cp, sizeof cp))
		return;
	nts_rt.env_child = 1;
	env_open(cp);
}

/* The status pipe of nettrace-record: NETTRACE_STATUS_FD, when that descriptor is open
 * and, if NETTRACE_STATUS_ID ("DEV:INODE") is set, still the same pipe (a descendant may
 * have reused the number). -1 otherwise. */
static int status_fd_env(void)
{
	uint64_t fd;
	if (env_u64("NETTRACE_STATUS_FD", &fd) != 1 || fd <= 2 || fd >= 65536 ||
	    fcntl((int)fd, F_GETFD) < 0)
		return -1;
	const char *id = getenv("NETTRACE_STATUS_ID");
	if (id && *id) {
		struct stat sb;
		char want[64];
		if (fstat((int)fd, &sb) != 0)
			return -1;
		snprintf(want, sizeof want, "%llu:%llu", (unsigned long long)sb.st_dev,
			 (unsigned long long)sb.st_ino);
		if (strcmp(want, id) != 0)
			return -1;
	}
	return (int)fd;
}

__attribute__((constructor)) static void nts_env_start(void)
{
	const char *path = getenv("NETTRACE_OUTPUT");
	if (!path || !*path)
		return;
	nts_rt.env_on_signal = handle_env_signal;
	nts_rt.env_on_control = handle_env_control;
	nts_rt.env_finalize = env_finalize;
	nts_rt.env_on_fork = env_start_child;
	uint64_t v;
	nts_rt.env_follow = env_u64("NETTRACE_FOLLOW", &v) == 1 && v == 1;
	uint64_t pid;
	int have_pid = env_u64("NETTRACE_PID", &pid) == 1;
	char cp[4096];
	if (have_pid && pid != (uint64_t)getpid()) {
		/* a descendant of the recorded process (it exec'd): recorded into its own file
		 * with --follow-children, else not at all, and said so on the status pipe when
		 * its descriptor is still that pipe (posix_spawn runs no fork handlers) */
		if (!nts_rt.env_follow || child_path(path, getpid(), cp, sizeof cp)) {
			int sfd = status_fd_env();
			if (sfd >= 0)
				dprintf(sfd, "fork %d\n", (int)getpid());
			return;
		}
		nts_rt.env_child = 1;
		path = cp;
	}
	if (!have_pid) {
		/* children that exec inherit the environment: they must not write this file
		 * too (an exec in this process keeps the pid, and records again) */
		char buf[32];
		snprintf(buf, sizeof buf, "%ld", (long)getpid());
		setenv("NETTRACE_PID", buf, 1);
	}
	/* kept across exec: a new program image (same pid) reports again */
	nts_rt.env_status_fd = status_fd_env();
	uint64_t fd;
	if (!nts_rt.env_child && env_u64("NETTRACE_CONTROL_FD", &fd) == 1 && fd > 2 && fd < 65536 &&
	    fcntl((int)fd, F_GETFD) >= 0) {
		nts_rt.env_control_fd = (int)fd;
		fcntl(nts_rt.env_control_fd, F_SETFL, fcntl(nts_rt.env_control_fd, F_GETFL) | O_NONBLOCK);
	}
	env_open(path);
}

/* Finalizes and reports the environment session, then closes whatever the program left
 * open, so its files end properly. wait_ns > 0: give up (leave the files as their last
 * flush left them) if the lock is not free within that time (an _exit from a signal
 * handler that interrupted a thread holding it). A forked child has no sampler
 * (atfork_child) unless it records with --follow-children. */
void nts_env_stop(uint64_t wait_ns)
{
	nts_stats st;
	nt_error err;
	nt_error_clear(&err);
	memset(&st, 0, sizeof st);
	int have = 0, rc = 0;
	nts_guard++;
	if (wait_ns) {
		uint64_t t0 = nts_now();
		while (pthread_mutex_trylock(&nts_rt.mu) != 0) {
			if (nts_now() - t0 > wait_ns) {
				nts_guard--;
				return;
			}
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	} else {
		pthread_mutex_lock(&nts_rt.mu);
	}
	nts_session *s = nts_rt.env_sess;
	if (s && s->owner_pid == getpid()) {
		rc = nts_rt_close_locked(s, &st, &err);
		have = 1;
	}
	pthread_mutex_unlock(&nts_rt.mu);
	nts_guard--;
	if (have)
		env_report_close(rc, &st, &err);
	nts_stop(NULL);
}

/* At exit() (or unload). A SIGINT/SIGTERM that env_signal_handler() caught ends the
 * process now, by its default action, as it would have without the recording. */
__attribute__((destructor)) static void env_at_exit(void)
{
	nts_env_stop(0);
	int sig = atomic_load(&nts_rt.env_signal_caught);
	if (sig) {
		env_sig_default(sig);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
	}
}
