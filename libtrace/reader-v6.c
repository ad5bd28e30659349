/* SPDX-License-Identifier: MIT */
/* reader-v6.c - the V6 container's side blocks: Trace (the header's fields and
 * key/value pairs), Thread (index -> OS thread and process ids) and LabelList (activity
 * ids by label list id), and the thread-index lookups events use. */
#include "reader-int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

uint64_t ntr_v6_tid(nt_reader *r, uint64_t index)
{
	size_t i;
	if (nt_idmap_get(&r->v6thread_map, index, &i))
		return r->v6threads[i].os_tid;
	return index;
}

/* The process index of pid: dense, in order of first appearance; past the map's limit (or
 * out of memory) the last index. The last answer is kept (events of a row-less thread). */
static uint32_t proc_index(nt_reader *r, uint64_t pid)
{
	size_t i;
	if (r->proc_last && r->proc_last_pid == pid)
		return r->proc_last - 1;
	if (!nt_idmap_get(&r->proc_map, pid, &i)) {
		if (r->nprocs >= UINT32_MAX - 2 || nt_idmap_put(&r->proc_map, pid, r->nprocs))
			return r->nprocs ? (uint32_t)r->nprocs - 1 : 0;
		i = r->nprocs++;
	}
	r->proc_last = (uint32_t)i + 1;
	r->proc_last_pid = pid;
	return (uint32_t)i;
}

uint64_t ntr_v6_thread(nt_reader *r, uint64_t index, uint64_t *pid, uint32_t *process_index)
{
	size_t i;
	if (!nt_idmap_get(&r->v6thread_map, index, &i)) {
		*pid = r->hdr.process_id;
		*process_index = proc_index(r, *pid);
		return index;
	}
	v6thread *t = &r->v6threads[i];
	*pid = t->os_pid ? t->os_pid : r->hdr.process_id;
	if (!t->proc || t->proc_pid != *pid) { /* the process index: a lookup per row */
		t->proc = proc_index(r, *pid) + 1;
		t->proc_pid = *pid;
	}
	*process_index = t->proc - 1;
	return t->os_tid;
}

static int v6_string(nt_cursor *c, char *buf, size_t bufsize)
{
	uint32_t n;
	const uint8_t *p;
	if (nt_cur_varu32(c, &n) || nt_cur_bytes(c, n, &p))
		return -1;
	size_t k = n < bufsize - 1 ? n : bufsize - 1;
	memcpy(buf, p, k);
	buf[k] = '\0';
	return 0;
}

int ntr_v6_trace_block(nt_reader *r, nt_cursor *c, nt_error *err)
{
	uint64_t u;
	uint32_t ptr, kvs;
	for (int i = 0; i < 8; i++) {
		uint16_t v;
		if (nt_cur_u16(c, &v))
			goto trunc;
		r->hdr.sync_time_utc[i] = v;
	}
	if (nt_cur_u64(c, &u))
		goto trunc;
	r->hdr.sync_qpc = u;
	if (nt_cur_u64(c, &u))
		goto trunc;
	r->hdr.qpc_frequency = u;
	if (nt_cur_u32(c, &ptr) || nt_cur_u32(c, &kvs))
		goto trunc;
	r->hdr.pointer_size = ptr;
	if (ptr != 4 && ptr != 8)
		return ntr_err(r, err, nt_cur_offset(c) - 8, "pointer size %" PRIu32 " is not 4 or 8", ptr);
	if (r->hdr.qpc_frequency == 0)
		return ntr_err(r, err, nt_cur_offset(c), "tick frequency is 0");
	/* Each pair takes at least 2 bytes, so the count is bounded by the block. */
	if (kvs > nt_cur_left(c) / 2)
		return ntr_err(r, err, nt_cur_offset(c) - 4,
			       "key/value count %" PRIu32 " exceeds the Trace block", kvs);
	for (uint32_t i = 0; i < kvs; i++) {
		char k[64], v[64];
		if (v6_string(c, k, sizeof k) || v6_string(c, v, sizeof v))
			goto trunc;
		unsigned long val = strtoul(v, NULL, 10);
		if (strcmp(k, "ProcessId") == 0)
			r->hdr.process_id = (uint32_t)val;
		else if (strcmp(k, "HardwareThreadCount") == 0)
			r->hdr.processors = (uint32_t)val;
		else if (strcmp(k, "ExpectedCPUSamplingRate") == 0)
			r->hdr.expected_sampling_ns = (uint32_t)val;
	}
	return 0;
trunc:
	return ntr_err(r, err, nt_cur_offset(c), "Trace block ends inside a field");
}

