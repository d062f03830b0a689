/*
 * symprof.h - private declarations of libsymprof, the in-process sampler
 * loaded with LD_PRELOAD (docs/symprof.md).  Nothing here is installed:
 * the library's interface is its environment variables and the raw file
 * it writes (docs/raw-format.md).
 *
 * The pieces and who runs them:
 *
 *	symprof.c  configuration, start-up, the thread registry, timers and
 *	           every interposed libc function (pthread_create, sigaction,
 *	           fork, exec, _exit, dlopen, dlclose): program threads
 *	handler.c  the signal handler: copies the registers and the used
 *	           stack into the thread's ring; async-signal-safe, nothing
 *	           else is
 *	drain.c    the drain thread: empties the rings, aggregates stacks,
 *	           writes the file; also the requests other threads make of
 *	           it (a synchronous drain, the final write)
 *	maps.c     the mapping table (dl_iterate_phdr), build IDs from
 *	           PT_NOTE, where each object's .eh_frame lies: drain thread
 *	           only
 *	cfi.c      the CFI reader (.eh_frame_hdr, .eh_frame) and the unwind
 *	           step over a stack copy: drain thread only, in memory
 *	cficache.c the step cache: CFI rows compiled per pc (cfi.c's
 *	           sp_cfi_compile()), fixed size: drain only
 *	out.c      the writer of the raw stack format: drain thread only
 *	jit.c      JIT code: anonymous executable mappings as anon maps,
 *	           named from the program's perf map (libsym/perfmap.c,
 *	           compiled in): drain thread only
 *	alloc.c    alloc mode: the interposed malloc family, the per-thread
 *	           byte sampler (alloc_est.h) and the table of sampled live
 *	           pointers: program threads, lock-free
 *
 * The preload depends on libc alone (no libelf, no libsym): it is loaded
 * into arbitrary programs.  Names are sp_* and hidden (-fvisibility=hidden);
 * only the interposed libc functions are exported.
 *
 * Concurrency.  The handler is the only producer of its own thread's
 * ring and the drain thread the only consumer (struct sp_ring).  The
 * registry list is changed under sp_reg_lock, the aggregate and the
 * mapping table under sp_drain_lock, which the drain thread holds while
 * it works; nothing else the handler reads is ever freed while a
 * handler can run.  The drain thread allocates with mmap, never malloc,
 * so that the final write works when the program died inside malloc.
 */
#ifndef SYMPROF_H
#define SYMPROF_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define SP_HIDDEN __attribute__((visibility("hidden")))
#define SP_EXPORT __attribute__((visibility("default")))

/* Most frames of one stack, the leaf included; deeper stacks are cut and
 * flagged truncated. */
#define SP_MAX_DEPTH 256
/* Most bytes of stack the handler copies from the interrupted sp up (a
 * multiple of 8): the drain thread unwinds the copy with CFI.  Stacks
 * used deeper than this are cut there, and flagged truncated when the
 * unwind needs what was not copied.  Debian's python3.11 uses 5 to 15
 * KiB, xz 7 KiB (perf's dyn_size). */
#define SP_STACK_MAX (32u * 1024)
/* Words of one thread's ring (512 KiB); a power of two, at least 4
 * records of the largest size. */
#define SP_RING_WORDS (1u << 16)
#define SP_RING_MASK (SP_RING_WORDS - 1)
/* Fixed words of a record: header, weight, the 17 registers. */
#define SP_REC_FIXED (2 + SP_NREGS)
/* The largest record. */
#define SP_REC_MAX (SP_REC_FIXED + SP_STACK_MAX / 8)

/*
 * A record in the ring, in 64-bit words:
 *	[0] header: SP_HDR(len, kind, walk flags, nstack)
 *	[1] weight in ns
 *	[2 .. 19)	the interrupted registers in DWARF's order (struct
 *			sp_regs: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip)
 *	[19 .. 19+nstack) the stack words from sp up (the copy)
 * A pad record (kind SP_REC_PAD) fills the end of the ring when a record
 * would not fit there contiguously.
 */
#define SP_REC_PAD 0u
#define SP_REC_SAMPLE 1u
/* An allocation sample (alloc.c): [1] is the requested size in bytes,
 * and SP_ALLOC_EXTRA words follow the registers, before the stack: the
 * live-table slot (UINT64_MAX: none) and the sample's sequence number.
 * The registers are those alloc.c's capture() takes in itself: the
 * callee-saved ones, rsp and its pc (the others are 0 and unknown). */
