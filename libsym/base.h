/*
 * base.h - the project's base header: the internals libsym and
 * libsymprofile (libsym/prof/) share - overflow-checked sizes, the
 * allocation helpers (alloc.c), the capped growable buffer struct
 * symi_buf (buf.c) - and, at its end, the ban list (banned.h).
 *
 * Every C file of the project but libsymprof's (tools/symprof/, libc
 * only) includes it after its last system header, as git's files include
 * git-compat-util.h: so the ban list holds everywhere, and a file cannot
 * forget it (tests/e2e/t0031-base-header.sh checks both).  It is not
 * given with -include: banned.h before the system headers would turn
 * glibc's own declarations of the banned names (and its fortified
 * inline wrappers under _FORTIFY_SOURCE) into errors.  For the same
 * reason this header includes the system headers that declare banned
 * functions (stdio.h, stdlib.h, string.h, time.h) before banned.h: a
 * header included after it cannot bring them in later.
 *
 * Nothing here is installed or exported.  alloc.c and buf.c are compiled
 * into both libraries: each shared library has its own hidden copy, and
 * a program that links the static archives (the sym tool, symd, the
 * tests) gets one.  The names are symi_* everywhere.
 */
#ifndef SYM_BASE_H
#define SYM_BASE_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asan.h"

