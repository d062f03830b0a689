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

struct symd_api_opts {
	struct event_base *base;	/* the loop */
	struct sym_store *store;	/* borrowed */
	const char *store_dir;		/* uploads land in DIR/incoming */
	struct symd_work *work;		/* borrowed */
	const char *token;		/* NULL: PUT and DELETE refused */
	struct symd_req_limits limits;	/* of POST /v1/symbolize */
	size_t max_body;		/* symbolize request bytes: 413 */
	size_t max_response;		/* symbolize response bytes: 413;
					 * 0: SYMD_REPLY_MAX */
	uint64_t max_upload;		/* upload bytes, 0: no bound */
	bool log;			/* one line per request on stderr */
	struct symd_http_opts http;	/* limits; callbacks are ours */
};

/* Create the routes and their HTTP server (not listening yet: use
 * symd_http_listen(symd_api_http(api), ...)).  Loop thread. */
int symd_api_new(const struct symd_api_opts *o, struct symd_api **out);
struct symd_http *symd_api_http(struct symd_api *api);
/* Free the server (requests in flight are aborted).  NULL-safe. */
void symd_api_free(struct symd_api *api);

#endif /* SYMD_API_H */
