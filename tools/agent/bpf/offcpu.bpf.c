// SPDX-License-Identifier: GPL-2.0
/*
 * offcpu.bpf.c - the BPF half of `sym record --off-cpu` (user half:
 * ../offcpu.c).
 *
 * At sched_switch, for the thread switched out (prev, the current task):
 * its user registers (bpf_task_pt_regs), a copy of its user stack from
 * the user sp (bpf_probe_read_user, page by page), its kernel stack
 * (bpf_get_stack) and the time go into its pending event: its task
 * storage "slot" (tp_btf), or the hash "start" keyed by thread id
 * (raw_tp).  For the thread switched in (next): if it has a pending
 * event, the time it spent switched out is the event's weight; an event
 * within [min_ns, max_ns] is copied to the ring buffer "events" without
 * waking user space (which drains the buffer on a timer) and the pending
 * event cleared.  A thread switched out with its event still pending was
 * switched in without the tracepoint (some kernels do not trace every
 * switch): that event is ended at the thread's last arrival, which
 * sched_info keeps (unseen_switch_in()), and counted.
 *
 * Two programs with the same body: tp_btf (BTF-typed arguments) and
 * raw_tp for kernels whose tp_btf attach fails; user space loads one.
 * The body is inlined into each with a constant "btf", so the raw_tp
 * program has no task storage call (it needs a BTF task pointer).
 * Counters of what was lost are a per-CPU array (offcpu_event.h).
 * The stack is unwound in user space with CFI, so whole stacks come
 * through code without frame pointers.
 *
 * With sched_delay set (`sym record --sched-delay`) the same entry
 * measures run-queue latency instead: a thread switched out runnable
 * (preempted, or yielding: state R) starts waiting for a CPU at once; one
 * that blocked (S, D) keeps its entry with start_ns 0 until sched_wakeup
 * (or sched_wakeup_new) sets start_ns; switch-in ends the wait.  The
 * stack is the one copied at switch-out, where the thread resumes: no
 * second copy is made at wake-up (which runs in another task's context,
 * where the woken thread's user memory cannot be read anyway).
 *
 * With aggregate set (`--aggregate kernel`) no event is shipped: the
 * stack is unwound here by frame pointers at switch-out and the blocked
 * time summed per stack in maps (agg.bpf.h).  With sched_delay too the
 * entry ("agg_start") follows the same rules: its start is set at
 * switch-out when runnable, else by the wake-up, and sched_wakeup_new
 * makes one for a new thread; it is kept as the ring path's event is,
 * in task storage ("agg_slot") or, from raw_tp, the hash "agg_start".
 * oncpu.bpf.h, included at the end, is the on-CPU sampler (a perf_event
 * program) in both modes; `--wall --aggregate kernel` attaches it beside
 * sched_switch, both summing into the same maps (the sampler's rows in
 * state OFFCPU_STATE_CPU).
 */
#include "vmlinux.h"
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "offcpu_event.h"

char LICENSE[] SEC("license") = "GPL";

/* Settings, written by user space before load. */
const volatile __u64 min_ns = 0;
const volatile __u64 max_ns = ~0ULL;
const volatile __u32 stack_size = 8192;
const volatile __u32 prob_thresh = ~0U;	/* sample when prandom <= it */
const volatile __u32 filter = 0;	/* 1: only the tgids in "tgids" */
const volatile __u32 self_tgid = 0;	/* never the recorder itself */
const volatile __u32 sched_delay = 0;	/* 1: run-queue delay, not off-CPU */
const volatile __u32 aggregate = 0;	/* 1: --aggregate kernel (agg.bpf.h) */
/* The bytes of the ring buffer "events" (its max_entries, set with it):
 * what bpf_ringbuf_query(BPF_RB_RING_SIZE) returns, without the call. */
#define RING_BYTES (4 << 20)
const volatile __u64 ring_size = RING_BYTES;
/* Fault injection (tests, SYM_OFFCPU_MISS_IN): N, one of every N
 * switch-ins with an event pending is ignored, as one the kernel did not
 * trace (unseen_switch_in()). */
