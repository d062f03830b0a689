/*
 * sources.c - the source files a debug file's line tables name, and the
 * store's copies of them (debuginfod's /buildid/<id>/source/<path>).
 *
 * A path is kept in one spelling, debuginfod's: absolute, with "." and
 * empty components dropped and ".." taken lexically
 * (sym_path_normalize()), so "/b/./libio/../libio/x.c" is "/b/libio/x.c".
 * A path the line tables name that stays relative (no absolute
 * DW_AT_comp_dir) is left out: no debuginfod client can ask for it.
 *
 * The store keeps them in the build ID's file area (files.c):
 *
 *   DIR/files/<id>/sources.list   the paths its line tables name, sorted,
 *                                 one a line (written once, from the
 *                                 debug file, by the first put)
 *   DIR/files/<id>/src/<hash>     one source: its path and a newline,
 *                                 then its bytes
 *
 * <hash> is 16 hex digits of the path's 64-bit FNV-1a; the path inside
 * the file is compared on every read, so two paths of one hash (about
 * 1e-13 for a thousand files) never serve each other's bytes: the later
 * put wins and the other is not found.  A flat directory, not a tree of
 * the path's components, so that a path can never name a place outside
 * it and a remove is one readdir().
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "internal.h"
#include "base.h"

/* A component longer than NAME_MAX names no file on Linux. */
#define COMPONENT_MAX 255

int sym_path_normalize(const char *in, char *out, size_t len)
{
	size_t o = 0;
	const char *p;

	if (!in || !out || !len)
		return -EINVAL;
	if (in[0] != '/')
		return -EINVAL;
	for (p = in; *p;) {
		const char *c;
		size_t n;

		while (*p == '/')
			p++;
		c = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - c);
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		if (n > COMPONENT_MAX)
			return -EINVAL;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;	/* the '/' before it */
			continue;
		}
		if (o + 1 + n + 1 > len)
			return -ERANGE;
		out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
	}
	if (o == 0) {
		if (len < 2)
			return -ERANGE;
		out[o++] = '/';
	}
	out[o] = '\0';
	return 0;
}

/* ------------------------------------------------- sources of a file */

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *s, const char *dir, const char *name)
{
	char joined[PATH_MAX], norm[PATH_MAX];
	char *copy;

	if (name[0] == '/') {
		if (snprintf(joined, sizeof(joined), "%s", name) >=
		    (int)sizeof(joined))
			return 0;
	} else if (!dir || dir[0] != '/' ||
		   snprintf(joined, sizeof(joined), "%s/%s", dir, name) >=
			   (int)sizeof(joined)) {
		return 0;	/* relative: nobody can ask for it */
	}
	if (sym_path_normalize(joined, norm, sizeof(norm)) != 0)
		return 0;
	/* Consecutive CUs name the same headers: skip the last one again. */
	if (s->n && strcmp(s->v[s->n - 1], norm) == 0)
		return 0;
	if (symi_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -ENOMEM;
	copy = symi_strdup(norm);
	if (!copy)
		return -ENOMEM;
	s->v[s->n++] = copy;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file of every CU's line table into @s, sorted, each once. */
static int collect(Dwarf *dw, struct names *s)
{
	Dwarf_CU *cu = NULL, *next;
	size_t u = 0;
	int rc, err = 0;

	while (!err && (rc = dwarf_get_units(dw, cu, &next, NULL, NULL, NULL,
					     NULL)) == 0) {
		Dwarf_Die cudie;
		Dwarf_Attribute at;
		Dwarf_Files *files;
		const char *comp_dir;
		size_t nf;

		cu = next;
		if (dwarf_cu_die(cu, &cudie, NULL, NULL, NULL, NULL, NULL,
				 NULL) == NULL ||
		    dwarf_getsrcfiles(&cudie, &files, &nf) != 0)
			continue;	/* no line table: nothing named */
		comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir,
						       &at));
		/* DWARF 5's file 0 is the CU's primary file, named again. */
		for (size_t i = 0; !err && i < nf; i++) {
			const char *name = dwarf_filesrc(files, i, NULL, NULL);

			if (name && strcmp(name, "???") != 0)
				err = names_add(s, comp_dir, name);
		}
		u++;
	}
	if (!err && rc < 0) {
		symi_warn("dwarf: cannot walk the units (%zu read): %s", u,
			  dwarf_errmsg(-1));
		err = -SYM_E_BADDWARF;
	}
	if (!err && s->n) {
		size_t w = 1;

		qsort(s->v, s->n, sizeof(*s->v), cmp_str);
		for (size_t i = 1; i < s->n; i++) {
			if (strcmp(s->v[i], s->v[w - 1]) == 0)
				free(s->v[i]);
			else
				s->v[w++] = s->v[i];
		}
		s->n = w;
	}
	return err;
}

