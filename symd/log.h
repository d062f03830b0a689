/*
 * log.h - the daemon's log on stderr: one line per request (the access
 * log), a start-up line with the whole configuration, and the errors of
 * fetches and conversions.  This header is the manual; docs/symd.8 has
 * the fields.
 *
 *	symd_log_start(STDERR_FILENO, SYMD_LOG_JSON);
 *	...
 *	struct symd_log_line l;
 *
 *	symd_log_begin(&l, SYMD_LOG_WARN, "fetch_failed");
 *	symd_log_str(&l, "build_id", id);
 *	symd_log_str(&l, "upstream", url);
 *	symd_log_end(&l);
 *	...
 *	symd_log_stop(SYMD_LOG_STOP_MS);
 *
 * Two formats of the same fields, one line each:
 *   text  2026-12-02T12:30:01.123Z info access client=127.0.0.1:41234
 *         method=GET path=/healthz status=200 bytes=61 duration_ms=0.210
 *         (logfmt: key=value, a value with a blank, '"', '=' or '\' or
 *         an empty one in double quotes with '"' and '\' escaped)
 *   json  {"time":"2026-12-02T12:30:01.123Z","level":"info",
 *         "event":"access","client":"127.0.0.1:41234",...}
 * The time is RFC 3339, UTC, in milliseconds.  Every value is cut to
 * printable ASCII (other bytes become '?'), so nothing a client sends can
 * forge a line or break the JSON; a line is at most SYMD_LOG_LINE_MAX
 * bytes (a longer one is cut at a field and gets "truncated":true).
 *
 * Never a stall.  The event loop must not wait for stderr (a full pipe
 * nobody reads, a slow terminal, a stopped journald): lines go into a
 * buffer of SYMD_LOG_BUFFER bytes that a writer thread of this module
 * drains with blocking write()s.  When the buffer is full, a line is
 * dropped and counted (symd_log_dropped(), the metric
 * symd_log_dropped_lines_total); once the writer can write again it says
 * how many it lost in a "log_dropped" line.
 *
 * Shutdown.  symd_log_stop() gives the writer up to its timeout to write
 * what is buffered, then returns either way: if stderr still blocks, the
 * lines left are counted as dropped and lost, and the writer thread,
 * stuck in write(), ends with the process.  Lines logged after
 * symd_log_stop() are dropped too (nothing may block the exit), and so
 * are lines before symd_log_start(): before it, callers print with
 * fprintf() (usage errors).
 *
 * Thread-safety: every function but symd_log_start() and
 * symd_log_stop() may be called from any thread (a mutex guards the
 * buffer, held for a memcpy; a line is built in the caller's struct).
 * symd_log_start() and symd_log_stop() are the main thread's, once.
 */
#ifndef SYMD_LOG_H
#define SYMD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum symd_log_format { SYMD_LOG_TEXT = 0, SYMD_LOG_JSON };

enum symd_log_level { SYMD_LOG_ERROR, SYMD_LOG_WARN, SYMD_LOG_INFO };

/* The buffer between the loggers and the writer thread. */
#define SYMD_LOG_BUFFER ((size_t)1 << 20)
/* One line at most, newline included. */
#define SYMD_LOG_LINE_MAX 4096u
/* What symd_log_stop() waits at most at the daemon's exit. */
#define SYMD_LOG_STOP_MS 2000u

/**
 * symd_log_format_parse() - "text" or "json" into @out.
 * @return 0, -EINVAL for anything else
 */
int symd_log_format_parse(const char *s, enum symd_log_format *out);

/**
 * symd_log_start() - start the writer thread on @fd in format @fmt.
 * @param fd  borrowed: stays open until the process exits (the writer
 *            may be stuck on it past symd_log_stop())
 * @return 0, -errno of pthread_create(); -EALREADY when started before
 */
int symd_log_start(int fd, enum symd_log_format fmt);

/**
 * symd_log_stop() - write what is buffered, waiting @timeout_ms at
 * most, and stop taking lines (see Shutdown above).  A no-op when not
 * started.
 */
void symd_log_stop(unsigned timeout_ms);

/** Lines dropped since the start: the buffer was full, or they came
 *  before symd_log_start() or after symd_log_stop(). */
uint64_t symd_log_dropped(void);

/** A line being built: the caller's storage, no allocation. */
struct symd_log_line {
	char buf[SYMD_LOG_LINE_MAX];
	size_t len;
	bool json;
	bool truncated;
	bool in_list;		/* symd_log_list_*() between begin and end */
	unsigned list_n;	/* items of the open list */
	size_t list_mark;	/* len before the list, to undo it when cut */
};

/** symd_log_begin() - start a line of @level about @event (a fixed word:
 *  "access", "start", "fetch_failed", ...); the time is taken now. */
void symd_log_begin(struct symd_log_line *l, enum symd_log_level level,
		    const char *event);
/** A string field; @val NULL logs "-" (text) or null (JSON). */
void symd_log_str(struct symd_log_line *l, const char *key,
		  const char *val);
/** A number field. */
void symd_log_u64(struct symd_log_line *l, const char *key, uint64_t v);
/** A duration given in microseconds, logged in milliseconds with three
 *  decimals (@key should end in "_ms"). */
void symd_log_ms(struct symd_log_line *l, const char *key, uint64_t usec);
/** A list of strings: text "a,b,c", JSON ["a","b","c"]; an empty list
 *  is "-" (text) or [] (JSON).  Items must not contain ','. */
void symd_log_list_begin(struct symd_log_line *l, const char *key);
void symd_log_list_add(struct symd_log_line *l, const char *item);
void symd_log_list_end(struct symd_log_line *l);
/** symd_log_end() - finish the line and queue it for the writer (or drop
 *  and count it, see above).  @l may be reused after. */
void symd_log_end(struct symd_log_line *l);

/** One line with a "msg" field, printf-style: for the daemon's few
 *  messages that have no fields of their own. */
void symd_log_msg(enum symd_log_level level, const char *event,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* SYMD_LOG_H */
