/*
 * bpfstats.c - run a command with the kernel's BPF run-time statistics
 * on (BPF_ENABLE_STATS: every program's run_time_ns and run_cnt, as
 * `bpftool prog show` prints them), for tests/bench/offcpu-bench.sh,
 * which compiles it.  The statistics stay on while this process holds
 * the file descriptor the kernel returns, and go off when it exits,
 * SIGKILL included; unlike the sysctl kernel.bpf_stats_enabled, nothing
 * has to be restored, and two benches doing it at once do not switch it
 * off under each other.
 *
 *	bpfstats CMD [ARGS...]
 *
 * Exits with the command's status (128 + signal when it was killed).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "base.h"

int main(int argc, char **argv)
{
	int fd, status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: bpfstats CMD [ARGS...]\n");
		return 2;
	}
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0) {
		fprintf(stderr, "bpfstats: cannot enable BPF statistics: %s\n",
			strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(fd);
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			return 1;
		}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
