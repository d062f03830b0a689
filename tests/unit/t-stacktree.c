/*
 * t-stacktree.c - the trie of stacks (tools/view/stacktree.h), its folded-stack
 * reader, and the flame graph writer's contract (tools/view/flame.h): counts
 * and their invariants, errors with nothing changed, line numbers in
 * messages, Wilson intervals against published values, deterministic
 * output, the frame cap.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "view/stacktree.h"
#include "view/flame.h"
#include "view/stats.h"

static struct stacktree_frame F(const char *s)
{
	return (struct stacktree_frame){ s, strlen(s) };
}

/* total = self + sum of the children's totals, for every node. */
static int consistent(const struct stacktree *t)
{
	size_t i;

	for (i = 0; i < stacktree_size(t); i++) {
		uint64_t sum = stacktree_self(t, (uint32_t)i);
		uint32_t c;

		for (c = stacktree_first_child(t, (uint32_t)i);
		     c != STACKTREE_NONE; c = stacktree_next_sibling(t, c)) {
			if (stacktree_parent(t, c) != i)
				return 0;
			sum += stacktree_total(t, c);
		}
		if (sum != stacktree_total(t, (uint32_t)i))
			return 0;
	}
	return 1;
}

static void test_tree(void)
{
	struct stacktree *t = NULL;
	struct stacktree_frame s1[] = { F("main"), F("parse"), F("lex") };
	struct stacktree_frame s2[] = { F("main"), F("parse") };
	struct stacktree_frame s3[] = { F("main"), F("lex") };
	uint32_t main_id, parse_id, lex_id, c;
	size_t len;
	int i;

	CHECK_ERR(stacktree_new(&t), 0);
	CHECK(stacktree_size(t) == 1);
	CHECK(stacktree_total(t, STACKTREE_ROOT) == 0);
	CHECK(strcmp(stacktree_name(t, STACKTREE_ROOT, &len), "") == 0 &&
	      len == 0);
	CHECK(stacktree_parent(t, STACKTREE_ROOT) == STACKTREE_NONE);
	CHECK_ERR(stacktree_insert(t, s1, 3, 10), 0);
	CHECK_ERR(stacktree_insert(t, s2, 2, 5), 0);
	CHECK_ERR(stacktree_insert(t, s3, 2, 1), 0);
	CHECK_ERR(stacktree_insert(t, s1, 3, 2), 0);
	CHECK_ERR(stacktree_insert(t, NULL, 0, 4), 0);
	CHECK(stacktree_size(t) == 5);	/* root main parse lex lex */
	main_id = stacktree_find(t, STACKTREE_ROOT, "main", 4);
	parse_id = stacktree_find(t, main_id, "parse", 5);
	lex_id = stacktree_find(t, parse_id, "lex", 3);
	CHECK(main_id != STACKTREE_NONE && parse_id != STACKTREE_NONE &&
	      lex_id != STACKTREE_NONE);
	CHECK(stacktree_total(t, STACKTREE_ROOT) == 22);
	CHECK(stacktree_self(t, STACKTREE_ROOT) == 4);
	CHECK(stacktree_total(t, main_id) == 18 &&
	      stacktree_self(t, main_id) == 0);
	CHECK(stacktree_total(t, parse_id) == 17 &&
	      stacktree_self(t, parse_id) == 5);
	CHECK(stacktree_total(t, lex_id) == 12 &&
	      stacktree_self(t, lex_id) == 12);
	CHECK(stacktree_find(t, STACKTREE_ROOT, "lex", 3) == STACKTREE_NONE);
	CHECK(stacktree_find(t, main_id, "pars", 4) == STACKTREE_NONE);
	CHECK(stacktree_find(t, 999, "main", 4) == STACKTREE_NONE);
	/* Children in insertion order. */
	c = stacktree_first_child(t, main_id);
	CHECK(c == parse_id);
	c = stacktree_next_sibling(t, c);
	CHECK(c != STACKTREE_NONE &&
	      strcmp(stacktree_name(t, c, NULL), "lex") == 0);
	CHECK(stacktree_next_sibling(t, c) == STACKTREE_NONE);
	CHECK(consistent(t));
	/* Overflow: -ERANGE and no count changes. */
	CHECK_ERR(stacktree_insert(t, s1, 3, UINT64_MAX - 21), -ERANGE);
	CHECK(stacktree_total(t, STACKTREE_ROOT) == 22 &&
	      stacktree_total(t, lex_id) == 12);
	CHECK_ERR(stacktree_count(t, lex_id, UINT64_MAX), -ERANGE);
	CHECK_ERR(stacktree_count(t, 12345, 1), -EINVAL);
	CHECK_ERR(stacktree_insert(t, s1, 3, UINT64_MAX - 22), 0);
	CHECK(stacktree_total(t, STACKTREE_ROOT) == UINT64_MAX);
	/* Names with NUL bytes and every byte value are kept as given. */
	{
		char name[256];
		struct stacktree_frame fr = { name, sizeof(name) };
		const char *got;

		for (i = 0; i < 256; i++)
			name[i] = (char)i;
		CHECK_ERR(stacktree_child(t, STACKTREE_ROOT, name,
					  sizeof(name), &c), 0);
		got = stacktree_name(t, c, &len);
		CHECK(len == 256 && memcmp(got, name, 256) == 0 &&
		      got[256] == '\0');
		CHECK(stacktree_find(t, STACKTREE_ROOT, name, 256) == c);
		(void)fr;
	}
	stacktree_free(t);
	stacktree_free(NULL);
}

