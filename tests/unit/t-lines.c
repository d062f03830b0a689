/*
 * t-lines.c - lines.c on hand-made line programs: DWARF 4 and 5 headers,
 * sequences and their boundaries, file name spelling, and what happens
 * with headers it does not understand and programs cut short.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>

#include "tap.h"
#include "internal.h"
#include "base.h"

struct bytes {
	unsigned char b[1024];
	size_t n;
};

static void u8(struct bytes *o, unsigned v)
{
	o->b[o->n++] = (unsigned char)v;
}

static void u16(struct bytes *o, unsigned v)
{
	u8(o, v & 0xff);
	u8(o, v >> 8);
}

static void u32(struct bytes *o, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		u8(o, (v >> (8 * i)) & 0xff);
}

static void u64(struct bytes *o, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		u8(o, (unsigned)(v >> (8 * i)) & 0xff);
}

static void uleb(struct bytes *o, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		u8(o, c | (v ? 0x80 : 0));
	} while (v);
}

static void sleb(struct bytes *o, int64_t v)
{
	for (;;) {
		unsigned char c = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			u8(o, c);
			return;
		}
		u8(o, c | 0x80);
	}
}

static void str(struct bytes *o, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(o->b + o->n, s, n);
	o->n += n;
}

static void set_address(struct bytes *o, uint64_t a)
{
	u8(o, 0);
	uleb(o, 9);
	u8(o, DW_LNE_set_address);
	u64(o, a);
}

static void end_sequence(struct bytes *o)
{
	u8(o, 0);
	uleb(o, 1);
	u8(o, DW_LNE_end_sequence);
}

/* Standard opcode lengths for opcode_base 13. */
static const unsigned char std_lengths[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1,
					       0, 0, 1 };

/*
 * The program both tests use (line_base -5, line_range 14, min_inst 1):
 *   seq 1: 0x1000 a.c:10, 0x1004 a.c:12 col 7, 0x1010 b.h:3 disc 2,
 *          0x1010 b.h:4 (same address: the last wins), end 0x1020;
 *          then a zero-length row at 0x1020 before the end marker
 *          (gcc's .cold pattern) ... as its own sequence:
 *   seq 2: 0x3000 a.c:50, end 0x3008.
 */
static void program(struct bytes *o, unsigned fa, unsigned fb)
{
	set_address(o, 0x1000);
	u8(o, DW_LNS_set_file);
	uleb(o, fa);
	u8(o, DW_LNS_advance_line);
	sleb(o, 9);
	u8(o, DW_LNS_copy);			/* 0x1000 line 10 */
	u8(o, DW_LNS_set_column);
	uleb(o, 7);
	/* special: addr += 4, line += 2 -> (2 - -5) + 14 * 4 + 13 */
	u8(o, (2 + 5) + 14 * 4 + 13);		/* 0x1004 line 12 */
	u8(o, DW_LNS_set_column);
	uleb(o, 0);
	u8(o, DW_LNS_set_file);
	uleb(o, fb);
	u8(o, DW_LNS_advance_line);
	sleb(o, -9);
	u8(o, DW_LNS_advance_pc);
	uleb(o, 12);
	u8(o, 0);
	uleb(o, 2);
	u8(o, DW_LNE_set_discriminator);
	u8(o, 2);
	u8(o, DW_LNS_copy);			/* 0x1010 line 3 disc 2 */
	u8(o, DW_LNS_advance_line);
	sleb(o, 1);
	u8(o, DW_LNS_copy);			/* 0x1010 line 4 */
	u8(o, DW_LNS_fixed_advance_pc);
	u16(o, 0x10);
	u8(o, DW_LNS_copy);			/* 0x1020: zero-length */
	end_sequence(o);			/* ends at 0x1020 */
	set_address(o, 0x3000);
	u8(o, DW_LNS_set_file);
	uleb(o, fa);
	u8(o, DW_LNS_advance_line);
	sleb(o, 49);
	u8(o, DW_LNS_copy);
	u8(o, DW_LNS_advance_pc);
	uleb(o, 8);
	end_sequence(o);
}

