/*
 * cfi.c - libsymprof's reader of call frame information (.eh_frame,
 * found through .eh_frame_hdr) and its unwind step, both in memory and
 * free of I/O so that they can be fuzzed (tests/fuzz/fuzz-symprof-cfi.c).
 * The drain thread runs them; the signal handler never does.
 *
 * sp_cfi_find() binary-searches .eh_frame_hdr's table for the FDE of a
 * pc, runs its CIE's and its own CFA program up to the pc, and returns
 * the row: the CFA's rule and one rule per register (DWARF's 0-16, the
 * return address 16).  Expressions are kept (copied into the row's pool)
 * for sp_cfi_step() to evaluate: the PLT's CFA, the signal trampoline's
 * (__restore_rt: every register is read from the ucontext_t on the
 * stack), and the realigned frames of functions that keep the stack
 * 32-byte aligned (the CFA read through rbp).
 *
 * sp_cfi_step() applies a row to one frame's registers, reading memory
 * only from the stack copy it is given.  All registers are known at the
 * leaf (the handler copies the ucontext's); a normal step recovers the
 * callee-saved ones (rbx, rbp, r12-r15) and loses the others, as the ABI
 * has it; a signal frame's rules give them all back.  So a CFA in any
 * register is followed when that register is known (ld.so's lazy-binding
 * trampoline keeps it in rbx, a DRAP prologue in r10), and reported when
 * it is not, never guessed.
 *
 * Every read of the object's bytes is bounded: .eh_frame_hdr by its
 * PT_GNU_EH_FRAME segment, .eh_frame by the loaded segment that holds it
 * (struct sp_eh).  Corrupt bytes give -1 (no CFI) or a wrong rule, never
 * a read outside those bounds; sp_cfi_step() bounds what a wrong rule can
 * do (the copy, a step limit for expressions).
 */
#include <string.h>

#include "symprof.h"

/* ---- bounded readers --------------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_u(struct rd *r, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* The bits of a LEB128 number, and in *shift and *last how rd_sleb()
 * extends its sign; 0 (and r->bad) for a truncated or too long one. */
static uint64_t rd_leb(struct rd *r, unsigned *shift, uint8_t *last)
{
	uint64_t v = 0;
	uint8_t b;

	*shift = 0;
	do {
		if (r->bad || r->p >= r->end || *shift > 63) {
			r->bad = true;
			*last = 0;
			return 0;
		}
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
	} while (b & 0x80);
	*last = b;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	unsigned shift;
	uint8_t b;

	return rd_leb(r, &shift, &b);
}

static int64_t rd_sleb(struct rd *r)
{
	unsigned shift;
	uint8_t b;
	uint64_t v = rd_leb(r, &shift, &b);

	if (shift < 64 && (b & 0x40))
		v |= -((uint64_t)1 << shift);
	return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer: absolute, pc-relative or data-relative
 * (to @datarel), never indirect. */
static uint64_t rd_enc(struct rd *r, uint8_t enc, uint64_t datarel)
{
	uint64_t at = (uint64_t)(uintptr_t)r->p, v;

	if (enc == 0xff) {
		r->bad = true;
		return 0;
	}
	switch (enc & 0x0f) {
	case 0x00: v = rd_u(r, 8); break;
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_u(r, 2); break;
	case 0x03: v = rd_u(r, 4); break;
	case 0x04: v = rd_u(r, 8); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_u(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_u(r, 4); break;
	case 0x0c: v = rd_u(r, 8); break;
	default: r->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break;
	case 0x30: v += datarel; break;
	default: r->bad = true; return 0;
	}
	if (enc & 0x80)
		r->bad = true;
	return v;
}

int sp_eh_frame_ptr(uintptr_t hdr, uintptr_t hdr_end, uintptr_t *out)
{
	struct rd r = { (const uint8_t *)hdr, (const uint8_t *)hdr_end, false };
	uint8_t ver, enc;

	*out = 0;
	if (hdr_end < hdr || hdr_end - hdr < 8)
		return -1;
	ver = (uint8_t)rd_u(&r, 1);
	enc = (uint8_t)rd_u(&r, 1);
	rd_u(&r, 2);
	if (ver != 1)
		return -1;
	*out = (uintptr_t)rd_enc(&r, enc, hdr);
	return r.bad ? -1 : 0;
}

/* ---- CIE and FDE ------------------------------------------------------- */

/* The CIE fields an FDE needs. */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool z, signal;
	const uint8_t *insn, *insn_end;
};

/* The augmentation data of a 'z' CIE, @aug its string. */
static int parse_aug(struct rd *r, const uint8_t *aug, const uint8_t *end,
		     struct cie *c)
{
	uint64_t alen = rd_uleb(r);
	const uint8_t *adata = r->p, *a;

	if (r->bad || alen > (uint64_t)(end - adata))
		return -1;
	r->end = adata + alen;
	for (a = aug + 1; *a; a++) {
		if (*a == 'R') {
			c->fde_enc = (uint8_t)rd_u(r, 1);
		} else if (*a == 'P') {
			uint8_t penc = (uint8_t)rd_u(r, 1);

			rd_enc(r, penc & 0x7f, 0);
		} else if (*a == 'L') {
			rd_u(r, 1);
		} else if (*a == 'S') {
			c->signal = true;
		} else if (*a != 'B') {
			break;	/* unknown: the length lets us skip the rest */
		}
	}
	if (r->bad)
		return -1;
	r->p = adata + alen;
	r->end = end;
	return 0;
}

static int parse_cie(const uint8_t *p, const uint8_t *lo, const uint8_t *hi,
		     struct cie *c)
{
	struct rd r = { p, hi, false };
	uint64_t len;
	const uint8_t *end, *aug;
	uint8_t version;

	if (p < lo || p >= hi)
		return -1;
	len = rd_u(&r, 4);
	if (len == 0xffffffff)
		return -1;	/* 64-bit .eh_frame: not produced on x86-64 */
	if (r.bad || len == 0 || len > (uint64_t)(hi - r.p))
		return -1;
	end = r.p + len;
	r.end = end;
	if (rd_u(&r, 4) != 0)
		return -1;	/* not a CIE */
	version = (uint8_t)rd_u(&r, 1);
	if (version != 1 && version != 3)
		return -1;
	aug = r.p;
	while (r.p < end && *r.p)
		r.p++;
	if (r.p >= end)
		return -1;
	r.p++;
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = version == 1 ? rd_u(&r, 1) : rd_uleb(&r);
	c->fde_enc = 0;	/* absptr */
	c->z = aug[0] == 'z';
	c->signal = false;
	if (c->z) {
		if (parse_aug(&r, aug, end, c))
			return -1;
	} else if (aug[0]) {
		return -1;	/* an augmentation we cannot skip */
	}
	if (r.bad || c->code_align == 0)
		return -1;
	c->insn = r.p;
	c->insn_end = end;
	return 0;
}

/* ---- the CFA program ----------------------------------------------------- */

/* An offset operand times the CIE's data alignment, wrapping as the
 * unwind's address arithmetic does (corrupt operands must not overflow
 * a signed multiplication). */
static int64_t factored(uint64_t v, const struct cie *c)
{
	return (int64_t)(v * (uint64_t)c->data_align);
}

/* Callee-saved by the SysV ABI: rbx, rbp, r12-r15. */
#define CALLEE_SAVED ((1u << 3) | (1u << 6) | (1u << 12) | (1u << 13) | \
		      (1u << 14) | (1u << 15))

