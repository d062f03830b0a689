/*
 * t-perfmap.c - the perf map reader (libsym/perfmap.c): lines perf reads
 * (with and without 0x, names with spaces), bad lines with their numbers
 * and reasons, absurd sizes, the last line cut short, overlaps (the
 * latest entry wins), lookups at the edges, and a file that is missing
 * (tests/unit/t-record.c has the file loader: missing files, stale maps).
 * The expected names are written here by hand, from the format perf
 * documents (tools/perf/Documentation/jit-interface.txt).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "perfmap.h"
#include "base.h"

#define MAXE 64

struct parsed {
	struct symi_perfmap_ent e[MAXE];
	size_t n;
	uint32_t bad_line[MAXE];
	const char *bad_why[MAXE];
	size_t nbad;
};

static void parse(const char *text, size_t len, struct parsed *p)
{
	size_t off = 0;
	uint32_t line = 0;
	const char *why;
	int rc;

	memset(p, 0, sizeof(*p));
	while ((rc = symi_perfmap_next(text, len, &off, &line, &p->e[p->n],
				       &why)) != 0) {
		if (rc > 0 && p->n < MAXE)
			p->n++;
		else if (rc < 0 && p->nbad < MAXE) {
			p->bad_line[p->nbad] = line;
			p->bad_why[p->nbad++] = why;
		}
	}
}

static bool name_is(const struct symi_perfmap_ent *e, const char *s)
{
	return e->namelen == strlen(s) && !memcmp(e->name, s, e->namelen);
}

static void test_good(void)
{
	static const char t[] =
		"3ef414c9e0c0 4c LazyCompile:*hotLoopJS /tmp/x.js:3:18\n"
		"0x7f0000001000 0x20 Builtin:ArgumentsAdaptorTrampoline\n"
		"7F0000002000 10 a\n";
	struct parsed p;

	parse(t, sizeof(t) - 1, &p);
	CHECK(p.n == 3 && p.nbad == 0);
	CHECK(p.e[0].start == 0x3ef414c9e0c0 && p.e[0].size == 0x4c);
	CHECK(name_is(&p.e[0], "LazyCompile:*hotLoopJS /tmp/x.js:3:18"));
	CHECK(p.e[1].start == 0x7f0000001000 && p.e[1].size == 0x20);
	CHECK(p.e[2].start == 0x7f0000002000 && name_is(&p.e[2], "a"));
	CHECK(p.e[0].line == 1 && p.e[2].line == 3);
}

static void test_bad(void)
{
	static const char t[] =
		"1000 10 good\n"		/* 1 */
		"zz 10 bad\n"			/* 2 */
		"1000 10\n"			/* 3: no name */
		"1000 10 \n"			/* 4: empty name */
		"\n"				/* 5 */
		"1000  10 two spaces\n"		/* 6 */
		"10000000000000000 1 seventeen\n" /* 7 */
		"1000 0 empty\n"		/* 8 */
		"1000 100000001 huge\n"		/* 9: over 4 GiB */
		"ffffffffffffff00 200 wraps\n"	/* 10 */
		"1000 10 crlf\r\n"		/* 11 */
		"0x 10 noddigits\n"		/* 12 */
		"2000 10 fine\n"		/* 13 */
		"3000 10 cut";			/* 14: no '\n' */
	static const uint32_t want[] = { 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
					 14 };
	struct parsed p;
	bool lines = true;

	parse(t, sizeof(t) - 1, &p);
	CHECK(p.n == 2 && name_is(&p.e[0], "good") &&
	      name_is(&p.e[1], "fine") && p.e[1].line == 13);
	CHECK(p.nbad == sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < p.nbad && i < sizeof(want) / sizeof(*want); i++)
		lines &= p.bad_line[i] == want[i] && p.bad_why[i] &&
			 p.bad_why[i][0];
	CHECK(lines);
	CHECK(p.nbad > 7 && strstr(p.bad_why[7], "4 GiB"));
	CHECK(p.nbad > 11 && strstr(p.bad_why[11], "cut short"));
	/* exactly 4 GiB is taken */
	parse("1000 100000000 big\n", 19, &p);
	CHECK(p.n == 1 && p.e[0].size == 1ull << 32);
}

static void test_long_line(void)
{
	const size_t max = SYMI_PERFMAP_LINE_MAX;
	char *t = malloc(2 * max + 64);
	struct parsed p;
	size_t n = 0;

	/* a line of exactly max bytes, then one of max + 1 */
	memcpy(t, "1000 10 ", 8);
	memset(t + 8, 'x', max - 8);
	n = max;
	t[n++] = '\n';
	memcpy(t + n, "2000 10 ", 8);
	memset(t + n + 8, 'y', max + 1 - 8);
	n += max + 1;
	t[n++] = '\n';
	parse(t, n, &p);
	CHECK(p.n == 1 && p.e[0].namelen == max - 8);
	CHECK(p.nbad == 1 && p.bad_line[0] == 2 &&
	      strstr(p.bad_why[0], "longer"));
	free(t);
}

