/* SPDX-License-Identifier: MIT */
/* test-dwarf.c - unit tests of native symbols (sym-native.c) on a real binary:
 * tests/unit/test-dwarf-prog, built by make check with "-g -O2" from dwarf-prog.c,
 * dwarf-prog2.c and dwarf-prog.h (static inline functions nested four deep, inline code
 * from a header, two compile units).
 *
 * Every byte address inside its function symbols (a few thousand) is resolved through a
 * module map built from its PT_LOAD headers, as the sampler records a loaded module, and
 * compared with the reference symbolizers installed: eu-addr2line -i -f (elfutils),
 * addr2line -i -f (binutils) and llvm-symbolizer: function, inline chain (innermost
 * first) and file:line (and column, where the tool prints one). Each address must agree
 * with at least one of them, and with the best of them on 99% of the addresses (the tools
 * themselves disagree on a few addresses of real binaries: eu-addr2line drops correctly
 * nested inline instances now and then, binutils 2.40 reads DWARF 5 rows before the first
 * DW_LNS_set_file as the primary file, llvm-symbolizer names the outermost frame after the
 * ELF symbol, e.g. "f.part.0"). The test skips when none is installed.
 * Then: cache and batch, frame names, ModuleMap events, build-id mismatch, stripped
 * copies (ELF symbols only; nothing: module+0xoffset), missing, non-ELF and non-regular
 * files. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "nettrace.h"
#include "tap.h"

#define BIAS 0x7f1200000000ull /* where the test maps the binary */
#define MAX_ADDRS 6000u        /* addresses compared with the tools (evenly spread) */

static char prog[4096];    /* path of test-dwarf-prog */
static char tmpdir[4096];  /* scratch directory, removed at the end */

/* snprintf that reports truncation (paths come from the environment). */
static __attribute__((format(printf, 3, 4))) int fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* ------------------------------------------------------------------ the ELF file */

typedef struct tsym {
	uint64_t addr, size;
	char *name;
} tsym;

typedef struct telf {
	tsym *syms;        /* function symbols with a size */
	size_t nsyms;
	uint64_t lo[16], filesz[16], off[16]; /* PT_LOAD: vaddr, file size, offset */
	size_t nloads;
	char build_id[129];
} telf;

static int read_elf(const char *path, telf *t)
{
	memset(t, 0, sizeof *t);
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		close(fd);
		return -1;
	}
	size_t nph = 0;
	elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph && t->nloads < 16; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz) {
			t->lo[t->nloads] = ph.p_vaddr;
			t->filesz[t->nloads] = ph.p_filesz;
			t->off[t->nloads++] = ph.p_offset;
		}
	}
	size_t cap = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		if (sh.sh_type == SHT_NOTE) {
			size_t off = 0, no, dof;
			GElf_Nhdr nh;
			while ((off = gelf_getnote(d, off, &nh, &no, &dof)) > 0)
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= 64)
					for (size_t k = 0; k < nh.n_descsz; k++)
						sprintf(t->build_id + 2 * k, "%02x",
							((const uint8_t *)d->d_buf)[dof + k]);
		}
		if (sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || s.st_size == 0)
				continue;
			if (t->nsyms == cap) {
				cap = cap ? 2 * cap : 64;
				t->syms = realloc(t->syms, cap * sizeof(tsym));
			}
			t->syms[t->nsyms].addr = s.st_value;
			t->syms[t->nsyms].size = s.st_size;
			t->syms[t->nsyms++].name = strdup(elf_strptr(elf, sh.sh_link, s.st_name));
		}
	}
	elf_end(elf);
	close(fd);
	return 0;
}

static void free_elf(telf *t)
{
	for (size_t i = 0; i < t->nsyms; i++)
		free(t->syms[i].name);
	free(t->syms);
}

/* The function symbol covering addr, or NULL. */
static const char *sym_at(const telf *t, uint64_t addr)
{
	for (size_t i = 0; i < t->nsyms; i++)
		if (addr - t->syms[i].addr < t->syms[i].size)
			return t->syms[i].name;
	return NULL;
}

