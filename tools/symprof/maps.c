/*
 * maps.c - libsymprof's mapping table: the executable segments of the
 * loaded objects, found with dl_iterate_phdr() on the drain thread (never
 * in the signal handler), with each object's GNU build ID read from its
 * PT_NOTE segments in memory and the ELF address conversion taken from
 * its program headers; plus the one-step CFI lookup (.eh_frame through
 * PT_GNU_EH_FRAME) that lets the drain thread recover the caller of a
 * leaf function that has no frame.
 *
 * No libelf: everything comes from the program headers and sections the
 * dynamic loader mapped.  All reads of an object's memory are bounded by
 * the segment they belong to, and happen under sp_drain_lock, which
 * dlclose() holds while it unmaps (symprof.c), so the object cannot go
 * away underneath.
 *
 * Address conversion (docs/raw-format.md, PRODUCT.md): a segment mapped
 * at runtime START with file offset PGOFF has ELF vaddr VADDR at START
 * (all page-aligned), so vaddr(pc) = pc - START + VADDR = pc - load bias.
 *
 * Map ids are stable for the life of the process: an object loaded again
 * (at another address) gets a new id; an unloaded one keeps its line in
 * the file, so that earlier stacks still resolve.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "symprof.h"

#define SP_MAX_MAPS 65536

static struct sp_map **all;		/* every map ever seen, by id */
static size_t nall, capall;
static const struct sp_map **live;	/* live maps sorted by start */
static size_t nlive, caplive;
static char exe_path[PATH_MAX];

size_t sp_maps_count(void)
{
	return nall;
}

const struct sp_map *sp_maps_get(size_t i)
{
	return i < nall ? all[i] : NULL;
}

void sp_maps_reset(void)
{
	all = NULL;
	live = NULL;
	nall = capall = nlive = caplive = 0;
}

const struct sp_map *sp_maps_find(uint64_t pc)
{
	size_t lo = 0, hi = nlive;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc < live[mid]->start)
			hi = mid;
		else if (pc >= live[mid]->end)
			lo = mid + 1;
		else
			return live[mid];
	}
	return NULL;
}

static void hex(char *out, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = 0;
}

/* Is [vaddr, vaddr + size) inside a readable PT_LOAD, so mapped? */
static bool loaded(const struct dl_phdr_info *info, uint64_t vaddr,
		   uint64_t size)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) &&
		    vaddr >= ph->p_vaddr && size <= ph->p_filesz &&
		    vaddr - ph->p_vaddr <= ph->p_filesz - size)
			return true;
	}
	return false;
}

/* The NT_GNU_BUILD_ID note of a loaded object, from its PT_NOTE
 * segments in memory (only those a PT_LOAD maps). */
static void build_id(const struct dl_phdr_info *info, char *out)
{
	int i;

	out[0] = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;
		size_t align = ph->p_align == 8 ? 8 : 4;

		if (ph->p_type != PT_NOTE || ph->p_memsz > (1u << 20) ||
		    !loaded(info, ph->p_vaddr, ph->p_memsz))
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *nh = (const void *)p;
			size_t nsz = (nh->n_namesz + align - 1) & ~(align - 1);
			size_t dsz = (nh->n_descsz + align - 1) & ~(align - 1);
			const unsigned char *name = p + sizeof(*nh);

			if (nsz > (size_t)(end - name) ||
			    dsz > (size_t)(end - name) - nsz)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID &&
			    nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
			    nh->n_descsz >= 2 && nh->n_descsz <= 64) {
				hex(out, name + nsz, nh->n_descsz);
				return;
			}
			p = name + nsz + dsz;
		}
	}
}

static uint64_t rd_enc_at(const uint8_t *p, const uint8_t *end, uint8_t enc,
			  uint64_t datarel, bool *bad);

/* The PT_LOAD segment that holds the .eh_frame named by the
 * .eh_frame_hdr at [eh, eh_end). */
static void eh_segment(const struct dl_phdr_info *info, uintptr_t eh,
		       uintptr_t eh_end, uintptr_t *lo, uintptr_t *hi)
{
	const uint8_t *p = (const uint8_t *)eh;
	uint64_t frame;
	bool bad = false;
	int i;

	*lo = *hi = 0;
	if (eh_end - eh < 8 || p[0] != 1)
		return;
	frame = rd_enc_at(p + 4, (const uint8_t *)eh_end, p[1], eh, &bad);
	if (bad)
		return;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) &&
		    frame >= s && frame < s + ph->p_filesz) {
			*lo = s;
			*hi = s + ph->p_filesz;
			return;
		}
	}
}

