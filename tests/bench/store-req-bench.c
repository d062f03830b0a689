/*
 * store-req-bench.c - what libsym costs one symd request: the time of
 * sym_store_table_flags() and a 1-address sym_store_lookup() of the same
 * build ID, as symd makes them for every answer, N times on each of T
 * threads sharing one store handle (docs/bench.md, "What was left was not
 * the lock").  Prints microseconds per request per thread; with T > 1 the
 * difference from T = 1 is what the threads' shared locks cost.
 *
 *	make build/tests/store-req-bench
 *	build/tests/store-req-bench STORE BUILD_ID ADDR N T
 *
 * ADDR in hex.  Exits 1 when a call fails.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sym.h"
#include "base.h"

#define MAX_THREADS 64

static struct sym_store *st;
static const char *bid;
static uint64_t addr;
static unsigned long n;

static int count_frames(void *ctx, size_t idx, const struct sym_frame *f,
			size_t nf)
{
	(void)idx;
	(void)f;
	*(size_t *)ctx += nf;
	return 0;
}

static void *run(void *arg)
{
	size_t frames = 0;
	uint32_t flags;

	(void)arg;
	for (unsigned long i = 0; i < n; i++) {
		if (sym_store_table_flags(st, bid, &flags) ||
		    sym_store_lookup(st, bid, &addr, 1, count_frames,
				     &frames)) {
			fprintf(stderr, "store-req-bench: a call failed\n");
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	SYM_OPTS(sym_store_opts, o);
	pthread_t t[MAX_THREADS];
	struct timespec a, b;
	unsigned long nt;
	char *end;
	int err;

	if (argc != 6) {
		fprintf(stderr, "usage: store-req-bench STORE BUILD_ID ADDR N "
			"THREADS\n");
		return 2;
	}
	bid = argv[2];
	addr = strtoull(argv[3], &end, 16);
	if (*end || end == argv[3]) {
		fprintf(stderr, "store-req-bench: '%s' is not a hex address\n",
			argv[3]);
		return 2;
	}
	n = strtoul(argv[4], &end, 10);
	if (*end)
		n = 0;
	nt = strtoul(argv[5], &end, 10);
	if (*end)
		nt = 0;
	if (!n || !nt || nt > MAX_THREADS) {
		fprintf(stderr, "store-req-bench: N and THREADS (1 to %d) must "
			"be positive numbers\n", MAX_THREADS);
		return 2;
	}
	err = sym_store_open(argv[1], &o, &st);
	if (err) {
		fprintf(stderr, "store-req-bench: %s: cannot open the store "
			"(%d)\n", argv[1], err);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned long i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, run, NULL);
	for (unsigned long i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.3f us a request a thread (%lu threads, %lu requests "
	       "each)\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 +
			     (double)(b.tv_nsec - a.tv_nsec)) / 1e3 / (double)n,
	       nt, n);
	sym_store_close(st);
	return 0;
}
