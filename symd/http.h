/*
 * http.h - the daemon's HTTP/1.1 server layer: libevent 2.1 bufferevents
 * for the I/O and http-parser 2.9 for the syntax.  This header is the
 * manual.
 *
 * Why not evhttp: in libevent 2.1.12 evhttp reads a whole request body
 * into memory before any callback, has one body limit per server and no
 * hook when a request's headers arrive.  symd takes multi-GB uploads
 * (PUT /v1/debuginfo/<id>, streamed to disk) on the same address and port
 * as POST /v1/symbolize (small body limit, 413 over it), so the handler
 * must see the headers first and then choose, per request, how the body
 * is received.  That is what this layer adds; routing, authentication and
 * everything else stay with the caller.
 *
 *	struct symd_http *http;
 *	struct symd_http_opts o = { .on_request = route, .on_done = log_it,
 *				    .ctx = daemon };
 *	symd_http_new(base, &o, &http);
 *	symd_http_listen(http, "127.0.0.1", 8630, &port);
 *	event_base_dispatch(base);
 *
 *	static void route(struct symd_http_req *req, void *ctx)
 *	{
 *		if (strcmp(symd_http_req_path(req), "/healthz") == 0)
 *			symd_http_req_reply(req, 200, "text/plain", body);
 *		else if (is_upload(req))
 *			symd_http_req_stream_body(req, write_chunk, finish);
 *		else if (symd_http_req_buffer_body(req, 1 << 20, run) == -EFBIG)
 *			symd_http_req_reply_json_error(req, 413, "too large");
 *	}
 *
 * Caveats
 * - Threads.  A server and all its requests belong to the thread that runs
 *   its event_base (the loop thread).  Every function here must be called
 *   on that thread; a worker hands its result back to the loop first
 *   (event_active() on an event of its own, with evthread_use_pthreads()).
 *   Nothing here locks.
 * - Callbacks never run inside a call of this API (except
 *   symd_http_free(), which ends the requests in flight): the layer calls
 *   the caller only from the event loop (its bufferevents use
 *   BEV_OPT_DEFER_CALLBACKS), so replying from a callback is safe.
 * - One request at a time per connection.  Pipelined requests wait, unread
 *   (the input buffer is capped at SYMD_HTTP_READ_MAX bytes), until the
 *   reply before them has been written to the socket.
 * - The layer prints nothing.  on_done() is the place to log and count.
 * - The process must ignore SIGPIPE: libevent writes with writev() and
 *   sendfile(), which raise it when a client has gone away.
 * - Errors are 0 or -errno.
 *
 * What the layer answers by itself, always as {"error": "..."} with
 * Content-Type application/json and then closing the connection:
 *   400  malformed request (request line, header syntax, chunk framing,
 *        unknown method, a Transfer-Encoding other than chunked,
 *        Content-Length together with chunked)
 *   408  the request line and headers took longer than header_timeout_ms;
 *        or no body bytes came for body_timeout_ms, a buffered body took
 *        longer than body_deadline_ms, or a body came slower than
 *        min_rate bytes a second over a window of rate_window_ms
 *   413  a buffered body grew over its limit (symd_http_req_buffer_body())
 *   414  the URL is longer than max_url_bytes
 *   431  the request line and headers are longer than max_header_bytes
 *   500  a streamed body's on_body() failed without replying
 *   503  (with Retry-After) the buffered bodies of all requests together
 *        would pass max_buffered; or a connection was evicted to make
 *        room for a newcomer at max_conns (see there)
 *   505  an HTTP major version other than 1
 * Methods http-parser knows but the caller does not want (PATCH, ...) are
 * the caller's: answer them 405 or 501.
 */
#ifndef SYMD_HTTP_H
#define SYMD_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct bufferevent;
struct evbuffer;

struct symd_http;
struct symd_http_req;

