/*
 * fold.c - `sym fold`: profiles as folded stacks, "root;...;leaf count",
 * one line per distinct stack, sorted by stack: the input of FlameGraph's
 * flamegraph.pl and of every tool that reads its format.
 *
 *	sym fold --from perf-script [--pid|--tid] [--kernel] [--jit] [--all]
 *		 [--addrs] [--event-filter=EVENT] [-o OUT] [FILE|-]
 *
 * Each input format is one reader that puts samples into a fold_map
 * (foldmap.h); the map adds them up and writes them sorted.  The readers
 * are the table `inputs` below, chosen with --from; without --from the
 * input is the raw stack format of `sym record` and libsymprof
 * (docs/raw-format.md), whose reader is not written yet, so that path
 * says so and fails.  The options are the folding's, shared by every
 * reader: the root frame's process name with PID or PID/TID, and the
 * annotations of kernel and JIT frames and of unresolved addresses.
 *
 * The output is written only once the whole input has been read without
 * error, so a failed run leaves no partial file behind (-o) or prints
 * nothing (stdout).  Exit status: 0, 1 (the input could not be read or
 * folded: a message with the line number), 2 (usage).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"
#include "foldmap.h"
#include "perfscript.h"

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

/* A reader: put the samples of @fd into @m; print its own errors. */
typedef int (*fold_input_fn)(const struct fold_args *a, int fd,
			     struct fold_map *m);

/* Unrecognized lines quoted in warnings; the rest are only counted. */
#define WARN_LINES 5
/* Bytes of a line quoted in a warning. */
#define WARN_QUOTE 100
/* Bytes read at a time. */
#define READ_SIZE (256u << 10)

static void usage(FILE *f)
{
	fprintf(f,
"usage: sym fold --from perf-script [options] [FILE|-]\n"
"\n"
"Write the samples of a profile as folded stacks, \"root;...;leaf count\",\n"
"one line per distinct stack, sorted by stack: the input of FlameGraph's\n"
"flamegraph.pl.  The root frame is the process name.  FILE defaults to\n"
"standard input.\n"
"\n"
"  --from=perf-script    the input is `perf script` text; folded as\n"
"                        FlameGraph's stackcollapse-perf.pl does: counts\n"
"                        are the samples' periods when perf printed them\n"
"                        (its default), else 1 per sample; only the first\n"
"                        event's samples are kept\n"
"                        (without --from: the raw stack format of sym\n"
"                        record, not implemented yet)\n"
"  --pid                 process name as comm-PID (\"comm-?\" when the text\n"
"                        has no PID: perf script -F comm,pid,tid,...)\n"
"  --tid                 process name as comm-PID/TID\n"
"  --kernel              append _[k] to kernel frames\n"
"  --jit                 append _[j] to JIT frames (/tmp/perf-PID.map)\n"
"  --all                 --kernel and --jit\n"
"  --addrs               unknown frames keep their address: [dso <addr>]\n"
"  --event-filter=EVENT  keep the samples of EVENT (as perf script names it,\n"
"                        e.g. cycles, cpu-clock:ppp) instead of the first\n"
"  -o, --output=FILE     write to FILE instead of standard output\n"
"  -h, --help            this help\n"
"\n"
"Exit status: 0, 1 when the input could not be read or folded (with the\n"
"line number), 2 on a usage error.  See docs/views.md and sym(1).\n");
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

/* --- without --from: the raw stack format ------------------------------- */

static int fold_raw(const struct fold_args *a, int fd, struct fold_map *m)
{
	tool_err("not yet: only --from perf-script is implemented; folding "
		 "the raw stack format (sym record, libsymprof) comes later");
	return -ENOSYS;
}

static const struct {
	const char *name;
	fold_input_fn fn;
} inputs[] = {
	{ "perf-script", fold_perf_script },
};

int cmd_fold(int argc, char **argv)
{
	enum { OPT_FROM = 256, OPT_PID, OPT_TID, OPT_KERNEL, OPT_JIT, OPT_ALL,
	       OPT_ADDRS, OPT_EVENT };
	static const struct option longopts[] = {
		{ "from", required_argument, NULL, OPT_FROM },
		{ "pid", no_argument, NULL, OPT_PID },
		{ "tid", no_argument, NULL, OPT_TID },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "jit", no_argument, NULL, OPT_JIT },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "addrs", no_argument, NULL, OPT_ADDRS },
		{ "event-filter", required_argument, NULL, OPT_EVENT },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fold_args a = { .input = "-" };
	fold_input_fn fn = fold_raw;
	const char *output = NULL;
	struct fold_map *m = NULL;
	FILE *out = stdout;
	int fd = -1, c, err, status = TOOL_EXIT_FAIL;
	size_t i;

	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FROM:
			for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
				if (strcmp(optarg, inputs[i].name) == 0)
					break;
			if (i == sizeof(inputs) / sizeof(inputs[0])) {
				tool_err("unknown input format '%s' (known: "
					 "perf-script)", optarg);
				return TOOL_EXIT_USAGE;
			}
			fn = inputs[i].fn;
			break;
		case OPT_PID:
			a.flags |= FOLD_PID;
			break;
		case OPT_TID:
			a.flags |= FOLD_TID;
			break;
		case OPT_KERNEL:
			a.flags |= FOLD_KERNEL;
			break;
		case OPT_JIT:
			a.flags |= FOLD_JIT;
			break;
		case OPT_ALL:
			a.flags |= FOLD_KERNEL | FOLD_JIT;
			break;
		case OPT_ADDRS:
			a.flags |= FOLD_ADDRS;
			break;
		case OPT_EVENT:
			if (!optarg[0]) {
				tool_err("--event-filter needs an event name");
				return TOOL_EXIT_USAGE;
			}
			a.event = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		tool_err("one input file at most");
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (optind < argc)
		a.input = argv[optind];

	if (strcmp(a.input, "-") == 0) {
		fd = STDIN_FILENO;
	} else {
		fd = open(a.input, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			tool_err_code(a.input, -errno);
			return TOOL_EXIT_FAIL;
		}
	}
	err = fold_map_new(&m);
	if (err) {
		tool_err_code(a.input, err);
		goto out;
	}
	if (fn(&a, fd, m) != 0)
		goto out;

	if (output) {
		out = fopen(output, "w");
		if (!out) {
			tool_err_code(output, -errno);
			goto out;
		}
	}
	err = fold_map_write(m, out);
	if (fflush(out) != 0 && !err)
		err = -EIO;
	if (out != stdout && fclose(out) != 0 && !err)
		err = -EIO;
	if (err) {
		tool_err("cannot write '%s': %s", output ? output : "stdout",
			 err == -EIO ? strerror(errno) : strerror(-err));
		goto out;
	}
	status = TOOL_EXIT_OK;
out:
	if (fd > STDIN_FILENO)
		close(fd);
	fold_map_free(m);
	return status;
}
