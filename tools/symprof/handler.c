/*
 * handler.c - the sampling signal handler of libsymprof.
 *
 * It runs on the interrupted thread, at any instruction, so it is
 * async-signal-safe by construction: it calls nothing but the inline
 * code below (no malloc, no locks, no stdio, no dl_iterate_phdr, no
 * libunwind or backtrace()), saves and restores errno, and reads memory
 * only inside the thread's known stack.
 *
 * What it records, into the thread's own preallocated ring:
 *   - the interrupted pc (the leaf, exact);
 *   - the frame-pointer chain from the interrupted rbp, as (frame
 *     address, return address) pairs.  A frame pointer is followed only
 *     while it lies in [sp, stack_hi - 16] (the part of the stack the
 *     thread has used), is 8-aligned and strictly increases; the walk
 *     also ends at a zero saved rbp (the ABI's outermost-frame mark, set
 *     by _start and clone), at the thread's start trampoline, and at
 *     SP_MAX_DEPTH;
 *   - SP_WINDOW words of stack above sp, with rbp and sp.
 * The frame addresses and the window are the memory the drain thread's
 * CFI steps read, outside the handler: they recover the callers of
 * functions without a frame near the leaf (gcc omits it in leaf
 * functions even with -fno-omit-frame-pointer) and detect the callers
 * the chain skips further up.
 * When the ring has no room for the largest record the sample is dropped
 * and counted.  Signals that are not from our timer (si_code, si_value)
 * go to the program's own disposition (sp_chain()).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "symprof.h"

static void sample(struct sp_thread *t, const ucontext_t *uc,
		   uint64_t weight)
{
	struct sp_ring *r = &t->ring;
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t pos = head & SP_RING_MASK;
	uint64_t pad = 0;
	const greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t pc = (uintptr_t)g[REG_RIP];
	uintptr_t sp_ = (uintptr_t)g[REG_RSP];
	uintptr_t fp = (uintptr_t)g[REG_RBP];
	uintptr_t lo = t->stack_lo, hi = t->stack_hi;
	uint64_t *w, *fr;
	uintptr_t next = 0;
	uint32_t flags = 0, nwin = 0, n, i, len;

	if (SP_RING_WORDS - pos < SP_REC_MAX)
		pad = SP_RING_WORDS - pos;
	if (head - tail + pad + SP_REC_MAX > SP_RING_WORDS) {
		atomic_fetch_add_explicit(&r->dropped, 1,
					  memory_order_relaxed);
		return;
	}
	if (pad) {
		r->words[pos] = SP_HDR(pad, SP_REC_PAD, 0, 0, 0);
		pos = 0;
	}
	w = &r->words[pos];

	if (sp_ < lo || sp_ >= hi || (sp_ & 7)) {
		/* Interrupted on another stack (a sigaltstack, a coroutine):
		 * nothing but the pc is safe to take. */
		flags |= SP_WALK_NOSTACK;
	} else {
		nwin = (uint32_t)((hi - sp_) / 8);
		if (nwin > SP_WINDOW)
			nwin = SP_WINDOW;
		for (i = 0; i < nwin; i++)
			w[SP_REC_FIXED + i] = ((const uint64_t *)sp_)[i];
	}
	fr = w + SP_REC_FIXED + nwin;
	fr[0] = pc;
	n = 0;
	if (!(flags & SP_WALK_NOSTACK) && (fp < sp_ || fp > hi - 16)) {
		/* rbp is not a frame address: code without frame pointers
		 * (libc) uses it as a general register, and saved the
		 * caller's rbp somewhere in the window.  Start from the
		 * nearest word there that points at something shaped like a
		 * frame record: a saved rbp above it (or 0) and a return
		 * address off the stack.  The drain thread uses this chain
		 * only where the rbp it recovers from CFI lands on it. */
		for (i = 1; i < nwin; i++) {
			uintptr_t c = (uintptr_t)w[SP_REC_FIXED + i], up, ra;

			if (c <= sp_ + 8 * i || c > hi - 16 || (c & 7))
				continue;
			up = ((const uintptr_t *)c)[0];
			ra = ((const uintptr_t *)c)[1];
			if ((up == 0 || (up > c && up <= hi - 16)) &&
			    ra >= 4096 && (ra < lo || ra >= hi)) {
				fp = c;
				flags |= SP_WALK_GUESSED;
				break;
			}
		}
	}
	if (!(flags & SP_WALK_NOSTACK)) {
		lo = sp_;
		for (;;) {
			uintptr_t ret;

			if (fp < lo || fp > hi - 16 || (fp & 7))
				break;
			if (n >= SP_MAX_DEPTH - 1) {
				flags |= SP_WALK_TRUNCATED;
				break;
			}
			next = ((const uintptr_t *)fp)[0];
			ret = ((const uintptr_t *)fp)[1];
			if (ret < 4096)
				break;
			fr[1 + 2 * n] = fp;
			fr[2 + 2 * n] = ret;
			n++;
			if (next == 0 || fp == t->outer_fp) {
				flags |= SP_WALK_COMPLETE;
				break;
			}
			if (next <= fp)
				break;
			lo = fp + 16;
			fp = next;
		}
	}
	/* What the last frame's saved rbp held: the drain thread's view of
	 * memory at fp_n. */
	fr[1 + 2 * n] = n ? next : 0;
	len = SP_REC_FIXED + nwin + 2 + 2 * n;
	w[1] = weight;
	w[2] = (uint64_t)g[REG_RBP];
	w[3] = sp_;
	w[0] = SP_HDR(len, SP_REC_SAMPLE, flags, nwin, n);
	atomic_store_explicit(&r->head, head + pad + len,
			      memory_order_release);
	/* Half full: wake the drain thread rather than drop later. */
	if (head + pad + len - tail > SP_RING_WORDS / 2 &&
	    !atomic_load_explicit(&r->kicked, memory_order_relaxed)) {
		atomic_store_explicit(&r->kicked, 1, memory_order_relaxed);
		sp_drain_kick();
	}
}

