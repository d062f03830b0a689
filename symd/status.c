/*
 * status.c - the status page and GET /v1/status (status.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sym.h"
#include "fetch.h"
#include "req.h"
#include "status.h"
#include "symd.h"
#include "base.h"

/* symd/status.html as a C string, made by the Makefile. */
static const char page[] =
#include "status-html.h"
	;

struct request {
	int64_t wall_ms;		/* 0: an empty slot */
	char client[48];
	char method[16];
	char path[SYMD_STATUS_PATH_MAX + 4];
	int status;
	uint64_t usec;
};

struct failure {
	int64_t wall_ms;
	char build_id[SYMD_BUILD_ID_MAX + 1];
	char msg[256];
};

/* The rings: @n entries written in all, the newest at (n - 1) % size. */
static struct {
	pthread_mutex_t mu;
	struct request req[SYMD_STATUS_REQUESTS];
	uint64_t nreq;
	struct failure fail[SYMD_STATUS_FAILURES];
	uint64_t nfail;
} rings = { .mu = PTHREAD_MUTEX_INITIALIZER };

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Copy at most @n - 1 bytes of @s; a cut one ends in "...". */
static void copy_cut(char *dst, size_t n, const char *s)
{
	size_t len = strlen(s);

	if (len < n) {
		memcpy(dst, s, len + 1);
		return;
	}
	memcpy(dst, s, n - 4);
	memcpy(dst + n - 4, "...", 4);
}

void symd_status_request(const char *method, const char *path,
			 const char *peer, int status, uint64_t usec)
{
	struct request *r;

	/* The page polls every 5 s: its reads would push everything else
	 * out of the ring. */
	if (status == 200 && strcmp(path, "/v1/status") == 0)
		return;
	pthread_mutex_lock(&rings.mu);
	r = &rings.req[rings.nreq++ % SYMD_STATUS_REQUESTS];
	r->wall_ms = wall_ms();
	copy_cut(r->client, sizeof(r->client), peer);
	copy_cut(r->method, sizeof(r->method), method);
	copy_cut(r->path, sizeof(r->path), path);
	r->status = status;
	r->usec = usec;
	pthread_mutex_unlock(&rings.mu);
}

void symd_status_fetch(int err, const char *build_id,
		       const struct symd_fetch_info *info)
{
	struct failure *f;

	if (err != -SYMD_FETCH_FAILED)
		return;
	pthread_mutex_lock(&rings.mu);
	f = &rings.fail[rings.nfail++ % SYMD_STATUS_FAILURES];
	f->wall_ms = wall_ms();
	copy_cut(f->build_id, sizeof(f->build_id), build_id);
	copy_cut(f->msg, sizeof(f->msg), info->msg[0] ? info->msg :
		 symd_fetch_strerror(err));
	pthread_mutex_unlock(&rings.mu);
}

/* ---------------------------------------------------------------- JSON */

/* KEY"RFC 3339 time in UTC, milliseconds" (@key has its quotes, colon
 * and any comma before it, as add_str()'s) */
static int add_time(struct symi_buf *b, const char *key, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char s[40];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	return symi_buf_addf(b, "%s\"%s.%03dZ\"", key, s, (int)(ms % 1000));
}

/* KEY"S", @key being e.g. ",\"path\":" (any bytes: valid JSON) */
static int add_str(struct symi_buf *b, const char *key, const char *s)
{
	int err = symi_buf_add(b, key, strlen(key));

	return err ? err : symd_json_add_cstr(b, s);
}

static int enc_store(struct symi_buf *b, const struct symd_work_queues *q)
{
	uint64_t bytes, tables, neg[4];

	symd_metrics_store_figs(&bytes, &tables, neg);
	return symi_buf_addf(b, ",\"store\":{\"bytes\":%llu,\"limit\":%llu,"
			     "\"tables\":%llu,\"absent\":%llu,\"failed\":%llu,"
			     "\"badconv\":%llu}",
			     (unsigned long long)bytes,
			     (unsigned long long)q->max_store_size,
			     (unsigned long long)tables,
			     (unsigned long long)neg[SYM_STORE_ABSENT],
			     (unsigned long long)neg[SYM_STORE_FAILED],
			     (unsigned long long)neg[SYM_STORE_BADCONV]);
}

static int enc_queues(struct symi_buf *b, const struct symd_work_queues *q)
{
	return symi_buf_addf(b, ",\"queues\":{\"conversion\":%u,\"fetch\":%u,"
			     "\"io\":%u,\"running\":%u,\"max\":%u,"
			     "\"cpu_workers\":%u,\"fetch_workers\":%u}",
			     q->cpu, q->fetch, q->io, q->running, q->max,
			     q->cpu_workers, q->fetch_workers);
}

/* --------------------------------------------------- build IDs by state */

enum { ST_OK, ST_PENDING, ST_MISSING, ST_ERROR, ST_N };
static const char *const st_names[ST_N] = {
	"ok", "pending", "missing", "error"
};

struct pick {
	double age;
	char id[SYMD_BUILD_ID_MAX + 1];
	char error[256];
};

