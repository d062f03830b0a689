/*
 * symprof.c - libsymprof's start-up, threads, timers and interposed libc
 * functions.  See docs/symprof.md for the design and the limits.
 *
 * Start-up (a constructor, so before main and before the program's own
 * constructors): read SYMPROF_*, pick the signal, install the handler,
 * register the main thread, start the drain thread, arm the timer.  Any
 * problem prints one "libsymprof: ..." line and leaves the program
 * running unprofiled: the library never stops a program.
 *
 * Timers: each registered thread gets its own timer_create() timer on
 * its CPU clock (or CLOCK_MONOTONIC in wall mode), delivered to it alone
 * with SIGEV_THREAD_ID, so each thread is sampled in proportion to its
 * own CPU time.  Threads are registered by the pthread_create()
 * interposer, in a trampoline that runs on the new thread before the
 * start routine; a thread-specific key's destructor unregisters them
 * however they end.  When a per-thread timer cannot be created the
 * process falls back to one setitimer(ITIMER_PROF) and the file's mode
 * says process-timer.
 *
 * Signals: the program keeps its own view of the sampling signal.  The
 * sigaction() family is interposed: a handler the program installs for
 * our signal is recorded and called by ours for every signal that is
 * not one of our samples (sp_chain()); what the program reads back is
 * what it set.  Fatal signals that have the default disposition get a
 * handler that writes the profile and dies of the same signal; the
 * program sees SIG_DFL for them and replaces it at will.
 *
 * Exit, fork, exec: atexit, _exit/_Exit and fatal signals ask the drain
 * thread for the final write and wait for it while it gets anywhere: a
 * drain thread that is blocked (neither runnable nor using CPU) for
 * SP_FINAL_WAIT_MS is given up on, a starved one is not (futexes, a
 * clock and /proc only, so it works from a signal handler).  A child
 * after fork profiles into its own file when SYMPROF_OUT has %p, and
 * stops otherwise; exec writes the profile first and disarms the timers
 * so that no sampling signal reaches the new image before it installs
 * its handler.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "symprof.h"

/* How long exit paths wait for a final write that makes no progress
 * (sp_drain_request()). */
#define SP_FINAL_WAIT_MS 3000

struct sp_state sp = { .sig = SIGPROF, .cfi_cache = 1, .unwind_memo = 1 };
_Atomic int sp_active;
char sp_cookie;
_Atomic int sp_itimer_handed_over;
__thread struct sp_thread *sp_self __attribute__((tls_model("initial-exec")));
pthread_mutex_t sp_reg_lock = PTHREAD_MUTEX_INITIALIZER;
struct sp_thread *sp_threads;

_Atomic int sp_enabled;
static pthread_key_t sp_key;
static bool sp_key_ok;
/* Recycled thread structures (under sp_reg_lock). */
static struct sp_thread *sp_free_threads;
/* Exit paths: only the first one asks for the final write. */
static _Atomic int sp_final_done;


extern void *__libc_stack_end;

/* The real functions behind the interposed ones. */
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *,
				 void *(*)(void *), void *);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef void (*exit_fn)(int);
typedef int (*dlclose_fn)(void *);
typedef int (*setitimer_fn)(int, const struct itimerval *,
			    struct itimerval *);
typedef int (*getitimer_fn)(int, struct itimerval *);
typedef int (*sigwaitinfo_fn)(const sigset_t *, siginfo_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *,
			       const struct timespec *);

static sigaction_fn real_sigaction;
static pthread_create_fn real_pthread_create;
static execve_fn real_execve, real_execvpe;
static execv_fn real_execv, real_execvp;
static fexecve_fn real_fexecve;
static exit_fn real__exit, real__Exit;
static dlclose_fn real_dlclose;
static setitimer_fn real_setitimer;
static getitimer_fn real_getitimer;
static sigwaitinfo_fn real_sigwaitinfo;
static sigtimedwait_fn real_sigtimedwait;
/* Used by the dlopen/dlmopen stubs below (assembly), so not static. */
SP_HIDDEN void *sp_real_dlopen, *sp_real_dlmopen;

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

#define RESOLVE(var, name)                                        \
	do {                                                      \
		if (!(var))                                       \
			*(void **)&(var) = next_sym(name);        \
	} while (0)

static void resolve_all(void)
{
	RESOLVE(real_sigaction, "sigaction");
	RESOLVE(real_pthread_create, "pthread_create");
	RESOLVE(real_execve, "execve");
	RESOLVE(real_execvpe, "execvpe");
	RESOLVE(real_execv, "execv");
	RESOLVE(real_execvp, "execvp");
	RESOLVE(real_fexecve, "fexecve");
	RESOLVE(real__exit, "_exit");
	RESOLVE(real__Exit, "_Exit");
	RESOLVE(real_dlclose, "dlclose");
	RESOLVE(real_setitimer, "setitimer");
	RESOLVE(real_getitimer, "getitimer");
	RESOLVE(real_sigwaitinfo, "sigwaitinfo");
	RESOLVE(real_sigtimedwait, "sigtimedwait");
	RESOLVE(sp_real_dlopen, "dlopen");
	RESOLVE(sp_real_dlmopen, "dlmopen");
}

/* ---- small helpers ---------------------------------------------------- */

uint64_t sp_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

pid_t sp_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static pid_t sp_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

void sp_log(const char *a, const char *b, const char *c)
{
	char buf[1024];
	size_t n = 0;
	const char *parts[4] = { "libsymprof: ", a, b, c };
	int i;
	ssize_t w;

	for (i = 0; i < 4; i++) {
		size_t l;

		if (!parts[i])
			continue;
		l = strlen(parts[i]);
		if (l > sizeof(buf) - 1 - n)
			l = sizeof(buf) - 1 - n;
		memcpy(buf + n, parts[i], l);
		n += l;
	}
	buf[n++] = '\n';
	do
		w = write(2, buf, n);
	while (w < 0 && errno == EINTR);
}

void sp_fmt_u64(char *buf, size_t len, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = 0;
}

int sp_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

