/*
 * store.c - `sym store`: fill, inspect and maintain the table store.
 *
 *	sym store add [--debuginfo-path=DIR] [--debug-file=FILE]
 *		      [--chunk-size=SIZE] [--force] FILE...
 *	sym store rm BUILDID...
 *	sym store ls                   (also: list)
 *	sym store info BUILDID
 *	sym store stats
 *	sym store gc [--compact] [--max-size=SIZE]
 *	sym store verify
 *
 * Every command takes --store=DIR, before or after its name; without it
 * the store is sym_store_default_dir()'s ($SYM_STORE, $XDG_CACHE_HOME/sym,
 * ~/.cache/sym).  The store itself is libsym's (sym.h, "Stores"): this
 * file only parses options and prints.
 *
 * Output is one line per item, fields separated by two blanks, so that
 * scripts can cut it; errors go to stderr as "sym store <cmd>: ...".
 * Exit status: 0, 1 when an item failed (the others were still done) or
 * verify found a problem, 2 for a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "addr2line.h"
#include "tools.h"
#include "base.h"

int tool_store_open(const char *dir, uint32_t flags,
		    const struct sym_store_opts *opts, char *path, size_t len,
		    struct sym_store **out)
{
	SYM_OPTS(sym_store_opts, o);
	int err;

	*out = NULL;
	/* memcpy(), not assignment: padding must stay zero (sym.h, "ABI"). */
	if (opts)
		memcpy(&o, opts, sizeof(o));
	o.sz = sizeof(o);
	o.flags = flags;
	if (dir) {
		if ((size_t)snprintf(path, len, "%s", dir) >= len)
			return -ENAMETOOLONG;
	} else {
		err = sym_store_default_dir(path, len);
		/* No variable names one: say where it was looked for. */
		if (err == -SYM_E_NOTFOUND)
			snprintf(path, len, "$SYM_STORE, $XDG_CACHE_HOME/sym "
				 "or $HOME/.cache/sym");
		if (err)
			return err;
	}
	return sym_store_open(path, &o, out);
}

const char *tool_negative_name(int kind)
{
	switch (kind) {
	case SYM_STORE_ABSENT:
		return "no debug info exists";
	case SYM_STORE_FAILED:
		return "fetch failed";
	case SYM_STORE_BADCONV:
		return "conversion failed";
	default:
		return "negative entry";
	}
}

int tool_module_table(struct sym_module *mod, struct sym_store *st,
		      const char *build_id, const struct sym_table **out)
{
	int err = sym_module_table(mod, out);
	char buf[256];

	/* Remembered until the converter changes (sym lookup and symd
	 * quote it); another error is not the converter's. */
	if (st && build_id && (err == -SYM_E_BADDWARF || err == -SYM_E_TOOBIG ||
			       err == -SYM_E_DECOMPRESS))
		sym_store_put_negative(st, build_id, SYM_STORE_BADCONV,
				       sym_strerror(err, buf, sizeof(buf)));
	return err;
}

int tool_store_put_module(struct sym_store *st, const char *build_id,
			  struct sym_module *mod, const char *file,
			  const struct sym_table *tab)
{
	const char *src = sym_module_debug_file(mod);
	char *real = realpath(src ? src : file, NULL);
	int err;

	err = sym_store_put(st, build_id, tab, real ? real : src ? src : file);
	free(real);
	return err;
}

/*
 * The progress line of `sym store add` on a terminal: the file, what is
 * being done and the seconds it has taken, redrawn ten times a second by
 * a thread of its own.  libsym builds a table in one call that reports
 * no progress (sym_module_table(); libjvm's takes ~8 s), so the elapsed
 * time is what the line can show.  Nothing when stderr is not a
 * terminal.
 */
