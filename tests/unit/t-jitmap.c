/*
 * t-jitmap.c - the recorder's perf map loader (tools/agent/jitmap.c) and
 * the process start it is checked against (pm_process_start(),
 * tools/agent/procmaps.c):
 *  - a missing file is -ENOENT, a directory or a FIFO -EINVAL (not
 *    waited on), a symlink -ELOOP; bad lines are
 *    counted and the first one named with its number;
 *  - jitmap_check(): stale (mtime before the start, past the slack),
 *    trusted, foreign owner, unchecked start;
 *  - pm_process_start() of a child forked here lies between the wall
 *    clock read before the fork and after it (to a clock tick);
 *  - jitmap_name_profile() on a profile built here: frames covered by a
 *    trusted map get the entry's name (a return address looked up at
 *    address - 1), uncovered ones `unmapped`, the maps perf-map; with
 *    the file's mtime set an hour before the start, nothing is named and
 *    the maps are perf-map-stale;
 *  - jitdumps (libsym/jitdump.c, jitmap_parse_dump()): the header's
 *    checks (magic, either byte order, version, size), loads and moves
 *    (a move named after the latest load of its index before it; a move
 *    of code never loaded skipped), the records it steps over, and each
 *    bad record (a name without its NUL, code shorter than its size, a
 *    size of 0, a record cut short: what came before it is kept);
 *    jitmap_name_profile() prefers the process's jitdump to its perf map,
 *    and falls back to the perf map, saying why, when the jitdump is
 *    another process's.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "agent/jitmap.h"
#include "jitdump.h"
#include "agent/procmaps.h"
#include "sym_prof.h"
#include "base.h"

#define PID 4242
#define SEC 1000000000LL

static char dir[64];

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

static void write_file(const char *path, const char *text, int64_t mtime)
{
	FILE *f = fopen(path, "w");
	struct timespec ts[2];

	fputs(text, f);
	fclose(f);
	ts[0].tv_sec = ts[1].tv_sec = (time_t)(mtime / SEC);
	ts[0].tv_nsec = ts[1].tv_nsec = (long)(mtime % SEC);
	utimensat(AT_FDCWD, path, ts, 0);
}

static void test_load(void)
{
	struct jitmap jm = { 0 };
	char path[128];

	snprintf(path, sizeof(path), "%s/none.map", dir);
	CHECK_ERR(jitmap_load(&jm, path), -ENOENT);
	CHECK_ERR(jitmap_load(&jm, dir), -EINVAL);
	/* a FIFO is refused, not waited on (O_NONBLOCK); a symlink too */
	snprintf(path, sizeof(path), "%s/fifo.map", dir);
	CHECK(mkfifo(path, 0600) == 0);
	CHECK_ERR(jitmap_load(&jm, path), -EINVAL);
	snprintf(path, sizeof(path), "%s/link.map", dir);
	CHECK(symlink("/etc/passwd", path) == 0);
	CHECK_ERR(jitmap_load(&jm, path), -ELOOP);
	snprintf(path, sizeof(path), "%s/a.map", dir);
	write_file(path, "1000 10 a\nbad line\n2000 0 zero\n3000 8 c\n",
		   now_ns());
	CHECK_ERR(jitmap_load(&jm, path), 0);
	CHECK(jm.nents == 2 && jm.nbad == 2 && !jm.cut);
	CHECK(!strncmp(jm.first_bad, "line 2: ", 8));
	CHECK(jitmap_find(&jm, 0x1005) && jitmap_find(&jm, 0x3007) &&
	      !jitmap_find(&jm, 0x1010) && !jitmap_find(&jm, 0x2000));
	jitmap_release(&jm);
	jitmap_release(NULL);
}

/* ---- jitdumps, built here ---- */

struct jd {
	unsigned char b[4096];
	size_t n;
	bool swap;
};

static void put(struct jd *d, const void *p, size_t n)
{
	memcpy(d->b + d->n, p, n);
	d->n += n;
}

static void put32(struct jd *d, uint32_t v)
{
	if (d->swap)
		v = __builtin_bswap32(v);
	put(d, &v, 4);
}

static void put64(struct jd *d, uint64_t v)
{
	if (d->swap)
		v = __builtin_bswap64(v);
	put(d, &v, 8);
}

static void jd_header(struct jd *d, uint32_t pid, bool swap)
{
	d->n = 0;
	d->swap = swap;
	put32(d, SYMI_JITDUMP_MAGIC);
	put32(d, 1);
	put32(d, 40);
	put32(d, 62);
	put32(d, 0);
	put32(d, pid);
	put64(d, 1);
	put64(d, 0);
}

