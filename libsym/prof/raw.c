/*
 * raw.c - the raw stack format (docs/raw-format.md, "sym-raw 1"):
 * sym_prof_write() and sym_prof_read().
 *
 * The writer fills a 64 KiB buffer and hands it to write(2) when full, so
 * a large profile costs one system call per 64 KiB.  Its output is a
 * function of the profile alone (fixed order: header, processes, threads,
 * maps, sources, symbolization, stacks), which the fuzz target uses: what the reader builds from
 * any file, written and read again, gives the same profile.
 *
 * The reader is strict, because a wrong profile is worse than none: every
 * line is checked against the document (field count, characters, number
 * ranges, escapes, references to maps, the limits) and the first problem
 * ends the parse with "line N: what" in the caller's buffer.  Only what
 * the format declares extensible is let through: unknown keywords (the
 * line is skipped whole), unknown stack flags (kept as
 * SYM_PROF_UNKNOWN_FLAG), unknown names in `flagged` and `mapflags`
 * (skipped), and fields after the 8th of a `source` line (skipped).
 * Each line is copied into a buffer of at most 1 MiB and split in place,
 * so strings decode in place and nothing is allocated per line beyond
 * what the profile keeps.
 *
 * Version 2 (docs/raw-format.md, "Value types") is version 1 with typed
 * values: `value-type NAME UNIT` header lines and a VALUES field after
 * FLAGS in every stack line.  The writer writes 2 only for a profile
 * with value types, so every other profile stays readable by readers of
 * version 1; the reader reads both.
 *
 * Sources (`source` lines) and a stack's source (the `from` line before
 * it) are read into sym_prof_add_source() and sym_prof_add_stack_from();
 * the writer writes a `from` line only where the source changes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "base.h"

/* Limits of docs/raw-format.md the reader checks itself (the profile
 * checks the counts of maps and stacks). */
#define MAX_LINE (1u << 20)
#define MAX_FIELDS (7 + SYM_PROF_MAX_FRAMES)	/* sym-raw 2: VALUES */

#define WBUF_SIZE 65536

#define NS_PER_S 1000000000ULL

/*
 * Calendar (proleptic Gregorian, UTC) without gmtime(): H. Hinnant's
 * days_from_civil() and civil_from_days().
 */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static unsigned days_in_month(int64_t y, unsigned m)
{
	static const unsigned char dm[] = { 31, 28, 31, 30, 31, 30,
					    31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dm[m - 1];
}

/*
 * The writer: a fixed WBUF_SIZE staging buffer in front of write(2).  It
 * is not a struct symi_buf (base.h) on purpose: it never grows - a full
 * buffer is written out, and wput() splits what is longer - so it has
 * no cap to enforce and nothing but I/O can fail after its one
 * allocation.  A capped growable buffer would add a failure (a string
 * over the cap) that the format does not need, and its only other
 * candidates, pprof's gzip stage and sym addr2line's stdout, write to
 * zlib and to a FILE.
 */

struct wbuf {
	int fd;
	int err;		/* first write error, sticky */
	size_t len;
	char *buf;		/* free(); WBUF_SIZE bytes */
};

static void wflush(struct wbuf *w)
{
	size_t off = 0;

	while (!w->err && off < w->len) {
		ssize_t r = write(w->fd, w->buf + off, w->len - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			w->err = -errno;
		else if (r == 0)
			w->err = -EIO;
		else
			off += (size_t)r;
	}
	w->len = 0;
}

static void wput(struct wbuf *w, const char *s, size_t n)
{
	while (n) {
		size_t k = WBUF_SIZE - w->len;

		if (k > n)
			k = n;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
		if (w->len == WBUF_SIZE)
			wflush(w);
	}
}

static void wc(struct wbuf *w, char c)
{
	if (w->len == WBUF_SIZE)
		wflush(w);
	w->buf[w->len++] = c;
}

static void ws(struct wbuf *w, const char *s)
{
	wput(w, s, strlen(s));
}

static void wu64(struct wbuf *w, uint64_t v)
{
	char b[24];
	size_t i = sizeof(b);

	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	wput(w, b + i, sizeof(b) - i);
}

static void wi64(struct wbuf *w, int64_t v)
{
	if (v < 0) {
		wc(w, '-');
		wu64(w, -(uint64_t)v);
	} else {
		wu64(w, (uint64_t)v);
	}
}

static void whex(struct wbuf *w, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char b[16];
	size_t i = sizeof(b);

	do {
		b[--i] = hex[v & 15];
		v >>= 4;
	} while (v);
	wput(w, b + i, sizeof(b) - i);
}

/* A string, percent-encoded; NULL (and "") as "-", "-" as "%2D". */
static void wstr(struct wbuf *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	if (!s || !*s) {
		wc(w, '-');
		return;
	}
	if (!strcmp(s, "-")) {
		ws(w, "%2D");
		return;
	}
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c < 0x21 || *c > 0x7e || *c == '%') {
			wc(w, '%');
			wc(w, hex[*c >> 4]);
			wc(w, hex[*c & 15]);
		} else {
			wc(w, (char)*c);
		}
	}
}

/* Keyword line "KEY VALUE\n" for the header's numbers. */
static void wkey_u64(struct wbuf *w, const char *key, uint64_t v)
{
	ws(w, key);
	wc(w, ' ');
	wu64(w, v);
	wc(w, '\n');
}

static void wkey_str(struct wbuf *w, const char *key, const char *s)
{
	ws(w, key);
	wc(w, ' ');
	wstr(w, s);
	wc(w, '\n');
}

/* RFC 3339 UTC with nanoseconds; 0 (unknown) as "-". */
static void wtime(struct wbuf *w, int64_t ns)
{
	int64_t sec, rem, days, y;
	uint64_t frac;
	unsigned mo, d, sod;
	char b[64];

	if (!ns) {
		wc(w, '-');
		return;
	}
	/* Floor division, without sec * 1e9 (which overflows for the
	 * earliest times). */
	sec = ns / (int64_t)NS_PER_S;
	rem = ns % (int64_t)NS_PER_S;
	if (rem < 0) {
		sec--;
		rem += (int64_t)NS_PER_S;
	}
	frac = (uint64_t)rem;
	days = sec / 86400;
	if (sec % 86400 < 0)
		days--;
	sod = (unsigned)(sec - days * 86400);
	civil_from_days(days, &y, &mo, &d);
	snprintf(b, sizeof(b), "%04lld-%02u-%02uT%02u:%02u:%02u.%09lluZ",
		 (long long)y, mo, d, sod / 3600, sod / 60 % 60, sod % 60,
		 (unsigned long long)frac);
	ws(w, b);
}

/* Seconds with 9 fraction digits. */
static void wduration(struct wbuf *w, uint64_t ns)
{
	char b[48];

	snprintf(b, sizeof(b), "%llu.%09llu",
		 (unsigned long long)(ns / NS_PER_S),
		 (unsigned long long)(ns % NS_PER_S));
	ws(w, b);
}