/* The rule of register @reg before any instruction: callee-saved ones
 * keep their value, rsp's is the CFA (the x86-64 convention), the others
 * are clobbered by the call (unknown, as is the return address until the
 * CIE says where it is). */
static struct sp_rule default_rule(unsigned reg)
{
	struct sp_rule x = { 0, SP_RULE_UNKNOWN, 0, 0, 0 };

	if (reg < 32 && (CALLEE_SAVED & (1u << reg)))
		x.kind = SP_RULE_SAME;
	else if (reg == SP_REG_RSP)
		x.kind = SP_RULE_VAL_OFFSET;
	return x;
}

/* Set register @reg's rule (nothing for registers we do not track); an
 * offset that does not fit makes the rule unknown. */
static void set_rule(struct sp_cfi *s, uint64_t reg, int kind, int64_t off)
{
	struct sp_rule *x;

	if (reg >= SP_NREGS)
		return;
	x = &s->reg[reg];
	x->kind = (uint8_t)(off == (int32_t)off ? kind : SP_RULE_UNKNOWN);
	x->off = (int32_t)off;
	x->reg = 0;
	x->at = x->len = 0;
}

/* Copy an expression block into the row's pool for rule @x (kind @kind;
 * unknown when it does not fit); false if it overruns the program. */
static bool take_expr(struct rd *r, struct sp_cfi *s, struct sp_rule *x,
		      int kind)
{
	uint64_t len = rd_uleb(r);

	if (r->bad || len > (uint64_t)(r->end - r->p))
		return false;
	if (x) {
		x->off = 0;
		x->reg = 0;
		x->at = x->len = 0;
		x->kind = SP_RULE_UNKNOWN;
		if (len <= (uint64_t)(SP_CFI_POOL - s->npool)) {
			memcpy(s->pool + s->npool, r->p, len);
			x->kind = (uint8_t)kind;
			x->at = s->npool;
			x->len = (uint8_t)len;
			s->npool += (uint8_t)len;
		}
	}
	r->p += len;
	return true;
}

/* DW_CFA_restore(_extended) of register @reg: its rule after the CIE
 * (@init; in the CIE itself, the default).  The CIE's expressions are at
 * the same place in every row's pool: a row starts as a copy of @init. */
static void restore_rule(struct sp_cfi *s, uint64_t reg,
			 const struct sp_cfi *init)
{
	if (reg >= SP_NREGS)
		return;
	s->reg[reg] = init ? init->reg[reg] : default_rule((unsigned)reg);
}

/* Is @op an advance_loc (its distance in bytes into *delta)? */
static bool advance_op(uint8_t op, struct rd *r, const struct cie *c,
		       uint64_t *delta)
{
	switch (op) {
	case 0x02:	/* advance_loc1 */
		*delta = rd_u(r, 1) * c->code_align;
		return true;
	case 0x03:	/* advance_loc2 */
		*delta = rd_u(r, 2) * c->code_align;
		return true;
	case 0x04:	/* advance_loc4 */
		*delta = rd_u(r, 4) * c->code_align;
		return true;
	default:
		if (op >> 6 != 1)
			return false;
		*delta = (op & 0x3f) * c->code_align;
		return true;
	}
}

