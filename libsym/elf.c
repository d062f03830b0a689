/*
 * elf.c - opening ELF files, build IDs, zstd sections and the search for
 * separate debug files and dwz alt files.
 *
 * Invariants of an open struct symi_elf:
 *  - every header the rest of libsym (and libdw) will read lies inside the
 *    file: e_phoff/e_shoff tables and the data of every section that is
 *    not SHT_NOBITS were checked against the file size in elf_check();
 *  - no section is SHF_COMPRESSED with ELFCOMPRESS_ZSTD any more.
 *    elfutils 0.188 cannot decompress those, so elf_unzstd() does it with
 *    libzstd and then makes the section look like a plain one to libelf:
 *    its cached Elf_Data points at our buffer (owned by e->bufs) and its
 *    header loses SHF_COMPRESSED.  libdw's check_section() only looks at
 *    gelf_getshdr() and elf_getdata(), so it reads the plain bytes.
 *    gelf_update_shdr() is safe on a read-only ELF_C_READ_MMAP image (and
 *    on elf_memory(), which reads the same way): for these commands
 *    libelf's file_read_elf() copies the section headers out of the map
 *    ("We need a copy to be able to write"), so nothing is written to the
 *    PROT_READ mapping and the file is never modified.
 *
 * Whole-file compression: a kernel module compressed whole, as the
 * kernel's CONFIG_MODULE_COMPRESS_XZ/ZSTD/GZIP install them (NAME.ko.xz,
 * NAME.ko.zst: Fedora, Ubuntu, Arch, Debian 13; NAME.ko.gz: older
 * Arch, some embedded builds), is recognized by its
 * magic number and decompressed into a memory image, path or memory
 * alike; it may decompress to the per-file limit below, and to no more
 * than the ratio limit times its size (-SYM_E_INFLATE_LIMIT): at once
 * when it declares more (declared_size()), else when its output does.
 *
 * Ownership: a file opened by path owns fd, elf and path (and the image
 * of a compressed file); a memory image owns image and has fd -1.  A zeroed struct is closed, so
 * symi_elf_close() closes fd only when path is set (a zeroed fd is 0).
 *
 * Debug file search (symi_find_debug_file()) follows libdwfl's
 * find-debuginfo.c: build ID first, then .gnu_debuglink.  For a debuglink
 * candidate the build ID decides when both files have one (as in libdwfl;
 * it is stronger than the CRC, survives a recompressed debug file, and
 * needs no read of the whole file); the CRC decides otherwise.
 *
 * Logging: a failure that symi_elf_open() returns is logged at INFO only,
 * since the caller reports the error itself and a second line on stderr
 * would break eu-addr2line-compatible output.
 *
 * Limits: a zstd section may expand to at most 4 GiB, and no more than its
 * ch_size says; output memory grows with the data actually decompressed,
 * so a lying ch_size costs nothing.  The ch_size of every zstd section is
 * checked against the decompression limits (symi_inflate_check(),
 * sections.c) before the first is decompressed: a file over them is
 * refused with -SYM_E_INFLATE_LIMIT.  Build IDs are at most 64 bytes.
 * Candidate paths longer than 4095 bytes are skipped.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <libdeflate.h>
#include <lzma.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "internal.h"
#include "base.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* The largest size a zstd section may decompress to. */
#define ZSTD_SECTION_CAP ((uint64_t)4 << 30)

/* liblzma's decoder memory limit; xz -9 needs 65 MiB. */
#define XZ_MEMLIMIT ((uint64_t)128 << 20)

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

/* Room for one candidate path; longer ones are skipped, not truncated. */
#define PATH_ROOM 4096

enum open_flags {
	/* Headers and build ID only: no zstd decompression. */
	OPEN_NOTES_ONLY = (1 << 0),
	/* Accept ET_REL and ET_CORE too: a dwz multifile (dwz -m) is
	 * ET_REL, and sym_file_build_id() reads any ELF file. */
	OPEN_ANY_TYPE = (1 << 1),
};

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static void elf_init_once(void)
{
	elf_version(EV_CURRENT);
}

static const char *elf_name(const struct symi_elf *e)
{
	return e->path ? e->path : "<memory>";
}

static void free_bufs(struct symi_elf *e)
{
	for (size_t i = 0; i < e->nbufs; i++)
		free(e->bufs[i]);
	free(e->bufs);
	e->bufs = NULL;
	e->nbufs = e->capbufs = 0;
}

void symi_elf_close(struct symi_elf *e)
{
	if (!e)
		return;
	/* elf_end() first: libelf may still point at our buffers. */
	if (e->elf)
		elf_end(e->elf);
	free_bufs(e);
	/* Only a file opened by path owns its fd: a zeroed struct (fd 0) is
	 * closed too. */
	if (e->path && e->fd >= 0)
		close(e->fd);
	free(e->image);
	free(e->path);
	memset(e, 0, sizeof(*e));
}

/* Is [off, off + len) inside a file of @size bytes? */
static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static Elf_Scn *find_section(const struct symi_elf *e, const char *name);

/*
 * ko_check() - accept a relocatable file only when it is a Linux kernel
 * module: a .modinfo section and an executable .text section, whose
 * index is kept in e->ko_text.  Any other ET_REL stays unsupported.
 */
static int ko_check(struct symi_elf *e)
{
	Elf_Scn *text = find_section(e, ".text");
	GElf_Shdr sh;

	if (!find_section(e, ".modinfo") || !text ||
	    !gelf_getshdr(text, &sh) || sh.sh_type != SHT_PROGBITS ||
	    !(sh.sh_flags & SHF_EXECINSTR)) {
		symi_info("elf: '%s' is a relocatable file that is not a "
			  "kernel module, which is not supported",
			  elf_name(e));
		return -SYM_E_UNSUPPORTED;
	}
	e->ko_text = elf_ndxscn(text);
	return 0;
}

/*
 * elf_check() - reject files that would make libelf or libdw read past
 * the end: the program and section header tables and the data of every
 * section must lie inside the file.  Program header contents are not
 * checked, because separate debug files keep the program headers of the
 * stripped file, whose offsets point at data that is not there.
 */