int sp_out_path(char *buf, size_t len)
{
	const char *s = sp.out_pattern;
	char pid[16];
	size_t n = 0, l;

	sp_fmt_u64(pid, sizeof(pid), (uint64_t)sp.pid);
	for (; *s; s++) {
		const char *add = s;

		l = 1;
		if (s[0] == '%' && s[1] == 'p') {
			add = pid;
			l = strlen(pid);
			s++;
		} else if (s[0] == '%' && s[1] == '%') {
			s++;
		}
		if (n + l >= len)
			return -ENAMETOOLONG;
		memcpy(buf + n, add, l);
		n += l;
	}
	buf[n] = 0;
	return 0;
}

/* ---- configuration ---------------------------------------------------- */

static int parse_uint(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A signal name or number we may sample with: SIGPROF, SIGVTALRM,
 * SIGUSR1, SIGUSR2 or a real-time one.  All terminate by default. */
static int parse_signal(const char *s, int *out)
{
	long v;
	const char *p = s;

	if (strncmp(p, "SIG", 3) == 0)
		p += 3;
	if (strcmp(p, "PROF") == 0)
		v = SIGPROF;
	else if (strcmp(p, "VTALRM") == 0)
		v = SIGVTALRM;
	else if (strcmp(p, "USR1") == 0)
		v = SIGUSR1;
	else if (strcmp(p, "USR2") == 0)
		v = SIGUSR2;
	else if (strncmp(p, "RTMIN", 5) == 0) {
		v = 0;
		if (p[5] && (p[5] != '+' || parse_uint(p + 6, 0, 64, &v)))
			return -EINVAL;
		v += SIGRTMIN;
	} else if (strncmp(p, "RTMAX", 5) == 0) {
		v = 0;
		if (p[5] && (p[5] != '-' || parse_uint(p + 6, 0, 64, &v)))
			return -EINVAL;
		v = SIGRTMAX - v;
	} else if (parse_uint(p, 1, 64, &v)) {
		return -EINVAL;
	}
	if (v != SIGPROF && v != SIGVTALRM && v != SIGUSR1 && v != SIGUSR2 &&
	    (v < SIGRTMIN || v > SIGRTMAX))
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* Reads the environment into sp; 1 when this process must not profile
 * (quietly), 0 to go on, -1 on a bad setting (already reported). */
static int read_config(bool *sig_given)
{
	const char *v;
	long n;
	char cwd[PATH_MAX];
	size_t l;

	sp.hz = 99;
	sp.interval_s = 10;
	sp.mode = SP_MODE_THREAD;
	v = getenv("SYMPROF_HZ");
	if (v && *v) {
		if (parse_uint(v, 1, 10000, &n)) {
			sp_log("SYMPROF_HZ='", v,
			       "' is not a number from 1 to 10000; "
			       "not profiling");
			return -1;
		}
		sp.hz = (int)n;
	}
	sp.period_ns = 1000000000ull / (uint64_t)sp.hz;
	v = getenv("SYMPROF_MODE");
	if (v && *v) {
		if (strcmp(v, "cpu") == 0) {
			sp.mode = SP_MODE_THREAD;
		} else if (strcmp(v, "wall") == 0) {
			sp.mode = SP_MODE_WALL;
			sp.wall = true;
		} else if (strcmp(v, "process") == 0) {
			sp.mode = SP_MODE_PROCESS;
		} else if (strcmp(v, "alloc") == 0) {
			sp.mode = SP_MODE_ALLOC;
			sp.sig = SIGUSR2;
		} else {
			sp_log("SYMPROF_MODE='", v,
			       "' is not cpu, wall, process or alloc; not "
			       "profiling");
			return -1;
		}
	}
	v = getenv("SYMPROF_RATE");
	if (v && *v) {
		if (parse_uint(v, 1, 1L << 40, &n)) {
			sp_log("SYMPROF_RATE='", v,
			       "' is not a number of bytes from 1 to 2^40; "
			       "not profiling");
			return -1;
		}
		sp_alloc_rate = (uint64_t)n;
	}
	v = getenv("SYMPROF_INTERVAL");
	if (v && *v) {
		if (parse_uint(v, 0, 86400, &n)) {
			sp_log("SYMPROF_INTERVAL='", v,
			       "' is not a number of seconds; not profiling");
			return -1;
		}
		sp.interval_s = (int)n;
	}
	*sig_given = false;
	v = getenv("SYMPROF_SIGNAL");
	if (v && *v) {
		if (parse_signal(v, &sp.sig)) {
			sp_log("SYMPROF_SIGNAL='", v,
			       "' is not SIGPROF, SIGVTALRM, SIGUSR1, SIGUSR2, "
			       "SIGRTMIN+N, SIGRTMAX-N or their number; "
			       "not profiling");
			return -1;
		}
		*sig_given = true;
	}
	if (sp.mode == SP_MODE_PROCESS && sp.sig != SIGPROF) {
		sp_log("SYMPROF_MODE=process samples with SIGPROF only; ",
		       "not profiling", NULL);
		return -1;
	}
	v = getenv("SYMPROF_OUT");
	if (!v || !*v)
		v = "symprof.%p.raw";
	for (l = 0; v[l]; l++) {
		if (v[l] != '%')
			continue;
		if (v[l + 1] != 'p' && v[l + 1] != '%') {
			sp_log("SYMPROF_OUT='", v,
			       "': only %p (the pid) and %% may follow '%'; "
			       "not profiling");
			return -1;
		}
		if (v[l + 1] == 'p')
			sp.out_has_pid = true;
		l++;
	}
	/* Absolute, so that a chdir() in the program does not move it. */
	cwd[0] = 0;
	if (v[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
		sp_log("cannot get the working directory for SYMPROF_OUT; ",
		       "not profiling", NULL);
		return -1;
	}
	if (strlen(cwd) + 1 + strlen(v) + 32 >= sizeof(sp.out_pattern)) {
		sp_log("SYMPROF_OUT is too long; not profiling", NULL, NULL);
		return -1;
	}
	snprintf(sp.out_pattern, sizeof(sp.out_pattern), "%s%s%s", cwd,
		 cwd[0] ? "/" : "", v);
	/* Without %p one process owns the file: the one named by
	 * SYMPROF_PID (sym run sets it), else the first to load us.  Its
	 * descendants, which inherit the environment, stay quiet. */
	if (!sp.out_has_pid) {
		char pid[16];

		v = getenv("SYMPROF_PID");
		sp_fmt_u64(pid, sizeof(pid), (uint64_t)sp_getpid());
		if (v && *v && strcmp(v, pid) != 0)
			return 1;
		if (!v || !*v)
			setenv("SYMPROF_PID", pid, 1);
	}
	return 0;
}

/* The test knobs (docs/symprof.md, "Test knobs"); 0, or -1 on a bad
 * setting (already reported). */
static int read_test_knobs(void)
{
	const char *v = getenv("SYMPROF_UNWIND_MEMO");

	sp.unwind_memo = !v || strcmp(v, "0") != 0;
	v = getenv("SYMPROF_CFI_CACHE");
	sp.cfi_cache = 1;
	if (!v || !*v || strcmp(v, "1") == 0)
		return 0;
	if (strcmp(v, "0") == 0) {
		sp.cfi_cache = 0;
		return 0;
	}
	if (strcmp(v, "check") == 0) {
		sp.cfi_cache = 2;
		return 0;
	}
	sp_log("SYMPROF_CFI_CACHE='", v, "' is not 0, 1 or check; "
	       "not profiling");
	return -1;
}

/* The output directory exists and is writable. */
static int check_out_dir(void)
{
	char path[sizeof(sp.out_pattern) + 32];
	char *slash;

	if (sp_out_path(path, sizeof(path)))
		return -ENAMETOOLONG;
	slash = strrchr(path, '/');
	if (slash == path)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	if (access(path, W_OK | X_OK))
		return -errno;
	return 0;
}

/* ---- the program's view of our signals ------------------------------- */

/*
 * Every signal our handler is installed on (the sampling signal, and one
 * we moved away from) is "emulated": the disposition the program set is
 * kept here and honoured by sp_chain() for every signal that is not one
 * of our samples.  Per signal, a ring of slots, so that the handler can
 * copy the current one without a lock: writers (under act_lock, with
 * signals blocked) fill the next slot, then publish its index.  A reader
 * would see a torn slot only if the program changed that handler more
 * than SP_ACT_SLOTS times during one delivery.
 */
#define SP_ACT_SLOTS 8
static struct sp_emul {
	struct sigaction act[SP_ACT_SLOTS];
	_Atomic unsigned cur;
	_Atomic bool on;
} emul[NSIG];
static atomic_flag act_lock = ATOMIC_FLAG_INIT;

void sp_prog_action(int sig, struct sigaction *out)
{
	struct sp_emul *e = &emul[sig];
	unsigned i = atomic_load_explicit(&e->cur, memory_order_acquire);

	*out = e->act[i % SP_ACT_SLOTS];
}

static void act_lock_take(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	while (atomic_flag_test_and_set_explicit(&act_lock,
						 memory_order_acquire))
		sched_yield();
}

static void act_lock_drop(const sigset_t *old)
{
	atomic_flag_clear_explicit(&act_lock, memory_order_release);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Our action on @sig, taking the program's SA_RESTART/SA_ONSTACK and
 * mask, so that its own signals behave as they would without us.  Our
 * action never has SA_NODEFER or SA_RESETHAND (sp_chain() emulates
 * them): the sampling handler must not nest. */
static int install_sampler(int sig, const struct sigaction *pa)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sp_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	if (pa->sa_handler != SIG_DFL && pa->sa_handler != SIG_IGN) {
		sa.sa_flags = SA_SIGINFO |
			      (pa->sa_flags & (SA_RESTART | SA_ONSTACK));
		sa.sa_mask = pa->sa_mask;
	}
	sigdelset(&sa.sa_mask, sig);
	return real_sigaction(sig, &sa, NULL);
}

/* Record @act as the program's action on @sig. */
static void prog_act_set(int sig, const struct sigaction *act)
{
	struct sp_emul *e = &emul[sig];
	unsigned i = atomic_load_explicit(&e->cur, memory_order_relaxed);

	e->act[(i + 1) % SP_ACT_SLOTS] = *act;
	atomic_store_explicit(&e->cur, i + 1, memory_order_release);
}

void sp_prog_action_reset(int sig)
{
	struct sigaction dfl;

	/* Called from the handler: no lock (a concurrent sigaction() of
	 * the program wins, as it would against the kernel's reset). */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	prog_act_set(sig, &dfl);
}

/* Start emulating @sig (its disposition is SIG_DFL): install ours. */
static int emulate(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	emul[sig].act[0] = dfl;
	atomic_store(&emul[sig].cur, 0);
	if (install_sampler(sig, &dfl))
		return -1;
	atomic_store(&emul[sig].on, true);
	return 0;
}

/* A free signal to sample with: real-time, from SIGRTMAX down, with the
 * default disposition and not emulated already.  0 when none. */
static int free_rt_signal(void)
{
	struct sigaction old;
	int s;

	for (s = SIGRTMAX; s >= SIGRTMIN; s--) {
		if (atomic_load(&emul[s].on))
			continue;
		if (real_sigaction(s, NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL)
			return s;
	}
	return 0;
}

/* ---- fatal signals ---------------------------------------------------- */

static const int fatal_sigs[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
	SIGSEGV, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS,
};
#define NFATAL (sizeof(fatal_sigs) / sizeof(fatal_sigs[0]))
/* Our final-write handler is installed on signal i (the program has not
 * set one since). */
static _Atomic int fatal_ours[NSIG];

static void final_write(void)
{
	if (!atomic_load(&sp_enabled) || sp_on_drain_thread() ||
	    sp_getpid() != sp.pid)
		return;
	if (atomic_exchange(&sp_final_done, 1))
		return;
	/* The wait for the write is the profiler's time, not the
	 * program's: no samples from here on. */
	atomic_store(&sp_active, 0);
	sp_drain_request(SP_REQ_FINAL, SP_FINAL_WAIT_MS);
}

void sp_die_of(int sig)
{
	struct sigaction dfl;
	sigset_t set;

	final_write();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	/* A fault returns to the faulting instruction and faults again, now
	 * with the default action; anything else is sent again. */
	syscall(SYS_tgkill, sp_getpid(), sp_gettid(), sig);
}

static void fatal_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)si;
	(void)uc;
	sp_die_of(sig);
	errno = saved;
}

static void install_fatal(void)
{
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fatal_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESETHAND;
	for (i = 0; i < NFATAL; i++) {
		int s = fatal_sigs[i];

		if (s == sp.sig || real_sigaction(s, NULL, &old) ||
		    old.sa_handler != SIG_DFL)
			continue;
		if (real_sigaction(s, &sa, NULL) == 0)
			atomic_store(&fatal_ours[s], 1);
	}
}

/* ---- threads and timers ----------------------------------------------- */

static struct sp_thread *thread_alloc(void)
{
	struct sp_thread *t;

	pthread_mutex_lock(&sp_reg_lock);
	t = sp_free_threads;
	if (t)
		sp_free_threads = t->next;
	pthread_mutex_unlock(&sp_reg_lock);
	if (!t) {
		t = sp_mmap(sizeof(*t));
		if (!t)
			return NULL;
	}
	t->next = NULL;
	t->has_timer = false;
	t->seen = false;
	t->comm[0] = 0;
	atomic_store(&t->ring.head, 0);
	atomic_store(&t->ring.tail, 0);
	atomic_store(&t->ring.dropped, 0);
	atomic_store(&t->ring.kicked, 0);
	return t;
}

/* Called by the drain thread with a dead, empty thread (reg lock held). */
SP_HIDDEN void sp_thread_recycle(struct sp_thread *t);
void sp_thread_recycle(struct sp_thread *t)
{
	t->next = sp_free_threads;
	sp_free_threads = t;
}

static void stack_bounds(struct sp_thread *t, bool main_thread)
{
	pthread_attr_t attr;
	void *addr = NULL;
	size_t size = 0;

	t->stack_lo = t->stack_hi = 0;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			t->stack_lo = (uintptr_t)addr;
			t->stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	/* Main thread: frames lie below the initial stack pointer, which
	 * ld.so saved; above it are argv and the environment. */
	if (main_thread && __libc_stack_end &&
	    (uintptr_t)__libc_stack_end > t->stack_lo &&
	    (uintptr_t)__libc_stack_end <= t->stack_hi)
		t->stack_hi = (uintptr_t)__libc_stack_end;
}

/* Arm @t's timer on sp.sig: its own CPU clock (or CLOCK_MONOTONIC in
 * wall mode), delivered to it alone.  Called on @t itself, or under
 * sp_reg_lock for a live thread (move_sampling()). */
static int arm_thread(struct sp_thread *t)
{
	struct sigevent sev;
	struct itimerspec its;
	clockid_t clk = CLOCK_MONOTONIC;
	uint64_t first = sp.period_ns;
	int err;

	if (!sp.wall) {
		clk = CLOCK_THREAD_CPUTIME_ID;
		if (t->tid != sp_gettid() &&
		    pthread_getcpuclockid(t->pth, &clk))
			return -ESRCH;
	}
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sp.sig;
	sev.sigev_value.sival_ptr = &sp_cookie;
	sev._sigev_un._tid = t->tid;
	if (timer_create(clk, &sev, &t->timer))
		return -errno;
	/* Wall clock: spread the threads' phases so that they are not all
	 * interrupted at once. */
	if (sp.wall)
		first = 1 + (uint64_t)((uint32_t)t->tid * 2654435761u) %
				    sp.period_ns;
	its.it_interval.tv_sec = (time_t)(sp.period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(sp.period_ns % 1000000000u);
	its.it_value.tv_sec = (time_t)(first / 1000000000u);
	its.it_value.tv_nsec = (long)(first % 1000000000u);
	if (timer_settime(t->timer, 0, &its, NULL)) {
		err = -errno;
		timer_delete(t->timer);
		return err;
	}
	t->has_timer = true;
	return 0;
}

/*
 * The program installed a handler for the signal we sample with: move
 * every thread's timer to a free real-time signal.  Sharing would lose
 * signals (two instances of a standard signal coalesce while pending:
 * the program's raise() could vanish behind one of our samples).  Our
 * handler stays on the old signal, forwarding everything to the
 * program's handler (and still taking a late sample of ours).  Not in
 * process mode: ITIMER_PROF delivers SIGPROF and nothing else.
 */
static void move_sampling(void)
{
	struct sp_thread *t;
	int ns, old;

	if (!atomic_load(&sp_enabled) || sp_getpid() != sp.pid ||
	    __atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) == SP_MODE_PROCESS)
		return;
	pthread_mutex_lock(&sp_reg_lock);
	old = sp.sig;
	ns = free_rt_signal();
	if (!ns || emulate(ns)) {
		snprintf(sp.sig_note, sizeof(sp.sig_note),
			 "the program handles signal %d too and no real-time "
			 "signal is free: samples share it", old);
		pthread_mutex_unlock(&sp_reg_lock);
		return;
	}
	sp.sig = ns;
	for (t = sp_threads; t; t = t->next) {
		timer_t prev = t->timer;

		if (atomic_load(&t->state) != SP_THREAD_LIVE || !t->has_timer)
			continue;
		t->has_timer = false;
		if (arm_thread(t) == 0) {
			timer_delete(prev);
		} else {
			t->timer = prev;
			t->has_timer = true;
		}
	}
	snprintf(sp.sig_note, sizeof(sp.sig_note),
		 "sampling moved from signal %d to %d after %llu ms: the "
		 "program installed a handler for %d", old, ns,
		 (unsigned long long)((sp_now_ns(CLOCK_MONOTONIC) -
				       sp.start_mono_ns) / 1000000), old);
	pthread_mutex_unlock(&sp_reg_lock);
}

static int arm_process(void)
{
	struct itimerval it;

	it.it_interval.tv_sec = (time_t)(sp.period_ns / 1000000000u);
	it.it_interval.tv_usec = (suseconds_t)(sp.period_ns % 1000000000u /
					       1000);
	if (!it.it_interval.tv_sec && !it.it_interval.tv_usec)
		it.it_interval.tv_usec = 1;
	it.it_value = it.it_interval;
	return real_setitimer(ITIMER_PROF, &it, NULL) ? -errno : 0;
}

/* A later thread's timer failed: go process-wide if we can (caller does
 * not hold sp_reg_lock). */
static void switch_to_process(int err)
{
	struct itimerval cur;
	struct sp_thread *t;

	pthread_mutex_lock(&sp_reg_lock);
	if (sp.mode != SP_MODE_THREAD || sp.sig != SIGPROF ||
	    (real_getitimer(ITIMER_PROF, &cur) == 0 &&
	     (cur.it_value.tv_sec || cur.it_value.tv_usec))) {
		sp.threads_unarmed++;
		pthread_mutex_unlock(&sp_reg_lock);
		return;
	}
	snprintf(sp.mode_note, sizeof(sp.mode_note),
		 "a per-thread timer failed (%s) after %llu ms: "
		 "process-timer from then on", strerrordesc_np(-err),
		 (unsigned long long)((sp_now_ns(CLOCK_MONOTONIC) -
				       sp.start_mono_ns) / 1000000));
	__atomic_store_n(&sp.mode, SP_MODE_PROCESS, __ATOMIC_RELEASE);
	for (t = sp_threads; t; t = t->next) {
		if (t->has_timer) {
			timer_delete(t->timer);
			t->has_timer = false;
		}
	}
	if (arm_process())
		sp.threads_unarmed++;
	pthread_mutex_unlock(&sp_reg_lock);
}

/* Sampling by per-thread timers: not process-wide, not alloc mode. */
static bool timed(void)
{
	int mode = __atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE);

	return mode != SP_MODE_PROCESS && mode != SP_MODE_ALLOC;
}

/* Register the calling thread and arm its timer.  A later thread whose
 * timer fails switches the process to ITIMER_PROF; for the main thread
 * the error goes to *arm_err and the caller decides. */
static struct sp_thread *thread_begin(bool main_thread, int *arm_err)
{
	struct sp_thread *t = thread_alloc();
	int err = 0;

	if (arm_err)
		*arm_err = 0;
	if (!t)
		return NULL;
	t->tid = sp_gettid();
	t->pth = pthread_self();
	stack_bounds(t, main_thread);
	atomic_store(&t->state, SP_THREAD_LIVE);
	if (sp_key_ok)
		pthread_setspecific(sp_key, t);
	/* Linked and armed under the lock: move_sampling() sees every
	 * thread either before (and moves it) or after (armed on the new
	 * signal). */
	pthread_mutex_lock(&sp_reg_lock);
	t->next = sp_threads;
	sp_threads = t;
	atomic_signal_fence(memory_order_seq_cst);
	sp_self = t;
	atomic_signal_fence(memory_order_seq_cst);
	if (timed())
		err = arm_thread(t);
	pthread_mutex_unlock(&sp_reg_lock);
	if (err && !main_thread)
		switch_to_process(err);
	else if (err && arm_err)
		*arm_err = err;
	return t;
}

static void thread_end(struct sp_thread *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&sp_reg_lock);
	if (t->has_timer) {
		timer_delete(t->timer);
		t->has_timer = false;
	}
	pthread_mutex_unlock(&sp_reg_lock);
	prctl(PR_GET_NAME, t->comm, 0, 0, 0);
	atomic_signal_fence(memory_order_seq_cst);
	if (sp_self == t)
		sp_self = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&t->state, SP_THREAD_DEAD, memory_order_release);
}

