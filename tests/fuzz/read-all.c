/* SPDX-License-Identifier: MIT */
/* read-all.c - test driver: reads nettrace files to the end through the public API, the
 * way every tool does, and reports the first error as the tools do:
 *     read-all: FILE: at byte N (0xN): message
 * Used by the rejected-input corpus test (tests/e2e/t900-reject-corpus.sh) and to replay
 * fuzzer findings. Each file is read twice, in timestamp order and in file order, every
 * payload is rendered as JSON and one field is looked up, so the whole decoding path runs.
 * Both passes must agree on the event count and on the error; a disagreement is a reader
 * bug (exit 4).
 *
 * Usage: read-all [-q] [-s] [-t] FILE...
 *   -q  no summary line on stdout
 *   -s  also print the truncation warning as "read-all: FILE: at byte N (0xN): warning: ..."
 *   -t  summary as one tab-separated line per file: FILE, STATUS (ok, truncated, error-EXIT
 *       or bug), EVENTS, OFFSET (of the error or the truncation, "-" if none)
 *   -p  read each file through a pipe fed by "dd bs=509" (the reader then cannot know the
 *       size: the input path of stdin and sockets)
 * Exit: 0 all files read (truncated files included), 2 bad input, 3 system error, 4 bug. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nettrace.h"

static const char *prog = "read-all";

typedef struct pass_result {
	int rc;             /* last nt_reader_next() / open result */
	nt_error err;
	uint64_t events;
	uint64_t json_bytes;
	int truncated;
	uint64_t warn_off;
	char warning[256];
} pass_result;

static int exit_code(int code)
{
	switch (code) {
	case NT_OK: return 0;
	case NT_EFORMAT: case NT_ETRUNC: case NT_EUNSUPPORTED: case NT_ELIMIT: return 2;
	case NT_EIO: case NT_ENOMEM: return 3;
	default: return 4;
	}
}

static void print_err(const char *file, const nt_error *e)
{
	fprintf(stderr, "%s: %s: ", prog, file);
	if (e->offset != NT_NO_OFFSET)
		fprintf(stderr, "at byte %" PRIu64 " (0x%" PRIx64 "): ", e->offset, e->offset);
	fprintf(stderr, "%s\n", e->msg[0] ? e->msg : nt_strerror(e->code));
}

extern char **environ;

/* Starts "dd bs=509 if=FILE" writing into a pipe; returns the read end (or -1) and *pid.
 * posix_spawn, not fork: forking a sanitizer-instrumented process is slow. */
static int pipe_from(const char *file, pid_t *pid)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	/* posix_spawn takes char *const argv[]: writable copies (-Wwrite-strings) */
	char ifarg[4200], dd[] = "dd", bs[] = "bs=509", status[] = "status=none";
	snprintf(ifarg, sizeof ifarg, "if=%s", file);
	char *args[] = {dd, bs, ifarg, status, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	int rc = posix_spawnp(pid, "dd", &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		return -1;
	}
	return fds[0];
}

