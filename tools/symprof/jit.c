/*
 * jit.c - JIT frames in libsymprof's files (docs/symprof.md, "JIT
 * frames"): drain thread only, at each write of the file.
 *
 * The program's anonymous executable mappings (read from
 * /proc/self/maps when a frame lies outside every object, and at each
 * write; at most SP_JIT_REGIONS, kept once seen: a runtime unmaps its
 * code at exit, before the last write) become `anon` maps after the
 * objects' maps, and a frame outside every object that lies in one is
 * written in that map (its address stays the runtime one: VADDR = START).
 * The program's perf map, /tmp/perf-PID.map (libsym/perfmap.c reads it),
 * names those frames: `symbolized 1`, one `fn` line per entry used and
 * one `loc` line per frame, as sym record writes them
 * (tools/agent/jitmap.c), and the maps get `mapflags ID perf-map`.  A map
 * last written before this process started (another process's, whose
 * PID this one reuses) or owned by another user is not used: the maps
 * get `perf-map-stale`.
 *
 * A program whose runtime writes a jitdump (jit-PID.dump, perf's other
 * format: node --perf-prof) maps it executable; a mapping of that name
 * with our PID, seen in /proc/self/maps, is read instead of the perf map
 * (libsym/jitdump.c), with the same trust rules.  Its loads name the
 * code; its moves are not followed here (sym record follows them; V8
 * never moves code while it writes a jitdump).
 *
 * Memory comes from mmap, never malloc (symprof.h); what is read is
 * bounded: SP_JIT_BYTES of map or jitdump, SYMI_PERFMAP_MAX_ENTRIES
 * entries.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symprof.h"
#include "jitdump.h"
#include "perfmap.h"

#define SP_JIT_REGIONS 256
/* Most rescans of /proc/self/maps for frames outside every mapping. */
#define SP_JIT_SCANS 64
#define SP_JIT_BYTES ((size_t)64 << 20)
#define SP_JIT_MAPS_BYTES ((size_t)4 << 20)
/* A map may be last written this much before the start (a tick). */
#define SP_JIT_SLACK_NS 20000000LL

/* The anonymous executable mappings seen while the program ran (a
 * runtime unmaps its code at exit, before the last write): kept across
 * writes, added to by sp_jit_note(). */
static struct {
	uint64_t start[SP_JIT_REGIONS], end[SP_JIT_REGIONS];
	size_t n;
	unsigned scans;
	char dump[4096];	/* our jitdump's path, or "" */
} R;

static struct {
	uint32_t first_id;
	int state;		/* 0 no map, 1 used, 2 not trusted */
	char *text;
	size_t textcap;
	struct symi_perfmap_ent *ents;
	size_t nents;
	struct symi_perfmap_seg *segs;
	size_t nsegs;
	uint8_t *fn_done;	/* per entry: its fn line was written */
	uint64_t *seen;		/* loc dedupe: open addressing, 0 empty */
	size_t nseen;
	bool symbolized;	/* "symbolized 1" written */
	/* what was mapped, for sp_jit_end() */
	struct { void *p; size_t n; } m[8];
	size_t nm;
} J;

static void *jit_mmap(size_t n)
{
	void *p = n && J.nm < 8 ? sp_mmap(n) : NULL;

	if (p) {
		J.m[J.nm].p = p;
		J.m[J.nm++].n = n;
	}
	return p;
}

