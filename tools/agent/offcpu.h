/*
 * offcpu.h - the eBPF half of `sym record --off-cpu`: load and attach
 * bpf/offcpu.bpf.c (its libbpf skeleton, CO-RE), and drain the events it
 * writes.
 *
 * Each event (struct offcpu_event, bpf/offcpu_event.h) is one period a
 * thread spent switched out, between sched_switch taking it off a CPU and
 * sched_switch putting it back: the weight in nanoseconds, the state it
 * left in (S, D, or R: preempted), its user registers and a copy of its
 * user stack at switch-out (for the CFI unwinder, unwind.h), and its
 * kernel stack.  The BPF side writes to a ring buffer without waking
 * anyone; offcpu_drain() is called on a timer.
 *
 * Nothing is pinned: the programs, maps and links live as long as the
 * file descriptors of this process, so a SIGKILL leaves nothing behind.
 *
 * Not thread-safe: one thread owns a struct offcpu.
 */
#ifndef SYM_TOOLS_OFFCPU_H
#define SYM_TOOLS_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "bpf/offcpu_event.h"
#include "bpf/agg_event.h"

struct offcpu;

/** --aggregate kernel: called for each row drained from the maps: @count
 *  events of thread @k->tid in state @k->state, @weight ns in all, on
 *  stack @s (frame-pointer unwound, agg_event.h); both borrowed. */
typedef void (*offcpu_agg_fn)(void *ctx, const struct agg_stack *s,
			      const struct agg_key *k, uint64_t count,
			      uint64_t weight);

struct offcpu_opts {
	/** Keep blocks of at least @min_ns and at most @max_ns. */
	uint64_t min_ns, max_ns;
	/** User stack bytes to copy (at most OFFCPU_STACK_MAX): for each
	 *  process, the size learned from its unwinds (stacklearn.h, told
	 *  by offcpu_stack_seen()), this much before it is learned and at
	 *  most this much. */
	uint32_t stack_size;
	/** true: copy the whole @stack_size always (no learning). */
	bool fixed_stack;
	/** Probability that a switch-out is recorded, in (0, 1]. */
	double prob;
	/** true: every process; false: only @pids, those of
	 *  offcpu_add_pid() and offcpu_add_exec(), and the processes they
	 *  fork, from their birth (each leaves when it exits). */
	bool all;
	/** Processes to follow from the start (set before the programs
	 *  attach); borrowed for the call. */
	const int32_t *pids;
	size_t npids;
	/** Threads switched out at once, at most (the "start" map); 0:
	 *  4096. */
	uint32_t max_threads;
	/** Bytes of the ring buffer, a power of two of at least a page;
	 *  0: 4 MiB. */
	uint32_t ring_bytes;
	/** true: run-queue delay instead of off-CPU time (each event the
	 *  time from wake-up or preemption to switch-in; state
	 *  OFFCPU_STATE_R when preempted, S or D when woken), with
	 *  programs on sched_wakeup and sched_wakeup_new too. */
	bool sched_delay;
	/** Non-zero: instead of sched_switch, the on-CPU sampler: one
	 *  cpu-clock perf event per online CPU at @cpu_hz samples a second,
	 *  with the BPF program (bpf/oncpu.bpf.h); events in state
	 *  OFFCPU_STATE_CPU, weighed by their period in ns. */
	uint32_t cpu_hz;
	/** --aggregate kernel: sum events per stack in BPF maps, which
	 *  offcpu_drain() empties into @agg (off-CPU, sched_delay, CPU
	 *  samples, or with @wall both). */
	offcpu_agg_fn agg;
	/** With @cpu_hz and @agg (`--wall --aggregate kernel`): the
	 *  sched_switch programs (off-CPU time) too, beside the sampler,
	 *  into the same maps. */
	bool wall;
	/** Its maps' sizes: distinct stacks ("agg_stacks"), rows of
	 *  (stack, thread, state) per drain ("agg_counts"); 0: 8192, 16384.
	 *  @hash_bits: bits of the stack hash kept, 1-64 (0: 64), fewer to
	 *  make collisions happen (their test). */
	uint32_t agg_stacks, agg_rows, hash_bits;
	/** Fault injection (tests): non-zero N, the programs ignore one of
	 *  every N switch-ins of a thread with an event pending, as a
	 *  kernel that did not trace them (OFFCPU_CNT_UNSEEN). */
	uint32_t miss_in;
	/** Cost measurement (tests/bench/offcpu-bench.sh): OFFCPU_OMIT_*
	 *  bits (bpf/offcpu_event.h), parts of each event left out, so that
	 *  their BPF run time reads as a difference.  The profile is then
	 *  wrong: never set it outside a bench. */
	uint32_t cost_omit;
};

/** --aggregate kernel: what the drains saw (offcpu_agg_stats()). */
struct offcpu_agg_stats {
	uint64_t drains, rows, events;	/* rows drained, events in them */
	uint64_t stacks_read, stacks_cleared, clears;
	uint64_t max_stacks;		/* stacks held at once, at most */
};

/** Called for each event; @size is the bytes of @e (header + stack). */
typedef void (*offcpu_fn)(void *ctx, const struct offcpu_event *e,
			  size_t size);

/**
 * offcpu_open() - check the kernel (BTF, permission), load the programs
 * (tp_btf, else raw_tp) and attach them.
 * @param[out] out  caller owns, free with offcpu_close()
 * @param[out] why  on failure, a sentence naming what is missing
 * @return 0; -ENOENT (no kernel BTF), -EPERM (BPF refused: not root,
 *         lockdown), -ENOMEM, or another -errno of libbpf
 */
int offcpu_open(const struct offcpu_opts *o, offcpu_fn fn, void *ctx,
		struct offcpu **out, char *why, size_t whylen);

