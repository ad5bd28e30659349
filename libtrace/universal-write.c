/* SPDX-License-Identifier: MIT */
/* universal-write.c - rewrites a trace of native samples (our sampler's ThreadSample
 * events with ModuleMap events) as a V6 trace of the Universal providers
 * (doc/format/universal-events.md), the format TraceEvent / PerfView read from
 * `dotnet-trace collect-linux`: each sample becomes a Universal.Events cpu event (Value 1;
 * the header keeps the declared period), each module mapping a Universal.System
 * ProcessMapping with its ELF build id in ProcessMappingMetadata, and every sampled
 * address a ProcessSymbol range named by the DWARF resolver here, while the module files
 * are at hand, so that readers without them still name the frames. Not here: reading
 * Universal traces (universal.c). */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>

#define VU(name) {name, NT_TYPE_VARUINT, 0, 0, NULL, 0}
/* what one-collect declares for its uint16-length UTF-8 strings (type 23) */
#define S8(name) {name, NT_TYPE_UTF8CHAR, 0, 0, NULL, 0}

static const nt_field value_f[] = {VU("Value")};
static const nt_field create_f[] = {VU("NamespaceId"), S8("Name"), S8("NamespaceName")};
static const nt_field mapping_f[] = {VU("Id"),         VU("StartAddress"), VU("EndAddress"),
				     VU("FileOffset"), S8("FileName"),     VU("MetadataId")};
static const nt_field symbol_f[] = {VU("Id"), VU("MappingId"), VU("StartAddress"),
				    VU("EndAddress"), S8("Name")};
static const nt_field mmeta_f[] = {VU("Id"), S8("SymbolMetadata"), S8("VersionMetadata")};

enum { M_CPU, M_EXISTING, M_MAPPING, M_SYMBOL, M_MMETA, M_COUNT };

typedef struct wmap {
	uint64_t start, end; /* [start, end) */
} wmap;

typedef struct uw {
	nt_writer *w;
	uint32_t meta[M_COUNT];
	uint64_t pid;
	nt_native *nn;
	wmap *maps;          /* mapping id i + 1 */
	size_t nmaps, mapcap;
	nt_idmap seen;       /* addresses given a ProcessSymbol (value unused) */
	uint64_t next_sym;
	int named;           /* the ExistingProcess event was written */
	uint8_t *buf;
	size_t cap, n;
	uint64_t stats_symbols;
} uw;

static int b_need(uw *u, size_t k)
{
	return nt_grow((void **)&u->buf, &u->cap, u->n + k, 1);
}

static int b_var(uw *u, uint64_t v)
{
	if (b_need(u, 10))
		return -1;
	u->n += nt_put_varu64(u->buf + u->n, v);
	return 0;
}

static int b_str(uw *u, const char *s)
{
	size_t k = strlen(s);
	if (k > 65535)
		k = 65535;
	if (b_need(u, 2 + k))
		return -1;
	u->buf[u->n++] = (uint8_t)k;
	u->buf[u->n++] = (uint8_t)(k >> 8);
	memcpy(u->buf + u->n, s, k);
	u->n += k;
	return 0;
}

/* Writes the buffered payload as an event of metadata m on thread tid at ts. */
static int emit(uw *u, int m, uint64_t tid, uint64_t capture, uint64_t ts, const uint64_t *stack,
		uint32_t depth, nt_error *err)
{
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = u->meta[m];
	e.thread_id = tid;
	e.capture_thread_id = capture;
	e.processor = 0;
	e.timestamp = ts;
	e.stack = stack;
	e.stack_depth = depth;
	e.payload = u->buf;
	e.payload_len = (uint32_t)u->n;
	e.process_id = u->pid;
	u->n = 0;
	return nt_writer_write_event(u->w, &e, err);
}

#define OOM() nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory writing Universal events")

static int module_map(uw *u, const nt_event *ev, uint32_t ps, nt_error *err)
{
	int rc = nt_native_add_event(u->nn, ev, ps);
	if (rc < 0)
		return OOM();
	if (rc == 0)
		return 0;
	nt_value base, size, off;
	char *path = NULL, *bid = NULL;
	nt_event_field(ev, ps, "Base", &base);
	nt_event_field(ev, ps, "Size", &size);
	nt_event_field(ev, ps, "FileOffset", &off);
	nt_value v;
	if (nt_event_field(ev, ps, "Path", &v) && v.type == NT_TYPE_STRING &&
	    nt_utf16z_dup(v.raw, v.raw_len, &path) == (size_t)-1)
		return OOM();
	if (nt_event_field(ev, ps, "BuildId", &v) && v.type == NT_TYPE_STRING &&
	    nt_utf16z_dup(v.raw, v.raw_len, &bid) == (size_t)-1) {
		free(path);
		return OOM();
	}
	if (nt_grow((void **)&u->maps, &u->mapcap, u->nmaps + 1, sizeof(wmap)))
		goto oom;
	uint64_t id = u->nmaps + 1;
	u->maps[u->nmaps++] = (wmap){base.u, base.u + size.u};
	if (!u->named && path) {
		/* the first mapping is the program (dl_iterate_phdr lists it first) */
		const char *b = strrchr(path, '/');
		if (b_var(u, u->pid) || b_str(u, b ? b + 1 : path) || b_str(u, "Unknown"))
			goto oom;
		if ((rc = emit(u, M_EXISTING, 0, 0, ev->timestamp, NULL, 0, err)))
			goto out;
		u->named = 1;
	}
	uint64_t meta_id = 0;
	if (bid && bid[0]) {
		char json[300];
		snprintf(json, sizeof json, "{\"type\":\"ELF\",\"build_id\":\"%.256s\"}", bid);
		meta_id = id;
		if (b_var(u, meta_id) || b_str(u, json) || b_str(u, "{}"))
			goto oom;
		if ((rc = emit(u, M_MMETA, 0, 0, ev->timestamp, NULL, 0, err)))
			goto out;
	}
	if (b_var(u, id) || b_var(u, base.u) || b_var(u, base.u + size.u) || b_var(u, off.u) ||
	    b_str(u, path ? path : "") || b_var(u, meta_id))
		goto oom;
	rc = emit(u, M_MAPPING, 0, 0, ev->timestamp, NULL, 0, err);
out:
	free(path);
	free(bid);
	return rc;
oom:
	rc = OOM();
	goto out;
}

