/*
 * http.c - the HTTP/1.1 server layer: libevent bufferevents carry the
 * bytes, http-parser 2.9 reads the syntax, the caller (through http.h)
 * routes and answers.
 *
 * A connection (struct conn) serves one request (struct symd_http_req,
 * c->req) at a time.  Input is parsed straight out of the bufferevent's
 * input evbuffer, one contiguous segment per http_parser_execute(), with
 * no copy.  The parser is paused (http_parser_pause()) wherever the caller
 * must act: when the headers of a request with a body are complete, when
 * a message is complete, and when the caller pauses a streamed body.  The
 * caller is then called from conn_process(), between two parser runs, so
 * no parser state is live while it acts.  The one exception is on_body(),
 * which must see the bytes while they are in the segment.
 *
 * Invariants:
 * - The input holds at most SYMD_HTTP_READ_MAX bytes (read high
 *   watermark: libevent stops reading there).  It is consumed only while
 *   the current request wants input (req_wants_input()); the next
 *   pipelined request therefore waits, unread, until the reply before it
 *   has drained to the socket (write_cb() -> req_done()).
 * - Bufferevents use BEV_OPT_DEFER_CALLBACKS, so no libevent callback runs
 *   inside a call the caller makes; conn_kick() asks for conn_process()
 *   the same way.  A connection is freed only from its own libevent
 *   callbacks (read, write, event, timer) and from
 *   symd_http_shutdown()/symd_http_free(); every path that frees it
 *   (conn_free(), conn_end(), req_fail()) is a tail call.
 * - The caller's callbacks run with c->req still set, so a
 *   symd_http_shutdown() made inside them never takes the connection for
 *   an idle one.
 * - One timer per connection, armed for the phase it is in (c->tkind):
 *   header deadline, body tick, keep-alive idle, lingering close.  The
 *   body tick (at most every BODY_TICK_MS) checks three clocks that a
 *   trickle cannot reset: the idle time since the last body byte, the
 *   total time of a buffered body, and the bytes of each rate window.
 * - The head of a request (target and headers) lives in one buffer capped
 *   by max_header_bytes; bodies are either streamed (nothing kept) or
 *   buffered up to the caller's limit, and all buffered bodies together
 *   up to max_buffered (h->buffered counts them).  Nothing else grows
 *   with input.
 * - Connections stay under max_conns: at the limit a newcomer takes the
 *   slot of the slowest connection that is only receiving (evictable()),
 *   so clients that trickle cannot keep /healthz or a fast client out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <http_parser.h>

#include "http.h"
#include "req.h"
#include "base.h"

/* How long a closing connection reads and discards what the client still
 * sends, so that our reply is not destroyed by a TCP reset. */
#define LINGER_MS 2000
#define LISTEN_BACKLOG 511
/* Accepting pauses this long after accept() fails (EMFILE, ENOBUFS), or
 * at max_conns when no connection may be evicted yet. */
#define RELISTEN_MS 500
/* The body clocks are checked this often (or at body_timeout_ms). */
#define BODY_TICK_MS 1000
/* A connection receiving for less than this is never evicted: a client
 * that sends its request at once is done well within it.  At the limit
 * the connections are looked at again every RECHECK_MS as they age. */
#define EVICT_MIN_MS 300
#define RECHECK_MS 100

enum tkind { T_NONE, T_HEADER, T_BODY, T_IDLE, T_LINGER };
enum body_mode { BODY_NONE, BODY_BUFFER, BODY_STREAM };
enum part { P_URL, P_FIELD, P_VALUE, P_END };

struct conn {
	struct symd_http *http;
	struct conn *prev, *next;	/* http->conns */
	struct bufferevent *bev;	/* owned */
	struct event *timer;		/* owned; see tkind */
	http_parser parser;
	struct symd_http_req *req;	/* owned; the request served, or NULL */
	size_t hdr_raw;		/* wire bytes of the current head so far */
	/* Eviction: when the phase began (accept, end of the last reply)
	 * and the request bytes read since. */
	uint64_t phase_us, rx;
	/* Body clocks (BODY_TICK_MS): start of the body, last byte, and
	 * the rate window's start and bytes. */
	uint64_t body_us, last_rx_us, win_us, win_bytes;
	enum tkind tkind;
	bool eof;		/* the client sent FIN: no more input */
	bool close;		/* close after the current reply */
	bool linger;		/* closing: discard input until EOF or timer */
	bool oom;		/* a parser callback could not allocate */
	char peer[64];
};

struct symd_http_req {
	struct conn *conn;
	uint64_t id, start_us;
	/* The head: target NUL, then name NUL value NUL per header.  The
	 * target is cut at its '?' (query: offset of what follows, 0 if
	 * none).  Capped at max_header_bytes + 2 (the wire limit enforced
	 * in conn_parse() keeps us below it; this is the backstop). */
	struct symi_buf head;
	size_t query, hdrs, part_start;
	unsigned nhdr;
	enum part part;
	unsigned method;
	bool have_method, headers_done, dispatched, msg_done, completed;
	bool has_body, has_clen, keep_alive, http10, expect, paused;
	bool aborted;		/* on_abort() ran, or the layer took over */
	bool body_failed;	/* the caller's on_body() failed */
	uint64_t clen;
	int fail_status;	/* set by a parser callback that fails */
	enum body_mode mode;
	size_t limit;
	size_t charged;		/* of h->buffered, given back at free */
	struct evbuffer *body;		/* owned; BODY_BUFFER */
	struct evbuffer *out_hdrs;	/* owned; the caller's headers */
	symd_http_body_fn on_body;
	symd_http_req_fn on_complete, on_abort;
	void *user;
	int status;		/* of the reply made; 0: none yet */
	uint64_t body_bytes;	/* of the reply made (its Content-Length,
				 * 0 to HEAD and for 204, 304) */
};

