/*
 * symprof-bare.c - the floor of any LD_PRELOAD allocation profiler, for
 * tests/bench/symprof-alloc-bench.sh: the malloc family interposed, each
 * entry point one jump to glibc's own (__libc_*), counting nothing.  What
 * it costs a program is the call hop every interposer pays before doing
 * any work of its own (docs/symprof.md, "Cost of alloc mode").
 *
 *	cc -O2 -shared -fPIC -fno-plt -I libsym -o bare.so symprof-bare.c
 */
#include <errno.h>
#include <stddef.h>

#include "base.h"

extern void *__libc_malloc(size_t n);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t n, size_t sz);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

#define EXPORT __attribute__((visibility("default")))

EXPORT void *malloc(size_t n)
{
	return __libc_malloc(n);
}

EXPORT void free(void *p)
{
	__libc_free(p);
}

EXPORT void *calloc(size_t n, size_t sz)
{
	return __libc_calloc(n, sz);
}

EXPORT void *realloc(void *p, size_t n)
{
	return __libc_realloc(p, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
	return __libc_memalign(align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	return __libc_memalign(align, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (align % sizeof(void *) || (align & (align - 1)) || !align)
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *valloc(size_t n)
{
	return __libc_valloc(n);
}

EXPORT void *pvalloc(size_t n)
{
	return __libc_pvalloc(n);
}
