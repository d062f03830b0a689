/*
 * merge.h - merging profiles (tools/merge.c, `sym merge`): the core that
 * turns several profiles into one, for the command and for tests.
 *
 * Design note 7 of PRODUCT.md: a plain sum answers "where does the
 * fleet's sampled time go", which big or busy hosts dominate; weighting
 * every host the same answers "what does a typical host spend its time
 * on"; CPU time per second answers "how many cores does each function
 * keep busy".  docs/views.md, "Merging profiles", has the details.
 */
#ifndef SYM_TOOLS_MERGE_H
#define SYM_TOOLS_MERGE_H

#include <stdbool.h>
#include <stddef.h>

#include "sym_prof.h"

/** How weights are normalized (--normalize). */
enum merge_mode {
	/** Weights added as they are (unit `samples`: rescaled to the first
	 *  input's period when periods differ). */
	MERGE_NONE = 0,
	/** Every host's weights rescaled to sum to exactly 10^12 (unit
	 *  `host-ppt`). */
	MERGE_PER_HOST,
	/** CPU nanoseconds per second of each recording's duration (unit
	 *  `ns/s`). */
	MERGE_PER_SECOND,
	MERGE_NMODES,
};

/** "none", "per-host", "per-second". */
extern const char *const merge_mode_names[MERGE_NMODES];

struct merge_opts {
	enum merge_mode mode;
	/** Keep each recording's stacks apart (`from` lines). */
	bool spread;
};

/**
 * merge_profiles() - merge @n profiles into a new one (see merge.c for
 * what the modes do to weights, maps, processes and locations).  Counts
 * are summed, never rescaled.  The output has one source per recording
 * of the inputs.
 * @param in     the inputs, borrowed
 * @param names  their names, for messages
 * @param[out] out  caller owns: sym_prof_free(); NULL on error
 * @return 0, -EINVAL (inputs the mode cannot merge: printed), -ENOMEM,
 *         -EOVERFLOW, -E2BIG (printed)
 */
int merge_profiles(struct sym_prof **in, const char *const *names, size_t n,
		   const struct merge_opts *o, struct sym_prof **out);

/** merge_parse_mode() - "none", "per-host", "per-second": 0 or -EINVAL. */
int merge_parse_mode(const char *s, enum merge_mode *out);

#endif /* SYM_TOOLS_MERGE_H */