static void key_destructor(void *p)
{
	thread_end(p);
}

struct sp_start {
	void *(*fn)(void *);
	void *arg;
};

/* Runs on the new thread, between glibc's start_thread and the start
 * routine: registers the thread, then runs the routine.  Its frame is on
 * every stack of the thread, and the drain thread leaves it out (it is
 * ours, not the program's). */
__attribute__((noinline)) static void *thread_trampoline(void *p)
{
	struct sp_start s = *(struct sp_start *)p;
	struct sp_thread *t;
	void *ret;

	free(p);
	t = thread_begin(false, NULL);
	ret = s.fn(s.arg);
	if (t && sp_self == t) {
		if (sp_key_ok)
			pthread_setspecific(sp_key, NULL);
		thread_end(t);
	}
	return ret;
}

SP_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			     void *(*fn)(void *), void *arg)
{
	struct sp_start *s;
	int err;

	RESOLVE(real_pthread_create, "pthread_create");
	if (!real_pthread_create)
		return EAGAIN;
	if (!atomic_load(&sp_enabled))
		return real_pthread_create(th, attr, fn, arg);
	/* Alloc mode's drain thread, from the program's second thread on
	 * (drain.c); without it, the rings are drained when sampled. */
	sp_drain_need_thread();
	s = malloc(sizeof(*s));
	if (!s)
		return real_pthread_create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	err = real_pthread_create(th, attr, thread_trampoline, s);
	if (err)
		free(s);
	return err;
}

