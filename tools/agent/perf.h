/*
 * perf.h - perf events for `sym record`: opening sampling events and
 * reading their ring buffers.
 *
 * This is the thin layer over perf_event_open(2) and the mmap()ed ring
 * buffer that tools/record.c drives.  It knows the record layouts of the
 * kernel ABI (linux/perf_event.h) but nothing about processes, mappings
 * or profiles.
 *
 * A ring buffer is one page of metadata (struct perf_event_mmap_page)
 * followed by 2^n data pages.  The kernel writes records at data_head;
 * the reader consumes from data_tail and publishes its new tail, and the
 * kernel never overwrites what has not been consumed: when the ring is
 * full it drops samples and later writes a PERF_RECORD_LOST saying how
 * many.
 *
 * Reading is done in two passes over one snapshot of the ring
 * (perf_ring_snapshot(), then perf_ring_walk() as often as needed, then
 * perf_ring_consume()), so that the caller can first apply every
 * side-band record (MMAP2, COMM, FORK, EXIT) of all rings before it
 * resolves the samples those records describe.
 *
 * Thread-safety: none; one thread owns the rings.
 */
#ifndef SYM_TOOLS_PERF_H
#define SYM_TOOLS_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/**
 * perf_open() - perf_event_open(2) with PERF_FLAG_FD_CLOEXEC.
 * @param attr  the event; not modified
 * @param pid   -1 for every task on @cpu, else a task
 * @param cpu   -1 for any CPU, else one CPU
 * @return the file descriptor (>= 0) or -errno
 */
int perf_open(const struct perf_event_attr *attr, pid_t pid, int cpu);

/**
 * perf_set_output() - send the records of event @fd to the ring buffer of
 * event @target (PERF_EVENT_IOC_SET_OUTPUT).  Both must be on one CPU.
 * @return 0 or -errno
 */
int perf_set_output(int fd, int target);

/**
 * perf_enable() - start counting/sampling (PERF_EVENT_IOC_ENABLE).
 * @return 0 or -errno
 */
int perf_enable(int fd);

/** One mapped ring buffer.  Zero it, then perf_ring_map(). */
struct perf_ring {
	/** The event it belongs to: not owned (the caller closes it). */
	int fd;
	/** The mapping: metadata page + data; munmap() by perf_ring_unmap(). */
	void *base;
	size_t map_len;
	/** Data area: size is a power of two. */
	unsigned char *data;
	uint64_t size;
	/** Snapshot of [tail, head) taken by perf_ring_snapshot(). */
	uint64_t tail, head;
	/** Records larger than the bounce buffer or malformed: skipped. */
	uint64_t bad;
	/** A record that wraps around the end of the data area is copied
	 *  here (records are at most 64 KiB: header.size is 16 bits). */
	unsigned char bounce[65536];
};

/**
 * perf_ring_map() - mmap() the ring buffer of event @fd.
 * @param data_pages  number of data pages, a power of two
 * @return 0 or -errno (-EPERM: beyond perf_event_mlock_kb for a user
 *         without CAP_IPC_LOCK)
 */
int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages);

/** perf_ring_unmap() - undo perf_ring_map(); @r is zeroed but fd kept. */
void perf_ring_unmap(struct perf_ring *r);

/**
 * perf_ring_snapshot() - note where the kernel's writes are now; the
 * following walks see the records in [tail, head).
 * @return number of bytes in the snapshot
 */
uint64_t perf_ring_snapshot(struct perf_ring *r);

/**
 * perf_ring_cut() - shorten the snapshot to the records written before
 * @horizon: walks and the consume then end at the first record whose
 * time is @horizon or later, which stays in the ring for the next
 * snapshot.  The time is a sample's PERF_SAMPLE_TIME, or another record's
 * in its sample_id (the attr must have sample_id_all); a record without
 * one is before any horizon.  With @horizon taken before the rings'
 * snapshots, every record older than it is in some snapshot, so records
 * applied in time order are applied in order across rounds too.
 * @param sample_type  the attr's: where the time is
 * @return the bytes left in the snapshot
 */
uint64_t perf_ring_cut(struct perf_ring *r, uint64_t sample_type,
		       uint64_t horizon);

/**
 * Called by perf_ring_walk() for each record.  @rec is borrowed: valid
 * until the callback returns, aligned to 8 bytes, rec->size bytes long.
 * A non-zero return stops the walk and is returned by it.
 */
typedef int (*perf_record_fn)(void *ctx, const struct perf_event_header *rec);

/**
 * perf_ring_walk() - call @fn for each record of the snapshot, in order.
 * It does not consume them: walk again for a second pass.
 * @return 0 or the first non-zero return of @fn
 */
