/* SPDX-License-Identifier: MIT */
/* error.c - error reporting (nt_error) and the allocation helpers every module needs
 * (growable arrays, nt_strdup, a path's base name, which CLR provider wrote an event).
 * Not here: the id hash map (hash.c), UTF-16 (utf16.c),
 * SYSTEMTIME (systime.c). */
#include "internal.h"

#include <errno.h>
#include <stdio.h>

const char *nt_strerror(int code)
{
	switch (code) {
	case NT_OK: return "success";
	case NT_EFORMAT: return "malformed input";
	case NT_ETRUNC: return "truncated input";
	case NT_EUNSUPPORTED: return "unsupported input";
	case NT_EIO: return "input/output error";
	case NT_ENOMEM: return "out of memory";
	case NT_EINVAL: return "invalid argument";
	case NT_ELIMIT: return "size limit exceeded";
	case NT_ESQL: return "SQLite error";
	case NT_EINTERNAL: return "internal error";
	default: return "unknown error";
	}
}

void nt_error_clear(nt_error *err)
{
	nt_err_clear(err);
}

int nt_fail(nt_error *err, int code, uint64_t offset, const char *fmt, ...)
{
	/* The first failure wins: outer layers must not overwrite the root cause. */
	if (err && err->code == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->code = code;
		err->sys_errno = 0;
		err->offset = offset;
	}
	return code;
}

int nt_fail_errno(nt_error *err, int sys_errno, const char *fmt, ...)
{
	if (err && err->code == 0) {
		char tmp[200];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(tmp, sizeof tmp, fmt, ap);
		va_end(ap);
		snprintf(err->msg, sizeof err->msg, "%s: %s", tmp, strerror(sys_errno));
		err->code = sys_errno == ENOMEM ? NT_ENOMEM : NT_EIO;
		err->sys_errno = sys_errno;
		err->offset = NT_NO_OFFSET;
	}
	return sys_errno == ENOMEM ? NT_ENOMEM : NT_EIO;
}

int nt_grow(void **pp, size_t *cap, size_t need, size_t esz)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	size_t bytes;
	if (nt_mul_size(ncap, esz, &bytes))
		return -1;
	void *np = realloc(*pp, bytes);
	if (!np)
		return -1;
	*pp = np;
	*cap = ncap;
	return 0;
}

char *nt_strdup(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

const char *nt_path_base(const char *path)
{
	const char *b = path;
	for (const char *q = path; *q; q++)
		if (*q == '/' || *q == '\\')
			b = q + 1;
	return b;
}

int nt_clr_provider(const nt_metadata *m)
{
	if (!m || !m->provider)
		return 0;
	if (strcmp(m->provider, NT_PROVIDER_RUNTIME) == 0)
		return NT_CLR_RUNTIME;
	return strcmp(m->provider, NT_PROVIDER_RUNDOWN) == 0 ? NT_CLR_RUNDOWN : 0;
}
