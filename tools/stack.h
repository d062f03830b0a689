/*
 * stack.h - the snapshot `sym stack` unwinds and prints, shared by its
 * files: stack.c (options, the core input, unwinding), stack_ptrace.c (the
 * live input) and stack_print.c (symbolization and output).
 */
#ifndef SYM_TOOLS_STACK_H
#define SYM_TOOLS_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/unwind.h"

struct sym_module;

/* PCs unwound per thread at most. */
#define STACK_PCS 256

/** A mapped ELF file of the process. */
struct stack_mod {
	/** Path opened (the core's NT_FILE name, /proc/PID/map_files/...,
	 *  or --executable); owned. */
	char *path;
	/** Shown instead of @path's base name when set ("[vdso]"). */
	const char *name;
	/** Runtime range of all its mappings; @base is the one of file
	 *  offset 0. */
	uint64_t start, end, base;
	/** The executable mapping given to the unwinder. */
	uint64_t exec_start, exec_end, exec_pgoff;
	/** ELF address = runtime address - @bias (when @have_bias). */
	uint64_t bias;
	bool have_bias;
	char build_id[129];
	/** Opened on first lookup; owned. */
	struct sym_module *mod;
	bool tried, in_store, no_dwarf, used;
	/* Answered by --server's symd; symd had nothing; debuginfod was
	 * asked. */
	bool via_server, server_failed, dbgd_tried;
};

/** One thread's state and, after stack_unwind(), its PCs. */
struct stack_thread {
	int tid, signo;
	char name[17];
	uint64_t regs[UNWIND_NREGS];
	/** Stack bytes from regs[UNWIND_REG_SP]: in the core's map, or
	 *  @stack_own (a copy from a live process, owned). */
	const void *stack;
	size_t stack_len;
	void *stack_own;
	uint64_t *pcs;
	uint64_t pc_buf[STACK_PCS];
	unsigned char exact[STACK_PCS];
	size_t npcs;
	/** enum unwind_stop of the last walk; @fp when frame pointers
	 *  found frames, those whose @by_fp is 1. */
	int stop;
	bool fp;
	unsigned char by_fp[STACK_PCS];
};

struct stack_snap {
	int pid;
	char comm[17];
	/** enum core_damage of a core. */
	unsigned damage;
	struct stack_thread *threads;
	size_t nthreads;
	struct stack_mod *mods;
	size_t nmods, capmods;
	/** The vDSO image, in a memfd; -1 when none. */
	int vdso_fd;
};

/** stack_snap_release() - free a snapshot; it is then empty. */
void stack_snap_release(struct stack_snap *s);

/**
 * stack_add_mod() - the module of @path, added or with its range grown.
 * @param[out] out  borrowed from @s, valid until the next call
 * @return 0, -ENOMEM
 */
int stack_add_mod(struct stack_snap *s, const char *path, uint64_t start,
		  uint64_t end, struct stack_mod **out);

/** stack_mod_ident() - @m's bias and build ID from its first page at
 * @mem (@avail bytes; NULL when not at hand), else from its file. */
void stack_mod_ident(struct stack_mod *m, const void *mem, size_t avail);

struct core;

/**
 * stack_load_core() - the threads and modules of the core file @path.
 * @param exe  --executable: opened for the module with its build ID (or
 *             base name); NULL for none
 * @param c, map, maplen  the parsed core and its mapping, which @s
 *             borrows: core_release() and munmap() them after @s
 * @return 0, -errno, -ENOEXEC, -ENOENT (@exe matches no module),
 *         -ENOMEM; errors are printed
 */
int stack_load_core(struct stack_snap *s, const char *path, const char *exe,
		    struct core *c, void **map, size_t *maplen);

/**
 * stack_maps() - the modules of live process @pid, from /proc/PID/maps
 * (no ptrace).  Errors are printed.
 * @return 0, -ENOENT (no such process), -errno, -ENOMEM
 */
int stack_maps(struct stack_snap *s, int pid);

/** stack_parse_pid() - a PID or TID in decimal, 1 to INT32_MAX; -1 when
 * @s is not one. */
int stack_parse_pid(const char *s);

/** stack_mod_find() - the module mapped at runtime address @addr, NULL
 * when none; borrowed from @s. */
struct stack_mod *stack_mod_find(struct stack_snap *s, uint64_t addr);

/**
 * stack_addr2line() - `sym addr2line --pid PID|--core CORE ADDR...`:
 * each runtime address mapped to its module and ELF address, then
 * answered by @answer, called once per run of consecutive addresses in
 * one module (stack_a2l.c).
 * @param answer  answers @n ELF addresses (hex strings) of the file
 *                @path; returns an exit status
 * @return the exit status (enum tool_exit)
 */
typedef int (*stack_answer_fn)(void *ctx, const char *path, int n,
			       char **addrs);
int stack_addr2line(const char *core, const char *pid, int n, char **addrs,
		    stack_answer_fn answer, void *ctx);

/**
 * stack_add_vdso() - the vDSO image @img (@len bytes, mapped at @start)
 * as a module, through a memfd that the unwinder and libsym open by
 * /proc/self/fd/N (s->vdso_fd).  A no-op when @s has one already.
 * @return 0 (also when the memfd cannot be made: the vDSO is then just
 *         unknown), -ENOMEM
 */
int stack_add_vdso(struct stack_snap *s, const void *img, size_t len,
		   uint64_t start);

/** stack_unwind() - fill each thread's PCs. @return 0, -ENOMEM */
int stack_unwind(struct stack_snap *s);

/**
 * stack_ptrace() - snapshot the live process @pid: every thread is
 * seized and interrupted (PTRACE_SEIZE, PTRACE_INTERRUPT), its registers
 * and stack copied, and detached again before this returns, on every
 * path.  Errors are printed.
 * @return 0, -ESRCH (gone), -EPERM (may not be traced), -ENOMEM
 */
int stack_ptrace(struct stack_snap *s, int pid);

/**
 * stack_print() - symbolize and print every thread to stdout, then the
 * modules without debug information.
 * @param store   --store, NULL for the default
 * @param server  --server's URL, NULL for none
 * @param dpath   NULL-terminated --debuginfo-path list, or NULL
 * @return the exit status (enum tool_exit)
 */
int stack_print(struct stack_snap *s, bool inlines, bool json,
		const char *store, const char *server, const char **dpath);

#endif /* SYM_TOOLS_STACK_H */
