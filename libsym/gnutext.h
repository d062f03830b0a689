/*
 * gnutext.h - batch lookups that write GNU addr2line's `-f -i` text
 * themselves, for `sym lookup` and `sym addr2line` (tools/addr2line.c).
 * Not installed: the sym tool links libsym's archive.
 *
 * A third of a warm run of 100,000 addresses is the making and printing
 * of its answers.  Through sym_frames_fn, each answer is a struct
 * sym_frame a frame (23 fields, most of them unread by GNU's style) and
 * a call into the printer.  Here the common answer, a leaf in a scope
 * whose functions are all named from DWARF as bfd names them (a linkage
 * name, or a plain C name), is written as text straight from the
 * table's records (libsym/table.c, gnu_text()): python3.11d's and
 * libc's warm runs take 14% fewer instructions (docs/bench.md, "GNU's
 * text from the records").  An answer of one frame comes from its hit
 * alone, which the sorted search made ready (internal.h, SYMI_HIT_GNU),
 * and one with inlined frames from its hit and its chain, written once a
 * run (SYMI_HIT_GNU_CHAIN): neither reads a record.  Every other answer
 * (no leaf, a name from
 * the symbol table, a function without a linkage name, no room left in
 * the buffer) still goes to the callback, which prints it; the two
 * write into the same buffer, in input order.
 */
#ifndef SYM_GNUTEXT_H
#define SYM_GNUTEXT_H

#include "sym.h"

struct symi_buf;	/* base.h */

/*
 * struct symi_gnu_text - where the text goes.
 * @buf:  the caller's output buffer.  An answer is appended at
 *        buf->len, with buf->p[buf->len] '\0' after it, when it fits
 *        within buf->alloc with room to spare; the buffer is never grown
 *        (the callback makes room: the answer it is given is the one
 *        that did not fit).
 * @done: set to 1 + the input index of the last answer written here,
 *        or left as it was (0 to begin with): with the callback's own
 *        count, how far a batch that failed got.
 *
 * The text is GNU addr2line's (binutils 2.40) with -f -i and no other
 * option: per frame, innermost first, "NAME\nFILE:LINE\n", with
 * " (discriminator N)" after the line when the innermost frame has one
 * (libsym/put.h, gnu_put()).
 */
struct symi_gnu_text {
	struct symi_buf *buf;
	size_t done;
};

/*
 * symi_store_lookup_gnu() - sym_store_lookup_omit(), with the answers
 * described above written to @text (when @omit is the GNU style's:
 * SYM_OMIT_DECL, SYM_OMIT_PEER_NAMES, SYM_OMIT_DEMANGLED,
 * SYM_OMIT_SYMBOLS and SYM_OMIT_LLVM_ONLY; with any other @omit, or a
 * NULL @text, it is sym_store_lookup_omit()).  @fn gets the rest, in
 * input order with them.  The same returns.
 */
int symi_store_lookup_gnu(struct sym_store *st, const char *build_id,
			  const uint64_t *addrs, size_t count, unsigned omit,
			  struct symi_gnu_text *text, sym_frames_fn fn,
			  void *ctx);

/* symi_table_lookup_batch_gnu() - the same for sym_table_lookup_batch_omit(). */
int symi_table_lookup_batch_gnu(const struct sym_table *t,
				const uint64_t *addrs, size_t count,
				unsigned omit, struct symi_gnu_text *text,
				sym_frames_fn fn, void *ctx);

#endif /* SYM_GNUTEXT_H */
