/*
 * t-unwind.c - tests of tools/agent/unwind.c, the DWARF CFI unwinder of
 * `sym record --call-graph dwarf`.
 *
 * Without perf: argument checks, the mapping table, and an unwind of this
 * very process from registers and a stack copy taken by uw_capture().
 *
 * With perf (skipped when perf_event_open() is refused): the workloads of
 * fixtures/src/unwind_*.c are built with gcc into a temporary directory
 * (without frame pointers; one with .debug_frame instead of .eh_frame, and
 * the same stripped with its .debug_frame in a build-ID debug file; one
 * with frame pointers), run, and sampled on cpu-clock with user registers
 * and 8 KiB of user stack.  Every sample is unwound, and the frames that
 * fall in the workload binary, resolved with nm, must be exactly a suffix
 * of the known call chain down to main and _start, with the unwind ending
 * at the outermost frame, in at least 99% of the samples.  unwind_sys.c
 * adds frames in libc, the PLT, the vDSO and a signal handler.
 * unwinder_leaf_ra() must name the caller that a frame-pointer walk from a
 * frameless leaf skips.  The unwind memo (unwinder_set_memo()) must give
 * what a full unwind gives on every sample, and on each change of one
 * (memo_compare(): a stack word, the copy's length, a register, the
 * frames asked for; the mappings changed).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "tap.h"
#include "agent/unwind.h"
#include "perfsample.h"
#include "base.h"

#define NSAMPLES 300
#define STACK_BYTES 8192
#define MAXF 128

static char tmp[256];
static char src_dir[512];

/* ---- symbols (nm) ------------------------------------------------------ */

struct sym {
	uint64_t addr, size;
	char name[64];
};

struct symtab {
	struct sym *s;
	size_t n;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static bool symtab_load(const char *bin, struct symtab *t)
{
	char cmd[600], line[512];
	FILE *p;
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", bin);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, s;
		char type, name[64];

		if (sscanf(line, "%llx %llx %c %63s", &a, &s, &type, name) != 4)
			continue;
		if (type != 't' && type != 'T' && type != 'W')
			continue;
		if (t->n == cap) {
			cap = cap ? 2 * cap : 256;
			t->s = realloc(t->s, cap * sizeof(*t->s));
			if (!t->s)
				abort();
		}
		t->s[t->n].addr = a;
		t->s[t->n].size = s;
		snprintf(t->s[t->n].name, sizeof(t->s[0].name), "%s", name);
		t->n++;
	}
	pclose(p);
	qsort(t->s, t->n, sizeof(*t->s), sym_cmp);
	return t->n > 0;
}

static const char *symtab_find(const struct symtab *t, uint64_t v)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (v >= t->s[i].addr && v < t->s[i].addr + t->s[i].size)
			return t->s[i].name;
	return NULL;
}

static uint64_t symtab_addr(const struct symtab *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->s[i].name, name) == 0)
			return t->s[i].addr;
	return 0;
}

/* The address of section @name in @bin (readelf -S), or 0. */
static uint64_t section_addr(const char *bin, const char *name)
{
	char cmd[600], line[512], sec[64], type[64];
	unsigned long long addr = 0, a;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", bin);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		const char *q = strchr(line, ']');

		if (q && sscanf(q + 1, "%63s %63s %llx", sec, type, &a) == 3 &&
		    strcmp(sec, name) == 0)
			addr = a;
	}
	pclose(p);
	return addr;
}

/* ---- argument checks and the mapping table ----------------------------- */

static void test_api(void)
{
	struct unwinder *u = NULL;
	struct unwind_stats st;
	struct unwind_map m;
	uint64_t regs[UNWIND_NREGS] = { 0 }, pcs[4], ra;
	size_t n = 99;
	int stop = -1;
	char exe[512];
	ssize_t len;

	unwinder_free(NULL);
	CHECK_ERR(unwinder_new(NULL), -EINVAL);
	CHECK_ERR(unwinder_new(&u), 0);
	if (!u)
		return;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';

	regs[UNWIND_REG_IP] = 0x1234;
	CHECK_ERR(unwinder_unwind(u, 1, regs, NULL, 0, pcs, 0, &n, &stop),
		  -EINVAL);
	CHECK_ERR(unwinder_unwind(u, 1, NULL, NULL, 0, pcs, 4, &n, &stop),
		  -EINVAL);
	/* An unknown process: the PC alone, flagged. */
	CHECK_ERR(unwinder_unwind(u, 1, regs, NULL, 0, pcs, 4, &n, &stop), 0);
	CHECK(n == 1 && pcs[0] == 0x1234 && stop == UNWIND_STOP_NOMAP);
	CHECK_ERR(unwinder_leaf_ra(u, 1, regs, NULL, 0, &ra), -ENOENT);

	memset(&m, 0, sizeof(m));
	m.start = 0x10000;
	m.end = 0x10000;
	m.path = exe;
	CHECK_ERR(unwinder_map(u, 7, &m), -EINVAL);
	m.end = 0x20000;
	m.path = NULL;
	CHECK_ERR(unwinder_map(u, 7, &m), -EINVAL);
	m.path = "/nonexistent/file";
	CHECK_ERR(unwinder_map(u, 7, &m), -ENOENT);
	m.path = "/proc/self/status";	/* not a regular file */
	CHECK_ERR(unwinder_map(u, 7, &m), -ENOEXEC);
	m.path = tmp;			/* a directory */
	CHECK_ERR(unwinder_map(u, 7, &m), -ENOEXEC);
	m.path = exe;
	m.build_id = "00112233445566778899aabbccddeeff00112233";
	CHECK_ERR(unwinder_map(u, 7, &m), -ESTALE);
	m.build_id = NULL;
	m.pgoff = 1ULL << 40;		/* in no segment */
	CHECK_ERR(unwinder_map(u, 7, &m), -ENOEXEC);
	m.pgoff = 0;
	CHECK_ERR(unwinder_map(u, 7, &m), 0);
	unwinder_stats(u, &st);
	CHECK(st.maps == 1 && st.files_open == 1 && st.procs == 1);
	/* Again: replaced, not added; the file is shared. */
	CHECK_ERR(unwinder_map(u, 7, &m), 0);
	CHECK_ERR(unwinder_map(u, 8, &m), 0);
	unwinder_stats(u, &st);
	CHECK(st.maps == 2 && st.files_open == 1 && st.procs == 2);
	/* A hole in the middle splits the mapping, an edge trims it. */
	unwinder_unmap(u, 7, 0x14000, 0x15000);
	unwinder_stats(u, &st);
	CHECK(st.maps == 3);
	unwinder_unmap(u, 7, 0x1f000, 0x30000);
	unwinder_unmap(u, 7, 0x0, 0x11000);
	unwinder_stats(u, &st);
	CHECK(st.maps == 3);
	regs[UNWIND_REG_IP] = 0x14800;	/* in the hole */
	CHECK_ERR(unwinder_unwind(u, 7, regs, NULL, 0, pcs, 4, &n, &stop), 0);
	CHECK(n == 1 && stop == UNWIND_STOP_NOMAP);
	unwinder_unmap(u, 7, 0x0, 0x40000);
	unwinder_stats(u, &st);
	CHECK(st.maps == 1 && st.procs == 2);
	unwinder_forget(u, 8);
	unwinder_forget(u, 8);
	unwinder_forget(u, 7);
	unwinder_stats(u, &st);
	/* The file stays open, idle, for the next process. */
	CHECK(st.maps == 0 && st.procs == 0 && st.files_open == 1);
	unwinder_free(u);
}

