/*
 * t-symbolized.c - the symbolized form of a profile (libsym/prof/prof.c,
 * libsym/prof/raw.c; docs/raw-format.md, "The symbolized form").
 *
 * - sym_prof_set_location() / sym_prof_location(): keys (map, address,
 *   return flag), replacement in place, interned strings, "" as NULL, and
 *   every argument check with its code, leaving the profile unchanged.
 * - The writer's exact text for a small profile: `symbolized 1` after the
 *   header, fn and src numbered from 1 in order of first use, only the
 *   strings in use, loc lines in the profile's order.
 * - Round trip: a profile with every status, prefix and escape, written,
 *   read back, equal location by location, the same bytes again.
 * - The reader: a later `symbolized` version is read as unsymbolized, and
 *   each of its errors with its code and line number.
 * - 200,000 locations set and found again.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prof-test.h"
#include "tap.h"

/* A profile with one map (id 0) and the header the writer needs. */
static struct sym_prof *new_prof(void)
{
	struct sym_prof_header h = { .period = 1, .weight_unit = "samples" };
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .pid = 1,
				  .start = 0x1000, .end = 0x9000,
				  .build_id = "abcd", .path = "/bin/x" };
	struct sym_prof *p = NULL;

	if (sym_prof_new(&p) || sym_prof_set_header(p, &h) ||
	    sym_prof_add_map(p, &m, NULL)) {
		printf("Bail out! cannot build a profile\n");
		exit(1);
	}
	return p;
}

static void test_api(void)
{
	struct sym_prof *p = new_prof();
	struct sym_prof_frame pc = { .addr = 0x1234, .map = 0 };
	struct sym_prof_frame ret = { .addr = 0x1234, .map = 0,
				      .flags = SYM_PROF_FRAME_RETURN };
	struct sym_prof_frame nomap = { .addr = 0xdead, .map = SYM_PROF_NOMAP };
	struct sym_prof_line two[2] = {
		{ .function = "inl", .file = "/a.h", .line = 3, .column = 1,
		  .flags = SYM_PROF_LINE_INLINED },
		{ .function = "outer", .file = "/a.c", .line = 40 },
	};
	struct sym_prof_line one = { .function = "outer", .file = "",
				     .line = 41 };
	struct sym_prof_line many[SYM_PROF_MAX_LINES + 1];
	const struct sym_prof_line *l, *l2;
	struct sym_prof_frame f;
	uint32_t st;
	size_t n;

	CHECK(sym_prof_symbolized(p) == 0);
	CHECK(sym_prof_nlocations(p) == 0);
	CHECK_ERR(sym_prof_location(p, &pc, &st, &l, &n), -SYM_E_NOTFOUND);
	CHECK(st == 0 && l == NULL && n == 0);
	CHECK_ERR(sym_prof_location_at(p, 0, &f, &st, &l, &n), -SYM_E_NOTFOUND);

	CHECK_ERR(sym_prof_set_location(p, &ret, SYM_PROF_LOC_OK, two, 2), 0);
	CHECK(sym_prof_symbolized(p) == 1);
	CHECK_ERR(sym_prof_location(p, &ret, &st, &l, &n), 0);
	CHECK(st == SYM_PROF_LOC_OK && n == 2);
	CHECK(l[0].flags == SYM_PROF_LINE_INLINED && l[0].line == 3 &&
	      l[0].column == 1 && !strcmp(l[0].function, "inl") &&
	      !strcmp(l[0].file, "/a.h"));
	CHECK(l[1].flags == 0 && l[1].line == 40 &&
	      !strcmp(l[1].function, "outer") && !strcmp(l[1].file, "/a.c"));
	/* Copied: the caller's strings are not kept. */
	CHECK(l[0].function != two[0].function && l != two);
	/* The exact PC at the same address is another location. */
	CHECK_ERR(sym_prof_location(p, &pc, NULL, NULL, NULL), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_prof_set_location(p, &pc, SYM_PROF_LOC_OK, &one, 1), 0);
	CHECK_ERR(sym_prof_location(p, &pc, &st, &l2, &n), 0);
	CHECK(n == 1 && l2[0].line == 41 && l2[0].file == NULL);
	/* Interned: one copy of "outer". */
	CHECK(l2[0].function == l[1].function);
	CHECK_ERR(sym_prof_set_location(p, &nomap, SYM_PROF_LOC_UNMAPPED,
					NULL, 0), 0);
	CHECK(sym_prof_nlocations(p) == 3);

	/* Replacing keeps the place; the old lines stay readable. */
	CHECK_ERR(sym_prof_set_location(p, &ret, SYM_PROF_LOC_MISSING, NULL,
					0), 0);
	CHECK(sym_prof_nlocations(p) == 3);
	CHECK_ERR(sym_prof_location_at(p, 0, &f, &st, &l2, &n), 0);
	CHECK(f.addr == 0x1234 && f.map == 0 &&
	      f.flags == SYM_PROF_FRAME_RETURN);
	CHECK(st == SYM_PROF_LOC_MISSING && l2 == NULL && n == 0);
	CHECK(!strcmp(l[0].function, "inl"));
	CHECK_ERR(sym_prof_location_at(p, 2, &f, &st, NULL, &n), 0);
	CHECK(f.map == SYM_PROF_NOMAP && f.addr == 0xdead &&
	      st == SYM_PROF_LOC_UNMAPPED);

	/* Argument checks: each fails and changes nothing. */
	f = (struct sym_prof_frame){ .addr = 1, .map = 1 };
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_MISSING, NULL, 0),
		  -EINVAL);
	f = (struct sym_prof_frame){ .addr = 1, .map = 0, .flags = 2 };
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_MISSING, NULL, 0),
		  -EINVAL);
	f.flags = 0;
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_NSTATUS, NULL, 0),
		  -EINVAL);
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, NULL, 0),
		  -EINVAL);
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, NULL, 1),
		  -EINVAL);
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_NOSYMBOL, two, 2),
		  -EINVAL);
	one.flags = SYM_PROF_LINE_INLINED | SYM_PROF_LINE_SYMTAB;
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, &one, 1),
		  -EINVAL);
	one.flags = 4;
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, &one, 1),
		  -EINVAL);
	for (size_t i = 0; i < SYM_PROF_MAX_LINES + 1; i++)
		many[i] = (struct sym_prof_line){ .function = "f",
						  .line = (uint32_t)i };
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, many,
					SYM_PROF_MAX_LINES + 1), -E2BIG);
	CHECK(sym_prof_nlocations(p) == 3);
	CHECK_ERR(sym_prof_location(p, &f, NULL, NULL, NULL), -SYM_E_NOTFOUND);
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, many,
					SYM_PROF_MAX_LINES), 0);
	CHECK_ERR(sym_prof_location(p, &f, NULL, &l, &n), 0);
	CHECK(n == SYM_PROF_MAX_LINES && l[SYM_PROF_MAX_LINES - 1].line ==
	      SYM_PROF_MAX_LINES - 1);
	sym_prof_free(p);
	sym_prof_free(NULL);
}

