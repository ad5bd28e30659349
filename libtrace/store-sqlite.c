/* SPDX-License-Identifier: MIT */
/* store-sqlite.c - the SQLite store: profiles as a database (doc/sqlite-schema.md) and SQL
 * queries over it. Samples and events stream in from the profile's hooks while the traces
 * are read (one prepared INSERT each); stacks (interned functions, modules, frames and a
 * prefix tree of callsites), sample groups, threads and sessions are written once the
 * profile is finished. An import is one transaction on a temporary file that commit renames
 * into place. With store-sqlite-finish.c (what a finished profile adds, queries) the only
 * files that include sqlite3.h; their shared state is store-sqlite.h.
 *
 * Size: a sample costs one row of sample_rows (time, group, weight only with --compat),
 * about 20 bytes; what a sample shares with others of its group (session, thread, callsite,
 * category, type) is stored once in sample_groups, and the view "samples" joins the two.
 * Not here: reading, weighting and categorising samples (profile.c), printing results
 * (tools/nettrace-sql.c). */
#include "store-sqlite.h"

/* ------------------------------------------------------------------ schema */

/* application_id "NTSQ": lets `file` and other tools tell our databases apart. */
#define STORE_APP_ID 0x4E545351

/* Written into a new database, in one transaction with the import. Every table, column
 * and view is documented in doc/sqlite-schema.md (keep the two in step). */
