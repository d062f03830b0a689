/*
 * t-buf.c - struct symi_buf (libsym/base.h, libsym/buf.c), the one
 * growable buffer of libsym, libsymprofile, symd and the sym tool.
 *
 * The contract of base.h: the cap holds (-E2BIG, never a byte past it),
 * -E2BIG and -ENOMEM are told apart (the second through the fault
 * injection hook, symi_test_fail_alloc()), a failed append leaves the
 * buffer as it was (bytes, length, NUL), printf-style appends grow to
 * their exact length, the bytes are always NUL-terminated, and
 * release/detach/reset leave what they say.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "base.h"

/* The invariants of base.h, and @b holds exactly @want (@n bytes). */
static bool holds(const struct symi_buf *b, const void *want, size_t n)
{
	if (b->len != n || b->len > b->max)
		return false;
	if (!b->p)
		return n == 0 && b->alloc == 0;
	return b->alloc > b->len && b->alloc <= b->max + 1 &&
	       b->p[b->len] == '\0' && (n == 0 || memcmp(b->p, want, n) == 0);
}

static void test_init_release(void)
{
	struct symi_buf b = SYMI_BUF_INIT(10), z;

	memset(&z, 0, sizeof(z));
	CHECK(b.p == NULL && b.len == 0 && b.alloc == 0 && b.max == 10);
	CHECK(strcmp(symi_buf_str(&b), "") == 0);
	symi_buf_init(&b, 20);
	CHECK(b.p == NULL && b.len == 0 && b.alloc == 0 && b.max == 20);
	symi_buf_init(&b, SIZE_MAX);
	CHECK(b.max == SYMI_BUF_MAX_CAP);
	CHECK_ERR(symi_buf_addstr(&b, "abc"), 0);
	CHECK(holds(&b, "abc", 3));
	symi_buf_release(&b);
	CHECK(memcmp(&b, &z, sizeof(z)) == 0);
	symi_buf_release(&b);	/* twice: harmless */
	symi_buf_release(NULL);
	/* A released buffer has cap 0: nothing fits, nothing is written. */
	CHECK_ERR(symi_buf_addc(&b, 'x'), -E2BIG);
	CHECK(b.p == NULL);
}

static void test_cap(void)
{
	struct symi_buf b;

	symi_buf_init(&b, 16);
	CHECK_ERR(symi_buf_add(&b, "0123456789", 10), 0);
	CHECK(holds(&b, "0123456789", 10));
	/* One byte too many: refused whole. */
	CHECK_ERR(symi_buf_add(&b, "abcdefg", 7), -E2BIG);
	CHECK(holds(&b, "0123456789", 10));
	CHECK_ERR(symi_buf_add(&b, "abcdef", 6), 0);
	CHECK(holds(&b, "0123456789abcdef", 16));
	CHECK(b.alloc == 17);
	CHECK_ERR(symi_buf_addc(&b, 'x'), -E2BIG);
	CHECK_ERR(symi_buf_add(&b, "", 0), 0);
	CHECK_ERR(symi_buf_grow(&b, 1), -E2BIG);
	CHECK_ERR(symi_buf_grow(&b, SIZE_MAX), -E2BIG);
	CHECK_ERR(symi_buf_addf(&b, "%d", 7), -E2BIG);
	CHECK_ERR(symi_buf_add_u64(&b, 1), -E2BIG);
	CHECK(holds(&b, "0123456789abcdef", 16));
	symi_buf_reset(&b);
	CHECK(holds(&b, "", 0) && b.alloc == 17);
	CHECK_ERR(symi_buf_add_u64(&b, UINT64_MAX), -E2BIG);	/* 20 */
	CHECK(holds(&b, "", 0));
	symi_buf_release(&b);

	/* Cap 0: only "" fits, and asking for it allocates the NUL. */
	symi_buf_init(&b, 0);
	CHECK_ERR(symi_buf_addc(&b, 'x'), -E2BIG);
	CHECK(b.p == NULL);
	CHECK_ERR(symi_buf_grow(&b, 0), 0);
	CHECK(b.p != NULL && holds(&b, "", 0) && b.alloc == 1);
	symi_buf_release(&b);

	/* Growth in small steps never allocates past the cap. */
	symi_buf_init(&b, 1000);
	for (int i = 0; i < 100; i++)
		symi_buf_add(&b, "0123456789", 10);
	CHECK(b.len == 1000 && b.alloc == 1001 && b.p[1000] == '\0');
	CHECK_ERR(symi_buf_addc(&b, 'x'), -E2BIG);
	symi_buf_release(&b);
}

