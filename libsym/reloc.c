/*
 * reloc.c - applying a kernel module's relocations to its DWARF.
 *
 * A .ko is a relocatable file (ET_REL): every section is at address 0 and
 * its .debug_* sections hold zeros where the linker would have written
 * addresses and offsets, the values being in .rela.debug_* sections
 * (docs/design.md, "Kernel modules").  libdw reads the bytes as they are
 * (libdwfl relocates, libdw does not), so before libdw sees a module,
 * symi_elf_relocate_debug() copies each relocated .debug_* section into a
 * buffer of its own (owned by e->bufs), writes the relocated values there
 * and makes libelf's cached Elf_Data point at it, as sections.c does for
 * decompressed ones.  Nothing is written to the file.
 *
 * The layout is the module's address convention: .text is at 0, so an
 * address in it is its offset into .text, as `eu-addr2line -j .text`
 * takes it; every other allocated section follows .text in section order,
 * each at its own alignment, so that no code of .init.text, .exit.text or
 * .text.unlikely lands on a .text offset (the table keeps .text's ranges
 * only).  Non-allocated sections (.debug_str, .debug_line, ...) are at 0:
 * a reference into one is its offset there.  This is libdwfl's layout for
 * an offline ET_REL (dwfl_offline_section_address()) shifted so that
 * .text is at 0.
 *
 * Relocation types: the ones DWARF uses, for x86-64 (R_X86_64_64, _32,
 * _32S, _DTPOFF32, _DTPOFF64, _NONE) and aarch64 (R_AARCH64_ABS64,
 * _ABS32, _NONE; also R_AARCH64_PREL32, used in .debug_frame, which the
 * builder does not read and which is skipped).  SHT_REL sections take
 * their addend from the bytes in place.  The sections the builder never
 * reads (symi_debug_section_unused(): location lists, call frames, ...)
 * are left as they are.
 *
 * Bad input: a relocation whose offset lies outside its section, whose
 * symbol index is past the symbol table, or whose type is unknown fails
 * the whole file with -SYM_E_BADDWARF and a message naming the section and
 * the entry; a relocated section that is still compressed (a zlib stream
 * libdeflate could not inflate) or a compressed relocation section gives
 * -SYM_E_UNSUPPORTED.  Memory: one copy of each relocated section, which
 * lies inside the file (elf_check()), so at most the file's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base.h"

#ifndef R_X86_64_DTPOFF64
#define R_X86_64_DTPOFF64 17
#endif
#ifndef R_X86_64_DTPOFF32
#define R_X86_64_DTPOFF32 21
#endif
#ifndef R_AARCH64_PREL32
#define R_AARCH64_PREL32 261
#endif

/* One relocation section being applied. */
struct rsec {
	struct symi_elf *e;
	const char *rname;	/* its name, for messages */
	Elf_Data *rdata;	/* the relocations */
	Elf_Data *syms;		/* the symbol table they use */
	size_t nsyms;
	const uint64_t *addr;	/* the layout: address of each section */
	size_t shnum;
	uint8_t *buf;		/* the target section's copy */
	size_t len;
	bool rela;
};

static const char *rname_path(const struct symi_elf *e)
{
	return e->path ? e->path : "<memory>";
}

/* The width in bytes a relocation of @type writes (0: nothing, -1:
 * unknown), and whether its value is signed 32 bits (32S). */
static int type_width(unsigned machine, uint32_t type)
{
	if (machine == EM_X86_64) {
		switch (type) {
		case R_X86_64_NONE: return 0;
		case R_X86_64_64:
		case R_X86_64_DTPOFF64: return 8;
		case R_X86_64_32:
		case R_X86_64_32S:
		case R_X86_64_DTPOFF32: return 4;
		}
	} else if (machine == EM_AARCH64) {
		switch (type) {
		case R_AARCH64_NONE:
		case R_AARCH64_PREL32: return 0;
		case R_AARCH64_ABS64: return 8;
		case R_AARCH64_ABS32: return 4;
		}
	}
	return -1;
}

/* Fail with a message naming entry @i of @r. */
static int bad(const struct rsec *r, size_t i, const char *why)
{
	symi_warn("dwarf: '%s': relocation %zu of %s: %s",
		  rname_path(r->e), i, r->rname, why);
	return -SYM_E_BADDWARF;
}

