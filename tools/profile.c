/*
 * profile.c - reading and writing profiles for the sym commands that take
 * one (convert, symbolize, pprof): the error messages of a bad input, and
 * the atomic output.
 *
 * With an output path, a profile goes to a temporary file beside it (same
 * directory, so the rename cannot cross file systems) that is fsync()ed
 * and renamed over it only when everything was written: the path holds
 * the old file or the complete new one, never half of one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools.h"
#include "base.h"

int tool_prof_read(const char *path, struct sym_prof **out)
{
	char msg[512], ebuf[256];
	int err;

	msg[0] = '\0';
	err = sym_prof_read_file(strcmp(path, "-") == 0 ? "/dev/stdin" : path,
				 out, msg, sizeof(msg));
	if (!err)
		return 0;
	sym_strerror(err, ebuf, sizeof(ebuf));
	if (err == -ENOMEM || !msg[0])
		tool_err_code(path, err);
	else if (-err < SYM_E_BASE && err != -E2BIG)
		tool_err("%s", msg);	/* names the file already */
	else
		tool_err("'%s': %s: %s", path, ebuf, msg);
	return err;
}

/* Write @p in its format to @fd. */
static int write_fd(const struct sym_prof *p, bool pprof, int fd)
{
	return pprof ? sym_prof_write_pprof(p, fd) : sym_prof_write(p, fd);
}

/*
 * Write @p to @out through a temporary file in the same directory,
 * renamed over @out when complete.  The new file gets 0666 minus the
 * umask, as a plain open(O_CREAT) would.
 */
static int write_atomic(const struct sym_prof *p, bool pprof, const char *out)
{
	size_t n = strlen(out);
	char *tmp = malloc(n + sizeof(".tmp.XXXXXX"));
	mode_t mask;
	int fd = -1, err = 0;

	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, out, n);
	memcpy(tmp + n, ".tmp.XXXXXX", sizeof(".tmp.XXXXXX"));
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		err = -errno;
		goto unlink;
	}
	err = write_fd(p, pprof, fd);
	if (err)
		goto unlink;
	if (fsync(fd) != 0) {
		err = -errno;
		goto unlink;
	}
	if (close(fd) != 0) {
		fd = -1;
		err = -errno;
		goto unlink;
	}
	fd = -1;
	if (rename(tmp, out) != 0) {
		err = -errno;
		goto unlink;
	}
	goto out;
unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out:
	free(tmp);
	return err;
}

/*
 * Write @p straight into @out, an existing file that is not a regular one
 * (/dev/null, /dev/stdout, a FIFO): renaming a temporary file over it
 * would replace the device itself (as root, /dev/null became a regular
 * file).
 */
static int write_special(const struct sym_prof *p, bool pprof,
			 const char *out)
{
	int fd = open(out, O_WRONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = write_fd(p, pprof, fd);
	if (close(fd) != 0 && !err)
		err = -errno;
	return err;
}

int tool_prof_write(const struct sym_prof *p, bool pprof, const char *out)
{
	struct stat sb;
	int err;

	if (out && stat(out, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		err = write_special(p, pprof, out);
	} else if (out) {
		err = write_atomic(p, pprof, out);
	} else {
		fflush(stdout);
		err = write_fd(p, pprof, STDOUT_FILENO);
	}
	if (err)
		tool_err_code(out ? out : "stdout", err);
	return err;
}

bool tool_prof_binary_tty(bool pprof, const char *out)
{
	if (out || !pprof || !isatty(STDOUT_FILENO))
		return false;
	tool_err("not writing binary pprof data to a terminal; use -o FILE "
		 "or a redirection");
	return true;
}
