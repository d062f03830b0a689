/*
 * t-unwind-memo.c - libsymprof's unwind memo (tools/symprof/unwmemo.c)
 * and the traced compiled step (sp_cfi_step_fast_traced(), cfi.c),
 * memo on against memo off on stacks recorded in this process:
 *
 * 1. Stacks captured at several depths of a recursion without frame
 *    pointers, in a qsort() comparator (libc's frames) and under a
 *    signal handler (the trampoline's rows, which are not memoized), with
 *    all registers known and with alloc mode's callee-saved ones.  Each
 *    is unwound as drain.c does (step cache, compiled steps, the copy
 *    only), traced and untraced: the same frames and ends.
 * 2. The memo then answers for the same record with the stored result,
 *    and stays silent when a word it read changes, when the copy is
 *    shorter than a read needs, when a leaf register it used changes,
 *    and after a refresh of the mapping table (or an invalidation).
 *    A word it did not read, or a register it did not use, changed: it
 *    still answers, and the answer is the full unwind's.
 * 3. Thousands of random changes (one word, several, the copy's length,
 *    a leaf register): whenever the memo answers, the full unwind of the
 *    changed record gives that very answer (frames and end, to the
 *    byte); records it does not know are stored, so it learns and
 *    replaces entries as the drain's does.
 * 4. Its memory is fixed: SP_MEMO_SETS x SP_MEMO_WAYS entries, whatever
 *    is stored.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "uwcapture.h"
#include "symprof/symprof.h"
#include "stackshot.h"
#include "base.h"

/* ---- recorded stacks ---------------------------------------------------- */

#define NSHOTS 12
#define MAXWORDS 4096

struct shot {
	struct sp_regs r;
	uint64_t base;
	size_t n;
	uint64_t words[MAXWORDS];
	const char *what;
};

static struct shot shots[NSHOTS];
static int nshots;
static const char *taking = "";

/* Record the caller's stack: its frame is the leaf (inlined). */
static inline __attribute__((always_inline)) void take_here(void)
{
	uint64_t cap[SP_NREGS], top;
	struct shot *s;

	if (nshots == NSHOTS)
		return;
	s = &shots[nshots++];
	uw_capture(cap);
	for (unsigned i = 0; i < SP_NREGS; i++)
		s->r.r[i] = cap[dwarf_to_cap[i]];
	s->r.known = (1u << SP_NREGS) - 1;
	s->what = taking;
	top = stack_top();
	s->base = s->r.r[SP_REG_RSP];
	s->n = top > s->base ? (top - s->base) / 8 : 0;
	if (s->n > MAXWORDS)
		s->n = MAXWORDS;
	raw_copy(s->words, s->base, s->n);
}

static __attribute__((noipa)) void take(void)
{
	take_here();
}

static volatile uint64_t sink;

/* A recursion without frame pointers (the test is built -O2), with
 * callee-saved registers holding data that changes from call to call. */
static __attribute__((noinline)) uint64_t deep(int d, uint64_t x)
{
	uint64_t y = x * 0x9e3779b97f4a7c15ull + (uint64_t)d;

	if (d == 0) {
		take();
		return y;
	}
	y ^= deep(d - 1, y + 1);
	sink += y;
	return y + (uint64_t)d;
}

/* Frames whose CFA is rbp + 16 (a variable-length array makes gcc keep
 * a frame pointer): the leaf's rbp is read (a register the memo
 * compares), and the inner frame's saved rbp, a word of the copy, is read
 * when the outer frame's CFA needs it. */
static __attribute__((noinline)) void vla_inner(int n)
{
	volatile char buf[n];

	buf[0] = (char)n;
	taking = "two frame-pointer frames'";
	if (n & 8)
		take_here();	/* the leaf's rbp is the CFA's */
	else
		take();
	sink += (uint64_t)buf[0];
}

static __attribute__((noinline)) void vla_outer(int n)
{
	volatile char buf[n];

	buf[0] = (char)n;
	vla_inner(n + 16);
	sink += (uint64_t)buf[0];
}

static void on_usr1(int sig)
{
	(void)sig;
	taking = "a signal handler's, run from raise() in a comparator";
	take();
}

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	static int calls;

	if (calls++ == 3) {
		taking = "a qsort() comparator's";
		take();
		raise(SIGUSR1);
	}
	return (x > y) - (x < y);
}

