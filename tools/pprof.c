/*
 * pprof.c - `sym pprof IN [-o OUT] [--server URL | --store DIR]`: write a
 * symbolized pprof profile (gzipped profile.proto, docs/pprof.md) that
 * Google's pprof reads: every ok location with its Lines (the inline
 * chain, innermost first) and Functions.
 *
 * IN is raw, symbolized raw or pprof.  When some of its frames have no
 * location yet, they are symbolized first, as `sym symbolize` does
 * (tools/symbolize.c: the same options, the same summary on stderr).
 * When more than 2% of its samples have stacks the recorder flagged as
 * likely wrong, the views' warning (tools/view/broken.h) says so on
 * stderr, with the cure; the flags themselves travel in the sym_flags
 * label (docs/pprof.md).
 */
#include <errno.h>

#include "tools.h"
#include "view/broken.h"
#include "base.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym pprof [-o OUT] [--server URL | --store DIR] "
		"[--wait-ms MS] [-q|-v] IN\n\n"
		"Write a symbolized pprof profile (gzipped profile.proto) for "
		"Google's\npprof: locations with their inline chains "
		"(innermost first), functions,\nfiles and lines.  IN is raw, "
		"symbolized raw or pprof (- for stdin); its\nframes that have "
		"no location yet are symbolized first, as 'sym symbolize'\n"
		"does, with the same options:\n\n"
		"  -o, --output OUT   write OUT atomically; default stdout "
		"(not a terminal)\n"
		"      --server URL   symbolize through symd\n"
		"      --store DIR    symbolize with the local store (the "
		"default)\n"
		"      --wait-ms MS   --server: how long a build ID may stay "
		"pending\n"
		"  -q, --quiet        no symbolization summary on stderr\n"
		"  -v, --verbose      the summary's table of modules too\n"
		"  -h, --help         this text\n\n"
		"Frames that do not resolve keep their address and mapping "
		"(pprof shows\nthem as addresses); their status travels in "
		"'#sym-loc' comments\n(docs/pprof.md).  Exit status 1 for a "
		"bad input, an unreachable server\nor a write error, 2 for bad "
		"usage.\n");
}

/* The views' warning on broken stacks, for the profile about to go out. */
static void check_broken(const struct sym_prof *p, const char *path)
{
	struct broken_tally t;

	if (broken_tally_prof(p, &t) == 0)
		broken_warn(stderr, &t, path, "they carry the label sym_flags "
			    "(pprof -tags lists them)");
	else
		tool_err_code(path, -ENOMEM);
}

int cmd_pprof(int argc, char **argv)
{
	return tool_symbolize_main(argc, argv, usage, true, check_broken);
}