/* A resolver with path mapped at BIAS, segment by segment, as a process maps it. */
static nt_native *map_at_bias_flags(const telf *t, const char *path, const char *build_id,
				    unsigned flags)
{
	nt_native *nn = NULL;
	nt_error err = {0};
	nt_native_opts o = {sizeof o, NULL, NULL, flags, NULL};
	if (nt_native_new(&nn, &o, &err))
		return NULL;
	for (size_t i = 0; i < t->nloads; i++)
		if (nt_native_add_module(nn, BIAS + t->lo[i], t->filesz[i], t->off[i], path,
					 build_id, &err)) {
			nt_native_free(nn);
			return NULL;
		}
	return nn;
}

static nt_native *map_at_bias(const telf *t, const char *path, const char *build_id)
{
	return map_at_bias_flags(t, path, build_id, 0);
}

/* ------------------------------------------------------------------ reference tools */

typedef struct rframe {
	char *func;        /* NULL for "??" */
	char *file;        /* NULL for "??" */
	unsigned line, col;
} rframe;

typedef struct rans {
	rframe *f;
	size_t n, cap;
} rans;

enum { T_EU, T_GNU, T_LLVM, T_COUNT };
static const char *const tool_name[T_COUNT] = {"eu-addr2line", "addr2line", "llvm-symbolizer"};

static int have_prog(const char *name)
{
	char cmd[256];
	fmt(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* Parses "FILE:LINE[:COL]" (GNU: "FILE:LINE (discriminator N)", "??:?", "FILE:?"). */
static void parse_loc(char *s, rframe *f, int gnu)
{
	char *disc = strstr(s, " (discriminator ");
	if (disc)
		*disc = '\0';
	f->line = f->col = 0;
	f->file = NULL;
	char *c1 = strrchr(s, ':');
	if (!c1)
		return;
	char *end;
	unsigned long a = strtoul(c1 + 1, &end, 10);
	int a_ok = end != c1 + 1 && *end == '\0';
	*c1 = '\0';
	char *c2 = gnu ? NULL : strrchr(s, ':');
	unsigned long b = 0;
	int b_ok = 0;
	if (c2) {
		b = strtoul(c2 + 1, &end, 10);
		b_ok = end != c2 + 1 && *end == '\0';
	}
	if (b_ok) {
		*c2 = '\0';
		f->line = (unsigned)b;
		f->col = a_ok ? (unsigned)a : 0;
	} else {
		f->line = a_ok ? (unsigned)a : 0;
	}
	if (strcmp(s, "??") != 0)
		f->file = strdup(s);
}

/* Runs tool on the addresses in addrfile; ans[i] gets the answer for address i. Returns
 * 0, or -1 when the output does not have one answer per address. */
static int run_tool(int tool, const char *bin, const char *addrfile, rans *ans, size_t n)
{
	char cmd[8192];
	int bad;
	if (tool == T_EU)
		bad = fmt(cmd, sizeof cmd, "eu-addr2line -a -i -f -e '%s' <'%s'", bin, addrfile);
	else if (tool == T_GNU)
		bad = fmt(cmd, sizeof cmd, "addr2line -a -i -f -e '%s' <'%s'", bin, addrfile);
	else
		bad = fmt(cmd, sizeof cmd, "llvm-symbolizer --print-address --obj='%s' <'%s'", bin,
			  addrfile);
	FILE *p = bad ? NULL : popen(cmd, "r");
	if (!p)
		return -1;
	char line[8192];
	long cur = -1;
	int want_loc = 0;
	while (fgets(line, sizeof line, p)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '\0')
			continue;
		if (line[0] == '0' && line[1] == 'x' && !want_loc &&
		    strspn(line + 2, "0123456789abcdef") == strlen(line + 2)) {
			cur++;
			continue;
		}
		if (cur < 0 || (size_t)cur >= n)
			break;
		rans *a = &ans[cur];
		if (!want_loc) {
			if (a->n == a->cap) {
				a->cap = a->cap ? 2 * a->cap : 4;
				a->f = realloc(a->f, a->cap * sizeof(rframe));
			}
			char *in = strstr(line, " inlined at "); /* eu: "f inlined at X in g" */
			if (in)
				*in = '\0';
			a->f[a->n].func = strcmp(line, "??") ? strdup(line) : NULL;
			want_loc = 1;
		} else {
			parse_loc(line, &a->f[a->n++], tool == T_GNU);
			want_loc = 0;
		}
	}
	int rc = pclose(p);
	return rc == 0 && cur + 1 == (long)n ? 0 : -1;
}

static void free_ans(rans *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < a[i].n; j++) {
			free(a[i].f[j].func);
			free(a[i].f[j].file);
		}
		free(a[i].f);
	}
	free(a);
}

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Does our answer equal the tool's? Columns count where the tool prints them. For
 * llvm-symbolizer the outermost function may be the ELF symbol's name (sym). */