/* A ProcessSymbol [ip, ip] for every new address of the stack, named by the resolver
 * (return addresses looked up at ip - 1, the call, as everywhere in the library). */
static int symbols(uw *u, const nt_event *ev, nt_error *err)
{
	for (uint32_t d = 0; d < ev->stack_depth; d++) {
		uint64_t ip = ev->stack[d];
		size_t dummy;
		if (nt_idmap_get(&u->seen, ip, &dummy))
			continue;
		if (nt_idmap_put(&u->seen, ip, 0))
			return OOM();
		size_t mi = 0;
		while (mi < u->nmaps && !(ip >= u->maps[mi].start && ip < u->maps[mi].end))
			mi++;
		if (mi == u->nmaps)
			continue; /* in no module */
		const nt_native_frame *f;
		size_t n;
		int rc = nt_native_resolve(u->nn, d > 0 && ip > 0 ? ip - 1 : ip, &f, &n, err);
		if (rc)
			return rc;
		if (n == 0 || !f[n - 1].function)
			continue; /* unknown function: readers show the module */
		if (b_var(u, ++u->next_sym) || b_var(u, mi + 1) || b_var(u, ip) || b_var(u, ip) ||
		    b_str(u, f[n - 1].function))
			return OOM();
		if ((rc = emit(u, M_SYMBOL, 0, 0, ev->timestamp, NULL, 0, err)))
			return rc;
		u->stats_symbols++;
	}
	return 0;
}

int nt_universal_write(nt_reader *r, const nt_sink *sink, const nt_native_opts *nopts,
		       nt_error *err)
{
	nt_error_clear(err);
	const nt_trace_header *h = nt_reader_header(r);
	nt_trace_header hdr = *h;
	hdr.format_version = 6;
	hdr.minor_version = 0;
	nt_writer_opts wo;
	memset(&wo, 0, sizeof wo);
	wo.sz = sizeof wo;
	wo.format_version = 6;
	uw u;
	memset(&u, 0, sizeof u);
	u.pid = h->process_id;
	int rc = nt_native_new(&u.nn, nopts, err);
	if (rc)
		return rc;
	if ((rc = nt_writer_open(&u.w, sink, &hdr, &wo, err)))
		goto done;
	const char *US = NT_PROVIDER_UNIVERSAL_SYSTEM;
	const nt_metadata_desc md[M_COUNT] = {
		{NT_PROVIDER_UNIVERSAL_EVENTS, 1, "cpu", 0, 0, 0, 0, value_f, 1},
		{US, 0, "ExistingProcess", 0, 0, 0, 0, create_f, 3},
		{US, 3, "ProcessMapping", 0, 0, 0, 0, mapping_f, 6},
		{US, 4, "ProcessSymbol", 0, 0, 0, 0, symbol_f, 5},
		{US, 5, "ProcessMappingMetadata", 0, 0, 0, 0, mmeta_f, 3},
	};
	for (int i = 0; i < M_COUNT; i++)
		if ((rc = nt_writer_add_metadata(u.w, &md[i], &u.meta[i], err)))
			goto done;
	const nt_event *ev;
	uint32_t ps = h->pointer_size;
	while ((rc = nt_reader_next(r, &ev, err)) == 1) {
		const nt_metadata *m = ev->meta;
		if (!m)
			continue;
		if (m->event_id == NT_NTS_MODULE_MAP && m->provider &&
		    strcmp(m->provider, NT_PROVIDER_NTSAMPLER) == 0) {
			if ((rc = module_map(&u, ev, ps, err)))
				goto done;
			continue;
		}
		if (!nt_event_is_sample(ev, NULL))
			continue;
		if ((rc = symbols(&u, ev, err)))
			goto done;
		if (b_var(&u, 1)) {
			rc = OOM();
			goto done;
		}
		if ((rc = emit(&u, M_CPU, ev->thread_id, 0, ev->timestamp, ev->stack,
			       ev->stack_depth, err)))
			goto done;
	}
	if (rc == 0) {
		rc = nt_writer_close(u.w, err);
		u.w = NULL;
	}
done:
	nt_writer_free(u.w);
	nt_native_free(u.nn);
	nt_idmap_free(&u.seen);
	free(u.maps);
	free(u.buf);
	return rc;
}
