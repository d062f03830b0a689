/*
 * alloc.c - libsymprof's allocation profiler (SYMPROF_MODE=alloc,
 * docs/symprof.md, "Allocation profiles"): the malloc family, interposed;
 * the per-thread byte sampler; the table of sampled live pointers.
 *
 * Every entry point calls glibc's allocator directly, through its
 * __libc_* names (__libc_malloc, __libc_free, __libc_calloc,
 * __libc_realloc, __libc_memalign, __libc_valloc, __libc_pvalloc), never
 * through dlsym: nothing here can recurse into itself, whatever dlsym,
 * the unwinder or the drain thread allocate, and a malloc that runs
 * before our constructor (ld.so's, another library's) needs no set-up.
 * aligned_alloc is __libc_memalign in glibc 2.36 (one function, two
 * names); posix_memalign and reallocarray are built on them with glibc's
 * checks; malloc_usable_size, which has no __libc_ name, is looked up
 * once with dlsym (whose own calloc comes back here and goes straight
 * to __libc_calloc).
 *
 * The fast path of an allocation of n bytes is `left -= n` on a
 * thread-local counter: no lock, no system call, no allocation, no other
 * load.  When the counter goes below 0 the slow path decides: whether
 * sampling is on at all (sp_alloc_on; when it is off the counter is set
 * to come back every OFF_GRAIN bytes), whether a request waits, and
 * (alloc_est.h) whether to sample; a sampled allocation takes the stack
 * as the signal handler does (registers and a copy of the used stack,
 * into the thread's own ring; the drain thread unwinds it with CFI) and
 * goes into the live table.
 *
 * The live table: 2^16 slots, a sampled pointer in one of the 32 slots
 * after its hash (lock-free: slots are claimed with a compare-and-swap,
 * BUSY while their fields change).  A full window leaves the sample out
 * of the in-use figures (counted, written as dropped).  free() looks at
 * a filter of 2^12 byte counters (4 KiB) first, so a pointer that was
 * never sampled costs one load, mostly from the L1 cache; where that
 * counter is not 0, a second filter of 2^16 comes before the table.  A
 * slot's tag is the sample's sequence number and, once the
 * drain thread has unwound its record, the index of its stack in the
 * aggregate (sp_alloc_bind()); the writer adds up the live slots per
 * stack (sp_alloc_live_next()).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symprof.h"
#include "alloc_est.h"

/* glibc's allocator under its own names (exported by libc.so.6), called
 * through the GOT without a PLT stub: the fast paths end in one jump. */
#if defined(__clang__)
#define NOPLT		/* clang has no noplt: -fno-plt does it there */
#define COPY_ATTRS
#else
#define NOPLT __attribute__((noplt))
#define COPY_ATTRS __attribute__((copy(malloc)))
#endif
extern void *__libc_malloc(size_t n) NOPLT;
extern void __libc_free(void *p) NOPLT;
extern void *__libc_calloc(size_t n, size_t sz) NOPLT;
extern void *__libc_realloc(void *p, size_t n) NOPLT;
extern void *__libc_memalign(size_t align, size_t n) NOPLT;
extern void *__libc_valloc(size_t n) NOPLT;
extern void *__libc_pvalloc(size_t n) NOPLT;

_Atomic int sp_alloc_on;
uint64_t sp_alloc_rate = 512 * 1024;
_Atomic uint64_t sp_alloc_untracked, sp_alloc_unregistered;

static __thread struct sp_sampler smp __attribute__((tls_model("initial-exec")));
/* In our slow path, or the drain thread: allocations pass through. */
static __thread int busy __attribute__((tls_model("initial-exec")));
/* Bytes sp_alloc_poke() took out of smp.left, so that the thread's next
 * allocation borrows and goes to slow(), which puts them back: the
 * sampling process is unchanged.  in_slow: slow() is changing smp.left,
 * and a poke leaves it alone (slow() looks for the request on its way
 * out).  Both are changed by our signal handler over this thread. */
static __thread uint64_t bank __attribute__((tls_model("initial-exec")));
static __thread volatile int in_slow __attribute__((tls_model("initial-exec")));

/* While sampling is off, a thread's counter runs this many bytes between
 * two looks at sp_alloc_on (the fast path does not read it). */
#define OFF_GRAIN ((int64_t)1 << 20)

