/*
 * t-elf.c - unit tests of libsym/elf.c and libsym/symtab.c.
 *
 * The inputs are built at run time in a temporary directory with gcc,
 * objcopy, strip, xz and dwz: a plain program with a fixed build ID, its
 * stripped copy with .gnu_debuglink and the debug file in each place the
 * search looks, a .build-id tree, zstd-compressed debug sections (and
 * broken ones), MiniDebugInfo, a dwz alt file, an i386 file, a relocatable
 * object, truncated and non-ELF files.  Tools that are missing turn their
 * tests into TAP skips.
 */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tap.h"
#include "base.h"

#define BUILD_ID "0123456789abcdef0123456789abcdef01234567"
#define OTHER_ID "fedcba9876543210fedcba9876543210fedcba98"
/* BUILD_ID's place in a .build-id tree. */
#define BID_FILE ".build-id/01/23456789abcdef0123456789abcdef01234567.debug"

static char tmp[256];

static const char prog_c[] =
	"#include <stdio.h>\n"
	"static inline int sq(int x) { return x * x; }\n"
	"int global_var = 3;\n"
	"static __attribute__((noinline)) int helper_static(int x)\n"
	"{ return sq(x) * 3; }\n"
	"__attribute__((noinline)) int compute(int a)\n"
	"{ return helper_static(a) + global_var; }\n"
	"int main(int argc, char **argv)\n"
	"{ printf(\"%d\\n\", compute(argc)); return 0; }\n";

