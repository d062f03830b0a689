/*
 * work.c - what the daemon knows of each build ID, and the workers that
 * find out.
 *
 * The loop thread keeps a map from build ID to state (symd.h: enum
 * symd_state).  A build ID it knows nothing of gets one job, however
 * many requests ask for it; the requests wait on the entry.  The job runs
 * on worker threads in stages:
 *
 *   PREPARE (cpu)  the store has a table: verify its checksums once
 *                  (sym_store_warm()) -> READY; a negative entry ->
 *                  MISSING or FAILED; files but no table (an upload, a
 *                  stale converter) -> convert; nothing -> FETCH
 *   FETCH (fetch)  download the debug file from the upstreams (fetch.c)
 *                  into the store -> CONVERT; a 404 everywhere ->
 *                  ABSENT entry, MISSING; else a FAILED entry (backoff)
 *   CONVERT (cpu)  sym_conversion_open(); the symbols alone, then a lazy
 *                  table of the addresses requests want, each handed to
 *                  the loop as it is built (PROGRESS: the entry's quick
 *                  tables, symd_work_quick()); the full table from the
 *                  same module (sym_conversion_finish()), then warm ->
 *                  READY
 *
 * Three pools, so that a slow download never holds up a conversion, a
 * long conversion never holds up a download, and neither holds up an
 * upload's answer: "cpu" threads (by default one fewer than the cores,
 * so the event loop keeps a core for warm answers), "fetch" threads
 * (mostly waiting on the network) and one "io" thread for INGEST (check
 * an upload's build ID, rename it into the store: light, so the 201
 * never waits behind a conversion, which is queued on "cpu" after it)
 * and REMOVE (a DELETE's unlinks and sync, in order with the uploads).  Results
 * go back to the loop through a done list and one event; waiters are
 * called only there.  Every queue is bounded: a full one is -EBUSY, and
 * the API answers 503 with Retry-After.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <event2/event.h>

#include "sym.h"
#include "fetch.h"
#include "s3.h"
#include "status.h"
#include "log.h"
#include "symd.h"
#include "base.h"

#define ID_MAX 128
#define NBUCKETS 16384
#define ENTRIES_MAX 65536	/* known build IDs kept before a sweep */
#define MISSING_RECHECK 60	/* seconds a MISSING answer is reused */
#define NOSOURCE_RECHECK 5	/* MISSING with no upstream: an upload may
				 * come at any time */
#define CLIENT_MAX 48		/* a client's key: its address, no port */
#define ABANDONED_S 30		/* a queued cold lookup nobody waited for
				 * or asked about for this long is dropped
				 * when it reaches a worker */
#define CLIENT_BUCKETS 256

enum job_kind {
	J_NONE, J_PREPARE, J_FETCH, J_CONVERT, J_INGEST, J_REMOVE, J_FILE,
	J_SOURCE,
	J_MAINTAIN, J_REVALIDATE, J_META,
	J_PROGRESS
};

struct symd_waiter {
	struct symd_waiter *next, *prev;
	struct entry *e;
	symd_wait_fn fn;
	void *arg;
};

struct entry {
	char id[ID_MAX + 1];
	enum symd_state state;
	char error[512];
	double until;		/* MISSING, FAILED: valid until (monotonic) */
	double changed;		/* when @state last changed (monotonic) */
	bool rerun;		/* new files came while PENDING */
	bool forgotten;		/* removed while PENDING: the job's verdict
				 * is stale, ask the store again */
	struct symd_job *job;	/* PENDING: the job out for it */
	/* With an object store: the generation of the bucket's files the
	 * READY table was built from ("": unknown, e.g. a table from before
	 * a restart), when that was last checked (monotonic; 0: never), and
	 * whether a J_REVALIDATE is out (then the table is still served). */
	char gen[SYMD_OBJ_GEN_MAX];
	double checked;
	bool revalidating;
	char client[CLIENT_MAX];	/* who asked last ("": nobody known) */
	struct symd_waiter *waiters;
	struct symd_quick *quick;	/* PENDING: its quick tables; NULL:
					 * none yet */
	struct entry *hnext;
};

struct symd_job {
	enum job_kind kind;
	struct symd_job *next;
	struct entry *e;	/* PREPARE, FETCH, CONVERT */
	char id[ID_MAX + 1];
	/* PREPARE, FETCH: the client it counts against ("": none). */
	char client[CLIENT_MAX];
	bool dropped;		/* taken off its queue before it ran */
	/* Under mu: requests waiting for it, and when it was last asked
	 * about (monotonic seconds). */
	unsigned waiters;
	double asked;
	char source[512];	/* where the debug file came from */
	/* The generation of the files converted or imported ("": unknown);
	 * REVALIDATE: the entry's when it started. */
	char gen[SYMD_OBJ_GEN_MAX];
	char exe_gen[32];	/* the bucket's executable's, when known */
	/* INGEST with an object store: the uploader's metadata lines, and
	 * ?force=1; the stored quality when refused with 409 (-1: none). */
	char *upmeta;
	bool force;
	int have_quality;
	/* META */
	symd_meta_fn mfn;
	struct symd_objstore_files *fs;
	/* INGEST, REMOVE, FILE */
	int fkind;
	char section[130];
	char *path;
	char *src;		/* SOURCE: the source's path; free() */
	bool temporary;
	symd_ingest_fn ifn;
	symd_file_fn ffn;
	void *arg;
	/* Under mu: the addresses requests want answered by the lazy path
	 * (symd_work_want()); closed once the worker took them, over when
	 * past lazy_max (then none is). */
	uint64_t *want;
	size_t nwant, capwant;
	bool want_closed, want_over;
	/* PROGRESS: a quick table of the job's build ID; free()d addrs. */
	struct sym_table *qtab;
	bool qlazy;
	uint64_t *qaddrs;
	size_t nqaddrs;
	/* The result, read by the loop once the job is on the done list. */
	enum symd_state state;
	int http_status;
	unsigned retry_after_ms;
	char msg[512];
};

struct queue {
	struct symd_job *head, *tail;
	unsigned n;
	pthread_cond_t cv;
	char last[CLIENT_MAX];	/* the client of the job popped last */
};

/* Jobs out (queued or running) per client, for the fair share. */
struct client {
	char key[CLIENT_MAX];
	unsigned jobs;
	struct client *next;
};

struct symd_work {
	struct symd_work_opts o;
	struct event_base *base;
	struct event *done_ev;
	/* Loop thread only. */
	struct entry *buckets[NBUCKETS];
	unsigned nentries;
	struct client *clients_out[CLIENT_BUCKETS];
	/* Under mu. */
	pthread_mutex_t mu;
	/* Held for reading from a table's store to its warm() (conversions,
	 * downloads); the size bound's gc takes it for writing, and skips a
	 * tick when it cannot: a table just stored has the second of its
	 * neighbours in the LRU and could go before warm() saw it. */
	pthread_rwlock_t gc_lock;
	struct queue cpu, fetch, io;
	struct symd_job *done;
	unsigned running;
	bool stopping;
	/* Threads; one fetch client per fetch thread. */
	pthread_t *threads;
	unsigned nthreads;
	struct symd_fetch **clients;
	unsigned nclients;
	/* Object store clients, one per thread (NULL: no object store). */
	struct symd_s3 **s3c;
	unsigned ns3;
	bool can_fetch;
	bool maintaining;	/* loop: a J_MAINTAIN job is out */
	/* $SYM_TEST_CONVERT_HOLD (tests): a conversion of build ID X waits
	 * while the file HOLD/X exists, so a test can hold a "long"
	 * conversion for as long as it needs, whatever the CPU's speed. */
	const char *hold_dir;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t now_us(void)
{
	return (uint64_t)(now_s() * 1e6);
}

/* ------------------------------------------------------ the entry map */

static unsigned hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h % NBUCKETS;
}

static struct entry *find(struct symd_work *w, const char *id)
{
	for (struct entry *e = w->buckets[hash(id)]; e; e = e->hnext) {
		if (strcmp(e->id, id) == 0)
			return e;
	}
	return NULL;
}

/* Bound the map: drop every settled entry nobody waits on.  They are
 * cheap to learn again (one PREPARE job that finds them verified). */
static void sweep(struct symd_work *w)
{
	for (unsigned b = 0; b < NBUCKETS; b++) {
		struct entry **pp = &w->buckets[b];

		while (*pp) {
			struct entry *e = *pp;

			if (e->state != SYMD_PENDING && !e->waiters &&
			    !e->revalidating) {
				*pp = e->hnext;
				free(e);
				w->nentries--;
			} else {
				pp = &e->hnext;
			}
		}
	}
}

static struct entry *find_or_add(struct symd_work *w, const char *id)
{
	struct entry *e = find(w, id);
	size_t n = strlen(id);
	unsigned h;

	if (e)
		return e;
	if (n > ID_MAX)
		return NULL;
	if (w->nentries >= ENTRIES_MAX)
		sweep(w);
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	memcpy(e->id, id, n + 1);
	h = hash(id);
	e->hnext = w->buckets[h];
	w->buckets[h] = e;
	w->nentries++;
	return e;
}

/* -------------------------------------------------------------- queues */

static void push(struct queue *q, struct symd_job *j)
{
	j->next = NULL;
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	q->n++;
	pthread_cond_signal(&q->cv);
}

/* Take @j off @q if it is still queued there (under mu). */
static bool unqueue(struct queue *q, struct symd_job *j)
{
	struct symd_job *prev = NULL;

	for (struct symd_job **pp = &q->head; *pp; pp = &(*pp)->next) {
		if (*pp != j) {
			prev = *pp;
			continue;
		}
		*pp = j->next;
		if (q->tail == j)
			q->tail = prev;
		q->n--;
		return true;
	}
	return false;
}

/*
 * The next job of @q (under mu), served per client in turn: when the
 * head is the client's that was served last, the first job of another
 * client goes first.  So a client that floods the queue with cold IDs
 * cannot put another client's lookup behind all of its own: that one
 * waits for at most one job of the flood per worker.  The scan is
 * bounded by --queue-max.
 */
static struct symd_job *pop(struct queue *q)
{
	struct symd_job *j = q->head;

