/* SPDX-License-Identifier: MIT */
/* nettrace.h - public API of libnettrace: read, write and analyse .NET EventPipe
 * "nettrace" traces (V4/V5 FastSerialization container, V5 metadata tags, V6 blocks).
 *
 * Conventions (see doc/man/libnettrace.3):
 *  - functions that can fail return int: 0 on success, a negative NT_E* code on failure,
 *    and fill the caller's nt_error (which may be NULL);
 *  - iterators return 1 when they produce an item, 0 at a clean end, < 0 on error;
 *  - a "const T *" returned by a function is borrowed; its comment says how long it lives;
 *  - objects are created by nt_X_open()/nt_X_new() and released by nt_X_free(), which
 *    accepts NULL;
 *  - option structs start with "size_t sz" (set it to sizeof the struct: initialise them
 *    with NT_INIT); NULL = defaults, and a zero field means that field's default.
 *    Every function that takes options checks them the same way: NT_EINVAL when sz is
 *    smaller than the struct's first released version, or larger than the library knows
 *    with non-zero bytes in the part it does not know (a newer option it cannot honour);
 *  - output structs the caller allocates and a function fills (nt_store_stats,
 *    nt_when_grid, nt_tree_when_info, nt_diag_info) start with "size_t sz" too, set by the
 *    caller (NT_INIT): the library writes that many bytes at most, and rejects a sz below
 *    the struct's first released version (NT_EINVAL, or the "no result" return value of a
 *    function without an nt_error). nt_value, nt_error and nt_sink are fixed: never grown;
 *  - every public function that takes an nt_error clears it on entry, so a reused
 *    nt_error always describes the call that just failed (or is clear after a success);
 *  - handles (nt_reader, nt_writer, nt_profile, ...) have no internal locking: one thread
 *    uses a handle at a time unless its section says more; distinct handles are
 *    independent. A handle's nt_X_free() ends the life of everything it returned.
 * The library never prints, never exits and never aborts because of file contents.
 *
 * Size: about 2,000 lines, over the project's ~1,200 per file, on purpose: the whole
 * public API is this one header, each prototype with its contract, so that a caller
 * includes one file and tests/build/check-api-docs.sh checks every prototype in one place.
 * Its sections follow the layers of doc/HACKING.md. */
#ifndef NETTRACE_H
#define NETTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NT_BUILDING_LIB) && defined(__GNUC__)
#define NT_API __attribute__((visibility("default")))
#else
#define NT_API
#endif

/* Zero-initialises a struct that starts with "size_t sz" (options, and the output structs
 * the caller allocates and the library fills) and sets its sz:
 *   nt_reader_opts o = NT_INIT(nt_reader_opts); */
#ifdef __cplusplus
#define NT_INIT(type) { sizeof(type) }
#else
#define NT_INIT(type) { .sz = sizeof(type) }
#endif

/* The library's version, "MAJOR.MINOR.PATCH" (configure.ac's AC_INIT, the one place it is
 * defined). Static string, never NULL. */
NT_API const char *nt_version(void);

/* ---------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------- */

enum nt_errcode {
	NT_OK = 0,
	NT_EFORMAT = -1,      /* malformed input */
	NT_ETRUNC = -2,       /* input ends early */
	NT_EUNSUPPORTED = -3, /* valid but unsupported (e.g. a newer major version) */
	NT_EIO = -4,          /* read/write failure; sys_errno says why */
	NT_ENOMEM = -5,       /* allocation failed */
	NT_EINVAL = -6,       /* bad argument (API misuse or bad user option) */
	NT_ELIMIT = -7,       /* a size in the file exceeds a documented sanity limit */
	NT_ESQL = -8,         /* SQLite error */
	NT_EINTERNAL = -9,    /* a bug */
};

#define NT_NO_OFFSET UINT64_MAX

typedef struct nt_error {
	int code;        /* an nt_errcode, 0 if nothing failed */
	int sys_errno;   /* errno when code == NT_EIO; SQLite's primary result code for the
			    NT_ESQL of nt_store_query(); else 0 */
	uint64_t offset; /* byte offset in the input, NT_NO_OFFSET if none */
	char msg[256];   /* lowercase, no trailing period, names the values involved */
} nt_error;

/* Static description of an error code ("malformed input", ...). Never NULL. */
NT_API const char *nt_strerror(int code);

/* Resets *err to "no error". */
NT_API void nt_error_clear(nt_error *err);

/* ---------------------------------------------------------------------------------------
 * Output sink: exporters and the writer never open files, they write through a sink.
 * ------------------------------------------------------------------------------------- */

typedef struct nt_sink {
	/* Writes len bytes; returns 0 or a negative NT_E* code. */
	int (*write)(void *ctx, const void *buf, size_t len);
	void *ctx;
} nt_sink;

/* A sink writing to a stdio stream (errors: NT_EIO with errno). */
NT_API nt_sink nt_sink_stdio(FILE *fp);

/* A growable in-memory buffer: zero-initialise it, write through nt_sink_membuf(). */
typedef struct nt_membuf {
	uint8_t *data;
	size_t len;
	size_t cap;
} nt_membuf;
/* A sink appending to *mb (borrowed: mb must outlive the sink); its write fails with
 * NT_ENOMEM when the buffer cannot grow (the bytes written before stay). The caller owns
 * mb->data and frees it with nt_membuf_free(). */
NT_API nt_sink nt_sink_membuf(nt_membuf *mb);
/* Frees mb->data and zeroes *mb, which can be used again (accepts NULL). */
NT_API void nt_membuf_free(nt_membuf *mb);

/* Writes s[0..n) to sink as a quoted JSON string that is valid UTF-8 whatever s holds:
 * " and \ escaped, \n \r \t by name, other control characters and DEL as \u00XX,
 * invalid UTF-8 bytes as U+FFFD. The library's own JSON (payloads, exporters) uses the
 * same escaping. s may be NULL when n is 0. Returns 0 or the sink's error. */
NT_API int nt_json_write_string(const nt_sink *sink, const char *s, size_t n);

/* ---------------------------------------------------------------------------------------
 * Trace header
 * ------------------------------------------------------------------------------------- */

typedef struct nt_trace_header {
	uint32_t format_version;    /* 4 (V4/V5 FastSerialization container) or 6 */
	uint32_t minor_version;     /* V6 minor version, 0 otherwise */
	uint16_t sync_time_utc[8];  /* SYSTEMTIME: year, month, dow, day, h, m, s, ms */
	uint64_t sync_qpc;          /* tick value at sync_time_utc; session start */
	uint64_t qpc_frequency;     /* ticks per second, > 0 */
	uint32_t pointer_size;      /* 4 or 8 */
	uint32_t process_id;
	uint32_t processors;
	uint32_t expected_sampling_ns; /* declared sampler period in ns (untrusted) */
	uint32_t trace_object_version; /* V4/V5: the Trace object's version (4) */
} nt_trace_header;

/* ---------------------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------------------- */

/* Field type codes (System.TypeCode numbering, plus V6 additions). */
enum nt_type {
	NT_TYPE_OBJECT = 1,
	NT_TYPE_BOOL32 = 3,
	NT_TYPE_CHAR = 4,
	NT_TYPE_I8 = 5,
	NT_TYPE_U8 = 6,
	NT_TYPE_I16 = 7,
	NT_TYPE_U16 = 8,
	NT_TYPE_I32 = 9,
	NT_TYPE_U32 = 10,
	NT_TYPE_I64 = 11,
	NT_TYPE_U64 = 12,
	NT_TYPE_F32 = 13,
	NT_TYPE_F64 = 14,
	NT_TYPE_DECIMAL = 15,
	NT_TYPE_DATETIME = 16,
	NT_TYPE_GUID = 17,
	NT_TYPE_STRING = 18,  /* UTF-16LE, NUL-terminated */
	NT_TYPE_ARRAY = 19,   /* uint16 count then elements */
	NT_TYPE_VARINT = 20,  /* V6: zig-zag varint64 */
	NT_TYPE_VARUINT = 21, /* V6: varuint64 */
	NT_TYPE_FIXED_ARRAY = 22,
	NT_TYPE_UTF8CHAR = 23,
	NT_TYPE_RELLOC = 24,
	NT_TYPE_DATALOC = 25,
	NT_TYPE_BOOL8 = 26,
	/* Built-in layout only (not a file type code): pointer-sized integer. */
	NT_TYPE_POINTER = 100,
	/* Not a file type code: a uint16 byte length then UTF-8 (no terminator). The
	 * Universal.System / Universal.Events providers write their strings so while their
	 * metadata says 23 (UTF8CHAR); the reader maps those fields to this type
	 * (doc/format/universal-events.md). nt_value.raw/raw_len: the UTF-8 bytes. */
	NT_TYPE_UTF8_STRING16 = 101,
};

typedef struct nt_field {
	const char *name;             /* UTF-8 */
	uint32_t type;                /* enum nt_type */
	uint32_t elem_type;           /* element type for arrays, else 0 */
	uint32_t fixed_count;         /* FixedLengthArray element count */
	const struct nt_field *fields; /* nested fields (OBJECT, or array of OBJECT) */
	uint32_t nfields;
} nt_field;

typedef struct nt_metadata {
	uint32_t id;           /* metadata id in the file */
	const char *provider;  /* UTF-8 provider name */
	uint32_t event_id;
	const char *name;      /* event name; for schema-less runtime events, the built-in name */
	uint64_t keywords;
	uint32_t version;
	uint32_t level;
	uint32_t opcode;       /* from a V5 OpCode tag or V6 optional metadata, else 0 */
	const nt_field *fields; /* fields from the file or, if the file has none, built in */
	uint32_t nfields;
	int builtin_layout;    /* 1 when fields come from libnettrace's built-in table */
	int file_has_name;     /* 1 when the file itself carried a non-empty event name */
	const uint8_t *raw;    /* V4/V5 only: the raw metadata payload bytes (for rewriting);
				  NULL for V6 records */
	size_t raw_len;
	/* Appended in 1.1 (the library fills the records it returns and never reads this from
	 * one a caller made): what nt_event_is_sample() answers for the record's events,
	 * worked out once when the record is read, so that a caller testing every event needs
	 * no call: enum nt_sample_kind. */
	uint32_t sample_kind;
} nt_metadata;

/* nt_metadata.sample_kind: the record's events are not samples (0), SampleProfiler samples
 * (their type, enum nt_sample_type, is the payload's first 4 bytes, little-endian, 0 in a
 * shorter payload), or a native sampler's ThreadSamples (the same, but a Managed type is
 * External: doc/format/sampler-events.md). */
enum nt_sample_kind { NT_SAMPLE_KIND_NONE = 0, NT_SAMPLE_KIND_PROFILER = 1,
		      NT_SAMPLE_KIND_NATIVE = 2 };

/* ---------------------------------------------------------------------------------------
 * Events
 * ------------------------------------------------------------------------------------- */

typedef struct nt_event {
	const nt_metadata *meta;
	uint64_t offset;            /* byte offset of the event blob in the input */
	uint32_t seq;               /* sequence number (per capture thread) */
	uint64_t thread_id;         /* OS thread the event is about */
	uint64_t capture_thread_id; /* OS thread that wrote it (sampler thread for samples) */
	uint32_t processor;         /* 0xFFFFFFFF when unknown */
	uint64_t timestamp;         /* raw ticks */
	int64_t time_ns;            /* ns since sync_qpc (may be negative) */
	uint8_t activity_id[16];
	uint8_t related_activity_id[16];
	uint32_t stack_id;          /* 0 if none */
	const uint64_t *stack;      /* IPs, leaf first, widened to 64 bits */
	uint32_t stack_depth;
	const uint8_t *payload;
	uint32_t payload_len;
	uint8_t sorted;             /* IsSorted flag of the blob */
	uint64_t stack_key;         /* equal non-zero keys mean equal stacks, within one reader
				       (stack ids restart at every sequence point; this does
				       not): lets consumers cache per stack. 0: no stack */
	uint64_t process_id;        /* OS process of thread_id: V6 from the thread table row
				       (machine-wide traces hold many processes), else the
				       trace header's process id */
	/* Appended in 1.1 (the library fills nt_event and never reads this from one a caller
	 * made): process_id's index among the process ids of the reader's events, 0, 1, ...
	 * in order of first appearance (always 0 but in V6 traces), for per-process tables
	 * without a map. */
	uint32_t process_index;
} nt_event;

/* ---------------------------------------------------------------------------------------
 * Reader
 * ------------------------------------------------------------------------------------- */

typedef struct nt_reader nt_reader;

enum nt_reader_flags {
	/* Deliver events in file order instead of timestamp order (faster, no queueing). */
	NT_READ_FILE_ORDER = 1u << 0,
};

typedef struct nt_reader_opts {
	size_t sz;        /* sizeof(nt_reader_opts) */
	unsigned flags;   /* enum nt_reader_flags */
	const char *name; /* name used in messages, default: the path or "-" */
} nt_reader_opts;

/* Opens a trace. path "-" reads stdin. Reads and checks the header; on failure *out is
 * NULL and err says why (with the byte offset): NT_EIO (cannot open or read, sys_errno),
 * NT_EFORMAT / NT_ETRUNC / NT_EUNSUPPORTED (the header), NT_EINVAL (bad options),
 * NT_ENOMEM. On success the caller owns *out and frees it with nt_reader_free(); the reader
 * owns everything it returns (borrowed pointers, valid as each function says).
 * Thread safety: none; use one nt_reader per thread. */
NT_API int nt_reader_open_file(nt_reader **out, const char *path, const nt_reader_opts *opts,
			       nt_error *err);
/* As nt_reader_open_file(), from fd (a pipe works; errors likewise); the fd stays the
 * caller's: nt_reader_free() does not close it. */
NT_API int nt_reader_open_fd(nt_reader **out, int fd, const nt_reader_opts *opts, nt_error *err);
/* As nt_reader_open_file(), from memory (errors likewise); buf is borrowed, not copied:
 * it must outlive the reader, freed with nt_reader_free(). */
NT_API int nt_reader_open_mem(nt_reader **out, const void *buf, size_t len,
			      const nt_reader_opts *opts, nt_error *err);
/* Frees r and everything it returned; closes the file it opened (accepts NULL). */
NT_API void nt_reader_free(nt_reader *r);

/* The trace header; borrowed, valid for the reader's life, never NULL. */
NT_API const nt_trace_header *nt_reader_header(const nt_reader *r);

/* Produces the next event (timestamp order unless NT_READ_FILE_ORDER). *ev stays valid
 * until the next call. Returns 1, 0 at the end, or < 0 on error. In timestamp order,
 * events wait in per-thread queues until a sorted event or a sequence point releases
 * them; a region that would queue more than 512 MiB fails with NT_ELIMIT (read such a
 * file with NT_READ_FILE_ORDER). A truncated file yields
 * every complete event, then returns 0 and sets nt_reader_stats()->truncated plus the
 * warning in nt_reader_warning(). */
NT_API int nt_reader_next(nt_reader *r, const nt_event **ev, nt_error *err);

/* Counters collected while reading (complete once nt_reader_next() returned 0). */
typedef struct nt_reader_stats {
	uint64_t bytes;              /* bytes consumed */
	uint64_t blocks_event;
	uint64_t blocks_metadata;
	uint64_t blocks_stack;
	uint64_t blocks_sp;
	uint64_t blocks_other;       /* V6 thread/label/... blocks */
	uint64_t metadata_records;
	uint64_t events;             /* event blobs in complete EventBlocks */
	uint64_t events_sorted;      /* of which IsSorted */
	uint64_t stacks;             /* stacks defined */
	uint32_t max_stack_depth;
	uint64_t lost_events;        /* sequence-number gaps, all threads */
	uint64_t negative_ts_deltas; /* compressed timestamp deltas that wrapped */
	uint64_t missing_stacks;     /* events whose stack id was not defined in its region */
	int truncated;               /* the stream ended before its end tag */
	int end_tag;                 /* the end-of-stream marker was seen */
	uint64_t truncated_at;       /* offset where the incomplete object began */
	uint64_t first_timestamp, last_timestamp; /* min/max event timestamp (0 if none) */
} nt_reader_stats;
/* The reader's counters; borrowed, valid (and updated) for the reader's life, never NULL. */
NT_API const nt_reader_stats *nt_reader_stats_get(const nt_reader *r);

