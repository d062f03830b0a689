/*
 * sym_prof.h - libsymprofile: profiles in memory, the raw stack format
 * (docs/raw-format.md) and pprof (docs/pprof.md).
 *
 * A struct sym_prof is one profile in memory: a header, a table of
 * mappings, processes and threads, and unique stacks of unsymbolized
 * frames with a count and a weight each.  sym record and the views build,
 * read and write it; it owns every string and array it holds.
 *
 *	struct sym_prof *p = NULL;
 *	char msg[256];
 *	err = sym_prof_read_file("cpu.raw", &p, msg, sizeof(msg));
 *	for (size_t i = 0; i < sym_prof_nstacks(p); i++) {
 *		const struct sym_prof_stack *s = sym_prof_stack(p, i);
 *		...
 *	}
 *	sym_prof_free(p);
 *
 * The library.  The profile model is a library of its own, libsymprofile
 * (lib/libsymprofile.{a,so}, pkg-config libsymprofile), apart from libsym,
 * the symbolizer: it needs neither libdw nor LMDB, and libsym needs
 * neither zlib nor protobuf-c.  (libsymprof.so, one letter shorter, is
 * another thing: the LD_PRELOAD sampler of `sym run`, tools/symprof/.)
 * A profile holds addresses, build IDs and, once symbolized, the names
 * and lines a symbolizer gave it; filling those in is the caller's (sym
 * symbolize does it with libsym).
 *
 * This header includes sym.h for what the two libraries share: the
 * export macro, the version and the error codes.
 *
 * Thread-safety: a profile is used by one thread at a time; distinct
 * profiles are independent.
 *
 * Errors.  As in libsym (sym.h, "Errors"): calls that can fail return 0
 * or a negative code, -errno for system failures and for arguments out of
 * their range (-EINVAL, -E2BIG past a limit, -EOVERFLOW, -ERANGE), and
 * -SYM_E_BADPROFILE for a malformed input, which the readers describe in
 * their @msg buffer.  Something asked for that does not exist (a frame or
 * an index without a symbolized location) is -SYM_E_NOTFOUND, always;
 * -ENOENT only ever comes from the system, for a path
 * (sym_prof_read_file()).  sym_strerror() of libsym names any code.
 *
 * NULL.  Every function checks its pointer parameters, with sym.h's rule:
 *  - a function returning int returns -EINVAL when its profile or a
 *    parameter not marked "may be NULL" is NULL.  An object out-parameter
 *    (struct sym_prof **out) that is not NULL itself is set to NULL on
 *    every failure, so cleanup code can always call sym_prof_free(); the
 *    readers also write what was NULL into their @msg.  A buffer with a
 *    length may be NULL when the length is 0 (an empty input);
 *  - a getter returning a pointer returns NULL for a NULL profile, one
 *    returning a count, an id or a yes/no returns 0;
 *  - the out-parameters of a lookup (sym_prof_process(),
 *    sym_prof_location(), sym_prof_location_at()) are filled with zeros
 *    and NULLs whenever it finds nothing, a NULL profile included, and
 *    each of them may be NULL;
 *  - sym_prof_free(NULL) does nothing.
 * Each function's @return says which of these applies.
 *
 * ABI.  libsymprofile is released with libsym and shares its version
 * (SYM_VERSION in sym.h; sym_version() of libsym tells the running one
 * when both come from one release): its SONAME is
 * libsymprofile.so.SYM_VERSION_MAJOR, raised together with libsym.so's.
 * Within one SONAME a program built against an older libsymprofile runs
 * against a newer one: functions are only added, each in the version node
 * of libsymprofile.map named for the release that added it, and never
 * removed or changed in signature or meaning; anything else raises
 * SYM_VERSION_MAJOR.  The first node is LIBSYMPROFILE_1.0, every function
 * of 1.0.0, the release in which the profile model left libsym.so.0 (so
 * both libraries' major became 1, and libsym.map restarted at
 * LIBSYM_1.0); a function added by 1.1 goes into LIBSYMPROFILE_1.1.
 * LIBSYMPROFILE_1.3 is 1.3.0's: the typed values (sym_prof_set_value_types()
 * and the five after it); LIBSYMPROFILE_1.4 adds sym_prof_set_map_flags(),
 * LIBSYMPROFILE_1.6 sym_prof_set_release() and sym_prof_release().
 * Structs and constants:
 *  - struct sym_prof is opaque, allocated by the library, and may change
 *    freely;
 *  - every other struct here (struct sym_prof_header, sym_prof_map,
 *    sym_prof_frame, sym_prof_stack, sym_prof_source, sym_prof_line) is
 *    fixed: callers declare them, pass arrays of frames and lines, and
 *    read the profile's own through borrowed pointers, so their size and
 *    layout are part of the ABI.  A new field means a new struct and new
 *    functions;
 *  - so are the constants callers size arrays with: SYM_PROF_NFLAGS (the
 *    header's flagged[]), SYM_PROF_LOC_NSTATUS, SYM_PROF_MAX_FRAMES and
 *    SYM_PROF_MAX_LINES.  Hence enum sym_prof_stack_flags and enum
 *    sym_prof_loc_status gain no value within a SONAME (a file's stack
 *    flag this reader does not name is SYM_PROF_UNKNOWN_FLAG);
 *  - the other enums (map kinds; map, frame and line flags) may gain
 *    values.  The adders refuse with -EINVAL a value this library does
 *    not name, so an option it cannot honour is never dropped unseen;
 *    a caller skips a map kind it does not know and ignores flag bits it
 *    does not know;
 *  - libsymprofile takes no options struct.  One added later follows
 *    sym.h's rules (a first field size_t sz, declared with SYM_OPTS(), a
 *    non-zero byte past the fields this library knows is -EINVAL).
 */
