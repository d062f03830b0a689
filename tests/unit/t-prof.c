/*
 * t-prof.c - struct sym_prof and the raw stack format (libsym/prof/prof.c,
 * libsym/prof/raw.c, docs/raw-format.md).
 *
 * - A profile built through the API, with strings that need every kind of
 *   escape, written and read back, is equal field by field, and writing
 *   it again gives the same bytes.
 * - Aggregation: identical stacks are summed, any difference in pid, tid,
 *   flags or frames makes a new stack, first-added order is kept; 1M adds
 *   of 50k unique stacks give exactly the expected counts.
 * - The API's argument checks and their error codes.
 * - The reader: what it must accept (comments, unknown keywords and
 *   flags, renumbered map IDs, duplicates summed) and every documented
 *   error, each with its code and line number; the limits.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prof-test.h"
#include "tap.h"
#include "base.h"

static int header_equal(const struct sym_prof_header *a,
			const struct sym_prof_header *b)
{
	return same_str(a->host, b->host) && same_str(a->tool, b->tool) &&
	       same_str(a->tool_version, b->tool_version) &&
	       a->start_ns == b->start_ns && a->duration_ns == b->duration_ns &&
	       same_str(a->event, b->event) && same_str(a->mode, b->mode) &&
	       a->frequency == b->frequency && a->period == b->period &&
	       same_str(a->weight_unit, b->weight_unit) &&
	       a->samples == b->samples && a->lost == b->lost &&
	       a->throttled == b->throttled && a->dropped == b->dropped &&
	       !memcmp(a->flagged, b->flagged, sizeof(a->flagged)) &&
	       a->pidns == b->pidns;
}

static int map_equal(const struct sym_prof_map *a,
		     const struct sym_prof_map *b)
{
	return a->id == b->id && a->kind == b->kind && a->pid == b->pid &&
	       a->flags == b->flags && a->start == b->start &&
	       a->end == b->end && a->pgoff == b->pgoff &&
	       a->vaddr == b->vaddr && same_str(a->build_id, b->build_id) &&
	       same_str(a->path, b->path);
}

static int stack_equal(const struct sym_prof_stack *a,
		       const struct sym_prof_stack *b)
{
	if (a->count != b->count || a->weight != b->weight ||
	    a->pid != b->pid || a->tid != b->tid || a->flags != b->flags ||
	    a->nframes != b->nframes)
		return 0;
	for (uint32_t i = 0; i < a->nframes; i++)
		if (a->frames[i].addr != b->frames[i].addr ||
		    a->frames[i].map != b->frames[i].map ||
		    a->frames[i].flags != b->frames[i].flags)
			return 0;
	return 1;
}

static int source_equal(const struct sym_prof_source *a,
			const struct sym_prof_source *b)
{
	return a->id == b->id && same_str(a->host, b->host) &&
	       a->start_ns == b->start_ns && a->duration_ns == b->duration_ns &&
	       a->period == b->period &&
	       same_str(a->weight_unit, b->weight_unit) &&
	       a->samples == b->samples && a->lost == b->lost;
}

/* Header, maps, sources and stacks (with their sources) equal (processes
 * and threads are checked by the callers, which know the pids). */
/* The same value types, and the same values on every stack. */
static int values_equal(const struct sym_prof *a, const struct sym_prof *b)
{
	uint32_t n = sym_prof_nvalue_types(a);

	if (n != sym_prof_nvalue_types(b))
		return 0;
	for (uint32_t k = 0; k < n; k++) {
		const char *ua, *ub;

		if (strcmp(sym_prof_value_type(a, k, &ua),
			   sym_prof_value_type(b, k, &ub)) || strcmp(ua, ub))
			return 0;
	}
	for (size_t i = 0; n && i < sym_prof_nstacks(a); i++)
		if (memcmp(sym_prof_stack_values(a, i),
			   sym_prof_stack_values(b, i), n * sizeof(uint64_t)))
			return 0;
	return 1;
}

static int prof_equal(const struct sym_prof *a, const struct sym_prof *b)
{
	if (!header_equal(sym_prof_header(a), sym_prof_header(b)) ||
	    !same_str(sym_prof_release(a), sym_prof_release(b)) ||
	    sym_prof_nmaps(a) != sym_prof_nmaps(b) ||
	    sym_prof_nsources(a) != sym_prof_nsources(b) ||
	    sym_prof_nstacks(a) != sym_prof_nstacks(b))
		return 0;
	for (uint32_t i = 0; i < sym_prof_nmaps(a); i++)
		if (!map_equal(sym_prof_map(a, i), sym_prof_map(b, i)))
			return 0;
	for (uint32_t i = 1; i <= sym_prof_nsources(a); i++)
		if (!source_equal(sym_prof_source(a, i), sym_prof_source(b, i)))
			return 0;
	for (size_t i = 0; i < sym_prof_nstacks(a); i++)
		if (!stack_equal(sym_prof_stack(a, i), sym_prof_stack(b, i)) ||
		    sym_prof_stack_source(a, i) != sym_prof_stack_source(b, i))
			return 0;
	return values_equal(a, b);
}

/* Strings that need each escape of the format. */
static const char path_weird[] = "/opt/my app/100%/-x-/\xc3\xa9t\xc3\xa9.so";
static const char comm_weird[] = "a\tb\x7f\x01 %2D";

