/*
 * dwarf.c - the one-pass DWARF walk that feeds the table builder.
 *
 * For each compilation unit (dwarf_get_units(); split units are reached
 * through their skeleton, dwz partial units through the references into
 * them), the walk does two things and nothing per address:
 *
 *  - the line program (dwarf_getsrclines()) becomes row ranges
 *    [addr, next addr).  Where several rows share an address the last one
 *    wins, as in llvm-symbolizer.
 *  - the DIE tree is walked once, depth first.  Each subprogram with code
 *    becomes a root scope, each DW_TAG_inlined_subroutine a child scope
 *    with its call site (DW_AT_call_file/line/column); lexical blocks are
 *    walked through.  Every DW_AT_low_pc/high_pc or DW_AT_ranges range of
 *    a scope is added with its nesting depth.
 *
 * Function names come from the DIE or its abstract origin/specification
 * (dwarf_attr_integrate() follows those, across CUs and into the dwz alt
 * file), and are resolved once per origin DIE: a small hash map keyed by
 * the DIE's address in the mapped section caches the function index.
 * Two more facts per function are what the peers' names need: whether
 * the CU's language mangles names (bfd takes a C function's DW_AT_name as
 * its linkage name, a C++ one's not), and the subprogram whose DIE holds
 * the function's definition (a lambda's operator() is defined in the
 * function that holds the lambda; eu-addr2line names an inlined
 * innermost frame after it).  The latter is found by DIE offset: the
 * walk notes the offsets each top-level subprogram's subtree spans, and
 * at the end of the CU each function whose origin lies inside one gets
 * that subprogram's name (set_outer()).  Only the outermost level is
 * known: a lambda inside a lambda is held by the enclosing function.
 *
 * The lazy path (sym_module_table_for()) walks only the CUs that can
 * answer a given set of addresses, with the same code: pick_units()
 * reads each unit's header and top DIE (DW_AT_ranges, DW_AT_low_pc/
 * high_pc) and keeps a unit when one of its ranges holds an address.
 * The per-CU walk is the same, so a picked CU gives the builder the same
 * rows and scopes as in the full walk, and an address is answered from
 * every CU that covers it, as in the full table.  That holds only if a
 * unit's ranges cover all its code, so they are trusted only where
 * .debug_aranges (when the file has one) says the same of the unit;
 * a unit whose aranges are missing or differ, or whose ranges cannot be
 * read or are absent, is always walked.  .debug_aranges alone is not
 * the index: a unit built by clang has none, and a corrupt or stale set
 * names the wrong unit or range, which only the unit's own ranges can
 * show, and reading them needs .debug_info whole anyway.  Within a
 * picked unit, the walk is narrow: a function whose code holds none of
 * the addresses is only scanned (cold_function()), and the builder keeps
 * only the rows and symbols that answer (symi_builder_only()).  Scope
 * ranges are clipped to their unit's ranges, as rows are, so that the
 * unit index finds every unit that answers an address.
 *
 * Limits: DIE nesting deeper than MAX_DEPTH is not descended (hostile
 * input); a CU whose line table or DIEs cannot be read is logged and
 * skipped.
 */
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "internal.h"
#include "base.h"

#define MAX_DEPTH 256

/* A map from an address (of a DIE, of a Dwarf_CU) to a 32-bit value:
 * open addressing, at most half full. */
struct pmap {
	struct pent {
		const void *key;	/* NULL: empty */
		uint32_t val;
	} *v;
	size_t n, cap;
};

static uint64_t ptr_hash(const void *p)
{
	uint64_t x = (uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* The entry of @key in @m: its own, or the empty one to fill (then
 * increment m->n), after growing @m to room for one more (the first
 * time to @first slots, a power of two).  NULL on -ENOMEM. */
static struct pent *pmap_slot(struct pmap *m, const void *key, size_t first)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : first;
		struct pent *nv = symi_calloc_huge(ncap, sizeof(*nv));

		if (!nv)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->v[i].key)
				continue;
			j = ptr_hash(m->v[i].key) & (ncap - 1);
			while (nv[j].key)
				j = (j + 1) & (ncap - 1);
			nv[j] = m->v[i];
		}
		free(m->v);
		m->v = nv;
		m->cap = ncap;
	}
	j = ptr_hash(key) & (m->cap - 1);
	while (m->v[j].key && m->v[j].key != key)
		j = (j + 1) & (m->cap - 1);
	return &m->v[j];
}

/* A unit's file table: file index -> builder file (SYMI_NONE: none). */
struct ufiles {
	uint32_t *fid;		/* free() */
	size_t n;
};

/* The file tables of units other than the one walked, for declarations
 * there (LTO, dwz partial units, split units): Dwarf_CU -> its index. */
struct ucache {
	struct pmap map;
	struct ufiles *v;	/* free() each fid */
	size_t n, cap;
};

struct walk {
	struct symi_builder *b;
	Dwarf *dw;		/* the debug file's (not the alt file's) */
	/* The current CU's address ranges, sorted. */
	struct symi_span *cur;
	size_t ncur, cur_cap;
	const char *path;
	struct pmap fc;		/* DIE address -> function index */
	/* .debug_line and its string sections, for lines.c; line.data is
	 * NULL when libdw must read the line tables instead. */
	struct symi_lines_in lin;
	/* The file table of the unit being walked (own_cu): its line
	 * rows', call sites' and declarations' files. */
	struct ufiles own;
	const void *own_cu;
	Dwarf_CU *cu;		/* the CU being walked */
	struct ucache uc;
	/* The explicit DFS stack; end is the offset where the parent's
	 * subtree ends (the next DIE after it), UINT64_MAX when unknown. */
	struct frame {
		Dwarf_Die die;
		uint32_t scope;
		uint32_t depth;
		uint64_t end;
	} *stack;
	size_t sp, stack_cap;
	unsigned long cu_errors;
	uint32_t func_flags;	/* the current CU's enum symt_func_flags */
	/* The lazy path's narrow walk (cold_function()): the top-level
	 * subprogram whose subtree is being scanned (COLD frames), where
	 * its subtree ends, the stack depth below its children's frames,
	 * and the alias state from before it, to walk it after all. */
	bool narrow, nests;
	struct cold {
		Dwarf_Die die;
		uint64_t end;
		size_t sp;
		uint64_t alias_lo, alias_hi;
		Dwarf_Die alias_die;
		bool alias_set;
	} cold;
	/* Top-level subprograms of the current CU and the DIE offsets
	 * their subtrees span, [lo, hi), ascending; and the functions
	 * made from origins of this CU, to be given their outer. */
	struct held {
		uint64_t lo, hi;
		Dwarf_Die die;
	} *held;
	size_t nheld, held_cap;
	struct pending {
		uint64_t off;
		uint32_t func;
	} *pend;
	size_t npend, pend_cap;
	/* The last top-level subprogram with code, [alias_lo, alias_hi),
	 * the first of those with that range: alias_die, whose name is
	 * read only when a later one has the same range (eu_alias()); eu
	 * is that name while the later one is added. */
	uint64_t alias_lo, alias_hi;
	Dwarf_Die alias_die;
	bool alias_set;
	const char *eu;
};

