/*
 * metrics.c - what /metrics shows, in Prometheus' text format (0.0.4).
 *
 * Counters are process-wide relaxed atomics: the loop thread counts
 * requests and frames, workers count fetches and conversions, and a
 * scrape reads them all without a lock (a scrape may see one counter a
 * moment ahead of another, which Prometheus tolerates).  The store's
 * figures are read at scrape time.
 */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <event2/event.h>

#include "sym.h"
#include "fetch.h"
#include "log.h"
#include "req.h"
#include "s3.h"
#include "symd.h"
#include "base.h"

#define NBUCKETS 16
/* Seconds: request latency (sub-millisecond matters here) ... */
static const double lat_le[NBUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};
/* ... and fetches and conversions (seconds to minutes). */
static const double job_le[NBUCKETS] = {
	0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
	120, 300, 600,
};

struct hist {
	atomic_uint_fast64_t bucket[NBUCKETS];	/* not cumulative */
	atomic_uint_fast64_t count, sum_us;
};

static const char *const route_name[SYMD_R_MAX] = {
	[SYMD_R_SYMBOLIZE] = "symbolize",
	[SYMD_R_DEBUGINFO] = "debuginfo",
	[SYMD_R_BUILDID] = "buildid",
	[SYMD_R_METRICS] = "metrics",
	[SYMD_R_HEALTHZ] = "healthz",
	[SYMD_R_OTHER] = "other",
};

/* Job results, in a fixed order for the output: fetches (indexed by
 * enum symd_fetch_error, 0 for ok) and conversions have their own. */
static const char *const fetch_results[] = {
	[0] = "ok",
	[SYMD_FETCH_ABSENT] = "absent",
	[SYMD_FETCH_FAILED] = "failed",
	[SYMD_FETCH_CANCELLED] = "cancelled",
	[SYMD_FETCH_BADID] = "badid",
	[SYMD_FETCH_INVAL] = "invalid",
};
static const char *const convert_results[] = { "ok", "badconv", "error" };
#define NFETCH (sizeof(fetch_results) / sizeof(fetch_results[0]))
#define NCONVERT (sizeof(convert_results) / sizeof(convert_results[0]))

static struct {
	atomic_uint_fast64_t requests[SYMD_R_MAX][600];
	struct hist latency[SYMD_R_MAX];
	atomic_uint_fast64_t addresses, frames, hits, misses;
	atomic_uint_fast64_t fetches[NFETCH], fetch_bytes;
	atomic_uint_fast64_t converts[NCONVERT], upload_bytes;
	struct hist fetch_time, convert_time;
	struct hist lateness, lateness_own;
	atomic_uint_fast64_t lateness_max_us, lateness_own_max_us;
	/* [kind][0 get, 1 put][0 ok, 1 notfound, 2 error] */
	atomic_uint_fast64_t objstore[SYMD_OBJ_NKINDS][2][3], objstore_bytes[2];
	atomic_uint_fast64_t objstore_corrupt;
	/* [0 symtab, 1 lazy]: quick tables built; modules answered so */
	atomic_uint_fast64_t quick_tables[2], quick_answers[2];
	struct hist quick_time[2];
} m;

static void observe(struct hist *h, const double *le, uint64_t usec)
{
	size_t i = 0;

	while (i < NBUCKETS - 1 && (double)usec / 1e6 > le[i])
		i++;
	/* Past the last bound: only +Inf (count) holds it. */
	if ((double)usec / 1e6 <= le[i])
		atomic_fetch_add_explicit(&h->bucket[i], 1,
					  memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_us, usec, memory_order_relaxed);
}


void symd_metrics_request(enum symd_route r, int status, uint64_t usec)
{
	if ((unsigned)r >= SYMD_R_MAX)
		r = SYMD_R_OTHER;
	if (status < 0 || status >= 600)
		status = 0;
	atomic_fetch_add_explicit(&m.requests[r][status], 1,
				  memory_order_relaxed);
	observe(&m.latency[r], lat_le, usec);
}

void symd_metrics_frames(uint64_t addresses, uint64_t frames)
{
	atomic_fetch_add_explicit(&m.addresses, addresses,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&m.frames, frames, memory_order_relaxed);
}

