/*
 * aggdrain.h - `--aggregate kernel`, the user side: empty the BPF maps of
 * bpf/agg.bpf.h on a timer.
 *
 * Each drain takes every row of the per-CPU hash "agg_counts" out with
 * lookup-and-delete batches (a row is gone from the map once read: an
 * event that comes after goes into a new row, none is counted twice or
 * lost between the read and the delete), sums its CPUs, and hands it with
 * its stack, read from "agg_stacks" by hash and cached here.  The stacks
 * map is not emptied at each drain (a stack seen again would be unwound,
 * hashed and inserted again): only when the stacks added reach three
 * quarters of its size, it is cleared, and the cache with it.  A row
 * drained whose stack was cleared in between is dropped and counted
 * (orphans), never given another stack.
 *
 * Not thread-safe: one thread owns a struct aggdrain.
 */
#ifndef SYM_TOOLS_AGGDRAIN_H
#define SYM_TOOLS_AGGDRAIN_H

#include <stdint.h>
#include <linux/types.h>

#include "offcpu.h"

struct aggdrain;

/**
 * aggdrain_new() - a drainer of the maps @counts_fd ("agg_counts") and
 * @stacks_fd ("agg_stacks", @max_stacks entries); the fds are borrowed.
 * @param[out] out  caller owns, free with aggdrain_free()
 * @return 0, -ENOMEM
 */
int aggdrain_new(int counts_fd, int stacks_fd, uint32_t max_stacks,
		 struct aggdrain **out);

/**
 * aggdrain_run() - one drain: every row to @fn; then, when @added (the
 * BPF side's OFFCPU_CNT_NEWSTACK, summed) less the stacks cleared so far
 * reaches 3/4 of the map, clear it.
 * @return rows handed, or -errno of the bpf() calls
 */
int aggdrain_run(struct aggdrain *d, uint64_t added, offcpu_agg_fn fn,
		 void *ctx);

/** aggdrain_orphans() - events dropped: their stack was cleared. */
uint64_t aggdrain_orphans(const struct aggdrain *d);

/** aggdrain_stats() - fill @st. */
void aggdrain_stats(const struct aggdrain *d, struct offcpu_agg_stats *st);

/** aggdrain_free() - NULL is fine; the maps stay. */
void aggdrain_free(struct aggdrain *d);

#endif
