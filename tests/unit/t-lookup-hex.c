/*
 * t-lookup-hex.c - tool_parse_hex() (tools/util.c), the hex address
 * parser of `sym addr2line` and `sym lookup`, written by hand for the
 * warm path (issue 19): the values and errors of the strtoull() version
 * it replaced, on the cases that version's rules make special, then on
 * 200,000 random strings of hex-ish bytes against that version.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "tools.h"
#include "hexoracle.h"
#include "base.h"

static const struct {
	const char *s;
	int err;
	uint64_t v;
} cases[] = {
	{ "0x3c265", 0, 0x3c265 },
	{ "3c265", 0, 0x3c265 },
	{ "0X3C265", 0, 0x3c265 },
	{ "0", 0, 0 },
	{ "00", 0, 0 },
	{ "0x0", 0, 0 },
	{ "ffffffffffffffff", 0, UINT64_MAX },
	{ "0x00000000000000000000ffffffffffffffff", 0, UINT64_MAX },
	{ "10000000000000000", -ERANGE, 0 },
	{ "0x10000000000000000zz", -ERANGE, 0 },	/* before junk */
	{ "0x0x10", 0, 0x10 },		/* strtoull() skips a second 0x */
	{ "0x0X10", 0, 0x10 },
	{ "0x0xg", -EINVAL, 0 },	/* ... only before a digit */
	{ "0x0x", -EINVAL, 0 },
	{ "0x", -EINVAL, 0 },
	{ "0xg", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ " 0x10", -EINVAL, 0 },	/* no blanks */
	{ "0x10 ", -EINVAL, 0 },
	{ "0x10\r", -EINVAL, 0 },
	{ "+0x10", -EINVAL, 0 },	/* no sign */
	{ "-1", -EINVAL, 0 },
	{ "0x-1", -EINVAL, 0 },
	{ "malloc", -EINVAL, 0 },
	{ "abc", 0, 0xabc },		/* a symbol named abc is an address */
	{ "x10", -EINVAL, 0 },
};

/*
 * tool_hex_lines(), the input loop's fast path: on 2,000 random chunks of
 * lines (most of them [0x]1-16 digits, some anything else: bytes of 0x80
 * and more, blanks, a second 0x, long runs of zeros), in buffers of
 * exactly their size so that a sanitizer sees a read past the end, every
 * line it takes has the value tool_scan_hex() gives it and ends in its
 * '\n'; it stops at the first line it does not take, and takes every line
 * of 1 to 16 digits that ends within its 64 bytes.
 */
static void test_hex_lines(void)
{
	static const char alphabet[] = "0123456789abcdefABCDEFxXg \x80\xff";
	unsigned seed = 21;
	size_t bad = 0, taken = 0;

	for (int round = 0; round < 2000; round++) {
		size_t len = 200 + (size_t)(rand_r(&seed) % 800), j = 0;
		char *b = malloc(len);
		const char *p, *end;

		if (!b)
			abort();
		while (j < len) {
			size_t n = 1 + (size_t)(rand_r(&seed) % 16);

			if (rand_r(&seed) % 2 && j + 2 < len) {
				b[j++] = '0';
				b[j++] = "xX"[rand_r(&seed) % 2];
			}
			for (size_t k = 0; k < n && j < len; k++)
				b[j++] = rand_r(&seed) % 40 ?
					 alphabet[rand_r(&seed) % 22] :
					 alphabet[rand_r(&seed) %
						  (sizeof(alphabet) - 1)];
			if (rand_r(&seed) % 50 == 0)	/* a long line */
				for (size_t k = 0; k < 70 && j < len; k++)
					b[j++] = '0';
			if (j < len)
				b[j++] = '\n';
		}
		b[len - 1] = '\n';
		end = b + len;
		p = b;
		while (end - p >= TOOL_HEX_LINES_READ) {
			const char *from = p, *q = p, *e;
			uint64_t got[64], v;
			size_t n = tool_hex_lines(&p, got);

			/* Each line taken, as the slow path takes it. */
			for (size_t i = 0; i < n; i++) {
				if (tool_scan_hex(q, &v, &e) || *e != '\n' ||
				    v != got[i])
					bad++;
				q = memchr(q, '\n', (size_t)(end - q)) + 1;
			}
			taken += n;
			if (q != p)
				bad++;
			/* The first line not taken: not plain, or past the
			 * 64 bytes. */
			e = memchr(p, '\n', (size_t)(end - p));
			if (e && e - from < 64) {
				const char *d = p;

				if (d[0] == '0' && (d[1] | 0x20) == 'x')
					d += 2;
				if (e - d >= 1 && e - d <= 16 &&
				    strspn(d, "0123456789abcdefABCDEF") ==
					    (size_t)(e - d))
					bad++;
			}
			/* Past the line not taken, as the slow path goes. */
			if (!n)
				p = e ? e + 1 : end;
		}
		free(b);
	}
	printf("# %zu lines taken by the fast path\n", taken);
	CHECK(bad == 0 && taken > 20000);
}

int main(void)
{
	static const char alphabet[] = "0123456789abcdefABCDEFxXg +-\r\t";
	unsigned seed = 19;
	size_t bad = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0x5eed, w = 0x5eed;
		int err = tool_parse_hex(cases[i].s, &v);

		tap_ok(err == cases[i].err && hex_oracle(cases[i].s, &w) == err &&
		       (err ? v == 0x5eed : v == cases[i].v && w == v),
		       __FILE__, __LINE__, cases[i].s);
	}
	/* Random strings over the bytes the rules care about. */
	for (int i = 0; i < 200000; i++) {
		char s[40];
		size_t n = (size_t)(rand_r(&seed) % 24), j = 0;
		uint64_t v = 1, w = 2;
		int a, b;

		/* Half of them start with a prefix, some with two. */
		if (rand_r(&seed) % 2) {
			s[j++] = '0';
			s[j++] = "xX"[rand_r(&seed) % 2];
		}
		if (rand_r(&seed) % 8 == 0) {
			memcpy(s + j, "0x", 2);
			j += 2;
		}
		for (; j < n + 4 && j < sizeof(s) - 1; j++)
			s[j] = rand_r(&seed) % 4 ? alphabet[rand_r(&seed) % 22] :
				alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		s[j] = '\0';
		a = tool_parse_hex(s, &v);
		b = hex_oracle(s, &w);
		if (a != b || (!a && v != w)) {
			if (bad++ < 5)
				printf("# '%s': %d %#llx, strtoull %d %#llx\n", s,
				       a, (unsigned long long)v, b,
				       (unsigned long long)w);
		}
	}
	CHECK(bad == 0);
	/* The digit table, against isxdigit() in the C locale. */
	bad = 0;
	for (int c = 0; c < 256; c++) {
		int want = !isxdigit(c) ? TOOL_HEX_NONE :
			   isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;

		bad += tool_hex_digit[c] != want;
	}
	CHECK(bad == 0);
	/* tool_scan_hex(): the byte after the digits, whatever it is (the
	 * input loop wants a newline there). */
	{
		const char *s = "0x3c265\n0x10", *end = NULL;
		uint64_t v = 0;

		CHECK(tool_scan_hex(s, &v, &end) == 0 && v == 0x3c265 &&
		      end == s + 7);
		CHECK(tool_scan_hex("0x\n", &v, &end) == -EINVAL);
		CHECK(tool_scan_hex("10000000000000000\n", &v, &end) ==
		      -ERANGE);
	}
	test_hex_lines();
	return tap_done();
}