struct ticker {
	bool tty;		/* stderr is a terminal: draw */
	bool running;		/* @th runs */
	bool stop;
	const char *file, *what;
	double t0;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Redraw the line; the caller holds @t->mu or owns @t alone. */
static void ticker_draw(const struct ticker *t)
{
	const char *base = strrchr(t->file, '/');

	fprintf(stderr, "\r%s: %s  %.1f s\033[K",
		base ? base + 1 : t->file, t->what, mono_s() - t->t0);
	fflush(stderr);
}

static void *ticker_main(void *arg)
{
	struct ticker *t = arg;
	struct timespec until;

	/* ticker_start() drew the first line: wait, then redraw. */
	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100 * 1000 * 1000;
		if (until.tv_nsec >= 1000 * 1000 * 1000) {
			until.tv_sec++;
			until.tv_nsec -= 1000 * 1000 * 1000;
		}
		pthread_cond_timedwait(&t->cv, &t->mu, &until);
		if (!t->stop)
			ticker_draw(t);
	}
	fputs("\r\033[K", stderr);
	fflush(stderr);
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

/* Show @what of @file from now on (borrowed until ticker_stop()). */
static void ticker_start(struct ticker *t, const char *file,
			 const char *what)
{
	if (!t->tty || t->running)
		return;
	t->file = file;
	t->what = what;
	t->stop = false;
	t->t0 = mono_s();
	/* The first line is drawn here, not by the thread: a small table is
	 * built before a thread scheduled late would draw anything. */
	ticker_draw(t);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	t->running = pthread_create(&t->th, NULL, ticker_main, t) == 0;
	if (!t->running) {
		fputs("\r\033[K", stderr);
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
	}
}

static void ticker_phase(struct ticker *t, const char *what)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->mu);
	t->what = what;
	pthread_mutex_unlock(&t->mu);
}

/* Stop and clear the line, before anything else is printed. */
static void ticker_stop(struct ticker *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->th, NULL);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	t->running = false;
}

/* "sym store <cmd>", for messages; static storage outlives the command. */
static char prog_buf[64];

/* The options every store command takes. */
struct store_cmd {
	const char *dir;		/* --store, NULL for the default */
	char path[4096];		/* the directory, for messages */
	struct sym_store *st;		/* sym_store_close() */
	struct sym_store_opts opts;
	struct ticker tick;		/* sym store add's progress line */
	bool force;			/* sym store add --force */
};

/*
 * open_store() - open the store for the command.  Only `sym store add`
 * (@create) makes a store where there is none; the other commands say
 * there is none and fail, rather than leave an empty store behind (a
 * mistyped --store made one).  Whether there is one is asked with a
 * read-only open, which creates nothing.  A command that only reads
 * (@readonly) still opens it read-write, so that an old layout is brought
 * up to date, and falls back to read-only when it may not write.
 */
static int open_store(struct store_cmd *sc, bool readonly, bool create)
{
	char buf[256];
	int err;

	if (!create) {
		err = tool_store_open(sc->dir, SYM_STORE_RDONLY, &sc->opts,
				      sc->path, sizeof(sc->path), &sc->st);
		sym_store_close(sc->st);
		sc->st = NULL;
		if (err == -ENOENT) {
			tool_err("there is no store at '%s' (sym store add "
				 "makes one)", sc->path);
			return err;
		}
	}
	err = tool_store_open(sc->dir, 0, &sc->opts, sc->path,
			      sizeof(sc->path), &sc->st);
	if (readonly && (err == -EACCES || err == -EROFS || err == -EPERM))
		err = tool_store_open(sc->dir, SYM_STORE_RDONLY, &sc->opts,
				      sc->path, sizeof(sc->path), &sc->st);
	if (err)
		tool_err("cannot open the store '%s': %s", sc->path,
			 sym_strerror(err, buf, sizeof(buf)));
	return err;
}

static const char *kind_name(int negative)
{
	switch (negative) {
	case 0:
		return "table";
	case SYM_STORE_ABSENT:
		return "absent";
	case SYM_STORE_FAILED:
		return "failed";
	case SYM_STORE_BADCONV:
		return "badconv";
	default:
		return "unknown";
	}
}

