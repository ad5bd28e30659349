/* SPDX-License-Identifier: MIT */
/* pdb.c - reads portable PDBs (ECMA-335 II.24 metadata: the root, the #Pdb, #~, #Blob and
 * #GUID streams, the Document and MethodDebugInformation tables and their sequence-point
 * blobs) and the debug directory of PE/COFF assemblies (the CodeView RSDS entry that names
 * the PDB id, the embedded portable PDB, deflate'd). Both are untrusted input: every read
 * is bounds-checked and every failure names its byte offset (in the PDB, or in the PE file
 * for the debug directory). Layouts: doc/format/managed-lines.md.
 * Not here: which PDB belongs to which module, IL maps (sym-managed.c). */
#include "pdb.h"

#include <inttypes.h>
#include <stdio.h>
#include <zlib.h>

#define MD_SIGNATURE 0x424A5342u   /* "BSJB" */
#define RSDS_SIGNATURE 0x53445352u /* "RSDS" */
#define MPDB_SIGNATURE 0x4244504Du /* "MPDB" */
#define TABLE_DOCUMENT 0x30
#define TABLE_METHODDEBUG 0x31
#define MAX_NAME 65536u            /* a document name longer than this is malformed */
#define HIDDEN_LINE 0xfeefeeu

struct nt_pdb {
	uint8_t *buf;
	size_t n;
	uint8_t id[NT_PDB_ID_LEN];
	size_t blob_off, blob_len;   /* #Blob heap */
	size_t guid_off, guid_len;   /* #GUID heap */
	unsigned blob_w, guid_w, str_w; /* heap index widths (2 or 4) */
	unsigned doc_w;              /* width of a Document row id */
	uint32_t ndocs, nmdi;
	size_t doc_off, doc_row;     /* Document table: offset, row size */
	size_t mdi_off, mdi_row;
	char **docs;                 /* decoded names, lazily (ndocs entries) */
};

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t rd_idx(const uint8_t *p, unsigned w) { return w == 2 ? rd16(p) : nt_le32(p); }

/* A compressed unsigned integer (ECMA-335 II.23.2) at p[*pos..end); -1 if malformed. */
static int cuint(const uint8_t *p, size_t *pos, size_t end, uint32_t *v, unsigned *width)
{
	if (*pos >= end)
		return -1;
	uint8_t b = p[*pos];
	if (!(b & 0x80)) {
		*v = b;
		*width = 1;
	} else if ((b & 0xC0) == 0x80) {
		if (end - *pos < 2)
			return -1;
		*v = (uint32_t)(b & 0x3F) << 8 | p[*pos + 1];
		*width = 2;
	} else if ((b & 0xE0) == 0xC0) {
		if (end - *pos < 4)
			return -1;
		*v = (uint32_t)(b & 0x1F) << 24 | (uint32_t)p[*pos + 1] << 16 |
		     (uint32_t)p[*pos + 2] << 8 | p[*pos + 3];
		*width = 4;
	} else {
		return -1;
	}
	*pos += *width;
	return 0;
}

/* A compressed signed integer: the unsigned encoding rotated so that bit 0 is the sign. */
static int csint(const uint8_t *p, size_t *pos, size_t end, int32_t *v)
{
	uint32_t u;
	unsigned w;
	if (cuint(p, pos, end, &u, &w))
		return -1;
	int32_t x = (int32_t)(u >> 1);
	if (u & 1)
		x -= w == 1 ? 0x40 : w == 2 ? 0x2000 : 0x10000000;
	*v = x;
	return 0;
}

void nt_pdb_free(nt_pdb *pdb)
{
	if (!pdb)
		return;
	if (pdb->docs)
		for (uint32_t i = 0; i < pdb->ndocs; i++)
			free(pdb->docs[i]);
	free(pdb->docs);
	free(pdb->buf);
	free(pdb);
}

const uint8_t *nt_pdb_id(const nt_pdb *pdb) { return pdb->id; }

