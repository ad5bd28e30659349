/* SPDX-License-Identifier: MIT */
/* mkfakediag.c - a hostile diagnostic server for tests/e2e/t684: listens on
 * DIR/dotnet-diagnostic-PID-KEY-socket (its own pid and start time, as the runtime names
 * its socket) and answers every command in the way MODE says: garbage, a bad magic, a
 * header cut short, a size that lies, an error reply, silence, or a valid session whose
 * nettrace stream (the bytes of TRACE) stops after CUT bytes or turns into garbage.
 *   mkfakediag MODE DIR [TRACE [CUT]]
 * Prints "ready PID" on stdout once listening; serves until killed. With FAKE_DUMP=FILE,
 * appends every command it receives to FILE (for checking what the client sends). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

/* A reply header + payload. */
static void reply(int fd, uint8_t set, uint8_t id, const uint8_t *pl, size_t n)
{
	uint8_t m[4096];
	memcpy(m, "DOTNET_IPC_V1", 14);
	put16(m + 14, (uint16_t)(20 + n));
	m[16] = set;
	m[17] = id;
	put16(m + 18, 0);
	memcpy(m + 20, pl, n);
	send_all(fd, m, 20 + n);
}

static size_t str16(uint8_t *p, const char *s)
{
	size_t n = strlen(s) + 1;
	put32(p, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		put16(p + 4 + 2 * i, (uint8_t)s[i]);
	return 4 + 2 * n;
}

static uint64_t start_ticks(void)
{
	char buf[1024];
	FILE *fp = fopen("/proc/self/stat", "r");
	if (!fp)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	for (int f = 3; f < 22 && *p; f++) {
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
	}
	return strtoull(p, NULL, 10);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: mkfakediag MODE DIR [TRACE [CUT]]\n");
		return 1;
	}
	const char *mode = argv[1];
	uint8_t *trace = NULL;
	size_t tlen = 0, cut = 0;
	if (argc > 3) {
		FILE *fp = fopen(argv[3], "rb");
		if (!fp) {
			perror(argv[3]);
			return 1;
		}
		trace = malloc(64 << 20);
		tlen = fread(trace, 1, 64 << 20, fp);
		fclose(fp);
		cut = argc > 4 ? strtoul(argv[4], NULL, 10) : tlen;
		if (cut > tlen)
			cut = tlen;
	}
	signal(SIGPIPE, SIG_IGN);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/dotnet-diagnostic-%d-%llu-socket", argv[2],
		 (int)getpid(), (unsigned long long)start_ticks());
	unlink(sa.sun_path);
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ls, 8) != 0) {
		perror("socket");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	uint32_t seed = 12345;
	for (;;) {
		int c = accept(ls, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		uint8_t h[20], pl[65536];
		ssize_t n = recv(c, h, sizeof h, MSG_WAITALL);
		if (n != 20) {
			close(c);
			continue;
		}
		size_t size = (size_t)h[14] | (size_t)h[15] << 8;
		if (size > 20 && recv(c, pl, size - 20, MSG_WAITALL) <= 0) {
			close(c);
			continue;
		}
		uint8_t set = h[16], id = h[17];
		/* FAKE_DUMP=FILE: every command received, appended (header and payload) */
		const char *dump = getenv("FAKE_DUMP");
		FILE *df = dump ? fopen(dump, "ab") : NULL;
		if (df) {
			fwrite(h, 1, 20, df);
			if (size > 20)
				fwrite(pl, 1, size - 20, df);
			fclose(df);
		}
		if (strcmp(mode, "garbage") == 0) {
			uint8_t g[200];
			for (size_t i = 0; i < sizeof g; i++) {
				seed = seed * 1103515245u + 12345u;
				g[i] = (uint8_t)(seed >> 16);
			}
			send_all(c, g, sizeof g);
		} else if (strcmp(mode, "badmagic") == 0) {
			uint8_t m[20] = "NOT_DOTNET_IPC";
			put16(m + 14, 20);
			send_all(c, m, sizeof m);
		} else if (strcmp(mode, "shortheader") == 0) {
			send_all(c, "DOTNET_IPC", 10);
		} else if (strcmp(mode, "liesize") == 0) {
			uint8_t m[30];
			memcpy(m, "DOTNET_IPC_V1", 14);
			put16(m + 14, 65535);
			m[16] = 0xFF;
			m[17] = 0x00;
			put16(m + 18, 0);
			memset(m + 20, 0x41, 10);
			send_all(c, m, sizeof m);
		} else if (strcmp(mode, "smallsize") == 0) {
			uint8_t m[20];
			memcpy(m, "DOTNET_IPC_V1", 14);
			put16(m + 14, 3);
			m[16] = 0xFF;
			m[17] = 0x00;
			put16(m + 18, 0);
			send_all(c, m, sizeof m);
		} else if (strcmp(mode, "error") == 0) {
			uint8_t e[4];
			put32(e, 0x80131385u);
			reply(c, 0xFF, 0xFF, e, 4);
		} else if (strcmp(mode, "silent") == 0) {
			sleep(30);
		} else if (set == 0x04) { /* ProcessInfo(2): a plausible answer */
			uint8_t p[2048];
			size_t k = 0;
			put64(p, (uint64_t)getpid());
			k = 8;
			memset(p + k, 0x5A, 16);
			k += 16;
			k += str16(p + k, "/fake/dotnet fake.dll");
			k += str16(p + k, "Linux");
			k += str16(p + k, "x64");
			if (id == 0x04) {
				k += str16(p + k, "fake");
				k += str16(p + k, "10.0.0-fake");
			}
			/* "badstrings": a string that claims more than the payload holds */
			if (strcmp(mode, "badstrings") == 0)
				put32(p + 24, 60000);
			reply(c, 0xFF, 0x00, p, k);
		} else if (set == 0x02 && id == 0x01) { /* StopTracing */
			uint8_t s[8];
			put64(s, 7);
			reply(c, 0xFF, 0x00, s, 8);
		} else if (set == 0x02) { /* CollectTracing*: OK, then the stream */
			uint8_t s[8];
			put64(s, 7);
			reply(c, 0xFF, 0x00, s, 8);
			if (strcmp(mode, "streamgarbage") == 0) {
				uint8_t g[4096];
				for (size_t i = 0; i < sizeof g; i++) {
					seed = seed * 1103515245u + 12345u;
					g[i] = (uint8_t)(seed >> 16);
				}
				send_all(c, g, sizeof g);
			} else if (trace) {
				send_all(c, trace, cut);
			}
		}
		close(c);
	}
}
