/*
 * lines.c - a direct reader of DWARF line programs (versions 2 to 5).
 *
 * Why not dwarf_getsrclines(): libdw allocates every row, sorts the rows
 * of all sequences of a CU together and drops the sequence boundaries.
 * That is most of libdw's time on a cold start (0.11 s of libc's 0.3 s),
 * and without the boundaries a row at the end of one sequence seems to
 * reach the next.  Here each sequence is run as the line-number state
 * machine of the DWARF standard (section 6.2) and every row becomes the
 * range up to the next row of the same sequence.  Where rows share an
 * address the last one wins, as in llvm-symbolizer.
 *
 * File names are spelled as the peers spell them (path.c): a relative
 * directory joined to the CU's DW_AT_comp_dir, nothing normalized away.
 * dwarf.c spells libdw's file names the same way, so answers are the
 * same whichever reader produced them.
 *
 * A header this reader does not understand (an unknown form in a v5
 * header, a bad length) returns -SYM_E_BADDWARF before a single row is
 * added, and dwarf.c falls back to libdw for that CU.  So does a program
 * it cannot follow to its end: an extended opcode whose length is 0 or
 * runs past the program, a DW_LNE_set_address of another size than the
 * CU's addresses, DW_LNE_define_file or an extended opcode DWARF 5 does
 * not define (none that gcc or clang emit), an operand cut short, or
 * rows left after the last DW_LNE_end_sequence.  The rows it added for that CU are
 * taken back first (symi_builder_lines_undo()): libdw reads such
 * programs more leniently (a mutated opcode turned 74 of 150 answers
 * into ??:? here, none with libdw).  When libdw cannot read it either,
 * dwarf.c says so and reads it again here, keeping the rows before the
 * damage (symi_lines_in.keep_partial).  Every read is bounds-checked against the
 * section.
 */
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>

#include "internal.h"
#include "base.h"

struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t rd(struct cursor *c, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	/* Little-endian only: the tables are built for x86-64 and i386
	 * here; big-endian files fall back to libdw. */
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		unsigned char b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

/* In unsigned arithmetic: the sign bits of a 10-byte number start at bit
 * 63, where a signed 1 << 63 is undefined (fuzz-elf found it). */
static int64_t sleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0;

	while (c->p < c->end) {
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	c->bad = true;
	return 0;
}

static const char *cstr(struct cursor *c)
{
	const unsigned char *s = c->p;
	const unsigned char *z = memchr(s, '\0', (size_t)(c->end - s));

	if (!z) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	c->p = z + 1;
	return (const char *)s;
}

/* A string at @off of a string section, NUL-terminated inside it. */
static const char *sec_str(const struct symi_sec *s, uint64_t off)
{
	if (!s->data || off >= s->size ||
	    !memchr(s->data + off, '\0', s->size - off))
		return NULL;
	return (const char *)s->data + off;
}

/*
 * Read one attribute of a v5 directory/file entry.  Strings go to *str,
 * numbers to *num; other forms are skipped.  Returns false on an unknown
 * form or a bad string offset.
 */
static bool form(struct cursor *c, unsigned f, unsigned offsz,
		 const struct symi_lines_in *in, const char **str,
		 uint64_t *num)
{
	uint64_t off;

	switch (f) {
	case DW_FORM_string:
		*str = cstr(c);
		return *str != NULL;
	case DW_FORM_line_strp:
	case DW_FORM_strp:
		off = rd(c, offsz);
		*str = sec_str(f == DW_FORM_strp ? &in->str : &in->line_str,
			       off);
		return *str != NULL;
	case DW_FORM_udata:
		*num = uleb(c);
		return true;
	case DW_FORM_sdata:
		*num = (uint64_t)sleb(c);
		return true;
	case DW_FORM_data1:
		*num = rd(c, 1);
		return true;
	case DW_FORM_data2:
		*num = rd(c, 2);
		return true;
	case DW_FORM_data4:
		*num = rd(c, 4);
		return true;
	case DW_FORM_data8:
		*num = rd(c, 8);
		return true;
	case DW_FORM_data16:
		rd(c, 8);
		rd(c, 8);
		return true;
	case DW_FORM_block:
		off = uleb(c);
		if (off > (uint64_t)(c->end - c->p))
			return false;
		c->p += off;
		return true;
	default:
		return false;
	}
}

struct names {
	const char **v;
	size_t n, cap;
};

static int names_push(struct names *a, const char *s)
{
	if (symi_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return -ENOMEM;
	a->v[a->n++] = s;
	return 0;
}

/* A unit's directory and file names, before they are interned. */
struct ftab {
	struct names dirs, files;
	uint32_t *fdir;		/* files.v[i]'s index into dirs */
	size_t fdir_cap;
};

static void ftab_release(struct ftab *t)
{
	free(t->dirs.v);
	free(t->files.v);
	free(t->fdir);
}

/* Add a file and its directory index (UINT32_MAX: none). */
static int ftab_file(struct ftab *t, const char *name, uint64_t dir)
{
	if (names_push(&t->files, name) ||
	    symi_grow((void **)&t->fdir, &t->fdir_cap, t->files.n,
		      sizeof(*t->fdir)))
		return -ENOMEM;
	t->fdir[t->files.n - 1] = dir < UINT32_MAX ? (uint32_t)dir :
						     UINT32_MAX;
	return 0;
}

/*
 * Read a v5 entry-format list and its entries into t's files (or dirs).
 * Returns 0, -ENOMEM, or -SYM_E_BADDWARF on an unknown form or a bad
 * string offset.
 */
static int v5_entries(struct cursor *c, unsigned offsz,
		      const struct symi_lines_in *in, struct ftab *t,
		      bool is_files)
{
	unsigned fmt[16][2];
	unsigned nfmt = (unsigned)rd(c, 1);
	uint64_t count;

	if (nfmt > 16)
		return -SYM_E_BADDWARF;
	for (unsigned i = 0; i < nfmt; i++) {
		fmt[i][0] = (unsigned)uleb(c);
		fmt[i][1] = (unsigned)uleb(c);
	}
	count = uleb(c);
	if (c->bad || count > (uint64_t)(c->end - c->p))
		return -SYM_E_BADDWARF;
	for (uint64_t k = 0; k < count; k++) {
		const char *path = NULL;
		uint64_t dir = 0;

		for (unsigned i = 0; i < nfmt; i++) {
			const char *s = NULL;
			uint64_t v = 0;

			if (!form(c, fmt[i][1], offsz, in, &s, &v))
				return -SYM_E_BADDWARF;
			if (fmt[i][0] == DW_LNCT_path)
				path = s;
			else if (fmt[i][0] == DW_LNCT_directory_index)
				dir = v;
		}
		if (c->bad || !path)
			return -SYM_E_BADDWARF;
		if (is_files ? ftab_file(t, path, dir) :
			       names_push(&t->dirs, path))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The include_directories and file_names of a v2-4 header.  Directory 0
 * is the compilation directory; file 0 does not exist before DWARF 5,
 * and libdw calls it "???".
 */
static int v4_entries(struct cursor *c, const char *comp_dir,
		      struct ftab *t)
{
	const char *s;

	if (names_push(&t->dirs, comp_dir))
		return -ENOMEM;
	while ((s = cstr(c)) && *s) {
		if (names_push(&t->dirs, s))
			return -ENOMEM;
	}
	if (ftab_file(t, "???", UINT32_MAX))
		return -ENOMEM;
	while ((s = cstr(c)) && *s) {
		uint64_t d = uleb(c);

		uleb(c);	/* mtime */
		uleb(c);	/* length */
		if (ftab_file(t, s, d))
			return -ENOMEM;
	}
	return c->bad ? -SYM_E_BADDWARF : 0;
}

/* Intern t's files as the peers spell them (path.c): *fid maps a file
 * index of the unit to a builder file.  Returns 0 or -ENOMEM. */
static int intern_files(struct symi_builder *b, unsigned version,
			const char *comp_dir, const struct ftab *t,
			uint32_t **fid)
{
	uint32_t *v = symi_calloc(t->files.n ? t->files.n : 1, sizeof(*v));

	*fid = NULL;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->files.n; i++) {
		struct symi_path f = { .comp_dir = comp_dir,
				       .name = t->files.v[i],
				       .dir_rel = true };
		uint32_t d = t->fdir[i];

		/* DWARF 5: directory d, 0 being the compilation directory
		 * (not part of a relative path).  Before: directory d - 1
		 * of the header, which is dirs.v[d] here, and none for 0. */
		if (version >= 5) {
			f.dir = d < t->dirs.n ? t->dirs.v[d] : NULL;
			f.dir_rel = d != 0;
		} else {
			f.dir = d >= 1 && d < t->dirs.n ? t->dirs.v[d] : NULL;
		}
		if (version < 5 && i == 0)
			v[i] = symi_builder_file(b, "???", 0);
		else
			v[i] = symi_path_intern(b, &f);
		if (v[i] == SYMI_NONE) {
			free(v);
			return -ENOMEM;
		}
	}
	*fid = v;
	return 0;
}

/* What the header says about running the program (DWARF 5, 6.2.4). */
struct lhdr {
	unsigned version, offsz, asz, min_inst, max_ops;
	unsigned line_range, opcode_base;
	int line_base;
	const unsigned char *oplen;	/* standard opcodes' operand counts */
	struct cursor prog;		/* the program, to the unit's end */
	/* Per special opcode: the operation advance and the line advance
	 * (6.2.5.1), worked out once instead of two divisions a row. */
	uint8_t sp_adv[256];
	int16_t sp_line[256];
};

/*
 * Read the header of the unit at in->off up to its directory and file
 * lists, where *c is left.  Returns 0 or -SYM_E_BADDWARF.
 */
static int read_header(const struct symi_lines_in *in, struct cursor *c,
		       struct lhdr *h)
{
	uint64_t len, hdrlen;
	const unsigned char *unit_end;

	memset(h, 0, sizeof(*h));
	h->offsz = 4;
	h->asz = in->addr_size;
	if (!in->line.data || in->off >= in->line.size)
		return -SYM_E_BADDWARF;
	c->p = in->line.data + in->off;
	c->end = in->line.data + in->line.size;
	c->bad = false;
	len = rd(c, 4);
	if (len == 0xffffffff) {
		len = rd(c, 8);
		h->offsz = 8;
	} else if (len >= 0xfffffff0) {
		return -SYM_E_BADDWARF;
	}
	if (c->bad || len > (uint64_t)(c->end - c->p))
		return -SYM_E_BADDWARF;
	unit_end = c->p + len;
	c->end = unit_end;
	h->version = (unsigned)rd(c, 2);
	if (h->version < 2 || h->version > 5)
		return -SYM_E_BADDWARF;
	if (h->version >= 5) {
		h->asz = (unsigned)rd(c, 1);
		rd(c, 1);	/* segment selector size */
	}
	if (h->asz != 4 && h->asz != 8)
		return -SYM_E_BADDWARF;
	hdrlen = rd(c, h->offsz);
	if (c->bad || hdrlen > (uint64_t)(c->end - c->p))
		return -SYM_E_BADDWARF;
	h->prog.p = c->p + hdrlen;
	h->prog.end = unit_end;
	h->prog.bad = false;
	h->min_inst = (unsigned)rd(c, 1);
	h->max_ops = h->version >= 4 ? (unsigned)rd(c, 1) : 1;
	rd(c, 1);	/* default_is_stmt: every row is used */
	h->line_base = (int8_t)rd(c, 1);
	h->line_range = (unsigned)rd(c, 1);
	h->opcode_base = (unsigned)rd(c, 1);
	if (c->bad || h->line_range == 0 || h->max_ops == 0 ||
	    h->opcode_base == 0 ||
	    (size_t)(c->end - c->p) < h->opcode_base - 1)
		return -SYM_E_BADDWARF;
	h->oplen = c->p;
	c->p += h->opcode_base - 1;
	for (unsigned op = h->opcode_base; op < 256; op++) {
		unsigned adj = op - h->opcode_base;

		h->sp_adv[op] = (uint8_t)(adj / h->line_range);
		h->sp_line[op] = (int16_t)(h->line_base +
					   (int)(adj % h->line_range));
	}
	return 0;
}

/* The state machine's registers (DWARF 5, 6.2.2). */
struct regs {
	uint64_t addr;
	uint64_t file;
	uint64_t line;
	uint64_t column;
	uint64_t disc;
	unsigned op_index;
};

/* A row waiting for the next row of its sequence to give its end. */
struct pending {
	bool valid;
	uint64_t addr;
	uint32_t file, line, column, disc;
};

/* Add the pending row as [pend->addr, end), clipped to the CU range
 * holding its start (dropped when the CU has ranges and none holds it). */
static int add_row(struct symi_builder *b, const struct symi_lines_in *in,
		   const struct pending *pend, uint64_t end, size_t *at)
{
	if (in->nranges) {
		const struct symi_span *v = in->ranges;
		size_t n = in->nranges;
		long i = (long)*at;

		/* Rows come in address order: the range of the last one,
		 * when it is still the last to start at or below this
		 * one, is symi_span_find()'s answer. */
		if (!(*at < n && v[*at].lo <= pend->addr &&
		      (*at + 1 == n || v[*at + 1].lo > pend->addr) &&
		      pend->addr < v[*at].hi)) {
			i = symi_span_find(v, n, pend->addr);
			if (i < 0)
				return 0;
			*at = (size_t)i;
		}
		if (end > in->ranges[i].hi)
			end = in->ranges[i].hi;
	}
	return symi_builder_line(b, pend->addr, end, pend->file, pend->line,
				 pend->column, pend->disc);
}

static void seq_reset(struct regs *r, struct pending *pend)
{
	memset(r, 0, sizeof(*r));
	r->file = 1;
	r->line = 1;
	pend->valid = false;
}

/* Advance the address by @adv operations (DWARF 5, 6.2.5.1). */
static void advance(struct regs *r, const struct lhdr *h, uint64_t adv)
{
	if (h->max_ops == 1) {	/* all but VLIW: op_index stays 0 */
		r->addr += h->min_inst * adv;
		return;
	}
	r->addr += h->min_inst * ((r->op_index + adv) / h->max_ops);
	r->op_index = (unsigned)((r->op_index + adv) % h->max_ops);
}

/*
 * Run the extended opcode at h->prog (after its 0 byte).  Returns false
 * when the program cannot go on: the rows so far stay.
 */
static bool ext_op(struct lhdr *h, struct regs *r, bool *emit, bool *endseq)
{
	struct cursor *prog = &h->prog;
	uint64_t elen = uleb(prog);
	const unsigned char *eend;

	if (prog->bad || elen == 0 || elen > (uint64_t)(prog->end - prog->p))
		return false;
	eend = prog->p + elen;
	switch (*prog->p++) {
	case DW_LNE_end_sequence:
		*emit = *endseq = true;
		break;
	case DW_LNE_set_address:
		if (elen - 1 != h->asz)
			return false;
		r->addr = rd(prog, h->asz);
		r->op_index = 0;
		break;
	case DW_LNE_set_discriminator:
		r->disc = uleb(prog);
		break;
	case DW_LNE_define_file:
		/* Deprecated and unused by gcc or clang. */
		return false;
	default:
		/* No compiler of ours emits another: this is more likely a
		 * damaged length or opcode, which libdw, reading lengths
		 * as one byte, may still get through. */
		return false;
	}
	prog->p = eend;
	return true;
}

/* Run the standard opcode @op (0 < op < opcode_base).  Returns whether
 * it appends a row. */
static bool std_op(struct lhdr *h, unsigned op, struct regs *r)
{
	struct cursor *prog = &h->prog;

	switch (op) {
	case DW_LNS_copy:
		return true;
	case DW_LNS_advance_pc:
		advance(r, h, uleb(prog));
		break;
	case DW_LNS_advance_line:
		r->line += (uint64_t)sleb(prog);
		break;
	case DW_LNS_set_file:
		r->file = uleb(prog);
		break;
	case DW_LNS_set_column:
		r->column = uleb(prog);
		break;
	case DW_LNS_negate_stmt:
	case DW_LNS_set_basic_block:
	case DW_LNS_set_prologue_end:
	case DW_LNS_set_epilogue_begin:
		break;
	case DW_LNS_const_add_pc:
		advance(r, h, (255 - h->opcode_base) / h->line_range);
		break;
	case DW_LNS_fixed_advance_pc:
		r->addr += rd(prog, 2);
		r->op_index = 0;
		break;
	case DW_LNS_set_isa:
		uleb(prog);
		break;
	default:
		/* Unknown standard opcode: skip its operands. */
		for (unsigned k = 0; k < h->oplen[op - 1]; k++)
			uleb(prog);
		break;
	}
	return false;
}

/*
 * Run the program of @h, adding each row to @b as the range up to the
 * next row of its sequence.  @fid maps the program's file numbers
 * (nfiles of them) to builder files.  Returns 0, -ENOMEM, or
 * -SYM_E_BADDWARF when the program cannot be followed to its end (the
 * rows added stay: the caller takes them back).
 */
static int run_program(struct symi_builder *b, const struct symi_lines_in *in,
		       struct lhdr *h, const uint32_t *fid, size_t nfiles)
{
	struct cursor *prog = &h->prog;
	struct pending pend = { 0 };
	struct regs r;
	size_t at = 0;		/* add_row()'s last CU range */
	int err;

	seq_reset(&r, &pend);
	while (prog->p < prog->end && !prog->bad) {
		unsigned op = *prog->p++;
		bool emit = false, endseq = false;

		if (op >= h->opcode_base) {
			advance(&r, h, h->sp_adv[op]);
			r.line += (int64_t)h->sp_line[op];
			emit = true;
		} else if (op == 0) {
			if (!ext_op(h, &r, &emit, &endseq))
				return -SYM_E_BADDWARF;
		} else {
			emit = std_op(h, op, &r);
		}
		if (!emit)
			continue;
		/* The pending row ends where this one starts. */
		if (pend.valid && r.addr > pend.addr) {
			err = add_row(b, in, &pend, r.addr, &at);
			if (err)
				return err;
		}
		if (endseq) {
			seq_reset(&r, &pend);
			continue;
		}
		pend.valid = true;
		pend.addr = r.addr;
		pend.file = r.file < nfiles ? fid[r.file] : SYMI_NONE;
		pend.line = r.line > UINT32_MAX ? 0 : (uint32_t)r.line;
		pend.column = r.column > UINT32_MAX ? 0 : (uint32_t)r.column;
		pend.disc = r.disc > UINT32_MAX ? 0 : (uint32_t)r.disc;
		r.disc = 0;
	}
	/* An operand ran past the end, or a sequence was never ended. */
	return prog->bad || pend.valid ? -SYM_E_BADDWARF : 0;
}

int symi_lines_read(struct symi_builder *b, const struct symi_lines_in *in,
		    struct symi_lines_out *out)
{
	struct cursor c = { 0 };
	struct ftab t = { 0 };
	struct lhdr h;
	uint32_t *fid = NULL;
	int err;

	out->files = NULL;
	out->nfiles = 0;
	err = read_header(in, &c, &h);
	if (err)
		return err;
	if (h.version >= 5) {
		err = v5_entries(&c, h.offsz, in, &t, false);
		if (!err)
			err = v5_entries(&c, h.offsz, in, &t, true);
	} else {
		err = v4_entries(&c, in->comp_dir, &t);
	}
	if (!err)
		err = intern_files(b, h.version, in->comp_dir, &t, &fid);
	if (!err && !in->files_only) {
		size_t mark = symi_builder_lines_mark(b);

		err = run_program(b, in, &h, fid, t.files.n);
		if (err == -SYM_E_BADDWARF && in->keep_partial) {
			err = 0;	/* the rows up to the damage stay */
		} else if (err == -SYM_E_BADDWARF) {
			symi_debug("lines: cannot follow the line program at 0x%llx to its end, taking back its rows",
				   (unsigned long long)in->off);
			symi_builder_lines_undo(b, mark);
		}
	}
	if (!err) {
		out->files = fid;
		out->nfiles = t.files.n;
		fid = NULL;
	}
	free(fid);
	ftab_release(&t);
	return err;
}