#define SP_REC_ALLOC 2u
#define SP_ALLOC_EXTRA 2u
#define SP_HDR(len, kind, flags, nstack)                                   \
	((uint64_t)(len) | (uint64_t)(kind) << 20 | (uint64_t)(flags) << 24 | \
	 (uint64_t)(nstack) << 32)
#define SP_HDR_LEN(h) ((uint32_t)((h) & 0xfffff))
#define SP_HDR_KIND(h) ((uint32_t)(((h) >> 20) & 0xf))
#define SP_HDR_FLAGS(h) ((uint32_t)(((h) >> 24) & 0xff))
#define SP_HDR_NSTACK(h) ((uint32_t)(((h) >> 32) & 0xfffff))

/* Walk flags the handler records. */
enum sp_walk_flags {
	SP_WALK_NOSTACK = (1 << 0),	/* sp outside the thread's stack */
	SP_WALK_CUT = (1 << 1),		/* the copy stops SP_STACK_MAX above
					 * sp, short of the stack's top */
};

/*
 * One thread's ring: single producer (the thread's own signal handler;
 * the signal is blocked while the handler runs, so it never nests),
 * single consumer (the drain thread).  head and tail count words and
 * only grow; used = head - tail.  The producer publishes with a release
 * store of head, the consumer frees space with a release store of tail.
 */
struct sp_ring {
	_Atomic uint64_t head;
	char pad1[56];
	_Atomic uint64_t tail;
	char pad2[56];
	/* Samples the handler dropped because the ring was full. */
	_Atomic uint64_t dropped;
	/* The handler woke the drain thread (ring half full); cleared by
	 * the drain thread when it empties the ring. */
	_Atomic int kicked;
	uint64_t words[SP_RING_WORDS];
};

enum sp_thread_state {
	SP_THREAD_LIVE = 1,
	/* Exited: no handler touches it again; the drain thread empties
	 * its ring and recycles it. */
	SP_THREAD_DEAD = 2,
};

/* A registered (sampled) thread.  Allocated with mmap, recycled through
 * a free list, never unmapped while the process runs. */
struct sp_thread {
	struct sp_thread *next;		/* registry, under sp_reg_lock */
	pid_t tid;
	_Atomic int state;		/* enum sp_thread_state */
	/* Stack bounds [lo, hi) read by the handler: when the interrupted
	 * sp lies inside, it copies [sp, hi) (at most SP_STACK_MAX bytes),
	 * which is mapped for as long as the thread runs on it. */
	uintptr_t stack_lo, stack_hi;
	timer_t timer;
	bool has_timer;
	pthread_t pth;
	/* Name at exit (live threads are read from /proc at write time). */
	char comm[16];
	/* Drain-thread bookkeeping: the thread line was written. */
	bool seen;
	struct sp_ring ring;
};

/* How samples are triggered: the raw file's `mode`. */
enum sp_mode {
	SP_MODE_THREAD = 0,	/* per-thread CPU-time timers */
	SP_MODE_PROCESS,	/* setitimer(ITIMER_PROF), process-wide */
	SP_MODE_WALL,		/* per-thread CLOCK_MONOTONIC timers */
	SP_MODE_ALLOC,		/* allocations, sampled by bytes (alloc.c);
				 * no timer: sp.sig asks for a write */
};

/* Configuration and run state shared by the files. */
struct sp_state {
	int hz;
	uint64_t period_ns;
	int mode;			/* enum sp_mode; changed only by the
					 * switch to SP_MODE_PROCESS */
	bool wall;			/* SYMPROF_MODE=wall */
	int sig;			/* the sampling signal (changes
					 * under sp_reg_lock) */
	int sig_first;			/* the one we started with */
	/* SYMPROF_OUT as given; %p expanded at write time. */
	char out_pattern[4096];
	bool out_has_pid;
	int interval_s;			/* periodic write; 0: at exit */
	pid_t pid;			/* the process the state belongs to */
	/* Wall-clock start (RFC 3339) and monotonic start. */
	char start_str[40];
	uint64_t start_mono_ns;
	/* Set when a per-thread timer failed and sampling went process-wide;
	 * the reason, for a comment in the file. */
	char mode_note[128];
	/* Set when sampling moved to another signal. */
	char sig_note[128];
	uint64_t threads_unarmed;	/* threads that got no timer */
	/* Alloc mode: another malloc was found (for a comment). */
	char alloc_note[256];
	/* SYMPROF_CFI_CACHE, a test knob: 1 (default) the drain unwinds
	 * through the step cache (cficache.c), 0 without it, 2 both ways,
	 * comparing every stack (drain.c). */
	int cfi_cache;
	/* SYMPROF_UNWIND_MEMO: 1 (default) unwinds a record whose inputs
	 * an earlier one had through the memo (unwmemo.c), 0 never. */
	int unwind_memo;
};