static int elf_check(struct symi_elf *e, uint64_t size, unsigned flags)
{
	const char *name = elf_name(e);
	size_t shnum = 0, phnum = 0, shstrndx, ent;
	bool rel = false;

	if (!gelf_getehdr(e->elf, &e->ehdr)) {
		symi_info("elf: cannot read the ELF header of '%s': %s", name,
			  elf_errmsg(-1));
		return -SYM_E_BADELF;
	}
	switch (e->ehdr.e_type) {
	case ET_EXEC:
	case ET_DYN:
		break;
	case ET_REL:
	case ET_CORE:
		if (flags & OPEN_ANY_TYPE)
			break;
		if (e->ehdr.e_type == ET_REL) {
			rel = true;	/* a kernel module?  ko_check() */
			break;
		}
		symi_info("elf: '%s' is a %s file, which is not supported",
			  name, e->ehdr.e_type == ET_REL ? "relocatable"
							 : "core");
		return -SYM_E_UNSUPPORTED;
	default:
		symi_info("elf: '%s' has an unknown ELF type %u", name,
			  (unsigned)e->ehdr.e_type);
		return -SYM_E_BADELF;
	}

	/*
	 * libelf quietly reports 0 sections (or fewer segments) when the
	 * tables do not fit in the file, so the counts in the ELF header
	 * are checked as well.  PN_XNUM and e_shnum 0 mean the real counts
	 * are in section header 0, which libelf reads for us.
	 */
	if (elf_getphdrnum(e->elf, &phnum) < 0 ||
	    (e->ehdr.e_phnum != PN_XNUM && phnum != e->ehdr.e_phnum)) {
		symi_info("elf: program headers of '%s' lie outside the file",
			  name);
		return -SYM_E_BADELF;
	}
	if (phnum > 0) {
		ent = gelf_fsize(e->elf, ELF_T_PHDR, 1, EV_CURRENT);
		if (e->ehdr.e_phentsize != ent ||
		    !in_file(e->ehdr.e_phoff, (uint64_t)phnum * ent, size)) {
			symi_info("elf: program headers of '%s' lie outside the file",
				  name);
			return -SYM_E_BADELF;
		}
	}

	if (e->ehdr.e_shoff == 0)
		return 0;
	ent = gelf_fsize(e->elf, ELF_T_SHDR, 1, EV_CURRENT);
	if (e->ehdr.e_shentsize != ent ||
	    !in_file(e->ehdr.e_shoff, ent, size) ||
	    elf_getshdrnum(e->elf, &shnum) < 0 || shnum == 0 ||
	    (e->ehdr.e_shnum != 0 && shnum != e->ehdr.e_shnum) ||
	    !in_file(e->ehdr.e_shoff, (uint64_t)shnum * ent, size)) {
		symi_info("elf: section headers of '%s' lie outside the file",
			  name);
		return -SYM_E_BADELF;
	}
	if (elf_getshdrstrndx(e->elf, &shstrndx) < 0 || shstrndx >= shnum) {
		symi_info("elf: cannot read section names of '%s': %s", name,
			  elf_errmsg(-1));
		return -SYM_E_BADELF;
	}
	for (size_t i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(e->elf, i);
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh)) {
			symi_info("elf: cannot read section header %zu of '%s': %s",
				  i, name, elf_errmsg(-1));
			return -SYM_E_BADELF;
		}
		if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
			continue;
		if (!in_file(sh.sh_offset, sh.sh_size, size)) {
			symi_info("elf: section %zu of '%s' lies outside the file",
				  i, name);
			return -SYM_E_BADELF;
		}
	}
	return rel ? ko_check(e) : 0;
}

/* The one parser of GNU build-ID notes (sym.h: sym_notes_build_id()),
 * over modid.c's note walker (which libsymprof shares). */
int symi_notes_build_id(const void *notes, size_t len, size_t align,
			const uint8_t **id, size_t *idlen)
{
	return symi_notes_find(notes, len, align, "GNU", 4,
			       SYMI_NT_GNU_BUILD_ID, SYMI_BUILD_ID_MAX, id,
			       idlen) ? -SYM_E_NOTFOUND : 0;
}

int sym_notes_build_id(const void *notes, size_t len, size_t align,
		       char *hex, size_t hexlen)
{
	const uint8_t *id;
	size_t n;
	int err;

	if (!hex || (!notes && len))
		return -EINVAL;
	err = symi_notes_build_id(notes, len, align, &id, &n);
	if (err)
		return err;
	if (hexlen < 2 * n + 1)
		return -ERANGE;
	symi_hex(id, n, hex);
	return 0;
}

/* Find NT_GNU_BUILD_ID in one block of notes, as libelf gives them (in
 * the host's byte order); remember the go module ID of the first Go
 * build ID note met, for a file without a GNU one. */
static bool notes_build_id(Elf_Data *data, struct symi_elf *e)
{
	const uint8_t *id;
	size_t n, align;

	if (!data || !data->d_buf)
		return false;
	align = data->d_type == ELF_T_NHDR8 ? 8 : 4;
	if (e->modid_kind != SYM_MODID_GO &&
	    symi_notes_find(data->d_buf, data->d_size, align, "Go\0\0", 4,
			    SYMI_NT_GO_BUILDID, SYMI_GO_BUILD_ID_MAX, &id,
			    &n) == 0) {
		symi_modid_go(id, n, e->modid);
		e->modid_kind = SYM_MODID_GO;
	}
	if (symi_notes_build_id(data->d_buf, data->d_size, align, &id, &n))
		return false;
	memcpy(e->build_id, id, n);
	e->build_id_len = n;
	return true;
}

/*
 * The module ID when there is no GNU build ID and no Go note (modid.h):
 * the file ID of the whole file, @size bytes, from the image or the fd.
 * A file that cannot be read leaves it unknown (kind SYM_MODID_NONE).
 */
static void read_file_id(struct symi_elf *e, uint64_t size)
{
	size_t n = size < SYMI_MODID_PART ? (size_t)size : SYMI_MODID_PART;

	if (e->image)
		symi_modid_file(e->image, n, (const uint8_t *)e->image +
				size - n, n, size, e->modid);
	else if (e->fd < 0 || symi_modid_fd(e->fd, size, e->modid) != 0)
		return;
	e->modid_kind = SYM_MODID_FILE;
}

/*
 * Read the build ID: from SHT_NOTE sections when there are any (in a
 * separate debug file the PT_NOTE offsets are those of the stripped file),
 * else from PT_NOTE segments.  No build ID is not an error.
 */
static void read_build_id(struct symi_elf *e, uint64_t size)
{
	Elf_Scn *scn = NULL;
	bool have_notes = false;
	size_t phnum;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		have_notes = true;
		if (notes_build_id(elf_getdata(scn, NULL), e))
			return;
	}
	if (have_notes || elf_getphdrnum(e->elf, &phnum) < 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_filesz == 0 ||
		    !in_file(ph.p_offset, ph.p_filesz, size))
			continue;
		data = elf_getdata_rawchunk(e->elf, ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8
							    : ELF_T_NHDR);
		if (notes_build_id(data, e))
			return;
	}
}

int symi_elf_keep_buf(struct symi_elf *e, void *buf)
{
	void *arr = e->bufs;
	int err = symi_grow(&arr, &e->capbufs, e->nbufs + 1, sizeof(void *));

	if (err) {
		free(buf);
		return err;
	}
	e->bufs = arr;
	e->bufs[e->nbufs++] = buf;
	return 0;
}