/* Sizes above this are counted as this (2^62 bytes: never allocated). */
#define BIG ((uint64_t)1 << 62)

/* ---- the live table --------------------------------------------------- */

#define LIVE_BITS 16
#define LIVE_SLOTS (1u << LIVE_BITS)
#define LIVE_WINDOW 32
/* The filters free() reads before the table: byte counters of sampled
 * live pointers by the top bits of their hash, in two levels.  The first
 * (2^12, 4 KiB) is the one load of a free(): small enough to stay in the
 * L1 cache beside the program's data (the single 2^16 16-bit filter of
 * 128 KiB cost about one L1 miss a free: docs/symprof.md, "Cost of alloc
 * mode").  Only where it is not 0 is the second (2^16, 64 KiB), with 16
 * times fewer false hits, read before the table.  A counter that
 * reaches FILTER_STUCK stays there: the filters only err towards a look
 * in the table. */
#define FILTER1_BITS 12
#define FILTER_BITS 16
#define FILTER_STUCK 255
#define K_EMPTY ((uintptr_t)0)
#define K_TOMB ((uintptr_t)1)
#define K_BUSY ((uintptr_t)2)

struct live {
	_Atomic uintptr_t key;		/* K_* or the pointer */
	_Atomic uint64_t tag;		/* seq << 24 | (stack index + 1) */
	_Atomic uint64_t size;		/* requested bytes */
};

static struct live live[LIVE_SLOTS];
static _Atomic uint8_t filter1[1u << FILTER1_BITS];
static _Atomic uint8_t filter[1u << FILTER_BITS];
static _Atomic uint64_t seq_next = 1;

