/*
 * fuzz-notes.c - libFuzzer target over sym_notes_build_id() (libsym/elf.c),
 * the one parser of GNU build-ID notes: libsym's ELF reader, the
 * recorder's (tools/agent/procmaps.c) and its frame-pointer check
 * (tools/agent/fpcheck.c) all go through it; and over the note walker
 * under it, symi_notes_find() (libsym/modid.c), as libsym, the recorder
 * and libsymprof look for Go's build ID note (owner "Go", type 4, up to
 * 1024 bytes), checked against the same naive parser.
 *
 * Input: byte 0 chooses the alignment (bit 0: 8, else 4) and the size of
 * the caller's hex buffer (bits 1-2: 129, 41, 1 or 0 bytes); the rest is
 * the block of notes, in a buffer of exactly its size (so ASan sees any
 * read past it).  Checked against sym.h: the answer is 0, -SYM_E_NOTFOUND
 * or -ERANGE (this last only when the buffer is smaller than 129 bytes);
 * on 0 the ID is 2 to 128 lowercase hex digits, NUL-terminated, that fit
 * the buffer; on failure the buffer is untouched.  And it is the answer
 * of a second, naive parser written here from the gABI (64-bit sums, no
 * shortcuts).
 */
#include "fuzz.h"

#include <stdbool.h>
#include "modid.h"
#include "base.h"

/* The gABI, read slowly: the first note of type @type, owner @name
 * (@namesz bytes) and a 1 to @maxdesc-byte descriptor, until a note's
 * sizes run past the end; its descriptor's offset and size. */
static bool ref_find(const uint8_t *p, uint64_t len, uint64_t align,
		     const char *want, uint32_t wantsz, uint32_t wtype,
		     uint32_t maxdesc, uint64_t *off, uint32_t *dlen)
{
	uint64_t pos = 0;

	while (pos + 12 <= len) {
		uint32_t namesz, descsz, type;
		uint64_t name, desc, next;

		memcpy(&namesz, p + pos, 4);
		memcpy(&descsz, p + pos + 4, 4);
		memcpy(&type, p + pos + 8, 4);
		name = pos + 12;
		if (name + namesz > len)
			return false;
		desc = (name + namesz + align - 1) / align * align;
		if (desc + descsz > len)
			return false;
		if (type == wtype && namesz == wantsz &&
		    !memcmp(p + name, want, wantsz) && descsz >= 1 &&
		    descsz <= maxdesc) {
			*off = desc;
			*dlen = descsz;
			return true;
		}
		next = (desc + descsz + align - 1) / align * align;
		pos = next;
	}
	return false;
}

/* The first NT_GNU_BUILD_ID note's descriptor in hex. */
static bool ref_build_id(const uint8_t *p, uint64_t len, uint64_t align,
			 char *hex)
{
	uint64_t desc;
	uint32_t descsz;

	if (!ref_find(p, len, align, "GNU", 4, 3, 64, &desc, &descsz))
		return false;
	for (uint32_t i = 0; i < descsz; i++)
		snprintf(hex + 2 * i, 3, "%02x", p[desc + i]);
	return true;
}

/* symi_notes_find() for Go's build ID note against ref_find(). */
static void check_go(const uint8_t *notes, size_t n, size_t align)
{
	const uint8_t *d = NULL;
	size_t dn = 0;
	uint64_t off;
	uint32_t len;
	bool found = ref_find(notes, n, align, "Go\0\0", 4,
			      SYMI_NT_GO_BUILDID, SYMI_GO_BUILD_ID_MAX, &off,
			      &len);
	int rc = symi_notes_find(n ? notes : NULL, n, align, "Go\0\0", 4,
				 SYMI_NT_GO_BUILDID, SYMI_GO_BUILD_ID_MAX, &d,
				 &dn);

	FUZZ_CHECK(found == (rc == 0));
	if (found)
		FUZZ_CHECK(d == notes + off && dn == len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t hexlens[4] = { 129, 41, 1, 0 };
	char hex[129], want[129];
	size_t align, hexlen, n, i;
	uint8_t *notes;
	bool found;
	int rc;

	if (size < 1)
		return 0;
	align = data[0] & 1 ? 8 : 4;
	hexlen = hexlens[(data[0] >> 1) & 3];
	n = size - 1;
	notes = malloc(n ? n : 1);
	if (!notes)
		return 0;
	memcpy(notes, data + 1, n);
	memset(hex, 'x', sizeof(hex));
	rc = sym_notes_build_id(n ? notes : NULL, n, align,
				hexlen ? hex : (char *)notes, hexlen);
	found = ref_build_id(notes, n, align, want);
	FUZZ_CHECK(rc == 0 || rc == -SYM_E_NOTFOUND || rc == -ERANGE);
	FUZZ_CHECK(found == (rc != -SYM_E_NOTFOUND));
	if (rc == 0) {
		size_t len = strlen(hex);

		FUZZ_CHECK(len >= 2 && len <= 128 && len % 2 == 0 &&
			   len < hexlen);
		FUZZ_CHECK(strspn(hex, "0123456789abcdef") == len);
		FUZZ_CHECK(strcmp(hex, want) == 0);
	} else if (rc == -ERANGE) {
		FUZZ_CHECK(hexlen < 2 * strlen(want) + 1);
	}
	if (rc != 0 && hexlen)
		for (i = 0; i < sizeof(hex); i++)
			FUZZ_CHECK(hex[i] == 'x');
	check_go(notes, n, align);
	free(notes);
	return 0;
}
