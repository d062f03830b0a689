/*
 * unwind.h - DWARF CFI unwinding of perf user-stack samples, for
 * `sym record --call-graph dwarf` and for the leaf repair of fp mode.
 *
 * A sample taken with PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER
 * carries the user registers at the sample and a copy of the top of the
 * user stack.  The unwinder walks that copy with the call frame
 * information of each mapped file (.eh_frame first, then .debug_frame of
 * the file or of its build-ID debug file, see unwinder_set_debug_dir()),
 * and returns the runtime PCs of the frames, leaf first.
 *
 * It knows the processes' executable mappings only through
 * unwinder_map(), unwinder_unmap() and unwinder_forget(): the caller feeds
 * it /proc/PID/maps at start and the PERF_RECORD_MMAP2, EXIT and COMM
 * (exec) records as they come.  A pid argument is always the process (the
 * thread group: the pid of PERF_SAMPLE_TID), never a thread id, since
 * threads share their mappings.  Memory grows with the mappings the caller
 * keeps: forget processes that exit.
 *
 * Caveats:
 * - x86-64 processes only (PERF_SAMPLE_REGS_ABI_64).  Skip or flag
 *   samples whose regs ABI is PERF_SAMPLE_REGS_ABI_32 or _NONE.
 * - Memory is read only from the stack copy: a frame whose CFA or return
 *   address lies beyond it ends the unwind (UNWIND_STOP_READ); a saved
 *   register beyond it is only marked unknown.
 * - Code without CFI (JIT code, anonymous executable memory, hand-written
 *   assembly without directives) ends the unwind (UNWIND_STOP_NOMAP or
 *   UNWIND_STOP_NOCFI); there is no frame-pointer fallback.  Two
 *   exceptions: a program's entry code (e_entry), which is outermost by
 *   construction (UNWIND_STOP_NONE); and Go code, unwound by its
 *   function table's pcsp values as the Go runtime does (libsym's
 *   sym_gofuncs_find(); docs/record.md "Go code").
 * - A frame interrupted by a signal has an exact PC, not a return address,
 *   and so has the signal trampoline's frame above it (__restore_rt: the
 *   handler returns there without a call, and elfutils and eu-stack take
 *   it as exact): unwinder_unwind_exact() says which frames those are.
 * - Not thread-safe: one thread uses an unwinder at a time.
 *
 * Cost: a per-unwinder cache of the evaluated CFI rows, keyed by file and
 * address, makes a frame seen before cost a few tens of nanoseconds; see
 * docs/record.md "Unwinding" for measured figures.  An exact memo of whole
 * unwinds (unwinder_set_memo()) answers a sample whose stack was unwound
 * before, with the same words where the unwind read, from what it kept.
 */
#ifndef SYM_TOOLS_UNWIND_H
#define SYM_TOOLS_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct unwinder;

/** An executable mapping of a process, as /proc/PID/maps or MMAP2 says. */
struct unwind_map {
	/** Runtime address range [start, end). */
	uint64_t start, end;
	/** File offset of @start. */
	uint64_t pgoff;
	/**
	 * A path the unwinder can open, e.g. /proc/PID/root/usr/lib/x.so so
	 * that containers work.  "[vdso]" (alone or as the last component)
	 * means the vDSO: its image is read once from /proc/PID/mem.
	 * Borrowed for the call.
	 */
	const char *path;
	/** The build ID the kernel saw at mmap time, lowercase hex, or NULL
	 * when unknown.  A file on disk with another build ID is refused. */
	const char *build_id;
};

/*
 * UNWIND_REGS_MASK - the perf_event_attr.sample_regs_user to request:
 * AX BX CX DX SI DI BP SP IP (bits 0-8) and R8-R15 (bits 16-23) of
 * arch/x86/include/uapi/asm/perf_regs.h.  All general registers, because
 * any of them can appear in a CFA rule or be restored by a signal frame.
 */
#define UNWIND_REGS_MASK 0xff01ffULL
/* UNWIND_NREGS - the number of u64 values UNWIND_REGS_MASK puts in a
 * sample: regs[0..8] = AX BX CX DX SI DI BP SP IP, regs[9..16] = R8-R15. */
#define UNWIND_NREGS 17
/* Indexes into those packed registers. */
#define UNWIND_REG_BP 6
#define UNWIND_REG_SP 7
#define UNWIND_REG_IP 8

