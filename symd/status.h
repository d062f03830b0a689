/*
 * status.h - the status page: GET / (one HTML page, symd/status.html,
 * with no external assets) and its data, GET /v1/status (JSON; the page
 * reads it, and so do tests).  docs/http-api.md describes both.
 *
 * What the page shows lives in three places, and this module reads each
 * through its owner's API, never a store handle:
 *   - the store's size and entries: the figures the workers count for
 *     /metrics (symd_metrics_store_figs()), the limit, and its first
 *     entries (sym_store_list());
 *   - what the daemon knows of each build ID, and its queues: work.c
 *     (symd_work_each(), symd_work_queues());
 *   - the last requests and the upstreams' recent failures: kept here,
 *     in two bounded rings that api.c and work.c feed with one call each.
 *
 * Caveats
 * - Threads.  symd_status_fetch() may be called from any thread (the
 *   fetch workers); the rest only on the loop thread.  The rings are
 *   file-level (one daemon per process) and guarded by one mutex.
 * - Nothing here trusts a string: paths, build IDs and messages come
 *   from clients and upstreams.  The JSON is valid whatever their bytes
 *   (symd_json_add_str()), and the page puts every string into the
 *   document as text (textContent), never as markup.
 */
#ifndef SYMD_STATUS_H
#define SYMD_STATUS_H

#include <stddef.h>
#include <stdint.h>

struct symi_buf;
struct symd_work;
struct symd_fetch_info;
struct sym_store;

/* The rings' and lists' bounds. */
#define SYMD_STATUS_REQUESTS	50	/* last requests kept */
#define SYMD_STATUS_FAILURES	20	/* last upstream failures kept */
#define SYMD_STATUS_PER_STATE	100	/* build IDs listed per state */
/* Bytes of a request's path kept (the rest is cut, "..." marks it). */
#define SYMD_STATUS_PATH_MAX	256

/**
 * symd_status_request() - note a finished request in the ring of the
 * last SYMD_STATUS_REQUESTS (api.c, on_done()); a GET /v1/status
 * answered 200 is left out (the page polls it).
 * @param method, path, peer  as the HTTP layer's accessors give them;
 *                            copied (bounded), may be ""
 * @param status              the reply's status, 0 for none
 * @param usec                from the first byte to the reply's end
 * Loop thread.
 */
void symd_status_request(const char *method, const char *path,
			 const char *peer, int status, uint64_t usec);

/**
 * symd_status_fetch() - note the result of a symd_fetch_get() (work.c):
 * a failure (-SYMD_FETCH_FAILED: an upstream errored, timed out or sent
 * a wrong file) goes into the ring of the last SYMD_STATUS_FAILURES, with
 * @build_id and info->msg; other results are ignored (a 404 everywhere
 * is an answer, not a failure).  Any thread.
 */
void symd_status_fetch(int err, const char *build_id,
		       const struct symd_fetch_info *info);

/**
 * symd_status_json() - append the JSON of GET /v1/status to @b.
 * @param w   the daemon's work (its map, queues and upstreams)
 * @param st  the store, for its first SYMD_STATUS_PER_STATE entries in
 *            build-ID order (sym_store_list(), stopped there); NULL: none
 * @return 0, -ENOMEM, -E2BIG (@b's cap)
 * Loop thread: it walks the daemon's map of build IDs (at most 65,536
 * entries; a few milliseconds at worst).
 */
int symd_status_json(struct symi_buf *b, struct symd_work *w,
		     struct sym_store *st);

/** symd_status_page() - the page's HTML (static; @len: its bytes). */
const char *symd_status_page(size_t *len);

#endif /* SYMD_STATUS_H */