#ifndef SYM_PROF_H
#define SYM_PROF_H

#include <stddef.h>
#include <stdint.h>

#include "sym.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An in-memory profile.  Opaque. */
struct sym_prof;

/** Kinds of struct sym_prof_map. */
enum sym_prof_map_kind {
	SYM_PROF_MAP_FILE = 0,	/**< a mapped ELF file */
	SYM_PROF_MAP_VDSO,	/**< the vDSO, named by its in-memory build ID */
	SYM_PROF_MAP_KERNEL,	/**< the kernel: addresses are runtime ones */
	SYM_PROF_MAP_ANON,	/**< anonymous executable memory (JIT) */
};

/** Flags of struct sym_prof_map. */
enum sym_prof_map_flags {
	/** @vaddr was not known (a pprof mapping has no field for it) and
	 *  was set to @pgoff, which is right when the PT_LOAD segment has
	 *  p_vaddr == p_offset (usual for PIE and shared objects).  The
	 *  raw format carries it as a `mapflags ID vaddr-guessed` line. */
	SYM_PROF_MAP_VADDR_GUESSED = (1 << 0),
	/** An anonymous map whose frames were named from the process's
	 *  perf map (/tmp/perf-PID.map, written by a JIT) when the
	 *  recording ended: their locations are `ok`, with names from a
	 *  symbol table and no file.  `mapflags ID perf-map`. */
	SYM_PROF_MAP_PERFMAP = (1 << 1),
	/** The process had a perf map that was not trusted: last written
	 *  before the process started (another process's, whose PID it
	 *  reuses) or owned by another user; its names were not used.
	 *  `mapflags ID perf-map-stale` (docs/record.md, "JIT frames"). */
	SYM_PROF_MAP_PERFMAP_STALE = (1 << 2),
	/** Which source symbolized the map's frames (`sym symbolize`; at
	 *  most one; SYM_PROF_MAP_PERFMAP says a JIT map's): its DWARF,
	 *  `mapflags ID dwarf`; Go's function table (.gopclntab) of a Go
	 *  binary without DWARF, `gopclntab`; its symbol tables only,
	 *  `symtab`; a kallsyms snapshot or /proc/kallsyms (the kernel),
	 *  `kallsyms`.  None of them: nothing answered. */
	SYM_PROF_MAP_SRC_DWARF = (1 << 3),
	SYM_PROF_MAP_SRC_GOPCLNTAB = (1 << 4),
	SYM_PROF_MAP_SRC_SYMTAB = (1 << 5),
	SYM_PROF_MAP_SRC_KALLSYMS = (1 << 6),
};

/** The SYM_PROF_MAP_SRC_* flags. */
#define SYM_PROF_MAP_SRC_ALL                                                \
	(SYM_PROF_MAP_SRC_DWARF | SYM_PROF_MAP_SRC_GOPCLNTAB |               \
	 SYM_PROF_MAP_SRC_SYMTAB | SYM_PROF_MAP_SRC_KALLSYMS)

/** Every flag of enum sym_prof_map_flags. */
#define SYM_PROF_MAP_FLAGS_ALL                                              \
	(SYM_PROF_MAP_VADDR_GUESSED | SYM_PROF_MAP_PERFMAP |                 \
	 SYM_PROF_MAP_PERFMAP_STALE | SYM_PROF_MAP_SRC_ALL)

