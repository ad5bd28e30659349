/* SPDX-License-Identifier: MIT */
/* sym-elf.c - native symbols, the ELF side (libelf): opening an object, its build id,
 * PT_LOAD segments and symbol tables, the separate debug file under DEBUG_DIR/.build-id,
 * and whether libdwarf may read its DWARF (sym-native.h). */
#include "sym-native.h"

/* ------------------------------------------------------------------ ELF objects */

static void set_status(nn_object *o, int status, char *msg)
{
	o->status = status;
	free(o->message);
	o->message = msg;
}

static int cmp_sym(const void *a, const void *b)
{
	const nn_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1; /* sized before sizeless */
	return strcmp(x->name, y->name);
}

/* Reads the function symbols of one symbol table section. Returns -1 when out of memory. */
static int read_symtab(nt_native *nn, nn_object *o, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || sh->sh_entsize == 0)
		return 0;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_value == 0)
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		int bind = GELF_ST_BIND(sym.st_info);
		if (nt_grow((void **)&o->syms, &o->symcap, o->nsyms + 1, sizeof(nn_sym)))
			return -1;
		nn_sym s;
		s.addr = sym.st_value;
		s.size = sym.st_size;
		s.rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		s.name = nn_intern(nn, name);
		if (!s.name)
			return -1;
		o->syms[o->nsyms++] = s;
	}
	return 0;
}

/* The function symbol covering addr: the greatest start at or below it, within its size
 * (a sizeless symbol extends to the next one). NULL if none. */
const nn_sym *nn_sym_find(const nn_object *o, uint64_t addr)
{
	size_t lo;
	NT_PARTITION(lo, o->nsyms, mid, o->syms[mid].addr <= addr);
	if (lo == 0)
		return NULL;
	/* the best symbol at that address comes first among equals */
	uint64_t a = o->syms[lo - 1].addr;
	size_t i = lo - 1;
	while (i > 0 && o->syms[i - 1].addr == a)
		i--;
	const nn_sym *s = &o->syms[i];
	if (s->size == 0 || addr - s->addr < s->size)
		return s;
	return NULL;
}

/* Hex of the NT_GNU_BUILD_ID note in a SHT_NOTE section, if there is one. */
static void read_build_id(Elf_Scn *scn, char *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data)
		return;
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= NN_MAX_BUILD_ID) {
			const uint8_t *d = (const uint8_t *)data->d_buf + desc_off;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(out + 2 * i, 3, "%02x", d[i]);
			return;
		}
	}
}

typedef struct elfinfo {
	int has_debug_info;  /* a .debug_info section with contents */
	Elf_Scn *symtab, *dynsym;
	GElf_Shdr symtab_sh, dynsym_sh;
} elfinfo;

/* Program headers (PT_LOAD), build id, symbol table sections, presence of DWARF. */
static void elf_scan(nn_object *o, Elf *elf, int main_file, elfinfo *ei, int *oom)
{
	memset(ei, 0, sizeof *ei);
	size_t nph = 0;
	if (main_file && elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (nt_grow((void **)&o->loads, &o->loadcap, o->nloads + 1,
				    sizeof(nn_load))) {
				*oom = 1;
				return;
			}
			o->loads[o->nloads].offset = ph.p_offset;
			o->loads[o->nloads].filesz = ph.p_filesz;
			o->loads[o->nloads].vaddr = ph.p_vaddr;
			o->nloads++;
		}
	}
	size_t shstrndx = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_NOTE && main_file && !o->build_id[0])
			read_build_id(scn, o->build_id);
		else if (sh.sh_type == SHT_SYMTAB) {
			ei->symtab = scn;
			ei->symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			ei->dynsym = scn;
			ei->dynsym_sh = sh;
		} else if (sh.sh_type == SHT_PROGBITS && sh.sh_size > 0) {
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && (strcmp(name, ".debug_info") == 0 ||
				     strcmp(name, ".zdebug_info") == 0))
				ei->has_debug_info = 1;
		}
	}
}

/* Opens path read-only if it is a regular file: a FIFO or a device named in a trace must
 * neither block us nor be read. Returns the fd, -1 with errno set, or -2 when path is not a
 * regular file. */
int nn_open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -2;
	}
	return fd;
}

/* Checks the unit headers of a .debug_rnglists or .debug_loclists section (DWARF 5,
 * 7.28/7.29): libdwarf 20210528 reads them as soon as it lists the compile units, and frees
 * memory twice on some malformed ones (a unit_length beyond the section), so such a file
 * must not reach it. Returns 1 when every header is sound (or the section is absent). */
static int lists_ok(const nn_sec *s)
{
	nt_cursor c;
	nt_cur_init(&c, s->p, s->len, 0);
	while (nt_cur_left(&c)) {
		uint32_t l32, count;
		uint64_t len;
		uint16_t ver;
		uint8_t asz, seg;
		unsigned offsize = 4;
		if (nt_cur_u32(&c, &l32))
			return 0;
		if (l32 == 0xffffffffu) {
			if (nt_cur_u64(&c, &len))
				return 0;
			offsize = 8;
		} else if (l32 >= 0xfffffff0u) {
			return 0;
		} else {
			len = l32;
		}
		if (len > nt_cur_left(&c))
			return 0;
		if (len == 0)
			continue; /* padding */
		size_t end = c.pos + (size_t)len;
		if (len < 8 || nt_cur_u16(&c, &ver) || nt_cur_u8(&c, &asz) || nt_cur_u8(&c, &seg) ||
		    nt_cur_u32(&c, &count))
			return 0;
		if (ver != 5 || (asz != 4 && asz != 8) || seg != 0 || count > (len - 8) / offsize)
			return 0;
		c.pos = end;
	}
	return 1;
}

