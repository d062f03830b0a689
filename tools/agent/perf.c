/*
 * perf.c - perf_event_open(2) and its ring buffer (see perf.h).
 *
 * Invariants: a walk never reads outside [tail, head) of the snapshot; a
 * record whose header claims less than a header or more than the snapshot
 * holds ends the walk (the rest of the snapshot is consumed and counted in
 * ->bad), since the reader could not find the next record boundary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf.h"
#include "base.h"

int perf_open(const struct perf_event_attr *attr, pid_t pid, int cpu)
{
	long fd;

	fd = syscall(SYS_perf_event_open, attr, pid, cpu, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	return (int)fd;
}

int perf_set_output(int fd, int target)
{
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, target) < 0)
		return -errno;
	return 0;
}

int perf_enable(int fd)
{
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return -errno;
	return 0;
}

int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *base;

	if (data_pages == 0 || (data_pages & (data_pages - 1)))
		return -EINVAL;
	r->map_len = (data_pages + 1) * page;
	base = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    0);
	if (base == MAP_FAILED) {
		r->map_len = 0;
		return -errno;
	}
	r->fd = fd;
	r->base = base;
	r->data = (unsigned char *)base + page;
	r->size = (uint64_t)data_pages * page;
	r->tail = r->head = 0;
	r->bad = 0;
	return 0;
}

void perf_ring_unmap(struct perf_ring *r)
{
	int fd = r->fd;

	if (r->base)
		munmap(r->base, r->map_len);
	r->base = NULL;
	r->data = NULL;
	r->map_len = 0;
	r->size = r->tail = r->head = 0;
	r->fd = fd;
}

uint64_t perf_ring_snapshot(struct perf_ring *r)
{
	struct perf_event_mmap_page *m = r->base;

	if (!m)
		return 0;
	/* Acquire: the records before head are complete once we see it. */
	r->head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	r->tail = m->data_tail;
	return r->head - r->tail;
}

/* The bytes of a side-band record's sample_id (sample_id_all), which
 * ends it: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER, those asked for. */
static size_t sample_id_size(uint64_t sample_type)
{
	return 8 * (size_t)(!!(sample_type & PERF_SAMPLE_TID) +
			    !!(sample_type & PERF_SAMPLE_TIME) +
			    !!(sample_type & PERF_SAMPLE_ID) +
			    !!(sample_type & PERF_SAMPLE_STREAM_ID) +
			    !!(sample_type & PERF_SAMPLE_CPU) +
			    !!(sample_type & PERF_SAMPLE_IDENTIFIER));
}

/* Copy @n bytes at ring position @pos into @out, across the wrap. */
static void ring_copy(const struct perf_ring *r, uint64_t pos, void *out,
		      size_t n)
{
	uint64_t off = pos & (r->size - 1), first = r->size - off;

	if (n <= first) {
		memcpy(out, r->data + off, n);
	} else {
		memcpy(out, r->data + off, first);
		memcpy((unsigned char *)out + first, r->data, n - first);
	}
}

/* The time of the record at @pos with header @h, or 0 when it has none. */
static uint64_t ring_time(const struct perf_ring *r, uint64_t pos,
			  const struct perf_event_header *h,
			  uint64_t sample_type)
{
	size_t id = sample_id_size(sample_type);
	uint64_t t = 0, at;

	if (!(sample_type & PERF_SAMPLE_TIME))
		return 0;
	if (h->type == PERF_RECORD_SAMPLE) {
		/* IDENTIFIER, IP, TID, then TIME. */
		at = sizeof(*h) +
		     8 * (!!(sample_type & PERF_SAMPLE_IDENTIFIER) +
			  !!(sample_type & PERF_SAMPLE_IP) +
			  !!(sample_type & PERF_SAMPLE_TID));
	} else {
		/* In the sample_id, after TID (as perf_parse_id()). */
		if (h->size < sizeof(*h) + id)
			return 0;
		at = h->size - id + 8 * !!(sample_type & PERF_SAMPLE_TID);
	}
	if (at + 8 > h->size)
		return 0;
	ring_copy(r, pos + at, &t, sizeof(t));
	return t;
}

uint64_t perf_ring_cut(struct perf_ring *r, uint64_t sample_type,
		       uint64_t horizon)
{
	struct perf_event_header hdr;
	uint64_t pos = r->tail;

	while (pos + sizeof(hdr) <= r->head) {
		ring_copy(r, pos, &hdr, sizeof(hdr));
		/* (a malformed record: the walk counts it and stops) */
		if (hdr.size < sizeof(hdr) || (hdr.size & 7) ||
		    pos + hdr.size > r->head)
			break;
		if (ring_time(r, pos, &hdr, sample_type) >= horizon) {
			r->head = pos;
			break;
		}
		pos += hdr.size;
	}
	return r->head - r->tail;
}