/** One executable mapping of one process. */
struct sym_prof_map {
	/** Index in the profile's map table; set by sym_prof_add_map(). */
	uint32_t id;
	/** enum sym_prof_map_kind. */
	uint32_t kind;
	/** Host PID; -1 for the kernel. */
	int32_t pid;
	/** enum sym_prof_map_flags. */
	uint32_t flags;
	/** Runtime range [start, end). */
	uint64_t start, end;
	/** File offset mapped at @start. */
	uint64_t pgoff;
	/** ELF virtual address of @start: vaddr(pc) = pc - start + vaddr. */
	uint64_t vaddr;
	/** Lowercase hex GNU build ID, or NULL when unknown. */
	const char *build_id;
	/** Path as the process saw it, "[vdso]", "[kernel.kallsyms]", or
	 *  NULL. */
	const char *path;
};

/** Frame has no mapping: sym_prof_frame.addr is a runtime address. */
#define SYM_PROF_NOMAP UINT32_MAX

/** Flags of struct sym_prof_frame. */
enum sym_prof_frame_flags {
	/** @addr is a return address: look up addr - 1. */
	SYM_PROF_FRAME_RETURN = (1 << 0),
};

/** One unsymbolized frame. */
struct sym_prof_frame {
	/** ELF virtual address in map @map (runtime address for the kernel
	 *  and for SYM_PROF_NOMAP). */
	uint64_t addr;
	/** Map id, or SYM_PROF_NOMAP. */
	uint32_t map;
	/** enum sym_prof_frame_flags. */
	uint32_t flags;
};

/** Problems of a stack (docs/raw-format.md, "Stacks"). */
enum sym_prof_stack_flags {
	SYM_PROF_TRUNCATED = (1 << 0),	/**< hit the depth limit */
	SYM_PROF_BADRETURN = (1 << 1),	/**< return address outside mappings */
	SYM_PROF_LEAF = (1 << 2),	/**< leaf's caller may be missing */
	SYM_PROF_UNWIND = (1 << 3),	/**< CFI unwind stopped early */
	SYM_PROF_KERNEL = (1 << 4),	/**< only kernel frames captured */
	/** a flag this reader does not know (written back as "unknown") */
	SYM_PROF_UNKNOWN_FLAG = (1 << 31),
};

/** Number of named stack flags (bits 0 to SYM_PROF_NFLAGS - 1). */
#define SYM_PROF_NFLAGS 5

/** Most frames in one stack. */
#define SYM_PROF_MAX_FRAMES 1024

/** One unique stack. */
struct sym_prof_stack {
	/** Samples, and the sum of their weights (header's weight_unit). */
	uint64_t count, weight;
	/** Host PID and TID; 0 when unknown. */
	int32_t pid, tid;
	/** enum sym_prof_stack_flags. */
	uint32_t flags;
	/** Number of @frames. */
	uint32_t nframes;
	/** Leaf (innermost) first; owned by the profile. */
	const struct sym_prof_frame *frames;
};

/** A profile's header (docs/raw-format.md, "Header lines").  Strings are
 *  NULL when unknown. */
struct sym_prof_header {
	const char *host;
	/** Writer name and version, e.g. "sym-record", "1.0.0". */
	const char *tool, *tool_version;
	/** Wall-clock start, nanoseconds since the Unix epoch; 0 when
	 *  unknown. */
	int64_t start_ns;
	/** Wall-clock length of the recording. */
	uint64_t duration_ns;
	/** "cpu-clock", "task-clock", "wall". */
	const char *event;
	/** "fp", "dwarf", "thread-timer", "process-timer", "wall". */
	const char *mode;
	/** Requested Hz; 0 for a fixed period. */
	uint64_t frequency;
	/** Nominal weight of one sample, in @weight_unit. */
	uint64_t period;
	/** "ns" or "samples". */
	const char *weight_unit;
	/** Samples written, lost by the kernel, throttle events, dropped by
	 *  the writer. */
	uint64_t samples, lost, throttled, dropped;
	/** Samples whose stack carries flag bit i. */
	uint64_t flagged[SYM_PROF_NFLAGS];
	/** Inode of the recorder's PID namespace; 0 when unknown. */
	uint64_t pidns;
};

/**
 * sym_prof_new() - an empty profile.
 * @param[out] out  caller owns: sym_prof_free(); NULL on error
 * @return 0, -ENOMEM, -EINVAL (@out NULL)
 */
SYM_API int sym_prof_new(struct sym_prof **out);

/**
 * sym_prof_free() - free a profile and everything it owns.
 * @param p  may be NULL
 */
SYM_API void sym_prof_free(struct sym_prof *p);

/**
 * sym_prof_set_header() - replace the header; strings are copied ("" is
 * stored as NULL: the formats cannot tell them apart).
 * @param h  copied; not NULL
 * @return 0, -ENOMEM (the old header is kept), -EINVAL (@p or @h NULL)
 */
