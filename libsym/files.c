/*
 * files.c - the store's file area: debug files and executables by build
 * ID, laid out as a debuginfod server serves them:
 *
 *   DIR/files/<build-id>/debuginfo
 *   DIR/files/<build-id>/executable
 *   DIR/files/<build-id>/sources.list, src/   the sources (sources.c)
 *
 * A file is copied to "<name>.tmp.<pid>" in the same directory, fsynced,
 * renamed over the real name, and the directory is fsynced: after a crash
 * the real name holds the old file, the new one, or nothing, never half a
 * file.  Leftover temporary files are harmless and have no real name.
 * The build ID inside the file is checked against the one it is filed
 * under, so a store never serves a wrong file.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "ksnap.h"
#include "base.h"

static const char *kind_name(int kind)
{
	return kind == SYM_STORE_DEBUGINFO ? "debuginfo" :
	       kind == SYM_STORE_EXECUTABLE ? "executable" :
	       kind == SYM_STORE_KALLSYMS ? "kallsyms" : NULL;
}

int sym_kallsyms_check(const char *path, const char *build_id, char *why,
		       size_t len)
{
	struct symi_ksnap *ks = NULL;
	uint8_t raw[64];
	uint64_t text;
	size_t n;
	int err;

	if (len)
		why[0] = '\0';
	if (!path || !build_id || symi_build_id_parse(build_id, raw, &n))
		return -EINVAL;
	err = symi_ksnap_load(path, &ks, why, len);
	if (err == -EINVAL)
		return -SYM_E_BADTABLE;
	if (err)
		return err;
	if (strcmp(ks->build_id, build_id) ? !symi_ksnap_has_module(ks,
								    build_id) :
					     !symi_ksnap_text(ks, &text)) {
		snprintf(why, len, "the kallsyms snapshot has no table of %s: "
			 "%s", build_id, strcmp(ks->build_id, build_id) ?
			 "no module of that build ID with its .text address" :
			 "its kernel has no _text symbol");
		err = -EXDEV;
	}
	symi_ksnap_free(ks);
	return err;
}

/* Is @path a kallsyms snapshot with a table of @build_id? */
static int kallsyms_has(const char *path, const char *build_id)
{
	char why[300];
	int err = sym_kallsyms_check(path, build_id, why, sizeof(why));

	if (why[0])
		symi_warn("store: '%s': %s", path, why);
	return err;
}

/* Is @path a file of @kind for @build_id?  (its GNU build ID, or for a
 * snapshot kallsyms_has()) */
static int check_file(const char *path, int kind, const char *build_id)
{
	char hex[129];
	int err;

	if (kind == SYM_STORE_KALLSYMS)
		return kallsyms_has(path, build_id);
	err = sym_file_module_id(path, hex, sizeof(hex), NULL);
	if (err)
		return err;
	if (strcmp(hex, build_id) != 0) {
		symi_warn("store: '%s' has build ID %s, not %s", path, hex,
			  build_id);
		return -EXDEV;
	}
	return 0;
}

static bool valid_id(const char *id)
{
	uint8_t raw[64];
	size_t n;

	return symi_build_id_parse(id, raw, &n) == 0;
}

int sym_store_file_path(struct sym_store *st, const char *build_id,
			int kind, char *buf, size_t len)
{
	const char *k = kind_name(kind);
	struct stat sb;
	int n;

	if (!st || !buf || !k || !valid_id(build_id))
		return -EINVAL;
	n = snprintf(buf, len, "%s/files/%s/%s", symi_store_dir(st),
		     build_id, k);
	if (n < 0 || (size_t)n >= len)
		return -ERANGE;
	if (stat(buf, &sb) != 0 || !S_ISREG(sb.st_mode))
		return -SYM_E_NOTFOUND;
	return 0;
}

/* Copy @from to the open @fd, whole. */
static int copy_fd(int from, int fd)
{
	char buf[1 << 16];

	for (;;) {
		ssize_t got = read(from, buf, sizeof(buf));
		char *p = buf;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return 0;
		while (got > 0) {
			ssize_t put = write(fd, p, (size_t)got);

			if (put < 0 && errno == EINTR)
				continue;
			if (put < 0)
				return -errno;
			p += put;
			got -= put;
		}
	}
}

