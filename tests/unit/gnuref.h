/*
 * gnuref.h - the reference for GNU's text that libsym writes itself
 * (libsym/gnutext.h), for t-table and t-store: gnu_ref() prints the
 * frames as GNU's -f -i does for those named from DWARF
 * (tools/addr2line.c, print_gnu()), and anything else some way of its
 * own, which both runs print alike; gnu_cb() is the batch's callback,
 * which checks that the answers come once each, in input order, after
 * the text's before them.
 */
#ifndef SYM_TESTS_GNUREF_H
#define SYM_TESTS_GNUREF_H

#include <stdbool.h>
#include <stddef.h>

#include "gnutext.h"
#include "base.h"

struct gnu_ctx {
	struct symi_buf *b;
	struct symi_gnu_text *text;	/* or NULL */
	size_t calls, next;
	bool bad;
};

static void gnu_ref(struct symi_buf *b, const struct sym_frame *fr, size_t n)
{
	if (!n)
		symi_buf_addstr(b, "??\n??:0\n");
	for (size_t i = 0; i < n; i++) {
		const char *name = fr[i].linkage_name ? fr[i].linkage_name :
							fr[i].name;

		if (fr[i].flags & (SYM_FRAME_SYMTAB | SYM_FRAME_NAME_SYMTAB))
			name = "(symbol)";
		symi_buf_addf(b, "%s\n%s:", name && *name ? name : "??",
			      fr[i].file ? fr[i].file : "??");
		if (!fr[i].line)
			symi_buf_addstr(b, "?\n");
		else if (fr[0].discriminator)
			symi_buf_addf(b, "%u (discriminator %u)\n", fr[i].line,
				      fr[0].discriminator);
		else
			symi_buf_addf(b, "%u\n", fr[i].line);
	}
}

static int gnu_cb(void *ctx, size_t idx, const struct sym_frame *fr,
		  size_t n)
{
	struct gnu_ctx *g = ctx;

	/* In input order, after the text's answers before it. */
	if (idx < g->next || (g->text && idx < g->text->done) ||
	    (!g->text && idx != g->next))
		g->bad = true;
	g->next = idx + 1;
	g->calls++;
	gnu_ref(g->b, fr, n);
	return 0;
}

#endif /* SYM_TESTS_GNUREF_H */