/* Defaults of struct symd_http_opts (a zero field takes them). */
#define SYMD_HTTP_DEFAULT_MAX_HEADER	(16u << 10)
#define SYMD_HTTP_DEFAULT_MAX_URL	(8u << 10)
#define SYMD_HTTP_DEFAULT_MAX_CONNS	1024u
#define SYMD_HTTP_DEFAULT_HEADER_MS	10000u
#define SYMD_HTTP_DEFAULT_BODY_MS	30000u
#define SYMD_HTTP_DEFAULT_IDLE_MS	60000u
#define SYMD_HTTP_DEFAULT_WRITE_MS	60000u
#define SYMD_HTTP_DEFAULT_BODY_DEADLINE_MS 60000u
#define SYMD_HTTP_DEFAULT_MIN_RATE	1024u
#define SYMD_HTTP_DEFAULT_RATE_WINDOW_MS 5000u
#define SYMD_HTTP_DEFAULT_MAX_BUFFERED	((size_t)128 << 20)

/* Bytes of unparsed input a connection holds at most: reading stops
 * there until the parser has consumed some (backpressure). */
#define SYMD_HTTP_READ_MAX	(64u << 10)

/**
 * symd_http_request_fn - a request's headers are complete.
 * @param req   valid until the on_done() call for it returns; see the
 *              lifetime rules at symd_http_req_reply()
 * @param ctx   symd_http_opts.ctx
 * The callee routes the request and then either replies now, or chooses
 * how to receive the body (symd_http_req_buffer_body(),
 * symd_http_req_stream_body()), or does neither yet and does one of them
 * later on the loop thread (the body waits unread; no timeout runs while
 * the caller decides).  A request without a body still gets on_complete()
 * if the caller asks for it, at once.
 */
typedef void (*symd_http_request_fn)(struct symd_http_req *req, void *ctx);

/**
 * symd_http_done_fn - a request is over: its reply went to the socket, or
 * the connection ended.
 * @param req         readable (accessors only) during the call, freed
 *                    right after it
 * @param status      the status of the reply, or 0 if no reply was made
 *                    (the client went away first, or the server was freed)
 * @param latency_us  from the request's first byte to now
 * @param ctx         symd_http_opts.ctx
 * Called exactly once for every request that reached on_request() and for
 * every request the layer answered by itself (400, 408, ...).  A request
 * whose connection ended before its headers were complete (EOF, reset)
 * gets no call.  "Went to the socket" means the kernel
 * took the last byte, not that the client read it; a reply cut short by a
 * dead connection still reports its status.
 */
typedef void (*symd_http_done_fn)(struct symd_http_req *req, int status,
				  uint64_t latency_us, void *ctx);

/** symd_http_shutdown_fn - the last connection of a shut-down server
 * closed.  It may call symd_http_free(http). */
typedef void (*symd_http_shutdown_fn)(struct symd_http *http, void *ctx);

/** symd_http_req_fn - on_complete() and on_abort() of one request. */
typedef void (*symd_http_req_fn)(struct symd_http_req *req);

/**
 * symd_http_body_fn - one piece of a streamed request body.
 * @param data, len  borrowed, valid during the call only; len > 0; pieces
 *                   are at most SYMD_HTTP_READ_MAX bytes, in order, with
 *                   the chunked framing removed
 * @return 0 to go on; anything else stops the body: the request then ends
 *         with the caller's reply if it made one (inside this call),
 *         else with a 500, and the connection closes.  on_complete() and
 *         on_abort() are not called then.
 */
typedef int (*symd_http_body_fn)(struct symd_http_req *req, const void *data,
				 size_t len);

/**
 * struct symd_http_opts - callbacks and limits of a server.  Copied by
 * symd_http_new(); a zero limit takes its SYMD_HTTP_DEFAULT_*.
 */
