/* SPDX-License-Identifier: MIT */
/* fuzz-profile.c - libFuzzer target for the analysis pipeline. Every input is an untrusted
 * trace: it is opened from memory and read into a profile (time histograms and subsystems
 * on, a compat mode and --jobs 1 or 2 picked by the input's length), and the profile goes
 * through what the tools do with one: folded stacks (nettrace-fold), a call tree printed
 * as text with its "when" column, by subsystem and as a top list (nettrace-tree), the
 * native frame of every frame, and the SVG (with a timeline), speedscope, pprof and
 * callgrind exporters (nettrace-flame), all into memory sinks.
 * Native symbols: a trace's ModuleMap events name files that the resolver opens. The
 * profile's resolver gets a root under a directory that does not exist, so every module is
 * "missing" (its frames module+0xOFFSET) and no path from the input reaches the file
 * system; the module map and the resolver's lookups are still exercised.
 * Compressed inputs (gzip, zip) that inflate to more than INFLATE_CAP bytes are skipped, as
 * in fuzz-reader.c (the cost would only be the size of the inflated stream).
 * Half of the inputs are also read in chunks of 256 bytes by two readers (profile-chunks.c,
 * which then merges what one reader saw of its chunks into the other's profile), with the
 * default attribution or pyroscope's: the folded stacks and the session's counts must be
 * those of the single-thread read.
 * Build and run: tests/fuzz/run-fuzz.sh -T profile. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-inflate.h"
#include "nettrace.h"

#define WHEN_BUCKETS 32


/* A failed call must say why: an error without a code is a library bug. */
static void check(int rc, const nt_error *err)
{
	if (rc < 0 && err->code == 0)
		__builtin_trap();
}

typedef struct walk {
	nt_profile *p;
	uint64_t sum;
} walk;

/* Touches every frame of a group and its native frame, so ASan sees the strings. */
static int on_group(void *ctx, const nt_sample_group *g)
{
	walk *w = ctx;
	for (uint32_t i = 0; i < g->depth; i++) {
		w->sum += strlen(g->frames[i]);
		const nt_native_frame *nf = nt_profile_frame_native(w->p, g, i);
		if (nf)
			w->sum += strlen(nf->name) + strlen(nf->module) + nf->file_offset;
		if (g->frame_subsystems)
			w->sum += (uint32_t)g->frame_subsystems[i];
	}
	for (uint32_t i = 0; i < g->nips; i++)
		w->sum += g->ips[i] & 0xff;
	for (size_t i = 0; i < g->nwhen; i++)
		if (g->when[i].bucket >= NT_WHEN_FINE)
			__builtin_trap();
	return 0;
}

static void trees(nt_profile *p, int variant, nt_membuf *mb, const nt_sink *sink)
{
	nt_error err;
	nt_tree *t = NULL;
	nt_tree_opts to = {sizeof to, 0, 0, 0, 0, WHEN_BUCKETS, 0};
	to.invert = variant & 1;
	to.per_thread = (variant >> 1) & 1;
	to.no_module = (variant >> 2) & 1;
	to.by_samples = (variant >> 3) & 1;
	nt_error_clear(&err);
	int rc = nt_tree_new(&t, p, &to, &err);
	check(rc, &err);
	if (rc < 0)
		return;
	nt_tree_print_opts po;
	memset(&po, 0, sizeof po);
	po.sz = sizeof po;
	po.unit = NT_TREE_UNIT_AUTO;
	po.when = 1;
	po.by_category = 1;
	po.ascii = (variant >> 4) & 1;
	mb->len = 0;
	check(nt_tree_write_text(t, &po, sink, &err), &err);
	po.when = 0;
	po.by_subsystem = 1;
	mb->len = 0;
	check(nt_tree_write_text(t, &po, sink, &err), &err);
	po.by_subsystem = 0;
	po.top = 5;
	po.unit = NT_UNIT_SAMPLES;
	mb->len = 0;
	check(nt_tree_write_text(t, &po, sink, &err), &err);

	/* The flame graph's timeline strip, as nettrace-flame --timeline draws it. */
	nt_tree_when_info wi = NT_INIT(nt_tree_when_info);
	const nt_tree_node *root = nt_tree_root(t);
	nt_stacks *s = NULL;
	nt_fold_opts fo = {sizeof fo, NT_UNIT_NS, to.per_thread, NT_CATFRAME_LEAF, to.no_module,
			   NT_CATFRAME_ROOT};
	if (nt_tree_when(t, &wi) && root && root->when &&
	    nt_stacks_from_profile(&s, p, &fo, &err) == 0) {
		nt_flame_opts fl;
		memset(&fl, 0, sizeof fl);
		fl.sz = sizeof fl;
		fl.icicle = variant & 1;
		fl.timeline_n = wi.buckets;
		fl.timeline = root->when;
		fl.timeline_start_ns = wi.start_ns;
		fl.timeline_end_ns = wi.end_ns;
		mb->len = 0;
		check(nt_flame_write_svg(s, NULL, &fl, sink, &err), &err);
	}
	nt_stacks_free(s);
	nt_tree_free(t);
}

