/*
 * fpcheck.h - can a frame-pointer callchain be trusted?  For fp mode of
 * `sym record` (docs/record.md, "fp mode").
 *
 * The kernel's frame-pointer walk (PERF_SAMPLE_CALLCHAIN) starts from the
 * sampled rbp and, for each frame, reads the saved rbp at [rbp] and the
 * return address at [rbp + 8].  That is right only through functions that
 * keep rbp as their frame pointer.  Through any other function it skips
 * callers or reads data, and it stops wherever rbp happens to lead: often
 * at a libc function that is not the outermost frame at all.  The stack
 * then looks complete and is not.
 *
 * This module classifies return addresses by their function's CFI
 * (tools/agent/unwind.c), so that record.c can flag a chain that
 * - goes on past a function that does not keep rbp as its frame pointer
 *   (FPCHECK_NOFRAME in the middle: what follows it came from an rbp the
 *   function did not set up), or
 * - ends at a frame that is not an outermost one (FPCHECK_OUTERMOST at
 *   the end, or it is incomplete).
 *
 * Outermost frames are those whose CFI says the return address is
 * undefined (_start, the thread start in clone3), and "start sites": the
 * return addresses where libc's start-up code called main
 * (__libc_start_call_main) and where its thread start called the thread's
 * function (start_thread).  Those two functions have no frame pointer and
 * no marked CFI, so a frame-pointer chain from main or from a thread
 * function always ends there; and they have no dynamic symbol either.
 * fpcheck_learn() finds them by walking the recorder's own stacks (its
 * main thread and a short-lived thread) with backtrace(3), and records
 * each as (build ID, ELF address).  So they are known for the libc the
 * recorder itself runs on; a process with another libc (a container with
 * another distribution, a static binary) has its chains flagged.
 *
 * Verdicts are cached by (module, ELF address), like retcheck.c's, so each
 * distinct return address costs one CFI lookup per recording.
 *
 * Thread-safety: none.
 */
#ifndef SYM_TOOLS_FPCHECK_H
#define SYM_TOOLS_FPCHECK_H

#include <stdint.h>
#include <sys/types.h>

#include "procmaps.h"
#include "unwind.h"

/** What a return address says about the chain around it. */
enum fpcheck_class {
	/** Cannot tell: no file (JIT, anonymous code), no CFI there. */
	FPCHECK_UNKNOWN = 0,
	/** Its function keeps rbp as its frame pointer at the call: the walk
	 * goes on soundly to its caller. */
	FPCHECK_FRAME,
	/** It does not (frameless, rbp used for data, a signal trampoline):
	 * the frames the walk found beyond it are missing or wrong. */
	FPCHECK_NOFRAME,
	/** The outermost frame of a thread: its CFI says the return address
	 * is undefined, or it is a start site (see above). */
	FPCHECK_OUTERMOST,
};

/** The most start sites kept. */
#define FPCHECK_MAX_SITES 16

struct fpcheck;

/**
 * fpcheck_new() - an empty cache, with no start site.
 * @param uw   borrowed: must outlive the fpcheck; it is fed the mappings
 *             by its owner
 * @param[out] out  caller owns, free with fpcheck_free()
 * @return 0, -EINVAL (NULL argument), -ENOMEM
 */
int fpcheck_new(struct unwinder *uw, struct fpcheck **out);

/** fpcheck_free() - NULL is fine. */
void fpcheck_free(struct fpcheck *fc);

/**
 * fpcheck_learn() - add the start sites of this process's libc: the
 * return addresses in shared objects that are outer than this process's
 * own code on the stack of the calling thread (main's callers) and on the
 * stack of a new thread (the thread start).  Call it from the main thread,
 * before any other thread runs, once.  It costs about a millisecond (the
 * first backtrace() loads libgcc_s).
 * @return the number of sites known after the call (0: none could be
 *         found, so every chain that ends in libc will be flagged)
 */
int fpcheck_learn(struct fpcheck *fc);

/**
 * fpcheck_add_site() - add one start site.
 * @param build_id  lowercase hex; copied
 * @param vaddr     the ELF virtual address of the return address
 * @return 0, -EINVAL (bad build ID), -ENOSPC (FPCHECK_MAX_SITES reached)
 */
int fpcheck_add_site(struct fpcheck *fc, const char *build_id,
		     uint64_t vaddr);

/**
 * fpcheck_ret() - enum fpcheck_class of runtime return address @pc of
 * process @pid, in mapping @m (NULL: in no mapping, FPCHECK_UNKNOWN).
 */
int fpcheck_ret(struct fpcheck *fc, const struct pm_map *m, pid_t pid,
		uint64_t pc);

/** Counters, for the summary: sites known, CFI lookups, cache hits. */
struct fpcheck_stats {
	uint64_t sites, lookups, hits;
};

/** fpcheck_stats() - fill @st. */
void fpcheck_stats(const struct fpcheck *fc, struct fpcheck_stats *st);

/** A loaded object of this process (fpcheck_obj_of()). */
struct fpcheck_obj {
	uint64_t addr;			/* in: a code address */
	const void *phdr;		/* out: identifies the object */
	uint64_t bias;			/* out: ELF vaddr = addr - bias */
	char build_id[2 * PM_BUILD_ID_MAX + 1];	/* out, "" if none */
};

/**
 * fpcheck_obj_of() - the loaded object of this process whose executable
 * segment holds code address @addr (dl_iterate_phdr()), with its load
 * bias and build ID.  fpcheck_learn() uses it to tell its own code from
 * libc's; the unit test (tests/unit/t-fpcheck.c) to make the mappings it
 * checks against.
 * @param[out] o  zeroed, then filled
 * @return true when an object holds @addr
 */
bool fpcheck_obj_of(uint64_t addr, struct fpcheck_obj *o);

#endif /* SYM_TOOLS_FPCHECK_H */