const volatile __u32 fault_miss_in = 0;
__u64 fault_seen = 0;
/* Cost measurement (tests/bench/offcpu-bench.sh, SYM_OFFCPU_COST_OMIT):
 * OFFCPU_OMIT_* bits, parts of the event the ring path leaves out, so
 * that the BPF run time of each part can be read by difference.  The
 * verifier drops the branches of the bits not set: 0 costs nothing. */
const volatile __u32 cost_omit = 0;

#define PAGE 4096
#define STATE_DEAD 0x80	/* TASK_DEAD: switched out for good */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_event);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct offcpu_event);
} start SEC(".maps");

/* The processes to record (filter): OFFCPU_TGID_ON, or OFFCPU_TGID_AT_EXEC
 * until sched_process_exec() turns it on. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

/* Per process (tgid): the bytes of user stack to copy, learned by user
 * space from its unwinds (stacklearn.h, offcpu_stack_seen()). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, OFFCPU_LEARN_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} stack_sizes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_NCNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} events SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &what);

	if (c)
		*c += 1;
}

#include "kmemo.bpf.h"

/* The switched-out threads' events, from switch-out to switch-in.  The
 * tp_btf programs keep them in task storage ("slot"): one event per
 * thread, with its kernel stack memo (kmemo.bpf.h), allocated at its
 * first switch-out, written in place and reused (empty: pid 0), freed
 * with the task -- no allocation, free or copy of the ~21 KiB value per
 * switch.  The raw_tp programs have no BTF task
 * pointer for it and use the hash "start", keyed by thread id, filled
 * from "scratch" at switch-out and deleted at switch-in. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct slot_val);
} slot SEC(".maps");

#include "agg.bpf.h"

/* Field @f of task @t: a plain load when @t is a BTF pointer (@btf: the
 * tp_btf programs' arguments, bpf_get_current_task_btf()), where the
 * verifier allows it; else (raw_tp) bpf_probe_read_kernel(), a helper
 * call for each field.  The same CO-RE-relocated field either way. */
#define TASK_FIELD(btf, t, f) ((btf) ? (t)->f : BPF_CORE_READ(t, f))

static __always_inline __u32 task_state(struct task_struct *t, int btf)
{
	struct task_struct___old *o = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return TASK_FIELD(btf, t, __state);
	return (__u32)TASK_FIELD(btf, o, state);
}

static __always_inline __u32 state_class(__u32 s)
{
	if (s == 0)
		return OFFCPU_STATE_R;
	if (s & 2)
		return OFFCPU_STATE_D;
	if (s & 1)
		return OFFCPU_STATE_S;
	return OFFCPU_STATE_OTHER;
}

/* Is thread group @tgid (of a user task) one to record?  The cheapest
 * test first: every switch of the machine comes here, and with -p
 * nearly all of them fail the map lookup. */
static __always_inline int wanted(struct task_struct *t, __u32 tgid,
				  int btf)
{
	__u8 *on;

	if (tgid == 0 || tgid == self_tgid)
		return 0;
	if (filter) {
		on = bpf_map_lookup_elem(&tgids, &tgid);
		if (!on || *on != OFFCPU_TGID_ON)
			return 0;
	}
	if (TASK_FIELD(btf, t, flags) & PF_KTHREAD)
		return 0;
	return 1;
}

/* The time of this switch, read once, on first use: a switch of no
 * thread recorded (most of the machine's) reads no clock. */
static __always_inline __u64 now_ns(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now;
}

/* The user registers @r (bpf_task_pt_regs() of a BTF task pointer), in
 * unwind.h's order (AX BX CX DX SI DI BP SP IP R8-R15). */
static __always_inline int user_regs(struct offcpu_event *e,
				     struct pt_regs *r)
{
	if (!r || (r->cs & 3) != 3)
		return -1;
	e->regs[0] = r->ax;
	e->regs[1] = r->bx;
	e->regs[2] = r->cx;
	e->regs[3] = r->dx;
	e->regs[4] = r->si;
	e->regs[5] = r->di;
	e->regs[6] = r->bp;
	e->regs[7] = r->sp;
	e->regs[8] = r->ip;
	e->regs[9] = r->r8;
	e->regs[10] = r->r9;
	e->regs[11] = r->r10;
	e->regs[12] = r->r11;
	e->regs[13] = r->r12;
	e->regs[14] = r->r13;
	e->regs[15] = r->r14;
	e->regs[16] = r->r15;
	return 0;
}

