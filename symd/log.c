/*
 * log.c - the daemon's log (log.h): lines built in the caller's struct,
 * queued in a ring of SYMD_LOG_BUFFER bytes, written by one thread.
 *
 * The ring counts bytes in and out (head, tail: totals since the start,
 * so tail - head is what is buffered).  A logger copies its line in
 * under the mutex, or drops it when it does not fit; the writer copies
 * up to a chunk out under the mutex and writes it without, so a logger
 * never waits for a write(), only for the other memcpy.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "base.h"

/* What the writer takes out of the ring per write(). */
#define CHUNK ((size_t)64 << 10)

static struct {
	pthread_mutex_t mu;
	pthread_cond_t more;	/* lines came, or stop */
	pthread_cond_t idle;	/* the ring is empty and nothing in hand */
	char ring[SYMD_LOG_BUFFER];
	uint64_t head, tail;
	bool running;		/* started and not stopped: lines are taken */
	bool stop, busy;	/* busy: the writer holds a chunk */
	pthread_t thread;
	int fd;
	enum symd_log_format fmt;
	atomic_uint_fast64_t dropped;
} lg = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.more = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
	.fd = -1,
};

static const char *const level_name[] = {
	[SYMD_LOG_ERROR] = "error",
	[SYMD_LOG_WARN] = "warn",
	[SYMD_LOG_INFO] = "info",
};

int symd_log_format_parse(const char *s, enum symd_log_format *out)
{
	if (strcmp(s, "text") == 0)
		*out = SYMD_LOG_TEXT;
	else if (strcmp(s, "json") == 0)
		*out = SYMD_LOG_JSON;
	else
		return -EINVAL;
	return 0;
}

uint64_t symd_log_dropped(void)
{
	return atomic_load_explicit(&lg.dropped, memory_order_relaxed);
}

static void count_dropped(uint64_t n)
{
	atomic_fetch_add_explicit(&lg.dropped, n, memory_order_relaxed);
}

/* ------------------------------------------------------------ the line */

/* Room for the closing "}\n" or "\n", and " truncated=true". */
#define TAIL_ROOM 24

static bool room(struct symd_log_line *l, size_t n)
{
	if (l->truncated || l->len + n + TAIL_ROOM > sizeof(l->buf)) {
		l->truncated = true;
		return false;
	}
	return true;
}

