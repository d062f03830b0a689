/*
 * symd-load.c - the load generator of tests/bench/symd-bench.sh.
 *
 *   symd-load [-c CONNS] [-w WARMUP_S] [-d SECONDS] [-r RECORDS]
 *             [-i INTERVAL_US] HOST:PORT BODIES
 *   symd-load -s RECORDS [-a FROM_NS] [-b TO_NS]
 *   symd-load -x ADDRFILE [-p PASSES] -- COMMAND [ARG]...
 *
 * Why a C client and not wrk: we want exact latency percentiles (every
 * request's latency is kept and sorted, not bucketed), every answer
 * checked (HTTP 200 and "status":"ok", else it is an error and its
 * addresses are not counted as answered), per-request time stamps so that
 * a window (the cold libjvm conversion) can be cut out after the fact,
 * and the llvm-symbolizer co-process driven by the same program.  wrk
 * with a Lua script can cycle bodies, but checking each body costs Lua
 * per response, and its latency histogram cannot be cut to a window.
 *
 * Load mode: CONNS (default 4) keep-alive HTTP/1.1 connections over
 * plain non-blocking sockets and epoll, one thread, closed loop: each
 * connection sends one request, reads the whole answer, sends the next.
 * BODIES has one request a line:
 *
 *   PATH NADDR JSON          e.g. /v1/symbolize/<id> 1000 {"addresses":...}
 *
 * Connection i starts at line i * lines / CONNS and cycles through the
 * file.  With -i, a connection starts a request at most every
 * INTERVAL_US microseconds (it waits when its answer came sooner; a slow
 * answer delays the next start, so a stall counts once, not once per
 * missed slot): a steady prober that leaves the server idle most of the
 * time, for latency under someone else's load (tests/bench/
 * symd-attack-bench.sh).  The first WARMUP_S seconds (default 0) are not counted; then
 * requests are counted for SECONDS (default 5; a request counts when it
 * starts and ends inside the window).  SIGINT or SIGTERM ends the run
 * early, as if the time were up.  At the end no new request is sent and
 * the answers in flight are read (for 10 s at most; not counted) before
 * the connections are closed: a well-behaved client, which never leaves
 * the server writing to a socket that is gone.  It prints one line of
 * key=value:
 *
 *   requests= addresses= errors= seconds= req_per_s= addr_per_s=
 *   p50_us= p90_us= p99_us= p999_us= max_us= all_addresses=
 *
 * (addresses = addresses of the requests answered "ok" in the window;
 * percentiles are nearest-rank over the requests of the window;
 * all_addresses counts every "ok" answer of the run, warm-up and requests
 * that straddle the window's ends included, to divide the server's CPU
 * time by.)  With
 * -r, every counted request is also written to RECORDS as
 * "START_NS LATENCY_NS OK", START_NS in CLOCK_REALTIME (the clock of
 * `date +%s%N`), latency measured with CLOCK_MONOTONIC from the first
 * byte sent to the last byte received.
 *
 * Summary mode (-s): the same line for the records of RECORDS whose start
 * is in [FROM_NS, TO_NS) (both optional); seconds is TO - FROM when both
 * are given.
 *
 * Co-process mode (-x): runs COMMAND (llvm-symbolizer --obj=F --inlining
 * -C) with ADDRFILE written PASSES times (default 4) to its stdin by one
 * thread while the main thread reads its stdout, the way a profiler
 * streams addresses to it.  One answer ends with an empty line; the time
 * at which the answer to the last address of each pass arrives ends that
 * pass.  Prints one line per pass (pass=K seconds= addr_per_s= cpu_s=),
 * then
 *
 *   cold_s= warm_addr_per_s= warm_us_per_addr= warm_cpu_us_per_addr=
 *   rss_kb= cpu_s= addresses=
 *
 * cold_s is the first pass including start-up; warm_addr_per_s is the
 * median over passes 2..PASSES (the same addresses again: its caches are
 * as warm as they get); warm_cpu_us_per_addr the median CPU time (user +
 * system, /proc/PID/stat at each pass's end) of those passes per address.
 * rss_kb is the child's peak RSS, cpu_s its CPU time in all.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

#define HDR_MAX 8192
#ifndef DRAIN_NS	/* the longest wait for answers in flight */
#define DRAIN_NS 10000000000ull
#endif
#define RBUF 65536

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("symd-load: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

/* ----------------------------------------------------------- results */

struct rec {
	uint64_t start_real;	/* CLOCK_REALTIME ns */
	uint64_t lat;		/* ns */
	bool ok;
	unsigned naddr;
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

static void recs_add(struct recs *r, struct rec x)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 65536;
		r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	r->v[r->n++] = x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p of them at or below. */
static double pct_us(const uint64_t *sorted, size_t n, double p)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)(p * (double)n + 0.999999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)sorted[k - 1] / 1000.0;
}

