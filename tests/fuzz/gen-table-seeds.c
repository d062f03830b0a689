/*
 * gen-table-seeds.c - write the lookup tables libsym builds, as seeds for
 * the fuzz-table target.
 *
 *   gen-table-seeds OUTDIR ELF...
 *
 * For each ELF file, the module is opened without a debug-file search, its
 * table is built, and the table bytes (sym_table_data()) are written to
 * OUTDIR/table-<basename of ELF>; then again with its packed arrays
 * plain (format 9 stores them as compressed columns when they gain) to
 * OUTDIR/table-<basename>-plainrec, the form make-seeds.sh corrupts
 * records in place in, and with the symbols' arrays in chunks of 4
 * records (format 10) to OUTDIR/table-<basename>-chunks.  tests/fuzz/make-seeds.sh builds and runs it,
 * then derives corrupted variants from its output.
 *
 * Build: as make-seeds.sh does, against lib/libsym.a and the libraries
 *        lib/libsym.pc lists as private (Requires.private, Libs.private).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sym.h"
#include "base.h"

/* libsym's own knob (internal.h): the bytes of packed arrays below which
 * the writer stores them as columns; 0 writes them plain.  The seeds link
 * the static library, which has it. */
extern size_t symi_zrec_max;
/* And the chunk shift of the symbols' arrays (format 10): the seeds'
 * programs have a few dozen symbols, so a third table of each has chunks
 * of 4. */
extern unsigned symi_zrec_sym_shift;

static int write_table(const char *outdir, const char *elf,
		       const char *suffix)
{
	SYM_OPTS(sym_module_opts, opts, .flags = SYM_MODULE_NO_SEARCH);
	struct sym_module *mod = NULL;
	const struct sym_table *t = NULL;
	struct sym_table_stat st;
	const void *buf;
	size_t len;
	const char *base = strrchr(elf, '/');
	char path[4096], msg[128];
	FILE *f;
	int err;

	base = base ? base + 1 : elf;
	err = sym_module_open(elf, &opts, &mod);
	if (!err)
		err = sym_module_table(mod, &t);
	if (err) {
		fprintf(stderr, "gen-table-seeds: '%s': %s\n", elf,
			sym_strerror(err, msg, sizeof(msg)));
		sym_module_close(mod);
		return 1;
	}
	sym_table_data(t, &buf, &len);
	sym_table_stat(t, &st);
	if (snprintf(path, sizeof(path), "%s/table-%s%s", outdir, base,
		     suffix) >=
	    (int)sizeof(path)) {
		fprintf(stderr, "gen-table-seeds: path too long\n");
		sym_module_close(mod);
		return 1;
	}
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "gen-table-seeds: cannot write '%s': %s\n",
			path, strerror(errno));
		sym_module_close(mod);
		return 1;
	}
	printf("%s: %zu bytes, %u ranges, %u scopes, %u symbols\n", path, len,
	       st.ranges, st.scopes, st.symbols);
	sym_module_close(mod);
	return 0;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: gen-table-seeds OUTDIR ELF...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		size_t keep = symi_zrec_max;
		unsigned shift = symi_zrec_sym_shift;

		failed |= write_table(argv[1], argv[i], "");
		symi_zrec_max = 0;
		failed |= write_table(argv[1], argv[i], "-plainrec");
		symi_zrec_max = keep;
		symi_zrec_sym_shift = 2;
		failed |= write_table(argv[1], argv[i], "-chunks");
		symi_zrec_sym_shift = shift;
	}
	return failed;
}
