/* SPDX-License-Identifier: MIT */
/* diag-ipc.c - a client of the .NET runtime's diagnostics IPC protocol on Linux: finds a
 * process's diagnostic socket (also inside a container, through /proc/PID/root), asks
 * ProcessInfo2, starts an EventPipe streaming session (CollectTracing4, falling back to 3
 * and 2) whose reply continues with a nettrace stream, and stops it (StopTracing). Also
 * parses dotnet-trace's provider syntax and knows its profiles. The protocol facts used
 * here are written down in doc/format/diagnostics-ipc.md. Every reply is untrusted: sizes
 * are checked before use, reads have a timeout, and errors carry the reply's byte offset. */
#include "internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ wire constants */

#define IPC_MAGIC "DOTNET_IPC_V1" /* 13 characters and a NUL: 14 bytes */
#define IPC_MAGIC_LEN 14
#define IPC_HEADER_LEN 20
#define IPC_MAX_MESSAGE 65535u /* the header's size field is 16 bits */
#define PATH_MAX_DIAG 4096

enum { SET_EVENTPIPE = 0x02, SET_PROCESS = 0x04, SET_SERVER = 0xFF };
enum { EP_STOP = 0x01, EP_COLLECT2 = 0x03, EP_COLLECT3 = 0x04, EP_COLLECT4 = 0x05 };
enum { PROC_INFO = 0x00, PROC_INFO2 = 0x04 };
enum { SERVER_OK = 0x00, SERVER_ERROR = 0xFF };

#define HR_UNKNOWN_COMMAND 0x80131385u

const char *nt_diag_hresult_name(uint32_t hr)
{
	switch (hr) {
	case 0x80131384u: return "bad encoding";
	case 0x80131385u: return "unknown command";
	case 0x80131386u: return "unknown magic";
	case 0x80131515u: return "not supported";
	case 0x80004005u: return "failure";
	case 0x8013135bu: return "not yet available";
	case 0x80131371u: return "runtime not initialized";
	case 0x80070057u: return "invalid argument";
	case 0x8007007au: return "insufficient buffer";
	case 0x800000cbu: return "environment variable not found";
	default: return "error";
	}
}

/* ------------------------------------------------------------------ socket discovery */

/* Reads a small text file whole (NUL-terminated); returns bytes read or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

/* Start time of pid in clock ticks since boot (/proc/PID/stat field 22): the runtime's
 * disambiguation key on Linux. 0 when unknown. */
static uint64_t proc_start_ticks(uint32_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%" PRIu32 "/stat", pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return 0;
	/* the command name (field 2) may hold spaces and ')': fields resume after the last ')' */
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	for (int field = 3; field < 22 && *p; field++) {
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	return strtoull(p, NULL, 10);
}

/* The pid inside the process's innermost pid namespace ("NSpid:" of /proc/PID/status, last
 * value), or pid itself when there is none. */
static uint32_t proc_ns_pid(uint32_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%" PRIu32 "/status", pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return pid;
	char *l = strstr(buf, "\nNSpid:");
	if (!l)
		return pid;
	l += 7;
	char *eol = strchr(l, '\n');
	if (eol)
		*eol = '\0';
	unsigned long v = pid;
	char *end;
	for (;;) {
		while (*l == ' ' || *l == '\t')
			l++;
		if (!*l)
			break;
		unsigned long x = strtoul(l, &end, 10);
		if (end == l)
			break;
		v = x;
		l = end;
	}
	return v && v <= UINT32_MAX ? (uint32_t)v : pid;
}

/* TMPDIR in the environment of pid, when it can be read (same user or root). */
static int proc_tmpdir(uint32_t pid, char *out, size_t len)
{
	char path[64];
	static const size_t cap = 1u << 16;
	snprintf(path, sizeof path, "/proc/%" PRIu32 "/environ", pid);
	char *buf = malloc(cap);
	if (!buf)
		return 0;
	ssize_t n = read_small(path, buf, cap);
	int found = 0;
	for (ssize_t i = 0; n > 0 && i < n;) {
		const char *e = buf + i;
		size_t l = strnlen(e, (size_t)(n - i));
		if (l > 7 && strncmp(e, "TMPDIR=", 7) == 0 && l - 7 < len) {
			memcpy(out, e + 7, l - 7);
			out[l - 7] = '\0';
			found = out[0] != '\0';
		}
		i += (ssize_t)l + 1;
	}
	free(buf);
	return found;
}

/* Looks in dir for "dotnet-diagnostic-NSPID-KEY-socket"; prefers KEY == key, else the
 * newest. Returns 1 with the path in best (when it beats *best_mtime), 0 if none. */
static int scan_dir(const char *dir, uint32_t ns_pid, uint64_t key, char *best, size_t len,
		    int *best_exact, time_t *best_mtime)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	char prefix[64];
	int plen = snprintf(prefix, sizeof prefix, "dotnet-diagnostic-%" PRIu32 "-", ns_pid);
	int found = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		const char *nm = de->d_name;
		if (strncmp(nm, prefix, (size_t)plen) != 0)
			continue;
		char *end;
		unsigned long long k = strtoull(nm + plen, &end, 10);
		if (end == nm + plen || strcmp(end, "-socket") != 0)
			continue;
		char path[PATH_MAX_DIAG];
		if (snprintf(path, sizeof path, "%s/%s", dir, nm) >= (int)sizeof path)
			continue;
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
			continue;
		int exact = key && k == key;
		if (found || best[0]) {
			if (*best_exact && !exact)
				continue;
			if (exact == *best_exact && st.st_mtime < *best_mtime)
				continue;
		}
		if (strlen(path) >= len)
			continue;
		strcpy(best, path);
		*best_exact = exact;
		*best_mtime = st.st_mtime;
		found = 1;
	}
	closedir(d);
	return found;
}

