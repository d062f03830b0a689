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

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "sym.h"
#include "sym_prof.h"

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
int cmd_convert(int argc, char **argv);	/* convert.c */
int cmd_diff(int argc, char **argv);	/* diff.c */
int cmd_flamegraph(int argc, char **argv);	/* flamegraph.c */
int cmd_fold(int argc, char **argv);	/* fold.c */
int cmd_kallsyms(int argc, char **argv);	/* kallsyms.c */
int cmd_lookup(int argc, char **argv);
int cmd_merge(int argc, char **argv);	/* merge.c */
int cmd_pprof(int argc, char **argv);	/* pprof.c */
int cmd_record(int argc, char **argv);	/* record.c */
int cmd_report(int argc, char **argv);	/* report.c */
int cmd_run(int argc, char **argv);	/* run.c */
int cmd_stack(int argc, char **argv);	/* stack.c */
int cmd_store(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);	/* symbolize.c */
int cmd_symbolize_log(int argc, char **argv);	/* symbolize_log.c */
int cmd_tree(int argc, char **argv);	/* tree.c */
int cmd_upload(int argc, char **argv);	/* upload.c */

/**
 * compat_main() - run as the program @name imitates (compat.c):
 * "llvm-symbolizer" or "addr2line", the base name of argv[0].
 * @return the exit status, or -1 when @name is none of them
 */
int compat_main(const char *name, int argc, char **argv);

/**
 * tool_addr2line() - the body of `sym addr2line` and of `sym lookup`,
 * which share options, output styles and stdin handling.
 * @param lookup  true for `sym lookup BUILDID ADDR...`: answers come from
 *                the store alone, and no file is opened
 * @return the exit status
 */
int tool_addr2line(int argc, char **argv, bool lookup);

/**
 * tool_store_open() - open the store named by --store DIR, or the
 * default one (sym_store_default_dir()).  Nothing is printed.
 * @param dir    --store's argument; NULL for the default
 * @param flags  enum sym_store_flags
 * @param opts   NULL, or options whose @flags are replaced by @flags
 * @param[out] path  filled with the directory, for messages (when no
 *                   variable names the default one, with where it was
 *                   looked for)
 * @param len    size of @path
 * @param[out] out   caller owns, free with sym_store_close()
 * @return 0, or what sym_store_default_dir() (-SYM_E_NOTFOUND when none
 *         of $SYM_STORE, $XDG_CACHE_HOME, $HOME is set) or sym_store_open()
 *         returned
 */
int tool_store_open(const char *dir, uint32_t flags,
		    const struct sym_store_opts *opts, char *path, size_t len,
		    struct sym_store **out);

/** tool_negative_name() - enum sym_store_negative in words, for messages. */
const char *tool_negative_name(int kind);

/**
 * tool_module_table() - sym_module_table(), and when the converter fails
 * on the file (-SYM_E_BADDWARF, -SYM_E_TOOBIG, -SYM_E_DECOMPRESS) a
 * SYM_STORE_BADCONV entry with the reason for @build_id in @st, as symd
 * leaves one, so that `sym lookup` can quote it.
 * @param st, build_id  may be NULL: nothing is remembered
 * @param[out] out  borrowed from @mod
 * @return as sym_module_table()
 */
int tool_module_table(struct sym_module *mod, struct sym_store *st,
		      const char *build_id, const struct sym_table **out);

/**
 * tool_debuginfod_enabled() - is $DEBUGINFOD_URLS set to something?
 */
bool tool_debuginfod_enabled(void);

/**
 * tool_debuginfod_find() - the separate debug file of @build_id (hex)
 * from the servers of $DEBUGINFOD_URLS, through libdebuginfod (loaded on
 * first use) and its cache, as eu-addr2line finds it (debuginfod.c).
 * Blocks up to libdebuginfod's timeout ($DEBUGINFOD_TIMEOUT).
 * @param[out] path  caller owns, free(): the file in libdebuginfod's
 *                   cache; NULL on failure
 * @param[out] why   on failure, one line saying why (no newline)
 * @return 0, -ENOSYS (DEBUGINFOD_URLS is not set), -ENOENT (no server has
 *         it, or no libdebuginfod), or libdebuginfod's -errno
 */