struct symd_http {
	struct event_base *base;
	struct symd_http_opts o;
	struct evconnlistener *lis[SYMD_HTTP_MAX_LISTEN];
	unsigned nlis, nconns;
	size_t buffered;	/* bytes of all buffered bodies */
	bool accepting, shutting;
	struct conn *conns;
	struct event *relisten;		/* re-enables accepting */
	struct event *recheck;		/* at the limit: find a victim */
	struct event *done_ev;		/* calls done() from the loop */
	symd_http_shutdown_fn done;
	void *done_ctx;
	uint64_t next_id;
};

static void conn_process(struct conn *c);
static void conn_free(struct conn *c);
static bool req_wants_input(const struct symd_http_req *r);
static void req_abort_notify(struct symd_http_req *r);
static void conn_kick(struct conn *c);
static int reply_json(struct symd_http_req *r, int status, const char *msg);
static const char *reason(int status);

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static struct timeval ms_tv(unsigned ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	return tv;
}

static void conn_timer(struct conn *c, enum tkind kind)
{
	const struct symd_http_opts *o = &c->http->o;
	unsigned ms = kind == T_HEADER ? o->header_timeout_ms :
		      kind == T_BODY ? (o->body_timeout_ms < BODY_TICK_MS ?
					o->body_timeout_ms : BODY_TICK_MS) :
		      kind == T_IDLE ? o->idle_timeout_ms : LINGER_MS;
	struct timeval tv = ms_tv(ms);

	c->tkind = kind;
	if (kind == T_NONE)
		evtimer_del(c->timer);
	else
		evtimer_add(c->timer, &tv);
}

/*
 * May @c give its slot to a newcomer, and at what rate (bytes a second)
 * does it send?  Only a connection that waits for its client may: idle
 * between requests, still sending its head, or sending a body that the
 * caller takes (not paused by the caller), or lingering after its reply;
 * and only after EVICT_MIN_MS in that phase.  A request the caller is
 * working on or answering is never cut.
 */
static bool evictable(const struct conn *c, uint64_t now, uint64_t *rate)
{
	uint64_t age = now - c->phase_us;

	if (c->linger) {
		*rate = 0;
		return true;
	}
	if (c->req && c->req->headers_done && !req_wants_input(c->req))
		return false;
	if (age < EVICT_MIN_MS * 1000ull)
		return false;
	*rate = c->rx * 1000000 / age;
	return true;
}

/* The slowest evictable connection (the oldest of equals), or NULL. */
static struct conn *find_victim(struct symd_http *h)
{
	struct conn *best = NULL;
	uint64_t now = now_us(), best_rate = 0, rate;

	for (struct conn *c = h->conns; c; c = c->next) {
		if (!evictable(c, now, &rate))
			continue;
		if (!best || rate < best_rate ||
		    (rate == best_rate && c->phase_us < best->phase_us)) {
			best = c;
			best_rate = rate;
		}
	}
	return best;
}

/*
 * Close @c now to free its slot.  A request in progress is told 503 in
 * one non-blocking send (a best effort: the close may reset it) and its
 * caller gets on_abort() and on_done(503).
 */
static void evict(struct conn *c)
{
	static const char msg[] = "HTTP/1.1 503 Service Unavailable\r\n"
		"Content-Type: application/json\r\nRetry-After: 1\r\n"
		"Content-Length: 58\r\nConnection: close\r\n\r\n"
		"{\"error\":\"connection slots full: "
		"the slowest client goes\"}";
	struct symd_http_req *r = c->req;
	int fd = bufferevent_getfd(c->bev);

	if (r && !r->status && !c->linger) {
		if (fd >= 0)
			(void)send(fd, msg, sizeof(msg) - 1,
				   MSG_DONTWAIT | MSG_NOSIGNAL);
		req_abort_notify(r);
		r->status = 503;
	}
	conn_free(c);
}

static void accept_update(struct symd_http *h)
{
	bool room = h->nconns < h->o.max_conns || find_victim(h);
	bool on = !h->shutting && !evtimer_pending(h->relisten, NULL) && room;

	/* Full and no one to evict yet: look again in a while, as
	 * connections age into evictable(). */
	if (!room && !h->shutting && !evtimer_pending(h->recheck, NULL)) {
		struct timeval tv = ms_tv(RECHECK_MS);

		evtimer_add(h->recheck, &tv);
	}

	if (on == h->accepting)
		return;
	h->accepting = on;
	for (unsigned i = 0; i < h->nlis; i++) {
		if (on)
			evconnlistener_enable(h->lis[i]);
		else
			evconnlistener_disable(h->lis[i]);
	}
}

/*
 * Requests.
 */

static struct symd_http_req *req_new(struct conn *c)
{
	struct symd_http_req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->conn = c;
	symi_buf_init(&r->head, c->http->o.max_header_bytes + 2);
	r->id = ++c->http->next_id;
	r->start_us = now_us();
	return r;
}

static void req_free(struct symd_http_req *r)
{
	r->conn->http->buffered -= r->charged;
	if (r->body)
		evbuffer_free(r->body);
	if (r->out_hdrs)
		evbuffer_free(r->out_hdrs);
	symi_buf_release(&r->head);
	free(r);
}

/* Tell the caller its request is gone, once, if it was ever told of it. */
static void req_abort_notify(struct symd_http_req *r)
{
	if (r->aborted || r->status)
		return;
	r->aborted = true;
	if (r->dispatched && !r->body_failed && r->on_abort)
		r->on_abort(r);
}

/* The request is over: abort, log, free.  c->req stays set during the
 * callbacks (see the invariants). */
