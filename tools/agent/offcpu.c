/*
 * offcpu.c - load, attach and drain bpf/offcpu.bpf.c (offcpu.h).
 *
 * The skeleton (build/gen/offcpu.skel.h) is made by `bpftool gen
 * skeleton` from the BPF object, which clang compiles with CO-RE
 * relocations against bpf/vmlinux.h; libbpf resolves them against
 * /sys/kernel/btf/vmlinux at load time, so no kernel headers are needed
 * where it runs.  The tp_btf program is tried first, the raw_tp one if
 * tp_btf cannot be loaded or attached.  The on-CPU sampler (cpu_hz) is
 * the perf_event program instead, attached to a cpu-clock event on each
 * online CPU (`--wall --aggregate kernel`: beside sched_switch).  With --aggregate kernel the maps of bpf/agg.bpf.h are
 * sized and drained (aggdrain.c), the ring buffer and the per-thread map
 * of the shipping path shrunk to nothing, and the other way round.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "offcpu.h"
#include "offcpu.skel.h"
#include "aggdrain.h"
#include "stacklearn.h"
#include "base.h"

/* The tracing functions between __schedule() and the BPF program, whose
 * frames lead every kernel stack (how many depends on how many programs
 * the tracepoint has): bpf_trace_run4() always, __traceiter_sched_switch()
 * when several are attached, __bpf_trace_sched_switch() on some kernels. */
static const char *const tracing_fns[] = {
	"bpf_trace_run4", "__traceiter_sched_switch",
	"__bpf_trace_sched_switch",
};
#define NTRACING (sizeof(tracing_fns) / sizeof(*tracing_fns))

struct offcpu {
	struct offcpu_bpf *skel;
	/* From /proc/kallsyms: the kernel's text and the tracing functions'
	 * ranges; stext 0 when unknown. */
	uint64_t stext, etext, tr_lo[NTRACING], tr_hi[NTRACING];
	/* __schedule()'s and do_syscall_64()'s text, for the kernel stack
	 * memo (0: not found), and its mode (SYM_KMEMO). */
	uint64_t sched_lo, sched_hi, sys_lo, sys_hi;
	enum offcpu_kmemo kmemo;
	struct ring_buffer *rb;
	/* An epoll descriptor on the ring buffer, edge-triggered: readable
	 * after the BPF side's wake-up (the ring half full) until the next
	 * drain; -1 with --aggregate kernel.  offcpu_poll_fd(). */
	int wake_fd;
	/* sched_switch, sched_wakeup, sched_wakeup_new (--sched-delay) */
	struct bpf_link *link[3];
	/* (unless all) sched_process_exec: offcpu_add_exec()'s;
	 * sched_process_fork and _exit: the filter follows forks */
	struct bpf_link *exec_link, *fork_link, *exit_link;
	offcpu_fn fn;
	void *ctx;
	const char *kind;
	/* Why the tp_btf programs were not loaded when raw_tp was instead
	 * ("" otherwise); offcpu_fallback_why(). */
	char btf_why[128];
	/* The ring buffer's bytes; the bytes the current drain
	 * took, and when the last one was (CLOCK_MONOTONIC ns). */
	uint64_t ring_bytes, took, last_drain_ns;
	/* How long the last drain said to wait (offcpu_wait_ns()). */
	uint64_t wait_ns;
	/* --aggregate kernel */
	offcpu_agg_fn agg;
	struct aggdrain *ad;
	/* The learned stack sizes (NULL: fixed), and the map updates that
	 * failed. */
	struct stacklearn *sl;
	uint64_t sl_failed;
	/* offcpu_counters(): the kernel refused a batch lookup. */
	bool no_batch;
	/* The on-CPU sampler: one perf event (and link) per online CPU. */
	int *pe_fds;
	struct bpf_link **pe_links;
	int npe;
};

/* libbpf's own messages only with SYM_BPF_DEBUG set: ours say what
 * failed. */