/* The address of dynamic symbol @name in the ELF image @img, or 0. */
static uint64_t image_dynsym(const void *img, size_t len, const char *name)
{
	Elf *e = elf_memory((char *)img, len);
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;

	while (e && !addr && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Sym sym;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0 && sym.st_value) {
				addr = sym.st_value;
				break;
			}
		}
	}
	elf_end(e);
	return addr;
}

/*
 * The vDSO of a process that is gone by the time its mapping is given
 * (it exited before the recorder drained its events: t3112 under ASan on
 * a loaded machine saw 96% of its stacks stop in [vdso] so): the
 * recorder's own image stands in, checked by size and build ID, and its
 * CFI unwinds a frame at a vDSO function's entry.
 */
static void test_vdso_gone(void)
{
	static struct ps_map maps[256];
	struct unwinder *u = NULL;
	struct unwind_map m;
	uint64_t regs[UNWIND_NREGS] = { 0 }, stack[2] = { 0x5555deadbeef, 0 };
	uint64_t fn, ra = 0;
	const void *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = img;
	char bid[2 * 64 + 1] = "";
	const void *note;
	ssize_t blen;
	Elf *e;
	pid_t pid;
	int i, n, st;

	memset(&m, 0, sizeof(m));
	n = ps_maps(getpid(), maps, 256);
	for (i = 0; i < n; i++)
		if (strcmp(maps[i].path, "[vdso]") == 0)
			break;
	if (!eh || i >= n) {
		tap_skip("a gone process's vDSO", "this process has no vDSO");
		return;
	}
	m.start = maps[i].start;
	m.end = maps[i].end;
	m.path = "[vdso]";
	e = elf_memory((char *)img, eh->e_shoff +
			(size_t)eh->e_shnum * eh->e_shentsize);
	blen = e ? dwelf_elf_gnu_build_id(e, &note) : -1;
	for (i = 0; i < blen && i < 64; i++)
		snprintf(bid + 2 * i, 3, "%02x", ((const unsigned char *)note)[i]);
	elf_end(e);
	fn = image_dynsym(img, eh->e_shoff + (size_t)eh->e_shnum *
			  eh->e_shentsize, "__vdso_clock_gettime");
	/* A child has our vDSO where we have it; reaped, it is gone. */
	pid = fork();
	if (pid == 0)
		_exit(0);
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK_ERR(unwinder_new(&u), 0);
	if (!u)
		return;
	m.build_id = "00112233445566778899aabbccddeeff00112233";
	CHECK_ERR(unwinder_map(u, pid, &m), -ESTALE);
	m.build_id = bid[0] ? bid : NULL;
	CHECK_ERR(unwinder_map(u, pid, &m), 0);
	/* At the function's entry the return address is on top. */
	regs[UNWIND_REG_IP] = m.start + fn;
	regs[UNWIND_REG_SP] = 0x7ffc0000;
	CHECK(fn != 0);
	CHECK_ERR(unwinder_leaf_ra(u, pid, regs, stack, sizeof(stack), &ra),
		  0);
	CHECK(ra == stack[0]);
	/* A mapping the size of no image of ours is not taken for one. */
	unwinder_forget(u, pid);
	m.end = m.start + (64 << 10);
	m.build_id = NULL;
	CHECK(unwinder_map(u, pid, &m) != 0);
	unwinder_free(u);
}

/*
 * ld.so's entry code (_start, _dl_start_user) has no CFI, yet nothing
 * calls it: a frame there is outermost (UNWIND_STOP_NONE), and only there,
 * from e_entry to the first byte with CFI.
 */
static void test_entry(void)
{
	static const char *const paths[] = {
		"/lib64/ld-linux-x86-64.so.2",
		"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	};
	const uint64_t base = 0x7f0000000000ULL;
	struct unwinder *u = NULL;
	struct unwind_map m = { 0 };
	uint64_t regs[UNWIND_NREGS] = { 0 }, pcs[4], used, nofp;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	size_t n, i;
	int stop, kind;
	FILE *f = NULL;

	for (i = 0; i < 2 && !f; i++)
		f = fopen(paths[i], "rb");
	if (!f || fread(&eh, sizeof(eh), 1, f) != 1) {
		tap_skip("ld.so's entry code", "no ld-linux-x86-64.so.2");
		goto out;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (fseek(f, (long)(eh.e_phoff + i * sizeof(ph)), SEEK_SET) ||
		    fread(&ph, sizeof(ph), 1, f) != 1)
			break;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    eh.e_entry >= ph.p_vaddr &&
		    eh.e_entry < ph.p_vaddr + ph.p_memsz)
			break;
	}
	if (i == eh.e_phnum || unwinder_new(&u) != 0) {
		tap_skip("ld.so's entry code", "no executable segment");
		goto out;
	}
	m.start = base + (ph.p_vaddr & ~0xfffULL);
	m.end = base + ph.p_vaddr + ph.p_memsz;
	m.pgoff = ph.p_offset & ~0xfffULL;
	m.path = access(paths[0], R_OK) == 0 ? paths[0] : paths[1];
	CHECK_ERR(unwinder_map(u, 7, &m), 0);
	/* A sample on _start's first instruction: whole, one frame. */
	regs[UNWIND_REG_IP] = base + eh.e_entry;
	regs[UNWIND_REG_SP] = 0x7ffd00000000ULL;
	CHECK_ERR(unwinder_unwind(u, 7, regs, NULL, 0, pcs, 4, &n, &stop), 0);
	CHECK(n == 1 && stop == UNWIND_STOP_NONE);
	unwinder_last_extent(u, &used, &nofp);
	CHECK(used == 0 && nofp == 0);
	/* The return address of its call to _dl_start. */
	CHECK_ERR(unwinder_fp_frame(u, 7, base + eh.e_entry + 8, false, NULL,
				    &kind), 0);
	CHECK(kind == UNWIND_FP_OUTERMOST);
	/* 128 bytes past e_entry: never outermost by this rule. */
	CHECK_ERR(unwinder_fp_frame(u, 7, base + eh.e_entry + 128, true, NULL,
				    &kind), 0);
	CHECK(kind != UNWIND_FP_OUTERMOST);
out:
	if (f)
		fclose(f);
	unwinder_free(u);
}

/* ---- unwinding this process ---------------------------------------------- */

#include "uwcapture.h"

struct self_shot {
	uint64_t regs[UNWIND_NREGS];
	unsigned char *stack;
	size_t size;
};

static uint64_t stack_top(void)
{
	char line[512];
	uint64_t top = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (strstr(line, "[stack]") &&
		    sscanf(line, "%llx-%llx", &s, &e) == 2)
			top = e;
	}
	if (f)
		fclose(f);
	return top;
}

/* A copy of raw stack, redzones and all: not through ASan's memcpy. */
static __attribute__((no_sanitize_address)) void
raw_copy(unsigned char *dst, uint64_t src, size_t n)
{
	const volatile unsigned char *p = (const void *)(uintptr_t)src;
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = p[i];
}

static __attribute__((noipa)) int self_c(struct self_shot *s)
{
	uint64_t top;

	uw_capture(s->regs);
	top = stack_top();
	s->size = top > s->regs[UNWIND_REG_SP] ?
		  top - s->regs[UNWIND_REG_SP] : 0;
	if (s->size > 65536)
		s->size = 65536;
	s->stack = malloc(s->size ? s->size : 1);
	if (!s->stack)
		return -1;
	raw_copy(s->stack, s->regs[UNWIND_REG_SP], s->size);
	return 0;
}

static __attribute__((noipa)) int self_b(struct self_shot *s)
{
	int rc = self_c(s);

	return rc + (s->size == 0);
}

