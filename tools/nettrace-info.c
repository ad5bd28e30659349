/* SPDX-License-Identifier: MIT */
/* nettrace-info.c - summarise nettrace files (header, blocks, counts, samples, events per
 * provider) as text or JSON, or list their events one per line (--events).
 * Input: FILE... ("-" = stdin) through nt_reader; output: stdout; diagnostics: stderr.
 * Not here: option table -> --help, error lines and exit codes (common.c).
 * At ~1,300 lines this file is over the project's ~1,200: the summary it builds and its two
 * renderings (text, JSON) are kept side by side so that they stay in step; the summary
 * model is what would move out next (into the library, beside nt_reader_stats). */
#include "common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_LINES = OPT_PROFILE_LAST, OPT_NO_SYMBOLS };

static const tool_opt info_opts[] = {
	{"json", no_argument, 'j', NULL,
	 "print the summary as JSON (one object; an array for several files)"},
	{"events", no_argument, 'e', NULL, "list the events, one line each, in timestamp order"},
	{"stacks", no_argument, 's', NULL,
	 "with --events: also print each event's stack (leaf first)"},
	{"limit", required_argument, 'n', "N", "with --events: stop after N events"},
	{"lines", no_argument, OPT_LINES, NULL,
	 "also report the source-line coverage of managed frames and why frames lack lines"},
	TOOL_SYMBOLS_OPT,
	{"no-symbols", no_argument, OPT_NO_SYMBOLS, NULL,
	 "skip the symbol coverage (the read then only counts: about a third of the time)"},
	{"jobs", required_argument, OPT_JOBS, "N",
	 "threads of the read with symbols (1: one; default $NETTRACE_JOBS, else the CPUs)"},
	TOOL_STD_OPTS,
	{NULL, 0, 0, NULL, NULL},
};

typedef struct info_cfg {
	int json;           /* --json */
	int events;         /* --events */
	int stacks;         /* --stacks */
	int has_limit;      /* --limit given */
	uint64_t limit;     /* --limit N */
	int nfiles;         /* FILE operands (JSON: >1 -> array) */
	unsigned jobs;      /* threads of the read with symbols (profile_jobs()) */
	int lines;          /* --lines */
	profile_args pa;    /* --symbols, for --lines */
	int no_symbols;     /* --no-symbols */
} info_cfg;

/* ------------------------------------------------------------------ summary data */

/* One row of the per-provider table: events of one (provider, event id, version). */
typedef struct evrow {
	const char *provider;
	uint32_t id;
	uint32_t version;
	const char *name;   /* of the first metadata record with this key */
	size_t first;       /* index of that record (tie-break for a stable order) */
	uint64_t count;
} evrow;

/* One process of a machine-wide Universal trace (doc/format/universal-events.md). */
typedef struct procrow {
	uint64_t pid;
	char name[64];      /* from ProcessCreate / ExistingProcess, "" if none */
	uint64_t events;    /* all events of its threads */
	uint64_t cpu;       /* Universal.Events cpu: sum of Value (samples) */
	uint64_t cswitch;   /* Universal.Events cswitch events */
	uint64_t offcpu;    /* their Value: ticks off CPU */
	int seen;           /* the row is a process's (rows are by nt_event.process_index) */
} procrow;

/* A lost-event count of one capture thread. */
typedef struct lostrow {
	uint64_t thread_id;
	uint64_t lost;
} lostrow;

typedef struct summary {
	const char *file;         /* as given on the command line */
	nt_reader *r;             /* owns the strings below; freed by summary_free() */
	nt_trace_header hdr;
	nt_reader_stats st;
	uint64_t samples, by_type[4]; /* Error, External, Managed, other */
	size_t sample_threads;    /* sampled threads (the rate estimator's count) */
	size_t sampler_threads;   /* capture threads that wrote samples */
	evrow *rows;              /* sorted, count > 0 */
	size_t nrows;
	lostrow *lost;            /* capture threads with lost > 0, by thread id */
	size_t nlost;
	size_t capture_threads;   /* all capture threads */
	const char *warning;      /* truncation warning or NULL (reader's life) */
	uint64_t warning_offset;
	nt_rate *rate;            /* sampling-rate inference over the samples when no profile
				   reads them (--no-symbols); NULL: the profile's is the one */
	const nt_rate_info *ri;   /* the inferred rate (set once the read is done) */
	nt_rate_info rate_copy;   /* the profile's, which is freed before the summary is */
	nt_gap *gaps;             /* rate_copy's gaps */
	nt_pauses *pauses;        /* the runtime's GC pauses (pause.c) when no profile reads
				   the events (--no-symbols); NULL: the profile's */
	const nt_pauses_info *pi; /* the pauses (set once the read is done) */
	nt_pauses_info pi_copy;   /* the profile's, which is freed before the summary is */
	nt_pause *pi_list;        /* pi_copy's list */
	nt_pause *plist;          /* their list in time order (summary_finish) */
	uint64_t gap_gc_ns;       /* sampling gaps covered by GC pauses */
	int have_symbols;         /* symbols: from a profile of the file (not stdin) */
	nt_symbol_coverage symbols;
	uint64_t lost_samples;    /* lost events of the sampler (capture) threads */
	/* libnettrace-sampler's own account of the recording (doc/format/sampler-events.md):
	 * the first SessionSettings and the last SamplerStats */
	struct {
		int have;
		uint64_t interval_ns, seed;
		char schedule[16], mode[16], backend[16];
	} set;
	struct {
		int have;
		uint64_t samples, dropped, late, missed;
		double hz;
	} stat;
	/* Universal traces: processes by pid (index + 1 in procs), sorted by pid at the end */
	int universal;
	procrow *procs;
	size_t nprocs, proccap;
} summary;

static void summary_free(summary *s)
{
	free(s->procs);
	free(s->rows);
	free(s->lost);
	nt_rate_free(s->rate);
	free(s->gaps);
	nt_pauses_free(s->pauses);
	free(s->pi_list);
	free(s->plist);
	nt_reader_free(s->r);
}

static int evrow_cmp(const void *a, const void *b)
{
	const evrow *x = a, *y = b;
	int c = strcmp(x->provider, y->provider);
	if (c)
		return c;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->version != y->version)
		return x->version < y->version ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int lostrow_cmp(const void *a, const void *b)
{
	const lostrow *x = a, *y = b;
	return x->thread_id < y->thread_id ? -1 : x->thread_id > y->thread_id;
}

/* Builds s->rows (merged by key, sorted, zero counts dropped) and s->lost once the reader
 * reached the end. Returns 0 or -1 when out of memory. */
