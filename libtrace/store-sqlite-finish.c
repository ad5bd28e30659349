/* SPDX-License-Identifier: MIT */
/* store-sqlite-finish.c - the SQLite store's second half: once a profile is finished, its
 * sample groups, stacks (functions, modules, frames, the callsite prefix tree), threads
 * and sessions are written; and SQL queries run over the database (nt_store_query). */
#include "store-sqlite.h"

/* ------------------------------------------------------------------ finishing a profile */

typedef struct gctx {
	nt_store *st;
	nt_profile *p;
	nt_error *err;
	uint64_t *session_samples; /* rows kept per profile session */
	size_t nsessions;
	uint64_t rows;             /* rows kept in all */
	int rc;
} gctx;

static const char *sample_type_name(uint32_t t)
{
	switch (t) {
	case NT_SAMPLE_MANAGED: return "managed";
	case NT_SAMPLE_EXTERNAL: return "external";
	default: return "error";
	}
}

/* callsites.id of the stack of g (0 for an empty stack), built root first. */
static int group_callsite(nt_store *st, nt_profile *p, const nt_sample_group *g, int64_t *out,
			  nt_error *err)
{
	if (g->stack >= st->stack_cscap) {
		size_t old = st->stack_cscap;
		if (nt_grow((void **)&st->stack_cs, &st->stack_cscap, (size_t)g->stack + 1,
			    sizeof(int64_t)))
			return NOMEM(err);
		memset(st->stack_cs + old, 0, (st->stack_cscap - old) * sizeof(int64_t));
	}
	/* The TraceEvent pseudo-frame (frames[0]) is part of the group, not of the stack:
	 * cache only the plain stacks. */
	uint32_t pseudo = st->compat == NT_COMPAT_TRACEEVENT && g->depth > 0;
	if (!pseudo && st->stack_cs[g->stack]) {
		*out = st->stack_cs[g->stack] - 1;
		return 0;
	}
	/* Which address each frame comes from: one frame per IP, except a native IP, which
	 * expands into its inline chain (inline depth n down to 0, innermost first). */
	if (nt_grow((void **)&st->fr_ip, &st->fr_ipcap, (size_t)g->depth + 1, sizeof(uint64_t)) ||
	    nt_grow((void **)&st->fr_nf, &st->fr_nfcap, (size_t)g->depth + 1,
		    sizeof(const nt_native_frame *)))
		return NOMEM(err);
	uint32_t j = 0;
	for (uint32_t d = pseudo; d < g->depth; d++) {
		const nt_native_frame *nf = nt_profile_frame_native(p, g, d);
		st->fr_nf[d] = nf;
		st->fr_ip[d] = j < g->nips ? g->ips[j] : 0;
		if (!nf || nf->inline_depth == 0)
			j++;
	}
	int64_t parent = 0;
	for (uint32_t d = g->depth; d-- > 0;) {
		int has_addr = !(pseudo && d == 0);
		int64_t fid;
		int rc = sq_intern_frame(st, g->frames[d], has_addr, has_addr ? st->fr_ip[d] : 0,
				      has_addr ? st->fr_nf[d] : NULL, &fid, err);
		if (rc)
			return rc;
		if ((rc = sq_intern_callsite(st, parent, fid, g->depth - 1 - d, &parent, err)) != 0)
			return rc;
	}
	if (!pseudo)
		st->stack_cs[g->stack] = parent + 1;
	*out = parent;
	return 0;
}

