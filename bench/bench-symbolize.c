/* SPDX-License-Identifier: MIT */
/* bench-symbolize.c - symbolizes addresses of one ELF file with libnettrace's native
 * resolver (nt_native_*, sym-native.c) and prints them as llvm-symbolizer does, so
 * bench/bench-symbolize.sh can time it against eu-addr2line and llvm-symbolizer on the same
 * address list and check that the answers are identical; tests/unit/test-dwarf.c uses it
 * the same way.
 *
 *   bench-symbolize [-1] [-s] [-b BIAS] FILE [ADDRFILE]
 *
 * Addresses (hex, with or without 0x, one per line; ADDRFILE or stdin) are addresses in
 * FILE, as addr2line takes them. The module map is FILE's PT_LOAD segments mapped at
 * BIAS (hex, default 0x7f0000000000), as the sampler records a loaded module, so the
 * whole path (map, file offset, PT_LOAD, DWARF) is exercised. Output, per address in input
 * order: for each frame, innermost inlined function first, "FUNCTION\nFILE:LINE:COLUMN\n"
 * ("??" and "??:0:0" when unknown), then an empty line. By default all addresses are
 * resolved in one batch (nt_native_resolve_batch: sorted, each compile unit parsed once,
 * results in input order); -1 resolves them one by one (nt_native_resolve) instead.
 * -s prints a summary to stderr (addresses, frames, time spent resolving).
 *
 *   bench-symbolize --time STATFILE CMD [ARG...]
 *
 * runs CMD (stdin, stdout and stderr left alone) and writes "wall_s=S user_s=S sys_s=S
 * status=N" to STATFILE, so the benchmark measures every symbolizer the same way: on a busy
 * machine wall time swings, CPU time (user + sys) much less. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "nettrace.h"

#define PROG "bench-symbolize"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Adds FILE's PT_LOAD segments to nn at bias. Returns the number added, -1 on error. */
static int map_file(nt_native *nn, const char *path, uint64_t bias)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return -1;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	int added = 0;
	if (!elf || elf_getphdrnum(elf, &n) != 0) {
		fprintf(stderr, PROG ": %s: not an ELF file with program headers\n", path);
		added = -1;
	}
	for (size_t i = 0; added >= 0 && i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_filesz == 0)
			continue;
		nt_error err = {0};
		if (nt_native_add_module(nn, bias + ph.p_vaddr, ph.p_filesz, ph.p_offset, path, NULL,
					 &err)) {
			fprintf(stderr, PROG ": %s\n", err.msg);
			added = -1;
			break;
		}
		added++;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return added;
}

/* Output buffer. */
typedef struct ob {
	FILE *fp;
	size_t n;
	char b[1 << 16];
} ob;

static void ob_flush(ob *o)
{
	fwrite(o->b, 1, o->n, o->fp);
	o->n = 0;
}

static void ob_str(ob *o, const char *s)
{
	size_t l = strlen(s);
	if (o->n + l > sizeof o->b)
		ob_flush(o);
	if (l > sizeof o->b) {
		fwrite(s, 1, l, o->fp);
		return;
	}
	memcpy(o->b + o->n, s, l);
	o->n += l;
}

static void ob_u32(ob *o, uint32_t v)
{
	char t[12];
	size_t k = sizeof t;
	do
		t[--k] = (char)('0' + v % 10);
	while (v /= 10);
	if (o->n + (sizeof t - k) > sizeof o->b)
		ob_flush(o);
	memcpy(o->b + o->n, t + k, sizeof t - k);
	o->n += sizeof t - k;
}

static int read_addrs(FILE *in, uint64_t **out, size_t *n)
{
	char line[256];
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	while (fgets(line, sizeof line, in)) {
		char *end;
		errno = 0;
		uint64_t a = strtoull(line, &end, 16);
		if (end == line || errno)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 4096;
			uint64_t *p = realloc(*out, cap * sizeof(uint64_t));
			if (!p)
				return -1;
			*out = p;
		}
		(*out)[(*n)++] = a;
	}
	return 0;
}