static int procrow_cmp(const void *a, const void *b)
{
	const procrow *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int summary_finish(summary *s, const nt_reader *r)
{
	size_t nmeta = nt_reader_metadata_count(r);
	s->rows = calloc(nmeta ? nmeta : 1, sizeof *s->rows);
	if (!s->rows)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < nmeta; i++) {
		const nt_metadata *m = nt_reader_metadata_at(r, i);
		if (!m)
			continue;
		s->rows[n++] = (evrow){m->provider ? m->provider : "", m->event_id, m->version,
				       m->name ? m->name : "", i,
				       nt_reader_metadata_events(r, i)};
	}
	qsort(s->rows, n, sizeof *s->rows, evrow_cmp);
	size_t np = 0; /* the rows of processes, by pid: rows are not looked up after this */
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].seen)
			s->procs[np++] = s->procs[i];
	s->nprocs = np;
	if (np)
		qsort(s->procs, np, sizeof *s->procs, procrow_cmp);
	/* Several records may share (provider, id, version): add their counts to the first. */
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && strcmp(s->rows[k - 1].provider, s->rows[i].provider) == 0 &&
		    s->rows[k - 1].id == s->rows[i].id &&
		    s->rows[k - 1].version == s->rows[i].version)
			s->rows[k - 1].count += s->rows[i].count;
		else
			s->rows[k++] = s->rows[i];
	}
	n = 0;
	for (size_t i = 0; i < k; i++)
		if (s->rows[i].count)
			s->rows[n++] = s->rows[i];
	s->nrows = n;

	uint64_t tid, lost;
	size_t nth = 0;
	while (nt_reader_lost(r, nth, &tid, &lost) == 1)
		nth++;
	s->capture_threads = nth;
	s->lost = calloc(nth ? nth : 1, sizeof *s->lost);
	if (!s->lost)
		return -1;
	for (size_t i = 0; i < nth && nt_reader_lost(r, i, &tid, &lost) == 1; i++) {
		if (lost)
			s->lost[s->nlost++] = (lostrow){tid, lost};
		if (nt_reader_capture_samples(r, i)) {
			s->sampler_threads++;
			s->lost_samples += lost;
		}
	}
	qsort(s->lost, s->nlost, sizeof *s->lost, lostrow_cmp);
	s->warning = nt_reader_warning(r, &s->warning_offset);
	s->sample_threads = (size_t)s->ri->threads;
	return 0;
}

/* Adds one event to the counters. Returns 0 or -1 when out of memory. */
static uint64_t field_u64(const nt_event *ev, uint32_t psz, const char *name)
{
	nt_value v;
	return nt_event_field(ev, psz, name, &v) == 1 ? v.u : 0;
}

static void field_str(const nt_event *ev, uint32_t psz, const char *name, char *buf, size_t n)
{
	nt_value v;
	buf[0] = 0;
	if (nt_event_field(ev, psz, name, &v) == 1 && v.raw)
		nt_utf16z_to_utf8(v.raw, v.raw_len, buf, n);
	for (char *q = buf; *q; q++) /* printed bare in text and JSON: keep it a plain word */
		if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-'))
			*q = '?';
}

/* The sampler's settings (the first) and statistics (the last: they are cumulative). */
static void sampler_event(summary *s, const nt_event *ev)
{
	uint32_t psz = s->hdr.pointer_size;
	if (ev->meta->event_id == NT_NTS_SESSION_SETTINGS && !s->set.have) {
		s->set.have = 1;
		s->set.interval_ns = field_u64(ev, psz, "IntervalNs");
		s->set.seed = field_u64(ev, psz, "Seed");
		field_str(ev, psz, "Schedule", s->set.schedule, sizeof s->set.schedule);
		field_str(ev, psz, "Mode", s->set.mode, sizeof s->set.mode);
		field_str(ev, psz, "Backend", s->set.backend, sizeof s->set.backend); /* may be absent */
	} else if (ev->meta->event_id == NT_NTS_SAMPLER_STATS) {
		nt_value v;
		s->stat.have = 1;
		s->stat.samples = field_u64(ev, psz, "Samples");
		s->stat.dropped = field_u64(ev, psz, "Dropped");
		s->stat.late = field_u64(ev, psz, "Late");
		s->stat.missed = field_u64(ev, psz, "Missed");
		s->stat.hz = nt_event_field(ev, psz, "RealizedHz", &v) == 1 && v.d == v.d ? v.d : 0;
	}
}

/* The process row of ev in a Universal trace, created when new (rows are by the reader's
 * process index: no map); NULL when out of memory. */
static procrow *proc_row(summary *s, const nt_event *ev)
{
	size_t i = ev->process_index;
	if (i >= s->nprocs) {
		if (i >= s->proccap) {
			size_t nc = s->proccap ? s->proccap * 2 : 16;
			if (nc <= i)
				nc = i + 1;
			procrow *np = realloc(s->procs, nc * sizeof *np);
			if (!np)
				return NULL;
			s->procs = np;
			s->proccap = nc;
		}
		memset(&s->procs[s->nprocs], 0, (i + 1 - s->nprocs) * sizeof *s->procs);
		s->nprocs = i + 1;
	}
	procrow *p = &s->procs[i];
	if (!p->seen) {
		p->seen = 1;
		p->pid = ev->process_id;
	}
	return p;
}

/* Universal.System / Universal.Events: per-process counts and names. */
static int universal_event(summary *s, const nt_event *ev, int system)
{
	s->universal = 1;
	procrow *p = proc_row(s, ev);
	if (!p)
		return -1;
	nt_value v;
	uint32_t psz = s->hdr.pointer_size;
	if (system) {
		if ((ev->meta->event_id == 0 || ev->meta->event_id == 1) &&
		    nt_event_field(ev, psz, "Name", &v) == 1 && v.type == NT_TYPE_UTF8_STRING16) {
			size_t n = v.raw_len < sizeof p->name - 1 ? v.raw_len : sizeof p->name - 1;
			memcpy(p->name, v.raw, n);
			p->name[n] = '\0';
		}
		return 0;
	}
	if (!ev->meta->name || nt_event_field(ev, psz, "Value", &v) != 1)
		return 0;
	if (strcmp(ev->meta->name, "cpu") == 0) {
		p->cpu += v.u;
	} else if (strcmp(ev->meta->name, "cswitch") == 0) {
		p->cswitch++;
		p->offcpu += v.u;
	}
	return 0;
}

/* nt_event_is_sample() from the record's sample_kind, without a call per event (most events
 * of a profile are samples): 1 with the sample's type in *type. */
static inline int event_sample(const nt_event *ev, uint32_t *type)
{
	uint32_t kind = ev->meta ? ev->meta->sample_kind : NT_SAMPLE_KIND_NONE;
	if (kind == NT_SAMPLE_KIND_NONE)
		return 0;
	const uint8_t *p = ev->payload;
	uint32_t t = ev->payload_len >= 4 ? (uint32_t)p[0] | (uint32_t)p[1] << 8 |
						    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
					  : 0;
	*type = t == NT_SAMPLE_MANAGED && kind == NT_SAMPLE_KIND_NATIVE ? NT_SAMPLE_EXTERNAL : t;
	return 1;
}

static int summary_add(summary *s, const nt_event *ev)
{
	uint32_t type;
	if (event_sample(ev, &type)) {
		s->samples++;
		s->by_type[type < 3 ? type : 3]++;
		/* file order is timestamp order within a capture thread, which is all the
		 * estimator needs (it groups rounds per sampler thread); a profile that reads
		 * the same events runs the same estimator on them (handle_sample()) */
		if (s->rate)
			nt_rate_add(s->rate, ev->timestamp, ev->thread_id, ev->capture_thread_id);
	} else if (ev->meta && ev->meta->provider &&
		   strcmp(ev->meta->provider, NT_PROVIDER_NTSAMPLER) == 0) {
		sampler_event(s, ev);
	} else if (ev->meta && ev->meta->provider &&
		   (strcmp(ev->meta->provider, NT_PROVIDER_UNIVERSAL_EVENTS) == 0 ||
		    strcmp(ev->meta->provider, NT_PROVIDER_UNIVERSAL_SYSTEM) == 0)) {
		if (universal_event(s, ev, ev->meta->provider[10] == 'S'))
			return -1;
	} else if (s->pauses && nt_pauses_add_event(s->pauses, ev, s->hdr.pointer_size) < 0) {
		return -1;
	}
	if (s->universal) {
		procrow *p = proc_row(s, ev);
		if (!p)
			return -1;
		p->events++;
	}
	return 0;
}

