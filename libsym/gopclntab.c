/*
 * gopclntab.c - a table source for Go binaries: the runtime's own
 * function table, .gopclntab.
 *
 * Every Go executable carries the table its runtime unwinds and prints
 * tracebacks with, even when built with -ldflags='-s -w' (no DWARF, no
 * .symtab).  It gives, for every function, its name and, for every PC,
 * the file and line, and the inline tree: which inlined calls cover the
 * PC and where each was called from.  When a module has no DWARF,
 * module.c builds its table from here (DWARF wins when both exist: it
 * has what the runtime does not need, columns and declarations).
 *
 * Where it is.  The section .gopclntab (.data.rel.ro.gopclntab when an
 * external linker made the file); else, when the section headers are gone
 * or the section has another name, the first place in a PT_LOAD segment
 * where a header that checks out starts (find_by_magic()).  Every read is
 * bounded by that section or segment: the table is outside bytes.
 *
 * The format (Go's src/runtime/symtab.go and runtime2.go are the
 * reference, cmd/link/internal/ld/pcln.go the writer).  Integers are in
 * the target's byte order (the magic tells it) and pointer size (byte 7).
 *
 *   magic    version  header after the 8 bytes    function table entry
 *   fffffffb 1.2-1.15 nfunc, then the table       {uintptr pc, funcoff}
 *   fffffffa 1.16     nfunc nfiles funcname cu    {uintptr pc, funcoff}
 *                     filetab pctab pcln offsets
 *   fffffff0 1.18     the same with textStart     {u32 pc - textStart,
 *   fffffff1 1.20+    after nfiles                 u32 funcoff}
 *
 * The function table holds nfunc entries and one more PC, the end of the
 * last function; funcoff locates each function's _func record in the
 * pcln region (1.2: in the whole table).  A _func gives the name (offset
 * in the name region; 1.2: in the table), and offsets of three pc-value
 * tables in the pctab region (1.2: the table): pcsp, pcfile, pcln.  After
 * it come npcdata more pc-value table offsets (u32) and nfuncdata funcdata
 * (1.18+: u32 offsets from the module's go:func.* base, ~0 for none;
 * before: pointers, aligned to the pointer size).
 *
 * A pc-value table is a run of pairs of varints: a zig-zag value delta
 * (the value starts at -1) and a PC delta in units of the PC quantum
 * (byte 6), each pair saying the value holds up to that PC; a zero value
 * delta after the first pair ends it.  pcfile's value is a file number:
 * 1.2: an index in the file table (u32 offsets of names); 1.16+: an index
 * into the function's compilation unit's slice of cutab (u32 offsets in
 * the file name region, ~0 for none).  pcln's value is the line.
 *
 * Inlining.  pcdata[2] (PCDATA_InlTreeIndex) maps each PC to an index in
 * the function's inline tree, funcdata[3] (FUNCDATA_InlTree; funcdata[4]
 * in Go 1.12-1.15, whose funcdata had RegPointerMaps before), or to -1
 * when the PC is in no inlined call.  A tree entry (1.12-1.19: 20 bytes,
 * {i16 parent, u8 funcID, _, i32 file, i32 line, i32 nameoff, i32
 * parentPc}; 1.20+: 16 bytes, {u8 funcID, _[3], i32 nameoff, i32
 * parentPc, i32 startLine}) names the inlined function, and parentPc is
 * the offset from the function's entry of an instruction whose position is
 * the call site.  So, as the runtime's traceback does, the call site's
 * file and line are pcfile and pcln at entry + parentPc, and the caller is
 * the tree entry that covers that PC (the function itself when none
 * does); the same reading serves every version.  In 1.18+ the tree lies
 * at go:func.* plus an offset, and only the runtime's moduledata knows
 * that base: it is found by the pointer to the table it starts with, in a
 * writable segment (find_gofunc()).  Position-independent executables
 * keep that pointer in a relocation, not in the file: they get no inline
 * chains (the outermost frame stays right).  Tree entries before Go 1.12
 * (16 bytes, no parentPc) are not read: a 1.2 table is taken to be
 * 1.12-1.15 for its inline tree.
 *
 * The builder gets what dwarf.c gives it: per function a function name
 * and a scope over [entry, end) at depth 0; per inline tree entry used, a
 * scope under its caller's with the call site, over the PC runs that
 * pcdata[2] gives it, at its depth; and one line row per run of pcfile
 * and pcln.  Names are the runtime's (main.(*T).m, pkg.F[...]), files
 * the paths the linker wrote, a relative one under the compilation
 * directory "." that Go's DWARF always names.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base.h"

#define MAGIC_12 0xfffffffbu
#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

#define PCDATA_INLTREEINDEX 2
/* FUNCDATA_InlTree: 4 in Go 1.12-1.15 (after RegPointerMaps and
 * StackObjects), 3 since 1.16 (RegPointerMaps gone). */
#define FUNCDATA_INLTREE(g) ((g)->ver == 12 ? 4u : 3u)
/* Bounds on what one function may claim: no Go function is near them,
 * and they keep a corrupt table from making the builder allocate. */
#define MAX_FUNC_SIZE (1u << 28)
#define MAX_INL_INDEX (1u << 20)
#define MAX_INL_DEPTH 64
/* The pc-value bytes decoded for all functions: BUDGET_PER_BYTE per byte
 * of the table, and at least BUDGET_MIN (struct gp's budget).  Real
 * tables decode bytes of about a third of their size: 0.35 for t0140's
 * Go 1.19 program, 0.33 to 0.37 for esbuild's go1.15, 1.16 and 1.20. */
#define BUDGET_PER_BYTE 8
#define BUDGET_MIN (1u << 20)

