/*
 * symprof-alloc-mix.c - the "malloc-heavy fixture at 20 M ops/s" of
 * issue 21's figures, for symprof-alloc-bench.sh: a whole program that
 * spends most of its time in malloc and free, with sizes, lifetimes and
 * call sites of a realistic mix rather than one tight loop.
 *
 *	symprof-alloc-mix [STEPS [WORK]]
 *		STEPS steps (default 10 M), each with WORK rounds (default
 *		0) of the program's own computing; prints the checksum,
 *		then "ops N ops_per_s R" on stderr (R from the process's
 *		CPU time, start-up included)
 *
 * A step frees the object in a slot of a live pool of POOL (4 Ki)
 * slots, picked at random, and puts a new one there, so each step is 2
 * operations (a malloc-family call and a free) and objects live for
 * POOL steps on average (an exponential lifetime, as a cache or a
 * request's objects would).  The new object's first 16 bytes (a header)
 * are written, and its first word is read back into the checksum when
 * it is freed: programs touch what they allocate.  Without a profiler
 * it ran about 20 M operations a second of CPU on the machine it was
 * written on (19.6 to 22.5 M, load 2; with 64 bytes written it was 16.5
 * M), and about 64 M on a faster, idle one (2026-12-05): the rate is
 * the machine's, not the program's.
 *
 * WORK is the knob that makes the rate the issue's on any machine: each
 * step also runs WORK rounds of a dependent multiply-add chain over its
 * random value (about 4 cycles a round, no memory, no call), the work a
 * program does between its allocations, folded into the checksum so
 * that it cannot be left out.  symprof-alloc-bench.sh measures the
 * step's cost at two values of WORK without a profiler and picks the
 * WORK that makes 20 M operations a second.
 *
 * The size mix (mean 216 bytes, so about 2 GB a second are allocated
 * and, at the default rate of 512 KiB, about 4,100 samples a second
 * are taken):
 *	60   %	16 to 64 B	(strings, list nodes)
 *	28   %	65 to 256 B	(small structs, short buffers)
 *	10   %	257 to 1024 B	(records, path names, small arrays)
 *	 1.8 %	1 to 4 KiB	(buffers)
 *	 0.2 %	4 to 32 KiB	(large buffers)
 * The calls: 85 % malloc, 10 % calloc, 5 % realloc of the slot's object
 * to the new size (a growth or shrink chain: the realloc replaces the
 * free and the malloc, and counts as 2 operations like them).  Each call
 * comes from one of four call sites 2 to 4 functions deep (noinline), so
 * that a sample's stack has some depth, built without frame pointers
 * when built with -O2 (the unwinder needs the CFI).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"

#define POOL 4096
#define NOINL __attribute__((noinline))

static void *pool[POOL];
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t sum;

static inline uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A uniform number in [0, @n) from 32 random bits @r, without a divide. */
static inline unsigned below(uint64_t r, unsigned n)
{
	return (unsigned)(((r & 0xffffffffu) * n) >> 32);
}

/* A size from the mix above, given a uniform 64-bit @r. */
static size_t mix_size(uint64_t r)
{
	unsigned c = below(r, 1000);
	uint64_t u = r >> 32;

	if (c < 600)
		return 16 + below(u, 49);
	if (c < 880)
		return 65 + below(u, 192);
	if (c < 980)
		return 257 + below(u, 768);
	if (c < 998)
		return 1025 + below(u, 3072);
	return 4097 + below(u, 28672);
}

static void touch(char *p, size_t n, uint64_t v)
{
	memset(p, (int)(v & 0xff), n < 16 ? n : 16);
	memcpy(p, &v, sizeof(v));
}

NOINL static void *site_small(size_t n)
{
	return malloc(n);
}

NOINL static void *site_zeroed(size_t n)
{
	return calloc(1, n);
}

NOINL static void *site_buf(size_t n)
{
	return malloc(n);
}

NOINL static void *layer2(unsigned k, size_t n)
{
	void *p = k & 1 ? site_buf(n) : site_small(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

NOINL static void *layer1(unsigned k, size_t n)
{
	void *p = k < 85 ? layer2(k, n) : site_zeroed(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* The program's own computing: @work rounds of a dependent chain. */
NOINL static uint64_t compute(uint64_t v, long work)
{
	for (long w = 0; w < work; w++)
		v = v * 6364136223846793005ull + 1442695040888963407ull;
	return v;
}

/* One step on slot @i: 2 operations, and @work rounds of computing. */
NOINL static int step(unsigned i, long work)
{
	uint64_t r = next();
	unsigned k = below(next(), 100);
	size_t n = mix_size(r);
	void *old = pool[i], *p;

	if (old)
		sum += *(uint64_t *)old;
	if (k >= 95 && old) {
		p = realloc(old, n);
		if (!p)
			return -1;
	} else {
		free(old);
		p = layer1(k, n);
		if (!p)
			return -1;
	}
	touch(p, n, r);
	pool[i] = p;
	if (work)
		sum += compute(r, work);
	return 0;
}

/* A count from @s into @v: 0, or -1 when @s is not a whole number >= 0. */
static int count_arg(const char *s, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end || *v < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	long steps = 10000000, work = 0;
	struct timespec t;
	double cpu;

	if ((argc > 1 && count_arg(argv[1], &steps)) ||
	    (argc > 2 && count_arg(argv[2], &work)) || argc > 3) {
		fprintf(stderr, "usage: symprof-alloc-mix [STEPS [WORK]]\n");
		return 2;
	}

	for (long s = 0; s < steps; s++)
		if (step(below(next(), POOL), work)) {
			fprintf(stderr, "symprof-alloc-mix: out of memory\n");
			return 1;
		}
	for (unsigned i = 0; i < POOL; i++) {
		if (pool[i])
			sum += *(uint64_t *)pool[i];
		free(pool[i]);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	cpu = (double)t.tv_sec + (double)t.tv_nsec / 1e9;
	printf("%llu\n", (unsigned long long)sum);
	fprintf(stderr, "ops %ld ops_per_s %.0f\n", 2 * steps + POOL,
		(double)(2 * steps + POOL) / cpu);
	return 0;
}
