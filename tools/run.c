/*
 * run.c - `sym run [-F HZ] [--mode cpu|wall|process|alloc] [--rate BYTES]
 * [-o FILE] -- CMD [ARGS...]`:
 * run a command under libsymprof, the in-process sampler (docs/symprof.md),
 * which writes a raw stack profile (docs/raw-format.md) when the command
 * ends.
 *
 * sym run does not stay around: it puts libsymprof.so in LD_PRELOAD, sets
 * the SYMPROF_* variables from its options and execs the command, so the
 * command keeps sym run's pid, its signals and its exit status, and only
 * it (and what it starts) sees the preload.  SYMPROF_PID names the
 * command's pid: without %p in -o, only that process writes the file;
 * processes it forks or execs stay unprofiled (with %p each writes its
 * own file).
 *
 * libsymprof.so is found, in order: $SYM_LIBSYMPROF; ../lib/libsymprof.so
 * next to the sym binary (the build tree, or an install with the default
 * layout); $(libdir)/libsymprof.so of the build (SYM_LIBDIR).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"
#include "base.h"

#ifndef SYM_LIBDIR
#define SYM_LIBDIR "/usr/local/lib"
#endif

#define RUN_DEFAULT_OUT "symprof.raw"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym run [-F HZ] [--mode cpu|wall|process|alloc] "
		"[--rate BYTES]\n"
		"               [-o FILE] [--interval SEC] [--signal SIG] "
		"[--] CMD [ARGS...]\n\n"
		"Run CMD with libsymprof, the in-process sampler (LD_PRELOAD), "
		"and write\nits raw stack profile (docs/raw-format.md) to "
		"FILE when it exits.\nsym run execs CMD: same pid, same exit "
		"status.\n\n"
		"  -F, --freq HZ       samples per second of CPU time per "
		"thread (99;\n"
		"                      1 to 10000; CPU timers expire on the "
		"kernel tick)\n"
		"  --mode cpu          per-thread CPU-time timers (default)\n"
		"  --mode wall         per-thread wall-clock timers: blocked "
		"threads too\n"
		"  --mode process      one setitimer(ITIMER_PROF) for the "
		"process (biased;\n"
		"                      the fallback when per-thread timers "
		"fail)\n"
		"  --mode alloc        allocations (the malloc family), "
		"sampled by bytes:\n"
		"                      alloc_objects, alloc_space, "
		"inuse_objects,\n"
		"                      inuse_space (--value TYPE in the "
		"views)\n"
		"  --rate BYTES        alloc mode: mean bytes between samples "
		"(524288)\n"
		"  -o, --output FILE   the profile (default " RUN_DEFAULT_OUT
		"); %%p is the pid:\n"
		"                      without it only CMD's own process "
		"writes, with it\n"
		"                      every process it forks or execs writes "
		"its own\n"
		"  --interval SEC      also rewrite FILE every SEC seconds "
		"(10; 0: at exit\n"
		"                      only)\n"
		"  --signal SIG        sampling signal (SIGPROF; SIGRTMIN+N, "
		"...); alloc\n"
		"                      mode: the signal that asks for a "
		"write (SIGUSR2)\n\n"
		"Environment: SYM_LIBSYMPROF overrides where libsymprof.so is "
		"found.\nSee docs/symprof.md and sym(1).\n");
}

/* The directory of the running sym binary, with a trailing '/'. */
static int self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	slash[1] = 0;
	return 0;
}

static int find_lib(char *buf, size_t len)
{
	const char *env = getenv("SYM_LIBSYMPROF");
	char dir[PATH_MAX];

	if (env && *env) {
		if (access(env, R_OK)) {
			tool_err("SYM_LIBSYMPROF='%s': %s", env,
				 strerror(errno));
			return -1;
		}
		if (!realpath(env, buf)) {
			tool_err("SYM_LIBSYMPROF='%s': %s", env,
				 strerror(errno));
			return -1;
		}
		return 0;
	}
	if (self_dir(dir, sizeof(dir)) == 0) {
		char cand[PATH_MAX + 32];

		snprintf(cand, sizeof(cand), "%s../lib/libsymprof.so", dir);
		if (access(cand, R_OK) == 0 && realpath(cand, buf))
			return 0;
	}
	snprintf(buf, len, "%s/libsymprof.so", SYM_LIBDIR);
	if (access(buf, R_OK) == 0)
		return 0;
	tool_err("cannot find libsymprof.so next to sym (../lib/) or in "
		 "'%s'; set SYM_LIBSYMPROF", SYM_LIBDIR);
	return -1;
}

