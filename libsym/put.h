/*
 * put.h - the printer's byte movers: strings and numbers written at a
 * pointer into a buffer the caller has made room in (tools/addr2line.c's
 * struct obuf, or the GNU text libsym writes itself: libsym/gnutext.h).
 * Nothing here allocates or checks a buffer's size except where a
 * function says so; each says how many bytes it may store past the end
 * it returns, which the caller's room must cover.  At its end, the one
 * frame of GNU addr2line's text both printers write (gnu_put()).
 *
 * A warm `sym lookup` prints one answer per address in the input's order,
 * so the lengths of the strings and numbers it prints change at random
 * from one answer to the next.  A branch on a length is then a
 * mispredicted branch (about 15 cycles) once or twice an answer: on the
 * bench's 100,000 python3.11d addresses, strlen() and the length tests of
 * put() and put_u32() cost more than the copies (docs/bench.md, "Printing
 * without branches on lengths").  put_str() and put_u32_5() take no branch
 * on a length in the common case.
 */
#ifndef SYM_PUT_H
#define SYM_PUT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "asan.h"

/*
 * put() - copy @n bytes of @s to @w; the end of them.  A name or a path
 * of 8 to 64 bytes is copied inline, by two to four moves that may
 * overlap (within @s's and @w's n bytes): no call, and no registers saved
 * around one.  Stores exactly @n bytes.
 */
static inline __attribute__((always_inline)) char *put(char *w,
						      const char *s,
						      size_t n)
{
	if (__builtin_constant_p(n) || n < 8 || n > 64) {
		memcpy(w, s, n);
	} else if (n <= 16) {
		memcpy(w, s, 8);
		memcpy(w + n - 8, s + n - 8, 8);
	} else {
		memcpy(w, s, 16);
		memcpy(w + n - 16, s + n - 16, 16);
		if (n > 32) {
			memcpy(w + 16, s + 16, 16);
			memcpy(w + n - 32, s + n - 32, 16);
		}
	}
	return w + n;
}

/* A string literal at @w. */
#define PUT_LIT(w, lit) put((w), "" lit, sizeof(lit) - 1)

/* "00" to "99". */
static const char put_pairs[201] =
	"0001020304050607080910111213141516171819"
	"2021222324252627282930313233343536373839"
	"4041424344454647484950515253545556575859"
	"6061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/*
 * put_u32() - @v in decimal at @w, which has room for 10 bytes, two
 * digits a step; up to 4 digits without a loop.  Stores only the digits.
 * @return the end of the digits
 */
static inline __attribute__((always_inline)) char *put_u32(char *w,
							  uint32_t v)
{
	uint32_t hi;
	size_t n;
	char *p;

	if (v < 100) {
		if (v < 10) {
			*w = (char)('0' + v);
			return w + 1;
		}
		memcpy(w, put_pairs + 2 * v, 2);
		return w + 2;
	}
	if (v < 10000) {
		hi = v / 100;
		if (hi < 10) {
			*w++ = (char)('0' + hi);
		} else {
			memcpy(w, put_pairs + 2 * hi, 2);
			w += 2;
		}
		memcpy(w, put_pairs + 2 * (v - hi * 100), 2);
		return w + 2;
	}
	for (n = 5, hi = 100000; n < 10 && v >= hi; n++, hi *= 10)
		;
	p = w + n;
	while (v >= 100) {
		p -= 2;
		memcpy(p, put_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(p - 2, put_pairs + 2 * v, 2);
	else
		p[-1] = (char)('0' + v);
	return w + n;
}

/*
 * put_u32_5() - put_u32() without a branch on the number of digits for
 * @v below 100,000 (a line number, a discriminator): the five digits are
 * made with their leading zeros, and the zeros shifted out.  @w must have
 * room for 10 bytes; 8 are stored for @v below 100,000.
 * @return the end of the digits
 */
static inline __attribute__((always_inline)) char *put_u32_5(char *w,
							    uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t q = v / 100, r = v - q * 100, q2 = q / 100,
		 r2 = q - q2 * 100;
	unsigned n = 1 + (v >= 10) + (v >= 100) + (v >= 1000) + (v >= 10000);
	uint16_t lo, mid;
	uint64_t x;

	if (v >= 100000)
		return put_u32(w, v);
	memcpy(&lo, put_pairs + 2 * r, 2);
	memcpy(&mid, put_pairs + 2 * r2, 2);
	/* Byte 0, the lowest, is the first digit printed. */
	x = (uint64_t)('0' + q2) | (uint64_t)mid << 8 | (uint64_t)lo << 24;
	x >>= 8 * (5 - n);
	memcpy(w, &x, sizeof(x));
	return w + n;
#else
	return put_u32(w, v);
#endif
}

/* What put_str() stores whatever the string's length. */
#define PUT_STR_CHUNK 64

#if defined(__SSE2__) && !defined(SYMI_ASAN)
/* One chunk of @s to @w; the NUL's place in it, or PUT_STR_CHUNK. */
static inline __attribute__((always_inline)) unsigned
put_chunk(char *w, const char *s)
{
	const __m128i z = _mm_setzero_si128();
	const __m128i *p = (const __m128i *)(const void *)s;
	__m128i *q = (__m128i *)(void *)w;
	__m128i v0 = _mm_loadu_si128(p), v1 = _mm_loadu_si128(p + 1);
	__m128i v2 = _mm_loadu_si128(p + 2), v3 = _mm_loadu_si128(p + 3);
	uint64_t m;

	_mm_storeu_si128(q, v0);
	_mm_storeu_si128(q + 1, v1);
	_mm_storeu_si128(q + 2, v2);
	_mm_storeu_si128(q + 3, v3);
	m = (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v0, z)) |
	    (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v1, z)) << 16 |
	    (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v2, z)) << 32 |
	    (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v3, z)) << 48;
	return m ? (unsigned)__builtin_ctzll(m) : PUT_STR_CHUNK;
}
#endif

