/*
 * fuzz-raw.c - libFuzzer target over the raw stack format reader and
 * writer (libsym/prof/raw.c, docs/raw-format.md) and the profile they fill
 * (libsym/prof/prof.c).
 *
 * One input is one file.  sym_prof_read() must either fail cleanly (one
 * of its documented codes, no profile, a message "line N: ..." of
 * printable ASCII, also when the message buffer is short) or give a
 * profile whose invariants hold: map ids 0 to n - 1, frames naming an
 * existing map or SYM_PROF_NOMAP, at most SYM_PROF_MAX_FRAMES frames, no
 * two equal stacks of one source, source ids 1 to n, strings NULL or
 * non-empty.  That profile is written
 * with sym_prof_write() (into a memfd, so no file touches the disk), read
 * back, and must come out equal: header, maps, sources, stacks with
 * their sources, and the process
 * and thread of every stack, and the symbolization (every location, its
 * status and lines); writing the copy gives the same bytes again, which
 * covers the processes and threads that no stack names.
 */
#include "fuzz.h"
#include "../unit/prof-test.h"

#include <errno.h>
#include <unistd.h>

#include "base.h"

static int same_hdr(const struct sym_prof_header *a,
		    const struct sym_prof_header *b)
{
	return fuzz_streq(a->host, b->host) && fuzz_streq(a->tool, b->tool) &&
	       fuzz_streq(a->tool_version, b->tool_version) &&
	       a->start_ns == b->start_ns && a->duration_ns == b->duration_ns &&
	       fuzz_streq(a->event, b->event) && fuzz_streq(a->mode, b->mode) &&
	       a->frequency == b->frequency && a->period == b->period &&
	       fuzz_streq(a->weight_unit, b->weight_unit) &&
	       a->samples == b->samples && a->lost == b->lost &&
	       a->throttled == b->throttled && a->dropped == b->dropped &&
	       !memcmp(a->flagged, b->flagged, sizeof(a->flagged)) &&
	       a->pidns == b->pidns;
}

static int same_map(const struct sym_prof_map *a, const struct sym_prof_map *b)
{
	return a->id == b->id && a->kind == b->kind && a->pid == b->pid &&
	       a->flags == b->flags && a->start == b->start &&
	       a->end == b->end && a->pgoff == b->pgoff &&
	       a->vaddr == b->vaddr && fuzz_streq(a->build_id, b->build_id) &&
	       fuzz_streq(a->path, b->path);
}

static int same_stack(const struct sym_prof_stack *a,
		      const struct sym_prof_stack *b)
{
	return a->count == b->count && a->weight == b->weight &&
	       a->pid == b->pid && a->tid == b->tid && a->flags == b->flags &&
	       a->nframes == b->nframes &&
	       (!a->nframes || !memcmp(a->frames, b->frames,
				       a->nframes * sizeof(*a->frames)));
}

static int same_source(const struct sym_prof_source *a,
		       const struct sym_prof_source *b)
{
	return a->id == b->id && fuzz_streq(a->host, b->host) &&
	       a->start_ns == b->start_ns && a->duration_ns == b->duration_ns &&
	       a->period == b->period &&
	       fuzz_streq(a->weight_unit, b->weight_unit) &&
	       a->samples == b->samples && a->lost == b->lost;
}

static void check_str(const char *s)
{
	fuzz_touch_str(s, 1);
}

/* The invariants sym_prof.h promises for a profile. */
static void check_prof(const struct sym_prof *p)
{
	const struct sym_prof_header *h = sym_prof_header(p);
	size_t nmaps = sym_prof_nmaps(p), n = sym_prof_nstacks(p);
	size_t nsrcs = sym_prof_nsources(p);

	check_str(h->host);
	check_str(h->tool);
	check_str(h->tool_version);
	check_str(h->event);
	check_str(h->mode);
	FUZZ_CHECK(h->weight_unit && h->weight_unit[0]);
	for (uint32_t i = 0; i < nmaps; i++) {
		const struct sym_prof_map *m = sym_prof_map(p, i);

		FUZZ_CHECK(m && m->id == i && m->kind <= SYM_PROF_MAP_ANON &&
			   m->start <= m->end && m->pid >= -1);
		check_str(m->build_id);
		check_str(m->path);
	}
	FUZZ_CHECK(sym_prof_map(p, (uint32_t)nmaps) == NULL);
	for (uint32_t i = 1; i <= nsrcs; i++) {
		const struct sym_prof_source *src = sym_prof_source(p, i);

		FUZZ_CHECK(src && src->id == i);
		check_str(src->host);
		check_str(src->weight_unit);
	}
	FUZZ_CHECK(!sym_prof_source(p, 0) &&
		   !sym_prof_source(p, (uint32_t)nsrcs + 1));
	for (size_t i = 0; i < n; i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);

		FUZZ_CHECK(s && s->nframes <= SYM_PROF_MAX_FRAMES &&
			   s->pid >= 0 && s->tid >= 0);
		for (uint32_t k = 0; k < s->nframes; k++)
			FUZZ_CHECK(s->frames[k].map == SYM_PROF_NOMAP ||
				   s->frames[k].map < nmaps);
		FUZZ_CHECK(sym_prof_stack_source(p, i) <= nsrcs);
		/* Unique: a neighbour is never equal (a full check would
		 * be quadratic). */
		if (i) {
			const struct sym_prof_stack *t =
				sym_prof_stack(p, i - 1);

			FUZZ_CHECK(!(sym_prof_stack_source(p, i - 1) ==
				     sym_prof_stack_source(p, i) &&
				     t->pid == s->pid && t->tid == s->tid &&
				     t->flags == s->flags &&
				     t->nframes == s->nframes &&
				     (!s->nframes ||
				      !memcmp(t->frames, s->frames,
					      s->nframes * sizeof(*s->frames)))));
		}
		check_str(sym_prof_process(p, s->pid, NULL, NULL));
		check_str(sym_prof_thread(p, s->tid));
	}
	FUZZ_CHECK(sym_prof_stack(p, n) == NULL);
	FUZZ_CHECK(sym_prof_stack_source(p, n) == 0);
	fuzz_check_locations(p);
}

