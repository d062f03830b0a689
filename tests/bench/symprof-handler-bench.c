/*
 * symprof-handler-bench.c - the per-sample cost of libsymprof, in its
 * parts (tests/bench/symprof-bench.sh builds and runs it):
 *
 *	symprof-handler-bench floor N
 *	    the floor: N signals sent to this thread (tgkill) and delivered
 *	    to an empty SA_SIGINFO handler; prints ns per signal.  What the
 *	    kernel costs for any signal-driven sampler.
 *	symprof-handler-bench handler DEPTH N FRAMES
 *	    our handler's own work: libsymprof's sp_handler() (linked from
 *	    tools/symprof/handler.c) called N times on a context taken at
 *	    the bottom of a DEPTH-deep recursion, as one of our timer
 *	    signals, with the ring emptied after each call (as the drain
 *	    thread would); prints ns per call and the bytes of stack it
 *	    copied.  FRAMES is the recursion's kind: `fp` (frame pointers,
 *	    16-byte frames), `nofp` (no frame pointers, 16-byte frames) or
 *	    `nofp256` (no frame pointers, a 256-byte local array each, about
 *	    what Debian's python3.11 and xz use per frame).  Caches are
 *	    warm: the real handler also touches the stack lines the
 *	    interrupted code just used.
 *	symprof-handler-bench both DEPTH N FRAMES
 *	    both at once: N tgkill()s delivered to sp_handler itself at
 *	    DEPTH (si_code is SI_TKILL there, so the handler is forced to
 *	    take the sample path by a flag): floor + handler in one number.
 *	symprof-handler-bench unwind DEPTH N FRAMES
 *	    the drain thread's side of one sample: the record the handler
 *	    wrote, unwound N times with the CFI of this program and libc
 *	    (tools/symprof/cfi.c and maps.c: sp_cfi_find() and
 *	    sp_cfi_step() for every frame, without the drain thread's CFI
 *	    cache, so an upper bound); prints ns per sample and the frames
 *	    found, which must reach _start: DEPTH + 5 (bottom, main,
 *	    __libc_start_call_main, __libc_start_main, _start).
 *
 * Build: cc -O2 -g -fno-omit-frame-pointer -Itools/symprof -Ilibsym
 *        tests/bench/symprof-handler-bench.c tools/symprof/handler.c
 *        tools/symprof/cfi.c tools/symprof/maps.c
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "symprof.h"
#include "base.h"

/* What handler.c and maps.c need from the rest of the library. */
struct sp_state sp = { .sig = SIGPROF, .period_ns = 10101010 };
_Atomic int sp_active = 1;
_Atomic int sp_enabled = 1;
char sp_cookie;
_Atomic int sp_itimer_handed_over;
__thread struct sp_thread *sp_self __attribute__((tls_model("initial-exec")));

void sp_prog_action(int sig, struct sigaction *out)
{
	(void)sig;
	memset(out, 0, sizeof(*out));
	out->sa_handler = SIG_IGN;
}

void sp_prog_action_reset(int sig)
{
	(void)sig;
}

void sp_drain_kick(void)
{
}

/* The handler's alloc-mode branch (a write request) is not measured. */
void sp_drain_post(unsigned what)
{
	(void)what;
}

void sp_die_of(int sig)
{
	(void)sig;
	abort();
}

void *sp_arena_alloc(size_t n)
{
	return calloc(1, n);
}

char *sp_arena_strdup(const char *s)
{
	return strdup(s);
}

/* This thread's CPU time (user + system): on a shared machine the time
 * others take from us does not count. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile unsigned long hits;

static void empty(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	hits++;
}

static struct sp_thread *thread_setup(void)
{
	struct sp_thread *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_attr_t attr;
	void *addr;
	size_t size;
	extern void *__libc_stack_end;

	if (t == MAP_FAILED)
		exit(1);
	memset(t, 0, offsetof(struct sp_thread, ring));
	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	t->stack_lo = (uintptr_t)addr;
	t->stack_hi = (uintptr_t)__libc_stack_end;
	t->tid = (pid_t)syscall(SYS_gettid);
	sp_self = t;
	return t;
}

enum mode { M_HANDLER = 1, M_BOTH, M_UNWIND };

static long n_iter;
static double result_ns;
static int mode;
/* The context handler mode samples: static, so that it is not part of
 * the stack the handler copies (a kernel's lies below sp). */
static ucontext_t ctx;
static siginfo_t info;
/* The last record, copied out for unwind mode. */
static uint64_t rec[SP_REC_MAX];
static uint32_t unwound;

/* The signal path of mode both: as if our timer had sent it. */
static void forced(int sig, siginfo_t *si, void *uc)
{
	si->si_code = SI_TIMER;
	si->si_value.sival_ptr = &sp_cookie;
	si->si_overrun = 0;
	sp_handler(sig, si, uc);
	/* Empty the ring, as the drain thread would. */
	atomic_store(&sp_self->ring.tail, atomic_load(&sp_self->ring.head));
}

/* Take one sample of the context in ctx and keep its record. */
static void take_one(struct sp_thread *t)
{
	uint64_t h;

	atomic_store(&t->ring.head, 0);
	atomic_store(&t->ring.tail, 0);
	sp_handler(SIGPROF, &info, &ctx);
	h = t->ring.words[0];
	memcpy(rec, t->ring.words, SP_HDR_LEN(h) * 8);
}

/* Unwind the record as the drain thread does (without its cache):
 * frames found, the leaf included. */
