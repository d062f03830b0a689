/*
 * fetch.c - upstream debuginfod fetches through libdebuginfod 0.188.
 *
 * libdebuginfod decides almost everything from the environment and says
 * little about what went wrong: its return value folds a 404, a 500, an
 * empty reply and our own cancellation into -ENOENT (see fetch.h).  So
 * each client gives libdebuginfod a verbose log on a memfd, emptied
 * before every query, and reads back one line per server answer:
 *
 *   init server N BASE                    BASE URL of server N
 *   query N urls in parallel              the network was used
 *   server response TEXT                  curl's result of one transfer
 *   url N ERRBUF                          right after it, curl's error;
 *                                         "...returned error: 404"
 *   header X-DEBUGINFOD-SIZE: N           the size a server announced
 *
 * Those lines are libdebuginfod 0.188's; if a later version words them
 * otherwise, no answer is seen and every -ENOENT becomes a transient
 * failure (short backoff), never a long "absent".
 *
 * Invariants: nothing this module returns was not checked (build ID or
 * size); a rejected file is deleted; after every failed query the empty
 * "negative" file libdebuginfod leaves at the target's cache path is
 * removed, so the next query asks the servers again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/debuginfod.h>

#include "sym.h"
#include "fetch.h"
#include "base.h"

#define ID_MAX 128		/* hex digits: libdebuginfod's 64 bytes */
#define SECTION_MAX 128
#define LOG_MAX (1 << 20)	/* verbose log bytes read back */
#define SERVERS_MAX 16		/* servers whose base URL is remembered */
/* libdebuginfod compares config values as int seconds: ~31 years. */
#define NEVER_S "1000000000"
/* glibc 2.36 has SIGEV_THREAD_ID but not this name for its field. */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* Set by symd_fetch_global_init() before any thread exists. */
static int g_enabled;
static int g_wake_sig;
static char g_cache[PATH_MAX];

enum { STOP_NONE, STOP_CANCEL, STOP_DEADLINE, STOP_FIRST_BYTE };

struct symd_fetch {
	debuginfod_client *dc;
	int vfd;			/* memfd: libdebuginfod's verbose log */
	atomic_int cancelled;		/* sticky, set by any thread */
	atomic_int busy_tid;		/* thread inside libdebuginfod, or 0 */
	unsigned call_ms;		/* per-call deadline, 0 for none */
	uint64_t deadline;		/* CLOCK_MONOTONIC ns, 0 for none */
	unsigned first_ms;		/* first-byte deadline, 0 for none */
	uint64_t first_deadline;	/* CLOCK_MONOTONIC ns, 0: met */
	const char *target;		/* of the running get */
	time_t since;			/* its start, CLOCK_REALTIME s */
	int stopped;			/* STOP_*: why progress_cb said stop */
	timer_t timer;			/* wakes @timer_tid at the deadline */
	pid_t timer_tid;		/* 0: no timer */
};