/* Many nodes, shared names: the hash tables grow, invariants hold. */
static void test_many(void)
{
	struct stacktree *t = NULL;
	char names[40][16];
	struct stacktree_frame st[12];
	unsigned long long seed = 42, sum = 0;
	int i, j, ok = 1;

	CHECK_ERR(stacktree_new(&t), 0);
	for (i = 0; i < 40; i++)
		snprintf(names[i], sizeof(names[i]), "f%d", i);
	for (i = 0; i < 20000 && ok; i++) {
		int depth = 1 + i % 12;

		for (j = 0; j < depth; j++) {
			seed = seed * 6364136223846793005ULL + 1;
			st[j] = F(names[(seed >> 33) % 40]);
		}
		ok = stacktree_insert(t, st, (size_t)depth, (uint64_t)i % 7) == 0;
		sum += (uint64_t)i % 7;
	}
	CHECK(ok);
	CHECK(stacktree_total(t, STACKTREE_ROOT) == sum);
	CHECK(stacktree_size(t) > 20000);
	CHECK(consistent(t));
	/* Every node is found again from its parent by its name. */
	ok = 1;
	for (i = 1; i < (int)stacktree_size(t); i++) {
		size_t len;
		const char *n = stacktree_name(t, (uint32_t)i, &len);

		if (stacktree_find(t, stacktree_parent(t, (uint32_t)i), n,
				   len) != (uint32_t)i)
			ok = 0;
	}
	CHECK(ok);
	stacktree_free(t);
}

static int parse(const char *line, int ncounts, struct stacktree_folded *f,
		 const char **why)
{
	return stacktree_parse_folded(line, strlen(line), ncounts, f, why);
}

static void test_parse(void)
{
	struct stacktree_folded f;
	const char *why;

	CHECK_ERR(parse("a;b;c 12", 1, &f, &why), 0);
	CHECK(f.stack_len == 5 && memcmp(f.stack, "a;b;c", 5) == 0 &&
	      f.count[0] == 12);
	CHECK_ERR(parse("  a b;c d\t 7 \r", 1, &f, &why), 0);
	CHECK(f.stack_len == 7 && memcmp(f.stack, "a b;c d", 7) == 0 &&
	      f.count[0] == 7);
	CHECK_ERR(parse("", 1, &f, &why), 0);
	CHECK(f.stack_len == 0);
	CHECK_ERR(parse(" \t\r", 1, &f, &why), 0);
	CHECK(f.stack_len == 0);
	CHECK_ERR(parse("x 18446744073709551615", 1, &f, &why), 0);
	CHECK(f.count[0] == UINT64_MAX);
	CHECK_ERR(parse("x 18446744073709551616", 1, &f, &why), -EINVAL);
	CHECK(why && strstr(why, "too large"));
	CHECK_ERR(parse("x;y 3 4", 2, &f, &why), 0);
	CHECK(f.stack_len == 3 && f.count[0] == 3 && f.count[1] == 4);
	CHECK_ERR(parse("x;y 3 4", 1, &f, &why), 0);
	CHECK(f.stack_len == 5 && f.count[0] == 4);	/* frame "y 3" */
	CHECK_ERR(parse("x;y 4", 2, &f, &why), -EINVAL);
	CHECK(why && strstr(why, "two counts"));
	CHECK_ERR(parse("x;y 1.5 4", 2, &f, &why), -EINVAL);
	CHECK(why && strstr(why, "whole number"));
	CHECK_ERR(parse("a;b", 1, &f, &why), -EINVAL);
	CHECK(why && strstr(why, "no count"));
	CHECK_ERR(parse("a;b 1.", 1, &f, &why), -EINVAL);
	CHECK(why && strstr(why, "whole number"));
	CHECK_ERR(parse("a;b +1", 1, &f, &why), -EINVAL);
	CHECK_ERR(parse("a;b5", 1, &f, &why), -EINVAL);
	CHECK(why && strstr(why, "no blank"));
	CHECK_ERR(parse(" 5", 1, &f, &why), -EINVAL);
	CHECK(why && strstr(why, "no stack"));
	CHECK_ERR(parse(";a 1", 1, &f, &why), -EINVAL);
	CHECK(why && strstr(why, "empty frame"));
	CHECK_ERR(parse("a;;b 1", 1, &f, &why), -EINVAL);
	CHECK_ERR(parse("a; 1", 1, &f, &why), -EINVAL);
	CHECK(f.stack_len == 0);
	CHECK_ERR(stacktree_parse_folded("a\0b 1", 5, 1, &f, &why), -EINVAL);
	CHECK(why && strstr(why, "NUL"));
}

