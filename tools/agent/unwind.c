/*
 * unwind.c - DWARF CFI unwinder for perf user-stack samples (unwind.h).
 *
 * How: libdw finds the CFI row of a PC (dwarf_cfi_addrframe() on .eh_frame,
 * then on .debug_frame) and gives its rules as DWARF expressions
 * (dwarf_frame_cfa(), dwarf_frame_register()).  We compile those into a
 * small row (struct uw_row: CFA rule, one rule per register, the operations
 * of any expression), keep it in a direct-mapped cache keyed by (file,
 * ELF address), and evaluate it ourselves against the sampled registers and
 * the stack copy.  libdwfl's own unwinder (dwfl_getthread_frames) would
 * need a Dwfl with its modules per process, a thread-state callback set
 * per sample, and it calls dwarf_cfi_addrframe() (a malloc and the FDE's
 * instructions run again) for every frame of every sample; the cached row
 * skips all of that for PCs seen before, which in a profile is nearly all.
 *
 * Invariants:
 * - Every struct uw_map holds one reference on its struct uw_file.  A file
 *   with no reference sits on the idle list (at most UW_IDLE_MAX of them,
 *   least recently released first out) so that a short-lived process does
 *   not make the next one reopen libc.
 * - Rows are keyed by the file's serial number, never reused, so a row of a
 *   closed file can never match again and needs no invalidation.
 * - A process's mappings are sorted by start and do not overlap.
 * - Only the stack copy is read: [regs[SP], regs[SP] + stack_size).
 *
 * Register numbers are DWARF's for x86-64 (0 rax, 1 rdx, 2 rcx, 3 rbx,
 * 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return address, rip).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "sym.h"
#include "unwind.h"
#include "vdso.h"
#include "base.h"

#define UW_NREGS 17		/* DWARF registers 0-16 */
#define UW_BP 6
#define UW_SP 7
#define UW_RA 16
#define UW_ALL_REGS ((1u << UW_NREGS) - 1)
/* Preserved across calls by the SysV ABI: rbx rbp r12-r15. */
#define UW_CALLEE_SAVED ((1u << 3) | (1u << 6) | (1u << 12) | (1u << 13) | \
			 (1u << 14) | (1u << 15))

#define UW_ROWS 2048		/* row cache slots, a power of 2 */
#define UW_PREFETCH 4096	/* bytes of the stack copy prefetched */
#define UW_MAX_OPS 48		/* expression operations per row */
#define UW_EXPR_STACK 64
#define UW_EXPR_STEPS 1024
#define UW_FILE_BUCKETS 256
#define UW_PROC_BUCKETS 1024
#define UW_IDLE_MAX 32
#define UW_MAX_MAPS 65536
#define UW_DEBUG_DIR "/usr/lib/debug/.build-id"
#define UW_DEBUG_MAX (64 << 20)	/* bytes of a debug file we open */
/* The entry code without CFI that a frame may be in: bytes from e_entry. */
#define UW_ENTRY_MAX 128
/* The unwind memo (memo_*()): slots in sets of UW_MEMO_WAYS, each
 * allocated at its first use; the frames and stack words one slot can
 * hold. */
#define UW_MEMO_SLOTS 64
#define UW_MEMO_WAYS 4
#define UW_MEMO_FRAMES 128
#define UW_MEMO_READS 192
/* uw_regs.src of a value that no sampled register passed into as is. */
#define UW_SRC_NONE 0xff

/* Internal result of one step besides enum unwind_stop. */
#define UW_OUTERMOST 100

/* DWARF register number -> index in the packed perf registers. */
static const uint8_t dwarf_to_perf[UW_NREGS] = {
	0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8,
};

struct uw_load {
	uint64_t offset, vaddr, filesz;
	bool exec;
};

/* One ELF file (or vDSO image), shared by every process that maps it. */
struct uw_file {
	struct uw_file *hnext;			/* chain in u->files */
	struct uw_file *idle_prev, *idle_next;	/* on the idle list iff
						 * refs == 0 */
	unsigned refs;				/* uw_maps pointing here */
	uint32_t serial;			/* row key, never reused */
	bool vdso;
	/* Identity of a file on disk (not for the vDSO). */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	char build_id[129];			/* lowercase hex, "" if none */
	void *image;				/* munmap (file) or free (vDSO) */
	size_t image_size;
	Elf *elf;				/* over image; elf_end */
	bool eh_tried, dbg_tried;
	Dwarf_CFI *eh;				/* .eh_frame; dwarf_cfi_end */
	/* .debug_frame, of this file or of its build-ID debug file. */
	Dwarf *dbg_dw;				/* dwarf_end; owns dbg */
	Dwarf_CFI *dbg;
	Elf *dbg_elf;				/* elf_end if != elf */
	void *dbg_image;			/* munmap */
	size_t dbg_image_size;
	size_t nloads;
	struct uw_load *loads;			/* PT_LOADs; free */
	/* e_entry (0: none), and the end of the code without CFI that
	 * starts there (file_in_entry()), found at the first need. */
	uint64_t entry, entry_end;
	bool entry_known;
	/* Go's function table, for the PCs that have no CFI: read at the
	 * first such PC (go_tried); NULL when the file has none. */
	bool go_tried;
	struct sym_gofuncs *go;			/* sym_gofuncs_close */
};

struct uw_map {
	uint64_t start, end;
	uint64_t bias;				/* ELF vaddr = pc - bias */
	struct uw_file *file;			/* one reference */
};

struct uw_proc {
	struct uw_proc *hnext;
	pid_t pid;
	/* Changed (from u->next_gen) by every change to @maps: the memo's
	 * key, so never the same for two states of the mappings, even of
	 * a process forgotten and seen again. */
	uint64_t gen;
	size_t n, cap;
	struct uw_map *maps;			/* sorted, disjoint; free */
};

enum uw_rule_kind {
	RK_UNDEF,	/* value lost */
	RK_SAME,	/* the callee's value */
	RK_AT_CFA,	/* *(CFA + off) */
	RK_CFA,		/* CFA + off */
	RK_REG,		/* the callee's value of register reg */
	RK_REG_OFF,	/* (CFA only) the callee's reg + off */
	RK_EXPR,	/* *(expression) */
	RK_VAL_EXPR,	/* expression */
};

struct uw_rule {
	uint8_t kind, reg, first, nops;
	int32_t off;
};

struct uw_op {
	uint8_t atom;
	int32_t n2;	/* DW_OP_bregx's offset */
	uint64_t n1;	/* operand; for DW_OP_bra/skip the target op index */
};

enum uw_row_state { ROW_OK, ROW_NOCFI, ROW_BAD };

/* One CFI row, compiled. */
struct uw_row {
	uint64_t addr;		/* key: ELF address looked up */
	uint32_t serial;	/* key: file serial; 0 = empty slot */
	uint8_t state;		/* enum uw_row_state */
	uint8_t signal;		/* CIE augmentation 'S' */
	uint8_t go;		/* made from Go's table (row_go()) */
	uint8_t injected;	/* Go: the caller's PC is exact */
	uint8_t nops;
	uint32_t live;		/* bit i: regs[i] is not RK_UNDEF (row_live()) */
	struct uw_rule cfa;
	struct uw_rule regs[UW_NREGS];
	struct uw_op ops[UW_MAX_OPS];
};

/* One stack word an unwind read: the stack_read() that succeeded. */
struct uw_memo_read {
	uint32_t off;		/* from the sampled SP */
	uint32_t len;		/* 1-8 bytes */
	uint64_t val;		/* zero-extended, as stack_read() gives it */
};

/*
 * One unwind and everything its result depends on (memo_match()): the
 * key, the sampled registers it used, the stack words it read, and the
 * copy sizes that give the same reads.  @valid is false while recording
 * and after a failed one.
 */
struct uw_memo {
	bool valid, full;	/* full: more than UW_MEMO_READS reads */
	uint64_t tick;		/* u->memo_tick at its last use: LRU */
	pid_t pid;
	uint64_t gen;		/* uw_proc.gen at the unwind */
	uint64_t ip, sp;
	uint32_t used;		/* bit i: DWARF register i was used */
	uint64_t regs[UW_NREGS];	/* its value (where @used) */
	uint64_t size_min;	/* every read needs size >= this */
	uint64_t size_end;	/* a read failed that size >= this makes good */
	uint32_t nreads;
	struct uw_memo_read reads[UW_MEMO_READS];
	/* The result. */
	size_t n;
	int stop;
	uint64_t last_used, last_nofp;
	uint64_t pcs[UW_MEMO_FRAMES];
	unsigned char exact[UW_MEMO_FRAMES];
};

struct unwinder {
	struct uw_file *files[UW_FILE_BUCKETS];
	struct uw_file *idle_head, *idle_tail;	/* oldest first */
	size_t nidle, nfiles;
	uint32_t next_serial;
	struct uw_proc *procs[UW_PROC_BUCKETS];
	size_t nprocs, nmaps;
	struct uw_proc *last;			/* last process looked up */
	struct uw_row *rows;			/* UW_ROWS slots */
	struct uw_row scratch;			/* the row when !cache */
	bool nocache;
	uint64_t hits, misses;
	uint64_t next_gen;			/* uw_proc.gen source */
	struct uw_memo *memo[UW_MEMO_SLOTS];	/* NULL until used; free */
	bool nomemo;
	uint64_t memo_hits, memo_misses, memo_tick;
	/* unwinder_last_extent() of the last unwind. */
	uint64_t last_used, last_nofp;
	char *debug_dir;			/* "" = none; free */
};