/* put_str() past its first chunk, or where the chunk cannot be read. */
static __attribute__((noinline, unused)) char *
put_str_rest(char *w, const char *end, const char *s, size_t keep)
{
	size_t n;

#if defined(__SSE2__) && !defined(SYMI_ASAN)
	while (((uintptr_t)s & 4095) <= 4096 - PUT_STR_CHUNK &&
	       (size_t)(end - w) >= PUT_STR_CHUNK &&
	       (size_t)(end - w) - PUT_STR_CHUNK >= keep) {
		unsigned c = put_chunk(w, s);

		if (c < PUT_STR_CHUNK)
			return w + c;
		s += PUT_STR_CHUNK;
		w += PUT_STR_CHUNK;
	}
#endif
	n = strlen(s);
	if (n > (size_t)(end - w) || keep > (size_t)(end - w) - n)
		return NULL;
	memcpy(w, s, n);
	return w + n;
}

/*
 * put_str() - copy the string @s, without its NUL, to @w; the end of the
 * copy.  Copying and measuring are one pass: PUT_STR_CHUNK bytes at a
 * time are loaded from @s and stored at @w, and the NUL found among them
 * gives the end, with no branch on where it is.  @w must have room for
 * PUT_STR_CHUNK bytes before @end; a string longer than that goes on a
 * chunk at a time while PUT_STR_CHUNK + @keep bytes are left before
 * @end.  Whole chunks are stored, up to the one that holds the NUL: up to
 * PUT_STR_CHUNK - 1 bytes past the end returned, all before @end.
 *
 * A chunk that would start within PUT_STR_CHUNK bytes of the end of a 4
 * KiB page, or that the room cannot take, is finished by strlen() and
 * memcpy(): the rest is copied when its length and @keep more bytes fit
 * before @end, else NULL is returned and nothing past @w is the caller's
 * (the caller takes its slow path, with the lengths known).
 *
 * The fast path reads past the NUL, within the NUL's 4 KiB page, so it
 * cannot fault; memory checkers would report the read as one past the
 * string, so it is not taken under ASan (and Valgrind's memcheck, which
 * no test runs on `sym`, would report it too).
 */
static inline __attribute__((always_inline)) char *
put_str(char *w, const char *end, const char *s, size_t keep)
{
#if defined(__SSE2__) && !defined(SYMI_ASAN)
	if (((uintptr_t)s & 4095) <= 4096 - PUT_STR_CHUNK) {
		unsigned c = put_chunk(w, s);

		if (c < PUT_STR_CHUNK)
			return w + c;
		/* No NUL in the first chunk: the rest out of line (a
		 * loop inlined for every string cost libc's and
		 * python3.11d's warm runs 2%). */
		s += PUT_STR_CHUNK;
		w += PUT_STR_CHUNK;
	}
#endif
	return put_str_rest(w, end, s, keep);
}

/*
 * GNU addr2line's text of a frame: "NAME\nFILE:LINE\n", or with -p
 * "NAME at FILE:LINE\n", a discriminator after the line when there is
 * one, and "FILE:?" without a line.
 */

/* The most bytes gnu_put() writes besides the name and the file:
 * " at ", ":", the line, " (discriminator N)\n", " (inlined by) ". */
#define GNU_FRAME_FIXED 64
/* The room gnu_put() needs beyond the strings' bytes: put_str() stores
 * whole chunks of PUT_STR_CHUNK bytes. */
#define GNU_FAST_ROOM (2 * PUT_STR_CHUNK + GNU_FRAME_FIXED)

/* The text of a GNU frame: its strings and numbers, as printed. */
struct gnu_text {
	const char *name;	/* NULL without -f */
	const char *file;
	uint32_t line;
	uint32_t disc;		/* the innermost frame's discriminator */
	bool more;		/* " (inlined by) " follows, with -p */
};

/*
 * gnu_put() - GNU addr2line's text of frame @t (binutils 2.40
 * addr2line.c, translate_addresses(); with -p as @pretty says) at @w,
 * which has GNU_FAST_ROOM bytes to spare before @end; the end of it.
 * Each string is copied and measured in one pass (put_str()), the
 * numbers by put_u32_5(), and the discriminator's text is written and
 * then kept or not, so that the lengths of the strings and numbers take
 * no branch.  NULL when a string is longer than the room: with room for
 * the strings' strlen()s as well it never is (tools/addr2line.c's
 * gnu_put_slow()).
 */
static inline __attribute__((always_inline)) char *
gnu_put(char *w, const char *end, bool pretty, const struct gnu_text *t)
{
	const size_t keep = PUT_STR_CHUNK + GNU_FRAME_FIXED;
	char *d;

	if (t->name) {
		w = put_str(w, end, t->name, keep);
		if (!w)
			return NULL;
		w = pretty ? PUT_LIT(w, " at ") : PUT_LIT(w, "\n");
	}
	w = put_str(w, end, t->file, keep);
	if (!w)
		return NULL;
	*w++ = ':';
	/* bfd keeps the first discriminator for the inliners. */
	if (t->line) {
		w = put_u32_5(w, t->line);
		d = PUT_LIT(w, " (discriminator ");
		d = put_u32_5(d, t->disc);
		*d++ = ')';
		w = t->disc ? d : w;
		*w++ = '\n';
	} else {
		w = PUT_LIT(w, "?\n");
	}
	if (t->more && pretty)
		w = PUT_LIT(w, " (inlined by) ");
	return w;
}

#endif /* SYM_PUT_H */
