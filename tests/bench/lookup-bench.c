/*
 * lookup-bench.c - what a lookup costs once the table is built.
 *
 *   lookup-bench [-r REPS] [-d DIR] [-s STORE -b BUILDID] FILE ADDRFILE
 *
 * Opens FILE as `sym addr2line -e FILE` would (debug file searched by
 * build ID and debuglink, plus DIR when given), builds its table and times
 * that, then looks up every address of ADDRFILE (one hex address a line,
 * as tests/bench/bench.sh writes them) REPS times (default 7) in four
 * ways: single sym_table_lookup() calls and sym_table_lookup_batch(), each
 * in the file's (unsorted) order and sorted.  Prints the median ns per
 * address of each way, one `key value` per line, for bench.sh to parse:
 *
 *   build_s 0.512            table build time (open + sym_module_table)
 *   table_bytes 12345678
 *   rss_kb 81234             peak RSS after building (getrusage)
 *   frames_per_addr 1.83     mean frames per address (a sanity figure)
 *   single_unsorted_ns 95.1
 *   single_sorted_ns 40.2
 *   batch_unsorted_ns 93.0
 *   batch_sorted_ns 21.7
 *
 * With -s and -b it then opens the store STORE (read-only), which must
 * hold the table of BUILDID (sym store add), and times sym_store_lookup()
 * over the same addresses: the first call of the process (which also
 * checks each chunk's checksum, once per process), then the median of
 * REPS calls, unsorted and sorted:
 *
 *   store_first_ms 120.5
 *   store_unsorted_ns 110.2
 *   store_sorted_ns 35.0
 *
 * The frames are read (every name pointer and line) so that the work is
 * not optimized away and that the cost includes what a caller pays to
 * use them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "sym.h"
#include "base.h"

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint64_t use_frames(const struct sym_frame *fr, size_t n)
{
	uint64_t h = n;

	for (size_t i = 0; i < n; i++)
		h += fr[i].line + (uintptr_t)fr[i].name + (uintptr_t)fr[i].file;
	return h;
}

static int batch_cb(void *ctx, size_t idx, const struct sym_frame *fr,
		    size_t n)
{
	uint64_t *acc = ctx;

	(void)idx;
	*acc += use_frames(fr, n);
	return 0;
}

/* One pass over @addrs; returns ns per address. */
static double pass(const struct sym_table *t, const uint64_t *addrs,
		   size_t count, int batch, size_t *frames)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	uint64_t acc = 0;
	size_t n, total = 0;
	double t0 = now();

	if (batch) {
		if (sym_table_lookup_batch(t, addrs, count, batch_cb, &acc))
			return -1;
	} else {
		for (size_t i = 0; i < count; i++) {
			if (sym_table_lookup(t, addrs[i], fr, SYM_MAX_FRAMES,
					     &n))
				return -1;
			acc += use_frames(fr, n);
			total += n;
		}
	}
	t0 = now() - t0;
	sink += acc;
	if (frames)
		*frames = total;
	return t0 * 1e9 / (double)count;
}

static double median_of(const struct sym_table *t, const uint64_t *addrs,
			size_t count, int batch, int reps)
{
	double v[64];

	if (reps > 64)
		reps = 64;
	for (int r = 0; r < reps; r++) {
		v[r] = pass(t, addrs, count, batch, NULL);
		if (v[r] < 0)
			return -1;
	}
	qsort(v, (size_t)reps, sizeof(v[0]), cmp_double);
	return v[reps / 2];
}

/* One sym_store_lookup() over @addrs; returns ns per address. */
static double store_pass(struct sym_store *st, const char *bid,
			 const uint64_t *addrs, size_t count)
{
	uint64_t acc = 0;
	double t0 = now();

	if (sym_store_lookup(st, bid, addrs, count, batch_cb, &acc))
		return -1;
	t0 = now() - t0;
	sink += acc;
	return t0 * 1e9 / (double)count;
}

static double store_median(struct sym_store *st, const char *bid,
			   const uint64_t *addrs, size_t count, int reps)
{
	double v[64];

	if (reps > 64)
		reps = 64;
	for (int r = 0; r < reps; r++) {
		v[r] = store_pass(st, bid, addrs, count);
		if (v[r] < 0)
			return -1;
	}
	qsort(v, (size_t)reps, sizeof(v[0]), cmp_double);
	return v[reps / 2];
}

