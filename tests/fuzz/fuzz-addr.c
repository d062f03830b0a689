/*
 * fuzz-addr.c - tool_parse_hex() (tools/util.c), the parser of every hex
 * address `sym addr2line` and `sym lookup` read from argv and stdin (and
 * `sym stack`'s): written by hand for the warm path, it must give what
 * the strtoull() version it replaced gave, value and error, for any
 * bytes.  That version is the oracle (tests/unit/hexoracle.h).
 *
 * Input: lines separated by '\n', each parsed from a heap copy of exactly
 * its length plus the NUL (a read past the NUL is caught), then the
 * whole input once more as one string (up to its first NUL).
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
	return 0;
}
