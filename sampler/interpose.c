/* SPDX-License-Identifier: MIT */
/* interpose.c - the libc functions the sampler interposes (exported under glibc's symbol
 * versions, sampler.map) so that a sampled process stays safe across them: dlclose (the
 * module snapshot must not point into an unmapped object), the exec family (a pending
 * sampling signal must not kill the new image) and _exit/_Exit (the recording is
 * finalized first). */
#include "runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

/* dlclose unmaps an object that the module snapshot may still list: a walk that read its
 * .eh_frame or code afterwards would fault in the signal handler. This interposer (the
 * library exports dlclose; a preloaded or linked copy comes before libc) marks every
 * snapshot untrusted first, waits (at most UNLOAD_WAIT_NS) for the walks that use one to
 * finish, then unloads; walks use frame pointers only until the sampler thread (or, in
 * samplepoint mode, the next check) has rebuilt the snapshot from the new maps. */
#define UNLOAD_WAIT_NS 100000000u
/* Programs call dlclose by version (glibc 2.34+: dlclose@GLIBC_2.34; older ones bind
 * dlclose@GLIBC_2.2.5 of libdl), and the loader binds a versioned call only to a
 * definition of that version: the interposer is exported under both (sampler.map). */
int dl_interpose(void *handle);
__asm__(".symver dl_interpose, dlclose@@GLIBC_2.34");
__asm__(".symver dl_interpose_old, dlclose@GLIBC_2.2.5");
NTS_API int dl_interpose(void *handle)
{
	static int (*real)(void *);
	if (!real) {
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!real) {
			errno = ENOSYS;
			return -1;
		}
	}
	atomic_fetch_add(&nts_g.unload_begin, 1);
	uint64_t t0 = 0;
	while (atomic_load(&nts_g.snap_users) > 0) {
		uint64_t now = nts_now();
		if (!t0)
			t0 = now;
		else if (now - t0 > UNLOAD_WAIT_NS)
			break; /* a walker stopped for good (a debugger): unload anyway */
		sched_yield();
	}
	int rc = real(handle);
	atomic_fetch_add(&nts_g.unload_end, 1);
	return rc;
}

NTS_API int dl_interpose_old(void *handle);
NTS_API int dl_interpose_old(void *handle)
{
	return dl_interpose(handle);
}

/* exec: a sampling signal sent to a thread while it is in execve stays pending across it,
 * and the new image, whose handlers are reset to the default action, dies of it (a
 * real-time signal terminates). The exec functions are interposed like dlclose: before
 * the real call the thread is taken out of the rounds (exec_tid), a round being sent is
 * waited for, and one system call lets a signal already queued reach the handler while
 * it is still installed. If the exec fails, the thread is sampled again. Exported under
 * glibc's versions of these functions (sampler.map); async-signal-safe (no malloc up to
 * the execl* argument lists of more than EXEC_ARGS_MAX arguments, which fail with E2BIG,
 * as an exec with that many arguments would). */
#define EXEC_ARGS_MAX 4096

static void exec_prepare(void)
{
	if (!atomic_load(&nts_g.active))
		return;
	atomic_store(&nts_rt.exec_tid, (pid_t)syscall(SYS_gettid));
	uint64_t t0 = nts_now();
	while (atomic_load(&nts_rt.in_round) && nts_now() - t0 < UNLOAD_WAIT_NS)
		sched_yield();
	sched_yield(); /* a signal queued before: delivered on this call's way back */
}

static void exec_failed(void)
{
	atomic_store(&nts_rt.exec_tid, 0);
}

#define EXEC_REAL(var, name, type)                                                         \
	static type var;                                                                   \
	if (!var && !(var = (type)dlsym(RTLD_NEXT, name))) {                              \
		errno = ENOSYS;                                                            \
		return -1;                                                                 \
	}
/* the real call between exec_prepare() and, when it returns (the exec failed),
 * exec_failed(), keeping its errno */
#define EXEC_CALL(call)                                                                    \
	do {                                                                               \
		exec_prepare();                                                            \
		int rc_ = (call), e_ = errno;                                              \
		exec_failed();                                                             \
		errno = e_;                                                                \
		return rc_;                                                                \
	} while (0)

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

int exec_ve(const char *path, char *const argv[], char *const envp[]);
__asm__(".symver exec_ve, execve@@GLIBC_2.2.5");
NTS_API int exec_ve(const char *path, char *const argv[], char *const envp[])
{
	EXEC_REAL(real, "execve", execve_fn);
	EXEC_CALL(real(path, argv, envp));
}

