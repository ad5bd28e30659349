/* SPDX-License-Identifier: MIT */
/* store-clickhouse-http.c - the ClickHouse export's client side (store-clickhouse.h): the
 * server's URL and ClickHouse's HTTP interface: a statement or a streamed INSERT as one
 * chunked POST, the reply read with a size cap and a timeout and parsed with bounds checks
 * (the server is a peer like any other input). Not here: what is sent (store-clickhouse.c),
 * the buffer requests and replies are built in (nt_out, out.c). */
#include "store-clickhouse.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define CH_REPLY_MAX (4u << 20)      /* a reply larger than this is not ClickHouse's */
#define CH_TIMEOUT_MS 60000          /* no byte from the server for this long: give up */

/* ------------------------------------------------------------------ HTTP */

static int ident_ok(const char *s)
{
	if (!*s)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}

static int copy_part(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		return -1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* clickhouse://[USER[:PASSWORD]@]HOST[:PORT][/DB] (also http://); port 8123, database
 * "default" when not given. */
int ntch_parse_url(chconn *c, const char *url, nt_error *err)
{
	memset(c, 0, sizeof *c);
	const char *p = url;
	if (!strncmp(p, "clickhouse://", 13))
		p += 13;
	else if (!strncmp(p, "http://", 7))
		p += 7;
	else
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "'%s' is not a ClickHouse URL (clickhouse://HOST[:PORT][/DB])", url);
	const char *slash = strchr(p, '/');
	const char *end = slash ? slash : p + strlen(p);
	const char *at = memchr(p, '@', (size_t)(end - p));
	if (at) {
		const char *colon = memchr(p, ':', (size_t)(at - p));
		const char *ue = colon ? colon : at;
		if (copy_part(c->user, sizeof c->user, p, (size_t)(ue - p)) ||
		    (colon && copy_part(c->password, sizeof c->password, colon + 1,
					(size_t)(at - colon - 1))))
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "user name too long in '%s'",
				       url);
		p = at + 1;
	}
	const char *colon = memchr(p, ':', (size_t)(end - p));
	const char *he = colon ? colon : end;
	if (he == p || copy_part(c->host, sizeof c->host, p, (size_t)(he - p)))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "no host in '%s'", url);
	if (colon) {
		if (copy_part(c->port, sizeof c->port, colon + 1, (size_t)(end - colon - 1)) ||
		    !c->port[0] || strspn(c->port, "0123456789") != strlen(c->port))
			return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "bad port in '%s'", url);
	} else {
		strcpy(c->port, "8123");
	}
	const char *db = slash && slash[1] ? slash + 1 : "default";
	if (copy_part(c->db, sizeof c->db, db, strlen(db)) || !ident_ok(c->db))
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET,
			       "bad database name in '%s' (letters, digits and _)", url);
	return 0;
}

static void url_encode(nt_out *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' || *p == '~') {
			nt_out_put(b, (const char *)p, 1);
		} else {
			char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
			nt_out_put(b, e, 3);
		}
	}
}

static int send_all(chreq *r, const char *p, size_t n)
{
	while (n) {
		ssize_t k = send(r->fd, p, n, MSG_NOSIGNAL);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return nt_fail_errno(r->err, errno, "ClickHouse %s:%s: send failed",
					     r->c->host, r->c->port);
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Opens the connection and sends the request head: POST with the query in the URL (when
 * query is not NULL) and a chunked body. */
int ntch_req_start(chreq *r, const chconn *c, const char *query, nt_error *err)
{
	r->c = c;
	r->err = err;
	r->fd = -1;
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	int g = getaddrinfo(c->host, c->port, &hints, &ai);
	if (g)
		return nt_fail(err, NT_EIO, NT_NO_OFFSET, "ClickHouse host %s: %s", c->host,
			       gai_strerror(g));
	int e = ECONNREFUSED;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
			r->fd = fd;
			break;
		}
		e = errno;
		close(fd);
	}
	freeaddrinfo(ai);
	if (r->fd < 0)
		return nt_fail_errno(err, e, "cannot connect to ClickHouse at %s:%s", c->host,
				     c->port);
	int one = 1;
	setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	nt_out h;
	nt_out_init(&h, NULL);
	/* no database= parameter: every statement names its tables with the database, and
	 * the database may not exist yet */
	nt_out_str(&h, "POST /?send_progress_in_http_headers=0");
	if (c->user[0]) {
		nt_out_str(&h, "&user=");
		url_encode(&h, c->user);
		nt_out_str(&h, "&password=");
		url_encode(&h, c->password);
	}
	if (query) {
		nt_out_str(&h, "&query=");
		url_encode(&h, query);
	}
	nt_out_printf(&h, " HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: libnettrace/" PACKAGE_VERSION
		      "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
		      c->host, c->port);
	int rc = h.rc ? nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory")
		      : send_all(r, nt_out_data(&h), nt_out_len(&h));
	nt_out_end(&h);
	return rc;
}

int ntch_req_chunk(chreq *r, const char *p, size_t n)
{
	if (!n)
		return 0;
	char head[32];
	int k = snprintf(head, sizeof head, "%zx\r\n", n);
	if (send_all(r, head, (size_t)k) || send_all(r, p, n) || send_all(r, "\r\n", 2))
		return -1;
	return 0;
}

