/*
 * t-read-lines.c - tool_read_lines_batch() and tool_read_lines()
 * (tools/util.c), the input loop of `sym addr2line` and `sym lookup`:
 * since issue 19 the batch reader hands over all the whole lines of a
 * read in one call (tool_lines_fn), which tool_each_line() splits.  On
 * random inputs (short lines, empty ones, lines of about TOOL_LINE_MAX
 * bytes and longer, with and without a last newline), both give exactly
 * the lines of a plain split that cuts each line to TOOL_LINE_MAX bytes,
 * each block keeps its contract (whole lines, a newline at the end or a
 * NUL after it), and a callback's non-zero value stops the reading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "tools.h"
#include "base.h"

/* The lines a reader gave, concatenated, each followed by a '\n'. */
struct seen {
	char *p;
	size_t len, cap;
	size_t nlines;
	size_t stop_at;		/* 1 back on line stop_at; 0: never */
	bool bad_block;		/* a block broke the contract */
	size_t flushes;
};

static void seen_add(struct seen *s, const char *line)
{
	size_t n = strlen(line);

	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->p = realloc(s->p, s->cap);
		if (!s->p)
			abort();
	}
	memcpy(s->p + s->len, line, n);
	s->p[s->len + n] = '\n';
	s->len += n + 1;
}

static int on_line(void *ctx, char *line)
{
	struct seen *s = ctx;

	seen_add(s, line);
	return ++s->nlines == s->stop_at;
}

static int on_lines(void *ctx, char *lines, size_t len)
{
	struct seen *s = ctx;

	/* Whole lines: a newline at the end, or else a NUL after it, and
	 * no NUL or newline in the last line then. */
	if (len == 0 || (lines[len - 1] != '\n' &&
			 (lines[len] != '\0' ||
			  memchr(lines, '\n', len) != NULL)))
		s->bad_block = true;
	return tool_each_line(lines, len, on_line, ctx);
}

/* Whether @a saw the first @len bytes of what @want saw. */
static bool same(const struct seen *a, const struct seen *want, size_t len)
{
	return a->len == len && (len == 0 || memcmp(a->p, want->p, len) == 0);
}

static int on_flush(void *ctx)
{
	((struct seen *)ctx)->flushes++;
	return 0;
}

/* The lines of @in (@n bytes), as the readers promise them. */
static void oracle(const char *in, size_t n, struct seen *s)
{
	size_t i = 0, j, k;
	char *line;

	while (i < n) {
		for (j = i; j < n && in[j] != '\n'; j++)
			;
		k = j - i < TOOL_LINE_MAX ? j - i : TOOL_LINE_MAX;
		line = strndup(in + i, k);
		if (!line)
			abort();
		on_line(s, line);
		free(line);
		i = j + 1;
	}
}

/* An input of random lines; no NUL bytes (lines are C strings). */
static char *make_input(unsigned *seed, size_t *len)
{
	size_t cap = 8 * TOOL_LINE_MAX, n = 0;
	char *in = malloc(cap);
	int lines = (int)(rand_r(seed) % 400);

	if (!in)
		abort();
	for (int l = 0; l < lines; l++) {
		size_t k;

		switch (rand_r(seed) % 16) {
		case 0:
			k = 0;
			break;
		case 1:		/* about the longest line kept whole */
			k = TOOL_LINE_MAX - 2 + rand_r(seed) % 5;
			break;
		case 2:		/* longer: cut */
			k = TOOL_LINE_MAX + rand_r(seed) % (2 * TOOL_LINE_MAX);
			break;
		default:
			k = rand_r(seed) % 40;
		}
		if (n + k + 1 > cap)
			break;
		for (size_t i = 0; i < k; i++)
			in[n + i] = "0x123abcdefgh \t\r"[rand_r(seed) % 16];
		n += k;
		in[n++] = '\n';
	}
	/* Half of them without the last newline. */
	if (n && rand_r(seed) % 2)
		n--;
	*len = n;
	return in;
}

static int input_fd(const char *in, size_t n)
{
	int fd = memfd_create("t-read-lines", 0);

	if (fd < 0)
		return -1;
	if (write(fd, in, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(void)
{
	unsigned seed = 19;
	size_t bad_lines = 0, bad_blocks = 0, bad_stop = 0, no_flush = 0;
	int fd;

	fd = memfd_create("t-read-lines", 0);
	if (fd < 0)
		tap_skip_all("no memfd_create()");
	close(fd);
	for (int round = 0; round < 300; round++) {
		struct seen want = { 0 }, a = { 0 }, b = { 0 }, c = { 0 };
		size_t n;
		char *in = make_input(&seed, &n);
		int rc;

		oracle(in, n, &want);
		/* tool_read_lines_batch(), blocks split by tool_each_line() */
		fd = input_fd(in, n);
		rc = tool_read_lines_batch(fd, on_lines, on_flush, &a);
		close(fd);
		/* tool_read_lines(), one line a call */
		fd = input_fd(in, n);
		rc |= tool_read_lines(fd, on_line, &b);
		close(fd);
		if (rc || !same(&a, &want, want.len) ||
		    !same(&b, &want, want.len)) {
			if (bad_lines++ < 3)
				printf("# round %d: %zu lines, want %zu\n",
				       round, a.nlines, want.nlines);
		}
		bad_blocks += a.bad_block;
		no_flush += a.flushes == 0;
		/* Stopped on a line: that value back, no line after it. */
		if (want.nlines) {
			c.stop_at = 1 + rand_r(&seed) % want.nlines;
			fd = input_fd(in, n);
			rc = tool_read_lines_batch(fd, on_lines, NULL, &c);
			close(fd);
			if (rc != 1 || c.nlines != c.stop_at ||
			    c.len > want.len || !same(&c, &want, c.len))
				bad_stop++;
		}
		free(want.p);
		free(a.p);
		free(b.p);
		free(c.p);
		free(in);
	}
	CHECK(bad_lines == 0);
	CHECK(bad_blocks == 0);
	CHECK(bad_stop == 0);
	CHECK(no_flush == 0);
	return tap_done();
}