int nt_diag_socket_path(uint32_t pid, char *buf, size_t len, nt_error *err)
{
	nt_error_clear(err);
	if (!buf || len < 2 || pid == 0)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad arguments to nt_diag_socket_path");
	buf[0] = '\0';
	char path[64];
	snprintf(path, sizeof path, "/proc/%" PRIu32, pid);
	struct stat st;
	if (stat(path, &st) != 0)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no process %" PRIu32, pid);
	uint64_t key = proc_start_ticks(pid);
	uint32_t ns_pid = proc_ns_pid(pid);
	int exact = 0;
	time_t mtime = 0;
	/* 1. our own temporary directory (the target shares it when it runs beside us) */
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX_DIAG];
	if (ns_pid == pid) {
		if (tmp && tmp[0])
			scan_dir(tmp, pid, key, buf, len, &exact, &mtime);
		if (!exact)
			scan_dir("/tmp", pid, key, buf, len, &exact, &mtime);
	}
	/* 2. the target's own TMPDIR and /tmp, seen through its root (its mount namespace:
	 * a container); the socket is named with the pid the target sees */
	char ttmp[PATH_MAX_DIAG / 2];
	if (!exact && proc_tmpdir(pid, ttmp, sizeof ttmp)) {
		snprintf(dir, sizeof dir, "/proc/%" PRIu32 "/root%s", pid, ttmp);
		scan_dir(dir, ns_pid, key, buf, len, &exact, &mtime);
	}
	if (!exact) {
		snprintf(dir, sizeof dir, "/proc/%" PRIu32 "/root/tmp", pid);
		scan_dir(dir, ns_pid, key, buf, len, &exact, &mtime);
	}
	if (!buf[0]) {
		if (access(path, R_OK) == 0) {
			snprintf(dir, sizeof dir, "/proc/%" PRIu32 "/root", pid);
			if (access(dir, X_OK) != 0 && errno == EACCES)
				return nt_fail(err, NT_EIO, NT_NO_OFFSET,
					       "process %" PRIu32 ": cannot look into its file system "
					       "(/proc/%" PRIu32 "/root: permission denied): run as "
					       "its user or as root", pid, pid);
		}
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "process %" PRIu32 " has no diagnostic socket "
			       "(dotnet-diagnostic-%" PRIu32 "-*-socket in $TMPDIR, /tmp or "
			       "/proc/%" PRIu32 "/root/tmp): not a .NET process, or started with "
			       "DOTNET_EnableDiagnostics=0", pid, ns_pid, pid);
	}
	return 0;
}

