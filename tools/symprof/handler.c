/*
 * handler.c - the sampling signal handler of libsymprof.
 *
 * It runs on the interrupted thread, at any instruction, so it is
 * async-signal-safe by construction: it calls nothing but memcpy() (on
 * POSIX's list of async-signal-safe functions) and the inline code
 * below (no malloc, no locks, no stdio, no dl_iterate_phdr, no
 * libunwind or backtrace()), saves and restores errno, and reads memory
 * only inside the thread's known stack.  Alloc mode's write request is
 * the exception: without a drain thread (one thread) it writes the file
 * here, only over code that is not ours (drain.c, sp_drain_signal()).
 *
 * What it records, into the thread's own preallocated ring:
 *   - the interrupted registers, all of them (the unwind may need any:
 *     ld.so's lazy-binding trampoline keeps its CFA in rbx);
 *   - the stack the thread uses, from sp up to the top of its stack
 *     (the initial stack pointer for the main thread), at most
 *     SP_STACK_MAX bytes.  That memory is mapped for as long as the
 *     thread runs on it, so the copy cannot fault; an sp outside the
 *     thread's known stack (a sigaltstack, a coroutine's stack, which may
 *     be unmapped at any time) is not read at all: the record holds the
 *     registers only, flagged SP_WALK_NOSTACK.
 * The drain thread unwinds the copy later with the CFI of the loaded
 * objects (drain.c, cfi.c): code without frame pointers (Debian's
 * binaries and libraries) needs no help from the handler, and the
 * handler's work is a copy of the used stack, whatever the frames are.
 * When the ring has no room for the record the sample is dropped and
 * counted.  Signals that are not from our timer (si_code, si_value) go
 * to the program's own disposition (sp_chain()).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "symprof.h"

/* The ucontext's registers in DWARF's order (struct sp_regs). */
static const unsigned char dwarf_greg[SP_NREGS] = {
	REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP,
	REG_RSP, REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14,
	REG_R15, REG_RIP,
};

static void sample(struct sp_thread *t, const ucontext_t *uc,
		   uint64_t weight)
{
	struct sp_ring *r = &t->ring;
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t pos = head & SP_RING_MASK;
	uint64_t pad = 0;
	const greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t sp_ = (uintptr_t)g[REG_RSP];
	uintptr_t lo = t->stack_lo, hi = t->stack_hi;
	uint32_t flags = 0, nstack = 0, len, i;
	uint64_t *w;

	/* sp == hi: at _start's first instruction, nothing used yet. */
	if (sp_ < lo || sp_ > hi || (sp_ & 7)) {
		/* Interrupted on another stack (a sigaltstack, a coroutine):
		 * nothing but the registers is safe to take. */
		flags |= SP_WALK_NOSTACK;
	} else if (hi - sp_ > SP_STACK_MAX) {
		nstack = SP_STACK_MAX / 8;
		flags |= SP_WALK_CUT;
	} else {
		nstack = (uint32_t)((hi - sp_) / 8);
	}
	len = SP_REC_FIXED + nstack;
	if (SP_RING_WORDS - pos < len)
		pad = SP_RING_WORDS - pos;
	if (head - tail + pad + len > SP_RING_WORDS) {
		atomic_fetch_add_explicit(&r->dropped, 1,
					  memory_order_relaxed);
		return;
	}
	if (pad) {
		r->words[pos] = SP_HDR(pad, SP_REC_PAD, 0, 0);
		pos = 0;
	}
	w = &r->words[pos];
	w[1] = weight;
	for (i = 0; i < SP_NREGS; i++)
		w[2 + i] = (uint64_t)g[dwarf_greg[i]];
	memcpy(w + SP_REC_FIXED, (const void *)sp_, (size_t)nstack * 8);
	w[0] = SP_HDR(len, SP_REC_SAMPLE, flags, nstack);
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
	if (__atomic_load_n(&sp.mode, __ATOMIC_RELAXED) == SP_MODE_ALLOC) {
		/* A request for the profile (SIGUSR2, or the interval's
		 * timer when there is no drain thread): the drain thread
		 * writes it, or without one this handler does, unless it
		 * interrupted our own code (sp_drain_signal()). */
		sp_drain_signal(SP_REQ_WRITE);
		errno = saved_errno;
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