static void record(void)
{
	int v[64];

	for (int d = 1; d <= 8; d += 7) {
		for (int rep = 0; rep < 2; rep++) {
			taking = "a recursion's";
			deep(d, (uint64_t)(rep + 1) * 12345);
		}
	}
	vla_outer(24);
	vla_outer(32);
	for (int i = 0; i < 64; i++)
		v[i] = (i * 7919) % 1000;
	signal(SIGUSR1, on_usr1);
	qsort(v, 64, sizeof(v[0]), cmp);
	signal(SIGUSR1, SIG_DFL);
	sp_maps_refresh();
}

/* ---- the unwind, as drain.c's ------------------------------------------- */

struct result {
	uint32_t n;
	int end;			/* enum sp_step, -1 no CFI, -3 no progress */
	uint64_t need;
	uint64_t pc[SP_MAX_DEPTH];
};

/*
 * Unwind (@r, @m) with the step cache and compiled steps, as drain.c's
 * unwind() does (a return address looked up at pc - 1, signal frames
 * exact, a step must move up the stack), tracing into @t when not NULL;
 * the pcs and the end into *@out.  The end's flag depends on the copy's
 * exact length when it ran out of copy: the trace says so, as drain.c's.
 */
static void walk(const struct sp_regs *r0, const struct sp_stack_copy *m,
		 struct sp_trace *t, struct result *out)
{
	struct sp_regs r = *r0;
	bool exact = true;

	memset(out, 0, sizeof(*out));
	out->end = -2;
	if (t)
		sp_trace_begin(t, &r);
	while (out->n < SP_MAX_DEPTH) {
		uint64_t pc = r.r[SP_REG_RIP], prev = r.r[SP_REG_RSP];
		const struct sp_map *mp = sp_maps_find(pc);
		const struct sp_cfi_fast *f;
		const struct sp_cfi *row;
		int rc;

		out->pc[out->n++] = pc;
		if (!mp) {
			if (t)
				t->over = true;	/* drain.c: a map miss */
			out->end = -1;
			return;
		}
		if (sp_cfi_cache_get(mp, exact ? pc : pc - 1, &f, &row)) {
			out->end = -1;
			return;
		}
		if (row && t)
			t->over = true;
		if (row)
			rc = sp_cfi_step(row, m, &r, &out->need);
		else if (t)
			rc = sp_cfi_step_fast_traced(f, m, &r, &out->need, t);
		else
			rc = sp_cfi_step_fast(f, m, &r, &out->need);
		if (rc == SP_STEP_NOMEM && t) {
			t->lo = (uint32_t)(8 * m->n);
			t->hi = t->lo + 1;
		}
		if (rc != SP_STEP_OK) {
			out->end = rc;
			return;
		}
		if (r.r[SP_REG_RSP] <= prev) {
			out->end = -3;
			return;
		}
		exact = f->signal;
	}
}

static bool same_result(const struct result *a, const struct result *b)
{
	return a->n == b->n && a->end == b->end && a->need == b->need &&
	       memcmp(a->pc, b->pc, a->n * sizeof(a->pc[0])) == 0;
}

/* The results the memo's entries point to: a pool, as the drain's
 * aggregate. */
#define NRES 4096
static struct result *results;
static size_t nres;

static struct sp_memo_key key_of(const struct sp_regs *r, int32_t tid)
{
	return (struct sp_memo_key){ r->r[SP_REG_RIP], r->r[SP_REG_RSP], tid,
				     r->known, false };
}

/*
 * The drain's use of the memo for one record: a hit is the stored
 * result; a miss is unwound (traced) and stored.  *@hit says which; the
 * result into *@out either way.
 */
static void take_record(const struct sp_regs *r, const struct sp_stack_copy *m,
			struct result *out, bool *hit)
{
	static struct sp_trace t;
	struct sp_memo_key k = key_of(r, 7);
	const struct sp_memo_result *h = sp_unwind_memo_find(&k, r->r, m);

	*hit = h != NULL;
	if (h) {
		*out = *(const struct result *)h->stack;
		return;
	}
	walk(r, m, &t, out);
	if (nres < NRES) {
		results[nres] = *out;
		sp_unwind_memo_put(&k, r->r, &t,
				   &(struct sp_memo_result){ &results[nres],
							     0, 0 });
		nres++;
	}
}

