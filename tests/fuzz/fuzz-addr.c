/*
 * fuzz-addr.c - tool_parse_hex() (tools/util.c), the parser of every hex
 * address `sym addr2line` and `sym lookup` read from argv and stdin (and
 * `sym stack`'s): written by hand for the warm path, it must give what
 * the strtoull() version it replaced gave, value and error, for any
 * bytes.  That version is the oracle (tests/unit/hexoracle.h).
 *
 * Input: lines separated by '\n', each parsed from a heap copy of exactly
 * its length plus the NUL (a read past the NUL is caught), then the
 * whole input once more as one string (up to its first NUL).  Then the
 * input loop's fast path, tool_hex_lines(), over a heap copy of exactly
 * the input: every line it takes must be one tool_scan_hex() takes, with
 * the same value, ending in its '\n'.
 */
#include <ctype.h>

#include "fuzz.h"
#include "tools.h"
#include "../unit/hexoracle.h"
#include "base.h"

static void one(const char *p, size_t len)
{
	char *s = malloc(len + 1);
	uint64_t got = 0xdead, want = 0xbeef;
	int a, b;

	if (!s)
		return;
	memcpy(s, p, len);
	s[len] = '\0';
	a = tool_parse_hex(s, &got);
	b = hex_oracle(s, &want);
	FUZZ_CHECK(a == b);
	FUZZ_CHECK(a != 0 || got == want);
	FUZZ_CHECK(a == 0 || got == 0xdead);	/* untouched on failure */
	free(s);
}

static void lines(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	const char *p = buf, *end = buf + size, *q, *e;

	if (!buf)
		return;
	memcpy(buf, data, size);
	while (end - p >= TOOL_HEX_LINES_READ) {
		uint64_t got[64], v;
		size_t n;

		q = p;
		n = tool_hex_lines(&p, got);
		for (size_t i = 0; i < n; i++) {
			FUZZ_CHECK(tool_scan_hex(q, &v, &e) == 0);
			FUZZ_CHECK(*e == '\n' && v == got[i]);
			q = e + 1;
		}
		FUZZ_CHECK(q == p);
		if (!n) {
			e = memchr(p, '\n', (size_t)(end - p));
			p = e ? e + 1 : end;
		}
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		one(p, (size_t)(nl - p));
	}
	one((const char *)data, strnlen((const char *)data, size));
	lines(data, size);
	return 0;
}
