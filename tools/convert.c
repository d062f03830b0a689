/*
 * convert.c - `sym convert [--to raw|pprof] [-o OUT] IN`: convert a
 * profile between the raw stack format (docs/raw-format.md) and pprof's
 * gzipped profile.proto (docs/pprof.md).
 *
 * The input's format is told from its first bytes (sym_prof_read_file()):
 * "sym-raw " is the raw format, gzipped or not; anything else is read as
 * pprof.  The output is raw unless --to pprof.  IN may be "-" for stdin.
 *
 * With -o the output goes to OUT atomically (tools/profile.c): OUT is the
 * old file or the complete new one, never half of one.  Without -o it
 * goes to stdout; pprof's binary output is not written to a terminal.
 *
 * Exit status: 0, 1 when the input is bad or the output cannot be
 * written (with the reader's message), 2 for a usage error.
 */
#include <getopt.h>
#include <string.h>

#include "tools.h"
#include "base.h"

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
	if (tool_prof_binary_tty(pprof, out))
		return TOOL_EXIT_USAGE;
	if (tool_prof_read(in, &p))
		return TOOL_EXIT_FAIL;
	err = tool_prof_write(p, pprof, out);
	sym_prof_free(p);
	if (err)
		return TOOL_EXIT_FAIL;
	return TOOL_EXIT_OK;
}