/* The bytes of user stack to copy for process @tgid: the size user space
 * learned from its unwinds (stacklearn.h), if any and within
 * stack_size, else stack_size: a process starts with whole copies. */
static __always_inline __u32 stack_cap(__u32 tgid)
{
	__u32 *v = bpf_map_lookup_elem(&stack_sizes, &tgid);

	if (v && *v && *v < stack_size)
		return *v;
	return stack_size;
}

/* Copy the user stack from sp: the rest of sp's page, then the following
 * pages, the last one in part, up to e->stack_cap bytes in all; stops at
 * the first page not readable. */
static __always_inline __u32 copy_stack(struct offcpu_event *e)
{
	__u64 sp = e->regs[7], cap = stack_cap(e->pid);
	__u64 len = PAGE - (sp & (PAGE - 1)), off, n;
	__u32 i;

	/* (64-bit arithmetic throughout: the verifier must see the bounds
	 * on the registers passed as sizes) */
	if (cap > OFFCPU_STACK_MAX)
		cap = OFFCPU_STACK_MAX;
	e->stack_cap = (__u32)cap;
	if (len > cap)
		len = cap;
	if (len == 0 || len > PAGE)
		return 0;
	if (bpf_probe_read_user(e->stack, len, (void *)sp))
		return 0;
	for (i = 0; i < OFFCPU_STACK_MAX / PAGE; i++) {
		off = len;
		if (off >= cap || off > OFFCPU_STACK_MAX - PAGE)
			break;
		n = cap - off;
		if (n > PAGE)
			n = PAGE;
		if (bpf_probe_read_user(e->stack + off, n, (void *)(sp + off)))
			break;
		len = off + n;
	}
	return (__u32)len;
}

/* When @prev, switched out in state @st, starts waiting for a CPU:
 * now if it stays runnable, else at its wake-up (0 until then). */
static __always_inline __u64 wait_start(bool preempt, __u32 st, __u64 now)
{
	if (!sched_delay)
		return now;
	return preempt || st == 0 ? now : 0;
}

/* The event to fill for thread @t (@tid) at switch-out: its slot (@btf:
 * @t is a BTF pointer), else the per-CPU scratch, copied into "start"
 * by slot_done(). */