/*
 * The files of a unit libdw read (the fallback reader, the dwz alt
 * file's units, split units), spelled as path.c spells them.  libdw
 * joins a relative name to its directory entry (before DWARF 5, entry 0
 * is DW_AT_comp_dir) but not to the compilation directory, and does not
 * say which entry a file used: it is taken to be the longest entry the
 * name starts with, followed by '/'.  That gives the same whole path as
 * lines.c in every case; only the relative path (--relativenames) can
 * differ, where one entry is a prefix of another and the name a
 * directory deeper, or a name is absolute and starts with an entry.
 * Returns 0 or -ENOMEM.
 */
static int libdw_files(struct walk *w, Dwarf_Files *files, size_t n,
		       unsigned version, const char *comp_dir,
		       struct ufiles *out)
{
	const char *const *dirs = NULL;
	size_t ndirs = 0;
	uint32_t *v;

	out->fid = NULL;
	out->n = 0;
	if (dwarf_getsrcdirs(files, &dirs, &ndirs) != 0)
		ndirs = 0;
	v = symi_calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *name = dwarf_filesrc(files, i, NULL, NULL);
		struct symi_path f = { .comp_dir = comp_dir, .name = name,
				       .dir_rel = true };
		size_t best = 0, blen = 0;

		v[i] = SYMI_NONE;
		if (!name)
			continue;
		if (version < 5 && i == 0) {
			/* libdw's (and lines.c's) name for the file 0 that
			 * does not exist before DWARF 5. */
			v[i] = symi_builder_file(w->b, name, 0);
			goto check;
		}
		for (size_t k = 0; k < ndirs; k++) {
			size_t l = dirs[k] ? strlen(dirs[k]) : 0;

			if (l && l >= blen && strncmp(name, dirs[k], l) == 0 &&
			    name[l] == '/' && name[l + 1]) {
				best = k;
				blen = l;
			}
		}
		if (blen) {
			f.name = name + blen + 1;
			if (version >= 5) {
				f.dir = dirs[best];
				f.dir_rel = best != 0;
			} else if (best != 0) {
				f.dir = dirs[best];
			}
		}
		v[i] = symi_path_intern(w->b, &f);
check:
		if (v[i] == SYMI_NONE) {
			free(v);
			return -ENOMEM;
		}
	}
	out->fid = v;
	out->n = n;
	return 0;
}

static const char *attr_str(Dwarf_Die *die, unsigned int name);

/* The file table of @cu (its unit DIE @cudie, DW_AT_comp_dir @comp_dir
 * when it has none of its own) into @out: lines.c reads the header when
 * the unit is the debug file's, else libdw.  No table: out->n is 0.
 * Returns 0 or -ENOMEM. */
static int unit_files(struct walk *w, Dwarf_CU *cu, Dwarf_Die *cudie,
		      const char *comp_dir, struct ufiles *out)
{
	struct symi_lines_out lo;
	struct symi_lines_in in;
	Dwarf_Attribute a;
	Dwarf_Word off;
	Dwarf_Files *files;
	Dwarf_Half version = 0;
	uint8_t asz = 0;
	size_t n;
	int err;

	out->fid = NULL;
	out->n = 0;
	if (dwarf_cu_die(cu, &(Dwarf_Die){ 0 }, &version, NULL, &asz, NULL,
			 NULL, NULL) == NULL)
		return 0;
	comp_dir = attr_str(cudie, DW_AT_comp_dir) ?: comp_dir;
	if (w->lin.line.data && dwarf_cu_getdwarf(cu) == w->dw &&
	    dwarf_attr(cudie, DW_AT_stmt_list, &a) &&
	    dwarf_formudata(&a, &off) == 0) {
		in = w->lin;
		in.off = off;
		in.addr_size = asz;
		in.comp_dir = comp_dir;
		in.files_only = true;
		err = symi_lines_read(w->b, &in, &lo);
		if (err != -SYM_E_BADDWARF) {
			out->fid = lo.files;
			out->n = lo.nfiles;
			return err;
		}
	}
	if (dwarf_getsrcfiles(cudie, &files, &n) != 0)
		return 0;
	return libdw_files(w, files, n, version, comp_dir, out);
}

/* The builder file of file @idx of the unit @cu (from a DW_AT_decl_file
 * there); SYMI_NONE when there is none.  Units other than the walked one
 * are read once (w->uc).  Returns SYMI_NONE with -ENOMEM recorded in the
 * builder when out of memory. */
static uint32_t unit_file(struct walk *w, Dwarf_CU *cu, Dwarf_Word idx)
{
	struct ucache *c = &w->uc;
	struct pent *e;
	Dwarf_Die cudie;
	struct ufiles f;

	if (cu == w->own_cu)
		return idx < w->own.n ? w->own.fid[idx] : SYMI_NONE;
	e = pmap_slot(&c->map, cu, 64);
	if (!e)
		return symi_builder_oom(w->b);
	if (!e->key) {
		if (!dwarf_cu_die(cu, &cudie, NULL, NULL, NULL, NULL, NULL,
				  NULL) ||
		    unit_files(w, cu, &cudie, NULL, &f))
			return symi_builder_oom(w->b);
		if (symi_grow((void **)&c->v, &c->cap, c->n + 1,
			      sizeof(*c->v))) {
			free(f.fid);
			return symi_builder_oom(w->b);
		}
		c->v[c->n] = f;
		e->key = cu;
		e->val = (uint32_t)c->n++;
		c->map.n++;
	}
	f = c->v[e->val];
	return idx < f.n ? f.fid[idx] : SYMI_NONE;
}

static void ucache_release(struct ucache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].fid);
	free(c->v);
	free(c->map.v);
}

