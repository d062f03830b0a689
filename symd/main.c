/*
 * main.c - symd: options, start-up, signals and a graceful stop.
 *
 * Start-up order matters: libdebuginfod reads its settings from the
 * environment, so work.c sets it before any thread exists; libevent is
 * told to use pthreads before the base is made, so that workers may
 * event_active() the loop's events.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "sym.h"
#include "api.h"
#include "symd.h"

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
"  --ttl-absent SECONDS      how long \"no source has it\" is believed\n"
"                            (default 604800)\n"
"  --ttl-failed SECONDS      backoff after a failed fetch (default 60)\n"
"  --fetch-timeout SECONDS   abort a download stalled that long (30)\n"
"  --max-body SIZE           POST /v1/symbolize body limit (default 8M)\n"
"  --max-addresses N         addresses per request (default 100000)\n"
"  --max-modules N           modules per request (default 1024)\n"
"  --max-wait-ms N           longest wait_ms honoured (default 30000)\n"
"  --max-upload SIZE         upload limit (default: none)\n"
"  --max-conns N             open connections (default 1024)\n"
"  --queue-max N             queued jobs before 503 (default 4096)\n"
"  --header-timeout-ms N     request line and headers deadline (10000)\n"
"  --body-timeout-ms N       idle time within a body (30000)\n"
"  --idle-timeout-ms N       keep-alive idle time (60000)\n"
"  --quiet                   no line per request on stderr\n"
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

struct daemon {
	struct event_base *base;
	struct symd_api *api;
	bool stopping;
};

static void stopped(struct symd_http *http, void *ctx)
{
	struct daemon *d = ctx;

	(void)http;
	event_base_loopexit(d->base, NULL);
}

static void on_signal(evutil_socket_t sig, short what, void *ctx)
{
	struct daemon *d = ctx;

	(void)what;
	if (d->stopping) {
		/* A second signal: stop now. */
		event_base_loopexit(d->base, NULL);
		return;
	}
	d->stopping = true;
	fprintf(stderr, "symd: %s: finishing requests in flight\n",
		strsignal((int)sig));
	symd_http_shutdown(symd_api_http(d->api), stopped, d);
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
	(void)fd;
	(void)what;
	symd_work_maintain(ctx);
}

static void log_lib(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	fprintf(stderr, "symd: %s\n", msg);
}

enum {
	O_LISTEN = 256, O_STORE, O_URLS, O_TOKEN, O_WORKERS, O_FWORKERS,
	O_MAXSIZE, O_TTL_ABSENT, O_TTL_FAILED, O_FETCH_TIMEOUT, O_MAX_BODY,
	O_MAX_ADDRS, O_MAX_MODS, O_MAX_WAIT, O_MAX_UPLOAD, O_MAX_CONNS,
	O_QUEUE, O_HDR_MS, O_BODY_MS, O_IDLE_MS, O_QUIET, O_HELP, O_VERSION,
};

