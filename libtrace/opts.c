/* SPDX-License-Identifier: MIT */
/* opts.c - the API's contracts for caller-sized structs: the one check of the caller's
 * options (nt_opts_load()), the one way to fill the caller's output structs
 * (nt_out_store()), and nt_version(). Every public function that takes options copies
 * them through nt_opts_load(), so all of them accept the same sizes and reject the same
 * mistakes.
 *
 * An options struct starts with "size_t sz", the sizeof the struct the caller was compiled
 * with. A caller built against an older header passes a smaller sz: the fields it does not
 * know read as zero, which means "default" in every options struct. A sz below the size of
 * the struct's first released version is a caller that did not set sz (or garbage) and is
 * rejected. A caller built against a newer header passes a larger sz: the tail this library
 * does not know is accepted only when it is all zero bytes (a newer option left at its
 * default); a non-zero tail asks for something this library cannot do and is rejected rather
 * than silently ignored. */
#include "internal.h"

/* Larger sz values are not a struct anyone compiled: a pointer to something else. */
#define NT_OPTS_MAX_SIZE 4096u

int nt_opts_load(void *dst, size_t dst_sz, size_t min_sz, const void *src, const char *what,
		 nt_error *err)
{
	memset(dst, 0, dst_sz);
	size_t sz = dst_sz;
	if (src) {
		memcpy(&sz, src, sizeof sz);
		if (sz < min_sz || sz < sizeof(size_t))
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
				       "%s: sz is %zu, expected at least %zu (initialise the struct "
				       "with NT_INIT)", what, sz, min_sz);
		if (sz > NT_OPTS_MAX_SIZE)
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
				       "%s: sz is %zu, not the size of an options struct", what, sz);
		const unsigned char *tail = (const unsigned char *)src;
		for (size_t i = dst_sz; i < sz; i++)
			if (tail[i])
				return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
					       "%s: sz is %zu and byte %zu is set, but this library "
					       "knows %zu bytes of it (built for a newer libnettrace?)",
					       what, sz, i, dst_sz);
		memcpy(dst, src, sz < dst_sz ? sz : dst_sz);
	}
	memcpy(dst, &dst_sz, sizeof dst_sz);
	return 0;
}

const char *nt_version(void)
{
	return PACKAGE_VERSION;
}

int nt_out_store(void *out, const void *val, size_t lib_sz, size_t min_sz)
{
	size_t sz;
	memcpy(&sz, out, sizeof sz);
	if (sz < min_sz || sz < sizeof(size_t) || sz > NT_OPTS_MAX_SIZE)
		return -1;
	memcpy(out, val, sz < lib_sz ? sz : lib_sz);
	memcpy(out, &sz, sizeof sz);
	return 0;
}
