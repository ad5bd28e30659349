/* SPDX-License-Identifier: MIT */
/* runstat.c - runs a command and reports its wall time, CPU time (user + system) and peak
 * RSS (wait4 rusage), so bench/run.sh measures cat, decode-bench and nettrace-fold the same
 * way, whether or not /usr/bin/time is installed. On a shared machine the CPU time is the
 * steadier of the two: it does not count the time spent waiting for a core. The command's
 * stdin, stdout and stderr are left alone.
 *
 *   runstat -o STATFILE CMD [ARG...]
 *       writes "wall_s=S cpu_s=S maxrss_kb=N status=N" to STATFILE
 *
 * Exits with the command's exit status (128 + signal if it was killed). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "runstat"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[1], "-o") != 0) {
		fprintf(stderr, "Usage: " PROG " -o STATFILE CMD [ARG...]\n");
		return 1;
	}
	const char *statpath = argv[2];
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
		return 3;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, PROG ": cannot run %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage ru;
	pid_t w;
	while ((w = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR)
		;
	double wall = now() - t0;
	if (w < 0) {
		fprintf(stderr, PROG ": wait4: %s\n", strerror(errno));
		return 3;
	}
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	FILE *fp = fopen(statpath, "w");
	if (!fp) {
		fprintf(stderr, PROG ": cannot open %s: %s\n", statpath, strerror(errno));
		return 3;
	}
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	/* ru_maxrss is in KiB on Linux */
	fprintf(fp, "wall_s=%.6f cpu_s=%.6f maxrss_kb=%ld status=%d\n", wall, cpu, ru.ru_maxrss,
		code);
	if (fclose(fp) != 0) {
		fprintf(stderr, PROG ": cannot write %s: %s\n", statpath, strerror(errno));
		return 3;
	}
	return code;
}
