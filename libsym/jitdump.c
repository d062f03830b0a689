/*
 * jitdump.c - the reader of perf's jitdump files (jitdump.h has the
 * format and the rules).  libc only: no allocation, no logging.
 */
#include <string.h>

#include "jitdump.h"
#include "perfmap.h"

#include "base.h"

#define PREFIX 16u		/* id, total_size, timestamp */
#define LOAD_FIXED 40u		/* pid, tid, vma, code_addr, size, index */
#define MOVE_FIXED 48u		/* pid, tid, vma, old, new, size, index */

static uint32_t rd32(const unsigned char *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const unsigned char *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

int symi_jitdump_header(const void *buf, size_t len,
			struct symi_jitdump_hdr *h, size_t *off,
			const char **why)
{
	const unsigned char *p = buf;
	uint32_t magic, total;

	memset(h, 0, sizeof(*h));
	if (len < SYMI_JITDUMP_HDR_MIN) {
		*why = "header cut short";
		return -1;
	}
	magic = rd32(p, false);
	if (magic == __builtin_bswap32(SYMI_JITDUMP_MAGIC))
		h->swapped = true;
	else if (magic != SYMI_JITDUMP_MAGIC) {
		*why = "not a jitdump (bad magic)";
		return -1;
	}
	h->version = rd32(p + 4, h->swapped);
	total = rd32(p + 8, h->swapped);
	h->elf_mach = rd32(p + 12, h->swapped);
	h->pid = rd32(p + 20, h->swapped);
	h->timestamp = rd64(p + 24, h->swapped);
	h->flags = rd64(p + 32, h->swapped);
	if (h->version != 1) {
		*why = "jitdump version other than 1";
		return -1;
	}
	if (total < SYMI_JITDUMP_HDR_MIN || total > len) {
		*why = "header size impossible";
		return -1;
	}
	*off = total;
	return 0;
}

/* The body of a load at @b (@n bytes past the prefix). */
static const char *load_body(const unsigned char *b, size_t n, bool swap,
			     struct symi_jitdump_rec *r)
{
	const unsigned char *nul;
	size_t room;

	if (n < LOAD_FIXED)
		return "load record too short";
	r->pid = rd32(b, swap);
	r->tid = rd32(b + 4, swap);
	r->addr = rd64(b + 16, swap);
	r->size = rd64(b + 24, swap);
	r->code_index = rd64(b + 32, swap);
	room = n - LOAD_FIXED;
	nul = memchr(b + LOAD_FIXED, '\0', room < SYMI_JITDUMP_NAME_MAX + 1 ?
					       room : SYMI_JITDUMP_NAME_MAX + 1);
	if (!nul)
		return "load name not NUL-terminated within its limit";
	r->name = (const char *)b + LOAD_FIXED;
	r->namelen = (size_t)(nul - (b + LOAD_FIXED));
	if (!r->namelen)
		return "load with an empty name";
	if (r->size > room - r->namelen - 1)
		return "load record shorter than its code";
	return NULL;
}

/* The body of a move at @b (@n bytes past the prefix). */
static const char *move_body(const unsigned char *b, size_t n, bool swap,
			     struct symi_jitdump_rec *r)
{
	if (n < MOVE_FIXED)
		return "move record too short";
	r->pid = rd32(b, swap);
	r->tid = rd32(b + 4, swap);
	r->old_addr = rd64(b + 16, swap);
	r->addr = rd64(b + 24, swap);
	r->size = rd64(b + 32, swap);
	r->code_index = rd64(b + 40, swap);
	return NULL;
}

int symi_jitdump_next(const void *buf, size_t len,
		      const struct symi_jitdump_hdr *h, size_t *off,
		      struct symi_jitdump_rec *r, const char **why)
{
	const unsigned char *p = buf;
	uint32_t total;

	for (;;) {
		*why = NULL;
		if (*off >= len)
			return 0;
		if (len - *off < PREFIX) {
			*why = "last record cut short";
			return 0;
		}
		memset(r, 0, sizeof(*r));
		r->off = *off;
		r->id = rd32(p + *off, h->swapped);
		total = rd32(p + *off + 4, h->swapped);
		r->timestamp = rd64(p + *off + 8, h->swapped);
		if (total < PREFIX) {
			*why = "record size smaller than its prefix";
			return 0;
		}
		if (total > len - *off) {
			*why = "last record cut short";
			return 0;
		}
		*off += total;
		if (r->id == SYMI_JITDUMP_LOAD)
			*why = load_body(p + r->off + PREFIX, total - PREFIX,
					 h->swapped, r);
		else if (r->id == SYMI_JITDUMP_MOVE)
			*why = move_body(p + r->off + PREFIX, total - PREFIX,
					 h->swapped, r);
		else
			continue;
		if (!*why && (!r->size || r->size > SYMI_PERFMAP_SIZE_MAX ||
			      r->addr + r->size < r->addr))
			*why = "code size zero, absurd, or past 2^64";
		return *why ? -1 : 1;
	}
}
