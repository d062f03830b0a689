/*
 * batch.c - many lookups at once: search in address order, walk the
 * inline chains in input order, with the cache misses overlapped.
 *
 * A lookup is a search for the address's range and symbol range, then a
 * walk up the inline chain (scope, its function, the parent scope, its
 * function, ...) and the frames filled from what it reads.  On a big
 * table nearly every step is a cache miss that depends on the one
 * before, so one lookup after another leaves the memory system idle
 * between misses.
 *
 * So a batch is cut into windows of up to 131,072 addresses, and each is
 * answered in two passes:
 *
 * 1. Search, in address order (search()): the window is radix-sorted by
 *    address (the input index rides in the key's low bits; input that is
 *    already ascending is not sorted).  symi_table_ahead() runs SDIST
 *    addresses ahead, finding each one's block by a short forward seek
 *    and prefetching it; symi_table_locate() then finds the leaf with
 *    that hint, and the symbol from the last one, and stores them
 *    in a 24-byte struct symi_hit at the address's input position (a
 *    leaf's symbol indices beside it, in syms[], which GNU's style never
 *    writes).  In
 *    address order each search starts where the previous one ended, over
 *    memory just touched, and a chunked store table is switched at most
 *    once per chunk.  A table too small to prefetch takes its run of
 *    sorted addresses in one symi_table_locate_keys() call, which
 *    leaves the symbols for later in GNU's style (SYMI_HIT_SYM_LATER)
 *    and counts the runs of keys in one scope.
 *
 * 2. Answer, in input order (answer(), stage()): a software pipeline.
 *    The hit AHEAD = (STEPS + 1) * DIST positions ahead has its symbol
 *    and leaf scope prefetched (walk_start()); the hits DIST, 2 * DIST,
 *    ... ahead each go one step down their chain (walk_step(): read the
 *    scope the step before prefetched, prefetch its function and
 *    parent); symi_table_frames() decodes the current hit into frames,
 *    mostly from cache, and their strings are prefetched; the callback
 *    gets them DELAY positions later.  So many independent misses are in
 *    flight at once.  A window of one small table needs none of that
 *    (answer_small()): each hit's frames go to the callback at once.  In
 *    a batch of symi_fcache_min addresses or more that falls in few
 *    scopes, they come from a frame cache when an earlier hit had the
 *    same scope and symbols (symi_table_frames_cached()); the cache is
 *    dropped when it mostly misses.
 *
 * Why not walk in address order too: the answers would have to wait in
 * a buffer to be handed out in input order.  That was the design before
 * this one: every frame (96 bytes, 3 per address on libjvm) written to a
 * buffer of up to 19 MB per window and read back at random, a fresh
 * mmap()ed buffer per call, and lookups run one after another; on
 * libjvm's 33 MB table about 270 ns per address against about 200 now.
 * A hit is 24 bytes and holds no pointer.  (Walking in address order
 * would be faster by itself, as scopes, functions and strings are laid
 * out in address order, but not by enough to pay for the buffer.)
 *
 * Tables come from the caller's symi_table_at_fn and stay open for the
 * whole batch, so a window may answer from several (a chunked store
 * table); each hit records which.  Tiny batches are answered directly,
 * one lookup at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "format.h"
#include "base.h"

#define WINDOW_BITS 17			/* addresses per sorted window */
#define WINDOW ((size_t)1 << WINDOW_BITS)
#define KEY_BITS (64 - WINDOW_BITS)	/* room left for address - min */
#define SMALL 32			/* below this, sorting cannot pay */
#define DIGIT 12			/* most radix digit bits */
_Static_assert(WINDOW <= UINT32_MAX, "radix_sort() counts in 32 bits");
/* Pass 1 prefetches the block and symbol range SDIST addresses ahead. */
#define SDIST 8
/* Pass 2: the walks run STEPS steps, DIST addresses apart, ahead of the
 * answer (a step must wait for a miss: at 30 to 100 ns of work per
 * address, DIST addresses are enough); RING holds the walks in flight.
 * More steps or a longer distance measured the same on libjvm. */
