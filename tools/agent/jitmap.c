/*
 * jitmap.c - a process's JIT code for the recorder (jitmap.h): its
 * jitdump, else its perf map.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/jitmap.h"
#include "grow.h"
#include "jitdump.h"
#include "sym_prof.h"
#include "base.h"

/* Keep an entry; past the cap, stop. */
static int keep(struct jitmap *jm, size_t *cap,
		const struct symi_perfmap_ent *e)
{
	if (jm->nents == SYMI_PERFMAP_MAX_ENTRIES) {
		jm->cut = true;
		return 1;
	}
	if (tool_grow(&jm->ents, cap, jm->nents + 1, sizeof(*jm->ents), 256))
		return -ENOMEM;
	jm->ents[jm->nents++] = *e;
	return 0;
}

static void note_bad(struct jitmap *jm, uint32_t line, const char *why)
{
	if (!jm->nbad++)
		snprintf(jm->first_bad, sizeof(jm->first_bad), "%s %u: %s",
			 jm->dump_pid ? "record at byte" : "line", line, why);
}

/* Resolve the overlaps into segments. */
static int flatten(struct jitmap *jm)
{
	struct symi_perfmap_pt *pts;
	uint32_t *heap;
	int err = -ENOMEM;

	if (!jm->nents)
		return 0;
	pts = calloc(2 * jm->nents, sizeof(*pts));
	heap = calloc(jm->nents, sizeof(*heap));
	jm->segs = calloc(2 * jm->nents, sizeof(*jm->segs));
	if (pts && heap && jm->segs) {
		jm->nsegs = symi_perfmap_flatten(jm->ents, jm->nents, pts,
						 heap, jm->segs);
		err = 0;
	}
	free(pts);
	free(heap);
	return err;
}

int jitmap_parse(struct jitmap *jm, char *text, size_t len)
{
	struct symi_perfmap_ent e;
	size_t off = 0, cap = 0;
	uint32_t line = 0;
	const char *why;
	int rc;

	jm->text = text;
	jm->len = len;
	while ((rc = symi_perfmap_next(text, len, &off, &line, &e, &why))) {
		if (rc < 0) {
			note_bad(jm, line, why);
			continue;
		}
		rc = keep(jm, &cap, &e);
		if (rc < 0)
			return rc;
		if (rc > 0)
			break;
	}
	return flatten(jm);
}

/* ---- jitdumps ---- */

/* A load of the dump, by code_index, for naming moves. */
struct load_key {
	uint64_t index;
	uint32_t ent;		/* its entry: file order */
};

static int cmp_load(const void *a, const void *b)
{
	const struct load_key *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return (x->ent > y->ent) - (x->ent < y->ent);
}

/* The entry of the latest load of @index before entry @before, or -1. */
static long latest_load(const struct load_key *k, size_t n, uint64_t index,
			uint32_t before)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {	/* the first key past (index, before) */
		size_t mid = lo + (hi - lo) / 2;

		if (k[mid].index < index ||
		    (k[mid].index == index && k[mid].ent < before))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || k[lo - 1].index != index)
		return -1;
	return (long)k[lo - 1].ent;
}

/* Name each move (an entry with no name yet; its code_index in @idx)
 * after its load, and drop the moves of code never loaded. */
static int name_moves(struct jitmap *jm, const uint64_t *idx)
{
	struct load_key *k = NULL;
	size_t nk = 0, out = 0;

	k = calloc(jm->nents ? jm->nents : 1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < jm->nents; i++)
		if (jm->ents[i].name)
			k[nk++] = (struct load_key){ idx[i], (uint32_t)i };
	qsort(k, nk, sizeof(*k), cmp_load);
	for (size_t i = 0; i < jm->nents; i++) {
		struct symi_perfmap_ent e = jm->ents[i];
		long l;

		if (!e.name) {
			l = latest_load(k, nk, idx[i], (uint32_t)i);
			if (l < 0) {
				note_bad(jm, e.line, "move of code never loaded");
				continue;
			}
			e.name = jm->ents[l].name;
			e.namelen = jm->ents[l].namelen;
		}
		jm->ents[out++] = e;
	}
	jm->nents = out;
	free(k);
	return 0;
}