/* The exact text: numbering by first use, unused strings left out. */
static void test_write_text(void)
{
	struct sym_prof *p = new_prof();
	struct sym_prof_frame fr[2] = {
		{ .addr = 0x1139, .map = 0 },
		{ .addr = 0x1187, .map = 0, .flags = SYM_PROF_FRAME_RETURN },
	};
	struct sym_prof_stack s = { .count = 2, .weight = 2, .pid = 1,
				    .tid = 1, .nframes = 2, .frames = fr };
	struct sym_prof_line chain[2] = {
		{ .function = "compute", .file = "/src/a b.h", .line = 12,
		  .column = 5, .flags = SYM_PROF_LINE_INLINED },
		{ .function = "work", .file = "/src/w.c", .line = 40,
		  .column = 3 },
	};
	struct sym_prof_line sym = { .function = "-",
				     .flags = SYM_PROF_LINE_SYMTAB };
	struct sym_prof_line unused = { .function = "gone", .file = "/gone.c" };
	char *text = NULL;
	const char *body;
	size_t len;

	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	/* Set, then replaced: "gone" is interned but no longer used. */
	CHECK_ERR(sym_prof_set_location(p, &fr[1], SYM_PROF_LOC_OK, &unused,
					1), 0);
	CHECK_ERR(sym_prof_set_location(p, &fr[1], SYM_PROF_LOC_OK, &sym, 1),
		  0);
	CHECK_ERR(sym_prof_set_location(p, &fr[0], SYM_PROF_LOC_OK, chain, 2),
		  0);
	CHECK_ERR(write_mem(p, &text, &len), 0);
	body = text ? strstr(text, "pidns -\n") : NULL;
	CHECK(body != NULL);
	if (body)
		CHECK(!strcmp(body,
			      "pidns -\n"
			      "symbolized 1\n"
			      "map 0 file 1 1000 9000 0 0 abcd /bin/x\n"
			      "fn 1 %2D\n"
			      "fn 2 compute\n"
			      "fn 3 work\n"
			      "src 1 /src/a%20b.h\n"
			      "src 2 /src/w.c\n"
			      "loc r0:1187 ok s1:-:0:0\n"
			      "loc p0:1139 ok i2:1:12:5 3:2:40:3\n"
			      "stack 2 2 1 1 - p0:1139 r0:1187\n"
			      "end\n"));
	free(text);
	sym_prof_free(p);

	/* Symbolized without locations still says so. */
	p = new_prof();
	CHECK_ERR(sym_prof_set_location(p, &fr[0], SYM_PROF_LOC_MISSING, NULL,
					0), 0);
	text = NULL;
	CHECK_ERR(write_mem(p, &text, &len), 0);
	CHECK(text && strstr(text, "\nsymbolized 1\n") &&
	      strstr(text, "\nloc p0:1139 missing\n") &&
	      !strstr(text, "\nfn ") && !strstr(text, "\nsrc "));
	free(text);
	sym_prof_free(p);
}

