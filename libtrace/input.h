/* SPDX-License-Identifier: MIT */
/* input.h - buffered byte input from a file descriptor or memory, with a contiguous
 * look-ahead window ("peek n bytes") so decoders see whole blocks. */
#ifndef NT_INPUT_H
#define NT_INPUT_H
#include "internal.h"

typedef struct nt_input {
	int fd;              /* -1 in memory mode */
	int own_fd;          /* close fd on free */
	const uint8_t *mem;  /* memory mode: the whole input */
	size_t memlen;
	uint8_t *buf;        /* fd mode: window buffer */
	size_t cap;
	size_t start, end;   /* window [start, end) of buf holds unconsumed bytes */
	uint64_t offset;     /* file offset of the first unconsumed byte */
	uint64_t known_size; /* regular file size, or UINT64_MAX when unknown (pipe) */
	int eof;             /* fd mode: read() returned 0 */
} nt_input;

void nt_in_init_mem(nt_input *in, const void *p, size_t len);
int nt_in_init_fd(nt_input *in, int fd, int own, nt_error *err);
void nt_in_free(nt_input *in);

/* Makes n bytes available at the current position. Returns 0 with *p set, 1 when the
 * input ends first (*avail = bytes available), < 0 on read error. n is capped by the
 * caller (NT_MAX_BLOCK_SIZE); the buffer only grows as data really arrives. */
int nt_in_peek(nt_input *in, size_t n, const uint8_t **p, size_t *avail, nt_error *err);
void nt_in_consume(nt_input *in, size_t n);
/* Bytes seen so far: consumed plus read ahead; after a truncated end, the input size. */
uint64_t nt_in_seen(const nt_input *in);
/* Bytes that may remain (UINT64_MAX if unknown). */
uint64_t nt_in_remaining_hint(const nt_input *in);
#endif