static __attribute__((noipa)) int self_a(struct self_shot *s)
{
	volatile char pad[100];
	int rc;

	pad[0] = 1;
	rc = self_b(s);
	return rc + pad[0] - 1;
}


/* ---- the memo: on against off ------------------------------------------- */

/* A function whose CFA is an expression of rbx (DW_CFA_def_cfa_expression
 * DW_OP_breg3 0): never run, only unwound from. */
void uw_expr_cfa(void);
__asm__(".text\n"
	".type uw_expr_cfa, @function\n"
	"uw_expr_cfa:\n"
	".cfi_startproc\n"
	".cfi_escape 0x0f, 0x02, 0x73, 0x00\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size uw_expr_cfa, .-uw_expr_cfa\n");

/* A function that keeps rbp in rbx (DW_CFA_register), and one whose CFA is
 * rbp + 16 after its first byte: unwound from, never run. */
void uw_reg_rule(void);
void uw_fp_frame(void);
__asm__(".text\n"
	".type uw_reg_rule, @function\n"
	"uw_reg_rule:\n"
	".cfi_startproc\n"
	".cfi_register %rbp, %rbx\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size uw_reg_rule, .-uw_reg_rule\n"
	".type uw_fp_frame, @function\n"
	"uw_fp_frame:\n"
	".cfi_startproc\n"
	"nop\n"
	".cfi_def_cfa %rbp, 16\n"
	"nop\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size uw_fp_frame, .-uw_fp_frame\n");

/* Everything an unwind answers. */
struct uw_result {
	uint64_t pcs[MAXF];
	unsigned char exact[MAXF];
	size_t n;
	int stop, rc;
	uint64_t used, nofp;
};

static void result_of(struct unwinder *u, pid_t pid, const uint64_t *regs,
		      const void *stack, size_t size, size_t max,
		      struct uw_result *o)
{
	memset(o, 0, sizeof(*o));
	o->stop = -1;
	o->rc = unwinder_unwind_exact(u, pid, regs, stack, size, o->pcs,
				      o->exact, max, &o->n, &o->stop);
	unwinder_last_extent(u, &o->used, &o->nofp);
}

static bool result_eq(const struct uw_result *a, const struct uw_result *b)
{
	return a->rc == b->rc && a->n == b->n && a->stop == b->stop &&
	       a->used == b->used && a->nofp == b->nofp &&
	       memcmp(a->pcs, b->pcs, a->n * sizeof(*a->pcs)) == 0 &&
	       memcmp(a->exact, b->exact, a->n) == 0;
}

/* Counts of memo_compare(): cases compared, those where memo on and off
 * differ (must be none), those whose answer the change altered (shows
 * the change mattered), and memo hits among the changed cases. */
struct memo_cmp {
	size_t cases, differ, altered, hits, repeat_hits, samples;
};

static uint64_t memo_hits(struct unwinder *u)
{
	struct unwind_stats st;

	unwinder_stats(u, &st);
	return st.memo_hits;
}

/* One changed sample: @on holds the original's unwind in its memo (it is
 * unwound again first, twice: a key's first unwind is not recorded, see
 * unwinder_set_memo()); the change must give what @off gives. */
static void memo_case(struct unwinder *on, struct unwinder *off, pid_t pid,
		      const uint64_t *regs0, const void *stack0,
		      size_t size0, const uint64_t *regs, const void *stack,
		      size_t size, size_t max, const struct uw_result *orig,
		      struct memo_cmp *mc)
{
	struct uw_result a, b;
	uint64_t h;

	result_of(on, pid, regs0, stack0, size0, MAXF, &a);
	result_of(on, pid, regs0, stack0, size0, MAXF, &a);
	h = memo_hits(on);
	result_of(on, pid, regs, stack, size, max, &a);
	mc->hits += memo_hits(on) != h;
	result_of(off, pid, regs, stack, size, max, &b);
	mc->cases++;
	if (!result_eq(&a, &b)) {
		if (mc->differ++ < 5)
			printf("#   memo differs: size %zu max %zu: n %zu/%zu "
			       "stop %d/%d\n", size, max, a.n, b.n, a.stop,
			       b.stop);
	}
	if (!result_eq(&b, orig))
		mc->altered++;
}

/*
 * Unwind one real sample with the memo on (@on) and off (@off): as it is,
 * again (a hit), then with each of its first @words stack words changed in
 * turn, each register changed, shorter copies and other frame limits;
 * memo_case() compares each.
 */
static void memo_compare(struct unwinder *on, struct unwinder *off,
			 pid_t pid, const uint64_t *regs,
			 const unsigned char *stack, size_t size,
			 size_t words, struct memo_cmp *mc)
{
	struct uw_result orig, a;
	uint64_t regs2[UNWIND_NREGS], h;
	unsigned char *buf = malloc(size ? size : 1);
	size_t sizes[8], w, k;

	if (!buf)
		abort();
	mc->samples++;
	result_of(off, pid, regs, stack, size, MAXF, &orig);
	for (k = 0; k < 2; k++) {
		result_of(on, pid, regs, stack, size, MAXF, &a);
		mc->cases++;
		mc->differ += !result_eq(&a, &orig);
	}
	h = memo_hits(on);
	result_of(on, pid, regs, stack, size, MAXF, &a);
	mc->repeat_hits += memo_hits(on) != h;
	mc->cases++;
	mc->differ += !result_eq(&a, &orig);
	/* One word differs: read by the unwind (a return address, a saved
	 * register, a CFA) or not. */
	for (w = 0; w < words && (w + 1) * 8 <= size; w++) {
		uint64_t v;

		memcpy(buf, stack, size);
		memcpy(&v, buf + w * 8, 8);
		v ^= w & 1 ? 0x10 : 0x100000;
		memcpy(buf + w * 8, &v, 8);
		memo_case(on, off, pid, regs, stack, size, regs, buf, size,
			  MAXF, &orig, mc);
	}
	/* A shorter copy: around the extent the unwind needed. */
	sizes[0] = 0;
	sizes[1] = 8;
	sizes[2] = orig.used ? orig.used - 1 : 1;
	sizes[3] = orig.used;
	sizes[4] = orig.used + 1;
	sizes[5] = orig.used > 8 ? orig.used - 8 : 4;
	sizes[6] = size / 2;
	sizes[7] = size ? size - 1 : 0;
	for (k = 0; k < 8; k++)
		if (sizes[k] <= size)
			memo_case(on, off, pid, regs, stack, size, regs, stack,
				  sizes[k], MAXF, &orig, mc);
	/* One register differs. */
	for (k = 0; k < UNWIND_NREGS; k++) {
		memcpy(regs2, regs, sizeof(regs2));
		regs2[k] ^= 0x8;
		memo_case(on, off, pid, regs, stack, size, regs2, stack, size,
			  MAXF, &orig, mc);
	}
	/* Fewer frames asked for. */
	for (k = orig.n > 2 ? orig.n - 2 : 1; k <= orig.n + 1 && k <= MAXF;
	     k++)
		memo_case(on, off, pid, regs, stack, size, regs, stack, size,
			  k, &orig, mc);
	free(buf);
}

/* The mappings change under the memo: @pid's [start, end) unmapped in both
 * unwinders, each sample compared, then @feed maps it again. */
static void memo_unmapped(struct unwinder *on, struct unwinder *off,
			  pid_t pid, uint64_t start, uint64_t end,
			  const uint64_t *regs, const void *stack,
			  size_t size, struct memo_cmp *mc)
{
	struct uw_result a, b;

	result_of(on, pid, regs, stack, size, MAXF, &a);
	result_of(on, pid, regs, stack, size, MAXF, &a);
	unwinder_unmap(on, pid, start, end);
	unwinder_unmap(off, pid, start, end);
	result_of(on, pid, regs, stack, size, MAXF, &a);
	result_of(off, pid, regs, stack, size, MAXF, &b);
	mc->cases++;
	mc->differ += !result_eq(&a, &b);
}