static void req_end(struct conn *c)
{
	struct symd_http_req *r = c->req;
	const struct symd_http_opts *o = &c->http->o;

	req_abort_notify(r);
	if ((r->dispatched || r->status) && o->on_done)
		o->on_done(r, r->status, now_us() - r->start_us, o->ctx);
	c->req = NULL;
	req_free(r);
}

/*
 * The layer answers by itself (400, 408, 413, ...) and closes after it.
 * A tail call: it may free the connection.
 */
static void req_fail(struct conn *c, int status, const char *msg)
{
	struct symd_http_req *r = c->req;

	c->close = true;
	if (!r) {
		/* An error before the first byte of a request (say
		 * endless CRLFs): make one to answer. */
		r = req_new(c);
		if (!r) {
			conn_free(c);
			return;
		}
		c->req = r;
	}
	if (r->status)
		return;		/* the caller's reply goes first */
	req_abort_notify(r);
	if (reply_json(r, status, msg))
		conn_free(c);
}

/* Append to the head, within its cap: past it 431, else out of memory. */
static int head_add(struct symd_http_req *r, const char *p, size_t n)
{
	int err = symi_buf_add(&r->head, p, n);

	if (err == -E2BIG)
		r->fail_status = 431;
	else if (err)
		r->conn->oom = true;
	return err ? -1 : 0;
}

/* Close the part of the head being written and start @to. */
static int head_switch(struct symd_http_req *r, enum part to)
{
	if (r->part == to)
		return 0;
	if (r->part == P_VALUE) {
		/* http-parser keeps trailing blanks of a value */
		size_t len = r->head.len;

		while (len > r->part_start && (r->head.p[len - 1] == ' ' ||
					       r->head.p[len - 1] == '\t'))
			len--;
		symi_buf_setlen(&r->head, len);
	}
	if (head_add(r, "", 1))
		return -1;
	if (r->part == P_URL) {
		char *q = memchr(r->head.p, '?', r->head.len);

		if (q) {
			*q = '\0';
			r->query = (size_t)(q - r->head.p) + 1;
		}
		r->hdrs = r->head.len;
	} else if (r->part == P_FIELD && to != P_VALUE) {
		if (head_add(r, "", 1))		/* a name without value */
			return -1;
	}
	if (to == P_FIELD)
		r->nhdr++;
	r->part = to;
	r->part_start = r->head.len;
	return 0;
}

/*
 * http-parser callbacks.  p->data is the connection.  They return -1 to
 * stop the parser with an error (fail_status or oom says which) and pause
 * it where the caller must act; conn_process() takes it from there.
 */

static int cb_begin(http_parser *p)
{
	struct conn *c = p->data;

	if (c->req)
		return -1;
	c->req = req_new(c);
	if (!c->req) {
		c->oom = true;
		return -1;
	}
	/* The first request's deadline runs from the accept. */
	if (c->tkind != T_HEADER)
		conn_timer(c, T_HEADER);
	return 0;
}

static int cb_url(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;
	struct symd_http_req *r = c->req;

	r->method = p->method;
	r->have_method = true;
	if (n > c->http->o.max_url_bytes - r->head.len) {
		r->fail_status = 414;
		return -1;
	}
	return head_add(r, at, n);
}

static int cb_field(http_parser *p, const char *at, size_t n)
{
	struct symd_http_req *r = ((struct conn *)p->data)->req;

	if (r->headers_done)		/* trailers of a chunked body */
		return 0;
	return head_switch(r, P_FIELD) || head_add(r, at, n) ? -1 : 0;
}

static int cb_value(http_parser *p, const char *at, size_t n)
{
	struct symd_http_req *r = ((struct conn *)p->data)->req;

	if (r->headers_done)
		return 0;
	return head_switch(r, P_VALUE) || head_add(r, at, n) ? -1 : 0;
}

static int cb_headers(http_parser *p)
{
	struct conn *c = p->data;
	struct symd_http_req *r = c->req;
	const char *expect;

	if (head_switch(r, P_END))
		return -1;
	if (p->http_major != 1) {
		r->fail_status = 505;
		return -1;
	}
	r->headers_done = true;
	r->keep_alive = http_should_keep_alive(p) && !p->upgrade;
	r->http10 = p->http_minor == 0;
	/* After an upgrade or CONNECT the rest is not HTTP. */
	if (p->upgrade)
		c->close = true;
	r->has_clen = p->flags & F_CONTENTLENGTH;
	r->clen = r->has_clen ? p->content_length : 0;
	r->has_body = p->method != HTTP_CONNECT &&
		      ((p->flags & F_CHUNKED) || r->clen > 0);
	expect = symd_http_req_header(r, "Expect");
	r->expect = p->http_minor >= 1 && expect &&
		    strcasecmp(expect, "100-continue") == 0;
	conn_timer(c, T_NONE);
	/* Without a body on_message_complete() follows at once and pauses;
	 * with one, the caller must choose how to take it first. */
	if (r->has_body)
		http_parser_pause(p, 1);
	return 0;
}

static int cb_body(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;
	struct symd_http_req *r = c->req;

	c->last_rx_us = now_us();
	c->win_bytes += n;
	if (r->mode == BODY_BUFFER) {
		struct symd_http *h = c->http;

		if (n > r->limit - evbuffer_get_length(r->body)) {
			r->fail_status = 413;
			return -1;
		}
		if (n > h->o.max_buffered - h->buffered) {
			r->fail_status = 503;
			return -1;
		}
		if (evbuffer_add(r->body, at, n)) {
			c->oom = true;
			return -1;
		}
		h->buffered += n;
		r->charged += n;
	} else if (r->mode == BODY_STREAM) {
		if (r->on_body(r, at, n)) {
			r->body_failed = true;
			r->fail_status = 500;
			return -1;
		}
		if (r->status || r->paused) {
			http_parser_pause(p, 1);
			return 0;
		}
	}
	if (c->tkind != T_BODY)
		conn_timer(c, T_BODY);
	return 0;
}