/* Keep record @r as an entry (its line: its offset), its code_index in
 * *idx. */
static int keep_rec(struct jitmap *jm, size_t *cap, uint64_t **idx,
		    size_t *capidx, const struct symi_jitdump_rec *r)
{
	struct symi_perfmap_ent e = {
		.start = r->addr, .size = r->size, .line = (uint32_t)r->off,
		.name = r->id == SYMI_JITDUMP_LOAD ? r->name : NULL,
		.namelen = r->id == SYMI_JITDUMP_LOAD ? r->namelen : 0,
	};
	int rc;

	if (tool_grow(idx, capidx, jm->nents + 1, sizeof(**idx), 256))
		return -ENOMEM;
	(*idx)[jm->nents] = r->code_index;
	rc = keep(jm, cap, &e);
	return rc;
}

int jitmap_parse_dump(struct jitmap *jm, char *text, size_t len)
{
	struct symi_jitdump_hdr h;
	struct symi_jitdump_rec r;
	size_t off = 0, cap = 0, capidx = 0;
	uint64_t *idx = NULL;
	const char *why;
	int rc;

	jm->text = text;
	jm->len = len;
	if (symi_jitdump_header(text, len, &h, &off, &why)) {
		snprintf(jm->first_bad, sizeof(jm->first_bad), "%s", why);
		return -EINVAL;
	}
	jm->dump_pid = h.pid ? h.pid : UINT32_MAX;
	while ((rc = symi_jitdump_next(text, len, &h, &off, &r, &why))) {
		if (rc < 0) {
			note_bad(jm, (uint32_t)r.off, why);
			continue;
		}
		rc = keep_rec(jm, &cap, &idx, &capidx, &r);
		if (rc < 0)
			goto out;
		if (rc > 0)
			break;
	}
	if (why)	/* the walk stopped early: what came before stays */
		note_bad(jm, (uint32_t)off, why);
	rc = name_moves(jm, idx);
	if (!rc)
		rc = flatten(jm);
out:
	free(idx);
	return rc;
}