#define DIST 4
#define STEPS 3
#define AHEAD ((STEPS + 1) * DIST)
#define RING 32
/* Frames wait DELAY addresses for their strings to arrive before the
 * callback gets them; SLOTS (a power of 2, > DELAY) hold the frames of
 * that many addresses. */
#define DELAY 2
#define SLOTS 4
/* Smaller tables stay in cache: prefetching them would only cost
 * instructions (libc's 1.1 MB table: 15% slower with it).  A variable
 * so that the tests can prefetch small tables too. */
size_t symi_prefetch_min = (size_t)4 << 20;
/* The frame cache (table.c, symi_table_frames_cached()): 2^FC_BITS slots
 * of SYMI_FCACHE_FRAMES frames, 1.4 MB, for batches of at least
 * symi_fcache_min addresses (fewer would not pay for zeroing it). */
#define FC_BITS 12
#define FC_CHECK 4096
/* Only for addresses in few scopes: the 100,000 addresses of the bench,
 * drawn at random from the text, run through 11,869 scopes in libc and
 * 18,449 in python3.11d, and the cache cost them 4.7% and 1.5% of their
 * CPU time; 10,000 distinct addresses repeated 10 times (3,552 and 5,267
 * runs) 1.6% and 2.6%; 1,000 repeated 100 times (679 and 805) it saved
 * libc 2.5% and python3.11d nothing (docs/bench.md, "Symbols looked up
 * late, the frame cache for few scopes only").  So: at most a quarter of
 * the slots. */
#define FC_RUNS_SHIFT 2
size_t symi_fcache_min = 8192;
size_t symi_fcache_hits;
_Static_assert(RING >= AHEAD + 1 && !(RING & (RING - 1)), "walk ring");
_Static_assert(SLOTS > DELAY && !(SLOTS & (SLOTS - 1)), "frame slots");

struct batch {
	const uint64_t *addrs;
	symi_table_at_fn at;
	void *actx;
	sym_frames_fn fn;
	void *ctx;
	unsigned omit;		/* enum sym_frame_omit */
	struct symi_gnu_text *text;	/* or NULL (answer_small()) */
	/* The table of the current address, the search hints in it, and
	 * its number in tabs (UINT32_MAX: not numbered in this window). */
	const struct sym_table *t;
	uint64_t t_start, t_end;
	struct symi_cursor cur;
	uint32_t tab;
	/* Window state: keys sorted, hits by input position, the tables
	 * the hits refer to. */
	uint64_t *keys, *tmp;
	struct symi_hit *hits;
	uint32_t *syms;		/* SYMT_CH_N words a hit (symi_hit_syms()) */
	const struct sym_table **tabs;	/* a window's worth */
	size_t ntabs;
	/* The frames of the last SLOTS addresses answered, and how many. */
	struct sym_frame *slot;
	uint8_t got[SLOTS];
	/* The frame cache of windows with one small table, made by the
	 * first (fcache_open()); fc.key NULL: none, or dropped. */
	size_t count;
	size_t runs;		/* of sorted keys in one scope: about how many
				 * scopes (symi_table_locate_keys()) */
	struct symi_fcache fc;
	bool fc_tried;
	void *fc_mem;		/* fc.fr and fc.key; free() */
	/* The search makes hits ready for GNU's text (SYMI_HIT_GNU):
	 * with @text and GNU's omit; gnu_hits: in this window (a small
	 * table's sorted run). */
	bool gnu, gnu_hits;
	struct symi_gnu_chains chains;	/* chains.v NULL: none */
};

/* The symbol words of the window's hit @i (symi_hit_syms()). */
#define HSYMS(b, i) ((b)->syms + (size_t)SYMT_CH_N * (i))
_Static_assert(WINDOW <= (UINT32_MAX >> SYMI_HIT_TAB_SHIFT),
	       "a window's table numbers fit a hit's flags");

