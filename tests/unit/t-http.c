/*
 * t-http.c - the HTTP/1.1 server layer (symd/http.h) over real sockets.
 *
 * The servers run on 127.0.0.1, port 0, in an event loop thread of this
 * process; the test talks to them with blocking sockets from the main
 * thread and reads replies with http-parser.  Routes (route()) answer
 * with text that says what the server saw, so most checks are on the
 * replies.  Timeouts are short (200 ms headers and body, 400 ms idle) so
 * that the slow-client cases run fast.  The last test shuts the server
 * down with a request in flight; it also ends the loop thread.
 *
 * State the loop thread shares with the test is atomic (counters) or
 * handed over through the sockets (everything in replies).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <http_parser.h>

#include "tap.h"
#include "http.h"
#include "base.h"

#define BIG_BODY ((uint64_t)64 << 20)

static struct event_base *base;
/* srv3: srv with timeouts long enough that a starved thread on a loaded
 * machine never trips them, for the 64 MB stream. */
static struct symd_http *srv, *srv2, *srv3, *srv4;
static unsigned port, port2, port3, port4;
static char file_path[64] = "/tmp/t-http-XXXXXX";
static size_t file_len = (1u << 20) + 123;
static atomic_int aborts, dones_no_reply, api_errors, shutdown_done;

