/* SPDX-License-Identifier: MIT */
/* mknative.c - writes the synthetic native-sampling trace of t110-fold-native.sh with the
 * public writer API, as the sampler records one (doc/format/sampler-events.md): a
 * libnettrace-Sampler ModuleMap event for each PT_LOAD segment of BINARY mapped at BIAS
 * (its build id read from the file), one for a library that does not exist, then
 * SampleProfiler ThreadSample events (type External) whose stacks are addresses in them.
 *
 *   mknative OUT BINARY STACK...
 *
 * Each STACK is a comma-separated list of hex addresses, leaf first, as the sampler
 * records a stack: the leaf is where the thread was, the others are return addresses. An
 * address is an address in BINARY (as nm and addr2line print them), or "gone+OFF" (an
 * offset in the missing library), or "nomodule" (an address no module covers). Each stack
 * is sampled twice, 1 ms apart. Exit status: 0, 1 usage, 2 unreadable BINARY, 3 write error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "nettrace.h"

#define PROG "mknative"
#define BIAS 0x555555554000ull
#define GONE_BASE 0x7f3300000000ull
#define GONE_PATH "/nonexistent/lib/libgone.so.1"
#define NOMODULE 0x10ull
#define MAX_FRAMES 64

static uint8_t pl[4096];
static size_t pn;

static void put_u64(uint64_t v)
{
	for (int i = 0; i < 8; i++)
		pl[pn++] = (uint8_t)(v >> (8 * i));
}

static void put_str(const char *s)
{
	for (; *s && pn < sizeof pl - 4; s++) {
		pl[pn++] = (uint8_t)*s;
		pl[pn++] = 0;
	}
	pl[pn++] = 0;
	pl[pn++] = 0;
}

static int module_event(nt_writer *w, uint32_t mid, uint64_t ts, uint64_t base, uint64_t size,
			uint64_t off, const char *path, const char *bid, nt_error *err)
{
	pn = 0;
	put_u64(base);
	put_u64(size);
	put_u64(off);
	put_str(path);
	put_str(bid);
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = mid;
	e.thread_id = e.capture_thread_id = 7;
	e.timestamp = ts;
	e.payload = pl;
	e.payload_len = (uint32_t)pn;
	return nt_writer_write_event(w, &e, err);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "Usage: " PROG " OUT BINARY STACK...\n");
		return 1;
	}
	const char *out = argv[1], *bin = argv[2];
	elf_version(EV_CURRENT);
	int fd = open(bin, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t nph = 0;
	if (!elf || elf_getphdrnum(elf, &nph) != 0) {
		fprintf(stderr, PROG ": %s: not an ELF file\n", bin);
		return 2;
	}
	char bid[129] = "";
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		size_t off = 0, no, dof;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &no, &dof)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= 64)
				for (size_t k = 0; k < nh.n_descsz; k++)
					snprintf(bid + 2 * k, 3, "%02x",
						 ((const uint8_t *)d->d_buf)[dof + k]);
	}

	FILE *fp = fopen(out, "wb");
	if (!fp) {
		fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
		return 3;
	}
	nt_sink sink = nt_sink_stdio(fp);
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.sync_qpc = 1000000;
	h.qpc_frequency = 1000000000;
	h.pointer_size = 8;
	h.process_id = 4242;
	h.processors = 2;
	h.expected_sampling_ns = 1000000;
	static const nt_field mfields[] = {
		{"Base", NT_TYPE_U64, 0, 0, NULL, 0},       {"Size", NT_TYPE_U64, 0, 0, NULL, 0},
		{"FileOffset", NT_TYPE_U64, 0, 0, NULL, 0}, {"Path", NT_TYPE_STRING, 0, 0, NULL, 0},
		{"BuildId", NT_TYPE_STRING, 0, 0, NULL, 0},
	};
	nt_metadata_desc dm = {NT_PROVIDER_NTSAMPLER, NT_NTS_MODULE_MAP, "ModuleMap", 0, 0, 4, 0,
			       mfields, 5};
	nt_metadata_desc ds = {NT_PROVIDER_SAMPLER, 0, "ThreadSample", 0, 0, 5, 0, NULL, 0};
	nt_writer *w = NULL;
	nt_error err = {0};
	uint32_t mid, sid;
	int rc = nt_writer_open(&w, &sink, &h, NULL, &err);
	if (rc == 0)
		rc = nt_writer_add_metadata(w, &dm, &mid, &err);
	if (rc == 0)
		rc = nt_writer_add_metadata(w, &ds, &sid, &err);
	uint64_t ts = h.sync_qpc;
	for (size_t i = 0; rc == 0 && i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz)
			rc = module_event(w, mid, ts, BIAS + ph.p_vaddr, ph.p_filesz, ph.p_offset,
					  bin, bid, &err);
	}
	if (rc == 0)
		rc = module_event(w, mid, ts, GONE_BASE, 0x100000, 0, GONE_PATH, "", &err);
	for (int s = 3; rc == 0 && s < argc; s++) {
		uint64_t ips[MAX_FRAMES];
		uint32_t n = 0;
		char *copy = strdup(argv[s]), *save = NULL;
		for (char *tok = strtok_r(copy, ",", &save); tok && n < MAX_FRAMES;
		     tok = strtok_r(NULL, ",", &save)) {
			if (strcmp(tok, "nomodule") == 0)
				ips[n++] = NOMODULE;
			else if (strncmp(tok, "gone+", 5) == 0)
				ips[n++] = GONE_BASE + strtoull(tok + 5, NULL, 16);
			else
				ips[n++] = BIAS + strtoull(tok, NULL, 16);
		}
		free(copy);
		uint8_t type[4] = {NT_SAMPLE_EXTERNAL, 0, 0, 0};
		for (int k = 0; rc == 0 && k < 2; k++) {
			nt_event_desc e;
			memset(&e, 0, sizeof e);
			e.metadata_id = sid;
			e.thread_id = 4243;
			e.capture_thread_id = 7;
			e.timestamp = ts += 1000000;
			e.stack = ips;
			e.stack_depth = n;
			e.payload = type;
			e.payload_len = 4;
			rc = nt_writer_write_event(w, &e, &err);
		}
	}
	if (rc == 0) {
		rc = nt_writer_close(w, &err);
		w = NULL;
	}
	nt_writer_free(w);
	elf_end(elf);
	close(fd);
	if (fclose(fp) != 0 && rc == 0) {
		fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
		return 3;
	}
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 3;
	}
	return 0;
}