	if (j && q->last[0] && strcmp(j->client, q->last) == 0) {
		for (struct symd_job *o = j->next; o; o = o->next) {
			if (strcmp(o->client, q->last) != 0) {
				j = o;
				break;
			}
		}
	}
	if (j) {
		unqueue(q, j);
		memcpy(q->last, j->client, CLIENT_MAX);
	}
	return j;
}

/* Queue @j on @q (loop thread); -EBUSY when the queues are full. */
static int submit(struct symd_work *w, struct symd_job *j, struct queue *q)
{
	int err = 0;

	pthread_mutex_lock(&w->mu);
	if (w->stopping)
		err = -ESHUTDOWN;
	else if (w->cpu.n + w->fetch.n + w->io.n >= w->o.queue_max)
		err = -EBUSY;
	else
		push(q, j);
	pthread_mutex_unlock(&w->mu);
	return err;
}

/* A worker hands @j back to the loop. */
static void finish(struct symd_work *w, struct symd_job *j)
{
	pthread_mutex_lock(&w->mu);
	j->next = w->done;
	w->done = j;
	pthread_mutex_unlock(&w->mu);
	event_active(w->done_ev, EV_READ, 0);
}

/* A worker moves @j on to the other pool. */
static void forward(struct symd_work *w, struct symd_job *j, bool to_fetch)
{
	pthread_mutex_lock(&w->mu);
	push(to_fetch ? &w->fetch : &w->cpu, j);
	pthread_mutex_unlock(&w->mu);
}

/* -------------------------------------------------------- the stages */

/* This worker thread's object store client; NULL without one. */
static __thread struct symd_s3 *tls_s3;

static void settle(struct symd_job *j, enum symd_state s, unsigned retry_ms,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void settle(struct symd_job *j, enum symd_state s, unsigned retry_ms,
		   const char *fmt, ...)
{
	va_list ap;

	j->state = s;
	j->retry_after_ms = retry_ms;
	j->msg[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
		va_end(ap);
	}
}

static const char *errstr(int err)
{
	static __thread char buf[128];

	return sym_strerror(err, buf, sizeof(buf));
}

/*
 * The log line of a failed fetch: the build ID, what was asked, the
 * upstream that failed (all of them when no one is known: a deadline)
 * and why.  A 404 everywhere is an answer, not a failure: level info.
 */
static void log_fetch(const struct symd_work *w, const struct symd_job *j,
		      const char *what, int err,
		      const struct symd_fetch_info *info)
{
	struct symd_log_line l;

	if (err == -SYMD_FETCH_CANCELLED)
		return;
	symd_log_begin(&l, err == -SYMD_FETCH_ABSENT ? SYMD_LOG_INFO :
		       SYMD_LOG_WARN, err == -SYMD_FETCH_ABSENT ?
		       "fetch_absent" : "fetch_failed");
	symd_log_str(&l, "build_id", j->id);
	symd_log_str(&l, "kind", what);
	symd_log_str(&l, "upstream", info->upstream[0] ? info->upstream :
		     w->o.urls);
	if (info->http_status)
		symd_log_u64(&l, "http_status", (uint64_t)info->http_status);
	symd_log_ms(&l, "duration_ms", info->usec);
	symd_log_str(&l, "error", info->msg[0] ? info->msg :
		     symd_fetch_strerror(err));
	symd_log_end(&l);
}

/* The log line of a failed conversion or store step: the build ID, where
 * its file came from (an upstream's URL, "upload", or "store": files
 * already there) and why. */
static void log_job_error(const char *event, const struct symd_job *j,
			  const char *why)
{
	struct symd_log_line l;

	symd_log_begin(&l, SYMD_LOG_WARN, event);
	symd_log_str(&l, "build_id", j->id);
	symd_log_str(&l, "source", j->source[0] ? j->source : "store");
	symd_log_str(&l, "error", why);
	symd_log_end(&l);
}

/* The table is stored: check it once, so the loop never does. */
static void warm(struct symd_work *w, struct symd_job *j)
{
	int err = sym_store_warm(w->o.store, j->id);

	if (!err)
		settle(j, SYMD_READY, 0, NULL);
	else
		settle(j, SYMD_FAILED, 1000, "reading the stored table: %s",
		       errstr(err));
}

static bool stopping(struct symd_work *w)
{
	bool s;

	pthread_mutex_lock(&w->mu);
	s = w->stopping;
	pthread_mutex_unlock(&w->mu);
	return s;
}

/* The test hook: wait while $SYM_TEST_CONVERT_HOLD/<id><@step> exists
 * (@step "": before the conversion; ".lazy": after the symbols alone,
 * before the lazy table; ".full": before the full table). */
static void test_hold(struct symd_work *w, const char *id, const char *step)
{
	char path[4096 + ID_MAX + 16];

	if (!w->hold_dir || snprintf(path, sizeof(path), "%s/%s%s",
				     w->hold_dir, id, step) >=
			    (int)sizeof(path))
		return;
	while (access(path, F_OK) == 0 && !stopping(w))
		usleep(10000);
}

/* An information line about a build ID and the object store. */
static void log_objstore_info(const struct symd_job *j, const char *event)
{
	struct symd_log_line l;

	symd_log_begin(&l, SYMD_LOG_INFO, event);
	symd_log_str(&l, "build_id", j->id);
	symd_log_str(&l, "gen", j->gen);
	symd_log_end(&l);
}

/* The log line of an object store transfer that failed. */
static void log_objstore(const struct symd_job *j, const char *event,
			 const struct symd_s3_result *r, int err)
{
	struct symd_log_line l;

	symd_log_begin(&l, SYMD_LOG_WARN, event);
	symd_log_str(&l, "build_id", j->id);
	symd_log_str(&l, "error", r->msg[0] ? r->msg : errstr(err));
	symd_log_end(&l);
}

/*
 * A table this node converted goes to the object store, so that no other
 * node converts it again.  A failure is logged: the table stays here, and
 * a node that misses it in the bucket converts it itself.
 */
static void objstore_put_table(struct symd_work *w, struct symd_job *j)
{
	struct symd_s3_result r;
	int err = symd_objstore_put_table(tls_s3, w->o.store, w->o.store_dir,
					  j->id, j->gen, &r);

	if (err)
		log_objstore(j, "objstore_put_failed", &r, err);
}

/* Hand a quick table of @j's build ID to the loop (a PROGRESS job); it
 * takes @t and @addrs, whatever happens. */
static void progress(struct symd_work *w, const struct symd_job *j,
		     struct sym_table *t, bool lazy, uint64_t *addrs, size_t n)
{
	struct symd_job *p = calloc(1, sizeof(*p));

	if (!p) {
		sym_table_close(t);
		free(addrs);
		return;
	}
	p->kind = J_PROGRESS;
	memcpy(p->id, j->id, sizeof(p->id));
	p->qtab = t;
	p->qlazy = lazy;
	p->qaddrs = addrs;
	p->nqaddrs = n;
	finish(w, p);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The addresses requests want of @j (sorted, unique: want_merge()), and
 * no more from now on; NULL when none (or too many). */
static uint64_t *take_want(struct symd_work *w, struct symd_job *j,
			   size_t *n)
{
	uint64_t *v;

	pthread_mutex_lock(&w->mu);
	v = j->want_over ? NULL : j->want;
	*n = v ? j->nwant : 0;
	if (!v)
		free(j->want);
	j->want = NULL;
	j->nwant = j->capwant = 0;
	j->want_closed = true;
	pthread_mutex_unlock(&w->mu);
	if (v && !*n) {
		free(v);
		v = NULL;
	}
	return v;
}

/* The symbols-alone table of a conversion, built on a thread of its own
 * while the lazy table is built on the job's (symtab_start()). */
struct symtab_run {
	struct symd_work *w;
	const struct symd_job *j;
	struct sym_conversion *cv;
	pthread_t th;
	bool started;
};

static void *symtab_main(void *arg)
{
	struct symtab_run *r = arg;
	struct sym_table *t;
	uint64_t t0 = now_us();

	if (sym_conversion_table_symbols(r->cv, &t) == 0) {
		symd_metrics_quick_table(false, now_us() - t0);
		progress(r->w, r->j, t, false, NULL, 0);
	}
	return NULL;
}

/* Start it on a thread that blocks every signal (they stay with the
 * threads that handle them); where no thread can be made, build it here
 * and now. */
static void symtab_start(struct symtab_run *r)
{
	sigset_t all, old;

	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old) == 0) {
		r->started = pthread_create(&r->th, NULL, symtab_main, r) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (!r->started)
		symtab_main(r);
}

static void symtab_join(struct symtab_run *r)
{
	if (r->started)
		pthread_join(r->th, NULL);
	r->started = false;
}

/*
 * The quick tables of a conversion, before its full table: the symbols
 * alone (from a module of their own, on a second thread) and, at the same
 * time, a lazy table of the addresses wanted, from the conversion's
 * module.  Built one after the other they took 0.17 s + 1.6 s on
 * libjvm's 1,000 addresses; the symbols' table is for "partial" answers
 * while the lazy one is built, so it no longer delays it.
 */
static void quick_tables(struct symd_work *w, struct symd_job *j,
			 struct sym_conversion *cv)
{
	struct symtab_run r = { .w = w, .j = j, .cv = cv };
	struct sym_module *m = sym_conversion_module(cv);
	struct sym_table *t;
	uint64_t t0, *v;
	size_t n;

	symtab_start(&r);
	/* The test hook (t2240's held conversions) sees them in order:
	 * the symbols' table out before the lazy table is held. */
	if (w->hold_dir)
		symtab_join(&r);
	test_hold(w, j->id, ".lazy");
	v = take_want(w, j, &n);
	t0 = now_us();
	if (v && sym_module_table_for(m, v, n, &t) == 0) {
		symd_metrics_quick_table(true, now_us() - t0);
		progress(w, j, t, true, v, n);
	} else {
		free(v);
	}
	symtab_join(&r);
	test_hold(w, j->id, ".full");
}

/* sym_store_convert() in steps, with the quick tables between. */
static int convert_steps(struct symd_work *w, struct symd_job *j)
{
	struct sym_conversion *cv;
	int err = sym_conversion_open(w->o.store, j->id,
				      j->source[0] ? j->source : NULL, &cv);

	if (err == -EEXIST)
		return 0;	/* another process stored it */
	if (err)
		return err;
	quick_tables(w, j, cv);
	return sym_conversion_finish(cv, NULL);
}

/* Build the table from the store's files.  Returns true when done
 * (settled), false when there are no files (fetch next). */
static bool convert(struct symd_work *w, struct symd_job *j)
{
	uint64_t t0;
	int err;

	test_hold(w, j->id, "");
	t0 = now_us();
	pthread_rwlock_rdlock(&w->gc_lock);
	err = convert_steps(w, j);
	if (err)
		pthread_rwlock_unlock(&w->gc_lock);

	if (err == -SYM_E_NOTFOUND)
		return false;
	if (err == -ECANCELED) {
		/* A remove overtook it (sym_store_remove()): nothing was
		 * stored; whatever came after the remove decides. */
		settle(j, SYMD_UNKNOWN, 0, "removed while converting");
		return true;
	}
	if (err) {
		struct sym_store_entry se;

		/* sym_store_convert() says "bad input" with a BADCONV entry. */
		symd_metrics_convert(err, sym_store_stat_entry(w->o.store, j->id,
							       &se) == 0 &&
				     se.negative == SYM_STORE_BADCONV,
				     now_us() - t0);
	} else {
		symd_metrics_convert(0, false, now_us() - t0);
	}
	if (err) {
		settle(j, SYMD_FAILED, w->o.ttl_failed * 1000,
		       "conversion failed: %s", errstr(err));
		log_job_error("convert_failed", j, errstr(err));
		return true;
	}
	/* The size bound is kept by the maintenance tick (J_MAINTAIN), not
	 * here, and not between the store and warm() (gc_lock). */
	symd_metrics_store(w->o.store);
	warm(w, j);
	pthread_rwlock_unlock(&w->gc_lock);
	if (j->state == SYMD_READY && tls_s3)
		objstore_put_table(w, j);
	return true;
}

/* Returns true when @j is settled, false when it went to the fetch pool
 * (and is no longer this thread's to touch). */
static bool prepare(struct symd_work *w, struct symd_job *j)
{
	struct sym_store_entry se;
	int err = sym_store_stat_entry(w->o.store, j->id, &se);

	if (!err && se.negative == 0) {
		err = sym_store_warm(w->o.store, j->id);
		if (!err) {
			settle(j, SYMD_READY, 0, NULL);
			return true;
		}
		/* Stale (another converter) or corrupt (removed): build it
		 * again from the files, or fetch them. */
		if (err != -SYM_E_STALE && err != -SYM_E_BADTABLE &&
		    err != -SYM_E_NOTFOUND) {
			settle(j, SYMD_FAILED, 1000, "store: %s", errstr(err));
			return true;
		}
	} else if (!err && se.negative == SYM_STORE_ABSENT) {
		settle(j, SYMD_MISSING, 0, "%s", se.text);
		return true;
	} else if (!err) {
		int64_t left = se.expires - (int64_t)time(NULL);

		settle(j, SYMD_FAILED, se.expires && left > 0 ?
		       (unsigned)left * 1000 : 60000, "%s%s",
		       se.negative == SYM_STORE_BADCONV ?
		       "conversion failed: " : "", se.text);
		return true;
	} else if (err != -SYM_E_NOTFOUND) {
		settle(j, SYMD_FAILED, 1000, "store: %s", errstr(err));
		return true;
	}
	if (convert(w, j))
		return true;
	if (!w->can_fetch && !w->o.s3) {
		settle(j, SYMD_MISSING, 0, "no debug file and no upstream");
		return true;
	}
	j->kind = J_FETCH;
	forward(w, j, true);
	return false;
}

/*
 * Read through the object store: the table (then nothing is converted),
 * else the debug file and the executable (then convert).  Returns true
 * when @j went on (settled or forwarded), false when the bucket has
 * neither; *down is set when the store failed rather than missed.
 */
static bool objstore_fetch(struct symd_work *w, struct symd_job *j,
			   struct symd_s3_result *down)
{
	struct symd_s3_result r;
	struct symd_objstore_files fs;
	int err, e_dbg, e_exe, e_ks;

	/* The files' generation first: a table built from other files than
	 * the bucket's (a better upload replaced them) is not taken. */
	err = symd_objstore_head_files(tls_s3, j->id, &fs, &r);
	if (err) {
		*down = r;
		return false;
	}
	snprintf(j->gen, sizeof(j->gen), "%s", fs.gen);
	snprintf(j->exe_gen, sizeof(j->exe_gen), "%s", fs.exe.gen);
	pthread_rwlock_rdlock(&w->gc_lock);
	err = symd_objstore_get_table(tls_s3, w->o.store, w->o.store_dir,
				      j->id, fs.dbg.present || fs.exe.present ?
				      fs.gen : NULL, &r);
	if (!err) {
		symd_metrics_store(w->o.store);
		warm(w, j);
		pthread_rwlock_unlock(&w->gc_lock);
		finish(w, j);
		return true;
	}
	pthread_rwlock_unlock(&w->gc_lock);
	if (err == -SYM_E_BADTABLE)
		log_objstore(j, "objstore_table_corrupt", &r, err);
	else if (err != -SYMD_S3_NOTFOUND && err != -SYM_E_STALE)
		*down = r;
	e_dbg = !fs.dbg.present ? -SYMD_S3_NOTFOUND :
		symd_objstore_get_file(tls_s3, w->o.store, w->o.store_dir,
				       j->id, SYMD_OBJ_DEBUGINFO, &r);
	if (e_dbg && e_dbg != -SYMD_S3_NOTFOUND)
		*down = r;
	e_exe = !fs.exe.present ? -SYMD_S3_NOTFOUND :
		symd_objstore_get_file(tls_s3, w->o.store, w->o.store_dir,
				       j->id, SYMD_OBJ_EXECUTABLE, &r);
	if (e_exe && e_exe != -SYMD_S3_NOTFOUND)
		*down = r;
	/* A kernel's (or module's) snapshot: only when no ELF file is. */
	e_ks = -SYMD_S3_NOTFOUND;
	if (e_dbg && e_exe)
		e_ks = symd_objstore_get_file(tls_s3, w->o.store,
					      w->o.store_dir, j->id,
					      SYMD_OBJ_KALLSYMS, &r);
	if (e_ks && e_ks != -SYMD_S3_NOTFOUND)
		*down = r;
	if (e_dbg && e_exe && e_ks)
		return false;
	snprintf(j->source, sizeof(j->source), "objstore");
	j->kind = J_CONVERT;
	forward(w, j, false);
	return true;
}

/* No upstream and nothing in the object store: missing, or failed when
 * the object store did not answer. */
static void objstore_miss(struct symd_work *w, struct symd_job *j,
			  const struct symd_s3_result *down)
{
	if (down->msg[0])
		settle(j, SYMD_FAILED, down->retry_after_ms ?
		       down->retry_after_ms : 1000, "object store: %s",
		       down->msg);
	else
		settle(j, SYMD_MISSING, 0, "not in the object store and no "
		       "upstream");
	finish(w, j);
}

/*
 * The metadata of a file going into the bucket: @who's lines (the
 * uploader), then its quality, the time (UTC) and a new generation (also
 * into @gen).
 */
static void upload_meta(char *out, size_t len, const char *who,
			const char *path, char *gen, size_t genlen)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int q = SYM_QUALITY_NONE;

	sym_file_quality(path, &q);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	symd_objstore_new_gen(gen, genlen);
	snprintf(out, len, "%ssym-quality=%s\nsym-uploaded=%s\nsym-gen=%s\n",
		 who ? who : "", sym_quality_name(q), when, gen);
}

