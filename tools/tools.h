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

/** What tool_elf_ident() reads from an ELF header. */
struct tool_elf_ident {
	/** ELFCLASS32 (1) or ELFCLASS64 (2). */
	int elf_class;
	/** e_type: ET_EXEC (2), ET_DYN (3), ... */
	int elf_type;
};

/**
 * tool_elf_ident() - read the class and type of an ELF file, the 18 bytes
 * of its header that the output formats depend on (addresses print with 8
 * hex digits for ELFCLASS32, 16 for ELFCLASS64).  libsym does not expose
 * them (see .notes/cli-needs.md).
 * @return 0, -errno, -SYM_E_NOTELF
 */
int tool_elf_ident(const char *path, struct tool_elf_ident *id);

#endif /* SYM_TOOLS_H */