SYM_API int sym_prof_set_header(struct sym_prof *p,
				const struct sym_prof_header *h);

/**
 * sym_prof_header() - the header.
 * @return borrowed, valid until the next call that changes @p; NULL when
 *         @p is NULL
 */
SYM_API const struct sym_prof_header *sym_prof_header(const struct sym_prof *p);

/**
 * sym_prof_set_release() - set the release of the kernel the profile was
 * recorded on (`uname -r`: the raw format's `release` header line), by
 * which kernel debug files are looked up by name (docs/record.md,
 * "Which answers a kernel frame").  Not a field of struct
 * sym_prof_header, whose layout is fixed (see "ABI" above).
 * @param release  copied; NULL or "" for unknown
 * @return 0, -ENOMEM (the old one is kept), -EINVAL (@p NULL)
 * (1.6)
 */
SYM_API int sym_prof_set_release(struct sym_prof *p, const char *release);

/**
 * sym_prof_release() - the kernel release set or read.
 * @return borrowed, valid until the next sym_prof_set_release() or
 *         sym_prof_free(); NULL when unknown or @p is NULL
 * (1.6)
 */
SYM_API const char *sym_prof_release(const struct sym_prof *p);

/**
 * sym_prof_add_map() - append a mapping; strings are copied ("" is stored
 * as NULL).
 * @param m        copied; not NULL; m->id is ignored
 * @param[out] id  the new map's id (may be NULL); untouched on failure
 * @return 0, -ENOMEM, -E2BIG (2^20 maps already), -EINVAL (@p or @m
 *         NULL, start > end, an unknown kind or flag, pid below -1, or a
 *         build ID that is not 2 to 128 lowercase hex digits of an even
 *         count: normalize it or pass NULL)
 */
SYM_API int sym_prof_add_map(struct sym_prof *p, const struct sym_prof_map *m,
			     uint32_t *id);

/**
 * sym_prof_add_process() - record a process's PID namespace and name.
 * @param pidns  namespace inode, 0 when unknown
 * @param nspid  PID inside that namespace, 0 when unknown
 * @param comm   may be NULL; copied ("" is stored as NULL)
 * @return 0, -ENOMEM, -EINVAL (@p NULL, @pid or @nspid negative), -E2BIG
 *         (2^22 processes already); a second call for one @pid replaces
 *         the first
 */
SYM_API int sym_prof_add_process(struct sym_prof *p, int32_t pid,
				 uint64_t pidns, int32_t nspid,
				 const char *comm);

/**
 * sym_prof_add_thread() - record a thread's name and process.
 * @param comm  may be NULL; copied ("" is stored as NULL)
 * @return 0, -ENOMEM, -EINVAL (@p NULL, @pid or @tid negative), -E2BIG
 *         (2^22 threads already); a second call for one @tid replaces
 *         the first
 */
SYM_API int sym_prof_add_thread(struct sym_prof *p, int32_t pid, int32_t tid,
				const char *comm);

/**
 * sym_prof_add_stack() - add samples of a stack; an identical stack (pid,
 * tid, flags, frames, and no source: see sym_prof_add_stack_from())
 * already present gets @s's count and weight added, so the profile holds
 * each unique stack once.  The frames are copied.
 * Header counts (samples, flagged) are not touched: the writer of the
 * profile keeps them.  O(1) amortized; adding a stack already present
 * allocates nothing.
 * @param s  not NULL; s->frames may be NULL when s->nframes is 0
 * @return 0, -ENOMEM, -E2BIG (more than SYM_PROF_MAX_FRAMES frames, or
 *         2^24 unique stacks already), -EINVAL (@p or @s NULL, frames
 *         NULL with nframes > 0, a frame names a map that
 *         does not exist, pid or tid negative, or a flag bit that enum
 *         sym_prof_stack_flags or enum sym_prof_frame_flags does not
 *         name), -EOVERFLOW (the summed count or weight would pass
 *         2^64 - 1; the profile is unchanged)
 */
SYM_API int sym_prof_add_stack(struct sym_prof *p,
			       const struct sym_prof_stack *s);

/**
 * sym_prof_nmaps() - number of mappings; ids are 0 to n - 1.
 * @return the number; 0 when @p is NULL
 */
SYM_API size_t sym_prof_nmaps(const struct sym_prof *p);

/**
 * sym_prof_map() - mapping @id.
 * @return borrowed until @p changes or is freed; NULL when out of range
 *         or @p is NULL
 */
SYM_API const struct sym_prof_map *sym_prof_map(const struct sym_prof *p,
						uint32_t id);

