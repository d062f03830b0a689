/*
 * t-prof-api.c - the contract at the top of sym_prof.h (libsymprofile),
 * checked on every function it names:
 * - NULL: int functions return -EINVAL and set their object out-parameter
 *   to NULL (the readers also say what was NULL in @msg), pointer getters
 *   return NULL, count, id and yes/no getters 0, lookups fill their
 *   out-parameters with zeros, sym_prof_free(NULL) is a no-op; a failed
 *   call leaves the profile as it was; a buffer may be NULL when its
 *   length is 0 (an empty input, answered as one);
 * - "not found" is -SYM_E_NOTFOUND (a frame or an index without a
 *   location), and -ENOENT only the system's, for a path;
 * - ABI: the structs the header calls fixed, and the constants callers
 *   size arrays with, have the size and value of 1.0.0 (on LP64, where
 *   the sizes are known).  A change here is an ABI break: it raises
 *   SYM_VERSION_MAJOR and the SONAMEs, and then this test with them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base.h"

#include "sym_prof.h"
#include "tap.h"

/* Bytes written to @fd so far. */
static off_t written(int fd)
{
	return lseek(fd, 0, SEEK_END);
}

/* A profile with one map, one stack and one location, to see that
 * refused calls change nothing. */
static struct sym_prof *small_prof(void)
{
	static const struct sym_prof_header h = { .period = 1,
						  .weight_unit = "ns" };
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .start = 1,
				  .end = 2 };
	struct sym_prof_frame f = { .addr = 0x10, .map = 0 };
	struct sym_prof_stack s = { .count = 1, .weight = 1, .nframes = 1,
				    .frames = &f };
	struct sym_prof_line l = { .function = "main" };
	struct sym_prof *p = NULL;

	if (sym_prof_new(&p) || sym_prof_set_header(p, &h) ||
	    sym_prof_add_map(p, &m, NULL) || sym_prof_add_stack(p, &s) ||
	    sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, &l, 1)) {
		sym_prof_free(p);
		return NULL;
	}
	return p;
}

/* The building calls: NULL profile or NULL struct. */
static void test_null_build(void)
{
	struct sym_prof_header h = { .period = 1, .weight_unit = "ns" };
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .start = 1,
				  .end = 2 };
	struct sym_prof_frame f = { .addr = 0x20, .map = 0 };
	struct sym_prof_stack s = { .count = 1, .nframes = 1, .frames = &f };
	struct sym_prof_source src = { .host = "h" };
	struct sym_prof_line l = { .function = "f" };
	struct sym_prof *p;
	uint32_t id = 77;

	CHECK_ERR(sym_prof_new(NULL), -EINVAL);
	sym_prof_free(NULL);
	CHECK(1);	/* sym_prof_free(NULL) returned */

	p = small_prof();
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_ERR(sym_prof_set_header(NULL, &h), -EINVAL);
	CHECK_ERR(sym_prof_set_header(p, NULL), -EINVAL);
	CHECK(sym_prof_header(p)->weight_unit &&
	      !strcmp(sym_prof_header(p)->weight_unit, "ns"));
	CHECK_ERR(sym_prof_add_map(NULL, &m, &id), -EINVAL);
	CHECK_ERR(sym_prof_add_map(p, NULL, &id), -EINVAL);
	CHECK(id == 77 && sym_prof_nmaps(p) == 1);
	CHECK_ERR(sym_prof_add_process(NULL, 1, 0, 0, "x"), -EINVAL);
	CHECK_ERR(sym_prof_add_thread(NULL, 1, 1, "x"), -EINVAL);
	/* comm may be NULL. */
	CHECK_ERR(sym_prof_add_process(p, 1, 0, 0, NULL), 0);
	CHECK_ERR(sym_prof_add_thread(p, 1, 1, NULL), 0);
	CHECK_ERR(sym_prof_add_stack(NULL, &s), -EINVAL);
	CHECK_ERR(sym_prof_add_stack(p, NULL), -EINVAL);
	CHECK_ERR(sym_prof_add_stack_from(NULL, &s, 0), -EINVAL);
	CHECK_ERR(sym_prof_add_stack_from(p, NULL, 0), -EINVAL);
	CHECK(sym_prof_nstacks(p) == 1 && sym_prof_stack(p, 0)->count == 1);
	CHECK_ERR(sym_prof_add_source(NULL, &src, &id), -EINVAL);
	CHECK_ERR(sym_prof_add_source(p, NULL, &id), -EINVAL);
	CHECK(id == 77 && sym_prof_nsources(p) == 0);
	CHECK_ERR(sym_prof_set_location(NULL, &f, SYM_PROF_LOC_OK, &l, 1),
		  -EINVAL);
	CHECK_ERR(sym_prof_set_location(p, NULL, SYM_PROF_LOC_OK, &l, 1),
		  -EINVAL);
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_OK, NULL, 1),
		  -EINVAL);
	CHECK(sym_prof_nlocations(p) == 1);
	/* lines may be NULL when n is 0. */
	CHECK_ERR(sym_prof_set_location(p, &f, SYM_PROF_LOC_MISSING, NULL, 0),
		  0);
	CHECK(sym_prof_nlocations(p) == 2);
	sym_prof_free(p);
}

