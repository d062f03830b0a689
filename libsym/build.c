/*
 * build.c - the table builder: collect, deduplicate, sweep.
 *
 * The DWARF walker (dwarf.c) and the symbol reader (symtab.c) feed the
 * builder with raw facts: strings, files, functions, scopes with their
 * address ranges and nesting depth, line-table rows, and symbols.
 * symi_builder_finish() turns them into a table's decoded content
 * (struct symi_tab) and has pack.c encode it (format.h):
 *
 *  1. Scope ranges are sorted (start ascending, end descending, depth
 *     ascending) and swept with a stack, so every address gets its
 *     innermost covering scope.  Inline trees nest, so the stack top is the
 *     innermost scope; partial overlaps from bad DWARF only make the answer
 *     imprecise, never unsafe.
 *  2. Line rows are sorted by start; where rows of different sequences
 *     overlap, the row added first keeps the overlapped part.
 *  3. The two segment lists are merged into one list of ranges, each with
 *     a leaf (innermost scope + line row).  Neighbours with equal leaves
 *     are coalesced; holes get an empty leaf.
 *
 * Invariants: strings are interned (offset 0 is ""); files and functions
 * are deduplicated; nothing outside an executable section is kept, which
 * drops gc-sections tombstones (address 0, -1 or -2) the way
 * llvm-symbolizer ignores them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/version.h>

#include "internal.h"
#include "format.h"
#include "base.h"

struct siv {
	uint64_t lo, hi;
	uint32_t scope, depth;
};

struct liv {
	uint64_t lo, hi;
	uint32_t file, line, column, discriminator;
	uint32_t seq;
};

struct bsym {
	uint64_t addr, size;
	uint64_t limit;		/* sizeless: end of its section's reach */
	uint32_t name, file, flags;
	uint32_t seq;
};

struct seg {
	uint64_t lo, hi;
	uint32_t idx;		/* scope index or liv index */
};

struct symi_builder {
	bool quick;		/* symi_builder_quick() */
	/* symi_builder_only(): the addresses the table must answer,
	 * ascending, link-time; NULL: all */
	uint64_t *only;
	size_t n_only;
	size_t only_at;		/* symi_builder_wants()'s last answer */
	/* struct sym_module_opts .spelling and its context, or NULL */
	sym_spelling_fn spelling;
	void *spelling_ctx;
	/* string blob and its hash set of offsets (0 = empty slot) */
	char *str;
	size_t str_len, str_cap;
	uint32_t *str_set;
	size_t str_set_cap, str_count;

	struct symt_func *funcs;
	size_t n_funcs, cap_funcs;
	uint32_t *func_set;	/* func index + 1, 0 = empty */
	size_t func_set_cap;

	struct symt_file *files;
	size_t n_files, cap_files;
	uint32_t *file_set;	/* file index + 1 */
	size_t file_set_cap;

	struct symt_scope *scopes;
	uint64_t *scope_entry;
	size_t n_scopes, cap_scopes, cap_entry;

	struct siv *sivs;
	size_t n_sivs, cap_sivs;
	struct liv *livs;
	size_t n_livs, cap_livs;
	bool livs_unsorted;	/* a row started below its predecessor */
	struct bsym *syms;
	size_t n_syms, cap_syms;
	struct symi_span *text;
	size_t n_text, cap_text;
	struct symi_span *secs;	/* allocated sections, for sizeless symbols */
	size_t n_secs, cap_secs;
	size_t text_last;	/* span of the last hit */
	bool text_sorted;
	bool dwarf;
	bool gopclntab;
	bool kallsyms;
	/* A Linux kernel (symi_builder_kernel()): addresses are offsets
	 * from its _text, whose link-time address is kernel_text. */
	bool kernel;
	uint64_t kernel_text;
	uint32_t tables;	/* enum symi_tables */
	/* The first failure of an adding call, which
	 * symi_builder_finish() returns: a caller that goes on without
	 * what it added (a file name is optional to the DWARF walker) does
	 * not turn -ENOMEM into a table that silently lacks it. */
	int err;
};

/* The hash of the sets below: eight bytes a step (the records hashed
 * whole are 16 to 40 bytes, the strings mostly longer), each step
 * folding the high bits down, and murmur3's finalizer, since the sets
 * index by the low bits.  Byte-wise FNV-1a cost 2% of a build. */
static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	uint64_t w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, sizeof(w));
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
	}
	for (; n; s++, n--)
		h = (h ^ *s) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}
#define HASH_INIT 0xcbf29ce484222325ULL

/* Record a failed allocation (see struct symi_builder's err). */
static int nomem(struct symi_builder *b)
{
	if (!b->err)
		b->err = -ENOMEM;
	return -ENOMEM;
}

/* The same, for the calls that return an index or SYMI_NONE. */
static uint32_t nomem_idx(struct symi_builder *b)
{
	nomem(b);
	return SYMI_NONE;
}

void symi_builder_quick(struct symi_builder *b)
{
	b->quick = true;
}

/* The index of the first of the @n ascending @a at or above @x (@n when
 * none is). */
static size_t addrs_at(const uint64_t *a, size_t n, uint64_t x)
{
	size_t l = 0, r = n;

	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (a[m] < x)
			l = m + 1;
		else
			r = m;
	}
	return l;
}

bool symi_addrs_hold(const uint64_t *a, size_t n, uint64_t lo, uint64_t hi)
{
	size_t l = addrs_at(a, n, lo);

	return l < n && a[l] < hi;
}

int symi_builder_only(struct symi_builder *b, const uint64_t *addrs,
		      size_t n)
{
	uint64_t *v = symi_calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return nomem(b);
	if (n)
		memcpy(v, addrs, n * sizeof(*v));
	free(b->only);
	b->only = v;
	b->n_only = n;
	b->only_at = 0;
	return 0;
}

bool symi_builder_wants(struct symi_builder *b, uint64_t lo, uint64_t hi)
{
	const uint64_t *a = b->only;
	size_t n = b->n_only, i = b->only_at;

	/* Without text sections the code window is the rows' and the
	 * scopes' (code_window()): all of them count. */
	if (!a || !b->n_text)
		return true;
	/* The rows of a line program come in address order: the index
	 * found for the last @lo, or the next, is most often this one's. */
	if (i < n && a[i] < lo && (i + 1 == n || a[i + 1] >= lo))
		i++;
	else if (i > n || (i && a[i - 1] >= lo) || (i < n && a[i] < lo))
		i = addrs_at(a, n, lo);
	b->only_at = i;
	return i < n && a[i] < hi;
}

void symi_builder_spelling(struct symi_builder *b, sym_spelling_fn fn,
			   void *ctx)
{
	b->spelling = fn;
	b->spelling_ctx = ctx;
}

/* Whether the spelling callback accepts @dem for @raw. */
static bool spelled_same(const struct symi_builder *b, const char *raw,
			 const char *dem)
{
	return b->spelling && b->spelling(raw, dem, b->spelling_ctx) != 0;
}

int symi_builder_new(struct symi_builder **out)
{
	struct symi_builder *b;

	*out = NULL;
	b = symi_calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	/* Offset 0 is the empty string. */
	b->str = symi_malloc(4096);
	if (!b->str) {
		free(b);
		return -ENOMEM;
	}
	b->str_cap = 4096;
	b->str[0] = '\0';
	b->str_len = 1;
	*out = b;
	return 0;
}

void symi_builder_free(struct symi_builder *b)
{
	if (!b)
		return;
	free(b->str);
	free(b->str_set);
	free(b->funcs);
	free(b->func_set);
	free(b->files);
	free(b->file_set);
	free(b->scopes);
	free(b->scope_entry);
	free(b->sivs);
	free(b->livs);
	free(b->syms);
	free(b->text);
	free(b->secs);
	free(b->only);
	free(b);
}

/* Rehash an open-addressing set of u32 values (0 = empty) whose keys are
 * computed by keyfn.  New capacity is twice the old (min 1024). */
static int set_grow(uint32_t **set, size_t *cap,
		    uint64_t (*keyfn)(struct symi_builder *, uint32_t),
		    struct symi_builder *b)
{
	size_t ncap = *cap ? *cap * 2 : 1024;
	uint32_t *ns = symi_calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < *cap; i++) {
		uint32_t v = (*set)[i];
		size_t j;

		if (!v)
			continue;
		j = keyfn(b, v) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = v;
	}
	free(*set);
	*set = ns;
	*cap = ncap;
	return 0;
}

static uint64_t str_key(struct symi_builder *b, uint32_t off)
{
	const char *s = b->str + off;

	return hash_bytes(s, strlen(s), HASH_INIT);
}