static void exports(nt_profile *p, int variant, nt_membuf *mb, const nt_sink *sink)
{
	nt_error err;
	nt_stacks *s = NULL;
	nt_fold_opts fo = {sizeof fo, variant % 4, (variant >> 1) & 1, variant % 3,
			   (variant >> 2) & 1, (variant + 1) % 3};
	nt_error_clear(&err);
	if (nt_stacks_from_profile(&s, p, &fo, &err)) {
		check(-1, &err);
		return;
	}
	mb->len = 0;
	check(nt_flame_write_svg(s, NULL, NULL, sink, &err), &err);
	mb->len = 0;
	check(nt_flame_write_svg(s, s, NULL, sink, &err), &err); /* differential */
	mb->len = 0;
	check(nt_speedscope_write(s, sink, &err), &err);
	nt_pprof_opts po = {sizeof po, -1, NULL, 0}; /* no gzip: the encoder is what is tested */
	mb->len = 0;
	check(nt_pprof_write(s, &po, sink, &err), &err);
	mb->len = 0;
	check(nt_callgrind_write(s, sink, &err), &err);
	nt_stacks_free(s);
}

/* A read_fn that counts events (and sums their offsets: order aside, which events), with
 * contexts for the chunks of a chunked read. */
typedef struct fz_count {
	uint64_t events, samples, offsets;
} fz_count;

static int fz_count_fn(void *ctx, uint32_t session, const nt_trace_header *h,
		       const nt_event *ev, nt_error *err)
{
	(void)session;
	(void)h;
	(void)err;
	fz_count *c = ctx;
	c->events++;
	c->samples += nt_event_is_sample(ev, NULL);
	c->offsets += ev->offset;
	return 0;
}

static void *fz_chunk_begin(void *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(fz_count));
}

static int fz_chunk_end(void *ctx, void *chunk, int merge, nt_error *err)
{
	(void)err;
	fz_count *c = ctx, *k = chunk;
	if (merge) {
		c->events += k->events;
		c->samples += k->samples;
		c->offsets += k->offsets;
	}
	free(k);
	return 0;
}

/* The folded stacks and session counts of data read with jobs (NONE mode, no time
 * histograms: what a chunked read allows), with a counting read_fn and the reader's
 * counts, into *mb; the profile's result code. */