/* Adds pid to a growable list. */
static int push_pid(uint32_t **v, size_t *n, size_t *cap, uint32_t pid)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == pid)
			return 0;
	if (nt_grow((void **)v, cap, *n + 1, sizeof **v))
		return -1;
	(*v)[(*n)++] = pid;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int nt_diag_list(uint32_t **pids, size_t *n, nt_error *err)
{
	nt_error_clear(err);
	*pids = NULL;
	*n = 0;
	size_t cap = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return nt_fail_errno(err, errno, "cannot list /proc");
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		if (*end || pid == 0 || pid > UINT32_MAX)
			continue;
		char path[PATH_MAX_DIAG];
		nt_error e2;
		nt_error_clear(&e2);
		if (nt_diag_socket_path((uint32_t)pid, path, sizeof path, &e2) == 0 &&
		    push_pid(pids, n, &cap, (uint32_t)pid)) {
			closedir(d);
			free(*pids);
			*pids = NULL;
			*n = 0;
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		}
	}
	closedir(d);
	if (*n)
		qsort(*pids, *n, sizeof **pids, cmp_u32);
	return 0;
}

/* ------------------------------------------------------------------ connection */

int nt_diag_connect(const char *path, nt_error *err)
{
	nt_error_clear(err);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (!path || strlen(path) >= sizeof sa.sun_path)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "socket path too long (%zu bytes, at "
			       "most %zu)", path ? strlen(path) : 0, sizeof sa.sun_path - 1);
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return nt_fail_errno(err, errno, "cannot create a socket");
	while (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		int e = errno;
		if (e == EINTR)
			continue;
		close(fd);
		struct stat st;
		if (e == EACCES || e == EPERM) {
			if (stat(path, &st) == 0)
				return nt_fail(err, NT_EIO, NT_NO_OFFSET,
					       "cannot connect to %s: permission denied (the socket "
					       "belongs to uid %u, this is uid %u: run as that user "
					       "or as root)", path, (unsigned)st.st_uid,
					       (unsigned)geteuid());
			return nt_fail(err, NT_EIO, NT_NO_OFFSET,
				       "cannot connect to %s: permission denied (run as the "
				       "process's user or as root)", path);
		}
		if (e == ECONNREFUSED)
			return nt_fail(err, NT_EIO, NT_NO_OFFSET,
				       "cannot connect to %s: nobody listens (a stale socket of a "
				       "process that is gone?)", path);
		nt_error_clear(err);
		nt_fail_errno(err, e, "cannot connect to %s", path);
		err->code = NT_EIO;
		err->sys_errno = e;
		return NT_EIO;
	}
	return fd;
}

/* Writes all of buf (no SIGPIPE: the peer may close). */
static int send_all(int fd, const uint8_t *buf, size_t len, nt_error *err)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return nt_fail_errno(err, n < 0 ? errno : EPIPE,
					     "cannot send the command to the runtime");
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads exactly len bytes within the deadline. Returns 0, or NT_ETRUNC when the peer
 * closes first (*got = bytes read), or NT_EIO (timeout, read error). */
static int recv_full(int fd, uint8_t *buf, size_t len, int64_t deadline, size_t *got,
		     uint64_t offset, nt_error *err)
{
	*got = 0;
	while (*got < len) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return nt_fail(err, NT_EIO, offset + *got,
				       "the runtime did not answer in time");
		struct pollfd pfd = {fd, POLLIN, 0};
		int pr = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return nt_fail_errno(err, errno, "cannot wait for the runtime's reply");
		if (pr == 0)
			continue;
		ssize_t n = recv(fd, buf + *got, len - *got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nt_fail_errno(err, errno, "cannot read the runtime's reply");
		if (n == 0)
			return NT_ETRUNC;
		*got += (size_t)n;
	}
	return 0;
}

/* A message under construction. */
typedef struct msg {
	uint8_t *p;
	size_t len, cap;
	int oom;
} msg;

static void m_put(msg *m, const void *d, size_t n)
{
	if (m->oom || nt_grow((void **)&m->p, &m->cap, m->len + n, 1)) {
		m->oom = 1;
		return;
	}
	memcpy(m->p + m->len, d, n);
	m->len += n;
}

static void m_u8(msg *m, uint8_t v) { m_put(m, &v, 1); }

static void m_u32(msg *m, uint32_t v)
{
	uint8_t b[4];
	nt_put32(b, v);
	m_put(m, b, 4);
}

static void m_u64(msg *m, uint64_t v)
{
	uint8_t b[8];
	nt_put64(b, v);
	m_put(m, b, 8);
}