/* A thread of our own (the drain thread): not registered, not sampled,
 * detached, with every signal blocked so that none of the program's
 * process-directed signals is ever handled on it. */
SP_HIDDEN int sp_create_thread(void *(*fn)(void *), void *arg);
int sp_create_thread(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t th;
	sigset_t all, old;
	int err;

	RESOLVE(real_pthread_create, "pthread_create");
	if (!real_pthread_create)
		return -ENOSYS;
	if (pthread_attr_init(&attr))
		return -ENOMEM;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = real_pthread_create(&th, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -err;
}

/* ---- start-up ---------------------------------------------------------- */

/* The recording starts now: wall clock for `start`, monotonic for
 * `duration`. */
static void mark_start(void)
{
	struct timespec ts;
	struct tm tm;
	char frac[16];

	clock_gettime(CLOCK_REALTIME, &ts);
	sp.start_mono_ns = sp_now_ns(CLOCK_MONOTONIC);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(sp.start_str, sizeof(sp.start_str) - 8, "%Y-%m-%dT%H:%M:%S",
		 &tm);
	snprintf(frac, sizeof(frac), ".%06dZ", (int)(ts.tv_nsec / 1000));
	memcpy(sp.start_str + strlen(sp.start_str), frac, strlen(frac) + 1);
}

static void at_exit(void)
{
	final_write();
}

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

/* Choose the signal: the given one must be free; the default SIGPROF is
 * replaced by a free real-time signal when the process already has a
 * disposition for it (a handler, or SIG_IGN inherited). */
static int pick_signal(bool given)
{
	struct sigaction old;
	int s;

	if (real_sigaction(sp.sig, NULL, &old))
		return -1;
	if (old.sa_handler == SIG_DFL)
		return 0;
	if (given || sp.mode == SP_MODE_PROCESS) {
		char num[16];

		sp_fmt_u64(num, sizeof(num), (uint64_t)sp.sig);
		sp_log("signal ", num,
		       " already has a handler or is ignored; not profiling "
		       "(set SYMPROF_SIGNAL to a free signal)");
		return -1;
	}
	s = free_rt_signal();
	if (s) {
		char num[16];

		sp_fmt_u64(num, sizeof(num), (uint64_t)s);
		sp_log("SIGPROF already has a handler; sampling with signal ",
		       num, " instead");
		sp.sig = s;
		return 0;
	}
	sp_log("SIGPROF already has a handler and no real-time signal is "
	       "free; not profiling", NULL, NULL);
	return -1;
}

/* Alloc mode: sampling starts, unless another malloc is in the way. */
static void start_alloc(void)
{
	const char *who = sp_alloc_replaced();

	if (who) {
		snprintf(sp.alloc_note, sizeof(sp.alloc_note),
			 "malloc is replaced by '%s': allocations are not "
			 "sampled", who);
		sp_log("malloc is replaced by '", who,
		       "'; alloc mode samples glibc's malloc only: not "
		       "sampling");
		return;
	}
	atomic_store(&sp_alloc_on, 1);
	sp_alloc_arm();
}

__attribute__((constructor)) static void sp_init(void)
{
	struct sp_thread *t;
	bool sig_given = false;
	int rc, err;

	resolve_all();
	if (!real_sigaction || !real_pthread_create || !real_setitimer) {
		sp_log("cannot find libc's sigaction, pthread_create or "
		       "setitimer; not profiling", NULL, NULL);
		return;
	}
	sp.pid = sp_getpid();
	rc = read_config(&sig_given);
	if (rc || read_test_knobs())
		return;
	err = check_out_dir();
	if (err) {
		char path[sizeof(sp.out_pattern) + 32];

		sp_out_path(path, sizeof(path));
		sp_log("cannot write '", path, "': its directory is not "
		       "writable; not profiling");
		return;
	}
	if (pick_signal(sig_given))
		return;

	mark_start();

	if (emulate(sp.sig)) {
		sp_log("cannot install the signal handler; not profiling",
		       NULL, NULL);
		return;
	}
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	sp_key_ok = pthread_key_create(&sp_key, key_destructor) == 0;
	if (sp_drain_begin(sp.mode == SP_MODE_ALLOC)) {
		sp_log("cannot start the drain thread; not profiling", NULL,
		       NULL);
		goto uninstall;
	}
	atomic_store(&sp_enabled, 1);
	atomic_store(&sp_active, 1);
	t = thread_begin(true, &err);
	if (!t)
		goto fail;
	if (sp.mode == SP_MODE_ALLOC) {
		start_alloc();
	} else if (sp.mode == SP_MODE_PROCESS) {
		if (arm_process())
			goto fail;
	} else if (err && !sp.wall && sp.sig == SIGPROF) {
		/* No per-thread timers here (seccomp, a limit): one
		 * process-wide timer instead. */
		snprintf(sp.mode_note, sizeof(sp.mode_note),
			 "timer_create failed at start-up (%s): process-timer",
			 strerrordesc_np(-err));
		__atomic_store_n(&sp.mode, SP_MODE_PROCESS, __ATOMIC_RELEASE);
		if (arm_process())
			goto fail;
	} else if (err) {
		goto fail;
	}
	atexit(at_exit);
	install_fatal();
	return;

fail:
	sp_log("cannot arm a sampling timer; not profiling", NULL, NULL);
	atomic_store(&sp_active, 0);
	atomic_store(&sp_enabled, 0);
	if (sp_self) {
		thread_end(sp_self);
	}
uninstall:
	/* The handler stays: it forwards to the program's disposition,
	 * which is SIG_DFL here, exactly as if we were not there. */
	return;
}

/* ---- fork -------------------------------------------------------------- */

static bool fork_locked;
static sigset_t fork_mask;

static void fork_prepare(void)
{
	struct timespec dl;

	/* The signal dispositions' spin lock: a child must not inherit it
	 * taken by a thread that does not exist there.  (It serializes
	 * forks, too.) */
	act_lock_take(&fork_mask);
	fork_locked = false;
	if (!atomic_load(&sp_enabled) || sp_getpid() != sp.pid)
		return;
	/* The drain thread holds sp_drain_lock while it works (also inside
	 * dl_iterate_phdr): the child must not inherit it half-done.  A
	 * bounded wait, in case fork() is called from a handler that
	 * interrupted our own code. */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	if (pthread_mutex_timedlock(&sp_drain_lock, &dl))
		return;
	if (pthread_mutex_timedlock(&sp_reg_lock, &dl)) {
		pthread_mutex_unlock(&sp_drain_lock);
		return;
	}
	fork_locked = true;
}

static void fork_parent(void)
{
	if (fork_locked) {
		pthread_mutex_unlock(&sp_reg_lock);
		pthread_mutex_unlock(&sp_drain_lock);
		fork_locked = false;
	}
	act_lock_drop(&fork_mask);
}

static void fork_child(void)
{
	struct sp_thread *me = sp_self;
	pthread_mutexattr_t ma;
	bool keep;

	act_lock_drop(&fork_mask);
	if (!atomic_load(&sp_enabled) || !fork_locked)
		goto stop;
	fork_locked = false;
	pthread_mutex_init(&sp_reg_lock, NULL);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&sp_drain_lock, &ma);
	pthread_mutexattr_destroy(&ma);
	keep = sp.out_has_pid && me;
	/* Only this thread exists now.  The others' structures are
	 * forgotten (their memory is this process's copy; it is not worth
	 * recycling). */
	sp_threads = NULL;
	sp_free_threads = NULL;
	if (!keep)
		goto stop;
	sp.pid = sp_getpid();
	me->tid = sp_gettid();
	me->next = NULL;
	me->has_timer = false;
	atomic_store(&me->ring.head, 0);
	atomic_store(&me->ring.tail, 0);
	atomic_store(&me->ring.dropped, 0);
	atomic_store(&me->ring.kicked, 0);
	sp_threads = me;
	mark_start();
	atomic_store(&sp_final_done, 0);
	sp_drain_reset_child();
	if (sp_drain_begin(__atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) ==
			   SP_MODE_ALLOC))
		goto stop;
	if (__atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) == SP_MODE_ALLOC) {
		sp_alloc_reset_child();
	} else if (__atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) ==
		   SP_MODE_PROCESS) {
		if (arm_process())
			goto stop;
	} else if (arm_thread(me)) {
		goto stop;
	}
	return;

