/*
 * jitdump.h - the reader of perf's jitdump files, jit-PID.dump, in which
 * JIT runtimes (V8 with --perf-prof, the JVM's perf agent, Wasmtime,
 * Python 3.12's -X perf_jit) log the code they generate, for
 * `perf inject --jit` (libsym/jitdump.c; not installed).  Used by the
 * recorder (tools/agent/jitmap.c) next to perfmap.h: libc only, no
 * allocation, no state.
 *
 * The format (tools/perf/util/jitdump.h in Linux; "jitdump-specification"
 * in its docs): a header, then records, each a 16-byte prefix
 * (id, total_size, timestamp) and a body.  A runtime writes the file as
 * it runs; the file is its own (the runtime mmap()s it PROT_EXEC so that
 * perf sees the mapping and finds the path, and so do we).
 *
 *   header: magic "JiTD" (0x4A695444 in the writer's byte order; read as
 *           0x4454694A, the file is of the other order and every field is
 *           swapped), version (1), total_size (of the header, at least
 *           40 bytes), elf_mach, pad, pid, timestamp, flags.
 *   JIT_CODE_LOAD (0): pid, tid, vma, code_addr, code_size, code_index,
 *           the function's name NUL-terminated, then the code's bytes.
 *   JIT_CODE_MOVE (1): pid, tid, vma, old_code_addr, new_code_addr,
 *           code_size, code_index.
 *   JIT_CODE_DEBUG_INFO (2), JIT_CODE_CLOSE (3), JIT_CODE_UNWINDING_INFO
 *           (4) and ids this reader does not know are walked over whole.
 *
 * Debug info is not read: producers do not agree on its addresses (V8
 * writes each line's address plus 0x40, the ELF header that perf inject
 * puts in front of the code; seen in node 20's files), so the function
 * name of the load is what a frame gets, as from a perf map.
 *
 * Rules, stricter than perf's:
 *   - a record's total_size is at least its prefix and fixed fields, and
 *     fits in what is left of the file; a record that does not fit is
 *     what the writer was still writing (or a broken file): the walk
 *     ends there, saying so;
 *   - a load's name is 1 to SYMI_JITDUMP_NAME_MAX bytes, NUL-terminated
 *     inside its record, and the record holds code_size bytes after it
 *     (the code; perf inject needs them, we only check they are there);
 *   - code_size 0, over SYMI_PERFMAP_SIZE_MAX, or a range past 2^64 is
 *     absurd: the record is skipped, and the walk goes on.
 */
#ifndef SYM_JITDUMP_H
#define SYM_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYMI_JITDUMP_MAGIC 0x4A695444u
#define SYMI_JITDUMP_HDR_MIN 40u
/* Longest name taken (V8's names, with their script's path, are well
 * under it). */
#define SYMI_JITDUMP_NAME_MAX 4096u

enum symi_jitdump_id {
	SYMI_JITDUMP_LOAD = 0,
	SYMI_JITDUMP_MOVE = 1,
	SYMI_JITDUMP_DEBUG_INFO = 2,
	SYMI_JITDUMP_CLOSE = 3,
	SYMI_JITDUMP_UNWINDING_INFO = 4,
};

struct symi_jitdump_hdr {
	uint32_t version, elf_mach, pid;
	uint64_t timestamp, flags;
	bool swapped;		/* the file is of the other byte order */
};

/* One record.  For a load, @addr is code_addr and @name/@namelen borrow
 * the input (not NUL-counted; name[namelen] is the NUL); for a move,
 * @addr is the new address and @old_addr the old one, and no name. */
struct symi_jitdump_rec {
	uint32_t id;
	uint32_t pid, tid;
	uint64_t timestamp;
	uint64_t addr, old_addr, size, code_index;
	const char *name;
	size_t namelen;
	size_t off;		/* where the record starts in the input */
};

/*
 * symi_jitdump_header() - read the header of jitdump bytes @buf (@len).
 * @param[out] off  where the first record starts
 * @return 0, or -1 with *why (a static string): not a jitdump, a
 *         version other than 1, a header cut short
 */
int symi_jitdump_header(const void *buf, size_t len,
			struct symi_jitdump_hdr *h, size_t *off,
			const char **why);

/*
 * symi_jitdump_next() - the next load or move record of @buf from *off
 * (other records are stepped over).
 * @return 1 with *r set and *off past it; 0 at the end (with *why NULL
 *         when the input ended on a record boundary, else saying why the
 *         walk stopped: a record cut short or of an impossible size);
 *         -1 for a record skipped, *why saying why, *off past it: call
 *         again for the next one
 */
int symi_jitdump_next(const void *buf, size_t len,
		      const struct symi_jitdump_hdr *h, size_t *off,
		      struct symi_jitdump_rec *r, const char **why);

#endif