/*
 * Registers of one frame; bit i of valid: r[i] is known.  src[i]: r[i] is
 * the sampled value of DWARF register src[i], passed up unchanged by
 * "same value" and "register" rules; UW_SRC_NONE when it was computed
 * (from the CFA, the stack or an expression).  The memo needs it to know
 * which sampled registers an unwind used (reg_use()).
 */
struct uw_regs {
	uint64_t r[UW_NREGS];
	uint32_t valid;
	uint8_t src[UW_NREGS];
};

/* The stack copy; @rec: the memo slot being recorded, or NULL. */
struct uw_ctx {
	const unsigned char *stack;
	uint64_t sp;
	size_t size;
	struct uw_memo *rec;
};

/* ---- files ------------------------------------------------------------ */

static size_t file_bucket(dev_t dev, ino_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ULL) ^ dev) % UW_FILE_BUCKETS;
}

/* The vDSO images share one bucket: there are one or two of them. */
#define UW_VDSO_BUCKET 0

static void file_close(struct uw_file *f)
{
	if (!f)
		return;
	if (f->eh)
		dwarf_cfi_end(f->eh);
	if (f->dbg_dw)
		dwarf_end(f->dbg_dw);
	if (f->dbg_elf && f->dbg_elf != f->elf)
		elf_end(f->dbg_elf);
	if (f->dbg_image)
		munmap(f->dbg_image, f->dbg_image_size);
	if (f->elf)
		elf_end(f->elf);
	if (f->image) {
		if (f->vdso)
			free(f->image);
		else
			munmap(f->image, f->image_size);
	}
	sym_gofuncs_close(f->go);
	free(f->loads);
	free(f);
}

static void idle_remove(struct unwinder *u, struct uw_file *f)
{
	if (f->idle_prev)
		f->idle_prev->idle_next = f->idle_next;
	else
		u->idle_head = f->idle_next;
	if (f->idle_next)
		f->idle_next->idle_prev = f->idle_prev;
	else
		u->idle_tail = f->idle_prev;
	f->idle_prev = f->idle_next = NULL;
	u->nidle--;
}

static void file_unlink(struct unwinder *u, struct uw_file *f)
{
	size_t b = f->vdso ? UW_VDSO_BUCKET : file_bucket(f->dev, f->ino);
	struct uw_file **pp;

	for (pp = &u->files[b]; *pp; pp = &(*pp)->hnext) {
		if (*pp == f) {
			*pp = f->hnext;
			break;
		}
	}
	u->nfiles--;
}

static void file_ref(struct unwinder *u, struct uw_file *f)
{
	if (f->refs++ == 0 && (f->idle_prev || u->idle_head == f))
		idle_remove(u, f);
}

static void file_unref(struct unwinder *u, struct uw_file *f)
{
	if (--f->refs > 0)
		return;
	f->idle_prev = u->idle_tail;
	f->idle_next = NULL;
	if (u->idle_tail)
		u->idle_tail->idle_next = f;
	else
		u->idle_head = f;
	u->idle_tail = f;
	u->nidle++;
	while (u->nidle > UW_IDLE_MAX) {
		struct uw_file *old = u->idle_head;

		idle_remove(u, old);
		file_unlink(u, old);
		file_close(old);
	}
}

/* Read the ELF header, PT_LOADs and build ID of f->image into f. */
static int file_parse(struct uw_file *f)
{
	GElf_Ehdr eh;
	size_t n, i;
	const void *bid;
	ssize_t len;

	f->elf = elf_memory(f->image, f->image_size);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF ||
	    !gelf_getehdr(f->elf, &eh))
		return -ENOEXEC;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	f->entry = eh.e_entry;
	if (elf_getphdrnum(f->elf, &n) != 0 || n > 4096)
		return -ENOEXEC;
	f->loads = calloc(n ? n : 1, sizeof(*f->loads));
	if (!f->loads)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		f->loads[f->nloads].offset = ph.p_offset;
		f->loads[f->nloads].vaddr = ph.p_vaddr;
		f->loads[f->nloads].filesz = ph.p_filesz;
		f->loads[f->nloads].exec = ph.p_flags & PF_X;
		f->nloads++;
	}
	len = dwelf_elf_gnu_build_id(f->elf, &bid);
	if (len > 0 && len <= 64) {
		for (i = 0; i < (size_t)len; i++)
			snprintf(f->build_id + 2 * i, 3, "%02x",
				 ((const unsigned char *)bid)[i]);
	}
	return 0;
}

static void file_insert(struct unwinder *u, struct uw_file *f, size_t b)
{
	f->serial = ++u->next_serial;
	if (f->serial == 0)	/* 4 billion files later: 0 means empty */
		f->serial = ++u->next_serial;
	f->hnext = u->files[b];
	u->files[b] = f;
	u->nfiles++;
}

/*
 * The vDSO of @pid, [start, end): read once, shared when identical.  When
 * @pid's can no longer be read (it exited or exec'ed before its events
 * were drained, which a recorder short of CPU often sees), or no longer
 * holds an ELF image there, this process's stands in when its size fits
 * (vdso.h); unwinder_map() then still refuses it for another build ID.
 */
static int file_vdso(struct unwinder *u, pid_t pid, uint64_t start,
		     uint64_t end, struct uw_file **out)
{
	struct uw_file *f = NULL, *g;
	size_t size = end - start, self_len;
	const void *self;
	int err;

	if (size > AGENT_VDSO_MAX)
		return -EFBIG;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->vdso = true;
	f->image = calloc(1, size);
	if (!f->image) {
		err = -ENOMEM;
		goto fail;
	}
	f->image_size = size;
	err = agent_vdso_read(pid, start, f->image, size);
	if (!err && memcmp(f->image, ELFMAG, SELFMAG) != 0)
		err = -ENOEXEC;
	if (err) {
		self = agent_self_vdso(&self_len);
		if (!self || !agent_vdso_fits(self_len, size))
			goto fail;
		memset(f->image, 0, size);
		memcpy(f->image, self, self_len);
		err = 0;
	}
	for (g = u->files[UW_VDSO_BUCKET]; g; g = g->hnext) {
		if (g->vdso && g->image_size == size &&
		    memcmp(g->image, f->image, size) == 0) {
			file_close(f);
			*out = g;
			return 0;
		}
	}
	err = file_parse(f);
	if (err)
		goto fail;
	file_insert(u, f, UW_VDSO_BUCKET);
	*out = f;
	return 0;
fail:
	file_close(f);
	return err;
}

/* The file at @path, opened or found open by its identity. */
static int file_open(struct unwinder *u, const char *path,
		     struct uw_file **out)
{
	struct uw_file *f = NULL, *g;
	struct stat st;
	size_t b;
	int fd, err;
	void *map;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -ENOEXEC;
	}
	b = file_bucket(st.st_dev, st.st_ino);
	for (g = u->files[b]; g; g = g->hnext) {
		if (!g->vdso && g->dev == st.st_dev && g->ino == st.st_ino &&
		    g->size == st.st_size &&
		    g->mtime.tv_sec == st.st_mtim.tv_sec &&
		    g->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			close(fd);
			*out = g;
			return 0;
		}
	}
	/* Private and writable: libelf may convert data in place; nothing
	 * is written back, and untouched pages cost nothing. */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE, fd, 0);
	err = -errno;
	close(fd);
	if (map == MAP_FAILED)
		return err;
	f = calloc(1, sizeof(*f));
	if (!f) {
		munmap(map, (size_t)st.st_size);
		return -ENOMEM;
	}
	f->image = map;
	f->image_size = (size_t)st.st_size;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	err = file_parse(f);
	if (err) {
		file_close(f);
		return err;
	}
	file_insert(u, f, b);
	*out = f;
	return 0;
}

/* Whether @elf has a section @name with contents. */
static bool elf_has_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0)
			return true;
	}
	return false;
}

/*
 * Find .debug_frame for @f, once, when .eh_frame has no row for a PC: in
 * the file itself, else in its build-ID debug file under u->debug_dir.
 * dwarf_begin_elf() decompresses every DWARF section of the file it opens
 * (about 150 ms and 16 MB for libc's debug file), so a debug file is
 * opened only when it has a .debug_frame (gcc emits one only without
 * unwind tables; Debian's debug files have none) and is at most
 * UW_DEBUG_MAX bytes.
 */
