/*
 * t-store.c - the LMDB store on disk: put and lookup (one chunk and many),
 * metadata, negative entries and their TTLs, removal, listing, eviction
 * to max_size, compaction, a full map, and a corrupted chunk.  The table
 * is this test program's own (it is built with -g).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "gnuref.h"
#include "internal.h"
#include "base.h"

struct cmp {
	const struct sym_table *t;
	const uint64_t *addrs;
	size_t bad, calls;
};

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Each answer from the store must equal the in-memory table's. */
static int cmp_cb(void *ctx, size_t idx, const struct sym_frame *fr,
		  size_t n)
{
	struct cmp *c = ctx;
	struct sym_frame want[SYM_MAX_FRAMES];
	size_t nw;

	c->calls++;
	sym_table_lookup(c->t, c->addrs[idx], want, SYM_MAX_FRAMES, &nw);
	if (nw != n) {
		c->bad++;
		return 0;
	}
	/* Every field; the strings by content (the store's are its own). */
	for (size_t i = 0; i < n; i++) {
		if (!same_str(fr[i].name, want[i].name) ||
		    !same_str(fr[i].linkage_name, want[i].linkage_name) ||
		    !same_str(fr[i].demangled, want[i].demangled) ||
		    !same_str(fr[i].file, want[i].file) ||
		    !same_str(fr[i].decl_file, want[i].decl_file) ||
		    !same_str(fr[i].symbol, want[i].symbol) ||
		    fr[i].line != want[i].line ||
		    fr[i].column != want[i].column ||
		    fr[i].discriminator != want[i].discriminator ||
		    fr[i].decl_line != want[i].decl_line ||
		    fr[i].entry != want[i].entry ||
		    fr[i].symbol_addr != want[i].symbol_addr ||
		    fr[i].symbol_size != want[i].symbol_size ||
		    fr[i].flags != want[i].flags) {
			c->bad++;
			break;
		}
	}
	return 0;
}

static int count_cb(void *ctx, const char *id, const struct sym_store_entry *e)
{
	(void)id;
	(void)e;
	(*(int *)ctx)++;
	return 0;
}

static size_t sample(const struct sym_table *t, uint64_t *a, size_t max)
{
	struct sym_table_stat st;
	size_t n = 0;

	sym_table_stat(t, &st);
	for (uint64_t x = st.start; x < st.end && n < max;
	     x += (st.end - st.start) / max + 1)
		a[n++] = x;
	/* Unsorted too: the store must seek back. */
	for (size_t i = 0; i + 1 < n; i += 3) {
		uint64_t tmp = a[i];

		a[i] = a[n - 1 - i];
		a[n - 1 - i] = tmp;
	}
	return n;
}

static const char *ID = "0123456789abcdef0123456789abcdef01234567";