static int same_answer(int tool, const nt_native_frame *f, size_t n, const rans *r,
		       const char *sym)
{
	size_t k = n ? n : 1;
	if (r->n != k)
		return 0;
	for (size_t j = 0; j < k; j++) {
		const rframe *t = &r->f[j];
		const char *func = n ? f[j].function : NULL;
		const char *file = n ? f[j].file : NULL;
		unsigned line = n && file ? f[j].line : 0, col = n && file ? f[j].column : 0;
		int fn_ok = str_eq(func, t->func) ||
			    (tool == T_LLVM && j == k - 1 && sym && str_eq(sym, t->func));
		if (!fn_ok || !str_eq(file, t->file) || line != t->line ||
		    (tool != T_GNU && col != t->col))
			return 0;
	}
	return 1;
}

static void show_answer(const char *who, const nt_native_frame *f, size_t n)
{
	for (size_t j = 0; j < n; j++)
		printf("#   %-8s %s %s:%u:%u\n", who, f[j].function ? f[j].function : "??",
		       f[j].file ? f[j].file : "??", f[j].line, f[j].column);
}

static void show_ref(const char *who, const rans *r)
{
	for (size_t j = 0; j < r->n; j++)
		printf("#   %-8s %s %s:%u:%u\n", who, r->f[j].func ? r->f[j].func : "??",
		       r->f[j].file ? r->f[j].file : "??", r->f[j].line, r->f[j].col);
}

/* ------------------------------------------------------------------ tests */