uint32_t nt_pdb_methods(const nt_pdb *pdb) { return pdb->nmdi; }

int nt_pdb_sniff(const uint8_t *p, size_t n)
{
	if (n >= 2 && p[0] == 'M' && p[1] == 'Z')
		return 1;
	if (n >= 4 && nt_le32(p) == MD_SIGNATURE)
		return 2;
	return 0;
}

/* The #~ stream at [off, off + len): the row counts and the two tables' places. */
static int parse_tables(nt_pdb *pdb, size_t off, size_t len, nt_error *err)
{
	const uint8_t *p = pdb->buf;
	if (len < 24)
		return nt_fail(err, NT_EFORMAT, off, "PDB: #~ stream too short (%zu bytes)", len);
	unsigned hs = p[off + 6];
	uint64_t valid = nt_le64(p + off + 8);
	pdb->str_w = hs & 1 ? 4 : 2;
	pdb->guid_w = hs & 2 ? 4 : 2;
	pdb->blob_w = hs & 4 ? 4 : 2;
	if (valid & ((1ull << TABLE_DOCUMENT) - 1))
		return nt_fail(err, NT_EFORMAT, off + 8,
			       "PDB: #~ holds type system tables (valid mask 0x%016llx): not a "
			       "standalone portable PDB",
			       (unsigned long long)valid);
	size_t pos = off + 24, end = off + len;
	uint32_t rows[64] = {0};
	for (unsigned t = 0; t < 64; t++) {
		if (!(valid >> t & 1))
			continue;
		if (end - pos < 4)
			return nt_fail(err, NT_EFORMAT, pos, "PDB: #~ row counts truncated");
		rows[t] = nt_le32(p + pos);
		pos += 4;
	}
	if (hs & 0x40) { /* "extra data": 4 bytes after the row counts */
		if (end - pos < 4)
			return nt_fail(err, NT_EFORMAT, pos, "PDB: #~ extra data truncated");
		pos += 4;
	}
	pdb->ndocs = rows[TABLE_DOCUMENT];
	pdb->nmdi = rows[TABLE_METHODDEBUG];
	pdb->doc_w = pdb->ndocs < 0x10000 ? 2 : 4;
	pdb->doc_row = 2u * pdb->blob_w + 2u * pdb->guid_w;
	pdb->mdi_row = pdb->doc_w + pdb->blob_w;
	size_t dsz, msz;
	if (nt_mul_size(pdb->ndocs, pdb->doc_row, &dsz) || dsz > end - pos)
		return nt_fail(err, NT_EFORMAT, pos,
			       "PDB: Document table (%" PRIu32 " rows) exceeds the #~ stream",
			       pdb->ndocs);
	pdb->doc_off = pos;
	pos += dsz;
	if (nt_mul_size(pdb->nmdi, pdb->mdi_row, &msz) || msz > end - pos)
		return nt_fail(err, NT_EFORMAT, pos,
			       "PDB: MethodDebugInformation table (%" PRIu32
			       " rows) exceeds the #~ stream",
			       pdb->nmdi);
	pdb->mdi_off = pos;
	return 0;
}