/* What the verbose log says about one query. */
struct vlog {
	int queried;			/* transfers attempted (query lines) */
	int failures, n404;		/* failed transfers; 404s among them */
	int status;			/* first HTTP error other than 404 */
	uint64_t size;			/* X-DEBUGINFOD-SIZE, if one value */
	int sizes;			/* 0 none, 1 one value, 2 conflicting */
	char detail[200];		/* first failure other than a 404 */
	char upstream[200];		/* the server of that failure */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static int valid_build_id(const char *id)
{
	size_t n;

	if (!id)
		return 0;
	n = strnlen(id, ID_MAX + 1);
	if (n < 2 || n > ID_MAX || n % 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(id[i] >= '0' && id[i] <= '9') &&
		    !(id[i] >= 'a' && id[i] <= 'f'))
			return 0;
	return 1;
}

/*
 * Section names go into a URL and a file name: no '/', no '%', nothing
 * that needs escaping, and not "." or "..".  Real names (".debug_info",
 * ".gnu_debugdata", ".note.gnu.build-id", ".rodata.str1.1") pass.
 */
/* A source path: absolute, printable bytes (UTF-8 passes), under
 * PATH_MAX, so that it goes into a URL and a cache name. */
static int valid_source(const char *s)
{
	size_t n;

	if (!s || s[0] != '/')
		return 0;
	n = strnlen(s, PATH_MAX);
	if (n >= PATH_MAX - 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static int valid_section(const char *s)
{
	size_t n, dots = 0;

	if (!s)
		return 0;
	n = strnlen(s, SECTION_MAX + 1);
	if (n < 1 || n > SECTION_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.')
			dots++;
		else if (!(s[i] >= 'a' && s[i] <= 'z') &&
			 !(s[i] >= 'A' && s[i] <= 'Z') &&
			 !(s[i] >= '0' && s[i] <= '9') && s[i] != '_' &&
			 s[i] != '-')
			return 0;
	}
	return dots < n;
}

/* Where libdebuginfod 0.188 puts (or leaves a negative file for) a query. */
static int target_path(char *buf, size_t len, enum symd_fetch_kind kind,
		       const char *id, const char *section)
{
	int n;

	if (kind == SYMD_FETCH_SECTION) {
		n = snprintf(buf, len, "%s/%s/section-%s", g_cache, id,
			     section);
	} else if (kind == SYMD_FETCH_SOURCE) {
		/* As 0.188 names it: each '/' of the path is "##"
		 * (source##usr##src##x.c, seen in its cache). */
		n = snprintf(buf, len, "%s/%s/source", g_cache, id);
		for (const char *p = section; n > 0 && *p; p++) {
			if ((size_t)n + 3 >= len)
				return -ENAMETOOLONG;
			if (*p == '/')
				buf[n++] = '#';
			buf[n++] = *p == '/' ? '#' : *p;
			buf[n] = '\0';
		}
	} else {
		n = snprintf(buf, len, "%s/%s/%s", g_cache, id,
			     kind == SYMD_FETCH_DEBUGINFO ? "debuginfo" :
							    "executable");
	}
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* @name next to @path (in its directory); 0 or -ENAMETOOLONG. */
static int sibling(char *buf, size_t len, const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	int n = slash ? (int)(slash - path) : 0;

	n = snprintf(buf, len, "%.*s/%s", n, path, name);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/*
 * For a section of a server without section support (503), 0.188
 * downloads the whole debuginfo (or executable) into the cache and cuts
 * the section out.  That download was not asked for and would stay for
 * good: whole_files() notes which of the two exist before the query (a
 * bit each), drop_whole_files() deletes the others afterwards.
 */
static const char *const whole_names[] = { "debuginfo", "executable" };

static int whole_files(const char *target)
{
	char p[PATH_MAX];
	int had = 0;

	for (int i = 0; i < 2; i++)
		if (!sibling(p, sizeof(p), target, whole_names[i]) &&
		    access(p, F_OK) == 0)
			had |= 1 << i;
	return had;
}

static void drop_whole_files(const char *target, int had)
{
	char p[PATH_MAX];

	for (int i = 0; i < 2; i++)
		if (!(had & 1 << i) &&
		    !sibling(p, sizeof(p), target, whole_names[i]))
			unlink(p);
}

/* Remove the directory of @path if it is empty; failures are harmless. */
static void rmdir_parent(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		rmdir(dir);
	}
}

/*
 * libdebuginfod's negative entry is an empty regular file at the target
 * path.  Only one fetch of a build ID and kind runs at a time (the
 * daemon's rule), so no download can be renamed there meanwhile.
 */
static void drop_negative(const char *target)
{
	struct stat st;

	if (lstat(target, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(target);
	rmdir_parent(target);
}

/*
 * Has a byte of the file arrived since @since (CLOCK_REALTIME seconds)?
 * libdebuginfod writes each download into "<kind>.XXXXXX" in the build
 * ID's directory of the cache and renames it at the end, and it tells
 * its callback nothing before it picks a server.  Any file of that
 * directory written to since the call began counts: for a section a
 * server without section support makes it download the whole debuginfo
 * or executable instead.  A directory scan, done only until the first
 * byte is seen; a file of another fetch of the same build ID can only
 * make it see a byte early (the other deadlines still hold).
 */
static int first_byte(const char *target, time_t since)
{
	const char *slash = strrchr(target, '/');
	char dir[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int got = 0;

	if (!slash || (size_t)(slash - target) >= sizeof(dir))
		return 1;	/* cannot tell: never cut on a guess */
	memcpy(dir, target, (size_t)(slash - target));
	dir[slash - target] = '\0';
	d = opendir(dir);
	if (!d)
		return 0;	/* not made yet: nothing came */
	while (!got && (de = readdir(d))) {
		if (de->d_name[0] != '.' &&
		    fstatat(dirfd(d), de->d_name, &st, 0) == 0 &&
		    S_ISREG(st.st_mode) && st.st_size > 0 &&
		    st.st_mtime >= since)
			got = 1;
	}
	closedir(d);
	return got;
}

/* libdebuginfod calls this once per turn of its loop (at least once a
 * second): cancellation and the deadlines. */
static int progress_cb(debuginfod_client *c, long a, long b)
{
	struct symd_fetch *f = debuginfod_get_user_data(c);
	uint64_t now = now_ns();

	(void)a;
	(void)b;
	if (atomic_load(&f->cancelled)) {
		f->stopped = STOP_CANCEL;
		return 1;
	}
	if (f->deadline && now >= f->deadline) {
		f->stopped = STOP_DEADLINE;
		return 1;
	}
	if (f->first_deadline && f->target) {
		if (first_byte(f->target, f->since)) {
			f->first_deadline = 0;
		} else if (now >= f->first_deadline) {
			f->stopped = STOP_FIRST_BYTE;
			return 1;
		}
	}
	return 0;
}

/* The wake signal only needs to interrupt poll(); it does nothing. */
static void wake_handler(int sig)
{
	(void)sig;
}

/*
 * With a wake signal, a deadline is a one-shot timer that signals the
 * calling thread, so that it is noticed at once rather than at the next
 * progress call (up to 1 s late).  The timer is made for the thread
 * that uses the client, again if that thread changes.
 */
static void arm_deadline(struct symd_fetch *f)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	pid_t tid = gettid();

	if (!g_wake_sig || !f->call_ms)
		return;
	if (f->timer_tid != tid) {
		struct sigevent sev;

		if (f->timer_tid)
			timer_delete(f->timer);
		f->timer_tid = 0;
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = g_wake_sig;
		sev.sigev_notify_thread_id = tid;
		if (timer_create(CLOCK_MONOTONIC, &sev, &f->timer) != 0)
			return;	/* the progress callback still checks */
		f->timer_tid = tid;
	}
	its.it_value.tv_sec = f->deadline / 1000000000u;
	its.it_value.tv_nsec = f->deadline % 1000000000u;
	timer_settime(f->timer, TIMER_ABSTIME, &its, NULL);
}

static void disarm_deadline(struct symd_fetch *f)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (f->timer_tid)
		timer_settime(f->timer, 0, &its, NULL);
}

/* One failed transfer: @code is its HTTP status, 0 if it had none. */
static void note_failure(struct vlog *v, const char *base, int code,
			 const char *what)
{
	v->failures++;
	if (code == 404) {
		v->n404++;
		return;
	}
	if (code && !v->status)
		v->status = code;
	if (v->detail[0])
		return;
	snprintf(v->upstream, sizeof(v->upstream), "%s", base ? base : "");
	if (code)
		snprintf(v->detail, sizeof(v->detail), "%s: HTTP %d",
			 base ? base : "upstream", code);
	else
		snprintf(v->detail, sizeof(v->detail), "%s: %s",
			 base ? base : "upstream", what);
}

/* The HTTP status at the start of @s ("404" in "404 Not Found"), or 0
 * when there is none in 100..599. */
static int http_code(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || v < 100 || v > 599)
		return 0;
	return (int)v;
}

/*
 * @pending holds the "server response" text of a failure whose
 * "url N errbuf" line may come next; "" when none.
 */
static void parse_line(struct vlog *v, const char *line, char **base,
		       char *pending, size_t plen)
{
	static const char http_err[] = "The requested URL returned error: ";
	int idx, off = 0;
	unsigned long long sz;

	if (pending[0]) {
		if (sscanf(line, "url %d %n", &idx, &off) == 1 && off) {
			const char *err = line + off;
			const char *b = idx >= 0 && idx < SERVERS_MAX ?
					base[idx] : NULL;
			int code = 0;

			if (!strncmp(err, http_err, sizeof(http_err) - 1))
				code = http_code(err + sizeof(http_err) - 1);
			note_failure(v, b, code, err);
			pending[0] = '\0';
			return;
		}
		/* No curl error text for it: not known to be a 404. */
		note_failure(v, NULL, 0, pending);
		pending[0] = '\0';
	}
	if (sscanf(line, "init server %d %n", &idx, &off) == 1 && off &&
	    idx >= 0 && idx < SERVERS_MAX) {
		size_t n = strlen(line + off);

		/* "http://host:port/buildid": the server is what matters. */
		if (n > 8 && !strcmp(line + off + n - 8, "/buildid"))
			n -= 8;
		free(base[idx]);
		base[idx] = strndup(line + off, n);
	} else if (!strncmp(line, "query ", 6)) {
		v->queried++;
	} else if (!strncmp(line, "server response ", 16)) {
		if (strcmp(line + 16, "No error") != 0)
			snprintf(pending, plen, "%s", line + 16);
	} else if (!strncasecmp(line, "header X-DEBUGINFOD-SIZE:", 25) &&
		   sscanf(line + 25, "%llu", &sz) == 1) {
		if (v->sizes && v->size != sz)
			v->sizes = 2;
		else if (!v->sizes)
			v->sizes = 1;
		v->size = sz;
	}
}

static void read_log(struct symd_fetch *f, struct vlog *v)
{
	char *base[SERVERS_MAX] = { NULL };
	struct stat st;
	char *buf, *line, *nl;
	char pending[128] = "";
	ssize_t n;

	memset(v, 0, sizeof(*v));
	if (fstat(f->vfd, &st) != 0 || st.st_size <= 0)
		return;
	n = st.st_size < LOG_MAX ? st.st_size : LOG_MAX;
	buf = malloc(n + 1);
	if (!buf)
		return;
	n = pread(f->vfd, buf, n, 0);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		/* Header lines keep their "\r". */
		if (nl && nl > line && nl[-1] == '\r')
			nl[-1] = '\0';
		parse_line(v, line, base, pending, sizeof(pending));
		if (!nl)
			break;
	}
	if (pending[0])
		note_failure(v, NULL, 0, pending);
	for (int i = 0; i < SERVERS_MAX; i++)
		free(base[i]);
	free(buf);
}

/* A returned file must be what was asked for; 0 or -SYMD_FETCH_BADID. */
static int check_file(enum symd_fetch_kind kind, const char *id,
		      const char *path, const struct vlog *v,
		      struct symd_fetch_info *info)
{
	char hex[2 * 64 + 1], eb[96];
	int err;

	if (kind == SYMD_FETCH_SOURCE)
		return 0;	/* any bytes, none too: no build ID inside */
	if (kind == SYMD_FETCH_SECTION) {
		if (info->size == 0) {
			snprintf(info->msg, sizeof(info->msg),
				 "empty section file");
			return -SYMD_FETCH_BADID;
		}
		/*
		 * One query only: with more, 0.188 fell back to fetching
		 * the whole debuginfo or executable (a server without
		 * section support) and the size announced is that file's.
		 */
		if (v->queried == 1 && v->sizes == 1 &&
		    v->size != info->size) {
			snprintf(info->msg, sizeof(info->msg),
				 "section is %llu bytes, %llu announced",
				 (unsigned long long)info->size,
				 (unsigned long long)v->size);
			return -SYMD_FETCH_BADID;
		}
		return 0;
	}
	err = sym_file_module_id(path, hex, sizeof(hex), NULL);
	if (err) {
		snprintf(info->msg, sizeof(info->msg),
			 "fetched file has no usable build ID: %s",
			 sym_strerror(err, eb, sizeof(eb)));
		return -SYMD_FETCH_BADID;
	}
	if (strcmp(hex, id) != 0) {
		snprintf(info->msg, sizeof(info->msg),
			 "fetched file has build ID %.64s", hex);
		return -SYMD_FETCH_BADID;
	}
	return 0;
}

/* Turn a failed libdebuginfod query into one of our errors. */
static int classify(struct symd_fetch *f, int rc, enum symd_fetch_kind kind,
		    const struct vlog *v, struct symd_fetch_info *info)
{
	info->err = rc;
	info->http_status = v->status ? v->status : v->n404 ? 404 : 0;
	snprintf(info->upstream, sizeof(info->upstream), "%s", v->upstream);
	if (f->stopped == STOP_CANCEL) {
		snprintf(info->msg, sizeof(info->msg), "cancelled");
		return -SYMD_FETCH_CANCELLED;
	}
	if (f->stopped == STOP_DEADLINE) {
		info->err = -ETIME;
		snprintf(info->msg, sizeof(info->msg),
			 "no answer within the deadline of %u ms", f->call_ms);
		return -SYMD_FETCH_FAILED;
	}
	if (f->stopped == STOP_FIRST_BYTE) {
		info->err = -ETIME;
		snprintf(info->msg, sizeof(info->msg),
			 "no upstream sent a byte within %u ms", f->first_ms);
		return -SYMD_FETCH_FAILED;
	}
	if (rc == -ENOENT && v->failures && v->n404 == v->failures) {
		snprintf(info->msg, sizeof(info->msg),
			 "not found on any upstream (HTTP 404)");
		return -SYMD_FETCH_ABSENT;
	}
	/* 0.188 checks cached debuginfo/executable files for a section. */
	if (rc == -ENOENT && !v->queried && kind == SYMD_FETCH_SECTION) {
		snprintf(info->msg, sizeof(info->msg),
			 "the cached file has no such section");
		return -SYMD_FETCH_ABSENT;
	}
	if (rc == -ENOSYS) {
		snprintf(info->msg, sizeof(info->msg),
			 "no usable upstream URL");
		return -SYMD_FETCH_ABSENT;
	}
	/* -ENOENT that is not a 404: a 5xx, an empty reply, a local error. */
	if (rc == -ENOENT && v->failures)
		info->err = v->status ? -EIO : -EPROTO;
	if (v->detail[0])
		snprintf(info->msg, sizeof(info->msg), "%s", v->detail);
	else
		snprintf(info->msg, sizeof(info->msg), "%s%s",
			 v->queried ? "" : "before any transfer: ",
			 strerror(-info->err));
	return -SYMD_FETCH_FAILED;
}

static int query(struct symd_fetch *f, enum symd_fetch_kind kind,
		 const char *id, const char *section, char **path)
{
	const unsigned char *bid = (const unsigned char *)id;

	switch (kind) {
	case SYMD_FETCH_DEBUGINFO:
		return debuginfod_find_debuginfo(f->dc, bid, 0, path);
	case SYMD_FETCH_EXECUTABLE:
		return debuginfod_find_executable(f->dc, bid, 0, path);
	case SYMD_FETCH_SOURCE:
		return debuginfod_find_source(f->dc, bid, 0, section, path);
	default:
		return debuginfod_find_section(f->dc, bid, 0, section, path);
	}
}

int symd_fetch_get(struct symd_fetch *f, enum symd_fetch_kind kind,
		   const char *build_id, const char *section, int *fd_out,
		   char **path_out, struct symd_fetch_info *info)
{
	struct symd_fetch_info scratch;
	char target[PATH_MAX];
	struct vlog v;
	struct stat st;
	uint64_t t0 = now_ns();
	char *path = NULL;
	const char *url;
	int rc, err, had = 0;

	if (!info)
		info = &scratch;
	memset(info, 0, sizeof(*info));
	if (fd_out)
		*fd_out = -1;
	if (path_out)
		*path_out = NULL;

	/* Nothing malformed reaches libdebuginfod, a URL or a path. */
	if (!f || kind < SYMD_FETCH_DEBUGINFO || kind > SYMD_FETCH_SOURCE) {
		snprintf(info->msg, sizeof(info->msg), "invalid request");
		err = -SYMD_FETCH_INVAL;
		goto out;
	}
	if (!valid_build_id(build_id)) {
		snprintf(info->msg, sizeof(info->msg), "invalid build ID");
		err = -SYMD_FETCH_INVAL;
		goto out;
	}
	if (kind == SYMD_FETCH_SECTION && !valid_section(section)) {
		snprintf(info->msg, sizeof(info->msg), "invalid section name");
		err = -SYMD_FETCH_INVAL;
		goto out;
	}
	if (kind == SYMD_FETCH_SOURCE && !valid_source(section)) {
		snprintf(info->msg, sizeof(info->msg), "invalid source path");
		err = -SYMD_FETCH_INVAL;
		goto out;
	}
	if (!g_enabled) {
		snprintf(info->msg, sizeof(info->msg),
			 "no upstream debuginfod server configured");
		err = -SYMD_FETCH_ABSENT;
		goto out;
	}
	if (target_path(target, sizeof(target), kind, build_id, section)) {
		info->err = -ENAMETOOLONG;
		snprintf(info->msg, sizeof(info->msg), "cache path too long");
		err = -SYMD_FETCH_FAILED;
		goto out;
	}
	/* A negative file of an earlier run would answer for 10 minutes. */
	drop_negative(target);
	if (ftruncate(f->vfd, 0) != 0) {
		info->err = -errno;
		snprintf(info->msg, sizeof(info->msg), "verbose log: %s",
			 strerror(errno));
		err = -SYMD_FETCH_FAILED;
		goto out;
	}
	f->stopped = STOP_NONE;
	f->deadline = f->call_ms ? t0 + f->call_ms * 1000000ull : 0;
	f->first_deadline = f->first_ms ? t0 + f->first_ms * 1000000ull : 0;
	f->target = target;
	f->since = time(NULL) - 1;	/* mtimes have whole-second grain */
	/*
	 * busy_tid before the cancelled check, cancelled before busy_tid
	 * in symd_fetch_cancel(): either we see the flag here or the
	 * canceller sees our thread and signals it.  A signal that lands
	 * before libdebuginfod's first poll() is lost; the flag then acts
	 * on the next progress call, within ~1 s.
	 */
	atomic_store(&f->busy_tid, gettid());
	if (atomic_load(&f->cancelled)) {
		atomic_store(&f->busy_tid, 0);
		snprintf(info->msg, sizeof(info->msg), "cancelled");
		err = -SYMD_FETCH_CANCELLED;
		goto out;
	}
	if (kind == SYMD_FETCH_SECTION)
		had = whole_files(target);
	arm_deadline(f);
	rc = query(f, kind, build_id, section, &path);
	disarm_deadline(f);
	f->target = NULL;
	atomic_store(&f->busy_tid, 0);
	read_log(f, &v);
	url = debuginfod_get_url(f->dc);
	if (url)
		snprintf(info->url, sizeof(info->url), "%s", url);

	if (kind == SYMD_FETCH_SECTION && v.queried > 1)
		drop_whole_files(target, had);
	if (rc < 0) {
		free(path);
		err = classify(f, rc, kind, &v, info);
		drop_negative(target);
		goto out;
	}
	if (fstat(rc, &st) != 0) {
		info->err = -errno;
		snprintf(info->msg, sizeof(info->msg), "fstat: %s",
			 strerror(errno));
		close(rc);
		free(path);
		err = -SYMD_FETCH_FAILED;
		goto out;
	}
	info->size = st.st_size;
	info->from_cache = !v.queried;
	info->fetched = v.queried ? info->size : 0;
	err = path ? check_file(kind, build_id, path, &v, info) :
		     -SYMD_FETCH_FAILED;
	if (err) {
		/* Never handed back, never left for the next query. */
		close(rc);
		if (path) {
			unlink(path);
			rmdir_parent(path);
		} else {
			snprintf(info->msg, sizeof(info->msg),
				 "libdebuginfod returned no path");
		}
		free(path);
		goto out;
	}
	if (fd_out)
		*fd_out = rc;
	else
		close(rc);
	if (path_out)
		*path_out = path;
	else
		free(path);
out:
	info->usec = (now_ns() - t0) / 1000;
	return err;
}

/*
 * A thread ID rather than a pthread_t: if the fetch ended meanwhile, the
 * signal reaches a live thread of ours (or, the ID reused, another one),
 * where the handler does nothing; pthread_kill() on a thread that has
 * exited is undefined.
 */
void symd_fetch_cancel(struct symd_fetch *f)
{
	pid_t tid;

	if (!f)
		return;
	atomic_store(&f->cancelled, 1);
	tid = atomic_load(&f->busy_tid);
	if (g_wake_sig && tid)
		tgkill(getpid(), tid, g_wake_sig);
}

void symd_fetch_set_deadline(struct symd_fetch *f, unsigned ms)
{
	if (f)
		f->call_ms = ms;
}

struct symd_fetch *symd_fetch_new(const struct symd_fetch_opts *opts)
{
	struct symd_fetch *f;
	int err;

	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->vfd = memfd_create("symd-fetch-log", MFD_CLOEXEC);
	if (f->vfd < 0) {
		err = errno;
		free(f);
		errno = err;
		return NULL;
	}
	/* Appends land at offset 0 again after each ftruncate(). */
	if (fcntl(f->vfd, F_SETFL, O_APPEND) != 0) {
		err = errno;
		goto fail;
	}
	f->dc = debuginfod_begin();
	if (!f->dc) {
		err = ENOMEM;
		goto fail;
	}
	debuginfod_set_user_data(f->dc, f);
	debuginfod_set_progressfn(f->dc, progress_cb);
	debuginfod_set_verbose_fd(f->dc, f->vfd);
	f->call_ms = opts ? opts->call_timeout_ms : 0;
	f->first_ms = opts ? opts->first_byte_ms : 0;
	return f;
fail:
	close(f->vfd);
	free(f);
	errno = err;
	return NULL;
}

void symd_fetch_free(struct symd_fetch *f)
{
	if (!f)
		return;
	debuginfod_end(f->dc);
	if (f->timer_tid)
		timer_delete(f->timer);
	close(f->vfd);
	free(f);
}

int symd_fetch_discard(const char *path)
{
	if (!path)
		return 0;
	if (unlink(path) != 0)
		return -errno;
	rmdir_parent(path);
	return 0;
}

const char *symd_fetch_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return "success";
	case SYMD_FETCH_ABSENT:
		return "no upstream has this build ID";
	case SYMD_FETCH_FAILED:
		return "fetch from upstream failed";
	case SYMD_FETCH_CANCELLED:
		return "fetch cancelled";
	case SYMD_FETCH_BADID:
		return "upstream served the wrong file";
	case SYMD_FETCH_INVAL:
		return "invalid build ID or section name";
	default:
		return "unknown fetch error";
	}
}

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		buf[i] = dir[i];
	}
	return 0;
}

