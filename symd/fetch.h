/*
 * fetch.h - the daemon's debuginfod client: fetch debug files, executables
 * and sections of a build ID from upstream debuginfod servers, through
 * libdebuginfod (elfutils 0.188).
 *
 * One struct symd_fetch per worker thread: a libdebuginfod handle is
 * single-threaded.  The event loop never calls symd_fetch_get(); workers
 * do, and the daemon makes sure that one build ID is fetched by one
 * worker at a time.
 *
 *	symd_fetch_global_init(&opts);		once, before any thread
 *	struct symd_fetch *f = symd_fetch_new(&opts);	per worker
 *	struct symd_fetch_info info;
 *	int fd;
 *	char *path;
 *	err = symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL, &fd, &path,
 *			     &info);
 *	if (!err) {
 *		sym_store_put_file(st, id, SYM_STORE_DEBUGINFO, path);
 *		close(fd);
 *		symd_fetch_discard(path);	the store has its copy
 *		free(path);
 *	} else if (err == -SYMD_FETCH_ABSENT) {
 *		sym_store_put_negative(st, id, SYM_STORE_ABSENT, info.msg);
 *	} else if (err != -SYMD_FETCH_CANCELLED) {
 *		sym_store_put_negative(st, id, SYM_STORE_FAILED, info.msg);
 *	}
 *	symd_fetch_free(f);
 *
 * The cache.  libdebuginfod writes each download into its cache
 * directory (opts.cache_dir, laid out CACHE/<build-id>/debuginfo,
 * .../executable, .../section-<name>) and returns that file.  The daemon
 * keeps the directory inside its store (e.g. STORE/debuginfod-cache) and
 * takes each file out at once: rename() it into the store's file area
 * (same file system), or copy it and call symd_fetch_discard().  The
 * cache only holds files in transit, so no debug file is kept twice.
 * libdebuginfod's own cleaning is switched off (it could delete a file
 * or a directory of a running fetch); what is left after a crash (a
 * returned file not yet taken, a "<kind>.XXXXXX" partial download) is
 * the daemon's to sweep at startup.
 *
 * Why results are not simply libdebuginfod's (measured on 0.188):
 *  - every HTTP error (500 as well as 404), an empty reply and a fetch
 *    cancelled through the progress callback all return -ENOENT, and
 *    each leaves an empty "negative" file in the cache that makes the
 *    next query of that build ID answer -ENOENT for 10 minutes without
 *    asking any server.  symd_fetch_get() reads libdebuginfod's verbose
 *    log (debuginfod_set_verbose_fd()) to see each server's answer:
 *    only "every server said 404" is SYMD_FETCH_ABSENT.  It removes the
 *    negative files: the store keeps its own negative entries and TTLs.
 *  - the progress callback runs once per turn of libdebuginfod's loop,
 *    which sleeps up to 1 s in poll() while no byte arrives, so a
 *    cancellation or a deadline takes effect within about 1 s; with
 *    opts.wake_signal, a signal to the fetching thread interrupts that
 *    sleep and both take effect within milliseconds.
 *  - DEBUGINFOD_TIMEOUT (opts.timeout_s) is not a connect timeout: a
 *    transfer that gets less than 100 KiB/s for that many seconds is
 *    aborted, and that includes the wait for the first byte.  curl's
 *    connect timeout (300 s) is not settable through libdebuginfod;
 *    opts.first_byte_ms bounds connect and first byte together, and
 *    opts.call_timeout_ms the whole call.
 *  - libdebuginfod asks every upstream at once and keeps the first that
 *    sends the file, so each deadline bounds every upstream: one that
 *    accepts and never answers costs at most first_byte_ms.
 *  - for a section, a server without section support (503) makes
 *    libdebuginfod download the whole debuginfo or executable and cut
 *    the section out; that whole file is deleted afterwards.
 *
 * Caveats:
 *  - libdebuginfod takes its settings from the environment only, and
 *    reads it on every query.  symd_fetch_global_init() sets it; nothing
 *    may call setenv(), putenv() or unsetenv() while a fetch may run
 *    (glibc's getenv() is not safe against them).
 *  - A struct symd_fetch is used by one thread at a time, except
 *    symd_fetch_cancel(), which any thread may call until
 *    symd_fetch_free().
 *  - Two fetches of one build ID at once (even of different kinds)
 *    share its cache directory; one may then fail transiently.
 *  - With opts.wake_signal, that signal gets a no-op handler
 *    (SA_RESTART) for the whole process, and worker threads must not
 *    block it.
 */
#ifndef SYMD_FETCH_H
#define SYMD_FETCH_H

#include <stddef.h>
#include <stdint.h>

/** A client for one worker thread.  Opaque. */
struct symd_fetch;

