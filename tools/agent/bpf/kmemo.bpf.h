/*
 * kmemo.bpf.h - the kernel stack memo, included by offcpu.bpf.c: a
 * thread's kernel stack at switch-out is its last walk's again when the
 * words that walk read are unchanged, so that a thread blocking where it
 * blocked before costs a comparison, not a walk (docs/record.md, "The
 * kernel stack memo").
 *
 * bpf_get_stack() unwinds with ORC from this program up through the
 * tracepoint's frames and __schedule() to the user registers (pt_regs).
 * The frames up to __schedule()'s are the same code each time, at fixed
 * distances from the program's ctx (an array in bpf_trace_runN()'s
 * frame).  From __schedule()'s saved registers up, the walk reads only
 * words of the stack (return addresses, saved frame pointers, nested
 * pt_regs) and the kernel's ORC tables.  So where those words are the
 * same, so are the frames from __schedule() on, which is all user space
 * keeps (offcpu_kernel_skip()).
 *
 * Which words are compared: every word kept whose value was one of the
 * walk's frames must be equal, which takes in every return address the
 * walk read (and every nested pt_regs' ip), found or not: the words at
 * or above the kernel's text (its code, its modules' and BPF programs')
 * are looked up in a Bloom filter of the frames (m->ips: a false
 * positive only makes a miss); a word that was an address on this stack
 * (a saved frame pointer, a nested pt_regs' sp) must be equal, or, where
 * the part it points into moved, moved with it; the other words (heap
 * pointers, numbers, user addresses, stale return addresses and code
 * pointers the unwinder never reads) may differ.  A word the unwinder
 * reads holds a frame of the walk (a return address, an interrupted ip)
 * or an address on the stack (a frame pointer it uses: a completed walk
 * used only valid ones), so the walk again would read the same.
 *
 * A system call's frames move: do_syscall_64() puts a random gap
 * (CONFIG_RANDOMIZE_KSTACK_OFFSET) between its own frame, at a fixed
 * place under the user registers, and those of the functions it calls.
 * So the words are kept in two parts: from __schedule()'s saved
 * registers to the return address into do_syscall_64(), at their
 * distance from ctx (which moves with them), and do_syscall_64()'s own
 * return address and frame pointer, at their distance from the top.
 *
 * SYM_KMEMO=check (kmemo_check) walks at every hit too, counts the walks
 * that differ (OFFCPU_CNT_KMEMO_BAD) and keeps the walk's frames; the
 * tests run it on real workloads.  One memo a thread, in its task
 * storage beside its event (struct slot_val), two ways (KMEMO_WAYS) by
 * the user ip the thread left user space at; the raw_tp programs, which
 * have no task storage, walk every time.
 */
#ifndef SYM_KMEMO_BPF_H
#define SYM_KMEMO_BPF_H

/* __schedule()'s and do_syscall_64()'s text and the start of the
 * kernel's (_stext), from /proc/kallsyms (sched_lo 0: no memo); the
 * check (SYM_KMEMO=check), and its fault injection (SYM_KMEMO=fault:
 * every comparison passes, so that the check is seen to catch a memo
 * that lies). */
const volatile __u64 sched_lo = 0, sched_hi = 0;
const volatile __u64 sys_lo = 0, sys_hi = 0;
const volatile __u64 text_lo = 0;
const volatile __u32 kmemo_check = 0;
const volatile __u32 kmemo_fault = 0;

/* The most stack kept: from ctx to the user pt_regs (1.2 to 1.6 KiB on
 * the pipe, sleep and futex paths, random gap included). */
#define KMEMO_BYTES 4096
#define KMEMO_WORDS (KMEMO_BYTES / 8)
#define KW(j) ((j) & (KMEMO_WORDS - 1))
/* Words kept under __schedule()'s return address: its pushes of the
 * callee-saved registers (rbx, rbp, r12-r15), where the unwinder finds
 * the frame pointer of its caller. */
#define KMEMO_SAVED 6
/* Words kept under do_syscall_64()'s return address: its frame pointer,
 * pushed first (its frame has a variable size, the gap, so it keeps
 * one, which the unwinder reads to find that return address); under it
 * lies the gap. */
#define KMEMO_SYS_SAVED 1