/**
 * sym_prof_nstacks() - number of unique stacks.
 * @return the number; 0 when @p is NULL
 */
SYM_API size_t sym_prof_nstacks(const struct sym_prof *p);

/**
 * sym_prof_stack() - stack @i, in the order they were first added.
 * @return borrowed until @p changes or is freed; NULL when out of range
 *         or @p is NULL
 */
SYM_API const struct sym_prof_stack *sym_prof_stack(const struct sym_prof *p,
						    size_t i);

/**
 * sym_prof_process() - what sym_prof_add_process() recorded for @pid.
 * @param[out] pidns, nspid  may be NULL
 * @return the comm (borrowed until @p changes or is freed; NULL when the
 *         process has none), or NULL with *pidns and *nspid 0 when @pid
 *         is unknown or @p is NULL
 */
SYM_API const char *sym_prof_process(const struct sym_prof *p, int32_t pid,
				     uint64_t *pidns, int32_t *nspid);

/**
 * sym_prof_thread() - the comm of thread @tid.
 * @return borrowed until @p changes or is freed, or NULL when unknown
 *         (or it has none) or @p is NULL
 */
SYM_API const char *sym_prof_thread(const struct sym_prof *p, int32_t tid);

/*
 * Sources of merged profiles (docs/raw-format.md, "Sources").
 *
 * `sym merge` keeps a row per recording it merged (host, time, period,
 * samples), and, with --spread, which recording each stack came from, so
 * that a report can weigh hosts and show a function's share on each one.
 * A stack's source is part of its identity: the same frames from two
 * sources are two stacks.  Profiles that are not merges have no sources,
 * and their stacks have source 0.  pprof has no place for sources: the
 * pprof writer leaves them out (stacks that differ only by source are
 * then summed by a reader).
 */

/** One recording that a merged profile was made of. */
struct sym_prof_source {
	/** 1 to sym_prof_nsources(); set by sym_prof_add_source(). */
	uint32_t id;
	/** Host name of the recording; NULL when unknown. */
	const char *host;
	/** Wall-clock start, ns since the Unix epoch; 0 when unknown. */
	int64_t start_ns;
	/** Wall-clock length of the recording; 0 when unknown. */
	uint64_t duration_ns;
	/** The recording's nominal weight of one sample, in @weight_unit. */
	uint64_t period;
	/** The recording's weight unit ("ns"); NULL when unknown. */
	const char *weight_unit;
	/** Samples the recording wrote, and the kernel lost. */
	uint64_t samples, lost;
};

/**
 * sym_prof_add_source() - append a source; strings are copied ("" is
 * stored as NULL).
 * @param s       copied; not NULL; s->id is ignored
 * @param[out] id the new source's id, 1 to n (may be NULL); untouched on
 *                failure
 * @return 0, -ENOMEM, -E2BIG (2^20 sources already), -EINVAL (@p or @s
 *         NULL)
 */
SYM_API int sym_prof_add_source(struct sym_prof *p,
				const struct sym_prof_source *s, uint32_t *id);

/**
 * sym_prof_nsources() - number of sources; ids are 1 to n.
 * @return the number; 0 when @p is NULL
 */
SYM_API size_t sym_prof_nsources(const struct sym_prof *p);

/**
 * sym_prof_source() - source @id.
 * @return borrowed until @p changes or is freed; NULL when @id is 0 or
 *         larger than sym_prof_nsources(), or @p is NULL
 */
SYM_API const struct sym_prof_source *sym_prof_source(const struct sym_prof *p,
						      uint32_t id);

/**
 * sym_prof_add_stack_from() - sym_prof_add_stack() for the samples of
 * one source: the stack is summed only into an identical stack of the
 * same @source.  sym_prof_add_stack(p, s) is sym_prof_add_stack_from(p,
 * s, 0).
 * @param source  0 (none), or an id from sym_prof_add_source()
 * @return as sym_prof_add_stack() (-EINVAL for a NULL @p or @s);
 *         -EINVAL also for a @source that does not exist
 */
SYM_API int sym_prof_add_stack_from(struct sym_prof *p,
				    const struct sym_prof_stack *s,
				    uint32_t source);

/**
 * sym_prof_stack_source() - the source of stack @i.
 * @return its source id, 0 when it has none, @i is out of range or @p
 *         is NULL
 */
SYM_API uint32_t sym_prof_stack_source(const struct sym_prof *p, size_t i);