static __always_inline struct offcpu_event *
slot_new(struct task_struct *t, __u32 tid, int btf)
{
	__u32 zero = 0;

	if (btf)
		return bpf_task_storage_get(&slot, t, 0,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
	return bpf_map_lookup_elem(&scratch, &zero);
}

static __always_inline void slot_done(struct offcpu_event *e, __u32 tid,
				      int btf)
{
	if (!btf && bpf_map_update_elem(&start, &tid, e, BPF_ANY))
		count(OFFCPU_CNT_MAPFULL);
}

/* The pending event of thread @t (@tid), or NULL. */
static __always_inline struct offcpu_event *
slot_find(struct task_struct *t, __u32 tid, int btf)
{
	struct offcpu_event *e;

	if (!btf)
		return bpf_map_lookup_elem(&start, &tid);
	e = bpf_task_storage_get(&slot, t, 0, 0);
	return e && e->pid ? e : NULL;
}

static __always_inline void slot_clear(struct offcpu_event *e, __u32 tid,
				       int btf)
{
	if (btf)
		e->pid = 0;
	else
		bpf_map_delete_elem(&start, &tid);
}

/*
 * When thread @t, being switched out @now, last got a CPU, in
 * bpf_ktime_get_ns()'s clock; 0 when not known.  For a switch-in that
 * sched_switch did not show: some kernels switch away from some tasks
 * without the tracepoint (measured: the VM kernel of PLATFORM.md never
 * shows its init's threads switched out), so the thread they hand the
 * CPU to is switched in unseen.  sched_info.last_arrival is set at
 * every switch-in, in the run queue's clock; this switch-out has just
 * updated that clock (__schedule() does first), on @t's run queue, the
 * one of this CPU: their difference is how long ago @t arrived.
 */
static __always_inline __u64 unseen_arrival(struct task_struct *t,
					    __u64 now)
{
	__u64 arr, clk;

	if (!bpf_core_field_exists(t->sched_info) ||
	    !bpf_core_field_exists(t->se.cfs_rq->rq))
		return 0;
	clk = BPF_CORE_READ(t, se.cfs_rq, rq, clock);
	arr = BPF_CORE_READ(t, sched_info.last_arrival);
	if (!arr || !clk || arr > clk || clk - arr > now)
		return 0;
	return now - (clk - arr);
}

/* Fault injection: ignore this switch-in? */
static __always_inline int fault_miss(void)
{
	return fault_miss_in && fault_seen++ % fault_miss_in == 0;
}

/* Event @e, with its stack_len bytes of stack, into the ring buffer, or
 * counted lost.  User space drains it on a timer: no wake-up, unless the
 * ring is half full (a burst the timer has not caught up with). */
static __always_inline void ring_out(struct offcpu_event *e)
{
	__u32 len = e->stack_len;
	__u64 wake = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
		     ring_size / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

	if (cost_omit & OFFCPU_OMIT_RING) {
		count(OFFCPU_CNT_EVENTS);
		return;
	}
	if (len > OFFCPU_STACK_MAX)
		len = OFFCPU_STACK_MAX;
	if (bpf_ringbuf_output(&events, e,
			       __builtin_offsetof(struct offcpu_event, stack) +
			       len, wake))
		count(OFFCPU_CNT_LOST);
	else
		count(OFFCPU_CNT_EVENTS);
}

/* Ship thread event @e, switched in at @in: its blocked time within
 * [min_ns, max_ns] goes to the ring buffer. */
static __always_inline void ship(struct offcpu_event *e, __u64 in)
{
	__u64 d;

	if (!e->start_ns) {	/* --sched-delay: its wake-up was not seen */
		count(OFFCPU_CNT_NOWAKE);
		return;
	}
	d = in - e->start_ns;
	if (d < min_ns || d > max_ns) {
		count(OFFCPU_CNT_FILTERED);
		return;
	}
	e->weight_ns = d;
	ring_out(e);
}

/* Is a pending entry that began at @start_ns older than thread @t: left
 * by an exited thread whose id @t reuses (raw_tp's and --aggregate
 * kernel's maps are keyed by thread id; task storage goes with its
 * task)?  0: --sched-delay's wait not begun, nothing to tell. */
static __always_inline bool stale(__u64 start_ns, struct task_struct *t)
{
	return start_ns && start_ns < BPF_CORE_READ(t, start_time);
}

/* Thread @t, switched out @now, still has event @e pending from its last
 * switch-out: its switch-in was not traced.  Ship @e with the blocked
 * time up to that switch-in, from sched_info, or count it lost (also
 * when @e is another, exited thread's: the last block of that thread). */
static __always_inline void unseen_switch_in(struct offcpu_event *e,
					     struct task_struct *t, __u64 now)
{
	__u64 in = unseen_arrival(t, now);

	count(OFFCPU_CNT_UNSEEN);
	if (!in || in < e->start_ns || stale(e->start_ns, t)) {
		count(OFFCPU_CNT_UNSEEN_LOST);
		return;
	}
	ship(e, in);
}

static __always_inline void switch_out(void *ctx, struct task_struct *prev,
				       bool preempt, __u64 *clock, int btf)
{
	__u32 tgid = TASK_FIELD(btf, prev, tgid), tid, st;
	struct task_struct *cur;
	struct pt_regs *regs;
	struct offcpu_event *e, *old;
	__u64 now;

	if (!wanted(prev, tgid, btf))
		return;
	st = task_state(prev, btf);
	if (st & STATE_DEAD)
		return;
	if (prob_thresh != ~0U && bpf_get_prandom_u32() > prob_thresh)
		return;
	tid = TASK_FIELD(btf, prev, pid);
	now = now_ns(clock);
	/* (prev, as a trusted pointer: for its slot (tp_btf) and its
	 * registers) */
	cur = bpf_get_current_task_btf();
	e = slot_new(btf ? cur : prev, tid, btf);
	if (!e) {
		count(OFFCPU_CNT_MAPFULL);
		return;
	}
	/* (tp_btf: the slot still pending; raw_tp: an entry in "start") */
	old = btf ? (e->pid ? e : NULL) : bpf_map_lookup_elem(&start, &tid);
	if (old)
		unseen_switch_in(old, prev, now);
	e->start_ns = wait_start(preempt, st, now);
	e->weight_ns = 0;
	e->pid = tgid;
	e->tid = tid;
	e->state = sched_delay && preempt ? OFFCPU_STATE_R : state_class(st);
	regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	e->user = user_regs(e, regs) == 0;
	e->stack_cap = 0;
	e->stack_len = e->user && !(cost_omit & OFFCPU_OMIT_USTACK) ?
		       copy_stack(e) : 0;
	if (e->user && !e->stack_len)
		count(OFFCPU_CNT_NOSTACK);
	/* (user space drops the frames of the program and the tracepoint:
	 * offcpu_kernel_skip().  Here, not at switch-in with
	 * bpf_get_task_stack(next): that walk leaves out every function of
	 * the scheduler's and the locks' text, __schedule, schedule,
	 * do_nanosleep..., and a switch-in the kernel did not trace would
	 * leave the event none; docs/record.md, "The kernel stack at
	 * switch-in"; tp_btf: the walk before, when the words it read are
	 * unchanged, kmemo.bpf.h) */
	if (cost_omit & OFFCPU_OMIT_KSTACK)
		e->kstack_len = 0;
	else if (btf && sched_lo)
		kstack_memo(ctx, e, regs);
	else
		e->kstack_len = bpf_get_stack(ctx, e->kstack,
					      sizeof(e->kstack), 0);
	slot_done(e, tid, btf);
}

static __always_inline void switch_in(struct task_struct *next,
				      __u64 *clock, int btf)
{
	__u32 tid = TASK_FIELD(btf, next, pid);
	struct offcpu_event *e;

	/* (an idle task, pid 0, is never recorded: no lookup for it) */
	if (!tid)
		return;
	e = slot_find(next, tid, btf);
	if (!e || fault_miss())
		return;
	ship(e, now_ns(clock));
	slot_clear(e, tid, btf);
}

/* --aggregate kernel: entry @a of thread @tid, switched in at @in: its
 * blocked time within [min_ns, max_ns] into agg_add(). */
static __always_inline void agg_end(struct agg_start *a, __u32 tid,
				    __u64 in)
{
	__u64 d = in - a->start_ns;

	if (!a->start_ns)	/* --sched-delay: its wake-up was not seen */
		count(OFFCPU_CNT_NOWAKE);
	else if (d < min_ns || d > max_ns)
		count(OFFCPU_CNT_FILTERED);
	else
		agg_add(&a->s, tid, a->state, d);
}

/* As unseen_switch_in(), for entry @a of thread @t (@tid). */
static __always_inline void agg_unseen(struct agg_start *a,
				       struct task_struct *t, __u32 tid,
				       __u64 now)
{
	__u64 in = unseen_arrival(t, now);

	count(OFFCPU_CNT_UNSEEN);
	if (!in || in < a->start_ns || stale(a->start_ns, t)) {
		count(OFFCPU_CNT_UNSEEN_LOST);
		return;
	}
	agg_end(a, tid, in);
}

/* --aggregate kernel: thread @t's (@tid's) entry to fill, as slot_new():
 * its task storage (@btf), else the per-CPU scratch that
 * agg_slot_done() copies into "agg_start". */
static __always_inline struct agg_start *
agg_slot_new(struct task_struct *t, int btf)
{
	__u32 zero = 0;

	if (btf)
		return bpf_task_storage_get(&agg_slot, t, 0,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
	return bpf_map_lookup_elem(&agg_scratch, &zero);
}

static __always_inline void agg_slot_done(struct agg_start *a, __u32 tid,
					  int btf)
{
	a->pending = 1;
	if (!btf && bpf_map_update_elem(&agg_start, &tid, a, BPF_ANY))
		count(OFFCPU_CNT_MAPFULL);
}

/* Thread @t's (@tid's) pending entry, or NULL. */
static __always_inline struct agg_start *
agg_slot_find(struct task_struct *t, __u32 tid, int btf)
{
	struct agg_start *a;

	if (!btf)
		return bpf_map_lookup_elem(&agg_start, &tid);
	a = bpf_task_storage_get(&agg_slot, t, 0, 0);
	return a && a->pending ? a : NULL;
}

static __always_inline void agg_slot_clear(struct agg_start *a, __u32 tid,
					   int btf)
{
	if (btf)
		a->pending = 0;
	else
		bpf_map_delete_elem(&agg_start, &tid);
}

/* --aggregate kernel: at switch-out the stack by frame pointers (no
 * copy) into the thread's entry; at switch-in its blocked time into
 * agg_add(). */
static __always_inline void agg_switch_out(void *ctx,
					   struct task_struct *prev,
					   bool preempt, __u64 now, int btf)
{
	__u32 tgid = TASK_FIELD(btf, prev, tgid);
	__u32 tid = TASK_FIELD(btf, prev, pid), st = task_state(prev, btf);
	struct agg_start *a, *old;

	if (!wanted(prev, tgid, btf) || (st & STATE_DEAD))
		return;
	if (prob_thresh != ~0U && bpf_get_prandom_u32() > prob_thresh)
		return;
	/* (tp_btf: prev is the current task, as a trusted pointer) */
	a = agg_slot_new(btf ? bpf_get_current_task_btf() : prev, btf);
	if (!a) {
		count(OFFCPU_CNT_MAPFULL);
		return;
	}
	/* (an entry still pending: its switch-in was not traced,
	 * unseen_arrival()) */
	old = btf ? (a->pending ? a : NULL) :
		    bpf_map_lookup_elem(&agg_start, &tid);
	if (old)
		agg_unseen(old, prev, tid, now);
	/* (--sched-delay: as switch_out(), the wait starts now or at the
	 * wake-up; the stack is where the thread resumes) */
	a->start_ns = wait_start(preempt, st, now);
	a->state = sched_delay && preempt ? OFFCPU_STATE_R : state_class(st);
	agg_unwind(ctx, &a->s, tgid);
	agg_slot_done(a, tid, btf);
}

static __always_inline void agg_switch_in(struct task_struct *next,
					  __u64 now, int btf)
{
	__u32 tid = TASK_FIELD(btf, next, pid);
	struct agg_start *a;

	if (!tid)	/* (an idle task: never recorded) */
		return;
	a = agg_slot_find(next, tid, btf);
	if (!a || fault_miss())
		return;
	agg_end(a, tid, now);
	agg_slot_clear(a, tid, btf);
}

static __always_inline int on_switch(void *ctx, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next, int btf)
{
	__u64 now = 0;

	if (aggregate) {
		now = bpf_ktime_get_ns();
		agg_switch_out(ctx, prev, preempt, now, btf);
		agg_switch_in(next, now, btf);
		return 0;
	}
	switch_out(ctx, prev, preempt, &now, btf);
	switch_in(next, &now, btf);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, 1);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, 0);
}

