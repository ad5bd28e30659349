/* SPDX-License-Identifier: MIT */
/* threads.c - the sampler's thread registry: which threads the process has
 * (/proc/self/task), a slot with its sample buffers for each (reused, never freed while
 * the handler may reach it), the tid -> slot map, and what is read about a thread from
 * /proc (its name, its stack mapping, whether the main thread has ended). Runs on the
 * sampler thread or in API calls, with nts_rt.mu held. */
#include "runtime.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t map_hash(int32_t tid, size_t cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

long nts_thr_get(int32_t tid)
{
	if (!nts_rt.map_cap)
		return -1;
	for (size_t i = map_hash(tid, nts_rt.map_cap);; i = (i + 1) & (nts_rt.map_cap - 1)) {
		if (nts_rt.map_tid[i] == 0)
			return -1;
		if (nts_rt.map_tid[i] == tid)
			return nts_rt.map_slot[i];
	}
}

static void map_put(int32_t tid, uint32_t slot)
{
	size_t i = map_hash(tid, nts_rt.map_cap);
	while (nts_rt.map_tid[i] != 0)
		i = (i + 1) & (nts_rt.map_cap - 1);
	nts_rt.map_tid[i] = tid;
	nts_rt.map_slot[i] = slot;
}

static void map_del(int32_t tid)
{
	size_t mask = nts_rt.map_cap - 1, i = map_hash(tid, nts_rt.map_cap);
	while (nts_rt.map_tid[i] != tid) {
		if (nts_rt.map_tid[i] == 0)
			return;
		i = (i + 1) & mask;
	}
	/* backward-shift deletion keeps probe chains intact without tombstones */
	for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		if (nts_rt.map_tid[j] == 0)
			break;
		size_t home = map_hash(nts_rt.map_tid[j], nts_rt.map_cap);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			nts_rt.map_tid[i] = nts_rt.map_tid[j];
			nts_rt.map_slot[i] = nts_rt.map_slot[j];
			i = j;
		}
	}
	nts_rt.map_tid[i] = 0;
}

void nts_read_comm(pid_t tid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	buf[0] = 0;
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = 0;
		return;
	}
	buf[n] = 0;
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
}

void nts_stack_mapping_of(uint64_t sp, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		unsigned long long a, b;
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s", &a, &b, perms) != 3)
			continue;
		if (sp >= a && sp < b) {
			if (perms[0] == 'r')
				*lo = a, *hi = b;
			break;
		}
	}
	fclose(f);
}

static nts_slot *slot_new(pid_t tid)
{
	uint32_t idx;
	if (nts_rt.nfree)
		idx = nts_rt.free_slots[--nts_rt.nfree];
	else if (nts_rt.slots_made < nts_g.nslots)
		idx = nts_rt.slots_made++;
	else
		return NULL;
	nts_slot *t = &nts_g.slots[idx];
	if (!t->recs) {
		t->backlog_round = calloc(NTS_BACKLOG, 3 * sizeof(uint64_t));
		t->backlog_mask = t->backlog_round ? t->backlog_round + NTS_BACKLOG : NULL;
		t->backlog_seq = t->backlog_round ? t->backlog_round + 2 * NTS_BACKLOG : NULL;
		t->recs = calloc(nts_g.nrecs, nts_g.rec_size);
		t->cache = calloc(1, sizeof *t->cache);
		t->last = calloc(1, nts_g.rec_size);
		if (!t->recs || !t->cache || !t->last || !t->backlog_round) {
			free(t->backlog_round);
			t->backlog_round = t->backlog_mask = t->backlog_seq = NULL;
			free(t->recs);
			free(t->cache);
			free(t->last);
			t->recs = NULL;
			t->cache = NULL;
			t->last = NULL;
			nts_rt.free_slots[nts_rt.nfree++] = idx;
			return NULL;
		}
	}
	/* Reset while no request can be outstanding for this slot (it was retired, or new). */
	atomic_store(&t->req_mask, 0);
	atomic_store(&t->pending, 0);
	atomic_store(&t->drop_count, 0);
	atomic_store(&t->drop_mask, 0);
	uint32_t h = atomic_load(&t->head);
	atomic_store(&t->tail, h);
	t->stack_lo = t->stack_hi = 0;
	t->have_last = 0;
	t->last_cpu = 0;
	t->idle_cpu = 0;
	t->named_mask = 0;
	t->name_ts = 0;
	t->name[0] = 0;
	t->req_ns = 0;
	t->nbacklog = 0;
	atomic_store(&t->tid, tid);
	atomic_store(&t->state, NTS_SLOT_ACTIVE);
	map_put(tid, idx);
	nts_rt.active[nts_rt.nactive++] = idx;
	return t;
}

void nts_thr_retire(uint32_t pos)
{
	uint32_t idx = nts_rt.active[pos];
	nts_slot *t = &nts_g.slots[idx];
	t->nbacklog = 0;
	map_del(atomic_load(&t->tid));
	atomic_store(&t->req_mask, 0);
	atomic_store(&t->tid, 0);
	atomic_store(&t->state, NTS_SLOT_FREE);
	nts_rt.active[pos] = nts_rt.active[--nts_rt.nactive];
	nts_rt.free_slots[nts_rt.nfree++] = idx;
}

/* 1 when the main thread has ended (a zombie until the whole process ends). */
static int main_is_zombie(void)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)nts_g.pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

uint64_t nts_thr_list(void)
{
	if (!nts_rt.task_dir) {
		nts_rt.task_dir = opendir("/proc/self/task");
		if (!nts_rt.task_dir)
			return 0;
	} else {
		rewinddir(nts_rt.task_dir);
	}
	uint64_t gen = ++nts_rt.sweep_gen;
	uint64_t over = 0;
	struct dirent *de;
	unsigned others = 0;
	int main_listed = 0;
	while ((de = readdir(nts_rt.task_dir)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);
		if (tid <= 0 || tid == nts_rt.sampler_tid)
			continue;
		if (tid == nts_g.pid) {
			/* an ended main thread stays listed (a zombie) while others run; a
			 * signal to it stays pending for ever: it is no longer sampled */
			main_listed = 1;
			if (nts_rt.main_gone)
				continue;
			long mi = nts_thr_get(tid);
			if (mi >= 0 && atomic_load(&nts_g.slots[mi].pending) && main_is_zombie()) {
				nts_rt.main_gone = 1;
				continue;
			}
		} else {
			others++;
		}
		long idx = nts_thr_get(tid);
		nts_slot *t = idx >= 0 ? &nts_g.slots[idx] : slot_new(tid);
		if (!t) {
			over++;
			continue;
		}
		t->seen_sweep = gen;
	}
	nts_rt.over_threads = over;
	/* The main thread ended with pthread_exit and every other thread has ended too: the
	 * process would wait for the sampler thread for ever (glibc exits when its last
	 * thread ends, and ours is one); the sampler thread finishes it (sampler_main). The
	 * main thread's state is read only while a request to it is pending (a zombie never
	 * answers), not at every sweep. */
	nts_rt.only_sampler = others == 0 && (!main_listed || nts_rt.main_gone);
	return gen;
}
