/*
 * fold.c - `sym fold`: profiles as folded stacks, "root;...;leaf count",
 * one line per distinct stack, sorted by stack: the input of FlameGraph's
 * flamegraph.pl and of every tool that reads its format.
 *
 *	sym fold [options] [IN...]		raw, symbolized, pprof, folded
 *	sym fold --from perf-script [--pid|--tid] [--kernel] [--jit] [--all]
 *		 [--addrs] [--event-filter=EVENT] [-o OUT] [FILE|-]
 *
 * Both paths put every sample into a fold_map (foldmap.h), which adds
 * them up and writes them sorted.  Profiles (the default) come through the
 * views' input layer (views.h): symbolized on the fly when they are not
 * yet, every frame named (inline chains, annotations, a process or thread
 * root frame) as every view names it.  `perf script` text comes through
 * perfscript.h, folded exactly as FlameGraph's stackcollapse-perf.pl does.
 *
 * The output is written only once every input has been read without
 * error, to a temporary file renamed over OUT (views_out_open()), so a
 * failed run leaves no partial file behind (-o) or prints nothing
 * (stdout).  Exit status: 0, 1 (an input could not be read or folded:
 * a message names it, with the line number when there is one), 2 (usage).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"
#include "grow.h"
#include "view/foldmap.h"
#include "view/perfscript.h"
#include "view/views.h"
#include "base.h"

/* The folding options, whatever the input. */
enum fold_flags {
	FOLD_PID = (1 << 0),	/* root frame "comm-PID" */
	FOLD_TID = (1 << 1),	/* root frame "comm-PID/TID" */
	FOLD_KERNEL = (1 << 2),	/* "_[k]" after kernel frames */
	FOLD_JIT = (1 << 3),	/* "_[j]" after JIT frames */
	FOLD_ADDRS = (1 << 4),	/* unknown frames keep their address */
};

struct fold_args {
	uint32_t flags;		/* enum fold_flags */
	const char *event;	/* --event-filter, or NULL */
	const char *input;	/* a file name, "-" for stdin */
};

/* Unrecognized lines quoted in warnings; the rest are only counted. */
#define WARN_LINES 5
/* Bytes of a line quoted in a warning. */
#define WARN_QUOTE 100
/* Bytes read at a time. */
#define READ_SIZE (256u << 10)

static void usage(FILE *f)
{
	fprintf(f,
"usage: sym fold [options] [IN...]\n"
"       sym fold --from perf-script [options] [FILE|-]\n"
"\n"
"Write the samples of a profile as folded stacks, \"root;...;leaf count\",\n"
"one line per distinct stack, sorted by stack: the input of FlameGraph's\n"
"flamegraph.pl.  The count is the stack's samples (or weight with\n"
"--value weight).  Several inputs are added together; without one, stdin\n"
"is read.  An unsymbolized profile is symbolized first, as `sym symbolize`\n"
"does; frames that do not resolve are module+0xADDR.\n"
"\n"
"%s"
"  -o, --output=FILE     write FILE (atomically) instead of stdout\n"
"  -h, --help            this help\n"
"\n"
"perf script text (--from perf-script), folded as FlameGraph's\n"
"stackcollapse-perf.pl does: the root frame is the process name; counts\n"
"are the samples' periods when perf printed them (its default), else 1\n"
"per sample; only the first event's samples are kept.  Its options:\n"
"  --pid                 process name as comm-PID (\"comm-?\" when the text\n"
"                        has no PID: perf script -F comm,pid,tid,...)\n"
"  --tid                 process name as comm-PID/TID\n"
"  --kernel, --jit, --all  _[k] after kernel frames, _[j] after JIT frames\n"
"                        (/tmp/perf-PID.map), both\n"
"  --addrs               unknown frames keep their address: [dso <addr>]\n"
"  --event-filter=EVENT  keep the samples of EVENT (as perf script names it,\n"
"                        e.g. cycles, cpu-clock:ppp) instead of the first\n"
"\n"
"Exit status: 0, 1 when an input could not be read or folded (with the\n"
"line number), 2 on a usage error.  See docs/views.md and sym(1).\n",
		VIEWS_USAGE);
}

/* --- --from perf-script ------------------------------------------------ */

struct ps_ctx {
	struct fold_map *map;
	const char *input;
	int map_err;
	unsigned warned;	/* unrecognized lines quoted so far */
};

static int ps_on_sample(void *ctx, const char *const *frames, size_t n,
			uint64_t count)
{
	struct ps_ctx *c = ctx;

	c->map_err = fold_map_add(c->map, frames, n, count);
	return c->map_err ? 1 : 0;
}