/* A load of @size bytes of code at @addr; @code bytes really follow. */
static void jd_load(struct jd *d, uint64_t addr, uint64_t size,
		    uint64_t index, const char *name, size_t code)
{
	size_t nl = strlen(name) + 1;

	put32(d, SYMI_JITDUMP_LOAD);
	put32(d, (uint32_t)(16 + 40 + nl + code));
	put64(d, 2);
	put32(d, PID);
	put32(d, PID);
	put64(d, addr);
	put64(d, addr);
	put64(d, size);
	put64(d, index);
	put(d, name, nl);
	memset(d->b + d->n, 0xcc, code);
	d->n += code;
}

static void jd_move(struct jd *d, uint64_t from, uint64_t to, uint64_t size,
		    uint64_t index)
{
	put32(d, SYMI_JITDUMP_MOVE);
	put32(d, 16 + 48);
	put64(d, 3);
	put32(d, PID);
	put32(d, PID);
	put64(d, to);
	put64(d, from);
	put64(d, to);
	put64(d, size);
	put64(d, index);
}

static void jd_other(struct jd *d, uint32_t id, size_t body)
{
	put32(d, id);
	put32(d, (uint32_t)(16 + body));
	put64(d, 4);
	memset(d->b + d->n, 0x5a, body);
	d->n += body;
}

static const char *dump_name(struct jitmap *jm, uint64_t pc)
{
	static char buf[64];
	const struct symi_perfmap_ent *e = jitmap_find(jm, pc);

	if (!e)
		return NULL;
	snprintf(buf, sizeof(buf), "%.*s", (int)e->namelen, e->name);
	return buf;
}

/* Parse a copy of @d (the jitmap takes it). */
static int dump_parse(struct jitmap *jm, const struct jd *d, size_t n)
{
	char *copy = malloc(n ? n : 1);

	memcpy(copy, d->b, n);
	memset(jm, 0, sizeof(*jm));
	return jitmap_parse_dump(jm, copy, n);
}

static void test_dump(void)
{
	static const bool orders[] = { false, true };
	struct jitmap jm;
	struct jd d;
	size_t cut;

	for (size_t o = 0; o < 2; o++) {	/* both byte orders */
		jd_header(&d, PID, orders[o]);
		jd_load(&d, 0x1000, 0x100, 1, "JS:*a", 0x100);
		jd_other(&d, SYMI_JITDUMP_DEBUG_INFO, 40);
		jd_load(&d, 0x2000, 0x80, 2, "JS:b", 0x80);
		jd_other(&d, 99, 8);		/* unknown: stepped over */
		jd_move(&d, 0x1000, 0x5000, 0x100, 1);
		jd_load(&d, 0x1000, 0x40, 3, "JS:c", 0x40); /* reuses a's */
		jd_move(&d, 0x7000, 0x8000, 0x10, 9);	/* never loaded */
		CHECK_ERR(dump_parse(&jm, &d, d.n), 0);
		CHECK(jm.nents == 4 && jm.nbad == 1 && jm.dump_pid == PID);
		CHECK(!strcmp(jm.first_bad, "record at byte 816: move of "
			      "code never loaded"));
		CHECK(!strcmp(dump_name(&jm, 0x5010), "JS:*a"));
		CHECK(!strcmp(dump_name(&jm, 0x1010), "JS:c"));
		CHECK(!strcmp(dump_name(&jm, 0x1050), "JS:*a"));
		CHECK(!strcmp(dump_name(&jm, 0x207f), "JS:b"));
		CHECK(!dump_name(&jm, 0x2080) && !dump_name(&jm, 0x8000));
		jitmap_release(&jm);
	}
	/* cut short inside the last record: the loads before it stay */
	jd_header(&d, PID, false);
	jd_load(&d, 0x1000, 0x10, 1, "JS:a", 0x10);
	cut = d.n;
	jd_load(&d, 0x3000, 0x10, 2, "JS:b", 0x10);
	CHECK_ERR(dump_parse(&jm, &d, d.n - 5), 0);
	CHECK(jm.nents == 1 && jm.nbad == 1 &&
	      !strcmp(jm.first_bad, "record at byte 117: last record cut "
		      "short"));
	jitmap_release(&jm);
	CHECK_ERR(dump_parse(&jm, &d, cut), 0);
	CHECK(jm.nents == 1 && jm.nbad == 0);
	jitmap_release(&jm);
	/* bad records are skipped, the walk goes on */
	jd_header(&d, PID, false);
	jd_load(&d, 0x1000, 0x10, 1, "JS:a", 0x8);	/* code short */
	jd_load(&d, 0x2000, 0, 2, "JS:zero", 0);	/* size 0 */
	jd_load(&d, 0x3000, 0x10, 3, "JS:ok", 0x10);
	CHECK_ERR(dump_parse(&jm, &d, d.n), 0);
	CHECK(jm.nents == 1 && jm.nbad == 2 &&
	      !strcmp(jm.first_bad, "record at byte 40: load record "
		      "shorter than its code"));
	jitmap_release(&jm);
	/* headers: too short, bad magic, version 2 */
	jd_header(&d, PID, false);
	CHECK_ERR(dump_parse(&jm, &d, 39), -EINVAL);
	CHECK(!strcmp(jm.first_bad, "header cut short"));
	jitmap_release(&jm);
	d.b[0] ^= 1;
	CHECK_ERR(dump_parse(&jm, &d, d.n), -EINVAL);
	jitmap_release(&jm);
	d.b[0] ^= 1;
	d.b[4] = 2;
	CHECK_ERR(dump_parse(&jm, &d, d.n), -EINVAL);
	CHECK(!strcmp(jm.first_bad, "jitdump version other than 1"));
	jitmap_release(&jm);
}

