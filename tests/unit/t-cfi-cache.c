/*
 * t-cfi-cache.c - libsymprof's step cache (tools/symprof/cficache.c) and
 * compiled steps (sp_cfi_compile(), sp_cfi_step_fast() in cfi.c), against
 * the row walk they replace (sp_cfi_find() and sp_cfi_step()):
 *
 * 1. Every FDE of Debian's own libc.so.6 and python3.11, at every pc of
 *    its first 48 bytes and every 3rd after (up to 4 KiB a function):
 *    the compiled step gives the same result, the same missing address
 *    and every register word the same as the row's step, from four
 *    frames (all registers known over a stack of pointers and noise;
 *    only the callee-saved ones, as alloc mode records; stack copies
 *    of 4 words and of none, so that reads fail).  A row left to the slow path has an
 *    expression or more rules than a compiled row holds.
 * 2. Stacks captured in this process inside libc (a qsort() comparator,
 *    and a signal handler run from raise() inside it: the trampoline's
 *    rows are expressions) unwound twice to their outermost frame, with
 *    the cache and without: every frame's registers the same.
 * 3. The cache: a hit gives the rows a miss gave; a map id names its
 *    object (python3.11's rules at an address where libc's were, as a
 *    dlclose and dlopen would leave it); an invalidation forgets every
 *    entry; whole rows evicted from their table are read again; its
 *    memory is fixed whatever is looked up.
 */
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "uwcapture.h"
#include "symprof/symprof.h"
#include "stackshot.h"
#include "base.h"

/* An ELF file mapped whole, its CFI as sp_cfi_find() reads it. */
struct img {
	const char *path;
	uint8_t *base;
	size_t size;
	struct sp_eh eh;
};

static const Elf64_Phdr *load_holding(const uint8_t *base, uint64_t off)
{
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff);

	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && off >= ph[i].p_offset &&
		    off - ph[i].p_offset < ph[i].p_filesz)
			return &ph[i];
	return NULL;
}

static bool img_open(const char *path, struct img *im)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph, *seg;
	struct stat st;
	uintptr_t frame;
	int fd = open(path, O_RDONLY);

	memset(im, 0, sizeof(*im));
	im->path = path;
	if (fd < 0 || fstat(fd, &st))
		goto fail;
	im->size = (size_t)st.st_size;
	im->base = mmap(NULL, im->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (im->base == MAP_FAILED)
		return false;
	eh = (const void *)im->base;
	ph = (const void *)(im->base + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME) {
			im->eh.hdr = (uintptr_t)im->base + ph[i].p_offset;
			im->eh.hdr_end = im->eh.hdr + ph[i].p_filesz;
		}
	if (!im->eh.hdr ||
	    sp_eh_frame_ptr(im->eh.hdr, im->eh.hdr_end, &frame))
		return false;
	seg = load_holding(im->base, frame - (uintptr_t)im->base);
	if (!seg)
		return false;
	im->eh.seg_lo = (uintptr_t)im->base + seg->p_offset;
	im->eh.seg_hi = im->eh.seg_lo + seg->p_filesz;
	return true;
fail:
	if (fd >= 0)
		close(fd);
	return false;
}

/* The pcs of .eh_frame_hdr's table (sdata4 pcrel pointer, udata4 count,
 * datarel sdata4 pairs: what every Debian object has). */
