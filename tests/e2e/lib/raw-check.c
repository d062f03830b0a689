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
 * every other frame a return address but the signal trampoline's
 * (__restore_rt) and the pc the signal frame saved (right after it), and
 * a build ID on every mapping but an anonymous (JIT) one, which is named
 * by the perf map flags.
 * An alloc-mode file (docs/symprof.md, "Allocation profiles") instead
 * has weight-unit bytes, mode and event alloc, the four value types in
 * order, and per stack: the weight equal to alloc_space, alloc_objects
 * at least the count, inuse at most alloc, and a return address first
 * (the stack starts at the program's call; an exact pc follows only a
 * signal frame).
 * Prints "FILE: ok mode=M samples=N stacks=S dropped=D" per good file,
 * "FILE: <what is wrong>" otherwise; exit status 1 if any file failed.
 * Built by the Makefile as build/tests/raw-check.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym.h"
#include "sym_prof.h"
#include "base.h"

static int fail(const char *file, const char *what, unsigned long long a,
		unsigned long long b)
{
	printf("%s: %s (%llu, %llu)\n", file, what, a, b);
	return 1;
}

/* Alloc mode's promises; 0 or 1 (printed). */
static int check_alloc(const char *file, const struct sym_prof *p)
{
	static const char *const types[] = { "alloc_objects", "alloc_space",
					     "inuse_objects", "inuse_space" };

	if (sym_prof_nvalue_types(p) != 4) {
		printf("%s: %u value types, not 4\n", file,
		       sym_prof_nvalue_types(p));
		return 1;
	}
	for (uint32_t k = 0; k < 4; k++) {
		if (strcmp(sym_prof_value_type(p, k, NULL), types[k])) {
			printf("%s: value type %u is '%s'\n", file, k,
			       sym_prof_value_type(p, k, NULL));
			return 1;
		}
	}
	for (size_t i = 0; i < sym_prof_nstacks(p); i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);
		const uint64_t *v = sym_prof_stack_values(p, i);

		if (s->weight != v[1])
			return fail(file, "weight is not alloc_space", i,
				    s->weight);
		if (v[0] < s->count || v[2] > v[0] || v[3] > v[1])
			return fail(file, "objects below samples, or inuse "
				    "above alloc", i, v[2]);
		/* Exact pcs only where a signal interrupted the code. */
		if (s->nframes &&
		    !(s->frames[0].flags & SYM_PROF_FRAME_RETURN))
			return fail(file, "an alloc stack's first frame is "
				    "not a return address", i, 0);
	}
	return 0;
}

/*
 * Is frame @j of @s at the x86-64 signal-return trampoline's bytes
 * (__restore_rt: mov $15, %rax; syscall), read from its mapping's file?
 * libsymprof writes that frame, and the pc the signal frame saved after
 * it, as exact pcs (drain.c), and the program's own SIGPROF handler
 * (symprof_sigprof) can be sampled.
 */
static bool at_sigreturn(const struct sym_prof *p,
			 const struct sym_prof_stack *s, size_t j)
{
	static const unsigned char restore_rt[] = {
		0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
	};
	const struct sym_prof_frame *f = &s->frames[j];
	const struct sym_prof_map *m;
	unsigned char at[sizeof(restore_rt)];
	FILE *elf;
	bool yes;

	if ((f->flags & SYM_PROF_FRAME_RETURN) || f->map == SYM_PROF_NOMAP)
		return false;
	m = sym_prof_map(p, f->map);
	if (!m || !m->path || m->path[0] != '/' || f->addr < m->vaddr)
		return false;
	elf = fopen(m->path, "rb");
	if (!elf)
		return false;
	yes = fseeko(elf, (off_t)(f->addr - m->vaddr + m->pgoff),
		     SEEK_SET) == 0 &&
	      fread(at, 1, sizeof(at), elf) == sizeof(at) &&
	      memcmp(at, restore_rt, sizeof(at)) == 0;
	fclose(elf);
	return yes;
}

/* May frame @j (> 0, exact) of @s be exact: the trampoline, or the pc
 * the signal frame saved right after it? */
static bool signal_exact(const struct sym_prof *p,
			 const struct sym_prof_stack *s, size_t j)
{
	return at_sigreturn(p, s, j) || at_sigreturn(p, s, j - 1);
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
	bool alloc;
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
	alloc = h->mode && !strcmp(h->mode, "alloc");
	if (!h->tool || strcmp(h->tool, "libsymprof") ||
	    !h->weight_unit || strcmp(h->weight_unit, alloc ? "bytes" : "ns") ||
	    !h->mode || !h->event) {
		printf("%s: not a libsymprof file in ns (bytes)\n", file);
		goto out;
	}
	if (alloc) {
		if (strcmp(h->event, "alloc") || check_alloc(file, p)) {
			printf("%s: not a coherent alloc profile\n", file);
			goto out;
		}
	} else if (strcmp(h->mode, "thread-timer") && strcmp(h->mode, "wall") &&
	    strcmp(h->mode, "process-timer")) {
		printf("%s: mode '%s'\n", file, h->mode);
		goto out;
	}
	if (!alloc &&
	    strcmp(h->event, strcmp(h->mode, "wall") ? "cpu-clock" : "wall")) {
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
		if (s->count == 0 ||
		    (!alloc && s->weight < s->count * h->period)) {
			rc = fail(file, "weight below count x period",
				  s->weight, s->count);
			goto out;
		}
		for (j = 0; j < s->nframes; j++) {
			int ret = !!(s->frames[j].flags &
				     SYM_PROF_FRAME_RETURN);

			if (!alloc && ret != (j > 0) &&
			    !(j > 0 && !ret && signal_exact(p, s, j))) {
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

		if (m->kind == SYM_PROF_MAP_ANON && !m->build_id && !m->path)
			continue;
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