/* A DWARF 4 unit: dirs {"inc"}, files {"a.c" dir 0, "b.h" dir 1}. */
static size_t unit_v4(struct bytes *o)
{
	size_t len_at, hdr_at, prog_at;

	len_at = o->n;
	u32(o, 0);
	u16(o, 4);
	hdr_at = o->n;
	u32(o, 0);
	u8(o, 1);	/* min_inst_length */
	u8(o, 1);	/* max_ops_per_inst */
	u8(o, 1);	/* default_is_stmt */
	u8(o, (unsigned char)-5);
	u8(o, 14);
	u8(o, 13);
	for (int i = 0; i < 12; i++)
		u8(o, std_lengths[i]);
	str(o, "inc");
	u8(o, 0);
	str(o, "a.c");
	uleb(o, 0);
	uleb(o, 0);
	uleb(o, 0);
	str(o, "b.h");
	uleb(o, 1);
	uleb(o, 0);
	uleb(o, 0);
	u8(o, 0);
	prog_at = o->n;
	program(o, 1, 2);
	memcpy(o->b + hdr_at, &(uint32_t){ (uint32_t)(prog_at - hdr_at - 4) },
	       4);
	memcpy(o->b + len_at, &(uint32_t){ (uint32_t)(o->n - len_at - 4) }, 4);
	return o->n;
}

/* A DWARF 5 unit: dirs {@dir0, "inc"} and files {"a.c" 0, "b.h" 1}
 * as line_strp offsets into @ls, and an MD5 on each file. */
static size_t unit_v5(struct bytes *o, struct bytes *ls, const char *dir0)
{
	size_t len_at, hdr_at, prog_at;
	uint32_t d0, d1, f0, f1;

	d0 = (uint32_t)ls->n;
	str(ls, dir0);
	d1 = (uint32_t)ls->n;
	str(ls, "inc");
	f0 = (uint32_t)ls->n;
	str(ls, "a.c");
	f1 = (uint32_t)ls->n;
	str(ls, "b.h");

	len_at = o->n;
	u32(o, 0);
	u16(o, 5);
	u8(o, 8);	/* address_size */
	u8(o, 0);	/* seg_sel_size */
	hdr_at = o->n;
	u32(o, 0);
	u8(o, 1);
	u8(o, 1);
	u8(o, 1);
	u8(o, (unsigned char)-5);
	u8(o, 14);
	u8(o, 13);
	for (int i = 0; i < 12; i++)
		u8(o, std_lengths[i]);
	u8(o, 1);			/* directory formats */
	uleb(o, DW_LNCT_path);
	uleb(o, DW_FORM_line_strp);
	uleb(o, 2);
	u32(o, d0);
	u32(o, d1);
	u8(o, 3);			/* file formats */
	uleb(o, DW_LNCT_path);
	uleb(o, DW_FORM_line_strp);
	uleb(o, DW_LNCT_directory_index);
	uleb(o, DW_FORM_udata);
	uleb(o, DW_LNCT_MD5);
	uleb(o, DW_FORM_data16);
	uleb(o, 2);
	u32(o, f0);
	uleb(o, 0);
	u64(o, 0);
	u64(o, 0);
	u32(o, f1);
	uleb(o, 1);
	u64(o, 0);
	u64(o, 0);
	prog_at = o->n;
	program(o, 0, 1);
	memcpy(o->b + hdr_at, &(uint32_t){ (uint32_t)(prog_at - hdr_at - 4) },
	       4);
	memcpy(o->b + len_at, &(uint32_t){ (uint32_t)(o->n - len_at - 4) }, 4);
	return o->n;
}

/* symi_lines_in.keep_partial for the next run(). */
static bool keep_partial;

static struct sym_table *run(const struct bytes *line,
			     const struct bytes *ls, const char *comp_dir,
			     int want, void **buf, size_t *nfiles)
{
	struct symi_lines_in in = { 0 };
	struct symi_lines_out out = { 0 };
	struct symi_builder *b = NULL;
	struct sym_table *t = NULL;
	size_t len;

	in.line.data = line->b;
	in.line.size = line->n;
	if (ls) {
		in.line_str.data = ls->b;
		in.line_str.size = ls->n;
	}
	in.comp_dir = comp_dir;
	in.addr_size = 8;
	in.keep_partial = keep_partial;
	CHECK_ERR(symi_builder_new(&b), 0);
	symi_builder_add_text(b, 0x1000, 0x4000);
	CHECK_ERR(symi_lines_read(b, &in, &out), want);
	*nfiles = out.nfiles;
	free(out.files);
	if (symi_builder_finish(b, buf, &len) == 0)
		sym_table_open(*buf, len, &t);
	symi_builder_free(b);
	return t;
}

