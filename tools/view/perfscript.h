/*
 * perfscript.h - a reader of `perf script` text: each sample becomes one
 * stack of frame names, root first, and a count, handed to a callback.
 * It is the input half of `sym fold --from perf-script`, and it folds the
 * way FlameGraph's stackcollapse-perf.pl does (docs/views.md, "sym fold
 * --from perf-script"), so that its output can be checked against
 * FlameGraph's own regression data (tests/e2e/t5000-fold-perfscript.sh).
 *
 * The input, as `perf record -g` + `perf script` print it:
 *
 *	dd 29776 666709.771979:   10101010 cpu-clock:
 *		  414b3b fsnotify (/lib/modules/4.1.0-virtual/build/vmlinux)
 *		   e5f70 read+0x10 (/lib/x86_64-linux-gnu/libc-2.15.so)
 *		       0 [unknown] ([unknown])
 *	<blank line>
 *
 * A header line ("comm tid", or "comm pid/tid", then anything, optionally
 * ending in "PERIOD EVENT:"), the frames leaf first ("ADDR NAME (DSO)"),
 * and a blank line that ends the sample.  For that sample the callback
 * gets {"dd", "[unknown]", "read", "fsnotify"} and 10101010: the process
 * name is the root frame, and the count is the sample's period when the
 * header has one (perf script prints it by default), else 1.
 *
 * What is taken from stackcollapse-perf.pl, on purpose (the "why" of each
 * is in perfscript.c):
 *   - Only samples of the first event seen are kept, unless an event is
 *     named (opts.event); the others are counted in the stats.
 *   - "+0x1f" offsets are cut, "a->b" (perf's inline chains) become two
 *     frames with "_[i]" on the inlined one, "[unknown]" becomes the DSO's
 *     base name in brackets ("[libc.so.6]", or "[unknown]"), with the
 *     address too under PERFSCRIPT_ADDRS ("[libc.so.6 <7f00ab>]").
 *   - Names are tidied: ';' becomes ':', argument lists ("(int, char)")
 *     and quotes go (Go's "pkg.(*T).M" and C++'s "(anonymous namespace)"
 *     stay), and for processes whose name starts with "java" the 'L' of
 *     JVM class names ("Ljava/lang/Thread;::run") goes.
 *   - A sample is only counted when its blank line is read: a last sample
 *     with none (a cut file) is dropped and counted in the stats.
 *   - Lines that are neither header nor frame are skipped and reported
 *     through opts.warn.
 * The one deviation: a "\r" before the "\n" is dropped, so that CRLF
 * files fold like LF ones (the Perl script sees no blank lines in them).
 *
 * Malformed input that cannot be folded is an error with the line number
 * in perfscript_errmsg(): a NUL byte (not text), a line longer than
 * opts.max_line, a stack deeper than opts.max_depth frames or longer than
 * opts.max_stack bytes, a period over 64 bits.
 *
 * Usage:
 *
 *	struct perfscript_opts o = { .flags = PERFSCRIPT_PID };
 *	struct perfscript *ps;
 *	err = perfscript_new(&o, on_sample, ctx, &ps);
 *	while ((n = read(fd, buf, sizeof(buf))) > 0 && !err)
 *		err = perfscript_feed(ps, buf, n);
 *	if (!err)
 *		err = perfscript_finish(ps);
 *	if (err)
 *		fprintf(stderr, "%s\n", perfscript_errmsg(ps));
 *	perfscript_free(ps);
 *
 * Thread-safety: one thread per reader; readers are independent.
 * This is a tool module (tools/, not libsym): names are perfscript_*.
 */
#ifndef SYM_PERFSCRIPT_H
#define SYM_PERFSCRIPT_H

#include <stddef.h>
#include <stdint.h>

/** enum perfscript_flags: what the frames and the root name carry. */
enum perfscript_flags {
	/** Root frame "comm-PID" ("comm-?" when perf printed no PID). */
	PERFSCRIPT_PID = (1 << 0),
	/** Root frame "comm-PID/TID"; wins over PERFSCRIPT_PID. */
	PERFSCRIPT_TID = (1 << 1),
	/** "_[k]" after kernel frames (DSO "[...]" or "...vmlinux"). */
	PERFSCRIPT_KERNEL = (1 << 2),
	/** "_[j]" after JIT frames (DSO "/tmp/perf-PID.map"). */
	PERFSCRIPT_JIT = (1 << 3),
	/** Unknown frames keep their address: "[dso <addr>]". */
	PERFSCRIPT_ADDRS = (1 << 4),
};