void symd_metrics_cache(bool hit)
{
	atomic_fetch_add_explicit(hit ? &m.hits : &m.misses, 1,
				  memory_order_relaxed);
}

void symd_metrics_fetch(int err, uint64_t usec, uint64_t bytes)
{
	size_t i = err <= 0 && (size_t)-err < NFETCH ? (size_t)-err :
		   SYMD_FETCH_FAILED;

	atomic_fetch_add_explicit(&m.fetches[i], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&m.fetch_bytes, bytes,
				  memory_order_relaxed);
	observe(&m.fetch_time, job_le, usec);
}

void symd_metrics_quick_table(bool lazy, uint64_t usec)
{
	atomic_fetch_add_explicit(&m.quick_tables[lazy], 1,
				  memory_order_relaxed);
	observe(&m.quick_time[lazy], job_le, usec);
}

void symd_metrics_quick_answer(bool lazy)
{
	atomic_fetch_add_explicit(&m.quick_answers[lazy], 1,
				  memory_order_relaxed);
}

void symd_metrics_convert(int err, bool badconv, uint64_t usec)
{
	atomic_fetch_add_explicit(&m.converts[!err ? 0 : badconv ? 1 : 2], 1,
				  memory_order_relaxed);
	observe(&m.convert_time, job_le, usec);
}

void symd_metrics_upload(uint64_t bytes)
{
	atomic_fetch_add_explicit(&m.upload_bytes, bytes,
				  memory_order_relaxed);
}

void symd_metrics_objstore(enum symd_objstore_kind kind, bool put, int err,
			   uint64_t bytes)
{
	size_t k = (unsigned)kind < SYMD_OBJ_NKINDS ? (size_t)kind : 0;
	size_t res = !err ? 0 : err == -SYMD_S3_NOTFOUND ? 1 : 2;

	atomic_fetch_add_explicit(&m.objstore[k][put][res], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&m.objstore_bytes[put], bytes,
				  memory_order_relaxed);
}

void symd_metrics_objstore_corrupt(void)
{
	atomic_fetch_add_explicit(&m.objstore_corrupt, 1,
				  memory_order_relaxed);
}

/* Loop thread only (one writer): the max needs no compare-and-swap. */
static void note_max(atomic_uint_fast64_t *max, uint64_t v)
{
	if (v > atomic_load_explicit(max, memory_order_relaxed))
		atomic_store_explicit(max, v, memory_order_relaxed);
}

void symd_metrics_lateness(uint64_t usec, uint64_t own_usec)
{
	observe(&m.lateness, lat_le, usec);
	observe(&m.lateness_own, lat_le, own_usec);
	note_max(&m.lateness_max_us, usec);
	note_max(&m.lateness_own_max_us, own_usec);
}

static uint64_t get(atomic_uint_fast64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* Append printf-style: symi_buf_addf(), in short (the lines below are
 * long). */
#define addf symi_buf_addf

static int hist(struct symi_buf *b, const char *name, const char *labels,
		struct hist *h, const double *le)
{
	uint64_t cum = 0;
	int err = 0;

	for (size_t i = 0; i < NBUCKETS && !err; i++) {
		cum += get(&h->bucket[i]);
		err = addf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels,
			   *labels ? "," : "", le[i], (unsigned long long)cum);
	}
	if (!err)
		err = addf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name,
			   labels, *labels ? "," : "",
			   (unsigned long long)get(&h->count));
	if (!err)
		err = addf(b, "%s_sum%s%s%s %.6f\n%s_count%s%s%s %llu\n", name,
			   *labels ? "{" : "", labels, *labels ? "}" : "",
			   (double)get(&h->sum_us) / 1e6, name,
			   *labels ? "{" : "", labels, *labels ? "}" : "",
			   (unsigned long long)get(&h->count));
	return err;
}