static int same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* The whole path of the file at @addr is @whole, and its path relative
 * to the compilation directory @rel. */
static void check_file(struct sym_table *t, uint64_t addr, const char *whole,
		       const char *rel)
{
	struct sym_frame fr[2];
	size_t n;

	sym_table_lookup(t, addr, fr, 2, &n);
	CHECK(n == 1 && same(fr[0].file, whole));
	CHECK(n == 1 && fr[0].file && same(fr[0].file + fr[0].file_rel, rel));
	if (n != 1 || !fr[0].file || !same(fr[0].file, whole) ||
	    !same(fr[0].file + fr[0].file_rel, rel))
		printf("# 0x%llx: '%s', relative '%s'; want '%s', '%s'\n",
		       (unsigned long long)addr,
		       n && fr[0].file ? fr[0].file : "",
		       n && fr[0].file ? fr[0].file + fr[0].file_rel : "",
		       whole, rel);
}

/* Run @line (with @ls) under @comp_dir and check the files of a.c and
 * b.h, whole and relative. */
static void check_paths(const struct bytes *line, const struct bytes *ls,
			const char *comp_dir, const char *a, const char *arel,
			const char *b, const char *brel)
{
	struct sym_table *t;
	size_t nfiles;
	void *buf = NULL;

	t = run(line, ls, comp_dir, 0, &buf, &nfiles);
	CHECK(t != NULL);
	if (t) {
		check_file(t, 0x1000, a, arel);
		check_file(t, 0x1018, b, brel);
	}
	sym_table_close(t);
	free(buf);
}

static void check_rows(struct sym_table *t, const char *afile,
		       const char *bfile)
{
	struct sym_frame fr[4];
	size_t n;

	sym_table_lookup(t, 0x1002, fr, 4, &n);
	CHECK(n == 1 && same(fr[0].file, afile) && fr[0].line == 10);
	sym_table_lookup(t, 0x1004, fr, 4, &n);
	CHECK(n == 1 && fr[0].line == 12 && fr[0].column == 7);
	sym_table_lookup(t, 0x1018, fr, 4, &n);
	CHECK(n == 1 && same(fr[0].file, bfile) && fr[0].line == 4 &&
	      fr[0].discriminator == 0);
	/* The zero-length row at the sequence end reaches nowhere. */
	sym_table_lookup(t, 0x1020, fr, 4, &n);
	CHECK(n == 0);
	sym_table_lookup(t, 0x2000, fr, 4, &n);
	CHECK(n == 0);
	sym_table_lookup(t, 0x3007, fr, 4, &n);
	CHECK(n == 1 && fr[0].line == 50);
	sym_table_lookup(t, 0x3008, fr, 4, &n);
	CHECK(n == 0);
}