stop:
	/* Not profiling in this child: no timer was inherited, nothing is
	 * written; the handler keeps forwarding the program's signals. */
	atomic_store(&sp_alloc_on, 0);
	atomic_store(&sp_active, 0);
	atomic_store(&sp_enabled, 0);
}

/* ---- exec, _exit ------------------------------------------------------- */

/* Before an exec in the profiled process: write the profile, disarm this
 * thread's timer or ITIMER_PROF (itimers survive exec, and a SIGPROF
 * would kill the new image before its handler exists), and discard our
 * signals already pending.  Returns true when re-arming is needed if the
 * exec fails. */
static bool before_exec(void)
{
	struct itimerval zero;
	struct timespec now = { 0, 0 };
	sigset_t set, old;
	siginfo_t si;
	struct sp_thread *t = sp_self;
	bool rearm = false;
	int s, foreign = 0;

	if (!atomic_load(&sp_enabled) || sp_getpid() != sp.pid)
		return false;
	sp_drain_request(SP_REQ_WRITE, SP_FINAL_WAIT_MS);
	sigemptyset(&set);
	sigaddset(&set, sp.sig);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	if (__atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) == SP_MODE_PROCESS) {
		if (!atomic_load(&sp_itimer_handed_over)) {
			memset(&zero, 0, sizeof(zero));
			real_setitimer(ITIMER_PROF, &zero, NULL);
			rearm = true;
		}
	} else if (t) {
		pthread_mutex_lock(&sp_reg_lock);
		if (t->has_timer) {
			timer_delete(t->timer);
			t->has_timer = false;
			rearm = true;
		}
		pthread_mutex_unlock(&sp_reg_lock);
	}
	RESOLVE(real_sigtimedwait, "sigtimedwait");
	while ((s = real_sigtimedwait(&set, &si, &now)) == sp.sig) {
		if (!sp_is_ours(s, &si))
			foreign++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* The program's own instance of the signal: deliver it again. */
	if (foreign)
		syscall(SYS_tgkill, sp_getpid(), sp_gettid(), sp.sig);
	return rearm;
}

