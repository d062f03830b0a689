/*
 * upload.c - `sym upload [--server URL] [--token-file F] [--force]
 * [--executable] [--compress=zlib|zstd|none] [--sources=DIR|TARBALL]
 * [--kallsyms=SNAPSHOT]... [FILE...]`: put what
 * symbolization needs of executables and their debug files into symd's
 * store, as CI does after a build (docs/http-api.md, "Uploads";
 * docs/ci.md).
 *
 * For each FILE: its GNU build ID (a file without one is an error), its
 * kind, then HEAD /v1/<kind>/<id>: a file the server already has is
 * skipped, unless --force.  Otherwise PUT /v1/<kind>/<id>, streamed from
 * the file with its size (never read whole into memory), with
 * "Authorization: Bearer <token>"; the server checks the build ID again
 * and answers 201.  One line per upload on stdout,
 *
 *	<id>  <file>  <kind>  uploaded <n> bytes
 *	<id>  <file>  <kind>  already there, skipped
 *
 * or one error line on stderr, with the server's own message.  On a
 * terminal, stderr also shows a progress bar while a file goes out.  The
 * exit status is 0 only when every file is on the server afterwards.
 *
 * The kind: "executable" when the file has bytes of its own to load, else
 * "debuginfo".  objcopy --only-keep-debug and eu-strip -f keep the
 * section headers of the original but make every allocated section except
 * the notes SHT_NOBITS, and their PT_LOAD segments have no file bytes
 * for code.  So: an allocated, non-note section with file bytes makes an
 * executable; without section headers, an executable PT_LOAD with file
 * bytes does.
 *
 * An executable with debug information of its own (.symtab, .debug_*,
 * Go's .gopclntab) goes up as its debug-only copy, made here with libelf
 * (debug_copy()) into an unlinked temporary file, as "debuginfo"; the
 * binary itself only with --executable.  The copy is what objcopy
 * --only-keep-debug keeps (ELF and program headers, notes, every
 * non-allocated section: .symtab, .strtab, .debug_*, .comment), plus the
 * allocated sections that symbolization and unwinding need and
 * --only-keep-debug empties: .eh_frame, .eh_frame_hdr, .dynsym, .dynstr,
 * .gnu_debugdata, .gopclntab (with a Go binary's data), the PLT and its
 * relocations.  The rest (code, data) is SHT_NOBITS with its addresses.
 * Its .debug_* sections are compressed with zlib (SHF_COMPRESSED,
 * ELFCOMPRESS_ZLIB) by default: perf 6.1 and eu-stack use libdw 0.188,
 * which reads no zstd, and fetch from symd over debuginfod; --compress=
 * zstd or none on request.  Sections compressed already stay as they
 * are.  A line on stderr gives the bytes saved.
 *
 * --kallsyms: a kallsyms snapshot goes up in parts, the kernel's under
 * its build ID and each module's under its own, to /v1/kallsyms/<id>
 * (upload_kallsyms()), with the same HEAD, lines and statuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "client.h"
#include "grow.h"
#include "kallsyms.h"
#include "upload_sources.h"
#include "base.h"

/* glibc 2.36's elf.h predates it (the gABI's value). */
#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* How the copy's DWARF is compressed (--compress). */
enum up_compress { UP_ZLIB, UP_ZSTD, UP_NONE };

/* Width of the progress bar, in characters. */
#define BAR 30

struct up {
	struct client *client;
	FILE *out;		/* the lines of the uploads: stdout */
	bool force;
	bool executable;	/* --executable */
	enum up_compress how;	/* --compress */
	const char *sources;	/* --sources DIR|TARBALL, or NULL */
	bool bar;		/* stderr is a terminal */
	/* Why the rest of the files are not tried (server down, token
	 * refused); NULL while all is well. */
	const char *stop;

	/* The progress bar of the file going out. */
	const char *name;
	double last;
	uint64_t shown;		/* bytes the bar shows */
	bool drawn;
};

enum { OPT_SERVER = 0x100, OPT_TOKEN_FILE, OPT_FORCE, OPT_TIMEOUT,
       OPT_EXECUTABLE, OPT_COMPRESS, OPT_SOURCES, OPT_KALLSYMS };

