/*
 * flame.h - the flame graph writer: a tree of stacks (stacktree.h) in, one
 * self-contained interactive SVG out.
 *
 * The SVG has the shape FlameGraph's flamegraph.pl gives, so people and
 * scripts that know one know the other: one <g> per frame inside
 * <g id="frames">, holding a <title> ("name (N samples, P%; ...)"), a
 * <rect> and a <text> label; each <rect> carries fg:x and fg:w (in the
 * namespace "http://github.com/jonhoo/inferno", as inferno and FlameGraph
 * write it): the frame's offset and width in samples, exact integers.
 *
 * The page needs no network: the script and the style sheet are inline,
 * there is no DOCTYPE to fetch and no font to load.  Without a script
 * (an image viewer) it is a plain static picture with native tooltips.
 * With one (a browser), it has
 *   - hover: the frame's details in the line at the bottom: name,
 *     samples, share of the total, and the 95% Wilson score interval of
 *     that share (the binomial model: a share of n samples is an
 *     estimate, see docs/views.md);
 *   - click: zoom, the clicked frame fills the width, its ancestors stay
 *     (faded) and everything beside it is hidden; "Reset Zoom", a click on
 *     the root, or Escape undoes it;
 *   - search ("Search" or Ctrl-F): a regular expression (or a plain
 *     string if it is not a valid one) over the names; matches turn
 *     magenta and the share of samples under them shows at the bottom
 *     right ("Matched: 12.3%"), nested matches counted once.
 *
 * Names go into the file only as XML character data, escaped (& < > " ')
 * and made well-formed (bytes that are not UTF-8 and characters XML does
 * not allow become U+FFFD); the script is a fixed text that never holds a
 * name: it reads names back from the DOM and writes them with textContent,
 * so no name can end up as markup or code.
 *
 * Output is deterministic: the same tree and options give the same bytes
 * (children sorted by name bytewise, colours from a hash of the name, no
 * dates, fixed-point numbers; the C library's "C" number format).
 */
#ifndef SYM_FLAME_H
#define SYM_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stacktree.h"

/** Longest name written, in characters; longer ones end in "...". */
#define FLAME_NAME_MAX 2048

/** Options of flame_write(); fill with flame_opts_init() first. */
struct flame_opts {
	/** Title on top; NULL for "Flame Graph", "Icicle Graph" or
	 *  "Differential Flame Graph".  Borrowed, any bytes. */
	const char *title;
	/** A second line under the title, or NULL.  Borrowed. */
	const char *subtitle;
	/** Image width in pixels (default 1200; 100 to 100000). */
	unsigned width;
	/** Frames narrower than this are not drawn, nor anything above them
	 *  (default 0.1 px, as flamegraph.pl's --minwidth). */
	double minwidth;
	/** @minwidth is a percentage of the total rather than pixels. */
	bool minwidth_pct;
	/** Most frames drawn (default 50000): past it, the minimum width
	 *  is raised until the widest frames fit.  Bounds the file's size
	 *  and the page's work whatever the profile. */
	size_t max_frames;
	/** Root on top, growing down (an icicle graph). */
	bool icicle;
	/** Differential mode: the "before" profile.  Widths come from the
	 *  tree given to flame_write() ("after"), colours from the change
	 *  of each frame's share of its profile's samples: red where it
	 *  grew, blue where it shrank.  NULL for a plain flame graph. */
	const struct stacktree *base;
	/** What a count counts, for the tooltips (default "samples"). */
	const char *unit;
};

/** What flame_write() drew. */
struct flame_stats {
	/** Frames drawn, the root included. */
	size_t drawn;
	/** Frames with samples left out as too narrow. */
	size_t omitted;
	/** The minimum width used, in pixels (raised by max_frames). */
	double minwidth_px;
	/** Deepest stack drawn (the root is depth 0). */
	size_t depth;
	/** max_frames raised the minimum width. */
	bool capped;
};

/** flame_opts_init() - the defaults documented in struct flame_opts. */
void flame_opts_init(struct flame_opts *o);

/**
 * flame_write() - write the SVG flame graph of @t to @out.
 * @param out  written with stdio; flushed, not closed
 * @param t    the profile; with o->base the "after" profile.  Its root's
 *             total must not be 0 (-EINVAL)
 * @param o    NULL for the defaults
 * @param[out] st  may be NULL
 * @return 0, -EINVAL (bad options or an empty profile), -ENOMEM, -EIO
 *         (a write failed; what was written is incomplete)
 */
int flame_write(FILE *out, const struct stacktree *t,
		const struct flame_opts *o, struct flame_stats *st);

#endif /* SYM_FLAME_H */