static int quiet_print(enum libbpf_print_level l, const char *fmt,
		       va_list ap)
{
	if (!getenv("SYM_BPF_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* A function found at @lo ends at the first text symbol @a above it:
 * *@hi, the lowest seen so far. */
static void range_end(uint64_t lo, uint64_t *hi, uint64_t a)
{
	if (lo && a > lo && (!*hi || a < *hi))
		*hi = a;
}

/* One /proc/kallsyms line into the ranges: pass 0 finds the starts,
 * pass 1 each tracing function's end (the next text symbol). */
static void kallsyms_line(struct offcpu *oc, const char *line, int pass)
{
	unsigned long long a;
	char type, name[128];

	if (sscanf(line, "%llx %c %127s", &a, &type, name) != 3 || !a ||
	    (type != 't' && type != 'T'))
		return;
	if (pass == 0) {
		if (strcmp(name, "_stext") == 0)
			oc->stext = a;
		else if (strcmp(name, "_etext") == 0)
			oc->etext = a;
		else if (strcmp(name, "__schedule") == 0)
			oc->sched_lo = a;
		else if (strcmp(name, "do_syscall_64") == 0)
			oc->sys_lo = a;
		for (size_t i = 0; i < NTRACING; i++)
			if (strcmp(name, tracing_fns[i]) == 0)
				oc->tr_lo[i] = a;
		return;
	}
	for (size_t i = 0; i < NTRACING; i++)
		range_end(oc->tr_lo[i], &oc->tr_hi[i], a);
	range_end(oc->sched_lo, &oc->sched_hi, a);
	range_end(oc->sys_lo, &oc->sys_hi, a);
}

/* Read the ranges; without them (no kallsyms, addresses hidden by
 * kptr_restrict) offcpu_kernel_skip() falls back to a count. */
static void read_kallsyms(struct offcpu *oc)
{
	char line[512];

	for (int pass = 0; pass < 2; pass++) {
		FILE *f = fopen("/proc/kallsyms", "re");

		if (!f)
			goto none;
		while (fgets(line, sizeof(line), f))
			kallsyms_line(oc, line, pass);
		fclose(f);
		if (!oc->stext || oc->etext <= oc->stext || !oc->tr_lo[0])
			goto none;
	}
	if (!oc->sched_hi)
		oc->sched_lo = 0;
	if (!oc->sys_hi)
		oc->sys_lo = 0;
	return;
none:
	/* Nothing half read: no text range, no memo. */
	oc->stext = 0;
	oc->sched_lo = 0;
	oc->sys_lo = 0;
}

/* SYM_KMEMO, read once (offcpu_kmemo_mode()): "off" turns the kernel
 * stack memo off, "check" walks at every hit too and counts the
 * differences (OFFCPU_CNT_KMEMO_BAD), "fault" is the check with a memo
 * that lies (its test). */
static enum offcpu_kmemo kmemo_env(void)
{
	const char *v = getenv("SYM_KMEMO");

	if (!v)
		return OFFCPU_KMEMO_ON;
	if (strcmp(v, "off") == 0)
		return OFFCPU_KMEMO_OFF;
	if (strcmp(v, "check") == 0)
		return OFFCPU_KMEMO_CHECK;
	if (strcmp(v, "fault") == 0)
		return OFFCPU_KMEMO_FAULT;
	return OFFCPU_KMEMO_ON;
}

/* The kernel stack memo's settings (kmemo.bpf.h): none when off, or
 * without __schedule()'s address (sched_lo 0). */
static void set_kmemo(struct offcpu_bpf *s, const struct offcpu *oc)
{
	if (oc->kmemo == OFFCPU_KMEMO_OFF)
		return;
	s->rodata->sched_lo = oc->sched_lo;
	s->rodata->sched_hi = oc->sched_hi;
	s->rodata->sys_lo = oc->sys_lo;
	s->rodata->sys_hi = oc->sys_hi;
	s->rodata->text_lo = oc->stext;
	s->rodata->kmemo_fault = oc->kmemo == OFFCPU_KMEMO_FAULT;
	s->rodata->kmemo_check = oc->kmemo >= OFFCPU_KMEMO_CHECK;
}

size_t offcpu_kernel_skip(const struct offcpu *oc, const uint64_t *pcs,
			  size_t n)
{
	size_t k = 0, i;

	if (!oc->stext)
		return n < 2 ? n : 2;	/* the program and bpf_trace_run4 */
	for (; k < n; k++) {
		if (pcs[k] < oc->stext || pcs[k] >= oc->etext)
			continue;	/* the BPF program */
		for (i = 0; i < NTRACING; i++)
			if (pcs[k] >= oc->tr_lo[i] && pcs[k] < oc->tr_hi[i])
				break;
		if (i == NTRACING)
			break;
	}
	return k;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct offcpu *oc = ctx;
	const struct offcpu_event *e = data;

	if (size < offsetof(struct offcpu_event, stack) ||
	    size < offsetof(struct offcpu_event, stack) + e->stack_len)
		return 0;
	oc->took += size;
	oc->fn(oc->ctx, e, size);
	return 0;
}

static void set_rodata(struct offcpu_bpf *s, const struct offcpu_opts *o)
{
	double p = o->prob > 0 && o->prob < 1 ? o->prob : 1;

	s->rodata->min_ns = o->min_ns;
	s->rodata->max_ns = o->max_ns ? o->max_ns : ~0ULL;
	s->rodata->stack_size = o->stack_size < OFFCPU_STACK_MAX ?
				o->stack_size : OFFCPU_STACK_MAX;
	s->rodata->prob_thresh = p >= 1 ? ~0U :
				 (uint32_t)(p * 4294967295.0);
	s->rodata->filter = !o->all;
	s->rodata->self_tgid = (uint32_t)getpid();
	s->rodata->sched_delay = o->sched_delay;
	s->rodata->aggregate = o->agg != NULL;
	s->rodata->agg_hash_mask = o->hash_bits && o->hash_bits < 64 ?
				   (1ULL << o->hash_bits) - 1 : ~0ULL;
	s->rodata->fault_miss_in = o->miss_in;
	s->rodata->cost_omit = o->cost_omit;
}

/* The ring buffer's size, and the program's copy of it (ring_size). */
static void set_ring(struct offcpu_bpf *s, uint32_t bytes)
{
	bpf_map__set_max_entries(s->maps.events, bytes);
	s->rodata->ring_size = bytes;
}

/* Are the sched_switch programs attached (all but the sampler alone)? */
static bool switches(const struct offcpu_opts *o)
{
	return !o->cpu_hz || (o->wall && o->agg);
}

/* The maps' sizes: the path not taken gets one entry (a ring buffer one
 * page), so that the kernel memory measured is the path's own. */
static void set_sizes(struct offcpu_bpf *s, const struct offcpu_opts *o)
{
	bool agg = o->agg != NULL;
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);

	if (o->max_threads)
		bpf_map__set_max_entries(s->maps.start, o->max_threads);
	if (o->ring_bytes)
		set_ring(s, o->ring_bytes);
	if (agg && o->agg_stacks)
		bpf_map__set_max_entries(s->maps.agg_stacks, o->agg_stacks);
	if (agg && o->agg_rows)
		bpf_map__set_max_entries(s->maps.agg_counts, o->agg_rows);
	if (o->max_threads && agg)
		bpf_map__set_max_entries(s->maps.agg_start, o->max_threads);
	if (agg || o->cpu_hz)
		bpf_map__set_max_entries(s->maps.start, 1);
	if (agg) {
		set_ring(s, page);
	} else {
		bpf_map__set_max_entries(s->maps.agg_stacks, 1);
		bpf_map__set_max_entries(s->maps.agg_counts, 1);
	}
	if (!agg || !switches(o))
		bpf_map__set_max_entries(s->maps.agg_start, 1);
	if (agg || o->fixed_stack)
		bpf_map__set_max_entries(s->maps.stack_sizes, 1);
}

/* The on-CPU sampler: a cpu-clock event on each online CPU, at @hz (a
 * period of 1/@hz s of CPU time), with
 * the program attached. */
static int attach_cpu(struct offcpu *oc, struct offcpu_bpf *s, uint32_t hz)
{
	int ncpu = libbpf_num_possible_cpus();
	struct perf_event_attr a;
	int fd;

	if (ncpu <= 0)
		return -EINVAL;
	oc->pe_fds = calloc((size_t)ncpu, sizeof(*oc->pe_fds));
	oc->pe_links = calloc((size_t)ncpu, sizeof(*oc->pe_links));
	if (!oc->pe_fds || !oc->pe_links)
		return -ENOMEM;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	/* A fixed period, as the perf-event path's (record.c make_attr()):
	 * each sample weighs it. */
	a.sample_period = 1000000000ULL / hz ? 1000000000ULL / hz : 1;
	for (int c = 0; c < ncpu; c++) {
		fd = (int)syscall(SYS_perf_event_open, &a, -1, c, -1,
				  PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue;	/* not online */
			return -errno;
		}
		oc->pe_fds[oc->npe] = fd;
		oc->pe_links[oc->npe] = bpf_program__attach_perf_event(
			s->progs.oncpu_sample, fd);
		oc->npe++;
		if (!oc->pe_links[oc->npe - 1])
			return errno ? -errno : -EINVAL;
	}
	return oc->npe ? 0 : -ENODEV;
}

/* The programs of one kind (@btf: tp_btf), sched_switch first; the
 * wake-up ones only with @delay.  Returns how many. */
static size_t progs_of(struct offcpu_bpf *s, bool btf, bool delay,
		       struct bpf_program *p[3])
{
	p[0] = btf ? s->progs.sched_switch_btf : s->progs.sched_switch_raw;
	p[1] = btf ? s->progs.sched_wakeup_btf : s->progs.sched_wakeup_raw;
	p[2] = btf ? s->progs.sched_wakeup_new_btf :
		     s->progs.sched_wakeup_new_raw;
	return delay ? 3 : 1;
}

/* Load only the programs progs_of() names (@sw: with sched_switch) and
 * the sampler (@cpu). */
static void set_autoload(struct offcpu_bpf *s, bool btf, bool delay,
			 bool sw, bool cpu)
{
	struct bpf_program *p[3];
	size_t n;

	for (int k = 0; k < 2; k++) {
		n = progs_of(s, k, true, p);
		for (size_t i = 0; i < n; i++)
			bpf_program__set_autoload(p[i], sw && k == btf &&
						  (i == 0 || delay));
	}
	bpf_program__set_autoload(s->progs.oncpu_sample, cpu);
}

/* The filter's programs (not with all): offcpu_add_exec()'s processes
 * start at their execve(), forks of recorded processes are recorded
 * from their birth, and exited processes leave the map. */
static int attach_filter(struct offcpu *oc, struct offcpu_bpf *s)
{
	oc->exec_link = bpf_program__attach(s->progs.sched_process_exec);
	if (oc->exec_link)
		oc->fork_link = bpf_program__attach(s->progs.sched_process_fork);
	if (oc->fork_link)
		oc->exit_link = bpf_program__attach(s->progs.sched_process_exit);
	return oc->exit_link ? 0 : errno ? -errno : -EINVAL;
}

static int attach_all(struct offcpu *oc, struct offcpu_bpf *s, bool btf,
		      bool delay)
{
	struct bpf_program *p[3];
	size_t n = progs_of(s, btf, delay, p);

	for (size_t i = 0; i < n; i++) {
		oc->link[i] = bpf_program__attach(p[i]);
		if (!oc->link[i])
			return errno ? -errno : -EINVAL;
	}
	return 0;
}

static void detach_all(struct offcpu *oc)
{
	bpf_link__destroy(oc->exec_link);
	bpf_link__destroy(oc->fork_link);
	bpf_link__destroy(oc->exit_link);
	oc->exec_link = oc->fork_link = oc->exit_link = NULL;
	for (size_t i = 0; i < 3; i++) {
		bpf_link__destroy(oc->link[i]);
		oc->link[i] = NULL;
	}
	for (int i = 0; i < oc->npe; i++) {
		bpf_link__destroy(oc->pe_links[i]);
		close(oc->pe_fds[i]);
	}
	free(oc->pe_links);
	free(oc->pe_fds);
	oc->pe_links = NULL;
	oc->pe_fds = NULL;
	oc->npe = 0;
}

/* Open, load and attach one of the two programs (@btf: tp_btf). */
static int try_load(struct offcpu *oc, const struct offcpu_opts *o, bool btf)
{
	struct offcpu_bpf *s = offcpu_bpf__open();
	int err;

	if (!s)
		return errno ? -errno : -ENOMEM;
	set_rodata(s, o);
	set_kmemo(s, oc);
	set_sizes(s, o);
	set_autoload(s, btf, o->sched_delay, switches(o), o->cpu_hz > 0);
	bpf_program__set_autoload(s->progs.sched_process_exec, !o->all);
	bpf_program__set_autoload(s->progs.sched_process_fork, !o->all);
	bpf_program__set_autoload(s->progs.sched_process_exit, !o->all);
	/* raw_tp keeps its events in "start" and "agg_start", tp_btf in
	 * task storage: an old kernel without task storage can still take
	 * raw_tp. */
	bpf_map__set_autocreate(s->maps.slot, btf);
	bpf_map__set_autocreate(s->maps.agg_slot, btf);
	err = offcpu_bpf__load(s);
	if (err)
		goto fail;
	oc->skel = s;
	for (size_t k = 0; !err && k < o->npids; k++)
		err = offcpu_add_pid(oc, o->pids[k]);
	oc->skel = NULL;
	if (err)
		goto fail;
	err = o->all ? 0 : attach_filter(oc, s);
	if (!err && o->cpu_hz)
		err = attach_cpu(oc, s, o->cpu_hz);
	if (!err && switches(o))
		err = attach_all(oc, s, btf, o->sched_delay);
	if (err)
		goto fail;
	oc->skel = s;
	oc->kind = !o->cpu_hz ? (btf ? "tp_btf" : "raw_tp") :
		   !switches(o) ? "perf_event" :
		   btf ? "perf_event+tp_btf" : "perf_event+raw_tp";
	return 0;
fail:
	detach_all(oc);
	offcpu_bpf__destroy(s);
	return err < 0 ? err : -err;
}

static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* Name what is missing for error @err of loading. */
static void explain(int err, char *why, size_t len)
{
	if (err == -EPERM || err == -EACCES)
		say(why, len, "the kernel refused BPF (%s): it needs root, or "
		    "CAP_BPF and CAP_PERFMON, and no lockdown "
		    "(/sys/kernel/security/lockdown)", strerror(-err));
	else
		say(why, len, "cannot load the off-CPU BPF program: %s (run "
		    "with SYM_BPF_DEBUG=1 for libbpf's log)", strerror(-err));
}

/* Is SYM_OFFCPU_ATTACH @want?  "raw_tp": the raw_tp programs alone (the
 * fallback's test); "fail-tp_btf": the tp_btf load fails as on a kernel
 * that refuses it (the fallback's message, its test). */
static bool attach_env(const char *want)
{
	const char *v = getenv("SYM_OFFCPU_ATTACH");

	return v && strcmp(v, want) == 0;
}

static int load_any(struct offcpu *oc, const struct offcpu_opts *o,
		    char *why, size_t len)
{
	int err;

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		say(why, len, "the kernel has no BTF (/sys/kernel/btf/vmlinux:"
		    " %s): the BPF agent needs CONFIG_DEBUG_INFO_BTF",
		    strerror(errno));
		return -ENOENT;
	}
	/* SYM_OFFCPU_ATTACH=raw_tp: the fallback alone (its test);
	 * fail-tp_btf: the same, said as a fallback. */
	err = (attach_env("raw_tp") || attach_env("fail-tp_btf")) &&
	      switches(o) ? -ENOTSUP : try_load(oc, o, true);
	if (err && err != -EPERM && err != -EACCES && switches(o)) {
		int btf_err = err;

		err = try_load(oc, o, false);
		if (!err && !attach_env("raw_tp"))
			say(oc->btf_why, sizeof(oc->btf_why), "%s",
			    strerror(-btf_err));
	}
	if (err)
		explain(err, why, len);
	return err;
}

/* oc->wake_fd: an epoll set with the ring buffer's map, edge-triggered.
 * (libbpf's own epoll set is level-triggered: after one wake-up it
 * would poll readable as long as the ring holds any event, which at a
 * steady rate is always.) */
static int wake_open(struct offcpu *oc)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };

	oc->wake_fd = epoll_create1(EPOLL_CLOEXEC);
	if (oc->wake_fd < 0)
		return -errno;
	if (epoll_ctl(oc->wake_fd, EPOLL_CTL_ADD,
		      bpf_map__fd(oc->skel->maps.events), &ev) != 0)
		return -errno;
	return 0;
}