static void test_dwarf_matches_reference_tools(const telf *t)
{
	int have[T_COUNT], ntools = 0;
	have[T_EU] = have_prog("eu-addr2line");
	have[T_GNU] = have_prog("addr2line");
	have[T_LLVM] = have_prog("llvm-symbolizer");
	for (int i = 0; i < T_COUNT; i++)
		ntools += have[i];
	if (!ntools) {
		printf("ok %d - reference symbolizers # SKIP none of eu-addr2line, addr2line, "
		       "llvm-symbolizer is installed\n",
		       ++tap_n);
		return;
	}
	/* every byte of every function, evenly thinned to MAX_ADDRS */
	size_t total = 0;
	for (size_t i = 0; i < t->nsyms; i++)
		total += t->syms[i].size;
	size_t step = total > MAX_ADDRS ? (total + MAX_ADDRS - 1) / MAX_ADDRS : 1;
	uint64_t *addrs = malloc((total / step + 2) * sizeof(uint64_t));
	size_t n = 0, k = 0;
	for (size_t i = 0; i < t->nsyms; i++)
		for (uint64_t a = 0; a < t->syms[i].size; a++, k++)
			if (k % step == 0)
				addrs[n++] = t->syms[i].addr + a;
	char addrfile[4200];
	fmt(addrfile, sizeof addrfile, "%s/addrs.txt", tmpdir);
	FILE *fp = fopen(addrfile, "w");
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "0x%" PRIx64 "\n", addrs[i]);
	fclose(fp);
	ok(n >= 1000, "%zu addresses across %zu functions of test-dwarf-prog", n, t->nsyms);

	nt_native *nn = map_at_bias(t, prog, NULL);
	uint64_t *ips = malloc(n * sizeof(uint64_t));
	for (size_t i = 0; i < n; i++)
		ips[i] = addrs[i] + BIAS;
	nt_error err = {0};
	nt_native_result *res = calloc(n, sizeof *res);
	is_int(nt_native_resolve_batch(nn, ips, n, res, &err), 0, "batch resolution succeeds");
	/* the direct DIE reader against libdwarf's API on every address */
	nt_native *slow = map_at_bias_flags(t, prog, NULL, NT_NATIVE_LIBDWARF_ONLY);
	size_t same = 0;
	for (size_t i = 0; i < n; i++) {
		const nt_native_frame *f;
		size_t nf, j;
		nt_native_resolve(slow, ips[i], &f, &nf, &err);
		for (j = 0; nf == res[i].n && j < nf; j++) {
			const nt_native_frame *g = &res[i].frames[j];
			if (!str_eq(f[j].name, g->name) || !str_eq(f[j].file, g->file) ||
			    f[j].line != g->line || f[j].column != g->column)
				break;
		}
		same += nf == res[i].n && j == nf;
	}
	is_u64(same, n, "the direct DIE reader and libdwarf's API give the same frames");
	nt_native_free(slow);
	free(res);

	rans *ref[T_COUNT] = {NULL, NULL, NULL};
	size_t agree[T_COUNT] = {0, 0, 0};
	for (int tl = 0; tl < T_COUNT; tl++) {
		if (!have[tl])
			continue;
		ref[tl] = calloc(n, sizeof(rans));
		if (run_tool(tl, prog, addrfile, ref[tl], n)) {
			printf("# %s: unexpected output, not used\n", tool_name[tl]);
			free_ans(ref[tl], n);
			ref[tl] = NULL;
		}
	}
	size_t none = 0, inline_addrs = 0, max_depth = 0;
	for (size_t i = 0; i < n; i++) {
		const nt_native_frame *f;
		size_t nf;
		nt_native_resolve(nn, ips[i], &f, &nf, &err);
		if (nf > 1)
			inline_addrs++;
		if (nf > max_depth)
			max_depth = nf;
		const char *sym = sym_at(t, addrs[i]);
		int any = 0;
		for (int tl = 0; tl < T_COUNT; tl++)
			if (ref[tl] && same_answer(tl, f, nf, &ref[tl][i], sym)) {
				agree[tl]++;
				any = 1;
			}
		if (!any && ++none <= 5) {
			printf("# 0x%" PRIx64 ": no reference tool agrees\n", addrs[i]);
			show_answer("ours", f, nf);
			for (int tl = 0; tl < T_COUNT; tl++)
				if (ref[tl])
					show_ref(tl == T_EU ? "eu" : tl == T_GNU ? "gnu" : "llvm",
						 &ref[tl][i]);
		}
	}
	size_t best = 0;
	for (int tl = 0; tl < T_COUNT; tl++) {
		if (!ref[tl])
			continue;
		printf("# %s agrees on %zu of %zu addresses\n", tool_name[tl], agree[tl], n);
		if (agree[tl] > best)
			best = agree[tl];
	}
	ok(inline_addrs > n / 10 && max_depth >= 4,
	   "inline chains: %zu addresses have inlined frames, up to %zu frames", inline_addrs,
	   max_depth);
	is_u64(none, 0, "every address agrees with a reference symbolizer");
	ok(best * 100 >= n * 99, "the best reference agrees on %zu of %zu addresses (>= 99%%)",
	   best, n);
	for (int tl = 0; tl < T_COUNT; tl++)
		if (ref[tl])
			free_ans(ref[tl], n);
	nt_native_free(nn);
	free(ips);
	free(addrs);
}

static const tsym *find_sym(const telf *t, const char *name)
{
	for (size_t i = 0; i < t->nsyms; i++)
		if (strcmp(t->syms[i].name, name) == 0)
			return &t->syms[i];
	return NULL;
}