static void test_check(void)
{
	struct jitmap jm = { .mtime_ns = 100 * SEC, .uid = 1000 };
	int64_t slack = JITMAP_SLACK_NS;

	CHECK(jitmap_check(&jm, 100 * SEC + slack + 1, 1000, slack) ==
	      JITMAP_STALE);
	CHECK(jitmap_check(&jm, 100 * SEC + slack, 1000, slack) ==
	      JITMAP_TRUSTED);
	CHECK(jitmap_check(&jm, 50 * SEC, 1000, slack) == JITMAP_TRUSTED);
	CHECK(jitmap_check(&jm, 50 * SEC, 1001, slack) == JITMAP_FOREIGN);
	CHECK(jitmap_check(&jm, 0, 1000, slack) == JITMAP_UNCHECKED);
	jm.uid = 0;	/* root's file: any process's */
	CHECK(jitmap_check(&jm, 50 * SEC, 1001, slack) == JITMAP_TRUSTED);
	CHECK(!strcmp(jitmap_trust_name(JITMAP_STALE), "stale"));
}

static void test_start(void)
{
	int64_t before, after, start = 0;
	long tick = SEC / sysconf(_SC_CLK_TCK);
	struct pm *pm = NULL;
	uint32_t uid = 99;
	pid_t pid;

	before = now_ns();
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	after = now_ns();
	CHECK(pid > 0 && pm_new(NULL, &pm) == 0);
	CHECK(pm_scan(pm, pid) == 0);
	CHECK_ERR(pm_process_start(pm, pid, &start, &uid), 0);
	printf("# started %.3f ms after 'before' (tick %ld ms)\n",
	       (double)(start - before) / 1e6, tick / 1000000);
	CHECK(start >= before - 2 * tick && start <= after + 2 * tick);
	CHECK(uid == (uint32_t)getuid());
	CHECK_ERR(pm_process_start(pm, 0x7ffffff0, &start, &uid), -ENOENT);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	pm_free(pm);
}

/* A profile with one anonymous map of PID at 0x10000 and three stacks. */
static struct sym_prof *profile(void)
{
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_ANON, .pid = PID,
				  .start = 0x10000, .end = 0x20000,
				  .vaddr = 0x10000 };
	struct sym_prof_frame f[2] = {
		{ .addr = 0x10005, .map = 0 },
		{ .addr = 0x10100, .map = 0, .flags = SYM_PROF_FRAME_RETURN },
	};
	struct sym_prof_stack s = { .count = 1, .weight = 1, .pid = PID,
				    .tid = PID, .nframes = 2, .frames = f };
	struct sym_prof *p = NULL;
	uint32_t id;

	if (sym_prof_new(&p) || sym_prof_add_map(p, &m, &id) ||
	    sym_prof_add_stack(p, &s))
		abort();
	f[0].addr = 0x18000;	/* no entry covers it */
	s.nframes = 1;
	sym_prof_add_stack(p, &s);
	return p;
}

/* The context of both callbacks. */
struct tctx {
	int64_t start;
	struct jitmap_report rep;
};

static int start_fn(void *ctx, int32_t pid, int64_t *start_ns, uint32_t *uid)
{
	*start_ns = ((struct tctx *)ctx)->start;
	*uid = 0;
	return pid == PID ? 0 : -ENOENT;
}

static void report_fn(void *ctx, const struct jitmap_report *r)
{
	((struct tctx *)ctx)->rep = *r;
}

static const char *name_at(struct sym_prof *p, uint64_t addr, bool ret,
			   uint32_t *st)
{
	struct sym_prof_frame f = { .addr = addr, .map = 0,
		.flags = ret ? SYM_PROF_FRAME_RETURN : 0 };
	const struct sym_prof_line *l = NULL;
	size_t n = 0;

	if (sym_prof_location(p, &f, st, &l, &n))
		return NULL;
	return n == 1 ? l[0].function : "";
}