/* Most --kallsyms options. */
#define KALLSYMS_MAX 64

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym upload [--server=URL] [--token-file=FILE] [--force] "
		"FILE...\n"
		"       sym upload [...] --kallsyms=SNAPSHOT [FILE...]\n\n"
		"Upload ELF files to symd, each under its GNU build ID: "
		"executables and\nshared objects to /v1/executable/<id>, "
		"separate debug files to\n/v1/debuginfo/<id>.  Files the "
		"server already has are skipped.  Exit\nstatus 0 when every "
		"file is on the server, 1 otherwise.\n\n"
		"      --server=URL        symd, e.g. http://127.0.0.1:8630 "
		"(default:\n"
		"                          $SYM_SERVER)\n"
		"      --token-file=FILE   the upload token: the first line "
		"of FILE\n"
		"                          (default: $SYM_TOKEN_FILE's, else "
		"$SYM_TOKEN)\n"
		"      --force             upload even what the server already "
		"has\n"
		"      --sources=DIR|TARBALL  also upload the source files the "
		"line\n"
		"                          tables name, found in DIR (or the "
		"tarball)\n"
		"                          by their longest tail; one line says "
		"how many\n"
		"                          and which were not found\n"
		"      --kallsyms=SNAPSHOT a kallsyms snapshot (sym record's "
		"PROFILE.kallsyms):\n"
		"                          the kernel's names under its build "
		"ID, each\n"
		"                          module's under its own, to "
		"/v1/kallsyms/<id>\n"
		"                          (may be given again)\n"
		"      --timeout=SECONDS   give up on a server that sends "
		"nothing for\n"
		"                          SECONDS (default %d; connecting: "
		"%d)\n\nSee sym(1).\n", CLIENT_STALL_TIMEOUT,
		CLIENT_CONNECT_TIMEOUT);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "12.3 MiB" */
