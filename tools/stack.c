/*
 * stack.c - `sym stack --core CORE [--executable EXE]` and `sym stack -p
 * PID`: unwind and symbolize every thread of a core file or of a live
 * process (docs/crash.md).
 *
 * Both inputs become the same snapshot: threads (TID, name, signal,
 * registers, a copy of or a pointer to the stack above SP) and modules
 * (path, runtime range, load bias, build ID).  A core gives them from its
 * notes and dumped pages (core.c); a live process from ptrace and /proc
 * (stack_ptrace.c), which detaches before anything is symbolized, so the
 * process is stopped only while its registers and stacks are copied.
 *
 * Unwinding is the recorder's CFI unwinder (tools/agent/unwind.h), fed the
 * executable mappings; the vDSO of a core is handed to it through a memfd
 * holding the dumped image.  When CFI ends a thread's walk after its first
 * frame, a frame-pointer walk over the same stack copy is tried, handing
 * back to CFI as soon as it can, and the frames it found are flagged
 * "fp".
 *
 * Symbolization, per module (stack_print.c): the store's table for the
 * build ID, else the file itself with its debug file (found as
 * sym_module_open() searches, with --debuginfo-path), else symd
 * (--server), else debuginfod ($DEBUGINFOD_URLS).  Modules left without
 * DWARF are named at the end with the `sym upload` command that would
 * give symd their debug file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "stack.h"
#include "tools.h"
#include "grow.h"
#include "base.h"

/* Frames shown per thread at most. */
#define STACK_MAX_FRAMES 512
/* A frame-pointer walk's frames are 16-byte aligned words in the copy. */
#define FP_MIN_FRAME 16

struct stk_opts {
	bool inlines, json;
	const char *core, *exe, *store, *server;
	int pid;
	/* --debuginfo-path, NULL-terminated: ndpath entries, room for
	 * capdpath. */
	const char **dpath;
	size_t ndpath, capdpath;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym stack --core=CORE [--executable=EXE] [options]\n"
		"       sym stack -p PID [options]\n"
		"  -i, --inlines             show inlined frames\n"
		"  -j, --json                JSON output\n"
		"  --debuginfo-path=DIR      search DIR for debug files too\n"
		"  --store=DIR               the table store (default: "
		"$SYM_STORE, ...)\n"
		"  --server=URL              ask symd for modules without "
		"local DWARF\n");
}

void stack_snap_release(struct stack_snap *s)
{
	size_t i;

	for (i = 0; i < s->nthreads; i++)
		free(s->threads[i].stack_own);
	for (i = 0; i < s->nmods; i++) {
		free(s->mods[i].path);
		sym_module_close(s->mods[i].mod);
	}
	free(s->threads);
	free(s->mods);
	if (s->vdso_fd >= 0)
		close(s->vdso_fd);
	memset(s, 0, sizeof(*s));
	s->vdso_fd = -1;
}

int stack_add_mod(struct stack_snap *s, const char *path, uint64_t start,
		  uint64_t end, struct stack_mod **out)
{
	struct stack_mod *m;
	size_t i;

	for (i = 0; i < s->nmods; i++) {
		m = &s->mods[i];
		if (strcmp(m->path, path) != 0)
			continue;
		if (start < m->start)
			m->start = start;
		if (end > m->end)
			m->end = end;
		*out = m;
		return 0;
	}
	if (tool_grow(&s->mods, &s->capmods, s->nmods + 1, sizeof(*m), 32))
		return -ENOMEM;
	m = &s->mods[s->nmods];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	m->start = start;
	m->end = end;
	s->nmods++;
	*out = m;
	return 0;
}

int stack_parse_pid(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || end == s || v <= 0 || v > INT32_MAX ? -1
								    : (int)v;
}

struct stack_mod *stack_mod_find(struct stack_snap *s, uint64_t addr)
{
	size_t i;

	for (i = 0; i < s->nmods; i++)
		if (addr >= s->mods[i].start && addr < s->mods[i].end)
			return &s->mods[i];
	return NULL;
}

