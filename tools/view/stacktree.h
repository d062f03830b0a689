/*
 * stacktree.h - a trie of call stacks with self and total counts, and the
 * reader of FlameGraph's folded stacks that fills one.
 *
 * A stack is a list of frame names from the root (outermost caller) to the
 * leaf.  Inserting it with a count walks (and grows) the trie from the
 * synthetic root node, STACKTREE_ROOT, adds the count to the leaf's *self*
 * and to the *total* of the leaf and of every node above it.  So for every
 * node: total = self + the sum of its children's totals, and the root's
 * total is the number of samples inserted.
 *
 * Nodes are named by uint32_t ids, stable for the tree's lifetime; the
 * root is 0.  Children of a node are kept in the order they were first
 * inserted (stacktree_first_child(), stacktree_next_sibling()); a writer
 * that wants them sorted sorts them itself (flame.c sorts by name, a call
 * tree would sort by total), so the tree can be read through a const
 * pointer by several views.  Names are interned: a name used by many
 * nodes is stored once.
 *
 * Limits: at most STACKTREE_NODES_MAX nodes (-E2BIG beyond), counts and
 * their sums are uint64_t (-ERANGE on overflow, with nothing changed).
 *
 * Thread-safety: none; one thread at a time per tree.  Distinct trees are
 * independent.
 *
 * The tree knows nothing of where stacks come from: stacktree_read_folded()
 * below is one source (FlameGraph's folded text); raw and symbolized
 * profiles are others.
 */
#ifndef SYM_STACKTREE_H
#define SYM_STACKTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** The synthetic root node ("all"); it has no name. */
#define STACKTREE_ROOT 0u
/** "No such node", returned by the lookups. */
#define STACKTREE_NONE UINT32_MAX
/** Most nodes a tree holds, the root included. */
#define STACKTREE_NODES_MAX (1u << 28)

struct stacktree;

/** One frame name of a stack: @len bytes at @name, not NUL-terminated. */
struct stacktree_frame {
	const char *name;
	size_t len;
};

/**
 * stacktree_new() - an empty tree: only the root, with zero counts.
 * @param[out] out  caller owns, free with stacktree_free()
 * @return 0, -ENOMEM
 */
int stacktree_new(struct stacktree **out);

/** stacktree_free() - free @t and all its names; no-op on NULL. */
void stacktree_free(struct stacktree *t);

/**
 * stacktree_insert() - add @count samples of the stack @frames[0..n-1]
 * (root first).  Missing nodes are created.  @n == 0 counts the samples
 * on the root itself.
 * @return 0; -ENOMEM, -E2BIG (too many nodes), -ERANGE (the root's total
 *         would overflow): then the counts are unchanged (nodes created
 *         on the way stay, with zero counts)
 */
int stacktree_insert(struct stacktree *t, const struct stacktree_frame *frames,
		     size_t n, uint64_t count);

/**
 * stacktree_child() - the child of @parent named @name, created (with zero
 * counts) when it does not exist yet.
 * @param name  @len bytes, copied; may hold any bytes
 * @param[out] out  the child's id
 * @return 0, -ENOMEM, -E2BIG
 */
int stacktree_child(struct stacktree *t, uint32_t parent, const char *name,
		    size_t len, uint32_t *out);

/**
 * stacktree_count() - add @count to the self count of @node and to the
 * totals of @node and all its ancestors.
 * @return 0, -ERANGE (the root's total would overflow; nothing changed)
 */
int stacktree_count(struct stacktree *t, uint32_t node, uint64_t count);

/**
 * stacktree_find() - the child of @parent named @name.
 * @return its id, or STACKTREE_NONE
 */
uint32_t stacktree_find(const struct stacktree *t, uint32_t parent,
			const char *name, size_t len);

/** Number of nodes, the root included; ids are 0 to this minus 1. */
size_t stacktree_size(const struct stacktree *t);