/* Lost events per capture thread: iterate i = 0.. while it returns 1. */
NT_API int nt_reader_lost(const nt_reader *r, size_t i, uint64_t *capture_thread_id,
			  uint64_t *lost);

/* Warning text for a non-fatal condition (truncation), or NULL. Valid for the reader's life. */
NT_API const char *nt_reader_warning(const nt_reader *r, uint64_t *offset);

/* Chunks: one file read by several readers at once (nt_profile does so on two cores,
 * nt_profile_opts.jobs). A chunk of length len is whole sequence-point regions: from its
 * start (the file's, or the previous chunk's end) to the end of the first sequence point
 * that ends at least len bytes further, so readers that take the chunks of one file in
 * turn, each reading some and passing the others with the same lengths, agree on them
 * without talking, and nothing of the compressed headers, the stacks or the time order
 * crosses a chunk's start. What does: the metadata (a reader that passes a chunk still
 * reads it) and each capture thread's sequence numbers (lost events), which one reader
 * can hand to another. For V4/V5 files, in either order. */

/* A second reader of r's input from its start, with r's options: a regular file (opened
 * again) or memory, uncompressed, V4/V5, of at least min_size bytes.
 * Fails with NT_EUNSUPPORTED for another input, else as the open does. The caller frees
 * *out with nt_reader_free(); it is independent of r (another thread may use it). */
NT_API int nt_reader_reopen(const nt_reader *r, uint64_t min_size, nt_reader **out,
			    nt_error *err);

#define NT_CHUNK_TRACK 1u /* nt_reader_chunk_begin(): record sequence numbers */
/* A chunk of length len (0: to the end) starts here, at a chunk's start: nt_reader_next()
 * returns 0 after its last event, as at the end of the input, and then
 * nt_reader_chunk_stopped() is 1 (0 when the input ended). NT_CHUNK_TRACK: the capture
 * threads start with no sequence number (so the first of each counts no loss) and the
 * lost-event counts at 0; each thread's first number is recorded
 * (nt_reader_chunk_thread()). */
NT_API void nt_reader_chunk_begin(nt_reader *r, uint64_t len, unsigned flags);
/* Returns 1 when the last nt_reader_next() that returned 0 ended at a chunk's end, 0 when
 * it ended with the input (or r is NULL). */
NT_API int nt_reader_chunk_stopped(const nt_reader *r);
/* Passes the chunk of length len that starts here, decoding only its metadata: 1 at the
 * next chunk's start, 0 when the input ends first, < 0 on failure. The sequence points
 * passed change no sequence number. */
NT_API int nt_reader_chunk_skip(nt_reader *r, uint64_t len, nt_error *err);
/* Capture thread i of the reader (0, 1, ...): its id, the kind of its first sequence
 * number since nt_reader_chunk_begin(..., NT_CHUNK_TRACK) (0 none, 1 an event's, 2 a
 * sequence point's), that number, its last one, its lost events. 0 when i is past the
 * last. */
NT_API int nt_reader_chunk_thread(const nt_reader *r, size_t i, uint64_t *tid, int *kind,
				  uint32_t *first, uint32_t *last, uint64_t *lost);
/* A capture thread's last sequence number (0 none yet). Returns 0, or NT_ENOMEM when the
 * thread is new and its entry cannot be made. */
NT_API int nt_reader_thread_seq(nt_reader *r, uint64_t tid, uint32_t *last);
/* Sets a capture thread's last sequence number and adds lost events to its count and the
 * reader's (what another reader found in the chunks this one passed). Returns 0, or
 * NT_ENOMEM. */
NT_API int nt_reader_set_thread_seq(nt_reader *r, uint64_t tid, uint32_t last, uint64_t lost);
/* What a reader counted in one chunk. Thread safety: a value: filled on the thread of the
 * reader that counted, it may be added on another's once handed over (nt_profile does so
 * between its two threads). */
typedef struct nt_chunk_counts nt_chunk_counts;

/* What a reader counted in its current chunk (since nt_reader_chunk_begin(...,
 * NT_CHUNK_TRACK)), for the reader that passed that chunk: its events (sorted ones, first
 * and last timestamps), the stacks it defined (their deepest), missing stacks, wrapped
 * timestamp deltas, each metadata record's events and each capture thread's samples.
 * nt_reader_chunk_counts() fills *c (made when NULL, else refilled: one object serves
 * chunk after chunk; free it with nt_chunk_counts_free(), which accepts NULL);
 * nt_reader_add_chunk_counts() adds them to r, which then counts as if it had read the
 * chunk (records match by index: both readers read every metadata block; capture threads
 * by id; lost events go through nt_reader_set_thread_seq()). Both return 0 or
 * NT_ENOMEM. */
NT_API int nt_reader_chunk_counts(const nt_reader *src, nt_chunk_counts **c);
NT_API int nt_reader_add_chunk_counts(nt_reader *r, const nt_chunk_counts *c);
NT_API void nt_chunk_counts_free(nt_chunk_counts *c);

/* All metadata records seen so far, by index 0..n-1 (borrowed, valid for the reader's
 * life); metadata_at returns NULL when i is out of range. */
NT_API size_t nt_reader_metadata_count(const nt_reader *r);
NT_API const nt_metadata *nt_reader_metadata_at(const nt_reader *r, size_t i);

/* Returns the number of events of metadata record i (as nt_reader_metadata_at() numbers
 * them) that the reader has decoded so far: all of the file's once nt_reader_next()
 * returned 0. 0 when i is out of range. */
NT_API uint64_t nt_reader_metadata_events(const nt_reader *r, size_t i);

/* Returns the number of SampleProfiler samples (nt_event_is_sample()) that capture thread i
 * (as nt_reader_lost() numbers them) wrote, of the events decoded so far; 0 when i is out
 * of range. A capture thread with samples is a sampler thread. */
NT_API uint64_t nt_reader_capture_samples(const nt_reader *r, size_t i);

/* ---------------------------------------------------------------------------------------
 * Payload decoding
 * ------------------------------------------------------------------------------------- */

/* Writes the event's payload as a JSON object {"Field": value, ...} into sink, decoding
 * field by field from its metadata (file or built-in). A payload that does not match its
 * layout is written as {"_raw":"hex..."} with "_error" explaining why: never fails on data.
 * pointer_size comes from the trace header. */
NT_API int nt_payload_write_json(const nt_event *ev, uint32_t pointer_size, const nt_sink *sink);

/* Decoded scalar of one named top-level field. */
typedef struct nt_value {
	uint32_t type;     /* enum nt_type of the field */
	uint64_t u;        /* unsigned / pointer / bool / char value */
	int64_t i;         /* signed value */
	double d;          /* float value */
	const uint8_t *raw; /* points into the payload at the field; for a UTF8CodeUnit field
			     * (a V6 string: uint16 length + UTF-8) at its text, u = length */
	size_t raw_len;
} nt_value;

/* Finds top-level field `name` and decodes it with the same decoder as
 * nt_payload_write_json() (so both agree on every type: V6 VARINT/VARUINT give i/u;
 * strings and compound fields give raw/raw_len only). Returns 1 found, 0 absent or the
 * payload too short for it or a field before it. */
NT_API int nt_event_field(const nt_event *ev, uint32_t pointer_size, const char *name,
			  nt_value *out);

/* Copies a UTF-16LE NUL-terminated string from the payload as UTF-8 into buf (always
 * NUL-terminated). Returns bytes consumed in the payload (including the NUL), or 0 if the
 * string is unterminated. */
NT_API size_t nt_utf16z_to_utf8(const uint8_t *p, size_t len, char *buf, size_t bufsize);

/* Well-known providers. */
#define NT_PROVIDER_RUNTIME "Microsoft-Windows-DotNETRuntime"
#define NT_PROVIDER_RUNDOWN "Microsoft-Windows-DotNETRuntimeRundown"
#define NT_PROVIDER_PRIVATE "Microsoft-Windows-DotNETRuntimePrivate"
#define NT_PROVIDER_SAMPLER "Microsoft-DotNETCore-SampleProfiler"
#define NT_PROVIDER_EVENTPIPE "Microsoft-DotNETCore-EventPipe"
/* Machine-wide providers of one-collect / dotnet-trace collect-linux (V6 traces):
 * doc/format/universal-events.md. */
#define NT_PROVIDER_UNIVERSAL_SYSTEM "Universal.System"
#define NT_PROVIDER_UNIVERSAL_EVENTS "Universal.Events"
/* Our sampler's own provider (doc/format/sampler-events.md). */
#define NT_PROVIDER_NTSAMPLER "libnettrace-Sampler"
enum nt_ntsampler_event {
	NT_NTS_MODULE_MAP = 1,
	NT_NTS_THREAD_NAME = 2,
	NT_NTS_SESSION_SETTINGS = 3,
	NT_NTS_SAMPLER_STATS = 4,
};

/* SampleProfiler sample types. */
enum nt_sample_type { NT_SAMPLE_ERROR = 0, NT_SAMPLE_EXTERNAL = 1, NT_SAMPLE_MANAGED = 2 };

/* 1 when ev is a SampleProfiler ThreadSample; *type (when type is not NULL) gets its sample
 * type (0 if no payload), External for a native sampler's running sample (which says
 * Managed for TraceEvent: doc/format/sampler-events.md). For the reader's events the
 * answer was worked out once per metadata record: a call per event costs a comparison
 * (and the record's sample_kind gives it without the call). */
NT_API int nt_event_is_sample(const nt_event *ev, uint32_t *type);

/* ---------------------------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------------------------- */

typedef struct nt_writer nt_writer;

typedef struct nt_writer_opts {
	size_t sz;                /* sizeof(nt_writer_opts) */
	uint32_t format_version;  /* 5 (V4 container with V5 metadata, default) or 6 */
	uint32_t block_size;      /* max event block content bytes, default 100 KiB */
	uint64_t sp_interval_bytes; /* bytes of events between sequence points, default 10 MiB:
				       one is written at the first flush after so many bytes
				       (nt_writer_flush(), or the writer's own when its queue,
				       which sorts the threads' events, reaches 1 MiB), so a
				       smaller interval needs flushes at least that often */
} nt_writer_opts;

/* Creates a writer that writes the stream header and trace header to sink at once. The
 * sink is copied (its ctx must outlive the writer); hdr is copied. Fails with NT_EINVAL
 * (NULL sink or header, bad options or header values), NT_ENOMEM or the sink's error;
 * *out is then NULL. The caller
 * frees *out with nt_writer_close() (which finishes the stream) or nt_writer_free().
 * Every writer function fails with NT_EINVAL for bad arguments; after a failure that
 * leaves a block half-written (the sink's error, NT_ENOMEM) the writer is unusable: every
 * later call fails with that code, and only nt_writer_free() is left to do.
 * Thread safety: none; one writer per thread (the sampler serialises on its drain thread). */
NT_API int nt_writer_open(nt_writer **out, const nt_sink *sink, const nt_trace_header *hdr,
			  const nt_writer_opts *opts, nt_error *err);

/* Describes an event type for nt_writer_add_metadata(). */
typedef struct nt_metadata_desc {
	const char *provider;  /* UTF-8 */
	uint32_t event_id;
	const char *name;      /* may be NULL or "" (schema-less runtime events) */
	uint64_t keywords;
	uint32_t version;
	uint32_t level;
	uint32_t opcode;
	const nt_field *fields; /* may be NULL */
	uint32_t nfields;
} nt_metadata_desc;

/* Defines an event type; *id gets its metadata id (1, 2, ...). d is copied. Fails with
 * NT_EINVAL (no provider, bad fields), NT_ELIMIT (2^31-1 records), NT_ENOMEM or the
 * sink's error. */
NT_API int nt_writer_add_metadata(nt_writer *w, const nt_metadata_desc *d, uint32_t *id,
				  nt_error *err);

/* Defines an event type from a metadata record read by nt_reader (V4/V5 raw payload bytes are
 * copied verbatim so V5 tags round-trip). *id gets the new metadata id. m is copied.
 * Fails as nt_writer_add_metadata(). */
NT_API int nt_writer_copy_metadata(nt_writer *w, const nt_metadata *m, uint32_t *id,
				   nt_error *err);

/* One event to write. */
typedef struct nt_event_desc {
	uint32_t metadata_id;
	uint32_t seq;                /* 0: assigned by the writer (+1 per capture thread) */
	uint64_t thread_id;
	uint64_t capture_thread_id;
	uint32_t processor;
	uint64_t timestamp;          /* raw ticks; per capture thread non-decreasing */
	const uint8_t *activity_id;  /* 16 bytes or NULL (zero) */
	const uint8_t *related_activity_id;
	const uint64_t *stack;       /* leaf first; NULL/0 = empty stack */
	uint32_t stack_depth;
	const void *payload;
	uint32_t payload_len;
	uint64_t process_id;         /* V6: the OS process of thread_id, written in the thread
				       table (machine-wide traces); 0 = the header's. V5:
				       ignored */
} nt_event_desc;

/* Queues an event. Events of one capture thread must come in non-decreasing timestamp
 * order (NT_EINVAL otherwise); the writer sorts across threads as the runtime does, within
 * what is still queued: an event older than events of other threads already flushed is
 * accepted but readers will deliver it after them (the runtime has the same limit). */
NT_API int nt_writer_write_event(nt_writer *w, const nt_event_desc *e, nt_error *err);

/* Flushes everything queued and writes a sequence point. Fails with the sink's error or
 * NT_ENOMEM. */
NT_API int nt_writer_sequence_point(nt_writer *w, nt_error *err);

/* Flushes pending blocks to the sink (crash safety). Writes the periodic sequence point
 * when sp_interval_bytes of events have accumulated since the last one, so a caller that
 * only ever flushes still gets bounded stack tables. Fails with the sink's error or
 * NT_ENOMEM. */
NT_API int nt_writer_flush(nt_writer *w, nt_error *err);

/* Flushes, writes the final sequence point and the end-of-stream marker, frees w (also
 * when it fails: w is gone either way). Fails with the sink's error, NT_ENOMEM, or the
 * code of an earlier failure (the stream is then incomplete). */
NT_API int nt_writer_close(nt_writer *w, nt_error *err);

/* Frees w without finishing the stream (accepts NULL); the sink is not closed. */
NT_API void nt_writer_free(nt_writer *w);


/* ---------------------------------------------------------------------------------------
 * Sampling-rate inference (rate.c)
 *
 * The header's declared period is not trusted: the runtime sleeps after each sampling
 * round, so the real period drifts with thread count, and other writers leave it unset.
 * The estimator groups samples into rounds (one sampler wake-up writes one sample per
 * thread) and measures the deltas between consecutive rounds.
 * ------------------------------------------------------------------------------------- */

typedef struct nt_rate nt_rate;

typedef struct nt_gap {
	int64_t start_ns;   /* session-relative time of the round before the pause */
	uint64_t length_ns; /* delta to the next round */
} nt_gap;

