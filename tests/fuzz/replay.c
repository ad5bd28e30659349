/* SPDX-License-Identifier: MIT */
/* replay.c - runs a libFuzzer target (tests/fuzz/fuzz-*.c) without libFuzzer: each FILE
 * argument is read and handed to LLVMFuzzerTestOneInput() once, in a buffer of exactly its
 * size (as libFuzzer does, so a read past the input is a read past the allocation). The
 * test suite replays the saved reproducers this way (tests/e2e/t902-fuzz-regress.sh); built
 * with the sanitizers (./run.sh test), it reports what the fuzzer reported.
 *
 *   replay-TARGET FILE...
 *
 * Prints "FILE" per input done; exit status 0, 1 usage, 2 unreadable file. A bug found by
 * the target kills the process (trap, sanitizer report). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return -1;
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int bad = 0;
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? 2 * cap : 65536;
			uint8_t *nb = realloc(buf, ncap);
			if (!nb) {
				bad = 1;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		size_t n = fread(buf + len, 1, cap - len, fp);
		len += n;
		if (n == 0)
			break;
	}
	bad |= ferror(fp);
	fclose(fp);
	if (bad) {
		free(buf);
		return -1;
	}
	/* exactly len bytes, so that ASan sees an overread of the input */
	uint8_t *in = malloc(len ? len : 1);
	if (!in) {
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < len; i++)
		in[i] = buf[i];
	free(buf);
	LLVMFuzzerTestOneInput(in, len);
	free(in);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		if (replay(argv[i]) != 0) {
			fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
			return 2;
		}
		printf("%s\n", argv[i]);
		fflush(stdout);
	}
	return 0;
}
