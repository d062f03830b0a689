/*
 * drain.c - libsymprof's drain thread: it empties the threads' rings,
 * turns each record into a stack of (mapping, ELF address) frames,
 * aggregates identical stacks in a hash map, and writes the raw file
 * (docs/raw-format.md) every SYMPROF_INTERVAL seconds and at the end.
 *
 * Per record, outside any signal handler (take_record(), unwind()):
 *   - the leaf pc is exact (`p`); every other frame is a return address
 *     (`r`), but the signal trampoline's and the pc a signal frame saved
 *     (`p` again);
 *   - the callers come from the stack copy the handler took, unwound
 *     frame by frame with each object's CFI (.eh_frame, cfi.c): frame
 *     pointers play no part, so code built without them (Debian's) gives
 *     whole stacks;
 *   - a pc without CFI (an object without .eh_frame, JIT code) ends the
 *     stack there, flagged `unwind`: the frames so far are kept, none is
 *     guessed; but the entry code of an object (ld.so's, under the
 *     constructors) is an outermost frame;
 *   - a return address outside every executable mapping, or not right
 *     after a call instruction, ends the stack there and flags it
 *     `badreturn`;
 *   - a stack deeper than the copy (SP_STACK_MAX bytes) or than
 *     SP_MAX_DEPTH frames is `truncated`.
 *
 * The thread blocks every signal (the program's process-directed
 * signals must never run its handlers here), uses no malloc (memory
 * comes from mmap: a program that died inside malloc still gets its
 * profile written), and does all its work under sp_drain_lock, which
 * fork() and dlclose() take to wait for it.
 *
 * Requests from other threads (sp_drain_request()) go through two futex
 * sequence numbers, so that exit paths and signal handlers can ask for
 * the final write and wait a bounded time without taking a lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>

#include "symprof.h"
#include "alloc_est.h"
#include "sym.h"	/* SYM_VERSION only: nothing of libsym is linked */

pthread_mutex_t sp_drain_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
_Atomic unsigned sp_maps_gen;

SP_HIDDEN void sp_thread_recycle(struct sp_thread *t);
SP_HIDDEN int sp_create_thread(void *(*fn)(void *), void *arg);

/* How often the drain thread wakes up to empty the rings; a handler that
 * finds its ring half full wakes it sooner (sp_drain_kick()).  A timed
 * wake-up costs 100 to 300 us of CPU on this VM when it is busy (a bare
 * futex-wait loop measures the same), so the period is long: 4 a second
 * is 0.1 % of a core at most.  At CONFIG_HZ=250 a thread fills 1/4 of
 * its ring in 250 ms with 128-frame stacks. */
#define SP_DRAIN_MS 250
/* A thread waiting for a request (sp_drain_request()) looks at the drain
 * thread this often, and waits at most this long in all, however busy
 * the machine is. */
#define SP_DRAIN_POLL_MS 100
#define SP_DRAIN_CAP_MS 60000
/* Caps on what one profile holds; beyond them samples count as
 * dropped. */
#define SP_MAX_STACKS (1u << 20)
#define SP_ARENA_CAP ((size_t)512 << 20)

/* Alloc mode without a drain thread (sp_drain_begin(true)); the CPU
 * time and number of the drains done by the sampling thread. */
static _Atomic int drain_running, drain_lazy, drain_starting;
static uint64_t here_first_ns, here_cpu_ns, here_drains, here_timed;

/* ---- memory ---------------------------------------------------------- */

void *sp_mmap(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void sp_munmap(void *p, size_t n)
{
	if (p)
		munmap(p, n);
}

#define SP_CHUNK ((size_t)1 << 20)
static char *arena_cur;
static size_t arena_left, arena_total;

void *sp_arena_alloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > arena_left) {
		size_t sz = n > SP_CHUNK / 4 ? n : SP_CHUNK;

		if (arena_total + sz > SP_ARENA_CAP)
			return NULL;
		p = sp_mmap(sz);
		if (!p)
			return NULL;
		arena_total += sz;
		if (sz != SP_CHUNK)
			return p;	/* a big block of its own */
		arena_cur = p;
		arena_left = sz;
	}
	p = arena_cur;
	arena_cur += n;
	arena_left -= n;
	return p;
}

char *sp_arena_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = sp_arena_alloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

void sp_arena_reset(void)
{
	arena_cur = NULL;
	arena_left = 0;
	arena_total = 0;
}

/* ---- the aggregate ---------------------------------------------------- */

#define SP_NOMAP UINT32_MAX

struct sp_frame {
	uint64_t addr;		/* ELF vaddr; runtime address if NOMAP */
	uint32_t map;
	uint32_t ret;		/* 1: a return address */
};

struct sp_stack {
	uint64_t hash;
	uint64_t count, weight;
	int32_t tid;
	uint32_t flags;		/* SYM_PROF_* bits of sym_prof.h */
	uint32_t n;
	uint32_t idx;		/* order of creation: agg.byidx[idx] */
	/* Alloc mode: estimated objects and bytes allocated, and in use
	 * (these two recomputed at every write). */
	double a_obj, a_bytes, u_obj, u_bytes;
	struct sp_frame f[];
};

/* Stack flags as written, in the order of the `flagged` lines. */
static const char *const flag_names[] = {
	"truncated", "badreturn", "leaf", "unwind", "kernel",
};
#define F_TRUNCATED (1u << 0)
#define F_BADRETURN (1u << 1)
#define F_UNWIND (1u << 3)
#define NFLAGS 5

struct sp_tinfo {
	int32_t tid;
	char comm[16];
};

static struct {
	struct sp_stack **tab;
	size_t cap, n;
	uint64_t samples, dropped, flagged[NFLAGS];
	/* For the comment lines: stacks unwound to an outermost frame,
	 * copies cut at SP_STACK_MAX, samples off the thread's stack, CFI
	 * steps, the largest copy in bytes. */
	uint64_t complete, cut, offstack, cfi_steps, copy_max;
	/* SYMPROF_CFI_CACHE=check: stacks unwound both ways, and those
	 * whose frames or flags differ; memo hits checked against a full
	 * unwind, and those that differ. */
	uint64_t checked, differ, memo_checked, memo_differ;
	struct sp_tinfo *threads;
	size_t tcap, tn;
	/* Alloc mode: stacks by idx (SP_MAX_STACKS slots, mmap'd at the
	 * first sample), samples whose record was not unwound. */
	struct sp_stack **byidx;
} agg;

static uint64_t hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static int agg_grow(void)
{
	size_t ncap = agg.cap ? agg.cap * 2 : 4096, i;
	struct sp_stack **nt = sp_mmap(ncap * sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < agg.cap; i++) {
		struct sp_stack *s = agg.tab[i];
		size_t j;

		if (!s)
			continue;
		j = s->hash & (ncap - 1);
		while (nt[j])
			j = (j + 1) & (ncap - 1);
		nt[j] = s;
	}
	sp_munmap(agg.tab, agg.cap * sizeof(*agg.tab));
	agg.tab = nt;
	agg.cap = ncap;
	return 0;
}

