/*
 * upload_sources.c - `sym upload --sources DIR|TARBALL` (upload_sources.h).
 *
 * The client decides what goes up, from the line tables (libsym's
 * sym_file_sources()): a file the debug file does not name is never sent,
 * and the server checks each path again against the same line tables
 * (sym_store_put_source()), so a client that sends anything else gets
 * 422.  One PUT per file, on the one connection the client keeps: no
 * archive format crosses the wire and symd parses none.  A tarball is
 * unpacked by tar(1), the user's own tool on the user's own file, into a
 * temporary directory that is removed afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "upload_sources.h"
#include "base.h"

/* The paths sym_file_sources() lists, kept. */
struct srcs {
	char **v;
	size_t n, cap;
};

static int keep(void *ctx, const char *path)
{
	struct srcs *s = ctx;
	char *copy;

	if (symi_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -ENOMEM;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	s->v[s->n++] = copy;
	return 0;
}

static void srcs_release(struct srcs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* The file of @src under @dir, by its longest tail; false if none. */
static bool find(const char *dir, const char *src, char *buf, size_t len)
{
	for (const char *t = src; t; t = strchr(t + 1, '/')) {
		struct stat st;

		if (snprintf(buf, len, "%s%s", dir, t) < (int)len &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

/* "/v1/source/<id>" + @src %-escaped but for [A-Za-z0-9/._~-]. */
static char *source_url(const char *id, const char *src)
{
	size_t n = strlen(src);
	char *url = malloc(16 + strlen(id) + 3 * n + 1);
	char *w;

	if (!url)
		return NULL;
	w = url + snprintf(url, 16 + strlen(id), "/v1/source/%s", id);
	for (size_t i = 0; i < n; i++) {
		static const char hex[] = "0123456789ABCDEF";
		unsigned char c = (unsigned char)src[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("/._~-", c)) {
			*w++ = (char)c;
		} else {
			*w++ = '%';
			*w++ = hex[c >> 4];
			*w++ = hex[c & 15];
		}
	}
	*w = '\0';
	return url;
}

/* PUT one source; 1 sent, 0 refused, -1 stop (printed). */
static int put_one(struct client *c, const char *id, const char *src,
		   const char *file, const char **stop)
{
	struct client_result r;
	struct stat st;
	char *url = source_url(id, src);
	FILE *f = fopen(file, "rbe");
	int ret = 0;

	if (!url || !f || fstat(fileno(f), &st) != 0) {
		tool_err_code(file, url ? -errno : -ENOMEM);
		goto out;
	}
	if (client_put_file(c, url, f, file, (uint64_t)st.st_size, NULL, NULL,
			    &r) != 0) {
		tool_err("'%s': %s", file, r.msg);
		if (r.unreachable)
			*stop = "the server cannot be reached";
		ret = -1;
	} else if (r.status != 201) {
		tool_err("'%s': the server refused the source %s of build ID "
			 "%s: %s", file, src, id, r.msg);
		if (r.status == 401 || r.status == 403) {
			*stop = "the server refused the token";
			ret = -1;
		}
	} else {
		ret = 1;
	}
out:
	if (f)
		fclose(f);
	free(url);
	return ret;
}

static int rm_fn(const char *p, const struct stat *sb, int flag,
		 struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

/* Unpack @tarball into a new temporary directory @dir (PATH_MAX). */
static int unpack(const char *tarball, char *dir)
{
	const char *tmp = getenv("TMPDIR");
	int status;
	pid_t pid;

	snprintf(dir, PATH_MAX, "%s/sym-sources.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execlp("tar", "tar", "-xf", tarball, "-C", dir,
		       "--no-same-owner", "--no-same-permissions", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* Send the found ones of @s from @dir; print the summary. */
static bool send_all(struct client *c, const char *path, const char *id,
		     const char *dir, const struct srcs *s, const char **stop)
{
	char file[PATH_MAX];
	size_t sent = 0, missing = 0;
	bool ok = true;

	for (size_t i = 0; i < s->n && !*stop; i++) {
		int r;

		if (!find(dir, s->v[i], file, sizeof(file))) {
			missing++;
			continue;
		}
		r = put_one(c, id, s->v[i], file, stop);
		sent += r > 0;
		ok &= r > 0;
	}
	printf("%s  %s  sources  uploaded %zu of %zu named (%zu not found)\n",
	       id, path, sent, s->n, missing);
	for (size_t i = 0; i < s->n && missing; i++)
		if (!find(dir, s->v[i], file, sizeof(file)))
			printf("%s  %s  source not found: %s\n", id, path,
			       s->v[i]);
	return ok && !*stop;
}

bool upload_sources(struct client *c, const char *path, const char *id,
		    const char *from, const char **stop)
{
	struct srcs s = { 0 };
	char tmp[PATH_MAX] = "", eb[128];
	struct stat st;
	bool ok = false;
	int err;

	if (stat(from, &st) != 0) {
		tool_err_code(from, -errno);
		return false;
	}
	err = sym_file_sources(path, keep, &s);
	if (err == -SYM_E_NOTFOUND) {
		printf("%s  %s  sources  none: no DWARF line tables\n", id,
		       path);
		return true;
	}
	if (err) {
		tool_err("'%s': cannot list its sources: %s", path,
			 sym_strerror(err, eb, sizeof(eb)));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		err = unpack(from, tmp);
		if (err) {
			tool_err("'%s': cannot unpack it with tar into '%s'",
				 from, tmp);
			goto out;
		}
	}
	ok = send_all(c, path, id, tmp[0] ? tmp : from, &s, stop);
out:
	if (tmp[0] == '/')
		nftw(tmp, rm_fn, 16, FTW_DEPTH | FTW_PHYS);
	srcs_release(&s);
	return ok;
}
