/*
 * t-table.c - the table builder and reader on synthetic input: inline
 * chains, holes, overlapping rows, tombstones, symbol preference, and
 * the checks sym_table_open() makes on corrupt buffers; batches against
 * single lookups on this program's own table.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "tap.h"
#include "gnuref.h"
#include "internal.h"
#include "format.h"
#include "gnutext.h"
#include "base.h"

static struct sym_table *build(struct symi_builder *b, void **buf)
{
	struct sym_table *t = NULL;
	size_t len;

	CHECK_ERR(symi_builder_finish(b, buf, &len), 0);
	CHECK_ERR(sym_table_open(*buf, len, &t), 0);
	return t;
}

static size_t look(struct sym_table *t, uint64_t a, struct sym_frame *fr)
{
	size_t n = 99;

	if (sym_table_lookup(t, a, fr, SYM_MAX_FRAMES, &n) != 0)
		return 99;
	return n;
}

/* The whole strings blob of @t, inflated first when compressed. */
static const char *strs_of(const struct sym_table *t)
{
	if (!t->str.z)
		return t->str.plain;
	CHECK_ERR(symi_zstr_fill_all(t->str.z), 0);
	return t->str.z->blob;
}

static int same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static void test_chain(void)
{
	struct symi_builder *b = NULL;
	struct sym_frame fr[SYM_MAX_FRAMES];
	struct sym_table *t;
	struct sym_table_stat st;
	uint32_t fmain, fsq, fadd, fc, fh, smain, sadd, ssq;
	void *buf = NULL;
	size_t n;

	CHECK_ERR(symi_builder_new(&b), 0);
	symi_builder_add_text(b, 0x1000, 0x2000);
	fc = symi_builder_file(b, "/src/main.c", 0);
	fh = symi_builder_file(b, "/src/util.h", 0);
	CHECK(fc != SYMI_NONE && fh != SYMI_NONE && fc != fh);
	CHECK(symi_builder_file(b, "/src/main.c", 0) == fc);
	fmain = symi_builder_func(b, "main", NULL, fc, 10);
	fadd = symi_builder_func(b, "add3", "_Z4add3i", fh, 5);
	fsq = symi_builder_func(b, "sq", "_Z2sqi", fh, 2);
	CHECK(symi_builder_func(b, "sq", "_Z2sqi", fh, 2) == fsq);
	/* main [0x1100,0x1200) inlines add3 [0x1120,0x1160) at main.c:12,
	 * which inlines sq [0x1130,0x1140) at util.h:6. */
	smain = symi_builder_scope(b, SYMI_NONE, fmain, SYMI_NONE, 0, 0,
				   0x1100, 0);
	sadd = symi_builder_scope(b, smain, fadd, fc, 12, 7, 0x1120, 0);
	ssq = symi_builder_scope(b, sadd, fsq, fh, 6, 10, 0x1130, 0);
	CHECK_ERR(symi_builder_scope_range(b, smain, 0, 0x1100, 0x1200), 0);
	CHECK_ERR(symi_builder_scope_range(b, sadd, 1, 0x1120, 0x1160), 0);
	CHECK_ERR(symi_builder_scope_range(b, ssq, 2, 0x1130, 0x1140), 0);
	/* A tombstoned copy at 0 must vanish. */
	CHECK_ERR(symi_builder_scope_range(b, ssq, 0, 0x0, 0x40), 0);
	CHECK_ERR(symi_builder_line(b, 0x1100, 0x1130, fc, 11, 3, 0), 0);
	CHECK_ERR(symi_builder_line(b, 0x1130, 0x1140, fh, 2, 30, 4), 0);
	CHECK_ERR(symi_builder_line(b, 0x1140, 0x1200, fc, 13, 1, 0), 0);
	CHECK_ERR(symi_builder_line(b, 0x0, 0x20, fc, 99, 1, 0), 0);
	/* An overlapping row added later loses the overlap. */
	CHECK_ERR(symi_builder_line(b, 0x1100, 0x1108, fc, 77, 1, 0), 0);
	symi_builder_set_dwarf(b);
	CHECK_ERR(symi_builder_add_symbol(b, 0x1100, 0x100, "main", NULL,
					  SYMI_SYM_GLOBAL | SYMI_SYM_FUNC), 0);
	t = build(b, &buf);
	symi_builder_free(b);
	if (!t)
		return;
	sym_table_stat(t, &st);
	CHECK_ERR(sym_table_verify(t), 0);
	CHECK(st.converter == sym_converter_version() && st.elfutils >= 188);
	CHECK(st.flags & SYM_TABLE_DWARF);
	CHECK(st.flags & SYM_TABLE_SYMBOLS);
	CHECK(st.scopes == 3 && st.funcs == 3 && st.files == 2);

	n = look(t, 0x1134, fr);
	CHECK(n == 3);
	CHECK(same(fr[0].name, "sq") && same(fr[0].file, "/src/util.h") &&
	      fr[0].line == 2 && fr[0].column == 30 &&
	      fr[0].discriminator == 4);
	CHECK(same(fr[0].linkage_name, "_Z2sqi") &&
	      same(fr[0].demangled, "sq(int)"));
	CHECK(fr[0].flags & SYM_FRAME_INLINED);
	CHECK(fr[0].entry == 0x1130);
	CHECK(same(fr[1].name, "add3") && same(fr[1].file, "/src/util.h") &&
	      fr[1].line == 6 && fr[1].column == 10);
	CHECK(same(fr[2].name, "main") && same(fr[2].file, "/src/main.c") &&
	      fr[2].line == 12 && fr[2].column == 7);
	CHECK(!(fr[2].flags & SYM_FRAME_INLINED));
	CHECK(same(fr[2].symbol, "main") && fr[2].symbol_addr == 0x1100);
	CHECK(fr[2].entry == 0x1100 && same(fr[2].decl_file, "/src/main.c") &&
	      fr[2].decl_line == 10);

	n = look(t, 0x1150, fr);
	CHECK(n == 2 && same(fr[0].name, "add3") && fr[0].line == 13);
	n = look(t, 0x1104, fr);
	CHECK(n == 1 && fr[0].line == 11);
	n = look(t, 0x11ff, fr);
	CHECK(n == 1 && same(fr[0].name, "main") && fr[0].line == 13);
	/* Past the end, before the start, in a tombstone: nothing. */
	CHECK(look(t, 0x1200, fr) == 0);
	CHECK(look(t, 0x10ff, fr) == 0);
	CHECK(look(t, 0x10, fr) == 0);
	CHECK(look(t, UINT64_MAX, fr) == 0);

	/* A short array truncates the chain and says so. */
	CHECK_ERR(sym_table_lookup(t, 0x1134, fr, 2, &n), 0);
	CHECK(n == 2 && (fr[1].flags & SYM_FRAME_TRUNCATED));
	CHECK_ERR(sym_table_lookup(t, 0x1134, fr, 0, &n), -EINVAL);
	CHECK_ERR(sym_table_lookup(NULL, 0x1134, fr, 2, &n), -EINVAL);
	sym_table_close(t);
	free(buf);
}

struct batch {
	size_t calls;
	size_t frames[4];
};

static int batch_cb(void *ctx, size_t idx, const struct sym_frame *fr,
		    size_t n)
{
	struct batch *bt = ctx;

	(void)fr;
	bt->calls++;
	if (idx < 4)
		bt->frames[idx] = n;
	return 0;
}

static void test_symbols(void)
{
	struct symi_builder *b = NULL;
	struct sym_frame fr[SYM_MAX_FRAMES];
	struct sym_table *t;
	void *buf = NULL;
	uint64_t a, sz;
	uint64_t addrs[4] = { 0x2010, 0x2000, 0x3000, 0x2050 };
	struct batch bt = { 0 };

	CHECK_ERR(symi_builder_new(&b), 0);
	symi_builder_add_text(b, 0x2000, 0x3000);
	symi_builder_add_section(b, 0x2000, 0x2090);
	/* At 0x2000: a local, a weak and a global alias; the global wins. */
	symi_builder_add_symbol(b, 0x2000, 0x40, "local_alias", NULL,
				SYMI_SYM_FUNC);
	symi_builder_add_symbol(b, 0x2000, 0x40, "weak_alias", NULL,
				SYMI_SYM_FUNC | SYMI_SYM_WEAK);
	symi_builder_add_symbol(b, 0x2000, 0x40, "_Z6globali", NULL,
				SYMI_SYM_FUNC | SYMI_SYM_GLOBAL);
	/* A sizeless symbol covers up to the next one. */
	symi_builder_add_symbol(b, 0x2040, 0, "sizeless", NULL,
				SYMI_SYM_GLOBAL);
	symi_builder_add_symbol(b, 0x2080, 0x10, "after", "after.c", 0);
	/* SHN_ABS: its own address only; outside every section: nothing. */
	symi_builder_add_symbol(b, 0x2100, 0, "_etext", NULL,
				SYMI_SYM_GLOBAL | SYMI_SYM_ABS);
	symi_builder_add_symbol(b, 0x2200, 0, "nosection", NULL,
				SYMI_SYM_GLOBAL);
	t = build(b, &buf);
	symi_builder_free(b);
	if (!t)
		return;
	/* Each peer's choice: eu the global, llvm the last of the largest,
	 * GNU (bfd) the first of the largest, which names the frame. */
	CHECK(look(t, 0x2010, fr) == 1);
	CHECK(same(fr[0].symbol, "_Z6globali") && same(fr[0].name, "local_alias"));
	CHECK(same(fr[0].llvm_symbol, "_Z6globali") &&
	      fr[0].llvm_symbol_addr == 0x2000 && !fr[0].demangled &&
	      same(fr[0].gnu_symbol, "local_alias"));
	CHECK(fr[0].flags & SYM_FRAME_SYMTAB);
	CHECK(fr[0].entry == 0x2000 && fr[0].symbol_size == 0x40);
	CHECK(look(t, 0x2050, fr) == 1 && same(fr[0].symbol, "sizeless"));
	CHECK(look(t, 0x2085, fr) == 1 && same(fr[0].symbol, "after"));
	CHECK(same(fr[0].file, "after.c") && fr[0].line == 0);
	CHECK(look(t, 0x2095, fr) == 0);
	CHECK(look(t, 0x3000, fr) == 0);
	CHECK(look(t, 0x2100, fr) == 1 && same(fr[0].symbol, "_etext"));
	CHECK(look(t, 0x2101, fr) == 0);
	/* Only llvm names an address after a symbol outside every section
	 * (a sizeless one runs on to the next, here the table's end). */
	CHECK(look(t, 0x2200, fr) == 1 && !fr[0].name && !fr[0].symbol &&
	      same(fr[0].llvm_symbol, "nosection"));
	CHECK_ERR(sym_table_find_symbol(t, "weak_alias", &a, &sz), 0);
	CHECK(a == 0x2000 && sz == 0x40);
	CHECK_ERR(sym_table_find_symbol(t, "nope", &a, NULL), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_table_lookup_batch(t, addrs, 4, batch_cb, &bt), 0);
	CHECK(bt.calls == 4 && bt.frames[0] == 1 && bt.frames[2] == 0 &&
	      bt.frames[3] == 1);
	sym_table_close(t);
	free(buf);
}

/* Batches: input order kept across sorted windows, the same answers as
 * single lookups, far-apart addresses, and a callback that stops. */
struct order {
	struct sym_table *t;
	const uint64_t *addrs;
	size_t next, bad, stop_at;
};

static int order_cb(void *ctx, size_t idx, const struct sym_frame *fr,
		    size_t n)
{
	struct order *o = ctx;
	struct sym_frame one[SYM_MAX_FRAMES];
	size_t m = look(o->t, o->addrs[idx], one);

	if (idx != o->next++ || m != n ||
	    (n && (!same(fr[0].name, one[0].name) ||
		   fr[0].entry != one[0].entry)))
		o->bad++;
	return idx == o->stop_at ? 7 : 0;
}

