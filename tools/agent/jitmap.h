/*
 * jitmap.h - the JIT code of one process, loaded for the recorder
 * (docs/record.md, "JIT frames"): its jitdump (jit-PID.dump, which the
 * runtime mapped, so the recorder saw its path; libsym/jitdump.c) when it
 * has one, else its perf map, /tmp/perf-PID.map (libsym/perfmap.c).  The
 * file is read whole (at most JITMAP_BYTES_MAX), at most
 * SYMI_PERFMAP_MAX_ENTRIES entries are kept, in file order, the overlaps
 * are resolved (the latest entry wins), and whether the file can be
 * trusted for that process is checked.
 *
 * No printing: what went wrong comes back as counts and the first bad
 * line's message, for the caller to say.
 */
#ifndef AGENT_JITMAP_H
#define AGENT_JITMAP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfmap.h"

struct sym_prof;

/* Most bytes of a perf map read; the rest is left unread (cut). */
#define JITMAP_BYTES_MAX (256u << 20)

struct jitmap {
	char *text;			/* the file's bytes; free() */
	size_t len;
	struct symi_perfmap_ent *ents;	/* into text; free() */
	size_t nents;
	struct symi_perfmap_seg *segs;	/* free() */
	size_t nsegs;
	uint32_t nbad;		/* lines (records) skipped */
	char first_bad[128];	/* "line N: why" ("record at byte N: why")
				 * of the first, or "" */
	bool cut;		/* bytes or entries past the limits unread */
	int64_t mtime_ns;	/* the file's, when loaded from a file */
	uint32_t uid;		/* its owner */
	uint32_t dump_pid;	/* a jitdump's: the PID in its header */
};

/* What jitmap_check() thinks of a map for a process. */
enum jitmap_trust {
	JITMAP_TRUSTED = 0,
	/* last written before the process started: another process's,
	 * whose PID this one reuses */
	JITMAP_STALE,
	/* owned by neither root nor the process's owner (perf refuses
	 * such a file too) */
	JITMAP_FOREIGN,
	/* the process's start is unknown (it was gone before it could be
	 * read): nothing can be checked */
	JITMAP_UNCHECKED,
};

/**
 * jitmap_parse() - parse perf map bytes.
 * @param jm    zeroed by the caller
 * @param text  takes ownership (free()d by jitmap_release()), even on
 *              failure
 * @return 0 (bad lines are counted, not errors), -ENOMEM
 */
int jitmap_parse(struct jitmap *jm, char *text, size_t len);

/**
 * jitmap_load() - read and parse the file @path (its mtime and owner
 * kept for jitmap_check()).
 * @return 0, -ENOENT (no such file: the process published no map), other
 *         -errno of open/fstat/read, -ENOMEM
 */
int jitmap_load(struct jitmap *jm, const char *path);

/**
 * jitmap_parse_dump() - parse jitdump bytes (jitdump.h): each load is an
 * entry (its line the record's byte offset, as first_bad names a bad
 * record: "record at byte N: why"), and each move an entry at its
 * new address named after the latest load of its code_index before it
 * (a move of code never loaded is skipped, counted bad).  A walk that
 * stops early (a record cut short: the runtime was still writing)
 * keeps what came before it.
 * @param text  takes ownership, as jitmap_parse()
 * @return 0, -EINVAL (not a jitdump: the header says why in first_bad),
 *         -ENOMEM
 */
int jitmap_parse_dump(struct jitmap *jm, char *text, size_t len);

/**
 * jitmap_load_dump() - read and parse the jitdump @path, as
 * jitmap_load(); -EINVAL also when the header's PID is not @pid (the
 * N of jit-N.dump: the file is another process's).
 */
int jitmap_load_dump(struct jitmap *jm, const char *path, int32_t pid);

/**
 * jitmap_check() - may @jm name the code of a process that started at
 * @start_ns (wall clock; 0 when unknown) and is owned by @uid?
 * The map is stale when its mtime is earlier than the start by more
 * than @slack_ns (the start is exact to a clock tick only).
 */
enum jitmap_trust jitmap_check(const struct jitmap *jm, int64_t start_ns,
			       uint32_t uid, int64_t slack_ns);

/** jitmap_trust_name() - "trusted", "stale", "foreign", "unchecked". */
const char *jitmap_trust_name(enum jitmap_trust t);

/**
 * jitmap_find() - the entry whose code holds runtime address @pc, or
 * NULL.  Borrowed from @jm.
 */
const struct symi_perfmap_ent *jitmap_find(const struct jitmap *jm,
					   uint64_t pc);

/** jitmap_release() - free what @jm holds and zero it; NULL is a no-op. */
void jitmap_release(struct jitmap *jm);

/* What jitmap_name_profile() did for one process with anonymous maps. */
struct jitmap_report {
	int32_t pid;
	char path[PATH_MAX];	/* DIR/perf-PID.map, or the jitdump's */
	bool dump;		/* @path is a jitdump */
	/* A jitdump that could not be used (then the perf map was tried):
	 * its path, the error (-EINVAL: not a jitdump, or not the
	 * process's) and why. */
	int dump_err;
	char dump_path[PATH_MAX];
	char dump_bad[128];
	int err;		/* of jitmap_load(): -ENOENT for no map */
	enum jitmap_trust trust;
	int64_t mtime_ns, start_ns;	/* the map's, the process's (0) */
	size_t nents;		/* entries kept */
	uint32_t nbad;		/* lines skipped, first_bad the first */
	char first_bad[128];
	bool cut;
	uint64_t frames, named;	/* unique anonymous frames, named */
};

typedef void (*jitmap_report_fn)(void *ctx, const struct jitmap_report *r);
typedef int (*jitmap_start_fn)(void *ctx, int32_t pid, int64_t *start_ns,
			       uint32_t *uid);
/* The path of @pid's jitdump and the PID in its name (jit-N.dump: the
 * process's own, in its PID namespace), or NULL when it mapped none. */
typedef const char *(*jitmap_dump_fn)(void *ctx, int32_t pid,
				      int32_t *dump_pid);

/* How much earlier than a process's start (exact to a clock tick) its
 * perf map may have been last written and still be its own. */
#define JITMAP_SLACK_NS 20000000LL

/**
 * jitmap_name_profile() - name the frames of @p's anonymous maps from
 * their processes' jitdumps (@dump gives the path; NULL: none), else
 * their perf maps, @dir/perf-PID.map (perf's "/tmp"), read now (a
 * jitdump that cannot be read or is not the process's is reported, and
 * the perf map is tried): each frame a map covers gets an `ok` location with one line, the
 * entry's name, flagged SYM_PROF_LINE_SYMTAB (a return address is
 * looked up at its address - 1, as symbolizers do); the maps of a
 * process whose perf map was used are flagged SYM_PROF_MAP_PERFMAP, those
 * of one whose map was stale or foreign SYM_PROF_MAP_PERFMAP_STALE (and
 * nothing is named).  A map whose process start is unknown is used, and
 * reported as unchecked.
 * @param start  gives a process's start and owner (pm_process_start()'s
 *               contract; non-zero: unknown); NULL: all unknown
 * @param fn     called once per process with anonymous maps, in PID
 *               order; may be NULL
 * @param ctx    passed to both
 * @return 0, -ENOMEM
 */
int jitmap_name_profile(struct sym_prof *p, const char *dir,
			jitmap_start_fn start, jitmap_dump_fn dump,
			jitmap_report_fn fn, void *ctx);

#endif
