/*
 * internal.h - libsymprofile's private declarations, shared between its
 * files (libsym/prof/).
 *
 * Nothing here is installed or exported: the library exports exactly the
 * SYM_API functions of sym_prof.h (libsymprofile.map).  Cross-file
 * internals are named symi_prof_* (symi_* for the index and the string
 * helpers); everything else is static.  What it shares with libsym is
 * base.h, the allocation helpers (libsym/alloc.c, compiled into both);
 * it uses nothing else of libsym, and libsym nothing of it.
 *
 * Module map:
 *   prof.c         struct sym_prof: the profile in memory, stack
 *                  aggregation, the symbolized locations
 *   raw.c          the raw stack format (docs/raw-format.md): reader,
 *                  writer, and its symbolized form
 *   pprof.h        what the pprof reader and writer share (private)
 *   pprof-write.c  sym_prof_write_pprof(): the profile as gzipped
 *                  profile.proto (docs/pprof.md)
 *   pprof-read.c   sym_prof_read_pprof() and sym_prof_read_file()
 *   profile.proto  pprof's own (vendored); protoc-c makes it C in
 *                  build/gen/ at build time
 *   ../alloc.c     symi_malloc() and friends, symi_grow() (base.h)
 */
#ifndef SYM_PROF_INTERNAL_H
#define SYM_PROF_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym_prof.h"
#include "base.h"

/* A u64 -> u32 index: open addressing, at most half full.  Zeroed is
 * empty; symi_idx_release() zeroes it again. */
struct symi_idx {
	uint64_t *keys;		/* free() */
	uint32_t *vals;		/* free(); 0 empty, else value + 1 */
	size_t cap, n;
};

/* Set @key to @val (replacing); 0, -ENOMEM, -E2BIG (val UINT32_MAX). */
int symi_idx_set(struct symi_idx *ix, uint64_t key, uint32_t val);
bool symi_idx_get(const struct symi_idx *ix, uint64_t key, uint32_t *val);
void symi_idx_release(struct symi_idx *ix);

/* @s is 2 to 128 lowercase hex digits, an even count. */
bool symi_prof_build_id_ok(const char *s);

/*
 * Decode a string of the raw format (docs/raw-format.md) in place: "-"
 * is NULL, "%XX" a byte.  Used by raw.c and by pprof-read.c for the raw
 * lines it keeps in comments.
 * @param[out] out  @s or NULL; untouched on failure
 * @return 0, -EINVAL ('%' not followed by two hex digits), -ERANGE
 *         (%00, a NUL byte)
 */
int symi_pct_decode(char *s, char **out);

/* Processes and threads in the order they were first added, for the
 * writers; @i below the count.  The comm is borrowed, may be NULL. */
size_t symi_prof_nprocs(const struct sym_prof *p);
const char *symi_prof_proc_at(const struct sym_prof *p, size_t i,
			      int32_t *pid, uint64_t *pidns, int32_t *nspid);
size_t symi_prof_nthreads(const struct sym_prof *p);
const char *symi_prof_thread_at(const struct sym_prof *p, size_t i,
				int32_t *pid, int32_t *tid);

/* Replace the flags of map @id (enum sym_prof_map_flags); 0 or -EINVAL. */
int symi_prof_set_map_flags(struct sym_prof *p, uint32_t id, uint32_t flags);

/* The symbolization's string sets: function names and file names. */
enum { SYMI_PROF_FUNCS, SYMI_PROF_FILES, SYMI_PROF_NSETS };

/* Names of enum sym_prof_loc_status, as the raw format spells them. */
extern const char *const symi_prof_status_names[SYM_PROF_LOC_NSTATUS];

/* Names of the stack flags (bit i) and of enum sym_prof_map_kind, as the
 * raw format and the pprof comments spell them. */
#define SYMI_PROF_NKINDS 4
extern const char *const symi_prof_flag_names[SYM_PROF_NFLAGS];
extern const char *const symi_prof_kind_names[SYMI_PROF_NKINDS];
/* The bit of stack flag @name, or -1 when it has no name here. */
int symi_prof_flag_bit(const char *name);
/* The enum sym_prof_map_kind named @name, or -1. */
int symi_prof_kind(const char *name);

/* Intern @s (NULL or "" give NULL) into string set @set of @p; *out is
 * the profile's copy, which sym_prof_set_location() finds again without
 * copying.  0, -ENOMEM, -E2BIG (2^24 strings in the set). */
int symi_prof_intern(struct sym_prof *p, int set, const char *s,
		     const char **out);
/* Strings interned in @set (used by a location or not). */
size_t symi_prof_nstrs(const struct sym_prof *p, int set);
/* The index in its set (0 to symi_prof_nstrs() - 1) of a string of a
 * struct sym_prof_line that the profile handed out. */
uint32_t symi_prof_str_idx(const char *s);
/* Mark @p symbolized (a file said so), with or without locations. */
void symi_prof_set_symbolized(struct sym_prof *p);

#endif /* SYM_PROF_INTERNAL_H */