static int cb_complete(http_parser *p)
{
	struct conn *c = p->data;

	c->req->msg_done = true;
	conn_timer(c, T_NONE);
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings parser_settings = {
	.on_message_begin = cb_begin,
	.on_url = cb_url,
	.on_header_field = cb_field,
	.on_header_value = cb_value,
	.on_headers_complete = cb_headers,
	.on_body = cb_body,
	.on_message_complete = cb_complete,
};

/*
 * Connections.
 */

static bool req_wants_input(const struct symd_http_req *r)
{
	if (!r || !r->headers_done)
		return true;
	return r->mode != BODY_NONE && !r->msg_done && !r->status &&
	       !r->paused;
}

/* Run the parser over the first segment of the input.  Returns 0 to go
 * on, 1 if the connection answered an error or is gone. */
static int conn_parse(struct conn *c, struct evbuffer *in)
{
	bool head = !c->req || !c->req->headers_done;
	struct evbuffer_iovec v;
	enum http_errno err;
	int status;
	size_t n;

	if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
		return 0;
	if (v.iov_len > SYMD_HTTP_READ_MAX)	/* a flushed pair's chain */
		v.iov_len = SYMD_HTTP_READ_MAX;
	if (head) {
		/* Feed the head no further than its limit: a head that
		 * does not end within it is too large, whatever it is. */
		size_t room = c->http->o.max_header_bytes - c->hdr_raw;

		if (!room) {
			req_fail(c, 431, reason(431));
			return 1;
		}
		if (v.iov_len > room)
			v.iov_len = room;
	}
	n = http_parser_execute(&c->parser, &parser_settings, v.iov_base,
				v.iov_len);
	evbuffer_drain(in, n);
	c->rx += n;
	if (head)
		c->hdr_raw += n;
	err = HTTP_PARSER_ERRNO(&c->parser);
	if (err == HPE_PAUSED) {
		http_parser_pause(&c->parser, 0);
		return 0;
	}
	if (err == HPE_OK && n)
		return 0;
	if (err == HPE_OK)	/* no progress: never seen, but never spin */
		err = HPE_UNKNOWN;
	if (c->oom) {
		conn_free(c);
		return 1;
	}
	status = c->req && c->req->fail_status ? c->req->fail_status :
		 err == HPE_HEADER_OVERFLOW ? 431 : 400;
	if (status == 503) {
		/* The budget of all buffered bodies is spent; its bytes come
		 * back as requests end. */
		symd_http_req_add_header(c->req, "Retry-After", "1");
		req_fail(c, 503, "the server's budget for request bodies is "
			 "used up (--max-buffered): retry later");
		return 1;
	}
	req_fail(c, status, status == 400 ? http_errno_description(err) :
		 reason(status));
	return 1;
}

/*
 * The engine: call the caller where it must act, parse while the request
 * wants input, notice the end of input.  Called from the read callback,
 * the kick and after each reply; never from inside a caller's call.
 */
static void conn_process(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	while (!c->linger) {
		struct symd_http_req *r = c->req;

		/* (http-parser may fail a request after its headers
		 * complete, say for a Transfer-Encoding it cannot frame:
		 * then the layer has answered and the caller never
		 * hears of it.) */
		if (r && r->headers_done && !r->dispatched && !r->status) {
			r->dispatched = true;
			c->http->o.on_request(r, c->http->o.ctx);
		} else if (r && r->msg_done && r->mode != BODY_NONE &&
			   !r->completed && !r->status) {
			r->completed = true;
			if (r->on_complete)
				r->on_complete(r);
		} else if (!req_wants_input(r)) {
			return;
		} else if (evbuffer_get_length(in)) {
			if (conn_parse(c, in))
				return;
		} else {
			/* Input is over: between requests that is a
			 * normal close, inside one the client gave up. */
			if (c->eof)
				conn_free(c);
			return;
		}
	}
	evbuffer_drain(in, evbuffer_get_length(in));
}

/*
 * Close after a reply.  Closing a socket with unread data makes the
 * kernel send a reset, which can destroy the reply before the client has
 * read it (an early 401 or 413 while the client still sends its body).
 * So shut down our side, then read and discard until the client closes,
 * for LINGER_MS at most.  A tail call.
 */
static void conn_end(struct conn *c)
{
	int fd = bufferevent_getfd(c->bev);

	if (fd < 0 || c->eof || shutdown(fd, SHUT_WR) < 0) {
		conn_free(c);
		return;
	}
	c->linger = true;
	conn_timer(c, T_LINGER);
	conn_process(c);
}

/* The reply has drained to the socket.  A tail call. */
static void req_done(struct conn *c)
{
	req_end(c);
	c->hdr_raw = 0;
	c->phase_us = now_us();
	c->rx = 0;
	if (c->close || c->http->shutting) {
		conn_end(c);
		return;
	}
	conn_timer(c, T_IDLE);
	conn_process(c);	/* the next pipelined request, if any */
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	conn_process(arg);
}

/* Run conn_process() soon, from the loop: through the read callback,
 * deferred, whatever the input holds. */
static void conn_kick(struct conn *c)
{
	bufferevent_trigger(c->bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS |
			    BEV_TRIG_DEFER_CALLBACKS);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	/* Also called when a "100 Continue" drains: no reply yet. */
	if (c->req && c->req->status &&
	    !evbuffer_get_length(bufferevent_get_output(bev)))
		req_done(c);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	/* With deferred callbacks libevent merges the events that came in
	 * one loop turn: an EOF on reading together with an error on
	 * writing (the client closed while our reply was on its way) is
	 * not a half-close, and writing is already off: free, or the
	 * connection would wait forever with no timer running. */
	if ((what & BEV_EVENT_EOF) && (what & BEV_EVENT_READING) &&
	    !(what & (BEV_EVENT_ERROR | BEV_EVENT_WRITING |
		      BEV_EVENT_TIMEOUT)) && !c->linger) {
		/* A half-close: what was sent before it is still served. */
		c->eof = true;
		conn_process(c);
		return;
	}
	conn_free(c);		/* errors, write timeout, linger done */
}

/* Start the body clocks: at the start of a body (@fresh) and on resume
 * (a pause is the caller's doing, not the client's). */
static void body_clock(struct conn *c, bool fresh)
{
	uint64_t now = now_us();

	if (fresh)
		c->body_us = now;
	c->last_rx_us = c->win_us = now;
	c->win_bytes = 0;
	conn_timer(c, T_BODY);
}

/*
 * The body tick: 408 when no byte came for body_timeout_ms, when a
 * buffered body is not complete within body_deadline_ms, or when a rate
 * window of rate_window_ms brought less than min_rate bytes a second.
 * A tail call.
 */
static void body_tick(struct conn *c)
{
	const struct symd_http_opts *o = &c->http->o;
	uint64_t now = now_us(), win = now - c->win_us;
	char msg[128];

	if (now - c->last_rx_us >= o->body_timeout_ms * 1000ull) {
		snprintf(msg, sizeof(msg), "no request body bytes for %u ms",
			 o->body_timeout_ms);
	} else if (c->req && c->req->mode == BODY_BUFFER &&
		   now - c->body_us >= o->body_deadline_ms * 1000ull) {
		snprintf(msg, sizeof(msg), "the request body took longer "
			 "than %u ms", o->body_deadline_ms);
	} else if (win >= o->rate_window_ms * 1000ull &&
		   c->win_bytes * 1000000 < (uint64_t)o->min_rate * win) {
		snprintf(msg, sizeof(msg), "the request body came slower than "
			 "%u bytes a second", o->min_rate);
	} else {
		if (win >= o->rate_window_ms * 1000ull) {
			c->win_us = now;
			c->win_bytes = 0;
		}
		conn_timer(c, T_BODY);
		return;
	}
	req_fail(c, 408, msg);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	enum tkind kind = c->tkind;

	c->tkind = T_NONE;
	if (kind == T_HEADER && c->req)
		req_fail(c, 408, "request headers not received in time");
	else if (kind == T_BODY)
		body_tick(c);
	else
		conn_free(c);	/* idle, lingering, or nothing sent yet */
}

static void conn_free(struct conn *c)
{
	struct symd_http *h = c->http;

	if (c->req)
		req_end(c);
	if (c->prev)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	h->nconns--;
	event_free(c->timer);
	/* A pair's other end learns of the close this way (no-op for
	 * sockets). */
	bufferevent_flush(c->bev, EV_WRITE, BEV_FINISHED);
	bufferevent_free(c->bev);
	free(c);
	accept_update(h);
	if (h->shutting && !h->nconns)
		event_active(h->done_ev, EV_TIMEOUT, 1);
}

static void fmt_peer(char *buf, size_t len, const struct sockaddr *sa,
		     socklen_t sl)
{
	char host[NI_MAXHOST], port[NI_MAXSERV];

	buf[0] = '\0';
	if (getnameinfo(sa, sl, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]:%s" :
			 "%s:%s", host, port);
}

/* Serve @bev (taken over, even on failure). */
static int conn_new(struct symd_http *h, struct bufferevent *bev,
		    const struct sockaddr *sa, socklen_t sl)
{
	struct timeval wt = ms_tv(h->o.write_timeout_ms);
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		goto fail;
	c->timer = evtimer_new(h->base, timer_cb, c);
	if (!c->timer)
		goto fail;
	c->http = h;
	c->bev = bev;
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	c->phase_us = now_us();
	fmt_peer(c->peer, sizeof(c->peer), sa, sl);
	bufferevent_setcb(bev, read_cb, write_cb, event_cb, c);
	bufferevent_setwatermark(bev, EV_READ, 0, SYMD_HTTP_READ_MAX);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	bufferevent_set_timeouts(bev, NULL, &wt);
	if (bufferevent_enable(bev, EV_READ | EV_WRITE))
		goto fail;
	c->next = h->conns;
	if (h->conns)
		h->conns->prev = c;
	h->conns = c;
	h->nconns++;
	conn_timer(c, T_HEADER);
	accept_update(h);
	return 0;
fail:
	if (c && c->timer)
		event_free(c->timer);
	free(c);
	bufferevent_free(bev);
	return -ENOMEM;
}

/*
 * The server.
 */

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	struct symd_http *h = arg;
	struct bufferevent *bev;
	struct conn *victim;
	int one = 1;

	if (h->nconns >= h->o.max_conns) {
		victim = find_victim(h);
		if (!victim) {		/* it went busy meanwhile */
			close(fd);
			return;
		}
		evict(victim);
	}

	/* Head and file body are two writes: no Nagle delay between. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	bev = bufferevent_socket_new(h->base, fd, BEV_OPT_CLOSE_ON_FREE |
				     BEV_OPT_DEFER_CALLBACKS);
	if (!bev) {
		close(fd);
		return;
	}
	(void)conn_new(h, bev, sa, (socklen_t)salen);
}

/* accept() failed for want of descriptors or memory.  The client stays
 * in the backlog and the listener would wake us again at once: spinning.
 * Pause accepting for a while instead. */
static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct symd_http *h = arg;
	struct timeval tv = ms_tv(RELISTEN_MS);

	evtimer_add(h->relisten, &tv);
	accept_update(h);
}

