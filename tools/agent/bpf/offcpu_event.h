/*
 * offcpu_event.h - what offcpu.bpf.c and tools/agent/offcpu.c share: the
 * event one blocked period makes, and the BPF program's settings.  Plain
 * fixed-size integer types only: it is compiled by clang -target bpf (with
 * vmlinux.h) and by gcc for user space (with <stdint.h>).
 */
#ifndef SYM_OFFCPU_EVENT_H
#define SYM_OFFCPU_EVENT_H

/* Bytes of user stack copied at switch-out, at most (a power of two). */
#define OFFCPU_STACK_MAX 16384
/* The smallest size a process's learned stack copy is set to
 * (stacklearn.h); the "stack_sizes" map holds at most this many
 * processes (the others copy the whole --stack-size). */
#define OFFCPU_STACK_FLOOR 1024
#define OFFCPU_LEARN_PROCS 4096
/* Kernel frames kept, at most. */
#define OFFCPU_KSTACK_MAX 64
/* x86-64 user registers, in unwind.h's order (UNWIND_NREGS). */
#define OFFCPU_NREGS 17

/* Cost measurement only (offcpu_opts.cost_omit, SYM_OFFCPU_COST_OMIT):
 * parts of each event the ring path leaves out.  The profile is then
 * wrong (no kernel frames, no user stack, or no events at all). */
#define OFFCPU_OMIT_KSTACK 1u	/* no bpf_get_stack() at switch-out */
#define OFFCPU_OMIT_USTACK 2u	/* no copy of the user stack */
#define OFFCPU_OMIT_RING 4u	/* events counted, not written to the ring */

/* The thread's state at switch-out. */
#define OFFCPU_STATE_R 0	/* runnable: preempted, or yielded (sched-delay:
				 * preempted, whatever its state) */
#define OFFCPU_STATE_S 1	/* TASK_INTERRUPTIBLE */
#define OFFCPU_STATE_D 2	/* TASK_UNINTERRUPTIBLE (and TASK_IDLE) */
#define OFFCPU_STATE_OTHER 3	/* stopped, traced, dead... */
#define OFFCPU_STATE_CPU 4	/* the on-CPU sampler's: running */

/* Counters (the per-CPU array "counters"). */
/* The values of the "tgids" map: a process recorded; one recorded from
 * its next execve() on (the command sym record forked, which runs the
 * recorder's own code until then). */
#define OFFCPU_TGID_ON 1
#define OFFCPU_TGID_AT_EXEC 2

#define OFFCPU_CNT_LOST 0	/* ring buffer full: event dropped */
#define OFFCPU_CNT_MAPFULL 1	/* no room for a switched-out thread (task
				 * storage refused, raw_tp: hash full) */
#define OFFCPU_CNT_NOSTACK 2	/* no user stack could be read */
#define OFFCPU_CNT_EVENTS 3	/* events written */
#define OFFCPU_CNT_FILTERED 4	/* blocks outside [min, max] */
#define OFFCPU_CNT_NOWAKE 5	/* --sched-delay: switched in, no wake-up seen */
/* --aggregate kernel (agg.bpf.h): events dropped because their stack's
 * hash is held by another stack, because "agg_stacks" or "agg_counts" was
 * full; events added; stacks added. */
#define OFFCPU_CNT_COLLISION 6
#define OFFCPU_CNT_STACKSFULL 7
#define OFFCPU_CNT_COUNTSFULL 8
#define OFFCPU_CNT_AGGREGATED 9
#define OFFCPU_CNT_NEWSTACK 10
/* Counted by user space (offcpu.c), not BPF: rows drained whose stack was
 * no longer in "agg_stacks" (cleared when nearly full), dropped. */
#define OFFCPU_CNT_ORPHAN 11
/* Switch-ins that sched_switch did not show (the thread was switched out
 * again with its event still pending), and of them those whose blocked
 * time sched_info could not give, dropped. */
#define OFFCPU_CNT_UNSEEN 12
#define OFFCPU_CNT_UNSEEN_LOST 13
/* Processes a recorded one forked that the filter ("tgids") had no room
 * for: not recorded. */
#define OFFCPU_CNT_TGIDSFULL 14
/* The kernel stack memo (kmemo.bpf.h, kstack_memo()): switch-outs whose
 * kernel stack was the thread's last one, not walked again; and with
 * the memo's check on (SYM_KMEMO=check), those whose walk differed from
 * the memo's (the walk's frames are kept). */
#define OFFCPU_CNT_KMEMO_HIT 15
#define OFFCPU_CNT_KMEMO_BAD 16
#define OFFCPU_NCNT 17

/*
 * One blocked period.  The event written to the ring buffer is this
 * header followed by stack_len bytes of user stack (copied from
 * regs[7], the user sp).
 */
struct offcpu_event {
	__u64 start_ns;		/* switch-out, CLOCK_MONOTONIC (sched-delay:
				 * when it became runnable) */
	__u64 weight_ns;	/* switch-in minus start_ns */
	__u32 pid, tid;		/* thread group and thread */
	__u32 state;		/* OFFCPU_STATE_* */
	__u32 stack_len;	/* user stack bytes after the header */
	__s32 kstack_len;	/* bytes of kstack[], or -errno */
	__u32 user;		/* 1: regs are the user registers */
	__u32 stack_cap;	/* the bytes the copy was allowed: the
				 * process's learned size ("stack_sizes"),
				 * else the whole --stack-size; stack_len
				 * below it: the copy ended at an unreadable
				 * page (the top of the stack) */
	__u32 pad;
	__u64 regs[OFFCPU_NREGS];
	__u64 kstack[OFFCPU_KSTACK_MAX];
	unsigned char stack[OFFCPU_STACK_MAX];
};

#endif
