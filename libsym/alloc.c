/*
 * alloc.c - the allocation helpers of libsym and libsymprofile (base.h).
 *
 * Allocation goes through symi_malloc() and friends so that tests can fail
 * the Nth allocation (SYM_TEST_FAIL_ALLOC=N) and check that every error
 * path unwinds cleanly.  The counter is per library image (process-wide
 * in a program linked with the static archives) and read once.
 */
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

void *symi_malloc_huge(size_t n)
{
	size_t round;
	void *p;

	if (n < HUGE_FROM)
		return symi_malloc(n);
	if (alloc_fails() || n > SIZE_MAX - HUGE_PAGE)
		return NULL;
	round = huge_round(n);
	if (posix_memalign(&p, HUGE_PAGE, round))
		return NULL;
	(void)madvise(p, round, MADV_HUGEPAGE);
	return p;
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

void *symi_map_zeroed(size_t n)
{
	size_t len, lead;
	uint8_t *p;

	if (alloc_fails() || !n || n > SIZE_MAX - 2 * HUGE_PAGE)
		return NULL;
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
	if (p)
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