uint32_t symi_builder_str(struct symi_builder *b, const char *s)
{
	size_t n, j, need;
	uint64_t h;
	uint32_t off;

	if (!s || !s[0])
		return 0;
	n = strlen(s);
	if ((b->str_count + 1) * 2 > b->str_set_cap &&
	    set_grow(&b->str_set, &b->str_set_cap, str_key, b))
		return nomem_idx(b);
	h = hash_bytes(s, n, HASH_INIT);
	j = h & (b->str_set_cap - 1);
	while (b->str_set[j]) {
		const char *t = b->str + b->str_set[j];

		if (memcmp(t, s, n + 1) == 0)
			return b->str_set[j];
		j = (j + 1) & (b->str_set_cap - 1);
	}
	/* Strings live in a u32-addressed blob. */
	if (!symi_add(b->str_len, n + 1, &need) || need >= UINT32_MAX)
		return nomem_idx(b);
	if (need > b->str_cap) {
		size_t cap = b->str_cap;

		if (symi_grow((void **)&b->str, &cap, need, 1))
			return nomem_idx(b);
		b->str_cap = cap;
	}
	off = (uint32_t)b->str_len;
	memcpy(b->str + off, s, n + 1);
	b->str_len = need;
	b->str_set[j] = off;
	b->str_count++;
	return off;
}

static uint64_t func_hash(const struct symt_func *f)
{
	return hash_bytes(f, sizeof(*f), HASH_INIT);
}

static uint64_t func_key(struct symi_builder *b, uint32_t v)
{
	struct symt_func f = b->funcs[v - 1];

	f.demangled = 0;
	f.outer = 0;
	f.flags &= ~(uint32_t)SYMT_FUNC_SPELLING;
	return func_hash(&f);
}

uint32_t symi_builder_func(struct symi_builder *b, const char *name,
			   const char *linkage, uint32_t decl_file,
			   uint32_t decl_line)
{
	struct symi_func_in in = {
		.name = name, .linkage = linkage, .decl_file = decl_file,
		.decl_line = decl_line,
	};

	return symi_builder_func_in(b, &in);
}

uint32_t symi_builder_func_in(struct symi_builder *b,
			      const struct symi_func_in *in)
{
	struct symt_func f = { 0 };
	char *dem;
	size_t j;
	uint64_t h;

	f.name = symi_builder_str(b, in->name);
	f.linkage = symi_builder_str(b, in->linkage);
	f.decl_file = in->decl_file < b->n_files ? in->decl_file : SYMT_NONE;
	f.decl_line = in->decl_line;
	f.flags = in->flags;
	f.eu = symi_builder_str(b, in->eu);
	if (f.name == SYMI_NONE || f.linkage == SYMI_NONE || f.eu == SYMI_NONE)
		return SYMI_NONE;
	if ((b->n_funcs + 1) * 2 > b->func_set_cap &&
	    set_grow(&b->func_set, &b->func_set_cap, func_key, b))
		return nomem_idx(b);
	h = func_hash(&f);
	j = h & (b->func_set_cap - 1);
	while (b->func_set[j] && !in->unique) {
		const struct symt_func *g = &b->funcs[b->func_set[j] - 1];

		if (g->name == f.name && g->linkage == f.linkage &&
		    g->decl_file == f.decl_file &&
		    g->decl_line == f.decl_line &&
		    (g->flags & ~(uint32_t)SYMT_FUNC_SPELLING) == f.flags &&
		    g->eu == f.eu)
			return b->func_set[j] - 1;
		j = (j + 1) & (b->func_set_cap - 1);
	}
	if (b->n_funcs >= SYMT_NONE - 1 ||
	    symi_grow((void **)&b->funcs, &b->cap_funcs, b->n_funcs + 1,
		      sizeof(f)))
		return nomem_idx(b);
	/* Demangle once per distinct function, here, never at lookup. */
	if (f.linkage) {
		dem = symi_demangle(in->linkage);
		if (dem) {
			if (spelled_same(b, in->linkage, dem))
				f.flags |= SYMT_FUNC_SPELLING;
			f.demangled = symi_builder_str(b, dem);
			free(dem);
			if (f.demangled == SYMI_NONE)
				return SYMI_NONE;
		}
	}
	if (in->outer) {
		f.outer = symi_builder_str(b, in->outer);
		if (f.outer == SYMI_NONE)
			return SYMI_NONE;
	}
	b->funcs[b->n_funcs] = f;
	++b->n_funcs;
	/* A unique one is not in the set: nothing is merged with it. */
	if (!in->unique)
		b->func_set[j] = (uint32_t)b->n_funcs;
	return (uint32_t)(b->n_funcs - 1);
}

int symi_builder_func_outer(struct symi_builder *b, uint32_t f,
			    const char *outer)
{
	uint32_t off;

	if (f >= b->n_funcs || b->funcs[f].outer)
		return 0;
	off = symi_builder_str(b, outer);
	if (off == SYMI_NONE)
		return -ENOMEM;
	b->funcs[f].outer = off;
	return 0;
}

void symi_builder_note_tables(struct symi_builder *b, uint32_t tables)
{
	b->tables |= tables;
}

static uint64_t file_key(struct symi_builder *b, uint32_t v)
{
	return hash_bytes(&b->files[v - 1], sizeof(b->files[0]), HASH_INIT);
}

uint32_t symi_builder_oom(struct symi_builder *b)
{
	return nomem_idx(b);
}

uint32_t symi_builder_file(struct symi_builder *b, const char *path,
			   uint32_t rel)
{
	struct symt_file f = { .name = symi_builder_str(b, path) };
	size_t j;

	if (f.name == SYMI_NONE)
		return SYMI_NONE;
	/* rel counts bytes of @path: anything longer is no relative path. */
	f.rel = f.name && rel < strlen(path) ? rel : 0;
	if ((b->n_files + 1) * 2 > b->file_set_cap &&
	    set_grow(&b->file_set, &b->file_set_cap, file_key, b))
		return nomem_idx(b);
	j = hash_bytes(&f, sizeof(f), HASH_INIT) & (b->file_set_cap - 1);
	while (b->file_set[j]) {
		const struct symt_file *g = &b->files[b->file_set[j] - 1];

		if (g->name == f.name && g->rel == f.rel)
			return b->file_set[j] - 1;
		j = (j + 1) & (b->file_set_cap - 1);
	}
	if (b->n_files >= SYMT_NONE - 1 ||
	    symi_grow((void **)&b->files, &b->cap_files, b->n_files + 1,
		      sizeof(*b->files)))
		return nomem_idx(b);
	b->files[b->n_files] = f;
	b->file_set[j] = (uint32_t)++b->n_files;
	return (uint32_t)(b->n_files - 1);
}

uint32_t symi_builder_scope(struct symi_builder *b, uint32_t parent,
			    uint32_t func, uint32_t call_file,
			    uint32_t call_line, uint32_t call_column,
			    uint64_t entry, uint32_t flags)
{
	struct symt_scope *s;

	if (b->n_scopes >= SYMT_NONE - 1 ||
	    symi_grow((void **)&b->scopes, &b->cap_scopes, b->n_scopes + 1,
		      sizeof(*b->scopes)) ||
	    symi_grow((void **)&b->scope_entry, &b->cap_entry,
		      b->n_scopes + 1, sizeof(*b->scope_entry)))
		return nomem_idx(b);
	s = &b->scopes[b->n_scopes];
	s->parent = parent;
	s->func = func;
	s->call_file = call_file;
	s->call_line = call_line;
	s->call_column = call_column;
	s->entry = 0;
	s->flags = flags;
	b->scope_entry[b->n_scopes] = entry;
	return (uint32_t)b->n_scopes++;
}

static int span_cmp(const void *a, const void *b)
{
	const struct symi_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void symi_span_sort(struct symi_span *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), span_cmp);
}

long symi_span_find(const struct symi_span *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && addr < v[lo - 1].hi ? (long)lo - 1 : -1;
}

int symi_builder_add_text(struct symi_builder *b, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return 0;
	if (symi_grow((void **)&b->text, &b->cap_text, b->n_text + 1,
		      sizeof(*b->text)))
		return nomem(b);
	b->text[b->n_text].lo = lo;
	b->text[b->n_text].hi = hi;
	b->n_text++;
	b->text_sorted = false;
	return 0;
}

static void text_sort(struct symi_builder *b)
{
	size_t i, o = 0;

	if (b->text_sorted)
		return;
	symi_span_sort(b->text, b->n_text);
	for (i = 0; i < b->n_text; i++) {
		if (o && b->text[i].lo <= b->text[o - 1].hi) {
			if (b->text[i].hi > b->text[o - 1].hi)
				b->text[o - 1].hi = b->text[i].hi;
		} else {
			b->text[o++] = b->text[i];
		}
	}
	b->n_text = o;
	b->text_sorted = true;
}

bool symi_builder_in_text(const struct symi_builder *cb, uint64_t addr)
{
	struct symi_builder *b = (struct symi_builder *)cb;
	long i;

	if (!b->n_text)
		return addr != 0 && addr < UINT64_MAX - 1;
	text_sort(b);
	/* Rows arrive in address order: the last span usually holds. */
	if (b->text_last < b->n_text && b->text[b->text_last].lo <= addr &&
	    addr < b->text[b->text_last].hi)
		return true;
	i = symi_span_find(b->text, b->n_text, addr);
	if (i < 0)
		return false;
	b->text_last = (size_t)i;
	return true;
}