static void summary(const struct recs *r, double seconds, uint64_t all)
{
	uint64_t *lat = xmalloc(r->n * sizeof(*lat));
	uint64_t addrs = 0, errors = 0;
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++) {
		lat[n++] = r->v[i].lat;
		if (r->v[i].ok)
			addrs += r->v[i].naddr;
		else
			errors++;
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	printf("requests=%zu addresses=%" PRIu64 " errors=%" PRIu64
	       " seconds=%.3f req_per_s=%.1f addr_per_s=%.1f p50_us=%.1f"
	       " p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f"
	       " all_addresses=%" PRIu64 "\n",
	       n, addrs, errors, seconds,
	       seconds > 0 ? (double)(n - errors) / seconds : 0.0,
	       seconds > 0 ? (double)addrs / seconds : 0.0,
	       pct_us(lat, n, 0.50), pct_us(lat, n, 0.90),
	       pct_us(lat, n, 0.99), pct_us(lat, n, 0.999),
	       n ? (double)lat[n - 1] / 1000.0 : 0.0, all ? all : addrs);
	free(lat);
}

/* ----------------------------------------------------------- load mode */

struct body {
	char *req;		/* the whole request, head and body */
	size_t len;
	unsigned naddr;
};

enum cstate { S_IDLE, S_SEND, S_HEAD, S_BODY };

struct conn {
	int fd;
	enum cstate st;
	size_t next;		/* next body index */
	const struct body *b;
	size_t sent;
	char hdr[HDR_MAX];
	size_t hlen;
	int status;
	uint64_t clen, got;
	char peek[256];		/* the first bytes of the body */
	size_t plen;
	bool close_after;
	uint64_t t0, t0_real;
	uint64_t due;		/* -i: when the next request starts (0: none) */
};

static struct body *bodies;
static size_t nbodies;
static struct addrinfo *target;
static char host_hdr[300];
static int ep;
static uint64_t n_errors_total;
static uint64_t n_addrs_total;	/* answered "ok", warm-up and all */
static unsigned err_printed;
static uint64_t pace_ns;	/* -i, in ns; 0: closed loop */