static const struct option longopts[] = {
	{ "listen", required_argument, NULL, O_LISTEN },
	{ "store", required_argument, NULL, O_STORE },
	{ "debuginfod-urls", required_argument, NULL, O_URLS },
	{ "upload-token-file", required_argument, NULL, O_TOKEN },
	{ "workers", required_argument, NULL, O_WORKERS },
	{ "fetch-workers", required_argument, NULL, O_FWORKERS },
	{ "max-store-size", required_argument, NULL, O_MAXSIZE },
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
	{ "quiet", no_argument, NULL, O_QUIET },
	{ "help", no_argument, NULL, O_HELP },
	{ "version", no_argument, NULL, O_VERSION },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	const char *listen = "127.0.0.1:8630", *store_dir = NULL;
	const char *urls = getenv("DEBUGINFOD_URLS"), *token_file = NULL;
	char dirbuf[4096], host[256], *colon;
	struct symd_work_opts wo = { 0 };
	struct symd_api_opts ao = {
		.limits = SYMD_REQ_LIMITS_DEFAULT,
		.max_body = 8 << 20,
		.max_response = (size_t)1 << 30,
		.log = true,
	};
	struct sym_store *store = NULL;
	struct symd_work *work = NULL;
	struct daemon d = { 0 };
	struct event *sigs[2] = { NULL, NULL }, *tick = NULL;
	struct timeval tick_tv = { .tv_sec = 5 };
	unsigned port, bound = 0, u;
	uint64_t size;
	int opt, err, status = 1;
	char msg[256];

	SYM_OPTS(sym_store_opts, so);
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		err = 0;
		switch (opt) {
		case O_LISTEN: listen = optarg; break;
		case O_STORE: store_dir = optarg; break;
		case O_URLS: urls = optarg; break;
		case O_TOKEN: token_file = optarg; break;
		case O_WORKERS:
			err = parse_uint(optarg, &wo.cpu_workers);
			break;
		case O_FWORKERS:
			err = parse_uint(optarg, &wo.fetch_workers);
			break;
		case O_MAXSIZE:
			err = parse_size(optarg, &so.max_size);
			wo.max_store_size = so.max_size;
			break;
		case O_TTL_ABSENT:
			err = parse_uint(optarg, &u);
			so.ttl_absent = u;
			break;
		case O_TTL_FAILED:
			err = parse_uint(optarg, &u);
			so.ttl_failed = wo.ttl_failed = u;
			break;
		case O_FETCH_TIMEOUT:
			err = parse_uint(optarg, &wo.fetch_timeout_s);
			break;
		case O_MAX_BODY:
			err = parse_size(optarg, &size);
			ao.max_body = (size_t)size;
			break;
		case O_MAX_ADDRS:
			err = parse_uint(optarg, &u);
			ao.limits.max_addresses = u;
			break;
		case O_MAX_MODS:
			err = parse_uint(optarg, &u);
			ao.limits.max_modules = u;
			break;
		case O_MAX_WAIT:
			err = parse_uint(optarg, &ao.limits.max_wait_ms);
			break;
		case O_MAX_UPLOAD:
			err = parse_size(optarg, &ao.max_upload);
			break;
		case O_MAX_CONNS:
			err = parse_uint(optarg, &ao.http.max_conns);
			break;
		case O_QUEUE:
			err = parse_uint(optarg, &wo.queue_max);
			break;
		case O_HDR_MS:
			err = parse_uint(optarg, &ao.http.header_timeout_ms);
			break;
		case O_BODY_MS:
			err = parse_uint(optarg, &ao.http.body_timeout_ms);
			break;
		case O_IDLE_MS:
			err = parse_uint(optarg, &ao.http.idle_timeout_ms);
			break;
		case O_QUIET: ao.log = false; break;
		case O_HELP:
			fputs(usage, stdout);
			return 0;
		case O_VERSION:
			printf("symd %s (libsym %s)\n", SYMD_VERSION,
			       SYM_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
		if (err) {
			fprintf(stderr, "symd: bad value for --%s: '%s'\n",
				longopts[opt - O_LISTEN].name, optarg);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "symd: unexpected argument '%s'\n%s",
			argv[optind], usage);
		return 2;
	}
	/* ADDR:PORT, [V6]:PORT */
	colon = strrchr(listen, ':');
	if (!colon || parse_uint(colon + 1, &port) || port > 65535 ||
	    (size_t)(colon - listen) >= sizeof(host) || colon == listen) {
		fprintf(stderr, "symd: --listen wants ADDR:PORT, not '%s'\n",
			listen);
		return 2;
	}
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	if (token_file && !(ao.token = read_token(token_file))) {
		fprintf(stderr, "symd: cannot read a token from '%s': %s\n",
			token_file, strerror(errno));
		return 1;
	}
	if (!store_dir) {
		err = sym_store_default_dir(dirbuf, sizeof(dirbuf));
		if (err) {
			fprintf(stderr, "symd: no store directory: %s (use "
				"--store)\n", sym_strerror(err, msg,
							   sizeof(msg)));
			goto out;
		}
		store_dir = dirbuf;
	}
	signal(SIGPIPE, SIG_IGN);
	sym_set_log(log_lib, NULL, SYM_LOG_WARN);
	/* The loop reads the store; only workers write it. */
	so.flags |= SYM_STORE_NO_READER_WRITES;
	err = sym_store_open(store_dir, &so, &store);
	if (err) {
		fprintf(stderr, "symd: cannot open the store '%s': %s\n",
			store_dir, sym_strerror(err, msg, sizeof(msg)));
		goto out;
	}
	if (evthread_use_pthreads() != 0 ||
	    !(d.base = event_base_new())) {
		fprintf(stderr, "symd: cannot set up libevent\n");
		goto out;
	}
	wo.store = store;
	wo.store_dir = store_dir;
	wo.urls = urls;
	err = symd_work_new(d.base, &wo, &work);
	if (err) {
		fprintf(stderr, "symd: cannot start the workers: %s\n",
			strerror(-err));
		goto out;
	}
	ao.base = d.base;
	ao.store = store;
	ao.store_dir = store_dir;
	ao.work = work;
	err = symd_api_new(&ao, &d.api);
	if (!err)
		err = symd_http_listen(symd_api_http(d.api), host, port,
				       &bound);
	if (err) {
		fprintf(stderr, "symd: cannot listen on %s: %s\n", listen,
			strerror(-err));
		goto out;
	}
	sigs[0] = evsignal_new(d.base, SIGTERM, on_signal, &d);
	sigs[1] = evsignal_new(d.base, SIGINT, on_signal, &d);
	tick = event_new(d.base, -1, EV_PERSIST, on_tick, work);
	if (!sigs[0] || !sigs[1] || !tick || evsignal_add(sigs[0], NULL) ||
	    evsignal_add(sigs[1], NULL) || event_add(tick, &tick_tv)) {
		fprintf(stderr, "symd: cannot catch signals\n");
		goto out;
	}
	printf("symd: listening on %s%s%s:%u, store %s, upstreams %s\n",
	       strchr(host, ':') ? "[" : "", host,
	       strchr(host, ':') ? "]" : "", bound, store_dir,
	       symd_work_can_fetch(work) ? urls : "none");
	fflush(stdout);
	event_base_dispatch(d.base);
	status = 0;
out:
	/* The server first: its requests let go of their waiters and jobs;
	 * then the workers (running conversions finish, fetches are
	 * cancelled); the store last. */
	symd_api_free(d.api);
	/* One more turn: libevent's deferred callbacks free the closed
	 * connections' bufferevents. */
	if (d.base)
		event_base_loop(d.base, EVLOOP_NONBLOCK);
	symd_work_free(work);
	for (int i = 0; i < 2; i++)
		if (sigs[i])
			event_free(sigs[i]);
	if (tick)
		event_free(tick);
	if (d.base)
		event_base_free(d.base);
	sym_store_close(store);
	free((char *)ao.token);
	if (!status)
		fprintf(stderr, "symd: stopped\n");
	return status;
}
