/*
 * views.h - the input layer of the profile views (`sym fold`, `sym tree`,
 * `sym report`, `sym flamegraph`): any input they take, read into one
 * list of *named stacks*, and the output file they write.
 *
 * Inputs (docs/views.md, "Input"):
 *   - the raw stack format of `sym record` and libsymprof
 *     (docs/raw-format.md), gzipped or not;
 *   - its symbolized form (`sym symbolize`, same file with `loc` lines);
 *   - pprof (profile.proto, gzipped or not), symbolized or not;
 *   - FlameGraph's folded stacks ("a;b;c 12"), for the views that draw
 *     stacks (fold, tree, flamegraph) but not for `sym report`, whose
 *     statistics need sample counts that a folded file may not hold.
 * The format is told from the first bytes (views_sniff()); `--from`
 * forces one.  A profile that is not symbolized yet is symbolized on the
 * fly, through symd (--server URL) or the local store (--store DIR), by
 * tool_prof_symbolize() of tools/symbolize.c: `sym fold --store DIR
 * cpu.raw` just works.
 *
 * A named stack is a list of display names, root (outermost caller)
 * first, with its count of samples, its weight, PID, TID, the input it
 * came from and, for merged profiles, its source and host.  Display names (the views of one profile agree on them):
 *   - a resolved frame is its function, and each function of its inline
 *     chain is a frame of its own, the real function first (outer), then
 *     the inlined calls, innermost last;
 *   - annotations, as FlameGraph marks them, on request: "_[i]" after an
 *     inlined function (on by default, like `sym fold --from
 *     perf-script`), "_[k]" after a frame of the kernel map, "_[j]" after
 *     one in an anonymous (JIT) map;
 *   - an unresolved frame is "module+0xADDR": the base name of the map's
 *     path, or the first 8 digits of its build ID, or "[unknown]" outside
 *     any map, and the address the raw format gives (ELF vaddr; runtime
 *     address in the kernel and outside maps);
 *   - on request a root frame for the process, "comm-PID", or the thread,
 *     "comm-PID/TID", or just "comm", as stackcollapse-perf.pl's --pid and
 *     --tid make them (spaces in comm become '_'; an unknown PID or TID is
 *     "?", an unknown comm "[unknown]");
 *   - a stack with no frame at all is the one frame "[no stack]", so that
 *     every sample is somewhere;
 *   - a stack the recorder flagged as likely wrong (any flag of
 *     docs/raw-format.md, "Stacks") gets the root frame "[broken stack]"
 *     (broken.h's BROKEN_FRAME), above the process root frame, unless
 *     VIEWS_BROKEN_PLAIN: its share shows as one block, and it is not
 *     rooted wherever its unwind happened to stop;
 *   - ';' in a name becomes ':', and line ends become spaces, so every
 *     name survives the folded format unchanged.
 *
 * Names are interned: each distinct name has one id (1 and up) and is
 * stored once, so a view can count per name with an array.
 *
 * Ownership: struct views owns every stack and name; pointers it returns
 * are borrowed until views_free().  Thread-safety: none.
 */
#ifndef SYM_VIEWS_H
#define SYM_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools.h"
#include "broken.h"
#include "stacktree.h"

/** Display options (enum views_flags in struct views_opts). */
enum views_flags {
	/** Root frame: the process name, "comm". */
	VIEWS_COMM = (1 << 0),
	/** Root frame "comm-PID" (wins over VIEWS_COMM). */
	VIEWS_PID = (1 << 1),
	/** Root frame "comm-PID/TID" (wins over VIEWS_PID). */
	VIEWS_TID = (1 << 2),
	/** "_[k]" after kernel frames. */
	VIEWS_KERNEL = (1 << 3),
	/** "_[j]" after frames in anonymous (JIT) maps. */
	VIEWS_JIT = (1 << 4),
	/** Inlined functions without "_[i]" (--inline=plain). */
	VIEWS_INLINE_PLAIN = (1 << 5),
	/** Inlined functions left out: the real function only
	 *  (--inline=none). */
	VIEWS_INLINE_NONE = (1 << 6),
	/** A stack's value is its weight (header's weight unit), or with
	 *  views_opts.value_type its value of that type, not its sample
	 *  count (--value weight, --value TYPE). */
	VIEWS_WEIGHT = (1 << 7),
	/** Flagged stacks as recorded, without the "[broken stack]" root
	 *  frame (--broken=plain). */
	VIEWS_BROKEN_PLAIN = (1 << 8),
	/*
	 * Granularity (--granularity; at most one; none: functions, where an
	 * unresolved frame is its module, "module+?", one name per module):
	 */
	/** Unresolved frames one per address, "module+0xADDR". */
	VIEWS_GRAN_ADDRESSES = (1 << 9),
	/** Each function of a chain as "function file:line". */
	VIEWS_GRAN_LINES = (1 << 10),
	/** Each function of a chain as its source file. */
	VIEWS_GRAN_FILES = (1 << 11),
	/** Every frame as its module (the map's file), resolved or not. */
	VIEWS_GRAN_MODULES = (1 << 12),
};