/* fmt_time() - "2024-05-01 12:00:00Z", or "-" for 0; in @buf. */
static const char *fmt_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t == 0 || !gmtime_r(&tt, &tm) ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "-");
	return buf;
}

/*
 * parse_size() - "123", "64K", "1.5G"... as bytes: K, M, G, T are powers
 * of 1024, optionally followed by "B" or "iB".
 * @return 0, -EINVAL, -ERANGE
 */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	const char *u;
	long double v;
	char *end;
	int shift = 0;

	if (!(s[0] >= '0' && s[0] <= '9'))
		return -EINVAL;
	errno = 0;
	v = strtold(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		u = strchr(units, end[0] & ~0x20);
		if (!u)
			return -EINVAL;
		shift = 10 * (int)(u - units + 1);
		end++;
		if ((end[0] == 'i' && (end[1] == 'B' || end[1] == 'b') &&
		     !end[2]))
			end += 2;
		else if ((end[0] == 'B' || end[0] == 'b') && !end[1])
			end++;
		if (*end)
			return -EINVAL;
	}
	v *= (long double)((uint64_t)1 << shift);
	if (v >= 18446744073709551615.0L)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/*
 * sym store add
 */

/* The most --debuginfo-path directories kept. */

/* The best enum sym_quality of the files the store holds for @bid, or
 * -1 when it holds none. */
static int stored_quality(struct store_cmd *sc, const char *bid)
{
	static const int kinds[] = { SYM_STORE_DEBUGINFO,
				     SYM_STORE_EXECUTABLE };
	char path[4096];
	int best = -1, q;

	for (size_t i = 0; i < 2; i++)
		if (sym_store_file_path(sc->st, bid, kinds[i], path,
					sizeof(path)) == 0 &&
		    sym_file_quality(path, &q) == 0 && q > best)
			best = q;
	return best;
}

/*
 * worse_than_stored() - as symd refuses an upload that would not improve
 * what it has (docs/http-api.md, "Uploads"), `sym store add` refuses a
 * file whose quality (its own, or its debug file's) is below that of the
 * files the store holds for the build ID: a stripped binary whose debug
 * file is not found here would replace a DWARF table with a table of
 * symbols.  An equal one is stored: adding a file again is how a table
 * is rebuilt.  --force stores a worse one too.
 * @return true after the "not stored" line
 */
static bool worse_than_stored(struct store_cmd *sc, struct sym_module *mod,
			      const char *file, const char *bid)
{
	const char *dbg = sym_module_debug_file(mod);
	int have = stored_quality(sc, bid), up = SYM_QUALITY_NONE, q;

	if (have < 0)
		return false;
	if (sym_file_quality(file, &q) == 0 && q > up)
		up = q;
	if (dbg && sym_file_quality(dbg, &q) == 0 && q > up)
		up = q;
	if (up >= have)
		return false;
	printf("%s  %s  not stored: the store has %s for build ID %s and "
	       "this file has %s (--force stores it anyway)\n", bid, file,
	       sym_quality_name(have), bid, sym_quality_name(up));
	fflush(stdout);
	return true;
}

bool tool_table_has_lines(const struct sym_table *tab)
{
	struct sym_table_stat ts;

	sym_table_stat(tab, &ts);
	return ts.flags & (SYM_TABLE_DWARF | SYM_TABLE_GOPCLNTAB);
}

