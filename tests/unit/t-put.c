/*
 * t-put.c - the printer's byte movers (libsym/put.h): put_u32() and
 * put_u32_5() against snprintf() on every value below 1,100,000, the
 * powers of ten around them and 1,000,000 random values; put_str() on
 * strings of every length up to 300 at every distance from the end of a
 * page whose next page is not mapped (a read past the page would
 * fault), with the bytes it may store checked against the room (whole
 * chunks of 64, up to the one with the NUL), and with rooms too small for
 * the slow path.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "put.h"
#include "base.h"

#define diag(...) (printf("#   "), printf(__VA_ARGS__), printf("\n"))
#define ok_(c, ...) tap_ok(!!(c), __FILE__, __LINE__, what_(__VA_ARGS__))

static const char *what_(const char *fmt, ...)
{
	static char b[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	return b;
}

/* One value through both number writers; false on the first difference. */
static bool number_ok(uint32_t v)
{
	char want[16], got[32], got5[32];
	int n = snprintf(want, sizeof(want), "%" PRIu32, v);
	char *e = put_u32(got, v), *e5 = put_u32_5(got5, v);

	if (e - got != n || memcmp(got, want, (size_t)n) ||
	    e5 - got5 != n || memcmp(got5, want, (size_t)n)) {
		diag("%" PRIu32 ": put_u32 \"%.*s\", put_u32_5 \"%.*s\"", v,
		     (int)(e - got), got, (int)(e5 - got5), got5);
		return false;
	}
	return true;
}

static void test_numbers(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	bool ok = true;

	for (uint32_t v = 0; v < 1100000 && ok; v++)
		ok = number_ok(v);
	ok_(ok, "put_u32 and put_u32_5 print 0 to 1,099,999 as snprintf");
	ok = true;
	for (uint64_t p = 1; p <= UINT32_MAX && ok; p *= 10)
		ok = number_ok((uint32_t)p) && number_ok((uint32_t)(p - 1)) &&
		     number_ok((uint32_t)(p + 1));
	ok = ok && number_ok(UINT32_MAX) && number_ok(UINT32_MAX - 1);
	ok_(ok, "... and the powers of ten, their neighbours, UINT32_MAX");
	ok = true;
	for (int i = 0; i < 1000000 && ok; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ok = number_ok((uint32_t)x);
	}
	ok_(ok, "... and 1,000,000 random values");
}

/*
 * put_str() of a string of @len bytes (and its NUL) whose NUL is @tail
 * bytes before the end of @page's first page, copied into a buffer of
 * @room bytes; the room must take PUT_STR_CHUNK bytes.  Checks the copy,
 * its end, that nothing beyond max(len, PUT_STR_CHUNK) bytes was
 * stored, and NULL exactly when the slow path lacks len + @keep bytes.
 */
static bool str_ok(char *page, long pg, size_t len, size_t tail, size_t room,
		   size_t keep)
{
	static char buf[1024];
	char *s = page + pg - 1 - (long)tail - (long)len, *end, *e;
	/* Whole chunks, up to the one with the NUL. */
	size_t bound = (len / PUT_STR_CHUNK + 1) * PUT_STR_CHUNK;
	bool fast;

	for (size_t i = 0; i < len; i++)
		s[i] = (char)('a' + (i * 7 + len) % 26);
	s[len] = '\0';
	memset(buf, 0x5a, sizeof(buf));
	end = buf + room;
	e = put_str(buf, end, s, keep);
	/* What put.h promises: the fast path for a short string away from
	 * the page's end, where SSE2 is and ASan is not. */
	fast = len < PUT_STR_CHUNK &&
	       ((uintptr_t)s & 4095) <= 4096 - PUT_STR_CHUNK;
#if !defined(__SSE2__) || defined(SYMI_ASAN)
	fast = false;
#endif
	if (!fast && len + keep > room) {
		if (e) {
			diag("len %zu tail %zu room %zu keep %zu: copied", len,
			     tail, room, keep);
			return false;
		}
	} else if (e != buf + len || memcmp(buf, s, len)) {
		diag("len %zu tail %zu room %zu: end %td", len, tail, room,
		     e ? e - buf : -1);
		return false;
	}
	for (size_t i = bound; i < sizeof(buf); i++) {
		if (buf[i] != 0x5a) {
			diag("len %zu tail %zu: byte %zu stored", len, tail, i);
			return false;
		}
	}
	return true;
}

static void test_strings(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *page = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok = true;

	if (page == MAP_FAILED || mprotect(page + pg, (size_t)pg, PROT_NONE)) {
		ok_(false, "a page with no page after it");
		return;
	}
	/* Every length, every distance of the NUL from the page's end up
	 * to two chunks: each start within and beyond the last
	 * PUT_STR_CHUNK bytes of the page. */
	for (size_t len = 0; len <= 300 && ok; len++)
		for (size_t tail = 0; tail < 2 * PUT_STR_CHUNK && ok; tail++)
			ok = str_ok(page, pg, len, tail, 1000, 64);
	ok_(ok, "put_str copies lengths 0 to 300 ending anywhere near an "
		"unmapped page, storing whole chunks of %d bytes at most",
	    PUT_STR_CHUNK);
	/* Rooms at the edge of what the slow path needs. */
	ok = true;
	for (size_t len = 0; len <= 300 && ok; len += 7)
		for (size_t room = PUT_STR_CHUNK; room < 500 && ok; room += 3)
			ok = str_ok(page, pg, len, len % 90, room, 100);
	ok_(ok, "put_str returns NULL where the slow path lacks the room, "
		"and copies where it has it");
	munmap(page, (size_t)pg * 2);
}

int main(void)
{
	test_numbers();
	test_strings();
	return tap_done();
}