/* Room for one more stack, or the sample is dropped (as any sample is
 * while the table cannot grow, whether its stack is new or not). */
static bool agg_room(void)
{
	if ((agg.n + 1) * 2 > agg.cap && agg.n < SP_MAX_STACKS &&
	    agg_grow()) {
		agg.dropped++;
		return false;
	}
	return true;
}

/* Count one more sample of stack @s, of @weight. */
static void agg_count(struct sp_stack *s, uint64_t weight)
{
	s->count++;
	s->weight += weight;
	agg.samples++;
	for (unsigned i = 0; i < NFLAGS; i++)
		if (s->flags & (1u << i))
			agg.flagged[i]++;
}

/* Count a sample of stack @f; the stack, or NULL when it was dropped. */
static struct sp_stack *agg_add(int32_t tid, uint32_t flags,
				const struct sp_frame *f, uint32_t n,
				uint64_t weight)
{
	uint64_t h = hash_mix((uint64_t)(uint32_t)tid, flags);
	struct sp_stack *s;
	size_t j, i;

	for (i = 0; i < n; i++)
		h = hash_mix(hash_mix(h, f[i].addr),
			     (uint64_t)f[i].map << 1 | f[i].ret);
	if (!agg_room())
		return NULL;
	j = h & (agg.cap - 1);
	for (; (s = agg.tab[j]); j = (j + 1) & (agg.cap - 1)) {
		if (s->hash == h && s->tid == tid && s->flags == flags &&
		    s->n == n && memcmp(s->f, f, n * sizeof(*f)) == 0)
			goto found;
	}
	if (agg.n >= SP_MAX_STACKS) {
		agg.dropped++;
		return NULL;
	}
	s = sp_arena_alloc(sizeof(*s) + n * sizeof(*f));
	if (!s) {
		agg.dropped++;
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	s->hash = h;
	s->idx = (uint32_t)agg.n;
	s->tid = tid;
	s->flags = flags;
	s->n = n;
	memcpy(s->f, f, n * sizeof(*f));
	agg.tab[j] = s;
	if (agg.byidx)
		agg.byidx[agg.n] = s;
	agg.n++;
found:
	agg_count(s, weight);
	return s;
}

static struct sp_tinfo *tinfo(int32_t tid)
{
	size_t i;

	for (i = agg.tn; i-- > 0;)
		if (agg.threads[i].tid == tid)
			return &agg.threads[i];
	if (agg.tn == agg.tcap) {
		size_t ncap = agg.tcap ? agg.tcap * 2 : 64;
		struct sp_tinfo *nt = sp_arena_alloc(ncap * sizeof(*nt));

		if (!nt)
			return NULL;
		if (agg.tn)
			memcpy(nt, agg.threads, agg.tn * sizeof(*nt));
		agg.threads = nt;
		agg.tcap = ncap;
	}
	agg.threads[agg.tn].tid = tid;
	agg.threads[agg.tn].comm[0] = 0;
	return &agg.threads[agg.tn++];
}

static void thread_comm_from_proc(int32_t tid, char *buf, size_t len)
{
	char path[64], num[16];

	sp_fmt_u64(num, sizeof(num), (uint64_t)tid);
	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", num);
	if (sp_read_small(path, buf, len))
		buf[0] = 0;
}

/* ---- turning records into stacks --------------------------------------- */

/*
 * Maps change only under sp_drain_lock.  The table is refreshed at the
 * start of a cycle after a dlopen, and again on a pc in no mapping: the
 * dlopen hook runs before the real dlopen, so a cycle can start before
 * the library is in dl_iterate_phdr()'s list, and its samples come
 * after.  At most REFRESH_MAX refreshes a cycle, and none for a page
 * that missed after one already (JIT code stays in no mapping).
 */
#define REFRESH_MAX 8
#define MISS_PAGES 16
static unsigned maps_gen_seen;
static unsigned refreshes;
static uint64_t miss_page[MISS_PAGES];
static unsigned nmiss;
/* Lookups that missed the table (side effects: a refresh, a JIT note):
 * an unwind that made one is not memoized. */
static uint64_t map_misses;

static const struct sp_map *find_map(uint64_t pc)
{
	const struct sp_map *m = sp_maps_find(pc);
	uint64_t page = pc >> 12;
	unsigned i;

	if (m)
		return m;
	map_misses++;
	for (i = 0; i < nmiss; i++)
		if (miss_page[i] == page)
			return NULL;
	if (refreshes < REFRESH_MAX) {
		refreshes++;
		sp_maps_refresh();
		m = sp_maps_find(pc);
	}
	if (!m)
		sp_jit_note(pc);
	if (!m && nmiss < MISS_PAGES)
		miss_page[nmiss++] = page;
	return m;
}

/* SYMPROF_CFI_CACHE=check: the second unwind of a record is running
 * (its steps are not counted). */
static bool checking;

/*
 * Step frame @r, whose pc is @pc and whose rules are those at @look (pc,
 * or pc - 1 for a return address) in map @m: through the step cache
 * (@cached, cficache.c), or finding and walking the row anew.  Returns -1
 * when there is no CFI at @look, else 0 with the step's enum sp_step in
 * *rc and the row's signal flag in *signal.
 */
static int step_frame(const struct sp_map *m, uint64_t look, bool cached,
		      const struct sp_stack_copy *mem, struct sp_regs *r,
		      uint64_t *need, bool *signal, int *rc,
		      struct sp_trace *t)
{
	static struct sp_cfi c;
	const struct sp_cfi_fast *f;
	const struct sp_cfi *row;

	if (!cached) {
		if (t)
			t->over = true;
		if (sp_cfi_find(&m->eh, look, &c))
			return -1;
		*signal = c.signal;
		*rc = sp_cfi_step(&c, mem, r, need);
		return 0;
	}
	if (sp_cfi_cache_get(m, look, &f, &row))
		return -1;
	*signal = f->signal;
	if (row && t)
		t->over = true;		/* expressions are not traced */
	if (row)
		*rc = sp_cfi_step(row, mem, r, need);
	else if (t)
		*rc = sp_cfi_step_fast_traced(f, mem, r, need, t);
	else
		*rc = sp_cfi_step_fast(f, mem, r, need);
	return 0;
}

/* A return address worth keeping: in an executable mapping and right
 * after a call (or the signal trampoline's return point). */
static const struct sp_map *good_return(uint64_t ra)
{
	const struct sp_map *m = find_map(ra);

	if (!m || !sp_call_precedes(m, ra))
		return NULL;
	return m;
}

/* Is @m libsymprof's own code?  Its frames above the leaf (the thread
 * trampoline under every start routine, the interposers) are not the
 * program's: the stack is written as the program has it without us. */
static bool is_self(const struct sp_map *m)
{
	uintptr_t self = (uintptr_t)&sp_handler;

	return self >= m->start && self < m->end;
}

static void put_frame(struct sp_frame *f, const struct sp_map *m,
		      uint64_t pc, bool ret)
{
	f->addr = m ? pc - m->bias : pc;
	f->map = m ? m->id : SP_NOMAP;
	f->ret = ret;
}

/*
 * Unwind a record's stack copy from the leaf (@r, in map @m, already in
 * out[0]) with the CFI of each frame's object: the CFA and every
 * register from their rules, memory from the copy only (cfi.c).  Frames
 * go to out[1..]; returns the stack's flags:
 *   - no CFI for a pc (an object without .eh_frame, JIT code), a rule we
 *     cannot follow, or an unwind that stops making progress: `unwind`,
 *     with the frames found so far and nothing guessed (a return into an
 *     object's entry code, which has no CFI in ld.so, ends a whole
 *     stack);
 *   - a return address outside the executable mappings or not after a
 *     call: `badreturn`, the stack ends before it;
 *   - the copy ends (SP_STACK_MAX) before the stack does, or
 *     SP_MAX_DEPTH frames: `truncated`.
 * A signal frame (the trampoline's CFI carries 'S') is unwound through:
 * the context the kernel saved on the stack gives the interrupted pc,
 * exact (a `p` frame), and all its registers.  The trampoline's own pc
 * (libc's __restore_rt, where the handler returned to, no call before
 * it) is exact too, as elfutils and eu-stack take it.  The end is a CFI
 * rule that marks the return address undefined: _start, and clone3
 * under start_thread.
 */
static uint32_t unwind(const struct sp_stack_copy *mem, bool cut,
		       struct sp_regs *r, const struct sp_map *m,
		       struct sp_frame *out, uint32_t *k, bool cached,
		       struct sp_trace *t)
{
	bool exact = true, signal, put = true;	/* put: pc is out[*k - 1] */

	for (;;) {
		uint64_t need, prev_sp = r->r[SP_REG_RSP];
		uint64_t pc = r->r[SP_REG_RIP];
		int rc;

		if (!m || step_frame(m, exact ? pc : pc - 1, cached, mem, r,
				     &need, &signal, &rc, t)) {
			/* An object's entry code is the outermost frame
			 * there is: ld.so's _start and _dl_start_user, which
			 * run the constructors, have no CFI. */
			if (m && m->entry && pc - m->entry < 64)
				return 0;
			return F_UNWIND;
		}
		if (rc == SP_STEP_OUTERMOST)
			return 0;
		if (rc == SP_STEP_NOMEM) {
			/* Which flag depends on the copy's exact length. */
			if (t) {
				t->lo = (uint32_t)(8 * mem->n);
				t->hi = t->lo + 1;
			}
			return cut && need >= mem->base + 8 * mem->n
				       ? F_TRUNCATED : F_UNWIND;
		}
		if (rc != SP_STEP_OK || r->r[SP_REG_RSP] <= prev_sp)
			return F_UNWIND;
		agg.cfi_steps += !checking;
		if (signal && put)
			out[*k - 1].ret = false;	/* the trampoline */
		exact = signal;
		pc = r->r[SP_REG_RIP];
		m = exact ? find_map(pc) : good_return(pc);
		if (!m && !exact)
			return F_BADRETURN;
		put = false;
		if (!exact && is_self(m))
			continue;
		if (*k >= SP_MAX_DEPTH)
			return F_TRUNCATED;
		put_frame(&out[(*k)++], m, pc, !exact);
		put = true;
	}
}

/* SYMPROF_CFI_CACHE=check: unwind the record again from @r0 (the leaf's
 * registers, frames out[0..k0) already there) without the step cache,
 * and count a difference from the cached unwind (@out[0..k), the flags
 * @flags it returned, the registers @r it ended with) in any frame, flag
 * or register. */
static void check_unwind(const struct sp_stack_copy *mem, bool cut,
			 const struct sp_regs *r0, const struct sp_map *m,
			 const struct sp_frame *out, uint32_t k0, uint32_t k,
			 uint32_t flags, const struct sp_regs *r)
{
	static struct sp_frame again[SP_MAX_DEPTH];
	struct sp_regs r2 = *r0;
	uint32_t k2 = k0, flags2, i;
	bool same;

	memcpy(again, out, k0 * sizeof(*out));
	checking = true;
	flags2 = unwind(mem, cut, &r2, m, again, &k2, false, NULL);
	checking = false;
	same = flags2 == flags && k2 == k && r2.known == r->known &&
	       memcmp(r2.r, r->r, sizeof(r2.r)) == 0;
	for (i = 0; same && i < k; i++)
		same = again[i].addr == out[i].addr &&
		       again[i].map == out[i].map && again[i].ret == out[i].ret;
	agg.checked++;
	agg.differ += !same;
}

/* Alloc mode: the sample's estimates go to its stack @s, and its live
 * slot learns the stack. */
static void take_alloc(struct sp_stack *s, const uint64_t *w)
{
	double objs, bytes;

	if (!agg.byidx) {
		agg.byidx = sp_mmap(SP_MAX_STACKS * sizeof(*agg.byidx));
		if (!agg.byidx)
			return;
		for (size_t i = 0; i < agg.cap; i++)
			if (agg.tab[i])
				agg.byidx[agg.tab[i]->idx] = agg.tab[i];
	}
	sp_alloc_weight(w[1], sp_alloc_rate, &objs, &bytes);
	s->a_obj += objs;
	s->a_bytes += bytes;
	sp_alloc_bind(w[SP_REC_FIXED], w[SP_REC_FIXED + 1], s->idx);
}

/* SYMPROF_CFI_CACHE=check, a memo hit @hit: the full unwind gave
 * @flags and out[0..k) (aggregated as @s); count a difference. */
static void check_memo(const struct sp_memo_result *hit, int32_t tid,
		       uint32_t flags, const struct sp_frame *out, uint32_t k,
		       const struct sp_stack *s)
{
	const struct sp_stack *m = hit->stack;
	bool same = m == s && hit->flags == flags && m->tid == tid &&
		    m->flags == flags && m->n == k;

	for (uint32_t i = 0; same && i < k; i++)
		same = m->f[i].addr == out[i].addr &&
		       m->f[i].map == out[i].map && m->f[i].ret == out[i].ret;
	agg.memo_checked++;
	agg.memo_differ += !same;
}

/* One record to one stack (the record's layout: symprof.h).  An alloc
 * record starts in alloc.c's capture(), whose frames and its callers' in
 * libsymprof are left out: the stack starts at the program's call.
 * Through the unwind memo (unwmemo.c): a record with the inputs of an
 * earlier unwind counts to that unwind's stack, without even a lookup of
 * its leaf's map (an entry is made only where that lookup found the map,
 * which the same table finds again, without side effects); in check
 * mode it is unwound anyway, and compared. */
static void take_record(struct sp_thread *t, const uint64_t *w)
{
	static struct sp_frame out[SP_MAX_DEPTH];
	static struct sp_trace trace;
	uint64_t hdr = w[0], misses = map_misses, steps0 = agg.cfi_steps;
	bool alloc = SP_HDR_KIND(hdr) == SP_REC_ALLOC;
	bool cut = (SP_HDR_FLAGS(hdr) & SP_WALK_CUT) != 0;
	bool stack = !(SP_HDR_FLAGS(hdr) & SP_WALK_NOSTACK);
	bool memo = stack && sp.cfi_cache != 0 && sp.unwind_memo;
	uint32_t k = 0, flags = 0;
	struct sp_stack_copy mem = {
		w[2 + SP_REG_RSP],
		w + SP_REC_FIXED + (alloc ? SP_ALLOC_EXTRA : 0),
		SP_HDR_NSTACK(hdr)
	};
	uint32_t known = alloc ? (1u << 3 | 1u << SP_REG_RBP |
				  1u << SP_REG_RSP | 0xfu << 12 |
				  1u << SP_REG_RIP)
			       : (1u << SP_NREGS) - 1;
	struct sp_memo_key key = { w[2 + SP_REG_RIP], w[2 + SP_REG_RSP],
				   t->tid, known, cut };
	const struct sp_memo_result *hit = NULL;
	struct sp_regs r, r0;
	const struct sp_map *m;
	struct sp_stack *s;

	if (mem.n > SP_STACK_MAX / 8)
		return;
	if (mem.n * 8 > agg.copy_max)
		agg.copy_max = mem.n * 8;
	agg.cut += stack && cut;
	if (memo)
		hit = sp_unwind_memo_find(&key, w + 2, &mem);
	if (hit && sp.cfi_cache != 2) {
		agg.cfi_steps += hit->steps;
		agg.complete += hit->flags == 0;
		if (!agg_room())
			return;
		s = hit->stack;
		agg_count(s, alloc ? 0 : w[1]);
		if (alloc)
			take_alloc(s, w);
		return;
	}
	memcpy(r.r, w + 2, sizeof(r.r));
	r.known = known;
	r0 = r;
	m = find_map(r.r[SP_REG_RIP]);
	if (!alloc)
		put_frame(&out[k++], m, r.r[SP_REG_RIP], false);
	if (!stack) {
		/* Only the registers: the rest of the stack is unknown. */
		agg.offstack++;
		flags |= F_UNWIND;
	} else {
		uint32_t k0 = k;

		if (memo && !hit)
			sp_trace_begin(&trace, &r);
		flags |= unwind(&mem, cut, &r, m, out, &k, sp.cfi_cache != 0,
				memo && !hit ? &trace : NULL);
		if (sp.cfi_cache == 2)
			check_unwind(&mem, cut, &r0, m, out, k0, k, flags, &r);
	}
	agg.complete += flags == 0;
	s = agg_add(t->tid, flags, out, k, alloc ? 0 : w[1]);
	if (hit)
		check_memo(hit, t->tid, flags, out, k, s);
	else if (s && memo && map_misses == misses)
		sp_unwind_memo_put(&key, w + 2, &trace,
				   &(struct sp_memo_result){
					   s, flags,
					   (uint32_t)(agg.cfi_steps - steps0) });
	if (s && alloc)
		take_alloc(s, w);
}

/* Empty one ring; the consumer side of struct sp_ring. */
static void drain_ring(struct sp_thread *t)
{
	struct sp_ring *r = &t->ring;
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	while (tail != head) {
		uint64_t pos = tail & SP_RING_MASK;
		uint64_t h = r->words[pos];
		uint32_t len = SP_HDR_LEN(h);

		if (len == 0 || len > SP_RING_WORDS - pos ||
		    len > head - tail) {
			/* Cannot happen with a sane producer; start over. */
			tail = head;
			break;
		}
		if (SP_HDR_KIND(h) == SP_REC_SAMPLE ||
		    SP_HDR_KIND(h) == SP_REC_ALLOC)
			take_record(t, &r->words[pos]);
		tail += len;
	}
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	atomic_store_explicit(&r->kicked, 0, memory_order_relaxed);
}

static void drain_all(void)
{
	struct sp_thread *t, **pp;
	unsigned gen = atomic_load(&sp_maps_gen);

	refreshes = nmiss = 0;
	if (gen != maps_gen_seen || sp_maps_count() == 0) {
		maps_gen_seen = gen;
		sp_cfi_cache_invalidate();
		sp_maps_refresh();
		refreshes = 1;
	}
	pthread_mutex_lock(&sp_reg_lock);
	for (pp = &sp_threads; (t = *pp);) {
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		struct sp_tinfo *ti;

		drain_ring(t);
		if (!t->seen) {
			ti = tinfo(t->tid);
			if (ti)
				thread_comm_from_proc(t->tid, ti->comm,
						      sizeof(ti->comm));
			t->seen = true;
		}
		if (st != SP_THREAD_DEAD) {
			pp = &t->next;
			continue;
		}
		agg.dropped += atomic_load(&t->ring.dropped);
		ti = tinfo(t->tid);
		if (ti && t->comm[0])
			memcpy(ti->comm, t->comm, sizeof(ti->comm));
		*pp = t->next;
		sp_thread_recycle(t);
	}
	pthread_mutex_unlock(&sp_reg_lock);
}

/* ---- the file ---------------------------------------------------------- */

static void out_line2(struct sp_out *o, const char *k, uint64_t v)
{
	sp_out_str(o, k);
	sp_out_ch(o, ' ');
	sp_out_u64(o, v);
	sp_out_ch(o, '\n');
}

static uint64_t pidns_inode(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Alloc mode's header lines (docs/raw-format.md, "Value types";
 * docs/symprof.md): the four value types, the process's peak RSS and
 * the sampled objects live now. */
static void write_alloc_header(struct sp_out *o)
{
	struct rusage ru;

	sp_out_str(o, "value-type alloc_objects count\n"
		      "value-type alloc_space bytes\n"
		      "value-type inuse_objects count\n"
		      "value-type inuse_space bytes\n");
	out_line2(o, "peak-rss", getrusage(RUSAGE_SELF, &ru) == 0 ?
				 (uint64_t)ru.ru_maxrss * 1024 : 0);
	out_line2(o, "live-samples", sp_alloc_live_count());
}

/* The header lines: what, where, when, how, and the counts. */
static void write_header(struct sp_out *o, uint64_t dropped, uint64_t pidns)
{
	int mode = __atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE);
	struct utsname un;
	bool alloc = mode == SP_MODE_ALLOC, named = uname(&un) == 0;
	uint64_t dur;
	char num[24];

	sp_out_str(o, alloc ? "sym-raw 2\nhost " : "sym-raw 1\nhost ");
	sp_out_enc(o, named ? un.nodename : "");
	sp_out_str(o, "\ntool libsymprof " SYM_VERSION "\nstart ");
	sp_out_str(o, sp.start_str);
	dur = sp_now_ns(CLOCK_MONOTONIC) - sp.start_mono_ns;
	sp_out_str(o, "\nduration ");
	sp_out_u64(o, dur / 1000000000u);
	sp_out_ch(o, '.');
	snprintf(num, sizeof(num), "%09llu",
		 (unsigned long long)(dur % 1000000000u));
	sp_out_str(o, num);
	sp_out_str(o, alloc ? "\nevent alloc\nmode alloc\n"
		       : sp.wall ? "\nevent wall\nmode wall\n"
		       : mode == SP_MODE_PROCESS
			       ? "\nevent cpu-clock\nmode process-timer\n"
			       : "\nevent cpu-clock\nmode thread-timer\n");
	out_line2(o, "frequency", alloc ? 0 : (uint64_t)sp.hz);
	out_line2(o, "period", alloc ? sp_alloc_rate : sp.period_ns);
	sp_out_str(o, alloc ? "weight-unit bytes\n" : "weight-unit ns\n");
	out_line2(o, "samples", agg.samples);
	sp_out_str(o, "lost 0\nthrottled 0\n");
	out_line2(o, "dropped", dropped);
	for (size_t i = 0; i < NFLAGS; i++) {
		sp_out_str(o, "flagged ");
		sp_out_str(o, flag_names[i]);
		sp_out_ch(o, ' ');
		sp_out_u64(o, agg.flagged[i]);
		sp_out_ch(o, '\n');
	}
	out_line2(o, "pidns", pidns);
	sp_out_str(o, "release ");
	sp_out_enc(o, named ? un.release : "");
	sp_out_ch(o, '\n');
	if (alloc)
		write_alloc_header(o);
}

