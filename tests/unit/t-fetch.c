/*
 * t-fetch.c - symd/fetch.c against a real debuginfod server and a stub.
 *
 * A tiny program is compiled here with a build ID; its stripped
 * executable and its debug file (objcopy --only-keep-debug) are indexed
 * by a real `debuginfod` started on a free port (it binds every
 * interface in 0.188; it is only ever asked on 127.0.0.1).  The fault
 * cases that a real server cannot produce (a 500, an empty reply, a
 * file of another build ID, a slow answer) come from
 * tests/e2e/lib/stub-debuginfod.py.  Every server is started with
 * PR_SET_PDEATHSIG, so none outlives a crashed test, and stopped at exit.
 *
 * Without `debuginfod`, cc or objcopy the whole test is skipped; without
 * python3 only the stub's cases are.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "fetch.h"
#include "base.h"

/* CHECK_FETCH(call, want): symd_fetch_get()'s result, named on failure. */
#define CHECK_FETCH(call, want)                                             \
	do {                                                                 \
		int t_rc_ = (call);                                          \
		tap_ok(t_rc_ == (want), __FILE__, __LINE__, #call);          \
		if (t_rc_ != (want))                                         \
			printf("#   got %d (%s: %s), want %d\n", t_rc_,      \
			       symd_fetch_strerror(t_rc_), info.msg, (want)); \
	} while (0)

static char T[64];
static pid_t kids[16];
static int nkids;
static struct symd_fetch_info info;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0 ? 0 : -1;
}

/*
 * SIGKILL: debuginfod 0.188 takes seconds to stop on SIGTERM (it joins
 * sleeping threads), and no server here has state worth keeping.
 */
static void stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void cleanup(void)
{
	for (int i = 0; i < nkids; i++)
		stop(kids[i]);
	nkids = 0;
	if (T[0] && !getenv("T_FETCH_KEEP"))
		sh("rm -rf '%s'", T);
}

/* A port nothing listens on right now (the kernel's pick, released). */
static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int s = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(s, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	if (s >= 0)
		close(s);
	return port;
}

/* The HTTP status of GET @path on 127.0.0.1:@port, or -1. */
static int http_status(int port, const char *path)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 2 };
	char buf[256];
	int s, code = -1;
	ssize_t n;

	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		n = snprintf(buf, sizeof(buf),
			     "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
			     path);
		if (write(s, buf, n) == n) {
			n = read(s, buf, sizeof(buf) - 1);
			if (n > 0) {
				buf[n] = '\0';
				sscanf(buf, "HTTP/%*s %d", &code);
			}
		}
	}
	close(s);
	return code;
}

/*
 * Start argv[] with stdout to @out_fd (or the log file), stderr to the
 * log; it dies with us.  The child sees no DEBUGINFOD_* variable: a
 * debuginfod that inherits DEBUGINFOD_URLS federates to itself.
 */
static pid_t spawn(char *const argv[], int out_fd, const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(out_fd >= 0 ? out_fd : fd, 1);
			dup2(fd, 2);
		}
		unsetenv("DEBUGINFOD_URLS");
		unsetenv("DEBUGINFOD_CACHE_PATH");
		unsetenv("DEBUGINFOD_VERBOSE");
		unsetenv("DEBUGINFOD_PROGRESS");
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0 && nkids < (int)(sizeof(kids) / sizeof(kids[0])))
		kids[nkids++] = pid;
	return pid;
}

/* A real debuginfod indexing T/srv; its port, or -1. */
static int start_debuginfod(const char *id, pid_t *pidp)
{
	char pstr[16], db[128], dir[128], log[128], path[256];

	snprintf(db, sizeof(db), "%s/db.sqlite", T);
	snprintf(dir, sizeof(dir), "%s/srv", T);
	snprintf(log, sizeof(log), "%s/debuginfod.log", T);
	/* Another process may take the probed port: try a few. */
	for (int tries = 0; tries < 3; tries++) {
		int port = free_port();
		char *argv[] = { "debuginfod", "-F", "-p", pstr, "-d", db,
				 "-t", "0", "-g", "0", dir, NULL };
		pid_t pid;

		snprintf(pstr, sizeof(pstr), "%d", port);
		pid = spawn(argv, -1, log);
		if (pid < 0)
			return -1;
		/* About 0.2 s to answer, 1.2 s to index a small tree. */
		for (double t0 = now_s(); now_s() - t0 < 20;) {
			int ok = 1;

			if (waitpid(pid, NULL, WNOHANG) == pid)
				break;
			snprintf(path, sizeof(path), "/buildid/%s/debuginfo",
				 id);
			ok &= http_status(port, path) == 200;
			snprintf(path, sizeof(path), "/buildid/%s/executable",
				 id);
			ok &= ok && http_status(port, path) == 200;
			if (ok) {
				*pidp = pid;
				return port;
			}
			usleep(50000);
		}
		stop(pid);
	}
	return -1;
}

