/*
 * fuzz-perfmap.c - libFuzzer target over the perf map reader
 * (libsym/perfmap.c): /tmp/perf-PID.map is written by whatever runtime
 * runs as the profiled process, and read by sym record and libsymprof.
 *
 * The input is one perf map, copied into a buffer of exactly its size.
 * symi_perfmap_next() must walk it line by line (the offset always
 * moving on, one line number per line, the count equal to the input's
 * lines), each entry keeping perfmap.h's rules (START and SIZE as
 * documented, a name of 1 to SYMI_PERFMAP_LINE_MAX bytes inside the line
 * without NUL, CR or LF) and each skipped line saying why.  Then
 * symi_perfmap_flatten() over the entries must give sorted, disjoint,
 * non-empty segments, each inside its owner's range; and at every
 * entry's first, middle and last byte (and the byte after it),
 * symi_perfmap_find() must answer with the latest entry covering that
 * address, as a naive search over the entries says (inputs of at most
 * 512 entries are checked so).
 */
#include "fuzz.h"
#include "perfmap.h"

#include "base.h"

#define NAIVE_MAX 512

/* The latest of @n entries covering @a, or -1. */
static long naive(const struct symi_perfmap_ent *e, size_t n, uint64_t a)
{
	for (size_t i = n; i-- > 0;)
		if (a >= e[i].start && a - e[i].start < e[i].size)
			return (long)i;
	return -1;
}

static void check_ent(const char *buf, size_t len,
		      const struct symi_perfmap_ent *e)
{
	FUZZ_CHECK(e->size > 0 && e->size <= SYMI_PERFMAP_SIZE_MAX);
	FUZZ_CHECK(e->start + e->size > e->start);
	FUZZ_CHECK(e->namelen >= 1 && e->namelen <= SYMI_PERFMAP_LINE_MAX);
	FUZZ_CHECK(e->name >= buf && e->name + e->namelen <= buf + len);
	FUZZ_CHECK(!memchr(e->name, '\n', e->namelen) &&
		   !memchr(e->name, '\r', e->namelen) &&
		   !memchr(e->name, '\0', e->namelen));
	FUZZ_CHECK(e->name + e->namelen < buf + len &&
		   e->name[e->namelen] == '\n');
}

static void check_segs(const struct symi_perfmap_ent *e, size_t n)
{
	struct symi_perfmap_pt *pts = calloc(2 * n + 1, sizeof(*pts));
	uint32_t *heap = calloc(n + 1, sizeof(*heap));
	struct symi_perfmap_seg *segs = calloc(2 * n + 1, sizeof(*segs));
	size_t ns;

	FUZZ_CHECK(pts && heap && segs);
	ns = symi_perfmap_flatten(e, n, pts, heap, segs);
	FUZZ_CHECK(ns <= 2 * n);
	for (size_t i = 0; i < ns; i++) {
		const struct symi_perfmap_ent *o = &e[segs[i].ent];

		FUZZ_CHECK(segs[i].ent < n && segs[i].start < segs[i].end);
		FUZZ_CHECK(!i || segs[i - 1].end <= segs[i].start);
		FUZZ_CHECK(segs[i].start >= o->start &&
			   segs[i].end - o->start <= o->size);
	}
	for (size_t i = 0; n <= NAIVE_MAX && i < n; i++) {
		uint64_t at[4] = { e[i].start, e[i].start + e[i].size / 2,
				   e[i].start + e[i].size - 1,
				   e[i].start + e[i].size };

		for (int k = 0; k < 4; k++) {
			const struct symi_perfmap_seg *s =
				symi_perfmap_find(segs, ns, at[k]);
			long want = naive(e, n, at[k]);

			FUZZ_CHECK(s ? (long)s->ent == want : want < 0);
		}
	}
	free(pts);
	free(heap);
	free(segs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	struct symi_perfmap_ent *ents = NULL, e;
	size_t off = 0, prev, n = 0, cap = 0, lines = 0;
	uint32_t line = 0;
	const char *why;
	int rc;

	FUZZ_CHECK(buf);
	memcpy(buf, data, size);
	for (size_t i = 0; i < size; i++)
		lines += buf[i] == '\n';
	lines += size && buf[size - 1] != '\n';
	for (;;) {
		prev = off;
		why = NULL;
		rc = symi_perfmap_next(buf, size, &off, &line, &e, &why);
		if (!rc)
			break;
		FUZZ_CHECK(off > prev && off <= size);
		if (rc < 0) {
			FUZZ_CHECK(rc == -1 && why && why[0]);
			continue;
		}
		FUZZ_CHECK(rc == 1 && e.line == line);
		check_ent(buf, size, &e);
		if (symi_grow((void **)&ents, &cap, n + 1, sizeof(*ents)))
			abort();
		ents[n++] = e;
	}
	FUZZ_CHECK(off == size && line == lines);
	check_segs(ents, n);
	free(ents);
	free(buf);
	return 0;
}