/* Make b->t the table of @addr; *@in says whether it covers @addr. */
static inline __attribute__((always_inline)) int
table_for(struct batch *b, uint64_t addr, bool *in)
{
	*in = false;
	if (!b->t || addr < b->t_start || addr >= b->t_end) {
		int rc = b->at(b->actx, addr, &b->t, &b->t_start, &b->t_end);

		if (rc)
			return rc;
		b->cur = (struct symi_cursor)SYMI_CURSOR_INIT;
		b->tab = UINT32_MAX;
		if (!b->t || addr < b->t_start || addr >= b->t_end)
			return 0;
	}
	*in = true;
	return 0;
}

/* Answer addrs[lo, hi) in input order, one at a time. */
static int direct(struct batch *b, size_t lo, size_t hi)
{
	struct sym_frame fr[SYM_MAX_FRAMES];

	for (size_t i = lo; i < hi; i++) {
		size_t n = 0;
		bool in;
		int rc = table_for(b, b->addrs[i], &in);

		if (!rc && in)
			n = symi_table_lookup(b->t, b->addrs[i], fr,
					      SYM_MAX_FRAMES, b->omit,
					      &b->cur);
		if (!rc)
			rc = b->fn(b->ctx, i, fr, n);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * LSD radix sort of @n keys by their bits [@from, @to), stable; the
 * result is in @k or @tmp, whichever is returned.  As few passes as
 * digits of up to DIGIT bits allow, the bits shared evenly between them
 * (libjvm's 24 bits of addresses: 2 passes of 12 bits, not 3 of 11).
 */
static uint64_t *radix_sort(uint64_t *k, uint64_t *tmp, size_t n,
			    unsigned from, unsigned to)
{
	uint32_t count[1u << DIGIT];	/* n <= WINDOW: 16 KB of stack */
	unsigned passes = (to - from + DIGIT - 1) / DIGIT, digit, mask;

	if (!passes)
		return k;
	digit = (to - from + passes - 1) / passes;
	mask = (1u << digit) - 1;
	/* @tmp is written first by a scatter, in no order: fresh memory
	 * (a new window's huge page, zeroed by the kernel at its first
	 * touch) took each store a miss.  Written in order first, it is
	 * in cache for the scatter: python3.11d's and libc's 100,000
	 * addresses -1.8% and -0.7% CPU, 41 and 21 paired runs (docs/bench.md,
	 * "Memory touched in order first"). */
	memset(tmp, 0, n * sizeof(*tmp));
	for (unsigned shift = from; shift < to; shift += digit) {
		uint64_t *swap;
		uint32_t sum = 0;

		memset(count, 0, (mask + 1) * sizeof(count[0]));
		for (size_t i = 0; i < n; i++)
			count[(k[i] >> shift) & mask]++;
		for (size_t d = 0; d <= mask; d++) {
			uint32_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(k[i] >> shift) & mask]++] = k[i];
		swap = k;
		k = tmp;
		tmp = swap;
	}
	return k;
}

static unsigned bit_width(uint64_t v)
{
	return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

static bool ascending(const uint64_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (a[i] < a[i - 1])
			return false;
	}
	return true;
}

/*
 * Pass 1: the hits of a[0, n) into b->hits, searched in address order
 * (in input order when the addresses lie too far apart for a key).
 */
static int search(struct batch *b, const uint64_t *a, size_t n)
{
	uint64_t min = a[0], max = a[n - 1];
	bool asc = ascending(a, n), sort = true;
	struct symi_ahead ahead = SYMI_AHEAD_INIT, hint[SDIST] = { 0 };
	const uint64_t *keys = b->keys;
	const struct sym_table *ahead_t = NULL;
	int rc;

	for (size_t i = 0; !asc && i < n; i++) {
		min = a[i] < min ? a[i] : min;
		max = a[i] > max ? a[i] : max;
	}
	/* sort: searched through keys in address order, ascending input
	 * too (its keys need no sorting), so that a small table takes the
	 * run in one symi_table_locate_keys() call. */
	if (bit_width(max - min) > KEY_BITS)
		sort = false;
	if (sort) {
		/* By address only: the index below it needs no sorting
		 * (equal addresses stay in input order, the sort is stable). */
		for (size_t i = 0; i < n; i++)
			b->keys[i] = (a[i] - min) << WINDOW_BITS | i;
		if (!asc)
			keys = radix_sort(b->keys, b->tmp, n, WINDOW_BITS,
					  WINDOW_BITS +
						  bit_width(max - min));
	}
	b->ntabs = 0;
	b->tab = UINT32_MAX;
	b->gnu_hits = false;
	b->chains.n = 0;
	/* The k-th address in search order and its input index: sorted, both
	 * are in the key (not a random read of a[]). */
#define AT(k) (sort ? min + (keys[k] >> WINDOW_BITS) : a[k])
#define IDX(k) (sort ? keys[k] & (WINDOW - 1) : (k))
	for (size_t k = 0; k < n; k++) {
		size_t i = IDX(k);
		uint64_t addr = AT(k);
		struct symi_hit *h = &b->hits[i];
		struct symi_ahead hk = hint[k % SDIST];	/* hint[] is a ring */
		bool in;

		if (k + SDIST < n) {
			uint64_t a2 = AT(k + SDIST);
			struct symi_ahead *h2 = &hint[(k + SDIST) % SDIST];

			__builtin_prefetch(&b->hits[IDX(k + SDIST)], 1);
			if (ahead_t != b->t) {
				ahead = (struct symi_ahead)SYMI_AHEAD_INIT;
				ahead_t = b->t;
			}
			*h2 = (struct symi_ahead)SYMI_AHEAD_INIT;
			if (b->t && b->t->len >= symi_prefetch_min &&
			    a2 >= b->t_start && a2 < b->t_end) {
				symi_table_ahead(b->t, a2, &ahead);
				*h2 = ahead;
			}
		}

		h->flags = 0;
		rc = table_for(b, addr, &in);
		if (rc)
			return rc;
		if (in && sort && b->t->len < symi_prefetch_min) {
			/* A small table, in address order: the run of
			 * addresses in it in one call, without hints (a big
			 * table's hints and prefetches cost as much as the
			 * call saves: libjvm). */
			if (b->tab == UINT32_MAX) {
				b->tabs[b->ntabs] = b->t;
				b->tab = (uint32_t)b->ntabs++;
			}
			b->gnu_hits |= b->gnu;
			k += symi_table_locate_keys(b->t, &b->cur, keys + k,
						    n - k, WINDOW_BITS, min,
						    b->t_end, b->tab, b->omit,
						    b->hits, b->syms,
						    &b->runs, b->gnu,
						    b->chains.v ? &b->chains :
						    NULL) - 1;
			for (size_t j = 0; j < SDIST; j++)
				hint[j] = (struct symi_ahead)SYMI_AHEAD_INIT;
			continue;
		}
		/* The hint is for b->t if ahead_t still is. */
		if (!in || !symi_table_locate(b->t, addr, &b->cur,
					      k >= SDIST && ahead_t == b->t ?
					      &hk : NULL, h, HSYMS(b, i)))
			continue;
		if (b->tab == UINT32_MAX) {
			/* At most one new table per address: n fit. */
			b->tabs[b->ntabs] = b->t;
			b->tab = (uint32_t)b->ntabs++;
		}
		h->flags |= b->tab << SYMI_HIT_TAB_SHIFT;
	}
#undef AT
#undef IDX
	return 0;
}

/*
 * Prefetching.  Every prefetch is of an index checked against its array
 * (a prefetch of a wild address does not fault, but it would waste a
 * miss).  A packed record may straddle two cache lines: its last byte is
 * fetched too.  The helpers are always_inline, and not for speed: a void
 * function that only loads and prefetches looks pure to gcc's IPA, which
 * then deletes every call to it (gcc 12 did).
 */
static inline __attribute__((always_inline)) void
prefetch_rec(const struct symt_view *v, uint32_t i)
{
	const uint8_t *p = v->p + (size_t)i * v->stride;

	__builtin_prefetch(p);
	__builtin_prefetch(p + v->stride - 1);
}

/*
 * The walk that runs ahead of symi_table_frames(), one cache miss deep
 * per step: walk_start() prefetches the symbol and the leaf's scope;
 * each walk_step() reads the scope the step before prefetched and
 * prefetches its function and its parent, the scope to read next
 * (returned; UINT32_MAX at the end of the chain).  Strings are left to
 * prefetch_strings(), from the finished frames.
 */
static inline __attribute__((always_inline)) uint32_t
walk_start(const struct sym_table *t, const struct symi_hit *h,
	   const uint32_t *syms)
{
	if (h->flags & SYMI_HIT_SYM) {
		/* The peers mostly choose the same symbol: once. */
		const uint32_t *s = symi_hit_syms(h, syms);

		if (s[0] < t->syms.n)
			prefetch_rec(&t->syms, s[0]);
		if (s[1] != s[0] && s[1] < t->syms.n)
			prefetch_rec(&t->syms, s[1]);
		if (s[2] != s[0] && s[2] != s[1] && s[2] < t->syms.n)
			prefetch_rec(&t->syms, s[2]);
	}
	if (!(h->flags & SYMI_HIT_LEAF) || h->scope >= t->scopes.n)
		return UINT32_MAX;
	prefetch_rec(&t->scopes, h->scope);
	return h->scope;
}

static inline __attribute__((always_inline)) uint32_t
walk_step(const struct sym_table *t, uint32_t s)
{
	const struct symt_view *sv = &t->scopes, *fv = &t->funcs;
	uint32_t f, d;

	if (s >= sv->n)
		return UINT32_MAX;
	d = symt_get(sv, s, SYMT_SC_PARENT);
	f = symt_get(sv, s, SYMT_SC_FUNC) - 1;	/* a code: 0 is none */
	if (f < fv->n)
		prefetch_rec(fv, f);
	if (!d || d > s)
		return UINT32_MAX;
	prefetch_rec(sv, s - d);
	return s - d;
}

/* Prefetch the first two lines of string @s, unless it is NULL (a
 * prefetch does not fault, but it may walk the page tables for nothing).
 * C++ names and paths are often longer than a line: the names libjvm's
 * 100,000 addresses print average 62 bytes (31% over 64), the paths 57. */
static inline __attribute__((always_inline)) void
prefetch_str(const char *s)
{
	if (s) {
		__builtin_prefetch(s);
		__builtin_prefetch(s + 64);
	}
}

/* Prefetch the strings of @f[@n] the caller is about to read: the name
 * it prints and the file.  The name is the demangled one where the
 * frames have it (symd, `sym lookup -C`), else the linkage name (GNU and
 * LLVM styles without -C: a C++ function's), else the DWARF name; the
 * others are seldom read. */
static inline __attribute__((always_inline)) void
prefetch_strings(const struct sym_frame *f, size_t n)
{
	for (size_t j = 0; j < n; j++) {
		prefetch_str(f[j].demangled ? f[j].demangled :
			     f[j].linkage_name ? f[j].linkage_name :
			     f[j].name);
		prefetch_str(f[j].file);
	}
}

/*
 * Pass 2, one position @x of the pipeline: start the walk of hit @x, step
 * those of hits x - DIST, x - 2 * DIST, ..., turn hit x - AHEAD into
 * frames (and prefetch their strings), and hand those of hit x - AHEAD -
 * DELAY to the callback.  With @edge, positions outside [0, n) are
 * skipped; without, they are all inside.  @one is the window's only
 * table, or NULL.
 */
static inline __attribute__((always_inline)) int
stage(struct batch *b, const struct sym_table *one, uint32_t *w,
      size_t lo, size_t n, size_t x, bool edge)
{
	const struct symi_hit *hits = b->hits;
	size_t i = x - AHEAD, c = i - DELAY;

#define TAB(h) (one ? one : b->tabs[(h)->flags >> SYMI_HIT_TAB_SHIFT])
	if (!edge || x < n)
		w[x % RING] = hits[x].flags ?
			      walk_start(TAB(&hits[x]), &hits[x],
					 HSYMS(b, x)) : UINT32_MAX;
	for (size_t m = 1; m <= STEPS; m++) {
		size_t j = x - m * DIST;

		if ((!edge || (x >= m * DIST && j < n)) &&
		    w[j % RING] != UINT32_MAX)
			w[j % RING] = walk_step(TAB(&hits[j]), w[j % RING]);
	}
	if (!edge || (x >= AHEAD && i < n)) {
		struct sym_frame *fr = b->slot + (i % SLOTS) * SYM_MAX_FRAMES;
		size_t got = 0;

		if (hits[i].flags)
			got = symi_table_frames(TAB(&hits[i]), &hits[i],
						HSYMS(b, i), b->addrs[lo + i],
						fr, SYM_MAX_FRAMES, b->omit);
		b->got[i % SLOTS] = (uint8_t)got;
		prefetch_strings(fr, got);
	}
#undef TAB
	if (edge && (x < AHEAD + DELAY || c >= n))
		return 0;
	return b->fn(b->ctx, lo + c, b->slot + (c % SLOTS) * SYM_MAX_FRAMES,
		     b->got[c % SLOTS]);
}

/* The cache's bargain: a hit saves about 300 instructions (libc), a miss
 * costs a few more than no cache; but its 1.4 MB do not stay in a 1 MB L2
 * cache beside the table's, so each hit may wait for a line from L3.
 * cachegrind (D1 48 KB, LL 1 MB) of 100,000 warm addresses: libc's last
 * level misses 320,000 -> 453,000 for 18 M instructions less, and the
 * CPU time fell 2 to 4%; python3.11d's 423,000 -> 643,000 for 10 M less,
 * and it rose 5%.  So it goes on only where most answers hit.  It starts
 * empty: at the end of the first FC_CHECK positions (about 4,000
 * answers) libc's had hit 52%, python3.11d's 18% and 30% (its two
 * batches of `sym lookup`), while 72% and 49% of all 65,536 then
 * did.  A batch whose answers hit less than 40% by then goes on without
 * it. */
static void fcache_check(struct symi_fcache *c)
{
	if (c->key && c->hits + c->misses >= FC_CHECK / 2 &&
	    c->hits * 3 < c->misses * 2)
		c->key = NULL;
}

/* Pass 2: answer addrs[lo, lo + n) from b->hits, in input order, with the
 * walks of the next AHEAD hits running ahead (see the top of the file).
 * Inlined twice: for a window with one big table, and with several
 * (chunks: big). */
static inline __attribute__((always_inline)) int
answer_from(struct batch *b, const struct sym_table *one, size_t lo,
	    size_t n)
{
	uint32_t w[RING];	/* the scope each walk reads next */
	size_t x = 0;
	int rc = 0;

	for (; !rc && x < AHEAD + DELAY; x++)
		rc = stage(b, one, w, lo, n, x, true);
	for (; !rc && x < n; x++)
		rc = stage(b, one, w, lo, n, x, false);
	for (; !rc && x < n + AHEAD + DELAY; x++)
		rc = stage(b, one, w, lo, n, x, true);
	return rc;
}

/*
 * Pass 2 for a window of one small table @t, which stays in cache: no
 * walks and no strings prefetched, so each hit's frames go to the
 * callback as soon as they are made (no pipeline to fill).  Only the
 * scope of the hit AHEAD positions on is asked for, the first of the
 * records its frames will read (python3.11d and libc: -1.5%, 21 runs),
 * and with the frame cache, its slot.
 */
static int answer_small(struct batch *b, const struct sym_table *t,
			size_t lo, size_t n)
{
	const struct symi_hit *hits = b->hits;
	struct sym_frame *fr = b->slot;
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < n && b->fc.key; i++) {
		const struct symi_hit *h = &hits[i];
		size_t got = 0;

		if (i + AHEAD < n && (h[AHEAD].flags & SYMI_HIT_LEAF) &&
		    h[AHEAD].scope < t->scopes.n) {
			uint32_t sl = symi_fcache_slot(&b->fc, &h[AHEAD],
						       HSYMS(b, i + AHEAD));

			prefetch_rec(&t->scopes, h[AHEAD].scope);
			__builtin_prefetch(&b->fc.key[sl]);
			__builtin_prefetch(
				&b->fc.fr[(size_t)sl * SYMI_FCACHE_FRAMES]);
		}
		if (h->flags)
			got = symi_table_frames_cached(t, h, HSYMS(b, i),
						       b->addrs[lo + i], fr,
						       SYM_MAX_FRAMES,
						       b->omit, &b->fc);
		if ((i + 1) % FC_CHECK == 0)
			fcache_check(&b->fc);
		rc = b->fn(b->ctx, lo + i, fr, got);
	}
	/* Without the cache (or once it is dropped): the rest in one
	 * call. */
	if (!rc && i < n)
		rc = symi_table_frames_run(t, hits + i, HSYMS(b, i),
					   b->addrs + lo + i, n - i, b->omit,
					   fr, SYM_MAX_FRAMES, b->fn, b->ctx,
					   lo + i, b->text, &b->chains);
	return rc;
}

/* The frame cache, for a batch of symi_fcache_min addresses or more whose
 * window has one small table and whose first window's addresses fall in
 * few scopes (runs: at most a 2^FC_RUNS_SHIFT-th of the slots): 1.4 MB,
 * no page of it touched before it is used.  Without it (out of memory),
 * the same answers.  Its frames and its keys are one block, in huge
 * pages: the keys (160 KB) calloc()ed apart took 40 page faults of 4 KiB
 * a batch, as many as 1.6 MB in huge pages cost (docs/bench.md, "Fewer
 * page faults"). */
static void fcache_open(struct batch *b)
{
	size_t slots = (size_t)1 << FC_BITS;
	size_t fr = slots * SYMI_FCACHE_FRAMES * sizeof(*b->fc.fr);

	b->fc_tried = true;
	if (b->count < symi_fcache_min || b->runs > (slots >> FC_RUNS_SHIFT))
		return;
	_Static_assert(_Alignof(struct symi_fcache_key) <=
		       _Alignof(struct sym_frame), "keys after the frames");
	b->fc_mem = symi_malloc_huge(fr + slots * sizeof(*b->fc.key));
	if (!b->fc_mem)
		return;
	b->fc.fr = b->fc_mem;
	b->fc.key = (struct symi_fcache_key *)((char *)b->fc_mem + fr);
	memset(b->fc.key, 0, slots * sizeof(*b->fc.key));
	b->fc.shift = 32 - FC_BITS;
	b->fc.omit = b->omit;
}

/* The window's SYMI_HIT_GNU hits made plain, for answer_from(), which
 * makes frames of every hit: a small table's, in a window of several
 * tables (a chunked store table's, mostly big ones). */
static void hits_plain(struct batch *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct symi_hit *h = &b->hits[i];

		if (h->flags & (SYMI_HIT_GNU | SYMI_HIT_GNU_CHAIN))
			symi_table_hit_plain(
				b->tabs[h->flags >> SYMI_HIT_TAB_SHIFT], h, h);
	}
}

