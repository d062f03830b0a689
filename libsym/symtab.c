/*
 * symtab.c - symbols and executable sections of an ELF file into the
 * table builder.
 *
 * Symbols come from .symtab, .dynsym and the MiniDebugInfo ELF that Fedora
 * style builds keep xz-compressed in .gnu_debugdata.  Every defined symbol
 * with a name goes to the builder as it is; choosing between symbols at one
 * address (sized over sizeless, global over weak over local) is the
 * builder's job, not ours.
 *
 * Skipped: undefined and SHN_COMMON symbols (no address in the file's
 * vaddr space), STT_SECTION and STT_FILE, and STT_TLS, whose value
 * is an offset into the TLS block, not an address (libdwfl skips them
 * too).  SHN_ABS symbols are kept with SYMI_SYM_ABS: eu-addr2line names
 * their exact address with them.  Version suffixes (@GLIBC_2.2.5) are not
 * added.  Each symbol says where it was read (SYMI_SYM_MAIN, _DYNSYM,
 * _MINI): GNU addr2line, eu-addr2line and llvm-symbolizer each read one
 * table, and the builder follows each of them.
 *
 * Mapping symbols are skipped too: on Arm, AArch64 and RISC-V, local
 * sizeless symbols named $x, $d, $a or $t (Arm), alone or followed by a
 * '.' and a suffix ($x.123; RISC-V also $x followed by an ISA string),
 * mark where code and data start (AAELF64 5.5.4, the RISC-V ELF psABI).
 * They are never function names: llvm-symbolizer, GNU addr2line and
 * eu-addr2line all skip them, and without that they name the code after
 * them ("$x" for _init on AArch64).
 *
 * PLT stubs get made-up symbols NAME@plt, as objdump, perf and gdb name
 * them (plt_read()), flagged SYMI_SYM_PLT so that an output that must
 * copy a peer can ignore them.
 *
 * Limits: MiniDebugInfo expands to at most 256 MiB.  A table that cannot
 * be read (bad sh_link, bad entry size) is logged and skipped; a name past
 * the end of its string table or not NUL-terminated inside it is skipped.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base.h"

#define MINIDEBUG_CAP ((size_t)256 << 20)

static const char *elf_name(const struct symi_elf *e)
{
	return e->path ? e->path : "<memory>";
}

static uint32_t sym_flags(const GElf_Sym *sym)
{
	uint32_t flags = 0;

	switch (GELF_ST_VISIBILITY(sym->st_other)) {
	case STV_HIDDEN:
	case STV_INTERNAL:
		flags |= SYMI_SYM_HIDDEN;
		break;
	}
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		flags |= SYMI_SYM_GLOBAL;
		break;
	case STB_WEAK:
		flags |= SYMI_SYM_WEAK;
		break;
	}
	switch (GELF_ST_TYPE(sym->st_info)) {
	case STT_FUNC:
	case STT_GNU_IFUNC:
		flags |= SYMI_SYM_FUNC;
		break;
	case STT_OBJECT:
	case STT_COMMON:
		flags |= SYMI_SYM_OBJECT;
		break;
	case STT_NOTYPE:
		flags |= SYMI_SYM_NOTYPE;
		break;
	}
	if (sym->st_size > 0)
		flags |= SYMI_SYM_SIZED;
	return flags;
}

/* Whether @name, a symbol of @type and @bind in a file for @machine, is
 * a mapping symbol (see the top of this file). */
static bool mapping_symbol(unsigned machine, const char *name, int type,
			   int bind)
{
	bool arm = machine == EM_ARM || machine == EM_AARCH64;

	if ((!arm && machine != EM_RISCV) || type != STT_NOTYPE ||
	    bind != STB_LOCAL || name[0] != '$')
		return false;
	switch (name[1]) {
	case 'x':
		/* RISC-V's $x may carry the ISA: $xrv64i2p1_m2p0. */
		return name[2] == '\0' || name[2] == '.' ||
		       (!arm && name[2] == 'r' && name[3] == 'v');
	case 'd':
		return name[2] == '\0' || name[2] == '.';
	case 'a':
	case 't':
		return machine == EM_ARM &&
		       (name[2] == '\0' || name[2] == '.');
	}
	return false;
}

