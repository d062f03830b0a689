/*
 * foldmap.h - folded stacks being added up: a hash map from a stack,
 * "root;...;leaf", to the sum of its counts, written out sorted the way
 * FlameGraph's tools sort it (byte order of the stack, as Perl's `cmp`).
 *
 * The views that fold (`sym fold`, and later the ones that read folded
 * stacks) put every sample in one of these; the input readers
 * (perfscript.h, the raw format) know nothing of it.
 *
 *	struct fold_map *m;
 *	err = fold_map_new(&m);
 *	err = fold_map_add(m, frames, n, count);	   (for each sample)
 *	err = fold_map_write(m, stdout);		   "stack count\n" lines
 *	fold_map_free(m);
 *
 * The format: frames joined with ';', a space, the count in decimal.  A
 * frame is not escaped: one that holds ';' is taken as two frames by a
 * reader (perfscript.c turns ';' in names into ':' for that reason).
 *
 * Memory: the stacks are copied into the map (in chunks of 4 KiB
 * doubling up to 1 MiB, and one per stack longer); a map of N distinct
 * stacks costs their bytes plus about 40 bytes each.  Adding is O(length
 * of the stack); writing sorts, O(N log N) comparisons.
 * Thread-safety: none; one thread per map.
 */
#ifndef SYM_FOLDMAP_H
#define SYM_FOLDMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fold_map;

/** One stack of the map; borrowed from it. */
struct fold_entry {
	/** "root;...;leaf", NUL-terminated; @len bytes without the NUL. */
	const char *stack;
	size_t len;
	uint64_t count;
};

/**
 * fold_map_new() - an empty map.
 * @param[out] out  caller owns, free with fold_map_free()
 * @return 0, -ENOMEM
 */
int fold_map_new(struct fold_map **out);

/** fold_map_free() - free the map and its stacks; NULL is a no-op. */
void fold_map_free(struct fold_map *m);

/**
 * fold_map_add() - add @count to the stack @frames[0];...;@frames[n-1].
 * @param frames  root first; copied; no NULL string
 * @param n       1 or more
 * @return 0; -EINVAL (n is 0); -ENOMEM; -ERANGE when the stack's sum or
 *         the map's total would pass 2^64 - 1 (nothing is added then)
 */
int fold_map_add(struct fold_map *m, const char *const *frames, size_t n,
		 uint64_t count);

/**
 * fold_map_add_stack() - add @count to a stack given already joined.
 * @param stack  @len bytes, copied; "" is a stack like any other
 * @return as fold_map_add()
 */
int fold_map_add_stack(struct fold_map *m, const char *stack, size_t len,
		       uint64_t count);

/** Distinct stacks in @m. */
size_t fold_map_size(const struct fold_map *m);

/** Sum of every count added to @m. */
uint64_t fold_map_total(const struct fold_map *m);

/**
 * fold_map_sorted() - the stacks of @m in byte order (memcmp, shorter
 * first on a tie), which is the order of `LC_ALL=C sort` and of Perl's
 * `sort { $a cmp $b }`.
 * @param[out] out  caller owns the array (free()); its entries point into
 *                  @m and are valid until @m is changed or freed; NULL
 *                  for an empty map
 * @param[out] n    entries
 * @return 0, -ENOMEM
 */
int fold_map_sorted(const struct fold_map *m, struct fold_entry **out,
		    size_t *n);

/**
 * fold_map_write() - write "stack count\n" for each stack, sorted as
 * fold_map_sorted().
 * @return 0, -ENOMEM, -EIO (a write failed; errno is the cause)
 */
int fold_map_write(const struct fold_map *m, FILE *f);

#endif /* SYM_FOLDMAP_H */