static void relisten_cb(evutil_socket_t fd, short what, void *arg)
{
	accept_update(arg);
}

static void done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct symd_http *h = arg;
	symd_http_shutdown_fn done = h->done;

	if (h->nconns || !done)
		return;
	h->done = NULL;
	done(h, h->done_ctx);
}

int symd_http_new(struct event_base *base, const struct symd_http_opts *opts,
		  struct symd_http **out)
{
	struct symd_http *h;

	*out = NULL;
	if (!opts || !opts->on_request)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->base = base;
	h->o = *opts;
#define DEFAULT(f, v) if (!h->o.f) h->o.f = (v)
	DEFAULT(max_header_bytes, SYMD_HTTP_DEFAULT_MAX_HEADER);
	DEFAULT(max_url_bytes, SYMD_HTTP_DEFAULT_MAX_URL);
	DEFAULT(max_conns, SYMD_HTTP_DEFAULT_MAX_CONNS);
	DEFAULT(header_timeout_ms, SYMD_HTTP_DEFAULT_HEADER_MS);
	DEFAULT(body_timeout_ms, SYMD_HTTP_DEFAULT_BODY_MS);
	DEFAULT(idle_timeout_ms, SYMD_HTTP_DEFAULT_IDLE_MS);
	DEFAULT(write_timeout_ms, SYMD_HTTP_DEFAULT_WRITE_MS);
	DEFAULT(body_deadline_ms, SYMD_HTTP_DEFAULT_BODY_DEADLINE_MS);
	DEFAULT(min_rate, SYMD_HTTP_DEFAULT_MIN_RATE);
	DEFAULT(rate_window_ms, SYMD_HTTP_DEFAULT_RATE_WINDOW_MS);
	DEFAULT(max_buffered, SYMD_HTTP_DEFAULT_MAX_BUFFERED);
#undef DEFAULT
	h->accepting = true;
	h->relisten = evtimer_new(base, relisten_cb, h);
	h->recheck = evtimer_new(base, relisten_cb, h);
	h->done_ev = event_new(base, -1, 0, done_cb, h);
	if (!h->relisten || !h->recheck || !h->done_ev) {
		symd_http_free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

int symd_http_listen(struct symd_http *h, const char *addr, unsigned port,
		     unsigned *bound_port)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct evconnlistener *l;
	char pstr[8];
	int err;

	if (port > 65535)
		return -EINVAL;
	if (h->shutting)
		return -ESHUTDOWN;
	if (h->nlis == SYMD_HTTP_MAX_LISTEN)
		return -ENOSPC;
	snprintf(pstr, sizeof(pstr), "%u", port);
	if (getaddrinfo(addr, pstr, &hints, &ai) || !ai)
		return -EADDRNOTAVAIL;
	errno = 0;
	l = evconnlistener_new_bind(h->base, accept_cb, h,
				    LEV_OPT_CLOSE_ON_FREE |
				    LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
				    LISTEN_BACKLOG, ai->ai_addr,
				    (int)ai->ai_addrlen);
	if (!l) {
		err = errno ? -errno : -EADDRINUSE;
		goto out;
	}
	evconnlistener_set_error_cb(l, accept_error_cb);
	if (!h->accepting)
		evconnlistener_disable(l);
	h->lis[h->nlis++] = l;
	if (bound_port) {
		*bound_port = 0;
		if (getsockname(evconnlistener_get_fd(l), (void *)&ss,
				&sl) == 0)
			*bound_port = ntohs(ss.ss_family == AF_INET6 ?
				((struct sockaddr_in6 *)&ss)->sin6_port :
				((struct sockaddr_in *)&ss)->sin_port);
	}
	err = 0;
out:
	freeaddrinfo(ai);
	return err;
}

int symd_http_adopt_bev(struct symd_http *h, struct bufferevent *bev)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = bufferevent_getfd(bev), err;