/* What tells a Linux kernel (vmlinux) in its .symtab: _text, where its
 * addresses start (docs/design.md, "The kernel"), and linux_banner, which
 * every kernel has (init/version.c) and no user-space program. */
struct kern {
	bool text, banner;
	uint64_t text_addr;
};

static void kern_note(struct kern *k, const char *nm, const GElf_Sym *s)
{
	if (nm[0] == '_' && strcmp(nm, "_text") == 0) {
		k->text = true;
		k->text_addr = s->st_value;
	} else if (nm[0] == 'l' && strcmp(nm, "linux_banner") == 0) {
		k->banner = true;
	}
}

/* Read one SHT_SYMTAB or SHT_DYNSYM section; @origin is OR-ed into each
 * symbol's flags; the kernel's symbols are noted in @k when not NULL.
 * Returns 0 or -ENOMEM. */
static int read_table(struct symi_builder *b, const struct symi_elf *e,
		      Elf_Scn *scn, const GElf_Shdr *sh, uint32_t origin,
		      struct kern *k)
{
	const char *name = elf_name(e);
	size_t entsize, nsyms, shnum;
	Elf_Data *data, *strs;
	GElf_Shdr strsh;
	Elf_Scn *strscn;
	const char *str, *file = NULL;
	int err;

	entsize = gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (sh->sh_entsize != entsize) {
		symi_warn("elf: bad symbol size in section %zu of '%s'",
			  elf_ndxscn(scn), name);
		return 0;
	}
	if (elf_getshdrnum(e->elf, &shnum) < 0 || sh->sh_link == 0 ||
	    sh->sh_link >= shnum ||
	    !(strscn = elf_getscn(e->elf, sh->sh_link)) ||
	    !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB) {
		symi_warn("elf: bad string table for section %zu of '%s'",
			  elf_ndxscn(scn), name);
		return 0;
	}
	data = elf_getdata(scn, NULL);
	strs = elf_getdata(strscn, NULL);
	if (!data || !strs || !strs->d_buf || strs->d_size == 0) {
		symi_warn("elf: cannot read symbols of '%s': %s", name,
			  elf_errmsg(-1));
		return 0;
	}
	str = strs->d_buf;
	nsyms = data->d_size / entsize;

	/* Entry 0 is the null symbol.  An STT_FILE symbol names the source
	 * file of the local symbols after it. */
	for (size_t i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(data, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_FILE) {
			file = NULL;
			if (sym.st_name && sym.st_name < strs->d_size &&
			    memchr(str + sym.st_name, '\0',
				   strs->d_size - sym.st_name))
				file = str + sym.st_name;
			continue;
		}
		/* SHN_ABS symbols (_etext, _end) name their exact address
		 * only; TLS values are offsets, not addresses. */
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_COMMON ||
		    type == STT_SECTION || type == STT_FILE ||
		    type == STT_TLS)
			continue;
		/* A kernel module's values are offsets in their section:
		 * only its .text's are the module's addresses. */
		if (e->ko_text && sym.st_shndx != e->ko_text)
			continue;
		if (sym.st_name == 0 || sym.st_name >= strs->d_size ||
		    !memchr(str + sym.st_name, '\0',
			    strs->d_size - sym.st_name))
			continue;
		if (k)
			kern_note(k, str + sym.st_name, &sym);
		if (str[sym.st_name] == '\0' ||
		    mapping_symbol(e->ehdr.e_machine, str + sym.st_name, type,
				   GELF_ST_BIND(sym.st_info)))
			continue;
		err = symi_builder_add_symbol(b, sym.st_value, sym.st_size,
					      str + sym.st_name,
					      GELF_ST_BIND(sym.st_info) ==
					      STB_LOCAL ? file : NULL,
					      sym_flags(&sym) | origin |
					      (sym.st_shndx >= SHN_LORESERVE &&
					       sym.st_shndx != SHN_XINDEX ?
					       SYMI_SYM_ABS : 0));
		if (err)
			return err;
	}
	return 0;
}

/* The symbol tables of @e (not its MiniDebugInfo), their symbols flagged
 * with @origin.  A .symtab is noted as @symtab (enum symi_tables). */
