/* SPDX-License-Identifier: MIT */
/* fuzz-inflate.h - shared by the fuzz targets that read traces (fuzz-reader.c,
 * fuzz-profile.c): compressed inputs (gzip, zip) that inflate to more than INFLATE_CAP
 * bytes are skipped, since reading a trace costs time in proportion to its inflated
 * size: a 64 KB input that inflates to 64 MB of events would only report a slow unit,
 * not a bug. Static functions: each target includes it once. */
#ifndef NT_FUZZ_INFLATE_H
#define NT_FUZZ_INFLATE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#define INFLATE_CAP (2u << 20)

/* Bytes that a gzip stream (wbits 47: auto-detect) or a raw deflate stream (wbits -15)
 * inflates to, counting up to INFLATE_CAP + 1. */
static size_t inflated_size(const uint8_t *p, size_t len, int wbits)
{
	static uint8_t out[65536];
	z_stream zs;
	size_t total = 0;
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, wbits) != Z_OK)
		return 0;
	zs.next_in = (Bytef *)p;
	zs.avail_in = (uInt)len;
	for (;;) {
		zs.next_out = out;
		zs.avail_out = sizeof out;
		int zr = inflate(&zs, Z_NO_FLUSH);
		total += sizeof out - zs.avail_out;
		if (total > INFLATE_CAP)
			break;
		if (zr == Z_STREAM_END && zs.avail_in > 0 && wbits > 0) {
			inflateReset(&zs); /* next gzip member */
			continue;
		}
		if (zr != Z_OK)
			break;
	}
	inflateEnd(&zs);
	return total;
}

static int too_big_when_inflated(const uint8_t *p, size_t len)
{
	if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return inflated_size(p, len, 32 + 15) > INFLATE_CAP;
	if (len >= 30 && p[0] == 'P' && p[1] == 'K' && p[2] == 3 && p[3] == 4) {
		size_t skip = 30 + (size_t)(p[26] | p[27] << 8) + (size_t)(p[28] | p[29] << 8);
		return skip < len && inflated_size(p + skip, len - skip, -15) > INFLATE_CAP;
	}
	return 0;
}

#endif
