/*
 * hexoracle.h - the strtoull() version of tool_parse_hex() (tools/util.c),
 * as main had it before issue 19's warm work: the oracle the hand-written
 * parser is checked against, by t-lookup-hex and by the fuzz-addr target.
 *
 * Accepts one optional "0x"/"0X", then hex digits to the end of @s: 0
 * and *@out set; -ERANGE past 64 bits (before trailing junk's -EINVAL);
 * -EINVAL otherwise, *@out untouched.  strtoull() itself skips a second
 * "0x" when a hex digit follows, and so does the oracle.
 */
#ifndef SYM_TESTS_HEXORACLE_H
#define SYM_TESTS_HEXORACLE_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static inline int hex_oracle(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

#endif