typedef struct nt_rate_info {
	uint64_t declared_interval_ns;  /* header value (0 if unset) */
	double inferred_interval_ns;    /* mean round-to-round delta, gaps excluded */
	double median_interval_ns;
	double p10_interval_ns, p90_interval_ns;
	double cv;                      /* coefficient of variation of the deltas (gaps excluded) */
	const char *schedule;           /* "fixed", "jittered", "poisson" or "unknown" */
	uint64_t samples;               /* samples fed */
	uint64_t rounds;                /* sampling rounds found */
	uint64_t threads;               /* distinct sampled threads */
	double per_thread_median_ns;    /* median of per-thread consecutive-sample deltas */
	uint64_t lost_samples;          /* 0 from nt_rate_result(); nt_profile fills it from the
					   reader's sequence-number gaps */
	size_t ngaps;                   /* pauses listed in gaps: longer than NT_RATE_GAP_FACTOR x
					   median, or for a Poisson schedule beyond the exponential
					   tail (mean x ln(n/0.01): < 0.01 false gaps per trace) */
	const nt_gap *gaps;             /* the gaps, in time order (all of them, unless more
					   than NT_RATE_MAX_GAPS: then the longest) */
	uint64_t gaps_total_ns;         /* all pauses, including any beyond the listed ones */
	uint64_t gaps_count;            /* all pauses, listed or not (>= ngaps) */
} nt_rate_info;

#define NT_RATE_GAP_FACTOR 4.0
#define NT_RATE_MAX_GAPS (1u << 20)

/* Creates an estimator. declared_ns is the header's period (a hint only), freq the tick
 * frequency, sync_qpc the session start. Memory is bounded (histograms), whatever the
 * number of samples. Fails with NT_EINVAL (freq 0) or NT_ENOMEM; *out is then NULL. Free
 * it with nt_rate_free(). Thread safety: none (nt_rate); one estimator per thread. */
NT_API int nt_rate_new(nt_rate **out, uint64_t declared_ns, uint64_t freq, uint64_t sync_qpc,
		       nt_error *err);
/* Feeds one sample, in timestamp order: raw timestamp, sampled thread, sampler thread. */
NT_API void nt_rate_add(nt_rate *rt, uint64_t timestamp, uint64_t thread_id,
			uint64_t capture_thread_id);
/* Computes the result; borrowed (with its gaps), valid until the next nt_rate_add(),
 * nt_rate_result() or nt_rate_free(). Never NULL for an estimator (NULL only for rt NULL). */
NT_API const nt_rate_info *nt_rate_result(nt_rate *rt);
/* Frees rt and the results it returned (accepts NULL). */
NT_API void nt_rate_free(nt_rate *rt);

/* ---------------------------------------------------------------------------------------
 * Runtime pauses (pause.c): GCs and execution-engine suspensions of a .NET session, from
 * the runtime's GC events (GCStart/GCEnd, GCSuspendEEBegin/GCRestartEEEnd). A GC pause is
 * a suspension for a GC (reason 1 SuspendForGC or 6 SuspendForGCPrep): from the request to
 * stop the managed threads (GCSuspendEEBegin) until they run again (GCRestartEEEnd), the
 * pause PerfView reports; it contains the GC's GCStart..GCEnd of a blocking GC. The
 * runtime's sampler cannot sample during it, so it shows as a sampling gap.
 * ------------------------------------------------------------------------------------- */

typedef struct nt_pauses nt_pauses;

typedef struct nt_pause {
	int64_t start_ns, end_ns; /* ns since the session start (nt_event.time_ns) */
	uint64_t tid;             /* the thread that suspended the runtime */
	uint32_t reason;          /* GCSuspendEEBegin Reason */
} nt_pause;

#define NT_PAUSE_MAX (1u << 22) /* GC pauses listed at most (all are counted) */

typedef struct nt_pauses_info {
	int gc_events;            /* the trace has GC events at all */
	uint64_t gcs;             /* GCStart..GCEnd pairs */
	uint64_t gc_ns;           /* their total length */
	uint64_t pauses;          /* GC pauses (suspensions for a GC) */
	uint64_t pause_ns;        /* their total length */
	uint64_t sampler_suspensions, sampler_ns; /* reason 0: the runtime's sampler's own */
	uint64_t other_suspensions, other_ns;     /* other reasons (debugger, shutdown...) */
	const nt_pause *list;     /* the GC pauses in time order (at most NT_PAUSE_MAX) */
	size_t nlist;
} nt_pauses_info;

/* An empty pause list. Fails with NT_ENOMEM (*out then NULL); free it with
 * nt_pauses_free(). Thread safety: none; one nt_pauses per thread. */
NT_API int nt_pauses_new(nt_pauses **out, nt_error *err);
/* Frees ps and the lists it returned (accepts NULL). */
NT_API void nt_pauses_free(nt_pauses *ps);
/* Feeds one event (any: others are ignored), in timestamp order. Returns 1 used, 0 not,
 * < 0 out of memory. */
NT_API int nt_pauses_add_event(nt_pauses *ps, const nt_event *ev, uint32_t pointer_size);
/* Returns 1 while a GC pause is open (between its GCSuspendEEBegin and GCRestartEEEnd),
 * else 0. */
NT_API int nt_pauses_in_gc(const nt_pauses *ps);
/* Returns 1 for the GCSuspendEEBegin reasons of a GC pause, else 0. */
NT_API int nt_pauses_is_gc_reason(uint32_t reason);
/* The pauses so far; borrowed, valid until the next nt_pauses_add_event() or
 * nt_pauses_free(); never NULL. */
NT_API const nt_pauses_info *nt_pauses_result(nt_pauses *ps);
/* How much of the gaps (time order, nt_rate_info.gaps) the listed GC pauses cover, ns. */
NT_API uint64_t nt_pauses_overlap(const nt_pauses_info *in, const nt_gap *gaps, size_t ngaps);

/* ---------------------------------------------------------------------------------------
 * Blocked-time categories and frame rules (category.c)
 * ------------------------------------------------------------------------------------- */

enum nt_category {
	NT_CAT_CPU = 0,
	NT_CAT_LOCK,
	NT_CAT_IO,
	NT_CAT_SLEEP,
	NT_CAT_WAIT,
	NT_CAT_GC,
	NT_CAT_EXTERNAL,
	NT_CAT_UNKNOWN,
	NT_CAT_READY,   /* runnable, waiting for a CPU (a CPU clock tells it did not run) */
	NT_CAT_RUNNING, /* on a CPU or runnable, as far as a trace without CPU clock says
			   (the runtime's Managed samples) */
	NT_CAT_COUNT
};
/* What each category means (doc/man/nettrace-rules.5, CATEGORIES): cpu is time a thread
 * ran, measured by its CPU clock (samples of the libnettrace sampler) or named by a rule;
 * ready the rest of a runnable thread's interval; running a Managed sample of a trace
 * without CPU clock (on a CPU or waiting for one: the runtime cannot tell); lock, io,
 * sleep and wait blocked time (by frame rules, runtime events or the sampler's thread
 * state); gc a runtime GC pause; external a runtime External sample no rule explains
 * (native code, running or blocked); unknown the rest. Values are stable: new categories
 * are appended. */

/* "cpu", "lock", ... (static strings); NULL for an out-of-range value. */
NT_API const char *nt_category_name(int cat);
/* Parses a category name; returns the category or -1. */
NT_API int nt_category_parse(const char *name);

/* Thread safety: immutable once parsed; one nt_rules may serve several profiles and
 * threads. Lifetime: until nt_rules_free(); a profile or live view using it borrows it.
 * The constructors below leave *out NULL on failure; on success the caller frees *out
 * with nt_rules_free(). */
typedef struct nt_rules nt_rules;

/* Parses a rules file's text (doc/man/nettrace-rules.5: one rule per line,
 * "CATEGORY PATTERN", '#' comments, glob patterns with '*' and '?' matched against the whole
 * frame name). On a bad rule, err->msg names the line ("line 7: unknown category 'lok'")
 * and err->offset is the line's byte offset: NT_EFORMAT; NT_EINVAL for NULL text, NT_ELIMIT for a text over 16 MiB,
 * NT_ENOMEM; *out is then NULL. text is not kept. name is used in messages. The caller
 * frees *out with nt_rules_free(). */
NT_API int nt_rules_parse(nt_rules **out, const char *text, size_t len, const char *name,
			  nt_error *err);
/* Reads and parses a rules file: NT_EIO when it cannot be read, else as nt_rules_parse()
 * (free *out with nt_rules_free()). */
NT_API int nt_rules_load(nt_rules **out, const char *path, nt_error *err);
/* The rules of a file followed by the built-in ones: for each frame the file's rules are
 * tried first, then the defaults (what --rules FILE means to the tools). Errors name the
 * file's lines, as nt_rules_load(); free *out with nt_rules_free(). */
NT_API int nt_rules_load_with_defaults(nt_rules **out, const char *path, nt_error *err);
/* The text of the built-in rules (data/rules/default.rules as compiled in), for
 * nettrace-fold --print-rules; *len (len may be NULL) gets its length. Static, never NULL. */
NT_API const char *nt_rules_default_source(size_t *len);
/* The built-in default rules (the text of data/rules/default.rules compiled in). Fails
 * only with NT_ENOMEM; free *out with nt_rules_free(). */
NT_API int nt_rules_default(nt_rules **out, nt_error *err);
/* Frees rules (accepts NULL); nothing may use it afterwards (profiles borrow it). */
NT_API void nt_rules_free(nt_rules *rules);
/* Category of a stack by its frames (leaf first): the first frame from the leaf that
 * matches a rule decides (rules are tried in file order for each frame). If a frame
 * matches an "outer" rule, the outer rule matched by the frame nearest the root decides
 * instead (a lock built on a wait: Monitor.Enter -> Lock.Enter -> WaitOne is lock). Returns the
 * category, or -1 when no rule matches. Thread safety: immutable after parsing. */
NT_API int nt_rules_match(const nt_rules *rules, const char *const *frames, size_t depth);

/* ---------------------------------------------------------------------------------------
 * Managed symbols (symtab.c): IP -> "Module!Namespace.Method(signature)"
 * ------------------------------------------------------------------------------------- */

typedef struct nt_symtab nt_symtab;

enum nt_symtab_flags {
	/* Use only rundown MethodDCEndVerbose (144) and DomainModuleDCEnd (152), as pyroscope
	 * dotnetdiag does (for --compat=pyroscope). */
	NT_SYMTAB_RUNDOWN_ONLY = 1u << 0,
};

/* An empty symbol table. Fails with NT_ENOMEM (*out then NULL); free it with
 * nt_symtab_free(). Thread safety: adding events and sealing need exclusive use; lookups
 * may run concurrently after nt_symtab_seal() (below). */
NT_API int nt_symtab_new(nt_symtab **out, unsigned flags, nt_error *err);
/* Frees st and every name it returned (accepts NULL). */
NT_API void nt_symtab_free(nt_symtab *st);
/* Records method and module events (JIT MethodLoadVerbose, rundown MethodDC*Verbose,
 * Module/DomainModule load and rundown); ignores others. Returns 1 if the event was used,
 * 0 if not, < 0 on allocation failure. */
NT_API int nt_symtab_add_event(nt_symtab *st, const nt_event *ev, uint32_t pointer_size);
/* Sorts the tables; required before lookups. Adding events afterwards unseals the table:
 * nt_symtab_name() then gives "?!?" until nt_symtab_seal() is called again. Names
 * returned before stay valid. Fails with NT_ENOMEM (the table stays unsealed). */
NT_API int nt_symtab_seal(nt_symtab *st, nt_error *err);
/* Frame name for ip: "Module!Ns.Type.Method(sig)", "?!Ns.Type.Method(sig)" when the module
 * is unknown, "?!?" when no method covers ip (or the table is not sealed). Never NULL;
 * borrowed, valid for the symtab's life (until nt_symtab_free()).
 * Thread safety: lookups may run concurrently after nt_symtab_seal(). */
NT_API const char *nt_symtab_name(const nt_symtab *st, uint64_t ip);
/* Number of methods and modules recorded. */
NT_API size_t nt_symtab_methods(const nt_symtab *st);
NT_API size_t nt_symtab_modules(const nt_symtab *st);

/* ---------------------------------------------------------------------------------------
 * Profiles (profile.c): samples of one or more traces, resolved, weighted, categorised
 * ------------------------------------------------------------------------------------- */

/* Thread safety (nt_profile): none while adding traces and finishing; once finished, the
 * const accessors and nt_profile_foreach() only read, but nt_profile_* functions take a
 * non-const pointer and may cache (selection, labels): use a profile from one thread at a
 * time. Everything a profile returns is borrowed until nt_profile_free(). */
typedef struct nt_profile nt_profile;

enum nt_compat {
	NT_COMPAT_NONE = 0,    /* weight = the session's inferred interval per sample */
	NT_COMPAT_PYROSCOPE,   /* pyroscope dotnetdiag: interval ending at a sample, to it */
	NT_COMPAT_TRACEEVENT,  /* TraceEvent thread time: interval starting at a sample, to it,
				  with CPU_TIME / UNMANAGED_CODE_TIME leaf pseudo-frames */
};

/* One sample as the profile counts it, for nt_profile_opts.sample_fn. In the compat modes
 * a "sample" is one charged interval: pyroscope charges it at the sample that ends it,
 * TraceEvent when the thread's next sample (or allocation/TPL event) arrives, so the
 * callback for a sample may come later than the sample itself. */
typedef struct nt_profile_sample {
	uint32_t session;    /* session index (nt_profile_session()) */
	uint32_t group;      /* its group: nt_sample_group.group once the profile is finished */
	uint64_t thread_id;
	uint64_t timestamp;  /* raw ticks of the sample */
	int64_t time_ns;     /* ns since the session start */
	double weight_ns;    /* compat modes: the weight charged; NT_COMPAT_NONE: 0 (every
				sample weighs its session's interval, known after finishing) */
} nt_profile_sample;

/* Hooks (nt_profile_opts): called while nt_profile_add_trace() reads. A non-zero return
 * (a negative NT_E* code, with err filled) stops the read and is returned by it. */
typedef int (*nt_profile_sample_fn)(void *ctx, const nt_profile_sample *s, nt_error *err);
/* Progress of a long read: called every NT_PROGRESS_EVENTS events with the input offset
 * reached (bytes of the decompressed stream for .gz/.zip input). */
#define NT_PROGRESS_EVENTS 16384
typedef void (*nt_progress_fn)(void *ctx, uint64_t offset);
/* Called for every event that is not a SampleProfiler ThreadSample, in reading order;
 * h is the session's header. ev is borrowed for the call. */
typedef int (*nt_profile_event_fn)(void *ctx, uint32_t session, const nt_trace_header *h,
				   const nt_event *ev, nt_error *err);

