/*
 * convert.c - `sym convert [--to raw|pprof] [-o OUT] IN`: convert a
 * profile between the raw stack format (docs/raw-format.md) and pprof's
 * gzipped profile.proto (docs/pprof.md).
 *
 * The input's format is told from its first bytes (sym_prof_read_file()):
 * "sym-raw " is the raw format, gzipped or not; anything else is read as
 * pprof.  The output is raw unless --to pprof.  IN may be "-" for stdin.
 *
 * With -o the output goes to a temporary file beside OUT (same directory,
 * so the rename cannot cross file systems) that is fsync()ed and renamed
 * over OUT only when everything was written: OUT is the old file or the
 * complete new one, never half of one.  Without -o it goes to stdout;
 * pprof's binary output is not written to a terminal.
 *
 * Exit status: 0, 1 when the input is bad or the output cannot be
 * written (with the reader's message), 2 for a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sym convert [--to raw|pprof] [-o OUT] IN\n\n"
		   "Convert a profile between the raw stack format (sym-raw "
		   "1) and pprof\n(gzipped profile.proto).  IN is either; "
		   "its first bytes tell which.\nIN may be - for stdin.\n\n"
		   "  -t, --to FORMAT   raw (the default) or pprof\n"
		   "  -o, --output OUT  write OUT atomically (a temporary "
		   "file renamed over\n"
		   "                    it when complete); default stdout\n"
		   "  -h, --help        this text\n\n"
		   "Map vaddrs, kinds and pids, stack flags, pids and tids, "
		   "the header,\nprocesses and threads survive raw -> pprof "
		   "-> raw (docs/pprof.md).\nA pprof profile from elsewhere "
		   "gets guessed vaddrs (map flag\nvaddr-guessed).  Exit "
		   "status 1 for a bad input, 2 for bad usage.\n");
}

/* Write @p in @to's format to @fd. */
static int write_prof(const struct sym_prof *p, bool pprof, int fd)
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
	err = write_prof(p, pprof, fd);
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

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *in;
	struct sym_prof *p = NULL;
	char msg[512], ebuf[256];
	bool pprof = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "t:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (strcmp(optarg, "pprof") == 0) {
				pprof = true;
			} else if (strcmp(optarg, "raw") == 0) {
				pprof = false;
			} else {
				tool_err("unknown format '%s' (raw or pprof)",
					 optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	in = argv[optind];
	if (!out && pprof && isatty(STDOUT_FILENO)) {
		tool_err("not writing binary pprof data to a terminal; "
			 "use -o FILE or a redirection");
		return TOOL_EXIT_USAGE;
	}

	msg[0] = '\0';
	err = sym_prof_read_file(strcmp(in, "-") == 0 ? "/dev/stdin" : in,
				 &p, msg, sizeof(msg));
	if (err) {
		sym_strerror(err, ebuf, sizeof(ebuf));
		if (msg[0] && -err < SYM_E_BASE)
			tool_err("%s", msg);	/* names the file already */
		else if (msg[0])
			tool_err("'%s': %s: %s", in, ebuf, msg);
		else
			tool_err("'%s': %s", in, ebuf);
		return TOOL_EXIT_FAIL;
	}
	if (out) {
		err = write_atomic(p, pprof, out);
	} else {
		fflush(stdout);
		err = write_prof(p, pprof, STDOUT_FILENO);
	}
	sym_prof_free(p);
	if (err) {
		tool_err_code(out ? out : "stdout", err);
		return TOOL_EXIT_FAIL;
	}
	return TOOL_EXIT_OK;
}