/*
 * Is @lo in a text section?  Then clip *@hi to that section's end, so
 * that no row or scope range reaches past the text (a corrupt high_pc, a
 * row at a sequence's end): the code window (code_window()) is then the
 * text sections' and the symbols', the same for a lazy table, which is
 * offered only some of the ranges, as for the full one.
 */
static bool text_clip(struct symi_builder *b, uint64_t lo, uint64_t *hi)
{
	if (!symi_builder_in_text(b, lo))
		return false;
	if (b->n_text && *hi > b->text[b->text_last].hi)
		*hi = b->text[b->text_last].hi;
	return true;
}

int symi_builder_add_section(struct symi_builder *b, uint64_t lo,
			     uint64_t hi)
{
	if (hi <= lo)
		return 0;
	if (symi_grow((void **)&b->secs, &b->cap_secs, b->n_secs + 1,
		      sizeof(*b->secs)))
		return nomem(b);
	b->secs[b->n_secs].lo = lo;
	b->secs[b->n_secs].hi = hi;
	b->n_secs++;
	return 0;
}

/* End of the section holding @addr (sorted b->secs), or @addr if none. */
static uint64_t section_end(const struct symi_builder *b, uint64_t addr)
{
	long i = symi_span_find(b->secs, b->n_secs, addr);

	return i < 0 ? addr : b->secs[i].hi;
}

int symi_builder_scope_range(struct symi_builder *b, uint32_t scope,
			     uint32_t depth, uint64_t lo, uint64_t hi)
{
	struct siv *v;

	if (hi <= lo || !text_clip(b, lo, &hi))
		return 0;
	if (symi_grow((void **)&b->sivs, &b->cap_sivs, b->n_sivs + 1,
		      sizeof(*b->sivs)))
		return nomem(b);
	v = &b->sivs[b->n_sivs++];
	v->lo = lo;
	v->hi = hi;
	v->scope = scope;
	v->depth = depth;
	return 0;
}

size_t symi_builder_lines_mark(const struct symi_builder *b)
{
	return b->n_livs;
}

/* livs_unsorted may stay set by a row taken back: it only costs a sort. */
void symi_builder_lines_undo(struct symi_builder *b, size_t mark)
{
	if (mark < b->n_livs)
		b->n_livs = mark;
}

int symi_builder_line(struct symi_builder *b, uint64_t lo, uint64_t hi,
		      uint32_t file, uint32_t line, uint32_t column,
		      uint32_t discriminator)
{
	struct liv *v;

	if (hi <= lo || !text_clip(b, lo, &hi) ||
	    !symi_builder_wants(b, lo, hi))
		return 0;
	if (b->n_livs == b->cap_livs &&
	    (b->n_livs >= UINT32_MAX ||
	     symi_grow((void **)&b->livs, &b->cap_livs, b->n_livs + 1,
		       sizeof(*b->livs))))
		return nomem(b);
	v = &b->livs[b->n_livs];
	if (b->n_livs && lo < v[-1].lo)
		b->livs_unsorted = true;
	v->lo = lo;
	v->hi = hi;
	v->file = file;
	v->line = line;
	v->column = column;
	v->discriminator = discriminator;
	v->seq = (uint32_t)b->n_livs++;
	return 0;
}

int symi_builder_add_symbol(struct symi_builder *b, uint64_t addr,
			    uint64_t size, const char *name, const char *file,
			    uint32_t flags)
{
	struct bsym *s;
	uint32_t off, foff;

	if (!name || !name[0])
		return 0;
	off = symi_builder_str(b, name);
	foff = symi_builder_str(b, file);
	if (off == SYMI_NONE || foff == SYMI_NONE)
		return -ENOMEM;
	if (b->n_syms >= UINT32_MAX ||
	    symi_grow((void **)&b->syms, &b->cap_syms, b->n_syms + 1,
		      sizeof(*b->syms)))
		return nomem(b);
	s = &b->syms[b->n_syms];
	s->addr = addr;
	s->size = size > UINT32_MAX ? UINT32_MAX : size;
	s->name = off;
	s->file = foff;
	s->flags = flags | (size ? SYMI_SYM_SIZED : 0);
	s->seq = (uint32_t)b->n_syms++;
	return 0;
}

void symi_builder_set_dwarf(struct symi_builder *b)
{
	b->dwarf = true;
}

void symi_builder_kernel(struct symi_builder *b, uint64_t text)
{
	if (b->kernel && b->kernel_text != text) {
		symi_warn("table: two kernel _text addresses, 0x%llx and 0x%llx: the first is kept",
			  (unsigned long long)b->kernel_text,
			  (unsigned long long)text);
		return;
	}
	b->kernel = true;
	b->kernel_text = text;
}

bool symi_builder_kernel_text(const struct symi_builder *b, uint64_t *text)
{
	if (b->kernel)
		*text = b->kernel_text;
	return b->kernel;
}

void symi_builder_set_gopclntab(struct symi_builder *b)
{
	b->gopclntab = true;
}

void symi_builder_set_kallsyms(struct symi_builder *b)
{
	b->kallsyms = true;
}

/*
 * Sorting and sweeping.
 */

static int siv_cmp(const void *a, const void *b)
{
	const struct siv *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->scope < y->scope ? -1 : x->scope > y->scope;
}