static bool valid_number(const char *s, long min, long max)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	return !errno && !*end && v >= min && v <= max;
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "freq", required_argument, NULL, 'F' },
		{ "mode", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "signal", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *hz = "99", *mode = "cpu", *out = RUN_DEFAULT_OUT;
	const char *interval = NULL, *sig = NULL, *rate = NULL, *old;
	char lib[PATH_MAX], path[PATH_MAX], cwd[PATH_MAX], pid[32];
	char *preload = NULL;
	size_t n;
	int c, err;

	/* "+": stop at the first non-option, the command. */
	while ((c = getopt_long(argc, argv, "+F:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			hz = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'i':
			interval = optarg;
			break;
		case 's':
			sig = optarg;
			break;
		case 'r':
			rate = optarg;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		tool_err("no command to run");
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (!valid_number(hz, 1, 10000)) {
		tool_err("-F '%s': not a number from 1 to 10000", hz);
		return TOOL_EXIT_USAGE;
	}
	if (strcmp(mode, "cpu") && strcmp(mode, "wall") &&
	    strcmp(mode, "process") && strcmp(mode, "alloc")) {
		tool_err("--mode '%s': not cpu, wall, process or alloc", mode);
		return TOOL_EXIT_USAGE;
	}
	if (rate && (strcmp(mode, "alloc") ||
		     !valid_number(rate, 1, 1L << 40))) {
		tool_err("--rate '%s': %s", rate, strcmp(mode, "alloc") ?
			 "only with --mode alloc" :
			 "not a number of bytes from 1 to 2^40");
		return TOOL_EXIT_USAGE;
	}
	if (interval && !valid_number(interval, 0, 86400)) {
		tool_err("--interval '%s': not a number of seconds", interval);
		return TOOL_EXIT_USAGE;
	}
	if (!*out) {
		tool_err("-o: empty file name");
		return TOOL_EXIT_USAGE;
	}
	for (n = 0; out[n]; n++) {
		if (out[n] == '%' && out[n + 1] != 'p' && out[n + 1] != '%') {
			tool_err("-o '%s': only %%p (the pid) and %%%% may "
				 "follow '%%'", out);
			return TOOL_EXIT_USAGE;
		}
		if (out[n] == '%')
			n++;
	}
	if (find_lib(lib, sizeof(lib)))
		return TOOL_EXIT_FAIL;
	/* The file is named for the command's working directory, which is
	 * ours now: make it absolute in case the command moves. */
	if (out[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd))) {
			tool_err("cannot get the working directory: %s",
				 strerror(errno));
			return TOOL_EXIT_FAIL;
		}
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", cwd, out) >=
		    sizeof(path)) {
			tool_err("-o '%s': path too long", out);
			return TOOL_EXIT_USAGE;
		}
		out = path;
	}
	old = getenv("LD_PRELOAD");
	n = strlen(lib) + (old ? strlen(old) : 0) + 2;
	preload = malloc(n);
	if (!preload) {
		tool_err("out of memory");
		return TOOL_EXIT_FAIL;
	}
	/* After what the user preloads already (a sanitizer runtime must
	 * stay first). */
	if (old && *old)
		snprintf(preload, n, "%s:%s", old, lib);
	else
		snprintf(preload, n, "%s", lib);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (setenv("LD_PRELOAD", preload, 1) || setenv("SYMPROF_HZ", hz, 1) ||
	    setenv("SYMPROF_MODE", mode, 1) || setenv("SYMPROF_OUT", out, 1) ||
	    setenv("SYMPROF_PID", pid, 1) ||
	    (interval && setenv("SYMPROF_INTERVAL", interval, 1)) ||
	    (rate && setenv("SYMPROF_RATE", rate, 1)) ||
	    (sig && setenv("SYMPROF_SIGNAL", sig, 1))) {
		tool_err("cannot set the environment: %s", strerror(errno));
		free(preload);
		return TOOL_EXIT_FAIL;
	}
	free(preload);
	fflush(stdout);
	execvp(argv[optind], argv + optind);
	err = errno;
	tool_err("cannot run '%s': %s", argv[optind], strerror(err));
	/* As a shell: 127 when not found, 126 when found but not run. */
	return err == ENOENT ? 127 : 126;
}
