/*
 * fuzz-http.c - one connection's bytes through the daemon's HTTP/1.1
 * server layer (symd/http.h), over a bufferevent pair: no sockets, no
 * files (the file reply comes from a memfd).
 *
 * Input: byte 0 picks how the rest is fed (bits 0-1: all at once, or in
 * slices of 1, 7 or 61 bytes, with the event loop run until idle after
 * each; bit 2: the client half-closes at the end; bit 3: the budget of
 * all buffered bodies, max_buffered, is 40 bytes, below the per-body
 * limit of /b, so that its 503s run).  The rest is what the client
 * sends.  Finally the server is freed with whatever is still in
 * flight.  No timer ever fires (the timeouts are seconds long and the
 * loop never waits), so a run is deterministic.
 *
 * The handler answers everything, by the first two bytes of the path:
 *   /s  stream the body; "p" in the query pauses after each piece and
 *       resumes from the loop; a '!' in the body fails on_body(), after
 *       replying 422 if the query has "r"
 *   /b  buffer the body, limit 64 (413 by Content-Length, or by the layer
 *       midway; 503 by Content-Length over the budget, or by the layer
 *       midway), reply with the body
 *   /c  choose to buffer later, from the loop (a deferred decision)
 *   /e  reply 401 at once, whatever the body
 *   /d  reply later, from the loop
 *   /n  never choose, never reply (freed at the end)
 *   /f  a file reply, offset and length from the query ("o=", "l=")
 *   /j  a JSON error whose message is the raw path and query
 *   else 200 with method, path, query and the X-A header, which is also
 *       sent back as a header
 *
 * Contracts (FUZZ_CHECK): all the client got parses as HTTP/1.1
 * responses (http-parser, response mode), one per on_done() with a
 * status, in order and with that status, interim 100s aside; replies to
 * HEAD have no body.  on_done() comes exactly once per request: each
 * dispatched request's state is freed there, so a second call is a
 * double free, a missing one a leak, and a callback after it a
 * use-after-free, all of which ASan reports.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <http_parser.h>

#include "fuzz.h"
#include "http.h"
#include "base.h"

#define MAX_DONE 8192

static struct event_base *base;
static struct symd_http *srv;
static int memfd = -1;
static long live;			/* dispatched, not yet done */
static struct {
	int status;
	bool head;
} dones[MAX_DONE];
static size_t ndone;

struct ustate {
	struct event *ev;		/* deferred work, see later_cb() */
	struct symd_http_req *req;
};

static bool query_has(struct symd_http_req *req, const char *s)
{
	const char *q = symd_http_req_query(req);

	return q && strstr(q, s);
}

static uint64_t query_num(struct symd_http_req *req, const char *key)
{
	const char *q = symd_http_req_query(req);
	const char *p = q ? strstr(q, key) : NULL;

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static void reply_text(struct symd_http_req *req, int status, const char *s)
{
	struct evbuffer *b = evbuffer_new();

	evbuffer_add(b, s, strlen(s));
	FUZZ_CHECK(symd_http_req_reply(req, status, "text/plain", b) == 0);
	FUZZ_CHECK(evbuffer_get_length(b) == 0);
	FUZZ_CHECK(symd_http_req_reply(req, status, NULL, NULL) ==
		   -EALREADY);
	evbuffer_free(b);
}

static void buf_done(struct symd_http_req *req)
{
	struct evbuffer *b = symd_http_req_body(req);

	FUZZ_CHECK(b && evbuffer_get_length(b) <= 64);
	FUZZ_CHECK(symd_http_req_reply(req, 200, "text/plain", b) == 0);
}

static void stream_done(struct symd_http_req *req)
{
	reply_text(req, 201, "stored");
}

static int stream_piece(struct symd_http_req *req, const void *data,
			size_t len)
{
	struct ustate *u = symd_http_req_user(req);

	FUZZ_CHECK(len > 0 && len <= SYMD_HTTP_READ_MAX);
	fuzz_sink += ((const unsigned char *)data)[len - 1];
	if (memchr(data, '!', len)) {
		if (query_has(req, "r"))
			symd_http_req_reply_json_error(req, 422, "bad");
		return -1;
	}
	if (query_has(req, "p")) {
		symd_http_req_pause(req);
		event_active(u->ev, EV_TIMEOUT, 1);
	}
	return 0;
}

/* The loop's turn: resume a paused body, take a deferred decision, or
 * make a deferred reply, by the path. */
/* Buffer the body, limit 64, or refuse it as the daemon does. */
static void buffer_or_refuse(struct symd_http_req *req)
{
	int err = symd_http_req_buffer_body(req, 64, buf_done);

	FUZZ_CHECK(err == 0 || err == -EFBIG || err == -EBUSY ||
		   err == -EALREADY || err == -ECANCELED);
	if (err == -EFBIG)
		symd_http_req_reply_json_error(req, 413, "too large");
	else if (err == -EBUSY)
		symd_http_req_reply_json_error(req, 503, "budget");
}

static void later_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ustate *u = arg;
	const char *path = symd_http_req_path(u->req);

	if (path[1] == 's')
		symd_http_req_resume(u->req);
	else if (path[1] == 'c')
		buffer_or_refuse(u->req);
	else if (path[1] == 'd')
		reply_text(u->req, 200, "later");
}