struct kmemo {
	__u64 ctx;	/* the walk's ctx, an address on the kernel stack */
	__u64 uip;	/* the user ip at the walk */
	__u32 nw;	/* the words read at the walk, from ctx; 0: none */
	__u32 off1, n1;	/* the first part: n1 words from off1 */
	__u32 off2, n2;	/* the second: n2 words from off2, the last ones */
	__u32 at;	/* (kmemo_find()'s result) */
	__u64 ret[3];	/* (kmemo_rets()'s) */
	__u64 tmp;	/* (an address made a plain number) */
	__u64 ips[4];	/* a Bloom filter of the walk's frames (KMEMO_IP) */
	__s32 klen;	/* the walk's frames: kstack_len, */
	__u32 pad;
	__u64 kstack[OFFCPU_KSTACK_MAX];	/* kstack */
	__u64 buf[KMEMO_WORDS];	/* the words read at the walk */
};

/* Stacks kept a thread: a loop that blocks in two places in turn (sleep,
 * then read) finds both.  (kmemo_way() and the "& 1" on a way know it.) */
#define KMEMO_WAYS 2
_Static_assert(KMEMO_WAYS == 2, "kmemo_way() picks between two ways");

/* A thread's task storage: its event and its memo. */
struct slot_val {
	struct offcpu_event e;	/* first: slot_new() returns &v->e */
	__u32 km_last;		/* the way used last */
	__u32 km_in_e;		/* the way whose frames e.kstack holds, + 1
				 * (0: none) */
	struct kmemo km[KMEMO_WAYS];
};

/* The two bits of m->ips[] that code address @v sets: from its product
 * with a golden-ratio constant, bits 56-63 and 48-55. */
#define KMEMO_IP_MUL 0x9e3779b97f4a7c15ULL
static __always_inline int kmemo_ip_in(const struct kmemo *m, __u64 v)
{
	__u64 x = v * KMEMO_IP_MUL;
	__u32 i = (__u32)(x >> 56), k = (__u32)(x >> 48) & 255;

	return (m->ips[(i >> 6) & 3] >> (i & 63) & 1) &&
	       (m->ips[(k >> 6) & 3] >> (k & 63) & 1);
}

static __always_inline void kmemo_ip_add(struct kmemo *m, __u64 v)
{
	__u64 x = v * KMEMO_IP_MUL;
	__u32 i = (__u32)(x >> 56), k = (__u32)(x >> 48) & 255;

	m->ips[(i >> 6) & 3] |= 1ULL << (i & 63);
	m->ips[(k >> 6) & 3] |= 1ULL << (k & 63);
}

/* Address @p as a plain number, through memory: the verifier allows no
 * arithmetic on a pointer to the context. */
#define AS_NUM(m, p) ({ (m)->tmp = (__u64)(p); \
	asm volatile("" ::: "memory"); (m)->tmp; })

/* The per-CPU scratch event's stack bytes, as words: where a comparison
 * reads the stack now (the tp_btf programs use no other part of it). */
static __always_inline __u64 *kmemo_scratch(void)
{
	__u32 zero = 0;
	struct offcpu_event *s = bpf_map_lookup_elem(&scratch, &zero);

	return s ? (__u64 *)s->stack : NULL;
}

/*
 * Are the words at [@c + 8 off1, + n1) and [@top - 8 n2, @top) the ones
 * kept, as the head comment says?  Read into @nb (2 x KMEMO_WORDS).
 */
static __always_inline int kmemo_equal(struct kmemo *m, __u64 *nb, __u64 c,
				       __u64 top)
{
	__u32 n1 = m->n1, n2 = m->n2, o1 = m->off1, o2 = m->off2, j;
	__u64 co = m->ctx, d = c - co, lim = ((__u64)o1 + n1) * 8;
	__u64 span = top + sizeof(struct pt_regs) - co, a, b;

	if (n1 > KMEMO_WORDS || n2 > KMEMO_WORDS ||
	    bpf_probe_read_kernel(nb, n1 * 8, (void *)(c + (__u64)o1 * 8)))
		return 0;
	if (n2 && bpf_probe_read_kernel(nb + KMEMO_WORDS, n2 * 8,
					(void *)(top - (__u64)n2 * 8)))
		return 0;
	for (j = 0; j < KMEMO_WORDS; j++) {
		if (j >= n1)
			break;
		a = nb[j];
		b = m->buf[KW(o1 + j)];
		if (a == b)
			continue;
		if (b >= text_lo) {
			if (kmemo_ip_in(m, b))
				break;	/* one of the walk's frames: equal */
			continue;	/* other code or data: never read */
		}
		if (b - co < span && (a - b != d || b - co >= lim))
			break;		/* on the stack: moved with its part */
	}
	if (j < n1)
		return 0;
	for (j = 0; j < KMEMO_WORDS; j++)
		if (j >= n2 || nb[KMEMO_WORDS + j] != m->buf[KW(o2 + j)])
			break;
	return j >= n2;
}