/* "# libsymprof: NOTE\n" when @note is not empty. */
static void write_note(struct sp_out *o, const char *note)
{
	if (!note[0])
		return;
	sp_out_str(o, "# libsymprof: ");
	sp_out_str(o, note);
	sp_out_ch(o, '\n');
}

static void out_kv(struct sp_out *o, const char *k, uint64_t v)
{
	sp_out_str(o, k);
	sp_out_u64(o, v);
}

/* The unwind memo's comment line (unwmemo.c; SYMPROF_UNWIND_MEMO),
 * after the step cache's, whose keys the tests read first. */
static void write_memo_note(struct sp_out *o)
{
	struct sp_memo_stats st;

	if (!sp.unwind_memo) {
		sp_out_str(o, "# libsymprof: unwind memo off "
			      "(SYMPROF_UNWIND_MEMO=0)\n");
		return;
	}
	sp_unwind_memo_stats(&st);
	out_kv(o, "# libsymprof: unwind memo: found ", st.hits);
	out_kv(o, ", unwound ", st.misses);
	out_kv(o, ", stored ", st.puts);
	out_kv(o, ", not stored ", st.unmemoizable);
	out_kv(o, ", cleared ", st.invalidations);
	out_kv(o, ", memo bytes ", sp_unwind_memo_bytes());
	if (sp.cfi_cache == 2) {
		out_kv(o, "; found and unwound again ", agg.memo_checked);
		out_kv(o, ", wrong ", agg.memo_differ);
	}
	sp_out_ch(o, '\n');
}

