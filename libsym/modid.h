/*
 * modid.h - the module ID rule, shared by libsym and libsymprof
 * (libsym/modid.c; not installed).
 *
 * A module is named by its ID everywhere: in raw profiles, in the store,
 * in symd's routes.  The rule (docs/store.md, "Module IDs"):
 *
 *   gnu   the GNU build ID (NT_GNU_BUILD_ID), as it is, of any length;
 *   go    else, when the file has a Go build ID note (owner "Go", type 4,
 *         .note.go.buildid): the first 16 bytes of
 *         SHA-256("symd-go-build-id\0" + the note's descriptor);
 *   file  else the OpenTelemetry profiler's FileID: the first 16 bytes of
 *         SHA-256(the file's first 4 KiB + its last 4 KiB + its size as
 *         8 bytes big-endian), the head and tail cut to the file's size.
 *
 * Printed in lowercase hex (32 digits for go and file).  Everything here
 * is libc only, allocates nothing and keeps no state: libsymprof
 * (tools/symprof/), which links libc alone, compiles modid.c too.
 */
#ifndef SYM_MODID_H
#define SYM_MODID_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a derived (go or file) module ID. */
#define SYMI_MODID_LEN 16
/* The head and the tail of the file ID. */
#define SYMI_MODID_PART 4096
/* The longest Go build ID note descriptor taken (Go's are 83 bytes:
 * four base64 hashes and slashes); a longer one is skipped. */
#define SYMI_GO_BUILD_ID_MAX 1024
/* The prefix hashed before a Go build ID (with its NUL). */
#define SYMI_MODID_GO_PREFIX "symd-go-build-id"

/* The note types: NT_GNU_BUILD_ID (owner "GNU"), Go's NT_GO_BUILDID
 * (owner "Go", cmd/link/internal/ld/elf.go). */
#define SYMI_NT_GNU_BUILD_ID 3
#define SYMI_NT_GO_BUILDID 4

/* SHA-256 (FIPS 180-4), incremental. */
struct symi_sha256 {
	uint32_t h[8];
	uint64_t bytes;		/* fed so far */
	uint8_t buf[64];
	size_t fill;		/* bytes of buf in use */
};

void symi_sha256_init(struct symi_sha256 *c);
void symi_sha256_update(struct symi_sha256 *c, const void *p, size_t n);
/* The digest; @c must be initialised again before reuse. */
void symi_sha256_final(struct symi_sha256 *c, uint8_t out[32]);

/*
 * symi_notes_find() - the first note of owner @name (with its NUL, as
 * n_namesz counts it: "GNU" is 4 bytes, "Go" padded is "Go\0\0") and
 * type @type in a block of notes, in the host's byte order, with a
 * descriptor of 1 to @maxdesc bytes.  The gABI layout, 4- or 8-byte
 * notes by @align (8, else 4), every size checked against @len in an
 * order that cannot overflow.
 * @param[out] desc  points into @notes
 * @return 0, or -1 when there is none (before the end, or before the
 *         first note whose sizes run past @len)
 */
int symi_notes_find(const void *notes, size_t len, size_t align,
		    const char *name, size_t namesz, uint32_t type,
		    size_t maxdesc, const uint8_t **desc, size_t *desclen);

/* The go ID of a Go build ID note's descriptor. */
void symi_modid_go(const void *desc, size_t len,
		   uint8_t out[SYMI_MODID_LEN]);

/* The file ID from the file's head (its first min(size, 4 KiB) bytes),
 * its tail (its last min(size, 4 KiB) bytes) and its size. */
void symi_modid_file(const void *head, size_t headlen, const void *tail,
		     size_t taillen, uint64_t size,
		     uint8_t out[SYMI_MODID_LEN]);

/* The file ID of the open regular file @fd of @size bytes, read with
 * pread() (the offset is not moved).  Returns 0 or -errno (-EIO for a
 * file shorter than @size). */
int symi_modid_fd(int fd, uint64_t size, uint8_t out[SYMI_MODID_LEN]);

#endif