/* The body pattern: byte i of every test body. */
static unsigned char pat(uint64_t i)
{
	return (unsigned char)(i * 131 + (i >> 12));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* In sanitizer runtimes only; weak so that plain builds link. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

/* Live heap bytes of the process, in kB.  ASan keeps freed memory in a
 * quarantine, so its RSS says nothing about what is held; ask it. */
static long heap_kb(void)
{
	struct mallinfo2 mi;

	if (__sanitizer_get_current_allocated_bytes)
		return (long)(__sanitizer_get_current_allocated_bytes() >> 10);
	mi = mallinfo2();
	return (long)((mi.uordblks + mi.hblkhd) >> 10);
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/*
 * The server side: routes, on the loop thread.
 */

/* Per-request state of the routes; freed in on_done(), which comes
 * exactly once for every request that reached route(). */
struct ustate {
	struct event *ev;		/* deferred reply or resume */
	struct symd_http_req *req;
	uint64_t bytes, pieces, max, bad;
	unsigned pauses;
	int expect;
	char text[64];
};

static struct ustate *ustate(struct symd_http_req *req)
{
	struct ustate *u = calloc(1, sizeof(*u));

	u->req = req;
	symd_http_req_set_user(req, u);
	return u;
}

static void __attribute__((format(printf, 3, 4)))
reply_text(struct symd_http_req *req, int status, const char *fmt, ...)
{
	struct evbuffer *b = evbuffer_new();
	va_list ap;

	va_start(ap, fmt);
	evbuffer_add_vprintf(b, fmt, ap);
	va_end(ap);
	if (symd_http_req_reply(req, status, "text/plain", b))
		api_errors++;
	if (evbuffer_get_length(b))	/* the reply takes the contents */
		api_errors++;
	evbuffer_free(b);
}

static uint64_t qnum(struct symd_http_req *req, const char *key)
{
	const char *q = symd_http_req_query(req), *p;
	size_t n = strlen(key);

	for (p = q; p && (p = strstr(p, key)); p += n)
		if ((p == q || p[-1] == '&') && p[n] == '=')
			return strtoull(p + n + 1, NULL, 10);
	return 0;
}

static void on_abort(struct symd_http_req *req)
{
	aborts++;
}

static void on_done(struct symd_http_req *req, int status, uint64_t lat,
		    void *ctx)
{
	struct ustate *u = symd_http_req_user(req);

	if (!status)
		dones_no_reply++;
	if (u) {
		if (u->ev)
			event_free(u->ev);
		free(u);
	}
}

static void later_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ustate *u = arg;

	reply_text(u->req, 200, "%s", u->text);
}

static void shutdown_cb(struct symd_http *http, void *ctx)
{
	shutdown_done = 1;
	event_base_loopbreak(base);
}

static void buf_done(struct symd_http_req *req)
{
	struct evbuffer *b = symd_http_req_body(req);
	size_t len = evbuffer_get_length(b);

	reply_text(req, 200, "len=%zu body=%.*s", len, (int)(len < 40 ? len : 40),
		   (const char *)evbuffer_pullup(b, -1));
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ustate *u = arg;

	symd_http_req_resume(u->req);
}

static int stream_piece(struct symd_http_req *req, const void *data,
			size_t len)
{
	struct ustate *u = symd_http_req_user(req);
	const unsigned char *d = data;
	const char *path = symd_http_req_path(req);
	uint64_t before = u->bytes;

	for (size_t i = 0; i < len; i++)
		u->bad += d[i] != pat(u->bytes + i);
	u->bytes += len;
	u->pieces++;
	if (len > u->max)
		u->max = len;
	if (strcmp(path, "/fail") == 0) {
		if (qnum(req, "reply"))
			symd_http_req_reply_json_error(req, 422, "not elf");
		return -1;
	}
	if (strcmp(path, "/pause") == 0 &&
	    before >> 18 != u->bytes >> 18) {
		struct timeval tv = { 0, 1000 };

		/* every 256 KiB: stop, and go on 1 ms later */
		symd_http_req_pause(req);
		u->pauses++;
		if (!u->ev)
			u->ev = evtimer_new(base, resume_cb, u);
		evtimer_add(u->ev, &tv);
	}
	return 0;
}

static void stream_done(struct symd_http_req *req)
{
	struct ustate *u = symd_http_req_user(req);

	reply_text(req, 200, "bytes=%llu pieces=%llu max=%llu bad=%llu "
		   "pauses=%u expect=%d", (unsigned long long)u->bytes,
		   (unsigned long long)u->pieces, (unsigned long long)u->max,
		   (unsigned long long)u->bad, u->pauses, u->expect);
}

static void route(struct symd_http_req *req, void *ctx)
{
	const char *path = symd_http_req_path(req);
	const char *m = symd_http_req_method(req);
	const char *h = symd_http_req_header(req, "x-h");
	struct ustate *u;
	int err;

	symd_http_req_on_abort(req, on_abort);
	if (strcmp(path, "/hello") == 0) {
		if (strcmp(m, "GET") && strcmp(m, "HEAD")) {
			symd_http_req_reply_json_error(req, 405, "no");
			return;
		}
		if (symd_http_req_add_header(req, "X-Test", "yes") ||
		    symd_http_req_add_header(req, "X-Bad", "a\r\nb") != -EINVAL ||
		    symd_http_req_add_header(req, "Content-Length", "1") !=
		    -EINVAL)
			api_errors++;
		reply_text(req, 200, "hello\n");
	} else if (strcmp(path, "/echo") == 0) {
		const char *q = symd_http_req_query(req);

		reply_text(req, 200, "m=%s path=%s q=%s h=%s id=%llu peer=%s",
			   m, path, q ? q : "(none)", h ? h : "(none)",
			   (unsigned long long)symd_http_req_id(req),
			   symd_http_req_peer(req));
	} else if (strcmp(path, "/defer") == 0 ||
		   strcmp(path, "/shutdown") == 0) {
		struct timeval tv = { 0, 1000 * qnum(req, "ms") };

		u = ustate(req);
		snprintf(u->text, sizeof(u->text), "deferred %llu",
			 (unsigned long long)qnum(req, "tag"));
		u->ev = evtimer_new(base, later_cb, u);
		evtimer_add(u->ev, &tv);
		if (path[1] == 's')
			symd_http_shutdown(srv, shutdown_cb, NULL);
	} else if (strcmp(path, "/buf") == 0) {
		if (symd_http_req_buffer_body(req, 1 << 20, buf_done))
			api_errors++;
	} else if (strcmp(path, "/budget") == 0) {
		err = symd_http_req_buffer_body(req, 1 << 20, buf_done);
		if (err == -EBUSY)
			symd_http_req_reply_json_error(req, 503, "budget");
		else if (err)
			api_errors++;
	} else if (strcmp(path, "/small") == 0) {
		err = symd_http_req_buffer_body(req, 100, buf_done);
		if (err == -EFBIG)
			symd_http_req_reply_json_error(req, 413,
						       "body too large");
		else if (err)
			api_errors++;
	} else if (strcmp(path, "/stream") == 0 ||
		   strcmp(path, "/pause") == 0 || strcmp(path, "/fail") == 0) {
		u = ustate(req);
		u->expect = symd_http_req_header(req, "expect") != NULL;
		if (symd_http_req_stream_body(req, stream_piece, stream_done) ||
		    symd_http_req_stream_body(req, stream_piece, stream_done) !=
		    -EALREADY)
			api_errors++;
	} else if (strcmp(path, "/deny") == 0) {
		symd_http_req_reply_json_error(req, 401, "no token");
	} else if (strcmp(path, "/file") == 0) {
		uint64_t off = qnum(req, "off"), len = qnum(req, "len");
		int fd = open(file_path, O_RDONLY | O_CLOEXEC);

		if (!len)
			len = file_len - off;
		err = symd_http_req_reply_file(req, 200,
					       "application/octet-stream", fd,
					       off, len);
		if (err == -EINVAL)
			symd_http_req_reply_json_error(req, 416, "range");
		else if (err)
			api_errors++;
	} else if (strcmp(path, "/esc") == 0) {
		symd_http_req_reply_json_error(req, 400,
					       "q\"b\\s\n\x01 \xc3\xa9 \xff end");
	} else if (strcmp(path, "/hang") == 0) {
		/* never answered: the client resets */
	} else {
		symd_http_req_reply_json_error(req, 404, "no such route");
	}
}

static void *loop_main(void *arg)
{
	event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

/*
 * The client side, on the main thread.
 */

struct cli {
	int fd;
	size_t len;		/* bytes in buf not parsed yet */
	char buf[65536];
};

struct resp {
	http_parser p;
	int status;
	bool head, done, in_value;
	char hdrs[4096];	/* "\nname: value" lines, names lowercased */
	size_t hlen;
	char *body;
	size_t blen;
};

static int cli_open(struct cli *c, unsigned p)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(p) };
	struct timeval tv = { 30, 0 };	/* a safety net: a loaded CI machine is slow */

	c->len = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(c->fd, (void *)&sa, sizeof(sa)) < 0) {
		close(c->fd);
		c->fd = -1;
		return -errno;
	}
	return 0;
}

