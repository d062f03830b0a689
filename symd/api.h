/*
 * api.h - the HTTP routes of symd (api.c), over the HTTP layer (http.h),
 * the workers (symd.h) and the store (sym.h).  docs/http-api.md is the
 * user's manual of the routes.
 */
#ifndef SYMD_API_H
#define SYMD_API_H

#include <stdbool.h>
#include <stdint.h>

#include "http.h"
#include "req.h"

struct event_base;
struct sym_store;
struct symd_work;
struct symd_api;

/* 100,000 real addresses of a C++ program (330,000 frames, inlines
 * counted) make a 136 MB answer: the default fits them. */
#define SYMD_API_DEFAULT_MAX_RESPONSE	((size_t)256 << 20)
#define SYMD_API_DEFAULT_MAX_ANSWERS	((size_t)512 << 20)
#define SYMD_API_DEFAULT_FETCH_WAIT_MS	30000u

struct symd_api_opts {
	struct event_base *base;	/* the loop */
	struct sym_store *store;	/* borrowed */
	const char *store_dir;		/* uploads land in DIR/incoming */
	struct symd_work *work;		/* borrowed */
	const char *token;		/* NULL: PUT and DELETE refused */
	struct symd_req_limits limits;	/* of POST /v1/symbolize */
	size_t max_body;		/* symbolize request bytes: 413 */
	/* A zero limit below takes its SYMD_API_DEFAULT_*. */
	size_t max_response;		/* symbolize answer bytes: 413 */
	size_t max_answers;		/* bytes of all answers being built
					 * or not yet sent: 503 over it */
	uint64_t max_upload;		/* upload bytes, 0: no bound */
	uint64_t max_source;		/* a source upload's bytes, 0: none */
	unsigned fetch_wait_ms;		/* a federation GET waits this
					 * long for its fetch, then 503 */
	bool log;			/* an access-log line per request
					 * (log.h) */
	struct symd_http_opts http;	/* limits; callbacks are ours */
};

/* Create the routes and their HTTP server (not listening yet: use
 * symd_http_listen(symd_api_http(api), ...)).  Loop thread. */
int symd_api_new(const struct symd_api_opts *o, struct symd_api **out);
struct symd_http *symd_api_http(struct symd_api *api);
/* Free the server (requests in flight are aborted).  NULL-safe. */
void symd_api_free(struct symd_api *api);
/*
 * Draining: while @on, GET /healthz answers 503 {"status":"draining"}
 * (with Retry-After) and every other route answers as before, so a
 * proxy's health check moves new traffic away from a node that still
 * finishes what it is sent (docs/cluster.md).  Loop thread.
 */
void symd_api_drain(struct symd_api *api, bool on);
bool symd_api_draining(const struct symd_api *api);

#endif /* SYMD_API_H */