static void test_signal(const struct symtab *t, uint64_t bias);

static void test_self(void)
{
	struct unwinder *u = NULL;
	struct self_shot shot;
	static struct ps_map maps[256];
	struct symtab t;
	uint64_t pcs[MAXF], bias, ra, plt;
	const char *want[] = { "self_c", "self_b", "self_a", "test_self",
			       "main" };
	char exe[512];
	ssize_t len;
	size_t n = 0, i;
	int stop = -1, nmaps, rc;
	bool chain = true;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	if (!symtab_load(exe, &t)) {
		tap_skip("unwind of this process", "nm failed");
		return;
	}
	memset(&shot, 0, sizeof(shot));
	rc = self_a(&shot);
	CHECK(rc == 0 && shot.size > 0);
	CHECK_ERR(unwinder_new(&u), 0);
	nmaps = ps_maps(getpid(), maps, 256);
	CHECK(ps_feed(u, getpid(), maps, nmaps) >= 2);
	CHECK_ERR(unwinder_unwind(u, getpid(), shot.regs, shot.stack,
				  shot.size, pcs, MAXF, &n, &stop), 0);
	bias = (uint64_t)(uintptr_t)self_a - symtab_addr(&t, "self_a");
	for (i = 0; i < 5; i++) {
		const char *name = i < n ?
			symtab_find(&t, pcs[i] - bias - (i > 0)) : NULL;

		if (!name || strcmp(name, want[i]) != 0) {
			chain = false;
			printf("#   frame %zu: %#llx %s, want %s\n", i,
			       (unsigned long long)(i < n ? pcs[i] : 0),
			       name ? name : "?", want[i]);
		}
	}
	CHECK(chain);
	/* Past main: libc, then _start, where the CFI ends the chain. */
	CHECK(n > 5 && stop == UNWIND_STOP_NONE);
	{
		uint64_t used, nofp;

		/* The copy was read up to __libc_start_main's CFA, and the
		 * frameless libc frames lie beyond the test's own. */
		unwinder_last_extent(u, &used, &nofp);
		CHECK(used > 0 && used <= shot.size && nofp <= used);
	}
	if (n > 0)
		CHECK(symtab_find(&t, pcs[n - 1] - bias - 1) &&
		      strcmp(symtab_find(&t, pcs[n - 1] - bias - 1),
			     "_start") == 0);
	/* The leaf's return address by its CFI: self_b. */
	CHECK_ERR(unwinder_leaf_ra(u, getpid(), shot.regs, shot.stack,
				   shot.size, &ra), 0);
	CHECK(n > 1 && ra == pcs[1]);
	/* The depth limit and a short stack copy are flagged. */
	CHECK_ERR(unwinder_unwind(u, getpid(), shot.regs, shot.stack,
				  shot.size, pcs, 2, &n, &stop), 0);
	CHECK(n == 2 && stop == UNWIND_STOP_DEPTH);
	CHECK_ERR(unwinder_unwind(u, getpid(), shot.regs, shot.stack, 0, pcs,
				  MAXF, &n, &stop), 0);
	CHECK(n == 1 && stop == UNWIND_STOP_READ);
	CHECK_ERR(unwinder_leaf_ra(u, getpid(), shot.regs, shot.stack, 0,
				   &ra), -ERANGE);
	/* The same answer without the row cache (libdw on every frame). */
	unwinder_set_cache(u, 0);
	{
		uint64_t pcs2[MAXF];
		size_t n2 = 0;
		int stop2 = -1;

		CHECK_ERR(unwinder_unwind(u, getpid(), shot.regs, shot.stack,
					  shot.size, pcs, MAXF, &n, &stop), 0);
		unwinder_set_cache(u, 1);
		CHECK_ERR(unwinder_unwind(u, getpid(), shot.regs, shot.stack,
					  shot.size, pcs2, MAXF, &n2, &stop2),
			  0);
		CHECK(n == n2 && stop == stop2 &&
		      memcmp(pcs, pcs2, n * sizeof(*pcs)) == 0);
	}
	/* The same answers with the memo as without, for this stack and
	 * every change of it, and after the mappings change. */
	{
		struct unwinder *off = NULL;
		struct memo_cmp mc = { 0 };
		struct uw_result a, b;
		int mi;

		CHECK_ERR(unwinder_new(&off), 0);
		unwinder_set_memo(off, 0);
		ps_feed(off, getpid(), maps, nmaps);
		memo_compare(u, off, getpid(), shot.regs, shot.stack,
			     shot.size, shot.size / 8, &mc);
		for (mi = 0; mi < nmaps; mi++)
			if (strcmp(maps[mi].path, exe) == 0)
				memo_unmapped(u, off, getpid(), maps[mi].start,
					      maps[mi].end, shot.regs,
					      shot.stack, shot.size, &mc);
		ps_feed(u, getpid(), maps, nmaps);
		ps_feed(off, getpid(), maps, nmaps);
		result_of(u, getpid(), shot.regs, shot.stack, shot.size, MAXF,
			  &a);
		result_of(off, getpid(), shot.regs, shot.stack, shot.size,
			  MAXF, &b);
		mc.cases++;
		mc.differ += !result_eq(&a, &b);
		printf("# memo, this process: %zu cases, %zu differ, %zu "
		       "altered by the change, %zu of them memo hits, "
		       "repeat hit %zu/%zu\n", mc.cases, mc.differ,
		       mc.altered, mc.hits, mc.repeat_hits, mc.samples);
		CHECK(mc.differ == 0);
		CHECK(mc.repeat_hits == 1);
		/* A register read only by an expression (rbx, the CFA of
		 * uw_expr_cfa()): another rbx is another unwind. */
		{
			uint64_t er[UNWIND_NREGS] = { 0 }, st[32] = { 0 };
			uint64_t sp = 0x7f0000001000ULL;
			struct uw_result ea, eb;

			er[UNWIND_REG_IP] = (uint64_t)(uintptr_t)uw_expr_cfa +
					    1;
			er[UNWIND_REG_SP] = sp;
			er[1] = sp + 64;	/* BX */
			st[7] = (uint64_t)(uintptr_t)self_b + 4;
			st[15] = (uint64_t)(uintptr_t)self_c + 4;
			result_of(u, getpid(), er, st, sizeof(st), MAXF, &ea);
			result_of(u, getpid(), er, st, sizeof(st), MAXF, &ea);
			er[1] = sp + 128;
			result_of(u, getpid(), er, st, sizeof(st), MAXF, &ea);
			result_of(off, getpid(), er, st, sizeof(st), MAXF, &eb);
			CHECK(result_eq(&ea, &eb) && ea.n > 1 &&
			      ea.pcs[1] == st[15]);
			/* rbx passed up as the caller's rbp (a register
			 * rule), then its CFA's base. */
			memset(er, 0, sizeof(er));
			memset(st, 0, sizeof(st));
			er[UNWIND_REG_IP] = (uint64_t)(uintptr_t)uw_reg_rule +
					    1;
			er[UNWIND_REG_SP] = sp;
			er[1] = sp + 64;	/* BX */
			st[0] = (uint64_t)(uintptr_t)uw_fp_frame + 2;
			st[9] = (uint64_t)(uintptr_t)self_b + 4;
			st[17] = (uint64_t)(uintptr_t)self_c + 4;
			result_of(u, getpid(), er, st, sizeof(st), MAXF, &ea);
			result_of(u, getpid(), er, st, sizeof(st), MAXF, &ea);
			CHECK(ea.n > 2 && ea.pcs[2] == st[9]);
			er[1] = sp + 128;
			result_of(u, getpid(), er, st, sizeof(st), MAXF, &ea);
			result_of(off, getpid(), er, st, sizeof(st), MAXF, &eb);
			CHECK(result_eq(&ea, &eb) && ea.n > 2 &&
			      ea.pcs[2] == st[17]);
		}
		/* Words the unwind never read leave it a hit; words it
		 * read change the answer (and are misses). */
		CHECK(mc.hits > 0 && mc.altered > 0);
		CHECK(a.n == n && a.stop == UNWIND_STOP_NONE);
		unwinder_free(off);
	}
	/*
	 * A PLT stub, whose CFA is an expression of rip: pretend self_c
	 * called the first stub of .plt (CFA = rsp + 8) and, at offset 11,
	 * after its push (CFA = rsp + 16).  The caller frames must be those
	 * of the real unwind.
	 */
	plt = section_addr(exe, ".plt");
	if (plt) {
		uint64_t regs[UNWIND_NREGS], want_pcs[MAXF], off;
		size_t wn = 0, n2 = 0;
		int wstop = -1, k;
		unsigned char *st2 = malloc(shot.size + 16);

		unwinder_unwind(u, getpid(), shot.regs, shot.stack,
				shot.size, want_pcs, MAXF, &wn, &wstop);
		for (k = 0; k < 2 && st2; k++) {
			off = k ? 16 : 8;
			memcpy(regs, shot.regs, sizeof(regs));
			regs[UNWIND_REG_SP] -= off;
			regs[UNWIND_REG_IP] = plt + bias + 16 + (k ? 11 : 0);
			memset(st2, 0, 8);
			memcpy(st2 + off - 8, &shot.regs[UNWIND_REG_IP], 8);
			memcpy(st2 + off, shot.stack, shot.size);
			CHECK_ERR(unwinder_unwind(u, getpid(), regs, st2,
						  shot.size + off, pcs, MAXF,
						  &n2, &stop), 0);
			CHECK(n2 == wn + 1 && stop == wstop &&
			      pcs[0] == regs[UNWIND_REG_IP] &&
			      memcmp(pcs + 1, want_pcs,
				     wn * sizeof(*pcs)) == 0);
		}
		free(st2);
	} else {
		tap_skip("unwind from a PLT stub", "no .plt in this binary");
	}
	/* Once the process forgets its mappings, the PC alone. */
	unwinder_forget(u, getpid());
	CHECK_ERR(unwinder_unwind(u, getpid(), shot.regs, shot.stack,
				  shot.size, pcs, MAXF, &n, &stop), 0);
	CHECK(n == 1 && stop == UNWIND_STOP_NOMAP);
	unwinder_free(u);
	free(shot.stack);
	test_signal(&t, bias);
	free(t.s);
}

