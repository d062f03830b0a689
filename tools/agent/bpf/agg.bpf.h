/*
 * agg.bpf.h - `--aggregate kernel`, the BPF side, included by
 * offcpu.bpf.c: events summed in BPF maps instead of shipped one by one.
 *
 * agg_add() hashes a stack (agg_event.h; unwound by frame pointers with
 * bpf_get_stack()), keeps the stack in "agg_stacks" under its hash (one
 * entry per distinct stack, shared by the CPUs), and adds the event's
 * count and weight to the per-CPU hash "agg_counts" under (hash, thread,
 * state).  A hash already held by a different stack is a collision: the
 * event is counted (OFFCPU_CNT_COLLISION) and dropped, never added to the
 * other stack.  A full map drops the event and counts it too.
 * User space drains "agg_counts" with lookup-and-delete batches on a
 * timer and reads the stacks it needs (offcpu.c).
 */
#ifndef SYM_AGG_BPF_H
#define SYM_AGG_BPF_H

#include "agg_event.h"

/* Hash bits kept (tests make collisions happen with few). */
const volatile __u64 agg_hash_mask = ~0ULL;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct agg_stack);
} agg_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct agg_key);
	__type(value, struct agg_val);
} agg_counts SEC(".maps");

/* --aggregate kernel, off-CPU: a thread switched out, until switch-in
 * (pending: 1 from switch-out, or sched_wakeup_new, to switch-in). */
struct agg_start {
	__u64 start_ns;
	__u32 state, pending;
	struct agg_stack s;
};

/* The switched-out threads' entries, as offcpu.bpf.c's "slot" and
 * "start": the tp_btf programs keep them in task storage ("agg_slot",
 * one entry per thread, allocated at its first switch-out, written in
 * place and reused: no allocation, free or 800-byte copy per switch);
 * the raw_tp ones in the hash "agg_start", keyed by thread id, filled
 * from "agg_scratch" and deleted at switch-in. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct agg_start);
} agg_slot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct agg_start);
} agg_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agg_start);
} agg_scratch SEC(".maps");

static __always_inline __u64 agg_mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 31);
}

static __always_inline __u64 agg_hash(const struct agg_stack *s)
{
	__u64 h = agg_mix(0xcbf29ce484222325ULL, s->tgid |
			  (__u64)s->nkern << 32 | (__u64)s->nuser << 48);
	__u32 i;

	for (i = 0; i < AGG_KERN_MAX; i++) {
		if (i >= s->nkern)
			break;
		h = agg_mix(h, s->pc[i]);
	}
	for (i = 0; i < AGG_USER_MAX; i++) {
		if (i >= s->nuser)
			break;
		h = agg_mix(h, s->pc[AGG_KERN_MAX + i]);
	}
	return h & agg_hash_mask;
}

static __always_inline int agg_same(const struct agg_stack *a,
				    const struct agg_stack *b)
{
	__u32 i;

	if (a->tgid != b->tgid || a->nkern != b->nkern ||
	    a->nuser != b->nuser)
		return 0;
	for (i = 0; i < AGG_KERN_MAX; i++) {
		if (i >= a->nkern)
			break;
		if (a->pc[i] != b->pc[i])
			return 0;
	}
	for (i = 0; i < AGG_USER_MAX; i++) {
		if (i >= a->nuser)
			break;
		if (a->pc[AGG_KERN_MAX + i] != b->pc[AGG_KERN_MAX + i])
			return 0;
	}
	return 1;
}

/* Fill @s from the context @ctx (the current task's stacks). */
static __always_inline void agg_unwind(void *ctx, struct agg_stack *s,
				       __u32 tgid)
{
	long n;

	s->tgid = tgid;
	n = bpf_get_stack(ctx, s->pc, AGG_KERN_MAX * 8, 0);
	s->nkern = n > 0 ? (__u64)n / 8 : 0;
	n = bpf_get_stack(ctx, &s->pc[AGG_KERN_MAX], AGG_USER_MAX * 8,
			  BPF_F_USER_STACK);
	s->nuser = n > 0 ? (__u64)n / 8 : 0;
}

/* Is @h held by @s (adding it if no one holds it)?  Counts what fails. */
static __always_inline int agg_stack_ok(__u64 h, const struct agg_stack *s)
{
	struct agg_stack *old = bpf_map_lookup_elem(&agg_stacks, &h);
	long err;

	if (!old) {
		err = bpf_map_update_elem(&agg_stacks, &h, s, BPF_NOEXIST);
		if (!err) {
			count(OFFCPU_CNT_NEWSTACK);
			return 1;
		}
		old = bpf_map_lookup_elem(&agg_stacks, &h);
		if (!old) {	/* full, and not another CPU's insert */
			count(OFFCPU_CNT_STACKSFULL);
			return 0;
		}
	}
	if (agg_same(old, s))
		return 1;
	count(OFFCPU_CNT_COLLISION);
	return 0;
}

/* Add one event of @weight ns, thread @tid in @state, stack @s. */
static __always_inline void agg_add(const struct agg_stack *s, __u32 tid,
				    __u32 state, __u64 weight)
{
	struct agg_key k = { .tgid = s->tgid, .tid = tid, .state = state };
	struct agg_val *v, nv = { .count = 1, .weight = weight };

	k.hash = agg_hash(s);
	if (!agg_stack_ok(k.hash, s))
		return;
	v = bpf_map_lookup_elem(&agg_counts, &k);
	if (!v && bpf_map_update_elem(&agg_counts, &k, &nv, BPF_NOEXIST) == 0) {
		count(OFFCPU_CNT_AGGREGATED);
		return;
	}
	if (!v)
		v = bpf_map_lookup_elem(&agg_counts, &k);
	if (!v) {
		count(OFFCPU_CNT_COUNTSFULL);
		return;
	}
	v->count += 1;
	v->weight += weight;
	count(OFFCPU_CNT_AGGREGATED);
}

#endif
