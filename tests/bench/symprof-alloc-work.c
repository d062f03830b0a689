/*
 * symprof-alloc-work.c - the malloc-heavy fixture of
 * symprof-alloc-bench.sh, timed with CLOCK_THREAD_CPUTIME_ID around the
 * loop only (no start-up, no exit); prints "NS_PER_PAIR".
 *
 *	symprof-alloc-work [N]		N malloc/free pairs of 64 to 127
 *					bytes in a tight loop (about 20 M
 *					a second here without a profiler):
 *					each served by glibc's tcache
 *	symprof-alloc-work bulk [N]	N objects of 40 to 71 bytes
 *					allocated, then all freed, 5 times
 *					(the best): as python3.11's dict of
 *					strings, most calls miss the tcache
 *					and take glibc's arena paths
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"

static double ns_since(const struct timespec *a, long n)
{
	struct timespec b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return ((double)(b.tv_sec - a->tv_sec) * 1e9 +
		(double)(b.tv_nsec - a->tv_nsec)) / (double)n;
}

static double bulk(long n)
{
	void **v = malloc((size_t)n * sizeof(*v));
	double best = 1e300;

	if (!v)
		return -1;
	for (int r = 0; r < 5; r++) {
		struct timespec a;
		double ns;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		for (long i = 0; i < n; i++)
			v[i] = malloc(40 + (size_t)(i * 7 & 31));
		for (long i = 0; i < n; i++)
			free(v[i]);
		ns = ns_since(&a, n);
		best = ns < best ? ns : best;
	}
	free(v);
	return best;
}

int main(int argc, char **argv)
{
	long n;
	struct timespec a;
	void *volatile sink;

	if (argc > 1 && !strcmp(argv[1], "bulk")) {
		n = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;
		printf("%.3f\n", bulk(n > 0 ? n : 1));
		return 0;
	}
	n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000000;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++) {
		void *p = malloc(64 + (size_t)(i & 63));

		sink = p;
		free(p);
	}
	printf("%.3f\n", ns_since(&a, n));
	(void)sink;
	return 0;
}