/*
 * A signal at a function's first instruction: uw_fault() starts with ud2,
 * so the SIGILL handler runs with the interrupted PC exactly at
 * uw_fault's entry.  That PC is not a return address: looking its CFI up
 * at PC - 1 would land in uw_before(), whose (made-up) CFA is rsp + 64,
 * and give a wrong caller.
 */
void uw_before(void);
void uw_fault(void);
__asm__(".text\n"
	".type uw_before, @function\n"
	"uw_before:\n"
	".cfi_startproc\n"
	"sub $56, %rsp\n"
	".cfi_def_cfa_offset 64\n"
	"add $56, %rsp\n"
	".cfi_def_cfa_offset 8\n"
	"ret\n"
	"sub $56, %rsp\n"
	".cfi_def_cfa_offset 64\n"
	"nop\n"
	".cfi_endproc\n"
	".size uw_before, .-uw_before\n"
	".type uw_fault, @function\n"
	"uw_fault:\n"
	".cfi_startproc\n"
	"ud2\n"
	"ret\n"
	".cfi_endproc\n"
	".size uw_fault, .-uw_fault\n");

static struct self_shot sig_shot;
static int sig_rc = -1;

static void on_sigill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	sig_rc = self_c(&sig_shot);
	uc->uc_mcontext.gregs[REG_RIP] += 2;	/* past the ud2 */
}

static __attribute__((noipa)) int self_sig(void)
{
	uw_fault();
	return sig_rc;
}

static __attribute__((noipa)) void
test_signal(const struct symtab *t, uint64_t bias)
{
	struct sigaction sa, old;
	struct unwinder *u = NULL;
	static struct ps_map maps[256];
	uint64_t pcs[MAXF];
	size_t n = 0, k, at = 0;
	int stop = -1, nmaps;
	bool chain = false;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigill;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGILL, &sa, &old);
	CHECK(self_sig() == 0 && sig_shot.size > 0);
	sigaction(SIGILL, &old, NULL);
	CHECK_ERR(unwinder_new(&u), 0);
	nmaps = ps_maps(getpid(), maps, 256);
	ps_feed(u, getpid(), maps, nmaps);
	CHECK_ERR(unwinder_unwind(u, getpid(), sig_shot.regs, sig_shot.stack,
				  sig_shot.size, pcs, MAXF, &n, &stop), 0);
	/* ... on_sigill, the trampoline (libc), uw_fault + 0, self_sig,
	 * test_signal, main ... */
	for (k = 0; k + 3 < n; k++) {
		const char *s = symtab_find(t, pcs[k] - bias - 1);

		if (s && strcmp(s, "on_sigill") == 0) {
			at = k;
			break;
		}
	}
	if (at) {
		const char *c1 = symtab_find(t, pcs[at + 3] - bias - 1);
		const char *c2 = at + 4 < n ?
			symtab_find(t, pcs[at + 4] - bias - 1) : NULL;

		chain = !symtab_find(t, pcs[at + 1] - bias - 1) &&
			pcs[at + 2] == (uint64_t)(uintptr_t)uw_fault &&
			c1 && strcmp(c1, "self_sig") == 0 &&
			c2 && strcmp(c2, "test_signal") == 0;
	}
	if (!chain) {
		printf("#   %zu frames, stop %d, on_sigill at %zu:", n, stop, at);
		for (k = 0; k < n; k++) {
			const char *s = symtab_find(t, pcs[k] - bias - !!k);

			printf(" %s", s ? s : "?");
		}
		printf("\n");
	}
	CHECK(chain);
	CHECK(stop == UNWIND_STOP_NONE);
	/* Exact: the leaf, the trampoline (where on_sigill returns to, as
	 * eu-stack shows it) and uw_fault + 0, nothing else. */
	{
		unsigned char exact[MAXF];
		uint64_t pcs2[MAXF];
		size_t n2 = 0, bad = 0;

		CHECK_ERR(unwinder_unwind_exact(u, getpid(), sig_shot.regs,
						sig_shot.stack, sig_shot.size,
						pcs2, exact, MAXF, &n2, &stop),
			  0);
		for (k = 0; k < n2; k++)
			bad += exact[k] != (k == 0 || (at && (k == at + 1 ||
							      k == at + 2)));
		CHECK(n2 == n && at && bad == 0);
	}
	unwinder_free(u);
	free(sig_shot.stack);
}

/*
 * Garbage: PCs anywhere in this process's executable mappings, stacks of
 * random words and plausible return addresses.  Every unwind must return
 * 0 with 1 to max frames and a known stop reason (and, under ASan, read
 * nothing outside the copy).
 */