/* A directory a remove took since the rename needs no sync: the remove
 * came after the put (ENOENT is no error). */
static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	int err = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fsync(fd) != 0)
		err = -errno;
	close(fd);
	return err;
}

/* Make DIR/files/<id>/ exist. */
static int make_dirs(struct sym_store *st, const char *dir)
{
	char files[PATH_MAX];

	if (mkdir(dir, 0755) == 0 || errno == EEXIST)
		return 0;
	snprintf(files, sizeof(files), "%s/files", symi_store_dir(st));
	if (mkdir(files, 0755) != 0 && errno != EEXIST)
		return -errno;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Put @path under its real name: copied (then @path is left alone), or
 * with @move renamed when it is on the store's file system (a file that
 * was downloaded or uploaded into the store: no second copy is written).
 */
static int put_file(struct sym_store *st, const char *build_id, int kind,
		    const char *path, bool move)
{
	char dir[PATH_MAX], dest[PATH_MAX], tmp[PATH_MAX + 32];
	const char *k = kind_name(kind);
	struct stat src, old;
	int in = -1, out = -1, err;

	if (!st || !path || !k || !valid_id(build_id))
		return -EINVAL;
	if (symi_store_rdonly(st))
		return -EROFS;
	err = check_file(path, kind, build_id);
	if (err)
		return err;
	if (snprintf(dir, sizeof(dir), "%s/files/%s", symi_store_dir(st),
		     build_id) >= (int)sizeof(dir) ||
	    snprintf(dest, sizeof(dest), "%s/%s", dir, k) >=
		    (int)sizeof(dest))
		return -ENAMETOOLONG;
	/* O_NONBLOCK and S_ISREG: a FIFO put there since
	 * sym_file_build_id() read the path is refused, never waited on. */
	in = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in < 0)
		return -errno;
	if (fstat(in, &src) != 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(src.st_mode)) {
		err = S_ISDIR(src.st_mode) ? -EISDIR : -SYM_E_NOTREG;
		goto out;
	}
	/* Already there (same build ID, same size): nothing to do. */
	if (stat(dest, &old) == 0 && old.st_size == src.st_size) {
		err = 0;
		if (move)
			unlink(path);
		goto out;
	}
	if (move && fsync(in) != 0) {
		err = -errno;
		goto out;
	}
	/* A remove of the build ID may delete the directory between
	 * make_dirs() and the rename or open: make it again. */
	for (int tries = 0; tries < 8; tries++) {
		err = make_dirs(st, dir);
		if (err)
			goto out;
		if (!move)
			break;
		if (rename(path, dest) == 0) {
			err = fsync_dir(dir);
			goto out;
		}
		err = -errno;
		if (errno != ENOENT || access(path, F_OK) != 0)
			break;
	}
	if (move && err != -EXDEV)
		goto out;
	/* Another file system (or a copy): copy below, then unlink. */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", dest, (long)getpid());
	for (int tries = 0; tries < 8; tries++) {
		out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			   0644);
		if (out >= 0)
			break;
		err = -errno;
		if (err != -ENOENT || make_dirs(st, dir) != 0)
			break;
	}
	if (out < 0)
		goto out;
	err = copy_fd(in, out);
	if (!err && fsync(out) != 0)
		err = -errno;
	if (close(out) != 0 && !err)
		err = -errno;
	out = -1;
	if (!err && rename(tmp, dest) != 0)
		err = -errno;
	if (err) {
		symi_warn("store: cannot store '%s' as %s: %s", path, dest,
			  strerror(-err));
		unlink(tmp);
		goto out;
	}
	err = fsync_dir(dir);
	if (!err && move)
		unlink(path);
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return err;
}

/* A new debug file or executable may name other sources: the list of
 * names sym_store_put_source() kept is made again on its next use. */
static int new_file(struct sym_store *st, const char *build_id, int err)
{
	char list[PATH_MAX];

	if (!err && snprintf(list, sizeof(list), "%s/files/%s/sources.list",
			     symi_store_dir(st), build_id) < (int)sizeof(list))
		unlink(list);
	return err;
}

int sym_store_put_file(struct sym_store *st, const char *build_id, int kind,
		       const char *path)
{
	return new_file(st, build_id,
			put_file(st, build_id, kind, path, false));
}