int perf_ring_walk(struct perf_ring *r, perf_record_fn fn, void *ctx)
{
	uint64_t pos = r->tail, mask = r->size - 1;
	const struct perf_event_header *h;
	struct perf_event_header hdr;
	uint64_t off, first;
	int ret;

	while (pos + sizeof(hdr) <= r->head) {
		off = pos & mask;
		/* Records are 8-byte aligned and so never split a header. */
		memcpy(&hdr, r->data + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || (hdr.size & 7) ||
		    pos + hdr.size > r->head) {
			r->bad++;
			return 0;
		}
		if (off + hdr.size <= r->size) {
			h = (const void *)(r->data + off);
		} else {
			first = r->size - off;
			memcpy(r->bounce, r->data + off, first);
			memcpy(r->bounce + first, r->data, hdr.size - first);
			h = (const void *)r->bounce;
		}
		ret = fn(ctx, h);
		if (ret)
			return ret;
		pos += hdr.size;
	}
	return 0;
}

void perf_ring_consume(struct perf_ring *r)
{
	struct perf_event_mmap_page *m = r->base;

	if (!m)
		return;
	/* Release: our reads of the data are done before the kernel may
	 * overwrite it. */
	__atomic_store_n(&m->data_tail, r->head, __ATOMIC_RELEASE);
	r->tail = r->head;
}

/* A cursor over one record's body. */
struct cur {
	const unsigned char *p, *end;
};

static int take(struct cur *c, void *out, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -EINVAL;
	memcpy(out, c->p, n);
	c->p += n;
	return 0;
}

static int take_u64(struct cur *c, uint64_t *v)
{
	return take(c, v, sizeof(*v));
}

#define KNOWN_SAMPLE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		      PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
		      PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | \
		      PERF_SAMPLE_STACK_USER)

int perf_parse_sample(const struct perf_event_header *rec,
		      uint64_t sample_type, unsigned nregs,
		      struct perf_sample *s)
{
	struct cur c = { (const unsigned char *)(rec + 1),
			 (const unsigned char *)rec + rec->size };
	uint32_t pair[2];
	uint64_t v;

	memset(s, 0, sizeof(*s));
	if (sample_type & ~(uint64_t)KNOWN_SAMPLE)
		return -EINVAL;
	if ((sample_type & PERF_SAMPLE_IP) && take_u64(&c, &s->ip))
		return -EINVAL;
	if (sample_type & PERF_SAMPLE_TID) {
		if (take(&c, pair, sizeof(pair)))
			return -EINVAL;
		s->pid = pair[0];
		s->tid = pair[1];
	}
	if ((sample_type & PERF_SAMPLE_TIME) && take_u64(&c, &s->time))
		return -EINVAL;
	if (sample_type & PERF_SAMPLE_CPU) {
		if (take(&c, pair, sizeof(pair)))
			return -EINVAL;
		s->cpu = pair[0];
	}
	if ((sample_type & PERF_SAMPLE_PERIOD) && take_u64(&c, &s->period))
		return -EINVAL;
	if (sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (take_u64(&c, &v))
			return -EINVAL;
		if (v > (uint64_t)(c.end - c.p) / 8)
			return -EINVAL;
		s->chain = (const uint64_t *)c.p;
		s->nchain = v;
		c.p += v * 8;
	}
	if (sample_type & PERF_SAMPLE_REGS_USER) {
		if (take_u64(&c, &s->regs_abi))
			return -EINVAL;
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if ((size_t)(c.end - c.p) < (size_t)nregs * 8)
				return -EINVAL;
			s->regs = (const uint64_t *)c.p;
			c.p += (size_t)nregs * 8;
		}
	}
	if (sample_type & PERF_SAMPLE_STACK_USER) {
		if (take_u64(&c, &v))
			return -EINVAL;
		if (v > 0) {
			if (v > (uint64_t)(c.end - c.p))
				return -EINVAL;
			s->stack = c.p;
			c.p += v;
			if (take_u64(&c, &s->stack_size))
				return -EINVAL;
			if (s->stack_size > v)
				s->stack_size = v;
		}
	}
	return 0;
}

