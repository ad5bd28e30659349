/* SPDX-License-Identifier: MIT */
/* drain.c - a session's output: the nettrace stream written through libtrace's writer
 * (doc/format/sampler-events.md). The trace header, the event metadata, SessionSettings
 * and ModuleMap events at the start; ThreadName events before a thread's first sample;
 * ThreadSample version 1 events (Type Managed when running, else External; CpuTimeNs,
 * State; native stack leaf first); SamplerStats and a flush of the buffered blocks every flush period, so a crash
 * of the profiled program leaves a readable prefix; the final stats and the end of the
 * stream at close.
 *
 * Runs on the sampler thread (or, in samplepoint mode and at close, in the calling
 * thread) with the runtime's lock held: one writer is never used by two threads at once.
 * Every event of a session has the sampler thread as capture thread, so timestamps are
 * clamped to be non-decreasing (a handler that ran late must not go backwards). After
 * the first write error the session stops writing and keeps the error for close.
 * The file is written with write(2), not stdio: a forked child that exits must not flush
 * a copy of the parent's buffers into the file.
 * Not here: the sampling itself (sampler.c, signal.c). */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../libtrace/internal.h"

/* ThreadSample Type for native samples (doc/format/sampler-events.md): External, or
 * Managed for a running thread, which is what makes TraceEvent's thread-time computer count
 * it as CPU (libnettrace reads both as External and takes running from State). */
#define SAMPLE_TYPE_EXTERNAL 1u
#define SAMPLE_TYPE_ON_CPU 2u
#define LEVEL_INFORMATIONAL 4u

static int fd_write(void *ctx, const void *buf, size_t len)
{
	struct nts_session *s = ctx;
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = write(s->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NT_EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Payload builder: little-endian scalars and UTF-16LE strings. */
typedef struct pbuf {
	uint8_t *p;
	size_t len, cap;
	int oom;
} pbuf;

static void pb_u64(pbuf *b, uint64_t v)
{
	if (b->oom || nt_grow((void **)&b->p, &b->cap, b->len + 8, 1)) {
		b->oom = 1;
		return;
	}
	nt_put64(b->p + b->len, v);
	b->len += 8;
}

static void pb_f64(pbuf *b, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof v);
	pb_u64(b, v);
}

static void pb_str(pbuf *b, const char *s)
{
	if (b->oom || nt_utf8_to_utf16z(s, &b->p, &b->len, &b->cap))
		b->oom = 1;
}

static void session_fail(struct nts_session *s, int rc, const nt_error *e)
{
	if (s->failed)
		return;
	s->failed = 1;
	if (e && e->code)
		s->err = *e;
	else
		nt_fail(&s->err, rc, NT_NO_OFFSET, "sampler: cannot write the trace");
}

static void emit(struct nts_session *s, uint32_t meta, uint64_t thread, uint64_t ts,
		 pid_t capture, uint32_t processor, const uint64_t *stack, uint32_t depth,
		 const pbuf *payload)
{
	if (s->failed)
		return;
	if (payload->oom) {
		session_fail(s, NT_ENOMEM, NULL);
		return;
	}
	if (ts < s->last_ts)
		ts = s->last_ts;
	s->last_ts = ts;
	nt_event_desc ev;
	memset(&ev, 0, sizeof ev);
	ev.metadata_id = meta;
	ev.thread_id = thread;
	ev.capture_thread_id = (uint64_t)capture;
	ev.processor = processor;
	ev.timestamp = ts;
	ev.stack = stack;
	ev.stack_depth = depth;
	ev.payload = payload->p;
	ev.payload_len = (uint32_t)payload->len;
	nt_error e;
	nt_error_clear(&e);
	int rc = nt_writer_write_event(s->w, &ev, &e);
	if (rc)
		session_fail(s, rc, &e);
}

static const nt_field sample_fields[] = {
	{"Type", NT_TYPE_U32, 0, 0, NULL, 0},
	{"CpuTimeNs", NT_TYPE_U64, 0, 0, NULL, 0},
	{"State", NT_TYPE_U32, 0, 0, NULL, 0},
};
static const nt_field module_fields[] = {
	{"Base", NT_TYPE_U64, 0, 0, NULL, 0},     {"Size", NT_TYPE_U64, 0, 0, NULL, 0},
	{"FileOffset", NT_TYPE_U64, 0, 0, NULL, 0}, {"Path", NT_TYPE_STRING, 0, 0, NULL, 0},
	{"BuildId", NT_TYPE_STRING, 0, 0, NULL, 0},
};
static const nt_field thread_fields[] = {
	{"ThreadId", NT_TYPE_U64, 0, 0, NULL, 0},
	{"Name", NT_TYPE_STRING, 0, 0, NULL, 0},
};
static const nt_field settings_fields[] = {
	{"IntervalNs", NT_TYPE_U64, 0, 0, NULL, 0},
	{"Schedule", NT_TYPE_STRING, 0, 0, NULL, 0},
	{"Seed", NT_TYPE_U64, 0, 0, NULL, 0},
	{"Mode", NT_TYPE_STRING, 0, 0, NULL, 0},
	{"Backend", NT_TYPE_STRING, 0, 0, NULL, 0},
};
static const nt_field stats_fields[] = {
	{"Samples", NT_TYPE_U64, 0, 0, NULL, 0}, {"Dropped", NT_TYPE_U64, 0, 0, NULL, 0},
	{"Late", NT_TYPE_U64, 0, 0, NULL, 0},    {"Missed", NT_TYPE_U64, 0, 0, NULL, 0},
	{"RealizedHz", NT_TYPE_F64, 0, 0, NULL, 0},
};

#define NFIELDS(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static void utc_now(uint16_t st[8])
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	time_t t = ts.tv_sec;
	gmtime_r(&t, &tm);
	st[0] = (uint16_t)(tm.tm_year + 1900);
	st[1] = (uint16_t)(tm.tm_mon + 1);
	st[2] = (uint16_t)tm.tm_wday;
	st[3] = (uint16_t)tm.tm_mday;
	st[4] = (uint16_t)tm.tm_hour;
	st[5] = (uint16_t)tm.tm_min;
	st[6] = (uint16_t)tm.tm_sec;
	st[7] = (uint16_t)(ts.tv_nsec / 1000000);
}

