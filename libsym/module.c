/*
 * module.c - struct sym_module: an ELF file, its debug files, its table.
 *
 * Opening a module reads the ELF headers and the build ID and finds the
 * separate debug file (elf.c).  The table is built on the first call to
 * sym_module_table(): text sections, symbols of both files, then the
 * DWARF of whichever file has it, or, when neither has DWARF, Go's
 * function table (gopclntab.c) of the module's own file.  Once built, the ELF files and libdw
 * state are released: lookups need the table only, and the memory is
 * better spent elsewhere.  The outcome (table or error) is kept, so a
 * failed build is not retried.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base.h"

struct sym_module {
	struct symi_elf main;	/* symi_elf_close() */
	struct symi_elf dbg;	/* separate debug file; zeroed when none */
	struct sym_module_opts opts;	/* copy; strings below */
	char *debug_dir;	/* free() */
	char **paths;		/* free() each and the array */
	char *debug_path;	/* free(): where the DWARF is, or NULL */
	char build_id[129];	/* "" when none */
	char module_id[129];	/* sym_module_id(); "" when none */
	struct sym_module_info info;
	struct sym_module_stats stats;
	struct sym_table *table;	/* sym_table_close() */
	int table_err;		/* outcome of the build, once built */
	bool built;
};

/* The flags sym_module_open() knows; any other bit is -EINVAL. */
#define MODULE_FLAGS (SYM_MODULE_NO_DWARF | SYM_MODULE_NO_SEARCH)

/* After SYMI_OPTS_CHECK(): only the fields the caller's struct has
 * (o->sz) are read. */
static int copy_opts(struct sym_module *m, const struct sym_module_opts *o)
{
	size_t n = 0;

	m->opts.sz = sizeof(m->opts);
	m->opts.debug_file = NULL;	/* used during open only */
	m->opts.debuginfo_path = SYMI_OPT(o, debuginfo_path);
	m->opts.debug_dir = SYMI_OPT(o, debug_dir);
	m->opts.flags = SYMI_OPT(o, flags);
	m->opts.spelling = SYMI_OPT(o, spelling);
	m->opts.spelling_ctx = SYMI_OPT(o, spelling_ctx);
	if (m->opts.debug_dir) {
		m->debug_dir = symi_strdup(m->opts.debug_dir);
		if (!m->debug_dir)
			return -ENOMEM;
	}
	m->opts.debug_dir = m->debug_dir;
	if (m->opts.debuginfo_path) {
		while (m->opts.debuginfo_path[n])
			n++;
		m->paths = symi_calloc(n + 1, sizeof(*m->paths));
		if (!m->paths)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			m->paths[i] = symi_strdup(m->opts.debuginfo_path[i]);
			if (!m->paths[i])
				return -ENOMEM;
		}
	}
	m->opts.debuginfo_path = (const char *const *)m->paths;
	return 0;
}

static int finish_open(struct sym_module *m, const struct sym_module_opts *o)
{
	const char *dbgfile = SYMI_OPT(o, debug_file);
	int err;

	err = copy_opts(m, o);
	if (err)
		return err;
	if (m->main.build_id_len)
		symi_hex(m->main.build_id, m->main.build_id_len, m->build_id);
	symi_elf_module_id(&m->main, m->module_id);
	m->info.elf_class = m->main.ehdr.e_ident[EI_CLASS] == ELFCLASS32 ?
			    32 : 64;
	m->info.elf_type = m->main.ehdr.e_type;
	m->info.machine = m->main.ehdr.e_machine;
	if (m->opts.flags & SYM_MODULE_NO_DWARF)
		return 0;
	if (dbgfile) {
		err = symi_elf_open(dbgfile, &m->dbg);
		if (err) {
			char eb[128];

			symi_warn("module: cannot open debug file '%s': %s",
				  dbgfile, sym_strerror(err, eb, sizeof(eb)));
			return err;
		}
	} else if (!(m->opts.flags & SYM_MODULE_NO_SEARCH) &&
		   !symi_elf_has_dwarf(&m->main) && m->main.path) {
		/* Not finding one is normal: symbols only.  Finding one
		 * over the decompression limits is not. */
		err = symi_find_debug_file(&m->main, &m->opts, &m->dbg);
		if (err == -SYM_E_INFLATE_LIMIT)
			return err;
		if (err)
			memset(&m->dbg, 0, sizeof(m->dbg));
	}
	if (m->dbg.elf && symi_elf_has_dwarf(&m->dbg))
		m->debug_path = symi_strdup(m->dbg.path ? m->dbg.path : "");
	else if (symi_elf_has_dwarf(&m->main))
		m->debug_path = symi_strdup(m->main.path ? m->main.path :
					    "<memory>");
	else
		return 0;
	return m->debug_path ? 0 : -ENOMEM;
}