/* A pc-value run: the value holds on [lo, hi). */
struct run {
	uint64_t lo, hi;
	int32_t val;
};

struct runs {
	struct run *v;
	size_t n, cap;
};

/* An inline tree entry's scope, once made. */
struct inl {
	uint32_t scope;		/* SYMI_NONE until made */
	uint32_t depth;
	uint64_t entry;		/* its lowest PC */
	bool busy;		/* being made: a parent chain that loops */
};

struct gp {
	const uint8_t *d;	/* the table; n bytes */
	size_t n;
	uint64_t addr;		/* its address */
	const struct symi_gomem *mem;
	struct symi_builder *b;
	int ver;		/* 12, 116, 118, 120 */
	bool be;
	unsigned quantum, psz;
	uint64_t nfunc, nfiles, text;
	uint64_t ncu;		/* 1.16+: entries of cutab */
	size_t ftab;		/* function table */
	size_t funcname, cu, filetab, pctab, funcdata;
	size_t files12;		/* 1.2: the file table (u32 count first) */
	uint64_t gofunc;	/* 1.18+: go:func.*, 0 when unknown */
	uint32_t *fmemo;	/* file number -> builder file + 1 */
	size_t nfmemo;
	struct runs file, line, inl;
	struct inl *inls;
	size_t ninls_cap;
	uint32_t ninls;		/* entries of the current function's */
	struct symi_gopcln_stats *st;
	/* pc-value bytes left to decode.  Functions may share pc-value
	 * tables (the linker shares identical ones), so a crafted table
	 * could make many functions decode one long table: the work is
	 * bounded to a multiple of the table's size instead. */
	uint64_t budget;
};

static uint32_t get32(bool be, const uint8_t *p)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		    (uint32_t)p[2] << 8 | p[3] :
		    (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
		    (uint32_t)p[1] << 8 | p[0];
}

static uint64_t getword(bool be, unsigned sz, const uint8_t *p)
{
	if (sz == 4)
		return get32(be, p);
	return be ? (uint64_t)get32(be, p) << 32 | get32(be, p + 4) :
		    (uint64_t)get32(be, p + 4) << 32 | get32(be, p);
}

/* Read @sz bytes (4 or the pointer size) at @off of the table. */
static bool rd(const struct gp *g, uint64_t off, unsigned sz, uint64_t *v)
{
	if (off > g->n || g->n - off < sz)
		return false;
	*v = getword(g->be, sz, g->d + off);
	return true;
}

static bool rd32(const struct gp *g, uint64_t off, uint32_t *v)
{
	uint64_t w;

	if (!rd(g, off, 4, &w))
		return false;
	*v = (uint32_t)w;
	return true;
}

/* Bytes at @addr of the module's memory, @len of them, or NULL. */
static const uint8_t *mem_at(const struct symi_gomem *m, uint64_t addr,
			     size_t len)
{
	for (size_t i = 0; m && i < m->n; i++) {
		const struct symi_goseg *s = &m->segs[i];

		if (addr >= s->addr && addr - s->addr <= s->len &&
		    s->len - (addr - s->addr) >= len)
			return s->p + (addr - s->addr);
	}
	return NULL;
}

/* The NUL-terminated string at @off of region @base, or NULL when it runs
 * past the table. */
static const char *str_at(const struct gp *g, size_t base, uint64_t off)
{
	if (off > g->n - base)
		return NULL;
	off += base;
	if (!memchr(g->d + off, '\0', g->n - off))
		return NULL;
	return (const char *)g->d + off;
}

/*
 * The header.
 */

/* The offset of header word @i (after the first 8 bytes). */
static bool word(const struct gp *g, unsigned i, uint64_t *v)
{
	return rd(g, 8 + (uint64_t)i * g->psz, g->psz, v);
}

/* Region offset @v, which must lie inside the table. */
static bool region(const struct gp *g, uint64_t v, size_t *out)
{
	if (v > g->n)
		return false;
	*out = (size_t)v;
	return true;
}

/* The function table's entry size, and whether it fits. */
static unsigned ftab_field(const struct gp *g)
{
	return g->ver >= 118 ? 4 : g->psz;
}

static int parse_header_116(struct gp *g)
{
	unsigned k = g->ver >= 118 ? 1 : 0;
	uint64_t v[8];

	for (unsigned i = 0; i < 7 + k; i++)
		if (!word(g, i, &v[i]))
			return -SYM_E_BADGOPCLNTAB;
	g->nfunc = v[0];
	g->nfiles = v[1];
	g->text = k ? v[2] : 0;
	if (!region(g, v[2 + k], &g->funcname) ||
	    !region(g, v[3 + k], &g->cu) ||
	    !region(g, v[4 + k], &g->filetab) ||
	    !region(g, v[5 + k], &g->pctab) ||
	    !region(g, v[6 + k], &g->funcdata))
		return -SYM_E_BADGOPCLNTAB;
	g->ftab = g->funcdata;
	return 0;
}

static int parse_header_12(struct gp *g)
{
	uint32_t off, count;

	if (!word(g, 0, &g->nfunc) || g->nfunc > g->n)
		return -SYM_E_BADGOPCLNTAB;
	g->ftab = 8 + g->psz;
	/* After the function table and its end PC: the file table's
	 * offset, and there its count. */
	if (!rd32(g, g->ftab + (g->nfunc * 2 + 1) * g->psz, &off) ||
	    !region(g, off, &g->files12) || !rd32(g, off, &count) ||
	    count > (g->n - g->files12) / 4)
		return -SYM_E_BADGOPCLNTAB;
	g->nfiles = count;
	return 0;
}

