/* SPDX-License-Identifier: MIT */
/* symtab.c - managed symbols: method address ranges from JIT MethodLoadVerbose and rundown
 * MethodDC{Start,End}Verbose events, module names from Module/DomainModule events
 * (spec §9), and IP -> "Module!Namespace.Method(signature)" lookup by binary search.
 *
 * Precedence follows TraceEvent (spec §9.3): runtime (JIT-time) definitions first, in
 * event order, then rundown ones; for one start address the first definition wins.
 * Overlapping ranges (re-JIT, reused code heap) are handled by remembering, for each
 * sorted position, the largest end address so far, so a lookup walks back only while an
 * earlier range can still cover the IP. Not here: native symbols (sym-native.c). */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>

typedef struct method {
	uint64_t start, end;  /* [start, end) */
	uint64_t module_id;
	uint64_t order;       /* precedence: lower wins for equal starts */
	char *text;           /* "Ns.Method(sig)" */
	const char *frame;    /* "Module!Ns.Method(sig)" after sealing (points into names) */
} method;

typedef struct module {
	uint64_t id;
	char *name; /* file name without directory and extension */
} module;

struct nt_symtab {
	unsigned flags;
	method *m;
	size_t n, cap;
	uint64_t *maxend;    /* maxend[i] = max(end[0..i]) after sealing */
	module *mod;
	size_t nmod, modcap;
	nt_strpool names;    /* frame strings, interned: sealing again reuses them */
	char *scratch;       /* one frame string being built */
	size_t scratchcap;
	uint64_t next_rt, next_rd; /* precedence counters: runtime < rundown */
	int sealed;
};

#define RUNDOWN_ORDER_BASE (1ull << 62)

int nt_symtab_new(nt_symtab **out, unsigned flags, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	nt_symtab *st = calloc(1, sizeof *st);
	if (!st)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate symbol table");
	st->flags = flags;
	st->next_rd = RUNDOWN_ORDER_BASE;
	*out = st;
	return 0;
}

void nt_symtab_free(nt_symtab *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++)
		free(st->m[i].text);
	for (size_t i = 0; i < st->nmod; i++)
		free(st->mod[i].name);
	nt_strpool_free(&st->names);
	free(st->scratch);
	free(st->m);
	free(st->maxend);
	free(st->mod);
	free(st);
}

size_t nt_symtab_methods(const nt_symtab *st)
{
	return st->n;
}

size_t nt_symtab_modules(const nt_symtab *st)
{
	return st->nmod;
}

static int add_method(nt_symtab *st, const nt_event *ev, int rundown)
{
	/* MethodID u64, ModuleID u64, MethodStartAddress u64, MethodSize u32, Token u32,
	 * Flags u32, then Namespace, Name, Signature (UTF-16z). The start address is 64-bit
	 * even in 32-bit traces (spec §9.2). */
	if (ev->payload_len < 36)
		return 0;
	const uint8_t *p = ev->payload;
	uint64_t module_id = nt_le64(p + 8), start = nt_le64(p + 16);
	uint32_t size = nt_le32(p + 24);
	size_t pos = 36;
	char *ns = nt_payload_utf16z(ev, &pos);
	char *name = ns ? nt_payload_utf16z(ev, &pos) : NULL;
	char *sig = name ? nt_payload_utf16z(ev, &pos) : NULL;
	if (!sig) {
		free(ns);
		free(name);
		return 0; /* malformed payload: not a symbol */
	}
	const char *paren = strchr(sig, '(');
	size_t lns = strlen(ns), lname = strlen(name), lsig = paren ? strlen(paren) : 0;
	char *text = malloc(lns + 1 + lname + lsig + 1);
	if (!text) {
		free(ns);
		free(name);
		free(sig);
		return NT_ENOMEM;
	}
	size_t k = 0;
	if (lns) {
		memcpy(text, ns, lns);
		text[lns] = '.';
		k = lns + 1;
	}
	memcpy(text + k, name, lname);
	k += lname;
	if (lsig)
		memcpy(text + k, paren, lsig);
	text[k + lsig] = '\0';
	free(ns);
	free(name);
	free(sig);
	if (nt_grow((void **)&st->m, &st->cap, st->n + 1, sizeof(method))) {
		free(text);
		return NT_ENOMEM;
	}
	method *m = &st->m[st->n++];
	m->start = start;
	m->end = start + size < start ? UINT64_MAX : start + size;
	m->module_id = module_id;
	m->order = rundown ? st->next_rd++ : st->next_rt++;
	m->text = text;
	m->frame = NULL;
	st->sealed = 0;
	return 1;
}

static int add_module(nt_symtab *st, const nt_event *ev, int domain)
{
	/* Module*: ModuleID u64, AssemblyID u64, Flags u32, Reserved u32, ILPath, NativePath.
	 * DomainModule*: ModuleID, AssemblyID, AppDomainID u64, Flags, Reserved, ILPath... */
	size_t pos = domain ? 32 : 24;
	if (ev->payload_len < pos)
		return 0;
	uint64_t id = nt_le64(ev->payload);
	char *path = nt_payload_utf16z(ev, &pos);
	if (!path)
		return 0;
	for (size_t i = 0; i < st->nmod; i++)
		if (st->mod[i].id == id) {
			free(path); /* first definition wins */
			return 1;
		}
	/* file name without directory (either separator) and without its extension */
	char *name = nt_strdup(nt_path_base(path));
	free(path);
	if (!name)
		return NT_ENOMEM;
	char *dot = strrchr(name, '.');
	if (dot && dot != name)
		*dot = '\0';
	if (nt_grow((void **)&st->mod, &st->modcap, st->nmod + 1, sizeof(module))) {
		free(name);
		return NT_ENOMEM;
	}
	st->mod[st->nmod].id = id;
	st->mod[st->nmod].name = name;
	st->nmod++;
	st->sealed = 0;
	return 1;
}