/* --sched-delay --aggregate kernel: new thread @p of @tgid (@tid) is
 * runnable: an entry from now whose stack is the one frame where it will
 * start, the ip of its user registers (@btf; a frame-pointer walk of
 * another task's user stack is not possible from here: bpf_get_stack()
 * reads the current task's), in state OTHER (woken), as on_wakeup_new()'s
 * event.  From raw_tp no frame: the row is dropped as the ring path's. */
static __always_inline int agg_wakeup_new(struct task_struct *p, __u32 tgid,
					  __u32 tid, int btf)
{
	struct pt_regs *r;
	struct agg_start *a;

	a = agg_slot_new(p, btf);
	if (!a) {
		count(OFFCPU_CNT_MAPFULL);
		return 0;
	}
	a->start_ns = bpf_ktime_get_ns();
	a->state = OFFCPU_STATE_OTHER;
	a->s.tgid = tgid;
	a->s.nkern = 0;
	a->s.nuser = 0;
	r = btf ? (struct pt_regs *)bpf_task_pt_regs(p) : NULL;
	if (r && (r->cs & 3) == 3) {
		a->s.pc[AGG_KERN_MAX] = r->ip;
		a->s.nuser = 1;
	}
	agg_slot_done(a, tid, btf);
	return 0;
}