static void write_header(struct wbuf *w, const struct sym_prof *p)
{
	const struct sym_prof_header *h = sym_prof_header(p);

	ws(w, sym_prof_nvalue_types(p) ? "sym-raw 2\n" : "sym-raw 1\n");
	wkey_str(w, "host", h->host);
	ws(w, "tool ");
	wstr(w, h->tool);
	wc(w, ' ');
	wstr(w, h->tool_version);
	ws(w, "\nstart ");
	wtime(w, h->start_ns);
	ws(w, "\nduration ");
	wduration(w, h->duration_ns);
	wc(w, '\n');
	wkey_str(w, "event", h->event);
	wkey_str(w, "mode", h->mode);
	wkey_u64(w, "frequency", h->frequency);
	wkey_u64(w, "period", h->period);
	wkey_str(w, "weight-unit", h->weight_unit);
	wkey_u64(w, "samples", h->samples);
	wkey_u64(w, "lost", h->lost);
	wkey_u64(w, "throttled", h->throttled);
	wkey_u64(w, "dropped", h->dropped);
	for (int i = 0; i < SYM_PROF_NFLAGS; i++) {
		ws(w, "flagged ");
		ws(w, symi_prof_flag_names[i]);
		wc(w, ' ');
		wu64(w, h->flagged[i]);
		wc(w, '\n');
	}
	wkey_str(w, "release", sym_prof_release(p));
	ws(w, "pidns ");
	if (h->pidns)
		wu64(w, h->pidns);
	else
		wc(w, '-');
	wc(w, '\n');
	for (uint32_t i = 0; i < sym_prof_nvalue_types(p); i++) {
		const char *unit, *name = sym_prof_value_type(p, i, &unit);

		ws(w, "value-type ");
		ws(w, name);
		wc(w, ' ');
		ws(w, unit);
		wc(w, '\n');
	}
}

/* pMAP:ADDR, rMAP:ADDR, p?:ADDR */
static void write_frame(struct wbuf *w, const struct sym_prof_frame *f)
{
	wc(w, f->flags & SYM_PROF_FRAME_RETURN ? 'r' : 'p');
	if (f->map == SYM_PROF_NOMAP)
		wc(w, '?');
	else
		wu64(w, f->map);
	wc(w, ':');
	whex(w, f->addr);
}

/* sym-raw 2's VALUES field: " V,V,...", or " -" without value types. */
static void write_values(struct wbuf *w, const uint64_t *v, uint32_t n)
{
	wc(w, ' ');
	if (!n)
		wc(w, '-');
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			wc(w, ',');
		wu64(w, v[i]);
	}
}

static void write_stack(struct wbuf *w, const struct sym_prof_stack *s,
			const uint64_t *values, uint32_t nvalues)
{
	ws(w, "stack ");
	wu64(w, s->count);
	wc(w, ' ');
	wu64(w, s->weight);
	wc(w, ' ');
	wi64(w, s->pid);
	wc(w, ' ');
	wi64(w, s->tid);
	wc(w, ' ');
	if (!s->flags) {
		wc(w, '-');
	} else {
		const char *sep = "";

		for (int i = 0; i < SYM_PROF_NFLAGS; i++) {
			if (s->flags & (1u << i)) {
				ws(w, sep);
				ws(w, symi_prof_flag_names[i]);
				sep = ",";
			}
		}
		/* The name is lost; any unknown name reads back the same. */
		if (s->flags & SYM_PROF_UNKNOWN_FLAG) {
			ws(w, sep);
			ws(w, "unknown");
		}
	}
	if (values)
		write_values(w, values, nvalues);
	for (uint32_t i = 0; i < s->nframes; i++) {
		wc(w, ' ');
		write_frame(w, &s->frames[i]);
	}
	wc(w, '\n');
}

/* An optional id of a `fn` or `src` line: "-" for none. */
static void wid(struct wbuf *w, const char *s, const uint32_t *ids)
{
	if (s)
		wu64(w, ids[symi_prof_str_idx(s)]);
	else
		wc(w, '-');
}

/*
 * The symbolization: `fn` and `src` lines for the strings the locations
 * use, numbered from 1 in order of first use, then one `loc` line per
 * location in the profile's order.
 */
static int write_symbolization(struct wbuf *w, const struct sym_prof *p)
{
	static const char *const kw[SYMI_PROF_NSETS] = { "fn ", "src " };
	size_t nlocs = sym_prof_nlocations(p), nused[SYMI_PROF_NSETS] = { 0 };
	uint32_t *ids[SYMI_PROF_NSETS] = { NULL };
	const char **used[SYMI_PROF_NSETS] = { NULL };
	const struct sym_prof_line *lines;
	struct sym_prof_frame f;
	uint32_t status;
	size_t n;
	int err = 0;

	for (int k = 0; k < SYMI_PROF_NSETS; k++) {
		size_t ns = symi_prof_nstrs(p, k) + 1;

		ids[k] = symi_calloc(ns, sizeof(*ids[k]));
		used[k] = symi_calloc(ns, sizeof(*used[k]));
		if (!ids[k] || !used[k]) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < nlocs; i++) {
		sym_prof_location_at(p, i, NULL, NULL, &lines, &n);
		for (size_t j = 0; j < n; j++) {
			const char *str[SYMI_PROF_NSETS] = { lines[j].function,
							     lines[j].file };

			for (int k = 0; k < SYMI_PROF_NSETS; k++) {
				uint32_t x;

				if (!str[k])
					continue;
				x = symi_prof_str_idx(str[k]);
				if (!ids[k][x]) {
					used[k][nused[k]] = str[k];
					ids[k][x] = (uint32_t)++nused[k];
				}
			}
		}
	}
	for (int k = 0; k < SYMI_PROF_NSETS; k++) {
		for (size_t i = 0; i < nused[k] && !w->err; i++) {
			ws(w, kw[k]);
			wu64(w, i + 1);
			wc(w, ' ');
			wstr(w, used[k][i]);
			wc(w, '\n');
		}
	}
	for (size_t i = 0; i < nlocs && !w->err; i++) {
		sym_prof_location_at(p, i, &f, &status, &lines, &n);
		ws(w, "loc ");
		write_frame(w, &f);
		wc(w, ' ');
		ws(w, symi_prof_status_names[status]);
		for (size_t j = 0; j < n; j++) {
			const struct sym_prof_line *l = &lines[j];

			wc(w, ' ');
			if (l->flags & SYM_PROF_LINE_INLINED)
				wc(w, 'i');
			else if (l->flags & SYM_PROF_LINE_SYMTAB)
				wc(w, 's');
			wid(w, l->function, ids[SYMI_PROF_FUNCS]);
			wc(w, ':');
			wid(w, l->file, ids[SYMI_PROF_FILES]);
			wc(w, ':');
			wu64(w, l->line);
			wc(w, ':');
			wu64(w, l->column);
		}
		wc(w, '\n');
	}
out:
	for (int k = 0; k < SYMI_PROF_NSETS; k++) {
		free(ids[k]);
		free(used[k]);
	}
	return err;
}

/* source ID HOST START DURATION PERIOD WEIGHT-UNIT SAMPLES LOST */
/* The names of the map flags in `mapflags` lines, in the order written. */
static const struct {
	const char *name;
	uint32_t flag;
} mapflag_names[] = {
	{ "vaddr-guessed", SYM_PROF_MAP_VADDR_GUESSED },
	{ "perf-map", SYM_PROF_MAP_PERFMAP },
	{ "perf-map-stale", SYM_PROF_MAP_PERFMAP_STALE },
	{ "dwarf", SYM_PROF_MAP_SRC_DWARF },
	{ "gopclntab", SYM_PROF_MAP_SRC_GOPCLNTAB },
	{ "symtab", SYM_PROF_MAP_SRC_SYMTAB },
	{ "kallsyms", SYM_PROF_MAP_SRC_KALLSYMS },
};
#define MAPFLAG_NNAMES (sizeof(mapflag_names) / sizeof(mapflag_names[0]))

/* mapflags ID FLAG[,FLAG...] */
static void write_mapflags(struct wbuf *w, const struct sym_prof_map *m)
{
	char sep = ' ';

	ws(w, "mapflags ");
	wu64(w, m->id);
	for (size_t k = 0; k < MAPFLAG_NNAMES; k++) {
		if (!(m->flags & mapflag_names[k].flag))
			continue;
		wc(w, sep);
		ws(w, mapflag_names[k].name);
		sep = ',';
	}
	wc(w, '\n');
}