struct refresh_ctx {
	unsigned long vdso;
	int index;
	int err;
};

static struct sp_map *find_existing(uint64_t start, uint64_t end,
				    uint64_t bias, const char *path)
{
	size_t i;

	for (i = 0; i < nall; i++) {
		struct sp_map *m = all[i];

		if (m->start == start && m->end == end && m->bias == bias &&
		    strcmp(m->path, path) == 0)
			return m;
	}
	return NULL;
}

static int add_map(struct sp_map *m)
{
	if (nall == capall) {
		size_t ncap = capall ? capall * 2 : 64;
		struct sp_map **na;

		if (ncap > SP_MAX_MAPS)
			return -E2BIG;
		na = sp_arena_alloc(ncap * sizeof(*na));
		if (!na)
			return -ENOMEM;
		if (nall)
			memcpy(na, all, nall * sizeof(*na));
		all = na;
		capall = ncap;
	}
	m->id = (uint32_t)nall;
	all[nall++] = m;
	return 0;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct refresh_ctx *ctx = data;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t mask = (uint64_t)(pg > 0 ? pg : 4096) - 1;
	uintptr_t eh = 0, eh_end = 0, eh_lo = 0, eh_hi = 0;
	const char *path = info->dlpi_name;
	char bid[2 * 64 + 1];
	bool vdso = false, have_bid = false;
	int i;

	(void)size;
	if (ctx->vdso &&
	    (unsigned long)info->dlpi_phdr ==
		    ctx->vdso + ((const ElfW(Ehdr) *)ctx->vdso)->e_phoff) {
		vdso = true;
		path = "[vdso]";
	} else if (!path || !path[0]) {
		/* The first object is the executable, named "". */
		path = ctx->index == 0 ? exe_path : "";
	}
	ctx->index++;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_EH_FRAME &&
		    loaded(info, ph->p_vaddr, ph->p_memsz)) {
			eh = info->dlpi_addr + ph->p_vaddr;
			eh_end = eh + ph->p_memsz;
		}
	}
	if (eh)
		eh_segment(info, eh, eh_end, &eh_lo, &eh_hi);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start, end;
		struct sp_map *m;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    !ph->p_memsz)
			continue;
		start = (info->dlpi_addr + ph->p_vaddr) & ~mask;
		end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + mask) &
		      ~mask;
		m = find_existing(start, end, info->dlpi_addr, path);
		if (m) {
			m->live = true;
			continue;
		}
		if (!have_bid) {
			build_id(info, bid);
			have_bid = true;
		}
		m = sp_arena_alloc(sizeof(*m));
		if (!m || !(m->path = sp_arena_strdup(path))) {
			ctx->err = -ENOMEM;
			return 1;
		}
		m->kind = vdso ? 1 : 0;
		m->live = true;
		m->readable = (ph->p_flags & PF_R) != 0;
		m->start = start;
		m->end = end;
		m->pgoff = ph->p_offset & ~mask;
		m->vaddr = ph->p_vaddr & ~mask;
		m->bias = info->dlpi_addr;
		memcpy(m->build_id, bid, sizeof(bid));
		m->eh_hdr = eh;
		m->eh_hdr_end = eh_end;
		m->eh_seg_lo = eh_lo;
		m->eh_seg_hi = eh_hi;
		if (add_map(m)) {
			ctx->err = -ENOMEM;
			return 1;
		}
	}
	return 0;
}