/* ---- the checks --------------------------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t work[MAXWORDS];
static bool uses_leaf;

/* 1 and 2 for shot @s with leaf registers known as @known. */
static void check_shot(const struct shot *s, uint32_t known, const char *kn)
{
	struct sp_stack_copy m = { s->base, work, s->n };
	struct sp_regs r = s->r;
	struct sp_trace t;
	struct result full, traced, got;
	bool hit, ok;
	char msg[256];
	uint32_t j, unread = UINT32_MAX;

	r.known = known;
	for (unsigned i = 0; i < SP_NREGS; i++)
		if (!(known & (1u << i)))
			r.r[i] = 0;
	memcpy(work, s->words, s->n * 8);
	walk(&r, &m, NULL, &full);
	walk(&r, &m, &t, &traced);
	printf("# %s stack, %s: %u frames, end %d, %u words read, leaf "
	       "registers used %#x%s\n", s->what, kn, full.n, full.end,
	       t.nread, t.used, t.over ? ", not memoized" : "");
	snprintf(msg, sizeof(msg), "%s stack, %s: traced and untraced "
		 "unwinds agree (%u frames)", s->what, kn, full.n);
	tap_ok(same_result(&full, &traced) && full.n >= 3, __FILE__,
	       __LINE__, msg);
	uses_leaf |= t.used != 0;
	sp_unwind_memo_invalidate();
	take_record(&r, &m, &got, &hit);
	take_record(&r, &m, &got, &hit);
	if (t.over) {
		snprintf(msg, sizeof(msg), "%s stack, %s: not memoized, "
			 "unwound every time, the same", s->what, kn);
		tap_ok(!hit && same_result(&got, &full), __FILE__, __LINE__,
		       msg);
		return;
	}
	snprintf(msg, sizeof(msg), "%s stack, %s: the same record is found, "
		 "with the full unwind's result", s->what, kn);
	tap_ok(hit && same_result(&got, &full), __FILE__, __LINE__, msg);

	/* Every word it read, changed: not found. */
	ok = true;
	for (j = 0; j < t.nread; j++) {
		work[t.at[j] / 8] ^= 8;
		take_record(&r, &m, &got, &hit);
		ok &= !hit;
		work[t.at[j] / 8] ^= 8;
	}
	snprintf(msg, sizeof(msg), "%s stack, %s: any of the %u words it "
		 "read changed, it unwinds again", s->what, kn, t.nread);
	tap_ok(ok && t.nread > 0, __FILE__, __LINE__, msg);

	/* A word it did not read, changed: found, and right. */
	for (j = 0; j < (uint32_t)s->n && unread == UINT32_MAX; j++) {
		bool read = false;

		for (uint32_t i = 0; i < t.nread; i++)
			read |= (uint32_t)t.at[i] / 8 == j ||
				(uint32_t)t.at[i] / 8 + 1 == j;
		if (!read)
			unread = j;
	}
	if (unread != UINT32_MAX) {
		struct result want;

		sp_unwind_memo_invalidate();
		take_record(&r, &m, &got, &hit);
		work[unread] = ~work[unread];
		take_record(&r, &m, &got, &hit);
		walk(&r, &m, NULL, &want);
		snprintf(msg, sizeof(msg), "%s stack, %s: a word it did not "
			 "read changed, found, as the full unwind",
			 s->what, kn);
		tap_ok(hit && same_result(&got, &want), __FILE__, __LINE__,
		       msg);
		work[unread] = ~work[unread];
	}

	/* A shorter copy: cut below the last word read, not found (and
	 * the cut record unwinds as itself); cut right above it, found. */
	sp_unwind_memo_invalidate();
	take_record(&r, &m, &got, &hit);
	m.n = t.lo / 8 - 1;
	take_record(&r, &m, &got, &hit);
	walk(&r, &m, NULL, &traced);
	ok = !hit && same_result(&got, &traced) && !same_result(&got, &full);
	m.n = (t.lo + 7) / 8;
	take_record(&r, &m, &got, &hit);
	snprintf(msg, sizeof(msg), "%s stack, %s: a copy too short for a "
		 "read unwinds again; one long enough for all is found",
		 s->what, kn);
	tap_ok(ok && (m.n == s->n || (hit && same_result(&got, &full))),
	       __FILE__, __LINE__, msg);
	m.n = s->n;

	/* A leaf register it used, changed: not found.  One it did not
	 * use: found. */
	if (t.used) {
		unsigned i = (unsigned)__builtin_ctz(t.used);

		take_record(&r, &m, &got, &hit);
		r.r[i] ^= 16;
		take_record(&r, &m, &got, &hit);
		snprintf(msg, sizeof(msg), "%s stack, %s: leaf register %u, "
			 "which it used, changed: unwound again", s->what, kn,
			 i);
		tap_ok(!hit, __FILE__, __LINE__, msg);
		r.r[i] ^= 16;
	}
	if (known & ~t.used & ~(1u << SP_REG_RSP | 1u << SP_REG_RIP)) {
		unsigned i = (unsigned)__builtin_ctz(
			known & ~t.used & ~(1u << SP_REG_RSP | 1u << SP_REG_RIP));
		struct result want;

		sp_unwind_memo_invalidate();
		take_record(&r, &m, &got, &hit);
		r.r[i] = ~r.r[i];
		take_record(&r, &m, &got, &hit);
		walk(&r, &m, NULL, &want);
		snprintf(msg, sizeof(msg), "%s stack, %s: leaf register %u, "
			 "which it did not use, changed: found, as the full "
			 "unwind", s->what, kn, i);
		tap_ok(hit && same_result(&got, &want), __FILE__, __LINE__,
		       msg);
		r.r[i] = ~r.r[i];
	}

	/* The mapping table refreshed (a dlopen or dlclose would): not
	 * found; then found again. */
	take_record(&r, &m, &got, &hit);
	ok = hit;
	sp_maps_refresh();
	take_record(&r, &m, &got, &hit);
	ok &= !hit && same_result(&got, &full);
	take_record(&r, &m, &got, &hit);
	snprintf(msg, sizeof(msg), "%s stack, %s: after a refresh of the "
		 "mapping table it unwinds again, then finds it", s->what, kn);
	tap_ok(ok && hit && same_result(&got, &full), __FILE__, __LINE__,
	       msg);
}

