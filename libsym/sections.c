/*
 * sections.c - getting the debug sections ready for libdw, cheaply.
 *
 * libdw's dwarf_begin_elf() decompresses every compressed .debug_*
 * section it knows, with zlib, whether or not it will be read.  In
 * Debian's debug files that is most of the cold-start time: libc's
 * location lists alone are larger than its line tables.  Before libdw
 * sees the file, symi_elf_prepare_dwarf():
 *
 *  - empties the compressed sections the table builder never reads
 *    (location lists, macros, call frames, name indexes), so they are
 *    never decompressed;
 *  - decompresses the zlib sections it does read with libdeflate, which
 *    is two to three times faster than zlib's inflate.
 *
 * Both leave the section looking uncompressed to libelf, the same way
 * elf.c handles zstd sections: the cached Elf_Data points at our buffer
 * (owned by e->bufs) and the header loses SHF_COMPRESSED.  Nothing is
 * written to the file.  Any failure here is not an error: the section
 * is left as it was, for libdw to handle or to report.
 *
 * Limits: a section may expand to at most 4 GiB and at most 1032 times
 * its compressed size (deflate's maximum ratio), so a forged ch_size
 * cannot make us allocate more than the input could produce.
 */
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "internal.h"

#define SECTION_CAP ((uint64_t)4 << 30)
#define DEFLATE_MAX_RATIO 1032

/* Sections the table builder never reads. */
static const char *const unused[] = {
	".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo",
	".debug_frame", ".debug_pubnames", ".debug_pubtypes",
	".debug_gnu_pubnames", ".debug_gnu_pubtypes", ".debug_names",
	".debug_aranges", ".debug_cu_index", ".debug_tu_index",
	NULL,
};

static bool is_unused(const char *name)
{
	for (size_t i = 0; unused[i]; i++) {
		if (strcmp(name, unused[i]) == 0)
			return true;
	}
	return false;
}

static int keep(struct symi_elf *e, void *buf)
{
	void *arr = e->bufs;

	if (symi_grow(&arr, &e->capbufs, e->nbufs + 1, sizeof(void *))) {
		free(buf);
		return -ENOMEM;
	}
	e->bufs = arr;
	e->bufs[e->nbufs++] = buf;
	return 0;
}

/* Point @scn's cached data at @buf (@len bytes) and clear the flag. */
static bool replace(Elf_Scn *scn, Elf_Data *data, void *buf, size_t len,
		    uint64_t align)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh))
		return false;
	data->d_buf = buf;
	data->d_size = len;
	data->d_type = ELF_T_BYTE;
	data->d_off = 0;
	data->d_align = align ? align : 1;
	sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	sh.sh_size = len;
	sh.sh_addralign = data->d_align;
	return gelf_update_shdr(scn, &sh) != 0;
}

static int inflate_section(struct symi_elf *e, Elf_Scn *scn, Elf_Data *data,
			   const GElf_Chdr *ch, size_t chsz,
			   struct libdeflate_decompressor **dec)
{
	size_t in = data->d_size - chsz, got = 0;
	void *buf;
	enum libdeflate_result r;

	if (ch->ch_size > SECTION_CAP ||
	    ch->ch_size / DEFLATE_MAX_RATIO > in)
		return 0;	/* implausible: leave it to libdw */
	if (!*dec) {
		*dec = libdeflate_alloc_decompressor();
		if (!*dec)
			return -ENOMEM;
	}
	buf = symi_malloc(ch->ch_size ? ch->ch_size : 1);
	if (!buf)
		return -ENOMEM;
	r = libdeflate_zlib_decompress(*dec, (char *)data->d_buf + chsz, in,
				       buf, ch->ch_size, &got);
	if (r != LIBDEFLATE_SUCCESS || got != ch->ch_size) {
		free(buf);
		return 0;	/* libdw will say what is wrong with it */
	}
	if (keep(e, buf))
		return -ENOMEM;
	if (!replace(scn, data, buf, got, ch->ch_addralign))
		symi_debug("elf: cannot update section %zu of '%s': %s",
			   elf_ndxscn(scn), e->path ? e->path : "<memory>",
			   elf_errmsg(-1));
	return 0;
}

int symi_elf_prepare_dwarf(struct symi_elf *e)
{
	struct libdeflate_decompressor *dec = NULL;
	size_t shstrndx, chsz;
	Elf_Scn *scn = NULL;
	int err = 0;

	if (!e->elf || elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return 0;
	chsz = e->ehdr.e_ident[EI_CLASS] == ELFCLASS32 ? sizeof(Elf32_Chdr) :
							 sizeof(Elf64_Chdr);
	while (!err && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		Elf_Data *data;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) ||
		    sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7) != 0 ||
		    !gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < chsz)
			continue;
		if (is_unused(name)) {
			static char empty[1];

			replace(scn, data, empty, 0, 1);
			continue;
		}
		err = inflate_section(e, scn, data, &ch, chsz, &dec);
	}
	libdeflate_free_decompressor(dec);
	return err;
}
