/* SPDX-License-Identifier: MIT */
/* gen-trace.c - writes a large, realistic SampleProfiler trace with libnettrace's writer,
 * for the decode and fold benchmarks (bench/run.sh). Deterministic for a given seed.
 *
 * The model, per sampling round (every ~1 ms, timestamps on a 1 GHz clock): one sampler
 * thread writes a ThreadSample (Microsoft-DotNETCore-SampleProfiler, event 0, payload
 * uint32 sample type 1 External or 2 Managed) for each of the sampled threads, in turn,
 * a few microseconds apart. Threads have roles (request workers, I/O threads, idle pool
 * threads, a finalizer); each role draws its stacks from its own pool, Zipf-weighted,
 * and a thread often stays in the stack of its previous sample. Pool stacks share
 * prefixes: each new stack copies a prefix of an earlier one and grows to depth ~30.
 * Now and then a worker triggers a GC (GCSuspendEEBegin, GCStart, GCEnd, GCRestartEEEnd)
 * or waits on a lock (ContentionStart/Stop). At the end, rundown describes every method
 * (MethodDCEndVerbose v1, spec §9.2) and module (DomainModuleDCEnd, ModuleDCEnd), so
 * frames resolve to names. Not here: measuring (decode-bench.c, run.sh). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace.h"

#define PROG "gen-trace"

/* Exit codes, as the nettrace tools use them. */
enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_SYSTEM = 3, EXIT_INTERNAL = 4 };

/* ---------------------------------------------------------------------------------------
 * Deterministic randomness (splitmix64) and Zipf sampling
 * ------------------------------------------------------------------------------------- */

typedef struct rng {
	uint64_t s;
} rng;

static uint64_t rng_next(rng *g)
{
	uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). n > 0; the modulo bias is irrelevant here. */
static uint32_t rng_below(rng *g, uint32_t n)
{
	return (uint32_t)(rng_next(g) % n);
}

static double rng_unit(rng *g)
{
	return (double)(rng_next(g) >> 11) * (1.0 / 9007199254740992.0);
}

/* Cumulative weights 1/(k+1)^s of n items; draws by binary search. */
typedef struct zipf {
	double *cdf;
	uint32_t n;
} zipf;

static int zipf_init(zipf *z, uint32_t n, double s)
{
	z->n = n;
	z->cdf = malloc(n * sizeof *z->cdf);
	if (!z->cdf)
		return -1;
	double sum = 0;
	for (uint32_t k = 0; k < n; k++) {
		sum += 1.0 / pow((double)k + 1.0, s);
		z->cdf[k] = sum;
	}
	for (uint32_t k = 0; k < n; k++)
		z->cdf[k] /= sum;
	return 0;
}