static int liv_cmp(const void *a, const void *b)
{
	const struct liv *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Symbol rank at one address: lower is better.  Like eu-addr2line:
 * sized over sizeless, global over weak over local, functions over
 * objects over untyped; then the first one read. */
static unsigned sym_rank(const struct bsym *s)
{
	unsigned r = 0;

	if (!(s->flags & SYMI_SYM_SIZED))
		r += 8;
	if (!(s->flags & SYMI_SYM_GLOBAL))
		r += (s->flags & SYMI_SYM_WEAK) ? 2 : 4;
	if (!(s->flags & SYMI_SYM_FUNC))
		r += (s->flags & SYMI_SYM_OBJECT) ? 1 : 0;
	return r;
}

static int bsym_cmp(const void *a, const void *b)
{
	const struct bsym *x = a, *y = b;
	unsigned rx, ry;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	rx = sym_rank(x);
	ry = sym_rank(y);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct segs {
	struct seg *v;
	size_t n, cap;
};

static int seg_push(struct segs *s, uint64_t lo, uint64_t hi, uint32_t idx)
{
	if (hi <= lo)
		return 0;
	if (s->n && s->v[s->n - 1].hi == lo && s->v[s->n - 1].idx == idx) {
		s->v[s->n - 1].hi = hi;
		return 0;
	}
	if (symi_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->n].lo = lo;
	s->v[s->n].hi = hi;
	s->v[s->n].idx = idx;
	s->n++;
	return 0;
}

/*
 * Clip each scope's ranges to what is left of its parent's (DWARF tables
 * only: see the caller): in valid DWARF an inlined instance's code lies
 * within its caller's, and where it does not (a compiler's slip, corrupt
 * input) the part outside is dropped.  So a function none of whose ranges holds
 * an address has no scope there, and the lazy walk may pass over its
 * subtree (dwarf.c, cold_function()).  A scope's own ranges are joined
 * where they overlap or touch, which answers the same (sweep_scopes()
 * orders ranges by their values alone).  A parent is made before its
 * children, so parents come first.  Returns 0 or -ENOMEM.
 */
static int siv_scope_cmp(const void *a, const void *b)
{
	const struct siv *x = a, *y = b;

	if (x->scope != y->scope)
		return x->scope < y->scope ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Append @x to @out (growing it). */
static int siv_put(struct siv **out, size_t *n, size_t *cap, struct siv x)
{
	if (symi_grow((void **)out, cap, *n + 1, sizeof(**out)))
		return -ENOMEM;
	(*out)[(*n)++] = x;
	return 0;
}

static int nest_scopes(struct symi_builder *b)
{
	struct siv *v = b->sivs, *out = NULL, *own = NULL;
	size_t *first = NULL, *cnt = NULL, n = b->n_sivs, o = 0, cap = 0;
	size_t nown = 0, capown = 0, i, j;
	bool nested = false, sorted = true;

	for (i = 0; i < n && !nested; i++)
		nested = v[i].scope < b->n_scopes &&
			 b->scopes[v[i].scope].parent != SYMI_NONE;
	if (!nested)
		return 0;
	for (i = 1; i < n && sorted; i++)
		sorted = siv_scope_cmp(&v[i - 1], &v[i]) <= 0;
	if (!sorted)
		qsort(v, n, sizeof(*v), siv_scope_cmp);
	first = symi_calloc(b->n_scopes ? b->n_scopes : 1, sizeof(*first));
	cnt = symi_calloc(b->n_scopes ? b->n_scopes : 1, sizeof(*cnt));
	if (!first || !cnt)
		goto fail;
	for (i = 0; i < n; i = j) {
		uint32_t s = v[i].scope;
		uint32_t p = s < b->n_scopes ? b->scopes[s].parent : SYMI_NONE;
		size_t k = o, a, e;

		/* The scope's own ranges, joined. */
		nown = 0;
		for (j = i; j < n && v[j].scope == s; j++) {
			if (nown && v[j].lo <= own[nown - 1].hi) {
				if (v[j].hi > own[nown - 1].hi)
					own[nown - 1].hi = v[j].hi;
			} else if (siv_put(&own, &nown, &capown, v[j])) {
				goto fail;
			}
		}
		if (p == SYMI_NONE || p >= s) {
			for (a = 0; a < nown; a++)
				if (siv_put(&out, &o, &cap, own[a]))
					goto fail;
		} else {
			/* Intersected with the parent's spans, both sorted
			 * and disjoint. */
			size_t pa = first[p], pe = pa + cnt[p];

			for (a = 0, e = pa; a < nown && e < pe;) {
				struct siv x = own[a];

				if (out[e].lo > x.lo)
					x.lo = out[e].lo;
				if (out[e].hi < x.hi)
					x.hi = out[e].hi;
				if (x.lo < x.hi && siv_put(&out, &o, &cap, x))
					goto fail;
				if (own[a].hi < out[e].hi)
					a++;
				else
					e++;
			}
		}
		if (s < b->n_scopes) {
			first[s] = k;
			cnt[s] = o - k;
		}
	}
	free(b->sivs);
	b->sivs = out;
	b->n_sivs = o;
	b->cap_sivs = cap;
	free(own);
	free(first);
	free(cnt);
	return 0;
fail:
	free(out);
	free(own);
	free(first);
	free(cnt);
	return nomem(b);
}

/* Innermost scope per address, as non-overlapping ascending segments. */
static int sweep_scopes(struct symi_builder *b, struct segs *out)
{
	size_t *stack = NULL, sp = 0, cap = 0;
	uint64_t pos = 0;
	int err = 0;

	if (b->n_sivs > 1)
		qsort(b->sivs, b->n_sivs, sizeof(*b->sivs), siv_cmp);
	for (size_t i = 0; i < b->n_sivs; i++) {
		const struct siv *iv = &b->sivs[i];

		while (sp) {
			const struct siv *top = &b->sivs[stack[sp - 1]];

			if (top->hi > iv->lo)
				break;
			if (pos < top->hi) {
				err = seg_push(out, pos, top->hi, top->scope);
				if (err)
					goto out;
				pos = top->hi;
			}
			sp--;
		}
		if (sp && pos < iv->lo) {
			err = seg_push(out, pos, iv->lo,
				       b->sivs[stack[sp - 1]].scope);
			if (err)
				goto out;
		}
		err = symi_grow((void **)&stack, &cap, sp + 1, sizeof(*stack));
		if (err)
			goto out;
		stack[sp++] = i;
		pos = iv->lo;
	}
	while (sp) {
		const struct siv *top = &b->sivs[stack[--sp]];

		if (pos < top->hi) {
			err = seg_push(out, pos, top->hi, top->scope);
			if (err)
				goto out;
			pos = top->hi;
		}
	}
out:
	free(stack);
	return err;
}

/*
 * Make the line rows non-overlapping and ascending, in place.  Rows
 * usually arrive sorted (sequence after sequence, CU after CU), and the
 * sort is skipped then; it costs as much as the rest of the build.
 */
static void sweep_lines(struct symi_builder *b)
{
	uint64_t end = 0;
	size_t o = 0;

	if (b->livs_unsorted && b->n_livs > 1)
		qsort(b->livs, b->n_livs, sizeof(*b->livs), liv_cmp);
	for (size_t i = 0; i < b->n_livs; i++) {
		struct liv l = b->livs[i];

		if (o && l.lo < end)
			l.lo = end;
		if (l.lo >= l.hi)
			continue;
		b->livs[o++] = l;
		end = l.hi;
	}
	b->n_livs = o;
}

struct ranges {
	uint64_t *addr;
	struct symt_leaf *leaf;
	size_t n, cap_a, cap_l;
};

static bool leaf_eq(const struct symt_leaf *a, const struct symt_leaf *b)
{
	return a->scope == b->scope && a->file == b->file &&
	       a->line == b->line && a->column == b->column &&
	       a->discriminator == b->discriminator;
}

static int range_push(struct ranges *r, uint64_t addr,
		      const struct symt_leaf *leaf)
{
	if (r->n && leaf_eq(&r->leaf[r->n - 1], leaf))
		return 0;
	if (r->n && r->addr[r->n - 1] == addr) {
		r->leaf[r->n - 1] = *leaf;
		return 0;
	}
	if (symi_grow((void **)&r->addr, &r->cap_a, r->n + 1,
		      sizeof(*r->addr)) ||
	    symi_grow((void **)&r->leaf, &r->cap_l, r->n + 1,
		      sizeof(*r->leaf)))
		return -ENOMEM;
	r->addr[r->n] = addr;
	r->leaf[r->n] = *leaf;
	r->n++;
	return 0;
}

static const struct symt_leaf empty_leaf = {
	.scope = SYMT_NONE, .file = SYMT_NONE,
};

/* Merge scope segments and (swept) line rows into ranges with leaves. */
static int merge(struct symi_builder *b, const struct segs *S,
		 struct ranges *r)
{
	const struct liv *L = b->livs;
	size_t i = 0, j = 0, nl = b->n_livs;
	uint64_t pos;
	int err;

	if (!S->n && !nl)
		return 0;
	pos = !S->n ? L[0].lo : !nl ? S->v[0].lo :
	      S->v[0].lo < L[0].lo ? S->v[0].lo : L[0].lo;
	for (;;) {
		struct symt_leaf leaf = empty_leaf;
		uint64_t next = UINT64_MAX;

		while (i < S->n && S->v[i].hi <= pos)
			i++;
		while (j < nl && L[j].hi <= pos)
			j++;
		if (i == S->n && j == nl)
			break;
		if (i < S->n) {
			if (S->v[i].lo <= pos) {
				leaf.scope = S->v[i].idx;
				next = S->v[i].hi;
			} else {
				next = S->v[i].lo;
			}
		}
		if (j < nl) {
			const struct liv *l = &L[j];

			if (l->lo <= pos) {
				leaf.file = l->file;
				leaf.line = l->line;
				leaf.column = l->column;
				leaf.discriminator = l->discriminator;
				if (l->hi < next)
					next = l->hi;
			} else if (l->lo < next) {
				next = l->lo;
			}
		}
		err = range_push(r, pos, &leaf);
		if (err)
			return err;
		pos = next;
	}
	/* Terminator: nothing is known past the last range. */
	return range_push(r, pos, &empty_leaf);
}

/* The converter version written into tables.  SYM_TEST_CONVERTER_VERSION
 * (tests only) fakes a table from another converter, which every reader
 * must then treat as stale and rebuild. */
static uint32_t converter_version(void)
{
	const char *e = getenv("SYM_TEST_CONVERTER_VERSION");

	return e && *e ? (uint32_t)strtoul(e, NULL, 10) :
			 SYMI_CONVERTER_VERSION;
}

/*
 * Which symbol names each address: eu-addr2line's rules
 * (dwfl_module_addrsym()), precomputed per address range.
 *  - Sized symbols that cover the address compete in symbol-table order:
 *    a later one wins when it starts closer or binds more strongly
 *    (global > weak > local); at an equal start, a smaller or more
 *    strongly bound one wins.
 *  - Only when no sized symbol covers it, a sizeless symbol at the
 *    highest start at or below the address names it, if that start is not
 *    below the end of any sized symbol seen before ("min_label"), and the
 *    address is in the symbol's section (SHN_ABS: the exact address only).
 *    Among several such, the last in table order wins.
 * syms[] are sorted by address; @out gets ascending (addr, index) pairs.
 */
#define SWEEP_ACTIVE_MAX 256

struct srange {
	uint64_t addr;
	uint32_t idx;
};

struct sranges {
	struct srange *v;
	size_t n, cap;
};

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static int bind_value(uint32_t flags)
{
	if (flags & SYMI_SYM_GLOBAL)
		return 3;
	if (flags & SYMI_SYM_WEAK)
		return 2;
	return 1;
}

static bool eu_better(const struct bsym *cur, const struct bsym *s)
{
	int bc = bind_value(cur->flags), bs = bind_value(s->flags);

	if (cur->addr < s->addr || bc < bs)
		return true;
	return cur->addr == s->addr &&
	       ((cur->size > s->size && bc <= bs) ||
		(cur->size >= s->size && bc < bs));
}

static int sweep_symbols(const struct bsym *syms, size_t n, uint64_t end,
			 struct sranges *out)
{
	uint64_t *pts = NULL, ml = 0, V = 0;
	size_t *act = NULL, nact = 0, npts = 0, k = 0, g0 = 0, g1 = 0, i;
	bool seen = false;
	int err = -ENOMEM;

	if (!n)
		return 0;
	pts = symi_calloc(2 * n, sizeof(*pts));
	act = symi_calloc(SWEEP_ACTIVE_MAX, sizeof(*act));
	if (!pts || !act)
		goto out;
	for (i = 0; i < n; i++) {
		uint64_t e = syms[i].size ? syms[i].addr + syms[i].size :
			     syms[i].limit;

		pts[npts++] = syms[i].addr;
		if (e > syms[i].addr && e <= end)
			pts[npts++] = e;
	}
	qsort(pts, npts, sizeof(*pts), u64_cmp);
	for (size_t pi = 0; pi < npts; pi++) {
		uint64_t p = pts[pi];
		uint32_t pick = SYMT_NONE;
		size_t j, o;

		if (pi && pts[pi - 1] == p)
			continue;
		/* Drop sized symbols that end at or before p, before the
		 * ones starting at p are added: the active set is then the
		 * symbols that hold p, and the cap can only leave out a
		 * symbol at whose start SWEEP_ACTIVE_MAX or more others hold
		 * (lazy_syms() relies on it). */
		for (j = o = 0; j < nact; j++) {
			if (p - syms[act[j]].addr < syms[act[j]].size)
				act[o++] = act[j];
		}
		nact = o;
		while (k < n && syms[k].addr <= p) {
			const struct bsym *s = &syms[k];

			if (s->addr + s->size > ml || !seen)
				ml = s->addr + s->size;
			seen = true;
			if (s->size && nact < SWEEP_ACTIVE_MAX)
				act[nact++] = k;
			if (k == 0 || s->addr != V) {
				V = s->addr;
				g0 = k;
			}
			g1 = k + 1;
			k++;
		}
		if (nact) {
			const struct bsym *best = NULL;
			uint32_t best_seq = 0;

			/* Replay the candidates in symbol-table order. */
			for (;;) {
				const struct bsym *next = NULL;
				size_t ni = 0;

				for (j = 0; j < nact; j++) {
					const struct bsym *c = &syms[act[j]];

					if ((!best || c->seq > best_seq) &&
					    (!next || c->seq < next->seq)) {
						next = c;
						ni = act[j];
					}
				}
				if (!next)
					break;
				best_seq = next->seq;
				if (pick == SYMT_NONE ||
				    eu_better(&syms[pick], next))
					pick = (uint32_t)ni;
				best = next;
			}
		} else if (seen && V >= ml) {
			uint32_t top = 0;

			for (j = g0; j < g1; j++) {
				if (!syms[j].size && p < syms[j].limit &&
				    (pick == SYMT_NONE || syms[j].seq > top)) {
					pick = (uint32_t)j;
					top = syms[j].seq;
				}
			}
		}
		if (out->n && out->v[out->n - 1].idx == pick)
			continue;
		if (symi_grow((void **)&out->v, &out->cap, out->n + 1,
			      sizeof(*out->v)))
			goto out;
		out->v[out->n].addr = p;
		out->v[out->n].idx = pick;
		out->n++;
	}
	err = 0;
out:
	free(pts);
	free(act);
	return err;
}

/*
 * The span of the line and scope ranges @R and the text sections: *lo
 * is UINT64_MAX (and *hi 0) when there are neither.  What code_window()
 * widens with the symbols, and lazy_syms() with all of them.
 */
static void code_span(const struct symi_builder *b, const struct ranges *R,
		      uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	if (R->n) {
		*lo = R->addr[0];
		*hi = R->addr[R->n - 1];
	}
	for (size_t i = 0; i < b->n_text; i++) {
		if (b->text[i].lo < *lo)
			*lo = b->text[i].lo;
		if (b->text[i].hi > *hi)
			*hi = b->text[i].hi;
	}
}

/*
 * The table's address window [*basep, *endp): the line and scope ranges
 * @R and the text sections, widened by symbols (data below .text) while
 * it stays under 4 GiB; the symbols left out are dropped later.  b->syms
 * must be sorted.  Returns 0 or -SYM_E_TOOBIG.
 */
static int code_window(const struct symi_builder *b, const struct ranges *R,
		       uint64_t *basep, uint64_t *endp)
{
	uint64_t base, end, symlo, symhi;
	size_t i;

	code_span(b, R, &base, &end);
	symlo = base;
	symhi = end;
	for (i = 0; i < b->n_syms; i++) {
		uint64_t a = b->syms[i].addr;
		uint64_t lo = a < symlo ? a : symlo;
		uint64_t hi = a + 1 > symhi ? a + 1 : symhi;

		if (base == UINT64_MAX || hi - lo < UINT32_MAX) {
			symlo = lo;
			symhi = hi;
			if (base == UINT64_MAX)
				base = a, end = a + 1;
		}
	}
	if (base == UINT64_MAX)
		base = end = 0;
	if (symlo < base)
		base = symlo;
	if (symhi > end)
		end = symhi;
	*basep = base;
	*endp = end;
	if (b->kernel && base < b->kernel_text) {
		symi_warn("table: a kernel with code or symbols at 0x%llx, below its _text (0x%llx)",
			  (unsigned long long)base,
			  (unsigned long long)b->kernel_text);
		return -SYM_E_UNSUPPORTED;
	}
	if (end - base >= UINT32_MAX) {
		symi_warn("table: module spans 0x%llx..0x%llx, 4 GiB or more",
			  (unsigned long long)base, (unsigned long long)end);
		return -SYM_E_TOOBIG;
	}
	return 0;
}

/*
 * Keep the symbols in [base, end), once each (.symtab and .dynsym, or a
 * file and its debug file, repeat them), at the front of the sorted
 * b->syms, and give sizeless ones their reach: to the end of their
 * section, or only their own address for SHN_ABS.  Returns how many.
 */
static size_t keep_symbols(struct symi_builder *b, uint64_t base,
			   uint64_t end)
{
	size_t n_syms = 0;

	symi_span_sort(b->secs, b->n_secs);
	for (size_t i = 0; i < b->n_syms; i++) {
		struct bsym *s = &b->syms[i];
		bool dup = false;

		if (s->addr < base || s->addr >= end)
			continue;
		for (size_t j = n_syms; j-- > 0 && j + 16 > n_syms;) {
			const struct bsym *t = &b->syms[j];

			if (t->addr != s->addr)
				break;
			if (t->size == s->size && t->name == s->name &&
			    t->flags == s->flags) {
				dup = true;
				break;
			}
		}
		if (dup)
			continue;
		s->limit = (s->flags & SYMI_SYM_ABS) ? s->addr + 1 :
			   section_end(b, s->addr);
		b->syms[n_syms++] = *s;
	}
	return n_syms;
}

/* lazy_syms() counts the sized symbols that touch each of
 * LAZY_BUCKETS equal slices of the window: a bound on how many hold an
 * address there. */
#define LAZY_BUCKETS 65536

static bool chosen_by(uint32_t tables, uint32_t f, int ch);

/* What lazy_syms() learns of all the symbols before it keeps some: per
 * bucket of symbols between two addresses asked (those at or below
 * only[j] and above only[j - 1]) and per peer, the highest start, and
 * the highest end sweep_symbols() computes (addr + size); each symbol's
 * bucket (b->n_only: above every address asked); per slice of the
 * window [lo, lo + LAZY_BUCKETS * width), the sized symbols that touch
 * it. */
struct lazy_marks {
	uint64_t *start[SYMT_CH_N], *end;
	bool *has[SYMT_CH_N];
	size_t *bucket;
	uint32_t *depth;
	uint64_t lo, width;
};

static void lazy_marks_free(struct lazy_marks *L)
{
	for (int c = 0; c < SYMT_CH_N; c++) {
		free(L->start[c]);
		free(L->has[c]);
	}
	free(L->end);
	free(L->bucket);
	free(L->depth);
}

/* L->depth over the symbols of b->syms, all in [lo, hi).  Returns 0 or
 * -ENOMEM. */
static int lazy_depth(const struct symi_builder *b, struct lazy_marks *L,
		      uint64_t lo, uint64_t hi)
{
	int64_t run = 0;

	L->lo = lo;
	L->width = (hi - lo) / LAZY_BUCKETS + 1;
	L->depth = symi_calloc(LAZY_BUCKETS + 1, sizeof(*L->depth));
	if (!L->depth)
		return -ENOMEM;
	/* A difference array first, then its running sums. */
	for (size_t i = 0; i < b->n_syms; i++) {
		const struct bsym *s = &b->syms[i];
		uint64_t last;

		if (!s->size)
			continue;
		last = s->size - 1 >= hi - s->addr ? hi : s->addr + (s->size - 1);
		L->depth[(s->addr - lo) / L->width]++;
		L->depth[(last - lo) / L->width + 1]--;
	}
	for (size_t i = 0; i <= LAZY_BUCKETS; i++) {
		run += (int32_t)L->depth[i];
		L->depth[i] = (uint32_t)run;
	}
	return 0;
}

static int lazy_marks_make(const struct symi_builder *b, struct lazy_marks *L,
			   uint64_t lo, uint64_t hi)
{
	size_t nb = b->n_only;

	for (int c = 0; c < SYMT_CH_N; c++) {
		L->start[c] = symi_calloc(nb + 1, sizeof(*L->start[c]));
		L->has[c] = symi_calloc(nb + 1, sizeof(*L->has[c]));
		if (!L->start[c] || !L->has[c])
			return -ENOMEM;
	}
	L->end = symi_calloc(nb + 1, sizeof(*L->end));
	L->bucket = symi_calloc(b->n_syms, sizeof(*L->bucket));
	if (!L->end || !L->bucket)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_syms; i++) {
		const struct bsym *s = &b->syms[i];
		size_t j = addrs_at(b->only, nb, s->addr);

		L->bucket[i] = j;
		if (j == nb)
			continue;
		for (int c = 0; c < SYMT_CH_N; c++) {
			if (!chosen_by(b->tables, s->flags, c))
				continue;
			if (!L->has[c][j] || s->addr > L->start[c][j])
				L->start[c][j] = s->addr;
			if (c == SYMT_CH_EU &&
			    (!L->has[c][j] || s->addr + s->size > L->end[j]))
				L->end[j] = s->addr + s->size;
			L->has[c][j] = true;
		}
	}
	return lazy_depth(b, L, lo, hi);
}

/* Whether symbol @i can take part in an answer for an address asked:
 * 1 (keep it), 0 (drop it), or -1 when it holds one where
 * sweep_symbols()'s cap may have left it out (then nothing is
 * dropped). */
static int lazy_wanted(const struct symi_builder *b,
		       const struct lazy_marks *L, size_t i, uint64_t hi)
{
	const struct bsym *s = &b->syms[i];
	size_t j = L->bucket[i];

	/* The window's ends, for code_window(). */
	if (s->addr == L->lo || s->addr + 1 == hi)
		return 1;
	if (j == b->n_only)
		return 0;
	/* It holds an address asked: in sweep_symbols()'s active set
	 * there, unless the cap left it out at its start, which takes
	 * SWEEP_ACTIVE_MAX symbols holding that address. */
	if (s->size && b->only[j] - s->addr < s->size)
		return L->depth[(s->addr - L->lo) / L->width] <
		       SWEEP_ACTIVE_MAX ? 1 : -1;
	for (int c = 0; c < SYMT_CH_N; c++) {
		if (!chosen_by(b->tables, s->flags, c))
			continue;
		/* The highest start at or below an address asked, whose
		 * symbols every sweep chooses among. */
		if (s->addr == L->start[c][j])
			return 1;
		/* sweep_symbols()'s highest end so far (ml). */
		if (c == SYMT_CH_EU && s->addr + s->size == L->end[j])
			return 1;
	}
	return 0;
}

/*
 * With symi_builder_only(), before the symbols are sorted: drop those
 * that cannot change a peer's choice at an address asked, so that the
 * sort and the sweeps see a few, not all of them (libjvm: 57,697).
 * Kept: every symbol that holds an address asked; per peer, every one
 * at the highest start at or below an address asked (taken per bucket
 * of symbols between two addresses asked: a superset), and the one with
 * the highest end there (sweep_symbols()'s ml); and those at the
 * window's two ends.  Each sweep's answer at an address depends on
 * these alone, so the choices at the addresses asked are those of all
 * the symbols.
 *
 * Done only when that is known to hold: the symbols and @R's window span
 * less than 4 GiB together (code_window() then takes them all, in any
 * order), and sweep_symbols()'s cap cannot have left out a symbol that
 * holds an address asked (lazy_wanted()).  Otherwise nothing is
 * dropped.  Returns 0 or -ENOMEM.
 */
static int lazy_syms(struct symi_builder *b, const struct ranges *R)
{
	uint64_t lo, hi;
	struct lazy_marks L;
	size_t o = 0;
	int err = 0;

	memset(&L, 0, sizeof(L));
	if (!b->only || !b->n_text || !b->n_syms)
		return 0;
	code_span(b, R, &lo, &hi);
	for (size_t i = 0; i < b->n_syms; i++) {
		if (b->syms[i].addr < lo)
			lo = b->syms[i].addr;
		if (b->syms[i].addr >= hi)
			hi = b->syms[i].addr + 1;
	}
	if (hi <= lo || hi - lo >= UINT32_MAX)
		return 0;
	err = lazy_marks_make(b, &L, lo, hi);
	if (err)
		goto out;
	/* Every answer first (a refusal leaves all), kept in L.bucket (a
	 * symbol's bucket is read only by its own answer), then the kept
	 * ones to the front in their order. */
	for (size_t i = 0; i < b->n_syms; i++) {
		int w = lazy_wanted(b, &L, i, hi);

		if (w < 0)
			goto out;
		L.bucket[i] = w > 0;
	}
	for (size_t i = 0; i < b->n_syms; i++) {
		if (L.bucket[i])
			b->syms[o++] = b->syms[i];
	}
	b->n_syms = o;
out:
	lazy_marks_free(&L);
	return err;
}

/*
 * Whose symbols.  Each peer names an address from one symbol table
 * (symtab.c marks where each symbol was read), with rules of its own:
 *  - eu-addr2line (libdwfl's find_symtab()): the file's .symtab, else
 *    its debug file's, else .dynsym with the MiniDebugInfo .symtab;
 *    sweep_symbols().
 *  - GNU addr2line (bfd): the debug file's .symtab when the DWARF is
 *    read from the debug file (_bfd_dwarf2_stash_syms()), else the
 *    file's .symtab; never .dynsym (addr2line's slurp_symbols() falls
 *    back to it only when the symtab size is 0, which it never is);
 *    sweep_gnu().
 *  - llvm-symbolizer 14 (SymbolizableObjectFile): the file's own
 *    .symtab, else its .dynsym, never the debug file's; sweep_llvm().
 * The made-up PLT stub names count for eu and GNU, which have nothing
 * there (they name by section), not for llvm, which names .plt after
 * the sizeless _init before it: sym_frame says which is which.
 */
static bool chosen_by(uint32_t tables, uint32_t f, int ch)
{
	bool own = f & SYMI_SYM_MAIN, dyn = f & SYMI_SYM_DYNSYM;
	bool mini = f & SYMI_SYM_MINI, dbg = f & SYMI_SYM_DEBUG;
	bool any = !(f & SYMI_SYM_ORIGIN);	/* a test's: every table */

	if (f & SYMI_SYM_PLT)
		return ch != SYMT_CH_LLVM;
	switch (ch) {
	case SYMT_CH_EU:
		if (any)
			return true;
		if (tables & SYMI_TAB_MAIN_SYMTAB)
			return own && !dyn && !mini;
		if (tables & SYMI_TAB_DBG_SYMTAB)
			return dbg && !dyn && !mini;
		return own && (dyn || mini);
	case SYMT_CH_GNU:
		if (f & (SYMI_SYM_OBJECT | SYMI_SYM_ABS))
			return false;
		/* maybe_function_sym() skips annobin's markers. */
		if (!(f & (SYMI_SYM_SIZED | SYMI_SYM_GLOBAL | SYMI_SYM_WEAK)) &&
		    (f & SYMI_SYM_NOTYPE) && (f & SYMI_SYM_HIDDEN))
			return false;
		if (any)
			return true;
		if (tables & SYMI_TAB_DWARF_DBG)
			return dbg && !dyn && !mini;
		return own && !dyn && !mini;
	default:
		if (f & SYMI_SYM_ABS)
			return false;
		if (any)
			return true;
		if (tables & SYMI_TAB_MAIN_SYMTAB)
			return own && !dyn && !mini;
		return own && dyn;
	}
}

static int srange_push(struct sranges *out, uint64_t addr, uint32_t idx)
{
	if (out->n && out->v[out->n - 1].idx == idx)
		return 0;
	if (out->n && out->v[out->n - 1].addr == addr) {
		out->v[out->n - 1].idx = idx;
		return 0;
	}
	if (symi_grow((void **)&out->v, &out->cap, out->n + 1,
		      sizeof(*out->v)))
		return -ENOMEM;
	out->v[out->n].addr = addr;
	out->v[out->n++].idx = idx;
	return 0;
}

/*
 * GNU addr2line's choice, bfd's _bfd_elf_find_function() (binutils
 * 2.40): among the symbols of the address's section, the one with the
 * highest start at or below it, whether or not it reaches the address;
 * at one start the largest (a sizeless one counts as 1 byte), then the
 * first in the table.  @syms are sorted by address.
 */
static int sweep_gnu(const struct symi_builder *b, const struct bsym *syms,
		     size_t n, uint64_t base, uint64_t end,
		     struct sranges *out)
{
	uint64_t *pts = NULL;
	size_t npts = 0, j = 0;
	int err = -ENOMEM;

	if (!n)
		return 0;
	pts = symi_calloc(2 * n + 2 * b->n_secs + 1, sizeof(*pts));
	if (!pts)
		goto out;
	for (size_t i = 0; i < n; i++) {
		pts[npts++] = syms[i].addr;
		pts[npts++] = syms[i].addr + (syms[i].size ? syms[i].size : 1);
	}
	for (size_t i = 0; i < b->n_secs; i++) {
		pts[npts++] = b->secs[i].lo;
		pts[npts++] = b->secs[i].hi;
	}
	qsort(pts, npts, sizeof(*pts), u64_cmp);
	for (size_t pi = 0; pi < npts; pi++) {
		uint64_t p = pts[pi];
		long sec = symi_span_find(b->secs, b->n_secs, p);
		uint32_t pick = SYMT_NONE;

		if ((pi && pts[pi - 1] == p) || p < base || p > end)
			continue;
		while (j < n && syms[j].addr <= p)
			j++;
		if (sec >= 0 && j && syms[j - 1].addr >= b->secs[sec].lo) {
			uint64_t a = syms[j - 1].addr, best = 0;
			uint32_t seq = 0;

			for (size_t k = j; k-- > 0 && syms[k].addr == a;) {
				uint64_t sz = syms[k].size ? syms[k].size : 1;

				if (pick == SYMT_NONE || sz > best ||
				    (sz == best && syms[k].seq < seq)) {
					pick = (uint32_t)k;
					best = sz;
					seq = syms[k].seq;
				}
			}
		}
		if (srange_push(out, p, pick))
			goto out;
	}
	err = 0;
out:
	free(pts);
	return err;
}

/*
 * llvm-symbolizer 14's choice (SymbolizableObjectFile::create() and
 * getNameFromSymbolTable()): one symbol per address, the largest, then
 * the last in the table; an address is named by the last symbol at or
 * below it, unless that one has a size and ends at or below it.  A
 * sizeless symbol runs on to the next one, in any section (here: at most
 * to the table's end).
 */
static int sweep_llvm(const struct bsym *syms, size_t n, uint64_t end,
		      struct sranges *out)
{
	size_t i = 0;

	while (i < n) {
		size_t k = i, pick = i;

		for (; k < n && syms[k].addr == syms[i].addr; k++) {
			if (syms[k].size > syms[pick].size ||
			    (syms[k].size == syms[pick].size &&
			     syms[k].seq > syms[pick].seq))
				pick = k;
		}
		if (srange_push(out, syms[i].addr, (uint32_t)pick))
			return -ENOMEM;
		if (syms[pick].size &&
		    (k == n || syms[k].addr > syms[pick].addr +
		     syms[pick].size) &&
		    srange_push(out, syms[pick].addr + syms[pick].size,
				SYMT_NONE))
			return -ENOMEM;
		i = k;
	}
	/* Nothing runs on past the table's end. */
	return n ? srange_push(out, end, SYMT_NONE) : 0;
}

/* Peer @ch's choice over the kept symbols b->syms[0, n) into @out, with
 * indices into b->syms.  Returns 0 or -ENOMEM. */
static int choose(struct symi_builder *b, size_t n, uint64_t base,
		  uint64_t end, int ch, struct sranges *out)
{
	struct bsym *sub = symi_calloc(n ? n : 1, sizeof(*sub));
	uint32_t *idx = symi_calloc(n ? n : 1, sizeof(*idx));
	size_t k = 0;
	int err = -ENOMEM;

	if (!sub || !idx)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!chosen_by(b->tables, b->syms[i].flags, ch))
			continue;
		sub[k] = b->syms[i];
		idx[k++] = (uint32_t)i;
	}
	if (ch == SYMT_CH_EU)
		err = sweep_symbols(sub, k, end, out);
	else if (ch == SYMT_CH_GNU)
		err = sweep_gnu(b, sub, k, base, end, out);
	else
		err = sweep_llvm(sub, k, end, out);
	for (size_t i = 0; !err && i < out->n; i++) {
		if (out->v[i].idx != SYMT_NONE)
			out->v[i].idx = idx[out->v[i].idx];
	}
out:
	free(sub);
	free(idx);
	return err;
}