/* The CFA rules: def_cfa and its variants, def_cfa_expression.  Returns
 * 1 when @op is not one of them, -1 on an overrun. */
static int cfa_op(uint8_t op, struct rd *r, const struct cie *c,
		  struct sp_cfi *s)
{
	struct sp_rule *x = &s->cfa;
	int64_t off = x->off;

	switch (op) {
	case 0x0c:	/* def_cfa */
		x->reg = (uint8_t)rd_uleb(r);
		off = (int64_t)rd_uleb(r);
		break;
	case 0x12:	/* def_cfa_sf */
		x->reg = (uint8_t)rd_uleb(r);
		off = factored((uint64_t)rd_sleb(r), c);
		break;
	case 0x0d:	/* def_cfa_register */
		x->reg = (uint8_t)rd_uleb(r);
		break;
	case 0x0e:	/* def_cfa_offset */
		off = (int64_t)rd_uleb(r);
		break;
	case 0x13:	/* def_cfa_offset_sf */
		off = factored((uint64_t)rd_sleb(r), c);
		break;
	case 0x0f:	/* def_cfa_expression */
		return take_expr(r, s, x, SP_RULE_EXPR) ? 0 : -1;
	default:
		return 1;
	}
	/* A register rule from now on (def_cfa_offset keeps the register,
	 * as the standard has it, or none yet). */
	if (op != 0x0e && op != 0x13)
		x->kind = SP_RULE_REG;
	else if (x->kind == SP_RULE_EXPR)
		x->kind = SP_RULE_UNKNOWN;
	if (off != (int32_t)off)
		x->kind = SP_RULE_UNKNOWN;
	x->off = (int32_t)off;
	x->at = x->len = 0;
	return 0;
}

/*
 * Run one of the rule instructions of opcode @op below 0x40 (neither an
 * advance, set_loc nor the state stack's).  Returns -1 on one we do not
 * know (its operands' length is unknown: the program cannot go on).
 */
static int rule_op(uint8_t op, struct rd *r, const struct cie *c,
		   struct sp_cfi *s, const struct sp_cfi *init)
{
	uint64_t reg, reg2;
	int rc = cfa_op(op, r, c, s);

	if (rc <= 0)
		return rc;
	switch (op) {
	case 0x00:	/* nop */
		break;
	case 0x05:	/* offset_extended */
		reg = rd_uleb(r);
		set_rule(s, reg, SP_RULE_OFFSET, factored(rd_uleb(r), c));
		break;
	case 0x11:	/* offset_extended_sf */
		reg = rd_uleb(r);
		set_rule(s, reg, SP_RULE_OFFSET,
			 factored((uint64_t)rd_sleb(r), c));
		break;
	case 0x2f:	/* GNU_negative_offset_extended */
		reg = rd_uleb(r);
		set_rule(s, reg, SP_RULE_OFFSET, factored(-rd_uleb(r), c));
		break;
	case 0x14:	/* val_offset */
		reg = rd_uleb(r);
		set_rule(s, reg, SP_RULE_VAL_OFFSET, factored(rd_uleb(r), c));
		break;
	case 0x15:	/* val_offset_sf */
		reg = rd_uleb(r);
		set_rule(s, reg, SP_RULE_VAL_OFFSET,
			 factored((uint64_t)rd_sleb(r), c));
		break;
	case 0x06:	/* restore_extended */
		restore_rule(s, rd_uleb(r), init);
		break;
	case 0x07:	/* undefined */
		set_rule(s, rd_uleb(r), SP_RULE_UNDEF, 0);
		break;
	case 0x08:	/* same_value */
		set_rule(s, rd_uleb(r), SP_RULE_SAME, 0);
		break;
	case 0x09:	/* register */
		reg = rd_uleb(r);
		reg2 = rd_uleb(r);
		set_rule(s, reg, reg2 < SP_NREGS ? SP_RULE_REG
						 : SP_RULE_UNKNOWN, 0);
		if (reg < SP_NREGS)
			s->reg[reg].reg = (uint8_t)(reg2 < SP_NREGS ? reg2 : 0);
		break;
	case 0x10:	/* expression */
	case 0x16:	/* val_expression */
		reg = rd_uleb(r);
		if (!take_expr(r, s, r->bad || reg >= SP_NREGS ? NULL
							       : &s->reg[reg],
			       op == 0x10 ? SP_RULE_EXPR : SP_RULE_VAL_EXPR))
			return -1;
		break;
	case 0x2e:	/* GNU_args_size */
		rd_uleb(r);
		break;
	default:
		return -1;
	}
	return r->bad ? -1 : 0;
}

/* Run CFA instructions until the location passes @pc.  @init is the
 * state after the CIE (for DW_CFA_restore; NULL while running the CIE);
 * returns -1 on what we do not follow. */
