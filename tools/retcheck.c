/*
 * retcheck.c - return addresses that follow a call (retcheck.h).
 *
 * The cache is an open-addressing table of CACHE_SLOTS verdicts keyed by
 * a hash of the module (build ID, else path) and the ELF address; it is
 * emptied when three quarters full, so it never grows.  One file stays
 * open between lookups, since consecutive misses tend to be in one module.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "retcheck.h"
#include "banned.h"

#define CACHE_SLOTS 65536

struct slot {
	uint64_t mod, addr;	/* mod == 0: empty */
	int verdict;
};

struct retcheck {
	struct slot *slots;
	size_t used;
	int fd;			/* open_path of the last miss, or -1 */
	char *fd_path;
	uint64_t reads, hits;
};

/* Length of the FF /2 instruction whose ModRM byte is @modrm and SIB
 * byte (if any) @sib; 0 when it is not a call. */
static size_t ff2_len(unsigned char modrm, unsigned char sib)
{
	unsigned mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
	size_t len = 2;

	if (reg != 2)
		return 0;
	if (mod == 3)
		return len;
	if (rm == 4) {
		len++;
		if (mod == 0 && (sib & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4;	/* RIP-relative */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

bool retcheck_decode(const unsigned char *before, const unsigned char *at)
{
	static const unsigned char sigreturn[RETCHECK_AT] = {
		0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	const unsigned char *end = before + RETCHECK_BEFORE;
	size_t k;

	if (end[-5] == 0xe8)
		return true;
	for (k = 2; k <= 7; k++) {
		if (end[-(long)k] == 0xff &&
		    ff2_len(end[1 - (long)k], k >= 3 ? end[2 - (long)k] : 0) ==
			    k)
			return true;
	}
	return memcmp(at, sigreturn, sizeof(sigreturn)) == 0;
}

int retcheck_new(struct retcheck **out)
{
	struct retcheck *rc = calloc(1, sizeof(*rc));

	*out = NULL;
	if (!rc)
		return -ENOMEM;
	rc->slots = calloc(CACHE_SLOTS, sizeof(*rc->slots));
	if (!rc->slots) {
		free(rc);
		return -ENOMEM;
	}
	rc->fd = -1;
	*out = rc;
	return 0;
}

void retcheck_free(struct retcheck *rc)
{
	if (!rc)
		return;
	if (rc->fd >= 0)
		close(rc->fd);
	free(rc->fd_path);
	free(rc->slots);
	free(rc);
}

static uint64_t mod_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h | 1;	/* never 0: 0 marks an empty slot */
}

static int read_bytes(struct retcheck *rc, const struct pm_map *m,
		      uint64_t pc, unsigned char *buf)
{
	uint64_t off = pc - m->start + m->pgoff;
	size_t n = RETCHECK_BEFORE + RETCHECK_AT;
	ssize_t got;

	if (!m->open_path || off < RETCHECK_BEFORE)
		return -ENOENT;
	if (rc->fd < 0 || strcmp(rc->fd_path, m->open_path) != 0) {
		if (rc->fd >= 0)
			close(rc->fd);
		free(rc->fd_path);
		rc->fd_path = strdup(m->open_path);
		rc->fd = rc->fd_path ? open(m->open_path,
					    O_RDONLY | O_CLOEXEC) : -1;
		if (rc->fd < 0)
			return -ENOENT;
	}
	memset(buf, 0, n);
	got = pread(rc->fd, buf, n, (off_t)(off - RETCHECK_BEFORE));
	if (got < RETCHECK_BEFORE)
		return -EIO;
	return 0;
}

int retcheck_ok(struct retcheck *rc, const struct pm_map *m, uint64_t pc)
{
	unsigned char buf[RETCHECK_BEFORE + RETCHECK_AT];
	uint64_t mod, addr = pc - m->start + m->vaddr;
	size_t i;
	int v;

	if (m->kind != PM_FILE)
		return -1;
	mod = mod_hash(m->build_id[0] ? m->build_id : m->path);
	i = (size_t)((mod ^ (addr * 0x9e3779b97f4a7c15ULL)) >> 16) &
	    (CACHE_SLOTS - 1);
	while (rc->slots[i].mod) {
		if (rc->slots[i].mod == mod && rc->slots[i].addr == addr) {
			rc->hits++;
			return rc->slots[i].verdict;
		}
		i = (i + 1) & (CACHE_SLOTS - 1);
	}
	rc->reads++;
	if (read_bytes(rc, m, pc, buf) != 0)
		v = -1;
	else
		v = retcheck_decode(buf, buf + RETCHECK_BEFORE) ? 1 : 0;
	if (rc->used >= CACHE_SLOTS / 4 * 3) {
		memset(rc->slots, 0, CACHE_SLOTS * sizeof(*rc->slots));
		rc->used = 0;
		i = (size_t)((mod ^ (addr * 0x9e3779b97f4a7c15ULL)) >> 16) &
		    (CACHE_SLOTS - 1);
	}
	rc->slots[i].mod = mod;
	rc->slots[i].addr = addr;
	rc->slots[i].verdict = v;
	rc->used++;
	return v;
}

void retcheck_stats(const struct retcheck *rc, uint64_t *reads,
		    uint64_t *hits)
{
	*reads = rc->reads;
	*hits = rc->hits;
}