static void on_request(struct symd_http_req *req, void *ctx)
{
	const char *path = symd_http_req_path(req);
	struct ustate *u = calloc(1, sizeof(*u));
	struct evbuffer *b;
	const char *h;
	int err;

	FUZZ_CHECK(u);
	u->req = req;
	u->ev = event_new(base, -1, 0, later_cb, u);
	symd_http_req_set_user(req, u);
	live++;
	fuzz_touch_str(symd_http_req_method(req), 0);
	fuzz_touch_str(symd_http_req_peer(req), 0);
	switch (path[0] == '/' ? path[1] : 0) {
	case 's':
		FUZZ_CHECK(symd_http_req_stream_body(req, stream_piece,
						     stream_done) == 0);
		break;
	case 'b':
		err = symd_http_req_buffer_body(req, 64, buf_done);
		FUZZ_CHECK(err == 0 || err == -EFBIG || err == -EBUSY);
		if (err == -EFBIG)
			symd_http_req_reply_json_error(req, 413, "too large");
		else if (err)
			symd_http_req_reply_json_error(req, 503, "budget");
		break;
	case 'c':
	case 'd':
		event_active(u->ev, EV_TIMEOUT, 1);
		break;
	case 'e':
		symd_http_req_reply_json_error(req, 401, "no token");
		break;
	case 'n':
		break;
	case 'f':
		err = symd_http_req_reply_file(req, 200, NULL, dup(memfd),
					       query_num(req, "o="),
					       query_num(req, "l="));
		FUZZ_CHECK(err == 0 || err == -EINVAL);
		if (err)
			reply_text(req, 416, "range");
		break;
	case 'j':
		b = evbuffer_new();
		evbuffer_add_printf(b, "%s?%s", path,
				    symd_http_req_query(req) ?
				    symd_http_req_query(req) : "");
		evbuffer_add(b, "", 1);
		symd_http_req_reply_json_error(req, 400,
					       (char *)evbuffer_pullup(b, -1));
		evbuffer_free(b);
		break;
	default:
		h = symd_http_req_header(req, "x-a");
		if (h)
			FUZZ_CHECK(symd_http_req_add_header(req, "X-A", h) == 0);
		b = evbuffer_new();
		evbuffer_add_printf(b, "%s %s %s %s\n",
				    symd_http_req_method(req), path,
				    symd_http_req_query(req) ?
				    symd_http_req_query(req) : "-",
				    h ? h : "-");
		FUZZ_CHECK(symd_http_req_reply(req, 200, "text/plain", b) == 0);
		evbuffer_free(b);
	}
}

