/*
 * t-spread.c - tools/view/report_spread.c: per-host shares of functions, with
 * every number worked out by hand in the comments.
 *
 * Hosts: "a", "b", an unknown one (c), another unknown one (d) with only
 * a stack without frames, and a sixth with nothing (left out).  Names: 1
 * main, 2 f, 3 g.
 *
 *   a: main;f 60, main;g 40, main;f;main;f 10   total 110
 *   b: main;f 1, main;g 9                       total 10
 *   c: main;g 50                                total 50
 *   d: (no frames) 5                            total 5
 *                                               grand 175
 *
 * self f:  a 70/110, b 1/10, c 0, d 0 -> sorted 0, 0, .1, .6364:
 *          min 0, median (0 + .1) / 2 = .05, max .6364 on a, on 2 hosts;
 *          pooled 71/175
 * self g:  a 40/110 = .3636, b .9, c 1, d 0 -> min 0, median
 *          (.3636 + .9) / 2 = .6318, max 1 on c, on 3 hosts; pooled
 *          99/175
 * total main: a 1, b 1, c 1, d 0 -> min 0, median 1, max 1 on a (the
 *          first); pooled 170/175 (the recursive stack counts once)
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "view/report_spread.h"
#include "tap.h"
#include "base.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-12)

static const char *names[] = { "", "main", "f", "g" };

static const char *name_of(void *ctx, uint32_t id)
{
	(void)ctx;
	return id < 4 ? names[id] : "?";
}

static void test_hand(void)
{
	static const uint32_t mf[] = { 1, 2 }, mg[] = { 1, 3 },
			      rec[] = { 1, 2, 1, 2 };
	struct spread *s = NULL;
	struct spread_row *r = NULL;
	uint32_t a, b, c, d, e, x;
	size_t n = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_ERR(spread_new(&s), 0);
	if (!s)
		return;
	CHECK_ERR(spread_host(s, "a", &a), 0);
	CHECK_ERR(spread_host(s, "b", &b), 0);
	CHECK_ERR(spread_host(s, NULL, &c), 0);
	CHECK_ERR(spread_host(s, NULL, &d), 0);
	CHECK_ERR(spread_host(s, "a", &x), 0);
	CHECK_ERR(spread_host(s, NULL, &e), 0);
	CHECK(a == 0 && b == 1 && c == 2 && d == 3 && x == 0 && e == 4);
	CHECK(spread_nhosts(s) == 5);
	CHECK(!strcmp(spread_host_name(s, a), "a") &&
	      !strcmp(spread_host_name(s, c), "-") &&
	      !strcmp(spread_host_name(s, 99), "-"));

	/* Only one host with a value so far: nothing to print. */
	CHECK_ERR(spread_add(s, a, mf, 2, 60), 0);
	f = open_memstream(&text, &len);
	CHECK_ERR(spread_print(s, f, 10, "samples", false, name_of, NULL), 0);
	fclose(f);
	CHECK(len == 0);
	free(text);
	text = NULL;

	CHECK_ERR(spread_add(s, a, mg, 2, 40), 0);
	CHECK_ERR(spread_add(s, a, rec, 4, 10), 0);
	CHECK_ERR(spread_add(s, b, mf, 2, 1), 0);
	CHECK_ERR(spread_add(s, b, mg, 2, 9), 0);
	CHECK_ERR(spread_add(s, c, mg, 2, 50), 0);
	CHECK_ERR(spread_add(s, d, NULL, 0, 5), 0);
	/* Refused, and nothing counted. */
	CHECK_ERR(spread_add(s, 5, mf, 2, 1000), -EINVAL);
	CHECK_ERR(spread_add(s, a, (const uint32_t[]){ 1, 0 }, 2, 1000),
		  -EINVAL);

	CHECK_ERR(spread_rows(s, false, 10, &r, &n), 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(r[0].name == 3 && NEAR(r[0].pooled, 99.0 / 175));
		CHECK(NEAR(r[0].min, 0) && r[0].max == 1 &&
		      NEAR(r[0].median, (40.0 / 110 + 0.9) / 2));
		CHECK(r[0].max_host == c && r[0].present == 3);
		CHECK(r[1].name == 2 && NEAR(r[1].pooled, 71.0 / 175));
		CHECK(r[1].min == 0 && NEAR(r[1].median, 0.05) &&
		      NEAR(r[1].max, 70.0 / 110));
		CHECK(r[1].max_host == a && r[1].present == 2);
	}
	free(r);
	CHECK_ERR(spread_rows(s, true, 10, &r, &n), 0);
	CHECK(n == 3);
	if (n == 3) {
		CHECK(r[0].name == 1 && NEAR(r[0].pooled, 170.0 / 175));
		CHECK(r[0].min == 0 && r[0].median == 1 && r[0].max == 1 &&
		      r[0].max_host == a && r[0].present == 3);
		CHECK(r[1].name == 3 && r[2].name == 2);
		CHECK(NEAR(r[2].max, 70.0 / 110));
	}
	free(r);
	/* @top cuts. */
	CHECK_ERR(spread_rows(s, true, 1, &r, &n), 0);
	CHECK(n == 1 && r && r[0].name == 1);
	free(r);

	f = open_memstream(&text, &len);
	CHECK_ERR(spread_print(s, f, 10, "samples", false, name_of, NULL), 0);
	fclose(f);
	/* The title's prose only with --explain. */
	CHECK(text && strstr(text, "\nSpread over 4 hosts:\n"));
	CHECK(text && !strstr(text, "share of its own"));
	CHECK(text && strstr(text, "  56.57%    0.00%   63.18%  100.00%  -"
				   "                3  g\n"));
	CHECK(text && strstr(text, "  40.57%    0.00%    5.00%   63.64%  a"
				   "                2  f\n"));
	CHECK(text && strstr(text, "  97.14%    0.00%  100.00%  100.00%  a"
				   "                3  main\n"));
	for (char *l = text, *nl; l && *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			break;
		printf("# %.*s\n", (int)(nl - l), l);
	}
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	CHECK_ERR(spread_print(s, f, 10, "samples", true, name_of, NULL), 0);
	fclose(f);
	CHECK(text && strstr(text, "Spread over 4 hosts: each host's share "
				   "of its own samples"));
	free(text);
	spread_free(s);
	spread_free(NULL);
}

/* Two hosts of equal size with shares 10% and 30%: median 20%. */
static void test_two(void)
{
	static const uint32_t hot[] = { 1 }, cold[] = { 2 };
	struct spread *s = NULL;
	struct spread_row *r = NULL;
	uint32_t a, b;
	size_t n = 0;

	CHECK_ERR(spread_new(&s), 0);
	if (!s)
		return;
	spread_host(s, "x", &a);
	spread_host(s, "y", &b);
	CHECK_ERR(spread_add(s, a, hot, 1, 10), 0);
	CHECK_ERR(spread_add(s, a, cold, 1, 90), 0);
	CHECK_ERR(spread_add(s, b, hot, 1, 30), 0);
	CHECK_ERR(spread_add(s, b, cold, 1, 70), 0);
	CHECK_ERR(spread_rows(s, false, 5, &r, &n), 0);
	CHECK(n == 2 && r[1].name == 1 && NEAR(r[1].median, 0.2) &&
	      NEAR(r[1].min, 0.1) && NEAR(r[1].max, 0.3) &&
	      r[1].max_host == b && NEAR(r[1].pooled, 0.2));
	free(r);
	spread_free(s);
}

int main(void)
{
	test_hand();
	test_two();
	return tap_done();
}