/* Check the first 8 bytes and read the header.  -SYM_E_BADGOPCLNTAB
 * when it is not a table this reader knows or does not fit. */
static int parse_header(struct gp *g)
{
	const uint8_t *d = g->d;
	uint32_t le, be;
	uint64_t need;
	int err;

	if (g->n < 16 || d[4] || d[5] ||
	    (d[6] != 1 && d[6] != 2 && d[6] != 4) || (d[7] != 4 && d[7] != 8))
		return -SYM_E_BADGOPCLNTAB;
	le = get32(false, d);
	be = get32(true, d);
	g->be = be >= MAGIC_118 && le < MAGIC_118;
	switch (g->be ? be : le) {
	case MAGIC_12:
		g->ver = 12;
		break;
	case MAGIC_116:
		g->ver = 116;
		break;
	case MAGIC_118:
		g->ver = 118;
		break;
	case MAGIC_120:
		g->ver = 120;
		break;
	default:
		return -SYM_E_BADGOPCLNTAB;
	}
	g->quantum = d[6];
	g->psz = d[7];
	err = g->ver == 12 ? parse_header_12(g) : parse_header_116(g);
	if (err)
		return err;
	/* The function table and its end PC must fit. */
	need = (g->nfunc * 2 + 1) * ftab_field(g);
	if (g->nfunc == 0 || g->nfunc > g->n || g->ftab > g->n ||
	    need > g->n - g->ftab)
		return -SYM_E_BADGOPCLNTAB;
	/* cutab holds every CU's list of files: it runs up to the next
	 * region, the file names (header nfiles counts distinct files). */
	if (g->ver >= 116)
		g->ncu = ((g->filetab > g->cu ? g->filetab : g->n) - g->cu) / 4;
	return 0;
}

/* PC of function table entry @i (i == nfunc: the end). */
static uint64_t ftab_pc(const struct gp *g, uint64_t i)
{
	unsigned f = ftab_field(g);
	uint64_t v = getword(g->be, f, g->d + g->ftab + 2 * i * f);

	return g->ver >= 118 ? g->text + v : v;
}

static uint64_t ftab_off(const struct gp *g, uint64_t i)
{
	unsigned f = ftab_field(g);

	return getword(g->be, f, g->d + g->ftab + (2 * i + 1) * f);
}

/*
 * go:func.* (1.18+): moduledata starts with a pointer to the table, and
 * its funcnametab slice with a pointer to the name region; gofunc is word
 * 38 (1.18, 1.19) or 40 (1.20+: covctrs, ecovctrs came before it).
 */
static void find_gofunc(struct gp *g)
{
	unsigned idx = g->ver >= 120 ? 40 : 38, w = g->psz;
	const struct symi_gomem *m = g->mem;

	for (size_t i = 0; m && i < m->n && !g->gofunc; i++) {
		const struct symi_goseg *s = &m->segs[i];

		if (!s->writable || s->len < (size_t)(idx + 1) * w)
			continue;
		for (size_t o = 0; o <= s->len - (size_t)(idx + 1) * w;
		     o += w) {
			const uint8_t *p = s->p + o;
			uint64_t gf;

			if (getword(g->be, w, p) != g->addr ||
			    getword(g->be, w, p + w) != g->addr + g->funcname)
				continue;
			gf = getword(g->be, w, p + (size_t)idx * w);
			if (gf && mem_at(m, gf, 1)) {
				g->gofunc = gf;
				break;
			}
		}
	}
}

/*
 * pc-value tables.
 */

static bool varint(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t c;

		if (*p >= end)
			return false;
		c = *(*p)++;
		v |= (uint32_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* One pair of a pc-value table at *@p: the value delta and the PC delta
 * (in quanta).  false at its end (a zero value delta after the first
 * pair) or where it breaks off. */
static bool pair(const uint8_t **p, const uint8_t *stop, bool first,
		 int32_t *vd, uint32_t *pcd)
{
	uint32_t uv;

	if (!varint(p, stop, &uv) || (uv == 0 && !first) ||
	    !varint(p, stop, pcd))
		return false;
	*vd = (uv & 1) ? (int32_t)~(uv >> 1) : (int32_t)(uv >> 1);
	return true;
}

/* Decode the pc-value table at @off (of region @base) for the function
 * [entry, end) into @r: runs in order, none past @end.  A table that
 * breaks off keeps the runs before.  Returns 0 or -ENOMEM. */
static int decode(struct gp *g, size_t base, uint32_t off, uint64_t entry,
		  uint64_t end, struct runs *r)
{
	const uint8_t *p, *stop = g->d + g->n;
	uint64_t pc = entry;
	int32_t val = -1;

	r->n = 0;
	if (!off || off > g->n - base)
		return 0;
	p = g->d + base + off;
	while (pc < end) {
		const uint8_t *p0 = p;
		uint32_t pcd;
		int32_t vd;

		if (!pair(&p, stop, pc == entry, &vd, &pcd))
			break;
		/* Each pair costs its bytes; see struct gp's budget. */
		if ((uint64_t)(p - p0) >= g->budget) {
			g->budget = 0;
			break;
		}
		g->budget -= (uint64_t)(p - p0);
		val = (int32_t)((uint32_t)val + (uint32_t)vd);
		if (pcd == 0)
			continue;
		if (symi_grow((void **)&r->v, &r->cap, r->n + 1,
			      sizeof(*r->v)))
			return -ENOMEM;
		r->v[r->n].lo = pc;
		pc += (uint64_t)pcd * g->quantum;
		r->v[r->n].hi = pc < end ? pc : end;
		r->v[r->n++].val = val;
	}
	return 0;
}

/* The value of @r at @pc, or -1. */
static int32_t value_at(const struct runs *r, uint64_t pc)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].hi <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->v[lo].lo <= pc ? r->v[lo].val : -1;
}