static const char SCHEMA_SQL[] =
	"PRAGMA application_id = 1314149201;\n" /* STORE_APP_ID */
	"PRAGMA user_version = 2;\n"
	"CREATE TABLE schema_version(version INTEGER NOT NULL, generator TEXT NOT NULL);\n"
	"INSERT INTO schema_version VALUES (2, 'libnettrace " PACKAGE_VERSION "');\n"
	"CREATE TABLE sessions(\n"
	"  id INTEGER PRIMARY KEY, file TEXT NOT NULL, process_id INTEGER, start_utc TEXT,\n"
	"  qpc_frequency INTEGER, declared_interval_ns INTEGER, inferred_interval_ns REAL,\n"
	"  schedule TEXT, duration_ns INTEGER, sync_qpc INTEGER, pointer_size INTEGER,\n"
	"  processors INTEGER, format_version INTEGER, compat TEXT NOT NULL,\n"
	"  trace_samples INTEGER NOT NULL, samples INTEGER NOT NULL, lost_events INTEGER,\n"
	"  truncated INTEGER NOT NULL);\n"
	"CREATE TABLE threads(\n"
	"  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),\n"
	"  tid INTEGER NOT NULL, name TEXT);\n"
	"CREATE INDEX threads_session_tid ON threads(session_id, tid);\n"
	"CREATE TABLE modules(\n"
	"  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, path TEXT, build_id TEXT);\n"
	"CREATE TABLE functions(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);\n"
	"CREATE TABLE frames(\n"
	"  id INTEGER PRIMARY KEY, function_id INTEGER NOT NULL REFERENCES functions(id),\n"
	"  module_id INTEGER REFERENCES modules(id), address INTEGER, file TEXT, line INTEGER,\n"
	"  inline_depth INTEGER NOT NULL DEFAULT 0, name TEXT NOT NULL);\n"
	"CREATE INDEX frames_function ON frames(function_id);\n"
	"CREATE TABLE callsites(\n"
	"  id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES callsites(id),\n"
	"  frame_id INTEGER NOT NULL REFERENCES frames(id), depth INTEGER NOT NULL);\n"
	"CREATE INDEX callsites_parent ON callsites(parent_id);\n"
	"CREATE INDEX callsites_frame ON callsites(frame_id);\n"
	"CREATE TABLE sample_groups(\n"
	"  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),\n"
	"  thread_id INTEGER NOT NULL REFERENCES threads(id),\n"
	"  callsite_id INTEGER REFERENCES callsites(id), category TEXT NOT NULL,\n"
	"  sample_type TEXT NOT NULL, samples INTEGER NOT NULL, weight_ns REAL NOT NULL,\n"
	"  subsystem TEXT, charged_ns REAL);\n"
	"CREATE INDEX sample_groups_callsite ON sample_groups(callsite_id);\n"
	"CREATE INDEX sample_groups_thread ON sample_groups(thread_id);\n"
	"CREATE TABLE sample_rows(\n"
	"  id INTEGER PRIMARY KEY, ts_ns INTEGER NOT NULL,\n"
	"  group_id INTEGER NOT NULL REFERENCES sample_groups(id), weight_ns REAL);\n"
	"CREATE TABLE charges(\n"
	"  id INTEGER PRIMARY KEY, ts_ns INTEGER NOT NULL,\n"
	"  group_id INTEGER NOT NULL REFERENCES sample_groups(id), weight_ns REAL NOT NULL);\n"
	"CREATE TABLE events(\n"
	"  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),\n"
	"  thread_id INTEGER REFERENCES threads(id), ts_ns INTEGER NOT NULL,\n"
	"  provider TEXT NOT NULL, event_id INTEGER NOT NULL, name TEXT NOT NULL,\n"
	"  duration_ns INTEGER, payload TEXT);\n"
	/* covering for joins of samples with event intervals (name, session, time range) */
	"CREATE INDEX events_name ON events(name, session_id, ts_ns, duration_ns, thread_id);\n"
	/* views */
	"CREATE VIEW samples AS\n"
	"  SELECT r.id AS id, g.session_id AS session_id, g.thread_id AS thread_id,\n"
	"         r.ts_ns AS ts_ns, g.callsite_id AS callsite_id, g.category AS category,\n"
	"         COALESCE(r.weight_ns,\n"
	"                  (g.weight_ns - COALESCE(g.charged_ns, 0)) / g.samples) AS weight_ns,\n"
	"         g.sample_type AS sample_type, r.group_id AS group_id,\n"
	"         g.subsystem AS subsystem\n"
	"  FROM sample_rows r JOIN sample_groups g ON g.id = r.group_id;\n"
	"CREATE VIEW frame_names AS\n"
	"  SELECT fr.id AS frame_id, fr.name AS name, m.name AS module, fn.name AS function,\n"
	"         fr.address AS address, fr.file AS file, fr.line AS line\n"
	"  FROM frames fr JOIN functions fn ON fn.id = fr.function_id\n"
	"  LEFT JOIN modules m ON m.id = fr.module_id;\n"
	"CREATE VIEW callsite_stacks AS\n"
	"  WITH RECURSIVE st(id, depth, stack) AS (\n"
	"    SELECT c.id, c.depth, replace(replace(replace(f.name, ';', ':'), char(10), ' '),\n"
	"                                  char(13), ' ')\n"
	"    FROM callsites c JOIN frame_names f ON f.frame_id = c.frame_id\n"
	"    WHERE c.parent_id IS NULL\n"
	"    UNION ALL\n"
	"    SELECT c.id, c.depth, st.stack || ';' ||\n"
	"           replace(replace(replace(f.name, ';', ':'), char(10), ' '), char(13), ' ')\n"
	"    FROM st JOIN callsites c ON c.parent_id = st.id\n"
	"    JOIN frame_names f ON f.frame_id = c.frame_id)\n"
	"  SELECT id AS callsite_id, depth, stack FROM st;\n"
	"CREATE VIEW sample_stacks AS\n"
	"  SELECT s.id AS id, s.session_id AS session_id, s.thread_id AS thread_id,\n"
	"         s.ts_ns AS ts_ns, s.category AS category, s.weight_ns AS weight_ns,\n"
	"         COALESCE(cs.stack, '[empty stack]') AS stack\n"
	"  FROM samples s LEFT JOIN callsite_stacks cs ON cs.callsite_id = s.callsite_id;\n"
	"CREATE VIEW top_self AS\n"
	"  WITH tot AS (SELECT session_id, SUM(weight_ns) AS w, SUM(samples) AS n\n"
	"               FROM sample_groups GROUP BY session_id)\n"
	"  SELECT g.session_id AS session_id, COALESCE(f.name, '[empty stack]') AS frame,\n"
	"         f.module AS module, f.function AS function, SUM(g.samples) AS samples,\n"
	"         SUM(g.weight_ns) AS self_ns,\n"
	"         ROUND(100.0 * SUM(g.weight_ns) / tot.w, 2) AS self_pct\n"
	"  FROM sample_groups g JOIN tot ON tot.session_id = g.session_id\n"
	"  LEFT JOIN callsites c ON c.id = g.callsite_id\n"
	"  LEFT JOIN frame_names f ON f.frame_id = c.frame_id\n"
	"  GROUP BY g.session_id, COALESCE(f.name, '[empty stack]')\n"
	"  ORDER BY g.session_id, self_ns DESC, frame;\n"
	"CREATE VIEW top_total AS\n"
	"  WITH RECURSIVE\n"
	"  leaf AS (SELECT session_id, callsite_id, SUM(samples) AS n, SUM(weight_ns) AS w\n"
	"           FROM sample_groups WHERE callsite_id IS NOT NULL\n"
	"           GROUP BY session_id, callsite_id),\n"
	"  up(session_id, leaf, cs, n, w) AS (\n"
	"    SELECT session_id, callsite_id, callsite_id, n, w FROM leaf\n"
	"    UNION ALL\n"
	"    SELECT up.session_id, up.leaf, c.parent_id, up.n, up.w\n"
	"    FROM up JOIN callsites c ON c.id = up.cs WHERE c.parent_id IS NOT NULL),\n"
	"  once AS (SELECT DISTINCT up.session_id, up.leaf, f.name AS frame, f.module AS module,\n"
	"                  f.function AS function, up.n AS n, up.w AS w\n"
	"           FROM up JOIN callsites c ON c.id = up.cs\n"
	"           JOIN frame_names f ON f.frame_id = c.frame_id),\n"
	"  tot AS (SELECT session_id, SUM(weight_ns) AS w FROM sample_groups GROUP BY session_id)\n"
	"  SELECT once.session_id AS session_id, frame, module, function, SUM(n) AS samples,\n"
	"         SUM(once.w) AS total_ns, ROUND(100.0 * SUM(once.w) / tot.w, 2) AS total_pct\n"
	"  FROM once JOIN tot ON tot.session_id = once.session_id\n"
	"  GROUP BY once.session_id, frame\n"
	"  ORDER BY once.session_id, total_ns DESC, frame;\n"
	"CREATE VIEW category_time AS\n"
	"  SELECT g.session_id AS session_id, g.thread_id AS thread_id, t.tid AS tid,\n"
	"         t.name AS thread_name, g.category AS category, SUM(g.samples) AS samples,\n"
	"         SUM(g.weight_ns) AS time_ns,\n"
	"         ROUND(100.0 * SUM(g.weight_ns) /\n"
	"               (SELECT SUM(x.weight_ns) FROM sample_groups x\n"
	"                WHERE x.thread_id = g.thread_id), 2) AS thread_pct\n"
	"  FROM sample_groups g JOIN threads t ON t.id = g.thread_id\n"
	"  GROUP BY g.thread_id, g.category\n"
	"  ORDER BY g.session_id, t.tid, time_ns DESC, g.category;\n"
	"CREATE VIEW subsystem_time AS\n"
	"  WITH tot AS (SELECT session_id, SUM(weight_ns) AS w FROM sample_groups\n"
	"               GROUP BY session_id)\n"
	"  SELECT g.session_id AS session_id, COALESCE(g.subsystem, 'other') AS subsystem,\n"
	"         g.category AS category, SUM(g.samples) AS samples,\n"
	"         SUM(g.weight_ns) AS time_ns,\n"
	"         ROUND(100.0 * SUM(g.weight_ns) / tot.w, 2) AS pct\n"
	"  FROM sample_groups g JOIN tot ON tot.session_id = g.session_id\n"
	"  GROUP BY g.session_id, COALESCE(g.subsystem, 'other'), g.category\n"
	"  ORDER BY g.session_id, time_ns DESC, subsystem, category;\n";

/* ------------------------------------------------------------------ interning */

static void kmap_free(kmap *m)
{
	nt_strpool_free(&m->keys);
	free(m->val);
	memset(m, 0, sizeof *m);
}

/* 1 and *val when k is present, else 0. */
static int kmap_get(const kmap *m, const void *k, size_t n, int64_t *val)
{
	int64_t id = nt_strpool_find(&m->keys, k, n, nt_strpool_hash(k, n));
	if (id < 0)
		return 0;
	*val = m->val[id];
	return 1;
}