/* The value of symbol @ndx in the layout, into *@v. */
static int sym_value(const struct rsec *r, size_t i, uint64_t ndx,
		     uint64_t *v)
{
	GElf_Sym s;
	size_t shndx;

	if (ndx == 0) {
		*v = 0;
		return 0;
	}
	if (ndx >= r->nsyms || !gelf_getsym(r->syms, (int)ndx, &s))
		return bad(r, i, "symbol index past the symbol table");
	shndx = s.st_shndx;
	if (shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == SHN_COMMON ||
	    (shndx >= SHN_LORESERVE && shndx != SHN_XINDEX))
		*v = shndx == SHN_ABS ? s.st_value : 0;
	else if (shndx < r->shnum)
		*v = r->addr[shndx] + s.st_value;
	else
		return bad(r, i, "symbol of a section that does not exist");
	return 0;
}

/* Apply every entry of @r to its copy of the target section. */
static int apply(struct rsec *r)
{
	size_t ent = gelf_fsize(r->e->elf, r->rela ? ELF_T_RELA : ELF_T_REL,
				1, EV_CURRENT);
	size_t n = ent ? r->rdata->d_size / ent : 0;
	unsigned machine = r->e->ehdr.e_machine;

	for (size_t i = 0; i < n; i++) {
		GElf_Rela ra;
		GElf_Rel rl;
		uint64_t off, s, v;
		int64_t addend;
		int w, err;

		if (r->rela) {
			if (!gelf_getrela(r->rdata, (int)i, &ra))
				return bad(r, i, "cannot be read");
		} else {
			if (!gelf_getrel(r->rdata, (int)i, &rl))
				return bad(r, i, "cannot be read");
			ra.r_offset = rl.r_offset;
			ra.r_info = rl.r_info;
			ra.r_addend = 0;
		}
		w = type_width(machine, (uint32_t)GELF_R_TYPE(ra.r_info));
		if (w < 0)
			return bad(r, i, "a relocation type DWARF does not use");
		if (w == 0)
			continue;
		off = ra.r_offset;
		if (off > r->len || (size_t)w > r->len - off)
			return bad(r, i, "offset outside the section");
		addend = ra.r_addend;
		if (!r->rela) {
			if (w == 8) {
				memcpy(&v, r->buf + off, 8);
				addend = (int64_t)v;
			} else {
				uint32_t v32;

				memcpy(&v32, r->buf + off, 4);
				addend = (int32_t)v32;
			}
		}
		err = sym_value(r, i, GELF_R_SYM(ra.r_info), &s);
		if (err)
			return err;
		v = s + (uint64_t)addend;
		if (w == 8) {
			memcpy(r->buf + off, &v, 8);
		} else {
			uint32_t v32 = (uint32_t)v;

			memcpy(r->buf + off, &v32, 4);
		}
	}
	return 0;
}

/*
 * layout() - the address of each section (see the top of this file) into
 * @addr[shnum]: .text (@text) at 0, the other allocated sections after it.
 */
static void layout(struct symi_elf *e, uint64_t *addr, size_t shnum)
{
	GElf_Shdr sh;
	uint64_t next = 0;
	Elf_Scn *scn;

	scn = elf_getscn(e->elf, e->ko_text);
	if (scn && gelf_getshdr(scn, &sh))
		next = sh.sh_size;
	for (size_t i = 1; i < shnum; i++) {
		uint64_t al;

		addr[i] = 0;
		scn = elf_getscn(e->elf, i);
		if (i == e->ko_text || !scn || !gelf_getshdr(scn, &sh) ||
		    !(sh.sh_flags & SHF_ALLOC))
			continue;
		al = sh.sh_addralign > 1 && sh.sh_addralign <= 4096 ?
		     sh.sh_addralign : 1;
		/* Sizes lie inside a file (elf_check()), so no overflow
		 * below 2^63. */
		next = (next + al - 1) & ~(al - 1);
		addr[i] = next;
		next += sh.sh_size;
	}
}

/* Is @scn a relocation section for a .debug_* section of @e?  Then its
 * target's index into *@tgt. */
static bool debug_rel(struct symi_elf *e, size_t shstrndx, GElf_Shdr *sh,
		      size_t shnum, size_t *tgt)
{
	GElf_Shdr th;
	Elf_Scn *t;
	const char *name;

	if ((sh->sh_type != SHT_RELA && sh->sh_type != SHT_REL) ||
	    sh->sh_info == 0 || sh->sh_info >= shnum)
		return false;
	t = elf_getscn(e->elf, sh->sh_info);
	if (!t || !gelf_getshdr(t, &th) || (th.sh_flags & SHF_ALLOC) ||
	    th.sh_type == SHT_NOBITS)
		return false;
	name = elf_strptr(e->elf, shstrndx, th.sh_name);
	if (!name || strncmp(name, ".debug_", 7) != 0 ||
	    symi_debug_section_unused(name))
		return false;
	*tgt = sh->sh_info;
	return true;
}