	if (h->shutting) {
		bufferevent_free(bev);
		return -ESHUTDOWN;
	}
	if (fd < 0 || getpeername(fd, (void *)&ss, &sl) < 0)
		ss.ss_family = AF_UNSPEC;
	err = conn_new(h, bev, (void *)&ss, sl);
	if (!err)	/* it may hold input already */
		conn_kick(h->conns);
	return err;
}

void symd_http_shutdown(struct symd_http *h, symd_http_shutdown_fn done,
			void *ctx)
{
	h->done = done;
	h->done_ctx = ctx;
	if (!h->shutting) {
		struct conn *c, *next;

		h->shutting = true;
		for (unsigned i = 0; i < h->nlis; i++)
			evconnlistener_free(h->lis[i]);
		h->nlis = 0;
		/* Idle: no request started.  The others close after
		 * their reply (req_done()) or linger out. */
		for (c = h->conns; c; c = next) {
			next = c->next;
			if (!c->req && !c->linger)
				conn_free(c);
		}
	}
	if (!h->nconns)
		event_active(h->done_ev, EV_TIMEOUT, 1);
}

void symd_http_free(struct symd_http *h)
{
	if (!h)
		return;
	h->shutting = true;
	for (unsigned i = 0; i < h->nlis; i++)
		evconnlistener_free(h->lis[i]);
	h->nlis = 0;
	while (h->conns)
		conn_free(h->conns);
	if (h->relisten)
		event_free(h->relisten);
	if (h->recheck)
		event_free(h->recheck);
	if (h->done_ev)
		event_free(h->done_ev);
	free(h);
}

