/*
 * symprof-work.c - the workload of tests/bench/symprof-bench.sh: THREADS
 * threads (the main one included) each recurse DEPTH frames deep (built
 * without frame pointers by the bench, as Debian builds its code, so that
 * every stack is unwound with CFI) and spin there for MILLIONS million iterations of an
 * integer mix; no allocation, no system calls while it runs, so its CPU
 * time is what the profiler adds to.  Prints "work_cpu_ns N": the CPU
 * time of the working threads alone (the signals and the handler land
 * there; the drain thread, start-up and exit do not).
 *
 *	symprof-work THREADS DEPTH MILLIONS
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base.h"

static int depth;
static unsigned long iters;
static volatile unsigned long sink;
/* The CPU time of the working threads only: without the profiler's own
 * thread, start-up or exit. */
static _Atomic unsigned long long work_ns;

__attribute__((noinline)) static unsigned long spin(unsigned long n)
{
	unsigned long x = n, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static unsigned long dive(int d)
{
	volatile int keep = d;

	if (d <= 1)
		return spin(iters) + (unsigned long)keep;
	return dive(d - 1) + 1;
}

static void *run(void *arg)
{
	struct timespec a, b;

	(void)arg;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	sink += dive(depth);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	work_ns += (unsigned long long)(b.tv_sec - a.tv_sec) * 1000000000ull +
		   (unsigned long long)b.tv_nsec -
		   (unsigned long long)a.tv_nsec;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	long nl, dl;
	int n, i;

	if (argc != 4)
		return 2;
	nl = strtol(argv[1], NULL, 10);
	dl = strtol(argv[2], NULL, 10);
	iters = strtoul(argv[3], NULL, 10) * 1000000ul;
	if (nl < 1 || nl > 64 || dl < 1 || dl > 100000)
		return 2;
	n = (int)nl;
	depth = (int)dl;
	for (i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, run, NULL))
			return 1;
	run(NULL);
	for (i = 1; i < n; i++)
		pthread_join(th[i], NULL);
	printf("work_cpu_ns %llu %d\n", (unsigned long long)work_ns,
	       sink != 0);
	return 0;
}
