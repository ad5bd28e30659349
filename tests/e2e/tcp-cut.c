/* SPDX-License-Identifier: MIT */
/* tcp-cut.c - a loopback TCP proxy that breaks one connection on purpose, for the tests
 * of a server that goes away mid-import (t410). Connections are served one at a time
 * (the client under test makes one at a time): bytes are copied both ways between the
 * client and 127.0.0.1:TARGET; the first connection whose first client bytes contain
 * MATCH is closed after CUT client bytes have been forwarded. Writes the port it listens
 * on to PORTFILE, and exits after IDLE seconds without a connection (bounded run).
 * With TARGET 0 it is a hostile server instead: it reads the client's request (up to its
 * last, empty chunk), answers MATCH (with \r and \n escapes decoded) and closes.
 *
 * "tcp-cut --probe PORT" only tells whether 127.0.0.1:PORT accepts a connection (exit 0).
 *
 *   tcp-cut PORTFILE TARGET MATCH CUT IDLE
 *   tcp-cut --probe PORT */
#define _GNU_SOURCE 1 /* memmem */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--probe") == 0) {
		int fd = dial(atoi(argv[2]));
		if (fd < 0)
			return 1;
		close(fd);
		return 0;
	}
	if (argc != 6) {
		fprintf(stderr, "usage: tcp-cut PORTFILE TARGET MATCH CUT IDLE\n");
		return 1;
	}
	int target = atoi(argv[2]);
	const char *match = argv[3];
	long cut = atol(argv[4]);
	int idle = atoi(argv[5]);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a;
	socklen_t alen = sizeof a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 8) ||
	    getsockname(ls, (struct sockaddr *)&a, &alen)) {
		perror("tcp-cut");
		return 1;
	}
	FILE *pf = fopen(argv[1], "w");
	if (!pf)
		return 1;
	fprintf(pf, "%d\n", ntohs(a.sin_port));
	fclose(pf);
	int done_cut = 0;
	char reply[4096];
	size_t rlen = 0;
	for (const char *m = match; *m && rlen < sizeof reply; m++) {
		if (m[0] == '\\' && (m[1] == 'r' || m[1] == 'n')) {
			reply[rlen++] = m[1] == 'r' ? '\r' : '\n';
			m++;
		} else {
			reply[rlen++] = *m;
		}
	}
	for (;;) {
		struct pollfd lp = {ls, POLLIN, 0};
		if (poll(&lp, 1, idle * 1000) <= 0)
			return 0;
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			continue;
		if (target == 0) {
			/* the whole request first (it ends with the empty chunk), so that the
			 * client is reading, not sending, when the answer comes */
			char buf[65536], tail[8] = {0};
			struct pollfd p = {c, POLLIN, 0};
			ssize_t n;
			while (poll(&p, 1, 10000) > 0 && (n = read(c, buf, sizeof buf)) > 0) {
				for (ssize_t i = 0; i < n; i++) {
					memmove(tail, tail + 1, sizeof tail - 2);
					tail[sizeof tail - 2] = buf[i];
				}
				if (!memcmp(tail + sizeof tail - 6, "0\r\n\r\n", 5))
					break;
			}
			if (write(c, reply, rlen) < 0)
				perror("tcp-cut");
			close(c);
			continue;
		}
		int s = dial(target);
		if (s < 0) {
			close(c);
			continue;
		}
		long fwd = 0;
		int armed = 0, first = 1;
		char buf[65536];
		for (;;) {
			struct pollfd p[2] = {{c, POLLIN, 0}, {s, POLLIN, 0}};
			if (poll(p, 2, idle * 1000) <= 0)
				break;
			if (p[0].revents) {
				ssize_t n = read(c, buf, sizeof buf);
				if (n <= 0)
					break;
				if (first && !done_cut && memmem(buf, (size_t)n, match, strlen(match)))
					armed = 1;
				first = 0;
				if (armed && fwd + n >= cut) {
					if (cut > fwd && write(s, buf, (size_t)(cut - fwd)) < 0)
						break;
					done_cut = 1;
					break;
				}
				if (write(s, buf, (size_t)n) != n)
					break;
				fwd += n;
			}
			if (p[1].revents) {
				ssize_t n = read(s, buf, sizeof buf);
				if (n <= 0)
					break;
				if (write(c, buf, (size_t)n) != n)
					break;
			}
		}
		close(c);
		close(s);
	}
}
