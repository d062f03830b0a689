/*
 * fuzz-lazy.c - libFuzzer target over the lazy path's unit index.
 *
 * One input is one ELF image.  sym_module_table_for() reads each unit's
 * header and top DIE (dwarf.c, pick_units()) to choose the units that
 * cover a set of addresses, then walks only those; sym.h promises that
 * for each of those addresses the small table answers exactly what the
 * full table (sym_module_table() of another module over the same bytes)
 * answers.  On corrupt unit ranges (a CU that claims less than its
 * functions, ranges libdw cannot read, units cut short) this is where a
 * wrong index would show, so every field of every frame is compared:
 * for all addresses at once, and for sets of three (one table each).
 * The addresses: evenly spaced over the range the full table covers,
 * its edges, and values taken from the input.
 *
 * Both must fail or succeed together, except that the full build's
 * failure is not compared with the lazy one's on -ENOMEM.  Seeds: the
 * fuzz-elf corpus's fixtures (DWARF 4 and 5, split, dwz, compressed).
 */
#include "fuzz.h"

#include <stdbool.h>
#include <string.h>

#include "base.h"

#define SWEEP 24
#define MAX_ADDRS 48
#define SET 3

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Every field of @x and @y the same (strings by content). */
static bool frame_eq(const struct sym_frame *x, const struct sym_frame *y)
{
	return str_eq(x->name, y->name) &&
	       str_eq(x->linkage_name, y->linkage_name) &&
	       str_eq(x->demangled, y->demangled) &&
	       str_eq(x->file, y->file) && str_eq(x->decl_file, y->decl_file) &&
	       x->line == y->line && x->column == y->column &&
	       x->discriminator == y->discriminator &&
	       x->decl_line == y->decl_line && x->entry == y->entry &&
	       str_eq(x->symbol, y->symbol) &&
	       x->symbol_addr == y->symbol_addr &&
	       x->symbol_size == y->symbol_size && x->flags == y->flags &&
	       x->file_rel == y->file_rel &&
	       x->decl_file_rel == y->decl_file_rel &&
	       str_eq(x->llvm_symbol, y->llvm_symbol) &&
	       x->llvm_symbol_addr == y->llvm_symbol_addr &&
	       str_eq(x->llvm_symbol_file, y->llvm_symbol_file) &&
	       str_eq(x->gnu_symbol, y->gnu_symbol) &&
	       x->gnu_symbol_addr == y->gnu_symbol_addr &&
	       str_eq(x->outer, y->outer) && str_eq(x->eu_name, y->eu_name);
}

/* The answers of @lazy for @addrs are @full's. */
static void same(const struct sym_table *full, const struct sym_table *lazy,
		 const uint64_t *addrs, size_t na)
{
	struct sym_frame f[SYM_MAX_FRAMES], l[SYM_MAX_FRAMES];

	for (size_t i = 0; i < na; i++) {
		size_t nf = 0, nl = 0;
		int ef = sym_table_lookup(full, addrs[i], f, SYM_MAX_FRAMES,
					  &nf);
		int el = sym_table_lookup(lazy, addrs[i], l, SYM_MAX_FRAMES,
					  &nl);

		FUZZ_CHECK(ef == el && nf == nl);
		for (size_t k = 0; k < nf; k++)
			FUZZ_CHECK(frame_eq(&f[k], &l[k]));
	}
}

/* A module of the bytes, or NULL. */
static struct sym_module *open_mod(const uint8_t *data, size_t size)
{
	struct sym_module *m = NULL;
	int err = sym_module_open_mem(data, size, NULL, &m);

	FUZZ_CHECK(err <= 0);
	return err ? NULL : m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	struct sym_module *mf = NULL, *ml = NULL;
	const struct sym_table *full = NULL;
	struct sym_table *lazy = NULL;
	struct sym_table_stat st;
	uint64_t addrs[MAX_ADDRS], span;
	size_t na = 0;
	int ef, el;

	if (!init) {
		if (!getenv("FUZZ_VERBOSE"))
			sym_set_log(fuzz_quiet_log, NULL, SYM_LOG_WARN);
		init = true;
	}
	mf = open_mod(data, size);
	ml = open_mod(data, size);
	FUZZ_CHECK(!mf == !ml);
	if (!mf)
		goto out;
	ef = sym_module_table(mf, &full);
	if (ef) {
		/* The lazy path reads no more than the full one: it may
		 * succeed where a unit it skips made the full one fail. */
		FUZZ_CHECK(ef < 0);
		goto out;
	}
	sym_table_stat(full, &st);
	span = st.end > st.start ? st.end - st.start : 0;
	addrs[na++] = st.start;
	addrs[na++] = st.end - 1;
	addrs[na++] = st.end;
	addrs[na++] = 0;
	for (int i = 0; i < SWEEP; i++)
		addrs[na++] = st.start + (span / SWEEP) * (uint64_t)i +
			      (uint64_t)i % 5;
	for (size_t off = 0; off + 8 <= size && na < MAX_ADDRS;
	     off += size / 16 + 1)
		addrs[na++] = st.start + (span ? fuzz_u64(data + off, 8) % span
					       : 0);

	/* All at once. */
	el = sym_module_table_for(ml, addrs, na, &lazy);
	FUZZ_CHECK(el <= 0);
	if (el == -ENOMEM)
		goto out;
	FUZZ_CHECK(el == 0);
	same(full, lazy, addrs, na);
	sym_table_close(lazy);
	lazy = NULL;
	/* In small sets: a table each, from the same module. */
	for (size_t i = 0; i < na; i += SET) {
		size_t k = na - i < SET ? na - i : SET;

		el = sym_module_table_for(ml, addrs + i, k, &lazy);
		if (el == -ENOMEM)
			goto out;
		FUZZ_CHECK(el == 0);
		same(full, lazy, addrs + i, k);
		sym_table_close(lazy);
		lazy = NULL;
	}
	/* Once the full table is built, the lazy path steps aside. */
	FUZZ_CHECK(sym_module_table(ml, &full) == 0);
	FUZZ_CHECK(sym_module_table_for(ml, addrs, 1, &lazy) == -EALREADY &&
		   lazy == NULL);
out:
	sym_table_close(lazy);
	sym_module_close(mf);
	sym_module_close(ml);
	return 0;
}