static void put(struct symd_log_line *l, const char *s, size_t n)
{
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

/* Does a text value need quotes? */
static bool needs_quotes(const char *v)
{
	return !*v || v[strcspn(v, " \"=\\")];
}

/* @v as printable ASCII, escaped for JSON or a quoted text value. */
static void put_value(struct symd_log_line *l, const char *v, bool quote)
{
	if (quote)
		put(l, "\"", 1);
	for (; *v; v++) {
		unsigned char ch = (unsigned char)*v;
		char c = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';

		if (c == '"' || c == '\\')
			put(l, "\\", 1);
		put(l, &c, 1);
	}
	if (quote)
		put(l, "\"", 1);
}

/* The bytes put_value() writes for @v, at most. */
static size_t value_room(const char *v)
{
	return 2 * strlen(v) + 2;
}

static void put_key(struct symd_log_line *l, const char *key)
{
	if (l->json) {
		put(l, ",\"", 2);
		put(l, key, strlen(key));
		put(l, "\":", 2);
	} else {
		put(l, " ", 1);
		put(l, key, strlen(key));
		put(l, "=", 1);
	}
}

/* RFC 3339, UTC, milliseconds: 2026-12-02T12:30:01.123Z */
static void timestamp(char *buf, size_t n)
{
	struct timespec ts;
	struct tm tm;
	char day[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%03ldZ", day, ts.tv_nsec / 1000000);
}

void symd_log_begin(struct symd_log_line *l, enum symd_log_level level,
		    const char *event)
{
	char ts[48];

	timestamp(ts, sizeof(ts));
	l->json = lg.fmt == SYMD_LOG_JSON;
	l->truncated = l->in_list = false;
	if (l->json)
		l->len = (size_t)snprintf(l->buf, sizeof(l->buf),
					  "{\"time\":\"%s\",\"level\":\"%s\","
					  "\"event\":\"%s\"", ts,
					  level_name[level], event);
	else
		l->len = (size_t)snprintf(l->buf, sizeof(l->buf), "%s %s %s",
					  ts, level_name[level], event);
}

void symd_log_str(struct symd_log_line *l, const char *key,
		  const char *val)
{
	if (!room(l, strlen(key) + 4 + (val ? value_room(val) : 4)))
		return;
	put_key(l, key);
	if (!val)
		put(l, l->json ? "null" : "-", l->json ? 4 : 1);
	else
		put_value(l, val, l->json || needs_quotes(val));
}

void symd_log_u64(struct symd_log_line *l, const char *key, uint64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%llu", (unsigned long long)v);

	if (!room(l, strlen(key) + 4 + (size_t)n))
		return;
	put_key(l, key);
	put(l, num, (size_t)n);
}

void symd_log_ms(struct symd_log_line *l, const char *key, uint64_t usec)
{
	char num[32];
	int n = snprintf(num, sizeof(num), "%llu.%03u",
			 (unsigned long long)(usec / 1000),
			 (unsigned)(usec % 1000));

	if (!room(l, strlen(key) + 4 + (size_t)n))
		return;
	put_key(l, key);
	put(l, num, (size_t)n);
}

void symd_log_list_begin(struct symd_log_line *l, const char *key)
{
	l->list_mark = l->len;
	l->list_n = 0;
	l->in_list = room(l, strlen(key) + 8);
	if (!l->in_list)
		return;
	put_key(l, key);
	if (l->json)
		put(l, "[", 1);
}

void symd_log_list_add(struct symd_log_line *l, const char *item)
{
	if (!l->in_list)
		return;
	if (!room(l, value_room(item) + 2)) {
		/* Half a list would read as the whole one: none at all. */
		l->len = l->list_mark;
		l->in_list = false;
		return;
	}
	if (l->list_n++)
		put(l, ",", 1);
	put_value(l, item, l->json);
}

void symd_log_list_end(struct symd_log_line *l)
{
	if (!l->in_list)
		return;
	l->in_list = false;
	if (l->json)
		put(l, "]", 1);
	else if (!l->list_n)
		put(l, "-", 1);
}

/* ------------------------------------------------------------ the ring */

/* Copy @n bytes in at the tail.  Under lg.mu, with room checked. */
static void ring_put(const char *s, size_t n)
{
	size_t at = (size_t)(lg.tail % SYMD_LOG_BUFFER);
	size_t first = n < SYMD_LOG_BUFFER - at ? n : SYMD_LOG_BUFFER - at;

	memcpy(lg.ring + at, s, first);
	memcpy(lg.ring, s + first, n - first);
	lg.tail += n;
}

/* Copy up to @max bytes out at the head into @out.  Under lg.mu. */
static size_t ring_get(char *out, size_t max)
{
	size_t at = (size_t)(lg.head % SYMD_LOG_BUFFER);
	size_t n = lg.tail - lg.head < max ? (size_t)(lg.tail - lg.head) : max;
	size_t first = n < SYMD_LOG_BUFFER - at ? n : SYMD_LOG_BUFFER - at;

	memcpy(out, lg.ring + at, first);
	memcpy(out + first, lg.ring, n - first);
	lg.head += n;
	return n;
}

static void queue(const char *s, size_t n)
{
	bool taken = false;

	pthread_mutex_lock(&lg.mu);
	if (lg.running && lg.tail - lg.head + n <= SYMD_LOG_BUFFER) {
		ring_put(s, n);
		pthread_cond_signal(&lg.more);
		taken = true;
	}
	pthread_mutex_unlock(&lg.mu);
	if (!taken)
		count_dropped(1);
}

void symd_log_end(struct symd_log_line *l)
{
	if (l->in_list)
		symd_log_list_end(l);
	if (l->truncated)
		put(l, l->json ? ",\"truncated\":true" : " truncated=true",
		    l->json ? 17 : 15);
	if (l->json)
		put(l, "}", 1);
	put(l, "\n", 1);
	queue(l->buf, l->len);
}

void symd_log_msg(enum symd_log_level level, const char *event,
		  const char *fmt, ...)
{
	struct symd_log_line l;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	symd_log_begin(&l, level, event);
	symd_log_str(&l, "msg", msg);
	symd_log_end(&l);
}

/* ---------------------------------------------------------- the writer */

/* All of @n bytes, or -errno (the log fd is gone: give up). */
static int write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(lg.fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			/* A non-blocking stderr someone else set up. */
			usleep(10000);
			continue;
		}
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The lines lost since the last report, as a line of their own. */
static void report_dropped(uint64_t *reported)
{
	uint64_t now = symd_log_dropped();
	struct symd_log_line l;

	if (now == *reported)
		return;
	symd_log_begin(&l, SYMD_LOG_WARN, "log_dropped");
	symd_log_u64(&l, "lines", now - *reported);
	symd_log_u64(&l, "total", now);
	symd_log_end(&l);
	*reported = now;
}

static void *writer(void *arg)
{
	static char chunk[CHUNK];
	uint64_t reported = 0;
	bool broken = false;
	size_t n;

	(void)arg;
	pthread_mutex_lock(&lg.mu);
	for (;;) {
		while (lg.head == lg.tail && !lg.stop)
			pthread_cond_wait(&lg.more, &lg.mu);
		if (lg.head == lg.tail)
			break;
		n = ring_get(chunk, sizeof(chunk));
		lg.busy = true;
		pthread_mutex_unlock(&lg.mu);
		/* A dead fd (EBADF, EPIPE): the lines go nowhere, but the
		 * ring keeps draining so loggers never fill it. */
		if (!broken && write_all(chunk, n))
			broken = true;
		if (!broken)
			report_dropped(&reported);
		pthread_mutex_lock(&lg.mu);
		lg.busy = false;
		if (lg.head == lg.tail)
			pthread_cond_broadcast(&lg.idle);
	}
	pthread_mutex_unlock(&lg.mu);
	return NULL;
}

int symd_log_start(int fd, enum symd_log_format fmt)
{
	int err;

	pthread_mutex_lock(&lg.mu);
	if (lg.running || lg.stop) {
		pthread_mutex_unlock(&lg.mu);
		return -EALREADY;
	}
	lg.fd = fd;
	lg.fmt = fmt;
	lg.running = true;
	err = -pthread_create(&lg.thread, NULL, writer, NULL);
	if (err)
		lg.running = false;
	pthread_mutex_unlock(&lg.mu);
	return err;
}

/* The lines still in the ring (each ends with a newline). */
static uint64_t lines_left(void)
{
	uint64_t n = 0;

	for (uint64_t i = lg.head; i < lg.tail; i++)
		n += lg.ring[i % SYMD_LOG_BUFFER] == '\n';
	return n;
}

void symd_log_stop(unsigned timeout_ms)
{
	struct timespec until;
	bool drained;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&lg.mu);
	if (!lg.running) {
		pthread_mutex_unlock(&lg.mu);
		return;
	}
	lg.running = false;
	lg.stop = true;
	pthread_cond_signal(&lg.more);
	while ((lg.head != lg.tail || lg.busy) &&
	       pthread_cond_timedwait(&lg.idle, &lg.mu, &until) != ETIMEDOUT)
		;
	drained = lg.head == lg.tail && !lg.busy;
	if (!drained) {
		/* The writer is stuck in write(): what it holds and what
		 * is left are lost; it ends with the process. */
		count_dropped(lines_left());
		lg.head = lg.tail;
	}
	pthread_mutex_unlock(&lg.mu);
	if (drained)
		pthread_join(lg.thread, NULL);
	else
		pthread_detach(lg.thread);
}