/*
 * zstd_inflate_max() - decompress the zstd frames @src (@srclen bytes)
 * into a new buffer of at most @max bytes, grown with the output (so
 * that a forged size allocates nothing up front), with @dctx (NULL: one
 * of its own).
 * @param[out] out, outlen  caller owns @out, free()
 * @return 0, -ENOMEM, -E2BIG (more than @max), -SYM_E_DECOMPRESS
 */
static int zstd_inflate_max(ZSTD_DCtx *dctx, const void *src, size_t srclen,
			    size_t max, void **out, size_t *outlen)
{
	ZSTD_DCtx *own = dctx ? NULL : ZSTD_createDCtx();
	ZSTD_inBuffer in = { src, srclen, 0 };
	ZSTD_outBuffer ob;
	size_t cap = srclen < max / 4 ? srclen * 4 : max, ret = 1;
	char *buf = NULL, *nbuf;
	int err;

	if (cap < 65536)
		cap = max < 65536 ? max : 65536;
	dctx = dctx ? dctx : own;
	buf = dctx ? symi_malloc(cap) : NULL;
	if (!buf) {
		err = -ENOMEM;
		goto fail;
	}
	ob = (ZSTD_outBuffer){ buf, cap, 0 };
	ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
	while (in.pos < in.size || ret != 0) {
		size_t in_pos = in.pos, out_pos = ob.pos;

		ret = ZSTD_decompressStream(dctx, &ob, &in);
		if (ZSTD_isError(ret)) {
			symi_debug("elf: zstd: %s", ZSTD_getErrorName(ret));
			err = -SYM_E_DECOMPRESS;
			goto fail;
		}
		if (ob.pos == ob.size) {
			if (cap >= max) {
				err = -E2BIG;
				goto fail;
			}
			cap = cap <= max / 2 ? cap * 2 : max;
			nbuf = symi_realloc(buf, cap);
			if (!nbuf) {
				err = -ENOMEM;
				goto fail;
			}
			buf = nbuf;
			ob.dst = buf;
			ob.size = cap;
		} else if (in.pos == in_pos && ob.pos == out_pos) {
			err = -SYM_E_DECOMPRESS; /* truncated frame */
			goto fail;
		}
	}
	*out = buf;
	*outlen = ob.pos;
	ZSTD_freeDCtx(own);
	return 0;
fail:
	free(buf);
	ZSTD_freeDCtx(own);
	return err;
}

/*
 * zstd_inflate() - decompress @src into a new buffer of exactly @want
 * bytes (a section's ch_size): more or less is corrupt.
 * @param[out] out  caller owns, free()
 * @return 0, -ENOMEM, -SYM_E_DECOMPRESS
 */
static int zstd_inflate(ZSTD_DCtx *dctx, const void *src, size_t srclen,
			size_t want, void **out)
{
	size_t len = 0;
	void *buf = NULL;
	int err;

	/* (one byte beyond @want, so that too much output is noticed) */
	if (want == SIZE_MAX)
		return -SYM_E_DECOMPRESS;
	err = zstd_inflate_max(dctx, src, srclen, want + 1, &buf, &len);
	if (err == -E2BIG || (!err && len != want)) {
		free(buf);
		return -SYM_E_DECOMPRESS;
	}
	if (!err)
		*out = buf;
	return err;
}

int symi_xz_inflate(const void *src, size_t srclen, size_t max, void **out,
		    size_t *outlen)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = srclen < max / 4 ? srclen * 4 : max;
	uint8_t *buf = NULL, *nbuf;
	lzma_ret ret;
	int err;

	if (cap < 65536)
		cap = max < 65536 ? max : 65536;
	if (lzma_stream_decoder(&strm, XZ_MEMLIMIT, 0) != LZMA_OK)
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
		if (cap >= max) {
			err = -E2BIG;
			goto out;
		}
		cap = cap <= max / 2 ? cap * 2 : max;
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

/* Whole-file compressions of kernel modules (.ko.xz, .ko.zst, .ko.gz). */
enum whole_kind { WHOLE_NONE, WHOLE_XZ, WHOLE_ZSTD, WHOLE_GZIP };

static const char *const whole_names[] = { "", "xz", "zstd", "gzip" };

#define WHOLE_MAGIC_LEN 6