static void section(Elf *elf, size_t shstrndx, const char *want,
		    struct symi_sec *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, want) != 0)
			continue;
		/* Still compressed (libdw failed on it too): no fast path. */
		if (sh.sh_flags & SHF_COMPRESSED)
			return;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf) {
			out->data = d->d_buf;
			out->size = d->d_size;
		}
		return;
	}
}

/* Find the sections lines.c reads; leave lin.line.data NULL if it can't. */
static void lines_setup(struct walk *w, struct symi_elf *e)
{
	const char *force = getenv("SYM_LINES");
	size_t shstrndx;

	memset(&w->lin, 0, sizeof(w->lin));
	/* SYM_LINES=libdw forces libdw's reader, to compare the two. */
	if ((force && strcmp(force, "libdw") == 0) ||
	    e->ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return;
	section(e->elf, shstrndx, ".debug_line", &w->lin.line);
	section(e->elf, shstrndx, ".debug_line_str", &w->lin.line_str);
	section(e->elf, shstrndx, ".debug_str", &w->lin.str);
}

static int cu_ranges(struct walk *w, Dwarf_Die *cudie);
static int do_lines(struct walk *w, Dwarf_CU *cu, Dwarf_Die *cudie);

/*
 * Read the CU's line program with lines.c.  Returns 0 (w->own set),
 * -SYM_E_BADDWARF to fall back to libdw, or -ENOMEM.  With @partial, a
 * program cut short keeps the rows before the damage (after libdw
 * failed on it too).
 */
static int fast_lines(struct walk *w, Dwarf_CU *cu, Dwarf_Die *cudie,
		      bool partial)
{
	struct symi_lines_out out;
	Dwarf_Attribute a;
	Dwarf_Word off;
	uint8_t asz = 0;
	int err;

	if (!w->lin.line.data ||
	    !dwarf_attr(cudie, DW_AT_stmt_list, &a) ||
	    dwarf_formudata(&a, &off) != 0 ||
	    dwarf_cu_info(cu, NULL, NULL, NULL, NULL, NULL, &asz, NULL) != 0)
		return -SYM_E_BADDWARF;
	err = cu_ranges(w, cudie);
	if (err)
		return err;
	w->lin.ranges = w->cur;
	w->lin.nranges = w->ncur;
	w->lin.off = off;
	w->lin.addr_size = asz;
	w->lin.comp_dir = attr_str(cudie, DW_AT_comp_dir);
	w->lin.files_only = false;
	w->lin.keep_partial = partial;
	err = symi_lines_read(w->b, &w->lin, &out);
	if (err)
		return err;
	w->own.fid = out.files;
	w->own.n = out.nfiles;
	return 0;
}

/*
 * lines.c could not read the CU's program (its header, or the program to
 * its end): libdw reads it.  When libdw cannot either (do_lines() warned
 * and counted it), lines.c reads it again keeping the rows before the
 * damage, so the answers up to there stay; a header it cannot read
 * leaves the CU without rows, as libdw did.
 */
static int lines_fallback(struct walk *w, Dwarf_CU *cu, Dwarf_Die *cudie)
{
	unsigned long errors = w->cu_errors;
	int err = do_lines(w, cu, cudie);

	if (err || w->cu_errors == errors)
		return err;
	err = fast_lines(w, cu, cudie, true);
	if (!err)
		symi_warn("dwarf: kept the line rows before the damage in CU at 0x%llx of '%s'",
			  (unsigned long long)dwarf_dieoffset(cudie), w->path);
	return err == -SYM_E_BADDWARF ? 0 : err;
}

/* The CU's address ranges, sorted, into w->cur. */
static int cu_ranges(struct walk *w, Dwarf_Die *cudie)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	w->ncur = 0;
	while ((off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (symi_grow((void **)&w->cur, &w->cur_cap, w->ncur + 1,
			      sizeof(*w->cur)))
			return -ENOMEM;
		w->cur[w->ncur].lo = lo;
		w->cur[w->ncur].hi = hi;
		w->ncur++;
	}
	symi_span_sort(w->cur, w->ncur);
	return 0;
}

/*
 * Clip the row range [a, *na) to the CU range holding @a.  libdw sorts
 * the rows of all sequences of a CU by address and drops the sequence
 * boundaries, so a zero-length row at the end of one sequence (say a
 * .cold part) would otherwise reach to the next sequence, megabytes
 * away.  Returns false when the CU has ranges and none holds @a.
 */
static bool clip(const struct walk *w, Dwarf_Addr a, Dwarf_Addr *na)
{
	long i;

	if (!w->ncur)
		return true;
	i = symi_span_find(w->cur, w->ncur, a);
	if (i < 0)
		return false;
	if (*na > w->cur[i].hi)
		*na = w->cur[i].hi;
	return true;
}

/* Read the CU's line program with libdw (lines.c did not understand its
 * header); its files into w->own. */
static int do_lines(struct walk *w, Dwarf_CU *cu, Dwarf_Die *cudie)
{
	Dwarf_Files *cf = NULL;
	Dwarf_Lines *lines;
	Dwarf_Half version = 0;
	size_t n, nf = 0;
	int err;

	if (dwarf_getsrclines(cudie, &lines, &n) != 0) {
		/* A CU without DW_AT_stmt_list is normal. */
		if (dwarf_hasattr(cudie, DW_AT_stmt_list)) {
			symi_warn("dwarf: cannot read line table of CU at 0x%llx in '%s': %s",
				  (unsigned long long)dwarf_dieoffset(cudie),
				  w->path, dwarf_errmsg(-1));
			w->cu_errors++;
		}
		return 0;
	}
	if (dwarf_getsrcfiles(cudie, &cf, &nf) == 0 &&
	    dwarf_cu_info(cu, &version, NULL, NULL, NULL, NULL, NULL,
			  NULL) == 0) {
		err = libdw_files(w, cf, nf, version,
				  attr_str(cudie, DW_AT_comp_dir), &w->own);
		if (err)
			return err;
	}
	err = cu_ranges(w, cudie);
	if (err)
		return err;
	for (size_t i = 0; i + 1 < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Line *nx = dwarf_onesrcline(lines, i + 1);
		Dwarf_Addr a, na;
		Dwarf_Files *files;
		size_t idx;
		bool end;
		int line = 0, col = 0;
		unsigned int disc = 0;
		uint32_t file = SYMI_NONE;

		if (!l || !nx || dwarf_lineendsequence(l, &end) || end ||
		    dwarf_lineaddr(l, &a) || dwarf_lineaddr(nx, &na) ||
		    na <= a || !clip(w, a, &na))
			continue;
		dwarf_lineno(l, &line);
		dwarf_linecol(l, &col);
		dwarf_linediscriminator(l, &disc);
		if (dwarf_line_file(l, &files, &idx) == 0 && files == cf &&
		    idx < w->own.n)
			file = w->own.fid[idx];
		err = symi_builder_line(w->b, a, na, file,
					line > 0 ? (uint32_t)line : 0,
					col > 0 ? (uint32_t)col : 0, disc);
		if (err)
			return err;
	}
	return 0;
}

static const char *attr_str(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;

	if (!dwarf_attr_integrate(die, name, &a))
		return NULL;
	return dwarf_formstring(&a);
}

/*
 * The declaration file of @die, in the file table of the unit that holds
 * the attribute (dwarf_attr_integrate() may find it in an origin in
 * another CU, a dwz partial unit or the alt file).  *@flags gets
 * SYMT_FUNC_DECL_CONST when the attribute is a DW_FORM_implicit_const,
 * which llvm-symbolizer 14 does not take for a file index: its JSON
 * "StartFileName" is then "" (gcc 12 gives the member functions
 * declared in a class that way, e.g. in <bits/stl_vector.h>).
 */
static uint32_t decl_file_of(struct walk *w, Dwarf_Die *die,
			     uint32_t *flags)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;

	if (!dwarf_attr_integrate(die, DW_AT_decl_file, &a) ||
	    dwarf_formudata(&a, &idx) != 0)
		return SYMI_NONE;
	if (a.form == DW_FORM_implicit_const)
		*flags |= SYMT_FUNC_DECL_CONST;
	return unit_file(w, a.cu, idx);
}

