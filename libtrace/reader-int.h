/* SPDX-License-Identifier: MIT */
/* reader-int.h - what the reader's files share: the decoded-event record, the capture
 * threads and their queues, the V6 side tables, struct nt_reader, and the functions one
 * reader file calls in another. Internal: nothing here is public API.
 *
 * The reader is four files along its seams: reader.c (opening, the container framing:
 * stream and object headers, blocks, stack/metadata/sequence-point blocks, the getters),
 * reader-event.c (event headers, the fast header path, delivering events: the per-event
 * path, kept in one file so the compiler inlines it into nt_reader_next), reader-order.h
 * (the per-capture-thread queues and the k-way merge of timestamp order, inlined into
 * reader-event.c), reader-v6.c
 * (the V6 Trace, Thread and LabelList blocks). */
#ifndef NT_READER_INT_H
#define NT_READER_INT_H

#include "input.h"
#include "internal.h"

/* One decoded event header: the compressed-header state (nt_reader.prev), the checked
 * path's result (nt_reader.cur), a metadata block's headers. */
typedef struct qev {
	uint64_t timestamp;
	uint64_t thread_id;
	uint64_t capture_thread_id;
	uint64_t offset;      /* file offset of the blob */
	size_t payload_off;   /* uncompressed: where the next event starts */
	const uint8_t *payload_ptr; /* points into the block */
	uint32_t payload_len;
	uint32_t meta_id;
	const nt_metadata *meta; /* resolved when decoded (a later redefinition must not apply) */
	size_t stack_off;     /* resolved stack: r->ips[stack_off .. +stack_depth) */
	uint32_t stack_depth;
	uint8_t stack_ok;     /* stack_id was defined when the event was decoded */
	uint32_t stack_slot;  /* index + 1 of the definition in r->stacks, 0 if none */
	uint32_t seq;
	uint32_t processor;
	uint32_t stack_id;
	uint32_t label_id;    /* V6 label list id */
	uint64_t process_id;  /* V6: from the thread table row of thread_id; else the header's */
	uint32_t process_index; /* nt_event.process_index */
	uint8_t sorted;
	uint8_t activity_id[16];
	uint8_t related_activity_id[16];
} qev;

/* One event waiting for dispatch in timestamp order: the event as it is delivered, but
 * its stack and payload kept as offsets (a later StackBlock of the region may move
 * r->ips; the payload is in its capture thread's arena) until it is popped. */
typedef struct qent {
	nt_event ev;
	uint64_t order;       /* arrival number (tie-break) */
	size_t payload_off;   /* logical offset in its thread's arena (see cthread) */
	size_t stack_off;     /* ev.stack is r->ips + stack_off when ev.stack_depth != 0 */
} qent;

/* Per capture thread: sequence accounting and its FIFO of queued events. */
typedef struct cthread {
	uint64_t id;       /* OS thread id (V6: thread index until mapped) */
	uint32_t last_seq;
	uint64_t lost;
	uint64_t samples;  /* SampleProfiler samples it wrote (nt_reader_capture_samples()) */
	/* chunk_track: the thread's first sequence number since ntr_chunk_begin() (the one a
	 * reader of the whole file would have compared with the number before the chunk) and
	 * where it came from: 0 none yet, 1 an event, 2 a sequence point */
	uint32_t chunk_first;
	uint8_t chunk_kind;
	uint64_t chunk_samples; /* samples when the chunk began (nt_reader_chunk_counts()) */
	qent *q;           /* ring of cap (a power of two) entries: queue positions
			      [head, len), position i in q[i & (cap - 1)] (QI) */
	size_t head, len, cap;
	/* Payload bytes of the queued events, in queue order. Offsets are logical: byte i of
	 * arena is logical offset arena_base + i, so sliding the live bytes to the front
	 * only changes arena_base. All reset to 0 whenever the queue empties. */
	uint8_t *arena;
	size_t arena_len, arena_cap;
	size_t arena_base;
} cthread;

/* A stack of the current region: IPs in r->ips[off .. off+depth). */
typedef struct stackref {
	size_t off;
	uint32_t depth;
} stackref;

/* V6 label list: activity ids. */
typedef struct labellist {
	uint8_t activity_id[16];
	uint8_t related_activity_id[16];
} labellist;

/* V6 thread table entry. */
typedef struct v6thread {
	uint64_t index;
	uint64_t os_tid;
	uint64_t os_pid;
	uint32_t proc;        /* process index + 1 of proc_pid (ntr_v6_thread()), 0: not yet */
	uint64_t proc_pid;
} v6thread;

struct nt_reader {
	nt_input in;
	uint64_t stack_gen;   /* stack-table generation (nt_event.stack_key): +1 per reset */
	char *name;
	unsigned flags;
	nt_trace_header hdr;
	int v6;
	nt_meta_store *meta;
	nt_reader_stats stats;