/* A file fetched from an upstream is kept in the object store too. */
static void objstore_put_fetched(struct symd_work *w, struct symd_job *j)
{
	struct symd_s3_result r;
	char path[4096], meta[SYMD_S3_META_MAX], gen[32];
	int err = sym_store_file_path(w->o.store, j->id, SYM_STORE_DEBUGINFO,
				      path, sizeof(path));

	if (!err) {
		upload_meta(meta, sizeof(meta), "sym-uploader=upstream\n", path,
			    gen, sizeof(gen));
		err = symd_objstore_put_file(tls_s3, j->id, SYMD_OBJ_DEBUGINFO,
					     path, meta, &r);
	}
	if (err)
		log_objstore(j, "objstore_put_failed", &r, err);
	else
		symd_objstore_build_gen(j->gen, sizeof(j->gen), gen,
					j->exe_gen);
}

static void fetch(struct symd_work *w, struct symd_fetch *f,
		  struct symd_job *j)
{
	struct symd_fetch_info info;
	struct symd_s3_result down = { 0 };
	char *path = NULL;
	int err;

	if (tls_s3 && objstore_fetch(w, j, &down))
		return;
	if (!f) {
		objstore_miss(w, j, &down);
		return;
	}
	err = symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, j->id, NULL, NULL, &path,
			     &info);
	symd_metrics_fetch(err, info.usec, info.fetched);
	symd_status_fetch(err, j->id, &info);
	if (err)
		log_fetch(w, j, "debuginfo", err, &info);
	if (!err) {
		err = sym_store_take_file(w->o.store, j->id,
					  SYM_STORE_DEBUGINFO, path);
		if (err)
			symd_fetch_discard(path);
		free(path);
		if (err) {
			settle(j, SYMD_FAILED, 1000, "storing %s: %s",
			       info.url, errstr(err));
			snprintf(j->source, sizeof(j->source), "%s", info.url);
			log_job_error("store_failed", j, errstr(err));
			finish(w, j);
			return;
		}
		snprintf(j->source, sizeof(j->source), "%s", info.url);
		if (tls_s3)
			objstore_put_fetched(w, j);
		j->kind = J_CONVERT;
		forward(w, j, false);
		return;
	}
	if (err == -SYMD_FETCH_ABSENT) {
		sym_store_put_negative(w->o.store, j->id, SYM_STORE_ABSENT,
				       info.msg[0] ? info.msg :
				       "no upstream has it");
		settle(j, SYMD_MISSING, 0, "%s", info.msg);
	} else if (err == -SYMD_FETCH_CANCELLED) {
		settle(j, SYMD_FAILED, 1000, "shutting down");
	} else {
		sym_store_put_negative(w->o.store, j->id, SYM_STORE_FAILED,
				       info.msg);
		settle(j, SYMD_FAILED, w->o.ttl_failed * 1000, "%s",
		       info.msg[0] ? info.msg : symd_fetch_strerror(err));
	}
	finish(w, j);
}