/* --sched-delay: new thread @p (@btf: a BTF pointer) is runnable for the
 * first time: an entry from now, with its user registers (where it will
 * start: the return from clone) and its stack, read in the parent's
 * context -- the same memory for a thread, a copy-on-write copy still
 * identical for a fork.  From raw_tp (no BTF pointer) no stack. */
static __always_inline int on_wakeup_new(struct task_struct *p, int btf)
{
	__u32 tgid = TASK_FIELD(btf, p, tgid), tid = TASK_FIELD(btf, p, pid);
	struct offcpu_event *e;

	if (!sched_delay || !wanted(p, tgid, btf))
		return 0;
	if (aggregate)
		return agg_wakeup_new(p, tgid, tid, btf);
	e = slot_new(p, tid, btf);
	if (!e) {
		count(OFFCPU_CNT_MAPFULL);
		return 0;
	}
	e->start_ns = bpf_ktime_get_ns();
	e->weight_ns = 0;
	e->pid = tgid;
	e->tid = tid;
	e->state = OFFCPU_STATE_OTHER;	/* woken: counted as such */
	e->user = btf &&
		  user_regs(e, (struct pt_regs *)bpf_task_pt_regs(p)) == 0;
	e->stack_cap = 0;
	e->stack_len = e->user ? copy_stack(e) : 0;
	e->kstack_len = 0;
	slot_done(e, tid, btf);
	return 0;
}

