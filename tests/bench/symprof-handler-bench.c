/*
 * symprof-handler-bench.c - the per-sample cost of libsymprof, in its two
 * parts (tests/bench/symprof-bench.sh builds and runs it):
 *
 *	symprof-handler-bench floor N
 *	    the floor: N signals sent to this thread (tgkill) and delivered
 *	    to an empty SA_SIGINFO handler; prints ns per signal.  What the
 *	    kernel costs for any signal-driven sampler.
 *	symprof-handler-bench handler DEPTH N
 *	    our handler's own work: libsymprof's sp_handler() (linked from
 *	    tools/symprof/handler.c) called N times on a context taken at
 *	    the bottom of a DEPTH-deep frame-pointer recursion, as one of our
 *	    timer signals, with the ring emptied after each call (as the
 *	    drain thread would); prints ns per call and the frames it
 *	    recorded.  Caches are warm: the real handler also touches the
 *	    stack lines the interrupted code just used.
 *	symprof-handler-bench both DEPTH N
 *	    both at once: N tgkill()s delivered to sp_handler itself at
 *	    DEPTH (si_code is SI_TKILL there, so the handler is forced to
 *	    take the sample path by a flag): floor + handler in one number.
 *
 * Build: cc -O2 -g -fno-omit-frame-pointer -Itools/symprof -Ilibsym
 *        tests/bench/symprof-handler-bench.c tools/symprof/handler.c
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

/* What handler.c needs from the rest of the library. */
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

void sp_die_of(int sig)
{
	(void)sig;
	abort();
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

static long n_iter;
static double result_ns;
static uint32_t result_frames;
static int mode;		/* 1 handler, 2 both */

/* The signal path of mode 2: as if our timer had sent it. */
static void forced(int sig, siginfo_t *si, void *uc)
{
	si->si_code = SI_TIMER;
	si->si_value.sival_ptr = &sp_cookie;
	si->si_overrun = 0;
	sp_handler(sig, si, uc);
	/* Empty the ring, as the drain thread would. */
	atomic_store(&sp_self->ring.tail, atomic_load(&sp_self->ring.head));
}

__attribute__((noinline)) static void bottom(void)
{
	struct sp_thread *t = sp_self;
	ucontext_t uc;
	siginfo_t si;
	uint64_t t0, t1;
	pid_t pid = getpid(), tid = t->tid;
	long i;

	if (mode == 1) {
		getcontext(&uc);
		memset(&si, 0, sizeof(si));
		si.si_code = SI_TIMER;
		si.si_value.sival_ptr = &sp_cookie;
		t0 = now_ns();
		for (i = 0; i < n_iter; i++) {
			sp_handler(SIGPROF, &si, &uc);
			atomic_store_explicit(&t->ring.tail,
					      atomic_load_explicit(
						      &t->ring.head,
						      memory_order_relaxed),
					      memory_order_relaxed);
		}
		t1 = now_ns();
	} else {
		t0 = now_ns();
		for (i = 0; i < n_iter; i++)
			syscall(SYS_tgkill, pid, tid, SIGPROF);
		t1 = now_ns();
	}
	result_ns = (double)(t1 - t0) / (double)n_iter;
}

/* DEPTH frames of recursion with frame pointers, then bottom(). */
__attribute__((noinline)) static int dive(int d)
{
	volatile int pad = d;

	if (d <= 1)
		bottom();
	else
		dive(d - 1);
	return pad;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct sp_thread *t;
	int depth = 0;
	long d;
	double ns;
	sigset_t none;

	if (argc < 3) {
		fprintf(stderr, "usage: %s floor N | handler DEPTH N | "
				"both DEPTH N\n", argv[0]);
		return 2;
	}
	sigemptyset(&none);
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
	if (argc < 4)
		return 2;
	d = strtol(argv[2], NULL, 10);
	n_iter = strtol(argv[3], NULL, 10);
	if (d < 1 || d > 200 || n_iter < 1)
		return 2;
	depth = (int)d;
	if (strcmp(argv[1], "handler") == 0) {
		mode = 1;
	} else if (strcmp(argv[1], "both") == 0) {
		mode = 2;
		sa.sa_sigaction = forced;
		sigaction(SIGPROF, &sa, NULL);
	} else {
		return 2;
	}
	/* Once to warm up, once measured. */
	dive(depth);
	dive(depth);
	ns = result_ns;
	/* One more sample into an empty ring: the frames it records (the
	 * pc and the chain). */
	atomic_store(&t->ring.head, 0);
	atomic_store(&t->ring.tail, 0);
	n_iter = 1;
	mode = 1;
	dive(depth);
	result_frames = SP_HDR_N(t->ring.words[0]) + 1;
	printf("%s_ns %.1f frames %u dropped %llu\n", argv[1], ns,
	       result_frames,
	       (unsigned long long)atomic_load(&t->ring.dropped));
	return 0;
}
