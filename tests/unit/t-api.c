/*
 * t-api.c - the contract at the top of sym.h, checked on every function
 * it names:
 * - sym_version() gives the running library's version, as string and
 *   numbers, with any out-pointer NULL;
 * - options structs: symi_opts_check() and, through sym_module_open(),
 *   sym_module_open_mem() and sym_store_open(), what each caller gets: NULL
 *   is the defaults, sz == 0 and sz below sizeof(size_t) are -EINVAL, an
 *   older (shorter) struct has its missing fields read as zero, a newer
 *   (longer) one is accepted with a zero tail and refused with any
 *   non-zero byte in it, unknown flag bits are refused; SYM_OPTS() leaves
 *   no garbage in the padding the check reads;
 * - NULL: int functions return -EINVAL and clear their object
 *   out-parameters, pointer getters return NULL, count getters 0, void
 *   getters zero-fill their struct and ignore a NULL one, closes are
 *   no-ops;
 * - "not found" is -SYM_E_NOTFOUND: a store directory with no variable to
 *   name it, a symbol, a section.
 * The module used is this test program, which is built with -g.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tap.h"
#include "internal.h"
#include "base.h"

static const char *self;

static void test_version(void)
{
	int ma = -1, mi = -1, pa = -1;
	char want[32];
	const char *v = sym_version(&ma, &mi, &pa);

	CHECK(v != NULL && strcmp(v, SYM_VERSION) == 0);
	CHECK(ma == SYM_VERSION_MAJOR && mi == SYM_VERSION_MINOR &&
	      pa == SYM_VERSION_PATCH);
	snprintf(want, sizeof(want), "%d.%d.%d", ma, mi, pa);
	CHECK(strcmp(v, want) == 0);
	CHECK(sym_version(NULL, NULL, NULL) == v);
	mi = -1;
	CHECK(sym_version(NULL, &mi, NULL) == v && mi == SYM_VERSION_MINOR);
}

/* A caller built against a newer sym.h: the struct this library knows,
 * then fields it does not. */
struct newer_module_opts {
	struct sym_module_opts o;
	uint64_t later;
	uint32_t later_flags;
};

/* symi_opts_check() on the bytes alone: no flags. */
static int check(const void *o, size_t known)
{
	return symi_opts_check(o, known, "t", 0, 0);
}

static void test_opts_check(void)
{
	const size_t known = SYMI_OFFSETOFEND(struct sym_module_opts, flags);
	struct newer_module_opts n;
	size_t sz = 0;

	CHECK_ERR(check(NULL, known), 0);
	memset(&n, 0, sizeof(n));
	CHECK_ERR(check(&n, known), -EINVAL);	/* sz 0 */
	n.o.sz = sizeof(size_t) - 1;
	CHECK_ERR(check(&n, known), -EINVAL);
	n.o.sz = sizeof(size_t);			/* only sz itself */
	CHECK_ERR(check(&n, known), 0);
	n.o.sz = known;
	CHECK_ERR(check(&n, known), 0);
	n.o.sz = sizeof(n);
	CHECK_ERR(check(&n, known), 0);	/* zero tail */
	/* Every byte of the tail counts, the first and the last. */
	for (size_t i = known; i < sizeof(n); i++) {
		((unsigned char *)&n)[i] = 0x01;
		if (check(&n, known) != -EINVAL)
			break;
		((unsigned char *)&n)[i] = 0;
		sz = i;
	}
	CHECK(sz == sizeof(n) - 1);
	/* Bytes past the caller's own sz are not the caller's: not read. */
	n.later = 1;
	n.o.sz = known;
	CHECK_ERR(check(&n, known), 0);
	/* The fields it knows may hold anything. */
	n.later = 0;
	n.o.sz = sizeof(n);
	n.o.flags = 0xffffffff;
	n.o.debug_dir = "x";
	CHECK_ERR(check(&n, known), 0);
	/* Flags: only the known bits. */
	CHECK_ERR(symi_opts_check(&n, known, "t", 0x5, 0x7), 0);
	CHECK_ERR(symi_opts_check(&n, known, "t", 0x9, 0x7), -EINVAL);
	CHECK_ERR(symi_opts_check(NULL, known, "t", 0, 0), 0);
}

