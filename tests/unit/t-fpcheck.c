/*
 * t-fpcheck.c - the fp-mode chain checks of sym record: what the CFI says
 * about rbp (unwinder_fp_frame(), unwinder_leaf_fp() in
 * tools/agent/unwind.c) and the classes and start sites of
 * tools/agent/fpcheck.c, through fpcheck.h (the agent's archive).
 *
 * The CFI comes from small assembly functions of this file with known
 * directives; the start sites from this process's own main() and a
 * thread's function, whose return addresses fpcheck_learn() must find.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "perfsample.h"
#pragma GCC diagnostic pop
#include "agent/fpcheck.h"

/*
 * fpk_frame: push %rbp; mov %rsp, %rbp (a frame-pointer frame from
 * fpk_frame_body on, none at its entry and after its pop);
 * fpk_saved: saves rbp and uses it for data (CFA stays rsp-based);
 * fpk_outer: the return address is undefined (like _start).
 * They are never called: only their addresses are looked up.
 */
extern const char fpk_frame[], fpk_frame_body[], fpk_frame_ret[],
	fpk_saved_body[], fpk_outer_body[];
__asm__(".text\n"
	".type fpk_frame, @function\n"
	"fpk_frame:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"fpk_frame_body:\n"
	"nop\n"
	"nop\n"
	"pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"fpk_frame_ret:\n"
	"ret\n"
	".cfi_endproc\n"
	".size fpk_frame, .-fpk_frame\n"
	".type fpk_saved, @function\n"
	"fpk_saved:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"fpk_saved_body:\n"
	"xor %ebp, %ebp\n"
	"nop\n"
	"pop %rbp\n"
	".cfi_def_cfa_offset 8\n"
	".cfi_restore %rbp\n"
	"ret\n"
	".cfi_endproc\n"
	".size fpk_saved, .-fpk_saved\n"
	".type fpk_outer, @function\n"
	"fpk_outer:\n"
	".cfi_startproc\n"
	".cfi_undefined %rip\n"
	"nop\n"
	"fpk_outer_body:\n"
	"nop\n"
	"hlt\n"
	".cfi_endproc\n"
	".size fpk_outer, .-fpk_outer\n");

