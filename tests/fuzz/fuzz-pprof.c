/*
 * fuzz-pprof.c - libFuzzer target over the pprof reader and writer.
 *
 * One input is one file's bytes, gzipped or not.  sym_prof_read_pprof()
 * must return 0 or one of its documented errors with a message, never
 * crash.  When it accepts the input, the profile it built must keep the
 * model's promises (frames name maps that exist, build IDs are lowercase
 * hex, stacks at most SYM_PROF_MAX_FRAMES deep), and it must survive a
 * round trip: sym_prof_write_pprof() into a memfd, read back, gives an
 * equal profile (the "#sym-" comments carry what pprof cannot say), and
 * a second write gives the same bytes.  A symbolized profile's locations
 * (lines, statuses) must come back equal too.
 *
 * In memory only: the memfd is not a file on disk.
 */
#include "fuzz.h"
#include "../unit/prof-test.h"

#include <errno.h>
#include <sys/mman.h>
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
	       memcmp(a->flagged, b->flagged, sizeof(a->flagged)) == 0 &&
	       a->pidns == b->pidns;
}

/* @p keeps sym_prof.h's promises; returns its number of frames. */
static size_t check_model(const struct sym_prof *p)
{
	size_t i, j, nm = sym_prof_nmaps(p), n = 0;

	for (i = 0; i < nm; i++) {
		const struct sym_prof_map *m = sym_prof_map(p, (uint32_t)i);
		const char *b = m->build_id;

		FUZZ_CHECK(m && m->id == i && m->start <= m->end);
		FUZZ_CHECK(m->kind <= SYM_PROF_MAP_ANON && m->pid >= -1);
		if (b) {
			FUZZ_CHECK(strlen(b) >= 2 && strlen(b) <= 128 &&
				   strlen(b) % 2 == 0);
			FUZZ_CHECK(strspn(b, "0123456789abcdef") == strlen(b));
		}
		fuzz_touch_str(m->path, 1);
	}
	for (i = 0; i < sym_prof_nstacks(p); i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);

		FUZZ_CHECK(s->nframes <= SYM_PROF_MAX_FRAMES);
		FUZZ_CHECK(s->pid >= 0 && s->tid >= 0);
		for (j = 0; j < s->nframes; j++)
			FUZZ_CHECK(s->frames[j].map == SYM_PROF_NOMAP ||
				   s->frames[j].map < nm);
		n += s->nframes;
	}
	fuzz_check_locations(p);
	return n;
}

static int same_prof(const struct sym_prof *a, const struct sym_prof *b)
{
	size_t i;

	if (!same_hdr(sym_prof_header(a), sym_prof_header(b)) ||
	    !fuzz_streq(sym_prof_release(a), sym_prof_release(b)) ||
	    sym_prof_nmaps(a) != sym_prof_nmaps(b) ||
	    sym_prof_nstacks(a) != sym_prof_nstacks(b))
		return 0;
	for (i = 0; i < sym_prof_nmaps(a); i++) {
		const struct sym_prof_map *x = sym_prof_map(a, (uint32_t)i);
		const struct sym_prof_map *y = sym_prof_map(b, (uint32_t)i);

		if (x->kind != y->kind || x->pid != y->pid ||
		    x->flags != y->flags || x->start != y->start ||
		    x->end != y->end || x->pgoff != y->pgoff ||
		    x->vaddr != y->vaddr ||
		    !fuzz_streq(x->build_id, y->build_id) ||
		    !fuzz_streq(x->path, y->path))
			return 0;
	}
	for (i = 0; i < sym_prof_nstacks(a); i++) {
		const struct sym_prof_stack *x = sym_prof_stack(a, i);
		const struct sym_prof_stack *y = sym_prof_stack(b, i);

		if (x->count != y->count || x->weight != y->weight ||
		    x->pid != y->pid || x->tid != y->tid ||
		    x->flags != y->flags || x->nframes != y->nframes ||
		    (x->nframes &&
		     memcmp(x->frames, y->frames,
			    x->nframes * sizeof(*x->frames)) != 0))
			return 0;
	}
	return same_locations(a, b);
}

/* Write @p as pprof into a new memfd; its bytes in *buf (malloc). */
static int write_pprof_mem(const struct sym_prof *p, uint8_t **buf,
			   size_t *len)
{
	int fd = memfd_create("fuzz-pprof", MFD_CLOEXEC), err;
	off_t end;

	FUZZ_CHECK(fd >= 0);
	err = sym_prof_write_pprof(p, fd);
	if (!err) {
		end = lseek(fd, 0, SEEK_END);
		*buf = malloc((size_t)end + 1);
		FUZZ_CHECK(*buf);
		*len = (size_t)pread(fd, *buf, (size_t)end, 0);
		FUZZ_CHECK(*len == (size_t)end);
	}
	close(fd);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_prof *p = NULL, *q = NULL;
	uint8_t *b1 = NULL, *b2 = NULL;
	size_t l1 = 0, l2 = 0;
	char msg[256];
	int err;

	msg[0] = '\0';
	err = sym_prof_read_pprof(data, size, &p, msg, sizeof(msg));
	if (err) {
		FUZZ_CHECK(p == NULL);
		FUZZ_CHECK(err == -SYM_E_BADPROFILE || err == -ENOMEM ||
			   err == -E2BIG);
		/* A message for every refusal but running out of memory. */
		FUZZ_CHECK(err == -ENOMEM || msg[0] != '\0');
		return 0;
	}
	check_model(p);

	err = write_pprof_mem(p, &b1, &l1);
	/* Summed counts can pass what pprof's int64 holds. */
	FUZZ_CHECK(err == 0 || err == -ERANGE);
	if (err)
		goto out;
	err = sym_prof_read_pprof(b1, l1, &q, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "re-read failed: %d %s\n", err, msg);
	FUZZ_CHECK(err == 0);
	FUZZ_CHECK(same_prof(p, q));
	FUZZ_CHECK(write_pprof_mem(q, &b2, &l2) == 0);
	FUZZ_CHECK(l1 == l2 && memcmp(b1, b2, l1) == 0);
out:
	free(b1);
	free(b2);
	sym_prof_free(p);
	sym_prof_free(q);
	return 0;
}
