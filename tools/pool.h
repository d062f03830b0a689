/*
 * pool.h - an ordered pool of worker threads: jobs run in parallel and
 * come back in the order they were submitted.
 *
 * A tool that answers a stream of inputs in batches (sym addr2line and sym
 * lookup) submits each batch as a job; the workers run the pool's
 * function on it, each job writing only memory of its own; the submitting
 * thread takes the jobs back with pool_next(), oldest first, and prints
 * them.  So the output is the sequential output, produced on every core.
 *
 * The pool does not own the jobs: it hands back exactly the pointers it
 * was given, once each.  Only one thread (the one that made the pool)
 * calls pool_submit(), pool_next() and pool_free().
 */
#ifndef SYM_POOL_H
#define SYM_POOL_H

#include <stdbool.h>
#include <stddef.h>

/** The most worker threads a pool runs. */
#define POOL_MAX_WORKERS 16

struct pool;

/** What the workers run on each job, on a worker thread. */
typedef void (*pool_fn)(void *job);

/**
 * pool_new() - a pool of @workers threads (started on the first submit)
 * running @fn.
 * @return 0, -EINVAL (@workers is 0 or above POOL_MAX_WORKERS), -ENOMEM
 */
int pool_new(unsigned workers, pool_fn fn, struct pool **out);

/**
 * pool_submit() - queue @job; it never waits for the workers.
 * @return 0, or -errno when no worker thread could be started (the job is
 *         not queued and stays the caller's)
 */
int pool_submit(struct pool *p, void *job);

/**
 * pool_next() - the oldest job not yet taken back, once it has run.
 * @param wait  wait for it to finish; else return NULL while it runs
 * @return the job, or NULL (none queued, or not finished and !@wait)
 */
void *pool_next(struct pool *p, bool wait);

/** pool_pending() - jobs submitted and not yet taken back. */
size_t pool_pending(const struct pool *p);

/**
 * pool_default_workers() - the number of online CPUs, at most
 * POOL_MAX_WORKERS.
 */
unsigned pool_default_workers(void);

/**
 * pool_free() - wait for every queued job to finish, stop the workers and
 * free the pool.  Jobs not taken back stay the caller's (take them back
 * with pool_next() first to free them).  NULL-safe.
 */
void pool_free(struct pool *p);

#endif