static uint64_t A(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static int kind_at(struct unwinder *u, const void *p, bool exact)
{
	int kind = -1;

	if (unwinder_fp_frame(u, getpid(), A(p), exact, NULL, &kind) != 0)
		return -1;
	return kind;
}

static void test_kinds(struct unwinder *u)
{
	int kind = -1;
	uint64_t regs[UNWIND_NREGS] = { 0 }, slice[2], ra = 0;
	bool kept = true;

	CHECK_ERR(unwinder_fp_frame(NULL, 1, 0, true, NULL, &kind), -EINVAL);
	CHECK_ERR(unwinder_fp_frame(u, 1, 0, true, NULL, NULL), -EINVAL);
	/* Not mapped: not a fact about any file. */
	CHECK_ERR(unwinder_fp_frame(u, getpid(), 0x1000, true, NULL, &kind),
		  -ENOENT);
	CHECK(kind == UNWIND_FP_UNKNOWN);
	/* Mapped, but by another file than the caller believes. */
	CHECK_ERR(unwinder_fp_frame(u, getpid(), A(fpk_frame_body), true,
				    "0123456789abcdef", &kind), -ENOENT);

	CHECK(kind_at(u, fpk_frame, true) == UNWIND_FP_KEPT);
	CHECK(kind_at(u, fpk_frame_body, true) == UNWIND_FP_FRAME);
	/* After the pop gcc-style CFI still has rbp saved at CFA - 16. */
	CHECK(kind_at(u, fpk_frame_ret, true) == UNWIND_FP_SAVED);
	CHECK(kind_at(u, fpk_saved_body, true) == UNWIND_FP_SAVED);
	CHECK(kind_at(u, fpk_outer_body, true) == UNWIND_FP_OUTERMOST);
	/* A return address is looked up at pc - 1. */
	CHECK(kind_at(u, fpk_frame_body + 1, false) == UNWIND_FP_FRAME);
	CHECK(kind_at(u, fpk_frame_body, false) == UNWIND_FP_SAVED);
	CHECK(kind_at(u, fpk_outer_body + 1, false) == UNWIND_FP_OUTERMOST);

	/*
	 * unwinder_leaf_fp(): the stack slice at SP holds [saved rbp, return
	 * address] for the frame and saved cases, [return address] at entry.
	 */
	slice[0] = 0x7ffd0000;			/* the caller's rbp */
	slice[1] = A(fpk_outer_body) + 1;	/* some return address */
	regs[UNWIND_REG_SP] = 0x7ffc0000;
	CHECK_ERR(unwinder_leaf_fp(u, getpid(), NULL, slice, sizeof(slice),
				   &ra, &kind, &kept), -EINVAL);
	/* Saved and still the caller's: the walk from rbp is sound. */
	regs[UNWIND_REG_IP] = A(fpk_saved_body);
	regs[UNWIND_REG_BP] = slice[0];
	CHECK_ERR(unwinder_leaf_fp(u, getpid(), regs, slice, sizeof(slice),
				   &ra, &kind, &kept), 0);
	CHECK(kind == UNWIND_FP_SAVED && kept && ra == slice[1]);
	/* Saved and overwritten (xor %ebp, %ebp ran): not sound. */
	regs[UNWIND_REG_IP] = A(fpk_saved_body) + 2;
	regs[UNWIND_REG_BP] = 0;
	CHECK_ERR(unwinder_leaf_fp(u, getpid(), regs, slice, sizeof(slice),
				   &ra, &kind, &kept), 0);
	CHECK(kind == UNWIND_FP_SAVED && !kept && ra == slice[1]);
	/* The leaf's own frame: sound whatever rbp holds. */
	regs[UNWIND_REG_IP] = A(fpk_frame_body);
	regs[UNWIND_REG_BP] = regs[UNWIND_REG_SP];
	CHECK_ERR(unwinder_leaf_fp(u, getpid(), regs, slice, sizeof(slice),
				   &ra, &kind, &kept), 0);
	CHECK(kind == UNWIND_FP_FRAME && kept && ra == slice[1]);
	/* At the entry: rbp untouched, the return address at SP. */
	regs[UNWIND_REG_IP] = A(fpk_frame);
	regs[UNWIND_REG_BP] = 0x1234;
	CHECK_ERR(unwinder_leaf_fp(u, getpid(), regs, &slice[1], 8, &ra,
				   &kind, &kept), 0);
	CHECK(kind == UNWIND_FP_KEPT && kept && ra == slice[1]);
	/* At the ret after the pop: the slot rbp was saved in is below SP,
	 * popped, so rbp holds the caller's value again. */
	regs[UNWIND_REG_IP] = A(fpk_frame_ret);
	regs[UNWIND_REG_BP] = 0x5678;
	CHECK_ERR(unwinder_leaf_fp(u, getpid(), regs, &slice[1], 8, &ra,
				   &kind, &kept), 0);
	CHECK(kind == UNWIND_FP_SAVED && kept && ra == slice[1]);
	/* The outermost frame has no caller to repair. */
	regs[UNWIND_REG_IP] = A(fpk_outer_body);
	CHECK_ERR(unwinder_leaf_fp(u, getpid(), regs, slice, sizeof(slice),
				   &ra, &kind, &kept), -ENOENT);
	CHECK(kind == UNWIND_FP_OUTERMOST && !kept);
	/* The slice too short for the return address. */
	regs[UNWIND_REG_IP] = A(fpk_saved_body);
	CHECK_ERR(unwinder_leaf_fp(u, getpid(), regs, slice, 8, &ra, &kind,
				   &kept), -ERANGE);
	/* unwinder_leaf_ra() is the same repair. */
	CHECK_ERR(unwinder_leaf_ra(u, getpid(), regs, slice, sizeof(slice),
				   &ra), 0);
	CHECK(ra == slice[1]);
}

/* ---- fpcheck ---- */

static uint64_t main_ra, thread_ra;

static __attribute__((noinline)) void *thread_fn(void *arg)
{
	thread_ra = A(__builtin_return_address(0));
	return arg;
}

/* A pm_map for the object holding @pc, as procmaps.c would make it. */
static bool map_of(uint64_t pc, struct pm_map *m)
{
	struct fpcheck_obj o;

	memset(m, 0, sizeof(*m));
	if (!fpcheck_obj_of(pc, &o))
		return false;
	m->start = o.bias;
	m->end = UINT64_MAX;
	m->vaddr = 0;		/* so that vaddr(pc) = pc - bias */
	m->vaddr_known = true;
	m->kind = PM_FILE;
	m->pid = getpid();
	memcpy(m->build_id, o.build_id, sizeof(m->build_id));
	m->path = (char *)"(test)";
	return true;
}

static void test_fpcheck(struct unwinder *u)
{
	struct fpcheck *fc = NULL;
	struct fpcheck_stats st;
	struct pm_map m, anon;
	struct fpcheck_obj o;
	pthread_t t;
	int n;

	fpcheck_free(NULL);
	CHECK_ERR(fpcheck_new(NULL, &fc), -EINVAL);
	CHECK_ERR(fpcheck_new(u, NULL), -EINVAL);
	CHECK_ERR(fpcheck_new(u, &fc), 0);
	if (!fc)
		return;
	CHECK_ERR(fpcheck_add_site(fc, "", 1), -EINVAL);
	CHECK_ERR(fpcheck_add_site(fc, "ABCD", 1), -EINVAL);
	CHECK_ERR(fpcheck_add_site(fc, "x1", 1), -EINVAL);

	/* This process's start sites: where main() and a thread's function
	 * return to (libc's __libc_start_call_main and start_thread). */
	CHECK(pthread_create(&t, NULL, thread_fn, NULL) == 0);
	pthread_join(t, NULL);
	n = fpcheck_learn(fc);
	printf("# %d start sites learned\n", n);
	CHECK(n >= 2);
	CHECK(map_of(main_ra, &m) && m.build_id[0]);
	CHECK(fpcheck_ret(fc, &m, getpid(), main_ra) == FPCHECK_OUTERMOST);
	CHECK(map_of(thread_ra, &m) && m.build_id[0]);
	CHECK(fpcheck_ret(fc, &m, getpid(), thread_ra) == FPCHECK_OUTERMOST);
	/* Cached: the same answer, from the cache. */
	CHECK(fpcheck_ret(fc, &m, getpid(), thread_ra) == FPCHECK_OUTERMOST);
	fpcheck_stats(fc, &st);
	CHECK(st.sites == (uint64_t)n && st.hits >= 1);
	/* Another build ID at the same address is not a site. */
	m.build_id[0] = m.build_id[0] == '0' ? '1' : '0';
	CHECK(fpcheck_ret(fc, &m, getpid(), thread_ra) != FPCHECK_OUTERMOST);

	/* Return addresses of this program, by their function's CFI. */
	CHECK(map_of(A(fpk_frame_body), &m) && fpcheck_obj_of(A(fpk_frame), &o));
	CHECK(fpcheck_ret(fc, &m, getpid(), A(fpk_frame_body) + 1) ==
	      FPCHECK_FRAME);
	CHECK(fpcheck_ret(fc, &m, getpid(), A(fpk_saved_body) + 1) ==
	      FPCHECK_NOFRAME);
	CHECK(fpcheck_ret(fc, &m, getpid(), A(fpk_frame_ret) + 1) ==
	      FPCHECK_NOFRAME);
	CHECK(fpcheck_ret(fc, &m, getpid(), A(fpk_outer_body) + 1) ==
	      FPCHECK_OUTERMOST);
	/* No file (JIT), no mapping: cannot tell. */
	anon = m;
	anon.kind = PM_ANON;
	CHECK(fpcheck_ret(fc, &anon, getpid(), A(fpk_frame_body) + 1) ==
	      FPCHECK_UNKNOWN);
	CHECK(fpcheck_ret(fc, NULL, getpid(), 0x1000) == FPCHECK_UNKNOWN);
	/* A process the unwinder does not know: unknown, and not cached as
	 * a fact about the file. */
	CHECK(fpcheck_ret(fc, &m, 1, A(fpk_saved_body) + 3) ==
	      FPCHECK_UNKNOWN);
	CHECK(fpcheck_ret(fc, &m, getpid(), A(fpk_saved_body) + 3) ==
	      FPCHECK_NOFRAME);
	fpcheck_free(fc);
}

int main(void)
{
	static struct ps_map maps[256];
	struct unwinder *u = NULL;
	int nmaps;

	main_ra = A(__builtin_return_address(0));
	CHECK_ERR(unwinder_new(&u), 0);
	if (!u)
		return tap_done();
	nmaps = ps_maps(getpid(), maps, 256);
	CHECK(ps_feed(u, getpid(), maps, nmaps) >= 2);
	test_kinds(u);
	test_fpcheck(u);
	unwinder_free(u);
	return tap_done();
}
