#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include "sym.h"
int main(int argc, char **argv)
{
	struct sym_module *m; const struct sym_table *t; struct sym_table **parts; size_t np, n;
	struct sym_frame fr[SYM_MAX_FRAMES]; struct sym_table_stat ts;
	uint64_t addr = strtoull(argv[2], 0, 16);
	if (sym_module_open(argv[1], NULL, &m) || sym_module_table(m, &t)) return 1;
	sym_table_stat(t, &ts);
	printf("orig start %#" PRIx64 " end %#" PRIx64 " symbols %u\n", ts.start, ts.end, ts.symbols);
	sym_table_lookup(t, addr, fr, SYM_MAX_FRAMES, &n);
	printf("orig: n=%zu name=%s sym=%s\n", n, n ? fr[0].name : "-", n ? fr[n-1].symbol : "-");
	if (sym_table_split(t, argc > 3 ? strtoull(argv[3],0,0) : 64<<20, &parts, &np)) return 2;
	for (size_t i = 0; i < np; i++) {
		sym_table_stat(parts[i], &ts);
		sym_table_lookup(parts[i], addr, fr, SYM_MAX_FRAMES, &n);
		printf("part %zu start %#" PRIx64 " end %#" PRIx64 " symbols %u: n=%zu name=%s\n", i, ts.start, ts.end, ts.symbols, n, n ? fr[0].name : "-");
	}
	return 0;
}