static void test_round_trip(void)
{
	struct sym_prof *p = NULL, *q = NULL;
	struct sym_prof_header h = {
		.host = "build 7",
		.tool = "sym-record",
		.tool_version = "0.1.0",
		.start_ns = 1796059275123456789LL,
		.duration_ns = 10000123456ULL,
		.event = "cpu-clock",
		.mode = "fp",
		.frequency = 99,
		.period = 10101010,
		.weight_unit = "ns",
		.samples = 994,
		.lost = 1,
		.throttled = 2,
		.dropped = 3,
		.flagged = { 4, 5, 6, 7, 8 },
		.pidns = 4026531836ULL,
	};
	struct sym_prof_map m[] = {
		{ .kind = SYM_PROF_MAP_FILE, .pid = 4242, .start = 0x55d0c0001000,
		  .end = 0x55d0c0002000, .pgoff = 0x1000, .vaddr = 0x1000,
		  .build_id = "4f1c0de2", .path = "/usr/local/bin/work" },
		{ .kind = SYM_PROF_MAP_FILE, .pid = 4242, .start = 0x7f0000000000,
		  .end = UINT64_MAX, .pgoff = 0, .vaddr = 0,
		  .flags = SYM_PROF_MAP_VADDR_GUESSED,
		  .build_id = NULL, .path = path_weird },
		{ .kind = SYM_PROF_MAP_VDSO, .pid = 4242, .start = 1, .end = 1,
		  .build_id = "00", .path = "-" },
		{ .kind = SYM_PROF_MAP_KERNEL, .pid = -1,
		  .start = 0xffffffff81000000, .end = 0xffffffff82000000,
		  .vaddr = 0xffffffff81000000, .path = "[kernel.kallsyms]" },
		{ .kind = SYM_PROF_MAP_ANON, .pid = 0, .start = 0, .end = 0,
		  .path = "" },
	};
	struct sym_prof_frame f1[] = {
		{ .addr = 0x1139, .map = 0 },
		{ .addr = 0x29d8a, .map = 1, .flags = SYM_PROF_FRAME_RETURN },
		{ .addr = UINT64_MAX, .map = SYM_PROF_NOMAP,
		  .flags = SYM_PROF_FRAME_RETURN },
		{ .addr = 0, .map = 4, .flags = SYM_PROF_FRAME_RETURN },
	};
	struct sym_prof_frame f2[] = {
		{ .addr = 0xffffffff81234567, .map = 3 },
		{ .addr = 0x7f, .map = 2, .flags = SYM_PROF_FRAME_RETURN },
	};
	struct sym_prof_stack s[] = {
		{ .count = 693, .weight = 7000000000ULL, .pid = 4242,
		  .tid = 4243, .nframes = 4, .frames = f1 },
		{ .count = UINT64_MAX, .weight = UINT64_MAX, .pid = 0,
		  .tid = 0, .flags = SYM_PROF_TRUNCATED | SYM_PROF_LEAF |
				     SYM_PROF_KERNEL | SYM_PROF_UNKNOWN_FLAG,
		  .nframes = 2, .frames = f2 },
		{ .count = 0, .weight = 0, .pid = INT32_MAX, .tid = 1,
		  .flags = SYM_PROF_BADRETURN | SYM_PROF_UNWIND, .nframes = 0 },
	};
	char msg[256], *text = NULL, *text2 = NULL;
	size_t len = 0, len2 = 0;
	uint64_t pidns;
	int32_t nspid;
	uint32_t id;

	CHECK_ERR(sym_prof_new(&p), 0);
	CHECK_ERR(sym_prof_set_header(p, &h), 0);
	CHECK(sym_prof_release(p) == NULL);
	CHECK_ERR(sym_prof_set_release(p, "6.1.0-57 #1"), 0);
	CHECK_ERR(sym_prof_set_release(NULL, "x"), -EINVAL);
	CHECK(sym_prof_release(NULL) == NULL);
	for (size_t i = 0; i < sizeof(m) / sizeof(*m); i++) {
		CHECK_ERR(sym_prof_add_map(p, &m[i], &id), 0);
		CHECK(id == i);
		m[i].id = (uint32_t)i;
	}
	/* "" is stored as NULL. */
	m[4].path = NULL;
	CHECK_ERR(sym_prof_add_process(p, 4242, 4026532000ULL, 17, "work"), 0);
	CHECK_ERR(sym_prof_add_process(p, 1, 0, 0, comm_weird), 0);
	CHECK_ERR(sym_prof_add_process(p, 2, 5, 6, NULL), 0);
	CHECK_ERR(sym_prof_add_process(p, 3, 0, 0, "-"), 0);
	CHECK_ERR(sym_prof_add_thread(p, 4242, 4243, "worker 1"), 0);
	CHECK_ERR(sym_prof_add_thread(p, 4242, 4244, NULL), 0);
	CHECK_ERR(sym_prof_add_thread(p, 1, 1, "%"), 0);
	for (size_t i = 0; i < sizeof(s) / sizeof(*s); i++)
		CHECK_ERR(sym_prof_add_stack(p, &s[i]), 0);

	CHECK_ERR(write_mem(p, &text, &len), 0);
	if (!text)
		goto out;
	/* The escapes, as docs/raw-format.md spells them. */
	CHECK(strstr(text, "host build%207\n"));
	CHECK(strstr(text, " /opt/my%20app/100%25/-x-/%C3%A9t%C3%A9.so\n"));
	CHECK(strstr(text, "process 1 - 0 a%09b%7F%01%20%252D\n"));
	CHECK(strstr(text, "process 3 - 0 %2D\n"));
	CHECK(strstr(text, "map 2 vdso 4242 1 1 0 0 00 %2D\n"));
	CHECK(strstr(text, "map 4 anon 0 0 0 0 0 - -\n"));
	CHECK(strstr(text, "mapflags 1 vaddr-guessed\n"));
	CHECK(strstr(text, "start 2026-11-30T17:21:15.123456789Z\n"));
	CHECK(strstr(text, "duration 10.000123456\n"));
	CHECK(strstr(text, "stack 18446744073709551615 18446744073709551615 "
			   "0 0 truncated,leaf,kernel,unknown "
			   "p3:ffffffff81234567 r2:7f\n"));
	CHECK(strstr(text, "stack 0 0 2147483647 1 badreturn,unwind\n"));
	CHECK(strstr(text, " r?:ffffffffffffffff r4:0\n"));
	CHECK(len > 4 && !strcmp(text + len - 4, "end\n"));

	CHECK_ERR(sym_prof_read(text, len, &q, msg, sizeof(msg)), 0);
	if (!q)
		goto out;
	CHECK(prof_equal(p, q));
	for (size_t i = 0; i < sizeof(m) / sizeof(*m); i++)
		CHECK(map_equal(sym_prof_map(q, (uint32_t)i), &m[i]));
	for (size_t i = 0; i < sizeof(s) / sizeof(*s); i++)
		CHECK(stack_equal(sym_prof_stack(q, i), &s[i]));
	CHECK(header_equal(sym_prof_header(q), &h));
	CHECK(same_str(sym_prof_release(q), "6.1.0-57 #1"));
	CHECK(!strcmp(sym_prof_map(q, 1)->path, path_weird));
	CHECK(!strcmp(sym_prof_process(q, 4242, &pidns, &nspid), "work") &&
	      pidns == 4026532000ULL && nspid == 17);
	CHECK(!strcmp(sym_prof_process(q, 1, &pidns, &nspid), comm_weird) &&
	      pidns == 0 && nspid == 0);
	CHECK(!sym_prof_process(q, 2, &pidns, &nspid) && pidns == 5 &&
	      nspid == 6);
	CHECK(!strcmp(sym_prof_process(q, 3, NULL, NULL), "-"));
	CHECK(!sym_prof_process(q, 4, &pidns, &nspid) && pidns == 0 &&
	      nspid == 0);
	CHECK(!strcmp(sym_prof_thread(q, 4243), "worker 1"));
	CHECK(!sym_prof_thread(q, 4244));
	CHECK(!strcmp(sym_prof_thread(q, 1), "%"));
	CHECK(!sym_prof_thread(q, 4242));

	/* Written again: the same bytes. */
	CHECK_ERR(write_mem(q, &text2, &len2), 0);
	CHECK(text2 && len2 == len && !memcmp(text, text2, len));
out:
	free(text);
	free(text2);
	sym_prof_free(p);
	sym_prof_free(q);
}

/* The header of an empty profile: unknown strings and times. */
static void test_empty(void)
{
	struct sym_prof *p = NULL, *q = NULL;
	struct sym_prof_header h = { .weight_unit = "samples", .host = "" };
	char *text = NULL, msg[128];
	size_t len;

	CHECK_ERR(sym_prof_new(&p), 0);
	/* No weight unit: the file could not be read back. */
	CHECK_ERR(sym_prof_write(p, 1), -EINVAL);
	CHECK_ERR(sym_prof_set_header(p, &h), 0);
	CHECK(sym_prof_header(p)->host == NULL);
	CHECK(sym_prof_nmaps(p) == 0 && sym_prof_nstacks(p) == 0);
	CHECK(sym_prof_map(p, 0) == NULL && sym_prof_stack(p, 0) == NULL);
	CHECK_ERR(write_mem(p, &text, &len), 0);
	if (text) {
		CHECK(strstr(text, "sym-raw 1\nhost -\ntool - -\nstart -\n"
				   "duration 0.000000000\nevent -\nmode -\n"));
		CHECK(strstr(text, "\nrelease -\npidns -\nend\n"));
		CHECK_ERR(sym_prof_read(text, len, &q, msg, sizeof(msg)), 0);
		CHECK(q && prof_equal(p, q));
	}
	free(text);
	sym_prof_free(p);
	sym_prof_free(q);
	sym_prof_free(NULL);
}