static enum whole_kind whole_kind(const unsigned char *m, size_t n)
{
	static const unsigned char xz[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
	static const unsigned char zst[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	/* (gzip's ID1 ID2 and CM 8, deflate: the only method defined) */
	static const unsigned char gz[3] = { 0x1f, 0x8b, 0x08 };

	if (n >= sizeof(xz) && memcmp(m, xz, sizeof(xz)) == 0)
		return WHOLE_XZ;
	if (n >= sizeof(zst) && memcmp(m, zst, sizeof(zst)) == 0)
		return WHOLE_ZSTD;
	if (n >= sizeof(gz) && memcmp(m, gz, sizeof(gz)) == 0)
		return WHOLE_GZIP;
	return WHOLE_NONE;
}

/*
 * The size that the compressed file @src (@len bytes, @kind) declares it
 * decompresses to, UINT64_MAX when it declares none: zstd's first
 * frame's content size, xz's index (one stream, read from its
 * footer), gzip's ISIZE (its last 4 bytes: the size modulo 2^32).  For
 * xz and zstd only to refuse an honest bomb before any allocation: a
 * lying one is stopped by the cap as it decompresses.  gzip's is always
 * there and is the size of the output buffer (gzip_inflate()).
 */
static uint64_t declared_size(const unsigned char *src, size_t len,
			      enum whole_kind kind)
{
	lzma_stream_flags fl;
	lzma_index *idx = NULL;
	uint64_t memlimit = (uint64_t)1 << 20, n = UINT64_MAX;
	size_t pos = 0;

	if (kind == WHOLE_ZSTD) {
		/* (the first frame's: the rest, if any, meet the cap) */
		unsigned long long z = ZSTD_getFrameContentSize(src, len);

		return z >= ZSTD_CONTENTSIZE_ERROR ? UINT64_MAX : z;
	}
	if (kind == WHOLE_GZIP)
		/* (a 10-byte header, a deflate stream, CRC32 and ISIZE) */
		return len < 18 ? UINT64_MAX :
		       (uint64_t)src[len - 4] | (uint64_t)src[len - 3] << 8 |
		       (uint64_t)src[len - 2] << 16 |
		       (uint64_t)src[len - 1] << 24;
	if (len < 2 * LZMA_STREAM_HEADER_SIZE ||
	    lzma_stream_footer_decode(&fl, src + len -
				      LZMA_STREAM_HEADER_SIZE) != LZMA_OK ||
	    fl.backward_size > len - 2 * LZMA_STREAM_HEADER_SIZE)
		return UINT64_MAX;
	if (lzma_index_buffer_decode(&idx, &memlimit, NULL, src + len -
				     LZMA_STREAM_HEADER_SIZE -
				     fl.backward_size, &pos,
				     fl.backward_size) == LZMA_OK)
		n = lzma_index_uncompressed_size(idx);
	lzma_index_end(idx, NULL);
	return n;
}

/*
 * gzip_inflate() - decompress the one-member gzip file @src (@srclen
 * bytes) into a new buffer of exactly @want bytes, its ISIZE: libdeflate
 * decompresses into a buffer of known size, and checks the CRC32 and
 * ISIZE.  A stream that does not fill @want exactly (a lying ISIZE, a
 * file over 4 GiB, whose ISIZE wrapped), a bad CRC, or bytes after the
 * member (a second member, which a kernel's module compression never
 * writes) is corrupt.
 * @param[out] out, outlen  caller owns @out, free()
 * @return 0, -ENOMEM, -SYM_E_DECOMPRESS
 */
static int gzip_inflate(const void *src, size_t srclen, size_t want,
			void **out, size_t *outlen)
{
	struct libdeflate_decompressor *dec = libdeflate_alloc_decompressor();
	enum libdeflate_result r;
	size_t used = 0;
	void *buf = NULL;
	int err = -ENOMEM;

	if (!dec)
		return -ENOMEM;
	buf = symi_malloc(want ? want : 1);
	if (!buf)
		goto out;
	r = libdeflate_gzip_decompress_ex(dec, src, srclen, buf, want, &used,
					  NULL);
	if (r != LIBDEFLATE_SUCCESS || used != srclen) {
		symi_debug("elf: gzip: result %d, %zu of %zu bytes read",
			   (int)r, used, srclen);
		err = -SYM_E_DECOMPRESS;
		goto out;
	}
	*out = buf;
	*outlen = want;
	buf = NULL;
	err = 0;
out:
	free(buf);
	libdeflate_free_decompressor(dec);
	return err;
}

/*
 * inflate_whole() - decompress a whole compressed file (a .ko.xz,
 * .ko.zst or .ko.gz: the kernel's module compression) of @len bytes at @src, @kind,
 * under the per-file and ratio limits of sym_set_inflate_limits(), into
 * a new buffer (caller owns, free()): refused at once when the file
 * declares a size over them (declared_size()).  @name is for the
 * messages.
 * @return 0, -ENOMEM, -SYM_E_DECOMPRESS, -SYM_E_INFLATE_LIMIT
 */
static int inflate_whole(const char *name, const void *src, size_t len,
			 enum whole_kind kind, void **out, size_t *outlen)
{
	struct sym_inflate_limits lim;
	uint64_t max, want;
	int err;

	sym_get_inflate_limits(&lim);
	max = lim.file;
	if (len < max / lim.ratio)
		max = (uint64_t)len * lim.ratio + ((uint64_t)1 << 20);
	if (max > SIZE_MAX)
		max = SIZE_MAX;
	want = declared_size(src, len, kind);
	if (want != UINT64_MAX && want > max)
		err = -E2BIG;
	else if (kind == WHOLE_GZIP)
		err = want == UINT64_MAX ? -SYM_E_DECOMPRESS :
		      gzip_inflate(src, len, (size_t)want, out, outlen);
	else if (kind == WHOLE_XZ)
		err = symi_xz_inflate(src, len, (size_t)max, out, outlen);
	else
		err = zstd_inflate_max(NULL, src, len, (size_t)max, out, outlen);
	if (err == -E2BIG) {
		bool file = max >= lim.file;

		symi_warn("elf: '%s' decompresses to more than %llu bytes from %zu, over the %s decompression limit (%s)",
			  name, (unsigned long long)max, len,
			  file ? "per-file" : "ratio",
			  file ? "SYM_MAX_INFLATE_FILE" :
				 "SYM_MAX_INFLATE_RATIO");
		return -SYM_E_INFLATE_LIMIT;
	}
	if (err == -SYM_E_DECOMPRESS)
		symi_info("elf: '%s': a corrupt or truncated %s stream%s", name,
			  whole_names[kind], kind == WHOLE_GZIP ?
			  " (or not one member, or over 4 GiB)" : "");
	return err;
}

/* Decompress one zstd section and make it look uncompressed. */
static int unzstd_section(struct symi_elf *e, Elf_Scn *scn, ZSTD_DCtx *dctx)
{
	const char *name = elf_name(e);
	size_t chsz = e->ehdr.e_ident[EI_CLASS] == ELFCLASS32
			      ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr);
	GElf_Chdr ch;
	GElf_Shdr sh;
	Elf_Data *data;
	void *buf = NULL;
	int err;

	if (!gelf_getchdr(scn, &ch) || !(data = elf_getdata(scn, NULL)) ||
	    !data->d_buf || data->d_size < chsz || !gelf_getshdr(scn, &sh)) {
		symi_info("elf: cannot read compressed section %zu of '%s': %s",
			  elf_ndxscn(scn), name, elf_errmsg(-1));
		return -SYM_E_DECOMPRESS;
	}
	if (ch.ch_size > ZSTD_SECTION_CAP || ch.ch_size > SIZE_MAX - 1) {
		symi_info("elf: section %zu of '%s' is too large (%llu bytes)",
			  elf_ndxscn(scn), name,
			  (unsigned long long)ch.ch_size);
		return -SYM_E_DECOMPRESS;
	}
	err = zstd_inflate(dctx, (char *)data->d_buf + chsz,
			   data->d_size - chsz, ch.ch_size, &buf);
	if (err) {
		if (err == -SYM_E_DECOMPRESS)
			symi_info("elf: cannot decompress zstd section %zu of '%s'",
				  elf_ndxscn(scn), name);
		return err;
	}
	err = symi_elf_keep_buf(e, buf);
	if (err)
		return err;
	if (!symi_elf_set_plain(scn, data, buf, ch.ch_size,
				ch.ch_addralign)) {
		symi_info("elf: cannot update section %zu of '%s': %s",
			  elf_ndxscn(scn), name, elf_errmsg(-1));
		return -SYM_E_DECOMPRESS;
	}
	return 0;
}

bool symi_elf_set_plain(Elf_Scn *scn, Elf_Data *data, void *buf, size_t len,
			uint64_t align)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh))
		return false;
	/* libelf keeps this Elf_Data cached; later elf_getdata() calls
	 * (libdw's among them) return it as it is now. */
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

/* Is @scn a zstd-compressed section? */
static bool is_zstd(Elf_Scn *scn)
{
	GElf_Shdr sh;
	GElf_Chdr ch;

	if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) ||
	    sh.sh_type == SHT_NOBITS)
		return false;
	/* A bad header is reported by unzstd_section(). */
	return !gelf_getchdr(scn, &ch) || ch.ch_type == ELFCOMPRESS_ZSTD;
}

/* The decompression limits for zstd section @scn (symi_inflate_check());
 * a header that cannot be read is unzstd_section()'s to report. */