/* Fibonacci hashing: the top bits of the product depend on all of @p's. */
static uint64_t ptr_mix(const void *p)
{
	return (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
}

static size_t slot_of(const void *p)
{
	return (size_t)(ptr_mix(p) >> (64 - LIVE_BITS));
}

static _Atomic uint8_t *filter_of(const void *p)
{
	return &filter[ptr_mix(p) >> (64 - FILTER_BITS)];
}

static _Atomic uint8_t *filter1_of(const void *p)
{
	return &filter1[ptr_mix(p) >> (64 - FILTER1_BITS)];
}

/* Add @d (1 or -1) to counter @f, unless it is stuck at FILTER_STUCK. */
static void counter_add(_Atomic uint8_t *f, int d)
{
	uint8_t c = atomic_load_explicit(f, memory_order_relaxed);

	while (c != FILTER_STUCK &&
	       !atomic_compare_exchange_weak_explicit(f, &c,
						      (uint8_t)(c + d),
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

/* Add @d to @p's counters in both filters: the first level is raised
 * before and lowered after the second, so that it is never 0 where the
 * second is not. */
static void filter_add(const void *p, int d)
{
	if (d > 0) {
		counter_add(filter1_of(p), d);
		counter_add(filter_of(p), d);
	} else {
		counter_add(filter_of(p), d);
		counter_add(filter1_of(p), d);
	}
}

/* Put sampled @p in the table; its slot, or -1 when its window is full. */
static long live_put(const void *p, uint64_t size, uint64_t seq)
{
	size_t h = slot_of(p);

	for (size_t i = 0; i < LIVE_WINDOW; i++) {
		struct live *e = &live[(h + i) & (LIVE_SLOTS - 1)];
		uintptr_t k = atomic_load_explicit(&e->key,
						   memory_order_relaxed);

		if (k != K_EMPTY && k != K_TOMB)
			continue;
		if (!atomic_compare_exchange_strong(&e->key, &k, K_BUSY))
			continue;
		atomic_store_explicit(&e->size, size, memory_order_relaxed);
		atomic_store_explicit(&e->tag, seq << 24,
				      memory_order_relaxed);
		filter_add(p, 1);
		atomic_store_explicit(&e->key, (uintptr_t)p,
				      memory_order_release);
		return (long)((h + i) & (LIVE_SLOTS - 1));
	}
	return -1;
}

/* Take @p out of the table; true when it was there (*size, *tag set). */
static bool live_take(const void *p, uint64_t *size, uint64_t *tag)
{
	size_t h = slot_of(p);

	if (!atomic_load_explicit(filter_of(p), memory_order_relaxed))
		return false;
	for (size_t i = 0; i < LIVE_WINDOW; i++) {
		struct live *e = &live[(h + i) & (LIVE_SLOTS - 1)];
		uintptr_t k = (uintptr_t)p,
			  at = atomic_load_explicit(&e->key,
						    memory_order_acquire);

		/* live_put() takes the first free slot of the window, and a
		 * slot never becomes EMPTY again: @p is not past one. */
		if (at == K_EMPTY)
			break;
		if (at != k ||
		    !atomic_compare_exchange_strong(&e->key, &k, K_BUSY))
			continue;
		*size = atomic_load_explicit(&e->size, memory_order_relaxed);
		*tag = atomic_load_explicit(&e->tag, memory_order_relaxed);
		filter_add(p, -1);
		atomic_store_explicit(&e->key, K_TOMB, memory_order_release);
		return true;
	}
	return false;
}

/* Put back what live_take() took (a realloc that failed). */
static void live_restore(const void *p, uint64_t size, uint64_t tag)
{
	long i = live_put(p, size, tag >> 24);

	if (i >= 0)
		atomic_store_explicit(&live[i].tag, tag, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&sp_alloc_untracked, 1,
					  memory_order_relaxed);
}

void sp_alloc_bind(uint64_t slot, uint64_t seq, uint32_t stack)
{
	uint64_t want = seq << 24;

	if (slot >= LIVE_SLOTS)
		return;
	/* Only if the slot still holds that sample (not freed and reused). */
	atomic_compare_exchange_strong(&live[slot].tag, &want,
				       seq << 24 | ((uint64_t)stack + 1));
}

bool sp_alloc_live_next(size_t *pos, uint32_t *stack, uint64_t *size)
{
	for (; *pos < LIVE_SLOTS; (*pos)++) {
		struct live *e = &live[*pos];
		uintptr_t k = atomic_load_explicit(&e->key,
						   memory_order_acquire);
		uint64_t tag, sz;

		if (k == K_EMPTY || k == K_TOMB || k == K_BUSY)
			continue;
		tag = atomic_load_explicit(&e->tag, memory_order_relaxed);
		sz = atomic_load_explicit(&e->size, memory_order_relaxed);
		if (atomic_load_explicit(&e->key, memory_order_acquire) != k ||
		    !(tag & 0xffffff))
			continue;
		*stack = (uint32_t)(tag & 0xffffff) - 1;
		*size = sz;
		(*pos)++;
		return true;
	}
	return false;
}

size_t sp_alloc_live_count(void)
{
	size_t n = 0;

	for (size_t i = 0; i < LIVE_SLOTS; i++) {
		uintptr_t k = atomic_load_explicit(&live[i].key,
						   memory_order_relaxed);

		n += k != K_EMPTY && k != K_TOMB && k != K_BUSY;
	}
	return n;
}

void sp_alloc_reset_child(void)
{
	/* The parent's samples name the parent's stacks: start empty. */
	memset(live, 0, sizeof(live));
	memset(filter1, 0, sizeof(filter1));
	memset(filter, 0, sizeof(filter));
	atomic_store(&sp_alloc_untracked, 0);
	atomic_store(&sp_alloc_unregistered, 0);
}

void sp_alloc_thread_off(void)
{
	busy = 1;
}

int sp_alloc_hold(int on)
{
	int was = busy;

	busy = on;
	return was;
}

bool sp_alloc_busy(void)
{
	return busy;
}

/* Move the thread's counter into its bank: its next allocation borrows
 * and goes to slow(), which adds the bank back.  The fast path's `sub`
 * is one instruction (a signal comes before or after it), and the sums
 * are modulo 2^64 like it. */
static void counter_bank(void)
{
	bank += (uint64_t)smp.left;
	smp.left = 0;
}

/* Mark the calling thread as changing its counter (@on) or done: a poke
 * from our signal handler leaves a marked counter alone. */
static void counter_mark(int on)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in_slow = on;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void sp_alloc_poke(void)
{
	int one = 1;

	atomic_compare_exchange_strong(&sp_alloc_on, &one, 2);
	if (!in_slow)		/* else slow() looks on its way out */
		counter_bank();
}

void sp_alloc_arm(void)
{
	counter_mark(1);
	bank = 0;
	smp.left = 0;	/* the next allocation draws the first distance */
	smp.started = 0;
	counter_mark(0);
}

/* ---- taking the stack ------------------------------------------------- */

/*
 * Registers and the used stack of the calling thread, into an alloc
 * record's words: @regs gets the callee-saved registers, rsp and a pc
 * of this function (the drain thread unwinds from there, leaving our
 * own frames out), @stack the words from rsp up to @hi (at most
 * SP_STACK_MAX bytes).  The copy is made here, below which nothing of
 * the copied frames changes while it runs.  Returns the words copied.
 */
__attribute__((noinline)) static uint32_t capture(uint64_t *regs,
						  uint64_t *stack,
						  uintptr_t lo, uintptr_t hi,
						  uint32_t max, uint32_t *flags)
{
	uintptr_t sp_;
	uint32_t n;

	__asm__ volatile("lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, 128(%0)\n\t"
			 "mov %%rsp, 56(%0)\n\t"
			 "mov %%rbp, 48(%0)\n\t"
			 "mov %%rbx, 24(%0)\n\t"
			 "mov %%r12, 96(%0)\n\t"
			 "mov %%r13, 104(%0)\n\t"
			 "mov %%r14, 112(%0)\n\t"
			 "mov %%r15, 120(%0)\n\t"
			 : : "r"(regs) : "rax", "memory");
	sp_ = (uintptr_t)regs[SP_REG_RSP];
	if (sp_ < lo || sp_ > hi || (sp_ & 7)) {
		*flags |= SP_WALK_NOSTACK;
		return 0;
	}
	if (hi - sp_ > (uintptr_t)max * 8) {
		n = max;
		*flags |= SP_WALK_CUT;
	} else {
		n = (uint32_t)((hi - sp_) / 8);
	}
	memcpy(stack, (const void *)sp_, (size_t)n * 8);
	return n;
}

/*
 * Is there room for @need words at @head?  When the ring is full, the
 * drain thread is woken and given up to 5 ms to empty it: a dropped
 * sample would bias the estimates, a short wait does not.
 * Not from a signal handler of ours (there is none in alloc mode).
 */
static bool ring_room(struct sp_ring *r, uint64_t head, uint64_t need,
		      uint64_t *tail)
{
	struct timespec pause = { 0, 20000 };

	/* At most 250 pauses of 20 us: 5 ms. */
	for (int i = 0; i < 250; i++) {
		*tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (head - *tail + need <= SP_RING_WORDS)
			return true;
		/* A request, not only a wake-up: one that comes while the
		 * drain thread is busy must not be lost. */
		if (i % 16 == 0 && !sp_drain_inline())
			sp_drain_post(SP_REQ_DRAIN);
		nanosleep(&pause, NULL);
	}
	return false;
}

/*
 * With no drain thread the record was unwound at once, and the ring is
 * empty: the next record starts at the ring's start again, in the cache
 * lines this one warmed, rather than in the next 1 to 32 KiB of a 512 KiB
 * ring that are cold by then (about 14 write misses a sample on the mix,
 * docs/symprof.md, "the unwind memo").  Only this thread reads or writes
 * its ring then (our signal handler reads no ring without a drain
 * thread, and the drain thread starts only in this thread's
 * pthread_create()); both positions move on to the next multiple of the
 * ring's size, so they still only grow.
 */
static void ring_rewind(struct sp_ring *r)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (atomic_load_explicit(&r->tail, memory_order_relaxed) != head)
		return;
	head = (head + SP_RING_MASK) & ~(uint64_t)SP_RING_MASK;
	atomic_store_explicit(&r->tail, head, memory_order_relaxed);
	atomic_store_explicit(&r->head, head, memory_order_relaxed);
}

/* A sampled allocation of @size bytes at @p: its record, its slot. */
static void take_sample(void *p, uint64_t size)
{
	struct sp_thread *t = sp_self;
	struct sp_ring *r;
	uint64_t head, tail, pos, pad = 0, *w, seq;
	uint32_t flags = 0, nstack, len, max;
	uintptr_t here = (uintptr_t)&flags;
	long slot;

	if (!t) {
		atomic_fetch_add_explicit(&sp_alloc_unregistered, 1,
					  memory_order_relaxed);
		return;
	}
	r = &t->ring;
	/* Room for the copy: from here up, and capture()'s frame below
	 * (256 words is plenty), at most SP_STACK_MAX bytes. */
	max = SP_STACK_MAX / 8;
	if (here >= t->stack_lo && here < t->stack_hi &&
	    (t->stack_hi - here) / 8 + 256 < max)
		max = (uint32_t)((t->stack_hi - here) / 8 + 256);
	len = SP_REC_FIXED + SP_ALLOC_EXTRA + max;
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	pos = head & SP_RING_MASK;
	if (SP_RING_WORDS - pos < len)
		pad = SP_RING_WORDS - pos;
	if (!ring_room(r, head, pad + len, &tail)) {
		atomic_fetch_add_explicit(&r->dropped, 1,
					  memory_order_relaxed);
		return;
	}
	seq = atomic_fetch_add_explicit(&seq_next, 1, memory_order_relaxed) &
	      ((1ull << 40) - 1);
	slot = live_put(p, size, seq);
	if (slot < 0)
		atomic_fetch_add_explicit(&sp_alloc_untracked, 1,
					  memory_order_relaxed);
	if (pad) {
		r->words[pos] = SP_HDR(pad, SP_REC_PAD, 0, 0);
		pos = 0;
	}
	w = &r->words[pos];
	memset(w + 2, 0, SP_NREGS * 8);
	nstack = capture(w + 2, w + SP_REC_FIXED + SP_ALLOC_EXTRA,
			 t->stack_lo, t->stack_hi, max, &flags);
	w[1] = size;
	w[SP_REC_FIXED] = slot < 0 ? UINT64_MAX : (uint64_t)slot;
	w[SP_REC_FIXED + 1] = seq;
	len = SP_REC_FIXED + SP_ALLOC_EXTRA + nstack;
	w[0] = SP_HDR(len, SP_REC_ALLOC, flags, nstack);
	atomic_store_explicit(&r->head, head + pad + len,
			      memory_order_release);
	if (sp_drain_inline()) {
		ring_rewind(r);
		return;
	}
	if (head + pad + len - tail > SP_RING_WORDS / 2 &&
	    !atomic_load_explicit(&r->kicked, memory_order_relaxed)) {
		atomic_store_explicit(&r->kicked, 1, memory_order_relaxed);
		sp_drain_post(SP_REQ_DRAIN);
	}
}

/* The slow path: the counter borrowed on @n bytes, which returned @p
 * (NULL: the allocation failed, and is not counted).  Also where the
 * fast path learns that sampling is off (the counter then runs
 * OFF_GRAIN bytes to the next look) and where a posted request is
 * served. */
__attribute__((noinline)) static void slow(void *p, uint64_t n)
{
	int saved = errno, on;

	counter_mark(1);
	/* Undo fast()'s wrapped subtraction, and take back what a poke
	 * banked: the bytes left to the next sample point. */
	smp.left = (int64_t)((uint64_t)smp.left + n + bank);
	bank = 0;
	on = atomic_load_explicit(&sp_alloc_on, memory_order_relaxed);
	if (!on) {
		/* Not sampling (cpu mode, before start_alloc(), a child that
		 * stopped): look again in OFF_GRAIN bytes. */
		smp.left = OFF_GRAIN;
		smp.started = 0;
		goto out;
	}
	if (busy || !p)
		goto out;
	busy = 1;
	if (!smp.started)
		smp.rng = (uint64_t)sp_gettid() * 0x9e3779b97f4a7c15ull ^
			  sp_now_ns(CLOCK_MONOTONIC) ^ (uintptr_t)&smp;
	if (sp_sampler_take(&smp, n > BIG ? BIG : n, sp_alloc_rate))
		take_sample(p, n > BIG ? BIG : n);
	busy = 0;
out:
	/* A request that cannot be served here (our own code allocating):
	 * the next allocation comes back. */
	if (busy &&
	    atomic_load_explicit(&sp_alloc_on, memory_order_relaxed) == 2)
		counter_bank();
	counter_mark(0);
	/* A request posted with no drain thread (SIGUSR2, or our own
	 * sample's): read after in_slow is 0, so that one posted later
	 * banks the counter and comes back here. */
	if (!busy &&
	    atomic_load_explicit(&sp_alloc_on, memory_order_relaxed) == 2) {
		int two = 2;

		if (atomic_compare_exchange_strong(&sp_alloc_on, &two, 1)) {
			busy = 1;
			sp_drain_inline();
			busy = 0;
		}
	}
	errno = saved;
}

/* *@left -= @n; true when it borrowed.  On x86-64 one `sub` on the
 * thread-local word and its carry flag (gcc's loads, subtracts and
 * stores: two instructions more a call). */
static inline bool sub_borrows(uint64_t *left, uint64_t n)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	bool borrow;

	__asm__("subq %2, %0" : "+m"(*left), "=@ccc"(borrow) : "r"(n));
	return borrow;
#else
	return __builtin_sub_overflow(*left, n, left);
#endif
}

/*
 * The fast path: count an allocation of @n bytes about to be made; true
 * when it is not sampled (the caller tail-calls glibc), false when @n is
 * more than the bytes left to the next sample point (the caller sends
 * it to alloc_slow()).  smp.left is in [0, 2^62] between calls, so the
 * unsigned subtraction borrows exactly when sp_sampler_take() would
 * draw (n > left), whatever @n; slow() adds @n back.  One subtraction on
 * thread-local memory and its borrow: with the GOT load of the
 * initial-exec TLS offset, 3 instructions before the jump to glibc
 * (docs/symprof.md, "Cost of alloc mode").  Whether sampling is on, and
 * whether a request waits, slow() decides.
 */
static inline bool fast(size_t n)
{
	return __builtin_expect(!sub_borrows((uint64_t *)&smp.left, n), 1);
}

/* Account an allocation of @n bytes that returned @p (not NULL). */
static inline void note(void *p, size_t n)
{
	if (!fast(n))
		slow(p, n);
}

enum alloc_kind { AK_MALLOC, AK_CALLOC, AK_MEMALIGN, AK_VALLOC, AK_PVALLOC };

/*
 * The allocation fast() sent away: made here, then slow().  Out of line
 * (and cold) so that the interposed functions' fast paths need no stack
 * frame and end in a jump.  @a and @b are the caller's arguments, @n
 * the bytes counted.
 */
__attribute__((noinline, cold)) static void *alloc_slow(enum alloc_kind k,
							size_t a, size_t b,
							size_t n)
{
	void *p = NULL;

	switch (k) {
	case AK_MALLOC:
		p = __libc_malloc(a);
		break;
	case AK_CALLOC:
		p = __libc_calloc(a, b);
		break;
	case AK_MEMALIGN:
		p = __libc_memalign(a, b);
		break;
	case AK_VALLOC:
		p = __libc_valloc(a);
		break;
	case AK_PVALLOC:
		p = __libc_pvalloc(a);
		break;
	}
	slow(p, n);
	return p;
}

/* @p is being freed (or moved by realloc): out of the table.  For a
 * pointer never sampled (and NULL), mostly one load of the first filter
 * (live_take() reads the second). */
static inline void forget(void *p)
{
	uint64_t size, tag;

	if (atomic_load_explicit(filter1_of(p), memory_order_relaxed))
		live_take(p, &size, &tag);
}

/* ---- the interposed functions ----------------------------------------- */

SP_EXPORT void *malloc(size_t n)
{
	if (fast(n))
		return __libc_malloc(n);
	return alloc_slow(AK_MALLOC, n, 0, n);
}

SP_EXPORT void free(void *p)
{
	forget(p);
	__libc_free(p);
}

SP_EXPORT void *calloc(size_t n, size_t sz)
{
	size_t bytes;

	/* An overflowing product fails in glibc; it counts nothing. */
	if (__builtin_mul_overflow(n, sz, &bytes) || fast(bytes))
		return __libc_calloc(n, sz);
	return alloc_slow(AK_CALLOC, n, sz, bytes);
}

/* realloc is a free of the old block and an allocation of @n bytes: the
 * new size is sampled on its own (docs/symprof.md), whether the block
 * moved or not.  The old one leaves the table before the real call (once
 * freed its address may be reused by another thread at once) and comes
 * back if the call fails. */
/* realloc() of @p, which the first filter may hold (a sampled live
 * pointer): out of the table first, back in if glibc fails. */
__attribute__((noinline, cold)) static void *realloc_held(void *p, size_t n)
{
	uint64_t size = 0, tag = 0;
	bool had = live_take(p, &size, &tag);
	void *q;

	if (!n)		/* glibc frees p: nothing allocated */
		return __libc_realloc(p, n);
	q = __libc_realloc(p, n);
	if (!fast(n))
		slow(q, n);
	if (!q && had)
		live_restore(p, size, tag);
	return q;
}

/* realloc() that fast() sent away (it has counted @n). */
__attribute__((noinline, cold)) static void *realloc_slow(void *p, size_t n)
{
	void *q = __libc_realloc(p, n);

	slow(n ? q : NULL, n);	/* n 0: glibc freed p, nothing allocated */
	return q;
}

/*
 * The fast path, as malloc()'s, with no stack frame and one jump to
 * glibc: @p is NULL or not in the first filter (never sampled, so not
 * in the table), and fast() counts @n (0 when glibc frees @p, which
 * counts nothing).  The rest goes out of line: do_realloc() was one
 * function with a frame, 45 instructions a call (docs/symprof.md, "Cost
 * of alloc mode").
 */
static inline void *do_realloc(void *p, size_t n)
{
	if (__builtin_expect(p && atomic_load_explicit(filter1_of(p),
						       memory_order_relaxed), 0))
		return realloc_held(p, n);
	if (__builtin_expect(fast(n), 1))
		return __libc_realloc(p, n);
	return realloc_slow(p, n);
}

SP_EXPORT void *realloc(void *p, size_t n)
{
	return do_realloc(p, n);
}

SP_EXPORT void *reallocarray(void *p, size_t n, size_t sz)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, sz, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(p, bytes);
}

SP_EXPORT void *memalign(size_t align, size_t n)
{
	if (fast(n))
		return __libc_memalign(align, n);
	return alloc_slow(AK_MEMALIGN, align, n, n);
}

SP_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

SP_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int saved = errno;
	void *p;

	/* glibc's checks: a power of two, a multiple of sizeof(void *). */
	if (align % sizeof(void *) || (align & (align - 1)) || !align)
		return EINVAL;
	p = __libc_memalign(align, n);
	errno = saved;
	if (!p)
		return ENOMEM;
	note(p, n);
	*out = p;
	return 0;
}