/* The symbol ranges as the table stores them: one list over the
 * addresses where any peer's choice changes. */
struct mranges {
	uint64_t *addr;
	uint32_t (*idx)[SYMT_CH_N];
	size_t n, cap_a, cap_i;
};

static int merge_choices(const struct sranges *SR, struct mranges *M)
{
	size_t at[SYMT_CH_N] = { 0 };
	uint32_t cur[SYMT_CH_N];

	for (int c = 0; c < SYMT_CH_N; c++)
		cur[c] = SYMT_NONE;
	for (;;) {
		uint64_t p = UINT64_MAX;
		bool any = false;

		for (int c = 0; c < SYMT_CH_N; c++) {
			if (at[c] < SR[c].n && SR[c].v[at[c]].addr <= p) {
				p = SR[c].v[at[c]].addr;
				any = true;
			}
		}
		if (!any)
			return 0;
		for (int c = 0; c < SYMT_CH_N; c++) {
			if (at[c] < SR[c].n && SR[c].v[at[c]].addr == p)
				cur[c] = SR[c].v[at[c]++].idx;
		}
		if (M->n && !memcmp(M->idx[M->n - 1], cur, sizeof(cur)))
			continue;
		if (M->n && M->addr[M->n - 1] == p) {
			memcpy(M->idx[M->n - 1], cur, sizeof(cur));
			continue;
		}
		if (symi_grow((void **)&M->addr, &M->cap_a, M->n + 1,
			      sizeof(*M->addr)) ||
		    symi_grow((void **)&M->idx, &M->cap_i, M->n + 1,
			      sizeof(*M->idx)))
			return -ENOMEM;
		M->addr[M->n] = p;
		memcpy(M->idx[M->n++], cur, sizeof(cur));
	}
}

