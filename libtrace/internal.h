/* SPDX-License-Identifier: MIT */
/* internal.h - definitions shared between libnettrace modules (not installed):
 * error helpers, overflow-checked sizes, growable arrays, UTF conversions. */
#ifndef NT_INTERNAL_H
#define NT_INTERNAL_H

#include "config.h"
#ifndef PACKAGE_VERSION /* sources compiled outside the build (bench/): configure.ac has it */
#define PACKAGE_VERSION "unknown"
#endif
#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "nettrace.h"

#define NT_ASSERT(x) assert(x)
#define NT_UNUSED __attribute__((unused))
#define NT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Sanity limits for sizes read from files (each documented where it is checked). */
#define NT_MAX_BLOCK_SIZE (64u << 20)  /* runtime writes <= 100 KiB; one-collect similar */
#define NT_MAX_NAME_LEN 4096u          /* FastSerialization type names are short */
#define NT_MAX_STACK_DEPTH 65536u      /* deeper stacks are rejected as corrupt */

/* Fills err (if not already set: the first failure wins) and returns code. */
int nt_fail(nt_error *err, int code, uint64_t offset, const char *fmt, ...) NT_PRINTF(4, 5);
int nt_fail_errno(nt_error *err, int sys_errno, const char *fmt, ...) NT_PRINTF(3, 4);
/* nt_error_clear(), inline: what the per-event entry points (nt_reader_next) call, where
 * the call into error.c (through the PLT in the shared library) cost more than the four
 * stores it makes. */
static inline void nt_err_clear(nt_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->sys_errno = 0;
	err->offset = NT_NO_OFFSET;
	err->msg[0] = '\0';
}

/* Copies the caller's options struct src (NULL: all defaults) into dst (dst_sz bytes, the
 * library's sizeof; zeroed first, dst's sz set to dst_sz), as opts.c explains: NT_EINVAL
 * when src's sz is below min_sz (the struct's size in its first released version) or when
 * src is larger than dst_sz with non-zero bytes beyond it. what names the struct in the
 * message ("reader options"). */
int nt_opts_load(void *dst, size_t dst_sz, size_t min_sz, const void *src, const char *what,
		 nt_error *err);
/* Stores val (lib_sz bytes, a struct that starts with size_t sz) into the caller's output
 * struct out, whose sz the caller set: at most that many bytes, out's sz kept. Returns 0,
 * or -1 (nothing written) when out's sz is below min_sz (not set) or absurd. */
int nt_out_store(void *out, const void *val, size_t lib_sz, size_t min_sz);

