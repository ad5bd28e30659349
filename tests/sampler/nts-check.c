/* SPDX-License-Identifier: MIT */
/* nts-check.c - reads a trace written by the sampler (public libnettrace API only) and
 * prints what the sampler tests check, so the shell tests need only awk:
 *
 *   nts-check samples FILE   one line per ThreadSample, in file order:
 *                            "TID STATE CPU_NS TS_NS DEPTH frame0;frame1;..." (leaf first)
 *   nts-check summary FILE   key=value lines: sample, round (distinct sample times) and
 *                            thread counts, the last
 *                            SessionSettings (with its Backend) and SamplerStats, module and name counts,
 *                            the payload version, the trace end state
 *
 * Frames are symbolised here, independently of the toolkit's own native symbolisation:
 * an address is mapped through the trace's ModuleMap events to a file offset, then to a
 * virtual address of that ELF file (its PT_LOAD headers) and to the function symbol
 * (.symtab, else .dynsym) that contains it; return addresses (frames after the first) are
 * looked up at address - 1. Unresolved frames print as "module+0xOFFSET" or "?". */
#define _GNU_SOURCE 1
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nettrace.h"

typedef struct sym {
	uint64_t lo, hi;
	const char *name;
} sym;

typedef struct elf_file {
	char *path;
	uint8_t *map;
	size_t len;
	Elf64_Phdr *ph;
	int phnum;
	sym *syms;
	size_t nsyms;
} elf_file;

typedef struct module {
	uint64_t base, size, off;
	char path[1024];
	char build_id[80];
	elf_file *elf;
} module;

static module *mods;
static size_t nmods, capmods;
static elf_file **elfs;
static size_t nelfs;

static int sym_cmp(const void *a, const void *b)
{
	const sym *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void load_syms(elf_file *e, uint32_t type)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)e->map;
	if (eh->e_shoff == 0 || eh->e_shoff > e->len ||
	    (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > e->len - eh->e_shoff)
		return;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(e->map + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (sh[i].sh_offset > e->len || sh[i].sh_size > e->len - sh[i].sh_offset ||
		    str->sh_offset > e->len || str->sh_size > e->len - str->sh_offset)
			continue;
		const Elf64_Sym *s = (const Elf64_Sym *)(e->map + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
		const char *strtab = (const char *)(e->map + str->sh_offset);
		e->syms = realloc(e->syms, (e->nsyms + n) * sizeof(sym));
		for (size_t k = 0; k < n; k++) {
			int t = ELF64_ST_TYPE(s[k].st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) || !s[k].st_value ||
			    s[k].st_name >= str->sh_size)
				continue;
			sym *y = &e->syms[e->nsyms++];
			y->lo = s[k].st_value;
			y->hi = s[k].st_value + (s[k].st_size ? s[k].st_size : 1);
			y->name = strtab + s[k].st_name;
		}
	}
}

static elf_file *open_elf(const char *path)
{
	for (size_t i = 0; i < nelfs; i++)
		if (strcmp(elfs[i]->path, path) == 0)
			return elfs[i];
	elf_file *e = calloc(1, sizeof *e);
	e->path = strdup(path);
	elfs = realloc(elfs, (nelfs + 1) * sizeof *elfs);
	elfs[nelfs++] = e;
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		if (fd >= 0)
			close(fd);
		return e;
	}
	e->len = (size_t)st.st_size;
	e->map = mmap(NULL, e->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (e->map == MAP_FAILED || memcmp(e->map, ELFMAG, SELFMAG) != 0 ||
	    e->map[EI_CLASS] != ELFCLASS64) {
		e->map = NULL;
		return e;
	}
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)e->map;
	if (eh->e_phoff && eh->e_phoff < e->len &&
	    (size_t)eh->e_phnum * sizeof(Elf64_Phdr) <= e->len - eh->e_phoff) {
		e->ph = (Elf64_Phdr *)(e->map + eh->e_phoff);
		e->phnum = eh->e_phnum;
	}
	load_syms(e, SHT_SYMTAB);
	if (!e->nsyms)
		load_syms(e, SHT_DYNSYM);
	qsort(e->syms, e->nsyms, sizeof(sym), sym_cmp);
	return e;
}