static const char *die_name(Dwarf_Die *die);

/* The function index of a subprogram or inlined instance @die. */
static uint32_t func_of(struct walk *w, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die origin = *die, tmp;
	struct symi_func_in fin = { 0 };
	const char *name, *linkage;
	uint32_t decl_file;
	int decl_line = 0;
	struct pent *e;
	uint32_t f;

	/*
	 * Key on the outermost origin so all instances share one entry,
	 * unless the DIE names itself: a concrete out-of-line copy may carry
	 * its own DW_AT_linkage_name while its abstract origin has none.
	 * The names are then read from the DIE first, then its origins
	 * (dwarf_attr_integrate()), as eu-addr2line does.
	 */
	if (!dwarf_hasattr(die, DW_AT_name) &&
	    !dwarf_hasattr(die, DW_AT_linkage_name) &&
	    !dwarf_hasattr(die, DW_AT_MIPS_linkage_name)) {
		for (int i = 0; i < 8; i++) {
			if (!dwarf_attr(&origin, DW_AT_abstract_origin, &a) ||
			    !dwarf_formref_die(&a, &tmp))
				break;
			origin = tmp;
		}
	}
	e = pmap_slot(&w->fc, origin.addr, 4096);
	if (!e)
		return SYMI_NONE;
	if (e->key)
		return e->val;
	name = attr_str(&origin, DW_AT_name);
	linkage = attr_str(&origin, DW_AT_linkage_name);
	if (!linkage)
		linkage = attr_str(&origin, DW_AT_MIPS_linkage_name);
	fin.flags = w->func_flags;
	decl_file = decl_file_of(w, &origin, &fin.flags);
	if (dwarf_decl_line(&origin, &decl_line) != 0 || decl_line < 0)
		decl_line = 0;
	fin.name = name;
	fin.linkage = linkage;
	fin.decl_file = decl_file;
	fin.decl_line = (uint32_t)decl_line;
	/* Its outer comes at the end of the CU (set_outer()); a function
	 * without a linkage name in a language that mangles (a lambda's
	 * operator()) is not merged with another that may get another. */
	fin.unique = origin.cu == w->cu && !linkage &&
		     !(w->func_flags & SYMT_FUNC_PLAIN);
	if (w->eu && origin.addr == die->addr && die_name(die) &&
	    strcmp(w->eu, die_name(die)) != 0)
		fin.eu = w->eu;
	f = symi_builder_func_in(w->b, &fin);
	if (f == SYMI_NONE)
		return SYMI_NONE;
	/* decl_file_of() left w->fc alone: e still points at the slot. */
	e->key = origin.addr;
	e->val = f;
	w->fc.n++;
	/* An origin in this CU may be held by a subprogram: see
	 * set_outer(). */
	if (origin.cu == w->cu) {
		if (symi_grow((void **)&w->pend, &w->pend_cap, w->npend + 1,
			      sizeof(*w->pend)))
			return SYMI_NONE;
		w->pend[w->npend].off = dwarf_dieoffset(&origin);
		w->pend[w->npend++].func = f;
	}
	return f;
}

/* The name eu-addr2line's get_diename() gives @die. */
static const char *die_name(Dwarf_Die *die)
{
	const char *s = attr_str(die, DW_AT_MIPS_linkage_name);

	if (!s)
		s = attr_str(die, DW_AT_linkage_name);
	return s ? s : dwarf_diename(die);
}

/*
 * At the end of a CU: each function made from an origin DIE of it that
 * lies inside a top-level subprogram's subtree (not the subprogram
 * itself) is held by that subprogram.  Both lists are in offset order
 * except where origins were met out of order, so this sorts the pending
 * list first.  Returns 0 or -ENOMEM.
 */
static int pend_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int set_outer(struct walk *w)
{
	size_t h = 0;
	int err = 0;

	if (w->npend > 1)
		qsort(w->pend, w->npend, sizeof(*w->pend), pend_cmp);
	for (size_t i = 0; i < w->npend && !err; i++) {
		uint64_t off = w->pend[i].off;

		while (h < w->nheld && w->held[h].hi <= off)
			h++;
		if (h == w->nheld)
			break;
		if (w->held[h].lo < off)
			err = symi_builder_func_outer(w->b, w->pend[i].func,
						      die_name(&w->held[h].die));
	}
	w->npend = 0;
	w->nheld = 0;
	return err;
}

/* Note that the top-level subprogram @die spans offsets up to @end. */
static int hold(struct walk *w, Dwarf_Die *die, uint64_t end)
{
	uint64_t lo = dwarf_dieoffset(die);

	if (end <= lo)
		return 0;
	if (symi_grow((void **)&w->held, &w->held_cap, w->nheld + 1,
		      sizeof(*w->held)))
		return -ENOMEM;
	w->held[w->nheld].lo = lo;
	w->held[w->nheld].hi = end;
	w->held[w->nheld++].die = *die;
	return 0;
}