static void ps_on_warn(void *ctx, uint64_t lineno, const char *line,
		       size_t len)
{
	struct ps_ctx *c = ctx;
	char q[WARN_QUOTE + 1];
	size_t i, n = len < WARN_QUOTE ? len : WARN_QUOTE;

	if (c->warned++ >= WARN_LINES)
		return;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)line[i];

		q[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	q[n] = '\0';
	tool_err("'%s' line %llu: neither a sample header nor a frame, "
		 "skipped: '%s%s'", c->input, (unsigned long long)lineno, q,
		 len > n ? "..." : "");
}

static int fold_perf_script(const struct fold_args *a, int fd,
			    struct fold_map *m)
{
	struct perfscript_opts o = { .event = a->event, .warn = ps_on_warn };
	struct ps_ctx c = { .map = m, .input = a->input };
	struct perfscript_stats st;
	struct perfscript *ps = NULL;
	char *buf = NULL;
	ssize_t r;
	int err;

	if (a->flags & FOLD_PID)
		o.flags |= PERFSCRIPT_PID;
	if (a->flags & FOLD_TID)
		o.flags |= PERFSCRIPT_TID;
	if (a->flags & FOLD_KERNEL)
		o.flags |= PERFSCRIPT_KERNEL;
	if (a->flags & FOLD_JIT)
		o.flags |= PERFSCRIPT_JIT;
	if (a->flags & FOLD_ADDRS)
		o.flags |= PERFSCRIPT_ADDRS;

	buf = malloc(READ_SIZE);
	err = buf ? perfscript_new(&o, ps_on_sample, &c, &ps) : -ENOMEM;
	if (err) {
		tool_err_code(a->input, err);
		goto out;
	}
	for (;;) {
		r = read(fd, buf, READ_SIZE);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			tool_err_code(a->input, err);
			goto out;
		}
		if (r == 0)
			break;
		err = perfscript_feed(ps, buf, (size_t)r);
		if (err)
			break;
	}
	if (!err)
		err = perfscript_finish(ps);
	if (err) {
		if (c.map_err)
			tool_err("'%s': %s", a->input,
				 c.map_err == -ERANGE ?
				 "a count does not fit 64 bits" : strerror(-c.map_err));
		else
			tool_err("'%s' %s", a->input, perfscript_errmsg(ps));
		goto out;
	}

	perfscript_stats(ps, &st);
	if (st.unrecognized > WARN_LINES)
		tool_err("'%s': %llu lines skipped in all as neither header nor "
			 "frame", a->input, (unsigned long long)st.unrecognized);
	if (st.filtered && !a->event)
		tool_err("'%s': kept event '%s' only (the first one); left out "
			 "%llu sample%s of other events, such as '%s': choose "
			 "one with --event-filter", a->input, st.event,
			 (unsigned long long)st.filtered,
			 st.filtered == 1 ? "" : "s", st.other_event);
	if (st.unterminated)
		tool_err("'%s': the input ends inside a sample (no blank line "
			 "after its frames): that sample is left out",
			 a->input);
	if (st.samples == 0 && st.unrecognized) {
		tool_err("'%s': no samples: is this `perf script` output?",
			 a->input);
		err = -EINVAL;
	}
out:
	perfscript_free(ps);
	free(buf);
	return err;
}

/* --- profiles and folded stacks, through the views' input layer ------ */

/* Put every named stack of @v into @m. */
static int fold_views(const struct views *v, struct fold_map *m)
{
	const char **names = NULL;
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; !err && i < views_nstacks(v); i++) {
		const struct views_stack *s = views_stack(v, i);

		err = tool_grow(&names, &cap, s->nframes, sizeof(*names), 64);
		if (err)
			break;
		for (uint32_t j = 0; j < s->nframes; j++)
			names[j] = views_name(v, s->frames[j], NULL);
		err = fold_map_add(m, names, s->nframes, s->value);
	}
	free(names);
	if (err == -ERANGE)
		tool_err("the sum of the counts passes 2^64 - 1");
	else if (err)
		tool_err("cannot fold: %s", strerror(-err));
	return err;
}

/* Read the inputs into @m: profiles (and folded stacks) with @vo. */
static int fold_inputs(const struct views_opts *vo, char **inputs,
		       size_t n, struct fold_map *m)
{
	struct views *v = NULL;
	int err = views_read(inputs, n, vo, &v);

	if (!err)
		err = fold_views(v, m);
	views_free(v);
	return err;
}

