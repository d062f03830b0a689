/*
 * kallsyms-bench.c - the kallsyms snapshot's own cost, for
 * tests/bench/kernel-bench.sh: read and parse a snapshot
 * (ksnap_load(), tools/kallsyms.c), then look up N addresses with
 * symi_ksnap_lookup(): random text symbols of the snapshot plus an offset
 * below 64 (xorshift64, fixed seed), made before the clock starts: in
 * random order, then sorted (as sym symbolize looks them up: its batch
 * of a build ID's addresses is sorted).  Times are CPU seconds of this
 * process.
 *
 * usage: kallsyms-bench SNAPSHOT N
 * prints: "load_s LOAD random_s R sorted_s S hits H of N symbols K"
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kallsyms.h"
#include "base.h"

/* CPU time: the machine is shared, and the figure is this process's. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	struct symi_ksnap *ks = NULL;
	struct symi_ksnap_hit h;
	uint64_t *addrs, seed = 0x9e3779b97f4a7c15ull, sum = 0;
	size_t n, hits = 0;
	double t0, t1, t2, t3, t4;

	if (argc != 3 || !(n = strtoul(argv[2], NULL, 10))) {
		fprintf(stderr, "usage: kallsyms-bench SNAPSHOT N\n");
		return 2;
	}
	t0 = now_s();
	if (ksnap_load(argv[1], &ks) || !ks->nsyms)
		return 1;
	t1 = now_s();
	addrs = malloc(n * sizeof(*addrs));
	if (!addrs)
		return 1;
	for (size_t i = 0; i < n; i++)
		addrs[i] = ks->syms[next(&seed) % ks->nsyms].addr +
			   next(&seed) % 64;
	t2 = now_s();
	for (size_t i = 0; i < n; i++)
		if (symi_ksnap_lookup(ks, addrs[i], &h)) {
			hits++;
			sum += h.offset;
		}
	t3 = now_s();
	qsort(addrs, n, sizeof(*addrs), cmp_u64);
	t4 = now_s();
	for (size_t i = 0; i < n; i++)
		if (symi_ksnap_lookup(ks, addrs[i], &h))
			sum -= h.offset;
	printf("load_s %.4f random_s %.4f sorted_s %.4f hits %zu of %zu "
	       "symbols %zu (check %llu)\n", t1 - t0, t3 - t2, now_s() - t4,
	       hits, n, ks->nsyms, (unsigned long long)sum);
	free(addrs);
	symi_ksnap_free(ks);
	return 0;
}