/* Inserts or replaces k -> val. Returns 0 or -1 when out of memory. */
static int kmap_put(kmap *m, const void *k, size_t n, int64_t val)
{
	if (nt_grow((void **)&m->val, &m->valcap, m->keys.n + 1, sizeof *m->val))
		return -1;
	int64_t id = nt_strpool_intern_h(&m->keys, k, n, nt_strpool_hash(k, n));
	if (id < 0)
		return -1;
	m->val[id] = val;
	return 0;
}

/* ------------------------------------------------------------------ the store */

static const char *const STMT_SQL[Q_COUNT] = {
	[Q_SAMPLE] = "INSERT INTO sample_rows(ts_ns, group_id, weight_ns) VALUES (?1, ?2, ?3)",
	[Q_CHARGE] = "INSERT INTO charges(ts_ns, group_id, weight_ns) VALUES (?1, ?2, ?3)",
	[Q_SAMPLES] = NULL, /* BATCH rows of (?, ?, ?), built by open_import() */
	[Q_EVENT] = "INSERT INTO events(session_id, thread_id, ts_ns, provider, event_id, name, "
		    "payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[Q_DURATION] = "UPDATE events SET duration_ns = ?1 WHERE id = ?2",
	[Q_GROUP] = "INSERT INTO sample_groups(id, session_id, thread_id, callsite_id, category, "
		    "sample_type, samples, weight_ns, subsystem, charged_ns) "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[Q_CALLSITE] = "INSERT INTO callsites(id, parent_id, frame_id, depth) VALUES (?1, ?2, ?3, ?4)",
	[Q_FRAME] = "INSERT INTO frames(id, function_id, module_id, address, file, line, "
		    "inline_depth, name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[Q_FUNCTION] = "INSERT INTO functions(id, name) VALUES (?1, ?2)",
	[Q_MODULE] = "INSERT INTO modules(id, name, path, build_id) VALUES (?1, ?2, ?3, ?4)",
	[Q_MODULE_INFO] = "UPDATE modules SET path = COALESCE(path, ?2), "
			  "build_id = COALESCE(build_id, ?3) WHERE id = ?1",
	[Q_THREAD] = "INSERT INTO threads(id, session_id, tid, name) VALUES (?1, ?2, ?3, ?4)",
	[Q_SESSION] = "INSERT INTO sessions(id, file, process_id, start_utc, qpc_frequency, "
		      "declared_interval_ns, inferred_interval_ns, schedule, duration_ns, sync_qpc, "
		      "pointer_size, processors, format_version, compat, trace_samples, samples, "
		      "lost_events, truncated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
		      "?12, ?13, ?14, ?15, ?16, ?17, ?18)",
};

/* Fills err from the database's last error. */
int sq_sql_fail(nt_store *st, nt_error *err, const char *what)
{
	return nt_fail(err, NT_ESQL, NT_NO_OFFSET, "%s: %s", what,
		       st->db ? sqlite3_errmsg(st->db) : "no database");
}

int nt_store_probe(const void *buf, size_t len)
{
	return buf && len >= 16 && memcmp(buf, "SQLite format 3", 16) == 0;
}

const char *nt_store_temp_path(const nt_store *st)
{
	return st ? st->tmp : NULL;
}

int nt_store_stats_get(const nt_store *st, nt_store_stats *out)
{
	return nt_out_store(out, &st->stats, sizeof st->stats, sizeof st->stats) ? NT_EINVAL : 0;
}

int sq_exec(nt_store *st, const char *sql, nt_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int rc = nt_fail(err, NT_ESQL, NT_NO_OFFSET, "SQLite: %s",
				 msg ? msg : sqlite3_errmsg(st->db));
		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

/* The single integer a query returns (*out unchanged when no row). */
static int query_int(nt_store *st, const char *sql, int64_t *out, nt_error *err)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
		return sq_sql_fail(st, err, "cannot read the database");
	int rc = sqlite3_step(q);
	if (rc == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
		*out = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sq_sql_fail(st, err, "cannot read the database");
	return 0;
}

static void close_db(nt_store *st)
{
	for (int i = 0; i < Q_COUNT; i++) {
		sqlite3_finalize(st->q[i]);
		st->q[i] = NULL;
	}
	if (st->db)
		sqlite3_close(st->db);
	st->db = NULL;
}

void nt_store_free(nt_store *st)
{
	if (!st)
		return;
	close_db(st);
	if (st->tmp) {
		unlink(st->tmp);
		free(st->tmp);
	}
	free(st->path);
	kmap_free(&st->functions);
	kmap_free(&st->modules);
	kmap_free(&st->frames);
	kmap_free(&st->callsites);
	kmap_free(&st->threadmap);
	kmap_free(&st->pendmap);
	for (size_t i = 0; i < st->nthreads; i++)
		free(st->threads[i].name);
	free(st->threads);
	for (size_t i = 0; i < st->nmods; i++) {
		free(st->mods[i].name);
		free(st->mods[i].path);
		free(st->mods[i].build_id);
	}
	free(st->mods);
	free(st->pend);
	free(st->stack_cs);
	free(st->fr_ip);
	free(st->fr_nf);
	nt_membuf_free(&st->json);
	free(st);
}

/* ------------------------------------------------------------------ opening */

/* Read-only databases: map the file and keep more pages, so that joins which revisit rows
 * (samples against events) read memory rather than issue a pread() per page. */
int sq_query_settings(nt_store *st, nt_error *err)
{
	return sq_exec(st, "PRAGMA mmap_size = 268435456; PRAGMA cache_size = -65536", err);
}

/* Checks the schema of an open database. *empty = 1 when it has no table at all (a new
 * database, or one an SQLite client created empty). */
static int check_schema(nt_store *st, const char *path, int *empty, nt_error *err)
{
	int64_t ntables = 0, has_version = 0, version = -1;
	*empty = 0;
	if (query_int(st, "SELECT COUNT(*) FROM sqlite_schema", &ntables, err))
		return nt_fail(err, NT_EFORMAT, NT_NO_OFFSET, "%s: cannot read the database", path);
	if (ntables == 0) {
		*empty = 1;
		return 0;
	}
	if (query_int(st,
		      "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND "
		      "name = 'schema_version'",
		      &has_version, err))
		return err ? err->code : NT_ESQL;
	if (!has_version)
		return nt_fail(err, NT_EFORMAT, NT_NO_OFFSET,
			       "%s: not a nettrace database (no schema_version table)", path);
	if (query_int(st, "SELECT MAX(version) FROM schema_version", &version, err))
		return err ? err->code : NT_ESQL;
	/* The header's user_version carries the same number: a tool that changed one but not
	 * the other wrote something this version does not know either. */
	int64_t user_version = -1;
	if (query_int(st, "PRAGMA user_version", &user_version, err))
		return err ? err->code : NT_ESQL;
	if (version == NT_STORE_SCHEMA_VERSION && user_version != version)
		version = user_version;
	if (version != NT_STORE_SCHEMA_VERSION)
		return nt_fail(err, NT_EUNSUPPORTED, NT_NO_OFFSET,
			       "%s: unknown schema_version %" PRId64
			       " (this version of libnettrace appends to version %d only)",
			       path, version, NT_STORE_SCHEMA_VERSION);
	return 0;
}

/* Creates the temporary file next to path: ".NAME.PID.N.tmp" in its directory, exclusive,
 * with the mode a new file gets (0666 minus the umask). */
static int make_temp(nt_store *st, const char *path, nt_error *err)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = path + dirlen;
	size_t need = dirlen + strlen(base) + 64;
	char *t = malloc(need);
	if (!t)
		return NOMEM(err);
	for (unsigned n = 0; n < 1000; n++) {
		snprintf(t, need, "%.*s.%s.%ld.%u.tmp", (int)dirlen, path, base, (long)getpid(), n);
		int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0) {
			close(fd);
			st->tmp = t;
			return 0;
		}
		if (errno != EEXIST) {
			int e = errno;
			int rc = nt_fail_errno(err, e, "cannot create %s: %s", t, strerror(e));
			free(t);
			return rc;
		}
	}
	free(t);
	return nt_fail(err, NT_EIO, NT_NO_OFFSET, "cannot create a temporary file next to %s",
		       path);
}