SP_HIDDEN extern struct sp_state sp;
/* The library is recording a profile in this process. */
SP_HIDDEN extern _Atomic int sp_enabled;
/* The handler records samples only while this is set. */
SP_HIDDEN extern _Atomic int sp_active;
/* The address passed as sigev_value: marks our own timers' signals. */
SP_HIDDEN extern char sp_cookie;
/* The program took ITIMER_PROF back (process mode): SIGPROF is its. */
SP_HIDDEN extern _Atomic int sp_itimer_handed_over;
SP_HIDDEN extern __thread struct sp_thread *sp_self
	__attribute__((tls_model("initial-exec")));

/* Is this signal one of our samples?  Per-thread timers mark theirs with
 * sp_cookie in si_value; ITIMER_PROF's SIGPROF comes with SI_KERNEL.
 * Async-signal-safe. */
static inline bool sp_is_ours(int sig, const siginfo_t *si)
{
	/* Alloc mode: a write request sent by kill(1) or sigqueue, or our
	 * --interval timer when there is no drain thread (drain.c). */
	if (__atomic_load_n(&sp.mode, __ATOMIC_RELAXED) == SP_MODE_ALLOC)
		return sig == __atomic_load_n(&sp.sig, __ATOMIC_RELAXED) &&
		       (si->si_code == SI_TIMER ?
			si->si_value.sival_ptr == (void *)&sp_cookie :
			si->si_code <= 0);
	if (si->si_code == SI_TIMER)
		return si->si_value.sival_ptr == (void *)&sp_cookie;
	if (sig == SIGPROF && si->si_code == SI_KERNEL &&
	    __atomic_load_n(&sp.mode, __ATOMIC_RELAXED) == SP_MODE_PROCESS)
		return !atomic_load_explicit(&sp_itimer_handed_over,
					     memory_order_relaxed);
	return false;
}

/* Registry (symprof.c). */
SP_HIDDEN extern pthread_mutex_t sp_reg_lock;
SP_HIDDEN extern struct sp_thread *sp_threads;

/* handler.c */
SP_HIDDEN void sp_handler(int sig, siginfo_t *si, void *uc);
/* Forward a signal that is not ours to the program's own disposition
 * (symprof.c keeps it; see sp_prog_action()). */
SP_HIDDEN void sp_chain(int sig, siginfo_t *si, void *uc);
/* Copy the program's disposition of @sig, one our handler is installed
 * on (AS-safe). */
SP_HIDDEN void sp_prog_action(int sig, struct sigaction *out);
/* The program's handler was SA_RESETHAND: it is SIG_DFL from now on. */
SP_HIDDEN void sp_prog_action_reset(int sig);
/* A signal whose disposition is "terminate" arrived and is not caught by
 * the program: final write, then die of it (symprof.c). */
SP_HIDDEN void sp_die_of(int sig);

/* drain.c */
enum sp_req {
	SP_REQ_DRAIN = (1 << 0),	/* empty the rings now */
	SP_REQ_WRITE = (1 << 1),	/* and write the file */
	SP_REQ_FINAL = (1 << 2),	/* the last write: stop afterwards */
};
SP_HIDDEN int sp_drain_start(void);
/* Start draining: the drain thread now, or (@lazy, alloc mode) only
 * before the program's first pthread_create(), the sampling thread
 * draining in the meantime (drain.c says why).  0 or -errno. */
SP_HIDDEN int sp_drain_begin(bool lazy);
/* From pthread_create(): start the drain thread if it waited. */
SP_HIDDEN int sp_drain_need_thread(void);
/* No drain thread yet: drain here (and write when a request or the
 * interval says so); true when done, false when the thread does it. */