static int zstd_check(struct symi_elf *e, Elf_Scn *scn)
{
	size_t chsz = e->ehdr.e_ident[EI_CLASS] == ELFCLASS32
			      ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr);
	size_t shstrndx;
	const char *name = NULL;
	GElf_Chdr ch;
	GElf_Shdr sh;
	Elf_Data *data;

	if (!gelf_getchdr(scn, &ch) || !(data = elf_getdata(scn, NULL)) ||
	    data->d_size < chsz || !gelf_getshdr(scn, &sh))
		return 0;
	if (elf_getshdrstrndx(e->elf, &shstrndx) == 0)
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
	return symi_inflate_check(e, name, elf_ndxscn(scn),
				  data->d_size - chsz, ch.ch_size);
}

static int elf_unzstd(struct symi_elf *e)
{
	ZSTD_DCtx *dctx = NULL;
	Elf_Scn *scn = NULL;
	bool any = false;
	int err = 0;

	while ((scn = elf_nextscn(e->elf, scn)) && !any)
		any = is_zstd(scn);
	if (!any)
		return 0;

	/* Every declared size is checked before anything is allocated. */
	scn = NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!is_zstd(scn))
			continue;
		err = zstd_check(e, scn);
		if (err)
			return err;
	}
	dctx = ZSTD_createDCtx();
	if (!dctx)
		return -ENOMEM;
	scn = NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!is_zstd(scn))
			continue;
		err = unzstd_section(e, scn, dctx);
		if (err)
			break;
	}
	ZSTD_freeDCtx(dctx);
	return err;
}

/*
 * Common part of the opens: e->elf is set (or NULL after a failed
 * elf_begin()), @magic holds the first bytes of the file.
 */
static int elf_setup(struct symi_elf *e, const unsigned char *magic,
		     uint64_t size, unsigned flags)
{
	int err;

	if (size < SELFMAG || memcmp(magic, ELFMAG, SELFMAG) != 0)
		return -SYM_E_NOTELF;
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF) {
		symi_info("elf: cannot open '%s': %s", elf_name(e),
			  e->elf ? "not a valid ELF file" : elf_errmsg(-1));
		return -SYM_E_BADELF;
	}
	err = elf_check(e, size, flags);
	if (err)
		return err;
	read_build_id(e, size);
	if (e->build_id_len)
		e->modid_kind = SYM_MODID_GNU;
	else if (e->modid_kind != SYM_MODID_GO)
		read_file_id(e, size);
	if (!(flags & OPEN_NOTES_ONLY))
		return elf_unzstd(e);
	return 0;
}

/*
 * The image of compressed file @e->fd (@size bytes, @kind) into
 * e->image, and e->elf on it: a .ko.xz, .ko.zst or .ko.gz is read as
 * the module it holds.
 */
static int open_whole(struct symi_elf *e, uint64_t size, enum whole_kind kind,
		      size_t *len)
{
	void *map;
	int err;

	if (size > SIZE_MAX)
		return -SYM_E_INFLATE_LIMIT;
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, e->fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	err = inflate_whole(e->path, map, (size_t)size, kind, &e->image, len);
	munmap(map, (size_t)size);
	if (err)
		return err;
	e->elf = elf_memory(e->image, *len);
	return 0;
}

static int elf_open_path(const char *path, struct symi_elf *e,
			 unsigned flags)
{
	unsigned char magic[WHOLE_MAGIC_LEN] = { 0 };
	enum whole_kind kind;
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int err;

	pthread_once(&elf_once, elf_init_once);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
	e->path = symi_strdup(path);
	if (!e->path) {
		err = -ENOMEM;
		goto fail;
	}
	/* O_NONBLOCK: the open of a FIFO with no writer returns at once
	 * (and is refused below) instead of waiting for one; it changes
	 * nothing for a regular file. */
	e->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (e->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(e->fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -SYM_E_NOTREG;
		goto fail;
	}
	n = pread(e->fd, magic, sizeof(magic), 0);
	if (n < 0) {
		err = -errno;
		goto fail;
	}
	kind = whole_kind(magic, (size_t)n);
	if (kind != WHOLE_NONE) {
		err = open_whole(e, (uint64_t)st.st_size, kind, &len);
		if (!err)
			err = elf_setup(e, e->image, len, flags);
		if (err)
			goto fail;
		return 0;
	}
	if ((size_t)n < SELFMAG || memcmp(magic, ELFMAG, SELFMAG) != 0) {
		err = -SYM_E_NOTELF;
		goto fail;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	err = elf_setup(e, magic, st.st_size, flags);
	if (err)
		goto fail;
	return 0;
fail:
	symi_elf_close(e);
	return err;
}

int symi_elf_open(const char *path, struct symi_elf *e)
{
	return elf_open_path(path, e, 0);
}

int symi_elf_open_mem(const void *buf, size_t len, struct symi_elf *e)
{
	enum whole_kind kind = buf ? whole_kind(buf, len) : WHOLE_NONE;
	int err;

	pthread_once(&elf_once, elf_init_once);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
	if (kind != WHOLE_NONE) {
		/* (a compressed module: its image is the copy) */
		err = inflate_whole("<memory>", buf, len, kind, &e->image,
				    &len);
		if (err) {
			e->fd = 0;
			return err;
		}
		e->elf = elf_memory(e->image, len);
		err = elf_setup(e, e->image, len, 0);
		if (err)
			symi_elf_close(e);
		return err;
	}
	if (!buf || len < SELFMAG || memcmp(buf, ELFMAG, SELFMAG) != 0) {
		e->fd = 0;
		return -SYM_E_NOTELF;
	}
	/* A private, writable copy: see the top of the file. */
	e->image = symi_malloc(len);
	if (!e->image) {
		e->fd = 0;
		return -ENOMEM;
	}
	memcpy(e->image, buf, len);
	e->elf = elf_memory(e->image, len);
	err = elf_setup(e, e->image, len, 0);
	if (err)
		symi_elf_close(e);
	return err;
}

void symi_hex(const uint8_t *id, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 0xf];
	}
	hex[2 * len] = '\0';
}

void symi_elf_module_id(const struct symi_elf *e, char *hex)
{
	hex[0] = '\0';
	if (e->modid_kind == SYM_MODID_GNU)
		symi_hex(e->build_id, e->build_id_len, hex);
	else if (e->modid_kind == SYM_MODID_GO ||
		 e->modid_kind == SYM_MODID_FILE)
		symi_hex(e->modid, SYMI_MODID_LEN, hex);
}

/* sym_file_build_id() (@gnu_only, -SYM_E_NOTFOUND without one) and
 * sym_file_module_id() (-EIO when no ID could be derived). */
