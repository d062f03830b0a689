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
 * added.
 *
 * Limits: MiniDebugInfo expands to at most 256 MiB.  A table that cannot
 * be read (bad sh_link, bad entry size) is logged and skipped; a name past
 * the end of its string table or not NUL-terminated inside it is skipped.
 */
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MINIDEBUG_CAP ((size_t)256 << 20)
/* liblzma's decoder memory limit; xz -9 needs 65 MiB. */
#define MINIDEBUG_MEMLIMIT ((uint64_t)128 << 20)

static const char *elf_name(const struct symi_elf *e)
{
	return e->path ? e->path : "<memory>";
}

static uint32_t sym_flags(const GElf_Sym *sym)
{
	uint32_t flags = 0;

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
	}
	if (sym->st_size > 0)
		flags |= SYMI_SYM_SIZED;
	return flags;
}

/* Read one SHT_SYMTAB or SHT_DYNSYM section.  Returns 0 or -ENOMEM. */
static int read_table(struct symi_builder *b, const struct symi_elf *e,
		      Elf_Scn *scn, const GElf_Shdr *sh)
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
		if (sym.st_name == 0 || sym.st_name >= strs->d_size ||
		    !memchr(str + sym.st_name, '\0',
			    strs->d_size - sym.st_name))
			continue;
		if (str[sym.st_name] == '\0')
			continue;
		err = symi_builder_add_symbol(b, sym.st_value, sym.st_size,
					      str + sym.st_name,
					      GELF_ST_BIND(sym.st_info) ==
					      STB_LOCAL ? file : NULL,
					      sym_flags(&sym) |
					      (sym.st_shndx >= SHN_LORESERVE &&
					       sym.st_shndx != SHN_XINDEX ?
					       SYMI_SYM_ABS : 0));
		if (err)
			return err;
	}
	return 0;
}

/* The symbol tables of @e (not its MiniDebugInfo). */
static int read_tables(struct symi_builder *b, const struct symi_elf *e)
{
	Elf_Scn *scn = NULL;
	int err;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		err = read_table(b, e, scn, &sh);
		if (err)
			return err;
	}
	return 0;
}

/*
 * xz_inflate() - decompress an xz stream of at most MINIDEBUG_CAP bytes.
 * @param[out] out, outlen  caller owns, free()
 * @return 0, -ENOMEM, -SYM_E_DECOMPRESS
 */
static int xz_inflate(const void *src, size_t srclen, void **out,
		      size_t *outlen)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = srclen < MINIDEBUG_CAP / 4 ? srclen * 4 : MINIDEBUG_CAP;
	uint8_t *buf = NULL, *nbuf;
	lzma_ret ret;
	int err;

	if (cap < 65536)
		cap = 65536;
	if (lzma_stream_decoder(&strm, MINIDEBUG_MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	buf = symi_malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	strm.next_in = src;
	strm.avail_in = srclen;
	strm.next_out = buf;
	strm.avail_out = cap;
	for (;;) {
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret == LZMA_MEM_ERROR) {
			err = -ENOMEM;
			goto out;
		}
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR) {
			err = -SYM_E_DECOMPRESS;
			goto out;
		}
		if (strm.avail_out > 0) {
			/* No progress possible: truncated input. */
			err = -SYM_E_DECOMPRESS;
			goto out;
		}
		if (cap >= MINIDEBUG_CAP) {
			err = -SYM_E_DECOMPRESS;
			goto out;
		}
		cap = cap <= MINIDEBUG_CAP / 2 ? cap * 2 : MINIDEBUG_CAP;
		nbuf = symi_realloc(buf, cap);
		if (!nbuf) {
			err = -ENOMEM;
			goto out;
		}
		buf = nbuf;
		strm.next_out = buf + strm.total_out;
		strm.avail_out = cap - strm.total_out;
	}
	*out = buf;
	*outlen = strm.total_out;
	buf = NULL;
	err = 0;
out:
	free(buf);
	lzma_end(&strm);
	return err;
}

/* The .symtab of the MiniDebugInfo in .gnu_debugdata, if there is one. */
static int read_minidebuginfo(struct symi_builder *b,
			      const struct symi_elf *e)
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

	err = xz_inflate(data->d_buf, data->d_size, &buf, &len);
	if (err == -SYM_E_DECOMPRESS) {
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
	err = read_tables(b, &mini);
	symi_elf_close(&mini);
	return err;
}

/* Allocated sections: a sizeless symbol covers only its own section. */
static int read_sections(struct symi_builder *b, const struct symi_elf *e)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_size == 0 || sh.sh_addr > UINT64_MAX - sh.sh_size)
			continue;
		if (symi_builder_add_section(b, sh.sh_addr,
					     sh.sh_addr + sh.sh_size))
			return -ENOMEM;
	}
	return 0;
}

int symi_symtab_read(struct symi_builder *b, const struct symi_elf *e)
{
	int err;

	if (!e->elf)
		return 0;
	err = read_sections(b, e);
	if (!err)
		err = read_tables(b, e);
	if (err)
		return err;
	return read_minidebuginfo(b, e);
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
			    sh.sh_addr > UINT64_MAX - sh.sh_size)
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
