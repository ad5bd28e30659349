/* SPDX-License-Identifier: MIT */
/* live.c - a profile over a sliding time window of a stream being read (nettrace-top):
 * samples are counted per (thread, sample type, stack) in one-second buckets of trace
 * time, a snapshot merges the buckets of the window, names the frames through the managed
 * symbol table (nt_symtab, fed by the same stream or by a rundown read beside it),
 * classifies stacks with the category rules (nt_rules_match) and measures the realized
 * sampling interval of the window (nt_rate) and the GC pauses. Memory grows with distinct
 * stacks and (thread, stack) pairs of the window, not with samples. */
#include "internal.h"

#include <math.h>
#include <stdio.h>

#define LIVE_MAX_WINDOW 600u    /* seconds */
#define LIVE_MAX_STACKS 1000000u /* distinct stacks kept; more count as "[other]" */
#define LIVE_MAX_THREADS (1u << 20)

typedef struct lstack {
	uint64_t *ips;
	uint32_t depth;
	uint32_t names_off;  /* into nt_live.names, valid when names_gen == the live's gen */
	uint32_t names_gen;
	int category;        /* rule category or -1 */
} lstack;

typedef struct lpair {
	uint64_t key;        /* thread index << 34 | sample type << 32 | stack index */
	uint64_t count;
} lpair;

typedef struct lbucket {
	int64_t second;      /* trace time / 1 s; INT64_MIN: empty */
	lpair *pairs;
	size_t n, cap;
	nt_idmap map;        /* key -> pair index */
	nt_rate *rate;       /* sampling rounds of this second */
	uint64_t samples;
	uint32_t gcs;
	double gc_ns, gc_max_ns;
} lbucket;

typedef struct lthread {
	uint64_t tid;
	int64_t last_ns;
	uint32_t last_stack; /* UINT32_MAX: none */
	uint32_t last_type;
} lthread;

typedef struct lgc {
	uint64_t tid;
	int64_t start_ns;
} lgc;

struct nt_live {
	nt_live_opts o;
	nt_trace_header hdr;
	int have_hdr;
	nt_symtab *sym;
	size_t sym_methods;  /* methods when the names were last resolved */
	int sym_dirty;
	const nt_rules *rules;
	nt_rules *own_rules;
	lbucket *b;          /* o.window_s buckets, a ring by second */
	lstack *stacks;
	size_t nstacks, cstacks;
	nt_idmap stack_map;  /* reader stack_key -> stack index */
	lthread *threads;
	size_t nthreads, cthreads;
	nt_idmap thread_map;
	lgc *gc;             /* suspensions in progress */
	size_t ngc, cgc;
	int64_t now_ns;
	uint64_t total_samples, total_events;
	uint32_t names_gen;
	const char **names;  /* resolved frame names of all stacks (names_gen) */
	size_t nnames, cnames;
	/* snapshot storage */
	nt_live_func *funcs_self, *funcs_total;
	size_t nfuncs, cfuncs;
	nt_idmap func_map;
	nt_live_thread *vthreads;
	size_t cvthreads;
	uint32_t *seen;      /* per func: the mark of the last pair that counted it */
	uint32_t mark;
	size_t cseen;
	nt_live_view view;
};

int nt_live_new(nt_live **out, const nt_live_opts *opts, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	nt_live_opts o;
	int orc = nt_opts_load(&o, sizeof o, sizeof o, opts, "live options", err);
	if (orc)
		return orc;
	nt_live *lv = calloc(1, sizeof *lv);
	if (!lv)
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	lv->o = o;
	if (lv->o.window_s == 0)
		lv->o.window_s = 10;
	if (lv->o.window_s > LIVE_MAX_WINDOW) {
		free(lv);
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "window of %u s (at most %u)",
			       opts->window_s, LIVE_MAX_WINDOW);
	}
	lv->b = calloc(lv->o.window_s, sizeof *lv->b);
	int rc = lv->b ? nt_symtab_new(&lv->sym, 0, err)
		       : nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	if (!rc && !lv->o.rules)
		rc = nt_rules_default(&lv->own_rules, err);
	if (rc) {
		nt_live_free(lv);
		return rc;
	}
	lv->rules = lv->o.rules ? lv->o.rules : lv->own_rules;
	for (uint32_t i = 0; i < lv->o.window_s; i++)
		lv->b[i].second = INT64_MIN;
	*out = lv;
	return 0;
}

static void bucket_clear(lbucket *b)
{
	b->n = 0;
	nt_idmap_free(&b->map);
	nt_rate_free(b->rate);
	b->rate = NULL;
	b->samples = 0;
	b->gcs = 0;
	b->gc_ns = b->gc_max_ns = 0;
	b->second = INT64_MIN;
}