static const char *human(char *buf, size_t len, uint64_t n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

/* The bar, redrawn at most ten times a second, and at the end. */
static void progress(void *ctx, uint64_t done, uint64_t total)
{
	static const char fill[BAR + 1] = "==============================";
	struct up *u = ctx;
	const char *base = strrchr(u->name, '/');
	double t = now_s();
	char a[32], b[32];
	int pct, n;

	/* curl calls on while the server checks the file: no redraw. */
	if ((u->drawn && done == u->shown) ||
	    (done < total && t - u->last < 0.1))
		return;
	u->last = t;
	u->shown = done;
	pct = total ? (int)(done * 100 / total) : 100;
	n = pct * BAR / 100;
	fprintf(stderr, "\r%-24.24s [%.*s%*s] %3d%%  %s / %s\033[K",
		base ? base + 1 : u->name, n, fill, BAR - n, "", pct,
		human(a, sizeof(a), done), human(b, sizeof(b), total));
	u->drawn = true;
}

static void bar_clear(struct up *u)
{
	if (u->drawn)
		fputs("\r\033[K", stderr);
	u->drawn = false;
}

/* ------------------------------------------------- the debug-only copy */

/* A DWARF section, compressed in the copy. */
static bool debug_name(const char *name)
{
	return strncmp(name, ".debug_", 7) == 0 ||
	       strncmp(name, ".zdebug_", 8) == 0;
}

/* Allocated sections the copy keeps with their bytes: what unwinding
 * (CFI), the dynamic symbols, MiniDebugInfo and Go's function table need
 * when the binary itself is not there, and the PLT stubs with their
 * relocations, from which libsym names the stubs NAME@plt (a few KiB). */
static bool kept_alloc(const char *name)
{
	static const char *const names[] = {
		".eh_frame", ".eh_frame_hdr", ".dynsym", ".dynstr",
		".gnu_debugdata", ".gopclntab", ".data.rel.ro.gopclntab",
		".plt", ".plt.sec", ".plt.got", ".rela.plt", ".rela.dyn",
		".interp",	/* bytes: readelf reads PT_INTERP */
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

struct copy {
	const char *path;
	Elf *in, *out;
	enum up_compress how;
	int cls, enc;		/* ELFCLASS*, ELFDATA* */
	/* A Go binary (it has .gopclntab): its data is kept (go_data()). */
	bool go;
	/* Progress, in bytes of the input's sections; fn may be NULL. */
	client_progress_fn fn;
	void *ctx;
	/* The zstd buffers handed to libelf, freed after elf_update(). */
	void **bufs;
	size_t nbufs, capbufs;
};

/* @v as @n bytes at @p in the file's byte order. */
static void put_uint(uint8_t *p, uint64_t v, int n, int enc)
{
	for (int i = 0; i < n; i++)
		p[enc == ELFDATA2LSB ? i : n - 1 - i] = (uint8_t)(v >> (8 * i));
}

/*
 * zstd_data() - @len bytes at @buf as the data of a SHF_COMPRESSED
 * section with ELFCOMPRESS_ZSTD, into @od and @sh.  libelf 0.188 knows
 * only zlib, so the Chdr is written here.
 * @return 1 (compressed), 0 (it would not be smaller: left alone), -1
 */
static int zstd_data(struct copy *c, const void *buf, size_t len,
		     Elf_Data *od, GElf_Shdr *sh)
{
	size_t hdr = c->cls == ELFCLASS64 ? 24 : 12;
	size_t cap = ZSTD_compressBound(len), n;
	uint8_t *p;

	if (tool_grow(&c->bufs, &c->capbufs, c->nbufs + 1, sizeof(*c->bufs),
		      8))
		return -1;
	p = malloc(hdr + cap);
	if (!p)
		return -1;
	c->bufs[c->nbufs++] = p;
	n = ZSTD_compress(p + hdr, cap, buf, len, 12);
	if (ZSTD_isError(n))
		return -1;
	if (hdr + n >= len)
		return 0;
	memset(p, 0, hdr);
	put_uint(p, ELFCOMPRESS_ZSTD, 4, c->enc);
	if (c->cls == ELFCLASS64) {
		put_uint(p + 8, len, 8, c->enc);
		put_uint(p + 16, sh->sh_addralign, 8, c->enc);
	} else {
		put_uint(p + 4, len, 4, c->enc);
		put_uint(p + 8, sh->sh_addralign, 4, c->enc);
	}
	od->d_buf = p;
	od->d_size = hdr + n;
	sh->sh_flags |= SHF_COMPRESSED;
	sh->sh_size = hdr + n;
	sh->sh_addralign = c->cls == ELFCLASS64 ? 8 : 4;
	return 1;
}

/*
 * copy_section() - the output section for input section @is: its bytes
 * (borrowed from the input's mapping) when kept, else SHT_NOBITS with
 * the same header, as objcopy --only-keep-debug leaves them.
 * @return 0, or -1 (libelf's error)
 */
static int copy_section(struct copy *c, Elf_Scn *is, size_t shstrndx)
{
	Elf_Scn *os = elf_newscn(c->out);
	const char *name;
	Elf_Data *d, *od;
	GElf_Shdr sh;
	bool keep, pack;
	int z = 0;

	if (!os || !gelf_getshdr(is, &sh))
		return -1;
	name = elf_strptr(c->in, shstrndx, sh.sh_name);
	if (!name)
		name = "";
	keep = sh.sh_type != SHT_NOBITS && (!(sh.sh_flags & SHF_ALLOC) ||
					    sh.sh_type == SHT_NOTE ||
					    kept_alloc(name) ||
					    (c->go &&
					     !(sh.sh_flags & SHF_EXECINSTR)));
	pack = keep && c->how != UP_NONE && strncmp(name, ".debug_", 7) == 0 &&
	       !(sh.sh_flags & (SHF_COMPRESSED | SHF_ALLOC)) && sh.sh_size;
	if (!keep)
		sh.sh_type = SHT_NOBITS;
	if (keep && sh.sh_size) {
		d = elf_rawdata(is, NULL);
		od = elf_newdata(os);
		if (!d || !od || d->d_size != sh.sh_size)
			return -1;
		*od = (Elf_Data){ .d_buf = d->d_buf, .d_size = d->d_size,
				  .d_type = ELF_T_BYTE, .d_align = 1,
				  .d_version = EV_CURRENT };
		if (pack && c->how == UP_ZSTD)
			z = zstd_data(c, d->d_buf, d->d_size, od, &sh);
		if (z < 0)
			return -1;
	}
	if (!gelf_update_shdr(os, &sh))
		return -1;
	/* libelf's own zlib (Z_BEST_COMPRESSION), as eu-strip and
	 * objcopy --compress-debug-sections write it; 0 when the section
	 * would not get smaller. */
	if (pack && c->how == UP_ZLIB &&
	    elf_compress(os, ELFCOMPRESS_ZLIB, 0) < 0)
		return -1;
	return 0;
}

static uint64_t align_up(uint64_t off, uint64_t a)
{
	if (a < 2 || (a & (a - 1)))
		return off;
	return (off + a - 1) & ~(a - 1);
}

/*
 * layout() - file offsets for the copy (ELF_F_LAYOUT): the headers, then
 * the sections in order, the section headers last.  An allocated section
 * right after another that keeps its bytes stays at the same distance
 * from it as in memory, so that a segment of several such sections (the
 * notes, .eh_frame_hdr and .eh_frame) stays one contiguous range.
 */
static int layout(struct copy *c, GElf_Ehdr *eh, size_t phnum)
{
	uint64_t off = gelf_fsize(c->out, ELF_T_EHDR, 1, EV_CURRENT);
	GElf_Shdr prev = { .sh_type = SHT_NULL };
	Elf_Scn *scn = NULL;

	eh->e_phoff = phnum ? off : 0;
	off += phnum * gelf_fsize(c->out, ELF_T_PHDR, 1, EV_CURRENT);
	while ((scn = elf_nextscn(c->out, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -1;
		if (sh.sh_type == SHT_NOBITS) {
			sh.sh_offset = off;
		} else {
			sh.sh_offset = align_up(off, sh.sh_addralign);
			if ((sh.sh_flags & SHF_ALLOC) &&
			    (prev.sh_flags & SHF_ALLOC) &&
			    prev.sh_type != SHT_NOBITS &&
			    sh.sh_addr >= prev.sh_addr + prev.sh_size &&
			    sh.sh_addr - prev.sh_addr < ((uint64_t)1 << 20))
				sh.sh_offset = prev.sh_offset +
					       (sh.sh_addr - prev.sh_addr);
			off = sh.sh_offset + sh.sh_size;
		}
		if (!gelf_update_shdr(scn, &sh))
			return -1;
		prev = sh;
	}
	eh->e_shoff = align_up(off, 8);
	return 0;
}

/*
 * kept_whole() - does the copy hold every file byte of the segment @ph,
 * at the same distances as in memory?  Then @off is its new offset.
 */
static bool kept_whole(struct copy *c, const GElf_Phdr *ph, uint64_t *off)
{
	Elf_Scn *scn = NULL;
	bool any = false;
	GElf_Shdr sh, ish;

	*off = 0;
	while ((scn = elf_nextscn(c->out, scn))) {
		Elf_Scn *is = elf_getscn(c->in, elf_ndxscn(scn));
		uint64_t delta;

		if (!gelf_getshdr(scn, &sh) || !is || !gelf_getshdr(is, &ish))
			return false;
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_addr < ph->p_vaddr ||
		    sh.sh_addr - ph->p_vaddr >= ph->p_filesz ||
		    ish.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_type == SHT_NOBITS)
			return false;	/* bytes the copy dropped */
		delta = sh.sh_addr - ph->p_vaddr;
		if (!any && sh.sh_offset < delta)
			return false;
		if (!any)
			*off = sh.sh_offset - delta;
		else if (sh.sh_offset - delta != *off)
			return false;
		any = true;
	}
	return any;
}

/*
 * copy_phdrs() - the program headers, so that their addresses still give
 * the load bias: PT_PHDR where the copy has them (and the first PT_LOAD
 * over them, as objcopy leaves it), a segment whose every file byte the
 * copy keeps (the notes, PT_GNU_EH_FRAME, Go's data segments) at its
 * new offset; every other segment keeps its addresses and sizes in
 * memory but has no bytes in the file (p_filesz 0).
 */
static int copy_phdrs(struct copy *c, const GElf_Ehdr *eh, size_t phnum)
{
	uint64_t hdrs = phnum * gelf_fsize(c->out, ELF_T_PHDR, 1, EV_CURRENT);

	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t off;

		if (!gelf_getphdr(c->in, (int)i, &ph))
			return -1;
		if (ph.p_type == PT_PHDR)
			ph.p_offset = eh->e_phoff;
		else if (ph.p_type == PT_LOAD && ph.p_offset == 0 &&
			 ph.p_filesz >= eh->e_phoff + hdrs)
			/* The segment of the ELF and program headers: they
			 * are where they were. */
			ph.p_filesz = eh->e_phoff + hdrs;
		else if (ph.p_filesz && kept_whole(c, &ph, &off))
			ph.p_offset = off;
		else
			ph.p_filesz = 0;
		if (!gelf_update_phdr(c->out, (int)i, &ph))
			return -1;
	}
	return 0;
}

/*
 * go_data() - is this a Go binary?  Its function table points into the
 * data around it: the function data and inline trees are at go:func.* in
 * .rodata, and only the runtime's moduledata (in .noptrdata) says where
 * that is; libsym reads both through the segments' file bytes.  So the
 * copy of a Go binary keeps every allocated section but the code, and
 * its data segments keep their bytes.  (Go's data is a fraction of its
 * code and function table.)
 */
static bool go_data(struct copy *c, size_t shstrndx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;

	while ((scn = elf_nextscn(c->in, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(c->in, shstrndx, sh.sh_name);
		if (name && (strcmp(name, ".gopclntab") == 0 ||
			     strcmp(name, ".data.rel.ro.gopclntab") == 0))
			return true;
	}
	return false;
}

/*
 * debug_copy() - write the debug-only copy of the ELF file open on
 * @in_fd to @out_fd (see the top of the file).
 * @return 0, or -1 after a message
 */
static int debug_copy(const char *path, int in_fd, int out_fd,
		      enum up_compress how, client_progress_fn fn, void *ctx)
{
	struct copy c = { .path = path, .how = how, .fn = fn, .ctx = ctx };
	size_t shnum, phnum, shstrndx;
	uint64_t done = 0, total = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Ehdr eh;
	int err = -1;

	c.in = elf_begin(in_fd, ELF_C_READ_MMAP, NULL);
	c.out = elf_begin(out_fd, ELF_C_WRITE, NULL);
	if (!c.in || !c.out || !gelf_getehdr(c.in, &eh) ||
	    elf_getshdrnum(c.in, &shnum) || elf_getphdrnum(c.in, &phnum) ||
	    elf_getshdrstrndx(c.in, &shstrndx))
		goto out;
	c.cls = eh.e_ident[EI_CLASS];
	c.enc = eh.e_ident[EI_DATA];
	if (!gelf_newehdr(c.out, c.cls) || !gelf_update_ehdr(c.out, &eh) ||
	    (phnum && !gelf_newphdr(c.out, phnum)))
		goto out;
	c.go = go_data(&c, shstrndx);
	while ((scn = elf_nextscn(c.in, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS)
			total += sh.sh_size;
	while ((scn = elf_nextscn(c.in, scn))) {
		if (copy_section(&c, scn, shstrndx))
			goto out;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS)
			done += sh.sh_size;
		if (c.fn)
			c.fn(c.ctx, done, total);
	}
	if (layout(&c, &eh, phnum) || copy_phdrs(&c, &eh, phnum))
		goto out;
	if (shstrndx >= SHN_LORESERVE) {
		GElf_Shdr sh0;
		Elf_Scn *s0 = elf_getscn(c.out, 0);

		if (!s0 || !gelf_getshdr(s0, &sh0))
			goto out;
		sh0.sh_link = (uint32_t)shstrndx;
		if (!gelf_update_shdr(s0, &sh0))
			goto out;
		eh.e_shstrndx = SHN_XINDEX;
	}
	if (!gelf_update_ehdr(c.out, &eh))
		goto out;
	elf_flagelf(c.out, ELF_C_SET, ELF_F_LAYOUT);
	if (elf_update(c.out, ELF_C_WRITE) < 0)
		goto out;
	err = 0;
out:
	if (err)
		tool_err("'%s': cannot make its debug-only copy: %s", path,
			 elf_errmsg(-1) ? elf_errmsg(-1) : "out of memory");
	elf_end(c.out);
	elf_end(c.in);
	for (size_t i = 0; i < c.nbufs; i++)
		free(c.bufs[i]);
	free(c.bufs);
	return err;
}

/*
 * file_kind() - "executable" or "debuginfo" (see the top of the file),
 * and whether it has debug information of its own (a .symtab, .debug_*
 * or Go's function table with bytes): @debug.
 * @return 0, -SYM_E_NOTELF, -SYM_E_BADELF, -SYM_E_UNSUPPORTED (not an
 *         executable, a shared object or a debug file of one)
 */
/* Is the relocatable ELF file @e (@n sections) a Linux kernel module:
 * a .modinfo section (libsym opens it then, libsym/elf.c)? */
static bool is_kernel_module(Elf *e, size_t n)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!n || elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return false;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".modinfo"))
			return true;
	}
	return false;
}

static int file_kind(int fd, const char **kind, bool *debug)
{
	bool bytes = false;
	size_t n, i, shstrndx = 0;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	Elf *e;
	int err = 0;

	*debug = false;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -SYM_E_BADELF;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -SYM_E_NOTELF;
		goto out;
	}
	if (!gelf_getehdr(e, &eh) || elf_getshdrnum(e, &n) != 0) {
		err = -SYM_E_BADELF;
		goto out;
	}
	if (eh.e_type == ET_REL && is_kernel_module(e, n)) {
		/* A .ko (docs/design.md, "Kernel modules"): the debug file
		 * is the module itself, sent as it is. */
		*kind = "debuginfo";
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		err = -SYM_E_UNSUPPORTED;
		goto out;
	}
	if (n > 0) {
		if (elf_getshdrstrndx(e, &shstrndx) != 0) {
			err = -SYM_E_BADELF;
			goto out;
		}
		while ((scn = elf_nextscn(e, scn))) {
			const char *name;
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh)) {
				err = -SYM_E_BADELF;
				goto out;
			}
			bytes |= (sh.sh_flags & SHF_ALLOC) && sh.sh_size &&
				 sh.sh_type != SHT_NOBITS &&
				 sh.sh_type != SHT_NOTE;
			name = elf_strptr(e, shstrndx, sh.sh_name);
			if (sh.sh_type != SHT_NOBITS && sh.sh_size && name)
				*debug |= sh.sh_type == SHT_SYMTAB ||
					  debug_name(name) ||
					  strcmp(name, ".gopclntab") == 0 ||
					  strcmp(name,
						 ".data.rel.ro.gopclntab") == 0;
		}
	} else {
		if (elf_getphdrnum(e, &n) != 0) {
			err = -SYM_E_BADELF;
			goto out;
		}
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph)) {
				err = -SYM_E_BADELF;
				goto out;
			}
			bytes |= ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
				 ph.p_filesz;
		}
	}
	*kind = bytes ? "executable" : "debuginfo";