/* string: uint32 count of UTF-16 units including the NUL, then the units; an empty or
 * absent string is sent as count 0. */
static void m_str(msg *m, const char *s)
{
	if (!s || !*s) {
		m_u32(m, 0);
		return;
	}
	uint8_t *u = NULL;
	size_t ulen = 0, ucap = 0;
	if (nt_utf8_to_utf16z(s, &u, &ulen, &ucap)) {
		m->oom = 1;
		return;
	}
	m_u32(m, (uint32_t)(ulen / 2));
	m_put(m, u, ulen);
	free(u);
}

static void m_begin(msg *m, uint8_t set, uint8_t id)
{
	memset(m, 0, sizeof *m);
	uint8_t h[IPC_HEADER_LEN] = {0};
	memcpy(h, IPC_MAGIC, IPC_MAGIC_LEN);
	h[16] = set;
	h[17] = id;
	m_put(m, h, sizeof h);
}

/* Fills in the size; fails when the message does not fit the 16-bit size. */
static int m_end(msg *m, nt_error *err)
{
	if (m->oom)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (m->len > IPC_MAX_MESSAGE)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "the command is %zu bytes, the protocol allows at most %u (too many "
			       "or too long providers)", m->len, IPC_MAX_MESSAGE);
	nt_put16(m->p + 14, (uint16_t)m->len);
	return 0;
}

/* A reply: header fields and the payload (owned). */
typedef struct reply {
	uint8_t set, id;
	uint8_t *payload;
	size_t len;
} reply;

/* Reads one reply message. An error reply is returned as is (set 0xFF, id 0xFF). */
static int read_reply(int fd, int timeout_ms, reply *r, nt_error *err)
{
	memset(r, 0, sizeof *r);
	uint8_t h[IPC_HEADER_LEN];
	size_t got;
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : NT_DIAG_TIMEOUT_MS);
	int rc = recv_full(fd, h, sizeof h, deadline, &got, 0, err);
	if (rc == NT_ETRUNC)
		return got == 0 ? nt_fail(err, NT_ETRUNC, 0,
					  "the runtime closed the connection without a reply")
				: nt_fail(err, NT_ETRUNC, got,
					  "the reply ends in its header (%zu of 20 bytes)", got);
	if (rc)
		return rc;
	/* the magic tells a diagnostic server from anything else listening there */
	if (memcmp(h, IPC_MAGIC, IPC_MAGIC_LEN) != 0)
		return nt_fail(err, NT_EFORMAT, 0,
			       "the reply does not start with the magic \"DOTNET_IPC_V1\": not a "
			       ".NET diagnostic server");
	uint16_t size = nt_le16(h + 14);
	if (size < IPC_HEADER_LEN)
		return nt_fail(err, NT_EFORMAT, 14,
			       "the reply's size %u is smaller than its header (20)", size);
	r->set = h[16];
	r->id = h[17];
	r->len = size - IPC_HEADER_LEN;
	if (r->len) {
		r->payload = malloc(r->len);
		if (!r->payload)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		rc = recv_full(fd, r->payload, r->len, deadline, &got, IPC_HEADER_LEN, err);
		if (rc == NT_ETRUNC)
			rc = nt_fail(err, NT_ETRUNC, IPC_HEADER_LEN + got,
				     "the reply ends after %zu of its %zu payload bytes", got, r->len);
		if (rc) {
			free(r->payload);
			r->payload = NULL;
			return rc;
		}
	}
	return 0;
}

/* Checks that r is the OK reply; an error reply becomes an error naming its HRESULT. */
static int check_ok(const reply *r, const char *what, uint32_t *hr, nt_error *err)
{
	*hr = 0;
	if (r->set == SET_SERVER && r->id == SERVER_OK)
		return 0;
	if (r->set == SET_SERVER && r->id == SERVER_ERROR) {
		if (r->len < 4)
			return nt_fail(err, NT_EFORMAT, IPC_HEADER_LEN,
				       "%s: the error reply has %zu payload bytes, 4 expected", what,
				       r->len);
		*hr = nt_le32(r->payload);
		return nt_fail(err, NT_EUNSUPPORTED, IPC_HEADER_LEN,
			       "%s: the runtime answered error 0x%08" PRIx32 " (%s)", what, *hr,
			       nt_diag_hresult_name(*hr));
	}
	return nt_fail(err, NT_EFORMAT, 16, "%s: unexpected reply 0x%02x%02x", what, r->set, r->id);
}