/* The store figures; 0 or 1 on failure. */
static int store_bench(const char *dir, const char *bid,
		       const uint64_t *addrs, const uint64_t *sorted,
		       size_t count, int reps)
{
	SYM_OPTS(sym_store_opts, opts, .flags = SYM_STORE_RDONLY);
	struct sym_store *st = NULL;
	char msg[128];
	double first;
	int err;

	err = sym_store_open(dir, &opts, &st);
	if (err) {
		fprintf(stderr, "lookup-bench: store '%s': %s\n", dir,
			sym_strerror(err, msg, sizeof(msg)));
		return 1;
	}
	first = store_pass(st, bid, addrs, count);
	if (first < 0) {
		fprintf(stderr, "lookup-bench: store '%s' has no usable table of %s\n",
			dir, bid);
		sym_store_close(st);
		return 1;
	}
	printf("store_first_ms %.1f\n", first * (double)count / 1e6);
	printf("store_unsorted_ns %.1f\n",
	       store_median(st, bid, addrs, count, reps));
	printf("store_sorted_ns %.1f\n",
	       store_median(st, bid, sorted, count, reps));
	sym_store_close(st);
	return 0;
}

static int read_addrs(const char *path, uint64_t **out, size_t *count)
{
	FILE *f = fopen(path, "r");
	uint64_t *v = NULL, *nv;
	size_t n = 0, cap = 0;
	char line[128];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		uint64_t a = strtoull(line, &end, 16);

		if (end == line)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				fclose(f);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = a;
	}
	fclose(f);
	*out = v;
	*count = n;
	return n ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	const char *dirs[2] = { NULL, NULL };
	const char *store = NULL, *bid = NULL;
	struct sym_module *mod = NULL;
	const struct sym_table *t = NULL;
	struct sym_table_stat st;
	struct rusage ru;
	uint64_t *addrs = NULL, *sorted = NULL;
	size_t count = 0, frames = 0;
	int reps = 7, opt, err, rc = 0;
	char msg[128];
	double t0, build;

	while ((opt = getopt(argc, argv, "r:d:s:b:")) != -1) {
		if (opt == 'r') {
			long v = strtol(optarg, NULL, 10);

			reps = v > 0 && v <= 1000 ? (int)v : 1;
		} else if (opt == 'd')
			dirs[0] = optarg;
		else if (opt == 's')
			store = optarg;
		else if (opt == 'b')
			bid = optarg;
		else
			return 2;
	}
	if (argc - optind != 2 || !store != !bid) {
		fprintf(stderr,
			"usage: lookup-bench [-r REPS] [-d DIR] [-s STORE -b BUILDID] FILE ADDRFILE\n");
		return 2;
	}
	err = read_addrs(argv[optind + 1], &addrs, &count);
	if (err) {
		fprintf(stderr, "lookup-bench: cannot read '%s': %s\n",
			argv[optind + 1], sym_strerror(err, msg, sizeof(msg)));
		return 1;
	}

	t0 = now();
	{
		SYM_OPTS(sym_module_opts, opts,
			 .debuginfo_path = dirs[0] ? dirs : NULL);
		err = sym_module_open(argv[optind], &opts, &mod);
	}
	if (!err)
		err = sym_module_table(mod, &t);
	build = now() - t0;
	if (err) {
		fprintf(stderr, "lookup-bench: '%s': %s\n", argv[optind],
			sym_strerror(err, msg, sizeof(msg)));
		sym_module_close(mod);
		free(addrs);
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	sym_table_stat(t, &st);

	sorted = malloc(count * sizeof(*sorted));
	if (!sorted) {
		sym_module_close(mod);
		free(addrs);
		return 1;
	}
	memcpy(sorted, addrs, count * sizeof(*sorted));
	qsort(sorted, count, sizeof(*sorted), cmp_u64);

	/* One warm-up pass, which also counts the frames. */
	pass(t, addrs, count, 0, &frames);

	printf("addresses %zu\n", count);
	printf("build_s %.3f\n", build);
	printf("table_bytes %zu\n", st.size);
	printf("rss_kb %ld\n", ru.ru_maxrss);
	printf("frames_per_addr %.2f\n", (double)frames / (double)count);
	printf("single_unsorted_ns %.1f\n", median_of(t, addrs, count, 0, reps));
	printf("single_sorted_ns %.1f\n", median_of(t, sorted, count, 0, reps));
	printf("batch_unsorted_ns %.1f\n", median_of(t, addrs, count, 1, reps));
	printf("batch_sorted_ns %.1f\n", median_of(t, sorted, count, 1, reps));
	fflush(stdout);
	/* Free the built table first: the store figures are those of a
	 * process that only maps the store. */
	sym_module_close(mod);
	if (store)
		rc = store_bench(store, bid, addrs, sorted, count, reps);

	free(sorted);
	free(addrs);
	return rc;
}
