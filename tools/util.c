/*
 * util.c - helpers shared by the sym subcommands: error messages and the
 * parsing of addresses and offsets.
 *
 * Error messages go to stderr as "<prog>: <what>", where <prog> is
 * "sym <command>" once the dispatcher has chosen a command.  The parsers
 * take the whole string or fail: a trailing character is an error, never
 * silently ignored.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"
#include "base.h"

static const char *prog = "sym";

void tool_set_prog(const char *p)
{
	prog = p;
}

const char *tool_prog(void)
{
	return prog;
}

/* tool_err_capture()'s buffer; NULL when messages go to stderr. */
static char *capture;
static size_t capture_len;

void tool_err_capture(char *buf, size_t len)
{
	capture = len ? buf : NULL;
	capture_len = len;
	if (capture)
		capture[0] = '\0';
}

void tool_err(const char *fmt, ...)
{
	va_list ap;

	if (capture) {
		va_start(ap, fmt);
		vsnprintf(capture, capture_len, fmt, ap);
		va_end(ap);
		return;
	}
	/* stdout may hold answers for earlier addresses: keep the order. */
	fflush(stdout);
	/* One line, whole, when worker threads (libsym's log) and this
	 * one speak at once. */
	flockfile(stderr);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void tool_err_code(const char *subject, int err)
{
	char buf[256];

	tool_err("'%s': %s", subject, sym_strerror(err, buf, sizeof(buf)));
}

#define N TOOL_HEX_NONE
#define N16 N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N
const uint8_t tool_hex_digit[256] = {
	N16, N16, N16,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, N, N, N, N, N, N,		/* '0' */
	N, 10, 11, 12, 13, 14, 15, N, N, N, N, N, N, N, N, N,	/* 'A' */
	N16,
	N, 10, 11, 12, 13, 14, 15, N, N, N, N, N, N, N, N, N,	/* 'a' */
	N16, N16, N16, N16, N16, N16, N16, N16, N16,		/* 0x70 */
};
#undef N16
#undef N

/*
 * By hand (tool_scan_hex()), not strtoull(), which costs about 200
 * instructions an address of a warm `sym lookup` (a tenth of it).  What
 * it accepts and returns is what the strtoull() version did: after the
 * optional 0x, strtoull(, 16) would skip a second 0x when a hex digit
 * follows it ("0x0x10" is 0x10); every digit is read even past 64 bits
 * (-ERANGE before trailing junk's -EINVAL).
 */
int tool_parse_hex(const char *s, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int err = tool_scan_hex(s, &v, &end);

	if (err)
		return err;
	if (*end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

int tool_parse_offset(const char *s, int64_t *out)
{
	long long v;
	char *end;

	if (s[0] != '+' && s[0] != '-' && !isdigit((unsigned char)s[0]))
		return -EINVAL;
	if (!isdigit((unsigned char)s[s[0] == '+' || s[0] == '-']))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

bool tool_valid_build_id(char *s)
{
	size_t n;

	for (n = 0; s[n]; n++) {
		if (!isxdigit((unsigned char)s[n]))
			return false;
		s[n] = (char)tolower((unsigned char)s[n]);
	}
	return n >= 2 && n <= 128 && n % 2 == 0;
}

char *tool_trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' ||
			 s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

char *tool_line_cut(char *line, char *end)
{
	char *nl = memchr(line, '\n', (size_t)(end - line));

	if (!nl)
		return end + 1;		/* *end is already a NUL */
	*nl = '\0';
	return nl + 1;
}

int tool_each_line(char *lines, size_t len, tool_line_fn fn, void *ctx)
{
	char *end = lines + len, *next;
	int rc;

	for (; lines < end; lines = next) {
		next = tool_line_cut(lines, end);
		rc = fn(ctx, lines);
		if (rc)
			return rc;
	}
	return 0;
}

/* tool_read_lines()'s function and its context. */
struct line_fn {
	tool_line_fn fn;
	void *ctx;
};

static int each_line(void *ctx, char *lines, size_t len)
{
	const struct line_fn *c = ctx;

	return tool_each_line(lines, len, c->fn, c->ctx);
}

int tool_read_lines(int fd, tool_line_fn fn, void *ctx)
{
	struct line_fn c = { fn, ctx };

	return tool_read_lines_batch(fd, each_line, NULL, &c);
}

/* Would a read() of @fd return at once? */
static bool input_ready(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

int tool_read_lines_batch(int fd, tool_lines_fn fn, tool_flush_fn flush,
			  void *ctx)
{
	char *buf = malloc(TOOL_LINE_MAX + 1), *nl;
	size_t len = 0, start = 0;
	bool skipping = false;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t got;

		/* The rest of an over-long line is dropped. */
		nl = skipping ? memchr(buf, '\n', len) : NULL;
		if (nl) {
			start = (size_t)(nl - buf) + 1;
			skipping = false;
		}
		/* Every complete line already buffered, in one call. */
		nl = !skipping && start < len ?
		     memrchr(buf + start, '\n', len - start) : NULL;
		if (nl) {
			size_t next = (size_t)(nl - buf) + 1;

			rc = fn(ctx, buf + start, next - start);
			start = next;
			if (rc)
				goto out;
		}
		if (skipping)
			start = len;
		memmove(buf, buf + start, len - start);
		len -= start;
		start = 0;
		if (len == TOOL_LINE_MAX) {
			/* Over-long line: answer its head, drop the rest. */
			buf[len] = '\0';
			rc = fn(ctx, buf, len);
			skipping = true;
			len = 0;
			if (rc)
				goto out;
		}
		/* About to block: the answers so far must be out first (a
		 * co-process waits for them before it writes more).  Input
		 * that is already there (a file, a busy pipe) is read on,
		 * so that batches grow big enough to sort. */
		if (!input_ready(fd)) {
			if (flush) {
				rc = flush(ctx);
				if (rc)
					goto out;
			}
			if (fflush(stdout) != 0) {
				rc = -EIO;
				goto out;
			}
		}
		got = read(fd, buf + len, TOOL_LINE_MAX - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			goto out;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	/* A last line without a newline still counts. */
	if (len && !skipping) {
		buf[len] = '\0';
		rc = fn(ctx, buf, len);
	}
	if (!rc && flush)
		rc = flush(ctx);
out:
	free(buf);
	return rc;
}

int tool_dirs_add(struct tool_dirs *d, const char *arg)
{
	char *copy, *p, *next;

	if (d->nbufs == TOOL_DIRS_MAX)
		return -E2BIG;
	copy = strdup(arg);
	if (!copy)
		return -ENOMEM;
	d->bufs[d->nbufs++] = copy;
	for (p = copy; p; p = next) {
		next = strchr(p, ':');
		if (next)
			*next++ = '\0';
		if (*p == '+' || *p == '-')
			p++;
		if (*p == '\0')
			continue;
		if (d->n == TOOL_DIRS_MAX)
			return -E2BIG;
		d->dirs[d->n++] = p;
	}
	d->dirs[d->n] = NULL;
	return 0;
}

void tool_dirs_release(struct tool_dirs *d)
{
	for (size_t i = 0; i < d->nbufs; i++)
		free(d->bufs[i]);
	memset(d, 0, sizeof(*d));
}
