/*
 * t-log.c - symd/log.c: the lines in both formats (escaping, hostile
 * bytes, lists, truncation at the line's cap), lines before the start
 * dropped and counted, and the writer on a pipe nobody reads: loggers
 * never wait, the lines over the buffer are dropped and counted, and
 * symd_log_stop() returns though the writer is stuck.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "log.h"
#include "base.h"

/* The line's fields, after the time. */
static const char *after_time(const struct symd_log_line *l)
{
	const char *p = memchr(l->buf, ' ', l->len);

	return p ? p + 1 : "";
}

static void text_lines(void)
{
	struct symd_log_line l;
	char big[6000];

	symd_log_begin(&l, SYMD_LOG_INFO, "access");
	CHECK(l.len == 24 + 12 && l.buf[10] == 'T' && l.buf[23] == 'Z' &&
	      l.buf[19] == '.');
	symd_log_str(&l, "path", "/a b\"c\\d=e\n\x01\xff");
	symd_log_str(&l, "empty", "");
	symd_log_str(&l, "none", NULL);
	symd_log_u64(&l, "status", 200);
	symd_log_ms(&l, "duration_ms", 1234567);
	symd_log_list_begin(&l, "build_ids");
	symd_log_list_add(&l, "ab");
	symd_log_list_add(&l, "cd");
	symd_log_list_end(&l);
	symd_log_list_begin(&l, "nothing");
	symd_log_list_end(&l);
	l.buf[l.len] = '\0';
	CHECK(strcmp(after_time(&l), "info access path=\"/a b\\\"c\\\\d=e???\" "
		     "empty=\"\" none=- status=200 duration_ms=1234.567 "
		     "build_ids=ab,cd nothing=-") == 0);
	printf("# %s\n", l.buf);
	/* A value over the cap: the line stops before it, and says so. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	symd_log_begin(&l, SYMD_LOG_WARN, "e");
	symd_log_str(&l, "a", "1");
	symd_log_str(&l, "big", big);
	symd_log_str(&l, "b", "2");
	CHECK(l.truncated && l.len < SYMD_LOG_LINE_MAX);
	/* Before symd_log_start(): dropped and counted. */
	symd_log_end(&l);
	CHECK(l.len <= SYMD_LOG_LINE_MAX);
	l.buf[l.len] = '\0';
	CHECK(strcmp(after_time(&l), "warn e a=1 truncated=true\n") == 0);
	CHECK(symd_log_dropped() == 1);
}

static void json_lines(void)
{
	struct symd_log_line l;
	char item[300];

	symd_log_begin(&l, SYMD_LOG_ERROR, "x");
	symd_log_str(&l, "msg", "a\"b\\c\td");
	symd_log_str(&l, "none", NULL);
	symd_log_u64(&l, "n", 7);
	symd_log_ms(&l, "duration_ms", 5);
	symd_log_list_begin(&l, "ids");
	symd_log_list_add(&l, "ab");
	symd_log_list_end(&l);
	symd_log_list_begin(&l, "empty");
	symd_log_list_end(&l);
	l.buf[l.len] = '\0';
	CHECK(strncmp(l.buf, "{\"time\":\"20", 11) == 0);
	CHECK(strcmp(strstr(l.buf, "\",\"level\""), "\",\"level\":\"error\","
		     "\"event\":\"x\",\"msg\":\"a\\\"b\\\\c?d\",\"none\":null,"
		     "\"n\":7,\"duration_ms\":0.005,\"ids\":[\"ab\"],"
		     "\"empty\":[]") == 0);
	/* A list cut by the cap goes whole: half of it would lie. */
	memset(item, 'y', sizeof(item) - 1);
	item[sizeof(item) - 1] = '\0';
	symd_log_begin(&l, SYMD_LOG_INFO, "x");
	symd_log_list_begin(&l, "ids");
	for (int i = 0; i < 40; i++)
		symd_log_list_add(&l, item);
	symd_log_end(&l);
	l.buf[l.len] = '\0';
	CHECK(!strstr(l.buf, "\"ids\"") &&
	      strstr(l.buf, ",\"truncated\":true}\n"));
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int main(void)
{
	struct symd_log_line l;
	char buf[4096];
	uint64_t dropped0, t0;
	int p[2];
	ssize_t n;
	enum symd_log_format f;

	CHECK(symd_log_format_parse("json", &f) == 0 && f == SYMD_LOG_JSON);
	CHECK(symd_log_format_parse("text", &f) == 0 && f == SYMD_LOG_TEXT);
	CHECK(symd_log_format_parse("xml", &f) == -EINVAL);
	text_lines();
	if (pipe(p) != 0)
		tap_skip_all("no pipe");
	CHECK(symd_log_start(p[1], SYMD_LOG_JSON) == 0);
	CHECK(symd_log_start(p[1], SYMD_LOG_JSON) == -EALREADY);
	json_lines();
	/* The writer writes the lines out. */
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(n > 0 && strncmp(buf, "{\"time\":", 8) == 0 &&
	      buf[n - 1] == '\n');
	/* Nobody reads now: 4 MB of lines fill the pipe and the buffer;
	 * the rest are dropped, and no call waits. */
	dropped0 = symd_log_dropped();
	for (int i = 0; i < 20000; i++) {
		symd_log_begin(&l, SYMD_LOG_INFO, "flood");
		memset(buf, 'z', 200);
		buf[200] = '\0';
		symd_log_str(&l, "v", buf);
		symd_log_end(&l);
	}
	printf("# %llu of 20000 lines dropped\n",
	       (unsigned long long)(symd_log_dropped() - dropped0));
	CHECK(symd_log_dropped() - dropped0 > 10000);
	/* The writer is stuck in write(): the stop gives up after its
	 * timeout (generous bounds: only a hang fails). */
	t0 = mono_ms();
	symd_log_stop(200);
	CHECK(mono_ms() - t0 < 30000);
	/* After the stop: dropped, counted, never written. */
	dropped0 = symd_log_dropped();
	symd_log_msg(SYMD_LOG_INFO, "late", "%d", 1);
	CHECK(symd_log_dropped() == dropped0 + 1);
	return tap_done();
}
