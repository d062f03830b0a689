/*
 * main.c - symd: options, start-up, signals and a graceful stop.
 *
 * Start-up order matters: libdebuginfod reads its settings from the
 * environment, so work.c sets it before any thread exists; libevent is
 * told to use pthreads before the base is made, so that workers may
 * event_active() the loop's events.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "sym.h"
#include "api.h"
#include "http.h"
#include "log.h"
#include "s3.h"
#include "symd.h"
#include "base.h"

static const char usage[] =
"usage: symd [OPTION]...\n"
"The symbolication daemon: answers batches of (build ID, address) over HTTP\n"
"from its store, fetching and converting debug files in the background.\n"
"\n"
"  --listen ADDR:PORT        where to serve (default 127.0.0.1:8630; port 0\n"
"                            picks a free port, printed on stdout)\n"
"  --store DIR               the store (default $SYM_STORE, else\n"
"                            $XDG_CACHE_HOME/sym or ~/.cache/sym)\n"
"  --debuginfod-urls URLS    upstream debuginfod servers, space separated\n"
"                            (default $DEBUGINFOD_URLS; none if unset)\n"
"  --upload-token-file FILE  bearer token for PUT and DELETE (without it\n"
"                            uploads are refused)\n"
"  --workers N               conversion threads (default: cores - 1)\n"
"  --fetch-workers N         download threads (default 4)\n"
"  --max-store-size SIZE     evict least recently used tables beyond SIZE\n"
"                            (K, M, G, T suffixes; default: no bound)\n"
"  --max-inflate SEC,FILE,RATIO  decompression limits of one debug section,\n"
"                            of one file, and of decompressed bytes per\n"
"                            compressed byte (default 1G,2G,256, or\n"
"                            $SYM_MAX_INFLATE_*); an empty field keeps\n"
"                            its default; a file over them is badconv\n"
"  --ttl-absent SECONDS      how long \"no source has it\" is believed\n"
"                            (default 604800)\n"
"  --ttl-failed SECONDS      backoff after a failed fetch (default 60)\n"
"  --fetch-timeout SECONDS   abort a download stalled that long (30)\n"
"  --fetch-first-byte-ms N   abort a fetch with no byte (connect included)\n"
"                            this long (default 15000)\n"
"  --fetch-deadline-ms N     abort a fetch after this long (default 600000)\n"
"  --fetch-wait-ms N         a GET /buildid/ waits this long for its fetch,\n"
"                            then 503 and Retry-After (default 30000)\n"
"  --max-body SIZE           POST /v1/symbolize body limit (default 8M)\n"
"  --max-addresses N         addresses per request (default 100000)\n"
"  --max-response SIZE       a symbolize answer's size (default 256M; 413)\n"
"  --max-answers SIZE        answers being built or sent at once, all\n"
"                            requests together (default 512M; 503)\n"
"  --max-modules N           modules per request (default 1024)\n"
"  --max-wait-ms N           longest wait_ms honoured (default 30000)\n"
"  --max-upload SIZE         upload limit (default: none)\n"
"  --max-source-size SIZE    an uploaded source file's limit (default 16M;\n"
"                            413)\n"
"  --max-sources SIZE        a build ID's sources together (default 256M;\n"
"                            413); 0: no bound\n"
"  --max-conns N             open connections (default 1024, and below the\n"
"                            descriptor limit); at the limit the slowest\n"
"                            client that only sends gives its slot up\n"
"  --queue-max N             queued jobs before 503 (default 4096)\n"
"  --lazy-max N              addresses of a cold build ID answered by the\n"
"                            lazy path before its full table (default\n"
"                            10000);\n"
"                            0: none (the symbols alone, then the table)\n"
"  --header-timeout-ms N     request line and headers deadline (10000)\n"
"  --body-timeout-ms N       idle time within a body (30000)\n"
"  --body-deadline-ms N      a symbolize body's total time (60000)\n"
"  --min-rate SIZE           bytes a second a body must average over each\n"
"                            --rate-window-ms (default 1K per 5000 ms)\n"
"  --rate-window-ms N\n"
"  --max-buffered SIZE       request bodies held at once, all requests\n"
"                            together (default 128M; 503 over it)\n"
"  --idle-timeout-ms N       keep-alive idle time (60000)\n"
"  --log-format text|json    the log on stderr: logfmt lines (default) or\n"
"                            JSON lines (see symd(8))\n"
"  --object-store s3://BUCKET[/PREFIX]  the durable tier shared by nodes:\n"
"                            endpoint, region and keys from AWS_ENDPOINT_URL,\n"
"                            AWS_REGION, AWS_ACCESS_KEY_ID,\n"
"                            AWS_SECRET_ACCESS_KEY (see symd(8))\n"
"  --object-store-config FILE  endpoint, region, access_key_id,\n"
"                            secret_access_key as \"key = value\" lines\n"
"  --object-store-revalidate SECONDS  how often a table in use is checked\n"
"                            against the bucket's files (default 30)\n"
"  --quiet                   no access-log line per request\n"
"  --drain-ms N              on SIGTERM, answer /healthz 503 (draining)\n"
"                            and keep serving this long before the stop,\n"
"                            so a proxy moves traffic away (default 0);\n"
"                            SIGUSR1 turns draining on and off\n"
"  --help, --version\n";

/* "12", "64K", "1.5G": bytes. */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	char *end;
	double v;
	const char *u;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	if (*end) {
		u = strchr(units, *end & ~0x20);
		if (!u || (end[1] && strcasecmp(end + 1, "iB") != 0 &&
			   strcasecmp(end + 1, "B") != 0))
			return -EINVAL;
		for (const char *k = units; k <= u; k++)
			v *= 1024;
	}
	if (v >= 18446744073709551615.0)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