static void test_round_trip(void)
{
	struct sym_prof *p = new_prof(), *q = NULL;
	struct sym_prof_line lines[3] = {
		{ .function = "std::vector<int>::push_back(int const&)",
		  .file = "/usr/include/c++/12/bits/stl_vector.h", .line = 1287,
		  .column = 7, .flags = SYM_PROF_LINE_INLINED },
		{ .file = "/src/100%/\t\xc3\xa9.h", .line = 9,
		  .flags = SYM_PROF_LINE_INLINED },
		{ .function = "main", .file = "/src/m.c", .line = UINT32_MAX,
		  .column = UINT32_MAX },
	};
	char *w1 = NULL, *w2 = NULL, msg[256];
	size_t n1 = 0, n2 = 0;
	uint32_t st;

	for (st = 0; st < SYM_PROF_LOC_NSTATUS; st++) {
		struct sym_prof_frame f = { .addr = 0x2000 + st, .map = 0,
					    .flags = st & 1 };

		CHECK_ERR(sym_prof_set_location(p, &f, st, lines,
						st ? 0 : 3), 0);
	}
	{
		struct sym_prof_frame f = { .addr = UINT64_MAX,
					    .map = SYM_PROF_NOMAP,
					    .flags = SYM_PROF_FRAME_RETURN };
		struct sym_prof_line s = { .function = "sym",
					   .flags = SYM_PROF_LINE_SYMTAB };

		CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, &s, 1),
			  0);
	}
	CHECK_ERR(write_mem(p, &w1, &n1), 0);
	CHECK_ERR(sym_prof_read(w1, n1, &q, msg, sizeof(msg)), 0);
	if (q) {
		CHECK(same_locations(p, q));
		CHECK_ERR(write_mem(q, &w2, &n2), 0);
		CHECK(w2 && n1 == n2 && !memcmp(w1, w2, n1));
	}
	free(w1);
	free(w2);
	sym_prof_free(p);
	sym_prof_free(q);
}

#define HEAD "sym-raw 1\nperiod 1\nweight-unit ns\n" \
	     "map 0 file 1 1000 2000 0 1000 ab /bin/x\n"
#define SYM HEAD "symbolized 1\nfn 1 f\nsrc 1 /a.c\n"

