/*
 * memprobe.c - what this machine's memory costs, for reading the lookup
 * figures of bench.sh next to it.
 *
 *   memprobe [MB ...]
 *
 * A lookup on a big table is a handful of reads at random places in it
 * (docs/bench.md, "What bounds libjvm's figure"), so its cost is set by
 * how long one random read takes and how many the core keeps in flight.
 * For each working set of MB mebibytes (default 1 4 8 16 32 64), in ordinary
 * 4 KiB pages, this prints one `key value` line each:
 *
 *   chase_ns_16 98.6    a read whose address depends on the read before:
 *                       the latency of one miss (a linked-list walk)
 *   line_ns_16 2.6      independent reads at random lines, each
 *                       prefetched 32 reads ahead: the cost of one more
 *                       cache line when many are in flight (throughput)
 *
 * The latency rises from the size that no longer fits a cache level; the
 * line cost is the floor under any lookup that touches that many random
 * lines of a table that size.  Medians of 3 runs each; about 2 s in all.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "base.h"

#define LINE 64
#define READS 2000000
#define AHEAD 32

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A random cycle through every line of @p[@lines]: each line's first word
 * holds the index of the next (Sattolo's shuffle). */
static void make_cycle(uint8_t *p, size_t lines, uint64_t *seed)
{
	uint64_t *next = (uint64_t *)p;

	for (size_t i = 0; i < lines; i++)
		next[i * (LINE / 8)] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = xorshift(seed) % i;
		uint64_t t = next[i * (LINE / 8)];

		next[i * (LINE / 8)] = next[j * (LINE / 8)];
		next[j * (LINE / 8)] = t;
	}
}

static double chase(const uint8_t *p, size_t n)
{
	const uint64_t *next = (const uint64_t *)p;
	uint64_t i = 0;
	double t0 = now();

	for (size_t k = 0; k < n; k++)
		i = next[i * (LINE / 8)];
	t0 = now() - t0;
	sink += i;
	return t0 * 1e9 / (double)n;
}

static double lines(const uint8_t *p, const uint32_t *idx, size_t n)
{
	uint64_t acc = 0;
	double t0 = now();

	for (size_t k = 0; k < n; k++) {
		if (k + AHEAD < n)
			__builtin_prefetch(p + (size_t)idx[k + AHEAD] * LINE);
		acc += p[(size_t)idx[k] * LINE + 8];
	}
	t0 = now() - t0;
	sink += acc;
	return t0 * 1e9 / (double)n;
}

static int probe(size_t mb)
{
	size_t size = mb << 20, nlines = size / LINE;
	uint64_t seed = 0x9e3779b97f4a7c15ULL ^ mb;
	uint32_t *idx = NULL;
	uint8_t *p;
	double c[3], l[3];

	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	/* Small pages, as the store's mapped tables have. */
	madvise(p, size, MADV_NOHUGEPAGE);
	idx = malloc(READS * sizeof(*idx));
	if (!idx) {
		munmap(p, size);
		return -1;
	}
	memset(p, 1, size);
	make_cycle(p, nlines, &seed);
	for (size_t k = 0; k < READS; k++)
		idx[k] = (uint32_t)(xorshift(&seed) % nlines);
	for (int r = 0; r < 3; r++) {
		c[r] = chase(p, READS / 4);
		l[r] = lines(p, idx, READS);
	}
	qsort(c, 3, sizeof(c[0]), cmp_double);
	qsort(l, 3, sizeof(l[0]), cmp_double);
	printf("chase_ns_%zu %.1f\n", mb, c[1]);
	printf("line_ns_%zu %.2f\n", mb, l[1]);
	free(idx);
	munmap(p, size);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t dflt[] = { 1, 4, 8, 16, 32, 64 };
	int rc = 0;

	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			long mb = strtol(argv[i], NULL, 10);

			if (mb < 1 || mb > 4096) {
				fprintf(stderr, "memprobe: bad size '%s' (1 to 4096 MB)\n",
					argv[i]);
				return 2;
			}
			rc |= probe((size_t)mb);
		}
	} else {
		for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++)
			rc |= probe(dflt[i]);
	}
	if (rc)
		fprintf(stderr, "memprobe: out of memory\n");
	return rc ? 1 : 0;
}
