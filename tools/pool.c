/*
 * pool.c - an ordered pool of worker threads (pool.h).
 *
 * Jobs sit in one singly linked FIFO, in submission order.  `todo` is the
 * first job no worker has taken yet; workers take jobs from there, and
 * the owner takes finished jobs from the head.  One mutex guards the
 * queue; `work` wakes workers, `done` wakes the owner.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "pool.h"
#include "base.h"

struct node {
	void *job;
	bool done;
	struct node *next;
};

struct pool {
	pool_fn fn;
	unsigned nworkers, started;
	pthread_t tid[POOL_MAX_WORKERS];
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct node *head, *tail;	/* submitted, not taken back */
	struct node *todo;		/* first one no worker has taken */
	size_t pending;
	bool stop;
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct node *n;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->todo && !p->stop)
			pthread_cond_wait(&p->work, &p->mu);
		if (!p->todo)
			break;			/* stopping, nothing left */
		n = p->todo;
		p->todo = n->next;
		pthread_mutex_unlock(&p->mu);
		p->fn(n->job);
		pthread_mutex_lock(&p->mu);
		n->done = true;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int pool_new(unsigned workers, pool_fn fn, struct pool **out)
{
	struct pool *p;

	*out = NULL;
	if (workers == 0 || workers > POOL_MAX_WORKERS || !fn)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fn = fn;
	p->nworkers = workers;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	*out = p;
	return 0;
}

unsigned pool_default_workers(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > POOL_MAX_WORKERS ? POOL_MAX_WORKERS : (unsigned)n;
}

int pool_submit(struct pool *p, void *job)
{
	struct node *n;

	/* Threads start with the first job, so a pool that gets none
	 * (one address, or input that is not hex) costs nothing. */
	while (p->started < p->nworkers) {
		int err = pthread_create(&p->tid[p->started], NULL, worker, p);

		if (err) {
			if (p->started)
				break;		/* fewer workers will do */
			return -err;
		}
		p->started++;
	}
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->job = job;
	n->done = false;
	n->next = NULL;
	pthread_mutex_lock(&p->mu);
	if (p->tail)
		p->tail->next = n;
	else
		p->head = n;
	p->tail = n;
	if (!p->todo)
		p->todo = n;
	p->pending++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

void *pool_next(struct pool *p, bool wait)
{
	struct node *n;
	void *job;

	pthread_mutex_lock(&p->mu);
	n = p->head;
	while (n && !n->done && wait)
		pthread_cond_wait(&p->done, &p->mu);
	if (!n || !n->done) {
		pthread_mutex_unlock(&p->mu);
		return NULL;
	}
	p->head = n->next;
	if (!p->head)
		p->tail = NULL;
	p->pending--;
	pthread_mutex_unlock(&p->mu);
	job = n->job;
	free(n);
	return job;
}

size_t pool_pending(const struct pool *p)
{
	return p->pending;
}

void pool_free(struct pool *p)
{
	struct node *n, *next;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	/* Workers finish the queue before they see stop. */
	for (unsigned i = 0; i < p->started; i++)
		pthread_join(p->tid[i], NULL);
	for (n = p->head; n; n = next) {
		next = n->next;
		free(n);
	}
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