/*
 * Files and lines.
 */

/* The builder's file for file number @fno of a function whose CU starts
 * at @cuoff in cutab (1.16+), or SYMI_NONE. */
static uint32_t file_of(struct gp *g, uint32_t cuoff, int32_t fno)
{
	uint64_t idx, soff;
	uint32_t v;
	const char *s;

	if (fno < 0)
		return SYMI_NONE;
	idx = g->ver == 12 ? (uint64_t)fno : (uint64_t)cuoff + (uint64_t)fno;
	if (idx >= g->nfmemo)
		return SYMI_NONE;
	if (g->fmemo[idx])
		return g->fmemo[idx] - 1;
	if (g->ver == 12) {
		if (fno == 0 || !rd32(g, g->files12 + 4 * idx, &v))
			return SYMI_NONE;
		s = str_at(g, 0, v);
	} else {
		if (!rd32(g, g->cu + 4 * idx, &v) || v == UINT32_MAX)
			return SYMI_NONE;
		soff = v;
		s = str_at(g, g->filetab, soff);
	}
	if (!s || !*s)
		return SYMI_NONE;
	/* Go's linker gives every compilation unit DW_AT_comp_dir ".": a
	 * relative name (<autogenerated>, -trimpath's) is spelt as the
	 * DWARF of the same binary spells it. */
	v = symi_path_intern(g->b, &(struct symi_path){ .comp_dir = ".",
							.name = s });
	if (v != SYMI_NONE)
		g->fmemo[idx] = v + 1;
	return v;
}

/* Line rows of one function from its file and line runs. */
static int add_lines(struct gp *g, uint32_t cuoff)
{
	size_t i = 0, j = 0;
	int err;

	while (i < g->file.n && j < g->line.n) {
		const struct run *f = &g->file.v[i], *l = &g->line.v[j];
		uint64_t lo = f->lo > l->lo ? f->lo : l->lo;
		uint64_t hi = f->hi < l->hi ? f->hi : l->hi;
		uint32_t file;

		if (lo < hi && l->val > 0) {
			file = file_of(g, cuoff, f->val);
			if (file != SYMI_NONE) {
				err = symi_builder_line(g->b, lo, hi, file,
							(uint32_t)l->val, 0, 0);
				if (err)
					return err;
				g->st->lines++;
			}
		}
		if (f->hi <= l->hi)
			i++;
		else
			j++;
	}
	return 0;
}

/* The function named @name. */
static uint32_t add_func(struct gp *g, const char *name)
{
	return symi_builder_func_in(g->b, &(struct symi_func_in){
		.name = name, .linkage = name, .decl_file = SYMI_NONE,
		.flags = SYMT_FUNC_PLAIN });
}

/*
 * Inline trees.
 */

struct fn {
	uint64_t entry, end;
	uint32_t cuoff;
	uint32_t scope;		/* the function's own */
	const uint8_t *tree;	/* its inline tree in the module's memory */
	size_t tree_len;	/* bytes there */
};

/* Entry @ix of @f's tree: its name and parentPc.  false when it is out of
 * the memory that holds the tree. */
static bool tree_entry(const struct gp *g, const struct fn *f, uint32_t ix,
		       const char **name, uint32_t *ppc)
{
	size_t esz = g->ver >= 120 ? 16 : 20;
	size_t no = g->ver >= 120 ? 4 : 12, po = g->ver >= 120 ? 8 : 16;
	const uint8_t *p;

	if ((size_t)ix >= f->tree_len / esz)
		return false;
	p = f->tree + (size_t)ix * esz;
	*name = str_at(g, g->ver == 12 ? 0 : g->funcname,
		       get32(g->be, p + no));
	*ppc = get32(g->be, p + po);
	return *name && **name;
}

/* Make the scope of tree entry @ix of @f, @level calls deep (and its
 * callers' first, so that a parent's scope index is below its child's).
 * Returns 0 or -ENOMEM; an entry that cannot be read keeps scope
 * SYMI_NONE. */
static int inl_scope(struct gp *g, const struct fn *f, uint32_t ix,
		     unsigned level)
{
	struct inl *e = &g->inls[ix];
	uint32_t parent = f->scope, pdepth = 0, ppc, func, file;
	const char *name;
	uint64_t pc;
	int32_t pix, line;
	int err;

	if (e->scope != SYMI_NONE || e->busy)
		return 0;
	if (!tree_entry(g, f, ix, &name, &ppc))
		return 0;
	pc = f->entry + ppc;
	if (pc < f->entry || pc >= f->end)
		return 0;
	e->busy = true;
	pix = value_at(&g->inl, pc);
	/* A chain deeper than MAX_INL_DEPTH (a crafted one: the recursion
	 * would be as deep) ends at the function. */
	if (pix >= 0 && (uint32_t)pix < g->ninls && (uint32_t)pix != ix &&
	    level < MAX_INL_DEPTH) {
		err = inl_scope(g, f, (uint32_t)pix, level + 1);
		if (err)
			return err;
		if (g->inls[pix].scope != SYMI_NONE &&
		    g->inls[pix].depth < MAX_INL_DEPTH) {
			parent = g->inls[pix].scope;
			pdepth = g->inls[pix].depth;
		}
	}
	e->busy = false;
	func = add_func(g, name);
	if (func == SYMI_NONE)
		return -ENOMEM;
	file = file_of(g, f->cuoff, value_at(&g->file, pc));
	line = value_at(&g->line, pc);
	e->scope = symi_builder_scope(g->b, parent, func, file,
				      line > 0 ? (uint32_t)line : 0, 0,
				      e->entry, 0);
	if (e->scope == SYMI_NONE)
		return -ENOMEM;
	e->depth = pdepth + 1;
	g->st->inlined++;
	return 0;
}