static int read_tables(struct symi_builder *b, const struct symi_elf *e,
		       uint32_t origin, uint32_t symtab)
{
	bool exec = e->ehdr.e_type == ET_EXEC || e->ehdr.e_type == ET_DYN;
	struct kern k = { 0 };
	Elf_Scn *scn = NULL;
	int err;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symi_builder_note_tables(b, symtab);
		err = read_table(b, e, scn, &sh, origin |
				 (sh.sh_type == SHT_DYNSYM ?
				  SYMI_SYM_DYNSYM : 0),
				 exec && sh.sh_type == SHT_SYMTAB ? &k : NULL);
		if (err)
			return err;
	}
	if (k.text && k.banner)
		symi_builder_kernel(b, k.text_addr);
	return 0;
}

/* The kernel's symbols of .symtab section @scn of @e into @k. */
static void kern_scan(const struct symi_elf *e, Elf_Scn *scn,
		      const GElf_Shdr *sh, struct kern *k)
{
	size_t entsize = gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT), n;
	Elf_Data *data, *strs;
	Elf_Scn *strscn;

	if (!entsize || sh->sh_entsize != entsize ||
	    !(strscn = elf_getscn(e->elf, sh->sh_link)) ||
	    !(data = elf_getdata(scn, NULL)) ||
	    !(strs = elf_getdata(strscn, NULL)) || !strs->d_buf)
		return;
	/* No kernel without "linux_banner" among its names: a string
	 * search passes over every other file (a shared library's
	 * .symtab, for sym addr2line) without a walk of its symbols. */
	if (!memmem(strs->d_buf, strs->d_size, "linux_banner",
		    sizeof("linux_banner")))
		return;
	n = data->d_size / entsize;
	for (size_t i = 1; i < n && !(k->text && k->banner); i++) {
		const char *nm;
		GElf_Sym s;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		if (s.st_name == 0 || s.st_name >= strs->d_size)
			continue;
		nm = (const char *)strs->d_buf + s.st_name;
		if (memchr(nm, '\0', strs->d_size - s.st_name))
			kern_note(k, nm, &s);
	}
}