/* The step cache's comment line (cficache.c; SYMPROF_CFI_CACHE). */
static void write_cache_note(struct sp_out *o)
{
	struct sp_cfi_cache_stats st;

	if (!sp.cfi_cache) {
		sp_out_str(o, "# libsymprof: CFI step cache off "
			      "(SYMPROF_CFI_CACHE=0)\n");
		return;
	}
	sp_cfi_cache_stats(&st);
	out_kv(o, "# libsymprof: CFI step cache: hits ", st.hits);
	out_kv(o, ", misses ", st.misses);
	out_kv(o, ", rows read again ", st.row_misses);
	out_kv(o, ", invalidations ", st.invalidations);
	out_kv(o, ", bytes ", sp_cfi_cache_bytes());
	if (sp.cfi_cache == 2) {
		out_kv(o, "; checked without it: stacks ", agg.checked);
		out_kv(o, ", differ ", agg.differ);
	}
	sp_out_ch(o, '\n');
	write_memo_note(o);
}

/* The comment lines: the walks' counts and what the profiler cost. */
static void write_notes(struct sp_out *o)
{
	struct timespec ts;

	sp_out_str(o, "# libsymprof: signal ");
	sp_out_u64(o, (uint64_t)sp.sig);
	sp_out_str(o, ", CFI unwinds: complete ");
	sp_out_u64(o, agg.complete);
	sp_out_str(o, ", steps ");
	sp_out_u64(o, agg.cfi_steps);
	sp_out_str(o, "; stack copies: largest ");
	sp_out_u64(o, agg.copy_max);
	sp_out_str(o, " bytes, cut at ");
	sp_out_u64(o, SP_STACK_MAX);
	sp_out_ch(o, ' ');
	sp_out_u64(o, agg.cut);
	sp_out_str(o, ", off the thread stack ");
	sp_out_u64(o, agg.offstack);
	sp_out_ch(o, '\n');
	write_cache_note(o);
	/* What the profiler's own thread cost (write_file() runs on it),
	 * for the overhead budget. */
	if (!atomic_load(&drain_running) && atomic_load(&drain_lazy)) {
		/* No drain thread (alloc mode, one thread): what the
		 * drains before this write cost the sampling thread. */
		sp_out_str(o, "# libsymprof: no drain thread (one thread), "
			      "drains on the sampling thread cpu_ns ");
		sp_out_u64(o, here_first_ns + (here_timed ? here_cpu_ns *
						(here_drains - 1) / here_timed : 0));
		sp_out_str(o, " in ");
		sp_out_u64(o, here_drains);
		sp_out_ch(o, '\n');
	} else {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		sp_out_str(o, "# libsymprof: drain thread cpu_ns ");
		sp_out_u64(o, (uint64_t)ts.tv_sec * 1000000000u +
				      (uint64_t)ts.tv_nsec);
		sp_out_ch(o, '\n');
	}
	write_note(o, sp.mode_note);
	write_note(o, sp.sig_note);
	write_note(o, sp.alloc_note);
	if (__atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) == SP_MODE_ALLOC) {
		sp_out_str(o, "# libsymprof: alloc rate ");
		sp_out_u64(o, sp_alloc_rate);
		sp_out_str(o, " bytes; samples left out of the in-use "
			      "figures (live table full) ");
		sp_out_u64(o, atomic_load(&sp_alloc_untracked));
		sp_out_str(o, ", taken on threads libsymprof does not know ");
		sp_out_u64(o, atomic_load(&sp_alloc_unregistered));
		sp_out_ch(o, '\n');
	}
	if (sp.threads_unarmed) {
		sp_out_str(o, "# libsymprof: threads without a timer ");
		sp_out_u64(o, sp.threads_unarmed);
		sp_out_ch(o, '\n');
	}
}

