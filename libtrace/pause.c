/* SPDX-License-Identifier: MIT */
/* pause.c - the runtime's pauses of a session, from its GC events: garbage collections
 * (GCStart 1 -> GCEnd 2 on one thread) and execution-engine suspensions (GCSuspendEEBegin
 * 9 -> GCRestartEEEnd 3 on the thread that suspended), by reason. A suspension for a GC
 * (reason 1 SuspendForGC, 6 SuspendForGCPrep) is a GC pause: from the request to stop
 * every managed thread until they run again (what PerfView calls a GC's pause time); the
 * runtime's own sampler suspends the threads as well (reason 0), and a debugger (5, 7).
 * The profile (profile.c) charges the GC pauses to the threads that sat in them and
 * nettrace-info reports them next to the sampling gaps they explain. Memory: one entry per
 * pause (at most NT_PAUSE_MAX listed, all counted) and per thread with an open interval. */
#include "internal.h"

/* Open intervals are per thread; a runtime has a few threads that suspend or collect, so
 * a short list does. Beyond it, an interval is not tracked (counted in no total). */
#define PAUSE_OPEN_MAX 64

typedef struct pinterval {
	uint64_t tid;
	int64_t start_ns;
	uint32_t reason;
	int kind; /* 0 suspension, 1 GC */
} pinterval;

struct nt_pauses {
	pinterval open[PAUSE_OPEN_MAX];
	size_t nopen;
	nt_pause *list;
	size_t nlist, cap;
	nt_pauses_info info;
};

int nt_pauses_new(nt_pauses **out, nt_error *err)
{
	nt_error_clear(err);
	*out = calloc(1, sizeof **out);
	return *out ? 0 : nt_fail(err, NT_ENOMEM, NT_NO_OFFSET, "cannot allocate the pause list");
}

void nt_pauses_free(nt_pauses *ps)
{
	if (!ps)
		return;
	free(ps->list);
	free(ps);
}

static pinterval *find_open(nt_pauses *ps, uint64_t tid, int kind)
{
	for (size_t i = 0; i < ps->nopen; i++)
		if (ps->open[i].tid == tid && ps->open[i].kind == kind)
			return &ps->open[i];
	return NULL;
}

static void open_interval(nt_pauses *ps, uint64_t tid, int64_t t, uint32_t reason, int kind)
{
	pinterval *o = find_open(ps, tid, kind);
	if (!o) {
		if (ps->nopen >= PAUSE_OPEN_MAX)
			return;
		o = &ps->open[ps->nopen++];
	}
	o->tid = tid;
	o->start_ns = t;
	o->reason = reason;
	o->kind = kind;
}

int nt_pauses_is_gc_reason(uint32_t reason)
{
	return reason == 1 || reason == 6;
}

/* Closes the interval of tid; returns 0, or -1 when out of memory. */
static int close_interval(nt_pauses *ps, uint64_t tid, int64_t t, int kind)
{
	pinterval *o = find_open(ps, tid, kind);
	if (!o)
		return 0;
	pinterval v = *o;
	*o = ps->open[--ps->nopen];
	if (t < v.start_ns)
		return 0; /* out of order: not a pause */
	uint64_t len = (uint64_t)(t - v.start_ns);
	nt_pauses_info *in = &ps->info;
	if (kind == 1) {
		in->gcs++;
		in->gc_ns += len;
		return 0;
	}
	if (v.reason == 0) {
		in->sampler_suspensions++;
		in->sampler_ns += len;
		return 0;
	}
	if (!nt_pauses_is_gc_reason(v.reason)) {
		in->other_suspensions++;
		in->other_ns += len;
		return 0;
	}
	in->pauses++;
	in->pause_ns += len;
	if (ps->nlist >= NT_PAUSE_MAX)
		return 0;
	if (nt_grow((void **)&ps->list, &ps->cap, ps->nlist + 1, sizeof(nt_pause)))
		return -1;
	nt_pause *p = &ps->list[ps->nlist++];
	p->start_ns = v.start_ns;
	p->end_ns = t;
	p->tid = tid;
	p->reason = v.reason;
	return 0;
}

int nt_pauses_add_event(nt_pauses *ps, const nt_event *ev, uint32_t pointer_size)
{
	const nt_metadata *m = ev->meta;
	if (!m || !m->provider || strcmp(m->provider, NT_PROVIDER_RUNTIME) != 0)
		return 0;
	nt_value v;
	switch (m->event_id) {
	case NT_RT_GC_START:
		ps->info.gc_events = 1;
		open_interval(ps, ev->thread_id, ev->time_ns, 0, 1);
		return 1;
	case NT_RT_GC_END:
		ps->info.gc_events = 1;
		return close_interval(ps, ev->thread_id, ev->time_ns, 1) ? -1 : 1;
	case NT_RT_GC_SUSPEND_EE_BEGIN:
		ps->info.gc_events = 1;
		open_interval(ps, ev->thread_id, ev->time_ns,
			      nt_event_field(ev, pointer_size, "Reason", &v) && v.u <= UINT32_MAX
				      ? (uint32_t)v.u
				      : UINT32_MAX,
			      0);
		return 1;
	case NT_RT_GC_RESTART_EE_END:
		ps->info.gc_events = 1;
		return close_interval(ps, ev->thread_id, ev->time_ns, 0) ? -1 : 1;
	default:
		return 0;
	}
}

int nt_pauses_in_gc(const nt_pauses *ps)
{
	for (size_t i = 0; i < ps->nopen; i++)
		if (ps->open[i].kind == 0 && nt_pauses_is_gc_reason(ps->open[i].reason))
			return 1;
	return 0;
}

const nt_pauses_info *nt_pauses_result(nt_pauses *ps)
{
	ps->info.list = ps->list;
	ps->info.nlist = ps->nlist;
	return &ps->info;
}

uint64_t nt_pauses_overlap(const nt_pauses_info *in, const nt_gap *gaps, size_t ngaps)
{
	/* both lists are in time order and the pauses do not overlap one another (one GC at a
	 * time suspends the runtime): one merge pass */
	uint64_t sum = 0;
	size_t j = 0;
	for (size_t i = 0; i < ngaps; i++) {
		int64_t a = gaps[i].start_ns;
		int64_t b = a + (int64_t)(gaps[i].length_ns > INT64_MAX / 2 ? INT64_MAX / 2
									   : gaps[i].length_ns);
		while (j < in->nlist && in->list[j].end_ns <= a)
			j++;
		for (size_t k = j; k < in->nlist && in->list[k].start_ns < b; k++) {
			int64_t lo = in->list[k].start_ns > a ? in->list[k].start_ns : a;
			int64_t hi = in->list[k].end_ns < b ? in->list[k].end_ns : b;
			if (hi > lo)
				sum += (uint64_t)(hi - lo);
		}
	}
	return sum;
}
