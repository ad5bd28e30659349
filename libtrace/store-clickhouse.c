/* SPDX-License-Identifier: MIT */
/* store-clickhouse.c - the ClickHouse export: the model of an SQLite store (sessions,
 * threads, stacks, samples, charges, events) streamed into ClickHouse tables made for many traces
 * (doc/clickhouse-schema.md), over ClickHouse's HTTP interface with one streamed INSERT
 * per table: samples and charges, the big tables, as "FORMAT Native" blocks of columns,
 * the others as "FORMAT RowBinary" rows (both binary: no text to format or parse on
 * either side).
 *
 * Each session of the store is one trace, known by the id its caller derives from the
 * trace's content. A trace is complete when its row in `traces` exists; that row is
 * written last, so a failed import leaves rows that no query joined with `traces` counts,
 * and the next import of the same trace first deletes them (ALTER TABLE ... DELETE, which
 * touches only the parts that exist when it is issued). A trace already complete is
 * skipped: importing the same file twice adds nothing.
 *
 * The server is a peer like any other input: its replies are read with a size cap and
 * parsed with bounds checks; a malformed reply is an error with its offset.
 * Not here: building the store (store-sqlite.c), the content ids (the caller), the HTTP
 * client (store-clickhouse-http.c), the memory buffers everything is built in (nt_out,
 * out.c). */
#include "store-clickhouse.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define CH_CHUNK (1u << 20)          /* bytes of a request body sent as one chunk */

/* The tables, created when missing (@DB@: the database; @CAT@ and @STYPE@: the Enum8 types of
 * category and sample_type, see enum_type). trace_id first in every key: a trace's rows are
 * together, and "WHERE trace_id = ..." reads only them. */
static const char *const CH_SCHEMA[] = {
	"CREATE TABLE IF NOT EXISTS @DB@.traces (trace_id String, file String, "
	"imported DateTime, sessions UInt32, samples UInt64, events UInt64, generator String, "
	"label_keys Array(String), label_values Array(String)) "
	"ENGINE = MergeTree ORDER BY trace_id",
	"CREATE TABLE IF NOT EXISTS @DB@.sessions (trace_id String, session_id UInt32, "
	"file String, process_id Int64, start_utc String, qpc_frequency Int64, "
	"declared_interval_ns Int64, inferred_interval_ns Float64, schedule String, "
	"duration_ns Int64, pointer_size Int32, processors Int32, format_version Int32, "
	"compat String, trace_samples UInt64, samples UInt64, lost_events Int64, "
	"truncated UInt8) ENGINE = MergeTree ORDER BY (trace_id, session_id)",
	"CREATE TABLE IF NOT EXISTS @DB@.threads (trace_id String, thread_id UInt32, "
	"tid Int64, name String) ENGINE = MergeTree ORDER BY (trace_id, thread_id)",
	"CREATE TABLE IF NOT EXISTS @DB@.stacks (trace_id String, callsite_id UInt64, "
	"depth UInt32, leaf String, frames Array(String)) "
	"ENGINE = MergeTree ORDER BY (trace_id, callsite_id)",
	"CREATE TABLE IF NOT EXISTS @DB@.samples (trace_id String, thread_id UInt32, "
	"ts_ns Int64, callsite_id UInt64, category @CAT@, sample_type @STYPE@, "
	"weight_ns Float64, subsystem String) ENGINE = MergeTree ORDER BY (trace_id, ts_ns)",
	"CREATE TABLE IF NOT EXISTS @DB@.charges (trace_id String, thread_id UInt32, "
	"ts_ns Int64, callsite_id UInt64, category @CAT@, sample_type @STYPE@, "
	"weight_ns Float64, subsystem String) ENGINE = MergeTree ORDER BY (trace_id, ts_ns)",
	"CREATE TABLE IF NOT EXISTS @DB@.events (trace_id String, thread_id UInt32, ts_ns Int64, "
	"provider String, event_id UInt32, name String, duration_ns Nullable(Int64), "
	"payload String) ENGINE = MergeTree ORDER BY (trace_id, name, ts_ns)",
};
/* The data tables, in the order they are written; `traces` comes last. */
static const char *const CH_DATA_TABLES[] = {"sessions", "threads", "stacks", "samples",
					     "charges", "events"};
#define CH_NDATA (sizeof CH_DATA_TABLES / sizeof CH_DATA_TABLES[0])

/* RowBinary values: little-endian integers and floats, strings as a LEB128 length and
 * the bytes, Nullable as a 0/1 byte before the value, arrays as a LEB128 count. */