int exec_v(const char *path, char *const argv[]);
__asm__(".symver exec_v, execv@@GLIBC_2.2.5");
NTS_API int exec_v(const char *path, char *const argv[])
{
	EXEC_REAL(real, "execv", execv_fn);
	EXEC_CALL(real(path, argv));
}

int exec_vp(const char *file, char *const argv[]);
__asm__(".symver exec_vp, execvp@@GLIBC_2.2.5");
NTS_API int exec_vp(const char *file, char *const argv[])
{
	EXEC_REAL(real, "execvp", execv_fn);
	EXEC_CALL(real(file, argv));
}

int exec_vpe(const char *file, char *const argv[], char *const envp[]);
__asm__(".symver exec_vpe, execvpe@@GLIBC_2.11");
NTS_API int exec_vpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_REAL(real, "execvpe", execve_fn);
	EXEC_CALL(real(file, argv, envp));
}

int exec_fve(int fd, char *const argv[], char *const envp[]);
__asm__(".symver exec_fve, fexecve@@GLIBC_2.2.5");
NTS_API int exec_fve(int fd, char *const argv[], char *const envp[])
{
	EXEC_REAL(real, "fexecve", fexecve_fn);
	EXEC_CALL(real(fd, argv, envp));
}

int exec_veat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags);
__asm__(".symver exec_veat, execveat@@GLIBC_2.34");
NTS_API int exec_veat(int dirfd, const char *path, char *const argv[], char *const envp[],
		      int flags)
{
	EXEC_REAL(real, "execveat", execveat_fn);
	EXEC_CALL(real(dirfd, path, argv, envp, flags));
}

/* The execl* forms: their variable arguments as an argv (and envp for execle), then the
 * v forms above. kind: 0 execl, 1 execlp, 2 execle. */
static int exec_list(int kind, const char *path, const char *arg0, va_list ap)
{
	const char *argv[EXEC_ARGS_MAX + 1];
	size_t n = 0;
	argv[n++] = arg0;
	while (arg0) {
		const char *a = va_arg(ap, const char *);
		if (n == EXEC_ARGS_MAX) {
			errno = E2BIG;
			return -1;
		}
		argv[n++] = a;
		if (!a)
			break;
	}
	if (kind == 2) {
		char *const *envp = va_arg(ap, char *const *);
		return exec_ve(path, (char *const *)argv, envp);
	}
	return kind == 1 ? exec_vp(path, (char *const *)argv) : exec_v(path, (char *const *)argv);
}

int exec_l(const char *path, const char *arg, ...);
__asm__(".symver exec_l, execl@@GLIBC_2.2.5");
NTS_API int exec_l(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(0, path, arg, ap);
	va_end(ap);
	return rc;
}

int exec_lp(const char *file, const char *arg, ...);
__asm__(".symver exec_lp, execlp@@GLIBC_2.2.5");
NTS_API int exec_lp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(1, file, arg, ap);
	va_end(ap);
	return rc;
}

int exec_le(const char *path, const char *arg, ...);
__asm__(".symver exec_le, execle@@GLIBC_2.2.5");
NTS_API int exec_le(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(2, path, arg, ap);
	va_end(ap);
	return rc;
}


/* _exit and _Exit end the process without atexit handlers or destructors (shells and
 * forked children end so): interposed like dlclose, they finalize the recording first.
 * Not in a vfork child, which shares the parent's memory (its pid differs from the one
 * the sampler runs in), nor when the calling thread is inside the sampler (a signal
 * handler that interrupted it). A raw exit_group system call cannot be caught: the file
 * then ends at its last flush (every NTS_DEFAULT_FLUSH_MS). */
#define EXIT_LOCK_WAIT_NS 1000000000u
typedef void (*exit_fn)(int);

static void exit_common(void)
{
	if (!nts_guard && nts_rt.started && (pid_t)syscall(SYS_getpid) == nts_g.pid)
		nts_env_stop(EXIT_LOCK_WAIT_NS);
}

void exit_u(int status) __attribute__((noreturn));
__asm__(".symver exit_u, _exit@@GLIBC_2.2.5");
NTS_API void exit_u(int status)
{
	static exit_fn real;
	exit_common();
	if (!real)
		real = (exit_fn)dlsym(RTLD_NEXT, "_exit");
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

void exit_U(int status) __attribute__((noreturn));
__asm__(".symver exit_U, _Exit@@GLIBC_2.2.5");
NTS_API void exit_U(int status)
{
	static exit_fn real;
	exit_common();
	if (!real)
		real = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}
