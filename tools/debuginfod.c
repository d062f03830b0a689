/*
 * debuginfod.c - the debuginfod client of `sym addr2line`: the separate
 * debug file of a build ID from the servers in $DEBUGINFOD_URLS, through
 * libdebuginfod, as eu-addr2line (libdwfl) gets it.
 *
 * libdebuginfod is opened on first use (dlopen), as libdwfl opens it:
 * linked, it and libcurl's dependencies would cost every sym process
 * start-up time, and only a file whose debug info is not found locally,
 * with $DEBUGINFOD_URLS set, needs it.  Everything else is libdebuginfod's
 * and the environment's, as for eu-addr2line: its cache
 * ($DEBUGINFOD_CACHE_PATH), $DEBUGINFOD_TIMEOUT (90 s by default, per
 * server without progress), $DEBUGINFOD_PROGRESS, $DEBUGINFOD_VERBOSE.
 * libsym knows no HTTP: this file is the tool's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"
#include "base.h"

/* libdebuginfod's API (elfutils/debuginfod.h, 0.188), by pointer. */
typedef struct debuginfod_client debuginfod_client;
static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int,
			      char **);
	void (*end)(debuginfod_client *);
} di;

/* 0, or -ENOENT when libdebuginfod cannot be loaded. */
static int load(void)
{
	static int state;	/* 0 untried, 1 loaded, -1 failed */
	void *h;

	if (state)
		return state > 0 ? 0 : -ENOENT;
	state = -1;
	h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -ENOENT;
	*(void **)&di.begin = dlsym(h, "debuginfod_begin");
	*(void **)&di.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&di.end = dlsym(h, "debuginfod_end");
	if (!di.begin || !di.find_debuginfo || !di.end) {
		dlclose(h);
		return -ENOENT;
	}
	state = 1;
	return 0;
}

bool tool_debuginfod_enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[strspn(urls, " \t")];
}

int tool_debuginfod_find(const char *build_id, char **path, char *why,
			 size_t len)
{
	debuginfod_client *c;
	int fd;

	*path = NULL;
	if (!tool_debuginfod_enabled()) {
		snprintf(why, len, "DEBUGINFOD_URLS is not set");
		return -ENOSYS;
	}
	if (load()) {
		snprintf(why, len, "cannot load libdebuginfod.so.1: %s",
			 dlerror() ? dlerror() : "not found");
		return -ENOENT;
	}
	c = di.begin();
	if (!c) {
		snprintf(why, len, "cannot start a libdebuginfod client");
		return -ENOMEM;
	}
	/* Length 0: the build ID is a hex string. */
	fd = di.find_debuginfo(c, (const unsigned char *)build_id, 0, path);
	di.end(c);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	free(*path);
	*path = NULL;
	if (fd == -ENOENT)
		/* libdebuginfod says -ENOENT for a 404 and for a 5xx or an
		 * empty reply alike. */
		snprintf(why, len, "no server gave the debug file of build ID "
			 "%s", build_id);
	else
		snprintf(why, len, "%s", strerror(-fd));
	return fd;
}