static int parse_uint(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > UINT_MAX)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/* The token: the file's first line, without surrounding blanks. */
static char *read_token(const char *path)
{
	char buf[4096], *p, *e;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	e = p + strlen(p);
	while (e > p && strchr(" \t\r\n", e[-1]))
		*--e = '\0';
	if (!*p) {
		errno = EINVAL;
		return NULL;
	}
	return strdup(p);
}

/* What the options say. */
struct conf {
	const char *listen, *store_dir, *urls, *token_file;
	const char *objstore, *objstore_conf;	/* --object-store(-config) */
	struct symd_s3_config s3;	/* loaded at start() */
	char host[256];		/* of --listen, without [] */
	unsigned port;
	char dirbuf[4096];	/* the default store_dir */
	struct symd_work_opts wo;
	struct symd_api_opts ao;	/* ao.token: free() */
	struct sym_store_opts so;
	enum symd_log_format log_format;
	unsigned drain_ms;	/* --drain-ms */
};

/* What runs; daemon_free() lets go of it in order. */
struct daemon {
	struct event_base *base;
	struct symd_api *api;
	struct symd_work *work;
	struct sym_store *store;
	struct event *sigs[3], *tick;	/* TERM, INT, USR1 */
	struct event *drain;	/* --drain-ms after SIGTERM, then stop */
	unsigned drain_ms;
	struct event *late;	/* the lateness probe (late_cb()) */
	uint64_t late_due;	/* when it should run, CLOCK_MONOTONIC us */
	int sched_fd;		/* the loop thread's schedstat, or -1 */
	uint64_t waited;	/* its run_delay at the last run, us */
	bool stopping;
};

/* The lateness probe runs this often. */
#define LATE_TICK_MS 25

static void stopped(struct symd_http *http, void *ctx)
{
	struct daemon *d = ctx;

	(void)http;
	event_base_loopexit(d->base, NULL);
}

static void stop_gracefully(struct daemon *d, const char *why)
{
	symd_log_msg(SYMD_LOG_INFO, "stopping",
		     "%s: finishing requests in flight", why);
	symd_http_shutdown(symd_api_http(d->api), stopped, d);
}

static void drain_done(evutil_socket_t fd, short what, void *ctx)
{
	(void)fd;
	(void)what;
	stop_gracefully(ctx, "drained");
}

/*
 * SIGTERM, SIGINT: stop gracefully: stop accepting, finish what is in
 * flight.  With --drain-ms, first answer /healthz 503 and serve on that
 * long, so a proxy's health check has moved traffic away before the port
 * closes.  A second signal stops now.
 */
static void on_signal(evutil_socket_t sig, short what, void *ctx)
{
	struct daemon *d = ctx;
	struct timeval tv = { d->drain_ms / 1000, (d->drain_ms % 1000) * 1000 };

	(void)what;
	if (d->stopping) {
		event_base_loopexit(d->base, NULL);
		return;
	}
	d->stopping = true;
	if (!d->drain_ms || !d->drain || evtimer_add(d->drain, &tv)) {
		stop_gracefully(d, strsignal((int)sig));
		return;
	}
	symd_api_drain(d->api, true);
	symd_log_msg(SYMD_LOG_INFO, "draining", "%s: /healthz answers 503; "
		     "stopping in %u ms", strsignal((int)sig), d->drain_ms);
}

