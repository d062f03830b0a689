/*
 * procmaps.h - processes, threads and executable mappings for `sym
 * record`, with a cache of the ELF facts (GNU build ID, PT_LOAD segments)
 * of the files they map.
 *
 * What it keeps, per process: the executable mappings, each with the
 * runtime range, the file offset, the ELF virtual address of its start
 * (PRODUCT.md's address convention, computed once from the file's program
 * headers), the build ID and the path; the process's PID namespace inode
 * and its PID inside that namespace; and the comm of each thread.
 *
 * Where it comes from: /proc/PID/maps when a process is first met
 * (pm_scan()), then the perf side-band records as tools/record.c applies
 * them in time order (pm_mmap(), pm_fork(), pm_exec(), pm_exit(),
 * pm_comm()).
 *
 * Time.  Samples are resolved some time after the side-band records that
 * precede them were applied, so every mapping carries the interval
 * [t_start, t_end) of perf timestamps (CLOCK_MONOTONIC ns) during which it
 * was mapped.  A mapping replaced by a newer one (exec, an mmap over it)
 * is kept, dead, until pm_gc() is told that no sample older than its end
 * can still come; so a sample taken just before an exec still resolves to
 * the old program.  Memory therefore stays bounded by what is live plus
 * what died since the last pm_gc().
 *
 * Files are read through /proc/PID/map_files/START-END (the mapped inode
 * itself, even when deleted or replaced on disk) or /proc/PID/root/PATH
 * (the process's own mount namespace, so containers work), and the ELF
 * facts are cached by device, inode, size and mtime, and by build ID.
 * When the kernel put the build ID in the MMAP2 record (attr.build_id),
 * that build ID is the truth, and a file on disk that carries another one
 * is not used.  The vDSO's build ID is read from its image in the
 * process's memory (/proc/PID/mem).
 *
 * Thread-safety: none; one thread owns a struct pm.
 */
#ifndef SYM_TOOLS_PROCMAPS_H
#define SYM_TOOLS_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "addrcache.h"
#include "modid.h"

/** Longest build ID, in bytes (hex is twice that). */
#define PM_BUILD_ID_MAX 64

/** Most PT_LOAD segments remembered per file (more are ignored). */
#define PM_MAX_LOADS 16

/** What the recorder needs of one ELF file. */
struct pm_elf {
	/** Lowercase hex module ID (sym_file_module_id()'s rule): the GNU
	 *  build ID, else the one derived from the Go build ID note, else
	 *  the file ID of its head, tail and size; "" when none could be
	 *  read. */
	char build_id[2 * PM_BUILD_ID_MAX + 1];
	/** The go ID while the notes are read (internal). */
	char go_id[2 * SYMI_MODID_LEN + 1];
	unsigned nloads;
	struct {
		uint64_t offset, vaddr, filesz;
		bool exec;
	} loads[PM_MAX_LOADS];
};

/**
 * pm_elf_read_fd() - read the build ID and PT_LOAD segments of an ELF64
 * little-endian file (the only kind x86-64 processes map).  The build ID
 * is the first a PT_NOTE segment holds, else the first an SHT_NOTE
 * section holds (Go's linker leaves .note.gnu.build-id out of PT_NOTE),
 * as the kernel's MMAP2 build ID, then `sym buildid`, find it.  A file
 * without one gets its derived module ID (libsym/modid.h): from a Go
 * build ID note in the same places, else from the file's first and last
 * 4 KiB and its size, as `sym buildid -k` and libsymprof derive it.
 * @return 0, -SYM_E_NOTELF, -SYM_E_BADELF, -SYM_E_UNSUPPORTED (ELF32 or
 *         big-endian), -errno
 */
int pm_elf_read_fd(int fd, struct pm_elf *out);

/** pm_elf_read_mem() - the same from an image in memory (the vDSO). */
int pm_elf_read_mem(const void *buf, size_t len, struct pm_elf *out);

/**
 * pm_elf_vaddr() - the ELF virtual address of file offset @off, for the
 * PT_LOAD segment that holds it (an executable one preferred).
 * @return 0, or -SYM_E_NOTFOUND when no segment holds it
 */
int pm_elf_vaddr(const struct pm_elf *e, uint64_t off, uint64_t *vaddr);

/** Kinds of mapping; the same values as enum sym_prof_map_kind. */
enum pm_kind {
	PM_FILE = 0,
	PM_VDSO = 1,
	PM_KERNEL = 2,
	PM_ANON = 3,
};