int tool_debuginfod_find(const char *build_id, char **path, char *why,
			 size_t len);

/**
 * tool_table_has_lines() - whether @tab has lines: from DWARF, or from
 * Go's function table, which a Go binary without DWARF has whole (names,
 * lines, inline chains).  A table of symbols only has none.
 */
bool tool_table_has_lines(const struct sym_table *tab);

/**
 * tool_store_put_module() - sym_store_put() of @tab, the table of @mod
 * opened from @file, with the real path of its debug file (of @file when
 * it has none) as the source.
 * @return as sym_store_put()
 */
int tool_store_put_module(struct sym_store *st, const char *build_id,
			  struct sym_module *mod, const char *file,
			  const struct sym_table *tab);

/**
 * tool_valid_build_id() - lowercase @s in place and check that it is a
 * build ID: 2 to 128 hex digits, an even number of them.
 * @return true when it is
 */
bool tool_valid_build_id(char *s);

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
 * tool_err_capture() - keep tool_err()'s messages instead of printing
 * them: each one replaces the content of @buf (without "<prog>: "), so
 * that a caller can quote the last reason in its own report.
 * @param buf  caller's buffer, borrowed until the next call; NULL (or
 *             @len 0) prints to stderr again
 */
void tool_err_capture(char *buf, size_t len);

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

/** A byte's value as a hex digit; TOOL_HEX_NONE for one that is none
 *  (isxdigit() in the C locale). */
extern const uint8_t tool_hex_digit[256];
#define TOOL_HEX_NONE 0xff

/**
 * tool_scan_hex() - tool_parse_hex() of the text at @s up to the first
 * byte after its digits, whatever that byte is: tool_parse_hex() wants
 * the string's end there, the input loop of `sym lookup` a newline
 * (tools/addr2line.c, stdin_lines()).  Inline for that loop.
 * @param[out] out   the value; untouched on failure
 * @param[out] end   the byte after the digits (set on success only)
 * @return 0, -EINVAL (no digit), -ERANGE (more than 16 digits after the
 *         leading zeros: checked before the byte at *@end)
 */
static inline int tool_scan_hex(const char *s, uint64_t *out,
				const char **end)
{
	const unsigned char *p = (const unsigned char *)s, *q;
	uint64_t v = 0;
	unsigned d;

	/* After the optional 0x, strtoull(, 16), which this replaces
	 * (tools/util.c), would skip a second 0x when a digit follows it
	 * ("0x0x10" is 0x10). */
	if (p[0] == '0' && (p[1] | 0x20) == 'x')
		p += 2;
	if (p[0] == '0' && (p[1] | 0x20) == 'x' &&
	    tool_hex_digit[p[2]] != TOOL_HEX_NONE)
		p += 2;
	/* Blanks and a sign are refused with the rest: not digits. */
	if (tool_hex_digit[*p] == TOOL_HEX_NONE)
		return -EINVAL;
	while (*p == '0')
		p++;
	/* One table load, a test, a shift and an or a digit. */
	for (q = p; (d = tool_hex_digit[*p]) != TOOL_HEX_NONE; p++)
		v = v << 4 | d;
	/* Past 16 digits (leading zeros aside), strtoull()'s ERANGE. */
	if (p - q > 16)
		return -ERANGE;
	*out = v;
	*end = (const char *)p;
	return 0;
}

/* How many bytes tool_hex_lines() reads from its *@ps. */
#define TOOL_HEX_LINES_READ 64

#ifdef __SSE2__
/* tool_hex_lines()'s look at its 64 bytes: bit i of each mask is byte i's,
 * and nib[i] byte i's value as a hex digit (meaningless for others). */
