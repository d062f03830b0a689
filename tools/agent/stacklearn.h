/*
 * stacklearn.h - how many bytes of user stack the off-CPU agent copies
 * for each process, learned from the unwinds of its events.
 *
 * Copying the whole --stack-size (8 KiB) at every switch-out, and that
 * copy again into the ring buffer, is most of the agent's cost at high
 * switch rates, while whole stacks of most programs need far less (512
 * to 704 bytes on prof_pingpong.c).  So the BPF program copies, for each
 * process, the size this module sets in its "stack_sizes" map
 * (offcpu.h, offcpu_stack_seen()):
 *
 * - **safe start**: a process not learned yet copies the whole ceiling
 *   (--stack-size);
 * - **learning**: after STACKLEARN_EVENTS unwinds that reached the
 *   outermost frame, its size becomes stacklearn_fit() of the deepest
 *   (the most bytes of copy a whole stack needed, plus half as much
 *   again and 256 bytes), at least the floor and at most the ceiling;
 *   a later whole stack deeper than that raises it at once;
 * - **growth**: an unwind that ran off the end of a copy cut at the
 *   learned size (UNWIND_STOP_READ with the copy as long as allowed) is
 *   counted as cut (its stack is flagged `unwind` in the profile, never
 *   passed off as whole), the bytes it had count as needed, and the size
 *   goes back to the ceiling (unless it is there already) until
 *   STACKLEARN_EVENTS more whole unwinds have been seen; so a process whose stacks deepen loses at most the
 *   events already copied before the growth (one drain's worth), and
 *   each growth raises its learned size by half at least.
 *
 * At most OFFCPU_LEARN_PROCS processes are learned at once; the others
 * copy the ceiling.  Not thread-safe.
 */
#ifndef SYM_TOOLS_STACKLEARN_H
#define SYM_TOOLS_STACKLEARN_H

#include <stdbool.h>
#include <stdint.h>

/* Whole unwinds of a process before its size is learned (or relearned
 * after a growth). */
#define STACKLEARN_EVENTS 32

struct stacklearn;

/** What stacklearn_stats() reports. */
struct stacklearn_stats {
	/** Events seen, and the bytes of stack they carried. */
	uint64_t events, bytes;
	/** Events cut: they ran off the end of a copy of the learned size
	 *  (flagged `unwind`); growths of a size after such a cut; raises
	 *  of a size by a whole stack deeper than it was fitted to. */
	uint64_t cut, grown, raised;
	/** Processes tracked now, those with a learned size below the
	 *  ceiling now, and processes not tracked because the table was
	 *  full (they copy the ceiling). */
	uint64_t procs, learned, untracked;
	/** The smallest and largest learned size now (0 if none). */
	uint32_t min_size, max_size;
};

/**
 * stacklearn_new() - an empty table.
 * @param floor    the smallest size set, in bytes
 * @param ceiling  the largest (--stack-size): what an unlearned process
 *                 copies
 * @param[out] out  caller owns, free with stacklearn_free()
 * @return 0, -EINVAL (floor > ceiling, or ceiling 0), -ENOMEM
 */
int stacklearn_new(uint32_t floor, uint32_t ceiling, struct stacklearn **out);

/** stacklearn_fit() - the size that holds stacks needing @used bytes:
 *  @used + @used / 2 + 256 rounded up to 256, within [floor, ceiling]. */
uint32_t stacklearn_fit(const struct stacklearn *l, uint64_t used);

/**
 * stacklearn_seen() - the outcome of one event's unwind.
 * @param pid    its process
 * @param cap    the bytes its copy was allowed (offcpu_event.stack_cap)
 * @param len    the bytes copied (stack_len; less than @cap when the
 *               copy reached an unreadable page: the stack's top)
 * @param whole  the unwind reached the outermost frame
 * @param used   then, the bytes of copy it needed (unwinder_last_extent())
 * @param ran_off  the unwind ended because it ran off the copy
 *               (UNWIND_STOP_READ)
 * @param[out] cut  true when the event is one cut by a learned size
 * @return the process's new size to give the BPF program, or 0 for no
 *         change
 */
uint32_t stacklearn_seen(struct stacklearn *l, int32_t pid, uint32_t cap,
			 uint32_t len, bool whole, uint64_t used,
			 bool ran_off, bool *cut);

/** stacklearn_size() - process @pid's size now (the ceiling when it is
 *  not learned). */
uint32_t stacklearn_size(const struct stacklearn *l, int32_t pid);

/** stacklearn_forget() - drop process @pid (it exited). */
void stacklearn_forget(struct stacklearn *l, int32_t pid);

/** stacklearn_stats() - fill @st. */
void stacklearn_stats(const struct stacklearn *l, struct stacklearn_stats *st);

/** stacklearn_free() - NULL is a no-op. */
void stacklearn_free(struct stacklearn *l);

#endif
