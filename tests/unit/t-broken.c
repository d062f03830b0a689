/*
 * t-broken.c - tools/view/broken.c: the views' decision on broken stacks
 * (more than 2% of an input's samples flagged), the cure for each flag
 * by recorder, the tally of a profile (counts per flag, unknown flags,
 * the module where unwinds stop, added up over processes), the warning's
 * text, and `sym diff`'s two-proportion test at 99.9%.
 *
 * The diff cases, worked out by hand (Newcombe's hybrid score interval
 * from two Wilson intervals at z = 3.2905):
 *   100/1000 against 100/1000: change 0, interval holds 0: no difference;
 *   100/1000 (10%) against 10/1000 (1%): change -9 points, interval
 *     [-12.62, -5.81], z -9.3: differ, and one is over 2%: refused;
 *   1/10000 against 150/10000 (0.01% against 1.5%): change +1.49 points,
 *     interval [+1.12, +1.95]: differ, but neither over 2%: marked, not
 *     refused;
 *   30/1000 against 60/1000: interval [-0.10, +6.26] holds 0: no
 *     difference at 99.9% (z 3.19), although there would be at 95%.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

#include "view/broken.h"
#include "view/views.h"
#include "prof-test.h"
#include "tap.h"

static bool has(const char *s, const char *sub)
{
	return s && strstr(s, sub) != NULL;
}

static void test_decision(void)
{
	struct broken_tally t = { .samples = 100, .flagged = 2 };

	CHECK(!broken_warns(&t));		/* exactly 2%: no */
	t.flagged = 3;
	CHECK(broken_warns(&t));
	t.samples = 5000;
	t.flagged = 100;
	CHECK(!broken_warns(&t));
	t.flagged = 101;
	CHECK(broken_warns(&t));
	t.samples = 0;
	t.flagged = 0;
	CHECK(!broken_warns(&t));		/* nothing to warn about */
	/* No overflow near 2^64: 2% of UINT64_MAX is 368934881474191032.7 */
	t.samples = UINT64_MAX;
	t.flagged = 368934881474191032ull;
	CHECK(!broken_warns(&t));
	t.flagged++;
	CHECK(broken_warns(&t));
	t.flagged = UINT64_MAX;
	CHECK(broken_warns(&t));
}

static void test_cures(void)
{
	static const char *const symprof[] = {
		"thread-timer", "process-timer", "wall",
	};
	enum { TRUNC, BADRET, LEAF, UNWIND, KERNEL };

	/* fp: every chain problem is cured by CFI unwinding. */
	for (unsigned k = BADRET; k <= UNWIND; k++)
		CHECK(has(broken_cure("sym-record", "fp", k),
			  "record with -g dwarf"));
	CHECK(has(broken_cure("sym-record", "fp", TRUNC), "127 frames"));
	CHECK(has(broken_cure("sym-record", "fp", TRUNC),
		  "-g dwarf --max-depth"));
	/* dwarf: unwind is missing CFI or a short copy. */
	CHECK(has(broken_cure("sym-record", "dwarf", UNWIND),
		  "the binary has no CFI"));
	CHECK(has(broken_cure("sym-record", "dwarf", UNWIND), "--stack-size"));
	CHECK(!has(broken_cure("sym-record", "dwarf", UNWIND),
		   "record with -g dwarf"));
	CHECK(has(broken_cure("sym-record", "dwarf", TRUNC), "--max-depth"));
	CHECK(!has(broken_cure("sym-record", "dwarf", BADRET), "-g dwarf"));
	/* The mode decides, whatever the tool (a merge keeps the mode). */
	CHECK(has(broken_cure("sym-merge", "dwarf", UNWIND),
		  "the binary has no CFI"));
	CHECK(has(broken_cure(NULL, "fp", LEAF), "record with -g dwarf"));
	/* libsymprof, by mode or by tool. */
	for (size_t i = 0; i < 3; i++) {
		CHECK(has(broken_cure("libsymprof", symprof[i], UNWIND),
			  "sym record -g dwarf"));
		CHECK(has(broken_cure(NULL, symprof[i], TRUNC), "256 frames"));
	}
	CHECK(has(broken_cure("libsymprof", NULL, LEAF), "libsymprof"));
	/* Anything else: generic, still pointing at CFI unwinding. */
	CHECK(has(broken_cure(NULL, NULL, UNWIND), "sym record -g dwarf"));
	CHECK(has(broken_cure("go-pprof", "cpu", TRUNC), "depth limit"));
	/* kernel and unknown flags, whatever the recorder. */
	CHECK(has(broken_cure("sym-record", "fp", KERNEL),
		  "only kernel frames"));
	CHECK(has(broken_cure(NULL, "dwarf", KERNEL), "only kernel frames"));
	CHECK(has(broken_cure(NULL, NULL, BROKEN_UNKNOWN), "does not know"));
	CHECK(has(broken_cure(NULL, NULL, 99), "does not know"));
	CHECK(!strcmp(broken_flag_name(UNWIND), "unwind") &&
	      !strcmp(broken_flag_name(BROKEN_UNKNOWN), "unknown") &&
	      !strcmp(broken_flag_name(99), "?"));
}