/*
 * The 409 of docs/http-api.md ("Uploads"), decided on the bucket's
 * metadata: a debug file not better than the best of the bucket's files,
 * an executable when the bucket has one and it is not better.  True
 * (j->http_status 409, j->msg, j->have_quality) when refused.
 */
static bool not_better_than_bucket(struct symd_job *j,
				   const struct symd_objstore_files *fs)
{
	bool exe = j->fkind == SYM_STORE_EXECUTABLE;
	int up = SYM_QUALITY_NONE;

	if (fs->quality < 0 || (exe && !fs->exe.present) ||
	    sym_file_quality(j->path, &up) != 0 || up > fs->quality)
		return false;
	j->http_status = 409;
	j->have_quality = fs->quality;
	snprintf(j->msg, sizeof(j->msg), "the object store has %s for build "
		 "ID %s and this %s has %s: it would not improve it (?force=1, "
		 "or sym upload --force, stores it anyway)",
		 sym_quality_name(fs->quality), j->id,
		 exe ? "executable" : "debug file", sym_quality_name(up));
	return true;
}

/*
 * An upload is stored in the object store before it is acknowledged: a
 * 201 means any node can serve it.  The object store down is 503 (the
 * API adds Retry-After); the file is not kept here either, so the client
 * sends it again rather than believing it durable.  True when refused.
 */
static bool objstore_put_upload(struct symd_job *j)
{
	struct symd_s3_result r;
	struct symd_objstore_files fs;
	char meta[SYMD_S3_META_MAX], gen[32];
	bool exe = j->fkind == SYM_STORE_EXECUTABLE;
	bool ks = j->fkind == SYM_STORE_KALLSYMS;
	int err = symd_objstore_head_files(tls_s3, j->id, &fs, &r);

	/* (a snapshot's 409 is the local one: the bucket's metadata rank
	 * ELF files) */
	if (!err && !j->force && !ks && not_better_than_bucket(j, &fs))
		return true;
	if (!err) {
		upload_meta(meta, sizeof(meta), j->upmeta, j->path, gen,
			    sizeof(gen));
		err = symd_objstore_put_file(tls_s3, j->id,
					     symd_objstore_obj_kind(j->fkind),
					     j->path, meta, &r);
	}
	if (!err) {
		if (!ks)
			symd_objstore_build_gen(j->gen, sizeof(j->gen),
						exe ? (fs.dbg.present ?
						       fs.dbg.gen : NULL) : gen,
						exe ? gen : (fs.exe.present ?
							     fs.exe.gen : NULL));
		return false;
	}
	log_objstore(j, "objstore_put_failed", &r, err);
	j->http_status = 503;
	j->retry_after_ms = r.retry_after_ms ? r.retry_after_ms : 1000;
	snprintf(j->msg, sizeof(j->msg), "the object store cannot take the "
		 "upload now: %s", r.msg[0] ? r.msg : symd_s3_strerror(err));
	return true;
}

/* A kallsyms snapshot's upload: one with a table of the build ID?
 * (libsym reads it: the daemon parses no uploaded bytes itself).  True
 * when refused (j->http_status and j->msg say why). */
static bool kallsyms_refused(struct symd_job *j)
{
	char why[300];
	int err = sym_kallsyms_check(j->path, j->id, why, sizeof(why));

	if (!err)
		return false;
	j->http_status = err == -SYM_E_BADTABLE || err == -EXDEV ? 422 : 500;
	snprintf(j->msg, sizeof(j->msg), "%s", why[0] ? why : errstr(err));
	return true;
}

/* An upload: right file?  Then into the object store and the store. */
static void ingest(struct symd_work *w, struct symd_job *j)
{
	char hex[ID_MAX + 1];
	int err = 0;

	if (j->fkind == SYM_STORE_KALLSYMS) {
		if (kallsyms_refused(j))
			err = -1;
		else
			memcpy(hex, j->id, strlen(j->id) + 1);
	} else {
		err = sym_file_module_id(j->path, hex, sizeof(hex), NULL);
	}
	if (err == -1) {
		;	/* refused: j->http_status and j->msg say why */
	} else if (err == -SYM_E_NOTELF || err == -SYM_E_BADELF ||
	    err == -SYM_E_UNSUPPORTED) {
		j->http_status = 422;
		snprintf(j->msg, sizeof(j->msg), "not a valid ELF file: %s",
			 errstr(err));
	} else if (err) {
		j->http_status = 500;
		snprintf(j->msg, sizeof(j->msg), "reading the upload: %s",
			 errstr(err));
	} else if (strcmp(hex, j->id) != 0) {
		j->http_status = 422;
		snprintf(j->msg, sizeof(j->msg),
			 "the file's build ID is %s, not %s", hex, j->id);
	} else if (tls_s3 && objstore_put_upload(j)) {
		;	/* refused: j->http_status and j->msg say why */

	} else {
		err = sym_store_take_file(w->o.store, j->id, j->fkind,
					  j->path);
		j->http_status = err ? 500 : 0;
		if (err)
			snprintf(j->msg, sizeof(j->msg), "storing: %s",
				 errstr(err));
	}
	if (j->http_status)
		unlink(j->path);
	finish(w, j);
}

/*
 * An uploaded source: sym_store_put_source() checks its path against the
 * line tables of the build ID's debug file (libsym reads them: the daemon
 * knows no DWARF) and copies it in.  The upload's file goes either way.
 */
static void ingest_source(struct symd_work *w, struct symd_job *j)
{
	int err = sym_store_put_source(w->o.store, j->id, j->src, j->path,
				       w->o.max_sources);

	j->http_status = 0;
	if (err == -SYM_E_NOTFOUND) {
		j->http_status = 422;
		snprintf(j->msg, sizeof(j->msg), "the line tables of build ID "
			 "%s do not name this path", j->id);
	} else if (err == -ENODATA) {
		j->http_status = 404;
		snprintf(j->msg, sizeof(j->msg), "the store has no debug file "
			 "of build ID %s to check the path against: upload it "
			 "first", j->id);
	} else if (err == -EFBIG) {
		j->http_status = 413;
		snprintf(j->msg, sizeof(j->msg), "the sources of build ID %s "
			 "would be over the limit of %llu bytes", j->id,
			 (unsigned long long)w->o.max_sources);
	} else if (err == -EINVAL || err == -ENAMETOOLONG) {
		j->http_status = 400;
		snprintf(j->msg, sizeof(j->msg), "not a normalized absolute "
			 "path");
	} else if (err) {
		j->http_status = 500;
		snprintf(j->msg, sizeof(j->msg), "storing the source: %s",
			 errstr(err));
	}
	unlink(j->path);
	finish(w, j);
}

/* A DELETE: the store's unlinks and its commit's sync, off the loop.
 * On the one io thread, after every upload queued before it. */
static void remove_entry(struct symd_work *w, struct symd_job *j)
{
	struct symd_s3_result r;
	int err = sym_store_remove(w->o.store, j->id), n;

	/* The bucket's copies go too, or a miss would read them back. */
	n = tls_s3 ? symd_objstore_remove(tls_s3, j->id, &r) : 0;
	if (n < 0) {
		log_objstore(j, "objstore_delete_failed", &r, n);
		j->http_status = 503;
		snprintf(j->msg, sizeof(j->msg), "the object store cannot "
			 "delete now: %s", r.msg[0] ? r.msg :
			 symd_s3_strerror(n));
		finish(w, j);
		return;
	}
	if (n > 0 && err == -SYM_E_NOTFOUND)
		err = 0;
	j->http_status = err == -SYM_E_NOTFOUND ? 404 : err ? 500 : 0;
	if (err)
		snprintf(j->msg, sizeof(j->msg), "%s",
			 err == -SYM_E_NOTFOUND ? "not in the store" :
			 "cannot remove the entry");
	finish(w, j);
}

/*
 * A debuginfod route's file from the object store, into the store's file
 * area.  True when @j is answered (found, or nothing else to ask).
 */
static bool objstore_file(struct symd_work *w, struct symd_fetch *f,
			  struct symd_job *j)
{
	enum symd_objstore_kind ok = j->fkind == SYMD_FETCH_DEBUGINFO ?
				     SYMD_OBJ_DEBUGINFO : SYMD_OBJ_EXECUTABLE;
	struct symd_s3_result r;
	char buf[4096];
	int err = symd_objstore_get_file(tls_s3, w->o.store, w->o.store_dir,
					 j->id, ok, &r);

	if (!err)
		err = sym_store_file_path(w->o.store, j->id,
					  ok == SYMD_OBJ_DEBUGINFO ?
					  SYM_STORE_DEBUGINFO :
					  SYM_STORE_EXECUTABLE, buf,
					  sizeof(buf));
	if (!err && (j->path = strdup(buf))) {
		j->http_status = 200;
		j->temporary = false;
	} else if (f) {
		return false;	/* the upstreams next */
	} else {
		j->http_status = err == -SYMD_S3_NOTFOUND ? 404 : 502;
		snprintf(j->msg, sizeof(j->msg), "%s", err == -SYMD_S3_NOTFOUND
			 ? "not in the object store and no upstream" :
			 r.msg[0] ? r.msg : "object store: out of memory");
	}
	finish(w, j);
	return true;
}

/* Do the local files of @id have the sizes of the bucket's in @fs? */
static bool same_sizes(struct symd_work *w, const char *id,
		       const struct symd_objstore_files *fs)
{
	const struct symd_objstore_file *of[2] = { &fs->dbg, &fs->exe };
	static const int kinds[2] = { SYM_STORE_DEBUGINFO,
				      SYM_STORE_EXECUTABLE };
	char path[4096];
	struct stat sb;

	for (int i = 0; i < 2; i++) {
		bool here = sym_store_file_path(w->o.store, id, kinds[i], path,
						sizeof(path)) == 0 &&
			    stat(path, &sb) == 0;

		if (here != of[i]->present ||
		    (here && (uint64_t)sb.st_size != of[i]->size))
			return false;
	}
	return true;
}

/* The bucket's files changed: take them, then the table built from them
 * (else build it here and put it back).  0 or an error for the log. */
static int refresh(struct symd_work *w, struct symd_job *j,
		   const struct symd_objstore_files *fs,
		   struct symd_s3_result *r)
{
	int err = 0;