static void write_source(struct wbuf *w, const struct sym_prof_source *s)
{
	ws(w, "source ");
	wu64(w, s->id);
	wc(w, ' ');
	wstr(w, s->host);
	wc(w, ' ');
	wtime(w, s->start_ns);
	wc(w, ' ');
	wduration(w, s->duration_ns);
	wc(w, ' ');
	wu64(w, s->period);
	wc(w, ' ');
	wstr(w, s->weight_unit);
	wc(w, ' ');
	wu64(w, s->samples);
	wc(w, ' ');
	wu64(w, s->lost);
	wc(w, '\n');
}

int sym_prof_write(const struct sym_prof *p, int fd)
{
	const struct sym_prof_header *h = sym_prof_header(p);
	struct wbuf w = { .fd = fd };
	uint32_t from = 0;
	size_t n;
	int err;

	/* A file without a weight unit could not be read back. */
	if (!p || !h->weight_unit)
		return -EINVAL;
	w.buf = symi_malloc(WBUF_SIZE);
	if (!w.buf)
		return -ENOMEM;
	write_header(&w, p);
	if (sym_prof_symbolized(p))
		ws(&w, "symbolized 1\n");
	n = symi_prof_nprocs(p);
	for (size_t i = 0; i < n && !w.err; i++) {
		int32_t pid, nspid;
		uint64_t pidns;
		const char *comm = symi_prof_proc_at(p, i, &pid, &pidns,
						     &nspid);

		ws(&w, "process ");
		wi64(&w, pid);
		wc(&w, ' ');
		if (pidns)
			wu64(&w, pidns);
		else
			wc(&w, '-');
		wc(&w, ' ');
		wi64(&w, nspid);
		wc(&w, ' ');
		wstr(&w, comm);
		wc(&w, '\n');
	}
	n = symi_prof_nthreads(p);
	for (size_t i = 0; i < n && !w.err; i++) {
		int32_t pid, tid;
		const char *comm = symi_prof_thread_at(p, i, &pid, &tid);

		ws(&w, "thread ");
		wi64(&w, pid);
		wc(&w, ' ');
		wi64(&w, tid);
		wc(&w, ' ');
		wstr(&w, comm);
		wc(&w, '\n');
	}
	n = sym_prof_nmaps(p);
	for (uint32_t i = 0; i < n && !w.err; i++) {
		const struct sym_prof_map *m = sym_prof_map(p, i);

		ws(&w, "map ");
		wu64(&w, m->id);
		wc(&w, ' ');
		ws(&w, symi_prof_kind_names[m->kind]);
		wc(&w, ' ');
		wi64(&w, m->pid);
		wc(&w, ' ');
		whex(&w, m->start);
		wc(&w, ' ');
		whex(&w, m->end);
		wc(&w, ' ');
		whex(&w, m->pgoff);
		wc(&w, ' ');
		whex(&w, m->vaddr);
		wc(&w, ' ');
		ws(&w, m->build_id ? m->build_id : "-");
		wc(&w, ' ');
		wstr(&w, m->path);
		wc(&w, '\n');
		if (m->flags)
			write_mapflags(&w, m);
	}
	n = sym_prof_nsources(p);
	for (uint32_t i = 1; i <= n && !w.err; i++)
		write_source(&w, sym_prof_source(p, i));
	if (sym_prof_symbolized(p)) {
		err = write_symbolization(&w, p);
		if (err)
			goto out;
	}
	n = sym_prof_nstacks(p);
	for (size_t i = 0; i < n && !w.err; i++) {
		uint32_t src = sym_prof_stack_source(p, i);

		/* A `from` line only where the source changes. */
		if (src != from) {
			ws(&w, "from ");
			if (src)
				wu64(&w, src);
			else
				wc(&w, '-');
			wc(&w, '\n');
			from = src;
		}
		write_stack(&w, sym_prof_stack(p, i),
			    sym_prof_stack_values(p, i),
			    sym_prof_nvalue_types(p));
	}
	ws(&w, "end\n");
	wflush(&w);
	err = w.err;
out:
	free(w.buf);
	return err;
}

/*
 * The reader.
 */

/* Header lines seen, to reject a second one. */
enum {
	H_HOST, H_TOOL, H_START, H_DURATION, H_EVENT, H_MODE, H_FREQUENCY,
	H_PERIOD, H_WEIGHT_UNIT, H_SAMPLES, H_LOST, H_THROTTLED, H_DROPPED,
	H_PIDNS, H_RELEASE, H_N
};

static const char *const header_keys[H_N] = {
	[H_HOST] = "host", [H_TOOL] = "tool", [H_START] = "start",
	[H_DURATION] = "duration", [H_EVENT] = "event", [H_MODE] = "mode",
	[H_FREQUENCY] = "frequency", [H_PERIOD] = "period",
	[H_WEIGHT_UNIT] = "weight-unit", [H_SAMPLES] = "samples",
	[H_LOST] = "lost", [H_THROTTLED] = "throttled",
	[H_DROPPED] = "dropped", [H_PIDNS] = "pidns",
	[H_RELEASE] = "release",
};

struct rd {
	struct sym_prof *p;
	size_t lineno;
	char *msg;
	size_t msglen;

	char *line;		/* free(); grown to the longest line + 1 */
	size_t capline;
	char *f[MAX_FIELDS];	/* fields of the line, in @line */
	size_t nf;

	struct symi_idx mapids;	/* file's map ID -> profile map id */
	struct symi_idx srcids;	/* file's source ID -> source id - 1 */
	uint32_t from;		/* source of the next stacks; 0 none */
	struct sym_prof_frame *frames;	/* free(); SYM_PROF_MAX_FRAMES */

	/* The header as read; strings free()d, handed over at the end. */
	struct sym_prof_header h;
	const char *release;	/* the `release` line's; free() */
	uint32_t seen;		/* 1 << H_* */
	uint32_t seen_flagged;	/* 1 << stack flag bit */

	/* The symbolized form: 0 before `symbolized`, 1 after
	 * `symbolized 1`, -1 after another version (its lines are
	 * skipped). */
	int symbolized;
	/* File's fn / src ID -> index into strs[set]. */
	struct symi_idx strids[SYMI_PROF_NSETS];
	/* Interned by the profile (symi_prof_intern()); the array is
	 * free()d. */
	const char **strs[SYMI_PROF_NSETS];
	size_t nstrs[SYMI_PROF_NSETS], capstrs[SYMI_PROF_NSETS];
	struct sym_prof_line *lines;	/* free(); SYM_PROF_MAX_LINES */

	/* sym-raw 1 or 2; version 2's `value-type` lines, in order (names
	 * and units in @line copies, free()d), handed to the profile before
	 * the first stack (@vt_set). */
	int version;
	char *vt[2][SYM_PROF_MAX_VALUES];
	uint32_t nvt;
	bool vt_set;
	uint64_t values[SYM_PROF_MAX_VALUES];
};

static int fail(struct rd *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct rd *r, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!r->msg || !r->msglen)
		return err;
	n = snprintf(r->msg, r->msglen, "line %zu: ", r->lineno);
	if (n >= 0 && (size_t)n < r->msglen) {
		va_start(ap, fmt);
		vsnprintf(r->msg + n, r->msglen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Messages quote at most this many bytes of a field. */
#define Q "'%.40s'"

static int bad(struct rd *r, const char *what, const char *field)
{
	return fail(r, -SYM_E_BADPROFILE, "%s " Q, what, field);
}

static int parse_u64(struct rd *r, const char *s, const char *what,
		     uint64_t *out)
{
	uint64_t v = 0;

	for (const char *c = s; *c || c == s; c++) {
		if (*c < '0' || *c > '9')
			return fail(r, -SYM_E_BADPROFILE,
				    "%s " Q " is not a decimal number", what,
				    s);
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*c - '0'), &v))
			return fail(r, -SYM_E_BADPROFILE,
				    "%s " Q " is larger than 2^64 - 1", what,
				    s);
	}
	*out = v;
	return 0;
}