int offcpu_open(const struct offcpu_opts *o, offcpu_fn fn, void *ctx,
		struct offcpu **out, char *why, size_t whylen)
{
	struct offcpu *oc = calloc(1, sizeof(*oc));
	int err;

	*out = NULL;
	if (!oc) {
		say(why, whylen, "out of memory");
		return -ENOMEM;
	}
	oc->wake_fd = -1;
	oc->fn = fn;
	oc->ctx = ctx;
	oc->agg = o->agg;
	oc->kmemo = kmemo_env();
	/* (the on-CPU sampler's kernel stacks have no tracing frames) */
	if (switches(o))
		read_kallsyms(oc);
	libbpf_set_print(quiet_print);
	err = load_any(oc, o, why, whylen);
	if (err)
		goto fail;
	oc->ring_bytes = bpf_map__max_entries(oc->skel->maps.events);
	oc->wait_ns = OFFCPU_MIN_WAIT_NS;
	oc->last_drain_ns = mono_ns();
	oc->rb = ring_buffer__new(bpf_map__fd(oc->skel->maps.events),
				  on_event, oc, NULL);
	if (!oc->rb) {
		err = errno ? -errno : -ENOMEM;
		say(why, whylen, "cannot map the BPF ring buffer: %s",
		    strerror(-err));
		goto fail;
	}
	if (!oc->agg) {
		err = wake_open(oc);
		if (err) {
			say(why, whylen, "cannot poll the BPF ring buffer: %s",
			    strerror(-err));
			goto fail;
		}
	}
	if (!oc->agg && !o->fixed_stack) {
		uint32_t top = oc->skel->rodata->stack_size;

		err = stacklearn_new(top < OFFCPU_STACK_FLOOR ? top :
				     OFFCPU_STACK_FLOOR, top, &oc->sl);
		if (err) {
			say(why, whylen, "out of memory");
			goto fail;
		}
	}
	if (oc->agg) {
		err = aggdrain_new(bpf_map__fd(oc->skel->maps.agg_counts),
				   bpf_map__fd(oc->skel->maps.agg_stacks),
				   bpf_map__max_entries(oc->skel->maps.agg_stacks),
				   &oc->ad);
		if (err) {
			say(why, whylen, "out of memory");
			goto fail;
		}
	}
	*out = oc;
	return 0;
fail:
	offcpu_close(oc);
	return err;
}