/* The corruption tests make libsym warn once per damaged chunk. */
static void quiet(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

/* Flip a byte in the body of every table in the store at @dir, as a
 * disk error would; returns how many. */
static int damage_tables(const char *dir)
{
	char path[256];
	struct stat sb;
	unsigned char *p;
	int fd, hits = 0;

	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return 0;
	p = fstat(fd, &sb) == 0 ? malloc(sb.st_size) : NULL;
	if (p && pread(fd, p, sb.st_size, 0) == sb.st_size) {
		for (off_t i = 0; i + 8 < sb.st_size; i++) {
			if (memcmp(p + i, "SYMTAB\r\n", 8) == 0) {
				p[i + 200] ^= 0x5a;
				hits++;
			}
		}
		if (pwrite(fd, p, sb.st_size, 0) != sb.st_size)
			hits = 0;
	}
	free(p);
	close(fd);
	return hits;
}

/* Remove a temporary store's directory; a failure is only said. */
static void remove_dir(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

/*
 * An entry a lookup verified whole is marked so (STORE_VERIFIED) with its
 * access time: a later process checks its CRC alone, which still finds
 * damage; a new generation is verified anew.
 */
static void verified_once(const struct sym_table *t, const uint64_t *addrs,
			  size_t n, struct cmp *c)
{
	char dir[] = "/tmp/t-store-v.XXXXXX";
	struct sym_store *st = NULL;

	if (!mkdtemp(dir)) {
		CHECK(!"no temporary directory");
		return;
	}
	CHECK_ERR(sym_store_open(dir, NULL, &st), 0);
	CHECK_ERR(sym_store_put(st, "ee", t, NULL), 0);
	CHECK_ERR(symi_store_verified(st, "ee"), 0);
	c->calls = c->bad = 0;
	CHECK_ERR(sym_store_lookup(st, "ee", addrs, n, cmp_cb, c), 0);
	CHECK(c->bad == 0 && c->calls == n);
	sym_store_close(st);	/* the mark goes with the access time */
	CHECK_ERR(sym_store_open(dir, NULL, &st), 0);
	CHECK_ERR(symi_store_verified(st, "ee"), 1);
	c->calls = c->bad = 0;
	CHECK_ERR(sym_store_lookup(st, "ee", addrs, n, cmp_cb, c), 0);
	CHECK(c->bad == 0 && c->calls == n);
	CHECK_ERR(sym_store_put(st, "ee", t, NULL), 0);
	CHECK_ERR(symi_store_verified(st, "ee"), 0);
	CHECK_ERR(sym_store_lookup(st, "ee", addrs, n, cmp_cb, c), 0);
	sym_store_close(st);
	CHECK(damage_tables(dir) > 0);
	CHECK_ERR(sym_store_open(dir, NULL, &st), 0);
	CHECK_ERR(symi_store_verified(st, "ee"), 1);
	CHECK_ERR(sym_store_lookup(st, "ee", addrs, n, cmp_cb, c),
		  -SYM_E_BADTABLE);
	CHECK_ERR(symi_store_verified(st, "ee"), -SYM_E_NOTFOUND);
	sym_store_close(st);
	remove_dir(dir);
}

/* The access time a lookup leaves: renewed by the first read after the
 * put (a later second), then not again within ACCESS_GRAIN (600 s), so
 * that most reads write nothing.  Time is read in whole seconds: the
 * sleeps only make the next second come. */
static int64_t accessed(struct sym_store *st, const char *id)
{
	struct sym_store_entry e;

	if (sym_store_stat_entry(st, id, &e) != 0)
		return -1;
	return e.last_access;
}

static void access_grain(const struct sym_table *t, const uint64_t *addrs,
			 size_t n, struct cmp *c)
{
	char dir[] = "/tmp/t-store-a.XXXXXX";
	struct sym_store *st = NULL;
	struct sym_store_entry e;
	int64_t first;

	if (!mkdtemp(dir)) {
		CHECK(!"no temporary directory");
		return;
	}
	CHECK_ERR(sym_store_open(dir, NULL, &st), 0);
	CHECK_ERR(sym_store_put(st, "ab", t, NULL), 0);
	CHECK_ERR(sym_store_stat_entry(st, "ab", &e), 0);
	CHECK(e.last_access == e.created);
	usleep(1100000);
	CHECK_ERR(sym_store_lookup(st, "ab", addrs, n, cmp_cb, c), 0);
	sym_store_close(st);
	CHECK_ERR(sym_store_open(dir, NULL, &st), 0);
	first = accessed(st, "ab");
	CHECK(first > e.created);	/* never read since the put: renewed */
	usleep(1100000);
	CHECK_ERR(sym_store_lookup(st, "ab", addrs, n, cmp_cb, c), 0);
	sym_store_close(st);
	CHECK_ERR(sym_store_open(dir, NULL, &st), 0);
	CHECK(accessed(st, "ab") == first);	/* within the grain: kept */
	sym_store_close(st);
	remove_dir(dir);
}

/*
 * sym_store_export() and sym_store_import(): a table of several chunks
 * goes out as whole tables end to end and comes back, chunk for chunk,
 * answering the same; bytes cut short, damaged or misaligned are refused
 * and store nothing.
 */
static void export_import(struct sym_store *st, const uint64_t *addrs,
			  size_t n, struct cmp *c)
{
	struct sym_store_entry e, e2;
	uint64_t size = 1;
	uint8_t *buf;
	int fd = memfd_create("t-store-export", 0);

	CHECK(fd >= 0);
	CHECK_ERR(sym_store_export(st, "abab", fd, &size), -SYM_E_NOTFOUND);
	CHECK(size == 0);
	CHECK_ERR(sym_store_export(st, ID, -1, NULL), -EINVAL);
	CHECK_ERR(sym_store_export(st, ID, fd, &size), 0);
	CHECK_ERR(sym_store_stat_entry(st, ID, &e), 0);
	CHECK(size > e.size / 2 && lseek(fd, 0, SEEK_END) == (off_t)size);
	buf = aligned_alloc(8, (size + 8) & ~(uint64_t)7);
	CHECK(buf && pread(fd, buf, size, 0) == (ssize_t)size);
	close(fd);
	CHECK_ERR(sym_store_import(st, "bb", buf, size, "s3:tables/bb"), 0);
	CHECK_ERR(sym_store_stat_entry(st, "bb", &e2), 0);
	CHECK(e2.chunks == e.chunks && !strcmp(e2.text, "s3:tables/bb"));
	c->calls = c->bad = 0;
	CHECK_ERR(sym_store_lookup(st, "bb", addrs, n, cmp_cb, c), 0);
	CHECK(c->calls == n && c->bad == 0);
	/* Cut short: the last part's header promises more bytes. */
	CHECK_ERR(sym_store_import(st, "cc", buf, size - 8, NULL),
		  -SYM_E_BADTABLE);
	CHECK_ERR(sym_store_import(st, "cc", buf, 16, NULL), -SYM_E_BADTABLE);
	CHECK_ERR(sym_store_import(st, "cc", buf, 0, NULL), -SYM_E_BADTABLE);
	CHECK_ERR(sym_store_import(st, "cc", buf + 4, 64, NULL), -EINVAL);
	/* A flipped byte in the middle fails the checksum. */
	buf[size / 2] ^= 0x5a;
	CHECK_ERR(sym_store_import(st, "cc", buf, size, NULL),
		  -SYM_E_BADTABLE);
	CHECK_ERR(sym_store_stat_entry(st, "cc", &e2), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_store_remove(st, "bb"), 0);
	free(buf);
}

/*
 * GNU's text written by libsym (gnutext.h) from a table in chunks: each
 * chunk is a small table searched alone, whose hits the search makes
 * ready for the text (SYMI_HIT_GNU), and the window of several tables
 * then makes frames of them all (batch.c, hits_plain()).  The same bytes
 * as the frames printed.
 */
static void gnu_chunks(struct sym_store *st, const uint64_t *addrs, size_t n)
{
	struct symi_buf ref = SYMI_BUF_INIT(SYMI_BUF_MAX_CAP);
	struct symi_buf out = SYMI_BUF_INIT(SYMI_BUF_MAX_CAP);
	struct symi_gnu_text text = { .buf = &out };
	struct gnu_ctx g = { .b = &ref };

	CHECK_ERR(sym_store_lookup_omit(st, ID, addrs, n, SYMI_OMIT_ALL,
					gnu_cb, &g), 0);
	CHECK(!g.bad && g.calls == n);
	CHECK_ERR(symi_buf_grow(&out, 1 << 20), 0);
	g = (struct gnu_ctx){ .b = &out, .text = &text };
	CHECK_ERR(symi_store_lookup_gnu(st, ID, addrs, n, SYMI_OMIT_ALL,
					&text, gnu_cb, &g), 0);
	CHECK(!g.bad);
	CHECK(out.len == ref.len && !memcmp(out.p, ref.p, ref.len));
	symi_buf_release(&ref);
	symi_buf_release(&out);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/t-store.XXXXXX";
	struct sym_module *m = NULL;
	const struct sym_table *t;
	struct sym_store *st = NULL;
	struct sym_store_entry e;
	struct sym_store_gc_stats gs;
	static uint64_t addrs[4000];
	struct cmp c = { 0 };
	size_t n;
	int count;

	(void)argc;
	sym_set_log(quiet, NULL, SYM_LOG_WARN);
	if (!mkdtemp(dir))
		tap_skip_all("no temporary directory");
	CHECK_ERR(sym_module_open(argv[0], NULL, &m), 0);
	CHECK_ERR(sym_module_table(m, &t), 0);
	n = sample(t, addrs, 4000);
	c.t = t;
	c.addrs = addrs;

	/* Small chunks, so that this table (about 60 KB) is split. */
	SYM_OPTS(sym_store_opts, o, .chunk_size = 16 << 10);
	CHECK_ERR(sym_store_open(dir, &o, &st), 0);
	CHECK_ERR(sym_store_lookup(st, ID, addrs, n, cmp_cb, &c),
		  -SYM_E_NOTFOUND);
	CHECK_ERR(sym_store_put(st, ID, t, "/some/debug/file"), 0);
	CHECK_ERR(sym_store_stat_entry(st, ID, &e), 0);
	CHECK(e.negative == 0 && e.chunks > 1 && e.size > 0 &&
	      strcmp(e.text, "/some/debug/file") == 0);
	CHECK_ERR(sym_store_lookup(st, ID, addrs, n, cmp_cb, &c), 0);
	CHECK(c.calls == n && c.bad == 0);
	gnu_chunks(st, addrs, n);
	/* The flags, from the first chunk's header. */
	{
		struct sym_table_stat ts;
		uint32_t fl = 0;

		sym_table_stat(t, &ts);
		CHECK_ERR(sym_store_table_flags(st, ID, &fl), 0);
		CHECK(fl == ts.flags && (fl & SYM_TABLE_DWARF));
		CHECK_ERR(sym_store_table_flags(st, "abcd", &fl),
			  -SYM_E_NOTFOUND);
		CHECK(fl == 0);
	}
	/* Replacing keeps answering, from one generation at a time. */
	CHECK_ERR(sym_store_put(st, ID, t, "again"), 0);
	c.calls = c.bad = 0;
	CHECK_ERR(sym_store_lookup(st, ID, addrs, n, cmp_cb, &c), 0);
	CHECK(c.calls == n && c.bad == 0);
	CHECK_ERR(sym_store_verify(st, NULL, NULL), 0);
	export_import(st, addrs, n, &c);
	sym_store_close(st);
	st = NULL;

	/* Chunks so small that LMDB keeps them inside its pages, unaligned:
	 * each is read from a copy, and a batch answers from many of them
	 * at once (the copies must live until it ends; ASan checks). */
	{
		/* On tmpfs if there is one: a put of 60 chunks is 60 write
		 * transactions, each synced. */
		char sub[600], cmd[700], shm[] = "/dev/shm/t-store.XXXXXX";
		struct sym_store *st2 = NULL;
		SYM_OPTS(sym_store_opts, o2, .chunk_size = 1 << 10);

		if (mkdtemp(shm)) {
			snprintf(sub, sizeof(sub), "%s", shm);
		} else {
			snprintf(sub, sizeof(sub), "%s/small", dir);
			CHECK(mkdir(sub, 0700) == 0);
		}
		CHECK_ERR(sym_store_open(sub, &o2, &st2), 0);
		/* Prefetched as a big table's chunks would be. */
		size_t pf_min = symi_prefetch_min;

		symi_prefetch_min = 0;
		CHECK_ERR(sym_store_put(st2, ID, t, NULL), 0);
		CHECK_ERR(sym_store_stat_entry(st2, ID, &e), 0);
		CHECK(e.chunks > 20);
		c.calls = c.bad = 0;
		CHECK_ERR(sym_store_lookup(st2, ID, addrs, n, cmp_cb, &c), 0);
		CHECK(c.calls == n && c.bad == 0);
		symi_prefetch_min = pf_min;
		sym_store_close(st2);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sub);
		CHECK(system(cmd) == 0);
	}

	/* Persisted; one chunk with the default chunk size. */
	CHECK_ERR(sym_store_open(dir, NULL, &st), 0);
	c.calls = c.bad = 0;
	CHECK_ERR(sym_store_lookup(st, ID, addrs, n, cmp_cb, &c), 0);
	CHECK(c.calls == n && c.bad == 0);
	CHECK_ERR(sym_store_put(st, "aa", t, NULL), 0);
	CHECK_ERR(sym_store_stat_entry(st, "aa", &e), 0);
	CHECK(e.chunks == 1);

	/* Negative entries. */
	CHECK_ERR(sym_store_put_negative(st, ID, SYM_STORE_ABSENT, "x"),
		  -EEXIST);
	CHECK_ERR(sym_store_put_negative(st, "bb", SYM_STORE_ABSENT,
					 "no source has it"), 0);
	CHECK_ERR(sym_store_stat_entry(st, "bb", &e), 0);
	CHECK(e.negative == SYM_STORE_ABSENT && e.expires > e.created &&
	      strcmp(e.text, "no source has it") == 0);
	CHECK_ERR(sym_store_lookup(st, "bb", addrs, 1, cmp_cb, &c),
		  -SYM_E_NOTFOUND);
	CHECK(sym_store_has_table(st, ID) == 1);
	CHECK(sym_store_has_table(st, "bb") == 0);
	CHECK(sym_store_has_table(st, "../x") == 0);
	CHECK_ERR(sym_store_put_negative(st, "cc", SYM_STORE_BADCONV, "bad"),
		  0);
	CHECK_ERR(sym_store_stat_entry(st, "cc", &e), 0);
	CHECK(e.negative == SYM_STORE_BADCONV && e.expires == 0);
	CHECK_ERR(sym_store_put_negative(st, "dd", 7, NULL), -EINVAL);
	CHECK_ERR(sym_store_stat_entry(st, "not-hex", &e), -EINVAL);
	count = 0;
	CHECK_ERR(sym_store_list(st, count_cb, &count), 0);
	CHECK(count == 4);

	/* The file area: checked build ID, debuginfod's layout. */
	{
		char path[512], hex[129];

		CHECK_ERR(sym_file_build_id(argv[0], hex, sizeof(hex)), 0);
		CHECK_ERR(sym_store_file_path(st, hex, SYM_STORE_EXECUTABLE,
					      path, sizeof(path)),
			  -SYM_E_NOTFOUND);
		CHECK_ERR(sym_store_put_file(st, hex, SYM_STORE_EXECUTABLE,
					     argv[0]), 0);
		CHECK_ERR(sym_store_put_file(st, hex, SYM_STORE_EXECUTABLE,
					     argv[0]), 0);
		CHECK_ERR(sym_store_file_path(st, hex, SYM_STORE_EXECUTABLE,
					      path, sizeof(path)), 0);
		CHECK(strstr(path, "/files/") && strstr(path, "/executable"));
		CHECK_ERR(sym_store_put_file(st, ID, SYM_STORE_DEBUGINFO,
					     argv[0]), -EXDEV);
		CHECK_ERR(sym_store_put_file(st, hex, 9, argv[0]), -EINVAL);
		CHECK_ERR(sym_store_put_negative(st, hex, SYM_STORE_FAILED,
						 "x"), 0);
		CHECK_ERR(sym_store_remove(st, hex), 0);
		CHECK_ERR(sym_store_file_path(st, hex, SYM_STORE_EXECUTABLE,
					      path, sizeof(path)),
			  -SYM_E_NOTFOUND);

		/* Taken (moved) into place, then converted from the store's
		 * own files; the answers are those of the module. */
		{
			char tmp[600], cmd[1300];

			snprintf(tmp, sizeof(tmp), "%s/incoming", dir);
			snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", argv[0], tmp);
			CHECK(system(cmd) == 0);
			CHECK_ERR(sym_store_take_file(st, ID,
						      SYM_STORE_DEBUGINFO, tmp),
				  -EXDEV);
			CHECK(access(tmp, F_OK) == 0);
			CHECK_ERR(sym_store_convert(st, hex, NULL, NULL),
				  -SYM_E_NOTFOUND);
			CHECK_ERR(sym_store_take_file(st, hex,
						      SYM_STORE_EXECUTABLE, tmp),
				  0);
			CHECK(access(tmp, F_OK) != 0);
			CHECK_ERR(sym_store_warm(st, hex), -SYM_E_NOTFOUND);
			CHECK_ERR(sym_store_convert(st, hex, "upload", NULL), 0);
			CHECK_ERR(sym_store_stat_entry(st, hex, &e), 0);
			CHECK(e.negative == 0 && strcmp(e.text, "upload") == 0);
			CHECK_ERR(sym_store_warm(st, hex), 0);
			c.calls = c.bad = 0;
			CHECK_ERR(sym_store_lookup(st, hex, addrs, n, cmp_cb,
						   &c), 0);
			CHECK(c.calls == n && c.bad == 0);
			CHECK_ERR(sym_store_remove(st, hex), 0);
		}
	}

	/* Conversion locks: a second claim waits, then times out; after
	 * the unlock it succeeds at once. */
	{
		struct sym_store_lock *l1 = NULL, *l2 = NULL;
		int waited = 0;

		CHECK_ERR(sym_store_lock(st, ID, 0, &l1, &waited), 0);
		CHECK(l1 && waited == 0);
		CHECK_ERR(sym_store_lock(st, ID, 100, &l2, &waited),
			  -ETIMEDOUT);
		CHECK(!l2 && waited == 1);
		CHECK_ERR(sym_store_lock(st, "aa", 0, &l2, &waited), 0);
		sym_store_unlock(l2);
		sym_store_unlock(l1);
		CHECK_ERR(sym_store_lock(st, ID, 0, &l2, &waited), 0);
		CHECK(waited == 0);
		sym_store_unlock(l2);
		CHECK_ERR(sym_store_lock(st, "../x", 0, &l2, NULL), -EINVAL);
		sym_store_unlock(NULL);
	}

	/* Removal. */
	CHECK_ERR(sym_store_remove(st, "cc"), 0);
	CHECK_ERR(sym_store_remove(st, "cc"), -SYM_E_NOTFOUND);

	/* Writes of one build ID are linearizable (docs/store.md): a
	 * remove cancels a put under way, which then stores nothing. */
	{
		struct sym_store_gc_stats gst;
		uint32_t t1 = 0, t2 = 0;

		CHECK_ERR(symi_store_ticket(st, "dd", &t1), 0);
		CHECK(t1 != 0);
		CHECK_ERR(sym_store_remove(st, "dd"), 0);  /* a put under way */
		CHECK_ERR(symi_store_put_ticket(st, "dd", t, NULL, t1),
			  -ECANCELED);
		CHECK_ERR(sym_store_stat_entry(st, "dd", &e), -SYM_E_NOTFOUND);
		CHECK_ERR(sym_store_remove(st, "dd"), -SYM_E_NOTFOUND);
		/* A negative entry too. */
		CHECK_ERR(symi_store_ticket(st, "dd", &t1), 0);
		CHECK_ERR(sym_store_remove(st, "dd"), 0);
		CHECK_ERR(symi_store_put_negative_ticket(st, "dd",
							 SYM_STORE_BADCONV,
							 "x", t1),
			  -ECANCELED);
		CHECK_ERR(sym_store_stat_entry(st, "dd", &e), -SYM_E_NOTFOUND);
		/* Two puts at once: distinct generations, the last commit
		 * wins, and no chunk of the other is left behind; gc keeps
		 * the tickets of puts under way. */
		CHECK_ERR(symi_store_ticket(st, "dd", &t1), 0);
		CHECK_ERR(symi_store_ticket(st, "dd", &t2), 0);
		CHECK(t1 != t2);
		CHECK_ERR(sym_store_gc(st, 0, &gst), 0);
		CHECK_ERR(symi_store_put_ticket(st, "dd", t, "two", t2), 0);
		CHECK_ERR(symi_store_put_ticket(st, "dd", t, "one", t1), 0);
		CHECK_ERR(sym_store_stat_entry(st, "dd", &e), 0);
		CHECK(strcmp(e.text, "one") == 0);
		CHECK_ERR(sym_store_verify(st, NULL, NULL), 0);
		CHECK_ERR(sym_store_gc(st, 0, &gst), 0);
		CHECK(gst.orphans == 0);
		/* A ticket dropped unused leaves nothing. */
		CHECK_ERR(symi_store_ticket(st, "ee", &t1), 0);
		symi_store_ticket_drop(st, "ee", t1);
		CHECK_ERR(sym_store_remove(st, "ee"), -SYM_E_NOTFOUND);
		CHECK_ERR(sym_store_remove(st, "dd"), 0);
	}

	/* Eviction to max_size: the least recently used table goes. */
	sym_store_close(st);
	st = NULL;
	{
		struct sym_table_stat ts;

		sym_table_stat(t, &ts);
		SYM_OPTS(sym_store_opts, o2, .max_size = ts.size + 1);
		CHECK_ERR(sym_store_open(dir, &o2, &st), 0);
	}
	CHECK_ERR(sym_store_gc(st, 1, &gs), 0);
	CHECK(gs.evicted == 1 && gs.file_after > 0);
	count = 0;
	sym_store_list(st, count_cb, &count);
	CHECK(count == 2);	/* one table and the negative entry */
	CHECK_ERR(sym_store_verify(st, NULL, NULL), 0);
	/* Files count toward the bound, aged by their mtime: an old
	 * executable no table owns goes first. */
	{
		static const struct timespec old[2] = { { 946684800, 0 },
							{ 946684800, 0 } };
		char hex[129], path[512];

		CHECK_ERR(sym_file_build_id(argv[0], hex, sizeof(hex)), 0);
		CHECK_ERR(sym_store_put_file(st, hex, SYM_STORE_EXECUTABLE,
					     argv[0]), 0);
		CHECK_ERR(sym_store_file_path(st, hex, SYM_STORE_EXECUTABLE,
					      path, sizeof(path)), 0);
		CHECK(utimensat(AT_FDCWD, path, old, 0) == 0);
		CHECK_ERR(sym_store_gc(st, 0, &gs), 0);
		CHECK(gs.evicted == 1);
		CHECK_ERR(sym_store_file_path(st, hex, SYM_STORE_EXECUTABLE,
					      path, sizeof(path)),
			  -SYM_E_NOTFOUND);
		count = 0;
		sym_store_list(st, count_cb, &count);
		CHECK(count == 2);	/* the table stayed */
	}
	sym_store_close(st);
	st = NULL;

	/* A map bound too small for the table: -ENOSPC, nothing lost. */
	{
		SYM_OPTS(sym_store_opts, o3, .map_max = 64 << 20,
			 .chunk_size = 64 << 10);
		char big[64];

		CHECK_ERR(sym_store_open(dir, &o3, &st), 0);
		count = 0;
		for (int i = 0; i < 2000; i++) {
			int err;

			snprintf(big, sizeof(big), "%04x", i);
			err = sym_store_put(st, big, t, NULL);
			if (err) {
				CHECK_ERR(err, -ENOSPC);
				break;
			}
			count++;
		}
		CHECK(count > 0 && count < 2000);
		CHECK_ERR(sym_store_verify(st, NULL, NULL), 0);
		c.calls = c.bad = 0;
		snprintf(big, sizeof(big), "%04x", 0);
		CHECK_ERR(sym_store_lookup(st, big, addrs, n, cmp_cb, &c), 0);
		CHECK(c.bad == 0);
		sym_store_close(st);
		st = NULL;
	}

	verified_once(t, addrs, n, &c);
	access_grain(t, addrs, n, &c);

	/* A flipped byte inside a stored table: detected, removed. */
	{
		SYM_OPTS(sym_store_opts, o4, .map_max = 1 << 30,
			 .chunk_size = 64 << 10);
		int hits;

		hits = damage_tables(dir);
		CHECK(hits > 0);
		CHECK_ERR(sym_store_open(dir, &o4, &st), 0);
		CHECK(sym_store_verify(st, NULL, NULL) > 0);
		c.calls = c.bad = 0;
		CHECK_ERR(sym_store_lookup(st, "0000", addrs, n, cmp_cb, &c),
			  -SYM_E_BADTABLE);
		CHECK(c.bad == 0);
		CHECK_ERR(sym_store_stat_entry(st, "0000", &e),
			  -SYM_E_NOTFOUND);
		/* A thread of this handle that looks after the removal (the
		 * workers of sym lookup --threads) gets the same verdict,
		 * not "no table". */
		CHECK_ERR(sym_store_lookup(st, "0000", addrs, n, cmp_cb, &c),
			  -SYM_E_BADTABLE);
		/* Stored again, the same bytes in the same chunks (symd
		 * converting it again): checked anew, not taken for the
		 * corrupt copy this process saw. */
		CHECK_ERR(sym_store_put(st, "0000", t, NULL), 0);
		c.calls = c.bad = 0;
		CHECK_ERR(sym_store_lookup(st, "0000", addrs, n, cmp_cb, &c),
			  0);
		CHECK(c.bad == 0 && c.calls == n);
		/* Removed on purpose: not found, as before the mark. */
		CHECK_ERR(sym_store_remove(st, "0000"), 0);
		CHECK_ERR(sym_store_lookup(st, "0000", addrs, n, cmp_cb, &c),
			  -SYM_E_NOTFOUND);
		sym_store_close(st);
	}
	sym_module_close(m);
	remove_dir(dir);
	return tap_done();
}