static void test_dwarf_frames_and_cache(const telf *t)
{
	const tsym *w = find_sym(t, "dp_worker");
	if (!ok(w != NULL, "dp_worker is in the symbol table"))
		return;
	nt_native *a = map_at_bias(t, prog, NULL), *b = map_at_bias(t, prog, NULL);
	nt_error err = {0};
	int names_ok = 1, depth_ok = 1, batch_ok = 1, cache_ok = 1, offs_ok = 1;
	size_t inl = 0;
	uint64_t *ips = malloc(w->size * sizeof(uint64_t));
	for (uint64_t i = 0; i < w->size; i++)
		ips[i] = BIAS + w->addr + i;
	nt_native_result *res = calloc(w->size, sizeof *res);
	nt_native_resolve_batch(b, ips, w->size, res, &err);
	for (uint64_t i = 0; i < w->size; i++) {
		const nt_native_frame *f, *g, *h;
		size_t nf, ng, nh;
		nt_native_resolve(a, ips[i], &f, &nf, &err);
		nt_native_resolve(a, ips[i], &h, &nh, &err);
		nt_native_resolve(b, ips[i], &g, &ng, &err);
		if (h != f || nh != nf || g != res[i].frames || ng != res[i].n)
			cache_ok = 0;
		if (nf != ng || nf == 0) {
			batch_ok = 0;
			continue;
		}
		if (nf > 1)
			inl++;
		for (size_t j = 0; j < nf; j++) {
			char want[256];
			fmt(want, sizeof want, "test-dwarf-prog!%s", f[j].function);
			if (!f[j].function || strcmp(f[j].name, want) ||
			    strcmp(f[j].module, "test-dwarf-prog"))
				names_ok = 0;
			if (f[j].inline_depth != nf - 1 - j)
				depth_ok = 0;
			if (!str_eq(f[j].name, g[j].name) || !str_eq(f[j].file, g[j].file) ||
			    f[j].line != g[j].line || f[j].column != g[j].column)
				batch_ok = 0;
			if (f[j].elf_address != w->addr + i || strcmp(f[j].module_path, prog))
				offs_ok = 0;
		}
		if (strcmp(f[nf - 1].function, "dp_worker"))
			names_ok = 0;
	}
	ok(names_ok, "frames are named test-dwarf-prog!function, the outermost dp_worker");
	ok(inl > 0, "dp_worker has %zu addresses with inlined frames", inl);
	ok(depth_ok, "inline_depth counts down to 0 at the outermost frame");
	ok(batch_ok, "batch and one-by-one resolution give the same frames");
	ok(cache_ok, "a second lookup (and the batch's result) returns the cached frames");
	ok(offs_ok, "elf_address is the address in the file, module_path the recorded path");
	const nt_native_frame *f;
	size_t nf = 99;
	is_int(nt_native_resolve(a, 0x1000, &f, &nf, &err), 0, "an address in no module: ok");
	is_u64(nf, 0, "... and no frames");
	nt_native_module m;
	int found = 0;
	for (size_t i = 0; nt_native_module_at(a, i, &m); i++)
		if (m.lookups) {
			found = 1;
			is_str(nt_native_status_name(m.status), "ok", "module status ok");
			is_str(m.name, "test-dwarf-prog", "module name is the file name");
			ok(strlen(m.file_build_id) >= 32, "build id read from the file: %s",
			   m.file_build_id);
		}
	ok(found, "a module counts lookups");
	ok(!nt_native_module_at(a, 99, &m), "module_at out of range returns 0");
	free(ips);
	free(res);
	nt_native_free(a);
	nt_native_free(b);
}

static void test_dwarf_add_module_rejects(void)
{
	nt_native *nn;
	nt_error err = {0};
	nt_native_new(&nn, NULL, &err);
	is_int(nt_native_add_module(nn, 0x1000, 0, 0, "/x", NULL, &err), NT_EINVAL,
	       "size 0 is rejected");
	nt_error_clear(&err);
	is_int(nt_native_add_module(nn, UINT64_MAX - 10, 100, 0, "/x", NULL, &err), NT_EINVAL,
	       "base + size overflow is rejected");
	ok(strstr(err.msg, "base 0x") != NULL, "message names the range: %s", err.msg);
	is_int(nt_native_add_module(nn, 0x1000, 0x100, 0, "/x", "", &err), 0, "a module is added");
	is_int(nt_native_add_module(nn, 0x1000, 0x100, 0, "/x", NULL, &err), 0, "... twice");
	is_u64(nt_native_module_count(nn), 1, "identical mappings are recorded once");
	nt_native_free(nn);
	nt_native_free(NULL);
}

/* The frames of one address of dp_worker in a resolver over path. */
static size_t resolve_one(const telf *t, const char *path, const char *bid,
			  const nt_native_frame **f, nt_native **keep)
{
	const tsym *w = find_sym(t, "dp_worker");
	*keep = map_at_bias(t, path, bid);
	size_t n = 0;
	nt_error err = {0};
	if (w && *keep)
		nt_native_resolve(*keep, BIAS + w->addr + w->size / 2, f, &n, &err);
	return n;
}

static const nt_native_module *status_of(nt_native *nn, nt_native_module *m)
{
	for (size_t i = 0; nt_native_module_at(nn, i, m); i++)
		if (m->lookups)
			return m;
	return NULL;
}