static int add_tgid(struct offcpu *oc, pid_t pid, uint8_t v)
{
	uint32_t k = (uint32_t)pid;

	if (bpf_map__update_elem(oc->skel->maps.tgids, &k, sizeof(k), &v,
				 sizeof(v), BPF_ANY))
		return -errno;
	return 0;
}

int offcpu_add_pid(struct offcpu *oc, pid_t pid)
{
	return add_tgid(oc, pid, OFFCPU_TGID_ON);
}

int offcpu_add_exec(struct offcpu *oc, pid_t pid)
{
	return add_tgid(oc, pid, OFFCPU_TGID_AT_EXEC);
}

bool offcpu_stack_seen(struct offcpu *oc, const struct offcpu_event *e,
		       bool whole, uint64_t used, bool ran_off)
{
	uint32_t size, pid = e->pid;
	bool cut;

	if (!oc->sl || !e->user)
		return false;
	size = stacklearn_seen(oc->sl, (int32_t)e->pid, e->stack_cap,
			       e->stack_len, whole, used, ran_off, &cut);
	if (size && bpf_map__update_elem(oc->skel->maps.stack_sizes, &pid,
					 sizeof(pid), &size, sizeof(size),
					 BPF_ANY))
		oc->sl_failed++;
	return cut;
}