/* SIGUSR1: draining on, or off again (docs/cluster.md). */
static void on_usr1(evutil_socket_t sig, short what, void *ctx)
{
	struct daemon *d = ctx;
	bool on = !symd_api_draining(d->api);

	(void)sig;
	(void)what;
	if (d->stopping)
		return;
	symd_api_drain(d->api, on);
	symd_log_msg(SYMD_LOG_INFO, on ? "draining" : "serving", "SIGUSR1: "
		     "/healthz answers %s", on ? "503" : "200");
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
	(void)fd;
	(void)what;
	symd_work_maintain(ctx);
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* How long the loop thread has waited for a CPU, in us (the second
 * field of its schedstat, ns); 0 without schedstat. */
static uint64_t loop_waited(const struct daemon *d)
{
	char buf[96];
	unsigned long long run, wait;
	ssize_t n = d->sched_fd < 0 ? -1 :
		    pread(d->sched_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return 0;
	return wait / 1000;
}

/*
 * The loop's lateness: a timer due every LATE_TICK_MS runs late by about
 * what the loop was doing when it fell due (the step under way, and the
 * callbacks of the same turn: libevent runs timers after the turn's I/O
 * callbacks).  That is how long a request arriving then would wait
 * before the loop reads it, so the steps a warm answer can sit behind
 * show in /metrics (symd_loop_lateness_seconds), as a sample of the
 * steps: one that covers a due time is caught.  libevent 2.1 has no hook
 * around callbacks to time each one.  Idle, the probe costs 40 wakeups
 * a second.
 *
 * On a loaded machine most lateness is the loop thread waiting for a
 * CPU, which is no step of symd's: so the lateness less what the thread
 * waited for a CPU since the probe's last run (its schedstat's
 * run_delay) is counted too, as the loop's own.  That one may miss part
 * of a step when the wait came before the due time; it never counts a
 * wait for a CPU.  A blocking call on the loop thread counts in both.
 */
static void late_cb(evutil_socket_t fd, short what, void *ctx)
{
	struct daemon *d = ctx;
	struct timeval tv = { 0, LATE_TICK_MS * 1000 };
	uint64_t now = mono_us(), waited = loop_waited(d);
	uint64_t late = now > d->late_due ? now - d->late_due : 0;
	uint64_t wait = waited > d->waited ? waited - d->waited : 0;

	(void)fd;
	(void)what;
	symd_metrics_lateness(late, late > wait ? late - wait : 0);
	d->waited = waited;
	d->late_due = now + LATE_TICK_MS * 1000;
	evtimer_add(d->late, &tv);
}

static void log_lib(void *ctx, int level, const char *msg)
{
	(void)ctx;
	symd_log_msg(level <= SYM_LOG_WARN ? SYMD_LOG_WARN : SYMD_LOG_INFO,
		     "libsym", "%s", msg);
}

/* libevent's warnings, which it would print on stderr itself (a write
 * on the loop thread that a blocked stderr would stall). */
static void log_event(int severity, const char *msg)
{
	symd_log_msg(severity >= EVENT_LOG_WARN ? SYMD_LOG_WARN :
		     SYMD_LOG_INFO, "libevent", "%s", msg);
}

enum {
	O_LISTEN = 256, O_STORE, O_URLS, O_TOKEN, O_WORKERS, O_FWORKERS,
	O_MAXSIZE, O_TTL_ABSENT, O_TTL_FAILED, O_FETCH_TIMEOUT, O_MAX_BODY,
	O_MAX_ADDRS, O_MAX_MODS, O_MAX_WAIT, O_MAX_UPLOAD, O_MAX_CONNS,
	O_QUEUE, O_HDR_MS, O_BODY_MS, O_IDLE_MS, O_BODY_DL, O_MIN_RATE,
	O_RATE_WIN, O_MAX_BUFFERED, O_MAX_RESPONSE, O_MAX_ANSWERS,
	O_FETCH_FIRST, O_FETCH_DL, O_FETCH_WAIT, O_QUIET,
	O_HELP, O_VERSION,
};

/* Kept apart from the enum above, so that options added there and this
 * one do not touch the same lines. */
enum { O_MAX_INFLATE = 512, O_LOG_FORMAT };
/* The sources' bounds (docs/http-api.md, "Sources"), likewise. */
enum { O_MAX_SOURCE = 520, O_MAX_SOURCES };
/* The object store (docs/object-store.md), likewise. */
enum { O_OBJSTORE = 530, O_OBJSTORE_CONF, O_REVALIDATE };
/* Draining (docs/cluster.md), likewise. */
enum { O_DRAIN_MS = 540 };
/* Progressive answers (docs/http-api.md, "partial"), likewise. */
enum { O_LAZY_MAX = 550 };

static const struct option longopts[] = {
	{ "listen", required_argument, NULL, O_LISTEN },
	{ "store", required_argument, NULL, O_STORE },
	{ "debuginfod-urls", required_argument, NULL, O_URLS },
	{ "upload-token-file", required_argument, NULL, O_TOKEN },
	{ "workers", required_argument, NULL, O_WORKERS },
	{ "fetch-workers", required_argument, NULL, O_FWORKERS },
	{ "max-store-size", required_argument, NULL, O_MAXSIZE },
	{ "max-inflate", required_argument, NULL, O_MAX_INFLATE },
	{ "max-source-size", required_argument, NULL, O_MAX_SOURCE },
	{ "max-sources", required_argument, NULL, O_MAX_SOURCES },
	{ "ttl-absent", required_argument, NULL, O_TTL_ABSENT },
	{ "ttl-failed", required_argument, NULL, O_TTL_FAILED },
	{ "fetch-timeout", required_argument, NULL, O_FETCH_TIMEOUT },
	{ "max-body", required_argument, NULL, O_MAX_BODY },
	{ "max-addresses", required_argument, NULL, O_MAX_ADDRS },
	{ "max-modules", required_argument, NULL, O_MAX_MODS },
	{ "max-wait-ms", required_argument, NULL, O_MAX_WAIT },
	{ "max-upload", required_argument, NULL, O_MAX_UPLOAD },
	{ "max-conns", required_argument, NULL, O_MAX_CONNS },
	{ "queue-max", required_argument, NULL, O_QUEUE },
	{ "header-timeout-ms", required_argument, NULL, O_HDR_MS },
	{ "body-timeout-ms", required_argument, NULL, O_BODY_MS },
	{ "idle-timeout-ms", required_argument, NULL, O_IDLE_MS },
	{ "body-deadline-ms", required_argument, NULL, O_BODY_DL },
	{ "min-rate", required_argument, NULL, O_MIN_RATE },
	{ "rate-window-ms", required_argument, NULL, O_RATE_WIN },
	{ "max-buffered", required_argument, NULL, O_MAX_BUFFERED },
	{ "max-response", required_argument, NULL, O_MAX_RESPONSE },
	{ "max-answers", required_argument, NULL, O_MAX_ANSWERS },
	{ "fetch-first-byte-ms", required_argument, NULL, O_FETCH_FIRST },
	{ "fetch-deadline-ms", required_argument, NULL, O_FETCH_DL },
	{ "fetch-wait-ms", required_argument, NULL, O_FETCH_WAIT },
	{ "object-store", required_argument, NULL, O_OBJSTORE },
	{ "object-store-config", required_argument, NULL, O_OBJSTORE_CONF },
	{ "object-store-revalidate", required_argument, NULL, O_REVALIDATE },
	{ "quiet", no_argument, NULL, O_QUIET },
	{ "log-format", required_argument, NULL, O_LOG_FORMAT },
	{ "drain-ms", required_argument, NULL, O_DRAIN_MS },
	{ "lazy-max", required_argument, NULL, O_LAZY_MAX },
	{ "help", no_argument, NULL, O_HELP },
	{ "version", no_argument, NULL, O_VERSION },
	{ NULL, 0, NULL, 0 },
};

/*
 * --max-inflate SECTION,FILE,RATIO: sym_set_inflate_limits() at once
 * (before any thread), each empty or missing field left at its default.
 */
static int set_inflate(const char *arg)
{
	struct sym_inflate_limits lim = { 0 };
	uint64_t v[3] = { 0, 0, 0 };
	char buf[96], *p = buf, *f;
	int i = 0;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, arg, strlen(arg) + 1);
	while ((f = strsep(&p, ",")) && i < 3) {
		if (*f && parse_size(f, &v[i]))
			return -EINVAL;
		i++;
	}
	if (f || v[2] > UINT32_MAX)
		return -EINVAL;	/* a fourth field, or no such ratio */
	lim.section = v[0];
	lim.file = v[1];
	lim.ratio = (uint32_t)v[2];
	return sym_set_inflate_limits(&lim);
}

/* Apply option @opt with argument @arg.  Returns 0 or -EINVAL. */
static int set_opt(struct conf *c, int opt, const char *arg)
{
	struct symd_api_opts *ao = &c->ao;
	struct symd_work_opts *wo = &c->wo;
	uint64_t size;
	unsigned u;
	int err = 0;

	switch (opt) {
	case O_LISTEN: c->listen = arg; break;
	case O_STORE: c->store_dir = arg; break;
	case O_URLS: c->urls = arg; break;
	case O_TOKEN: c->token_file = arg; break;
	case O_OBJSTORE: c->objstore = arg; break;
	case O_OBJSTORE_CONF: c->objstore_conf = arg; break;
	case O_REVALIDATE:
		err = parse_uint(arg, &wo->revalidate_s);
		if (!err && !wo->revalidate_s)
			err = -EINVAL;
		break;
	case O_WORKERS:
		err = parse_uint(arg, &wo->cpu_workers);
		break;
	case O_FWORKERS:
		err = parse_uint(arg, &wo->fetch_workers);
		break;
	case O_MAXSIZE:
		err = parse_size(arg, &c->so.max_size);
		wo->max_store_size = c->so.max_size;
		break;
	case O_MAX_SOURCE:
		err = parse_size(arg, &ao->max_source);
		break;
	case O_MAX_SOURCES:
		err = parse_size(arg, &wo->max_sources);
		break;
	case O_MAX_INFLATE:
		err = set_inflate(arg);
		break;
	case O_TTL_ABSENT:
		err = parse_uint(arg, &u);
		c->so.ttl_absent = u;
		break;
	case O_TTL_FAILED:
		err = parse_uint(arg, &u);
		c->so.ttl_failed = wo->ttl_failed = u;
		break;
	case O_FETCH_TIMEOUT:
		err = parse_uint(arg, &wo->fetch_timeout_s);
		break;
	case O_MAX_BODY:
		err = parse_size(arg, &size);
		ao->max_body = (size_t)size;
		break;
	case O_MAX_ADDRS:
		err = parse_uint(arg, &u);
		ao->limits.max_addresses = u;
		break;
	case O_MAX_MODS:
		err = parse_uint(arg, &u);
		ao->limits.max_modules = u;
		break;
	case O_MAX_WAIT:
		err = parse_uint(arg, &ao->limits.max_wait_ms);
		break;
	case O_MAX_UPLOAD:
		err = parse_size(arg, &ao->max_upload);
		break;
	case O_MAX_CONNS:
		err = parse_uint(arg, &ao->http.max_conns);
		break;
	case O_QUEUE:
		err = parse_uint(arg, &wo->queue_max);
		break;
	case O_HDR_MS:
		err = parse_uint(arg, &ao->http.header_timeout_ms);
		break;
	case O_BODY_MS:
		err = parse_uint(arg, &ao->http.body_timeout_ms);
		break;
	case O_IDLE_MS:
		err = parse_uint(arg, &ao->http.idle_timeout_ms);
		break;
	case O_BODY_DL:
		err = parse_uint(arg, &ao->http.body_deadline_ms);
		break;
	case O_MIN_RATE:
		err = parse_size(arg, &size);
		if (!err && (size == 0 || size > UINT_MAX))
			err = -EINVAL;
		ao->http.min_rate = (unsigned)size;
		break;
	case O_RATE_WIN:
		err = parse_uint(arg, &ao->http.rate_window_ms);
		break;
	case O_MAX_BUFFERED:
		err = parse_size(arg, &size);
		if (!err && (size == 0 || size > SIZE_MAX))
			err = -EINVAL;
		ao->http.max_buffered = (size_t)size;
		break;
	case O_FETCH_FIRST:
		err = parse_uint(arg, &wo->fetch_first_byte_ms);
		break;
	case O_FETCH_DL:
		err = parse_uint(arg, &wo->fetch_deadline_ms);
		break;
	case O_FETCH_WAIT:
		err = parse_uint(arg, &ao->fetch_wait_ms);
		if (!err && !ao->fetch_wait_ms)
			err = -EINVAL;
		break;
	case O_MAX_RESPONSE:
	case O_MAX_ANSWERS:
		err = parse_size(arg, &size);
		if (!err && (size < 64 || size > SYMI_BUF_MAX_CAP))
			err = -EINVAL;
		if (opt == O_MAX_RESPONSE)
			ao->max_response = (size_t)size;
		else
			ao->max_answers = (size_t)size;
		break;
	case O_QUIET: ao->log = false; break;
	case O_LOG_FORMAT:
		err = symd_log_format_parse(arg, &c->log_format);
		break;
	case O_DRAIN_MS:
		err = parse_uint(arg, &c->drain_ms);
		break;
	case O_LAZY_MAX:
		err = parse_uint(arg, &wo->lazy_max);
		if (!err && wo->lazy_max == 0)
			wo->lazy_max = SYMD_LAZY_OFF;
		break;
	}
	return err;
}

/* ADDR:PORT, [V6]:PORT of --listen into c->host and c->port. */
static int parse_listen(struct conf *c)
{
	const char *colon = strrchr(c->listen, ':');
	size_t n;

	if (!colon || parse_uint(colon + 1, &c->port) || c->port > 65535 ||
	    (size_t)(colon - c->listen) >= sizeof(c->host) ||
	    colon == c->listen)
		return -EINVAL;
	n = (size_t)(colon - c->listen);
	memcpy(c->host, c->listen, n);
	c->host[n] = '\0';
	if (c->host[0] == '[' && c->host[n - 1] == ']') {
		memmove(c->host, c->host + 1, n);
		c->host[n - 2] = '\0';
	}
	return 0;
}

/* The long name of option @opt. */
static const char *opt_name(int opt)
{
	const struct option *o = longopts;

	while (o->name && o->val != opt)
		o++;
	return o->name ? o->name : "?";
}

/*
 * Read the command line into @c.  Returns -1 to go on, else the status
 * to exit with: 0 after --help or --version, 2 on a usage error (said on
 * stderr).
 */
static int parse_opts(struct conf *c, int argc, char **argv)
{
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case O_HELP:
			fputs(usage, stdout);
			return 0;
		case O_VERSION:
			printf("symd %s (libsym %s)\n", SYMD_VERSION,
			       SYM_VERSION);
			return 0;
		}
		/* The others take set_opt(); '?' is a bad option. */
		if (opt < O_LISTEN) {
			fputs(usage, stderr);
			return 2;
		}
		if (set_opt(c, opt, optarg)) {
			fprintf(stderr, "symd: bad value for --%s: '%s'\n",
				opt_name(opt), optarg);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "symd: unexpected argument '%s'\n%s",
			argv[optind], usage);
		return 2;
	}
	if (parse_listen(c)) {
		fprintf(stderr, "symd: --listen wants ADDR:PORT, not '%s'\n",
			c->listen);
		return 2;
	}
	return -1;
}