out:
	if (e)
		elf_end(e);
	return err;
}

/* Why a file cannot be uploaded, from libsym's or file_kind()'s error. */
static void file_error(const char *path, int err)
{
	if (err == -SYM_E_NOTELF)
		tool_err("'%s': not an ELF file; not uploaded", path);
	else if (err == -SYM_E_UNSUPPORTED)
		tool_err("'%s': not an executable, a shared object or a debug "
			 "file of one (a relocatable or core file); not "
			 "uploaded", path);
	else
		tool_err_code(path, err);
}

/* The answer to an upload that was refused: does it stop the rest? */
static void refused(struct up *u, const char *path, const char *kind,
		    const char *id, const struct client_result *r)
{
	tool_err("'%s': the server refused the %s of build ID %s: %s", path,
		 kind, id, r->msg);
	if (r->status == 401 || r->status == 403)
		u->stop = "the server refused the token";
}

/*
 * make_copy() - the debug-only copy of @path (open on @fd) in an
 * unlinked temporary file, and one line on stderr with the bytes saved.
 * @param[out] size  the copy's size
 * @return the copy, positioned at 0 (caller fcloses), or NULL after a
 *         message
 */
static FILE *make_copy(struct up *u, const char *path, int fd,
		       uint64_t orig, uint64_t *size)
{
	FILE *f = tmpfile();
	struct stat st;
	char a[32], b[32], c[32], label[4096];
	int err;

	if (!f) {
		tool_err("'%s': cannot make a temporary file for its "
			 "debug-only copy: %s", path, strerror(errno));
		return NULL;
	}
	/* The bar says what is going on: "NAME (copy)" while the copy is
	 * made (compressing the DWARF of a big binary takes seconds). */
	snprintf(label, sizeof(label), "%s (copy)", path);
	u->name = label;
	u->last = 0;
	err = debug_copy(path, fd, fileno(f), u->how,
			 u->bar ? progress : NULL, u);
	bar_clear(u);
	if (err) {
		fclose(f);
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || fseeko(f, 0, SEEK_SET) != 0) {
		tool_err_code(path, -errno);
		fclose(f);
		return NULL;
	}
	*size = (uint64_t)st.st_size;
	fprintf(stderr, "sym upload: '%s': a debug-only copy of %" PRIu64
		" bytes (%s) instead of %" PRIu64 " (%s): %" PRIu64
		" bytes saved (%s, %d%%)\n", path, *size,
		human(a, sizeof(a), *size), orig, human(b, sizeof(b), orig),
		orig > *size ? orig - *size : 0,
		human(c, sizeof(c), orig > *size ? orig - *size : 0),
		orig > *size && orig ? (int)((orig - *size) * 100 / orig) : 0);
	return f;
}

