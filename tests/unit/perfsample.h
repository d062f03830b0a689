/*
 * perfsample.h - the smallest perf_event_open() sampler, for t-unwind.c and
 * tests/bench/unwind-bench.c: cpu-clock samples of one process with its
 * user registers (UNWIND_REGS_MASK) and a copy of its user stack, read from
 * the ring buffer into memory.  Also: start a workload that prints "ready",
 * and feed its /proc/PID/maps to an unwinder; and the benches' CPU clock
 * and sort order (ps_cpu_ns(), ps_dcmp()).
 *
 * Everything is static: each test program includes it once.
 */
#ifndef SYM_PERFSAMPLE_H
#define SYM_PERFSAMPLE_H

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/unwind.h"

/* One sample, copied out of the ring buffer. */
struct ps_sample {
	uint32_t pid, tid;
	uint64_t ip;
	uint64_t abi;
	uint64_t regs[UNWIND_NREGS];
	size_t size;			/* dyn_size: bytes valid in stack */
	unsigned char *stack;		/* malloc()ed; free */
};

struct ps_session {
	int fd;				/* close */
	unsigned char *base;		/* munmap(base, len) */
	size_t len;
	uint64_t data_size;
	uint64_t lost;			/* PERF_RECORD_LOST records' counts */
};

#define PS_PAGES 512			/* 2 MiB ring */

/*
 * ps_open_event() - sample @pid (a thread) on software event @config every
 * @period events, with the user registers and @stack_bytes of user stack
 * per sample; @user_only: count user mode only (cpu-clock), else also the
 * kernel (where a context switch happens).
 * @return 0 or -errno of perf_event_open()/mmap()
 */
static int ps_open_event(pid_t pid, uint64_t config, uint64_t period,
			 bool user_only, uint32_t stack_bytes,
			 struct ps_session *s)
{
	struct perf_event_attr attr;
	long pg = sysconf(_SC_PAGESIZE);

	memset(s, 0, sizeof(*s));
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = config;
	attr.sample_period = period;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	attr.sample_regs_user = UNWIND_REGS_MASK;
	attr.sample_stack_user = stack_bytes;
	attr.exclude_kernel = user_only;
	attr.exclude_hv = 1;
	attr.wakeup_events = 1;
	s->fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1,
			     PERF_FLAG_FD_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	s->len = (size_t)pg * (PS_PAGES + 1);
	s->base = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       s->fd, 0);
	if (s->base == MAP_FAILED) {
		int err = -errno;

		close(s->fd);
		s->fd = -1;
		return err;
	}
	s->data_size = (uint64_t)pg * PS_PAGES;
	return 0;
}

/*
 * ps_open() - sample @pid every @period_ns of its CPU time (cpu-clock,
 * user mode only) with @stack_bytes of user stack per sample.
 * @return as ps_open_event()
 */
static int ps_open(pid_t pid, uint64_t period_ns, uint32_t stack_bytes,
		   struct ps_session *s)
{
	return ps_open_event(pid, PERF_COUNT_SW_CPU_CLOCK, period_ns, true,
			     stack_bytes, s);
}

static void ps_close(struct ps_session *s)
{
	if (s->base && s->base != MAP_FAILED)
		munmap(s->base, s->len);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->base = NULL;
}

static void ps_sample_release(struct ps_sample *x)
{
	free(x->stack);
	x->stack = NULL;
}

/* Decode one PERF_RECORD_SAMPLE body (after the header) into @x. */
static int ps_decode(const unsigned char *p, size_t len, struct ps_sample *x)
{
	const unsigned char *end = p + len;
	uint64_t size, dyn;

#define PS_TAKE(dst, n)                                                  \
	do {                                                             \
		if ((size_t)(end - p) < (n))                             \
			return -1;                                       \
		memcpy((dst), p, (n));                                   \
		p += (n);                                                \
	} while (0)
	memset(x, 0, sizeof(*x));
	PS_TAKE(&x->ip, 8);
	PS_TAKE(&x->pid, 4);
	PS_TAKE(&x->tid, 4);
	PS_TAKE(&x->abi, 8);
	if (x->abi != PERF_SAMPLE_REGS_ABI_NONE)
		PS_TAKE(x->regs, sizeof(x->regs));
	PS_TAKE(&size, 8);
	if (size == 0)
		return 0;
	if ((uint64_t)(end - p) < size + 8)
		return -1;
	memcpy(&dyn, p + size, 8);
	if (dyn > size)
		dyn = size;
	x->stack = malloc(dyn ? dyn : 1);
	if (!x->stack)
		return -1;
	memcpy(x->stack, p, dyn);
	x->size = dyn;
	return 0;
#undef PS_TAKE
}