/* The return addresses kmemo_keep() looks for, from walk @e: out of
 * __schedule() (ret[0]), into do_syscall_64() (ret[1]) and out of it
 * (ret[2]); 0 where there is none, and ret[0] 0 for a walk not kept (cut
 * at OFFCPU_KSTACK_MAX frames, or a system call's not ending at its
 * entry). */
static __always_inline void kmemo_rets(struct kmemo *m,
				       const struct offcpu_event *e)
{
	__u32 n = e->kstack_len > 0 ? (__u32)e->kstack_len / 8 : 0;
	__u32 phase = 0;

	m->ret[0] = m->ret[1] = m->ret[2] = 0;
	m->ips[0] = m->ips[1] = m->ips[2] = m->ips[3] = 0;
	if (n >= OFFCPU_KSTACK_MAX)
		return;
	for (__u32 i = 0; i + 1 < OFFCPU_KSTACK_MAX; i++) {
		__u64 ip = e->kstack[i];

		kmemo_ip_add(m, ip);
		if (i + 1 >= n)
			break;
		if (phase == 0 && ip >= sched_lo && ip < sched_hi) {
			m->ret[0] = e->kstack[i + 1];
			phase = 1;
		} else if (phase == 1 && ip >= sys_lo && ip < sys_hi) {
			m->ret[1] = ip;
			m->ret[2] = e->kstack[i + 1];
			kmemo_ip_add(m, m->ret[2]);
			if (i + 2 != n)
				m->ret[0] = 0;
			break;
		}
	}
}

/* m->at: the first word of m->buf equal to @v from @from up (@down: the
 * first from @from down to above @stop), else m->nw.  (Bounds and result
 * go through memory, so that the verifier's states after the loop do not
 * differ by where it stopped.) */
static __always_inline void kmemo_find(struct kmemo *m, __u32 from,
				       __u32 stop, __u64 v, int down)
{
	__u32 nw = m->nw;

	m->at = nw;
	for (__u32 j = 0; j < KMEMO_WORDS; j++) {
		__u32 i = down ? from - j : from + j;

		if (i >= nw || (down && i <= stop))
			break;
		if (m->buf[KW(i)] == v) {
			m->at = i;
			break;
		}
	}
	asm volatile("" ::: "memory");
}

/*
 * After a walk: keep the words it read, the stack from @c to @top.  The
 * first part starts KMEMO_SAVED words under the first word equal to
 * __schedule()'s return address (a stale copy under the true one only
 * makes the part longer).  For a system call it ends at the highest word
 * under the second part equal to the return address into do_syscall_64()
 * (the true one, or a stale copy in the gap above it: longer again), and
 * the second part is the word under the user pt_regs, do_syscall_64()'s
 * return address, and its frame pointer.
 */
static __always_inline void kmemo_keep(struct kmemo *m, __u64 c, __u64 top,
				       __u64 uip)
{
	__u32 nw = (__u32)(top - c) / 8, s, p, q = nw - 1;

	if (!m->ret[0] || top <= c || top - c > KMEMO_BYTES ||
	    (top - c) % 8 || bpf_probe_read_kernel(m->buf, nw * 8, (void *)c))
		return;
	m->nw = nw;
	kmemo_find(m, 0, 0, m->ret[0], 0);
	s = m->at;
	if (m->ret[1]) {
		if (m->buf[KW(q)] != m->ret[2] || q < KMEMO_SYS_SAVED + 1)
			goto none;
		kmemo_find(m, q - KMEMO_SYS_SAVED - 1, s, m->ret[1], 1);
	}
	nw = m->nw;
	p = m->at;
	if (s >= nw || (m->ret[1] && p >= nw))
		goto none;
	m->off1 = s > KMEMO_SAVED ? s - KMEMO_SAVED : 0;
	if (m->ret[1]) {
		m->n1 = p + 1 - m->off1;
		m->off2 = q - KMEMO_SYS_SAVED;
		m->n2 = nw - m->off2;
	} else {
		m->n1 = nw - m->off1;
		m->off2 = 0;
		m->n2 = 0;
	}
	m->ctx = c;
	m->uip = uip;
	return;
none:
	m->nw = 0;
}