/* Copies the database at path into st->db (the temporary file) with SQLite's backup API,
 * so appending never writes to path itself. */
static int copy_existing(nt_store *st, const char *path, nt_error *err)
{
	sqlite3 *src = NULL;
	if (sqlite3_open_v2(path, &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		int rc = nt_fail(err, NT_ESQL, NT_NO_OFFSET, "cannot open %s: %s", path,
				 src ? sqlite3_errmsg(src) : "out of memory");
		sqlite3_close(src);
		return rc;
	}
	sqlite3_backup *b = sqlite3_backup_init(st->db, "main", src, "main");
	if (!b) {
		int rc = sq_sql_fail(st, err, "cannot copy the database");
		sqlite3_close(src);
		return rc;
	}
	int rc = sqlite3_backup_step(b, -1);
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		int r = nt_fail(err, rc == SQLITE_NOTADB ? NT_EFORMAT : NT_ESQL, NT_NO_OFFSET,
				"cannot copy %s: %s", path, sqlite3_errstr(rc));
		sqlite3_close(src);
		return r;
	}
	sqlite3_close(src);
	return 0;
}

/* Loads the interned tables of an existing database (appending) and the next ids. */
static int load_existing(nt_store *st, nt_error *err)
{
	sqlite3_stmt *q = NULL;
	int rc;
	/* functions */
	if (sqlite3_prepare_v2(st->db, "SELECT id, name FROM functions", -1, &q, NULL))
		goto sqlerr;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const void *s = sqlite3_column_text(q, 1);
		size_t n = (size_t)sqlite3_column_bytes(q, 1);
		if (kmap_put(&st->functions, s ? s : "", n, sqlite3_column_int64(q, 0)))
			goto nomem;
	}
	sqlite3_finalize(q);
	q = NULL;
	/* modules */
	if (sqlite3_prepare_v2(st->db, "SELECT id, name, path, build_id FROM modules", -1, &q,
			       NULL))
		goto sqlerr;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (nt_grow((void **)&st->mods, &st->modcap, st->nmods + 1, sizeof(smodule)))
			goto nomem;
		smodule *m = &st->mods[st->nmods];
		memset(m, 0, sizeof *m);
		m->id = sqlite3_column_int64(q, 0);
		m->name = nt_strdup((const char *)sqlite3_column_text(q, 1));
		m->path = nt_strdup((const char *)sqlite3_column_text(q, 2));
		m->build_id = nt_strdup((const char *)sqlite3_column_text(q, 3));
		m->in_db = m->path ? 2 : 1;
		if (!m->name)
			goto nomem;
		st->nmods++;
		if (kmap_put(&st->modules, m->name, strlen(m->name), (int64_t)st->nmods - 1))
			goto nomem;
	}
	sqlite3_finalize(q);
	q = NULL;
	/* frames: key (function, module or 0, address, has address, inline depth, line or 0:
	 * a managed IP sampled as a leaf and seen as a return address has two lines) */
	if (sqlite3_prepare_v2(st->db,
			       "SELECT id, function_id, module_id, address, inline_depth, line FROM frames",
			       -1, &q, NULL))
		goto sqlerr;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t k[6] = {sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2),
				sqlite3_column_int64(q, 3), sqlite3_column_type(q, 3) != SQLITE_NULL,
				sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 5)};
		if (kmap_put(&st->frames, k, sizeof k, sqlite3_column_int64(q, 0)))
			goto nomem;
	}
	sqlite3_finalize(q);
	q = NULL;
	/* callsites: key (parent or 0, frame) */
	if (sqlite3_prepare_v2(st->db, "SELECT id, parent_id, frame_id FROM callsites", -1, &q,
			       NULL))
		goto sqlerr;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t k[2] = {sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2)};
		if (kmap_put(&st->callsites, k, sizeof k, sqlite3_column_int64(q, 0)))
			goto nomem;
	}
	sqlite3_finalize(q);
	q = NULL;
	int64_t v;
	v = 0;
	if (query_int(st, "SELECT MAX(id) FROM sessions", &v, err))
		return err ? err->code : NT_ESQL;
	st->session_base = v;
	v = 0;
	if (query_int(st, "SELECT MAX(MAX(id), (SELECT IFNULL(MAX(group_id), 0) FROM sample_rows)) "
			  "FROM sample_groups",
		      &v, err))
		return err ? err->code : NT_ESQL;
	st->group_base = st->group_max = v;
	struct {
		const char *sql;
		int64_t *next;
	} nx[] = {
		{"SELECT MAX(id) FROM threads", &st->next_thread},
		{"SELECT MAX(id) FROM modules", &st->next_module},
		{"SELECT MAX(id) FROM functions", &st->next_function},
		{"SELECT MAX(id) FROM frames", &st->next_frame},
		{"SELECT MAX(id) FROM callsites", &st->next_callsite},
	};
	for (size_t i = 0; i < sizeof nx / sizeof nx[0]; i++) {
		v = 0;
		if (query_int(st, nx[i].sql, &v, err))
			return err ? err->code : NT_ESQL;
		*nx[i].next = v + 1;
	}
	return 0;