static void after_failed_exec(bool rearm)
{
	int saved = errno;

	if (rearm && atomic_load(&sp_enabled)) {
		if (__atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) ==
		    SP_MODE_PROCESS)
			arm_process();
		else if (sp_self)
			arm_thread(sp_self);
	}
	errno = saved;
}

SP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	bool rearm;
	int rc;

	RESOLVE(real_execve, "execve");
	rearm = before_exec();
	rc = real_execve(path, argv, envp);
	after_failed_exec(rearm);
	return rc;
}

SP_EXPORT int execv(const char *path, char *const argv[])
{
	bool rearm;
	int rc;

	RESOLVE(real_execv, "execv");
	rearm = before_exec();
	rc = real_execv(path, argv);
	after_failed_exec(rearm);
	return rc;
}

SP_EXPORT int execvp(const char *file, char *const argv[])
{
	bool rearm;
	int rc;

	RESOLVE(real_execvp, "execvp");
	rearm = before_exec();
	rc = real_execvp(file, argv);
	after_failed_exec(rearm);
	return rc;
}

SP_EXPORT int execvpe(const char *file, char *const argv[],
		      char *const envp[])
{
	bool rearm;
	int rc;

	RESOLVE(real_execvpe, "execvpe");
	rearm = before_exec();
	rc = real_execvpe(file, argv, envp);
	after_failed_exec(rearm);
	return rc;
}