/* Descriptors kept for all but client connections: the store, libevent,
 * workers' downloads (curl) and files, uploads in flight. */
#define FD_RESERVE 256

/*
 * Keep the connection limit below the descriptor limit, or accept()
 * fails with EMFILE at the limit and the slots policy of http.h never
 * runs: raise the soft RLIMIT_NOFILE as far as needed (up to the hard
 * one), else lower --max-conns and say so.
 */
static void fit_conns(struct conf *c)
{
	unsigned *mc = &c->ao.http.max_conns;
	struct rlimit rl;
	rlim_t need;

	if (!*mc)
		*mc = SYMD_HTTP_DEFAULT_MAX_CONNS;
	need = (rlim_t)*mc + FD_RESERVE;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ?
		      rl.rlim_max : need;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur >= need)
		return;
	symd_log_msg(SYMD_LOG_WARN, "config", "--max-conns %u lowered to %llu: "
		     "the descriptor limit is %llu", *mc, rl.rlim_cur > 2 * FD_RESERVE ?
		(unsigned long long)(rl.rlim_cur - FD_RESERVE) :
		(unsigned long long)(rl.rlim_cur / 2),
		(unsigned long long)rl.rlim_cur);
	*mc = rl.rlim_cur > 2 * FD_RESERVE ? (unsigned)(rl.rlim_cur -
							FD_RESERVE) :
	      (unsigned)(rl.rlim_cur / 2);
}