sqlerr:
	rc = sq_sql_fail(st, err, "cannot read the database");
	sqlite3_finalize(q);
	return rc;
nomem:
	sqlite3_finalize(q);
	return NOMEM(err);
}

/* Opens st->db on file (or memory) for an import: fast settings (the file is private until
 * the rename, so a crash only loses the temporary file), one transaction, the schema. */
static int open_import(nt_store *st, const char *file, int existing, nt_error *err)
{
	/* NOMUTEX: one store per thread (nettrace.h), so SQLite's per-call locking is waste. */
	if (sqlite3_open_v2(file, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		return sq_sql_fail(st, err, "cannot open the database");
	int rc;
	if (existing && (rc = copy_existing(st, st->path, err)) != 0)
		return rc;
	int empty = 1;
	if (existing && (rc = check_schema(st, st->path, &empty, err)) != 0)
		return rc;
	if (empty && (rc = sq_exec(st, "PRAGMA page_size = 4096", err)) != 0)
		return rc;
	if ((rc = sq_exec(st,
		       "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
		       "PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY;"
		       "PRAGMA cache_size = -65536;",
		       err)) != 0)
		return rc;
	if ((rc = sq_exec(st, "BEGIN", err)) != 0)
		return rc;
	st->in_tx = 1;
	if (empty) {
		if ((rc = sq_exec(st, SCHEMA_SQL, err)) != 0)
			return rc;
		st->next_thread = st->next_module = st->next_function = st->next_frame =
			st->next_callsite = 1;
	} else if ((rc = load_existing(st, err)) != 0) {
		return rc;
	}
	static const char HEAD[] = "INSERT INTO sample_rows(ts_ns, group_id, weight_ns) VALUES ";
	char multi[sizeof HEAD + BATCH * 10];
	size_t k = sizeof HEAD - 1;
	memcpy(multi, HEAD, k);
	for (int i = 0; i < BATCH; i++) {
		memcpy(multi + k, i ? ",(?,?,?)" : "(?,?,?)", i ? 8 : 7);
		k += i ? 8 : 7;
	}
	multi[k] = '\0';
	for (int i = 0; i < Q_COUNT; i++)
		if (sqlite3_prepare_v3(st->db, i == Q_SAMPLES ? multi : STMT_SQL[i], -1,
				       SQLITE_PREPARE_PERSISTENT, &st->q[i], NULL) != SQLITE_OK)
			return sq_sql_fail(st, err, "cannot prepare the import");
	return 0;
}

int nt_store_open(nt_store **out, const char *path, const nt_store_opts *opts, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	if (!path || !*path)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no database path");
	nt_store_opts so;
	int orc = nt_opts_load(&so, sizeof so, sizeof so, opts, "store options", err);
	if (orc)
		return orc;
	nt_store *st = calloc(1, sizeof *st);
	if (!st)
		return NOMEM(err);
	st->o = so;
	st->path = nt_strdup(path);
	if (!st->path) {
		free(st);
		return NOMEM(err);
	}
	int rc;
	if (st->o.flags & NT_STORE_READONLY) {
		if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
			rc = nt_fail(err, access(path, R_OK) ? NT_EIO : NT_ESQL, NT_NO_OFFSET,
				     "cannot open %s: %s", path,
				     st->db ? sqlite3_errmsg(st->db) : "out of memory");
			goto fail;
		}
		if ((rc = sq_query_settings(st, err)) != 0)
			goto fail;
		*out = st;
		return 0;
	}
	if (strcmp(path, ":memory:") == 0) {
		rc = open_import(st, ":memory:", 0, err);
		if (rc)
			goto fail;
		*out = st;
		return 0;
	}
	/* An existing file must be an SQLite database (checked by its header before anything
	 * is written), then is copied; a missing one is created. */
	struct stat sb;
	int existing = 0;
	memset(&sb, 0, sizeof sb);
	if (stat(path, &sb) == 0) {
		if (!S_ISREG(sb.st_mode)) {
			rc = nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "%s is not a regular file", path);
			goto fail;
		}
		if (sb.st_size > 0) {
			unsigned char head[16];
			FILE *fp = fopen(path, "rb");
			if (!fp) {
				rc = nt_fail_errno(err, errno, "cannot open %s: %s", path,
						   strerror(errno));
				goto fail;
			}
			size_t got = fread(head, 1, sizeof head, fp);
			fclose(fp);
			if (!nt_store_probe(head, got)) {
				rc = nt_fail(err, NT_EFORMAT, NT_NO_OFFSET,
					     "%s exists and is not an SQLite database", path);
				goto fail;
			}
			existing = 1;
		}
	} else if (errno != ENOENT) {
		rc = nt_fail_errno(err, errno, "cannot access %s: %s", path, strerror(errno));
		goto fail;
	}
	if ((rc = make_temp(st, path, err)) != 0)
		goto fail;
	if (existing)
		chmod(st->tmp, sb.st_mode & 07777); /* keep the database's permissions */
	if ((rc = open_import(st, st->tmp, existing, err)) != 0)
		goto fail;
	*out = st;
	return 0;
fail:
	nt_store_free(st);
	return rc;
}

/* ------------------------------------------------------------------ interned rows */

int sq_step_done(nt_store *st, sqlite3_stmt *q, nt_error *err, const char *what)
{
	int rc = sqlite3_step(q);
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	if (rc != SQLITE_DONE)
		return sq_sql_fail(st, err, what);
	return 0;
}