typedef struct nt_profile_opts {
	size_t sz;                /* sizeof(nt_profile_opts) */
	int compat;               /* enum nt_compat */
	int managed_only;         /* drop External time (pyroscope) / External samples */
	int has_start, has_end;   /* time range selection */
	int range_raw;            /* 1: start/end are raw timestamps, 0: ns since session start */
	int64_t start, end;       /* [start, end) */
	const uint64_t *threads;  /* thread filter (NULL = all) */
	size_t nthreads;
	const nt_rules *rules;    /* category rules; NULL = built-in defaults */
	unsigned category_mask;   /* 1u << category to keep; 0 = all */
	nt_profile_sample_fn sample_fn; /* optional: each selected sample (before the category
					   filter, which applies per group when finishing) */
	nt_profile_event_fn event_fn;   /* optional: each non-sample event */
	void *hook_ctx;                 /* ctx of both hooks */
	int when;                 /* keep when each group's samples happened, as a histogram
				     over a shared time grid (nt_sample_group.when,
				     nt_profile_when_grid()); memory grows with distinct
				     (group, time bucket) pairs, NT_WHEN_FINE per group at most */
	int subsystems;           /* classify every stack by subsystem
				     (nt_sample_group.subsystem, nt_profile_subsystems()) */
	const struct nt_subsystems *subsystem_rules; /* with subsystems: the rules; NULL =
						       built-in defaults */
	nt_progress_fn progress_fn; /* optional: progress of nt_profile_add_trace */
	void *progress_ctx;
	/* Options of each session's native resolver (nt_native_new(): module path root, debug
	 * directory); NULL = defaults. The module map of a trace names files the resolver
	 * opens, so a profile of an untrusted trace can point root at an empty (or missing)
	 * directory to keep it off the local files. Read by nt_profile_add_trace(). */
	const struct nt_native_opts *native;
	/* Machine-wide Universal traces (doc/format/universal-events.md): keep only the
	 * samples of these processes (NULL = all) and/or of processes with this name
	 * (ProcessCreate's Name; NULL = any). Other traces' samples have no process. Both
	 * are borrowed: they must stay valid until nt_profile_free(). */
	const uint64_t *pids;
	size_t npids;
	const char *process_name;
	/* Universal traces: add the cswitch events as blocked time (the off-CPU interval
	 * before the thread ran again, charged to the stack where it blocked) to the cpu
	 * samples: a thread-time profile. */
	int thread_time;
	/* Appended: */
	int collapse_unresolved;  /* each run of unresolved frames ("?!?": no method or module
				     covers the address) becomes one "[unresolved]" frame */
	int hide_idle;            /* drop the threads never on a CPU: cpu and running time
				     under 1% of the thread's time */
	const char *const *thread_patterns; /* keep only the threads whose name matches one of
				     these globs (fnmatch(3): '*', '?', [...]) or whose id is in
				     threads; borrowed until nt_profile_free() */
	size_t nthread_patterns;
	/* A stack selection (nt_select_new()): focus, exclude, group and fold patterns that
	 * nt_profile_foreach() applies to every group, so every view shows the same stacks;
	 * NULL = none. Borrowed: it must outlive the profile. The SQLite store takes focus and
	 * exclude only (it keeps each frame's address: renamed frames have none). */
	const struct nt_select *select;
	/* Keep every counted sample's group, time and weight in reading order, so that exports
	 * can lay the samples out in time order (nt_speedscope_write()); memory grows with
	 * samples (24 bytes each). */
	int sequence;
	/* Optional: each interval charged to a group without a sample (NT_COMPAT_NONE: a GC
	 * pause a thread sat in, charged as gc at its last stack): time_ns is where it starts,
	 * weight_ns its length, timestamp 0. Called with hook_ctx while reading; the group's
	 * weight includes the charge (nt_sample_group.charged_ns), its samples do not. */
	nt_profile_sample_fn charge_fn;
	/* Threads for nt_profile_add_trace(): 0 or 1 decode and aggregate on the caller's
	 * thread; 2 or more read a file of more than twice the chunk size (8 MiB) in chunks
	 * on two threads, each with a reader (nt_reader_reopen()), where no hook asks for
	 * every event in one stream, else decode on a second thread while the caller's
	 * aggregates. The output is the same either way (the hooks run on the caller's
	 * thread), and so are the reader's statistics and counts after the read: the
	 * caller's reader counts the chunks it passed (nt_reader_add_chunk_counts()). Only
	 * for readers of files: the second thread is joined, so a read that can block
	 * forever (a pipe, a socket) must stay on 1. */
	unsigned jobs;
	/* Appended in 1.1: optional, every event as it is read, samples included, before the
	 * profile uses it (event_fn still follows for the others), with hook_ctx: a caller
	 * that needs its own pass over the events (counts, as nettrace-info's) makes it in
	 * the profile's read instead of reading the file twice. */
	nt_profile_event_fn read_fn;
	/* Appended in 1.2: with a compat mode (NT_COMPAT_PYROSCOPE, NT_COMPAT_TRACEEVENT),
	 * whose weights come from the samples' timestamps, skip inferring each session's
	 * sampling rate, a tenth to a quarter of the read: nt_session_info.rate then has no
	 * rounds (inferred_interval_ns 0) and the declared interval. For callers that show no
	 * rate. Ignored with NT_COMPAT_NONE, whose weights are the inferred interval. */
	int skip_rate;
	/* Appended in 1.2, optional: read_fn in a read in chunks (jobs). Without these a read
	 * with read_fn stays one stream of events (on the decoding thread). With both, the
	 * second thread reads its chunks with read_fn on a context of its own:
	 * chunk_begin(hook_ctx) makes one for each such chunk, on that thread (so it may only
	 * read hook_ctx; NULL: out of memory, that chunk and the rest are then read in the
	 * stream), and
	 * chunk_end(hook_ctx, chunk_ctx, merge, err) takes it back on the caller's thread, in
	 * file order: merge 1 when its events belong to the read (add them to hook_ctx; 0 or
	 * an error that fails the read), 0 when the chunk is read again in the stream (or
	 * the read ends first): then just free it. */
	void *(*chunk_begin)(void *hook_ctx);
	int (*chunk_end)(void *hook_ctx, void *chunk_ctx, int merge, nt_error *err);
} nt_profile_opts;

/* Creates an empty profile; opts (NULL: defaults) is copied, but what its pointers point
 * at (rules, threads, select, pids, ...) is borrowed and must outlive the profile. On
 * failure *out is NULL (NT_EINVAL for bad options, NT_ENOMEM); on success the caller frees
 * it with nt_profile_free(). */
NT_API int nt_profile_new(nt_profile **out, const nt_profile_opts *opts, nt_error *err);
/* Frees p and everything it returned (accepts NULL). */
NT_API void nt_profile_free(nt_profile *p);
/* Reads r to the end as one session (name is its file name for messages and output).
 * Memory grows with distinct stacks, not with samples. Errors are the reader's.
 * A truncated trace is accepted (the reader's warning stays available). After a failure
 * of its own or a hook's the session holds what was aggregated before it. */
NT_API int nt_profile_add_trace(nt_profile *p, nt_reader *r, const char *name, nt_error *err);
/* Finishes the profile (infers rates, resolves symbols, applies rules). The contract:
 *  - call it once after the last nt_profile_add_trace(); later nt_profile_add_trace()
 *    calls fail with NT_EINVAL. Calling it again after a success does nothing (returns 0);
 *  - every accessor below (sessions, groups, threads, when grid, native frames) and every
 *    consumer (trees, stacks sources, folded output, stores) finishes p first if it is not
 *    finished yet; an accessor without an nt_error then returns NULL/0 when finishing fails.
 *    Call nt_profile_finish() yourself to get the error;
 *  - a failed finish (NT_ENOMEM, or a symbol resolver's error) leaves p unusable: report
 *    the error and nt_profile_free() it.
 * Thread safety: see nt_profile above. */
NT_API int nt_profile_finish(nt_profile *p, nt_error *err);

/* Why frames are (un)resolved (nt_session_info.symbols), counted once per frame of each
 * sample (samples charged by the profile). */
typedef struct nt_symbol_coverage {
	uint64_t frames;            /* frames of the samples */
	uint64_t resolved;          /* named: a method, or a native function */
	uint64_t no_method_events;  /* "?!?" in a trace without method events (no rundown, no
				       JIT events: the file was cut or recorded without them) */
	uint64_t no_method;         /* "?!?" where the trace has method events but none covers
				       the address (its JIT or rundown event is missing) */
	uint64_t no_module;         /* native trace: the address is in no mapped module */
	uint64_t module_missing;    /* native: the module file is not found */
	uint64_t build_id_mismatch; /* native: the file is not the one traced */
	uint64_t no_symbols;        /* native: the file has no symbols for it (or is unreadable) */
} nt_symbol_coverage;

/* One session of a finished profile; the library owns it and every struct it points at
 * (borrowed until nt_profile_free()). Fields are only ever appended, and structs that may
 * grow are held by pointer, never embedded. */
typedef struct nt_session_info {
	const char *name;
	const nt_trace_header *header; /* the trace's header (a pointer, so that it can grow) */
	const nt_rate_info *rate; /* inferred sampling rate; borrowed, as its gaps, from the
				     profile (a pointer, so that nt_rate_info can grow) */
	uint64_t samples;         /* ThreadSample events read */
	uint64_t samples_selected; /* after range/thread/category filters */
	uint64_t first_ts, last_ts; /* raw timestamps of the first/last sample */
	int64_t duration_ns;
	uint64_t lost_events;
	int truncated;
	/* Appended: */
	uint64_t clocked_samples;  /* samples that carry the thread's CPU clock (our sampler's
				      ThreadSample v1): cpu as the clock says, else ready or
				      blocked */
	double gc_charged_ns;      /* GC pause time charged as gc to the threads that sat in
				      the pauses, summed over threads (compat modes: 0) */
	uint64_t gc_charges;       /* (thread, pause) pairs charged */
	const nt_pauses_info *pauses; /* the runtime's GC pauses and suspensions; borrowed from
				      the profile (a pointer, so that nt_pauses_info can grow) */
	const nt_symbol_coverage *symbols; /* why frames are (un)resolved (a pointer, so that
					      nt_symbol_coverage can grow) */
	double sample_weight_ns;   /* the weight of one sample: the inferred interval (else the
				      declared one, else 1 ms); 0 in the compat modes, whose
				      weights are intervals between a thread's samples */
	uint64_t samples_unordered; /* NT_COMPAT_PYROSCOPE: samples older than their thread's
				      sample before, in the order read. None from a reader in
				      timestamp order; in file order (NT_READ_FILE_ORDER, which
				      pyroscope's weights allow: they depend on each thread's
				      sequence of samples only), none when each thread's samples
				      come from one capture thread, as the runtime writes them.
				      Other modes: 0 */
	uint64_t chunks_merged;    /* opts.jobs >= 2: chunks of the trace (nt_reader_chunk_begin())
				      that a second thread read and the profile merged */
	uint64_t chunks_reread;    /* chunks the second thread read that the first read again:
				      one that began inside a GC suspension, or held samples with
				      a CPU clock or Universal events, or that the second thread
				      could not read (the output is the same either way) */
} nt_session_info;

/* Sessions (traces added), and session i: borrowed until nt_profile_free(); NULL when i is
 * out of range or finishing p (done here if needed) fails. */
NT_API size_t nt_profile_session_count(nt_profile *p);
NT_API const nt_session_info *nt_profile_session(nt_profile *p, size_t i);
/* The name of a thread (the last ThreadName event of the libnettrace sampler for it), or
 * NULL when the trace gives none. Borrowed until nt_profile_free(); finishes p. */
NT_API const char *nt_profile_thread_name(nt_profile *p, uint32_t session, uint64_t tid);
/* The label of a thread's root frame, into buf (n bytes, always NUL-terminated):
 * "NAME (TID)" when the thread's name is known, else "Thread (TID)" (always in the compat
 * modes, whose formats are TraceEvent's and pyroscope's), with " [S]" (S = session + 1)
 * when with_session. ';' in a name becomes ':' (the folded format's separator). Returns
 * the length. */
NT_API size_t nt_profile_thread_label(nt_profile *p, uint32_t session, uint64_t tid,
				      int with_session, char *buf, size_t n);
/* The time thread tid ran: its cpu and running time, ns (0 for an unknown thread). */
NT_API double nt_profile_thread_oncpu(nt_profile *p, uint32_t session, uint64_t tid);

/* One group of identical samples: same session, thread, category and resolved stack. */
typedef struct nt_sample_group {
	uint32_t session;
	uint64_t thread_id;
	int category;               /* enum nt_category */
	uint32_t sample_type;       /* enum nt_sample_type (TraceEvent compat: of the stack's
				       interval) */
	const char *const *frames;  /* leaf first; TraceEvent compat adds the pseudo-frame */
	uint32_t depth;
	uint64_t samples;
	double weight_ns;
	uint32_t group;             /* index of the group in the profile (stable, < 2^32-1) */
	uint32_t stack;             /* index of its stack: groups with equal stack have equal
				       session, frames and ips */
	const uint64_t *ips;        /* the stack's addresses, leaf first: one per frame, except
				       the TraceEvent pseudo-frame (frames[0]) and the inlined
				       functions a native address adds (nt_profile_frame_native) */
	uint32_t nips;
	int subsystem;              /* with nt_profile_opts.subsystems: the subsystem that
				       decides for the stack (nt_subsystems_match()), an index
				       into nt_profile_subsystems(); -1 none (or not asked) */
	const int32_t *frame_subsystems; /* with subsystems: each frame's own subsystem,
				       aligned with frames[] (-1 none, and for a pseudo-frame);
				       NULL when not asked */
	const struct nt_when_bin *when; /* with nt_profile_opts.when: the group's samples by
				       fine time bucket of nt_profile_when_grid(), in bucket
				       order, only non-empty buckets; NULL when not asked */
	size_t nwhen;               /* entries in when */
	const uint32_t *frame_src;  /* with a selection that rewrites frames (group, fold,
				       no_signature): for each frame, the index of the frame of
				       the unselected stack it stands for (nt_profile_frame_native()
				       maps through it); NULL when the frames are the stack's own */
	double charged_ns;          /* of weight_ns: time charged without a sample (GC pauses
				       the thread sat in, nt_profile_opts.charge_fn); each sample
				       weighs (weight_ns - charged_ns) / samples */
} nt_sample_group;

typedef int (*nt_group_fn)(void *ctx, const nt_sample_group *g);
/* Calls fn for every group (deterministic order: session, thread, first appearance).
 * Stops and returns fn's value when it is non-zero. */
NT_API int nt_profile_foreach(nt_profile *p, nt_group_fn fn, void *ctx);

/* ---------------------------------------------------------------------------------------
 * Stack selections (select.c): which stacks a view keeps and how their frames read, as
 * PerfView's stack viewer filters them (IncPats, ExcPats, GroupPats, FoldPats). Set one in
 * nt_profile_opts.select. In order, per stack (root to leaf): no_signature drops each
 * frame's argument list; the first GROUP pattern that matches a frame renames it (consecutive
 * frames of one group become one frame); FOLD patterns remove the frames they match (their
 * time becomes their caller's); then the stack is kept when every FOCUS pattern matches one
 * of its frames and no EXCLUDE pattern matches any. Matching ignores case and finds the
 * pattern anywhere in the name. FOCUS/EXCLUDE take POSIX extended regular expressions;
 * GROUP ("PAT->NAME", "PAT=>NAME" an entry group named "NAME <<entry frame>>", "PAT->"
 * keeps matching frames as they are) and FOLD take PerfView's patterns: '*' any text, '%'
 * an identifier ([[:alnum:]_.]*), a leading '^' anchors, "{...}" captures for $1..$9 in NAME,
 * several patterns separated by ';' after an optional "[description]".
 * Thread safety: immutable once built; one selection may serve several profiles.
 * ------------------------------------------------------------------------------------- */

typedef struct nt_select nt_select;
enum nt_select_kind { NT_SELECT_FOCUS = 0, NT_SELECT_EXCLUDE, NT_SELECT_GROUP, NT_SELECT_FOLD };

/* An empty selection. Fails with NT_ENOMEM (*out then NULL); free it with
 * nt_select_free() after the profiles that borrow it. Adding patterns needs exclusive use. */
NT_API int nt_select_new(nt_select **out, nt_error *err);
/* Adds one --focus/--exclude regex or --group/--fold pattern text; NT_EINVAL with a message
 * naming the pattern when it does not compile. */
NT_API int nt_select_add(nt_select *s, int kind, const char *spec, nt_error *err);
/* Frames without their argument list: "Module!Ns.Type.Method(int32)" reads
 * "Module!Ns.Type.Method", so overloads merge. */
NT_API void nt_select_no_signature(nt_select *s, int on);
/* 1 when the selection renames or removes frames (group, fold, no_signature). */
NT_API int nt_select_rewrites(const nt_select *s);
/* 1 when the selection has nothing to do (NULL, no pattern, no no_signature). */
NT_API int nt_select_empty(const nt_select *s);
/* Length of a frame name without its trailing argument list ("M(int)" -> 1). */
NT_API size_t nt_select_strip_signature(const char *frame);
/* Frees s and its patterns (accepts NULL). */
NT_API void nt_select_free(nt_select *s);