/* -ENOMEM comes from a failed allocation only, and changes nothing. */
static void test_enomem(void)
{
	struct symi_buf b;
	char big[1000];

	memset(big, 'z', sizeof(big));
	symi_buf_init(&b, 1000);
	symi_test_fail_alloc(1);
	CHECK_ERR(symi_buf_addc(&b, 'a'), -ENOMEM);
	CHECK(b.p == NULL && b.len == 0 && b.alloc == 0);
	symi_test_fail_alloc(0);
	CHECK_ERR(symi_buf_addstr(&b, "abc"), 0);
	CHECK(b.alloc == 64);

	/* An append within the room allocates nothing, so it cannot fail. */
	symi_test_fail_alloc(1);
	CHECK_ERR(symi_buf_add(&b, big, 60), 0);
	CHECK(symi_test_alloc_count() == 0);
	symi_buf_setlen(&b, 3);
	/* One that needs growth fails whole: add, addc, addf, numbers. */
	CHECK_ERR(symi_buf_add(&b, big, 200), -ENOMEM);
	CHECK(holds(&b, "abc", 3) && b.alloc == 64);
	symi_test_fail_alloc(1);
	CHECK_ERR(symi_buf_addf(&b, "%.*s", 100, big), -ENOMEM);
	CHECK(holds(&b, "abc", 3));
	symi_buf_add(&b, big, 60);
	CHECK(b.len == 63 && b.alloc == 64);
	symi_test_fail_alloc(1);
	CHECK_ERR(symi_buf_addc(&b, 'x'), -ENOMEM);
	symi_test_fail_alloc(1);
	CHECK_ERR(symi_buf_add_u64(&b, 12345), -ENOMEM);
	symi_test_fail_alloc(1);
	CHECK_ERR(symi_buf_add_hex(&b, 0xabc, 0), -ENOMEM);
	symi_test_fail_alloc(1);
	CHECK_ERR(symi_buf_add_i64(&b, -1), -ENOMEM);
	CHECK(b.len == 63 && b.p[63] == '\0' && memcmp(b.p, "abc", 3) == 0);
	/* The cap is checked before any allocation: -E2BIG, not counted. */
	symi_test_fail_alloc(1);
	CHECK_ERR(symi_buf_add(&b, big, 938), -E2BIG);
	CHECK(symi_test_alloc_count() == 0);
	symi_test_fail_alloc(0);
	CHECK_ERR(symi_buf_add(&b, big, 937), 0);
	CHECK(b.len == 1000 && b.alloc == 1001);
	symi_buf_release(&b);
}

/* Every allocation of a run of appends fails in turn: each failure is
 * -ENOMEM and leaves what the appends before it made. */
static void test_sweep(void)
{
	static const char mid[] =
		"0123456789012345678901234567890123456789012345678901234";
	char want[8192], one[128];
	bool ok = true;
	long n;

	for (n = 1; n < 20 && ok; n++) {
		struct symi_buf b;
		size_t wlen = 0;
		int err = 0;

		symi_buf_init(&b, 8192);
		symi_test_fail_alloc(n);
		for (int rep = 0; rep < 30 && !err; rep++) {
			for (int i = 0; i < 4 && !err; i++) {
				int k;

				switch (i) {
				case 0:
					err = symi_buf_addc(&b, 'x');
					k = snprintf(one, sizeof(one), "x");
					break;
				case 1:
					err = symi_buf_addstr(&b, mid);
					k = snprintf(one, sizeof(one), "%s",
						     mid);
					break;
				case 2:
					err = symi_buf_addf(&b, "tail %d;",
							    rep);
					k = snprintf(one, sizeof(one),
						     "tail %d;", rep);
					break;
				default:
					err = symi_buf_add_u64(&b,
							       (uint64_t)rep);
					k = snprintf(one, sizeof(one), "%d",
						     rep);
					break;
				}
				if (!err) {
					memcpy(want + wlen, one, (size_t)k);
					wlen += (size_t)k;
				}
			}
		}
		symi_test_fail_alloc(0);
		if (err != -ENOMEM && err != 0)
			ok = false;
		if (!holds(&b, want, wlen))
			ok = false;
		symi_buf_release(&b);
	}
	CHECK(ok);
	CHECK(n == 20);
}