static void file_open_debug_frame(struct unwinder *u, struct uw_file *f)
{
	char path[PATH_MAX];
	struct stat st;
	void *map;
	int fd;

	f->dbg_tried = true;
	if (elf_has_section(f->elf, ".debug_frame")) {
		f->dbg_dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
		if (f->dbg_dw)
			f->dbg = dwarf_getcfi(f->dbg_dw);
		return;
	}
	if (!*u->debug_dir || strlen(f->build_id) < 4)
		return;
	if (snprintf(path, sizeof(path), "%s/%.2s/%s.debug", u->debug_dir,
		     f->build_id, f->build_id + 2) >= (int)sizeof(path))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(Elf64_Ehdr) ||
	    st.st_size > UW_DEBUG_MAX) {
		close(fd);
		return;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	f->dbg_image = map;
	f->dbg_image_size = (size_t)st.st_size;
	f->dbg_elf = elf_memory(map, (size_t)st.st_size);
	if (!f->dbg_elf || !elf_has_section(f->dbg_elf, ".debug_frame"))
		return;
	f->dbg_dw = dwarf_begin_elf(f->dbg_elf, DWARF_C_READ, NULL);
	if (f->dbg_dw)
		f->dbg = dwarf_getcfi(f->dbg_dw);
}

/* ---- processes -------------------------------------------------------- */

static struct uw_proc *proc_find(struct unwinder *u, pid_t pid)
{
	struct uw_proc *p;

	if (u->last && u->last->pid == pid)
		return u->last;
	for (p = u->procs[(unsigned)pid % UW_PROC_BUCKETS]; p; p = p->hnext) {
		if (p->pid == pid) {
			u->last = p;
			return p;
		}
	}
	return NULL;
}

static struct uw_proc *proc_get(struct unwinder *u, pid_t pid)
{
	struct uw_proc *p = proc_find(u, pid);
	size_t b = (unsigned)pid % UW_PROC_BUCKETS;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->gen = ++u->next_gen;
	p->hnext = u->procs[b];
	u->procs[b] = p;
	u->nprocs++;
	return p;
}

/* Index of the first mapping with end > addr. */
static size_t proc_lower(const struct uw_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct uw_map *map_find(struct uw_proc *p, uint64_t addr)
{
	size_t i = proc_lower(p, addr);

	if (i < p->n && p->maps[i].start <= addr)
		return &p->maps[i];
	return NULL;
}

static int proc_reserve(struct uw_proc *p, size_t more)
{
	if (p->n + more <= p->cap)
		return 0;
	if (p->n + more > UW_MAX_MAPS)
		return -ENOSPC;
	return tool_grow(&p->maps, &p->cap, p->n + more, sizeof(*p->maps), 16);
}

/* Remove [start, end) from @p's mappings, cutting those partly inside. */
static int proc_cut(struct unwinder *u, struct uw_proc *p, uint64_t start,
		    uint64_t end)
{
	size_t i = proc_lower(p, start), j;

	while (i < p->n && p->maps[i].start < end) {
		struct uw_map *m = &p->maps[i];

		if (m->start < start && m->end > end) {
			/* A hole in the middle: split in two. */
			int err = proc_reserve(p, 1);

			if (err)
				return err;
			m = &p->maps[i];
			memmove(m + 1, m, (p->n - i) * sizeof(*m));
			p->n++;
			u->nmaps++;
			m[0].end = start;
			m[1].start = end;
			file_ref(u, m[1].file);
			return 0;
		}
		if (m->start < start) {
			m->end = start;
			i++;
			continue;
		}
		if (m->end > end) {
			m->start = end;
			break;
		}
		/* Wholly inside: find the run of such and drop it. */
		for (j = i; j < p->n && p->maps[j].end <= end; j++)
			file_unref(u, p->maps[j].file);
		memmove(&p->maps[i], &p->maps[j], (p->n - j) * sizeof(*m));
		u->nmaps -= j - i;
		p->n -= j - i;
	}
	return 0;
}

static void proc_free(struct unwinder *u, struct uw_proc *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		file_unref(u, p->maps[i].file);
	u->nmaps -= p->n;
	free(p->maps);
	free(p);
}

/* ---- public: lifecycle and mappings ------------------------------------ */

int unwinder_new(struct unwinder **out)
{
	struct unwinder *u;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->rows = calloc(UW_ROWS, sizeof(*u->rows));
	u->debug_dir = strdup(UW_DEBUG_DIR);
	if (!u->rows || !u->debug_dir) {
		free(u->rows);
		free(u->debug_dir);
		free(u);
		return -ENOMEM;
	}
	*out = u;
	return 0;
}

void unwinder_free(struct unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < UW_PROC_BUCKETS; i++) {
		while (u->procs[i]) {
			struct uw_proc *p = u->procs[i];

			u->procs[i] = p->hnext;
			proc_free(u, p);
		}
	}
	/* Every file is idle now, and the idle list holds at most
	 * UW_IDLE_MAX; the hash holds them all. */
	for (i = 0; i < UW_FILE_BUCKETS; i++) {
		while (u->files[i]) {
			struct uw_file *f = u->files[i];

			u->files[i] = f->hnext;
			file_close(f);
		}
	}
	for (i = 0; i < UW_MEMO_SLOTS; i++)
		free(u->memo[i]);
	free(u->rows);
	free(u->debug_dir);
	free(u);
}

/* Forget every memorized unwind (the slots stay allocated). */
static void memo_clear(struct unwinder *u)
{
	size_t i;

	for (i = 0; i < UW_MEMO_SLOTS; i++)
		if (u->memo[i])
			u->memo[i]->valid = false;
}

int unwinder_set_debug_dir(struct unwinder *u, const char *dir)
{
	char *d;

	if (!u)
		return -EINVAL;
	d = strdup(dir ? dir : UW_DEBUG_DIR);
	if (!d)
		return -ENOMEM;
	free(u->debug_dir);
	u->debug_dir = d;
	/* (Files already consulted keep their answer, so a memorized unwind
	 * would still hold; cleared all the same, as it costs nothing.) */
	memo_clear(u);
	return 0;
}

int unwinder_map(struct unwinder *u, pid_t pid, const struct unwind_map *m)
{
	struct uw_file *f = NULL;
	struct uw_proc *p;
	const char *base;
	uint64_t bias = 0;
	bool found = false;
	size_t i;
	int err;

	if (!u || !m || !m->path || m->start >= m->end)
		return -EINVAL;
	p = proc_get(u, pid);
	if (!p)
		return -ENOMEM;
	/* Whatever happens below changes the mappings (an error leaves the
	 * range unmapped). */
	p->gen = ++u->next_gen;
	err = proc_cut(u, p, m->start, m->end);
	if (err)
		return err;
	base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	if (strcmp(base, "[vdso]") == 0)
		err = file_vdso(u, pid, m->start, m->end, &f);
	else
		err = file_open(u, m->path, &f);
	if (err)
		return err;
	/* Hold the file while deciding: an error below releases it. */
	file_ref(u, f);
	if (m->build_id && *m->build_id &&
	    strcasecmp(m->build_id, f->build_id) != 0) {
		err = -ESTALE;
		goto unref;
	}
	for (i = 0; i < f->nloads && !found; i++) {
		const struct uw_load *l = &f->loads[i];
		uint64_t lo = l->offset & ~(uint64_t)4095;

		if (m->pgoff >= lo && m->pgoff < l->offset + l->filesz &&
		    (l->exec || i + 1 == f->nloads)) {
			bias = m->start - m->pgoff + l->offset - l->vaddr;
			found = true;
		}
	}
	/* A mapping of a non-executable segment: take any that holds it. */
	for (i = 0; i < f->nloads && !found; i++) {
		const struct uw_load *l = &f->loads[i];
		uint64_t lo = l->offset & ~(uint64_t)4095;

		if (m->pgoff >= lo && m->pgoff < l->offset + l->filesz) {
			bias = m->start - m->pgoff + l->offset - l->vaddr;
			found = true;
		}
	}
	if (!found) {
		err = -ENOEXEC;
		goto unref;
	}
	err = proc_reserve(p, 1);
	if (err)
		goto unref;
	i = proc_lower(p, m->start);
	memmove(&p->maps[i + 1], &p->maps[i], (p->n - i) * sizeof(*p->maps));
	p->maps[i].start = m->start;
	p->maps[i].end = m->end;
	p->maps[i].bias = bias;
	p->maps[i].file = f;	/* takes the reference */
	p->n++;
	u->nmaps++;
	return 0;
unref:
	file_unref(u, f);
	return err;
}

void unwinder_unmap(struct unwinder *u, pid_t pid, uint64_t start,
		    uint64_t end)
{
	struct uw_proc *p;

	if (!u || start >= end)
		return;
	p = proc_find(u, pid);
	if (p)
		p->gen = ++u->next_gen;
	/* Cutting out a whole run never splits, so never fails. */
	if (p && proc_cut(u, p, start, end) != 0) {
		/* A split that could not grow the array: drop the mapping
		 * that contains the hole; unwinds through it stop early. */
		size_t i = proc_lower(p, start);

		if (i < p->n)
			proc_cut(u, p, p->maps[i].start, p->maps[i].end);
	}
}

void unwinder_forget(struct unwinder *u, pid_t pid)
{
	struct uw_proc **pp;

	if (!u)
		return;
	for (pp = &u->procs[(unsigned)pid % UW_PROC_BUCKETS]; *pp;
	     pp = &(*pp)->hnext) {
		struct uw_proc *p = *pp;

		if (p->pid != pid)
			continue;
		*pp = p->hnext;
		if (u->last == p)
			u->last = NULL;
		u->nprocs--;
		proc_free(u, p);
		return;
	}
}