struct symd_http_opts {
	symd_http_request_fn on_request;	/* required */
	symd_http_done_fn on_done;		/* optional */
	void *ctx;				/* passed to both */
	/* Request line plus headers, in bytes on the wire: 431 over it. */
	size_t max_header_bytes;
	/* The request target: 414 over it. */
	size_t max_url_bytes;
	/*
	 * Open connections.  At the limit a newcomer takes the slot of the
	 * slowest connection that has only been waiting for its client for
	 * 300 ms or more: idle between requests, sending its head, or
	 * sending a body (bytes a second in its current request, lowest
	 * first; a lingering close before all).  That one is closed, with
	 * a 503 sent on a best-effort basis if a request was under way.  A
	 * request the caller works on or answers is never cut.  With no
	 * such connection the listeners stop and new clients wait in the
	 * kernel's backlog.  So clients that trickle cannot keep /healthz
	 * or any quick client out.  Keep it below the descriptor limit
	 * (RLIMIT_NOFILE) with room for the rest of the process.
	 */
	unsigned max_conns;
	/* The whole request line and headers must arrive within this, from
	 * the request's first byte (from the accept for the first request
	 * of a connection), however they trickle in (slow loris): 408. */
	unsigned header_timeout_ms;
	/* A body that is being received gets no byte for this long: 408.
	 * Not counted while the caller paused the body (nor are the two
	 * below).  Checked every second (or this often, if less). */
	unsigned body_timeout_ms;
	/* A buffered body must be complete this long after its first
	 * byte was asked for, however it trickles: 408.  Streamed bodies
	 * (multi-GB uploads) have no total bound, only min_rate. */
	unsigned body_deadline_ms;
	/* Bytes a second a body must average over each window of
	 * rate_window_ms: 408 below it.  A trickle of a byte a second
	 * resets body_timeout_ms but not this. */
	unsigned min_rate;
	unsigned rate_window_ms;
	/* Bytes of all buffered bodies together (each one is capped by
	 * its own limit too): a body that would pass it is refused with
	 * 503 and Retry-After, before any byte is read when its
	 * Content-Length says so (symd_http_req_buffer_body(): -EBUSY). */
	size_t max_buffered;
	/* A keep-alive connection waits this long for its next request. */
	unsigned idle_timeout_ms;
	/* A reply makes no progress (the client does not read) this long:
	 * the connection is dropped. */
	unsigned write_timeout_ms;
};

/**
 * symd_http_new() - create a server on @base, not listening yet.
 * @param base     caller owns; must outlive the server
 * @param opts     copied; on_request must be set
 * @param[out] out caller owns, free with symd_http_free()
 * @return 0, -EINVAL (no on_request), -ENOMEM
 */
int symd_http_new(struct event_base *base, const struct symd_http_opts *opts,
		  struct symd_http **out);

/**
 * symd_http_listen() - accept connections on @addr:@port (TCP).
 * @param addr            numeric IPv4 or IPv6 address, or a host name
 *                        (resolved once, blocking: call it at startup;
 *                        the first address found is used)
 * @param port            0 picks a free port
 * @param[out] bound_port the port bound; may be NULL
 * @return 0, -EINVAL (port > 65535), -EADDRNOTAVAIL (@addr does not
 *         resolve), -ENOSPC (already SYMD_HTTP_MAX_LISTEN listeners),
 *         -errno of socket()/bind()/listen() (-EADDRINUSE, -EACCES, ...)
 * May be called more than once (say for 127.0.0.1 and ::1).
 */
#define SYMD_HTTP_MAX_LISTEN 8
int symd_http_listen(struct symd_http *http, const char *addr, unsigned port,
		     unsigned *bound_port);

/**
 * symd_http_adopt_bev() - serve one already-connected bufferevent, as if
 * it had been accepted: tests and the fuzz target use one end of a
 * bufferevent_pair_new() this way, with no socket.
 * @param bev  takes ownership, even on failure (freed with the
 *             connection).  Must belong to the server's base and must have
 *             been created with BEV_OPT_DEFER_CALLBACKS: a pair without it
 *             runs the other end's callbacks inside our writes.  Its
 *             callbacks, watermarks and timeouts are replaced.
 * @return 0, -ENOMEM, -ESHUTDOWN (the server is shutting down)
 * Counts towards max_conns but is never refused for it.
 */
int symd_http_adopt_bev(struct symd_http *http, struct bufferevent *bev);

/**
 * symd_http_shutdown() - stop gracefully: close the listeners at once,
 * close idle connections, let each request in flight finish (its reply
 * says Connection: close) and close its connection after it, then call
 * @done(@http, @ctx) from the event loop once no connection remains.
 * Requests that arrive on those connections meanwhile are not read.
 * @param done  may be NULL; called once, never from inside this call
 * Calling it again only replaces @done and @ctx.  Timeouts still apply,
 * so a slow client delays @done by at most the longest of them (plus two
 * seconds of lingering close); a request the caller never answers delays
 * it for good.
 */