void offcpu_forget_pid(struct offcpu *oc, pid_t pid)
{
	uint32_t k = (uint32_t)pid;

	if (!oc || !oc->sl)
		return;
	stacklearn_forget(oc->sl, (int32_t)pid);
	bpf_map__delete_elem(oc->skel->maps.stack_sizes, &k, sizeof(k), 0);
}

void offcpu_learn_stats(const struct offcpu *oc, struct stacklearn_stats *st,
			uint64_t *failed)
{
	memset(st, 0, sizeof(*st));
	*failed = oc ? oc->sl_failed : 0;
	if (oc && oc->sl)
		stacklearn_stats(oc->sl, st);
}

int offcpu_drain(struct offcpu *oc)
{
	uint64_t now = mono_ns(), dt = now - oc->last_drain_ns, w;
	int n;

	if (oc->ad) {
		uint64_t cnt[OFFCPU_NCNT];

		offcpu_counters(oc, cnt);
		oc->wait_ns = UINT64_MAX;	/* the caller's longest wait */
		return aggdrain_run(oc->ad, cnt[OFFCPU_CNT_NEWSTACK], oc->agg,
				    oc->ctx);
	}
	oc->took = 0;
	if (oc->wake_fd >= 0) {
		struct epoll_event ev;

		/* (takes the wake-up, if any: the set polls empty again
		 * until the next one) */
		(void)epoll_wait(oc->wake_fd, &ev, 1, 0);
	}
	n = ring_buffer__consume(oc->rb);
	/* The fill rate since the last drain: a quarter of the ring at
	 * that rate is the next wait (offcpu_wait_ns()), but at most twice
	 * the last, so that a burst after a quiet spell finds the timer
	 * short. */
	w = oc->took && dt ? (uint64_t)((double)(oc->ring_bytes / 4) /
					((double)oc->took / (double)dt)) :
			     UINT64_MAX;
	oc->wait_ns = w < 2 * oc->wait_ns ? w : 2 * oc->wait_ns;
	oc->last_drain_ns = now;
	return n;
}