static void test_batch_order(void)
{
	enum { NSYM = 4000, NADDR = 150000 };
	struct symi_builder *b = NULL;
	struct sym_table *t;
	struct order o = { 0 };
	uint64_t *addrs = malloc(NADDR * sizeof(*addrs));
	void *buf = NULL;
	char name[32];
	unsigned seed = 1;

	CHECK_ERR(symi_builder_new(&b), 0);
	symi_builder_add_text(b, 0x10000, 0x10000 + NSYM * 0x10);
	symi_builder_add_section(b, 0x10000, 0x10000 + NSYM * 0x10);
	for (int i = 0; i < NSYM; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		symi_builder_add_symbol(b, 0x10000 + (uint64_t)i * 0x10, 0x10,
					name, NULL,
					SYMI_SYM_FUNC | SYMI_SYM_GLOBAL);
	}
	t = build(b, &buf);
	symi_builder_free(b);
	if (!t || !addrs) {
		free(addrs);
		return;
	}
	/* Unsorted, with misses below and above, and in the second window
	 * (batch.c's are 131,072) one address so far away that the window
	 * cannot be sorted. */
	for (size_t i = 0; i < NADDR; i++) {
		seed = seed * 1103515245 + 12345;
		addrs[i] = 0xff00 + (seed >> 8) % (NSYM * 0x10 + 0x200);
	}
	addrs[140000] = (uint64_t)1 << 63;
	o.t = t;
	o.addrs = addrs;
	o.stop_at = SIZE_MAX;
	CHECK_ERR(sym_table_lookup_batch(t, addrs, NADDR, order_cb, &o), 0);
	CHECK(o.next == NADDR && o.bad == 0);
	o.next = 0;
	o.stop_at = 100000;
	CHECK_ERR(sym_table_lookup_batch(t, addrs, NADDR, order_cb, &o), 7);
	CHECK(o.next == 100001 && o.bad == 0);
	sym_table_close(t);
	free(buf);
	free(addrs);
}

/*
 * Batches on a real table (this program's own, built with -g: libsym's
 * inline functions give it deep inline chains): every field of every
 * frame must be what a single lookup gives, whatever the order of the
 * input (unsorted over three windows, with repeats; ascending; tiny), and
 * every answer must come in input order.  With enum sym_frame_omit bits,
 * the fields they name are NULL or 0 and every other is the same.
 */
struct fields {
	const struct sym_table *t;
	const uint64_t *addrs;
	unsigned omit;
	size_t next, bad, frames, inlined, decls, peers, dems, syms, llvms;
};

static int same_frame(const struct sym_frame *a, const struct sym_frame *b)
{
	/* Same table, so the same string pointers. */
	return a->name == b->name && a->linkage_name == b->linkage_name &&
	       a->demangled == b->demangled && a->file == b->file &&
	       a->decl_file == b->decl_file && a->line == b->line &&
	       a->column == b->column &&
	       a->discriminator == b->discriminator &&
	       a->decl_line == b->decl_line && a->entry == b->entry &&
	       a->symbol == b->symbol && a->symbol_addr == b->symbol_addr &&
	       a->symbol_size == b->symbol_size && a->flags == b->flags &&
	       a->file_rel == b->file_rel &&
	       a->decl_file_rel == b->decl_file_rel &&
	       a->outer == b->outer && a->eu_name == b->eu_name &&
	       a->llvm_symbol == b->llvm_symbol &&
	       a->llvm_symbol_addr == b->llvm_symbol_addr &&
	       a->llvm_symbol_file == b->llvm_symbol_file &&
	       a->gnu_symbol == b->gnu_symbol &&
	       a->gnu_symbol_addr == b->gnu_symbol_addr;
}

/* @fr as a lookup without the fields of @omit gives it; counts in @f
 * the frames where that changed something. */
static void omit_fields(struct sym_frame *fr, unsigned omit,
			struct fields *f)
{
	if ((omit & SYM_OMIT_DECL) &&
	    (fr->decl_file || fr->decl_line ||
	     (fr->flags & SYM_FRAME_DECL_CONST))) {
		f->decls++;
		fr->decl_file = NULL;
		fr->decl_file_rel = 0;
		fr->decl_line = 0;
		fr->flags &= ~(uint32_t)SYM_FRAME_DECL_CONST;
	}
	if ((omit & SYM_OMIT_PEER_NAMES) && (fr->outer || fr->eu_name)) {
		f->peers++;
		fr->outer = NULL;
		fr->eu_name = NULL;
	}
	if ((omit & SYM_OMIT_DEMANGLED) &&
	    (fr->demangled || (fr->flags & SYM_FRAME_SPELLING))) {
		f->dems++;
		fr->demangled = NULL;
		fr->flags &= ~(uint32_t)SYM_FRAME_SPELLING;
	}
	/* The entry stays where GNU's output reads it: a function without
	 * a linkage name (tools/addr2line.c, struct gnu_seen). */
	if ((omit & SYM_OMIT_LLVM_ONLY) &&
	    (fr->column || fr->file_rel || (fr->flags & SYM_FRAME_NO_LOW_PC) ||
	     (fr->entry && !(fr->flags & SYM_FRAME_NO_LINKAGE)))) {
		f->llvms++;
		fr->column = 0;
		fr->file_rel = 0;
		fr->flags &= ~(uint32_t)SYM_FRAME_NO_LOW_PC;
		if (!(fr->flags & SYM_FRAME_NO_LINKAGE))
			fr->entry = 0;
	}
}

/* @fr[@n] (a whole lookup's) as a lookup without its symbols gives it
 * (SYM_OMIT_SYMBOLS): they go when every frame is named from DWARF, as
 * GNU names them; counts in @f the answers where that changed something. */
static void omit_symbols(struct sym_frame *fr, size_t n, struct fields *f)
{
	struct sym_frame *o = &fr[n - 1];

	for (size_t i = 0; i < n; i++) {
		if (fr[i].flags & SYM_FRAME_NO_LINKAGE)
			return;
	}
	if ((o->flags & SYM_FRAME_SYMTAB) || (!o->linkage_name && !o->name))
		return;
	f->syms += o->symbol || o->llvm_symbol || o->gnu_symbol;
	o->symbol = NULL;
	o->symbol_addr = 0;
	o->symbol_size = 0;
	o->llvm_symbol = NULL;
	o->llvm_symbol_addr = 0;
	o->llvm_symbol_file = NULL;
	o->gnu_symbol = NULL;
	o->gnu_symbol_addr = 0;
	o->flags &= ~(uint32_t)(SYM_FRAME_SYMBOL_OBJECT | SYM_FRAME_PLT);
}

static int fields_cb(void *ctx, size_t idx, const struct sym_frame *fr,
		     size_t n)
{
	struct fields *f = ctx;
	struct sym_frame one[SYM_MAX_FRAMES];
	size_t m = 99;

	sym_table_lookup(f->t, f->addrs[idx], one, SYM_MAX_FRAMES, &m);
	if (idx != f->next++ || m != n) {
		f->bad++;
		return 0;
	}
	if (n && (f->omit & SYM_OMIT_SYMBOLS))
		omit_symbols(one, n, f);
	for (size_t i = 0; i < n; i++) {
		omit_fields(&one[i], f->omit, f);
		if (!same_frame(&fr[i], &one[i])) {
			f->bad++;
			break;
		}
	}
	f->frames += n;
	f->inlined += n > 2;	/* three frames or more */
	return 0;
}

/*
 * Batches without each set of the declarations, the peer names, the
 * demangled names, the symbols and llvm-symbolizer's fields (enum
 * sym_frame_omit), over @t at @addrs: each must leave out something (the
 * peer and demangled names only C++ has: @cxx), and nothing else.
 */
static void test_omit(const struct sym_table *t, const uint64_t *addrs,
		      size_t naddr, bool cxx)
{
	struct fields f;

	for (unsigned omit = 1; omit <= SYMI_OMIT_ALL; omit++) {
		f = (struct fields){ .t = t, .addrs = addrs, .omit = omit };
		CHECK_ERR(sym_table_lookup_batch_omit(t, addrs, naddr, omit,
						      fields_cb, &f), 0);
		CHECK(f.next == naddr && f.bad == 0);
		/* The C++ program is mostly the C runtime's code. */
		CHECK(!(omit & SYM_OMIT_DECL) ||
		      f.decls > (cxx ? 0 : naddr / 10));
		CHECK(!cxx || !(omit & SYM_OMIT_PEER_NAMES) || f.peers > 0);
		CHECK(!cxx || !(omit & SYM_OMIT_DEMANGLED) || f.dems > 0);
		/* The C++ program's functions have no linkage name in
		 * their DWARF (GNU names them after their symbols:
		 * SYM_FRAME_NO_LINKAGE), so they keep the symbols. */
		CHECK(!(omit & SYM_OMIT_SYMBOLS) || cxx ||
		      f.syms > naddr / 10);
		CHECK(!(omit & SYM_OMIT_LLVM_ONLY) ||
		      f.llvms > (cxx ? 0 : naddr / 10));
	}
	CHECK_ERR(sym_table_lookup_batch_omit(t, addrs, 1,
					      SYMI_OMIT_ALL + 1, fields_cb,
					      &f), -EINVAL);
}

/* A C++ program with lambdas inlined into a template: its frames have
 * outer names (SYM_OMIT_PEER_NAMES), which this C program's have not. */