/* Start times: the edges of 64-bit nanoseconds, and before 1970. */
static void test_times(void)
{
	static const struct {
		int64_t ns;
		const char *text;
	} t[] = {
		{ INT64_MAX, "2262-04-11T23:47:16.854775807Z" },
		{ INT64_MIN, "1677-09-21T00:12:43.145224192Z" },
		{ -1, "1969-12-31T23:59:59.999999999Z" },
		{ 1, "1970-01-01T00:00:00.000000001Z" },
		{ 951782400000000000LL, "2000-02-29T00:00:00.000000000Z" },
		{ 1796059275123456789LL, "2026-11-30T17:21:15.123456789Z" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		struct sym_prof_header h = { .weight_unit = "ns",
					     .start_ns = t[i].ns };
		struct sym_prof *p = NULL, *q = NULL;
		char *text = NULL, want[64], msg[128];
		size_t len;

		CHECK_ERR(sym_prof_new(&p), 0);
		CHECK_ERR(sym_prof_set_header(p, &h), 0);
		CHECK_ERR(write_mem(p, &text, &len), 0);
		snprintf(want, sizeof(want), "\nstart %s\n", t[i].text);
		CHECK(text && strstr(text, want));
		if (text)
			CHECK_ERR(sym_prof_read(text, len, &q, msg,
						sizeof(msg)), 0);
		CHECK(q && sym_prof_header(q)->start_ns == t[i].ns);
		free(text);
		sym_prof_free(p);
		sym_prof_free(q);
	}
}

static void test_aggregation(void)
{
	struct sym_prof *p = NULL;
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .pid = 1,
				  .start = 0, .end = 0x10000 };
	struct sym_prof_frame fr[3] = {
		{ .addr = 0x10, .map = 0 },
		{ .addr = 0x20, .map = 0, .flags = SYM_PROF_FRAME_RETURN },
		{ .addr = 0x30, .map = 0, .flags = SYM_PROF_FRAME_RETURN },
	};
	struct sym_prof_stack s = { .count = 1, .weight = 10, .pid = 1,
				    .tid = 1, .nframes = 3, .frames = fr };
	const struct sym_prof_stack *t;

	CHECK_ERR(sym_prof_new(&p), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	/* The frames were copied: changing ours does not change it. */
	fr[0].addr = 0x11;
	CHECK(sym_prof_stack(p, 0)->frames[0].addr == 0x10);
	fr[0].addr = 0x10;
	s.count = 2;
	s.weight = 20;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	CHECK(sym_prof_nstacks(p) == 1);
	t = sym_prof_stack(p, 0);
	CHECK(t->count == 3 && t->weight == 30);

	/* Each difference makes a new stack. */
	s.tid = 2;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	s.tid = 1;
	s.pid = 2;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	s.pid = 1;
	s.flags = SYM_PROF_LEAF;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	s.flags = 0;
	fr[1].flags = 0;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	fr[1].flags = SYM_PROF_FRAME_RETURN;
	fr[2].map = 1;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	fr[2].map = 0;
	s.nframes = 2;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	s.nframes = 3;
	CHECK(sym_prof_nstacks(p) == 7);
	/* And the first again: still summed into stack 0. */
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	CHECK(sym_prof_nstacks(p) == 7);
	t = sym_prof_stack(p, 0);
	CHECK(t->count == 5 && t->weight == 50 && t->tid == 1);
	CHECK(sym_prof_stack(p, 1)->tid == 2 && sym_prof_stack(p, 2)->pid == 2);
	CHECK(sym_prof_stack(p, 6)->nframes == 2);

	/* A sum past 2^64 - 1 fails and leaves the stack as it was. */
	s.count = UINT64_MAX - 5;
	s.weight = 1;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	t = sym_prof_stack(p, 0);
	CHECK(t->count == UINT64_MAX && t->weight == 51);
	s.count = 1;
	CHECK_ERR(sym_prof_add_stack(p, &s), -EOVERFLOW);
	s.count = 0;
	s.weight = UINT64_MAX;
	CHECK_ERR(sym_prof_add_stack(p, &s), -EOVERFLOW);
	t = sym_prof_stack(p, 0);
	CHECK(t->count == UINT64_MAX && t->weight == 51);
	sym_prof_free(p);
}

/*
 * Threads that add the same stack again and again, interleaved, with
 * more threads than the table of each thread's last stack has slots, and
 * stacks that differ from a thread's last one in each field: the profile
 * must be the one a plain model gives (each distinct stack once, in the
 * order first added, with the sums).
 */
#define RECENT_N 20000
#define RECENT_MAX 4096
struct recent_model {
	struct sym_prof_frame fr[3];
	int32_t pid, tid;
	uint32_t flags, nframes, source;
	uint64_t count, weight, v[2];
};

static void test_recent(void)
{
	static struct recent_model ref[RECENT_MAX];
	struct sym_prof *p = NULL;
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .pid = 1,
				  .start = 0, .end = 0x10000 };
	struct sym_prof_source src = { .host = "h", .period = 1 };
	const char *names[] = { "a", "b" }, *units[] = { "ns", "ns" };
	uint64_t x = 88172645463325252ULL;
	size_t nref = 0, bad = 0, k;
	uint32_t id;

	CHECK_ERR(sym_prof_new(&p), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	CHECK_ERR(sym_prof_add_source(p, &src, &id), 0);
	CHECK_ERR(sym_prof_set_value_types(p, names, units, 2), 0);
	for (int n = 0; n < RECENT_N; n++) {
		struct recent_model c;
		struct sym_prof_stack s;
		unsigned r;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		r = (unsigned)(x >> 20);
		memset(&c, 0, sizeof(c));
		/* Mostly a thread's usual stack; sometimes one field off. */
		c.tid = (int32_t)(r % 150) + 1;
		c.pid = c.tid % 3 ? 1 : 2;
		c.nframes = 3;
		for (k = 0; k < 3; k++) {
			c.fr[k].addr = 0x100 * (k + 1) + (uint64_t)c.tid % 5;
			c.fr[k].flags = k ? SYM_PROF_FRAME_RETURN : 0;
		}
		switch ((r >> 8) % 16) {
		case 0: c.flags = SYM_PROF_LEAF; break;
		case 1: c.nframes = 2; break;
		case 2: c.fr[2].map = 1; break;
		case 3: c.fr[1].flags = 0; break;
		case 4: c.fr[0].addr++; break;
		case 5: c.source = id; break;
		case 6: c.pid = 3; break;
		default: break;
		}
		c.count = 1;
		c.weight = r % 1000;
		c.v[0] = r % 7;
		c.v[1] = r % 11;
		s = (struct sym_prof_stack){ .count = c.count,
					     .weight = c.weight, .pid = c.pid,
					     .tid = c.tid, .flags = c.flags,
					     .nframes = c.nframes,
					     .frames = c.fr };
		if (sym_prof_add_stack_values(p, &s, c.source, c.v) != 0)
			bad++;
		for (k = 0; k < nref; k++) {
			struct recent_model *e = &ref[k];

			if (e->pid == c.pid && e->tid == c.tid &&
			    e->flags == c.flags && e->nframes == c.nframes &&
			    e->source == c.source &&
			    memcmp(e->fr, c.fr, c.nframes * sizeof(*c.fr)) == 0)
				break;
		}
		if (k == nref && nref < RECENT_MAX)
			ref[nref++] = c;
		else if (k < nref) {
			ref[k].count += c.count;
			ref[k].weight += c.weight;
			ref[k].v[0] += c.v[0];
			ref[k].v[1] += c.v[1];
		}
	}
	CHECK(bad == 0 && nref < RECENT_MAX);
	CHECK(sym_prof_nstacks(p) == nref);
	for (k = 0; k < nref && k < sym_prof_nstacks(p); k++) {
		const struct sym_prof_stack *t = sym_prof_stack(p, k);
		const uint64_t *v = sym_prof_stack_values(p, k);
		const struct recent_model *e = &ref[k];

		if (t->pid != e->pid || t->tid != e->tid ||
		    t->flags != e->flags || t->nframes != e->nframes ||
		    memcmp(t->frames, e->fr, e->nframes * sizeof(*e->fr)) ||
		    sym_prof_stack_source(p, k) != e->source ||
		    t->count != e->count || t->weight != e->weight || !v ||
		    v[0] != e->v[0] || v[1] != e->v[1])
			bad++;
	}
	CHECK(bad == 0);
	sym_prof_free(p);
}

/* The API refuses what it could not write and read back. */
static void test_api_errors(void)
{
	struct sym_prof *p = NULL;
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .start = 1,
				  .end = 2 };
	struct sym_prof_frame fr[SYM_PROF_MAX_FRAMES + 1] = { { 0 } };
	struct sym_prof_stack s = { .count = 1, .nframes = 1, .frames = fr };

	CHECK_ERR(sym_prof_new(&p), 0);
	m.start = 3;
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), -EINVAL);
	m.start = 1;
	m.kind = SYM_PROF_MAP_ANON + 1;
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), -EINVAL);
	m.kind = SYM_PROF_MAP_FILE;
	m.pid = -2;
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), -EINVAL);
	m.pid = 0;
	m.flags = SYM_PROF_MAP_SRC_KALLSYMS << 1;	/* no such flag */
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), -EINVAL);
	m.flags = 0;
	m.build_id = "ABCD";
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), -EINVAL);
	m.build_id = "abc";
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), -EINVAL);
	m.build_id = "0x12";
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), -EINVAL);
	m.build_id = "";
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	CHECK(sym_prof_map(p, 0)->build_id == NULL);
	CHECK(sym_prof_nmaps(p) == 1);

	CHECK_ERR(sym_prof_add_process(p, -1, 0, 0, "x"), -EINVAL);
	CHECK_ERR(sym_prof_add_process(p, 1, 0, -1, "x"), -EINVAL);
	CHECK_ERR(sym_prof_add_thread(p, 1, -1, "x"), -EINVAL);
	CHECK_ERR(sym_prof_add_thread(p, -1, 1, "x"), -EINVAL);
	/* A second call replaces the first. */
	CHECK_ERR(sym_prof_add_process(p, 1, 2, 3, "x"), 0);
	CHECK_ERR(sym_prof_add_process(p, 1, 4, 5, "y"), 0);
	{
		uint64_t ns;
		int32_t nspid;

		CHECK(!strcmp(sym_prof_process(p, 1, &ns, &nspid), "y") &&
		      ns == 4 && nspid == 5);
	}
	CHECK_ERR(sym_prof_add_thread(p, 1, 1, "x"), 0);
	CHECK_ERR(sym_prof_add_thread(p, 1, 1, ""), 0);
	CHECK(sym_prof_thread(p, 1) == NULL);

	fr[0].map = 1;
	CHECK_ERR(sym_prof_add_stack(p, &s), -EINVAL);
	fr[0].map = SYM_PROF_NOMAP - 1;
	CHECK_ERR(sym_prof_add_stack(p, &s), -EINVAL);
	fr[0].map = 0;
	fr[0].flags = 2;
	CHECK_ERR(sym_prof_add_stack(p, &s), -EINVAL);
	fr[0].flags = 0;
	s.flags = 1u << SYM_PROF_NFLAGS;
	CHECK_ERR(sym_prof_add_stack(p, &s), -EINVAL);
	s.flags = 0;
	s.pid = -1;
	CHECK_ERR(sym_prof_add_stack(p, &s), -EINVAL);
	s.pid = 0;
	s.tid = -1;
	CHECK_ERR(sym_prof_add_stack(p, &s), -EINVAL);
	s.tid = 0;
	s.nframes = SYM_PROF_MAX_FRAMES + 1;
	CHECK_ERR(sym_prof_add_stack(p, &s), -E2BIG);
	CHECK(sym_prof_nstacks(p) == 0);
	s.nframes = SYM_PROF_MAX_FRAMES;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	s.nframes = 0;
	s.frames = NULL;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	CHECK(sym_prof_nstacks(p) == 2);
	sym_prof_free(p);
}