static void load_bodies(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, bcap = 0;
	ssize_t len;

	if (!f)
		die("cannot open %s: %s", path, strerror(errno));
	while ((len = getline(&line, &cap, f)) > 0) {
		char *sp1, *sp2, *json;
		unsigned long naddr;
		size_t jlen, hlen;
		char head[1024];

		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		sp1 = strchr(line, ' ');
		if (!sp1)
			die("%s: bad line (want PATH NADDR JSON)", path);
		*sp1 = '\0';
		naddr = strtoul(sp1 + 1, &sp2, 10);
		if (*sp2 != ' ')
			die("%s: bad line (want PATH NADDR JSON)", path);
		json = sp2 + 1;
		jlen = strlen(json);
		hlen = (size_t)snprintf(head, sizeof(head),
					"POST %s HTTP/1.1\r\nHost: %s\r\n"
					"Content-Type: application/json\r\n"
					"Content-Length: %zu\r\n\r\n",
					line, host_hdr, jlen);
		if (hlen >= sizeof(head))
			die("%s: path too long", path);
		if (nbodies == bcap) {
			bcap = bcap ? bcap * 2 : 1024;
			bodies = xrealloc(bodies, bcap * sizeof(*bodies));
		}
		bodies[nbodies].len = hlen + jlen;
		bodies[nbodies].req = xmalloc(hlen + jlen);
		memcpy(bodies[nbodies].req, head, hlen);
		memcpy(bodies[nbodies].req + hlen, json, jlen);
		bodies[nbodies].naddr = (unsigned)naddr;
		nbodies++;
	}
	free(line);
	fclose(f);
	if (!nbodies)
		die("%s: no requests", path);
}

static void conn_open(struct conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT };
	int one = 1;

	c->fd = socket(target->ai_family, target->ai_socktype | SOCK_NONBLOCK |
		       SOCK_CLOEXEC, target->ai_protocol);
	if (c->fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, target->ai_addr, target->ai_addrlen) != 0 &&
	    errno != EINPROGRESS)
		die("connect: %s", strerror(errno));
	ev.data.ptr = c;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		die("epoll_ctl: %s", strerror(errno));
	c->st = S_IDLE;
	c->due = 0;	/* a new connection starts when it can write */
}

static void conn_reopen(struct conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	conn_open(c);
}

static void want(struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void start_req(struct conn *c)
{
	c->b = &bodies[c->next];
	c->next = (c->next + 1) % nbodies;
	c->sent = 0;
	c->hlen = 0;
	c->plen = 0;
	c->got = 0;
	c->clen = 0;
	c->status = 0;
	c->close_after = false;
	c->st = S_SEND;
	c->t0 = mono_ns();
	c->t0_real = real_ns();
}

/* Parse the response head in c->hdr (up to and including the blank line). */
static void parse_head(struct conn *c)
{
	char *p = c->hdr, *eol;
	bool have_len = false;

	c->hdr[c->hlen] = '\0';
	if (strncmp(p, "HTTP/1.", 7) != 0 || strlen(p) < 12)
		die("not an HTTP response: %.40s", p);
	c->status = (int)strtol(p + 9, NULL, 10);
	while ((eol = strstr(p, "\r\n")) && eol != p) {
		p = eol + 2;
		if (strncasecmp(p, "Content-Length:", 15) == 0) {
			c->clen = strtoull(p + 15, NULL, 10);
			have_len = true;
		} else if (strncasecmp(p, "Connection:", 11) == 0) {
			const char *v = p + 11;

			while (*v == ' ')
				v++;
			if (strncasecmp(v, "close", 5) == 0)
				c->close_after = true;
		} else if (strncasecmp(p, "Transfer-Encoding:", 18) == 0) {
			die("chunked answers are not supported");
		}
	}
	if (!have_len)
		die("an answer without Content-Length (status %d)", c->status);
}

/* One answer is complete: check and count it.  Returns false when the
 * server said it closes (the connection was reopened). */
static bool finish_req(struct conn *c, struct recs *r, uint64_t from,
		       uint64_t to)
{
	uint64_t t1 = mono_ns();
	bool ok;

	c->peek[c->plen] = '\0';
	ok = c->status == 200 && strstr(c->peek, "\"status\":\"ok\"") != NULL;
	if (ok)
		n_addrs_total += c->b->naddr;
	if (!ok) {
		n_errors_total++;
		if (err_printed < 5) {
			err_printed++;
			fprintf(stderr, "symd-load: HTTP %d: %.200s\n",
				c->status, c->peek);
		}
	}
	if (c->t0 >= from && t1 <= to)
		recs_add(r, (struct rec){ .start_real = c->t0_real,
					  .lat = t1 - c->t0, .ok = ok,
					  .naddr = c->b->naddr });
	c->st = S_IDLE;
	if (c->close_after) {
		conn_reopen(c);
		return false;
	}
	return true;
}

/* Returns false when the connection was reopened (broken, or closed by
 * the server); true otherwise (an answer may have completed: c->st). */
static bool on_read(struct conn *c, struct recs *r, uint64_t from,
		    uint64_t to)
{
	static char buf[RBUF];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		size_t off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n <= 0) {
			/* Closed by the server: in the middle of a request is
			 * an error; between requests, just reconnect. */
			if (c->st != S_IDLE) {
				n_errors_total++;
				if (err_printed++ < 5)
					fprintf(stderr, "symd-load: connection "
						"lost (%s)\n", n < 0 ?
						strerror(errno) : "EOF");
			}
			conn_reopen(c);
			return false;
		}
		while (off < (size_t)n) {
			if (c->st == S_HEAD) {
				/* Byte by byte up to the blank line. */
				while (off < (size_t)n) {
					if (c->hlen >= HDR_MAX - 1)
						die("response head too long");
					c->hdr[c->hlen++] = buf[off++];
					if (c->hlen >= 4 &&
					    memcmp(c->hdr + c->hlen - 4,
						   "\r\n\r\n", 4) == 0) {
						parse_head(c);
						c->st = S_BODY;
						break;
					}
				}
				if (c->st == S_BODY && c->clen == 0) {
					if (off < (size_t)n)
						die("unexpected bytes after an answer");
					return finish_req(c, r, from, to);
				}
			} else if (c->st == S_BODY) {
				size_t take = (size_t)n - off;

				if (take > c->clen - c->got)
					take = (size_t)(c->clen - c->got);
				if (c->plen < sizeof(c->peek) - 1) {
					size_t k = sizeof(c->peek) - 1 - c->plen;

					if (k > take)
						k = take;
					memcpy(c->peek + c->plen, buf + off, k);
					c->plen += k;
				}
				c->got += take;
				off += take;
				if (c->got == c->clen) {
					if (off < (size_t)n)
						die("unexpected bytes after an answer");
					return finish_req(c, r, from, to);
				}
			} else {
				die("unexpected bytes from the server");
			}
		}
	}
}

