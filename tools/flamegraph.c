/*
 * flamegraph.c - `sym flamegraph`: folded stacks in, an interactive SVG
 * flame graph out.
 *
 *	sym flamegraph [options] [FOLDED...]      (stdin without files, or -)
 *	sym flamegraph --diff [options] BEFORE AFTER
 *	sym flamegraph --diff [options] DIFFFOLDED (two counts a line)
 *
 * This file is the input side only: it reads each input into a
 * stacktree (stacktree.h) and hands the tree to flame_write() (flame.h),
 * which knows nothing of where stacks came from.  Other inputs (raw and
 * symbolized profiles) plug in here the same way.
 *
 * With -o, the SVG goes to a temporary file beside the target and is
 * renamed over it once complete, so a failed run never leaves half a
 * picture behind (unless the target is not a regular file, e.g.
 * /dev/stdout, which is written directly).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools.h"
#include "view/flame.h"
#include "view/views.h"
#include "base.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: sym flamegraph [options] [IN...]\n"
"       sym flamegraph --diff [options] BEFORE AFTER\n"
"       sym flamegraph --diff [options] DIFFFOLDED\n"
"\n"
"Write an interactive SVG flame graph of a profile (raw, symbolized or\n"
"pprof, symbolized on the fly) or of folded stacks (\"a;b;c 12\" lines, as\n"
"FlameGraph's stackcollapse scripts and `sym fold` write them).  Inputs\n"
"are added together; without one, or with -, stdin is read.  The SVG\n"
"needs no network: hover shows a frame's samples, share and 95%% Wilson\n"
"interval, a click zooms, Search (or Ctrl-F) highlights a regex.\n"
"\n"
"  -o, --output FILE     write to FILE instead of stdout\n"
"      --title TEXT      title (default \"Flame Graph\")\n"
"      --subtitle TEXT   a second line under the title\n"
"      --icicle          root on top, stacks growing down\n"
"      --width PX        image width (default 1200)\n"
"      --minwidth PX     leave out frames narrower than PX pixels, or than\n"
"                        N%% of the total with \"N%%\" (default 0.1)\n"
"      --max-frames N    draw at most N frames, the widest (default 50000)\n"
"      --countname NAME  what a count is, in tooltips (default samples)\n"
"      --diff            differential: widths from AFTER, colours from\n"
"                        the change of each frame's share since BEFORE\n"
"                        (red grew, blue shrank); one file with two\n"
"                        counts a line (difffolded.pl) works too\n"
"  -h, --help            this text\n"
"\n"
"Frames annotated as FlameGraph does get their own colours: _[k] kernel\n"
"(orange), _[j] JIT (green), _[i] inlined (aqua).\n"
"\n"
"%s"
"\n"
"See docs/views.md.\n", VIEWS_USAGE);
}

/* Parse --minwidth: "0.5" pixels or "0.5%" of the total. */
static int parse_minwidth(const char *s, struct flame_opts *o)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !(v >= 0) || v > 1e9)
		return -EINVAL;
	o->minwidth_pct = false;
	if (*end == '%') {
		o->minwidth_pct = true;
		end++;
		if (v > 100)
			return -EINVAL;
	}
	if (*end != '\0')
		return -EINVAL;
	o->minwidth = v;
	return 0;
}