static int pause_cmp(const void *a, const void *b)
{
	const nt_pause *x = a, *y = b;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The GC pauses in time order (the file order of the events is per capture thread) and
 * how much of the sampling gaps they cover. Returns 0 or -1 (out of memory). */
static int pauses_finish(summary *s)
{
	const nt_pauses_info *pi = s->pi;
	s->plist = malloc((pi->nlist ? pi->nlist : 1) * sizeof *s->plist);
	if (!s->plist)
		return -1;
	if (pi->nlist)
		memcpy(s->plist, pi->list, pi->nlist * sizeof *s->plist);
	qsort(s->plist, pi->nlist, sizeof *s->plist, pause_cmp);
	nt_pauses_info sorted = *pi;
	sorted.list = s->plist;
	const nt_rate_info *ri = s->ri;
	s->gap_gc_ns = nt_pauses_overlap(&sorted, ri->gaps, ri->ngaps);
	return 0;
}

/* Fills err for summary_add()'s failure at the event at offset off: NT_ENOMEM. */
static int summary_oom(nt_error *err, uint64_t off)
{
	err->code = NT_ENOMEM;
	err->offset = off;
	snprintf(err->msg, sizeof err->msg, "out of memory");
	return NT_ENOMEM;
}

/* The profile's read_fn for collect(): every event of the one read goes through the
 * summary first. */
static int summary_hook(void *ctx, uint32_t session, const nt_trace_header *h,
			const nt_event *ev, nt_error *err)
{
	(void)session;
	(void)h;
	return summary_add(ctx, ev) ? summary_oom(err, ev->offset) : 0;
}

/* A chunk's summary, read on the profile's second thread (nt_profile_opts.chunk_begin):
 * the counts of summary_add(), which chunk_end() adds to the file's in file order. It
 * reads only the file's header. */
static void *summary_chunk_begin(void *ctx)
{
	const summary *s = ctx;
	summary *c = calloc(1, sizeof *c);
	if (c)
		c->hdr = s->hdr;
	return c;
}

static int summary_chunk_end(void *ctx, void *chunk, int merge, nt_error *err)
{
	summary *s = ctx, *c = chunk;
	int rc = 0;
	if (merge && c->nprocs) {
		/* the profile reads a chunk with Universal events again in the stream */
		rc = err->code = NT_EUNSUPPORTED;
		err->offset = NT_NO_OFFSET;
		snprintf(err->msg, sizeof err->msg,
			 "Universal events in a chunk read on the second thread");
	} else if (merge) {
		s->samples += c->samples;
		for (int i = 0; i < 4; i++)
			s->by_type[i] += c->by_type[i];
		/* the chunk comes after everything s holds: its settings count if s has none
		 * yet, its statistics are the later ones */
		if (c->set.have && !s->set.have)
			s->set = c->set;
		if (c->stat.have)
			s->stat = c->stat;
	}
	free(c->procs);
	free(c);
	return rc;
}

/* ------------------------------------------------------------------ formatting helpers */

/* a * b / c rounded to nearest, saturating at UINT64_MAX; c > 0. */
static uint64_t muldiv_u64(uint64_t a, uint64_t b, uint64_t c)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 p = (unsigned __int128)a * b + c / 2;
	p /= c;
	return p > UINT64_MAX ? UINT64_MAX : (uint64_t)p;
#else
	long double v = (long double)a * (long double)b / (long double)c + 0.5L;
	return v >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)v;
#endif
}

static uint64_t duration_ns(const summary *s)
{
	if (!s->st.events || s->st.last_timestamp < s->st.first_timestamp)
		return 0;
	return muldiv_u64(s->st.last_timestamp - s->st.first_timestamp, 1000000000u,
			  s->hdr.qpc_frequency ? s->hdr.qpc_frequency : 1);
}

/* "2019-06-15T23:56:59.754Z" from the SYSTEMTIME fields (year, month, dow, day, h, m, s, ms). */
static void format_utc(const nt_trace_header *h, char *buf, size_t size)
{
	const uint16_t *t = h->sync_time_utc;
	snprintf(buf, size, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", t[0], t[1], t[3], t[4], t[5],
		 t[6], t[7]);
}

/* Writes s as a JSON string (the library's escaper: always valid UTF-8 JSON). */
static void json_str(FILE *fp, const char *s)
{
	nt_sink k = nt_sink_stdio(fp);
	nt_json_write_string(&k, s, s ? strlen(s) : 0);
}

/* Writes s for a terminal: control characters from the file become '?', so a crafted
 * provider or event name cannot move the cursor or change colours. */
static void text_str(FILE *fp, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		putc(c < 0x20 || c == 0x7f ? '?' : c, fp);
	}
}

/* ------------------------------------------------------------------ JSON summary */

/* The "rate" object: the sampling interval inferred from the samples (nt_rate). */
static void print_rate_json(const summary *s, const char *ind)
{
	const nt_rate_info *ri = s->ri;
	FILE *o = stdout;
	fprintf(o, "%s  \"rate\": {\"declared_interval_ns\": %" PRIu64, ind,
		ri->declared_interval_ns);
	if (ri->rounds >= 2)
		fprintf(o,
			", \"inferred_interval_ns\": %.1f, \"median_interval_ns\": %.1f"
			", \"p10_interval_ns\": %.1f, \"p90_interval_ns\": %.1f, \"cv\": %.4f",
			ri->inferred_interval_ns, ri->median_interval_ns, ri->p10_interval_ns,
			ri->p90_interval_ns, ri->cv);
	else
		fprintf(o, ", \"inferred_interval_ns\": null, \"median_interval_ns\": null"
			   ", \"p10_interval_ns\": null, \"p90_interval_ns\": null, \"cv\": null");
	fprintf(o, ", \"schedule\": \"%s\", \"samples\": %" PRIu64 ", \"rounds\": %" PRIu64
		   ", \"threads\": %" PRIu64 ", \"per_thread_median_ns\": %.1f"
		   ", \"lost_samples\": %" PRIu64 ", \"gaps_total_ns\": %" PRIu64
		   ", \"gaps_count\": %" PRIu64 ", \"gaps_gc_ns\": %" PRIu64 ", \"gaps\": [",
		ri->schedule, ri->samples, ri->rounds, ri->threads, ri->per_thread_median_ns,
		s->lost_samples, ri->gaps_total_ns, ri->gaps_count, s->gap_gc_ns);
	for (size_t i = 0; i < ri->ngaps; i++)
		fprintf(o, "%s{\"start_ns\": %" PRId64 ", \"length_ns\": %" PRIu64 "}", i ? ", " : "",
			ri->gaps[i].start_ns, ri->gaps[i].length_ns);
	fprintf(o, "]},\n");
	const nt_pauses_info *pi = s->pi;
	fprintf(o, "%s  \"gc\": {\"events\": %s, \"gcs\": %" PRIu64 ", \"gc_ns\": %" PRIu64
		   ", \"pauses\": %" PRIu64 ", \"pause_ns\": %" PRIu64
		   ", \"sampler_suspensions\": %" PRIu64 ", \"sampler_suspension_ns\": %" PRIu64
		   ", \"other_suspensions\": %" PRIu64 ", \"other_suspension_ns\": %" PRIu64 "},\n",
		ind, pi->gc_events ? "true" : "false", pi->gcs, pi->gc_ns, pi->pauses, pi->pause_ns,
		pi->sampler_suspensions, pi->sampler_ns, pi->other_suspensions, pi->other_ns);
	if (s->have_symbols) {
		const nt_symbol_coverage *c = &s->symbols;
		fprintf(o, "%s  \"symbols\": {\"frames\": %" PRIu64 ", \"resolved\": %" PRIu64
			   ", \"no_method_events\": %" PRIu64 ", \"no_method\": %" PRIu64
			   ", \"no_module\": %" PRIu64 ", \"module_missing\": %" PRIu64
			   ", \"build_id_mismatch\": %" PRIu64 ", \"no_symbols\": %" PRIu64 "},\n",
			ind, c->frames, c->resolved, c->no_method_events, c->no_method, c->no_module,
			c->module_missing, c->build_id_mismatch, c->no_symbols);
	}
}