/** All the granularity flags. */
#define VIEWS_GRAN_MASK                                                    \
	(VIEWS_GRAN_ADDRESSES | VIEWS_GRAN_LINES | VIEWS_GRAN_FILES |        \
	 VIEWS_GRAN_MODULES)

/** Input formats. */
enum views_format {
	VIEWS_FROM_AUTO = 0,	/**< told from the first bytes */
	VIEWS_FROM_PROFILE,	/**< raw, symbolized or pprof */
	VIEWS_FROM_FOLDED,	/**< FlameGraph's folded stacks */
};

/** How views_load() reads and names; zero it, then views_getopt(). */
struct views_opts {
	/** enum views_flags. */
	uint32_t flags;
	/** enum views_format; VIEWS_FROM_AUTO by default. */
	uint32_t from;
	/** Refuse folded input (sym report). */
	bool no_folded;
	/** views_read() fails when the inputs hold no sample. */
	bool need_samples;
	/** How to symbolize an unsymbolized profile. */
	struct tool_symbolize_opts sym;
	/** pprof's filters, POSIX extended regular expressions matched
	 *  (unanchored) against the names of a stack's frames, as named
	 *  above; NULL when not given.  Borrowed from argv.
	 *  @focus keeps the stacks with a frame that matches, @ignore drops
	 *  them, @hide removes the frames that match (a stack left without
	 *  frames is dropped).  Dropped stacks count nowhere. */
	const char *focus, *ignore, *hide;
	/** --value TYPE: count the stacks' values of this value type
	 *  (sym_prof_value_index(); VIEWS_WEIGHT is set with it), NULL for
	 *  samples or weight.  Borrowed (argv). */
	const char *value_type;
};

/** One named stack; borrowed from struct views. */
struct views_stack {
	/** Name ids, root first (views_name()); never empty. */
	const uint32_t *frames;
	uint32_t nframes;
	/** enum sym_prof_stack_flags of the raw stack (0 from folded). */
	uint32_t flags;
	/** Samples, and their weight (folded input: both the count). */
	uint64_t count, weight;
	/** What the views count: with VIEWS_WEIGHT the value of
	 *  views_opts.value_type, else @weight; else @count. */
	uint64_t value;
	/** Host PID and TID; 0 when unknown. */
	int32_t pid, tid;
	/** Index of the input (views_input()). */
	uint32_t input;
	/** Its source in the input, a merged profile (sym merge --spread:
	 *  sym_prof_stack_source()); 0 when none. */
	uint32_t source;
	/** The host it was recorded on: its source's, else the input's
	 *  header's; NULL when unknown.  Borrowed until views_free(). */
	const char *host;
};

/** Sources of a module: views_source_name(). */
#define VIEWS_NSOURCES 6

/** One input file that views_load() read. */
struct views_input {
	/** The path as given ("-" for stdin); borrowed from the caller. */
	const char *path;
	/** enum views_format: VIEWS_FROM_PROFILE or VIEWS_FROM_FOLDED. */
	uint32_t format;
	/** From the profile's header; NULL when unknown (and for folded
	 *  input).  Copies owned by struct views. */
	char *host, *weight_unit, *event, *tool, *mode;
	/** Header values (0 for folded input). */
	uint64_t period, frequency, duration_ns, lost, dropped;
	/** Samples (sum of the counts) and stacks read. */
	uint64_t samples, stacks;
	/** Samples of stacks flagged as likely wrong (truncated, badreturn,
	 *  leaf, unwind, kernel-only, or a flag this reader does not know):
	 *  broken.flagged. */
	uint64_t flagged;
	/** Its broken stacks, per flag (zero for folded input); its tool
	 *  and mode point at @tool and @mode. */
	struct broken_tally broken;
	/** Its modules (distinct build IDs, else paths, of its maps) by the
	 *  source `sym symbolize` recorded for them, indexed as
	 *  views_source_name() names them; zero for folded input. */
	uint32_t modules[VIEWS_NSOURCES];
};