/* The quick tables of cold build IDs and the modules they answered. */
static int render_quick(struct symi_buf *b)
{
	static const char *const kind[2] = { "symtab", "lazy" };
	int err = addf(b, "# HELP symd_quick_tables_total Tables of a cold "
		       "build ID built before its full table: symtab (symbols "
		       "alone) or lazy (the units of the addresses asked).\n"
		       "# TYPE symd_quick_tables_total counter\n");

	for (int i = 0; i < 2 && !err; i++)
		err = addf(b, "symd_quick_tables_total{kind=\"%s\"} %llu\n",
			   kind[i], (unsigned long long)get(&m.quick_tables[i]));
	if (!err)
		err = addf(b, "# HELP symd_quick_answers_total Modules answered "
			   "from a quick table: partial (symtab) or ok (lazy)."
			   "\n# TYPE symd_quick_answers_total counter\n");
	for (int i = 0; i < 2 && !err; i++)
		err = addf(b, "symd_quick_answers_total{kind=\"%s\"} %llu\n",
			   kind[i], (unsigned long long)get(&m.quick_answers[i]));
	if (!err)
		err = addf(b, "# HELP symd_quick_table_duration_seconds Quick "
			   "table build time.\n# TYPE "
			   "symd_quick_table_duration_seconds histogram\n");
	for (int i = 0; i < 2 && !err; i++) {
		char lab[32];

		snprintf(lab, sizeof(lab), "kind=\"%s\"", kind[i]);
		err = hist(b, "symd_quick_table_duration_seconds", lab,
			   &m.quick_time[i], job_le);
	}
	return err;
}

struct store_fig {
	uint64_t bytes, tables, negative[4];
};

/* The store's figures, counted by a worker (symd_metrics_store()): a
 * scrape on the loop thread never walks the whole store. */
static struct {
	atomic_uint_fast64_t bytes, tables, negative[4];
} store_figs;

static int count_entry(void *ctx, const char *id,
		       const struct sym_store_entry *e)
{
	struct store_fig *f = ctx;

	(void)id;
	if (e->negative == 0) {
		f->tables++;
		f->bytes += e->size;
	} else if (e->negative > 0 && e->negative < 4) {
		f->negative[e->negative]++;
	}
	return 0;
}

void symd_metrics_store(struct sym_store *st)
{
	struct store_fig f = { 0 };

	if (sym_store_list(st, count_entry, &f) != 0)
		return;
	atomic_store_explicit(&store_figs.bytes, f.bytes,
			      memory_order_relaxed);
	atomic_store_explicit(&store_figs.tables, f.tables,
			      memory_order_relaxed);
	for (int k = 0; k < 4; k++)
		atomic_store_explicit(&store_figs.negative[k], f.negative[k],
				      memory_order_relaxed);
}

void symd_metrics_store_figs(uint64_t *bytes, uint64_t *tables,
			     uint64_t negative[4])
{
	*bytes = get(&store_figs.bytes);
	*tables = get(&store_figs.tables);
	for (int k = 0; k < 4; k++)
		negative[k] = get(&store_figs.negative[k]);
}

static atomic_uint_fast64_t http_figs[3];	/* conns, buffered, answers */

void symd_metrics_http(uint64_t conns, uint64_t buffered, uint64_t answers)
{
	atomic_store_explicit(&http_figs[0], conns, memory_order_relaxed);
	atomic_store_explicit(&http_figs[1], buffered, memory_order_relaxed);
	atomic_store_explicit(&http_figs[2], answers, memory_order_relaxed);
}

/* NAME_seconds, a histogram, and NAME_max_seconds, the longest since
 * the start. */
static int lateness(struct symi_buf *b, const char *name, const char *help,
		    struct hist *h, atomic_uint_fast64_t *max)
{
	char hname[64];
	int err;

	snprintf(hname, sizeof(hname), "%s_seconds", name);
	err = addf(b, "# HELP %s %s.\n# TYPE %s histogram\n", hname, help,
		   hname);
	if (!err)
		err = hist(b, hname, "", h, lat_le);
	if (!err)
		err = addf(b, "# HELP %s_max_seconds The longest since the "
			   "start.\n# TYPE %s_max_seconds gauge\n"
			   "%s_max_seconds %.6f\n", name, name, name,
			   (double)get(max) / 1e6);
	return err;
}

/* ------------------------------------------------- the process's own */

/* What /proc/self/stat says of the process (proc(5)). */
struct proc_stat {
	unsigned long long start;		/* clock ticks */
	unsigned long long vsize, rss;		/* bytes, pages */
};