/* Opens the object's file: ELF headers, build id, symbols, DWARF (from the file or from
 * DEBUG_DIR/.build-id/xx/yyyy.debug). File problems set the status; returns -1 only when
 * out of memory. */
int nn_object_load(nt_native *nn, nn_object *o)
{
	int fd = -1, dfd = -1, oom = 0;
	Elf *elf = NULL, *delf = NULL;
	char *dpath = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		set_status(o, NT_NATIVE_BAD_FILE, nn_xstrdup_printf("libelf is unusable"));
		return 0;
	}
	fd = nn_open_regular(o->path);
	if (fd < 0) {
		set_status(o, NT_NATIVE_MISSING,
			   nn_xstrdup_printf("cannot open: %s",
					  fd == -2 ? "not a regular file" : strerror(errno)));
		return 0;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		set_status(o, NT_NATIVE_BAD_FILE, nn_xstrdup_printf("not an ELF file"));
		goto done;
	}
	elfinfo ei, dei;
	elf_scan(o, elf, 1, &ei, &oom);
	if (oom)
		goto done;
	memset(&dei, 0, sizeof dei);
	if (!ei.has_debug_info && o->build_id[0] && strlen(o->build_id) > 2 && nn->debug_dir[0]) {
		dpath = nn_xstrdup_printf("%s%s/.build-id/%.2s/%s.debug", nn->root, nn->debug_dir,
				       o->build_id, o->build_id + 2);
		if (!dpath) {
			oom = 1;
			goto done;
		}
		dfd = nn_open_regular(dpath);
		if (dfd >= 0) {
			delf = elf_begin(dfd, ELF_C_READ_MMAP, NULL);
			if (delf && elf_kind(delf) == ELF_K_ELF)
				elf_scan(o, delf, 0, &dei, &oom);
			if (oom)
				goto done;
		}
	}
	/* symbols: the full table of either file, else the dynamic one */
	if (ei.symtab)
		oom = read_symtab(nn, o, elf, ei.symtab, &ei.symtab_sh) != 0;
	else if (dei.symtab)
		oom = read_symtab(nn, o, delf, dei.symtab, &dei.symtab_sh) != 0;
	else if (ei.dynsym)
		oom = read_symtab(nn, o, elf, ei.dynsym, &ei.dynsym_sh) != 0;
	if (oom)
		goto done;
	if (o->nsyms)
		qsort(o->syms, o->nsyms, sizeof(nn_sym), cmp_sym);
	/* The file with the DWARF keeps its libelf handle: the direct readers use its sections. */
	int have_dwarf = 0;
	const char *dwpath = NULL;
	if (ei.has_debug_info) {
		o->lelf = elf;
		o->lfd = fd;
		elf = NULL;
		fd = -1;
		dwpath = o->path;
	} else if (dei.has_debug_info) {
		o->lelf = delf;
		o->lfd = dfd;
		delf = NULL;
		dfd = -1;
		dwpath = dpath;
	}
	const char *bad = NULL;
	if (dwpath) {
		nn_load_sections(o);
		bad = !lists_ok(&o->sec[SEC_RNGLISTS])   ? ".debug_rnglists"
		      : !lists_ok(&o->sec[SEC_LOCLISTS]) ? ".debug_loclists"
							 : NULL;
		have_dwarf = !bad && nn_dwarf_open(o, dwpath);
	}
	if (have_dwarf && nn_cu_index(nn, o)) {
		oom = 1;
		goto done;
	}
	if (bad)
		set_status(o, o->nsyms ? NT_NATIVE_SYMBOLS_ONLY : NT_NATIVE_NO_SYMBOLS,
			   nn_xstrdup_printf("malformed %s: %s", bad,
					  o->nsyms ? "ELF symbols only" : "no symbols"));
	else if (have_dwarf && o->ncus)
		set_status(o, NT_NATIVE_OK, NULL);
	else if (o->nsyms)
		set_status(o, NT_NATIVE_SYMBOLS_ONLY, nn_xstrdup_printf("no DWARF: ELF symbols only"));
	else
		set_status(o, NT_NATIVE_NO_SYMBOLS, nn_xstrdup_printf("no DWARF and no ELF symbols"));
done:
	if (delf)
		elf_end(delf);
	if (dfd >= 0)
		close(dfd);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(dpath);
	return oom ? -1 : 0;
}

void nn_object_free(nn_object *o)
{
	if (o->dbg) {
		Dwarf_Error e = NULL;
		dwarf_finish(o->dbg, &e);
		if (e)
			dwarf_dealloc_error(NULL, e);
	}
	if (o->dwfd >= 0)
		close(o->dwfd);
	if (o->lelf)
		elf_end(o->lelf);
	if (o->lfd >= 0)
		close(o->lfd);
	for (size_t i = 0; i < o->ncus; i++)
		nn_cu_free(&o->cus[i]);
	free(o->cus);
	free(o->cusegs);
	free(o->loads);
	free(o->syms);
	free(o->onames);
	nt_idmap_free(&o->origins);
	free(o->message);
	free(o->path);
}

/* File offset -> the address in the file's own address space, through PT_LOAD. */
int nn_file_to_vaddr(const nn_object *o, uint64_t off, uint64_t *va)
{
	for (size_t i = 0; i < o->nloads; i++) {
		const nn_load *l = &o->loads[i];
		if (off >= l->offset && off - l->offset < l->filesz) {
			*va = l->vaddr + (off - l->offset);
			return 1;
		}
	}
	return 0;
}