/* The inline scopes of @f over its pcdata[2] runs (in g->inl). */
static int add_inlines(struct gp *g, const struct fn *f)
{
	uint32_t top = 0;
	int err;

	for (size_t i = 0; i < g->inl.n; i++)
		if (g->inl.v[i].val >= 0 && (uint32_t)g->inl.v[i].val >= top)
			top = (uint32_t)g->inl.v[i].val + 1;
	if (!top)
		return 0;
	if (top > MAX_INL_INDEX)
		top = MAX_INL_INDEX;
	if (top > g->ninls_cap) {
		void *p = realloc(g->inls, top * sizeof(*g->inls));

		if (!p)
			return -ENOMEM;
		g->inls = p;
		g->ninls_cap = top;
	}
	g->ninls = top;
	for (uint32_t i = 0; i < top; i++)
		g->inls[i] = (struct inl){ .scope = SYMI_NONE,
					   .entry = UINT64_MAX };
	for (size_t i = 0; i < g->inl.n; i++) {
		const struct run *r = &g->inl.v[i];

		if (r->val >= 0 && (uint32_t)r->val < top &&
		    r->lo < g->inls[r->val].entry)
			g->inls[r->val].entry = r->lo;
	}
	for (size_t i = 0; i < g->inl.n; i++) {
		const struct run *r = &g->inl.v[i];
		struct inl *e;

		if (r->val < 0 || (uint32_t)r->val >= top)
			continue;
		err = inl_scope(g, f, (uint32_t)r->val, 0);
		if (err)
			return err;
		e = &g->inls[r->val];
		if (e->scope == SYMI_NONE)
			continue;
		err = symi_builder_scope_range(g->b, e->scope, e->depth,
					       r->lo, r->hi);
		if (err)
			return err;
	}
	return 0;
}

/* Where @f's inline tree is, from funcdata @fd (its first byte in the
 * table) with @nfd entries. */
static void find_tree(const struct gp *g, uint64_t fd, uint32_t nfd,
		      struct fn *f)
{
	uint64_t addr, v;
	size_t esz = g->ver >= 120 ? 16 : 20;

	f->tree = NULL;
	f->tree_len = 0;
	if (nfd <= FUNCDATA_INLTREE(g))
		return;
	if (g->ver >= 118) {
		if (!g->gofunc ||
		    !rd(g, fd + 4 * FUNCDATA_INLTREE(g), 4, &v) ||
		    v == UINT32_MAX)
			return;
		addr = g->gofunc + v;
	} else {
		if (!rd(g, fd + (uint64_t)g->psz * FUNCDATA_INLTREE(g), g->psz,
			&addr) || !addr)
			return;
	}
	/* The tree's length is not recorded: take what the memory holds,
	 * in whole entries, and check each index against it. */
	for (size_t i = 0; g->mem && i < g->mem->n; i++) {
		const struct symi_goseg *s = &g->mem->segs[i];

		if (addr >= s->addr && addr - s->addr < s->len) {
			f->tree = s->p + (addr - s->addr);
			f->tree_len = (s->len - (addr - s->addr)) / esz * esz;
			return;
		}
	}
}

/*
 * Functions.
 */

/* The _func record's layout: the size before pcdata, and where its
 * fields are (after the entry). */
static unsigned func_hdr(const struct gp *g)
{
	switch (g->ver) {
	case 12:
		return g->psz + 32;
	case 116:
		return g->psz + 36;
	case 118:
		return 40;
	default:
		return 44;
	}
}

/* Function @i's _func record (its offset in the table) and name, when
 * they lie inside the table and the record's entry is the table's. */
static bool func_rec(const struct gp *g, uint64_t i, uint64_t *fo,
		     const char **name)
{
	unsigned ent = g->ver >= 118 ? 4 : g->psz, hdr = func_hdr(g);
	uint64_t o = ftab_off(g, i), u;
	uint32_t nameoff;

	if (g->ver != 12 && o > g->n - g->funcdata)
		return false;
	o += g->ver == 12 ? 0 : g->funcdata;
	if (o > g->n || g->n - o < hdr || !rd32(g, o + ent, &nameoff) ||
	    !rd(g, o, ent, &u) ||
	    (g->ver >= 118 ? g->text + u : u) != ftab_pc(g, i))
		return false;
	*name = str_at(g, g->ver == 12 ? 0 : g->funcname, nameoff);
	*fo = o;
	return *name && **name;
}

