/*
 * t-api.c - the contract at the top of sym.h, checked on every function
 * it names:
 * - sym_version() gives the running library's version, as string and
 *   numbers, with any out-pointer NULL.
 * The module used is this test program, which is built with -g.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tap.h"
#include "internal.h"

static const char *self;

static void test_version(void)
{
	int ma = -1, mi = -1, pa = -1;
	char want[32];
	const char *v = sym_version(&ma, &mi, &pa);

	CHECK(v != NULL && strcmp(v, SYM_VERSION) == 0);
	CHECK(ma == SYM_VERSION_MAJOR && mi == SYM_VERSION_MINOR &&
	      pa == SYM_VERSION_PATCH);
	snprintf(want, sizeof(want), "%d.%d.%d", ma, mi, pa);
	CHECK(strcmp(v, want) == 0);
	CHECK(sym_version(NULL, NULL, NULL) == v);
	mi = -1;
	CHECK(sym_version(NULL, &mi, NULL) == v && mi == SYM_VERSION_MINOR);
}

static void quiet(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/t-api.XXXXXX";
	char cmd[64];

	(void)argc;
	self = argv[0];
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	/* The refusals are logged: keep the TAP output clean. */
	sym_set_log(quiet, NULL, SYM_LOG_WARN);
	test_version();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		perror("rm");
	return tap_done();
}
