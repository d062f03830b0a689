/*
 * fuzz-table.c - libFuzzer target over the table reader.
 *
 * Tables come back from LMDB and from disk, so sym_table_open() and every
 * lookup must be safe on any bytes: sym.h promises "a corrupt buffer gives
 * wrong answers, never a crash".  One input is one table buffer.  It is
 * copied into a buffer of exactly its size (8-byte aligned, as
 * sym_table_open() requires; ASan catches any read past its end), opened,
 * and looked up across the range it claims to cover: evenly spaced
 * addresses, the edges, addresses taken from the input, and the entries
 * and symbols the answers name; then all of them again through
 * sym_table_lookup_batch(), unsorted and sorted, with the prefetching
 * that big tables get and with the frame cache that big batches of small
 * tables get.
 *
 * Only memory safety and the shape of the answers are checked here
 * (strict = 0 in fuzz.h): the content of a corrupt table is garbage.
 * The seeds are tables that libsym built (tests/fuzz/gen-table-seeds.c).
 */
#include "fuzz.h"
#include "internal.h"	/* symi_prefetch_min, symi_fcache_min */
#include "gnutext.h"

#include <stdbool.h>

#include "base.h"

#define SWEEP 48		/* evenly spaced lookups over [start, end) */
#define MAX_ADDRS 128

struct batch_ctx {
	size_t calls, count;
	size_t next;			/* the next index not answered */
	struct symi_gnu_text *text;	/* or NULL */
};

/* Each address once, in input order: by the callback, or (GNU's text,
 * gnutext.h) written into text->buf, which the callback empties as
 * tools/addr2line.c's flushes. */
static int batch_cb(void *ctx, size_t idx, const struct sym_frame *fr,
		    size_t n)
{
	struct batch_ctx *c = ctx;

	if (c->text) {
		FUZZ_CHECK(idx >= c->next && idx >= c->text->done);
		FUZZ_CHECK(c->text->buf->len < c->text->buf->alloc);
		symi_buf_reset(c->text->buf);
	} else {
		FUZZ_CHECK(idx == c->next);
	}
	FUZZ_CHECK(idx < c->count);
	FUZZ_CHECK(n <= SYM_MAX_FRAMES);
	fuzz_touch_frames(fr, n, 0);
	c->calls++;
	c->next = idx + 1;
	return 0;
}

/* Whether the batch answered all @c->count addresses. */
static bool batch_all(const struct batch_ctx *c)
{
	size_t done = c->text && c->text->done > c->next ? c->text->done :
							   c->next;

	return done == c->count && (c->text || c->calls == c->count);
}

/* sym_table_lookup_batch_omit() of @addrs[@na] as bc counts it; with
 * GNU's @omit, once more with the text (a buffer of 4 KiB, so that
 * answers go both ways). */
