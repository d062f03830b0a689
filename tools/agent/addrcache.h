/*
 * addrcache.h - a fixed-size cache of small verdicts about code addresses,
 * keyed by (module, ELF address): what the recorder's return-address
 * checks (retcheck.c) and frame-pointer chain checks (fpcheck.c) remember
 * so that each address of each module is judged once.
 *
 * An open-addressing table of ADDRCACHE_SLOTS entries with linear
 * probing; it is emptied when three quarters full, so it never grows and
 * a lookup always ends.  Header-only (static inline, libc only), so that a
 * unit test that compiles one tool file on its own needs nothing more.
 * Not thread-safe: one cache per user.
 */
#ifndef SYM_TOOLS_ADDRCACHE_H
#define SYM_TOOLS_ADDRCACHE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ADDRCACHE_SLOTS 65536	/* a power of two */

struct addrcache_slot {
	uint64_t mod, addr;	/* mod == 0: empty */
	int value;
};

struct addrcache {
	struct addrcache_slot *slots;	/* owned: addrcache_fini() */
	size_t used;
	uint64_t hits;		/* addrcache_get() calls that found one */
	/* Times emptied: while it is the same, a value addrcache_get()
	 * found stays found (entries are only added in between). */
	uint64_t clears;
};

/**
 * addrcache_init() - allocate the table of @c (ADDRCACHE_SLOTS entries,
 * 1.5 MiB).
 * @return 0 or -ENOMEM
 */
static inline int addrcache_init(struct addrcache *c)
{
	memset(c, 0, sizeof(*c));
	c->slots = calloc(ADDRCACHE_SLOTS, sizeof(*c->slots));
	return c->slots ? 0 : -ENOMEM;
}

/** addrcache_fini() - free the table of @c (initialised or zeroed). */
static inline void addrcache_fini(struct addrcache *c)
{
	free(c->slots);
	c->slots = NULL;
}

/** addrcache_clear() - forget every entry of @c. */
static inline void addrcache_clear(struct addrcache *c)
{
	if (c->used) {
		memset(c->slots, 0, ADDRCACHE_SLOTS * sizeof(*c->slots));
		c->used = 0;
		c->clears++;
	}
}

/**
 * addrcache_mod() - the module key of @name (a build ID in hex, or a
 * path when the module has none): FNV-1a, never 0.
 */
static inline uint64_t addrcache_mod(const char *name)
{
	uint64_t h = 1469598103934665603ULL;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 1099511628211ULL;
	return h | 1;	/* never 0: 0 marks an empty slot */
}

static inline size_t addrcache_slot_of(uint64_t mod, uint64_t addr)
{
	return (size_t)((mod ^ (addr * 0x9e3779b97f4a7c15ULL)) >> 16) &
	       (ADDRCACHE_SLOTS - 1);
}

/**
 * addrcache_get() - the value cached for (@mod, @addr) into *@value.
 * @return true (and one more hit) when there is one
 */
static inline bool addrcache_get(struct addrcache *c, uint64_t mod,
				 uint64_t addr, int *value)
{
	size_t i = addrcache_slot_of(mod, addr);

	while (c->slots[i].mod) {
		if (c->slots[i].mod == mod && c->slots[i].addr == addr) {
			c->hits++;
			*value = c->slots[i].value;
			return true;
		}
		i = (i + 1) & (ADDRCACHE_SLOTS - 1);
	}
	return false;
}

/**
 * addrcache_put() - cache @value for (@mod, @addr), which addrcache_get()
 * has just not found; the table is emptied first when three quarters
 * full.
 */
static inline void addrcache_put(struct addrcache *c, uint64_t mod,
				 uint64_t addr, int value)
{
	size_t i;

	if (c->used >= ADDRCACHE_SLOTS / 4 * 3)
		addrcache_clear(c);
	i = addrcache_slot_of(mod, addr);
	while (c->slots[i].mod)
		i = (i + 1) & (ADDRCACHE_SLOTS - 1);
	c->slots[i].mod = mod;
	c->slots[i].addr = addr;
	c->slots[i].value = value;
	c->used++;
}

#endif /* SYM_TOOLS_ADDRCACHE_H */
