/*
 * symd.h - the daemon's own modules and how they meet.
 *
 *   main.c     options, start-up, signals, shutdown
 *   api.c      the HTTP routes (on the loop thread)
 *   work.c     what is known of each build ID, and the worker threads
 *              that warm, fetch, convert and ingest off the loop
 *   metrics.c  counters and histograms, Prometheus text
 *   status.c   the status page, GET / and GET /v1/status (status.h)
 *   log.c      the log on stderr, written by a thread of its own (log.h)
 *   http.c     the HTTP/1.1 layer (http.h);  req.c  the JSON parser
 *   fetch.c    the debuginfod client (fetch.h)
 *   s3.c       the S3 client (s3.h)
 *   objstore.c the object store as the durable tier (below)
 *
 * The event loop thread answers every request.  It reads the store
 * (sym_store_lookup(): memory-speed reads of mapped LMDB pages) but never
 * builds a table, checks a checksum for the first time, or waits on the
 * network: work.c does those on worker threads and hands results back
 * through an event.  The daemon knows nothing of DWARF: tables are
 * libsym's business (sym.h).
 */
#ifndef SYMD_H
#define SYMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym.h"

struct event_base;
struct symd_s3;
struct symd_s3_config;
struct symd_s3_result;

/* The daemon's version (--version, GET /healthz): the release's, which
 * symd, sym and libsym share. */
#define SYMD_VERSION SYM_VERSION

/* ---------------------------------------------------------------- work */

/** What the daemon knows of a build ID (work.c). */
enum symd_state {
	SYMD_UNKNOWN = 0,	/* never asked, or forgotten */
	SYMD_PENDING,		/* a worker is on it */
	SYMD_READY,		/* the table is stored and verified */
	SYMD_MISSING,		/* no source has it */
	SYMD_FAILED,		/* fetch or conversion failed (see error) */
};

struct symd_status {
	enum symd_state state;
	unsigned retry_after_ms;	/* PENDING, FAILED: when to ask again */
	char error[512];		/* FAILED: why */
};

struct symd_work;

struct symd_work_opts {
	struct sym_store *store;
	const char *store_dir;
	/* Upstream debuginfod URLs (space separated); NULL: none. */
	const char *urls;
	unsigned cpu_workers;	/* conversions, checksums: 0 = cores - 1 */
	unsigned fetch_workers;	/* downloads: 0 = 4 */
	unsigned queue_max;	/* jobs waiting at most: 0 = 4096 */
	unsigned fetch_timeout_s;	/* 0 = 30 */
	/* symd_fetch_opts' deadlines of each fetch: connect and first
	 * byte, and the whole call (ms; 0 = none). */
	unsigned fetch_first_byte_ms, fetch_deadline_ms;
	unsigned ttl_failed;	/* seconds before a failed build ID is
				 * tried again; 0 = 60 */
	uint64_t max_store_size;	/* enforced after each conversion */
	/* Bytes of a build ID's uploaded sources at most (0: none). */
	uint64_t max_sources;
	/* The object store (--object-store); NULL: none.  Borrowed until
	 * symd_work_free().  Each worker gets a client of its own. */
	const struct symd_s3_config *s3;
	/* With s3: seconds between two checks that a READY table is still
	 * built from the bucket's files (J_REVALIDATE); 0 = 30. */
	unsigned revalidate_s;
	/* Addresses of a cold build ID answered by the lazy path before
	 * its full table is built, at most (--lazy-max); 0 = 10,000, and
	 * SYMD_LAZY_OFF for none. */
	unsigned lazy_max;
};

#define SYMD_LAZY_OFF ((unsigned)-1)
#define SYMD_LAZY_MAX_DEFAULT 10000

/** Called on the loop thread when a build ID waited on is settled. */
typedef void (*symd_wait_fn)(void *arg, const char *build_id);

/** Called on the loop thread when an upload was stored (status 0) or
 *  refused (an HTTP status and a reason). */
typedef void (*symd_ingest_fn)(void *arg, int http_status, const char *msg);

/** Called on the loop thread with the bucket's metadata of a build ID's
 *  files (symd_work_objstore_head()): @fs, or an HTTP status (502) and a
 *  reason. */
struct symd_objstore_files;
typedef void (*symd_meta_fn)(void *arg, int http_status,
			     const struct symd_objstore_files *fs,
			     const char *msg);