	/* stacks of the current sequence-point region, in definition order, found by id
	 * through stack_map (sparse: a StackBlock may start at any id, and filling the gap
	 * below it would cost memory and time the file does not pay for) */
	stackref *stacks;
	size_t nstacks, stacks_cap;
	nt_idmap stack_map;
	int stacks_sparse;    /* 0 while the region's ids are 1..nstacks in definition order
				 (the usual case): then stacks[id - 1] is id's stack, no hashing */
	uint64_t *ips;
	size_t nips, ips_cap;

	/* capture threads */
	cthread *threads;
	size_t nthreads, threads_cap;
	size_t last_thread; /* cache for thread lookup */
	nt_idmap thread_map;  /* capture thread id -> index in threads */
	/* min-heap of indexes of threads with queued events, keyed by their oldest queued
	 * event (timestamp, arrival): the k-way merge costs O(log k) per event, where a scan
	 * of all threads made a file with many capture threads quadratic */
	size_t *heap;
	size_t nheap, heap_cap;
	/* with ru_valid: the key (timestamp, arrival) of the oldest head below the top, the
	 * older of heap[1] and heap[2] (UINT64_MAX: none); ntr_pop_ready() keeps popping the
	 * top thread without a sift while its next event is older */
	int ru_valid;
	uint64_t ru_ts, ru_order;
	/* with run_left > 0: that many events at run_t's queue head come out next, one
	 * after the other (ntr_pop_run()), as ntr_pop_ready() found them: older than
	 * ru_ts/ru_order and ready, none the last of its queue. Nothing else changes the
	 * queues until they are out (an enqueue waits for a pop that finds nothing). */
	size_t run_left;
	struct cthread *run_t;

	size_t queued;        /* events queued in all threads */
	uint64_t queued_bytes; /* their size: sizeof(qev) + payload each (MAX_QUEUED_BYTES) */
	uint64_t order;       /* arrival counter */
	uint64_t bound;       /* dispatch events with timestamp <= bound */
	int have_bound;
	int flush_all;        /* dispatch everything (SP or end) */

	/* file-order mode: events of the current block decoded one at a time */
	qev cur;

	/* current block being decoded incrementally (file-order mode) */
	nt_cursor blk;
	int in_block;         /* 1 while a block's events are being returned */
	size_t blk_consume;   /* bytes to consume from input when the block is done */
	int blk_compressed;
	qev prev;             /* compressed-header state */
	uint64_t blk_cur_thread;
	int blk_fast;         /* V5, compressed: fast_event() / fast_qev() may decode */
	int isa;              /* 1: nt_reader_next() runs reader-event-bmi2.c's copy */
	int ev_state;         /* file order: a run of fast_event()s holds the compressed-header
				 state in ev (but the metadata id, still prev's); prev is
				 stale until fast_end() */
	int fast_missing;     /* the run's stack id is not defined (each event counts it) */
	cthread *fast_t;      /* the run's capture thread (ev's), NULL: not looked up yet */

	/* V6 */
	labellist *labels;
	size_t nlabels, labels_cap;
	v6thread *v6threads;
	size_t nv6threads, v6threads_cap;
	nt_idmap v6thread_map; /* thread index -> position in v6threads */
	nt_idmap proc_map;    /* V6: process id -> nt_event.process_index */
	size_t nprocs;
	uint32_t proc_last;   /* index + 1 of proc_last_pid, 0: none */
	uint64_t proc_last_pid;

	/* per-event shortcuts (decoding costs ~10 ns per event, so these matter) */
	const nt_metadata *meta_last; /* nt_meta_lookup(meta_last_id); NULL after any
					 MetadataBlock, which may (re)define ids */
	uint32_t meta_last_id;
	uint64_t *meta_last_events;   /* its nt_meta_events() */
	int meta_last_sample;         /* 1 when its events are samples */
	uint64_t ns_freq;     /* the frequency ns_mul was computed for (0: none yet) */
	uint64_t ns_mul;      /* 1e9 / frequency when the frequency divides 1e9, else 0 */
	uint64_t ns_max;      /* with ns_mul: larger tick deltas saturate (INT64_MAX / ns_mul) */

	/* delivered event */
	nt_event ev;
	int done;             /* end reached (0 returned) */
	int failed;
	/* Chunks (ntr_chunk_begin()): in timestamp order, the read ends after the first
	 * sequence point that ends at or past chunk_end (0: none), as if the input ended
	 * there (chunk_stop); chunk_track records the capture threads' first sequence
	 * numbers (cthread.chunk_first) */
	uint64_t chunk_end;
	int chunk_stop;
	int chunk_track;
	int chunk_passing;    /* nt_reader_chunk_skip(): event and stack blocks go unread */
	/* chunk_track: the counts when the chunk began, which nt_reader_chunk_counts()
	 * subtracts (records past chunk_nmeta began at 0) */
	nt_reader_stats chunk_stats;
	uint64_t meta_negative_ts;       /* stats.negative_ts_deltas of metadata blocks */
	uint64_t chunk_meta_negative_ts; /* its value when the chunk began */
	uint64_t *chunk_meta;
	size_t chunk_nmeta, chunk_meta_cap;
	char warning[256];
	uint64_t warning_offset;
	size_t trunc_need, trunc_have; /* a cut object header: bytes needed and present */
};

