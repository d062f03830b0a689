/*
 * cputime.c - run a command and write the CPU time of it and of all its
 * waited-for descendants and its wall time, "user sys wall" in seconds
 * with microsecond digits (/usr/bin/time prints hundredths), for
 * tests/bench/record-bench.sh, which compiles it.  Small and in C so that its own start-up, which the
 * bench counts on the profiler's side, is about a millisecond.
 *
 *	cputime OUTFILE CMD [ARGS...]
 *
 * Exits with the command's status (128 + signal when it was killed).
 */
#include <stdio.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base.h"

int main(int argc, char **argv)
{
	struct rusage ru;
	struct timespec t0, t1;
	int status;
	pid_t pid;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: cputime OUTFILE CMD [ARGS...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("wait4");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fprintf(f, "%ld.%06ld %ld.%06ld %.6f\n", (long)ru.ru_utime.tv_sec,
		(long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
		(long)ru.ru_stime.tv_usec,
		(double)(t1.tv_sec - t0.tv_sec) +
		(double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	fclose(f);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