static void batch_both(const struct sym_table *t, const uint64_t *addrs,
		       size_t na, unsigned omit)
{
	struct symi_buf tb = SYMI_BUF_INIT(4096);
	struct symi_gnu_text text = { .buf = &tb };
	struct batch_ctx bc = { .count = na };

	FUZZ_CHECK(sym_table_lookup_batch_omit(t, addrs, na, omit, batch_cb,
					       &bc) == 0);
	FUZZ_CHECK(batch_all(&bc));
	if (omit != SYMI_OMIT_ALL)
		return;
	FUZZ_CHECK(symi_buf_grow(&tb, 4000) == 0);
	bc = (struct batch_ctx){ .count = na, .text = &text };
	FUZZ_CHECK(symi_table_lookup_batch_gnu(t, addrs, na, omit, &text,
					       batch_cb, &bc) == 0);
	FUZZ_CHECK(batch_all(&bc));
	/* The text is whole lines, and its NUL is in place. */
	FUZZ_CHECK(!tb.len || (tb.p[tb.len - 1] == '\n' && !tb.p[tb.len]));
	symi_buf_release(&tb);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	struct sym_table *t = NULL;
	struct sym_table_stat st;
	struct sym_frame fr[SYM_MAX_FRAMES];
	uint64_t addrs[MAX_ADDRS], sorted[MAX_ADDRS], span, a, sz;
	size_t na = 0, n, len;
	const void *dbuf;
	void *buf;
	int err;

	if (!init) {
		if (!getenv("FUZZ_VERBOSE"))
			sym_set_log(fuzz_quiet_log, NULL, SYM_LOG_WARN);
		/* Batches cache frames in big batches only; these are
		 * small.  symi_prefetch_min and symi_fcache_min are set for
		 * each batch below. */
		init = true;
	}

	/* libFuzzer's data has no alignment promise: copy.  malloc(0) may
	 * return NULL; the table reader must reject a 0-byte table anyway. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);

	err = sym_table_open(buf, size, &t);
	if (err) {
		FUZZ_CHECK(err < 0);
		free(buf);
		return 0;
	}
	FUZZ_CHECK(t != NULL);

	/* The table is the header's size; trailing bytes are not part of
	 * it. */
	sym_table_data(t, &dbuf, &len);
	FUZZ_CHECK(dbuf == buf && len <= size);
	sym_table_stat(t, &st);
	fuzz_sink += st.size + st.ranges + st.scopes + st.funcs + st.files +
		     st.symbols + st.strings_size + st.flags;

	/* The covered range as the table claims it; it may be nonsense. */
	span = st.end > st.start ? st.end - st.start : 0;
	addrs[na++] = st.start;
	addrs[na++] = st.start - 1;
	addrs[na++] = st.end;
	addrs[na++] = st.end - 1;
	addrs[na++] = st.base;
	addrs[na++] = 0;
	addrs[na++] = UINT64_MAX;
	for (int i = 0; i < SWEEP; i++)
		addrs[na++] = st.start + (span / SWEEP) * (uint64_t)i +
			      (uint64_t)i % 7;
	for (size_t off = 0; off + 8 <= size && na < 64; off += size / 8 + 1)
		addrs[na++] = st.start + (span ? fuzz_u64(data + off, 8) % span
					       : fuzz_u64(data + off, 8));

	/* Single lookups, and the names and entries they point to. */
	for (size_t i = 0, first = na; i < first; i++) {
		n = SIZE_MAX;
		FUZZ_CHECK(sym_table_lookup(t, addrs[i], fr, SYM_MAX_FRAMES,
					    &n) == 0);
		FUZZ_CHECK(n <= SYM_MAX_FRAMES);
		fuzz_touch_frames(fr, n, 0);
		if (!n)
			continue;
		if (na < MAX_ADDRS)
			addrs[na++] = fr[0].entry;
		if (fr[n - 1].symbol &&
		    sym_table_find_symbol(t, fr[n - 1].symbol, &a, &sz) == 0 &&
		    na < MAX_ADDRS)
			addrs[na++] = a + (sz ? sz - 1 : 0);
		/* A short array: the chain is cut, not overrun. */
		FUZZ_CHECK(sym_table_lookup(t, addrs[i], fr, 2, &n) == 0);
		FUZZ_CHECK(n <= 2);
		fuzz_touch_frames(fr, n, 0);
	}
	/* The deep check reads every array: it must be safe too, after
	 * lookups that built some chunks of the symbols (format 10) and
	 * not others, and a table it accepts must also be one lookups are
	 * safe on. */
	err = sym_table_verify(t);
	FUZZ_CHECK(err == 0 || err == -SYM_E_BADTABLE);
	(void)sym_table_find_symbol(t, "main", &a, &sz);
	(void)sym_table_find_symbol(t, "", &a, NULL);

	/* The batch path has its own search (it resumes from the previous
	 * position), so run it unsorted and sorted; as for a big table
	 * (prefetched) and a small one: with the frame cache and every
	 * field, and as GNU's style asks (every omit bit), without the
	 * cache (symi_table_frames_run()). */
	for (int big = 0; big < 2; big++) {
		for (int gnu = 0; gnu < 2; gnu++) {
			unsigned omit = gnu ? SYMI_OMIT_ALL : 0;

			symi_prefetch_min = big ? 0 : SIZE_MAX;
			symi_fcache_min = gnu ? SIZE_MAX : 0;
			batch_both(t, addrs, na, omit);
			memcpy(sorted, addrs, na * sizeof(addrs[0]));
			qsort(sorted, na, sizeof(sorted[0]), cmp_u64);
			batch_both(t, sorted, na, omit);
		}
	}

	sym_table_close(t);
	free(buf);
	return 0;
}