/** Called on the loop thread with a fetched file for the debuginfod
 *  routes: @path (status 200) or an HTTP status and a reason.  A
 *  @temporary file (a section) is the callee's to delete when served. */
typedef void (*symd_file_fn)(void *arg, int http_status, const char *path,
			     bool temporary, const char *msg);

/* Start the workers.  Loop thread; evthread_use_pthreads() done. */
int symd_work_new(struct event_base *base, const struct symd_work_opts *o,
		  struct symd_work **out);
/* Cancel fetches, let running conversions finish, join the threads.
 * Pending waiters are not called. */
void symd_work_free(struct symd_work *w);

/*
 * Loop thread.  What is known of @build_id; UNKNOWN starts a job (then
 * PENDING), unless the queues are full: -EBUSY (answer 503).
 */
int symd_work_status(struct symd_work *w, const char *build_id,
		     struct symd_status *st);
/* The same for a request of the client at @peer ("1.2.3.4:5678", as
 * symd_http_req_peer() gives it; the port is ignored).  The jobs a
 * client's requests start count against it: when the queues are full,
 * the client with the most jobs out gives up its newest queued one for a
 * client with fewer, so no client can fill the queue for the others.
 * NULL: the client that asked for @build_id last. */
int symd_work_status_from(struct symd_work *w, const char *build_id,
			  const char *peer, struct symd_status *st);
/*
 * The quick tables of a build ID whose conversion is under way (issue
 * 19's progressive answers; docs/http-api.md, "partial"): the worker
 * builds first its symbols alone (sym_module_table_symbols(), in
 * milliseconds), then, for the addresses requests asked before it got
 * there, a lazy table (sym_module_table_for()) whose answers to those
 * addresses are the full table's, then the full table from the same
 * module.  Each quick table reaches the loop thread as it is built, and
 * the build ID's waiters are called then too (the build ID may still be
 * PENDING: symd_work_quick() tells what there is).  Loop thread only.
 */
struct symd_quick {
	unsigned refs;			/* symd_work_quick(), _quick_put() */
	struct sym_table *symtab;	/* NULL: not built (yet) */
	struct sym_table *lazy;		/* NULL: not built (yet), or never */
	uint64_t *addrs;		/* what @lazy answers as the full
					 * table: sorted, unique */
	size_t naddrs;
};

/* The quick tables of @build_id, a reference the caller drops with
 * symd_work_quick_put(); NULL when it is not PENDING or none is built.
 * The tables in it do not change (@lazy may be set later, once, from
 * NULL; read it when needed). */
struct symd_quick *symd_work_quick(struct symd_work *w, const char *build_id);
void symd_work_quick_put(struct symd_quick *q);
/* Whether @q->lazy answers each of @addrs[@n] as the full table. */
bool symd_quick_covers(const struct symd_quick *q, const uint64_t *addrs,
		       size_t n);
/* A request for @build_id (PENDING) wants @addrs[@n]: the conversion
 * answers them with a lazy table when it gets there before its lazy step
 * (once per conversion, for at most the work options' lazy_max
 * addresses in all; more, and it builds the full table alone). */
void symd_work_want(struct symd_work *w, const char *build_id,
		    const uint64_t *addrs, size_t n);

/* Call @fn once @build_id is no longer PENDING (@build_id must have been
 * passed to symd_work_status() just before).  Returns a handle that the
 * caller frees with symd_work_unwait(), whether @fn was called or not
 * (after the call only the memory is left); NULL on ENOMEM. */
struct symd_waiter *symd_work_wait(struct symd_work *w, const char *build_id,
				   symd_wait_fn fn, void *arg);
void symd_work_unwait(struct symd_work *w, struct symd_waiter *wt);
/* symd_work_unwait() for a waiter whose client went away: when nobody
 * else waits for the build ID and its job is still queued (not running),
 * the job is dropped (the next request starts it again). */
void symd_work_abandon(struct symd_work *w, struct symd_waiter *wt);
/* The store no longer answers for @build_id (removed, stale, corrupt):
 * forget what was known, so the next request starts over. */
