/*
 * fuzz.h - what the fuzz targets share: the libFuzzer entry point, a
 * contract check that aborts (so libFuzzer and the replay both report it as
 * a crash), and helpers that make AddressSanitizer read every byte of the
 * strings a lookup returns.
 *
 * The targets code against libsym/sym.h only, like any other client.
 */
#ifndef SYM_FUZZ_H
#define SYM_FUZZ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym.h"
#include "sym_prof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * FUZZ_CHECK() - a documented contract of sym.h holds.  A violation is a
 * bug as real as a crash, so it ends the process the same way.
 */
#define FUZZ_CHECK(expr)                                                     \
	do {                                                                 \
		if (!(expr)) {                                               \
			fprintf(stderr, "%s:%d: contract violated: %s\n",    \
				__FILE__, __LINE__, #expr);                  \
			abort();                                             \
		}                                                            \
	} while (0)

/* Sink for the bytes we read, so the compiler cannot drop the reads. */
static volatile size_t fuzz_sink;

/* Read every byte of @s (NULL is fine): ASan flags a string that runs off
 * its buffer.  With @strict, also hold sym.h's promise that unknown
 * strings are NULL, never "". */
static inline void fuzz_touch_str(const char *s, int strict)
{
	if (s) {
		if (strict)
			FUZZ_CHECK(s[0] != '\0');
		fuzz_sink += strlen(s);
	}
}

/*
 * Read every field of @n frames.  @strict: the table was built by libsym
 * from the input, so its documented promises must hold too.  A table read
 * from corrupt bytes (fuzz-table) only promises not to crash: wrong
 * answers are allowed there.
 */
static inline void fuzz_touch_frames(const struct sym_frame *fr, size_t n,
				     int strict)
{
	for (size_t i = 0; i < n; i++) {
		fuzz_touch_str(fr[i].name, strict);
		fuzz_touch_str(fr[i].linkage_name, strict);
		fuzz_touch_str(fr[i].demangled, strict);
		fuzz_touch_str(fr[i].file, strict);
		fuzz_touch_str(fr[i].decl_file, strict);
		fuzz_touch_str(fr[i].symbol, strict);
		fuzz_sink += fr[i].line + fr[i].column + fr[i].discriminator +
			     fr[i].decl_line + fr[i].entry + fr[i].flags +
			     fr[i].symbol_addr + fr[i].symbol_size;
		if (!strict)
			continue;
		/* The symbol is reported on the outermost frame only. */
		if (i + 1 < n)
			FUZZ_CHECK(fr[i].symbol == NULL);
		if (!fr[i].symbol)
			FUZZ_CHECK(fr[i].symbol_addr == 0);
	}
}

/* Equal strings, both NULL counting as equal. */
static inline int fuzz_streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Two lookups of the same address in two views of the same bytes agree. */
static inline int fuzz_frames_equal(const struct sym_frame *a, size_t na,
				    const struct sym_frame *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++) {
		if (a[i].line != b[i].line || a[i].column != b[i].column ||
		    a[i].discriminator != b[i].discriminator ||
		    a[i].decl_line != b[i].decl_line ||
		    a[i].entry != b[i].entry || a[i].flags != b[i].flags ||
		    a[i].symbol_addr != b[i].symbol_addr ||
		    a[i].symbol_size != b[i].symbol_size ||
		    !fuzz_streq(a[i].name, b[i].name) ||
		    !fuzz_streq(a[i].linkage_name, b[i].linkage_name) ||
		    !fuzz_streq(a[i].demangled, b[i].demangled) ||
		    !fuzz_streq(a[i].file, b[i].file) ||
		    !fuzz_streq(a[i].decl_file, b[i].decl_file) ||
		    !fuzz_streq(a[i].symbol, b[i].symbol))
			return 0;
	}
	return 1;
}

/* Little-endian u64 from up to 8 bytes at @p. */
static inline uint64_t fuzz_u64(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Silence libsym's warnings: corrupt input makes many of them, and
 * printing them slows the fuzzer down a lot. */
static inline void fuzz_quiet_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	fuzz_sink += strlen(msg);
}

/* The symbolization's invariants: each location found again by its
 * frame, a known status, lines only when ok, known flags. */
static inline void fuzz_check_locations(const struct sym_prof *p)
{
	size_t n = sym_prof_nlocations(p), nmaps = sym_prof_nmaps(p);

	FUZZ_CHECK(!n || sym_prof_symbolized(p));
	for (size_t i = 0; i < n; i++) {
		const struct sym_prof_line *l, *l2;
		struct sym_prof_frame f;
		uint32_t st, st2;
		size_t nl, nl2;

		FUZZ_CHECK(sym_prof_location_at(p, i, &f, &st, &l, &nl) == 0);
		FUZZ_CHECK(f.map == SYM_PROF_NOMAP || f.map < nmaps);
		FUZZ_CHECK(!(f.flags & ~(uint32_t)SYM_PROF_FRAME_RETURN));
		FUZZ_CHECK(st < SYM_PROF_LOC_NSTATUS);
		FUZZ_CHECK((st == SYM_PROF_LOC_OK) == (nl > 0) &&
			   nl <= SYM_PROF_MAX_LINES);
		FUZZ_CHECK(sym_prof_location(p, &f, &st2, &l2, &nl2) == 0);
		FUZZ_CHECK(st2 == st && l2 == l && nl2 == nl);
		for (size_t k = 0; k < nl; k++) {
			FUZZ_CHECK(l[k].flags == 0 ||
				   l[k].flags == SYM_PROF_LINE_INLINED ||
				   l[k].flags == SYM_PROF_LINE_SYMTAB);
			fuzz_touch_str(l[k].function, 1);
			fuzz_touch_str(l[k].file, 1);
		}
	}
	FUZZ_CHECK(sym_prof_location_at(p, n, NULL, NULL, NULL, NULL) ==
		   -SYM_E_NOTFOUND);
}

#endif /* SYM_FUZZ_H */