/* The process line, then a line per thread with its name now (live
 * threads may have renamed themselves). */
static void write_tasks(struct sp_out *o, uint64_t pidns)
{
	struct sp_thread *t;
	char comm[64];

	if (sp_read_small("/proc/self/comm", comm, sizeof(comm)))
		comm[0] = 0;
	sp_out_str(o, "process ");
	sp_out_i64(o, sp.pid);
	sp_out_ch(o, ' ');
	if (pidns)
		sp_out_u64(o, pidns);
	else
		sp_out_ch(o, '-');
	sp_out_ch(o, ' ');
	sp_out_i64(o, sp.pid);
	sp_out_ch(o, ' ');
	sp_out_enc(o, comm);
	sp_out_ch(o, '\n');
	pthread_mutex_lock(&sp_reg_lock);
	for (t = sp_threads; t; t = t->next) {
		struct sp_tinfo *ti;

		if (atomic_load(&t->state) != SP_THREAD_LIVE)
			continue;
		ti = tinfo(t->tid);
		if (ti)
			thread_comm_from_proc(t->tid, ti->comm,
					      sizeof(ti->comm));
	}
	pthread_mutex_unlock(&sp_reg_lock);
	for (size_t i = 0; i < agg.tn; i++) {
		sp_out_str(o, "thread ");
		sp_out_i64(o, sp.pid);
		sp_out_ch(o, ' ');
		sp_out_i64(o, agg.threads[i].tid);
		sp_out_ch(o, ' ');
		sp_out_enc(o, agg.threads[i].comm);
		sp_out_ch(o, '\n');
	}
}