static int on_group(void *ctx, const nt_sample_group *g)
{
	gctx *c = ctx;
	nt_store *st = c->st;
	int64_t sid = st->session_base + 1 + g->session;
	size_t ti;
	int64_t cs = 0;
	int rc = sq_intern_thread(st, sid, g->thread_id, &ti, c->err);
	if (!rc)
		rc = group_callsite(st, c->p, g, &cs, c->err);
	if (rc)
		return c->rc = rc;
	int64_t gid = st->group_base + 1 + (int64_t)g->group;
	sqlite3_stmt *q = st->q[Q_GROUP];
	sqlite3_bind_int64(q, 1, gid);
	sqlite3_bind_int64(q, 2, sid);
	sqlite3_bind_int64(q, 3, st->threads[ti].id);
	if (cs)
		sqlite3_bind_int64(q, 4, cs);
	else
		sqlite3_bind_null(q, 4);
	const char *cat = nt_category_name(g->category);
	sqlite3_bind_text(q, 5, cat ? cat : "unknown", -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 6, sample_type_name(g->sample_type), -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 7, (int64_t)g->samples);
	sqlite3_bind_double(q, 8, g->weight_ns);
	const char *sub = g->subsystem >= 0
		? nt_subsystems_name(nt_profile_subsystems(c->p), g->subsystem) : NULL;
	sq_bind_text_or_null(q, 9, sub);
	if (g->charged_ns > 0)
		sqlite3_bind_double(q, 10, g->charged_ns);
	else
		sqlite3_bind_null(q, 10);
	if ((rc = sq_step_done(st, q, c->err, "cannot insert a sample group")) != 0)
		return c->rc = rc;
	if (gid > st->group_max)
		st->group_max = gid;
	if (g->session < c->nsessions)
		c->session_samples[g->session] += g->samples;
	c->rows += g->samples;
	st->stats.groups++;
	return 0;
}

static const char *compat_name(int compat)
{
	switch (compat) {
	case NT_COMPAT_PYROSCOPE: return "pyroscope";
	case NT_COMPAT_TRACEEVENT: return "traceevent";
	default: return "none";
	}
}

