/*
 * symprof-work.c - the workload of tests/bench/symprof-bench.sh: THREADS
 * threads (the main one included) each recurse DEPTH frames deep (with
 * frame pointers) and spin there for MILLIONS million iterations of an
 * integer mix; no allocation, no system calls while it runs, so its CPU
 * time is what the profiler adds to.
 *
 *	symprof-work THREADS DEPTH MILLIONS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int depth;
static unsigned long iters;
static volatile unsigned long sink;

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
	(void)arg;
	sink += dive(depth);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	int n, i;

	if (argc != 4)
		return 2;
	n = atoi(argv[1]);
	depth = atoi(argv[2]);
	iters = strtoul(argv[3], NULL, 10) * 1000000ul;
	if (n < 1 || n > 64 || depth < 1)
		return 2;
	for (i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, run, NULL))
			return 1;
	run(NULL);
	for (i = 1; i < n; i++)
		pthread_join(th[i], NULL);
	printf("%lu\n", sink != 0);
	return 0;
}