void symd_work_forget(struct symd_work *w, const char *build_id);
/* An uploaded file at @path (inside the store directory) for @build_id,
 * kind SYM_STORE_DEBUGINFO or _EXECUTABLE: check its build ID, take it
 * into the store, call @fn, then convert it in the background.  The job
 * owns @path from here on (it is moved or unlinked).  Returns the job,
 * or NULL with errno (EBUSY: queues full). */
struct symd_job *symd_work_ingest(struct symd_work *w, const char *build_id,
				  int kind, const char *path,
				  symd_ingest_fn fn, void *arg);
/* The same with the object store's upload metadata: @uploader is
 * "name=value\n" lines (s3.h; sym-uploader, sym-forwarded-for,
 * sym-user-agent; copied, NULL: none), to which the worker adds
 * sym-quality, sym-uploaded and sym-gen.  Unless @force, an upload that
 * would not improve the bucket's files (their sym-quality) is refused
 * with 409 there, the bucket's quality in @fn's message's
 * "X-Sym-Quality: " prefix-free form: see symd_work_refused_quality(). */
struct symd_job *symd_work_ingest_meta(struct symd_work *w,
				       const char *build_id, int kind,
				       const char *path, const char *uploader,
				       bool force, symd_ingest_fn fn,
				       void *arg);
/* In @fn of an ingest refused with 409: the stored quality's name (for
 * X-Sym-Quality), or NULL.  @job: the job symd_work_ingest_meta()
 * returned; valid only inside @fn. */
const char *symd_work_refused_quality(const struct symd_job *job);
/* With an object store: HEAD the bucket's file objects of @build_id on a
 * fetch thread, then call @fn with what they say.  NULL with errno
 * (ENOENT: no object store; EBUSY; ENOMEM). */
struct symd_job *symd_work_objstore_head(struct symd_work *w,
					 const char *build_id,
					 symd_meta_fn fn, void *arg);
/* A DELETE of @build_id: sym_store_remove() on the io thread (its
 * unlinks and sync never stall the loop), in order with the uploads
 * queued before it; forget what was known, then call @fn with 0 (gone),
 * 404 or 500.  Returns the job, or NULL with errno (EBUSY: queues
 * full). */
struct symd_job *symd_work_remove(struct symd_work *w, const char *build_id,
				  symd_ingest_fn fn, void *arg);
/* An uploaded source file at @path (inside the store directory) of
 * @build_id, named @src (normalized): on the io thread,
 * sym_store_put_source() checks @src against the line tables of the
 * build ID's debug file and copies it in, bounded by max_sources; then
 * @fn gets 0, 400, 404 (no debug file), 413, 422 (not named) or 500.
 * The job owns @path (it is unlinked).  NULL with errno (EBUSY). */
struct symd_job *symd_work_source(struct symd_work *w, const char *build_id,
				  const char *src, const char *path,
				  symd_ingest_fn fn, void *arg);
/* A file the store lacks, for the debuginfod routes: fetch it from the
 * upstreams.  kind: SYMD_FETCH_* (fetch.h); @section for sections.
 * Returns the job, or NULL with errno (ENOENT: no upstream; EBUSY). */
struct symd_job *symd_work_fetch_file(struct symd_work *w,
				      const char *build_id, int kind,
				      const char *section, symd_file_fn fn,
				      void *arg);
/* The caller of a job went away: its callback will not be called. */
void symd_work_detach(struct symd_job *job);
/* Loop thread, now and then: write access times, clear stale LMDB
 * readers and enforce max_store_size, on a worker (sym_store_maintain()).
 * A no-op while the previous one is still out. */
void symd_work_maintain(struct symd_work *w);
/* Whether fetching from upstreams is configured. */
bool symd_work_can_fetch(const struct symd_work *w);
/* The options in force, zeros replaced by their defaults (for the
 * start-up log line); borrowed, valid until symd_work_free(w). */
const struct symd_work_opts *symd_work_options(const struct symd_work *w);
/* Jobs queued and running, for /healthz and /metrics. */
void symd_work_counts(struct symd_work *w, unsigned *queued,
		      unsigned *running);

/* The daemon's queues and setup, for the status page (status.c). */
struct symd_work_queues {
	unsigned cpu, fetch, io;	/* jobs queued per pool */
	unsigned running;		/* jobs on a worker now */
	unsigned max;			/* queued at most, all pools */
	unsigned cpu_workers, fetch_workers;
	unsigned known;			/* build IDs in the map */
	const char *urls;		/* upstreams, space separated; NULL:
					 * none.  Borrowed from the opts */
	uint64_t max_store_size;	/* 0: no bound */
};
/* Loop thread (@known is the loop's; the rest any thread could read). */
void symd_work_queues(struct symd_work *w, struct symd_work_queues *q);