static void on_write(struct conn *c)
{
	while (c->sent < c->b->len) {
		ssize_t n = send(c->fd, c->b->req + c->sent,
				 c->b->len - c->sent, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			n_errors_total++;
			if (err_printed++ < 5)
				fprintf(stderr, "symd-load: send: %s\n",
					strerror(errno));
			conn_reopen(c);
			return;
		}
		c->sent += (size_t)n;
	}
	c->st = S_HEAD;
	want(c, EPOLLIN);
}

/* Start the next request and send what the socket takes now. */
static void send_next(struct conn *c)
{
	start_req(c);
	on_write(c);
	if (c->st == S_SEND)
		want(c, EPOLLOUT);
}

/* -i: start the requests that are due; the epoll timeout (ms, at most
 * @tmo) until the next one. */
static int start_due(struct conn *conns, unsigned nconns, uint64_t now,
		     int tmo)
{
	for (unsigned i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];

		if (c->st != S_IDLE || !c->due)
			continue;
		if (c->due > now) {
			int ms = (int)((c->due - now + 999999) / 1000000);

			if (ms < tmo)
				tmo = ms;
			continue;
		}
		c->due = 0;
		send_next(c);
	}
	return tmo;
}

static int load_main(const char *hostport, const char *bfile, unsigned nconns,
		     double warm_s, double secs, const char *recfile)
{
	char host[256], *colon;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct conn *conns;
	struct recs r = { 0 };
	struct epoll_event evs[256];
	uint64_t t_start, from, to, end = 0, drain_end = 0;
	bool draining = false;
	int err;

	colon = strrchr(hostport, ':');
	if (!colon || (size_t)(colon - hostport) >= sizeof(host))
		die("want HOST:PORT, not %s", hostport);
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	err = getaddrinfo(host, colon + 1, &hints, &target);
	if (err)
		die("%s: %s", hostport, gai_strerror(err));
	snprintf(host_hdr, sizeof(host_hdr), "%s", hostport);
	load_bodies(bfile);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1: %s", strerror(errno));
	conns = calloc(nconns, sizeof(*conns));
	if (!conns)
		die("out of memory");
	for (unsigned i = 0; i < nconns; i++) {
		conns[i].next = (size_t)((uint64_t)i * nbodies / nconns);
		conn_open(&conns[i]);
	}
	t_start = mono_ns();
	from = t_start + (uint64_t)(warm_s * 1e9);
	to = from + (uint64_t)(secs * 1e9);
	for (;;) {
		uint64_t now = mono_ns();
		int n, tmo;

		if (!draining && (stop_flag || now >= to)) {
			/* Time is up: no new requests; the answers in flight
			 * are read (not counted), so that no connection is
			 * cut in the middle of an answer. */
			draining = true;
			end = now < to ? now : to;
			drain_end = now + DRAIN_NS;
		}
		if (draining) {
			unsigned busy = 0;

			for (unsigned i = 0; i < nconns; i++)
				busy += conns[i].st != S_IDLE;
			if (!busy)
				break;
			if (now >= drain_end) {
				fprintf(stderr, "symd-load: %u answers still "
					"unfinished %.0f s after the end\n",
					busy, DRAIN_NS / 1e9);
				break;
			}
			tmo = 100;
		} else {
			tmo = (int)((to - now) / 1000000) + 1;
			if (tmo > 100)
				tmo = 100;
			if (pace_ns)
				tmo = start_due(conns, nconns, now, tmo);
		}
		n = epoll_wait(ep, evs, 256, tmo);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;

			if (c->st == S_IDLE && draining) {
				want(c, EPOLLIN);	/* no new request */
			} else if (c->st == S_IDLE &&
				   (evs[i].events & EPOLLOUT)) {
				start_req(c);
				want(c, EPOLLOUT);
			}
			if (c->st == S_SEND && (evs[i].events & (EPOLLOUT |
								 EPOLLERR)))
				on_write(c);
			if ((c->st == S_HEAD || c->st == S_BODY ||
			     c->st == S_IDLE) &&
			    (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
				if (on_read(c, &r, from, to) &&
				    c->st == S_IDLE && !draining) {
					if (pace_ns) {	/* start_due()'s turn */
						c->due = c->t0 + pace_ns;
						want(c, EPOLLIN);
						continue;
					}
					/* Closed loop: the next one at once. */
					send_next(c);
				}
			}
		}
	}
	summary(&r, end > from ? (double)(end - from) / 1e9 : 0.0,
		n_addrs_total);
	if (recfile) {
		FILE *f = fopen(recfile, "w");

		if (!f)
			die("cannot write %s: %s", recfile, strerror(errno));
		for (size_t i = 0; i < r.n; i++)
			fprintf(f, "%" PRIu64 " %" PRIu64 " %d %u\n",
				r.v[i].start_real, r.v[i].lat, r.v[i].ok,
				r.v[i].naddr);
		if (fclose(f) != 0)
			die("cannot write %s", recfile);
	}
	if (n_errors_total)
		fprintf(stderr, "symd-load: %" PRIu64 " errors in all\n",
			n_errors_total);
	for (unsigned i = 0; i < nconns; i++)
		close(conns[i].fd);
	close(ep);
	free(conns);
	free(r.v);
	for (size_t i = 0; i < nbodies; i++)
		free(bodies[i].req);
	free(bodies);
	freeaddrinfo(target);
	return 0;
}

