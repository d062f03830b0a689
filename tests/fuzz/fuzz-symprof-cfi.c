/*
 * fuzz-symprof-cfi.c - libsymprof's CFI reader and unwind step
 * (tools/symprof/cfi.c), which its drain thread runs on the .eh_frame of
 * every object a profiled program maps: corrupt bytes there must never
 * make it read outside the object's segment or the stack copy, loop, or
 * give a rule the step cannot bound.
 *
 * Input: a little-endian u16, the length H of .eh_frame_hdr, then the
 * object's bytes from .eh_frame_hdr to the end of .eh_frame as they lie
 * in memory (tests/fuzz/seeds/cfi-seeds.py extracts them from binaries).
 * They are copied into a buffer of exactly their size, which is the
 * segment every read of .eh_frame is bounded by, and .eh_frame_hdr is
 * its first H bytes.  The pcs looked up come from the first 64 entries
 * of the header's table, when it has one (table_pcs()), plus two taken
 * from the input; each row found is checked for shape and stepped over
 * a stack copy made of the input's first bytes, and the row compiled for
 * the drain's step cache (sp_cfi_compile()) steps to the same result and
 * registers, word for word (or is left to the row: SP_FAST_FULL).
 */
#include "fuzz.h"
#include "symprof/symprof.h"
#include "base.h"

/* The table's entries as sp_cfi_find() reads them (table encoding
 * 0x3b, count udata4), for the pcs worth asking about: every byte of
 * the first 64 bytes after the first 8 entries' initial locations (each
 * row of small functions), three pcs for the next 56 entries. */
static size_t table_pcs(const uint8_t *h, size_t hlen, uint64_t *pcs,
			size_t max)
{
	size_t n = 0, count, i, k;

	if (hlen < 12 || h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b ||
	    (h[1] & 0x0f) != 0x0b)
		return 0;
	count = (size_t)fuzz_u64(h + 8, 4);
	for (i = 0; i < count && i < 64 && 12 + 8 * i + 8 <= hlen; i++) {
		int32_t loc = (int32_t)fuzz_u64(h + 12 + 8 * i, 4);
		uint64_t pc = (uint64_t)(uintptr_t)h + (uint64_t)(int64_t)loc;

		for (k = 0; k < (i < 8 ? 64 : 3) && n < max; k++)
			pcs[n++] = pc + (i < 8 ? k : k * (5 + (i & 31)));
	}
	return n;
}

/* A row's rules have a known kind, a register where they name one, and
 * an expression inside the pool only where they say so. */
static void check_rule(const struct sp_cfi *c, const struct sp_rule *x,
		       bool cfa)
{
	FUZZ_CHECK(x->kind <= SP_RULE_VAL_EXPR);
	FUZZ_CHECK(c->npool <= SP_CFI_POOL);
	if (x->kind == SP_RULE_EXPR || x->kind == SP_RULE_VAL_EXPR)
		FUZZ_CHECK((unsigned)x->at + x->len <= c->npool);
	else
		FUZZ_CHECK(x->len == 0);
	if (x->kind == SP_RULE_REG && !cfa)
		FUZZ_CHECK(x->reg < SP_NREGS);
}

/* Step once from @pc over a stack copy of the input's bytes, with the
 * registers the input's bits say are known: the result is one of the
 * four, the registers change only on success, a success knows the
 * caller's pc and sp (the CFA), and a missing word lies outside the
 * copy; the compiled step agrees. */