/* Overflow-checked size arithmetic: return false on overflow. */
static inline bool symi_add(size_t a, size_t b, size_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}
static inline bool symi_mul(size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* The value of the hex digit @c (either case), or -1. */
static inline int symi_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
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
 * symi_malloc_huge() - symi_malloc() for a large buffer written soon and
 * mostly whole: from @n of 512 KiB up, rounded up to whole 2 MiB pages,
 * aligned to them and advised MADV_HUGEPAGE, so that a first write takes
 * a page fault per 2 MiB, not per 4 KiB (only advice: where transparent
 * huge pages are off it is an ordinary buffer).  On the VMs this project
 * runs on a 4 KiB fault costs 1.2 to 20 us, a huge page's 30 to 130 us
 * (zeroing it whole): a 4 MiB buffer written in 4 KiB pages took 10 ms,
 * in huge pages 0.12 ms, and from 200 to 450 KiB written the huge page
 * is the cheaper.  free() it.
 */
void *symi_malloc_huge(size_t n);
/* symi_calloc_huge() - symi_calloc() in the same way: zeroed. */
void *symi_calloc_huge(size_t n, size_t m);
/* The bytes of memory symi_malloc_huge(@n) and symi_map_zeroed(@n) take
 * once written: @n, or from 512 KiB up, whole 2 MiB pages. */
size_t symi_huge_size(size_t n);

/*
 * symi_map_zeroed() - @n bytes of zeros straight from mmap(), for a large
 * buffer that may be written only in part: a page is made (and zeroed by
 * the kernel) when first touched, none before.  From 512 KiB up the
 * mapping is whole 2 MiB pages, aligned and advised MADV_HUGEPAGE, as
 * symi_malloc_huge()'s (a huge page must lie inside the mapping: unaligned
 * and cut at @n, 1.6 MiB of libjvm's 5.5 MiB of strings took 4 KiB
 * faults, 397 of them).  Unlike symi_calloc_huge(), which writes every
 * byte, it costs nothing for the parts never read (except in the slab,
 * which it takes from first while the slab has room: see
 * symi_malloc_slab()).  NULL when out of memory (or a test's failure).
 * Release it with symi_unmap(p, n).
 */
void *symi_map_zeroed(size_t n);
void symi_unmap(void *p, size_t n);

/*
 * symi_malloc_slab() - symi_malloc() for a buffer a table is decoded into
 * or through: from the process's slab of huge pages while it has room
 * (alloc.c: its first 8 MiB of such buffers), else symi_malloc_huge()'s
 * (its own huge pages from 512 KiB, malloc() below).  The slab's
 * pieces are not zeroed; symi_map_zeroed() takes its pieces there too.
 * Free it with symi_free_slab(p, n), @n as allocated; the most recent
 * piece freed first is taken back at once (scratch).
 */
void *symi_malloc_slab(size_t n);
void symi_free_slab(void *p, size_t n);

/*
 * symi_advise_huge() - advise MADV_HUGEPAGE on the whole 2 MiB pages
 * inside [@buf, @buf + @len) when @len is 4 MiB or more (a no-op below,
 * and where transparent huge pages are off).  For a large buffer that
 * came from malloc() or realloc(): symi_grow() calls it on every growth.
 */
void symi_advise_huge(void *buf, size_t len);

/*
 * For tests that link libsym.a and sweep N in one process: from now on,
 * fail the @n-th allocation (0: none; LONG_MAX: none, but count them),
 * counting from zero again; this replaces SYM_TEST_FAIL_ALLOC.  Not
 * thread-safe against allocations under way.  symi_test_alloc_count():
 * the allocations counted since, the failed one included.
 */
void symi_test_fail_alloc(long n);
long symi_test_alloc_count(void);

/*
 * struct symi_buf - a growable byte string with a cap, in the spirit of
 * git's strbuf and curl's dynbuf: every buffer that grows with outside
 * input (a request, a perf script line, a profile's strings) or with the
 * size of an answer has one, given at symi_buf_init().
 *
 * Invariants: p is NULL until the first growth; after it p[len] is
 * always '\0' (the bytes may hold NULs of their own), len <= max and
 * alloc <= max + 1.  Every append is all-or-nothing: on failure the
 * buffer is as it was, bytes, length and NUL.  Appends return 0, -E2BIG
 * (len would pass max: the input or the answer is too large; retrying
 * the same append cannot help) or -ENOMEM (memory ran out; fault
 * injection counts the growths, see symi_malloc()).
 *
 * Ownership: the caller's storage; the bytes are owned by the buffer
 * until symi_buf_detach() hands them over.  symi_buf_release() frees
 * them.  Not thread-safe: one thread per buffer at a time.
 *
 * Reading: b->p and b->len directly (b->p may be NULL when len is 0;
 * symi_buf_str() never is).  Writing only through the functions below,
 * or into room made by symi_buf_grow() followed by symi_buf_setlen().
 */
struct symi_buf {
	char *p;		/* owned, free(); NULL until the first growth */
	size_t len;		/* bytes held, the terminating NUL not counted */
	size_t alloc;		/* bytes allocated at p (the NUL's included) */
	size_t max;		/* the cap on len */
};

/* The largest cap: room for the NUL after it. */
#define SYMI_BUF_MAX_CAP (SIZE_MAX - 1)

/* A static initializer, as symi_buf_init(b, cap) for a cap of at most
 * SYMI_BUF_MAX_CAP. */
#define SYMI_BUF_INIT(cap) { NULL, 0, 0, (cap) }

/*
 * symi_buf_init() - make @b an empty buffer that will hold at most @max
 * bytes (0 is a real cap: only "" fits; above SYMI_BUF_MAX_CAP it is
 * lowered to it).  Allocates nothing.
 */
void symi_buf_init(struct symi_buf *b, size_t max);

/* symi_buf_release() - free the bytes; @b is left zeroed (cap 0 too).
 * NULL is a no-op, and so is a second release. */
void symi_buf_release(struct symi_buf *b);

/* symi_buf_reset() - length 0, keeping the memory and the cap. */
void symi_buf_reset(struct symi_buf *b);

/* symi_buf_setlen() - set the length to @len and put the NUL after it:
 * a rollback to a length seen before, or the end of bytes written into
 * the room symi_buf_grow() made.  @len is lowered to fit the room. */
void symi_buf_setlen(struct symi_buf *b, size_t len);

/*
 * symi_buf_detach() - take the bytes out of @b.
 * @param[out] len  their length; may be NULL
 * @return the bytes, NUL-terminated, which the caller now owns (free());
 *         NULL when nothing was ever allocated (then *len is 0).  @b is
 *         left empty, with the same cap.
 */
char *symi_buf_detach(struct symi_buf *b, size_t *len);

/*
 * symi_buf_grow() - make room for @extra more bytes (and the NUL), so
 * that p is not NULL after it, even for @extra 0.  Growth doubles from
 * 64 bytes, never past max + 1.
 * @return 0, -E2BIG (len + extra > max), -ENOMEM
 */
int symi_buf_grow(struct symi_buf *b, size_t extra);

/* The slow path of symi_buf_add(): growth, or an error. */
int symi_buf_add_slow(struct symi_buf *b, const void *s, size_t n);

/* symi_buf_add() - append @n bytes of @s (copied; NULL only with @n 0). */
static inline int symi_buf_add(struct symi_buf *b, const void *s, size_t n)
{
	/* alloc > len once allocated, and alloc <= max + 1: room for n
	 * bytes and the NUL is within the cap. */
	if (n < b->alloc - b->len) {
		if (n)
			memcpy(b->p + b->len, s, n);
		b->len += n;
		b->p[b->len] = '\0';
		return 0;
	}
	return symi_buf_add_slow(b, s, n);
}

/* symi_buf_addc() - append one byte. */
static inline int symi_buf_addc(struct symi_buf *b, char c)
{
	if (b->len + 1 < b->alloc) {
		b->p[b->len++] = c;
		b->p[b->len] = '\0';
		return 0;
	}
	return symi_buf_add_slow(b, &c, 1);
}

/* symi_buf_addstr() - append a NUL-terminated string (not its NUL). */
static inline int symi_buf_addstr(struct symi_buf *b, const char *s)
{
	return symi_buf_add(b, s, strlen(s));
}

/* symi_buf_add_lit() - append a string literal, e.g. "{\"modules\":[". */
#define symi_buf_add_lit(b, lit) symi_buf_add((b), "" lit, sizeof(lit) - 1)

/*
 * symi_buf_addf() - append printf-style.  The text is formatted into the
 * room there is; when it does not fit, the buffer grows once to its
 * exact length and it is formatted again.
 * @return 0, -E2BIG, -ENOMEM, -EINVAL (vsnprintf() failed: a result over
 *         INT_MAX bytes, or a bad format)
 */
int symi_buf_addf(struct symi_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int symi_buf_vaddf(struct symi_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* symi_buf_add_u64() - @v in decimal: "0", "18446744073709551615". */
int symi_buf_add_u64(struct symi_buf *b, uint64_t v);

/* symi_buf_add_i64() - @v in decimal, with '-' when negative. */
int symi_buf_add_i64(struct symi_buf *b, int64_t v);

/* symi_buf_add_hex() - @v in lowercase hex, at least @width digits
 * (zero-padded; at most 16 count), no prefix: "0", "4011d6",
 * "000000000040f1a0" for width 16. */
int symi_buf_add_hex(struct symi_buf *b, uint64_t v, int width);

/* symi_write_all() - write all @len bytes of @buf to @fd, across short
 * writes and EINTR.  0 or -errno (what went before is written). */
int symi_write_all(int fd, const void *buf, size_t len);

/* The bytes as a C string: "" when nothing was ever allocated. */
static inline const char *symi_buf_str(const struct symi_buf *b)
{
	return b->p ? b->p : "";
}

/* Last: the ban list, after every system header (see the top). */
#include "banned.h"

#endif /* SYM_BASE_H */