/* 1M adds of 50k unique stacks (20 to 40 frames, 8 threads): every count
 * and weight comes out exactly, in first-added order, and the profile
 * survives a write and a read. */
static void test_many(void)
{
	enum { NUNIQ = 50000, NADDS = 1000000 };
	struct sym_prof *p = NULL, *q = NULL;
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .pid = 7,
				  .start = 0x1000, .end = 0x100000 };
	struct sym_prof_header h = { .weight_unit = "ns", .period = 1 };
	struct sym_prof_frame fr[64];
	uint64_t *count = calloc(NUNIQ, sizeof(*count));
	uint32_t *first = malloc(NUNIQ * sizeof(*first));
	size_t order = 0, bad = 0, len = 0;
	char *text = NULL, msg[256];
	int err = 0;

	if (!count || !first)
		goto out;
	CHECK_ERR(sym_prof_new(&p), 0);
	CHECK_ERR(sym_prof_set_header(p, &h), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	for (size_t i = 0; i < NADDS && !err; i++) {
		/* A permutation-ish walk over the unique stacks. */
		uint32_t u = (uint32_t)((i * 7919 + i / NUNIQ) % NUNIQ);
		struct sym_prof_stack s = { .count = 1, .weight = u + 1,
					    .pid = 7, .tid = (int32_t)(u % 8),
					    .frames = fr };

		s.nframes = 20 + u % 21;
		for (uint32_t k = 0; k < s.nframes; k++) {
			fr[k].addr = 0x1000 + (uint64_t)u * 64 + k;
			fr[k].map = k & 1;
			fr[k].flags = k ? SYM_PROF_FRAME_RETURN : 0;
		}
		if (!count[u])
			first[u] = (uint32_t)order++;
		count[u]++;
		err = sym_prof_add_stack(p, &s);
	}
	CHECK_ERR(err, 0);
	CHECK(sym_prof_nstacks(p) == NUNIQ && order == NUNIQ);
	for (uint32_t u = 0; u < NUNIQ; u++) {
		const struct sym_prof_stack *t = sym_prof_stack(p, first[u]);

		if (!t || t->count != count[u] ||
		    t->weight != count[u] * (u + 1) ||
		    t->tid != (int32_t)(u % 8) || t->nframes != 20 + u % 21 ||
		    t->frames[t->nframes - 1].addr !=
			    0x1000 + (uint64_t)u * 64 + t->nframes - 1)
			bad++;
	}
	CHECK(bad == 0);
	CHECK_ERR(write_mem(p, &text, &len), 0);
	if (text) {
		CHECK_ERR(sym_prof_read(text, len, &q, msg, sizeof(msg)), 0);
		CHECK(q && prof_equal(p, q));
	}
out:
	free(text);
	free(count);
	free(first);
	sym_prof_free(p);
	sym_prof_free(q);
}

/*
 * The reader.
 */

#define HEAD "sym-raw 1\nperiod 1\nweight-unit ns\n"
#define MAP0 "map 0 file 1 1000 2000 0 1000 ab /bin/x\n"

/* @text must fail with @want, at @line, with @what in the message. */
static void bad_file(const char *text, size_t len, int want, int line,
		     const char *what)
{
	struct sym_prof *p = (struct sym_prof *)&p;
	char msg[256], prefix[32];
	int err = sym_prof_read(text, len, &p, msg, sizeof(msg));

	snprintf(prefix, sizeof(prefix), "line %d: ", line);
	tap_ok(err == want && p == NULL &&
		       !strncmp(msg, prefix, strlen(prefix)) &&
		       strstr(msg, what) != NULL,
	       __FILE__, __LINE__, what);
	if (err != want || strncmp(msg, prefix, strlen(prefix)) ||
	    !strstr(msg, what))
		printf("#   got %d '%s', want %d '%s...%s'\n", err, msg, want,
		       prefix, what);
	sym_prof_free(err ? NULL : p);
}

#define BAD(text, line, what)                                                \
	bad_file(text, sizeof(text) - 1, -SYM_E_BADPROFILE, line, what)

/*
 * Sources: the API, the text, the round trip, the reader's errors.
 */
