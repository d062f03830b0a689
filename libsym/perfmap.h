/*
 * perfmap.h - the reader of perf map files, /tmp/perf-PID.map, in which
 * JIT runtimes (Node.js --perf-basic-prof, the JVM's perf-map-agent,
 * Python 3.12's perf trampolines, LuaJIT) name the code they generate
 * (libsym/perfmap.c; not installed).  Shared by the recorder
 * (tools/record.c) and libsymprof, like modid.h: libc only, no
 * allocation, no state.
 *
 * The format, as perf reads it (tools/perf/util/symbol.c,
 * dso__load_perf_map()): one entry a line, "START SIZE NAME\n", START and
 * SIZE in hex with or without "0x", NAME the rest of the line (it may
 * hold spaces).  perf skips a line it cannot read and keeps the rest; so
 * does this reader, and it says which line and why.  Our rules, stricter
 * where perf's are loose:
 *
 *   - one space between the fields, START and SIZE 1 to 16 hex digits
 *     after an optional "0x" or "0X", NAME 1 or more bytes, none of them
 *     NUL or '\r' (a CRLF file names nothing right);
 *   - SIZE 0 covers nothing, and SIZE over SYMI_PERFMAP_SIZE_MAX (4 GiB)
 *     or a range past 2^64 is absurd: the line is skipped;
 *   - a line over SYMI_PERFMAP_LINE_MAX bytes is skipped whole;
 *   - a last line without its '\n' is what a writer was still writing
 *     when the file was read: it is skipped as cut short.
 *
 * Overlaps.  A runtime appends as it compiles, and it reuses the memory
 * of code it freed, so a later entry describes what lives there now.
 * perf itself puts the entries into a red-black tree by START and looks
 * an address up by descending it, so which of two overlapping entries it
 * answers with depends on the tree's shape.  We make it a rule: for
 * every address, the entry latest in the file that covers it wins
 * (symi_perfmap_flatten()).
 */
#ifndef SYM_PERFMAP_H
#define SYM_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

/* Most bytes of a line, without its '\n' (V8's names with their script
 * path are under 1 KiB; the JVM's signatures a few). */
#define SYMI_PERFMAP_LINE_MAX 4096
/* Largest entry taken (perf takes any). */
#define SYMI_PERFMAP_SIZE_MAX (1ull << 32)
/* Most entries a reader of this project keeps from one file; the rest
 * of the file is left unread, and the reader says so. */
#define SYMI_PERFMAP_MAX_ENTRIES (1u << 20)

/* One entry.  @name is borrowed from the buffer parsed: not
 * NUL-terminated, @namelen bytes. */
struct symi_perfmap_ent {
	uint64_t start, size;
	const char *name;
	size_t namelen;
	uint32_t line;		/* 1-based line number in the file */
};

/*
 * symi_perfmap_next() - the next entry of perf map bytes @buf (@len
 * bytes), from *off.  *off and *line (the last line number read, 0 at
 * first) move past the line read.
 * @return 1 with *ent set; 0 at the end of @buf; -1 for a line skipped,
 *         with *why (a static string) saying why and *line its number:
 *         call again for the next one.
 */
int symi_perfmap_next(const char *buf, size_t len, size_t *off,
		      uint32_t *line, struct symi_perfmap_ent *ent,
		      const char **why);

/* A piece of the address space that one entry owns. */
struct symi_perfmap_seg {
	uint64_t start, end;	/* [start, end) */
	uint32_t ent;		/* index into the entries */
};

/* Scratch of symi_perfmap_flatten(): an entry's start or end. */
struct symi_perfmap_pt {
	uint64_t addr;
	uint32_t ent;
	uint32_t is_end;
};

/*
 * symi_perfmap_flatten() - resolve the overlaps of @n entries @e (in file
 * order) into disjoint segments sorted by address, each owned by the
 * latest entry covering it; adjacent pieces of one entry are merged.
 * @pts: scratch of 2 * @n; @heap: scratch of @n; @out: room for 2 * @n.
 * @return the number of segments written to @out.
 * O(n log n), in place: no allocation.
 */
size_t symi_perfmap_flatten(const struct symi_perfmap_ent *e, size_t n,
			    struct symi_perfmap_pt *pts, uint32_t *heap,
			    struct symi_perfmap_seg *out);

/*
 * symi_perfmap_find() - the segment of @segs (@n, from
 * symi_perfmap_flatten()) holding @addr, or NULL.
 */
const struct symi_perfmap_seg *
symi_perfmap_find(const struct symi_perfmap_seg *segs, size_t n,
		  uint64_t addr);

/*
 * symi_proc_starttime() - field 22 of /proc/PID/stat text @stat (@len
 * bytes): when the process started, in clock ticks since boot
 * (CLOCK_BOOTTIME), against which a perf map's age is checked.
 * @return 0, or -1 when the text is not such a line
 */
int symi_proc_starttime(const char *stat, size_t len, uint64_t *ticks);

#endif