void unwinder_last_extent(const struct unwinder *u, uint64_t *used,
			  uint64_t *nofp)
{
	*used = u ? u->last_used : 0;
	*nofp = u ? u->last_nofp : 0;
}

void unwinder_stats(const struct unwinder *u, struct unwind_stats *st)
{
	if (!u || !st)
		return;
	st->row_hits = u->hits;
	st->row_misses = u->misses;
	st->files_open = u->nfiles;
	st->procs = u->nprocs;
	st->maps = u->nmaps;
	st->memo_hits = u->memo_hits;
	st->memo_misses = u->memo_misses;
}

void unwinder_set_cache(struct unwinder *u, int on)
{
	size_t i;

	if (!u)
		return;
	u->nocache = !on;
	for (i = 0; i < UW_ROWS; i++)
		u->rows[i].serial = 0;
}

void unwinder_set_memo(struct unwinder *u, int on)
{
	if (!u)
		return;
	u->nomemo = !on;
	memo_clear(u);
}

/* ---- compiling CFI rows ------------------------------------------------ */

/* Copy @n operations into @row's pool; resolve branch targets. */
static int row_add_ops(struct uw_row *row, const Dwarf_Op *ops, size_t n,
		       struct uw_rule *rule)
{
	size_t i, j;

	if (n == 0 || n > (size_t)(UW_MAX_OPS - row->nops))
		return -1;
	rule->first = row->nops;
	rule->nops = (uint8_t)n;
	for (i = 0; i < n; i++) {
		struct uw_op *o = &row->ops[row->nops + i];

		o->atom = ops[i].atom;
		o->n1 = ops[i].number;
		o->n2 = 0;
		if (ops[i].atom == DW_OP_bregx) {
			int64_t off = (int64_t)ops[i].number2;

			if (off < INT32_MIN || off > INT32_MAX)
				return -1;
			o->n2 = (int32_t)off;
		} else if (ops[i].atom == DW_OP_bra ||
			   ops[i].atom == DW_OP_skip) {
			/* The target is relative to the end of this op:
			 * 1 byte of opcode and 2 of operand. */
			Dwarf_Word to = ops[i].offset + 3 +
					(int64_t)(int16_t)ops[i].number;

			for (j = 0; j < n && ops[j].offset != to; j++)
				;
			if (j == n)
				return -1;
			o->n1 = j;
		}
	}
	row->nops += (uint8_t)n;
	return 0;
}

static bool fits32(uint64_t v)
{
	int64_t s = (int64_t)v;

	return s >= INT32_MIN && s <= INT32_MAX;
}

/* Classify one register's rule from dwarf_frame_register(). */
static int row_reg(struct uw_row *row, int regno, const Dwarf_Op *ops,
		   size_t n, bool undef, struct uw_rule *r)
{
	memset(r, 0, sizeof(*r));
	if (n == 0) {
		r->kind = undef ? RK_UNDEF : RK_SAME;
		/*
		 * libdw 0.188's default x86-64 rules have rax and rbx swapped
		 * (same_value for rax, undefined for rbx).  Apply the ABI:
		 * callee-saved registers survive a call, the others do not.
		 * A signal frame gives explicit rules for all of them.
		 */
		if (regno != UW_RA && regno != UW_SP)
			r->kind = (UW_CALLEE_SAVED & (1u << regno)) ?
				  RK_SAME : RK_UNDEF;
		return 0;
	}
	if (ops[0].atom == DW_OP_call_frame_cfa && n <= 3) {
		size_t i = 1;
		uint64_t off = 0;

		if (i < n && ops[i].atom == DW_OP_plus_uconst)
			off = ops[i++].number;
		if (fits32(off)) {
			if (i == n) {
				r->kind = RK_AT_CFA;
				r->off = (int32_t)off;
				return 0;
			}
			if (i + 1 == n && ops[i].atom == DW_OP_stack_value) {
				r->kind = RK_CFA;
				r->off = (int32_t)off;
				return 0;
			}
		}
	}
	if (n == 1 && ops[0].atom == DW_OP_regx) {
		if (ops[0].number >= UW_NREGS) {
			/* Saved in a register we do not track (say, an
			 * xmm register): lost for us. */
			r->kind = RK_UNDEF;
			return regno == UW_RA ? -1 : 0;
		}
		r->kind = RK_REG;
		r->reg = (uint8_t)ops[0].number;
		return 0;
	}
	if (ops[n - 1].atom == DW_OP_stack_value) {
		r->kind = RK_VAL_EXPR;
		return row_add_ops(row, ops, n - 1, r);
	}
	r->kind = RK_EXPR;
	return row_add_ops(row, ops, n, r);
}

/* Compile @fr into @row; -1 when it uses what we cannot evaluate. */
static int row_compile(struct uw_row *row, Dwarf_Frame *fr)
{
	Dwarf_Op *ops;
	size_t n;
	bool sig = false;
	int regno;

	row->nops = 0;
	row->go = 0;
	row->injected = 0;
	if (dwarf_frame_info(fr, NULL, NULL, &sig) != UW_RA)
		return -1;
	row->signal = sig;
	if (dwarf_frame_cfa(fr, &ops, &n) != 0 || n == 0)
		return -1;
	memset(&row->cfa, 0, sizeof(row->cfa));
	if (n == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < UW_NREGS &&
	    fits32(ops[0].number2)) {
		row->cfa.kind = RK_REG_OFF;
		row->cfa.reg = (uint8_t)ops[0].number;
		row->cfa.off = (int32_t)ops[0].number2;
	} else {
		row->cfa.kind = RK_VAL_EXPR;
		if (row_add_ops(row, ops, n, &row->cfa) != 0)
			return -1;
	}
	for (regno = 0; regno < UW_NREGS; regno++) {
		Dwarf_Op mem[3];

		if (dwarf_frame_register(fr, regno, mem, &ops, &n) != 0) {
			/* Like libdwfl: a register whose rule is broken is
			 * lost, and only the return address matters. */
			if (regno == UW_RA)
				return -1;
			memset(&row->regs[regno], 0, sizeof(row->regs[0]));
			continue;
		}
		if (row_reg(row, regno, ops, n, n == 0 && ops == mem,
			    &row->regs[regno]) != 0)
			return -1;
	}
	return 0;
}

/* Whether @f has a CFI row for ELF address @addr (.eh_frame, then
 * .debug_frame). */
static bool file_has_cfi(struct unwinder *u, struct uw_file *f, uint64_t addr)
{
	Dwarf_Frame *fr = NULL;

	if (!f->eh_tried) {
		f->eh_tried = true;
		f->eh = dwarf_getcfi_elf(f->elf);
	}
	if (f->eh && dwarf_cfi_addrframe(f->eh, addr, &fr) == 0) {
		free(fr);
		return true;
	}
	if (!f->dbg_tried)
		file_open_debug_frame(u, f);
	if (f->dbg && dwarf_cfi_addrframe(f->dbg, addr, &fr) == 0) {
		free(fr);
		return true;
	}
	return false;
}

/*
 * Whether ELF address @addr of @f, which has no CFI, lies in the entry
 * code of a program: from e_entry up to the first byte with CFI, which
 * must come within UW_ENTRY_MAX bytes.  The kernel jumps there with a
 * fresh stack and nothing calls it, so a frame there is the outermost one
 * even without CFI to say so.  ld.so's _start and _dl_start_user are such
 * code (glibc's RTLD_START, hand-written, no CFI directives, 64 bytes in glibc 2.36):
 * every stack of ld.so loading a program or running the constructors ends
 * there.  A program's own _start has CFI that marks its return address
 * undefined, and never comes here.  A file without CFI after its entry
 * (no CFI at all, or corrupt) gets nothing from this rule: what follows
 * its entry could be any function.
 */
static bool file_in_entry(struct unwinder *u, struct uw_file *f,
			  uint64_t addr)
{
	if (!f->entry || addr < f->entry || addr - f->entry >= UW_ENTRY_MAX)
		return false;
	if (!f->entry_known) {
		f->entry_known = true;
		f->entry_end = f->entry;
		while (f->entry_end < f->entry + UW_ENTRY_MAX &&
		       !file_has_cfi(u, f, f->entry_end))
			f->entry_end++;
		if (f->entry_end == f->entry + UW_ENTRY_MAX)
			f->entry_end = f->entry;	/* no CFI after it */
	}
	return addr < f->entry_end;
}

/*
 * Go's signal return trampoline (runtime.sigreturn, its sa_restorer): SP
 * points at the kernel's ucontext, whose uc_mcontext (at 40) holds r8-r15,
 * rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip (glibc's __restore_rt has
 * the same rules in CFI).  A signal row: the frame below is exact.
 */
static enum uw_row_state row_go_sigreturn(struct uw_row *row)
{
	/* Offsets in the ucontext of DWARF registers 0-16. */
	static const uint8_t at[UW_NREGS] = {
		144, 136, 152, 128, 112, 104, 120, 160,
		40, 48, 56, 64, 72, 80, 88, 96, 168,
	};
	struct uw_op *op = row->ops;