static size_t table(const struct img *im, const int32_t **tab)
{
	const uint8_t *h = (const uint8_t *)im->eh.hdr;
	uint32_t n;

	if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return 0;
	memcpy(&n, h + 8, 4);
	*tab = (const int32_t *)(h + 12);
	return n;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define NWORDS 1024
#define STACK_BASE 0x7ffd00000000ull
static uint64_t words[NWORDS];

/* Frame @state for a step from @pc over the copy: 0 every register
 * known, 1 only those alloc mode records, 2 over a copy of 4 words, 3
 * over an empty one. */
static void frame(int state, uint64_t pc, struct sp_regs *r,
		  struct sp_stack_copy *m)
{
	m->base = STACK_BASE;
	m->words = words;
	m->n = state == 2 ? 4 : state == 3 ? 0 : NWORDS;
	for (unsigned i = 0; i < SP_NREGS; i++)
		r->r[i] = STACK_BASE + 8 * (next() % (NWORDS + 16));
	r->r[SP_REG_RSP] = STACK_BASE + 8 * (next() % 64);
	r->r[SP_REG_RIP] = pc;
	r->known = state == 0 ? (1u << SP_NREGS) - 1
			      : (1u << 3 | 1u << SP_REG_RBP | 1u << SP_REG_RSP |
				 0xfu << 12 | 1u << SP_REG_RIP);
}

static bool same_regs(const struct sp_regs *a, const struct sp_regs *b)
{
	return a->known == b->known &&
	       memcmp(a->r, b->r, sizeof(a->r)) == 0;
}

/* Does row @c have to take the slow path? */
static bool needs_row(const struct sp_cfi *c)
{
	unsigned nval = 0;

	if (c->cfa.kind == SP_RULE_EXPR)
		return true;
	for (unsigned i = 0; i < SP_NREGS; i++) {
		uint8_t k = c->reg[i].kind;

		if (i == SP_REG_RSP)
			continue;
		if (k == SP_RULE_EXPR || k == SP_RULE_VAL_EXPR)
			return true;
		if (i != SP_REG_RIP && (k == SP_RULE_OFFSET ||
					k == SP_RULE_VAL_OFFSET ||
					k == SP_RULE_REG))
			nval++;
	}
	return nval > SP_FAST_MAX;
}

struct tally {
	size_t rows, steps, kinds[4], differ, full_unexplained;
};

/* Compare the two steps at @pc from the four frames. */
static void compare_at(const struct sp_cfi *c, uint64_t pc, struct tally *t)
{
	struct sp_cfi_fast f;

	sp_cfi_compile(c, &f);
	t->rows++;
	t->kinds[f.kind]++;
	if (f.kind == SP_FAST_FULL) {
		t->full_unexplained += !needs_row(c);
		return;
	}
	for (int state = 0; state < 4; state++) {
		struct sp_regs a, b;
		struct sp_stack_copy m;
		uint64_t na = 1, nb = 2;
		int ra, rb;

		frame(state, pc, &a, &m);
		b = a;
		ra = sp_cfi_step(c, &m, &a, &na);
		rb = sp_cfi_step_fast(&f, &m, &b, &nb);
		t->steps++;
		if (ra != rb || na != nb || !same_regs(&a, &b)) {
			if (t->differ++ < 5)
				printf("# pc %#llx state %d: rc %d/%d need "
				       "%#llx/%#llx\n", (unsigned long long)pc,
				       state, ra, rb, (unsigned long long)na,
				       (unsigned long long)nb);
		}
	}
}

static void check_object(const char *path)
{
	struct img im;
	const int32_t *tab;
	struct tally t = { 0 };
	size_t n, i;
	char what[512];

	if (!img_open(path, &im) || !(n = table(&im, &tab))) {
		tap_skip(path, "not found or no .eh_frame_hdr table");
		return;
	}
	for (i = 0; i < NWORDS; i++)
		words[i] = next() & 1 ? STACK_BASE + 8 * (next() % NWORDS)
				      : next();
	for (i = 0; i < n; i++) {
		uint64_t lo = im.eh.hdr + (uint64_t)(int64_t)tab[2 * i];
		uint64_t hi = i + 1 < n ? im.eh.hdr +
			(uint64_t)(int64_t)tab[2 * i + 2] : lo + 64;
		struct sp_cfi c;

		if (hi > lo + 4096)
			hi = lo + 4096;
		for (uint64_t pc = lo; pc < hi; pc += pc - lo < 48 ? 1 : 3)
			if (sp_cfi_find(&im.eh, pc, &c) == 0)
				compare_at(&c, pc, &t);
	}
	printf("# %s: %zu FDEs, %zu rows: %zu compiled, %zu outermost, "
	       "%zu bad, %zu left to the row (expressions); %zu steps "
	       "compared\n", path, n, t.rows, t.kinds[SP_FAST_STEP],
	       t.kinds[SP_FAST_OUTERMOST], t.kinds[SP_FAST_BAD],
	       t.kinds[SP_FAST_FULL], t.steps);
	snprintf(what, sizeof(what), "%s: every compiled step equals the "
		 "row's (result, missing address, all 17 registers)", path);
	tap_ok(t.differ == 0 && t.steps > 10000, __FILE__, __LINE__, what);
	snprintf(what, sizeof(what), "%s: a row left to the slow path has "
		 "an expression or more than %d rules", path, SP_FAST_MAX);
	tap_ok(t.full_unexplained == 0 && t.kinds[SP_FAST_STEP] > t.rows / 2,
	       __FILE__, __LINE__, what);
	munmap(im.base, im.size);
}

/* ---- stacks captured in this process ------------------------------------ */


struct shot {
	struct sp_regs r;
	uint64_t *copy;
	uint64_t base;
	size_t n;
};

static struct shot shots[2];
static int nshots;

static __attribute__((noipa)) void take(struct shot *s)
{
	uint64_t cap[SP_NREGS], top;

	uw_capture(cap);
	for (unsigned i = 0; i < SP_NREGS; i++)
		s->r.r[i] = cap[dwarf_to_cap[i]];
	s->r.known = (1u << SP_NREGS) - 1;
	top = stack_top();
	s->base = s->r.r[SP_REG_RSP];
	s->n = top > s->base ? (top - s->base) / 8 : 0;
	if (s->n > 16384)
		s->n = 16384;
	s->copy = malloc(s->n * 8 + 8);
	if (s->copy)
		raw_copy(s->copy, s->base, s->n);
}

static void on_usr1(int sig)
{
	(void)sig;
	if (nshots < 2)
		take(&shots[nshots++]);
}

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (nshots == 0) {
		take(&shots[nshots++]);
		raise(SIGUSR1);
	}
	return (x > y) - (x < y);
}