static int write_session(nt_store *st, int64_t sid, const nt_session_info *si,
			 uint64_t stored, nt_error *err)
{
	const nt_trace_header *h = si->header;
	char utc[32];
	nt_systemtime_iso(h->sync_time_utc, utc);
	sqlite3_stmt *q = st->q[Q_SESSION];
	sqlite3_bind_int64(q, 1, sid);
	sqlite3_bind_text(q, 2, si->name ? si->name : "-", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(q, 3, h->process_id);
	sqlite3_bind_text(q, 4, utc, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(q, 5, (int64_t)h->qpc_frequency);
	sqlite3_bind_int64(q, 6, (int64_t)si->rate->declared_interval_ns);
	if (si->rate->inferred_interval_ns > 0)
		sqlite3_bind_double(q, 7, si->rate->inferred_interval_ns);
	else
		sqlite3_bind_null(q, 7);
	sq_bind_text_or_null(q, 8, si->rate->schedule);
	sqlite3_bind_int64(q, 9, si->duration_ns);
	sqlite3_bind_int64(q, 10, (int64_t)h->sync_qpc);
	sqlite3_bind_int64(q, 11, h->pointer_size);
	sqlite3_bind_int64(q, 12, h->processors);
	sqlite3_bind_int64(q, 13, h->format_version);
	sqlite3_bind_text(q, 14, compat_name(st->compat), -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 15, (int64_t)si->samples);
	sqlite3_bind_int64(q, 16, (int64_t)stored);
	sqlite3_bind_int64(q, 17, (int64_t)si->lost_events);
	sqlite3_bind_int64(q, 18, si->truncated != 0);
	return sq_step_done(st, q, err, "cannot insert a session");
}

static int write_threads_modules(nt_store *st, nt_error *err)
{
	int rc;
	for (size_t i = st->threads_written; i < st->nthreads; i++) {
		const sthread *t = &st->threads[i];
		sqlite3_stmt *q = st->q[Q_THREAD];
		sqlite3_bind_int64(q, 1, t->id);
		sqlite3_bind_int64(q, 2, t->session_id);
		sqlite3_bind_int64(q, 3, (int64_t)t->tid);
		sq_bind_text_or_null(q, 4, t->name);
		if ((rc = sq_step_done(st, q, err, "cannot insert a thread")) != 0)
			return rc;
	}
	st->threads_written = st->nthreads;
	for (size_t i = 0; i < st->nmods; i++) {
		smodule *m = &st->mods[i];
		if (m->in_db == 2 || (m->in_db == 1 && !m->path && !m->build_id))
			continue;
		sqlite3_stmt *q = st->q[m->in_db ? Q_MODULE_INFO : Q_MODULE];
		sqlite3_bind_int64(q, 1, m->id);
		if (m->in_db) {
			sq_bind_text_or_null(q, 2, m->path);
			sq_bind_text_or_null(q, 3, m->build_id);
		} else {
			sqlite3_bind_text(q, 2, m->name, -1, SQLITE_STATIC);
			sq_bind_text_or_null(q, 3, m->path);
			sq_bind_text_or_null(q, 4, m->build_id);
		}
		if ((rc = sq_step_done(st, q, err, "cannot insert a module")) != 0)
			return rc;
		m->in_db = m->path ? 2 : 1;
	}
	return 0;
}

int nt_store_add_profile(nt_store *st, nt_profile *p, nt_error *err)
{
	nt_error_clear(err);
	if (!st->hooked || !st->in_tx)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "the profile was not hooked to this store (nt_store_hook_profile)");
	int rc = sq_flush_samples(st, err);
	if (rc || (rc = nt_profile_finish(p, err)) != 0)
		return rc;
	size_t ns = nt_profile_session_count(p);
	gctx c;
	memset(&c, 0, sizeof c);
	c.st = st;
	c.p = p;
	c.err = err;
	c.nsessions = ns;
	c.session_samples = calloc(ns ? ns : 1, sizeof(uint64_t));
	if (!c.session_samples)
		return NOMEM(err);
	rc = nt_profile_foreach(p, on_group, &c);
	if (rc) {
		free(c.session_samples);
		if (c.rc)
			return c.rc;
		return rc == NT_ENOMEM ? NOMEM(err)
				       : nt_fail(err, rc, NT_NO_OFFSET, "cannot read the profile");
	}
	for (size_t i = 0; i < ns && rc == 0; i++)
		rc = write_session(st, st->session_base + 1 + (int64_t)i, nt_profile_session(p, i),
				   c.session_samples[i], err);
	free(c.session_samples);
	if (rc || (rc = write_threads_modules(st, err)) != 0)
		return rc;
	/* Rows of groups the category filter left out (no sample_groups row): one pass. In
	 * the compat modes a group may also hold intervals but be left out for having none. */
	static const char *const hooked_tables[] = {"sample_rows", "charges"};
	for (int i = 0; i < 2; i++) {
		if (i == 0 ? c.rows == st->rows_hooked : !st->charges_hooked)
			continue;
		char sql[160];
		snprintf(sql, sizeof sql,
			 "DELETE FROM %s WHERE group_id > %" PRId64
			 " AND group_id NOT IN (SELECT id FROM sample_groups)",
			 hooked_tables[i], st->group_base);
		if ((rc = sq_exec(st, sql, err)) != 0)
			return rc;
	}
	st->stats.samples -= st->rows_hooked - c.rows;
	st->session_base += (int64_t)ns;
	st->group_base = st->group_max;
	st->stats.sessions += ns;
	st->hooked = 0;
	/* Stacks are interned per profile: a new profile has new stack indexes. */
	if (st->stack_cscap)
		memset(st->stack_cs, 0, st->stack_cscap * sizeof(int64_t));
	return 0;
}

int nt_store_commit(nt_store *st, nt_error *err)
{
	nt_error_clear(err);
	if (!st->in_tx)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no import to commit");
	for (int i = 0; i < Q_COUNT; i++) {
		sqlite3_finalize(st->q[i]);
		st->q[i] = NULL;
	}
	int rc = sq_exec(st, "COMMIT", err);
	if (rc)
		return rc;
	st->in_tx = 0;
	if (!st->tmp)
		return 0;
	if (sqlite3_close(st->db) != SQLITE_OK)
		return sq_sql_fail(st, err, "cannot close the database");
	st->db = NULL;
	/* Durable before it gets its name (the import ran with synchronous = OFF). */
	int fd = open(st->tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return nt_fail_errno(err, e, "cannot write %s: %s", st->tmp, strerror(e));
	}
	close(fd);
	if (rename(st->tmp, st->path) != 0) {
		int e = errno;
		return nt_fail_errno(err, e, "cannot rename %s to %s: %s", st->tmp, st->path,
				     strerror(e));
	}
	free(st->tmp);
	st->tmp = NULL;
	if (sqlite3_open_v2(st->path, &st->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return sq_sql_fail(st, err, "cannot reopen the database");
	return sq_query_settings(st, err);
}

/* ------------------------------------------------------------------ queries */

int nt_store_query(nt_store *st, const char *sql, nt_sql_row_fn fn, void *ctx, nt_error *err)
{
	nt_error_clear(err);
	const char *pos = sql;
	size_t index = 0;
	const char **names = NULL;
	nt_sql_value *vals = NULL;
	size_t cap = 0;
	int rc = 0;
	while (pos && *pos) {
		sqlite3_stmt *q = NULL;
		const char *tail = NULL;
		if (sqlite3_prepare_v2(st->db, pos, -1, &q, &tail) != SQLITE_OK) {
			int off = sqlite3_error_offset(st->db);
			if (off >= 0)
				rc = nt_fail(err, NT_ESQL, NT_NO_OFFSET,
					     "SQL error: %s (at byte %zu of the query)",
					     sqlite3_errmsg(st->db), (size_t)(pos - sql) + (size_t)off);
			else
				rc = nt_fail(err, NT_ESQL, NT_NO_OFFSET, "SQL error: %s",
					     sqlite3_errmsg(st->db));
			if (err)
				err->sys_errno = sqlite3_errcode(st->db) & 0xff;
			break;
		}
		pos = tail;
		if (!q) /* whitespace or a comment */
			continue;
		size_t nc = (size_t)sqlite3_column_count(q);
		if (nc > cap) {
			const char **nn = realloc(names, nc * sizeof *nn);
			if (nn)
				names = nn;
			nt_sql_value *nv = nn ? realloc(vals, nc * sizeof *nv) : NULL;
			if (nv)
				vals = nv;
			if (!nn || !nv) {
				sqlite3_finalize(q);
				rc = NOMEM(err);
				break;
			}
			cap = nc;
		}
		for (size_t i = 0; i < nc; i++) {
			names[i] = sqlite3_column_name(q, (int)i);
			if (!names[i])
				names[i] = "?";
		}
		nt_sql_row row = {index, nc, names, NULL};
		if (nc && fn && (rc = fn(ctx, &row)) != 0) {
			sqlite3_finalize(q);
			break;
		}
		int s;
		while ((s = sqlite3_step(q)) == SQLITE_ROW) {
			for (size_t i = 0; i < nc; i++) {
				nt_sql_value *v = &vals[i];
				memset(v, 0, sizeof *v);
				switch (sqlite3_column_type(q, (int)i)) {
				case SQLITE_INTEGER:
					v->type = NT_SQL_INTEGER;
					v->i = sqlite3_column_int64(q, (int)i);
					break;
				case SQLITE_FLOAT:
					v->type = NT_SQL_REAL;
					v->d = sqlite3_column_double(q, (int)i);
					break;
				case SQLITE_TEXT:
					v->type = NT_SQL_TEXT;
					v->text = (const char *)sqlite3_column_text(q, (int)i);
					v->len = (size_t)sqlite3_column_bytes(q, (int)i);
					if (!v->text) {
						v->text = "";
						v->len = 0;
					}
					break;
				case SQLITE_BLOB:
					v->type = NT_SQL_BLOB;
					v->text = sqlite3_column_blob(q, (int)i);
					v->len = (size_t)sqlite3_column_bytes(q, (int)i);
					break;
				default:
					v->type = NT_SQL_NULL;
					break;
				}
			}
			row.values = vals;
			if (nc && fn && (rc = fn(ctx, &row)) != 0)
				break;
		}
		if (rc) {
			sqlite3_finalize(q);
			break;
		}
		if (s != SQLITE_DONE) {
			rc = nt_fail(err, NT_ESQL, NT_NO_OFFSET, "SQL error: %s",
				     sqlite3_errmsg(st->db));
			if (err)
				err->sys_errno = sqlite3_errcode(st->db) & 0xff;
			sqlite3_finalize(q);
			break;
		}
		sqlite3_finalize(q);
		index++;
	}
	free(names);
	free(vals);
	return rc;
}