	if (fs->dbg.present)
		err = symd_objstore_get_file(tls_s3, w->o.store,
					     w->o.store_dir, j->id,
					     SYMD_OBJ_DEBUGINFO, r);
	if (!err && fs->exe.present)
		err = symd_objstore_get_file(tls_s3, w->o.store,
					     w->o.store_dir, j->id,
					     SYMD_OBJ_EXECUTABLE, r);
	if (err)
		return err;
	pthread_rwlock_rdlock(&w->gc_lock);
	err = symd_objstore_get_table(tls_s3, w->o.store, w->o.store_dir,
				      j->id, fs->gen, r);
	if (err) {
		err = sym_store_convert(w->o.store, j->id, "objstore", NULL);
		if (!err && tls_s3)
			objstore_put_table(w, j);
	}
	if (!err)
		err = sym_store_warm(w->o.store, j->id);
	pthread_rwlock_unlock(&w->gc_lock);
	symd_metrics_store(w->o.store);
	return err;
}

/*
 * J_REVALIDATE: is the READY table still built from the bucket's files?
 * A different generation (a better upload on another node) takes the new
 * files and table; an unknown one (a table from before a restart) is
 * taken as the same when the local files have the bucket's sizes.  On
 * success j->gen is the bucket's; on failure j->gen is cleared, so the
 * next check is not put off.  The old table is served until the new one
 * is stored.
 */
static void revalidate(struct symd_work *w, struct symd_job *j)
{
	struct symd_objstore_files fs;
	struct symd_s3_result r;
	int err = symd_objstore_head_files(tls_s3, j->id, &fs, &r);

	j->state = SYMD_READY;
	if (!err && !fs.dbg.present && !fs.exe.present)
		;	/* nothing in the bucket to compare: keep it */
	else if (!err && (strcmp(fs.gen, j->gen) == 0 ||
			  (!j->gen[0] && same_sizes(w, j->id, &fs))))
		snprintf(j->gen, sizeof(j->gen), "%s", fs.gen);
	else if (!err && (snprintf(j->gen, sizeof(j->gen), "%s", fs.gen),
			  (err = refresh(w, j, &fs, &r)) == 0))
		log_objstore_info(j, "objstore_table_replaced");
	if (err) {
		log_objstore(j, "objstore_revalidate_failed", &r, err);
		j->gen[0] = '\0';
		j->state = SYMD_FAILED;
	}
	finish(w, j);
}

/* J_META: the bucket's metadata of a build ID's files. */
static void head_meta(struct symd_work *w, struct symd_job *j)
{
	struct symd_s3_result r;
	int err;

	j->fs = calloc(1, sizeof(*j->fs));
	err = j->fs ? symd_objstore_head_files(tls_s3, j->id, j->fs, &r) :
		      -ENOMEM;
	j->http_status = err ? 502 : 200;
	if (err)
		snprintf(j->msg, sizeof(j->msg), "%s", err == -ENOMEM ?
			 "out of memory" : r.msg[0] ? r.msg :
			 symd_s3_strerror(err));
	finish(w, j);
}

static void file_fetch(struct symd_work *w, struct symd_fetch *f,
		       struct symd_job *j)
{
	struct symd_fetch_info info;
	char *path = NULL, buf[4096];
	int err;

	if (tls_s3 && (j->fkind == SYMD_FETCH_DEBUGINFO ||
		       j->fkind == SYMD_FETCH_EXECUTABLE) &&
	    objstore_file(w, f, j))
		return;
	err = symd_fetch_get(f, j->fkind, j->id, j->src ? j->src : j->section,
			     NULL, &path, &info);
	symd_metrics_fetch(err, info.usec, info.fetched);
	symd_status_fetch(err, j->id, &info);
	if (err)
		log_fetch(w, j, j->fkind == SYMD_FETCH_DEBUGINFO ? "debuginfo" :
			  j->fkind == SYMD_FETCH_EXECUTABLE ? "executable" :
			  j->fkind == SYMD_FETCH_SOURCE ? "source" : "section",
			  err, &info);
	/* A source the store can check (it has the debug file and its line
	 * tables name the path) is kept, under max_sources; the fetched
	 * file is served either way, then dropped. */
	if (!err && j->fkind == SYMD_FETCH_SOURCE)
		sym_store_put_source(w->o.store, j->id, j->src, path,
				     w->o.max_sources);
	if (!err && j->fkind != SYMD_FETCH_SECTION &&
	    j->fkind != SYMD_FETCH_SOURCE) {
		int kind = j->fkind == SYMD_FETCH_DEBUGINFO ?
			   SYM_STORE_DEBUGINFO : SYM_STORE_EXECUTABLE;

		err = sym_store_take_file(w->o.store, j->id, kind, path);
		if (!err)
			err = sym_store_file_path(w->o.store, j->id, kind, buf,
						  sizeof(buf));
		if (err) {
			symd_fetch_discard(path);
			free(path);
			j->http_status = 500;
			snprintf(j->msg, sizeof(j->msg), "storing: %s",
				 errstr(err));
			finish(w, j);
			return;
		}
		free(path);
		path = strdup(buf);
	}
	if (!err && path) {
		j->http_status = 200;
		j->path = path;
		j->temporary = j->fkind == SYMD_FETCH_SECTION ||
			       j->fkind == SYMD_FETCH_SOURCE;
	} else {
		free(path);
		j->http_status = !err ? 500 : err == -SYMD_FETCH_ABSENT ? 404 :
				 err == -SYMD_FETCH_INVAL ? 400 : 502;
		snprintf(j->msg, sizeof(j->msg), "%s", !err ? "out of memory" :
			 info.msg[0] ? info.msg : symd_fetch_strerror(err));
	}
	finish(w, j);
}

/* A job taken off its queue before it ran: back to the loop, which
 * answers its waiters "pending". */
static void drop(struct symd_work *w, struct symd_job *j, const char *why)
{
	j->dropped = true;
	settle(j, SYMD_UNKNOWN, 0, "%s", why);
	finish(w, j);
}

/* ------------------------------------------------------------ threads */

struct thread_arg {
	struct symd_work *w;
	struct queue *q;		/* the pool's */
	struct symd_fetch *client;	/* fetch threads only */
	struct symd_s3 *s3;		/* NULL: no object store */
};