static int do_func(struct gp *g, uint64_t i)
{
	uint64_t fo, fd, base, pcbase, code_end;
	uint32_t pcfile, pcln, npcdata, nfd, pcinl = 0, func;
	unsigned ent = g->ver >= 118 ? 4 : g->psz, hdr = func_hdr(g);
	struct fn f = { .cuoff = 0 };
	const char *name;
	int err;

	f.entry = ftab_pc(g, i);
	f.end = ftab_pc(g, i + 1);
	if (f.end <= f.entry || f.end - f.entry > MAX_FUNC_SIZE ||
	    !func_rec(g, i, &fo, &name))
		goto bad;
	base = fo + ent;
	if (!rd32(g, base + 16, &pcfile) || !rd32(g, base + 20, &pcln) ||
	    !rd32(g, base + 24, &npcdata) ||
	    (g->ver != 12 && !rd32(g, base + 28, &f.cuoff)))
		goto bad;
	nfd = g->d[fo + hdr - 1];
	if (npcdata > (g->n - fo - hdr) / 4)
		goto bad;
	if (npcdata > PCDATA_INLTREEINDEX &&
	    !rd32(g, fo + hdr + 4 * PCDATA_INLTREEINDEX, &pcinl))
		goto bad;
	fd = fo + hdr + 4 * (uint64_t)npcdata;
	/* Before 1.18 the pointers are aligned in memory. */
	if (g->ver < 118 && (g->addr + fd) % g->psz)
		fd += g->psz - (g->addr + fd) % g->psz;
	func = add_func(g, name);
	if (func == SYMI_NONE)
		return -ENOMEM;
	f.scope = symi_builder_scope(g->b, SYMI_NONE, func, SYMI_NONE, 0, 0,
				     f.entry, 0);
	if (f.scope == SYMI_NONE)
		return -ENOMEM;
	g->st->funcs++;
	pcbase = g->ver == 12 ? 0 : g->pctab;
	err = decode(g, pcbase, pcfile, f.entry, f.end, &g->file);
	if (!err)
		err = decode(g, pcbase, pcln, f.entry, f.end, &g->line);
	if (!err)
		err = add_lines(g, f.cuoff);
	if (err)
		return err;
	/* The next entry starts after the alignment padding; pcln ends
	 * with the code, where DWARF's high_pc does. */
	code_end = g->line.n ? g->line.v[g->line.n - 1].hi : f.end;
	err = symi_builder_scope_range(g->b, f.scope, 0, f.entry, code_end);
	if (err || !pcinl)
		return err;
	find_tree(g, fd, nfd, &f);
	if (!f.tree)
		return 0;
	err = decode(g, pcbase, pcinl, f.entry, f.end, &g->inl);
	return err ? err : add_inlines(g, &f);
bad:
	g->st->bad_funcs++;
	return 0;
}

/* Does [@entry, @end) hold an address of @only at or after *@next (which
 * moves past the addresses below @entry: the entries ascend)? */
static bool wanted(const struct symi_dwarf_only *only, size_t *next,
		   uint64_t entry, uint64_t end)
{
	while (*next < only->n && only->addrs[*next] < entry)
		(*next)++;
	return *next < only->n && only->addrs[*next] < end;
}

int symi_gopcln_read(struct symi_builder *b, const struct symi_gopcln_in *in,
		     struct symi_gopcln_stats *st)
{
	struct symi_gopcln_stats dummy;
	struct gp g = {
		.d = in->tab, .n = in->len, .addr = in->addr, .mem = in->mem,
		.b = b, .st = st ? st : &dummy,
	};
	uint64_t prev = 0;
	size_t next = 0;	/* in->only: its first address not passed */
	int err;

	memset(g.st, 0, sizeof(*g.st));
	err = parse_header(&g);
	if (err)
		return err;
	g.st->version = g.ver;
	if (g.ver >= 118 && g.text == 0)
		g.text = in->text;
	if (g.ver >= 118)
		find_gofunc(&g);
	g.st->gofunc = g.gofunc;
	g.nfmemo = g.ver == 12 ? g.nfiles : g.ncu;
	g.fmemo = symi_calloc(g.nfmemo ? g.nfmemo : 1, sizeof(*g.fmemo));
	if (!g.fmemo)
		return -ENOMEM;

	g.budget = (uint64_t)g.n * BUDGET_PER_BYTE + BUDGET_MIN;
	for (uint64_t i = 0; !err && i < g.nfunc; i++) {
		uint64_t pc = ftab_pc(&g, i);

		if (!g.budget) {
			symi_warn("gopclntab: the pc-value tables of %llu "
				  "functions would be read more than %d times "
				  "over: not read",
				  (unsigned long long)(g.nfunc - i),
				  BUDGET_PER_BYTE);
			g.st->bad_funcs += g.nfunc - i;
			break;
		}

		/* The table is sorted; an entry below its predecessor is
		 * damage, and so is everything it would claim. */
		if (pc < prev) {
			g.st->bad_funcs++;
			continue;
		}
		prev = pc;
		if (in->only && !wanted(in->only, &next, pc, ftab_pc(&g, i + 1))) {
			g.st->skipped++;
			continue;
		}
		err = do_func(&g, i);
	}
	free(g.fmemo);
	free(g.file.v);
	free(g.line.v);
	free(g.inl.v);
	free(g.inls);
	if (!err && g.st->funcs == 0 && g.st->skipped == 0)
		err = -SYM_E_BADGOPCLNTAB;
	return err;
}

/*
 * The ELF side: the segments, the table's place, .text.
 */

/* The file bytes of @e's PT_LOAD segments into @segs (caller frees). */
static int load_segs(const struct symi_elf *e, struct symi_goseg **segs,
		     size_t *n)
{
	size_t phnum, fsize = 0, cap = 0;
	const uint8_t *raw;

	*segs = NULL;
	*n = 0;
	raw = (const uint8_t *)elf_rawfile(e->elf, &fsize);
	if (!raw || elf_getphdrnum(e->elf, &phnum) < 0)
		return 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_LOAD ||
		    ph.p_filesz == 0 || ph.p_offset > fsize)
			continue;
		if (symi_grow((void **)segs, &cap, *n + 1, sizeof(**segs)))
			return -ENOMEM;
		(*segs)[*n] = (struct symi_goseg){
			.addr = ph.p_vaddr,
			.p = raw + ph.p_offset,
			.len = ph.p_filesz < fsize - ph.p_offset ?
			       ph.p_filesz : fsize - ph.p_offset,
			.writable = (ph.p_flags & PF_W) != 0,
			.exec = (ph.p_flags & PF_X) != 0,
		};
		(*n)++;
	}
	return 0;
}