SP_HIDDEN bool sp_drain_inline(void);
/* A request for @what from our signal handler: posted to the drain
 * thread, or without one done there when the interrupted code is not
 * ours (drain.c). */
SP_HIDDEN void sp_drain_signal(unsigned what);
/* Ask the drain thread for @what and wait for it.  The wait ends early
 * (-ETIMEDOUT) only when the drain thread has made no progress for
 * @timeout_ms: its CPU time did not move and it was neither runnable nor
 * in a disk wait, so blocked (on a lock the waiter's thread may hold);
 * a thread starved of CPU on a loaded machine is waited for, up to 60 s
 * in all.  Async-signal-safe (atomics, futex, clock_gettime and a read of
 * /proc/self/task/TID/stat).  Returns 0 when done, -ETIMEDOUT, or -ESRCH
 * when there is no drain thread.  In alloc mode before the drain thread
 * starts (sp_drain_begin()), the caller does the work (not from a
 * signal handler but for the final write, which allocates nothing). */
SP_HIDDEN int sp_drain_request(unsigned what, int timeout_ms);
/* Ask for @what without waiting (async-signal-safe). */
SP_HIDDEN void sp_drain_post(unsigned what);
SP_HIDDEN bool sp_on_drain_thread(void);
/* Wake the drain thread (async-signal-safe: one futex syscall). */
SP_HIDDEN void sp_drain_kick(void);
/* After fork, in the child: forget the parent's aggregate. */
SP_HIDDEN void sp_drain_reset_child(void);
/* Write/serialize guard held by the drain thread while it works. */
SP_HIDDEN extern pthread_mutex_t sp_drain_lock;
/* The mapping table changed (dlopen, dlclose). */
SP_HIDDEN extern _Atomic unsigned sp_maps_gen;

/* Where one object's CFI lies in memory: .eh_frame_hdr at [hdr,
 * hdr_end) (PT_GNU_EH_FRAME), and the loaded segment [seg_lo, seg_hi)
 * that holds .eh_frame, which bounds every read of it.  All 0: none. */
struct sp_eh {
	uintptr_t hdr, hdr_end;
	uintptr_t seg_lo, seg_hi;
};

/* maps.c: the mapping table, drain thread only (under sp_drain_lock). */
struct sp_map {
	uint32_t id;
	int kind;			/* 0 file, 1 vdso */
	bool live;			/* still loaded */
	bool readable;			/* PF_R: its code may be read */
	uint64_t start, end, pgoff, vaddr;
	uint64_t bias;			/* vaddr(pc) = pc - bias */
	char build_id[2 * 64 + 1];	/* lowercase hex, "" when unknown */
	const char *path;		/* in the arena */
	struct sp_eh eh;		/* its CFI, zeros when none */
	/* The object's entry point at runtime (ELF e_entry), 0 when its
	 * ELF header is not mapped: code without CFI there (ld.so's) is an
	 * outermost frame. */
	uint64_t entry;
};
SP_HIDDEN int sp_maps_refresh(void);
SP_HIDDEN const struct sp_map *sp_maps_find(uint64_t pc);
SP_HIDDEN size_t sp_maps_count(void);
SP_HIDDEN const struct sp_map *sp_maps_get(size_t i);
SP_HIDDEN void sp_maps_reset(void);
/* Does a call instruction end right before return address @ra? */
SP_HIDDEN bool sp_call_precedes(const struct sp_map *m, uint64_t ra);

/*
 * cfi.c: call frame information, in memory (the drain thread; fuzzed by
 * tests/fuzz/fuzz-symprof-cfi.c).  Registers are DWARF's for x86-64: 0
 * rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, and
 * 16 the return address (rip).  A rule says how the caller's value of a
 * register (or the CFA) is found; expressions are copied into the row's
 * pool (a rule whose expression does not fit is SP_RULE_UNKNOWN).
 */