static void test_printf(void)
{
	struct symi_buf b;
	static char want[16384], big[3000];
	int k;

	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	symi_buf_init(&b, 1 << 20);
	CHECK_ERR(symi_buf_addf(&b, "%s=%d;", "a", 1), 0);
	CHECK(holds(&b, "a=1;", 4));
	/* Larger than the room: grows once to the exact length. */
	CHECK_ERR(symi_buf_addf(&b, "[%s]%zu", big, (size_t)42), 0);
	k = snprintf(want, sizeof(want), "a=1;[%s]%zu", big, (size_t)42);
	CHECK(holds(&b, want, (size_t)k));
	/* Appends that cross the end of the room, one at a time. */
	symi_buf_reset(&b);
	for (int i = 0; i < 500; i++)
		symi_buf_addf(&b, "%d,%" PRIx64 ";", i, (uint64_t)i << 40);
	k = 0;
	for (int i = 0; i < 500 && k < (int)sizeof(want); i++)
		k += snprintf(want + k, sizeof(want) - (size_t)k,
			      "%d,%" PRIx64 ";", i, (uint64_t)i << 40);
	CHECK(k < (int)sizeof(want) && holds(&b, want, (size_t)k));
	/* An empty format appends nothing, but allocates the NUL. */
	symi_buf_release(&b);
	symi_buf_init(&b, 10);
	CHECK_ERR(symi_buf_addf(&b, "%s", ""), 0);
	CHECK(b.p != NULL && holds(&b, "", 0));
	/* Past the cap by one, after a partial fit into the room: the
	 * bytes vsnprintf() wrote beyond the NUL do not show. */
	CHECK_ERR(symi_buf_addf(&b, "%s", "0123456"), 0);
	CHECK_ERR(symi_buf_addf(&b, "%s", "abcd"), -E2BIG);
	CHECK(holds(&b, "0123456", 7) && strcmp(b.p, "0123456") == 0);
	CHECK_ERR(symi_buf_addf(&b, "%s", "abc"), 0);
	CHECK(holds(&b, "0123456abc", 10));
	symi_buf_release(&b);
}

static void test_nul_detach(void)
{
	struct symi_buf b;
	size_t n = 99;
	char *p;
	const char *keep;

	symi_buf_init(&b, 100);
	/* NULs inside are bytes like any other; one always follows. */
	CHECK_ERR(symi_buf_add(&b, "a\0b", 3), 0);
	CHECK_ERR(symi_buf_addc(&b, '\0'), 0);
	CHECK(holds(&b, "a\0b\0", 4));
	keep = b.p;
	symi_buf_reset(&b);
	CHECK(b.p == keep && b.len == 0 && b.p[0] == '\0' && b.max == 100);
	CHECK_ERR(symi_buf_add_lit(&b, "hello"), 0);
	symi_buf_setlen(&b, 4);
	CHECK(holds(&b, "hell", 4) && strcmp(b.p, "hell") == 0);
	/* setlen never reaches past the room. */
	symi_buf_setlen(&b, 1000);
	CHECK(b.len == b.alloc - 1 && b.p[b.len] == '\0');
	symi_buf_setlen(&b, 4);
	p = symi_buf_detach(&b, &n);
	CHECK(p != NULL && n == 4 && strcmp(p, "hell") == 0);
	CHECK(b.p == NULL && b.len == 0 && b.alloc == 0 && b.max == 100);
	free(p);
	/* Nothing allocated: NULL, length 0. */
	n = 99;
	CHECK(symi_buf_detach(&b, &n) == NULL && n == 0);
	CHECK(symi_buf_detach(&b, NULL) == NULL);
	/* Usable again, with its cap. */
	CHECK_ERR(symi_buf_addstr(&b, "x"), 0);
	CHECK(holds(&b, "x", 1));
	symi_buf_release(&b);
}

static void test_numbers(void)
{
	static const struct {
		uint64_t v;
		int width;
		const char *dec, *hex;
	} u[] = {
		{ 0, 0, "0", "0" },
		{ 9, 1, "9", "9" },
		{ 10, 4, "10", "000a" },
		{ 99, 0, "99", "63" },
		{ 100, 0, "100", "64" },
		{ 0x4011d6, 16, "4198870", "00000000004011d6" },
		{ 0x4011d6, 8, "4198870", "004011d6" },
		{ 0xdeadbeefcafe, 99, "244837814094590", "0000deadbeefcafe" },
		{ UINT64_MAX, 0, "18446744073709551615", "ffffffffffffffff" },
	};
	static const struct {
		int64_t v;
		const char *dec;
	} s[] = {
		{ 0, "0" }, { -1, "-1" }, { 42, "42" },
		{ INT64_MAX, "9223372036854775807" },
		{ INT64_MIN, "-9223372036854775808" },
	};
	struct symi_buf b;
	bool ok = true;

	symi_buf_init(&b, 64);
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		symi_buf_reset(&b);
		if (symi_buf_add_u64(&b, u[i].v) ||
		    !holds(&b, u[i].dec, strlen(u[i].dec)))
			ok = false;
		symi_buf_reset(&b);
		if (symi_buf_add_hex(&b, u[i].v, u[i].width) ||
		    !holds(&b, u[i].hex, strlen(u[i].hex)))
			ok = false;
	}
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		symi_buf_reset(&b);
		if (symi_buf_add_i64(&b, s[i].v) ||
		    !holds(&b, s[i].dec, strlen(s[i].dec)))
			ok = false;
	}
	CHECK(ok);
	symi_buf_release(&b);
}

int main(void)
{
	test_init_release();
	test_cap();
	test_enomem();
	test_sweep();
	test_printf();
	test_nul_detach();
	test_numbers();
	return tap_done();
}