void sp_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	struct sp_thread *t;
	uint64_t weight;

	if (!sp_is_ours(sig, si)) {
		sp_chain(sig, si, ucv);
		return;
	}
	t = sp_self;
	if (t && atomic_load_explicit(&sp_active, memory_order_relaxed)) {
		/* A timer's expirations while the signal was blocked or
		 * pending count as overruns: the sample stands for them
		 * too. */
		weight = sp.period_ns;
		if (si->si_code == SI_TIMER && si->si_overrun > 0 &&
		    si->si_overrun < 1000000)
			weight *= (uint64_t)si->si_overrun + 1;
		sample(t, ucv, weight);
	}
	errno = saved_errno;
}

void sp_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction pa;
	sigset_t set, old;
	bool nodefer;

	sp_prog_action(sig, &pa);
	if (pa.sa_handler == SIG_IGN)
		return;
	if (pa.sa_handler == SIG_DFL) {
		/* Every signal we sample with terminates by default. */
		sp_die_of(sig);
		return;
	}
	/* The kernel blocked the program's sa_mask with ours (symprof.c
	 * installs it); SA_NODEFER and SA_RESETHAND are emulated here
	 * because our own action can have neither. */
	nodefer = (pa.sa_flags & SA_NODEFER) != 0;
	if (pa.sa_flags & SA_RESETHAND)
		sp_prog_action_reset(sig);
	if (nodefer) {
		sigemptyset(&set);
		sigaddset(&set, sig);
		pthread_sigmask(SIG_UNBLOCK, &set, &old);
	}
	if (pa.sa_flags & SA_SIGINFO)
		pa.sa_sigaction(sig, si, uc);
	else
		pa.sa_handler(sig);
	if (nodefer)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
}