/* a*b with overflow check; returns 0 and sets *out, or -1 on overflow. */
static inline int nt_mul_size(size_t a, size_t b, size_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* Grows *pp (element size esz, capacity *cap) to hold at least need elements.
 * Returns 0 or -1 on overflow/out of memory (then *pp is unchanged). */
int nt_grow(void **pp, size_t *cap, size_t need, size_t esz);

/* Binary search: sets lo to the number of leading indexes i in [0, n) for which the
 * expression before (in terms of i, evaluated O(log n) times) holds, when it holds for
 * a prefix of them and for none after. Over an array sorted by key, "a[i].key < k"
 * gives the first entry >= k, "a[i].key <= k" one past the last entry <= k. */
#define NT_PARTITION(lo, n, i, before)                                                     \
	do {                                                                                 \
		size_t nt_hi_ = (n);                                                         \
		(lo) = 0;                                                                    \
		while ((lo) < nt_hi_) {                                                      \
			size_t i = (lo) + (nt_hi_ - (lo)) / 2;                               \
			if (before)                                                          \
				(lo) = i + 1;                                                \
			else                                                                 \
				nt_hi_ = i;                                                  \
		}                                                                            \
	} while (0)

/* The nettrace format's numbers (doc/format/nettrace-format.md), named once for the
 * reader and the writer. Compressed event header flags (V4+ §3.2; in V6, 0x10 is the
 * label-list id and 0x20 is unused): */
enum {
	NT_ROW_META_ID = 0x01,    /* MetadataId follows */
	NT_ROW_SEQ_CAPTURE = 0x02, /* sequence delta, capture thread, processor follow */
	NT_ROW_THREAD = 0x04,     /* ThreadId (V6: thread index) follows */
	NT_ROW_STACK = 0x08,      /* StackId follows */
	NT_ROW_ACTIVITY = 0x10,   /* V4/V5: ActivityId (16 bytes) follows */
	NT_ROW_LABEL_LIST = 0x10, /* V6: LabelListId follows */
	NT_ROW_RELATED = 0x20,    /* V4/V5: RelatedActivityId (16 bytes) follows */
	NT_ROW_SORTED = 0x40,     /* the event is sorted (not carried over) */
	NT_ROW_PAYLOAD_SIZE = 0x80 /* PayloadSize follows */
};
/* V6 label kinds (kind & NT_LABEL_KIND_MASK; NT_LABEL_LAST marks a list's last label). */
enum {
	NT_LABEL_ACTIVITY_ID = 1, NT_LABEL_RELATED_ACTIVITY_ID = 2, NT_LABEL_TRACE_ID = 3,
	NT_LABEL_SPAN_ID = 4, NT_LABEL_KEY_VALUE = 5, NT_LABEL_KEY_INT = 6, NT_LABEL_OPCODE = 7,
	NT_LABEL_KEYWORDS = 8, NT_LABEL_LEVEL = 9, NT_LABEL_VERSION = 10
};
#define NT_LABEL_KIND_MASK 0x7Fu
#define NT_LABEL_LAST 0x80u
/* Event ids of Microsoft-Windows-DotNETRuntime (NT_PROVIDER_RUNTIME) and of its rundown
 * provider (NT_PROVIDER_RUNDOWN) that the library reads; the two number differently. */
enum {
	NT_RT_GC_START = 1, NT_RT_GC_END = 2, NT_RT_GC_RESTART_EE_END = 3,
	NT_RT_GC_SUSPEND_EE_BEGIN = 9,
	NT_RT_METHOD_DC_START_VERBOSE_V2 = 139, NT_RT_METHOD_DC_END_VERBOSE_V2 = 140,
	NT_RT_METHOD_LOAD_VERBOSE = 143, NT_RT_METHOD_UNLOAD_VERBOSE = 144,
	NT_RT_DOMAIN_MODULE_LOAD = 151, NT_RT_MODULE_LOAD = 152, NT_RT_MODULE_UNLOAD = 153,
	NT_RD_METHOD_DC_START_VERBOSE = 143, NT_RD_METHOD_DC_END_VERBOSE = 144,
	NT_RD_DOMAIN_MODULE_DC_START = 151, NT_RD_DOMAIN_MODULE_DC_END = 152,
	NT_RD_MODULE_DC_START = 153, NT_RD_MODULE_DC_END = 154
};

/* The library's hashing (hash.c), one of each: nt_mix64 spreads a 64-bit key (the
 * splitmix64 finaliser: ids in files are often small, sequential or adversarial);
 * nt_fnv1a is 64-bit FNV-1a over bytes, from h (NT_FNV1A_BASIS to start), for short
 * texts and keys built piece by piece; nt_hash_bytes hashes a long text 8 bytes at a time
 * (frame names are often long signatures). Hash values only place keys in tables: no
 * output depends on them. */
static inline uint64_t nt_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}
#define NT_FNV1A_BASIS 0xcbf29ce484222325ull
static inline uint64_t nt_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}
uint64_t nt_hash_bytes(const char *s, size_t n);

/* Hash map from 64-bit ids found in files (capture thread ids, V6 thread indexes,
 * metadata ids) to array indexes (hash.c). Lookups must stay O(1): with a linear scan, a
 * file holding n distinct ids costs O(n^2) (a 1 MB file could take minutes). A key and
 * its value share a slot, so a lookup that misses the cache waits for one line, not two
 * (the per-sample group lookup of profile.c is one). */