/** Why an unwind ended (*stopped_early of unwinder_unwind()). */
enum unwind_stop {
	/** Reached the outermost frame: its CFI says the return address is
	 * undefined (_start, clone's thread start), or it is 0, or the
	 * frame is in a program's entry code that has no CFI (from e_entry
	 * to the first byte with CFI, which must come within 128 bytes:
	 * ld.so's _start and _dl_start_user), which nothing calls. */
	UNWIND_STOP_NONE = 0,
	/** A PC outside every mapping given to unwinder_map(). */
	UNWIND_STOP_NOMAP,
	/** A PC in a mapped file that has no CFI for it. */
	UNWIND_STOP_NOCFI,
	/** The CFA or the return address lies outside the stack copy: the
	 * copy was too short (or the stack switched, e.g. a coroutine). */
	UNWIND_STOP_READ,
	/** CFI that cannot be evaluated here: an unsupported expression, a
	 * register whose value is lost, or a frame that made no progress. */
	UNWIND_STOP_BADCFI,
	/** @max frames were stored and there were more. */
	UNWIND_STOP_DEPTH,
};

/**
 * unwinder_new() - an unwinder with no process known.
 * @param[out] out  caller owns, free with unwinder_free()
 * @return 0, -ENOMEM
 */
int unwinder_new(struct unwinder **out);

/** unwinder_free() - close every file and forget every process; NULL is a
 * no-op. */
void unwinder_free(struct unwinder *u);

/**
 * unwinder_map() - an executable mapping appeared in process @pid.
 * It replaces whatever @pid had mapped in [start, end).  The file is
 * opened (or found among the open files by device, inode, size and mtime;
 * the vDSO by its build ID) and its ELF program headers read; CFI is read
 * lazily, at the first unwind through it.  Mapping the same range of the
 * same file again is cheap.
 * @param m  copied; m->path is opened during the call
 * @return 0; -EINVAL (bad range, NULL path); -errno of open() or of reading
 *         /proc/PID/mem; -ENOEXEC (not an x86-64 ELF file, or @pgoff in no
 *         PT_LOAD segment); -ESTALE (m->build_id differs from the file's:
 *         the file was replaced on disk); -ENOSPC (more than 65,536
 *         mappings in @pid); -ENOMEM.  On error @pid's range is unmapped,
 *         so PCs in it end unwinds with UNWIND_STOP_NOMAP.
 */
int unwinder_map(struct unwinder *u, pid_t pid, const struct unwind_map *m);

/** unwinder_unmap() - forget @pid's mappings in [start, end) (munmap); a
 * mapping partly inside is cut. */
void unwinder_unmap(struct unwinder *u, pid_t pid, uint64_t start,
		    uint64_t end);

/** unwinder_forget() - forget every mapping of @pid (exit, or exec before
 * the new image's mappings are given). */
void unwinder_forget(struct unwinder *u, pid_t pid);

/**
 * unwinder_unwind() - unwind one sample of @pid.
 * @param regs   the UNWIND_NREGS registers of PERF_SAMPLE_REGS_USER taken
 *               with UNWIND_REGS_MASK (the values after the abi word)
 * @param stack  PERF_SAMPLE_STACK_USER data: @stack_size (the record's
 *               dyn_size) bytes copied from address regs[UNWIND_REG_SP]
 * @param[out] pcs  runtime addresses, leaf first: pcs[0] is the exact PC,
 *               pcs[1..] are return addresses (look up pc - 1 to
 *               symbolize them), except a frame that a signal interrupted,
 *               whose PC is exact (see unwinder_unwind_exact())
 * @param max    size of @pcs, at least 1
 * @param[out] n  number of @pcs filled (at least 1 on success)
 * @param[out] stopped_early  enum unwind_stop: UNWIND_STOP_NONE when the
 *               outermost frame was reached, otherwise why the unwind
 *               stopped before it
 * @return 0 (see @stopped_early: a short unwind is data, not an error),
 *         -EINVAL (NULL argument, @max 0), -ENOMEM
 */
int unwinder_unwind(struct unwinder *u, pid_t pid, const uint64_t *regs,
		    const void *stack, size_t stack_size, uint64_t *pcs,
		    size_t max, size_t *n, int *stopped_early);

/**
 * unwinder_unwind_exact() - unwinder_unwind(), also saying which PCs are
 * exact: the raw format writes those as `p` frames, return addresses as
 * `r` (docs/raw-format.md).
 * @param[out] exact  NULL, or @max bytes: exact[i] is 1 when pcs[i] is an
 *               exact PC (the leaf, a signal trampoline such as
 *               __restore_rt, or the frame interrupted by the signal,
 *               found above the trampoline), 0 when it is a return
 *               address
 * @return as unwinder_unwind()
 */