/*
 * send_one() - put @path on the server as @kind: the file itself, or
 * (@copy) its debug-only copy.
 * @return true when the server has it afterwards
 */
/* An X-Sym-Quality value as enum sym_quality; -1 for none or unknown. */
static int quality_of(const char *name)
{
	for (int q = SYM_QUALITY_NONE; q <= SYM_QUALITY_DWARF; q++)
		if (strcmp(name, sym_quality_name(q)) == 0)
			return q;
	return -1;
}

static bool send_one(struct up *u, const char *path, const char *id,
		     const char *kind, int fd, bool copy, int quality)
{
	struct client_result r;
	char url[192];
	struct stat st;
	uint64_t size;
	FILE *f = NULL;
	bool ok = false;
	int err;

	if (u->stop) {
		tool_err("'%s': not tried: %s", path, u->stop);
		return false;
	}
	snprintf(url, sizeof(url), "/v1/%s/%s%s", kind, id,
		 u->force ? "?force=1" : "");
	if (!u->force) {
		/* Without the query (there is none without --force). */
		err = client_head(u->client, url, &r);
		if (err) {
			tool_err("'%s': %s", path, r.msg);
			if (r.unreachable)
				u->stop = "the server cannot be reached";
			return false;
		}
		/* The same kind there: skipped, unless this file is better
		 * than any the server has.  404, or something the PUT will
		 * explain: sent (a 409 then gives the server's reason). */
		if (r.status == 200 && quality <= quality_of(r.quality)) {
			fprintf(u->out, "%s  %s  %s  already there, skipped\n", id, path,
			       kind);
			return true;
		}
	}
	if (fstat(fd, &st) != 0) {
		tool_err_code(path, -errno);
		return false;
	}
	size = (uint64_t)st.st_size;
	if (copy) {
		f = make_copy(u, path, fd, size, &size);
	} else {
		int dfd = dup(fd);

		f = dfd >= 0 ? fdopen(dfd, "rb") : NULL;
		if (!f && dfd >= 0)
			close(dfd);
		if (!f || fseeko(f, 0, SEEK_SET) != 0)
			tool_err_code(path, -errno);
	}
	if (!f)
		return false;
	u->name = path;
	u->last = 0;
	err = client_put_file(u->client, url, f, path, size,
			      u->bar ? progress : NULL, u, &r);
	bar_clear(u);
	if (err) {
		tool_err("'%s': %s", path, r.msg);
		if (r.unreachable)
			u->stop = "the server cannot be reached";
	} else if (r.status == 409) {
		/* Not an error: the server has as good already. */
		fprintf(u->out, "%s  %s  %s  not uploaded: %s\n", id, path, kind,
			r.msg);
		ok = true;
	} else if (r.status != 200 && r.status != 201) {
		refused(u, path, kind, id, &r);
	} else {
		fprintf(u->out, "%s  %s  %s  uploaded %" PRIu64 " bytes\n", id, path,
		       kind, r.bytes ? r.bytes : size);
		ok = true;
	}
	fclose(f);
	fflush(u->out);
	return ok;
}