/*
 * Keep each symbol once (a file and its debug file, .symtab and .dynsym
 * repeat them), its origins merged, and renumber @M's indices.  Returns
 * the count kept, at the front of b->syms.
 */
static size_t merge_syms(struct symi_builder *b, size_t n,
			 struct mranges *M, uint32_t *map)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		struct bsym *s = &b->syms[i];
		size_t dup = SIZE_MAX;

		for (size_t j = o; j-- > 0 && j + 16 > o;) {
			const struct bsym *t = &b->syms[j];

			if (t->addr != s->addr)
				break;
			if (t->size == s->size && t->name == s->name &&
			    t->file == s->file &&
			    !((t->flags ^ s->flags) & ~SYMI_SYM_ORIGIN)) {
				dup = j;
				break;
			}
		}
		if (dup != SIZE_MAX) {
			b->syms[dup].flags |= s->flags & SYMI_SYM_ORIGIN;
			map[i] = (uint32_t)dup;
			continue;
		}
		map[i] = (uint32_t)o;
		b->syms[o++] = *s;
	}
	for (size_t i = 0; i < M->n; i++) {
		for (int c = 0; c < SYMT_CH_N; c++) {
			if (M->idx[i][c] != SYMT_NONE)
				M->idx[i][c] = map[M->idx[i][c]];
		}
	}
	return o;
}