/* The getters and lookups on a NULL profile, out-parameters poisoned
 * first. */
static void test_null_get(void)
{
	struct sym_prof_frame f = { .addr = 0x10, .map = 0 }, g;
	const struct sym_prof_line *lines;
	struct sym_prof *p = small_prof();
	uint64_t pidns = 5;
	int32_t nspid = 5;
	uint32_t status;
	size_t n;

	CHECK(sym_prof_header(NULL) == NULL);
	CHECK(sym_prof_nmaps(NULL) == 0);
	CHECK(sym_prof_map(NULL, 0) == NULL);
	CHECK(sym_prof_nstacks(NULL) == 0);
	CHECK(sym_prof_stack(NULL, 0) == NULL);
	CHECK(sym_prof_stack_source(NULL, 0) == 0);
	CHECK(sym_prof_nsources(NULL) == 0);
	CHECK(sym_prof_source(NULL, 1) == NULL);
	CHECK(sym_prof_process(NULL, 1, &pidns, &nspid) == NULL &&
	      pidns == 0 && nspid == 0);
	CHECK(sym_prof_process(NULL, 1, NULL, NULL) == NULL);
	CHECK(sym_prof_thread(NULL, 1) == NULL);
	CHECK(sym_prof_symbolized(NULL) == 0);
	CHECK(sym_prof_nlocations(NULL) == 0);

	status = 9;
	lines = (const struct sym_prof_line *)&lines;
	n = 9;
	CHECK_ERR(sym_prof_location(NULL, &f, &status, &lines, &n), -EINVAL);
	CHECK(status == 0 && lines == NULL && n == 0);
	status = 9;
	lines = (const struct sym_prof_line *)&lines;
	n = 9;
	CHECK_ERR(sym_prof_location(p, NULL, &status, &lines, &n), -EINVAL);
	CHECK(status == 0 && lines == NULL && n == 0);
	CHECK_ERR(sym_prof_location(NULL, NULL, NULL, NULL, NULL), -EINVAL);
	memset(&g, 0xff, sizeof(g));
	status = 9;
	lines = (const struct sym_prof_line *)&lines;
	n = 9;
	CHECK_ERR(sym_prof_location_at(NULL, 0, &g, &status, &lines, &n),
		  -EINVAL);
	CHECK(g.addr == 0 && g.map == 0 && g.flags == 0 && status == 0 &&
	      lines == NULL && n == 0);
	CHECK_ERR(sym_prof_location_at(NULL, 0, NULL, NULL, NULL, NULL),
		  -EINVAL);
	/* The same calls on the profile find what it holds. */
	CHECK_ERR(sym_prof_location(p, &f, &status, &lines, &n), 0);
	CHECK(status == SYM_PROF_LOC_OK && n == 1 &&
	      !strcmp(lines[0].function, "main"));
	CHECK_ERR(sym_prof_location_at(p, 0, &g, NULL, NULL, NULL), 0);
	CHECK(g.addr == 0x10 && g.map == 0);
	sym_prof_free(p);
}