int nt_pdb_parse(nt_pdb **out, const uint8_t *src, size_t n, nt_error *err)
{
	*out = NULL;
	if (n > NT_PDB_MAX_FILE)
		return nt_fail(err, NT_ELIMIT, 0, "PDB: %zu bytes exceed the %u MiB limit", n,
			       NT_PDB_MAX_FILE >> 20);
	if (n < 20 || nt_le32(src) != MD_SIGNATURE)
		return nt_fail(err, NT_EFORMAT, 0, "PDB: no metadata signature (BSJB): not a "
						   "portable PDB");
	nt_pdb *pdb = calloc(1, sizeof *pdb);
	if (!pdb || !(pdb->buf = malloc(n))) {
		free(pdb);
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate a PDB");
	}
	memcpy(pdb->buf, src, n);
	pdb->n = n;
	const uint8_t *p = pdb->buf;
	int rc;
	uint32_t vlen = nt_le32(p + 12);
	if (vlen > 256 || vlen > n - 16 || n - 16 - vlen < 4) {
		rc = nt_fail(err, NT_EFORMAT, 12, "PDB: bad version string length %" PRIu32, vlen);
		goto fail;
	}
	size_t pos = 16 + vlen;
	uint32_t nstreams = rd16(p + pos + 2);
	pos += 4;
	size_t tbl_off = 0, tbl_len = 0;
	int have_pdb = 0, have_tbl = 0, have_blob = 0;
	for (uint32_t s = 0; s < nstreams; s++) {
		size_t hdr = pos;
		if (n - pos < 8) {
			rc = nt_fail(err, NT_EFORMAT, pos, "PDB: stream header %" PRIu32 " truncated",
				     s);
			goto fail;
		}
		uint32_t off = nt_le32(p + pos), size = nt_le32(p + pos + 4);
		pos += 8;
		size_t nl = 0;
		while (pos + nl < n && nl < 32 && p[pos + nl])
			nl++;
		if (pos + nl >= n || nl >= 32) {
			rc = nt_fail(err, NT_EFORMAT, pos, "PDB: stream name unterminated");
			goto fail;
		}
		const char *name = (const char *)p + pos;
		pos += (nl + 4) & ~(size_t)3; /* the name, its NUL, padded to 4 bytes */
		if (pos > n) {
			rc = nt_fail(err, NT_EFORMAT, hdr, "PDB: stream header %" PRIu32 " truncated",
				     s);
			goto fail;
		}
		if (off > n || size > n - off) {
			rc = nt_fail(err, NT_EFORMAT, hdr,
				     "PDB: stream %.*s at %" PRIu32 " size %" PRIu32
				     " exceeds the file (%zu bytes)",
				     (int)nl, name, off, size, n);
			goto fail;
		}
		if (nl == 4 && memcmp(name, "#Pdb", 4) == 0) {
			if (size < NT_PDB_ID_LEN) {
				rc = nt_fail(err, NT_EFORMAT, off, "PDB: #Pdb stream too short");
				goto fail;
			}
			memcpy(pdb->id, p + off, NT_PDB_ID_LEN);
			have_pdb = 1;
		} else if (nl == 2 && memcmp(name, "#~", 2) == 0) {
			tbl_off = off;
			tbl_len = size;
			have_tbl = 1;
		} else if (nl == 5 && memcmp(name, "#Blob", 5) == 0) {
			pdb->blob_off = off;
			pdb->blob_len = size;
			have_blob = 1;
		} else if (nl == 5 && memcmp(name, "#GUID", 5) == 0) {
			pdb->guid_off = off;
			pdb->guid_len = size;
		}
	}
	if (!have_pdb || !have_tbl || !have_blob) {
		rc = nt_fail(err, NT_EFORMAT, 16 + vlen, "PDB: no %s stream",
			     !have_pdb ? "#Pdb" : !have_tbl ? "#~" : "#Blob");
		goto fail;
	}
	if ((rc = parse_tables(pdb, tbl_off, tbl_len, err)) != 0)
		goto fail;
	if (pdb->ndocs && !(pdb->docs = calloc(pdb->ndocs, sizeof(char *)))) {
		rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate PDB documents");
		goto fail;
	}
	*out = pdb;
	return 0;
fail:
	nt_pdb_free(pdb);
	return rc;
}

/* Blob heap entry idx: *q and *len (an offset into pdb->buf). */
static int blob_at(const nt_pdb *pdb, uint32_t idx, size_t *q, size_t *len, nt_error *err)
{
	if (idx >= pdb->blob_len)
		return nt_fail(err, NT_EFORMAT, pdb->blob_off,
			       "PDB: blob index %" PRIu32 " beyond the #Blob heap (%zu bytes)", idx,
			       pdb->blob_len);
	size_t pos = pdb->blob_off + idx, end = pdb->blob_off + pdb->blob_len;
	uint32_t l;
	unsigned w;
	if (cuint(pdb->buf, &pos, end, &l, &w) || l > end - pos)
		return nt_fail(err, NT_EFORMAT, pdb->blob_off + idx,
			       "PDB: blob %" PRIu32 " has a bad length", idx);
	*q = pos;
	*len = l;
	return 0;
}

