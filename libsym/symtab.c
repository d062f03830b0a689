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
#include <stdio.h>
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
 * elf_x86_64_get_synthetic_symtab() also follows the jump).
 *
 * A slot that an IRELATIVE relocation fills has no symbol: the stub calls
 * an IFUNC of the file itself (39 of the 53 .plt entries of Debian 12's
 * libc, its own memcpy, strlen and the like).  The relocation's addend is
 * the IFUNC's resolver, which is the IFUNC symbol's value, and the stub
 * is named IFUNC@plt, as perf names it (6.2 and later, get_ifunc_name());
 * without such a symbol, *ABS*+0xADDEND@plt, as objdump and gdb name it.
 * The entries of .plt that jump through no slot (PLT0, which lazy binding
 * enters; the lazy half of an IBT .plt, whose jumps are in .plt.sec) are
 * named .plt, as perf names them.  Unnamed, GNU's and llvm's rule (the
 * symbol at or below an address) gave them the name of the stub before.
 */
struct got_name {
	uint64_t slot;
	uint64_t addend;	/* IRELATIVE: the IFUNC's resolver */
	const char *name;	/* borrowed from .dynstr; NULL: IRELATIVE */
};

static int got_cmp(const void *a, const void *b)
{
	const struct got_name *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The name of symbol @i of the symbol table @sd (strings @td), or NULL. */
static const char *rela_sym_name(Elf_Data *sd, Elf_Data *td, size_t i)
{
	const char *str;
	GElf_Sym sym;

	if (!sd || !td || !td->d_buf || td->d_size == 0 || i == 0 ||
	    !gelf_getsym(sd, (int)i, &sym) || sym.st_name == 0 ||
	    sym.st_name >= td->d_size)
		return NULL;
	str = td->d_buf;
	if (!memchr(str + sym.st_name, '\0', td->d_size - sym.st_name))
		return NULL;
	return str + sym.st_name;
}

/* The symbol table that relocation section @sh links, and its strings:
 * NULLs when there is none (IRELATIVE needs none). */
static void rela_syms(const struct symi_elf *e, const GElf_Shdr *sh,
		      size_t shnum, Elf_Data **sd, Elf_Data **td)
{
	GElf_Shdr symsh, strsh;
	Elf_Scn *symscn, *strscn;

	*sd = *td = NULL;
	if (sh->sh_link == 0 || sh->sh_link >= shnum ||
	    !(symscn = elf_getscn(e->elf, sh->sh_link)) ||
	    !gelf_getshdr(symscn, &symsh) ||
	    (symsh.sh_type != SHT_DYNSYM && symsh.sh_type != SHT_SYMTAB) ||
	    symsh.sh_link == 0 || symsh.sh_link >= shnum ||
	    !(strscn = elf_getscn(e->elf, symsh.sh_link)) ||
	    !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		return;
	*sd = elf_getdata(symscn, NULL);
	*td = elf_getdata(strscn, NULL);
}

/* The named JUMP_SLOT and GLOB_DAT relocations of @e and its IRELATIVE
 * ones, by slot. */
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
		Elf_Data *rd, *sd, *td;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(rd = elf_getdata(scn, NULL)))
			continue;
		rela_syms(e, &sh, shnum, &sd, &td);
		for (int i = 0;; i++) {
			const char *name = NULL;
			uint32_t type;
			GElf_Rela r;

			if (!gelf_getrela(rd, i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if (type == R_X86_64_JUMP_SLOT ||
			    type == R_X86_64_GLOB_DAT) {
				name = rela_sym_name(sd, td,
						     GELF_R_SYM(r.r_info));
				if (!name)
					continue;
			} else if (type != R_X86_64_IRELATIVE) {
				continue;
			}
			if (symi_grow((void **)out, &cap, *n + 1,
				      sizeof(**out)))
				return -ENOMEM;
			(*out)[*n].slot = r.r_offset;
			(*out)[*n].addend = (uint64_t)r.r_addend;
			(*out)[(*n)++].name = name;
		}
	}
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), got_cmp);
	return 0;
}

static const struct got_name *got_find(const struct got_name *v, size_t n,
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
	return lo < n && v[lo].slot == slot ? &v[lo] : NULL;
}

/* The IFUNC symbols of @e's .dynsym and .symtab, by value, the best of
 * each value first (perf's choose_best_symbol(): not weak, then global,
 * then fewer leading underscores, then the longer name). */
struct ifunc {
	uint64_t value;
	const char *name;	/* borrowed from the file's strings */
	unsigned rank, under;
	size_t len, seq;
};