/* Signals stop the daemon gracefully; a tick maintains the store. */
static int add_events(struct daemon *d)
{
	struct timeval tick_tv = { .tv_sec = 5 };

	d->sigs[0] = evsignal_new(d->base, SIGTERM, on_signal, d);
	d->sigs[1] = evsignal_new(d->base, SIGINT, on_signal, d);
	d->sigs[2] = evsignal_new(d->base, SIGUSR1, on_usr1, d);
	d->drain = evtimer_new(d->base, drain_done, d);
	d->tick = event_new(d->base, -1, EV_PERSIST, on_tick, d->work);
	d->late = evtimer_new(d->base, late_cb, d);
	if (!d->sigs[0] || !d->sigs[1] || !d->sigs[2] || !d->drain ||
	    !d->tick || !d->late ||
	    evsignal_add(d->sigs[0], NULL) || evsignal_add(d->sigs[1], NULL) ||
	    evsignal_add(d->sigs[2], NULL) ||
	    event_add(d->tick, &tick_tv))
		return -ENOMEM;
	/* Opened on the loop thread: thread-self names it. */
	d->sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	d->waited = loop_waited(d);
	d->late_due = mono_us();
	late_cb(-1, 0, d);
	return 0;
}

/*
 * Open the store, start the workers, listen.  Returns 0, or -1 after
 * saying on stderr what failed; daemon_free() undoes what was done.
 */