typedef struct nt_idslot {
	uint64_t key;
	uint32_t val; /* index + 1; 0 marks an empty slot */
} nt_idslot;
typedef struct nt_idmap {
	nt_idslot *slots;
	size_t cap;     /* power of two, or 0 */
	size_t n;
} nt_idmap;
/* Inserts or replaces key -> index (index < UINT32_MAX). Returns 0 or -1 when out of memory. */
int nt_idmap_put(nt_idmap *m, uint64_t key, size_t index);
/* Returns 1 and sets *index when key is present, else 0. */
static inline int nt_idmap_get(const nt_idmap *m, uint64_t key, size_t *index)
{
	if (!m->cap)
		return 0;
	for (size_t h = (size_t)nt_mix64(key) & (m->cap - 1);; h = (h + 1) & (m->cap - 1)) {
		const nt_idslot *e = &m->slots[h];
		if (!e->val)
			return 0;
		if (e->key == key) {
			*index = e->val - 1;
			return 1;
		}
	}
}
void nt_idmap_free(nt_idmap *m);

/* Open-addressed index slots over a caller's array of n entries (hash.c): slot = index +
 * 1, 0 empty, linear probing from hash & (cap - 1); the caller probes and compares its own
 * keys, and grows before the table is half full ((n + 1) * 2 > cap). nt_slots_regrow
 * doubles *cap (first: initial, a power of two) and re-slots every entry i for which
 * hash_of(ctx, i, &hash) returns non-zero (an entry it returns 0 for stays out: a table
 * over a part of an array). nt_slots_grow is the same for entries that carry their 64-bit
 * hash at byte hash_off of a stride-byte entry. Both return 0, or -1 out of memory with
 * the old slots kept. */
typedef int (*nt_slot_hash_fn)(const void *ctx, size_t i, uint64_t *hash);
int nt_slots_regrow(uint32_t **slots, size_t *cap, size_t initial, size_t n,
		    nt_slot_hash_fn hash_of, const void *ctx);
int nt_slots_grow(uint32_t **slots, size_t *cap, size_t initial, const void *entries,
		  size_t n, size_t stride, size_t hash_off);

/* The string pool (strpool.c): copies of texts that stay where they are until
 * nt_strpool_free() (chunks never move), and interning: equal texts share one copy and
 * get dense ids 0, 1, ... in order of first appearance (ents[id]). Zero-initialise it.
 * Every function returns NULL / -1 when out of memory (or past 2^32-2 texts). */
typedef struct nt_strchunk nt_strchunk;
typedef struct nt_strent {
	const char *s;  /* the copy, NUL-terminated */
	size_t len;
	uint64_t hash;  /* nt_strpool_hash() of it */
} nt_strent;
typedef struct nt_strpool {
	nt_strchunk *chunks;
	nt_strent *ents;  /* interned texts, by id */
	size_t n, entcap;
	uint32_t *slots;  /* open addressing over ents: id + 1, 0 empty */
	size_t slotcap;
} nt_strpool;
void nt_strpool_free(nt_strpool *p);
/* Forgets every text (their pointers die) but keeps memory for the next ones. */
void nt_strpool_reset(nt_strpool *p);
/* A copy of s[0..n) plus a NUL, not interned (s may hold NULs). */
char *nt_strpool_dup(nt_strpool *p, const char *s, size_t n);
/* The interned copy of s[0..n). */
const char *nt_strpool_intern(nt_strpool *p, const char *s, size_t n);
/* The hash the pool keys texts by, for callers that keep it (nt_strpool_intern_h). */
uint64_t nt_strpool_hash(const char *s, size_t n);
/* The id of s[0..n) (hash h), interning it first if new; or -1. */
int64_t nt_strpool_intern_h(nt_strpool *p, const char *s, size_t n, uint64_t h);
/* The id of s[0..n) (hash h) when it is interned, else -1. */
int64_t nt_strpool_find(const nt_strpool *p, const char *s, size_t n, uint64_t h);