int unwinder_unwind_exact(struct unwinder *u, pid_t pid, const uint64_t *regs,
			  const void *stack, size_t stack_size, uint64_t *pcs,
			  unsigned char *exact, size_t max, size_t *n,
			  int *stopped_early);

/**
 * unwinder_leaf_ra() - fp-mode leaf repair: the return address of the frame
 * at regs[UNWIND_REG_IP] according to its CFI (looked up at the exact PC),
 * read from the stack slice.  In a leaf without a frame pointer this is the
 * caller that the kernel's frame-pointer callchain skips.
 * @param regs, stack, stack_size  as for unwinder_unwind(); only SP and IP
 *               are needed for the usual rules, any register that a rule
 *               names must be valid
 * @param[out] ra  the runtime return address
 * @return 0; -ENOENT (no mapping or no CFI for the PC, or the PC is in an
 *         outermost frame); -ERANGE (the return address lies outside the
 *         slice); -EINVAL (NULL argument, CFI that cannot be evaluated);
 *         -ENOMEM
 */
int unwinder_leaf_ra(struct unwinder *u, pid_t pid, const uint64_t *regs,
		     const void *stack, size_t stack_size, uint64_t *ra);

/**
 * What a function's CFI says about rbp at one PC: whether a frame-pointer
 * walk (the kernel's PERF_SAMPLE_CALLCHAIN) that meets this frame can go
 * on soundly.  fp mode of `sym record` checks its callchains with it
 * (docs/record.md, "fp mode").
 */
enum unwind_fp {
	/** Cannot tell: no mapping, no CFI for the PC, CFI that cannot be
	 * read, or a Go frame (Go's table says nothing of rbp). */
	UNWIND_FP_UNKNOWN = 0,
	/** rbp is this frame's frame pointer: CFA = rbp + 16 with the caller's
	 * rbp saved at CFA - 16, so [rbp] is the caller's rbp and [rbp + 8]
	 * the return address.  A walk through this frame is sound. */
	UNWIND_FP_FRAME,
	/** rbp is not saved here, so it still holds the caller's value (a
	 * frameless function that leaves rbp alone). */
	UNWIND_FP_KEPT,
	/** rbp is saved somewhere but is not the frame pointer: the function
	 * may use it for anything. */
	UNWIND_FP_SAVED,
	/** The return address is undefined: the outermost frame (_start, a
	 * thread's start in clone3); or the PC is in a program's entry code
	 * without CFI (see UNWIND_STOP_NONE). */
	UNWIND_FP_OUTERMOST,
	/** A signal trampoline (CIE augmentation "S"), e.g. __restore_rt. */
	UNWIND_FP_SIGNAL,
};

/**
 * unwinder_fp_frame() - enum unwind_fp of the function at runtime address
 * @pc of @pid.
 * @param exact  true: look the CFI up at @pc (a leaf, an interrupted
 *               frame); false: @pc is a return address, look up @pc - 1
 *               (the call instruction)
 * @param build_id  lowercase hex of the file the caller believes maps @pc,
 *               or NULL: a mapped file with another build ID is not used
 *               (the unwinder's mappings may be newer than the sample,
 *               e.g. after an exec)
 * @param[out] kind  enum unwind_fp, UNWIND_FP_UNKNOWN on any error
 * @return 0 (*kind says what the file's CFI says, and depends only on the
 *         file and its ELF address: a caller may cache it by those);
 *         -ENOENT when @pc is in no mapping of @pid the unwinder has, or
 *         in a file with another build ID (not a property of the file: do
 *         not cache); -EINVAL (NULL argument)
 */
int unwinder_fp_frame(struct unwinder *u, pid_t pid, uint64_t pc, bool exact,
		      const char *build_id, int *kind);

/**
 * unwinder_leaf_fp() - unwinder_leaf_ra(), and what the leaf's CFI says
 * about the rbp the kernel's frame-pointer walk starts from.
 * @param[out] ra       as for unwinder_leaf_ra(), set when 0 is returned
 * @param[out] kind     enum unwind_fp of the leaf at its exact PC; always
 *                      set (UNWIND_FP_UNKNOWN on errors)
 * @param[out] bp_kept  true when regs[UNWIND_REG_BP] is the leaf's own
 *                      frame pointer (UNWIND_FP_FRAME) or still the
 *                      caller's rbp (as the CFI restores it from the slice
 *                      or keeps it): the walk starts from a real frame;
 *                      false otherwise, or when that cannot be told
 * @return as unwinder_leaf_ra()
 */