static int start(struct daemon *d, struct conf *c, unsigned *bound)
{
	char msg[256];
	int err;

	signal(SIGPIPE, SIG_IGN);
	sym_set_log(log_lib, NULL, SYM_LOG_WARN);
	event_set_log_callback(log_event);
	fit_conns(c);
	/* The loop reads the store; only workers write it. */
	c->so.flags |= SYM_STORE_NO_READER_WRITES;
	err = sym_store_open(c->store_dir, &c->so, &d->store);
	if (err) {
		symd_log_msg(SYMD_LOG_ERROR, "start_failed", "cannot open the "
			     "store '%s': %s", c->store_dir,
			     sym_strerror(err, msg, sizeof(msg)));
		return -1;
	}
	if (evthread_use_pthreads() != 0 ||
	    !(d->base = event_base_new())) {
		symd_log_msg(SYMD_LOG_ERROR, "start_failed",
			     "cannot set up libevent");
		return -1;
	}
	c->wo.store = d->store;
	c->wo.store_dir = c->store_dir;
	c->wo.urls = c->urls;
	if (c->objstore) {
		err = symd_s3_config_load(c->objstore, c->objstore_conf,
					  &c->s3, msg, sizeof(msg));
		if (!err)
			err = symd_s3_global_init();
		if (err) {
			symd_log_msg(SYMD_LOG_ERROR, "start_failed", "object "
				     "store: %s", msg[0] ? msg :
				     "cannot start libcurl");
			return -1;
		}
		c->wo.s3 = &c->s3;
	}
	err = symd_work_new(d->base, &c->wo, &d->work);
	if (err) {
		symd_log_msg(SYMD_LOG_ERROR, "start_failed", "cannot start the "
			     "workers: %s", strerror(-err));
		return -1;
	}
	c->ao.base = d->base;
	c->ao.store = d->store;
	c->ao.store_dir = c->store_dir;
	c->ao.work = d->work;
	err = symd_api_new(&c->ao, &d->api);
	if (!err)
		err = symd_http_listen(symd_api_http(d->api), c->host,
				       c->port, bound);
	if (err) {
		symd_log_msg(SYMD_LOG_ERROR, "start_failed", "cannot listen on "
			     "%s: %s", c->listen, strerror(-err));
		return -1;
	}
	if (add_events(d)) {
		symd_log_msg(SYMD_LOG_ERROR, "start_failed",
			     "cannot catch signals");
		return -1;
	}
	return 0;
}