static bool upload_kallsyms(struct up *u, const char *path);

/* Does the file at @fd start as a profile `sym record` writes: the raw
 * format ("sym-raw "), or gzip's magic (raw gzipped, or pprof)?  An ELF
 * file never does. */
static bool is_profile(int fd)
{
	unsigned char b[8];

	if (pread(fd, b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return false;
	return !memcmp(b, "sym-raw ", 8) || (b[0] == 0x1f && b[1] == 0x8b);
}

/* A recorded profile: its kallsyms snapshot (PROFILE.kallsyms, written
 * beside it when it has kernel frames) goes up as --kallsyms sends it. */
static bool upload_profile(struct up *u, const char *path)
{
	char kpath[4096];

	if ((size_t)snprintf(kpath, sizeof(kpath), "%s.kallsyms", path) >=
	    sizeof(kpath)) {
		tool_err_code(path, -ENAMETOOLONG);
		return false;
	}
	if (access(kpath, F_OK) != 0) {
		fprintf(stderr, "sym upload: '%s': a profile without a kallsyms "
			"snapshot beside it (no kernel frames): nothing to "
			"upload\n", path);
		return true;
	}
	return upload_kallsyms(u, kpath);
}

/*
 * upload_one() - an executable with debug information (DWARF, .symtab
 * or Go's .gopclntab) goes up as its debug-only copy, and as itself only
 * with --executable; any other file, and any file without a GNU build ID
 * (named by a derived module ID, sym_file_module_id()), as it is.
 * @return true when everything of @path is on the server afterwards
 */
static bool upload_one(struct up *u, const char *path)
{
	char id[2 * 64 + 1];
	const char *kind = NULL;
	struct stat st;
	bool ok = false, debug = false;
	int fd, err, quality, idkind = SYM_MODID_NONE;

	if (u->stop) {
		tool_err("'%s': not tried: %s", path, u->stop);
		return false;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		tool_err_code(path, -errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		tool_err("'%s': not a regular file; not uploaded", path);
		goto out;
	}
	if (is_profile(fd)) {
		ok = upload_profile(u, path);
		goto out;
	}
	err = sym_file_module_id(path, id, sizeof(id), &idkind);
	if (!err)
		err = file_kind(fd, &kind, &debug);
	if (!err)
		err = sym_file_quality(path, &quality);
	if (err) {
		file_error(path, err);
		goto out;
	}
	/* The copy keeps what makes the quality: it has the file's.  A
	 * file without a GNU build ID goes up as it is: its module ID is
	 * derived from its bytes (or from a note a copy need not keep), so
	 * only the file itself has it. */
	if (strcmp(kind, "executable") != 0 || !debug ||
	    idkind != SYM_MODID_GNU) {
		ok = send_one(u, path, id, kind, fd, false, quality);
		goto out;
	}
	ok = send_one(u, path, id, "debuginfo", fd, true, quality);
	if (u->executable)
		ok &= send_one(u, path, id, "executable", fd, false, quality);
out:
	/* The server checks sources against the debug file: after it (ok
	 * only when it went up or was there). */
	if (ok && u->sources)
		ok = upload_sources(u->client, path, id, u->sources, &u->stop);
	if (fd >= 0)
		close(fd);
	fflush(stdout);
	return ok;
}

/*
 * The parts of the kallsyms snapshot at @path (`--kallsyms`): the
 * kernel's under its build ID, each module's with a build ID and a .text
 * address under its own (docs/http-api.md, "Kallsyms snapshots"), as
 * /v1/kallsyms/<id>, each a snapshot of its own (ksnap_write_part()).
 * @return true when every part is on the server afterwards
 */
static bool send_part(struct up *u, const char *path,
		      const struct symi_ksnap *ks, uint32_t mod)
{
	const char *id = mod ? ks->mods[mod - 1].build_id : ks->build_id;
	char label[4200];
	FILE *f = tmpfile();
	bool ok = false;

	if (!f) {
		tool_err("'%s': cannot make a temporary file: %s", path,
			 strerror(errno));
		return false;
	}
	snprintf(label, sizeof(label), "%s [%s]", path,
		 mod ? ks->mods[mod - 1].name : "kernel");
	if (ksnap_write_part(f, ks, mod) != 0)
		tool_err("'%s': cannot write its part to a temporary file",
			 label);
	else
		ok = send_one(u, label, id, "kallsyms", fileno(f), false, -1);
	fclose(f);
	return ok;
}

static bool upload_kallsyms(struct up *u, const char *path)
{
	struct symi_ksnap *ks = NULL;
	uint64_t text;
	bool ok = true;

	if (ksnap_load(path, &ks) != 0)
		return false;
	if (!ks->build_id[0] || !symi_ksnap_text(ks, &text)) {
		tool_err("'%s': %s: its kernel frames cannot be named on the "
			 "server; not uploaded", path, ks->build_id[0] ?
			 "no _text symbol" : "no kernel build ID");
		ok = false;
	} else {
		ok = send_part(u, path, ks, 0);
	}
	for (size_t i = 0; i < ks->nmods; i++) {
		const struct symi_ksnap_module *m = &ks->mods[i];

		if (!m->build_id[0] || !m->text) {
			fprintf(stderr, "sym upload: '%s': module %s has no %s: "
				"its part is not uploaded\n", path, m->name,
				m->build_id[0] ? ".text address (a version 1 "
				"snapshot)" : "build ID");
			continue;
		}
		ok &= send_part(u, path, ks, (uint32_t)i + 1);
	}
	symi_ksnap_free(ks);
	return ok;
}

int tool_upload_kallsyms(const char *server, const char *token_file,
			 const char *path, FILE *out)
{
	struct up u = { .out = out };
	const char *from = NULL;
	char token[4096];
	int err;

	err = client_read_token(token_file, token, sizeof(token), &from);
	if (err == -ENOENT)
		tool_err("no upload token: give --token-file, or set "
			 "SYM_TOKEN_FILE or SYM_TOKEN");
	if (err)
		return err;
	err = client_new(server, 0, &u.client);
	if (!err && client_set_token(u.client, token) != 0) {
		tool_err("the token in %s has blanks or control characters",
			 from);
		err = -EINVAL;
	}
	if (!err && !upload_kallsyms(&u, path))
		err = -EIO;
	explicit_bzero(token, sizeof(token));
	client_free(u.client);
	return err;
}

int cmd_upload(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, OPT_SERVER },
		{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "executable", no_argument, NULL, OPT_EXECUTABLE },
		{ "compress", required_argument, NULL, OPT_COMPRESS },
		{ "sources", required_argument, NULL, OPT_SOURCES },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct up u = { .out = stdout };
	const char *server = NULL, *token_file = NULL, *token_from = NULL;
	const char *kallsyms[KALLSYMS_MAX];
	size_t nks = 0;
	unsigned long timeout = 0;
	bool server_flag;
	char token[4096], *end;
	int status = TOOL_EXIT_OK;
	int c, i, err;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SERVER:
			server = optarg;
			break;
		case OPT_TOKEN_FILE:
			token_file = optarg;
			break;
		case OPT_FORCE:
			u.force = true;
			break;
		case OPT_EXECUTABLE:
			u.executable = true;
			break;
		case OPT_SOURCES:
			u.sources = optarg;
			break;
		case OPT_KALLSYMS:
			if (nks == KALLSYMS_MAX) {
				tool_err("--kallsyms: at most %d", KALLSYMS_MAX);
				return TOOL_EXIT_USAGE;
			}
			kallsyms[nks++] = optarg;
			break;
		case OPT_COMPRESS:
			if (strcmp(optarg, "zlib") == 0) {
				u.how = UP_ZLIB;
			} else if (strcmp(optarg, "zstd") == 0) {
				u.how = UP_ZSTD;
			} else if (strcmp(optarg, "none") == 0) {
				u.how = UP_NONE;
			} else {
				tool_err("--compress: '%s' is not zlib, zstd or "
					 "none", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case OPT_TIMEOUT:
			errno = 0;
			timeout = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || errno ||
			    timeout == 0 || timeout > 86400) {
				tool_err("--timeout: '%s' is not a number of "
					 "seconds from 1 to 86400", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	server_flag = server != NULL;
	server = client_env_server(server, NULL);
	if (!server || (optind >= argc && !nks)) {
		if (!server)
			tool_err("no server: give --server or set SYM_SERVER");
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	err = client_read_token(token_file, token, sizeof(token), &token_from);
	if (err == -ENOENT) {
		tool_err("no upload token: give --token-file, or set "
			 "SYM_TOKEN_FILE or SYM_TOKEN");
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (err) {
		status = TOOL_EXIT_FAIL;
		goto out;
	}
	err = client_new(server, (unsigned)timeout, &u.client);
	if (err == -EINVAL) {
		tool_err("%s: '%s' is not an http:// or https:// URL",
			 server_flag ? "--server" : "SYM_SERVER", server);
		status = TOOL_EXIT_USAGE;
		goto out;
	}
	if (err) {
		tool_err("out of memory");
		status = TOOL_EXIT_FAIL;
		goto out;
	}
	if (client_set_token(u.client, token) != 0) {
		tool_err("the token in %s%s%s has blanks or control characters",
			 *token_from == '$' ? "" : "'", token_from,
			 *token_from == '$' ? "" : "'");
		status = TOOL_EXIT_FAIL;
		goto out;
	}
	u.bar = isatty(STDERR_FILENO);
	for (i = optind; i < argc; i++)
		if (!upload_one(&u, argv[i]))
			status = TOOL_EXIT_FAIL;
	for (size_t k = 0; k < nks; k++)
		if (!upload_kallsyms(&u, kallsyms[k]))
			status = TOOL_EXIT_FAIL;
	if (fflush(stdout) != 0)
		status = TOOL_EXIT_FAIL;
out:
	explicit_bzero(token, sizeof(token));
	client_free(u.client);
	return status;
}