/**
 * offcpu_stack_seen() - how the unwind of event @e went, for the stack
 * size of its process (stacklearn.h): @whole when it reached the
 * outermost frame, then needing @used bytes of the copy
 * (unwinder_last_extent()); @ran_off when it ended running off the copy
 * (UNWIND_STOP_READ).  Sets the process's new size in the BPF map when
 * it changes.  No-op with fixed_stack or --aggregate kernel.
 * @return true when @e was cut by a learned size: its stack is not whole
 *         and must be flagged
 */
bool offcpu_stack_seen(struct offcpu *oc, const struct offcpu_event *e,
		       bool whole, uint64_t used, bool ran_off);

/** offcpu_forget_pid() - process @pid exited: drop its learned size. */
void offcpu_forget_pid(struct offcpu *oc, pid_t pid);

struct stacklearn_stats;
/** offcpu_learn_stats() - the stack sizes learned so far (zeros with
 *  fixed_stack or --aggregate kernel); *@failed: updates of the BPF map
 *  that failed (those processes copy their last size or the ceiling). */
void offcpu_learn_stats(const struct offcpu *oc, struct stacklearn_stats *st,
			uint64_t *failed);

/** offcpu_add_pid() - record the threads of process @pid too. */
int offcpu_add_pid(struct offcpu *oc, pid_t pid);

/** offcpu_add_exec() - record the threads of process @pid too, from its
 *  next execve() on (its sched_process_exec, after the new image is
 *  loaded): for a child forked to run a command, whose code until then
 *  is its parent's, and whose samples inside execve() carry the old
 *  image's registers.  Nothing of it is recorded if it never execs. */
int offcpu_add_exec(struct offcpu *oc, pid_t pid);

/** offcpu_drain() - hand every event in the ring buffer to the callback
 * (--aggregate kernel: every row of the maps to @agg, and clear the
 * stacks map when it is three quarters full).
 * @return events handed, or -errno */
int offcpu_drain(struct offcpu *oc);

/* The shortest wait offcpu_wait_ns() gives. */
#define OFFCPU_MIN_WAIT_NS 2000000ULL

/**
 * offcpu_wait_ns() - how long to wait before the next offcpu_drain(): at
 * the rate the ring buffer filled since the drain before, the time it
 * takes to fill a quarter of it, within [OFFCPU_MIN_WAIT_NS, @max] (@max
 * alone when it is less).  The timer is what keeps the ring from
 * filling up at a steady high switch rate: the BPF side wakes the
 * drainer only when an event finds the ring half full (a wake-up per
 * event costs more than the event), which a burst after a quiet spell
 * does before the timer has shortened (offcpu_poll_fd()).
 */
uint64_t offcpu_wait_ns(const struct offcpu *oc, uint64_t max);

/**
 * offcpu_poll_fd() - a descriptor that polls readable when the BPF side
 * woke the drainer (the ring buffer half full), to poll beside the
 * caller's timer; -1 with --aggregate kernel (no ring).  Owned by @oc.
 */
int offcpu_poll_fd(const struct offcpu *oc);

/** offcpu_counters() - the BPF side's counters (OFFCPU_CNT_*), summed
 * over the CPUs since offcpu_open(). */
void offcpu_counters(struct offcpu *oc, uint64_t cnt[OFFCPU_NCNT]);

/**
 * offcpu_kernel_skip() - how many leading frames of an event's kernel
 * stack (@n return addresses, innermost first) are the BPF program and
 * the tracepoint's functions that called it, not the thread's path into
 * __schedule(): told by /proc/kallsyms, read at offcpu_open(); 2 when it
 * could not be read.
 */
size_t offcpu_kernel_skip(const struct offcpu *oc, const uint64_t *pcs,
			  size_t n);

/** offcpu_agg_stats() - fill @st (zeros without --aggregate kernel). */
void offcpu_agg_stats(const struct offcpu *oc, struct offcpu_agg_stats *st);

/** offcpu_map_bytes() - the kernel memory of the maps and buffers loaded
 *  (their memlock, as bpftool map show says it; fdinfo). */
uint64_t offcpu_map_bytes(const struct offcpu *oc);

/** offcpu_prog_ns() - the time the programs ran, in ns, and how many
 *  times (*@runs), as the kernel counts it with kernel.bpf_stats_enabled
 *  set (0 otherwise; fdinfo). */
uint64_t offcpu_prog_ns(const struct offcpu *oc, uint64_t *runs);

/** offcpu_attach_kind() - "tp_btf", "raw_tp" or "perf_event" (with
 *  wall: "perf_event+tp_btf" or "perf_event+raw_tp"): what was attached. */
const char *offcpu_attach_kind(const struct offcpu *oc);

/** The kernel stack memo's mode, from SYM_KMEMO (kmemo.bpf.h): on
 *  (unset), off, check (every hit walked too, the differences counted:
 *  OFFCPU_CNT_KMEMO_BAD), fault (the check with a memo that lies). */
enum offcpu_kmemo {
	OFFCPU_KMEMO_ON,
	OFFCPU_KMEMO_OFF,
	OFFCPU_KMEMO_CHECK,
	OFFCPU_KMEMO_FAULT,
};

/** offcpu_kmemo_mode() - the kernel stack memo's mode for @oc. */
enum offcpu_kmemo offcpu_kmemo_mode(const struct offcpu *oc);

/** offcpu_fallback_why() - why the tp_btf programs could not be loaded
 *  when raw_tp was instead (the error's text), else NULL: raw_tp has no
 *  task storage, so it walks every kernel stack and costs more. */
const char *offcpu_fallback_why(const struct offcpu *oc);

/** offcpu_close() - detach, free; NULL is a no-op. */
void offcpu_close(struct offcpu *oc);

#endif