unsigned symd_http_conns(const struct symd_http *h)
{
	return h->nconns;
}

size_t symd_http_buffered(const struct symd_http *h)
{
	return h->buffered;
}

/*
 * Accessors.
 */

const char *symd_http_req_method(const struct symd_http_req *r)
{
	return r->have_method ? http_method_str(r->method) : "";
}

const char *symd_http_req_path(const struct symd_http_req *r)
{
	return r->head.p && r->part != P_URL ? r->head.p : "";
}

const char *symd_http_req_query(const struct symd_http_req *r)
{
	return r->query && r->part != P_URL ? r->head.p + r->query : NULL;
}

const char *symd_http_req_header(const struct symd_http_req *r,
				 const char *name)
{
	const char *p;

	if (r->part != P_END)
		return NULL;
	p = r->head.p + r->hdrs;
	for (unsigned i = 0; i < r->nhdr; i++) {
		const char *v = p + strlen(p) + 1;

		if (strcasecmp(p, name) == 0)
			return v;
		p = v + strlen(v) + 1;
	}
	return NULL;
}

int symd_http_req_content_length(const struct symd_http_req *r,
				 uint64_t *len)
{
	if (!r->has_clen)
		return -ENOENT;
	*len = r->clen;
	return 0;
}

const char *symd_http_req_peer(const struct symd_http_req *r)
{
	return r->conn->peer;
}

uint64_t symd_http_req_start_us(const struct symd_http_req *r)
{
	return r->start_us;
}

uint64_t symd_http_req_id(const struct symd_http_req *r)
{
	return r->id;
}

uint64_t symd_http_req_bytes_sent(const struct symd_http_req *r)
{
	return r->body_bytes;
}

void symd_http_req_set_user(struct symd_http_req *r, void *user)
{
	r->user = user;
}

void *symd_http_req_user(const struct symd_http_req *r)
{
	return r->user;
}

void symd_http_req_on_abort(struct symd_http_req *r, symd_http_req_fn fn)
{
	r->on_abort = fn;
}

/*
 * Bodies.
 */

static int body_mode(struct symd_http_req *r, enum body_mode mode)
{
	struct conn *c = r->conn;

	r->mode = mode;
	if (r->has_body && !r->msg_done) {
		if (r->expect) {
			static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

			r->expect = false;
			if (evbuffer_add(bufferevent_get_output(c->bev), cont,
					 sizeof(cont) - 1))
				return -ENOMEM;
		}
		body_clock(c, true);
	}
	conn_kick(c);		/* the parser may wait for this decision */
	return 0;
}

static int body_check(const struct symd_http_req *r)
{
	if (r->aborted)
		return -ECANCELED;
	return r->mode != BODY_NONE || r->status ? -EALREADY : 0;
}

int symd_http_req_buffer_body(struct symd_http_req *r, size_t limit,
			      symd_http_req_fn on_complete)
{
	int err = body_check(r);

	if (err)
		return err;
	if (r->has_clen && r->clen > limit)
		return -EFBIG;
	/* Bytes are charged as they come; a length that cannot fit in
	 * what is left of the budget is refused before any is read. */
	if (r->has_clen &&
	    r->clen > r->conn->http->o.max_buffered - r->conn->http->buffered)
		return -EBUSY;
	r->body = evbuffer_new();
	if (!r->body)
		return -ENOMEM;
	r->limit = limit;
	r->on_complete = on_complete;
	return body_mode(r, BODY_BUFFER);
}

struct evbuffer *symd_http_req_body(struct symd_http_req *r)
{
	return r->body;
}

int symd_http_req_stream_body(struct symd_http_req *r,
			      symd_http_body_fn on_body,
			      symd_http_req_fn on_complete)
{
	int err = body_check(r);

	if (err)
		return err;
	r->on_body = on_body;
	r->on_complete = on_complete;
	return body_mode(r, BODY_STREAM);
}

void symd_http_req_pause(struct symd_http_req *r)
{
	if (r->mode != BODY_STREAM || r->msg_done || r->status || r->paused)
		return;
	r->paused = true;
	conn_timer(r->conn, T_NONE);
}

void symd_http_req_resume(struct symd_http_req *r)
{
	if (!r->paused)
		return;
	r->paused = false;
	if (!r->status && !r->aborted)
		body_clock(r->conn, false);
	conn_kick(r->conn);
}

/*
 * Replies.
 */

static const struct {
	int status;
	const char *text;
} reasons[] = {
	{ 200, "OK" }, { 201, "Created" }, { 202, "Accepted" },
	{ 204, "No Content" }, { 206, "Partial Content" },
	{ 304, "Not Modified" }, { 400, "Bad Request" },
	{ 401, "Unauthorized" }, { 403, "Forbidden" }, { 404, "Not Found" },
	{ 405, "Method Not Allowed" }, { 408, "Request Timeout" },
	{ 409, "Conflict" }, { 411, "Length Required" },
	{ 413, "Content Too Large" }, { 414, "URI Too Long" },
	{ 415, "Unsupported Media Type" }, { 416, "Range Not Satisfiable" },
	{ 422, "Unprocessable Content" }, { 429, "Too Many Requests" },
	{ 431, "Request Header Fields Too Large" },
	{ 500, "Internal Server Error" }, { 501, "Not Implemented" },
	{ 502, "Bad Gateway" }, { 503, "Service Unavailable" },
	{ 504, "Gateway Timeout" }, { 505, "HTTP Version Not Supported" },
	{ 507, "Insufficient Storage" },
};

static const char *reason(int status)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].status == status)
			return reasons[i].text;
	return status < 300 ? "OK" : status < 400 ? "Redirection" :
	       status < 500 ? "Client Error" : "Server Error";
}