int sym_store_take_file(struct sym_store *st, const char *build_id, int kind,
			const char *path)
{
	return new_file(st, build_id,
			put_file(st, build_id, kind, path, true));
}

int symi_files_scan(struct sym_store *st, symi_files_fn fn, void *ctx)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (snprintf(dir, sizeof(dir), "%s/files", symi_store_dir(st)) >=
	    (int)sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (de = readdir(d))) {
		uint64_t bytes = 0;
		int64_t mtime = 0;
		struct stat sb;

		if (!valid_id(de->d_name))
			continue;
		for (int kind = SYM_STORE_DEBUGINFO;
		     kind <= SYM_STORE_KALLSYMS; kind++) {
			snprintf(path, sizeof(path), "%s/%s/%s", dir,
				 de->d_name, kind_name(kind));
			if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
				continue;
			bytes += (uint64_t)sb.st_size;
			if (sb.st_mtime > mtime)
				mtime = sb.st_mtime;
		}
		bytes += symi_sources_bytes(st, de->d_name);
		if (bytes)
			err = fn(ctx, de->d_name, bytes, mtime);
	}
	closedir(d);
	return err;
}

bool symi_files_remove(struct sym_store *st, const char *build_id)
{
	char path[PATH_MAX];
	bool any = false;

	if (!valid_id(build_id))
		return false;
	for (int kind = SYM_STORE_DEBUGINFO; kind <= SYM_STORE_KALLSYMS;
	     kind++) {
		if (snprintf(path, sizeof(path), "%s/files/%s/%s",
			     symi_store_dir(st), build_id,
			     kind_name(kind)) < (int)sizeof(path) &&
		    unlink(path) == 0)
			any = true;
	}
	symi_sources_remove(st, build_id);
	/* Fails while a put_file() of the build ID has a temporary file in
	 * it, which then finds the directory still there. */
	if (snprintf(path, sizeof(path), "%s/files/%s", symi_store_dir(st),
		     build_id) < (int)sizeof(path))
		rmdir(path);
	return any;
}

/*
 * Conversion locks: DIR/locks/<build-id>, held with flock().  The kernel
 * drops a dead holder's lock, so a crash never leaves a stale marker and
 * the only timeout needed is the waiter's own.  The holder unlinks the
 * file before it lets go; a waiter that then gets the lock on the old,
 * unlinked file sees that the name no longer leads to it and tries again.
 */
struct sym_store_lock {
	int fd;
	char path[PATH_MAX];
};

int sym_store_lock(struct sym_store *st, const char *build_id,
		   unsigned wait_ms, struct sym_store_lock **out, int *waited)
{
	struct sym_store_lock *l;
	char dir[PATH_MAX];
	double deadline = symi_now() + wait_ms / 1000.0;
	int err;

	if (out)
		*out = NULL;
	if (waited)
		*waited = 0;
	if (!st || !out || !valid_id(build_id))
		return -EINVAL;
	if (symi_store_rdonly(st))
		return -EROFS;
	l = symi_calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->fd = -1;
	if (snprintf(dir, sizeof(dir), "%s/locks", symi_store_dir(st)) >=
		    (int)sizeof(dir) ||
	    snprintf(l->path, sizeof(l->path), "%s/%s", dir, build_id) >=
		    (int)sizeof(l->path)) {
		err = -ENAMETOOLONG;
		goto fail;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		err = -errno;
		goto fail;
	}
	for (;;) {
		struct stat a, b;

		l->fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (l->fd < 0) {
			err = -errno;
			goto fail;
		}
		if (flock(l->fd, LOCK_EX | LOCK_NB) == 0) {
			if (fstat(l->fd, &a) == 0 && stat(l->path, &b) == 0 &&
			    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
				*out = l;
				return 0;
			}
		} else if (errno != EWOULDBLOCK) {
			err = -errno;
			goto fail;
		} else if (waited) {
			*waited = 1;
		}
		close(l->fd);
		l->fd = -1;
		if (symi_now() >= deadline) {
			err = -ETIMEDOUT;
			goto fail;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 },
			  NULL);
	}
fail:
	if (l->fd >= 0)
		close(l->fd);
	free(l);
	return err;
}

void sym_store_unlock(struct sym_store_lock *l)
{
	if (!l)
		return;
	unlink(l->path);
	close(l->fd);
	free(l);
}