static int run_cfa(const uint8_t *p, const uint8_t *end, const struct cie *c,
		   uint64_t loc, uint64_t pc, struct sp_cfi *s,
		   const struct sp_cfi *init)
{
	struct rd r = { p, end, false };
	struct sp_cfi stack[8];
	int depth = 0;

	while (r.p < r.end && !r.bad) {
		uint8_t op = (uint8_t)rd_u(&r, 1);
		uint64_t delta;

		if (op >> 6 == 2) {		/* offset */
			set_rule(s, op & 0x3f, SP_RULE_OFFSET,
				 factored(rd_uleb(&r), c));
			continue;
		}
		if (op >> 6 == 3) {		/* restore */
			restore_rule(s, op & 0x3f, init);
			continue;
		}
		if (advance_op(op, &r, c, &delta)) {
			if (r.bad || loc + delta > pc || loc + delta < loc)
				return r.bad ? -1 : 0;
			loc += delta;
			continue;
		}
		switch (op) {
		case 0x01:	/* set_loc */
			loc = rd_enc(&r, c->fde_enc, 0);
			if (!r.bad && loc > pc)
				return 0;
			break;
		case 0x0a:	/* remember_state */
			if (depth == 8)
				return -1;
			stack[depth++] = *s;
			break;
		case 0x0b:	/* restore_state */
			if (depth == 0)
				return -1;
			*s = stack[--depth];
			break;
		default:
			if (rule_op(op, &r, c, s, init))
				return -1;
			break;
		}
	}
	return r.bad ? -1 : 0;
}

/* ---- the lookup ---------------------------------------------------------- */

/* The FDE .eh_frame_hdr's sorted table gives for @pc: the last entry
 * whose initial location is <= pc.  0 when none. */