typedef struct lines_report lines_report;
static void print_lines_json(const lines_report *lr, const char *ind);

/* Rows '"name": value,' of a JSON object, one a line, each after ind and two spaces. */
typedef struct json_u64 {
	const char *name;
	uint64_t v;
} json_u64;

static void json_u64_rows(FILE *o, const char *ind, const json_u64 *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%s  \"%s\": %" PRIu64 ",\n", ind, rows[i].name, rows[i].v);
}

static void print_json(const summary *s, const char *ind, const lines_report *lr)
{
	const nt_trace_header *h = &s->hdr;
	const nt_reader_stats *st = &s->st;
	char utc[64];
	format_utc(h, utc, sizeof utc);
	FILE *o = stdout;

	fprintf(o, "%s{\n", ind);
	fprintf(o, "%s  \"file\": ", ind);
	json_str(o, s->file);
	fprintf(o, ",\n");
	const json_u64 head[] = {
		{"version", h->format_version}, {"minor_version", h->minor_version},
		{"trace_object_version", h->trace_object_version}, {"pointer_size", h->pointer_size},
		{"process_id", h->process_id}, {"processors", h->processors},
		{"qpc_frequency", h->qpc_frequency}, {"sync_qpc", h->sync_qpc}};
	json_u64_rows(o, ind, head, sizeof head / sizeof head[0]);
	fprintf(o, "%s  \"sync_time_utc\": \"%s\",\n", ind, utc);
	fprintf(o, "%s  \"expected_sampling_interval_ns\": %" PRIu32 ",\n", ind,
		h->expected_sampling_ns);
	if (st->events) {
		fprintf(o, "%s  \"first_timestamp\": %" PRIu64 ",\n", ind, st->first_timestamp);
		fprintf(o, "%s  \"last_timestamp\": %" PRIu64 ",\n", ind, st->last_timestamp);
		fprintf(o, "%s  \"duration_ns\": %" PRIu64 ",\n", ind, duration_ns(s));
	} else {
		fprintf(o, "%s  \"first_timestamp\": null,\n", ind);
		fprintf(o, "%s  \"last_timestamp\": null,\n", ind);
		fprintf(o, "%s  \"duration_ns\": null,\n", ind);
	}
	fprintf(o, "%s  \"bytes\": %" PRIu64 ",\n", ind, st->bytes);
	fprintf(o,
		"%s  \"blocks\": {\"event\": %" PRIu64 ", \"metadata\": %" PRIu64
		", \"stack\": %" PRIu64 ", \"sequence_point\": %" PRIu64 ", \"other\": %" PRIu64
		"},\n",
		ind, st->blocks_event, st->blocks_metadata, st->blocks_stack, st->blocks_sp,
		st->blocks_other);
	const json_u64 counts[] = {
		{"metadata_records", st->metadata_records}, {"events", st->events},
		{"sorted_events", st->events_sorted}, {"stacks", st->stacks},
		{"max_stack_depth", st->max_stack_depth}, {"missing_stacks", st->missing_stacks},
		{"negative_timestamp_deltas", st->negative_ts_deltas}};
	json_u64_rows(o, ind, counts, sizeof counts / sizeof counts[0]);
	fprintf(o,
		"%s  \"samples\": {\"total\": %" PRIu64 ", \"error\": %" PRIu64
		", \"external\": %" PRIu64 ", \"managed\": %" PRIu64 ", \"other\": %" PRIu64
		", \"threads\": %zu, \"capture_threads\": %zu},\n",
		ind, s->samples, s->by_type[0], s->by_type[1], s->by_type[2], s->by_type[3],
		s->sample_threads, s->sampler_threads);
	fprintf(o, "%s  \"capture_threads\": %zu,\n", ind, s->capture_threads);
	fprintf(o, "%s  \"lost_events\": {\"total\": %" PRIu64 ", \"by_capture_thread\": [", ind,
		st->lost_events);
	for (size_t i = 0; i < s->nlost; i++)
		fprintf(o, "%s\n%s    {\"thread_id\": %" PRIu64 ", \"lost\": %" PRIu64 "}",
			i ? "," : "", ind, s->lost[i].thread_id, s->lost[i].lost);
	if (s->nlost)
		fprintf(o, "\n%s  ", ind);
	fprintf(o, "]},\n");
	print_rate_json(s, ind);
	if (s->set.have || s->stat.have) {
		/* libnettrace-sampler's own account (absent from other traces) */
		fprintf(stdout, "%s  \"sampler\": {", ind);
		const char *sep = "";
		if (s->set.have) {
			fprintf(stdout, "\"mode\": \"%s\", \"schedule\": \"%s\", \"interval_ns\": %" PRIu64
				", \"seed\": %" PRIu64, s->set.mode, s->set.schedule, s->set.interval_ns,
				s->set.seed);
			if (s->set.backend[0])
				fprintf(stdout, ", \"backend\": \"%s\"", s->set.backend);
			sep = ", ";
		}
		if (s->stat.have)
			fprintf(stdout, "%s\"samples\": %" PRIu64 ", \"dropped\": %" PRIu64
				", \"late\": %" PRIu64 ", \"missed\": %" PRIu64
				", \"realized_hz\": %.3f", sep, s->stat.samples, s->stat.dropped, s->stat.late,
				s->stat.missed, s->stat.hz);
		fprintf(stdout, "},\n");
	}
	fprintf(o, "%s  \"truncated\": %s,\n", ind, st->truncated ? "true" : "false");
	if (st->truncated)
		fprintf(o, "%s  \"truncated_at\": %" PRIu64 ",\n", ind, st->truncated_at);
	else
		fprintf(o, "%s  \"truncated_at\": null,\n", ind);
	fprintf(o, "%s  \"warning\": ", ind);
	if (s->warning)
		json_str(o, s->warning);
	else
		fputs("null", o);
	fprintf(o, ",\n%s  \"providers\": [", ind);
	for (size_t i = 0; i < s->nrows; i++) {
		const evrow *e = &s->rows[i];
		int first_of_provider = i == 0 || strcmp(s->rows[i - 1].provider, e->provider) != 0;
		int last_of_provider =
			i + 1 == s->nrows || strcmp(s->rows[i + 1].provider, e->provider) != 0;
		if (first_of_provider) {
			fprintf(o, "%s\n%s    {\"name\": ", i ? "," : "", ind);
			json_str(o, e->provider);
			fprintf(o, ", \"events\": [");
		}
		fprintf(o, "%s\n%s      {\"id\": %" PRIu32 ", \"version\": %" PRIu32 ", \"name\": ",
			first_of_provider ? "" : ",", ind, e->id, e->version);
		json_str(o, e->name);
		fprintf(o, ", \"count\": %" PRIu64 "}", e->count);
		if (last_of_provider)
			fprintf(o, "\n%s    ]}", ind);
	}
	if (s->nrows)
		fprintf(o, "\n%s  ", ind);
	fprintf(o, "]");
	if (lr)
		print_lines_json(lr, ind);
	if (s->universal) {
		fprintf(o, ",\n%s  \"processes\": [", ind);
		for (size_t i = 0; i < s->nprocs; i++) {
			const procrow *p = &s->procs[i];
			fprintf(o, "%s\n%s    {\"pid\": %" PRIu64 ", \"name\": ", i ? "," : "", ind,
				p->pid);
			json_str(o, p->name);
			fprintf(o, ", \"events\": %" PRIu64 ", \"cpu\": %" PRIu64
				   ", \"cswitch\": %" PRIu64 ", \"offcpu_ticks\": %" PRIu64 "}",
				p->events, p->cpu, p->cswitch, p->offcpu);
		}
		if (s->nprocs)
			fprintf(o, "\n%s  ]", ind);
		else
			fprintf(o, "]");
	}
	fprintf(o, "\n%s}", ind);
}

