/*
 * symprof-alloc-work.c - the malloc-heavy fixture of
 * symprof-alloc-bench.sh: N malloc/free pairs of 64 to 127 bytes in a
 * tight loop (about 20 M a second on this machine without a profiler),
 * timed with CLOCK_THREAD_CPUTIME_ID around the loop only (no start-up,
 * no exit): prints "NS_PER_PAIR".
 *
 *	symprof-alloc-work [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000000;
	struct timespec a, b;
	void *volatile sink;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++) {
		void *p = malloc(64 + (size_t)(i & 63));

		sink = p;
		free(p);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	printf("%.3f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 +
			  (double)(b.tv_nsec - a.tv_nsec)) / (double)n);
	(void)sink;
	return 0;
}