static void run_pass(const char *file, unsigned flags, int use_pipe, pass_result *res)
{
	nt_reader *r = NULL;
	nt_reader_opts o = {sizeof o, flags, file};
	int fd = -1;
	pid_t pid = -1;
	memset(res, 0, sizeof *res);
	nt_error_clear(&res->err);
	if (use_pipe) {
		fd = pipe_from(file, &pid);
		if (fd < 0) {
			res->rc = NT_EIO;
			snprintf(res->err.msg, sizeof res->err.msg, "cannot start the pipe");
			res->err.code = NT_EIO;
			return;
		}
		res->rc = nt_reader_open_fd(&r, fd, &o, &res->err);
	} else {
		res->rc = nt_reader_open_file(&r, file, &o, &res->err);
	}
	if (res->rc < 0) {
		if (fd >= 0) {
			close(fd);
			waitpid(pid, NULL, 0);
		}
		return;
	}
	const nt_trace_header *h = nt_reader_header(r);
	const nt_event *ev;
	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	while ((res->rc = nt_reader_next(r, &ev, &res->err)) == 1) {
		nt_value v;
		res->events++;
		mb.len = 0;
		if (nt_payload_write_json(ev, h->pointer_size, &sink) == 0)
			res->json_bytes += mb.len;
		(void)nt_event_field(ev, h->pointer_size, "ClrInstanceID", &v);
		(void)nt_event_is_sample(ev, NULL);
		for (uint32_t i = 0; i < ev->stack_depth; i++)
			res->json_bytes += ev->stack[i] & 1;
	}
	nt_membuf_free(&mb);
	const nt_reader_stats *s = nt_reader_stats_get(r);
	res->truncated = s->truncated;
	const char *w = nt_reader_warning(r, &res->warn_off);
	if (w)
		snprintf(res->warning, sizeof res->warning, "%s", w);
	nt_reader_free(r);
	if (fd >= 0) {
		close(fd);
		waitpid(pid, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	int quiet = 0, show_warn = 0, table = 0, use_pipe = 0, worst = 0, i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "-q") == 0)
			quiet = 1;
		else if (strcmp(argv[i], "-s") == 0)
			show_warn = 1;
		else if (strcmp(argv[i], "-t") == 0)
			table = 1;
		else if (strcmp(argv[i], "-p") == 0)
			use_pipe = 1;
		else {
			fprintf(stderr, "%s: unknown option %s\nTry '%s FILE...'.\n", prog, argv[i], prog);
			return 1;
		}
	}
	signal(SIGPIPE, SIG_IGN); /* -p: dd may outlive a reader that stopped early */
	if (i == argc) {
		fprintf(stderr, "usage: %s [-q] [-s] [-t] [-p] FILE...\n", prog);
		return 1;
	}
	for (; i < argc; i++) {
		const char *file = argv[i];
		pass_result ts, fo;
		run_pass(file, 0, use_pipe, &ts);
		run_pass(file, NT_READ_FILE_ORDER, use_pipe, &fo);
		int ec = ts.rc < 0 ? exit_code(ts.rc) : 0;
		if (ts.rc < 0)
			print_err(file, &ts.err);
		else if (show_warn && ts.truncated)
			fprintf(stderr, "%s: %s: at byte %" PRIu64 " (0x%" PRIx64 "): warning: %s\n", prog,
				file, ts.warn_off, ts.warn_off, ts.warning);
		/* Both orders decode the same blocks, so they must fail at the same place; only
		 * timestamp order has a queue, which may exceed its limit (NT_ELIMIT). */
		if (!(ts.rc == NT_ELIMIT && fo.rc >= 0) && (ts.rc != fo.rc || ts.err.offset != fo.err.offset ||
		    strcmp(ts.err.msg, fo.err.msg) != 0 ||
		    (ts.rc == 0 && (ts.events != fo.events || ts.json_bytes != fo.json_bytes)))) {
			fprintf(stderr,
				"%s: %s: internal: timestamp order (rc %d, %" PRIu64
				" events, \"%s\") and file order (rc %d, %" PRIu64
				" events, \"%s\") disagree\n",
				prog, file, ts.rc, ts.events, ts.err.msg, fo.rc, fo.events, fo.err.msg);
			ec = 4;
		}
		if (table) {
			char status[16];
			uint64_t off = ts.rc < 0 ? ts.err.offset : ts.truncated ? ts.warn_off : NT_NO_OFFSET;
			if (ec == 4)
				snprintf(status, sizeof status, "bug");
			else if (ts.rc < 0)
				snprintf(status, sizeof status, "error-%d", ec);
			else
				snprintf(status, sizeof status, "%s", ts.truncated ? "truncated" : "ok");
			if (off == NT_NO_OFFSET)
				printf("%s\t%s\t%" PRIu64 "\t-\n", file, status, ts.events);
			else
				printf("%s\t%s\t%" PRIu64 "\t%" PRIu64 "\n", file, status, ts.events, off);
			fflush(stdout); /* a crash on a later file must not lose these lines */
		} else if (!quiet) {
			printf("%s: %" PRIu64 " events%s\n", file, ts.events,
			       ts.truncated ? " (truncated)" : "");
		}
		if (ec > worst)
			worst = ec;
	}
	if (fflush(stdout) != 0)
		return 3;
	return worst;
}