SP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	bool rearm;
	int rc;

	RESOLVE(real_fexecve, "fexecve");
	rearm = before_exec();
	rc = real_fexecve(fd, argv, envp);
	after_failed_exec(rearm);
	return rc;
}

/* execl, execlp, execle: glibc's call execve/execvpe internally, past the
 * interposer, so they are rebuilt here on top of ours. */
#define SP_MAX_ARGS 4096
static int collect_args(const char *arg0, va_list ap, char **argv,
			char ***envp)
{
	int n = 0;

	argv[n++] = (char *)arg0;
	while (arg0 && n < SP_MAX_ARGS) {
		argv[n] = va_arg(ap, char *);
		if (!argv[n])
			break;
		n++;
	}
	if (n >= SP_MAX_ARGS) {
		errno = E2BIG;
		return -1;
	}
	argv[n] = NULL;
	if (envp)
		*envp = va_arg(ap, char **);
	return 0;
}

SP_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[SP_MAX_ARGS + 1];
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect_args(arg, ap, argv, NULL);
	va_end(ap);
	return rc ? rc : execv(path, argv);
}

SP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[SP_MAX_ARGS + 1];
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect_args(arg, ap, argv, NULL);
	va_end(ap);
	return rc ? rc : execvp(file, argv);
}

SP_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[SP_MAX_ARGS + 1];
	char **envp = NULL;
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect_args(arg, ap, argv, &envp);
	va_end(ap);
	return rc ? rc : execve(path, argv, envp);
}

SP_EXPORT void _exit(int status)
{
	RESOLVE(real__exit, "_exit");
	final_write();
	real__exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

SP_EXPORT void _Exit(int status)
{
	RESOLVE(real__Exit, "_Exit");
	final_write();
	real__Exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

/* ---- sigaction and friends -------------------------------------------- */

SP_EXPORT int sigaction(int sig, const struct sigaction *act,
			struct sigaction *old)
{
	struct sigaction cur;
	sigset_t mask;
	int rc = 0;

	RESOLVE(real_sigaction, "sigaction");
	if (sig > 0 && sig < NSIG && atomic_load(&emul[sig].on)) {
		/* The program's own view of a signal our handler is on. */
		act_lock_take(&mask);
		sp_prog_action(sig, &cur);
		if (act) {
			struct sigaction a = *act;

			sigdelset(&a.sa_mask, SIGKILL);
			sigdelset(&a.sa_mask, SIGSTOP);
			rc = install_sampler(sig, &a);
			if (rc == 0)
				prog_act_set(sig, &a);
		}
		act_lock_drop(&mask);
		if (rc == 0 && old)
			*old = cur;
		/* The program uses the signal we sample with: sample with
		 * another, so that its signals and ours never coalesce. */
		if (rc == 0 && act && sig == sp.sig &&
		    act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN)
			move_sampling();
		return rc;
	}
	if (sig > 0 && sig < NSIG && atomic_load(&fatal_ours[sig])) {
		/* Ours stands for SIG_DFL: report that, and keep it as long
		 * as the program asks for SIG_DFL. */
		if (act && act->sa_handler == SIG_DFL &&
		    !(act->sa_flags & SA_SIGINFO)) {
			if (old) {
				memset(old, 0, sizeof(*old));
				old->sa_handler = SIG_DFL;
			}
			return 0;
		}
		if (!act) {
			if (old) {
				memset(old, 0, sizeof(*old));
				old->sa_handler = SIG_DFL;
			}
			return 0;
		}
		rc = real_sigaction(sig, act, NULL);
		if (rc == 0) {
			atomic_store(&fatal_ours[sig], 0);
			if (old) {
				memset(old, 0, sizeof(*old));
				old->sa_handler = SIG_DFL;
			}
		}
		return rc;
	}
	return real_sigaction(sig, act, old);
}

/* signal(): BSD semantics, as glibc's (SA_RESTART, the signal blocked
 * while its handler runs). */
static sighandler_t sp_signal(int sig, sighandler_t h, int flags)
{
	struct sigaction act, old;

	if (sig <= 0 || sig >= NSIG || h == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = h;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

SP_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return sp_signal(sig, h, SA_RESTART);
}

SP_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h);
SP_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return sp_signal(sig, h, SA_RESTART);
}

SP_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return sp_signal(sig, h, SA_RESETHAND | SA_NODEFER);
}