/** One executable mapping of one process, over a time interval. */
struct pm_map {
	uint64_t start, end, pgoff;
	/** ELF virtual address of @start: vaddr(pc) = pc - start + vaddr.
	 *  Equals @pgoff when @vaddr_known is false (see docs/record.md). */
	uint64_t vaddr;
	bool vaddr_known;
	/** enum pm_kind. */
	uint32_t kind;
	int32_t pid;
	/** Perf timestamps: mapped during [t_start, t_end). */
	uint64_t t_start, t_end;
	/** Lowercase hex, "" when unknown. */
	char build_id[2 * PM_BUILD_ID_MAX + 1];
	/** The path as the process saw it; owned. */
	char *path;
	/** A path this process can open the file by (for the unwinder), or
	 *  NULL; owned. */
	char *open_path;
	/** For the user of the table (tools/record.c): free to use. */
	uint32_t user_id;
	uint64_t user_gen;
	/** addrcache_mod() of @build_id, or of @path when there is none: the
	 *  module key of the address caches (retcheck.c, fpcheck.c), hashed
	 *  once when the table adds the mapping rather than at every frame;
	 *  0 in a mapping made outside the table (pm_map_key() hashes then). */
	uint64_t cache_key;
};

/**
 * pm_map_key() - the address caches' module key of @m (its cache_key, or
 * the same hash made now when the mapping has none).
 */
static inline uint64_t pm_map_key(const struct pm_map *m)
{
	if (m->cache_key)
		return m->cache_key;
	return addrcache_mod(m->build_id[0] ? m->build_id : m->path);
}

/** Called when a mapping is added to or removed from a live process. */
struct pm_hooks {
	void *ctx;
	/** A new executable mapping; @m is borrowed for the call. */
	void (*map)(void *ctx, const struct pm_map *m);
	/** [start, end) of process @pid is no longer mapped. */
	void (*unmap)(void *ctx, int32_t pid, uint64_t start, uint64_t end);
	/** Everything of @pid is gone (exec or exit). */
	void (*forget)(void *ctx, int32_t pid);
};

struct pm;

/** Counters, for the log and docs/record.md's figures. */
struct pm_stats {
	uint64_t processes, maps, elf_reads, elf_cache_hits, bid_hits,
		 no_file, bid_mismatch, scans;
};

/**
 * pm_new() - an empty table.
 * @param hooks  copied; may be NULL
 * @param[out] out  caller owns: pm_free()
 * @return 0 or -ENOMEM
 */
int pm_new(const struct pm_hooks *hooks, struct pm **out);

/** pm_free() - free the table; no hook is called.  NULL is fine. */
void pm_free(struct pm *pm);

/**
 * pm_scan() - read /proc/PID/maps, comm, status and ns/pid of @pid (once:
 * a second call for a process already scanned or known from a FORK
 * record does nothing).  Mappings found get t_start = 0.
 * @return 0, or -ESRCH/-ENOENT when the process is gone (it is then
 *         remembered as scanned, so samples do not retry)
 */
int pm_scan(struct pm *pm, int32_t pid);

/**
 * pm_scan_threads() - read the comm of every thread of @pid (for -p, at
 * start).  @return 0 or -errno
 */
int pm_scan_threads(struct pm *pm, int32_t pid);

/**
 * struct pm_inode - the inode a mapping maps, as the kernel named it: a
 * PERF_RECORD_MMAP2 without a build ID carries it instead (the device's
 * major and minor, the inode number and its generation).
 */
struct pm_inode {
	uint64_t dev;		/**< makedev(maj, min) */
	uint64_t ino;
	uint64_t gen;		/**< i_generation; checked where readable */
};

/**
 * pm_mmap() - an executable mapping appeared at time @t (PERF_RECORD_MMAP2).
 * Older mappings it overlaps die at @t.
 * @param build_id  the kernel's, raw bytes, or NULL
 * @param inode     the kernel's inode of the file when it gave no build
 *                  ID, or NULL.  When the process is gone before the
 *                  mapping is read, the file at @path is taken for the
 *                  mapped one only if the kernel vouches for it: by the
 *                  build ID, or by this inode (docs/record.md).
 * @param path      borrowed
 * @return 0 or -ENOMEM
 */
int pm_mmap(struct pm *pm, int32_t pid, uint64_t t, uint64_t start,
	    uint64_t len, uint64_t pgoff, const unsigned char *build_id,
	    size_t build_id_len, const struct pm_inode *inode,
	    const char *path);

