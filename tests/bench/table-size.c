/*
 * table-size.c - where the bytes of a lookup table go.
 *
 *   table-size FILE...
 *
 * Opens each FILE as `sym addr2line -e FILE` would (its debug file found
 * by build ID or debuglink), builds its table and prints one line per
 * area of the format (libsym/format.h, docs/table-format.md): bytes,
 * share of the table, records, and bytes per record; for the range
 * blocks also the mean bits per range of each field, for the packed
 * arrays the bytes of each field.  It reads the
 * table's private layout, so it is built against libsym/format.h:
 *
 *   cc -Ilibsym -o build/bench/table-size tests/bench/table-size.c \
 *      lib/libsym.a $(pkg-config --libs ...)   (as bench.sh builds
 *                                               lookup-bench)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym.h"
#include "format.h"
#include "base.h"

static void row(const char *what, uint64_t bytes, uint64_t total,
		uint64_t count)
{
	printf("  %-22s %10llu B %5.1f%%", what, (unsigned long long)bytes,
	       total ? 100.0 * (double)bytes / (double)total : 0.0);
	if (count)
		printf(" %9llu records %6.2f B each",
		       (unsigned long long)count,
		       (double)bytes / (double)count);
	printf("\n");
}

/* A string blob: its stored bytes, and when compressed what it inflates
 * to. */
static void blob(const char *what, uint32_t size, uint32_t zbytes,
		 uint32_t shift, uint64_t total)
{
	row(what, zbytes ? zbytes : size, total, 0);
	if (zbytes)
		printf("  %-22s %u bytes in frames of %u, %.2fx\n",
		       "  inflated:", size, 1u << shift,
		       (double)size / zbytes);
}

/* How many symbol ranges name another symbol for GNU addr2line or for
 * llvm-symbolizer than for eu-addr2line (the sym field): what a table
 * storing only the differences would keep. */
static void srange_peers(const struct symt_view *v)
{
	uint64_t gnu = 0, llvm = 0, either = 0;

	for (uint32_t i = 0; i < v->n; i++) {
		uint32_t sym = symt_get(v, i, SYMT_SR_SYM);
		bool g = symt_get(v, i, SYMT_SR_GNU) != sym;
		bool l = symt_get(v, i, SYMT_SR_LLVM) != sym;

		gnu += g;
		llvm += l;
		either += g || l;
	}
	printf("    %-20s gnu %llu, llvm %llu, either %llu of %u\n",
	       "another peer's choice:", (unsigned long long)gnu,
	       (unsigned long long)llvm, (unsigned long long)either, v->n);
}

/* A packed array: its stored bytes (@zbytes of compressed columns, or
 * its records), and its fields. */
static void packed(const char *what, const struct symt_packed *a,
		   uint32_t zbytes, uint64_t total, const char *const *names,
		   unsigned nf)
{
	unsigned bits = 0;

	row(what, zbytes ? zbytes : a->bytes, total, a->count);
	if (zbytes)
		printf("  %-22s %u bytes of records, %.2fx\n", "  as columns:",
		       a->bytes, (double)a->bytes / zbytes);
	printf("  %-22s", "  field bits:");
	for (unsigned f = 0; f < nf; f++) {
		printf(" %s %u", names[f], a->w[f]);
		bits += a->w[f];
	}
	printf(" = %u\n", bits);
}

static int one(const char *path)
{
	static const char *const scn[] = { "parent", "func", "call_file",
					   "call_line", "call_col", "entry",
					   "flags" };
	static const char *const fnn[] = { "name", "linkage", "demangled",
					   "decl_file", "decl_line", "outer",
					   "flags", "eu" };
	static const char *const syn[] = { "addr", "size", "name",
					   "demangled", "kind" };
	static const char *const srn[] = { "addr", "sym", "gnu", "llvm" };
	static const char *const bkn[] = { "addr", "scope", "file", "line",
					   "column", "disc" };
	struct sym_module *mod = NULL;
	const struct sym_table *t = NULL;
	const struct symt_header *h;
	const void *buf;
	uint64_t fbits[SYMT_BK_N] = { 0 }, hbits = 0;
	size_t len;
	char msg[128];
	int err;

	err = sym_module_open(path, NULL, &mod);
	if (!err)
		err = sym_module_table(mod, &t);
	if (err) {
		fprintf(stderr, "table-size: '%s': %s\n", path,
			sym_strerror(err, msg, sizeof(msg)));
		sym_module_close(mod);
		return 1;
	}
	sym_table_data(t, &buf, &len);
	h = buf;
	/* Field widths of every block, weighted by its ranges. */
	for (uint32_t b = 0; b < h->n_blocks; b++) {
		const uint8_t *p = t->blocks + t->boff[b];
		uint64_t k = h->n_ranges - ((uint64_t)b << h->block_shift);

		if (k > (1u << h->block_shift))
			k = 1u << h->block_shift;
		hbits += SYMT_BK_N * SYMT_BK_WBITS;
		for (int j = 0; j < SYMT_BK_BASES; j++)
			hbits += h->bw[j];
		for (int j = 0; j < SYMT_BK_N; j++)
			fbits[j] += symt_bits(p, (uint64_t)j * SYMT_BK_WBITS,
					      SYMT_BK_WBITS) *
				    (j == SYMT_BK_ADDR ? k - 1 : k);
	}
	printf("%s: %zu bytes, format %u, %u ranges in %u blocks of %u\n",
	       path, len, h->format, h->n_ranges, h->n_blocks,
	       1u << h->block_shift);
	row("header", sizeof(*h), len, 0);
	row("block index", h->zindex ? h->zindex : 8ull * h->n_blocks, len,
	    h->n_blocks);
	if (h->zindex)
		printf("  %-22s %llu bytes plain\n", "  as columns:",
		       8ull * h->n_blocks);
	row("range blocks", h->blocks_size, len, h->n_ranges);
	printf("  %-22s header %.2f", "  bits per range:",
	       h->n_ranges ? (double)hbits / h->n_ranges : 0.0);
	for (int j = 0; j < SYMT_BK_N; j++)
		printf(" %s %.2f", bkn[j],
		       h->n_ranges ? (double)fbits[j] / h->n_ranges : 0.0);
	printf("\n");
	packed("scopes", &h->scopes, h->zrec[SYMT_R_SCOPES], len, scn,
	       SYMT_SC_N);
	packed("functions", &h->funcs, h->zrec[SYMT_R_FUNCS], len, fnn,
	       SYMT_FN_N);
	packed("files", &h->files, h->zrec[SYMT_R_FILES], len,
	       (const char *const[]){ "name", "rel" }, SYMT_FI_N);
	packed("symbols", &h->syms, h->zrec[SYMT_R_SYMS], len, syn, SYMT_SY_N);
	packed("symbol kinds", &h->skinds, h->zrec[SYMT_R_SKINDS], len,
	       (const char *const[]){ "file", "flags" }, SYMT_SK_N);
	packed("symbol ranges", &h->sranges, h->zrec[SYMT_R_SRANGES], len,
	       srn, SYMT_SR_N);
	srange_peers(&t->sranges);
	blob("strings", h->strings_size, h->strings_zbytes, h->strings_shift,
	     len);
	blob("demangled names", h->dstrings_size, h->dstrings_zbytes,
	     h->dstrings_shift, len);
	sym_module_close(mod);
	return 0;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: table-size FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		failed |= one(argv[i]);
	return failed;
}