/* Open @path, or the memory image @buf/@len when @path is NULL. */
static int module_open(const char *path, const void *buf, size_t len,
		       const struct sym_module_opts *opts,
		       struct sym_module **out)
{
	struct sym_module *m;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!path && !buf)
		return -EINVAL;
	err = SYMI_OPTS_CHECK(opts, sym_module_opts, spelling_ctx,
			      MODULE_FLAGS);
	if (err)
		return err;
	m = symi_calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = path ? symi_elf_open(path, &m->main) :
		     symi_elf_open_mem(buf, len, &m->main);
	if (!err)
		err = finish_open(m, opts);
	if (err) {
		sym_module_close(m);
		return err;
	}
	*out = m;
	return 0;
}

int sym_module_open(const char *path, const struct sym_module_opts *opts,
		    struct sym_module **out)
{
	if (!path) {
		if (out)
			*out = NULL;
		return -EINVAL;
	}
	return module_open(path, NULL, 0, opts, out);
}

int sym_module_open_mem(const void *buf, size_t len,
			const struct sym_module_opts *opts,
			struct sym_module **out)
{
	if (!buf) {
		if (out)
			*out = NULL;
		return -EINVAL;
	}
	return module_open(NULL, buf, len, opts, out);
}

void sym_module_close(struct sym_module *m)
{
	if (!m)
		return;
	sym_table_close(m->table);
	symi_elf_close(&m->dbg);
	symi_elf_close(&m->main);
	if (m->paths) {
		for (size_t i = 0; m->paths[i]; i++)
			free(m->paths[i]);
		free(m->paths);
	}
	free(m->debug_dir);
	free(m->debug_path);
	free(m);
}

const char *sym_module_build_id(const struct sym_module *m)
{
	return m && m->build_id[0] ? m->build_id : NULL;
}

const char *sym_module_id(const struct sym_module *m, int *kind)
{
	if (kind)
		*kind = m && m->module_id[0] ? m->main.modid_kind
					     : SYM_MODID_NONE;
	return m && m->module_id[0] ? m->module_id : NULL;
}

void sym_module_stats(const struct sym_module *m, struct sym_module_stats *st)
{
	if (st)
		*st = m ? m->stats : (struct sym_module_stats){ 0 };
}

void sym_module_info(const struct sym_module *m, struct sym_module_info *info)
{
	if (info)
		*info = m ? m->info : (struct sym_module_info){ 0 };
}

const char *sym_module_debug_file(const struct sym_module *m)
{
	return m ? m->debug_path : NULL;
}

/* Go's function table, for a module without DWARF: a damaged one is
 * logged and the table keeps the symbols. */
static int go_read(struct symi_builder *b, struct sym_module *m,
		   const struct symi_dwarf_only *only)
{
	struct symi_gopcln_stats st;
	double t0 = symi_now();
	char eb[128];
	int err;

	err = symi_gopcln_elf(b, &m->main, only, &st);
	m->stats.dies += symi_now() - t0;
	if (err == -ENOMEM)
		return err;
	if (err == -SYM_E_NOTFOUND)
		return 0;
	if (err) {
		symi_warn("gopclntab: '%s': %s; symbols only",
			  m->main.path ? m->main.path : "<memory>",
			  sym_strerror(err, eb, sizeof(eb)));
		return 0;
	}
	symi_builder_set_gopclntab(b);
	symi_debug("gopclntab: '%s': Go %s table, %llu functions, %llu "
		   "inlined calls, %llu damaged entries skipped",
		   m->main.path ? m->main.path : "<memory>",
		   st.version == 12 ? "1.2" : st.version == 116 ? "1.16" :
		   st.version == 118 ? "1.18" : "1.20",
		   (unsigned long long)st.funcs,
		   (unsigned long long)st.inlined,
		   (unsigned long long)st.bad_funcs);
	return 0;
}

/* symi_dwarf_read(), with the lazy path's addresses @only, which are a
 * kernel's _text offsets when @b is a kernel's (docs/design.md, "The
 * kernel"), made the link-time addresses its DWARF holds. */
static int dwarf_read(struct symi_builder *b, struct symi_elf *dw,
		      struct symi_elf *alt, const struct symi_dwarf_only *only,
		      struct sym_module_stats *ph)
{
	struct symi_dwarf_only linked;
	uint64_t text, *v;
	int err;