static int write_config(const char *dir, const char *name, const char *val)
{
	char path[PATH_MAX];
	int fd, err = 0;
	size_t n = strlen(val);

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != (ssize_t)n)
		err = errno ? -errno : -EIO;
	if (close(fd) != 0 && !err)
		err = -errno;
	return err;
}

/* Unset every DEBUGINFOD_* variable, whatever libdebuginfod version reads. */
static int unset_inherited(void)
{
	extern char **environ;

	for (;;) {
		char **e = environ, *name;
		int err;

		while (e && *e && strncmp(*e, "DEBUGINFOD_", 11) != 0)
			e++;
		if (!e || !*e)
			return 0;
		name = strndup(*e, strcspn(*e, "="));
		if (!name)
			return -ENOMEM;
		err = unsetenv(name) ? -errno : 0;
		free(name);
		if (err)
			return err;
	}
}

static int set_num(const char *name, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", v);
	return setenv(name, buf, 1) ? -errno : 0;
}

int symd_fetch_global_init(const struct symd_fetch_opts *opts)
{
	struct sigaction sa;
	char real[PATH_MAX];
	int err;

	g_enabled = 0;
	g_wake_sig = 0;
	err = unset_inherited();
	if (err)
		return err;
	if (!opts || !opts->urls || !opts->urls[strspn(opts->urls, " \t")])
		return 0;
	if (!opts->cache_dir || !opts->cache_dir[0])
		return -EINVAL;
	if (opts->wake_signal) {
		if (opts->wake_signal < 1 || opts->wake_signal > SIGRTMAX ||
		    opts->wake_signal == SIGKILL ||
		    opts->wake_signal == SIGSTOP)
			return -EINVAL;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = wake_handler;
		/* poll() is interrupted even so; other calls restart. */
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(opts->wake_signal, &sa, NULL) != 0)
			return -errno;
	}
	err = mkdir_p(opts->cache_dir);
	if (err)
		return err;
	/* Absolute, so that the paths handed back survive a chdir(). */
	if (!realpath(opts->cache_dir, real))
		return -errno;
	/*
	 * Cleaning would unlink files and rmdir directories of a running
	 * fetch (0.188's fts walk races with mkdir + mkstemp); the daemon
	 * takes files out at once and clears the cache itself.
	 * cache_miss_s 0 makes negative files stale at once; they are also
	 * removed after each query.
	 */
	err = write_config(real, "cache_clean_interval_s", NEVER_S);
	if (!err)
		err = write_config(real, "max_unused_age_s", NEVER_S);
	if (!err)
		err = write_config(real, "cache_miss_s", "0");
	if (err)
		return err;
	if (setenv(DEBUGINFOD_URLS_ENV_VAR, opts->urls, 1) ||
	    setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, real, 1))
		return -errno;
	err = set_num(DEBUGINFOD_TIMEOUT_ENV_VAR,
		      opts->timeout_s ? opts->timeout_s : 30);
	if (!err)
		err = set_num(DEBUGINFOD_RETRY_LIMIT_ENV_VAR, opts->retries);
	if (!err && opts->max_time_s)
		err = set_num(DEBUGINFOD_MAXTIME_ENV_VAR, opts->max_time_s);
	if (!err && opts->max_size)
		err = set_num(DEBUGINFOD_MAXSIZE_ENV_VAR, opts->max_size);
	if (err)
		return err;
	snprintf(g_cache, sizeof(g_cache), "%s", real);
	g_wake_sig = opts->wake_signal;
	g_enabled = 1;
	return 0;
}
