/*
 * t-lookup-hex.c - tool_parse_hex() (tools/util.c), the hex address
 * parser of `sym addr2line` and `sym lookup`, written by hand for the
 * warm path (issue 19): the values and errors of the strtoull() version
 * it replaced, on the cases that version's rules make special, then on
 * 200,000 random strings of hex-ish bytes against that version.
 */
#include <ctype.h>
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
	return tap_done();
}
