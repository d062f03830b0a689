/*
 * t-sources.c - sym_path_normalize(), sym_file_sources() and the store's
 * sources (sym_store_put_source(), sym_store_source_path()), on this test
 * program itself: built with -g, its line tables name this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "base.h"

static void quiet(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

static void test_normalize(void)
{
	static const char *const cases[][2] = {
		{ "/a/b/c.c", "/a/b/c.c" },
		{ "/a//b/./c.c", "/a/b/c.c" },
		{ "/build/./libio/../libio/x.c", "/build/libio/x.c" },
		{ "/../../x.c", "/x.c" },
		{ "/a/b/..", "/a" },
		{ "/", "/" },
		{ "//", "/" },
		{ "/a/", "/a" },
	};
	char out[64], name[300];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = sym_path_normalize(cases[i][0], out, sizeof(out));

		CHECK(err == 0 && strcmp(out, cases[i][1]) == 0);
		if (err || strcmp(out, cases[i][1]))
			printf("#   %s -> %s\n", cases[i][0], out);
	}
	CHECK_ERR(sym_path_normalize("a/b.c", out, sizeof(out)), -EINVAL);
	CHECK_ERR(sym_path_normalize("", out, sizeof(out)), -EINVAL);
	CHECK_ERR(sym_path_normalize(NULL, out, sizeof(out)), -EINVAL);
	CHECK_ERR(sym_path_normalize("/a/b.c", NULL, 10), -EINVAL);
	CHECK_ERR(sym_path_normalize("/abc/def.c", out, 5), -ERANGE);
	name[0] = '/';
	memset(name + 1, 'x', 256);
	name[257] = '\0';
	CHECK_ERR(sym_path_normalize(name, out, sizeof(out)), -EINVAL);
}

struct seen {
	char mine[4096];
	size_t n;
	bool sorted, normal;
	char last[4096];
};

static int seen_fn(void *ctx, const char *path)
{
	struct seen *s = ctx;
	char norm[4096];
	size_t len = strlen(path), tail = strlen("/tests/unit/t-sources.c");

	if (s->n && strcmp(s->last, path) >= 0)
		s->sorted = false;
	if (sym_path_normalize(path, norm, sizeof(norm)) != 0 ||
	    strcmp(norm, path) != 0)
		s->normal = false;
	snprintf(s->last, sizeof(s->last), "%s", path);
	if (len > tail && strcmp(path + len - tail,
				 "/tests/unit/t-sources.c") == 0)
		snprintf(s->mine, sizeof(s->mine), "%s", path);
	s->n++;
	return 0;
}

static int stop_fn(void *ctx, const char *path)
{
	(void)path;
	return ++*(int *)ctx == 2 ? 7 : 0;
}

static void test_store(const char *self, const char *src)
{
	char dir[] = "/tmp/t-sources.XXXXXX", hex[129], path[4096], cmd[300];
	char other[4096 + 8], buf[64];
	struct sym_store *st = NULL;
	uint64_t off = 0;
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	CHECK_ERR(sym_store_open(dir, NULL, &st), 0);
	CHECK_ERR(sym_file_build_id(self, hex, sizeof(hex)), 0);
	/* No file of the build ID yet: nothing to check the path against. */
	CHECK_ERR(sym_store_put_source(st, hex, src, src, 0), -ENODATA);
	CHECK_ERR(sym_store_put_file(st, hex, SYM_STORE_EXECUTABLE, self), 0);
	CHECK_ERR(sym_store_put_source(st, hex, "/no/such/x.c", src, 0),
		  -SYM_E_NOTFOUND);
	snprintf(other, sizeof(other), "/.%s", src);
	CHECK_ERR(sym_store_put_source(st, hex, other, src, 0), -EINVAL);
	CHECK_ERR(sym_store_put_source(st, hex, src, src, 100), -EFBIG);
	CHECK_ERR(sym_store_source_path(st, hex, src, path, sizeof(path),
					&off), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_store_put_source(st, hex, src, src, 0), 0);
	CHECK_ERR(sym_store_source_path(st, hex, src, path, sizeof(path),
					&off), 0);
	CHECK(off == strlen(src) + 1);
	f = fopen(path, "r");
	CHECK(f && fseek(f, (long)off, SEEK_SET) == 0 &&
	      fgets(buf, sizeof(buf), f) && strcmp(buf, "/*\n") == 0);
	if (f)
		fclose(f);
	CHECK_ERR(sym_store_source_path(st, hex, "/other.c", path,
					sizeof(path), &off), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_store_source_path(st, hex, src, path, 8, &off), -ERANGE);
	/* A remove takes the sources with the files. */
	CHECK_ERR(sym_store_remove(st, hex), 0);
	CHECK_ERR(sym_store_source_path(st, hex, src, path, sizeof(path),
					&off), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_store_put_source(NULL, hex, src, src, 0), -EINVAL);
	CHECK_ERR(sym_store_put_source(st, "xyz", src, src, 0), -EINVAL);
	sym_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
	struct seen s = { .sorted = true, .normal = true };
	int calls = 0;

	(void)argc;
	sym_set_log(quiet, NULL, SYM_LOG_WARN);
	test_normalize();
	CHECK_ERR(sym_file_sources(argv[0], seen_fn, &s), 0);
	CHECK(s.n > 1 && s.sorted && s.normal);
	CHECK(s.mine[0] == '/');
	CHECK_ERR(sym_file_sources(argv[0], stop_fn, &calls), 7);
	CHECK_ERR(sym_file_sources("/nonexistent", seen_fn, &s), -ENOENT);
	CHECK_ERR(sym_file_sources(argv[0], NULL, NULL), -EINVAL);
	if (s.mine[0] == '/' && access(s.mine, R_OK) == 0)
		test_store(argv[0], s.mine);
	else
		printf("ok %d # skip this file is not at %s\n", ++tap_n,
		       s.mine);
	return tap_done();
}