static void daemon_free(struct daemon *d)
{
	/* The server first: its requests let go of their waiters and jobs;
	 * then the workers (running conversions finish, fetches are
	 * cancelled); the store last. */
	symd_api_free(d->api);
	/* One more turn: libevent's deferred callbacks free the closed
	 * connections' bufferevents. */
	if (d->base)
		event_base_loop(d->base, EVLOOP_NONBLOCK);
	symd_work_free(d->work);
	for (int i = 0; i < 3; i++)
		if (d->sigs[i])
			event_free(d->sigs[i]);
	if (d->drain)
		event_free(d->drain);
	if (d->tick)
		event_free(d->tick);
	if (d->late)
		event_free(d->late);
	if (d->sched_fd >= 0)
		close(d->sched_fd);
	if (d->base)
		event_base_free(d->base);
	sym_store_close(d->store);
}

static struct sym_inflate_limits inflate_limits(void)
{
	struct sym_inflate_limits lim;

	sym_get_inflate_limits(&lim);
	return lim;
}

/* a ? a : b, for an option whose 0 means its default. */
#define OR(a, b) ((a) ? (uint64_t)(a) : (uint64_t)(b))

/*
 * The start-up line: the version and the whole configuration in force,
 * defaults filled in (sizes in bytes, times in the option's unit), on
 * one line (docs/symd.8).  The token itself is never logged.
 */