static int add_one(struct store_cmd *sc, const struct sym_module_opts *mo,
		   const char *file)
{
	struct sym_store_lock *lock = NULL;
	int waited = 0;
	struct sym_module *mod = NULL;
	const struct sym_table *tab;
	struct sym_store_entry e;
	const char *bid, *src;
	int err;

	err = sym_module_open(file, mo, &mod);
	if (err) {
		tool_err_code(file, err);
		return err;
	}
	bid = sym_module_id(mod, NULL);
	if (!bid) {
		/* Not an error: such files are symbolized directly. */
		printf("%s: no build ID, skipped\n", file);
		sym_module_close(mod);
		return 0;
	}
	if (!sc->force && worse_than_stored(sc, mod, file, bid)) {
		sym_module_close(mod);
		return 0;
	}
	/* Another process converting it: wait for it, then only the files
	 * are left to put. */
	if (sym_store_lock(sc->st, bid, 10 * 60 * 1000, &lock, &waited) == 0 &&
	    waited && sym_store_has_table(sc->st, bid)) {
		sym_store_unlock(lock);
		lock = NULL;
		goto files;
	}
	ticker_start(&sc->tick, file, "building its table");
	err = tool_module_table(mod, sc->st, bid, &tab);
	if (err) {
		ticker_stop(&sc->tick);
		sym_store_unlock(lock);
		tool_err_code(file, err);
		sym_module_close(mod);
		return err;
	}
	ticker_phase(&sc->tick, "storing its table");
	err = tool_store_put_module(sc->st, bid, mod, file, tab);
	ticker_stop(&sc->tick);
	sym_store_unlock(lock);
	if (!err && !tool_table_has_lines(tab))
		tool_err("warning: '%s': no DWARF found, the table of build ID "
			 "%s has symbols only", file, bid);
	if (err) {
		char buf[256];

		tool_err("'%s': cannot store the table of build ID %s in '%s': "
			 "%s", file, bid, sc->path,
			 sym_strerror(err, buf, sizeof(buf)));
		sym_module_close(mod);
		return err;
	}
	/* The files too, as debuginfod would serve them: the file as the
	 * executable, and its debug file (itself, when the DWARF is inside
	 * it) as debuginfo. */
files:
	src = sym_module_debug_file(mod);
	err = sym_store_put_file(sc->st, bid, SYM_STORE_EXECUTABLE, file);
	if (!err && src)
		err = sym_store_put_file(sc->st, bid, SYM_STORE_DEBUGINFO, src);
	if (err) {
		char buf[256];

		tool_err("'%s': cannot store the files of build ID %s in '%s': "
			 "%s", file, bid, sc->path,
			 sym_strerror(err, buf, sizeof(buf)));
		sym_module_close(mod);
		return err;
	}
	if (sym_store_stat_entry(sc->st, bid, &e) == 0)
		printf("%s  %s  %" PRIu64 " bytes, %u chunks\n", bid, file,
		       e.size, e.chunks);
	else
		printf("%s  %s  stored\n", bid, file);
	fflush(stdout);
	sym_module_close(mod);
	return 0;
}