static uint64_t hdr_lookup(const struct sp_eh *eh, uint64_t pc)
{
	const uint8_t *hdr = (const uint8_t *)eh->hdr;
	struct rd r = { hdr, (const uint8_t *)eh->hdr_end, false };
	uint64_t count, lo, hi;
	const uint8_t *tab;
	uint8_t ver, fp_enc, cnt_enc, tab_enc;

	if (!eh->hdr || eh->hdr_end < eh->hdr || eh->hdr_end - eh->hdr < 8)
		return 0;
	ver = (uint8_t)rd_u(&r, 1);
	fp_enc = (uint8_t)rd_u(&r, 1);
	cnt_enc = (uint8_t)rd_u(&r, 1);
	tab_enc = (uint8_t)rd_u(&r, 1);
	if (ver != 1 || tab_enc != 0x3b)
		return 0;	/* no sorted table we can search */
	rd_enc(&r, fp_enc, (uint64_t)eh->hdr);
	count = rd_enc(&r, cnt_enc, (uint64_t)eh->hdr);
	if (r.bad || count == 0 || count > (uint64_t)(r.end - r.p) / 8)
		return 0;
	tab = r.p;
	lo = 0;
	hi = count;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct rd e = { tab + mid * 8, tab + mid * 8 + 4, false };
		int64_t loc = (int32_t)rd_u(&e, 4);

		if ((uint64_t)eh->hdr + (uint64_t)loc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	r.p = tab + (lo - 1) * 8 + 4;
	r.end = r.p + 4;
	return (uint64_t)eh->hdr + (uint64_t)(int64_t)(int32_t)rd_u(&r, 4);
}

int sp_cfi_find(const struct sp_eh *eh, uint64_t pc, struct sp_cfi *out)
{
	struct rd r;
	struct cie cie;
	struct sp_cfi init, s;
	uint64_t fde = hdr_lookup(eh, pc), fde_len, cie_off;
	uint64_t pc_begin, pc_range;
	const uint8_t *fde_end, *seg_lo, *seg_hi;

	/* Bound every read by the loaded segment holding .eh_frame. */
	if (!fde || !eh->seg_lo || eh->seg_hi <= eh->seg_lo ||
	    fde < eh->seg_lo || fde >= eh->seg_hi)
		return -1;
	seg_lo = (const uint8_t *)eh->seg_lo;
	seg_hi = (const uint8_t *)eh->seg_hi;
	r.p = (const uint8_t *)fde;
	r.end = seg_hi;
	r.bad = false;
	fde_len = rd_u(&r, 4);
	if (r.bad || fde_len == 0 || fde_len == 0xffffffff ||
	    fde_len > (uint64_t)(seg_hi - r.p))
		return -1;
	fde_end = r.p + fde_len;
	r.end = fde_end;
	cie_off = rd_u(&r, 4);
	if (r.bad || cie_off == 0 ||
	    cie_off > (uint64_t)(r.p - 4 - seg_lo))
		return -1;
	if (parse_cie(r.p - 4 - cie_off, seg_lo, seg_hi, &cie))
		return -1;
	pc_begin = rd_enc(&r, cie.fde_enc, 0);
	pc_range = rd_enc(&r, cie.fde_enc & 0x0f, 0);
	if (r.bad || pc < pc_begin || pc - pc_begin >= pc_range)
		return -1;
	if (cie.z) {
		uint64_t alen = rd_uleb(&r);

		if (r.bad || alen > (uint64_t)(fde_end - r.p))
			return -1;
		r.p += alen;
	}
	if (cie.ra_reg != SP_REG_RIP)
		return -1;	/* not x86-64's */
	memset(&s, 0, sizeof(s));
	for (unsigned i = 0; i < SP_NREGS; i++)
		s.reg[i] = default_rule(i);
	if (run_cfa(cie.insn, cie.insn_end, &cie, 0, UINT64_MAX, &s, NULL))
		return -1;
	init = s;
	if (run_cfa(r.p, fde_end, &cie, pc_begin, pc, &s, &init))
		return -1;
	s.signal = cie.signal;
	*out = s;
	return 0;
}

/* ---- one unwind step -------------------------------------------------- */

/* Read @n (1 to 8) bytes at @addr from the copy. */
static inline __attribute__((always_inline)) int mem_read(const struct sp_stack_copy *m, uint64_t addr, unsigned n,
		    uint64_t *out, uint64_t *need)
{
	uint64_t v = 0;

	if (addr < m->base || addr - m->base > (uint64_t)m->n * 8 ||
	    (uint64_t)m->n * 8 - (addr - m->base) < n) {
		*need = addr;
		return SP_STEP_NOMEM;
	}
	memcpy(&v, (const uint8_t *)m->words + (addr - m->base), n);
	*out = v;
	return 0;
}

/* Register @reg's value for DW_OP_breg and register rules, when known. */
static inline bool reg_value(const struct sp_regs *r, unsigned reg, uint64_t *out)
{
	if (reg >= SP_NREGS || !(r->known & (1u << reg)))
		return false;
	*out = r->r[reg];
	return true;
}

/* Binary and comparison operators of the expression machine (DW_OP_and
 * to DW_OP_ne, but the unary and stack ones); false if @op is none. */
static bool binop(uint8_t op, uint64_t a, uint64_t b, uint64_t *out)
{
	switch (op) {
	case 0x1a: *out = a & b; break;				/* and */
	case 0x1c: *out = a - b; break;				/* minus */
	case 0x1e: *out = a * b; break;				/* mul */
	case 0x21: *out = a | b; break;				/* or */
	case 0x22: *out = a + b; break;				/* plus */
	case 0x24: *out = b < 64 ? a << b : 0; break;		/* shl */
	case 0x25: *out = b < 64 ? a >> b : 0; break;		/* shr */
	case 0x26: *out = (uint64_t)((int64_t)a >> (b < 64 ? b : 63));
		break;						/* shra */
	case 0x27: *out = a ^ b; break;				/* xor */
	case 0x29: *out = a == b; break;			/* eq */
	case 0x2a: *out = (int64_t)a >= (int64_t)b; break;	/* ge */
	case 0x2b: *out = (int64_t)a > (int64_t)b; break;	/* gt */
	case 0x2c: *out = (int64_t)a <= (int64_t)b; break;	/* le */
	case 0x2d: *out = (int64_t)a < (int64_t)b; break;	/* lt */
	case 0x2e: *out = a != b; break;			/* ne */
	default: return false;
	}
	return true;
}

#define EXPR_STACK 16

/* Push or change the stack of the expression machine for one operation
 * that reads no memory; false on one we do not run. */
static bool expr_op(uint8_t op, struct rd *r, const struct sp_regs *regs,
		    uint64_t *st, int *n)
{
	uint64_t a;

	if (op >= 0x30 && op <= 0x4f) {				/* litN */
		st[(*n)++] = op - 0x30;
	} else if (op >= 0x70 && op <= 0x8f) {			/* bregN */
		if (!reg_value(regs, op - 0x70, &a))
			return false;
		st[(*n)++] = a + (uint64_t)rd_sleb(r);
	} else if (op == 0x08 || op == 0x0a || op == 0x0c || op == 0x0e) {
		st[(*n)++] = rd_u(r, op == 0x08 ? 1 : op == 0x0a ? 2	/* constNu */
				     : op == 0x0c ? 4 : 8);
	} else if (op == 0x09) {				/* const1s */
		st[(*n)++] = (uint64_t)(int64_t)(int8_t)rd_u(r, 1);
	} else if (op == 0x10) {				/* constu */
		st[(*n)++] = rd_uleb(r);
	} else if (op == 0x11) {				/* consts */
		st[(*n)++] = (uint64_t)rd_sleb(r);
	} else if (op == 0x12 && *n >= 1) {			/* dup */
		st[*n] = st[*n - 1];
		(*n)++;
	} else if (op == 0x13 && *n >= 1) {			/* drop */
		(*n)--;
	} else if (op == 0x16 && *n >= 2) {			/* swap */
		a = st[*n - 1];
		st[*n - 1] = st[*n - 2];
		st[*n - 2] = a;
	} else if (op == 0x23 && *n >= 1) {			/* plus_uconst */
		st[*n - 1] += rd_uleb(r);
	} else if (op == 0x1f && *n >= 1) {			/* neg */
		st[*n - 1] = -st[*n - 1];
	} else if (op == 0x20 && *n >= 1) {			/* not */
		st[*n - 1] = ~st[*n - 1];
	} else if (*n >= 2 && binop(op, st[*n - 2], st[*n - 1], &a)) {
		st[*n - 2] = a;
		(*n)--;
	} else {
		return false;
	}
	return !r->bad;
}

/*
 * Evaluate the expression of rule @x in row @c (no branches: straight-line
 * code only, which is all the x86-64 CFI of gcc, clang and glibc uses).
 * @push: the CFA to push first (register rules), or none (the CFA's own).
 */
static int eval(const struct sp_cfi *c, const struct sp_rule *x,
		const struct sp_regs *regs, const uint64_t *push,
		const struct sp_stack_copy *m, uint64_t *out, uint64_t *need)
{
	struct rd r;
	uint64_t st[EXPR_STACK];
	int n = 0, rc;

	if ((unsigned)x->at + x->len > SP_CFI_POOL)
		return SP_STEP_BAD;
	r.p = c->pool + x->at;
	r.end = r.p + x->len;
	r.bad = false;
	if (push)
		st[n++] = *push;
	while (r.p < r.end) {
		uint8_t op = (uint8_t)rd_u(&r, 1);

		if (n >= EXPR_STACK)
			return SP_STEP_BAD;
		if ((op == 0x06 || op == 0x94) && n >= 1) {	/* deref */
			unsigned sz = op == 0x06 ? 8 : (unsigned)rd_u(&r, 1);

			if (r.bad || sz < 1 || sz > 8)
				return SP_STEP_BAD;
			rc = mem_read(m, st[n - 1], sz, &st[n - 1], need);
			if (rc)
				return rc;
		} else if (!expr_op(op, &r, regs, st, &n)) {
			return SP_STEP_BAD;
		}
	}
	if (n < 1)
		return SP_STEP_BAD;
	*out = st[n - 1];
	return 0;
}

/* The caller's value of register @reg under its rule in @c, the CFA
 * being @cfa. */
static int reg_rule(const struct sp_cfi *c, unsigned reg,
		    const struct sp_regs *regs, uint64_t cfa,
		    const struct sp_stack_copy *m, uint64_t *out,
		    uint64_t *need)
{
	const struct sp_rule *x = &c->reg[reg];
	uint64_t addr;
	int rc;

	switch (x->kind) {
	case SP_RULE_SAME:
		return reg_value(regs, reg, out) ? 0 : SP_STEP_BAD;
	case SP_RULE_REG:
		return reg_value(regs, x->reg, out) ? 0 : SP_STEP_BAD;
	case SP_RULE_OFFSET:
		return mem_read(m, cfa + (uint64_t)(int64_t)x->off, 8, out,
				need);
	case SP_RULE_VAL_OFFSET:
		*out = cfa + (uint64_t)(int64_t)x->off;
		return 0;
	case SP_RULE_EXPR:
		rc = eval(c, x, regs, &cfa, m, &addr, need);
		return rc ? rc : mem_read(m, addr, 8, out, need);
	case SP_RULE_VAL_EXPR:
		return eval(c, x, regs, &cfa, m, out, need);
	case SP_RULE_UNDEF:
		return SP_STEP_OUTERMOST;
	default:
		return SP_STEP_BAD;
	}
}

int sp_cfi_step(const struct sp_cfi *c, const struct sp_stack_copy *m,
		struct sp_regs *r, uint64_t *need)
{
	struct sp_regs out;
	uint64_t cfa, v, ignore;
	unsigned i;
	int rc;

	*need = 0;
	if (c->reg[SP_REG_RIP].kind == SP_RULE_UNDEF)
		return SP_STEP_OUTERMOST;
	if (c->cfa.kind == SP_RULE_REG) {
		if (!reg_value(r, c->cfa.reg, &cfa))
			return SP_STEP_BAD;
		cfa += (uint64_t)(int64_t)c->cfa.off;
	} else if (c->cfa.kind == SP_RULE_EXPR) {
		rc = eval(c, &c->cfa, r, NULL, m, &cfa, need);
		if (rc)
			return rc;
	} else {
		return SP_STEP_BAD;
	}
	rc = reg_rule(c, SP_REG_RIP, r, cfa, m, &out.r[SP_REG_RIP], need);
	if (rc)
		return rc;
	/* The caller's rsp is the CFA: that is what the CFA is on x86-64
	 * (a signal frame's rule for rsp gives the same value). */
	out.r[SP_REG_RSP] = cfa;
	out.known = 1u << SP_REG_RIP | 1u << SP_REG_RSP;
	for (i = 0; i < SP_REG_RIP; i++) {
		if (i == SP_REG_RSP)
			continue;
		if (reg_rule(c, i, r, cfa, m, &v, &ignore) == 0) {
			out.r[i] = v;
			out.known |= 1u << i;
		} else {
			out.r[i] = 0;
		}
	}
	*r = out;
	return SP_STEP_OK;
}

/* ---- the compiled step -------------------------------------------------- */

/* Rule @x of a register other than rsp into @out: false when the step
 * must use the row (an expression), true otherwise, with out->kind 0
 * for a rule that gives no value (unknown, undefined, a register out of
 * range). */
static bool fast_rule(const struct sp_rule *x, unsigned reg,
		      struct sp_fast_rule *out)
{
	memset(out, 0, sizeof(*out));
	out->reg = (uint8_t)reg;
	switch (x->kind) {
	case SP_RULE_REG:
		if (x->reg >= SP_NREGS)
			return true;
		out->src = x->reg;
		/* fall through */
	case SP_RULE_OFFSET:
	case SP_RULE_VAL_OFFSET:
		out->kind = x->kind;
		out->off = x->off;
		return true;
	case SP_RULE_SAME:
		out->kind = SP_RULE_SAME;
		return true;
	case SP_RULE_EXPR:
	case SP_RULE_VAL_EXPR:
		return false;
	default:
		return true;
	}
}

void sp_cfi_compile(const struct sp_cfi *c, struct sp_cfi_fast *f)
{
	struct sp_fast_rule x;
	unsigned i;

	memset(f, 0, sizeof(*f));
	f->signal = c->signal;
	if (c->reg[SP_REG_RIP].kind == SP_RULE_UNDEF) {
		f->kind = SP_FAST_OUTERMOST;
		return;
	}
	if (c->cfa.kind == SP_RULE_EXPR)
		return;				/* SP_FAST_FULL */
	if (c->cfa.kind != SP_RULE_REG || c->cfa.reg >= SP_NREGS) {
		f->kind = SP_FAST_BAD;
		return;
	}
	f->cfa_reg = c->cfa.reg;
	f->cfa_off = c->cfa.off;
	if (!fast_rule(&c->reg[SP_REG_RIP], SP_REG_RIP, &f->ra))
		return;
	if (f->ra.kind == 0) {
		f->kind = SP_FAST_BAD;
		return;
	}
	for (i = 0; i < SP_REG_RIP; i++) {
		if (i == SP_REG_RSP)
			continue;
		if (!fast_rule(&c->reg[i], i, &x))
			return;
		if (x.kind == SP_RULE_SAME) {
			f->same |= 1u << i;
		} else if (x.kind) {
			if (f->n == SP_FAST_MAX)
				return;
			f->rule[f->n++] = x;
		}
	}
	/* Saved-on-the-stack rules first: the step reads them in a loop of
	 * their own.  The order is free: every rule reads the frame's
	 * registers and memory, none the caller's. */
	for (i = 0; i < f->n; i++)
		if (f->rule[i].kind == SP_RULE_OFFSET) {
			x = f->rule[f->noff];
			f->rule[f->noff++] = f->rule[i];
			f->rule[i] = x;
		}
	f->kind = SP_FAST_STEP;
}

/* The caller's value under compiled rule @x (inlined: the fast step is
 * a few loads). */
static inline __attribute__((always_inline)) int fast_value(const struct sp_fast_rule *x, const struct sp_regs *r,
		      uint64_t cfa, const struct sp_stack_copy *m,
		      uint64_t *out, uint64_t *need)
{
	switch (x->kind) {
	case SP_RULE_OFFSET:
		return mem_read(m, cfa + (uint64_t)(int64_t)x->off, 8, out,
				need);
	case SP_RULE_VAL_OFFSET:
		*out = cfa + (uint64_t)(int64_t)x->off;
		return 0;
	case SP_RULE_REG:
		return reg_value(r, x->src, out) ? 0 : SP_STEP_BAD;
	default:
		return reg_value(r, x->reg, out) ? 0 : SP_STEP_BAD;
	}
}

/* ---- the trace of an unwind's inputs (the unwind memo, unwmemo.c) ---- */

void sp_trace_begin(struct sp_trace *t, const struct sp_regs *r)
{
	/* sp and pc are the memo's key, not inputs to record. */
	uint32_t leaf = r->known & ~(1u << SP_REG_RSP | 1u << SP_REG_RIP);

	for (unsigned i = 0; i < SP_NREGS; i++)
		t->prov[i] = (leaf >> i & 1) ? SP_PROV_LEAF | i : 0;
	t->used = 0;
	t->lo = 0;
	t->hi = UINT32_MAX;
	t->nread = 0;
	t->over = false;
}

/* The read at byte @at of the copy: inside it, an input with its value;
 * outside, a bound on the copy's length.  Beyond SP_STACK_MAX it is
 * outside every copy, and not an input. */
static void read_at(struct sp_trace *t, const struct sp_stack_copy *m,
		    uint64_t at)
{
	uint64_t bytes = (uint64_t)m->n * 8;

	if (at > SP_STACK_MAX - 8)
		return;
	if (at + 8 > bytes) {
		if (at + 8 < t->hi)
			t->hi = (uint32_t)(at + 8);
		return;
	}
	if (t->nread == SP_MEMO_READS) {
		t->over = true;
		return;
	}
	t->at[t->nread] = (uint16_t)at;
	memcpy(&t->val[t->nread], (const uint8_t *)m->words + at, 8);
	t->nread++;
	if (at + 8 > t->lo)
		t->lo = (uint32_t)(at + 8);
}

void sp_trace_read(struct sp_trace *t, const struct sp_stack_copy *m,
		   uint64_t addr)
{
	read_at(t, m, addr - m->base);
}

void sp_trace_use(struct sp_trace *t, const struct sp_stack_copy *m,
		  unsigned reg)
{
	uint32_t p;

	if (reg >= SP_NREGS)
		return;
	p = t->prov[reg];
	if (p & SP_PROV_MEM)
		read_at(t, m, p & ~SP_PROV_MEM);
	else if (p & SP_PROV_LEAF)
		t->used |= 1u << (p & 31);
	t->prov[reg] = 0;		/* now from recorded inputs */
}

/* The inputs compiled rule @x reads for the return address, now (the
 * value is used at once): a word of the copy or a register. */
static void trace_ra(struct sp_trace *t, const struct sp_fast_rule *x,
		     uint64_t cfa, const struct sp_stack_copy *m)
{
	switch (x->kind) {
	case SP_RULE_OFFSET:
		sp_trace_read(t, m, cfa + (uint64_t)(int64_t)x->off);
		break;
	case SP_RULE_VAL_OFFSET:
		break;
	case SP_RULE_REG:
		sp_trace_use(t, m, x->src);
		break;
	default:
		sp_trace_use(t, m, x->reg);
	}
}

/* Where the caller's registers come from after step @f (@t->prov is the
 * callee's): a "same" register keeps its origin, a register saved in
 * the copy comes from its word (an input only if a later step reads
 * it), a copy rule takes its source's origin; the rest (sp, the return
 * address, CFA-relative values, unknown) come from recorded inputs. */
static void trace_step(struct sp_trace *t, const struct sp_cfi_fast *f,
		       uint64_t cfa, const struct sp_stack_copy *m)
{
	uint32_t np[SP_NREGS] = { 0 }, same = f->same;
	unsigned i;

	while (same) {
		i = (unsigned)__builtin_ctz(same);
		same &= same - 1;
		np[i] = t->prov[i];
	}
	for (i = 0; i < f->noff; i++) {
		const struct sp_fast_rule *x = &f->rule[i];
		uint64_t at = cfa + (uint64_t)(int64_t)x->off - m->base;

		/* Beyond SP_STACK_MAX: outside every copy, unknown. */
		np[x->reg] = at <= SP_STACK_MAX - 8 ? SP_PROV_MEM | (uint32_t)at
						    : 0;
	}
	for (; i < f->n; i++) {
		const struct sp_fast_rule *x = &f->rule[i];

		if (x->kind == SP_RULE_VAL_OFFSET)
			np[x->reg] = 0;
		else if (x->kind == SP_RULE_REG)
			np[x->reg] = x->src < SP_NREGS ? t->prov[x->src] : 0;
		else
			np[x->reg] = t->prov[x->reg];
	}
	memcpy(t->prov, np, sizeof(np));
}

/* The step; @t (NULL: not traced) records its inputs.  Inlined into the
 * two entry points, so that the untraced one has no test of @t. */
static inline __attribute__((always_inline)) int
step_fast(const struct sp_cfi_fast *f, const struct sp_stack_copy *m,
	  struct sp_regs *r, uint64_t *need, struct sp_trace *t)
{
	struct sp_regs out;
	uint64_t cfa, ignore, last;
	uint32_t same;
	unsigned i;
	int rc;

	*need = 0;
	if (f->kind == SP_FAST_OUTERMOST)
		return SP_STEP_OUTERMOST;
	if (f->kind != SP_FAST_STEP)
		return SP_STEP_BAD;
	if (t)
		sp_trace_use(t, m, f->cfa_reg);
	if (!(r->known & (1u << f->cfa_reg)))
		return SP_STEP_BAD;
	cfa = r->r[f->cfa_reg] + (uint64_t)(int64_t)f->cfa_off;
	if (t)
		trace_ra(t, &f->ra, cfa, m);
	rc = fast_value(&f->ra, r, cfa, m, &out.r[SP_REG_RIP], need);
	if (rc)
		return rc;
	if (t)
		trace_step(t, f, cfa, m);
	memset(out.r, 0, sizeof(out.r) - sizeof(out.r[0]));
	out.r[SP_REG_RSP] = cfa;
	out.known = 1u << SP_REG_RIP | 1u << SP_REG_RSP;
	same = f->same & r->known;
	out.known |= same;
	while (same) {
		i = (unsigned)__builtin_ctz(same);
		same &= same - 1;
		out.r[i] = r->r[i];
	}
	/* Saved at CFA + off: mem_read()'s bounds as one comparison (an
	 * address below the copy wraps above @last). */
	last = m->n ? (uint64_t)m->n * 8 - 8 : 0;
	for (i = 0; i < f->noff; i++) {
		const struct sp_fast_rule *x = &f->rule[i];
		uint64_t at = cfa + (uint64_t)(int64_t)x->off - m->base;

		if (m->n && at <= last) {
			memcpy(&out.r[x->reg], (const uint8_t *)m->words + at,
			       8);
			out.known |= 1u << x->reg;
		}
	}
	for (; i < f->n; i++) {
		const struct sp_fast_rule *x = &f->rule[i];

		if (fast_value(x, r, cfa, m, &out.r[x->reg], &ignore) == 0)
			out.known |= 1u << x->reg;
		else
			out.r[x->reg] = 0;
	}
	*r = out;
	return SP_STEP_OK;
}

int sp_cfi_step_fast(const struct sp_cfi_fast *f,
		     const struct sp_stack_copy *m, struct sp_regs *r,
		     uint64_t *need)
{
	return step_fast(f, m, r, need, NULL);
}

int sp_cfi_step_fast_traced(const struct sp_cfi_fast *f,
			    const struct sp_stack_copy *m, struct sp_regs *r,
			    uint64_t *need, struct sp_trace *t)
{
	return step_fast(f, m, r, need, t);
}
