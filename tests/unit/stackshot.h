/*
 * stackshot.h - what tests/unit/t-cfi-cache.c and t-unwind-memo.c share
 * to drive libsymprof's unwinder outside the preload: the drain's arena
 * (malloc's here, counted), and a stack of their own recorded as its
 * signal handler and alloc.c's capture() would (uw_capture()'s registers
 * in the unwinder's order, the top of the thread's stack, a raw copy of
 * it).  Include after uwcapture.h and symprof/symprof.h, in one
 * translation unit.
 */
#ifndef SYM_TESTS_STACKSHOT_H
#define SYM_TESTS_STACKSHOT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The drain's arena, which the memo, the step cache and maps.c take
 * memory from; here malloc's, counted. */
static size_t arena_bytes;

void *sp_arena_alloc(size_t n)
{
	arena_bytes += n;
	return calloc(1, n);
}

char *sp_arena_strdup(const char *s)
{
	arena_bytes += strlen(s) + 1;
	return strdup(s);
}

/* DWARF register number -> index in uw_capture()'s order. */
static const uint8_t dwarf_to_cap[SP_NREGS] = {
	0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8,
};

/* The calling thread's stack top (its highest address + 1), 0 if
 * unknown. */
static uint64_t stack_top(void)
{
	pthread_attr_t a;
	void *lo;
	size_t sz;

	if (pthread_getattr_np(pthread_self(), &a))
		return 0;
	pthread_attr_getstack(&a, &lo, &sz);
	pthread_attr_destroy(&a);
	return (uint64_t)(uintptr_t)lo + sz;
}

/* A copy of raw stack, redzones and all: not through ASan's memcpy. */
static __attribute__((no_sanitize_address)) void
raw_copy(uint64_t *dst, uint64_t src, size_t n)
{
	const volatile uint64_t *p = (const void *)(uintptr_t)src;

	for (size_t i = 0; i < n; i++)
		dst[i] = p[i];
}

#endif /* SYM_TESTS_STACKSHOT_H */