int ntr_v6_thread_block(nt_reader *r, nt_cursor *c, nt_error *err)
{
	while (nt_cur_left(c) > 0) {
		uint16_t rs;
		const uint8_t *p;
		uint64_t off = nt_cur_offset(c);
		if (nt_cur_u16(c, &rs) || nt_cur_bytes(c, rs, &p))
			return ntr_err(r, err, off, "thread row exceeds the block");
		nt_cursor rc;
		nt_cur_init(&rc, p, rs, off + 2);
		v6thread t = {0, 0, 0, 0, 0};
		if (nt_cur_varu64(&rc, &t.index))
			return ntr_err(r, err, off, "bad thread index");
		t.os_tid = t.index;
		while (nt_cur_left(&rc) > 0) {
			uint8_t kind;
			uint64_t v;
			char s1[8];
			nt_cur_u8(&rc, &kind);
			if (kind == 1) {
				if (v6_string(&rc, s1, sizeof s1))
					return ntr_err(r, err, nt_cur_offset(&rc), "bad thread name");
			} else if (kind == 2 || kind == 3) {
				if (nt_cur_varu64(&rc, &v))
					return ntr_err(r, err, nt_cur_offset(&rc), "bad thread id");
				if (kind == 2)
					t.os_pid = v;
				else
					t.os_tid = v;
			} else if (kind == 4) {
				if (v6_string(&rc, s1, sizeof s1) || v6_string(&rc, s1, sizeof s1))
					return ntr_err(r, err, nt_cur_offset(&rc), "bad thread key/value");
			} else {
				break; /* unknown optional entry: the rest of the row is ignored */
			}
		}
		size_t i;
		if (!nt_idmap_get(&r->v6thread_map, t.index, &i)) {
			i = r->nv6threads;
			if (nt_grow((void **)&r->v6threads, &r->v6threads_cap, i + 1, sizeof(v6thread)) ||
			    nt_idmap_put(&r->v6thread_map, t.index, i))
				return nt_fail(err, NT_ENOMEM, off, "cannot grow thread table");
			r->nv6threads++;
		}
		r->v6threads[i] = t;
	}
	return 0;
}

int ntr_v6_label_block(nt_reader *r, nt_cursor *c, nt_error *err)
{
	uint32_t first, count;
	if (nt_cur_u32(c, &first) || nt_cur_u32(c, &count))
		return ntr_err(r, err, nt_cur_offset(c), "label list block ends inside its header");
	/* Each list takes at least one byte. Indexes below first that were never defined are
	 * filled with empty lists, so that gap is bounded by this block's size as well (the
	 * 16M-entry cap alone let a 14-byte block allocate 512 MB). */
	if (first == 0 || count > nt_cur_left(c) || (uint64_t)first + count > 16u << 20 ||
	    ((uint64_t)first - 1 > r->nlabels && (uint64_t)first - 1 - r->nlabels > c->len))
		return ntr_err(r, err, nt_cur_offset(c) - 8, "bad label list range %" PRIu32 "+%" PRIu32,
			       first, count);
	if (nt_grow((void **)&r->labels, &r->labels_cap, (size_t)first - 1 + count, sizeof(labellist)))
		return nt_fail(err, NT_ENOMEM, nt_cur_offset(c), "cannot grow label table");
	while (r->nlabels < (size_t)first - 1 + count)
		memset(&r->labels[r->nlabels++], 0, sizeof(labellist));
	for (uint32_t k = 0; k < count; k++) {
		labellist *L = &r->labels[first - 1 + k];
		memset(L, 0, sizeof *L);
		for (;;) {
			uint8_t kind;
			const uint8_t *g;
			uint64_t v;
			char s[8];
			if (nt_cur_u8(c, &kind))
				return ntr_err(r, err, nt_cur_offset(c), "label list ends early");
			int last = kind & 0x80;
			switch (kind & 0x7F) {
			case 1:
			case 2:
			case 3:
				if (nt_cur_bytes(c, 16, &g))
					return ntr_err(r, err, nt_cur_offset(c), "label ends early");
				if ((kind & 0x7F) == 1)
					memcpy(L->activity_id, g, 16);
				else if ((kind & 0x7F) == 2)
					memcpy(L->related_activity_id, g, 16);
				break;
			case 4:
			case 8:
				if (nt_cur_skip(c, 8))
					return ntr_err(r, err, nt_cur_offset(c), "label ends early");
				break;
			case 5:
				if (v6_string(c, s, sizeof s) || v6_string(c, s, sizeof s))
					return ntr_err(r, err, nt_cur_offset(c), "bad label string");
				break;
			case 6:
				if (v6_string(c, s, sizeof s) || nt_cur_varu64(c, &v))
					return ntr_err(r, err, nt_cur_offset(c), "bad label value");
				break;
			case 7:
			case 9:
			case 10:
				if (nt_cur_skip(c, 1))
					return ntr_err(r, err, nt_cur_offset(c), "label ends early");
				break;
			default:
				return ntr_err(r, err, nt_cur_offset(c) - 1, "unknown label kind %u",
					       kind & 0x7F);
			}
			if (last)
				break;
		}
	}
	return 0;
}