static void names_release(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* The sorted names of @path's line tables into @s. */
static int file_names(const char *path, struct names *s)
{
	struct symi_elf e;
	Dwarf *dw = NULL;
	int err;

	memset(s, 0, sizeof(*s));
	err = symi_elf_open(path, &e);
	if (err)
		return err;
	if (!symi_elf_has_dwarf(&e)) {
		err = -SYM_E_NOTFOUND;
		goto out;
	}
	err = symi_elf_prepare_dwarf(&e);
	if (err)
		goto out;
	dw = dwarf_begin_elf(e.elf, DWARF_C_READ, NULL);
	if (!dw) {
		symi_warn("dwarf: cannot read DWARF of '%s': %s", path,
			  dwarf_errmsg(-1));
		err = -SYM_E_BADDWARF;
		goto out;
	}
	err = collect(dw, s);
	dwarf_end(dw);
out:
	symi_elf_close(&e);
	if (err)
		names_release(s);
	return err;
}

int sym_file_sources(const char *path, sym_source_fn fn, void *ctx)
{
	struct names s;
	int err;

	if (!path || !fn)
		return -EINVAL;
	err = file_names(path, &s);
	for (size_t i = 0; !err && i < s.n; i++)
		err = fn(ctx, s.v[i]);
	names_release(&s);
	return err;
}

/* ------------------------------------------------ the store's copies */

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

static bool valid_id(const char *id)
{
	uint8_t raw[64];
	size_t n;

	return id && symi_build_id_parse(id, raw, &n) == 0;
}

/* DIR/files/<id>/<name>, or -ENAMETOOLONG. */
static int id_path(struct sym_store *st, const char *id, const char *name,
		   char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/files/%s/%s", symi_store_dir(st), id,
			 name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Where @src of @id is kept (DIR/files/<id>/src/<hash>). */
static int src_path(struct sym_store *st, const char *id, const char *src,
		    char *buf, size_t len)
{
	char name[32];

	snprintf(name, sizeof(name), "src/%016llx",
		 (unsigned long long)fnv1a(src));
	return id_path(st, id, name, buf, len);
}

/*
 * The debug file whose line tables decide for @id: the stored debug file,
 * else the stored executable's own DWARF or the debug file libsym's search
 * finds for it (the one sym_store_convert() built the table from).
 */
static int decider(struct sym_store *st, const char *id,
		   char *buf, size_t len)
{
	struct sym_module *mod = NULL;
	const char *dbg;
	int err;

	err = sym_store_file_path(st, id, SYM_STORE_DEBUGINFO, buf, len);
	if (err != -SYM_E_NOTFOUND)
		return err;
	err = sym_store_file_path(st, id, SYM_STORE_EXECUTABLE, buf, len);
	if (err)
		return err;
	err = sym_module_open(buf, NULL, &mod);
	if (err)
		return err;
	dbg = sym_module_debug_file(mod);
	if (!dbg)
		err = -SYM_E_NOTFOUND;
	else if (strlen(dbg) >= len)
		err = -ERANGE;
	else
		memmove(buf, dbg, strlen(dbg) + 1);
	sym_module_close(mod);
	return err;
}

/* Write @s as DIR/files/<id>/sources.list (temporary name, rename). */
static int write_list(const char *list, const struct names *s)
{
	char tmp[PATH_MAX + 32];
	FILE *f;
	int err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", list, (long)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (size_t i = 0; i < s->n; i++)
		if (fprintf(f, "%s\n", s->v[i]) < 0)
			err = -EIO;
	if (fclose(f) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, list) != 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* Is @src a line of the sorted list file @list?  0, -SYM_E_NOTFOUND. */
static int list_has(const char *list, const char *src)
{
	char line[PATH_MAX + 2];
	FILE *f = fopen(list, "re");
	int err = -SYM_E_NOTFOUND;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, src) == 0) {
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

/* Is @src named by @id's line tables?  The list is made on first use. */
static int named(struct sym_store *st, const char *id, const char *src)
{
	char list[PATH_MAX], dbg[PATH_MAX];
	struct names s;
	int err;

	err = id_path(st, id, "sources.list", list, sizeof(list));
	if (err)
		return err;
	err = list_has(list, src);
	if (err != -ENOENT)
		return err;
	err = decider(st, id, dbg, sizeof(dbg));
	if (err)
		return err == -SYM_E_NOTFOUND ? -ENODATA : err;
	err = file_names(dbg, &s);
	if (err)
		return err == -SYM_E_NOTFOUND ? -ENODATA : err;
	err = write_list(list, &s);
	if (!err)
		err = bsearch(&src, s.v, s.n, sizeof(*s.v), cmp_str) ? 0 :
		      -SYM_E_NOTFOUND;
	names_release(&s);
	return err;
}

/* Bytes of the sources kept for @id, @skip (a name in src/) not counted. */
static uint64_t kept_bytes(const char *dir, const char *skip)
{
	struct dirent *de;
	uint64_t sum = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat sb;

		if (de->d_name[0] == '.' || strcmp(de->d_name, skip) == 0 ||
		    fstatat(dirfd(d), de->d_name, &sb, 0) != 0)
			continue;
		sum += (uint64_t)sb.st_size;
	}
	closedir(d);
	return sum;
}

/* Copy @in into the new file @dest (temporary name, fsync, rename),
 * after a line with @src. */
static int write_source(const char *dest, const char *src, int in)
{
	char tmp[PATH_MAX + 32], buf[1 << 16];
	int out, err = 0;
	ssize_t got;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", dest, (long)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	if (dprintf(out, "%s\n", src) < 0)
		err = -EIO;
	while (!err && (got = read(in, buf, sizeof(buf))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 || write(out, buf, (size_t)got) != got)
			err = errno ? -errno : -EIO;
	}
	if (!err && fsync(out) != 0)
		err = -errno;
	if (close(out) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, dest) != 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int sym_store_put_source(struct sym_store *st, const char *build_id,
			 const char *src, const char *path,
			 uint64_t max_bytes)
{
	char norm[PATH_MAX], dir[PATH_MAX], dest[PATH_MAX];
	struct stat sb;
	int in = -1, err;

	if (!st || !path || !src || !valid_id(build_id))
		return -EINVAL;
	if (symi_store_rdonly(st))
		return -EROFS;
	err = sym_path_normalize(src, norm, sizeof(norm));
	if (err)
		return err == -ERANGE ? -ENAMETOOLONG : err;
	if (strcmp(norm, src) != 0)
		return -EINVAL;
	err = named(st, build_id, src);
	if (err)
		return err;
	in = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in < 0)
		return -errno;
	if (fstat(in, &sb) != 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		err = S_ISDIR(sb.st_mode) ? -EISDIR : -SYM_E_NOTREG;
		goto out;
	}
	err = id_path(st, build_id, "src", dir, sizeof(dir));
	if (!err)
		err = src_path(st, build_id, src, dest, sizeof(dest));
	if (err)
		goto out;
	if (max_bytes &&
	    kept_bytes(dir, strrchr(dest, '/') + 1) + (uint64_t)sb.st_size +
		    strlen(src) + 1 > max_bytes) {
		err = -EFBIG;
		goto out;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		err = -errno;
		goto out;
	}
	err = write_source(dest, src, in);
out:
	close(in);
	return err;
}

int sym_store_source_path(struct sym_store *st, const char *build_id,
			  const char *src, char *buf, size_t len,
			  uint64_t *off)
{
	char line[PATH_MAX + 2];
	FILE *f;
	int err;

	if (!st || !src || !buf || !off || !valid_id(build_id))
		return -EINVAL;
	*off = 0;
	err = src_path(st, build_id, src, buf, len);
	if (err)
		return -ERANGE;
	f = fopen(buf, "re");
	if (!f)
		return errno == ENOENT ? -SYM_E_NOTFOUND : -errno;
	err = -SYM_E_NOTFOUND;
	if (fgets(line, sizeof(line), f) && strchr(line, '\n')) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, src) == 0) {
			*off = strlen(line) + 1;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

void symi_sources_remove(struct sym_store *st, const char *build_id)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (id_path(st, build_id, "sources.list", dir, sizeof(dir)) == 0)
		unlink(dir);
	if (id_path(st, build_id, "src", dir, sizeof(dir)) != 0)
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(dir);
}

uint64_t symi_sources_bytes(struct sym_store *st, const char *build_id)
{
	char dir[PATH_MAX];

	if (id_path(st, build_id, "src", dir, sizeof(dir)) != 0)
		return 0;
	return kept_bytes(dir, "");
}