/* Connects, sends m, reads the reply; returns the fd (still open) or < 0. */
static int transact(const char *path, msg *m, int timeout_ms, reply *r, nt_error *err)
{
	if (m_end(m, err))
		return err ? err->code : NT_EINVAL;
	int fd = nt_diag_connect(path, err);
	if (fd < 0)
		return fd;
	int rc = send_all(fd, m->p, m->len, err);
	if (!rc)
		rc = read_reply(fd, timeout_ms, r, err);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* ------------------------------------------------------------------ ProcessInfo */

/* Reads a protocol string at *pos into out (UTF-8, truncated to len). */
static int get_str(const reply *r, size_t *pos, char *out, size_t len, const char *field,
		   nt_error *err)
{
	out[0] = '\0';
	if (r->len - *pos < 4)
		return nt_fail(err, NT_EFORMAT, IPC_HEADER_LEN + *pos,
			       "ProcessInfo reply ends before the length of %s", field);
	uint32_t count = nt_le32(r->payload + *pos);
	*pos += 4;
	if (count == 0)
		return 0;
	if (count > (r->len - *pos) / 2)
		return nt_fail(err, NT_EFORMAT, IPC_HEADER_LEN + *pos - 4,
			       "ProcessInfo reply: %s claims %" PRIu32 " characters, %zu bytes "
			       "remain", field, count, r->len - *pos);
	size_t used = nt_utf16z_to_utf8(r->payload + *pos, (size_t)count * 2, out, len);
	if (used == 0)
		return nt_fail(err, NT_EFORMAT, IPC_HEADER_LEN + *pos,
			       "ProcessInfo reply: %s is not NUL-terminated", field);
	*pos += (size_t)count * 2;
	return 0;
}

static int process_info(const char *path, int timeout_ms, nt_diag_info *out, nt_error *err)
{
	memset(out, 0, sizeof *out);
	for (int v = 2; v >= 1; v--) {
		msg m;
		reply r;
		m_begin(&m, SET_PROCESS, v == 2 ? PROC_INFO2 : PROC_INFO);
		nt_error e2;
		nt_error_clear(&e2);
		int fd = transact(path, &m, timeout_ms, &r, &e2);
		free(m.p);
		if (fd < 0) {
			if (err && err->code == 0)
				*err = e2;
			return fd;
		}
		close(fd);
		uint32_t hr;
		int rc = check_ok(&r, v == 2 ? "ProcessInfo2" : "ProcessInfo", &hr, &e2);
		if (rc && hr == HR_UNKNOWN_COMMAND && v == 2) {
			free(r.payload);
			continue; /* a runtime before .NET 7: the first version */
		}
		size_t pos = 24;
		if (!rc && r.len < 24)
			rc = nt_fail(&e2, NT_EFORMAT, IPC_HEADER_LEN,
				     "ProcessInfo reply has %zu payload bytes, at least 24 expected",
				     r.len);
		if (!rc) {
			out->ns_pid = nt_le64(r.payload);
			memcpy(out->cookie, r.payload + 8, 16);
			rc = get_str(&r, &pos, out->command_line, sizeof out->command_line,
				     "the command line", &e2);
		}
		if (!rc)
			rc = get_str(&r, &pos, out->os, sizeof out->os, "the OS", &e2);
		if (!rc)
			rc = get_str(&r, &pos, out->arch, sizeof out->arch, "the architecture", &e2);
		if (!rc && v == 2)
			rc = get_str(&r, &pos, out->assembly, sizeof out->assembly,
				     "the entry assembly", &e2);
		if (!rc && v == 2)
			rc = get_str(&r, &pos, out->clr_version, sizeof out->clr_version,
				     "the runtime version", &e2);
		free(r.payload);
		if (rc) {
			if (err && err->code == 0)
				*err = e2;
			return rc;
		}
		out->version = v;
		return 0;
	}
	return nt_fail(err, NT_EINTERNAL, NT_NO_OFFSET, "unreachable");
}

int nt_diag_process_info(const char *path, int timeout_ms, nt_diag_info *out, nt_error *err)
{
	nt_error_clear(err);
	nt_diag_info info;
	if (!out || out->sz < sizeof info || out->sz > 4096)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "nt_diag_process_info: out->sz is not set (NT_INIT)");
	int rc = process_info(path, timeout_ms, &info, err);
	nt_out_store(out, &info, sizeof info, sizeof info);
	return rc;
}