/* Name of the function containing the file offset off of e, or NULL. */
static const char *elf_name(const elf_file *e, uint64_t off)
{
	if (!e->map || !e->ph)
		return NULL;
	uint64_t va = 0;
	int found = 0;
	for (int i = 0; i < e->phnum && !found; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type == PT_LOAD && off >= p->p_offset && off < p->p_offset + p->p_filesz) {
			va = off - p->p_offset + p->p_vaddr;
			found = 1;
		}
	}
	if (!found)
		return NULL;
	size_t lo = 0, hi = e->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e->syms[mid].lo <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the last symbol starting at or before va that contains it (sizes may overlap) */
	for (size_t i = lo; i > 0 && lo - i < 16; i--) {
		const sym *y = &e->syms[i - 1];
		if (va >= y->lo && va < y->hi)
			return y->name;
	}
	return NULL;
}

/* Frame names are truncated to the buffer (a path is at most 1023 bytes here). */
static void frame_name(uint64_t ip, int is_ra, char *buf, size_t len)
{
	uint64_t a = is_ra ? ip - 1 : ip;
	for (size_t i = 0; i < nmods; i++) {
		module *m = &mods[i];
		if (a < m->base || a - m->base >= m->size)
			continue;
		if (!m->elf && m->path[0] == '/')
			m->elf = open_elf(m->path);
		uint64_t off = a - m->base + m->off;
		const char *name = m->elf ? elf_name(m->elf, off) : NULL;
		const char *base = strrchr(m->path, '/');
		base = base ? base + 1 : m->path;
		if (name)
			snprintf(buf, len, "%.400s", name);
		else
			snprintf(buf, len, "%.400s+0x%" PRIx64, base, off);
		return;
	}
	snprintf(buf, len, "?");
}

static uint64_t field_u(const nt_event *ev, uint32_t psz, const char *name)
{
	nt_value v;
	return nt_event_field(ev, psz, name, &v) == 1 ? v.u : 0;
}

static double field_d(const nt_event *ev, uint32_t psz, const char *name)
{
	nt_value v;
	return nt_event_field(ev, psz, name, &v) == 1 ? v.d : 0;
}