/* The writers and readers. */
static void test_null_io(void)
{
	struct sym_prof *p = small_prof(), *q;
	char msg[128];
	int fd = memfd_create("t-prof-api", 0), err, err2;

	CHECK(fd >= 0);
	if (fd < 0 || !p) {
		sym_prof_free(p);
		return;
	}
	CHECK_ERR(sym_prof_write(NULL, fd), -EINVAL);
	CHECK_ERR(sym_prof_write_pprof(NULL, fd), -EINVAL);
	CHECK(written(fd) == 0);

	q = (struct sym_prof *)&q;
	msg[0] = '\0';
	CHECK_ERR(sym_prof_read(NULL, 5, &q, msg, sizeof(msg)), -EINVAL);
	CHECK(q == NULL && strstr(msg, "NULL buffer"));
	msg[0] = '\0';
	CHECK_ERR(sym_prof_read("sym-raw 1\n", 10, NULL, msg, sizeof(msg)),
		  -EINVAL);
	CHECK(strstr(msg, "NULL out-pointer"));
	CHECK_ERR(sym_prof_read(NULL, 5, &q, NULL, 0), -EINVAL);
	/* (NULL, 0) is an empty file. */
	q = (struct sym_prof *)&q;
	CHECK_ERR(sym_prof_read(NULL, 0, &q, msg, sizeof(msg)),
		  -SYM_E_BADPROFILE);
	CHECK(q == NULL && !strcmp(msg, "line 1: empty file"));

	q = (struct sym_prof *)&q;
	msg[0] = '\0';
	CHECK_ERR(sym_prof_read_pprof(NULL, 5, &q, msg, sizeof(msg)),
		  -EINVAL);
	CHECK(q == NULL && strstr(msg, "NULL buffer"));
	msg[0] = '\0';
	CHECK_ERR(sym_prof_read_pprof("", 0, NULL, msg, sizeof(msg)),
		  -EINVAL);
	CHECK(strstr(msg, "NULL out-pointer"));
	q = (struct sym_prof *)&q;
	err = sym_prof_read_pprof("", 0, &q, NULL, 0);
	sym_prof_free(q);
	q = (struct sym_prof *)&q;
	err2 = sym_prof_read_pprof(NULL, 0, &q, NULL, 0);
	CHECK(err2 == err && (err2 == 0) == (q != NULL));
	sym_prof_free(q);

	q = (struct sym_prof *)&q;
	msg[0] = '\0';
	CHECK_ERR(sym_prof_read_file(NULL, &q, msg, sizeof(msg)), -EINVAL);
	CHECK(q == NULL && strstr(msg, "NULL path"));
	msg[0] = '\0';
	CHECK_ERR(sym_prof_read_file("/dev/null", NULL, msg, sizeof(msg)),
		  -EINVAL);
	CHECK(strstr(msg, "NULL out-pointer"));

	/* The profile the refusals were tried around still writes. */
	CHECK_ERR(sym_prof_write(p, fd), 0);
	CHECK(written(fd) > 0);
	close(fd);
	sym_prof_free(p);
}

/* -SYM_E_NOTFOUND for what does not exist; -ENOENT only for a path. */
static void test_notfound(void)
{
	struct sym_prof *p = small_prof(), *q;
	struct sym_prof_frame f = { .addr = 0x11, .map = 0 }, g;
	const struct sym_prof_line *lines = (const struct sym_prof_line *)&f;
	uint32_t status = 9;
	size_t n = 9;
	char msg[128];

	if (!p) {
		CHECK(p != NULL);
		return;
	}
	CHECK_ERR(sym_prof_location(p, &f, &status, &lines, &n),
		  -SYM_E_NOTFOUND);
	CHECK(status == 0 && lines == NULL && n == 0);
	/* The same address as an exact PC and as a return address. */
	f.addr = 0x10;
	f.flags = SYM_PROF_FRAME_RETURN;
	CHECK_ERR(sym_prof_location(p, &f, NULL, NULL, NULL),
		  -SYM_E_NOTFOUND);
	memset(&g, 0xff, sizeof(g));
	CHECK_ERR(sym_prof_location_at(p, 1, &g, &status, &lines, &n),
		  -SYM_E_NOTFOUND);
	CHECK(g.addr == 0 && g.map == 0 && g.flags == 0 && status == 0 &&
	      lines == NULL && n == 0);
	q = (struct sym_prof *)&q;
	CHECK_ERR(sym_prof_read_file("/nonexistent/t-prof-api.raw", &q, msg,
				     sizeof(msg)),
		  -ENOENT);
	CHECK(q == NULL && strstr(msg, "cannot open"));
	sym_prof_free(p);
}

/* The fixed part of the ABI, as 1.0.0 shipped it. */
static void test_abi(void)
{
	CHECK(SYM_PROF_NFLAGS == 5);
	CHECK(SYM_PROF_LOC_NSTATUS == 6);
	CHECK(SYM_PROF_MAX_FRAMES == 1024);
	CHECK(SYM_PROF_MAX_LINES == 128);
	CHECK(SYM_PROF_NOMAP == UINT32_MAX);
	if (sizeof(void *) != 8 || sizeof(size_t) != 8) {
		tap_skip("struct sizes", "not LP64");
		return;
	}
	CHECK(sizeof(struct sym_prof_header) == 160);
	CHECK(sizeof(struct sym_prof_map) == 64);
	CHECK(sizeof(struct sym_prof_frame) == 16);
	CHECK(sizeof(struct sym_prof_stack) == 40);
	CHECK(sizeof(struct sym_prof_source) == 64);
	CHECK(sizeof(struct sym_prof_line) == 32);
	CHECK(offsetof(struct sym_prof_header, pidns) == 152);
	CHECK(offsetof(struct sym_prof_stack, frames) == 32);
}

int main(void)
{
	test_null_build();
	test_null_get();
	test_null_io();
	test_notfound();
	test_abi();
	return tap_done();
}
