/*
 * unwind-bench.c - what one DWARF unwind of a perf sample costs, with
 * tools/agent/unwind.c and with libdwfl driven the way perf's libdw unwinder
 * does (tools/perf/util/unwind-libdw.c in Linux 6.1: a Dwfl per sample,
 * modules reported with dwfl_report_elf() as the unwind meets them,
 * dwfl_getthread_frames()).  Debian's perf 6.1 is built with libunwind
 * too and prefers it; this baseline is the libdw path only, and it doubles
 * as a cross-check: "agree" compares its frames with ours.
 *
 *   make build/tests/unwind-bench
 *   SYM_ROOT=$PWD build/tests/unwind-bench [-n SAMPLES] [-p PASSES]
 *                                         [-s STACK_BYTES] [WORKLOAD...]
 *
 * Workloads: chain and sys (fixtures/src/unwind_*.c, built with gcc
 * -O2 -g -fomit-frame-pointer into a temporary directory) and python
 * (python3 summing squares: libpython's interpreter loop, ~10-20 frames).
 * Each is sampled on cpu-clock at 1 kHz of its CPU time with user
 * registers and STACK_BYTES (8192) of stack, then the samples are unwound
 * in memory:
 *   cold      a new unwinder: files opened, CFI read, every row a miss
 *   warm      the same unwinder again: median of PASSES (7) passes;
 *             "hits" is the share of frames found in the row cache
 *   nocache   warm, with the row cache off: libdw's dwarf_cfi_addrframe()
 *             for every frame
 *   libdwfl   perf's way, median of 3 passes
 * Times are CPU time of this process (CLOCK_PROCESS_CPUTIME_ID) per
 * sample.  "agree" is the share of samples where libdwfl's frames equal
 * ours.  Needs perf_event_open() on a child process.
 */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/unwind.h"
#include "perfsample.h"
#include "base.h"

#define MAXF 256

static char tmp[256];

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), ps_dcmp);
	return v[n / 2];
}

/* ---- libdwfl, as perf does it -------------------------------------------- */

struct dw_ctx {
	const struct ps_sample *x;
	const struct ps_map *maps;
	int nmaps;
	pid_t pid;
	Dwfl *dwfl;
	uint64_t *pcs;
	size_t n, max;
};

static char *debuginfo_path;
static const Dwfl_Callbacks dw_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
	.section_address = dwfl_offline_section_address,
};

static int dw_report(struct dw_ctx *c, uint64_t ip)
{
	Dwfl_Module *mod = dwfl_addrmodule(c->dwfl, ip);
	char path[320];
	int i;

	if (mod)
		return 0;
	for (i = 0; i < c->nmaps; i++) {
		const struct ps_map *m = &c->maps[i];

		if (ip < m->start || ip >= m->end)
			continue;
		if (m->path[0] != '/')
			return -1;	/* perf reads the vDSO from its dso
					 * cache; we do not */
		/* The process is gone by now: the host's path. */
		snprintf(path, sizeof(path), "%s", m->path);
		mod = dwfl_report_elf(c->dwfl, m->path, path, -1,
				      m->start - m->pgoff, false);
		return mod && dwfl_addrmodule(c->dwfl, ip) == mod ? 0 : -1;
	}
	return -1;
}

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return dwfl_pid(dwfl);
}

static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			   void *arg)
{
	struct dw_ctx *c = arg;
	uint64_t sp = c->x->regs[UNWIND_REG_SP];

	(void)dwfl;
	if (addr < sp || addr + 8 < addr || addr + 8 > sp + c->x->size)
		return false;
	memcpy(result, c->x->stack + (addr - sp), 8);
	return true;
}

static bool dw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct dw_ctx *c = arg;
	const uint64_t *r = c->x->regs;
	/* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip. */
	Dwarf_Word dw[17] = { r[0], r[3], r[2], r[1], r[4], r[5], r[6], r[7],
			      r[9], r[10], r[11], r[12], r[13], r[14], r[15],
			      r[16], r[8] };

	return dwfl_thread_state_registers(thread, 0, 17, dw);
}

static const Dwfl_Thread_Callbacks dw_thread_callbacks = {
	.next_thread = dw_next_thread,
	.memory_read = dw_memory_read,
	.set_initial_registers = dw_set_initial_registers,
};