/* Frame matches of one rule set (category.c) by the address of the frame's name, for
 * callers that match many stacks over the same interned names (the profile's finish):
 * the same results as nt_rules_match() and nt_subsystems_match(), each distinct name
 * matched once. Zero-initialise; a memo serves the first rule set it is used with
 * (another one is matched without it); free with nt_rules_memo_free(). Names must stay
 * in place, unchanged, while the memo is used. Out of memory, it matches uncached. */
typedef struct nt_rules_memo {
	const nt_rules *rules;
	nt_idmap map;  /* name address -> index into res */
	uint64_t *res; /* best outer rule << 32 | best plain rule */
	size_t n, cap;
} nt_rules_memo;
int nt_rules_match_memo(const nt_rules *rules, nt_rules_memo *memo, const char *const *frames,
			size_t depth);
int nt_subsystems_match_memo(const nt_subsystems *s, nt_rules_memo *memo,
			     const char *const *frames, size_t depth, int32_t *frame_subsystems);
void nt_rules_memo_free(nt_rules_memo *memo);

/* A decoding thread (pipeline.c): nt_pipe_next() returns what nt_reader_next(r) would, in
 * the same order, as copies made on a second thread (valid until the next call). The
 * reader must not be used by anyone else until nt_pipe_free(), which stops and joins the
 * thread (it may be called before the end). Only for inputs whose reads cannot block
 * forever (files, not pipes or sockets): the thread is joined, not cancelled. */
typedef struct nt_pipe nt_pipe;
int nt_pipe_start(nt_pipe **out, nt_reader *r, nt_error *err);
int nt_pipe_next(nt_pipe *pp, const nt_event **ev, nt_error *err);
void nt_pipe_free(nt_pipe *pp);


/* JSON string escaping (json.c), the one escaper of the library and, through
 * nt_json_write_string(), of the tools: put receives the escaped text of s[0..n) (without
 * quotes) in pieces; the result is valid UTF-8 JSON whatever s holds. */
/* Length of the UTF-8 sequence starting at s (n bytes left), or 0 when it is invalid
 * (truncated, overlong, surrogate, beyond U+10FFFF, or U+FFFE/U+FFFF, which XML forbids). */
size_t nt_utf8_seq(const unsigned char *s, size_t n);
typedef void (*nt_put_fn)(void *ctx, const char *s, size_t n);
void nt_json_escape(const char *s, size_t n, nt_put_fn put, void *ctx);

/* Buffered output (out.c); the first failure sticks in rc and later writes are dropped, so
 * callers check rc once at the end (after nt_out_flush). With a sink, the text goes to it in
 * large writes; without one (nt_out_init(o, NULL), or a zeroed nt_out), the bytes stay in
 * memory (request bodies, Native blocks, replies): nt_out_data/len/reset/cstr/take read and
 * reuse them, nt_out_end frees them. */
typedef struct nt_out {
	const nt_sink *sink;  /* NULL: a memory buffer */
	char *buf;
	size_t len, cap;
	int rc;               /* 0, NT_ENOMEM, or the sink's error */
} nt_out;

void nt_out_init(nt_out *o, const nt_sink *sink);
/* Flushes what is buffered (a memory buffer keeps it); returns o->rc. */
int nt_out_flush(nt_out *o);
/* Flushes and frees the buffer; returns o->rc. */
int nt_out_end(nt_out *o);
/* Room for n more bytes without a flush or a reallocation: 0, or -1 with o->rc set. The
 * caller may then write them at nt_out_tail() and count them with nt_out_advance(). */
int nt_out_reserve(nt_out *o, size_t n);
static inline char *nt_out_tail(nt_out *o)
{
	return o->buf + o->len;
}
static inline void nt_out_advance(nt_out *o, size_t n)
{
	o->len += n;
}
/* A memory buffer's bytes (NULL before the first) and their count; reset empties it and
 * keeps the allocation (and rc). */
static inline char *nt_out_data(const nt_out *o)
{
	return o->buf;
}
static inline size_t nt_out_len(const nt_out *o)
{
	return o->len;
}
static inline void nt_out_reset(nt_out *o)
{
	o->len = 0;
}
/* The bytes as a NUL-terminated string (the NUL not counted in nt_out_len), valid until the
 * next write; NULL when o->rc is set. */