static void test_garbage(void)
{
	static struct ps_map maps[256];
	struct unwinder *u = NULL;
	uint64_t regs[UNWIND_NREGS], pcs[16], stack[256], ra;
	unsigned long long seed = 0x9e3779b97f4a7c15ULL;
	size_t n, bad = 0, i, j, deep = 0;
	int nmaps, stop;

#define RND() (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, \
	       seed >> 17)
	CHECK_ERR(unwinder_new(&u), 0);
	nmaps = ps_maps(getpid(), maps, 256);
	ps_feed(u, getpid(), maps, nmaps);
	for (i = 0; i < 20000 && nmaps > 0; i++) {
		const struct ps_map *m = &maps[RND() % (unsigned)nmaps];

		for (j = 0; j < UNWIND_NREGS; j++)
			regs[j] = RND();
		regs[UNWIND_REG_IP] = m->start + RND() % (m->end - m->start);
		regs[UNWIND_REG_SP] = 0x7ff000000000ULL + (RND() & ~7ULL);
		for (j = 0; j < 256; j++) {
			const struct ps_map *r = &maps[RND() % (unsigned)nmaps];

			stack[j] = RND() % 3 ? r->start + RND() %
						   (r->end - r->start) :
					       regs[UNWIND_REG_SP] + RND() % 4096;
		}
		n = 0;
		stop = -1;
		if (unwinder_unwind(u, getpid(), regs, stack,
				    RND() % sizeof(stack), pcs, 16, &n,
				    &stop) != 0 || n < 1 || n > 16 ||
		    stop < 0 || stop > UNWIND_STOP_DEPTH)
			bad++;
		deep += n > 2;
		unwinder_leaf_ra(u, getpid(), regs, stack, sizeof(stack), &ra);
	}
#undef RND
	printf("# garbage: %zu unwinds went past 2 frames\n", deep);
	CHECK(bad == 0);
	unwinder_free(u);
}

/* ---- sampled workloads -------------------------------------------------- */

struct workload {
	const char *name;	/* binary in tmp */
	const char *src;	/* fixtures/src/unwind_<src>.c */
	const char *flags;
	/* Allowed chains, leaf first, ending "main", "_start"; the binary's
	 * frames of every sample must be a suffix of one of them. */
	const char *const *chains[3];
	bool plt;		/* PCs in the binary outside any symbol */
	/* Stripped, with its .debug_frame in a build-ID debug file. */
	bool debugfile;
};

static const char *const chain_cba[] = { "c", "b", "a", "main", "_start",
					 NULL };
static const char *const chain_leaf[] = { "leaf", "outer", "main",
					  "_start", NULL };
static const char *const chain_sig_a[] = { "handler_work", "handler", "a",
					   "main", "_start", NULL };
static const char *const chain_sig_main[] = { "handler_work", "handler",
					      "main", "_start", NULL };

#define NOFP "-O2 -g -fomit-frame-pointer"
static const struct workload workloads[] = {
	{ "chain", "chain", NOFP, { chain_cba }, false, false },
	{ "chain-debug-frame", "chain",
	  NOFP " -fno-asynchronous-unwind-tables -fno-unwind-tables",
	  { chain_cba }, false, false },
	{ "chain-debug-file", "chain",
	  NOFP " -fno-asynchronous-unwind-tables -fno-unwind-tables",
	  { chain_cba }, false, true },
	{ "leaf", "leaf", NOFP, { chain_leaf }, false, false },
	{ "sys", "sys", NOFP, { chain_sig_a, chain_sig_main }, true, false },
	{ "leaf-fp", "leaf", "-O2 -g -fno-omit-frame-pointer",
	  { chain_leaf }, false, false },
};

struct run {
	pid_t pid;
	struct ps_sample *samples;
	size_t n;
	struct ps_map maps[256];
	int nmaps;
	uint64_t bin_start, bin_end, bin_pgoff;
	struct symtab syms;
	struct unwinder *u;
	struct unwinder *u_nodebug;	/* debugfile: one not told where */
	struct unwinder *u_off;		/* as u, with the memo off */
};

static int perf_err;

/*
 * Build @w into tmp.  A debugfile workload keeps its symbols (nm needs
 * them) but loses .debug_*: its CFI, .debug_frame, goes to
 * tmp/debug/xx/rest.debug.
 */
static bool build(const struct workload *w, char *bin, size_t len)
{
	snprintf(bin, len, "%s/%s", tmp, w->name);
	if (!tap_sh("gcc %s -o '%s' '%s/unwind_%s.c'", w->flags, bin, src_dir,
		w->src))
		return false;
	if (!w->debugfile)
		return true;
	return tap_sh("set -e; cd '%s'; "
		  "id=$(readelf -n '%s' | sed -n 's/.*Build ID: //p'); "
		  "mkdir -p debug/$(echo $id | cut -c1-2); "
		  "objcopy --only-keep-debug '%s' "
		  "debug/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug; "
		  "objcopy --strip-debug '%s'; "
		  "! readelf -SW '%s' | grep -q debug_frame", tmp, bin, bin,
		  bin, bin);
}

/* Run, sample and map one workload; false (and a skip) when it cannot. */
static bool run_start(const struct workload *w, struct run *r)
{
	struct ps_session s;
	char bin[512];
	char *argv[2];
	int i, err;

	memset(r, 0, sizeof(*r));
	if (!build(w, bin, sizeof(bin))) {
		CHECK(!"gcc builds the workload");
		return false;
	}
	if (!symtab_load(bin, &r->syms)) {
		CHECK(!"nm reads the workload");
		return false;
	}
	argv[0] = bin;
	argv[1] = NULL;
	r->pid = ps_spawn(argv);
	if (r->pid < 0) {
		CHECK(!"the workload starts");
		return false;
	}
	err = ps_open(r->pid, 1000000, STACK_BYTES, &s);
	if (err) {
		perf_err = err;
		ps_kill(r->pid);
		return false;
	}
	r->nmaps = ps_maps(r->pid, r->maps, 256);
	for (i = 0; i < r->nmaps; i++) {
		if (strcmp(r->maps[i].path, bin) == 0) {
			r->bin_start = r->maps[i].start;
			r->bin_end = r->maps[i].end;
			r->bin_pgoff = r->maps[i].pgoff;
		}
	}
	CHECK_ERR(unwinder_new(&r->u), 0);
	if (w->debugfile) {
		char dir[300];

		snprintf(dir, sizeof(dir), "%s/debug", tmp);
		CHECK_ERR(unwinder_set_debug_dir(r->u, dir), 0);
		CHECK_ERR(unwinder_new(&r->u_nodebug), 0);
		CHECK_ERR(unwinder_set_debug_dir(r->u_nodebug, ""), 0);
		ps_feed(r->u_nodebug, r->pid, r->maps, r->nmaps);
	}
	CHECK(r->bin_end && ps_feed(r->u, r->pid, r->maps, r->nmaps) ==
				    r->nmaps);
	CHECK_ERR(unwinder_new(&r->u_off), 0);
	unwinder_set_memo(r->u_off, 0);
	if (w->debugfile) {
		char dir[300];

		snprintf(dir, sizeof(dir), "%s/debug", tmp);
		CHECK_ERR(unwinder_set_debug_dir(r->u_off, dir), 0);
	}
	CHECK(ps_feed(r->u_off, r->pid, r->maps, r->nmaps) == r->nmaps);
	r->samples = calloc(NSAMPLES, sizeof(*r->samples));
	if (!r->samples)
		abort();
	ps_collect(&s, r->samples, NSAMPLES, 30000, &r->n);
	ps_close(&s);
	ps_kill(r->pid);
	printf("# %s: %zu samples, %llu lost\n", w->name, r->n,
	       (unsigned long long)s.lost);
	CHECK(r->n >= NSAMPLES / 2);
	return true;
}

