/*
 * batch.c - many lookups at once: search in address order, answer in
 * input order.
 *
 * A lookup is a few binary searches and a walk up the inline chain.  In
 * input order (profiles arrive unsorted) every search starts from scratch
 * and nearly every probe misses the cache: on libjvm's 88 MB table that is
 * about 1 us per address.  In address order each search gallops from where
 * the previous one ended, over memory the previous one just touched, and
 * a chunked store table is switched at most once per chunk.  So a batch is
 * cut into windows; each window is radix-sorted by address (the addresses
 * carry their input index in the low bits), looked up in that order into a
 * frame buffer, and then handed to the callback in input order.
 *
 * Input that is already ascending, or too small to gain, is answered
 * directly.  The frame buffer is bounded (BUF_MAX); a window whose answers
 * would not fit (pathological inline depth) is answered directly as well,
 * so memory never depends on what the table says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define WINDOW_BITS 16			/* addresses per sorted window */
#define WINDOW ((size_t)1 << WINDOW_BITS)
#define KEY_BITS (64 - WINDOW_BITS)	/* room left for address - min */
#define SMALL 32			/* below this, sorting cannot pay */
#define BUF_MAX ((size_t)64 << 20)	/* bytes of buffered frames */
#define DIGIT 11			/* radix digit bits */

struct batch {
	const uint64_t *addrs;
	symi_table_at_fn at;
	void *actx;
	sym_frames_fn fn;
	void *ctx;
	/* The table of the current address and the search hints in it. */
	const struct sym_table *t;
	uint64_t t_start, t_end;
	struct symi_cursor cur;
	/* Window state: keys sorted, answers by input position. */
	uint64_t *keys, *tmp;		/* a window each */
	uint32_t *first;		/* per address: index into fr */
	uint8_t *nfr;			/* per address: frames */
	struct sym_frame *fr;
	size_t fr_cap;
};

/* Frames of @addr into @fr (room for SYM_MAX_FRAMES). */
static int one(struct batch *b, uint64_t addr, struct sym_frame *fr,
	       size_t *n)
{
	*n = 0;
	if (!b->t || addr < b->t_start || addr >= b->t_end) {
		int rc = b->at(b->actx, addr, &b->t, &b->t_start, &b->t_end);

		if (rc)
			return rc;
		b->cur = (struct symi_cursor)SYMI_CURSOR_INIT;
		if (!b->t || addr < b->t_start || addr >= b->t_end)
			return 0;
	}
	*n = symi_table_lookup(b->t, addr, fr, SYM_MAX_FRAMES, &b->cur);
	return 0;
}

/* Answer addrs[lo, hi) in input order, one at a time. */
static int direct(struct batch *b, size_t lo, size_t hi)
{
	struct sym_frame fr[SYM_MAX_FRAMES];

	for (size_t i = lo; i < hi; i++) {
		size_t n;
		int rc = one(b, b->addrs[i], fr, &n);

		if (!rc)
			rc = b->fn(b->ctx, i, fr, n);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Prefetch the strings of the first frames of @f (at most 4): the names
 * and files the caller is about to print.  always_inline, and not for
 * speed: a void function that only loads and prefetches looks pure to
 * gcc's IPA, which then deletes every call to it (gcc 12 did).
 */
static inline __attribute__((always_inline)) void
prefetch_strings(const struct sym_frame *f, size_t n)
{
	for (size_t j = 0; j < n && j < 4; j++) {
		__builtin_prefetch(f[j].demangled ? f[j].demangled : f[j].name);
		__builtin_prefetch(f[j].file);
	}
}

/* LSD radix sort of @n keys of @bits significant bits. */
static void radix_sort(uint64_t *k, uint64_t *tmp, size_t n, unsigned bits)
{
	size_t count[1u << DIGIT];

	for (unsigned shift = 0; shift < bits; shift += DIGIT) {
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(k[i] >> shift) & ((1u << DIGIT) - 1)]++;
		for (size_t d = 0; d < (1u << DIGIT); d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(k[i] >> shift) & ((1u << DIGIT) - 1)]++] =
				k[i];
		memcpy(k, tmp, n * sizeof(*k));
	}
}