#define SP_NREGS 17
#define SP_REG_RBP 6
#define SP_REG_RSP 7
#define SP_REG_RIP 16
#define SP_CFI_POOL 96
enum sp_rule_kind {
	SP_RULE_UNKNOWN = 0,	/* one we cannot follow, or a register the
				 * call clobbered */
	SP_RULE_SAME,		/* unchanged */
	SP_RULE_UNDEF,		/* undefined (the return address: the
				 * outermost frame, _start or clone3) */
	SP_RULE_OFFSET,		/* saved at CFA + off */
	SP_RULE_VAL_OFFSET,	/* the value is CFA + off */
	SP_RULE_REG,		/* in register reg (the CFA: reg + off) */
	SP_RULE_EXPR,		/* saved at the expression's value; the CFA:
				 * the expression's value */
	SP_RULE_VAL_EXPR,	/* the value is the expression's */
};
struct sp_rule {
	int32_t off;
	uint8_t kind;			/* enum sp_rule_kind */
	uint8_t reg;
	uint8_t at, len;		/* expression: pool[at .. at + len) */
};
/* The rules at one pc. */
struct sp_cfi {
	struct sp_rule cfa;
	/* The caller's value of each register; reg[SP_REG_RSP] is the CFA
	 * unless a rule says otherwise, reg[SP_REG_RIP] the return
	 * address. */
	struct sp_rule reg[SP_NREGS];
	uint8_t pool[SP_CFI_POOL];
	uint8_t npool;
	/* CIE augmentation 'S': a signal trampoline's frame, whose caller's
	 * pc is exact (the interrupted instruction), not a return address. */
	bool signal;
};
/* The rules at @pc, from the FDE that .eh_frame_hdr's table gives for
 * it.  Returns 0, or -1 when there is no usable CFI (none, corrupt, an
 * instruction we do not know, a return address not in register 16). */
SP_HIDDEN int sp_cfi_find(const struct sp_eh *eh, uint64_t pc,
			  struct sp_cfi *out);
/* The .eh_frame address .eh_frame_hdr at [hdr, hdr_end) names; -1 when
 * it cannot be read. */
SP_HIDDEN int sp_eh_frame_ptr(uintptr_t hdr, uintptr_t hdr_end,
			      uintptr_t *out);

/* One frame's registers: all of them at the leaf (the ucontext), then
 * those the CFI recovers (the callee-saved ones, all after a signal
 * frame). */
struct sp_regs {
	uint64_t r[SP_NREGS];		/* r[SP_REG_RIP] is the pc */
	uint32_t known;			/* bit i: r[i] holds register i */
};
/* The stack memory an unwind may read: @n words from address @base. */
struct sp_stack_copy {
	uint64_t base;
	const uint64_t *words;
	size_t n;
};
enum sp_step {
	SP_STEP_OK = 0,
	SP_STEP_OUTERMOST,	/* the return address is undefined: the end */
	SP_STEP_NOMEM,		/* needed memory outside the copy (*need) */
	SP_STEP_BAD,		/* a rule we cannot follow (a register not
				 * known, an expression) */
};
/* Step @r from a frame to its caller with rules @c, reading memory from
 * @m only.  Returns an enum sp_step; @r changes only on SP_STEP_OK (the
 * caller's pc, the CFA as its sp unless a rule says otherwise, the
 * registers whose rules could be followed). */
SP_HIDDEN int sp_cfi_step(const struct sp_cfi *c,
			  const struct sp_stack_copy *m, struct sp_regs *r,
			  uint64_t *need);

/*
 * A row compiled for the step that nearly every frame takes
 * (sp_cfi_compile()): the CFA as a register plus an offset, and only the
 * registers whose rule gives a value, as plain loads and copies.  The
 * drain caches these per pc (drain.c, "the step cache"), so a pc seen
 * before costs a probe and a few loads instead of sp_cfi_step()'s walk
 * of all 17 rules.  sp_cfi_step_fast() gives exactly what sp_cfi_step()
 * gives on the row it was compiled from: the result, *need, and every
 * word of the registers (tests/unit/t-cfi-cache.c checks it on every row
 * of Debian's libc and python3.11, the fuzz target on corrupt ones).
 */