/* Options that only one of the two paths takes, for the usage check. */
enum fold_only {
	ONLY_PERF_SCRIPT = (1 << 0),	/* --addrs, --event-filter */
	ONLY_PROFILE = (1 << 1),	/* --comm, --inline, --value, --server... */
};

int cmd_fold(int argc, char **argv)
{
	enum { OPT_ADDRS = 256, OPT_EVENT };
	static const struct option longopts[] = {
		VIEWS_OPTIONS,
		{ "addrs", no_argument, NULL, OPT_ADDRS },
		{ "event-filter", required_argument, NULL, OPT_EVENT },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fold_args a = { .input = "-" };
	struct views_opts vo = { 0 };
	struct views_out out = { 0 };
	const char *output = NULL;
	struct fold_map *m = NULL;
	bool perf_script = false;
	uint32_t only = 0;
	int fd = -1, c, err, status = TOOL_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "o:hqv", longopts, NULL)) != -1) {
		switch (c) {
		case VIEWS_OPT_FROM:
			if (strcmp(optarg, "perf-script") == 0) {
				perf_script = true;
				continue;
			}
			break;
		case VIEWS_OPT_COMM:
		case VIEWS_OPT_INLINE:
		case VIEWS_OPT_VALUE:
		case VIEWS_OPT_QUIET:
		case 'q':
		case VIEWS_OPT_VERBOSE:
		case 'v':
		case VIEWS_OPT_FOCUS:
		case VIEWS_OPT_IGNORE:
		case VIEWS_OPT_HIDE:
		case VIEWS_OPT_GRANULARITY:
		case TOOL_OPT_SERVER:
		case TOOL_OPT_STORE:
		case TOOL_OPT_WAIT_MS:
		case TOOL_OPT_KALLSYMS:
			only |= ONLY_PROFILE;
			break;
		case OPT_ADDRS:
			a.flags |= FOLD_ADDRS;
			only |= ONLY_PERF_SCRIPT;
			continue;
		case OPT_EVENT:
			if (!optarg[0]) {
				tool_err("--event-filter needs an event name");
				return TOOL_EXIT_USAGE;
			}
			a.event = optarg;
			only |= ONLY_PERF_SCRIPT;
			continue;
		default:
			break;
		}
		err = views_option(c, optarg, &vo, &output, usage);
		if (err >= 0)
			return err;
	}
	if (perf_script && (only & ONLY_PROFILE)) {
		tool_err("--comm, --inline, --value, --quiet, --verbose, "
			 "--focus, --ignore, --hide, --granularity, --server, "
			 "--store and --wait-ms are for profiles, not --from "
			 "perf-script");
		return TOOL_EXIT_USAGE;
	}
	if (!perf_script && (only & ONLY_PERF_SCRIPT)) {
		tool_err("--addrs and --event-filter are for --from "
			 "perf-script");
		return TOOL_EXIT_USAGE;
	}
	if (perf_script && argc - optind > 1) {
		tool_err("one input file at most");
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (vo.flags & VIEWS_PID)
		a.flags |= FOLD_PID;
	if (vo.flags & VIEWS_TID)
		a.flags |= FOLD_TID;
	if (vo.flags & VIEWS_KERNEL)
		a.flags |= FOLD_KERNEL;
	if (vo.flags & VIEWS_JIT)
		a.flags |= FOLD_JIT;
	if (optind < argc)
		a.input = argv[optind];

	err = fold_map_new(&m);
	if (err) {
		tool_err_code(a.input, err);
		goto out;
	}
	if (perf_script) {
		if (strcmp(a.input, "-") == 0) {
			fd = STDIN_FILENO;
		} else {
			fd = open(a.input, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				tool_err_code(a.input, -errno);
				goto out;
			}
		}
		if (fold_perf_script(&a, fd, m) != 0)
			goto out;
	} else if (fold_inputs(&vo, argv + optind, (size_t)(argc - optind),
			       m) != 0) {
		goto out;
	}

	if (views_out_open(&out, output) != 0)
		goto out;
	err = fold_map_write(m, out.f);
	if (err)
		tool_err("cannot write '%s': %s", output ? output : "stdout",
			 err == -EIO ? strerror(errno) : strerror(-err));
	if (views_out_close(&out, !err) == 0 && !err)
		status = TOOL_EXIT_OK;
out:
	if (fd > STDIN_FILENO)
		close(fd);
	fold_map_free(m);
	return status;
}