/*
 * Start the stub with @args (NULL-terminated), logging requests to
 * T/@log_name; a pipe to read its port from (stub_port()), or -1.
 * Python takes 0.3 to 0.6 s to start: all stubs start at once.
 */
static int stub_spawn(const char *script, const char *log_name, ...)
{
	char *argv[16] = { "python3", (char *)script, "--log", NULL };
	char lpath[128], errlog[128];
	int p[2], n = 4;
	va_list ap;

	if (!script)
		return -1;
	snprintf(lpath, sizeof(lpath), "%s/%s", T, log_name);
	snprintf(errlog, sizeof(errlog), "%s/stub.err", T);
	argv[3] = lpath;
	va_start(ap, log_name);
	while (n < 15 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	if (pipe(p) != 0)
		return -1;
	if (spawn(argv, p[1], errlog) < 0) {
		close(p[0]);
		p[0] = -1;
	}
	close(p[1]);
	return p[0];
}

/* The port a stub prints once it listens, or -1; closes @fd. */
static int stub_port(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char line[32];
	ssize_t got = 0;
	long v;

	if (fd < 0)
		return -1;
	while (got < (ssize_t)sizeof(line) - 1 && poll(&pfd, 1, 10000) > 0) {
		ssize_t r = read(fd, line + got, sizeof(line) - 1 - got);

		if (r <= 0)
			break;
		got += r;
		if (memchr(line, '\n', got))
			break;
	}
	line[got] = '\0';
	close(fd);
	v = strtol(line, NULL, 10);
	return got > 0 && v > 0 && v <= INT_MAX ? (int)v : -1;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int exists(const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return access(path, F_OK) == 0;
}

/* The bytes behind @fd equal the file @want. */
static int same_bytes(int fd, const char *want)
{
	char a[4096], b[4096];
	int wfd = open(want, O_RDONLY), same = 1;
	off_t off = 0;

	if (fd < 0 || wfd < 0) {
		if (wfd >= 0)
			close(wfd);
		return 0;
	}
	for (;;) {
		ssize_t na = pread(fd, a, sizeof(a), off);
		ssize_t nb = pread(wfd, b, sizeof(b), off);

		if (na != nb || na < 0 || memcmp(a, b, na) != 0) {
			same = 0;
			break;
		}
		if (na == 0)
			break;
		off += na;
	}
	close(wfd);
	return same;
}

/* Configure one upstream list (no fetch may run). */
static int upstreams(const char *urls, int wake)
{
	char cache[128];
	struct symd_fetch_opts o = { .urls = urls, .cache_dir = cache,
				     .timeout_s = 5, .wake_signal = wake };

	snprintf(cache, sizeof(cache), "%s/store/debuginfod-cache", T);
	return symd_fetch_global_init(&o);
}

struct bg {
	struct symd_fetch *f;
	const char *id;
	int rc;
	double end;
	struct symd_fetch_info info;
};

static void *bg_get(void *arg)
{
	struct bg *b = arg;

	b->rc = symd_fetch_get(b->f, SYMD_FETCH_DEBUGINFO, b->id, NULL, NULL,
			       NULL, &b->info);
	b->end = now_s();
	return NULL;
}

/* Wait (up to 3 s) until the stub logged a request with @tag. */
static int stub_saw_request(const char *tag)
{
	char path[128], line[512];

	snprintf(path, sizeof(path), "%s/other.log", T);
	for (double t0 = now_s(); now_s() - t0 < 3; usleep(5000)) {
		FILE *fp = fopen(path, "r");
		int seen = 0;

		while (fp && !seen && fgets(line, sizeof(line), fp))
			seen = strstr(line, tag) != NULL;
		if (fp)
			fclose(fp);
		if (seen)
			return 1;
	}
	return 0;
}

/* A fetch from the slow stub, cancelled once the stub has the request. */
static double cancel_latency(const char *id, const char *tag, int *rc)
{
	struct bg b = { .id = id };
	pthread_t th;
	double t;

	b.f = symd_fetch_new(NULL);
	if (!b.f || pthread_create(&th, NULL, bg_get, &b) != 0) {
		symd_fetch_free(b.f);
		*rc = 0;
		return 99;
	}
	if (!stub_saw_request(tag))
		printf("# the slow stub saw no request\n");
	t = now_s();
	symd_fetch_cancel(b.f);
	pthread_join(th, NULL);
	/* Sticky: the next call does not even start: no upstream asked,
	 * no URL (not its time: under load 1 ms was once not enough). */
	CHECK_FETCH(symd_fetch_get(b.f, SYMD_FETCH_DEBUGINFO, id, NULL, NULL,
				   NULL, &info), -SYMD_FETCH_CANCELLED);
	CHECK(!info.upstream[0] && !info.url[0] && !info.http_status);
	symd_fetch_free(b.f);
	*rc = b.rc;
	info = b.info;
	return b.end - t;
}

static const char *find_stub(const char *argv0)
{
	static char path[PATH_MAX];
	const char *root = getenv("SYM_ROOT");
	char *slash;

	if (root) {
		snprintf(path, sizeof(path),
			 "%s/tests/e2e/lib/stub-debuginfod.py", root);
		if (access(path, R_OK) == 0)
			return path;
	}
	if (access("tests/e2e/lib/stub-debuginfod.py", R_OK) == 0)
		return "tests/e2e/lib/stub-debuginfod.py";
	/* build/tests/t-fetch -> ../../tests/e2e */
	snprintf(path, sizeof(path), "%s", argv0);
	slash = strrchr(path, '/');
	if (slash) {
		snprintf(slash, sizeof(path) - (slash - path),
			 "/../../tests/e2e/lib/stub-debuginfod.py");
		if (access(path, R_OK) == 0)
			return path;
	}
	return NULL;
}

static const char *const bad_ids[] = {
	"", "a", "abc", "ABCD", "0123456789ABCDEF", "zz", "../etc/passwd",
	"00/../11", "0011 ", "00%2f11", " 0011",
	/* 130 digits: past libdebuginfod's 64 bytes */
	"0000000000000000000000000000000000000000000000000000000000000000"
	"000000000000000000000000000000000000000000000000000000000000000000",
};

static const char *const bad_sections[] = {
	"", ".", "..", "../x", "a/b", ".debug info", "%2e%2e", ".x?y",
	".x\ny",
	/* 129 characters */
	".123456789012345678901234567890123456789012345678901234567890123"
	"45678901234567890123456789012345678901234567890123456789012345678",
};

/*
 * Four stubs, one per file served; each request picks its fault with
 * a path prefix (/mode=500, /delay=3, ...).  They start at once.
 */
enum { S_OTHER, S_TEXT, S_SECT, S_PROG, NSTUB };

static void spawn_stubs(const char *stub, int *sp)
{
	char other[128], src[128], text[128], prog[128];

	snprintf(other, sizeof(other), "%s/other", T);
	snprintf(prog, sizeof(prog), "%s/prog", T);
	snprintf(src, sizeof(src), "%s/prog.c", T);
	snprintf(text, sizeof(text), "%s/prog.text", T);
	sp[S_OTHER] = stub_spawn(stub, "other.log", "--file", other, NULL);
	sp[S_TEXT] = stub_spawn(stub, "text.log", "--file", src, NULL);
	sp[S_SECT] = stub_spawn(stub, "sect.log", "--file", text, NULL);
	sp[S_PROG] = stub_spawn(stub, "prog.log", "--file", prog, NULL);
}

/* Point the upstream list at @fmt (ports ...); 0 or -errno. */
static int upstreams_at(int wake, const char *fmt, ...)
{
	char url[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(url, sizeof(url), fmt, ap);
	va_end(ap);
	return upstreams(url, wake);
}

#define LOCAL "http://127.0.0.1:%d"

int main(int argc, char **argv)
{
	const char *absent = "00112233445566778899aabbccddeeff00112233";
	const char *stub = find_stub(argv[0]);
	char id[129], other_id[129], cache[160], buf[512];
	struct symd_fetch *f;
	pid_t dpid = -1;
	int port, down, cancel_rc, fd, sp[NSTUB], have_stubs = 1;
	char *path;
	double lat;

	(void)argc;
	if (sh("command -v debuginfod >/dev/null 2>&1"))
		tap_skip_all("debuginfod not installed");
	if (sh("command -v cc >/dev/null && command -v objcopy >/dev/null"))
		tap_skip_all("cc or objcopy missing");
	snprintf(T, sizeof(T), "/tmp/t-fetch.XXXXXX");
	if (!mkdtemp(T))
		tap_skip_all("no temporary directory");
	atexit(cleanup);
	signal(SIGPIPE, SIG_IGN);
	snprintf(cache, sizeof(cache), "%s/store/debuginfod-cache", T);

	/* Two programs with their own build IDs, a debug file, a section. */
	if (sh("cd '%s' && mkdir srv && "
	       "printf 'int main(void) { return 0; }\\n' > prog.c && "
	       "printf 'int x; int main(void) { return x; }\\n' > other.c && "
	       "cc -g -O0 -Wl,--build-id=sha1 -o prog prog.c && "
	       "cc -g -O0 -Wl,--build-id=sha1 -o other other.c && "
	       "objcopy --only-keep-debug prog srv/prog.debug && "
	       "objcopy --strip-debug prog srv/prog && "
	       "objcopy -O binary --only-section=.text prog prog.text", T)) {
		printf("Bail out! cannot build the test programs\n");
		return 1;
	}
	snprintf(buf, sizeof(buf), "%s/prog", T);
	if (sym_file_build_id(buf, id, sizeof(id)) != 0) {
		printf("Bail out! no build ID in %s\n", buf);
		return 1;
	}
	snprintf(buf, sizeof(buf), "%s/other", T);
	if (sym_file_build_id(buf, other_id, sizeof(other_id)) != 0 ||
	    strcmp(id, other_id) == 0) {
		printf("Bail out! no distinct build ID in %s\n", buf);
		return 1;
	}
	spawn_stubs(stub, sp);
	port = start_debuginfod(id, &dpid);
	for (int i = 0; i < NSTUB; i++) {
		sp[i] = stub_port(sp[i]);
		have_stubs &= sp[i] > 0;
	}
	if (!have_stubs)
		printf("# python3 or %s missing: stub cases skipped\n",
		       stub ? stub : "tests/e2e/lib/stub-debuginfod.py");

	f = symd_fetch_new(NULL);
	CHECK(f != NULL);
	if (!f)
		return tap_done();

	/* Malformed input never reaches libdebuginfod. */
	fd = 7;
	path = (char *)"x";
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, NULL, NULL, &fd,
				   &path, &info), -SYMD_FETCH_INVAL);
	CHECK(fd == -1 && path == NULL);
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++)
		CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_EXECUTABLE,
					   bad_ids[i], NULL, NULL, NULL,
					   &info), -SYMD_FETCH_INVAL);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_SECTION, id, NULL, NULL,
				   NULL, &info), -SYMD_FETCH_INVAL);
	for (size_t i = 0; i < sizeof(bad_sections) / sizeof(bad_sections[0]);
	     i++)
		CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_SECTION, id,
					   bad_sections[i], NULL, NULL,
					   &info), -SYMD_FETCH_INVAL);
	CHECK_FETCH(symd_fetch_get(f, 0, id, NULL, NULL, NULL, &info),
		    -SYMD_FETCH_INVAL);
	CHECK_FETCH(symd_fetch_get(f, 9, id, NULL, NULL, NULL, &info),
		    -SYMD_FETCH_INVAL);

	/*
	 * No upstream: absent, without network, whatever DEBUGINFOD_*
	 * variables the process inherited.  The stub would serve a file,
	 * and logs every request.
	 */
	snprintf(buf, sizeof(buf), LOCAL, sp[S_OTHER]);
	setenv("DEBUGINFOD_URLS", buf, 1);
	setenv("DEBUGINFOD_PROGRESS", "1", 1);
	setenv("DEBUGINFOD_VERBOSE", "1", 1);
	setenv("DEBUGINFOD_HEADERS_FILE", "/nonexistent", 1);
	setenv("DEBUGINFOD_SOMETHING_NEW", "1", 1);
	CHECK_ERR(upstreams(NULL, 0), 0);
	CHECK(!getenv("DEBUGINFOD_URLS") && !getenv("DEBUGINFOD_PROGRESS") &&
	      !getenv("DEBUGINFOD_VERBOSE") &&
	      !getenv("DEBUGINFOD_HEADERS_FILE") &&
	      !getenv("DEBUGINFOD_SOMETHING_NEW"));
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, other_id, NULL,
				   NULL, NULL, &info), -SYMD_FETCH_ABSENT);
	CHECK(info.usec < 100000 && info.msg[0]);
	if (have_stubs)
		CHECK(!exists("%s/other.log", T));
	else
		printf("ok %d # skip no stub\n", ++tap_n);
	/* A URL list needs a cache directory. */
	{
		struct symd_fetch_opts o = { .urls = "http://127.0.0.1:1" };

		CHECK_ERR(symd_fetch_global_init(&o), -EINVAL);
	}

	if (port < 0) {
		printf("Bail out! debuginfod did not come up, see %s/"
		       "debuginfod.log\n", T);
		setenv("T_FETCH_KEEP", "1", 1);
		return 1;
	}
	printf("# debuginfod on port %d\n", port);
	CHECK_ERR(upstreams_at(0, LOCAL, port), 0);
	CHECK(getenv("DEBUGINFOD_CACHE_PATH") &&
	      strcmp(getenv("DEBUGINFOD_CACHE_PATH"), cache) == 0);
	CHECK(exists("%s/cache_clean_interval_s", cache));

	/* The debug file, byte for byte, in the configured cache. */
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL, &fd,
				   &path, &info), 0);
	snprintf(buf, sizeof(buf), "%s/srv/prog.debug", T);
	CHECK(same_bytes(fd, buf));
	CHECK(path && strncmp(path, cache, strlen(cache)) == 0 &&
	      strstr(path, id) && strstr(path, "/debuginfo"));
	CHECK(info.size == (uint64_t)file_size(buf) &&
	      info.fetched == info.size && !info.from_cache);
	CHECK(strstr(info.url, "/buildid/") && strstr(info.url, id));
	printf("# debuginfo: %llu bytes in %llu us\n",
	       (unsigned long long)info.fetched,
	       (unsigned long long)info.usec);
	if (fd >= 0)
		close(fd);
	free(path);
	/* Still in the cache: handed back without a transfer, checked. */
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL, NULL,
				   &path, &info), 0);
	CHECK(info.from_cache && info.fetched == 0 && info.size > 0);
	/* The store took its copy: the cache keeps nothing. */
	CHECK_ERR(symd_fetch_discard(path), 0);
	CHECK(!exists("%s", path) && !exists("%s/%s", cache, id));
	free(path);
	CHECK_ERR(symd_fetch_discard(NULL), 0);

	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_EXECUTABLE, id, NULL, &fd,
				   &path, &info), 0);
	snprintf(buf, sizeof(buf), "%s/srv/prog", T);
	CHECK(same_bytes(fd, buf) && path && strstr(path, "/executable"));
	if (fd >= 0)
		close(fd);
	symd_fetch_discard(path);
	free(path);

	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_SECTION, id, ".text", &fd,
				   &path, &info), 0);
	snprintf(buf, sizeof(buf), "%s/prog.text", T);
	CHECK(same_bytes(fd, buf) && info.size == (uint64_t)file_size(buf));
	if (fd >= 0)
		close(fd);
	symd_fetch_discard(path);
	free(path);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_SECTION, id, ".nosuch", NULL,
				   NULL, &info), -SYMD_FETCH_ABSENT);

	/* A 404: absent, fast, and no negative file left to answer later. */
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, absent, NULL, &fd,
				   &path, &info), -SYMD_FETCH_ABSENT);
	CHECK(fd == -1 && path == NULL && info.http_status == 404);
	CHECK(info.usec < 1000000);
	printf("# 404: %llu us\n", (unsigned long long)info.usec);
	CHECK(!exists("%s/%s", cache, absent));
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, absent, NULL, NULL,
				   NULL, &info), -SYMD_FETCH_ABSENT);

	/*
	 * libdebuginfod's own cleaning never runs, even when its interval
	 * file is years old: an old file it would delete survives a query.
	 * With the interval and the age at 1 s it is deleted: the check is
	 * real.
	 */
	CHECK(sh("mkdir -p '%s/%s' && echo x > '%s/%s/debuginfo' && "
		 "touch -a -m -d 2000-01-01 '%s/%s/debuginfo' && "
		 "touch -m -d 2000-01-01 '%s/cache_clean_interval_s'",
		 cache, other_id, cache, other_id, cache, other_id,
		 cache) == 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, absent, NULL, NULL,
				   NULL, &info), -SYMD_FETCH_ABSENT);
	CHECK(exists("%s/%s/debuginfo", cache, other_id));
	CHECK(sh("cd '%s' && echo 1 > max_unused_age_s && "
		 "echo 1 > cache_clean_interval_s && "
		 "touch -m -d 2000-01-01 cache_clean_interval_s", cache) == 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, absent, NULL, NULL,
				   NULL, &info), -SYMD_FETCH_ABSENT);
	CHECK(!exists("%s/%s/debuginfo", cache, other_id));
	sh("rm -rf '%s/%s'", cache, other_id);
	CHECK_ERR(upstreams_at(0, LOCAL, port), 0);	/* the config again */

	/* Nothing listens: a transient failure, fast. */
	down = free_port();
	CHECK_ERR(upstreams_at(0, LOCAL, down), 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL, NULL,
				   NULL, &info), -SYMD_FETCH_FAILED);
	CHECK(info.err == -ECONNREFUSED && info.usec < 1000000);
	printf("# down: %llu us, \"%s\"\n", (unsigned long long)info.usec,
	       info.msg);
	CHECK(!exists("%s/%s", cache, id));
	/* One server down, one with the file: the file. */
	CHECK_ERR(upstreams_at(0, LOCAL " " LOCAL, down, port), 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL, NULL,
				   &path, &info), 0);
	symd_fetch_discard(path);
	free(path);

	/* Over max_size: refused by the server (406), not absent. */
	{
		char u[64];
		struct symd_fetch_opts o = { .urls = u, .cache_dir = cache,
					     .max_size = 100 };

		snprintf(u, sizeof(u), LOCAL, port);
		CHECK_ERR(symd_fetch_global_init(&o), 0);
		CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL,
					   NULL, NULL, &info),
			    -SYMD_FETCH_FAILED);
		CHECK(info.err == -EFBIG && !exists("%s/%s", cache, id));
		printf("# max_size: \"%s\"\n", info.msg);
	}

	if (!have_stubs)
		goto end;

	/* libdebuginfod says -ENOENT for a 500 too: it is not absent. */
	CHECK_ERR(upstreams_at(0, LOCAL "/mode=500", sp[S_OTHER]), 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL, NULL,
				   NULL, &info), -SYMD_FETCH_FAILED);
	CHECK(info.http_status == 500 && info.err == -EIO &&
	      strstr(info.msg, "HTTP 500"));
	CHECK(!exists("%s/%s", cache, id));
	/* ... nor is an empty reply. */
	CHECK_ERR(upstreams_at(0, LOCAL "/mode=close", sp[S_OTHER]), 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL, NULL,
				   NULL, &info), -SYMD_FETCH_FAILED);
	CHECK(info.err == -EPROTO && info.http_status == 0);
	printf("# empty reply: \"%s\"\n", info.msg);
	/* Absent only when every server says 404. */
	CHECK_ERR(upstreams_at(0, LOCAL " " LOCAL "/mode=500", port,
				  sp[S_OTHER]), 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, absent, NULL,
				   NULL, NULL, &info), -SYMD_FETCH_FAILED);
	CHECK_ERR(upstreams_at(0, LOCAL " " LOCAL "/mode=404", port,
				  sp[S_OTHER]), 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, absent, NULL,
				   NULL, NULL, &info), -SYMD_FETCH_ABSENT);

	/* Files that are not what was asked for are deleted. */
	CHECK_ERR(upstreams_at(0, LOCAL, sp[S_OTHER]), 0);
	fd = 7;
	path = (char *)"x";
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL, &fd,
				   &path, &info), -SYMD_FETCH_BADID);
	CHECK(fd == -1 && path == NULL && strstr(info.msg, other_id));
	CHECK(!exists("%s/%s/debuginfo", cache, id) &&
	      !exists("%s/%s", cache, id));
	printf("# wrong build ID: \"%s\"\n", info.msg);
	CHECK_ERR(upstreams_at(0, LOCAL, sp[S_TEXT]), 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_EXECUTABLE, id, NULL, NULL,
				   NULL, &info), -SYMD_FETCH_BADID);
	CHECK(!exists("%s/%s", cache, id));
	CHECK_ERR(upstreams_at(0, LOCAL "/size=5", sp[S_SECT]), 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_SECTION, id, ".text", NULL,
				   NULL, &info), -SYMD_FETCH_BADID);
	CHECK(!exists("%s/%s", cache, id));

	/*
	 * A server without section support (503): libdebuginfod fetches
	 * the whole debug file (here the unstripped program) and extracts
	 * the section; the whole file is not kept.
	 */
	CHECK_ERR(upstreams_at(0, LOCAL "/sections=503", sp[S_PROG]), 0);
	CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_SECTION, id, ".text", &fd,
				   &path, &info), 0);
	snprintf(buf, sizeof(buf), "%s/prog.text", T);
	CHECK(same_bytes(fd, buf));
	CHECK(!exists("%s/%s/debuginfo", cache, id));
	if (fd >= 0)
		close(fd);
	CHECK_ERR(symd_fetch_discard(path), 0);
	CHECK(!exists("%s/%s", cache, id));
	free(path);

	/* A slow upstream (3 s): cancelled from another thread. */
	CHECK_ERR(upstreams_at(0, LOCAL "/delay=3/tag=c1", sp[S_OTHER]), 0);
	lat = cancel_latency(id, "tag=c1", &cancel_rc);
	CHECK_FETCH(cancel_rc, -SYMD_FETCH_CANCELLED);
	CHECK(lat < 1.5);
	printf("# cancel latency, progress callback only: %.0f ms\n",
	       lat * 1000);
	CHECK(!exists("%s/%s", cache, id));
	CHECK_ERR(upstreams_at(SIGURG, LOCAL "/delay=3/tag=c2", sp[S_OTHER]),
		  0);
	lat = cancel_latency(id, "tag=c2", &cancel_rc);
	CHECK_FETCH(cancel_rc, -SYMD_FETCH_CANCELLED);
	CHECK(lat < 0.3);
	printf("# cancel latency, with a wake signal: %.1f ms\n", lat * 1000);

	/* DEBUGINFOD_TIMEOUT: no byte for timeout_s seconds. */
	{
		char u[64];
		struct symd_fetch_opts o = { .urls = u, .cache_dir = cache,
					     .timeout_s = 1 };
		double t = now_s();

		snprintf(u, sizeof(u), LOCAL "/delay=3", sp[S_OTHER]);
		CHECK_ERR(symd_fetch_global_init(&o), 0);
		CHECK_FETCH(symd_fetch_get(f, SYMD_FETCH_DEBUGINFO, id, NULL,
					   NULL, NULL, &info),
			    -SYMD_FETCH_FAILED);
		t = now_s() - t;
		CHECK(info.err == -ETIME && t < 2.5);
		printf("# timeout_s 1: failed after %.0f ms, \"%s\"\n",
		       t * 1000, info.msg);
	}

	/* A per-call deadline: noticed by the progress callback (within
	 * ~1 s), or at once with the wake signal. */
	{
		struct symd_fetch_opts o = { .call_timeout_ms = 300 };
		struct symd_fetch *g = symd_fetch_new(&o);

		for (int wake = 0; wake <= SIGURG; wake += SIGURG) {
			double t = now_s();

			CHECK_ERR(upstreams_at(wake, LOCAL "/delay=3",
					       sp[S_OTHER]), 0);
			CHECK_FETCH(symd_fetch_get(g, SYMD_FETCH_DEBUGINFO, id,
						   NULL, NULL, NULL, &info),
				    -SYMD_FETCH_FAILED);
			t = now_s() - t;
			CHECK(info.err == -ETIME && t > 0.29 &&
			      t < (wake ? 0.8 : 1.6));
			printf("# deadline 300 ms%s: failed after %.0f ms\n",
			       wake ? ", wake signal" : "", t * 1000);
		}
		symd_fetch_free(g);
	}
end:
	symd_fetch_free(f);
	symd_fetch_free(NULL);
	for (int e = 0; e <= SYMD_FETCH_INVAL; e++)
		CHECK(symd_fetch_strerror(-e)[0] &&
		      symd_fetch_strerror(e) == symd_fetch_strerror(-e));
	cleanup();
	return tap_done();
}