struct tool_hex_block {
	uint64_t nl;	/* '\n' */
	uint64_t hex;	/* a hex digit, either case */
	uint64_t pfx;	/* "0x" or "0X" starts here */
	uint8_t nib[64 + 16] __attribute__((aligned(16)));
};

static inline __attribute__((always_inline)) void
tool_hex_block(const char *b, struct tool_hex_block *k)
{
	uint64_t zero = 0, ex = 0;

	k->nl = k->hex = 0;
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(
			b + 16 * i));
		__m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));
		/* Digits and letters a-f either case, by signed compares: a
		 * byte of 0x80 or more is negative, and neither. */
		__m128i dig = _mm_and_si128(
			_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
			_mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
		__m128i alpha = _mm_and_si128(
			_mm_cmpgt_epi8(low, _mm_set1_epi8('a' - 1)),
			_mm_cmplt_epi8(low, _mm_set1_epi8('f' + 1)));
		/* A digit's value: its low 4 bits, + 9 for a letter (bit 6). */
		__m128i b6 = _mm_and_si128(_mm_srli_epi16(v, 6),
					   _mm_set1_epi8(1));
		unsigned sh = 16 * (unsigned)i;

		_mm_store_si128((__m128i *)(void *)(k->nib + 16 * i),
				_mm_add_epi8(_mm_and_si128(v, _mm_set1_epi8(0x0f)),
					     _mm_add_epi8(b6, _mm_slli_epi16(b6, 3))));
		k->nl |= (uint64_t)(uint16_t)_mm_movemask_epi8(
			_mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))) << sh;
		k->hex |= (uint64_t)(uint16_t)_mm_movemask_epi8(
			_mm_or_si128(dig, alpha)) << sh;
		zero |= (uint64_t)(uint16_t)_mm_movemask_epi8(
			_mm_cmpeq_epi8(v, _mm_set1_epi8('0'))) << sh;
		ex |= (uint64_t)(uint16_t)_mm_movemask_epi8(
			_mm_cmpeq_epi8(low, _mm_set1_epi8('x'))) << sh;
	}
	/* The bytes a line's load reads past the block: shifted out. */
	_mm_store_si128((__m128i *)(void *)(k->nib + 64), _mm_setzero_si128());
	k->pfx = zero & (ex >> 1);
}
#endif

/**
 * tool_hex_lines() - the common lines of `sym lookup`'s input, [0x]1 to
 * 16 hex digits and a '\n', parsed a 64-byte block at a time: the
 * block's newlines, digits, digit values and "0x"s are found at once
 * (tool_hex_block()), and each line is then a test of its bits and 16
 * digit values packed into 8 bytes, with no branch on its length.  Its
 * lines are independent of each other, where a loop of tool_scan_hex()
 * made each line's start wait for the end of the line before (and
 * mispredicted its digit count's exit when the lengths vary: libc's
 * addresses have 5 or 6 digits).
 * @param ps   in: a line's start, with TOOL_HEX_LINES_READ bytes readable;
 *             out: the first line not parsed
 * @param out  the values, at most 64
 * @return how many lines were parsed, from the first one in the 64 bytes
 *         from *@ps up to the first that is not one of these lines or does
 *         not end in them (0: the first one is not, or is longer)
 */