	if (!only)
		return symi_dwarf_read(b, dw, alt, NULL, ph);
	if (!symi_builder_kernel_text(b, &text)) {
		err = symi_builder_only(b, only->addrs, only->n);
		return err ? err : symi_dwarf_read(b, dw, alt, only, ph);
	}
	v = symi_calloc(only->n ? only->n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	/* Still ascending; an offset that would pass 2^64 is dropped: no
	 * address of the kernel's table is there. */
	linked.n = 0;
	for (size_t i = 0; i < only->n; i++)
		if (only->addrs[i] <= UINT64_MAX - text)
			v[linked.n++] = only->addrs[i] + text;
	linked.addrs = v;
	err = symi_builder_only(b, v, linked.n);
	if (!err)
		err = symi_dwarf_read(b, dw, alt, &linked, ph);
	free(v);
	return err;
}

/* The text sections and the symbols of both files of @m into @b. */
static int collect_symbols(struct sym_module *m, struct symi_builder *b)
{
	int err;

	symi_builder_spelling(b, m->opts.spelling, m->opts.spelling_ctx);
	/* Text first: it decides which DWARF ranges are real code. */
	err = symi_text_read(b, &m->main);
	if (!err && m->dbg.elf)
		err = symi_text_read(b, &m->dbg);
	if (!err)
		err = symi_symtab_read(b, &m->main, true);
	if (!err && m->dbg.elf)
		err = symi_symtab_read(b, &m->dbg, false);
	return err;
}

/* Everything of @m into @b: text sections, symbols of both files, then
 * the DWARF (only the units that answer @only, when not NULL) or Go's
 * function table. */
static int collect(struct sym_module *m, struct symi_builder *b,
		   const struct symi_dwarf_only *only)
{
	struct symi_elf alt = { 0 };
	struct symi_elf *dw = NULL;
	double t0 = symi_now();
	int err;

	err = collect_symbols(m, b);
	if (err)
		return err;
	m->stats.symbols = symi_now() - t0;
	if (!(m->opts.flags & SYM_MODULE_NO_DWARF)) {
		if (m->dbg.elf && symi_elf_has_dwarf(&m->dbg))
			dw = &m->dbg;
		else if (symi_elf_has_dwarf(&m->main))
			dw = &m->main;
	}
	if (dw) {
		if (dw == &m->dbg)
			symi_builder_note_tables(b, SYMI_TAB_DWARF_DBG);
		/* A missing alt file is not fatal; libdw also looks itself. */
		err = symi_find_alt_file(dw, &m->opts, &alt);
		if (err == -SYM_E_INFLATE_LIMIT)
			return err;
		if (err)
			memset(&alt, 0, sizeof(alt));
		err = dwarf_read(b, dw, alt.elf ? &alt : NULL, only,
				 &m->stats);
		symi_elf_close(&alt);
		return err;
	}
	if (!(m->opts.flags & SYM_MODULE_NO_DWARF))
		return go_read(b, m, only);
	return 0;
}

/* @b's table, owning its buffer, into @out. */
static int finish(struct sym_module *m, struct symi_builder *b,
		  struct sym_table **out)
{
	void *buf = NULL;
	size_t len = 0;
	double t0 = symi_now();
	int err;

	err = symi_builder_finish(b, &buf, &len);
	m->stats.build = symi_now() - t0;
	if (!err)
		err = sym_table_open(buf, len, out);
	if (err) {
		free(buf);
		return err;
	}
	symi_table_adopt(*out, buf);
	return 0;
}

static int build(struct sym_module *m)
{
	struct symi_builder *b = NULL;
	int err;

	err = symi_builder_new(&b);
	if (!err)
		err = collect(m, b, NULL);
	/* The builder holds copies of all it needs: drop the inputs
	 * (inflated sections, mapped files, libdw state) before the sweeps,
	 * which are the peak of memory.  The outcome is kept either way. */
	symi_elf_close(&m->dbg);
	symi_elf_close(&m->main);
	if (!err)
		err = finish(m, b, &m->table);
	symi_builder_free(b);
	return err;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int sym_module_table_for(struct sym_module *m, const uint64_t *addrs,
			 size_t n, struct sym_table **out)
{
	struct symi_builder *b = NULL;
	struct symi_dwarf_only only;
	uint64_t *v = NULL;
	int err;

	if (out)
		*out = NULL;
	if (!m || !out || (!addrs && n))
		return -EINVAL;
	if (m->built)
		return m->table_err ? m->table_err : -EALREADY;
	v = symi_calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (n)
		memcpy(v, addrs, n * sizeof(*v));
	qsort(v, n, sizeof(*v), u64_cmp);
	only.addrs = v;
	only.n = n;
	err = symi_builder_new(&b);
	if (!err) {
		symi_builder_quick(b);
		err = collect(m, b, &only);
	}
	if (!err)
		err = finish(m, b, out);
	symi_builder_free(b);
	free(v);
	return err;
}

int sym_module_table_symbols(struct sym_module *m, struct sym_table **out)
{
	struct symi_builder *b = NULL;
	struct sym_module_stats keep;
	int err;

	if (out)
		*out = NULL;
	if (!m || !out)
		return -EINVAL;
	if (m->built)
		return m->table_err ? m->table_err : -EALREADY;
	keep = m->stats;	/* finish() notes its time: not the build's */
	err = symi_builder_new(&b);
	if (!err) {
		symi_builder_quick(b);
		err = collect_symbols(m, b);
	}
	if (!err)
		err = finish(m, b, out);
	symi_builder_free(b);
	m->stats = keep;
	return err;
}

int sym_module_table(struct sym_module *m, const struct sym_table **out)
{
	if (out)
		*out = NULL;
	if (!m || !out)
		return -EINVAL;
	if (!m->built) {
		m->table_err = build(m);
		m->built = true;
	}
	if (m->table_err)
		return m->table_err;
	*out = m->table;
	return 0;
}

int sym_module_lookup(struct sym_module *m, uint64_t addr,
		      struct sym_frame *frames, size_t max, size_t *n)
{
	const struct sym_table *t;
	int err;

	if (n)
		*n = 0;
	err = sym_module_table(m, &t);
	if (err)
		return err;
	return sym_table_lookup(t, addr, frames, max, n);
}