	row->signal = 1;
	op[0] = (struct uw_op){ .atom = DW_OP_breg7, .n1 = 160 };
	op[1] = (struct uw_op){ .atom = DW_OP_deref };
	row->cfa = (struct uw_rule){ .kind = RK_VAL_EXPR, .first = 0,
				     .nops = 2 };
	for (unsigned r = 0; r < UW_NREGS; r++) {
		row->ops[2 + r] = (struct uw_op){ .atom = DW_OP_breg7,
						  .n1 = at[r] };
		row->regs[r] = (struct uw_rule){ .kind = RK_EXPR,
						 .first = (uint8_t)(2 + r),
						 .nops = 1 };
	}
	row->nops = 2 + UW_NREGS;
	return ROW_OK;
}

/*
 * The row of ELF address @addr of @f from Go's function table, as the Go
 * runtime's traceback unwinds (runtime/traceback.go, gentraceback()): the
 * CFA, which is the caller's SP, is SP + pcsp + 8, the return address is
 * at CFA - 8.  Go restores no other register for its caller, and keeps no
 * rule for them: they are lost.  A TOPFRAME function ends the stack as a
 * whole one; an SPWRITE function ends it as a broken one, as the
 * runtime's profiler does (it cannot know where the SP came from).
 */
static enum uw_row_state row_go(struct uw_file *f, uint64_t addr,
				struct uw_row *row)
{
	struct sym_gofunc fn;

	if (!f->go_tried) {
		f->go_tried = true;
		if (!f->vdso &&
		    sym_gofuncs_open_mem(f->image, f->image_size, &f->go) != 0)
			f->go = NULL;
	}
	if (!f->go || sym_gofuncs_find(f->go, addr, &fn) != 0)
		return ROW_NOCFI;
	memset(&row->cfa, 0, sizeof(row->cfa));
	memset(row->regs, 0, sizeof(row->regs));	/* RK_UNDEF */
	row->nops = 0;
	row->signal = 0;
	row->go = 1;
	row->injected = !!(fn.flags & SYM_GOFUNC_INJECTED);
	if (fn.flags & SYM_GOFUNC_TOPFRAME)
		return ROW_OK;	/* the return address undefined */
	if (fn.flags & SYM_GOFUNC_SIGRETURN)
		return row_go_sigreturn(row);
	if ((fn.flags & SYM_GOFUNC_SPWRITE) || fn.sp_delta < 0 ||
	    fn.sp_delta > INT32_MAX - 8)
		return ROW_BAD;
	row->cfa = (struct uw_rule){ .kind = RK_REG_OFF, .reg = UW_SP,
				     .off = (int32_t)fn.sp_delta + 8 };
	row->regs[UW_RA] = (struct uw_rule){ .kind = RK_AT_CFA, .off = -8 };
	row->regs[UW_SP] = (struct uw_rule){ .kind = RK_CFA };
	return ROW_OK;
}

/* Find the row for ELF address @addr of @f and compile it into @row. */
static enum uw_row_state row_fill(struct unwinder *u, struct uw_file *f,
				  uint64_t addr, struct uw_row *row)
{
	Dwarf_Frame *fr = NULL;
	int rc;

	if (!f->eh_tried) {
		f->eh_tried = true;
		f->eh = dwarf_getcfi_elf(f->elf);
	}
	if (!(f->eh && dwarf_cfi_addrframe(f->eh, addr, &fr) == 0)) {
		fr = NULL;
		if (!f->dbg_tried)
			file_open_debug_frame(u, f);
		if (!(f->dbg && dwarf_cfi_addrframe(f->dbg, addr, &fr) == 0))
			return row_go(f, addr, row);
	}
	rc = row_compile(row, fr);
	free(fr);
	return rc == 0 ? ROW_OK : ROW_BAD;
}

/* Set @row's live mask: the registers row_apply() has a rule for. */
static void row_live(struct uw_row *row)
{
	int regno;

	row->live = 0;
	for (regno = 0; regno < UW_NREGS; regno++)
		if (row->regs[regno].kind != RK_UNDEF)
			row->live |= 1u << regno;
}

static struct uw_row *row_get(struct unwinder *u, struct uw_file *f,
			      uint64_t addr)
{
	struct uw_row *row;

	if (u->nocache) {
		row = &u->scratch;
	} else {
		uint64_t h = (addr ^ ((uint64_t)f->serial << 40)) *
			     0x9e3779b97f4a7c15ULL;

		row = &u->rows[h >> (64 - 11)];
		if (row->serial == f->serial && row->addr == addr) {
			u->hits++;
			return row;
		}
	}
	u->misses++;
	row->serial = f->serial;
	row->addr = addr;
	row->state = row_fill(u, f, addr, row);
	row_live(row);
	return row;
}

/* ---- evaluating rows ----------------------------------------------------- */

/*
 * The memo's record of a read of @len bytes at @off from the SP: it
 * succeeded with @val, or (@ok false) failed for want of copy.  A read at
 * or above the SP succeeds iff off + len <= the copy's size, so a replay
 * reads the same words (and fails the same reads) iff its size is in
 * [size_min, size_end).  A read below the SP fails whatever the size, and
 * is not recorded.
 */
static __attribute__((noinline)) void memo_read(struct uw_memo *m,
						uint64_t off, size_t len,
						bool ok, uint64_t val)
{
	if (off > UINT64_MAX - len)
		return;		/* fails for any size */
	if (!ok) {
		if (off + len < m->size_end)
			m->size_end = off + len;
		return;
	}
	if (off + len > m->size_min)
		m->size_min = off + len;
	if (m->nreads == UW_MEMO_READS) {
		m->full = true;
		return;
	}
	/* (off + len <= the copy's size <= UINT32_MAX: memo_start()) */
	m->reads[m->nreads++] = (struct uw_memo_read){
		.off = (uint32_t)off, .len = (uint32_t)len, .val = val };
}

/* (inlined, as it was before the memo: it is on every frame's path) */
static inline __attribute__((always_inline)) int
stack_read(const struct uw_ctx *c, uint64_t addr, size_t size, uint64_t *v)
{
	uint64_t off = addr - c->sp;

	if (addr < c->sp || off > c->size || c->size - off < size) {
		if (c->rec && addr >= c->sp)
			memo_read(c->rec, off, size, false, 0);
		return UNWIND_STOP_READ;
	}
	*v = 0;
	if (size == 8)
		memcpy(v, c->stack + off, 8);	/* a load, not a call */
	else
		memcpy(v, c->stack + off, size);
	if (c->rec)
		memo_read(c->rec, off, size, true, *v);
	return 0;
}

/* Register @reg of @rg is read for more than a copy (an address, a CFA,
 * an expression, a PC, an SP compared): if it is a sampled register
 * passed up as is, the memo's result depends on its value. */
static void reg_use(const struct uw_ctx *c, const struct uw_regs *rg,
		    unsigned reg)
{
	if (c->rec && rg->src[reg] != UW_SRC_NONE)
		c->rec->used |= 1u << rg->src[reg];
}

#define PUSH(x)                                                     \
	do {                                                        \
		uint64_t push_ = (x);                               \
		if (sp == UW_EXPR_STACK)                            \
			return UNWIND_STOP_BADCFI;                  \
		st[sp++] = push_;                                   \
	} while (0)
#define POP(x)                                                      \
	do {                                                        \
		if (sp == 0)                                        \
			return UNWIND_STOP_BADCFI;                  \
		(x) = st[--sp];                                     \
	} while (0)

/* The value of a DW_OP_reg*, DW_OP_breg*, DW_OP_regx or DW_OP_bregx
 * operation; false when its register is unknown. */
static bool reg_value(const struct uw_op *op, const struct uw_regs *rg,
		      const struct uw_ctx *c, uint64_t *out)
{
	bool breg = op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31;
	unsigned reg;
	uint64_t v;

	if (breg)
		reg = op->atom - DW_OP_breg0;
	else if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31)
		reg = op->atom - DW_OP_reg0;
	else
		reg = op->n1 < UW_NREGS ? (unsigned)op->n1 : UW_NREGS;
	if (reg >= UW_NREGS || !(rg->valid & (1u << reg)))
		return false;
	reg_use(c, rg, reg);
	v = rg->r[reg];
	if (breg)
		v += op->n1;
	else if (op->atom == DW_OP_bregx)
		v += (uint64_t)(int64_t)op->n2;
	*out = v;
	return true;
}

/* The binary operation @atom of @a (the deeper operand) and @b; false
 * on a division by zero or one that overflows. */
static bool binop(unsigned atom, uint64_t a, uint64_t b, uint64_t *v)
{
	switch (atom) {
	case DW_OP_and: *v = a & b; break;
	case DW_OP_or: *v = a | b; break;
	case DW_OP_xor: *v = a ^ b; break;
	case DW_OP_plus: *v = a + b; break;
	case DW_OP_minus: *v = a - b; break;
	case DW_OP_mul: *v = a * b; break;
	case DW_OP_div:
		if (b == 0 || ((int64_t)a == INT64_MIN && (int64_t)b == -1))
			return false;
		*v = (uint64_t)((int64_t)a / (int64_t)b);
		break;
	case DW_OP_mod:
		if (b == 0)
			return false;
		*v = a % b;
		break;
	case DW_OP_shl: *v = b < 64 ? a << b : 0; break;
	case DW_OP_shr: *v = b < 64 ? a >> b : 0; break;
	case DW_OP_shra:
		*v = (uint64_t)((int64_t)a >> (b < 64 ? b : 63));
		break;
	case DW_OP_le: *v = (int64_t)a <= (int64_t)b; break;
	case DW_OP_ge: *v = (int64_t)a >= (int64_t)b; break;
	case DW_OP_eq: *v = a == b; break;
	case DW_OP_lt: *v = (int64_t)a < (int64_t)b; break;
	case DW_OP_gt: *v = (int64_t)a > (int64_t)b; break;
	default: *v = a != b; break;
	}
	return true;
}