static int time_cmd(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "Usage: " PROG " --time STATFILE CMD [ARG...]\n");
		return 1;
	}
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
		return 3;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, PROG ": %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0) {
		fprintf(stderr, PROG ": wait4: %s\n", strerror(errno));
		return 3;
	}
	double wall = now() - t0;
	int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	FILE *f = fopen(argv[2], "w");
	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", argv[2], strerror(errno));
		return 3;
	}
	fprintf(f, "wall_s=%.6f user_s=%.6f sys_s=%.6f status=%d\n", wall,
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6,
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6, status);
	if (fclose(f) != 0)
		return 3;
	return status;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--time") == 0)
		return time_cmd(argc, argv);
	int one = 0, summary = 0, opt;
	uint64_t bias = 0x7f0000000000ull;
	while ((opt = getopt(argc, argv, "1sb:h")) != -1) {
		switch (opt) {
		case '1': one = 1; break;
		case 's': summary = 1; break;
		case 'b': bias = strtoull(optarg, NULL, 16); break;
		default:
			fprintf(stderr, "Usage: " PROG " [-1] [-s] [-b BIAS] FILE [ADDRFILE]\n");
			return opt == 'h' ? 0 : 1;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		fprintf(stderr, "Usage: " PROG " [-1] [-s] [-b BIAS] FILE [ADDRFILE]\n");
		return 1;
	}
	const char *path = argv[optind];
	FILE *in = stdin;
	if (optind + 1 < argc && !(in = fopen(argv[optind + 1], "r"))) {
		fprintf(stderr, PROG ": %s: %s\n", argv[optind + 1], strerror(errno));
		return 3;
	}
	uint64_t *addrs;
	size_t n;
	if (read_addrs(in, &addrs, &n)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 3;
	}
	if (in != stdin)
		fclose(in);
	nt_native *nn;
	nt_error err = {0};
	if (nt_native_new(&nn, NULL, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 3;
	}
	if (map_file(nn, path, bias) <= 0) {
		nt_native_free(nn);
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		addrs[i] += bias;
	double t0 = now();
	nt_native_result *res = calloc(n ? n : 1, sizeof *res);
	if (!res) {
		fprintf(stderr, PROG ": out of memory\n");
		return 3;
	}
	if (one) {
		for (size_t i = 0; i < n; i++)
			if (nt_native_resolve(nn, addrs[i], &res[i].frames, &res[i].n, &err))
				break;
	} else {
		nt_native_resolve_batch(nn, addrs, n, res, &err);
	}
	if (err.code) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 3;
	}
	double tres = now() - t0;
	/* printed through one buffer: at 100k addresses, stdio's formatting would cost more
	 * than resolving them */
	ob out = {stdout, 0, {0}};
	size_t nframes = 0;
	for (size_t i = 0; i < n; i++) {
		const nt_native_frame *f = res[i].frames;
		size_t k = res[i].n;
		nframes += k;
		for (size_t j = 0; j < k; j++) {
			ob_str(&out, f[j].function ? f[j].function : "??");
			ob_str(&out, "\n");
			ob_str(&out, f[j].file ? f[j].file : "??");
			ob_str(&out, ":");
			ob_u32(&out, f[j].file ? f[j].line : 0);
			ob_str(&out, ":");
			ob_u32(&out, f[j].file ? f[j].column : 0);
			ob_str(&out, "\n");
		}
		if (k == 0)
			ob_str(&out, "??\n??:0:0\n");
		ob_str(&out, "\n");
	}
	ob_flush(&out);
	free(res);
	if (summary) {
		nt_native_module m;
		for (size_t i = 0; nt_native_module_at(nn, i, &m); i++)
			if (m.lookups)
				break;
		fprintf(stderr, PROG ": %zu addresses, %zu frames, resolved in %.3f s (%s%s%s)\n", n,
			nframes, tres, nt_native_status_name(m.status), m.message[0] ? ": " : "",
			m.message);
	}
	nt_native_free(nn);
	free(addrs);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": write error: %s\n", strerror(errno));
		return 3;
	}
	return 0;
}
