/* SPDX-License-Identifier: MIT */
/* nts-noperf.c - runs a command where perf_event_open(2) is refused, as a container's
 * seccomp profile or perf_event_paranoid 3 refuse it: a seccomp filter makes the system
 * call fail with EACCES (the filter is inherited across fork and exec), then execs
 * CMD. The sampler's fallback tests (t771) record under it.
 *   nts-noperf CMD [ARG...]
 * Exit: CMD's, or 3 when the filter cannot be installed, 1 on usage. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nts-noperf CMD [ARG...]\n");
		return 1;
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		fprintf(stderr, "nts-noperf: cannot install the seccomp filter: %s\n", strerror(errno));
		return 3;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "nts-noperf: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
