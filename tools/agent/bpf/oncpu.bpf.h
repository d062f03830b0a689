/*
 * oncpu.bpf.h - the on-CPU sampler of `sym record --aggregate user|kernel`
 * (no --off-cpu), included at the end of offcpu.bpf.c, whose helpers and
 * maps it shares: a perf_event program that user space attaches to one
 * cpu-clock event per CPU at -F's frequency.
 *
 * Each sample of a wanted thread is, with aggregate 0 (user), an event
 * like an off-CPU one (struct offcpu_event: the user registers, a copy of
 * the user stack for the CFI unwinder, the kernel stack; weight_ns the
 * event's period) into the ring buffer "events", without waking user
 * space; with aggregate 1 (kernel), agg_add() of the frame-pointer stack.
 */
#ifndef SYM_ONCPU_BPF_H
#define SYM_ONCPU_BPF_H

/* The perf_event program's context (<linux/bpf_perf_event.h>): x86-64's
 * struct pt_regs of the UAPI, 21 words (cs the 18th), then the period.
 * Its fields may only be read as whole words. */
struct oncpu_ctx {
	__u64 regs[21];
	__u64 sample_period;
	__u64 addr;
};

SEC("perf_event")
int oncpu_sample(struct oncpu_ctx *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0;
	struct agg_start *a;
	struct offcpu_event *e;

	if (!wanted(t, tgid, 1))
		return 0;
	if (aggregate) {
		a = bpf_map_lookup_elem(&agg_scratch, &zero);
		if (!a)
			return 0;
		agg_unwind(ctx, &a->s, tgid);
		agg_add(&a->s, tid, OFFCPU_STATE_CPU, ctx->sample_period);
		return 0;
	}
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	e->start_ns = bpf_ktime_get_ns();
	e->weight_ns = ctx->sample_period;
	e->pid = tgid;
	e->tid = tid;
	e->state = OFFCPU_STATE_CPU;
	e->user = user_regs(e, (struct pt_regs *)bpf_task_pt_regs(t)) == 0;
	e->stack_cap = 0;
	e->stack_len = e->user ? copy_stack(e) : 0;
	if (e->user && !e->stack_len)
		count(OFFCPU_CNT_NOSTACK);
	e->kstack_len = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);
	ring_out(e);
	return 0;
}

#endif