/* ------------------------------------------------------------------ text summary */

static void print_text(const summary *s)
{
	const nt_trace_header *h = &s->hdr;
	const nt_reader_stats *st = &s->st;
	char utc[64];
	format_utc(h, utc, sizeof utc);

	printf("File:              %s\n", s->file);
	if (h->format_version == 6)
		printf("Format:            nettrace V6.%" PRIu32 "\n", h->minor_version);
	else
		printf("Format:            nettrace V4/V5 (FastSerialization, Trace object version "
		       "%" PRIu32 ")\n",
		       h->trace_object_version);
	printf("Bytes read:        %" PRIu64 "\n", st->bytes);
	printf("Process:           pid %" PRIu32 ", %" PRIu32 " processors, %" PRIu32
	       "-byte pointers\n",
	       h->process_id, h->processors, h->pointer_size);
	printf("Sync time:         %s (QPC %" PRIu64 ", %" PRIu64 " ticks/s)\n", utc, h->sync_qpc,
	       h->qpc_frequency);
	printf("Sampling interval: %" PRIu32 " ns (declared)\n", h->expected_sampling_ns);
	if (st->events) {
		uint64_t d = duration_ns(s);
		printf("Duration:          %" PRIu64 ".%09" PRIu64 " s (first to last event)\n",
		       d / 1000000000u, d % 1000000000u);
	} else {
		printf("Duration:          - (no events)\n");
	}
	printf("Blocks:            %" PRIu64 " event, %" PRIu64 " metadata, %" PRIu64
	       " stack, %" PRIu64 " sequence point",
	       st->blocks_event, st->blocks_metadata, st->blocks_stack, st->blocks_sp);
	if (st->blocks_other)
		printf(", %" PRIu64 " other", st->blocks_other);
	printf("\n");
	printf("Metadata records:  %" PRIu64 "\n", st->metadata_records);
	printf("Events:            %" PRIu64 " (%" PRIu64 " sorted)\n", st->events,
	       st->events_sorted);
	printf("Stacks:            %" PRIu64 " defined, max depth %" PRIu32, st->stacks,
	       st->max_stack_depth);
	if (st->missing_stacks)
		printf(", %" PRIu64 " events with an undefined stack", st->missing_stacks);
	printf("\n");
	printf("Samples:           %" PRIu64 " (error %" PRIu64 ", external %" PRIu64
	       ", managed %" PRIu64,
	       s->samples, s->by_type[0], s->by_type[1], s->by_type[2]);
	if (s->by_type[3])
		printf(", other %" PRIu64, s->by_type[3]);
	printf(") on %zu thread%s, %zu sampler thread%s\n", s->sample_threads,
	       s->sample_threads == 1 ? "" : "s", s->sampler_threads,
	       s->sampler_threads == 1 ? "" : "s");
	printf("Capture threads:   %zu\n", s->capture_threads);
	printf("Lost events:       %" PRIu64, st->lost_events);
	for (size_t i = 0; i < s->nlost; i++)
		printf("%s%" PRIu64 " on thread %" PRIu64, i ? ", " : " (", s->lost[i].lost,
		       s->lost[i].thread_id);
	printf("%s\n", s->nlost ? ")" : "");
	const nt_rate_info *ri = s->ri;
	if (ri->rounds >= 2) {
		printf("Sampling rate:     inferred %.3f ms (median %.3f, p10 %.3f, p90 %.3f, cv %.2f, "
		       "%s) from %" PRIu64 " rounds; declared %.3f ms\n",
		       ri->inferred_interval_ns / 1e6, ri->median_interval_ns / 1e6,
		       ri->p10_interval_ns / 1e6, ri->p90_interval_ns / 1e6, ri->cv, ri->schedule,
		       ri->rounds, (double)ri->declared_interval_ns / 1e6);
		if (ri->ngaps) {
			const nt_pauses_info *pi = s->pi;
			printf("Sampling gaps:     %" PRIu64 " pause%s, %.3f s in all", ri->gaps_count,
			       ri->gaps_count == 1 ? "" : "s", (double)ri->gaps_total_ns / 1e9);
			if (pi->pauses)
				printf(", of which %.3f s in GC pauses, %.3f s unexplained",
				       (double)s->gap_gc_ns / 1e9,
				       (double)(ri->gaps_total_ns > s->gap_gc_ns
							? ri->gaps_total_ns - s->gap_gc_ns
							: 0) / 1e9);
			else
				printf(", unexplained (%s)", pi->gc_events ? "no GC pause in them"
									  : "no GC events in the trace");
			printf(":");
			for (size_t i = 0; i < ri->ngaps && i < 5; i++)
				printf(" %.3f s at %.3f s%s", (double)ri->gaps[i].length_ns / 1e9,
				       (double)ri->gaps[i].start_ns / 1e9, i + 1 < ri->ngaps ? "," : "");
			printf("%s\n", ri->ngaps > 5 ? " ..." : "");
		}
	} else {
		printf("Sampling rate:     - (fewer than 2 sampling rounds); declared %.3f ms\n",
		       (double)ri->declared_interval_ns / 1e6);
	}
	const nt_pauses_info *pi = s->pi;
	if (pi->gc_events) {
		printf("GC:                %" PRIu64 " GC%s, %.3f s (GCStart..GCEnd); %" PRIu64
		       " pause%s, %.3f s (threads suspended: GCSuspendEEBegin..GCRestartEEEnd)",
		       pi->gcs, pi->gcs == 1 ? "" : "s", (double)pi->gc_ns / 1e9, pi->pauses,
		       pi->pauses == 1 ? "" : "s", (double)pi->pause_ns / 1e9);
		if (pi->sampler_suspensions)
			printf("; sampler suspensions %" PRIu64 ", %.3f s", pi->sampler_suspensions,
			       (double)pi->sampler_ns / 1e9);
		if (pi->other_suspensions)
			printf("; other suspensions %" PRIu64 ", %.3f s", pi->other_suspensions,
			       (double)pi->other_ns / 1e9);
		printf("\n");
	}
	if (s->have_symbols && s->symbols.frames) {
		const nt_symbol_coverage *c = &s->symbols;
		double n = (double)c->frames;
		printf("Symbols:           %.1f%% of %" PRIu64 " sample frames resolved", 100.0 * (double)c->resolved / n,
		       c->frames);
		static const char *const why[] = {
			"no method events (no rundown or JIT events in the trace)",
			"no managed method covers the address (native code without symbols, or a missing JIT/rundown event)",
			"in no mapped module", "module file not found", "module build id mismatch",
			"no symbols in the module"};
		uint64_t k[] = {c->no_method_events, c->no_method, c->no_module, c->module_missing,
				c->build_id_mismatch, c->no_symbols};
		int first = 1;
		for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
			if (!k[i])
				continue;
			double pc = 100.0 * (double)k[i] / n;
			if (pc < 0.05)
				printf("%s<0.1%% %s", first ? "; unresolved: " : ", ", why[i]);
			else
				printf("%s%.1f%% %s", first ? "; unresolved: " : ", ", pc, why[i]);
			first = 0;
		}
		printf("\n");
	}
	if (s->set.have || s->stat.have) {
		printf("Sampler:           libnettrace-sampler");
		if (s->set.have)
			printf(", %s mode, %s schedule every %.3f ms (seed %" PRIu64 ")",
			       s->set.mode[0] ? s->set.mode : "?",
			       s->set.schedule[0] ? s->set.schedule : "?",
			       (double)s->set.interval_ns / 1e6, s->set.seed);
		if (s->set.have && s->set.backend[0])
			printf(", %s backend", s->set.backend);
		if (s->stat.have)
			printf(": %" PRIu64 " samples, %" PRIu64 " dropped, %" PRIu64 " late, %" PRIu64
			       " missed, %.1f rounds/s", s->stat.samples, s->stat.dropped, s->stat.late,
			       s->stat.missed, s->stat.hz);
		printf("\n");
	}
	if (st->truncated)
		printf("Truncated:         yes, at byte %" PRIu64
		       " (the incomplete part is not counted)\n",
		       st->truncated_at);
	else
		printf("Truncated:         no\n");

	if (!s->nrows)
		return;
	/* Provider table: a provider line with its total, then one line per (id, version). */
	printf("\nEvents by provider:\n");
	printf("  %10s  %6s  %4s  %s\n", "count", "id", "ver", "name");
	for (size_t i = 0; i < s->nrows; i++) {
		const evrow *e = &s->rows[i];
		if (i == 0 || strcmp(s->rows[i - 1].provider, e->provider) != 0) {
			uint64_t total = 0;
			for (size_t j = i;
			     j < s->nrows && strcmp(s->rows[j].provider, e->provider) == 0; j++)
				total += s->rows[j].count;
			printf("  %10" PRIu64 "  ", total);
			text_str(stdout, e->provider[0] ? e->provider : "(no name)");
			printf("\n");
		}
		printf("  %10" PRIu64 "  %6" PRIu32 "  %4" PRIu32 "    ", e->count, e->id,
		       e->version);
		text_str(stdout, e->name[0] ? e->name : "-");
		printf("\n");
	}
	if (!s->universal)
		return;
	/* Machine-wide Universal traces: one line per process. */
	printf("\nProcesses (Universal events):\n");
	printf("  %10s  %10s  %10s  %10s  %14s  %s\n", "pid", "events", "cpu", "cswitch",
	       "off-CPU ms", "name");
	double tick_ms = s->hdr.qpc_frequency ? 1000.0 / (double)s->hdr.qpc_frequency : 0;
	for (size_t i = 0; i < s->nprocs; i++) {
		const procrow *p = &s->procs[i];
		printf("  %10" PRIu64 "  %10" PRIu64 "  %10" PRIu64 "  %10" PRIu64 "  %14.3f  ",
		       p->pid, p->events, p->cpu, p->cswitch, (double)p->offcpu * tick_ms);
		text_str(stdout, p->name[0] ? p->name : "-");
		printf("\n");
	}
}

