/*
 * t-split.c - sym_table_split(): every part verifies, the parts tile the
 * address range, and each address gets from its part exactly the frames
 * the whole table gives.  The input is this test program itself, which
 * is built with -g, and libc when its debug file is installed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "base.h"

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_frames(const struct sym_frame *a, size_t na,
		       const struct sym_frame *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++) {
		if (!same_str(a[i].name, b[i].name) ||
		    !same_str(a[i].linkage_name, b[i].linkage_name) ||
		    !same_str(a[i].demangled, b[i].demangled) ||
		    !same_str(a[i].file, b[i].file) ||
		    !same_str(a[i].decl_file, b[i].decl_file) ||
		    !same_str(a[i].symbol, b[i].symbol) ||
		    a[i].line != b[i].line || a[i].column != b[i].column ||
		    a[i].entry != b[i].entry || a[i].flags != b[i].flags ||
		    a[i].symbol_addr != b[i].symbol_addr)
			return 0;
	}
	return 1;
}

static void check_file(const char *path, size_t nparts_want)
{
	struct sym_module *m = NULL;
	const struct sym_table *t;
	struct sym_table **parts = NULL;
	struct sym_table_stat st;
	struct sym_frame a[SYM_MAX_FRAMES], b[SYM_MAX_FRAMES];
	size_t n = 0, bad = 0, checked = 0, step;
	int err;

	err = sym_module_open(path, NULL, &m);
	CHECK_ERR(err, 0);
	if (err)
		return;
	CHECK_ERR(sym_module_table(m, &t), 0);
	sym_table_stat(t, &st);
	CHECK_ERR(sym_table_split(t, st.size / nparts_want + 1, &parts, &n),
		  0);
	CHECK(n >= 2);
	for (size_t i = 0; i < n; i++) {
		struct sym_table_stat ps;

		sym_table_stat(parts[i], &ps);
		if (sym_table_verify(parts[i]) != 0 ||
		    (i == 0 && ps.start != st.start) ||
		    (i + 1 == n && ps.end != st.end))
			bad++;
		if (i > 0) {
			struct sym_table_stat prev;

			sym_table_stat(parts[i - 1], &prev);
			if (prev.end != ps.start)
				bad++;
		}
	}
	CHECK(bad == 0);
	step = (st.end - st.start) / 20000 + 1;
	for (uint64_t x = st.start; x < st.end; x += step) {
		size_t na, nb, k = 0;

		struct sym_table_stat ps;
		size_t lo = 0, hi = n;

		sym_table_lookup(t, x, a, SYM_MAX_FRAMES, &na);
		/* The last part starting at or below x (they tile). */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			sym_table_stat(parts[mid], &ps);
			if (ps.start <= x)
				lo = mid + 1;
			else
				hi = mid;
		}
		k = lo ? lo - 1 : n;
		if (k < n)
			sym_table_stat(parts[k], &ps);
		if (k == n || x >= ps.end) {
			bad++;
			continue;
		}
		sym_table_lookup(parts[k], x, b, SYM_MAX_FRAMES, &nb);
		checked++;
		if (!same_frames(a, na, b, nb))
			bad++;
	}
	printf("# %s: %zu parts, %zu addresses compared, %zu differ\n", path,
	       n, checked, bad);
	CHECK(checked > 1000 && bad == 0);
	/* One part when it fits. */
	for (size_t i = 0; i < n; i++)
		sym_table_close(parts[i]);
	free(parts);
	CHECK_ERR(sym_table_split(t, st.size + 1, &parts, &n), 0);
	CHECK(n == 1);
	for (size_t i = 0; i < n; i++)
		sym_table_close(parts[i]);
	free(parts);
	CHECK_ERR(sym_table_split(t, 0, &parts, &n), -EINVAL);
	sym_module_close(m);
}

int main(int argc, char **argv)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";

	(void)argc;
	check_file(argv[0], 5);
	check_file(libc, 7);
	/* As many parts as there can be (1-byte parts: two ranges each),
	 * so the ranges run out before the planned parts do: the last part
	 * must still reach the table's end, where only symbols are (libc's
	 * functions past its last line row; a store of 1 KiB chunks lost
	 * them, t-store under ASan). */
	check_file(argv[0], SIZE_MAX);
	check_file(libc, SIZE_MAX);
	return tap_done();
}