/*
 * Evaluate @rule's expression: registers from @rg, DW_OP_call_frame_cfa
 * from @cfa (NULL while computing the CFA), memory from the stack copy.
 * The CFI subset of DWARF expressions, as libgcc's execute_stack_op.
 */
static int eval_expr(const struct uw_row *row, const struct uw_rule *rule,
		     const struct uw_regs *rg, const uint64_t *cfa,
		     const struct uw_ctx *c, uint64_t *out)
{
	const struct uw_op *ops = row->ops + rule->first;
	uint64_t st[UW_EXPR_STACK], a, b, v;
	size_t sp = 0, i = 0, n = rule->nops;
	unsigned steps = 0;
	int rc;

	while (i < n) {
		const struct uw_op *op = &ops[i++];

		if (++steps > UW_EXPR_STEPS)
			return UNWIND_STOP_BADCFI;
		switch (op->atom) {
		case DW_OP_lit0 ... DW_OP_lit31:
			PUSH((uint64_t)(op->atom - DW_OP_lit0));
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
		case DW_OP_consts:
			PUSH(op->n1);
			break;
		case DW_OP_reg0 ... DW_OP_reg31:
		case DW_OP_breg0 ... DW_OP_breg31:
		case DW_OP_regx:
		case DW_OP_bregx:
			if (!reg_value(op, rg, c, &v))
				return UNWIND_STOP_BADCFI;
			PUSH(v);
			break;
		case DW_OP_call_frame_cfa:
			if (!cfa)
				return UNWIND_STOP_BADCFI;
			PUSH(*cfa);
			break;
		case DW_OP_deref:
		case DW_OP_deref_size:
			POP(a);
			b = op->atom == DW_OP_deref ? 8 : op->n1;
			if (b == 0 || b > 8)
				return UNWIND_STOP_BADCFI;
			rc = stack_read(c, a, (size_t)b, &v);
			if (rc)
				return rc;
			PUSH(v);
			break;
		case DW_OP_dup:
			POP(a);
			PUSH(a);
			PUSH(a);
			break;
		case DW_OP_drop:
			POP(a);
			break;
		case DW_OP_pick:
			if (op->n1 >= sp)
				return UNWIND_STOP_BADCFI;
			PUSH(st[sp - 1 - op->n1]);
			break;
		case DW_OP_over:
			if (sp < 2)
				return UNWIND_STOP_BADCFI;
			PUSH(st[sp - 2]);
			break;
		case DW_OP_swap:
			POP(a);
			POP(b);
			PUSH(a);
			PUSH(b);
			break;
		case DW_OP_rot:
			if (sp < 3)
				return UNWIND_STOP_BADCFI;
			a = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = st[sp - 3];
			st[sp - 3] = a;
			break;
		case DW_OP_abs:
			POP(a);
			PUSH((int64_t)a < 0 ? -a : a);
			break;
		case DW_OP_neg:
			POP(a);
			PUSH(-a);
			break;
		case DW_OP_not:
			POP(a);
			PUSH(~a);
			break;
		case DW_OP_plus_uconst:
			POP(a);
			PUSH(a + op->n1);
			break;
		case DW_OP_and: case DW_OP_or: case DW_OP_xor: case DW_OP_plus:
		case DW_OP_minus: case DW_OP_mul: case DW_OP_div:
		case DW_OP_mod: case DW_OP_shl: case DW_OP_shr:
		case DW_OP_shra: case DW_OP_le: case DW_OP_ge: case DW_OP_eq:
		case DW_OP_lt: case DW_OP_gt: case DW_OP_ne:
			POP(b);
			POP(a);
			if (!binop(op->atom, a, b, &v))
				return UNWIND_STOP_BADCFI;
			PUSH(v);
			break;
		case DW_OP_bra:
			POP(a);
			if (a != 0)
				i = (size_t)op->n1;
			break;
		case DW_OP_skip:
			i = (size_t)op->n1;
			break;
		case DW_OP_nop:
			break;
		default:
			return UNWIND_STOP_BADCFI;
		}
	}
	if (sp == 0)
		return UNWIND_STOP_BADCFI;
	*out = st[sp - 1];
	return 0;
}

#undef PUSH
#undef POP

/*
 * Apply @row to the frame @in, giving its caller @out.  Returns 0,
 * UW_OUTERMOST, or an enum unwind_stop.  A register other than the return
 * address that cannot be recovered is only marked unknown.  @track: keep
 * the registers' src and tell the memo their uses (c->rec set); a
 * constant, so that the unwinds that record nothing (c->rec NULL) are
 * compiled without it.
 */
static inline __attribute__((always_inline)) int
row_apply_x(const struct uw_row *row, const struct uw_regs *in,
	    const struct uw_ctx *c, struct uw_regs *out, const bool track)
{
	uint64_t cfa, a, v;
	uint32_t live;
	int regno, rc;

	if (row->regs[UW_RA].kind == RK_UNDEF)
		return UW_OUTERMOST;
	if (row->cfa.kind == RK_REG_OFF) {
		if (!(in->valid & (1u << row->cfa.reg)))
			return UNWIND_STOP_BADCFI;
		if (track)
			reg_use(c, in, row->cfa.reg);
		cfa = in->r[row->cfa.reg] + (uint64_t)(int64_t)row->cfa.off;
	} else {
		rc = eval_expr(row, &row->cfa, in, NULL, c, &cfa);
		if (rc)
			return rc;
	}
	out->valid = 0;
	/* The registers with a rule, in ascending order (RK_UNDEF ones
	 * would be skipped anyway). */
	for (live = row->live; live; live &= live - 1) {
		const struct uw_rule *r;
		uint8_t src = UW_SRC_NONE;

		regno = __builtin_ctz(live);
		r = &row->regs[regno];
		rc = 0;
		switch (r->kind) {
		case RK_SAME:
			if (!(in->valid & (1u << regno)))
				continue;
			v = in->r[regno];
			src = in->src[regno];
			break;
		case RK_AT_CFA:
			rc = stack_read(c, cfa + (uint64_t)(int64_t)r->off, 8,
					&v);
			break;
		case RK_CFA:
			v = cfa + (uint64_t)(int64_t)r->off;
			break;
		case RK_REG:
			if (!(in->valid & (1u << r->reg)))
				continue;
			v = in->r[r->reg];
			src = in->src[r->reg];
			break;
		case RK_EXPR:
			rc = eval_expr(row, r, in, &cfa, c, &a);
			if (rc == 0)
				rc = stack_read(c, a, 8, &v);
			break;
		case RK_VAL_EXPR:
			rc = eval_expr(row, r, in, &cfa, c, &v);
			break;
		default:
			rc = UNWIND_STOP_BADCFI;
			break;
		}
		if (rc) {
			if (regno == UW_RA)
				return rc;
			continue;
		}
		out->r[regno] = v;
		if (track)
			out->src[regno] = src;
		out->valid |= 1u << regno;
	}
	if (!(out->valid & (1u << UW_RA)))
		return UNWIND_STOP_BADCFI;
	if (!(out->valid & (1u << UW_SP))) {
		/* The caller's SP is the CFA, by definition on x86-64. */
		out->r[UW_SP] = cfa;
		if (track)
			out->src[UW_SP] = UW_SRC_NONE;
		out->valid |= 1u << UW_SP;
	}
	return 0;
}

static int row_apply(const struct uw_row *row, const struct uw_regs *in,
		     const struct uw_ctx *c, struct uw_regs *out)
{
	return row_apply_x(row, in, c, out, false);
}

/*
 * The row of runtime address @look (already pc - 1 for a return address)
 * of process @p: 0 and *out (borrowed: valid until the next row lookup),
 * UW_OUTERMOST for a frame in a program's entry code without CFI
 * (file_in_entry(): no row), or UNWIND_STOP_NOMAP, _NOCFI, _BADCFI.
 */
static int row_at(struct unwinder *u, struct uw_proc *p, uint64_t look,
		  struct uw_row **out)
{
	struct uw_map *m = p ? map_find(p, look) : NULL;
	struct uw_row *row;

	if (!m)
		return UNWIND_STOP_NOMAP;
	row = row_get(u, m->file, look - m->bias);
	if (row->state == ROW_NOCFI)
		return file_in_entry(u, m->file, look - m->bias) ?
		       UW_OUTERMOST : UNWIND_STOP_NOCFI;
	if (row->state != ROW_OK)
		return UNWIND_STOP_BADCFI;
	*out = row;
	return 0;
}