/*
 * gas 2.40 writes a DW_TAG_subprogram per alias of an assembler function
 * (libc's dup: __dup, __GI___dup, dup, __GI_dup), each with the same
 * low_pc and high_pc, one after the other.  libdw's dwarf_getscopes()
 * takes the first DIE that holds an address, so eu-addr2line prints the
 * first's name; GNU addr2line takes the last, as the scope sweep does.
 * For the top-level subprogram @die with code, its DW_AT_low_pc and
 * DW_AT_high_pc [@lo, @hi) when @has_pc, set w->eu to the first's name
 * when @die has the range of the ones before it (struct symt_func's eu).
 * The first's name is read only then: reading every subprogram's name
 * cost 4% of a C program's build.
 */
static void eu_alias(struct walk *w, Dwarf_Die *die, bool has_pc,
		     Dwarf_Addr lo, Dwarf_Addr hi)
{
	w->eu = NULL;
	if (!has_pc || hi <= lo)
		return;
	if (w->alias_set && lo == w->alias_lo && hi == w->alias_hi) {
		w->eu = die_name(&w->alias_die);
		if (w->eu)
			return;
	}
	w->alias_lo = lo;
	w->alias_hi = hi;
	w->alias_die = *die;
	w->alias_set = true;
}

/* The CU's DW_AT_language into *@lang; false when it has none. */
static bool cu_language(Dwarf_Die *cudie, Dwarf_Word *lang)
{
	Dwarf_Attribute a;

	return dwarf_attr(cudie, DW_AT_language, &a) &&
	       dwarf_formudata(&a, lang) == 0;
}

/* enum symt_func_flags from the CU's DW_AT_language: the languages whose
 * DW_AT_name bfd takes as the linkage name (binutils' non_mangled()). */
static uint32_t lang_flags(Dwarf_Die *cudie)
{
	Dwarf_Word lang;

	if (!cu_language(cudie, &lang))
		return 0;
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_Ada83:
	case DW_LANG_Cobol74:
	case DW_LANG_Cobol85:
	case DW_LANG_Fortran77:
	case DW_LANG_Pascal83:
	case DW_LANG_C99:
	case DW_LANG_Ada95:
	case DW_LANG_PLI:
	case DW_LANG_UPC:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return SYMT_FUNC_PLAIN;
	default:
		return 0;
	}
}

static uint32_t udata(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &v) != 0)
		return 0;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/*
 * Add the scope range [@lo, @hi) of @s within the CU's ranges (w->cur;
 * all of it when the CU has none), as the rows are (clip()): the peers
 * look for an address's scopes in the unit whose ranges hold it, and the
 * lazy path's unit index (pick_units()) can only find units so.
 */
static int scope_range(struct walk *w, uint32_t s, uint32_t depth,
		       uint64_t lo, uint64_t hi)
{
	size_t l = 0, r = w->ncur;
	int err = 0;

	if (!w->ncur)
		return symi_builder_scope_range(w->b, s, depth, lo, hi);
	while (l < r) {		/* the first CU range ending above lo */
		size_t m = l + (r - l) / 2;

		if (w->cur[m].hi <= lo)
			l = m + 1;
		else
			r = m;
	}
	for (; !err && l < w->ncur && w->cur[l].lo < hi; l++)
		err = symi_builder_scope_range(w->b, s, depth,
					       lo > w->cur[l].lo ? lo :
					       w->cur[l].lo,
					       hi < w->cur[l].hi ? hi :
					       w->cur[l].hi);
	return err;
}

/*
 * Add a scope for @die (subprogram or inlined instance) with all its
 * ranges; a top-level subprogram when @top (eu_alias()).  *scope is
 * SYMI_NONE when the DIE has no code.
 */