static void check_fail(int err, const struct sym_prof *p, const char *msg,
		       size_t msglen)
{
	FUZZ_CHECK(err == -SYM_E_BADPROFILE || err == -E2BIG ||
		   err == -ENOMEM);
	FUZZ_CHECK(p == NULL);
	FUZZ_CHECK(strlen(msg) < msglen);
	FUZZ_CHECK(!strncmp(msg, "line ", msglen - 1 < 5 ? msglen - 1 : 5));
	for (const char *c = msg; *c; c++)
		FUZZ_CHECK(*c >= 0x20 && *c < 0x7f);
	if (msglen > 64) {
		const char *c = msg + 5;

		FUZZ_CHECK(*c >= '1' && *c <= '9');
		while (*c >= '0' && *c <= '9')
			c++;
		FUZZ_CHECK(!strncmp(c, ": ", 2) && c[2]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_prof *p = (struct sym_prof *)&p, *q = NULL, *r = NULL;
	char msg[256], shortmsg[6];
	char *w1 = NULL, *w2 = NULL;
	size_t n1 = 0, n2 = 0;
	int err, err2;

	memset(msg, 'x', sizeof(msg));
	err = sym_prof_read(data, size, &p, msg, sizeof(msg));
	/* The same with a short message buffer, and without one. */
	err2 = sym_prof_read(data, size, &r, shortmsg, sizeof(shortmsg));
	FUZZ_CHECK(err2 == err);
	if (err) {
		check_fail(err, p, msg, sizeof(msg));
		check_fail(err2, r, shortmsg, sizeof(shortmsg));
		FUZZ_CHECK(sym_prof_read(data, size, &r, NULL, 0) == err);
		return 0;
	}
	FUZZ_CHECK(msg[0] == '\0' && shortmsg[0] == '\0');
	sym_prof_free(r);
	check_prof(p);

	FUZZ_CHECK(write_mem(p, &w1, &n1) == 0);
	err = sym_prof_read(w1, n1, &q, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "written profile does not read back: %s\n",
			msg);
	FUZZ_CHECK(err == 0);
	check_prof(q);
	FUZZ_CHECK(same_hdr(sym_prof_header(p), sym_prof_header(q)));
	FUZZ_CHECK(fuzz_streq(sym_prof_release(p), sym_prof_release(q)));
	FUZZ_CHECK(sym_prof_nmaps(p) == sym_prof_nmaps(q));
	for (uint32_t i = 0; i < sym_prof_nmaps(p); i++)
		FUZZ_CHECK(same_map(sym_prof_map(p, i), sym_prof_map(q, i)));
	FUZZ_CHECK(sym_prof_nsources(p) == sym_prof_nsources(q));
	for (uint32_t i = 1; i <= sym_prof_nsources(p); i++)
		FUZZ_CHECK(same_source(sym_prof_source(p, i),
				       sym_prof_source(q, i)));
	FUZZ_CHECK(sym_prof_nstacks(p) == sym_prof_nstacks(q));
	for (size_t i = 0; i < sym_prof_nstacks(p); i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);
		uint64_t ns1, ns2;
		int32_t nspid1, nspid2;

		FUZZ_CHECK(same_stack(s, sym_prof_stack(q, i)));
		FUZZ_CHECK(sym_prof_stack_source(p, i) ==
			   sym_prof_stack_source(q, i));
		FUZZ_CHECK(fuzz_streq(sym_prof_process(p, s->pid, &ns1,
						       &nspid1),
				      sym_prof_process(q, s->pid, &ns2,
						       &nspid2)));
		FUZZ_CHECK(ns1 == ns2 && nspid1 == nspid2);
		FUZZ_CHECK(fuzz_streq(sym_prof_thread(p, s->tid),
				      sym_prof_thread(q, s->tid)));
	}
	FUZZ_CHECK(same_locations(p, q));
	FUZZ_CHECK(write_mem(q, &w2, &n2) == 0);
	FUZZ_CHECK(n1 == n2 && !memcmp(w1, w2, n1));
	free(w1);
	free(w2);
	sym_prof_free(p);
	sym_prof_free(q);
	return 0;
}
