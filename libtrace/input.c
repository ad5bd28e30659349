/* SPDX-License-Identifier: MIT */
/* input.c - buffered input for the reader: a file descriptor (file, pipe, stdin) or a
 * memory buffer, exposed as a window of contiguous bytes. Memory mode is zero-copy.
 * Compressed input (gzip, or a .zip archive's first entry) is detected by its magic bytes
 * and inflated on the fly with zlib, still streaming (no temporary file); byte offsets in
 * messages then count decompressed bytes, except zlib errors, which name the compressed
 * offset. Not here: any interpretation of the bytes (reader.c). */
#include "input.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (1u << 20)

void nt_in_init_mem(nt_input *in, const void *p, size_t len)
{
	memset(in, 0, sizeof *in);
	in->direct = 1;
	in->fd = -1;
	in->mem = p;
	in->memlen = len;
	in->known_size = len;
	in->start_pos = -1;
}

int nt_in_init_fd(nt_input *in, int fd, int own, nt_error *err)
{
	struct stat st;
	memset(in, 0, sizeof *in);
	in->fd = fd;
	in->own_fd = own;
	in->known_size = UINT64_MAX;
	in->start_pos = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t pos = lseek(fd, 0, SEEK_CUR);
		in->known_size = (uint64_t)st.st_size - (pos > 0 ? (uint64_t)pos : 0);
		in->start_pos = pos >= 0 ? (int64_t)pos : -1;
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
	if (in->z_init)
		inflateEnd(&in->zs);
	in->z_init = 0;
	free(in->buf);
	free(in->zbuf);
	in->buf = NULL;
	in->zbuf = NULL;
}

const char *nt_in_kind(const nt_input *in)
{
	return in->z == NT_Z_GZIP ? " (gzip)" : in->z ? " (zip)" : "";
}

/* Reads up to n raw (compressed) bytes from the source into dst. Returns the count, 0 at
 * its end, < 0 on error. */
static ssize_t src_read(nt_input *in, uint8_t *dst, size_t n, nt_error *err)
{
	if (in->fd < 0) {
		size_t left = in->memlen - in->mem_pos;
		if (n > left)
			n = left;
		memcpy(dst, in->mem + in->mem_pos, n);
		in->mem_pos += n;
		return (ssize_t)n;
	}
	for (;;) {
		ssize_t r = read(in->fd, dst, n);
		if (r >= 0)
			return r;
		if (errno == EINTR)
			continue;
		nt_fail_errno(err, errno, "read failed");
		return NT_EIO;
	}
}

/* Reads exactly n raw bytes (fewer only at the end of the source). */
static ssize_t src_read_full(nt_input *in, uint8_t *dst, size_t n, nt_error *err)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = src_read(in, dst + got, n - got, err);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

#define ZCHUNK (256u << 10)

