/* SPDX-License-Identifier: MIT */
/* gen-corrupt.c - writes the rejected-input corpus: deterministic corrupt, truncated and
 * hand-built nettrace files derived from two real traces in data/traces/perfview/
 * (the 582-byte executioncheckpoints file, annotated byte by byte in spec §2.5, and
 * mixed_managed_external_samples) plus synthetic V4/V6 streams built with tests/ntbuild.h.
 * Files are generated at test time into the build tree (the repository keeps only this
 * generator and the small reproducers in tests/corpus/regress/).
 *
 * The name prefix says what the reader must do with a file (tests/e2e/t900-reject-corpus.sh):
 *   ok-     read to the end without error or truncation warning
 *   trunc-  read without error, report truncation (every complete event delivered)
 *   bad-    fail with a format/truncation/limit/unsupported error naming a byte offset
 *   any-    either (byte flips that may still be valid); never crash, hang or blow up
 *
 * Usage: gen-corrupt [-q] DATA_TRACES_DIR OUT_DIR
 * Exit 0, or 1 when an input is missing or not the expected file (every patch checks the
 * bytes it replaces, so a changed input cannot silently produce meaningless cases). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "ntbuild.h"

static const char *outdir;
static int quiet;
static unsigned nfiles;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "gen-corrupt: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die("cannot open %s: %s", path, strerror(errno));
	nbuf b = {NULL, 0, 0};
	uint8_t tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		nb_bytes(&b, tmp, n);
	fclose(f);
	*len = b.len;
	return b.p;
}

static void emit(const char *name, const void *p, size_t len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", outdir, name);
	FILE *f = fopen(path, "wb");
	if (!f || (len && fwrite(p, 1, len, f) != len) || fclose(f) != 0)
		die("cannot write %s: %s", path, strerror(errno));
	nfiles++;
}

static void emitf(const void *p, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void emitf(const void *p, size_t len, const char *fmt, ...)
{
	char name[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	emit(name, p, len);
}

/* Checks that src has `want` at off (so a patch replaces what we think it does). */
static void expect(const uint8_t *src, size_t len, size_t off, const void *want, size_t n)
{
	if (off + n > len || memcmp(src + off, want, n) != 0)
		die("input does not have the expected bytes at offset 0x%zx", off);
}

/* Writes src with n bytes at off replaced by `with` (old bytes checked against `was`). */
static void patch(const char *name, const uint8_t *src, size_t len, size_t off, const void *was,
		  const void *with, size_t n)
{
	expect(src, len, off, was, n);
	uint8_t *c = malloc(len);
	if (!c)
		abort();
	memcpy(c, src, len);
	memcpy(c + off, with, n);
	emit(name, c, len);
	free(c);
}

/* Writes src with `del` bytes at off replaced by `ins` (ins_n bytes). When size_at is not
 * (size_t)-1, the int32 block size there is adjusted so the block stays self-consistent
 * and the reader gets as far as the replaced field. */
static void splice(const char *name, const uint8_t *src, size_t len, size_t off, const void *was,
		   size_t del, const void *ins, size_t ins_n, size_t size_at)
{
	expect(src, len, off, was, del);
	nbuf b = {NULL, 0, 0};
	nb_bytes(&b, src, off);
	nb_bytes(&b, ins, ins_n);
	nb_bytes(&b, src + off + del, len - off - del);
	if (size_at != (size_t)-1)
		nb_set32(&b, size_at, nb_get32(b.p + size_at) + (uint32_t)ins_n - (uint32_t)del);
	emit(name, b.p, b.len);
	nb_free(&b);
}

/* ------------------------------------------------------------------ V4 block walker */

typedef struct blk {
	size_t start;   /* 05 of the object */
	size_t size_at; /* int32 BlockSize */
	size_t content; /* first content byte */
	size_t end;     /* one past the 06 that ends the object */
	char name[64];
} blk;

/* Lists the block objects of a well-formed V4 file (independently of libnettrace).
 * Returns the count; *end_tag gets the offset of the final 01. */
static size_t walk_v4(const uint8_t *p, size_t len, blk *out, size_t max, size_t *end_tag)
{
	size_t off = 0x66, n = 0; /* after "Nettrace", the header string and the Trace object */
	while (off < len && p[off] == 0x05 && n < max) {
		if (off + 16 > len)
			die("walk: object header cut at 0x%zx", off);
		uint32_t nlen = nb_get32(p + off + 11);
		if (nlen == 0 || nlen > 63 || off + 16 + nlen + 4 > len)
			die("walk: bad object at 0x%zx", off);
		blk *b = &out[n++];
		b->start = off;
		memcpy(b->name, p + off + 15, nlen);
		b->name[nlen] = '\0';
		b->size_at = off + 16 + nlen;
		size_t pad = (4 - ((b->size_at + 4) & 3)) & 3;
		b->content = b->size_at + 4 + pad;
		b->end = b->content + nb_get32(p + b->size_at) + 1;
		if (b->end > len || p[b->end - 1] != 0x06)
			die("walk: block at 0x%zx does not end with 06", off);
		off = b->end;
	}
	if (off >= len || p[off] != 0x01)
		die("walk: no end tag at 0x%zx", off);
	*end_tag = off;
	return n;
}

/* ------------------------------------------------------------------ the 582-byte file */

