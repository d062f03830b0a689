/*
 * agg_event.h - what agg.bpf.h (the BPF side of `--aggregate kernel`) and
 * tools/agent/offcpu.c share: the stack kept in the map "agg_stacks", the
 * key and value of the per-CPU map "agg_counts".  Plain fixed-size
 * integer types only (compiled by clang -target bpf and by gcc).
 *
 * A stack is unwound inside BPF by frame pointers (bpf_get_stack(), user
 * stack with BPF_F_USER_STACK): no CFI is held in maps, so user frames
 * past code without a frame pointer are missing (the recorder flags such
 * stacks 'unwind', and counts them).
 */
#ifndef SYM_AGG_EVENT_H
#define SYM_AGG_EVENT_H

/* Frames kept per stack, at most: kernel, then user. */
#define AGG_KERN_MAX 32
#define AGG_USER_MAX 64

/* One stack: pc[0, nkern) the kernel's return addresses (innermost
 * first), pc[AGG_KERN_MAX, AGG_KERN_MAX + nuser) the user ones (pc of the
 * leaf first).  Entries past n are not compared nor hashed. */
struct agg_stack {
	__u32 tgid;
	__u16 nkern, nuser;
	__u64 pc[AGG_KERN_MAX + AGG_USER_MAX];
};

/* A row of "agg_counts": one thread's stack (its hash) in one state. */
struct agg_key {
	__u64 hash;		/* of the agg_stack, masked by hash_mask */
	__u32 tgid, tid;
	__u32 state;		/* OFFCPU_STATE_* (on-CPU: OFFCPU_STATE_CPU) */
	__u32 pad;
};

struct agg_val {
	__u64 count;		/* events */
	__u64 weight;		/* their ns */
};

#endif