struct views;

/**
 * views_source_name() - "dwarf", "gopclntab", "symtab", "kallsyms",
 * "perf-map", "none" for @k below VIEWS_NSOURCES (views_input.modules),
 * NULL past them.
 */
const char *views_source_name(size_t k);

/**
 * views_new() - an empty set of named stacks.
 * @param flags  enum views_flags: the naming of every later views_load()
 * @param[out] out  caller owns: views_free()
 * @return 0, -ENOMEM
 */
int views_new(uint32_t flags, struct views **out);

/**
 * views_set_filters() - compile o->focus, o->ignore and o->hide for the
 * later views_load() of @v (views_read() calls it).
 * @return 0, -EINVAL (a bad expression, printed), -ENOMEM
 */
int views_set_filters(struct views *v, const struct views_opts *o);

/** views_filtered() - the samples views_load() dropped for the filters. */
uint64_t views_filtered(const struct views *v);

/** views_free() - free @v and all it holds; NULL is a no-op. */
void views_free(struct views *v);

/**
 * views_load() - read one input and append its stacks.
 * @param path  a file, or "-" for stdin (read once: stdin is kept in
 *              memory so that its format can be told and it read again)
 * @param o     how to read it (o->flags must be the flags of views_new())
 * @return 0, or an error already printed with the input's name: -errno,
 *         -SYM_E_BADPROFILE (a malformed profile), -EINVAL (malformed
 *         folded text, with a hint when it looks like `perf script`
 *         output; a folded input refused), -ERANGE (a count or the total past 2^64 - 1),
 *         -E2BIG, -ENOMEM, or what symbolizing returned (server
 *         unreachable).  On error @v keeps the stacks of earlier inputs
 *         and none of this one.
 */
int views_load(struct views *v, const char *path, const struct views_opts *o);

/**
 * views_sniff() - the format of @path from its first bytes: gzip or a
 * "sym-raw " line make a profile; so do bytes no text holds (pprof's
 * protobuf) unless the first line that is not blank is a folded line;
 * other text is taken as folded stacks, whose reader then says line by
 * line what is wrong with it.  Reading "-" keeps stdin (see views_load()).
 * @param[out] fmt  VIEWS_FROM_PROFILE or VIEWS_FROM_FOLDED
 * @return 0, -errno (printed)
 */
int views_sniff(const char *path, uint32_t *fmt);

/** Number of stacks; they are 0 to n - 1, in the order read. */
size_t views_nstacks(const struct views *v);

/** Stack @i; borrowed until views_free(); NULL when out of range. */
const struct views_stack *views_stack(const struct views *v, size_t i);

/** Number of name ids: names are 1 to views_nnames() - 1 (0 is none). */
size_t views_nnames(const struct views *v);

/**
 * views_name() - the text of name @id.
 * @param[out] len  its length; may be NULL
 * @return borrowed until views_free(), NUL-terminated; "" for a bad id
 */
const char *views_name(const struct views *v, uint32_t id, size_t *len);

/** Sum of the stacks' values (count, or weight or typed value with
 *  VIEWS_WEIGHT). */
uint64_t views_total(const struct views *v);

/** Number of inputs read; views_input() - input @i (NULL past it). */
size_t views_ninputs(const struct views *v);
const struct views_input *views_input(const struct views *v, size_t i);

/**
 * views_unit() - what a value counts: "samples", or the weight unit of
 * the inputs with VIEWS_WEIGHT ("ns", "samples"; "weight" when unknown),
 * or the unit of the value type of --value TYPE ("bytes", "count").
 * @return borrowed until views_free()
 */
const char *views_unit(const struct views *v);

/**
 * views_warn_broken() - the warning of broken_warn() on stderr for each
 * profile input of @v whose flagged stacks are more than 2% of its
 * samples (folded inputs have no flags).  views_read() calls it.
 * @return the number of inputs warned about
 */
size_t views_warn_broken(const struct views *v);

/**
 * views_broken() - the tally of every input of @v added up (broken_add()),
 * for a note on all of them.
 */
void views_broken(const struct views *v, struct broken_tally *out);

/**
 * views_module_name() - the module part of an unresolved frame's name
 * "module+0xADDR": the base name of @m's path, else the first 8 digits of
 * its build ID, else for an anonymous map "[perf-map]" (its names came
 * from the process's perf map: SYM_PROF_MAP_PERFMAP), "[perf-map-stale]"
 * (a perf map was there but not trusted) or "[anon]", else "[unknown]"
 * (@m NULL: outside every map).
 * @param[out] len  the name's length (it need not end in a NUL)
 * @return borrowed from @m, or a static string
 */