/* 3: random changes of every recorded stack; the memo's answers against
 * full unwinds. */
static void check_random(void)
{
	static const uint32_t knowns[2] = {
		(1u << SP_NREGS) - 1,
		1u << 3 | 1u << SP_REG_RBP | 1u << SP_REG_RSP | 0xfu << 12 |
			1u << SP_REG_RIP,
	};
	uint64_t hits = 0, misses = 0, wrong = 0, trials = 0;
	struct result got, want;
	char msg[200];

	sp_unwind_memo_invalidate();
	for (int round = 0; round < 40000; round++) {
		const struct shot *s = &shots[next() % (uint64_t)nshots];
		struct sp_stack_copy m = { s->base, work, s->n };
		struct sp_regs r = s->r;
		uint64_t what = next() % 8;
		bool hit;

		r.known = knowns[next() % 2];
		for (unsigned i = 0; i < SP_NREGS; i++)
			if (!(r.known & (1u << i)))
				r.r[i] = 0;
		memcpy(work, s->words, s->n * 8);
		if (what == 0 || what == 1) {
			/* one word in the first 64 (the frames near the
			 * leaf), or anywhere */
			size_t w = next() % (what ? s->n : (s->n < 64 ? s->n
								 : 64));
			work[w] = next() % 3 ? work[w] ^ (1ull << (next() %
								  64))
					     : next();
		} else if (what == 2) {
			for (int i = 0; i < 4; i++)
				work[next() % s->n] = next();
		} else if (what == 3) {
			m.n = next() % (s->n + 1);
		} else if (what == 4) {
			unsigned i = (unsigned)(next() % SP_NREGS);

			if (i != SP_REG_RIP && i != SP_REG_RSP)
				r.r[i] = next() % 2 ? next() : r.r[i] + 8;
		}
		take_record(&r, &m, &got, &hit);
		trials++;
		if (!hit) {
			misses++;
			continue;
		}
		hits++;
		walk(&r, &m, NULL, &want);
		wrong += !same_result(&got, &want);
	}
	printf("# random changes: %llu records, %llu found (%llu not the "
	       "full unwind's), %llu unwound\n", (unsigned long long)trials,
	       (unsigned long long)hits, (unsigned long long)wrong,
	       (unsigned long long)misses);
	snprintf(msg, sizeof(msg), "random changes: every record the memo "
		 "found is the full unwind's (%llu found, %llu unwound)",
		 (unsigned long long)hits, (unsigned long long)misses);
	tap_ok(wrong == 0 && hits > 1000 && misses > 1000, __FILE__, __LINE__,
	       msg);
}

int main(void)
{
	size_t bytes;

	results = calloc(NRES, sizeof(*results));
	if (!results) {
		printf("Bail out! no memory\n");
		return 1;
	}
	record();
	CHECK(nshots >= 6);
	for (int i = 0; i < nshots; i++) {
		check_shot(&shots[i], (1u << SP_NREGS) - 1, "all registers");
		check_shot(&shots[i],
			   1u << 3 | 1u << SP_REG_RBP | 1u << SP_REG_RSP |
				   0xfu << 12 | 1u << SP_REG_RIP,
			   "alloc mode's registers");
	}
	CHECK(uses_leaf);	/* the frame-pointer frames' rbp */
	bytes = arena_bytes;
	check_random();
	/* 4: fixed memory. */
	CHECK(arena_bytes == bytes && sp_unwind_memo_bytes() > 0 &&
	      sp_unwind_memo_bytes() < 512 * 1024);
	free(results);
	return tap_done();
}