static void test_name(void)
{
	/* 0x100ff holds the call that returns to 0x10100 */
	static const char text[] = "10000 100 JS:*hot\n10100 10 JS:next\n";
	struct tctx c = { .start = now_ns() - 10 * SEC };
	struct jitmap_report *r = &c.rep;
	struct sym_prof *p = profile();
	char path[128];
	const char *s;
	uint32_t st;

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, PID);
	write_file(path, text, now_ns());
	CHECK_ERR(jitmap_name_profile(p, dir, start_fn, NULL, report_fn, &c),
		  0);
	CHECK(r->pid == PID && r->trust == JITMAP_TRUSTED &&
	      r->nents == 2 && r->frames == 3 && r->named == 2);
	s = name_at(p, 0x10005, false, &st);
	CHECK(s && !strcmp(s, "JS:*hot") && st == SYM_PROF_LOC_OK);
	s = name_at(p, 0x10100, true, &st);
	CHECK(s && !strcmp(s, "JS:*hot"));
	s = name_at(p, 0x18000, false, &st);
	CHECK(s && st == SYM_PROF_LOC_UNMAPPED);
	CHECK(sym_prof_map(p, 0)->flags == SYM_PROF_MAP_PERFMAP);
	sym_prof_free(p);

	p = profile();
	write_file(path, text, c.start - 3600 * SEC);
	CHECK_ERR(jitmap_name_profile(p, dir, start_fn, NULL, report_fn, &c),
		  0);
	CHECK(r->trust == JITMAP_STALE && r->named == 0);
	CHECK(!name_at(p, 0x10005, false, &st));
	CHECK(sym_prof_map(p, 0)->flags == SYM_PROF_MAP_PERFMAP_STALE);
	sym_prof_free(p);

	p = profile();	/* no map at all: nothing changes */
	unlink(path);
	CHECK_ERR(jitmap_name_profile(p, dir, start_fn, NULL, report_fn, &c),
		  0);
	CHECK(r->err == -ENOENT && sym_prof_map(p, 0)->flags == 0 &&
	      !sym_prof_symbolized(p));
	sym_prof_free(p);
}

/* The jitdump callback of test_name_dump(): @ctx is the path. */
static char dump_path[128];
static int32_t dump_pid_of_name;

static const char *dump_fn(void *ctx, int32_t pid, int32_t *dpid)
{
	(void)ctx;
	*dpid = dump_pid_of_name;
	return pid == PID ? dump_path : NULL;
}

static void write_bytes(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "w");

	fwrite(b, 1, n, f);
	fclose(f);
}

static void test_name_dump(void)
{
	struct tctx c = { .start = now_ns() - 10 * SEC };
	struct jitmap_report *r = &c.rep;
	struct sym_prof *p = profile();
	char path[128];
	const char *s;
	uint32_t st;
	struct jd d;

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, PID);
	write_file(path, "10000 100 JS:frommap\n", now_ns());
	snprintf(dump_path, sizeof(dump_path), "%s/jit-%d.dump", dir, PID);
	jd_header(&d, PID, false);
	jd_load(&d, 0x10000, 0x100, 1, "JS:*fromdump", 0x100);
	write_bytes(dump_path, d.b, d.n);
	dump_pid_of_name = PID;
	CHECK_ERR(jitmap_name_profile(p, dir, start_fn, dump_fn, report_fn,
				      &c), 0);
	CHECK(r->dump && !strcmp(r->path, dump_path) && !r->dump_err &&
	      r->trust == JITMAP_TRUSTED && r->nents == 1 && r->named == 2);
	s = name_at(p, 0x10005, false, &st);
	CHECK(s && !strcmp(s, "JS:*fromdump") && st == SYM_PROF_LOC_OK);
	CHECK(sym_prof_map(p, 0)->flags == SYM_PROF_MAP_PERFMAP);
	sym_prof_free(p);

	/* a jitdump of another process: said, and the perf map used */
	p = profile();
	dump_pid_of_name = PID + 1;
	CHECK_ERR(jitmap_name_profile(p, dir, start_fn, dump_fn, report_fn,
				      &c), 0);
	CHECK(!r->dump && r->dump_err == -EINVAL &&
	      !strcmp(r->dump_bad, "written by process 4242, not 4243") &&
	      !strcmp(r->path, path));
	s = name_at(p, 0x10005, false, &st);
	CHECK(s && !strcmp(s, "JS:frommap"));
	sym_prof_free(p);
	unlink(path);
	unlink(dump_path);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/t-jitmap.XXXXXX");
	if (!mkdtemp(dir))
		tap_skip_all("no temporary directory");
	test_load();
	test_check();
	test_start();
	test_name();
	test_dump();
	test_name_dump();
	tap_sh("rm -rf '%s'", dir);
	return tap_done();
}