/** What to fetch: debuginfod's three kinds of build-ID queries. */
enum symd_fetch_kind {
	/** The separate debug file (/buildid/<id>/debuginfo). */
	SYMD_FETCH_DEBUGINFO = 1,
	/** The executable or shared object (/buildid/<id>/executable). */
	SYMD_FETCH_EXECUTABLE = 2,
	/** One section's bytes (/buildid/<id>/section/<name>). */
	SYMD_FETCH_SECTION = 3,
	/** A source file (/buildid/<id>/source/<path>); @section is its
	 *  absolute path. */
	SYMD_FETCH_SOURCE = 4,
};

/**
 * Errors of symd_fetch_get(), returned negated.  Each maps onto what the
 * store remembers: ABSENT a long negative entry; FAILED and BADID a short
 * backoff (another upstream, or a fixed one, may have the right file).
 */
enum symd_fetch_error {
	/** Every upstream answered 404, or no upstream is configured. */
	SYMD_FETCH_ABSENT = 1,
	/** Transient: connection refused or reset, timeout, DNS, an HTTP
	 *  error other than 404, an empty reply, a file over max_size,
	 *  the per-call deadline, a local error.  See info->err, ->msg. */
	SYMD_FETCH_FAILED,
	/** symd_fetch_cancel() was called. */
	SYMD_FETCH_CANCELLED,
	/** The fetched file is not the one asked for (another GNU build
	 *  ID, no build ID, not ELF, or a section empty or not of the
	 *  size announced).  It was deleted. */
	SYMD_FETCH_BADID,
	/** The build ID, the section name or the kind is malformed;
	 *  nothing was asked of any server. */
	SYMD_FETCH_INVAL,
};

/**
 * Options; zero fields mean the defaults.  symd_fetch_global_init() reads
 * all but call_timeout_ms and first_byte_ms; symd_fetch_new() reads only
 * those two.
 */
struct symd_fetch_opts {
	/** Upstream URLs separated by spaces, as DEBUGINFOD_URLS; NULL or
	 *  blank disables fetching (every get is SYMD_FETCH_ABSENT, with
	 *  no network). */
	const char *urls;
	/** libdebuginfod's cache directory, created (mode 0700) with its
	 *  parents; required with @urls.  Files only pass through it. */
	const char *cache_dir;
	/** DEBUGINFOD_TIMEOUT: seconds below 100 KiB/s before a transfer,
	 *  or the wait for its first byte, is aborted; 0 for 30. */
	unsigned timeout_s;
	/** DEBUGINFOD_MAXTIME: bound on one query in whole seconds; 0 for
	 *  none. */
	unsigned max_time_s;
	/** DEBUGINFOD_MAXSIZE: larger files are refused (FAILED, -EFBIG);
	 *  0 for no bound. */
	uint64_t max_size;
	/** DEBUGINFOD_RETRY_LIMIT: extra attempts after a failure other
	 *  than a 404; 0 for none (the store's backoff retries later). */
	unsigned retries;
	/** A signal (e.g. SIGURG) used to wake a fetching thread for
	 *  cancellation and deadlines; 0 for none (they then take up to
	 *  ~1 s). */
	int wake_signal;
	/** symd_fetch_new(): the deadline of each symd_fetch_get() in
	 *  milliseconds, past which it fails (FAILED, -ETIME); 0 for
	 *  none.  See symd_fetch_set_deadline(). */
	unsigned call_timeout_ms;
	/** symd_fetch_new(): milliseconds from the start of each
	 *  symd_fetch_get() until the first byte of the file, connecting
	 *  included; past it the call fails (FAILED, -ETIME, "no upstream
	 *  sent a byte within N ms"), within ~1 s; 0 for none.  A 404 or an
	 *  error answer ends the call sooner as usual. */
	unsigned first_byte_ms;
};

/** What one symd_fetch_get() did, for logs, metrics and the store. */
struct symd_fetch_info {
	/** -errno behind SYMD_FETCH_FAILED (-ECONNREFUSED, -ETIME, -EFBIG,
	 *  -EIO for an HTTP error, -EPROTO for an empty reply, ...), else
	 *  libdebuginfod's raw result; 0 on success. */
	int err;
	/** An HTTP error status an upstream answered (500, 404, ...), the
	 *  first other than 404 if any; 0 if none. */
	int http_status;
	/** 1 when the file was already in the cache directory (no
	 *  transfer). */
	int from_cache;
	/** Size of the file handed back, in bytes. */
	uint64_t size;
	/** Bytes written to the cache from the network (0 from the
	 *  cache). */
	uint64_t fetched;
	/** Wall time of the call in microseconds. */
	uint64_t usec;
	/** The URL the file came from, or "". */
	char url[512];
	/** On failure, the upstream (its base URL) whose failure @msg
	 *  names, the first other than a 404; "" when none is known (a
	 *  deadline, a local error). */
	char upstream[200];
	/** One line for logs and the JSON "error" field: why it failed
	 *  (e.g. "http://h:8002: HTTP 500"); "" on success. */
	char msg[256];
};