static void test_dwarf_build_id(const telf *t)
{
	const tsym *w = find_sym(t, "dp_worker");
	if (!w || !t->build_id[0]) {
		printf("ok %d - build id # SKIP test-dwarf-prog has no build id note\n", ++tap_n);
		return;
	}
	const nt_native_frame *f;
	nt_native *nn;
	nt_native_module m;
	char upper[129];
	for (size_t i = 0; i <= strlen(t->build_id); i++)
		upper[i] =
		    (char)(t->build_id[i] >= 'a' && t->build_id[i] <= 'f' ? t->build_id[i] - 32
									  : t->build_id[i]);
	size_t n = resolve_one(t, prog, upper, &f, &nn);
	ok(n >= 1 && f[n - 1].function && !strcmp(f[n - 1].function, "dp_worker"),
	   "the recorded build id (upper case) matches: resolved");
	nt_native_free(nn);

	n = resolve_one(t, prog, "0123456789abcdef0123456789abcdef01234567", &f, &nn);
	uint64_t off = w->addr + w->size / 2; /* PIE: file offset == address for .text */
	for (size_t i = 0; i < t->nloads; i++)
		if (off - t->lo[i] < t->filesz[i])
			off = off - t->lo[i] + t->off[i];
	char want[64];
	fmt(want, sizeof want, "test-dwarf-prog+0x%" PRIx64, off);
	is_u64(n, 1, "build id mismatch: one frame");
	if (n == 1) {
		is_str(f[0].name, want, "build id mismatch: module+0xoffset");
		ok(f[0].function == NULL && f[0].file == NULL, "... with no function or file");
	}
	status_of(nn, &m);
	is_str(nt_native_status_name(m.status), "build id mismatch", "status: build id mismatch");
	char msg[512];
	fmt(msg, sizeof msg,
	    "build id mismatch: trace 0123456789abcdef0123456789abcdef01234567, file %s",
	    t->build_id);
	is_str(m.message, msg, "the message names both build ids");
	is_str(m.file_build_id, t->build_id, "file_build_id is the file's");
	nt_native_free(nn);
}

/* Copies prog to tmpdir/name and runs "strip ARGS" on the copy; returns its path or NULL. */
static const char *stripped_copy(const char *name, const char *args, char *buf, size_t len)
{
	char cmd[9000];
	if (fmt(buf, len, "%s/%s", tmpdir, name) ||
	    fmt(cmd, sizeof cmd, "cp '%s' '%s' && strip %s '%s' 2>/dev/null", prog, buf, args, buf))
		return NULL;
	return system(cmd) == 0 ? buf : NULL;
}

static void test_dwarf_stripped(const telf *t)
{
	char path[4200];
	const nt_native_frame *f;
	nt_native *nn;
	nt_native_module m;
	const tsym *w = find_sym(t, "dp_worker");
	if (!w || !stripped_copy("prog-nodebug", "--strip-debug", path, sizeof path)) {
		printf("ok %d - stripped copies # SKIP strip (binutils) is not installed\n",
		       ++tap_n);
		return;
	}
	size_t n = resolve_one(t, path, NULL, &f, &nn);
	is_u64(n, 1, "strip --strip-debug: one frame (no inline chain without DWARF)");
	if (n == 1) {
		is_str(f[0].name, "prog-nodebug!dp_worker", "... named after the ELF symbol");
		ok(f[0].file == NULL && f[0].line == 0, "... without file:line");
	}
	status_of(nn, &m);
	is_str(nt_native_status_name(m.status), "symbols only", "status: symbols only");
	nt_native_free(nn);

	/* the same copy with its DWARF in DEBUG_DIR/.build-id/xx/yyyy.debug */
	char dbg[4400], cmd[9000];
	const nt_native_frame *g;
	nt_native *full = map_at_bias(t, prog, NULL);
	size_t ng = 0;
	nt_error err = {0};
	if (t->build_id[0] &&
	    !fmt(dbg, sizeof dbg, "%s/debug/.build-id/%.2s/%s.debug", tmpdir, t->build_id,
		 t->build_id + 2) &&
	    !fmt(cmd, sizeof cmd,
		 "mkdir -p \"$(dirname '%s')\" && objcopy --only-keep-debug '%s' '%s'", dbg, prog,
		 dbg) &&
	    system(cmd) == 0 && full) {
		char dir[4300];
		fmt(dir, sizeof dir, "%s/debug", tmpdir);
		nt_native_opts o = {sizeof o, NULL, dir, 0, NULL};
		nn = NULL;
		nt_native_new(&nn, &o, &err);
		for (size_t i = 0; i < t->nloads; i++)
			nt_native_add_module(nn, BIAS + t->lo[i], t->filesz[i], t->off[i], path,
					     NULL, &err);
		int same = 1, inl = 0;
		for (uint64_t a = 0; a < w->size; a++) {
			nt_native_resolve(nn, BIAS + w->addr + a, &f, &n, &err);
			nt_native_resolve(full, BIAS + w->addr + a, &g, &ng, &err);
			inl |= n > 1;
			for (size_t j = 0; same && j < n; j++)
				same = n == ng && str_eq(f[j].function, g[j].function) &&
				       str_eq(f[j].file, g[j].file) && f[j].line == g[j].line;
			same = same && n == ng;
		}
		ok(same && inl, "DWARF from DEBUG_DIR/.build-id/xx/yyyy.debug: the frames of the "
				"unstripped file");
		status_of(nn, &m);
		is_str(nt_native_status_name(m.status), "ok", "... status ok");
		nt_native_free(nn);
	} else {
		printf("ok %d - separate debug file # SKIP objcopy failed or no build id\n",
		       ++tap_n);
	}
	nt_native_free(full);

	if (!stripped_copy("prog-stripped", "--strip-all", path, sizeof path))
		return;
	n = resolve_one(t, path, NULL, &f, &nn);
	is_u64(n, 1, "strip --strip-all: one frame");
	if (n == 1)
		ok(strncmp(f[0].name, "prog-stripped+0x", 16) == 0 && !f[0].function,
		   "... module+0xoffset: %s", f[0].name);
	status_of(nn, &m);
	ok(m.status == NT_NATIVE_NO_SYMBOLS || m.status == NT_NATIVE_SYMBOLS_ONLY,
	   "status: %s (%s)", nt_native_status_name(m.status), m.message);
	nt_native_free(nn);
}