/* The kinds of block (or object) the container hands out. */
enum { BLK_EVENT = 1, BLK_METADATA, BLK_STACK, BLK_SP, BLK_TRACE, BLK_THREAD, BLK_RMTHREAD,
       BLK_LABEL, BLK_END, BLK_UNKNOWN };

/* The entry of queue position i of capture thread t. */
#define QI(t, i) ((t)->q[(i) & ((t)->cap - 1)])

/* reader.c */
/* Marks r failed and sets err to NT_EFORMAT at byte offset off. Returns NT_EFORMAT. */
int ntr_err(nt_reader *r, nt_error *err, uint64_t off, const char *fmt, ...) NT_PRINTF(4, 5);
cthread *ntr_thread_slow(nt_reader *r, uint64_t id);
/* Forgets the region's stacks (a sequence point or the end of the region's dispatch). */
void ntr_reset_stacks(nt_reader *r);
/* The next block: 1 with its kind, 0 at the end, < 0 on error. */
int ntr_next_block(nt_reader *r, int *kind, nt_error *err);
/* Parses the current block of that kind (event blocks: their header only). */
int ntr_process_block(nt_reader *r, int kind, nt_error *err);
/* Consumes the current block from the input. */
void ntr_finish_block(nt_reader *r);

/* The capture thread with OS id `id`, created if new; NULL when out of memory. Nearly
 * every event has the same capture thread as the one before (the sampler's), so the
 * cache check is inline and the table lookup is not. */
static inline cthread *ntr_thread(nt_reader *r, uint64_t id)
{
	if (r->last_thread < r->nthreads && r->threads[r->last_thread].id == id)
		return &r->threads[r->last_thread];
	return ntr_thread_slow(r, id);
}

/* reader-event.c */
/* Decodes one event header at c (compressed: against and into *prev) into *e. */
int ntr_decode_header(nt_reader *r, nt_cursor *c, int compressed, qev *prev, qev *e,
		      nt_error *err);

/* reader-event-bmi2.c: reader-event.c built a second time for x86-64 CPUs whose BMI2
 * pext is fast, which packs a varint's 7-bit groups in one instruction. The reader picks
 * it at open (r->isa, from ntr_isa_pick()); both copies decode the same bytes into the
 * same events, and tests compare them (ntr_isa_generic forces the generic one). */
#if defined(__x86_64__) && defined(__GNUC__) /* GCC and clang */
#define NTR_HAVE_BMI2 1
int ntr_next_bmi2(nt_reader *r, const nt_event **out, nt_error *err);
#endif
/* 1 when nt_reader_next() should call the BMI2 copy on this CPU: BMI2 present, not an AMD
 * CPU before Zen 3 (family 19h), whose pext is microcoded (~250 cycles), and not
 * ntr_isa_generic. */
int ntr_isa_pick(void);
/* Non-zero: readers opened from now on take the generic copy (tests; not thread-safe). */
extern int ntr_isa_generic;

/* Accounts an event of record meta_last with sequence number s of capture thread t: the
 * record's and the thread's counts, and lost events (spec §6 "Dropped events"). */
static inline void ntr_account_event(nt_reader *r, cthread *t, uint32_t s)
{
	(*r->meta_last_events)++;
	t->samples += r->meta_last_sample;
	if (t->last_seq != 0 || r->v6) {
		uint32_t dropped = s - 1 - t->last_seq;
		/* A huge value means the number went backwards (thread id reuse); not a loss. */
		if (dropped != 0 && dropped < 0x80000000u) {
			t->lost += dropped;
			r->stats.lost_events += dropped;
		}
	} else if (r->chunk_track && !t->chunk_kind) {
		t->chunk_kind = 1;
		t->chunk_first = s;
	}
	t->last_seq = s;
}

/* reader-v6.c */
uint64_t ntr_v6_tid(nt_reader *r, uint64_t index);
/* OS thread id of V6 thread index `index` (its thread table row's, else the index), with
 * its process id (the row's, else the header's) and process index (nt_event's). */
uint64_t ntr_v6_thread(nt_reader *r, uint64_t index, uint64_t *pid, uint32_t *process_index);
int ntr_v6_trace_block(nt_reader *r, nt_cursor *c, nt_error *err);
int ntr_v6_thread_block(nt_reader *r, nt_cursor *c, nt_error *err);
int ntr_v6_label_block(nt_reader *r, nt_cursor *c, nt_error *err);

#endif
