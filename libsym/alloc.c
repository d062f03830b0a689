/*
 * alloc.c - the allocation helpers of libsym and libsymprofile (base.h).
 *
 * Allocation goes through symi_malloc() and friends so that tests can fail
 * the Nth allocation (SYM_TEST_FAIL_ALLOC=N) and check that every error
 * path unwinds cleanly.  The counter is per library image (process-wide
 * in a program linked with the static archives) and read once.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base.h"

/*
 * Fault injection.  fail_at < 0 means "not read yet", 0 means "off";
 * allocations are counted only when it is on.
 */
static long fail_at = -1;
static long alloc_count;

static bool alloc_fails(void)
{
	if (fail_at < 0) {
		const char *e = getenv("SYM_TEST_FAIL_ALLOC");

		fail_at = e ? strtol(e, NULL, 10) : 0;
		if (fail_at < 0)
			fail_at = 0;
	}
	if (!fail_at)
		return false;
	return __atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED) == fail_at;
}

void symi_test_fail_alloc(long n)
{
	__atomic_store_n(&alloc_count, 0, __ATOMIC_RELAXED);
	fail_at = n > 0 ? n : 0;
}

long symi_test_alloc_count(void)
{
	return __atomic_load_n(&alloc_count, __ATOMIC_RELAXED);
}

void *symi_malloc(size_t n)
{
	return alloc_fails() ? NULL : malloc(n);
}

void *symi_calloc(size_t n, size_t m)
{
	return alloc_fails() ? NULL : calloc(n, m);
}

void *symi_realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : realloc(p, n);
}

#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_FROM ((size_t)512 << 10)
#define HUGE_ADVISE ((size_t)4 << 20)

