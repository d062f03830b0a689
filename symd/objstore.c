/*
 * objstore.c - the object store as the durable tier behind the local
 * store (symd.h, "objstore"): which objects a build ID has, and moving
 * them between the bucket and the local store through files in the store
 * directory.
 *
 * Keys, under the configured prefix:
 *   debuginfo/<build-id>		an uploaded or fetched debug file
 *   executable/<build-id>		an executable or shared object
 *   kallsyms/<build-id>		a kallsyms snapshot of a kernel or
 *					module (sym upload --kallsyms)
 *   tables/<build-id>/c<N>		the table converter N built, as
 *					sym_store_export() writes it
 *
 * A table's key names the converter, so nodes of different versions
 * share a bucket without reading each other's tables.  Nothing here
 * knows DWARF or LMDB: table bytes go through sym_store_export() and
 * sym_store_import(), files through sym_store_take_file() and
 * sym_store_file_path().  Downloads go to "STORE/objstore-XXXXXX" first
 * (the store's file system: a rename takes them in) and are gone when a
 * call returns.
 */
#include <errno.h>
#include <stdatomic.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym.h"
#include "s3.h"
#include "symd.h"
#include "base.h"

/* A table larger than this is not downloaded (libsym's tables are
 * bounded by their u32 size field anyway). */
#define TABLE_MAX ((uint64_t)4 << 30)

int symd_objstore_key(char *buf, size_t len, const char *build_id,
		      enum symd_objstore_kind kind)
{
	int n;