int nts_out_open(struct nts_session *s, const nts_modlist *ml, uint64_t now, pid_t capture,
		 nt_error *err)
{
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.format_version = 4;
	utc_now(h.sync_time_utc);
	h.sync_qpc = now;
	h.qpc_frequency = 1000000000u; /* timestamps are CLOCK_MONOTONIC ns */
	h.pointer_size = 8;
	h.process_id = (uint32_t)getpid();
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	h.processors = ncpu > 0 ? (uint32_t)ncpu : 1;
	h.expected_sampling_ns = (uint32_t)s->sched.interval_ns;
	h.trace_object_version = 4;
	nt_writer_opts wo;
	memset(&wo, 0, sizeof wo);
	wo.sz = sizeof wo;
	wo.format_version = s->format_version;
	nt_sink sink = {fd_write, s};
	int rc = nt_writer_open(&s->w, &sink, &h, &wo, err);
	if (rc)
		return rc;
	const nt_metadata_desc md[] = {
		{NT_PROVIDER_SAMPLER, 0, "ThreadSample", 0, 1, LEVEL_INFORMATIONAL, 0, sample_fields,
		 NFIELDS(sample_fields)},
		{NT_PROVIDER_NTSAMPLER, NT_NTS_MODULE_MAP, "ModuleMap", 0, 0, LEVEL_INFORMATIONAL, 0,
		 module_fields, NFIELDS(module_fields)},
		{NT_PROVIDER_NTSAMPLER, NT_NTS_THREAD_NAME, "ThreadName", 0, 0, LEVEL_INFORMATIONAL,
		 0, thread_fields, NFIELDS(thread_fields)},
		{NT_PROVIDER_NTSAMPLER, NT_NTS_SESSION_SETTINGS, "SessionSettings", 0, 0,
		 LEVEL_INFORMATIONAL, 0, settings_fields, NFIELDS(settings_fields)},
		{NT_PROVIDER_NTSAMPLER, NT_NTS_SAMPLER_STATS, "SamplerStats", 0, 0,
		 LEVEL_INFORMATIONAL, 0, stats_fields, NFIELDS(stats_fields)},
	};
	uint32_t *ids[] = {&s->meta_sample, &s->meta_module, &s->meta_thread, &s->meta_settings,
			   &s->meta_stats};
	for (size_t i = 0; i < sizeof md / sizeof md[0]; i++) {
		rc = nt_writer_add_metadata(s->w, &md[i], ids[i], err);
		if (rc)
			return rc;
	}
	s->start_ns = now;
	s->last_ts = now;
	pbuf b = {NULL, 0, 0, 0};
	pb_u64(&b, s->sched.interval_ns);
	pb_str(&b, s->sched.kind == NTS_SCHED_POISSON ? "poisson" : "fixed");
	pb_u64(&b, s->seed);
	pb_str(&b, s->mode == NTS_MODE_SAMPLEPOINT ? "samplepoint" : "signal");
	pb_str(&b, s->mode == NTS_MODE_SAMPLEPOINT   ? "samplepoint"
		   : s->backend == NTS_BACKEND_PERF ? "perf"
						     : "signal");
	emit(s, s->meta_settings, (uint64_t)capture, now, capture, 0xFFFFFFFFu, NULL, 0, &b);
	free(b.p);
	s->modules_written = 0;
	nts_out_modules(s, ml, now, capture);
	/* The header and the settings reach the file at once: a program that crashes in its
	 * first flush period still leaves a readable (if sample-less) trace. */
	nt_error e;
	nt_error_clear(&e);
	if (!s->failed && (rc = nt_writer_flush(s->w, &e)) != 0)
		session_fail(s, rc, &e);
	if (s->failed) {
		if (err)
			*err = s->err;
		return s->err.code ? s->err.code : NT_EIO;
	}
	return 0;
}