int sp_maps_refresh(void)
{
	struct refresh_ctx ctx = { getauxval(AT_SYSINFO_EHDR), 0, 0 };
	size_t i, j;

	if (!exe_path[0]) {
		ssize_t n = readlink("/proc/self/exe", exe_path,
				     sizeof(exe_path) - 1);

		exe_path[n > 0 ? n : 0] = 0;
	}
	for (i = 0; i < nall; i++)
		all[i]->live = false;
	dl_iterate_phdr(phdr_cb, &ctx);
	if (nall > caplive) {
		const struct sp_map **nl = sp_arena_alloc(capall * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		live = nl;
		caplive = capall;
	}
	/* Insertion sort by start: a few dozen objects, and no qsort (it
	 * may malloc). */
	nlive = 0;
	for (i = 0; i < nall; i++) {
		const struct sp_map *m = all[i];

		if (!m->live)
			continue;
		for (j = nlive; j > 0 && live[j - 1]->start > m->start; j--)
			live[j] = live[j - 1];
		live[j] = m;
		nlive++;
	}
	return ctx.err;
}

/* ---- is there a call before this return address? ---------------------- */

/* The bytes of the x86-64 signal-return trampoline (__restore_rt):
 * mov $15, %rax; syscall.  A signal frame's return address points at it
 * without a call before it. */
static const unsigned char restore_rt[] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
};

bool sp_call_precedes(const struct sp_map *m, uint64_t ra)
{
	const unsigned char *p = (const unsigned char *)ra;
	uint64_t avail = ra - m->start;
	int k;

	if (ra >= m->end)
		return false;
	if (!m->readable)
		return true;	/* execute-only code: cannot check */
	if (m->end - ra >= sizeof(restore_rt) &&
	    memcmp(p, restore_rt, sizeof(restore_rt)) == 0)
		return true;
	/* call rel32 */
	if (avail >= 5 && p[-5] == 0xe8)
		return true;
	/* call *r/m64: ff /2, 2 to 7 bytes, after an optional REX or
	 * notrack (3e) prefix */
	for (k = 2; k <= 8 && (uint64_t)k <= avail; k++) {
		const unsigned char *q = p - k;
		unsigned modrm, mod, rm, len;

		if (q[0] != 0xff)
			continue;
		modrm = q[1];
		if (((modrm >> 3) & 7) != 2)
			continue;
		mod = modrm >> 6;
		rm = modrm & 7;
		len = 2;
		if (mod != 3 && rm == 4) {
			len++;
			if (mod == 0 && (q[2] & 7) == 5)
				len += 4;
		}
		if (mod == 1)
			len += 1;
		else if (mod == 2)
			len += 4;
		else if (mod == 0 && rm == 5)
			len += 4;
		if (len == (unsigned)k)
			return true;
	}
	return false;
}

/* ---- CFI --------------------------------------------------------------- */

/* A bounded reader over one object's memory. */
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

static uint64_t rd_enc_at(const uint8_t *p, const uint8_t *end, uint8_t enc,
			  uint64_t datarel, bool *bad)
{
	struct rd r = { p, end, false };
	uint64_t v = rd_enc(&r, enc, datarel);

	*bad = r.bad;
	return v;
}

/* The CIE fields an FDE needs. */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool z;
	const uint8_t *insn, *insn_end;
};

static int parse_cie(const uint8_t *p, const uint8_t *lo, const uint8_t *hi,
		     struct cie *c)
{
	struct rd r = { p, hi, false };
	uint64_t len = rd_u(&r, 4);
	const uint8_t *end, *aug;
	uint8_t version;

	if (p < lo)
		return -1;
	if (len == 0xffffffff)
		return -1;	/* 64-bit .eh_frame: not produced on x86-64 */
	if (len == 0 || len > (uint64_t)(hi - r.p))
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
	if (c->z) {
		uint64_t alen = rd_uleb(&r);
		const uint8_t *adata = r.p, *a;

		if (r.bad || alen > (uint64_t)(end - adata))
			return -1;
		for (a = aug + 1; *a; a++) {
			if (*a == 'R') {
				c->fde_enc = (uint8_t)rd_u(&r, 1);
			} else if (*a == 'P') {
				uint8_t penc = (uint8_t)rd_u(&r, 1);

				rd_enc(&r, penc & 0x7f, 0);
			} else if (*a == 'L') {
				rd_u(&r, 1);
			} else if (*a == 'S' || *a == 'B') {
				continue;
			} else {
				break;
			}
		}
		r.p = adata + alen;
	} else if (aug[0]) {
		return -1;	/* an augmentation we cannot skip */
	}
	if (r.bad || c->code_align == 0)
		return -1;
	c->insn = r.p;
	c->insn_end = end;
	return 0;
}

/* Interpreter state: the CFA rule and rbp's rule. */
struct cfa_state {
	int cfa_reg;
	int64_t cfa_off;
	int rbp_rule;	/* 0 same, 1 offset, -1 other */
	int64_t rbp_off;
	bool ra_undef;	/* DW_CFA_undefined on the return address */
};