enum sp_fast_kind {
	SP_FAST_FULL = 0,	/* an expression, or more rules than fit:
				 * step with the row (sp_cfi_step()) */
	SP_FAST_STEP,		/* step with the compiled rules */
	SP_FAST_OUTERMOST,	/* the return address is undefined */
	SP_FAST_BAD,		/* a CFA or return address rule we cannot
				 * follow */
};
/* Most rules other than "same value" a compiled row holds. */
#define SP_FAST_MAX 8
struct sp_fast_rule {
	int32_t off;
	uint8_t reg;			/* the register it sets */
	uint8_t kind;			/* SP_RULE_REG, _OFFSET, _VAL_OFFSET */
	uint8_t src;			/* SP_RULE_REG: the register read */
	uint8_t pad;
};
struct sp_cfi_fast {
	uint8_t kind;			/* enum sp_fast_kind */
	uint8_t cfa_reg;		/* the CFA is cfa_reg + cfa_off */
	uint8_t n;			/* rules in rule[] */
	uint8_t noff;			/* the first noff are SP_RULE_OFFSET */
	int32_t cfa_off;
	uint32_t same;			/* registers that keep their value */
	bool signal;			/* the row's sp_cfi.signal */
	struct sp_fast_rule ra;		/* the return address's rule */
	struct sp_fast_rule rule[SP_FAST_MAX];
};
/* Compile row @c into @f (every row compiles: those the fast step cannot
 * take become SP_FAST_FULL). */
SP_HIDDEN void sp_cfi_compile(const struct sp_cfi *c, struct sp_cfi_fast *f);
/* sp_cfi_step() with a compiled row of kind SP_FAST_STEP, _OUTERMOST or
 * _BAD (SP_FAST_FULL: SP_STEP_BAD; step with the row instead). */
SP_HIDDEN int sp_cfi_step_fast(const struct sp_cfi_fast *f,
			       const struct sp_stack_copy *m,
			       struct sp_regs *r, uint64_t *need);

/*
 * The inputs an unwind used (unwmemo.c, the unwind memo): which leaf
 * registers it read, which words of the copy, and how long the copy had
 * to be (or not be) for each read to land as it did.  The result of an
 * unwind through compiled rows is a function of those, the leaf's pc,
 * sp and known mask, and the mapping table: a later record that agrees
 * on all of them unwinds to the same frames and flags, to the byte.
 *
 * Reads are recorded lazily: a register loaded from the copy (a saved
 * callee-saved register, which may hold any of the program's data) is
 * only remembered as "the word at offset AT", and the word joins the
 * inputs when a later step reads the register (a CFA or a copy rule),
 * or never.  prov[] holds, per register, where its value (and whether it
 * is known) came from: 0 from inputs already recorded, SP_PROV_LEAF | i
 * the leaf's register i, SP_PROV_MEM | AT the copy's bytes at AT.
 * over: the unwind cannot be memoized (more reads than fit, a step
 * through a whole row, a pc in no known mapping).
 */
#define SP_MEMO_READS 64
#define SP_PROV_LEAF (1u << 30)
#define SP_PROV_MEM (1u << 31)
struct sp_trace {
	uint32_t prov[SP_NREGS];
	uint32_t used;			/* leaf registers read */
	uint32_t lo, hi;		/* the copy's bytes B: lo <= B < hi */
	uint32_t nread;
	bool over;
	uint16_t at[SP_MEMO_READS];	/* byte offsets in the copy */
	uint64_t val[SP_MEMO_READS];	/* the 8 bytes read there */
};
/* Start tracing an unwind from leaf registers @r. */
SP_HIDDEN void sp_trace_begin(struct sp_trace *t, const struct sp_regs *r);
/* The unwind reads register @reg's value or known bit: its origin joins
 * the inputs. */
SP_HIDDEN void sp_trace_use(struct sp_trace *t, const struct sp_stack_copy *m,
			    unsigned reg);
/* The unwind reads the 8 bytes at address @addr of copy @m (in it or
 * not): an input. */
SP_HIDDEN void sp_trace_read(struct sp_trace *t, const struct sp_stack_copy *m,
			     uint64_t addr);
/* sp_cfi_step_fast(), recording its inputs in @t (not NULL); @t->prov
 * follows the registers to the caller's frame. */
SP_HIDDEN int sp_cfi_step_fast_traced(const struct sp_cfi_fast *f,
				      const struct sp_stack_copy *m,
				      struct sp_regs *r, uint64_t *need,
				      struct sp_trace *t);

/*
 * unwmemo.c: the unwind memo.  Per (tid, pc, sp, known mask, cut), up to
 * SP_MEMO_WAYS traces of earlier unwinds with their result (an opaque
 * pointer, the drain's aggregated stack, its flags and steps).  A lookup
 * returns an entry only if the new record agrees with every input the
 * trace recorded; the caller then uses the stored result instead of
 * unwinding.  Fixed memory (SP_MEMO_SETS x SP_MEMO_WAYS entries, from
 * the drain's arena at the first put), drain only, under sp_drain_lock.
 * A change of the mapping table (sp_maps_epoch(): a refresh) or
 * sp_unwind_memo_invalidate() forgets every entry.
 */
