/*
 * fuzz-gopclntab.c - libFuzzer target over the reader of Go's function
 * table (libsym/gopclntab.c).
 *
 * A Go binary's .gopclntab is outside bytes: a stripped binary uploaded to
 * symd is read with it.  One input is a u32 (little-endian) length L, then
 * L bytes of table, then the bytes of the module's data: the table lies at
 * TAB_ADDR as a read-only segment, the data at DATA_ADDR as a writable one
 * (where the runtime's moduledata and, from Go 1.18, the inline trees are
 * found; before 1.18 the inline trees are absolute pointers, so they may
 * point into either).  Each part is copied into a buffer of exactly its
 * size, so that AddressSanitizer catches a read past either.
 *
 * symi_gopcln_read() must return one of its documented codes; on success
 * it has added at least one function, and the builder's table (if it can
 * be built: -SYM_E_TOOBIG for a table that claims 4 GiB or more) must be
 * one libsym's lookups keep their promises on (strict checks, as for
 * tables built from an ELF file in fuzz-elf).
 * The unwinder's reader (sym_gofuncs_find(), through symi_gofuncs_new())
 * must keep its promises on the same table: a documented code for every
 * address, and on success a function that covers it.
 * The seeds are small tables of each format (make-gopclntab-seeds.py) and
 * cuts of them.
 */
#include "fuzz.h"
#include "internal.h"

#include "base.h"

#define TAB_ADDR 0x4c0000u
#define DATA_ADDR 0x600000u
#define TEXT_ADDR 0x401000u
#define SWEEP 64

static void look(const struct sym_table *t)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	struct sym_table_stat st;
	uint64_t span;
	size_t n;

	sym_table_stat(t, &st);
	FUZZ_CHECK(st.flags & SYM_TABLE_GOPCLNTAB);
	span = st.end > st.start ? st.end - st.start : 0;
	for (uint64_t i = 0; i <= SWEEP; i++) {
		uint64_t a = st.start + span / SWEEP * i + i % 5;

		n = SIZE_MAX;
		FUZZ_CHECK(sym_table_lookup(t, a, fr, SYM_MAX_FRAMES, &n) == 0);
		FUZZ_CHECK(n <= SYM_MAX_FRAMES);
		fuzz_touch_frames(fr, n, 1);
		/* Every frame but the outermost is an inlined call. */
		for (size_t k = 0; k + 1 < n; k++)
			FUZZ_CHECK(fr[k].flags & SYM_FRAME_INLINED);
	}
}

/* sym_gofuncs_find() over the functions' span, and around it. */
static void unwind_look(const struct symi_gopcln_in *in)
{
	struct sym_gofuncs *g = NULL;
	struct sym_gofunc f;
	int err;

	err = symi_gofuncs_new(in, &g);
	FUZZ_CHECK(err == 0 || err == -ENOMEM || err == -SYM_E_BADGOPCLNTAB);
	if (err)
		return;
	for (uint64_t i = 0; i <= SWEEP; i++) {
		uint64_t a = TEXT_ADDR - 8 + i * 0x21 + i % 3;

		err = sym_gofuncs_find(g, a, &f);
		FUZZ_CHECK(err == 0 || err == -SYM_E_NOTFOUND ||
			   err == -SYM_E_BADGOPCLNTAB);
		if (err == 0)
			FUZZ_CHECK(f.entry <= a && a < f.end);
	}
	sym_gofuncs_close(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	struct symi_builder *b = NULL;
	struct symi_gopcln_stats st;
	struct symi_goseg segs[2];
	struct symi_gomem mem = { .segs = segs, .n = 2 };
	struct symi_gopcln_in in;
	struct sym_table *t = NULL;
	uint8_t *tab = NULL, *rest = NULL;
	size_t tlen, rlen;
	void *buf = NULL;
	size_t len;
	int err;

	if (!init) {
		if (!getenv("FUZZ_VERBOSE"))
			sym_set_log(fuzz_quiet_log, NULL, SYM_LOG_WARN);
		init = true;
	}
	if (size < 4)
		return 0;
	tlen = fuzz_u64(data, 4);
	if (tlen > size - 4)
		tlen = size - 4;
	rlen = size - 4 - tlen;
	tab = malloc(tlen ? tlen : 1);
	rest = malloc(rlen ? rlen : 1);
	if (!tab || !rest)
		goto out;
	memcpy(tab, data + 4, tlen);
	memcpy(rest, data + 4 + tlen, rlen);
	segs[0] = (struct symi_goseg){ .addr = TAB_ADDR, .p = tab,
				       .len = tlen };
	segs[1] = (struct symi_goseg){ .addr = DATA_ADDR, .p = rest,
				       .len = rlen, .writable = true };
	in = (struct symi_gopcln_in){ .tab = tab, .len = tlen,
				      .addr = TAB_ADDR, .text = TEXT_ADDR,
				      .mem = &mem };
	if (symi_builder_new(&b))
		goto out;
	if (symi_builder_add_text(b, 0, UINT64_MAX))
		goto out;
	unwind_look(&in);
	err = symi_gopcln_read(b, &in, &st);
	FUZZ_CHECK(err == 0 || err == -ENOMEM || err == -SYM_E_BADGOPCLNTAB);
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "gopclntab: %d: version %d, %llu functions, "
			"%llu lines, %llu inlined, %llu damaged\n", err,
			st.version, (unsigned long long)st.funcs,
			(unsigned long long)st.lines,
			(unsigned long long)st.inlined,
			(unsigned long long)st.bad_funcs);
	if (err)
		goto out;
	FUZZ_CHECK(st.funcs > 0);
	FUZZ_CHECK(st.version == 12 || st.version == 116 ||
		   st.version == 118 || st.version == 120);
	symi_builder_set_gopclntab(b);
	err = symi_builder_finish(b, &buf, &len);
	FUZZ_CHECK(err == 0 || err == -ENOMEM || err == -SYM_E_TOOBIG);
	if (err)
		goto out;
	FUZZ_CHECK(sym_table_open(buf, len, &t) == 0);
	FUZZ_CHECK(sym_table_verify(t) == 0);
	look(t);
out:
	sym_table_close(t);
	free(buf);
	symi_builder_free(b);
	free(tab);
	free(rest);
	return 0;
}