/**
 * symd_fetch_global_init() - set libdebuginfod's environment from @opts.
 * @param opts  NULL disables fetching
 * @return 0, -EINVAL (@urls without @cache_dir, or a bad wake_signal),
 *         -errno (creating the cache directory or its config files)
 * Every DEBUGINFOD_* variable is unset first, then DEBUGINFOD_URLS,
 * _CACHE_PATH, _TIMEOUT, _RETRY_LIMIT and (when non-zero) _MAXTIME and
 * _MAXSIZE are set, so nothing inherited (DEBUGINFOD_PROGRESS,
 * _VERBOSE, _HEADERS_FILE, a stray URL list) changes what the daemon
 * does; child processes inherit the result.  Read a default such as
 * $DEBUGINFOD_URLS before calling this.  The cache's config files are
 * written so that libdebuginfod never cleans the cache.
 * Thread-safety: none.  Call it at startup before any thread exists; it
 * may be called again while no fetch runs (the tests do).
 */
int symd_fetch_global_init(const struct symd_fetch_opts *opts);

/**
 * symd_fetch_new() - a client for one worker thread.
 * @param opts  NULL for the defaults; only call_timeout_ms and
 *              first_byte_ms are read
 * @return caller owns, free with symd_fetch_free(); NULL with errno set
 *         (ENOMEM, or memfd_create()'s error for the verbose log)
 */
struct symd_fetch *symd_fetch_new(const struct symd_fetch_opts *opts);

/**
 * symd_fetch_free() - end the client.  NULL-safe.  No symd_fetch_get()
 * or symd_fetch_cancel() on @f may run or follow.
 */
void symd_fetch_free(struct symd_fetch *f);

/**
 * symd_fetch_get() - fetch one file of @build_id from the upstreams.
 * @param kind        enum symd_fetch_kind
 * @param build_id    lowercase hex, even length, 2 to 128 digits
 * @param section     SYMD_FETCH_SECTION: 1 to 128 of [A-Za-z0-9._-], not
 *                    only dots; SYMD_FETCH_SOURCE: the source's absolute
 *                    path, printable, under PATH_MAX bytes; else ignored
 * @param[out] fd_out    read-only descriptor of the file, caller closes;
 *                       -1 on error; may be NULL
 * @param[out] path_out  the file in the cache directory (absolute),
 *                       caller frees; NULL on error; may be NULL
 * @param[out] info      may be NULL; filled on success and on error
 * @return 0, -SYMD_FETCH_ABSENT, -SYMD_FETCH_FAILED,
 *         -SYMD_FETCH_CANCELLED, -SYMD_FETCH_BADID, -SYMD_FETCH_INVAL
 * The GNU build ID of a DEBUGINFO or EXECUTABLE file must equal
 * @build_id (sym_file_build_id()); a section must be non-empty and of
 * the size announced in X-DEBUGINFOD-SIZE.  A file that fails is
 * deleted, never returned.  A file already in the cache is returned
 * without a transfer (info->from_cache), checked the same way.
 * Thread-safety: one call at a time per @f; see the caveats.
 */
int symd_fetch_get(struct symd_fetch *f, enum symd_fetch_kind kind,
		   const char *build_id, const char *section, int *fd_out,
		   char **path_out, struct symd_fetch_info *info);

/**
 * symd_fetch_cancel() - make the running symd_fetch_get() of @f, and all
 * later ones, return -SYMD_FETCH_CANCELLED.  Sticky: it is meant for
 * shutdown.  Takes effect within ~1 s, or milliseconds with a wake
 * signal.  NULL-safe.
 * Thread-safety: any thread, any time until symd_fetch_free(f); not
 * from a signal handler.
 */
void symd_fetch_cancel(struct symd_fetch *f);

/**
 * symd_fetch_set_deadline() - bound each following symd_fetch_get() of
 * @f to @ms milliseconds (0: no bound but opts.max_time_s).  Past it the
 * call fails with -SYMD_FETCH_FAILED, info->err -ETIME: within ~1 s, or
 * milliseconds with a wake signal.  NULL-safe.
 */
void symd_fetch_set_deadline(struct symd_fetch *f, unsigned ms);

/**
 * symd_fetch_discard() - delete a file that symd_fetch_get() returned,
 * and its build-ID directory in the cache if that is now empty; call it
 * once the store has its copy.  NULL-safe.
 * @return 0, -errno of unlink()
 */
int symd_fetch_discard(const char *path);

/**
 * symd_fetch_strerror() - a constant description of an error of
 * symd_fetch_get() (either sign), e.g. "no upstream has this build ID";
 * info->msg has the details.
 */
const char *symd_fetch_strerror(int err);

#endif /* SYMD_FETCH_H */