int main(void)
{
	struct bytes line = { 0 }, ls = { 0 }, bad;
	struct sym_table *t;
	size_t nfiles = 0, full;
	void *buf = NULL;

	/* DWARF 4: directory 0 is the comp dir, a relative directory is
	 * joined to it (llvm-symbolizer's, GNU's and eu's spelling). */
	unit_v4(&line);
	t = run(&line, NULL, "/build", 0, &buf, &nfiles);
	CHECK(t && nfiles == 3);
	if (t)
		check_rows(t, "/build/a.c", "/build/inc/b.h");
	sym_table_close(t);
	free(buf);
	buf = NULL;
	check_paths(&line, NULL, "/build", "/build/a.c", "a.c",
		    "/build/inc/b.h", "inc/b.h");
	/* No comp dir: names stay relative. */
	check_paths(&line, NULL, NULL, "a.c", "a.c", "inc/b.h", "inc/b.h");
	/* A relative comp dir (-fdebug-prefix-map=/build=.), nothing
	 * normalized; a comp dir ending in '/' gets no second one. */
	check_paths(&line, NULL, "./obj", "./obj/a.c", "a.c",
		    "./obj/inc/b.h", "inc/b.h");
	check_paths(&line, NULL, "/build/", "/build/a.c", "a.c",
		    "/build/inc/b.h", "inc/b.h");

	/* DWARF 5 with line_strp names and MD5s: directory 0 is the comp
	 * dir as the line table spells it; a relative directory is joined
	 * to DW_AT_comp_dir. */
	memset(&line, 0, sizeof(line));
	unit_v5(&line, &ls, "/src");
	t = run(&line, &ls, "/ignored", 0, &buf, &nfiles);
	CHECK(t && nfiles == 2);
	if (t)
		check_rows(t, "/src/a.c", "/ignored/inc/b.h");
	sym_table_close(t);
	free(buf);
	buf = NULL;
	check_paths(&line, &ls, "/ignored", "/src/a.c", "a.c",
		    "/ignored/inc/b.h", "inc/b.h");
	check_paths(&line, &ls, NULL, "/src/a.c", "a.c", "inc/b.h",
		    "inc/b.h");
	{
		/* Debian's libc: directory 0 relative, and so joined to
		 * DW_AT_comp_dir, which it equals (./libio/./libio/...). */
		struct bytes l2 = { 0 }, ls2 = { 0 };

		unit_v5(&l2, &ls2, "./src");
		check_paths(&l2, &ls2, "./src", "./src/./src/a.c", "a.c",
			    "./src/inc/b.h", "inc/b.h");
		check_paths(&l2, &ls2, NULL, "./src/a.c", "a.c", "inc/b.h",
			    "inc/b.h");
	}

	/* Not understood: a version from the future, a bad line_strp, a
	 * unit longer than the section.  No rows, -SYM_E_BADDWARF. */
	full = line.n;
	bad = line;
	bad.b[4] = 7;
	sym_table_close(run(&bad, &ls, NULL, -SYM_E_BADDWARF, &buf, &nfiles));
	free(buf);
	buf = NULL;
	sym_table_close(run(&line, NULL, NULL, -SYM_E_BADDWARF, &buf,
			    &nfiles));
	free(buf);
	buf = NULL;
	bad = line;
	bad.n = 20;
	sym_table_close(run(&bad, &ls, NULL, -SYM_E_BADDWARF, &buf, &nfiles));
	free(buf);
	buf = NULL;

	/* A program cut short (the unit length fixed up to the cut): it
	 * cannot be followed to its end, so its rows are taken back and
	 * the caller falls back to libdw... */
	bad = line;
	bad.n = full - 14;
	memcpy(bad.b, &(uint32_t){ (uint32_t)(bad.n - 4) }, 4);
	t = run(&bad, &ls, NULL, -SYM_E_BADDWARF, &buf, &nfiles);
	if (t) {
		struct sym_frame fr[2];
		size_t n;

		sym_table_lookup(t, 0x1004, fr, 2, &n);
		CHECK(n == 0);
	}
	sym_table_close(t);
	free(buf);
	buf = NULL;
	/* The same for the last DW_LNE_end_sequence (the unit's last three
	 * bytes: 0, length 1, opcode 1) with a length of 0, and with an
	 * extended opcode DWARF does not define: every row is taken back. */
	CHECK(line.b[full - 3] == 0 && line.b[full - 2] == 1 &&
	      line.b[full - 1] == DW_LNE_end_sequence);
	for (int k = 0; k < 2; k++) {
		bad = line;
		if (k == 0)
			bad.b[full - 2] = 0;
		else
			bad.b[full - 1] = 0x20;
		t = run(&bad, &ls, NULL, -SYM_E_BADDWARF, &buf, &nfiles);
		if (t) {
			struct sym_frame fr[2];
			size_t n;

			sym_table_lookup(t, 0x1004, fr, 2, &n);
			CHECK(n == 0);
		}
		sym_table_close(t);
		free(buf);
		buf = NULL;
	}
	bad = line;
	bad.n = full - 14;
	memcpy(bad.b, &(uint32_t){ (uint32_t)(bad.n - 4) }, 4);
	/* ...and when libdw cannot read it either, the rows before the
	 * damage are kept and the rest is lost. */
	keep_partial = true;
	t = run(&bad, &ls, NULL, 0, &buf, &nfiles);
	keep_partial = false;
	if (t) {
		struct sym_frame fr[2];
		size_t n;

		sym_table_lookup(t, 0x1004, fr, 2, &n);
		CHECK(n == 1 && fr[0].line == 12);
		sym_table_lookup(t, 0x3000, fr, 2, &n);
		CHECK(n == 0);
	}
	sym_table_close(t);
	free(buf);
	return tap_done();
}