const char *nt_out_cstr(nt_out *o);
/* The NUL-terminated bytes, malloc'd and now the caller's (o is empty again, rc kept);
 * NULL when o->rc is set. */
char *nt_out_take(nt_out *o);
void nt_out_put(nt_out *o, const char *s, size_t n);
void nt_out_str(nt_out *o, const char *s);
void nt_out_printf(nt_out *o, const char *fmt, ...) NT_PRINTF(2, 3);
/* v in decimal, as "%" PRIu64 prints it, without a format string: the exporters write
 * one number per frame of every sample (speedscope's timelines), where printf was most
 * of their time. nt_fmt_u64 writes the digits to buf (at least 21 bytes), NUL-terminated,
 * and returns their count. */
void nt_out_u64(nt_out *o, uint64_t v);
size_t nt_fmt_u64(char *buf, uint64_t v);
/* Text as XML character data or attribute value: & < > " ' escaped, control characters
 * other than tab become '?', and invalid UTF-8 becomes U+FFFD, so no frame name can end
 * the element, open a tag or make the document ill-formed. */
void nt_out_xml(nt_out *o, const char *s, size_t n);
/* Text inside a JSON string (without the quotes), escaped by nt_json_escape (json.c). */
void nt_out_json(nt_out *o, const char *s, size_t n);

/* Universal.System / Universal.Events (universal.c, doc/format/universal-events.md). */
enum { NT_UNIV_SYSTEM = 1, NT_UNIV_CPU, NT_UNIV_CSWITCH, NT_UNIV_OTHER };
/* Which Universal event m describes (NT_UNIV_*), 0 for any other provider. */
int nt_meta_universal(const nt_metadata *m);
typedef struct nt_universal nt_universal;
int nt_universal_new(nt_universal **out, const struct nt_native_opts *nopts, nt_error *err);
void nt_universal_free(nt_universal *u);
/* Records a Universal event of kind (nt_meta_universal()); cpu and cswitch give their
 * Value in *value. A malformed payload fails with NT_EFORMAT at the event's offset. */
int nt_universal_add_event(nt_universal *u, const nt_event *ev, uint32_t ps, int kind,
			   uint64_t *value, nt_error *err);
size_t nt_universal_process_count(const nt_universal *u);
int nt_universal_process_at(const nt_universal *u, size_t i, uint64_t *pid, const char **name);
const char *nt_universal_process_name(const nt_universal *u, uint64_t pid);
/* The name of ip in process pid (lookup_ip: ip - 1 for return addresses): *sym from a
 * ProcessSymbol range, else *frames and *n from the mapped ELF file's DWARF/ELF symbols;
 * *file is the mapping's file name (NULL outside every mapping). Fails only with NT_ENOMEM. */
int nt_universal_resolve(nt_universal *u, uint64_t pid, uint64_t ip, uint64_t lookup_ip,
			 const char **sym, const char **file,
			 const struct nt_native_frame **frames, size_t *n, nt_error *err);
const struct nt_native *nt_universal_native(const nt_universal *u, size_t proc_index);

/* strdup that returns NULL on NULL */
char *nt_strdup(const char *s);

/* The file name of a path without its directories ('/' or '\\' separated). */
const char *nt_path_base(const char *path);

/* Which of the runtime's two providers wrote m: 1 the runtime, 2 its rundown, else (or
 * m NULL) 0. */
enum { NT_CLR_RUNTIME = 1, NT_CLR_RUNDOWN = 2 };
int nt_clr_provider(const nt_metadata *m);

/* Converts a UTF-16LE NUL-terminated string at p (at most len bytes) into a new UTF-8
 * string (*out, malloc'd). Returns bytes consumed including the terminator, 0 if
 * unterminated, (size_t)-1 on allocation failure. */
size_t nt_utf16z_dup(const uint8_t *p, size_t len, char **out);

/* The UTF-16z string at *pos of ev's payload as new UTF-8 (malloc'd), *pos moved past its
 * terminator; NULL if it is unterminated, *pos is beyond the payload, or out of memory. */
