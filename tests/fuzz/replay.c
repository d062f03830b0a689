/*
 * replay.c - run a fuzz target's corpus as a plain program, for make check.
 *
 * Linked with one tests/fuzz/fuzz-<name>.c into replay-fuzz-<name>:
 *
 *   replay-fuzz-elf              replay each file of tests/fuzz/corpus/fuzz-elf/:
 *                                one TAP point for the directory, with
 *                                a diagnostic count of inputs and bytes
 *   replay-fuzz-elf FILE...      replay these files, one TAP point each
 *
 * The target name comes from the program name ("replay-" stripped).  The
 * project root is $SYM_ROOT, or else two directories above the program
 * (build/tests/replay-fuzz-elf).  Each input is read into a buffer of
 * exactly its size, as libFuzzer passes it, so that a sanitizer build sees
 * reads past the end.
 *
 * A crash cannot be turned into "not ok": the process dies.  So the name
 * of the input being replayed is printed when that happens, from the
 * sanitizer's death callback in sanitizer builds and from a signal handler
 * otherwise; prove then reports the test as failed with that name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "base.h"

/* Corpus files above this size are not replayed (they cannot come from a
 * fuzzer run with our -max_len anyway). */
#define REPLAY_MAX_INPUT (64u << 20)

/* Present in sanitizer runtimes only; weak so plain builds link. */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static char current[PATH_MAX];

static void say_current(void)
{
	static const char pre[] = "# crashed while replaying ";
	size_t len = strlen(current);

	if (!len)
		return;
	/* Async-signal-safe: write() only. */
	if (write(STDOUT_FILENO, pre, sizeof(pre) - 1) < 0 ||
	    write(STDOUT_FILENO, current, len) < 0 ||
	    write(STDOUT_FILENO, "\n", 1) < 0)
		return;
}

static void on_fatal_signal(int sig)
{
	say_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_crash_reporting(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };

	if (__sanitizer_set_death_callback) {
		/* Keep the sanitizer's own handlers and report: they print
		 * the stack trace. */
		__sanitizer_set_death_callback(say_current);
		return;
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_fatal_signal);
}

/* Read @path into a malloc()ed buffer of exactly its size. */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
	struct stat sb;
	uint8_t *buf = NULL;
	size_t got = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > REPLAY_MAX_INPUT) {
		err = -EINVAL;
		goto out;
	}
	/* malloc(0) may be NULL; keep a real pointer for empty inputs. */
	buf = malloc(sb.st_size ? (size_t)sb.st_size : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			goto out;
		}
		got += (size_t)r;
	}
	*out = buf;
	*len = got;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return err;
}

static int replay_one(const char *path, size_t *bytes)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	err = read_file(path, &buf, &len);
	if (err)
		return err;
	snprintf(current, sizeof(current), "%s", path);
	LLVMFuzzerTestOneInput(buf, len);
	current[0] = '\0';
	free(buf);
	*bytes += len;
	return 0;
}

static int regular_file(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* The project root: $SYM_ROOT or two levels above /proc/self/exe. */
static int find_root(char *root, size_t len)
{
	const char *env = getenv("SYM_ROOT");
	char exe[PATH_MAX];
	ssize_t r;

	if (env && *env) {
		snprintf(root, len, "%s", env);
		return 0;
	}
	r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (r <= 0)
		return -1;
	exe[r] = '\0';
	for (int up = 0; up < 3; up++) {
		char *slash = strrchr(exe, '/');

		if (!slash)
			return -1;
		*slash = '\0';
	}
	snprintf(root, len, "%s", exe[0] ? exe : "/");
	return 0;
}

static int replay_dir(const char *target)
{
	char root[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
	struct dirent **ents = NULL;
	size_t bytes = 0, done = 0;
	int n, failed = 0;

	printf("1..1\n");
	if (find_root(root, sizeof(root)) < 0) {
		printf("not ok 1 - %s corpus # cannot find the project root; "
		       "set SYM_ROOT\n", target);
		return 1;
	}
	if (snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s", root,
		     target) >= (int)sizeof(dir)) {
		printf("not ok 1 - %s corpus: path too long\n", target);
		return 1;
	}
	n = scandir(dir, &ents, regular_file, alphasort);
	if (n < 0) {
		printf("not ok 1 - %s corpus: cannot read '%s': %s\n", target,
		       dir, strerror(errno));
		return 1;
	}
	printf("# replaying %d inputs of %s\n", n, dir);
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		int err;

		if (snprintf(path, sizeof(path), "%s/%s", dir,
			     ents[i]->d_name) >= (int)sizeof(path))
			err = -ENAMETOOLONG;
		else
			err = replay_one(path, &bytes);
		if (err == -EINVAL) {
			/* A directory or an oversized file: not an input. */
			printf("# skipped %s\n", ents[i]->d_name);
		} else if (err) {
			printf("# cannot read %s: %s\n", path, strerror(-err));
			failed++;
		} else {
			done++;
		}
		free(ents[i]);
	}
	free(ents);
	printf("%sok 1 - %s corpus: %zu inputs replayed (%zu bytes)\n",
	       failed || !done ? "not " : "", target, done, bytes);
	return failed || !done;
}

int main(int argc, char **argv)
{
	const char *prog = strrchr(argv[0], '/');
	char target[NAME_MAX + 1];
	int failed = 0;

	prog = prog ? prog + 1 : argv[0];
	if (strncmp(prog, "replay-", 7) == 0)
		prog += 7;
	snprintf(target, sizeof(target), "%s", prog);
	install_crash_reporting();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (argc < 2)
		return replay_dir(target);

	printf("1..%d\n", argc - 1);
	for (int i = 1; i < argc; i++) {
		size_t bytes = 0;
		int err = replay_one(argv[i], &bytes);

		if (err) {
			printf("not ok %d - %s: %s\n", i, argv[i],
			       strerror(-err));
			failed++;
		} else {
			printf("ok %d - %s (%zu bytes)\n", i, argv[i], bytes);
		}
	}
	return failed ? 1 : 0;
}