/* ---------------------------------------------------------------------------------------
 * Folded stacks (fold.c); unit and range parsers (profile-opts.c)
 * ------------------------------------------------------------------------------------- */

/* Units of weights. 0 (NT_UNIT_DEFAULT) is each use's default: ns for folded output and
 * stack sources of a profile, samples for folded input, auto-scaled time for trees. */
enum nt_unit { NT_UNIT_DEFAULT = 0, NT_UNIT_SAMPLES, NT_UNIT_NS, NT_UNIT_US, NT_UNIT_MS };
enum nt_catframe { NT_CATFRAME_NONE = 0, NT_CATFRAME_LEAF, NT_CATFRAME_ROOT };

typedef struct nt_fold_opts {
	size_t sz;
	int unit;            /* enum nt_unit (0: NS) */
	int per_thread;      /* root frame "Thread (TID)" */
	int category_frame;  /* enum nt_catframe */
	int no_module;       /* drop "Module!" prefixes */
	int subsystem_frame; /* enum nt_catframe: a "[SUBSYSTEM]" frame ("[other]" when no
				rule matched); needs nt_profile_opts.subsystems. With
				category_frame too: root "[sub];[cat];...", leaf "...;[cat];[sub]" */
} nt_fold_opts;

/* Writes "root;...;leaf WEIGHT\n" lines, merged by identical text, sorted bytewise
 * (finishes p if needed). Fails with NT_EINVAL (bad options), NT_ENOMEM, the profile's
 * error or the sink's. */
NT_API int nt_fold_write(nt_profile *p, const nt_fold_opts *opts, const nt_sink *sink,
			 nt_error *err);
/* Parses "samples", "ns", "us", "ms"; -1 if unknown. */
NT_API int nt_unit_parse(const char *s);
/* Parses a range "A..B" (either side optional): numbers with a unit ns, us, ms, s or m
 * (min), s when none is given, or raw timestamps with the prefix "ts:"; fills the range
 * fields of opts (has_start, has_end, range_raw, start, end) and nothing else. Returns 0
 * or NT_EINVAL with a message naming the bad bound. */
NT_API int nt_range_parse(const char *s, nt_profile_opts *opts, nt_error *err);

/* ---------------------------------------------------------------------------------------
 * Call trees (tree.c): samples merged by call path, with self/total weight per node,
 * per-category breakdown, bottom-up (inverted) trees, flat per-function lists, and a
 * text rendering. Memory grows with distinct call paths, not with samples.
 * ------------------------------------------------------------------------------------- */

typedef struct nt_tree nt_tree;

enum nt_tree_kind {
	NT_TREE_ROOT = 0,   /* the single root above the top-level nodes (name "") */
	NT_TREE_FRAME,      /* a stack frame (or "[empty stack]", or a TraceEvent pseudo-frame) */
	NT_TREE_THREAD,     /* a per-thread root, "Thread (TID)" ("Thread (TID) [S]" with
			       several sessions, S = 1-based session number) */
};

/* One node of a call tree. Allocated and owned by the tree; valid until nt_tree_free().
 * Fields may be appended in later versions: never allocate, copy or size these. */
typedef struct nt_tree_node {
	const char *name;          /* frame name (without "Module!" with no_module), UTF-8 */
	int kind;                  /* enum nt_tree_kind */
	uint32_t depth;            /* 0 for the root, 1 for top-level nodes */
	uint32_t session;          /* NT_TREE_THREAD: session index, else 0 */
	uint64_t thread_id;        /* NT_TREE_THREAD: the thread, else 0 */
	uint64_t samples;          /* samples whose path goes through this node */
	uint64_t self_samples;     /* of which the node is the leaf frame (see nt_tree_opts) */
	double total_ns;           /* weight of those samples, ns */
	double self_ns;
	double cat_ns[NT_CAT_COUNT];        /* total_ns by category (enum nt_category) */
	uint64_t cat_samples[NT_CAT_COUNT]; /* samples by category */
	const struct nt_tree_node *parent;  /* NULL for the root */
	const struct nt_tree_node *const *children; /* highest total first, ties by name */
	size_t nchildren;
	const uint64_t *when;      /* with nt_tree_opts.when_buckets: samples per time bucket
				      (nt_tree_when()), when_buckets entries; else NULL */
} nt_tree_node;

/* Flat statistics of one function (frame name) over the whole profile. */
typedef struct nt_tree_func {
	const char *name;
	uint64_t self_samples;      /* samples with this function as the leaf */
	uint64_t total_samples;     /* samples with this function anywhere on the stack,
				       counted once per sample even when it recurses */
	double self_ns, total_ns;
	double cat_ns[NT_CAT_COUNT];        /* total_ns by category */
	uint64_t cat_samples[NT_CAT_COUNT]; /* total_samples by category */
	const uint64_t *when;       /* with nt_tree_opts.when_buckets: total_samples per time
				       bucket (nt_tree_when()); else NULL */
} nt_tree_func;

typedef struct nt_tree_opts {
	size_t sz;        /* sizeof(nt_tree_opts) */
	int invert;       /* bottom-up: top-level nodes are leaf functions, children their
			     callers; only the top-level frame nodes then have self weight */
	int per_thread;   /* one NT_TREE_THREAD node per (session, thread) above the frames */
	int no_module;    /* drop "Module!" prefixes, merging frames that then match */
	int by_samples;   /* order children and flat lists by samples instead of weight */
	uint32_t when_buckets; /* > 0: a time histogram of this many buckets per node,
				  function and subsystem (needs nt_profile_opts.when); at most
				  NT_WHEN_MAX_BUCKETS */
	int lines;        /* a node per source line: frames with a file:line (native DWARF,
			     managed PDB: nt_profile_frame_native()) are named
			     "NAME at FILE:LINE" (FILE without its directory) */
} nt_tree_opts;

/* Builds the call tree of every group of p (nt_profile_foreach; finishes p if needed).
 * Frames with equal text merge, across sessions too. The tree copies what it keeps (names,
 * session summaries), so p may be freed afterwards. Fails with NT_ENOMEM, NT_ELIMIT (more
 * than 2^32-2 nodes) or the profile's error.
 * On failure *out is NULL; the caller frees *out with nt_tree_free().
 * Thread safety: immutable after nt_tree_new(); reads and nt_tree_write_text() may then
 * run concurrently. */
NT_API int nt_tree_new(nt_tree **out, nt_profile *p, const nt_tree_opts *opts, nt_error *err);
/* Frees t and every node, function and subsystem it returned (accepts NULL). */
NT_API void nt_tree_free(nt_tree *t);

/* The root: its totals are the whole tree's (samples, total_ns, cat_*). Borrowed until
 * nt_tree_free(); NULL only for t NULL. */
NT_API const nt_tree_node *nt_tree_root(const nt_tree *t);
/* Number of nodes, root included. */
NT_API size_t nt_tree_node_count(const nt_tree *t);
/* Follows names (top-level first) from the root; NULL when a name is not there. Borrowed
 * until nt_tree_free(). */
NT_API const nt_tree_node *nt_tree_find(const nt_tree *t, const char *const *path, size_t n);

enum nt_tree_order {
	NT_TREE_BY_SELF = 0,  /* self weight (or samples), highest first, ties by name */
	NT_TREE_BY_TOTAL,     /* total weight (or samples), highest first, ties by name */
};
/* Number of distinct functions (frame names; thread nodes are not functions). */
NT_API size_t nt_tree_func_count(const nt_tree *t);
/* The i-th function in the given order, or NULL when i (or order) is out of range.
 * Borrowed until nt_tree_free(). */
NT_API const nt_tree_func *nt_tree_func_at(const nt_tree *t, int order, size_t i);

/* Time column unit of nt_tree_print_opts: auto-scaled "4.512 s", "11.217 ms", ... */
#define NT_TREE_UNIT_AUTO (-1)

typedef struct nt_tree_print_opts {
	size_t sz;            /* sizeof(nt_tree_print_opts) */
	int unit;             /* enum nt_unit or NT_TREE_UNIT_AUTO (the default: 0, or opts
				 NULL); NT_UNIT_SAMPLES drops the time column */
	uint32_t max_depth;   /* show levels 1..max_depth only; 0 = all */
	double min_percent;   /* hide nodes (and their subtrees) below this % of the root */
	int hot;              /* expand only the hottest child at each level (hot path);
				 in a per-thread tree, the hot path of each thread */
	int by_category;      /* one column per category present: % of the root total */
	size_t top;           /* > 0: print the top N functions by self, then by total,
				 instead of the tree (max_depth, min_percent, hot ignored) */
	const char *selection; /* header line "Selected:" (e.g. "range 1s..2s"), NULL = none */
	int no_header;        /* omit the header lines before the column titles */
	int when;             /* a "when" column (the tree needs when_buckets) and a "When:"
				 header line with the density of the whole selection */
	int ascii;            /* draw the when column with ASCII ".:-=+*#@" instead of the
				 UTF-8 blocks U+2581..U+2588 */
	int by_subsystem;     /* print the time per subsystem (self, total, by category)
				 instead of the tree; the profile needs subsystems */
	uint32_t width;       /* > 0: rows fit this many columns, names cut in the middle
				 ("Ns.Ty…Method(int32)"; never shorter than 24 columns); 0 = no
				 limit */
} nt_tree_print_opts;

/* Writes the header (sessions, samples, total time, unit, selection, view) and then
 * one row per visible node in depth-first order:
 *   "total%  self%  time  samples  [category%...]  <two spaces per depth>frame".
 * Percentages are of the root, by weight (by samples when the tree is by_samples).
 * Control characters in names print as '?'. Fails with NT_ENOMEM or the sink's error. */
NT_API int nt_tree_write_text(const nt_tree *t, const nt_tree_print_opts *opts,
			      const nt_sink *sink, nt_error *err);

/* The tree's views as JSON (views.c): {"samples", "total_ns", "by", "categories",
 * "selection", then "children" (nested nodes with name, total_ns, samples, self_ns,
 * self_samples, categories, thread/session for thread nodes, when, children; pruned as the
 * text is by max_depth, min_percent and hot), or "top_self"/"top_total" (opts->top), or
 * "subsystems" (opts->by_subsystem)}. by_samples and per_thread: the tree's options.
 * Fails as nt_tree_write_text(). */
NT_API int nt_tree_write_json(const nt_tree *t, const nt_tree_print_opts *opts, int by_samples,
			      int per_thread, const nt_sink *sink, nt_error *err);

/* The difference of two trees by function (views.c): each function's total and self share
 * of its tree (by time, or samples with by_samples) against the base's, sorted by the
 * largest change; functions only in t are "added", only in base "removed". Functions with
 * equal shares, and changes below opts->min_percent points, are left out, so a tree against
 * itself shows no function. Build both trees with the same options (no_module matches
 * functions across renamed modules). Text (opts->width cuts names) or JSON. Fails with
 * NT_EINVAL (bad options), NT_ENOMEM or the sink's error. */
NT_API int nt_tree_write_diff(const nt_tree *t, const nt_tree *base, const nt_tree_print_opts *opts,
			      int by_samples, int json, const nt_sink *sink, nt_error *err);

/* Callers and callees of one function (views.c), PerfView's Caller-Callee view: over the
 * stacks of a profile (after its selection), the function's total (stacks through it,
 * once each) and self (stacks ending in it); each caller (the frame right above an
 * occurrence, "[no caller]" where the function is the root) and callee (the frame right
 * below) with the time of the stacks through that pair (once per stack) and, as its self,
 * the part where the pair ends the stack. FUNC is a frame name, or a regex (POSIX
 * extended, any case) that matches exactly one distinct name; else NT_EINVAL says so.
 * Thread safety: immutable once built (reads may run concurrently); it copies what it
 * keeps, so the profile may be freed before it. */
typedef struct nt_butterfly nt_butterfly;
typedef struct nt_butterfly_opts {
	size_t sz;        /* sizeof(nt_butterfly_opts) */
	int no_module;    /* names without "Module!" */
	int by_samples;   /* order by samples instead of time */
} nt_butterfly_opts;
typedef struct nt_butterfly_entry {
	const char *name;
	uint64_t samples, self_samples;
	double total_ns, self_ns;
} nt_butterfly_entry;
enum { NT_BUTTERFLY_CALLERS = 0, NT_BUTTERFLY_CALLEES = 1 };
/* Builds the view of func over p (finished here if needed). Fails with NT_EINVAL (no
 * function or several match, bad regex or options), NT_ENOMEM or the profile's error;
 * *out is then NULL. The caller frees *out with nt_butterfly_free(). */
NT_API int nt_butterfly_new(nt_butterfly **out, nt_profile *p, const char *func,
			    const nt_butterfly_opts *opts, nt_error *err);
/* Frees b and every entry it returned (accepts NULL). */
NT_API void nt_butterfly_free(nt_butterfly *b);
/* The function itself (its name as matched); borrowed until nt_butterfly_free(), never
 * NULL. */
NT_API const nt_butterfly_entry *nt_butterfly_func(const nt_butterfly *b);
/* Number of entries of a side (NT_BUTTERFLY_CALLERS or NT_BUTTERFLY_CALLEES). */
NT_API size_t nt_butterfly_count(const nt_butterfly *b, int side);
/* Entry i of a side, heaviest first (ties by name); NULL out of range. Borrowed until
 * nt_butterfly_free(). */
NT_API const nt_butterfly_entry *nt_butterfly_at(const nt_butterfly *b, int side, size_t i);
/* Text (opts: unit, width, ascii) or JSON of the sides in the mask sides (1 << side).
 * Fails with NT_EINVAL (bad options), NT_ENOMEM or the sink's error. */
NT_API int nt_butterfly_write(const nt_butterfly *b, int sides, const nt_tree_print_opts *opts,
			      int json, const nt_sink *sink, nt_error *err);

/* ---------------------------------------------------------------------------------------
 * Exports (export-svg.c, export-speedscope.c, export-pprof.c): interactive flame graph SVG
 * (plain or differential), speedscope JSON and pprof profile.proto, all written through an
 * nt_sink from one kind of input, a stack source: the stacks of a profile (the lines
 * nt_fold_write() prints, with each stack's thread and category) or folded-stacks text.
 * ------------------------------------------------------------------------------------- */

typedef struct nt_stacks nt_stacks;

/* A stack source over a profile (finished here if needed): the stacks nt_fold_write()
 * would print with fo (per_thread, category_frame and no_module shape the frames; fo->unit
 * selects the value: samples, or the weight in ns/us/ms), each with its session, thread
 * and category. p must outlive the source. Fails with NT_EINVAL (bad options), NT_ENOMEM
 * or the profile's error; *out is then NULL. The caller frees *out with nt_stacks_free().
 * Thread safety: none; use a source from one thread at a time. */
NT_API int nt_stacks_from_profile(nt_stacks **out, nt_profile *p, const nt_fold_opts *fo,
				  nt_error *err);
/* A stack source over folded text: "root;...;leaf COUNT" lines (nettrace-fold,
 * flamegraph.pl's stackcollapse-*, inferno), COUNT a decimal number ("12", "0.5"); blank
 * lines are skipped and CRLF is accepted. unit (enum nt_unit; 0: samples) says what COUNT is. The text
 * is borrowed (it must outlive the source) and parsed by each export, fast (no copy, one
 * pass): a malformed line fails the export with NT_EFORMAT, "line N: ..." and the line's
 * byte offset in its text; nt_stacks_error_input() then names that text. name names the
 * input in outputs (the speedscope profile) and errors (it is copied). Fails here only
 * with NT_EINVAL (NULL text with len > 0, a bad unit) or NT_ENOMEM; *out is then NULL.
 * The caller frees *out with nt_stacks_free(). */
NT_API int nt_stacks_from_folded(nt_stacks **out, const char *text, size_t len, int unit,
				 const char *name, nt_error *err);