/*
 * With symi_builder_only(): the symbol ranges of @M that hold none of the
 * addresses asked name no symbol, and the symbols no range names then
 * are dropped (@map, of @n entries, is scratch), so that only the few
 * that answer are demangled and packed.  Returns the count kept, at the
 * front of b->syms in their order.
 */
static size_t only_syms(struct symi_builder *b, size_t n, struct mranges *M,
			uint32_t *map)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++)
		map[i] = SYMT_NONE;
	for (size_t i = 0; i < M->n; i++) {
		/* The last range answers past the window's end too. */
		uint64_t hi = i + 1 < M->n ? M->addr[i + 1] : UINT64_MAX;
		bool want = symi_builder_wants(b, M->addr[i], hi);

		for (int c = 0; c < SYMT_CH_N; c++) {
			if (!want)
				M->idx[i][c] = SYMT_NONE;
			else if (M->idx[i][c] < n)
				map[M->idx[i][c]] = 0;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (map[i] == SYMT_NONE)
			continue;
		map[i] = (uint32_t)o;
		b->syms[o++] = b->syms[i];
	}
	for (size_t i = 0; i < M->n; i++) {
		for (int c = 0; c < SYMT_CH_N; c++) {
			if (M->idx[i][c] < n)
				M->idx[i][c] = map[M->idx[i][c]];
		}
	}
	return o;
}

