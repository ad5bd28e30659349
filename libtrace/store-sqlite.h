/* SPDX-License-Identifier: MIT */
/* store-sqlite.h - what the SQLite store's two files share: the store's state (struct
 * nt_store, its batches, threads, modules, the byte-string map) and the helpers both use.
 * store-sqlite.c opens and fills the database while traces are read; store-sqlite-finish.c
 * writes what the finished profile adds and runs queries. These are the only files that
 * include sqlite3.h. */
#ifndef NT_STORE_SQLITE_H
#define NT_STORE_SQLITE_H

#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* A hash map from byte strings to int64 values: the keys interned in a string pool,
 * val[id] the value of the key of pool id. */
typedef struct kmap {
	nt_strpool keys;
	int64_t *val;
	size_t valcap;
} kmap;

typedef struct sthread {
	int64_t id;          /* threads.id */
	int64_t session_id;  /* sessions.id */
	uint64_t tid;
	char *name;          /* from a ThreadName event, or NULL */
} sthread;

typedef struct smodule {
	int64_t id;          /* modules.id */
	char *name;
	char *path;          /* NULL until an event gives it */
	char *build_id;
	int in_db;           /* row written (1), and with path/build_id (2) */
} smodule;

/* Start events waiting for their stop (per session, thread, provider and name stem). */
#define PEND_DEPTH 8
typedef struct pending {
	uint32_t n;
	int64_t id[PEND_DEPTH];  /* events.id of the start */
	int64_t ts[PEND_DEPTH];  /* its ts_ns */
} pending;

enum {
	Q_SAMPLE, Q_SAMPLES, Q_CHARGE, Q_EVENT, Q_DURATION, Q_GROUP, Q_CALLSITE, Q_FRAME, Q_FUNCTION, Q_MODULE,
	Q_MODULE_INFO, Q_THREAD, Q_SESSION, Q_COUNT
};

/* Samples are inserted BATCH rows per statement: one sqlite3_step() per row would cost
 * about as much again as the rows themselves (statement start, reset, halt). */
#define BATCH 128

typedef struct brow {
	int64_t ts;  /* ts_ns */
	int64_t gid; /* group_id */
	double w;    /* weight_ns (compat modes) */
} brow;

struct nt_store {
	sqlite3 *db;
	nt_store_opts o;
	char *path;             /* the database path given to nt_store_open() */
	char *tmp;              /* temporary file of an import in progress, or NULL */
	int in_tx;              /* the import transaction is open */
	sqlite3_stmt *q[Q_COUNT];

	/* the hooked profile */
	int hooked;             /* nt_store_hook_profile() was called, add_profile not yet */
	int compat;             /* its enum nt_compat: samples carry their own weight */
	int64_t session_base;   /* sessions.id = session_base + 1 + session index */
	int64_t group_base;     /* sample_groups.id = group_base + 1 + group index */
	int64_t group_max;      /* highest sample_groups.id referenced so far */

	/* next ids of the tables whose ids the store assigns */
	int64_t next_thread, next_module, next_function, next_frame, next_callsite;

	kmap functions;         /* name -> functions.id */
	kmap modules;           /* name -> index in mods */
	kmap frames;            /* (function, module, address) -> frames.id */
	kmap callsites;         /* (parent, frame) -> callsites.id */
	kmap threadmap;         /* (sessions.id, tid) -> index in threads */
	kmap pendmap;           /* (sessions.id, tid, provider, stem) -> index in pend */
	sthread *threads;
	size_t nthreads, threadcap;
	size_t threads_written; /* threads[0..threads_written) are in the database */
	smodule *mods;
	size_t nmods, modcap;
	pending *pend;
	size_t npend, pendcap;
	int64_t *stack_cs;      /* profile stack index -> callsites.id + 1 (0: not yet) */
	size_t stack_cscap;
	uint64_t *fr_ip;        /* group_callsite(): the address of each frame */
	size_t fr_ipcap;
	const nt_native_frame **fr_nf; /* ... and its native symbol, or NULL */
	size_t fr_nfcap;

	brow batch[BATCH];      /* samples not yet inserted */
	size_t nbatch;
	nt_membuf json;         /* payload of the event being inserted */
	nt_store_stats stats;
	uint64_t rows_hooked;   /* sample rows inserted by the hook for the current profile */
	uint64_t charges_hooked; /* charges rows inserted by the hook for it */
};

#define NOMEM(err) nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory in the SQLite store")

/* store-sqlite.c */
int sq_exec(nt_store *st, const char *sql, nt_error *err);
int sq_flush_samples(nt_store *st, nt_error *err);
int sq_intern_callsite(nt_store *st, int64_t parent, int64_t frame, uint32_t depth,
			   int64_t *id, nt_error *err);
int sq_intern_frame(nt_store *st, const char *name, int has_addr, uint64_t ip,
			const nt_native_frame *nf, int64_t *id, nt_error *err);
int sq_intern_thread(nt_store *st, int64_t session_id, uint64_t tid, size_t *idx,
			 nt_error *err);
int sq_query_settings(nt_store *st, nt_error *err);
int sq_sql_fail(nt_store *st, nt_error *err, const char *what);
int sq_step_done(nt_store *st, sqlite3_stmt *q, nt_error *err, const char *what);
void sq_bind_text_or_null(sqlite3_stmt *q, int i, const char *s);

/* store-sqlite-finish.c */

#endif