/*
 * A dwarf profile of 200 samples, 37 flagged: unwind stacks ending in
 * libA.so in two processes (maps 1 and 2: 5 + 4 = 9 samples), in libB.so
 * (map 3: 7, more than either map of libA alone), outside any map (2) and
 * in an anonymous map (1); a truncated,unwind stack ending in the program
 * (3: 22 unwind in all); a stack with a flag this reader does not know
 * (10), one kernel-only without frames (5).
 */
static const char prof_text[] =
	"sym-raw 1\n"
	"tool sym-record 0.1.0\n"
	"mode dwarf\n"
	"period 1\n"
	"weight-unit samples\n"
	"map 0 file 1 1000 3000 0 1000 aa /bin/work\n"
	"map 1 file 1 10000 20000 0 10000 bb /lib/libA.so\n"
	"map 2 file 2 10000 20000 0 10000 bb /lib/libA.so\n"
	"map 3 file 2 30000 40000 0 30000 cc /opt/libB.so\n"
	"map 4 anon 2 50000 60000 0 0 - -\n"
	"stack 163 163 1 1 - p0:1000 r0:2000\n"
	"stack 5 5 1 1 unwind p0:1000 r1:10200\n"
	"stack 4 4 2 2 unwind p0:1000 r2:10300\n"
	"stack 7 7 2 2 unwind p0:1000 r3:30300\n"
	"stack 2 2 2 2 unwind p0:1000 r?:7fff0000\n"
	"stack 1 1 2 2 unwind p4:50010\n"
	"stack 3 3 1 1 truncated,unwind p0:1000 r0:2000\n"
	"stack 10 10 1 1 newflag p0:1000\n"
	"stack 5 5 1 1 kernel\n"
	"end\n";

static void test_tally(void)
{
	struct sym_prof *p = NULL;
	struct broken_tally t, sum = { 0 };
	char msg[256], list[128];

	CHECK_ERR(read_str(prof_text, &p, msg, sizeof(msg)), 0);
	if (!p)
		return;
	CHECK_ERR(broken_tally_prof(p, &t), 0);
	CHECK(t.samples == 200 && t.flagged == 37);
	CHECK(t.by_flag[0] == 3 && t.by_flag[1] == 0 && t.by_flag[2] == 0 &&
	      t.by_flag[3] == 22 && t.by_flag[4] == 5 &&
	      t.by_flag[BROKEN_UNKNOWN] == 10);
	CHECK(!strcmp(t.tool, "sym-record") && !strcmp(t.mode, "dwarf"));
	/* libA.so's two maps add up to 9 and beat libB.so's 7. */
	CHECK(!strcmp(t.stop_module, "libA.so") && t.stop_samples == 9);
	CHECK(broken_warns(&t));

	broken_list(&t, list, sizeof(list));
	CHECK(!strcmp(list, "unwind 22, unknown 10, kernel 5, truncated 3"));
	broken_list(&t, list, 12);	/* cut, still a string */
	CHECK(strlen(list) == 11);

	/* Sums: tool and mode stay while they agree. */
	broken_add(&sum, &t);
	broken_add(&sum, &t);
	CHECK(sum.samples == 400 && sum.flagged == 74 &&
	      sum.by_flag[3] == 44 && !strcmp(sum.mode, "dwarf") &&
	      sum.stop_samples == 0);
	t.mode = "fp";
	broken_add(&sum, &t);
	CHECK(sum.mode == NULL && !strcmp(sum.tool, "sym-record"));
	memset(&t, 0, sizeof(t));	/* folded input: skipped */
	broken_add(&sum, &t);
	CHECK(sum.samples == 600 && !strcmp(sum.tool, "sym-record"));
	sym_prof_free(p);
}