void sq_bind_text_or_null(sqlite3_stmt *q, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(q, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(q, i);
}

/* functions.id of name (inserted when new). */
static int intern_function(nt_store *st, const char *name, size_t n, int64_t *id,
			   nt_error *err)
{
	if (kmap_get(&st->functions, name, n, id))
		return 0;
	*id = st->next_function++;
	sqlite3_stmt *q = st->q[Q_FUNCTION];
	sqlite3_bind_int64(q, 1, *id);
	sqlite3_bind_text(q, 2, name, (int)n, SQLITE_TRANSIENT);
	int rc = sq_step_done(st, q, err, "cannot insert a function");
	if (rc)
		return rc;
	if (kmap_put(&st->functions, name, n, *id))
		return NOMEM(err);
	st->stats.functions++;
	return 0;
}

/* Index in st->mods of module name (n bytes), added (not yet written) when new. */
static int intern_module(nt_store *st, const char *name, size_t n, size_t *idx, nt_error *err)
{
	int64_t v;
	if (kmap_get(&st->modules, name, n, &v)) {
		*idx = (size_t)v;
		return 0;
	}
	if (nt_grow((void **)&st->mods, &st->modcap, st->nmods + 1, sizeof(smodule)))
		return NOMEM(err);
	smodule *m = &st->mods[st->nmods];
	memset(m, 0, sizeof *m);
	m->name = malloc(n + 1);
	if (!m->name)
		return NOMEM(err);
	memcpy(m->name, name, n);
	m->name[n] = '\0';
	m->id = st->next_module++;
	if (kmap_put(&st->modules, name, n, (int64_t)st->nmods)) {
		free(m->name);
		return NOMEM(err);
	}
	*idx = st->nmods++;
	return 0;
}

/* frames.id of one frame of a stack: name as the profile prints it ("Module!Function",
 * "?!Function", "?!?", a native "module!function" or "module+0xOFFSET", a TraceEvent
 * pseudo-frame without address); nf its native symbol (NULL for the others), ip the
 * address it comes from. */
int sq_intern_frame(nt_store *st, const char *name, int has_addr, uint64_t ip,
			const nt_native_frame *nf, int64_t *id, nt_error *err)
{
	const char *bang = has_addr && !nf ? strchr(name, '!') : NULL;
	const char *fn = nf && nf->function ? nf->function : bang ? bang + 1 : name;
	int64_t fid, mid = 0;
	int rc = intern_function(st, fn, strlen(fn), &fid, err);
	if (rc)
		return rc;
	const char *mod = NULL;
	size_t modlen = 0;
	if (nf) {
		mod = nf->module;
		modlen = mod ? strlen(mod) : 0;
	} else if (bang && !(bang - name == 1 && name[0] == '?')) { /* "?!": module unknown */
		mod = name;
		modlen = (size_t)(bang - name);
	}
	if (modlen) {
		size_t mi;
		if ((rc = intern_module(st, mod, modlen, &mi, err)) != 0)
			return rc;
		mid = st->mods[mi].id;
	}
	int64_t inl = nf ? (int64_t)nf->inline_depth : 0;
	int64_t key[6] = {fid, mid, has_addr ? (int64_t)ip : 0, has_addr, inl,
			  nf ? (int64_t)nf->line : 0};
	if (kmap_get(&st->frames, key, sizeof key, id))
		return 0;
	*id = st->next_frame++;
	sqlite3_stmt *q = st->q[Q_FRAME];
	sqlite3_bind_int64(q, 1, *id);
	sqlite3_bind_int64(q, 2, fid);
	if (mid)
		sqlite3_bind_int64(q, 3, mid);
	else
		sqlite3_bind_null(q, 3);
	if (has_addr) /* addresses above 2^63 read back negative (SQLite integers are signed) */
		sqlite3_bind_int64(q, 4, (int64_t)ip);
	else
		sqlite3_bind_null(q, 4);
	sq_bind_text_or_null(q, 5, nf ? nf->file : NULL);
	if (nf && nf->line)
		sqlite3_bind_int64(q, 6, nf->line);
	else
		sqlite3_bind_null(q, 6);
	sqlite3_bind_int64(q, 7, inl);
	sqlite3_bind_text(q, 8, name, -1, SQLITE_TRANSIENT);
	if ((rc = sq_step_done(st, q, err, "cannot insert a frame")) != 0)
		return rc;
	if (kmap_put(&st->frames, key, sizeof key, *id))
		return NOMEM(err);
	st->stats.frames++;
	return 0;
}

int sq_intern_callsite(nt_store *st, int64_t parent, int64_t frame, uint32_t depth,
			   int64_t *id, nt_error *err)
{
	int64_t key[2] = {parent, frame};
	if (kmap_get(&st->callsites, key, sizeof key, id))
		return 0;
	*id = st->next_callsite++;
	sqlite3_stmt *q = st->q[Q_CALLSITE];
	sqlite3_bind_int64(q, 1, *id);
	if (parent)
		sqlite3_bind_int64(q, 2, parent);
	else
		sqlite3_bind_null(q, 2);
	sqlite3_bind_int64(q, 3, frame);
	sqlite3_bind_int64(q, 4, depth);
	int rc = sq_step_done(st, q, err, "cannot insert a callsite");
	if (rc)
		return rc;
	if (kmap_put(&st->callsites, key, sizeof key, *id))
		return NOMEM(err);
	st->stats.callsites++;
	return 0;
}

/* Index in st->threads of (session_id, tid), added (not yet written) when new. */
int sq_intern_thread(nt_store *st, int64_t session_id, uint64_t tid, size_t *idx,
			 nt_error *err)
{
	uint64_t key[2] = {(uint64_t)session_id, tid};
	int64_t v;
	if (kmap_get(&st->threadmap, key, sizeof key, &v)) {
		*idx = (size_t)v;
		return 0;
	}
	if (nt_grow((void **)&st->threads, &st->threadcap, st->nthreads + 1, sizeof(sthread)) ||
	    kmap_put(&st->threadmap, key, sizeof key, (int64_t)st->nthreads))
		return NOMEM(err);
	sthread *t = &st->threads[st->nthreads];
	t->id = st->next_thread++;
	t->session_id = session_id;
	t->tid = tid;
	t->name = NULL;
	*idx = st->nthreads++;
	return 0;
}

/* ------------------------------------------------------------------ hooks */

static void progress(nt_store *st)
{
	if (st->o.progress_fn && ((st->stats.samples + st->stats.events) & 0xffff) == 0)
		st->o.progress_fn(st->o.progress_ctx, st->stats.samples, st->stats.events);
}

/* Inserts the buffered samples: full batches with one statement, the rest row by row.
 * Default mode: every sample of a session weighs the same, known only at the end, so the
 * view takes it from the group and weight_ns stays NULL (which costs no byte). */
int sq_flush_samples(nt_store *st, nt_error *err)
{
	int compat = st->compat != NT_COMPAT_NONE;
	size_t i = 0;
	if (st->nbatch == BATCH) {
		sqlite3_stmt *q = st->q[Q_SAMPLES];
		for (; i < BATCH; i++) {
			sqlite3_bind_int64(q, (int)(3 * i + 1), st->batch[i].ts);
			sqlite3_bind_int64(q, (int)(3 * i + 2), st->batch[i].gid);
			if (compat)
				sqlite3_bind_double(q, (int)(3 * i + 3), st->batch[i].w);
		}
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE)
			return sq_sql_fail(st, err, "cannot insert samples");
	}
	for (; i < st->nbatch; i++) {
		sqlite3_stmt *q = st->q[Q_SAMPLE];
		sqlite3_bind_int64(q, 1, st->batch[i].ts);
		sqlite3_bind_int64(q, 2, st->batch[i].gid);
		if (compat)
			sqlite3_bind_double(q, 3, st->batch[i].w);
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE)
			return sq_sql_fail(st, err, "cannot insert a sample");
	}
	st->nbatch = 0;
	return 0;
}