static int answer(struct batch *b, size_t lo, size_t n)
{
	if (b->ntabs == 1 && b->tabs[0]->len < symi_prefetch_min) {
		/* GNU's text does without the frame cache: an answer's
		 * text from its hit alone (SYMI_HIT_GNU) costs less than
		 * a cached answer's frames, printed. */
		if (!b->fc_tried && !b->gnu)
			fcache_open(b);
		return answer_small(b, b->tabs[0], lo, n);
	}
	if (b->gnu_hits)
		hits_plain(b, n);
	if (b->ntabs == 1)
		return answer_from(b, b->tabs[0], lo, n);
	return answer_from(b, NULL, lo, n);
}

int symi_batch_lookup(const uint64_t *addrs, size_t count,
		      symi_table_at_fn at, void *actx, unsigned omit,
		      struct symi_gnu_text *text, sym_frames_fn fn, void *ctx)
{
	struct batch b = {
		.addrs = addrs, .at = at, .actx = actx, .fn = fn, .ctx = ctx,
		.omit = omit, .text = text, .count = count,
		.cur = SYMI_CURSOR_INIT, .tab = UINT32_MAX,
		.gnu = text && omit == SYMI_OMIT_ALL,
	};
	void *mem = NULL;
	size_t w;
	int rc = 0;

