/*
 * out.c - libsymprof's small writer of the raw stack format's lexical
 * pieces (docs/raw-format.md, "Lexical rules"): decimal and lowercase hex
 * numbers, percent-encoded strings, into a buffer flushed with write(2).
 * No stdio: the drain thread writes the final profile even when the
 * program died holding a stdio lock.  The first write error sticks in
 * o->err and later output is discarded.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "symprof.h"

static void flush_some(struct sp_out *o)
{
	size_t off = 0;

	while (off < o->len && !o->err) {
		ssize_t w = write(o->fd, o->buf + off, o->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)w;
	}
	o->len = 0;
}

static void put(struct sp_out *o, const char *s, size_t n)
{
	while (n) {
		size_t room = sizeof(o->buf) - o->len, k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			flush_some(o);
	}
}

void sp_out_ch(struct sp_out *o, char c)
{
	if (o->len == sizeof(o->buf))
		flush_some(o);
	o->buf[o->len++] = c;
}

void sp_out_str(struct sp_out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* Percent-encoding: bytes below 0x21, above 0x7e and '%' become %XX;
 * empty is "-", and a literal "-" is "%2D". */
void sp_out_enc(struct sp_out *o, const char *s)
{
	static const char hexd[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;

	if (!*p) {
		sp_out_ch(o, '-');
		return;
	}
	if (p[0] == '-' && !p[1]) {
		sp_out_str(o, "%2D");
		return;
	}
	for (; *p; p++) {
		if (*p < 0x21 || *p > 0x7e || *p == '%') {
			sp_out_ch(o, '%');
			sp_out_ch(o, hexd[*p >> 4]);
			sp_out_ch(o, hexd[*p & 15]);
		} else {
			sp_out_ch(o, (char)*p);
		}
	}
}

void sp_out_u64(struct sp_out *o, uint64_t v)
{
	char tmp[24];
	size_t n = sizeof(tmp);

	do {
		tmp[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, tmp + n, sizeof(tmp) - n);
}

void sp_out_i64(struct sp_out *o, int64_t v)
{
	if (v < 0) {
		sp_out_ch(o, '-');
		sp_out_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		sp_out_u64(o, (uint64_t)v);
	}
}

void sp_out_hex(struct sp_out *o, uint64_t v)
{
	static const char hexd[] = "0123456789abcdef";
	char tmp[16];
	size_t n = sizeof(tmp);

	do {
		tmp[--n] = hexd[v & 15];
		v >>= 4;
	} while (v);
	put(o, tmp + n, sizeof(tmp) - n);
}

int sp_out_flush(struct sp_out *o)
{
	flush_some(o);
	return o->err;
}