/* --sched-delay: a blocked thread @p becomes runnable; its wait for a CPU
 * starts now (if it is not already waiting). */
static __always_inline int on_wakeup(struct task_struct *p, int btf)
{
	__u32 tid = TASK_FIELD(btf, p, pid);
	struct agg_start *a;
	struct offcpu_event *e;

	if (aggregate) {
		a = agg_slot_find(p, tid, btf);
		if (a && !a->start_ns)
			a->start_ns = bpf_ktime_get_ns();
		return 0;
	}
	e = slot_find(p, tid, btf);
	if (e && !e->start_ns)
		e->start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup_btf, struct task_struct *p)
{
	return on_wakeup(p, 1);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_btf, struct task_struct *p)
{
	return on_wakeup_new(p, 1);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(sched_wakeup_raw, struct task_struct *p)
{
	return on_wakeup(p, 0);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_raw, struct task_struct *p)
{
	return on_wakeup_new(p, 0);
}

/* A process a recorded one forks is recorded from its birth, as perf's
 * inherited events are (user space would learn of it from the FORK
 * record only, up to a round later: its first waits would be missed).
 * A thread (same tgid) is covered already; a child forked before the
 * command's exec (value OFFCPU_TGID_AT_EXEC) is not the command's. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent,
	     struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u8 *on, v = OFFCPU_TGID_ON;

	if (ptgid == ctgid)
		return 0;
	on = bpf_map_lookup_elem(&tgids, &ptgid);
	if (on && *on == OFFCPU_TGID_ON &&
	    bpf_map_update_elem(&tgids, &ctgid, &v, BPF_ANY))
		count(OFFCPU_CNT_TGIDSFULL);
	return 0;
}

/* A recorded process whose last thread exits leaves the filter, so that
 * the map holds the live processes only (a command that runs thousands
 * of processes, make, does not fill it) and a reused pid is not taken
 * for it. */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(sched_process_exit, struct task_struct *t)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);

	/* (signal->live is decremented before the tracepoint) */
	if (BPF_CORE_READ(t, signal, live.counter) == 0)
		bpf_map_delete_elem(&tgids, &tgid);
	return 0;
}

/* A process recorded from its execve() on starts now: the new image's
 * registers are set (the tracepoint follows the binary's load), so
 * nothing before -- the recorder's forked code, the exec's own work
 * with the old image's registers -- is recorded as the program's. */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(sched_process_exec)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u8 *on = bpf_map_lookup_elem(&tgids, &tgid);

	if (on && *on == OFFCPU_TGID_AT_EXEC)
		*on = OFFCPU_TGID_ON;
	return 0;
}

#include "oncpu.bpf.h"