/* The demangled form of the PLT stub name @nm ("NAME@plt") into *@out
 * (NULL when NAME is not mangled, or @nm is symtab.c's ".plt").  Returns
 * 0 or -ENOMEM. */
static int plt_demangle(const char *nm, char **out)
{
	size_t len = strlen(nm);
	char *base, *d;

	*out = NULL;
	if (len <= 4 || strcmp(nm + len - 4, "@plt") != 0)
		return 0;
	len -= 4;
	base = symi_malloc(len + 1);
	if (!base)
		return -ENOMEM;
	memcpy(base, nm, len);
	base[len] = '\0';
	d = symi_demangle(base);
	free(base);
	if (!d)
		return 0;
	*out = symi_malloc(strlen(d) + 5);
	if (*out)
		snprintf(*out, strlen(d) + 5, "%s@plt", d);
	free(d);
	return *out ? 0 : -ENOMEM;
}

/*
 * The kept symbols as table records (*out: caller frees), addresses
 * relative to @base; their names are demangled once, here, never at
 * lookup.  Returns 0 or -ENOMEM.
 */
static int table_syms(struct symi_builder *b, size_t n_syms, uint64_t base,
		      struct symt_sym **out)
{
	struct symt_sym *syms = symi_calloc(n_syms ? n_syms : 1,
					    sizeof(*syms));

	*out = syms;
	if (!syms)
		return -ENOMEM;
	for (size_t i = 0; i < n_syms; i++) {
		const char *nm = b->str + b->syms[i].name;
		char *d;

		/* A stub NAME@plt demangles as NAME, then "@plt". */
		if (b->syms[i].flags & SYMI_SYM_PLT) {
			if (plt_demangle(nm, &d))
				return -ENOMEM;
		} else {
			d = symi_demangle(nm);
		}

		syms[i].addr = (uint32_t)(b->syms[i].addr - base);
		syms[i].size = (uint32_t)b->syms[i].size;
		syms[i].name = b->syms[i].name;
		syms[i].file = b->syms[i].file;
		syms[i].flags = b->syms[i].flags;
		if (!d)
			continue;
		if (!(syms[i].flags & SYMI_SYM_PLT) && spelled_same(b, nm, d))
			syms[i].flags |= SYMI_SYM_SPELLING;
		syms[i].demangled = symi_builder_str(b, d);
		free(d);
		if (syms[i].demangled == SYMI_NONE)
			return -ENOMEM;
	}
	return 0;
}

/* The start addresses of the ranges and of the symbol ranges, and the
 * symbols of the latter, as the table stores them (relative to @base).
 * The caller frees the arrays, on failure too. */
struct rel {
	uint32_t *addrs, *saddrs, *sidx[SYMT_CH_N];
};

static int rel_arrays(const struct ranges *R, const struct mranges *M,
		      uint64_t base, struct rel *out)
{
	out->addrs = symi_calloc(R->n ? R->n : 1, sizeof(*out->addrs));
	out->saddrs = symi_calloc(M->n ? M->n : 1, sizeof(*out->saddrs));
	if (!out->addrs || !out->saddrs)
		return -ENOMEM;
	for (int c = 0; c < SYMT_CH_N; c++) {
		out->sidx[c] = symi_calloc(M->n ? M->n : 1,
					   sizeof(*out->sidx[c]));
		if (!out->sidx[c])
			return -ENOMEM;
		for (size_t i = 0; i < M->n; i++)
			out->sidx[c][i] = M->idx[i][c];
	}
	for (size_t i = 0; i < R->n; i++)
		out->addrs[i] = (uint32_t)(R->addr[i] - base);
	for (size_t i = 0; i < M->n; i++)
		out->saddrs[i] = (uint32_t)(M->addr[i] - base);
	return 0;
}

/* Encode the table (pack.c) from the builder and the swept arrays. */
static int pack(struct symi_builder *b, uint64_t base, uint64_t end,
		const struct ranges *R, const struct rel *rel, size_t n_sranges,
		const struct symt_sym *syms, size_t n_syms, void **bufp,
		size_t *lenp)
{
	struct symi_tab tab = { 0 };

	for (size_t i = 0; i < b->n_scopes; i++) {
		uint64_t e = b->scope_entry[i];

		b->scopes[i].entry = e >= base && e < end ?
				     (uint32_t)(e - base) : SYMT_NONE;
	}
	/* Every address of the table is relative to its base, so a
	 * kernel's table is made _text-relative by its base alone
	 * (code_window() saw that nothing lies below _text). */
	tab.base = base - b->kernel_text;
	/* Lookups answer from symbols too: cover them. */
	tab.start = base - b->kernel_text;
	tab.end = end - b->kernel_text;
	tab.flags = (b->dwarf ? SYM_TABLE_DWARF : 0) |
		    (b->gopclntab ? SYM_TABLE_GOPCLNTAB : 0) |
		    (b->kallsyms ? SYM_TABLE_KALLSYMS : 0) |
		    (n_syms ? SYM_TABLE_SYMBOLS : 0) |
		    (b->kernel ? SYM_TABLE_KERNEL : 0);
	tab.converter = converter_version();
	tab.elfutils = _ELFUTILS_VERSION;
	tab.addrs = rel->addrs;
	tab.leaves = R->leaf;
	tab.n_ranges = R->n;
	tab.scopes = b->scopes;
	tab.n_scopes = b->n_scopes;
	tab.funcs = b->funcs;
	tab.n_funcs = b->n_funcs;
	tab.files = b->files;
	tab.n_files = b->n_files;
	tab.syms = syms;
	tab.n_syms = n_syms;
	tab.saddrs = rel->saddrs;
	for (int c = 0; c < SYMT_CH_N; c++)
		tab.sidx[c] = rel->sidx[c];
	tab.n_sranges = n_sranges;
	tab.str = b->str;
	tab.str_len = b->str_len;
	tab.dstr = b->str;	/* one blob here; packed as two */
	tab.dstr_len = b->str_len;
	tab.no_tails = b->quick;
	return symi_table_pack(&tab, bufp, lenp);
}

int symi_builder_finish(struct symi_builder *b, void **bufp, size_t *lenp)
{
	struct segs S = { 0 };
	struct ranges R = { 0 };
	struct sranges SR[SYMT_CH_N] = { { 0 } };
	struct mranges M = { 0 };
	struct rel rel = { 0 };
	struct symt_sym *syms = NULL;
	uint32_t *map = NULL;
	uint64_t base, end;
	size_t n_syms;
	int err;

	*bufp = NULL;
	*lenp = 0;
	if (b->err)
		return b->err;
	symi_debug("table: %zu line rows, %zu scope ranges, %zu scopes, %zu functions, %zu files, %zu symbols, %zu string bytes",
		   b->n_livs, b->n_sivs, b->n_scopes, b->n_funcs, b->n_files,
		   b->n_syms, b->str_len);
	/* DWARF's scopes only: Go's inline runs may reach into the
	 * padding after a function's last row, as the runtime answers. */
	err = b->dwarf ? nest_scopes(b) : 0;
	if (!err)
		err = sweep_scopes(b, &S);
	sweep_lines(b);
	if (!err)
		err = merge(b, &S, &R);
	if (err)
		goto out;
	err = lazy_syms(b, &R);
	if (err)
		goto out;
	/* The code window fixes the base; it must span less than 4 GiB. */
	if (b->n_syms > 1)
		qsort(b->syms, b->n_syms, sizeof(*b->syms), bsym_cmp);
	err = code_window(b, &R, &base, &end);
	if (err)
		goto out;
	n_syms = keep_symbols(b, base, end);
	for (int c = 0; !err && c < SYMT_CH_N; c++)
		err = choose(b, n_syms, base, end, c, &SR[c]);
	if (!err)
		err = merge_choices(SR, &M);
	/* A symbol's reach may end past what the table's 32-bit offsets
	 * hold (a corrupt size): that end is not a range of its own, which
	 * would wrap to below the ranges before it. */
	while (M.n && M.addr[M.n - 1] - base > UINT32_MAX)
		M.n--;
	if (!err && !(map = symi_calloc(n_syms ? n_syms : 1, sizeof(*map))))
		err = -ENOMEM;
	if (err)
		goto out;
	n_syms = merge_syms(b, n_syms, &M, map);
	if (b->only)
		n_syms = only_syms(b, n_syms, &M, map);
	err = table_syms(b, n_syms, base, &syms);
	if (!err)
		err = rel_arrays(&R, &M, base, &rel);
	if (!err)
		err = pack(b, base, end, &R, &rel, M.n, syms, n_syms, bufp,
			   lenp);
out:
	free(syms);
	free(map);
	free(rel.addrs);
	free(rel.saddrs);
	for (int c = 0; c < SYMT_CH_N; c++) {
		free(rel.sidx[c]);
		free(SR[c].v);
	}
	free(M.addr);
	free(M.idx);
	free(S.v);
	free(R.addr);
	free(R.leaf);
	return err;
}