/* The section named @name with file bytes, as a segment view. */
static bool section(const struct symi_elf *e, const char *name,
		    struct symi_goseg *out)
{
	size_t shstrndx, fsize = 0;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(e->elf, &fsize);
	Elf_Scn *scn = NULL;

	if (!raw || elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(s = elf_strptr(e->elf, shstrndx, sh.sh_name)) ||
		    strcmp(s, name) != 0 || sh.sh_offset > fsize)
			continue;
		*out = (struct symi_goseg){
			.addr = sh.sh_addr, .p = raw + sh.sh_offset,
			.len = sh.sh_size < fsize - sh.sh_offset ?
			       sh.sh_size : fsize - sh.sh_offset,
		};
		return true;
	}
	return false;
}

/* Does a table start at @p (@len bytes to the end of its segment, at
 * @addr)?  Its header must fit and its first function must check out. */
static bool table_at(const uint8_t *p, size_t len, uint64_t addr,
		     uint64_t text, const struct symi_gomem *mem)
{
	struct symi_gopcln_stats st = { 0 };
	struct gp g = { .d = p, .n = len, .addr = addr, .mem = mem,
			.st = &st };
	uint64_t entry, fo, u;
	unsigned ent;

	if (parse_header(&g))
		return false;
	if (g.ver >= 118 && g.text == 0)
		g.text = text;
	entry = ftab_pc(&g, 0);
	fo = ftab_off(&g, 0) + (g.ver == 12 ? 0 : g.funcdata);
	ent = g.ver >= 118 ? 4 : g.psz;
	if (!rd(&g, fo, ent, &u) || (g.ver >= 118 ? g.text + u : u) != entry ||
	    ftab_pc(&g, g.nfunc) <= entry)
		return false;
	for (size_t i = 0; i < mem->n; i++)
		if (mem->segs[i].exec && entry >= mem->segs[i].addr &&
		    entry - mem->segs[i].addr < mem->segs[i].len)
			return true;
	return false;
}

/* A table found by its magic in a segment that is not code. */
static bool find_by_magic(const struct symi_gomem *mem, uint64_t text,
			  struct symi_goseg *out)
{
	for (size_t i = 0; i < mem->n; i++) {
		const struct symi_goseg *s = &mem->segs[i];

		if (s->exec || s->len < 16)
			continue;
		for (size_t o = 0; o <= s->len - 16; o += 4) {
			const uint8_t *p = s->p + o;

			/* ff ff ff f? (either order), 0 0 quantum ptrsize */
			if (p[4] || p[5] || !((p[0] == 0xff && p[3] >= 0xf0 &&
					       p[1] == 0xff && p[2] == 0xff) ||
					      (p[0] >= 0xf0 && p[1] == 0xff &&
					       p[2] == 0xff && p[3] == 0xff)))
				continue;
			if (table_at(p, s->len - o, s->addr + o, text, mem)) {
				*out = (struct symi_goseg){
					.addr = s->addr + o, .p = p,
					.len = s->len - o };
				return true;
			}
		}
	}
	return false;
}

/* Where Go's text starts when a 1.18+ header leaves textStart to a
 * relocation: .text, else the first executable segment. */
static uint64_t text_addr(const struct symi_elf *e,
			  const struct symi_gomem *mem)
{
	struct symi_goseg s;

	if (section(e, ".text", &s))
		return s.addr;
	for (size_t i = 0; i < mem->n; i++)
		if (mem->segs[i].exec)
			return mem->segs[i].addr;
	return 0;
}

/* Where @e's table is, into @in, with the file bytes of @e's segments
 * in @mem (free mem->segs).  -SYM_E_NOTFOUND when there is none. */
static int locate(const struct symi_elf *e, struct symi_gomem *mem,
		  struct symi_gopcln_in *in)
{
	struct symi_goseg *segs = NULL, tab;
	size_t n = 0;
	int err;

	*mem = (struct symi_gomem){ 0 };
	if (!e->elf)
		return -SYM_E_NOTFOUND;
	err = load_segs(e, &segs, &n);
	if (err)
		return err;
	*mem = (struct symi_gomem){ .segs = segs, .n = n };
	*in = (struct symi_gopcln_in){ .mem = mem, .text = text_addr(e, mem) };
	if (!section(e, ".gopclntab", &tab) &&
	    !section(e, ".data.rel.ro.gopclntab", &tab) &&
	    !find_by_magic(mem, in->text, &tab))
		return -SYM_E_NOTFOUND;
	in->tab = tab.p;
	in->len = tab.len;
	in->addr = tab.addr;
	return 0;
}

int symi_gopcln_elf(struct symi_builder *b, const struct symi_elf *e,
		    const struct symi_dwarf_only *only,
		    struct symi_gopcln_stats *st)
{
	struct symi_gomem mem;
	struct symi_gopcln_in in;
	int err;

	err = locate(e, &mem, &in);
	in.only = only;
	if (!err)
		err = symi_gopcln_read(b, &in, st);
	free((void *)mem.segs);
	return err;
}

/*
 * For unwinders: sym_gofuncs_open_mem(), sym_gofuncs_find() (sym.h).
 * The header read as for the builder, over a copy of the table, and per
 * lookup one function's record and its pcsp table, which is what the Go
 * runtime's funcspdelta() reads.
 */

struct sym_gofuncs {
	struct gp g;		/* the header; g.d is owned (free) */
};

/* Special functions by name.  The runtime tells them by funcID, which the
 * linker assigns by these same names (cmd/internal/objabi/funcid.go), but
 * whose numbers changed between versions; the names did not. */