static void test_warning(void)
{
	struct sym_prof *p = NULL;
	struct broken_tally t;
	char msg[256], *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_ERR(read_str(prof_text, &p, msg, sizeof(msg)), 0);
	if (!p)
		return;
	CHECK_ERR(broken_tally_prof(p, &t), 0);
	tool_set_prog("sym tree");
	f = open_memstream(&text, &len);
	CHECK(broken_warn(f, &t, "in.raw", "they are under " BROKEN_FRAME));
	fclose(f);
	/* The head line, then the flags, most samples first. */
	CHECK(has(text, "sym tree: warning: 'in.raw': 37 of 200 samples "
			"(18.50%) have broken stacks, recorded by sym-record "
			"in dwarf mode; they are under [broken stack]:\n"
			"sym tree:   unwind: 22 samples (11.00%), 9 of them "
			"stopping in libA.so: the CFI unwind stopped"));
	CHECK(has(text, "\nsym tree:   unknown: 10 samples"));
	CHECK(has(text, "\nsym tree:   kernel: 5 samples (2.50%): only kernel"));
	CHECK(has(text, "\nsym tree:   truncated: 3 samples (1.50%): "));
	CHECK(strstr(text, "unknown: 10") < strstr(text, "kernel: 5") &&
	      strstr(text, "kernel: 5") < strstr(text, "truncated: 3"));
	free(text);
	text = NULL;

	/* fp mode names no module (the chain's end says nothing of CFI). */
	t.mode = "fp";
	f = open_memstream(&text, &len);
	CHECK(broken_warn(f, &t, "in.raw", NULL));
	fclose(f);
	CHECK(has(text, "in fp mode:\n") && !has(text, "stopping in") &&
	      has(text, "record with -g dwarf"));
	free(text);
	text = NULL;

	/* 2% or less: nothing. */
	t.flagged = 4;
	f = open_memstream(&text, &len);
	CHECK(!broken_warn(f, &t, "in.raw", NULL));
	fclose(f);
	CHECK(len == 0);
	free(text);
	sym_prof_free(p);
}

static void test_compare(void)
{
	struct broken_tally a = { .samples = 1000, .flagged = 100 };
	struct broken_tally b = { .samples = 1000, .flagged = 100 };
	struct broken_cmp c;

	CHECK_ERR(broken_compare(&a, &b, &c), 0);
	CHECK(!c.differ && !c.refuse && c.d.diff == 0 && c.d.lo < 0 &&
	      c.d.hi > 0);
	b.flagged = 10;
	CHECK_ERR(broken_compare(&a, &b, &c), 0);
	CHECK(c.differ && c.refuse && c.pa == 0.1 && c.pb == 0.01);
	CHECK(c.d.diff < -0.0899 && c.d.diff > -0.0901 && c.d.hi < 0);
	/* Swapped: the sign follows B - A. */
	CHECK_ERR(broken_compare(&b, &a, &c), 0);
	CHECK(c.differ && c.refuse && c.d.lo > 0);
	/* Both small: they differ, but sym diff marks rather than refuses. */
	a = (struct broken_tally){ .samples = 10000, .flagged = 1 };
	b = (struct broken_tally){ .samples = 10000, .flagged = 150 };
	CHECK_ERR(broken_compare(&a, &b, &c), 0);
	CHECK(c.differ && !c.refuse && c.d.lo > 0.009 && c.d.hi < 0.02);
	/* At 99.9%, not 95%: 30/1000 against 60/1000 (3% against 6%) has
	 * z = 3.19 from the 99.9% interval: beyond 1.96, not beyond 3.29. */
	a = (struct broken_tally){ .samples = 1000, .flagged = 30 };
	b = (struct broken_tally){ .samples = 1000, .flagged = 60 };
	CHECK_ERR(broken_compare(&a, &b, &c), 0);
	CHECK(!c.differ && c.d.z > 1.96 && c.d.z < 3.29);
	a.samples = 0;
	a.flagged = 0;
	CHECK_ERR(broken_compare(&a, &b, &c), -EINVAL);
	a = (struct broken_tally){ .samples = 10, .flagged = 11 };
	CHECK_ERR(broken_compare(&a, &b, &c), -EINVAL);
}

int main(void)
{
	test_decision();
	test_cures();
	test_tally();
	test_warning();
	test_compare();
	return tap_done();
}