/** pm_fork() - @pid was created by @ppid at @t with a copy of its
 *  mappings (a new thread, pid == ppid, only names it). */
int pm_fork(struct pm *pm, int32_t pid, int32_t ppid, int32_t tid,
	    uint64_t t);

/** pm_exec() - @pid ran exec at @t: its mappings die. */
void pm_exec(struct pm *pm, int32_t pid, uint64_t t);

/** pm_comm() - thread @tid of @pid is now named @comm (copied). */
int pm_comm(struct pm *pm, int32_t pid, int32_t tid, const char *comm);

/** pm_exit() - thread @tid of @pid exited at @t; when tid == pid the
 *  process did. */
void pm_exit(struct pm *pm, int32_t pid, int32_t tid, uint64_t t);

/**
 * pm_find() - the mapping of @pid that held @pc at time @t.
 * @return borrowed until the next call that changes @pm, or NULL
 */
struct pm_map *pm_find(struct pm *pm, int32_t pid, uint64_t pc, uint64_t t);

/**
 * pm_find_from() - pm_find(), and from when its answer holds: for every
 * time t' >= *@from, pm_find(@pid, @pc, t') gives the same mapping (the
 * same pointer, NULL included) as long as pm_gen(@pid) is unchanged.
 * @param[out] from  the mapping's t_start when a live mapping held @pc;
 *                   0 when no mapping, live or dead, ever held it (NULL at
 *                   any time); UINT64_MAX otherwise (the answer depends
 *                   on the time: a mapping that died, or not yet mapped)
 */
struct pm_map *pm_find_from(struct pm *pm, int32_t pid, uint64_t pc,
			    uint64_t t, uint64_t *from);

/**
 * pm_gen() - the generation of @pid's mappings: changed by every change
 * to them (a mapping added, clipped or dead, an exec, a fork over a
 * reused pid, dead mappings collected), and never the same for two
 * states of them, even of a process forgotten and seen again; 0 when
 * @pid is unknown.  What pm_find() answers for @pid depends only on it
 * and the arguments, so a result kept with it stays true while it is
 * the same (tools/agent/evmemo.h).
 */
uint64_t pm_gen(struct pm *pm, int32_t pid);

/** pm_known() - whether @pid is in the table (scanned or forked). */
bool pm_known(struct pm *pm, int32_t pid);

/**
 * pm_process() - namespace facts and the comm of @pid.
 * @param[out] pidns, nspid  0 when unknown
 * @return the comm (borrowed), or NULL when @pid is unknown
 */
const char *pm_process(struct pm *pm, int32_t pid, uint64_t *pidns,
		       int32_t *nspid);

/**
 * pm_process_start() - when @pid started and who owns it, as read from
 * /proc/PID/stat (field 22, exact to a clock tick) and the owner of
 * /proc/PID when the process was first seen or exec'd.
 * @param[out] start_ns  wall-clock ns since 1970
 * @param[out] uid       the owner
 * @return 0, or -ENOENT when @pid is unknown or was gone before it
 *         could be read
 */
int pm_process_start(struct pm *pm, int32_t pid, int64_t *start_ns,
		     uint32_t *uid);

/**
 * pm_jitdump() - the jitdump @pid's runtime mapped (a file named
 * jit-N.dump, which JIT runtimes map so that perf finds it), borrowed
 * until @pid's next exec or its end, or NULL.
 * @param[out] dump_pid  the N of its name
 */
const char *pm_jitdump(struct pm *pm, int32_t pid, int32_t *dump_pid);

/** pm_thread() - the comm of thread @tid, borrowed, or NULL. */
const char *pm_thread(struct pm *pm, int32_t tid);

/**
 * pm_gc() - drop mappings that died, processes and threads that exited,
 * before @horizon: no sample older than it will be resolved any more.
 */
void pm_gc(struct pm *pm, uint64_t horizon);

/** pm_stats() - the counters. */
void pm_get_stats(const struct pm *pm, struct pm_stats *out);

/**
 * pm_self_pidns() - inode of the PID namespace of @pid (0 = self).
 * @return the inode, or 0 when unknown
 */
uint64_t pm_pidns(int32_t pid);

/**
 * pm_kernel_build_id() - the running kernel's build ID, from
 * /sys/kernel/notes.
 * @param hex  at least 2 * PM_BUILD_ID_MAX + 1 bytes; "" when unknown
 */
void pm_kernel_build_id(char *hex, size_t len);

#endif /* SYM_TOOLS_PROCMAPS_H */