bool symi_elf_kernel_text(const struct symi_elf *e, uint64_t *text)
{
	struct kern k = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!e->elf ||
	    (e->ehdr.e_type != ET_EXEC && e->ehdr.e_type != ET_DYN))
		return false;
	while (!(k.text && k.banner) && (scn = elf_nextscn(e->elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			kern_scan(e, scn, &sh, &k);
	if (k.text && k.banner)
		*text = k.text_addr;
	return k.text && k.banner;
}

/* The .symtab of the MiniDebugInfo in .gnu_debugdata, if there is one. */
static int read_minidebuginfo(struct symi_builder *b,
			      const struct symi_elf *e, uint32_t origin)
{
	struct symi_elf mini;
	Elf_Scn *scn = NULL;
	Elf_Data *data = NULL;
	size_t shstrndx, len = 0;
	void *buf = NULL;
	int err;

	if (elf_getshdrstrndx(e->elf, &shstrndx) < 0)
		return 0;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		s = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (s && strcmp(s, ".gnu_debugdata") == 0) {
			data = elf_getdata(scn, NULL);
			break;
		}
	}
	if (!data || !data->d_buf || data->d_size == 0)
		return 0;

	err = symi_xz_inflate(data->d_buf, data->d_size, MINIDEBUG_CAP, &buf,
			      &len);
	if (err == -SYM_E_DECOMPRESS || err == -E2BIG) {
		symi_warn("elf: cannot decompress .gnu_debugdata of '%s'",
			  elf_name(e));
		return 0;
	}
	if (err)
		return err;
	/* symi_elf_open_mem() copies; the copy is small next to the rest. */
	err = symi_elf_open_mem(buf, len, &mini);
	free(buf);
	if (err == -ENOMEM)
		return err;
	if (err) {
		symi_warn("elf: bad MiniDebugInfo in '%s'", elf_name(e));
		return 0;
	}
	err = read_tables(b, &mini, origin | SYMI_SYM_MINI, 0);
	symi_elf_close(&mini);
	return err;
}

/*
 * PLT stubs (x86-64).  Each entry of .plt, .plt.sec and .plt.got jumps
 * through a GOT slot, `jmp *disp32(%rip)` (ff 25), at its start or after
 * endbr64 (f3 0f 1e fa) and a bnd prefix (f2).  The dynamic relocation of
 * that slot (.rela.plt's JUMP_SLOT, .rela.dyn's GLOB_DAT for .plt.got)
 * names the symbol the stub calls, and the stub is named SYMBOL@plt, as
 * objdump's synthetic symbols are (bfd's
 * elf_x86_64_get_synthetic_symtab() also follows the jump).  Entries
 * without such a jump (PLT0, the lazy half of an IBT .plt) or whose slot
 * has no named relocation (IRELATIVE) get no name.
 */
struct got_name {
	uint64_t slot;
	const char *name;	/* borrowed from .dynstr */
};

static int got_cmp(const void *a, const void *b)
{
	const struct got_name *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The named JUMP_SLOT and GLOB_DAT relocations of @e, by slot. */
static int got_names(const struct symi_elf *e, struct got_name **out,
		     size_t *n)
{
	size_t cap = 0, shnum;
	Elf_Scn *scn = NULL;

	*out = NULL;
	*n = 0;
	if (elf_getshdrnum(e->elf, &shnum) < 0)
		return 0;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh, symsh, strsh;
		Elf_Scn *symscn, *strscn;
		Elf_Data *rd, *sd, *td;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_link == 0 || sh.sh_link >= shnum ||
		    !(symscn = elf_getscn(e->elf, sh.sh_link)) ||
		    !gelf_getshdr(symscn, &symsh) ||
		    symsh.sh_type != SHT_DYNSYM || symsh.sh_link == 0 ||
		    symsh.sh_link >= shnum ||
		    !(strscn = elf_getscn(e->elf, symsh.sh_link)) ||
		    !gelf_getshdr(strscn, &strsh) ||
		    strsh.sh_type != SHT_STRTAB ||
		    !(rd = elf_getdata(scn, NULL)) ||
		    !(sd = elf_getdata(symscn, NULL)) ||
		    !(td = elf_getdata(strscn, NULL)) || !td->d_buf ||
		    td->d_size == 0)
			continue;
		for (int i = 0;; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *str = td->d_buf;
			uint32_t type;

			if (!gelf_getrela(rd, i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if ((type != R_X86_64_JUMP_SLOT &&
			     type != R_X86_64_GLOB_DAT) ||
			    GELF_R_SYM(r.r_info) == 0 ||
			    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym) ||
			    sym.st_name == 0 || sym.st_name >= td->d_size ||
			    !memchr(str + sym.st_name, '\0',
				    td->d_size - sym.st_name))
				continue;
			if (symi_grow((void **)out, &cap, *n + 1,
				      sizeof(**out)))
				return -ENOMEM;
			(*out)[*n].slot = r.r_offset;
			(*out)[(*n)++].name = str + sym.st_name;
		}
	}
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), got_cmp);
	return 0;
}

static const char *got_find(const struct got_name *v, size_t n,
			    uint64_t slot)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].slot == slot ? v[lo].name : NULL;
}

/* The GOT slot entry @p (at @addr, @len bytes) jumps through, or 0. */
static uint64_t plt_slot(const unsigned char *p, size_t len, uint64_t addr)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t at = 0;
	int32_t disp;

	if (len >= 4 && memcmp(p, endbr64, 4) == 0)
		at = 4;
	if (at < len && p[at] == 0xf2)
		at++;
	if (at + 6 > len || p[at] != 0xff || p[at + 1] != 0x25)
		return 0;
	memcpy(&disp, p + at + 2, sizeof(disp));
	disp = (int32_t)le32toh((uint32_t)disp);
	return addr + at + 6 + (uint64_t)(int64_t)disp;
}