/* Appends another folded text to a folded source (its lines follow the earlier ones);
 * text is borrowed as by nt_stacks_from_folded(). Fails with NT_EINVAL (not a folded
 * source, NULL text with len > 0) or NT_ENOMEM. */
NT_API int nt_stacks_add_folded(nt_stacks *s, const char *text, size_t len, const char *name,
				nt_error *err);
/* Name of the folded text whose line failed the last export, or NULL. Borrowed until
 * nt_stacks_free(). */
NT_API const char *nt_stacks_error_input(const nt_stacks *s);
/* Frees s (accepts NULL); the texts and the profile it borrowed stay the caller's. */
NT_API void nt_stacks_free(nt_stacks *s);

typedef struct nt_flame_opts {
	size_t sz;             /* sizeof(nt_flame_opts) */
	const char *title;     /* NULL: "Flame Graph", "Icicle Graph" or "Differential Flame
				  Graph" */
	const char *subtitle;  /* NULL: the total and the unit */
	uint32_t width;        /* image width in px; 0 = 1200 */
	uint32_t frame_height; /* px per frame; 0 = 16 */
	double min_width;      /* frames narrower than this (px) are left out with their
				  callees, as flamegraph.pl's --minwidth; 0 = 0.1 px, < 0 =
				  none (every frame is drawn) */
	int min_width_percent; /* min_width is a percentage of the total instead of px */
	int icicle;            /* root at the top, callees below */
	/* A timeline strip above the graph: the sample density over time (e.g. the root's
	 * nt_tree_node.when with the range of nt_tree_when()), drawn as timeline_n bars;
	 * a span selected in it shows the --range that selects it. 0 = no strip. */
	uint32_t timeline_n;         /* buckets, at most 100000 */
	const uint64_t *timeline;    /* samples per bucket, timeline_n entries */
	int64_t timeline_start_ns;   /* [start, end) of the buckets, ns since the session */
	int64_t timeline_end_ns;     /*   start (as --range takes them) */
	int sort_weight;       /* children heaviest first (ties by name); 0 = by name, as
				  flamegraph.pl (stable across differential graphs) */
} nt_flame_opts;

/* Writes a self-contained SVG flame graph of s: frames merged by call path, children in
 * name order (or by weight: sort_weight), width proportional to weight, coloured by category (by name when the input
 * has no categories). Its script shows total/self/% on hover, zooms on click, searches
 * (regex, highlights matches and shows the matched %) and resets. Frame names are
 * escaped: a name is only ever text. With base != NULL the graph is differential: widths
 * follow s, colours show each frame's share of the total in s minus its share in base
 * (red: grew, blue: shrank). Fails with NT_ENOMEM, NT_EINVAL (bad opts), the sources'
 * errors or the sink's. */
NT_API int nt_flame_write_svg(nt_stacks *s, nt_stacks *base, const nt_flame_opts *opts,
			      const nt_sink *sink, nt_error *err);

/* Writes a speedscope file (https://www.speedscope.app/file-format-schema.json) of
 * "sampled" profiles with explicit weights in the source's unit, frames shared, samples
 * listing frame indexes root first. A profile read with nt_profile_opts.sequence gives one
 * profile per (session, thread) with its samples in time order (consecutive samples of one
 * stack merged), on the session's time axis: startValue 0 (the session start), endValue
 * the session's end, and the time a thread was not sampled as empty samples ([]), so that
 * speedscope's "Time Order" view shows what happened when. Without the sequence, one
 * entry per distinct stack per thread, preceded by an "All threads" profile when there
 * are several; folded input gives one profile. Fails with NT_ENOMEM, the source's errors
 * (a malformed folded line: NT_EFORMAT) or the sink's. */
NT_API int nt_speedscope_write(nt_stacks *s, const nt_sink *sink, nt_error *err);

/* Writes a callgrind profile (KCachegrind, callgrind_annotate): per function ("Module!name"
 * = function name of object Module) its self cost and, per call (caller line, callee),
 * the inclusive cost of the stacks through it, counted once per stack under recursion,
 * with "calls" = those stacks. Native frames of a profile are at their DWARF file and line
 * (the leaf at its sampled line, callers at the line of the call); others at line 0 of
 * "???". Events "Samples" for sample counts, else "Nanoseconds". Fails with NT_ENOMEM,
 * the source's errors or the sink's. */
NT_API int nt_callgrind_write(nt_stacks *s, const nt_sink *sink, nt_error *err);

typedef struct nt_pprof_opts {
	size_t sz;    /* sizeof(nt_pprof_opts) */
	int level;    /* gzip level 1..9; 0 = the default, 1 (fastest, as Go's runtime/pprof);
			 -1 = no compression */
	/* Appended: string labels "KEY=VALUE" put on every sample (service_name=api...; what
	 * continuous-profiling servers turn into series labels, doc/pprof-labels.md). KEY
	 * must be a label name as Prometheus, Pyroscope and Parca take it:
	 * [A-Za-z_][A-Za-z0-9_]*, else NT_EINVAL. */
	const char *const *labels;
	size_t nlabels;
} nt_pprof_opts;

/* 1 when the n bytes at key are a label name that Pyroscope and Parca accept
 * ([A-Za-z_][A-Za-z0-9_]*, not empty), else 0. */
NT_API int nt_pprof_label_name_ok(const char *key, size_t n);

/* Writes a gzip'd pprof profile.proto: one Sample per stack (locations leaf first) with
 * values [samples/count, time/nanoseconds] for profile input ([samples/count] or
 * [time/nanoseconds] for folded input, by unit), labels "thread" (num), "thread_name",
 * "category" and, with several sessions, "session" (str), then opts->labels; one Function
 * per frame name (filename: the "Module" of "Module!name", or a native frame's DWARF
 * source file) with one Location per source line (native frames of a profile; 0 for
 * others); time_nanos = the earliest session start, duration_nanos = the time the
 * sessions cover (their union: the gaps between files are not counted), period; with
 * several sessions one comment per session: its name, start (UTC) and duration. Fails
 * with NT_EINVAL (bad options or labels), NT_ENOMEM, NT_EINTERNAL (zlib), the source's
 * errors or the sink's. */
NT_API int nt_pprof_write(nt_stacks *s, const nt_pprof_opts *opts, const nt_sink *sink,
			  nt_error *err);

/* ---------------------------------------------------------------------------------------
 * SQLite store (store-sqlite.c): profiles as a database anyone can query with SQL.
 * One database holds one or more sessions: their threads, one row per sample (time,
 * thread, category, weight), the stacks as a prefix tree of callsites over frames,
 * functions and modules, and the non-sample events with their payloads as JSON, plus views
 * for the common questions. The schema (version NT_STORE_SCHEMA_VERSION) is documented in
 * doc/sqlite-schema.md. This is the only module that includes sqlite3.h.
 * ------------------------------------------------------------------------------------- */

#define NT_STORE_SCHEMA_VERSION 2

typedef struct nt_store nt_store;

enum nt_store_flags {
	NT_STORE_READONLY = 1u << 0,  /* open an existing database for nt_store_query() only */
	NT_STORE_NO_EVENTS = 1u << 1, /* import no rows into the events table */
};

typedef struct nt_store_opts {
	size_t sz;          /* sizeof(nt_store_opts) */
	unsigned flags;     /* enum nt_store_flags */
	/* Called about every 65536 rows (samples and events) while a hooked profile reads:
	 * rows imported so far. It may print; it must not call the store. */
	void (*progress_fn)(void *ctx, uint64_t samples, uint64_t events);
	void *progress_ctx;
} nt_store_opts;

/* 1 when buf starts with the 16-byte SQLite database header "SQLite format 3\0", else 0. */
NT_API int nt_store_probe(const void *buf, size_t len);

/* Opens the database at path.
 * Import (the default): ":memory:" is a private in-memory database. Any other path is
 * written atomically: the import goes into a temporary file next to it (".NAME.PID.N.tmp";
 * a copy of path when path already is a database, which is then appended to), in one
 * transaction, and nt_store_commit() renames that file onto path. Until then path is
 * untouched; nt_store_free() without a commit removes the temporary file. An existing path
 * must be an empty SQLite database or one of this schema: another schema_version fails
 * with NT_EUNSUPPORTED, anything else with NT_EFORMAT.
 * NT_STORE_READONLY: opens path (any SQLite database) read-only for nt_store_query().
 * SQLite failures are NT_ESQL with SQLite's message; file failures NT_EIO.
 * Thread safety: none; use one nt_store per thread. */
NT_API int nt_store_open(nt_store **out, const char *path, const nt_store_opts *opts,
			 nt_error *err);
/* Closes the database; an import that was not committed is discarded with its temporary
 * file. Accepts NULL. */
NT_API void nt_store_free(nt_store *st);

/* Path of the temporary file of an import in progress, NULL when there is none (memory,
 * read-only, committed). Borrowed: valid until nt_store_commit() or nt_store_free(). Lets
 * a program remove it from a signal handler. */
NT_API const char *nt_store_temp_path(const nt_store *st);

/* Installs the store's hooks in popts (sample_fn, event_fn, hook_ctx; popts->compat says
 * whether samples carry their own weight) and turns on popts->subsystems (keeping a given
 * subsystem_rules) for sample_groups.subsystem: a profile created with these options
 * streams its samples and events into the store while nt_profile_add_trace() reads. Then call
 * nt_store_add_profile(). One hooked profile at a time per store. */
NT_API void nt_store_hook_profile(nt_store *st, nt_profile_opts *popts);

/* Finishes p if needed and writes the rest of what the hooked profile read: sessions,
 * threads, modules, functions, frames, callsites and sample groups. Samples of groups that
 * the profile's category filter leaves out are removed. Fails with NT_ESQL, NT_ENOMEM,
 * NT_EINVAL (p was not hooked to this store) or the profile's error. */
NT_API int nt_store_add_profile(nt_store *st, nt_profile *p, nt_error *err);

/* Commits the import and, for a file, renames the temporary file onto the path given to
 * nt_store_open() and reopens it read-only: the store then serves nt_store_query(). Fails
 * with NT_EINVAL (nothing to commit), NT_ESQL or NT_EIO (the rename, sys_errno). */
NT_API int nt_store_commit(nt_store *st, nt_error *err);

/* What the store imported so far. */
typedef struct nt_store_stats {
	size_t sz;          /* sizeof(nt_store_stats), set by the caller (NT_INIT) */
	uint64_t sessions;  /* sessions added by nt_store_add_profile() */
	uint64_t samples;   /* rows added to samples */
	uint64_t events;    /* rows added to events */
	uint64_t groups;    /* rows added to sample_groups */
	uint64_t callsites; /* new callsites (stack prefixes), frames and functions */
	uint64_t frames;
	uint64_t functions;
} nt_store_stats;
/* Fills *out (its sz set by the caller); returns 0, or NT_EINVAL (nothing written) for a
 * sz that is not set. */
NT_API int nt_store_stats_get(const nt_store *st, nt_store_stats *out);

/* Query results. */
enum nt_sql_type { NT_SQL_NULL = 0, NT_SQL_INTEGER, NT_SQL_REAL, NT_SQL_TEXT, NT_SQL_BLOB };

typedef struct nt_sql_value {
	int type;          /* enum nt_sql_type */
	int64_t i;         /* NT_SQL_INTEGER */
	double d;          /* NT_SQL_REAL */
	const char *text;  /* NT_SQL_TEXT: UTF-8, NUL-terminated; NT_SQL_BLOB: the bytes */
	size_t len;        /* bytes of text or blob */
} nt_sql_value;

typedef struct nt_sql_row {
	size_t statement;           /* 0-based index of the statement in the SQL text */
	size_t ncols;
	const char *const *names;   /* column names */
	const nt_sql_value *values; /* NULL for the call that announces a statement's columns */
} nt_sql_row;

/* Row callback: everything it gets is borrowed for the call. Non-zero stops the query. */
typedef int (*nt_sql_row_fn)(void *ctx, const nt_sql_row *row);

/* Runs each statement of sql in turn. For a statement that returns columns, fn (NULL: none)
 * is called once with values == NULL (its column names, even when no row follows) and then
 * once per row. Returns 0, fn's non-zero value, or NT_ESQL with "SQL error: <SQLite's message>"
 * (and where in sql it happened, when SQLite says) for a statement that fails; statements
 * before it have run. err->sys_errno then holds SQLite's primary result code: 1
 * (SQLITE_ERROR) for a statement that is not valid SQL or names what does not exist, 11 or
 * 26 for a file that is not a sound database, others for the system (I/O, locks, space). */
NT_API int nt_store_query(nt_store *st, const char *sql, nt_sql_row_fn fn, void *ctx,
			  nt_error *err);

/* ---------------------------------------------------------------------------------------
 * ClickHouse (store-clickhouse.c): the model of a store streamed into ClickHouse tables
 * made for many traces (doc/clickhouse-schema.md), through ClickHouse's HTTP interface.
 * Each session of the store is one trace, known by an id derived from its content by the
 * caller (nettrace-sql hashes the file), so that importing the same trace again adds
 * nothing. A trace's row in `traces` is written last: it marks the trace complete; rows
 * of a trace without it (an import that failed half-way) are deleted by the next import
 * of that trace before it writes. */
enum nt_ch_flags {
	NT_CH_REPLACE = 1u << 0,   /* import traces that are complete already again */
	NT_CH_NO_EVENTS = 1u << 1, /* samples only: no rows in `events` */
};

typedef struct nt_ch_opts {
	size_t sz;               /* sizeof(nt_ch_opts) */
	const char *url;         /* clickhouse://[USER[:PASSWORD]@]HOST[:PORT][/DB] (also
				  * http://); port 8123 and database "default" if not given */
	const char *const *ids;  /* ids[i]: the trace id of the store's session i + 1, 1 to 64
				  * lower-case hex digits */
	size_t nids;             /* sessions to export (a session past nids is not exported) */
	unsigned flags;          /* enum nt_ch_flags */
	const char *const *labels; /* "KEY=VALUE" each, stored with every trace (service,
				  * deploy, host...: traces.label_keys/label_values) */
	size_t nlabels;
	/* Appended: the profile hooked with nt_store_hook_profile_clickhouse() (NULL: none).
	 * The samples table is then written from the samples it kept, not from the store's
	 * sample rows; it must be the store's only profile, added with nt_store_add_profile()
	 * and not freed yet. */
	const nt_profile *profile;
} nt_ch_opts;

typedef struct nt_ch_stats {
	size_t sz;          /* sizeof(nt_ch_stats) (set by the caller; 0 means all of it) */
	uint64_t imported;  /* traces written */
	uint64_t skipped;   /* traces complete already (or given twice) */
	uint64_t cleared;   /* tables that held rows of an earlier, failed import */
	uint64_t samples;   /* rows written to samples */
	uint64_t events;    /* rows written to events */
	uint64_t rows;      /* rows written to every table but traces */
	uint64_t bytes;     /* bytes of those rows as sent */
} nt_ch_stats;

/* Creates the database and tables when missing, then writes the sessions of st (which
 * must be committed or queryable) as traces. Returns 0, or: NT_EINVAL (bad URL or ids),
 * NT_EIO (cannot connect, connection lost: sys_errno says why), NT_ESQL (ClickHouse
 * refused a statement: its message), NT_EFORMAT (a reply that is not HTTP, with its
 * offset), NT_ENOMEM. On failure no trace of this call is marked complete. stats (may be
 * NULL) is filled either way. With nids 0, only the URL and labels are checked (st may be NULL) and
 * nothing is sent. Blocks; one call at a time per store. */
NT_API int nt_store_export_clickhouse(nt_store *st, const nt_ch_opts *opts, nt_ch_stats *stats,
				      nt_error *err);