/* Read @path whole into a new mapping of @cap bytes; *len its size. */
static char *read_file(const char *path, size_t cap, size_t *len,
		       struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	char *buf;
	ssize_t r;

	*len = 0;
	if (fd < 0)
		return NULL;
	if ((st && (fstat(fd, st) || !S_ISREG(st->st_mode))) ||
	    !(buf = jit_mmap(cap))) {
		close(fd);
		return NULL;
	}
	while (*len < cap) {
		r = read(fd, buf + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	close(fd);
	return buf;
}

static uint64_t hexnum(const char **s)
{
	uint64_t v = 0;

	for (;; (*s)++) {
		char c = **s;
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			return v;
		v = v << 4 | (uint64_t)d;
	}
}

/* Is @path (@n bytes) our jitdump, jit-PID.dump with our PID? */
static bool our_dump(const char *path, size_t n)
{
	const char *b = path + n;
	char want[40], num[24];
	size_t k;

	while (b > path && b[-1] != '/')
		b--;
	sp_fmt_u64(num, sizeof(num), (uint64_t)getpid());
	k = strlen(num);
	memcpy(want, "jit-", 4);
	memcpy(want + 4, num, k);
	memcpy(want + 4 + k, ".dump", 6);
	return (size_t)(path + n - b) == k + 9 && !memcmp(b, want, k + 9);
}

/* Note our jitdump when line @s..@end maps it. */
static void maps_dump(const char *s, const char *end)
{
	const char *path = memchr(s, '/', (size_t)(end - s));
	size_t n = path ? (size_t)(end - path) : 0;

	if (n && n < sizeof(R.dump) && our_dump(path, n)) {
		memcpy(R.dump, path, n);
		R.dump[n] = '\0';
	}
}

/* One line of /proc/self/maps: an anonymous executable mapping? */
static void maps_line(const char *s, const char *end)
{
	uint64_t a, b;
	int field = 0;
	const char *line = s;

	a = hexnum(&s);
	if (*s++ != '-')
		return;
	b = hexnum(&s);
	if (end - s < 4 || s[3] != 'x')
		return;
	for (; s < end; s++)	/* a path is the sixth field */
		if (*s == ' ' && s + 1 < end && s[1] != ' ')
			field++;
	if (field >= 5)
		maps_dump(line, end);
	for (size_t k = 0; k < R.n; k++)
		if (a < R.end[k] && R.start[k] < b)
			return;	/* known, or overlapping one known */
	if (field < 5 && R.n < SP_JIT_REGIONS && a < b) {
		R.start[R.n] = a;
		R.end[R.n++] = b;
	}
}

static void read_regions(void)
{
	size_t len;
	char *buf = read_file("/proc/self/maps", SP_JIT_MAPS_BYTES, &len,
			      NULL);

	for (size_t i = 0; buf && i < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;

		maps_line(buf + i, buf + i + n);
		i += n + 1;
	}
}

/* This process's start, wall clock ns; 0 when unknown. */
static int64_t own_start(void)
{
	char buf[1024];
	size_t len = 0;
	struct timespec rt, bt;
	uint64_t ticks;
	long hz = sysconf(_SC_CLK_TCK);
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return 0;
	r = read(fd, buf, sizeof(buf));
	close(fd);
	if (r > 0)
		len = (size_t)r;
	if (hz <= 0 || symi_proc_starttime(buf, len, &ticks) ||
	    clock_gettime(CLOCK_REALTIME, &rt) ||
	    clock_gettime(CLOCK_BOOTTIME, &bt))
		return 0;
	return (rt.tv_sec - bt.tv_sec) * 1000000000LL +
	       (rt.tv_nsec - bt.tv_nsec) +
	       (int64_t)(ticks * (1000000000ULL / (unsigned long)hz));
}

static bool trusted(const struct stat *st)
{
	int64_t start = own_start(), mtime = st->st_mtim.tv_sec *
					     1000000000LL + st->st_mtim.tv_nsec;

	if (st->st_uid != 0 && st->st_uid != geteuid())
		return false;
	return !start || mtime >= start - SP_JIT_SLACK_NS;
}

/* Parse the perf map and resolve its overlaps. */
static void parse_map(size_t len)
{
	size_t off = 0, cap = SYMI_PERFMAP_MAX_ENTRIES, n = 0;
	struct symi_perfmap_pt *pts;
	uint32_t line = 0, *heap;
	const char *why;
	int rc;

	/* a line holds at least 6 bytes: no more entries than len / 6 */
	if (cap > len / 6 + 1)
		cap = len / 6 + 1;
	J.ents = jit_mmap(cap * sizeof(*J.ents));
	J.segs = jit_mmap(2 * cap * sizeof(*J.segs));
	pts = jit_mmap(2 * cap * sizeof(*pts));
	heap = jit_mmap(cap * sizeof(*heap));
	J.fn_done = jit_mmap(cap);
	if (!J.ents || !J.segs || !pts || !heap || !J.fn_done)
		return;
	while (n < cap && (rc = symi_perfmap_next(J.text, len, &off, &line,
						  &J.ents[n], &why)))
		n += rc > 0;
	J.nents = n;
	J.nsegs = symi_perfmap_flatten(J.ents, n, pts, heap, J.segs);
}

/* Parse our jitdump's loads (J.text, @len bytes) and resolve their
 * overlaps; false when it is no jitdump of ours. */
static bool parse_dump(size_t len)
{
	size_t off = 0, cap = SYMI_PERFMAP_MAX_ENTRIES, n = 0;
	struct symi_jitdump_hdr h;
	struct symi_jitdump_rec r;
	struct symi_perfmap_pt *pts;
	uint32_t *heap;
	const char *why;
	int rc;

	if (symi_jitdump_header(J.text, len, &h, &off, &why) ||
	    h.pid != (uint32_t)getpid())
		return false;
	/* a load record holds at least 58 bytes */
	if (cap > len / 58 + 1)
		cap = len / 58 + 1;
	J.ents = jit_mmap(cap * sizeof(*J.ents));
	J.segs = jit_mmap(2 * cap * sizeof(*J.segs));
	pts = jit_mmap(2 * cap * sizeof(*pts));
	heap = jit_mmap(cap * sizeof(*heap));
	J.fn_done = jit_mmap(cap);
	if (!J.ents || !J.segs || !pts || !heap || !J.fn_done)
		return true;
	while (n < cap &&
	       (rc = symi_jitdump_next(J.text, len, &h, &off, &r, &why))) {
		if (rc < 0 || r.id != SYMI_JITDUMP_LOAD)
			continue;
		J.ents[n++] = (struct symi_perfmap_ent){ .start = r.addr,
			.size = r.size, .name = r.name, .namelen = r.namelen,
			.line = (uint32_t)r.off };
	}
	J.nents = n;
	J.nsegs = symi_perfmap_flatten(J.ents, n, pts, heap, J.segs);
	return true;
}

/* Read the program's jitdump when it mapped one, else its perf map. */
static void read_names(void)
{
	char path[64], num[24];
	struct stat st;
	size_t len;

	if (R.dump[0]) {
		J.text = read_file(R.dump, SP_JIT_BYTES, &len, &st);
		if (J.text) {
			J.state = trusted(&st) ? 1 : 2;
			if (J.state != 1 || parse_dump(len))
				return;
			J.state = 0;	/* not ours: the perf map */
		}
	}
	sp_fmt_u64(num, sizeof(num), (uint64_t)getpid());
	memcpy(path, "/tmp/perf-", 10);
	memcpy(path + 10, num, strlen(num));
	memcpy(path + 10 + strlen(num), ".map", 5);
	J.text = read_file(path, SP_JIT_BYTES, &len, &st);
	if (!J.text)
		return;
	J.state = trusted(&st) ? 1 : 2;
	if (J.state == 1)
		parse_map(len);
}

void sp_jit_begin(uint32_t first_id, size_t max_frames)
{
	memset(&J, 0, sizeof(J));
	J.first_id = first_id;
	read_regions();
	if (!R.n)
		return;
	read_names();
	for (J.nseen = 64; J.nseen < 2 * max_frames; J.nseen *= 2)
		;
	J.seen = jit_mmap(J.nseen * sizeof(*J.seen));
}

/* The region holding @pc, or -1. */
static long region(uint64_t pc)
{
	for (size_t k = 0; k < R.n; k++)
		if (pc >= R.start[k] && pc < R.end[k])
			return (long)k;
	return -1;
}

void sp_jit_note(uint64_t pc)
{
	if (region(pc) < 0 && R.scans < SP_JIT_SCANS) {
		R.scans++;
		read_regions();
	}
}

bool sp_jit_frame(uint64_t pc, uint32_t *map)
{
	long k = region(pc);

	if (k < 0)
		return false;
	*map = J.first_id + (uint32_t)k;
	return true;
}

void sp_jit_write_maps(struct sp_out *o, int32_t pid)
{
	for (size_t k = 0; k < R.n; k++) {
		sp_out_str(o, "map ");
		sp_out_u64(o, J.first_id + k);
		sp_out_str(o, " anon ");
		sp_out_i64(o, pid);
		sp_out_ch(o, ' ');
		sp_out_hex(o, R.start[k]);
		sp_out_ch(o, ' ');
		sp_out_hex(o, R.end[k]);
		sp_out_str(o, " 0 ");
		sp_out_hex(o, R.start[k]);
		sp_out_str(o, " - -\n");
		if (!J.state)
			continue;
		sp_out_str(o, "mapflags ");
		sp_out_u64(o, J.first_id + k);
		sp_out_str(o, J.state == 1 ? " perf-map\n" :
					     " perf-map-stale\n");
	}
}

/* Has the loc of (@pc, @ret) been written?  Marks it. */
static bool seen(uint64_t pc, bool ret)
{
	uint64_t key = (pc << 1 | ret) + 1, h = key * 0x9e3779b97f4a7c15ull;

	if (!J.seen)
		return true;
	for (size_t i = h >> 20 & (J.nseen - 1);; i = (i + 1) & (J.nseen - 1)) {
		if (J.seen[i] == key)
			return true;
		if (!J.seen[i]) {
			J.seen[i] = key;
			return false;
		}
	}
}

void sp_jit_write_loc(struct sp_out *o, uint64_t pc, bool ret)
{
	const struct symi_perfmap_seg *s;
	const struct symi_perfmap_ent *e;
	uint32_t map;

	if (J.state != 1 || !J.nsegs || !sp_jit_frame(pc, &map) ||
	    !(s = symi_perfmap_find(J.segs, J.nsegs, ret ? pc - 1 : pc)) ||
	    seen(pc, ret))
		return;
	e = &J.ents[s->ent];
	if (!J.symbolized) {
		sp_out_str(o, "symbolized 1\n");
		J.symbolized = true;
	}
	if (!J.fn_done[s->ent]) {
		char name[SYMI_PERFMAP_LINE_MAX + 1];

		memcpy(name, e->name, e->namelen);
		name[e->namelen] = '\0';
		sp_out_str(o, "fn ");
		sp_out_u64(o, s->ent + 1);
		sp_out_ch(o, ' ');
		sp_out_enc(o, name);
		sp_out_ch(o, '\n');
		J.fn_done[s->ent] = 1;
	}
	sp_out_str(o, ret ? "loc r" : "loc p");
	sp_out_u64(o, map);
	sp_out_ch(o, ':');
	sp_out_hex(o, pc);
	sp_out_str(o, " ok s");
	sp_out_u64(o, s->ent + 1);
	sp_out_str(o, ":-:0:0\n");
}

void sp_jit_end(void)
{
	for (size_t i = 0; i < J.nm; i++)
		sp_munmap(J.m[i].p, J.m[i].n);
	J.nm = 0;
}