static void test_read(void)
{
	static const struct {
		const char *text;
		int err;
		const char *msg;
	} bad[] = {
		{ HEAD "fn 1 f\nsymbolized 1\nend\n", -SYM_E_BADPROFILE,
		  "line 5: 'fn' line before the 'symbolized' line" },
		{ HEAD "symbolized 1\nsymbolized 1\nend\n", -SYM_E_BADPROFILE,
		  "line 6: second 'symbolized' line" },
		{ HEAD "symbolized one\nend\n", -SYM_E_BADPROFILE,
		  "line 5: symbolized version 'one' is not a decimal number" },
		{ SYM "fn 1 g\nend\n", -SYM_E_BADPROFILE,
		  "line 8: second 'fn' with ID 1" },
		{ SYM "src 2 -\nend\n", -SYM_E_BADPROFILE,
		  "line 8: 'src' cannot define an unknown string ('-')" },
		{ SYM "loc p0:1000 ok\nend\n", -SYM_E_BADPROFILE,
		  "line 8: an 'ok' location needs at least one line" },
		{ SYM "loc p0:1000 missing -:-:0:0\nend\n", -SYM_E_BADPROFILE,
		  "line 8: only an 'ok' location has lines" },
		{ SYM "loc p0:1000 gone\nend\n", -SYM_E_BADPROFILE,
		  "line 8: unknown location status 'gone'" },
		{ SYM "loc p1:1000 missing\nend\n", -SYM_E_BADPROFILE,
		  "line 8: frame names map 1, which no map line before "
		  "defines" },
		{ SYM "loc r0:10 missing\nloc r0:10 error\nend\n",
		  -SYM_E_BADPROFILE,
		  "line 9: second 'loc' line for frame 'r0:10'" },
		{ SYM "loc p0:10 ok 2:1:1:1\nend\n", -SYM_E_BADPROFILE,
		  "line 8: line names fn 2, which no 'fn' line before "
		  "defines" },
		{ SYM "loc p0:10 ok 1:1:1\nend\n", -SYM_E_BADPROFILE,
		  "line 8: line is not [i|s]FN:SRC:LINE:COL: '1:1:1'" },
		{ SYM "loc p0:10 ok x1:1:1:1\nend\n", -SYM_E_BADPROFILE,
		  "line 8: line's fn ID 'x1' is not a decimal number" },
		{ SYM "loc p0:10 ok 1:1:1:4294967296\nend\n",
		  -SYM_E_BADPROFILE,
		  "line 8: line or column is larger than 2^32 - 1" },
	};
	const struct sym_prof_line *l;
	struct sym_prof_frame f = { .addr = 0x10, .map = 0 };
	struct sym_prof *p = NULL;
	char msg[256];
	uint32_t st;
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = (struct sym_prof *)&p;
		msg[0] = '\0';
		CHECK_ERR(read_str(bad[i].text, &p, msg, sizeof(msg)),
			  bad[i].err);
		CHECK(p == NULL);
		if (strcmp(msg, bad[i].msg)) {
			CHECK(!"message");
			printf("#   got  '%s'\n#   want '%s'\n", msg,
			       bad[i].msg);
		}
	}

	/* Lines anywhere after the maps they name, before or after stacks;
	 * ids need not be 1..n. */
	CHECK_ERR(read_str(HEAD "stack 1 1 1 1 - p0:10 r0:20\nsymbolized 1\n"
			   "fn 70 g\nloc p0:10 ok 70:-:3:0\nsrc 0 /b.c\n"
			   "loc r0:20 ok s70:0:0:0\nend\n", &p, msg,
			   sizeof(msg)), 0);
	CHECK(p && sym_prof_symbolized(p) && sym_prof_nlocations(p) == 2);
	if (p) {
		CHECK_ERR(sym_prof_location(p, &f, &st, &l, &n), 0);
		CHECK(st == SYM_PROF_LOC_OK && n == 1 &&
		      !strcmp(l[0].function, "g") && !l[0].file &&
		      l[0].line == 3);
		f.addr = 0x20;
		f.flags = SYM_PROF_FRAME_RETURN;
		CHECK_ERR(sym_prof_location(p, &f, &st, &l, &n), 0);
		CHECK(n == 1 && l[0].flags == SYM_PROF_LINE_SYMTAB &&
		      !strcmp(l[0].file, "/b.c"));
	}
	sym_prof_free(p);

	/* A later version: its lines are skipped, the stacks are read. */
	CHECK_ERR(read_str(HEAD "symbolized 2\nfn x:y\nloc what ever\n"
			   "stack 1 1 1 1 - p0:10\nend\n", &p, msg,
			   sizeof(msg)), 0);
	CHECK(p && !sym_prof_symbolized(p) && sym_prof_nlocations(p) == 0 &&
	      sym_prof_nstacks(p) == 1);
	sym_prof_free(p);

	/* An unsymbolized file stays unsymbolized. */
	CHECK_ERR(read_str(HEAD "stack 1 1 1 1 - p0:10\nend\n", &p, msg,
			   sizeof(msg)), 0);
	CHECK(p && !sym_prof_symbolized(p));
	sym_prof_free(p);
}

/* Many locations: set, found again, written and read back. */
static void test_many(void)
{
	struct sym_prof *p = new_prof(), *q = NULL;
	char name[32], *w = NULL, msg[256];
	size_t len = 0, bad = 0;
	const size_t N = 200000;

	for (size_t i = 0; i < N; i++) {
		struct sym_prof_frame f = { .addr = i * 3, .map = 0,
					    .flags = i & 1 };
		struct sym_prof_line l = { .function = name, .line = (uint32_t)i };

		snprintf(name, sizeof(name), "f%zu", i % 5000);
		if (sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, &l, 1))
			bad++;
	}
	CHECK(bad == 0 && sym_prof_nlocations(p) == N);
	for (size_t i = 0; i < N; i++) {
		struct sym_prof_frame f = { .addr = i * 3, .map = 0,
					    .flags = i & 1 };
		const struct sym_prof_line *l;
		size_t n;

		snprintf(name, sizeof(name), "f%zu", i % 5000);
		if (sym_prof_location(p, &f, NULL, &l, &n) || n != 1 ||
		    l[0].line != i || strcmp(l[0].function, name))
			bad++;
		f.flags ^= 1;
		if (sym_prof_location(p, &f, NULL, NULL, NULL) !=
		    -SYM_E_NOTFOUND)
			bad++;
	}
	CHECK(bad == 0);
	CHECK_ERR(write_mem(p, &w, &len), 0);
	CHECK_ERR(sym_prof_read(w, len, &q, msg, sizeof(msg)), 0);
	CHECK(q && same_locations(p, q));
	free(w);
	sym_prof_free(p);
	sym_prof_free(q);
}

int main(void)
{
	test_api();
	test_write_text();
	test_round_trip();
	test_read();
	test_many();
	return tap_done();
}