/* Bias and build ID from the object's first page in memory, else from
 * the file on disk. */
void stack_mod_ident(struct stack_mod *m, const void *mem, size_t avail)
{
	unsigned char hdr[16384];
	ssize_t got;
	int fd;

	if (mem && core_elf_bias(mem, avail < 65536 ? avail : 65536,
				 m->base, &m->bias, m->build_id,
				 sizeof(m->build_id)) == 0 && m->build_id[0]) {
		m->have_bias = true;
		return;
	}
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	got = pread(fd, hdr, sizeof(hdr), 0);
	close(fd);
	if (got > 0 && core_elf_bias(hdr, (size_t)got, m->base, &m->bias,
				     m->build_id, sizeof(m->build_id)) == 0)
		m->have_bias = true;
}

/* --executable: the module of the core's executable is opened from @exe
 * when their build IDs agree (or the core has none for it). */
static int use_executable(struct stack_snap *s, const char *exe)
{
	char hex[129];
	const char *b = strrchr(exe, '/');
	size_t i;

	b = b ? b + 1 : exe;
	if (sym_file_build_id(exe, hex, sizeof(hex)) != 0)
		hex[0] = '\0';
	for (i = 0; i < s->nmods; i++) {
		struct stack_mod *m = &s->mods[i];
		const char *mb = strrchr(m->path, '/');
		char *p;

		mb = mb ? mb + 1 : m->path;
		if (hex[0] && m->build_id[0] ? strcmp(hex, m->build_id) != 0
					     : strcmp(b, mb) != 0)
			continue;
		p = strdup(exe);
		if (!p)
			return -ENOMEM;
		free(m->path);
		m->path = p;
		return 0;
	}
	tool_err("'%s' matches no module of the core (build ID %s)", exe,
		 hex[0] ? hex : "none");
	return -ENOENT;
}

int stack_add_vdso(struct stack_snap *s, const void *img, size_t len,
		   uint64_t start)
{
	struct stack_mod *m;
	char path[64];
	int err;

	if (s->vdso_fd >= 0 || !len)
		return 0;
	s->vdso_fd = memfd_create("vdso", MFD_CLOEXEC);
	if (s->vdso_fd < 0)
		return 0;
	if (write(s->vdso_fd, img, len) != (ssize_t)len)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->vdso_fd);
	err = stack_add_mod(s, path, start, start + len, &m);
	if (err)
		return err;
	m->base = start;
	m->exec_start = start;
	m->exec_end = start + len;
	m->name = "[vdso]";
	stack_mod_ident(m, img, len);
	return 0;
}

/* The vDSO dumped in the core (AT_SYSINFO_EHDR's segment). */
static int core_vdso(struct stack_snap *s, const struct core *c)
{
	const void *img;
	size_t avail, len = 0, i;

	img = core_mem(c, c->vdso, &avail);
	for (i = 0; img && i < c->nsegs; i++)
		if (c->segs[i].vaddr == c->vdso)
			len = c->segs[i].filesz;
	if (!img || len > avail)
		return 0;
	return stack_add_vdso(s, img, len, c->vdso);
}

static bool seg_exec(const struct core *c, uint64_t addr)
{
	size_t i;

	for (i = 0; i < c->nsegs; i++)
		if (addr >= c->segs[i].vaddr &&
		    addr - c->segs[i].vaddr < c->segs[i].memsz)
			return c->segs[i].flags & 1; /* PF_X */
	return false;
}

static int core_modules(struct stack_snap *s, const struct core *c)
{
	size_t i, avail;
	int err;

	for (i = 0; i < c->nfiles; i++) {
		const struct core_file *f = &c->files[i];
		struct stack_mod *m;

		err = stack_add_mod(s, f->path, f->start, f->end, &m);
		if (err)
			return err;
		if (f->pgoff == 0 && !m->base)
			m->base = f->start;
		if (seg_exec(c, f->start) && !m->exec_end) {
			m->exec_start = f->start;
			m->exec_end = f->end;
			m->exec_pgoff = f->pgoff;
		}
	}
	for (i = 0; i < s->nmods; i++) {
		struct stack_mod *m = &s->mods[i];
		const void *mem = core_mem(c, m->base, &avail);

		stack_mod_ident(m, mem, avail);
	}
	return core_vdso(s, c);
}

