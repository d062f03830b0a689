/*
 * unwmemo.c - libsymprof's unwind memo (docs/symprof.md, "The unwind
 * memo"): a sample whose stack was unwound before, from the same pc and
 * sp and over the same stack words, is not unwound again.
 *
 * Why it is exact.  An unwind through compiled rows (sp_cfi_step_fast())
 * is a deterministic function of its inputs: the leaf's registers it
 * reads, the words of the copy it reads, for each read whether it falls
 * inside the copy (the copy's length), and the mapping table with the
 * objects' CFI and code (which sp_call_precedes() reads).  The trace
 * (struct sp_trace, symprof.h) records the first three as the unwind
 * runs; for the last, every change of the table (sp_maps_epoch())
 * clears the memo.  A lookup returns an entry only when the new
 * record's key (thread, pc, sp, known mask, cut flag) is the entry's and
 * every recorded input is equal: then every step reads the same values
 * and takes the same branches, and the result (frames, flags, the
 * aggregated stack they name) is the same.  A fork clears it too
 * (sp_drain_reset_child(): the stacks are the parent's).
 *
 * Inputs are recorded lazily (sp_trace_use()): a callee-saved register
 * restored from the copy is only read when a later rule uses it (a CFA
 * in rbp, a copy rule), so the words a function saved for its own
 * callers, which change from call to call, are not inputs unless the
 * unwind depends on them.
 *
 * Not memoized (t->over): an unwind with more reads than an entry holds,
 * a step through a whole row (an expression: the PLT, a signal frame),
 * or a pc in no known mapping (which refreshes the table and notes JIT
 * code: side effects).
 *
 * Memory: SP_MEMO_SETS x SP_MEMO_WAYS entries, allocated once from the
 * drain's arena at the first put; a put replaces the ways of its set in
 * turn.  Drain only, under sp_drain_lock: no atomics, no allocation
 * after the first put, no call into malloc.
 */
#include <string.h>

#include "symprof.h"

/* Entries are laid out for a hit: the key and the bounds, then the
 * offsets and the words to compare (a hit reads a few cache lines), the
 * registers last (most unwinds use none). */
struct memo_entry {
	uint64_t pc, sp;
	int32_t tid;
	uint32_t known;
	uint32_t used;			/* leaf registers compared */
	uint32_t lo, hi;		/* the copy's bytes B: lo <= B < hi */
	uint16_t nread;
	bool cut;
	struct sp_memo_result res;
	uint16_t at[SP_MEMO_READS];
	uint64_t val[SP_MEMO_READS];
	uint64_t reg[SP_NREGS];		/* the used ones' values */
};

/* A set's tags, a hash of each way's key (0: empty), in one cache line:
 * a lookup reads the entries whose tag matches only. */
static uint32_t tags[SP_MEMO_SETS][SP_MEMO_WAYS];
static struct memo_entry *tab;
static uint8_t next_way[SP_MEMO_SETS];
static bool tried;
static unsigned maps_epoch;		/* of the table the entries used */
static struct sp_memo_stats stats;

/* A new mapping table (a refresh: dlopen, dlclose, a pc in no known
 * map): every entry was made from the old one. */
static void sync_epoch(void)
{
	if (maps_epoch != sp_maps_epoch()) {
		maps_epoch = sp_maps_epoch();
		sp_unwind_memo_invalidate();
	}
}

static uint64_t hash_key(const struct sp_memo_key *k)
{
	uint64_t h = k->pc * 0xff51afd7ed558ccdull ^ k->sp;

	h = (h ^ ((uint64_t)(uint32_t)k->tid << 32 | k->known << 1 |
		  k->cut)) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

static bool same_key(const struct memo_entry *e, const struct sp_memo_key *k)
{
	return e->pc == k->pc && e->sp == k->sp && e->tid == k->tid &&
	       e->known == k->known && e->cut == k->cut;
}

/* Does record (@regs, @m) agree with every input entry @e recorded? */
static bool inputs_agree(const struct memo_entry *e, const uint64_t *regs,
			 const struct sp_stack_copy *m)
{
	uint64_t bytes = (uint64_t)m->n * 8;
	uint32_t used = e->used;

	if (bytes < e->lo || bytes >= e->hi || bytes > SP_STACK_MAX)
		return false;
	for (uint32_t j = 0; j < e->nread; j++) {
		uint64_t v;

		memcpy(&v, (const uint8_t *)m->words + e->at[j], 8);
		if (v != e->val[j])
			return false;
	}
	while (used) {
		unsigned i = (unsigned)__builtin_ctz(used);

		used &= used - 1;
		if (regs[i] != e->reg[i])
			return false;
	}
	return true;
}

const struct sp_memo_result *
sp_unwind_memo_find(const struct sp_memo_key *k, const uint64_t *regs,
		    const struct sp_stack_copy *m)
{
	uint64_t h = hash_key(k);
	size_t set = (size_t)h & (SP_MEMO_SETS - 1);
	uint32_t tag = (uint32_t)(h >> 32) | 1;

	sync_epoch();
	for (unsigned w = 0; tab && w < SP_MEMO_WAYS; w++) {
		const struct memo_entry *e = &tab[set * SP_MEMO_WAYS + w];

		if (tags[set][w] == tag && same_key(e, k) &&
		    inputs_agree(e, regs, m)) {
			stats.hits++;
			return &e->res;
		}
	}
	stats.misses++;
	return NULL;
}

void sp_unwind_memo_put(const struct sp_memo_key *k, const uint64_t *regs,
			const struct sp_trace *t,
			const struct sp_memo_result *res)
{
	uint64_t h = hash_key(k);
	size_t set = (size_t)h & (SP_MEMO_SETS - 1);
	unsigned w;
	struct memo_entry *e;

	sync_epoch();
	if (t->over) {
		stats.unmemoizable++;
		return;
	}
	if (!tried) {
		tried = true;
		tab = sp_arena_alloc(SP_MEMO_SETS * SP_MEMO_WAYS *
				     sizeof(*tab));
	}
	if (!tab)
		return;
	w = next_way[set];
	next_way[set] = (uint8_t)((w + 1) % SP_MEMO_WAYS);
	e = &tab[set * SP_MEMO_WAYS + w];
	tags[set][w] = (uint32_t)(h >> 32) | 1;
	e->pc = k->pc;
	e->sp = k->sp;
	e->tid = k->tid;
	e->known = k->known;
	e->cut = k->cut;
	e->used = t->used;
	e->lo = t->lo;
	e->hi = t->hi;
	e->nread = (uint16_t)t->nread;
	e->res = *res;
	memcpy(e->at, t->at, t->nread * sizeof(t->at[0]));
	memcpy(e->val, t->val, t->nread * sizeof(t->val[0]));
	memcpy(e->reg, regs, sizeof(e->reg));
	stats.puts++;
}

void sp_unwind_memo_invalidate(void)
{
	memset(tags, 0, sizeof(tags));
	stats.invalidations++;
}

void sp_unwind_memo_stats(struct sp_memo_stats *out)
{
	*out = stats;
}

void sp_unwind_memo_reset_stats(void)
{
	memset(&stats, 0, sizeof(stats));
}

size_t sp_unwind_memo_bytes(void)
{
	return tab ? SP_MEMO_SETS * SP_MEMO_WAYS * sizeof(*tab) + sizeof(tags)
		   : 0;
}