/* Reads the whole reply (the server closes the connection) and checks its status.
 * On success, *body (malloc'd, NUL-terminated, "" when empty) is the decoded body. */
int ntch_req_finish(chreq *r, char **body)
{
	if (body)
		*body = NULL;
	int rc = send_all(r, "0\r\n\r\n", 5);
	nt_out in;
	nt_out_init(&in, NULL);
	while (!rc) {
		struct pollfd pfd = {r->fd, POLLIN, 0};
		int pr = poll(&pfd, 1, CH_TIMEOUT_MS);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0) {
			rc = nt_fail(r->err, NT_EIO, NT_NO_OFFSET,
				     "ClickHouse %s:%s sent no reply in %d s", r->c->host,
				     r->c->port, CH_TIMEOUT_MS / 1000);
			break;
		}
		char tmp[16384];
		ssize_t k = recv(r->fd, tmp, sizeof tmp, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = nt_fail_errno(r->err, errno, "ClickHouse %s:%s: receive failed",
					   r->c->host, r->c->port);
			break;
		}
		if (k == 0)
			break;
		if (nt_out_len(&in) + (size_t)k > CH_REPLY_MAX) {
			rc = nt_fail(r->err, NT_ELIMIT, nt_out_len(&in),
				     "ClickHouse reply larger than %u bytes", CH_REPLY_MAX);
			break;
		}
		nt_out_put(&in, tmp, (size_t)k);
		if (in.rc)
			rc = nt_fail(r->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	}
	close(r->fd);
	r->fd = -1;
	/* status line, headers, body: a string (strstr, sscanf stop at its end) */
	const char *p = rc ? NULL : nt_out_cstr(&in);
	if (!rc && !p)
		rc = nt_fail(r->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (rc) {
		nt_out_end(&in);
		return rc;
	}
	const char *hend = strstr(p, "\r\n\r\n");
	int status = 0;
	if (nt_out_len(&in) == 0)
		rc = nt_fail(r->err, NT_EIO, 0, "ClickHouse %s:%s closed the connection without a "
				 "reply", r->c->host, r->c->port);
	else if (!hend || sscanf(p, "HTTP/1.%*[01] %d", &status) != 1 || status < 100 ||
		 status > 599)
		rc = nt_fail(r->err, NT_EFORMAT, 0, "ClickHouse %s:%s: not an HTTP reply",
			     r->c->host, r->c->port);
	if (rc) {
		nt_out_end(&in);
		return rc;
	}
	size_t hlen = (size_t)(hend - p);
	const char *b = hend + 4;
	size_t blen = nt_out_len(&in) - hlen - 4;
	nt_out dec;
	nt_out_init(&dec, NULL);
	int chunked = 0;
	for (const char *h = strstr(p, "\r\n"); h && h < hend; h = strstr(h + 2, "\r\n"))
		if (!strncasecmp(h + 2, "transfer-encoding:", 18) &&
		    strstr(h + 20, "chunked") && strstr(h + 20, "chunked") < hend)
			chunked = 1;
	if (chunked) {
		size_t i = 0;
		for (;;) {
			char *e;
			if (i >= blen)
				break;
			unsigned long long n = strtoull(b + i, &e, 16);
			const char *crlf = strstr(b + i, "\r\n");
			if (e == b + i || !crlf || n > blen - (size_t)(crlf + 2 - b)) {
				rc = nt_fail(r->err, NT_EFORMAT, hlen + 4 + i,
					     "ClickHouse reply: bad chunk header");
				break;
			}
			i = (size_t)(crlf + 2 - b);
			if (n == 0)
				break;
			nt_out_put(&dec, b + i, (size_t)n);
			i += (size_t)n + 2;
		}
	} else {
		nt_out_put(&dec, b, blen);
	}
	nt_out_end(&in);
	const char *text = rc ? NULL : nt_out_cstr(&dec);
	if (!rc && !text)
		rc = nt_fail(r->err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (!rc && status != 200) {
		/* ClickHouse's own message: "Code: 62, e.displayText() = DB::Exception: ..." */
		size_t n = nt_out_len(&dec);
		while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
			n--;
		rc = nt_fail(r->err, NT_ESQL, NT_NO_OFFSET, "ClickHouse error (HTTP %d): %.*s",
			     status, (int)(n > 200 ? 200 : n), text);
	}
	if (!rc && body)
		*body = nt_out_take(&dec); /* not NULL: cstr made room for the NUL */
	nt_out_end(&dec);
	return rc;
}

/* Runs one statement; its result text (TabSeparated) in *out when out is not NULL. */
int ntch_exec(const chconn *c, const char *sql, char **out, nt_error *err)
{
	chreq r;
	int rc = ntch_req_start(&r, c, NULL, err);
	if (!rc)
		rc = ntch_req_chunk(&r, sql, strlen(sql));
	if (!rc)
		return ntch_req_finish(&r, out);
	if (r.fd >= 0)
		close(r.fd);
	return rc;
}