uint64_t offcpu_wait_ns(const struct offcpu *oc, uint64_t max)
{
	uint64_t w = oc->wait_ns, floor = OFFCPU_MIN_WAIT_NS;

	if (floor > max)
		floor = max;	/* a deadline sooner than that */
	if (w > max)
		w = max;
	return w < floor ? floor : w;
}

int offcpu_poll_fd(const struct offcpu *oc)
{
	return oc->wake_fd;
}

void offcpu_agg_stats(const struct offcpu *oc, struct offcpu_agg_stats *st)
{
	aggdrain_stats(oc->ad, st);
}

/* The number after @key ("memlock:") in the fdinfo of BPF object @fd,
 * 0 if none. */
static uint64_t fd_info(int fd, const char *key)
{
	char path[64], line[128];
	unsigned long long v = 0;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, n) == 0) {
			v = strtoull(line + n, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static uint64_t fd_memlock(int fd)
{
	return fd_info(fd, "memlock:");
}

uint64_t offcpu_prog_ns(const struct offcpu *oc, uint64_t *runs)
{
	struct bpf_program *p;
	uint64_t ns = 0;

	*runs = 0;
	bpf_object__for_each_program(p, oc->skel->obj) {
		if (bpf_program__fd(p) < 0)
			continue;
		ns += fd_info(bpf_program__fd(p), "run_time_ns:");
		*runs += fd_info(bpf_program__fd(p), "run_cnt:");
	}
	return ns;
}

uint64_t offcpu_map_bytes(const struct offcpu *oc)
{
	struct bpf_map *m;
	uint64_t n = 0;

	bpf_object__for_each_map(m, oc->skel->obj)
		if (bpf_map__fd(m) >= 0)
			n += fd_memlock(bpf_map__fd(m));
	return n;
}

/* All the counters' per-CPU values into @v (OFFCPU_NCNT x the possible
 * CPUs, key by key) in one system call, a batch lookup (the drain reads them every
 * round: one lookup a counter was 15 bpf() calls a drain).  Returns 0,
 * or -1 when the kernel cannot (then oc->no_batch: never again). */
static int counters_batch(struct offcpu *oc, uint64_t *v)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	uint32_t keys[OFFCPU_NCNT], out, n = OFFCPU_NCNT, k;
	int err;

	if (oc->no_batch)
		return -1;
	err = bpf_map_lookup_batch(bpf_map__fd(oc->skel->maps.counters),
				   NULL, &out, keys, v, &n, &o);
	for (k = 0; (!err || err == -ENOENT) && k < n; k++)
		if (keys[k] != k)
			break;
	if ((err && err != -ENOENT) || n != OFFCPU_NCNT || k != n) {
		oc->no_batch = true;
		return -1;
	}
	return 0;
}

void offcpu_counters(struct offcpu *oc, uint64_t cnt[OFFCPU_NCNT])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;
	uint32_t k;
	bool all;

	memset(cnt, 0, OFFCPU_NCNT * sizeof(*cnt));
	if (ncpu <= 0)
		return;
	v = calloc((size_t)ncpu * OFFCPU_NCNT, sizeof(*v));
	all = v && counters_batch(oc, v) == 0;
	for (k = 0; v && k < OFFCPU_NCNT; k++) {
		uint64_t *vk = v + (size_t)k * (size_t)ncpu;

		if (!all && bpf_map__lookup_elem(oc->skel->maps.counters, &k,
						 sizeof(k), vk, (size_t)ncpu *
						 sizeof(*v), 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			cnt[k] += vk[c];
	}
	free(v);
	cnt[OFFCPU_CNT_ORPHAN] = aggdrain_orphans(oc->ad);
}

const char *offcpu_attach_kind(const struct offcpu *oc)
{
	return oc->kind;
}

enum offcpu_kmemo offcpu_kmemo_mode(const struct offcpu *oc)
{
	return oc->kmemo;
}

const char *offcpu_fallback_why(const struct offcpu *oc)
{
	return oc->btf_why[0] ? oc->btf_why : NULL;
}

void offcpu_close(struct offcpu *oc)
{
	if (!oc)
		return;
	ring_buffer__free(oc->rb);
	if (oc->wake_fd >= 0)
		close(oc->wake_fd);
	detach_all(oc);
	aggdrain_free(oc->ad);
	stacklearn_free(oc->sl);
	offcpu_bpf__destroy(oc->skel);
	free(oc);
}