static int read_str(struct stacktree *t, struct stacktree *t2,
		    const char *text, size_t len, char *msg, size_t msglen)
{
	FILE *f = fmemopen((void *)text, len, "r");
	int err;

	if (!f)
		return -errno;
	err = stacktree_read_folded(t, t2, f, "in", msg, msglen);
	fclose(f);
	return err;
}

static void test_read(void)
{
	struct stacktree *t = NULL, *t2 = NULL;
	static const char ok[] = "a;b 1\n\na;c 2\r\nd 3";	/* no last \n */
	static const char bad[] = "a;b 1\na;c 2\nd\n";
	static const char two[] = "a;b 1 2\nc 0 5\n";
	char msg[256], *big;
	size_t n = STACKTREE_LINE_MAX + 10;

	CHECK_ERR(stacktree_new(&t), 0);
	CHECK_ERR(read_str(t, NULL, ok, sizeof(ok) - 1, msg, sizeof(msg)), 0);
	CHECK(stacktree_total(t, STACKTREE_ROOT) == 6 && msg[0] == '\0');
	CHECK_ERR(read_str(t, NULL, bad, sizeof(bad) - 1, msg, sizeof(msg)),
		  -EINVAL);
	CHECK(strcmp(msg, "'in':3: no count at the end of the line") == 0);
	/* The lines before the error stay. */
	CHECK(stacktree_total(t, STACKTREE_ROOT) == 9);
	stacktree_free(t);

	CHECK_ERR(stacktree_new(&t), 0);
	CHECK_ERR(stacktree_new(&t2), 0);
	CHECK_ERR(read_str(t, t2, two, sizeof(two) - 1, msg, sizeof(msg)), 0);
	CHECK(stacktree_total(t, STACKTREE_ROOT) == 1 &&
	      stacktree_total(t2, STACKTREE_ROOT) == 7);
	/* Both trees get every stack, even with a zero count. */
	CHECK(stacktree_size(t) == 4 && stacktree_size(t2) == 4);

	/* A line just at the limit passes; one byte more fails. */
	big = malloc(n + 1);
	CHECK(big != NULL);
	if (big) {
		memset(big, 'x', n);
		memcpy(big + STACKTREE_LINE_MAX - 2, " 1\ny 1\n", 7);
		CHECK_ERR(read_str(t, NULL, big, STACKTREE_LINE_MAX + 5, msg,
				   sizeof(msg)), 0);
		memset(big, 'x', n);
		memcpy(big + STACKTREE_LINE_MAX - 1, " 1\n", 3);
		CHECK_ERR(read_str(t, NULL, big, STACKTREE_LINE_MAX + 2, msg,
				   sizeof(msg)), -EINVAL);
		CHECK(strcmp(msg, "'in':1: line longer than 65536 bytes") == 0);
		free(big);
	}
	stacktree_free(t);
	stacktree_free(t2);
}

/* flame.c takes its intervals from stats.c: the titles carry them. */
static void test_wilson(void)
{
	struct stats_interval ci;

	/* Values from Newcombe (1998), Table I, method 3. */
	CHECK_ERR(stats_wilson(81, 263, 0, &ci), 0);
	CHECK(fabs(ci.lo - 0.2553) < 5e-5 && fabs(ci.hi - 0.3662) < 5e-5);
	CHECK_ERR(stats_wilson(15, 148, 0, &ci), 0);
	CHECK(fabs(ci.lo - 0.0624) < 5e-5 && fabs(ci.hi - 0.1605) < 5e-5);
	CHECK_ERR(stats_wilson(0, 20, 0, &ci), 0);
	CHECK(ci.lo == 0 && fabs(ci.hi - 0.1611) < 5e-5);
	CHECK_ERR(stats_wilson(1, 29, 0, &ci), 0);
	CHECK(fabs(ci.lo - 0.0061) < 5e-5 && fabs(ci.hi - 0.1718) < 5e-5);
	CHECK_ERR(stats_wilson(10, 10, 0, &ci), 0);
	CHECK(ci.hi == 1 && ci.lo > 0.72 && ci.lo < 0.73);
	CHECK_ERR(stats_wilson(0, 0, 0, &ci), 0);
	CHECK(ci.lo == 0 && ci.hi == 1);
}