int unwinder_leaf_fp(struct unwinder *u, pid_t pid, const uint64_t *regs,
		     const void *stack, size_t stack_size, uint64_t *ra,
		     int *kind, bool *bp_kept);

/**
 * unwinder_last_extent() - how much of its stack copy the last
 * unwinder_unwind() (or _exact()) needed: what the recorder reports to
 * size --stack-size, and what a hybrid of frame pointers and CFI could
 * save (docs/record.md, "Which default").
 * @param[out] used  bytes from the sampled SP to the CFA of the last frame
 *                   unwound (the caller's SP), 0 if none was
 * @param[out] nofp  the same, up to the CFA of the last frame whose CFI
 *                   does not keep rbp as a frame pointer: beyond it every
 *                   frame could be walked by frame pointers, without the
 *                   copy
 * Both count only frames at or above the sampled SP (not a sigaltstack
 * frame below it).
 */
void unwinder_last_extent(const struct unwinder *u, uint64_t *used,
			  uint64_t *nofp);

/** Counters of an unwinder, for benchmarks and `--verbose` output. */
struct unwind_stats {
	/** CFI rows found in the cache / evaluated with libdw. */
	uint64_t row_hits, row_misses;
	/** Files open now (mapped by some process, or idle and kept). */
	uint64_t files_open;
	/** Processes and mappings known now. */
	uint64_t procs, maps;
	/** Unwinds answered by the memo / unwound in full while it was on
	 * (see unwinder_set_memo()). */
	uint64_t memo_hits, memo_misses;
};

/** unwinder_stats() - fill @st with @u's counters. */
void unwinder_stats(const struct unwinder *u, struct unwind_stats *st);

/**
 * unwinder_set_debug_dir() - where build-ID debug files are looked for
 * (DIR/xx/rest.debug) when a file's .eh_frame has no row for a PC and the
 * file has no .debug_frame of its own.  Only debug files that have a
 * .debug_frame, of at most 64 MiB, are opened.  Files already consulted
 * keep their answer.
 * @param dir  copied; NULL for the default, /usr/lib/debug/.build-id;
 *             "" to never look
 * @return 0, -EINVAL (@u NULL), -ENOMEM
 */
int unwinder_set_debug_dir(struct unwinder *u, const char *dir);

/**
 * unwinder_set_cache() - turn the CFI row cache off (0) or on (1, the
 * default).  For the benchmark that measures what the cache saves.
 */
void unwinder_set_cache(struct unwinder *u, int on);

/**
 * unwinder_set_memo() - turn the unwind memo off (0) or on (1, the
 * default), and empty it.  For the tests and benchmarks that compare the
 * two: the memo never changes a result.
 *
 * The memo keeps full unwinds in 64 slots, 16 sets of 4 chosen by a
 * hash of (pid, IP, SP), one slot a key, with what its result depended
 * on: the sampled registers it used (as a PC, an SP, a CFA's base or in
 * an expression; a register that frames only pass up unchanged counts
 * when a frame reads it), each stack word it read (offset, length, value), the range
 * of copy sizes that gives the same reads and failed reads (a frame
 * stopped by UNWIND_STOP_READ fails, a longer copy would not), the
 * process's mappings (a generation that unwinder_map(), unwinder_unmap()
 * and unwinder_forget() change), and @max.  An unwind whose pid, IP and SP
 * find a slot with all of these equal takes its frames, exact flags, stop
 * and unwinder_last_extent() from it; any other is unwound in full.  That
 * one is recorded when its key is in the set already; else it only keeps
 * its key, in the set's empty or least recently used slot, so that keys
 * that never come back (most on-CPU samples) cost no recording.  So it
 * saves the CFI lookups and evaluation of a stack seen before (an off-CPU
 * thread blocking again where it did), and costs a comparison of the
 * words read plus, on a miss, their recording.
 * Memory: at most 64 slots of 4,472 bytes (280 KiB), each allocated at
 * its first use; unwinds asked for more than 128 frames (@max), or with a
 * copy over 4 GiB, or that read more than 192 words, are not kept.  Like the row
 * cache, it takes a file's CFI to give an address the same row each time
 * (true of CFI whose FDEs do not overlap).  See docs/record.md "The
 * unwind memo".
 */
void unwinder_set_memo(struct unwinder *u, int on);

#endif /* SYM_TOOLS_UNWIND_H */