static int plt_read(struct symi_builder *b, const struct symi_elf *e)
{
	struct got_name *got = NULL;
	size_t ngot = 0, shstrndx;
	Elf_Scn *scn = NULL;
	char *buf = NULL;
	size_t cap = 0;
	int err;

	if (e->ehdr.e_machine != EM_X86_64 ||
	    e->ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    elf_getshdrstrndx(e->elf, &shstrndx) < 0)
		return 0;
	err = got_names(e, &got, &ngot);
	if (err || !ngot)
		goto out;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *sname;
		Elf_Data *d;
		size_t ent;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) ||
		    !(sname = elf_strptr(e->elf, shstrndx, sh.sh_name)) ||
		    (strcmp(sname, ".plt") != 0 &&
		     strcmp(sname, ".plt.sec") != 0 &&
		     strcmp(sname, ".plt.got") != 0) ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		ent = sh.sh_entsize ? sh.sh_entsize :
		      strcmp(sname, ".plt.got") == 0 ? 8 : 16;
		if (ent < 6 || ent > 64)
			continue;
		for (size_t off = 0; off + ent <= d->d_size; off += ent) {
			uint64_t at = sh.sh_addr + off;
			uint64_t slot = plt_slot((const unsigned char *)d->d_buf +
						 off, ent, at);
			const char *name = slot ? got_find(got, ngot, slot) :
					   NULL;
			size_t need;

			if (!name)
				continue;
			need = strlen(name) + sizeof("@plt");
			if (need > cap && symi_grow((void **)&buf, &cap, need,
						    1)) {
				err = -ENOMEM;
				goto out;
			}
			memcpy(buf, name, need - sizeof("@plt"));
			memcpy(buf + need - sizeof("@plt"), "@plt",
			       sizeof("@plt"));
			err = symi_builder_add_symbol(b, at, ent, buf, NULL,
						      SYMI_SYM_FUNC |
						      SYMI_SYM_SIZED |
						      SYMI_SYM_PLT |
						      SYMI_SYM_MAIN);
			if (err)
				goto out;
		}
	}
out:
	free(buf);
	free(got);
	return err;
}

/* Allocated sections: a sizeless symbol covers only its own section. */
static int read_sections(struct symi_builder *b, const struct symi_elf *e)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_size == 0 || sh.sh_addr > UINT64_MAX - sh.sh_size ||
		    (e->ko_text && elf_ndxscn(scn) != e->ko_text))
			continue;
		if (symi_builder_add_section(b, sh.sh_addr,
					     sh.sh_addr + sh.sh_size))
			return -ENOMEM;
	}
	return 0;
}

int symi_symtab_read(struct symi_builder *b, const struct symi_elf *e,
		     bool main)
{
	uint32_t origin = main ? SYMI_SYM_MAIN : SYMI_SYM_DEBUG;
	int err;

	if (!e->elf)
		return 0;
	err = read_sections(b, e);
	if (!err)
		err = read_tables(b, e, origin, main ? SYMI_TAB_MAIN_SYMTAB :
						       SYMI_TAB_DBG_SYMTAB);
	if (!err && main && !e->ko_text)
		err = plt_read(b, e);
	if (err)
		return err;
	return read_minidebuginfo(b, e, origin);
}

int symi_text_read(struct symi_builder *b, const struct symi_elf *e)
{
	const GElf_Xword want = SHF_ALLOC | SHF_EXECINSTR;
	Elf_Scn *scn = NULL;
	size_t shnum = 0, phnum;

	if (!e->elf)
		return 0;
	/* In a separate debug file the text is SHT_NOBITS, with its address
	 * and flags kept. */
	if (elf_getshdrnum(e->elf, &shnum) == 0 && shnum > 1) {
		while ((scn = elf_nextscn(e->elf, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) ||
			    (sh.sh_flags & want) != want ||
			    (sh.sh_type != SHT_PROGBITS &&
			     sh.sh_type != SHT_NOBITS) ||
			    sh.sh_size == 0 ||
			    sh.sh_addr > UINT64_MAX - sh.sh_size ||
			    (e->ko_text && elf_ndxscn(scn) != e->ko_text))
				continue;
			if (symi_builder_add_text(b, sh.sh_addr,
						  sh.sh_addr + sh.sh_size))
				return -ENOMEM;
		}
		return 0;
	}
	if (elf_getphdrnum(e->elf, &phnum) < 0)
		return 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || ph.p_memsz == 0 ||
		    ph.p_vaddr > UINT64_MAX - ph.p_memsz)
			continue;
		if (symi_builder_add_text(b, ph.p_vaddr,
					  ph.p_vaddr + ph.p_memsz))
			return -ENOMEM;
	}
	return 0;
}