/* Called by symd_work_each() for each build ID the daemon knows (not
 * UNKNOWN): @error is "" or why it is MISSING or FAILED (borrowed for
 * the call); @age_s is the time since @state last changed. */
typedef void (*symd_entry_fn)(void *ctx, const char *build_id,
			      enum symd_state state, const char *error,
			      double age_s);
/* Loop thread.  Visits the map: at most 65,536 entries, in no order. */
void symd_work_each(struct symd_work *w, symd_entry_fn fn, void *ctx);

/* ------------------------------------------------------------ objstore */

/*
 * The object store as the durable tier (objstore.c, docs/object-store.md).
 * Workers only: each call is network and file I/O.  The local store is a
 * cache in front of it: a miss reads the table through (converting
 * nothing), else the debug file or executable (then converts and writes
 * the table back); an upload is stored in the bucket before it is
 * acknowledged.
 */
enum symd_objstore_kind {
	SYMD_OBJ_DEBUGINFO = 1,	/* debuginfo/<id> */
	SYMD_OBJ_EXECUTABLE = 2,	/* executable/<id> */
	SYMD_OBJ_TABLE = 3,	/* tables/<id>/c<converter version> */
	SYMD_OBJ_KALLSYMS = 4,	/* kallsyms/<id>: a kallsyms snapshot */
};
#define SYMD_OBJ_NKINDS 5

/* The key of an object (without the prefix).  0, -EINVAL, -ENAMETOOLONG. */
int symd_objstore_key(char *buf, size_t len, const char *build_id,
		      enum symd_objstore_kind kind);
/*
 * Generations.  Each file object carries, as user metadata (s3.h,
 * symd_s3_put_meta()): sym-gen (symd_objstore_new_gen(), new for every
 * PUT), sym-quality (sym_quality_name()), sym-uploaded (UTC,
 * "YYYY-MM-DDTHH:MM:SSZ") and sym-uploader (docs/object-store.md,
 * "Upload metadata").  A build ID's generation is its two files'
 * (symd_objstore_build_gen()); a table object carries the generation of
 * the files it was built from, so a table built from replaced files is
 * never imported, and a node holding one finds out on revalidation.
 */
#define SYMD_OBJ_GEN_MAX 80
struct symd_objstore_file {
	bool present;
	int quality;		/* enum sym_quality; -1: absent or unknown */
	uint64_t size;
	char gen[32], uploader[200], forwarded_for[208], uploaded[32];
};
struct symd_objstore_files {
	struct symd_objstore_file dbg, exe;
	int quality;		/* the better of the two; -1: none */
	char gen[SYMD_OBJ_GEN_MAX];	/* the build ID's */
};
/* A new file generation into @out (32 bytes are enough). */
void symd_objstore_new_gen(char *out, size_t len);
/* The build ID's generation from its files' ("" or NULL: absent). */
void symd_objstore_build_gen(char *out, size_t len, const char *dbg_gen,
			     const char *exe_gen);
/* HEAD both file objects of @build_id into @fs.  0 (absent ones are
 * !present), -SYMD_S3_* when the store did not answer. */
int symd_objstore_head_files(struct symd_s3 *s3, const char *build_id,
			     struct symd_objstore_files *fs,
			     struct symd_s3_result *r);
/* Download the table and sym_store_import() it, if its sym-gen is
 * @want_gen (NULL: any).  0, -SYMD_S3_* (s3.h; NOTFOUND: no table of
 * this converter), -SYM_E_STALE (built from other files, or the local
 * converter differs: nothing stored), -SYM_E_BADTABLE (it failed its
 * checks: nothing stored, counted), -errno. */
int symd_objstore_get_table(struct symd_s3 *s3, struct sym_store *st,
			    const char *store_dir, const char *build_id,
			    const char *want_gen, struct symd_s3_result *r);
/* The store's file kind of a file object (debuginfo, executable,
 * kallsyms), and back; 0 for another. */