/* As nt_store_hook_profile(), for an import into ClickHouse only: the samples stay in the
 * profile (nt_profile_opts.sequence, 24 bytes each) instead of going into the store's
 * sample rows, and nt_store_export_clickhouse() with nt_ch_opts.profile = the profile
 * writes them from there. The store gets everything else (sessions, threads, stacks,
 * groups, events), and its samples table stays empty. The rows in ClickHouse are the same
 * as through the store; the SQLite round trip of every sample is saved. The store must be
 * new (no other profile). */
NT_API void nt_store_hook_profile_clickhouse(nt_store *st, nt_profile_opts *popts);

/* ---------------------------------------------------------------------------------------
 * Native symbols (sym-native.c): IP -> "module!function" frames through the module map the
 * sampler records (ModuleMap events, doc/format/sampler-events.md), with ELF symbols, the
 * DWARF inline chain (each inlined function is a frame of its own) and file:line.
 *
 * An IP maps to the module whose [Base, Base + Size) contains it, then to the file offset
 * ip - Base + FileOffset, then through the file's PT_LOAD headers to the address addr2line
 * takes (nt_native_frame.elf_address). Answers agree with "addr2line -i -f",
 * "eu-addr2line -i -f" and llvm-symbolizer for that address. Files are opened lazily, on
 * the first address that falls into them; a missing file, a build id that differs from the
 * recorded one, or a file with no symbols gives the frame "module+0xOFFSET" (the file
 * offset, in hex) and a module status (nt_native_module_at()) that says why. A file
 * without DWARF gives ELF symbols only; its DWARF may also come from
 * DEBUG_DIR/.build-id/xx/yyyy.debug. Results are cached per resolver (one per trace).
 * Return addresses: callers of a sampled frame should be looked up at ip - 1, the call
 * instruction, as addr2line users do (nt_profile does).
 * ------------------------------------------------------------------------------------- */

/* Thread safety: none (lookups fill its caches); one resolver per thread. Everything it
 * returns is borrowed until nt_native_free(). */
typedef struct nt_native nt_native;

enum nt_native_flags {
	/* Read DIEs only through libdwarf's API, not also directly from the section bytes
	 * (slower; the reference the direct reader is tested against). */
	NT_NATIVE_LIBDWARF_ONLY = 1u << 0,
	/* Frame names keep C++ and Rust functions mangled ("_ZNK6MatrixlsEi"); by default
	 * nt_native_frame.name holds the demangled form ("Matrix::operator<<(int) const",
	 * libiberty's demangler) and .function the symbol as it is. */
	NT_NATIVE_NO_DEMANGLE = 1u << 1,
};

typedef struct nt_native_opts {
	size_t sz;             /* sizeof(nt_native_opts) */
	const char *root;      /* prefix for module paths (a sysroot, a container's root);
				  NULL = none */
	const char *debug_dir; /* separate debug files; NULL = "/usr/lib/debug" (also under
				  root); "" = do not look for them */
	unsigned flags;        /* enum nt_native_flags */
	/* Managed source lines (nt_profile_managed_lines()): directories, ':'-separated,
	   searched first for each module's portable PDB and assembly (by file name);
	   NULL = none. root above also prefixes the recorded assembly and PDB paths. */
	const char *symbol_path;
} nt_native_opts;

/* One frame of a resolved address. Strings are borrowed from the resolver (valid until
 * nt_native_free()). Fields may be appended in later versions. */
typedef struct nt_native_frame {
	const char *name;       /* frame name for tools: "module!function" (C++ and Rust
				   functions demangled unless NT_NATIVE_NO_DEMANGLE), or
				   "module+0x1a2b" (file offset) when the function is unknown;
				   never NULL */
	const char *function;   /* DWARF (linkage name first, as addr2line) or ELF symbol
				   name; NULL when unknown */
	const char *file;       /* source file, absolute when DWARF says so; NULL if unknown */
	uint32_t line;          /* 0 when unknown */
	uint32_t column;        /* 0 when unknown */
	uint32_t inline_depth;  /* 0: the function the code belongs to; n: inlined n levels
				   into it (frames come innermost first, depth decreasing) */
	const char *module;     /* file name of the module path ("libc.so.6") */
	const char *module_path; /* the path recorded in the trace */
	uint64_t file_offset;   /* ip - Base + FileOffset */
	uint64_t elf_address;   /* the address looked up in the file (addr2line's input),
				   UINT64_MAX when the file was not read */
} nt_native_frame;

/* Module status, known once an address in it was resolved. */
enum nt_native_status {
	NT_NATIVE_UNUSED = 0,      /* no address resolved in it yet (file not opened) */
	NT_NATIVE_OK,              /* DWARF: functions, inline chain, file:line */
	NT_NATIVE_SYMBOLS_ONLY,    /* no DWARF: ELF symbols only */
	NT_NATIVE_NO_SYMBOLS,      /* neither DWARF nor ELF symbols: module+0xOFFSET */
	NT_NATIVE_MISSING,         /* the file cannot be opened: module+0xOFFSET */
	NT_NATIVE_BUILD_ID_MISMATCH, /* the file is not the one traced: module+0xOFFSET */
	NT_NATIVE_BAD_FILE,        /* not an ELF file we can read: module+0xOFFSET */
};

typedef struct nt_native_module {
	const char *path;          /* as recorded */
	const char *name;          /* file name of path */
	uint64_t base, size, file_offset;
	const char *build_id;      /* recorded (lowercase hex), "" if none */
	const char *file_build_id; /* found in the file, "" if none or not opened */
	int status;                /* enum nt_native_status */
	const char *message;       /* why the status is not OK ("build id mismatch: trace
				      1a2b..., file 3c4d...", "cannot open: No such file or
				      directory", ...), "" otherwise */
	uint64_t lookups;          /* distinct addresses resolved in the module */
} nt_native_module;

/* Creates an empty resolver; opts is copied (root and debug_dir too). Fails with NT_EINVAL (bad
 * options) or NT_ENOMEM; *out is then NULL. The caller frees *out with nt_native_free().
 * Thread safety: none (lookups fill caches); use one nt_native per thread. */
NT_API int nt_native_new(nt_native **out, const nt_native_opts *opts, nt_error *err);
/* Frees nn, every frame and string it returned, and closes its files (accepts NULL). */
NT_API void nt_native_free(nt_native *nn);
/* Adds a mapping: [base, base + size) holds path's bytes from file_offset on. build_id is
 * the expected GNU build id in hex (NULL or "" = do not check). Identical mappings are
 * recorded once. Fails with NT_EINVAL (size 0 or base + size overflows) or NT_ENOMEM. */
NT_API int nt_native_add_module(nt_native *nn, uint64_t base, uint64_t size,
				uint64_t file_offset, const char *path, const char *build_id,
				nt_error *err);
/* Records a libnettrace-Sampler ModuleMap event (fields read by name). Returns 1 if used,
 * 0 if not a ModuleMap event or malformed, < 0 on allocation failure. */
NT_API int nt_native_add_event(nt_native *nn, const nt_event *ev, uint32_t pointer_size);
/* Resolves ip: *frames gets *n frames, innermost inlined function first, the function the
 * code belongs to last; *n is 0 when no module covers ip. Borrowed until nt_native_free().
 * Fails only with NT_ENOMEM (file problems give module+0xOFFSET frames). */
NT_API int nt_native_resolve(nt_native *nn, uint64_t ip, const nt_native_frame **frames,
			     size_t *n, nt_error *err);
/* The frames of one address, as nt_native_resolve() gives them. */
typedef struct nt_native_result {
	const nt_native_frame *frames;
	size_t n;
} nt_native_result;
/* Resolves n addresses in address order (sorted here: compile units and line tables are
 * read in one pass each) and, when out is not NULL, sets out[i] to the frames of ips[i].
 * nt_native_resolve() on them is a cache hit afterwards. Fails only with NT_ENOMEM. */
NT_API int nt_native_resolve_batch(nt_native *nn, const uint64_t *ips, size_t n,
				   nt_native_result *out, nt_error *err);
/* Modules in the order they were added. module_at returns 1, or 0 when i is out of range;
 * the strings are borrowed until nt_native_free(). */
NT_API size_t nt_native_module_count(const nt_native *nn);
NT_API int nt_native_module_at(const nt_native *nn, size_t i, nt_native_module *out);
/* "ok", "symbols only", "no symbols", "missing", "build id mismatch", "bad file", "unused";
 * "?" for an unknown value. Static strings, never NULL. */
NT_API const char *nt_native_status_name(int status);

/* Rewrites the trace of r (our sampler's native samples and ModuleMap events) to sink as
 * a V6 trace of the Universal providers, the format of `dotnet-trace collect-linux`
 * that TraceEvent and PerfView read (doc/format/universal-events.md): a cpu event of
 * Value 1 per sample, a ProcessMapping (build id in ProcessMappingMetadata) per module,
 * and a ProcessSymbol per sampled address, named here by the DWARF resolver (nopts as in
 * nt_native_new(); NULL = defaults) so that readers need no module files. Other events are
 * not copied. Reads r to the end; errors are the reader's, the writer's or NT_ENOMEM. */
NT_API int nt_universal_write(nt_reader *r, const nt_sink *sink, const nt_native_opts *nopts,
			      nt_error *err);

/* The native resolver of a profile's session (NULL when the session has no module map, or
 * i is out of range); finishes p if needed. Borrowed until nt_profile_free(). */
NT_API nt_native *nt_profile_native(nt_profile *p, size_t session);
/* The native frame behind g->frames[i] of a group nt_profile_foreach() gave (found by
 * g->stack): its file, line, module..., or NULL for a frame that is not native ("?!?",
 * the TraceEvent pseudo-frame, a managed frame without a source line: see "Managed source
 * lines" below). Borrowed until nt_profile_free(). A native IP can
 * give several frames (its inline chain), so g->depth may exceed g->nips (+1 with the
 * pseudo-frame); frames of one IP share its file_offset. */
NT_API const nt_native_frame *nt_profile_frame_native(nt_profile *p, const nt_sample_group *g,
						      uint32_t i);

/* ---------------------------------------------------------------------------------------
 * Managed source lines (sym-managed.c, pdb.c): a JIT'd frame's IP -> IL offset through
 * the MethodILToNativeMap events of its code version (runtime keyword 0x20000, and the
 * rundown's MethodILToNativeMapDCEnd), then -> file:line through the sequence points of
 * the module's portable PDB: a .pdb file or the PDB embedded in the assembly, found from
 * the ModuleLoad / ModuleDCEnd payload (ModuleILPath, ManagedPdbBuildPath) and
 * nt_native_opts.symbol_path, and accepted only when its PDB id matches the recorded
 * ManagedPdbSignature. A profile's managed frames with a line then have an
 * nt_profile_frame_native() frame (function, file, line, module; inline_depth 0,
 * elf_address UINT64_MAX): the leaf at its sampled IP, callers at the call (IP - 1).
 * ------------------------------------------------------------------------------------- */

/* Why a managed frame has a line or not; for modules, whether their PDB was read. */
enum nt_managed_status {
	NT_MANAGED_LINE = 0,        /* frame: has a line; module: PDB read ("ok") */
	NT_MANAGED_NO_METHOD,       /* no method event with a MethodDef token covers the IP */
	NT_MANAGED_NO_IL_MAP,       /* its code version has no MethodILToNativeMap event */
	NT_MANAGED_NO_PDB,          /* the module's PDB was not found */
	NT_MANAGED_PDB_MISMATCH,    /* PDBs were found, none with the recorded PDB id */
	NT_MANAGED_BAD_PDB,         /* the PDB or the assembly is malformed */
	NT_MANAGED_NO_SEQUENCE_POINT, /* the PDB has no sequence point for the IL offset */
	NT_MANAGED_UNUSED,          /* module: no frame looked up in it */
	NT_MANAGED_NSTATUS
};
/* "line" ("ok" for modules: pass is_module 1), "no method", "no IL map", "PDB not found",
 * "PDB mismatch", "bad PDB", "no sequence point", "unused"; "?" for an unknown value.
 * Static strings, never NULL. */
NT_API const char *nt_managed_status_name(int status, int is_module);

/* Managed frames of a profile's selected samples, by status (each frame of each sample
 * counted once, as its samples; frames that no managed method covers are not counted). */
typedef struct nt_managed_lines {
	uint64_t frames[NT_MANAGED_NSTATUS]; /* every managed frame of the samples */
	uint64_t leaf[NT_MANAGED_NSTATUS];   /* the innermost managed frame of each sample */
	uint64_t pdb_leaf[NT_MANAGED_NSTATUS]; /* the innermost frame, of each sample, of a
					     module whose PDB was read (the code with sources) */
	uint64_t il_maps;           /* IL-map events in the session(s) */
	uint64_t code_versions;     /* method code versions (distinct start addresses) */
} nt_managed_lines;

typedef struct nt_managed_module {
	const char *path;           /* ModuleILPath as recorded */
	const char *name;           /* its file name without extension */
	const char *pdb_build_path; /* ManagedPdbBuildPath as recorded, "" if none */
	const char *pdb_id;         /* recorded ManagedPdbSignature (GUID text), "" if none */
	const char *pdb_path;       /* the file the PDB was read from, "" if none */
	int status;                 /* enum nt_managed_status (NT_MANAGED_LINE: read) */
	const char *message;        /* why not, with the file and byte offset; "" if read */
	uint64_t lookups;           /* distinct frames resolved in it */
	uint64_t lines;             /* of them with a line */
} nt_managed_module;

/* Sums over session (or every session when session is SIZE_MAX) of a finished profile
 * (finished here if needed). Fails with the profile's error or NT_EINVAL. */
NT_API int nt_profile_managed_lines(nt_profile *p, size_t session, nt_managed_lines *out,
				    nt_error *err);
/* Managed modules of a session, in the order recorded; module_at returns 1, or 0 when i
 * is out of range. Strings are borrowed until nt_profile_free(). */
NT_API size_t nt_profile_managed_module_count(nt_profile *p, size_t session);
NT_API int nt_profile_managed_module_at(nt_profile *p, size_t session, size_t i,
					nt_managed_module *out);

/* ---------------------------------------------------------------------------------------
 * Subsystems (category.c) and time histograms ("when"; profile.c, tree.c)
 *
 * Subsystems are a second rule dimension beside the blocked-time categories: rules map
 * frame patterns to a free-form name ("storage", "json", "networking"), in the format of
 * nettrace-rules(5) with a name where a rules file has a category (nettrace-rules(5),
 * SUBSYSTEMS). A profile built with nt_profile_opts.subsystems gives every group the
 * subsystem that decides for its stack and the subsystem of each of its frames; trees
 * (nt_tree_subsystem_at()), folded stacks (nt_fold_opts.subsystem_frame) and the SQL
 * store read them from the groups.
 *
 * With nt_profile_opts.when, a profile also keeps when each group's samples happened: a
 * sparse histogram per group over one time grid shared by all groups. The grid has
 * NT_WHEN_FINE fine buckets of a power-of-two width in ns; it starts at the first sample
 * recorded and doubles its width (merging pairs of buckets) whenever a sample falls
 * outside it, so memory stays bounded by the distinct (group, bucket) pairs, never by the
 * number of samples. The time axis is ns since each session's start: several sessions
 * overlay. Trees rebin the fine buckets into a few display buckets (nt_tree_when()).
 * ------------------------------------------------------------------------------------- */

typedef struct nt_subsystems nt_subsystems;

/* Parses a subsystem rules text: one rule per line, "[outer] NAME PATTERN", '#'
 * comments, the glob patterns and escapes of nettrace-rules(5). NAME is 1..32 bytes of
 * letters, digits, '_', '.', '-', '+' and '/', starting with a letter, digit or '_'.
 * Errors as nt_rules_parse() ("NAME: line 7: bad subsystem name '...'", err->offset the
 * line's byte offset): NT_EFORMAT, NT_ELIMIT, NT_ENOMEM; *out is then NULL. The caller
 * frees *out with nt_subsystems_free(). Thread safety: immutable after parsing. */