static void cli_close(struct cli *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int cli_send(struct cli *c, const void *p, size_t n)
{
	while (n) {
		ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

static int __attribute__((format(printf, 2, 3)))
cli_sendf(struct cli *c, const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return cli_send(c, buf, (size_t)n);
}

static void hdr_add(struct resp *r, const char *s, size_t n, bool lower)
{
	for (size_t i = 0; i < n && r->hlen + 1 < sizeof(r->hdrs); i++)
		r->hdrs[r->hlen++] = lower && s[i] >= 'A' && s[i] <= 'Z' ?
				     s[i] + 32 : s[i];
	r->hdrs[r->hlen] = '\0';
}

static int rp_field(http_parser *p, const char *at, size_t n)
{
	struct resp *r = p->data;

	if (r->in_value || !r->hlen)
		hdr_add(r, "\n", 1, false);
	r->in_value = false;
	hdr_add(r, at, n, true);
	return 0;
}

static int rp_value(http_parser *p, const char *at, size_t n)
{
	struct resp *r = p->data;

	if (!r->in_value)
		hdr_add(r, ": ", 2, false);
	r->in_value = true;
	hdr_add(r, at, n, false);
	return 0;
}

static int rp_headers(http_parser *p)
{
	struct resp *r = p->data;

	hdr_add(r, "\n", 1, false);
	r->status = p->status_code;
	return r->head && p->status_code != 100;	/* 1: no body */
}

static int rp_body(http_parser *p, const char *at, size_t n)
{
	struct resp *r = p->data;

	r->body = realloc(r->body, r->blen + n + 1);
	memcpy(r->body + r->blen, at, n);
	r->blen += n;
	r->body[r->blen] = '\0';
	return 0;
}

static int rp_complete(http_parser *p)
{
	((struct resp *)p->data)->done = true;
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings rp_settings = {
	.on_header_field = rp_field,
	.on_header_value = rp_value,
	.on_headers_complete = rp_headers,
	.on_body = rp_body,
	.on_message_complete = rp_complete,
};

static void resp_reset(struct resp *r, bool head)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
	r->head = head;
	http_parser_init(&r->p, HTTP_RESPONSE);
	r->p.data = r;
}

/* Read one response (HEAD: @head, no body); 0 or -1. */
static int cli_read(struct cli *c, struct resp *r, bool head)
{
	resp_reset(r, head);
	for (;;) {
		if (c->len) {
			size_t n = http_parser_execute(&r->p, &rp_settings,
						       c->buf, c->len);

			memmove(c->buf, c->buf + n, c->len - n);
			c->len -= n;
			if (r->done)
				return 0;
			if (HTTP_PARSER_ERRNO(&r->p) != HPE_OK) {
				printf("# response parse error: %s\n",
				       http_errno_description(
					       HTTP_PARSER_ERRNO(&r->p)));
				return -1;
			}
		}
		ssize_t n = recv(c->fd, c->buf + c->len,
				 sizeof(c->buf) - c->len, 0);

		if (n <= 0)
			return -1;
		c->len += (size_t)n;
	}
}

/* The value of header @name (lowercase) of @r, copied; NULL if none. */
static const char *resp_header(const struct resp *r, const char *name)
{
	static char val[256];
	char key[64];
	const char *p, *e;

	snprintf(key, sizeof(key), "\n%s: ", name);
	p = strstr(r->hdrs, key);
	if (!p)
		return NULL;
	p += strlen(key);
	e = strchr(p, '\n');
	snprintf(val, sizeof(val), "%.*s", (int)(e - p), p);
	return val;
}

static bool hdr_is(const struct resp *r, const char *name, const char *v)
{
	const char *h = resp_header(r, name);

	return h && strcmp(h, v) == 0;
}

/* 1 if the server closes within @ms (FIN or reset), 0 if it sends
 * something, -1 if nothing happens. */
static int cli_wait_eof(struct cli *c, int ms)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	char b[256];
	ssize_t n;

	if (c->len)
		return 0;
	if (poll(&pfd, 1, ms) <= 0)
		return -1;
	n = recv(c->fd, b, sizeof(b), 0);
	return n > 0 ? 0 : 1;
}

/* Send @req on a new connection, read one reply into @r, and tell
 * whether the server then closed. */
static int one_shot(struct resp *r, const char *req, bool *closed)
{
	struct cli c;
	int err = cli_open(&c, port);

	if (!err)
		err = cli_send(&c, req, strlen(req));
	if (!err)
		err = cli_read(&c, r, false);
	if (closed)
		*closed = !err && cli_wait_eof(&c, 1000) == 1;
	cli_close(&c);
	return err;
}

static bool body_is(const struct resp *r, const char *s)
{
	return r->body && strcmp(r->body, s) == 0;
}

static bool body_has(const struct resp *r, const char *s)
{
	return r->body && strstr(r->body, s);
}

/*
 * The tests.
 */

static void test_api(void)
{
	struct symd_http_opts o = { 0 };
	struct symd_http *h = (void *)1;
	unsigned p = 1;

	CHECK_ERR(symd_http_new(base, &o, &h), -EINVAL);
	CHECK(h == NULL);
	CHECK_ERR(symd_http_listen(srv, "127.0.0.1", 70000, &p), -EINVAL);
	CHECK_ERR(symd_http_listen(srv, "127.0.0.1", port, NULL),
		  -EADDRINUSE);
	symd_http_free(NULL);
}

static void test_get_head_keepalive(void)
{
	struct cli c;
	struct resp r = { 0 };
	char want[64];

	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	CHECK(body_is(&r, "hello\n"));
	CHECK(hdr_is(&r, "content-length", "6"));
	CHECK(hdr_is(&r, "content-type", "text/plain"));
	CHECK(hdr_is(&r, "x-test", "yes"));
	CHECK(!resp_header(&r, "x-bad"));
	CHECK(!resp_header(&r, "connection"));	/* 1.1: keep-alive */

	/* same socket: HEAD has the length and no body */
	cli_sendf(&c, "HEAD /hello HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, true) == 0 && r.status == 200);
	CHECK(r.blen == 0 && hdr_is(&r, "content-length", "6"));

	/* and still the same socket: accessors */
	cli_sendf(&c, "GET /echo?a=1&b HTTP/1.1\r\nX-H: \t v v \t\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	CHECK(body_has(&r, "m=GET path=/echo q=a=1&b h=v v id="));
	CHECK(body_has(&r, " peer=127.0.0.1:"));
	cli_sendf(&c, "GET /echo HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && body_has(&r, "q=(none) h=(none)"));

	/* methods are the caller's */
	cli_sendf(&c, "PATCH /hello HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 405);
	cli_sendf(&c, "GET /nowhere HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 404);
	CHECK(body_is(&r, "{\"error\":\"no such route\"}"));
	CHECK(hdr_is(&r, "content-type", "application/json"));

	/* JSON escaping, and invalid UTF-8 as U+FFFD (req.c's writer) */
	cli_sendf(&c, "GET /esc HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 400);
	CHECK(body_is(&r, "{\"error\":\"q\\\"b\\\\s\\n\\u0001 \xc3\xa9 "
		      "\xef\xbf\xbd end\"}"));
	snprintf(want, sizeof(want), "%zu", r.blen);
	CHECK(hdr_is(&r, "content-length", want));
	CHECK(!resp_header(&r, "connection"));	/* a caller's 400 keeps it */
	cli_close(&c);
	resp_reset(&r, false);
}

static void test_http10_and_close(void)
{
	struct cli c;
	struct resp r = { 0 };
	bool closed;

	CHECK(one_shot(&r, "GET /hello HTTP/1.0\r\n\r\n", &closed) == 0);
	CHECK(r.status == 200 && hdr_is(&r, "connection", "close") && closed);
	CHECK(one_shot(&r, "GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n",
		       &closed) == 0);
	CHECK(r.status == 200 && hdr_is(&r, "connection", "close") && closed);

	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 &&
	      hdr_is(&r, "connection", "keep-alive"));
	cli_sendf(&c, "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	cli_close(&c);
	resp_reset(&r, false);
}

static void test_pipeline(void)
{
	struct cli c;
	struct resp r = { 0 };
	unsigned long long id2 = 0, id3 = 0;

	/* The first is answered 100 ms later: the others must wait. */
	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "GET /defer?ms=100&tag=1 HTTP/1.1\r\n\r\n"
		  "GET /echo?2 HTTP/1.1\r\n\r\n"
		  "HEAD /hello HTTP/1.1\r\n\r\n"
		  "GET /echo?3 HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && body_is(&r, "deferred 1"));
	CHECK(cli_read(&c, &r, false) == 0 && body_has(&r, "q=2 "));
	if (r.body && strstr(r.body, "id="))
		id2 = strtoull(strstr(r.body, "id=") + 3, NULL, 10);
	CHECK(cli_read(&c, &r, true) == 0 && r.status == 200 && !r.blen);
	CHECK(cli_read(&c, &r, false) == 0 && body_has(&r, "q=3 "));
	if (r.body && strstr(r.body, "id="))
		id3 = strtoull(strstr(r.body, "id=") + 3, NULL, 10);
	CHECK(id2 && id3 == id2 + 2);
	cli_close(&c);
	resp_reset(&r, false);
}

static void test_chunked_and_continue(void)
{
	struct cli c;
	struct resp r = { 0 };
	char buf[300];
	bool closed;

	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "PUT /buf HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "5\r\nhello\r\n6;ext=1\r\n wor");
	usleep(20000);		/* a chunk split across reads */
	cli_sendf(&c, "ld\r\n0\r\nX-Trailer: t\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	CHECK(body_is(&r, "len=11 body=hello world"));

	/* Expect: 100-continue, on the same connection */
	cli_sendf(&c, "PUT /buf HTTP/1.1\r\nContent-Length: 5\r\n"
		  "Expect: 100-continue\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 100);
	cli_sendf(&c, "abcde");
	CHECK(cli_read(&c, &r, false) == 0 && body_is(&r, "len=5 body=abcde"));

	/* a chunked stream in the pattern */
	cli_sendf(&c, "PUT /stream HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
		  "\r\n");
	for (int i = 0, off = 0; i < 3; i++) {
		int n = 100 * (i + 1);

		for (int k = 0; k < n; k++)
			buf[k] = (char)pat((uint64_t)(off + k));
		cli_sendf(&c, "%x\r\n", n);
		cli_send(&c, buf, (size_t)n);
		cli_sendf(&c, "\r\n");
		off += n;
	}
	cli_sendf(&c, "0\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 &&
	      body_has(&r, "bytes=600 pieces=3 max=300 bad=0"));
	cli_close(&c);

	/* An early reply: no 100, then close. */
	CHECK(one_shot(&r, "PUT /deny HTTP/1.1\r\nContent-Length: 1000000\r\n"
		       "Expect: 100-continue\r\n\r\n", &closed) == 0);
	CHECK(r.status == 401 && body_is(&r, "{\"error\":\"no token\"}"));
	CHECK(hdr_is(&r, "connection", "close") && closed);
	/* The same while the client sends its body anyway. */
	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "PUT /deny HTTP/1.1\r\nContent-Length: 300000\r\n\r\n");
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 100; i++)
		cli_send(&c, buf, sizeof(buf));
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 401);
	CHECK(cli_wait_eof(&c, 1000) == 1);
	cli_close(&c);
	resp_reset(&r, false);
}

static void test_limits(void)
{
	struct resp r = { 0 };
	char req[8192];
	struct cli c;
	bool closed;
	int n;

	/* Content-Length over the buffered limit: the caller's 413 */
	CHECK(one_shot(&r, "PUT /small HTTP/1.1\r\nContent-Length: 1000\r\n\r\n",
		       &closed) == 0);
	CHECK(r.status == 413 && body_is(&r, "{\"error\":\"body too large\"}"));
	CHECK(closed);

	/* chunked, over it midway: the layer's 413, and on_abort() */
	n = aborts;
	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "PUT /small HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
		  "\r\n");
	memset(req, 'y', 64);
	for (int i = 0; i < 2; i++) {
		cli_sendf(&c, "40\r\n");
		cli_send(&c, req, 64);
		cli_sendf(&c, "\r\n");
	}
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 413);
	CHECK(body_has(&r, "{\"error\":\""));
	CHECK(hdr_is(&r, "connection", "close"));
	CHECK(cli_wait_eof(&c, 1000) == 1);
	CHECK(aborts == n + 1);
	cli_close(&c);

	/* headers over max_header_bytes (4096) */
	n = snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nX-Big: ");
	memset(req + n, 'a', 5000);
	snprintf(req + n + 5000, sizeof(req) - (size_t)n - 5000, "\r\n\r\n");
	CHECK(one_shot(&r, req, &closed) == 0 && r.status == 431 && closed);
	CHECK(body_has(&r, "{\"error\":"));
	/* a target over max_url_bytes (1024) */
	n = snprintf(req, sizeof(req), "GET /");
	memset(req + n, 'u', 2000);
	snprintf(req + n + 2000, sizeof(req) - (size_t)n - 2000,
		 " HTTP/1.1\r\n\r\n");
	CHECK(one_shot(&r, req, &closed) == 0 && r.status == 414 && closed);
	/* just under the header limit is fine */
	n = snprintf(req, sizeof(req), "GET /hello HTTP/1.1\r\nX-Big: ");
	memset(req + n, 'a', 3900);
	snprintf(req + n + 3900, sizeof(req) - (size_t)n - 3900, "\r\n\r\n");
	CHECK(one_shot(&r, req, NULL) == 0 && r.status == 200);

	/* malformed requests: 400 (or 505) and close */
	static const struct { const char *req; int status; } bad[] = {
		{ "GARBAGE\r\n\r\n", 400 },
		{ "GET / HTTP/1.1 junk\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nNo colon\r\n\r\n", 400 },
		{ "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400 },
		{ "PUT /buf HTTP/1.1\r\nContent-Length: 1\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n", 400 },
		{ "PUT /buf HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "zz\r\n", 400 },
		{ "GET / HTTP/2.0\r\n\r\n", 505 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(one_shot(&r, bad[i].req, &closed) == 0 &&
		      r.status == bad[i].status && closed);
		if (r.status != bad[i].status)
			printf("#   case %zu: got %d\n", i, r.status);
	}
	/* and the server still answers */
	CHECK(one_shot(&r, "GET /hello HTTP/1.1\r\n\r\n", NULL) == 0 &&
	      r.status == 200);
	resp_reset(&r, false);
}

static void test_timeouts(void)
{
	struct resp r = { 0 };
	struct cli c;
	uint64_t t0;
	int n, got = -1;

	/* slow loris: a byte every 50 ms does not extend the 200 ms */
	CHECK_ERR(cli_open(&c, port), 0);
	t0 = now_ms();
	cli_sendf(&c, "GET /hello HTTP/1.1\r\n");
	for (int i = 0; i < 40 && got < 0; i++) {
		struct pollfd pfd = { .fd = c.fd, .events = POLLIN };

		send(c.fd, "X", 1, MSG_NOSIGNAL);
		if (poll(&pfd, 1, 50) > 0)
			got = cli_read(&c, &r, false);
	}
	CHECK(got == 0 && r.status == 408);
	CHECK(now_ms() - t0 < 800);
	printf("# slow headers cut after %llu ms\n",
	       (unsigned long long)(now_ms() - t0));
	CHECK(cli_wait_eof(&c, 1000) == 1);
	cli_close(&c);

	/* connected, silent: closed without a word */
	CHECK_ERR(cli_open(&c, port), 0);
	t0 = now_ms();
	CHECK(cli_wait_eof(&c, 2000) == 1);
	CHECK(now_ms() - t0 < 800);
	cli_close(&c);

	/* a body that stops: 408 after 200 ms, and on_abort() */
	n = aborts;
	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "PUT /buf HTTP/1.1\r\nContent-Length: 100\r\n\r\n0123");
	t0 = now_ms();
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 408);
	CHECK(now_ms() - t0 < 800);
	CHECK(aborts == n + 1);
	cli_close(&c);

	/* keep-alive idle: closed after 400 ms */
	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "GET /hello HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	t0 = now_ms();
	CHECK(cli_wait_eof(&c, 2000) == 1);
	CHECK(now_ms() - t0 >= 300 && now_ms() - t0 < 1200);
	cli_close(&c);
	resp_reset(&r, false);
}

static void test_stream(void)
{
	static char block[65536];
	struct resp r = { 0 };
	struct cli c;
	long rss0, rss1, heap0, heap_max;
	char want[128];
	uint64_t t0 = now_ms();

	rss0 = rss_kb();
	heap0 = heap_max = heap_kb();
	CHECK_ERR(cli_open(&c, port3), 0);
	cli_sendf(&c, "PUT /stream HTTP/1.1\r\nContent-Length: %llu\r\n\r\n",
		  (unsigned long long)BIG_BODY);
	for (uint64_t off = 0; off < BIG_BODY; off += sizeof(block)) {
		for (size_t i = 0; i < sizeof(block); i++)
			block[i] = (char)pat(off + i);
		if (cli_send(&c, block, sizeof(block)))
			break;
		if (off % (1 << 20) == 0 && heap_kb() > heap_max)
			heap_max = heap_kb();
	}
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	rss1 = rss_kb();
	snprintf(want, sizeof(want), "bytes=%llu ",
		 (unsigned long long)BIG_BODY);
	CHECK(body_has(&r, want) && body_has(&r, " bad=0 "));
	printf("# 64 MB stream: %s; %llu ms; RSS %ld -> %ld kB, live heap "
	       "%ld kB, at most %ld kB during the upload\n",
	       r.body ? r.body : "", (unsigned long long)(now_ms() - t0),
	       rss0, rss1, heap0, heap_max);
	if (r.body && strstr(r.body, "pieces=")) {
		unsigned long long pieces, max;

		sscanf(strstr(r.body, "pieces="), "pieces=%llu max=%llu",
		       &pieces, &max);
		CHECK(pieces >= BIG_BODY / SYMD_HTTP_READ_MAX);
		CHECK(max <= SYMD_HTTP_READ_MAX);
	}
	/* the body went through, not into memory */
	CHECK(heap_max - heap0 < 4 * 1024);
	if (__sanitizer_get_current_allocated_bytes)
		printf("ok %d # skip RSS: the sanitizer's quarantine holds "
		       "freed memory\n", ++tap_n);
	else
		CHECK(rss0 > 0 && rss1 - rss0 < 16 * 1024);

	/* a consumer that pauses every 256 KiB */
	cli_sendf(&c, "PUT /pause HTTP/1.1\r\nContent-Length: %u\r\n\r\n",
		  4u << 20);
	for (uint64_t off = 0; off < (4u << 20); off += sizeof(block)) {
		for (size_t i = 0; i < sizeof(block); i++)
			block[i] = (char)pat(off + i);
		cli_send(&c, block, sizeof(block));
	}
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	CHECK(body_has(&r, "bytes=4194304 ") && body_has(&r, "bad=0 pauses=16"));
	printf("# paused stream: %s\n", r.body ? r.body : "");
	cli_close(&c);

	/* on_body() fails: 500 (or the caller's own reply), close */
	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "PUT /fail HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 500);
	CHECK(cli_wait_eof(&c, 1000) == 1);
	cli_close(&c);
	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "PUT /fail?reply=1 HTTP/1.1\r\nContent-Length: 10\r\n"
		  "\r\n12345");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 422);
	CHECK(body_is(&r, "{\"error\":\"not elf\"}"));
	CHECK(cli_wait_eof(&c, 1000) == 1);
	cli_close(&c);
	resp_reset(&r, false);
}

static int file_byte(size_t i)
{
	return (int)pat(i * 7);
}

static void test_file(void)
{
	struct resp r = { 0 };
	struct cli c;
	bool same = true;

	CHECK_ERR(cli_open(&c, port), 0);
	cli_sendf(&c, "GET /file HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	CHECK(r.blen == file_len);
	for (size_t i = 0; i < r.blen && same; i++)
		same = (unsigned char)r.body[i] == file_byte(i);
	CHECK(same);
	cli_sendf(&c, "GET /file?off=1000&len=500000 HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	CHECK(r.blen == 500000 && hdr_is(&r, "content-length", "500000"));
	for (size_t i = 0; i < r.blen && same; i++)
		same = (unsigned char)r.body[i] == file_byte(1000 + i);
	CHECK(same);
	cli_sendf(&c, "HEAD /file HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, true) == 0 && r.status == 200 && !r.blen);
	CHECK(hdr_is(&r, "content-length", "1048699"));
	cli_sendf(&c, "GET /file?off=1048000&len=5000 HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 416);
	cli_sendf(&c, "GET /file?off=1048699 HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200 && !r.blen);
	CHECK(hdr_is(&r, "content-length", "0"));
	cli_close(&c);
	resp_reset(&r, false);
}

static void test_abort_and_conns(void)
{
	struct linger lg = { 1, 0 };
	struct resp r = { 0 };
	struct cli a, b, c;
	int n = aborts, d = dones_no_reply;

	/* a reset while the reply is pending: on_abort(), on_done(0) */
	CHECK_ERR(cli_open(&a, port), 0);
	cli_sendf(&a, "GET /hang HTTP/1.1\r\n\r\n");
	usleep(50000);
	setsockopt(a.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	cli_close(&a);
	for (int i = 0; i < 100 && aborts == n; i++)
		usleep(10000);
	CHECK(aborts == n + 1 && dones_no_reply == d + 1);

	/* max_conns 2 (srv2): the third waits in the backlog */
	CHECK_ERR(cli_open(&a, port2), 0);
	CHECK_ERR(cli_open(&b, port2), 0);
	cli_sendf(&a, "GET /hello HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&a, &r, false) == 0 && r.status == 200);
	cli_sendf(&b, "GET /hello HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&b, &r, false) == 0 && r.status == 200);
	CHECK_ERR(cli_open(&c, port2), 0);
	cli_sendf(&c, "GET /hello HTTP/1.1\r\n\r\n");
	CHECK(cli_wait_eof(&c, 150) == -1);	/* not served yet */
	cli_close(&a);
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	cli_close(&b);
	cli_close(&c);
	resp_reset(&r, false);
}

/*
 * srv4: max_buffered 1000, min_rate 1000 bytes a second over windows of
 * 300 ms, body_deadline_ms 1500 (issue 24: clients that trickle).
 */
static void test_budgets(void)
{
	struct resp r = { 0 };
	struct cli c;
	uint64_t t0;
	int n;

	/* a Content-Length over what is left: 503 before any byte */
	CHECK_ERR(cli_open(&c, port4), 0);
	cli_sendf(&c, "PUT /budget HTTP/1.1\r\nContent-Length: 1001\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 503);
	cli_close(&c);
	/* a chunked body that grows past it: 503 + Retry-After */
	CHECK_ERR(cli_open(&c, port4), 0);
	cli_sendf(&c, "PUT /budget HTTP/1.1\r\nTransfer-Encoding: chunked"
		  "\r\n\r\n3e8\r\n");
	for (int i = 0; i < 10; i++)
		cli_sendf(&c, "%0100d", 0);
	cli_sendf(&c, "\r\n5\r\nhello\r\n0\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 503);
	CHECK(hdr_is(&r, "retry-after", "1"));
	cli_close(&c);
	/* its bytes came back: 1000 fit again */
	CHECK_ERR(cli_open(&c, port4), 0);
	cli_sendf(&c, "PUT /budget HTTP/1.1\r\nContent-Length: 1000\r\n\r\n");
	for (int i = 0; i < 10; i++)
		cli_sendf(&c, "%0100d", 0);
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	cli_close(&c);

	/* 10 bytes every 50 ms (200 B/s) keep the idle timer at bay but
	 * not the rate: 408 after the first window */
	n = aborts;
	CHECK_ERR(cli_open(&c, port4), 0);
	cli_sendf(&c, "PUT /budget HTTP/1.1\r\nContent-Length: 900\r\n\r\n");
	t0 = now_ms();
	for (int i = 0; i < 60; i++) {
		struct pollfd pfd = { .fd = c.fd, .events = POLLIN };

		send(c.fd, "0123456789", 10, MSG_NOSIGNAL);
		if (poll(&pfd, 1, 50) > 0)
			break;
	}
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 408);
	CHECK(body_has(&r, "slower than 1000 bytes"));
	CHECK(now_ms() - t0 < 2500);
	CHECK(aborts == n + 1);
	printf("# a trickling body cut after %llu ms\n",
	       (unsigned long long)(now_ms() - t0));
	cli_close(&c);
	resp_reset(&r, false);
}

/* max_conns 2 (srv2): a newcomer evicts the idle connection once it
 * has been idle 300 ms, and is served. */
static void test_evict(void)
{
	struct resp r = { 0 };
	struct cli a, b, c;

	CHECK_ERR(cli_open(&a, port2), 0);
	cli_sendf(&a, "GET /hello HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&a, &r, false) == 0 && r.status == 200);
	CHECK_ERR(cli_open(&b, port2), 0);
	cli_sendf(&b, "GET /hang HTTP/1.1\r\n\r\n");	/* never cut */
	usleep(400000);
	CHECK_ERR(cli_open(&c, port2), 0);
	cli_sendf(&c, "GET /hello HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&c, &r, false) == 0 && r.status == 200);
	CHECK(cli_wait_eof(&a, 1000) == 1);	/* the idle one went */
	CHECK(cli_wait_eof(&b, 100) == -1);	/* the busy one stays */
	cli_close(&a);
	cli_close(&b);
	cli_close(&c);
	resp_reset(&r, false);
}

static void test_curl(void)
{
	char cmd[512], out[512] = "", data[64];
	FILE *f;
	int fd;
	size_t n;

	if (system("curl --version >/dev/null 2>&1") != 0) {
		printf("ok %d # skip curl is not installed\n", ++tap_n);
		return;
	}
	snprintf(data, sizeof(data), "/tmp/t-http-put-XXXXXX");
	fd = mkstemp(data);
	for (uint64_t off = 0; off < (2u << 20); off += 4096) {
		unsigned char b[4096];

		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = pat(off + i);
		if (write(fd, b, sizeof(b)) != (ssize_t)sizeof(b))
			break;
	}
	close(fd);
	/* -T sends Expect: 100-continue for a body this size */
	/* -q: no ~/.curlrc; --noproxy: no http_proxy from the environment */
	snprintf(cmd, sizeof(cmd), "curl -q -sS --noproxy '*' -T %s "
		 "-w ' %%{http_code}' http://127.0.0.1:%u/stream 2>&1", data,
		 port);
	f = popen(cmd, "r");
	n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = '\0';
	if (f)
		pclose(f);
	CHECK(strstr(out, "bytes=2097152 ") && strstr(out, "bad=0 ") &&
	      strstr(out, "expect=1 200"));
	printf("# curl -T: %s\n", out);

	/* refused at once: curl gets the 401 without sending the body */
	snprintf(cmd, sizeof(cmd), "curl -q -sS --noproxy '*' -T %s "
		 "-w ' %%{http_code}' http://127.0.0.1:%u/deny 2>&1", data,
		 port);
	f = popen(cmd, "r");
	n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = '\0';
	if (f)
		pclose(f);
	CHECK(strstr(out, "{\"error\":\"no token\"} 401"));
	printf("# curl -T to /deny: %s\n", out);
	unlink(data);
}

static void test_shutdown(pthread_t loop)
{
	struct resp r = { 0 };
	struct cli idle, busy, late;

	CHECK_ERR(cli_open(&idle, port), 0);
	cli_sendf(&idle, "GET /hello HTTP/1.1\r\n\r\n");
	CHECK(cli_read(&idle, &r, false) == 0 && r.status == 200);
	/* /shutdown calls symd_http_shutdown() and answers 200 ms later */
	CHECK_ERR(cli_open(&busy, port), 0);
	cli_sendf(&busy, "GET /shutdown?ms=200&tag=7 HTTP/1.1\r\n\r\n");
	CHECK(cli_wait_eof(&idle, 1000) == 1);
	CHECK(cli_open(&late, port) == -ECONNREFUSED);
	CHECK(!shutdown_done);
	CHECK(cli_read(&busy, &r, false) == 0 && body_is(&r, "deferred 7"));
	CHECK(hdr_is(&r, "connection", "close"));
	CHECK(cli_wait_eof(&busy, 1000) == 1);
	cli_close(&busy);
	cli_close(&idle);
	for (int i = 0; i < 200 && !shutdown_done; i++)
		usleep(10000);
	CHECK(shutdown_done);
	pthread_join(loop, NULL);
	CHECK(symd_http_conns(srv) == 0);
	resp_reset(&r, false);
}

static int make_file(void)
{
	unsigned char *b = malloc(file_len);
	int fd = mkstemp(file_path);
	ssize_t w;

	if (fd < 0 || !b)
		return -1;
	for (size_t i = 0; i < file_len; i++)
		b[i] = (unsigned char)file_byte(i);
	w = write(fd, b, file_len);
	close(fd);
	free(b);
	return w == (ssize_t)file_len ? 0 : -1;
}

int main(void)
{
	struct symd_http_opts o = {
		.on_request = route,
		.on_done = on_done,
		.max_header_bytes = 4096,
		.max_url_bytes = 1024,
		.header_timeout_ms = 200,
		.body_timeout_ms = 200,
		.idle_timeout_ms = 400,
		.write_timeout_ms = 2000,
	};
	pthread_t loop;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	evthread_use_pthreads();
	base = event_base_new();
	if (!base || make_file())
		tap_skip_all("no event base or no temporary file");
	CHECK_ERR(symd_http_new(base, &o, &srv), 0);
	CHECK_ERR(symd_http_listen(srv, "127.0.0.1", 0, &port), 0);
	o.max_conns = 2;
	CHECK_ERR(symd_http_new(base, &o, &srv2), 0);
	CHECK_ERR(symd_http_listen(srv2, "127.0.0.1", 0, &port2), 0);
	CHECK(port && port2 && port != port2);
	o.max_conns = 0;
	o.body_timeout_ms = o.idle_timeout_ms = 30000;
	o.write_timeout_ms = 30000;
	CHECK_ERR(symd_http_new(base, &o, &srv3), 0);
	CHECK_ERR(symd_http_listen(srv3, "127.0.0.1", 0, &port3), 0);
	o.max_buffered = 1000;
	o.min_rate = 1000;
	o.rate_window_ms = 300;
	o.body_deadline_ms = 1500;
	CHECK_ERR(symd_http_new(base, &o, &srv4), 0);
	CHECK_ERR(symd_http_listen(srv4, "127.0.0.1", 0, &port4), 0);
	test_api();
	pthread_create(&loop, NULL, loop_main, NULL);

	test_get_head_keepalive();
	test_http10_and_close();
	test_pipeline();
	test_chunked_and_continue();
	test_limits();
	test_timeouts();
	test_stream();
	test_file();
	test_abort_and_conns();
	test_budgets();
	test_evict();
	test_curl();
	test_shutdown(loop);
	CHECK(api_errors == 0);

	symd_http_free(srv);
	symd_http_free(srv2);
	symd_http_free(srv3);
	symd_http_free(srv4);
	event_base_free(base);
	libevent_global_shutdown();
	unlink(file_path);
	return tap_done();
}