/* The SYMD_STATUS_PER_STATE most recent of each state, and counts. */
struct picks {
	struct pick p[ST_N][SYMD_STATUS_PER_STATE];
	size_t n[ST_N];		/* filled */
	size_t oldest[ST_N];	/* the slot to replace when full */
	uint64_t count[ST_N];
};

static int st_index(enum symd_state s)
{
	switch (s) {
	case SYMD_READY:
		return ST_OK;
	case SYMD_MISSING:
		return ST_MISSING;
	case SYMD_FAILED:
		return ST_ERROR;
	default:
		return ST_PENDING;
	}
}

static void pick_entry(void *ctx, const char *id, enum symd_state state,
		       const char *error, double age)
{
	struct picks *ps = ctx;
	int k = st_index(state);
	struct pick *row = ps->p[k], *slot;

	ps->count[k]++;
	if (ps->n[k] < SYMD_STATUS_PER_STATE) {
		slot = &row[ps->n[k]++];
	} else if (age < row[ps->oldest[k]].age) {
		slot = &row[ps->oldest[k]];
	} else {
		return;
	}
	slot->age = age;
	copy_cut(slot->id, sizeof(slot->id), id);
	copy_cut(slot->error, sizeof(slot->error), error);
	if (ps->n[k] == SYMD_STATUS_PER_STATE) {
		size_t o = 0;

		for (size_t i = 1; i < SYMD_STATUS_PER_STATE; i++)
			if (row[i].age > row[o].age)
				o = i;
		ps->oldest[k] = o;
	}
}

static int by_age(const void *a, const void *b)
{
	double x = ((const struct pick *)a)->age;
	double y = ((const struct pick *)b)->age;

	return x < y ? -1 : x > y;
}

static int enc_state(struct symi_buf *b, struct picks *ps, int k)
{
	int err = symi_buf_addf(b, "%s\"%s\":{\"count\":%llu,\"recent\":[",
				k ? "," : "", st_names[k],
				(unsigned long long)ps->count[k]);

	qsort(ps->p[k], ps->n[k], sizeof(struct pick), by_age);
	for (size_t i = 0; i < ps->n[k] && !err; i++) {
		const struct pick *p = &ps->p[k][i];

		err = add_str(b, i ? ",{\"build_id\":" : "{\"build_id\":",
			      p->id);
		if (!err)
			err = symi_buf_addf(b, ",\"age_s\":%.1f", p->age);
		if (!err)
			err = add_str(b, ",\"error\":", p->error);
		if (!err)
			err = symi_buf_add(b, "}", 1);
	}
	return err ? err : symi_buf_add(b, "]}", 2);
}

static int enc_build_ids(struct symi_buf *b, struct symd_work *w,
			 const struct symd_work_queues *q)
{
	struct picks *ps = calloc(1, sizeof(*ps));
	int err;

	if (!ps)
		return -ENOMEM;
	symd_work_each(w, pick_entry, ps);
	err = symi_buf_addf(b, ",\"build_ids\":{\"known\":%u,\"states\":{",
			    q->known);
	for (int k = 0; k < ST_N && !err; k++)
		err = enc_state(b, ps, k);
	free(ps);
	return err ? err : symi_buf_add(b, "}}", 2);
}

/* ------------------------------------------------------ the store's */

struct stored {
	struct symi_buf *b;
	unsigned n;
	int err;
};

static int enc_stored_one(void *ctx, const char *id,
			  const struct sym_store_entry *e)
{
	static const char *const kind[4] = { "ok", "missing", "error",
					     "error" };
	struct stored *s = ctx;
	struct symi_buf *b = s->b;
	int err;

	if (s->n == SYMD_STATUS_PER_STATE)
		return 1;
	err = add_str(b, s->n++ ? ",{\"build_id\":" : "{\"build_id\":", id);
	if (!err)
		err = symi_buf_addf(b, ",\"state\":\"%s\",\"size\":%llu",
				    kind[e->negative >= 0 && e->negative < 4 ?
					 e->negative : 2],
				    (unsigned long long)e->size);
	if (!err)
		err = add_time(b, ",\"stored\":", e->created * 1000);
	if (!err)
		err = add_str(b, e->negative ? ",\"error\":" : ",\"source\":",
			      e->text);
	if (!err)
		err = symi_buf_add(b, "}", 1);
	s->err = err;
	return err ? 1 : 0;
}

/* The first SYMD_STATUS_PER_STATE entries of the store, in build-ID
 * order: a cursor that stops there, so memory-speed reads. */
static int enc_stored(struct symi_buf *b, struct sym_store *st)
{
	struct stored s = { .b = b };
	int err = symi_buf_addf(b, ",\"stored\":[");

	if (!err && st && sym_store_list(st, enc_stored_one, &s) < 0)
		err = s.err;
	if (!err)
		err = s.err;
	return err ? err : symi_buf_add(b, "]", 1);
}

/* ------------------------------------------------- upstreams, requests */

/* The upstream of @urls that @msg names, the longest if several do (one
 * URL may start another): its start in *@url, its length; 0 and "" if
 * none does. */