/* A file name inside the temporary directory, in one of 8 buffers. */
static const char *P(const char *fmt, ...)
{
	static char bufs[8][512];
	static int next;
	char *b = bufs[next++ % 8];
	char rel[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(b, sizeof(bufs[0]), "%s/%s", tmp, rel);
	return b;
}

/* Run a shell command in the temporary directory; true when it exits 0. */
static bool sh(const char *fmt, ...)
{
	char cmd[2048], full[2400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "cd '%s' && (%s) >/dev/null 2>&1", tmp,
		 cmd);
	return system(full) == 0;
}

static bool write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return false;
	ok = fwrite(buf, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

static bool id_is(const struct symi_elf *e, const char *hex)
{
	char h[2 * sizeof(e->build_id) + 1];

	symi_hex(e->build_id, e->build_id_len, h);
	return strcmp(h, hex) == 0;
}

/* Lines of every CU, through libdw, or -1. */
static long count_lines(struct symi_elf *e)
{
	Dwarf *dw = dwarf_begin_elf(e->elf, DWARF_C_READ, NULL);
	Dwarf_Off off = 0, next;
	size_t hsz;
	long total = 0;

	if (!dw)
		return -1;
	while (dwarf_nextcu(dw, off, &next, &hsz, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;

		if (!dwarf_offdie(dw, off + hsz, &cu) ||
		    dwarf_getsrclines(&cu, &lines, &n) != 0) {
			total = -1;
			break;
		}
		total += n;
		off = next;
	}
	dwarf_end(dw);
	return total;
}

/* The address of symbol @name per `nm`, or 0. */
static uint64_t nm_addr(const char *file, const char *name)
{
	char cmd[1024], line[512], sym[256], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -P '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%255s %c %llx", sym, &type, &addr) == 3 &&
		    strcmp(sym, name) == 0)
			found = addr;
	pclose(p);
	return found;
}

/*
 * Where section @name of a 64-bit file is: its data's offset and its
 * header's offset.  symi_elf_open() would decompress it, so this uses
 * libelf directly.
 */
static bool section_offset(const char *file, const char *name,
			   uint64_t *off, uint64_t *hdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool ok = false;
	GElf_Ehdr eh;
	int fd = open(file, O_RDONLY);
	Elf *elf;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *s;

			if (!gelf_getshdr(scn, &sh))
				continue;
			s = elf_strptr(elf, shstrndx, sh.sh_name);
			if (s && strcmp(s, name) == 0 &&
			    gelf_getehdr(elf, &eh)) {
				*off = sh.sh_offset;
				*hdr = eh.e_shoff +
				       elf_ndxscn(scn) * sizeof(Elf64_Shdr);
				ok = true;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return ok;
}

/* Copy @in to @out with the sh_size of section @name set to @size. */
static bool patch_size(const char *in, const char *out, const char *name,
		       uint64_t size)
{
	uint64_t off, hdr;
	size_t len;
	unsigned char *img = tap_read_file(in, &len);
	bool ok = img && section_offset(in, name, &off, &hdr) &&
		  hdr + sizeof(Elf64_Shdr) <= len;

	if (ok) {
		memcpy(img + hdr + offsetof(Elf64_Shdr, sh_size), &size, 8);
		ok = write_file(out, img, len);
	}
	free(img);
	return ok;
}

static void test_errors(void)
{
	struct symi_elf e = { 0 };
	char hex[129];
	size_t len = 0;
	void *img;

	CHECK_ERR(symi_elf_open(P("nonexistent"), &e), -ENOENT);
	CHECK(e.elf == NULL && e.path == NULL);
	CHECK_ERR(symi_elf_open(P("prog.c"), &e), -SYM_E_NOTELF);
	CHECK_ERR(symi_elf_open(P("empty"), &e), -SYM_E_NOTELF);
	CHECK_ERR(symi_elf_open(tmp, &e), -EISDIR);
	CHECK_ERR(symi_elf_open(P("trunc-10"), &e), -SYM_E_BADELF);
	CHECK_ERR(symi_elf_open(P("trunc-half"), &e), -SYM_E_BADELF);
	CHECK_ERR(symi_elf_open(P("bad-shoff"), &e), -SYM_E_BADELF);
	CHECK_ERR(symi_elf_open(P("bad-scn"), &e), -SYM_E_BADELF);
	CHECK_ERR(symi_elf_open(P("prog.o"), &e), -SYM_E_UNSUPPORTED);
	CHECK(e.elf == NULL && e.path == NULL && e.nbufs == 0);
	/* A FIFO without a writer is refused at once (the open would block
	 * without O_NONBLOCK), a device too. */
	if (mkfifo(P("fifo"), 0600) == 0) {
		CHECK_ERR(symi_elf_open(P("fifo"), &e), -SYM_E_NOTREG);
		CHECK_ERR(sym_file_build_id(P("fifo"), hex, sizeof(hex)),
			  -SYM_E_NOTREG);
	} else {
		printf("ok %d # skip cannot make a FIFO\n", ++tap_n);
	}
	CHECK_ERR(symi_elf_open("/dev/null", &e), -SYM_E_NOTREG);
	CHECK(e.elf == NULL && e.path == NULL && e.fd == 0);

	CHECK_ERR(symi_elf_open_mem("garbage", 7, &e), -SYM_E_NOTELF);
	CHECK_ERR(symi_elf_open_mem("\177EL", 3, &e), -SYM_E_NOTELF);
	img = tap_read_file(P("plain"), &len);
	CHECK(img != NULL);
	if (img) {
		CHECK_ERR(symi_elf_open_mem(img, len / 2, &e),
			  -SYM_E_BADELF);
		CHECK_ERR(symi_elf_open_mem(img, 20, &e), -SYM_E_BADELF);
		CHECK_ERR(symi_elf_open_mem(img, len, &e), 0);
		CHECK(id_is(&e, BUILD_ID));
		CHECK(e.path == NULL && e.fd == -1);
		CHECK(symi_elf_has_dwarf(&e));
		symi_elf_close(&e);
		free(img);
	}

	CHECK_ERR(sym_file_build_id(P("plain"), hex, sizeof(hex)), 0);
	CHECK(strcmp(hex, BUILD_ID) == 0);
	CHECK_ERR(sym_file_build_id(P("plain"), hex, 40), -ERANGE);
	CHECK_ERR(sym_file_build_id(P("noid"), hex, sizeof(hex)),
		  -SYM_E_NOTFOUND);
	CHECK_ERR(sym_file_build_id(P("prog.c"), hex, sizeof(hex)),
		  -SYM_E_NOTELF);
	CHECK_ERR(sym_file_build_id(P("trunc-half"), hex, sizeof(hex)),
		  -SYM_E_BADELF);

	/* Closing is NULL-safe, idempotent and leaves a zeroed struct. */
	symi_elf_close(NULL);
	symi_elf_close(&e);
	symi_elf_close(&e);
	CHECK(e.elf == NULL && e.path == NULL && e.bufs == NULL);
}

/* Append one note to @buf at *off: header, name (NUL included in
 * @namesz), descriptor, each padded to @align as the gABI's 8-byte notes
 * have it (the header stays 12 bytes). */
static void put_note(uint8_t *buf, size_t *off, size_t align,
		     const char *name, uint32_t namesz, uint32_t type,
		     const void *desc, uint32_t descsz)
{
	uint32_t hdr[3] = { namesz, descsz, type };

	memcpy(buf + *off, hdr, 12);
	memcpy(buf + *off + 12, name, namesz);
	*off = (*off + 12 + namesz + align - 1) & ~(align - 1);
	memcpy(buf + *off, desc, descsz);
	*off = (*off + descsz + align - 1) & ~(align - 1);
}

/* sym_notes_build_id(): the one parser of build-ID notes, on blocks of
 * notes made here and on a real section. */
static void test_notes(void)
{
	static const uint8_t id20[20] = {
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23,
		0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67,
	};
	uint8_t buf[512], big[65], abi[16] = { 0 }, prop[12] = { 1, 2, 3 };
	char hex[2 * 64 + 1];
	size_t off = 0, len, cut;
	void *sec;

	memset(big, 0xee, sizeof(big));
	memset(buf, 0, sizeof(buf));
	/* 4-byte notes: the ABI tag, then the build ID. */
	put_note(buf, &off, 4, "GNU", 4, 1, abi, sizeof(abi));
	put_note(buf, &off, 4, "GNU", 4, 3, id20, sizeof(id20));
	CHECK_ERR(sym_notes_build_id(buf, off, 4, hex, sizeof(hex)), 0);
	CHECK(strcmp(hex, BUILD_ID) == 0);
	CHECK_ERR(sym_notes_build_id(buf, off, 4, hex, 41), 0);
	memcpy(hex, "untouched", 10);
	CHECK_ERR(sym_notes_build_id(buf, off, 4, hex, 40), -ERANGE);
	CHECK(strcmp(hex, "untouched") == 0);
	/* Cut inside the ID: not found; the padding after the last note
	 * may be missing. */
	CHECK_ERR(sym_notes_build_id(buf, off - 1, 4, hex, sizeof(hex)),
		  -SYM_E_NOTFOUND);
	CHECK(strcmp(hex, "untouched") == 0);
	off = 0;
	put_note(buf, &off, 4, "GNU", 4, 3, id20, 19);
	CHECK_ERR(sym_notes_build_id(buf, 16 + 19, 4, hex, sizeof(hex)), 0);
	CHECK(strlen(hex) == 38 && strncmp(hex, BUILD_ID, 38) == 0);

	/* 8-byte notes (a PT_NOTE of p_align 8): a property note whose
	 * descriptor is not a multiple of 8, then the build ID.  Read as
	 * 4-byte notes, the second header is misplaced. */
	memset(buf, 0, sizeof(buf));
	off = 0;
	put_note(buf, &off, 8, "GNU", 4, 5, prop, sizeof(prop));
	CHECK(off == 32);
	put_note(buf, &off, 8, "GNU", 4, 3, id20, sizeof(id20));
	CHECK_ERR(sym_notes_build_id(buf, off, 8, hex, sizeof(hex)), 0);
	CHECK(strcmp(hex, BUILD_ID) == 0);
	CHECK_ERR(sym_notes_build_id(buf, off, 4, hex, sizeof(hex)),
		  -SYM_E_NOTFOUND);

	/* Skipped: another owner, another type, an ID over 64 bytes, an
	 * empty one; the next note is still read. */
	memset(buf, 0, sizeof(buf));
	off = 0;
	put_note(buf, &off, 4, "Go\0\0", 4, 3, id20, sizeof(id20));
	put_note(buf, &off, 4, "GNU", 4, 4, id20, sizeof(id20));
	put_note(buf, &off, 4, "GNU", 4, 3, big, sizeof(big));
	put_note(buf, &off, 4, "GNU", 4, 3, big, 0);
	len = off;
	CHECK_ERR(sym_notes_build_id(buf, len, 4, hex, sizeof(hex)),
		  -SYM_E_NOTFOUND);
	put_note(buf, &off, 4, "GNU", 4, 3, big, 64);
	CHECK_ERR(sym_notes_build_id(buf, off, 4, hex, sizeof(hex)), 0);
	CHECK(strlen(hex) == 128 && strspn(hex, "e") == 128);

	/* Sizes that run past the end stop the walk, whatever follows. */
	for (cut = 0; cut < 12; cut++)
		if (sym_notes_build_id(buf, cut, 4, hex, sizeof(hex)) !=
		    -SYM_E_NOTFOUND)
			break;
	CHECK(cut == 12);
	memset(buf, 0xff, 12);	/* namesz, descsz: 4 GiB - 1 */
	CHECK_ERR(sym_notes_build_id(buf, len + 84, 4, hex, sizeof(hex)),
		  -SYM_E_NOTFOUND);
	CHECK_ERR(sym_notes_build_id(buf, len + 84, 8, hex, sizeof(hex)),
		  -SYM_E_NOTFOUND);

	CHECK_ERR(sym_notes_build_id(NULL, 0, 4, hex, sizeof(hex)),
		  -SYM_E_NOTFOUND);
	CHECK_ERR(sym_notes_build_id(NULL, 1, 4, hex, sizeof(hex)), -EINVAL);
	CHECK_ERR(sym_notes_build_id(buf, off, 4, NULL, 0), -EINVAL);

	/* A real section: the same answer as sym_file_build_id(). */
	CHECK(sh("objcopy -O binary --only-section=.note.gnu.build-id "
		 "plain notes.bin"));
	sec = tap_read_file(P("notes.bin"), &len);
	CHECK(sec != NULL && len == 36);
	if (sec) {
		CHECK_ERR(sym_notes_build_id(sec, len, 4, hex, sizeof(hex)),
			  0);
		CHECK(strcmp(hex, BUILD_ID) == 0);
		free(sec);
	}
}

static void test_plain(long *plain_lines)
{
	struct symi_elf e = { 0 };

	CHECK_ERR(symi_elf_open(P("plain"), &e), 0);
	CHECK(e.build_id_len == 20 && id_is(&e, BUILD_ID));
	CHECK(e.ehdr.e_ident[EI_CLASS] == ELFCLASS64);
	CHECK(symi_elf_has_dwarf(&e));
	*plain_lines = count_lines(&e);
	CHECK(*plain_lines > 0);
	symi_elf_close(&e);

	CHECK_ERR(symi_elf_open(P("stripped"), &e), 0);
	CHECK(id_is(&e, BUILD_ID));
	CHECK(!symi_elf_has_dwarf(&e));
	symi_elf_close(&e);
}

static void test_zstd(long plain_lines)
{
	struct symi_elf e = { 0 };
	Elf_Scn *scn = NULL;
	bool compressed = false;

	if (!sh("objcopy --compress-debug-sections=zstd plain zst")) {
		printf("ok %d # skip objcopy cannot write zstd\n", ++tap_n);
		return;
	}
	sh("objcopy --compress-debug-sections=zlib plain zlib");
	CHECK_ERR(symi_elf_open(P("zst"), &e), 0);
	while ((scn = elf_nextscn(e.elf, scn))) {
		GElf_Shdr s;

		if (gelf_getshdr(scn, &s) && (s.sh_flags & SHF_COMPRESSED))
			compressed = true;
	}
	CHECK(!compressed);
	CHECK(e.nbufs > 0);
	CHECK(symi_elf_has_dwarf(&e));
	CHECK(count_lines(&e) == plain_lines);
	symi_elf_close(&e);

	/* zlib is libdw's own business, but must work the same. */
	CHECK_ERR(symi_elf_open(P("zlib"), &e), 0);
	CHECK(count_lines(&e) == plain_lines);
	symi_elf_close(&e);

	/* In memory too. */
	{
		size_t len;
		void *img = tap_read_file(P("zst"), &len);

		CHECK_ERR(symi_elf_open_mem(img, len, &e), 0);
		CHECK(count_lines(&e) == plain_lines);
		symi_elf_close(&e);
		free(img);
	}

	/* A wrong ch_size (one more than the data, or 5 GiB) is caught. */
	{
		uint64_t off, hdr, sz;
		size_t len;
		unsigned char *img = tap_read_file(P("zst"), &len);
		bool found = section_offset(P("zst"), ".debug_info", &off,
					    &hdr);

		CHECK(img && found && off + 24 <= len);
		if (img && found && off + 24 <= len) {
			memcpy(&sz, img + off + 8, 8);	/* Elf64_Chdr */
			sz++;
			memcpy(img + off + 8, &sz, 8);
			write_file(P("zst-bad-size"), img, len);
			sz = (uint64_t)5 << 30;
			memcpy(img + off + 8, &sz, 8);
			write_file(P("zst-huge"), img, len);
			sz = 16;
			memcpy(img + off + 8, &sz, 8);
			write_file(P("zst-small"), img, len);
		}
		free(img);
		CHECK_ERR(symi_elf_open(P("zst-bad-size"), &e),
			  -SYM_E_DECOMPRESS);
		/* Over the per-section limit: refused before decompressing,
		 * with the limit's own code. */
		CHECK_ERR(symi_elf_open(P("zst-huge"), &e),
			  -SYM_E_INFLATE_LIMIT);
		CHECK_ERR(symi_elf_open(P("zst-small"), &e),
			  -SYM_E_DECOMPRESS);
	}
}

/*
 * The decompression limits: their defaults, and each of the three
 * refusing a zstd and a zlib file before anything is decompressed
 * (e.inflated and nbufs stay 0), then the defaults again.
 */
static void test_limits(void)
{
	struct sym_inflate_limits lim, tight;
	struct symi_elf e = { 0 };
	int err;

	sym_get_inflate_limits(&lim);
	if (getenv("SYM_MAX_INFLATE_SECTION") ||
	    getenv("SYM_MAX_INFLATE_FILE") || getenv("SYM_MAX_INFLATE_RATIO"))
		printf("ok %d # skip SYM_MAX_INFLATE_* set\n", ++tap_n);
	else
		CHECK(lim.section == (uint64_t)1 << 30 &&
		      lim.file == (uint64_t)2 << 30 && lim.ratio == 256);
	if (access(P("zst"), R_OK) != 0)
		return;	/* test_zstd() said why */

	/* "plain" declares a few KB per section: 100 bytes per section. */
	tight = (struct sym_inflate_limits){ .section = 100 };
	CHECK_ERR(sym_set_inflate_limits(&tight), 0);
	CHECK_ERR(symi_elf_open(P("zst"), &e), -SYM_E_INFLATE_LIMIT);
	CHECK(e.elf == NULL && e.nbufs == 0);
	/* 1 KiB for the whole file: .debug_info alone fits. */
	tight = (struct sym_inflate_limits){ .file = 1024 };
	CHECK_ERR(sym_set_inflate_limits(&tight), 0);
	CHECK_ERR(symi_elf_open(P("zst"), &e), -SYM_E_INFLATE_LIMIT);
	CHECK(e.elf == NULL && e.nbufs == 0);
	/* zlib is checked when the DWARF is prepared (sections.c). */
	CHECK_ERR(symi_elf_open(P("zlib"), &e), 0);
	err = symi_elf_prepare_dwarf(&e);
	CHECK_ERR(err, -SYM_E_INFLATE_LIMIT);
	CHECK(e.nbufs == 0);
	symi_elf_close(&e);
	/* A ratio limit of 1 with no free first MiB cannot be set (the
	 * first MiB is always free): a section of a few KB passes. */
	tight = (struct sym_inflate_limits){ .ratio = 1 };
	CHECK_ERR(sym_set_inflate_limits(&tight), 0);
	CHECK_ERR(symi_elf_open(P("zst"), &e), 0);
	CHECK(e.inflated > 0 && e.nbufs > 0);
	symi_elf_close(&e);
	/* Back to the defaults. */
	CHECK_ERR(sym_set_inflate_limits(NULL), 0);
	sym_get_inflate_limits(&tight);
	CHECK(tight.section == lim.section && tight.file == lim.file &&
	      tight.ratio == lim.ratio);
	CHECK_ERR(symi_elf_open(P("zst"), &e), 0);
	symi_elf_close(&e);
}

/* Open "bin/stripped" and search for its debug file. */
static int find(const struct sym_module_opts *o, char *where, size_t n)
{
	struct symi_elf e = { 0 }, d = { 0 };
	int err = symi_elf_open(P("bin/stripped"), &e);

	if (err)
		return err;
	err = symi_find_debug_file(&e, o, &d);
	if (!err) {
		snprintf(where, n, "%s", d.path + strlen(tmp));
		if (!symi_elf_has_dwarf(&d))
			err = -EINVAL;
	}
	symi_elf_close(&d);
	symi_elf_close(&e);
	return err;
}

static void test_search(void)
{
	const char *paths[2] = { NULL, NULL };
	char where[512] = "";
	char abs_bin[512];
	SYM_OPTS(sym_module_opts, o, .debug_dir = P("nodebug"));

	snprintf(abs_bin, sizeof(abs_bin), "%s/bin", tmp);

	/* Next to the file, by debuglink. */
	sh("mkdir -p bin && cp stripped bin/ && cp plain.debug bin/");
	CHECK_ERR(find(&o, where, sizeof(where)), 0);
	CHECK(strcmp(where, "/bin/plain.debug") == 0);

	/* In .debug/ beside it. */
	sh("mkdir -p bin/.debug && mv bin/plain.debug bin/.debug/");
	CHECK_ERR(find(&o, where, sizeof(where)), 0);
	CHECK(strcmp(where, "/bin/.debug/plain.debug") == 0);

	/* Under the debug dir, as DEBUGDIR/<abs dir>/name. */
	sh("rm -r bin/.debug && mkdir -p 'dbg%s' && cp plain.debug 'dbg%s/'",
	   abs_bin, abs_bin);
	o.debug_dir = P("dbg");
	CHECK_ERR(find(&o, where, sizeof(where)), 0);
	CHECK(strstr(where, "/dbg/") == where &&
	      strstr(where, "/bin/plain.debug"));

	/* Under a debuginfo_path dir, with leading components cut off. */
	sh("rm -r dbg && mkdir -p alt/bin && cp plain.debug alt/bin/");
	o.debug_dir = P("nodebug");
	CHECK_ERR(find(&o, where, sizeof(where)), -SYM_E_NOTFOUND);
	paths[0] = P("alt");
	o.debuginfo_path = paths;
	CHECK_ERR(find(&o, where, sizeof(where)), 0);
	CHECK(strcmp(where, "/alt/bin/plain.debug") == 0);
	sh("rm -r alt");

	/* By build ID, under the debug dir and under debuginfo_path. */
	sh("mkdir -p bid/.build-id/01 && cp plain.debug bid/" BID_FILE);
	o.debuginfo_path = NULL;
	o.debug_dir = P("bid");
	CHECK_ERR(find(&o, where, sizeof(where)), 0);
	CHECK(strcmp(where, "/bid/" BID_FILE) == 0);
	o.debug_dir = P("nodebug");
	paths[0] = P("bid");
	o.debuginfo_path = paths;
	CHECK_ERR(find(&o, where, sizeof(where)), 0);

	/* A build-ID candidate with another build ID is refused. */
	sh("cp other.debug bid/" BID_FILE);
	CHECK_ERR(find(&o, where, sizeof(where)), -SYM_E_NOTFOUND);
	/* And so is a debuglink candidate with another build ID. */
	sh("cp other.debug bin/plain.debug");
	CHECK_ERR(find(&o, where, sizeof(where)), -SYM_E_NOTFOUND);
	sh("rm -r bid bin/plain.debug");

	/* The file itself is never its own debug file, even when its
	 * debuglink names it and its build ID matches. */
	{
		struct symi_elf e = { 0 }, d = { 0 };

		sh("mkdir -p self && cp plain.debug self/x.debug && "
		   "objcopy --add-gnu-debuglink=self/x.debug stripped "
		   "self/x.debug.tmp && mv self/x.debug.tmp self/x.debug");
		o.debuginfo_path = NULL;
		CHECK_ERR(symi_elf_open(P("self/x.debug"), &e), 0);
		CHECK_ERR(symi_find_debug_file(&e, &o, &d), -SYM_E_NOTFOUND);
		symi_elf_close(&e);
	}
}

/* Without build IDs the CRC decides. */
static void test_crc(void)
{
	struct symi_elf e = { 0 }, d = { 0 };
	SYM_OPTS(sym_module_opts, o, .debug_dir = P("nodebug"));

	sh("mkdir -p crc && cp noid.debug crc/ && cp noid.stripped crc/");
	CHECK_ERR(symi_elf_open(P("crc/noid.stripped"), &e), 0);
	CHECK(e.build_id_len == 0);
	CHECK_ERR(symi_find_debug_file(&e, &o, &d), 0);
	symi_elf_close(&d);
	sh("printf x >> crc/noid.debug");
	CHECK_ERR(symi_find_debug_file(&e, &o, &d), -SYM_E_NOTFOUND);
	CHECK(d.elf == NULL);
	symi_elf_close(&e);
}

static void test_alt(void)
{
	struct symi_elf d = { 0 }, a = { 0 }, alt = { 0 };
	SYM_OPTS(sym_module_opts, o, .debug_dir = P("nodebug"));

	if (!sh("mkdir -p dwz && cp plain dwz/a && cp plain2 dwz/b && "
		"cd dwz && dwz -m common.dwz -M common.dwz a b")) {
		printf("ok %d # skip dwz is not available\n", ++tap_n);
		return;
	}
	CHECK_ERR(symi_elf_open(P("dwz/common.dwz"), &alt), -SYM_E_UNSUPPORTED);
	CHECK_ERR(symi_elf_open(P("dwz/a"), &a), 0);
	CHECK_ERR(symi_find_alt_file(&a, &o, &d), 0);
	CHECK(d.path && strcmp(d.path, P("dwz/common.dwz")) == 0);
	CHECK(symi_elf_has_dwarf(&d));
	symi_elf_close(&d);

	/* Moved away: found by build ID. */
	{
		char hex[129];

		CHECK_ERR(sym_file_build_id(P("dwz/common.dwz"), hex,
					    sizeof(hex)), 0);
		CHECK(sh("mkdir -p dwzdbg/.build-id/%.2s && "
			 "mv dwz/common.dwz dwzdbg/.build-id/%.2s/%s.debug",
			 hex, hex, hex + 2));
	}
	CHECK_ERR(symi_find_alt_file(&a, &o, &d), -SYM_E_NOTFOUND);
	o.debug_dir = P("dwzdbg");
	CHECK_ERR(symi_find_alt_file(&a, &o, &d), 0);
	symi_elf_close(&d);

	/* No .gnu_debugaltlink at all. */
	symi_elf_close(&a);
	CHECK_ERR(symi_elf_open(P("plain"), &a), 0);
	CHECK_ERR(symi_find_alt_file(&a, &o, &d), -SYM_E_NOTFOUND);
	symi_elf_close(&a);
}

/* Debian's dwz files: binutils-x86-64-linux-gnu-dbg, when installed. */
static void test_debian_dwz(void)
{
	struct symi_elf e = { 0 }, d = { 0 }, a = { 0 };

	if (access("/usr/lib/debug/.dwz/x86_64-linux-gnu/"
		   "binutils-x86-64-linux-gnu.debug", R_OK) != 0 ||
	    symi_elf_open("/usr/bin/x86_64-linux-gnu-objdump", &e) != 0) {
		printf("ok %d # skip binutils-x86-64-linux-gnu-dbg is not "
		       "installed\n", ++tap_n);
		return;
	}
	CHECK_ERR(symi_find_debug_file(&e, NULL, &d), 0);
	CHECK(symi_elf_has_dwarf(&d));
	CHECK_ERR(symi_find_alt_file(&d, NULL, &a), 0);
	CHECK(a.path && strstr(a.path, "/.dwz/"));
	symi_elf_close(&a);
	symi_elf_close(&d);
	symi_elf_close(&e);
}

/* Build a table of @file's symbols and text; look @name up. */
static int table_symbol(const char *file, const char *name, uint64_t *addr,
			bool *in_text)
{
	struct symi_builder *b = NULL;
	struct sym_table *t = NULL;
	struct symi_elf e = { 0 };
	void *buf = NULL;
	size_t len;
	int err;

	err = symi_elf_open(file, &e);
	if (err)
		return err;
	err = symi_builder_new(&b);
	if (!err)
		err = symi_text_read(b, &e);
	if (!err)
		err = symi_symtab_read(b, &e, true);
	if (!err) {
		*in_text = symi_builder_in_text(b, nm_addr(P("plain"),
							   "compute"));
		err = symi_builder_finish(b, &buf, &len);
	}
	if (!err)
		err = sym_table_open(buf, len, &t);
	if (!err)
		err = sym_table_find_symbol(t, name, addr, NULL);
	sym_table_close(t);
	free(buf);
	symi_builder_free(b);
	symi_elf_close(&e);
	return err;
}

static void test_symbols(void)
{
	uint64_t want = nm_addr(P("plain"), "helper_static"), got = 0;
	uint64_t want_c = nm_addr(P("plain"), "compute");
	bool text = false;

	CHECK(want != 0 && want_c != 0);
	/* .symtab */
	CHECK_ERR(table_symbol(P("plain"), "helper_static", &got, &text), 0);
	CHECK(got == want && text);
	/* .symtab of a debug file; its text sections are NOBITS. */
	text = false;
	CHECK_ERR(table_symbol(P("plain.debug"), "compute", &got, &text), 0);
	CHECK(got == want_c && text);
	/* .dynsym only (-rdynamic, strip --strip-all). */
	CHECK_ERR(table_symbol(P("dynonly"), "compute", &got, &text), 0);
	CHECK(got == nm_addr(P("dyn"), "compute"));
	CHECK_ERR(table_symbol(P("dynonly"), "helper_static", &got, &text),
		  -SYM_E_NOTFOUND);
	/* MiniDebugInfo. */
	if (!sh("test -s mini.md")) {
		printf("ok %d # skip cannot build MiniDebugInfo (xz?)\n",
		       ++tap_n);
		return;
	}
	CHECK_ERR(table_symbol(P("mini.md"), "helper_static", &got, &text),
		  0);
	CHECK(got == nm_addr(P("dyn"), "helper_static"));
}

static void test_i386(void)
{
	struct symi_elf e = { 0 };
	uint64_t got;
	bool text;

	if (!sh("printf 'int add(int a, int b) { return a + b; }\\n"
		"void _start(void) { add(1, 2); for (;;); }\\n' > s32.c && "
		"gcc -m32 -g -nostdlib -static -Wl,--build-id=0xaabbccdd "
		"-o s32 s32.c")) {
		printf("ok %d # skip gcc -m32 does not work\n", ++tap_n);
		return;
	}
	CHECK_ERR(symi_elf_open(P("s32"), &e), 0);
	CHECK(e.ehdr.e_ident[EI_CLASS] == ELFCLASS32 && id_is(&e, "aabbccdd"));
	CHECK(symi_elf_has_dwarf(&e) && count_lines(&e) > 0);
	symi_elf_close(&e);
	CHECK_ERR(table_symbol(P("s32"), "add", &got, &text), 0);
	CHECK(got == nm_addr(P("s32"), "add"));
}

static bool setup(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmp, sizeof(tmp), "%s/t-elf.XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(tmp))
		return false;
	if (!write_file(P("prog.c"), prog_c, sizeof(prog_c) - 1) ||
	    !write_file(P("empty"), "", 0))
		return false;
	return sh("gcc -g -O2 -Wl,--build-id=0x" BUILD_ID " -o plain prog.c") &&
	       sh("gcc -g -O2 -DOTHER -Wl,--build-id=0x" OTHER_ID
		  " -o plain2 prog.c") &&
	       sh("objcopy --only-keep-debug plain2 other.debug") &&
	       sh("gcc -g -O2 -c -o prog.o prog.c") &&
	       sh("objcopy --only-keep-debug plain plain.debug && "
		  "objcopy --strip-all --add-gnu-debuglink=plain.debug "
		  "plain stripped") &&
	       sh("gcc -g -O2 -Wl,--build-id=none -o noid prog.c && "
		  "objcopy --only-keep-debug noid noid.debug && "
		  "objcopy --strip-all --add-gnu-debuglink=noid.debug "
		  "noid noid.stripped") &&
	       sh("head -c 10 plain > trunc-10 && "
		  "head -c $(($(stat -c %%s plain) / 2)) plain > trunc-half") &&
	       /* e_shoff (offset 40 in Elf64_Ehdr) far past the end. */
	       sh("cp plain bad-shoff && printf '\\377\\377\\377\\177' | "
		  "dd of=bad-shoff bs=1 seek=40 conv=notrunc") &&
	       patch_size(P("plain"), P("bad-scn"), ".debug_str",
			  (uint64_t)1 << 40) &&
	       sh("gcc -g -O2 -rdynamic -o dyn prog.c && "
		  "strip --strip-all -o dynonly dyn") &&
	       (sh("nm -D dyn --format=posix --defined-only | "
		   "awk '{print $1}' | sort > dynsyms && "
		   "nm dyn --format=posix --defined-only | "
		   "awk '{ if ($2 == \"T\" || $2 == \"t\") print $1 }' | "
		   "sort > funcsyms && comm -13 dynsyms funcsyms > keep && "
		   "objcopy --only-keep-debug dyn dyn.dbg && "
		   "objcopy -S --remove-section .gdb_index "
		   "--remove-section .comment --keep-symbols=keep dyn.dbg "
		   "mini && xz -f mini && "
		   "objcopy --add-section .gnu_debugdata=mini.xz dynonly "
		   "mini.md") || true);
}

int main(void)
{
	long plain_lines = 0;

	sym_set_log(NULL, NULL, SYM_LOG_WARN);
	if (system("gcc --version >/dev/null 2>&1 && "
		   "objcopy --version >/dev/null 2>&1") != 0)
		tap_skip_all("gcc or objcopy is not installed");
	if (!setup()) {
		printf("Bail out! cannot build the test inputs in %s\n", tmp);
		return 1;
	}
	test_errors();
	test_notes();
	test_plain(&plain_lines);
	test_zstd(plain_lines);
	test_limits();
	test_search();
	test_crc();
	test_alt();
	test_debian_dwz();
	test_symbols();
	test_i386();

	if (!getenv("T_ELF_KEEP"))
		sh("cd / && rm -rf '%s'", tmp);
	return tap_done();
}