	if (count < SMALL)
		return direct(&b, 0, count);
	w = count < WINDOW ? count : WINDOW;
	/* The window's arrays in one block, written whole by each window:
	 * 6.5 MiB at 131,072 addresses (5.0 written in GNU's style, which
	 * leaves the symbol words alone), in huge pages (a warm lookup of
	 * 100,000 addresses in libc took 1,140 of its 1,812 page faults
	 * here in 4 KiB pages).  Windows of 65,536 cost 100,000 addresses
	 * a second sweep of the table: 2 to 3% more CPU (docs/bench.md).
	 * The symbol words come last: GNU's style never writes them, and
	 * pages never written are never made (100,000 addresses: 4.0 MB,
	 * two huge pages, where 40-byte hits took three).  The tables'
	 * array is apart: a window mostly has one, and its room for one
	 * per address would take a huge page more to clear. */
	mem = symi_malloc_huge(w * (sizeof(*b.keys) + sizeof(*b.tmp) +
				    sizeof(*b.hits) +
				    SYMT_CH_N * sizeof(*b.syms)));
	b.tabs = symi_malloc(w * sizeof(*b.tabs));
	b.slot = symi_malloc(SLOTS * SYM_MAX_FRAMES * sizeof(*b.slot));
	if (!mem || !b.tabs || !b.slot) {
		rc = direct(&b, 0, count);	/* slower, but answers */
		goto out;
	}
	/* The chains of GNU_CHAIN hits: room for 4 words an address, in
	 * pages touched only as chains are written (python3.11d's 100,000
	 * addresses: 5,283 chains, 116 KB of the 1.6 MB).  Without it,
	 * those hits walk their chains. */
	if (b.gnu) {
		b.chains.v = symi_malloc(4 * w * sizeof(*b.chains.v));
		b.chains.cap = b.chains.v ? (uint32_t)(4 * w) : 0;
	}
	b.keys = mem;
	b.tmp = b.keys + w;
	b.hits = (struct symi_hit *)(b.tmp + w);
	b.syms = (uint32_t *)(b.hits + w);
	for (size_t lo = 0; lo < count && !rc; lo += WINDOW) {
		size_t n = count - lo < WINDOW ? count - lo : WINDOW;

		rc = search(&b, addrs + lo, n);
		if (!rc)
			rc = answer(&b, lo, n);
	}
out:
	if (b.fc.hits)
		__atomic_fetch_add(&symi_fcache_hits, b.fc.hits,
				   __ATOMIC_RELAXED);
	free(b.fc_mem);
	free(b.chains.v);
	free(mem);
	free(b.tabs);
	free(b.slot);
	return rc;
}