static const char *const injected[] = {
	"runtime.asyncPreempt", "runtime.sigpanic", "runtime.debugCallV1",
	"runtime.debugCallV2",
};
static const char *const sigreturn[] = {
	"runtime.sigreturn", "runtime.sigreturn__sigaction",
};
/* Go before 1.17 has no TOPFRAME flag: its traceback's topofstack(). */
static const char *const topframe[] = {
	"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
};
#define FUNCFLAG_TOPFRAME 1
#define FUNCFLAG_SPWRITE 2

static bool name_in(const char *name, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, v[i]) == 0)
			return true;
	return false;
}

int symi_gofuncs_new(const struct symi_gopcln_in *in,
		     struct sym_gofuncs **out)
{
	struct sym_gofuncs *t;
	uint8_t *copy;
	int err;

	*out = NULL;
	t = symi_calloc(1, sizeof(*t));
	copy = symi_malloc(in->len ? in->len : 1);
	if (!t || !copy) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(copy, in->tab, in->len);
	t->g = (struct gp){ .d = copy, .n = in->len, .addr = in->addr };
	err = parse_header(&t->g);
	if (err)
		goto fail;
	if (t->g.ver >= 118 && t->g.text == 0)
		t->g.text = in->text;
	*out = t;
	return 0;
fail:
	free(copy);
	free(t);
	return err;
}

int sym_gofuncs_open_mem(const void *buf, size_t len,
			 struct sym_gofuncs **out)
{
	struct symi_elf e;
	struct symi_gomem mem = { 0 };
	struct symi_gopcln_in in;
	int err;

	if (!buf || !out)
		return -EINVAL;
	*out = NULL;
	err = symi_elf_open_mem(buf, len, &e);
	if (err)
		return err;
	err = locate(&e, &mem, &in);
	if (!err)
		err = symi_gofuncs_new(&in, out);
	free((void *)mem.segs);
	symi_elf_close(&e);
	return err;
}

void sym_gofuncs_close(struct sym_gofuncs *t)
{
	if (!t)
		return;
	free((void *)t->g.d);
	free(t);
}

/* The value at @pc of the pc-value table at @off of the function that
 * starts at @entry; false when the table breaks off before @pc. */
static bool pcvalue(const struct gp *g, uint32_t off, uint64_t entry,
		    uint64_t pc, int32_t *out)
{
	size_t base = g->ver == 12 ? 0 : g->pctab;
	const uint8_t *p, *stop = g->d + g->n;
	uint64_t at = entry;
	int32_t val = -1, vd;
	uint32_t pcd;

	if (!off || off > g->n - base)
		return false;
	p = g->d + base + off;
	/* Each pair takes two bytes at least: this ends. */
	while (pair(&p, stop, at == entry, &vd, &pcd)) {
		val = (int32_t)((uint32_t)val + (uint32_t)vd);
		at += (uint64_t)pcd * g->quantum;
		if (pc < at) {
			*out = val;
			return true;
		}
	}
	return false;
}

/* The function table entry whose function covers @addr, or nfunc. */
static uint64_t ftab_find(const struct gp *g, uint64_t addr)
{
	uint64_t lo = 0, hi = g->nfunc;

	if (addr < ftab_pc(g, 0) || addr >= ftab_pc(g, g->nfunc))
		return g->nfunc;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ftab_pc(g, mid) <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int sym_gofuncs_find(const struct sym_gofuncs *t, uint64_t addr,
		     struct sym_gofunc *out)
{
	const struct gp *g;
	unsigned ent, fid;
	uint64_t i, fo;
	uint32_t pcsp;
	const char *name;
	int32_t sp;
	uint8_t flag = 0;

	if (!t || !out)
		return -EINVAL;
	g = &t->g;
	i = ftab_find(g, addr);
	if (i == g->nfunc)
		return -SYM_E_NOTFOUND;
	ent = g->ver >= 118 ? 4 : g->psz;
	*out = (struct sym_gofunc){ .entry = ftab_pc(g, i),
				    .end = ftab_pc(g, i + 1) };
	if (out->end <= out->entry || out->end - out->entry > MAX_FUNC_SIZE ||
	    !func_rec(g, i, &fo, &name) || !rd32(g, fo + ent + 12, &pcsp) ||
	    !pcvalue(g, pcsp, out->entry, addr, &sp))
		return -SYM_E_BADGOPCLNTAB;
	out->sp_delta = sp;
	/* funcID, then (1.17 and later) flag; func_rec() checked that the
	 * record's fixed part fits. */
	fid = ent + (g->ver == 12 ? 28 : g->ver == 120 ? 36 : 32);
	if (g->ver != 12)
		flag = g->d[fo + fid + 1];
	/* The entry code of rt0_<arch>_<os>.s, which the kernel jumps to
	 * and which jumps on to rt0_go: nothing calls it.  Not the _lib
	 * variants, which a C runtime calls (c-archive, c-shared). */
	if (flag & FUNCFLAG_TOPFRAME ||
	    (g->ver <= 116 && name_in(name, topframe,
				       sizeof(topframe) / sizeof(*topframe))) ||
	    (strncmp(name, "_rt0_", 5) == 0 && !strstr(name, "_lib")))
		out->flags |= SYM_GOFUNC_TOPFRAME;
	if (flag & FUNCFLAG_SPWRITE)
		out->flags |= SYM_GOFUNC_SPWRITE;
	if (name_in(name, injected, sizeof(injected) / sizeof(*injected)))
		out->flags |= SYM_GOFUNC_INJECTED;
	if (name_in(name, sigreturn, sizeof(sigreturn) / sizeof(*sigreturn)))
		out->flags |= SYM_GOFUNC_SIGRETURN;
	return 0;
}