static int dw_frame(Dwfl_Frame *state, void *arg)
{
	struct dw_ctx *c = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	if (dw_report(c, pc) != 0)
		return DWARF_CB_ABORT;
	c->pcs[c->n++] = pc;
	return c->n == c->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static size_t dw_unwind(const struct ps_sample *x, pid_t pid,
			const struct ps_map *maps, int nmaps, uint64_t *pcs,
			size_t max)
{
	struct dw_ctx c = { x, maps, nmaps, pid, NULL, pcs, 0, max };

	c.dwfl = dwfl_begin(&dw_callbacks);
	if (!c.dwfl)
		return 0;
	if (dw_report(&c, x->regs[UNWIND_REG_IP]) == 0 &&
	    dwfl_attach_state(c.dwfl, NULL, pid, &dw_thread_callbacks, &c))
		dwfl_getthread_frames(c.dwfl, pid, dw_frame, &c);
	dwfl_end(c.dwfl);
	return c.n;
}

/* ---- the benchmark -------------------------------------------------------- */

/* Copy @pid's vDSO into a file of tmp and point @m at it. */
static void dump_vdso(pid_t pid, struct ps_map *m)
{
	char path[64], out[sizeof(m->path)];
	size_t size = m->end - m->start;
	unsigned char *buf = malloc(size);
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	snprintf(out, sizeof(out), "%.200s/vdso-%d.so", tmp, (int)pid);
	fd = open(path, O_RDONLY);
	if (!buf || fd < 0 ||
	    pread(fd, buf, size, (off_t)m->start) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return;
	}
	close(fd);
	f = fopen(out, "wb");
	if (f && fwrite(buf, 1, size, f) == size && fclose(f) == 0)
		snprintf(m->path, sizeof(m->path), "%s", out);
	else if (f)
		fclose(f);
	free(buf);
}

static void bench(const char *name, char **argv, size_t want, int passes,
		  uint32_t stack_bytes)
{
	struct ps_session s;
	struct ps_sample *xs = calloc(want, sizeof(*xs));
	static struct ps_map maps[512], dmaps[512];
	struct unwinder *u = NULL;
	uint64_t pcs[MAXF], dpcs[MAXF];
	double t0, cold, *warm = calloc((size_t)passes, sizeof(double));
	double nocache[3], dwfl[3];
	size_t got = 0, i, frames = 0, agree = 0, stops[6] = { 0 };
	struct unwind_stats st;
	uint64_t hits0, misses0, hits, misses;
	int nmaps, p, err;
	pid_t pid;

	pid = ps_spawn(argv);
	if (pid < 0 || !xs || !warm) {
		fprintf(stderr, "unwind-bench: cannot start %s\n", name);
		exit(1);
	}
	err = ps_open(pid, 1000000, stack_bytes, &s);
	if (err) {
		ps_kill(pid);
		fprintf(stderr, "unwind-bench: perf_event_open: %s\n",
			strerror(-err));
		exit(1);
	}
	nmaps = ps_maps(pid, maps, 512);
	/* libdwfl gets the vDSO as a file, as perf's dso cache gives it. */
	memcpy(dmaps, maps, sizeof(maps[0]) * (size_t)(nmaps > 0 ? nmaps : 0));
	for (p = 0; p < nmaps; p++)
		if (strcmp(maps[p].path, "[vdso]") == 0)
			dump_vdso(pid, &dmaps[p]);
	/* Map the files now (the vDSO must be read while the process
	 * lives); the cold pass gets an unwinder of its own below. */
	unwinder_new(&u);
	ps_feed(u, pid, maps, nmaps);
	ps_collect(&s, xs, want, 60000, &got);
	ps_close(&s);

	/* cold: a second unwinder, fed and used from scratch; the vDSO
	 * comes from the first (the process is still alive here). */
	{
		struct unwinder *c = NULL;

		t0 = ps_cpu_ns();
		unwinder_new(&c);
		ps_feed(c, pid, maps, nmaps);
		for (i = 0; i < got; i++) {
			size_t n;
			int stop;

			unwinder_unwind(c, pid, xs[i].regs, xs[i].stack,
					xs[i].size, pcs, MAXF, &n, &stop);
		}
		cold = ps_cpu_ns() - t0;
		unwinder_free(c);
	}
	ps_kill(pid);

	for (i = 0; i < got; i++) {
		size_t n;
		int stop;

		unwinder_unwind(u, pid, xs[i].regs, xs[i].stack, xs[i].size,
				pcs, MAXF, &n, &stop);
		frames += n;
		if (stop >= 0 && stop < 6)
			stops[stop]++;
	}
	unwinder_stats(u, &st);
	hits0 = st.row_hits;
	misses0 = st.row_misses;
	for (p = 0; p < passes; p++) {
		t0 = ps_cpu_ns();
		for (i = 0; i < got; i++) {
			size_t n;
			int stop;

			unwinder_unwind(u, pid, xs[i].regs, xs[i].stack,
					xs[i].size, pcs, MAXF, &n, &stop);
		}
		warm[p] = ps_cpu_ns() - t0;
	}
	unwinder_stats(u, &st);
	hits = st.row_hits - hits0;
	misses = st.row_misses - misses0;
	unwinder_set_cache(u, 0);
	for (p = 0; p < 3; p++) {
		t0 = ps_cpu_ns();
		for (i = 0; i < got; i++) {
			size_t n;
			int stop;

			unwinder_unwind(u, pid, xs[i].regs, xs[i].stack,
					xs[i].size, pcs, MAXF, &n, &stop);
		}
		nocache[p] = ps_cpu_ns() - t0;
	}
	unwinder_set_cache(u, 1);
	for (p = 0; p < 3; p++) {
		t0 = ps_cpu_ns();
		for (i = 0; i < got; i++)
			dw_unwind(&xs[i], pid, dmaps, nmaps, dpcs, MAXF);
		dwfl[p] = ps_cpu_ns() - t0;
	}
	for (i = 0; i < got; i++) {
		size_t n, dn;
		int stop;

		unwinder_unwind(u, pid, xs[i].regs, xs[i].stack, xs[i].size,
				pcs, MAXF, &n, &stop);
		dn = dw_unwind(&xs[i], pid, dmaps, nmaps, dpcs, MAXF);
		if (dn == n && memcmp(pcs, dpcs, n * sizeof(*pcs)) == 0)
			agree++;
		else if (getenv("UNWIND_BENCH_DEBUG")) {
			size_t k;

			printf("# ours %zu (stop %d):", n, stop);
			for (k = 0; k < n; k++)
				printf(" %llx", (unsigned long long)pcs[k]);
			printf("\n# dwfl %zu:", dn);
			for (k = 0; k < dn; k++)
				printf(" %llx", (unsigned long long)dpcs[k]);
			printf("\n");
		}
	}
	if (got == 0) {
		fprintf(stderr, "unwind-bench: %s: no samples\n", name);
		exit(1);
	}
	printf("%-7s %6zu %6.1f %9.0f %9.0f %6.1f%% %9.0f %9.0f %6.1f%%   "
	       "none %zu nomap %zu nocfi %zu read %zu badcfi %zu\n", name, got,
	       (double)frames / got, cold / got, median(warm, passes) / got,
	       100.0 * hits / (hits + misses ? hits + misses : 1),
	       median(nocache, 3) / got, median(dwfl, 3) / got,
	       100.0 * agree / got, stops[0], stops[1], stops[2], stops[3],
	       stops[4]);
	fflush(stdout);
	for (i = 0; i < got; i++)
		ps_sample_release(&xs[i]);
	free(xs);
	free(warm);
	unwinder_free(u);
}

int main(int argc, char **argv)
{
	const char *root = getenv("SYM_ROOT");
	size_t want = 2000;
	int passes = 7, opt, i;
	uint32_t stack_bytes = 8192;
	char cmd[1024], chain[300], sys[300];
	char *chain_argv[] = { chain, NULL };
	char *sys_argv[] = { sys, NULL };
	char *py_argv[] = { "/usr/bin/python3", "-c",
		"import sys\n"
		"print('ready', flush=True)\n"
		"while True: sum(i * i for i in range(100000))\n", NULL };
	const char *all[] = { "chain", "sys", "python" };
	const char **names = all;
	int nnames = 3;

	while ((opt = getopt(argc, argv, "n:p:s:")) != -1) {
		switch (opt) {
		case 'n': want = (size_t)strtoul(optarg, NULL, 10); break;
		case 'p': passes = (int)strtol(optarg, NULL, 10); break;
		case 's': stack_bytes = (uint32_t)strtoul(optarg, NULL, 10);
			  break;
		default:
			fprintf(stderr, "usage: unwind-bench [-n SAMPLES] "
				"[-p PASSES] [-s STACK_BYTES] [chain|sys|python]"
				"...\n");
			return 2;
		}
	}
	if (want == 0 || passes < 1 || stack_bytes == 0 ||
	    stack_bytes > 65528 || stack_bytes % 8) {
		fprintf(stderr, "unwind-bench: bad -n, -p or -s\n");
		return 2;
	}
	if (optind < argc) {
		names = (const char **)argv + optind;
		nnames = argc - optind;
	}
	snprintf(tmp, sizeof(tmp), "/tmp/unwind-bench.XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("unwind-bench: mkdtemp");
		return 1;
	}
	snprintf(chain, sizeof(chain), "%s/chain", tmp);
	snprintf(sys, sizeof(sys), "%s/sys", tmp);
	for (i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd),
			 "gcc -O2 -g -fomit-frame-pointer -o %s/%s "
			 "%s/fixtures/src/unwind_%s.c", tmp,
			 i ? "sys" : "chain", root ? root : ".",
			 i ? "sys" : "chain");
		if (system(cmd) != 0) {
			fprintf(stderr, "unwind-bench: %s failed (set "
				"SYM_ROOT)\n", cmd);
			return 1;
		}
	}
	printf("# ns of CPU per sample; stack copy %u bytes\n", stack_bytes);
	printf("%-7s %6s %6s %9s %9s %7s %9s %9s %7s   stops\n", "load",
	       "samples", "frames", "cold", "warm", "hits", "nocache",
	       "libdwfl", "agree");
	for (i = 0; i < nnames; i++) {
		if (strcmp(names[i], "chain") == 0)
			bench("chain", chain_argv, want, passes, stack_bytes);
		else if (strcmp(names[i], "sys") == 0)
			bench("sys", sys_argv, want, passes, stack_bytes);
		else if (strcmp(names[i], "python") == 0)
			bench("python", py_argv, want, passes, stack_bytes);
		else
			fprintf(stderr, "unwind-bench: unknown workload "
				"'%s'\n", names[i]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : 1;
}