static unsigned bit_width(uint64_t v)
{
	return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

/* Answer addrs[lo, lo + n), n <= WINDOW, looking up in address order.
 * Sets *@direct_please, answering nothing, when the window does not suit
 * (addresses too far apart, frames beyond BUF_MAX, no memory). */
static int window(struct batch *b, size_t lo, size_t n, bool *direct_please)
{
	const uint64_t *a = b->addrs + lo;
	uint64_t min = a[0], max = a[0];
	size_t used = 0;
	int rc;

	for (size_t i = 1; i < n; i++) {
		min = a[i] < min ? a[i] : min;
		max = a[i] > max ? a[i] : max;
	}
	*direct_please = true;
	if (bit_width(max - min) > KEY_BITS)
		return 0;
	for (size_t i = 0; i < n; i++)
		b->keys[i] = (a[i] - min) << WINDOW_BITS | i;
	radix_sort(b->keys, b->tmp, n, WINDOW_BITS + bit_width(max - min));
	for (size_t k = 0; k < n; k++) {
		size_t i = b->keys[k] & (WINDOW - 1), got;

		if (b->fr_cap - used < SYM_MAX_FRAMES) {
			size_t cap = b->fr_cap;

			if ((cap + SYM_MAX_FRAMES) * sizeof(*b->fr) > BUF_MAX)
				return 0;
			if (symi_grow((void **)&b->fr, &cap,
				      used + SYM_MAX_FRAMES, sizeof(*b->fr)))
				return 0;	/* no memory: go direct */
			b->fr_cap = cap;
		}
		rc = one(b, a[i], b->fr + used, &got);
		if (rc)
			return rc;
		b->first[i] = (uint32_t)used;
		b->nfr[i] = (uint8_t)got;	/* <= SYM_MAX_FRAMES = 128 */
		used += got;
	}
	*direct_please = false;
	for (size_t i = 0; i < n; i++) {
		/* Input order jumps around the frame buffer and the string
		 * blob: fetch the frames a few calls ahead, then the strings
		 * the caller is about to print. */
		if (i + 8 < n)
			__builtin_prefetch(b->fr + b->first[i + 8]);
		if (i + 4 < n)
			prefetch_strings(b->fr + b->first[i + 4], b->nfr[i + 4]);
		rc = b->fn(b->ctx, lo + i, b->fr + b->first[i], b->nfr[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static bool ascending(const uint64_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (a[i] < a[i - 1])
			return false;
	}
	return true;
}

int symi_batch_lookup(const uint64_t *addrs, size_t count,
		      symi_table_at_fn at, void *actx, sym_frames_fn fn,
		      void *ctx)
{
	struct batch b = {
		.addrs = addrs, .at = at, .actx = actx, .fn = fn, .ctx = ctx,
		.cur = SYMI_CURSOR_INIT,
	};
	size_t w;
	int rc = 0;

	_Static_assert(SYM_MAX_FRAMES <= UINT8_MAX, "nfr is a byte");
	if (count < SMALL || ascending(addrs, count))
		return direct(&b, 0, count);
	w = count < WINDOW ? count : WINDOW;
	b.keys = symi_malloc(w * sizeof(*b.keys));
	b.tmp = symi_malloc(w * sizeof(*b.tmp));
	b.first = symi_malloc(w * sizeof(*b.first));
	b.nfr = symi_malloc(w);
	if (!b.keys || !b.tmp || !b.first || !b.nfr) {
		rc = direct(&b, 0, count);	/* slower, but answers */
		goto out;
	}
	for (size_t lo = 0; lo < count && !rc; lo += WINDOW) {
		size_t n = count - lo < WINDOW ? count - lo : WINDOW;
		bool go_direct = true;

		if (n >= SMALL)
			rc = window(&b, lo, n, &go_direct);
		if (!rc && go_direct)
			rc = direct(&b, lo, lo + n);
	}
out:
	free(b.keys);
	free(b.tmp);
	free(b.first);
	free(b.nfr);
	free(b.fr);
	return rc;
}
