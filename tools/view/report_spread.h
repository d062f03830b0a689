/*
 * report_spread.h - a function's share on each host of a merged profile:
 * the smallest, the median and the largest, so that one hot host's tail
 * is not averaged away in the pooled share (design note 7 of PRODUCT.md;
 * docs/views.md, "Merging profiles").  `sym report` prints it when its
 * input has several sources (a merge with --spread, or several inputs).
 *
 *	struct spread *s = NULL;
 *	uint32_t h;
 *	spread_new(&s);
 *	for each stack:
 *		spread_host(s, host_name, &h);   (once per source is enough)
 *		spread_add(s, h, name_ids, n, value);
 *	spread_print(s, stdout, 10, "samples", false, name_of, ctx);
 *	spread_free(s);
 *
 * The share of function F on host h is the value of h's stacks that hold
 * F (total: F anywhere in the stack, counted once; self: F the leaf)
 * divided by the value of all of h's stacks.  A host without F counts
 * with share 0: a function hot on one host of ten has median 0 and a
 * large maximum.  Hosts with no value at all are left out.  The median
 * of an even number of hosts is the mean of the two middle shares.  The
 * pooled share is the value of F over the value of everything: the
 * share `sym report` shows, which depends on how the merge weighed the
 * hosts (--normalize); the per-host shares do not, since a merge scales
 * all stacks of one host alike.
 *
 * Names are ids the caller owns (tools/view/views.h's name ids: 1 and up, 0
 * unused).  Ownership: struct spread owns its tables; host names are
 * copied.  Thread-safety: none.
 */
#ifndef SYM_TOOLS_REPORT_SPREAD_H
#define SYM_TOOLS_REPORT_SPREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct spread;

/** One function of spread_rows(). */
struct spread_row {
	/** The caller's name id. */
	uint32_t name;
	/** Share of the pooled value, in [0, 1]. */
	double pooled;
	/** Smallest, median and largest share over the hosts, in [0, 1]. */
	double min, median, max;
	/** A host with the largest share (the first one). */
	uint32_t max_host;
	/** Hosts where the function occurs. */
	uint32_t present;
};

/**
 * spread_new() - an empty spread.
 * @param[out] out  caller owns: spread_free()
 * @return 0, -ENOMEM
 */
int spread_new(struct spread **out);

/** spread_free() - NULL is a no-op. */
void spread_free(struct spread *s);

/**
 * spread_host() - the index of host @name: the same name gives the same
 * index (sources of one host are pooled); NULL (unknown host) gives a new
 * index each time.
 * @param name  copied; may be NULL
 * @return 0, -ENOMEM, -E2BIG (2^20 hosts)
 */
int spread_host(struct spread *s, const char *name, uint32_t *host);

/** spread_nhosts() - number of host indexes given out. */
size_t spread_nhosts(const struct spread *s);

/** spread_host_name() - the name of host @h ("-" when unknown). */
const char *spread_host_name(const struct spread *s, uint32_t h);

/**
 * spread_add() - add a stack of host @h with @value.
 * @param frames  name ids, root first; @n may be 0 (the stack counts in
 *                the host's total only)
 * @return 0, -ENOMEM, -EINVAL (@h not given out, a name id 0)
 */
int spread_add(struct spread *s, uint32_t h, const uint32_t *frames,
	       uint32_t n, uint64_t value);

/**
 * spread_rows() - the @top functions with the largest pooled self (or,
 * with @total, total) share, largest first (ties by name id), with their
 * spread over the hosts.
 * @param[out] rows  caller owns: free(); NULL when *n is 0
 * @return 0, -ENOMEM
 */
int spread_rows(const struct spread *s, bool total, size_t top,
		struct spread_row **rows, size_t *n);

/** Gives the text of a name id, for spread_print(). */
typedef const char *(*spread_name_fn)(void *ctx, uint32_t id);

/**
 * spread_print() - the two tables (self, then total) of the @top
 * functions: pooled share, min, median, max and the host of the max, as
 * percentages, one line each, for `sym report`.  Nothing is printed with
 * fewer than two hosts that have a value.
 * @param unit  what a value counts ("samples", "ns"), for the title's
 *              explanation
 * @param explain  the title says in words what the columns are (sym
 *                 report --explain); else it is "Spread over N hosts:"
 * @return 0, -ENOMEM
 */
int spread_print(const struct spread *s, FILE *f, size_t top,
		 const char *unit, bool explain, spread_name_fn name,
		 void *ctx);

#endif /* SYM_TOOLS_REPORT_SPREAD_H */