static void write_maps(struct sp_out *o)
{
	for (size_t i = 0; i < sp_maps_count(); i++) {
		const struct sp_map *m = sp_maps_get(i);

		sp_out_str(o, "map ");
		sp_out_u64(o, m->id);
		sp_out_str(o, m->kind ? " vdso " : " file ");
		sp_out_i64(o, sp.pid);
		sp_out_ch(o, ' ');
		sp_out_hex(o, m->start);
		sp_out_ch(o, ' ');
		sp_out_hex(o, m->end);
		sp_out_ch(o, ' ');
		sp_out_hex(o, m->pgoff);
		sp_out_ch(o, ' ');
		sp_out_hex(o, m->vaddr);
		sp_out_ch(o, ' ');
		sp_out_str(o, m->build_id[0] ? m->build_id : "-");
		sp_out_ch(o, ' ');
		sp_out_enc(o, m->path ? m->path : "");
		sp_out_ch(o, '\n');
	}
}

/* An estimate, rounded to the nearest whole number. */
static uint64_t round_u64(double v)
{
	return v <= 0 ? 0 : v >= 1.8e19 ? UINT64_MAX : (uint64_t)(v + 0.5);
}

static void write_stack(struct sp_out *o, const struct sp_stack *s,
			bool alloc)
{
	bool any = false;

	sp_out_str(o, "stack ");
	sp_out_u64(o, s->count);
	sp_out_ch(o, ' ');
	sp_out_u64(o, alloc ? round_u64(s->a_bytes) : s->weight);
	sp_out_ch(o, ' ');
	sp_out_i64(o, sp.pid);
	sp_out_ch(o, ' ');
	sp_out_i64(o, s->tid);
	sp_out_ch(o, ' ');
	for (uint32_t f = 0; f < NFLAGS; f++) {
		if (!(s->flags & (1u << f)))
			continue;
		if (any)
			sp_out_ch(o, ',');
		sp_out_str(o, flag_names[f]);
		any = true;
	}
	if (!any)
		sp_out_ch(o, '-');
	if (alloc) {
		/* alloc_objects, alloc_space, inuse_objects, inuse_space */
		sp_out_ch(o, ' ');
		sp_out_u64(o, round_u64(s->a_obj));
		sp_out_ch(o, ',');
		sp_out_u64(o, round_u64(s->a_bytes));
		sp_out_ch(o, ',');
		sp_out_u64(o, round_u64(s->u_obj));
		sp_out_ch(o, ',');
		sp_out_u64(o, round_u64(s->u_bytes));
	}
	for (uint32_t j = 0; j < s->n; j++) {
		uint32_t map = s->f[j].map;

		sp_out_ch(o, ' ');
		sp_out_ch(o, s->f[j].ret ? 'r' : 'p');
		if (map == SP_NOMAP && !sp_jit_frame(s->f[j].addr, &map))
			sp_out_ch(o, '?');
		else
			sp_out_u64(o, map);
		sp_out_ch(o, ':');
		sp_out_hex(o, s->f[j].addr);
	}
	sp_out_ch(o, '\n');
}

/* JIT code: its anonymous maps, and the names the perf map gives the
 * frames outside every object (jit.c). */
static void write_jit(struct sp_out *o)
{
	size_t frames = 0;

	for (size_t i = 0; i < agg.cap; i++)
		if (agg.tab[i])
			frames += agg.tab[i]->n;
	sp_jit_begin((uint32_t)sp_maps_count(), frames);
	sp_jit_write_maps(o, sp.pid);
	for (size_t i = 0; i < agg.cap; i++) {
		const struct sp_stack *s = agg.tab[i];

		for (uint32_t j = 0; s && j < s->n; j++)
			if (s->f[j].map == SP_NOMAP)
				sp_jit_write_loc(o, s->f[j].addr, s->f[j].ret);
	}
}

static bool write_failed_logged;

/* Alloc mode: every stack's in-use estimates, from the live table now. */
static void sum_inuse(void)
{
	size_t pos = 0;
	uint32_t idx;
	uint64_t size;

	for (size_t i = 0; i < agg.cap; i++)
		if (agg.tab[i])
			agg.tab[i]->u_obj = agg.tab[i]->u_bytes = 0;
	if (!agg.byidx)
		return;
	while (sp_alloc_live_next(&pos, &idx, &size)) {
		struct sp_stack *s = idx < agg.n ? agg.byidx[idx] : NULL;
		double objs, bytes;

		if (!s)
			continue;
		sp_alloc_weight(size, sp_alloc_rate, &objs, &bytes);
		s->u_obj += objs;
		s->u_bytes += bytes;
	}
}

/* Write the profile so far (docs/raw-format.md) to the output file,
 * atomically; the first failure is logged. */
