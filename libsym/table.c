/*
 * table.c - reading a lookup table in place: open and lookups.
 *
 * sym_table_open() checks the header in O(1): magic, format, byte order,
 * and that every array lies inside the buffer.  It does not walk the
 * arrays, because tables are opened for each lookup batch straight from
 * LMDB pages.  Instead, every index a lookup follows (scope, parent, func,
 * file, string) is bounds-checked when it is used, and parent chains are
 * cut after SYM_MAX_FRAMES steps.  A corrupt table therefore yields wrong
 * answers, never an out-of-bounds read or a loop.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "internal.h"
#include "format.h"


static bool in_buf(size_t size, uint32_t off, uint64_t n, size_t elem)
{
	uint64_t end;

	if (off % 4)
		return false;
	if (__builtin_mul_overflow(n, (uint64_t)elem, &end) ||
	    __builtin_add_overflow(end, (uint64_t)off, &end))
		return false;
	return end <= size;
}

int sym_table_open(const void *buf, size_t len, struct sym_table **out)
{
	const struct symt_header *h = buf;
	struct sym_table *t;
	const char *p = buf;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!buf || ((uintptr_t)buf & 7))
		return -EINVAL;
	if (len < sizeof(*h) || memcmp(h->magic, SYMT_MAGIC, 8) != 0 ||
	    h->bom != SYMT_BOM || h->format != SYM_TABLE_FORMAT ||
	    h->size > len || h->size < sizeof(*h))
		return -SYM_E_BADTABLE;
	if (!in_buf(h->size, h->off_addrs, h->n_ranges, sizeof(uint32_t)) ||
	    !in_buf(h->size, h->off_leaves, h->n_ranges,
		    sizeof(struct symt_leaf)) ||
	    !in_buf(h->size, h->off_scopes, h->n_scopes,
		    sizeof(struct symt_scope)) ||
	    !in_buf(h->size, h->off_funcs, h->n_funcs,
		    sizeof(struct symt_func)) ||
	    !in_buf(h->size, h->off_files, h->n_files, sizeof(uint32_t)) ||
	    !in_buf(h->size, h->off_syms, h->n_syms,
		    sizeof(struct symt_sym)) ||
	    !in_buf(h->size, h->off_saddrs, h->n_sranges, sizeof(uint32_t)) ||
	    !in_buf(h->size, h->off_sidx, h->n_sranges, sizeof(uint32_t)) ||
	    !in_buf(h->size, h->off_strings, h->strings_size, 1) ||
	    h->strings_size == 0 || p[h->off_strings] != '\0' ||
	    p[h->off_strings + h->strings_size - 1] != '\0')
		return -SYM_E_BADTABLE;
	t = symi_calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->buf = p;
	t->len = h->size;
	t->h = h;
	t->addrs = (const uint32_t *)(p + h->off_addrs);
	t->leaves = (const struct symt_leaf *)(p + h->off_leaves);
	t->scopes = (const struct symt_scope *)(p + h->off_scopes);
	t->funcs = (const struct symt_func *)(p + h->off_funcs);
	t->files = (const uint32_t *)(p + h->off_files);
	t->syms = (const struct symt_sym *)(p + h->off_syms);
	t->saddrs = (const uint32_t *)(p + h->off_saddrs);
	t->sidx = (const uint32_t *)(p + h->off_sidx);
	t->str = p + h->off_strings;
	*out = t;
	return 0;
}

/* The table takes ownership of @buf (it was malloc()ed): internal. */
void symi_table_adopt(struct sym_table *t, void *buf)
{
	t->owned = buf;
}

void sym_table_close(struct sym_table *t)
{
	if (!t)
		return;
	free(t->owned);
	free(t);
}

void sym_table_data(const struct sym_table *t, const void **buf, size_t *len)
{
	*buf = t->buf;
	*len = t->len;
}