static void on_done(struct symd_http_req *req, int status, uint64_t lat,
		    void *ctx)
{
	struct ustate *u = symd_http_req_user(req);

	fuzz_touch_str(symd_http_req_path(req), 0);
	if (status && ndone < MAX_DONE) {
		dones[ndone].status = status;
		dones[ndone].head = strcmp(symd_http_req_method(req),
					   "HEAD") == 0;
		ndone++;
	}
	if (u) {
		event_free(u->ev);
		free(u);
		live--;
	}
}

/* The client's view: the replies must parse and match on_done(). */
struct check {
	size_t next;		/* index into dones[] */
	bool overflow;
};

static int rp_headers(http_parser *p)
{
	struct check *ck = p->data;

	if (p->status_code == 100)
		return 0;
	if (ck->next >= ndone) {
		ck->overflow = true;
		return 0;
	}
	FUZZ_CHECK(dones[ck->next].status == p->status_code);
	return dones[ck->next].head;	/* 1: no body follows */
}

static int rp_complete(http_parser *p)
{
	struct check *ck = p->data;

	if (p->status_code != 100)
		ck->next++;
	return 0;
}

static void check_replies(struct evbuffer *in)
{
	static const http_parser_settings s = {
		.on_headers_complete = rp_headers,
		.on_message_complete = rp_complete,
	};
	size_t len = evbuffer_get_length(in);
	const char *data = (const char *)evbuffer_pullup(in, -1);
	struct check ck = { 0 };
	http_parser p;
	size_t n;

	if (getenv("FUZZ_HTTP_DUMP"))	/* to look at a finding */
		fwrite(data, 1, len, stderr);
	http_parser_init(&p, HTTP_RESPONSE);
	p.data = &ck;
	n = http_parser_execute(&p, &s, data, len);
	if (ndone == MAX_DONE)
		return;		/* too many to follow; not a bug */
	FUZZ_CHECK(HTTP_PARSER_ERRNO(&p) == HPE_OK && n == len);
	FUZZ_CHECK(!ck.overflow && ck.next == ndone);
}

static void run_until_idle(void)
{
	for (int i = 0; i < 100000; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (!event_base_get_num_events(base, EVENT_BASE_COUNT_ACTIVE))
			return;
	}
	FUZZ_CHECK(!"the loop never goes idle");
}

static void make_memfd(void)
{
	unsigned char b[1000];

	memfd = memfd_create("fuzz-http", MFD_CLOEXEC);
	FUZZ_CHECK(memfd >= 0);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (unsigned char)i;
	FUZZ_CHECK(write(memfd, b, sizeof(b)) == (ssize_t)sizeof(b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t slices[] = { 0, 1, 7, 61 };
	struct symd_http_opts o = { .on_request = on_request,
				    .on_done = on_done,
				    .max_buffered = size && (data[0] & 8) ?
						    40 : 0 };
	struct bufferevent *pair[2];
	size_t slice;

	if (!size)
		return 0;
	if (memfd < 0)
		make_memfd();
	slice = slices[data[0] & 3];
	base = event_base_new();
	FUZZ_CHECK(base);
	FUZZ_CHECK(symd_http_new(base, &o, &srv) == 0);
	FUZZ_CHECK(bufferevent_pair_new(base, BEV_OPT_CLOSE_ON_FREE |
					BEV_OPT_DEFER_CALLBACKS, pair) == 0);
	FUZZ_CHECK(bufferevent_enable(pair[0], EV_READ) == 0);
	FUZZ_CHECK(symd_http_adopt_bev(srv, pair[1]) == 0);
	ndone = 0;

	for (size_t off = 1; off < size;) {
		size_t n = slice && size - off > slice ? slice : size - off;

		bufferevent_write(pair[0], data + off, n);
		off += n;
		run_until_idle();
	}
	run_until_idle();
	if (data[0] & 4) {
		bufferevent_flush(pair[0], EV_WRITE, BEV_FINISHED);
		run_until_idle();
	}
	symd_http_free(srv);
	FUZZ_CHECK(live == 0);
	check_replies(bufferevent_get_input(pair[0]));
	bufferevent_free(pair[0]);
	/* Deferred callbacks hold references to the bufferevents. */
	run_until_idle();
	event_base_free(base);
	base = NULL;
	return 0;
}
