/*
 * fuzz-elf.c - libFuzzer target over ELF loading, DWARF reading, table
 * building and lookups.
 *
 * One input is one ELF image.  It is opened from memory (no files, no
 * debug-file search), its table is built, and then it is looked up at
 * addresses derived from the table's own stats, from the input's last 16
 * bytes and from the symbols the lookups return.  The table is then copied
 * to another buffer and opened with sym_table_open(): the copy must pass
 * the reader's checks and give the same answers, since the format is
 * position-independent.  Finally the image is opened a second time with
 * SYM_MODULE_NO_DWARF, to reach the symbol-table-only path.
 *
 * Beyond memory safety, the documented contracts of sym.h are checked
 * with FUZZ_CHECK() (see fuzz.h); a violation aborts like a crash.
 *
 * Built two ways: by tests/fuzz/fuzz.mk with -fsanitize=fuzzer (make fuzz
 * CC=clang), and with tests/fuzz/replay.c as a plain program that replays
 * tests/fuzz/corpus/fuzz-elf/ in `make check`.
 */
#include "fuzz.h"

#include <inttypes.h>
#include <stdbool.h>

#include "base.h"

/* Upper bound on addresses looked up per input, to keep execs fast. */
#define MAX_ADDRS 64

struct addrs {
	uint64_t a[MAX_ADDRS];
	size_t n;
};

static void add_addr(struct addrs *as, uint64_t a)
{
	if (as->n < MAX_ADDRS)
		as->a[as->n++] = a;
}

struct batch_ctx {
	size_t calls;
	size_t stop_at;		/* return non-zero on this call */
	const uint64_t *addrs;
	size_t count;
};

static int batch_cb(void *ctx, size_t idx, const struct sym_frame *fr,
		    size_t n)
{
	struct batch_ctx *c = ctx;

	/* Called once per address, in order. */
	FUZZ_CHECK(idx == c->calls);
	FUZZ_CHECK(idx < c->count);
	FUZZ_CHECK(n <= SYM_MAX_FRAMES);
	fuzz_touch_frames(fr, n, 1);
	c->calls++;
	if (c->stop_at && c->calls == c->stop_at)
		return 42;
	return 0;
}

/* Look up @addr, touch the answer, collect derived addresses and names. */
static void lookup_one(const struct sym_table *t, uint64_t addr,
		       struct addrs *derived)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	struct sym_frame one[1];
	size_t n = 0, n1 = 0;
	uint64_t saddr, ssize;

	FUZZ_CHECK(sym_table_lookup(t, addr, fr, SYM_MAX_FRAMES, &n) == 0);
	FUZZ_CHECK(n <= SYM_MAX_FRAMES);
	fuzz_touch_frames(fr, n, 1);

	/* A one-frame array gets the innermost frame of the same chain,
	 * and a cut chain carries no symbol (the symbol belongs to the
	 * outermost frame, which was not returned). */
	FUZZ_CHECK(sym_table_lookup(t, addr, one, 1, &n1) == 0);
	FUZZ_CHECK(n1 == (n ? 1 : 0));
	fuzz_touch_frames(one, n1, 1);
	if (n > 1)
		FUZZ_CHECK((one[0].flags & SYM_FRAME_TRUNCATED) &&
			   one[0].symbol == NULL);
	if (n1 && !(one[0].line == fr[0].line &&
		    fuzz_streq(one[0].file, fr[0].file) &&
		    fuzz_streq(one[0].name, fr[0].name))) {
		fprintf(stderr, "at 0x%" PRIx64 ": max=1 gives %s:%u, "
			"max=%d gives %s:%u first (%zu frames)\n", addr,
			one[0].name ? one[0].name : "(null)", one[0].line,
			SYM_MAX_FRAMES, fr[0].name ? fr[0].name : "(null)",
			fr[0].line, n);
		FUZZ_CHECK(!"innermost frame depends on max");
	}

	if (!n)
		return;
	if (derived) {
		add_addr(derived, fr[n - 1].entry);
		add_addr(derived, fr[0].entry);
	}
	/* The covering symbol must be findable by name, and the lookup
	 * of its address must succeed too. */
	if (fr[n - 1].symbol &&
	    sym_table_find_symbol(t, fr[n - 1].symbol, &saddr, &ssize) == 0) {
		if (derived) {
			add_addr(derived, saddr);
			if (ssize)
				add_addr(derived, saddr + ssize - 1);
		}
	}
	if (fr[n - 1].linkage_name)
		(void)sym_table_find_symbol(t, fr[n - 1].linkage_name, &saddr,
					    NULL);
}

/* The table bytes reopened elsewhere give the same answers. */
static void check_copy(const struct sym_table *t, const struct addrs *as)
{
	const void *buf = NULL;
	size_t len = 0;
	void *copy;
	struct sym_table *t2 = NULL;
	struct sym_table_stat st1, st2;

	sym_table_data(t, &buf, &len);
	FUZZ_CHECK(buf != NULL && len > 0);
	/* malloc() is at least 8-byte aligned, as sym_table_open() wants. */
	copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, buf, len);
	FUZZ_CHECK(sym_table_open(copy, len, &t2) == 0);
	sym_table_stat(t, &st1);
	sym_table_stat(t2, &st2);
	FUZZ_CHECK(st1.size == st2.size && st1.base == st2.base &&
		   st1.start == st2.start && st1.end == st2.end &&
		   st1.ranges == st2.ranges && st1.symbols == st2.symbols);
	for (size_t i = 0; i < as->n; i++) {
		struct sym_frame a[SYM_MAX_FRAMES], b[SYM_MAX_FRAMES];
		size_t na = 0, nb = 0;

		FUZZ_CHECK(sym_table_lookup(t, as->a[i], a, SYM_MAX_FRAMES,
					    &na) == 0);
		FUZZ_CHECK(sym_table_lookup(t2, as->a[i], b, SYM_MAX_FRAMES,
					    &nb) == 0);
		FUZZ_CHECK(fuzz_frames_equal(a, na, b, nb));
	}
	sym_table_close(t2);
	free(copy);
}