int perf_ring_walk(struct perf_ring *r, perf_record_fn fn, void *ctx);

/** perf_ring_consume() - give the snapshot's bytes back to the kernel. */
void perf_ring_consume(struct perf_ring *r);

/**
 * perf_parse_sample() - split a PERF_RECORD_SAMPLE by @sample_type.
 * Only the fields that tools/record.c asks for are understood: IP, TID,
 * TIME, CPU, PERIOD, CALLCHAIN, REGS_USER and STACK_USER; any other bit in
 * @sample_type makes it fail.
 * @param nregs  number of bits set in the attr's sample_regs_user
 * @return 0, -EINVAL (a field runs past the record, or an unknown bit)
 * Pointers in @s point into @rec.
 */
struct perf_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	/** Callchain with its PERF_CONTEXT_* markers; NULL when absent. */
	const uint64_t *chain;
	uint64_t nchain;
	/** PERF_SAMPLE_REGS_ABI_*; 0 (NONE) means no user registers (a
	 *  kernel thread). */
	uint64_t regs_abi;
	const uint64_t *regs;
	/** User stack copy from the sampled SP; dyn_size valid bytes. */
	const void *stack;
	uint64_t stack_size;
};

int perf_parse_sample(const struct perf_event_header *rec,
		      uint64_t sample_type, unsigned nregs,
		      struct perf_sample *s);

/**
 * perf_parse_id() - the sample_id trailer of a side-band record
 * (attr.sample_id_all): TID and TIME when @sample_type has them.  The
 * trailer is found from the record's end, since bodies such as MMAP2's
 * file name have variable length.
 * @param[out] pid, tid, time  left untouched when absent
 * @return 0 or -EINVAL (record shorter than the trailer)
 */
int perf_parse_id(const struct perf_event_header *rec, uint64_t sample_type,
		  uint32_t *pid, uint32_t *tid, uint64_t *time);

/** An MMAP2 record, decoded by perf_parse_mmap2(). */
struct perf_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	/** The build ID the kernel read at mmap time: build_id_size bytes
	 *  (at most 20); 0 when the record has none. */
	uint8_t build_id[20];
	size_t build_id_size;
	/** The mapped file's device and inode, when the body holds them
	 *  (no build ID); ino 0 otherwise. */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	/** The file name, NUL-terminated: points into the record. */
	const char *filename;
};

/**
 * perf_parse_mmap2() - decode a PERF_RECORD_MMAP2.
 *
 * The body is a build ID only if the event asked for them
 * (@build_ids: its attr.build_id) and the record's misc has
 * PERF_RECORD_MISC_MMAP_BUILD_ID: the flag alone is not to be trusted,
 * since a kernel that leaks it (perf_build_id_leaks()) sets it over a
 * device/inode body when another tool's event with attr.build_id was
 * written first.  A build ID body whose size exceeds its 20 bytes is
 * neither: the record keeps only its range and name.
 * @return 0, or -EINVAL (not an MMAP2, too short, or no NUL-terminated
 *         file name)
 */
int perf_parse_mmap2(const struct perf_event_header *rec, bool build_ids,
		     struct perf_mmap2 *m);

/**
 * perf_build_id_leaks() - does this kernel's attr.build_id corrupt other
 * events' MMAP2 records?
 *
 * The kernel writes one mmap's MMAP2 record to every side-band event in
 * turn (perf_event_mmap_output()).  For an event with attr.build_id it
 * sets PERF_RECORD_MISC_MMAP_BUILD_ID in the shared header and never
 * clears it, so each event written after it, one without attr.build_id,
 * gets the flag over a device/inode body: `perf record` then reads the
 * device number as a build ID length (Debian's perf 6.1: "assertion
 * failed at util/build-id.c:1010", then "stack smashing detected").
 * CPU-wide events are written before per-task ones, so `sym record -a`
 * with attr.build_id breaks every per-task perf session started while
 * it runs.
 *
 * The probe opens three dummy side-band events on the calling thread
 * (without, with, without attr.build_id: one of the two plain ones comes
 * after the other, whichever order the kernel keeps), maps the running
 * program's first page executable once, and reads what each event got.
 * It takes 0.13 ms on this project's machine; nothing is left open.
 * @return 1 (a plain event got the flag: it leaks), 0 (the build ID
 *         event got its build ID and no plain event the flag), or
 *         -errno: -EINVAL (no attr.build_id: a kernel before 5.12),
 *         -ENODATA (no build ID came: cannot tell), or why an event
 *         could not be opened or mapped
 */
int perf_build_id_leaks(void);

#endif /* SYM_TOOLS_PERF_H */