void nt_live_free(nt_live *lv)
{
	if (!lv)
		return;
	for (uint32_t i = 0; lv->b && i < lv->o.window_s; i++) {
		bucket_clear(&lv->b[i]);
		free(lv->b[i].pairs);
	}
	free(lv->b);
	for (size_t i = 0; i < lv->nstacks; i++)
		free(lv->stacks[i].ips);
	free(lv->stacks);
	nt_idmap_free(&lv->stack_map);
	free(lv->threads);
	nt_idmap_free(&lv->thread_map);
	free(lv->gc);
	free(lv->names);
	free(lv->funcs_self);
	free(lv->funcs_total);
	nt_idmap_free(&lv->func_map);
	free(lv->vthreads);
	free(lv->seen);
	nt_symtab_free(lv->sym);
	nt_rules_free(lv->own_rules);
	free(lv);
}

int nt_live_begin(nt_live *lv, const nt_trace_header *h, nt_error *err)
{
	nt_error_clear(err);
	if (!h || h->qpc_frequency == 0)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_live_begin: no header");
	lv->hdr = *h;
	lv->have_hdr = 1;
	return 0;
}

/* The bucket of second s, recycled when it held an older second. */
static lbucket *bucket_for(nt_live *lv, int64_t s, nt_error *err)
{
	uint64_t w = lv->o.window_s;
	lbucket *b = &lv->b[(uint64_t)(s % (int64_t)w + (int64_t)w) % w];
	if (b->second != s) {
		if (b->second != INT64_MIN && b->second > s)
			return NULL; /* older than the window: not counted */
		bucket_clear(b);
		b->second = s;
		if (nt_rate_new(&b->rate, lv->hdr.expected_sampling_ns, lv->hdr.qpc_frequency,
				lv->hdr.sync_qpc, err)) {
			b->second = INT64_MIN;
			return NULL;
		}
	}
	return b;
}

static int stack_index(nt_live *lv, const nt_event *ev, uint32_t *out, nt_error *err)
{
	size_t idx;
	uint64_t key = ev->stack_key ? ev->stack_key : 0;
	if (nt_idmap_get(&lv->stack_map, key, &idx)) {
		*out = (uint32_t)idx;
		return 0;
	}
	if (lv->nstacks >= LIVE_MAX_STACKS)
		key = UINT64_MAX; /* the overflow stack: depth 0 */
	if (key == UINT64_MAX && nt_idmap_get(&lv->stack_map, key, &idx)) {
		*out = (uint32_t)idx;
		return 0;
	}
	if (nt_grow((void **)&lv->stacks, &lv->cstacks, lv->nstacks + 1, sizeof *lv->stacks))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	lstack *s = &lv->stacks[lv->nstacks];
	memset(s, 0, sizeof *s);
	s->category = -1;
	s->names_gen = UINT32_MAX;
	if (key != UINT64_MAX && ev->stack_depth) {
		s->ips = malloc((size_t)ev->stack_depth * sizeof *s->ips);
		if (!s->ips)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		memcpy(s->ips, ev->stack, (size_t)ev->stack_depth * sizeof *s->ips);
		s->depth = ev->stack_depth;
	}
	if (nt_idmap_put(&lv->stack_map, key, lv->nstacks)) {
		free(s->ips);
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	}
	*out = (uint32_t)lv->nstacks++;
	return 0;
}

static int thread_index(nt_live *lv, uint64_t tid, uint32_t *out, nt_error *err)
{
	size_t idx;
	if (nt_idmap_get(&lv->thread_map, tid, &idx)) {
		*out = (uint32_t)idx;
		return 0;
	}
	if (lv->nthreads >= LIVE_MAX_THREADS)
		return nt_fail(err, NT_ELIMIT, NT_NO_OFFSET, "more than %u threads", LIVE_MAX_THREADS);
	if (nt_grow((void **)&lv->threads, &lv->cthreads, lv->nthreads + 1, sizeof *lv->threads) ||
	    nt_idmap_put(&lv->thread_map, tid, lv->nthreads))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	lthread *t = &lv->threads[lv->nthreads];
	t->tid = tid;
	t->last_ns = INT64_MIN;
	t->last_stack = UINT32_MAX;
	t->last_type = 0;
	*out = (uint32_t)lv->nthreads++;
	return 0;
}

static int is_runtime(const nt_event *ev)
{
	return ev->meta && ev->meta->provider && strcmp(ev->meta->provider, NT_PROVIDER_RUNTIME) == 0;
}