static int write_file(void)
{
	static struct sp_out o;
	char path[sizeof(sp.out_pattern) + 32], tmp[sizeof(path) + 32];
	char num[24];
	struct sp_thread *t;
	uint64_t dropped = agg.dropped, pidns = pidns_inode();
	bool alloc = __atomic_load_n(&sp.mode, __ATOMIC_ACQUIRE) ==
		     SP_MODE_ALLOC;
	int err = 0;

	if (sp_out_path(path, sizeof(path)))
		return -ENAMETOOLONG;
	sp_fmt_u64(num, sizeof(num), (uint64_t)sp.pid);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%s", path, num);
	o.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o.fd < 0) {
		err = -errno;
		goto report;
	}
	o.err = 0;
	o.len = 0;

	pthread_mutex_lock(&sp_reg_lock);
	for (t = sp_threads; t; t = t->next)
		dropped += atomic_load(&t->ring.dropped);
	pthread_mutex_unlock(&sp_reg_lock);

	if (alloc) {
		dropped += atomic_load(&sp_alloc_untracked) +
			   atomic_load(&sp_alloc_unregistered);
		sum_inuse();
	}
	write_header(&o, dropped, pidns);
	write_notes(&o);
	write_tasks(&o, pidns);
	write_maps(&o);
	write_jit(&o);
	for (size_t i = 0; i < agg.cap; i++) {
		if (agg.tab[i])
			write_stack(&o, agg.tab[i], alloc);
	}
	sp_jit_end();
	sp_out_str(&o, "end\n");
	err = sp_out_flush(&o);
	if (close(o.fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
report:
	if (err && !write_failed_logged) {
		write_failed_logged = true;
		sp_log("cannot write '", path, "'");
	}
	return err;
}

/* ---- the thread and its requests -------------------------------------- */

static _Atomic uint32_t req_seq, done_seq;
static _Atomic unsigned req_what;
static _Atomic int waiters;
static bool finished;
static __thread bool on_drain;
/* The drain thread's tid and CPU clock, for sp_drain_request()'s
 * progress test (0 until it runs). */
static _Atomic pid_t drain_tid;
static clockid_t drain_clk;
static _Atomic int drain_clk_ok;

static void futex_wait(_Atomic uint32_t *addr, uint32_t val, int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, &ts,
		NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX,
		NULL, NULL, 0);
}

bool sp_on_drain_thread(void)
{
	return on_drain;
}

static void *drain_main(void *arg)
{
	uint32_t seen = atomic_load(&req_seq);
	uint64_t next_write = 0, now;

	(void)arg;
	on_drain = true;
	if (pthread_getcpuclockid(pthread_self(), &drain_clk) == 0)
		atomic_store(&drain_clk_ok, 1);
	atomic_store(&drain_tid, sp_gettid());
	sp_alloc_thread_off();
	pthread_setname_np(pthread_self(), "symprof-drain");
	if (sp.interval_s)
		next_write = sp_now_ns(CLOCK_MONOTONIC) +
			     (uint64_t)sp.interval_s * 1000000000u;
	for (;;) {
		uint32_t cur;
		unsigned what;

		futex_wait(&req_seq, seen, SP_DRAIN_MS);
		cur = atomic_load(&req_seq);
		what = atomic_exchange(&req_what, 0);
		pthread_mutex_lock(&sp_drain_lock);
		if (!finished && atomic_load(&sp_enabled)) {
			drain_all();
			now = sp_now_ns(CLOCK_MONOTONIC);
			if ((what & (SP_REQ_WRITE | SP_REQ_FINAL)) ||
			    (sp.interval_s && now >= next_write)) {
				write_file();
				next_write = now + (uint64_t)sp.interval_s *
							   1000000000u;
			}
			if (what & SP_REQ_FINAL)
				finished = true;
		}
		pthread_mutex_unlock(&sp_drain_lock);
		atomic_store(&done_seq, cur);
		if (atomic_load(&waiters))
			futex_wake(&done_seq);
		seen = cur;
	}
	return NULL;
}

/*
 * Alloc mode runs without a drain thread while the program has one
 * thread: a second thread would switch glibc's malloc to its
 * multi-threaded paths (arena locks, atomic fastbins) for the rest of
 * the process, which costs more than all the sampling (about 30 ns a
 * malloc/free pair that misses the tcache; docs/symprof.md, "Cost of
 * alloc mode").  The thread that takes a sample drains the rings itself
 * (sp_drain_inline()), requests are served there or at once
 * (sp_drain_request()), and the thread starts before the program's first
 * pthread_create() (sp_drain_need_thread()).
 */
static uint64_t here_next_write;	/* the next --interval write */
static bool in_here;

/* --interval without a drain thread: a timer on our signal, to this
 * thread (timer_create's SIGEV_THREAD would start a thread). */
static timer_t here_timer;
static bool here_has_timer;

static void here_timer_stop(void)
{
	if (here_has_timer)
		timer_delete(here_timer);
	here_has_timer = false;
}

int sp_drain_begin(bool lazy)
{
	struct sigevent sev;
	struct itimerspec its;

	if (!agg.tab && agg_grow())
		return -ENOMEM;
	if (!lazy)
		return sp_drain_start();
	here_next_write = sp.interval_s ?
		sp_now_ns(CLOCK_MONOTONIC) +
		(uint64_t)sp.interval_s * 1000000000u : 0;
	here_has_timer = false;
	if (sp.interval_s) {
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = sp.sig;
		sev.sigev_value.sival_ptr = &sp_cookie;
		sev._sigev_un._tid = sp_gettid();
		memset(&its, 0, sizeof(its));
		its.it_value.tv_sec = sp.interval_s;
		its.it_interval.tv_sec = sp.interval_s;
		if (timer_create(CLOCK_MONOTONIC, &sev, &here_timer))
			return sp_drain_start();	/* the thread does it */
		here_has_timer = true;
		if (timer_settime(here_timer, 0, &its, NULL)) {
			here_timer_stop();
			return sp_drain_start();
		}
	}
	atomic_store(&drain_lazy, 1);
	return 0;
}

int sp_drain_need_thread(void)
{
	int no = 0, err;

	if (!atomic_load(&drain_lazy) || atomic_load(&drain_running) ||
	    !atomic_compare_exchange_strong(&drain_starting, &no, 1))
		return 0;
	err = sp_drain_start();
	if (err)
		atomic_store(&drain_starting, 0);
	else
		here_timer_stop();	/* the thread writes every interval */
	return err;
}

/* What the drain thread does for a wake-up with @what, done by the
 * calling thread, allocations passing through.  @from_signal: from our
 * handler, over code that holds none of our locks; the rings are not
 * read (each sample was drained when it was taken, and one being taken
 * makes the handler defer), so no dl_iterate_phdr() over an interrupted
 * dlopen(). */
static void drain_here(unsigned what, bool from_signal)
{
	struct timespec t0, t1;
	bool timed;
	int was;
	uint64_t now;

	if (in_here)
		return;
	was = sp_alloc_hold(1);
	/* The CPU time of the first drain (it reads the maps and each
	 * object's CFI index), and of 1 in 16 of the others, scaled: two
	 * clock_gettime() system calls a sample would cost a third of a
	 * drain. */
	timed = here_drains % 16 == 0;
	if (timed)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	pthread_mutex_lock(&sp_drain_lock);
	in_here = true;
	what |= atomic_exchange(&req_what, 0);
	if (!finished && atomic_load(&sp_enabled)) {
		if (!from_signal)
			drain_all();
		/* The clock only when an --interval write may be due (a
		 * vDSO call, and its data's cache line, a sample). */
		now = here_next_write ? sp_now_ns(CLOCK_MONOTONIC) : 0;
		if ((what & (SP_REQ_WRITE | SP_REQ_FINAL)) ||
		    (here_next_write && now >= here_next_write)) {
			write_file();
			if (here_next_write)
				here_next_write = now +
					(uint64_t)sp.interval_s * 1000000000u;
		}
		if (what & SP_REQ_FINAL)
			finished = true;
	}
	if (timed) {
		uint64_t ns;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000 +
				(t1.tv_nsec - t0.tv_nsec));
		if (here_drains) {
			here_cpu_ns += ns;
			here_timed++;
		} else {
			here_first_ns = ns;
		}
	}
	here_drains++;
	in_here = false;
	pthread_mutex_unlock(&sp_drain_lock);
	sp_alloc_hold(was);
}