static uint32_t unwind_rec(void)
{
	struct sp_stack_copy mem = { rec[2 + SP_REG_RSP], rec + SP_REC_FIXED,
				     SP_HDR_NSTACK(rec[0]) };
	struct sp_regs r;
	uint32_t k = 1;
	bool exact = true;

	memcpy(r.r, rec + 2, sizeof(r.r));
	r.known = (1u << SP_NREGS) - 1;
	for (;;) {
		uint64_t pc = r.r[SP_REG_RIP], need;
		const struct sp_map *m = sp_maps_find(pc);
		struct sp_cfi c;

		if (!m || sp_cfi_find(&m->eh, exact ? pc : pc - 1, &c) ||
		    sp_cfi_step(&c, &mem, &r, &need) != SP_STEP_OK)
			return k;
		exact = c.signal;
		k++;
	}
}

__attribute__((noinline)) static void bottom(void)
{
	struct sp_thread *t = sp_self;
	uint64_t t0 = 0, t1 = 0;
	pid_t pid = getpid(), tid = t->tid;
	long i;

	if (mode == M_HANDLER) {
		getcontext(&ctx);
		t0 = now_ns();
		for (i = 0; i < n_iter; i++) {
			sp_handler(SIGPROF, &info, &ctx);
			atomic_store_explicit(&t->ring.tail,
					      atomic_load_explicit(
						      &t->ring.head,
						      memory_order_relaxed),
					      memory_order_relaxed);
		}
		t1 = now_ns();
		take_one(t);
	} else if (mode == M_BOTH) {
		t0 = now_ns();
		for (i = 0; i < n_iter; i++)
			syscall(SYS_tgkill, pid, tid, SIGPROF);
		t1 = now_ns();
	} else {
		getcontext(&ctx);
		take_one(t);
		t0 = now_ns();
		for (i = 0; i < n_iter; i++)
			unwound = unwind_rec();
		t1 = now_ns();
	}
	result_ns = (double)(t1 - t0) / (double)n_iter;
}

/* DEPTH frames of recursion with frame pointers, then bottom(). */
__attribute__((noinline)) static int dive_fp(int d)
{
	volatile int pad = d;

	if (d <= 1)
		bottom();
	else
		dive_fp(d - 1);
	return pad;
}

/* The same without frame pointers, as Debian builds its code: one with
 * small frames, one with frames of about the size real code has. */
#pragma GCC push_options
#pragma GCC optimize("omit-frame-pointer")
__attribute__((noinline)) static int dive_nofp(int d)
{
	volatile int pad = d;

	if (d <= 1)
		bottom();
	else
		dive_nofp(d - 1);
	return pad;
}

__attribute__((noinline)) static int dive_nofp256(int d)
{
	volatile char buf[256];

	buf[d & 255] = (char)d;
	if (d <= 1)
		bottom();
	else
		dive_nofp256(d - 1);
	return buf[d & 255];
}
#pragma GCC pop_options

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s floor N | handler|both|unwind DEPTH N "
			"fp|nofp|nofp256\n", argv0);
	return 2;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct sp_thread *t;
	int (*dive)(int);
	int depth;
	long d;

	if (argc < 3)
		return usage(argv[0]);
	t = thread_setup();
	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (strcmp(argv[1], "floor") == 0) {
		long n = strtol(argv[2], NULL, 10), i;
		uint64_t t0, t1;
		pid_t pid = getpid(), tid = t->tid;

		sa.sa_sigaction = empty;
		sigaction(SIGPROF, &sa, NULL);
		for (i = 0; i < n / 10; i++)	/* warm up */
			syscall(SYS_tgkill, pid, tid, SIGPROF);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			syscall(SYS_tgkill, pid, tid, SIGPROF);
		t1 = now_ns();
		printf("floor_ns %.1f\n", (double)(t1 - t0) / (double)n);
		return 0;
	}
	if (argc < 5)
		return usage(argv[0]);
	d = strtol(argv[2], NULL, 10);
	n_iter = strtol(argv[3], NULL, 10);
	if (d < 1 || d > 200)
		return usage(argv[0]);
	depth = (int)d;
	if (strcmp(argv[4], "fp") == 0)
		dive = dive_fp;
	else if (strcmp(argv[4], "nofp") == 0)
		dive = dive_nofp;
	else if (strcmp(argv[4], "nofp256") == 0)
		dive = dive_nofp256;
	else
		return usage(argv[0]);
	if (depth < 1 || depth > 200 || n_iter < 1)
		return usage(argv[0]);
	info.si_code = SI_TIMER;
	info.si_value.sival_ptr = &sp_cookie;
	if (strcmp(argv[1], "handler") == 0) {
		mode = M_HANDLER;
	} else if (strcmp(argv[1], "both") == 0) {
		mode = M_BOTH;
		sa.sa_sigaction = forced;
		sigaction(SIGPROF, &sa, NULL);
	} else if (strcmp(argv[1], "unwind") == 0) {
		mode = M_UNWIND;
		if (sp_maps_refresh())
			return 1;
	} else {
		return usage(argv[0]);
	}
	/* Once to warm up, once measured. */
	dive(depth);
	dive(depth);
	printf("%s_ns %.1f bytes %u", argv[1], result_ns,
	       SP_HDR_NSTACK(rec[0]) * 8);
	if (mode == M_UNWIND)
		printf(" frames %u", unwound);
	printf(" dropped %llu\n",
	       (unsigned long long)atomic_load(&t->ring.dropped));
	return 0;
}
