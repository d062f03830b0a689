/*
 * prof-test.h - helpers of the profile tests (t-prof.c, t-symbolized.c)
 * and of the fuzz-raw target: writing a profile into memory and comparing
 * symbolizations.
 */
#ifndef SYM_PROF_TEST_H
#define SYM_PROF_TEST_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sym.h"
#include "sym_prof.h"

static inline int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Write @p into memory through a memfd; *out is malloc()ed and ends with
 * a NUL (not counted in *len). */
static inline int write_mem(const struct sym_prof *p, char **out, size_t *len)
{
	int fd = memfd_create("prof-test", 0), err;
	off_t end;
	char *buf;

	if (fd < 0)
		return -errno;
	err = sym_prof_write(p, fd);
	end = lseek(fd, 0, SEEK_END);
	if (err || end < 0) {
		close(fd);
		return err ? err : -errno;
	}
	buf = malloc((size_t)end + 1);
	if (!buf || pread(fd, buf, (size_t)end, 0) != end) {
		free(buf);
		close(fd);
		return -EIO;
	}
	buf[end] = '\0';
	close(fd);
	*out = buf;
	*len = (size_t)end;
	return 0;
}

static inline int read_str(const char *text, struct sym_prof **p, char *msg,
			   size_t msglen)
{
	return sym_prof_read(text, strlen(text), p, msg, msglen);
}

/* Whether @n lines of two locations are equal. */
static inline int same_lines(const struct sym_prof_line *a,
			     const struct sym_prof_line *b, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (!same_str(a[k].function, b[k].function) ||
		    !same_str(a[k].file, b[k].file) || a[k].line != b[k].line ||
		    a[k].column != b[k].column || a[k].flags != b[k].flags)
			return 0;
	return 1;
}

/* Whether @a and @b are symbolized alike: the same locations in the same
 * order, each with the same frame, status and lines. */
static inline int same_locations(const struct sym_prof *a,
				 const struct sym_prof *b)
{
	size_t n = sym_prof_nlocations(a);

	if (n != sym_prof_nlocations(b) ||
	    sym_prof_symbolized(a) != sym_prof_symbolized(b))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct sym_prof_line *la, *lb;
		struct sym_prof_frame fa, fb;
		uint32_t sa, sb;
		size_t na, nb;

		sym_prof_location_at(a, i, &fa, &sa, &la, &na);
		sym_prof_location_at(b, i, &fb, &sb, &lb, &nb);
		if (fa.addr != fb.addr || fa.map != fb.map ||
		    fa.flags != fb.flags || sa != sb || na != nb ||
		    !same_lines(la, lb, na))
			return 0;
	}
	return 1;
}

#endif /* SYM_PROF_TEST_H */