void symd_http_shutdown(struct symd_http *http, symd_http_shutdown_fn done,
			void *ctx);

/**
 * symd_http_free() - close everything now and free the server.  Requests
 * in flight get on_abort() (if they had one and no reply yet) and
 * on_done().  Not from inside a callback of this server, except the
 * shutdown done callback.  NULL is a no-op.  libevent's deferred
 * callbacks hold references to the freed bufferevents: run the loop once
 * more (EVLOOP_NONBLOCK) before event_base_free(), or they leak.
 */
void symd_http_free(struct symd_http *http);

/** symd_http_conns() - open connections (accepted or adopted). */
unsigned symd_http_conns(const struct symd_http *http);

/** symd_http_buffered() - bytes of request bodies buffered now, of
 * max_buffered (for /metrics). */
size_t symd_http_buffered(const struct symd_http *http);

/*
 * Accessors.  Strings are borrowed from @req, valid until on_done()
 * returns, NUL-terminated, and never NULL unless said otherwise.  Before
 * the headers are complete (a request the layer answered with 400/431)
 * method, path and headers may be empty.
 */

/** The method as http-parser names it ("GET", "PUT", ...), or "". */
const char *symd_http_req_method(const struct symd_http_req *req);
/** The request target up to its first '?', raw (not %-decoded). */
const char *symd_http_req_path(const struct symd_http_req *req);
/** What follows the first '?' of the target, raw; NULL without '?'. */
const char *symd_http_req_query(const struct symd_http_req *req);
/** The value of the first header named @name (ASCII case-insensitive),
 * with surrounding blanks removed; NULL if there is none. */
const char *symd_http_req_header(const struct symd_http_req *req,
				 const char *name);
/** Content-Length into *@len: 0, or -ENOENT if the request has none
 * (no body, or a chunked one). */
int symd_http_req_content_length(const struct symd_http_req *req,
				 uint64_t *len);
/** The peer as "1.2.3.4:5678" or "[::1]:5678"; "" if unknown (pairs). */
const char *symd_http_req_peer(const struct symd_http_req *req);
/** When the request's first byte was parsed, CLOCK_MONOTONIC in us. */
uint64_t symd_http_req_start_us(const struct symd_http_req *req);
/** A number unique within the server, counting up from 1: for logs. */
uint64_t symd_http_req_id(const struct symd_http_req *req);
/** The body bytes of the reply made: its Content-Length, 0 for a reply
 *  to HEAD, 204, 304, or no reply yet.  For the access log: a reply cut
 *  short by a dead connection still says what it would have sent. */
uint64_t symd_http_req_bytes_sent(const struct symd_http_req *req);
/** The caller's pointer for @req; the layer never touches it. */
void symd_http_req_set_user(struct symd_http_req *req, void *user);
void *symd_http_req_user(const struct symd_http_req *req);

/**
 * symd_http_req_on_abort() - be told when @req ends without the caller's
 * reply and without on_complete(): the connection died, a body timeout,
 * a buffered body over its limit, a malformed chunked body, or
 * symd_http_free().  After on_abort() returns the caller must not use
 * @req any more (replies return -ECANCELED, but the request is freed
 * soon after): drop every reference to it there.  The layer may then
 * answer by itself (408, 413, 400).  Not called after the caller replied.
 */
void symd_http_req_on_abort(struct symd_http_req *req,
			    symd_http_req_fn on_abort);

/**
 * symd_http_req_buffer_body() - receive the body into memory, then call
 * @on_complete(@req) with all of it in symd_http_req_body().
 * @param limit  most bytes accepted.  A Content-Length over it fails
 *               here; a chunked body that grows over it midway gets a 413
 *               from the layer (and on_abort()).
 * @return 0, -EFBIG (Content-Length > @limit: nothing was done, the
 *         caller replies, typically 413), -EBUSY (Content-Length is more
 *         than what is left of max_buffered: nothing was done, the
 *         caller replies 503 with Retry-After), -EALREADY (a body mode
 *         was chosen or a reply made), -ENOMEM
 * A body that grows over what is left of max_buffered gets a 503 from
 * the layer (and on_abort()).
 * Sends "100 Continue" first if the client asked for it.
 */