static void *worker(void *arg)
{
	struct thread_arg *ta = arg;
	struct symd_work *w = ta->w;
	struct symd_fetch *f = ta->client;
	struct queue *q = ta->q;

	tls_s3 = ta->s3;
	free(ta);
	for (;;) {
		struct symd_job *j;
		bool abandoned;

		pthread_mutex_lock(&w->mu);
		while (!w->stopping && !q->head)
			pthread_cond_wait(&q->cv, &w->mu);
		if (w->stopping) {
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
		j = pop(q);
		w->running++;
		abandoned = (j->kind == J_PREPARE || j->kind == J_FETCH) &&
			    j->client[0] && !j->waiters &&
			    now_s() - j->asked > ABANDONED_S;
		pthread_mutex_unlock(&w->mu);
		if (abandoned) {
			drop(w, j, "dropped: nobody asked for it any more");
			j = NULL;
		}
		switch (j ? j->kind : J_NONE) {
		case J_NONE:
		case J_PROGRESS:	/* never queued */
			break;
		case J_PREPARE:
			if (prepare(w, j))
				finish(w, j);
			break;
		case J_CONVERT:
			/* No files: removed since they came; start over. */
			if (!convert(w, j))
				settle(j, SYMD_UNKNOWN, 0,
				       "the files went away");
			finish(w, j);
			break;
		case J_FETCH:
			fetch(w, f, j);
			break;
		case J_INGEST:
			ingest(w, j);
			break;
		case J_SOURCE:
			ingest_source(w, j);
			break;
		case J_REMOVE:
			remove_entry(w, j);
			break;
		case J_FILE:
			file_fetch(w, f, j);
			break;
		case J_REVALIDATE:
			revalidate(w, j);
			break;
		case J_META:
			head_meta(w, j);
			break;
		case J_MAINTAIN:
			/* Access times and stale readers; the size bound. */
			sym_store_maintain(w->o.store);
			if (w->o.max_store_size &&
			    !pthread_rwlock_trywrlock(&w->gc_lock)) {
				sym_store_gc(w->o.store, 0, NULL);
				pthread_rwlock_unlock(&w->gc_lock);
			}
			symd_metrics_store(w->o.store);
			finish(w, j);
			break;
		}
		pthread_mutex_lock(&w->mu);
		w->running--;
		pthread_mutex_unlock(&w->mu);
	}
}

/* --------------------------------------------------- the loop's side */

static void wake_waiters(struct entry *e)
{
	struct symd_waiter *list = e->waiters;

	/* Detach first: a callback may unwait others or wait anew.  The
	 * waiter itself stays allocated until its owner unwaits it. */
	e->waiters = NULL;
	while (list) {
		struct symd_waiter *wt = list;

		list = wt->next;
		wt->e = NULL;
		wt->next = wt->prev = NULL;
		wt->fn(wt->arg, e->id);
	}
}

/* ------------------------------------------------ the clients' shares */

/* A client is its address: "1.2.3.4:5678" -> "1.2.3.4", "[::1]:80" ->
 * "[::1]"; "" stays "" (nobody known). */
static void client_key(char out[CLIENT_MAX], const char *peer)
{
	const char *colon = strrchr(peer, ':');
	size_t n = strlen(peer);

	if (peer[0] == '[' && strchr(peer, ']'))
		n = (size_t)(strchr(peer, ']') - peer) + 1;
	else if (colon && colon == strchr(peer, ':'))	/* IPv4:port */
		n = (size_t)(colon - peer);
	if (n >= CLIENT_MAX)
		n = CLIENT_MAX - 1;
	memcpy(out, peer, n);
	out[n] = '\0';
}

/* Count @d jobs out for @key (loop thread); "" counts for nobody. */
static void client_count(struct symd_work *w, const char *key, int d)
{
	struct client **pp = &w->clients_out[hash(key) % CLIENT_BUCKETS], *c;

	if (!key[0])
		return;
	while (*pp && strcmp((*pp)->key, key) != 0)
		pp = &(*pp)->next;
	c = *pp;
	if (!c && d > 0 && (c = calloc(1, sizeof(*c)))) {
		memcpy(c->key, key, CLIENT_MAX);
		*pp = c;
	}
	if (!c)
		return;
	c->jobs = d < 0 && c->jobs < (unsigned)-d ? 0 : c->jobs + (unsigned)d;
	if (c->jobs == 0) {
		*pp = c->next;
		free(c);
	}
}

/*
 * The queues are full and @key wants a slot: the client with the most
 * jobs out gives up its newest queued cold lookup, if it has at least two
 * more than @key.  So one client (one address) filling the queue with
 * random build IDs delays its own work, never every other client's: each
 * gets about an equal share of a full queue.  True when a slot was freed.
 */
static bool make_room(struct symd_work *w, const char *key)
{
	struct client *top = NULL;
	struct symd_job *victim = NULL;
	unsigned mine = 0;
	struct queue *q[2] = { &w->cpu, &w->fetch };

	for (unsigned b = 0; b < CLIENT_BUCKETS; b++) {
		for (struct client *c = w->clients_out[b]; c; c = c->next) {
			if (strcmp(c->key, key) == 0)
				mine = c->jobs;
			else if (!top || c->jobs > top->jobs)
				top = c;
		}
	}
	if (!top || top->jobs <= mine + 1)
		return false;
	pthread_mutex_lock(&w->mu);
	for (int i = 0; i < 2 && !victim; i++) {
		for (struct symd_job *j = q[i]->head; j; j = j->next) {
			if ((j->kind == J_PREPARE || j->kind == J_FETCH) &&
			    strcmp(j->client, top->key) == 0)
				victim = j;	/* the newest wins */
		}
		if (victim)
			unqueue(q[i], victim);
	}
	pthread_mutex_unlock(&w->mu);
	if (victim)
		drop(w, victim, "dropped: its client holds more than its "
		     "share of the queue");
	return victim != NULL;
}

static void start_job(struct symd_work *w, struct entry *e,
		      enum job_kind kind);
static void job_note(struct symd_work *w, struct symd_job *j, int d);

/* A quick table reached the loop: onto the entry, if it still converts,
 * and its waiters are called (each asks symd_work_quick() whether it can
 * answer now, or waits again). */
static void quick_done(struct symd_work *w, struct symd_job *j)
{
	struct entry *e = find(w, j->id);
	struct symd_quick *q;

	/* Forgotten: its files may be gone, so no answers from them. */
	if (!e || e->state != SYMD_PENDING || !e->job || e->forgotten)
		goto drop;
	if (!e->quick && (e->quick = calloc(1, sizeof(*e->quick))))
		e->quick->refs = 1;
	q = e->quick;
	if (!q || (j->qlazy ? q->lazy != NULL : q->symtab != NULL))
		goto drop;
	if (j->qlazy) {
		q->lazy = j->qtab;
		q->addrs = j->qaddrs;
		q->naddrs = j->nqaddrs;
	} else {
		q->symtab = j->qtab;
	}
	j->qtab = NULL;
	j->qaddrs = NULL;
	/* The waiters are detached: those that wait on wait again. */
	for (struct symd_waiter *wt = e->waiters; wt; wt = wt->next)
		job_note(w, e->job, -1);
	wake_waiters(e);
drop:
	sym_table_close(j->qtab);
	free(j->qaddrs);
	j->qtab = NULL;
	j->qaddrs = NULL;
}

static void job_done(struct symd_work *w, struct symd_job *j)
{
	struct entry *e = j->e;
	bool dropped;

	switch (j->kind) {
	case J_PREPARE:
	case J_FETCH:
	case J_CONVERT:
		client_count(w, j->client, -1);
		e->job = NULL;
		/* Settled (or started over): the full table or nothing. */
		symd_work_quick_put(e->quick);
		e->quick = NULL;
		free(j->want);
		dropped = j->dropped;
		e->state = j->state;
		/* What the table was built from; unknown: check it at the
		 * first request (revalidate_due()). */
		memcpy(e->gen, j->gen, sizeof(e->gen));
		e->checked = j->gen[0] ? now_s() : 0;
		e->changed = now_s();
		snprintf(e->error, sizeof(e->error), "%s", j->msg);
		e->until = now_s() + (j->state == SYMD_MISSING ?
				      (w->can_fetch && !w->o.s3 ? MISSING_RECHECK :
				       NOSOURCE_RECHECK) :
				      j->retry_after_ms / 1000.0);
		free(j);
		if (e->rerun) {
			/* New files: their conversion is the answer. */
			e->rerun = e->forgotten = false;
			start_job(w, e, J_CONVERT);
			if (e->state == SYMD_PENDING)
				return;
		}
		if (dropped) {
			/* Taken off the queue: those waiting answer
			 * "pending", and ask again later. */
			e->forgotten = false;
		} else if (e->forgotten || e->state == SYMD_UNKNOWN) {
			/* A remove came during the job: what it found may be
			 * gone.  Ask the store again for those waiting. */
			e->forgotten = false;
			e->state = SYMD_UNKNOWN;
			if (e->waiters)
				start_job(w, e, J_PREPARE);
			if (e->state == SYMD_PENDING)
				return;
		}
		wake_waiters(e);
		return;
	case J_INGEST:
		if (j->ifn)
			j->ifn(j->arg, j->http_status, j->msg);
		if (j->http_status == 0) {
			/* New files: convert them (once the running job, if
			 * any, is over).  The conversion replaces whatever
			 * the store said before, a negative entry too. */
			e = find_or_add(w, j->id);
			if (e)
				memcpy(e->gen, j->gen, sizeof(e->gen));
			if (e && (e->state == SYMD_PENDING || e->revalidating))
				e->rerun = true;
			else if (e)
				start_job(w, e, J_CONVERT);
		}
		break;
	case J_REVALIDATE:
		/* A failed check (the bucket down) is tried again after the
		 * interval too, not at every request. */
		e->revalidating = false;
		e->checked = now_s();
		if (j->state == SYMD_READY)
			memcpy(e->gen, j->gen, sizeof(e->gen));
		if (e->rerun && e->state == SYMD_READY) {
			/* An upload came meanwhile: its conversion last. */
			e->rerun = false;
			start_job(w, e, J_CONVERT);
		}
		break;
	case J_META:
		if (j->mfn)
			j->mfn(j->arg, j->http_status, j->fs, j->msg);
		free(j->fs);
		break;
	case J_SOURCE:
		if (j->ifn)
			j->ifn(j->arg, j->http_status, j->msg);
		break;
	case J_REMOVE:
		/* Forgotten before the answer: a request after the 204
		 * asks the store again, and finds nothing. */
		symd_work_forget(w, j->id);
		if (j->ifn)
			j->ifn(j->arg, j->http_status, j->msg);
		break;
	case J_MAINTAIN:
		w->maintaining = false;
		break;
	case J_PROGRESS:
		quick_done(w, j);
		break;
	case J_NONE:
		break;
	case J_FILE:
		if (j->ffn)
			j->ffn(j->arg, j->http_status, j->path, j->temporary,
			       j->msg);
		else if (j->temporary && j->path)
			symd_fetch_discard(j->path);
		break;
	}
	free(j->src);
	free(j->path);
	free(j->upmeta);
	free(j);
}

static void done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct symd_work *w = arg;
	struct symd_job *list, *rev = NULL;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&w->mu);
	list = w->done;
	w->done = NULL;
	pthread_mutex_unlock(&w->mu);
	/* The list is newest first: answer in completion order. */
	while (list) {
		struct symd_job *j = list;

		list = j->next;
		j->next = rev;
		rev = j;
	}
	while (rev) {
		struct symd_job *j = rev;

		rev = j->next;
		job_done(w, j);
	}
}

/* A request asks about @j (@d 0), waits for it (1) or stops (-1). */
static void job_note(struct symd_work *w, struct symd_job *j, int d)
{
	pthread_mutex_lock(&w->mu);
	if (d > 0 || j->waiters)
		j->waiters += (unsigned)d;
	j->asked = now_s();
	pthread_mutex_unlock(&w->mu);
}

/* Start a PREPARE (or CONVERT) job for @e; on a full queue, @e stays
 * UNKNOWN. */
static void start_job(struct symd_work *w, struct entry *e,
		      enum job_kind kind)
{
	struct symd_job *j = calloc(1, sizeof(*j));
	int err;

	e->state = SYMD_UNKNOWN;
	if (!j)
		return;
	j->kind = kind;
	j->e = e;
	memcpy(j->id, e->id, sizeof(j->id));	/* the same size */
	if (kind == J_PREPARE)
		memcpy(j->client, e->client, sizeof(j->client));
	else
		memcpy(j->gen, e->gen, sizeof(j->gen));
	/* Not queued yet: no worker reads these. */
	j->asked = now_s();
	for (struct symd_waiter *wt = e->waiters; wt; wt = wt->next)
		j->waiters++;
	err = submit(w, j, &w->cpu);
	if (err == -EBUSY && j->client[0] && make_room(w, j->client))
		err = submit(w, j, &w->cpu);
	if (err) {
		free(j);
		return;
	}
	client_count(w, j->client, 1);
	e->job = j;
	e->state = SYMD_PENDING;
	e->changed = now_s();
}

/*
 * With an object store, a READY table not checked against the bucket for
 * revalidate_s seconds gets a J_REVALIDATE on a fetch thread; it is still
 * served meanwhile.  A full queue skips it (the next request tries).
 */
static void revalidate_due(struct symd_work *w, struct entry *e, double now)
{
	struct symd_job *j;

	if (!w->o.s3 || e->revalidating || e->rerun ||
	    now - e->checked < w->o.revalidate_s ||
	    !(j = calloc(1, sizeof(*j))))
		return;
	j->kind = J_REVALIDATE;
	j->e = e;
	memcpy(j->id, e->id, sizeof(j->id));
	memcpy(j->gen, e->gen, sizeof(j->gen));
	if (submit(w, j, &w->fetch) != 0) {
		free(j);
		return;
	}
	e->revalidating = true;
}

int symd_work_status(struct symd_work *w, const char *build_id,
		     struct symd_status *st)
{
	return symd_work_status_from(w, build_id, NULL, st);
}