/* enum unwind_fp of a compiled row. */
static int row_fp_kind(const struct uw_row *row)
{
	const struct uw_rule *bp = &row->regs[UW_BP];

	if (row->signal)
		return UNWIND_FP_SIGNAL;
	if (row->regs[UW_RA].kind == RK_UNDEF)
		return UNWIND_FP_OUTERMOST;
	/* Go's table says nothing of rbp (Go keeps frame pointers, but
	 * where in the prologue rbp becomes one it does not say). */
	if (row->go)
		return UNWIND_FP_UNKNOWN;
	/* push %rbp; mov %rsp, %rbp: [rbp] = the caller's rbp, [rbp + 8] =
	 * the return address, which is all a frame-pointer walk reads. */
	if (row->cfa.kind == RK_REG_OFF && row->cfa.reg == UW_BP &&
	    row->cfa.off == 16 && bp->kind == RK_AT_CFA && bp->off == -16)
		return UNWIND_FP_FRAME;
	if (bp->kind == RK_SAME)
		return UNWIND_FP_KEPT;
	return UNWIND_FP_SAVED;
}

/*
 * One frame up from @cur.  @exact: cur's PC is exact (the leaf, or a frame
 * interrupted by a signal), so look its row up at the PC itself rather
 * than at PC - 1.  *signal: the row is a signal trampoline's.  *injected:
 * a Go function the runtime injects a call to (row_go()): the caller's PC
 * is exact.  @track: as row_apply_x().
 */
static inline __attribute__((always_inline)) int
step(struct unwinder *u, struct uw_proc *p, const struct uw_regs *cur,
     bool exact, const struct uw_ctx *c, struct uw_regs *next, bool *signal,
     bool *injected, bool *fp_frame, const bool track)
{
	uint64_t look = exact ? cur->r[UW_RA] : cur->r[UW_RA] - 1;
	struct uw_row *row = NULL;
	int rc = row_at(u, p, look, &row);

	if (rc)
		return rc;
	*signal = row->signal;
	*injected = row->injected;
	*fp_frame = row_fp_kind(row) == UNWIND_FP_FRAME;
	return row_apply_x(row, cur, c, next, track);
}

/*
 * Ask for the first UW_PREFETCH bytes of the stack copy at once.  The copy
 * is fresh from the kernel (a ring buffer written on another CPU), so each
 * frame's read of it misses the cache, and the reads are serial: the next
 * frame's row is found from the return address just read.  Asked for
 * together, the lines arrive in parallel.  Changes no result.
 */
static void stack_prefetch(const struct uw_ctx *c)
{
	size_t off, n = c->size < UW_PREFETCH ? c->size : UW_PREFETCH;

	for (off = 0; off < n; off += 64)
		__builtin_prefetch(c->stack + off);
}

static void regs_load(const uint64_t *regs, struct uw_regs *rg)
{
	int i;

	for (i = 0; i < UW_NREGS; i++)
		rg->r[i] = regs[dwarf_to_perf[i]];
	rg->valid = UW_ALL_REGS;
}

int unwinder_unwind(struct unwinder *u, pid_t pid, const uint64_t *regs,
		    const void *stack, size_t stack_size, uint64_t *pcs,
		    size_t max, size_t *n, int *stopped_early)
{
	return unwinder_unwind_exact(u, pid, regs, stack, stack_size, pcs,
				     NULL, max, n, stopped_early);
}

/* ---- the unwind memo ---------------------------------------------------- */

/*
 * The memo keeps full unwinds, one slot a key (pid, IP, SP) in the set the
 * key hashes to, with what each result depends on.  The result of
 * unwind_full() is a function of: the rows it looks up, which depend on
 * the process's mappings (uw_proc.gen) and on the files' CFI (fixed once
 * a file is open); the sampled registers it uses for more than a copy
 * (reg_use(): as a PC, an SP, a CFA's base, in an expression); the stack
 * words it reads (memo_read()); whether each read falls within the copy
 * (the size range); and @max (memo_match()).  Every branch it takes and
 * every value it outputs comes from those: a register that is only
 * passed up by "same value" and "register" rules carries its sampled
 * value with its src, and is recorded when something reads it.  So when
 * all of them are equal the unwind would take the same steps and give
 * the same frames, exact flags, stop and extents, which memo_replay()
 * copies.  (As with the row cache, this assumes libdw gives a file's
 * address the same row each time; it does for CFI whose FDEs do not
 * overlap.)
 */
/* The first of the UW_MEMO_WAYS slots of the set of key (pid, IP, SP).
 * (Sets, not one slot a key: two threads that block in turn, whose keys
 * fell in one slot, would each evict the other for ever.) */
static struct uw_memo **memo_set(struct unwinder *u, pid_t pid, uint64_t ip,
				 uint64_t sp)
{
	uint64_t h = ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ULL) ^
		     (ip * 0xc2b2ae3d27d4eb4fULL) ^ (sp * 0x165667b19e3779f9ULL);
	size_t set = (size_t)(h >> 58) % (UW_MEMO_SLOTS / UW_MEMO_WAYS);

	return &u->memo[set * UW_MEMO_WAYS];
}

/* The slot of @set holding key (pid, IP, SP), or NULL. */
static struct uw_memo *memo_keyed(struct uw_memo **set, pid_t pid,
				  uint64_t ip, uint64_t sp)
{
	for (int w = 0; w < UW_MEMO_WAYS; w++) {
		struct uw_memo *m = set[w];

		if (m && m->pid == pid && m->ip == ip && m->sp == sp)
			return m;
	}
	return NULL;
}

/* Whether @m's unwind is the one of this sample (see above). */
static bool memo_match(const struct uw_memo *m, const struct uw_proc *p,
		       const uint64_t *regs, const unsigned char *stack,
		       size_t size, size_t max)
{
	uint32_t used, i;

	if (!m->valid || m->pid != p->pid || m->gen != p->gen ||
	    m->ip != regs[UNWIND_REG_IP] || m->sp != regs[UNWIND_REG_SP])
		return false;
	if (size < m->size_min || size >= m->size_end)
		return false;
	/* The loop ends at @max frames only if it did (UNWIND_STOP_DEPTH):
	 * any other end came before @max did. */
	if (m->stop == UNWIND_STOP_DEPTH ? max != m->n : max < m->n)
		return false;
	for (used = m->used; used; used &= used - 1) {
		unsigned r = (unsigned)__builtin_ctz(used);

		if (regs[dwarf_to_perf[r]] != m->regs[r])
			return false;
	}
	for (i = 0; i < m->nreads; i++) {
		const struct uw_memo_read *rd = &m->reads[i];
		uint64_t v = 0;

		/* (a constant size: a load, not a call) */
		if (rd->len == 8)
			memcpy(&v, stack + rd->off, 8);
		else
			memcpy(&v, stack + rd->off, rd->len);
		if (v != rd->val)
			return false;
	}
	return true;
}

/*
 * The slot of this sample in @set, emptied for recording; NULL when the
 * sample is not to be recorded, or out of memory (no memo then).  A
 * sample is recorded when its key (pid, IP, SP) is in the set already (a
 * slot whose unwind did not match, or that only kept the key), so that
 * samples whose key never comes back (most on-CPU samples) cost the
 * key's store, not a recording: the first one only keeps the key, in an
 * empty slot or the one least recently used.
 */
static struct uw_memo *memo_start(struct unwinder *u, struct uw_memo **set,
				  const struct uw_proc *p,
				  const struct uw_regs *rg, size_t size,
				  size_t max)
{
	struct uw_memo *m;
	bool again;
	int w, lru = 0;

	if (max > UW_MEMO_FRAMES || size > UINT32_MAX)
		return NULL;
	m = memo_keyed(set, p->pid, rg->r[UW_RA], rg->r[UW_SP]);
	again = m != NULL;
	for (w = 0; !m && w < UW_MEMO_WAYS; w++) {
		if (!set[w]) {
			set[w] = malloc(sizeof(*set[w]));
			if (!set[w])
				return NULL;
			m = set[w];
		} else if (set[w]->tick < set[lru]->tick) {
			lru = w;
		}
	}
	if (!m)
		m = set[lru];
	m->tick = ++u->memo_tick;
	m->valid = m->full = false;
	m->pid = p->pid;
	m->ip = rg->r[UW_RA];
	m->sp = rg->r[UW_SP];
	if (!again)
		return NULL;
	m->gen = p->gen;
	m->used = 0;
	memcpy(m->regs, rg->r, sizeof(m->regs));
	m->size_min = 0;
	m->size_end = UINT64_MAX;
	m->nreads = 0;
	return m;
}

static void memo_replay(struct unwinder *u, const struct uw_memo *m,
			uint64_t *pcs, unsigned char *exact, size_t *n,
			int *stopped_early)
{
	memcpy(pcs, m->pcs, m->n * sizeof(*pcs));
	if (exact)
		memcpy(exact, m->exact, m->n);
	*n = m->n;
	*stopped_early = m->stop;
	u->last_used = m->last_used;
	u->last_nofp = m->last_nofp;
}

/*
 * The unwind itself.  c->rec: the memo slot to record into (its exact[] is
 * written here, the rest by memo_read(), reg_use() and the caller), or
 * NULL; @track: c->rec is set (see row_apply_x()).
 */