/*
 * Typed values (docs/raw-format.md, "Value types").
 *
 * Besides its count and weight, a stack may carry values of named types,
 * each with its unit: an allocation profile (libsymprof's alloc mode) has
 * alloc_objects (count), alloc_space (bytes), inuse_objects (count) and
 * inuse_space (bytes), pprof's sample types.  A profile declares its
 * types once, before its first stack, and every stack then has one value
 * per type (0 for a stack added without values).  Identical stacks sum
 * their values as they sum their counts.  A profile with types is written
 * as `sym-raw 2` (`value-type` lines, a VALUES field in every stack
 * line); one without them stays `sym-raw 1`.
 */

/** Most value types in one profile. */
#define SYM_PROF_MAX_VALUES 16

/**
 * sym_prof_set_value_types() - declare the profile's value types, in
 * order (value i of a stack is of type i).  Names and units are copied.
 * @param names  @n type names, e.g. "inuse_space": 1 to 64 bytes of
 *               [A-Za-z0-9_.-], pairwise distinct; not NULL unless @n is 0
 * @param units  @n units, e.g. "bytes", "count": the same syntax
 * @return 0, -ENOMEM (the profile is unchanged), -E2BIG (@n over
 *         SYM_PROF_MAX_VALUES), -EBUSY (the profile already has stacks
 *         or value types), -EINVAL (@p NULL, a NULL array with @n > 0,
 *         a name or unit that breaks the syntax, a repeated name)
 */
SYM_API int sym_prof_set_value_types(struct sym_prof *p,
				     const char *const *names,
				     const char *const *units, uint32_t n);

/**
 * sym_prof_nvalue_types() - number of value types.
 * @return 0 to SYM_PROF_MAX_VALUES; 0 when @p is NULL
 */
SYM_API uint32_t sym_prof_nvalue_types(const struct sym_prof *p);

/**
 * sym_prof_value_type() - the name and unit of value type @i.
 * @param[out] unit  borrowed like the name; may be NULL; set to NULL when
 *                   @i is out of range
 * @return the name, borrowed until sym_prof_free(p); NULL when @i is out
 *         of range or @p is NULL
 */
SYM_API const char *sym_prof_value_type(const struct sym_prof *p, uint32_t i,
					const char **unit);

/**
 * sym_prof_value_index() - the index of the value type named @name.
 * @return 0 to n - 1, -SYM_E_NOTFOUND (no such type), -EINVAL (@p or
 *         @name NULL)
 */
SYM_API int sym_prof_value_index(const struct sym_prof *p, const char *name);

/**
 * sym_prof_add_stack_values() - sym_prof_add_stack_from() with one value
 * per value type; an identical stack present gets them added.
 * @param values  sym_prof_nvalue_types(p) values, copied; may be NULL
 *                (zeros)
 * @return as sym_prof_add_stack_from(); -EOVERFLOW also when a summed
 *         value would pass 2^64 - 1 (the profile is unchanged)
 */
SYM_API int sym_prof_add_stack_values(struct sym_prof *p,
				      const struct sym_prof_stack *s,
				      uint32_t source, const uint64_t *values);

/**
 * sym_prof_stack_values() - the values of stack @i.
 * @return sym_prof_nvalue_types(p) values, borrowed until @p changes or
 *         is freed; NULL when the profile has no value types, @i is out
 *         of range or @p is NULL
 */
SYM_API const uint64_t *sym_prof_stack_values(const struct sym_prof *p,
					      size_t i);

/*
 * Symbolized profiles (docs/raw-format.md, "The symbolized form").
 *
 * A profile may carry the symbolization of its frames: for each unique
 * frame (map, address, return flag) a status and, when it resolved, the
 * chain of functions at that address, innermost first.  `sym symbolize`
 * fills it; the raw writer writes it as `symbolized 1`, `fn`, `src` and
 * `loc` lines, the pprof writer as Function and Line entries, and both
 * readers read it back.  Frames are keyed exactly as in stacks: a return
 * address and an exact PC at the same address are two locations.
 */

/** Status of a symbolized location. */
enum sym_prof_loc_status {
	/** Frames found (DWARF or symbol table). */
	SYM_PROF_LOC_OK = 0,
	/** The module is known but nothing covers the address. */
	SYM_PROF_LOC_NOSYMBOL,
	/** No debug info or symbol table for the build ID anywhere. */
	SYM_PROF_LOC_MISSING,
	/** The mapping has no build ID. */
	SYM_PROF_LOC_NOBUILDID,
	/** The frame is outside any mapping (SYM_PROF_NOMAP) or in an
	 *  anonymous (JIT) mapping. */
	SYM_PROF_LOC_UNMAPPED,
	/** The lookup failed (server error, conversion failed). */
	SYM_PROF_LOC_ERROR,
};

/** Number of enum sym_prof_loc_status values. */
#define SYM_PROF_LOC_NSTATUS 6

