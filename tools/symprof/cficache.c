/*
 * cficache.c - libsymprof's step cache: per pc, the CFI row compiled
 * into the step nearly every frame takes (sp_cfi_compile(), cfi.c), so
 * that the drain unwinds a pc it has seen before with one hash probe and
 * a few loads and copies (sp_cfi_step_fast()) instead of running the
 * FDE's program (sp_cfi_find()) and walking all 17 rules (sp_cfi_step()).
 *
 * Two direct-mapped tables, allocated once from the drain's arena at the
 * first lookup and never grown, whatever the program runs:
 *   - steps: SP_STEP_CACHE entries of (map id, ELF address) -> compiled
 *     row, or "no CFI here";
 *   - rows: SP_ROW_CACHE entries of the whole rows of the pcs whose row
 *     does not compile (an expression: the PLT, the signal trampoline,
 *     realigned frames), which sp_cfi_step() evaluates.
 * A new entry replaces the one in its slot.
 *
 * Keys.  Map ids are never reused while the process runs (maps.c), so an
 * entry of an unloaded object cannot match a new one at the same
 * address.  Besides, every change of the mapping table (sp_maps_gen: a
 * dlopen or dlclose) invalidates the whole cache by bumping its epoch,
 * which entries carry, so no entry outlives the table it was made from.
 *
 * Concurrency: only the drain runs this (the drain thread, or the
 * sampling thread draining in its place), always under sp_drain_lock.
 *
 * SYMPROF_CFI_CACHE=0 (a test knob, docs/symprof.md) bypasses the cache
 * in drain.c: every frame runs sp_cfi_find() and sp_cfi_step().
 */
#include <string.h>

#include "symprof.h"

struct step_entry {
	uint64_t vaddr;
	uint32_t map;
	uint32_t epoch;			/* 0: empty */
	int ok;				/* 1 a row, -1 no CFI at the pc */
	struct sp_cfi_fast f;
};

struct row_entry {
	uint64_t vaddr;
	uint32_t map;
	uint32_t epoch;
	struct sp_cfi row;
};

static struct step_entry *steps;
static struct row_entry *rows;
static bool tried;
static uint32_t epoch = 1;
static struct sp_cfi_cache_stats stats;

static uint64_t slot_of(uint64_t vaddr, uint32_t map, size_t n)
{
	uint64_t h = vaddr * 0x9e3779b97f4a7c15ull ^ (uint64_t)map << 40;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (h >> 32) & (n - 1);
}

void sp_cfi_cache_invalidate(void)
{
	if (++epoch == 0)
		epoch = 1;
	stats.invalidations++;
}

void sp_cfi_cache_stats(struct sp_cfi_cache_stats *out)
{
	*out = stats;
}

void sp_cfi_cache_reset_stats(void)
{
	memset(&stats, 0, sizeof(stats));
}

size_t sp_cfi_cache_bytes(void)
{
	return SP_STEP_CACHE * sizeof(struct step_entry) +
	       SP_ROW_CACHE * sizeof(struct row_entry);
}

static void alloc_tables(void)
{
	tried = true;
	steps = sp_arena_alloc(SP_STEP_CACHE * sizeof(*steps));
	rows = sp_arena_alloc(SP_ROW_CACHE * sizeof(*rows));
	if (!steps || !rows)
		steps = NULL;
}

int sp_cfi_cache_get(const struct sp_map *m, uint64_t pc,
		     const struct sp_cfi_fast **f, const struct sp_cfi **row)
{
	static struct step_entry miss;
	static struct sp_cfi row_miss;
	uint64_t va = pc - m->bias;
	struct step_entry *e = &miss;
	struct row_entry *re = NULL;
	int ok;

	*row = NULL;
	if (!tried)
		alloc_tables();
	if (steps) {
		e = &steps[slot_of(va, m->id, SP_STEP_CACHE)];
		if (e->epoch == epoch && e->vaddr == va && e->map == m->id) {
			stats.hits++;
			goto found;
		}
	}
	stats.misses++;
	ok = sp_cfi_find(&m->eh, pc, &row_miss) == 0 ? 1 : -1;
	e->vaddr = va;
	e->map = m->id;
	e->epoch = epoch;
	e->ok = ok;
	if (ok > 0)
		sp_cfi_compile(&row_miss, &e->f);
	if (ok > 0 && e->f.kind == SP_FAST_FULL) {
		if (steps) {
			re = &rows[slot_of(va, m->id, SP_ROW_CACHE)];
			re->vaddr = va;
			re->map = m->id;
			re->epoch = epoch;
			re->row = row_miss;
		}
		*row = re ? &re->row : &row_miss;
	}
	*f = &e->f;
	return ok > 0 ? 0 : -1;
found:
	*f = &e->f;
	if (e->ok < 0)
		return -1;
	if (e->f.kind != SP_FAST_FULL)
		return 0;
	re = &rows[slot_of(va, m->id, SP_ROW_CACHE)];
	if (re->epoch != epoch || re->vaddr != va || re->map != m->id) {
		stats.row_misses++;
		if (sp_cfi_find(&m->eh, pc, &re->row))
			return -1;	/* cannot be: it was found before */
		re->vaddr = va;
		re->map = m->id;
		re->epoch = epoch;
	}
	*row = &re->row;
	return 0;
}