int symd_objstore_file_kind(enum symd_objstore_kind kind);
enum symd_objstore_kind symd_objstore_obj_kind(int file_kind);
/* Download a debug file, executable or snapshot into the store's file
 * area.
 * 0, -SYMD_S3_*, the errors of sym_store_take_file(), -errno. */
int symd_objstore_get_file(struct symd_s3 *s3, struct sym_store *st,
			   const char *store_dir, const char *build_id,
			   enum symd_objstore_kind kind,
			   struct symd_s3_result *r);
/* Upload the file at @path as @kind of @build_id, with @meta (NULL:
 * none; s3.h's "name=value\n" lines).  0, -SYMD_S3_*, -errno. */
int symd_objstore_put_file(struct symd_s3 *s3, const char *build_id,
			   enum symd_objstore_kind kind, const char *path,
			   const char *meta, struct symd_s3_result *r);
/* sym_store_export() the stored table and upload it, marked as built
 * from files of generation @gen (NULL or "": unknown).  0, -SYMD_S3_*,
 * the errors of sym_store_export(), -errno. */
int symd_objstore_put_table(struct symd_s3 *s3, struct sym_store *st,
			    const char *store_dir, const char *build_id,
			    const char *gen, struct symd_s3_result *r);
/* Delete the build ID's objects (a DELETE of it).  The number of objects
 * there were (0 to 4), or -SYMD_S3_* (@r says why; the rest are left). */
int symd_objstore_remove(struct symd_s3 *s3, const char *build_id,
			 struct symd_s3_result *r);

/* ------------------------------------------------------------- metrics */

enum symd_route {
	SYMD_R_SYMBOLIZE,
	SYMD_R_DEBUGINFO,	/* HEAD/PUT/DELETE /v1/debuginfo|executable */
	SYMD_R_BUILDID,		/* GET /buildid/... (debuginfod protocol) */
	SYMD_R_METRICS,
	SYMD_R_HEALTHZ,
	SYMD_R_OTHER,
	SYMD_R_MAX
};

void symd_metrics_request(enum symd_route r, int status, uint64_t usec);
void symd_metrics_frames(uint64_t addresses, uint64_t frames);
void symd_metrics_cache(bool hit);
/* @err: symd_fetch_get()'s result. */
void symd_metrics_fetch(int err, uint64_t usec, uint64_t bytes);
/* @err: sym_store_convert()'s result; @badconv: it was the input's fault. */
void symd_metrics_convert(int err, bool badconv, uint64_t usec);
/* A quick table of a cold build ID was built in @usec: the symbols alone,
 * or (@lazy) the units of the addresses asked. */
void symd_metrics_quick_table(bool lazy, uint64_t usec);
/* A module was answered from a quick table: "partial" from the symbols,
 * or (@lazy) "ok" from the lazy table. */
void symd_metrics_quick_answer(bool lazy);
void symd_metrics_upload(uint64_t bytes);
/* An object store transfer (@put or get) of @kind; @err: -SYMD_S3_*. */
void symd_metrics_objstore(enum symd_objstore_kind kind, bool put, int err,
			   uint64_t bytes);
/* A downloaded table failed its checks. */
void symd_metrics_objstore_corrupt(void);
/* The loop's lateness probe (main.c): a timer ran @usec after it was
 * due, @own_usec of them not waiting for a CPU. */
void symd_metrics_lateness(uint64_t usec, uint64_t own_usec);
/* Count the store's tables, bytes and negative entries for /metrics: a
 * walk over the whole store, so on a worker (work.c: at start-up, after
 * each conversion and with each maintenance pass), never on a scrape. */
void symd_metrics_store(struct sym_store *st);
/* What the last symd_metrics_store() counted: the tables' bytes, the
 * tables and the negative entries (indexed by enum sym_store_negative;
 * [0] unused).  Any thread. */
void symd_metrics_store_figs(uint64_t *bytes, uint64_t *tables,
			     uint64_t negative[4]);
/* The HTTP side's bounded resources, as gauges (api.c sets them before
 * each render): open connections, buffered request bytes, answer bytes
 * built or unsent. */
void symd_metrics_http(uint64_t conns, uint64_t buffered, uint64_t answers);
/* Append the Prometheus text exposition to @out. */
struct symi_buf;
int symd_metrics_render(struct symi_buf *out, struct symd_work *w);

#endif /* SYMD_H */