static void run_end(struct run *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		ps_sample_release(&r->samples[i]);
	free(r->samples);
	free(r->syms.s);
	unwinder_free(r->u);
	unwinder_free(r->u_nodebug);
	unwinder_free(r->u_off);
}

/* The name of runtime PC @pc if it is in the workload binary: a symbol,
 * "?" outside any, NULL outside the binary. */
static const char *bin_name(const struct run *r, uint64_t pc)
{
	const char *s;

	if (pc < r->bin_start || pc >= r->bin_end)
		return NULL;
	/* gcc's PIE on Debian: p_vaddr == p_offset in every segment. */
	s = symtab_find(&r->syms, pc - r->bin_start + r->bin_pgoff);
	return s ? s : "?";
}

static bool in_vdso(const struct run *r, uint64_t pc)
{
	int i;

	for (i = 0; i < r->nmaps; i++)
		if (pc >= r->maps[i].start && pc < r->maps[i].end &&
		    strcmp(r->maps[i].path, "[vdso]") == 0)
			return true;
	return false;
}

static bool is_suffix(const char *const *chain, const char **got, size_t n)
{
	size_t len = 0, i;

	while (chain[len])
		len++;
	if (n == 0 || n > len)
		return false;
	for (i = 0; i < n; i++)
		if (strcmp(chain[len - n + i], got[i]) != 0)
			return false;
	return true;
}

static const char *const stop_names[] = {
	"none", "nomap", "nocfi", "read", "badcfi", "depth",
};

static void show(const struct run *r, const struct ps_sample *x,
		 const uint64_t *pcs, size_t n, int stop)
{
	size_t i;

	printf("#   sample ip %#llx: %zu frames, stop %s:",
	       (unsigned long long)x->ip, n,
	       stop >= 0 && stop <= UNWIND_STOP_DEPTH ? stop_names[stop] : "?");
	for (i = 0; i < n; i++) {
		const char *s = bin_name(r, pcs[i] - (i > 0));

		printf(" %#llx(%s)", (unsigned long long)pcs[i],
		       s ? s : in_vdso(r, pcs[i]) ? "vdso" : "lib");
	}
	printf("\n");
}

/*
 * Four samples of distinct keys (pid, IP, SP) unwound in turn, as threads
 * that block in turn: a set has room for four, so from the third round on
 * each must be a memo hit, whatever sets the keys fall in.
 */
static void test_memo_ways(const struct workload *w, struct run *r)
{
	size_t pick[4], np = 0, i, k;
	uint64_t h0 = 0;
	char what[160];
	bool same = true;

	for (i = 0; i < r->n && np < 4; i++) {
		const uint64_t *g = r->samples[i].regs;

		for (k = 0; k < np; k++) {
			const uint64_t *o = r->samples[pick[k]].regs;

			if (o[UNWIND_REG_IP] == g[UNWIND_REG_IP] &&
			    o[UNWIND_REG_SP] == g[UNWIND_REG_SP])
				break;
		}
		if (k == np)
			pick[np++] = i;
	}
	if (np < 4) {
		snprintf(what, sizeof(what), "%s: memo ways", w->name);
		tap_skip(what, "fewer than 4 distinct keys sampled");
		return;
	}
	unwinder_set_memo(r->u, 1);	/* empty */
	for (int round = 0; round < 6; round++) {
		if (round == 2)
			h0 = memo_hits(r->u);
		for (k = 0; k < 4; k++) {
			const struct ps_sample *x = &r->samples[pick[k]];
			struct uw_result a, b;

			result_of(r->u, r->pid, x->regs, x->stack, x->size,
				  MAXF, &a);
			result_of(r->u_off, r->pid, x->regs, x->stack, x->size,
				  MAXF, &b);
			same = same && result_eq(&a, &b);
		}
	}
	snprintf(what, sizeof(what), "%s: four keys in turn are all memo "
		 "hits after two rounds", w->name);
	tap_ok(same && memo_hits(r->u) - h0 == 16, __FILE__, __LINE__, what);
}

/*
 * The memo on the recorded samples of @w: each sample, and each change of
 * it (memo_compare()), gives with the memo what it gives without; then
 * with the workload binary unmapped, and mapped again.
 */
static void test_memo(const struct workload *w, struct run *r)
{
	struct unwinder *off = r->u_off;
	struct memo_cmp mc = { 0 };
	char what[160];
	size_t i;
	int k;

	for (i = 0; i < r->n; i++)
		memo_compare(r->u, off, r->pid, r->samples[i].regs,
			     r->samples[i].stack, r->samples[i].size,
			     i < 40 ? 160 : 0, &mc);
	for (i = 0; i < r->n && i < 20; i++)
		memo_unmapped(r->u, off, r->pid, r->bin_start, r->bin_end,
			      r->samples[i].regs, r->samples[i].stack,
			      r->samples[i].size, &mc);
	/* Mapped again (by its path: the workload is gone). */
	for (k = 0; k < r->nmaps; k++) {
		struct unwind_map m = { .start = r->maps[k].start,
					.end = r->maps[k].end,
					.pgoff = r->maps[k].pgoff,
					.path = r->maps[k].path };

		if (m.start < r->bin_start || m.end > r->bin_end)
			continue;
		CHECK_ERR(unwinder_map(r->u, r->pid, &m), 0);
		CHECK_ERR(unwinder_map(off, r->pid, &m), 0);
	}
	for (i = 0; i < r->n; i++) {
		struct uw_result a, b;

		result_of(r->u, r->pid, r->samples[i].regs,
			  r->samples[i].stack, r->samples[i].size, MAXF, &a);
		result_of(off, r->pid, r->samples[i].regs,
			  r->samples[i].stack, r->samples[i].size, MAXF, &b);
		mc.cases++;
		mc.differ += !result_eq(&a, &b);
	}
	printf("# %s: memo: %zu cases, %zu differ, %zu altered by the "
	       "change, %zu of them memo hits, repeat hits %zu/%zu\n",
	       w->name, mc.cases, mc.differ, mc.altered, mc.hits,
	       mc.repeat_hits, mc.samples);
	snprintf(what, sizeof(what), "%s: memo on = memo off on every "
		 "sample and change", w->name);
	tap_ok(mc.cases > r->n && mc.differ == 0, __FILE__, __LINE__, what);
	snprintf(what, sizeof(what), "%s: the memo answers a repeated "
		 "sample, and changes it never read", w->name);
	tap_ok(mc.repeat_hits * 100 >= mc.samples * 99 && mc.hits > 0 &&
	       mc.altered > 0, __FILE__, __LINE__, what);
	test_memo_ways(w, r);
}