static int store_add(struct store_cmd *sc, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "store", required_argument, NULL, 'S' },
		{ "debuginfo-path", required_argument, NULL, 'P' },
		{ "debug-file", required_argument, NULL, 'D' },
		{ "chunk-size", required_argument, NULL, 'c' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tool_dirs dirs = { 0 };
	const char *debug_file = NULL;
	int status = TOOL_EXIT_OK;
	int c, i, err;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			sc->dir = optarg;
			break;
		case 'P':
			err = tool_dirs_add(&dirs, optarg);
			if (err == -E2BIG)
				goto too_many;
			if (err) {
				tool_err("out of memory");
				status = TOOL_EXIT_FAIL;
				goto out;
			}
			break;
		case 'D':
			debug_file = optarg;
			break;
		case 'f':
			sc->force = true;
			break;
		case 'c':
			if (parse_size(optarg, &sc->opts.chunk_size) ||
			    sc->opts.chunk_size == 0) {
				tool_err("--chunk-size: '%s' is not a size "
					 "(bytes, or with K, M, G, T)", optarg);
				status = TOOL_EXIT_USAGE;
				goto out;
			}
			break;
		case 'h':
			printf("usage: sym store add [--store=DIR] "
			       "[--debuginfo-path=DIR[:DIR]] "
			       "[--debug-file=FILE] [--chunk-size=SIZE] "
			       "[--force] FILE...\n\n"
			       "Build the table of each FILE and store it "
			       "under its build ID, in chunks of at most\n"
			       "SIZE bytes (default 64M).  A FILE worse than "
			       "what the store has (symbols\nonly over DWARF) "
			       "is not stored, unless --force.\n");
			goto out;
		default:
			status = TOOL_EXIT_USAGE;
			goto out;
		}
	}
	if (optind == argc) {
		tool_err("no FILE given; see 'sym store add --help'");
		status = TOOL_EXIT_USAGE;
		goto out;
	}
	if (debug_file && argc - optind > 1) {
		tool_err("--debug-file applies to one FILE only");
		status = TOOL_EXIT_USAGE;
		goto out;
	}
	if (open_store(sc, false, true)) {
		status = TOOL_EXIT_FAIL;
		goto out;
	}
	sc->tick.tty = isatty(STDERR_FILENO);
	{
		/* LLVM's spellings too, for the llvm-symbolizer styles. */
		SYM_OPTS(sym_module_opts, mo, .debug_file = debug_file,
			 .debuginfo_path = dirs.n ? dirs.dirs : NULL,
			 .spelling = a2l_spelling);

		for (i = optind; i < argc; i++)
			if (add_one(sc, &mo, argv[i]))
				status = TOOL_EXIT_FAIL;
	}
	goto out;
too_many:
	tool_err("--debuginfo-path: too many directories");
	status = TOOL_EXIT_USAGE;
out:
	tool_dirs_release(&dirs);
	return status;
}

/*
 * Commands that take only --store (and build IDs).
 */