int nt_symtab_add_event(nt_symtab *st, const nt_event *ev, uint32_t pointer_size)
{
	(void)pointer_size;
	const nt_metadata *m = ev->meta;
	int who = nt_clr_provider(m); /* 0 also when there is no metadata */
	if (!who)
		return 0;
	int runtime = who == NT_CLR_RUNTIME, rundown = who == NT_CLR_RUNDOWN;
	uint32_t id = m->event_id;
	if (st->flags & NT_SYMTAB_RUNDOWN_ONLY) {
		if (rundown && id == NT_RD_METHOD_DC_END_VERBOSE)
			return add_method(st, ev, 1);
		if (rundown && id == NT_RD_DOMAIN_MODULE_DC_END)
			return add_module(st, ev, 1);
		return 0;
	}
	if (runtime) {
		if (id == NT_RT_METHOD_LOAD_VERBOSE || id == NT_RT_METHOD_UNLOAD_VERBOSE ||
		    id == NT_RT_METHOD_DC_START_VERBOSE_V2 || id == NT_RT_METHOD_DC_END_VERBOSE_V2)
			return add_method(st, ev, 0);
		if (id == NT_RT_MODULE_LOAD)
			return add_module(st, ev, 0);
		if (id == NT_RT_DOMAIN_MODULE_LOAD)
			return add_module(st, ev, 1);
		return 0;
	}
	if (id == NT_RD_METHOD_DC_START_VERBOSE || id == NT_RD_METHOD_DC_END_VERBOSE)
		return add_method(st, ev, 1);
	if (id == NT_RD_MODULE_DC_START || id == NT_RD_MODULE_DC_END)
		return add_module(st, ev, 0);
	if (id == NT_RD_DOMAIN_MODULE_DC_START || id == NT_RD_DOMAIN_MODULE_DC_END)
		return add_module(st, ev, 1);
	return 0;
}

static int cmp_method(const void *a, const void *b)
{
	const method *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static const char *module_name(const nt_symtab *st, uint64_t id)
{
	for (size_t i = 0; i < st->nmod; i++)
		if (st->mod[i].id == id)
			return st->mod[i].name;
	return NULL;
}

int nt_symtab_seal(nt_symtab *st, nt_error *err)
{
	nt_error_clear(err);
	if (st->sealed)
		return 0;
	if (st->n)
		qsort(st->m, st->n, sizeof(method), cmp_method);
	/* Equal starts: the first definition wins, drop the others. */
	size_t w = 0;
	for (size_t i = 0; i < st->n; i++) {
		if (w > 0 && st->m[w - 1].start == st->m[i].start) {
			free(st->m[i].text);
			continue;
		}
		st->m[w++] = st->m[i];
	}
	st->n = w;
	free(st->maxend);
	st->maxend = malloc((st->n ? st->n : 1) * sizeof(uint64_t));
	if (!st->maxend)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate symbol index");
	uint64_t mx = 0;
	for (size_t i = 0; i < st->n; i++) {
		if (st->m[i].end > mx)
			mx = st->m[i].end;
		st->maxend[i] = mx;
	}
	/* Frame strings "Module!Text" (modules are sorted out once here, not per lookup),
	 * interned: a table sealed again after more events (nettrace-top reseals on every
	 * redraw that follows new methods) keeps one copy of each name, and names returned
	 * before stay valid. */
	for (size_t i = 0; i < st->n; i++) {
		const char *mod = module_name(st, st->m[i].module_id);
		size_t lm = mod ? strlen(mod) : 1, lt = strlen(st->m[i].text);
		const char *f = NULL;
		if (!nt_grow((void **)&st->scratch, &st->scratchcap, lm + 1 + lt, 1)) {
			memcpy(st->scratch, mod ? mod : "?", lm);
			st->scratch[lm] = '!';
			memcpy(st->scratch + lm + 1, st->m[i].text, lt);
			f = nt_strpool_intern(&st->names, st->scratch, lm + 1 + lt);
		}
		if (!f)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate frame names");
		st->m[i].frame = f;
	}
	st->sealed = 1;
	return 0;
}

const char *nt_symtab_name(const nt_symtab *st, uint64_t ip)
{
	if (!st->sealed || st->n == 0)
		return "?!?";
	/* greatest start <= ip */
	size_t lo;
	NT_PARTITION(lo, st->n, mid, st->m[mid].start <= ip);
	/* lo = number of methods with start <= ip; walk back while a range may cover ip */
	for (size_t i = lo; i-- > 0;) {
		if (st->maxend[i] <= ip)
			break;
		if (ip < st->m[i].end)
			return st->m[i].frame;
		if (st->flags & NT_SYMTAB_RUNDOWN_ONLY)
			break; /* pyroscope checks only the greatest start <= ip */
	}
	return "?!?";
}