SP_EXPORT void *valloc(size_t n)
{
	if (fast(n))
		return __libc_valloc(n);
	return alloc_slow(AK_VALLOC, n, 0, n);
}

SP_EXPORT void *pvalloc(size_t n)
{
	if (fast(n))
		return __libc_pvalloc(n);
	return alloc_slow(AK_PVALLOC, n, 0, n);
}

typedef size_t (*usable_fn)(void *);

SP_EXPORT size_t malloc_usable_size(void *p)
{
	static _Atomic(usable_fn) real;
	usable_fn f = atomic_load_explicit(&real, memory_order_acquire);

	if (!f) {
		f = (usable_fn)dlsym(RTLD_NEXT, "malloc_usable_size");
		if (!f)
			return 0;
		atomic_store_explicit(&real, f, memory_order_release);
	}
	return f(p);
}

/* ---- start-up --------------------------------------------------------- */

/* Our malloc's own address: `malloc` here names whichever definition
 * the dynamic linker chose, which is the program's when it has one. */
extern void *sp_our_malloc(size_t n)
	__attribute__((alias("malloc"), visibility("hidden"))) COPY_ATTRS;

/* @addr is what an undefined symbol of its object resolves to: the
 * canonical PLT entry a non-PIE program gets for a function whose address
 * it takes (Debian's python3.11 has one for malloc and free), a jump to
 * whatever malloc is bound to, not a malloc of its own. */
static bool plt_stub(void *addr)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info di;

	return dladdr1(addr, &di, (void **)&sym, RTLD_DL_SYMENT) && sym &&
	       sym->st_shndx == SHN_UNDEF;
}

const char *sp_alloc_replaced(void)
{
	void *next = dlsym(RTLD_NEXT, "malloc");
	void *first = dlsym(RTLD_DEFAULT, "malloc");
	Dl_info di;

	/* The program's own malloc (linked in) is looked up before ours;
	 * a library's after ours would be bypassed by __libc_malloc. */
	if (first && first != (void *)sp_our_malloc && !plt_stub(first))
		return dladdr(first, &di) && di.dli_fname ? di.dli_fname :
			"the program";
	if (next && next != (void *)__libc_malloc)
		return dladdr(next, &di) && di.dli_fname ? di.dli_fname :
			"a library";
	return NULL;
}