/** Longest line by default (1 MiB; C++ names can be long). */
#define PERFSCRIPT_LINE_MAX (1u << 20)
/** Most frames in one stack by default, the root (process) one included. */
#define PERFSCRIPT_DEPTH_MAX 8192
/** Most bytes of one stack's frame names by default (8 MiB). */
#define PERFSCRIPT_STACK_MAX (8u << 20)

/**
 * Called for each sample.
 * @param frames  root first: frames[0] is the process name (with -PID or
 *                -PID/TID), frames[n - 1] the leaf; borrowed, valid
 *                until the callback returns; no string is NULL
 * @param n       1 or more (a sample without frames is its root alone)
 * @param count   the sample's period, or 1; may be 0 for a period written
 *                "00" (stackcollapse-perf.pl does the same)
 * @return 0 to go on; any other value stops the reader, which returns it
 *         from perfscript_feed() or perfscript_finish()
 */
typedef int (*perfscript_sample_fn)(void *ctx, const char *const *frames,
				    size_t n, uint64_t count);

/**
 * Called for each line that is skipped as unrecognized.
 * @param lineno  1-based
 * @param line    the line, without its newline; borrowed, NOT
 *                NUL-terminated; @len bytes
 */
typedef void (*perfscript_warn_fn)(void *ctx, uint64_t lineno,
				   const char *line, size_t len);

/** Options of perfscript_new(); zero is the default for each field. */
struct perfscript_opts {
	/** enum perfscript_flags. */
	uint32_t flags;
	/** Keep only samples of this event ("cycles", "cpu-clock:ppp");
	 *  NULL: the first event seen.  Copied. */
	const char *event;
	/** Limits; 0 for PERFSCRIPT_LINE_MAX, _DEPTH_MAX, _STACK_MAX. */
	size_t max_line;
	size_t max_depth;
	size_t max_stack;
	/** NULL: unrecognized lines are only counted.  Gets the reader's
	 *  @ctx. */
	perfscript_warn_fn warn;
};

/** What a reader saw, for the summary a tool prints. */
struct perfscript_stats {
	/** Lines read (the last one even without its newline). */
	uint64_t lines;
	/** Samples handed to the callback, and the sum of their counts. */
	uint64_t samples;
	uint64_t total;
	/** Headers of other events than the kept one, and their frames
	 *  were skipped. */
	uint64_t filtered;
	/** Lines neither header nor frame nor comment nor blank. */
	uint64_t unrecognized;
	/** 1 when the input ended inside a sample (no blank line after
	 *  its last frame): that sample was dropped. */
	uint64_t unterminated;
	/** The kept event: opts.event, else the first seen; "" when no
	 *  header named one.  Borrowed from the reader. */
	const char *event;
	/** An event other than the kept one, the first seen; "" if none. */
	const char *other_event;
};

struct perfscript;

/**
 * perfscript_new() - a reader that calls @fn for each sample.
 * @param opts  NULL for the defaults; copied
 * @param fn    not NULL
 * @param ctx   passed to @fn and opts->warn
 * @param[out] out  caller owns, free with perfscript_free()
 * @return 0, -ENOMEM, -EINVAL (@fn or @out NULL, an empty opts->event)
 */
int perfscript_new(const struct perfscript_opts *opts,
		   perfscript_sample_fn fn, void *ctx,
		   struct perfscript **out);

/**
 * perfscript_feed() - read the next @len bytes of the text; lines may be
 * split anywhere across calls.
 * @param buf  borrowed for the call
 * @return 0; -E2BIG (a line, stack or stack depth over its limit),
 *         -EINVAL (a NUL byte), -ERANGE (a period over 64 bits), -ENOMEM,
 *         or what the callback returned.  After an error the reader is
 *         stuck: every later call returns the same error.
 */
int perfscript_feed(struct perfscript *ps, const char *buf, size_t len);

/**
 * perfscript_finish() - the input has ended: read a last line that had no
 * newline.  A sample without its blank line is dropped (stats.unterminated).
 * @return as perfscript_feed()
 */
int perfscript_finish(struct perfscript *ps);

/**
 * perfscript_errmsg() - what went wrong, for the last error of @ps:
 * "line N: ..." (lowercase, no full stop), or "" when nothing did.  The
 * callback's own errors read "line N: stopped by the caller (code E)".
 * @return borrowed, valid until the next call on @ps
 */
const char *perfscript_errmsg(const struct perfscript *ps);

/**
 * perfscript_stats() - what @ps has read so far.
 * @param[out] st  its strings are borrowed from @ps
 */
void perfscript_stats(const struct perfscript *ps, struct perfscript_stats *st);

/** perfscript_free() - free the reader; NULL is a no-op. */
void perfscript_free(struct perfscript *ps);

#endif /* SYM_PERFSCRIPT_H */