/* flame_write() into memory; returns the bytes (free()) or NULL. */
static char *svg_of(const struct stacktree *t, const struct flame_opts *o,
		    struct flame_stats *st, int *err, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	*err = flame_write(f, t, o, st);
	fclose(f);
	return buf;
}

static size_t count_str(const char *s, const char *what)
{
	size_t n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s++;
	}
	return n;
}

static void test_flame(void)
{
	struct stacktree *t = NULL, *base = NULL;
	struct stacktree_frame s1[] = { F("main"), F("b<&>"), F("c") };
	struct stacktree_frame s2[] = { F("main"), F("a") };
	struct flame_opts o;
	struct flame_stats st;
	char *a = NULL, *b = NULL;
	size_t la, lb;
	int err;

	CHECK_ERR(stacktree_new(&t), 0);
	flame_opts_init(&o);
	CHECK(o.width == 1200 && o.minwidth == 0.1 && o.max_frames == 50000);
	a = svg_of(t, &o, &st, &err, &la);
	CHECK(err == -EINVAL);		/* no samples */
	free(a);
	CHECK_ERR(stacktree_insert(t, s1, 3, 30), 0);
	CHECK_ERR(stacktree_insert(t, s2, 2, 10), 0);
	a = svg_of(t, &o, &st, &err, &la);
	b = svg_of(t, NULL, NULL, &err, &lb);
	CHECK(err == 0 && a && b && la == lb && memcmp(a, b, la) == 0);
	CHECK(st.drawn == 5 && st.omitted == 0 && st.depth == 3 && !st.capped);
	CHECK(a && count_str(a, "<g><title>") == 5);
	CHECK(a && strstr(a, "<title>b&lt;&amp;&gt; (30 samples, 75.00%; "));
	/* "a" comes before "b<&>", whatever the insertion order. */
	CHECK(a && strstr(a, "<title>a (") < strstr(a, "<title>b&lt;"));
	free(a);
	free(b);

	o.max_frames = 2;
	a = svg_of(t, &o, &st, &err, &la);
	CHECK(err == 0 && st.drawn == 2 && st.omitted == 3 && st.capped);
	CHECK(a && count_str(a, "<g><title>") == 2);
	free(a);
	o.max_frames = 1;
	a = svg_of(t, &o, &st, &err, &la);
	CHECK(err == 0 && st.drawn == 1 && st.capped);
	free(a);
	/* A chain of equal totals: the shallower frames go first. */
	{
		struct stacktree *ch = NULL;
		struct stacktree_frame s4[] = { F("x"), F("y"), F("z") };

		CHECK_ERR(stacktree_new(&ch), 0);
		CHECK_ERR(stacktree_insert(ch, s4, 3, 5), 0);
		o.max_frames = 3;
		a = svg_of(ch, &o, &st, &err, &la);
		CHECK(err == 0 && st.drawn == 3 && st.omitted == 1 &&
		      st.depth == 2);
		CHECK(a && strstr(a, "<title>y (") && !strstr(a, "<title>z ("));
		free(a);
		stacktree_free(ch);
	}
	o.max_frames = 50000;
	o.minwidth = 26;
	o.minwidth_pct = true;		/* 26% of 40 samples: a (10) goes */
	a = svg_of(t, &o, &st, &err, &la);
	CHECK(err == 0 && st.drawn == 4 && st.omitted == 1);
	free(a);

	flame_opts_init(&o);
	o.width = 99;
	a = svg_of(t, &o, &st, &err, &la);
	CHECK(err == -EINVAL);
	free(a);

	/* Differential: the base's shares in the titles. */
	CHECK_ERR(stacktree_new(&base), 0);
	CHECK_ERR(stacktree_insert(base, s2, 2, 30), 0);
	CHECK_ERR(stacktree_insert(base, s1, 3, 10), 0);
	flame_opts_init(&o);
	o.base = base;
	a = svg_of(t, &o, &st, &err, &la);
	CHECK(err == 0 && a && strstr(a, "<title>a (after: 10 samples, "
					   "25.00%; 95% CI "));
	CHECK(a && strstr(a, "; before: 30 samples, 75.00%; 95% CI "));
	CHECK(a && strstr(a, "; change -50.00 pp, 95% CI "));
	CHECK(a && strstr(a, "fill=\"rgb(50,50,255)\""));   /* largest drop */
	CHECK(a && strstr(a, "fill=\"rgb(255,50,50)\""));   /* largest rise */
	free(a);
	stacktree_free(t);
	stacktree_free(base);
}

int main(void)
{
	test_tree();
	test_many();
	test_parse();
	test_read();
	test_wilson();
	test_flame();
	return tap_done();
}
