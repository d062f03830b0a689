/*
 * agg-work.c - the workload of tests/bench/agg-bench.sh: THREADS threads
 * that each, for SECONDS of wall time, do operations of about 20 us of CPU
 * at the end of a call chain picked at random among CARD (a power of two,
 * up to 4096) distinct ones, 12 calls deep: each level calls d0() or d1()
 * by one bit of the chain's number, so CARD 1 gives one stack and 4096
 * gives 4096.  With "block", each operation ends in a 200 us nanosleep
 * (an off-CPU period) at the end of the same chain.  Built with frame pointers, so that the kernel's
 * frame-pointer walk (--aggregate kernel) sees the distinct chains.
 *
 *	agg-work THREADS SECONDS CARD [block]
 *
 * Prints "ops N cpu_s C wall_s W": operations done, the process's CPU
 * time (user + sys, all threads), wall time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "base.h"

#define DEPTH 12

static double secs;
static unsigned card;
static int block;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void leaf(void)
{
	struct timespec nap = { 0, 200000 };
	unsigned long x = sink;

	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	if (block)
		nanosleep(&nap, NULL);
}

__attribute__((noinline)) static void d1(unsigned id, int lvl);

__attribute__((noinline)) static void d0(unsigned id, int lvl)
{
	if (lvl == 0)
		leaf();
	else if (id & 1)
		d1(id >> 1, lvl - 1);
	else
		d0(id >> 1, lvl - 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void d1(unsigned id, int lvl)
{
	if (lvl == 0)
		leaf();
	else if (id & 1)
		d1(id >> 1, lvl - 1);
	else
		d0(id >> 1, lvl - 1);
	__asm__ volatile("" ::: "memory");
}

static void *run(void *arg)
{
	unsigned long *ops = arg, seed = (unsigned long)arg;
	double end = now() + secs;

	while (now() < end) {
		seed = seed * 6364136223846793005UL + 1;
		d0((unsigned)(seed >> 33) & (card - 1), DEPTH);
		(*ops)++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 3 ? (int)strtol(argv[1], NULL, 10) : 0;
	unsigned long *ops, total = 0;
	pthread_t *t;
	struct rusage ru;
	double t0;

	if (n < 1 || n > 4096) {
		fprintf(stderr, "usage: agg-work THREADS SECONDS CARD [block]\n");
		return 2;
	}
	secs = atof(argv[2]);
	card = (unsigned)strtoul(argv[3], NULL, 10);
	if (card < 1 || card > 4096 || (card & (card - 1))) {
		fprintf(stderr, "agg-work: CARD is a power of two to 4096\n");
		return 2;
	}
	block = argc > 4 && strcmp(argv[4], "block") == 0;
	ops = calloc((size_t)n, 64);	/* a cache line each */
	t = calloc((size_t)n, sizeof(*t));
	if (!ops || !t)
		return 1;
	t0 = now();
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, run, &ops[i * 8]))
			return 1;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		total += ops[i * 8];
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("ops %lu cpu_s %.6f wall_s %.6f\n", total,
	       (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
	       now() - t0);
	return 0;
}