void sym_table_stat(const struct sym_table *t, struct sym_table_stat *st)
{
	const struct symt_header *h = t->h;

	memset(st, 0, sizeof(*st));
	st->size = h->size;
	st->base = h->base;
	st->start = h->start;
	st->end = h->end;
	st->ranges = h->n_ranges;
	st->scopes = h->n_scopes;
	st->funcs = h->n_funcs;
	st->files = h->n_files;
	st->symbols = h->n_syms;
	st->strings_size = h->strings_size;
	st->flags = h->flags;
	st->converter = h->converter;
	st->elfutils = h->elfutils;
}

uint32_t sym_converter_version(void)
{
	return SYMI_CONVERTER_VERSION;
}

uint32_t symi_table_crc(const void *buf, size_t len)
{
	const size_t at = offsetof(struct symt_header, crc);
	static const uint32_t zero;
	uint32_t crc;

	if (len < sizeof(struct symt_header))
		return 0;
	crc = libdeflate_crc32(0, buf, at);
	crc = libdeflate_crc32(crc, &zero, sizeof(zero));
	return libdeflate_crc32(crc, (const char *)buf + at + 4,
				len - at - 4);
}

/* Is the u32 array @v (stride @stride) ascending (strictly if @strict)? */
static bool ascending(const void *v, size_t n, size_t stride, bool strict)
{
	const char *p = v;

	for (size_t i = 1; i < n; i++) {
		uint32_t a = *(const uint32_t *)(p + (i - 1) * stride);
		uint32_t b = *(const uint32_t *)(p + i * stride);

		if (b < a || (strict && b == a))
			return false;
	}
	return true;
}

#define IN(idx, n) ((idx) < (n))
#define IN_OR_NONE(idx, n) ((idx) == SYMT_NONE || (idx) < (n))

int sym_table_verify(const struct sym_table *t)
{
	const struct symt_header *h;
	const char *why = NULL;
	uint32_t i, ns;

	if (!t)
		return -EINVAL;
	h = t->h;
	ns = h->strings_size;
	if (symi_table_crc(t->buf, t->len) != h->crc)
		why = "checksum mismatch";
	else if (!ascending(t->addrs, h->n_ranges, 4, true))
		why = "ranges out of order";
	else if (!ascending(t->syms, h->n_syms, sizeof(*t->syms), false))
		why = "symbols out of order";
	else if (!ascending(t->saddrs, h->n_sranges, 4, true))
		why = "symbol ranges out of order";
	for (i = 0; !why && i < h->n_ranges; i++) {
		const struct symt_leaf *l = &t->leaves[i];

		if (!IN_OR_NONE(l->scope, h->n_scopes) ||
		    !IN_OR_NONE(l->file, h->n_files))
			why = "range leaf index out of bounds";
	}
	for (i = 0; !why && i < h->n_scopes; i++) {
		const struct symt_scope *s = &t->scopes[i];

		/* Parents are built before their children. */
		if (!(s->parent == SYMT_NONE || s->parent < i) ||
		    !IN(s->func, h->n_funcs) ||
		    !IN_OR_NONE(s->call_file, h->n_files))
			why = "scope index out of bounds";
	}
	for (i = 0; !why && i < h->n_funcs; i++) {
		const struct symt_func *f = &t->funcs[i];

		if (!IN(f->name, ns) || !IN(f->linkage, ns) ||
		    !IN(f->demangled, ns) ||
		    !IN_OR_NONE(f->decl_file, h->n_files))
			why = "function index out of bounds";
	}
	for (i = 0; !why && i < h->n_files; i++) {
		if (!IN(t->files[i], ns))
			why = "file name out of bounds";
	}
	for (i = 0; !why && i < h->n_syms; i++) {
		const struct symt_sym *s = &t->syms[i];

		if (!IN(s->name, ns) || !IN(s->demangled, ns) ||
		    !IN(s->file, ns))
			why = "symbol name out of bounds";
	}
	for (i = 0; !why && i < h->n_sranges; i++) {
		if (!IN_OR_NONE(t->sidx[i], h->n_syms))
			why = "symbol range index out of bounds";
	}
	if (why) {
		symi_warn("table: %s", why);
		return -SYM_E_BADTABLE;
	}
	return 0;
}