#define DW_REG_RBP 6

/* A rule "saved at CFA + @off" for register @reg. */
static void rbp_offset(struct cfa_state *s, uint64_t reg, int64_t off)
{
	if (reg == DW_REG_RBP) {
		s->rbp_rule = 1;
		s->rbp_off = off;
	}
}

/* DW_CFA_restore of register @reg: its rule after the CIE (@init). */
static void rbp_restore(struct cfa_state *s, uint64_t reg,
			const struct cfa_state *init)
{
	if (reg == DW_REG_RBP && init) {
		s->rbp_rule = init->rbp_rule;
		s->rbp_off = init->rbp_off;
	}
}

/* Skip a ULEB128-sized block (an expression); false if it overruns. */
static bool skip_block(struct rd *r)
{
	uint64_t len = rd_uleb(r);

	if (len > (uint64_t)(r->end - r->p))
		return false;
	r->p += len;
	return true;
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

/*
 * Run one of the rule instructions of opcode @op below 0x40 (neither an
 * advance, set_loc nor the state stack's).  Returns -1 on one we do not
 * follow.
 */
static int rule_op(uint8_t op, struct rd *r, const struct cie *c,
		   struct cfa_state *s, const struct cfa_state *init)
{
	uint64_t reg;
	int64_t off;

	switch (op) {
	case 0x00:	/* nop */
		break;
	case 0x05:	/* offset_extended */
		reg = rd_uleb(r);
		off = (int64_t)rd_uleb(r) * c->data_align;
		rbp_offset(s, reg, off);
		break;
	case 0x06:	/* restore_extended */
		rbp_restore(s, rd_uleb(r), init);
		break;
	case 0x07:	/* undefined */
	case 0x09:	/* register */
		reg = rd_uleb(r);
		if (op == 0x09)
			rd_uleb(r);
		if (reg == DW_REG_RBP)
			s->rbp_rule = -1;
		if (op == 0x07 && reg == c->ra_reg)
			s->ra_undef = true;
		break;
	case 0x08:	/* same_value */
		if (rd_uleb(r) == DW_REG_RBP)
			s->rbp_rule = 0;
		break;
	case 0x0c:	/* def_cfa */
		s->cfa_reg = (int)rd_uleb(r);
		s->cfa_off = (int64_t)rd_uleb(r);
		break;
	case 0x0d:	/* def_cfa_register */
		s->cfa_reg = (int)rd_uleb(r);
		break;
	case 0x0e:	/* def_cfa_offset */
		s->cfa_off = (int64_t)rd_uleb(r);
		break;
	case 0x0f:	/* def_cfa_expression */
		s->cfa_reg = -1;
		if (!skip_block(r))
			return -1;
		break;
	case 0x10:	/* expression */
	case 0x16:	/* val_expression */
		reg = rd_uleb(r);
		if (!skip_block(r))
			return -1;
		if (reg == DW_REG_RBP)
			s->rbp_rule = -1;
		break;
	case 0x11:	/* offset_extended_sf */
		reg = rd_uleb(r);
		off = rd_sleb(r) * c->data_align;
		rbp_offset(s, reg, off);
		break;
	case 0x12:	/* def_cfa_sf */
		s->cfa_reg = (int)rd_uleb(r);
		s->cfa_off = rd_sleb(r) * c->data_align;
		break;
	case 0x13:	/* def_cfa_offset_sf */
		s->cfa_off = rd_sleb(r) * c->data_align;
		break;
	case 0x14:	/* val_offset */
	case 0x15:	/* val_offset_sf */
		reg = rd_uleb(r);
		if (op == 0x14)
			rd_uleb(r);
		else
			rd_sleb(r);
		if (reg == DW_REG_RBP)
			s->rbp_rule = -1;
		break;
	case 0x2e:	/* GNU_args_size */
		rd_uleb(r);
		break;
	case 0x2f:	/* GNU_negative_offset_extended */
		reg = rd_uleb(r);
		off = -(int64_t)rd_uleb(r) * c->data_align;
		rbp_offset(s, reg, off);
		break;
	default:
		return -1;
	}
	return 0;
}

/* Run CFA instructions until the location passes @pc.  @init is the
 * state after the CIE (for DW_CFA_restore); returns -1 on what we do not
 * follow (expressions as CFA). */
static int run_cfa(const uint8_t *p, const uint8_t *end, const struct cie *c,
		   uint64_t loc, uint64_t pc, struct cfa_state *s,
		   const struct cfa_state *init)
{
	struct rd r = { p, end, false };
	struct cfa_state stack[8];
	int depth = 0;

	while (r.p < r.end && !r.bad) {
		uint8_t op = (uint8_t)rd_u(&r, 1);
		uint64_t delta;

		if (op >> 6 == 2) {		/* offset */
			rbp_offset(s, op & 0x3f,
				   (int64_t)rd_uleb(&r) * c->data_align);
			continue;
		}
		if (op >> 6 == 3) {		/* restore */
			rbp_restore(s, op & 0x3f, init);
			continue;
		}
		if (advance_op(op, &r, c, &delta)) {
			if (loc + delta > pc)
				return 0;
			loc += delta;
			continue;
		}
		switch (op) {
		case 0x01:	/* set_loc */
			loc = rd_enc(&r, c->fde_enc, 0);
			if (loc > pc)
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

int sp_cfi_at(const struct sp_map *m, uint64_t pc, struct sp_cfi *out)
{
	struct rd r;
	struct cie cie;
	struct cfa_state init, s;
	uint64_t eh_frame, count, lo, hi, fde = 0, fde_len, cie_off;
	uint64_t pc_begin, pc_range;
	const uint8_t *hdr = (const uint8_t *)m->eh_hdr, *tab, *fde_end;
	const uint8_t *seg_lo, *seg_hi;
	uint8_t ver, fp_enc, cnt_enc, tab_enc;

	if (!m->eh_hdr || m->eh_hdr_end - m->eh_hdr < 8)
		return -1;
	r.p = hdr;
	r.end = (const uint8_t *)m->eh_hdr_end;
	r.bad = false;
	ver = (uint8_t)rd_u(&r, 1);
	fp_enc = (uint8_t)rd_u(&r, 1);
	cnt_enc = (uint8_t)rd_u(&r, 1);
	tab_enc = (uint8_t)rd_u(&r, 1);
	if (ver != 1 || tab_enc != 0x3b)
		return -1;	/* no sorted table we can search */
	eh_frame = rd_enc(&r, fp_enc, (uint64_t)m->eh_hdr);
	count = rd_enc(&r, cnt_enc, (uint64_t)m->eh_hdr);
	if (r.bad || count == 0 || count > (uint64_t)(r.end - r.p) / 8)
		return -1;
	tab = r.p;
	/* The last entry whose initial location is <= pc. */
	lo = 0;
	hi = count;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct rd e = { tab + mid * 8, tab + mid * 8 + 4, false };
		int64_t loc = (int32_t)rd_u(&e, 4);

		if ((uint64_t)m->eh_hdr + (uint64_t)loc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	{
		struct rd e = { tab + (lo - 1) * 8 + 4, tab + (lo - 1) * 8 + 8,
				false };

		fde = (uint64_t)m->eh_hdr + (uint64_t)(int64_t)(int32_t)
						    rd_u(&e, 4);
	}
	/* Bound every read by the loaded segment holding .eh_frame. */
	if (!m->eh_seg_lo || eh_frame < m->eh_seg_lo ||
	    eh_frame >= m->eh_seg_hi || fde < m->eh_seg_lo ||
	    fde >= m->eh_seg_hi)
		return -1;
	seg_lo = (const uint8_t *)m->eh_seg_lo;
	seg_hi = (const uint8_t *)m->eh_seg_hi;

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
	memset(&s, 0, sizeof(s));
	s.cfa_reg = -1;
	if (run_cfa(cie.insn, cie.insn_end, &cie, 0, UINT64_MAX, &s, NULL))
		return -1;
	init = s;
	if (run_cfa(r.p, fde_end, &cie, pc_begin, pc, &s, &init))
		return -1;
	if (!s.ra_undef && s.cfa_reg != 6 && s.cfa_reg != 7)
		return -1;
	out->cfa_reg = s.cfa_reg;
	out->cfa_off = s.cfa_off;
	out->rbp_rule = s.rbp_rule;
	out->rbp_off = s.rbp_off;
	out->outermost = s.ra_undef;
	return 0;
}