static size_t huge_round(size_t n)
{
	return (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
}

size_t symi_huge_size(size_t n)
{
	return n < HUGE_FROM || n > SIZE_MAX - 2 * HUGE_PAGE ? n :
	       huge_round(n);
}

/* symi_malloc_huge() after its failure test. */
static void *malloc_huge(size_t n)
{
	size_t round;
	void *p;

	if (n < HUGE_FROM)
		return malloc(n ? n : 1);
	if (n > SIZE_MAX - HUGE_PAGE)
		return NULL;
	round = huge_round(n);
	if (posix_memalign(&p, HUGE_PAGE, round))
		return NULL;
	(void)madvise(p, round, MADV_HUGEPAGE);
	return p;
}

void *symi_malloc_huge(size_t n)
{
	return alloc_fails() ? NULL : malloc_huge(n);
}

void *symi_calloc_huge(size_t n, size_t m)
{
	size_t bytes;
	void *p;

	if (!symi_mul(n, m, &bytes))
		return NULL;
	if (bytes < HUGE_FROM)
		return symi_calloc(n, m);
	p = symi_malloc_huge(bytes);
	if (p)
		memset(p, 0, bytes);
	return p;
}

/*
 * The slab: SLAB_BYTES of huge pages that the first decoded tables of a
 * process are carved from, a bump at a time (symi_map_zeroed(),
 * symi_malloc_slab()).  A `sym lookup` decodes its table's compressed
 * records and strings once and exits; in 4 KiB pages python3.11d's took
 * about 400 page faults, 0.5 ms of a 2.8 ms lookup of one address, and
 * in the slab they take one or two huge pages (docs/bench.md, "One slab
 * of huge pages").  A piece freed at the top is taken back (a decoder's
 * scratch, freed before the next piece is carved); others only when
 * every piece is free, and then the whole slab is.  So a long-lived
 * process (symd) keeps at most SLAB_BYTES in it whatever it frees, and
 * allocates as before once it is full.  Off under ASan, whose checks of
 * heap buffers the slab's pieces would escape.
 */
#define SLAB_BYTES ((size_t)8 << 20)
#define SLAB_ALIGN 64

static pthread_mutex_t slab_mu = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *slab;		/* SLAB_BYTES, huge-page aligned, or NULL */
static bool slab_off;		/* could not be mapped, or ASan */
static size_t slab_top;		/* bytes carved from the start */
static size_t slab_dirty;	/* bytes that were ever carved: written */
static size_t slab_live;	/* pieces not given back */

static void slab_map(void)
{
	uint8_t *p;
	size_t lead;

#if defined(SYMI_ASAN)
	slab_off = true;
	return;
#endif
	p = mmap(NULL, SLAB_BYTES + HUGE_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		slab_off = true;
		return;
	}
	lead = (HUGE_PAGE - ((uintptr_t)p & (HUGE_PAGE - 1))) &
	       (HUGE_PAGE - 1);
	if (lead)
		(void)munmap(p, lead);
	(void)munmap(p + lead + SLAB_BYTES, HUGE_PAGE - lead);
	slab = p + lead;
	(void)madvise(slab, SLAB_BYTES, MADV_HUGEPAGE);
}

/* @n bytes from the slab, zeroed with @zero; NULL when it has no room. */
static void *slab_take(size_t n, bool zero)
{
	size_t at, need = (n + SLAB_ALIGN - 1) & ~(size_t)(SLAB_ALIGN - 1);
	void *p = NULL;

	if (!n || n > SLAB_BYTES)
		return NULL;
	pthread_mutex_lock(&slab_mu);
	if (!slab && !slab_off)
		slab_map();
	if (slab && need <= SLAB_BYTES - slab_top) {
		at = slab_top;
		p = slab + at;
		slab_top += need;
		slab_live++;
		/* Bytes carved before were written: zero them again. */
		if (zero && at < slab_dirty)
			memset(p, 0, (slab_dirty < slab_top ? slab_dirty :
				      slab_top) - at);
		if (slab_dirty < slab_top)
			slab_dirty = slab_top;
	}
	pthread_mutex_unlock(&slab_mu);
	return p;
}

/* Give back a piece of @n bytes; false when @p is not the slab's. */
static bool slab_give(void *p, size_t n)
{
	size_t need = (n + SLAB_ALIGN - 1) & ~(size_t)(SLAB_ALIGN - 1);
	uint8_t *q = p;

	if (!slab || q < slab || q >= slab + SLAB_BYTES)
		return false;
	pthread_mutex_lock(&slab_mu);
	slab_live--;
	if (!slab_live)
		slab_top = 0;
	else if ((size_t)(q - slab) + need == slab_top)
		slab_top = (size_t)(q - slab);
	pthread_mutex_unlock(&slab_mu);
	return true;
}

void *symi_malloc_slab(size_t n)
{
	void *p;

	if (alloc_fails())
		return NULL;
	p = slab_take(n, false);
	return p ? p : malloc_huge(n);
}

void symi_free_slab(void *p, size_t n)
{
	if (p && !slab_give(p, n))
		free(p);
}

void *symi_map_zeroed(size_t n)
{
	size_t len, lead;
	uint8_t *p;

	if (alloc_fails() || !n || n > SIZE_MAX - 2 * HUGE_PAGE)
		return NULL;
	p = slab_take(n, true);
	if (p)
		return p;
	if (n < HUGE_FROM) {
		p = mmap(NULL, n, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	len = huge_round(n);
	/* Aligned, and whole huge pages to its end: a huge page must lie
	 * inside the mapping, so a blob of 5.5 MiB mapped as it came (not
	 * aligned, its last page cut) took 1.6 MiB of it in 4 KiB pages
	 * (libjvm's strings: 397 faults). */
	p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	lead = (HUGE_PAGE - ((uintptr_t)p & (HUGE_PAGE - 1))) &
	       (HUGE_PAGE - 1);
	if (lead)
		(void)munmap(p, lead);
	(void)munmap(p + lead + len, HUGE_PAGE - lead);
	p += lead;
	(void)madvise(p, len, MADV_HUGEPAGE);
	return p;
}

void symi_unmap(void *p, size_t n)
{
	if (p && !slab_give(p, n))
		(void)munmap(p, symi_huge_size(n));
}

void symi_advise_huge(void *buf, size_t len)
{
	uintptr_t lo = ((uintptr_t)buf + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)buf + len) & ~(HUGE_PAGE - 1);

	if (len >= HUGE_ADVISE && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

char *symi_strdup(const char *s)
{
	return alloc_fails() ? NULL : strdup(s);
}

int symi_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16, bytes;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (!symi_mul(ncap, 2, &ncap))
			return -ENOMEM;
	}
	if (!symi_mul(ncap, elem, &bytes))
		return -ENOMEM;
	/* A large array moves to a buffer of huge pages, copied: realloc()
	 * would copy it into 4 KiB pages (libjvm's full build took 115,000
	 * page faults, most of them growing the builder's arrays so). */
	if (bytes >= HUGE_ADVISE) {
		p = symi_malloc_huge(bytes);
		if (p && *arr)
			memcpy(p, *arr, *cap * elem);
		if (p)
			free(*arr);
	} else {
		p = symi_realloc(*arr, bytes);
	}
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}