static int parse_size(const char *s, unsigned long long min,
		      unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Read one input (a path, or "-" for stdin) into @t (and @t2). */
static int read_input(const char *path, struct stacktree *t,
		      struct stacktree *t2)
{
	bool is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "<stdin>" : path;
	char msg[512];
	FILE *f;
	int err;

	f = is_stdin ? stdin : fopen(path, "r");
	if (!f) {
		err = -errno;
		tool_err_code(path, err);
		return err;
	}
	err = stacktree_read_folded(t, t2, f, name, msg, sizeof(msg));
	if (err)
		tool_err("%s", msg);
	if (!is_stdin)
		fclose(f);
	return err;
}

/* Read the inputs @paths (@n of them) into @t through the views. */
static int load_inputs(char *const *paths, size_t n,
		       const struct views_opts *vo, struct stacktree *t,
		       char *unit, size_t unitlen)
{
	struct views *v = NULL;
	int err = views_read(paths, n, vo, &v);

	if (!err) {
		err = views_tree(v, false, t);
		if (err)
			tool_err("cannot add the stacks: %s", strerror(-err));
	}
	if (!err)
		snprintf(unit, unitlen, "%s", views_unit(v));
	views_free(v);
	return err;
}

int cmd_flamegraph(int argc, char **argv)
{
	enum { OPT_TITLE = 256, OPT_SUBTITLE, OPT_ICICLE, OPT_WIDTH,
	       OPT_MINWIDTH, OPT_MAXFRAMES, OPT_COUNTNAME, OPT_DIFF };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
		{ "icicle", no_argument, NULL, OPT_ICICLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
		{ "max-frames", required_argument, NULL, OPT_MAXFRAMES },
		{ "countname", required_argument, NULL, OPT_COUNTNAME },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ "help", no_argument, NULL, 'h' },
		VIEWS_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct stacktree *t = NULL, *base = NULL;
	const char *output = NULL;
	char **inputs;
	struct views_opts vo = { 0 };
	struct views_out out = { 0 };
	struct flame_opts o;
	struct flame_stats st;
	unsigned long long v;
	char unit[64] = "samples";
	bool diff = false;
	int status = TOOL_EXIT_FAIL;
	size_t ninputs;
	int c, err;

	flame_opts_init(&o);
	o.unit = NULL;
	while ((c = getopt_long(argc, argv, "ho:qv", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TITLE:
			o.title = optarg;
			break;
		case OPT_SUBTITLE:
			o.subtitle = optarg;
			break;
		case OPT_ICICLE:
			o.icicle = true;
			break;
		case OPT_WIDTH:
			if (parse_size(optarg, 100, 100000, &v)) {
				tool_err("--width: '%s' is not a width in "
					 "pixels from 100 to 100000", optarg);
				return TOOL_EXIT_USAGE;
			}
			o.width = (unsigned)v;
			break;
		case OPT_MINWIDTH:
			if (parse_minwidth(optarg, &o)) {
				tool_err("--minwidth: '%s' is not a width in "
					 "pixels or a percentage", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case OPT_MAXFRAMES:
			if (parse_size(optarg, 1, 100000000, &v)) {
				tool_err("--max-frames: '%s' is not a number "
					 "from 1 to 100000000", optarg);
				return TOOL_EXIT_USAGE;
			}
			o.max_frames = (size_t)v;
			break;
		case OPT_COUNTNAME:
			o.unit = optarg;
			break;
		case OPT_DIFF:
			diff = true;
			break;
		default:
			err = views_option(c, optarg, &vo, &output, usage);
			if (err >= 0)
				return err;
		}
	}
	inputs = argv + optind;
	ninputs = (size_t)(argc - optind);
	if (diff && ninputs > 2) {
		tool_err("--diff takes BEFORE AFTER, or one file with two "
			 "counts a line (see --help)");
		return TOOL_EXIT_USAGE;
	}

	if (stacktree_new(&t) || (diff && stacktree_new(&base))) {
		tool_err("out of memory");
		goto out;
	}
	if (diff && ninputs <= 1) {
		if (read_input(ninputs ? inputs[0] : "-", base, t))
			goto out;
	} else if (diff) {
		if (load_inputs(inputs, 1, &vo, base, unit, sizeof(unit)) ||
		    load_inputs(inputs + 1, 1, &vo, t, unit, sizeof(unit)))
			goto out;
	} else if (load_inputs(inputs, ninputs, &vo, t, unit, sizeof(unit))) {
		goto out;
	}
	if (stacktree_total(t, STACKTREE_ROOT) == 0) {
		tool_err("no samples in the input%s", diff ? " (after)" : "");
		goto out;
	}
	o.base = base;
	if (!o.unit)
		o.unit = unit;

	if (views_out_open(&out, output))
		goto out;
	err = flame_write(out.f, t, &o, &st);
	if (err)
		tool_err_code(output ? output : "<stdout>", err);
	if (views_out_close(&out, !err) != 0 || err)
		goto out;
	if (st.capped)
		fprintf(stderr, "%s: note: drew the widest %zu frames, %zu left "
				"out (minimum width raised to %.2f px; see "
				"--max-frames)\n", tool_prog(), st.drawn,
			st.omitted, st.minwidth_px);
	status = TOOL_EXIT_OK;
out:
	stacktree_free(t);
	stacktree_free(base);
	return status;
}
