/*
 * grow.h - the one way the `sym` tools grow an array: tool_grow().
 *
 * libsym has symi_grow() (libsym/internal.h), which the tools may not use;
 * this is the same contract for tools/<name>.c.  Header-only (static inline,
 * libc only), so that a unit test that compiles one tool file on its own
 * needs nothing more.
 *
 * Bounds stay with the callers: tool_grow() only refuses sizes that do
 * not fit in size_t.  A caller whose array is sized by outside input
 * checks its own cap (UW_MAX_MAPS, REPLY_MAX, ...) before it calls.
 */
#ifndef SYM_TOOLS_GROW_H
#define SYM_TOOLS_GROW_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/**
 * tool_grow() - make room for @need elements of @elem bytes in the array
 * *@arr of *@cap elements, doubling the capacity (from @first for an
 * empty array) until it is enough.
 * @param arr    address of the array pointer (a `struct x **`); the array
 *               may be NULL with *@cap 0.  The caller owns the array
 *               before and after: free() it.
 * @param[in,out] cap  elements allocated
 * @param need   elements wanted; nothing happens when *@cap >= @need
 * @param elem   size of one element, > 0
 * @param first  capacity of the first allocation, > 0
 * @return 0, or -ENOMEM (the size overflows size_t, or realloc() failed)
 *         with *@arr and *@cap untouched, the old array still valid.
 *         New elements are not initialised.
 */
static inline int tool_grow(void *arr, size_t *cap, size_t need, size_t elem,
			    size_t first)
{
	size_t n = *cap ? *cap : first ? first : 1, bytes;
	void *old, *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (__builtin_mul_overflow(n, 2, &n))
			return -ENOMEM;
	}
	if (__builtin_mul_overflow(n, elem, &bytes))
		return -ENOMEM;
	/* memcpy: *arr is a `struct x *`, not a `void *`. */
	memcpy(&old, arr, sizeof(old));
	p = realloc(old, bytes);
	if (!p)
		return -ENOMEM;
	memcpy(arr, &p, sizeof(p));
	*cap = n;
	return 0;
}

#endif /* SYM_TOOLS_GROW_H */