static void test_workload(const struct workload *w)
{
	struct run r;
	size_t i, good = 0, clean = 0, sig = 0, vdso = 0, plt = 0, shown = 0;
	size_t stops[UNWIND_STOP_DEPTH + 1] = { 0 };
	char what[128];

	if (!run_start(w, &r)) {
		if (perf_err) {
			snprintf(what, sizeof(what), "%s: unwinds", w->name);
			tap_skip(what, "perf_event_open not permitted");
		}
		return;
	}
	for (i = 0; i < r.n; i++) {
		const struct ps_sample *x = &r.samples[i];
		uint64_t pcs[MAXF];
		const char *names[MAXF], *got[MAXF];
		unsigned char exact_got[MAXF];
		size_t n = 0, k, ng = 0;
		int stop = -1, c;
		bool ok = true, has_sig = false, has_vdso = false;

		if (unwinder_unwind_exact(r.u, r.pid, x->regs, x->stack,
					  x->size, pcs, exact_got, MAXF, &n,
					  &stop) != 0)
			ok = false;
		if (stop >= 0 && stop <= UNWIND_STOP_DEPTH)
			stops[stop]++;
		for (k = 0; k < n; k++) {
			/* Return addresses are looked up at pc - 1, except
			 * the leaf, the trampoline after handler and the
			 * frame the signal interrupted, after that. */
			bool exact = k == 0 ||
				     (k >= 1 && names[k - 1] &&
				      strcmp(names[k - 1], "handler") == 0) ||
				     (k >= 2 && names[k - 2] &&
				      strcmp(names[k - 2], "handler") == 0);

			if (exact_got[k] != exact)
				ok = false;
			names[k] = bin_name(&r, pcs[k] - !exact);
			if (names[k] && strcmp(names[k], "handler") == 0)
				has_sig = true;
			if (in_vdso(&r, pcs[k]))
				has_vdso = true;
			if (!names[k])
				continue;
			if (strcmp(names[k], "?") == 0) {
				plt++;
				if (!w->plt)
					ok = false;
				continue;
			}
			got[ng++] = names[k];
		}
		sig += has_sig;
		vdso += has_vdso;
		if (stop == UNWIND_STOP_NONE)
			clean++;
		for (c = 0; c < 3 && w->chains[c]; c++)
			if (is_suffix(w->chains[c], got, ng))
				break;
		if (c == 3 || !w->chains[c] || stop != UNWIND_STOP_NONE)
			ok = false;
		if (ok)
			good++;
		else if (shown++ < 5)
			show(&r, x, pcs, n, stop);
	}
	printf("# %s: %zu/%zu samples reach main with the exact chain, "
	       "%zu end at the outermost frame; through a signal frame %zu, "
	       "vDSO %zu, PLT %zu\n", w->name, good, r.n, clean, sig, vdso,
	       plt);
	printf("# %s: stops: none %zu nomap %zu nocfi %zu read %zu "
	       "badcfi %zu depth %zu\n", w->name, stops[0], stops[1],
	       stops[2], stops[3], stops[4], stops[5]);
	snprintf(what, sizeof(what), "%s: >= 99%% of samples reach main",
		 w->name);
	tap_ok(r.n > 0 && good * 100 >= r.n * 99, __FILE__, __LINE__, what);
	if (r.u_nodebug) {
		/* Without the debug file, c, b and a have no CFI. */
		size_t nocfi = 0;

		for (i = 0; i < r.n; i++) {
			uint64_t pcs[MAXF];
			size_t n = 0;
			int stop = -1;

			unwinder_unwind(r.u_nodebug, r.pid, r.samples[i].regs,
					r.samples[i].stack, r.samples[i].size,
					pcs, MAXF, &n, &stop);
			nocfi += stop == UNWIND_STOP_NOCFI;
		}
		snprintf(what, sizeof(what), "%s: without the debug file, "
			 "unwinds stop for want of CFI", w->name);
		tap_ok(nocfi * 100 >= r.n * 99, __FILE__, __LINE__, what);
	}
	if (w->chains[1]) {
		snprintf(what, sizeof(what), "%s: samples in the signal "
			 "handler unwind through the trampoline", w->name);
		tap_ok(sig > 0, __FILE__, __LINE__, what);
	}
	test_memo(w, &r);
	run_end(&r);
}

/*
 * The leaf-frame trap, on the frame-pointer build: in leaf() rbp is still
 * outer()'s frame pointer, so a frame-pointer walk goes from leaf() straight
 * to main().  unwinder_leaf_ra() must give outer() from a short slice.
 */
static void test_leaf_ra(const struct workload *w)
{
	struct run r;
	size_t i, inleaf = 0, good = 0, trap = 0, agree = 0, range = 0;

	if (!run_start(w, &r)) {
		if (perf_err)
			tap_skip("leaf-fp: unwinder_leaf_ra",
			     "perf_event_open not permitted");
		return;
	}
	for (i = 0; i < r.n; i++) {
		const struct ps_sample *x = &r.samples[i];
		uint64_t pcs[MAXF], ra = 0, fp_ra = 0;
		size_t n = 0, slice = x->size < 256 ? x->size : 256;
		const char *leaf = bin_name(&r, x->regs[UNWIND_REG_IP]);
		const char *caller;
		int stop, rc;

		rc = unwinder_leaf_ra(r.u, r.pid, x->regs, x->stack, slice,
				      &ra);
		if (unwinder_unwind(r.u, r.pid, x->regs, x->stack, x->size,
				    pcs, MAXF, &n, &stop) == 0 && n > 1 &&
		    rc == 0 && ra == pcs[1])
			agree++;
		if (!leaf || strcmp(leaf, "leaf") != 0)
			continue;
		inleaf++;
		caller = rc == 0 ? bin_name(&r, ra - 1) : NULL;
		if (caller && strcmp(caller, "outer") == 0)
			good++;
		/* What the frame-pointer walk would take: [rbp + 8]. */
		if (x->regs[UNWIND_REG_BP] >= x->regs[UNWIND_REG_SP] &&
		    x->regs[UNWIND_REG_BP] + 16 <=
			    x->regs[UNWIND_REG_SP] + x->size) {
			memcpy(&fp_ra, x->stack + (x->regs[UNWIND_REG_BP] -
						   x->regs[UNWIND_REG_SP]) + 8,
			       8);
			caller = bin_name(&r, fp_ra - 1);
			if (caller && strcmp(caller, "main") == 0)
				trap++;
		}
		if (unwinder_leaf_ra(r.u, r.pid, x->regs, x->stack, 0, &ra) ==
		    -ERANGE)
			range++;
	}
	printf("# leaf-fp: %zu/%zu samples in leaf(); leaf_ra gives outer() "
	       "in %zu; the fp walk skips to main() in %zu; leaf_ra equals "
	       "the unwind's pcs[1] in %zu/%zu samples\n", inleaf, r.n, good,
	       trap, agree, r.n);
	CHECK(inleaf * 10 >= r.n * 9);
	CHECK(inleaf > 0 && good * 100 >= inleaf * 99);
	CHECK(agree * 100 >= r.n * 99);
	CHECK(range == inleaf);
	/* Here rbp, kept by leaf() (same value), is outer()'s CFA: the
	 * memo must see that use of a register passed up unchanged. */
	test_memo(w, &r);
	run_end(&r);
}

int main(void)
{
	const char *root = getenv("SYM_ROOT");
	size_t i;

	snprintf(src_dir, sizeof(src_dir), "%s/fixtures/src",
		 root && *root ? root : ".");
	snprintf(tmp, sizeof(tmp), "/tmp/t-unwind.XXXXXX");
	if (!mkdtemp(tmp)) {
		printf("1..0 # SKIP cannot create a temporary directory\n");
		return 0;
	}
	test_api();
	test_entry();
	test_self();
	test_vdso_gone();
	test_garbage();
	if (access(src_dir, R_OK) != 0) {
		tap_skip("sampled workloads", "fixtures/src not found "
		     "(set SYM_ROOT)");
	} else if (!tap_sh("command -v gcc >/dev/null && command -v nm "
		       ">/dev/null")) {
		tap_skip("sampled workloads", "gcc or nm missing");
	} else {
		for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]);
		     i++) {
			if (strcmp(workloads[i].name, "leaf-fp") == 0)
				test_leaf_ra(&workloads[i]);
			else
				test_workload(&workloads[i]);
			if (perf_err)
				break;	/* skipped once: the rest too */
		}
		if (perf_err)
			printf("# perf_event_open: %s\n", strerror(-perf_err));
	}
	tap_sh("rm -rf '%s'", tmp);
	return tap_done();
}