static int read_proc_stat(struct proc_stat *ps)
{
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	/* The command name may hold blanks and parentheses: fields are
	 * counted from the last ')', field 3 (state) first. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
			 "%*u %*u %*u %*d %*d %*d %*d %*d %*d %llu %llu "
			 "%llu", &ps->start, &ps->vsize, &ps->rss) != 3)
		return -EIO;
	return 0;
}

/* The boot time, seconds since the epoch ("btime" of /proc/stat). */
static double boot_time(void)
{
	char line[256];
	unsigned long long bt = 0;
	FILE *f = fopen("/proc/stat", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &bt) == 1)
			break;
	if (f)
		fclose(f);
	return (double)bt;
}

/* Descriptors open, less the one that reads the directory. */
static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	long n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

/*
 * The CPU time of all the process's threads, user and system, in seconds:
 * the kernel's own nanosecond count (CLOCK_PROCESS_CPUTIME_ID), where
 * /proc/self/stat's utime and stime are in clock ticks (10 ms), and a
 * young daemon's would read 0.  -1 if it cannot be read.
 */
static double cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The process_* metrics of Prometheus' client libraries (their names,
 * units and types), from /proc/self and the CPU clock.  A figure that
 * cannot be read is left out rather than shown as 0.
 */
static int process_metrics(struct symi_buf *b)
{
	static double start_s;	/* the process's start: read once */
	double tick = (double)sysconf(_SC_CLK_TCK);
	long page = sysconf(_SC_PAGESIZE), fds = open_fds();
	double cpu = cpu_seconds();
	struct proc_stat ps;
	struct rlimit rl;
	int err = 0;

	if (cpu >= 0)
		err = addf(b, "# HELP process_cpu_seconds_total Total user and "
			   "system CPU time spent in seconds.\n"
			   "# TYPE process_cpu_seconds_total counter\n"
			   "process_cpu_seconds_total %.6f\n", cpu);
	if (!err && read_proc_stat(&ps) == 0) {
		if (!start_s)
			start_s = boot_time() + (double)ps.start / tick;
		err = addf(b, "# HELP process_resident_memory_bytes Resident "
			   "memory size in bytes.\n"
			   "# TYPE process_resident_memory_bytes gauge\n"
			   "process_resident_memory_bytes %llu\n"
			   "# HELP process_virtual_memory_bytes Virtual memory "
			   "size in bytes.\n"
			   "# TYPE process_virtual_memory_bytes gauge\n"
			   "process_virtual_memory_bytes %llu\n"
			   "# HELP process_start_time_seconds Start time of the "
			   "process since unix epoch in seconds.\n"
			   "# TYPE process_start_time_seconds gauge\n"
			   "process_start_time_seconds %.2f\n",
			   ps.rss * (unsigned long long)page, ps.vsize,
			   start_s);
	}
	if (!err && fds >= 0)
		err = addf(b, "# HELP process_open_fds Number of open file "
			   "descriptors.\n# TYPE process_open_fds gauge\n"
			   "process_open_fds %ld\n", fds);
	if (!err && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		err = addf(b, "# HELP process_max_fds Maximum number of open "
			   "file descriptors.\n# TYPE process_max_fds gauge\n"
			   "process_max_fds %llu\n",
			   (unsigned long long)rl.rlim_cur);
	return err;
}

/* symd_build_info: the versions, as labels of a constant 1. */
static int build_info(struct symi_buf *b)
{
	return addf(b, "# HELP symd_build_info The versions of symd, of the "
		    "libsym it runs on and of libevent.\n"
		    "# TYPE symd_build_info gauge\n"
		    "symd_build_info{version=\"%s\",libsym=\"%s\","
		    "libevent=\"%s\"} 1\n"
		    "# HELP symd_log_dropped_lines_total Log lines lost: the "
		    "log buffer was full (stderr slow or not read).\n"
		    "# TYPE symd_log_dropped_lines_total counter\n"
		    "symd_log_dropped_lines_total %llu\n", SYMD_VERSION,
		    sym_version(NULL, NULL, NULL), event_get_version(),
		    (unsigned long long)symd_log_dropped());
}

/* The object store's counters (symd_metrics_objstore()). */
static int render_objstore(struct symi_buf *b)
{
	static const char *const kinds[] = {
		"", "debuginfo", "executable", "table", "kallsyms",
	};
	static const char *const res[] = { "ok", "notfound", "error" };
	int err = addf(b, "# HELP symd_objstore_requests_total Object store "
		       "transfers by object kind, direction and result.\n"
		       "# TYPE symd_objstore_requests_total counter\n");

	for (size_t k = 1; k < SYMD_OBJ_NKINDS && !err; k++)
		for (size_t d = 0; d < 2 && !err; d++)
			for (size_t r = 0; r < 3 && !err; r++)
				err = addf(b, "symd_objstore_requests_total{"
					   "kind=\"%s\",op=\"%s\","
					   "result=\"%s\"} %llu\n", kinds[k],
					   d ? "put" : "get", res[r],
					   (unsigned long long)get(
						   &m.objstore[k][d][r]));
	if (!err)
		err = addf(b, "# HELP symd_objstore_bytes_total Bytes moved "
			   "to and from the object store.\n"
			   "# TYPE symd_objstore_bytes_total counter\n"
			   "symd_objstore_bytes_total{op=\"get\"} %llu\n"
			   "symd_objstore_bytes_total{op=\"put\"} %llu\n"
			   "# HELP symd_objstore_corrupt_tables_total Tables "
			   "downloaded that failed their checks (discarded, "
			   "rebuilt).\n"
			   "# TYPE symd_objstore_corrupt_tables_total counter\n"
			   "symd_objstore_corrupt_tables_total %llu\n",
			   (unsigned long long)get(&m.objstore_bytes[0]),
			   (unsigned long long)get(&m.objstore_bytes[1]),
			   (unsigned long long)get(&m.objstore_corrupt));
	return err;
}

int symd_metrics_render(struct symi_buf *b, struct symd_work *w)
{
	static const char *const neg[4] = { "", "absent", "failed",
					    "badconv" };
	unsigned queued = 0, running = 0;
	char labels[64];
	int err = 0;

	err = process_metrics(b);
	if (!err)
		err = build_info(b);
	if (!err)
		err = addf(b, "# HELP symd_requests_total HTTP requests by route and "
		   "status.\n# TYPE symd_requests_total counter\n");
	for (int r = 0; r < SYMD_R_MAX && !err; r++) {
		for (int s = 0; s < 600 && !err; s++) {
			uint64_t v = get(&m.requests[r][s]);

			if (v)
				err = addf(b, "symd_requests_total{route=\"%s\","
					   "code=\"%d\"} %llu\n", route_name[r],
					   s, (unsigned long long)v);
		}
	}
	if (!err)
		err = addf(b, "# HELP symd_request_duration_seconds Time from "
			   "the first byte to the reply.\n# TYPE "
			   "symd_request_duration_seconds histogram\n");
	for (int r = 0; r < SYMD_R_MAX && !err; r++) {
		if (!get(&m.latency[r].count))
			continue;
		snprintf(labels, sizeof(labels), "route=\"%s\"",
			 route_name[r]);
		err = hist(b, "symd_request_duration_seconds", labels,
			   &m.latency[r], lat_le);
	}
	if (!err)
		err = addf(b,
			   "# HELP symd_addresses_total Addresses symbolized.\n"
			   "# TYPE symd_addresses_total counter\n"
			   "symd_addresses_total %llu\n"
			   "# HELP symd_frames_total Frames served.\n"
			   "# TYPE symd_frames_total counter\n"
			   "symd_frames_total %llu\n"
			   "# HELP symd_cache_hits_total Modules answered from "
			   "a ready table.\n"
			   "# TYPE symd_cache_hits_total counter\n"
			   "symd_cache_hits_total %llu\n"
			   "# HELP symd_cache_misses_total Modules that needed "
			   "a worker (cold, missing or failed).\n"
			   "# TYPE symd_cache_misses_total counter\n"
			   "symd_cache_misses_total %llu\n",
			   (unsigned long long)get(&m.addresses),
			   (unsigned long long)get(&m.frames),
			   (unsigned long long)get(&m.hits),
			   (unsigned long long)get(&m.misses));
	if (!err)
		err = addf(b, "# HELP symd_fetches_total Upstream debuginfod "
			   "fetches by result.\n"
			   "# TYPE symd_fetches_total counter\n");
	for (size_t i = 0; i < NFETCH && !err; i++)
		err = addf(b, "symd_fetches_total{result=\"%s\"} %llu\n",
			   fetch_results[i],
			   (unsigned long long)get(&m.fetches[i]));
	if (!err)
		err = addf(b, "# HELP symd_fetch_bytes_total Bytes fetched.\n"
			   "# TYPE symd_fetch_bytes_total counter\n"
			   "symd_fetch_bytes_total %llu\n"
			   "# HELP symd_upload_bytes_total Bytes uploaded.\n"
			   "# TYPE symd_upload_bytes_total counter\n"
			   "symd_upload_bytes_total %llu\n"
			   "# HELP symd_fetch_duration_seconds Fetch time.\n"
			   "# TYPE symd_fetch_duration_seconds histogram\n",
			   (unsigned long long)get(&m.fetch_bytes),
			   (unsigned long long)get(&m.upload_bytes));
	if (!err)
		err = hist(b, "symd_fetch_duration_seconds", "", &m.fetch_time,
			   job_le);
	if (!err)
		err = addf(b, "# HELP symd_conversions_total Table builds by "
			   "result.\n# TYPE symd_conversions_total counter\n");
	for (size_t i = 0; i < NCONVERT && !err; i++)
		err = addf(b, "symd_conversions_total{result=\"%s\"} %llu\n",
			   convert_results[i],
			   (unsigned long long)get(&m.converts[i]));
	if (!err)
		err = addf(b, "# HELP symd_conversion_duration_seconds Table "
			   "build time.\n# TYPE "
			   "symd_conversion_duration_seconds histogram\n");
	if (!err)
		err = hist(b, "symd_conversion_duration_seconds", "",
			   &m.convert_time, job_le);
	if (!err)
		err = render_quick(b);
	if (!err)
		err = render_objstore(b);
	if (w)
		symd_work_counts(w, &queued, &running);
	if (!err)
		err = addf(b, "# HELP symd_store_bytes Logical bytes of the "
			   "stored tables.\n# TYPE symd_store_bytes gauge\n"
			   "symd_store_bytes %llu\n"
			   "# HELP symd_store_tables Stored tables.\n"
			   "# TYPE symd_store_tables gauge\n"
			   "symd_store_tables %llu\n"
			   "# HELP symd_negative_entries Negative entries by "
			   "kind.\n# TYPE symd_negative_entries gauge\n",
			   (unsigned long long)get(&store_figs.bytes),
			   (unsigned long long)get(&store_figs.tables));
	for (int k = 1; k < 4 && !err; k++)
		err = addf(b, "symd_negative_entries{kind=\"%s\"} %llu\n",
			   neg[k],
			   (unsigned long long)get(&store_figs.negative[k]));
	if (!err)
		err = addf(b, "# HELP symd_jobs Worker jobs by state.\n"
			   "# TYPE symd_jobs gauge\n"
			   "symd_jobs{state=\"queued\"} %u\n"
			   "symd_jobs{state=\"running\"} %u\n", queued,
			   running);
	if (!err)
		err = addf(b, "# HELP symd_http_connections Open client "
			   "connections.\n# TYPE symd_http_connections gauge\n"
			   "symd_http_connections %llu\n"
			   "# HELP symd_http_buffered_bytes Request bodies "
			   "held in memory (--max-buffered).\n"
			   "# TYPE symd_http_buffered_bytes gauge\n"
			   "symd_http_buffered_bytes %llu\n"
			   "# HELP symd_answer_bytes Symbolize answers built "
			   "or not yet sent (--max-answers).\n"
			   "# TYPE symd_answer_bytes gauge\n"
			   "symd_answer_bytes %llu\n",
			   (unsigned long long)get(&http_figs[0]),
			   (unsigned long long)get(&http_figs[1]),
			   (unsigned long long)get(&http_figs[2]));
	if (!err)
		err = lateness(b, "symd_loop_lateness", "How late a timer due "
			       "every 25 ms ran: the event loop's steps that a "
			       "request arriving then waits behind",
			       &m.lateness, &m.lateness_max_us);
	if (!err)
		err = lateness(b, "symd_loop_lateness_own", "The lateness "
			       "less what the loop thread waited for a CPU",
			       &m.lateness_own, &m.lateness_own_max_us);
	return err;
}
