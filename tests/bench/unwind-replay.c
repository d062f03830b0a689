/*
 * unwind-replay.c - the unwinder's cost per off-CPU event, with the unwind
 * memo off and on, over events recorded from a real workload.
 *
 *   make build/tests/unwind-replay
 *   build/tests/unwind-replay -o FILE [-s STACK_BYTES] -- PROGRAM ARGS...
 *   build/tests/unwind-replay -i FILE [-p PASSES] [-m off|on|miss|both]
 *
 * -o records: PROGRAM runs, and 100 ms after its start each of its
 * threads gets a software context-switch event (PERF_COUNT_SW_CONTEXT_
 * SWITCHES, every switch) with the user registers and STACK_BYTES (1280,
 * the size offcpu-bench.sh's fixture learns) of user stack, until it
 * exits: the state the BPF agent copies at a switch-out.  FILE gets the program's executable
 * mappings and the samples.  -i replays them: each pass unwinds every
 * sample as `sym record --off-cpu` does (unwinder_unwind_exact(), 120
 * frames), after one pass that opens the files and fills the row cache.
 * "both" alternates memo off and on passes and prints the CPU time per
 * event of each (medians); "off", "on" or "miss" (on, but emptied before
 * each unwind: every one a full unwind that records) runs only that, for
 * `valgrind --tool=callgrind --toggle-collect=measured_passes`, whose
 * instructions divided by PASSES x events are the figure that does not
 * move with the machine's load.  The replay checks that both give the
 * same frames.
 *
 * Mappings are given by their paths, so replay while the files are still
 * the ones recorded (the vDSO is left out: its image died with the
 * process).
 */
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/unwind.h"
/* (its ps_spawn(), ps_open() and ps_feed() are not used here) */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "perfsample.h"
#include "base.h"

#define MAXF 120
#define MAX_SAMPLES 400000
#define MAGIC 0x31706572776e75ULL	/* "unwrep1" */

static struct ps_map maps[512];
static int nmaps;
static struct ps_sample *xs;
static size_t nxs;

/* Run argv[0], and sample the switches of its threads (those it has
 * 100 ms after its start) until it exits. */
static int record(char **argv, uint32_t stack_bytes, const char *out)
{
	struct ps_session s[8];
	int ns = 0, st, k;
	char path[64];
	pid_t pid;
	FILE *f;
	DIR *d;
	struct dirent *e;
	uint64_t lost = 0;

	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	usleep(100000);
	nmaps = ps_maps(pid, maps, 512);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d)) && ns < 8) {
		if (e->d_name[0] == '.')
			continue;
		/* (no inherit: the kernel maps no inherited per-task
		 * ring, so each thread has its own) */
		if (ps_open_event((pid_t)strtol(e->d_name, NULL, 10),
				  PERF_COUNT_SW_CONTEXT_SWITCHES, 1, false,
				  stack_bytes, &s[ns]) == 0)
			ns++;
	}
	if (d)
		closedir(d);
	xs = calloc(MAX_SAMPLES, sizeof(*xs));
	if (!xs || ns == 0) {
		perror("unwind-replay: perf_event_open");
		kill(pid, SIGKILL);
		return 1;
	}
	for (;;) {
		bool done = waitpid(pid, &st, WNOHANG) == pid;

		for (k = 0; k < ns && nxs < MAX_SAMPLES; k++) {
			size_t got = 0;

			ps_collect(&s[k], xs + nxs, MAX_SAMPLES - nxs, 1,
				   &got);
			nxs += got;
		}
		if (done || nxs >= MAX_SAMPLES)
			break;
	}
	for (k = 0; k < ns; k++) {
		lost += s[k].lost;
		ps_close(&s[k]);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	printf("recorded %zu switch samples of %d threads of pid %d, %d "
	       "mappings, %llu lost\n", nxs, ns, (int)pid, nmaps,
	       (unsigned long long)lost);
	f = fopen(out, "wb");
	if (!f)
		return 1;
	{
		uint64_t hdr[3] = { MAGIC, (uint64_t)nmaps, nxs };

		fwrite(hdr, sizeof(hdr), 1, f);
	}
	fwrite(maps, sizeof(maps[0]), (size_t)nmaps, f);
	for (size_t i = 0; i < nxs; i++) {
		fwrite(&xs[i].tid, sizeof(xs[i].tid), 1, f);
		fwrite(xs[i].regs, sizeof(xs[i].regs), 1, f);
		fwrite(&xs[i].size, sizeof(xs[i].size), 1, f);
		fwrite(xs[i].stack, 1, xs[i].size, f);
	}
	return fclose(f) != 0;
}

static int load(const char *in)
{
	uint64_t hdr[3];
	FILE *f = fopen(in, "rb");

	if (!f || fread(hdr, sizeof(hdr), 1, f) != 1 || hdr[0] != MAGIC ||
	    hdr[1] > 512 || hdr[2] > MAX_SAMPLES)
		return 1;
	nmaps = (int)hdr[1];
	nxs = hdr[2];
	xs = calloc(nxs ? nxs : 1, sizeof(*xs));
	if (!xs || fread(maps, sizeof(maps[0]), (size_t)nmaps, f) !=
		   (size_t)nmaps)
		return 1;
	for (size_t k = 0; k < nxs; k++) {
		if (fread(&xs[k].tid, sizeof(xs[k].tid), 1, f) != 1 ||
		    fread(xs[k].regs, sizeof(xs[k].regs), 1, f) != 1 ||
		    fread(&xs[k].size, sizeof(xs[k].size), 1, f) != 1 ||
		    xs[k].size > 65536)
			return 1;
		xs[k].stack = malloc(xs[k].size ? xs[k].size : 1);
		if (!xs[k].stack ||
		    fread(xs[k].stack, 1, xs[k].size, f) != xs[k].size)
			return 1;
	}
	fclose(f);
	return 0;
}