static void test_dwarf_bad_files(void)
{
	nt_native *nn;
	nt_error err = {0};
	const nt_native_frame *f;
	size_t n;
	nt_native_module m;
	char fifo[4200], text[4200];
	fmt(fifo, sizeof fifo, "%s/fifo", tmpdir);
	fmt(text, sizeof text, "%s/not-elf.so", tmpdir);
	FILE *fp = fopen(text, "w");
	fputs("this is not an ELF file\n", fp);
	fclose(fp);
	int have_fifo = mkfifo(fifo, 0600) == 0;

	nt_native_new(&nn, NULL, &err);
	nt_native_add_module(nn, 0x10000, 0x1000, 0x2000, "/nonexistent/dir/libgone.so.1", "abcd",
			     &err);
	nt_native_add_module(nn, 0x20000, 0x1000, 0, text, NULL, &err);
	nt_native_add_module(nn, 0x30000, 0x1000, 0, have_fifo ? fifo : "/dev/null", NULL, &err);
	nt_native_resolve(nn, 0x10234, &f, &n, &err);
	is_u64(n, 1, "missing file: one frame");
	if (n == 1) {
		is_str(f[0].name, "libgone.so.1+0x2234", "missing file: module+0xoffset");
		is_str(f[0].module, "libgone.so.1", "... module is the file name");
		ok(f[0].elf_address == UINT64_MAX, "... no ELF address");
	}
	nt_native_module_at(nn, 0, &m);
	is_str(nt_native_status_name(m.status), "missing", "status: missing");
	is_str(m.message, "cannot open: No such file or directory", "message: why");
	nt_native_resolve(nn, 0x20010, &f, &n, &err);
	ok(n == 1 && !strcmp(f[0].name, "not-elf.so+0x10"), "not an ELF file: module+0xoffset");
	nt_native_module_at(nn, 1, &m);
	is_str(nt_native_status_name(m.status), "bad file", "status: bad file");
	/* a FIFO named in a trace must not block the reader */
	nt_native_resolve(nn, 0x30010, &f, &n, &err);
	nt_native_module_at(nn, 2, &m);
	ok(n == 1 && m.status == NT_NATIVE_MISSING, "a FIFO or device is not opened: %s",
	   m.message);
	nt_native_free(nn);
}