int nt_in_detect(nt_input *in, nt_error *err)
{
	uint8_t head[30];
	ssize_t n;
	if (in->direct) {
		if (in->memlen < 2 || !((in->mem[0] == 0x1f && in->mem[1] == 0x8b) ||
					(in->memlen >= 4 && nt_le32(in->mem) == 0x04034b50)))
			return 0;
		/* compressed memory input: switch to buffered mode over the memory source */
		in->direct = 0;
		in->known_size = UINT64_MAX;
		in->cap = READ_CHUNK;
		in->buf = malloc(in->cap);
		if (!in->buf)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate read buffer");
		n = src_read_full(in, head, in->memlen < 30 ? in->memlen : 30, err);
	} else {
		n = src_read_full(in, head, 30, err);
	}
	if (n < 0)
		return (int)n;
	in->zbuf = malloc(ZCHUNK);
	if (!in->zbuf)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate inflate buffer");
	in->zcap = ZCHUNK;
	size_t keep = (size_t)n; /* head bytes that belong to the compressed stream */
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
		in->z = NT_Z_GZIP;
	} else if (n >= 30 && nt_le32(head) == 0x04034b50) {
		uint16_t flags = nt_le16(head + 6), method = nt_le16(head + 8);
		uint32_t csize = nt_le32(head + 18);
		size_t extra = (size_t)nt_le16(head + 26) + nt_le16(head + 28);
		if (flags & 1)
			return nt_fail(err, NT_EUNSUPPORTED, 6,
				       "encrypted .zip archive: extract the .nettrace file first "
				       "(unzip ARCHIVE)");
		if (method == 8)
			in->z = NT_Z_ZIP_DEFLATE;
		else if (method == 0 && !(flags & 8))
			in->z = NT_Z_ZIP_STORED;
		else
			return nt_fail(err, NT_EUNSUPPORTED, 8,
				       ".zip entry compression method %u is not supported: extract "
				       "the .nettrace file first (unzip ARCHIVE)",
				       method);
		in->stored_left = csize;
		/* skip the file name and extra field that follow the 30-byte header */
		while (extra > 0) {
			uint8_t tmp[256];
			size_t k = extra < sizeof tmp ? extra : sizeof tmp;
			ssize_t r = src_read_full(in, tmp, k, err);
			if (r < 0)
				return (int)r;
			if ((size_t)r < k)
				return nt_fail(err, NT_ETRUNC, 30, "file ends inside a .zip local header");
			extra -= k;
		}
		in->z_in = 30 + (uint64_t)nt_le16(head + 26) + nt_le16(head + 28);
		keep = 0;
	} else {
		/* not compressed: the head bytes are the first bytes of the trace */
		free(in->zbuf);
		in->zbuf = NULL;
		memcpy(in->buf, head, (size_t)n);
		in->end = (size_t)n;
		if (n < 30)
			in->eof = 1;
		return 0;
	}
	in->known_size = UINT64_MAX;
	if (in->z != NT_Z_ZIP_STORED) {
		memset(&in->zs, 0, sizeof in->zs);
		int zr = inflateInit2(&in->zs, in->z == NT_Z_GZIP ? 16 + 15 : -15);
		if (zr != Z_OK)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot initialise zlib (%d)", zr);
		in->z_init = 1;
	}
	memcpy(in->zbuf, head, keep);
	in->zs.next_in = in->zbuf;
	in->zs.avail_in = (uInt)keep;
	if (in->z == NT_Z_ZIP_STORED) {
		in->zs.avail_in = 0;
	}
	return 0;
}

/* Fills dst with up to n decompressed bytes. Returns the count, 0 at the end, < 0 on
 * error (a corrupt stream names its compressed offset). */
static ssize_t z_read(nt_input *in, uint8_t *dst, size_t n, nt_error *err)
{
	if (in->z_done)
		return 0;
	if (in->z == NT_Z_ZIP_STORED) {
		if (in->stored_left == 0) {
			in->z_done = 1;
			return 0;
		}
		if (n > in->stored_left)
			n = (size_t)in->stored_left;
		ssize_t r = src_read(in, dst, n, err);
		if (r > 0) {
			in->stored_left -= (uint64_t)r;
			in->z_in += (uint64_t)r;
		}
		return r;
	}
	in->zs.next_out = dst;
	in->zs.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
	while (in->zs.avail_out > 0) {
		if (in->zs.avail_in == 0 && !in->src_eof) {
			ssize_t r = src_read(in, in->zbuf, in->zcap, err);
			if (r < 0)
				return r;
			if (r == 0)
				in->src_eof = 1;
			in->zs.next_in = in->zbuf;
			in->zs.avail_in = (uInt)r;
		}
		uInt before_in = in->zs.avail_in;
		int zr = inflate(&in->zs, Z_NO_FLUSH);
		in->z_in += before_in - in->zs.avail_in;
		if (zr == Z_STREAM_END) {
			/* gzip files may hold several members: continue with the next one */
			if (in->z == NT_Z_GZIP && (in->zs.avail_in > 0 || !in->src_eof)) {
				if (in->zs.avail_in == 0) {
					ssize_t r = src_read(in, in->zbuf, in->zcap, err);
					if (r < 0)
						return r;
					if (r == 0) {
						in->src_eof = 1;
						in->z_done = 1;
						break;
					}
					in->zs.next_in = in->zbuf;
					in->zs.avail_in = (uInt)r;
				}
				inflateReset(&in->zs);
				continue;
			}
			in->z_done = 1;
			break;
		}
		if (zr == Z_BUF_ERROR && in->src_eof && in->zs.avail_in == 0) {
			/* the compressed stream is cut short: what was inflated is all there is;
			 * the reader reports the truncation of the trace it finds */
			in->z_done = 1;
			break;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			uint64_t at = in->z_in;
			return nt_fail(err, NT_EFORMAT, at, "corrupt %s stream at compressed byte %" PRIu64
				       ": %s", in->z == NT_Z_GZIP ? "gzip" : "zip deflate", at,
				       in->zs.msg ? in->zs.msg : "inflate failed");
		}
	}
	return (ssize_t)(n - in->zs.avail_out);
}

