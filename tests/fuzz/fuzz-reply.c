/*
 * fuzz-reply.c - sym lookup --server's reader of symd's answers
 * (client_read_symbolize(), tools/client.c): whatever a server sends,
 * the reader must not crash, and the frames it hands out must hold
 * sym.h's promises.
 *
 * Input: byte 0 picks how many addresses were asked (0 to 15); the rest
 * is the reply body.
 */
#include "fuzz.h"
#include "client.h"
#include "base.h"

struct seen {
	size_t n, next;
};

static int on_frames(void *ctx, size_t idx, const struct sym_frame *fr,
		     size_t n)
{
	struct seen *s = ctx;

	/* In order, each address once, at most SYM_MAX_FRAMES frames. */
	FUZZ_CHECK(idx == s->next && idx < s->n);
	FUZZ_CHECK(n <= SYM_MAX_FRAMES);
	s->next++;
	fuzz_touch_frames(fr, n, 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sym_frame frames[SYM_MAX_FRAMES];
	uint64_t addrs[16];
	struct seen s = { 0 };
	char src[16];
	bool partial = false;
	char *body;
	int rc;

	if (size < 1)
		return 0;
	s.n = data[0] % 16;
	for (size_t i = 0; i < s.n; i++)
		addrs[i] = 0x1000 + 16 * i;
	body = malloc(size);	/* decoded in place: a copy of our own */
	if (!body)
		return 0;
	memcpy(body, data + 1, size - 1);
	src[0] = 'x';
	rc = client_read_symbolize(body, size - 1, "ab", addrs, s.n, 0,
				   frames, src, data[0] & 16 ? &partial : NULL,
				   on_frames, &s);
	/* An ok module's source is one of symd's words, or "". */
	FUZZ_CHECK(rc != 0 || strlen(src) < sizeof(src));
	/* Success means every address was answered. */
	FUZZ_CHECK(rc != 0 || s.next == s.n);
	free(body);
	return 0;
}