static void test_sources(void)
{
	struct sym_prof *p = NULL, *q = NULL;
	struct sym_prof_header h = { .weight_unit = "ns", .period = 10 };
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .pid = 1,
				  .start = 0x1000, .end = 0x2000,
				  .vaddr = 0x1000, .build_id = "ab" };
	struct sym_prof_source src[] = {
		{ .host = "web 1", .start_ns = 1796059275000000000LL,
		  .duration_ns = 10500000000ULL, .period = 10101010,
		  .weight_unit = "ns", .samples = 990, .lost = 2 },
		{ .host = "", .period = 1, .weight_unit = "" },
		{ .host = "-", .start_ns = 1, .duration_ns = UINT64_MAX,
		  .period = UINT64_MAX, .weight_unit = "samples",
		  .samples = UINT64_MAX, .lost = UINT64_MAX },
	};
	struct sym_prof_frame fr[] = { { .addr = 0x1010, .map = 0 } };
	struct sym_prof_stack s = { .count = 1, .weight = 10, .pid = 1,
				    .tid = 1, .nframes = 1, .frames = fr };
	const struct sym_prof_source *got;
	char msg[256], *text = NULL, *text2 = NULL;
	size_t len = 0, len2 = 0;
	uint32_t id;

	CHECK_ERR(sym_prof_new(&p), 0);
	CHECK_ERR(sym_prof_set_header(p, &h), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	CHECK(sym_prof_nsources(p) == 0 && !sym_prof_source(p, 0) &&
	      !sym_prof_source(p, 1));
	/* Before any source: stacks have none, and a source that does not
	 * exist is refused. */
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	CHECK_ERR(sym_prof_add_stack_from(p, &s, 1), -EINVAL);
	CHECK(sym_prof_nstacks(p) == 1 && sym_prof_stack_source(p, 0) == 0);
	for (size_t i = 0; i < sizeof(src) / sizeof(*src); i++) {
		CHECK_ERR(sym_prof_add_source(p, &src[i], &id), 0);
		CHECK(id == i + 1);
		src[i].id = id;
	}
	src[1].host = src[1].weight_unit = NULL;	/* "" is kept as NULL */
	CHECK(sym_prof_nsources(p) == 3 && !sym_prof_source(p, 0) &&
	      !sym_prof_source(p, 4));
	for (uint32_t i = 1; i <= 3; i++) {
		got = sym_prof_source(p, i);
		CHECK(got && source_equal(got, &src[i - 1]));
	}
	/* Strings were copied. */
	got = sym_prof_source(p, 1);
	CHECK(got && got->host != src[0].host &&
	      !strcmp(got->host, "web 1"));

	/* The source is part of a stack's key. */
	CHECK_ERR(sym_prof_add_stack_from(p, &s, 1), 0);
	CHECK_ERR(sym_prof_add_stack_from(p, &s, 2), 0);
	CHECK_ERR(sym_prof_add_stack_from(p, &s, 1), 0);
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	CHECK_ERR(sym_prof_add_stack_from(p, &s, 4), -EINVAL);
	CHECK(sym_prof_nstacks(p) == 3);
	CHECK(sym_prof_stack_source(p, 0) == 0 &&
	      sym_prof_stack(p, 0)->count == 2);
	CHECK(sym_prof_stack_source(p, 1) == 1 &&
	      sym_prof_stack(p, 1)->count == 2 &&
	      sym_prof_stack(p, 1)->weight == 20);
	CHECK(sym_prof_stack_source(p, 2) == 2 &&
	      sym_prof_stack(p, 2)->count == 1);
	CHECK(sym_prof_stack_source(p, 3) == 0);
	/* Back to source 0 after a sourced stack, then a new one of 3. */
	fr[0].addr = 0x1020;
	CHECK_ERR(sym_prof_add_stack(p, &s), 0);
	CHECK_ERR(sym_prof_add_stack_from(p, &s, 3), 0);
	CHECK(sym_prof_nstacks(p) == 5 && sym_prof_stack_source(p, 3) == 0 &&
	      sym_prof_stack_source(p, 4) == 3);

	CHECK_ERR(write_mem(p, &text, &len), 0);
	if (!text)
		goto out;
	CHECK(strstr(text, "source 1 web%201 2026-11-30T17:21:15.000000000Z "
			   "10.500000000 10101010 ns 990 2\n"));
	CHECK(strstr(text, "source 2 - - 0.000000000 1 - 0 0\n"));
	CHECK(strstr(text, "source 3 %2D 1970-01-01T00:00:00.000000001Z "
			   "18446744073.709551615 18446744073709551615 "
			   "samples 18446744073709551615 "
			   "18446744073709551615\n"));
	/* `from` only where the source changes, sources before stacks. */
	CHECK(strstr(text, "\nstack 2 20 1 1 - p0:1010\nfrom 1\n"
			   "stack 2 20 1 1 - p0:1010\nfrom 2\n"
			   "stack 1 10 1 1 - p0:1010\nfrom -\n"
			   "stack 1 10 1 1 - p0:1020\nfrom 3\n"
			   "stack 1 10 1 1 - p0:1020\nend\n"));
	CHECK(strstr(text, "source 3") < strstr(text, "stack "));
	CHECK_ERR(sym_prof_read(text, len, &q, msg, sizeof(msg)), 0);
	CHECK(q && prof_equal(p, q));
	if (q)
		CHECK_ERR(write_mem(q, &text2, &len2), 0);
	CHECK(text2 && len2 == len && !memcmp(text, text2, len));
	sym_prof_free(q);
	q = NULL;

	/* File ids are renumbered 1 to n in file order; duplicates of one
	 * source are summed, of two sources kept apart; fields after the
	 * 8th are for later versions. */
	CHECK_ERR(read_str("sym-raw 1\nperiod 1\nweight-unit ns\n"
			   "map 0 file 1 1000 2000 0 1000 ab /bin/x\n"
			   "source 9 a - 1 1 ns 3 0 future fields\n"
			   "from 9\n"
			   "source 4 b 2026-11-30T17:21:15Z 2.5 1 - 1 0\n"
			   "stack 1 1 1 1 - p0:1000\n"
			   "from 4\nstack 1 1 1 1 - p0:1000\n"
			   "from 9\nstack 2 2 1 1 - p0:1000\n"
			   "from -\nstack 5 5 1 1 - p0:1000\n"
			   "end\n", &q, msg, sizeof(msg)), 0);
	if (q) {
		CHECK(sym_prof_nsources(q) == 2 && sym_prof_nstacks(q) == 3);
		got = sym_prof_source(q, 1);
		CHECK(got && !strcmp(got->host, "a") && got->samples == 3 &&
		      got->duration_ns == 1000000000ULL);
		got = sym_prof_source(q, 2);
		CHECK(got && !strcmp(got->host, "b") && !got->weight_unit &&
		      got->duration_ns == 2500000000ULL &&
		      got->start_ns == 1796059275000000000LL);
		CHECK(sym_prof_stack_source(q, 0) == 1 &&
		      sym_prof_stack(q, 0)->count == 3);
		CHECK(sym_prof_stack_source(q, 1) == 2 &&
		      sym_prof_stack(q, 1)->count == 1);
		CHECK(sym_prof_stack_source(q, 2) == 0 &&
		      sym_prof_stack(q, 2)->count == 5);
	}
out:
	free(text);
	free(text2);
	sym_prof_free(p);
	sym_prof_free(q);
}