/* ------------------------------------------------------------------ tracing */

/* CollectTracing payloads. v4: buffer, format, ulong rundown keyword, bool stackwalk,
 * providers; v3: buffer, format, bool rundown, bool stackwalk, providers; v2: buffer,
 * format, bool rundown, providers. */
static void collect_payload(msg *m, int cmd, const nt_diag_collect_opts *o)
{
	m_u32(m, o->buffer_mb ? o->buffer_mb : 256);
	m_u32(m, 1); /* nettrace */
	if (cmd == EP_COLLECT4)
		m_u64(m, o->rundown_keyword);
	else
		m_u8(m, o->rundown_keyword ? 1 : 0);
	if (cmd != EP_COLLECT2)
		m_u8(m, o->no_stackwalk ? 0 : 1);
	m_u32(m, (uint32_t)o->nproviders);
	for (size_t i = 0; i < o->nproviders; i++) {
		const nt_diag_provider *p = &o->providers[i];
		m_u64(m, p->keywords);
		m_u32(m, p->level);
		m_str(m, p->name);
		m_str(m, p->arguments);
	}
}

int nt_diag_collect(const char *path, const nt_diag_collect_opts *o, int *fd_out,
		    uint64_t *session_id, nt_error *err)
{
	nt_error_clear(err);
	*fd_out = -1;
	*session_id = 0;
	nt_diag_collect_opts oc;
	int orc = nt_opts_load(&oc, sizeof oc, sizeof oc, o, "collect options", err);
	if (orc)
		return orc;
	o = &oc;
	if (o->nproviders == 0 || o->nproviders > 4096)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "a session needs 1 to 4096 providers");
	for (size_t i = 0; i < o->nproviders; i++)
		if (!o->providers[i].name || !o->providers[i].name[0])
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "provider %zu has no name", i);
	static const int cmds[] = {EP_COLLECT4, EP_COLLECT3, EP_COLLECT2};
	size_t first = o->command == 2 ? 2 : o->command == 3 ? 1 : 0;
	for (size_t c = first; c < sizeof cmds / sizeof cmds[0]; c++) {
		/* a rundown with a keyword other than the default needs CollectTracing4 */
		if (cmds[c] != EP_COLLECT4 && o->rundown_keyword &&
		    o->rundown_keyword != NT_DIAG_RUNDOWN_DEFAULT && c > first)
			break;
		msg m;
		reply r;
		m_begin(&m, SET_EVENTPIPE, (uint8_t)cmds[c]);
		collect_payload(&m, cmds[c], o);
		nt_error e2;
		nt_error_clear(&e2);
		int fd = transact(path, &m, o->timeout_ms, &r, &e2);
		free(m.p);
		if (fd < 0) {
			if (err && err->code == 0)
				*err = e2;
			return fd;
		}
		uint32_t hr;
		static const char *const names[] = {"CollectTracing4", "CollectTracing3",
						    "CollectTracing2"};
		int rc = check_ok(&r, names[c], &hr, &e2);
		if (rc && hr == HR_UNKNOWN_COMMAND && o->command == 0) {
			free(r.payload);
			close(fd);
			continue; /* an older runtime: try the previous version */
		}
		if (!rc && r.len < 8)
			rc = nt_fail(&e2, NT_EFORMAT, IPC_HEADER_LEN,
				     "%s reply has %zu payload bytes, 8 expected", names[c], r.len);
		if (rc) {
			free(r.payload);
			close(fd);
			if (err && err->code == 0)
				*err = e2;
			return rc;
		}
		*session_id = nt_le64(r.payload);
		free(r.payload);
		*fd_out = fd;
		return 0;
	}
	return nt_fail(err, NT_EUNSUPPORTED, NT_NO_OFFSET,
		       "the runtime knows none of CollectTracing2..4");
}