/* GC pauses: GCSuspendEEBegin for a GC (reason 1, or 6 GC preparation) to the next
 * GCRestartEEEnd of the same thread. The sampler's own suspensions (reason 0 in .NET 10)
 * are not GC pauses. */
static int gc_event(nt_live *lv, const nt_event *ev, nt_error *err)
{
	uint32_t id = ev->meta->event_id;
	if (id == 9) {
		nt_value v;
		if (!nt_event_field(ev, lv->hdr.pointer_size, "Reason", &v) || (v.u != 1 && v.u != 6))
			return 0;
		for (size_t i = 0; i < lv->ngc; i++)
			if (lv->gc[i].tid == ev->thread_id) {
				lv->gc[i].start_ns = ev->time_ns;
				return 0;
			}
		if (lv->ngc >= 1024)
			return 0;
		if (nt_grow((void **)&lv->gc, &lv->cgc, lv->ngc + 1, sizeof *lv->gc))
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		lv->gc[lv->ngc].tid = ev->thread_id;
		lv->gc[lv->ngc].start_ns = ev->time_ns;
		lv->ngc++;
	} else if (id == 3) {
		for (size_t i = 0; i < lv->ngc; i++) {
			if (lv->gc[i].tid != ev->thread_id)
				continue;
			double d = (double)(ev->time_ns - lv->gc[i].start_ns);
			lv->gc[i] = lv->gc[--lv->ngc];
			if (d < 0 || d > 3600e9)
				return 0;
			lbucket *b = bucket_for(lv, ev->time_ns >= 0 ? ev->time_ns / 1000000000 : -1, err);
			if (!b)
				return err && err->code ? err->code : 0;
			b->gcs++;
			b->gc_ns += d;
			if (d > b->gc_max_ns)
				b->gc_max_ns = d;
			return 0;
		}
	}
	return 0;
}

int nt_live_add(nt_live *lv, const nt_event *ev, nt_error *err)
{
	nt_error_clear(err);
	if (!lv->have_hdr)
		return nt_fail(err, NT_EINVAL, NT_NO_OFFSET, "nt_live_add before nt_live_begin");
	lv->total_events++;
	uint32_t type;
	if (!nt_event_is_sample(ev, &type)) {
		int used = nt_symtab_add_event(lv->sym, ev, lv->hdr.pointer_size);
		if (used < 0)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		if (used)
			lv->sym_dirty = 1;
		else if (is_runtime(ev) && ev->meta &&
			 (ev->meta->event_id == NT_RT_GC_SUSPEND_EE_BEGIN ||
			  ev->meta->event_id == NT_RT_GC_RESTART_EE_END))
			return gc_event(lv, ev, err);
		return 0;
	}
	if (ev->time_ns > lv->now_ns)
		lv->now_ns = ev->time_ns;
	lv->total_samples++;
	int64_t sec = ev->time_ns >= 0 ? ev->time_ns / 1000000000 : -1;
	lbucket *b = bucket_for(lv, sec, err);
	if (!b)
		return err && err->code ? err->code : 0;
	uint32_t si = 0, ti = 0;
	int rc = stack_index(lv, ev, &si, err);
	if (!rc)
		rc = thread_index(lv, ev->thread_id, &ti, err);
	if (rc)
		return rc;
	lthread *t = &lv->threads[ti];
	if (ev->time_ns >= t->last_ns) {
		t->last_ns = ev->time_ns;
		t->last_stack = si;
		t->last_type = type;
	}
	uint64_t key = (uint64_t)ti << 34 | (uint64_t)(type & 3) << 32 | si;
	size_t pi;
	if (nt_idmap_get(&b->map, key, &pi)) {
		b->pairs[pi].count++;
	} else {
		if (nt_grow((void **)&b->pairs, &b->cap, b->n + 1, sizeof *b->pairs) ||
		    nt_idmap_put(&b->map, key, b->n))
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		b->pairs[b->n].key = key;
		b->pairs[b->n].count = 1;
		b->n++;
	}
	b->samples++;
	nt_rate_add(b->rate, ev->timestamp, ev->thread_id, ev->capture_thread_id);
	return 0;
}

