/*
 * t-gopclntab.c - the reader of Go's function table (libsym/gopclntab.c)
 * on the tables tests/fuzz/make-gopclntab-seeds.py writes from the
 * runtime's format (not with this reader): one per magic, and a 32-bit
 * big-endian one.  Each has main.outer at 0x401000 (0x40 bytes; lines
 * 10, 20, 30, 11 in /src/a.go; main.mid inlined over [0x8, 0x10) from
 * line 10, main.inner inlined in it over [0x10, 0x30) from line 20) and
 * main.leaf at 0x401040 (line 5 of /src/b.go).  The same answers are
 * wanted from every format; then the cut and wrong-magic seeds give
 * -SYM_E_BADGOPCLNTAB, and seeds without the module's data give the
 * functions and lines without inline chains.
 */
#include <elf.h>
#include <string.h>

#include "tap.h"
#include "internal.h"

#include "base.h"

#define TAB_ADDR 0x4c0000u
#define DATA_ADDR 0x600000u
#define TEXT_ADDR 0x401000u

struct want {
	uint64_t addr;
	size_t n;
	const char *fn[3];
	const char *file[3];
	uint32_t line[3];
};

static const struct want wants[] = {
	{ 0x401000, 1, { "main.outer" }, { "/src/a.go" }, { 10 } },
	{ 0x401008, 2, { "main.mid", "main.outer" },
	  { "/src/a.go", "/src/a.go" }, { 20, 10 } },
	{ 0x401010, 3, { "main.inner", "main.mid", "main.outer" },
	  { "/src/a.go", "/src/a.go", "/src/a.go" }, { 30, 20, 10 } },
	{ 0x40102f, 3, { "main.inner", "main.mid", "main.outer" },
	  { "/src/a.go", "/src/a.go", "/src/a.go" }, { 30, 20, 10 } },
	{ 0x401030, 1, { "main.outer" }, { "/src/a.go" }, { 11 } },
	{ 0x401050, 1, { "main.leaf" }, { "/src/b.go" }, { 5 } },
	{ 0x401060, 0, { NULL }, { NULL }, { 0 } },
};

/* Read seed @name into a table; 0 or the reader's error. */
static int read_seed(const char *name, struct sym_table **t, void **tbuf,
		     struct symi_gopcln_stats *st)
{
	const char *root = getenv("SYM_ROOT");
	char path[4096];
	struct symi_builder *b = NULL;
	struct symi_goseg segs[2];
	struct symi_gomem mem = { .segs = segs, .n = 2 };
	struct symi_gopcln_in in = { 0 };
	uint8_t *in_buf;
	size_t len = 0, tlen, tl;
	int err;

	*t = NULL;
	*tbuf = NULL;
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/fuzz-gopclntab/%s",
		 root ? root : ".", name);
	in_buf = tap_read_file(path, &len);
	if (!in_buf || len < 4)
		return -ENOENT;
	tlen = in_buf[0] | in_buf[1] << 8 | in_buf[2] << 16 |
	       (size_t)in_buf[3] << 24;
	if (tlen > len - 4)
		tlen = len - 4;
	segs[0] = (struct symi_goseg){ .addr = TAB_ADDR, .p = in_buf + 4,
				       .len = tlen };
	segs[1] = (struct symi_goseg){ .addr = DATA_ADDR,
				       .p = in_buf + 4 + tlen,
				       .len = len - 4 - tlen, .writable = true };
	in = (struct symi_gopcln_in){ .tab = in_buf + 4, .len = tlen,
				      .addr = TAB_ADDR, .text = TEXT_ADDR,
				      .mem = &mem };
	err = symi_builder_new(&b);
	if (!err)
		err = symi_builder_add_text(b, TEXT_ADDR, TEXT_ADDR + 0x1000);
	if (!err)
		err = symi_gopcln_read(b, &in, st);
	if (!err) {
		symi_builder_set_gopclntab(b);
		err = symi_builder_finish(b, tbuf, &tl);
	}
	if (!err)
		err = sym_table_open(*tbuf, tl, t);
	symi_builder_free(b);
	free(in_buf);
	return err;
}

/* Every wanted chain; @inl: with inline frames. */
static bool answers(const struct sym_table *t, bool inl)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	bool ok = true;

	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];
		size_t n = 0, k0 = inl ? 0 : w->n ? w->n - 1 : 0;

		if (sym_table_lookup(t, w->addr, fr, SYM_MAX_FRAMES, &n) != 0 ||
		    n != (inl ? w->n : w->n ? 1 : 0)) {
			printf("#   0x%llx: %zu frames\n",
			       (unsigned long long)w->addr, n);
			ok = false;
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			const char *fn = w->fn[k0 + k], *file = w->file[k0 + k];
			uint32_t line = w->line[k0 + k];

			/* Without the inline tree the innermost line stays. */
			if (!inl)
				line = w->line[0], file = w->file[0];
			if (!fr[k].name || strcmp(fr[k].name, fn) ||
			    !fr[k].file || strcmp(fr[k].file, file) ||
			    fr[k].line != line) {
				printf("#   0x%llx frame %zu: %s %s:%u\n",
				       (unsigned long long)w->addr, k,
				       fr[k].name ? fr[k].name : "(null)",
				       fr[k].file ? fr[k].file : "(null)",
				       fr[k].line);
				ok = false;
			}
		}
	}
	return ok;
}

/*
 * sym_gofuncs_*() on seed @name's table, put in a minimal ELF64 file as
 * its .gopclntab section: the function covering each PC, its pcsp value
 * (main.outer: 0 over [0, 4), 0x18 to 0x3c, 0 to its end) and its flags
 * (main.leaf is TOPFRAME where _func has a flag, 1.16 and later).
 */