static size_t upstream_of(const char *urls, const char *msg,
			  const char **url)
{
	const char *u = urls;
	size_t best = 0;

	*url = "";
	while (u && *u) {
		size_t n;
		char one[512];

		u += strspn(u, " \t");
		n = strcspn(u, " \t");
		if (n > best && n < sizeof(one)) {
			memcpy(one, u, n);
			one[n] = '\0';
			if (strstr(msg, one)) {
				*url = u;
				best = n;
			}
		}
		u += n;
	}
	return best;
}

/* One upstream (@n bytes at @url): its URL and how many of the failures
 * kept name it.  Under rings.mu. */
static int enc_upstream(struct symi_buf *b, const char *url, size_t n,
			bool first)
{
	size_t kept = rings.nfail < SYMD_STATUS_FAILURES ?
		      (size_t)rings.nfail : SYMD_STATUS_FAILURES;
	unsigned hits = 0;
	char one[512];
	int err;

	if (n < sizeof(one)) {
		memcpy(one, url, n);
		one[n] = '\0';
		for (size_t i = 0; i < kept; i++)
			hits += strstr(rings.fail[i].msg, one) != NULL;
	}
	err = symi_buf_addf(b, "%s{\"url\":", first ? "" : ",");
	if (!err)
		err = symd_json_add_str(b, url, n);
	return err ? err : symi_buf_addf(b, ",\"recent_failures\":%u}", hits);
}

/* Under rings.mu. */
static int enc_upstreams(struct symi_buf *b, const char *urls)
{
	const char *u = urls;
	bool first = true;
	size_t kept = rings.nfail < SYMD_STATUS_FAILURES ?
		      (size_t)rings.nfail : SYMD_STATUS_FAILURES;
	int err = symi_buf_addf(b, ",\"upstreams\":[");

	while (!err && u && *u) {
		size_t n;

		u += strspn(u, " \t");
		n = strcspn(u, " \t");
		if (n) {
			err = enc_upstream(b, u, n, first);
			first = false;
		}
		u += n;
	}
	if (!err)
		err = symi_buf_addf(b, "],\"upstream_failures_total\":%llu,"
				    "\"upstream_failures\":[",
				    (unsigned long long)rings.nfail);
	for (size_t i = 0; i < kept && !err; i++) {
		const struct failure *f =
			&rings.fail[(rings.nfail - 1 - i) % SYMD_STATUS_FAILURES];
		const char *url;
		size_t n = upstream_of(urls, f->msg, &url);

		err = add_time(b, i ? ",{\"time\":" : "{\"time\":",
			       f->wall_ms);
		if (!err)
			err = symi_buf_addf(b, ",\"upstream\":");
		if (!err)
			err = symd_json_add_str(b, url, n);
		if (!err)
			err = add_str(b, ",\"build_id\":", f->build_id);
		if (!err)
			err = add_str(b, ",\"error\":", f->msg);
		if (!err)
			err = symi_buf_add(b, "}", 1);
	}
	return err ? err : symi_buf_add(b, "]", 1);
}

/* Under rings.mu.  Newest first. */
static int enc_requests(struct symi_buf *b)
{
	size_t kept = rings.nreq < SYMD_STATUS_REQUESTS ?
		      (size_t)rings.nreq : SYMD_STATUS_REQUESTS;
	int err = symi_buf_addf(b, ",\"requests_total\":%llu,\"requests\":[",
				(unsigned long long)rings.nreq);

	for (size_t i = 0; i < kept && !err; i++) {
		const struct request *r =
			&rings.req[(rings.nreq - 1 - i) % SYMD_STATUS_REQUESTS];

		err = add_time(b, i ? ",{\"time\":" : "{\"time\":",
			       r->wall_ms);
		if (!err)
			err = add_str(b, ",\"client\":", r->client);
		if (!err)
			err = add_str(b, ",\"method\":", r->method);
		if (!err)
			err = add_str(b, ",\"path\":", r->path);
		if (!err)
			err = symi_buf_addf(b, ",\"status\":%d,"
					    "\"duration_ms\":%.3f}", r->status,
					    (double)r->usec / 1000.0);
	}
	return err ? err : symi_buf_add(b, "]", 1);
}

int symd_status_json(struct symi_buf *b, struct symd_work *w,
		     struct sym_store *st)
{
	struct symd_work_queues q;
	int err;

	symd_work_queues(w, &q);
	err = symi_buf_addf(b, "{\"version\":\"%s\"", SYMD_VERSION);
	if (!err)
		err = add_time(b, ",\"time\":", wall_ms());
	if (!err)
		err = enc_store(b, &q);
	if (!err)
		err = enc_build_ids(b, w, &q);
	if (!err)
		err = enc_stored(b, st);
	if (!err)
		err = enc_queues(b, &q);
	pthread_mutex_lock(&rings.mu);
	if (!err)
		err = enc_upstreams(b, q.urls);
	if (!err)
		err = enc_requests(b);
	pthread_mutex_unlock(&rings.mu);
	return err ? err : symi_buf_add(b, "}\n", 2);
}

const char *symd_status_page(size_t *len)
{
	*len = sizeof(page) - 1;
	return page;
}
