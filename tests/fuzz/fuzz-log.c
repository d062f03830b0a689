/*
 * fuzz-log.c - the line parser of `sym symbolize-log`, logline_parse()
 * (tools/logline.c): any bytes must parse without a read outside the
 * line, and what it finds must hold logline.h's shape.
 *
 * Input: lines separated by '\n' (each parsed alone, as the command
 * parses them), and the whole input once more as one line.  Each line
 * is parsed from a heap copy of exactly its length, so that ASan sees a
 * read past its end; a trailing '\r' must change nothing.
 */
#include "fuzz.h"
#include "logline.h"
#include "base.h"

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

static void check_span(const struct logline_span *sp, size_t len)
{
	FUZZ_CHECK(sp->off <= len && sp->len <= len - sp->off);
}

static void check(const char *s, size_t len, const struct logline *l)
{
	check_span(&l->module, len);
	check_span(&l->build_id, len);
	check_span(&l->symbol, len);
	check_span(&l->frame_no, len);
	FUZZ_CHECK(l->cut <= len);
	for (size_t i = 0; i < l->build_id.len; i++)
		FUZZ_CHECK(is_hex(s[l->build_id.off + i]));
	switch (l->kind) {
	case LOGLINE_NONE:
		FUZZ_CHECK(!l->module.len && !l->addr && !l->cut);
		break;
	case LOGLINE_SANITIZER:
		FUZZ_CHECK(l->frame_no.len > 0 && s[l->frame_no.off - 1] == '#');
		FUZZ_CHECK(l->cut > l->frame_no.off + l->frame_no.len);
		/* fall through */
	case LOGLINE_SUMMARY:
		/* " (MODULE+0x...": what the rewriting copies from. */
		FUZZ_CHECK(l->module.len > 0 && l->module.off >= 2);
		FUZZ_CHECK(s[l->module.off - 1] == '(' &&
			   s[l->module.off - 2] == ' ');
		FUZZ_CHECK(l->cut <= l->module.off - 2);
		break;
	case LOGLINE_BACKTRACE:
		FUZZ_CHECK(l->module.len > 0);
		FUZZ_CHECK(s[l->module.off + l->module.len] == '(');
		break;
	case LOGLINE_SEGFAULT:
		FUZZ_CHECK(l->module.len > 0);
		FUZZ_CHECK(s[l->module.off + l->module.len] == '[');
		break;
	case LOGLINE_PC:
		FUZZ_CHECK(!l->module.len && !l->build_id.len);
		break;
	default:
		FUZZ_CHECK(!"unknown kind");
	}
}

static int same_span(const struct logline_span *x,
		     const struct logline_span *y)
{
	return x->off == y->off && x->len == y->len;
}

static int same(const struct logline *x, const struct logline *y)
{
	return x->kind == y->kind && x->addr == y->addr &&
	       x->cut == y->cut && x->frame == y->frame &&
	       x->base == y->base && x->size == y->size &&
	       x->fileoff == y->fileoff && x->has_fileoff == y->has_fileoff &&
	       same_span(&x->module, &y->module) &&
	       same_span(&x->build_id, &y->build_id) &&
	       same_span(&x->symbol, &y->symbol) &&
	       same_span(&x->frame_no, &y->frame_no);
}

static void one(const uint8_t *data, size_t len)
{
	struct logline a, b;
	char *s = malloc(len ? len : 1), *t = malloc(len + 1);

	if (!s || !t)
		goto out;
	memcpy(s, data, len);
	FUZZ_CHECK(logline_parse(s, len, &a) == a.kind);
	check(s, len, &a);
	/* The same line ending in "\r\n": the same answer. */
	memcpy(t, data, len);
	t[len] = '\r';
	logline_parse(t, len + 1, &b);
	if (!len || s[len - 1] != '\r')
		FUZZ_CHECK(same(&a, &b));
out:
	free(s);
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t start = 0;

	for (size_t i = 0; i <= size; i++) {
		if (i == size || data[i] == '\n') {
			one(data + start, i - start);
			start = i + 1;
		}
	}
	one(data, size);
	return 0;
}