const char *views_module_name(const struct sym_prof_map *m, size_t *len);

/**
 * views_tree() - add every stack to @t with its value: top-down (root
 * first), or @inverted (leaf first, so the top level holds each leaf
 * function with its self value, and below it its callers).
 * @return 0, or what stacktree_child() / stacktree_count() return
 */
int views_tree(const struct views *v, bool inverted, struct stacktree *t);

/*
 * Command-line options shared by the views: put VIEWS_OPTIONS in the
 * longopts array, pass every option to views_getopt() first, and print
 * VIEWS_USAGE in the help text.
 */

/** getopt_long() values of VIEWS_OPTIONS (after TOOL_OPT_*). */
enum {
	VIEWS_OPT_FROM = 0x280,
	VIEWS_OPT_COMM,
	VIEWS_OPT_PID,
	VIEWS_OPT_TID,
	VIEWS_OPT_KERNEL,
	VIEWS_OPT_JIT,
	VIEWS_OPT_ALL,
	VIEWS_OPT_INLINE,
	VIEWS_OPT_VALUE,
	VIEWS_OPT_QUIET,
	VIEWS_OPT_BROKEN,
	VIEWS_OPT_VERBOSE,
	VIEWS_OPT_FOCUS,
	VIEWS_OPT_IGNORE,
	VIEWS_OPT_HIDE,
	VIEWS_OPT_GRANULARITY,
};

/** The long options of the input layer, for a longopts[] array. */
#define VIEWS_OPTIONS                                                      \
	TOOL_SYMBOLIZE_OPTIONS,                                             \
	{ "from", required_argument, NULL, VIEWS_OPT_FROM },                \
	{ "comm", no_argument, NULL, VIEWS_OPT_COMM },                      \
	{ "pid", no_argument, NULL, VIEWS_OPT_PID },                        \
	{ "tid", no_argument, NULL, VIEWS_OPT_TID },                        \
	{ "kernel", no_argument, NULL, VIEWS_OPT_KERNEL },                  \
	{ "jit", no_argument, NULL, VIEWS_OPT_JIT },                        \
	{ "all", no_argument, NULL, VIEWS_OPT_ALL },                        \
	{ "inline", required_argument, NULL, VIEWS_OPT_INLINE },            \
	{ "value", required_argument, NULL, VIEWS_OPT_VALUE },              \
	{ "quiet", no_argument, NULL, VIEWS_OPT_QUIET },                    \
	{ "verbose", no_argument, NULL, VIEWS_OPT_VERBOSE },                \
	{ "focus", required_argument, NULL, VIEWS_OPT_FOCUS },              \
	{ "ignore", required_argument, NULL, VIEWS_OPT_IGNORE },            \
	{ "hide", required_argument, NULL, VIEWS_OPT_HIDE },                \
	{ "granularity", required_argument, NULL, VIEWS_OPT_GRANULARITY },  \
	{ "broken", required_argument, NULL, VIEWS_OPT_BROKEN }

/** Help text of VIEWS_OPTIONS, for usage(): VIEWS_USAGE for the views
 *  that read folded stacks, VIEWS_USAGE_PROFILE for those that refuse
 *  them (struct views_opts' no_folded). */