int nt_diag_stop(const char *path, uint64_t session_id, int timeout_ms, nt_error *err)
{
	nt_error_clear(err);
	msg m;
	reply r;
	m_begin(&m, SET_EVENTPIPE, EP_STOP);
	m_u64(&m, session_id);
	int fd = transact(path, &m, timeout_ms, &r, err);
	free(m.p);
	if (fd < 0)
		return fd;
	close(fd);
	uint32_t hr;
	int rc = check_ok(&r, "StopTracing", &hr, err);
	free(r.payload);
	return rc;
}

/* ------------------------------------------------------------------ providers */

void nt_diag_providers_free(nt_diag_providers *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->n; i++) {
		free((char *)ps->v[i].name);
		free((char *)ps->v[i].arguments);
	}
	free(ps->v);
	memset(ps, 0, sizeof *ps);
}

/* Adds one provider, merging with an earlier one of the same name as dotnet-trace does:
 * keywords OR'd, the more verbose level, the later arguments when given. */
static int add_provider(nt_diag_providers *ps, const char *name, size_t nlen, uint64_t kw,
			uint32_t level, const char *args, size_t alen, nt_error *err)
{
	for (size_t i = 0; i < ps->n; i++) {
		nt_diag_provider *p = &ps->v[i];
		if (strlen(p->name) == nlen && strncmp(p->name, name, nlen) == 0) {
			p->keywords |= kw;
			if (level == 0 || p->level == 0)
				p->level = 0; /* LogAlways */
			else if (level > p->level)
				p->level = level;
			if (alen) {
				char *a = strndup(args, alen);
				if (!a)
					return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
				free((char *)p->arguments);
				p->arguments = a;
			}
			return 0;
		}
	}
	if (ps->n >= 4096)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "more than 4096 providers");
	if (nt_grow((void **)&ps->v, &ps->cap, ps->n + 1, sizeof *ps->v))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	nt_diag_provider *p = &ps->v[ps->n];
	p->name = strndup(name, nlen);
	p->arguments = alen ? strndup(args, alen) : NULL;
	p->keywords = kw;
	p->level = level;
	if (!p->name || (alen && !p->arguments)) {
		free((char *)p->name);
		free((char *)p->arguments);
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	}
	ps->n++;
	return 0;
}

static int parse_level(const char *s, size_t n, uint32_t *out)
{
	static const struct { const char *name; uint32_t v; } names[] = {
		{"logalways", 0}, {"critical", 1}, {"error", 2}, {"warning", 3},
		{"informational", 4}, {"verbose", 5},
	};
	if (n == 0) {
		*out = 4;
		return 0;
	}
	if (isdigit((unsigned char)s[0])) {
		uint32_t v = 0;
		for (size_t i = 0; i < n; i++) {
			if (!isdigit((unsigned char)s[i]) || v > 1000)
				return -1;
			v = v * 10 + (uint32_t)(s[i] - '0');
		}
		*out = v > 5 ? 5 : v; /* as dotnet-trace: above Verbose is Verbose */
		return 0;
	}
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i].name) == n && strncasecmp(names[i].name, s, n) == 0) {
			*out = names[i].v;
			return 0;
		}
	return -1;
}