const char *nt_pdb_document(nt_pdb *pdb, uint32_t doc, nt_error *err)
{
	if (doc == 0 || doc > pdb->ndocs)
		return NULL;
	if (pdb->docs[doc - 1])
		return pdb->docs[doc - 1];
	const uint8_t *p = pdb->buf;
	size_t row = pdb->doc_off + (size_t)(doc - 1) * pdb->doc_row;
	size_t q, len;
	if (blob_at(pdb, rd_idx(p + row, pdb->blob_w), &q, &len, err))
		return NULL;
	if (len == 0) {
		nt_fail(err, NT_EFORMAT, q, "PDB: document %" PRIu32 " has an empty name blob", doc);
		return NULL;
	}
	/* separator (one UTF-8 character, or 0: none), then blob indexes of the parts */
	size_t sl = p[q] < 0x80 ? 1 : p[q] >= 0xF0 ? 4 : p[q] >= 0xE0 ? 3 : 2;
	if (sl > len) {
		nt_fail(err, NT_EFORMAT, q, "PDB: document %" PRIu32 " name separator truncated",
			doc);
		return NULL;
	}
	if (p[q] == 0)
		sl = 0;
	size_t pos = q + (sl ? sl : 1), end = q + len;
	char *name = NULL;
	size_t nlen = 0, cap = 0;
	for (int first = 1; pos < end; first = 0) {
		uint32_t part;
		unsigned w;
		size_t at = pos;
		if (cuint(p, &pos, end, &part, &w)) {
			nt_fail(err, NT_EFORMAT, at, "PDB: document %" PRIu32 " name part malformed",
				doc);
			goto bad;
		}
		size_t pq = 0, pl = 0;
		if (part && blob_at(pdb, part, &pq, &pl, err))
			goto bad;
		size_t add = (first ? 0 : sl) + pl;
		if (nlen + add >= MAX_NAME) {
			nt_fail(err, NT_ELIMIT, at, "PDB: document %" PRIu32 " name longer than %u",
				doc, MAX_NAME);
			goto bad;
		}
		if (nt_grow((void **)&name, &cap, nlen + add + 1, 1)) {
			nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate a document name");
			goto bad;
		}
		if (!first && sl) {
			memcpy(name + nlen, p + q, sl);
			nlen += sl;
		}
		if (pl)
			memcpy(name + nlen, p + pq, pl);
		nlen += pl;
	}
	if (!name && !(name = malloc(1))) {
		nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate a document name");
		return NULL;
	}
	name[nlen] = '\0';
	for (size_t i = 0; i < nlen; i++)
		if (name[i] == '\0')
			name[i] = '?'; /* an embedded NUL would cut the name short */
	pdb->docs[doc - 1] = name;
	return name;
bad:
	free(name);
	return NULL;
}

/* Decodes the sequence points of method row; fn gets each, stop (when not NULL) ends
 * the walk early once it returns non-zero. Returns the count or < 0. */