/* The program takes ITIMER_PROF for itself: in process mode we stop
 * sampling rather than share it; the program sees no timer of ours. */
SP_EXPORT int setitimer(__itimer_which_t which,
			const struct itimerval *restrict nv,
			struct itimerval *restrict ov)
{
	RESOLVE(real_setitimer, "setitimer");
	if (which == ITIMER_PROF && atomic_load(&sp_enabled) &&
	    __atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) == SP_MODE_PROCESS &&
	    !atomic_load(&sp_itimer_handed_over)) {
		atomic_store(&sp_itimer_handed_over, 1);
		sp_log("the program sets ITIMER_PROF itself; process-timer "
		       "sampling stops", NULL, NULL);
		if (ov)
			memset(ov, 0, sizeof(*ov));
		return real_setitimer(which, nv, NULL);
	}
	return real_setitimer(which, nv, ov);
}

SP_EXPORT int getitimer(__itimer_which_t which, struct itimerval *cur)
{
	RESOLVE(real_getitimer, "getitimer");
	if (which == ITIMER_PROF && atomic_load(&sp_enabled) &&
	    __atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) == SP_MODE_PROCESS &&
	    !atomic_load(&sp_itimer_handed_over)) {
		if (!cur) {
			errno = EFAULT;
			return -1;
		}
		memset(cur, 0, sizeof(*cur));
		return 0;
	}
	return real_getitimer(which, cur);
}

/* sigwait and friends must not hand our samples to the program. */
SP_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info,
			   const struct timespec *timeout)
{
	siginfo_t si;
	struct timespec left;
	uint64_t end = 0;
	int s;

	RESOLVE(real_sigtimedwait, "sigtimedwait");
	if (timeout) {
		left = *timeout;
		end = sp_now_ns(CLOCK_MONOTONIC) +
		      (uint64_t)timeout->tv_sec * 1000000000u +
		      (uint64_t)timeout->tv_nsec;
	}
	for (;;) {
		s = real_sigtimedwait(set, &si, timeout ? &left : NULL);
		if (s < 0 || !sp_is_ours(s, &si))
			break;
		if (timeout) {
			uint64_t now = sp_now_ns(CLOCK_MONOTONIC);
			uint64_t l = now < end ? end - now : 0;

			left.tv_sec = (time_t)(l / 1000000000u);
			left.tv_nsec = (long)(l % 1000000000u);
		}
	}
	if (s > 0 && info)
		*info = si;
	return s;
}

SP_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	siginfo_t si;
	int s;

	RESOLVE(real_sigwaitinfo, "sigwaitinfo");
	do
		s = real_sigwaitinfo(set, &si);
	while (s > 0 && sp_is_ours(s, &si));
	if (s > 0 && info)
		*info = si;
	return s;
}

SP_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	int s;

	do
		s = sigwaitinfo(set, NULL);
	while (s < 0 && errno == EINTR);
	if (s < 0)
		return errno;
	*sig = s;
	return 0;
}

/* ---- dlopen, dlclose ----------------------------------------------------- */

/* The mapping table must be refreshed: called by the dlopen stubs before
 * the real dlopen runs (the drain thread also refreshes whenever a pc is
 * in no known mapping, which covers what is loaded after this). */
SP_HIDDEN void sp_dlopen_hook(void);
void sp_dlopen_hook(void)
{
	resolve_all();
	atomic_fetch_add(&sp_maps_gen, 1);
}

/*
 * dlopen and dlmopen jump to the real function instead of calling it:
 * glibc finds the caller's object (for its RUNPATH and $ORIGIN) from the
 * return address, which must stay the program's.
 */
__asm__(".text\n"
	".globl dlopen\n"
	".type dlopen,@function\n"
	"dlopen:\n"
	".cfi_startproc\n"
	"	push %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	push %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	push %rdx\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call sp_dlopen_hook\n"
	"	pop %rdx\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	jmp *sp_real_dlopen(%rip)\n"
	".cfi_endproc\n"
	".size dlopen, .-dlopen\n"
	".globl dlmopen\n"
	".type dlmopen,@function\n"
	"dlmopen:\n"
	".cfi_startproc\n"
	"	push %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	push %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	push %rdx\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call sp_dlopen_hook\n"
	"	pop %rdx\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	jmp *sp_real_dlmopen(%rip)\n"
	".cfi_endproc\n"
	".size dlmopen, .-dlmopen\n");

/* Samples taken in a library are converted to its ELF addresses while it
 * is still mapped: drain first, then unload under sp_drain_lock so that
 * the drain thread never reads an object being unmapped. */
SP_EXPORT int dlclose(void *h)
{
	int rc;

	RESOLVE(real_dlclose, "dlclose");
	if (!atomic_load(&sp_enabled) || sp_getpid() != sp.pid)
		return real_dlclose(h);
	sp_drain_request(SP_REQ_DRAIN, 1000);
	pthread_mutex_lock(&sp_drain_lock);
	rc = real_dlclose(h);
	atomic_fetch_add(&sp_maps_gen, 1);
	pthread_mutex_unlock(&sp_drain_lock);
	return rc;
}