static void rb_uleb(nt_out *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;
	do {
		t[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	nt_out_put(b, (const char *)t, n);
}

static void rb_le(nt_out *b, uint64_t v, size_t n)
{
	unsigned char t[8];
	for (size_t i = 0; i < n; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	nt_out_put(b, (const char *)t, n);
}

static void rb_str(nt_out *b, const char *s, size_t n)
{
	rb_uleb(b, n);
	nt_out_put(b, s, n);
}

static void rb_f64(nt_out *b, double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	rb_le(b, u, 8);
}

/* ------------------------------------------------------------------ the export */

/* Runs the statement built in q (out of memory while building it is NT_ENOMEM). */
static int exec_buf(const chconn *c, nt_out *q, char **out, nt_error *err)
{
	const char *sql = nt_out_cstr(q);
	if (!sql)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	return ntch_exec(c, sql, out, err);
}

typedef struct chexp {
	const chconn *c;
	nt_store *st;
	nt_error *err;
	const char *const *ids;  /* trace id of session i + 1 */
	size_t nids;
	unsigned char *want;     /* [session]: export this session */
	chreq req;
	nt_out buf;
	int table;               /* index in CH_DATA_TABLES of the INSERT in progress */
	uint64_t rows;
	uint64_t bytes;
	/* stacks: every callsite's parent and frame name, by id */
	int64_t *parent;
	char **name;
	size_t ncs;
	const char *const *labels;
	size_t nlabels;
	int no_events;
	uint64_t traces;         /* rows of `traces` written */
	/* samples and charges: what a group's samples share, encoded once */
	struct chgroup {
		uint32_t off[4], len[4]; /* trace_id, category, sample_type, subsystem as
					    Native String values: where in pool, how long */
		uint32_t tid;      /* thread_id */
		uint64_t cs;       /* callsite_id */
		uint8_t cat, stype; /* the Enum8 codes of category and sample_type */
		double weight;     /* weight_ns / samples, for rows without their own */
		int want;
		int own_weight;    /* a compat mode: each sample carries the weight charged */
	} *groups;
	size_t ngroups;
	const nt_profile *profile; /* the samples come from its sequence, not from the store */
	nt_ch_stats *stats;
	/* the column types of samples and charges in the database ([0] samples, [1] charges):
	 * 1 when category / sample_type is this version's Enum8, 0 when String (a database
	 * made before the Enum8 columns) */
	int cat_enum[2], st_enum[2];
	int modes_known;
	uint32_t maxlen[4];      /* the longest encoded trace_id, category, sample_type, subsystem */
	/* the distinct String values of the groups, encoded once, back to back (the rows copy
	 * from these few bytes, which stay in the cache, not from one copy per group) */
	nt_out pool;
	nt_strpool poolids;      /* the values interned: id -> poolv[id] */
	uint32_t *poolv;         /* each id's offset in pool */
	size_t poolcap;
} chexp;

static const char *trace_of(chexp *x, int64_t session)
{
	if (session < 1 || (uint64_t)session > x->nids || !x->want[session - 1])
		return NULL;
	return x->ids[session - 1];
}

static int flush_rows(chexp *x, int last)
{
	nt_out *b = &x->buf;
	if (b->rc)
		return nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (nt_out_len(b) >= CH_CHUNK || (last && nt_out_len(b))) {
		x->bytes += nt_out_len(b);
		if (ntch_req_chunk(&x->req, nt_out_data(b), nt_out_len(b)))
			return -1;
		nt_out_reset(b);
	}
	return 0;
}

/* One value as the ClickHouse column's type: 'b' UInt8, 'u' UInt32, 'U' UInt64, 'i' Int32,
 * 'I' Int64, 'f' Float64, 's' String, 'n' Nullable(Int64). A NULL of a column that is not
 * Nullable is written as 0 or "" (the SELECTs COALESCE those that the store may hold). */
static void put_value(nt_out *b, char type, const nt_sql_value *v)
{
	int64_t i = v->type == NT_SQL_INTEGER ? v->i : v->type == NT_SQL_REAL ? (int64_t)v->d : 0;
	switch (type) {
	case 'b': rb_le(b, (uint64_t)i, 1); break;
	case 'u': case 'i': rb_le(b, (uint64_t)i, 4); break;
	case 'U': case 'I': rb_le(b, (uint64_t)i, 8); break;
	case 'f': rb_f64(b, v->type == NT_SQL_REAL ? v->d : (double)i); break;
	case 'n':
		if (v->type == NT_SQL_NULL) {
			nt_out_put(b, "\1", 1);
		} else {
			nt_out_put(b, "\0", 1);
			rb_le(b, (uint64_t)i, 8);
		}
		break;
	default:
		if (v->type == NT_SQL_TEXT || v->type == NT_SQL_BLOB)
			rb_str(b, v->text ? v->text : "", v->text ? v->len : 0);
		else
			rb_str(b, "", 0);
		break;
	}
}

/* The column types of each data table after trace_id (put_value's letters), in the order
 * of CH_SCHEMA and of CH_SELECT; stacks are written by on_used_callsite. */
static const char *const CH_TYPES[] = {"usIsIIfsIiiisUUIb", "uIs", NULL, NULL, NULL,
				       "uIsusns"};

/* A row of a data table's SELECT: column 0 is the session id, replaced by the trace id.
 * The SELECTs COALESCE every column that is not Nullable in ClickHouse, so a NULL here is
 * one of a Nullable column (\N). */
static int on_row(void *ctx, const nt_sql_row *row)
{
	chexp *x = ctx;
	if (!row->values || !row->ncols)
		return 0;
	const char *id = trace_of(x, row->values[0].type == NT_SQL_INTEGER ? row->values[0].i : -1);
	if (!id)
		return 0;
	const char *types = CH_TYPES[x->table];
	if (row->ncols != strlen(types) + 1) {
		nt_fail(x->err, NT_EINTERNAL, NT_NO_OFFSET, "%s: %zu columns for %zu",
			CH_DATA_TABLES[x->table], row->ncols, strlen(types) + 1);
		return 1;
	}
	rb_str(&x->buf, id, strlen(id));
	for (size_t i = 1; i < row->ncols; i++)
		put_value(&x->buf, types[i - 1], &row->values[i]);
	x->rows++;
	return flush_rows(x, 0) ? 1 : 0;
}

/* The SELECT that feeds each data table: columns in the ClickHouse table's order after
 * trace_id, session id first; COALESCE gives a default where the store may hold NULL and
 * the ClickHouse column is not Nullable. */
static const char *const CH_SELECT[] = {
	/* sessions */
	"SELECT id, id, file, COALESCE(process_id, 0), COALESCE(start_utc, ''), "
	"COALESCE(qpc_frequency, 0), COALESCE(declared_interval_ns, 0), "
	"COALESCE(inferred_interval_ns, 0), COALESCE(schedule, ''), "
	"COALESCE(duration_ns, 0), COALESCE(pointer_size, 0), COALESCE(processors, 0), "
	"COALESCE(format_version, 0), compat, trace_samples, samples, "
	"COALESCE(lost_events, 0), truncated FROM sessions ORDER BY id",
	/* threads */
	"SELECT session_id, id, tid, COALESCE(name, '') FROM threads ORDER BY id",
	/* stacks: written from memory (see write_stacks) */
	NULL,
	/* samples: written from the groups and the rows (see write_samples) */
	NULL,
	/* charges: as samples (see write_charges) */
	NULL,
	/* events */
	"SELECT session_id, COALESCE(thread_id, 0), ts_ns, provider, event_id, name, "
	"duration_ns, COALESCE(payload, '') FROM events",
};

static int on_callsite(void *ctx, const nt_sql_row *row)
{
	chexp *x = ctx;
	if (!row->values)
		return 0;
	int64_t id = row->values[0].i;
	if (id < 1 || (uint64_t)id > x->ncs)
		return 0;
	x->parent[id - 1] = row->values[1].type == NT_SQL_INTEGER ? row->values[1].i : 0;
	if (!(x->name[id - 1] = nt_strdup(row->values[2].text ? row->values[2].text : "")))
		return 1;
	return 0;
}

static int on_count(void *ctx, const nt_sql_row *row)
{
	if (row->values && row->values[0].type == NT_SQL_INTEGER)
		*(int64_t *)ctx = row->values[0].i;
	return 0;
}

/* One row per (trace, callsite) that a sample of the trace uses: its frames root first. */
static int on_used_callsite(void *ctx, const nt_sql_row *row)
{
	chexp *x = ctx;
	if (!row->values)
		return 0;
	const char *id = trace_of(x, row->values[0].i);
	int64_t cs = row->values[1].i;
	if (!id || cs < 1 || (uint64_t)cs > x->ncs)
		return 0;
	/* the chain leaf to root, bounded by the number of callsites (no cycles) */
	size_t depth = 0;
	for (int64_t c = cs; c >= 1 && (uint64_t)c <= x->ncs && depth <= x->ncs; c = x->parent[c - 1])
		depth++;
	int64_t *chain = malloc(depth * sizeof *chain);
	if (!chain)
		return 1;
	size_t k = depth;
	for (int64_t c = cs; k && c >= 1 && (uint64_t)c <= x->ncs; c = x->parent[c - 1])
		chain[--k] = c;
	/* trace_id String, callsite_id UInt64, depth UInt32, leaf String, frames Array(String) */
	rb_str(&x->buf, id, strlen(id));
	rb_le(&x->buf, (uint64_t)cs, 8);
	rb_le(&x->buf, depth - 1, 4); /* as callsites.depth: 0 for a root */
	const char *leaf = x->name[cs - 1] ? x->name[cs - 1] : "";
	rb_str(&x->buf, leaf, strlen(leaf));
	rb_uleb(&x->buf, depth);
	for (size_t i = 0; i < depth; i++) {
		const char *f = x->name[chain[i] - 1] ? x->name[chain[i] - 1] : "";
		rb_str(&x->buf, f, strlen(f));
	}
	free(chain);
	x->rows++;
	return flush_rows(x, 0) ? 1 : 0;
}

static int write_stacks(chexp *x)
{
	int64_t n = 0;
	if (nt_store_query(x->st, "SELECT COALESCE(MAX(id), 0) FROM callsites", on_count, &n,
			   x->err))
		return -1;
	if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(char *))
		return nt_fail(x->err, NT_EINTERNAL, NT_NO_OFFSET, "bad callsite count");
	x->ncs = (size_t)n;
	x->parent = calloc(x->ncs ? x->ncs : 1, sizeof *x->parent);
	x->name = calloc(x->ncs ? x->ncs : 1, sizeof *x->name);
	if (!x->parent || !x->name)
		return nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	int rc = nt_store_query(x->st,
				"SELECT c.id, c.parent_id, f.name FROM callsites c "
				"JOIN frames f ON f.id = c.frame_id",
				on_callsite, x, x->err);
	if (rc > 0)
		return nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (rc)
		return -1;
	rc = nt_store_query(x->st,
			    "SELECT DISTINCT session_id, callsite_id FROM sample_groups "
			    "WHERE callsite_id IS NOT NULL ORDER BY session_id, callsite_id",
			    on_used_callsite, x, x->err);
	if (rc > 0 && !x->err->code)
		return nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ samples (Native) */

/* samples and charges go as "INSERT ... FORMAT Native": blocks of columns, which the
 * server reads with one copy per column instead of a parse per value (RowBinary cost it
 * about 15% more CPU; sorting rows it gets out of order, about 30% more: the sequence of a
 * profile is in time order). Block: the column count and the row count (LEB128), then per
 * column its name, its type (Strings) and its values: fixed-size ones little-endian back to
 * back, Strings as LEB128 length and bytes, Enum8 as one byte. */
#define CH_NATIVE_ROWS 65536u    /* rows per block (the server joins them up to 1 M) */
#define CH_PARALLEL_MIN 20000u   /* entries of the sequence from which samples take two connections */
#define CH_NCOLS 8

static const char *const CH_SAMPLE_COLS[CH_NCOLS] = {
	"trace_id", "thread_id", "ts_ns", "callsite_id", "category", "sample_type", "weight_ns",
	"subsystem"};

static const char *const CH_STYPES[] = {"error", "external", "managed"}; /* enum nt_sample_type */

/* The Enum8 of category (kind 0: the library's category names, by enum nt_category) or of
 * sample_type (kind 1), as the server spells it back in system.columns. */
static void enum_type(nt_out *b, int kind)
{
	int n = kind ? (int)(sizeof CH_STYPES / sizeof CH_STYPES[0]) : NT_CAT_COUNT;
	nt_out_str(b, "Enum8(");
	for (int i = 0; i < n; i++)
		nt_out_printf(b, "%s'%s' = %d", i ? ", " : "",
			      kind ? CH_STYPES[i] : nt_category_name(i), i);
	nt_out_str(b, ")");
}

/* One INSERT of samples or charges in progress: the block being filled, a column each. */
typedef struct chnat {
	chreq req;
	nt_error *err;
	int cat_enum, st_enum;
	const char *pool;        /* chexp's pool, complete */
	nt_out col[CH_NCOLS];
	size_t rows;             /* in the block */
	uint64_t total, bytes;   /* rows and bytes sent */
} chnat;

static void nat_free(chnat *w)
{
	for (int i = 0; i < CH_NCOLS; i++)
		nt_out_end(&w->col[i]);
	if (w->req.fd >= 0)
		close(w->req.fd);
	w->req.fd = -1;
}

/* Bytes of slack after a column's values and a group's encoded strings: a value is
 * copied 16 bytes at a time. */
#define CH_SLACK 16

/* A value appended to a column that has room (nt_out_reserve in nat_start): in place, at
 * the column's tail, without a check per value. */
static inline void nat_copy(nt_out *col, const char *s, size_t n)
{
	char *d = nt_out_tail(col);
	for (size_t i = 0; i < n; i += 16)
		memcpy(d + i, s + i, 16);
	nt_out_advance(col, n);
}

static inline void nat_le(nt_out *col, uint64_t v, size_t n)
{
	char *d = nt_out_tail(col);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(d, &v, 8); /* one store; the bytes past n are slack, overwritten next */
#else
	for (size_t i = 0; i < n; i++)
		d[i] = (char)(v >> (8 * i));
#endif
	nt_out_advance(col, n);
}

static int nat_flush(chnat *w)
{
	for (int i = 0; i < CH_NCOLS; i++)
		if (w->col[i].rc)
			return nt_fail(w->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (!w->rows)
		return 0;
	nt_out h, et;
	nt_out_init(&h, NULL);
	nt_out_init(&et, NULL);
	int rc = 0;
	for (int i = 0; !rc && i < CH_NCOLS; i++) {
		nt_out_reset(&h);
		if (i == 0) {
			rb_uleb(&h, CH_NCOLS);
			rb_uleb(&h, w->rows);
		}
		const char *type = i == 0 || i == 7 ? "String" : i == 1 ? "UInt32" : i == 2 ? "Int64"
				 : i == 3 ? "UInt64" : i == 6 ? "Float64" : NULL;
		if (!type) {
			int is_enum = i == 4 ? w->cat_enum : w->st_enum;
			nt_out_reset(&et);
			if (is_enum)
				enum_type(&et, i == 5);
			else
				nt_out_str(&et, "String");
			const char *t = nt_out_cstr(&et);
			type = t ? t : ""; /* NULL: out of memory, reported below */
		}
		rb_str(&h, CH_SAMPLE_COLS[i], strlen(CH_SAMPLE_COLS[i]));
		rb_str(&h, type, strlen(type));
		nt_out *col = &w->col[i];
		if (h.rc || et.rc)
			rc = nt_fail(w->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		if (!rc && (ntch_req_chunk(&w->req, nt_out_data(&h), nt_out_len(&h)) ||
			    ntch_req_chunk(&w->req, nt_out_data(col), nt_out_len(col))))
			rc = -1;
		w->bytes += nt_out_len(&h) + nt_out_len(col);
		nt_out_reset(col);
	}
	nt_out_end(&et);
	nt_out_end(&h);
	w->total += w->rows;
	w->rows = 0;
	return rc;
}

/* One row: the group's values and the sample's time and weight (the hot loop of an
 * import). The columns have room for a block (nat_start), so no check here. */
static int nat_row(chnat *w, const struct chgroup *g, int64_t ts_ns, double weight_ns)
{
	const char *e = w->pool;
	uint64_t wb;
	memcpy(&wb, &weight_ns, sizeof wb);
	nt_out *c = w->col;
	nat_copy(&c[0], e + g->off[0], g->len[0]);
	nat_le(&c[1], g->tid, 4);
	nat_le(&c[2], (uint64_t)ts_ns, 8);
	nat_le(&c[3], g->cs, 8);
	if (w->cat_enum)
		nat_le(&c[4], g->cat, 1);
	else
		nat_copy(&c[4], e + g->off[1], g->len[1]);
	if (w->st_enum)
		nat_le(&c[5], g->stype, 1);
	else
		nat_copy(&c[5], e + g->off[2], g->len[2]);
	nat_le(&c[6], wb, 8);
	nat_copy(&c[7], e + g->off[3], g->len[3]);
	return ++w->rows >= CH_NATIVE_ROWS ? nat_flush(w) : 0;
}

static int nat_start(chexp *x, chnat *w, int charges, nt_error *err)
{
	memset(w, 0, sizeof *w);
	w->req.fd = -1;
	w->err = err;
	w->cat_enum = x->cat_enum[charges];
	w->st_enum = x->st_enum[charges];
	w->pool = nt_out_data(&x->pool);
	/* room for a block: each column's widest value times the rows */
	size_t width[CH_NCOLS] = {x->maxlen[0], 4, 8, 8, w->cat_enum ? 1 : x->maxlen[1],
				  w->st_enum ? 1 : x->maxlen[2], 8, x->maxlen[3]};
	for (int i = 0; i < CH_NCOLS; i++) {
		nt_out_init(&w->col[i], NULL);
		if (nt_out_reserve(&w->col[i], (size_t)CH_NATIVE_ROWS * width[i] + CH_SLACK))
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	}
	char q[256];
	snprintf(q, sizeof q, "INSERT INTO %s.%s FORMAT Native", x->c->db,
		 charges ? "charges" : "samples");
	return ntch_req_start(&w->req, x->c, q, err);
}

/* Sends the last block and reads the server's answer; adds the counts to x. */
static int nat_finish(chexp *x, chnat *w)
{
	int rc = nat_flush(w);
	if (!rc)
		rc = ntch_req_finish(&w->req, NULL);
	x->rows += w->total;
	x->bytes += w->bytes;
	return rc;
}

/* Which types category and sample_type have in the database's samples and charges:
 * this version's Enum8, or String (tables an earlier version made). Else an error. */
static int column_modes(chexp *x)
{
	if (x->modes_known)
		return 0;
	nt_out q, e;
	nt_out_init(&q, NULL);
	nt_out_init(&e, NULL);
	nt_out_printf(&q, "SELECT table, name, type = 'String', type = '");
	for (int kind = 0; kind < 2; kind++) {
		if (kind)
			nt_out_str(&q, "', type = '");
		nt_out_reset(&e);
		enum_type(&e, kind);
		const char *t = nt_out_data(&e);
		for (size_t i = 0; t && i < nt_out_len(&e); i++) {
			if (t[i] == '\'' || t[i] == '\\')
				nt_out_put(&q, "\\", 1);
			nt_out_put(&q, t + i, 1);
		}
	}
	nt_out_printf(&q, "' FROM system.columns WHERE database = '%s' AND table IN ('samples', "
		      "'charges') AND name IN ('category', 'sample_type')", x->c->db);
	char *out = NULL;
	int rc = e.rc ? nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory")
		      : exec_buf(x->c, &q, &out, x->err);
	nt_out_end(&q);
	nt_out_end(&e);
	if (rc)
		return -1;
	int seen[2][2] = {{0, 0}, {0, 0}};
	for (char *line = out; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char table[16], name[16];
		int is_str, is_cat, is_st;
		if (sscanf(line, "%15[a-z]\t%15[a-z_]\t%d\t%d\t%d", table, name, &is_str, &is_cat,
			   &is_st) == 5) {
			int t = !strcmp(table, "charges");
			int c = !strcmp(name, "sample_type");
			int is_enum = c ? is_st : is_cat;
			if (!is_str && !is_enum) {
				free(out);
				return nt_fail(x->err, NT_ESQL, NT_NO_OFFSET,
					       "ClickHouse table %s.%s: column %s is neither String "
					       "nor this version's Enum8 (doc/clickhouse-schema.md)",
					       x->c->db, table, name);
			}
			if (c)
				x->st_enum[t] = is_enum;
			else
				x->cat_enum[t] = is_enum;
			seen[t][c] = 1;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(out);
	for (int t = 0; t < 2; t++)
		for (int c = 0; c < 2; c++)
			if (!seen[t][c])
				return nt_fail(x->err, NT_ESQL, NT_NO_OFFSET,
					       "ClickHouse table %s.%s has no column %s", x->c->db,
					       t ? "charges" : "samples", c ? "sample_type" : "category");
	x->modes_known = 1;
	return 0;
}

/* *off: where the encoded value p[0..n) is in x->pool, added when new (the library's
 * string pool finds equal values; pool keeps them back to back for the rows). */
static int pool_intern(chexp *x, const char *p, size_t n, uint32_t *off)
{
	size_t before = x->poolids.n;
	if (nt_out_len(&x->pool) + n > UINT32_MAX / 2)
		return -1;
	int64_t id = nt_strpool_intern_h(&x->poolids, p, n, nt_strpool_hash(p, n));
	if (id < 0)
		return -1;
	if ((size_t)id < before) {
		*off = x->poolv[id];
		return 0;
	}
	if (nt_grow((void **)&x->poolv, &x->poolcap, (size_t)id + 1, sizeof *x->poolv))
		return -1;
	*off = x->poolv[id] = (uint32_t)nt_out_len(&x->pool);
	nt_out_put(&x->pool, p, n);
	return x->pool.rc ? -1 : 0;
}

static int on_group(void *ctx, const nt_sql_row *row)
{
	chexp *x = ctx;
	if (!row->values)
		return 0;
	const nt_sql_value *v = row->values;
	int64_t id = v[0].i;
	if (id < 1 || (uint64_t)id > x->ngroups)
		return 0;
	struct chgroup *g = &x->groups[id - 1];
	const char *tid = trace_of(x, v[1].i);
	if (!tid)
		return 0;
	g->want = 1;
	g->tid = (uint32_t)(v[2].type == NT_SQL_INTEGER ? v[2].i : 0);
	g->cs = (uint64_t)(v[3].type == NT_SQL_INTEGER ? v[3].i : 0);
	const char *cat = v[4].type == NT_SQL_TEXT && v[4].text ? v[4].text : "";
	const char *st = v[5].type == NT_SQL_TEXT && v[5].text ? v[5].text : "";
	int c = nt_category_parse(cat), t = -1;
	for (int i = 0; i < (int)(sizeof CH_STYPES / sizeof CH_STYPES[0]); i++)
		if (!strcmp(st, CH_STYPES[i]))
			t = i;
	if (c < 0 || t < 0) {
		nt_fail(x->err, NT_EINTERNAL, NT_NO_OFFSET, "sample group %" PRId64 ": category "
			"'%s' or sample type '%s' unknown", id, cat, st);
		return 1;
	}
	g->cat = (uint8_t)c;
	g->stype = (uint8_t)t;
	g->weight = v[7].type == NT_SQL_REAL ? v[7].d : (double)v[7].i;
	g->own_weight = v[8].type == NT_SQL_INTEGER && v[8].i != 0;
	nt_out enc;
	nt_out_init(&enc, NULL);
	int rc = 0;
	for (int i = 0; !rc && i < 4; i++) {
		nt_out_reset(&enc);
		if (i == 0)
			rb_str(&enc, tid, strlen(tid));
		else
			put_value(&enc, 's', &v[3 + i]);
		size_t n = nt_out_len(&enc);
		if (enc.rc || n > UINT32_MAX / 2 ||
		    pool_intern(x, nt_out_data(&enc), n, &g->off[i]))
			rc = 1;
		g->len[i] = (uint32_t)n;
		if (g->len[i] > x->maxlen[i])
			x->maxlen[i] = g->len[i];
	}
	nt_out_end(&enc);
	return rc;
}

/* The rows of sample_rows or charges (the store path): one connection. */
typedef struct chrows {
	chexp *x;
	chnat *w;
} chrows;

static int on_sample(void *ctx, const nt_sql_row *row)
{
	chrows *r = ctx;
	chexp *x = r->x;
	if (!row->values)
		return 0;
	const nt_sql_value *v = row->values;
	int64_t id = v[1].i;
	if (id < 1 || (uint64_t)id > x->ngroups || !x->groups[id - 1].want)
		return 0;
	const struct chgroup *g = &x->groups[id - 1];
	return nat_row(r->w, g, v[0].i, v[2].type == NT_SQL_REAL ? v[2].d : g->weight) ? 1 : 0;
}

/* A part of the profile's sequence sent over a connection of its own. */
typedef struct chslice {
	chexp *x;
	chnat w;
	size_t from, to;
	int charges;
	nt_error err;
	int rc;
} chslice;

static int send_slice(chslice *s)
{
	chexp *x = s->x;
	size_t n = 0;
	const nt_seqent *seq = nt_profile_sequence(x->profile, &n);
	if (s->to > n)
		s->to = n;
	for (size_t i = s->from; i < s->to; i++) {
		if (!(seq[i].flags & NT_SEQ_CHARGE) != !s->charges)
			continue;
		uint64_t id = (uint64_t)seq[i].group + 1;
		if (id > x->ngroups || !x->groups[id - 1].want)
			continue; /* a group the category filter left out */
		const struct chgroup *g = &x->groups[id - 1];
		double wns = s->charges || g->own_weight ? seq[i].weight_ns : g->weight;
		if (nat_row(&s->w, g, seq[i].time_ns, wns))
			return -1;
	}
	if (nat_flush(&s->w))
		return -1;
	return ntch_req_finish(&s->w.req, NULL);
}

static void *slice_main(void *arg)
{
	chslice *s = arg;
	s->rc = send_slice(s);
	return NULL;
}

/* The samples of the profile itself (nt_store_hook_profile_clickhouse): the store holds
 * its groups (ids 1 + the profile's group index, the store's only profile) but no rows. The
 * sequence is in reading order, as the store's rows would be. charges: the entries that are
 * GC pauses charged without a sample (the store's charges), else the samples. Many samples
 * go as two INSERTs at once, the halves of the sequence: the server parses each in a
 * thread of its own (its parsing, not ours, is the slower side). */
static int write_profile_samples(chexp *x, int charges)
{
	size_t n = 0;
	const nt_seqent *seq = nt_profile_sequence(x->profile, &n);
	if (!seq && n)
		return nt_fail(x->err, NT_EINVAL, NT_NO_OFFSET, "the profile kept no samples "
				 "(nt_store_hook_profile_clickhouse)");
	size_t nconn = !charges && n >= CH_PARALLEL_MIN ? 2 : 1;
	chslice sl[2];
	memset(sl, 0, sizeof sl);
	int rc = 0;
	for (size_t k = 0; k < nconn; k++) {
		sl[k].x = x;
		sl[k].from = n / nconn * k;
		sl[k].to = k + 1 == nconn ? n : n / nconn * (k + 1);
		sl[k].charges = charges;
		nt_error_clear(&sl[k].err);
		sl[k].w.req.fd = -1;
		if (!rc && nat_start(x, &sl[k].w, charges, &sl[k].err))
			rc = -1;
	}
	pthread_t th;
	int threaded = 0;
	if (!rc) {
		threaded = nconn > 1 && pthread_create(&th, NULL, slice_main, &sl[1]) == 0;
		sl[0].rc = send_slice(&sl[0]);
		if (threaded)
			pthread_join(th, NULL);
		else if (nconn > 1)
			sl[1].rc = sl[0].rc ? -1 : send_slice(&sl[1]);
	}
	for (size_t k = 0; k < nconn; k++) {
		if (!rc && (sl[k].rc || sl[k].err.code)) {
			*x->err = sl[k].err;
			rc = -1;
		}
		x->rows += sl[k].w.total;
		x->bytes += sl[k].w.bytes;
		nat_free(&sl[k].w);
	}
	return rc;
}

/* The groups (what samples share) are encoded once, then each sample adds its time and
 * weight: the rows of sample_rows, or the profile's own. */
static int make_groups(chexp *x)
{
	if (x->groups)
		return 0;
	int64_t n = 0;
	if (nt_store_query(x->st, "SELECT COALESCE(MAX(id), 0) FROM sample_groups", on_count, &n,
			   x->err))
		return -1;
	if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof *x->groups)
		return nt_fail(x->err, NT_EINTERNAL, NT_NO_OFFSET, "bad group count");
	x->ngroups = (size_t)n;
	if (!(x->groups = calloc(x->ngroups ? x->ngroups : 1, sizeof *x->groups)))
		return nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	int rc = nt_store_query(x->st,
				"SELECT g.id, g.session_id, g.thread_id, COALESCE(g.callsite_id, 0), "
				"g.category, g.sample_type, COALESCE(g.subsystem, ''), "
				"(g.weight_ns - COALESCE(g.charged_ns, 0)) / g.samples, "
				"s.compat != 'none' "
				"FROM sample_groups g JOIN sessions s ON s.id = g.session_id",
				on_group, x, x->err);
	if (rc > 0 && !x->err->code)
		return nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (rc)
		return -1;
	/* the rows copy values 16 bytes at a time: zeroed slack after the last */
	if (nt_out_reserve(&x->pool, CH_SLACK))
		return nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	memset(nt_out_tail(&x->pool), 0, CH_SLACK);
	return 0;
}

/* samples (charges 0) or the GC pauses charged to a group without a sample (charges 1,
 * the store's charges): rows of the groups make_groups encoded. */
static int insert_samples(chexp *x, int charges)
{
	if (make_groups(x) || column_modes(x))
		return -1;
	if (x->profile)
		return write_profile_samples(x, charges);
	chnat w;
	int rc = nat_start(x, &w, charges, x->err);
	if (!rc) {
		chrows r = {x, &w};
		rc = nt_store_query(x->st, charges ? "SELECT ts_ns, group_id, weight_ns FROM charges"
						   : "SELECT ts_ns, group_id, weight_ns FROM sample_rows",
				    on_sample, &r, x->err);
		if (rc > 0 && !x->err->code)
			rc = nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		if (!rc)
			rc = nat_finish(x, &w);
	}
	nat_free(&w);
	return rc ? -1 : 0;
}

static int insert_table(chexp *x, int t)
{
	if (!strcmp(CH_DATA_TABLES[t], "samples") || !strcmp(CH_DATA_TABLES[t], "charges"))
		return insert_samples(x, !strcmp(CH_DATA_TABLES[t], "charges"));
	char q[256];
	snprintf(q, sizeof q, "INSERT INTO %s.%s FORMAT RowBinary", x->c->db,
		 CH_DATA_TABLES[t]);
	nt_out_reset(&x->buf);
	x->table = t;
	if (ntch_req_start(&x->req, x->c, q, x->err))
		goto fail;
	int rc = CH_SELECT[t] ? nt_store_query(x->st, CH_SELECT[t], on_row, x, x->err)
				: write_stacks(x);
	if (rc && !x->err->code)
		nt_fail(x->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (rc || flush_rows(x, 1))
		goto fail;
	return ntch_req_finish(&x->req, NULL);
fail:
	if (x->req.fd >= 0)
		close(x->req.fd);
	x->req.fd = -1;
	return -1;
}

/* Which traces are complete already ("trace_id\n" lines) and which have stray rows. */
static int id_in(const char *list, const char *id)
{
	size_t n = strlen(id);
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !memcmp(p, id, n))
			return 1;
		p = e ? e + 1 : p + len;
	}
	return 0;
}

static void put_id_list(nt_out *b, chexp *x, int only_wanted)
{
	int first = 1;
	nt_out_put(b, "(", 1);
	for (size_t i = 0; i < x->nids; i++) {
		if (only_wanted && !x->want[i])
			continue;
		if (!first)
			nt_out_put(b, ",", 1);
		first = 0;
		nt_out_put(b, "'", 1);
		nt_out_str(b, x->ids[i]); /* checked: hex digits only */
		nt_out_put(b, "'", 1);
	}
	nt_out_put(b, ")", 1);
}

/* A row of `traces`: trace_id, file, imported, sessions, samples, events, generator,
 * label_keys, label_values (KEY=VALUE strings of the options). */
static int on_trace_row(void *ctx, const nt_sql_row *row)
{
	chexp *x = ctx;
	if (!row->values)
		return 0;
	const nt_sql_value *v = row->values;
	const char *id = trace_of(x, v[0].i);
	if (!id)
		return 0;
	nt_out *b = &x->buf;
	rb_str(b, id, strlen(id));
	put_value(b, 's', &v[1]);
	rb_le(b, (uint64_t)time(NULL), 4);
	rb_le(b, 1, 4);
	put_value(b, 'U', &v[2]);
	rb_le(b, x->no_events ? 0 : (uint64_t)v[3].i, 8);
	rb_str(b, "libnettrace " PACKAGE_VERSION, strlen("libnettrace " PACKAGE_VERSION));
	rb_uleb(b, x->nlabels);
	for (size_t i = 0; i < x->nlabels; i++)
		rb_str(b, x->labels[i], strcspn(x->labels[i], "="));
	rb_uleb(b, x->nlabels);
	for (size_t i = 0; i < x->nlabels; i++) {
		const char *val = strchr(x->labels[i], '=') + 1;
		rb_str(b, val, strlen(val));
	}
	x->traces++;
	return b->rc != 0;
}

#define CH_MUTATION_WAIT_S 120

static int wait_mutations(const chconn *c, nt_error *err)
{
	nt_out q;
	nt_out_init(&q, NULL);
	nt_out_printf(&q, "SELECT count() FROM system.mutations WHERE database = '%s' AND "
		      "is_done = 0", c->db);
	const char *sql = nt_out_cstr(&q);
	int rc = !sql ? nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory") : 0;
	for (int i = 0; !rc; i++) {
		char *n = NULL;
		if ((rc = ntch_exec(c, sql, &n, err)))
			break;
		int pending = n && strtoull(n, NULL, 10) > 0;
		free(n);
		if (!pending)
			break;
		if (i >= CH_MUTATION_WAIT_S * 10) {
			rc = nt_fail(err, NT_EIO, NT_NO_OFFSET, "ClickHouse did not delete the rows "
					 "of the earlier import in %d s", CH_MUTATION_WAIT_S);
			break;
		}
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	nt_out_end(&q);
	return rc;
}

void nt_store_hook_profile_clickhouse(nt_store *st, nt_profile_opts *popts)
{
	nt_store_hook_profile(st, popts);
	/* the store's sample hook would insert every sample into sample_rows, only for the
	 * export to read them back: the profile keeps them (24 bytes each) instead */
	popts->sample_fn = NULL;
	popts->sequence = 1;
}

int nt_store_export_clickhouse(nt_store *st, const nt_ch_opts *opts, nt_ch_stats *stats,
			       nt_error *err)
{
	nt_error_clear(err);
	nt_ch_opts oc;
	int orc = nt_opts_load(&oc, sizeof oc, sizeof oc, opts, "clickhouse options", err);
	if (orc)
		return orc;
	if (!opts || !opts->url || (opts->nids && (!opts->ids || !st)))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_store_export_clickhouse: bad "
				 "arguments");
	opts = &oc;
	if (opts->nlabels && !opts->labels)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_store_export_clickhouse: no labels");
	for (size_t i = 0; i < opts->nlabels; i++) {
		const char *l = opts->labels[i], *eq = l ? strchr(l, '=') : NULL;
		if (!eq || eq == l)
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "label '%s' is not KEY=VALUE",
				       l ? l : "(null)");
	}
	for (size_t i = 0; i < opts->nids; i++) {
		const char *id = opts->ids[i];
		if (!id || !*id || strlen(id) > 64 ||
		    strspn(id, "0123456789abcdef") != strlen(id))
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "trace id %zu is not 1 to 64 "
					 "lower-case hex digits", i + 1);
	}
	chconn c;
	if (ntch_parse_url(&c, opts->url, err))
		return err->code;
	nt_ch_stats local;
	memset(&local, 0, sizeof local);
	chexp x;
	memset(&x, 0, sizeof x);
	nt_out_init(&x.buf, NULL);
	nt_out_init(&x.pool, NULL);
	x.c = &c;
	x.st = st;
	x.err = err;
	x.ids = opts->ids;
	x.nids = opts->nids;
	x.req.fd = -1;
	x.stats = &local;
	x.labels = opts->labels;
	x.nlabels = opts->nlabels;
	x.no_events = !!(opts->flags & NT_CH_NO_EVENTS);
	x.profile = opts->sz >= offsetof(nt_ch_opts, profile) + sizeof opts->profile
			    ? opts->profile : NULL;
	int rc = 0;
	char *done = NULL, *stray = NULL;
	nt_out q;
	nt_out_init(&q, NULL);
	if (!(x.want = calloc(x.nids ? x.nids : 1, 1))) {
		rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		goto out;
	}
	if (!x.nids)
		goto out;

	/* the database and the tables */
	nt_out_printf(&q, "CREATE DATABASE IF NOT EXISTS %s", c.db);
	if ((rc = exec_buf(&c, &q, NULL, err)))
		goto out;
	for (size_t i = 0; i < sizeof CH_SCHEMA / sizeof CH_SCHEMA[0]; i++) {
		nt_out_reset(&q);
		for (const char *p = CH_SCHEMA[i]; *p;) {
			const char *at = strchr(p, '@');
			if (!at) {
				nt_out_str(&q, p);
				break;
			}
			nt_out_put(&q, p, (size_t)(at - p));
			if (!strncmp(at, "@DB@", 4))
				nt_out_str(&q, c.db);
			else if (!strncmp(at, "@CAT@", 5))
				enum_type(&q, 0);
			else if (!strncmp(at, "@STYPE@", 7))
				enum_type(&q, 1);
			p = strchr(at + 1, '@') + 1;
		}
		if ((rc = exec_buf(&c, &q, NULL, err)))
			goto out;
	}
	/* tables an earlier version made take their own column types: known before any row */
	if ((rc = column_modes(&x) ? err->code : 0))
		goto out;

	/* complete traces are skipped; the others lose any rows of an earlier attempt */
	nt_out_reset(&q);
	nt_out_printf(&q, "SELECT DISTINCT trace_id FROM %s.traces WHERE trace_id IN ", c.db);
	for (size_t i = 0; i < x.nids; i++)
		x.want[i] = 1;
	put_id_list(&q, &x, 0);
	if ((rc = exec_buf(&c, &q, &done, err)))
		goto out;
	size_t nwant = 0;
	for (size_t i = 0; i < x.nids; i++) {
		x.want[i] = !id_in(done, x.ids[i]) || (opts->flags & NT_CH_REPLACE);
		for (size_t j = 0; j < i; j++)
			if (x.want[i] && !strcmp(x.ids[i], x.ids[j]))
				x.want[i] = 0; /* the same file twice in one import */
		nwant += x.want[i];
		if (!x.want[i])
			local.skipped++;
	}
	if (!nwant)
		goto out;
	for (size_t t = 0; t <= CH_NDATA; t++) {
		const char *table = t < CH_NDATA ? CH_DATA_TABLES[t] : "traces";
		/* only where rows exist: a mutation per import would pile up for nothing */
		nt_out_reset(&q);
		nt_out_printf(&q, "SELECT count() FROM %s.%s WHERE trace_id IN ", c.db, table);
		put_id_list(&q, &x, 1);
		free(stray);
		stray = NULL;
		if ((rc = exec_buf(&c, &q, &stray, err)))
			goto out;
		if (stray && strtoull(stray, NULL, 10) > 0) {
			nt_out_reset(&q);
			nt_out_printf(&q, "ALTER TABLE %s.%s DELETE WHERE trace_id IN ", c.db,
				      table);
			put_id_list(&q, &x, 1);
			if ((rc = exec_buf(&c, &q, NULL, err)))
				goto out;
			local.cleared++;
		}
	}

	/* the deletes are mutations, run in the background: wait until they are done, so
	 * that no query sees the old rows next to the new ones */
	if (local.cleared && (rc = wait_mutations(&c, err)))
		goto out;
	for (size_t t = 0; t < CH_NDATA; t++) {
		if ((opts->flags & NT_CH_NO_EVENTS) && !strcmp(CH_DATA_TABLES[t], "events"))
			continue;
		uint64_t before = x.rows;
		if ((rc = insert_table(&x, (int)t) ? err->code : 0))
			goto out;
		if (!strcmp(CH_DATA_TABLES[t], "samples"))
			local.samples += x.rows - before;
		else if (!strcmp(CH_DATA_TABLES[t], "events"))
			local.events += x.rows - before;
	}

	/* last: the rows that say each trace is complete */
	nt_out_reset(&x.buf);
	rc = nt_store_query(st,
			    "SELECT s.id, s.file, s.samples, "
			    "(SELECT COUNT(*) FROM events e WHERE e.session_id = s.id) "
			    "FROM sessions s ORDER BY s.id",
			    on_trace_row, &x, err);
	if (rc > 0 && !err->code)
		rc = nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (rc)
		goto out;
	{
		char ins[256];
		snprintf(ins, sizeof ins, "INSERT INTO %s.traces FORMAT RowBinary", c.db);
		chreq r;
		rc = ntch_req_start(&r, &c, ins, err);
		if (!rc)
			rc = ntch_req_chunk(&r, nt_out_data(&x.buf), nt_out_len(&x.buf));
		if (!rc)
			rc = ntch_req_finish(&r, NULL);
		else if (r.fd >= 0)
			close(r.fd);
		if (rc)
			rc = err->code;
	}
	if (!rc)
		local.imported = x.traces;
out:
	local.rows = x.rows;
	local.bytes = x.bytes;
	if (stats) {
		size_t sz = stats->sz && stats->sz < sizeof local ? stats->sz : sizeof local;
		local.sz = sz;
		memcpy(stats, &local, sz);
	}
	free(x.groups);
	nt_out_end(&x.pool);
	free(x.poolv);
	nt_strpool_free(&x.poolids);
	for (size_t i = 0; i < x.ncs; i++)
		free(x.name[i]);
	free(x.name);
	free(x.parent);
	free(x.want);
	nt_out_end(&x.buf);
	nt_out_end(&q);
	free(done);
	free(stray);
	return rc ? (err->code ? err->code : rc) : 0;
}