static int walk_points(nt_pdb *pdb, uint32_t row, int (*fn)(void *, const nt_pdb_line *),
		       void *ctx, nt_error *err)
{
	if (row == 0 || row > pdb->nmdi)
		return 0;
	const uint8_t *p = pdb->buf;
	size_t r = pdb->mdi_off + (size_t)(row - 1) * pdb->mdi_row;
	uint32_t doc = rd_idx(p + r, pdb->doc_w);
	uint32_t sp = rd_idx(p + r + pdb->doc_w, pdb->blob_w);
	if (sp == 0)
		return 0;
	size_t q, len;
	if (blob_at(pdb, sp, &q, &len, err))
		return NT_EFORMAT;
	size_t pos = q, end = q + len;
	uint32_t v;
	unsigned w;
	if (cuint(p, &pos, end, &v, &w)) /* LocalSignature */
		goto bad;
	if (doc == 0 && cuint(p, &pos, end, &doc, &w)) /* InitialDocument */
		goto bad;
	uint64_t il = 0;
	int64_t line = 0, col = 0;
	int count = 0, have_nonhidden = 0;
	while (pos < end) {
		uint32_t dil;
		if (cuint(p, &pos, end, &dil, &w))
			goto bad;
		if (dil == 0 && count > 0) { /* document-record */
			if (cuint(p, &pos, end, &doc, &w))
				goto bad;
			continue;
		}
		il += dil;
		uint32_t dlines;
		if (cuint(p, &pos, end, &dlines, &w))
			goto bad;
		int64_t dcols;
		if (dlines == 0) {
			uint32_t u;
			if (cuint(p, &pos, end, &u, &w))
				goto bad;
			dcols = u;
		} else {
			int32_t s;
			if (csint(p, &pos, end, &s))
				goto bad;
			dcols = s;
		}
		nt_pdb_line l = {0};
		l.il_offset = (uint32_t)il;
		l.document = doc;
		if (il >= 0x20000000u)
			goto bad;
		if (dlines == 0 && dcols == 0) {
			l.hidden = 1;
			l.line = l.end_line = HIDDEN_LINE;
		} else {
			if (!have_nonhidden) {
				uint32_t a, b;
				if (cuint(p, &pos, end, &a, &w) || cuint(p, &pos, end, &b, &w))
					goto bad;
				line = a;
				col = b;
			} else {
				int32_t a, b;
				if (csint(p, &pos, end, &a) || csint(p, &pos, end, &b))
					goto bad;
				line += a;
				col += b;
			}
			have_nonhidden = 1;
			if (line < 0 || line >= 0x20000000 || col < 0 || col >= 0x10000 ||
			    col + dcols < 0 || col + dcols >= 0x10000)
				goto bad;
			l.line = (uint32_t)line;
			l.column = (uint32_t)col;
			l.end_line = (uint32_t)(line + dlines);
			l.end_column = (uint32_t)(col + dcols);
		}
		count++;
		if (fn && fn(ctx, &l))
			break;
	}
	return count;
bad:
	return nt_fail(err, NT_EFORMAT, pos < end ? pos : q,
		       "PDB: sequence points of method row %" PRIu32 " malformed (blob at %zu)", row,
		       q);
}

typedef struct find_ctx {
	uint32_t il;
	nt_pdb_line best;
	int found;
} find_ctx;

static int find_cb(void *ctx, const nt_pdb_line *l)
{
	find_ctx *f = ctx;
	if (l->il_offset > f->il)
		return 1; /* offsets increase: past it */
	if (!l->hidden) {
		f->best = *l;
		f->found = 1;
	}
	return 0;
}

int nt_pdb_lookup(nt_pdb *pdb, uint32_t method_row, uint32_t il_offset, nt_pdb_line *out,
		  const char **file, nt_error *err)
{
	find_ctx f = {il_offset, {0}, 0};
	int rc = walk_points(pdb, method_row, find_cb, &f, err);
	if (rc < 0)
		return rc;
	if (!f.found)
		return 0;
	if (f.best.document == 0 || f.best.document > pdb->ndocs)
		return nt_fail(err, NT_EFORMAT, pdb->mdi_off + (size_t)(method_row - 1) * pdb->mdi_row,
			       "PDB: method row %" PRIu32 " names document %" PRIu32 " of %" PRIu32,
			       method_row, f.best.document, pdb->ndocs);
	nt_error e2;
	nt_error_clear(&e2);
	const char *name = nt_pdb_document(pdb, f.best.document, &e2);
	if (!name) {
		if (err && !err->code)
			*err = e2;
		return e2.code ? e2.code : NT_EFORMAT;
	}
	*out = f.best;
	*file = name;
	return 1;
}