static int add_scope(struct walk *w, Dwarf_Die *die, uint32_t parent,
		     uint32_t depth, bool top, uint32_t *scope)
{
	Dwarf_Addr base, lo, hi, entry = 0;
	ptrdiff_t off = 0, first;
	uint32_t func, s, cf = SYMI_NONE, cl = 0, cc = 0;
	bool any = false;
	int err;

	*scope = SYMI_NONE;
	/* First pass: is there code at all, and where does it start?  1:
	 * libdw's one range from DW_AT_low_pc and DW_AT_high_pc. */
	first = off = dwarf_ranges(die, 0, &base, &lo, &hi);
	if (off <= 0)
		return 0;
	if (off == 1)
		entry = lo;
	else if (dwarf_lowpc(die, &entry) != 0)
		entry = lo;
	if (top)
		eu_alias(w, die, off == 1, lo, hi);
	func = func_of(w, die);
	if (func == SYMI_NONE)
		return -ENOMEM;
	if (parent != SYMI_NONE) {
		Dwarf_Attribute a;
		Dwarf_Word idx;

		if (dwarf_attr(die, DW_AT_call_file, &a) &&
		    dwarf_formudata(&a, &idx) == 0)
			cf = idx < w->own.n ? w->own.fid[idx] : SYMI_NONE;
		cl = udata(die, DW_AT_call_line);
		cc = udata(die, DW_AT_call_column);
	}
	s = symi_builder_scope(w->b, parent, func, cf, cl, cc, entry,
			       dwarf_hasattr(die, DW_AT_low_pc) ? 0 :
			       SYMT_SCOPE_NO_LOW_PC);
	if (s == SYMI_NONE)
		return -ENOMEM;
	/* The one range of low_pc and high_pc is known: no second call. */
	off = first == 1 ? -1 : 0;
	if (first == 1) {
		err = scope_range(w, s, depth, lo, hi);
		if (err)
			return err;
		any = true;
	}
	while (off >= 0 &&
	       (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		err = scope_range(w, s, depth, lo, hi);
		if (err)
			return err;
		any = true;
	}
	if (any)
		*scope = s;
	return 0;
}

/* Push @parent's children; @end is where @parent's subtree ends. */
static int push(struct walk *w, Dwarf_Die *parent, uint32_t scope,
		uint32_t depth, uint64_t end)
{
	Dwarf_Die child;

	if (depth >= MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	if (symi_grow((void **)&w->stack, &w->stack_cap, w->sp + 1,
		      sizeof(*w->stack)))
		return -ENOMEM;
	w->stack[w->sp].die = child;
	w->stack[w->sp].scope = scope;
	w->stack[w->sp].depth = depth;
	w->stack[w->sp].end = end;
	w->sp++;
	return 0;
}

/*
 * The narrow walk of a lazy table.  A top-level subprogram with code none
 * of whose ranges holds an address the table must answer
 * (symi_builder_wants()) is cold: nothing below it can answer one, since
 * the builder clips every inlined instance's ranges to its caller's
 * (nest_scopes() in build.c), so nothing below it is added.  A function
 * with code of its own nested below is another matter (GNU C's nested
 * functions, Fortran's and Ada's contained procedures): in the languages
 * that have them, the subtree is scanned by tags (COLD frames), and the
 * function is walked after all when one is found (cold_revive()).  In
 * C++, which has none (a lambda's or a local class's member function is
 * defined at namespace level), the subtree is skipped whole, and the full
 * walk, too, reads no subprogram nested in another (lang_nests()).  So a
 * lazy table answers its addresses as the full one does, whatever the
 * DWARF says.
 */

/* The scope of a frame below a cold function: never a builder's scope
 * index, which stays below SYMT_NONE - 1. */
#define COLD (SYMI_NONE - 1)

/* Can the CU's language nest a function with code in another's subtree?
 * All but C++ are taken to. */
static bool lang_nests(Dwarf_Die *cudie)
{
	Dwarf_Word lang;

	if (!cu_language(cudie, &lang))
		return true;
	return lang != DW_LANG_C_plus_plus && lang != DW_LANG_C_plus_plus_03 &&
	       lang != DW_LANG_C_plus_plus_11 && lang != DW_LANG_C_plus_plus_14;
}

/* Is top-level subprogram @die (whose subtree ends at @end) cold?  Then
 * its subtree is pushed for the scan (*@err: push()'s), and eu_alias()
 * has seen it, as the full walk's add_scope() would. */
static bool cold_function(struct walk *w, Dwarf_Die *die, uint64_t end,
			  int *err)
{
	Dwarf_Addr base, lo, hi, lo1 = 0, hi1 = 0;
	ptrdiff_t off = 0, first = 0;
	struct cold *c = &w->cold;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (!first) {
			first = off;
			lo1 = lo;
			hi1 = hi;
		}
		if (symi_builder_wants(w->b, lo, hi))
			return false;
	}
	if (!first)
		return false;	/* no code: the usual path adds nothing */
	c->die = *die;
	c->end = end;
	c->sp = w->sp;
	c->alias_lo = w->alias_lo;
	c->alias_hi = w->alias_hi;
	c->alias_die = w->alias_die;
	c->alias_set = w->alias_set;
	eu_alias(w, die, first == 1, lo1, hi1);
	w->eu = NULL;
	*err = w->nests ? push(w, die, COLD, 1, end) : 0;
	return true;
}

/* Walk the cold function after all: its scan's frames dropped, the alias
 * state as it was before it, then as the full walk does. */
static int cold_revive(struct walk *w)
{
	struct cold *c = &w->cold;
	uint32_t s;
	int err;

	w->sp = c->sp;
	w->alias_lo = c->alias_lo;
	w->alias_hi = c->alias_hi;
	w->alias_die = c->alias_die;
	w->alias_set = c->alias_set;
	err = add_scope(w, &c->die, SYMI_NONE, 0, true, &s);
	w->eu = NULL;
	if (!err && s != SYMI_NONE)
		err = push(w, &c->die, s, 1, c->end);
	return err;
}

/* DIE @die (tag @tag) of a cold function's subtree, in a frame of @depth
 * whose subtree ends at @end: scan on, or revive the function at a nested
 * one with code. */
static int cold_scan(struct walk *w, Dwarf_Die *die, int tag, uint32_t depth,
		     uint64_t end)
{
	Dwarf_Addr base, lo, hi;
	bool code = dwarf_ranges(die, 0, &base, &lo, &hi) > 0;

	if (tag == DW_TAG_subprogram)
		return code ? cold_revive(w) : 0;
	/* Descended as the full walk would: where the instance has code. */
	return code ? push(w, die, COLD, depth + 1, end) : 0;
}

/*
 * Walk the DIE tree below @top.  The stack holds, per level, the next
 * sibling to visit; visiting a DIE advances its slot to the sibling and
 * may push its first child.
 */
static int do_dies(struct walk *w, Dwarf_Die *top)
{
	int err;

	w->sp = 0;
	w->alias_set = false;
	err = push(w, top, SYMI_NONE, 0, UINT64_MAX);
	while (!err && w->sp) {
		struct frame *fr = &w->stack[w->sp - 1];
		Dwarf_Die die = fr->die;
		uint32_t scope = fr->scope, depth = fr->depth, s;
		uint64_t end = fr->end;
		int rc = dwarf_siblingof(&die, &fr->die), tag;

		if (rc != 0) {
			/* No more siblings (1) or corrupt (-1): pop. */
			if (rc < 0)
				w->cu_errors++;
			w->sp--;
		} else {
			/* This DIE's subtree ends where its sibling is. */
			end = dwarf_dieoffset(&fr->die);
		}
		/* Below a cold function (scope COLD), blocks are pushed as
		 * below any scope, and the rest is cold_scan()'s. */
		switch ((tag = dwarf_tag(&die))) {
		case DW_TAG_subprogram:
			if (scope == COLD) {
				err = cold_scan(w, &die, tag, depth, end);
				break;
			}
			if (scope == SYMI_NONE)
				err = hold(w, &die, end);
			if (!err && scope == SYMI_NONE && w->narrow &&
			    cold_function(w, &die, end, &err))
				break;
			if (scope != SYMI_NONE && !w->nests)
				break;	/* see cold_function() */
			if (!err)
				err = add_scope(w, &die, SYMI_NONE, 0,
						scope == SYMI_NONE, &s);
			w->eu = NULL;
			if (!err && s != SYMI_NONE)
				err = push(w, &die, s, 1, end);
			break;
		case DW_TAG_inlined_subroutine:
			if (scope == COLD) {
				err = cold_scan(w, &die, tag, depth, end);
				break;
			}
			err = add_scope(w, &die, scope,
					scope == SYMI_NONE ? 0 : depth, false, &s);
			if (!err && s != SYMI_NONE)
				err = push(w, &die, s,
					   (scope == SYMI_NONE ? 0 : depth) + 1,
					   end);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_with_stmt:
		case DW_TAG_common_block:
			if (scope != SYMI_NONE)
				err = push(w, &die, scope, depth, end);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
			if (scope == SYMI_NONE)
				err = push(w, &die, SYMI_NONE, 0, end);
			break;
		default:
			break;
		}
	}
	if (!err)
		err = set_outer(w);
	return err;
}

/*
 * Before libdw opens the .dwo file of skeleton unit @cu by itself and
 * decompresses all of it (the first dwarf_cu_info() asking for the split
 * DIE does), check its compressed sections against the decompression
 * limits, counted with @dbg's (symi_dwo_check()).  dwarf_attr(), not
 * the _integrate one, which could look for the split unit first.
 */
static int skeleton_check(struct symi_elf *dbg, Dwarf_CU *cu)
{
	Dwarf_Attribute a;
	Dwarf_Die cudie;
	uint8_t type = 0;
	const char *name = NULL, *dir = NULL;

	if (dwarf_cu_info(cu, NULL, &type, &cudie, NULL, NULL, NULL,
			  NULL) != 0 || type != DW_UT_skeleton)
		return 0;
	if (dwarf_attr(&cudie, DW_AT_dwo_name, &a) ||
	    dwarf_attr(&cudie, DW_AT_GNU_dwo_name, &a))
		name = dwarf_formstring(&a);
	if (dwarf_attr(&cudie, DW_AT_comp_dir, &a))
		dir = dwarf_formstring(&a);
	return symi_dwo_check(dbg, name, dir);
}

/* An address range of a unit, from .debug_aranges (@off: the unit DIE's
 * offset) or from its top DIE. */
struct urange {
	uint64_t off, lo, hi;
};

static int urange_cmp(const void *a, const void *b)
{
	const struct urange *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Sort @v (one unit's) by address and join ranges that touch or overlap;
 * empty ones go.  Returns the new count. */
static size_t urange_norm(struct urange *v, size_t n)
{
	size_t o = 0;

	if (n == 0)	/* @v may be NULL then, which qsort() may not get */
		return 0;
	qsort(v, n, sizeof(*v), urange_cmp);
	for (size_t i = 0; i < n; i++) {
		if (v[i].hi <= v[i].lo)
			continue;
		if (o && v[i].lo <= v[o - 1].hi) {
			if (v[i].hi > v[o - 1].hi)
				v[o - 1].hi = v[i].hi;
			continue;
		}
		v[o++] = v[i];
	}
	return o;
}

/*
 * .debug_aranges as (unit DIE offset, lo, hi), sorted by offset then
 * address, into *@out (free()).  *@n is 0 when the file has none or
 * libdw cannot read them: then the units' own ranges are the index.
 * Returns 0 or -ENOMEM.
 */
static int read_aranges(Dwarf *dw, struct urange **out, size_t *n)
{
	Dwarf_Aranges *ar = NULL;
	struct urange *v;
	size_t nar = 0, k = 0;

	*out = NULL;
	*n = 0;
	if (dwarf_getaranges(dw, &ar, &nar) != 0 || !nar)
		return 0;
	v = symi_calloc(nar, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nar; i++) {
		Dwarf_Addr a;
		Dwarf_Word len;
		Dwarf_Off off;

		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &a, &len,
					&off) != 0 || len > UINT64_MAX - a)
			continue;
		v[k].off = off;
		v[k].lo = a;
		v[k].hi = a + len;
		k++;
	}
	qsort(v, k, sizeof(*v), urange_cmp);
	*out = v;
	*n = k;
	return 0;
}

/*
 * Do the ranges of the unit at DIE offset @off, @u (normalized, @nu),
 * agree with its sets in .debug_aranges @ar (@nar, sorted)?  Without
 * aranges in the file, there is nothing to disagree with.
 */
static bool aranges_agree(struct urange *ar, size_t nar,
			  const struct urange *u, size_t nu, uint64_t off)
{
	size_t l = 0, r = nar, e, na;

	if (!nar)
		return true;
	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (ar[m].off < off)
			l = m + 1;
		else
			r = m;
	}
	for (e = l; e < nar && ar[e].off == off; e++)
		;
	/* Normalized in place: joining keeps the order by offset. */
	na = urange_norm(ar + l, e - l);
	for (size_t i = l + na; i < e; i++)
		ar[i].hi = ar[i].lo = 0;	/* joined away */
	if (na != nu)
		return false;
	for (size_t i = 0; i < nu; i++) {
		if (ar[l + i].lo != u[i].lo || ar[l + i].hi != u[i].hi)
			return false;
	}
	return true;
}