int perf_parse_id(const struct perf_event_header *rec, uint64_t sample_type,
		  uint32_t *pid, uint32_t *tid, uint64_t *time)
{
	const unsigned char *end = (const unsigned char *)rec + rec->size;
	size_t n = sample_id_size(sample_type);
	const unsigned char *p;
	uint32_t pair[2];

	if (rec->size < sizeof(*rec) + n)
		return -EINVAL;
	p = end - n;
	if (sample_type & PERF_SAMPLE_TID) {
		memcpy(pair, p, sizeof(pair));
		*pid = pair[0];
		*tid = pair[1];
		p += 8;
	}
	if (sample_type & PERF_SAMPLE_TIME)
		memcpy(time, p, sizeof(*time));
	return 0;
}

/* MMAP2's body after pid and tid (linux/perf_event.h), as the kernel
 * writes it: with attr.build_id, a build ID in place of the inode. */
struct mmap2_body {
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved_1;
			uint16_t reserved_2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
};

int perf_parse_mmap2(const struct perf_event_header *rec, bool build_ids,
		     struct perf_mmap2 *m)
{
	struct cur c = { (const unsigned char *)(rec + 1),
			 (const unsigned char *)rec + rec->size };
	struct mmap2_body b;
	uint32_t ids[2];

	memset(m, 0, sizeof(*m));
	if (rec->type != PERF_RECORD_MMAP2 || take(&c, ids, sizeof(ids)) ||
	    take(&c, &b, sizeof(b)) || c.p == c.end ||
	    !memchr(c.p, '\0', (size_t)(c.end - c.p)))
		return -EINVAL;
	m->pid = ids[0];
	m->tid = ids[1];
	m->addr = b.addr;
	m->len = b.len;
	m->pgoff = b.pgoff;
	m->prot = b.prot;
	m->flags = b.flags;
	m->filename = (const char *)c.p;
	if (!build_ids || !(rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m->maj = b.maj;
		m->min = b.min;
		m->ino = b.ino;
		m->ino_generation = b.ino_generation;
	} else if (b.build_id_size <= sizeof(b.build_id)) {
		m->build_id_size = b.build_id_size;
		memcpy(m->build_id, b.build_id, b.build_id_size);
	}
	return 0;
}

/* What perf_build_id_leaks() looks for in each probe ring: the MMAP2 of
 * its own mapping, and whether it had the build ID flag. */
struct leak_seen {
	uint64_t addr;
	int flagged;	/* MMAP2s of @addr with PERF_RECORD_MISC_MMAP_BUILD_ID */
};

static int leak_rec(void *ctx, const struct perf_event_header *h)
{
	struct leak_seen *ls = ctx;
	struct perf_mmap2 m;

	if (h->type == PERF_RECORD_MMAP2 && !perf_parse_mmap2(h, false, &m) &&
	    m.addr == ls->addr)
		ls->flagged += !!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
	return 0;
}

/* Map the running program's first page executable, then unmap it: one
 * MMAP2 to every side-band event of this thread.  Returns its address,
 * or 0 with errno set. */
static uint64_t leak_map_once(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
		 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	munmap(p, (size_t)page);
	return (uint64_t)(uintptr_t)p;
}

#define LEAK_EVENTS 3

int perf_build_id_leaks(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.mmap = 1,
		.mmap2 = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	struct leak_seen seen[LEAK_EVENTS] = { { 0 } };
	struct perf_ring *rings;
	int fds[LEAK_EVENTS];
	uint64_t addr;
	int i, err = 0, plain_flagged = 0;

	rings = calloc(LEAK_EVENTS, sizeof(*rings));
	if (!rings)
		return -ENOMEM;
	for (i = 0; i < LEAK_EVENTS; i++)
		fds[i] = -1;
	for (i = 0; i < LEAK_EVENTS && !err; i++) {
		a.build_id = i == 1;
		fds[i] = perf_open(&a, 0, -1);
		if (fds[i] < 0)
			err = fds[i];
		else
			err = perf_ring_map(&rings[i], fds[i], 1);
	}
	if (err)
		goto out;
	addr = leak_map_once();
	if (!addr) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < LEAK_EVENTS; i++) {
		seen[i].addr = addr;
		perf_ring_snapshot(&rings[i]);
		perf_ring_walk(&rings[i], leak_rec, &seen[i]);
	}
	for (i = 0; i < LEAK_EVENTS; i++)
		if (i != 1)
			plain_flagged += seen[i].flagged;
	if (plain_flagged)
		err = 1;
	else if (!seen[1].flagged)
		err = -ENODATA;
out:
	for (i = 0; i < LEAK_EVENTS; i++) {
		perf_ring_unmap(&rings[i]);
		if (fds[i] >= 0)
			close(fds[i]);
	}
	free(rings);
	return err;
}