static int parse_keywords(const char *s, size_t n, uint64_t *out)
{
	*out = 0;
	if (n == 0)
		return 0;
	if (n == 1 && s[0] == '*') {
		*out = UINT64_MAX;
		return 0;
	}
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (n > 16)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

int nt_diag_providers_parse(nt_diag_providers *ps, const char *spec, nt_error *err)
{
	nt_error_clear(err);
	const char *p = spec ? spec : "";
	while (*p) {
		/* one provider runs to a ',' outside double quotes */
		const char *e = p;
		int q = 0;
		while (*e && (q || *e != ',')) {
			if (*e == '"')
				q = !q;
			e++;
		}
		if (e == p) {
			p++;
			continue;
		}
		const char *f[4] = {p, NULL, NULL, NULL};
		size_t fl[4] = {0, 0, 0, 0};
		int nf = 1;
		const char *s = p;
		for (const char *c = p; c < e; c++) {
			if (*c == ':' && nf < 4) {
				fl[nf - 1] = (size_t)(c - s);
				f[nf++] = c + 1;
				s = c + 1;
			}
		}
		fl[nf - 1] = (size_t)(e - s);
		size_t off = (size_t)(p - spec);
		if (fl[0] == 0)
			return nt_fail(err, NT_EINVAL, off, "provider name missing in '%.*s'",
				       (int)(e - p), p);
		uint64_t kw = 0;
		uint32_t level = 4;
		if (nf > 1 && parse_keywords(f[1], fl[1], &kw))
			return nt_fail(err, NT_EINVAL, off,
				       "bad keywords '%.*s' in '%.*s' (hexadecimal, e.g. 0x1F)",
				       (int)fl[1], f[1], (int)(e - p), p);
		if (nf > 2 && parse_level(f[2], fl[2], &level))
			return nt_fail(err, NT_EINVAL, off,
				       "bad level '%.*s' in '%.*s' (0..5 or critical, error, warning, "
				       "informational, verbose, logalways)",
				       (int)fl[2], f[2], (int)(e - p), p);
		int rc = add_provider(ps, f[0], fl[0], kw, level, nf > 3 ? f[3] : NULL,
				      nf > 3 ? fl[3] : 0, err);
		if (rc)
			return rc;
		p = *e ? e + 1 : e;
	}
	return 0;
}

/* dotnet-trace's profiles (its list-profiles), plus aliases. Keywords of the runtime
 * provider: 0x14C14FCCBD is TraceEvent's ClrTraceEventParser.Keywords.Default. */
static const struct profile {
	const char *name, *alias, *providers, *description;
	uint64_t rundown;
} PROFILES[] = {
	{"cpu-sampling", "cpu",
	 "Microsoft-DotNETCore-SampleProfiler:0:4,Microsoft-Windows-DotNETRuntime:0x14C14FCCBD:4",
	 "CPU samples and the runtime's default events (dotnet-trace's default)",
	 NT_DIAG_RUNDOWN_DEFAULT},
	{"dotnet-sampled-thread-time", "thread-time", "Microsoft-DotNETCore-SampleProfiler:0:4",
	 "thread stacks sampled by the runtime's sampler only", NT_DIAG_RUNDOWN_DEFAULT},
	{"dotnet-common", NULL, "Microsoft-Windows-DotNETRuntime:0x100003801D:4",
	 "GC, loader, JIT, exceptions, threading and compilation events",
	 NT_DIAG_RUNDOWN_DEFAULT},
	{"gc-verbose", "gc", "Microsoft-Windows-DotNETRuntime:0x8003:5",
	 "GC collections and allocation samples (GC, GCHandle and Exception keywords, "
	 "verbose)", NT_DIAG_RUNDOWN_DEFAULT},
	{"gc-collect", NULL,
	 "Microsoft-Windows-DotNETRuntime:0x1:4,Microsoft-Windows-DotNETRuntimePrivate:0x1:4",
	 "GC collections only, at very low overhead (rundown of GC settings only)", 0x1},
	{"contention", "lock",
	 "Microsoft-DotNETCore-SampleProfiler:0:4,Microsoft-Windows-DotNETRuntime:0x4000:4",
	 "CPU samples and lock contention events (not a dotnet-trace profile)",
	 NT_DIAG_RUNDOWN_DEFAULT},
	{"database", NULL,
	 "System.Threading.Tasks.TplEventSource:0x80:4,"
	 "Microsoft-Diagnostics-DiagnosticSource:0x3:5",
	 "TPL activity flow and DiagnosticSource events (dotnet-trace's database profile "
	 "without its payload filter)", NT_DIAG_RUNDOWN_DEFAULT},
};

const char *nt_diag_profile_at(size_t i, const char **alias, const char **providers,
			       const char **description)
{
	if (i >= sizeof PROFILES / sizeof PROFILES[0])
		return NULL;
	if (alias)
		*alias = PROFILES[i].alias;
	if (providers)
		*providers = PROFILES[i].providers;
	if (description)
		*description = PROFILES[i].description;
	return PROFILES[i].name;
}

int nt_diag_providers_profile(nt_diag_providers *ps, const char *name, uint64_t *rundown,
			      nt_error *err)
{
	nt_error_clear(err);
	for (size_t i = 0; i < sizeof PROFILES / sizeof PROFILES[0]; i++) {
		const struct profile *p = &PROFILES[i];
		if (strcmp(name, p->name) == 0 || (p->alias && strcmp(name, p->alias) == 0)) {
			if (rundown)
				*rundown = p->rundown;
			return nt_diag_providers_parse(ps, p->providers, err);
		}
	}
	return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "unknown profile '%s'", name);
}