char *nt_payload_utf16z(const nt_event *ev, size_t *pos);

/* nt_event_field() for a field read at every event of a record (payload.c): ref remembers,
 * for the last record it saw, where the field is when every field before it is a scalar
 * of fixed size (its byte offset: no walk over the fields, no name compared), and falls
 * back to nt_event_field() otherwise. Same result as nt_event_field(ev, pointer_size,
 * name, out) for every event. Start with a zeroed ref; one ref per name. */
typedef struct nt_field_ref {
	const nt_metadata *meta; /* the record the rest is for; NULL: none yet */
	uint32_t ptrsize;        /* and the pointer size */
	int32_t off;             /* byte offset; NT_FIELD_WALK: ask nt_event_field() */
	uint32_t type, size;     /* the field's type and size when off >= 0 */
} nt_field_ref;
#define NT_FIELD_WALK (-1)
#define NT_FIELD_NONE (-2)     /* no field of that name: 0 */
int nt_event_field_ref(const nt_event *ev, uint32_t pointer_size, const char *name,
		       nt_field_ref *ref, nt_value *out);

/* Appends the UTF-16LE encoding of UTF-8 s plus a NUL to a growable buffer. */
int nt_utf8_to_utf16z(const char *s, uint8_t **buf, size_t *len, size_t *cap);

/* Unix-epoch nanoseconds for a SYSTEMTIME (0 outside the years 1678..2262 that int64 ns
 * hold), and ISO-8601 text "YYYY-MM-DDTHH:MM:SS.mmmZ". */
int64_t nt_systemtime_to_unix_ns(const uint16_t st[8]);
void nt_systemtime_iso(const uint16_t st[8], char buf[32]);

/* Metadata parsing (metadata.c). */
typedef struct nt_meta_store nt_meta_store;
nt_meta_store *nt_meta_store_new(void);
void nt_meta_store_free(nt_meta_store *ms);
/* V4/V5 metadata payload -> record. The payload bytes are copied. */
int nt_meta_parse_v5(nt_meta_store *ms, const uint8_t *p, size_t len, uint64_t offset,
		     nt_error *err);
/* V6 metadata row (after the uint16 size). */
int nt_meta_parse_v6(nt_meta_store *ms, const uint8_t *p, size_t len, uint64_t offset,
		     nt_error *err);
const nt_metadata *nt_meta_lookup(const nt_meta_store *ms, uint32_t id);
size_t nt_meta_count(const nt_meta_store *ms);
const nt_metadata *nt_meta_at(const nt_meta_store *ms, size_t i);
/* Built-in field layout of schema-less runtime events, or NULL. */
const nt_field *nt_builtin_layout(const char *provider, uint32_t event_id, uint32_t version,
				  uint32_t *nfields, const char **name);

/* The counter of events of a record of a store (nt_meta_lookup(), nt_meta_at(); no other
 * nt_metadata) that the reader keeps for nt_reader_metadata_events(). */
uint64_t *nt_meta_events(const nt_metadata *m);

/* nt_event_is_sample() in two halves (here and payload.c): what events of record m are, and a
 * sample's type. The kind is worked out once per record, when metadata.c parses it: its
 * provider then points at nt_sample_provider[0] (NT_META_SAMPLE) or [1]
 * (NT_META_NATIVE_SAMPLE, a native sampler's ThreadSample: version >= 1 with a State
 * field), so for the reader's records it is a pointer comparison; for an nt_metadata a
 * caller made it is worked out from the text (nt_meta_sample_kind_text(), which ignores the
 * marks). 0: not samples (or m NULL). */
