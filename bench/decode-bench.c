/* SPDX-License-Identifier: MIT */
/* decode-bench.c - measures how fast nt_reader decodes a trace: every event is read, and
 * its header fields, stack IPs and payload bytes are folded into a checksum (so the work
 * cannot be optimised away; the sum does not depend on the order, so both modes agree),
 * and the delivery order into a second hash (to compare two builds). Prints one line per
 * run:
 *
 *   mode=time bytes=N events=N ... seconds=S gbps=X maxrss_kb=N checksum=HEX order=HEX
 *
 * "time" is the default timestamp order, "file" is NT_READ_FILE_ORDER. The peak RSS is the
 * process's (getrusage), so run one mode per process when comparing RSS (bench/run.sh
 * does). Not here: generating traces (gen-trace.c), statistics over runs (run.sh). */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "nettrace.h"

#define PROG "decode-bench"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_BADINPUT = 2, EXIT_SYSTEM = 3 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct result {
	uint64_t events, ips, payload_bytes, checksum, order, bytes;
	double seconds;
} result;

/* Reads path to the end in the given order. light: touch the header fields only, not the
 * IPs and payload bytes (to tell the reader's cost from a consumer's). Returns an exit
 * code. */
static int run(const char *path, unsigned flags, int light, result *res)
{
	nt_reader_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.flags = flags;
	nt_error err;
	nt_error_clear(&err);
	memset(res, 0, sizeof *res);
	double t0 = now();
	nt_reader *r;
	if (nt_reader_open_file(&r, path, &o, &err)) {
		fprintf(stderr, PROG ": %s: %s\n", path, err.msg);
		return err.code == NT_EIO ? EXIT_SYSTEM : EXIT_BADINPUT;
	}
	const nt_event *ev;
	int rc;
	uint64_t sum = 0, ord = 0, ips = 0, pbytes = 0, n = 0;
	while ((rc = nt_reader_next(r, &ev, &err)) == 1) {
		/* header fields a consumer uses */
		uint64_t eh = ev->timestamp * 0x9E3779B97F4A7C15ull ^ ev->thread_id ^
			      (uint64_t)ev->time_ns << 17 ^ (uint64_t)ev->meta->event_id << 48;
		if (light) {
			sum += eh ^ ev->stack_id ^ ((uint64_t)ev->stack_depth << 32) ^ ev->payload_len;
			ord = (ord ^ ev->offset) * 0x100000001B3ull;
			n++;
			continue;
		}
		/* every IP of the stack and every payload byte, with plain sums in four
		 * independent lanes: a consumer's per-IP work should not hide the decoder's
		 * (a multiply chain per IP cost more than decoding an event) */
		const uint64_t *s = ev->stack;
		uint32_t d = ev->stack_depth, i = 0;
		uint64_t h0 = 0, h1 = 0, h2 = 0, h3 = 0;
		for (; i + 4 <= d; i += 4) {
			h0 += s[i];
			h1 += s[i + 1];
			h2 += s[i + 2];
			h3 += s[i + 3];
		}
		for (; i < d; i++)
			h0 += s[i];
		uint64_t h = h0 ^ (h1 << 1) ^ (h2 << 2) ^ (h3 << 3) ^ d;
		ips += d;
		uint64_t ph = 0;
		const uint8_t *pl = ev->payload;
		uint32_t plen = ev->payload_len, j = 0;
		for (; j + 8 <= plen; j += 8) {
			uint64_t w;
			memcpy(&w, pl + j, 8);
			ph += w;
		}
		for (; j < plen; j++)
			ph += (uint64_t)pl[j] << (8 * (j & 7));
		pbytes += plen;
		/* a sum is order-independent: both modes give the same checksum */
		uint64_t x = eh ^ h ^ (ph << 1);
		x ^= x >> 29;
		sum += x * 0xBF58476D1CE4E5B9ull;
		ord = (ord ^ ev->offset) * 0x100000001B3ull;
		n++;
	}
	res->seconds = now() - t0;
	if (rc < 0) {
		fprintf(stderr, PROG ": %s: at byte %" PRIu64 ": %s\n", path, err.offset, err.msg);
		nt_reader_free(r);
		return err.code == NT_EIO ? EXIT_SYSTEM : EXIT_BADINPUT;
	}
	const nt_reader_stats *st = nt_reader_stats_get(r);
	res->bytes = st->bytes;
	res->events = n;
	res->ips = ips;
	res->payload_bytes = pbytes;
	res->checksum = sum;
	res->order = ord;
	nt_reader_free(r);
	return EXIT_OK;
}

static const char USAGE[] =
	"Usage: " PROG " [-m time|file] [-l] [-r N] FILE\n"
	"Decode FILE with nt_reader, touching every event's stack and payload, and print\n"
	"bytes, events, seconds, GB/s and peak RSS.\n"
	"\n"
	"  -m, --mode MODE    time (timestamp order, default) or file (NT_READ_FILE_ORDER)\n"
	"  -l, --light        touch header fields only, not the stack IPs and payload bytes\n"
	"                     (the checksum then differs; it shows what the reader alone costs)\n"
	"  -r, --repeat N     decode N times in this process, one line each (default 1)\n"
	"  -h, --help         this help\n";

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"mode", required_argument, NULL, 'm'},
		{"repeat", required_argument, NULL, 'r'},
		{"light", no_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned flags = 0;
	const char *mode = "time";
	long repeat = 1;
	int c, light = 0;
	while ((c = getopt_long(argc, argv, "m:r:lh", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "time") == 0) {
				flags = 0;
			} else if (strcmp(optarg, "file") == 0) {
				flags = NT_READ_FILE_ORDER;
			} else {
				fprintf(stderr, PROG ": bad mode '%s'\nTry '" PROG " --help'.\n", optarg);
				return EXIT_USAGE;
			}
			mode = optarg;
			break;
		case 'r':
			repeat = strtol(optarg, NULL, 10);
			if (repeat < 1 || repeat > 1000) {
				fprintf(stderr, PROG ": bad repeat count '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'l': light = 1; break;
		case 'h': fputs(USAGE, stdout); return EXIT_OK;
		default: fprintf(stderr, "Try '" PROG " --help'.\n"); return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, PROG ": need exactly one FILE\nTry '" PROG " --help'.\n");
		return EXIT_USAGE;
	}
	const char *path = argv[optind];
	for (long i = 0; i < repeat; i++) {
		result res;
		int ec = run(path, flags, light, &res);
		if (ec)
			return ec;
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("mode=%s%s bytes=%" PRIu64 " events=%" PRIu64 " stack_ips=%" PRIu64
		       " payload_bytes=%" PRIu64 " seconds=%.6f gbps=%.3f maxrss_kb=%ld"
		       " checksum=%016" PRIx64 " order=%016" PRIx64 "\n",
		       mode, light ? "-light" : "", res.bytes, res.events, res.ips, res.payload_bytes, res.seconds,
		       res.seconds > 0 ? (double)res.bytes / res.seconds / 1e9 : 0.0, ru.ru_maxrss,
		       res.checksum, res.order);
		fflush(stdout);
	}
	return ferror(stdout) ? EXIT_SYSTEM : EXIT_OK;
}