static inline __attribute__((always_inline)) void
unwind_full_x(struct unwinder *u, struct uw_proc *p, struct uw_regs *cur,
	      struct uw_ctx *c, uint64_t *pcs, unsigned char *exact_out,
	      size_t max, size_t *n, int *stopped_early, const bool track)
{
	struct uw_memo *rec = c->rec;
	struct uw_regs next;
	bool exact = true, signal = false, injected = false, fp_frame = false;
	uint64_t depth;
	size_t k = 0;
	int stop;

	u->last_used = u->last_nofp = 0;
	for (;;) {
		if (exact_out)
			exact_out[k] = exact;
		if (track) {
			rec->exact[k] = exact;
			reg_use(c, cur, UW_RA);
		}
		pcs[k++] = cur->r[UW_RA];
		stop = step(u, p, cur, exact, c, &next, &signal, &injected,
			    &fp_frame, track);
		/* A signal trampoline's own PC (libc's __restore_rt) is where
		 * the handler returned to, with no call before it: exact,
		 * as elfutils' dwfl_frame_pc() has it (an activation when the
		 * frame it unwinds to is a signal frame) and eu-stack and
		 * gdb show it.  Its row was found at PC - 1 all the same:
		 * glibc puts a NOP before __restore_rt for that. */
		if (signal && !stop) {
			if (exact_out)
				exact_out[k - 1] = 1;
			if (track)
				rec->exact[k - 1] = 1;
		}
		if (stop == UW_OUTERMOST) {
			stop = UNWIND_STOP_NONE;
			break;
		}
		if (stop)
			break;
		if (track)
			reg_use(c, &next, UW_RA);
		if (next.r[UW_RA] == 0)
			break;	/* a zero return address ends the chain */
		/* Frames are strictly nested: a caller's SP is above its
		 * callee's, except after a signal (sigaltstack). */
		if (track) {
			reg_use(c, &next, UW_SP);
			reg_use(c, cur, UW_SP);
		}
		if (!signal && next.r[UW_SP] <= cur->r[UW_SP]) {
			stop = UNWIND_STOP_BADCFI;
			break;
		}
		/* The caller's SP is this frame's CFA: the copy had to reach
		 * it (a sigaltstack frame may lie below the first SP). */
		depth = next.r[UW_SP] - c->sp;
		if (next.r[UW_SP] >= c->sp && depth > u->last_used)
			u->last_used = depth;
		if (next.r[UW_SP] >= c->sp && !fp_frame && depth > u->last_nofp)
			u->last_nofp = depth;
		if (k == max) {
			stop = UNWIND_STOP_DEPTH;
			break;
		}
		*cur = next;
		exact = signal || injected;
	}
	*n = k;
	*stopped_early = stop;
}

/* unwind_full_x(), with and without the memo's recording. */
static void unwind_full(struct unwinder *u, struct uw_proc *p,
			struct uw_regs *cur, struct uw_ctx *c, uint64_t *pcs,
			unsigned char *exact_out, size_t max, size_t *n,
			int *stopped_early)
{
	int i;

	if (!c->rec) {
		unwind_full_x(u, p, cur, c, pcs, exact_out, max, n,
			      stopped_early, false);
		return;
	}
	for (i = 0; i < UW_NREGS; i++)
		cur->src[i] = (uint8_t)i;
	unwind_full_x(u, p, cur, c, pcs, exact_out, max, n, stopped_early,
		      true);
}

int unwinder_unwind_exact(struct unwinder *u, pid_t pid, const uint64_t *regs,
			  const void *stack, size_t stack_size, uint64_t *pcs,
			  unsigned char *exact_out, size_t max, size_t *n,
			  int *stopped_early)
{
	struct uw_memo **set = NULL, *m;
	struct uw_regs cur;
	struct uw_proc *p;
	struct uw_ctx c;

	if (!u || !regs || !pcs || !n || !stopped_early || max == 0 ||
	    (!stack && stack_size))
		return -EINVAL;
	c.stack = stack;
	c.sp = regs[UNWIND_REG_SP];
	c.size = stack_size;
	c.rec = NULL;
	stack_prefetch(&c);
	p = proc_find(u, pid);
	/* (No process: every unwind is its PC alone, nothing to save.) */
	if (!u->nomemo && p) {
		set = memo_set(u, pid, regs[UNWIND_REG_IP],
			       regs[UNWIND_REG_SP]);
		m = memo_keyed(set, pid, regs[UNWIND_REG_IP],
			       regs[UNWIND_REG_SP]);
		if (m && memo_match(m, p, regs, stack, stack_size, max)) {
			u->memo_hits++;
			m->tick = ++u->memo_tick;
			memo_replay(u, m, pcs, exact_out, n, stopped_early);
			return 0;
		}
		u->memo_misses++;
	}
	regs_load(regs, &cur);
	if (set)
		c.rec = memo_start(u, set, p, &cur, stack_size, max);
	unwind_full(u, p, &cur, &c, pcs, exact_out, max, n, stopped_early);
	if (c.rec && !c.rec->full) {
		m = c.rec;
		m->n = *n;
		m->stop = *stopped_early;
		m->last_used = u->last_used;
		m->last_nofp = u->last_nofp;
		memcpy(m->pcs, pcs, *n * sizeof(*pcs));
		m->valid = true;
	}
	return 0;
}

int unwinder_leaf_ra(struct unwinder *u, pid_t pid, const uint64_t *regs,
		     const void *stack, size_t stack_size, uint64_t *ra)
{
	bool kept;
	int kind;

	return unwinder_leaf_fp(u, pid, regs, stack, stack_size, ra, &kind,
				&kept);
}

int unwinder_fp_frame(struct unwinder *u, pid_t pid, uint64_t pc, bool exact,
		      const char *build_id, int *kind)
{
	uint64_t look = exact ? pc : pc - 1;
	struct uw_proc *p;
	struct uw_map *m;
	struct uw_row *row = NULL;
	int rc;

	if (kind)
		*kind = UNWIND_FP_UNKNOWN;
	if (!u || !kind)
		return -EINVAL;
	p = proc_find(u, pid);
	m = p ? map_find(p, look) : NULL;
	if (!m || (build_id && *build_id && m->file->build_id[0] &&
		   strcasecmp(build_id, m->file->build_id) != 0))
		return -ENOENT;
	rc = row_at(u, p, look, &row);
	if (rc == UNWIND_STOP_NOMAP)
		return -ENOENT;
	if (rc == 0)
		*kind = row_fp_kind(row);
	else if (rc == UW_OUTERMOST)
		*kind = UNWIND_FP_OUTERMOST;
	return 0;
}

/* The caller's SP that row_apply() gives is the CFA itself. */
static bool sp_is_cfa(const struct uw_row *row)
{
	const struct uw_rule *sp = &row->regs[UW_SP];

	return sp->kind == RK_UNDEF || (sp->kind == RK_CFA && sp->off == 0);
}

int unwinder_leaf_fp(struct unwinder *u, pid_t pid, const uint64_t *regs,
		     const void *stack, size_t stack_size, uint64_t *ra,
		     int *kind, bool *bp_kept)
{
	struct uw_regs cur, next;
	struct uw_row *row = NULL;
	struct uw_ctx c;
	int rc;

	if (kind)
		*kind = UNWIND_FP_UNKNOWN;
	if (bp_kept)
		*bp_kept = false;
	if (!u || !regs || !ra || !kind || !bp_kept || (!stack && stack_size))
		return -EINVAL;
	regs_load(regs, &cur);
	c.stack = stack;
	c.sp = regs[UNWIND_REG_SP];
	c.size = stack_size;
	c.rec = NULL;
	rc = row_at(u, proc_find(u, pid), cur.r[UW_RA], &row);
	if (rc == 0) {
		*kind = row_fp_kind(row);
		rc = row_apply(row, &cur, &c, &next);
	} else if (rc == UW_OUTERMOST) {
		*kind = UNWIND_FP_OUTERMOST;
	}
	switch (rc) {
	case 0:
		*ra = next.r[UW_RA];
		/* In a frame-pointer frame rbp is the leaf's own frame; else
		 * the walk starts from the caller's frame only if rbp still
		 * holds the caller's value. */
		*bp_kept = *kind == UNWIND_FP_FRAME ||
			   ((next.valid & (1u << UW_BP)) &&
			    next.r[UW_BP] == regs[UNWIND_REG_BP]);
		/* After its pop (an epilogue), gcc's CFI still says rbp is
		 * saved at CFA - 16, a slot now below SP: rbp holds the
		 * value popped from it, the caller's. */
		if (!*bp_kept && row->regs[UW_BP].kind == RK_AT_CFA &&
		    sp_is_cfa(row) &&
		    next.r[UW_SP] + (uint64_t)(int64_t)row->regs[UW_BP].off <
			    regs[UNWIND_REG_SP])
			*bp_kept = true;
		return 0;
	case UNWIND_STOP_READ:
		return -ERANGE;
	case UNWIND_STOP_BADCFI:
		return -EINVAL;
	default:	/* no mapping, no CFI, outermost */
		return -ENOENT;
	}
}
