/*
 * fuzz-unwind.c - sym record's CFI unwinder (tools/agent/unwind.c) on a
 * hostile ELF file and a hostile stack: corrupt .eh_frame, .eh_frame_hdr
 * and .debug_frame (CIEs, FDEs, CFA programs, DWARF expressions), odd
 * program headers, registers and stack bytes that lead anywhere.  No
 * input may crash it or make it loop, and its answers must keep unwind.h's
 * contract.
 *
 * Input:
 *   byte 0          options: bit 0 the row cache off; bit 1 a page cut
 *                   out of the first mapping before unwinding; bits 2-4
 *                   the frames asked for, 1 + 8 * value
 *   bytes 1-136     the 17 registers, UNWIND_REGS_MASK's order,
 *                   little-endian
 *   bytes 137-138   L, the length of the stack copy (little-endian)
 *   next L bytes    the stack copy, from regs[SP] up
 *   the rest        an ELF file, mapped as a process would map it: each
 *                   PT_LOAD at its p_vaddr (plus 0x10000000 for ET_DYN)
 *
 * The file goes into a memfd and is mapped through /proc/self/fd/N, so
 * nothing is written to disk; build-ID debug files are never looked for.
 * One unwinder serves every input (a new one costs its 2 MB row cache):
 * each input forgets the process and empties the row cache, and its
 * memfd is a new file, so no answer depends on an earlier input.
 *
 * The unwind memo (unwinder_set_memo()) is on for those unwinds; with the
 * row cache on, check_memo() also unwinds the sample changed in a few
 * ways (a stack byte where the unwind read or near it, a return address,
 * the copy's length, a register, the frames asked for) with the memo
 * holding the original, and the answer must be the one the same unwinder
 * gives with the memo off.
 * tests/fuzz/seeds/unwind-seeds.py writes the seeds.
 */
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "agent/unwind.h"
#include "base.h"

#define HDR (1 + 8 * UNWIND_NREGS + 2)
#define MAX_FRAMES 64
#define PID 4242

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Map each PT_LOAD of @img (@size bytes) that is in the file; returns
 * the first mapping's start, or 0. */
static uint64_t map_loads(struct unwinder *u, const uint8_t *img,
			  size_t size, const char *path)
{
	uint64_t base, first = 0;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	size_t i;

	if (size < sizeof(eh))
		return 0;
	memcpy(&eh, img, sizeof(eh));	/* @img is not aligned */
	if (eh.e_phoff > size || eh.e_phentsize != sizeof(ph) ||
	    (size - eh.e_phoff) / sizeof(ph) < eh.e_phnum)
		return 0;
	base = eh.e_type == ET_DYN ? 0x10000000 : 0;
	for (i = 0; i < eh.e_phnum && i < 16; i++) {
		struct unwind_map m = { 0 };

		memcpy(&ph, img + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD || ph.p_memsz > (1ULL << 30) ||
		    ph.p_vaddr > (1ULL << 46))
			continue;
		m.start = base + (ph.p_vaddr & ~0xfffULL);
		m.end = base + ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffULL);
		m.pgoff = ph.p_offset & ~0xfffULL;
		m.path = path;
		if (unwinder_map(u, PID, &m) == 0 && !first)
			first = m.start;
	}
	return first;
}

/* One unwind's whole answer. */
struct answer {
	uint64_t pcs[MAX_FRAMES], used, nofp;
	unsigned char exact[MAX_FRAMES];
	size_t n;
	int stop, rc;
};

static void answer(struct unwinder *u, const uint64_t *regs,
		   const uint8_t *stack, size_t len, size_t max,
		   struct answer *a)
{
	memset(a, 0, sizeof(*a));
	a->rc = unwinder_unwind_exact(u, PID, regs, stack, len, a->pcs,
				      a->exact, max, &a->n, &a->stop);
	unwinder_last_extent(u, &a->used, &a->nofp);
}

static bool answer_eq(const struct answer *a, const struct answer *b)
{
	return a->rc == b->rc && a->n == b->n && a->stop == b->stop &&
	       a->used == b->used && a->nofp == b->nofp &&
	       memcmp(a->pcs, b->pcs, a->n * sizeof(*a->pcs)) == 0 &&
	       memcmp(a->exact, b->exact, a->n) == 0;
}

/*
 * The sample changed by @how at @where, unwound with the memo holding the
 * original's unwind, must give what it gives with the memo off.  The
 * answer without the memo is taken twice: on CFI whose FDEs overlap,
 * libdw's row for an address can depend on the lookups before it (see
 * below), and a row evicted from the cache between the two is looked up
 * again; the memo is only held to an answer that is stable.
 */