static int core_threads(struct stack_snap *s, const struct core *c)
{
	size_t i;

	s->threads = calloc(c->nthreads ? c->nthreads : 1,
			    sizeof(*s->threads));
	if (!s->threads)
		return -ENOMEM;
	for (i = 0; i < c->nthreads; i++) {
		struct stack_thread *t = &s->threads[s->nthreads++];

		t->tid = c->threads[i].tid;
		t->signo = i == 0 ? c->threads[i].signo : 0;
		memcpy(t->regs, c->threads[i].regs, sizeof(t->regs));
		snprintf(t->name, sizeof(t->name), "%s", c->comm);
		t->stack = core_mem(c, t->regs[UNWIND_REG_SP], &t->stack_len);
	}
	return 0;
}

int stack_load_core(struct stack_snap *s, const char *path, const char *exe,
		    struct core *c, void **map, size_t *maplen)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		err = -errno;
		tool_err_code(path, err);
		goto out;
	}
	*maplen = (size_t)st.st_size;
	*map = *maplen ? mmap(NULL, *maplen, PROT_READ, MAP_PRIVATE, fd, 0)
		       : MAP_FAILED;
	if (*map == MAP_FAILED) {
		*map = NULL;
		err = *maplen ? -errno : -ENOEXEC;
		tool_err("cannot read core '%s': %s", path,
			 *maplen ? strerror(-err) : "empty file");
		goto out;
	}
	err = core_parse(*map, *maplen, c);
	if (err) {
		tool_err("'%s' is not an x86-64 ELF core file", path);
		goto out;
	}
	s->pid = c->pid;
	s->damage = c->damage;
	snprintf(s->comm, sizeof(s->comm), "%s", c->comm);
	if (c->damage)
		tool_err("core '%s' is damaged (%s%s%s%s%s): stacks may be partial",
			 path,
			 c->damage & CORE_DAMAGE_TRUNCATED ? "truncated" : "",
			 (c->damage & CORE_DAMAGE_TRUNCATED) &&
				 (c->damage & ~CORE_DAMAGE_TRUNCATED) ? ", " : "",
			 c->damage & CORE_DAMAGE_NOTES ? "bad notes" : "",
			 (c->damage & CORE_DAMAGE_NOTES) &&
				 (c->damage & CORE_DAMAGE_PHDRS) ? ", " : "",
			 c->damage & CORE_DAMAGE_PHDRS ? "bad headers" : "");
	err = core_modules(s, c);
	if (!err)
		err = core_threads(s, c);
	if (!err && exe)
		err = use_executable(s, exe);
out:
	if (fd >= 0)
		close(fd);
	return err;
}

