/*
 * symprof-idle-thread.c - an LD_PRELOAD library for
 * symprof-alloc-bench.sh that starts one thread, which waits forever:
 * what a second thread alone costs a program's malloc (glibc switches to
 * its multi-threaded paths, arena locks and atomic fastbins, for the rest
 * of the process once a thread was created).
 */
#include <pthread.h>
#include <unistd.h>

#include "base.h"

static void *idle_main(void *arg)
{
	for (;;)
		pause();
	return arg;
}

__attribute__((constructor)) static void idle_start(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, idle_main, NULL) == 0)
		pthread_detach(t);
}