enum { NT_META_SAMPLE = NT_SAMPLE_KIND_PROFILER, NT_META_NATIVE_SAMPLE = NT_SAMPLE_KIND_NATIVE };
extern const char nt_sample_provider[2][sizeof NT_PROVIDER_SAMPLER];
int nt_meta_sample_kind_text(const nt_metadata *m);
static inline int nt_meta_sample_kind(const nt_metadata *m)
{
	if (!m || m->event_id != 0)
		return 0;
	if (m->provider == nt_sample_provider[0])
		return NT_META_SAMPLE;
	if (m->provider == nt_sample_provider[1])
		return NT_META_NATIVE_SAMPLE;
	return nt_meta_sample_kind_text(m);
}
static inline int nt_meta_is_sample(const nt_metadata *m)
{
	return nt_meta_sample_kind(m) != 0;
}
/* The Type field as written: what TraceEvent and pyroscope read (the compat modes). */
static inline uint32_t nt_event_sample_type_raw(const nt_event *ev)
{
	return ev->payload_len >= 4 ? nt_le32(ev->payload) : 0;
}
/* The type of sample ev, whose record's kind is kind: as written, but External for a
 * native sampler's running sample (payload.c). */
static inline uint32_t nt_sample_type(const nt_event *ev, int kind)
{
	uint32_t t = nt_event_sample_type_raw(ev);
	return t == NT_SAMPLE_MANAGED && kind == NT_META_NATIVE_SAMPLE ? NT_SAMPLE_EXTERNAL : t;
}

/* The readable form of a C++ or Rust symbol name (demangle.c), malloc'd, or NULL when name
 * is not mangled (or cannot be demangled). */
char *nt_demangle(const char *name);

/* Names cut to a width (views.c, used by tree-print.c): the display columns of UTF-8 text, and
 * where to cut s (n bytes) to fit cols columns (at least NT_MIN_NAME_COLUMNS): returns 0
 * when it fits, else 1 with the head's bytes, where the tail starts and the mark between
 * them ("..." with ascii, else U+2026). */
#define NT_MIN_NAME_COLUMNS 24u
size_t nt_text_columns(const char *s, size_t n);
int nt_text_cut_middle(const char *s, size_t n, size_t cols, int ascii, size_t *head,
		       size_t *tail_at, const char **mark);
/* tree-print.c's time format: "4.512 s", "11.217 ms"... (NT_TREE_UNIT_AUTO) or the plain number
 * in a fixed unit. */
void nt_tree_fmt_time(char *b, size_t n, double ns, int unit);
/* The tree views' one reading of nt_tree_print_opts (tree-print.c; nt_tree_write_text,
 * nt_tree_write_json, nt_tree_write_diff, nt_butterfly_write): copies opts (NULL:
 * defaults) into *po, turns unit 0 into NT_TREE_UNIT_AUTO and checks unit and
 * min_percent. Returns 0 or NT_EINVAL with err set. */
int nt_tree_print_opts_load(nt_tree_print_opts *po, const nt_tree_print_opts *opts,
			    nt_error *err);

/* The samples of a profile read with nt_profile_opts.sequence, in reading order
 * (profile.c): group index (nt_sample_group.group), ns since the session start, and the
 * weight charged (compat modes; 0: the session's interval, the group's weight / samples).
 * An entry with NT_SEQ_CHARGE is no sample but time charged to the group without one (a
 * GC pause the thread sat in): it starts at time_ns and lasts weight_ns; the group's
 * weight includes it, its sample count does not. */
#define NT_SEQ_CHARGE 1u
typedef struct nt_seqent {
	uint32_t group;
	uint32_t flags;       /* NT_SEQ_* */
	int64_t time_ns;
	double weight_ns;
} nt_seqent;
const nt_seqent *nt_profile_sequence(const nt_profile *p, size_t *n);

/* The work of a selection for one profile (select.c): each stack's selected frames, made
 * once. key identifies the stack (and the TraceEvent pseudo-frame it carries). */
typedef struct nt_selcache nt_selcache;
int nt_selcache_new(nt_selcache **out, const nt_select *s);
void nt_selcache_free(nt_selcache *c);
/* Returns 1 (kept; out, src, n: frames leaf first and where each comes from, borrowed
 * until the next call), 0 (dropped) or NT_ENOMEM. The names stay valid until the cache is
 * freed. */
int nt_selcache_apply(nt_selcache *c, size_t key, const char *const *frames, uint32_t depth,
		      const char *const **out, const uint32_t **src, uint32_t *n);

#endif