bool sp_drain_inline(void)
{
	if (!atomic_load(&drain_lazy) || atomic_load(&drain_running))
		return false;
	drain_here(0, false);
	return true;
}

/*
 * A profile request from our handler (SIGUSR2, or the --interval timer
 * of a process without drain thread).  With no drain thread the handler
 * writes the file itself, so that an idle single-threaded program (a
 * server in epoll_wait) answers at once, unless it interrupted our own
 * code (a sample being taken, a drain, a lock of ours held): then the
 * request waits for the next allocation (sp_alloc_poke()), or the next
 * tick.  The write uses no malloc, stdio or lock of libc's: what it
 * calls is async-signal-safe in practice (open, write, rename, getrusage,
 * uname, snprintf of integers and strings).  One thread only: the lock
 * checks below look at the interrupted code's locks.
 */
void sp_drain_signal(unsigned what)
{
	if (atomic_load(&drain_running) || !atomic_load(&drain_lazy)) {
		sp_drain_post(what);
		return;
	}
	if (!sp_alloc_busy() && !in_here &&
	    !sp_drain_lock.__data.__owner &&
	    pthread_mutex_trylock(&sp_reg_lock) == 0) {
		pthread_mutex_unlock(&sp_reg_lock);
		drain_here(what, true);
		return;
	}
	sp_drain_post(what);
}

int sp_drain_start(void)
{
	int err;

	if (!agg.tab && agg_grow())
		return -ENOMEM;
	err = sp_create_thread(drain_main, NULL);
	if (err)
		return err;
	atomic_store(&drain_running, 1);
	return 0;
}

/* The drain thread's CPU time, or 0 when it cannot be read. */
static uint64_t drain_cpu_ns(void)
{
	struct timespec ts;

	if (!atomic_load(&drain_clk_ok) || clock_gettime(drain_clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The drain thread is runnable (R: running or waiting for a CPU) or in an
 * uninterruptible wait (D: a disk), from /proc/self/task/TID/stat; not
 * yet running counts as runnable.  AS-safe: open, read, close. */
static bool drain_runnable(void)
{
	static const char pre[] = "/proc/self/task/", post[] = "/stat";
	char path[sizeof(pre) + sizeof(post) + 24], num[24], buf[256];
	const char *p;
	pid_t tid = atomic_load(&drain_tid);
	size_t n;

	if (!tid)
		return true;
	sp_fmt_u64(num, sizeof(num), (uint64_t)tid);
	n = strlen(num);
	memcpy(path, pre, sizeof(pre) - 1);
	memcpy(path + sizeof(pre) - 1, num, n);
	memcpy(path + sizeof(pre) - 1 + n, post, sizeof(post));
	if (sp_read_small(path, buf, sizeof(buf)))
		return false;
	p = strrchr(buf, ')');	/* comm may hold anything */
	return p && p[1] == ' ' && (p[2] == 'R' || p[2] == 'D');
}

int sp_drain_request(unsigned what, int timeout_ms)
{
	uint64_t stuck_since, start, now, cpu, last_cpu;
	uint32_t seq;

	if (!atomic_load(&drain_running) && atomic_load(&drain_lazy)) {
		drain_here(what, false);
		return 0;
	}
	if (!atomic_load(&drain_running))
		return -ESRCH;
	if (on_drain)
		return -EDEADLK;
	atomic_fetch_add(&waiters, 1);
	atomic_fetch_or(&req_what, what);
	seq = atomic_fetch_add(&req_seq, 1) + 1;
	futex_wake(&req_seq);
	start = stuck_since = sp_now_ns(CLOCK_MONOTONIC);
	last_cpu = drain_cpu_ns();
	for (;;) {
		uint32_t d = atomic_load(&done_seq);

		if ((int32_t)(d - seq) >= 0)
			break;
		now = sp_now_ns(CLOCK_MONOTONIC);
		cpu = drain_cpu_ns();
		if (cpu != last_cpu || drain_runnable())
			stuck_since = now;	/* slow, not stuck */
		last_cpu = cpu;
		if (now - stuck_since >= (uint64_t)timeout_ms * 1000000u ||
		    now - start >= (uint64_t)SP_DRAIN_CAP_MS * 1000000u) {
			atomic_fetch_sub(&waiters, 1);
			return -ETIMEDOUT;
		}
		futex_wait(&done_seq, d, SP_DRAIN_POLL_MS);
	}
	atomic_fetch_sub(&waiters, 1);
	return 0;
}

void sp_drain_post(unsigned what)
{
	if (!atomic_load(&drain_running) && atomic_load(&drain_lazy)) {
		/* Served at the calling thread's next allocation. */
		atomic_fetch_or(&req_what, what);
		sp_alloc_poke();
		return;
	}
	if (!atomic_load(&drain_running))
		return;
	atomic_fetch_or(&req_what, what);
	atomic_fetch_add(&req_seq, 1);
	futex_wake(&req_seq);
}

/* From the signal handler: a ring is half full, drain now.  One futex
 * wake, async-signal-safe; the ring's kick flag keeps it to one per
 * drain. */
void sp_drain_kick(void)
{
	syscall(SYS_futex, (uint32_t *)&req_seq, FUTEX_WAKE_PRIVATE, 1, NULL,
		NULL, 0);
}

void sp_drain_reset_child(void)
{
	/* The parent's drain thread does not exist here; its aggregate is
	 * the parent's profile, not ours. */
	atomic_store(&drain_running, 0);
	atomic_store(&drain_lazy, 0);
	atomic_store(&drain_starting, 0);
	here_has_timer = false;		/* timers are not inherited */
	in_here = false;
	here_first_ns = here_cpu_ns = here_drains = here_timed = 0;
	atomic_store(&drain_tid, 0);
	atomic_store(&drain_clk_ok, 0);
	finished = false;
	write_failed_logged = false;
	memset(&agg, 0, sizeof(agg));
	sp_cfi_cache_reset_stats();
	/* The entries name the parent's stacks. */
	sp_unwind_memo_invalidate();
	sp_unwind_memo_reset_stats();
	atomic_store(&req_seq, 0);
	atomic_store(&done_seq, 0);
	atomic_store(&req_what, 0);
}