NT_API int nt_subsystems_parse(nt_subsystems **out, const char *text, size_t len,
			       const char *name, nt_error *err);
/* Reads and parses a subsystem rules file (NT_EIO when it cannot be read, else as
 * nt_subsystems_parse(); free *out with nt_subsystems_free()). */
NT_API int nt_subsystems_load(nt_subsystems **out, const char *path, nt_error *err);
/* The built-in rules: data/rules/subsystems.rules (.NET base library, ASP.NET Core,
 * Entity Framework Core, the runtime, glibc), compiled in. Fails with NT_ENOMEM, or
 * NT_EUNSUPPORTED when built without them; *out is then NULL. Free *out with
 * nt_subsystems_free(). */
NT_API int nt_subsystems_default(nt_subsystems **out, nt_error *err);
/* Frees s and its names (accepts NULL); nothing may use it afterwards (profiles borrow it). */
NT_API void nt_subsystems_free(nt_subsystems *s);
/* Number of distinct names, and name i (0 .. count-1, in order of first appearance in the
 * text); NULL when i is out of range (-1 included). Borrowed, valid until the free. */
NT_API size_t nt_subsystems_count(const nt_subsystems *s);
NT_API const char *nt_subsystems_name(const nt_subsystems *s, int i);
/* Subsystem of a stack (frames leaf first), as nt_rules_match() decides a category: the
 * first frame from the leaf that matches a rule decides, unless a frame matches an
 * "outer" rule (then the outer rule nearest the root does). Returns the name index, or -1
 * when no rule matches. When frame_subsystems is not NULL it receives, for each of the
 * depth frames, that frame's own subsystem (its outer rule if it matches one, else its
 * first matching rule; -1 none): the subsystem that decides is always one of them. */
NT_API int nt_subsystems_match(const nt_subsystems *s, const char *const *frames,
			       size_t depth, int32_t *frame_subsystems);

/* The subsystem rules of a profile built with nt_profile_opts.subsystems (the given ones
 * or the built-in defaults): nt_sample_group.subsystem indexes its names. NULL when the
 * profile does not classify subsystems. Borrowed, valid for the profile's life. */
NT_API const nt_subsystems *nt_profile_subsystems(const nt_profile *p);

#define NT_WHEN_FINE 1024u        /* fine buckets of a profile's time grid */
#define NT_WHEN_MAX_BUCKETS 256u  /* display buckets of a tree, at most */

/* Samples of one group in one fine bucket. */
typedef struct nt_when_bin {
	uint64_t samples;
	uint32_t bucket;            /* 0 .. NT_WHEN_FINE-1 */
} nt_when_bin;

/* The time grid of a profile built with nt_profile_opts.when. */
typedef struct nt_when_grid {
	size_t sz;                  /* sizeof(nt_when_grid), set by the caller (NT_INIT) */
	int64_t origin_ns;          /* start of fine bucket 0, ns since the session start */
	uint64_t width_ns;          /* width of one fine bucket (a power of two, >= 1) */
	uint32_t nbuckets;          /* NT_WHEN_FINE */
	uint32_t first, last;       /* first and last non-empty fine bucket (0 if none) */
	uint64_t samples;           /* samples recorded, all groups (0: the grid is empty) */
} nt_when_grid;

/* Fills *out (its sz set by the caller) with p's grid (finishing p if needed). Fails with
 * NT_EINVAL when p was built without nt_profile_opts.when or out's sz is not set, or with
 * the profile's error. */
NT_API int nt_profile_when_grid(nt_profile *p, nt_when_grid *out, nt_error *err);

/* The display buckets of a tree built with when_buckets. They split [start_ns, end_ns)
 * (ns since the session start: the fine buckets from the first to the last that hold
 * samples of the tree) as evenly as whole fine buckets allow: fine bucket j (0 .. fine-1,
 * counted from start_ns) belongs to display bucket j * buckets / fine (rounded down), so
 * widths differ by one fine bucket at most (a bucket may hold none when fine < buckets). */
typedef struct nt_tree_when_info {
	size_t sz;                  /* sizeof(nt_tree_when_info), set by the caller (NT_INIT) */
	uint32_t buckets;           /* nt_tree_opts.when_buckets */
	int64_t start_ns, end_ns;
	uint64_t fine_ns;           /* width of a fine bucket (nt_when_grid.width_ns) */
	uint32_t fine;              /* fine buckets in [start_ns, end_ns) */
	uint64_t samples;           /* samples in the tree (the root's) */
	uint64_t peak;              /* the root's fullest bucket, in samples */
} nt_tree_when_info;
/* Returns 1 and fills *out (NULL: only asks; else its sz set by the caller) when t has
 * time histograms, else 0 (also when out's sz is not set: nothing is written). */
NT_API int nt_tree_when(const nt_tree *t, nt_tree_when_info *out);

/* Time per subsystem in a tree whose profile classifies subsystems. Self: the samples the
 * subsystem decides (nt_sample_group.subsystem); they partition the tree, and the
 * samples no subsystem decides form the entry "other". Total: the samples with the
 * subsystem as the own subsystem of any frame of their stack (frame_subsystems), counted
 * once per sample; for "other", its self. */
typedef struct nt_tree_subsystem {
	const char *name;
	uint64_t self_samples, total_samples;
	double self_ns, total_ns;
	double cat_ns[NT_CAT_COUNT];        /* self_ns by category */
	uint64_t cat_samples[NT_CAT_COUNT]; /* self_samples by category */
	const uint64_t *when;       /* with when_buckets: self_samples per time bucket */
} nt_tree_subsystem;
/* Number of subsystems with samples (0 when the profile does not classify them). */
NT_API size_t nt_tree_subsystem_count(const nt_tree *t);
/* The i-th subsystem by self (NT_TREE_BY_SELF) or total (NT_TREE_BY_TOTAL) weight, or
 * samples when the tree is by_samples, ties by name; NULL when i (or order) is out of
 * range. Borrowed until nt_tree_free(). */
NT_API const nt_tree_subsystem *nt_tree_subsystem_at(const nt_tree *t, int order, size_t i);

/* ---------------------------------------------------------------------------------------
 * Diagnostics IPC (diag-ipc.c): attach to a running .NET process through the runtime's
 * diagnostic socket ($TMPDIR/dotnet-diagnostic-PID-KEY-socket; in a container, seen through
 * /proc/PID/root), ask who it is, start an EventPipe streaming session whose connection
 * then carries a nettrace stream (read it with nt_reader_open_fd()), and stop it.
 * doc/format/diagnostics-ipc.md describes the protocol. Replies are untrusted: every size
 * is checked, reads time out, errors carry the reply's byte offset. Linux only.
 * Thread safety: the functions share no state.
 * ------------------------------------------------------------------------------------- */

#define NT_DIAG_TIMEOUT_MS 5000          /* default reply timeout */
#define NT_DIAG_RUNDOWN_DEFAULT 0x80020139ull /* the runtime's default rundown keywords */

/* Finds the diagnostic socket of pid: in $TMPDIR (else /tmp), then in the target's own
 * TMPDIR and /tmp under /proc/PID/root, named with the pid the target sees (its pid
 * namespace); of several, the one whose key is the process start time. Fails with
 * NT_EINVAL (no such process, no socket) or NT_EIO (its root cannot be read). */
NT_API int nt_diag_socket_path(uint32_t pid, char *buf, size_t len, nt_error *err);
/* The pids (ascending) of the processes whose socket nt_diag_socket_path() finds; the
 * caller owns *pids and frees it with free() (NULL, *n 0 when there are none). Fails with
 * NT_EIO (/proc cannot be listed) or NT_ENOMEM; *pids is then NULL. */
NT_API int nt_diag_list(uint32_t **pids, size_t *n, nt_error *err);
/* Connects to a diagnostic socket; returns the fd (close it) or < 0: NT_EIO with a message
 * that says whose socket it is on a permission error, NT_EINVAL for a path too long. */
NT_API int nt_diag_connect(const char *path, nt_error *err);

/* ProcessInfo2 (ProcessInfo on runtimes before .NET 7: version 1, no assembly/version).
 * Strings are UTF-8, truncated to their buffers. */
typedef struct nt_diag_info {
	size_t sz;               /* sizeof(nt_diag_info), set by the caller (NT_INIT) */
	int version;             /* 2 or 1: which command answered */
	uint64_t ns_pid;         /* the pid the process sees (its pid namespace) */
	uint8_t cookie[16];      /* runtime instance GUID */
	char command_line[1024];
	char os[32];
	char arch[32];
	char assembly[256];      /* the entry assembly's name */
	char clr_version[128];   /* the runtime's product version, e.g. "10.0.12" */
} nt_diag_info;
/* Fills *out (its sz set by the caller; NT_EINVAL when it is not). */
NT_API int nt_diag_process_info(const char *path, int timeout_ms, nt_diag_info *out,
				nt_error *err);

/* One provider of a session. level: 0 LogAlways, 1 Critical ... 5 Verbose. */
typedef struct nt_diag_provider {
	const char *name;
	uint64_t keywords;
	uint32_t level;
	const char *arguments;  /* "key=value;key=value" or NULL */
} nt_diag_provider;

/* A provider list parsed from text; owns its strings. Zero-initialise before use. */
typedef struct nt_diag_providers {
	nt_diag_provider *v;
	size_t n, cap;
} nt_diag_providers;
/* Appends providers in dotnet-trace's syntax, "Name[:Keywords[:Level[:Arguments]]]" joined
 * by ',' (outside double quotes): keywords in hex (0x optional, empty 0, '*' all), level
 * 0..5 or a name (informational when empty). A provider named twice is merged (keywords
 * OR'd, the more verbose level). NT_EINVAL names the bad part (err->offset: its index). */
NT_API int nt_diag_providers_parse(nt_diag_providers *ps, const char *spec, nt_error *err);
/* Appends a profile's providers (the names dotnet-trace uses, plus aliases: cpu,
 * thread-time, gc, lock); *rundown gets its rundown keywords. NT_EINVAL if unknown. */
NT_API int nt_diag_providers_profile(nt_diag_providers *ps, const char *name,
				     uint64_t *rundown, nt_error *err);
/* Frees the list's providers and strings and zeroes *ps for reuse (accepts NULL). */
NT_API void nt_diag_providers_free(nt_diag_providers *ps);
/* Profile i (0..): its name, alias (or NULL), providers and description; NULL past the
 * end. Static strings. */
NT_API const char *nt_diag_profile_at(size_t i, const char **alias, const char **providers,
				      const char **description);

typedef struct nt_diag_collect_opts {
	size_t sz;                  /* sizeof(nt_diag_collect_opts) */
	const nt_diag_provider *providers;
	size_t nproviders;          /* 1..4096 */
	uint32_t buffer_mb;         /* the session's circular buffer; 0 = 256 */
	uint64_t rundown_keyword;   /* 0: no rundown; NT_DIAG_RUNDOWN_DEFAULT: the usual one */
	int no_stackwalk;           /* 1: events without stacks */
	int timeout_ms;             /* reply timeout; 0 = NT_DIAG_TIMEOUT_MS */
	uint32_t command;           /* 0: CollectTracing4, then 3, then 2 as the runtime knows
				       them; 2..4: only that one */
} nt_diag_collect_opts;
/* Starts a streaming session: *fd gets the connection, which now carries the session's
 * nettrace stream until it is stopped (or the process exits), *session_id its id. An
 * error reply fails with NT_EUNSUPPORTED naming the runtime's HRESULT. */
NT_API int nt_diag_collect(const char *path, const nt_diag_collect_opts *opts, int *fd,
			   uint64_t *session_id, nt_error *err);
/* Stops a session (on a new connection): the runtime then writes the rundown and ends the
 * session's stream. Fails as nt_diag_connect(), with NT_EIO / NT_ETRUNC / NT_EFORMAT for
 * a lost or malformed reply, or NT_EUNSUPPORTED naming the runtime's HRESULT. */
NT_API int nt_diag_stop(const char *path, uint64_t session_id, int timeout_ms, nt_error *err);
/* "unknown command", "not supported"... for a runtime's error HRESULT ("error" for one
 * it does not know). Static strings, never NULL. */
NT_API const char *nt_diag_hresult_name(uint32_t hr);

/* ---------------------------------------------------------------------------------------
 * Live profile (live.c): the samples of the last few seconds of a stream being read, for
 * a live view (nettrace-top). Feed it every event a reader gives (nt_live_add: samples are
 * counted per one-second bucket of trace time, method and GC events are kept), ask for a
 * snapshot whenever the view is redrawn. Frames are named through nt_symtab (from the
 * stream's JIT/rundown events, or from a rundown read beside it and fed to nt_live_add too),
 * stacks are classified by the category rules, and each second's sampling rounds give the
 * realized interval (nt_rate). Memory grows with distinct stacks, not with samples.
 * Thread safety: none; a reader thread and a drawing thread need a lock around it.
 * ------------------------------------------------------------------------------------- */

typedef struct nt_live nt_live;

typedef struct nt_live_opts {
	size_t sz;               /* sizeof(nt_live_opts) */
	uint32_t window_s;       /* the window, in seconds: 0 = 10, at most 600 */
	const nt_rules *rules;   /* NULL = built-in rules; must outlive the live profile */
} nt_live_opts;

/* One function of a snapshot; the name is borrowed until the next snapshot. */
typedef struct nt_live_func {
	const char *name;
	uint64_t self_samples;   /* as the leaf */
	uint64_t total_samples;  /* anywhere on the stack, once per sample */
} nt_live_func;

/* One thread of a snapshot (threads with samples in the window, most samples first). */
typedef struct nt_live_thread {
	uint64_t thread_id;
	uint64_t samples;
	uint64_t cat_samples[NT_CAT_COUNT]; /* by category (enum nt_category) */
	int state;               /* category of its latest sample: running (cpu), lock, wait... */
	const char *leaf;        /* leaf frame of its latest sample */
	int64_t last_ns;         /* time of its latest sample */
} nt_live_thread;

typedef struct nt_live_view {
	int64_t now_ns;          /* the latest sample, ns since the session start */
	int64_t window_start_ns;
	double window_s;         /* span of the window that holds samples */
	uint64_t samples;        /* samples in the window */
	double samples_per_s;
	double interval_ns;      /* realized sampling interval in the window (0: unknown) */
	uint64_t rounds;         /* sampling round deltas it is measured on */
	uint64_t cat_samples[NT_CAT_COUNT];
	uint32_t gcs;            /* GC pauses that ended in the window */
	double gc_pause_ns, gc_pause_max_ns;
	uint64_t total_samples, total_events; /* since the start */
	size_t methods;          /* managed methods known */
	const nt_live_func *by_self, *by_total; /* nfuncs each, by self / total samples */
	size_t nfuncs;
	const nt_live_thread *threads;
	size_t nthreads;
} nt_live_view;

/* An empty live profile. Fails with NT_EINVAL (bad options, window over 600 s) or
 * NT_ENOMEM; *out is then NULL. The caller frees *out with nt_live_free(). */
NT_API int nt_live_new(nt_live **out, const nt_live_opts *opts, nt_error *err);
/* Frees lv and the snapshots it returned (accepts NULL). */
NT_API void nt_live_free(nt_live *lv);
/* Sets the stream's header (the reader's; copied); required before nt_live_add. Fails with
 * NT_EINVAL for a NULL header or a zero tick frequency. */
NT_API int nt_live_begin(nt_live *lv, const nt_trace_header *h, nt_error *err);
/* Counts a sample or keeps a method / GC event; ignores the rest. Fails with NT_ENOMEM. */
NT_API int nt_live_add(nt_live *lv, const nt_event *ev, nt_error *err);
/* The window ending at the latest sample: *out is borrowed until the next snapshot or
 * nt_live_free(). Fails with NT_ENOMEM (*out then NULL). */
NT_API int nt_live_snapshot(nt_live *lv, const nt_live_view **out, nt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* NETTRACE_H */