int symd_http_req_buffer_body(struct symd_http_req *req, size_t limit,
			      symd_http_req_fn on_complete);

/** The buffered body: borrowed, owned by @req; the caller may drain it.
 * NULL unless symd_http_req_buffer_body() was called. */
struct evbuffer *symd_http_req_body(struct symd_http_req *req);

/**
 * symd_http_req_stream_body() - receive the body piece by piece: each
 * piece goes to @on_body() as it is read, nothing is kept, then
 * @on_complete(@req) follows the last piece.  Memory stays bounded
 * whatever the body's size.
 * @return 0, -EALREADY (a body mode was chosen or a reply made)
 * Sends "100 Continue" first if the client asked for it.
 */
int symd_http_req_stream_body(struct symd_http_req *req,
			      symd_http_body_fn on_body,
			      symd_http_req_fn on_complete);

/**
 * symd_http_req_pause(), symd_http_req_resume() - backpressure for a
 * streamed body whose consumer is slower than the network (say it hands
 * pieces to a worker).  After pause, on_body() gets no more pieces (not
 * even from bytes already read) until resume; the socket is read only
 * until SYMD_HTTP_READ_MAX bytes wait, and body_timeout_ms does not run.
 * Pause may be called inside on_body().  No-ops outside streaming.
 */
void symd_http_req_pause(struct symd_http_req *req);
void symd_http_req_resume(struct symd_http_req *req);

/**
 * symd_http_req_add_header() - add a header to the reply (say
 * Retry-After or X-DEBUGINFOD-SIZE), before replying.
 * @param name, value  copied; no CR, LF or NUL; @name not empty
 * @return 0, -EINVAL (bad bytes, or a header the layer writes itself:
 *         Content-Length, Transfer-Encoding, Connection), -EALREADY
 *         (replied), -ENOMEM
 */
int symd_http_req_add_header(struct symd_http_req *req, const char *name,
			     const char *value);

/**
 * symd_http_req_reply() - answer @req.
 * @param status        200..599
 * @param content_type  copied; NULL: no Content-Type header
 * @param body          its contents are taken (moved, not copied) and
 *                      @body is left empty; the caller keeps and frees
 *                      the evbuffer itself.  NULL: an empty body.
 * @return 0, -EINVAL (status), -EALREADY (replied before), -ECANCELED
 *         (after on_abort()), -ENOMEM.  On error @body is untouched.
 *
 * Content-Length is always sent (except with 204), Connection: close when
 * the connection will close; 204 and 304 never carry a body.  To a HEAD
 * request the headers go out with the body's Content-Length and the body
 * is dropped.  A reply made while the request body is still arriving (an
 * early 401 for an upload) closes the connection after it; the rest of
 * the body is read and thrown away for a short while so that the client
 * sees the reply rather than a reset.
 *
 * Lifetime: replies may be deferred; @req stays valid until the caller
 * replies or on_abort() is called, whichever comes first, and after
 * replying the caller must not use @req again (on_done() gets it once
 * more, for the log).
 */
int symd_http_req_reply(struct symd_http_req *req, int status,
			const char *content_type, struct evbuffer *body);

/**
 * symd_http_req_reply_json_error() - reply {"error":"@msg"} with
 * application/json.  @msg is escaped for JSON (symd_json_add_cstr()
 * of req.h: ill-formed UTF-8 becomes U+FFFD).  Returns as
 * symd_http_req_reply(), and -E2BIG for a message of hundreds of MB.
 */
int symd_http_req_reply_json_error(struct symd_http_req *req, int status,
				   const char *msg);

/**
 * symd_http_req_reply_file() - reply with @length bytes of the file @fd
 * from @offset, sent with sendfile() where possible (evbuffer file
 * segments), never read into memory: for multi-GB debug files.
 * @param fd  takes ownership, even on failure: closed once sent
 * @return as symd_http_req_reply(), and -EINVAL if the range is not
 *         inside the file, -errno of fstat()
 */
int symd_http_req_reply_file(struct symd_http_req *req, int status,
			     const char *content_type, int fd,
			     uint64_t offset, uint64_t length);

#endif /* SYMD_HTTP_H */
