/* SPDX-License-Identifier: MIT */
/* input.h - buffered byte input from a file descriptor or memory, with a contiguous
 * look-ahead window ("peek n bytes") so decoders see whole blocks. */
#ifndef NT_INPUT_H
#define NT_INPUT_H
#include "internal.h"

#include <zlib.h>

/* Compression of the input, detected by content (not by name). */
enum { NT_Z_NONE = 0, NT_Z_GZIP, NT_Z_ZIP_DEFLATE, NT_Z_ZIP_STORED };

typedef struct nt_input {
	int direct;          /* 1: zero-copy memory mode (mem, memlen); 0: buffered */
	int fd;              /* buffered mode: the source descriptor, or -1 for mem */
	int own_fd;          /* close fd on free */
	const uint8_t *mem;  /* memory mode: the whole input */
	size_t memlen;
	uint8_t *buf;        /* fd mode: window buffer */
	size_t cap;
	size_t start, end;   /* window [start, end) of buf holds unconsumed bytes */
	uint64_t offset;     /* file offset of the first unconsumed byte */
	uint64_t known_size; /* regular file size, or UINT64_MAX when unknown (pipe) */
	int64_t start_pos;   /* a regular file's offset when reading began, else -1 */
	int eof;             /* buffered mode: the source (after decompression) ended */
	/* decompression (buffered mode only) */
	int z;               /* NT_Z_* */
	int z_init;          /* zs is initialised */
	z_stream zs;
	uint8_t *zbuf;       /* compressed bytes read from the source */
	size_t zcap;
	size_t mem_pos;      /* buffered memory source: next compressed byte */
	int src_eof;         /* the compressed source ended */
	int z_done;          /* the compressed stream ended (Z_STREAM_END, or stored size) */
	uint64_t z_in;       /* compressed bytes consumed (for error offsets) */
	uint64_t stored_left; /* NT_Z_ZIP_STORED: bytes of the entry not yet copied */
} nt_input;

void nt_in_init_mem(nt_input *in, const void *p, size_t len);
int nt_in_init_fd(nt_input *in, int fd, int own, nt_error *err);
void nt_in_free(nt_input *in);
/* Detects gzip or zip by the first bytes and switches to decompression; must be called
 * before the first peek. Returns 0 or < 0 (unsupported zip entry, zlib failure). */
int nt_in_detect(nt_input *in, nt_error *err);
/* "", " (gzip)" or " (zip)": for messages. */
const char *nt_in_kind(const nt_input *in);

/* Makes n bytes available at the current position. Returns 0 with *p set, 1 when the
 * input ends first (*avail = bytes available), < 0 on read error. n is capped by the
 * caller (NT_MAX_BLOCK_SIZE); the buffer only grows as data really arrives. */
int nt_in_peek(nt_input *in, size_t n, const uint8_t **p, size_t *avail, nt_error *err);
void nt_in_consume(nt_input *in, size_t n);
/* Passes n bytes without reading them where it can (memory; a regular file, by seeking
 * past what is not buffered yet); the input may end first. Returns 0, 1 when it ended
 * before n bytes, < 0 on a read error. */
int nt_in_skip(nt_input *in, uint64_t n, nt_error *err);
/* Bytes seen so far: consumed plus read ahead; after a truncated end, the input size. */
uint64_t nt_in_seen(const nt_input *in);
/* Bytes that may remain (UINT64_MAX if unknown). */
uint64_t nt_in_remaining_hint(const nt_input *in);
#endif
