/*
 * raw-check.c - check files written by libsymprof with libsym's reader
 * (sym_prof_read()), for the t4000-symprof-* tests.
 *
 *	raw-check FILE...
 *
 * Each file must parse, and beyond what the reader enforces, hold what
 * libsymprof promises: tool libsymprof, weight-unit ns, a libsymprof mode
 * and event, `samples` equal to the sum of the stacks' counts, each
 * `flagged` count equal to the samples of the stacks with that flag, a
 * weight of at least count x period per stack, the leaf an exact pc and
 * every other frame a return address, and a build ID on every mapping.
 * Prints "FILE: ok mode=M samples=N stacks=S dropped=D" per good file,
 * "FILE: <what is wrong>" otherwise; exit status 1 if any file failed.
 * Built by the Makefile as build/tests/raw-check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym.h"
#include "sym_prof.h"

static int fail(const char *file, const char *what, unsigned long long a,
		unsigned long long b)
{
	printf("%s: %s (%llu, %llu)\n", file, what, a, b);
	return 1;
}

static int check(const char *file)
{
	struct sym_prof *p = NULL;
	const struct sym_prof_header *h;
	uint64_t sum = 0, flagged[SYM_PROF_NFLAGS] = { 0 };
	char msg[256];
	char *buf = NULL;
	size_t len = 0, i, j;
	FILE *f = fopen(file, "rb");
	int err, rc = 1;

	if (!f) {
		printf("%s: %s\n", file, strerror(errno));
		return 1;
	}
	for (;;) {
		char *nb = realloc(buf, len + 65536);
		size_t n;

		if (!nb) {
			printf("%s: out of memory\n", file);
			goto out;
		}
		buf = nb;
		n = fread(buf + len, 1, 65536, f);
		len += n;
		if (n < 65536)
			break;
	}
	err = sym_prof_read(buf, len, &p, msg, sizeof(msg));
	if (err) {
		char eb[128];

		printf("%s: %s: %s\n", file, sym_strerror(err, eb, sizeof(eb)),
		       msg);
		goto out;
	}
	h = sym_prof_header(p);
	if (!h->tool || strcmp(h->tool, "libsymprof") ||
	    !h->weight_unit || strcmp(h->weight_unit, "ns") || !h->mode ||
	    !h->event) {
		printf("%s: not a libsymprof file in ns\n", file);
		goto out;
	}
	if (strcmp(h->mode, "thread-timer") && strcmp(h->mode, "wall") &&
	    strcmp(h->mode, "process-timer")) {
		printf("%s: mode '%s'\n", file, h->mode);
		goto out;
	}
	if (strcmp(h->event, strcmp(h->mode, "wall") ? "cpu-clock" : "wall")) {
		printf("%s: event '%s' with mode '%s'\n", file, h->event,
		       h->mode);
		goto out;
	}
	for (i = 0; i < sym_prof_nstacks(p); i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);

		sum += s->count;
		for (j = 0; j < SYM_PROF_NFLAGS; j++)
			if (s->flags & (1u << j))
				flagged[j] += s->count;
		if (s->count == 0 || s->weight < s->count * h->period) {
			rc = fail(file, "weight below count x period",
				  s->weight, s->count);
			goto out;
		}
		for (j = 0; j < s->nframes; j++) {
			int ret = !!(s->frames[j].flags &
				     SYM_PROF_FRAME_RETURN);

			if (ret != (j > 0)) {
				rc = fail(file, "frame kind (p leaf, r others)",
					  i, j);
				goto out;
			}
		}
	}
	if (sum != h->samples) {
		rc = fail(file, "samples differ from the stacks' sum",
			  h->samples, sum);
		goto out;
	}
	for (j = 0; j < SYM_PROF_NFLAGS; j++) {
		if (flagged[j] != h->flagged[j]) {
			rc = fail(file, "flagged count differs", j,
				  h->flagged[j]);
			goto out;
		}
	}
	for (i = 0; i < sym_prof_nmaps(p); i++) {
		const struct sym_prof_map *m = sym_prof_map(p, (uint32_t)i);

		if (!m->build_id) {
			printf("%s: map %zu (%s) has no build ID\n", file, i,
			       m->path ? m->path : "-");
			goto out;
		}
	}
	printf("%s: ok mode=%s samples=%llu stacks=%zu dropped=%llu\n", file,
	       h->mode, (unsigned long long)h->samples, sym_prof_nstacks(p),
	       (unsigned long long)h->dropped);
	rc = 0;
out:
	sym_prof_free(p);
	free(buf);
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: raw-check FILE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++)
		rc |= check(argv[i]);
	return rc;
}