static void exercise(const struct sym_table *t, const uint8_t *data,
		     size_t size)
{
	struct sym_table_stat st;
	struct addrs as = { .n = 0 }, derived = { .n = 0 };
	uint64_t span, saddr;
	struct batch_ctx bc;

	sym_table_stat(t, &st);
	FUZZ_CHECK(st.start <= st.end);
	span = st.end - st.start;

	/* Edges of the covered range, and outside it. */
	add_addr(&as, st.start);
	add_addr(&as, st.start - 1);
	add_addr(&as, st.end);
	add_addr(&as, st.end - 1);
	add_addr(&as, st.base);
	add_addr(&as, 0);
	add_addr(&as, UINT64_MAX);
	/* Evenly spaced through the range. */
	for (int i = 1; i < 8 && span; i++)
		add_addr(&as, st.start + span / 8 * i + (uint64_t)i);
	/* From the input itself: its last 16 bytes as offsets. */
	if (size >= 16 && span) {
		add_addr(&as, st.start + fuzz_u64(data + size - 16, 8) % span);
		add_addr(&as, st.start + fuzz_u64(data + size - 8, 8) % span);
	}

	for (size_t i = 0; i < as.n; i++)
		lookup_one(t, as.a[i], &derived);
	/* Where the answers point: function entries and symbols. */
	for (size_t i = 0; i < derived.n; i++)
		lookup_one(t, derived.a[i], NULL);
	for (size_t i = 0; i < derived.n; i++)
		add_addr(&as, derived.a[i]);

	/* Symbols any small program has, and names that must not crash. */
	(void)sym_table_find_symbol(t, "main", &saddr, NULL);
	(void)sym_table_find_symbol(t, "_start", &saddr, NULL);
	(void)sym_table_find_symbol(t, "", &saddr, NULL);

	/* The batch over all of them, in their (unsorted) order. */
	bc = (struct batch_ctx){ .addrs = as.a, .count = as.n };
	FUZZ_CHECK(sym_table_lookup_batch(t, as.a, as.n, batch_cb, &bc) == 0);
	FUZZ_CHECK(bc.calls == as.n);
	/* A callback that stops the batch: its value comes back. */
	if (as.n > 2) {
		bc = (struct batch_ctx){ .addrs = as.a, .count = as.n,
					 .stop_at = 2 };
		FUZZ_CHECK(sym_table_lookup_batch(t, as.a, as.n, batch_cb,
						  &bc) == 42);
		FUZZ_CHECK(bc.calls == 2);
	}

	check_copy(t, &as);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	struct sym_module *mod = NULL;
	const struct sym_table *t = NULL;
	struct sym_frame fr[SYM_MAX_FRAMES];
	size_t n;
	int err;

	if (!init) {
		if (!getenv("FUZZ_VERBOSE"))
			sym_set_log(fuzz_quiet_log, NULL, SYM_LOG_WARN);
		init = true;
	}

	/* The full path: DWARF and symbols.  A memory image has no
	 * directory; NO_SEARCH also keeps /usr/lib/debug out of it. */
	{
		SYM_OPTS(sym_module_opts, opts,
			 .flags = SYM_MODULE_NO_SEARCH);
		err = sym_module_open_mem(data, size, &opts, &mod);
	}
	if (err == 0) {
		FUZZ_CHECK(mod != NULL);
		fuzz_touch_str(sym_module_build_id(mod), 1);
		fuzz_touch_str(sym_module_debug_file(mod), 0);
		err = sym_module_table(mod, &t);
		if (err == 0) {
			FUZZ_CHECK(t != NULL);
			exercise(t, data, size);
		} else {
			/* A failure is remembered. */
			FUZZ_CHECK(sym_module_table(mod, &t) == err);
			FUZZ_CHECK(sym_module_lookup(mod, 0, fr,
						     SYM_MAX_FRAMES,
						     &n) == err);
		}
		sym_module_close(mod);
		mod = NULL;
	} else {
		FUZZ_CHECK(err < 0 && mod == NULL);
		return 0;
	}

	/* Symbols only: .symtab, .dynsym, MiniDebugInfo. */
	{
		SYM_OPTS(sym_module_opts, opts,
			 .flags = SYM_MODULE_NO_SEARCH | SYM_MODULE_NO_DWARF);
		err = sym_module_open_mem(data, size, &opts, &mod);
	}
	if (err == 0) {
		if (sym_module_table(mod, &t) == 0) {
			struct sym_table_stat st;

			sym_table_stat(t, &st);
			FUZZ_CHECK(!(st.flags & SYM_TABLE_DWARF));
			lookup_one(t, st.start, NULL);
			lookup_one(t, st.start + (st.end - st.start) / 2, NULL);
			if (size >= 8 && st.end > st.start)
				lookup_one(t, st.start +
					   fuzz_u64(data + size - 8, 8) %
					   (st.end - st.start), NULL);
		}
		sym_module_close(mod);
	}
	return 0;
}
