/*
 * fuzz-perfscript.c - the `perf script` reader (tools/view/perfscript.c) and
 * the folded-stack map (tools/view/foldmap.c) behind `sym fold --from
 * perf-script`: any text must be read without a crash or a hang, and
 * what comes out must hold perfscript.h's and foldmap.h's promises.
 *
 * Input: byte 0 picks the options (bits 0-4: enum perfscript_flags; bit
 * 5: small limits, so that the limit errors are reached; bits 6-7: how
 * the text is fed after the first pass: in 1, 7 or 61-byte slices or in
 * two halves); the rest is the text.
 *
 * Checks: every sample has a root frame and no NULL frame, the root has
 * no space and the other frames no ';' (both would break the folded
 * line); the stats count what the callback saw; the map's total is the
 * sum of the counts and its sorted output is strictly increasing; and the
 * same text fed in slices gives the same result, error included, as fed
 * at once.
 */
#include <errno.h>

#include "fuzz.h"
#include "view/foldmap.h"
#include "view/perfscript.h"

struct run {
	struct fold_map *map;
	uint64_t samples, total;
	int overflow;
	int err;
	struct perfscript_stats st;	/* its strings: NULL (freed) */
	char msg[160];
	char event[64];			/* the kept event, cut to 63 */
};

static int on_sample(void *ctx, const char *const *frames, size_t n,
		     uint64_t count)
{
	struct run *r = ctx;
	int err;

	FUZZ_CHECK(n >= 1);
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(frames[i] != NULL);
		if (i == 0)
			FUZZ_CHECK(frames[0][0] != '\0' &&
				   !strchr(frames[0], ' '));
		else
			FUZZ_CHECK(!strchr(frames[i], ';'));
		fuzz_sink += strlen(frames[i]);
	}
	r->samples++;
	if (r->total > UINT64_MAX - count)
		r->overflow = 1;
	else
		r->total += count;
	err = fold_map_add(r->map, frames, n, count);
	FUZZ_CHECK(err == 0 || err == -ERANGE || err == -ENOMEM);
	return err ? 1 : 0;
}

static void on_warn(void *ctx, uint64_t lineno, const char *line, size_t len)
{
	FUZZ_CHECK(lineno >= 1);
	FUZZ_CHECK(!memchr(line, '\n', len));
	for (size_t i = 0; i < len; i++)
		fuzz_sink += (unsigned char)line[i];
}

/* Read @text fed in slices of @slice bytes (0: at once) into @r. */
static void run(const struct perfscript_opts *o, const char *text,
		size_t len, size_t slice, struct run *r)
{
	struct perfscript *ps = NULL;
	size_t at = 0;
	int err;

	memset(r, 0, sizeof(*r));
	if (fold_map_new(&r->map) != 0)
		abort();
	err = perfscript_new(o, on_sample, r, &ps);
	FUZZ_CHECK(err == 0);
	do {
		size_t n = slice && len - at > slice ? slice : len - at;

		err = perfscript_feed(ps, text + at, n);
		at += n;
	} while (!err && at < len);
	if (!err)
		err = perfscript_finish(ps);
	r->err = err;
	snprintf(r->msg, sizeof(r->msg), "%s", perfscript_errmsg(ps));
	perfscript_stats(ps, &r->st);
	snprintf(r->event, sizeof(r->event), "%s", r->st.event);
	r->st.event = r->st.other_event = NULL;
	if (err) {
		/* A message with the line number, and a stuck reader. */
		FUZZ_CHECK(strncmp(r->msg, "line ", 5) == 0);
		FUZZ_CHECK(perfscript_feed(ps, "\n", 1) == err);
		FUZZ_CHECK(perfscript_finish(ps) == err);
	} else {
		FUZZ_CHECK(r->msg[0] == '\0');
		FUZZ_CHECK(r->st.samples == r->samples);
		if (!r->overflow)
			FUZZ_CHECK(r->st.total == r->total &&
				   fold_map_total(r->map) == r->total);
	}
	/* The copied strings must stay readable after the reader is gone. */
	perfscript_free(ps);
}

static void check_sorted(const struct fold_map *m)
{
	struct fold_entry *e = NULL;
	size_t n = 0;
	uint64_t sum = 0;

	if (fold_map_sorted(m, &e, &n) != 0)
		return;
	FUZZ_CHECK(n == fold_map_size(m));
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(strlen(e[i].stack) == e[i].len);
		sum += e[i].count;
		if (i == 0)
			continue;
		size_t k = e[i - 1].len < e[i].len ? e[i - 1].len : e[i].len;
		int c = memcmp(e[i - 1].stack, e[i].stack, k);

		FUZZ_CHECK(c < 0 || (c == 0 && e[i - 1].len < e[i].len));
	}
	FUZZ_CHECK(sum == fold_map_total(m));
	free(e);
}

static int same_maps(const struct fold_map *a, const struct fold_map *b)
{
	struct fold_entry *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	int same;

	if (fold_map_sorted(a, &x, &nx) || fold_map_sorted(b, &y, &ny)) {
		free(x);
		return 1;	/* out of memory: nothing to compare */
	}
	same = nx == ny;
	for (size_t i = 0; same && i < nx; i++)
		same = x[i].len == y[i].len && x[i].count == y[i].count &&
		       memcmp(x[i].stack, y[i].stack, x[i].len) == 0;
	free(x);
	free(y);
	return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t slices[] = { 1, 7, 61, 0 };
	struct perfscript_opts o = { .warn = on_warn };
	struct run whole, sliced;
	const char *text;
	size_t len, slice;

	if (size < 1)
		return 0;
	o.flags = data[0] & 0x1f;
	if (data[0] & 0x20) {
		o.max_line = 256;
		o.max_depth = 16;
		o.max_stack = 1024;
	}
	text = (const char *)data + 1;
	len = size - 1;
	slice = slices[data[0] >> 6];
	if (!slice)
		slice = len / 2 + 1;

	run(&o, text, len, 0, &whole);
	check_sorted(whole.map);
	run(&o, text, len, slice, &sliced);
	FUZZ_CHECK(whole.err == sliced.err);
	FUZZ_CHECK(strcmp(whole.msg, sliced.msg) == 0);
	FUZZ_CHECK(whole.st.lines == sliced.st.lines);
	FUZZ_CHECK(whole.st.unrecognized == sliced.st.unrecognized);
	FUZZ_CHECK(same_maps(whole.map, sliced.map));
	fold_map_free(whole.map);
	fold_map_free(sliced.map);

	/* An event named up front is the kept one from the start. */
	o.event = "cycles";
	run(&o, text, len, 0, &sliced);
	FUZZ_CHECK(strcmp(sliced.event, "cycles") == 0);
	fold_map_free(sliced.map);
	return 0;
}