static void test_read_errors(void)
{
	BAD("", 1, "empty file");
	BAD("hello\n", 1, "not a sym-raw file");
	BAD("sym-raw 1 \n", 1, "byte 0x20 in the 'sym-raw 1' line");
	BAD("sym-raw 3\nend\n", 1, "version '3' is not 1 or 2");
	BAD("# a comment\nsym-raw 1\nend\n", 1, "not a sym-raw file");
	BAD("sym-raw 1\r\n", 1, "byte 0x0d in the 'sym-raw 1' line");
	BAD("sym-raw 10\nend\n", 1, "version '10' is not 1");
	BAD(HEAD, 4, "no 'end' line");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p0:1000\n", 6, "no 'end' line");
	BAD(HEAD "end", 4, "no newline at the end");
	BAD(HEAD "stack 1 1 1 1 - p?:1", 4, "no newline at the end");
	BAD(HEAD "end\n\n", 5, "follows the 'end' line");
	BAD(HEAD "end\n# comment\n", 5, "follows the 'end' line");
	BAD(HEAD "end\nend\n", 5, "follows the 'end' line");
	BAD("sym-raw 1\nweight-unit ns\nend\n", 3, "no 'period' line");
	BAD("sym-raw 1\nperiod 1\nend\n", 3, "no 'weight-unit' line");
	BAD(HEAD "end x\n", 4, "'end' takes 0 fields, not 1");

	/* Sources. */
	BAD(HEAD "source 1 a - 1 1 ns 1\nend\n", 4,
	    "'source' takes at least 8 fields, not 7");
	BAD(HEAD "source x a - 1 1 ns 1 0\nend\n", 4, "source ID 'x'");
	BAD(HEAD "source 1 a - 1 1 ns 1 0\nsource 1 b - 1 1 ns 1 0\nend\n",
	    5, "second source with ID 1");
	BAD(HEAD "source 1 a%0 - 1 1 ns 1 0\nend\n", 4,
	    "source host: '%' not followed by two hex digits");
	BAD(HEAD "source 1 a 2026-13-01T00:00:00Z 1 1 ns 1 0\nend\n", 4,
	    "is not YYYY-MM-DDTHH:MM:SS[.F]Z");
	BAD(HEAD "source 1 a - 1.x 1 ns 1 0\nend\n", 4, "duration fraction");
	BAD(HEAD "source 1 a - 1 -1 ns 1 0\nend\n", 4, "source period");
	BAD(HEAD "source 1 a - 1 1 ns 1 18446744073709551616\nend\n", 4,
	    "source lost");
	BAD(HEAD "from 1\nend\n", 4,
	    "from names source 1, which no source line before defines");
	BAD(HEAD "from\nend\n", 4, "'from' takes 1 fields, not 0");
	BAD(HEAD "source 1 a - 1 1 ns 1 0\nfrom 1 2\nend\n", 5,
	    "'from' takes 1 fields, not 2");
	BAD(HEAD "source 1 a - 1 1 ns 1 0\nfrom 0x1\nend\n", 5,
	    "from's source ID '0x1'");

	/* Lexical rules. */
	BAD(HEAD "host  x\nend\n", 4, "empty field");
	BAD(HEAD "host x \nend\n", 4, "empty field");
	BAD(HEAD " host x\nend\n", 4, "starts with a space");
	BAD(HEAD "host a\tb\nend\n", 4, "byte 0x09 is not printable");
	BAD(HEAD "host caf\xc3\xa9\nend\n", 4, "byte 0xc3 is not printable");
	BAD(HEAD "host x\r\nend\n", 4, "byte 0x0d is not printable");
	BAD(HEAD "host a%G0\nend\n", 4, "not followed by two hex digits");
	BAD(HEAD "host a%4\nend\n", 4, "not followed by two hex digits");
	BAD(HEAD "host a%\nend\n", 4, "not followed by two hex digits");
	BAD(HEAD "host a%00b\nend\n", 4, "%00");
	BAD(HEAD "host a b\nend\n", 4, "'host' takes 1 fields, not 2");
	BAD(HEAD "tool x\nend\n", 4, "'tool' takes 2 fields, not 1");

	/* Numbers. */
	BAD(HEAD "samples 1x\nend\n", 4, "'1x' is not a decimal number");
	BAD(HEAD "samples -1\nend\n", 4, "is not a decimal number");
	BAD(HEAD "samples +1\nend\n", 4, "is not a decimal number");
	BAD(HEAD "samples 18446744073709551616\nend\n", 4,
	    "larger than 2^64 - 1");
	BAD(HEAD "lost 99999999999999999999999\nend\n", 4,
	    "larger than 2^64 - 1");
	BAD(HEAD "pidns 0x12\nend\n", 4, "is not a decimal number");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p0:ABC\nend\n", 5,
	    "'ABC' is not lowercase hex");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p0:10000000000000000\nend\n", 5,
	    "larger than 2^64 - 1");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p0:0x10\nend\n", 5,
	    "is not lowercase hex");
	BAD(HEAD MAP0 "stack 1 1 -1 1 - p0:10\nend\n", 5,
	    "is not a decimal number");
	BAD(HEAD MAP0 "stack 1 1 2147483648 1 - p0:10\nend\n", 5,
	    "is not a PID");

	/* Header lines. */
	BAD(HEAD "host a\nhost b\nend\n", 5, "second 'host' line");
	BAD(HEAD "release 6.1\nrelease 6.2\nend\n", 5, "second 'release' line");
	BAD("sym-raw 1\nperiod 1\nperiod 1\nweight-unit ns\nend\n", 3,
	    "second 'period' line");
	BAD(HEAD "flagged leaf 1\nflagged leaf 2\nend\n", 5,
	    "second 'flagged leaf' line");
	BAD(HEAD "flagged leaf\nend\n", 4, "'flagged' takes 2 fields");
	BAD("sym-raw 1\nperiod 1\nweight-unit -\nend\n", 3,
	    "weight-unit cannot be unknown");
	BAD(HEAD "start 2026-13-01T00:00:00Z\nend\n", 4, "is not YYYY");
	BAD(HEAD "start 2025-02-29T00:00:00Z\nend\n", 4, "is not YYYY");
	BAD(HEAD "start 2026-11-30T24:00:00Z\nend\n", 4, "is not YYYY");
	BAD(HEAD "start 2026-11-30T17:21:15\nend\n", 4, "is not YYYY");
	BAD(HEAD "start 2026-11-30T17:21:15+01:00\nend\n", 4, "is not YYYY");
	BAD(HEAD "start 2026-11-30t17:21:15Z\nend\n", 4, "is not YYYY");
	BAD(HEAD "start 2026-11-30T17:21:15.Z\nend\n", 4, "is not YYYY");
	BAD(HEAD "start 2026-11-30T17:21:15.1234567890Z\nend\n", 4,
	    "is not YYYY");
	BAD(HEAD "start 2263-01-01T00:00:00Z\nend\n", 4, "out of range");
	BAD(HEAD "start 1677-01-01T00:00:00Z\nend\n", 4, "out of range");
	BAD(HEAD "start 2262-04-11T23:47:16.854775808Z\nend\n", 4,
	    "out of range");
	BAD(HEAD "start 1677-09-21T00:12:43.145224191Z\nend\n", 4,
	    "out of range");
	BAD(HEAD "duration 1.\nend\n", 4, "1 to 9 fraction digits");
	BAD(HEAD "duration 1.0000000001\nend\n", 4, "1 to 9 fraction");
	BAD(HEAD "duration .5\nend\n", 4, "'' is not a decimal number");
	BAD(HEAD "duration 1.5s\nend\n", 4, "is not a decimal number");
	BAD(HEAD "duration 18446744074\nend\n", 4, "larger than 2^64 - 1");

	/* Maps. */
	BAD(HEAD "map 0 file 1 1000 2000 0 1000 ab\nend\n", 4,
	    "'map' takes 9 fields, not 8");
	BAD(HEAD MAP0 MAP0 "end\n", 5, "second map with ID 0");
	BAD(HEAD "map 0 jit 1 1000 2000 0 1000 ab /x\nend\n", 4,
	    "unknown map kind 'jit'");
	BAD(HEAD "map 0 file -2 1000 2000 0 1000 ab /x\nend\n", 4,
	    "is not a decimal number");
	BAD(HEAD "map 0 file 1 2000 1000 0 1000 ab /x\nend\n", 4,
	    "map start 2000 > end 1000");
	BAD(HEAD "map 0 file 1 1000 2000 0 1000 abc /x\nend\n", 4,
	    "build ID is not");
	BAD(HEAD "map 0 file 1 1000 2000 0 1000 AB /x\nend\n", 4,
	    "build ID is not");
	BAD(HEAD "map x file 1 1000 2000 0 1000 ab /x\nend\n", 4,
	    "map ID 'x' is not a decimal number");
	BAD(HEAD "mapflags 0 vaddr-guessed\n" MAP0 "end\n", 4,
	    "mapflags for map 0, which no map line before defines");
	BAD(HEAD MAP0 "mapflags 0 vaddr-guessed,\nend\n", 5,
	    "empty name in the map flags");

	/* Processes and threads. */
	BAD(HEAD "process 1 - 1\nend\n", 4, "'process' takes 4 fields");
	BAD(HEAD "process -1 - 1 x\nend\n", 4, "is not a decimal number");
	BAD(HEAD "process 1 x 1 x\nend\n", 4, "is not a decimal number");
	BAD(HEAD "process 1 - - x\nend\n", 4, "is not a decimal number");
	BAD(HEAD "thread 1 1\nend\n", 4, "'thread' takes 3 fields");
	BAD(HEAD "thread 1 4294967296 x\nend\n", 4, "is not a PID");

	/* Stacks. */
	BAD(HEAD "stack 1 1 1 1\nend\n", 4, "at least 5 fields, not 4");
	BAD(HEAD "stack 1 1 1 1 - p0:10\n" MAP0 "end\n", 4,
	    "frame names map 0, which no map line before defines");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p1:10\nend\n", 5,
	    "frame names map 1");
	BAD(HEAD MAP0 "stack 1 1 1 1 - x0:10\nend\n", 5, "frame is not");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p0\nend\n", 5, "frame is not");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p:10\nend\n", 5, "frame is not");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p0:\nend\n", 5, "frame is not");
	BAD(HEAD MAP0 "stack 1 1 1 1 - P0:10\nend\n", 5, "frame is not");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p0:1:2\nend\n", 5,
	    "'1:2' is not lowercase hex");
	BAD(HEAD MAP0 "stack 1 1 1 1 - p-1:10\nend\n", 5,
	    "is not a decimal number");
	BAD(HEAD MAP0 "stack 1 1 1 1 leaf, p0:10\nend\n", 5,
	    "empty name in the stack flags");
	BAD(HEAD MAP0 "stack 1 1 1 1 , p0:10\nend\n", 5,
	    "empty name in the stack flags");
	BAD(HEAD MAP0 "stack 18446744073709551615 1 1 1 - p0:10\n"
		      "stack 1 1 1 1 - p0:10\nend\n", 6,
	    "add up past 2^64 - 1");
	BAD(HEAD MAP0 "stack 1 18446744073709551615 1 1 - p0:10\n"
		      "stack 1 1 1 1 - p0:10\nend\n", 6,
	    "add up past 2^64 - 1");
}

