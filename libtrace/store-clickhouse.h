/* SPDX-License-Identifier: MIT */
/* store-clickhouse.h - private to the ClickHouse export (not installed): the HTTP client of
 * store-clickhouse-http.c, which store-clickhouse.c sends its statements and rows through
 * (both build them in memory nt_out buffers, out.c). */
#ifndef NT_STORE_CLICKHOUSE_H
#define NT_STORE_CLICKHOUSE_H

#include "internal.h"

/* A server: clickhouse://[USER[:PASSWORD]@]HOST[:PORT][/DB] (also http://), port 8123 and
 * database "default" when not given. ntch_parse_url() fails with NT_EINVAL. */
typedef struct chconn {
	char host[256];
	char port[16];
	char db[128];
	char user[128];
	char password[128];
} chconn;
int ntch_parse_url(chconn *c, const char *url, nt_error *err);

/* One request: ntch_req_start() connects and sends the header of a POST of query (NULL:
 * the body is the statement), ntch_req_chunk() sends body bytes, ntch_req_finish() ends
 * the body, reads the reply (its text in *body, malloc'd, when body is not NULL) and
 * closes; a reply other than 200 is NT_EIO with the server's message. Each returns 0 or
 * an NT_E* code with r->err set; after a failed start or chunk, fd (>= 0) is the
 * caller's to close. ntch_exec() runs one statement (its TabSeparated result in *out). */
typedef struct chreq {
	const chconn *c;
	int fd;
	nt_error *err;
} chreq;

int ntch_req_start(chreq *r, const chconn *c, const char *query, nt_error *err);
int ntch_req_chunk(chreq *r, const char *p, size_t n);
int ntch_req_finish(chreq *r, char **body);
int ntch_exec(const chconn *c, const char *sql, char **out, nt_error *err);

#endif