int symd_work_status_from(struct symd_work *w, const char *build_id,
			  const char *peer, struct symd_status *st)
{
	struct entry *e = find_or_add(w, build_id);
	double now;

	memset(st, 0, sizeof(*st));
	if (!e)
		return -ENOMEM;
	if (peer)
		client_key(e->client, peer);
	now = now_s();
	if ((e->state == SYMD_MISSING || e->state == SYMD_FAILED) &&
	    now >= e->until)
		e->state = SYMD_UNKNOWN;
	if (e->state == SYMD_UNKNOWN) {
		start_job(w, e, J_PREPARE);
		if (e->state == SYMD_UNKNOWN)
			return -EBUSY;
	}
	if (e->state == SYMD_PENDING && e->job)
		job_note(w, e->job, 0);
	if (e->state == SYMD_READY)
		revalidate_due(w, e, now);
	st->state = e->state;
	if (e->state == SYMD_FAILED) {
		snprintf(st->error, sizeof(st->error), "%s", e->error);
		st->retry_after_ms = (unsigned)((e->until - now) * 1000) + 1;
	} else if (e->state == SYMD_MISSING) {
		snprintf(st->error, sizeof(st->error), "%s", e->error);
	} else if (e->state == SYMD_PENDING) {
		st->retry_after_ms = 500;
	}
	return 0;
}

struct symd_waiter *symd_work_wait(struct symd_work *w, const char *build_id,
				   symd_wait_fn fn, void *arg)
{
	struct entry *e = find(w, build_id);
	struct symd_waiter *wt;

	if (!e || !(wt = calloc(1, sizeof(*wt))))
		return NULL;
	wt->e = e;
	wt->fn = fn;
	wt->arg = arg;
	wt->next = e->waiters;
	if (e->waiters)
		e->waiters->prev = wt;
	e->waiters = wt;
	if (e->job)
		job_note(w, e->job, 1);
	return wt;
}

void symd_work_unwait(struct symd_work *w, struct symd_waiter *wt)
{
	if (!wt)
		return;
	if (wt->e && wt->e->job)
		job_note(w, wt->e->job, -1);
	if (!wt->e)
		;	/* already called: only the memory is left */
	else if (wt->prev)
		wt->prev->next = wt->next;
	else if (wt->e->waiters == wt)
		wt->e->waiters = wt->next;
	if (wt->e && wt->next)
		wt->next->prev = wt->prev;
	free(wt);
}

void symd_work_abandon(struct symd_work *w, struct symd_waiter *wt)
{
	struct entry *e = wt ? wt->e : NULL;
	struct symd_job *j;
	bool found;

	symd_work_unwait(w, wt);
	if (!e || e->waiters || e->state != SYMD_PENDING || !(j = e->job))
		return;
	pthread_mutex_lock(&w->mu);
	found = unqueue(&w->cpu, j) || unqueue(&w->fetch, j);
	pthread_mutex_unlock(&w->mu);
	if (found)
		drop(w, j, "dropped: nobody waits for it any more");
}

void symd_work_forget(struct symd_work *w, const char *build_id)
{
	struct entry *e = find(w, build_id);

	if (e && e->state != SYMD_PENDING) {
		e->state = SYMD_UNKNOWN;
	} else if (e) {
		/* Its files may be gone: no more answers from them. */
		e->forgotten = true;
		symd_work_quick_put(e->quick);
		e->quick = NULL;
	}
}

struct symd_quick *symd_work_quick(struct symd_work *w, const char *build_id)
{
	struct entry *e = find(w, build_id);

	if (!e || e->state != SYMD_PENDING || !e->quick)
		return NULL;
	e->quick->refs++;
	return e->quick;
}

void symd_work_quick_put(struct symd_quick *q)
{
	if (!q || --q->refs)
		return;
	sym_table_close(q->symtab);
	sym_table_close(q->lazy);
	free(q->addrs);
	free(q);
}

bool symd_quick_covers(const struct symd_quick *q, const uint64_t *addrs,
		       size_t n)
{
	if (!q || !q->lazy)
		return false;
	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = q->naddrs;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (q->addrs[mid] < addrs[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == q->naddrs || q->addrs[lo] != addrs[i])
			return false;
	}
	return true;
}

/* Merge @addrs[@n] into @j's wanted addresses (under mu): kept sorted and
 * unique, so that requests asking the same addresses again (a client
 * polling) do not count twice; past lazy_max, none is. */
static void want_merge(struct symd_work *w, struct symd_job *j,
		       const uint64_t *addrs, size_t n)
{
	size_t cap = j->nwant + n, k = 0;
	uint64_t *v;

	if (cap > j->capwant) {
		v = realloc(j->want, cap * sizeof(*v));
		if (!v) {
			j->want_over = true;
			return;
		}
		j->want = v;
		j->capwant = cap;
	}
	memcpy(j->want + j->nwant, addrs, n * sizeof(*addrs));
	qsort(j->want, cap, sizeof(*j->want), u64_cmp);
	for (size_t i = 0; i < cap; i++) {
		if (!k || j->want[i] != j->want[k - 1])
			j->want[k++] = j->want[i];
	}
	j->nwant = k;
	j->want_over = k > w->o.lazy_max;
}

void symd_work_want(struct symd_work *w, const char *build_id,
		    const uint64_t *addrs, size_t n)
{
	struct entry *e = find(w, build_id);
	struct symd_job *j;

	if (!e || e->state != SYMD_PENDING || !(j = e->job) || !n ||
	    w->o.lazy_max == SYMD_LAZY_OFF)
		return;
	pthread_mutex_lock(&w->mu);
	/* A request of many addresses (duplicates or not) is left to the
	 * full table at once: no sort of it on the loop. */
	if (n > (size_t)w->o.lazy_max * 16)
		j->want_over = true;
	else if (!j->want_closed && !j->want_over)
		want_merge(w, j, addrs, n);
	pthread_mutex_unlock(&w->mu);
}

/* Queue an INGEST or REMOVE job on the io thread. */
/* @src: a SOURCE job's source path (copied), else NULL. */
static struct symd_job *io_job_meta(struct symd_work *w, enum job_kind kind,
				    const char *build_id, int fkind,
				    const char *path, const char *src,
				    char *upmeta, bool force,
				    symd_ingest_fn fn, void *arg);

static struct symd_job *io_job(struct symd_work *w, enum job_kind kind,
			       const char *build_id, int fkind,
			       const char *path, const char *src,
			       symd_ingest_fn fn, void *arg)
{
	return io_job_meta(w, kind, build_id, fkind, path, src, NULL, false,
			   fn, arg);
}

/* io_job() with an INGEST's metadata @upmeta (taken: the job frees it,
 * also on failure) and @force. */
static struct symd_job *io_job_meta(struct symd_work *w, enum job_kind kind,
				    const char *build_id, int fkind,
				    const char *path, const char *src,
				    char *upmeta, bool force,
				    symd_ingest_fn fn, void *arg)
{
	struct symd_job *j = calloc(1, sizeof(*j));
	size_t n = strlen(build_id);
	int err;

	if (!j || n > ID_MAX || (path && !(j->path = strdup(path))) ||
	    (src && !(j->src = strdup(src)))) {
		if (j) {
			free(j->path);
			free(j->src);
		}
		free(j);
		free(upmeta);
		errno = ENOMEM;
		return NULL;
	}
	j->kind = kind;
	memcpy(j->id, build_id, n + 1);
	if (kind == J_INGEST)
		snprintf(j->source, sizeof(j->source), "upload");
	j->fkind = fkind;
	j->ifn = fn;
	j->arg = arg;
	j->upmeta = upmeta;
	j->force = force;
	err = submit(w, j, &w->io);
	if (err) {
		free(j->path);
		free(j->src);
		free(j->upmeta);
		free(j);
		errno = -err;
		return NULL;
	}
	return j;
}

struct symd_job *symd_work_ingest(struct symd_work *w, const char *build_id,
				  int kind, const char *path,
				  symd_ingest_fn fn, void *arg)
{
	return io_job(w, J_INGEST, build_id, kind, path, NULL, fn, arg);
}

struct symd_job *symd_work_ingest_meta(struct symd_work *w,
				       const char *build_id, int kind,
				       const char *path, const char *uploader,
				       bool force, symd_ingest_fn fn,
				       void *arg)
{
	char *copy = uploader ? strdup(uploader) : NULL;

	if (uploader && !copy) {
		errno = ENOMEM;
		return NULL;
	}
	return io_job_meta(w, J_INGEST, build_id, kind, path, NULL, copy,
			   force, fn, arg);
}

const char *symd_work_refused_quality(const struct symd_job *job)
{
	return job && job->http_status == 409 && job->have_quality >= 0 ?
	       sym_quality_name(job->have_quality) : NULL;
}

struct symd_job *symd_work_objstore_head(struct symd_work *w,
					 const char *build_id,
					 symd_meta_fn fn, void *arg)
{
	size_t n = strlen(build_id);
	struct symd_job *j;
	int err;

	if (!w->o.s3) {
		errno = ENOENT;
		return NULL;
	}
	if (n > ID_MAX || !(j = calloc(1, sizeof(*j)))) {
		errno = n > ID_MAX ? EINVAL : ENOMEM;
		return NULL;
	}
	j->kind = J_META;
	memcpy(j->id, build_id, n + 1);
	j->mfn = fn;
	j->arg = arg;
	err = submit(w, j, &w->fetch);
	if (err) {
		free(j);
		errno = -err;
		return NULL;
	}
	return j;
}

struct symd_job *symd_work_source(struct symd_work *w, const char *build_id,
				  const char *src, const char *path,
				  symd_ingest_fn fn, void *arg)
{
	return io_job(w, J_SOURCE, build_id, 0, path, src, fn, arg);
}

struct symd_job *symd_work_remove(struct symd_work *w, const char *build_id,
				  symd_ingest_fn fn, void *arg)
{
	return io_job(w, J_REMOVE, build_id, 0, NULL, NULL, fn, arg);
}