/*
 * The lazy path's CU index: into @want (Dwarf_CU -> 1), the units the
 * walk must read to answer @only as the full walk would.  A unit's own
 * ranges (its top DIE's) are trusted only where .debug_aranges, when the
 * file has it, says the same of the unit: two sources written apart
 * rarely go wrong the same way.  So a unit is picked when one of its
 * ranges holds an address; when it has no range or libdw cannot read
 * them (it may then answer anywhere); and when its aranges disagree or
 * are missing (a corrupt range could hide a function of it).  Reads each
 * unit's header and top DIE only.  Returns 0 or -ENOMEM.
 */
static int pick_units(Dwarf *dw, const struct symi_dwarf_only *only,
		      struct pmap *want, unsigned long *picked,
		      unsigned long *total, unsigned long *disagree)
{
	Dwarf_CU *cu = NULL, *next;
	struct urange *ar = NULL, *u = NULL;
	size_t nar = 0, ucap = 0;
	int err = read_aranges(dw, &ar, &nar);

	while (!err &&
	       dwarf_get_units(dw, cu, &next, NULL, NULL, NULL, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		Dwarf_Die cudie;
		ptrdiff_t off = 0;
		size_t nu = 0;
		bool take = false;
		struct pent *e;

		cu = next;
		(*total)++;
		if (dwarf_cu_info(cu, NULL, NULL, &cudie, NULL, NULL, NULL,
				  NULL) != 0)
			continue;	/* the walk skips it too */
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (symi_grow((void **)&u, &ucap, nu + 1, sizeof(*u))) {
				err = -ENOMEM;
				break;
			}
			u[nu].off = 0;
			u[nu].lo = lo;
			u[nu].hi = hi;
			nu++;
		}
		if (err)
			break;
		nu = urange_norm(u, nu);
		if (off < 0 || !nu) {
			take = true;
		} else if (!aranges_agree(ar, nar, u, nu,
					  dwarf_dieoffset(&cudie))) {
			take = true;
			(*disagree)++;
		}
		for (size_t i = 0; !take && i < nu; i++)
			take = symi_addrs_hold(only->addrs, only->n, u[i].lo,
					 u[i].hi);
		if (!take)
			continue;
		e = pmap_slot(want, cu, 256);
		if (!e) {
			err = -ENOMEM;
			break;
		}
		if (!e->key) {
			e->key = cu;
			e->val = 1;
			want->n++;
			(*picked)++;
		}
	}
	free(ar);
	free(u);
	return err;
}