/* Flatten @p's entries and name the owner of @addr ("" for none). */
static const char *owner(const struct parsed *p, uint64_t addr)
{
	static char name[64];
	struct symi_perfmap_pt pts[2 * MAXE];
	uint32_t heap[MAXE];
	struct symi_perfmap_seg segs[2 * MAXE];
	size_t n = symi_perfmap_flatten(p->e, p->n, pts, heap, segs);
	const struct symi_perfmap_seg *s = symi_perfmap_find(segs, n, addr);

	if (!s)
		return "";
	snprintf(name, sizeof(name), "%.*s", (int)p->e[s->ent].namelen,
		 p->e[s->ent].name);
	return name;
}

static void test_overlap(void)
{
	static const char t[] =
		"1000 1000 outer\n"	/* [0x1000, 0x2000) */
		"1800 100 inner\n"	/* [0x1800, 0x1900): later, wins */
		"1880 200 later\n"	/* [0x1880, 0x1a80): later still */
		"1000 10 same-start\n"	/* [0x1000, 0x1010) */
		"5000 10 alone\n"
		"1fff 1 last-byte\n";
	struct parsed p;

	parse(t, sizeof(t) - 1, &p);
	CHECK(p.n == 6);
	CHECK(!strcmp(owner(&p, 0x1000), "same-start"));
	CHECK(!strcmp(owner(&p, 0x100f), "same-start"));
	CHECK(!strcmp(owner(&p, 0x1010), "outer"));
	CHECK(!strcmp(owner(&p, 0x17ff), "outer"));
	CHECK(!strcmp(owner(&p, 0x1800), "inner"));
	CHECK(!strcmp(owner(&p, 0x187f), "inner"));
	CHECK(!strcmp(owner(&p, 0x1880), "later"));
	CHECK(!strcmp(owner(&p, 0x1a7f), "later"));
	CHECK(!strcmp(owner(&p, 0x1a80), "outer"));
	CHECK(!strcmp(owner(&p, 0x1ffe), "outer"));
	CHECK(!strcmp(owner(&p, 0x1fff), "last-byte"));
	CHECK(!strcmp(owner(&p, 0x2000), ""));
	CHECK(!strcmp(owner(&p, 0xfff), ""));
	CHECK(!strcmp(owner(&p, 0x5000), "alone"));
	CHECK(!strcmp(owner(&p, 0x5010), ""));
	CHECK(!strcmp(owner(&p, UINT64_MAX), ""));
}

/* An entry that ends at 2^64 - 1 and one covered wholly by a later. */
static void test_edges(void)
{
	static const char t[] =
		"fffffffffffff000 fff top\n"
		"100 10 gone\n"
		"f0 100 covers\n";
	struct parsed p;

	parse(t, sizeof(t) - 1, &p);
	CHECK(p.n == 3);
	CHECK(!strcmp(owner(&p, 0xfffffffffffffffe), "top"));
	CHECK(!strcmp(owner(&p, UINT64_MAX), ""));
	CHECK(!strcmp(owner(&p, 0x105), "covers"));
	parse("", 0, &p);
	CHECK(p.n == 0 && p.nbad == 0 && !strcmp(owner(&p, 0), ""));
}


/* /proc/PID/stat lines as proc(5) documents them; a comm with ") ". */
static void test_starttime(void)
{
	static const char a[] = "42 (node) S 1 42 42 0 -1 4194560 100 0 0 0 "
				"5 1 0 0 20 0 7 0 123456 1000 200 ...\n";
	static const char b[] = "42 (a) b (c) R 1 42 42 0 -1 4194560 100 0 0 "
				"0 5 1 0 0 20 0 7 0 98765 1000 200\n";
	uint64_t t = 0;

	CHECK(symi_proc_starttime(a, sizeof(a) - 1, &t) == 0 && t == 123456);
	CHECK(symi_proc_starttime(b, sizeof(b) - 1, &t) == 0 && t == 98765);
	CHECK(symi_proc_starttime(a, 30, &t) == -1);
	CHECK(symi_proc_starttime("42 node S", 9, &t) == -1);
}

int main(void)
{
	test_starttime();
	test_good();
	test_bad();
	test_long_line();
	test_overlap();
	test_edges();
	return tap_done();
}