/* Resolves the names of stack s (cached until the symbol table grows). */
static int stack_names(nt_live *lv, uint32_t si, const char ***names, nt_error *err)
{
	lstack *s = &lv->stacks[si];
	if (s->names_gen != lv->names_gen) {
		if (nt_grow((void **)&lv->names, &lv->cnames, lv->nnames + s->depth + 1,
			    sizeof *lv->names))
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		s->names_off = (uint32_t)lv->nnames;
		for (uint32_t i = 0; i < s->depth; i++)
			lv->names[lv->nnames + i] = nt_symtab_name(lv->sym, s->ips[i]);
		lv->nnames += s->depth;
		s->names_gen = lv->names_gen;
		s->category = s->depth ? nt_rules_match(lv->rules, lv->names + s->names_off, s->depth)
				       : -1;
	}
	*names = lv->names + s->names_off;
	return 0;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = nt_fnv1a(NT_FNV1A_BASIS, s, strlen(s));
	return h ? h : 1;
}

/* Index of the function called name in the snapshot's list, added if new. */
static int func_index(nt_live *lv, const char *name, size_t *out, nt_error *err)
{
	uint64_t h = str_hash(name);
	size_t idx;
	if (nt_idmap_get(&lv->func_map, h, &idx)) {
		if (strcmp(lv->funcs_self[idx].name, name) == 0) {
			*out = idx;
			return 0;
		}
		for (idx = 0; idx < lv->nfuncs; idx++) /* a 64-bit hash collision: rare */
			if (strcmp(lv->funcs_self[idx].name, name) == 0) {
				*out = idx;
				return 0;
			}
		h = 0;
	}
	if (nt_grow((void **)&lv->funcs_self, &lv->cfuncs, lv->nfuncs + 1, sizeof *lv->funcs_self))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	size_t c2 = lv->cseen;
	if (nt_grow((void **)&lv->seen, &c2, lv->nfuncs + 1, sizeof *lv->seen))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	lv->cseen = c2;
	if (h && nt_idmap_put(&lv->func_map, h, lv->nfuncs))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	nt_live_func *f = &lv->funcs_self[lv->nfuncs];
	memset(f, 0, sizeof *f);
	f->name = name;
	lv->seen[lv->nfuncs] = UINT32_MAX;
	*out = lv->nfuncs++;
	return 0;
}