static int reply_check(const struct symd_http_req *r, int status)
{
	if (r->aborted)
		return -ECANCELED;
	if (r->status)
		return -EALREADY;
	return status >= 200 && status <= 599 ? 0 : -EINVAL;
}

/*
 * Queue the reply: head, then @body's contents or the file segment @seg
 * (@clen bytes either way).  The head is built aside first, so that a
 * failure leaves the output untouched.
 */
static int req_send(struct symd_http_req *r, int status, const char *ctype,
		    struct evbuffer *body, struct evbuffer_file_segment *seg,
		    uint64_t clen)
{
	struct conn *c = r->conn;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	struct evbuffer *head = evbuffer_new();
	/* 204 and 304 have no body and (204) no Content-Length; a reply
	 * to HEAD has the Content-Length of the body it leaves out. */
	bool nobody = status == 204 || status == 304;
	bool send_body = !nobody &&
			 !(r->have_method && r->method == HTTP_HEAD);
	bool close = c->close || !r->msg_done || !r->keep_alive ||
		     c->http->shutting;
	int err = -ENOMEM;

	if (!head)
		return -ENOMEM;
	if (evbuffer_add_printf(head, "HTTP/1.1 %d %s\r\n", status,
				reason(status)) < 0 ||
	    (ctype && evbuffer_add_printf(head, "Content-Type: %s\r\n",
					  ctype) < 0) ||
	    (r->out_hdrs && evbuffer_add_buffer(head, r->out_hdrs)) ||
	    (status != 204 && evbuffer_add_printf(head, "Content-Length: %"
						  PRIu64 "\r\n", clen) < 0) ||
	    evbuffer_add_printf(head, "%s\r\n", close ?
				"Connection: close\r\n" : r->http10 ?
				"Connection: keep-alive\r\n" : "") < 0)
		goto out;
	/* From here nothing fails but the file segment's chain. */
	c->close = close;
	r->status = status;
	r->body_bytes = send_body ? clen : 0;
	r->paused = false;
	conn_timer(c, T_NONE);
	evbuffer_add_buffer(out, head);
	if (!send_body) {
		if (body)
			evbuffer_drain(body, evbuffer_get_length(body));
	} else if (body) {
		evbuffer_add_buffer(out, body);
	} else if (seg && clen &&
		   evbuffer_add_file_segment(out, seg, 0, (ev_off_t)clen)) {
		/* The head is out: the client gets a short reply, and the
		 * close tells it so. */
		c->close = true;
	}
	err = 0;
out:
	evbuffer_free(head);
	return err;
}

int symd_http_req_add_header(struct symd_http_req *r, const char *name,
			     const char *value)
{
	static const char *const ours[] = {
		"Content-Length", "Transfer-Encoding", "Connection",
	};

	if (r->status)
		return -EALREADY;
	if (!name[0] || name[strcspn(name, "\r\n: \t")] ||
	    value[strcspn(value, "\r\n")])
		return -EINVAL;
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (strcasecmp(name, ours[i]) == 0)
			return -EINVAL;
	if (!r->out_hdrs)
		r->out_hdrs = evbuffer_new();
	if (!r->out_hdrs ||
	    evbuffer_add_printf(r->out_hdrs, "%s: %s\r\n", name, value) < 0)
		return -ENOMEM;
	return 0;
}

int symd_http_req_reply(struct symd_http_req *r, int status,
			const char *content_type, struct evbuffer *body)
{
	int err = reply_check(r, status);

	if (err)
		return err;
	return req_send(r, status, content_type, body, NULL,
			body ? evbuffer_get_length(body) : 0);
}

/* {"error":"@msg"}, escaped by req.c's JSON writer (invalid UTF-8 comes
 * out as U+FFFD, so any bytes make valid JSON). */
static int reply_json(struct symd_http_req *r, int status, const char *msg)
{
	struct evbuffer *e = evbuffer_new();
	struct symi_buf b;
	int err = e ? 0 : -ENOMEM;

	symi_buf_init(&b, SYMD_REPLY_MAX);
	if (!err)
		err = symi_buf_add_lit(&b, "{\"error\":");
	if (!err)
		err = symd_json_add_cstr(&b, msg ? msg : "");
	if (!err)
		err = symi_buf_addc(&b, '}');
	if (!err && evbuffer_add(e, b.p, b.len))
		err = -ENOMEM;
	if (!err)
		err = req_send(r, status, "application/json", e, NULL, b.len);
	symi_buf_release(&b);
	if (e)
		evbuffer_free(e);
	return err;
}

int symd_http_req_reply_json_error(struct symd_http_req *r, int status,
				   const char *msg)
{
	int err = reply_check(r, status);

	return err ? err : reply_json(r, status, msg);
}

int symd_http_req_reply_file(struct symd_http_req *r, int status,
			     const char *content_type, int fd,
			     uint64_t offset, uint64_t length)
{
	struct evbuffer_file_segment *seg = NULL;
	struct stat st;
	int err = reply_check(r, status);

	if (err)
		goto out;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || offset > (uint64_t)st.st_size ||
	    length > (uint64_t)st.st_size - offset) {
		err = -EINVAL;
		goto out;
	}
	/* The segment owns the fd from here; the chain that sends it
	 * holds a reference of its own, so ours is dropped below. */
	seg = evbuffer_file_segment_new(fd, (ev_off_t)offset,
					(ev_off_t)length,
					EVBUF_FS_CLOSE_ON_FREE);
	if (!seg) {
		err = -ENOMEM;
		goto out;
	}
	fd = -1;
	err = req_send(r, status, content_type, NULL, seg, length);
out:
	if (seg)
		evbuffer_file_segment_free(seg);
	if (fd >= 0)
		close(fd);
	return err;
}