/* Files the reader must accept, and what it makes of them. */
static void test_read_ok(void)
{
	struct sym_prof *p = NULL;
	const struct sym_prof_stack *s;
	const struct sym_prof_map *m;
	char msg[256];
	int err;

	err = read_str(
		"sym-raw 1\n"
		"# comments, empty lines and unknown keywords are skipped\n"
		"\n"
		"future-line \x01\xff  anything  \n"
		"flagged someday 5\n"
		"flagged leaf 3\n"
		"weight-unit samples\n"
		"map 7 kernel -1 ffffffff81000000 ffffffff82000000 0 "
		"ffffffff81000000 - [kernel.kallsyms]\n"
		"map 3 file 1 1000 2000 0 1000 00ff %2fbin%2fa%20b\n"
		"mapflags 3 vaddr-guessed,from-the-future\n"
		"mapflags 7 from-the-future\n"
		"thread 1 2 %2D\n"
		"stack 1 10 1 2 leaf,mystery p3:1001 r7:ffffffff81000010 r?:5\n"
		"stack 2 20 1 2 mystery,leaf,leaf p3:1001 r7:ffffffff81000010 "
		"r?:05\n"
		"stack 1 1 0 0 -\n"
		"start 1969-12-31T23:59:59.5Z\n"
		"duration 1.5\n"
		"period 0\n"
		"pidns -\n"
		"end\n",
		&p, msg, sizeof(msg));
	CHECK_ERR(err, 0);
	if (err) {
		printf("# %s\n", msg);
		return;
	}
	CHECK(sym_prof_nmaps(p) == 2);
	m = sym_prof_map(p, 0);
	CHECK(m->id == 0 && m->kind == SYM_PROF_MAP_KERNEL && m->pid == -1 &&
	      m->flags == 0 && !m->build_id &&
	      !strcmp(m->path, "[kernel.kallsyms]"));
	m = sym_prof_map(p, 1);
	CHECK(m->id == 1 && m->flags == SYM_PROF_MAP_VADDR_GUESSED &&
	      !strcmp(m->build_id, "00ff") && !strcmp(m->path, "/bin/a b"));
	CHECK(sym_prof_nstacks(p) == 2);
	s = sym_prof_stack(p, 0);
	CHECK(s->count == 3 && s->weight == 30 && s->pid == 1 && s->tid == 2 &&
	      s->flags == ((uint32_t)SYM_PROF_LEAF |
			   (uint32_t)SYM_PROF_UNKNOWN_FLAG) &&
	      s->nframes == 3);
	CHECK(s->frames[0].map == 1 && s->frames[0].addr == 0x1001 &&
	      s->frames[0].flags == 0);
	CHECK(s->frames[1].map == 0 && s->frames[1].addr == 0xffffffff81000010 &&
	      s->frames[1].flags == SYM_PROF_FRAME_RETURN);
	CHECK(s->frames[2].map == SYM_PROF_NOMAP && s->frames[2].addr == 5);
	s = sym_prof_stack(p, 1);
	CHECK(s->nframes == 0 && s->flags == 0 && s->count == 1);
	CHECK(!strcmp(sym_prof_thread(p, 2), "-"));
	CHECK(sym_prof_header(p)->flagged[2] == 3);
	CHECK(sym_prof_header(p)->start_ns == -500000000);
	CHECK(sym_prof_header(p)->duration_ns == 1500000000);
	CHECK(!strcmp(sym_prof_header(p)->weight_unit, "samples"));
	CHECK(sym_prof_header(p)->host == NULL);
	sym_prof_free(p);
	p = NULL;

	/* msg may be NULL; a short one is cut and still terminated. */
	CHECK_ERR(read_str("x\n", &p, NULL, 0), -SYM_E_BADPROFILE);
	CHECK(p == NULL);
	msg[5] = 'X';
	CHECK_ERR(read_str("x\n", &p, msg, 5), -SYM_E_BADPROFILE);
	CHECK(!strcmp(msg, "line"));
	CHECK_ERR(read_str(HEAD "end\n", &p, msg, sizeof(msg)), 0);
	CHECK(msg[0] == '\0');
	sym_prof_free(p);
}

/* The documented limits: lines, frames, maps. */
static void test_limits(void)
{
	size_t cap = 48u << 20, n;
	char *buf = malloc(cap), *c;
	struct sym_prof *p = NULL;
	char msg[256];
	int err;

	if (!buf)
		return;
	/* A line of exactly 1 MiB is fine, one byte more is not. */
	n = (size_t)snprintf(buf, cap, HEAD "# ");
	memset(buf + n, 'x', (1u << 20) - 2);
	n += (1u << 20) - 2;
	n += (size_t)snprintf(buf + n, cap - n, "\nend\n");
	CHECK_ERR(sym_prof_read(buf, n, &p, msg, sizeof(msg)), 0);
	sym_prof_free(p);
	p = NULL;
	memmove(buf + n - 5, "x\nend\n", 6);
	bad_file(buf, n + 1, -E2BIG, 4, "longer than 1 MiB");

	/* 1024 frames are fine, 1025 are not. */
	for (int over = 0; over < 2; over++) {
		n = (size_t)snprintf(buf, cap, HEAD MAP0 "stack 1 1 1 1 -");
		for (int i = 0; i < SYM_PROF_MAX_FRAMES + over; i++)
			n += (size_t)snprintf(buf + n, cap - n, " r0:%x", i);
		n += (size_t)snprintf(buf + n, cap - n, "\nend\n");
		if (!over) {
			CHECK_ERR(sym_prof_read(buf, n, &p, msg, sizeof(msg)),
				  0);
			CHECK(p && sym_prof_stack(p, 0)->nframes ==
					   (uint32_t)SYM_PROF_MAX_FRAMES);
			sym_prof_free(p);
			p = NULL;
		} else {
			bad_file(buf, n, -E2BIG, 5, "more than 1024 frames");
		}
	}
	/* As many fields on another line: malformed, not a limit. */
	n = (size_t)snprintf(buf, cap, HEAD "host");
	for (int i = 0; i < SYM_PROF_MAX_FRAMES + 7; i++)
		n += (size_t)snprintf(buf + n, cap - n, " x");
	n += (size_t)snprintf(buf + n, cap - n, "\nend\n");
	bad_file(buf, n, -SYM_E_BADPROFILE, 4, "too many fields");

	/* 2^20 maps are fine, one more is not. */
	n = (size_t)snprintf(buf, cap, HEAD);
	for (unsigned i = 0; i < (1u << 20) + 1; i++) {
		c = buf + n;
		n += (size_t)snprintf(c, cap - n, "map %u anon 1 0 0 0 0 - -\n",
				      i);
	}
	n += (size_t)snprintf(buf + n, cap - n, "end\n");
	CHECK(n < cap);
	bad_file(buf, n, -E2BIG, 4 + (1 << 20), "more than 1048576 maps");
	/* Without the last map line. */
	memmove(c, "end\n", 4);
	err = sym_prof_read(buf, (size_t)(c - buf) + 4, &p, msg, sizeof(msg));
	CHECK_ERR(err, 0);
	CHECK(p && sym_prof_nmaps(p) == 1u << 20);
	if (p) {
		struct sym_prof_map m = { .kind = SYM_PROF_MAP_ANON };

		CHECK_ERR(sym_prof_add_map(p, &m, NULL), -E2BIG);
	}
	sym_prof_free(p);
	free(buf);
}

/* Value types: the API's contract, sym-raw 2 written only with them,
 * read back unchanged, summed, and its reader's errors. */