	switch (kind) {
	case SYMD_OBJ_DEBUGINFO:
		n = snprintf(buf, len, "debuginfo/%s", build_id);
		break;
	case SYMD_OBJ_EXECUTABLE:
		n = snprintf(buf, len, "executable/%s", build_id);
		break;
	case SYMD_OBJ_KALLSYMS:
		n = snprintf(buf, len, "kallsyms/%s", build_id);
		break;
	case SYMD_OBJ_TABLE:
		n = snprintf(buf, len, "tables/%s/c%u", build_id,
			     sym_converter_version());
		break;
	default:
		return -EINVAL;
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int symd_objstore_file_kind(enum symd_objstore_kind kind)
{
	return kind == SYMD_OBJ_DEBUGINFO ? SYM_STORE_DEBUGINFO :
	       kind == SYMD_OBJ_EXECUTABLE ? SYM_STORE_EXECUTABLE :
	       kind == SYMD_OBJ_KALLSYMS ? SYM_STORE_KALLSYMS : 0;
}

enum symd_objstore_kind symd_objstore_obj_kind(int file_kind)
{
	return file_kind == SYM_STORE_EXECUTABLE ? SYMD_OBJ_EXECUTABLE :
	       file_kind == SYM_STORE_KALLSYMS ? SYMD_OBJ_KALLSYMS :
					       SYMD_OBJ_DEBUGINFO;
}

/* A temporary file in the store directory: its descriptor, the path in
 * @path.  -errno. */
static int temp_file(const char *store_dir, char *path, size_t len)
{
	int fd;

	if (snprintf(path, len, "%s/objstore-XXXXXX", store_dir) >= (int)len)
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The whole of @fd in an 8-byte aligned buffer of its size. */
static int slurp(int fd, void **out, size_t *len)
{
	struct stat sb;
	void *buf;
	size_t got = 0;

	if (fstat(fd, &sb) != 0)
		return -errno;
	buf = aligned_alloc(8, ((size_t)sb.st_size + 8) & ~(size_t)7);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)sb.st_size) {
		ssize_t r = pread(fd, (char *)buf + got,
				  (size_t)sb.st_size - got, (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(buf);
			return r < 0 ? -errno : -EIO;
		}
		got += (size_t)r;
	}
	*out = buf;
	*len = got;
	return 0;
}

/* Download the object @kind of @build_id into a new temporary file,
 * at most @max bytes (0: no bound): its descriptor (the caller closes
 * it, and unlinks @path), or -errno, -SYMD_S3_* (nothing left behind). */
static int download(struct symd_s3 *s3, const char *store_dir,
		    const char *build_id, enum symd_objstore_kind kind,
		    uint64_t max, char *key, size_t keylen, char *path,
		    size_t pathlen, struct symd_s3_result *r)
{
	int fd, err;

	memset(r, 0, sizeof(*r));
	err = symd_objstore_key(key, keylen, build_id, kind);
	if (err)
		return err;
	fd = temp_file(store_dir, path, pathlen);
	if (fd < 0)
		return fd;
	err = symd_s3_get(s3, key, fd, max, r);
	symd_metrics_objstore(kind, false, err, r->size);
	if (err) {
		close(fd);
		unlink(path);
		return err;
	}
	return fd;
}

int symd_objstore_get_table(struct symd_s3 *s3, struct sym_store *st,
			    const char *store_dir, const char *build_id,
			    const char *want_gen, struct symd_s3_result *r)
{
	char key[256], path[4200], src[600], gen[SYMD_OBJ_GEN_MAX];
	void *buf = NULL;
	size_t len = 0;
	int fd, err;

	fd = download(s3, store_dir, build_id, SYMD_OBJ_TABLE, TABLE_MAX, key,
		      sizeof(key), path, sizeof(path), r);
	if (fd < 0)
		return fd;
	symd_s3_meta_get(r, "sym-gen", gen, sizeof(gen));
	if (want_gen && strcmp(gen, want_gen) != 0) {
		/* Built from files the bucket no longer holds. */
		close(fd);
		unlink(path);
		return -SYM_E_STALE;
	}
	err = slurp(fd, &buf, &len);
	close(fd);
	unlink(path);
	if (!err) {
		snprintf(src, sizeof(src), "s3:%s", key);
		err = sym_store_import(st, build_id, buf, len, src);
		free(buf);
		if (err == -SYM_E_BADTABLE)
			symd_metrics_objstore_corrupt();
	}
	return err;
}

int symd_objstore_get_file(struct symd_s3 *s3, struct sym_store *st,
			   const char *store_dir, const char *build_id,
			   enum symd_objstore_kind kind,
			   struct symd_s3_result *r)
{
	char key[256], path[4200];
	int fd, err;

	fd = download(s3, store_dir, build_id, kind, 0, key, sizeof(key),
		      path, sizeof(path), r);
	if (fd < 0)
		return fd;
	close(fd);
	err = sym_store_take_file(st, build_id, symd_objstore_file_kind(kind),
				  path);
	if (err)
		unlink(path);
	return err;
}

int symd_objstore_put_file(struct symd_s3 *s3, const char *build_id,
			   enum symd_objstore_kind kind, const char *path,
			   const char *meta, struct symd_s3_result *r)
{
	char key[256];
	int fd, err;

	memset(r, 0, sizeof(*r));
	err = symd_objstore_key(key, sizeof(key), build_id, kind);
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = symd_s3_put_meta(s3, key, fd, meta, r);
	symd_metrics_objstore(kind, true, err, r->size);
	close(fd);
	return err;
}

int symd_objstore_put_table(struct symd_s3 *s3, struct sym_store *st,
			    const char *store_dir, const char *build_id,
			    const char *gen, struct symd_s3_result *r)
{
	char key[256], path[4200], meta[SYMD_OBJ_GEN_MAX + 16];
	uint64_t size;
	int fd, err;

	memset(r, 0, sizeof(*r));
	err = symd_objstore_key(key, sizeof(key), build_id, SYMD_OBJ_TABLE);
	if (err)
		return err;
	fd = temp_file(store_dir, path, sizeof(path));
	if (fd < 0)
		return fd;
	err = sym_store_export(st, build_id, fd, &size);
	snprintf(meta, sizeof(meta), "sym-gen=%s\n", gen ? gen : "");
	if (!err) {
		err = symd_s3_put_meta(s3, key, fd, gen && gen[0] ? meta : NULL,
				       r);
		symd_metrics_objstore(SYMD_OBJ_TABLE, true, err, r->size);
	}
	close(fd);
	unlink(path);
	return err;
}

int symd_objstore_remove(struct symd_s3 *s3, const char *build_id,
			 struct symd_s3_result *r)
{
	static const enum symd_objstore_kind kinds[] = {
		SYMD_OBJ_DEBUGINFO, SYMD_OBJ_EXECUTABLE, SYMD_OBJ_TABLE,
		SYMD_OBJ_KALLSYMS,
	};
	char key[256];
	int found = 0, err = 0;

	for (size_t i = 0; i < 4 && !err; i++) {
		err = symd_objstore_key(key, sizeof(key), build_id, kinds[i]);
		if (!err)
			err = symd_s3_head(s3, key, r);
		if (err == -SYMD_S3_NOTFOUND) {
			err = 0;
			continue;
		}
		if (!err)
			err = symd_s3_delete(s3, key, r);
		found += !err;
	}
	return err ? err : found;
}

void symd_objstore_new_gen(char *out, size_t len)
{
	static _Atomic unsigned seq;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	/* Unique across nodes in practice: the time in microseconds, the
	 * process and a counter.  Compared for equality only, so clocks
	 * that disagree do no harm. */
	snprintf(out, len, "%llx-%x-%x",
		 (unsigned long long)ts.tv_sec * 1000000 +
		 (unsigned long long)ts.tv_nsec / 1000,
		 (unsigned)getpid(), atomic_fetch_add(&seq, 1) & 0xffff);
}

/* The metadata of one file object into @f (absent: 404). */
static int head_one(struct symd_s3 *s3, const char *build_id,
		    enum symd_objstore_kind kind, struct symd_objstore_file *f,
		    struct symd_s3_result *r)
{
	char key[256], q[32];
	int err = symd_objstore_key(key, sizeof(key), build_id, kind);

	memset(f, 0, sizeof(*f));
	f->quality = -1;
	if (!err)
		err = symd_s3_head(s3, key, r);
	if (err == -SYMD_S3_NOTFOUND)
		return 0;
	if (err)
		return err;
	f->present = true;
	f->size = r->size;
	symd_s3_meta_get(r, "sym-gen", f->gen, sizeof(f->gen));
	symd_s3_meta_get(r, "sym-uploader", f->uploader, sizeof(f->uploader));
	symd_s3_meta_get(r, "sym-uploaded", f->uploaded, sizeof(f->uploaded));
	symd_s3_meta_get(r, "sym-forwarded-for", f->forwarded_for,
			 sizeof(f->forwarded_for));
	if (symd_s3_meta_get(r, "sym-quality", q, sizeof(q)) == 0)
		for (int i = SYM_QUALITY_NONE; i <= SYM_QUALITY_DWARF; i++)
			if (sym_quality_name(i) &&
			    strcmp(q, sym_quality_name(i)) == 0)
				f->quality = i;
	return 0;
}

void symd_objstore_build_gen(char *out, size_t len, const char *dbg_gen,
			     const char *exe_gen)
{
	snprintf(out, len, "d%s.e%s", dbg_gen ? dbg_gen : "",
		 exe_gen ? exe_gen : "");
}

int symd_objstore_head_files(struct symd_s3 *s3, const char *build_id,
			     struct symd_objstore_files *fs,
			     struct symd_s3_result *r)
{
	int err = head_one(s3, build_id, SYMD_OBJ_DEBUGINFO, &fs->dbg, r);

	if (!err)
		err = head_one(s3, build_id, SYMD_OBJ_EXECUTABLE, &fs->exe, r);
	if (err)
		return err;
	fs->quality = fs->dbg.quality > fs->exe.quality ? fs->dbg.quality :
		      fs->exe.quality;
	symd_objstore_build_gen(fs->gen, sizeof(fs->gen),
				fs->dbg.present ? fs->dbg.gen : NULL,
				fs->exe.present ? fs->exe.gen : NULL);
	return 0;
}