typedef struct each_ctx {
	void (*fn)(void *, const nt_pdb_line *);
	void *ctx;
} each_ctx;

static int each_cb(void *ctx, const nt_pdb_line *l)
{
	each_ctx *e = ctx;
	e->fn(e->ctx, l);
	return 0;
}

int nt_pdb_method_lines(nt_pdb *pdb, uint32_t method_row,
			void (*fn)(void *ctx, const nt_pdb_line *l), void *ctx, nt_error *err)
{
	each_ctx e = {fn, ctx};
	return walk_points(pdb, method_row, fn ? each_cb : NULL, &e, err);
}

/* ------------------------------------------------------------------ PE debug directory */

void nt_pe_debug_free(nt_pe_debug *d)
{
	free(d->embedded);
	d->embedded = NULL;
	d->embedded_len = 0;
}

/* The file offset of rva through the section table, or SIZE_MAX. */
static size_t rva_to_off(const uint8_t *p, size_t n, size_t sect, uint32_t nsect, uint32_t rva)
{
	for (uint32_t i = 0; i < nsect; i++) {
		const uint8_t *s = p + sect + (size_t)i * 40;
		uint32_t vsize = nt_le32(s + 8), va = nt_le32(s + 12), raw = nt_le32(s + 16),
			 ptr = nt_le32(s + 20);
		uint32_t span = vsize > raw ? vsize : raw;
		if (rva >= va && rva - va < span) {
			uint64_t off = (uint64_t)ptr + (rva - va);
			return off < n ? (size_t)off : SIZE_MAX;
		}
	}
	return SIZE_MAX;
}

static int inflate_pdb(const uint8_t *p, size_t len, size_t at, uint32_t size, nt_pe_debug *d,
		       nt_error *err)
{
	if (size > NT_PDB_MAX_FILE)
		return nt_fail(err, NT_ELIMIT, at, "embedded PDB of %" PRIu32 " bytes exceeds the %u "
						   "MiB limit", size, NT_PDB_MAX_FILE >> 20);
	/* deflate expands at most ~1032:1: a larger claimed size is a lie, and would make a
	 * small file allocate much */
	if ((uint64_t)size > (uint64_t)len * 1032 + 64)
		return nt_fail(err, NT_EFORMAT, at - 4,
			       "embedded PDB: size %" PRIu32 " cannot come from %zu deflate bytes", size,
			       len);
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate an embedded PDB");
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, -15) != Z_OK) {
		free(buf);
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot start inflating");
	}
	z.next_in = (Bytef *)(uintptr_t)p;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = size;
	int zr = inflate(&z, Z_FINISH);
	size_t got = z.total_out, used = z.total_in;
	inflateEnd(&z);
	if (zr != Z_STREAM_END || got != size) {
		free(buf);
		return nt_fail(err, NT_EFORMAT, at + used,
			       "embedded PDB: deflate data %s (%zu of %" PRIu32 " bytes inflated)",
			       zr == Z_BUF_ERROR && got == size ? "longer than its size"
			       : zr == Z_DATA_ERROR		? "corrupt"
								: "truncated",
			       got, size);
	}
	d->embedded = buf;
	d->embedded_len = size;
	return 0;
}