static uint32_t zipf_draw(const zipf *z, rng *g)
{
	double u = rng_unit(g);
	uint32_t lo = 0, hi = z->n - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (z->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---------------------------------------------------------------------------------------
 * The synthetic program: modules, methods (address ranges and names), stack pools
 * ------------------------------------------------------------------------------------- */

#define NMODULES 24
#define NMETHODS 3000
#define CODE_BASE 0x7f3a40000000ull  /* JIT code heap */
#define STUB_BASE 0x7f3a3ff00000ull  /* stubs: frames that no method covers ("?!?") */
#define MODULE_ID_BASE 0x7f3a10000000ull
#define ASSEMBLY_ID_BASE 0x7f3a18000000ull
#define APPDOMAIN_ID 0x55d0c0de0000ull

typedef struct method {
	uint64_t start;
	uint32_t size;
	uint32_t token;
	uint32_t module;
	char name[160];  /* "Namespace.Type" */
	char short_name[48];
	char sig[96];
} method;

static const char *const MODULE_NAMES[NMODULES] = {
	"System.Private.CoreLib", "System.Runtime", "System.Collections",
	"System.Linq", "System.Net.Http", "System.Net.Sockets",
	"System.Text.Json", "System.Threading", "System.Threading.Channels",
	"System.IO.Pipelines", "System.Memory", "System.Security.Cryptography",
	"Microsoft.AspNetCore.Server.Kestrel.Core", "Microsoft.AspNetCore.Http",
	"Microsoft.AspNetCore.Routing", "Microsoft.Extensions.DependencyInjection",
	"Microsoft.Extensions.Logging", "Npgsql", "Dapper", "Orders.Api", "Orders.Domain",
	"Orders.Infrastructure", "Polly", "Serilog",
};

static const char *const TYPE_WORDS[] = {
	"ThreadPoolWorkQueue", "ExecutionContext", "AsyncStateMachineBox`1", "Task`1",
	"Dictionary`2", "List`1", "Enumerable", "HttpConnection", "SocketAsyncEventArgs",
	"Utf8JsonWriter", "JsonSerializer", "Pipe", "HttpProtocol", "EndpointMiddleware",
	"ServiceProvider", "Logger", "NpgsqlCommand", "SqlMapper", "OrderService",
	"OrderRepository", "PricingEngine", "RetryPolicy", "Monitor", "SemaphoreSlim",
	"Channel`1", "Span`1", "StringBuilder", "HashAlgorithm", "TimerQueue", "GC",
};

static const char *const METHOD_WORDS[] = {
	"Dispatch", "RunInternal", "MoveNext", "ExecuteWorkItem", "TryGetValue", "FindValue",
	"Add", "Resize", "Select", "ToList", "SendAsync", "ReadAsync", "WriteAsync",
	"Serialize", "Deserialize", "Flush", "ProcessRequestsAsync", "Invoke", "GetService",
	"Log", "ExecuteReader", "Query", "PlaceOrder", "GetOrdersAsync", "ComputePrice",
	"ExecuteAsync", "Enter", "Wait", "WaitAsync", "TryRead", "CopyTo", "Append",
	"ComputeHash", "FireNextTimers", "Collect", "Validate", "Map", "Parse", "Format",
	"Equals", "GetHashCode", "Compare",
};

static const char *const SIGS[] = {
	"void  ()", "instance void  ()", "instance bool  (!0,!1&)", "instance int32  (!0)",
	"instance class System.Threading.Tasks.Task  (class System.Threading.CancellationToken)",
	"instance void  (class System.Object)", "bool  (class System.Threading.Thread,bool)",
	"instance class System.Collections.Generic.List`1<!!0>  (class System.Func`2<!0,!!0>)",
	"instance !0  (int32,int32)", "valuetype System.ReadOnlySpan`1<unsigned int8>  ()",
};

typedef struct stackdef {
	uint64_t *ips; /* leaf first */
	uint32_t depth;
} stackdef;

/* A role: which threads have it, its stack pool and how its threads behave. */
typedef struct role {
	const char *what;
	uint32_t nstacks;    /* pool size */
	double zipf_s;       /* skew of the pool */
	double p_repeat;     /* probability to keep the previous sample's stack */
	double p_external;   /* probability of sample type 1 (External) */
	stackdef *pool;
	zipf z;
} role;

typedef struct gen {
	rng g;
	method m[NMETHODS];
	zipf mz;             /* method popularity */
	role roles[4];
	uint32_t nthreads;
	uint32_t depth;      /* mean stack depth */
	uint64_t *tids;
	uint32_t *thread_role;
	int32_t *cur_stack;  /* per thread: its previous stack (-1 none) */
	uint32_t *cur_type;
} gen;

/* One frame in method mi: a return address at one of its call sites. */
static uint64_t frame_ip(gen *G, uint32_t mi)
{
	const method *m = &G->m[mi];
	uint32_t site = rng_below(&G->g, 6);
	return m->start + (uint64_t)(m->size / 7) * (site + 1) + 5;
}

static void make_methods(gen *G)
{
	uint64_t addr = CODE_BASE;
	size_t ntypes = sizeof TYPE_WORDS / sizeof TYPE_WORDS[0];
	size_t nwords = sizeof METHOD_WORDS / sizeof METHOD_WORDS[0];
	size_t nsigs = sizeof SIGS / sizeof SIGS[0];
	for (uint32_t i = 0; i < NMETHODS; i++) {
		method *m = &G->m[i];
		/* sizes 64 B .. 4 KiB, skewed small, 16-byte aligned as the JIT does */
		uint32_t size = 64 + (uint32_t)(rng_unit(&G->g) * rng_unit(&G->g) * 4032.0);
		m->start = addr;
		m->size = size;
		m->token = 0x06000000u | (i + 1);
		m->module = rng_below(&G->g, NMODULES);
		snprintf(m->name, sizeof m->name, "%s.%s%u", MODULE_NAMES[m->module],
			 TYPE_WORDS[rng_below(&G->g, (uint32_t)ntypes)], i % 97);
		snprintf(m->short_name, sizeof m->short_name, "%s",
			 METHOD_WORDS[rng_below(&G->g, (uint32_t)nwords)]);
		snprintf(m->sig, sizeof m->sig, "%s", SIGS[rng_below(&G->g, (uint32_t)nsigs)]);
		addr += (size + 15u + 16u) & ~15u;
	}
}

/* Depth around the mean: rounded normal (Box-Muller), clamped to [8, 2*mean]. */
static uint32_t draw_depth(gen *G)
{
	double u1 = rng_unit(&G->g), u2 = rng_unit(&G->g);
	double n = sqrt(-2.0 * log(u1 + 1e-12)) * cos(6.283185307179586 * u2);
	double d = (double)G->depth + n * (double)G->depth / 6.0;
	if (d < 8)
		d = 8;
	if (d > 2.0 * G->depth)
		d = 2.0 * G->depth;
	return (uint32_t)(d + 0.5);
}

/* Builds a role's pool. Frames are built root first, then reversed (the file is leaf
 * first). Every stack starts with the role's thread-start prefix; most copy a prefix of
 * an earlier stack of the pool, so stacks form a tree as real call trees do. */
static int make_pool(gen *G, role *ro, uint32_t role_index)
{
	uint32_t maxd = 2 * G->depth + 8;
	uint64_t *tmp = malloc(maxd * sizeof *tmp);
	ro->pool = calloc(ro->nstacks, sizeof *ro->pool);
	if (!tmp || !ro->pool || zipf_init(&ro->z, ro->nstacks, ro->zipf_s)) {
		free(tmp);
		return -1;
	}
	/* thread-start prefix: 4..6 frames fixed per role */
	uint32_t nprefix = 4 + role_index % 3;
	uint64_t prefix[8];
	for (uint32_t i = 0; i < nprefix; i++)
		prefix[i] = frame_ip(G, (role_index * 37 + i * 11) % NMETHODS);
	for (uint32_t k = 0; k < ro->nstacks; k++) {
		uint32_t depth = draw_depth(G), n = 0;
		if (depth > maxd)
			depth = maxd;
		if (k > 0 && rng_unit(&G->g) < 0.85) {
			/* copy a prefix of an earlier stack (root-first order is restored from
			 * its leaf-first storage) */
			const stackdef *p = &ro->pool[rng_below(&G->g, k)];
			uint32_t keep = nprefix + rng_below(&G->g, p->depth - nprefix);
			if (keep > depth - 1)
				keep = depth - 1;
			for (; n < keep; n++)
				tmp[n] = p->ips[p->depth - 1 - n];
		} else {
			for (; n < nprefix; n++)
				tmp[n] = prefix[n];
		}
		for (; n < depth; n++) {
			if (rng_unit(&G->g) < 0.02)
				tmp[n] = STUB_BASE + 16u * rng_below(&G->g, 4096);
			else
				tmp[n] = frame_ip(G, zipf_draw(&G->mz, &G->g));
		}
		stackdef *s = &ro->pool[k];
		s->depth = depth;
		s->ips = malloc(depth * sizeof *s->ips);
		if (!s->ips) {
			free(tmp);
			return -1;
		}
		for (uint32_t i = 0; i < depth; i++)
			s->ips[i] = tmp[depth - 1 - i];
	}
	free(tmp);
	return 0;
}

static void free_gen(gen *G)
{
	for (int r = 0; r < 4; r++) {
		if (G->roles[r].pool)
			for (uint32_t k = 0; k < G->roles[r].nstacks; k++)
				free(G->roles[r].pool[k].ips);
		free(G->roles[r].pool);
		free(G->roles[r].z.cdf);
	}
	free(G->mz.cdf);
	free(G->tids);
	free(G->thread_role);
	free(G->cur_stack);
	free(G->cur_type);
}

/* ---------------------------------------------------------------------------------------
 * Output: a counting stdio sink (the size target is measured in bytes written)
 * ------------------------------------------------------------------------------------- */

typedef struct outfile {
	FILE *fp;
	uint64_t bytes;
} outfile;

static int out_write(void *ctx, const void *buf, size_t len)
{
	outfile *o = ctx;
	if (fwrite(buf, 1, len, o->fp) != len)
		return NT_EIO;
	o->bytes += len;
	return 0;
}

/* Payload builder (little-endian, strings as UTF-16LE with a NUL). */
typedef struct pbuf {
	uint8_t b[1024];
	size_t n;
} pbuf;

static void pb_u8(pbuf *p, uint8_t v)
{
	if (p->n < sizeof p->b)
		p->b[p->n++] = v;
}
static void pb_u16(pbuf *p, uint16_t v)
{
	pb_u8(p, (uint8_t)v);
	pb_u8(p, (uint8_t)(v >> 8));
}
static void pb_u32(pbuf *p, uint32_t v)
{
	pb_u16(p, (uint16_t)v);
	pb_u16(p, (uint16_t)(v >> 16));
}
static void pb_u64(pbuf *p, uint64_t v)
{
	pb_u32(p, (uint32_t)v);
	pb_u32(p, (uint32_t)(v >> 32));
}
static void pb_str(pbuf *p, const char *s)
{
	for (; *s; s++)
		pb_u16(p, (uint8_t)*s);
	pb_u16(p, 0);
}

/* ---------------------------------------------------------------------------------------
 * Event emission
 * ------------------------------------------------------------------------------------- */

enum { M_SAMPLE, M_PROCINFO, M_GCSUSPEND, M_GCSTART, M_GCEND, M_GCRESTART, M_CSTART, M_CSTOP,
       M_DCENDINIT, M_METHOD_DCEND, M_DOMAINMODULE_DCEND, M_MODULE_DCEND, M_DCENDCOMPLETE,
       M_COUNT };

typedef struct emitter {
	nt_writer *w;
	uint32_t meta[M_COUNT];
	nt_error err;
	uint64_t events;
} emitter;

static int define_metadata(emitter *E)
{
	static const struct {
		const char *provider;
		uint32_t id, version, level;
		uint64_t keywords;
	} defs[M_COUNT] = {
		[M_SAMPLE] = {NT_PROVIDER_SAMPLER, 0, 0, 4, 0},
		[M_PROCINFO] = {NT_PROVIDER_EVENTPIPE, 1, 1, 4, 0},
		[M_GCSUSPEND] = {NT_PROVIDER_RUNTIME, 9, 1, 4, 0x1},
		[M_GCSTART] = {NT_PROVIDER_RUNTIME, 1, 2, 4, 0x1},
		[M_GCEND] = {NT_PROVIDER_RUNTIME, 2, 1, 4, 0x1},
		[M_GCRESTART] = {NT_PROVIDER_RUNTIME, 3, 1, 4, 0x1},
		[M_CSTART] = {NT_PROVIDER_RUNTIME, 81, 2, 4, 0x4000},
		[M_CSTOP] = {NT_PROVIDER_RUNTIME, 91, 1, 4, 0x4000},
		[M_DCENDINIT] = {NT_PROVIDER_RUNDOWN, 148, 1, 4, 0x8},
		[M_METHOD_DCEND] = {NT_PROVIDER_RUNDOWN, 144, 1, 4, 0x38},
		[M_DOMAINMODULE_DCEND] = {NT_PROVIDER_RUNDOWN, 152, 1, 4, 0x8},
		[M_MODULE_DCEND] = {NT_PROVIDER_RUNDOWN, 154, 1, 4, 0x8},
		[M_DCENDCOMPLETE] = {NT_PROVIDER_RUNDOWN, 146, 1, 4, 0x8},
	};
	for (int i = 0; i < M_COUNT; i++) {
		/* Runtime events carry no field descriptors and no name in the file (spec
		 * §8): readers use built-in layouts, as with real traces. */
		nt_metadata_desc d;
		memset(&d, 0, sizeof d);
		d.provider = defs[i].provider;
		d.event_id = defs[i].id;
		d.name = "";
		d.version = defs[i].version;
		d.level = defs[i].level;
		d.keywords = defs[i].keywords;
		if (nt_writer_add_metadata(E->w, &d, &E->meta[i], &E->err))
			return -1;
	}
	return 0;
}

static int emit(emitter *E, int kind, uint64_t tid, uint64_t ctid, uint32_t cpu, uint64_t ts,
		const stackdef *st, const void *payload, uint32_t plen)
{
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = E->meta[kind];
	e.thread_id = tid;
	e.capture_thread_id = ctid;
	e.processor = cpu;
	e.timestamp = ts;
	if (st) {
		e.stack = st->ips;
		e.stack_depth = st->depth;
	}
	e.payload = payload;
	e.payload_len = plen;
	E->events++;
	return nt_writer_write_event(E->w, &e, &E->err);
}

/* The sampled stack of thread th for this round (and its sample type). */
static const stackdef *pick_stack(gen *G, uint32_t th, uint32_t *type)
{
	role *ro = &G->roles[G->thread_role[th]];
	if (G->cur_stack[th] < 0 || rng_unit(&G->g) >= ro->p_repeat) {
		/* threads of one role prefer different parts of its pool */
		uint32_t k = (zipf_draw(&ro->z, &G->g) + th * 7) % ro->nstacks;
		G->cur_stack[th] = (int32_t)k;
		G->cur_type[th] = rng_unit(&G->g) < ro->p_external ? 1 : 2;
	}
	*type = G->cur_type[th];
	return &ro->pool[G->cur_stack[th]];
}

static int emit_gc(gen *G, emitter *E, uint32_t th, uint64_t t, uint32_t *gc_count)
{
	uint64_t tid = G->tids[th];
	uint32_t cpu = th % 8;
	uint32_t type;
	const stackdef *st = pick_stack(G, th, &type);
	pbuf p;
	(*gc_count)++;
	p.n = 0; /* GCSuspendEEBegin v1: Reason (1 = SuspendForGC), Count, ClrInstanceID */
	pb_u32(&p, 1);
	pb_u32(&p, *gc_count);
	pb_u16(&p, 0);
	if (emit(E, M_GCSUSPEND, tid, tid, cpu, t, st, p.b, (uint32_t)p.n))
		return -1;
	p.n = 0; /* GCStart v2 */
	pb_u32(&p, *gc_count);
	pb_u32(&p, rng_below(&G->g, 10) == 0 ? 1 : 0);
	pb_u32(&p, 0);
	pb_u32(&p, 0);
	pb_u16(&p, 0);
	pb_u64(&p, 0);
	if (emit(E, M_GCSTART, tid, tid, cpu, t + 20000, st, p.b, (uint32_t)p.n))
		return -1;
	p.n = 0; /* GCEnd v1 */
	pb_u32(&p, *gc_count);
	pb_u32(&p, 0);
	pb_u16(&p, 0);
	if (emit(E, M_GCEND, tid, tid, cpu, t + 20000 + 150000 + rng_below(&G->g, 300000), NULL,
		 p.b, (uint32_t)p.n))
		return -1;
	p.n = 0;
	pb_u16(&p, 0);
	return emit(E, M_GCRESTART, tid, tid, cpu, t + 500000, NULL, p.b, (uint32_t)p.n);
}

static int emit_contention(gen *G, emitter *E, uint32_t th, uint64_t t)
{
	uint64_t tid = G->tids[th];
	uint32_t cpu = th % 8;
	uint32_t type;
	const stackdef *st = pick_stack(G, th, &type);
	uint32_t dur = 5000 + rng_below(&G->g, 400000);
	pbuf p;
	p.n = 0; /* ContentionStart v2 */
	pb_u8(&p, 0);
	pb_u16(&p, 0);
	pb_u64(&p, 0x7f3a60000000ull + 64u * rng_below(&G->g, 64));
	pb_u64(&p, 0x7f3a70000000ull + 64u * rng_below(&G->g, 64));
	pb_u64(&p, G->tids[rng_below(&G->g, G->nthreads)]);
	if (emit(E, M_CSTART, tid, tid, cpu, t, st, p.b, (uint32_t)p.n))
		return -1;
	p.n = 0; /* ContentionStop v1 */
	pb_u8(&p, 0);
	pb_u16(&p, 0);
	double d = (double)dur;
	uint64_t bits;
	memcpy(&bits, &d, 8);
	pb_u64(&p, bits);
	return emit(E, M_CSTOP, tid, tid, cpu, t + dur, st, p.b, (uint32_t)p.n);
}

static int emit_rundown(gen *G, emitter *E, uint64_t tid, uint64_t t)
{
	pbuf p;
	p.n = 0;
	pb_u16(&p, 0);
	if (emit(E, M_DCENDINIT, tid, tid, 0, t, NULL, p.b, (uint32_t)p.n))
		return -1;
	for (uint32_t i = 0; i < NMETHODS; i++) {
		const method *m = &G->m[i];
		p.n = 0; /* MethodDCEndVerbose v1 (spec §9.2) */
		pb_u64(&p, 0x7f3a20000000ull + 0x40ull * i);       /* MethodID */
		pb_u64(&p, MODULE_ID_BASE + 0x1000ull * m->module); /* ModuleID */
		pb_u64(&p, m->start);
		pb_u32(&p, m->size);
		pb_u32(&p, m->token);
		pb_u32(&p, 0x8); /* Jitted */
		pb_str(&p, m->name);
		pb_str(&p, m->short_name);
		pb_str(&p, m->sig);
		pb_u16(&p, 0);
		if (emit(E, M_METHOD_DCEND, tid, tid, 0, t + 1000 + i, NULL, p.b, (uint32_t)p.n))
			return -1;
	}
	for (uint32_t i = 0; i < NMODULES; i++) {
		char path[256];
		snprintf(path, sizeof path,
			 i < 16 ? "/usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.1/%s.dll"
				: "/app/%s.dll",
			 MODULE_NAMES[i]);
		uint64_t ts = t + 1000 + NMETHODS + 2 * i;
		p.n = 0; /* DomainModuleDCEnd v1 */
		pb_u64(&p, MODULE_ID_BASE + 0x1000ull * i);
		pb_u64(&p, ASSEMBLY_ID_BASE + 0x1000ull * i);
		pb_u64(&p, APPDOMAIN_ID);
		pb_u32(&p, 0x8);
		pb_u32(&p, 0);
		pb_str(&p, path);
		pb_str(&p, "");
		pb_u16(&p, 0);
		if (emit(E, M_DOMAINMODULE_DCEND, tid, tid, 0, ts, NULL, p.b, (uint32_t)p.n))
			return -1;
		p.n = 0; /* ModuleDCEnd v1 */
		pb_u64(&p, MODULE_ID_BASE + 0x1000ull * i);
		pb_u64(&p, ASSEMBLY_ID_BASE + 0x1000ull * i);
		pb_u32(&p, 0x8);
		pb_u32(&p, 0);
		pb_str(&p, path);
		pb_str(&p, "");
		pb_u16(&p, 0);
		if (emit(E, M_MODULE_DCEND, tid, tid, 0, ts + 1, NULL, p.b, (uint32_t)p.n))
			return -1;
	}
	p.n = 0;
	pb_u16(&p, 0);
	return emit(E, M_DCENDCOMPLETE, tid, tid, 0, t + 1000 + NMETHODS + 2 * NMODULES + 10, NULL,
		    p.b, (uint32_t)p.n);
}

/* ---------------------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------------------- */

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return -1;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': v *= 1024.0; end++; break;
	case 'm': case 'M': v *= 1048576.0; end++; break;
	case 'g': case 'G': v *= 1073741824.0; end++; break;
	default: return -1;
	}
	if (*end && strcmp(end, "B") != 0 && strcmp(end, "iB") != 0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static const char USAGE[] =
	"Usage: " PROG " -s SIZE -o FILE [OPTIONS]\n"
	"Write a realistic SampleProfiler nettrace of at least SIZE bytes (deterministic).\n"
	"\n"
	"  -s, --size SIZE      target size: bytes, or with K, M, G (binary) suffix\n"
	"  -o, --output FILE    output file ('-' = standard output)\n"
	"  -f, --format N       5 (V4 container with V5 metadata, default) or 6\n"
	"  -t, --threads N      sampled threads (default 16)\n"
	"  -d, --depth N        mean stack depth (default 30)\n"
	"  -S, --seed N         random seed (default 1)\n"
	"  -q, --quiet          no summary on standard error\n"
	"  -h, --help           this help\n";

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"size", required_argument, NULL, 's'},   {"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, 'f'}, {"threads", required_argument, NULL, 't'},
		{"depth", required_argument, NULL, 'd'},  {"seed", required_argument, NULL, 'S'},
		{"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t target = 0, seed = 1;
	const char *path = NULL;
	unsigned long format = 5, nthreads = 16, depth = 30;
	int quiet = 0, c;
	while ((c = getopt_long(argc, argv, "s:o:f:t:d:S:qh", lo, NULL)) != -1) {
		char *end;
		switch (c) {
		case 's':
			if (parse_size(optarg, &target)) {
				fprintf(stderr, PROG ": bad size '%s'\nTry '" PROG " --help'.\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o': path = optarg; break;
		case 'f': format = strtoul(optarg, &end, 10); if (*end) format = 0; break;
		case 't': nthreads = strtoul(optarg, &end, 10); if (*end) nthreads = 0; break;
		case 'd': depth = strtoul(optarg, &end, 10); if (*end) depth = 0; break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'q': quiet = 1; break;
		case 'h': fputs(USAGE, stdout); return EXIT_OK;
		default: fprintf(stderr, "Try '" PROG " --help'.\n"); return EXIT_USAGE;
		}
	}
	if (!target || !path || optind != argc || (format != 5 && format != 6) || nthreads < 4 ||
	    nthreads > 1024 || depth < 8 || depth > 1000) {
		fprintf(stderr,
			PROG ": need -s SIZE and -o FILE; format 5 or 6, threads 4..1024, depth "
			     "8..1000\nTry '" PROG " --help'.\n");
		return EXIT_USAGE;
	}

	static gen G; /* large (method table): not on the stack */
	G.g.s = seed;
	G.nthreads = (uint32_t)nthreads;
	G.depth = (uint32_t)depth;
	G.tids = malloc(nthreads * sizeof *G.tids);
	G.thread_role = malloc(nthreads * sizeof *G.thread_role);
	G.cur_stack = malloc(nthreads * sizeof *G.cur_stack);
	G.cur_type = malloc(nthreads * sizeof *G.cur_type);
	/* roles: half request workers, then I/O threads, idle pool threads, one finalizer */
	G.roles[0] = (role){"worker", 1500, 1.05, 0.45, 0.05, NULL, {NULL, 0}};
	G.roles[1] = (role){"io", 300, 1.1, 0.6, 0.6, NULL, {NULL, 0}};
	G.roles[2] = (role){"idle", 12, 1.5, 0.97, 0.95, NULL, {NULL, 0}};
	G.roles[3] = (role){"finalizer", 20, 1.2, 0.9, 0.8, NULL, {NULL, 0}};
	int rc = EXIT_SYSTEM;
	outfile o = {NULL, 0};
	emitter E;
	memset(&E, 0, sizeof E);
	if (!G.tids || !G.thread_role || !G.cur_stack || !G.cur_type ||
	    zipf_init(&G.mz, NMETHODS, 0.9)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto done;
	}
	for (uint32_t i = 0; i < G.nthreads; i++) {
		G.tids[i] = 31337 + 3 * i;
		G.thread_role[i] = i < G.nthreads / 2 ? 0 : i < G.nthreads * 11 / 16 ? 1
				 : i + 1 < G.nthreads ? 2 : 3;
		G.cur_stack[i] = -1;
		G.cur_type[i] = 2;
	}
	make_methods(&G);
	for (uint32_t r = 0; r < 4; r++)
		if (make_pool(&G, &G.roles[r], r)) {
			fprintf(stderr, PROG ": out of memory\n");
			goto done;
		}

	o.fp = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
	if (!o.fp) {
		fprintf(stderr, PROG ": cannot open %s: %s\n", path, strerror(errno));
		goto done;
	}
	static char obuf[1 << 20];
	setvbuf(o.fp, obuf, _IOFBF, sizeof obuf);
	nt_sink sink = {out_write, &o};
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	static const uint16_t st[8] = {2024, 5, 5, 17, 9, 30, 0, 0};
	memcpy(h.sync_time_utc, st, sizeof st);
	h.sync_qpc = 1000000000000ull; /* 1000 s of uptime on a 1 GHz clock */
	h.qpc_frequency = 1000000000ull;
	h.pointer_size = 8;
	h.process_id = 31300;
	h.processors = 8;
	h.expected_sampling_ns = 1000000;
	nt_writer_opts wo;
	memset(&wo, 0, sizeof wo);
	wo.sz = sizeof wo;
	wo.format_version = (uint32_t)format;
	if (nt_writer_open(&E.w, &sink, &h, &wo, &E.err) || define_metadata(&E))
		goto werr;

	const uint64_t sampler_tid = 31330, rundown_tid = 31300;
	uint64_t t = h.sync_qpc + 2000000;
	pbuf p;
	p.n = 0; /* ProcessInfo v1: CommandLine, OSInformation, ArchInformation */
	pb_str(&p, "/app/Orders.Api");
	pb_str(&p, "Linux");
	pb_str(&p, "X64");
	if (emit(&E, M_PROCINFO, rundown_tid, rundown_tid, 0, t, NULL, p.b, (uint32_t)p.n))
		goto werr;
	/* Sampling stops once the target is written; what the writer still holds and the
	 * rundown (~250 bytes per method) come on top, so the file is a little larger. */
	uint64_t rounds = 0, samples = 0;
	uint32_t gc_count = 0;
	while (o.bytes < target) {
		/* the sampler wakes up every ~1 ms (plus scheduling jitter) */
		uint64_t round_t = t + 1000000 + rng_below(&G.g, 30000);
		t = round_t;
		uint32_t cpu = (uint32_t)((rounds / 500) % 8);
		for (uint32_t th = 0; th < G.nthreads; th++) {
			uint32_t type;
			const stackdef *s = pick_stack(&G, th, &type);
			uint8_t pl[4] = {(uint8_t)type, 0, 0, 0};
			/* suspending and walking one thread takes a few microseconds */
			t += 2000 + rng_below(&G.g, 3000);
			if (emit(&E, M_SAMPLE, G.tids[th], sampler_tid, cpu, t, s, pl, 4))
				goto werr;
			samples++;
		}
		/* side events of a worker, after this round's samples and before the next */
		uint32_t dice = rng_below(&G.g, 1000);
		uint32_t worker = rng_below(&G.g, G.nthreads / 2);
		if (dice < 5) {
			if (emit_gc(&G, &E, worker, t + 100000, &gc_count))
				goto werr;
		} else if (dice < 25) {
			if (emit_contention(&G, &E, worker, t + 100000))
				goto werr;
		}
		rounds++;
	}
	if (emit_rundown(&G, &E, rundown_tid, t + 2000000))
		goto werr;
	rc = nt_writer_close(E.w, &E.err);
	E.w = NULL;
	if (rc)
		goto werr;
	if (fflush(o.fp) != 0 || (o.fp != stdout && fclose(o.fp) != 0)) {
		o.fp = NULL;
		fprintf(stderr, PROG ": cannot write %s: %s\n", path, strerror(errno));
		rc = EXIT_SYSTEM;
		goto done;
	}
	o.fp = NULL;
	if (!quiet)
		fprintf(stderr,
			PROG ": %s: %" PRIu64 " bytes, format %lu, %" PRIu64 " rounds, %" PRIu64
			     " samples, %" PRIu64 " events, %u threads, %u methods\n",
			path, o.bytes, format, rounds, samples, E.events, G.nthreads, NMETHODS);
	rc = EXIT_OK;
	goto done;
werr:
	fprintf(stderr, PROG ": %s: %s\n", path, E.err.msg[0] ? E.err.msg : nt_strerror(E.err.code));
	rc = E.err.code == NT_EIO ? EXIT_SYSTEM : EXIT_INTERNAL;
done:
	nt_writer_free(E.w);
	if (o.fp && o.fp != stdout)
		fclose(o.fp);
	free_gen(&G);
	return rc;
}
