/* SPDX-License-Identifier: MIT */
/* sink.c - output sinks: stdio streams and growable memory buffers. Exporters and the
 * writer write only through nt_sink, so tests can capture output in memory. */
#include "internal.h"

#include <errno.h>

static int stdio_write(void *ctx, const void *buf, size_t len)
{
	if (len && fwrite(buf, 1, len, (FILE *)ctx) != len)
		return NT_EIO;
	return 0;
}

nt_sink nt_sink_stdio(FILE *fp)
{
	nt_sink s = {stdio_write, fp};
	return s;
}

static int mem_write(void *ctx, const void *buf, size_t len)
{
	nt_membuf *mb = ctx;
	if (len > SIZE_MAX - mb->len || nt_grow((void **)&mb->data, &mb->cap, mb->len + len, 1))
		return NT_ENOMEM;
	memcpy(mb->data + mb->len, buf, len);
	mb->len += len;
	return 0;
}

nt_sink nt_sink_membuf(nt_membuf *mb)
{
	nt_sink s = {mem_write, mb};
	return s;
}

void nt_membuf_free(nt_membuf *mb)
{
	if (!mb)
		return;
	free(mb->data);
	mb->data = NULL;
	mb->len = mb->cap = 0;
}