static const char *str_at(const struct sym_table *t, uint32_t off)
{
	if (off == 0 || off >= t->h->strings_size)
		return NULL;
	return t->str + off;
}

static const char *file_at(const struct sym_table *t, uint32_t idx)
{
	if (idx >= t->h->n_files)
		return NULL;
	return str_at(t, t->files[idx]);
}

static uint64_t entry_at(const struct sym_table *t, uint32_t off)
{
	return off == SYMT_NONE ? 0 : t->h->base + off;
}

/*
 * Index of the last element of the ascending array @v[@n] that is <= @key,
 * or -1.  When @hint says where the previous (smaller or equal) key was
 * found, gallop forward from there: sorted batches then probe memory the
 * previous search just touched instead of starting over.
 */
static long last_le(const uint32_t *v, size_t n, uint32_t key, size_t hint)
{
	size_t lo = 0, hi = n;

	if (hint < n && v[hint] <= key) {
		size_t step = 1;

		while (hint + step < n && v[hint + step] <= key) {
			hint += step;
			step *= 2;
		}
		lo = hint + 1;
		hi = hint + step < n ? hint + step : n;
	} else if (hint < n) {
		hi = hint;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* The symbol naming @off (chosen at build time), or NULL. */
static const struct symt_sym *sym_cover(const struct sym_table *t,
					uint32_t off, size_t *hint)
{
	long i = last_le(t->saddrs, t->h->n_sranges, off, *hint);

	if (i < 0)
		return NULL;
	*hint = (size_t)i;
	if (t->sidx[i] >= t->h->n_syms)
		return NULL;
	return &t->syms[t->sidx[i]];
}

static void frame_func(const struct sym_table *t, uint32_t func,
		       struct sym_frame *f)
{
	const struct symt_func *fn;

	if (func >= t->h->n_funcs)
		return;
	fn = &t->funcs[func];
	f->name = str_at(t, fn->name);
	f->linkage_name = str_at(t, fn->linkage);
	f->demangled = str_at(t, fn->demangled);
	f->decl_file = file_at(t, fn->decl_file);
	f->decl_line = fn->decl_line;
}

size_t symi_table_lookup(const struct sym_table *t, uint64_t addr,
			 struct sym_frame *fr, size_t max,
			 struct symi_cursor *cur)
{
	const struct symt_header *h = t->h;
	const struct symt_leaf *leaf = NULL;
	const struct symt_sym *sym = NULL;
	uint32_t off, s;
	size_t n = 0, steps = 0;
	long i;

	if (addr < h->base || addr - h->base >= UINT32_MAX)
		return 0;
	off = (uint32_t)(addr - h->base);
	i = last_le(t->addrs, h->n_ranges, off, cur->range);
	if (i >= 0) {
		cur->range = (size_t)i;
		leaf = &t->leaves[i];
		if (leaf->scope == SYMT_NONE && leaf->file == SYMT_NONE)
			leaf = NULL;
	}
	if (h->n_sranges)
		sym = sym_cover(t, off, &cur->srange);
	if (!leaf && !sym)
		return 0;

	memset(&fr[0], 0, sizeof(fr[0]));
	if (leaf) {
		fr[0].file = file_at(t, leaf->file);
		fr[0].line = leaf->line;
		fr[0].column = leaf->column;
		fr[0].discriminator = leaf->discriminator;
	}
	n = 1;
	s = leaf ? leaf->scope : SYMT_NONE;
	if (s < h->n_scopes) {
		const struct symt_scope *sc = &t->scopes[s];

		frame_func(t, sc->func, &fr[0]);
		fr[0].entry = entry_at(t, sc->entry);
		/* Walk up the inline chain: each caller frame's location is
		 * the call site recorded in its callee's scope. */
		while (sc->parent < h->n_scopes && steps++ < SYM_MAX_FRAMES) {
			const struct symt_scope *up = &t->scopes[sc->parent];
			struct sym_frame *f;

			fr[n - 1].flags |= SYM_FRAME_INLINED;
			if (n == max) {
				fr[n - 1].flags |= SYM_FRAME_TRUNCATED;
				break;
			}
			f = &fr[n++];
			memset(f, 0, sizeof(*f));
			frame_func(t, up->func, f);
			f->file = file_at(t, sc->call_file);
			f->line = sc->call_line;
			f->column = sc->call_column;
			f->entry = entry_at(t, up->entry);
			sc = up;
		}
	}
	/* The symbol belongs to the outermost frame; a cut chain has none. */
	if (sym && !(fr[n - 1].flags & SYM_FRAME_TRUNCATED)) {
		struct sym_frame *f = &fr[n - 1];

		f->symbol = str_at(t, sym->name);
		f->symbol_addr = h->base + sym->addr;
		f->symbol_size = sym->size;
		if (sym->flags & SYMI_SYM_OBJECT)
			f->flags |= SYM_FRAME_SYMBOL_OBJECT;
		/* No DWARF function: the symbol names the frame. */
		if (!f->name && !f->linkage_name) {
			if (sym->demangled) {
				f->linkage_name = f->symbol;
				f->demangled = str_at(t, sym->demangled);
			}
			f->name = f->symbol;
			f->entry = f->symbol_addr;
			f->flags |= SYM_FRAME_SYMTAB;
			if (!f->file)
				f->file = str_at(t, sym->file);
		}
	}
	return n;
}

int sym_table_lookup(const struct sym_table *t, uint64_t addr,
		     struct sym_frame *frames, size_t max, size_t *n)
{
	struct symi_cursor cur = SYMI_CURSOR_INIT;

	if (n)
		*n = 0;
	if (!t || !frames || !max || !n)
		return -EINVAL;
	*n = symi_table_lookup(t, addr, frames, max, &cur);
	return 0;
}

/* symi_batch_lookup()'s view of one table: it covers everything. */
static int whole_table(void *ctx, uint64_t addr, const struct sym_table **t,
		       uint64_t *start, uint64_t *end)
{
	*t = ctx;
	*start = 0;
	*end = UINT64_MAX;
	return 0;
}

int sym_table_lookup_batch(const struct sym_table *t, const uint64_t *addrs,
			   size_t count, sym_frames_fn fn, void *ctx)
{
	if (!t || (!addrs && count) || !fn)
		return -EINVAL;
	return symi_batch_lookup(addrs, count, whole_table, (void *)t, fn,
				 ctx);
}

int sym_table_find_symbol(const struct sym_table *t, const char *name,
			  uint64_t *addr, uint64_t *size)
{
	const struct symt_sym *best = NULL;

	if (!t || !name || !addr)
		return -EINVAL;
	/* Symbols are sorted by address and, per address, best first; so
	 * among equal names the first seen per address is preferred, and
	 * across addresses global/sized beats the rest. */
	for (uint32_t i = 0; i < t->h->n_syms; i++) {
		const struct symt_sym *s = &t->syms[i];
		const char *nm = str_at(t, s->name);

		if (!nm || strcmp(nm, name) != 0)
			continue;
		if (!best || ((s->flags & SYMI_SYM_GLOBAL) &&
			      !(best->flags & SYMI_SYM_GLOBAL)) ||
		    ((s->flags & SYMI_SYM_SIZED) &&
		     !(best->flags & SYMI_SYM_SIZED) &&
		     (s->flags & SYMI_SYM_GLOBAL) ==
			     (best->flags & SYMI_SYM_GLOBAL)))
			best = s;
	}
	if (!best)
		return -SYM_E_NOTFOUND;
	*addr = t->h->base + best->addr;
	if (size)
		*size = best->size;
	return 0;
}