/*
 * ps_collect() - read samples until @want are stored in @out (with a
 * register ABI of 64 bits) or @timeout_ms pass.  *got: samples stored.
 */
static void ps_collect(struct ps_session *s, struct ps_sample *out,
		       size_t want, int timeout_ms, size_t *got)
{
	struct perf_event_mmap_page *mp = (void *)s->base;
	unsigned char *data = s->base + (s->len - s->data_size);
	unsigned char *rec = malloc(65536);
	struct timespec t0, t1;
	size_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rec && n < want) {
		uint64_t head = __atomic_load_n(&mp->data_head,
						__ATOMIC_ACQUIRE);
		uint64_t tail = mp->data_tail;
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };

		while (tail < head && n < want) {
			struct perf_event_header h;
			uint64_t off = tail % s->data_size, i;

			for (i = 0; i < sizeof(h); i++)
				((unsigned char *)&h)[i] =
					data[(off + i) % s->data_size];
			if (h.size < sizeof(h))
				break;
			for (i = 0; i < h.size; i++)
				rec[i] = data[(off + i) % s->data_size];
			if (h.type == PERF_RECORD_SAMPLE &&
			    ps_decode(rec + sizeof(h), h.size - sizeof(h),
				      &out[n]) == 0) {
				if (out[n].abi == PERF_SAMPLE_REGS_ABI_64)
					n++;
				else
					ps_sample_release(&out[n]);
			} else if (h.type == PERF_RECORD_LOST) {
				uint64_t lost;

				memcpy(&lost, rec + sizeof(h) + 8, 8);
				s->lost += lost;
			}
			tail += h.size;
		}
		__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) * 1000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000000 > timeout_ms)
			break;
		if (n < want)
			poll(&pfd, 1, 100);
	}
	free(rec);
	*got = n;
}

/* The read end of the running workload's stdout, kept open so that a
 * workload that writes more does not die of SIGPIPE. */
static int ps_out_fd = -1;

static void ps_kill(pid_t pid);

/*
 * ps_spawn() - run @argv with stdout on a pipe and wait for its "ready"
 * line.  One workload at a time.  @return the pid, or -1.
 */
static pid_t ps_spawn(char *const argv[])
{
	int pfd[2];
	pid_t pid;
	char buf[16];
	ssize_t r;

	if (pipe(pfd) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	r = read(pfd[0], buf, sizeof(buf));
	ps_out_fd = pfd[0];
	if (r < 5 || memcmp(buf, "ready", 5) != 0) {
		ps_kill(pid);
		return -1;
	}
	return pid;
}

static void ps_kill(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (ps_out_fd >= 0)
		close(ps_out_fd);
	ps_out_fd = -1;
}

/* One executable mapping of /proc/PID/maps. */
struct ps_map {
	uint64_t start, end, pgoff;
	char path[256];
};

/*
 * ps_maps() - the executable mappings of @pid (at most @max) into @out.
 * @return how many, or -1
 */
static int ps_maps(pid_t pid, struct ps_map *out, int max)
{
	char path[64], line[512], perms[8];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		int pos = 0;
		char *name;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &s, &e, perms,
			   &off, &pos) < 4 || pos == 0)
			continue;
		if (perms[2] != 'x')
			continue;
		name = line + pos;
		while (*name == ' ')
			name++;
		name[strcspn(name, "\n")] = '\0';
		/* Special mappings other than the vDSO have no file and no
		 * CFI ([vsyscall], [uprobes]). */
		if (!*name || (*name == '[' && strcmp(name, "[vdso]") != 0))
			continue;
		out[n].start = s;
		out[n].end = e;
		out[n].pgoff = off;
		snprintf(out[n].path, sizeof(out[n].path), "%s", name);
		n++;
	}
	fclose(f);
	return n;
}

/*
 * ps_feed() - give @pid's executable mappings to @u, file paths through
 * /proc/PID/root as the recorder does.  @return mappings given, or -1.
 */
static int ps_feed(struct unwinder *u, pid_t pid, struct ps_map *maps,
		   int nmaps)
{
	int i, ok = 0;

	for (i = 0; i < nmaps; i++) {
		char path[320];
		struct unwind_map m;

		if (maps[i].path[0] == '/')
			snprintf(path, sizeof(path), "/proc/%d/root%s",
				 (int)pid, maps[i].path);
		else
			snprintf(path, sizeof(path), "%s", maps[i].path);
		m.start = maps[i].start;
		m.end = maps[i].end;
		m.pgoff = maps[i].pgoff;
		m.path = path;
		m.build_id = NULL;
		if (unwinder_map(u, pid, &m) == 0)
			ok++;
	}
	return ok;
}

/* The process's CPU time in ns, for the benches. */
static inline double ps_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* qsort() order of doubles. */
static inline int ps_dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#endif /* SYM_PERFSAMPLE_H */