static int parse_hex(struct rd *r, const char *s, const char *what,
		     uint64_t *out)
{
	uint64_t v = 0;

	for (const char *c = s; *c || c == s; c++) {
		unsigned d;

		if (*c >= '0' && *c <= '9')
			d = (unsigned)(*c - '0');
		else if (*c >= 'a' && *c <= 'f')
			d = (unsigned)(*c - 'a' + 10);
		else
			return fail(r, -SYM_E_BADPROFILE,
				    "%s " Q " is not lowercase hex", what, s);
		if (v >> 60)
			return fail(r, -SYM_E_BADPROFILE,
				    "%s " Q " is larger than 2^64 - 1", what,
				    s);
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

/* A PID or TID: 0 to 2^31 - 1, or -1 when @minus1 allows it. */
static int parse_pid(struct rd *r, const char *s, const char *what,
		     bool minus1, int32_t *out)
{
	uint64_t v;
	int err;

	if (minus1 && !strcmp(s, "-1")) {
		*out = -1;
		return 0;
	}
	err = parse_u64(r, s, what, &v);
	if (err)
		return err;
	if (v > INT32_MAX)
		return fail(r, -SYM_E_BADPROFILE, "%s " Q " is not a PID",
			    what, s);
	*out = (int32_t)v;
	return 0;
}

int symi_pct_decode(char *s, char **out)
{
	char *o = s;

	if (!strcmp(s, "-")) {
		*out = NULL;
		return 0;
	}
	for (char *c = s; *c; c++) {
		int hi, lo;

		if (*c != '%') {
			*o++ = *c;
			continue;
		}
		hi = symi_hexval(c[1]);
		lo = hi < 0 ? -1 : symi_hexval(c[2]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		if (!hi && !lo)
			return -ERANGE;
		*o++ = (char)(hi << 4 | lo);
		c += 2;
	}
	*o = '\0';
	*out = s;
	return 0;
}

/* Decode a percent-encoded field in place; "-" gives NULL. */
static int parse_str(struct rd *r, char *s, const char *what, char **out)
{
	int err;

	*out = NULL;
	err = symi_pct_decode(s, out);
	if (err == -EINVAL)
		return fail(r, -SYM_E_BADPROFILE,
			    "%s: '%%' not followed by two hex digits", what);
	if (err)
		return fail(r, -SYM_E_BADPROFILE,
			    "%s: %%00 (a NUL byte) in a string", what);
	return 0;
}

/* A header string: decoded and copied into *dst. */
static int header_str(struct rd *r, char *s, const char *what,
		      const char **dst)
{
	char *v, *c = NULL;
	int err;

	err = parse_str(r, s, what, &v);
	if (err)
		return err;
	if (v) {
		c = symi_strdup(v);
		if (!c)
			return fail(r, -ENOMEM, "out of memory");
	}
	*dst = c;
	return 0;
}

/* RFC 3339 in UTC: YYYY-MM-DDTHH:MM:SS[.F{1,9}]Z, or "-" for 0. */
static int parse_time(struct rd *r, const char *s, int64_t *out)
{
	unsigned v[6] = { 0 };
	static const unsigned width[6] = { 4, 2, 2, 2, 2, 2 };
	static const char sep[6] = { '-', '-', 'T', ':', ':', 0 };
	static const unsigned max[6] = { 9999, 12, 31, 23, 59, 59 };
	const char *c = s;
	uint64_t frac = 0;
	int64_t days, ns;
	__int128 wide;
	unsigned nfrac = 0;

	if (!strcmp(s, "-")) {
		*out = 0;
		return 0;
	}
	for (int i = 0; i < 6; i++) {
		for (unsigned k = 0; k < width[i]; k++, c++) {
			if (*c < '0' || *c > '9')
				goto bad;
			v[i] = v[i] * 10 + (unsigned)(*c - '0');
		}
		if (v[i] > max[i])
			goto bad;
		if (sep[i] && *c++ != sep[i])
			goto bad;
	}
	if (v[1] < 1 || v[2] < 1 || v[2] > days_in_month(v[0], v[1]))
		goto bad;
	if (*c == '.') {
		for (c++; *c >= '0' && *c <= '9'; c++) {
			if (++nfrac > 9)
				goto bad;
			frac = frac * 10 + (uint64_t)(*c - '0');
		}
		if (!nfrac)
			goto bad;
		for (unsigned k = nfrac; k < 9; k++)
			frac *= 10;
	}
	if (strcmp(c, "Z"))
		goto bad;
	days = days_from_civil(v[0], v[1], v[2]);
	/* 128 bits: the last second before 1677-09-21T00:12:44Z is in
	 * range only once its fraction is added. */
	wide = ((__int128)days * 86400 + v[3] * 3600 + v[4] * 60 + v[5]) *
		       (int64_t)NS_PER_S + (int64_t)frac;
	if (wide < INT64_MIN || wide > INT64_MAX)
		return fail(r, -SYM_E_BADPROFILE,
			    "start " Q " is out of range (1677-09-21 to "
			    "2262-04-11)", s);
	ns = (int64_t)wide;
	*out = ns;
	return 0;
bad:
	return fail(r, -SYM_E_BADPROFILE,
		    "start " Q " is not YYYY-MM-DDTHH:MM:SS[.F]Z", s);
}

/* SECONDS[.F{1,9}] into nanoseconds. */
static int parse_duration(struct rd *r, char *s, uint64_t *out)
{
	char *dot = strchr(s, '.');
	uint64_t sec, frac = 0, ns;
	size_t nfrac = 0;
	int err;

	if (dot) {
		*dot = '\0';
		nfrac = strlen(dot + 1);
		if (!nfrac || nfrac > 9)
			return fail(r, -SYM_E_BADPROFILE,
				    "duration needs 1 to 9 fraction digits");
		err = parse_u64(r, dot + 1, "duration fraction", &frac);
		if (err)
			return err;
		for (size_t k = nfrac; k < 9; k++)
			frac *= 10;
	}
	err = parse_u64(r, s, "duration", &sec);
	if (err)
		return err;
	if (__builtin_mul_overflow(sec, NS_PER_S, &ns) ||
	    __builtin_add_overflow(ns, frac, &ns))
		return fail(r, -SYM_E_BADPROFILE,
			    "duration is larger than 2^64 - 1 nanoseconds");
	*out = ns;
	return 0;
}

static int want_fields(struct rd *r, size_t n)
{
	if (r->nf == n)
		return 0;
	return fail(r, -SYM_E_BADPROFILE, "'%s' takes %zu fields, not %zu",
		    r->f[0], n - 1, r->nf - 1);
}

/* A header line: r->f[0] is one of header_keys[] or "flagged". */
static int read_header(struct rd *r, int key)
{
	struct sym_prof_header *h = &r->h;
	uint64_t *num = NULL;
	int err;

	if (key < 0) {
		/* flagged FLAG N */
		uint64_t v;

		err = want_fields(r, 3);
		if (!err)
			err = parse_u64(r, r->f[2], "flagged count", &v);
		if (err)
			return err;
		for (int i = 0; i < SYM_PROF_NFLAGS; i++) {
			if (strcmp(r->f[1], symi_prof_flag_names[i]))
				continue;
			if (r->seen_flagged & (1u << i))
				return fail(r, -SYM_E_BADPROFILE,
					    "second 'flagged %s' line",
					    symi_prof_flag_names[i]);
			r->seen_flagged |= 1u << i;
			h->flagged[i] = v;
		}
		/* A flag this reader does not know: skipped. */
		return 0;
	}
	if (r->seen & (1u << key))
		return fail(r, -SYM_E_BADPROFILE, "second '%s' line",
			    header_keys[key]);
	r->seen |= 1u << key;
	err = want_fields(r, key == H_TOOL ? 3 : 2);
	if (err)
		return err;
	switch (key) {
	case H_HOST:
		return header_str(r, r->f[1], "host", &h->host);
	case H_TOOL:
		err = header_str(r, r->f[1], "tool name", &h->tool);
		return err ? err : header_str(r, r->f[2], "tool version",
					      &h->tool_version);
	case H_START:
		return parse_time(r, r->f[1], &h->start_ns);
	case H_DURATION:
		return parse_duration(r, r->f[1], &h->duration_ns);
	case H_EVENT:
		return header_str(r, r->f[1], "event", &h->event);
	case H_MODE:
		return header_str(r, r->f[1], "mode", &h->mode);
	case H_RELEASE:
		return header_str(r, r->f[1], "release", &r->release);
	case H_WEIGHT_UNIT:
		if (!strcmp(r->f[1], "-"))
			return fail(r, -SYM_E_BADPROFILE,
				    "weight-unit cannot be unknown ('-')");
		return header_str(r, r->f[1], "weight-unit", &h->weight_unit);
	case H_PIDNS:
		if (!strcmp(r->f[1], "-")) {
			h->pidns = 0;
			return 0;
		}
		num = &h->pidns;
		break;
	case H_FREQUENCY:
		num = &h->frequency;
		break;
	case H_PERIOD:
		num = &h->period;
		break;
	case H_SAMPLES:
		num = &h->samples;
		break;
	case H_LOST:
		num = &h->lost;
		break;
	case H_THROTTLED:
		num = &h->throttled;
		break;
	case H_DROPPED:
		num = &h->dropped;
		break;
	}
	return parse_u64(r, r->f[1], header_keys[key], num);
}

/* map ID KIND PID START END PGOFF VADDR BUILDID PATH */
static int read_map(struct rd *r)
{
	struct sym_prof_map m = { 0 };
	uint64_t fid;
	uint32_t id;
	char *path;
	int k;
	int err;

	err = want_fields(r, 10);
	if (!err)
		err = parse_u64(r, r->f[1], "map ID", &fid);
	if (err)
		return err;
	if (symi_idx_get(&r->mapids, fid, &id))
		return fail(r, -SYM_E_BADPROFILE, "second map with ID %llu",
			    (unsigned long long)fid);
	if ((k = symi_prof_kind(r->f[2])) < 0)
		return bad(r, "unknown map kind", r->f[2]);
	m.kind = (uint32_t)k;
	if ((err = parse_pid(r, r->f[3], "map PID", true, &m.pid)) ||
	    (err = parse_hex(r, r->f[4], "map start", &m.start)) ||
	    (err = parse_hex(r, r->f[5], "map end", &m.end)) ||
	    (err = parse_hex(r, r->f[6], "map offset", &m.pgoff)) ||
	    (err = parse_hex(r, r->f[7], "map vaddr", &m.vaddr)))
		return err;
	if (m.start > m.end)
		return fail(r, -SYM_E_BADPROFILE, "map start %llx > end %llx",
			    (unsigned long long)m.start,
			    (unsigned long long)m.end);
	if (strcmp(r->f[8], "-")) {
		if (!symi_prof_build_id_ok(r->f[8]))
			return bad(r, "build ID is not 2 to 128 lowercase hex "
				      "digits (an even count):", r->f[8]);
		m.build_id = r->f[8];
	}
	err = parse_str(r, r->f[9], "map path", &path);
	if (err)
		return err;
	m.path = path;
	err = sym_prof_add_map(r->p, &m, &id);
	if (err == -E2BIG)
		return fail(r, err, "more than %u maps", 1u << 20);
	if (!err)
		err = symi_idx_set(&r->mapids, fid, id);
	if (err)
		return fail(r, err, "out of memory");
	return 0;
}

/* mapflags ID FLAG[,FLAG...] */
static int read_mapflags(struct rd *r)
{
	const struct sym_prof_map *m;
	uint32_t id, flags;
	uint64_t fid;
	int err;

	err = want_fields(r, 3);
	if (!err)
		err = parse_u64(r, r->f[1], "map ID", &fid);
	if (err)
		return err;
	if (!symi_idx_get(&r->mapids, fid, &id))
		return fail(r, -SYM_E_BADPROFILE,
			    "mapflags for map %llu, which no map line before "
			    "defines", (unsigned long long)fid);
	m = sym_prof_map(r->p, id);
	flags = m->flags;
	for (char *c = r->f[2], *e; c; c = e) {
		e = strchr(c, ',');
		if (e)
			*e++ = '\0';
		if (!*c)
			return fail(r, -SYM_E_BADPROFILE,
				    "empty name in the map flags");
		for (size_t k = 0; k < MAPFLAG_NNAMES; k++)
			if (!strcmp(c, mapflag_names[k].name))
				flags |= mapflag_names[k].flag;
		/* else a flag this reader does not know: skipped */
	}
	return symi_prof_set_map_flags(r->p, id, flags);
}

/* process PID PIDNS NSPID COMM */
static int read_process(struct rd *r)
{
	int32_t pid, nspid;
	uint64_t pidns = 0;
	char *comm;
	int err;

	err = want_fields(r, 5);
	if (!err)
		err = parse_pid(r, r->f[1], "process PID", false, &pid);
	if (!err && strcmp(r->f[2], "-"))
		err = parse_u64(r, r->f[2], "process PID namespace", &pidns);
	if (!err)
		err = parse_pid(r, r->f[3], "process namespace PID", false,
				&nspid);
	if (!err)
		err = parse_str(r, r->f[4], "process comm", &comm);
	if (err)
		return err;
	err = sym_prof_add_process(r->p, pid, pidns, nspid, comm);
	if (err == -E2BIG)
		return fail(r, err, "more than %u processes", 1u << 22);
	return err ? fail(r, err, "out of memory") : 0;
}

/* thread PID TID COMM */
static int read_thread(struct rd *r)
{
	int32_t pid, tid;
	char *comm;
	int err;

	err = want_fields(r, 4);
	if (!err)
		err = parse_pid(r, r->f[1], "thread PID", false, &pid);
	if (!err)
		err = parse_pid(r, r->f[2], "thread TID", false, &tid);
	if (!err)
		err = parse_str(r, r->f[3], "thread comm", &comm);
	if (err)
		return err;
	err = sym_prof_add_thread(r->p, pid, tid, comm);
	if (err == -E2BIG)
		return fail(r, err, "more than %u threads", 1u << 22);
	return err ? fail(r, err, "out of memory") : 0;
}

static int parse_stack_flags(struct rd *r, char *s, uint32_t *out)
{
	uint32_t flags = 0;

	if (!strcmp(s, "-")) {
		*out = 0;
		return 0;
	}
	for (char *c = s, *e; c; c = e) {
		int i;

		e = strchr(c, ',');
		if (e)
			*e++ = '\0';
		if (!*c)
			return fail(r, -SYM_E_BADPROFILE,
				    "empty name in the stack flags");
		i = symi_prof_flag_bit(c);
		flags |= i >= 0 ? 1u << i : (uint32_t)SYM_PROF_UNKNOWN_FLAG;
	}
	*out = flags;
	return 0;
}

/* KMAP:ADDR */
static int parse_frame(struct rd *r, char *s, struct sym_prof_frame *f)
{
	char *colon = strchr(s, ':');
	uint64_t fid;
	int err;

	if (!colon || (s[0] != 'p' && s[0] != 'r') || colon == s + 1 ||
	    !colon[1])
		return bad(r, "frame is not [pr]MAP:ADDR:", s);
	f->flags = s[0] == 'r' ? SYM_PROF_FRAME_RETURN : 0;
	*colon = '\0';
	err = parse_hex(r, colon + 1, "frame address", &f->addr);
	if (err)
		return err;
	if (!strcmp(s + 1, "?")) {
		f->map = SYM_PROF_NOMAP;
		return 0;
	}
	err = parse_u64(r, s + 1, "frame map ID", &fid);
	if (err)
		return err;
	if (!symi_idx_get(&r->mapids, fid, &f->map))
		return fail(r, -SYM_E_BADPROFILE,
			    "frame names map %llu, which no map line before "
			    "defines", (unsigned long long)fid);
	return 0;
}

/* value-type NAME UNIT (sym-raw 2), before the first stack. */
static int read_value_type(struct rd *r)
{
	int err = want_fields(r, 3);

	if (err)
		return err;
	if (r->vt_set)
		return fail(r, -SYM_E_BADPROFILE,
			    "'value-type' after the first stack");
	if (r->nvt == SYM_PROF_MAX_VALUES)
		return fail(r, -E2BIG, "more than %d value types",
			    SYM_PROF_MAX_VALUES);
	for (uint32_t k = 0; k < r->nvt; k++)
		if (!strcmp(r->vt[0][k], r->f[1]))
			return fail(r, -SYM_E_BADPROFILE,
				    "value type " Q " declared twice", r->f[1]);
	for (int j = 0; j < 2; j++) {
		r->vt[j][r->nvt] = symi_strdup(r->f[1 + j]);
		if (!r->vt[j][r->nvt]) {
			free(r->vt[0][r->nvt]);
			return fail(r, -ENOMEM, "out of memory");
		}
	}
	r->nvt++;
	return 0;
}

/* Hand the value types read to the profile (once, before a stack). */
static int set_value_types(struct rd *r)
{
	int err;

	if (r->vt_set)
		return 0;
	r->vt_set = true;
	if (!r->nvt)
		return 0;
	err = sym_prof_set_value_types(r->p, (const char *const *)r->vt[0],
				       (const char *const *)r->vt[1], r->nvt);
	if (err == -EINVAL)
		return fail(r, -SYM_E_BADPROFILE,
			    "a value type's name or unit is not 1 to 64 of "
			    "[A-Za-z0-9_.-]");
	return err ? fail(r, err, "out of memory") : 0;
}

/* sym-raw 2's VALUES field: "-" without value types, else one decimal
 * per type, comma-separated, into r->values. */
static int parse_values(struct rd *r, char *s)
{
	uint32_t k = 0;
	int err;

	if (!r->nvt)
		return strcmp(s, "-") ?
		       fail(r, -SYM_E_BADPROFILE, "stack values " Q " without "
			    "'value-type' lines (want '-')", s) : 0;
	for (char *c = s;; k++) {
		char *comma = strchr(c, ',');

		if (k == r->nvt)
			return fail(r, -SYM_E_BADPROFILE, "more stack values "
				    "than the %u value types", r->nvt);
		if (comma)
			*comma = '\0';
		err = parse_u64(r, c, "stack value", &r->values[k]);
		if (err)
			return err;
		if (!comma)
			break;
		c = comma + 1;
	}
	if (k + 1 != r->nvt)
		return fail(r, -SYM_E_BADPROFILE,
			    "%u stack values for %u value types", k + 1, r->nvt);
	return 0;
}

/* stack COUNT WEIGHT PID TID FLAGS [VALUES] FRAME... (VALUES: sym-raw 2) */
static int read_stack(struct rd *r)
{
	struct sym_prof_stack s = { .frames = r->frames };
	size_t f0 = r->version == 2 ? 7 : 6;
	int err;

	if (r->nf < f0)
		return fail(r, -SYM_E_BADPROFILE,
			    "'stack' takes at least %zu fields, not %zu",
			    f0 - 1, r->nf - 1);
	if (r->version == 2 && ((err = set_value_types(r)) ||
				(err = parse_values(r, r->f[6]))))
		return err;
	if ((err = parse_u64(r, r->f[1], "stack count", &s.count)) ||
	    (err = parse_u64(r, r->f[2], "stack weight", &s.weight)) ||
	    (err = parse_pid(r, r->f[3], "stack PID", false, &s.pid)) ||
	    (err = parse_pid(r, r->f[4], "stack TID", false, &s.tid)) ||
	    (err = parse_stack_flags(r, r->f[5], &s.flags)))
		return err;
	if (r->nf - f0 > SYM_PROF_MAX_FRAMES)
		return fail(r, -E2BIG, "more than %d frames in a stack",
			    SYM_PROF_MAX_FRAMES);
	s.nframes = (uint32_t)(r->nf - f0);
	for (uint32_t i = 0; i < s.nframes; i++) {
		err = parse_frame(r, r->f[f0 + i], &r->frames[i]);
		if (err)
			return err;
	}
	err = sym_prof_add_stack_values(r->p, &s, r->from,
					r->nvt ? r->values : NULL);
	switch (err) {
	case 0:
		return 0;
	case -EOVERFLOW:
		return fail(r, -SYM_E_BADPROFILE,
			    "the counts or weights of this stack and an "
			    "identical one before add up past 2^64 - 1");
	case -E2BIG:
		return fail(r, err, "more than %u unique stacks", 1u << 24);
	default:
		return fail(r, err, "out of memory");
	}
}

/* source ID HOST START DURATION PERIOD WEIGHT-UNIT SAMPLES LOST [...] */
static int read_source(struct rd *r)
{
	struct sym_prof_source src = { 0 };
	uint64_t fid;
	uint32_t id;
	char *host, *unit;
	int err;

	/* Fields after the 8th are for later additions: skipped. */
	if (r->nf < 9)
		return fail(r, -SYM_E_BADPROFILE,
			    "'source' takes at least 8 fields, not %zu",
			    r->nf - 1);
	err = parse_u64(r, r->f[1], "source ID", &fid);
	if (err)
		return err;
	if (symi_idx_get(&r->srcids, fid, &id))
		return fail(r, -SYM_E_BADPROFILE,
			    "second source with ID %llu",
			    (unsigned long long)fid);
	if ((err = parse_str(r, r->f[2], "source host", &host)) ||
	    (err = parse_time(r, r->f[3], &src.start_ns)) ||
	    (err = parse_duration(r, r->f[4], &src.duration_ns)) ||
	    (err = parse_u64(r, r->f[5], "source period", &src.period)) ||
	    (err = parse_str(r, r->f[6], "source weight-unit", &unit)) ||
	    (err = parse_u64(r, r->f[7], "source samples", &src.samples)) ||
	    (err = parse_u64(r, r->f[8], "source lost", &src.lost)))
		return err;
	src.host = host;
	src.weight_unit = unit;
	err = sym_prof_add_source(r->p, &src, &id);
	if (err == -E2BIG)
		return fail(r, err, "more than %u sources", 1u << 20);
	if (!err)
		err = symi_idx_set(&r->srcids, fid, id - 1);
	return err ? fail(r, err, "out of memory") : 0;
}

/* from ID, from - */
static int read_from(struct rd *r)
{
	uint64_t fid;
	uint32_t id;
	int err;

	err = want_fields(r, 2);
	if (err)
		return err;
	if (!strcmp(r->f[1], "-")) {
		r->from = 0;
		return 0;
	}
	err = parse_u64(r, r->f[1], "from's source ID", &fid);
	if (err)
		return err;
	if (!symi_idx_get(&r->srcids, fid, &id))
		return fail(r, -SYM_E_BADPROFILE,
			    "from names source %llu, which no source line "
			    "before defines", (unsigned long long)fid);
	r->from = id + 1;
	return 0;
}

/* symbolized VERSION */
static int read_symbolized(struct rd *r)
{
	uint64_t v;
	int err;

	if (r->symbolized)
		return fail(r, -SYM_E_BADPROFILE, "second 'symbolized' line");
	err = want_fields(r, 2);
	if (!err)
		err = parse_u64(r, r->f[1], "symbolized version", &v);
	if (err)
		return err;
	/* A later version's lines may mean something else: read the
	 * profile as unsymbolized rather than misread them. */
	r->symbolized = v == 1 ? 1 : -1;
	if (v == 1)
		symi_prof_set_symbolized(r->p);
	return 0;
}

/* fn ID NAME, src ID PATH */
static int read_str_def(struct rd *r, int set)
{
	const char *what = set == SYMI_PROF_FUNCS ? "fn" : "src";
	const char *kept;
	uint64_t id;
	uint32_t x;
	char *v;
	int err;

	err = want_fields(r, 3);
	if (!err)
		err = parse_u64(r, r->f[1], set == SYMI_PROF_FUNCS ? "fn ID" :
						"src ID", &id);
	if (!err)
		err = parse_str(r, r->f[2], what, &v);
	if (err)
		return err;
	if (!v)
		return fail(r, -SYM_E_BADPROFILE,
			    "'%s' cannot define an unknown string ('-')",
			    what);
	if (symi_idx_get(&r->strids[set], id, &x))
		return fail(r, -SYM_E_BADPROFILE, "second '%s' with ID %llu",
			    what, (unsigned long long)id);
	err = symi_prof_intern(r->p, set, v, &kept);
	if (err == -E2BIG)
		return fail(r, err, "more than %u distinct '%s' strings",
			    1u << 24, what);
	if (!err && r->nstrs[set] >= UINT32_MAX - 1)
		return fail(r, -E2BIG, "too many '%s' lines", what);
	if (!err)
		err = symi_grow((void **)&r->strs[set], &r->capstrs[set],
				r->nstrs[set] + 1, sizeof(*r->strs[set]));
	if (!err)
		err = symi_idx_set(&r->strids[set], id,
				   (uint32_t)r->nstrs[set]);
	if (err)
		return fail(r, err, "out of memory");
	r->strs[set][r->nstrs[set]++] = kept;
	return 0;
}

/* An id of a `fn` or `src` line, or "-": *out is its string or NULL. */
static int parse_str_ref(struct rd *r, const char *s, int set,
			 const char **out)
{
	const char *what = set == SYMI_PROF_FUNCS ? "fn" : "src";
	uint64_t id;
	uint32_t x;
	int err;

	*out = NULL;
	if (!strcmp(s, "-"))
		return 0;
	err = parse_u64(r, s, set == SYMI_PROF_FUNCS ? "line's fn ID" :
					 "line's src ID", &id);
	if (err)
		return err;
	if (!symi_idx_get(&r->strids[set], id, &x))
		return fail(r, -SYM_E_BADPROFILE,
			    "line names %s %llu, which no '%s' line before "
			    "defines", what, (unsigned long long)id, what);
	*out = r->strs[set][x];
	return 0;
}

/* [i|s]FN:SRC:LINE:COL */
static int parse_line(struct rd *r, char *s, struct sym_prof_line *l)
{
	char *part[4];
	uint64_t v[2];
	size_t k = 0;
	int err;

	memset(l, 0, sizeof(*l));
	if (*s == 'i')
		l->flags = SYM_PROF_LINE_INLINED;
	else if (*s == 's')
		l->flags = SYM_PROF_LINE_SYMTAB;
	part[k++] = l->flags ? s + 1 : s;
	for (const char *c = part[0]; *c; c++)
		k += *c == ':';
	if (k != 4)
		return bad(r, "line is not [i|s]FN:SRC:LINE:COL:", s);
	for (k = 1; k < 4; k++) {
		part[k] = strchr(part[k - 1], ':');
		*part[k]++ = '\0';
	}
	if ((err = parse_str_ref(r, part[0], SYMI_PROF_FUNCS,
				 &l->function)) ||
	    (err = parse_str_ref(r, part[1], SYMI_PROF_FILES, &l->file)) ||
	    (err = parse_u64(r, part[2], "line number", &v[0])) ||
	    (err = parse_u64(r, part[3], "column", &v[1])))
		return err;
	if (v[0] > UINT32_MAX || v[1] > UINT32_MAX)
		return fail(r, -SYM_E_BADPROFILE,
			    "line or column is larger than 2^32 - 1");
	l->line = (uint32_t)v[0];
	l->column = (uint32_t)v[1];
	return 0;
}

/* loc FRAME STATUS LINE... */
static int read_loc(struct rd *r)
{
	struct sym_prof_frame f;
	size_t n = r->nf - 3;
	char text[48];
	uint32_t st;
	int err;

	if (r->nf < 3)
		return fail(r, -SYM_E_BADPROFILE,
			    "'loc' takes at least 2 fields, not %zu",
			    r->nf - 1);
	/* parse_frame() cuts the field at its ':': keep it for messages. */
	snprintf(text, sizeof(text), "%s", r->f[1]);
	err = parse_frame(r, r->f[1], &f);
	if (err)
		return err;
	for (st = 0; st < SYM_PROF_LOC_NSTATUS; st++)
		if (!strcmp(r->f[2], symi_prof_status_names[st]))
			break;
	if (st == SYM_PROF_LOC_NSTATUS)
		return bad(r, "unknown location status", r->f[2]);
	if ((st == SYM_PROF_LOC_OK) != (n > 0))
		return fail(r, -SYM_E_BADPROFILE, st == SYM_PROF_LOC_OK ?
			    "an 'ok' location needs at least one line" :
			    "only an 'ok' location has lines");
	if (n > SYM_PROF_MAX_LINES)
		return fail(r, -E2BIG, "more than %d lines in a location",
			    SYM_PROF_MAX_LINES);
	if (sym_prof_location(r->p, &f, NULL, NULL, NULL) == 0)
		return fail(r, -SYM_E_BADPROFILE,
			    "second 'loc' line for frame " Q, text);
	for (size_t i = 0; i < n; i++) {
		err = parse_line(r, r->f[3 + i], &r->lines[i]);
		if (err)
			return err;
	}
	err = sym_prof_set_location(r->p, &f, st, r->lines, n);
	if (err == -E2BIG)
		return fail(r, err, "more than %u locations", 1u << 26);
	return err ? fail(r, err, "out of memory") : 0;
}

/* fn, src and loc lines: after `symbolized 1`, skipped after another
 * version. */
static int read_sym_line(struct rd *r)
{
	if (!r->symbolized)
		return fail(r, -SYM_E_BADPROFILE,
			    "'%s' line before the 'symbolized' line",
			    r->f[0]);
	if (r->symbolized < 0)
		return 0;
	if (!strcmp(r->f[0], "loc"))
		return read_loc(r);
	return read_str_def(r, strcmp(r->f[0], "fn") ? SYMI_PROF_FILES :
						     SYMI_PROF_FUNCS);
}

/*
 * Split r->line (NUL-terminated, @n bytes) at single spaces into r->f.
 * Every byte must be printable ASCII or a space between two fields.
 */
static int split(struct rd *r, size_t n)
{
	char *c = r->line;

	r->nf = 0;
	r->f[r->nf++] = c;
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)c[i];

		if (b == ' ') {
			if (i == 0 || c[i - 1] == '\0' || i + 1 == n)
				return fail(r, -SYM_E_BADPROFILE,
					    "empty field (two spaces, or a "
					    "space at the start or end)");
			if (r->nf == MAX_FIELDS)
				return strcmp(r->f[0], "stack") ?
				       fail(r, -SYM_E_BADPROFILE,
					    "too many fields") :
				       fail(r, -E2BIG,
					    "more than %d frames in a stack",
					    SYM_PROF_MAX_FRAMES);
			c[i] = '\0';
			r->f[r->nf++] = c + i + 1;
		} else if (b < 0x21 || b > 0x7e) {
			return fail(r, -SYM_E_BADPROFILE,
				    "byte 0x%02x is not printable ASCII (a "
				    "string must percent-encode it)", b);
		}
	}
	return 0;
}

/* Check the first line: "sym-raw 1" or "sym-raw 2". */
static int read_magic(struct rd *r, const char *s, size_t n)
{
	if (n == 9 && (!memcmp(s, "sym-raw 1", 9) ||
		       !memcmp(s, "sym-raw 2", 9))) {
		r->version = s[8] - '0';
		return 0;
	}
	if (n > 8 && !memcmp(s, "sym-raw ", 8)) {
		size_t k = 8;

		/* Quote the version only when it is printable. */
		while (k < n && s[k] > 0x20 && s[k] < 0x7f)
			k++;
		if (k < n)
			return fail(r, -SYM_E_BADPROFILE,
				    "byte 0x%02x in the 'sym-raw 1' line (CRLF "
				    "line ends?)", (unsigned char)s[k]);
		return fail(r, -SYM_E_BADPROFILE,
			    "sym-raw version '%.*s' is not 1 or 2, the ones "
			    "this reader knows", (int)(n - 8 > 20 ? 20 : n - 8),
			    s + 8);
	}
	return fail(r, -SYM_E_BADPROFILE,
		    "not a sym-raw file (the first line is not 'sym-raw 1')");
}

static int read_line(struct rd *r, const char *s, size_t n, bool *end)
{
	size_t kw = 0;
	int err;

	if (!n || s[0] == '#')
		return 0;
	while (kw < n && s[kw] != ' ')
		kw++;
	if (!kw)
		return fail(r, -SYM_E_BADPROFILE, "line starts with a space");
#define IS(word) (kw == sizeof(word) - 1 && !memcmp(s, word, kw))
	if (!(IS("map") || IS("stack") || IS("process") || IS("thread") ||
	      IS("mapflags") || IS("flagged") || IS("end") ||
	      IS("symbolized") || IS("fn") || IS("src") || IS("loc") ||
	      IS("source") || IS("from") ||
	      (IS("value-type") && r->version == 2))) {
		int key;

		for (key = 0; key < H_N; key++)
			if (strlen(header_keys[key]) == kw &&
			    !memcmp(s, header_keys[key], kw))
				break;
		if (key == H_N)
			return 0; /* a keyword this reader does not know */
	}
	if (symi_grow((void **)&r->line, &r->capline, n + 1, 1))
		return fail(r, -ENOMEM, "out of memory");
	memcpy(r->line, s, n);
	r->line[n] = '\0';
	err = split(r, n);
	if (err)
		return err;
	if (IS("stack"))
		return read_stack(r);
	if (IS("map"))
		return read_map(r);
	if (IS("mapflags"))
		return read_mapflags(r);
	if (IS("process"))
		return read_process(r);
	if (IS("thread"))
		return read_thread(r);
	if (IS("flagged"))
		return read_header(r, -1);
	if (IS("source"))
		return read_source(r);
	if (IS("from"))
		return read_from(r);
	if (IS("value-type"))
		return read_value_type(r);
	if (IS("symbolized"))
		return read_symbolized(r);
	if (IS("fn") || IS("src") || IS("loc"))
		return read_sym_line(r);
	if (IS("end")) {
		*end = true;
		return want_fields(r, 1);
	}
#undef IS
	for (int key = 0; key < H_N; key++)
		if (!strcmp(r->f[0], header_keys[key]))
			return read_header(r, key);
	return 0;
}

static void rd_release(struct rd *r)
{
	free(r->line);
	free(r->frames);
	free(r->lines);
	symi_idx_release(&r->mapids);
	symi_idx_release(&r->srcids);
	for (int k = 0; k < SYMI_PROF_NSETS; k++) {
		symi_idx_release(&r->strids[k]);
		free(r->strs[k]);
	}
	free((char *)r->h.host);
	free((char *)r->h.tool);
	free((char *)r->h.tool_version);
	free((char *)r->h.event);
	free((char *)r->h.mode);
	free((char *)r->h.weight_unit);
	free((char *)r->release);
	for (uint32_t k = 0; k < r->nvt; k++) {
		free(r->vt[0][k]);
		free(r->vt[1][k]);
	}
}

int sym_prof_read(const void *buf, size_t len, struct sym_prof **out,
		  char *msg, size_t msglen)
{
	struct rd r = { .msg = msg, .msglen = msglen };
	const char *s = buf ? buf : "", *end = s + len;
	bool done = false;
	int err;

	if (out)
		*out = NULL;
	if (msg && msglen)
		msg[0] = '\0';
	if (!out || (!buf && len)) {
		if (msg && msglen)
			snprintf(msg, msglen, "a NULL %s",
				 out ? "buffer" : "out-pointer");
		return -EINVAL;
	}
	err = sym_prof_new(&r.p);
	if (err)
		return fail(&r, err, "out of memory");
	r.frames = symi_malloc(SYM_PROF_MAX_FRAMES * sizeof(*r.frames));
	r.lines = symi_malloc(SYM_PROF_MAX_LINES * sizeof(*r.lines));
	if (!r.frames || !r.lines) {
		err = fail(&r, -ENOMEM, "out of memory");
		goto out;
	}
	while (s < end && !done) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);

		r.lineno++;
		if (n > MAX_LINE) {
			err = fail(&r, -E2BIG, "longer than 1 MiB");
			goto out;
		}
		if (!nl) {
			err = fail(&r, -SYM_E_BADPROFILE,
				   "no newline at the end: the file was cut "
				   "short");
			goto out;
		}
		err = r.lineno == 1 ? read_magic(&r, s, n) :
				      read_line(&r, s, n, &done);
		if (err)
			goto out;
		s = nl + 1;
	}
	if (!r.lineno) {
		r.lineno = 1;
		err = fail(&r, -SYM_E_BADPROFILE, "empty file");
		goto out;
	}
	if (!done) {
		r.lineno++;
		err = fail(&r, -SYM_E_BADPROFILE,
			   "no 'end' line: the file was cut short");
		goto out;
	}
	if (s < end) {
		r.lineno++;
		err = fail(&r, -SYM_E_BADPROFILE,
			   "something follows the 'end' line");
		goto out;
	}
	if (!(r.seen & (1u << H_PERIOD)) || !(r.seen & (1u << H_WEIGHT_UNIT))) {
		err = fail(&r, -SYM_E_BADPROFILE, "no '%s' line before 'end'",
			   r.seen & (1u << H_PERIOD) ? "weight-unit" :
						       "period");
		goto out;
	}
	err = set_value_types(&r);
	if (err)
		goto out;
	err = sym_prof_set_header(r.p, &r.h);
	if (!err)
		err = sym_prof_set_release(r.p, r.release);
	if (err) {
		err = fail(&r, err, "out of memory");
		goto out;
	}
	*out = r.p;
	r.p = NULL;
out:
	sym_prof_free(r.p);
	rd_release(&r);
	return err;
}