static inline __attribute__((always_inline)) size_t
tool_hex_lines(const char **ps, uint64_t *out)
{
#ifdef __SSE2__
	struct tool_hex_block k;
	uint64_t m;
	size_t s = 0, n = 0;

	tool_hex_block(*ps, &k);
	for (m = k.nl; m; m &= m - 1) {
		size_t e = (size_t)__builtin_ctzll(m);
		/* A line [s, e): its digits from st, after a "0x" (which
		 * ends before e: '0' and 'x' are not '\n'). */
		size_t st = s + 2 * ((k.pfx >> s) & 1), len = e - st;
		uint64_t need, x;
		__m128i d, pair;

		if (len - 1 >= 16)
			break;
		need = ~(uint64_t)0 >> (64 - len);
		if (((k.hex >> st) & need) != need)
			break;
		/* Two digits make a byte, the first one the high half; the
		 * first byte is the most significant of 16 digits' value, and
		 * those past the line's are shifted out. */
		d = _mm_loadu_si128((const __m128i *)(const void *)(k.nib + st));
		pair = _mm_or_si128(
			_mm_slli_epi16(_mm_and_si128(d, _mm_set1_epi16(0xff)), 4),
			_mm_srli_epi16(d, 8));
		x = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(
			_mm_packus_epi16(pair, pair)));
		out[n++] = x >> (4 * (16 - len));
		s = e + 1;
	}
	*ps += s;
	return n;
#else
	(void)ps;
	(void)out;
	return 0;
#endif
}

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

/**
 * tool_prof_read() - read a raw or pprof profile (sym_prof_read_file()),
 * printing the reader's message when it fails.
 * @param path  the file, or "-" for stdin
 * @param[out] out  caller owns: sym_prof_free()
 * @return 0, or the error of sym_prof_read_file() (printed)
 */
int tool_prof_read(const char *path, struct sym_prof **out);

/**
 * tool_upload_kallsyms() - `sym upload --kallsyms @path` to symd at
 * @server (upload.c): the kernel's part and each module's, each
 * announced on @out as sym upload's lines; the token from @token_file,
 * or NULL for $SYM_TOKEN_FILE's or $SYM_TOKEN.
 * @return 0 when every part is on the server, -EIO when one is not,
 *         -ENOENT (no token), -EINVAL (a bad URL or token), -errno
 *         (every failure said on stderr)
 */
int tool_upload_kallsyms(const char *server, const char *token_file,
			 const char *path, FILE *out);

/**
 * tool_prof_write() - write @p as raw text or gzipped pprof, to @out
 * atomically (a temporary file beside it, fsync()ed and renamed over it
 * when complete) or to stdout when @out is NULL.
 * @return 0, or -errno / -ENOMEM (printed)
 */
int tool_prof_write(const struct sym_prof *p, bool pprof, const char *out);

/**
 * tool_prof_binary_tty() - refuse to write pprof's binary data to a
 * terminal: true (after a message) when @pprof, no @out, and stdout is a
 * terminal.
 */
bool tool_prof_binary_tty(bool pprof, const char *out);

/**
 * How a command that reads profiles symbolizes them (tools/symbolize.c):
 * the options of `sym symbolize`, which the views take too.
 */
struct tool_symbolize_opts {
	/** --server URL: ask symd; NULL for the local store. */
	const char *server;
	/** --store DIR; NULL for sym_store_default_dir(). */
	const char *store_dir;
	/** --wait-ms: how long a build ID may stay pending on the server. */
	unsigned wait_ms;
	/** --kallsyms FILE: a kallsyms snapshot (tools/kallsyms.h) that
	 *  names the frames of the kernel whose build ID it carries; NULL:
	 *  PROFILE.kallsyms beside a profile read from a file, when there
	 *  is one. */
	const char *kallsyms;
	/** --ko-dir DIR: kernel modules' .ko files (searched to 8 levels
	 *  deep, matched by build ID) that name module frames from their
	 *  .text symbols when the snapshot has the module's .text base;
	 *  NULL: module frames from the snapshot only. */
	const char *ko_dir;
	/** --debuginfo-path DIR[:DIR...]: directories laid out as
	 *  /usr/lib/debug, searched before it: DIR/.build-id/xx/rest.debug
	 *  for any module; DIR/boot/vmlinux-REL, DIR/lib/modules/REL/vmlinux
	 *  and DIR/lib/modules/REL/.../NAME.ko for the kernel and module NAME
	 *  (docs/design.md, "Kernel modules"); NULL: /usr/lib/debug only. */
	const char *debuginfo_path;
	/** --partial: take symd's "partial" answers (a cold build ID's
	 *  function names from its symbols alone, while its table is
	 *  built) rather than ask again until the full ones or --wait-ms. */
	bool partial;
	/** No summary on stderr. */
	bool quiet;
	/** The summary's per-module table too (-v), not only its line. */
	bool verbose;
	/** Name the outermost function of a location after the symbol
	 *  llvm-symbolizer names it after (struct sym_frame's
	 *  llvm_symbol), when the answer has one (the local store's
	 *  tables do, symd's replies do not): `sym symbolize-log` writes
	 *  sanitizer frames as the runtime writes llvm-symbolizer's
	 *  answers. */
	bool llvm_names;
};