/** Flags of struct sym_prof_line. */
enum sym_prof_line_flags {
	/** An inlined call, inside the next line's function. */
	SYM_PROF_LINE_INLINED = (1 << 0),
	/** The name comes from the symbol table: no DWARF. */
	SYM_PROF_LINE_SYMTAB = (1 << 1),
};

/** Most lines (inline chain) of one location; deeper chains are cut. */
#define SYM_PROF_MAX_LINES 128

/** One function of a location's inline chain. */
struct sym_prof_line {
	/** Function name, demangled when mangled; NULL when unknown. */
	const char *function;
	/** Source file; NULL when unknown. */
	const char *file;
	/** Line and column; 0 when unknown. */
	uint32_t line, column;
	/** enum sym_prof_line_flags. */
	uint32_t flags;
};

/**
 * sym_prof_set_location() - attach the symbolization of one frame.
 * @param f       the frame: its map (or SYM_PROF_NOMAP), address and
 *                SYM_PROF_FRAME_RETURN bit are the key; it need not occur
 *                in a stack; not NULL
 * @param status  enum sym_prof_loc_status
 * @param lines   innermost first (lines[n - 1] is the real, non-inlined
 *                function); copied, strings interned (each distinct
 *                string is kept once; "" is stored as NULL)
 * @param n       at least 1 when @status is SYM_PROF_LOC_OK, else 0
 *                (then @lines may be NULL)
 * @return 0, -ENOMEM, -EINVAL (@p or @f NULL, @lines NULL with @n > 0, a
 *         map that does not exist, an unknown frame or line flag or
 *         status, a line both inlined and from the symbol table, lines
 *         with a status other than OK, no line with OK), -E2BIG (more
 *         than SYM_PROF_MAX_LINES lines, or 2^26 locations already)
 * An earlier answer for the same frame is replaced (its location keeps
 * its place in sym_prof_location_at()'s order).  On success the profile
 * is symbolized (sym_prof_symbolized()); on failure it is unchanged.
 */
SYM_API int sym_prof_set_location(struct sym_prof *p,
				  const struct sym_prof_frame *f,
				  uint32_t status,
				  const struct sym_prof_line *lines, size_t n);

/**
 * sym_prof_location() - the symbolization of frame @f.
 * @param[out] status  enum sym_prof_loc_status
 * @param[out] lines   innermost first; borrowed, valid until @p changes
 *                     or is freed (NULL when *n is 0)
 * @param[out] n       number of @lines
 * @return 0, -SYM_E_NOTFOUND when @f has none, -EINVAL (@p or @f NULL);
 *         on either failure the outputs are 0 / NULL
 * O(1).  Any of the out-parameters may be NULL.
 */
SYM_API int sym_prof_location(const struct sym_prof *p,
			      const struct sym_prof_frame *f,
			      uint32_t *status,
			      const struct sym_prof_line **lines, size_t *n);

/**
 * sym_prof_set_map_flags() - replace the flags of map @id (what a
 * recorder learns of a map only at the end, such as where the names of
 * its frames came from).
 * @param flags  enum sym_prof_map_flags
 * @return 0, or -EINVAL for an unknown map or flag
 * (1.4)
 */
SYM_API int sym_prof_set_map_flags(struct sym_prof *p, uint32_t id,
				   uint32_t flags);

/**
 * sym_prof_symbolized() - does @p carry symbolization (read from a
 * symbolized file, or sym_prof_set_location() called)?
 * @return 1 or 0 (also for a NULL @p)
 */
SYM_API int sym_prof_symbolized(const struct sym_prof *p);

/**
 * sym_prof_nlocations() - number of symbolized locations.
 * @return the number; 0 when @p is NULL
 */
SYM_API size_t sym_prof_nlocations(const struct sym_prof *p);

/**
 * sym_prof_location_at() - location @i, in the order they were first
 * set (a file's order of `loc` lines).
 * @param[out] f  its frame; may be NULL
 * @param status, lines, n  as sym_prof_location()
 * @return 0, -SYM_E_NOTFOUND when @i is out of range, -EINVAL (@p NULL);
 *         on either failure *f and the outputs are zeros / NULL
 */
SYM_API int sym_prof_location_at(const struct sym_prof *p, size_t i,
				 struct sym_prof_frame *f, uint32_t *status,
				 const struct sym_prof_line **lines,
				 size_t *n);

/**
 * sym_prof_write() - write @p in the raw stack format, every header line
 * included, in one write(2) per 64 KiB.  The output depends on @p only:
 * header, processes and threads in the order they were first added, maps,
 * sources, the symbolization, stacks in their order (with a `from` line
 * where the source changes), "end".
 * @param fd  written with write(2), not closed
 * @return 0, -errno of write(2), -ENOMEM, -EINVAL (@p NULL, or the header
 *         has no weight_unit: the file could not be read back)
 */