static void check_memo(struct unwinder *u, const uint64_t *regs,
		       const uint8_t *stack, size_t len, size_t max,
		       unsigned how, uint64_t where)
{
	static uint8_t buf[65536];
	uint64_t regs2[UNWIND_NREGS], v;
	struct answer orig, on, off, off2;
	size_t len2 = len, max2 = max, reach, off8;

	unwinder_set_memo(u, 1);
	answer(u, regs, stack, len, max, &orig);
	answer(u, regs, stack, len, max, &orig);	/* (recorded now) */
	memcpy(regs2, regs, sizeof(regs2));
	memcpy(buf, stack, len);
	/* (most of a copy is never read: aim at what the unwind reached) */
	reach = orig.used + 16 < len ? (size_t)orig.used + 16 : len;
	switch (how % 5) {
	case 0:
		if (reach)
			buf[where % reach] ^= (uint8_t)(1u << (where >> 32) % 8);
		break;
	case 1:
		/* A return address's slot, found by its value. */
		for (off8 = 0; orig.n > 1 && off8 + 8 <= len; off8 += 8) {
			memcpy(&v, buf + off8, 8);
			if (v == orig.pcs[1 + where % (orig.n - 1)]) {
				buf[off8 + (where >> 32) % 8] ^= 0x20;
				break;
			}
		}
		break;
	case 2:
		len2 = (size_t)(where % (reach + 1));
		break;
	case 3:
		regs2[where % UNWIND_NREGS] ^= 1ULL << ((where >> 32) % 64);
		break;
	default:
		max2 = 1 + (size_t)(where % MAX_FRAMES);
		break;
	}
	answer(u, regs2, buf, len2, max2, &on);
	unwinder_set_memo(u, 0);
	answer(u, regs2, buf, len2, max2, &off);
	answer(u, regs2, buf, len2, max2, &off2);
	unwinder_set_memo(u, 1);
	if (answer_eq(&off, &off2))
		FUZZ_CHECK(answer_eq(&on, &off));
}

static void check_fp(struct unwinder *u, const uint64_t *regs,
		     const uint8_t *stack, size_t len, const uint64_t *pcs,
		     const unsigned char *exact, size_t n)
{
	uint64_t ra = 0;
	bool kept = true;
	int kind = -1, rc;

	rc = unwinder_leaf_fp(u, PID, regs, stack, len, &ra, &kind, &kept);
	FUZZ_CHECK(rc == 0 || rc == -ENOENT || rc == -ERANGE ||
		   rc == -EINVAL);
	FUZZ_CHECK(kind >= UNWIND_FP_UNKNOWN && kind <= UNWIND_FP_SIGNAL);
	FUZZ_CHECK(rc == 0 || !kept);
	for (size_t i = 0; i < n; i++) {
		rc = unwinder_fp_frame(u, PID, pcs[i], exact[i], NULL, &kind);
		FUZZ_CHECK(rc == 0 || rc == -ENOENT);
		FUZZ_CHECK(kind >= UNWIND_FP_UNKNOWN &&
			   kind <= UNWIND_FP_SIGNAL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t regs[UNWIND_NREGS], pcs[MAX_FRAMES], used, nofp, first;
	unsigned char exact[MAX_FRAMES];
	static struct unwinder *u;
	const uint8_t *stack;
	size_t len, n = 0, max;
	char path[64];
	int fd, stop = -1, rc;

	if (size < HDR)
		return 0;
	for (int i = 0; i < UNWIND_NREGS; i++)
		regs[i] = le64(data + 1 + 8 * i);
	len = (size_t)data[HDR - 2] | (size_t)data[HDR - 1] << 8;
	if (len > size - HDR)
		len = size - HDR;
	stack = data + HDR;
	max = 1 + 8 * ((data[0] >> 2) & 7);
	fd = memfd_create("fuzz-unwind", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data + HDR + len, size - HDR - len) !=
	    (ssize_t)(size - HDR - len) || (!u && unwinder_new(&u) != 0))
		goto out;
	FUZZ_CHECK(unwinder_set_debug_dir(u, "") == 0);
	unwinder_set_cache(u, !(data[0] & 1));	/* and empties it */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	first = map_loads(u, data + HDR + len, size - HDR - len, path);
	if (first && (data[0] & 2))
		unwinder_unmap(u, PID, first + 0x1000, first + 0x2000);

	rc = unwinder_unwind_exact(u, PID, regs, stack, len, pcs, exact, max,
				   &n, &stop);
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(n >= 1 && n <= max);
	FUZZ_CHECK(pcs[0] == regs[UNWIND_REG_IP] && exact[0] == 1);
	FUZZ_CHECK(stop >= UNWIND_STOP_NONE && stop <= UNWIND_STOP_DEPTH);
	FUZZ_CHECK(stop != UNWIND_STOP_DEPTH || n == max);
	unwinder_last_extent(u, &used, &nofp);
	FUZZ_CHECK(nofp <= used);
	check_fp(u, regs, stack, len, pcs, exact, n);
	/*
	 * Again, through the rows cached by now.  Not necessarily the same
	 * answer: on corrupt CFI whose FDEs overlap, libdw's lookup of an
	 * address depends on which FDEs it has parsed before (it looks in
	 * the FDEs it knows first), so a lookup after others may find an FDE
	 * the first did not (corpus: crash-libdw-fde-history).  The contract
	 * must hold all the same.
	 */
	rc = unwinder_unwind(u, PID, regs, stack, len, pcs, max, &n, &stop);
	FUZZ_CHECK(rc == 0 && n >= 1 && n <= max &&
		   pcs[0] == regs[UNWIND_REG_IP]);
	FUZZ_CHECK(stop >= UNWIND_STOP_NONE && stop <= UNWIND_STOP_DEPTH);
	FUZZ_CHECK(stop != UNWIND_STOP_DEPTH || n == max);
	if (!(data[0] & 1)) {
		uint64_t h = 0xcbf29ce484222325ULL;

		for (size_t i = 0; i < size; i++)
			h = (h ^ data[i]) * 0x100000001b3ULL;
		for (unsigned k = 0; k < 20; k++) {
			check_memo(u, regs, stack, len, max, k, h);
			h = h * 0x9e3779b97f4a7c15ULL + k;
		}
	}
out:
	unwinder_forget(u, PID);
	close(fd);
	return 0;
}