/* Unwind @s to its end both ways; the frames, and whether every step
 * agreed. */
static size_t unwind_both(const struct shot *s, bool *agree, int *end,
			  size_t *rows)
{
	struct sp_stack_copy m = { s->base, s->copy, s->n };
	struct sp_regs a = s->r, b = s->r;
	bool exact = true;
	size_t k;

	*agree = true;
	for (k = 0; k < 256; k++) {
		uint64_t pc = a.r[SP_REG_RIP], look = exact ? pc : pc - 1;
		const struct sp_map *mp = sp_maps_find(pc);
		const struct sp_cfi_fast *f;
		const struct sp_cfi *row;
		struct sp_cfi c;
		uint64_t na, nb;
		int ra, rb;

		if (!mp || sp_cfi_find(&mp->eh, look, &c)) {
			*end = -1;
			*agree &= !mp || sp_cfi_cache_get(mp, look, &f, &row);
			return k;
		}
		if (sp_cfi_cache_get(mp, look, &f, &row)) {
			*agree = false;
			return k;
		}
		*rows += row != NULL;
		ra = sp_cfi_step(&c, &m, &a, &na);
		rb = row ? sp_cfi_step(row, &m, &b, &nb)
			 : sp_cfi_step_fast(f, &m, &b, &nb);
		*agree &= ra == rb && na == nb && same_regs(&a, &b) &&
			  f->signal == c.signal;
		if (ra != SP_STEP_OK) {
			*end = ra;
			return k;
		}
		exact = c.signal;
	}
	*end = -2;
	return k;
}

static void check_captured(void)
{
	int v[64];
	static const char *const what[2] = {
		"a qsort() comparator's stack",
		"a signal handler's stack, run from raise() in the comparator",
	};

	for (int i = 0; i < 64; i++)
		v[i] = (int)(next() % 1000);
	signal(SIGUSR1, on_usr1);
	qsort(v, 64, sizeof(v[0]), cmp);
	signal(SIGUSR1, SIG_DFL);
	sp_maps_refresh();
	for (int i = 0; i < 2; i++) {
		bool agree;
		int end = 0;
		size_t rows = 0, k;
		char msg[256];

		if (i >= nshots || !shots[i].copy) {
			tap_skip(what[i], "no capture");
			continue;
		}
		k = unwind_both(&shots[i], &agree, &end, &rows);
		printf("# %s: %zu steps, %zu through whole rows, end %d\n",
		       what[i], k, rows, end);
		snprintf(msg, sizeof(msg), "%s: unwound to its outermost "
			 "frame, every step the same with the cache and "
			 "without", what[i]);
		tap_ok(agree && end == SP_STEP_OUTERMOST && k >= 4 &&
		       (i == 0 || rows > 0), __FILE__, __LINE__, msg);
		free(shots[i].copy);
	}
}

/* ---- the cache ------------------------------------------------------------ */

/* Look up @pc of fake map @m: the cached result equals a fresh
 * find-and-compile (and the whole row, for a slow-path one). */
static bool cache_agrees(const struct sp_map *m, uint64_t pc)
{
	const struct sp_cfi_fast *f;
	const struct sp_cfi *row;
	struct sp_cfi c;
	struct sp_cfi_fast want;
	int got = sp_cfi_cache_get(m, pc, &f, &row);

	if (sp_cfi_find(&m->eh, pc, &c))
		return got == -1;
	if (got)
		return false;
	sp_cfi_compile(&c, &want);
	if (memcmp(f, &want, sizeof(want)))
		return false;
	if (want.kind == SP_FAST_FULL)
		return row && memcmp(row, &c, sizeof(c)) == 0;
	return row == NULL;
}