static void step(const struct sp_cfi *c, uint64_t pc, const uint8_t *data,
		 size_t size)
{
	static uint64_t words[64];
	struct sp_stack_copy m = { 0x7ffff000, words, 64 };
	struct sp_regs r, before, fast;
	struct sp_cfi_fast f;
	uint64_t need = 0, needf = 0;
	unsigned i;
	int rc, rcf;

	memset(words, 0, sizeof(words));
	memcpy(words, data, size < sizeof(words) ? size : sizeof(words));
	for (i = 0; i < SP_NREGS; i++)
		r.r[i] = m.base + 8 * i;
	r.r[SP_REG_RIP] = pc;
	r.r[SP_REG_RSP] = m.base + 8;
	r.known = (uint32_t)fuzz_u64(data, size < 3 ? size : 3) |
		  1u << SP_REG_RIP | 1u << SP_REG_RSP;
	r.known &= (1u << SP_NREGS) - 1;
	before = r;
	/* The compiled step (the drain's step cache) gives what the row's
	 * gives, word for word, or leaves the row to it. */
	sp_cfi_compile(c, &f);
	fast = r;
	rcf = sp_cfi_step_fast(&f, &m, &fast, &needf);
	/* The traced step (the unwind memo's) steps the same. */
	{
		struct sp_regs traced = before;
		struct sp_trace t;
		uint64_t needt = 0;

		sp_trace_begin(&t, &traced);
		FUZZ_CHECK(sp_cfi_step_fast_traced(&f, &m, &traced, &needt,
						   &t) == rcf &&
			   needt == needf &&
			   traced.known == fast.known &&
			   memcmp(traced.r, fast.r, sizeof(fast.r)) == 0 &&
			   t.nread <= SP_MEMO_READS && t.lo <= 8 * m.n);
	}
	rc = sp_cfi_step(c, &m, &r, &need);
	if (f.kind == SP_FAST_FULL)
		FUZZ_CHECK(rcf == SP_STEP_BAD &&
			   memcmp(&fast, &before, sizeof(fast)) == 0);
	else
		FUZZ_CHECK(rcf == rc && needf == need &&
			   fast.known == r.known &&
			   memcmp(fast.r, r.r, sizeof(r.r)) == 0);
	FUZZ_CHECK(rc >= SP_STEP_OK && rc <= SP_STEP_BAD);
	if (rc != SP_STEP_OK)
		FUZZ_CHECK(memcmp(&r, &before, sizeof(r)) == 0);
	else
		FUZZ_CHECK((r.known & (1u << SP_REG_RIP | 1u << SP_REG_RSP)) ==
			   (1u << SP_REG_RIP | 1u << SP_REG_RSP) &&
			   !(r.known >> SP_NREGS));
	if (rc == SP_STEP_NOMEM)
		FUZZ_CHECK(need < m.base || need > m.base + 8 * m.n - 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t pcs[2 + 8 * 64 + 56 * 3];
	struct sp_eh eh;
	struct sp_cfi c;
	uintptr_t frame;
	uint8_t *buf;
	size_t hlen, len, n, i;

	if (size < 2)
		return 0;
	hlen = (size_t)fuzz_u64(data, 2);
	len = size - 2;
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 2, len);
	if (hlen > len)
		hlen = len;
	eh.hdr = (uintptr_t)buf;
	eh.hdr_end = (uintptr_t)buf + hlen;
	eh.seg_lo = (uintptr_t)buf;
	eh.seg_hi = (uintptr_t)buf + len;
	sp_eh_frame_ptr(eh.hdr, eh.hdr_end, &frame);
	n = table_pcs(buf, hlen, pcs, 8 * 64 + 56 * 3);
	pcs[n++] = (uint64_t)(uintptr_t)buf +
		   fuzz_u64(data, size < 8 ? size : 8);
	pcs[n++] = (uint64_t)(uintptr_t)buf -
		   (fuzz_u64(data, size < 3 ? size : 3) & 0xfffff);
	for (i = 0; i < n; i++) {
		if (sp_cfi_find(&eh, pcs[i], &c))
			continue;
		check_rule(&c, &c.cfa, true);
		for (size_t k = 0; k < SP_NREGS; k++)
			check_rule(&c, &c.reg[k], false);
		step(&c, pcs[i], data, size);
	}
	/* No CFI at all: nothing found, nothing read. */
	memset(&eh, 0, sizeof(eh));
	FUZZ_CHECK(sp_cfi_find(&eh, pcs[0], &c) == -1);
	free(buf);
	return 0;
}