/* SYM_KMEMO=check: is walk @w (@len bytes) the memo's, @e's, from frame
 * 1 on?  (Frame 0 is the helper's call site in this program, which the
 * compiler may have copied; user space drops it.) */
static __always_inline int kmemo_same(const struct offcpu_event *e,
				      const __u64 *w, long len)
{
	__u32 n = len > 0 ? (__u32)len / 8 : 0;

	if (len != e->kstack_len)
		return 0;
	for (__u32 i = 1; i < OFFCPU_KSTACK_MAX; i++)
		if (i >= n || e->kstack[i] != w[i])
			return i >= n;
	return 1;
}

/* The way of @v for user ip @uip: the one kept for it, else the one
 * used longest ago. */
static __always_inline __u32 kmemo_way(const struct slot_val *v, __u64 uip)
{
	if (v->km[0].nw && v->km[0].uip == uip)
		return 0;
	if (v->km[1].nw && v->km[1].uip == uip)
		return 1;
	return (v->km_last ^ 1) & 1;
}

/* @n bytes of frames from @src to @dst (both OFFCPU_KSTACK_MAX long). */
static __always_inline void kmemo_copy(__u64 *dst, const __u64 *src, long n)
{
	if (n > 0 && n <= OFFCPU_KSTACK_MAX * 8)
		bpf_probe_read_kernel(dst, n, src);
}

/*
 * The kernel stack of the current task, switched out, into @e, its event
 * (@e->regs: its user registers now; @regs: where they lie, at the top
 * of its kernel stack): the walk kept in the way for its user ip when the
 * words that walk read are unchanged, else a new walk, kept in that way.
 */
static __always_inline void kstack_memo(void *ctx, struct offcpu_event *e,
					struct pt_regs *regs)
{
	struct slot_val *v = (struct slot_val *)e;
	__u64 uip = e->user ? e->regs[8] : 0, *nb;
	/* (SYM_KMEMO=fault: the way used last, whatever its ip, so that
	 * the lie is often another place's stack) */
	__u32 way = (kmemo_fault ? v->km_last : kmemo_way(v, uip)) & 1;
	__u32 zero = 0;
	struct kmemo *m = &v->km[way];
	__u64 c = AS_NUM(m, ctx), top = AS_NUM(m, regs);
	struct offcpu_event *w = e;
	int hit = 0;
	long len;

	if (kmemo_fault) {
		hit = m->nw && m->klen > 0;
	} else if (m->nw && m->uip == uip && m->klen > 0 && top > c &&
		   (m->n2 ? c + ((__u64)m->off1 + m->n1) * 8 <=
			    top - m->n2 * 8 :
			    top - c == (__u64)m->nw * 8)) {
		nb = kmemo_scratch();
		hit = nb && kmemo_equal(m, nb, c, top);
	}
	if (hit) {
		count(OFFCPU_CNT_KMEMO_HIT);
		v->km_last = way;
		if (v->km_in_e != way + 1) {
			kmemo_copy(e->kstack, m->kstack, m->klen);
			e->kstack_len = m->klen;
			v->km_in_e = way + 1;
		}
		if (!kmemo_check)
			return;
		w = bpf_map_lookup_elem(&scratch, &zero);
		if (!w)
			return;
	}
	/* (one call site for the walk and its check: the same frames) */
	len = bpf_get_stack(ctx, w->kstack, sizeof(w->kstack), 0);
	if (hit) {
		if (kmemo_same(e, w->kstack, len))
			return;
		count(OFFCPU_CNT_KMEMO_BAD);
		m->nw = 0;
		v->km_in_e = 0;
		e->kstack_len = len;
		kmemo_copy(e->kstack, w->kstack, len);
		return;
	}
	m->nw = 0;
	v->km_in_e = 0;
	e->kstack_len = len;
	kmemo_rets(m, e);
	kmemo_keep(m, c, top, uip);
	if (!m->nw)
		return;
	kmemo_copy(m->kstack, e->kstack, len);
	m->klen = (__s32)len;
	v->km_last = way;
	v->km_in_e = way + 1;
}

#endif /* SYM_KMEMO_BPF_H */
