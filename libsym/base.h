/*
 * base.h - the internals libsym and libsymprofile (libsym/prof/) share:
 * overflow-checked sizes and the allocation helpers (alloc.c).
 *
 * Nothing here is installed or exported.  alloc.c is compiled into both
 * libraries: each shared library has its own hidden copy, and a program
 * that links both static archives gets one (the same object is in
 * both).  The names are symi_* in both libraries.
 */
#ifndef SYM_BASE_H
#define SYM_BASE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* Overflow-checked size arithmetic: return false on overflow. */
static inline bool symi_add(size_t a, size_t b, size_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}
static inline bool symi_mul(size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/*
 * Grow *arr (of *cap elements of size elem) so that it holds at least
 * need elements.  Returns 0 or -ENOMEM; *arr is untouched on failure.
 */
int symi_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* Fault injection for tests: SYM_TEST_FAIL_ALLOC=N fails the Nth call
 * (of the library that made it: each shared library counts its own). */
void *symi_malloc(size_t n);
void *symi_calloc(size_t n, size_t m);
void *symi_realloc(void *p, size_t n);
char *symi_strdup(const char *s);

/*
 * For tests that link libsym.a and sweep N in one process: from now on,
 * fail the @n-th allocation (0: none; LONG_MAX: none, but count them),
 * counting from zero again; this replaces SYM_TEST_FAIL_ALLOC.  Not
 * thread-safe against allocations under way.  symi_test_alloc_count():
 * the allocations counted since, the failed one included.
 */
void symi_test_fail_alloc(long n);
long symi_test_alloc_count(void);

#endif /* SYM_BASE_H */
