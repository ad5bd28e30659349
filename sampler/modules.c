/* SPDX-License-Identifier: MIT */
/* modules.c - the loaded objects of the process, from dl_iterate_phdr: the ModuleMap list
 * (path, base, size, file offset and build-id of each executable PT_LOAD segment) and the
 * snapshot the unwinder reads in the signal handler (segments sorted by address, each with
 * its object's .eh_frame_hdr lookup table).
 *
 * Runs on the sampler thread or in API calls, never in the handler: dl_iterate_phdr takes
 * the loader lock. A refresh costs one dl_iterate_phdr call that stops at the first object
 * when the loader's adds/subs counters did not move.
 * Not here: publishing the snapshot (sampler.c), reading it (unwind.c), writing ModuleMap
 * events (drain.c). */
#include "internal.h"

#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mod_build {
	nts_modlist *ml;
	nts_modseg *seg;
	size_t nseg, segcap;
	int oom;
	int first;
} mod_build;

typedef struct mod_count {
	unsigned long long adds, subs;
	int have;
} mod_count;

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	mod_count *c = data;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
		c->have = 1;
	}
	return 1; /* the counters are the same in every entry */
}

static void build_id_hex(const struct dl_phdr_info *info, const ElfW(Phdr) *ph, char out[65])
{
	const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
	size_t len = ph->p_memsz, off = 0;
	out[0] = 0;
	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		size_t nalign = ((size_t)namesz + 3) & ~(size_t)3;
		size_t dalign = ((size_t)descsz + 3) & ~(size_t)3;
		if (nalign > len - off - 12 || dalign > len - off - 12 - nalign)
			return;
		const uint8_t *name = p + off + 12, *desc = name + nalign;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
		    descsz > 0 && descsz <= 32) {
			static const char hex[] = "0123456789abcdef";
			for (uint32_t i = 0; i < descsz; i++) {
				out[2 * i] = hex[desc[i] >> 4];
				out[2 * i + 1] = hex[desc[i] & 15];
			}
			out[2 * descsz] = 0;
			return;
		}
		off += 12 + nalign + dalign;
	}
}

static char *main_path(void)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return strdup("");
	buf[n] = 0;
	return strdup(buf);
}

static int build_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	mod_build *b = data;
	(void)size;
	int first = b->first;
	b->first = 0;
	const ElfW(Phdr) *eh = NULL;
	char bid[65] = "";
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_EH_FRAME)
			eh = ph;
		else if (ph->p_type == PT_NOTE && !bid[0])
			build_id_hex(info, ph, bid);
	}
	/* the window of CFI reads: the readable PT_LOAD segment holding .eh_frame_hdr */
	uint64_t win_lo = 0, win_hi = 0;
	for (int i = 0; eh && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && eh->p_vaddr >= ph->p_vaddr &&
		    eh->p_vaddr - ph->p_vaddr < ph->p_memsz) {
			win_lo = info->dlpi_addr + ph->p_vaddr;
			win_hi = win_lo + ph->p_memsz;
			break;
		}
	}
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0)
			continue;
		nts_modlist *ml = b->ml;
		if (ml->n == ml->cap) {
			size_t ncap = ml->cap ? ml->cap * 2 : 32;
			nts_module *nm = realloc(ml->m, ncap * sizeof *nm);
			if (!nm) {
				b->oom = 1;
				return 1;
			}
			ml->m = nm;
			ml->cap = ncap;
		}
		if (b->nseg == b->segcap) {
			size_t ncap = b->segcap ? b->segcap * 2 : 32;
			nts_modseg *ns = realloc(b->seg, ncap * sizeof *ns);
			if (!ns) {
				b->oom = 1;
				return 1;
			}
			b->seg = ns;
			b->segcap = ncap;
		}
		nts_module *m = &ml->m[ml->n];
		m->base = info->dlpi_addr + ph->p_vaddr;
		m->size = ph->p_memsz;
		m->file_offset = ph->p_offset;
		m->path = (first && !name[0]) ? main_path() : strdup(name);
		if (!m->path) {
			b->oom = 1;
			return 1;
		}
		memcpy(m->build_id, bid, sizeof bid);
		nts_modseg *s = &b->seg[b->nseg++];
		s->lo = m->base;
		s->hi = m->base + m->size;
		s->module = (uint32_t)ml->n;
		nts_eh_hdr_parse(eh ? (const uint8_t *)(info->dlpi_addr + eh->p_vaddr) : NULL,
				 win_lo, win_hi, s);
		ml->n++;
	}
	return 0;
}

static int seg_cmp(const void *a, const void *b)
{
	const nts_modseg *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void nts_modlist_free(nts_modlist *ml)
{
	for (size_t i = 0; i < ml->n; i++)
		free(ml->m[i].path);
	free(ml->m);
	memset(ml, 0, sizeof *ml);
}

int nts_modules_refresh(nts_modlist *ml, nts_modsnap **snap_out, uint64_t gen)
{
	mod_count c = {0, 0, 0};
	dl_iterate_phdr(count_cb, &c);
	if (ml->m && c.have && c.adds == ml->adds && c.subs == ml->subs)
		return 0;
	nts_modlist nl = {NULL, 0, 0, c.adds, c.subs};
	mod_build b = {&nl, NULL, 0, 0, 0, 1};
	dl_iterate_phdr(build_cb, &b);
	if (b.oom) {
		nts_modlist_free(&nl);
		free(b.seg);
		return -1;
	}
	qsort(b.seg, b.nseg, sizeof *b.seg, seg_cmp);
	/* overlapping segments (should not happen) would break the binary search: drop */
	size_t k = 0;
	for (size_t i = 0; i < b.nseg; i++) {
		if (k && b.seg[i].lo < b.seg[k - 1].hi)
			continue;
		b.seg[k++] = b.seg[i];
	}
	nts_modsnap *snap = malloc(sizeof *snap + k * sizeof(nts_modseg));
	if (!snap) {
		nts_modlist_free(&nl);
		free(b.seg);
		return -1;
	}
	snap->gen = gen;
	snap->nseg = k;
	if (k)
		memcpy(snap->seg, b.seg, k * sizeof(nts_modseg));
	free(b.seg);
	/* Keep the modules already written by sessions first and in the same order, so a
	 * session's "modules written" count stays valid: append only the new ones. */
	if (ml->m) {
		for (size_t i = 0; i < nl.n; i++) {
			int known = 0;
			for (size_t j = 0; j < ml->n && !known; j++)
				known = ml->m[j].base == nl.m[i].base && ml->m[j].size == nl.m[i].size &&
					strcmp(ml->m[j].path, nl.m[i].path) == 0;
			if (known)
				continue;
			if (ml->n == ml->cap) {
				size_t ncap = ml->cap * 2;
				nts_module *nm = realloc(ml->m, ncap * sizeof *nm);
				if (!nm) {
					nts_modlist_free(&nl);
					free(snap);
					return -1;
				}
				ml->m = nm;
				ml->cap = ncap;
			}
			ml->m[ml->n++] = nl.m[i];
			nl.m[i].path = NULL;
		}
		/* snapshot module indexes refer to nl; they are only informative */
		nts_modlist_free(&nl);
		ml->adds = c.adds;
		ml->subs = c.subs;
	} else {
		*ml = nl;
	}
	*snap_out = snap;
	return 1;
}