static void field_s(const nt_event *ev, uint32_t psz, const char *name, char *buf, size_t len)
{
	nt_value v;
	buf[0] = 0;
	if (nt_event_field(ev, psz, name, &v) == 1 && v.raw)
		nt_utf16z_to_utf8(v.raw, v.raw_len, buf, len);
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "samples") && strcmp(argv[1], "summary"))) {
		fprintf(stderr, "usage: nts-check samples|summary FILE\n");
		return 1;
	}
	int samples_mode = strcmp(argv[1], "samples") == 0;
	nt_reader *r;
	nt_error err;
	nt_error_clear(&err);
	nt_reader_opts ro = {sizeof ro, NT_READ_FILE_ORDER, NULL};
	if (nt_reader_open_file(&r, argv[2], &ro, &err) < 0) {
		fprintf(stderr, "nts-check: %s: %s\n", argv[2], err.msg);
		return 2;
	}
	uint32_t psz = nt_reader_header(r)->pointer_size;
	const nt_event *ev;
	int rc;
	uint64_t nsamples = 0, nsettings = 0, nstats = 0, nnames = 0, version = 0;
	uint64_t rounds = 0, last_ts = UINT64_MAX; /* distinct sample times: sampling rounds */
	uint64_t tids[4096];
	size_t ntids = 0;
	uint64_t states[5] = {0};
	char settings[640] = "", stats[512] = "";
	while ((rc = nt_reader_next(r, &ev, &err)) == 1) {
		const nt_metadata *m = ev->meta;
		if (!m)
			continue;
		if (strcmp(m->provider, NT_PROVIDER_NTSAMPLER) == 0) {
			char s1[400], s2[64], s3[64];
			switch (m->event_id) {
			case NT_NTS_MODULE_MAP:
				if (nmods == capmods) {
					capmods = capmods ? 2 * capmods : 64;
					mods = realloc(mods, capmods * sizeof *mods);
				}
				memset(&mods[nmods], 0, sizeof mods[nmods]);
				mods[nmods].base = field_u(ev, psz, "Base");
				mods[nmods].size = field_u(ev, psz, "Size");
				mods[nmods].off = field_u(ev, psz, "FileOffset");
				field_s(ev, psz, "Path", mods[nmods].path, sizeof mods[nmods].path);
				field_s(ev, psz, "BuildId", mods[nmods].build_id,
					sizeof mods[nmods].build_id);
				nmods++;
				break;
			case NT_NTS_THREAD_NAME:
				nnames++;
				field_s(ev, psz, "Name", s1, sizeof s1);
				if (samples_mode)
					printf("# name %" PRIu64 " %s\n", field_u(ev, psz, "ThreadId"), s1);
				break;
			case NT_NTS_SESSION_SETTINGS:
				nsettings++;
				field_s(ev, psz, "Schedule", s1, sizeof s1);
				field_s(ev, psz, "Mode", s2, sizeof s2);
				field_s(ev, psz, "Backend", s3, sizeof s3);
				snprintf(settings, sizeof settings,
					 "interval_ns=%" PRIu64 "\nschedule=%s\nseed=%" PRIu64 "\nmode=%s\n"
					 "backend=%s\n",
					 field_u(ev, psz, "IntervalNs"), s1, field_u(ev, psz, "Seed"), s2, s3);
				break;
			case NT_NTS_SAMPLER_STATS:
				nstats++;
				snprintf(stats, sizeof stats,
					 "stats_samples=%" PRIu64 "\nstats_dropped=%" PRIu64
					 "\nstats_late=%" PRIu64 "\nstats_missed=%" PRIu64
					 "\nstats_hz=%.4f\n",
					 field_u(ev, psz, "Samples"), field_u(ev, psz, "Dropped"),
					 field_u(ev, psz, "Late"), field_u(ev, psz, "Missed"),
					 field_d(ev, psz, "RealizedHz"));
				break;
			}
			continue;
		}
		uint32_t type;
		if (!nt_event_is_sample(ev, &type))
			continue;
		nsamples++;
		if (ev->timestamp != last_ts)
			rounds++;
		last_ts = ev->timestamp;
		version = m->version;
		uint64_t st = field_u(ev, psz, "State");
		if (st < 5)
			states[st]++;
		size_t k;
		for (k = 0; k < ntids && tids[k] != ev->thread_id; k++)
			;
		if (k == ntids && ntids < 4096)
			tids[ntids++] = ev->thread_id;
		if (samples_mode) {
			printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu32 " ",
			       ev->thread_id, st, field_u(ev, psz, "CpuTimeNs"), (uint64_t)ev->time_ns,
			       ev->stack_depth);
			for (uint32_t d = 0; d < ev->stack_depth; d++) {
				char name[512];
				frame_name(ev->stack[d], d > 0, name, sizeof name);
				printf("%s%s", d ? ";" : "", name);
			}
			printf("\n");
		}
	}
	if (rc < 0) {
		fprintf(stderr, "nts-check: %s: %s\n", argv[2], err.msg);
		nt_reader_free(r);
		return 2;
	}
	const nt_reader_stats *rs = nt_reader_stats_get(r);
	if (!samples_mode) {
		printf("samples=%" PRIu64 "\nrounds=%" PRIu64 "\nthreads=%zu\nsample_version=%" PRIu64
		       "\n",
		       nsamples, rounds, ntids, version);
		printf("state_unknown=%" PRIu64 "\nstate_running=%" PRIu64 "\nstate_blocked=%" PRIu64
		       "\n",
		       states[0], states[1], states[2]);
		printf("modules=%zu\nthread_names=%" PRIu64 "\nsettings_events=%" PRIu64
		       "\nstats_events=%" PRIu64 "\n",
		       nmods, nnames, nsettings, nstats);
		int main_bid = nmods && mods[0].build_id[0];
		printf("main_module=%.1000s\nmain_build_id=%s\n", nmods ? mods[0].path : "",
		       main_bid ? "yes" : "no");
		printf("%s%s", settings, stats);
		printf("lost_events=%" PRIu64 "\ntruncated=%d\nend_tag=%d\n", rs->lost_events,
		       rs->truncated, rs->end_tag);
	}
	nt_reader_free(r);
	return 0;
}