#define SP_MEMO_SETS 32
#define SP_MEMO_WAYS 8
struct sp_memo_key {
	uint64_t pc, sp;
	int32_t tid;
	uint32_t known;
	bool cut;
};
struct sp_memo_result {
	void *stack;			/* the caller's; borrowed */
	uint32_t flags, steps;
};
/* The stored result for a record with key @k, leaf registers @regs
 * (SP_NREGS words, the unknown ones any value) and copy @m, or NULL:
 * unwind it.  Valid until the next put or invalidation. */
SP_HIDDEN const struct sp_memo_result *
sp_unwind_memo_find(const struct sp_memo_key *k, const uint64_t *regs,
		    const struct sp_stack_copy *m);
/* Remember result @res of the unwind of the record (@k, @regs) traced in
 * @t (nothing when t->over, or without memory). */
SP_HIDDEN void sp_unwind_memo_put(const struct sp_memo_key *k,
				  const uint64_t *regs,
				  const struct sp_trace *t,
				  const struct sp_memo_result *res);
/* Forget every entry (the aggregate the results point into is gone). */
SP_HIDDEN void sp_unwind_memo_invalidate(void);
struct sp_memo_stats {
	uint64_t hits, misses, puts, unmemoizable, invalidations;
};
SP_HIDDEN void sp_unwind_memo_stats(struct sp_memo_stats *out);
SP_HIDDEN void sp_unwind_memo_reset_stats(void);
SP_HIDDEN size_t sp_unwind_memo_bytes(void);
/* Bumped by every sp_maps_refresh() and sp_maps_reset(). */
SP_HIDDEN unsigned sp_maps_epoch(void);

/*
 * cficache.c: the step cache, per (map, pc): compiled rows, and the
 * whole rows of those that do not compile.  Fixed size, allocated once;
 * drain only, under sp_drain_lock.
 */
#define SP_STEP_CACHE 4096		/* entries, a power of two */
#define SP_ROW_CACHE 256		/* entries, a power of two */
/* The rules at @pc of map @m: 0 and *f (and, for a row of kind
 * SP_FAST_FULL, *row, to step with sp_cfi_step()), or -1 when there is
 * no usable CFI there (sp_cfi_find()).  The pointers are valid until the
 * next call. */
SP_HIDDEN int sp_cfi_cache_get(const struct sp_map *m, uint64_t pc,
			       const struct sp_cfi_fast **f,
			       const struct sp_cfi **row);
/* Forget every entry (the mapping table changed). */
SP_HIDDEN void sp_cfi_cache_invalidate(void);
struct sp_cfi_cache_stats {
	uint64_t hits, misses;		/* lookups of the step table */
	uint64_t row_misses;		/* a hit whose whole row was evicted */
	uint64_t invalidations;
};
SP_HIDDEN void sp_cfi_cache_stats(struct sp_cfi_cache_stats *out);
/* After fork, in the child: its file counts its own lookups (the
 * entries stay: the child's memory is the parent's). */
SP_HIDDEN void sp_cfi_cache_reset_stats(void);
/* The memory the cache takes once allocated. */
SP_HIDDEN size_t sp_cfi_cache_bytes(void);

/* Memory for the drain thread: mmap-backed bump allocation. */
SP_HIDDEN void *sp_arena_alloc(size_t n);
SP_HIDDEN char *sp_arena_strdup(const char *s);
SP_HIDDEN void sp_arena_reset(void);
SP_HIDDEN void *sp_mmap(size_t n);
SP_HIDDEN void sp_munmap(void *p, size_t n);

/* out.c: the raw-format writer.  Buffered into a file descriptor. */
struct sp_out {
	int fd;
	int err;			/* first write error, -errno */
	size_t len;
	char buf[1 << 16];
};
SP_HIDDEN void sp_out_str(struct sp_out *o, const char *s);
SP_HIDDEN void sp_out_enc(struct sp_out *o, const char *s);
SP_HIDDEN void sp_out_u64(struct sp_out *o, uint64_t v);
SP_HIDDEN void sp_out_i64(struct sp_out *o, int64_t v);
SP_HIDDEN void sp_out_hex(struct sp_out *o, uint64_t v);
SP_HIDDEN void sp_out_ch(struct sp_out *o, char c);
SP_HIDDEN int sp_out_flush(struct sp_out *o);