static int on_sample(void *ctx, const nt_profile_sample *s, nt_error *err)
{
	nt_store *st = ctx;
	int64_t gid = st->group_base + 1 + (int64_t)s->group;
	brow *b = &st->batch[st->nbatch++];
	b->ts = s->time_ns;
	b->gid = gid;
	b->w = s->weight_ns;
	if (gid > st->group_max)
		st->group_max = gid;
	st->stats.samples++;
	st->rows_hooked++;
	progress(st);
	return st->nbatch == BATCH ? sq_flush_samples(st, err) : 0;
}

/* Time charged to a group without a sample (a GC pause): one row of charges, at once
 * (a trace has a few per GC, not per sample). */
static int on_charge(void *ctx, const nt_profile_sample *s, nt_error *err)
{
	nt_store *st = ctx;
	int64_t gid = st->group_base + 1 + (int64_t)s->group;
	sqlite3_stmt *q = st->q[Q_CHARGE];
	sqlite3_bind_int64(q, 1, s->time_ns);
	sqlite3_bind_int64(q, 2, gid);
	sqlite3_bind_double(q, 3, s->weight_ns);
	int rc = sqlite3_step(q);
	sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return sq_sql_fail(st, err, "cannot insert a charge");
	if (gid > st->group_max)
		st->group_max = gid;
	st->charges_hooked++;
	return 0;
}

/* UTF-8 copy of a string field of ev (NULL when absent or empty). */
static char *field_str(const nt_event *ev, uint32_t ps, const char *name)
{
	nt_value v;
	if (!nt_event_field(ev, ps, name, &v) || v.type != NT_TYPE_STRING || v.raw_len < 4)
		return NULL;
	size_t cap = v.raw_len * 2 + 1; /* UTF-16 unit -> at most 3 UTF-8 bytes */
	char *s = malloc(cap);
	if (!s)
		return NULL;
	if (!nt_utf16z_to_utf8(v.raw, v.raw_len, s, cap) || !s[0]) {
		free(s);
		return NULL;
	}
	return s;
}

/* Module name as symtab.c derives it (file name without directory and extension) for
 * managed modules; the whole file name for native ones. */
static int note_module(nt_store *st, char *path, char *build_id, int strip_ext, nt_error *err)
{
	int rc = 0;
	if (!path)
		goto out;
	const char *base = path;
	for (const char *c = path; *c; c++)
		if (*c == '/' || *c == '\\')
			base = c + 1;
	size_t n = strlen(base);
	if (strip_ext) {
		const char *dot = strrchr(base, '.');
		if (dot && dot != base)
			n = (size_t)(dot - base);
	}
	if (n == 0)
		goto out;
	size_t mi;
	if ((rc = intern_module(st, base, n, &mi, err)) != 0)
		goto out;
	smodule *m = &st->mods[mi];
	if (!m->path) {
		m->path = path;
		path = NULL;
	}
	if (!m->build_id) {
		m->build_id = build_id;
		build_id = NULL;
	}
out:
	free(path);
	free(build_id);
	return rc;
}

/* Symbol-server key of a managed module's PDB: GUID (32 hex digits, in its text order) and
 * age, uppercase, as symstore writes it; NULL when the GUID is zero. */
static char *pdb_key(const nt_event *ev, uint32_t ps)
{
	nt_value g, a;
	if (!nt_event_field(ev, ps, "ManagedPdbSignature", &g) || g.raw_len != 16 ||
	    !nt_event_field(ev, ps, "ManagedPdbAge", &a))
		return NULL;
	const uint8_t *p = g.raw;
	int zero = 1;
	for (int i = 0; i < 16; i++)
		zero &= p[i] == 0;
	if (zero)
		return NULL;
	char *s = malloc(48);
	if (!s)
		return NULL;
	snprintf(s, 48, "%08" PRIX32 "%04X%04X%02X%02X%02X%02X%02X%02X%02X%02X%" PRIX64,
		 nt_le32(p), (unsigned)nt_le16(p + 4), (unsigned)nt_le16(p + 6), p[8], p[9], p[10],
		 p[11], p[12], p[13], p[14], p[15], a.u);
	return s;
}

/* Module paths and build ids, thread names: kept from the events that carry them. */
static int note_event(nt_store *st, int64_t session_id, uint32_t ps, const nt_event *ev,
		      nt_error *err)
{
	const nt_metadata *m = ev->meta;
	uint32_t id = m->event_id;
	if (strcmp(m->provider, NT_PROVIDER_RUNTIME) == 0 ||
	    strcmp(m->provider, NT_PROVIDER_RUNDOWN) == 0) {
		/* 151..154: module events of either provider (DomainModuleLoad, ModuleLoad...;
		 * DomainModuleDCStart..ModuleDCEnd) */
		if (id >= NT_RT_DOMAIN_MODULE_LOAD && id <= NT_RD_MODULE_DC_END)
			return note_module(st, field_str(ev, ps, "ModuleILPath"), pdb_key(ev, ps), 1,
					   err);
		return 0;
	}
	if (strcmp(m->provider, NT_PROVIDER_NTSAMPLER) != 0)
		return 0;
	if (id == NT_NTS_MODULE_MAP)
		return note_module(st, field_str(ev, ps, "Path"), field_str(ev, ps, "BuildId"), 0,
				   err);
	if (id == NT_NTS_THREAD_NAME) {
		nt_value v;
		if (!nt_event_field(ev, ps, "ThreadId", &v))
			return 0;
		char *name = field_str(ev, ps, "Name");
		if (!name)
			return 0;
		size_t ti;
		int rc = sq_intern_thread(st, session_id, v.u, &ti, err);
		if (rc) {
			free(name);
			return rc;
		}
		free(st->threads[ti].name); /* renamed: the last name wins */
		st->threads[ti].name = name;
	}
	return 0;
}