/* Is @cu one pick_units() chose? */
static bool picked(const struct pmap *want, const Dwarf_CU *cu)
{
	size_t j;

	if (!want->cap)
		return false;
	j = ptr_hash(cu) & (want->cap - 1);
	while (want->v[j].key) {
		if (want->v[j].key == cu)
			return true;
		j = (j + 1) & (want->cap - 1);
	}
	return false;
}

/*
 * The line rows of unit @cu (top DIE @cudie) and the file table its DIEs
 * name (w->own): a split unit's DIEs (@walk_die, not @cudie) name those
 * of its .dwo, if it has any.
 */
static int unit_lines(struct walk *w, Dwarf_CU *cu, Dwarf_Die *cudie,
		      Dwarf_Die *walk_die)
{
	int err;

	free(w->own.fid);
	w->own.fid = NULL;
	w->own.n = 0;
	w->own_cu = cu;
	err = fast_lines(w, cu, cudie, false);
	if (err == -SYM_E_BADDWARF)
		err = lines_fallback(w, cu, cudie);
	if (!err && walk_die != cudie) {
		struct ufiles dwo;

		err = unit_files(w, walk_die->cu, walk_die,
				 attr_str(cudie, DW_AT_comp_dir), &dwo);
		if (!err && dwo.n) {
			free(w->own.fid);
			w->own = dwo;
		} else {
			free(dwo.fid);
		}
		w->own_cu = walk_die->cu;
	}
	return err;
}

int symi_dwarf_read(struct symi_builder *b, struct symi_elf *dbg,
		    struct symi_elf *alt, const struct symi_dwarf_only *only,
		    struct sym_module_stats *ph)
{
	double t0 = symi_now(), t1;
	struct walk w = { .b = b, .path = dbg->path ? dbg->path : "<memory>" };
	Dwarf *dw = NULL, *altdw = NULL;
	Dwarf_CU *cu = NULL, *next;
	unsigned long units = 0, npicked = 0, nunits = 0, ndisagree = 0;
	struct pmap want = { 0 };
	int err = 0, rc;

	/* One per-file decompression budget for the debug file, its dwz
	 * alt file and its .dwo files: alt->inflated began at
	 * dbg->inflated (symi_find_alt_file()) and holds both. */
	if (alt && alt->elf)
		dbg->inflated = alt->inflated;
	err = symi_elf_prepare_dwarf(dbg);
	if (!err && alt && alt->elf) {
		alt->inflated = dbg->inflated;
		err = symi_elf_prepare_dwarf(alt);
		dbg->inflated = alt->inflated;
	}
	if (err)
		return err;
	dw = dwarf_begin_elf(dbg->elf, DWARF_C_READ, NULL);
	if (!dw) {
		/* The caller saw .debug_info, so this is corruption. */
		symi_warn("dwarf: cannot read DWARF of '%s': %s", w.path,
			  dwarf_errmsg(-1));
		return -SYM_E_BADDWARF;
	}
	if (alt && alt->elf) {
		altdw = dwarf_begin_elf(alt->elf, DWARF_C_READ, NULL);
		if (altdw)
			dwarf_setalt(dw, altdw);
		else
			symi_warn("dwarf: cannot read dwz alt file '%s': %s",
				  alt->path ? alt->path : "<memory>",
				  dwarf_errmsg(-1));
	}
	w.dw = dw;
	symi_builder_set_dwarf(b);
	lines_setup(&w, dbg);
	t1 = symi_now();
	ph->inflate += t1 - t0;
	if (only) {
		err = pick_units(dw, only, &want, &npicked, &nunits,
				 &ndisagree);
		if (err)
			goto out;
		symi_debug("dwarf: lazy read of '%s': %lu of %lu units for %zu addresses, %lu of them read since .debug_aranges disagrees (%.1f ms)",
			   w.path, npicked, nunits, only->n, ndisagree,
			   (symi_now() - t1) * 1e3);
		/* Counted with the line programs: both read units. */
		ph->lines += symi_now() - t1;
	}

	while ((rc = dwarf_get_units(dw, cu, &next, NULL, NULL, NULL,
				     NULL)) == 0) {
		Dwarf_Die cudie, subdie;
		uint8_t type = 0;
		Dwarf_Die *walk_die;

		cu = next;
		w.cu = cu;
		if (only && !picked(&want, cu))
			continue;
		err = skeleton_check(dbg, cu);
		if (err)
			goto out;
		if (dwarf_cu_info(cu, NULL, &type, &cudie, &subdie, NULL, NULL,
				  NULL) != 0) {
			w.cu_errors++;
			continue;
		}
		units++;
		if (type != DW_UT_compile && type != DW_UT_skeleton &&
		    type != DW_UT_split_compile)
			continue;
		walk_die = &cudie;
		if (type == DW_UT_skeleton) {
			if (dwarf_tag(&subdie) == DW_TAG_compile_unit)
				walk_die = &subdie;
			else
				symi_info("dwarf: split unit of '%s' not found (%s)",
					  w.path,
					  attr_str(&cudie, DW_AT_dwo_name) ?:
					  attr_str(&cudie, DW_AT_GNU_dwo_name) ?:
					  "?");
		}
		t0 = symi_now();
		err = unit_lines(&w, cu, &cudie, walk_die);
		t1 = symi_now();
		ph->lines += t1 - t0;
		if (err)
			goto out;
		/* The unit's ranges, for its scopes (scope_range()): the
		 * line reader may have left them unread. */
		err = cu_ranges(&w, &cudie);
		if (err)
			goto out;
		w.func_flags = lang_flags(walk_die);
		w.narrow = only != NULL;
		w.nests = lang_nests(walk_die);
		err = do_dies(&w, walk_die);
		ph->dies += symi_now() - t1;
		if (err)
			goto out;
	}
	if (rc < 0) {
		symi_warn("dwarf: cannot read units of '%s': %s", w.path,
			  dwarf_errmsg(-1));
		err = -SYM_E_BADDWARF;
		goto out;
	}
	if (w.cu_errors)
		symi_warn("dwarf: %lu unreadable parts in '%s' were skipped",
			  w.cu_errors, w.path);
out:
	free(want.v);
	free(w.fc.v);
	free(w.held);
	free(w.pend);
	free(w.own.fid);
	ucache_release(&w.uc);
	free(w.stack);
	free(w.cur);
	dwarf_end(dw);
	dwarf_end(altdw);
	return err;
}