/* jit.c: anonymous executable mappings as `anon` maps, named from the
 * program's perf map (/tmp/perf-PID.map); drain thread only, around one
 * write of the file: sp_jit_begin() (maps after @first_id; @max_frames
 * bounds the frames sp_jit_write_loc() is given), then the other calls,
 * then sp_jit_end(). */
SP_HIDDEN void sp_jit_begin(uint32_t first_id, size_t max_frames);
/* A pc outside every object, met while draining: look for new
 * anonymous executable mappings when no known one holds it. */
SP_HIDDEN void sp_jit_note(uint64_t pc);
/* A frame outside every object at @pc: the anon map holding it. */
SP_HIDDEN bool sp_jit_frame(uint64_t pc, uint32_t *map);
SP_HIDDEN void sp_jit_write_maps(struct sp_out *o, int32_t pid);
/* `symbolized 1`, `fn` and `loc` lines for the frame, once each. */
SP_HIDDEN void sp_jit_write_loc(struct sp_out *o, uint64_t pc, bool ret);
SP_HIDDEN void sp_jit_end(void);


/* alloc.c: alloc mode. */
/* 0: off; 1: sampling; 2: sampling, and a posted request waits to be
 * served in an allocation's slow path (sp_alloc_poke()).  The fast path
 * never reads it: slow() does, when a thread's byte counter borrows. */
SP_HIDDEN extern _Atomic int sp_alloc_on;
/* SYMPROF_RATE: the mean bytes between samples. */
SP_HIDDEN extern uint64_t sp_alloc_rate;
/* Samples left out of the live table (its window was full), and taken
 * on threads we do not know (no ring). */
SP_HIDDEN extern _Atomic uint64_t sp_alloc_untracked, sp_alloc_unregistered;
/* The drain thread: sample @slot's record is stack @stack. */
SP_HIDDEN void sp_alloc_bind(uint64_t slot, uint64_t seq, uint32_t stack);
/* Iterate the live sampled objects from *pos (start at 0): the stack and
 * size of the next one whose record was bound; false at the end. */
SP_HIDDEN bool sp_alloc_live_next(size_t *pos, uint32_t *stack,
				  uint64_t *size);
SP_HIDDEN size_t sp_alloc_live_count(void);
SP_HIDDEN void sp_alloc_reset_child(void);
/* The calling thread's allocations are never sampled (the drain). */
SP_HIDDEN void sp_alloc_thread_off(void);
/* Set the calling thread's pass-through flag to @on; returns the old. */
SP_HIDDEN int sp_alloc_hold(int on);
/* The calling thread is in alloc mode's slow path (or passes through). */
SP_HIDDEN bool sp_alloc_busy(void);
/* Send the calling thread's next allocation to the slow path, where
 * sp_drain_inline() serves a posted request (async-signal-safe: a
 * compare-and-swap, and the thread's counter moved aside, unchanged for
 * the sampler).  With no drain thread the program has one thread. */
SP_HIDDEN void sp_alloc_poke(void);
/* Sampling has just been turned on: the calling thread's next allocation
 * draws its first distance (other threads' counters look at
 * sp_alloc_on within OFF_GRAIN bytes). */
SP_HIDDEN void sp_alloc_arm(void);
/* Who else defines malloc (a path), or NULL when it is glibc's. */
SP_HIDDEN const char *sp_alloc_replaced(void);

/* Misc (symprof.c). */
SP_HIDDEN uint64_t sp_now_ns(clockid_t clk);
SP_HIDDEN pid_t sp_gettid(void);
/* "libsymprof: <msg>\n" on stderr, with write(2) only. */
SP_HIDDEN void sp_log(const char *a, const char *b, const char *c);
/* The output path for the current process (%p expanded). */
SP_HIDDEN int sp_out_path(char *buf, size_t len);
/* Read a small /proc file into buf (NUL-terminated, newline cut). */
SP_HIDDEN int sp_read_small(const char *path, char *buf, size_t len);
SP_HIDDEN void sp_fmt_u64(char *buf, size_t len, uint64_t v);

#endif /* SYMPROF_H */