static void check_cache(void)
{
	struct img libc, py;
	struct sp_map a, b;
	struct sp_cfi_cache_stats s0, s1;
	const int32_t *tab, *tab2;
	size_t n, n2, i, bytes;
	bool ok = true, ok2 = true;
	uint64_t plt = 0;

	if (!img_open("/lib/x86_64-linux-gnu/libc.so.6", &libc) ||
	    !img_open("/usr/bin/python3.11", &py) ||
	    !(n = table(&libc, &tab)) || !(n2 = table(&py, &tab2))) {
		tap_skip("the step cache", "libc.so.6 or python3.11 missing");
		return;
	}
	memset(&a, 0, sizeof(a));
	a.id = 1000;
	a.eh = libc.eh;
	a.bias = 0;
	/* Twice over libc's functions: misses, then hits. */
	sp_cfi_cache_invalidate();
	sp_cfi_cache_stats(&s0);
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < n && i < 2000; i++)
			ok &= cache_agrees(&a, libc.eh.hdr +
					   (uint64_t)(int64_t)tab[2 * i] + 1);
	sp_cfi_cache_stats(&s1);
	CHECK(ok);
	printf("# hits %llu misses %llu\n",
	       (unsigned long long)(s1.hits - s0.hits),
	       (unsigned long long)(s1.misses - s0.misses));
	CHECK(s1.hits - s0.hits >= 1000 && s1.misses - s0.misses >= 1000);
	/* python3.11 where libc was: a new map id, as after dlclose and
	 * dlopen, with the same addresses (bias chosen to overlay them). */
	b = a;
	b.id = 1001;
	b.eh = py.eh;
	b.bias = (uint64_t)(py.base - libc.base);
	for (i = 0; i < n2 && i < 2000; i++) {
		uint64_t pc = py.eh.hdr + (uint64_t)(int64_t)tab2[2 * i] + 1;

		ok2 &= cache_agrees(&b, pc);
		/* the same vaddr under libc's id still gives libc's */
		ok2 &= cache_agrees(&a, pc - b.bias);
	}
	CHECK(ok2);
	/* An invalidation: the next lookup of a cached pc misses. */
	sp_cfi_cache_stats(&s0);
	sp_cfi_cache_invalidate();
	ok = cache_agrees(&a, libc.eh.hdr + (uint64_t)(int64_t)tab[2] + 1);
	sp_cfi_cache_stats(&s1);
	CHECK(ok && s1.misses == s0.misses + 1 && s1.hits == s0.hits &&
	      s1.invalidations == s0.invalidations + 1);
	/* Whole rows: python3.11's PLT, whose rows are expressions, at
	 * more pcs than the row table holds, then again. */
	for (i = 0; i < n2 && !plt; i++) {
		const struct sp_cfi_fast *f;
		const struct sp_cfi *row;
		uint64_t pc = py.eh.hdr + (uint64_t)(int64_t)tab2[2 * i] + 32;

		if (sp_cfi_cache_get(&b, pc, &f, &row) == 0 && row &&
		    sp_cfi_cache_get(&b, pc + 2 * SP_ROW_CACHE, &f,
				     &row) == 0 && row)
			plt = pc;
	}
	ok = plt != 0;
	for (int pass = 0; ok && pass < 2; pass++)
		for (i = 0; i < 2 * SP_ROW_CACHE; i++)
			ok &= cache_agrees(&b, plt + i);
	sp_cfi_cache_stats(&s1);
	CHECK(ok && s1.row_misses > 0);
	/* Fixed memory: 100,000 more lookups allocate nothing. */
	bytes = arena_bytes;
	for (i = 0; i < 100000; i++)
		sp_cfi_cache_get(&b, py.eh.hdr - b.bias + next() % 3000000,
				 &(const struct sp_cfi_fast *){ 0 },
				 &(const struct sp_cfi *){ 0 });
	CHECK(arena_bytes == bytes &&
	      sp_cfi_cache_bytes() < 1024 * 1024);
	munmap(libc.base, libc.size);
	munmap(py.base, py.size);
}

int main(void)
{
	check_object("/lib/x86_64-linux-gnu/libc.so.6");
	check_object("/usr/bin/python3.11");
	check_captured();
	check_cache();
	return tap_done();
}