static void test_value_types(void)
{
	static const char *const names[] = { "alloc_objects", "alloc_space",
					     "inuse_objects", "inuse_space" };
	static const char *const units[] = { "count", "bytes", "count",
					     "bytes" };
	static const char *const bad_names[] = { "a b" };
	const char *dup[] = { "x", "x" }, *unit = "?";
	struct sym_prof_header h = { .period = 524288, .weight_unit = "bytes" };
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .pid = 1,
				  .start = 0x1000, .end = 0x2000,
				  .path = "/bin/x" };
	struct sym_prof_frame fr = { .addr = 0x1100, .map = 0 };
	struct sym_prof_stack st = { .count = 1, .weight = 64, .pid = 1,
				     .tid = 1, .nframes = 1, .frames = &fr };
	uint64_t v1[4] = { 8, 512, 2, 128 }, v2[4] = { 1, 4096, 1, 4096 };
	uint64_t big[4] = { UINT64_MAX, 0, 0, 0 };
	struct sym_prof *p = NULL, *q = NULL;
	char *text = NULL, *text2 = NULL, msg[256];
	const char *lit;
	size_t len = 0, len2 = 0;

	CHECK_ERR(sym_prof_new(&p), 0);
	CHECK_ERR(sym_prof_set_header(p, &h), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	CHECK(sym_prof_nvalue_types(p) == 0 && !sym_prof_stack_values(p, 0));
	CHECK_ERR(sym_prof_set_value_types(p, names, units, 17), -E2BIG);
	CHECK_ERR(sym_prof_set_value_types(p, bad_names, units, 1), -EINVAL);
	CHECK_ERR(sym_prof_set_value_types(p, dup, units, 2), -EINVAL);
	CHECK_ERR(sym_prof_set_value_types(p, NULL, units, 1), -EINVAL);
	CHECK_ERR(sym_prof_set_value_types(p, names, units, 4), 0);
	CHECK_ERR(sym_prof_set_value_types(p, names, units, 4), -EBUSY);
	CHECK(sym_prof_nvalue_types(p) == 4);
	CHECK(!strcmp(sym_prof_value_type(p, 3, &unit), "inuse_space") &&
	      !strcmp(unit, "bytes"));
	CHECK(!sym_prof_value_type(p, 4, &unit) && !unit);
	CHECK(sym_prof_value_index(p, "alloc_space") == 1);
	CHECK(sym_prof_value_index(p, "nope") == -SYM_E_NOTFOUND);
	CHECK_ERR(sym_prof_add_stack_values(p, &st, 0, v1), 0);
	CHECK_ERR(sym_prof_add_stack_values(p, &st, 0, v2), 0);
	CHECK_ERR(sym_prof_add_stack_values(p, &st, 0, big), -EOVERFLOW);
	fr.addr = 0x1200;
	CHECK_ERR(sym_prof_add_stack(p, &st), 0);	/* zeros */
	CHECK(sym_prof_nstacks(p) == 2 && sym_prof_stack(p, 0)->count == 2);
	CHECK(sym_prof_stack_values(p, 0)[1] == 4608 &&
	      sym_prof_stack_values(p, 0)[3] == 4224 &&
	      sym_prof_stack_values(p, 1)[1] == 0);
	CHECK_ERR(sym_prof_set_value_types(p, NULL, NULL, 0), -EBUSY);
	CHECK_ERR(write_mem(p, &text, &len), 0);
	CHECK(text && !strncmp(text, "sym-raw 2\n", 10));
	CHECK(text && strstr(text, "\nvalue-type alloc_objects count\n"
			     "value-type alloc_space bytes\n"));
	CHECK(text && strstr(text, "\nstack 2 128 1 1 - 9,4608,3,4224 p0:1100\n"));
	CHECK(text && strstr(text, "\nstack 1 64 1 1 - 0,0,0,0 p0:1200\n"));
	CHECK_ERR(sym_prof_read(text, len, &q, msg, sizeof(msg)), 0);
	CHECK(q && prof_equal(p, q));
	CHECK_ERR(write_mem(q, &text2, &len2), 0);
	CHECK(text2 && len2 == len && !memcmp(text, text2, len));
	sym_prof_free(p);
	sym_prof_free(q);
	free(text);
	free(text2);

	/* Version 2 without types, and duplicates summed. */
	lit = "sym-raw 2\nperiod 1\nweight-unit ns\nstack 1 1 0 0 - -\nend\n";
	CHECK_ERR(sym_prof_read(lit, strlen(lit), &q, msg, sizeof(msg)), 0);
	CHECK(q && sym_prof_nstacks(q) == 1 && sym_prof_nvalue_types(q) == 0);
	sym_prof_free(q);
	q = NULL;
	lit = "sym-raw 2\nperiod 1\nweight-unit bytes\n"
	       "value-type a count\nvalue-type b bytes\n"
	       "stack 1 1 0 0 - 1,2\nstack 2 2 0 0 - 3,4\nend\n";
	CHECK_ERR(sym_prof_read(lit, strlen(lit), &q, msg, sizeof(msg)), 0);
	CHECK(q && sym_prof_nstacks(q) == 1 &&
	      sym_prof_stack_values(q, 0)[0] == 4 &&
	      sym_prof_stack_values(q, 0)[1] == 6);
	sym_prof_free(q);
	/* A `value-type` line in version 1 is an unknown keyword. */
	lit = "sym-raw 1\nperiod 1\nweight-unit ns\nvalue-type a count\n"
	       "stack 1 1 0 0 - p?:1\nend\n";
	CHECK_ERR(sym_prof_read(lit, strlen(lit), &q, msg, sizeof(msg)), 0);
	CHECK(q && sym_prof_nvalue_types(q) == 0 && sym_prof_nstacks(q) == 1 &&
	      sym_prof_stack(q, 0)->nframes == 1);
	sym_prof_free(q);
}

/* sym-raw 2's reader errors. */
static void bad_str(const char *text, int unused, int want, int line,
		    const char *what)
{
	(void)unused;
	bad_file(text, strlen(text), want, line, what);
}

/* The perf map flags of anonymous maps (docs/raw-format.md, mapflags):
 * set after the map was added, written in the documented order, read
 * back; unknown flags refused. */
static void test_perfmap_flags(void)
{
	struct sym_prof_header h = { .weight_unit = "ns", .period = 1 };
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_ANON, .pid = 7,
				  .start = 0x1000, .end = 0x2000,
				  .vaddr = 0x1000 };
	struct sym_prof *p = NULL, *q = NULL;
	char *text = NULL, msg[256];
	size_t len = 0;
	uint32_t id;

	CHECK_ERR(sym_prof_new(&p), 0);
	CHECK_ERR(sym_prof_set_header(p, &h), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, &id), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, &id), 0);
	CHECK_ERR(sym_prof_set_map_flags(p, 0, SYM_PROF_MAP_PERFMAP), 0);
	CHECK_ERR(sym_prof_set_map_flags(p, 1, SYM_PROF_MAP_PERFMAP_STALE |
					 SYM_PROF_MAP_VADDR_GUESSED |
					 SYM_PROF_MAP_SRC_GOPCLNTAB), 0);
	CHECK_ERR(sym_prof_set_map_flags(p, 2, 0), -EINVAL);
	CHECK_ERR(sym_prof_set_map_flags(p, 0, 1u << 7), -EINVAL);
	CHECK_ERR(sym_prof_set_map_flags(NULL, 0, 0), -EINVAL);
	CHECK_ERR(write_mem(p, &text, &len), 0);
	CHECK(text && strstr(text, "mapflags 0 perf-map\n") &&
	      strstr(text, "mapflags 1 vaddr-guessed,perf-map-stale,"
			   "gopclntab\n"));
	CHECK_ERR(read_str(text ? text : "", &q, msg, sizeof(msg)), 0);
	CHECK(q && sym_prof_nmaps(q) == 2 &&
	      sym_prof_map(q, 0)->flags == SYM_PROF_MAP_PERFMAP &&
	      sym_prof_map(q, 1)->flags == (SYM_PROF_MAP_PERFMAP_STALE |
					    SYM_PROF_MAP_VADDR_GUESSED |
					    SYM_PROF_MAP_SRC_GOPCLNTAB));
	free(text);
	sym_prof_free(q);
	sym_prof_free(p);
}

static void test_value_type_errors(void)
{
#define V2 "sym-raw 2\nperiod 1\nweight-unit bytes\n"
	bad_str(V2 "value-type a count\nstack 1 1 0 0 - 1,2\nend\n", 0,
		 -SYM_E_BADPROFILE, 5, "more stack values than the 1 value types");
	bad_str(V2 "value-type a count\nvalue-type b c\n"
		 "stack 1 1 0 0 - 1\nend\n", 0, -SYM_E_BADPROFILE, 6,
		 "1 stack values for 2 value types");
	bad_str(V2 "value-type a count\nstack 1 1 0 0 - -\nend\n", 0,
		 -SYM_E_BADPROFILE, 5, "is not a decimal number");
	bad_str(V2 "stack 1 1 0 0 - 1\nend\n", 0, -SYM_E_BADPROFILE, 4,
		 "without 'value-type' lines");
	bad_str(V2 "value-type a count\nvalue-type a bytes\nend\n", 0,
		 -SYM_E_BADPROFILE, 5, "declared twice");
	bad_str(V2 "value-type a count\nstack 1 1 0 0 - 1\n"
		 "value-type b count\nend\n", 0, -SYM_E_BADPROFILE, 6,
		 "after the first stack");
	bad_str(V2 "value-type a%21 count\nend\n", 0, -SYM_E_BADPROFILE, 5,
		 "name or unit");
	bad_str(V2 "value-type a\nend\n", 0, -SYM_E_BADPROFILE, 4,
		 "takes 2 fields");
	bad_str(V2 "stack 1 1 0 0\nend\n", 0, -SYM_E_BADPROFILE, 4,
		 "at least 6 fields");
#undef V2
}

int main(void)
{
	test_round_trip();
	test_empty();
	test_times();
	test_aggregation();
	test_recent();
	test_sources();
	test_api_errors();
	test_many();
	test_read_errors();
	test_read_ok();
	test_limits();
	test_value_types();
	test_value_type_errors();
	test_perfmap_flags();
	return tap_done();
}