static int fold_of(const uint8_t *data, size_t size, unsigned jobs, int compat, nt_membuf *mb)
{
	nt_error err;
	nt_error_clear(&err);
	nt_reader *r = NULL;
	/* pyroscope's mode reads in file order, as the tools do */
	nt_reader_opts ro = {sizeof ro, compat == NT_COMPAT_PYROSCOPE ? NT_READ_FILE_ORDER : 0u,
			     "fuzz"};
	nt_profile_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.jobs = jobs;
	o.compat = compat;
	fz_count cnt = {0, 0, 0};
	o.read_fn = fz_count_fn;
	o.chunk_begin = fz_chunk_begin;
	o.chunk_end = fz_chunk_end;
	o.hook_ctx = &cnt;
	nt_profile *p = NULL;
	int rc = nt_reader_open_mem(&r, data, size, &ro, &err);
	if (!rc)
		rc = nt_profile_new(&p, &o, &err);
	if (!rc)
		rc = nt_profile_add_trace(p, r, "fuzz", &err);
	if (!rc)
		rc = nt_profile_finish(p, &err);
	nt_sink sink = nt_sink_membuf(mb);
	if (!rc) {
		nt_fold_opts fo = {sizeof fo, 0, 1, 0, 0, 0};
		rc = nt_fold_write(p, &fo, &sink, &err);
		const nt_session_info *si = nt_profile_session(p, 0);
		if (!rc && si) {
			uint64_t v[] = {si->samples, si->samples_selected, si->first_ts, si->last_ts,
					si->lost_events, (uint64_t)si->truncated, si->gc_charges,
					(uint64_t)si->gc_charged_ns, si->rate->rounds,
					si->samples_unordered, cnt.events, cnt.samples, cnt.offsets};
			rc = sink.write(sink.ctx, v, sizeof v);
			/* the reader's counts: the chunks the caller passed included */
			const nt_reader_stats *st = nt_reader_stats_get(r);
			uint64_t w[] = {st->events, st->events_sorted, st->stacks, st->max_stack_depth,
					st->missing_stacks, st->negative_ts_deltas, st->first_timestamp,
					st->last_timestamp, st->lost_events};
			if (!rc)
				rc = sink.write(sink.ctx, w, sizeof w);
			for (size_t i = 0; !rc && i < nt_reader_metadata_count(r); i++) {
				uint64_t e = nt_reader_metadata_events(r, i);
				rc = sink.write(sink.ctx, &e, sizeof e);
			}
		}
	}
	nt_profile_free(p);
	nt_reader_free(r);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size % 4 != 0 && size % 4 != 2 && !too_big_when_inflated(data, size)) {
		int compat = size % 4 == 1 ? NT_COMPAT_NONE : NT_COMPAT_PYROSCOPE;
		setenv("NETTRACE_CHUNK_BYTES", "256", 1);
		nt_membuf a = {NULL, 0, 0}, b = {NULL, 0, 0};
		int ra = fold_of(data, size, 1, compat, &a), rb = fold_of(data, size, 2, compat, &b);
		if (ra != rb || a.len != b.len || (a.len && memcmp(a.data, b.data, a.len) != 0))
			__builtin_trap(); /* the chunked read differs from the single one */
		nt_membuf_free(&a);
		nt_membuf_free(&b);
	}
	if (too_big_when_inflated(data, size))
		return 0;
	nt_error err;
	nt_error_clear(&err);
	nt_reader *r = NULL;
	nt_reader_opts ro = {sizeof ro, 0, "fuzz"};
	int rc = nt_reader_open_mem(&r, data, size, &ro, &err);
	check(rc, &err);
	if (rc < 0)
		return 0;

	/* The variant of the options follows the length: every length is reachable, and a
	 * mutation that only flips bytes keeps the variant. */
	int variant = (int)(size % 32);
	nt_native_opts no = {sizeof no, "/nonexistent/nettrace-fuzz", "", 0, NULL};
	nt_profile_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.compat = variant % 3;
	o.managed_only = variant == 7;
	o.when = 1;
	o.subsystems = 1;
	o.native = &no;
	/* half the variants decode on a second thread (pipeline.c), whose hand-over then
	 * meets every error and odd event the reader can give */
	o.jobs = (variant & 16) ? 2 : 1;
	nt_profile *p = NULL;
	rc = nt_profile_new(&p, &o, &err);
	check(rc, &err);
	if (rc < 0) {
		nt_reader_free(r);
		return 0;
	}
	rc = nt_profile_add_trace(p, r, "fuzz", &err);
	check(rc, &err);
	if (rc == 0)
		rc = nt_profile_finish(p, &err);
	check(rc, &err);
	if (rc < 0)
		goto done;

	walk w = {p, 0};
	for (size_t i = 0; i < nt_profile_session_count(p); i++) {
		const nt_session_info *si = nt_profile_session(p, i);
		for (size_t k = 0; si && k < si->rate->ngaps; k++)
			w.sum += si->rate->gaps[k].length_ns;
		nt_native *nn = nt_profile_native(p, i);
		for (size_t k = 0; nn && k < nt_native_module_count(nn); k++) {
			nt_native_module m;
			if (nt_native_module_at(nn, k, &m) == 1)
				w.sum += strlen(m.path) + strlen(m.message);
		}
	}
	nt_when_grid g = NT_INIT(nt_when_grid);
	check(nt_profile_when_grid(p, &g, &err), &err);
	(void)nt_profile_foreach(p, on_group, &w);

	nt_membuf mb = {NULL, 0, 0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_fold_opts fo = {sizeof fo, variant % 4, variant & 1, (variant >> 1) % 3, variant & 4,
			   (variant >> 3) % 3};
	check(nt_fold_write(p, &fo, &sink, &err), &err);
	trees(p, variant, &mb, &sink);
	exports(p, variant, &mb, &sink);
	nt_membuf_free(&mb);
done:
	nt_profile_free(p);
	nt_reader_free(r);
	return 0;
}