SYM_API int sym_prof_write(const struct sym_prof *p, int fd);

/**
 * sym_prof_read() - parse the raw stack format, strictly: the first
 * problem fails the whole file (docs/raw-format.md, "libsym").  Map ids
 * are renumbered 0 to n - 1 in file order, source ids 1 to n; identical
 * stacks of one source are summed.
 * @param buf, len  the whole file; @buf may be NULL when @len is 0
 * @param[out] out  caller owns: sym_prof_free(); NULL on error
 * @param msg, msglen  filled on error with "line N: what is wrong"
 *                     (emptied on success); may be NULL
 * @return 0, -SYM_E_BADPROFILE (malformed: see @msg), -ENOMEM, -E2BIG (a
 *         limit of docs/raw-format.md exceeded: a line over 1 MiB, over
 *         SYM_PROF_MAX_FRAMES frames, 2^20 maps or sources, 2^24 unique
 *         stacks, 2^22 processes or threads), -EINVAL (@out NULL, or @buf
 *         NULL with @len > 0; @msg says which); @msg is set for each,
 *         *out is NULL
 */
SYM_API int sym_prof_read(const void *buf, size_t len, struct sym_prof **out,
			  char *msg, size_t msglen);

/**
 * sym_prof_write_pprof() - write @p as a gzipped pprof profile
 * (profile.proto): locations hold runtime addresses (vaddr - map.vaddr +
 * map.start), mappings their start, limit, file offset, path and build
 * ID.  When @p is symbolized (sym_prof_symbolized()), each ok location
 * gets its lines, innermost first, with one Function per (function,
 * file), and its mapping the has_* flags; other statuses go into
 * comments.  Sample values are [samples/count,
 * cpu/nanoseconds] (or [samples/count] when weight_unit is "samples");
 * pid, tid and the stack flags go into sample labels.
 * What pprof has no field for (map.vaddr, kind and pid, which frames are
 * exact PCs, the header, processes and threads) goes into "sym-*"
 * Profile.comment strings, so that sym_prof_read_pprof() gives back an
 * equal profile (docs/pprof.md), except for sources: they are left out,
 * and stacks that differ only by source become samples that a reader
 * sums.
 * @param fd  written with write(2), not closed
 * @return 0, -errno, -ENOMEM, -ERANGE (a count or weight over INT64_MAX),
 *         -EINVAL (@p NULL)
 */
SYM_API int sym_prof_write_pprof(const struct sym_prof *p, int fd);

/**
 * sym_prof_read_pprof() - parse a pprof profile, gzipped or not.
 * Locations become frames (the first of several lines' address), with
 * every frame but the leaf marked SYM_PROF_FRAME_RETURN; mappings get
 * SYM_PROF_MAP_VADDR_GUESSED unless the file came from
 * sym_prof_write_pprof().  Locations with lines become ok locations
 * (sym_prof_set_location()), and a profile with any is symbolized.
 * Every index and id is checked; stacks deeper than SYM_PROF_MAX_FRAMES
 * keep their innermost frames and get SYM_PROF_TRUNCATED.  Limits: 1 GiB
 * of protobuf (after gunzip), 2 GiB of decoded messages.
 * @param buf, len  the whole file; @buf may be NULL when @len is 0
 * @param[out] out  caller owns: sym_prof_free(); NULL on error
 * @param msg, msglen  filled on error with what is wrong; may be NULL
 * @return 0, -SYM_E_BADPROFILE (see @msg), -ENOMEM, -E2BIG, -EINVAL
 *         (@out NULL, or @buf NULL with @len > 0; @msg says which)
 */
SYM_API int sym_prof_read_pprof(const void *buf, size_t len,
				struct sym_prof **out, char *msg,
				size_t msglen);

/**
 * sym_prof_read_file() - read a raw or pprof file, telling them apart by
 * their first bytes ("sym-raw " for the raw format, a gzipped raw file
 * too; anything else is read as pprof).
 * @param path  the file; at most 1 GiB (-E2BIG)
 * @param[out] out  caller owns: sym_prof_free(); NULL on error
 * @param msg, msglen  as sym_prof_read(); may be NULL
 * @return as sym_prof_read(), -errno when @path cannot be read (-ENOENT:
 *         no such file), -EINVAL (@path or @out NULL; @msg says which)
 */
SYM_API int sym_prof_read_file(const char *path, struct sym_prof **out,
			       char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif /* SYM_PROF_H */