/* Read @fd whole, up to JITMAP_BYTES_MAX. */
static int read_all(int fd, char **out, size_t *len, bool *cut)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	ssize_t r;

	for (;;) {
		if (n == JITMAP_BYTES_MAX) {
			*cut = true;
			break;
		}
		if (tool_grow(&buf, &cap, n + 65536 > JITMAP_BYTES_MAX ?
				  JITMAP_BYTES_MAX : n + 65536, 1, 65536)) {
			free(buf);
			return -ENOMEM;
		}
		r = read(fd, buf + n, (cap > JITMAP_BYTES_MAX ?
				       JITMAP_BYTES_MAX : cap) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			free(buf);
			return (int)r;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* Open @path (a regular file, no symlink, no blocking on a FIFO), note
 * its mtime and owner in @jm, and read it whole. */
static int read_file(struct jitmap *jm, const char *path, char **text,
		     size_t *len)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	jm->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL +
		       st.st_mtim.tv_nsec;
	jm->uid = (uint32_t)st.st_uid;
	err = read_all(fd, text, len, &jm->cut);
	close(fd);
	return err;
}

int jitmap_load(struct jitmap *jm, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int err = read_file(jm, path, &text, &len);

	if (err)
		return err;
	return jitmap_parse(jm, text, len);
}

int jitmap_load_dump(struct jitmap *jm, const char *path, int32_t pid)
{
	char *text = NULL;
	size_t len = 0;
	int err = read_file(jm, path, &text, &len);

	if (err)
		return err;
	err = jitmap_parse_dump(jm, text, len);
	if (!err && (int64_t)jm->dump_pid != (int64_t)pid) {
		snprintf(jm->first_bad, sizeof(jm->first_bad),
			 "written by process %u, not %d", jm->dump_pid,
			 (int)pid);
		err = -EINVAL;
	}
	return err;
}

enum jitmap_trust jitmap_check(const struct jitmap *jm, int64_t start_ns,
			       uint32_t uid, int64_t slack_ns)
{
	if (jm->uid != 0 && jm->uid != uid && start_ns)
		return JITMAP_FOREIGN;
	if (!start_ns)
		return JITMAP_UNCHECKED;
	if (jm->mtime_ns < start_ns - slack_ns)
		return JITMAP_STALE;
	return JITMAP_TRUSTED;
}

const char *jitmap_trust_name(enum jitmap_trust t)
{
	static const char *const names[] = { "trusted", "stale", "foreign",
					     "unchecked" };

	return (unsigned)t < 4 ? names[t] : "?";
}

const struct symi_perfmap_ent *jitmap_find(const struct jitmap *jm,
					   uint64_t pc)
{
	const struct symi_perfmap_seg *s =
		symi_perfmap_find(jm->segs, jm->nsegs, pc);

	return s ? &jm->ents[s->ent] : NULL;
}

void jitmap_release(struct jitmap *jm)
{
	if (!jm)
		return;
	free(jm->text);
	free(jm->ents);
	free(jm->segs);
	memset(jm, 0, sizeof(*jm));
}

/* ---- naming a profile's anonymous frames ---- */

static int cmp_pid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The PIDs of @p's anonymous maps, sorted and unique, in *out (free()). */
static int anon_pids(const struct sym_prof *p, int32_t **out, size_t *n)
{
	size_t nmaps = sym_prof_nmaps(p), cap = 0, k = 0;
	int32_t *v = NULL;

	for (uint32_t i = 0; i < nmaps; i++) {
		const struct sym_prof_map *m = sym_prof_map(p, i);

		if (m->kind != SYM_PROF_MAP_ANON || m->pid <= 0)
			continue;
		if (tool_grow(&v, &cap, k + 1, sizeof(*v), 8)) {
			free(v);
			return -ENOMEM;
		}
		v[k++] = m->pid;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_pid);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (!*n || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	*out = v;
	return 0;
}

/* Name frame @f of anonymous map @m from @jm, when an entry covers it. */
static int name_frame(struct sym_prof *p, const struct sym_prof_map *m,
		      const struct jitmap *jm, const struct sym_prof_frame *f,
		      struct jitmap_report *rep)
{
	char name[SYMI_PERFMAP_LINE_MAX + 1];
	uint64_t pc = f->addr - m->vaddr + m->start;
	const struct symi_perfmap_ent *e;
	struct sym_prof_line l = { .flags = SYM_PROF_LINE_SYMTAB };
	uint32_t st;

	if (sym_prof_location(p, f, &st, NULL, NULL) == 0)
		return 0;	/* seen in an earlier stack */
	rep->frames++;
	if (f->flags & SYM_PROF_FRAME_RETURN)
		pc--;
	e = jitmap_find(jm, pc);
	if (!e)	/* what sym symbolize says of an anonymous frame */
		return sym_prof_set_location(p, f, SYM_PROF_LOC_UNMAPPED,
					     NULL, 0);
	snprintf(name, sizeof(name), "%.*s", (int)e->namelen, e->name);
	l.function = name;
	rep->named++;
	return sym_prof_set_location(p, f, SYM_PROF_LOC_OK, &l, 1);
}

/* Name the frames of @pid's anonymous maps in every stack. */
static int name_frames(struct sym_prof *p, int32_t pid,
		       const struct jitmap *jm, struct jitmap_report *rep)
{
	size_t n = sym_prof_nstacks(p);
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);

		for (uint32_t k = 0; k < s->nframes; k++) {
			const struct sym_prof_frame *f = &s->frames[k];
			const struct sym_prof_map *m;

			if (f->map == SYM_PROF_NOMAP)
				continue;
			m = sym_prof_map(p, f->map);
			if (m->kind != SYM_PROF_MAP_ANON || m->pid != pid)
				continue;
			err = name_frame(p, m, jm, f, rep);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Flag @pid's anonymous maps with @flag. */
static void flag_maps(struct sym_prof *p, int32_t pid, uint32_t flag)
{
	size_t nmaps = sym_prof_nmaps(p);

	for (uint32_t i = 0; i < nmaps; i++) {
		const struct sym_prof_map *m = sym_prof_map(p, i);

		if (m->kind == SYM_PROF_MAP_ANON && m->pid == pid)
			sym_prof_set_map_flags(p, i, m->flags | flag);
	}
}

/* Load @pid's jitdump when it has one, else its perf map, into @jm;
 * what went wrong goes to @rep. */
static void load_for(struct jitmap *jm, const char *dir, jitmap_dump_fn dump,
		     void *ctx, int32_t pid, struct jitmap_report *rep)
{
	const char *path = NULL;
	int32_t dpid = 0;

	if (dump)
		path = dump(ctx, pid, &dpid);
	if (path) {
		rep->dump = true;
		snprintf(rep->path, sizeof(rep->path), "%s", path);
		rep->err = jitmap_load_dump(jm, rep->path, dpid);
		if (rep->err == 0 || rep->err == -ENOMEM)
			return;
		/* said by the caller's report; then the perf map */
		rep->dump_err = rep->err;
		memcpy(rep->dump_bad, jm->first_bad, sizeof(rep->dump_bad));
		snprintf(rep->dump_path, sizeof(rep->dump_path), "%s", path);
		jitmap_release(jm);
		rep->dump = false;
	}
	snprintf(rep->path, sizeof(rep->path), "%s/perf-%d.map", dir,
		 (int)pid);
	rep->err = jitmap_load(jm, rep->path);
}

/* Load, check and use @pid's jitdump or perf map. */
static int name_process(struct sym_prof *p, const char *dir,
			jitmap_start_fn start, jitmap_dump_fn dump, void *ctx,
			int32_t pid, struct jitmap_report *rep)
{
	struct jitmap jm = { 0 };
	uint32_t uid = 0;
	int err = 0;

	memset(rep, 0, sizeof(*rep));
	rep->pid = pid;
	load_for(&jm, dir, dump, ctx, pid, rep);
	if (rep->err == -ENOMEM)
		err = -ENOMEM;
	if (rep->err)
		goto out;
	if (!start || start(ctx, pid, &rep->start_ns, &uid))
		rep->start_ns = 0;
	rep->trust = jitmap_check(&jm, rep->start_ns, uid, JITMAP_SLACK_NS);
	rep->mtime_ns = jm.mtime_ns;
	rep->nents = jm.nents;
	rep->nbad = jm.nbad;
	rep->cut = jm.cut;
	memcpy(rep->first_bad, jm.first_bad, sizeof(rep->first_bad));
	if (rep->trust == JITMAP_STALE || rep->trust == JITMAP_FOREIGN) {
		flag_maps(p, pid, SYM_PROF_MAP_PERFMAP_STALE);
		goto out;
	}
	err = name_frames(p, pid, &jm, rep);
	if (!err)
		flag_maps(p, pid, SYM_PROF_MAP_PERFMAP);
out:
	jitmap_release(&jm);
	return err;
}

int jitmap_name_profile(struct sym_prof *p, const char *dir,
			jitmap_start_fn start, jitmap_dump_fn dump,
			jitmap_report_fn fn, void *ctx)
{
	struct jitmap_report rep;
	int32_t *pids = NULL;
	size_t n = 0;
	int err = anon_pids(p, &pids, &n);

	for (size_t i = 0; !err && i < n; i++) {
		err = name_process(p, dir, start, dump, ctx, pids[i], &rep);
		if (!err && fn)
			fn(ctx, &rep);
	}
	free(pids);
	return err;
}