static int file_id(const char *path, char *hex, size_t len, bool gnu_only,
		   int *kind)
{
	char id[2 * SYMI_BUILD_ID_MAX + 1];
	struct symi_elf e;
	int err;

	if (!path || !hex)
		return -EINVAL;
	err = elf_open_path(path, &e, OPEN_NOTES_ONLY | OPEN_ANY_TYPE);
	if (err)
		return err;
	if (gnu_only && e.build_id_len)
		symi_hex(e.build_id, e.build_id_len, id);
	else if (gnu_only)
		id[0] = '\0';
	else
		symi_elf_module_id(&e, id);
	if (!id[0])
		err = gnu_only ? -SYM_E_NOTFOUND : -EIO;
	else if (len < strlen(id) + 1)
		err = -ERANGE;
	else {
		memcpy(hex, id, strlen(id) + 1);
		if (kind)
			*kind = e.modid_kind;
	}
	symi_elf_close(&e);
	return err;
}

int sym_file_build_id(const char *path, char *hex, size_t len)
{
	return file_id(path, hex, len, true, NULL);
}

int sym_file_kernel_text(const char *path, uint64_t *text)
{
	struct symi_elf e;
	int err;

	if (!path || !text)
		return -EINVAL;
	/* (.symtab is never compressed: only .debug_* sections are) */
	err = elf_open_path(path, &e, OPEN_NOTES_ONLY | OPEN_ANY_TYPE);
	if (err)
		return err;
	if (!symi_elf_kernel_text(&e, text))
		err = -SYM_E_NOTFOUND;
	symi_elf_close(&e);
	return err;
}

int sym_file_module_id(const char *path, char *hex, size_t len, int *kind)
{
	return file_id(path, hex, len, false, kind);
}

const char *sym_modid_kind_name(int kind)
{
	switch (kind) {
	case SYM_MODID_GNU:
		return "gnu";
	case SYM_MODID_GO:
		return "go";
	case SYM_MODID_FILE:
		return "file";
	default:
		return "none";
	}
}

/* The section named @name, or NULL. */
static Elf_Scn *find_section(const struct symi_elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!e->elf || elf_getshdrstrndx(e->elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (!gelf_getshdr(scn, &sh))
			continue;
		s = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (s && strcmp(s, name) == 0)
			return scn;
	}
	return NULL;
}

int sym_file_section(const char *path, const char *name, uint64_t *off,
		     uint64_t *size)
{
	struct symi_elf e;
	struct stat st;
	Elf_Scn *scn;
	GElf_Shdr sh;
	int err;

	if (!path || !name || !off || !size)
		return -EINVAL;
	err = elf_open_path(path, &e, OPEN_NOTES_ONLY | OPEN_ANY_TYPE);
	if (err)
		return err;
	scn = find_section(&e, name);
	if (fstat(e.fd, &st) != 0)
		err = -errno;
	else if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		err = -SYM_E_NOTFOUND;
	else if (sh.sh_offset > (uint64_t)st.st_size ||
		 sh.sh_size > (uint64_t)st.st_size - sh.sh_offset)
		err = -SYM_E_BADELF;
	else {
		*off = sh.sh_offset;
		*size = sh.sh_size;
	}
	symi_elf_close(&e);
	return err;
}

/* Has @e a section @name with bytes? */
static bool has_bytes(const struct symi_elf *e, const char *name)
{
	Elf_Scn *scn = find_section(e, name);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
	       sh.sh_size > 0;
}

int sym_file_quality(const char *path, int *quality)
{
	struct symi_elf e;
	int err;

	if (!path || !quality)
		return -EINVAL;
	*quality = SYM_QUALITY_NONE;
	err = elf_open_path(path, &e, OPEN_NOTES_ONLY | OPEN_ANY_TYPE);
	if (err)
		return err;
	if (symi_elf_has_dwarf(&e))
		*quality = SYM_QUALITY_DWARF;
	else if (has_bytes(&e, ".gopclntab") ||
		 has_bytes(&e, ".data.rel.ro.gopclntab"))
		*quality = SYM_QUALITY_GOPCLNTAB;
	else if (has_bytes(&e, ".symtab") || has_bytes(&e, ".gnu_debugdata"))
		*quality = SYM_QUALITY_SYMTAB;
	symi_elf_close(&e);
	return 0;
}

const char *sym_quality_name(int quality)
{
	static const char *const names[] = { "none", "symtab", "gopclntab",
					     "dwarf" };

	if (quality < 0 || quality > SYM_QUALITY_DWARF)
		return NULL;
	return names[quality];
}

bool symi_elf_has_dwarf(const struct symi_elf *e)
{
	return has_bytes(e, ".debug_info") || has_bytes(e, ".zdebug_info");
}

/*
 * The section's bytes as libelf gives them (for SHT_PROGBITS these are the
 * file's bytes).  NULL when the section is absent, empty or NOBITS.
 */
static Elf_Data *section_bytes(const struct symi_elf *e, const char *name)
{
	Elf_Scn *scn = find_section(e, name);
	Elf_Data *data;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    (sh.sh_flags & SHF_COMPRESSED))
		return NULL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size == 0)
		return NULL;
	return data;
}

/*
 * CRC-32 as gdb and objcopy compute it for .gnu_debuglink: the reflected
 * 0xedb88320 polynomial of zlib's crc32(), initial and final XOR ~0.
 */