void nts_out_modules(struct nts_session *s, const nts_modlist *ml, uint64_t now, pid_t capture)
{
	for (size_t i = s->modules_written; i < ml->n; i++) {
		const nts_module *m = &ml->m[i];
		pbuf b = {NULL, 0, 0, 0};
		pb_u64(&b, m->base);
		pb_u64(&b, m->size);
		pb_u64(&b, m->file_offset);
		pb_str(&b, m->path);
		pb_str(&b, m->build_id);
		/* at the last sample's time: samples carry scheduled times, which may be a little
		 * behind the clock, and a session's timestamps never go backwards */
		(void)now;
		emit(s, s->meta_module, (uint64_t)capture, s->last_ts, capture, 0xFFFFFFFFu, NULL, 0,
		     &b);
		free(b.p);
	}
	s->modules_written = ml->n;
}

void nts_out_thread_name(struct nts_session *s, uint32_t tid, const char *name, uint64_t ts,
			 pid_t capture)
{
	pbuf b = {NULL, 0, 0, 0};
	pb_u64(&b, tid);
	pb_str(&b, name);
	emit(s, s->meta_thread, tid, ts, capture, 0xFFFFFFFFu, NULL, 0, &b);
	free(b.p);
}

void nts_out_sample(struct nts_session *s, const nts_record *r, uint64_t ts, const uint64_t *ips,
		    pid_t capture)
{
	uint8_t pl[16];
	nt_put32(pl, r->state == NTS_ST_RUNNING ? SAMPLE_TYPE_ON_CPU : SAMPLE_TYPE_EXTERNAL);
	nt_put64(pl + 4, r->cpu_ns);
	nt_put32(pl + 12, r->state);
	pbuf b = {pl, 16, 16, 0};
	emit(s, s->meta_sample, r->tid, ts, capture, r->cpu, ips, r->depth, &b);
	if (!s->failed)
		s->st.samples++;
}

static void write_stats(struct nts_session *s, uint64_t now, pid_t capture)
{
	nts_stats *st = &s->st;
	st->late = s->sched.late;
	st->missed = s->sched.missed;
	st->rounds = s->sched.taken;
	double secs = now > s->start_ns ? (double)(now - s->start_ns) / 1e9 : 0;
	st->realized_hz = secs > 0 ? (double)st->rounds / secs : 0;
	pbuf b = {NULL, 0, 0, 0};
	pb_u64(&b, st->samples);
	pb_u64(&b, st->dropped);
	pb_u64(&b, st->late);
	pb_u64(&b, st->missed);
	pb_f64(&b, st->realized_hz);
	emit(s, s->meta_stats, (uint64_t)capture, s->last_ts, capture, 0xFFFFFFFFu, NULL, 0, &b);
	free(b.p);
}

void nts_out_flush(struct nts_session *s, uint64_t now, pid_t capture)
{
	if (s->failed)
		return;
	write_stats(s, now, capture);
	nt_error e;
	nt_error_clear(&e);
	int rc = nt_writer_flush(s->w, &e);
	if (rc)
		session_fail(s, rc, &e);
}

int nts_out_close(struct nts_session *s, uint64_t now, pid_t capture, nt_error *err)
{
	int rc = 0;
	if (!s->failed && s->w) {
		write_stats(s, now, capture);
		nt_error e;
		nt_error_clear(&e);
		rc = nt_writer_close(s->w, &e);
		s->w = NULL;
		if (rc)
			session_fail(s, rc, &e);
	}
	nt_writer_free(s->w);
	s->w = NULL;
	if (s->own_fd && s->fd >= 0) {
		if (close(s->fd) && !s->failed) {
			nt_fail_errno(&s->err, errno, "sampler: closing the trace failed");
			s->failed = 1;
		}
	}
	s->fd = -1;
	if (s->failed) {
		if (err && !err->code)
			*err = s->err;
		return s->err.code ? s->err.code : NT_EIO;
	}
	return rc;
}

void nts_out_abandon(struct nts_session *s)
{
	nt_writer_free(s->w);
	s->w = NULL;
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
