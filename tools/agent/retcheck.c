/*
 * retcheck.c - return addresses that follow a call (retcheck.h).
 *
 * Verdicts are cached by module and ELF address (addrcache.h).  One file
 * stays open between lookups, since consecutive misses tend to be in one
 * module.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrcache.h"
#include "retcheck.h"
#include "base.h"


struct retcheck {
	struct addrcache cache;
	int fd;			/* open_path of the last miss, or -1 */
	char *fd_path;
	uint64_t reads;
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
	/* Go's runtime.goexit, NOP; CALL runtime.goexit1; NOP: every
	 * goroutine starts with goexit + 1 as its return address
	 * (runtime/proc.go newproc1(), gostartcallfn()), a fake one that
	 * follows the NOP. */
	if (end[-1] == 0x90 && at[0] == 0xe8 && at[5] == 0x90)
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
	if (addrcache_init(&rc->cache)) {
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
	addrcache_fini(&rc->cache);
	free(rc);
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
	int v;

	if (m->kind != PM_FILE)
		return -1;
	mod = pm_map_key(m);
	if (addrcache_get(&rc->cache, mod, addr, &v))
		return v;
	rc->reads++;
	if (read_bytes(rc, m, pc, buf) != 0)
		v = -1;
	else
		v = retcheck_decode(buf, buf + RETCHECK_BEFORE) ? 1 : 0;
	addrcache_put(&rc->cache, mod, addr, v);
	return v;
}

uint64_t retcheck_epoch(const struct retcheck *rc)
{
	return rc->cache.clears;
}

void retcheck_stats(const struct retcheck *rc, uint64_t *reads,
		    uint64_t *hits)
{
	*reads = rc->reads;
	*hits = rc->cache.hits;
}