/* -------------------------------------------------------- summary mode */

static int summary_main(const char *recfile, uint64_t from, uint64_t to)
{
	FILE *f = fopen(recfile, "r");
	struct recs r = { 0 };
	uint64_t s, l, lo = UINT64_MAX, hi = 0;
	int ok;
	unsigned na;

	if (!f)
		die("cannot open %s: %s", recfile, strerror(errno));
	while (fscanf(f, "%" SCNu64 " %" SCNu64 " %d %u", &s, &l, &ok, &na) ==
	       4) {
		if (s < from || s >= to)
			continue;
		recs_add(&r, (struct rec){ .start_real = s, .lat = l,
					   .ok = ok != 0, .naddr = na });
		if (s < lo)
			lo = s;
		if (s + l > hi)
			hi = s + l;
	}
	fclose(f);
	if (from && to != UINT64_MAX)
		summary(&r, (double)(to - from) / 1e9, 0);
	else
		summary(&r, r.n ? (double)(hi - lo) / 1e9 : 0.0, 0);
	free(r.v);
	return 0;
}

/* ------------------------------------------------------ co-process mode */

struct feeder {
	int fd;
	const char *data;
	size_t len;
	unsigned passes;
};

static void *feed(void *arg)
{
	struct feeder *fe = arg;

	for (unsigned p = 0; p < fe->passes; p++) {
		size_t off = 0;

		while (off < fe->len) {
			ssize_t n = write(fe->fd, fe->data + off,
					  fe->len - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				goto out;
			off += (size_t)n;
		}
	}
out:
	close(fe->fd);
	return NULL;
}

/* utime + stime of process @pid so far, in seconds; -1 if unknown. */
static double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After "(comm)": state is field 3, utime 14, stime 15. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u"
			 " %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double median_d(double *v, size_t n);

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_d(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int coproc_main(const char *addrfile, unsigned passes, char **argv)
{
	FILE *f = fopen(addrfile, "r");
	char *data = NULL, buf[RBUF];
	size_t len = 0, cap = 0, naddr = 0, groups = 0;
	int in[2], out[2], status;
	pid_t pid;
	pthread_t th;
	struct feeder fe;
	uint64_t t0, *tpass;
	double *cpass, cpu0 = 0;
	unsigned pass = 0;
	bool prev_nl = true;
	struct rusage ru;
	double *warm, *wcpu;
	size_t r;

	if (!f)
		die("cannot open %s: %s", addrfile, strerror(errno));
	while ((r = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (len + r > cap) {
			cap = (len + r) * 2;
			data = xrealloc(data, cap);
		}
		memcpy(data + len, buf, r);
		len += r;
	}
	fclose(f);
	for (size_t i = 0; i < len; i++)
		naddr += data[i] == '\n';
	if (!naddr || data[len - 1] != '\n')
		die("%s: want one address a line, ending in a newline",
		    addrfile);
	tpass = xmalloc(passes * sizeof(*tpass));
	cpass = xmalloc(passes * sizeof(*cpass));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	t0 = mono_ns();
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execvp(argv[0], argv);
		fprintf(stderr, "symd-load: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fe = (struct feeder){ .fd = in[1], .data = data, .len = len,
			      .passes = passes };
	if (pthread_create(&th, NULL, feed, &fe) != 0)
		die("pthread_create");
	for (;;) {
		ssize_t n = read(out[0], buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* The co-process flushes each answer: reading each one as it
		 * comes would cost a wake-up per address on our side, which
		 * on 2 cores is taken from it.  The pipe holds 64 KiB (some
		 * hundreds of answers), so a short nap lets answers pile up
		 * without ever making it wait. */
		if (n < (ssize_t)sizeof(buf) / 2)
			nanosleep(&(struct timespec){ .tv_nsec = 500000 }, NULL);
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				prev_nl = false;
				continue;
			}
			if (prev_nl) {	/* an empty line: one answer done */
				groups++;
				if (groups % naddr == 0 && pass < passes) {
					cpass[pass] = proc_cpu_s(pid);
					tpass[pass++] = mono_ns();
				}
			}
			prev_nl = true;
		}
	}
	close(out[0]);
	pthread_join(th, NULL);
	if (wait4(pid, &status, 0, &ru) < 0)
		die("wait4: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("%s failed (status %d)", argv[0], status);
	if (pass != passes)
		die("%s answered %zu of %zu addresses (one empty line ends "
		    "each answer)", argv[0], groups, naddr * passes);
	warm = xmalloc(passes * sizeof(*warm));
	wcpu = xmalloc(passes * sizeof(*wcpu));
	for (unsigned p = 0; p < passes; p++) {
		double s = (double)(tpass[p] - (p ? tpass[p - 1] : t0)) / 1e9;
		double c = cpass[p] < 0 || (p && cpass[p - 1] < 0) ? -1 :
			   cpass[p] - (p ? cpass[p - 1] : cpu0);

		printf("pass=%u seconds=%.3f addr_per_s=%.1f cpu_s=%.3f\n",
		       p + 1, s, (double)naddr / s, c);
		if (p) {
			warm[p - 1] = (double)naddr / s;
			wcpu[p - 1] = c < 0 ? -1 : c * 1e6 / (double)naddr;
		}
	}
	if (passes > 1) {
		double m = median_d(warm, passes - 1);

		printf("cold_s=%.3f warm_addr_per_s=%.1f warm_us_per_addr=%.3f"
		       " warm_cpu_us_per_addr=%.3f rss_kb=%ld cpu_s=%.3f"
		       " addresses=%zu\n",
		       (double)(tpass[0] - t0) / 1e9, m, 1e6 / m,
		       median_d(wcpu, passes - 1), ru.ru_maxrss,
		       (double)ru.ru_utime.tv_sec +
		       (double)ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec +
		       (double)ru.ru_stime.tv_usec / 1e6, naddr);
	}
	free(warm);
	free(wcpu);
	free(cpass);
	free(tpass);
	free(data);
	return 0;
}

/* -------------------------------------------------------------- main */

static void usage(void)
{
	fputs("usage: symd-load [-c CONNS] [-w WARMUP_S] [-d SECONDS] "
	      "[-r RECORDS] [-i INTERVAL_US] HOST:PORT BODIES\n"
	      "       symd-load -s RECORDS [-a FROM_NS] [-b TO_NS]\n"
	      "       symd-load -x ADDRFILE [-p PASSES] -- COMMAND [ARG]...\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned nconns = 4, passes = 4;
	double warm_s = 0, secs = 5;
	const char *recfile = NULL, *sumfile = NULL, *addrfile = NULL;
	uint64_t from = 0, to = UINT64_MAX;
	struct sigaction sa = { .sa_handler = on_stop };
	int opt;

	while ((opt = getopt(argc, argv, "c:w:d:r:s:a:b:x:p:i:")) != -1) {
		switch (opt) {
		case 'c': nconns = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'w': warm_s = atof(optarg); break;
		case 'd': secs = atof(optarg); break;
		case 'r': recfile = optarg; break;
		case 's': sumfile = optarg; break;
		case 'a': from = strtoull(optarg, NULL, 10); break;
		case 'b': to = strtoull(optarg, NULL, 10); break;
		case 'x': addrfile = optarg; break;
		case 'p': passes = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'i': pace_ns = strtoull(optarg, NULL, 10) * 1000u; break;
		default: usage();
		}
	}
	if (sumfile)
		return summary_main(sumfile, from, to);
	if (addrfile) {
		if (optind >= argc || passes < 1)
			usage();
		signal(SIGPIPE, SIG_IGN);
		return coproc_main(addrfile, passes, argv + optind);
	}
	if (argc - optind != 2 || nconns < 1 || secs <= 0 || warm_s < 0)
		usage();
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return load_main(argv[optind], argv[optind + 1], nconns, warm_s, secs,
			 recfile);
}