/* Offsets in eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace (spec §2.5). */
enum {
	EC_TRACE = 0x20,       /* 05 05 01 of the Trace object */
	EC_TRACE_VER = 0x23,
	EC_TRACE_NAMELEN = 0x2b,
	EC_TRACE_NAME = 0x2f,
	EC_FREQ = 0x4d,
	EC_PTRSIZE = 0x55,
	EC_TRACE_END = 0x65,
	EC_MB = 0x66,          /* MetadataBlock object */
	EC_MB_VER = 0x69,
	EC_MB_NAMELEN = 0x71,
	EC_MB_NAME = 0x75,
	EC_MB_TYPEEND = 0x82,
	EC_MB_SIZE = 0x83,
	EC_MB_PAD = 0x87,
	EC_MB_HDR = 0x88,
	EC_MB_BLOB = 0x9c,     /* flags c6 */
	EC_MB_SEQ = 0x9d,      /* ff ff ff ff 0f */
	EC_MB_PLEN = 0xb2,     /* 6c */
	EC_MD_ID = 0xb3,       /* metadata id 1 */
	EC_MD_FIELDCOUNT = 0x11b,
	EC_MB_END = 0x11f,
	EC_SB = 0x120,         /* StackBlock object */
	EC_SB_SIZE = 0x13a,
	EC_SB_FIRST = 0x140,
	EC_SB_COUNT = 0x144,
	EC_SB_STACK0 = 0x148,
	EC_EB = 0x14d,         /* EventBlock object */
	EC_EB_NAME = 0x15c,
	EC_EB_SIZE = 0x167,
	EC_EB_HDR = 0x16c,
	EC_EV1 = 0x180,        /* cf 01 00 98c401 ... */
	EC_EV1_META = 0x181,
	EC_EV1_STACK = 0x18e,
	EC_EV1_TS = 0x18f,
	EC_EV1_PLEN = 0x196,
	EC_EV2 = 0x1b9,
	EC_EV3 = 0x1e5,
	EC_EB_END = 0x20f,
	EC_SP = 0x210,         /* SPBlock object */
	EC_SP_SIZE = 0x227,
	EC_SP_COUNT = 0x234,
	EC_SP_END = 0x244,
	EC_ENDTAG = 0x245,
	EC_LEN = 0x246,
};