/* Start/stop pairing: 1 for a start ("...Start", "...Begin"), -1 for a stop ("...Stop",
 * "...End"), 0 otherwise; *stem = length of the name without the suffix. Rundown events
 * are excluded: their DCStart/DCEnd are two enumerations, not an interval. */
static int pair_kind(const nt_metadata *m, size_t *stem)
{
	static const struct {
		const char *suffix;
		int kind;
	} SUF[] = {{"Start", 1}, {"Begin", 1}, {"Stop", -1}, {"End", -1}};
	if (strcmp(m->provider, NT_PROVIDER_RUNDOWN) == 0 || !m->name)
		return 0;
	size_t n = strlen(m->name);
	for (size_t i = 0; i < sizeof SUF / sizeof SUF[0]; i++) {
		size_t k = strlen(SUF[i].suffix);
		if (n > k && strcmp(m->name + n - k, SUF[i].suffix) == 0) {
			*stem = n - k;
			return SUF[i].kind;
		}
	}
	return 0;
}

static int pair_event(nt_store *st, int64_t session_id, const nt_event *ev, int64_t rowid,
		      nt_error *err)
{
	size_t stem;
	int kind = pair_kind(ev->meta, &stem);
	if (!kind)
		return 0;
	/* key: session, thread, provider NUL stem */
	size_t lp = strlen(ev->meta->provider);
	size_t klen = 16 + lp + 1 + stem;
	uint8_t kbuf[512];
	if (klen > sizeof kbuf)
		return 0; /* absurdly long names are not paired */
	uint64_t hdr[2] = {(uint64_t)session_id, ev->thread_id};
	memcpy(kbuf, hdr, 16);
	memcpy(kbuf + 16, ev->meta->provider, lp + 1);
	memcpy(kbuf + 16 + lp + 1, ev->meta->name, stem);
	int64_t pi;
	if (!kmap_get(&st->pendmap, kbuf, klen, &pi)) {
		if (kind < 0)
			return 0; /* a stop without a start */
		if (nt_grow((void **)&st->pend, &st->pendcap, st->npend + 1, sizeof(pending)) ||
		    kmap_put(&st->pendmap, kbuf, klen, (int64_t)st->npend))
			return NOMEM(err);
		memset(&st->pend[st->npend], 0, sizeof(pending));
		pi = (int64_t)st->npend++;
	}
	pending *pd = &st->pend[pi];
	if (kind > 0) {
		if (pd->n == PEND_DEPTH) { /* unmatched starts: forget the oldest */
			memmove(pd->id, pd->id + 1, (PEND_DEPTH - 1) * sizeof pd->id[0]);
			memmove(pd->ts, pd->ts + 1, (PEND_DEPTH - 1) * sizeof pd->ts[0]);
			pd->n--;
		}
		pd->id[pd->n] = rowid;
		pd->ts[pd->n] = ev->time_ns;
		pd->n++;
		return 0;
	}
	if (pd->n == 0)
		return 0;
	pd->n--; /* nested intervals close innermost first */
	sqlite3_stmt *q = st->q[Q_DURATION];
	sqlite3_bind_int64(q, 1, ev->time_ns - pd->ts[pd->n]);
	sqlite3_bind_int64(q, 2, pd->id[pd->n]);
	return sq_step_done(st, q, err, "cannot update an event");
}

static int on_event(void *ctx, uint32_t session, const nt_trace_header *h, const nt_event *ev,
		    nt_error *err)
{
	nt_store *st = ctx;
	const nt_metadata *m = ev->meta;
	if (!m)
		return 0;
	int64_t sid = st->session_base + 1 + session;
	int rc = note_event(st, sid, h->pointer_size, ev, err);
	if (rc || (st->o.flags & NT_STORE_NO_EVENTS))
		return rc;
	size_t ti;
	if ((rc = sq_intern_thread(st, sid, ev->thread_id, &ti, err)) != 0)
		return rc;
	st->json.len = 0;
	nt_sink sink = nt_sink_membuf(&st->json);
	if ((rc = nt_payload_write_json(ev, h->pointer_size, &sink)) != 0)
		return nt_fail(err, rc, NT_NO_OFFSET, "cannot convert an event payload to JSON");
	char name[32];
	const char *evname = m->name;
	if (!evname || !*evname) { /* as TraceEvent names events it has no name for */
		snprintf(name, sizeof name, "EventID(%" PRIu32 ")", m->event_id);
		evname = name;
	}
	sqlite3_stmt *q = st->q[Q_EVENT];
	sqlite3_bind_int64(q, 1, sid);
	sqlite3_bind_int64(q, 2, st->threads[ti].id);
	sqlite3_bind_int64(q, 3, ev->time_ns);
	sqlite3_bind_text(q, 4, m->provider, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 5, m->event_id);
	sqlite3_bind_text(q, 6, evname, -1, SQLITE_TRANSIENT);
	/* A payload is at most 4 GiB and its JSON a few times that; SQLite's TEXT ends at
	 * SQLITE_MAX_LENGTH (1e9 by default): a payload beyond 256 MiB of JSON is stored as
	 * NULL rather than failing the import. */
	if (st->json.len <= (256u << 20))
		sqlite3_bind_text(q, 7, (const char *)st->json.data, (int)st->json.len,
				  SQLITE_STATIC);
	rc = sqlite3_step(q);
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	if (rc != SQLITE_DONE)
		return sq_sql_fail(st, err, "cannot insert an event");
	st->stats.events++;
	progress(st);
	return pair_event(st, sid, ev, sqlite3_last_insert_rowid(st->db), err);
}

void nt_store_hook_profile(nt_store *st, nt_profile_opts *popts)
{
	popts->sample_fn = on_sample;
	popts->charge_fn = on_charge;
	popts->event_fn = on_event;
	popts->hook_ctx = st;
	popts->subsystems = 1; /* sample_groups.subsystem (keeps given subsystem_rules) */
	st->compat = popts->compat;
	st->hooked = 1;
	st->rows_hooked = 0;
	st->charges_hooked = 0;
}