#define VIEWS_USAGE                                                        \
"Input (IN: raw, symbolized or pprof profile, or folded stacks; - for\n"    \
"stdin; told apart by their first bytes):\n"                              \
"  --from FORMAT        profile or folded: do not guess\n"                 \
VIEWS_USAGE_COMMON
#define VIEWS_USAGE_PROFILE                                                \
"Input (IN: raw, symbolized or pprof profile; - for stdin; not folded\n"   \
"stacks):\n"                                                             \
VIEWS_USAGE_COMMON
#define VIEWS_USAGE_COMMON                                                 \
"  --server URL         symbolize through symd at URL ...\n"               \
"  --store DIR          ... or the local store DIR (default: SYM_STORE,\n" \
"                       ~/.cache/sym); only for unsymbolized input\n"     \
"  --wait-ms MS         how long symd may keep a build ID pending\n"      \
"  --kallsyms FILE      kernel frames from this kallsyms snapshot\n"      \
"                       (default: IN.kallsyms, when there is one)\n"      \
"  --debuginfo-path DIRS  debug directories searched before\n"          \
"                       /usr/lib/debug (sym symbolize's)\n"             \
"  -q, --quiet          no symbolization summary on stderr\n"             \
"  -v, --verbose        the summary's table of modules, not only its line\n" \
"Names:\n"                                                                \
"  --comm | --pid | --tid  a root frame for the process: comm, comm-PID,\n" \
"                       or the thread: comm-PID/TID\n"                    \
"  --kernel             _[k] after kernel frames\n"                       \
"  --jit                _[j] after frames in anonymous (JIT) maps\n"      \
"  --all                --kernel and --jit\n"                             \
"  --inline=MODE        mark: inlined functions are frames marked _[i]\n" \
"                       (default); plain: unmarked; none: left out\n"     \
"  --value=WHAT         samples (default), weight: the profile's\n"      \
"                       weights (e.g. ns of CPU time), or a value type\n" \
"                       of the profile (alloc_space, inuse_space,\n"    \
"                       alloc_objects, inuse_objects: sym run --mode\n" \
"                       alloc), weighted like weight\n"                 \
"  --broken=MODE        mark: stacks the recorder flagged as likely\n"   \
"                       wrong go under a [broken stack] root frame\n"    \
"                       (default); plain: as recorded.  Either way a\n"  \
"                       warning names the flags and their cure when\n"  \
"                       they are over 2% of an input's samples\n"     \
"  --granularity=G      functions (default; unresolved frames one per\n" \
"                       module, module+?), addresses (unresolved ones\n" \
"                       per address, module+0xADDR), lines (function\n" \
"                       file:line), files, or modules\n"               \
"Filters (pprof's; RE: POSIX extended, matched against frame names):\n" \
"  --focus=RE           keep only stacks with a frame that matches\n"   \
"  --ignore=RE          drop the stacks with a frame that matches\n"    \
"  --hide=RE            remove the frames that match from the stacks\n"

/**
 * views_getopt() - take one of VIEWS_OPTIONS (or 'q', 'v').
 * @return 1 when @opt was one (stored in @o), 0 when it is not, -1 for a
 *         bad value (printed)
 */
int views_getopt(int opt, const char *arg, struct views_opts *o);

/** A command's help text printer, for views_option(). */
typedef void (*views_usage_fn)(FILE *f);

/**
 * views_option() - the options every view takes: -o/--output,
 * -h/--help, -q and VIEWS_OPTIONS.  A command's getopt_long() loop hands
 * it every option the command does not take itself.
 * @param[out] output  set by -o
 * @return -1 when @opt was taken (go on), else the exit status to return
 *         at once: TOOL_EXIT_OK after --help (@usage on stdout),
 *         TOOL_EXIT_USAGE for a bad value (printed) or an unknown option
 *         (@usage on stderr)
 */
int views_option(int opt, const char *arg, struct views_opts *o,
		 const char **output, views_usage_fn usage);

/**
 * views_read() - views_new() and views_load() of each of @paths (stdin
 * when @n is 0), then views_warn_broken(): what a view reads.
 * @param[out] out  caller owns: views_free(); NULL on error
 * @return 0, or the first error (printed); -ENODATA when
 *         o->need_samples and the inputs hold no sample
 */
int views_read(char *const *paths, size_t n, const struct views_opts *o,
	       struct views **out);

/**
 * views_parse_number() - the whole of @s as a number from @lo to @hi.
 * @return 0, -EINVAL (*out untouched)
 */
int views_parse_number(const char *s, double lo, double hi, double *out);

/*
 * Output: stdout, or a file written atomically.  With a path, the text
 * goes to a temporary file beside it, renamed over it by
 * views_out_close() when everything was written; a failed run leaves the
 * old file (or none).  A path that exists and is not a regular file
 * (/dev/stdout, a FIFO) is written directly.
 */
struct views_out {
	/** Where to write, with stdio. */
	FILE *f;
	/** The target, or NULL for stdout; borrowed. */
	const char *path;
	/** The temporary file, "" when none. */
	char tmp[4096];
};

/**
 * views_out_open() - start writing to @path (NULL or "-": stdout).
 * @return 0, or -errno (printed)
 */
int views_out_open(struct views_out *o, const char *path);

/**
 * views_out_close() - finish: flush, close, and when @ok rename the
 * temporary file over the target; when !@ok (or anything fails) remove
 * it.
 * @return 0, or -errno / -EIO (printed; the target is unchanged)
 */
int views_out_close(struct views_out *o, bool ok);

#endif /* SYM_VIEWS_H */