/**
 * stacktree_name() - the name of @node ("" for the root).
 * @param[out] len  its length in bytes; may be NULL
 * @return borrowed, valid until stacktree_free(); NUL-terminated, but may
 *         hold NUL bytes before @len when the inserted name did
 */
const char *stacktree_name(const struct stacktree *t, uint32_t node,
			   size_t *len);

/** Samples whose stack ends at @node. */
uint64_t stacktree_self(const struct stacktree *t, uint32_t node);
/** Samples whose stack passes through @node (self + children's totals). */
uint64_t stacktree_total(const struct stacktree *t, uint32_t node);
/** The parent of @node; STACKTREE_NONE for the root. */
uint32_t stacktree_parent(const struct stacktree *t, uint32_t node);
/** The first child of @node, in insertion order; STACKTREE_NONE if none. */
uint32_t stacktree_first_child(const struct stacktree *t, uint32_t node);
/** The next sibling of @node, in insertion order; STACKTREE_NONE at the end. */
uint32_t stacktree_next_sibling(const struct stacktree *t, uint32_t node);

/*
 * Folded stacks, as FlameGraph's stackcollapse-*.pl write them and
 * flamegraph.pl reads them: one stack per line, frames root first joined
 * by ';', then blanks and a count:
 *
 *	main;parse;malloc 12
 *
 * The count is a decimal whole number (FlameGraph also takes fractions;
 * these are refused, since samples are counted).  A frame name may hold
 * anything but ';' and the line end, blanks included; annotations such as
 * "_[k]" are part of the name.  Blank lines are skipped; a trailing "\r"
 * is dropped.  In two-count form (FlameGraph's difffolded.pl) each line
 * ends with two counts, "before" then "after".
 */

/** Longest folded line accepted, in bytes, without its newline. */
#define STACKTREE_LINE_MAX 65536	/* messages say "65536" too */

/** One parsed folded line; pointers point into the parsed text. */
struct stacktree_folded {
	const char *stack;	/* frames joined by ';', not NUL-terminated */
	size_t stack_len;	/* 0 for a blank line */
	uint64_t count[2];	/* [0] the count; [1] the second count */
};

/**
 * stacktree_parse_folded() - parse one folded line (no newline).
 * @param line    @len bytes; need not be NUL-terminated
 * @param ncounts 1, or 2 for the two-count form
 * @param[out] out  borrowed from @line; stack_len == 0 for a blank line
 * @param[out] why  on -EINVAL, a static message saying what is wrong
 * @return 0, -EINVAL (malformed: no count, a bad or too large count, an
 *         empty frame name, a NUL byte, too long)
 */
int stacktree_parse_folded(const char *line, size_t len, int ncounts,
			   struct stacktree_folded *out, const char **why);

/**
 * stacktree_add_folded() - add one parsed line's stack: with count[0] to
 * @t, and when @t2 is not NULL with count[1] to @t2.
 * @return 0, or what stacktree_insert() returns
 */
int stacktree_add_folded(struct stacktree *t, struct stacktree *t2,
			 const struct stacktree_folded *f);

/**
 * stacktree_read_folded() - read folded stacks from @f to its end and add
 * them to @t (and, in two-count form, the second counts to @t2).
 * @param t2    NULL for the one-count form
 * @param name  the input's name for messages, e.g. a path or "<stdin>"
 * @param[out] msg  on failure, what went wrong and where, as
 *                  "'<name>':<line>: <what>"; may be NULL
 * @param msglen    size of @msg
 * @return 0; -EINVAL (a malformed line, the first one stops the read),
 *         -ERANGE, -E2BIG, -ENOMEM, -EIO (read error).  The lines before
 *         a failure stay added.
 */
int stacktree_read_folded(struct stacktree *t, struct stacktree *t2, FILE *f,
			  const char *name, char *msg, size_t msglen);

#endif /* SYM_STACKTREE_H */