static int ifunc_cmp(const void *a, const void *b)
{
	const struct ifunc *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->under != y->under)
		return x->under < y->under ? -1 : 1;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ifunc_add(struct ifunc **v, size_t *n, size_t *cap,
		     const GElf_Sym *sym, const char *name)
{
	struct ifunc *f;
	int bind = GELF_ST_BIND(sym->st_info);

	if (symi_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	f = &(*v)[*n];
	f->value = sym->st_value;
	f->name = name;
	f->rank = bind == STB_WEAK ? 2 : bind == STB_GLOBAL ? 0 : 1;
	f->under = (unsigned)strspn(name, "_");
	f->len = strlen(name);
	f->seq = (*n)++;
	return 0;
}

static int ifunc_names(const struct symi_elf *e, struct ifunc **out,
		       size_t *n)
{
	size_t cap = 0, shnum;
	Elf_Scn *scn = NULL;

	*out = NULL;
	*n = 0;
	if (elf_getshdrnum(e->elf, &shnum) < 0)
		return 0;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *sd, *td;
		Elf_Scn *strscn;
		size_t nsyms;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    sh.sh_link == 0 || sh.sh_link >= shnum ||
		    sh.sh_entsize != gelf_fsize(e->elf, ELF_T_SYM, 1,
						EV_CURRENT) ||
		    !(strscn = elf_getscn(e->elf, sh.sh_link)) ||
		    !(sd = elf_getdata(scn, NULL)) ||
		    !(td = elf_getdata(strscn, NULL)))
			continue;
		nsyms = sd->d_size / sh.sh_entsize;
		for (size_t i = 1; i < nsyms; i++) {
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(sd, (int)i, &sym))
				break;
			if (GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC ||
			    sym.st_shndx == SHN_UNDEF ||
			    !(name = rela_sym_name(sd, td, i)))
				continue;
			if (ifunc_add(out, n, &cap, &sym, name))
				return -ENOMEM;
		}
	}
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), ifunc_cmp);
	return 0;
}

static const char *ifunc_find(const struct ifunc *v, size_t n,
			      uint64_t value)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].value < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].value == value ? v[lo].name : NULL;
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

/* What the PLT symbols are read from, and a buffer for their names. */
struct plt_ctx {
	struct symi_builder *b;
	struct got_name *got;
	size_t ngot;
	struct ifunc *ifuncs;
	size_t nifuncs;
	char *buf;
	size_t cap;
};

static int plt_add(struct plt_ctx *c, uint64_t at, uint64_t size,
		   const char *name, const char *suffix, uint64_t abs)
{
	size_t need = (name ? strlen(name) : sizeof("*ABS*+0x") + 16) +
		      strlen(suffix) + 1;

	if (need > c->cap && symi_grow((void **)&c->buf, &c->cap, need, 1))
		return -ENOMEM;
	if (name)
		snprintf(c->buf, c->cap, "%s%s", name, suffix);
	else
		snprintf(c->buf, c->cap, "*ABS*+0x%llx%s",
			 (unsigned long long)abs, suffix);
	return symi_builder_add_symbol(c->b, at, size, c->buf, NULL,
				       SYMI_SYM_FUNC | SYMI_SYM_SIZED |
				       SYMI_SYM_PLT | SYMI_SYM_MAIN);
}

/* The stubs of one PLT section, @sname, of entries of @ent bytes. */
static int plt_section(struct plt_ctx *c, const GElf_Shdr *sh,
		       const Elf_Data *d, const char *sname, size_t ent)
{
	bool plt = strcmp(sname, ".plt") == 0;
	uint64_t lazy = 0, nlazy = 0;	/* a run of .plt's slotless entries */
	int err = 0;

	for (size_t off = 0; !err && off + ent <= d->d_size; off += ent) {
		uint64_t at = sh->sh_addr + off;
		uint64_t slot = plt_slot((const unsigned char *)d->d_buf + off,
					 ent, at);
		const struct got_name *g = slot ?
			got_find(c->got, c->ngot, slot) : NULL;

		if (!slot && plt) {
			if (!nlazy)
				lazy = at;
			nlazy += ent;
			continue;
		}
		if (nlazy)
			err = plt_add(c, lazy, nlazy, ".plt", "", 0);
		nlazy = 0;
		if (err || !g)
			continue;
		if (g->name)
			err = plt_add(c, at, ent, g->name, "@plt", 0);
		else
			err = plt_add(c, at, ent,
				      ifunc_find(c->ifuncs, c->nifuncs,
						 g->addend), "@plt", g->addend);
	}
	if (!err && nlazy)
		err = plt_add(c, lazy, nlazy, ".plt", "", 0);
	return err;
}

static int plt_read(struct symi_builder *b, const struct symi_elf *e)
{
	struct plt_ctx c = { .b = b };
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err;

	if (e->ehdr.e_machine != EM_X86_64 ||
	    e->ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    elf_getshdrstrndx(e->elf, &shstrndx) < 0)
		return 0;
	err = got_names(e, &c.got, &c.ngot);
	if (err || !c.ngot)
		goto out;
	/* The symbol tables are read for IFUNCs only when a slot needs one
	 * (an IRELATIVE relocation), not for every program with a PLT. */
	for (size_t i = 0; i < c.ngot && !err; i++) {
		if (!c.got[i].name) {
			err = ifunc_names(e, &c.ifuncs, &c.nifuncs);
			break;
		}
	}
	while (!err && (scn = elf_nextscn(e->elf, scn))) {
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
		err = plt_section(&c, &sh, d, sname, ent);
	}
out:
	free(c.buf);
	free(c.ifuncs);
	free(c.got);
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
