/* SPDX-License-Identifier: MIT */
/* input.c - buffered input for the reader: a file descriptor (file, pipe, stdin) or a
 * memory buffer, exposed as a window of contiguous bytes. Memory mode is zero-copy.
 * Not here: any interpretation of the bytes (reader.c). */
#include "input.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (1u << 20)

void nt_in_init_mem(nt_input *in, const void *p, size_t len)
{
	memset(in, 0, sizeof *in);
	in->fd = -1;
	in->mem = p;
	in->memlen = len;
	in->known_size = len;
}

int nt_in_init_fd(nt_input *in, int fd, int own, nt_error *err)
{
	struct stat st;
	memset(in, 0, sizeof *in);
	in->fd = fd;
	in->own_fd = own;
	in->known_size = UINT64_MAX;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t pos = lseek(fd, 0, SEEK_CUR);
		in->known_size = (uint64_t)st.st_size - (pos > 0 ? (uint64_t)pos : 0);
	}
	in->cap = READ_CHUNK;
	in->buf = malloc(in->cap);
	if (!in->buf)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate %zu byte read buffer",
			       in->cap);
	return 0;
}

void nt_in_free(nt_input *in)
{
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	free(in->buf);
	in->buf = NULL;
}

uint64_t nt_in_seen(const nt_input *in)
{
	if (in->fd < 0)
		return in->memlen;
	return in->offset + (in->end - in->start);
}

uint64_t nt_in_remaining_hint(const nt_input *in)
{
	if (in->fd < 0)
		return in->memlen - in->offset;
	if (in->known_size == UINT64_MAX)
		return UINT64_MAX;
	return in->known_size > in->offset ? in->known_size - in->offset : 0;
}

int nt_in_peek(nt_input *in, size_t n, const uint8_t **p, size_t *avail, nt_error *err)
{
	if (in->fd < 0) {
		size_t left = in->memlen - (size_t)in->offset;
		*p = in->mem + in->offset;
		if (left < n) {
			*avail = left;
			return 1;
		}
		*avail = n;
		return 0;
	}
	while (in->end - in->start < n) {
		if (in->eof) {
			*p = in->buf + in->start;
			*avail = in->end - in->start;
			return 1;
		}
		/* Make room: slide the window to the front, grow if n does not fit. */
		if (in->start > 0 && (in->cap - in->end < READ_CHUNK || in->cap - in->start < n)) {
			memmove(in->buf, in->buf + in->start, in->end - in->start);
			in->end -= in->start;
			in->start = 0;
		}
		if (in->cap - in->end < READ_CHUNK && in->cap < n + READ_CHUNK) {
			/* Grow by doubling as data arrives, not to n at once: n comes from a size
			 * field in the stream, and a pipe that claims a 64 MiB block but ends
			 * after a few bytes must not cost 64 MiB. */
			size_t ncap = in->cap;
			size_t want = in->cap <= (n + READ_CHUNK) / 2 ? in->cap * 2 : n + READ_CHUNK;
			if (nt_grow((void **)&in->buf, &ncap, want, 1))
				return nt_fail(err, NT_ENOMEM, in->offset,
					       "cannot grow read buffer to %zu bytes", n);
			in->cap = ncap;
		}
		size_t want = in->cap - in->end;
		ssize_t r = read(in->fd, in->buf + in->end, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			nt_fail_errno(err, e, "read failed");
			if (err)
				err->offset = in->offset;
			return NT_EIO;
		}
		if (r == 0)
			in->eof = 1;
		in->end += (size_t)r;
	}
	*p = in->buf + in->start;
	*avail = n;
	return 0;
}

void nt_in_consume(nt_input *in, size_t n)
{
	if (in->fd < 0) {
		NT_ASSERT(n <= in->memlen - in->offset);
	} else {
		NT_ASSERT(n <= in->end - in->start);
		in->start += n;
		if (in->start == in->end)
			in->start = in->end = 0;
	}
	in->offset += n;
}
