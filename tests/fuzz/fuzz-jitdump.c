/*
 * fuzz-jitdump.c - libFuzzer target over the jitdump reader
 * (libsym/jitdump.c): jit-PID.dump is written by whatever runtime runs
 * as the profiled process, and read by sym record.
 *
 * The input is one jitdump, copied into a buffer of exactly its size.
 * When symi_jitdump_header() takes it, symi_jitdump_next() must walk it
 * with the offset always moving on and never past the input, each
 * record starting where the last one ended or later (other records are
 * stepped over), and each load or move keeping jitdump.h's rules (a size
 * of 1 to 4 GiB, no range past 2^64; a load's name of 1 to
 * SYMI_JITDUMP_NAME_MAX bytes inside the input, NUL-terminated, with
 * room for its code after it); each skipped record and an early stop
 * say why.
 */
#include "fuzz.h"
#include "jitdump.h"
#include "perfmap.h"

#include "base.h"

static void check_rec(const char *buf, size_t len, size_t prev, size_t off,
		      const struct symi_jitdump_rec *r)
{
	FUZZ_CHECK(r->off >= prev && r->off < off && off <= len);
	FUZZ_CHECK(r->id == SYMI_JITDUMP_LOAD || r->id == SYMI_JITDUMP_MOVE);
	FUZZ_CHECK(r->size > 0 && r->size <= SYMI_PERFMAP_SIZE_MAX);
	FUZZ_CHECK(r->addr + r->size > r->addr);
	if (r->id == SYMI_JITDUMP_MOVE) {
		FUZZ_CHECK(!r->name && !r->namelen);
		return;
	}
	FUZZ_CHECK(r->namelen >= 1 && r->namelen <= SYMI_JITDUMP_NAME_MAX);
	FUZZ_CHECK(r->name > buf + r->off && r->name + r->namelen < buf + off);
	FUZZ_CHECK(r->name[r->namelen] == '\0');
	FUZZ_CHECK(!memchr(r->name, '\0', r->namelen));
	FUZZ_CHECK(r->size <= (size_t)(buf + off - (r->name + r->namelen + 1)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	struct symi_jitdump_hdr h;
	struct symi_jitdump_rec r;
	size_t off = 0, prev;
	const char *why = NULL;
	int rc;

	FUZZ_CHECK(buf);
	if (size)
		memcpy(buf, data, size);
	if (symi_jitdump_header(buf, size, &h, &off, &why)) {
		FUZZ_CHECK(why && *why);
		free(buf);
		return 0;
	}
	FUZZ_CHECK(off >= SYMI_JITDUMP_HDR_MIN && off <= size);
	FUZZ_CHECK(h.version == 1);
	prev = off;
	while ((rc = symi_jitdump_next(buf, size, &h, &off, &r, &why))) {
		FUZZ_CHECK(off > prev && off <= size);
		if (rc < 0)
			FUZZ_CHECK(why && *why && r.off >= prev && r.off < off);
		else
			check_rec(buf, size, prev, off, &r);
		prev = off;
	}
	FUZZ_CHECK(off <= size);
	FUZZ_CHECK(!why || *why);
	free(buf);
	return 0;
}