static void gofuncs(const char *name, int ver)
{
	static const char shstr[] = "\0.gopclntab\0.shstrtab";
	static const struct {
		uint64_t pc, entry;
		int64_t sp;
	} w[] = {
		{ 0x401000, 0x401000, 0 }, { 0x401003, 0x401000, 0 },
		{ 0x401004, 0x401000, 0x18 }, { 0x40103b, 0x401000, 0x18 },
		{ 0x40103c, 0x401000, 0 }, { 0x40103f, 0x401000, 0 },
		{ 0x401040, 0x401040, 0 }, { 0x40105f, 0x401040, 0 },
	};
	const char *root = getenv("SYM_ROOT");
	char path[4096];
	struct sym_gofuncs *g = NULL;
	struct sym_gofunc f;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	uint8_t *in_buf, *img;
	size_t len = 0, tlen, off, shoff, n;

	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/fuzz-gopclntab/%s",
		 root ? root : ".", name);
	in_buf = tap_read_file(path, &len);
	CHECK(in_buf && len >= 4);
	if (!in_buf || len < 4)
		return;
	tlen = in_buf[0] | in_buf[1] << 8 | in_buf[2] << 16 |
	       (size_t)in_buf[3] << 24;
	off = sizeof(Elf64_Ehdr);
	shoff = (off + tlen + sizeof(shstr) + 7) & ~(size_t)7;
	n = shoff + 3 * sizeof(Elf64_Shdr);
	img = calloc(1, n);
	CHECK(img != NULL);
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	memcpy(img + off, in_buf + 4, tlen);
	memcpy(img + off + tlen, shstr, sizeof(shstr));
	sh = (Elf64_Shdr *)(img + shoff);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC, .sh_addr = TAB_ADDR,
			      .sh_offset = off, .sh_size = tlen,
			      .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 12, .sh_type = SHT_STRTAB,
			      .sh_offset = off + tlen,
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	CHECK_ERR(sym_gofuncs_open_mem(img, n, &g), 0);
	for (size_t i = 0; g && i < sizeof(w) / sizeof(w[0]); i++) {
		bool leaf = w[i].entry == 0x401040;

		CHECK_ERR(sym_gofuncs_find(g, w[i].pc, &f), 0);
		CHECK(f.entry == w[i].entry &&
		      f.end == w[i].entry + (leaf ? 0x20 : 0x40));
		CHECK(f.sp_delta == w[i].sp);
		CHECK(f.flags == (leaf && ver != 12 ? SYM_GOFUNC_TOPFRAME : 0u));
	}
	CHECK_ERR(sym_gofuncs_find(g, 0x400fff, &f), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_gofuncs_find(g, 0x401060, &f), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_gofuncs_find(NULL, 0x401000, &f), -EINVAL);
	CHECK_ERR(sym_gofuncs_find(g, 0x401000, NULL), -EINVAL);
	sym_gofuncs_close(g);
	/* The same file without its section: no table (the bytes are in no
	 * segment, where find_by_magic() would look). */
	sh[1].sh_type = SHT_NULL;
	sh[1].sh_name = 0;
	CHECK_ERR(sym_gofuncs_open_mem(img, n, &g), -SYM_E_NOTFOUND);
	CHECK(g == NULL);
	free(img);
	free(in_buf);
}

int main(void)
{
	static const char *const full[] = { "seed-go12", "seed-go116",
					    "seed-go118", "seed-go120",
					    "seed-go118-be32" };
	static const char *const nodata[] = { "seed-go12-nodata",
					      "seed-go116-nodata",
					      "seed-go118-nodata",
					      "seed-go120-nodata" };
	static const char *const bad[] = { "seed-badmagic", "seed-go12-header",
					   "seed-go118-header",
					   "seed-go120-half" };
	static const int ver[] = { 12, 116, 118, 120, 118 };
	struct symi_gopcln_stats st;
	struct sym_table_stat ts;
	struct sym_table *t;
	void *buf;

	for (size_t i = 0; i < 5; i++) {
		printf("# %s\n", full[i]);
		CHECK_ERR(read_seed(full[i], &t, &buf, &st), 0);
		CHECK(st.version == ver[i] && st.funcs == 2 &&
		      st.inlined == 2 && st.bad_funcs == 0);
		sym_table_stat(t, &ts);
		CHECK(ts.flags == SYM_TABLE_GOPCLNTAB);
		CHECK(t && answers(t, true));
		sym_table_close(t);
		free(buf);
	}
	for (size_t i = 0; i < 4; i++) {
		printf("# %s\n", nodata[i]);
		CHECK_ERR(read_seed(nodata[i], &t, &buf, &st), 0);
		CHECK(st.funcs == 2 && st.inlined == 0);
		CHECK(t && answers(t, false));
		sym_table_close(t);
		free(buf);
	}
	for (size_t i = 0; i < 4; i++) {
		printf("# %s\n", bad[i]);
		CHECK_ERR(read_seed(bad[i], &t, &buf, &st),
			  -SYM_E_BADGOPCLNTAB);
		sym_table_close(t);
		free(buf);
	}
	/* The unwinder's API, on the 64-bit little-endian seeds. */
	for (size_t i = 0; i < 4; i++) {
		printf("# sym_gofuncs_*() on %s\n", full[i]);
		gofuncs(full[i], ver[i]);
	}
	sym_gofuncs_close(NULL);
	CHECK_ERR(sym_gofuncs_open_mem(NULL, 0, NULL), -EINVAL);
	return tap_done();
}