/** getopt_long() values of TOOL_SYMBOLIZE_OPTIONS. */
enum {
	TOOL_OPT_SERVER = 0x200,
	TOOL_OPT_STORE,
	TOOL_OPT_WAIT_MS,
	TOOL_OPT_KALLSYMS,
	TOOL_OPT_KO_DIR,
	TOOL_OPT_PARTIAL,
	TOOL_OPT_DEBUGINFO_PATH,
};

/** The long options --server, --store, --wait-ms, --kallsyms, --ko-dir,
 *  --debuginfo-path and --partial, for a longopts[]. */
#define TOOL_SYMBOLIZE_OPTIONS                                              \
	{ "server", required_argument, NULL, TOOL_OPT_SERVER },              \
	{ "store", required_argument, NULL, TOOL_OPT_STORE },                \
	{ "wait-ms", required_argument, NULL, TOOL_OPT_WAIT_MS },            \
	{ "kallsyms", required_argument, NULL, TOOL_OPT_KALLSYMS },          \
	{ "ko-dir", required_argument, NULL, TOOL_OPT_KO_DIR },              \
	{ "debuginfo-path", required_argument, NULL,                         \
	  TOOL_OPT_DEBUGINFO_PATH },                                         \
	{ "partial", no_argument, NULL, TOOL_OPT_PARTIAL }

/**
 * tool_symbolize_getopt() - take one of TOOL_SYMBOLIZE_OPTIONS.
 * @return 1 when @opt was one (stored in @o), 0 when it is not, -1 for a
 *         bad value (printed)
 */
int tool_symbolize_getopt(int opt, const char *arg,
			  struct tool_symbolize_opts *o);

/**
 * tool_prof_symbolize() - symbolize every frame of @p that has no `ok`
 * location yet (docs/raw-format.md, "The symbolized form"), through symd
 * or the local store, and print the summary on stderr unless @o->quiet:
 * one line (frames, modules, the resolved share), and with @o->verbose a
 * table of the modules with why their frames did not resolve.
 * @return 0 (frames that did not resolve have a status saying why), or
 *         an error after which @p is incomplete (printed): the server
 *         unreachable or not answering as symd, -ENOMEM
 */
int tool_prof_symbolize(struct sym_prof *p,
			const struct tool_symbolize_opts *o);

/**
 * tool_prof_load() - tool_prof_read(), then tool_prof_symbolize() when
 * some frame has no location yet (an unsymbolized input, or a pprof
 * profile whose locations have lines only in part): what a view does
 * with its input.
 * @param[out] out  caller owns: sym_prof_free(); NULL on error
 */
int tool_prof_load(const char *path, const struct tool_symbolize_opts *o,
		   struct sym_prof **out);

/** Called by tool_symbolize_main() with the profile read from @path,
 *  symbolized, before it is written (`sym pprof`'s warning on broken
 *  stacks). */
typedef void (*tool_prof_check_fn)(const struct sym_prof *p,
				   const char *path);

