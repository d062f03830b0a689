/*
 * broken.h - broken stacks in the views: the stacks a recorder flagged as
 * likely wrong (docs/raw-format.md, "Stacks": truncated, badreturn, leaf,
 * unwind, kernel), counted per input; the warning every view prints when
 * they are more than 2% of an input's samples, naming each flag with the
 * cure for the way the input was recorded; and the test `sym diff` makes
 * before it compares two profiles (docs/views.md, "Broken stacks").
 *
 * Only profiles carry flags (raw, symbolized, pprof).  Folded stacks and
 * `perf script` text have none: their inputs get no tally and no warning.
 *
 * The decision is per input file, never over the inputs added together:
 * the cure depends on how each input was recorded (its header's mode),
 * and a broken input must not be hidden below 2% by clean ones (when the
 * sum is over 2%, at least one input is).  A merged profile is one input:
 * its stacks' flags are counted together, and its mode is the one its
 * sources agree on (NULL when they differ: the cures are then generic).
 *
 * Ownership: a tally borrows its @tool and @mode strings; everything else
 * is in the struct.  Thread-safety: none needed (no global state).
 */
#ifndef SYM_VIEW_BROKEN_H
#define SYM_VIEW_BROKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sym_prof.h"
#include "stats.h"

/** The frame the views put at the root of every flagged stack. */
#define BROKEN_FRAME "[broken stack]"

/** A view warns when more than this percentage of an input's samples
 *  are flagged (exactly 2% does not warn). */
#define BROKEN_WARN_PCT 2

/** The confidence level of `sym diff`'s test of the flagged shares. */
#define BROKEN_DIFF_CONF 0.999

/** Index of broken_tally.by_flag for flags this reader does not know
 *  (SYM_PROF_UNKNOWN_FLAG); 0 to SYM_PROF_NFLAGS - 1 are the named ones,
 *  bit i of enum sym_prof_stack_flags. */
#define BROKEN_UNKNOWN SYM_PROF_NFLAGS
/** Entries of broken_tally.by_flag. */
#define BROKEN_NKINDS (SYM_PROF_NFLAGS + 1)

/** The broken stacks of one input. */
struct broken_tally {
	/** The header's writer ("sym-record", "libsymprof", "sym-merge")
	 *  and mode ("fp", "dwarf", "thread-timer", ...); NULL when
	 *  unknown.  Borrowed. */
	const char *tool, *mode;
	/** Samples (the sum of the stacks' counts). */
	uint64_t samples;
	/** Samples whose stack carries any flag, known or not. */
	uint64_t flagged;
	/** Samples per flag (a stack with two flags counts in both). */
	uint64_t by_flag[BROKEN_NKINDS];
	/** Of the samples flagged unwind: the module their outermost frame
	 *  lies in most often (where the unwind stopped), named as the
	 *  views name modules ("libfoo.so", "[anon]", "[unknown]"); ""
	 *  when none. */
	char stop_module[128];
	/** How many of the unwind samples stop there. */
	uint64_t stop_samples;
};

/**
 * broken_tally_prof() - the tally of profile @p: its stacks' flags and
 * counts, and the module where most unwind-flagged stacks end.  The
 * header's own flagged counts are not used (a reader does not check them
 * against the stacks); its tool and mode are borrowed from @p.
 * @param[out] t  zeroed first
 * @return 0, -ENOMEM
 */
int broken_tally_prof(const struct sym_prof *p, struct broken_tally *t);

/**
 * broken_warns() - the decision: are more than BROKEN_WARN_PCT% of
 * @t's samples flagged?  Exact integer arithmetic; pure.
 * @return false for no samples
 */
bool broken_warns(const struct broken_tally *t);

/**
 * broken_flag_name() - "truncated", "badreturn", "leaf", "unwind",
 * "kernel", or "unknown" for BROKEN_UNKNOWN (by_flag's index @kind).
 * @return a static string; "?" past BROKEN_UNKNOWN
 */
const char *broken_flag_name(unsigned kind);

/**
 * broken_cure() - what flag @kind means for stacks recorded by @tool in
 * @mode, and what to do about it, as one clause for a warning: e.g. for
 * `unwind` in fp mode, "... record with -g dwarf".  The dwarf `unwind`
 * text does not name a module; broken_warn() adds where the unwinds
 * stopped.  Pure.
 * @param tool, mode  a tally's; NULL when unknown
 * @return a static string
 */
const char *broken_cure(const char *tool, const char *mode, unsigned kind);

/**
 * broken_warn() - when broken_warns(@t), print the warning for input
 * @input to @f: one line with the flagged samples and how the input was
 * recorded, then one line per flag present (most samples first) with its
 * count and broken_cure(), prefixed with tool_prog().
 * @param shown  how the output shows them ("shown under [broken
 *               stack]"), or NULL
 * @return whether it printed
 */
bool broken_warn(FILE *f, const struct broken_tally *t, const char *input,
		 const char *shown);

/**
 * broken_list() - the flags present in @t with their samples, most first,
 * for a note: "unwind 7, truncated 3"; "" when none.  Cut to fit @len.
 */
void broken_list(const struct broken_tally *t, char *buf, size_t len);

/**
 * broken_add() - add @t's counts to @sum (zero it first): the tally of
 * several inputs, for a note on all of them.  A tally without samples
 * (folded input) is skipped.  Tool and mode stay when every tally
 * agrees, else NULL; the stop module is per input and cleared.
 */
void broken_add(struct broken_tally *sum, const struct broken_tally *t);

/** The outcome of broken_compare(). */
struct broken_cmp {
	/** B's flagged share minus A's (Newcombe's interval at
	 *  BROKEN_DIFF_CONF, stats_diff_between()). */
	struct stats_diff d;
	/** The flagged shares of A and B. */
	double pa, pb;
	/** The interval excludes 0: the two were recorded differently
	 *  beyond what sampling explains. */
	bool differ;
	/** @differ, and one of the two shares is above BROKEN_WARN_PCT%:
	 *  sym diff refuses (unless --allow-broken).  When only @differ,
	 *  it compares and marks every row unreliable. */
	bool refuse;
};

/**
 * broken_compare() - `sym diff`'s test: do the flagged shares of two
 * independent profiles differ by more than sampling explains, at
 * BROKEN_DIFF_CONF (a two-proportion test, by sample counts)?  Pure.
 * @return 0, -EINVAL (a tally with more flagged than samples, or no
 *         samples)
 */
int broken_compare(const struct broken_tally *a, const struct broken_tally *b,
		   struct broken_cmp *out);

#endif /* SYM_VIEW_BROKEN_H */