/* Set up @r for relocation section @scn (header @sh) aimed at @tgt. */
static int rsec_setup(struct rsec *r, Elf_Scn *scn, const GElf_Shdr *sh,
		      size_t shstrndx, size_t tgt)
{
	Elf_Scn *symscn = elf_getscn(r->e->elf, sh->sh_link);
	Elf_Scn *t = elf_getscn(r->e->elf, tgt);
	GElf_Shdr syh, th;
	Elf_Data *td;

	r->rname = elf_strptr(r->e->elf, shstrndx, sh->sh_name);
	if (!r->rname)
		r->rname = "a relocation section";
	r->rela = sh->sh_type == SHT_RELA;
	if ((sh->sh_flags & SHF_COMPRESSED) || !t || !gelf_getshdr(t, &th) ||
	    (th.sh_flags & SHF_COMPRESSED)) {
		symi_warn("dwarf: '%s': %s: relocating a compressed section is not supported",
			  rname_path(r->e), r->rname);
		return -SYM_E_UNSUPPORTED;
	}
	if (!symscn || !gelf_getshdr(symscn, &syh) ||
	    syh.sh_type != SHT_SYMTAB || syh.sh_entsize == 0 ||
	    !(r->syms = elf_getdata(symscn, NULL)) ||
	    !(r->rdata = elf_getdata(scn, NULL)) ||
	    !(td = elf_getdata(t, NULL))) {
		symi_warn("dwarf: '%s': %s: no symbol table or no data",
			  rname_path(r->e), r->rname);
		return -SYM_E_BADDWARF;
	}
	r->nsyms = r->syms->d_size / syh.sh_entsize;
	r->len = td->d_size;
	r->buf = symi_malloc(r->len ? r->len : 1);
	if (!r->buf)
		return -ENOMEM;
	if (r->len)
		memcpy(r->buf, td->d_buf, r->len);
	return 0;
}

/* Relocate the target of relocation section @scn; on success libelf
 * reads the relocated copy. */
static int relocate_one(struct symi_elf *e, Elf_Scn *scn, const GElf_Shdr *sh,
			size_t shstrndx, size_t tgt, const uint64_t *addr,
			size_t shnum)
{
	struct rsec r = { .e = e, .addr = addr, .shnum = shnum };
	Elf_Scn *t = elf_getscn(e->elf, tgt);
	Elf_Data *td;
	GElf_Shdr th;
	int err;

	err = rsec_setup(&r, scn, sh, shstrndx, tgt);
	if (!err)
		err = apply(&r);
	if (!err)
		err = symi_elf_keep_buf(e, r.buf); /* frees it on failure */
	else
		free(r.buf);
	if (err)
		return err;
	td = elf_getdata(t, NULL);
	if (!td || !gelf_getshdr(t, &th) ||
	    !symi_elf_set_plain(t, td, r.buf, r.len, th.sh_addralign)) {
		symi_warn("dwarf: '%s': %s: cannot update its section: %s",
			  rname_path(e), r.rname, elf_errmsg(-1));
		return -SYM_E_BADDWARF;
	}
	return 0;
}

int symi_elf_relocate_debug(struct symi_elf *e)
{
	size_t shnum = 0, shstrndx, tgt;
	uint64_t *addr;
	Elf_Scn *scn = NULL;
	int err = 0;

	if (!e->elf || !e->ko_text || e->relocated)
		return 0;
	if (elf_getshdrnum(e->elf, &shnum) != 0 ||
	    elf_getshdrstrndx(e->elf, &shstrndx) != 0 || shnum == 0)
		return -SYM_E_BADELF;
	addr = symi_calloc(shnum, sizeof(*addr));
	if (!addr)
		return -ENOMEM;
	layout(e, addr, shnum);
	while (!err && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    debug_rel(e, shstrndx, &sh, shnum, &tgt))
			err = relocate_one(e, scn, &sh, shstrndx, tgt, addr,
					   shnum);
	}
	free(addr);
	if (!err)
		e->relocated = true;
	return err;
}
