/*
 * t-oom.c - every allocation of a table build can fail, and each failure
 * comes back as -ENOMEM: not as -SYM_E_BADDWARF, not as a table that
 * silently lacks something, not as a crash or a leak (the suite also runs
 * under SANITIZE=address,undefined, whose leak check runs at exit).
 *
 * A small fixture (fixtures/src/c_*.c, built here with gcc: DWARF 5 and
 * 4, and the C++ one when g++ is there) is opened, then its table is
 * built with the Nth allocation failing (symi_test_fail_alloc(), the
 * SYM_TEST_FAIL_ALLOC hook of error.c), for N = 1, 2, ... until a build
 * makes fewer than N allocations: that one must succeed and give the
 * same bytes as a build with no failure.  The build covers the symbol
 * reader, the DWARF walk, the line reader (lines.c, and libdw's with
 * SYM_LINES=libdw) and the builder.  Allocations inside libdw are not
 * counted: its out-of-memory handler exits the process.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "internal.h"
#include "base.h"

static char src_dir[1024], tmp[64];

/* Set: build() takes the lazy path, sym_module_table_for() of these. */
static uint64_t lazy_addrs[2];
static size_t lazy_n;

/* Build @path's table with the @n-th allocation failing (0: none).
 * *bytes gets a copy of the table (caller frees) when it is built. */
static int build(const char *path, long n, long *allocs, void **bytes,
		 size_t *len)
{
	struct sym_module *m = NULL;
	const struct sym_table *t = NULL;
	struct sym_table *own = NULL;
	const void *buf;
	int err;

	*bytes = NULL;
	*len = 0;
	symi_test_fail_alloc(0);
	err = sym_module_open(path, NULL, &m);
	if (err)
		return err;
	symi_test_fail_alloc(n);
	if (lazy_n) {
		err = sym_module_table_for(m, lazy_addrs, lazy_n, &own);
		t = own;
	} else {
		err = sym_module_table(m, &t);
	}
	*allocs = symi_test_alloc_count();
	symi_test_fail_alloc(0);
	if (!err) {
		sym_table_data(t, &buf, len);
		*bytes = malloc(*len);
		if (*bytes)
			memcpy(*bytes, buf, *len);
		else
			err = -ENOMEM;
	}
	sym_table_close(own);
	sym_module_close(m);
	return err;
}

/* The lazy path's addresses in @path: main and main + 0x10. */
static int lazy_setup(const char *path)
{
	struct sym_module *m = NULL;
	const struct sym_table *t = NULL;
	uint64_t a = 0;
	int err = sym_module_open(path, NULL, &m);

	if (!err)
		err = sym_module_table(m, &t);
	if (!err)
		err = sym_table_find_symbol(t, "main", &a, NULL);
	sym_module_close(m);
	lazy_addrs[0] = a;
	lazy_addrs[1] = a + 0x10;
	lazy_n = err ? 0 : 2;
	return err;
}

/*
 * Sweep N over the build of @path.  One TAP point: every failed
 * allocation gave -ENOMEM, and the first N past the last allocation
 * built the same table as no failure at all.
 */
static void sweep(const char *what, const char *path)
{
	void *want = NULL, *got;
	size_t want_len, got_len;
	long total = 0, allocs, n, bad = 0;
	int err;
	char eb[128];

	err = build(path, LONG_MAX, &total, &want, &want_len);
	if (err || total <= 0) {
		CHECK_ERR(err, 0);
		free(want);
		return;
	}
	for (n = 1; n <= total + 1; n++) {
		err = build(path, n, &allocs, &got, &got_len);
		if (allocs < n) {
			/* The build made fewer than n: nothing failed. */
			if (err || got_len != want_len ||
			    memcmp(got, want, want_len) != 0) {
				printf("#   %s: N=%ld failed nothing, yet got %d (%s) or other bytes\n",
				       what, n, err,
				       sym_strerror(err, eb, sizeof(eb)));
				bad++;
			}
			free(got);
			break;
		}
		if (err != -ENOMEM && bad++ < 10)
			printf("#   %s: allocation %ld of %ld failed, the build returned %d (%s)\n",
			       what, n, total, err,
			       sym_strerror(err, eb, sizeof(eb)));
		free(got);
	}
	if (n > total + 1) {
		printf("#   %s: N=%ld still failed an allocation\n", what, n);
		bad++;
	}
	printf("# %s: %ld allocations, each failed once\n", what, total);
	tap_ok(!bad, __FILE__, __LINE__, what);
	free(want);
}

int main(void)
{
	const char *root = getenv("SYM_ROOT");
	char path[1200];

	snprintf(src_dir, sizeof(src_dir), "%s/fixtures/src",
		 root && *root ? root : ".");
	if (access(src_dir, R_OK) != 0)
		tap_skip_all("fixtures/src not found (set SYM_ROOT)");
	if (!tap_sh("command -v gcc >/dev/null"))
		tap_skip_all("gcc missing");
	snprintf(tmp, sizeof(tmp), "/tmp/t-oom.XXXXXX");
	if (!mkdtemp(tmp))
		tap_skip_all("cannot create a temporary directory");
	/* Every libsym message of a failed build would be noise here. */
	sym_set_log(NULL, NULL, SYM_LOG_WARN);

#define C_SRCS "c_main.c c_tree.c c_hash.c"
	CHECK(tap_sh("cd '%s' && gcc -O2 -gdwarf-5 -o '%s/c5' " C_SRCS " && "
		 "gcc -O2 -gdwarf-4 -o '%s/c4' " C_SRCS, src_dir, tmp, tmp));
	snprintf(path, sizeof(path), "%s/c5", tmp);
	sweep("C, DWARF 5: the table build, lines.c's reader", path);
	setenv("SYM_LINES", "libdw", 1);
	sweep("C, DWARF 5: the table build, libdw's line reader", path);
	unsetenv("SYM_LINES");
	if (lazy_setup(path) == 0)
		sweep("C, DWARF 5: the lazy path (sym_module_table_for())",
		      path);
	else
		CHECK(!"main in c5");
	lazy_n = 0;
	snprintf(path, sizeof(path), "%s/c4", tmp);
	sweep("C, DWARF 4: the table build, lines.c's reader", path);

	if (!tap_sh("command -v g++ >/dev/null")) {
		tap_skip("C++, DWARF 5", "g++ missing");
	} else {
		CHECK(tap_sh("cd '%s' && g++ -O2 -g -o '%s/cxx' cxx_main.cc "
			 "cxx_shapes.cc cxx_algo.cc", src_dir, tmp));
		snprintf(path, sizeof(path), "%s/cxx", tmp);
		sweep("C++, DWARF 5: the table build, lines.c's reader", path);
	}
	tap_sh("rm -rf '%s'", tmp);
	return tap_done();
}
