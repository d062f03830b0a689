/*
 * tools.h - what the `sym` subcommands share: the subcommand table, error
 * printing and the parsing of addresses.
 *
 * Each subcommand lives in its own file, tools/<name>.c, and exports one
 * function, cmd_<name>(), listed in the table of tools/sym.c.  A
 * subcommand gets argv with argv[0] set to its own name ("addr2line"), so
 * it can run getopt_long() on it directly, and returns the process exit
 * status: 0 when everything worked, 1 when some input failed, 2 for a
 * usage error.
 *
 * Nothing here touches libsym internals: the tools use libsym/sym.h only.
 */
#ifndef SYM_TOOLS_H
#define SYM_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sym.h"
#include "banned.h"

/** Exit statuses of a subcommand. */
enum tool_exit {
	TOOL_EXIT_OK = 0,
	/** Some input (a file, an address) failed; the rest was done. */
	TOOL_EXIT_FAIL = 1,
	/** Bad command line; nothing was done. */
	TOOL_EXIT_USAGE = 2,
};

/** A subcommand: `sym <name> [args]` runs fn(argc, argv). */
typedef int (*tool_cmd_fn)(int argc, char **argv);

struct tool_cmd {
	const char *name;
	tool_cmd_fn fn;
	/** One line for `sym help`. */
	const char *summary;
};

int cmd_addr2line(int argc, char **argv);
int cmd_buildid(int argc, char **argv);

/**
 * tool_set_prog() - name used as the prefix of error messages.
 * @param prog  e.g. "sym addr2line"; borrowed, must outlive the process
 */
void tool_set_prog(const char *prog);

/** The prefix set by tool_set_prog(), "sym" by default. */
const char *tool_prog(void);

/**
 * tool_err() - print "<prog>: <message>\n" to stderr.
 * The message follows STYLE.md: lowercase, no full stop, subject quoted.
 */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * tool_err_code() - print "<prog>: '<subject>': <sym_strerror(err)>".
 * @param subject  usually a file name
 * @param err      0, -errno or -SYM_E_*
 */
void tool_err_code(const char *subject, int err);

/**
 * tool_parse_hex() - parse a whole string as a hexadecimal address, with
 * or without a leading 0x/0X (like addr2line and eu-addr2line).
 * @param s          the text; surrounding blanks are not allowed
 * @param[out] out   the value
 * @return 0, -EINVAL (not hex, empty, trailing junk), -ERANGE (> 64 bits)
 */
int tool_parse_hex(const char *s, uint64_t *out);

/**
 * tool_parse_offset() - parse a signed offset as strtoll(s, 0) does
 * ("+0x10", "-8", "+010" is octal), the whole string.
 * @return 0, -EINVAL, -ERANGE
 */
int tool_parse_offset(const char *s, int64_t *out);

/**
 * tool_trim() - cut blanks and a trailing "\r\n" off @s in place.
 * @return a pointer into @s at its first non-blank character
 */
char *tool_trim(char *s);

/** Longest input line tool_read_lines() accepts; longer ones are cut. */
#define TOOL_LINE_MAX 65536

/** Called by tool_read_lines() with one line, without its newline. */
typedef int (*tool_line_fn)(void *ctx, char *line);

/**
 * tool_read_lines() - call @fn for each line read from @fd, for tools that
 * work as co-processes (llvm-symbolizer style): stdout is flushed before
 * every read(2) that could block, so each answer is out as soon as its
 * question has been read, but a batch on a pipe is answered in big writes.
 * @return 0 at EOF, -errno on a read error, or the first non-zero value
 *         of @fn.  A line longer than TOOL_LINE_MAX is cut to that length.
 */
int tool_read_lines(int fd, tool_line_fn fn, void *ctx);

#endif /* SYM_TOOLS_H */
