/*
 * fuzz-folded.c - the folded-stack reader (tools/view/stacktree.c) and the
 * flame graph writer (tools/view/flame.c): any bytes must be read without a
 * crash into a consistent tree (total = self + the children's totals),
 * and the SVG of whatever was read must keep flame.h's promises: valid
 * UTF-8, names only as escaped text (no '<' inside a title or a label),
 * one <g> per frame drawn, never more than max_frames.
 *
 * Input: byte 0 picks the options (bit 0: two counts a line, so a
 * differential graph; bit 1: icicle; bits 2-3: max_frames 1, 3, 50 or the
 * default; bits 4-5: minwidth 0, 0.1 px, 3 px or 5%); the rest is the
 * folded text.
 */
#include <errno.h>

#include "fuzz.h"
#include "view/stacktree.h"
#include "view/flame.h"

static int consistent(const struct stacktree *t)
{
	size_t i;

	for (i = 0; i < stacktree_size(t); i++) {
		uint64_t sum = stacktree_self(t, (uint32_t)i);
		uint32_t c;

		for (c = stacktree_first_child(t, (uint32_t)i);
		     c != STACKTREE_NONE; c = stacktree_next_sibling(t, c))
			sum += stacktree_total(t, c);
		if (sum != stacktree_total(t, (uint32_t)i))
			return 0;
	}
	return 1;
}

static int valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0, k, len;
	unsigned long cp;

	while (i < n) {
		unsigned char c = s[i];

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			len = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 3, cp = c & 0x07;
		else
			return 0;
		if (n - i - 1 < len)
			return 0;
		for (k = 1; k <= len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x800) || (len == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += len + 1;
	}
	return 1;
}

/* Between each @open and the next @close there is no '<'. */
static int no_markup_in(const char *s, const char *open, const char *close,
			size_t *count)
{
	const char *p = s, *e;

	*count = 0;
	while ((p = strstr(p, open))) {
		p += strlen(open);
		e = strstr(p, close);
		if (!e || memchr(p, '<', (size_t)(e - p)))
			return 0;
		(*count)++;
		p = e;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = { 1, 3, 50, 50000 };
	static const double widths[] = { 0, 0.1, 3, 5 };
	struct stacktree *t = NULL, *base = NULL;
	struct flame_opts o;
	struct flame_stats st;
	char msg[256], *svg = NULL, *frames;
	size_t svg_len = 0, titles, texts;
	FILE *in, *out;
	int err, mode;

	if (size < 2)
		return 0;
	mode = data[0];
	FUZZ_CHECK(stacktree_new(&t) == 0);
	if (mode & 1)
		FUZZ_CHECK(stacktree_new(&base) == 0);
	in = fmemopen((void *)(data + 1), size - 1, "r");
	FUZZ_CHECK(in != NULL);
	err = stacktree_read_folded(mode & 1 ? base : t, mode & 1 ? t : NULL,
				    in, "fuzz", msg, sizeof(msg));
	fclose(in);
	/* A failure names the input; the lines before it stay added. */
	FUZZ_CHECK(!err || strncmp(msg, "'fuzz'", 6) == 0);
	FUZZ_CHECK(consistent(t));
	if (base)
		FUZZ_CHECK(consistent(base));
	if (stacktree_total(t, STACKTREE_ROOT) == 0)
		goto out;

	flame_opts_init(&o);
	o.base = base;
	o.icicle = mode & 2;
	o.max_frames = caps[(mode >> 2) & 3];
	o.minwidth = widths[(mode >> 4) & 3];
	o.minwidth_pct = ((mode >> 4) & 3) == 3;
	o.title = "<&\"'>";
	out = open_memstream(&svg, &svg_len);
	FUZZ_CHECK(out != NULL);
	err = flame_write(out, t, &o, &st);
	fclose(out);
	FUZZ_CHECK(err == 0 || err == -ENOMEM);
	if (err)
		goto out;
	FUZZ_CHECK(st.drawn >= 1 && st.drawn <= o.max_frames);
	FUZZ_CHECK(valid_utf8((const unsigned char *)svg, svg_len));
	FUZZ_CHECK(strlen(svg) == svg_len);	/* no NUL byte */
	FUZZ_CHECK(no_markup_in(svg, "<title>", "</title>", &titles));
	FUZZ_CHECK(titles == st.drawn);
	/* In the frames, '">' only ends a <text> start tag (a quote in a
	 * name is &quot;): each label is plain text. */
	frames = strstr(svg, "<g id=\"frames\">\n");
	FUZZ_CHECK(frames != NULL);
	FUZZ_CHECK(no_markup_in(frames + 16, "\">", "</text>", &texts));
	FUZZ_CHECK(texts == st.drawn);
	FUZZ_CHECK(strstr(svg, "</g>\n</svg>\n") != NULL);
out:
	free(svg);
	stacktree_free(t);
	stacktree_free(base);
	return 0;
}