int nt_pe_read_debug(const uint8_t *p, size_t n, nt_pe_debug *d, nt_error *err)
{
	memset(d, 0, sizeof *d);
	if (n < 0x40 || p[0] != 'M' || p[1] != 'Z')
		return nt_fail(err, NT_EFORMAT, 0, "assembly: no MZ header: not a PE file");
	uint32_t pe = nt_le32(p + 0x3c);
	if (pe > n || n - pe < 24 + 2 || memcmp(p + pe, "PE\0\0", 4) != 0)
		return nt_fail(err, NT_EFORMAT, 0x3c, "assembly: no PE signature at %" PRIu32, pe);
	uint32_t nsect = rd16(p + pe + 6), optsz = rd16(p + pe + 20);
	size_t opt = (size_t)pe + 24;
	if (optsz > n - opt || optsz < 2)
		return nt_fail(err, NT_EFORMAT, pe + 20, "assembly: optional header truncated");
	uint32_t magic = rd16(p + opt);
	size_t ndd_at = magic == 0x20b ? 108 : 92, dd_at = magic == 0x20b ? 112 : 96;
	if (magic != 0x10b && magic != 0x20b)
		return nt_fail(err, NT_EFORMAT, opt, "assembly: unknown optional header magic 0x%x",
			       magic);
	if (optsz < dd_at)
		return nt_fail(err, NT_EFORMAT, opt, "assembly: optional header too short");
	uint32_t ndd = nt_le32(p + opt + ndd_at);
	size_t sect = opt + optsz;
	if (nsect > 96 || (size_t)nsect * 40 > n - sect)
		return nt_fail(err, NT_EFORMAT, pe + 6, "assembly: %" PRIu32 " sections exceed the file",
			       nsect);
	if (ndd <= 6 || optsz < dd_at + 7 * 8)
		return 0; /* no debug directory */
	uint32_t drva = nt_le32(p + opt + dd_at + 48), dsize = nt_le32(p + opt + dd_at + 52);
	if (drva == 0 || dsize == 0)
		return 0;
	size_t doff = rva_to_off(p, n, sect, nsect, drva);
	if (doff == SIZE_MAX || dsize > n - doff)
		return nt_fail(err, NT_EFORMAT, opt + dd_at + 48,
			       "assembly: debug directory (RVA 0x%" PRIx32 ", %" PRIu32
			       " bytes) outside the file",
			       drva, dsize);
	uint32_t nent = dsize / 28;
	if (nent > 64)
		nent = 64;
	int portable_cv = 0;
	for (uint32_t i = 0; i < nent; i++) {
		const uint8_t *e = p + doff + (size_t)i * 28;
		size_t eoff = doff + (size_t)i * 28;
		uint32_t stamp = nt_le32(e + 4), minor = rd16(e + 10), type = nt_le32(e + 12),
			 size = nt_le32(e + 16), ptr = nt_le32(e + 24);
		if (type != 2 && type != 17)
			continue;
		if (ptr > n || size > n - ptr) {
			nt_pe_debug_free(d);
			return nt_fail(err, NT_EFORMAT, eoff,
				       "assembly: debug entry %" PRIu32 " (type %" PRIu32
				       ") data outside the file",
				       i, type);
		}
		const uint8_t *q = p + ptr;
		if (type == 2) {
			if (size < 24 || nt_le32(q) != RSDS_SIGNATURE)
				continue; /* another CodeView flavour */
			int portable = minor == 0x504d;
			if (d->has_codeview && (portable_cv || !portable))
				continue; /* the portable PDB's entry wins */
			d->has_codeview = 1;
			portable_cv = portable;
			memcpy(d->guid, q + 4, 16);
			d->age = nt_le32(q + 20);
			d->stamp = stamp;
			size_t l = 0;
			while (24 + l < size && q[24 + l] && l + 1 < sizeof d->pdb_path)
				l++;
			memcpy(d->pdb_path, q + 24, l);
			d->pdb_path[l] = '\0';
		} else if (!d->embedded) {
			if (size < 8 || nt_le32(q) != MPDB_SIGNATURE) {
				nt_pe_debug_free(d);
				return nt_fail(err, NT_EFORMAT, ptr,
					       "assembly: embedded PDB entry without its MPDB signature");
			}
			int rc = inflate_pdb(q + 8, size - 8, (size_t)ptr + 8, nt_le32(q + 4), d, err);
			if (rc) {
				nt_pe_debug_free(d);
				return rc;
			}
		}
	}
	return 0;
}
