/*
 * t-slab.c - the slab of huge pages that decoded tables are carved from
 * (libsym/alloc.c): symi_map_zeroed() gives zeros even where an earlier
 * piece was written; pieces never overlap; the last piece freed is taken
 * back and the slab is taken back whole when every piece is free; a
 * piece the slab cannot hold comes from mmap() or malloc() and is freed
 * the same way; two threads carving and freeing at once never share a
 * byte; an injected allocation failure still fails.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "base.h"

#define MiB ((size_t)1 << 20)

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void test_reuse(void)
{
	uint8_t *a, *b, *c, *d;

	a = symi_map_zeroed(100000);
	CHECK(a && all_zero(a, 100000));
	memset(a, 0xab, 100000);
	b = symi_malloc_slab(300000);
	CHECK(b != NULL);
#ifndef SYMI_ASAN
	/* Carved from the slab, next to a (64-byte steps). */
	CHECK(b == a + 100032);
#endif
	/* b is not zeroed, a's bytes stay a's. */
	memset(b, 0xcd, 300000);
	CHECK(a[99999] == 0xab && (b + 300000 <= a || b >= a + 100000));
	/* The top piece back, and carved again: zeros where b wrote. */
	symi_free_slab(b, 300000);
	c = symi_map_zeroed(300000);
	CHECK(c && all_zero(c, 300000));
	memset(c, 0xef, 300000);
	/* A piece freed below the top stays carved until all are free. */
	symi_unmap(a, 100000);
	d = symi_map_zeroed(50000);
	CHECK(d && all_zero(d, 50000) &&
	      (d + 50000 <= c || d >= c + 300000));
	symi_unmap(d, 50000);
	symi_unmap(c, 300000);
	/* Every piece free: carved from the start again, zeroed. */
	a = symi_map_zeroed(7 * MiB);
	CHECK(a && all_zero(a, 7 * MiB));
	memset(a, 0x11, 7 * MiB);
	/* The slab is full: the next pieces come from elsewhere. */
	b = symi_map_zeroed(2 * MiB);
	c = symi_malloc_slab(2 * MiB);
	CHECK(b && c && all_zero(b, 2 * MiB) &&
	      (b + 2 * MiB <= a || b >= a + 7 * MiB) &&
	      (c + 2 * MiB <= a || c >= a + 7 * MiB));
	memset(b, 1, 2 * MiB);
	memset(c, 2, 2 * MiB);
	CHECK(a[7 * MiB - 1] == 0x11);
	symi_unmap(b, 2 * MiB);
	symi_free_slab(c, 2 * MiB);
	symi_unmap(a, 7 * MiB);
	/* A piece bigger than the whole slab. */
	a = symi_map_zeroed(9 * MiB);
	CHECK(a && all_zero(a, 9 * MiB));
	symi_unmap(a, 9 * MiB);
}

/* Two threads carve pieces of their own pattern, check them, free them in
 * an order of their own. */
static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	unsigned seed = (unsigned)id * 7919u + 1;
	uint8_t *p[16] = { 0 };
	size_t n[16] = { 0 };
	bool ok = true;

	for (int round = 0; round < 4000 && ok; round++) {
		int k = rand_r(&seed) % 16;

		if (p[k]) {
			for (size_t i = 0; i < n[k] && ok; i += 97)
				ok = p[k][i] == (uint8_t)(id + k);
			symi_unmap(p[k], n[k]);
			p[k] = NULL;
			continue;
		}
		n[k] = 1 + (size_t)(rand_r(&seed) % 200000);
		p[k] = symi_map_zeroed(n[k]);
		if (!p[k] || !all_zero(p[k], n[k])) {
			ok = false;
			break;
		}
		memset(p[k], (int)(uint8_t)(id + k), n[k]);
	}
	for (int k = 0; k < 16; k++)
		symi_unmap(p[k], n[k]);
	return ok ? arg : NULL;
}

static void test_threads(void)
{
	pthread_t t[2];
	void *r[2] = { NULL, NULL };

	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i * 64 + 1));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &r[i]);
	CHECK(r[0] && r[1]);
}

static void test_fail(void)
{
	void *p;

	symi_test_fail_alloc(1);
	p = symi_map_zeroed(4096);
	CHECK(p == NULL);
	symi_test_fail_alloc(1);
	p = symi_malloc_slab(4096);
	CHECK(p == NULL);
	symi_test_fail_alloc(0);
}

int main(void)
{
	test_reuse();
	test_threads();
	test_fail();
	return tap_done();
}