static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* The CRC of the whole file behind @e. */
static int file_crc(const struct symi_elf *e, uint32_t *out)
{
	unsigned char buf[65536];
	uint32_t crc = 0;
	off_t off = 0;
	ssize_t n;

	pthread_once(&crc_once, crc_init);
	if (e->fd < 0)
		return -EBADF;
	for (;;) {
		n = pread(e->fd, buf, sizeof(buf), off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		crc = crc32_update(crc, buf, n);
		off += n;
	}
	*out = crc;
	return 0;
}

/* State of one debug file search. */
struct search {
	const struct symi_elf *e;	/* the module; borrowed */
	struct stat st;			/* of the module, to skip itself */
	bool have_st;
	const uint8_t *want_id;		/* borrowed; NULL: check the CRC */
	size_t want_id_len;
	uint32_t crc;			/* .gnu_debuglink CRC */
	bool by_crc;			/* a debuglink candidate */
	bool dwz;			/* looking for a dwz alt file */
};

enum { CAND_NO = 1 };

/*
 * try_candidate() - open @path and accept it as the debug (or alt) file.
 * @return 0 (@out is open), CAND_NO (not this one: go on), -ENOMEM
 */
static int try_candidate(struct search *s, const char *path,
			 struct symi_elf *out)
{
	struct symi_elf c;
	struct stat st;
	uint32_t crc;
	int err;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return CAND_NO;
	if (s->have_st && st.st_dev == s->st.st_dev &&
	    st.st_ino == s->st.st_ino)
		return CAND_NO;
	err = elf_open_path(path, &c,
			    OPEN_NOTES_ONLY | (s->dwz ? OPEN_ANY_TYPE : 0));
	if (err == -ENOMEM)
		return err;
	if (err) {
		symi_debug("elf: skipping debug file candidate '%s'", path);
		return CAND_NO;
	}

	if (!s->by_crc || (s->want_id_len && c.build_id_len)) {
		/* The build ID decides when both sides have one, as in
		 * libdwfl: it is stronger than the CRC, and cheaper. */
		if (c.build_id_len != s->want_id_len ||
		    memcmp(c.build_id, s->want_id, s->want_id_len) != 0) {
			symi_info("elf: '%s' has another build ID, skipping it",
				  path);
			goto no;
		}
	} else {
		err = file_crc(&c, &crc);
		if (err == 0 && crc != s->crc) {
			symi_info("elf: '%s' does not match the debuglink CRC, skipping it",
				  path);
			goto no;
		}
		if (err) {
			symi_debug("elf: cannot read '%s': %s", path,
				   strerror(-err));
			goto no;
		}
	}

	/* A dwz alt file's sections count with the debug file's, under
	 * one per-file limit (symi_dwarf_read() goes on counting). */
	if (s->dwz)
		c.inflated = s->e->inflated;
	err = elf_unzstd(&c);
	/* Over the decompression limits: the right file, refused, not a
	 * reason to look further and end up with symbols only. */
	if (err == -ENOMEM || err == -SYM_E_INFLATE_LIMIT) {
		symi_elf_close(&c);
		return err;
	}
	if (err)
		goto no;
	*out = c;
	return 0;
no:
	symi_elf_close(&c);
	return CAND_NO;
}

/* snprintf() a candidate path and try it; overlong paths are skipped. */
static int try_fmt(struct search *s, struct symi_elf *out, const char *fmt,
		   ...) __attribute__((format(printf, 3, 4)));

static int try_fmt(struct search *s, struct symi_elf *out, const char *fmt,
		   ...)
{
	char path[PATH_ROOM];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return CAND_NO;
	return try_candidate(s, path, out);
}

/* DIR/.build-id/xx/rest.debug */
static int try_build_id(struct search *s, const char *dir,
			struct symi_elf *out)
{
	char hex[2 * sizeof(s->e->build_id) + 1];

	symi_hex(s->want_id, s->want_id_len, hex);
	return try_fmt(s, out, "%s/.build-id/%.2s/%s.debug", dir, hex,
		       hex + 2);
}

/*
 * ROOT/<absdir>/LINK the way libdwfl explores it: the file's absolute
 * directory with its leading components cut off one at a time, ending with
 * ROOT/LINK.  So /usr/lib/debug/usr/bin/x.debug comes first for /usr/bin/x,
 * and a tree copied elsewhere (eu-addr2line's --debuginfo-path) is found.
 */
static int try_link_under(struct search *s, const char *root,
			  const char *absdir, const char *link,
			  struct symi_elf *out)
{
	const char *sub = absdir;
	int err;

	if (!absdir || absdir[0] != '/')
		return try_fmt(s, out, "%s/%s", root, link);
	for (;;) {
		sub = strchr(sub, '/');
		if (!sub)
			return try_fmt(s, out, "%s/%s", root, link);
		sub++;
		if (*sub) {
			err = try_fmt(s, out, "%s/%s/%s", root, sub, link);
			if (err != CAND_NO)
				return err;
		}
	}
}

/* dirname() into a new string; "." when @path has no slash. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (!slash)
		return symi_strdup(".");
	if (slash == path)
		return symi_strdup("/");
	d = symi_malloc(slash - path + 1);
	if (d) {
		memcpy(d, path, slash - path);
		d[slash - path] = '\0';
	}
	return d;
}

/*
 * The directories of @path to search relative to: as given, and the
 * canonical one when that differs (a symlinked file, a relative path).
 * dirs[1] is NULL when there is only one.  Caller frees both.
 */
static int file_dirs(const char *path, char *dirs[2])
{
	char *canon;

	dirs[0] = dir_of(path);
	dirs[1] = NULL;
	if (!dirs[0])
		return -ENOMEM;
	canon = realpath(path, NULL);
	if (canon) {
		dirs[1] = dir_of(canon);
		free(canon);
		if (!dirs[1])
			return -ENOMEM;
		if (strcmp(dirs[0], dirs[1]) == 0) {
			free(dirs[1]);
			dirs[1] = NULL;
		}
	}
	return 0;
}

/*
 * libdw's __libdw_filepath() (dwarf_getalt.c) into @out: @file when
 * absolute, else under @dir when that is absolute, else under @debugdir
 * (with its trailing '/', may be NULL) and @dir.  false: no path, or
 * one longer than PATH_ROOM (which open() would refuse anyway).
 */
static bool dw_filepath(char out[PATH_ROOM], const char *debugdir,
			const char *dir, const char *file)
{
	size_t dl = dir ? strlen(dir) : 0;
	const char *sep = dl && dir[dl - 1] != '/' ? "/" : "";
	int n;

	if (file[0] == '/')
		n = snprintf(out, PATH_ROOM, "%s", file);
	else if (dir && dir[0] == '/')
		n = snprintf(out, PATH_ROOM, "%s%s%s", dir, sep, file);
	else if (debugdir)
		n = snprintf(out, PATH_ROOM, "%s%s%s%s", debugdir,
			     dir ? dir : "", sep, file);
	else
		return false;
	return n >= 0 && n < PATH_ROOM;
}

/* Check one .dwo candidate: its sections count in @e's total. */
static int dwo_check_one(struct symi_elf *e, const char *path)
{
	struct symi_elf c;
	int err;

	err = elf_open_path(path, &c, OPEN_NOTES_ONLY | OPEN_ANY_TYPE);
	if (err)
		return err == -ENOMEM ? err : 0;
	c.inflated = e->inflated;
	err = symi_inflate_check_file(&c);
	if (!err)
		e->inflated = c.inflated;
	symi_elf_close(&c);
	return err;
}

int symi_dwo_check(struct symi_elf *e, const char *dwo_name,
		   const char *comp_dir)
{
	char fdpath[32], path[PATH_ROOM], *debugdir = NULL, *slash;
	struct stat st[2];
	int err = 0, n = 0;

	if (!dwo_name || !*dwo_name)
		return 0;
	/* libdw's debugdir: the directory of the file behind the fd it
	 * was given (__libdw_debugdir()), with its trailing '/'. */
	if (e->path && e->fd >= 0) {
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", e->fd);
		debugdir = realpath(fdpath, NULL);
		slash = debugdir ? strrchr(debugdir, '/') : NULL;
		if (slash)
			slash[1] = '\0';
	}
	for (int i = 0; i < 2 && !err; i++) {
		if (!dw_filepath(path, debugdir, i ? comp_dir : NULL,
				 dwo_name) ||
		    (i && !comp_dir) || stat(path, &st[n]) < 0 ||
		    S_ISDIR(st[n].st_mode))
			continue;
		/* A FIFO or a device that the file names (an uploaded
		 * file can name any path): libdw's open() of it would
		 * block, or read a device. */
		if (!S_ISREG(st[n].st_mode)) {
			symi_warn("elf: '%s' names '%s' as a split DWARF file, which is not a regular file",
				  e->path ? e->path : "<memory>", path);
			err = -SYM_E_NOTREG;
			break;
		}
		if (n && st[0].st_dev == st[1].st_dev &&
		    st[0].st_ino == st[1].st_ino)
			continue;	/* the same file: counted once */
		n++;
		err = dwo_check_one(e, path);
	}
	free(debugdir);
	return err;
}

/* Parse .gnu_debuglink: NUL-terminated name, padding to 4, CRC-32. */
static bool read_debuglink(const struct symi_elf *e, const char **name,
			   uint32_t *crc)
{
	Elf_Data *data = section_bytes(e, ".gnu_debuglink");
	const unsigned char *p, *end, *c;
	size_t off;

	if (!data)
		return false;
	p = data->d_buf;
	end = memchr(p, '\0', data->d_size);
	if (!end || end == p)
		return false;
	off = ((size_t)(end - p) + 1 + 3) & ~(size_t)3;
	if (off > data->d_size || data->d_size - off < 4)
		return false;
	c = p + off;
	if (e->ehdr.e_ident[EI_DATA] == ELFDATA2MSB)
		*crc = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 |
		       (uint32_t)c[2] << 8 | c[3];
	else
		*crc = (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 |
		       (uint32_t)c[1] << 8 | c[0];
	*name = (const char *)p;
	/* A link naming a path would escape the search directories. */
	return strchr(*name, '/') == NULL;
}

static void search_init(struct search *s, const struct symi_elf *e)
{
	memset(s, 0, sizeof(*s));
	s->e = e;
	if (e->fd >= 0 && fstat(e->fd, &s->st) == 0)
		s->have_st = true;
	else if (e->path && stat(e->path, &s->st) == 0)
		s->have_st = true;
}

int symi_find_debug_file(const struct symi_elf *e,
			 const struct sym_module_opts *opts,
			 struct symi_elf *dbg)
{
	const char *const *paths = SYMI_OPT(opts, debuginfo_path);
	const char *debug_dir = SYMI_OPT(opts, debug_dir);
	char *dirs[2] = { NULL, NULL };
	const char *link = NULL;
	struct search s;
	int err = CAND_NO;

	memset(dbg, 0, sizeof(*dbg));
	if (!debug_dir)
		debug_dir = DEFAULT_DEBUG_DIR;
	search_init(&s, e);

	/* 1. By build ID. */
	if (e->build_id_len > 0) {
		s.want_id = e->build_id;
		s.want_id_len = e->build_id_len;
		for (size_t i = 0; paths && paths[i] && err == CAND_NO; i++)
			err = try_build_id(&s, paths[i], dbg);
		if (err == CAND_NO)
			err = try_build_id(&s, debug_dir, dbg);
		if (err != CAND_NO)
			goto out;
	}

	/* 2. By .gnu_debuglink. */
	if (!e->path || !read_debuglink(e, &link, &s.crc))
		goto out;
	s.by_crc = true;
	err = file_dirs(e->path, dirs);
	if (err)
		goto out;
	err = CAND_NO;
	for (int d = 0; d < 2 && dirs[d] && err == CAND_NO; d++) {
		err = try_fmt(&s, dbg, "%s/%s", dirs[d], link);
		if (err == CAND_NO)
			err = try_fmt(&s, dbg, "%s/.debug/%s", dirs[d], link);
	}
	for (int d = 0; d < 2 && dirs[d] && err == CAND_NO; d++) {
		for (size_t i = 0; paths && paths[i] && err == CAND_NO; i++)
			err = try_link_under(&s, paths[i], dirs[d], link, dbg);
		if (err == CAND_NO)
			err = try_link_under(&s, debug_dir, dirs[d], link,
					     dbg);
	}
out:
	free(dirs[0]);
	free(dirs[1]);
	if (err == CAND_NO) {
		symi_debug("elf: no separate debug file for '%s'",
			   elf_name(e));
		return -SYM_E_NOTFOUND;
	}
	return err;
}

int symi_find_alt_file(const struct symi_elf *e,
		       const struct sym_module_opts *opts,
		       struct symi_elf *alt)
{
	const char *const *paths = SYMI_OPT(opts, debuginfo_path);
	const char *debug_dir = SYMI_OPT(opts, debug_dir);
	char *dirs[2] = { NULL, NULL };
	const char *name, *nul, *base;
	Elf_Data *data;
	struct search s;
	int err = CAND_NO;

	memset(alt, 0, sizeof(*alt));
	if (!debug_dir)
		debug_dir = DEFAULT_DEBUG_DIR;
	data = section_bytes(e, ".gnu_debugaltlink");
	if (!data)
		return -SYM_E_NOTFOUND;
	name = data->d_buf;
	nul = memchr(name, '\0', data->d_size);
	if (!nul || nul == name) {
		symi_warn("elf: bad .gnu_debugaltlink in '%s'", elf_name(e));
		return -SYM_E_NOTFOUND;
	}
	search_init(&s, e);
	s.dwz = true;
	s.want_id = (const uint8_t *)nul + 1;
	s.want_id_len = data->d_size - (size_t)(nul + 1 - name);
	if (s.want_id_len == 0 || s.want_id_len > sizeof(e->build_id)) {
		symi_warn("elf: bad build ID in .gnu_debugaltlink of '%s'",
			  elf_name(e));
		return -SYM_E_NOTFOUND;
	}
	base = strrchr(name, '/');
	base = base ? base + 1 : name;

	/* 1. The path it names, relative to the debug file's directory. */
	if (name[0] == '/') {
		err = try_candidate(&s, name, alt);
	} else if (e->path) {
		err = file_dirs(e->path, dirs);
		if (err)
			goto out;
		err = CAND_NO;
		for (int d = 0; d < 2 && dirs[d] && err == CAND_NO; d++)
			err = try_fmt(&s, alt, "%s/%s", dirs[d], name);
	}
	/* 2. By build ID, then DIR/.dwz/ as libdwfl does for moved trees. */
	for (size_t i = 0; paths && paths[i] && err == CAND_NO; i++) {
		err = try_build_id(&s, paths[i], alt);
		if (err == CAND_NO)
			err = try_fmt(&s, alt, "%s/.dwz/%s", paths[i], base);
	}
	if (err == CAND_NO)
		err = try_build_id(&s, debug_dir, alt);
out:
	free(dirs[0]);
	free(dirs[1]);
	if (err == CAND_NO) {
		symi_info("elf: cannot find the dwz file '%s' of '%s'", name,
			  elf_name(e));
		return -SYM_E_NOTFOUND;
	}
	return err;
}
