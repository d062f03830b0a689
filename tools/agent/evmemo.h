/*
 * evmemo.h - the resolved frames of off-CPU events, kept by what they
 * were resolved from, so that an event whose stacks were resolved before
 * is not resolved again (`sym record --off-cpu`, tools/record.c
 * on_offcpu(); docs/record.md, "The event memo").
 *
 * An event's frames (map id and ELF address of each, and its flags) are
 * a function of its raw addresses (the kernel's return addresses and the
 * user PCs the unwinder gave, with their exact flags) and of state the
 * caller names in the key: the process's mappings (pm_gen()), the
 * profile window, the return-address checks' cache (retcheck_epoch()).
 * The caller builds the key, an array of words, from all of those; this
 * module only keeps and finds: a result is found only for a key equal to
 * the one stored, word for word, and only for a time at or after the one
 * the result was stored with (pm_find_from(): the mappings found hold
 * from then on).
 *
 * Memory is fixed: EVMEMO_SETS x EVMEMO_WAYS entries, least recently
 * used replaced within the set a key hashes to.  A key carries a tag
 * (the thread's id): the entry its tag found or stored last is compared
 * first, before the key is hashed, so a thread that blocks where it did
 * last pays one comparison.  Keys of more than
 * EVMEMO_KEY_MAX words or results of more than EVMEMO_FRAMES_MAX frames
 * are not kept.  At most about 1.3 MiB.
 *
 * Thread-safety: none; one thread owns a struct evmemo.
 */
#ifndef SYM_TOOLS_EVMEMO_H
#define SYM_TOOLS_EVMEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym_prof.h"

#define EVMEMO_SETS 64
#define EVMEMO_WAYS 4
/** Longest key kept, in words (an off-CPU event's: 5 words of state, 64
 *  kernel addresses, 127 user PCs and their 16 words of exact flags). */
#define EVMEMO_KEY_MAX 224
/** Most frames a result kept has. */
#define EVMEMO_FRAMES_MAX 192
/** Counters a result carries for the caller (what resolving it counted). */
#define EVMEMO_NAUX 2
/** Tags remembered (a power of two; tags alike modulo it share a slot). */
#define EVMEMO_TAGS 256

/** A key: @n words at @w, its tag, and their hash once made
 *  (evmemo_key(); the rest is the memo's). */
struct evmemo_key {
	const uint64_t *w;
	size_t n;
	uint32_t tag;
	bool hashed;
	uint64_t hash;
};

/** A result kept: borrowed until the next evmemo_put() or evmemo_free(). */
struct evmemo_res {
	const struct sym_prof_frame *frames;
	uint32_t nframes;
	/** The caller's flags (enum sym_prof_stack_flags it added). */
	uint32_t flags;
	uint32_t aux[EVMEMO_NAUX];
};

struct evmemo;

/** Counters. */
struct evmemo_stats {
	uint64_t hits, misses, stores;
};

/**
 * evmemo_new() - an empty memo, on.
 * @param[out] out  caller owns: evmemo_free()
 * @return 0 or -ENOMEM
 */
int evmemo_new(struct evmemo **out);

/** evmemo_free() - NULL is fine. */
void evmemo_free(struct evmemo *m);

/**
 * evmemo_set() - turn the memo off (false: evmemo_find() finds nothing,
 * evmemo_put() keeps nothing) or on.
 */
void evmemo_set(struct evmemo *m, bool on);

/** evmemo_key() - @k for the @n words at @w (borrowed), with @tag. */
void evmemo_key(struct evmemo_key *k, const uint64_t *w, size_t n,
		uint32_t tag);

/**
 * evmemo_find() - the result kept for key @k, if it was stored with a
 * time at most @t.
 * @return true and *@out filled, or false (a miss, counted)
 */
bool evmemo_find(struct evmemo *m, struct evmemo_key *k, uint64_t t,
		 struct evmemo_res *out);

/**
 * evmemo_put() - keep result @r (copied) for key @k, found true for
 * times at or after @from (UINT64_MAX: keep nothing).  It replaces the
 * entry of the same key, else the least recently used of its set.
 * @return 0, or -ENOMEM (nothing kept; the memo is still usable)
 */
int evmemo_put(struct evmemo *m, struct evmemo_key *k, uint64_t from,
	       const struct evmemo_res *r);

/** evmemo_stats() - the counters. */
void evmemo_stats(const struct evmemo *m, struct evmemo_stats *out);

#endif /* SYM_TOOLS_EVMEMO_H */