uint64_t nt_in_seen(const nt_input *in)
{
	if (in->direct)
		return in->memlen;
	return in->offset + (in->end - in->start);
}

uint64_t nt_in_remaining_hint(const nt_input *in)
{
	if (in->direct)
		return in->memlen - in->offset;
	if (in->known_size == UINT64_MAX)
		return UINT64_MAX;
	return in->known_size > in->offset ? in->known_size - in->offset : 0;
}

int nt_in_peek(nt_input *in, size_t n, const uint8_t **p, size_t *avail, nt_error *err)
{
	if (in->direct) {
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
		ssize_t r;
		if (in->z) {
			r = z_read(in, in->buf + in->end, want, err);
			if (r < 0)
				return (int)r;
		} else {
			r = read(in->fd, in->buf + in->end, want);
			if (r < 0) {
				if (errno == EINTR)
					continue;
				int e = errno;
				nt_fail_errno(err, e, "read failed");
				if (err)
					err->offset = in->offset;
				return NT_EIO;
			}
		}
		if (r == 0)
			in->eof = 1;
		in->end += (size_t)r;
	}
	*p = in->buf + in->start;
	*avail = n;
	return 0;
}

int nt_in_skip(nt_input *in, uint64_t n, nt_error *err)
{
	if (in->direct) {
		uint64_t left = in->memlen - in->offset;
		in->offset += n < left ? n : left;
		return n > left;
	}
	size_t have = in->end - in->start;
	if (n <= have) {
		nt_in_consume(in, (size_t)n);
		return 0;
	}
	uint64_t rest = n - have;
	in->start = in->end = 0;
	in->offset += have;
	if (!in->z && in->start_pos >= 0 && in->known_size != UINT64_MAX &&
	    rest <= in->known_size - (in->offset < in->known_size ? in->offset : in->known_size) &&
	    rest <= (uint64_t)INT64_MAX && lseek(in->fd, (off_t)rest, SEEK_CUR) >= 0) {
		in->offset += rest;
		return 0;
	}
	/* read and drop: a pipe, or a file that ends first */
	while (rest) {
		const uint8_t *p;
		size_t avail, want = rest < READ_CHUNK ? (size_t)rest : READ_CHUNK;
		int rc = nt_in_peek(in, want, &p, &avail, err);
		if (rc < 0)
			return rc;
		size_t got = rc == 1 ? avail : want;
		nt_in_consume(in, got);
		rest -= got;
		if (rc == 1)
			return 1;
	}
	return 0;
}

void nt_in_consume(nt_input *in, size_t n)
{
	if (in->direct) {
		NT_ASSERT(n <= in->memlen - in->offset);
	} else {
		NT_ASSERT(n <= in->end - in->start);
		in->start += n;
		if (in->start == in->end)
			in->start = in->end = 0;
	}
	in->offset += n;
}