static struct unwinder *feed(int memo)
{
	struct unwinder *u = NULL;

	if (unwinder_new(&u) != 0)
		exit(1);
	unwinder_set_memo(u, memo);
	for (int i = 0; i < nmaps; i++) {
		struct unwind_map m = { .start = maps[i].start,
					.end = maps[i].end,
					.pgoff = maps[i].pgoff,
					.path = maps[i].path };

		if (maps[i].path[0] == '/')
			unwinder_map(u, 1, &m);
	}
	return u;
}

static uint64_t frames_sum;
/* -m miss: the memo emptied before each unwind, so each is a full one
 * that records (unwinder_set_memo()'s own cost is callgrind's to take
 * out: memo_clear). */
static bool miss_mode;

/* One pass over every sample: what the agent's unwind does per event. */
static __attribute__((noinline)) void replay_pass(struct unwinder *u)
{
	uint64_t pcs[MAXF];
	unsigned char exact[MAXF];

	for (size_t k = 0; k < nxs; k++) {
		size_t n = 0;
		int stop;

		if (miss_mode)
			unwinder_set_memo(u, 1);
		unwinder_unwind_exact(u, 1, xs[k].regs, xs[k].stack,
				      xs[k].size, pcs, exact, MAXF, &n, &stop);
		frames_sum += n;
	}
}

static __attribute__((noinline)) void warm_pass(struct unwinder *u)
{
	replay_pass(u);
}

/* The passes callgrind counts (--toggle-collect=measured_passes). */
static __attribute__((noinline)) void measured_passes(struct unwinder *u,
						      int passes)
{
	for (int p = 0; p < passes; p++)
		replay_pass(u);
}

/* Both unwinders give the same answer for every sample. */
static size_t compare(struct unwinder *off, struct unwinder *on)
{
	size_t bad = 0;

	for (size_t k = 0; k < nxs; k++) {
		uint64_t a[MAXF], b[MAXF];
		unsigned char ea[MAXF], eb[MAXF];
		size_t na = 0, nb = 0;
		int sa = -1, sb = -1;

		unwinder_unwind_exact(off, 1, xs[k].regs, xs[k].stack,
				      xs[k].size, a, ea, MAXF, &na, &sa);
		unwinder_unwind_exact(on, 1, xs[k].regs, xs[k].stack,
				      xs[k].size, b, eb, MAXF, &nb, &sb);
		bad += na != nb || sa != sb || memcmp(a, b, na * 8) != 0 ||
		       memcmp(ea, eb, na) != 0;
	}
	return bad;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *in = NULL, *mode = "both";
	uint32_t stack_bytes = 1280;
	int passes = 7, opt;

	while ((opt = getopt(argc, argv, "o:i:s:p:m:")) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'i': in = optarg; break;
		case 's': stack_bytes = (uint32_t)strtoul(optarg, NULL, 10);
			  break;
		case 'p': passes = (int)strtol(optarg, NULL, 10); break;
		case 'm': mode = optarg; break;
		default:
			return 2;
		}
	}
	if (out)
		return optind < argc ? record(argv + optind, stack_bytes, out)
				     : 2;
	if (!in || passes < 1 || passes > 99 || load(in) != 0) {
		fprintf(stderr, "unwind-replay: usage or input error\n");
		return 2;
	}
	if (strcmp(mode, "both") == 0) {
		struct unwinder *off = feed(0), *on = feed(1);
		double t_off[99], t_on[99], t0;
		struct unwind_stats st;

		warm_pass(off);
		warm_pass(on);
		for (int p = 0; p < passes; p++) {
			t0 = ps_cpu_ns();
			replay_pass(off);
			t_off[p] = ps_cpu_ns() - t0;
			t0 = ps_cpu_ns();
			replay_pass(on);
			t_on[p] = ps_cpu_ns() - t0;
		}
		qsort(t_off, (size_t)passes, sizeof(double), ps_dcmp);
		qsort(t_on, (size_t)passes, sizeof(double), ps_dcmp);
		unwinder_stats(on, &st);
		printf("%zu events, %.1f frames each; ns per event: memo off "
		       "%.0f, on %.0f (medians of %d passes); memo hits %llu "
		       "of %llu; answers that differ: %zu\n", nxs,
		       (double)frames_sum / (double)(nxs * (2 * passes + 2)),
		       t_off[passes / 2] / nxs, t_on[passes / 2] / nxs,
		       passes, (unsigned long long)st.memo_hits,
		       (unsigned long long)(st.memo_hits + st.memo_misses),
		       compare(off, on));
		unwinder_free(off);
		unwinder_free(on);
	} else {
		struct unwinder *u = feed(strcmp(mode, "off") != 0);

		miss_mode = strcmp(mode, "miss") == 0;

		warm_pass(u);
		measured_passes(u, passes);
		printf("%zu events x %d passes, memo %s\n", nxs, passes, mode);
		unwinder_free(u);
	}
	for (size_t k = 0; k < nxs; k++)
		ps_sample_release(&xs[k]);
	free(xs);
	return 0;
}