static int cmp_self(const void *a, const void *b)
{
	const nt_live_func *x = a, *y = b;
	if (x->self_samples != y->self_samples)
		return x->self_samples > y->self_samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_total(const void *a, const void *b)
{
	const nt_live_func *x = a, *y = b;
	if (x->total_samples != y->total_samples)
		return x->total_samples > y->total_samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_thread(const void *a, const void *b)
{
	const nt_live_thread *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->thread_id < y->thread_id ? -1 : x->thread_id > y->thread_id;
}

static int category_of(const lstack *s, uint32_t type)
{
	if (s->category >= 0)
		return s->category;
	return type == NT_SAMPLE_MANAGED ? NT_CAT_CPU
	       : type == NT_SAMPLE_EXTERNAL ? NT_CAT_EXTERNAL : NT_CAT_UNKNOWN;
}

int nt_live_snapshot(nt_live *lv, const nt_live_view **out, nt_error *err)
{
	nt_error_clear(err);
	*out = NULL;
	nt_live_view *v = &lv->view;
	memset(v, 0, sizeof *v);
	/* names: re-resolve every stack once the symbol table learned methods */
	if (lv->sym_dirty) {
		if (nt_symtab_seal(lv->sym, err))
			return err ? err->code : NT_ENOMEM;
		lv->sym_dirty = 0;
		if (nt_symtab_methods(lv->sym) != lv->sym_methods) {
			lv->sym_methods = nt_symtab_methods(lv->sym);
			lv->names_gen++;
			lv->nnames = 0;
		}
	}
	if (lv->names_gen == UINT32_MAX) /* never the "unresolved" marker */
		lv->names_gen = 0;
	lv->nfuncs = 0;
	nt_idmap_free(&lv->func_map);
	size_t nvt = 0;
	if (nt_grow((void **)&lv->vthreads, &lv->cvthreads, lv->nthreads + 1, sizeof *lv->vthreads))
		return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
	memset(lv->vthreads, 0, (lv->nthreads + 1) * sizeof *lv->vthreads);
	int64_t last = lv->now_ns >= 0 ? lv->now_ns / 1000000000 : -1;
	int64_t first = last - (int64_t)lv->o.window_s + 1;
	double rate_sum = 0;
	uint64_t rate_rounds = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (uint32_t bi = 0; bi < lv->o.window_s; bi++) {
		lbucket *b = &lv->b[bi];
		if (b->second == INT64_MIN || b->second < first || b->second > last)
			continue;
		if (b->second < lo)
			lo = b->second;
		if (b->second > hi)
			hi = b->second;
		v->samples += b->samples;
		v->gcs += b->gcs;
		v->gc_pause_ns += b->gc_ns;
		if (b->gc_max_ns > v->gc_pause_max_ns)
			v->gc_pause_max_ns = b->gc_max_ns;
		if (b->rate) {
			const nt_rate_info *ri = nt_rate_result(b->rate);
			if (ri->rounds > 1 && ri->inferred_interval_ns > 0) {
				rate_sum += ri->inferred_interval_ns * (double)(ri->rounds - 1);
				rate_rounds += ri->rounds - 1;
			}
		}
		for (size_t i = 0; i < b->n; i++) {
			const lpair *pr = &b->pairs[i];
			uint32_t si = (uint32_t)(pr->key & 0xFFFFFFFFu);
			uint32_t type = (uint32_t)(pr->key >> 32) & 3;
			uint32_t ti = (uint32_t)(pr->key >> 34);
			const char **names;
			int rc = stack_names(lv, si, &names, err);
			if (rc)
				return rc;
			const lstack *s = &lv->stacks[si];
			int cat = category_of(s, type);
			uint32_t mark = ++lv->mark;
			if (mark == UINT32_MAX)
				mark = lv->mark = 1;
			v->cat_samples[cat] += pr->count;
			nt_live_thread *vt = &lv->vthreads[ti];
			vt->thread_id = lv->threads[ti].tid;
			vt->samples += pr->count;
			vt->cat_samples[cat] += pr->count;
			for (uint32_t d = 0; d < s->depth; d++) {
				size_t fi;
				rc = func_index(lv, names[d], &fi, err);
				if (rc)
					return rc;
				if (d == 0)
					lv->funcs_self[fi].self_samples += pr->count;
				/* total: once per stack even when the function recurses */
				if (lv->seen[fi] != mark) {
					lv->funcs_self[fi].total_samples += pr->count;
					lv->seen[fi] = mark;
				}
			}
			if (s->depth == 0) {
				size_t fi;
				rc = func_index(lv, "[no stack]", &fi, err);
				if (rc)
					return rc;
				lv->funcs_self[fi].self_samples += pr->count;
				lv->funcs_self[fi].total_samples += pr->count;
			}
		}
	}
	/* threads: those with samples in the window, each with the state of its latest sample */
	for (size_t ti = 0; ti < lv->nthreads; ti++) {
		nt_live_thread *vt = &lv->vthreads[ti];
		if (!vt->samples)
			continue;
		const lthread *t = &lv->threads[ti];
		vt->state = NT_CAT_UNKNOWN;
		vt->leaf = "";
		if (t->last_stack != UINT32_MAX) {
			const char **names;
			int rc = stack_names(lv, t->last_stack, &names, err);
			if (rc)
				return rc;
			const lstack *s = &lv->stacks[t->last_stack];
			vt->state = category_of(s, t->last_type);
			vt->leaf = s->depth ? names[0] : "[no stack]";
			vt->last_ns = t->last_ns;
		}
		lv->vthreads[nvt++] = *vt;
	}
	qsort(lv->vthreads, nvt, sizeof *lv->vthreads, cmp_thread);
	free(lv->funcs_total);
	lv->funcs_total = NULL;
	if (lv->nfuncs) {
		lv->funcs_total = malloc(lv->nfuncs * sizeof *lv->funcs_total);
		if (!lv->funcs_total)
			return nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "out of memory");
		memcpy(lv->funcs_total, lv->funcs_self, lv->nfuncs * sizeof *lv->funcs_total);
		qsort(lv->funcs_self, lv->nfuncs, sizeof *lv->funcs_self, cmp_self);
		qsort(lv->funcs_total, lv->nfuncs, sizeof *lv->funcs_total, cmp_total);
	}
	nt_idmap_free(&lv->func_map); /* indexes changed with the sort */
	v->now_ns = lv->now_ns;
	v->window_start_ns = lo == INT64_MAX ? 0 : lo * 1000000000;
	v->window_s = lo == INT64_MAX ? 0 : (double)(lv->now_ns - lo * 1000000000) / 1e9;
	if (v->window_s < 1e-3)
		v->window_s = 0;
	v->samples_per_s = v->window_s > 0 ? (double)v->samples / v->window_s : 0;
	v->interval_ns = rate_rounds ? rate_sum / (double)rate_rounds : 0;
	v->rounds = rate_rounds;
	v->total_samples = lv->total_samples;
	v->total_events = lv->total_events;
	v->methods = nt_symtab_methods(lv->sym);
	v->by_self = lv->funcs_self;
	v->by_total = lv->funcs_total;
	v->nfuncs = lv->nfuncs;
	v->threads = lv->vthreads;
	v->nthreads = nvt;
	(void)hi;
	*out = v;
	return 0;
}