/**
 * tool_symbolize_main() - the body of `sym symbolize` (@pprof false:
 * every frame not ok is resolved, the symbolized raw form is written)
 * and of `sym pprof` (true: frames without a location are resolved, a
 * symbolized pprof profile is written): options -o, -q, -h and
 * TOOL_SYMBOLIZE_OPTIONS, one input.
 * @param usage_fn  prints the command's help
 * @param check     NULL, or called once the profile is symbolized
 * @return the exit status
 */
int tool_symbolize_main(int argc, char **argv, void (*usage_fn)(FILE *),
			bool pprof, tool_prof_check_fn check);

/** tool_status_name() - "ok", "missing", ... for enum sym_prof_loc_status. */
const char *tool_status_name(uint32_t status);

/**
 * tool_map_source() - which source symbolized a map, from its struct
 * sym_prof_map flags: "dwarf", "gopclntab", "symtab", "kallsyms"
 * (SYM_PROF_MAP_SRC_*), "perf-map" (SYM_PROF_MAP_PERFMAP), else "none".
 */
const char *tool_map_source(uint32_t flags);

/** Most --debuginfo-path directories a command takes. */
#define TOOL_DIRS_MAX 32

/** The directories of --debuginfo-path options.  Zero it to start. */
struct tool_dirs {
	/** NULL-terminated, for sym_module_opts.debuginfo_path; points into
	 *  bufs. */
	const char *dirs[TOOL_DIRS_MAX + 1];
	size_t n;
	char *bufs[TOOL_DIRS_MAX];	/* free(): copies of the options */
	size_t nbufs;
};

/**
 * tool_dirs_add() - add the directories of one --debuginfo-path option,
 * in eu-addr2line's syntax: DIR:DIR..., where a leading + or - on an
 * element (libdwfl's CRC switch) is dropped.
 * @return 0, -ENOMEM, -E2BIG (more than TOOL_DIRS_MAX)
 */
int tool_dirs_add(struct tool_dirs *d, const char *arg);

/** tool_dirs_release() - free the copies; @d is zeroed. */
void tool_dirs_release(struct tool_dirs *d);

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

/**
 * Called by tool_read_lines_batch() with whole lines, the @len bytes at
 * @lines, which the function may overwrite: each line ends with a
 * newline, except the last one when @lines[@len] is a NUL (the input's
 * last line without a newline, or the head of an over-long line).  So a
 * scan that stops at a newline or a NUL stays within them.
 * tool_each_line() splits them for a tool_line_fn.
 */
typedef int (*tool_lines_fn)(void *ctx, char *lines, size_t len);

/**
 * tool_line_cut() - make the first of the lines a tool_lines_fn was given
 * a string: its newline becomes a NUL.
 * @param line  where it starts
 * @param end   the end of the lines (lines + len)
 * @return where the next line starts (@end, or past it, when none)
 */
char *tool_line_cut(char *line, char *end);

/**
 * tool_each_line() - call @fn for each of the lines a tool_lines_fn was
 * given, its newline made a NUL, until @fn returns non-zero.
 * @return 0, or that value
 */
int tool_each_line(char *lines, size_t len, tool_line_fn fn, void *ctx);

/** Called by tool_read_lines_batch() before it may block, and at EOF. */
typedef int (*tool_flush_fn)(void *ctx);

/**
 * tool_read_lines_batch() - tool_read_lines() for tools that answer lines
 * in batches: @fn may only queue its lines, and @flush, called before
 * every read(2) that could block and once at EOF (before stdout is
 * flushed), answers what is queued.  So a co-process still gets each
 * answer before its next question is waited for, and a pipe full of
 * addresses is answered in batches as large as one read.  @fn gets the
 * whole lines of each read at once (one call, not one a line).
 * @param flush  may be NULL
 * @return as tool_read_lines(), or the first non-zero value of @flush
 */
int tool_read_lines_batch(int fd, tool_lines_fn fn, tool_flush_fn flush,
			  void *ctx);

#endif /* SYM_TOOLS_H */
