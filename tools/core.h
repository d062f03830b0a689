/*
 * core.h - an in-memory reader of x86-64 Linux ELF core files, for
 * `sym stack --core` (tools/stack.c) and `sym addr2line --core`.
 *
 * core_parse() takes the whole file as bytes (the caller maps it) and
 * reads what a stack needs: the PT_LOAD segments (the dumped memory), the
 * threads of the NT_PRSTATUS notes (registers, TID, signal), the process
 * name of NT_PRPSINFO, the mapped files of NT_FILE and AT_SYSINFO_EHDR of
 * NT_AUXV (the vDSO).  It does no I/O, so it is fuzzed as it is
 * (tests/fuzz/fuzz-core.c).
 *
 * Damage is data, not an error, where something can still be shown: a
 * segment or note that runs past the end of the file (a truncated core)
 * is cut or dropped and flagged in core.damage; only a file that is not an
 * x86-64 ELF core at all is refused.
 *
 * Caveats: x86-64, little-endian, ELFCLASS64 only.
 */
#ifndef SYM_TOOLS_CORE_H
#define SYM_TOOLS_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/unwind.h"

/** What was wrong with a core that core_parse() still accepted. */
enum core_damage {
	/** A PT_LOAD segment's file bytes run past the end of the file. */
	CORE_DAMAGE_TRUNCATED = (1 << 0),
	/** A note's sizes run past its PT_NOTE segment (the rest of the
	 *  segment is not read), or a known note is too short. */
	CORE_DAMAGE_NOTES = (1 << 1),
	/** A program header lies outside the file: the segments after it
	 *  are not read. */
	CORE_DAMAGE_PHDRS = (1 << 2),
};

/** One thread: an NT_PRSTATUS note. */
struct core_thread {
	int tid;
	/** pr_cursig: the signal that dumped the core, 0 for none. */
	int signo;
	/** In unwind.h's order (UNWIND_NREGS, UNWIND_REG_*). */
	uint64_t regs[UNWIND_NREGS];
};

/** One file mapping: an entry of NT_FILE. */
struct core_file {
	uint64_t start, end;
	/** File offset of @start, in bytes. */
	uint64_t pgoff;
	/** Borrowed from the core's bytes (NUL-terminated there). */
	const char *path;
};

/** A PT_LOAD segment. */
struct core_seg {
	uint64_t vaddr, memsz;
	/** File bytes present: p_filesz, cut to what the file holds; the
	 *  offset is p_offset as the file says, meaningful only with
	 *  filesz > 0 (a segment past the file's end has filesz 0). */
	uint64_t filesz, offset;
	uint32_t flags;
};

struct core {
	/** The bytes given to core_parse(); borrowed. */
	const unsigned char *buf;
	size_t len;
	struct core_seg *segs;
	size_t nsegs;
	/** The thread that took the signal first (the kernel writes it
	 *  first). */
	struct core_thread *threads;
	size_t nthreads;
	struct core_file *files;
	size_t nfiles;
	/** pr_fname of NT_PRPSINFO, "" when none. */
	char comm[17];
	int pid;
	/** AT_SYSINFO_EHDR, 0 when unknown. */
	uint64_t vdso;
	/** enum core_damage. */
	unsigned damage;
};

/**
 * core_parse() - read a core file held in memory.
 * @param buf  the file's bytes; borrowed: must outlive @c
 * @param[out] c  filled; release with core_release(), also on error
 * @return 0 (see c->damage), -ENOEXEC (not an ELF core of x86-64),
 *         -ENOMEM
 */
int core_parse(const void *buf, size_t len, struct core *c);

/** core_release() - free what core_parse() allocated; zeroes @c. */
void core_release(struct core *c);

/**
 * core_mem() - the dumped bytes at runtime address @addr.
 * @param[out] avail  how many bytes follow contiguously in the core
 * @return borrowed from the core's bytes, or NULL when @addr was not
 *         dumped (or lies in a segment's part cut off the file)
 */
const void *core_mem(const struct core *c, uint64_t addr, size_t *avail);

/**
 * core_elf_bias() - the load bias of the ELF object whose headers begin
 * at @hdr (@len bytes, from the core's memory or the file itself) and
 * that is mapped from file offset 0 at @start: @start minus the
 * page-aligned p_vaddr of its first PT_LOAD.  Also the object's build ID
 * when its PT_NOTE lies in @hdr.
 * @param[out] hex  lowercase hex, "" when not found; @hexlen >= 129
 * @return 0, -ENOEXEC (not a 64-bit ELF header, no PT_LOAD in @len)
 */
int core_elf_bias(const void *hdr, size_t len, uint64_t start,
		  uint64_t *bias, char *hex, size_t hexlen);

/**
 * core_regs_from_user() - unwind.h's registers from the 27 words of
 * struct user_regs_struct (NT_PRSTATUS's pr_reg, PTRACE_GETREGS).
 */
void core_regs_from_user(const uint64_t *user, uint64_t *regs);

#endif /* SYM_TOOLS_CORE_H */