/* plain_opts() - parse --store and --help; @help is the usage text. */
static int plain_opts(struct store_cmd *sc, int argc, char **argv,
		      const char *help)
{
	static const struct option longopts[] = {
		{ "store", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			sc->dir = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			return 1;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * The common start of the commands that take BUILDID...: parse the plain
 * options, check every ID, open the store.  Returns -1 to go on, else the
 * exit status to return.
 */
static int ids_start(struct store_cmd *sc, int argc, char **argv,
		     const char *usage, bool rdonly)
{
	int err = plain_opts(sc, argc, argv, usage);

	if (err)
		return err > 0 ? TOOL_EXIT_OK : TOOL_EXIT_USAGE;
	if (optind == argc) {
		tool_err("no BUILDID given");
		return TOOL_EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		if (!tool_valid_build_id(argv[i])) {
			tool_err("'%s' is not a build ID", argv[i]);
			return TOOL_EXIT_USAGE;
		}
	}
	if (open_store(sc, rdonly, false))
		return TOOL_EXIT_FAIL;
	return -1;
}

static int store_rm(struct store_cmd *sc, int argc, char **argv)
{
	int status = TOOL_EXIT_OK;
	char buf[256];
	int err, i;

	err = ids_start(sc, argc, argv, "usage: sym store rm [--store=DIR] "
			"BUILDID...\n\nDelete the entry (table or negative) "
			"of each build ID.\n", false);
	if (err >= 0)
		return err;
	for (i = optind; i < argc; i++) {
		err = sym_store_remove(sc->st, argv[i]);
		if (err == -SYM_E_NOTFOUND) {
			tool_err("no entry for build ID %s in store '%s'",
				 argv[i], sc->path);
			status = TOOL_EXIT_FAIL;
		} else if (err) {
			tool_err("cannot remove build ID %s: %s", argv[i],
				 sym_strerror(err, buf, sizeof(buf)));
			status = TOOL_EXIT_FAIL;
		} else {
			printf("removed %s\n", argv[i]);
		}
	}
	return status;
}

/* The "table:" line of sym store info: its source, and "kernel" for a
 * Linux kernel's (its addresses are _text offsets). */
static void print_table_kind(struct sym_store *st, const char *build_id)
{
	uint32_t flags = 0;

	if (sym_store_table_flags(st, build_id, &flags))
		return;
	printf("table:        %s%s\n", sym_table_source_name(flags),
	       flags & SYM_TABLE_KERNEL ? ", kernel (_text offsets)" : "");
}

/* sym store ls: build ID, kind, size, chunks, last access, text. */
static int ls_one(void *ctx, const char *build_id,
		  const struct sym_store_entry *e)
{
	char when[32];

	printf("%s  %-7s  %10" PRIu64 "  %4u  %s  %s\n", build_id,
	       kind_name(e->negative), e->size, e->chunks,
	       fmt_time(e->last_access, when, sizeof(when)),
	       e->text[0] ? e->text : "-");
	return 0;
}

static int list_error(struct store_cmd *sc, int err)
{
	char buf[256];

	tool_err("cannot list the store '%s': %s", sc->path,
		 sym_strerror(err, buf, sizeof(buf)));
	return TOOL_EXIT_FAIL;
}

/*
 * The common start of the commands that take no operand: parse the plain
 * options, refuse operands, open the store.  Returns -1 to go on, else the
 * exit status to return.
 */
static int noargs_start(struct store_cmd *sc, int argc, char **argv,
			const char *usage, bool rdonly)
{
	int err = plain_opts(sc, argc, argv, usage);

	if (err)
		return err > 0 ? TOOL_EXIT_OK : TOOL_EXIT_USAGE;
	if (optind != argc) {
		tool_err("unexpected argument '%s'", argv[optind]);
		return TOOL_EXIT_USAGE;
	}
	if (open_store(sc, rdonly, false))
		return TOOL_EXIT_FAIL;
	return -1;
}

static int store_ls(struct store_cmd *sc, int argc, char **argv)
{
	int err;

	err = noargs_start(sc, argc, argv, "usage: sym store ls [--store=DIR]"
			   "\n\nOne line per entry: build ID, kind (table, "
			   "absent, failed, badconv),\nsize in bytes, chunks, "
			   "last access (UTC), source or reason.\n", true);
	if (err >= 0)
		return err;
	err = sym_store_list(sc->st, ls_one, NULL);
	if (err)
		return list_error(sc, err);
	return TOOL_EXIT_OK;
}

struct stats {
	uint64_t bytes;
	size_t count[4];
};

static int stats_one(void *ctx, const char *build_id,
		     const struct sym_store_entry *e)
{
	struct stats *s = ctx;

	if (e->negative >= 0 && e->negative <= 3)
		s->count[e->negative]++;
	s->bytes += e->size;
	return 0;
}

static int store_stats(struct store_cmd *sc, int argc, char **argv)
{
	struct stats s = { 0 };
	char file[4200];
	struct stat sb;
	int err;

	err = plain_opts(sc, argc, argv, "usage: sym store stats "
			 "[--store=DIR]\n\nWhat the store holds, in "
			 "numbers.\n");
	if (err)
		return err > 0 ? TOOL_EXIT_OK : TOOL_EXIT_USAGE;
	if (open_store(sc, true, false))
		return TOOL_EXIT_FAIL;
	err = sym_store_list(sc->st, stats_one, &s);
	if (err)
		return list_error(sc, err);
	printf("store:     %s\n", sc->path);
	printf("tables:    %zu, %" PRIu64 " bytes\n", s.count[0], s.bytes);
	printf("negative:  %zu absent, %zu failed, %zu badconv\n", s.count[1],
	       s.count[2], s.count[3]);
	snprintf(file, sizeof(file), "%s/data.mdb", sc->path);
	if (stat(file, &sb) == 0)
		printf("data.mdb:  %jd bytes\n", (intmax_t)sb.st_size);
	return TOOL_EXIT_OK;
}

static int store_info(struct store_cmd *sc, int argc, char **argv)
{
	struct sym_store_entry e;
	char buf[256], when[32];
	int status = TOOL_EXIT_OK;
	int err, i;

	err = ids_start(sc, argc, argv, "usage: sym store info [--store=DIR]"
			" BUILDID...\n\nWhat the store knows of each build "
			"ID.\n", true);
	if (err >= 0)
		return err;
	for (i = optind; i < argc; i++) {
		err = sym_store_stat_entry(sc->st, argv[i], &e);
		if (err == -SYM_E_NOTFOUND) {
			tool_err("no entry for build ID %s in store '%s'",
				 argv[i], sc->path);
			status = TOOL_EXIT_FAIL;
			continue;
		}
		if (err) {
			tool_err("build ID %s: %s", argv[i],
				 sym_strerror(err, buf, sizeof(buf)));
			status = TOOL_EXIT_FAIL;
			continue;
		}
		if (i > optind)
			putchar('\n');
		printf("build ID:     %s\n", argv[i]);
		printf("kind:         %s\n", kind_name(e.negative));
		if (e.negative == 0) {
			printf("size:         %" PRIu64 " bytes\n", e.size);
			printf("chunks:       %u\n", e.chunks);
			printf("format:       %u%s\n", e.format,
			       e.format == SYM_TABLE_FORMAT ? "" :
			       " (stale: rebuilt on next use)");
			printf("converter:    %u%s\n", e.converter,
			       e.converter == sym_converter_version() ? "" :
			       " (stale: rebuilt on next use)");
			print_table_kind(sc->st, argv[i]);
		}
		printf("created:      %s\n",
		       fmt_time(e.created, when, sizeof(when)));
		printf("last access:  %s\n",
		       fmt_time(e.last_access, when, sizeof(when)));
		if (e.negative) {
			printf("expires:      %s\n",
			       fmt_time(e.expires, when, sizeof(when)));
			printf("reason:       %s\n", e.text[0] ? e.text : "-");
		} else {
			printf("source:       %s\n", e.text[0] ? e.text : "-");
		}
	}
	return status;
}

static int store_gc(struct store_cmd *sc, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "store", required_argument, NULL, 'S' },
		{ "compact", no_argument, NULL, 'c' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sym_store_gc_stats gs = { 0 };
	bool compact = false;
	char buf[256];
	int c, err;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			sc->dir = optarg;
			break;
		case 'c':
			compact = true;
			break;
		case 'm':
			if (parse_size(optarg, &sc->opts.max_size)) {
				tool_err("--max-size: '%s' is not a size "
					 "(bytes, or with K, M, G, T)", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'h':
			printf("usage: sym store gc [--store=DIR] [--compact] "
			       "[--max-size=SIZE]\n\nDrop expired negative "
			       "entries and orphan chunks; with --max-size\n"
			       "evict least recently used tables until the "
			       "rest fits SIZE (K, M, G, T\nsuffixes); with "
			       "--compact rewrite data.mdb without free "
			       "pages.\n");
			return TOOL_EXIT_OK;
		default:
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		tool_err("unexpected argument '%s'", argv[optind]);
		return TOOL_EXIT_USAGE;
	}
	if (open_store(sc, false, false))
		return TOOL_EXIT_FAIL;
	err = sym_store_gc(sc->st, compact, &gs);
	if (err) {
		tool_err("store '%s': %s", sc->path,
			 sym_strerror(err, buf, sizeof(buf)));
		return TOOL_EXIT_FAIL;
	}
	printf("kept %" PRIu64 " bytes of tables; evicted %u tables, "
	       "expired %u negative entries, removed %u orphan chunks\n",
	       gs.live_bytes, gs.evicted, gs.expired, gs.orphans);
	printf("data.mdb: %" PRIu64 " bytes -> %" PRIu64 " bytes%s\n",
	       gs.file_before, gs.file_after, compact ? " (compacted)" : "");
	return TOOL_EXIT_OK;
}

static void verify_problem(void *ctx, const char *build_id,
			   const char *what)
{
	printf("%s: %s\n", build_id && *build_id ? build_id : "store", what);
}

static int store_verify(struct store_cmd *sc, int argc, char **argv)
{
	char buf[256];
	int err;

	err = noargs_start(sc, argc, argv, "usage: sym store verify "
			   "[--store=DIR]\n\nCheck every entry: metadata, "
			   "chunk coverage, checksums and structure.\nEach "
			   "problem is printed; exit status 1 if there is "
			   "any.\n", true);
	if (err >= 0)
		return err;
	err = sym_store_verify(sc->st, verify_problem, NULL);
	if (err < 0) {
		tool_err("store '%s': %s", sc->path,
			 sym_strerror(err, buf, sizeof(buf)));
		return TOOL_EXIT_FAIL;
	}
	if (err > 0) {
		printf("%d problem%s in store '%s'\n", err, err == 1 ? "" : "s",
		       sc->path);
		return TOOL_EXIT_FAIL;
	}
	printf("store '%s': no problems\n", sc->path);
	return TOOL_EXIT_OK;
}

/*
 * The dispatcher.
 */

struct store_sub {
	const char *name;
	int (*fn)(struct store_cmd *sc, int argc, char **argv);
};

static const struct store_sub subs[] = {
	{ "add", store_add },
	{ "rm", store_rm },
	{ "ls", store_ls },
	{ "list", store_ls },
	{ "info", store_info },
	{ "stats", store_stats },
	{ "gc", store_gc },
	{ "verify", store_verify },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym store [--store=DIR] <command> [args]\n\n"
		"   add FILE...        build and store the table of each FILE\n"
		"   rm BUILDID...      delete entries\n"
		"   ls                 one line per entry\n"
		"   info BUILDID...    one entry in detail\n"
		"   stats              totals\n"
		"   gc [--compact] [--max-size=SIZE]\n"
		"                      drop expired entries, evict to SIZE\n"
		"   verify             check every entry; exit 1 on a problem\n"
		"\nThe store is DIR, else $SYM_STORE, $XDG_CACHE_HOME/sym or "
		"~/.cache/sym.\nSee sym(1).\n");
}

int cmd_store(int argc, char **argv)
{
	struct store_cmd sc = { .dir = NULL };
	int i = 1, status;
	size_t k;

	/* Zeroed, padding included, as SYM_OPTS() does (sym.h, "ABI"). */
	memset(&sc.opts, 0, sizeof(sc.opts));
	sc.opts.sz = sizeof(sc.opts);
	/* --store may come before the command as well as after it. */
	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return TOOL_EXIT_OK;
		}
		if (strncmp(argv[i], "--store=", 8) == 0) {
			sc.dir = argv[i] + 8;
			i++;
		} else if (strcmp(argv[i], "--store") == 0 && i + 1 < argc) {
			sc.dir = argv[i + 1];
			i += 2;
		} else {
			tool_err("unknown option '%s'", argv[i]);
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (i == argc) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	for (k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
		if (strcmp(subs[k].name, argv[i]) != 0)
			continue;
		snprintf(prog_buf, sizeof(prog_buf), "sym store %s",
			 subs[k].name);
		tool_set_prog(prog_buf);
		argv[i] = prog_buf;	/* getopt's prefix too */
		status = subs[k].fn(&sc, argc - i, argv + i);
		if (fflush(stdout) != 0)
			status = TOOL_EXIT_FAIL;
		sym_store_close(sc.st);
		return status;
	}
	tool_err("'%s' is not a store command; see 'sym store --help'",
		 argv[i]);
	return TOOL_EXIT_USAGE;
}
