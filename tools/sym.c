/*
 * sym.c - the `sym` command: a git-style dispatcher over subcommands.
 *
 *	sym <command> [args]     run a command
 *	sym help [command]       list the commands, or one command's help
 *	sym --version            print the version
 *	sym <command> --help     each command's own help
 *
 * Started under the name llvm-symbolizer or addr2line (bin/compat/ holds
 * such links), it is a drop-in for that program instead (compat.c).
 *
 * Adding a command is one file, tools/<name>.c exporting cmd_<name>(), and
 * one line in the table below.  The command gets argv with argv[0] set to
 * "sym <name>" (getopt's prefix) and returns the exit status (enum tool_exit).
 */
#include <stdlib.h>
#include <string.h>

#include "tools.h"
#include "base.h"

static const struct tool_cmd commands[] = {
	{ "addr2line", cmd_addr2line,
	  "translate addresses into functions, files and lines" },
	{ "buildid", cmd_buildid, "print the GNU build ID of ELF files" },
	{ "convert", cmd_convert, "convert a profile between raw and pprof" },
	{ "diff", cmd_diff,
	  "functions whose share changed between two profiles, beyond noise" },
	{ "flamegraph", cmd_flamegraph,
	  "write an interactive SVG flame graph of a profile" },
	{ "fold", cmd_fold,
	  "write a profile (or perf script text) as folded stacks" },
	{ "kallsyms", cmd_kallsyms,
	  "write a kallsyms snapshot of the kernel (symbols, modules)" },
	{ "lookup", cmd_lookup,
	  "translate addresses of a build ID with the stored table or symd" },
	{ "merge", cmd_merge,
	  "merge profiles of several hosts (none, per-host, per-second)" },
	{ "pprof", cmd_pprof,
	  "write a symbolized pprof profile (for Google's pprof)" },
	{ "record", cmd_record,
	  "sample processes with perf events into unsymbolized raw stacks" },
	{ "report", cmd_report,
	  "top functions by self and total samples, with error bars" },
	{ "run", cmd_run,
	  "run a command under libsymprof, the in-process sampler" },
	{ "stack", cmd_stack,
	  "unwind and symbolize every thread of a core file or a process" },
	{ "store", cmd_store,
	  "fill, list and check the table store (add ls info rm gc verify)" },
	{ "symbolize", cmd_symbolize,
	  "symbolize a profile's frames (symd or the local store)" },
	{ "symbolize-log", cmd_symbolize_log,
	  "symbolize the frames of crash logs in place (ASan, backtraces)" },
	{ "tree", cmd_tree,
	  "print the call tree (top-down or --inverted), self and total" },
	{ "upload", cmd_upload,
	  "upload executables and debug files to a symd server" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: sym <command> [args]\n"
		   "       sym help [<command>]\n"
		   "       sym --version\n\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "   %-14s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(f, "\nSee 'sym <command> --help' and sym(1).\n");
}

static const struct tool_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* "sym addr2line" etc., for error messages; static storage suffices. */
static char prog_buf[64];

/* argv[0] becomes "sym addr2line" too: getopt_long() prefixes its own
 * messages (unrecognized option, missing argument) with it. */
static int run(const struct tool_cmd *cmd, int argc, char **argv)
{
	snprintf(prog_buf, sizeof(prog_buf), "sym %s", cmd->name);
	tool_set_prog(prog_buf);
	argv[0] = prog_buf;
	return cmd->fn(argc, argv);
}

int main(int argc, char **argv)
{
	const struct tool_cmd *cmd;
	const char *name;
	char *help_argv[3];
	int status;

	/* Started as llvm-symbolizer or addr2line (the links in
	 * bin/compat/): their drop-in. */
	name = argc > 0 ? strrchr(argv[0], '/') : NULL;
	name = name ? name + 1 : argc > 0 ? argv[0] : "";
	status = compat_main(name, argc, argv);
	if (status >= 0)
		return status;
	if (argc < 2) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0 ||
	    strcmp(argv[1], "version") == 0) {
		printf("sym (symd) %s\n", SYM_VERSION);
		return TOOL_EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		if (argc < 3) {
			usage(stdout);
			return TOOL_EXIT_OK;
		}
		cmd = find_cmd(argv[2]);
		if (!cmd) {
			tool_err("'%s' is not a sym command; see 'sym help'",
				 argv[2]);
			return TOOL_EXIT_USAGE;
		}
		help_argv[0] = argv[2];
		help_argv[1] = "--help";
		help_argv[2] = NULL;
		return run(cmd, 2, help_argv);
	}
	cmd = find_cmd(argv[1]);
	if (!cmd) {
		tool_err("'%s' is not a sym command; see 'sym help'", argv[1]);
		return TOOL_EXIT_USAGE;
	}
	return run(cmd, argc - 1, argv + 1);
}