/* A ModuleMap event written by the writer and read back, as profile.c sees it. */
static void test_dwarf_module_event(void)
{
	static const nt_field fields[] = {
		{"Base", NT_TYPE_U64, 0, 0, NULL, 0},     {"Size", NT_TYPE_U64, 0, 0, NULL, 0},
		{"FileOffset", NT_TYPE_U64, 0, 0, NULL, 0}, {"Path", NT_TYPE_STRING, 0, 0, NULL, 0},
		{"BuildId", NT_TYPE_STRING, 0, 0, NULL, 0},
	};
	nt_membuf mb = {0};
	nt_sink sink = nt_sink_membuf(&mb);
	nt_trace_header h;
	memset(&h, 0, sizeof h);
	h.format_version = 4;
	h.qpc_frequency = 1000000000;
	h.pointer_size = 8;
	h.processors = 1;
	h.sync_time_utc[0] = 2024;
	h.sync_time_utc[1] = 1;
	h.sync_time_utc[3] = 1;
	nt_writer *w;
	nt_error err = {0};
	uint32_t id = 0;
	nt_metadata_desc md = {NT_PROVIDER_NTSAMPLER, NT_NTS_MODULE_MAP, "ModuleMap", 0, 0, 4, 0,
			       fields, 5};
	int rc = nt_writer_open(&w, &sink, &h, NULL, &err);
	if (rc == 0)
		rc = nt_writer_add_metadata(w, &md, &id, &err);
	uint8_t pl[256];
	size_t k = 0;
	uint64_t v[3] = {0x555500001000ull, 0x2000, 0x1000};
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 8; j++)
			pl[k++] = (uint8_t)(v[i] >> (8 * j));
	const char *strs[2] = {"/usr/lib/libdemo.so.3", "ABCDEF01"};
	for (int i = 0; i < 2; i++) {
		for (const char *s = strs[i]; *s; s++) {
			pl[k++] = (uint8_t)*s;
			pl[k++] = 0;
		}
		pl[k++] = 0;
		pl[k++] = 0;
	}
	nt_event_desc e;
	memset(&e, 0, sizeof e);
	e.metadata_id = id;
	e.thread_id = e.capture_thread_id = 1;
	e.timestamp = 1;
	e.payload = pl;
	e.payload_len = (uint32_t)k;
	if (rc == 0)
		rc = nt_writer_write_event(w, &e, &err);
	if (rc == 0)
		rc = nt_writer_close(w, &err);
	is_int(rc, 0, "a trace with a ModuleMap event is written");
	nt_reader *r;
	nt_native *nn;
	nt_native_new(&nn, NULL, &err);
	int used = 0;
	if (nt_reader_open_mem(&r, mb.data, mb.len, NULL, &err) == 0) {
		const nt_event *ev;
		while (nt_reader_next(r, &ev, &err) == 1)
			used += nt_native_add_event(nn, ev, 8);
		nt_reader_free(r);
	}
	is_int(used, 1, "nt_native_add_event uses the ModuleMap event");
	nt_native_module m;
	if (nt_native_module_at(nn, 0, &m)) {
		is_u64(m.base, 0x555500001000ull, "Base");
		is_u64(m.size, 0x2000, "Size");
		is_u64(m.file_offset, 0x1000, "FileOffset");
		is_str(m.path, "/usr/lib/libdemo.so.3", "Path");
		is_str(m.name, "libdemo.so.3", "module name");
		is_str(m.build_id, "abcdef01", "BuildId, lower case");
		is_str(nt_native_status_name(m.status), "unused", "not opened before a lookup");
	}
	nt_native_free(nn);
	nt_membuf_free(&mb);
}

int main(void)
{
	const char *top = getenv("top_builddir");
	fmt(prog, sizeof prog, "%s/tests/unit/test-dwarf-prog", top ? top : ".");
	fmt(tmpdir, sizeof tmpdir, "%s/nt-dwarf.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	telf t;
	if (read_elf(prog, &t) || t.nsyms == 0) {
		printf("Bail out! cannot read %s (built by make check)\n", prog);
		return 1;
	}
	test_dwarf_matches_reference_tools(&t);
	test_dwarf_frames_and_cache(&t);
	test_dwarf_add_module_rejects();
	test_dwarf_build_id(&t);
	test_dwarf_stripped(&t);
	test_dwarf_bad_files();
	test_dwarf_module_event();
	free_elf(&t);
	char cmd[4200];
	fmt(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# cannot remove %s\n", tmpdir);
	return tap_done();
}