/* ------------------------------------------------------------------ --lines */

/* Source lines of the managed frames: a profile of the file (all samples) resolves them. */
struct lines_report {
	nt_profile *p;
	nt_managed_lines ml;
};

static const char *const status_key[NT_MANAGED_NSTATUS] = {
	"line", "no_method", "no_il_map", "pdb_not_found", "pdb_mismatch", "bad_pdb",
	"no_sequence_point", "unused",
};

static uint64_t sum_status(const uint64_t *v)
{
	uint64_t n = 0;
	for (int i = 0; i < NT_MANAGED_NSTATUS; i++)
		n += v[i];
	return n;
}

static void print_lines_json(const lines_report *lr, const char *ind)
{
	FILE *o = stdout;
	const nt_managed_lines *m = &lr->ml;
	fprintf(o, ",\n%s  \"managed_lines\": {\"il_maps\": %" PRIu64 ", \"code_versions\": %" PRIu64,
		ind, m->il_maps, m->code_versions);
	for (int k = 0; k < 3; k++) {
		const uint64_t *v = k == 2 ? m->frames : k ? m->pdb_leaf : m->leaf;
		fprintf(o, ",\n%s    \"%s\": {\"total\": %" PRIu64, ind,
			k == 2 ? "frames" : k ? "samples_with_pdb" : "samples", sum_status(v));
		for (int i = 0; i < NT_MANAGED_UNUSED; i++)
			fprintf(o, ", \"%s\": %" PRIu64, status_key[i], v[i]);
		fprintf(o, "}");
	}
	fprintf(o, ",\n%s    \"modules\": [", ind);
	int first = 1;
	for (size_t si = 0; si < nt_profile_session_count(lr->p); si++)
		for (size_t i = 0; i < nt_profile_managed_module_count(lr->p, si); i++) {
			nt_managed_module mm;
			if (nt_profile_managed_module_at(lr->p, si, i, &mm) != 1 || !mm.lookups)
				continue;
			fprintf(o, "%s\n%s      {\"path\": ", first ? "" : ",", ind);
			json_str(o, mm.path);
			fprintf(o, ", \"status\": ");
			json_str(o, nt_managed_status_name(mm.status, 1));
			fprintf(o, ", \"frames\": %" PRIu64 ", \"lines\": %" PRIu64 ", \"pdb\": ",
				mm.lookups, mm.lines);
			json_str(o, mm.pdb_path);
			fprintf(o, ", \"pdb_id\": ");
			json_str(o, mm.pdb_id);
			fprintf(o, ", \"message\": ");
			json_str(o, mm.message);
			fprintf(o, "}");
			first = 0;
		}
	fprintf(o, "%s]}", first ? "" : "\n    ");
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_lines_text(const lines_report *lr)
{
	const nt_managed_lines *m = &lr->ml;
	uint64_t ns = sum_status(m->leaf), nf = sum_status(m->frames);
	printf("\nManaged lines:     %" PRIu64 " of %" PRIu64
	       " samples (%.1f%%) have a line at their innermost managed frame; %" PRIu64
	       " of %" PRIu64 " managed frames (%.1f%%)\n",
	       m->leaf[NT_MANAGED_LINE], ns, pct(m->leaf[NT_MANAGED_LINE], ns),
	       m->frames[NT_MANAGED_LINE], nf, pct(m->frames[NT_MANAGED_LINE], nf));
	uint64_t np = sum_status(m->pdb_leaf);
	printf("With PDBs:         %" PRIu64 " of %" PRIu64
	       " samples (%.1f%%) in code whose PDB was read have a line there\n",
	       m->pdb_leaf[NT_MANAGED_LINE], np, pct(m->pdb_leaf[NT_MANAGED_LINE], np));
	printf("IL maps:           %" PRIu64 " events for %" PRIu64 " code versions%s\n", m->il_maps,
	       m->code_versions,
	       m->il_maps ? "" : " (record with the runtime keyword 0x20000 for lines)");
	if (nf > m->frames[NT_MANAGED_LINE]) {
		printf("Frames without:   ");
		for (int i = 1; i < NT_MANAGED_UNUSED; i++)
			if (m->frames[i])
				printf(" %s %" PRIu64 " (%.1f%%);", nt_managed_status_name(i, 0), m->frames[i],
				       pct(m->frames[i], nf));
		printf("\n");
	}
	for (size_t si = 0; si < nt_profile_session_count(lr->p); si++)
		for (size_t i = 0; i < nt_profile_managed_module_count(lr->p, si); i++) {
			nt_managed_module mm;
			if (nt_profile_managed_module_at(lr->p, si, i, &mm) != 1 || !mm.lookups)
				continue;
			printf("  module %s: %s, %" PRIu64 " of %" PRIu64 " frames with lines", mm.name,
			       nt_managed_status_name(mm.status, 1), mm.lines, mm.lookups);
			if (mm.pdb_path[0])
				printf(", PDB %s", mm.pdb_path);
			if (mm.message[0])
				printf(" (%s)", mm.message);
			printf("\n");
		}
}

/* ------------------------------------------------------------------ per file */

/* Opens file; on failure prints the error and returns its exit code (then *out is NULL). */
static int open_reader(tool *t, const char *file, unsigned flags, nt_reader **out)
{
	nt_reader_opts ro = {sizeof ro, flags, file};
	nt_error err;
	nt_error_clear(&err);
	if (nt_reader_open_file(out, file, &ro, &err) < 0)
		/* "cannot open F: reason" already names the file */
		return tool_error(t, err.code == NT_EIO && err.offset == NT_NO_OFFSET ? NULL : file,
				  &err);
	return 0;
}

static void warn_truncated(tool *t, const char *file, const nt_reader *r)
{
	uint64_t off = NT_NO_OFFSET;
	const char *w = nt_reader_warning(r, &off);
	if (w)
		tool_warn(t, file, off, w);
}

static void oom(tool *t, const char *file)
{
	nt_error err;
	nt_error_clear(&err);
	err.code = NT_ENOMEM;
	err.offset = NT_NO_OFFSET;
	snprintf(err.msg, sizeof err.msg, "out of memory");
	tool_error(t, file, &err);
}


/* *out = a malloc'd copy of the n items of size bytes at src (NULL when n is 0). Returns
 * 0, or -1 out of memory. */
static int copy_list(void **out, const void *src, size_t n, size_t size)
{
	*out = NULL;
	if (!n)
		return 0;
	if (!(*out = malloc(n * size)))
		return -1;
	memcpy(*out, src, n * size);
	return 0;
}

/* Reads file to the end in file order (counting needs no timestamp order) and fills *s;
 * s->r stays open because the strings in s->rows and s->warning belong to it. With
 * symbols, the same read feeds a profile (summary_hook() sees each event first), whose
 * finish gives the symbol coverage: the frames of the samples as the profile tools
 * resolve them, by address once the whole trace is read, so file order gives the same
 * coverage as the profile tools' timestamp order. Returns 0, or an exit code after
 * printing the error. */
static int collect(tool *t, const char *file, int symbols, unsigned jobs, summary *s)
{
	s->file = file;
	int rc = open_reader(t, file, NT_READ_FILE_ORDER, &s->r);
	if (rc)
		return rc;
	s->hdr = *nt_reader_header(s->r);
	const nt_event *ev;
	nt_error err;
	nt_error_clear(&err);
	/* without symbols the summary infers the rate and finds the GC pauses; with them the
	 * profile does, whose read (in chunks on two threads, with jobs) settles what
	 * crosses a chunk's start */
	if (!symbols && (nt_rate_new(&s->rate, s->hdr.expected_sampling_ns, s->hdr.qpc_frequency,
				     s->hdr.sync_qpc, &err) ||
			 nt_pauses_new(&s->pauses, &err)))
		return tool_error(t, file, &err);
	tool_progress pg;
	tool_progress_begin(&pg, t, file);
	nt_profile *p = NULL;
	if (symbols) {
		nt_profile_opts po = NT_INIT(nt_profile_opts);
		po.read_fn = summary_hook;
		po.chunk_begin = summary_chunk_begin;
		po.chunk_end = summary_chunk_end;
		po.hook_ctx = s;
		po.jobs = jobs;
		po.progress_fn = tool_progress_update;
		po.progress_ctx = &pg;
		rc = nt_profile_new(&p, &po, &err);
		if (rc == 0)
			rc = nt_profile_add_trace(p, s->r, file, &err);
	} else {
		uint64_t nev = 0;
		while ((rc = nt_reader_next(s->r, &ev, &err)) == 1) {
			if (++nev % NT_PROGRESS_EVENTS == 0)
				tool_progress_update(&pg, ev->offset);
			if (summary_add(s, ev)) {
				rc = summary_oom(&err, ev->offset);
				break;
			}
		}
	}
	tool_progress_end(&pg);
	if (rc < 0) {
		nt_profile_free(p);
		return tool_error(t, file, &err);
	}
	s->st = *nt_reader_stats_get(s->r);
	if (s->rate)
		s->ri = nt_rate_result(s->rate);
	if (s->pauses)
		s->pi = nt_pauses_result(s->pauses);
	if (p) {
		/* one trace is one session; nt_profile_session() fails only without memory */
		const nt_session_info *si = nt_profile_session(p, 0);
		if (!si || nt_profile_session_count(p) != 1) {
			nt_profile_free(p);
			oom(t, file);
			return EXIT_SYSTEM;
		}
		s->symbols = *si->symbols;
		s->have_symbols = 1;
		/* the rate and the pauses, with their lists: the profile's go with it */
		s->rate_copy = *si->rate;
		s->pi_copy = *si->pauses;
		if (copy_list((void **)&s->gaps, si->rate->gaps, s->rate_copy.ngaps,
			      sizeof *s->gaps) ||
		    copy_list((void **)&s->pi_list, si->pauses->list, s->pi_copy.nlist,
			      sizeof *s->pi_list)) {
			nt_profile_free(p);
			oom(t, file);
			return EXIT_SYSTEM;
		}
		s->rate_copy.gaps = s->gaps;
		s->ri = &s->rate_copy;
		s->pi_copy.list = s->pi_list;
		s->pi = &s->pi_copy;
		nt_profile_free(p);
	}
	if (summary_finish(s, s->r) || pauses_finish(s)) {
		oom(t, file);
		return EXIT_SYSTEM;
	}
	return 0;
}

/* Summary of one file, as text or JSON; *printed counts the summaries already printed. */
static void do_summary(tool *t, const info_cfg *cfg, const char *file, size_t *printed)
{
	summary s;
	memset(&s, 0, sizeof s);
	lines_report lr, *lrp = NULL;
	memset(&lr, 0, sizeof lr);
	if (collect(t, file, !cfg->no_symbols, cfg->jobs, &s) == 0) {
		if (cfg->lines) {
			char *files[1] = {(char *)file};
			nt_error err;
			nt_error_clear(&err);
			fflush(stdout);
			if (profile_load(t, (profile_args *)&cfg->pa, files, 1, &lr.p) == 0) {
				if (nt_profile_managed_lines(lr.p, SIZE_MAX, &lr.ml, &err))
					tool_error(t, file, &err);
				else
					lrp = &lr;
			}
		}
		if (cfg->json) {
			if (cfg->nfiles > 1)
				printf("%s\n", *printed ? "," : "");
			print_json(&s, cfg->nfiles > 1 ? "  " : "", lrp);
			if (cfg->nfiles == 1)
				printf("\n");
		} else {
			if (*printed)
				printf("\n");
			print_text(&s);
			if (lrp)
				print_lines_text(lrp);
		}
		(*printed)++;
		/* stdout first, so the warning follows the data it qualifies */
		fflush(stdout);
		if (s.warning)
			tool_warn(t, file, s.warning_offset, s.warning);
	}
	summary_free(&s);
	nt_profile_free(lr.p);
}

/* ------------------------------------------------------------------ --events */

static int print_event(const info_cfg *cfg, const nt_event *ev, uint32_t ptrsize,
		       const nt_sink *sink)
{
	const nt_metadata *m = ev->meta;
	uint64_t ans =
		ev->time_ns < 0 ? (uint64_t)0 - (uint64_t)ev->time_ns : (uint64_t)ev->time_ns;
	printf("[%c%" PRIu64 ".%09" PRIu64 "s] ts=%" PRIu64 " ", ev->time_ns < 0 ? '-' : '+',
	       ans / 1000000000u, ans % 1000000000u, ev->timestamp);
	text_str(stdout, m && m->provider ? m->provider : "?");
	putchar('/');
	text_str(stdout, m && m->name ? m->name : "");
	printf("(id=%" PRIu32 ", v=%" PRIu32 ") tid=%" PRIu64 " ctid=%" PRIu64 " seq=%" PRIu32
	       " proc=",
	       m ? m->event_id : 0, m ? m->version : 0, ev->thread_id, ev->capture_thread_id,
	       ev->seq);
	if (ev->processor == UINT32_MAX)
		printf("-");
	else
		printf("%" PRIu32, ev->processor);
	printf(" stack=%" PRIu32 " frames ", ev->stack_depth);
	if (m) {
		int rc = nt_payload_write_json(ev, ptrsize, sink);
		if (rc < 0)
			return rc;
	} else {
		printf("{}");
	}
	printf("\n");
	if (cfg->stacks)
		for (uint32_t i = 0; i < ev->stack_depth; i++)
			printf("    #%-3" PRIu32 " 0x%0*" PRIx64 "\n", i, (int)(ptrsize * 2),
			       ev->stack[i]);
	return ferror(stdout) ? NT_EIO : 0;
}

static void do_events(tool *t, const info_cfg *cfg, const char *file)
{
	nt_reader *r;
	if (open_reader(t, file, 0, &r))
		return;
	uint32_t ptrsize = nt_reader_header(r)->pointer_size;
	nt_sink sink = nt_sink_stdio(stdout);
	const nt_event *ev;
	nt_error err;
	nt_error_clear(&err);
	uint64_t n = 0;
	int rc = 0;
	while ((!cfg->has_limit || n < cfg->limit) && (rc = nt_reader_next(r, &ev, &err)) == 1) {
		n++;
		if (print_event(cfg, ev, ptrsize, &sink) < 0) {
			rc = 0; /* tool_finish() reports the failed write */
			break;
		}
	}
	fflush(stdout);
	if (rc < 0)
		tool_error(t, file, &err);
	else if (!cfg->has_limit || n < cfg->limit)
		warn_truncated(t, file, r);
	nt_reader_free(r);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	tool t = {"nettrace-info", "[OPTIONS] FILE...",
		  "Summarise nettrace (.NET EventPipe) files, or list their events.\n"
		  "FILE \"-\" reads standard input.",
		  info_opts, 0, 0};
	info_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	profile_args_init(&cfg.pa);
	struct option *lo;
	const char *shortopts = tool_getopt_colon(&t, &lo, "");
	int c;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		switch (c) {
		case 'j': cfg.json = 1; break;
		case OPT_NO_SYMBOLS: cfg.no_symbols = 1; break;
		case 'e': cfg.events = 1; break;
		case 's': cfg.stacks = 1; break;
		case 'n':
			if (tool_parse_u64(optarg, 0, UINT64_MAX, &cfg.limit))
				return tool_usage_error(&t,
							"invalid --limit value '%s' (expected a "
							"non-negative integer)",
							optarg);
			cfg.has_limit = 1;
			break;
		case OPT_LINES: cfg.lines = 1; break;
		case OPT_SYMBOLS:
		case OPT_JOBS: {
			int r = profile_args_handle(&t, &cfg.pa, c, optarg);
			if (r < 0)
				return -r;
			break;
		}
		case 'h': tool_help(&t); return tool_finish(&t);
		case 'V': tool_version(&t); return tool_finish(&t);
		case ':':
		default:
			return tool_bad_option(&t, c, argv);
		}
	}
	if (cfg.json && cfg.events)
		return tool_usage_error(&t, "--json and --events cannot be combined");
	if ((cfg.stacks || cfg.has_limit) && !cfg.events)
		return tool_usage_error(&t, "--%s only applies to --events",
					cfg.stacks ? "stacks" : "limit");
	if (optind >= argc)
		return tool_usage_error(&t, "missing FILE operand");
	cfg.nfiles = argc - optind;
	if (cfg.lines && cfg.events)
		return tool_usage_error(&t, "--lines and --events cannot be combined");
	for (int i = optind; cfg.lines && i < argc; i++)
		if (strcmp(argv[i], "-") == 0)
			return tool_usage_error(&t, "--lines reads its file twice: not standard input");

	cfg.jobs = 1;
	if (!cfg.events && !cfg.no_symbols) {
		int jrc = profile_jobs(&t, &cfg.pa, argv + optind, cfg.nfiles, &cfg.jobs);
		if (jrc)
			return jrc;
	}

	size_t printed = 0;
	if (cfg.json && cfg.nfiles > 1)
		printf("[");
	for (int i = optind; i < argc; i++) {
		if (cfg.events) {
			if (cfg.nfiles > 1)
				printf("%s==> %s <==\n", i > optind ? "\n" : "", argv[i]);
			do_events(&t, &cfg, argv[i]);
		} else {
			do_summary(&t, &cfg, argv[i], &printed);
		}
	}
	if (cfg.json && cfg.nfiles > 1)
		printf("%s]\n", printed ? "\n" : "");
	int ec = tool_finish(&t);
	profile_args_free(&cfg.pa);
	return ec;
}