static void gen_ec(const uint8_t *ec, size_t len)
{
	static const uint8_t ff4[4] = {0xff, 0xff, 0xff, 0xff};
	if (len != EC_LEN)
		die("executioncheckpoints file is %zu bytes, expected %d", len, EC_LEN);
	expect(ec, len, EC_MB_BLOB, "\xc6\xff\xff\xff\xff\x0f", 6);
	expect(ec, len, EC_EV1, "\xcf\x01\x00\x98\xc4\x01", 6);
	expect(ec, len, EC_ENDTAG - 1, "\x06\x01", 2);

	emit("ok-ec.nettrace", ec, len);

	/* Truncation at every byte: prefixes cut at an object boundary are "trunc-" (all
	 * complete blocks are delivered); a prefix inside the stream header, the Trace object
	 * or an object header fails as truncated; a cut inside a block's content is trunc-. */
	for (size_t n = 0; n < len; n++) {
		const char *kind = n < EC_MB ? "bad" : "trunc";
		emitf(ec, n, "%s-ec-cut-%04zu.nettrace", kind, n);
	}

	/* Flip every byte (XOR 0xff) and every low bit: must never crash. */
	for (size_t off = 0; off < len; off++) {
		uint8_t *c = malloc(len);
		memcpy(c, ec, len);
		c[off] ^= 0xff;
		emitf(c, len, "any-ec-flipff-%04zu.nettrace", off);
		c[off] ^= 0xfe;
		emitf(c, len, "any-ec-flip01-%04zu.nettrace", off);
		free(c);
	}

	/* Stream header and Trace object. */
	patch("bad-ec-magic.nettrace", ec, len, 0, "Nettrace", "Nettracf", 8);
	patch("bad-ec-fastser-len.nettrace", ec, len, 8, "\x14\x00\x00\x00", "\x15\x00\x00\x00", 4);
	patch("bad-ec-fastser-name.nettrace", ec, len, 0x0c, "!Fast", "!Slow", 5);
	patch("bad-ec-v6-major7.nettrace", ec, len, 8, "\x14\x00\x00\x00\x21\x46\x61\x73",
	      "\x00\x00\x00\x00\x07\x00\x00\x00", 8);
	patch("bad-ec-trace-tag.nettrace", ec, len, EC_TRACE, "\x05\x05\x01", "\x04\x05\x01", 3);
	patch("bad-ec-trace-version5.nettrace", ec, len, EC_TRACE_VER, "\x04", "\x05", 1);
	patch("bad-ec-trace-name.nettrace", ec, len, EC_TRACE_NAME, "Trace", "Trade", 5);
	patch("bad-ec-trace-namelen0.nettrace", ec, len, EC_TRACE_NAMELEN, "\x05\x00\x00\x00",
	      "\x00\x00\x00\x00", 4);
	patch("bad-ec-trace-namelen-huge.nettrace", ec, len, EC_TRACE_NAMELEN, "\x05\x00\x00\x00",
	      ff4, 4);
	patch("bad-ec-trace-endtag.nettrace", ec, len, EC_TRACE_END, "\x06", "\x07", 1);
	patch("bad-ec-qpc-zero.nettrace", ec, len, EC_FREQ, "\x80\x96\x98\x00", "\0\0\0\0", 4);
	patch("bad-ec-ptrsize3.nettrace", ec, len, EC_PTRSIZE, "\x08", "\x03", 1);

	/* Block object framing. */
	patch("bad-ec-mb-tag.nettrace", ec, len, EC_MB, "\x05\x05\x01", "\x05\x05\x02", 3);
	patch("bad-ec-mb-version3.nettrace", ec, len, EC_MB_VER, "\x02", "\x03", 1);
	patch("bad-ec-mb-name.nettrace", ec, len, EC_MB_NAME, "Metadata", "Metadate", 8);
	patch("bad-ec-mb-name-ctrl.nettrace", ec, len, EC_MB_NAME + 4, "d", "\x7f", 1);
	patch("bad-ec-mb-namelen64.nettrace", ec, len, EC_MB_NAMELEN, "\x0d", "\x40", 1);
	patch("bad-ec-mb-typeend.nettrace", ec, len, EC_MB_TYPEEND, "\x06", "\x05", 1);
	patch("bad-ec-mb-size-huge.nettrace", ec, len, EC_MB_SIZE, "\x97\x00\x00\x00", ff4, 4);
	patch("bad-ec-mb-size-64m.nettrace", ec, len, EC_MB_SIZE, "\x97\x00\x00\x00",
	      "\x01\x00\x00\x04", 4);
	patch("trunc-ec-mb-size-big.nettrace", ec, len, EC_MB_SIZE, "\x97\x00\x00\x00",
	      "\x00\x00\x01\x00", 4);
	patch("bad-ec-mb-size-small.nettrace", ec, len, EC_MB_SIZE, "\x97", "\x96", 1);
	patch("bad-ec-mb-pad.nettrace", ec, len, EC_MB_PAD, "\x00", "\x01", 1);
	patch("bad-ec-mb-hdrsize19.nettrace", ec, len, EC_MB_HDR, "\x14\x00", "\x13\x00", 2);
	patch("bad-ec-mb-hdrsize-huge.nettrace", ec, len, EC_MB_HDR, "\x14\x00", "\xff\xff", 2);
	patch("bad-ec-mb-endtag.nettrace", ec, len, EC_MB_END, "\x06", "\x07", 1);
	patch("bad-ec-endtag.nettrace", ec, len, EC_ENDTAG, "\x01", "\x02", 1);
	patch("bad-ec-eb-name.nettrace", ec, len, EC_EB_NAME, "EventBlock", "EventBlocc", 10);

	/* Metadata blob header and payload. */
	splice("bad-ec-mb-varint11.nettrace", ec, len, EC_MB_SEQ, "\xff\xff\xff\xff\x0f", 5,
	       "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, EC_MB_SIZE);
	splice("bad-ec-mb-plen-huge.nettrace", ec, len, EC_MB_PLEN, "\x6c", 1,
	       "\xff\xff\xff\xff\x07", 5, EC_MB_SIZE);
	patch("bad-ec-md-id0.nettrace", ec, len, EC_MD_ID, "\x01\x00\x00\x00", "\0\0\0\0", 4);
	patch("bad-ec-md-fieldcount-huge.nettrace", ec, len, EC_MD_FIELDCOUNT, "\0\0\0\0", ff4, 4);
	patch("bad-ec-md-fieldcount1.nettrace", ec, len, EC_MD_FIELDCOUNT, "\0\0\0\0",
	      "\x01\0\0\0", 4);
	/* payload size 8: the metadata id and half the provider name, no terminator */
	patch("bad-ec-md-provider-unterminated.nettrace", ec, len, EC_MB_PLEN, "\x6c", "\x08", 1);

	/* Stack block. */
	patch("bad-ec-sb-count-huge.nettrace", ec, len, EC_SB_COUNT, "\x01\0\0\0", ff4, 4);
	patch("bad-ec-sb-first0.nettrace", ec, len, EC_SB_FIRST, "\x01\0\0\0", "\0\0\0\0", 4);
	patch("ok-ec-sb-first-max.nettrace", ec, len, EC_SB_FIRST, "\x01\0\0\0", ff4, 4);
	patch("bad-ec-sb-stacksize-huge.nettrace", ec, len, EC_SB_STACK0, "\0\0\0\0",
	      "\xf8\xff\xff\xff", 4);
	patch("bad-ec-sb-stacksize-odd.nettrace", ec, len, EC_SB_STACK0, "\0\0\0\0", "\x07\0\0\0", 4);
	/* first id 1000: ids 1..999 undefined, the event's stack id 1 is then missing */
	patch("ok-ec-sb-first1000.nettrace", ec, len, EC_SB_FIRST, "\x01\0\0\0", "\xe8\x03\0\0", 4);

	/* Event block. */
	patch("bad-ec-ev-meta-undefined.nettrace", ec, len, EC_EV1_META, "\x01", "\x02", 1);
	patch("bad-ec-ev-meta0.nettrace", ec, len, EC_EV1_META, "\x01", "\x00", 1);
	splice("bad-ec-ev-meta-huge.nettrace", ec, len, EC_EV1_META, "\x01", 1,
	       "\xff\xff\xff\xff\x0f", 5, EC_EB_SIZE);
	splice("bad-ec-ev-plen-huge.nettrace", ec, len, EC_EV1_PLEN, "\x22", 1,
	       "\xff\xff\xff\xff\x07", 5, EC_EB_SIZE);
	splice("bad-ec-ev-varint11.nettrace", ec, len, EC_EV1_TS, "\xed\xa9\xbb\x9b\xb3\xc3\x02", 7,
	       "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, EC_EB_SIZE);
	/* a 10-byte timestamp delta: valid (wraps modulo 2^64). The payload size 0x22 is
	 * re-encoded as the non-minimal varint a2 00, so the block grows by 4 bytes and the
	 * 4-byte alignment of the blocks after it is kept. */
	{
		nbuf t = {NULL, 0, 0};
		expect(ec, len, EC_EV1_TS, "\xed\xa9\xbb\x9b\xb3\xc3\x02\x22", 8);
		nb_bytes(&t, ec, EC_EV1_TS);
		nb_bytes(&t, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\xa2\x00", 12);
		nb_bytes(&t, ec + EC_EV1_TS + 8, len - EC_EV1_TS - 8);
		nb_set32(&t, EC_EB_SIZE, nb_get32(t.p + EC_EB_SIZE) + 4);
		emit("ok-ec-ev-ts-negative.nettrace", t.p, t.len);
		nb_free(&t);
	}
	patch("ok-ec-ev-stack-undefined.nettrace", ec, len, EC_EV1_STACK, "\x01", "\x05", 1);
	/* event 3's flags 00 -> 80 (payload size follows): its ts byte is read as the size */
	patch("any-ec-ev3-flags.nettrace", ec, len, EC_EV3, "\x00\x69", "\x80\x69", 2);
	/* uncompressed header flag on the event block: the blobs no longer parse */
	patch("bad-ec-eb-uncompressed.nettrace", ec, len, EC_EB_HDR + 2, "\x01\x00", "\x00\x00", 2);

	/* Sequence point. */
	patch("bad-ec-sp-count-huge.nettrace", ec, len, EC_SP_COUNT, "\x01\0\0\0", ff4, 4);
	patch("ok-ec-sp-seq-gap.nettrace", ec, len, EC_SP_COUNT + 12, "\x03", "\x09", 1);

	/* Garbage after the end tag is ignored; garbage instead of it is an error. */
	{
		nbuf t = {NULL, 0, 0};
		nb_bytes(&t, ec, len);
		nb_bytes(&t, "garbage", 7);
		emit("ok-ec-trailing-garbage.nettrace", t.p, t.len);
		t.len = EC_ENDTAG;
		nb_bytes(&t, "\xff", 1);
		emit("bad-ec-garbage-instead-of-end.nettrace", t.p, t.len);
		nb_free(&t);
	}
	/* Tiny files. */
	emit("bad-empty.nettrace", "", 0);
	emit("bad-not-nettrace.nettrace", "hello, world\n", 13);
	emit("bad-short-not-magic.nettrace", "Netcce", 6);
	emit("bad-magic-only.nettrace", "Nettrace\x14\x00", 10);
	emit("bad-netperf-v3.nettrace", "\x14\x00\x00\x00!FastSerialization.1\x05\x04\x01", 27);
}

/* ------------------------------------------------------------------ the big file */

static void gen_mixed(const uint8_t *mx, size_t len)
{
	static blk blocks[4096];
	size_t end_tag;
	size_t n = walk_v4(mx, len, blocks, sizeof blocks / sizeof blocks[0], &end_tag);
	if (n < 20)
		die("mixed: only %zu blocks", n);
	nbuf t = {NULL, 0, 0};

	/* Truncation at every block boundary and inside each of the first blocks. Only the
	 * first 24 boundaries are cut in five places (the files would add up to tens of MB). */
	for (size_t i = 0; i < n && i < 24; i++) {
		emitf(mx, blocks[i].start, "trunc-mixed-cut-block%03zu.nettrace", i);
		emitf(mx, blocks[i].start + 7, "trunc-mixed-cut-block%03zu-hdr.nettrace", i);
		emitf(mx, blocks[i].size_at + 2, "trunc-mixed-cut-block%03zu-size.nettrace", i);
		emitf(mx, (blocks[i].content + blocks[i].end) / 2,
		      "trunc-mixed-cut-block%03zu-mid.nettrace", i);
		emitf(mx, blocks[i].end - 1, "trunc-mixed-cut-block%03zu-endtag.nettrace", i);
	}
	/* Block boundaries as valid files: the prefix up to a boundary plus the end tag (all
	 * of the first 24, then every 16th, and the whole file). */
	for (size_t i = 1; i <= n; i++) {
		size_t cut = i < n ? blocks[i].start : end_tag;
		if (i >= 24 && i % 16 != 0 && i != n)
			continue;
		t.len = 0;
		nb_bytes(&t, mx, cut);
		nb_u8(&t, 0x01);
		emitf(t.p, t.len, "ok-mixed-first%03zu.nettrace", i);
	}

	/* A small valid file: the first blocks up to ~24 KB, then the end tag. Corrupt copies
	 * of it (flips, huge sizes) exercise metadata, stacks and samples. */
	size_t k = 0;
	while (k < n && blocks[k].end < 24 * 1024)
		k++;
	size_t small_len = blocks[k - 1].end;
	nbuf small = {NULL, 0, 0};
	nb_bytes(&small, mx, small_len);
	nb_u8(&small, 0x01);
	emit("ok-mixed-small.nettrace", small.p, small.len);
	for (size_t off = 0x66; off < small.len; off += 97) {
		t.len = 0;
		nb_bytes(&t, small.p, small.len);
		t.p[off] ^= (uint8_t)(0x5a + off);
		emitf(t.p, t.len, "any-mixed-flip-%05zu.nettrace", off);
	}
	/* Block sizes, stack counts and stack sizes set to huge values in every block. */
	for (size_t i = 0; i < k; i++) {
		blk *bk = &blocks[i];
		t.len = 0;
		nb_bytes(&t, small.p, small.len);
		nb_set32(&t, bk->size_at, 0xFFFFFFFFu);
		emitf(t.p, t.len, "bad-mixed-block%03zu-size-huge.nettrace", i);
		nb_set32(&t, bk->size_at, nb_get32(small.p + bk->size_at));
		if (strcmp(bk->name, "StackBlock") == 0) {
			nb_set32(&t, bk->content + 4, 0xFFFFFFFFu);
			emitf(t.p, t.len, "bad-mixed-block%03zu-stackcount-huge.nettrace", i);
			nb_set32(&t, bk->content + 4, nb_get32(small.p + bk->content + 4));
			nb_set32(&t, bk->content + 8, 0x7FFFFFF8u);
			emitf(t.p, t.len, "bad-mixed-block%03zu-stacksize-huge.nettrace", i);
		}
		if (strcmp(bk->name, "EventBlock") == 0 || strcmp(bk->name, "MetadataBlock") == 0) {
			/* first blob: flags byte with every field present */
			t.p[bk->content + 20] = 0xFF;
			emitf(t.p, t.len, "any-mixed-block%03zu-flags-ff.nettrace", i);
		}
	}

	/* Two sequence-point regions in a small file: region 1's first blocks, its SP, and
	 * region 2's blocks up to its first EventBlock (stack ids restart at 1 after the SP).
	 * Block padding depends on the absolute offset, so the copied blocks must move by a
	 * multiple of 4: drop trailing blocks of region 1 until they do. */
	size_t sp = 0;
	while (sp < n && strcmp(blocks[sp].name, "SPBlock") != 0)
		sp++;
	size_t j = sp + 1;
	while (j < n && strcmp(blocks[j].name, "EventBlock") != 0)
		j++;
	size_t kk = k;
	while (kk > 1 && (blocks[sp].start - blocks[kk - 1].end) % 4 != 0)
		kk--;
	if (j < n && kk > 1) {
		t.len = 0;
		nb_bytes(&t, mx, blocks[kk - 1].end);
		nb_bytes(&t, mx + blocks[sp].start, blocks[j].end - blocks[sp].start);
		nb_u8(&t, 0x01);
		emit("ok-mixed-two-regions.nettrace", t.p, t.len);
	} else {
		die("mixed: cannot build the two-region file");
	}
	nb_free(&small);
	nb_free(&t);
}

/* ------------------------------------------------------------------ compressed input */

/* Deflates src into out: gzip wrapper (wbits 31) or raw deflate (wbits -15). */
static void deflate_to(nbuf *out, const uint8_t *src, size_t len, int wbits)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (deflateInit2(&zs, 9, Z_DEFLATED, wbits, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		die("deflateInit2 failed");
	uint8_t tmp[65536];
	zs.next_in = (Bytef *)src;
	zs.avail_in = (uInt)len;
	int zr;
	do {
		zs.next_out = tmp;
		zs.avail_out = sizeof tmp;
		zr = deflate(&zs, Z_FINISH);
		nb_bytes(out, tmp, sizeof tmp - zs.avail_out);
	} while (zr == Z_OK);
	if (zr != Z_STREAM_END)
		die("deflate failed");
	deflateEnd(&zs);
}

/* A .zip archive with one entry (local header only: the reader streams the first entry). */
static void zip_of(nbuf *out, const uint8_t *src, size_t len, int stored)
{
	nbuf data = {NULL, 0, 0};
	if (stored)
		nb_bytes(&data, src, len);
	else
		deflate_to(&data, src, len, -15);
	nb_u32(out, 0x04034b50);
	nb_u16(out, 20);               /* version needed */
	nb_u16(out, 0);                /* flags */
	nb_u16(out, stored ? 0 : 8);   /* method */
	nb_u32(out, 0);                /* time, date */
	nb_u32(out, (uint32_t)crc32(0, src, (uInt)len));
	nb_u32(out, (uint32_t)data.len);
	nb_u32(out, (uint32_t)len);
	nb_u16(out, 14);               /* name length */
	nb_u16(out, 0);                /* extra length */
	nb_bytes(out, "trace.nettrace", 14);
	nb_bytes(out, data.p, data.len);
	nb_free(&data);
}

static void gen_compressed(const uint8_t *ec, size_t len)
{
	nbuf z = {NULL, 0, 0};
	deflate_to(&z, ec, len, 31);
	emit("ok-ec-gzip.nettrace.gz", z.p, z.len);
	/* two gzip members: the second holds the last 100 bytes */
	nbuf two = {NULL, 0, 0};
	deflate_to(&two, ec, len - 100, 31);
	deflate_to(&two, ec + len - 100, 100, 31);
	emit("ok-ec-gzip-two-members.nettrace.gz", two.p, two.len);
	nb_free(&two);
	for (size_t n = 0; n < z.len; n += 7)
		emitf(z.p, n, "any-ec-gzip-cut-%04zu.nettrace.gz", n);
	for (size_t off = 0; off < z.len; off += 3) {
		nbuf c = {NULL, 0, 0};
		nb_bytes(&c, z.p, z.len);
		c.p[off] ^= 0x55;
		emitf(c.p, c.len, "any-ec-gzip-flip-%04zu.nettrace.gz", off);
		nb_free(&c);
	}
	nbuf g = {NULL, 0, 0};
	nb_bytes(&g, z.p, z.len);
	nb_bytes(&g, "\0\0\0\0", 4);
	emit("any-ec-gzip-trailing-zeros.nettrace.gz", g.p, g.len);
	nb_free(&g);
	nb_free(&z);

	zip_of(&z, ec, len, 0);
	emit("ok-ec-zip-deflate.zip", z.p, z.len);
	for (size_t off = 0; off < 40; off++) {
		nbuf c = {NULL, 0, 0};
		nb_bytes(&c, z.p, z.len);
		c.p[off] ^= 0xff;
		emitf(c.p, c.len, "any-ec-zip-flip-%04zu.zip", off);
		nb_free(&c);
	}
	nb_free(&z);
	zip_of(&z, ec, len, 1);
	emit("ok-ec-zip-stored.zip", z.p, z.len);
	emitf(z.p, z.len - 100, "trunc-ec-zip-stored-cut.zip");
	nb_set32(&z, 18, 0xFFFFFFFFu); /* stored size beyond the archive */
	emit("ok-ec-zip-stored-size-huge.zip", z.p, z.len);
	nb_set32(&z, 18, 300); /* stored size inside the trace: a truncated trace */
	emit("trunc-ec-zip-stored-size-short.zip", z.p, z.len);
	z.p[6] = 1; /* encrypted */
	emit("bad-zip-encrypted.zip", z.p, z.len);
	z.p[6] = 0;
	z.p[8] = 12; /* bzip2 */
	emit("bad-zip-method12.zip", z.p, z.len);
	nb_free(&z);
	emit("bad-gzip-header-only.nettrace.gz", "\x1f\x8b", 2);
}

/* ------------------------------------------------------------------ synthetic streams */

/* A V6 stream with every block kind the reader knows. Returns it in *out. */
static void build_v6(nbuf *b, int variant)
{
	static const char *const keys[] = {"ProcessId", "HardwareThreadCount",
					   "ExpectedCPUSamplingRate"};
	static const char *const vals[] = {"4242", "16", "1000000"};
	nb_v6_header(b);
	nb_v6_trace_block(b, 8, 1000, 1000000000, 3, keys, vals);
	/* Thread block: index 1 -> tid 100, index 2 -> tid 200 */
	size_t at = nb_v6_block_begin(b, 6);
	for (uint64_t i = 1; i <= 2; i++) {
		nbuf row = {NULL, 0, 0};
		nb_var(&row, i);
		nb_u8(&row, 2);
		nb_var(&row, 4242);
		nb_u8(&row, 3);
		nb_var(&row, i * 100);
		nb_u8(&row, 1);
		nb_str6(&row, "worker");
		nb_u16(b, (uint16_t)row.len);
		nb_bytes(b, row.p, row.len);
		nb_free(&row);
	}
	nb_v6_block_end(b, at);
	/* Metadata block: id 1 "Prov/Ev" with fields u32 A, string S, fixed array of 2 u16 */
	at = nb_v6_block_begin(b, 3);
	nb_u16(b, 0);
	{
		nbuf row = {NULL, 0, 0};
		nb_var(&row, 1);
		nb_str6(&row, "Prov");
		nb_var(&row, 7);
		nb_str6(&row, "Ev");
		nb_u16(&row, variant == 1 ? 1 : 3);
		nbuf f = {NULL, 0, 0};
		if (variant == 1) {
			/* nested fixed arrays of empty objects: 65535 x 65535 zero-byte elements */
			nb_str6(&f, "A");
			nb_u8(&f, 22);
			nb_u8(&f, 1);
			nb_u16(&f, 0xFFFF);
			nb_u16(&f, 1);
			nbuf g = {NULL, 0, 0};
			nb_str6(&g, "B");
			nb_u8(&g, 22);
			nb_u8(&g, 1);
			nb_u16(&g, 0xFFFF);
			nb_u16(&g, 0);
			nb_u16(&f, (uint16_t)g.len);
			nb_bytes(&f, g.p, g.len);
			nb_free(&g);
			nb_u16(&row, (uint16_t)f.len);
			nb_bytes(&row, f.p, f.len);
		} else {
			nb_str6(&f, "A");
			nb_u8(&f, 10);
			nb_u16(&row, (uint16_t)f.len);
			nb_bytes(&row, f.p, f.len);
			f.len = 0;
			nb_str6(&f, "S");
			nb_u8(&f, 18);
			nb_u16(&row, (uint16_t)f.len);
			nb_bytes(&row, f.p, f.len);
			f.len = 0;
			nb_str6(&f, "Arr");
			nb_u8(&f, 22);
			nb_u8(&f, 8);
			nb_u16(&f, 2);
			nb_u16(&row, (uint16_t)f.len);
			nb_bytes(&row, f.p, f.len);
		}
		nb_free(&f);
		/* optional metadata: opcode 5, level 4, version 1, keywords */
		nb_u16(&row, 2 + 2 + 2 + 9);
		nb_u8(&row, 1);
		nb_u8(&row, 5);
		nb_u8(&row, 8);
		nb_u8(&row, 4);
		nb_u8(&row, 9);
		nb_u8(&row, 1);
		nb_u8(&row, 3);
		nb_u64(&row, 0x10);
		nb_u16(b, (uint16_t)row.len);
		nb_bytes(b, row.p, row.len);
		nb_free(&row);
	}
	nb_v6_block_end(b, at);
	/* LabelList block: list 1 = activity id, related activity id, trace id, span id,
	 * key/value strings, key + varint, keywords, then (last) opcode */
	at = nb_v6_block_begin(b, 8);
	nb_u32(b, 1);
	nb_u32(b, 1);
	for (uint8_t kind = 1; kind <= 3; kind++) {
		nb_u8(b, kind);
		for (int i = 0; i < 16; i++)
			nb_u8(b, (uint8_t)(kind * 16 + i));
	}
	nb_u8(b, 4);
	nb_u64(b, 99);
	nb_u8(b, 5);
	nb_str6(b, "k");
	nb_str6(b, "v");
	nb_u8(b, 6);
	nb_str6(b, "n");
	nb_var(b, 7);
	nb_u8(b, 8);
	nb_u64(b, 0x40);
	nb_u8(b, 0x80 | 7);
	nb_u8(b, 2);
	nb_v6_block_end(b, at);
	/* Stack block: id 1 = {0x1000, 0x2000} */
	at = nb_v6_block_begin(b, 5);
	nb_u32(b, 1);
	nb_u32(b, 1);
	nb_u32(b, 16);
	nb_u64(b, 0x1000);
	nb_u64(b, 0x2000);
	nb_v6_block_end(b, at);
	/* Event block: two events on capture thread index 1 (V6 ids are thread indexes) */
	at = nb_v6_block_begin(b, 2);
	nb_blk_header(b, 1, 2000, 2100);
	{
		nbuf pl = {NULL, 0, 0};
		nb_u32(&pl, 77);
		nb_utf16z(&pl, "hi");
		nb_u16(&pl, 1);
		nb_u16(&pl, 2);
		nb_hdrstate s;
		nb_hdr_reset(&s);
		nb_ev e = {1, 1, 1, 0, 2, 1, 2000, 1, pl.p, (uint32_t)pl.len};
		if (variant == 1)
			e.plen = 0;
		if (variant == 0) {
			/* first event with every flag: 0x10 is the label list id in V6 */
			nb_u8(b, 0xDF);
			nb_var(b, 1);
			nb_var(b, 0);
			nb_var(b, 1);
			nb_var(b, 0);
			nb_var(b, 2);
			nb_var(b, 1);
			nb_var(b, 2000);
			nb_var(b, 1);
			nb_var(b, pl.len);
			nb_bytes(b, pl.p, pl.len);
			s.prev = e;
			s.prev.sorted = 0;
		} else {
			nb_cev(b, &s, &e);
		}
		e.seq = 2;
		e.ts = 2100;
		e.sorted = 0;
		nb_cev(b, &s, &e);
		nb_free(&pl);
	}
	nb_v6_block_end(b, at);
	/* SP: ts 3000, flags 0, thread index 1 at seq 2 */
	at = nb_v6_block_begin(b, 4);
	nb_u64(b, 3000);
	nb_u32(b, 0);
	nb_u32(b, 1);
	nb_var(b, 1);
	nb_var(b, 2);
	nb_v6_block_end(b, at);
	/* unknown block kind 42: skipped */
	at = nb_v6_block_begin(b, 42);
	nb_u32(b, 0xdeadbeef);
	nb_v6_block_end(b, at);
	nb_u32(b, 0); /* EndOfStream */
}

/* A V4 file with V5 metadata exercising every payload type: V1 fields of each scalar
 * type and a nested object, V2Params with arrays (of u32, of objects, of strings), an
 * OpCode and an unknown tag; a built-in runtime event with pointer fields; stacks; an
 * uncompressed EventBlock; two capture threads with a negative timestamp delta and an SP.
 * ptrsize 4 or 8. */
static void build_v5_rich(nbuf *b, uint32_t ps)
{
	nb_v4_header(b, ps, 1000, 10000000);
	nbuf md[3] = {{NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}};
	/* 1: every V1 scalar type, then Object {u8 X, string S} */
	nb_meta5_head(&md[0], 1, "Rich", 1, "AllTypes", 0xF, 2, 5);
	static const uint32_t types[] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
	nb_u32(&md[0], 17);
	for (size_t i = 0; i < 16; i++) {
		char name[8];
		snprintf(name, sizeof name, "T%u", types[i]);
		nb_u32(&md[0], types[i]);
		nb_utf16z(&md[0], name);
	}
	nb_u32(&md[0], 1);
	nb_u32(&md[0], 2);
	nb_u32(&md[0], 6);
	nb_utf16z(&md[0], "X");
	nb_u32(&md[0], 18);
	nb_utf16z(&md[0], "S");
	nb_utf16z(&md[0], "Obj");
	nb_u32(&md[0], 1); /* OpCode 11 */
	nb_u8(&md[0], 1);
	nb_u8(&md[0], 11);
	nb_u32(&md[0], 2); /* unknown tag */
	nb_u8(&md[0], 77);
	nb_u16(&md[0], 0);
	/* 2: V2Params: u32[] A, Object{u16 P}[] O, string[] S */
	nb_meta5_head(&md[1], 2, "Rich", 2, "Arrays", 0, 0, 4);
	nb_u32(&md[1], 0);
	nbuf v2 = {NULL, 0, 0};
	nb_u32(&v2, 3);
	size_t f = v2.len;
	nb_u32(&v2, 0);
	nb_utf16z(&v2, "A");
	nb_u32(&v2, 19);
	nb_u32(&v2, 10);
	nb_set32(&v2, f, (uint32_t)(v2.len - f));
	f = v2.len;
	nb_u32(&v2, 0);
	nb_utf16z(&v2, "O");
	nb_u32(&v2, 19);
	nb_u32(&v2, 1);
	nb_u32(&v2, 1);
	size_t g = v2.len;
	nb_u32(&v2, 0);
	nb_utf16z(&v2, "P");
	nb_u32(&v2, 8);
	nb_set32(&v2, g, (uint32_t)(v2.len - g));
	nb_set32(&v2, f, (uint32_t)(v2.len - f));
	f = v2.len;
	nb_u32(&v2, 0);
	nb_utf16z(&v2, "S");
	nb_u32(&v2, 19);
	nb_u32(&v2, 18);
	nb_set32(&v2, f, (uint32_t)(v2.len - f));
	nb_u32(&md[1], (uint32_t)v2.len);
	nb_u8(&md[1], 2);
	nb_bytes(&md[1], v2.p, v2.len);
	nb_free(&v2);
	/* 3: runtime ContentionStart version 2 (built-in layout with pointer fields) */
	nb_meta5_head(&md[2], 3, "Microsoft-Windows-DotNETRuntime", 81, "", 0x4000, 2, 4);
	nb_v4_metadata_block(b, md, 3);
	for (int i = 0; i < 3; i++)
		nb_free(&md[i]);
	uint64_t s1[3] = {0x7f0010, 0x7f0020, 0x7f0030};
	const uint64_t *stk[2] = {s1, s1};
	uint32_t depth[2] = {3, 1};
	nb_v4_stack_block(b, 1, 2, depth, stk, ps);

	/* payloads */
	nbuf p1 = {NULL, 0, 0}, p2 = {NULL, 0, 0}, p3 = {NULL, 0, 0};
	nb_u32(&p1, 1);          /* bool32 */
	nb_u16(&p1, 'c');        /* char */
	nb_u8(&p1, 0x80);        /* i8 */
	nb_u8(&p1, 0xff);        /* u8 */
	nb_u16(&p1, 0x8000);     /* i16 */
	nb_u16(&p1, 0xffff);     /* u16 */
	nb_u32(&p1, 0x80000000u); /* i32 */
	nb_u32(&p1, 0xffffffffu); /* u32 */
	nb_u64(&p1, 0x8000000000000000ull);
	nb_u64(&p1, 0xffffffffffffffffull);
	nb_u32(&p1, 0x3fc00000u); /* f32 1.5 */
	nb_u64(&p1, 0x7ff0000000000000ull); /* f64 +inf: rendered as null */
	for (int i = 0; i < 16; i++)
		nb_u8(&p1, (uint8_t)i); /* decimal */
	nb_u64(&p1, 132000000000000000ull); /* datetime */
	for (int i = 0; i < 16; i++)
		nb_u8(&p1, (uint8_t)(0xf0 + i)); /* guid */
	nb_utf16z(&p1, "q\"b\\c\x01");
	nb_u8(&p1, 7);
	nb_utf16z(&p1, "in");
	nb_u16(&p2, 2);
	nb_u32(&p2, 10);
	nb_u32(&p2, 20);
	nb_u16(&p2, 2);
	nb_u16(&p2, 1);
	nb_u16(&p2, 2);
	nb_u16(&p2, 1);
	nb_utf16z(&p2, "x");
	nb_u8(&p3, 1);
	nb_u16(&p3, 9);
	for (uint32_t i = 0; i < 2; i++) {
		if (ps == 8)
			nb_u64(&p3, 0x1000 + i);
		else
			nb_u32(&p3, 0x1000 + i);
	}
	nb_u64(&p3, 4242);

	/* compressed block: thread 10 (sorted 100, 300), thread 20 (sorted 200: negative) */
	size_t at = nb_v4_block_begin(b, "EventBlock");
	nb_blk_header(b, 1, 100, 300);
	nb_hdrstate st;
	nb_hdr_reset(&st);
	nb_ev ev[4] = {{1, 1, 10, 0, 10, 1, 100, 1, p1.p, (uint32_t)p1.len},
		       {2, 2, 10, 0, 10, 2, 300, 0, p2.p, (uint32_t)p2.len},
		       {3, 1, 20, 1, 21, 0, 200, 1, p3.p, (uint32_t)p3.len},
		       {3, 5, 20, 1, 21, 9, 250, 0, p3.p, (uint32_t)p3.len}};
	for (int i = 0; i < 4; i++)
		nb_cev(b, &st, &ev[i]);
	nb_v4_block_end(b, at);
	/* uncompressed block */
	at = nb_v4_block_begin(b, "EventBlock");
	nb_blk_header(b, 0, 400, 500);
	nb_ev u1 = {2, 3, 10, 0, 10, 0, 400, 1, p2.p, (uint32_t)p2.len};
	nb_ev u2 = {1, 4, 10, 0, 10, 1, 500, 0, p1.p, (uint32_t)p1.len};
	nb_uev(b, &u1);
	nb_uev(b, &u2);
	nb_v4_block_end(b, at);
	uint64_t tids[2] = {10, 20};
	uint32_t seqs[2] = {4, 7};
	nb_v4_sp_block(b, 600, 2, tids, seqs);
	nb_v4_end(b);
	nb_free(&p1);
	nb_free(&p2);
	nb_free(&p3);
}

static void gen_synthetic(void)
{
	{
		nbuf r = {NULL, 0, 0};
		build_v5_rich(&r, 8);
		emit("ok-v5-rich.nettrace", r.p, r.len);
		for (size_t off = 0x66; off < r.len; off++) {
			nbuf c = {NULL, 0, 0};
			nb_bytes(&c, r.p, r.len);
			c.p[off] ^= 0xff;
			emitf(c.p, c.len, "any-v5-rich-flip-%04zu.nettrace", off);
			nb_free(&c);
		}
		nb_free(&r);
		build_v5_rich(&r, 4);
		emit("ok-v5-rich-ptr4.nettrace", r.p, r.len);
		nb_free(&r);
	}
	nbuf b = {NULL, 0, 0};
	build_v6(&b, 0);
	emit("ok-v6.nettrace", b.p, b.len);
	/* cuts inside the stream header or the Trace block fail; later ones are truncations */
	size_t trace_end = 24 + (nb_get32(b.p + 20) & 0xFFFFFF);
	for (size_t n = 0; n < b.len; n++)
		emitf(b.p, n, "%s-v6-cut-%04zu.nettrace", n < trace_end ? "bad" : "trunc", n);
	for (size_t off = 0; off < b.len; off++) {
		nbuf c = {NULL, 0, 0};
		nb_bytes(&c, b.p, b.len);
		c.p[off] ^= 0xff;
		emitf(c.p, c.len, "any-v6-flip-%04zu.nettrace", off);
		nb_free(&c);
	}
	nb_free(&b);
	/* nested fixed arrays of empty objects: decoding must stay bounded */
	build_v6(&b, 1);
	emit("ok-v6-nested-empty-arrays.nettrace", b.p, b.len);
	nb_free(&b);

	/* V6 with a huge label list index and a thread block with many rows. */
	{
		static const char *const k0[] = {"x"};
		static const char *const v0[] = {"y"};
		nb_v6_header(&b);
		nb_v6_trace_block(&b, 8, 0, 1000, 1, k0, v0);
		size_t at = nb_v6_block_begin(&b, 8);
		nb_u32(&b, 0x00FFFFF0u); /* first index */
		nb_u32(&b, 1);
		nb_u8(&b, 0x80 | 7);
		nb_u8(&b, 1);
		nb_v6_block_end(&b, at);
		nb_u32(&b, 0);
		emit("any-v6-label-first-huge.nettrace", b.p, b.len);
		nb_free(&b);

		nb_v6_header(&b);
		nb_v6_trace_block(&b, 8, 0, 1000, 1, k0, v0);
		at = nb_v6_block_begin(&b, 6);
		for (uint32_t i = 0; i < 200000; i++) {
			uint8_t row[16];
			nbuf r = {NULL, 0, 0};
			nb_var(&r, (uint64_t)i * 7919u + 1);
			memcpy(row, r.p, r.len);
			nb_u16(&b, (uint16_t)r.len);
			nb_bytes(&b, row, r.len);
			nb_free(&r);
		}
		nb_v6_block_end(&b, at);
		nb_u32(&b, 0);
		emit("ok-v6-many-threads.nettrace", b.p, b.len);
		nb_free(&b);

		/* Trace block claiming 0xFFFFFFFF key/value pairs; V6 block cut in the middle. */
		nb_v6_header(&b);
		at = nb_v6_block_begin(&b, 1);
		for (int i = 0; i < 8; i++)
			nb_u16(&b, 0);
		nb_u64(&b, 0);
		nb_u64(&b, 1000);
		nb_u32(&b, 8);
		nb_u32(&b, 0xFFFFFFFFu);
		nb_v6_block_end(&b, at);
		nb_u32(&b, 0);
		emit("bad-v6-kv-count-huge.nettrace", b.p, b.len);
		nb_free(&b);
	}

	/* V4 stress: many capture threads (one event each) and many metadata ids > 2^20.
	 * A quadratic thread or metadata lookup would take minutes here. */
	{
		nb_v4_header(&b, 8, 0, 1000000);
		static nbuf md[2000];
		for (uint32_t i = 0; i < 2000; i++)
			nb_meta5_head(&md[i], 0x10000000u + i, "P", i, "", 0, 0, 4);
		nb_v4_metadata_block(&b, md, 2000);
		for (uint32_t i = 0; i < 2000; i++)
			nb_free(&md[i]);
		uint64_t ts = 1;
		for (int blkno = 0; blkno < 16; blkno++) {
			size_t at = nb_v4_block_begin(&b, "EventBlock");
			nb_blk_header(&b, 1, 0, 0);
			nb_hdrstate s;
			nb_hdr_reset(&s);
			for (uint32_t i = 0; i < 4000; i++) {
				uint64_t ctid = (uint64_t)blkno * 4000 + i + 1;
				nb_ev e = {0x10000000u + (i % 2000), 1, ctid, 0, ctid, 0, ts++, 0, NULL, 0};
				nb_cev(&b, &s, &e);
			}
			nb_v4_block_end(&b, at);
		}
		nb_v4_end(&b);
		emit("ok-v4-many-threads.nettrace", b.p, b.len);
		nb_free(&b);
	}
}

int main(int argc, char **argv)
{
	int i = 1;
	if (i < argc && strcmp(argv[i], "-q") == 0) {
		quiet = 1;
		i++;
	}
	if (argc - i != 2) {
		fprintf(stderr, "usage: gen-corrupt [-q] DATA_TRACES_DIR OUT_DIR\n");
		return 1;
	}
	const char *data = argv[i];
	outdir = argv[i + 1];
	mkdir(outdir, 0777);
	char path[4096];
	size_t len;
	uint8_t *p;

	snprintf(path, sizeof path, "%s/perfview/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace",
		 data);
	p = slurp(path, &len);
	gen_ec(p, len);
	gen_compressed(p, len);
	free(p);

	snprintf(path, sizeof path, "%s/perfview/mixed_managed_external_samples.nettrace", data);
	p = slurp(path, &len);
	gen_mixed(p, len);
	free(p);

	gen_synthetic();
	if (!quiet)
		printf("gen-corrupt: wrote %u files to %s\n", nfiles, outdir);
	return 0;
}