static int parse_args(int argc, char **argv, struct stk_opts *o)
{
	static const struct option longopts[] = {
		{ "core", required_argument, NULL, 'c' },
		{ "executable", required_argument, NULL, 'e' },
		{ "pid", required_argument, NULL, 'p' },
		{ "inlines", no_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "debuginfo-path", required_argument, NULL, 'd' },
		{ "store", required_argument, NULL, 's' },
		{ "server", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:e:p:ijh", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'c':
			o->core = optarg;
			break;
		case 'e':
			o->exe = optarg;
			break;
		case 'p':
			o->pid = stack_parse_pid(optarg);
			if (o->pid < 0) {
				tool_err("bad pid '%s'", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'i':
			o->inlines = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'd':
			if (tool_grow(&o->dpath, &o->capdpath, o->ndpath + 2,
				      sizeof(*o->dpath), 4))
				return TOOL_EXIT_FAIL;
			o->dpath[o->ndpath++] = optarg;
			o->dpath[o->ndpath] = NULL;
			break;
		case 's':
			o->store = optarg;
			break;
		case 'S':
			o->server = optarg;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind != argc || !o->core == !o->pid || (o->exe && !o->core)) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	return 0;
}

static void map_modules(struct stack_snap *s, struct unwinder *u)
{
	size_t i;

	for (i = 0; i < s->nmods; i++) {
		struct stack_mod *m = &s->mods[i];
		struct unwind_map um = {
			.start = m->exec_start,
			.end = m->exec_end,
			.pgoff = m->exec_pgoff,
			.path = m->path,
			.build_id = m->build_id[0] ? m->build_id : NULL,
		};

		if (m->exec_end > m->exec_start)
			unwinder_map(u, 1, &um);
	}
}

/*
 * cfi_resume() - CFI again from the caller's state a frame-pointer step
 * found (pc @ra, sp @csp, rbp @cbp; the other registers as at the leaf,
 * which only rules that name them would read), its frames stored from
 * t->pcs[n] on.  The unwinder takes its first PC as exact, so @ra's CFI
 * row is looked up at @ra, not at the call before it: right but for a
 * call that ends its function.
 * @return the frames stored, 0 when CFI gets no further than @ra
 */
static size_t cfi_resume(struct unwinder *u, struct stack_thread *t,
			 uint64_t ra, uint64_t csp, uint64_t cbp, size_t n)
{
	uint64_t regs[UNWIND_NREGS], sp = t->regs[UNWIND_REG_SP];
	size_t got = 0;
	int stop = 0;

	if (csp < sp || csp - sp > t->stack_len || n >= STACK_PCS)
		return 0;
	memcpy(regs, t->regs, sizeof(regs));
	regs[UNWIND_REG_IP] = ra;
	regs[UNWIND_REG_SP] = csp;
	regs[UNWIND_REG_BP] = cbp;
	if (unwinder_unwind_exact(u, 1, regs,
				  (const unsigned char *)t->stack + (csp - sp),
				  t->stack_len - (csp - sp), t->pcs + n,
				  t->exact + n, STACK_PCS - n, &got,
				  &stop) != 0 || got <= 1)
		return 0;
	t->exact[n] = 0; /* a return address */
	t->stop = stop;
	return got;
}

/*
 * fp_chain() - frame pointers from @bp (the rbp of the frame t->pcs[n - 1]
 * was found in) inside the stack copy, each step's caller first handed
 * back to CFI (cfi_resume()), so that frame pointers bridge only the
 * frames without CFI; the frames they find are flagged in t->by_fp.
 * @return the number of frames now in t->pcs
 */
static size_t fp_chain(struct unwinder *u, struct stack_thread *t,
		       uint64_t bp, size_t n)
{
	uint64_t sp = t->regs[UNWIND_REG_SP];
	const unsigned char *st = t->stack;
	size_t got;

	while (n < STACK_PCS && bp >= sp && bp - sp + 16 <= t->stack_len) {
		uint64_t next, ra;

		memcpy(&next, st + (bp - sp), 8);
		memcpy(&ra, st + (bp - sp) + 8, 8);
		if (!ra)
			break;
		t->by_fp[n] = 1;
		got = cfi_resume(u, t, ra, bp + 16, next, n);
		if (got)
			return n + got;
		t->pcs[n] = ra;
		t->exact[n++] = 0;
		if (next < bp + FP_MIN_FRAME)
			break;
		bp = next;
	}
	return n;
}

/* fp_walk() - CFI stopped at the leaf: frame pointers from its rbp. */
static void fp_walk(struct unwinder *u, struct stack_thread *t)
{
	t->pcs[0] = t->regs[UNWIND_REG_IP];
	t->exact[0] = 1;
	t->by_fp[0] = 1;
	t->npcs = fp_chain(u, t, t->regs[UNWIND_REG_BP], 1);
}

/*
 * fp_after() - CFI stopped above the leaf, at a return address with no
 * CFI (code a JIT compiled, outside every file, that keeps frame
 * pointers).  Its rbp comes from its callee, as that one's CFI says: a
 * frame-pointer frame (saved rbp at CFA - 16, return address at CFA - 8)
 * left the return address in the stack copy with the caller's rbp under
 * it (the first slot above the leaf's SP that holds the return address
 * is taken; the rbp under it must point higher up the copy); a leaf that
 * keeps rbp still has it in its register.  Frame pointers go on from
 * there (fp_chain()).
 * @return true when frames were added
 */
static bool fp_after(struct unwinder *u, struct stack_thread *t)
{
	size_t k = t->npcs - 1, o, n = t->npcs;
	uint64_t sp = t->regs[UNWIND_REG_SP], v, bp;
	const unsigned char *st = t->stack;
	int kind = UNWIND_FP_UNKNOWN;

	if (k < 1 || unwinder_fp_frame(u, 1, t->pcs[k - 1], t->exact[k - 1],
				       NULL, &kind) != 0)
		return false;
	if (kind == UNWIND_FP_KEPT && k == 1) {
		t->npcs = fp_chain(u, t, t->regs[UNWIND_REG_BP], n);
		return t->npcs > n;
	}
	if (kind != UNWIND_FP_FRAME)
		return false;
	for (o = 8; o + 8 <= t->stack_len; o += 8) {
		memcpy(&v, st + o, 8);
		if (v != t->pcs[k])
			continue;
		memcpy(&bp, st + o - 8, 8);
		if (bp <= sp + o)
			return false;
		t->npcs = fp_chain(u, t, bp, n);
		return t->npcs > n;
	}
	return false;
}

int stack_unwind(struct stack_snap *s)
{
	struct unwinder *u = NULL;
	size_t i;
	int err;

	err = unwinder_new(&u);
	if (err)
		return err;
	map_modules(s, u);
	for (i = 0; i < s->nthreads; i++) {
		struct stack_thread *t = &s->threads[i];
		int stop = 0;

		t->pcs = t->pc_buf;
		err = unwinder_unwind_exact(u, 1, t->regs,
					    t->stack ? t->stack : "", t->stack_len,
					    t->pcs, t->exact, STACK_PCS, &t->npcs,
					    &stop);
		if (err)
			break;
		t->stop = stop;
		memset(t->by_fp, 0, sizeof(t->by_fp));
		if (!t->stack || stop == UNWIND_STOP_NONE)
			continue;
		if (t->npcs <= 1) {
			fp_walk(u, t);
			t->fp = t->npcs > 1;
		}
		while ((t->stop == UNWIND_STOP_NOMAP ||
			t->stop == UNWIND_STOP_NOCFI) && fp_after(u, t))
			t->fp = true;
	}
	unwinder_free(u);
	return err;
}

int cmd_stack(int argc, char **argv)
{
	struct stk_opts o = { 0 };
	struct stack_snap s = { .vdso_fd = -1 };
	struct core c = { 0 };
	void *map = NULL;
	size_t maplen = 0;
	int status, err;

	status = parse_args(argc, argv, &o);
	if (status)
		goto out_opts;
	if (o.core)
		err = stack_load_core(&s, o.core, o.exe, &c, &map, &maplen);
	else
		err = stack_ptrace(&s, o.pid);
	if (!err)
		err = stack_unwind(&s);
	if (!err)
		err = stack_print(&s, o.inlines, o.json, o.store, o.server,
				  o.dpath);
	status = err < 0 ? TOOL_EXIT_FAIL : err;
	if (status == TOOL_EXIT_OK && s.damage)
		status = TOOL_EXIT_FAIL;
	stack_snap_release(&s);
	core_release(&c);
	if (map)
		munmap(map, maplen);
out_opts:
	free(o.dpath);
	return status < 0 ? TOOL_EXIT_OK : status;
}
