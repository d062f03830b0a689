/*
 * buf.c - struct symi_buf, the capped growable byte string (base.h).
 *
 * Compiled into libsym and libsymprofile, like alloc.c, and used by the
 * daemon and the tool through the static archives.  Growth goes through
 * symi_realloc(), so SYM_TEST_FAIL_ALLOC reaches every buffer.  Every
 * function keeps the invariants of base.h: p[len] == '\0' once p is
 * set, len <= max, alloc <= max + 1, and a failed append changes
 * nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"

/* The first allocation, unless the cap is smaller. */
#define BUF_MIN_ALLOC 64

void symi_buf_init(struct symi_buf *b, size_t max)
{
	b->p = NULL;
	b->len = b->alloc = 0;
	b->max = max > SYMI_BUF_MAX_CAP ? SYMI_BUF_MAX_CAP : max;
}

void symi_buf_release(struct symi_buf *b)
{
	if (!b)
		return;
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void symi_buf_reset(struct symi_buf *b)
{
	symi_buf_setlen(b, 0);
}

void symi_buf_setlen(struct symi_buf *b, size_t len)
{
	/* Never past the room: a caller's bug must not write out of
	 * bounds. */
	if (len >= b->alloc)
		len = b->alloc ? b->alloc - 1 : 0;
	b->len = len;
	if (b->p)
		b->p[len] = '\0';
}

char *symi_buf_detach(struct symi_buf *b, size_t *len)
{
	char *p = b->p;

	if (len)
		*len = b->len;
	b->p = NULL;
	b->len = b->alloc = 0;
	return p;
}

int symi_buf_grow(struct symi_buf *b, size_t extra)
{
	size_t want, alloc, top;
	char *np;

	if (extra > b->max || b->len > b->max - extra)
		return -E2BIG;
	/* max <= SIZE_MAX - 1: neither sum below overflows. */
	want = b->len + extra + 1;
	top = b->max + 1;
	if (b->p && want <= b->alloc)
		return 0;
	alloc = b->alloc ? b->alloc : BUF_MIN_ALLOC;
	while (alloc < want)
		alloc = alloc > top / 2 ? top : 2 * alloc;
	if (alloc > top)
		alloc = top;
	np = symi_realloc(b->p, alloc);
	if (!np)
		return -ENOMEM;
	if (!b->p)
		np[0] = '\0';
	b->p = np;
	b->alloc = alloc;
	return 0;
}

int symi_buf_add_slow(struct symi_buf *b, const void *s, size_t n)
{
	int err = symi_buf_grow(b, n);

	if (err)
		return err;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int symi_buf_vaddf(struct symi_buf *b, const char *fmt, va_list ap)
{
	size_t room = b->p ? b->alloc - b->len : 0;
	va_list cp;
	int n, err;

	/* First into the room there is (most appends fit). */
	va_copy(cp, ap);
	n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, cp);
	va_end(cp);
	if (n >= 0 && (size_t)n < room) {
		b->len += (size_t)n;	/* room <= max + 1 - len */
		return 0;
	}
	/* It did not fit, or failed: what it wrote is past the NUL's
	 * place, but it may have overwritten the NUL itself. */
	if (b->p)
		b->p[b->len] = '\0';
	if (n < 0)
		return -EINVAL;
	err = symi_buf_grow(b, (size_t)n);
	if (err)
		return err;
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int symi_buf_addf(struct symi_buf *b, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = symi_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return err;
}

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/* @v in decimal at the end of tmp[0..24); returns the first index. */
static size_t fmt_u64(char tmp[24], uint64_t v)
{
	size_t i = 24;

	while (v >= 100) {
		unsigned int r = (unsigned int)(v % 100);

		v /= 100;
		i -= 2;
		memcpy(tmp + i, digit_pairs + 2 * r, 2);
	}
	if (v >= 10) {
		i -= 2;
		memcpy(tmp + i, digit_pairs + 2 * v, 2);
	} else {
		tmp[--i] = (char)('0' + v);
	}
	return i;
}

int symi_buf_add_u64(struct symi_buf *b, uint64_t v)
{
	char tmp[24];
	size_t i = fmt_u64(tmp, v);

	return symi_buf_add(b, tmp + i, 24 - i);
}

int symi_buf_add_i64(struct symi_buf *b, int64_t v)
{
	char tmp[24];
	/* -(v + 1) + 1 avoids negating INT64_MIN. */
	uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
	size_t i = fmt_u64(tmp, u);

	if (v < 0)
		tmp[--i] = '-';
	return symi_buf_add(b, tmp + i, 24 - i);
}

int symi_buf_add_hex(struct symi_buf *b, uint64_t v, int width)
{
	char tmp[16];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (i > 0 && width > (int)(sizeof(tmp) - i))
		tmp[--i] = '0';
	return symi_buf_add(b, tmp + i, sizeof(tmp) - i);
}

int symi_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