struct symd_job *symd_work_fetch_file(struct symd_work *w,
				      const char *build_id, int kind,
				      const char *section, symd_file_fn fn,
				      void *arg)
{
	size_t n = strlen(build_id), sn = section ? strlen(section) : 0;
	struct symd_job *j;
	int err;

	/* The object store holds debug files and executables, not
	 * sections or sources. */
	if (!w->can_fetch && !(w->o.s3 && (kind == SYMD_FETCH_DEBUGINFO ||
					   kind == SYMD_FETCH_EXECUTABLE))) {
		errno = ENOENT;
		return NULL;
	}
	j = calloc(1, sizeof(*j));
	if (!j || n > ID_MAX || (kind != SYMD_FETCH_SOURCE &&
				 sn >= sizeof(j->section))) {
		free(j);
		errno = j ? EINVAL : ENOMEM;
		return NULL;
	}
	j->kind = J_FILE;
	memcpy(j->id, build_id, n + 1);
	j->fkind = kind;
	if (kind == SYMD_FETCH_SOURCE) {
		/* A source's path: up to PATH_MAX, not a section name. */
		j->src = section ? strdup(section) : NULL;
		if (!j->src) {
			free(j);
			errno = section ? ENOMEM : EINVAL;
			return NULL;
		}
	} else if (section) {
		memcpy(j->section, section, sn + 1);
	}
	j->ffn = fn;
	j->arg = arg;
	err = submit(w, j, &w->fetch);
	if (err) {
		free(j->src);
		free(j);
		errno = -err;
		return NULL;
	}
	return j;
}

void symd_work_detach(struct symd_job *j)
{
	if (j) {
		j->ifn = NULL;
		j->ffn = NULL;
		j->mfn = NULL;
		j->arg = NULL;
	}
}

void symd_work_maintain(struct symd_work *w)
{
	struct symd_job *j;

	if (w->maintaining || !(j = calloc(1, sizeof(*j))))
		return;
	j->kind = J_MAINTAIN;
	if (submit(w, j, &w->cpu) != 0) {
		free(j);
		return;
	}
	w->maintaining = true;
}

bool symd_work_can_fetch(const struct symd_work *w)
{
	return w->can_fetch;
}

const struct symd_work_opts *symd_work_options(const struct symd_work *w)
{
	return &w->o;
}

void symd_work_counts(struct symd_work *w, unsigned *queued,
		      unsigned *running)
{
	pthread_mutex_lock(&w->mu);
	*queued = w->cpu.n + w->fetch.n + w->io.n;
	*running = w->running;
	pthread_mutex_unlock(&w->mu);
}

void symd_work_queues(struct symd_work *w, struct symd_work_queues *q)
{
	pthread_mutex_lock(&w->mu);
	q->cpu = w->cpu.n;
	q->fetch = w->fetch.n;
	q->io = w->io.n;
	q->running = w->running;
	pthread_mutex_unlock(&w->mu);
	q->max = w->o.queue_max;
	q->cpu_workers = w->o.cpu_workers;
	q->fetch_workers = w->nclients;
	q->known = w->nentries;
	q->urls = w->can_fetch ? w->o.urls : NULL;
	q->max_store_size = w->o.max_store_size;
}

void symd_work_each(struct symd_work *w, symd_entry_fn fn, void *ctx)
{
	double now = now_s();

	for (unsigned b = 0; b < NBUCKETS; b++) {
		for (struct entry *e = w->buckets[b]; e; e = e->hnext) {
			if (e->state != SYMD_UNKNOWN)
				fn(ctx, e->id, e->state, e->error,
				   now - e->changed);
		}
	}
}

static int rm_entry(const char *path, const struct stat *sb, int type,
		    struct FTW *ftw)
{
	(void)sb;
	if (ftw->level > 0)
		(type == FTW_DP ? rmdir : unlink)(path);
	return 0;
}

/* Files left in libdebuginfod's cache by a crash (half downloads, files
 * never taken into the store): the cache only holds files in transit, so
 * every build-ID directory in it goes.  Its config files stay. */
static void sweep_cache(const char *cache)
{
	DIR *d = opendir(cache);
	struct dirent *de;
	char path[4096 + 256];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/%s", cache, de->d_name);
		nftw(path, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
		rmdir(path);
	}
	closedir(d);
}

static int start_thread(struct symd_work *w, struct queue *q,
			struct symd_fetch *client)
{
	struct thread_arg *ta = calloc(1, sizeof(*ta));
	int err;

	if (!ta)
		return -ENOMEM;
	ta->w = w;
	ta->q = q;
	ta->client = client;
	if (w->o.s3) {
		ta->s3 = symd_s3_new(w->o.s3, NULL);
		if (!ta->s3) {
			free(ta);
			return -ENOMEM;
		}
		w->s3c[w->ns3++] = ta->s3;
	}
	err = pthread_create(&w->threads[w->nthreads], NULL, worker, ta);
	if (err) {
		free(ta);
		return -err;
	}
	w->nthreads++;
	return 0;
}

int symd_work_new(struct event_base *base, const struct symd_work_opts *o,
		  struct symd_work **out)
{
	struct symd_work *w;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	char cache[4096];
	unsigned nfetch;
	int err = -ENOMEM;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->o = *o;
	w->base = base;
	w->hold_dir = getenv("SYM_TEST_CONVERT_HOLD");
	if (w->hold_dir && !*w->hold_dir)
		w->hold_dir = NULL;
	if (!w->o.cpu_workers)
		w->o.cpu_workers = cores > 1 ? (unsigned)cores - 1 : 1;
	if (!w->o.fetch_workers)
		w->o.fetch_workers = 4;
	if (!w->o.queue_max)
		w->o.queue_max = 4096;
	if (!w->o.ttl_failed)
		w->o.ttl_failed = 60;
	if (!w->o.revalidate_s)
		w->o.revalidate_s = 30;
	if (!w->o.lazy_max)
		w->o.lazy_max = SYMD_LAZY_MAX_DEFAULT;
	pthread_mutex_init(&w->mu, NULL);
	pthread_rwlock_init(&w->gc_lock, NULL);
	pthread_cond_init(&w->cpu.cv, NULL);
	pthread_cond_init(&w->fetch.cv, NULL);
	pthread_cond_init(&w->io.cv, NULL);
	w->can_fetch = o->urls && strspn(o->urls, " \t") < strlen(o->urls);
	{
		/* libdebuginfod's cache lives in the store, so a fetched
		 * file is renamed into place, never copied. */
		struct symd_fetch_opts fo = {
			.urls = w->can_fetch ? o->urls : NULL,
			.cache_dir = cache,
			.timeout_s = o->fetch_timeout_s,
			.wake_signal = SIGURG,
			.first_byte_ms = o->fetch_first_byte_ms,
			.call_timeout_ms = o->fetch_deadline_ms,
		};

		snprintf(cache, sizeof(cache), "%s/debuginfod-cache",
			 o->store_dir);
		sweep_cache(cache);
		symd_metrics_store(o->store);
		err = symd_fetch_global_init(&fo);
		if (err)
			goto fail;
		w->clients = calloc(w->o.fetch_workers, sizeof(*w->clients));
		err = -ENOMEM;
		if (!w->clients)
			goto fail;
		for (unsigned i = 0; w->can_fetch && i < w->o.fetch_workers;
		     i++) {
			w->clients[i] = symd_fetch_new(&fo);
			if (!w->clients[i])
				goto fail;
			w->nclients++;
		}
	}
	w->done_ev = event_new(base, -1, 0, done_cb, w);
	/* With an object store the fetch threads read through it, with
	 * or without debuginfod upstreams. */
	nfetch = w->o.s3 && !w->nclients ? w->o.fetch_workers : w->nclients;
	w->threads = calloc(w->o.cpu_workers + nfetch + 1,
			    sizeof(*w->threads));
	w->s3c = calloc(w->o.cpu_workers + nfetch + 1, sizeof(*w->s3c));
	if (!w->done_ev || !w->threads || !w->s3c)
		goto fail;
	for (unsigned i = 0; i < w->o.cpu_workers; i++) {
		err = start_thread(w, &w->cpu, NULL);
		if (err)
			goto fail;
	}
	for (unsigned i = 0; i < nfetch; i++) {
		err = start_thread(w, &w->fetch, i < w->nclients ?
				   w->clients[i] : NULL);
		if (err)
			goto fail;
	}
	err = start_thread(w, &w->io, NULL);
	if (err)
		goto fail;
	*out = w;
	return 0;
fail:
	symd_work_free(w);
	return err;
}

static void free_jobs(struct symd_job *j)
{
	while (j) {
		struct symd_job *next = j->next;

		if ((j->kind == J_INGEST || j->kind == J_SOURCE) && j->path)
			unlink(j->path);
		else if (j->kind == J_FILE && j->temporary && j->path)
			symd_fetch_discard(j->path);
		sym_table_close(j->qtab);
		free(j->qaddrs);
		free(j->want);
		free(j->src);
		free(j->path);
		free(j);
		j = next;
	}
}

void symd_work_free(struct symd_work *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	pthread_cond_broadcast(&w->cpu.cv);
	pthread_cond_broadcast(&w->fetch.cv);
	pthread_cond_broadcast(&w->io.cv);
	pthread_mutex_unlock(&w->mu);
	for (unsigned i = 0; i < w->nclients; i++)
		symd_fetch_cancel(w->clients[i]);
	for (unsigned i = 0; i < w->ns3; i++)
		symd_s3_cancel(w->s3c[i]);
	for (unsigned i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	for (unsigned i = 0; i < w->nclients; i++)
		symd_fetch_free(w->clients[i]);
	for (unsigned i = 0; i < w->ns3; i++)
		symd_s3_free(w->s3c[i]);
	free(w->s3c);
	free_jobs(w->cpu.head);
	free_jobs(w->fetch.head);
	free_jobs(w->io.head);
	free_jobs(w->done);
	for (unsigned b = 0; b < CLIENT_BUCKETS; b++) {
		while (w->clients_out[b]) {
			struct client *c = w->clients_out[b];

			w->clients_out[b] = c->next;
			free(c);
		}
	}
	for (unsigned b = 0; b < NBUCKETS; b++) {
		while (w->buckets[b]) {
			struct entry *e = w->buckets[b];

			w->buckets[b] = e->hnext;
			symd_work_quick_put(e->quick);
			/* Waiters belong to their owners, who are gone by
			 * now (the HTTP server is freed first). */
			free(e);
		}
	}
	if (w->done_ev)
		event_free(w->done_ev);
	pthread_cond_destroy(&w->cpu.cv);
	pthread_cond_destroy(&w->fetch.cv);
	pthread_cond_destroy(&w->io.cv);
	pthread_mutex_destroy(&w->mu);
	pthread_rwlock_destroy(&w->gc_lock);
	free(w->threads);
	free(w->clients);
	free(w);
}