/* Leave non-zero bytes on the stack where the next call's locals go. */
static __attribute__((noinline)) void dirty_stack(void)
{
	volatile unsigned char junk[4096];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

static __attribute__((noinline)) int declared_clean(void)
{
	SYM_OPTS(sym_module_opts, mo, .flags = SYM_MODULE_NO_SEARCH);
	SYM_OPTS(sym_store_opts, so, .ttl_failed = 5);
	const struct sym_module_opts *pm = &mo;
	const struct sym_store_opts *ps = &so;

	return SYMI_OPTS_CHECK(pm, sym_module_opts, flags, UINT64_MAX) == 0 &&
	       SYMI_OPTS_CHECK(ps, sym_store_opts, flags, UINT64_MAX) == 0 &&
	       mo.sz == sizeof(mo) && so.sz == sizeof(so) &&
	       mo.flags == SYM_MODULE_NO_SEARCH && so.ttl_failed == 5 &&
	       !mo.debug_dir && !so.max_size;
}

static void test_sym_opts_macro(void)
{
	int clean = 1;

	/* The padding after the last field is part of what the check
	 * reads when sz is the full sizeof. */
	for (int i = 0; i < 8; i++) {
		dirty_stack();
		clean &= declared_clean();
	}
	CHECK(clean);
}

static void test_module_opts(void)
{
	struct sym_module *m = (struct sym_module *)&m;
	struct newer_module_opts n;
	struct sym_module_opts old;
	const char *img = "\177ELF";

	/* NULL: the defaults (DWARF found inside the file). */
	CHECK_ERR(sym_module_open(self, NULL, &m), 0);
	CHECK(sym_module_debug_file(m) != NULL);
	sym_module_close(m);
	{
		SYM_OPTS(sym_module_opts, o, .flags = SYM_MODULE_NO_DWARF);

		CHECK_ERR(sym_module_open(self, &o, &m), 0);
		CHECK(sym_module_debug_file(m) == NULL);
		sym_module_close(m);
	}
	/* sz == 0: a struct not made with SYM_OPTS() is refused, not taken
	 * for the defaults. */
	memset(&old, 0, sizeof(old));
	m = (struct sym_module *)&m;
	CHECK_ERR(sym_module_open(self, &old, &m), -EINVAL);
	CHECK(m == NULL);
	m = (struct sym_module *)&m;
	CHECK_ERR(sym_module_open_mem(img, 4, &old, &m), -EINVAL);
	CHECK(m == NULL);
	/* An older caller whose struct ends before flags: the flags it
	 * cannot have set are not read. */
	old.sz = offsetof(struct sym_module_opts, flags);
	old.flags = SYM_MODULE_NO_DWARF;
	CHECK_ERR(sym_module_open(self, &old, &m), 0);
	CHECK(sym_module_debug_file(m) != NULL);
	sym_module_close(m);
	/* A newer caller: zero tail accepted, any other refused. */
	memset(&n, 0, sizeof(n));
	n.o.sz = sizeof(n);
	n.o.flags = SYM_MODULE_NO_DWARF;
	CHECK_ERR(sym_module_open(self, &n.o, &m), 0);
	CHECK(m && sym_module_debug_file(m) == NULL);
	sym_module_close(m);
	n.later_flags = 1;
	CHECK_ERR(sym_module_open(self, &n.o, &m), -EINVAL);
	CHECK(m == NULL);
	CHECK_ERR(sym_module_open_mem(img, 4, &n.o, &m), -EINVAL);
	/* A flag bit this library does not name. */
	n.later_flags = 0;
	n.o.flags = 1u << 30;
	CHECK_ERR(sym_module_open(self, &n.o, &m), -EINVAL);
	CHECK(m == NULL);
}

static int exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

struct newer_store_opts {
	struct sym_store_opts o;
	uint64_t later;
};

static void test_store_opts(const char *tmp)
{
	struct sym_store *st = NULL;
	struct newer_store_opts n;
	char dir[4200];

	snprintf(dir, sizeof(dir), "%s/s", tmp);
	memset(&n, 0, sizeof(n));
	/* Refused before anything is created. */
	CHECK_ERR(sym_store_open(dir, &n.o, &st), -EINVAL);	/* sz 0 */
	CHECK(st == NULL && !exists(dir));
	n.o.sz = sizeof(n);
	n.later = 42;
	CHECK_ERR(sym_store_open(dir, &n.o, &st), -EINVAL);
	CHECK(st == NULL && !exists(dir));
	n.later = 0;
	n.o.flags = 1u << 20;
	CHECK_ERR(sym_store_open(dir, &n.o, &st), -EINVAL);
	CHECK(st == NULL && !exists(dir));
	n.o.flags = 0;
	CHECK_ERR(sym_store_open(dir, &n.o, &st), 0);
	sym_store_close(st);
	st = NULL;
	{
		SYM_OPTS(sym_store_opts, o, .flags = SYM_STORE_RDONLY);

		CHECK_ERR(sym_store_open(dir, &o, &st), 0);
		CHECK_ERR(sym_store_put_negative(st, "abcd", SYM_STORE_ABSENT,
						 NULL),
			  -EROFS);
		sym_store_close(st);
	}
	CHECK_ERR(sym_store_open(dir, NULL, &st), 0);
	CHECK_ERR(sym_store_put_negative(st, "abcd", SYM_STORE_ABSENT, NULL),
		  0);
	sym_store_close(st);
}

/* The NULL rule (sym.h, "NULL") on every function taking an object. */
static void test_null(void)
{
	struct sym_module_info info;
	struct sym_module_stats ms;
	struct sym_table_stat ts;
	struct sym_store_entry e;
	struct sym_frame fr[4];
	const struct sym_table *ct = (const struct sym_table *)&ct;
	struct sym_table *t = (struct sym_table *)&t, **parts;
	struct sym_store *st = (struct sym_store *)&st;
	struct sym_store_lock *l = (struct sym_store_lock *)&l;
	const void *buf = &buf;
	uint64_t a = 0, off, size, addr = 1;
	size_t n = 7, len = 7;
	char hex[256];
	int waited = 1;

	memset(&info, 0xff, sizeof(info));
	sym_module_info(NULL, &info);
	CHECK(info.elf_class == 0 && info.elf_type == 0 && info.machine == 0);
	memset(&ms, 0xff, sizeof(ms));
	sym_module_stats(NULL, &ms);
	CHECK(ms.symbols == 0 && ms.inflate == 0 && ms.lines == 0 &&
	      ms.dies == 0 && ms.build == 0);
	memset(&ts, 0xff, sizeof(ts));
	sym_table_stat(NULL, &ts);
	CHECK(ts.size == 0 && ts.ranges == 0 && ts.flags == 0 &&
	      ts.converter == 0);
	sym_table_data(NULL, &buf, &len);
	CHECK(buf == NULL && len == 0);
	sym_table_stat(NULL, NULL);
	sym_table_data(NULL, NULL, NULL);
	sym_module_info(NULL, NULL);
	sym_module_stats(NULL, NULL);
	CHECK(sym_module_build_id(NULL) == NULL);
	CHECK(sym_module_debug_file(NULL) == NULL);
	CHECK_ERR(sym_module_table(NULL, &ct), -EINVAL);
	CHECK(ct == NULL);
	CHECK_ERR(sym_module_lookup(NULL, 0, fr, 4, &n), -EINVAL);
	CHECK(n == 0);
	CHECK_ERR(sym_table_open(NULL, 64, &t), -EINVAL);
	CHECK(t == NULL);
	CHECK_ERR(sym_table_verify(NULL), -EINVAL);
	n = 7;
	CHECK_ERR(sym_table_lookup(NULL, 0, fr, 4, &n), -EINVAL);
	CHECK(n == 0);
	CHECK_ERR(sym_table_lookup_batch(NULL, &a, 1, NULL, NULL), -EINVAL);
	CHECK_ERR(sym_table_find_symbol(NULL, "main", &addr, NULL), -EINVAL);
	parts = (struct sym_table **)&parts;
	n = 7;
	CHECK_ERR(sym_table_split(NULL, 4096, &parts, &n), -EINVAL);
	CHECK(parts == NULL && n == 0);
	CHECK(sym_strerror(-EINVAL, NULL, 16) == NULL);
	CHECK(sym_demangle(NULL) == NULL);
	CHECK_ERR(sym_file_build_id(NULL, hex, sizeof(hex)), -EINVAL);
	CHECK_ERR(sym_file_build_id(self, NULL, 0), -EINVAL);
	CHECK_ERR(sym_file_section(NULL, ".text", &off, &size), -EINVAL);
	CHECK_ERR(sym_file_section(self, ".text", NULL, &size), -EINVAL);

	CHECK_ERR(sym_store_default_dir(NULL, 16), -EINVAL);
	CHECK_ERR(sym_store_open(NULL, NULL, &st), -EINVAL);
	CHECK(st == NULL);
	CHECK_ERR(sym_store_maintain(NULL), -EINVAL);
	CHECK_ERR(sym_store_put(NULL, "abcd", t, NULL), -EINVAL);
	CHECK_ERR(sym_store_put_negative(NULL, "abcd", SYM_STORE_ABSENT,
					 NULL),
		  -EINVAL);
	CHECK_ERR(sym_store_stat_entry(NULL, "abcd", &e), -EINVAL);
	CHECK(sym_store_has_table(NULL, "abcd") == 0);
	CHECK_ERR(sym_store_lookup(NULL, "abcd", &a, 1, NULL, NULL), -EINVAL);
	CHECK_ERR(sym_store_remove(NULL, "abcd"), -EINVAL);
	CHECK_ERR(sym_store_list(NULL, NULL, NULL), -EINVAL);
	CHECK_ERR(sym_store_gc(NULL, 0, NULL), -EINVAL);
	CHECK_ERR(sym_store_verify(NULL, NULL, NULL), -EINVAL);
	CHECK_ERR(sym_store_put_file(NULL, "abcd", SYM_STORE_DEBUGINFO, self),
		  -EINVAL);
	CHECK_ERR(sym_store_take_file(NULL, "abcd", SYM_STORE_DEBUGINFO,
				      self),
		  -EINVAL);
	CHECK_ERR(sym_store_file_path(NULL, "abcd", SYM_STORE_DEBUGINFO, hex,
				      sizeof(hex)),
		  -EINVAL);
	CHECK_ERR(sym_store_warm(NULL, "abcd"), -EINVAL);
	CHECK_ERR(sym_store_lock(NULL, "abcd", 0, &l, &waited), -EINVAL);
	CHECK(l == NULL && waited == 0);
	memset(&ms, 0xff, sizeof(ms));
	CHECK_ERR(sym_store_convert(NULL, "abcd", NULL, &ms), -EINVAL);
	CHECK(ms.build == 0);
	/* Closes and frees of NULL do nothing. */
	sym_table_close(NULL);
	sym_module_close(NULL);
	sym_store_close(NULL);
	sym_store_unlock(NULL);
	CHECK(1);
}

/* With a real object, a NULL out-struct is ignored and a NULL required
 * argument is -EINVAL. */
static void test_null_args(const char *tmp)
{
	struct sym_module *m = NULL;
	const struct sym_table *t = NULL;
	struct sym_store *st = NULL;
	struct sym_frame fr[4];
	size_t n;

	if (sym_module_open(self, NULL, &m) || sym_module_table(m, &t)) {
		CHECK(!"open self");
		sym_module_close(m);
		return;
	}
	sym_module_info(m, NULL);
	sym_module_stats(m, NULL);
	sym_table_stat(t, NULL);
	CHECK_ERR(sym_module_table(m, NULL), -EINVAL);
	CHECK_ERR(sym_table_lookup(t, 0, NULL, 4, &n), -EINVAL);
	CHECK_ERR(sym_table_lookup(t, 0, fr, 4, NULL), -EINVAL);
	CHECK_ERR(sym_table_find_symbol(t, NULL, &(uint64_t){ 0 }, NULL),
		  -EINVAL);
	CHECK_ERR(sym_store_open(tmp, NULL, NULL), -EINVAL);
	CHECK_ERR(sym_store_open(tmp, NULL, &st), 0);
	CHECK_ERR(sym_store_put(st, NULL, t, NULL), -EINVAL);
	CHECK_ERR(sym_store_put(st, "abcd", NULL, NULL), -EINVAL);
	CHECK_ERR(sym_store_stat_entry(st, "abcd", NULL), -EINVAL);
	CHECK(sym_store_has_table(st, NULL) == 0);
	CHECK_ERR(sym_store_list(st, NULL, NULL), -EINVAL);
	sym_store_close(st);
	sym_module_close(m);
}

/*
 * sym_module_table_for(): the argument checks; a table of its own (caller
 * owns it) that answers its addresses as the full table does, however
 * often it is called; -EALREADY once the full table is built.  The
 * addresses are in main() and two functions of libsym linked in.
 */
static void test_table_for(void)
{
	uint64_t addrs[3] = { 0 };
	struct sym_module *m = NULL;
	const struct sym_table *full = NULL;
	struct sym_table *t = NULL, *t2 = NULL;
	struct sym_frame a[SYM_MAX_FRAMES], b[SYM_MAX_FRAMES];
	size_t na = 0, nb = 0;

	CHECK_ERR(sym_module_table_for(NULL, addrs, 1, &t), -EINVAL);
	CHECK(t == NULL);
	if (sym_module_open(self, NULL, &m)) {
		CHECK(!"open self");
		return;
	}
	CHECK_ERR(sym_module_table_for(m, addrs, 1, NULL), -EINVAL);
	CHECK_ERR(sym_module_table_for(m, NULL, 1, &t), -EINVAL);
	CHECK_ERR(sym_module_table_for(m, NULL, 0, &t), 0);
	CHECK(t != NULL);
	sym_table_close(t);
	t = NULL;
	/* Their addresses, from another module's table. */
	{
		struct sym_module *s = NULL;
		const struct sym_table *st = NULL;
		const char *names[3] = { "main", "sym_module_open",
					"sym_strerror" };

		CHECK_ERR(sym_module_open(self, NULL, &s), 0);
		CHECK_ERR(sym_module_table(s, &st), 0);
		for (int i = 0; i < 3 && st; i++) {
			CHECK_ERR(sym_table_find_symbol(st, names[i], &addrs[i],
							NULL), 0);
			addrs[i] += 4;
		}
		sym_module_close(s);
	}
	CHECK_ERR(sym_module_table_for(m, addrs, 3, &t), 0);
	CHECK_ERR(sym_module_table_for(m, addrs + 1, 1, &t2), 0);
	CHECK_ERR(sym_module_table(m, &full), 0);
	CHECK_ERR(sym_module_table_for(m, addrs, 1, &(struct sym_table *){ 0 }),
		  -EALREADY);
	for (int i = 0; i < 3 && t && full; i++) {
		CHECK_ERR(sym_table_lookup(full, addrs[i], a, SYM_MAX_FRAMES,
					   &na), 0);
		CHECK_ERR(sym_table_lookup(t, addrs[i], b, SYM_MAX_FRAMES,
					   &nb), 0);
		CHECK(na == nb && na > 0 && a[0].line == b[0].line &&
		      a[0].line > 0 && strcmp(a[0].name, b[0].name) == 0 &&
		      strcmp(a[0].file, b[0].file) == 0);
	}
	if (t2 && full) {
		CHECK_ERR(sym_table_lookup(t2, addrs[1], b, SYM_MAX_FRAMES,
					   &nb), 0);
		CHECK(nb > 0 && strcmp(b[nb - 1].name, "sym_module_open") == 0);
	}
	/* The caller's tables outlive the module. */
	sym_module_close(m);
	CHECK_ERR(sym_table_lookup(t, addrs[0], b, SYM_MAX_FRAMES, &nb), 0);
	CHECK(nb > 0 && strcmp(b[nb - 1].name, "main") == 0);
	sym_table_close(t);
	sym_table_close(t2);
}

/*
 * sym_module_table_symbols(): a caller-owned table of the symbols alone
 * (main named, no line), then -EALREADY once the full table is built;
 * sym_conversion_*(): the argument checks, no files (-SYM_E_NOTFOUND),
 * and a conversion in steps that stores the table the files give, its
 * symbols-alone table from a module of its own the same bytes as from
 * its module.
 */
static void test_conversion(const char *tmp)
{
	struct sym_module *m = NULL;
	const struct sym_table *full = NULL;
	struct sym_table *t = NULL, *t2 = (struct sym_table *)1;
	struct sym_conversion *cv = (struct sym_conversion *)1;
	struct sym_store *st = NULL;
	struct sym_frame f[SYM_MAX_FRAMES];
	char dir[4096], id[130];
	uint64_t addr = 0;
	size_t n = 0;

	CHECK_ERR(sym_module_table_symbols(NULL, &t), -EINVAL);
	if (sym_module_open(self, NULL, &m)) {
		CHECK(!"open self");
		return;
	}
	CHECK_ERR(sym_module_table_symbols(m, NULL), -EINVAL);
	CHECK_ERR(sym_module_table_symbols(m, &t), 0);
	if (t && sym_table_find_symbol(t, "main", &addr, NULL) == 0) {
		CHECK_ERR(sym_table_lookup(t, addr + 4, f, SYM_MAX_FRAMES, &n),
			  0);
		CHECK(n == 1 && f[0].line == 0 && f[0].file == NULL &&
		      strcmp(sym_frame_name(&f[0]), "main") == 0);
	} else {
		CHECK(!"main in the symbols-alone table");
	}
	sym_table_close(t);
	CHECK_ERR(sym_module_table(m, &full), 0);
	CHECK_ERR(sym_module_table_symbols(m, &t), -EALREADY);
	sym_module_close(m);

	snprintf(dir, sizeof(dir), "%s/conv", tmp);
	if (sym_store_open(dir, NULL, &st)) {
		CHECK(!"open a store");
		return;
	}
	CHECK_ERR(sym_conversion_open(NULL, "ab", NULL, &cv), -EINVAL);
	CHECK(cv == NULL);
	CHECK_ERR(sym_conversion_open(st, NULL, NULL, &cv), -EINVAL);
	CHECK_ERR(sym_conversion_open(st, "ab", NULL, NULL), -EINVAL);
	CHECK_ERR(sym_conversion_open(st, "abcd", NULL, &cv), -SYM_E_NOTFOUND);
	CHECK(sym_conversion_module(NULL) == NULL);
	CHECK_ERR(sym_conversion_finish(NULL, NULL), -EINVAL);
	sym_conversion_close(NULL);
	if (sym_file_module_id(self, id, sizeof(id), NULL) == 0 &&
	    sym_store_put_file(st, id, SYM_STORE_EXECUTABLE, self) == 0) {
		CHECK_ERR(sym_conversion_open(st, id, "t-api", &cv), 0);
		CHECK(sym_conversion_module(cv) != NULL);
		CHECK_ERR(sym_conversion_table_symbols(NULL, &t2), -EINVAL);
		CHECK(t2 == NULL);
		CHECK_ERR(sym_conversion_table_symbols(cv, NULL), -EINVAL);
		/* From a module of its own: the same bytes. */
		CHECK_ERR(sym_conversion_table_symbols(cv, &t2), 0);
		CHECK_ERR(sym_module_table_symbols(sym_conversion_module(cv),
						   &t), 0);
		if (t && t2) {
			const void *a, *b;
			size_t na, nb;

			sym_table_data(t, &a, &na);
			sym_table_data(t2, &b, &nb);
			CHECK(na == nb && memcmp(a, b, na) == 0);
		}
		sym_table_close(t);
		sym_table_close(t2);
		CHECK_ERR(sym_conversion_finish(cv, NULL), 0);
		CHECK_ERR(sym_store_has_table(st, id), 1);
	} else {
		CHECK(!"put this test's file in the store");
	}
	sym_store_close(st);
}

static void test_notfound(void)
{
	static const char *const vars[] = { "SYM_STORE", "XDG_CACHE_HOME",
					    "HOME" };
	char *saved[3], buf[256];
	struct sym_module *m = NULL;
	const struct sym_table *t = NULL;
	uint64_t addr, off, size;

	for (int i = 0; i < 3; i++) {
		const char *v = getenv(vars[i]);

		saved[i] = v ? strdup(v) : NULL;
		unsetenv(vars[i]);
	}
	CHECK_ERR(sym_store_default_dir(buf, sizeof(buf)), -SYM_E_NOTFOUND);
	setenv("HOME", "/h", 1);
	CHECK_ERR(sym_store_default_dir(buf, sizeof(buf)), 0);
	CHECK(strcmp(buf, "/h/.cache/sym") == 0);
	CHECK_ERR(sym_store_default_dir(buf, 4), -ERANGE);
	for (int i = 0; i < 3; i++) {
		if (saved[i])
			setenv(vars[i], saved[i], 1);
		else
			unsetenv(vars[i]);
		free(saved[i]);
	}
	CHECK_ERR(sym_file_section(self, ".no-such-section", &off, &size),
		  -SYM_E_NOTFOUND);
	CHECK_ERR(sym_file_section("/nonexistent/x", ".text", &off, &size),
		  -ENOENT);
	if (sym_module_open(self, NULL, &m) == 0 &&
	    sym_module_table(m, &t) == 0) {
		CHECK_ERR(sym_table_find_symbol(t, "no_such_symbol_here",
						&addr, NULL),
			  -SYM_E_NOTFOUND);
		CHECK_ERR(sym_table_find_symbol(t, "main", &addr, NULL), 0);
	} else {
		CHECK(!"open self");
	}
	sym_module_close(m);
}

static void quiet(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/t-api.XXXXXX";
	char cmd[64];

	(void)argc;
	self = argv[0];
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	/* The refusals are logged: keep the TAP output clean. */
	sym_set_log(quiet, NULL, SYM_LOG_WARN);
	test_version();
	test_opts_check();
	test_sym_opts_macro();
	test_module_opts();
	test_store_opts(tmp);
	test_null();
	test_null_args(tmp);
	test_table_for();
	test_conversion(tmp);
	test_notfound();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		perror("rm");
	return tap_done();
}