static void log_config(const struct conf *c, const struct daemon *d,
		       unsigned bound)
{
	const struct symd_work_opts *wo = symd_work_options(d->work);
	const struct symd_api_opts *ao = &c->ao;
	const struct symd_http_opts *ho = &ao->http;
	const struct sym_inflate_limits inf = inflate_limits();
	struct symd_log_line l;
	char listen[300];
	const struct { const char *key; uint64_t v; } num[] = {
		{ "workers", wo->cpu_workers },
		{ "fetch_workers", wo->fetch_workers },
		{ "queue_max", wo->queue_max },
		{ "lazy_max", wo->lazy_max == SYMD_LAZY_OFF ? 0 : wo->lazy_max },
		{ "max_store_size", wo->max_store_size },
		{ "max_inflate_section", inf.section },
		{ "max_inflate_file", inf.file },
		{ "max_inflate_ratio", inf.ratio },
		{ "ttl_absent", OR(c->so.ttl_absent, 604800) },
		{ "ttl_failed", wo->ttl_failed },
		{ "object_store_revalidate", OR(wo->revalidate_s, 30) },
		{ "fetch_timeout", OR(wo->fetch_timeout_s, 30) },
		{ "fetch_first_byte_ms", wo->fetch_first_byte_ms },
		{ "fetch_deadline_ms", wo->fetch_deadline_ms },
		{ "fetch_wait_ms", OR(ao->fetch_wait_ms,
				      SYMD_API_DEFAULT_FETCH_WAIT_MS) },
		{ "max_body", ao->max_body },
		{ "max_addresses", ao->limits.max_addresses },
		{ "max_modules", ao->limits.max_modules },
		{ "max_wait_ms", ao->limits.max_wait_ms },
		{ "max_upload", ao->max_upload },
		{ "max_response", OR(ao->max_response,
				     SYMD_API_DEFAULT_MAX_RESPONSE) },
		{ "max_answers", OR(ao->max_answers,
				    SYMD_API_DEFAULT_MAX_ANSWERS) },
		{ "max_conns", OR(ho->max_conns, SYMD_HTTP_DEFAULT_MAX_CONNS) },
		{ "max_buffered", OR(ho->max_buffered,
				     SYMD_HTTP_DEFAULT_MAX_BUFFERED) },
		{ "header_timeout_ms", OR(ho->header_timeout_ms,
					  SYMD_HTTP_DEFAULT_HEADER_MS) },
		{ "body_timeout_ms", OR(ho->body_timeout_ms,
					SYMD_HTTP_DEFAULT_BODY_MS) },
		{ "body_deadline_ms", OR(ho->body_deadline_ms,
					 SYMD_HTTP_DEFAULT_BODY_DEADLINE_MS) },
		{ "idle_timeout_ms", OR(ho->idle_timeout_ms,
					SYMD_HTTP_DEFAULT_IDLE_MS) },
		{ "min_rate", OR(ho->min_rate, SYMD_HTTP_DEFAULT_MIN_RATE) },
		{ "rate_window_ms", OR(ho->rate_window_ms,
				       SYMD_HTTP_DEFAULT_RATE_WINDOW_MS) },
		{ "drain_ms", c->drain_ms },
	};

	snprintf(listen, sizeof(listen), "%s%s%s:%u",
		 strchr(c->host, ':') ? "[" : "", c->host,
		 strchr(c->host, ':') ? "]" : "", bound);
	symd_log_begin(&l, SYMD_LOG_INFO, "start");
	symd_log_str(&l, "version", SYMD_VERSION);
	symd_log_str(&l, "libsym", sym_version(NULL, NULL, NULL));
	symd_log_u64(&l, "pid", (uint64_t)getpid());
	symd_log_str(&l, "listen", listen);
	symd_log_str(&l, "store", c->store_dir);
	symd_log_str(&l, "upstreams", symd_work_can_fetch(d->work) ?
		     c->urls : "none");
	symd_log_str(&l, "upload_token_file", c->token_file);
	/* The bucket and the endpoint (checked to hold no user
	 * information at load), never the keys. */
	symd_log_str(&l, "object_store", c->objstore ? c->objstore : "none");
	symd_log_str(&l, "object_store_endpoint",
		     c->s3.endpoint ? c->s3.endpoint : "none");
	symd_log_str(&l, "log_format", c->log_format == SYMD_LOG_JSON ?
		     "json" : "text");
	symd_log_str(&l, "access_log", ao->log ? "on" : "off");
	for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++)
		symd_log_u64(&l, num[i].key, num[i].v);
	symd_log_end(&l);
}

int main(int argc, char **argv)
{
	struct conf c = {
		.listen = "127.0.0.1:8630",
		.urls = getenv("DEBUGINFOD_URLS"),
		.ao = {
			.limits = SYMD_REQ_LIMITS_DEFAULT,
			.max_body = 8 << 20,
			.max_source = (uint64_t)16 << 20,
			.log = true,
		},
		.so = { .sz = sizeof(struct sym_store_opts) },
		.wo = {
			.fetch_first_byte_ms = 15000,
			.fetch_deadline_ms = 600000,
			.max_sources = (uint64_t)256 << 20,
		},
	};
	struct daemon d = { .sched_fd = -1 };
	unsigned bound = 0;
	int err, status = 1;
	char msg[256];

	err = parse_opts(&c, argc, argv);
	if (err >= 0)
		return err;
	err = symd_log_start(STDERR_FILENO, c.log_format);
	if (err) {
		fprintf(stderr, "symd: cannot start the log: %s\n",
			strerror(-err));
		return 1;
	}
	if (c.token_file && !(c.ao.token = read_token(c.token_file))) {
		symd_log_msg(SYMD_LOG_ERROR, "start_failed", "cannot read a "
			     "token from '%s': %s", c.token_file,
			     strerror(errno));
		goto out;
	}
	if (!c.store_dir) {
		err = sym_store_default_dir(c.dirbuf, sizeof(c.dirbuf));
		if (err) {
			symd_log_msg(SYMD_LOG_ERROR, "start_failed", "no store "
				     "directory: %s (use --store)",
				     sym_strerror(err, msg, sizeof(msg)));
			goto out;
		}
		c.store_dir = c.dirbuf;
	}
	d.drain_ms = c.drain_ms;
	if (start(&d, &c, &bound))
		goto out;
	printf("symd: listening on %s%s%s:%u, store %s, upstreams %s\n",
	       strchr(c.host, ':') ? "[" : "", c.host,
	       strchr(c.host, ':') ? "]" : "", bound, c.store_dir,
	       symd_work_can_fetch(d.work) ? c.urls : "none");
	fflush(stdout);
	log_config(&c, &d, bound);
	event_base_dispatch(d.base);
	status = 0;
out:
	daemon_free(&d);
	symd_s3_config_release(&c.s3);
	free((char *)c.ao.token);
	if (!status)
		symd_log_msg(SYMD_LOG_INFO, "stopped", "symd stopped");
	symd_log_stop(SYMD_LOG_STOP_MS);
	return status;
}