static void test_omit_cxx(void)
{
	static const char src[] =
		"template <class F> __attribute__((noinline)) int\n"
		"apply(F f, int x) { return f(x) + f(x + 1); }\n"
		"int main(int argc, char **) {\n"
		"  int k = argc;\n"
		"  return apply([k](int x) { return x * k + 1; }, argc) +\n"
		"         apply([k](int x) { return x - k; }, argc);\n"
		"}\n";
	char dir[] = "/tmp/t-table.XXXXXX", path[64];
	struct sym_module *m = NULL;
	const struct sym_table *t;
	struct sym_table_stat st;
	uint64_t *addrs = NULL;
	size_t n;
	FILE *f;

	if (!mkdtemp(dir)) {
		tap_skip("omit on C++", "no temporary directory");
		return;
	}
	snprintf(path, sizeof(path), "%s/l.cc", dir);
	f = fopen(path, "w");
	if (f) {
		fputs(src, f);
		fclose(f);
	}
	if (!f || !tap_sh("g++ -O2 -g -o %s/l %s 2>/dev/null", dir, path)) {
		tap_skip("omit on C++", "g++ cannot build the program");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/l", dir);
	if (sym_module_open(path, NULL, &m) != 0 ||
	    sym_module_table(m, &t) != 0) {
		CHECK(!"the C++ program's table");
		goto out;
	}
	sym_table_stat(t, &st);
	n = st.end - st.start;
	addrs = malloc(n * sizeof(*addrs));
	if (!addrs)
		goto out;
	for (size_t i = 0; i < n; i++)
		addrs[i] = st.start + i;
	test_omit(t, addrs, n, true);
out:
	free(addrs);
	sym_module_close(m);
	tap_sh("rm -rf %s", dir);
}

/* GNU's text of a batch written by libsym (gnutext.h) against the frames'
 * text (gnuref.h). */
static void test_gnu_text(const struct sym_table *t, const uint64_t *addrs,
			  size_t n)
{
	struct symi_buf ref = SYMI_BUF_INIT(SYMI_BUF_MAX_CAP);
	struct symi_buf out = SYMI_BUF_INIT(SYMI_BUF_MAX_CAP);
	struct symi_gnu_text text = { .buf = &out };
	struct gnu_ctx g = { .b = &ref };

	CHECK_ERR(sym_table_lookup_batch_omit(t, addrs, n, SYMI_OMIT_ALL,
					      gnu_cb, &g), 0);
	CHECK(!g.bad && g.calls == n);
	/* A small buffer first, which the answers the callback prints
	 * grow: both ways meet in it. */
	CHECK_ERR(symi_buf_grow(&out, 1024), 0);
	g = (struct gnu_ctx){ .b = &out, .text = &text };
	CHECK_ERR(symi_table_lookup_batch_gnu(t, addrs, n, SYMI_OMIT_ALL,
					      &text, gnu_cb, &g), 0);
	CHECK(!g.bad);
	CHECK(g.next == n || text.done == n);
	/* Without the frame cache (whose batches make no text), a good
	 * share are text: 62% of this test's addresses, 32% under ASan and
	 * UBSan, whose build gives fewer hits the text can take.
	 * The others lie outside the text, in code named from the symbols,
	 * or in functions without a linkage name. */
	if (symi_fcache_min > n)
		CHECK(g.calls > 0 && g.calls < n - n / 6);
	CHECK(out.len == ref.len && !memcmp(out.p, ref.p, ref.len));
	CHECK(out.p[out.len] == '\0');
	/* Not the GNU style's omit: no text. */
	symi_buf_reset(&out);
	g = (struct gnu_ctx){ .b = &out, .text = &text };
	text.done = 0;
	CHECK_ERR(symi_table_lookup_batch_gnu(t, addrs, n, SYMI_OMIT_ALL &
					      ~SYM_OMIT_DECL, &text, gnu_cb,
					      &g), 0);
	CHECK(g.calls == n && text.done == 0);
	symi_buf_release(&ref);
	symi_buf_release(&out);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_batch_module(const char *self)
{
	enum { NADDR = 140000 };
	struct sym_module *m = NULL;
	const struct sym_table *t;
	struct sym_table_stat st;
	struct fields f = { 0 };
	uint64_t *addrs = malloc(NADDR * sizeof(*addrs)), span;
	unsigned seed = 7;

	if (!addrs || sym_module_open(self, NULL, &m) != 0 ||
	    sym_module_table(m, &t) != 0) {
		CHECK(!"this program's table");
		free(addrs);
		sym_module_close(m);
		return;
	}
	sym_table_stat(t, &st);
	span = st.end - st.start;
	/* Mostly inside, some just outside; every 7th a repeat. */
	for (size_t i = 0; i < NADDR; i++) {
		seed = seed * 1103515245 + 12345;
		addrs[i] = st.start - 0x40 + (seed >> 4) % (span + 0x80);
		if (i > 100 && i % 7 == 0)
			addrs[i] = addrs[i - 1 - (seed >> 8) % 100];
	}
	f.t = t;
	f.addrs = addrs;
	CHECK_ERR(sym_table_lookup_batch(t, addrs, NADDR, fields_cb, &f), 0);
	CHECK(f.next == NADDR && f.bad == 0);
	/* The test would prove little without inline chains. */
	CHECK(f.frames > NADDR / 2 && f.inlined > NADDR / 100);
	/* Sparse: 2,000 of them, tens of ranges apart once sorted, where
	 * the sorted search (symi_table_locate_keys()) counts past its 16
	 * lanes of range starts. */
	f.next = f.bad = f.frames = 0;
	CHECK_ERR(sym_table_lookup_batch(t, addrs, 2000, fields_cb, &f), 0);
	CHECK(f.next == 2000 && f.bad == 0 && f.frames > 1000);
	/* Ascending (not sorted again), and too small to sort. */
	qsort(addrs, NADDR, sizeof(*addrs), cmp_u64);
	f.next = f.bad = f.frames = 0;
	CHECK_ERR(sym_table_lookup_batch(t, addrs, NADDR, fields_cb, &f), 0);
	CHECK(f.next == NADDR && f.bad == 0);
	f.next = f.bad = f.frames = 0;
	f.addrs = addrs + NADDR / 2;
	CHECK_ERR(sym_table_lookup_batch(t, f.addrs, 5, fields_cb, &f), 0);
	CHECK(f.next == 5 && f.bad == 0 && f.frames > 0);
	test_omit(t, addrs, NADDR, false);
	test_gnu_text(t, addrs, NADDR);
	sym_module_close(m);
	free(addrs);
}

/*
 * The frame cache (symi_table_frames_cached()): test_batch_module()
 * compares every frame of its batches with a single lookup's, which never
 * uses the cache; run with the cache on every batch (also the 5-address
 * one) of a table that is not prefetched (those have the cache), it must
 * answer some frames and change none, and off, answer none.
 */
static void test_fcache(const char *self)
{
	size_t keep = symi_fcache_min, hits = symi_fcache_hits;
	size_t pf_min = symi_prefetch_min;

	symi_prefetch_min = SIZE_MAX;
	symi_fcache_min = 0;
	test_batch_module(self);
	CHECK(symi_fcache_hits > hits);
	symi_fcache_min = SIZE_MAX;
	hits = symi_fcache_hits;
	test_batch_module(self);
	CHECK(symi_fcache_hits == hits);
	symi_fcache_min = keep;
	symi_prefetch_min = pf_min;
}

/* Finish @b (freed) into *@buf[*@len] (the caller frees it), allocate
 * *@copy of that size for corruptions, and open the table; NULL (and a
 * failed check) when something fails. */
static struct sym_table *finish_with_copy(struct symi_builder *b,
					   void **buf, size_t *len,
					   char **copy)
{
	struct sym_table *t = NULL;

	CHECK_ERR(symi_builder_finish(b, buf, len), 0);
	symi_builder_free(b);
	*copy = *buf ? malloc(*len) : NULL;
	CHECK(*copy != NULL);
	if (*copy)
		CHECK_ERR(sym_table_open(*buf, *len, &t), 0);
	return t;
}

/*
 * Symbol kinds (format 8): symbols share their (STT_FILE name, flags)
 * through a small array; each symbol answers its own, and a kind index
 * out of range reads as none and fails verify.
 */
static void test_kinds(void)
{
	static const struct { const char *file; uint32_t flags; } k[] = {
		{ NULL, SYMI_SYM_GLOBAL | SYMI_SYM_FUNC | SYMI_SYM_SIZED },
		{ "a.c", SYMI_SYM_FUNC | SYMI_SYM_SIZED },
		{ "b.c", SYMI_SYM_FUNC | SYMI_SYM_SIZED },
		{ "a.c", SYMI_SYM_OBJECT | SYMI_SYM_SIZED },
		{ "c.c", SYMI_SYM_WEAK | SYMI_SYM_FUNC | SYMI_SYM_SIZED },
	};
	struct symi_builder *b = NULL;
	struct sym_table *t = NULL, *tc = NULL;
	struct sym_frame fr[SYM_MAX_FRAMES];
	void *buf = NULL;
	char *copy = NULL, name[32];
	size_t len = 0, n, bad = 0, keep = symi_zrec_max;
	int nk = (int)(sizeof(k) / sizeof(k[0]));

	CHECK_ERR(symi_builder_new(&b), 0);
	for (int i = 0; i < 400; i++) {
		snprintf(name, sizeof(name), "s%03d", i);
		symi_builder_add_symbol(b, 0x10000 + 0x10 * (uint64_t)i, 0x10,
					name, k[i % nk].file, k[i % nk].flags);
	}
	/* Plain records, to corrupt one in place below. */
	symi_zrec_max = 0;
	t = finish_with_copy(b, &buf, &len, &copy);
	symi_zrec_max = keep;
	if (!t)
		goto out;
	CHECK(t->syms.n == 400 && t->skinds.n == (uint32_t)nk);
	for (int i = 0; i < 400; i++) {
		snprintf(name, sizeof(name), "s%03d", i);
		if (sym_table_lookup(t, 0x10000 + 0x10 * (uint64_t)i + 4, fr,
				     SYM_MAX_FRAMES, &n) != 0 || n != 1 ||
		    !same(fr[0].symbol, name) ||
		    !!(fr[0].flags & SYM_FRAME_SYMBOL_OBJECT) !=
			    !!(k[i % nk].flags & SYMI_SYM_OBJECT) ||
		    (fr[0].llvm_symbol &&
		     !(k[i % nk].file ? same(fr[0].llvm_symbol_file,
					     k[i % nk].file) :
				       !fr[0].llvm_symbol_file)))
			bad++;
	}
	CHECK(bad == 0);
	CHECK_ERR(sym_table_verify(t), 0);
	/* Symbol 1's kind past the kinds (all ones in its 3 bits: 7 of
	 * 5): read as none, verify fails. */
	memcpy(copy, buf, len);
	{
		struct symt_header *ch = (struct symt_header *)copy;
		struct symt_view v;
		uint64_t x;

		v = t->syms;
		v.p = (const uint8_t *)copy + ch->syms.off;
		memcpy(&x, copy + ch->syms.off + v.stride + v.at[SYMT_SY_KIND],
		       8);
		x = le64toh(x) | (uint64_t)v.mask[SYMT_SY_KIND]
					<< v.sh[SYMT_SY_KIND];
		x = htole64(x);
		memcpy(copy + ch->syms.off + v.stride + v.at[SYMT_SY_KIND], &x,
		       8);
		ch->crc = symi_table_crc(copy, ch->size);
	}
	CHECK_ERR(sym_table_open(copy, len, &tc), 0);
	if (tc) {
		CHECK(sym_table_lookup(tc, 0x10014, fr, SYM_MAX_FRAMES,
				       &n) == 0 && n == 1 &&
		      same(fr[0].symbol, "s001") &&
		      !(fr[0].flags & SYM_FRAME_SYMBOL_OBJECT));
		CHECK_ERR(sym_table_verify(tc), -SYM_E_BADTABLE);
	}
out:
	sym_table_close(tc);
	sym_table_close(t);
	free(copy);
	free(buf);
}

/* Frames @a and @b of two tables: the same strings and values. */
static int same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int same_frame_text(const struct sym_frame *a, const struct sym_frame *b)
{
	return same_text(a->name, b->name) &&
	       same_text(a->linkage_name, b->linkage_name) &&
	       same_text(a->demangled, b->demangled) &&
	       same_text(a->file, b->file) &&
	       same_text(a->decl_file, b->decl_file) && a->line == b->line &&
	       a->column == b->column &&
	       a->discriminator == b->discriminator &&
	       a->decl_line == b->decl_line && a->entry == b->entry &&
	       same_text(a->symbol, b->symbol) &&
	       a->symbol_addr == b->symbol_addr &&
	       a->symbol_size == b->symbol_size && a->flags == b->flags &&
	       a->file_rel == b->file_rel &&
	       a->decl_file_rel == b->decl_file_rel &&
	       same_text(a->outer, b->outer) &&
	       same_text(a->eu_name, b->eu_name) &&
	       same_text(a->llvm_symbol, b->llvm_symbol) &&
	       a->llvm_symbol_addr == b->llvm_symbol_addr &&
	       same_text(a->llvm_symbol_file, b->llvm_symbol_file) &&
	       same_text(a->gnu_symbol, b->gnu_symbol) &&
	       a->gnu_symbol_addr == b->gnu_symbol_addr;
}

/* An address of [start - 0x40, end + 0x40) of @st, from *@seed. */
static uint64_t rand_addr(unsigned *seed, const struct sym_table_stat *st)
{
	*seed = *seed * 1103515245 + 12345;
	return st->start - 0x40 + (*seed >> 4) % (st->end - st->start + 0x80);
}

/* How @x's and @y's frames of @addr differ: 0 when every field of every
 * frame is the same; their frames added to *@frames. */
static size_t lookup_diff(const struct sym_table *x,
			  const struct sym_table *y, uint64_t addr,
			  size_t *frames)
{
	struct sym_frame a[SYM_MAX_FRAMES], b[SYM_MAX_FRAMES];
	size_t na, nb, bad = 0;

	if (sym_table_lookup(x, addr, a, SYM_MAX_FRAMES, &na) != 0 ||
	    sym_table_lookup(y, addr, b, SYM_MAX_FRAMES, &nb) != 0 ||
	    na != nb)
		return 1;
	for (size_t j = 0; j < na; j++)
		bad += !same_frame_text(&a[j], &b[j]);
	*frames += na;
	return bad;
}

/* The bytes of this program's table, built with the writer's bounds
 * symi_zrec_max @max and symi_zrec_hot_max @hot (*@buf: caller
 * frees). */
static bool own_table_as(const char *self, size_t max, size_t hot,
			 void **buf, size_t *len)
{
	size_t keep = symi_zrec_max, keep_hot = symi_zrec_hot_max;
	struct sym_module *m = NULL;
	const struct sym_table *t;
	const void *p;
	bool ok;

	symi_zrec_max = max;
	symi_zrec_hot_max = hot;
	ok = sym_module_open(self, NULL, &m) == 0 &&
	     sym_module_table(m, &t) == 0;
	symi_zrec_max = keep;
	symi_zrec_hot_max = keep_hot;
	*buf = NULL;
	if (ok) {
		sym_table_data(t, &p, len);
		*buf = malloc(*len);
		ok = *buf != NULL;
		if (ok)
			memcpy(*buf, p, *len);
	}
	sym_module_close(m);
	return ok;
}

/* This program's table with the packed arrays as columns when @zrec (the
 * hot ones whatever their size), else plain. */
static bool own_table(const char *self, bool zrec, void **buf, size_t *len)
{
	return own_table_as(self, zrec ? symi_zrec_max : 0, SIZE_MAX, buf,
			    len);
}

/* @h's packed array @r. */
static struct symt_packed *rec_of(struct symt_header *h, int r)
{
	struct symt_packed *all[SYMT_R_N] = { &h->scopes, &h->funcs, &h->files,
					      &h->syms, &h->sranges,
					      &h->skinds };

	return all[r];
}

/* Open @copy (@len bytes, the checksum made again) and expect @want. */
static void open_expect(char *copy, size_t len, int want, const char *what)
{
	struct symt_header *h = (struct symt_header *)copy;
	struct sym_table *t = NULL;
	int err;

	h->crc = symi_table_crc(copy, h->size);
	err = sym_table_open(copy, len, &t);
	if (err != want)
		printf("# %s: open gave %d, want %d\n", what, err, want);
	CHECK(err == want);
	sym_table_close(t);
}

/* @t, which verifies, answers @naddr random addresses (from @seed) with
 * every field of every frame as @plain does, most with frames. */
static void check_as_plain(const struct sym_table *t,
			   const struct sym_table *plain, unsigned seed,
			   size_t naddr)
{
	struct sym_table_stat st;
	size_t bad = 0, frames = 0;

	CHECK_ERR(sym_table_verify(t), 0);
	sym_table_stat(t, &st);
	for (size_t i = 0; i < naddr; i++)
		bad += lookup_diff(t, plain, rand_addr(&seed, &st), &frames);
	CHECK(bad == 0 && frames > naddr / 2);
}

/*
 * The packed arrays and the block index stored as compressed columns
 * (format 9, cols.c): this program's table, built both ways, answers the
 * same at every address; it is smaller; two opens share the records
 * built back; and an area that is not what the header says fails to
 * open, whatever is wrong with it.
 */
static void test_zrec(const char *self)
{
	enum { NADDR = 20000 };
	struct sym_table *tz = NULL, *tp = NULL, *t2 = NULL;
	void *bz = NULL, *bp = NULL;
	size_t lz = 0, lp = 0;
	struct symt_header *h;
	char *copy = NULL;
	int nz = 0;

	if (!own_table(self, true, &bz, &lz) ||
	    !own_table(self, false, &bp, &lp)) {
		CHECK(!"this program's table, both ways");
		goto out;
	}
	h = bz;
	for (int r = 0; r < SYMT_R_N; r++)
		nz += h->zrec[r] != 0;
	/* Scopes, functions, symbols and symbol ranges gain at least. */
	CHECK(nz >= 4 && h->zindex != 0 && h->off_boff == 0);
	CHECK(((struct symt_header *)bp)->zindex == 0);
	printf("# this program's table: %zu bytes as columns, %zu plain\n",
		 lz, lp);
	CHECK(lz < lp);
	{
		struct symt_header *hp = bp;
		uint64_t zb = h->zindex, pb = 8 * (uint64_t)hp->n_blocks;

		for (int r = 0; r < SYMT_R_N; r++) {
			zb += h->zrec[r] ? h->zrec[r] : rec_of(h, r)->bytes;
			pb += rec_of(hp, r)->bytes;
		}
		printf("# its records and index: %llu bytes, %llu plain\n",
		       (unsigned long long)zb, (unsigned long long)pb);
		CHECK(zb < pb * 3 / 5);
	}
	CHECK_ERR(sym_table_open(bz, lz, &tz), 0);
	CHECK_ERR(sym_table_open(bp, lp, &tp), 0);
	if (!tz || !tp)
		goto out;
	check_as_plain(tz, tp, 11, NADDR);
	/* A second open finds the records built: the same memory. */
	CHECK_ERR(sym_table_open(bz, lz, &t2), 0);
	if (t2)
		CHECK(t2->scopes.p == tz->scopes.p && t2->bstart == tz->bstart);
	sym_table_close(t2);
	t2 = NULL;
	/* Under a caller's key (the store's verified chunk): the first
	 * open compares, and the key and address then find the areas
	 * unread, even bytes changed behind the key (the caller vouches
	 * for them); without the key, or under another, they are read. */
	h = bz;
	if (h->zrec[SYMT_R_SCOPES]) {
		char *frame = (char *)bz + h->scopes.off + 8 + 20;

		CHECK_ERR(symi_table_open_known(bz, lz, 0x5eed, &t2), 0);
		sym_table_close(t2);
		t2 = NULL;
		*frame ^= 0x5a;
		CHECK_ERR(symi_table_open_known(bz, lz, 0x5eed, &t2), 0);
		if (t2)
			CHECK(t2->scopes.p == tz->scopes.p);
		sym_table_close(t2);
		t2 = NULL;
		if (symi_table_open_known(bz, lz, 0x5eee, &t2) == 0)
			CHECK(t2->scopes.p != tz->scopes.p);
		else
			CHECK(t2 == NULL);
		sym_table_close(t2);
		t2 = NULL;
		if (sym_table_open(bz, lz, &t2) == 0)
			CHECK(t2->scopes.p != tz->scopes.p);
		else
			CHECK(t2 == NULL);
		sym_table_close(t2);
		t2 = NULL;
		*frame ^= 0x5a;
	} else {
		CHECK(!"scopes stored as columns");
	}

	copy = malloc(lz);
	if (!copy)
		goto out;
	h = (struct symt_header *)copy;
	for (int r = 0; r < SYMT_R_N; r++) {
		struct symt_packed *pa;
		uint32_t zb;

		memcpy(copy, bz, lz);
		zb = h->zrec[r];
		pa = rec_of(h, r);
		if (!zb)
			continue;
		/* A delta bit for a field past the array's. */
		copy[pa->off] |= (char)0x80;
		open_expect(copy, lz, -SYM_E_BADTABLE, "delta bit");
		memcpy(copy, bz, lz);
		copy[pa->off + 3] = 1;	/* a reserved byte */
		open_expect(copy, lz, -SYM_E_BADTABLE, "reserved byte");
		memcpy(copy, bz, lz);
		h->zrec[r] = zb - 4;	/* the frame cut short */
		open_expect(copy, lz, -SYM_E_BADTABLE, "frame cut");
		memcpy(copy, bz, lz);
		h->zrec[r] = (uint32_t)lz;	/* past the table */
		open_expect(copy, lz, -SYM_E_BADTABLE, "area past the table");
		memcpy(copy, bz, lz);
		pa->count++;	/* not what the frame holds */
		pa->bytes = (uint32_t)symi_cols_out_bytes(
			SYMI_COLS_ROWS, pa->count, SYMT_FIELDS, pa->w);
		open_expect(copy, lz, -SYM_E_BADTABLE, "one record more");
		memcpy(copy, bz, lz);
		pa->bytes += 8;	/* records of other bytes */
		open_expect(copy, lz, -SYM_E_BADTABLE, "bytes");
	}
	memcpy(copy, bz, lz);
	h->off_boff = h->off_blocks;	/* both index forms at once */
	open_expect(copy, lz, -SYM_E_BADTABLE, "index with off_boff");
	memcpy(copy, bz, lz);
	h->zindex = 9;	/* a head and one byte of frame */
	open_expect(copy, lz, -SYM_E_BADTABLE, "index frame");
	memcpy(copy, bz, lz);
	open_expect(copy, lz, 0, "the copy unchanged");
out:
	sym_table_close(tz);
	sym_table_close(tp);
	free(copy);
	free(bz);
	free(bp);
}

/* A sym_frames_fn counting frames into *(size_t *)@ctx. */
static int count_frames(void *ctx, size_t i, const struct sym_frame *fr,
			size_t n)
{
	(void)i;
	(void)fr;
	*(size_t *)ctx += n;
	return 0;
}

/* A batch's answers kept: the number of frames and the outermost one of
 * each address (its symbols are what a cursor's search finds). */
struct kept {
	size_t *n;
	struct sym_frame *outer;
};

static int keep_outer(void *ctx, size_t i, const struct sym_frame *fr,
		      size_t n)
{
	struct kept *k = ctx;

	k->n[i] = n;
	if (n)
		k->outer[i] = fr[n - 1];
	return 0;
}

/* Batches of the ascending @addrs[@n] on @x and @y, every symbol read
 * (the cursor steps from range to range, chunk to chunk): how many
 * answers differ. */
static size_t batch_diff(const struct sym_table *x, const struct sym_table *y,
			 const uint64_t *addrs, size_t n)
{
	struct kept a = { calloc(n, sizeof(size_t)),
			  calloc(n, sizeof(struct sym_frame)) };
	struct kept b = { calloc(n, sizeof(size_t)),
			  calloc(n, sizeof(struct sym_frame)) };
	size_t bad = n;

	if (a.n && a.outer && b.n && b.outer &&
	    sym_table_lookup_batch_omit(x, addrs, n, 0, keep_outer, &a) == 0 &&
	    sym_table_lookup_batch_omit(y, addrs, n, 0, keep_outer, &b) == 0) {
		bad = 0;
		for (size_t i = 0; i < n; i++)
			bad += a.n[i] != b.n[i] ||
			       (a.n[i] && !same_frame_text(&a.outer[i],
							   &b.outer[i]));
	}
	free(a.n);
	free(a.outer);
	free(b.n);
	free(b.outer);
	return bad;
}

/* The chunks of @v built (ready 1), or -1 when its records are not in
 * chunks. */
static int chunks_built(const struct symt_view *v)
{
	int n = 0;

	if (!v->lz)
		return -1;
	for (uint32_t k = 0; k < v->lz->nframes; k++)
		n += __atomic_load_n(&v->lz->ready[k], __ATOMIC_ACQUIRE) == 1;
	return n;
}

/*
 * The writer's bound on the hot arrays (pack.c, ZREC_HOT_MAX): past it,
 * the scopes, functions and files are stored plain and the symbols and
 * their ranges still as columns; the table answers as the plain one
 * does, and its size lies between the two.
 */
static void test_zrec_hot(const char *self)
{
	enum { NADDR = 20000 };
	struct sym_table *th = NULL, *tp = NULL;
	void *bh = NULL, *bp = NULL, *bz = NULL;
	size_t lh = 0, lp = 0, lz = 0;
	struct symt_header *h;

	if (!own_table_as(self, symi_zrec_max, 0, &bh, &lh) ||
	    !own_table(self, false, &bp, &lp) ||
	    !own_table(self, true, &bz, &lz)) {
		CHECK(!"this program's table, three ways");
		goto out;
	}
	h = bh;
	CHECK(!h->zrec[SYMT_R_SCOPES] && !h->zrec[SYMT_R_FUNCS] &&
	      !h->zrec[SYMT_R_FILES]);
	CHECK(h->zrec[SYMT_R_SYMS] && h->zrec[SYMT_R_SRANGES]);
	h = bz;
	CHECK(h->zrec[SYMT_R_SCOPES] && h->zrec[SYMT_R_FUNCS]);
	printf("# hot arrays plain: %zu bytes, all columns %zu, plain %zu\n",
	       lh, lz, lp);
	CHECK(lz < lh && lh < lp);
	CHECK_ERR(sym_table_open(bh, lh, &th), 0);
	CHECK_ERR(sym_table_open(bp, lp, &tp), 0);
	if (!th || !tp)
		goto out;
	check_as_plain(th, tp, 17, NADDR);
out:
	sym_table_close(th);
	sym_table_close(tp);
	free(bh);
	free(bp);
	free(bz);
}

/*
 * The symbols and their ranges in chunks (format 10), built on demand:
 * this program's table with chunks of 16 records answers as the plain one
 * at every address, in GNU's style and with every symbol read; a lookup
 * GNU's style names from DWARF builds no chunk, one of a PLT stub's or
 * with the symbols read builds a chunk of each, sym_table_verify() all of
 * them; a bad chunk's symbols are absent, never another's, and verify
 * fails, as it does when a chunk's first key disagrees with its records.
 */
static void test_zrec_chunks(const char *self)
{
	enum { NADDR = 20000 };
	struct sym_table *tz = NULL, *tp = NULL, *tc = NULL;
	struct sym_frame a[SYM_MAX_FRAMES], b[SYM_MAX_FRAMES];
	unsigned keep = symi_zrec_sym_shift, seed = 5;
	void *bz = NULL, *bp = NULL;
	size_t lz = 0, lp = 0, na, nb, bad = 0, frames = 0, absent = 0;
	struct sym_table_stat st;
	struct symt_header *h;
	char *copy = NULL;
	int built;

	symi_zrec_sym_shift = 4;
	if (!own_table(self, true, &bz, &lz) ||
	    !own_table(self, false, &bp, &lp)) {
		symi_zrec_sym_shift = keep;
		CHECK(!"this program's table, both ways");
		goto out;
	}
	symi_zrec_sym_shift = keep;
	h = bz;
	CHECK(h->zrec[SYMT_R_SYMS] && h->zrec[SYMT_R_SRANGES]);
	CHECK(((uint8_t *)bz)[h->syms.off + 1] == 4 &&
	      ((uint8_t *)bz)[h->sranges.off + 1] == 4 &&
	      ((uint8_t *)bz)[h->scopes.off + 1] == 0);
	CHECK_ERR(sym_table_open(bz, lz, &tz), 0);
	CHECK_ERR(sym_table_open(bp, lp, &tp), 0);
	if (!tz || !tp)
		goto out;
	CHECK(tz->syms.lz && tz->sranges.lz && !tz->scopes.lz);
	CHECK(chunks_built(&tz->syms) == 0 &&
	      chunks_built(&tz->sranges) == 0);
	sym_table_stat(tz, &st);
	/* GNU's style: frames named from DWARF (this program's own C)
	 * need no symbol, and build no chunk; with the symbols read, a
	 * lookup builds a chunk of each array. */
	{
		uint64_t pick[16];
		size_t np = 0, got = 0;

		for (uint64_t x = st.start; x < st.end && np < 16; x += 0x40) {
			bool dw = sym_table_lookup(tp, x, b, SYM_MAX_FRAMES,
						   &nb) == 0 && nb;

			for (size_t j = 0; dw && j < nb; j++)
				dw = b[j].name && !(b[j].flags &
						    (SYM_FRAME_SYMTAB |
						     SYM_FRAME_NO_LINKAGE));
			if (dw)
				pick[np++] = x;
		}
		CHECK(np == 16);
		CHECK_ERR(sym_table_lookup_batch_omit(tz, pick, np,
						      SYM_OMIT_SYMBOLS,
						      count_frames, &got), 0);
		CHECK(got >= np && chunks_built(&tz->syms) == 0 &&
		      chunks_built(&tz->sranges) == 0);
		CHECK_ERR(sym_table_lookup(tz, pick[0], a, SYM_MAX_FRAMES,
					   &na), 0);
		CHECK(chunks_built(&tz->syms) >= 1 &&
		      chunks_built(&tz->sranges) == 1);
	}
	for (size_t i = 0; i < NADDR; i++)
		bad += lookup_diff(tz, tp, rand_addr(&seed, &st), &frames);
	CHECK(bad == 0 && frames > NADDR / 2);
	/* Sorted, in one batch: each range's successor tried in its chunk,
	 * then a search by the chunks' first keys. */
	{
		enum { NB = 4000 };
		uint64_t *sorted = malloc(NB * sizeof(*sorted));

		if (sorted) {
			for (size_t i = 0; i < NB; i++)
				sorted[i] = st.start + (st.end - st.start) / NB * i +
					    (i * 7) % 16;
			CHECK(batch_diff(tz, tp, sorted, NB) == 0);
		}
		free(sorted);
	}
	built = chunks_built(&tz->sranges);
	printf("# symbol ranges: %d of %u chunks built\n", built,
	       tz->sranges.lz->nframes);
	CHECK(built > 0);
	CHECK_ERR(sym_table_verify(tz), 0);
	CHECK(chunks_built(&tz->syms) == (int)tz->syms.lz->nframes &&
	      chunks_built(&tz->sranges) == (int)tz->sranges.lz->nframes);

	copy = malloc(lz);
	if (!copy)
		goto out;
	/* A bad frame in the symbol ranges' chunk 1: its ranges have no
	 * symbol, the others' answer as before; verify fails. */
	memcpy(copy, bz, lz);
	h = (struct symt_header *)copy;
	{
		const uint8_t *ar = (const uint8_t *)copy + h->sranges.off;
		uint32_t n = (h->sranges.count + 15) >> 4, fa, fb, lo, hi;

		memcpy(&fa, ar + 8 + 4, 4);
		memcpy(&fb, ar + 8 + 8, 4);
		fa = le32toh(fa);
		fb = le32toh(fb);
		memcpy(&lo, ar + 8 + 4 * ((size_t)n + 1) + 4, 4);
		memcpy(&hi, ar + 8 + 4 * ((size_t)n + 1) + 8, 4);
		lo = le32toh(lo);
		hi = le32toh(hi);
		/* The frame's header kept: its declared size is checked at
		 * open, its blocks only when the chunk is built. */
		CHECK(fb - fa > 24);
		memset(copy + h->sranges.off + fa + 12, 0x5a, fb - fa - 12);
		h->crc = symi_table_crc(copy, h->size);
		CHECK_ERR(sym_table_open(copy, lz, &tc), 0);
		if (tc) {
			bad = 0;
			for (uint64_t x = lo; x < hi; x += 4) {
				if (sym_table_lookup(tp, h->base + x, b,
						     SYM_MAX_FRAMES, &nb) ||
				    !nb || !b[nb - 1].symbol ||
				    sym_table_lookup(tc, h->base + x, a,
						     SYM_MAX_FRAMES, &na))
					continue;
				if (na && (a[na - 1].symbol ||
					   a[na - 1].llvm_symbol ||
					   a[na - 1].gnu_symbol))
					bad++;
				else
					absent++;
			}
			printf("# bad chunk: %zu with a symbol, %zu without\n", bad, absent);
			CHECK(bad == 0 && absent > 0);
			bad = 0;
			for (size_t i = 0; i < 2000; i++) {
				uint64_t addr = rand_addr(&seed, &st);

				if (addr - h->base < lo || addr - h->base >= hi)
					bad += lookup_diff(tc, tp, addr,
							   &frames);
			}
			CHECK(bad == 0);
			CHECK_ERR(sym_table_verify(tc), -SYM_E_BADTABLE);
		}
		sym_table_close(tc);
		tc = NULL;
	}
	/* A first key that disagrees with its chunk's records. */
	memcpy(copy, bz, lz);
	{
		uint8_t *ar = (uint8_t *)copy + h->sranges.off;
		uint32_t n = (h->sranges.count + 15) >> 4;

		ar[8 + 4 * ((size_t)n + 1) + 8] ^= 1;
		h->crc = symi_table_crc(copy, h->size);
		CHECK_ERR(sym_table_open(copy, lz, &tc), 0);
		if (tc)
			CHECK_ERR(sym_table_verify(tc), -SYM_E_BADTABLE);
		sym_table_close(tc);
		tc = NULL;
	}
out:
	sym_table_close(tz);
	sym_table_close(tp);
	free(copy);
	free(bz);
	free(bp);
}

/* Values through symi_cols_pack() and back, as records and as arrays;
 * a value past its width fails, so does a frame of another size. */
static uint32_t cols_src(const void *src, uint32_t i, unsigned f)
{
	const uint32_t *v = src;

	return v[(size_t)f * 1000 + i];
}

/* @v: the records of 1,000 values of widths 7, 20 and 32 at @rows. */
static void cols_view(struct symt_view *v, const uint8_t *rows)
{
	v->p = rows;
	v->n = 1000;
	v->stride = (7 + 20 + 32 + 7) / 8;
	v->mask[0] = 0x7f;
	v->mask[1] = 0xfffff;
	v->mask[2] = UINT32_MAX;
	v->at[1] = 0, v->sh[1] = 7;
	v->at[2] = 3, v->sh[2] = 3;
}

static void test_cols(void)
{
	static const uint8_t w[3] = { 7, 20, 32 }, narrow[3] = { 7, 19, 32 };
	uint32_t *v = malloc(3 * 1000 * sizeof(*v));
	uint8_t *area = NULL, *rows = NULL;
	size_t zlen = 0, bad = 0, rb = symi_cols_out_bytes(SYMI_COLS_ROWS,
							   1000, 3, w);
	struct symt_view view = { 0 };

	if (!v)
		return;
	for (uint32_t i = 0; i < 1000; i++) {
		v[i] = i % 128;			/* 7 bits */
		v[1000 + i] = 1000 * i;		/* climbing: differences */
		v[2000 + i] = i * 2654435761u;	/* all 32 bits */
	}
	CHECK_ERR(symi_cols_pack(1000, 3, w, cols_src, v, 9, 0, &area, &zlen),
		  0);
	CHECK(area && (area[0] & 2));	/* field 1 as differences */
	rows = calloc(1, rb > 4 * 3 * 1000 + 8 ? rb : 4 * 3 * 1000 + 8);
	if (area && rows) {
		CHECK_ERR(symi_cols_unpack(area, (uint32_t)zlen, 1000, 3, w,
					   SYMI_COLS_ROWS, rows), 0);
		cols_view(&view, rows);
		for (uint32_t i = 0; i < 1000; i++)
			for (unsigned f = 0; f < 3; f++)
				bad += symt_get(&view, i, f) !=
				       v[(size_t)f * 1000 + i];
		CHECK(bad == 0);
		memset(rows, 0, 4 * 3 * 1000);
		CHECK_ERR(symi_cols_unpack(area, (uint32_t)zlen, 1000, 3, w,
					   SYMI_COLS_U32, rows), 0);
		CHECK(memcmp(rows, v, 4 * 3 * 1000) == 0);
		/* Field 1 read as 19 bits: its values do not fit. */
		CHECK_ERR(symi_cols_unpack(area, (uint32_t)zlen, 1000, 3,
					   narrow, SYMI_COLS_U32, rows),
			  -SYM_E_BADTABLE);
		/* Another count: the frame holds other bytes. */
		CHECK_ERR(symi_cols_unpack(area, (uint32_t)zlen, 999, 3, w,
					   SYMI_COLS_U32, rows),
			  -SYM_E_BADTABLE);
	}
	free(rows);
	free(area);
	free(v);
}

/*
 * The same values in chunks of 2^8 (format 10): four frames, field 0's
 * first value of each in the index; each chunk builds its own records and
 * no byte of another's; the whole area builds as one; a bad frame fails
 * its chunk only, an index out of order or past the area the check.
 */
static void test_cols_chunks(void)
{
	static const uint8_t w[3] = { 7, 20, 32 };
	uint32_t *v = malloc(3 * 1000 * sizeof(*v));
	size_t zlen = 0, bad = 0, rb = symi_cols_out_bytes(SYMI_COLS_ROWS,
							   1000, 3, w);
	uint8_t *area = NULL, *rows = calloc(1, rb), *copy = NULL;
	struct symt_view view = { 0 };
	unsigned shift = 0;
	uint32_t n = 0;

	if (!v || !rows)
		goto out;
	for (uint32_t i = 0; i < 1000; i++) {
		v[i] = (i * 7) % 128;
		v[1000 + i] = 1000 * i;
		v[2000 + i] = i * 2654435761u;
	}
	CHECK_ERR(symi_cols_pack(1000, 3, w, cols_src, v, 9, 8, &area, &zlen),
		  0);
	if (!area)
		goto out;
	CHECK(area[1] == 8 && (area[0] & 2));
	CHECK_ERR(symi_cols_chunks(area, (uint32_t)zlen, 1000, 3, w, &shift,
				   &n), 0);
	CHECK(shift == 8 && n == 4);
	for (uint32_t k = 0; k < n; k++)
		CHECK(symi_cols_first(area, n, k) == v[k << 8]);
	cols_view(&view, rows);
	/* Chunk 2 alone: records 512-767, and nothing else written. */
	CHECK_ERR(symi_cols_unpack_chunk(area, 1000, 3, w, shift, n, 2, rows),
		  0);
	for (uint32_t i = 0; i < 1000; i++)
		for (unsigned f = 0; f < 3; f++)
			bad += symt_get(&view, i, f) !=
			       (i >> 8 == 2 ? v[(size_t)f * 1000 + i] : 0);
	CHECK(bad == 0);
	memset(rows, 0, rb);
	CHECK_ERR(symi_cols_unpack(area, (uint32_t)zlen, 1000, 3, w,
				   SYMI_COLS_ROWS, rows), 0);
	for (uint32_t i = 0; i < 1000; i++)
		for (unsigned f = 0; f < 3; f++)
			bad += symt_get(&view, i, f) != v[(size_t)f * 1000 + i];
	CHECK(bad == 0);
	/* Only rows are built in chunks. */
	CHECK_ERR(symi_cols_unpack(area, (uint32_t)zlen, 1000, 3, w,
				   SYMI_COLS_U32, rows), -SYM_E_BADTABLE);
	copy = malloc(zlen);
	if (!copy)
		goto out;
	{
		uint32_t a, b;

		memcpy(&a, area + 8 + 4, 4);	/* chunk 1's frame */
		memcpy(&b, area + 8 + 8, 4);
		a = le32toh(a);
		b = le32toh(b);
		memcpy(copy, area, zlen);
		copy[(a + b) / 2] ^= 0x55;
		memset(rows, 0, rb);
		CHECK(symi_cols_unpack_chunk(copy, 1000, 3, w, shift, n, 1,
					     rows) != 0);
		CHECK_ERR(symi_cols_unpack_chunk(copy, 1000, 3, w, shift, n,
						 3, rows), 0);
		memcpy(copy, area, zlen);
		memcpy(copy + 8 + 8, &a, 4);	/* chunk 1 empty: 2 reads
						 * 1's frame */
		CHECK_ERR(symi_cols_chunks(copy, (uint32_t)zlen, 1000, 3, w,
					   &shift, &n), -SYM_E_BADTABLE);
		memcpy(copy, area, zlen);
		copy[8 + 16] ^= 1;	/* the last offset: not the area's end */
		CHECK_ERR(symi_cols_chunks(copy, (uint32_t)zlen, 1000, 3, w,
					   &shift, &n), -SYM_E_BADTABLE);
		memcpy(copy, area, zlen);
		copy[1] = 1;	/* a shift below the least */
		CHECK_ERR(symi_cols_chunks(copy, (uint32_t)zlen, 1000, 3, w,
					   &shift, &n), -SYM_E_BADTABLE);
		copy[1] = 10;	/* one chunk: the index is not its layout */
		CHECK_ERR(symi_cols_chunks(copy, (uint32_t)zlen, 1000, 3, w,
					   &shift, &n), -SYM_E_BADTABLE);
		CHECK_ERR(symi_cols_chunks(area, (uint32_t)zlen, 1001, 3, w,
					   &shift, &n), -SYM_E_BADTABLE);
	}
out:
	free(copy);
	free(rows);
	free(area);
	free(v);
}

static void test_corrupt(void)
{
	struct symi_builder *b = NULL;
	struct sym_table *t = NULL;
	struct symt_header *h;
	char *copy;
	void *buf = NULL;
	size_t len = 0;

	CHECK_ERR(symi_builder_new(&b), 0);
	symi_builder_add_symbol(b, 0x1000, 4, "f", NULL, SYMI_SYM_GLOBAL);
	symi_builder_add_symbol(b, 0x2000, 4, "g", NULL, SYMI_SYM_GLOBAL);
	CHECK_ERR(symi_builder_finish(b, &buf, &len), 0);
	symi_builder_free(b);
	if (!buf)
		return;
	copy = malloc(len + 8);
	memcpy(copy, buf, len);
	h = (struct symt_header *)copy;
	CHECK_ERR(sym_table_open(copy, len - 1, &t), -SYM_E_BADTABLE);
	CHECK(t == NULL);
	CHECK_ERR(sym_table_open(copy, 10, &t), -SYM_E_BADTABLE);
	CHECK_ERR(sym_table_open(NULL, len, &t), -EINVAL);
	memmove(copy + 1, copy, len);
	CHECK_ERR(sym_table_open(copy + 1, len, &t), -EINVAL);
	memmove(copy, copy + 1, len);
	h->format++;
	CHECK_ERR(sym_table_open(copy, len, &t), -SYM_E_BADTABLE);
	h->format--;
	h->syms.off = (uint32_t)len;
	CHECK_ERR(sym_table_open(copy, len, &t), -SYM_E_BADTABLE);
	memcpy(copy, buf, len);
	h->syms.w[SYMT_SY_NAME] = SYMT_BMAX + 1;
	CHECK_ERR(sym_table_open(copy, len, &t), -SYM_E_BADTABLE);
	memcpy(copy, buf, len);
	h->syms.bytes = 7;	/* no room for the padding */
	CHECK_ERR(sym_table_open(copy, len, &t), -SYM_E_BADTABLE);
	memcpy(copy, buf, len);
	copy[h->off_strings + h->strings_size - 1] = 'x';
	CHECK_ERR(sym_table_open(copy, len, &t), -SYM_E_BADTABLE);
	memcpy(copy, buf, len);
	CHECK_ERR(sym_table_open(copy, len, &t), 0);
	CHECK_ERR(sym_table_verify(t), 0);
	sym_table_close(t);
	sym_table_close(NULL);

	/* A flipped byte opens (O(1) checks) but fails verification. */
	copy[h->off_strings + 1] ^= 0x20;
	CHECK_ERR(sym_table_open(copy, len, &t), 0);
	CHECK_ERR(sym_table_verify(t), -SYM_E_BADTABLE);
	sym_table_close(t);
	/* With a valid checksum, a bad index is still caught. */
	memcpy(copy, buf, len);
	{
		const struct symt_packed *a = &h->sranges;
		unsigned at = a->w[SYMT_SR_ADDR], w = a->w[SYMT_SR_SYM];

		/* The first symbol range's symbol code all ones: codes 1
		 * and 2 take 2 bits, and 3 is past the 2 symbols. */
		CHECK(w == 2 && h->syms.count == 2);
		symt_put((uint8_t *)copy + a->off, at, w, 3);
	}
	h->crc = symi_table_crc(copy, len);
	CHECK_ERR(sym_table_open(copy, len, &t), 0);
	CHECK_ERR(sym_table_verify(t), -SYM_E_BADTABLE);
	sym_table_close(t);
	CHECK_ERR(sym_table_verify(NULL), -EINVAL);
	free(copy);
	free(buf);
}

/*
 * Format 3 specifics (pack.c): many blocks, lines below their function's
 * declaration and files other than its declaration file, holes, a scope
 * no range reaches, strings that are another's tail; the lookups must
 * say exactly what was put in, whole and cut into parts, and the decoded
 * table (symi_table_unpack()) packed again must be the same bytes.
 */
static void test_pack(void)
{
	enum { NF = 40, PER = 5 };
	struct symi_builder *b = NULL;
	struct sym_frame fr[SYM_MAX_FRAMES];
	struct sym_table *t, **parts = NULL;
	struct sym_table_stat st;
	struct symi_tab u;
	uint32_t fdecl, fother, fn[NF], sc[NF], dead, fbar, ffoobar;
	void *buf = NULL, *again = NULL;
	const void *bytes;
	size_t len, len2, np = 0, bad = 0;
	char name[32];

	CHECK_ERR(symi_builder_new(&b), 0);
	symi_builder_add_text(b, 0x10000, 0x40000);
	fdecl = symi_builder_file(b, "/src/decl.c", 0);
	fother = symi_builder_file(b, "/usr/include/other.h", 0);
	/* NF functions of PER rows each, every second one in another file
	 * than its declaration, lines from 1000 down (below decl_line
	 * 2000), columns and discriminators varying; gaps between them are
	 * holes. */
	for (int i = 0; i < NF; i++) {
		uint64_t lo = 0x10000 + (uint64_t)i * 0x1000;

		snprintf(name, sizeof(name), "f%d", i);
		fn[i] = symi_builder_func(b, name, NULL, fdecl, 2000 + i);
		sc[i] = symi_builder_scope(b, SYMI_NONE, fn[i], SYMI_NONE, 0, 0,
					   lo, 0);
		CHECK_ERR(symi_builder_scope_range(b, sc[i], 0, lo,
						   lo + 0x10 * PER), 0);
		for (int r = 0; r < PER; r++)
			CHECK_ERR(symi_builder_line(b, lo + 0x10 * r,
						    lo + 0x10 * (r + 1),
						    (i + r) % 2 ? fother : fdecl,
						    1000 - i * 7 + r, r,
						    (uint32_t)(i % 3)), 0);
	}
	/* A scope no range reaches, and two names sharing a tail. */
	fbar = symi_builder_func(b, "bar", NULL, SYMI_NONE, 0);
	dead = symi_builder_scope(b, SYMI_NONE, fbar, SYMI_NONE, 0, 0, 0x30000,
				  0);
	ffoobar = symi_builder_func(b, "foo_bar", NULL, fdecl, 1);
	CHECK(dead != SYMI_NONE && ffoobar != SYMI_NONE);
	sc[0] = symi_builder_scope(b, SYMI_NONE, ffoobar, SYMI_NONE, 0, 0,
				   0x38000, 0);
	CHECK_ERR(symi_builder_scope_range(b, sc[0], 0, 0x38000, 0x38010), 0);
	CHECK_ERR(symi_builder_add_symbol(b, 0x39000, 0x10, "bar", NULL,
					  SYMI_SYM_GLOBAL | SYMI_SYM_FUNC), 0);
	symi_builder_set_dwarf(b);
	CHECK_ERR(symi_builder_finish(b, &buf, &len), 0);
	symi_builder_free(b);
	if (!buf)
		return;
	CHECK_ERR(sym_table_open(buf, len, &t), 0);
	if (!t) {
		free(buf);
		return;
	}
	CHECK_ERR(sym_table_verify(t), 0);
	sym_table_stat(t, &st);
	/* NF + 1 scopes reached (the dead one dropped), > 1 block. */
	CHECK(st.scopes == NF + 1 && st.ranges > 64 * 2);
	/* "bar" is stored once, inside "foo_bar". */
	CHECK(memmem(strs_of(t), t->str.n, "bar", 4) ==
	      memmem(strs_of(t), t->str.n, "foo_bar", 8) + 4);
	for (int i = 0; i < NF; i++) {
		uint64_t lo = 0x10000 + (uint64_t)i * 0x1000;

		snprintf(name, sizeof(name), "f%d", i);
		for (int r = 0; r < PER; r++) {
			size_t n = look(t, lo + 0x10 * r + 3, fr);

			if (n != 1 || !same(fr[0].name, name) ||
			    !same(fr[0].file, (i + r) % 2 ?
					      "/usr/include/other.h" :
					      "/src/decl.c") ||
			    fr[0].line != (uint32_t)(1000 - i * 7 + r) ||
			    fr[0].column != (uint32_t)r ||
			    fr[0].discriminator != (uint32_t)(i % 3) ||
			    fr[0].decl_line != (uint32_t)(2000 + i) ||
			    fr[0].entry != lo)
				bad++;
		}
		if (look(t, lo + 0x10 * PER, fr) != 0)	/* a hole */
			bad++;
	}
	CHECK(bad == 0);
	CHECK(look(t, 0x38004, fr) == 1 && same(fr[0].name, "foo_bar"));
	CHECK(look(t, 0x39004, fr) == 1 && same(fr[0].name, "bar") &&
	      (fr[0].flags & SYM_FRAME_SYMTAB));

	/* Decoded and packed again: the same bytes. */
	CHECK_ERR(symi_table_unpack(t, &u), 0);
	CHECK_ERR(symi_table_pack(&u, &again, &len2), 0);
	sym_table_data(t, &bytes, &len);
	CHECK(again && len2 == len && memcmp(again, bytes, len) == 0);
	symi_tab_free(&u);
	free(again);

	/* Parts answer as the whole does. */
	CHECK_ERR(sym_table_split(t, len / 4, &parts, &np), 0);
	CHECK(np >= 3);
	for (size_t p = 0; p < np; p++) {
		struct sym_table_stat ps;

		CHECK_ERR(sym_table_verify(parts[p]), 0);
		sym_table_stat(parts[p], &ps);
		for (uint64_t a = ps.start; a < ps.end && a < 0x40000;
		     a += 0x8) {
			struct sym_frame g[SYM_MAX_FRAMES];
			size_t n1 = look(t, a, fr), n2 = look(parts[p], a, g);

			if (n1 != n2 || (n1 && (!same(fr[0].name, g[0].name) ||
						fr[0].line != g[0].line ||
						fr[0].column != g[0].column ||
						fr[0].entry != g[0].entry)))
				bad++;
		}
		sym_table_close(parts[p]);
	}
	free(parts);
	CHECK(bad == 0);
	sym_table_close(t);
	free(buf);
}

/* @copy = the table @buf[@len] with a byte of frame 1 of the compressed
 * area at @off flipped, its CRC made right again. */
static void zarea_flip(char *copy, const void *buf, size_t len, uint32_t off)
{
	struct symt_header *ch = (struct symt_header *)copy;
	uint32_t z1;

	memcpy(copy, buf, len);
	memcpy(&z1, copy + off + 4, 4);
	copy[off + z1 + 8] ^= 0x55;
	ch->crc = symi_table_crc(copy, ch->size);
}

/* @copy = @buf[@len] with entry @i of the frame index of the compressed
 * area at @off (@zbytes long) pointing past its end. */
static void zarea_bad_index(char *copy, const void *buf, size_t len,
			    uint32_t off, uint32_t zbytes, unsigned i)
{
	uint32_t big = zbytes + 1;

	memcpy(copy, buf, len);
	memcpy(copy + off + 4 * (size_t)i, &big, 4);
}

/*
 * The strings stored as zstd frames (format 8): read a frame at a time,
 * read as plain once whole (half the frames read inflates the rest),
 * whole at the open of a table whose blob an earlier open made whole,
 * and a frame that does not inflate: "" and a failed verify.
 */
enum { SZ_N = 6000 };

static uint64_t sz_addr(int i)
{
	return 0x400000 + (uint64_t)i * 0x20;
}

static const char *sz_name(int i, char *out, size_t n)
{
	snprintf(out, n, "a_function_with_a_rather_long_name_%05d", i);
	return out;
}

/* What names_check() compares: each function's address and expected
 * name, and whether that is its demangled name or its name. */
struct names_case {
	uint64_t (*addr)(int i);
	const char *(*want)(int i, char *out, size_t n);
	bool demangled;
	int last;		/* the functions are 0 to last */
};

/* Lookups of functions @from, @from + @step, ... of @c: how many names
 * differ. */
static size_t names_check(const struct sym_table *t,
			  const struct names_case *c, int from, int step)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	size_t bad = 0, n;
	char buf[96];

	for (int i = from; i <= c->last; i += step) {
		const char *want = c->want(i, buf, sizeof(buf));

		if (sym_table_lookup(t, c->addr(i) + 4, fr, SYM_MAX_FRAMES,
				     &n) != 0 || n != 1 ||
		    !same(c->demangled ? fr[0].demangled : fr[0].name, want))
			bad++;
	}
	return bad;
}

static const struct names_case sz_case = { sz_addr, sz_name, false,
					   SZ_N - 1 };

static size_t sz_check(const struct sym_table *t, int from, int step)
{
	return names_check(t, &sz_case, from, step);
}

/* The table of SZ_N functions with long names, opened (NULL on
 * failure, already reported); its bytes in *@buf and a buffer as long in
 * *@copy, both the caller's. */
static struct sym_table *sz_table(void **buf, size_t *len, char **copy)
{
	struct symi_builder *b = NULL;
	size_t nbad = 0;
	char name[64];

	*buf = NULL;
	*copy = NULL;
	CHECK_ERR(symi_builder_new(&b), 0);
	if (!b)
		return NULL;
	symi_builder_add_text(b, 0x400000, 0x500000);
	for (int i = 0; i < SZ_N; i++) {
		uint32_t f = symi_builder_func(b, sz_name(i, name,
							  sizeof(name)),
					       NULL, SYMI_NONE, 0);
		uint32_t sc = symi_builder_scope(b, SYMI_NONE, f, SYMI_NONE,
						 0, 0, sz_addr(i), 0);

		if (symi_builder_scope_range(b, sc, 0, sz_addr(i),
					     sz_addr(i) + 0x10) != 0)
			nbad++;
	}
	CHECK(nbad == 0);
	symi_builder_set_dwarf(b);
	return finish_with_copy(b, buf, len, copy);
}

static void test_strings_z(void)
{
	struct sym_table *t = NULL, *t2 = NULL, *tc = NULL;
	const struct symt_header *h;
	void *buf = NULL;
	char *copy = NULL;
	size_t len;

	t = sz_table(&buf, &len, &copy);
	if (!t)
		goto out;
	h = t->h;
	/* 240 KB of names: compressed, in 4 frames, none read yet. */
	CHECK(h->strings_zbytes > 0 && h->strings_zbytes < h->strings_size &&
	      t->str.z && t->str.z->nframes >= 3 && !t->str.plain);
	printf("# strings: %u bytes in %u frames, %u compressed\n",
	       h->strings_size, t->str.z ? t->str.z->nframes : 0,
	       h->strings_zbytes);
	if (!t->str.z)
		goto out;
	/* One lookup inflates one frame, and the table reads through the
	 * frames still. */
	CHECK(sz_check(t, 0, SZ_N) == 0);
	CHECK(t->str.z->nready == 1 && !t->str.plain);
	/* Every name right; the blob whole, the table reading it plain. */
	CHECK(sz_check(t, 0, 1) == 0);
	CHECK(t->str.z->nready == t->str.z->nframes &&
	      t->str.plain == t->str.z->blob);
	/* The next open of the same bytes finds it whole. */
	CHECK_ERR(sym_table_open(buf, len, &t2), 0);
	CHECK(t2 && t2->str.z == t->str.z && t2->str.plain == t->str.z->blob);
	CHECK(t2 && sz_check(t2, 1, 7) == 0);
	CHECK_ERR(sym_table_verify(t), 0);

	/* A frame that does not inflate (its CRC made right again). */
	zarea_flip(copy, buf, len, h->off_strings);
	CHECK_ERR(sym_table_open(copy, len, &tc), 0);
	if (tc) {
		size_t bad = sz_check(tc, 0, 1);

		CHECK(bad > 0 && bad < SZ_N / 2);
		CHECK_ERR(sym_table_verify(tc), -SYM_E_BADTABLE);
		sym_table_close(tc);
		tc = NULL;
	}
	/* A frame index pointing outside the area: refused on open. */
	zarea_bad_index(copy, buf, len, h->off_strings, h->strings_zbytes, 2);
	CHECK_ERR(sym_table_open(copy, len, &tc), -SYM_E_BADTABLE);
	/* Sizes that do not fit the area or the frame size. */
	memcpy(copy, buf, len);
	((struct symt_header *)copy)->strings_shift = 11;
	CHECK_ERR(sym_table_open(copy, len, &tc), -SYM_E_BADTABLE);
	memcpy(copy, buf, len);
	((struct symt_header *)copy)->strings_zbytes = (uint32_t)len;
	CHECK_ERR(sym_table_open(copy, len, &tc), -SYM_E_BADTABLE);
out:
	sym_table_close(tc);
	sym_table_close(t2);
	sym_table_close(t);
	free(copy);
	free(buf);
}

/*
 * Demangled names stored as zstd frames (format 7): more than a frame of
 * them, one longer than a frame (it goes on into the next), shared by
 * every open of the same bytes, inflated by threads at once, and a frame
 * that does not inflate: "" and a failed verify, never a crash.
 */
enum { DZ_N = 3000 };

/* A mangled name whose demangled form is over 100 KB, longer than a
 * frame: f(A, void (*)(A, A), ...) with A 900 letters and each parameter
 * a pointer to a function of two of the one before (libiberty demangles
 * no mangled name of more than about 1 KB). */
static char dz_long[1024];
static char *dz_long_dem;

static void dz_long_make(void)
{
	int k = snprintf(dz_long, sizeof(dz_long), "_Z1f900");

	memset(dz_long + k, 'a', 900);
	k += 900;
	for (int l = 0, last = -1; l < 6; l++, last = 2 * l - 1) {
		char sub[16];

		if (last < 0)
			snprintf(sub, sizeof(sub), "S_");
		else
			snprintf(sub, sizeof(sub), "S%d_", last);
		k += snprintf(dz_long + k, sizeof(dz_long) - (size_t)k,
			      "PFv%s%sE", sub, sub);
	}
	dz_long_dem = symi_demangle(dz_long);
}

static uint64_t dz_addr(int i)
{
	return 0x100000 + (uint64_t)i * 0x20;
}

static const char *dz_expect(int i, char *out, size_t n)
{
	if (i == DZ_N)
		return dz_long_dem;
	snprintf(out, n, "namespace_with_a_rather_long_name::f%05d(int)", i);
	return out;
}

/* Lookups of every function: how many demangled names differ. */
static size_t dz_check(const struct sym_table *t, int from, int step)
{
	static const struct names_case c = { dz_addr, dz_expect, true, DZ_N };

	return names_check(t, &c, from, step);
}

struct dz_job {
	const struct sym_table *t;
	int from;
	size_t bad;
};

static void *dz_thread(void *arg)
{
	struct dz_job *j = arg;

	j->bad = dz_check(j->t, j->from, 4);
	return NULL;
}

/*
 * Strings past symi_zstr_plain_from are stored plain (a batch of many
 * addresses would inflate them all, in every process), and answer the
 * same; the demangled names stay compressed whatever their size.
 */
static void test_strings_plain(void)
{
	size_t keep = symi_zstr_plain_from, len = 0;
	struct sym_table *t;
	void *buf = NULL;
	char *copy = NULL;

	symi_zstr_plain_from = 100000;	/* the table's are 240 KB */
	t = sz_table(&buf, &len, &copy);
	symi_zstr_plain_from = keep;
	if (t) {
		CHECK(t->h->strings_zbytes == 0 && !t->str.z && t->str.plain);
		CHECK(t->h->strings_size > 100000);
		CHECK(sz_check(t, 0, 1) == 0);
		CHECK_ERR(sym_table_verify(t), 0);
	}
	sym_table_close(t);
	free(copy);
	free(buf);
}

static void test_dstrings(void)
{
	struct symi_builder *b = NULL;
	struct sym_table *t = NULL, *t2 = NULL, *t3 = NULL, *tc = NULL;
	const struct symt_header *h;
	struct dz_job jobs[4];
	pthread_t th[4];
	struct symi_tab u;
	void *buf = NULL, *again = NULL;
	char *copy = NULL;
	size_t len, len2, nbad = 0, zstr_plain_from = symi_zstr_plain_from;
	uint32_t f, sc;

	dz_long_make();
	CHECK(dz_long_dem && strlen(dz_long_dem) > 100000);
	if (!dz_long_dem)
		return;
	CHECK_ERR(symi_builder_new(&b), 0);
	symi_builder_add_text(b, 0x100000, 0x200000);
	for (int i = 0; i <= DZ_N; i++) {
		char mangled[96];

		snprintf(mangled, sizeof(mangled),
			 "_ZN33namespace_with_a_rather_long_name6f%05dEi", i);
		f = symi_builder_func(b, i == DZ_N ? "f" : mangled + 38,
				      i == DZ_N ? dz_long : mangled, SYMI_NONE,
				      0);
		sc = symi_builder_scope(b, SYMI_NONE, f, SYMI_NONE, 0, 0,
					dz_addr(i), 0);
		if (symi_builder_scope_range(b, sc, 0, dz_addr(i),
					     dz_addr(i) + 0x10) != 0)
			nbad++;
	}
	CHECK(nbad == 0);
	symi_builder_set_dwarf(b);
	/* The demangled names are compressed past the bound of the
	 * strings too (test_strings_plain()); the bound stays for the
	 * packing again below. */
	symi_zstr_plain_from = 1;
	CHECK_ERR(symi_builder_finish(b, &buf, &len), 0);
	symi_builder_free(b);
	if (!buf)
		goto out;
	CHECK_ERR(sym_table_open(buf, len, &t), 0);
	CHECK_ERR(sym_table_open(buf, len, &t2), 0);
	copy = malloc(len);
	if (!t || !t2 || !copy)
		goto out;
	h = t->h;
	/* Over 200 KB of names: compressed, in several frames. */
	CHECK(h->dstrings_zbytes > 0 && h->dstrings_zbytes < h->dstrings_size &&
	      t->dstr.z && t->dstr.z->nframes >= 3);
	printf("# demangled names: %u bytes in %u frames, %u compressed\n",
		 h->dstrings_size, t->dstr.z ? t->dstr.z->nframes : 0,
		 h->dstrings_zbytes);
	/* Threads inflate the frames of a fresh blob at once. */
	for (int k = 0; k < 4; k++) {
		jobs[k] = (struct dz_job){ .t = k % 2 ? t2 : t, .from = k };
		CHECK(pthread_create(&th[k], NULL, dz_thread, &jobs[k]) == 0);
	}
	for (int k = 0; k < 4; k++) {
		pthread_join(th[k], NULL);
		CHECK(jobs[k].bad == 0);
	}
	/* One blob for every open of the same bytes, wherever they lie. */
	memcpy(copy, buf, len);
	CHECK_ERR(sym_table_open(copy, len, &t3), 0);
	CHECK(t3 && t->dstr.z == t2->dstr.z && t->dstr.z == t3->dstr.z);
	CHECK(t3 && dz_check(t3, 0, 1) == 0);
	CHECK_ERR(sym_table_verify(t), 0);
	/* Decoded and packed again: the same bytes. */
	CHECK_ERR(symi_table_unpack(t, &u), 0);
	CHECK_ERR(symi_table_pack(&u, &again, &len2), 0);
	CHECK(again && len2 == len && memcmp(again, buf, len) == 0);
	symi_tab_free(&u);

	/* A frame that does not inflate (its CRC made right again): its
	 * names read "", the others still answer, verify says so. */
	zarea_flip(copy, buf, len, h->off_dstrings);
	CHECK_ERR(sym_table_open(copy, len, &tc), 0);
	if (tc) {
		struct sym_frame fr[SYM_MAX_FRAMES];
		size_t n = 0, bad;

		/* No memory for the blob: "" now, no verdict, and the
		 * frame is tried again by the next reader. */
		symi_test_fail_alloc(1);
		CHECK(sym_table_lookup(tc, dz_addr(1) + 4, fr, SYM_MAX_FRAMES,
				       &n) == 0 && n == 1 &&
		      same(fr[0].demangled, ""));
		symi_test_fail_alloc(1);
		CHECK_ERR(sym_table_verify(tc), -ENOMEM);
		symi_test_fail_alloc(0);
		bad = dz_check(tc, 0, 1);

		CHECK(bad > 0 && bad < DZ_N / 2);
		CHECK(sym_table_lookup(tc, dz_addr(DZ_N / 2) + 4, fr,
				       SYM_MAX_FRAMES, &n) == 0 && n == 1 &&
		      fr[0].demangled);
		CHECK_ERR(sym_table_verify(tc), -SYM_E_BADTABLE);
		sym_table_close(tc);
		tc = NULL;
	}
	/* A frame index pointing outside the area: refused on open. */
	zarea_bad_index(copy, buf, len, h->off_dstrings, h->dstrings_zbytes, 1);
	CHECK_ERR(sym_table_open(copy, len, &tc), -SYM_E_BADTABLE);
	/* A blob that claims to inflate to 80 MiB out of 3 KB, its index
	 * made to fit (1 MiB frames, all empty): over the bound, refused;
	 * at 60 MiB (under 64 MiB, allowed whatever the ratio) it opens,
	 * its names read "", and verify fails. */
	for (int k = 0; k < 2; k++) {
		struct symt_header *ch = (struct symt_header *)copy;
		uint32_t nf = k ? 60 : 80, o;

		memcpy(copy, buf, len);
		ch->dstrings_shift = 20;
		ch->dstrings_size = nf << 20;
		for (uint32_t i = 0; i <= nf; i++) {
			o = i ? ch->dstrings_zbytes : 4 * (nf + 1);
			memcpy(copy + ch->off_dstrings + 4 * i, &o, 4);
		}
		ch->crc = symi_table_crc(copy, ch->size);
		CHECK_ERR(sym_table_open(copy, len, &tc),
			  k ? 0 : -SYM_E_BADTABLE);
		if (tc) {
			struct sym_frame fr[SYM_MAX_FRAMES];
			size_t n = 0;

			CHECK(sym_table_lookup(tc, dz_addr(7) + 4, fr,
					       SYM_MAX_FRAMES, &n) == 0 &&
			      n == 1 && same(fr[0].demangled, ""));
			CHECK_ERR(sym_table_verify(tc), -SYM_E_BADTABLE);
			sym_table_close(tc);
			tc = NULL;
		}
	}
out:
	sym_table_close(tc);
	sym_table_close(t3);
	sym_table_close(t2);
	sym_table_close(t);
	free(again);
	free(copy);
	free(buf);
	free(dz_long_dem);
	dz_long_dem = NULL;
	symi_zstr_plain_from = zstr_plain_from;
}

static void test_errors(void)
{
	char buf[64];
	struct sym_module *m = NULL;

	CHECK(same(sym_strerror(-SYM_E_NOTELF, buf, sizeof(buf)),
		   "not an ELF file"));
	CHECK(same(sym_strerror(-ENOENT, buf, sizeof(buf)),
		   "No such file or directory"));
	CHECK(same(sym_strerror(0, buf, sizeof(buf)), "success"));
	CHECK(strncmp(sym_strerror(-99999, buf, sizeof(buf)), "unknown", 7) ==
	      0);
	sym_strerror(-SYM_E_BADDWARF, buf, 5);
	CHECK(strlen(buf) == 4);
	CHECK_ERR(sym_module_open("/nonexistent/x", NULL, &m), -ENOENT);
	CHECK(m == NULL);
	CHECK_ERR(sym_module_open(NULL, NULL, &m), -EINVAL);
	sym_module_close(NULL);
	CHECK(sym_demangle("main") == NULL);
	{
		char *d = sym_demangle("_ZN2ns3fooEv");

		CHECK(same(d, "ns::foo()"));
		free(d);
		d = sym_demangle("_RNvCs1234_7mycrate3foo");
		CHECK(same(d, "mycrate::foo"));
		free(d);
		d = sym_demangle("_ZN4core3fmt5write17h1234567890abcdefE");
		CHECK(same(d, "core::fmt::write"));
		free(d);
		d = sym_demangle("_D3foo3barFZv");
		CHECK(same(d, "foo.bar()"));
		free(d);
	}
}

/*
 * symi_table_header_flags() (sym_store_table_flags()): the header's flags
 * from any alignment, without opening the table; a header that is not
 * this format's, or cut short, is refused.
 */
static void test_header_flags(const char *self)
{
	struct sym_module *m = NULL;
	const struct sym_table *t;
	struct sym_table_stat ts;
	struct symt_header *h;
	const void *buf;
	size_t len;
	uint32_t fl = 1;
	char *b;

	if (sym_module_open(self, NULL, &m) || sym_module_table(m, &t)) {
		CHECK(!"this program's table");
		sym_module_close(m);
		return;
	}
	sym_table_data(t, &buf, &len);
	sym_table_stat(t, &ts);
	b = malloc(len + 1);
	if (!b) {
		CHECK(!"out of memory");
		sym_module_close(m);
		return;
	}
	memcpy(b + 1, buf, len);	/* unaligned, as a small LMDB value */
	CHECK_ERR(symi_table_header_flags(b + 1, len, &fl), 0);
	CHECK(fl == ts.flags && (fl & SYM_TABLE_DWARF));
	CHECK_ERR(symi_table_header_flags(b + 1, sizeof(*h) - 1, &fl),
		  -SYM_E_BADTABLE);
	CHECK(fl == 0);
	/* A header whose size says more than the buffer holds. */
	CHECK_ERR(symi_table_header_flags(b + 1, sizeof(*h), &fl),
		  len > sizeof(*h) ? -SYM_E_BADTABLE : 0);
	memcpy(b, buf, len);		/* aligned, to change fields */
	h = (struct symt_header *)(void *)b;
	h->format++;
	CHECK_ERR(symi_table_header_flags(b, len, &fl), -SYM_E_BADTABLE);
	h->format--;
	h->magic[0] ^= 1;
	CHECK_ERR(symi_table_header_flags(b, len, &fl), -SYM_E_BADTABLE);
	CHECK(fl == 0);
	h->magic[0] ^= 1;
	CHECK_ERR(symi_table_header_flags(b, len, &fl), 0);
	CHECK(fl == ts.flags);
	free(b);
	sym_module_close(m);
}

/*
 * The CRC of a big table in two halves: symi_crc32_combine() against
 * libdeflate's CRC of the whole, at lengths and cuts from 0 up (seeded
 * bytes); and symi_table_crc() of a buffer past the split size against
 * the CRC of it with the crc field taken as zero, in one pass.
 */
static void test_crc_split(void)
{
	const size_t at = offsetof(struct symt_header, crc);
	size_t big = (size_t)9 << 20, bad = 0, n = 0;
	unsigned char *b = malloc(big);
	uint32_t want[3];
	uint64_t x = 0x9e3779b97f4a7c15ull;

	if (!b) {
		CHECK(!"out of memory");
		return;
	}
	for (size_t i = 0; i < big; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (unsigned char)x;
	}
	for (size_t len = 0; len < 4200; len += len < 70 ? 1 : 97) {
		uint32_t whole = libdeflate_crc32(0, b, len);

		for (size_t cut = 0; cut <= len; cut += cut < 9 ? 1 : 61) {
			uint32_t a = libdeflate_crc32(0, b, cut);
			uint32_t c = libdeflate_crc32(0, b + cut, len - cut);

			n++;
			bad += symi_crc32_combine(a, c, len - cut) != whole;
		}
	}
	CHECK(n > 1000 && bad == 0);
	memset(b + at, 0, 4);
	want[0] = libdeflate_crc32(0, b, big);
	want[1] = libdeflate_crc32(0, b, big - 1);
	want[2] = libdeflate_crc32(0, b, 4096);
	memset(b + at, 0xa5, 4);	/* the field counts as zero */
	CHECK(symi_table_crc(b, big) == want[0]);	/* in two halves */
	CHECK(symi_table_crc(b, big - 1) == want[1]);
	CHECK(symi_table_crc(b, 4096) == want[2]);	/* in one */
	free(b);
}

int main(int argc, char **argv)
{
	(void)argc;
	test_chain();
	test_symbols();
	test_pack();
	test_strings_z();
	test_strings_plain();
	test_kinds();
	test_dstrings();
	test_batch_order();
	test_batch_module(argv[0]);
	/* The same with prefetching, which only big tables get. */
	symi_prefetch_min = 0;
	test_batch_module(argv[0]);
	test_fcache(argv[0]);
	test_omit_cxx();
	test_zrec(argv[0]);
	test_zrec_chunks(argv[0]);
	test_zrec_hot(argv[0]);
	test_cols();
	test_cols_chunks();
	test_corrupt();
	test_header_flags(argv[0]);
	test_crc_split();
	test_errors();
	return tap_done();
}
