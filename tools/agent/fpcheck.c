/*
 * fpcheck.c - classify the return addresses of frame-pointer callchains
 * (fpcheck.h).
 *
 * Verdicts are cached by module and ELF address (addrcache.h), as in
 * retcheck.c.  Start sites are a short array searched on cache misses
 * only.
 */
#include <elf.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "addrcache.h"
#include "fpcheck.h"
#include "sym.h"
#include "base.h"

#define LEARN_DEPTH 64

struct site {
	char build_id[2 * PM_BUILD_ID_MAX + 1];
	uint64_t vaddr;
};

struct fpcheck {
	struct unwinder *uw;	/* borrowed */
	struct addrcache cache;
	struct site sites[FPCHECK_MAX_SITES];
	size_t nsites;
	uint64_t lookups;
};

int fpcheck_new(struct unwinder *uw, struct fpcheck **out)
{
	struct fpcheck *fc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!uw)
		return -EINVAL;
	fc = calloc(1, sizeof(*fc));
	if (!fc)
		return -ENOMEM;
	if (addrcache_init(&fc->cache)) {
		free(fc);
		return -ENOMEM;
	}
	fc->uw = uw;
	*out = fc;
	return 0;
}

void fpcheck_free(struct fpcheck *fc)
{
	if (!fc)
		return;
	addrcache_fini(&fc->cache);
	free(fc);
}

int fpcheck_add_site(struct fpcheck *fc, const char *build_id,
		     uint64_t vaddr)
{
	size_t i, len;

	if (!fc || !build_id)
		return -EINVAL;
	len = strlen(build_id);
	if (len == 0 || len > 2 * PM_BUILD_ID_MAX ||
	    strspn(build_id, "0123456789abcdef") != len)
		return -EINVAL;
	for (i = 0; i < fc->nsites; i++)
		if (fc->sites[i].vaddr == vaddr &&
		    strcmp(fc->sites[i].build_id, build_id) == 0)
			return 0;
	if (fc->nsites == FPCHECK_MAX_SITES)
		return -ENOSPC;
	memcpy(fc->sites[fc->nsites].build_id, build_id, len + 1);
	fc->sites[fc->nsites].vaddr = vaddr;
	fc->nsites++;
	/* A verdict cached before may be this site's. */
	addrcache_clear(&fc->cache);
	return 0;
}

/* ---- learning the start sites of this process ---- */

static int obj_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct fpcheck_obj *o = ctx;
	const ElfW(Phdr) *ph;
	bool hit = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum && !hit; i++) {
		ph = &info->dlpi_phdr[i];
		hit = ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		      o->addr >= info->dlpi_addr + ph->p_vaddr &&
		      o->addr - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz;
	}
	if (!hit)
		return 0;
	o->phdr = info->dlpi_phdr;
	o->bias = info->dlpi_addr;
	o->build_id[0] = '\0';
	/* The notes of a loaded object, in memory (and so in the host's
	 * byte order). */
	for (i = 0; i < info->dlpi_phnum && !o->build_id[0]; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE)
			sym_notes_build_id((const void *)(uintptr_t)
					   (info->dlpi_addr + ph->p_vaddr),
					   ph->p_filesz, ph->p_align,
					   o->build_id, sizeof(o->build_id));
	}
	return 1;
}

bool fpcheck_obj_of(uint64_t addr, struct fpcheck_obj *o)
{
	memset(o, 0, sizeof(*o));
	o->addr = addr;
	return dl_iterate_phdr(obj_cb, o) == 1;
}

/*
 * The return addresses on this thread's stack that lie in other objects
 * than ours, outer than our own innermost frame: libc's start-up code
 * (main thread) or thread start (another thread).  Not inlined, so that
 * its own address is in our object.
 */
static __attribute__((noinline)) void learn_stack(struct fpcheck *fc)
{
	void *pcs[LEARN_DEPTH];
	struct fpcheck_obj own, o;
	bool outer = false;
	int n, i;

	if (!fpcheck_obj_of((uint64_t)(uintptr_t)learn_stack, &own))
		return;
	n = backtrace(pcs, LEARN_DEPTH);
	for (i = 0; i < n; i++) {
		uint64_t pc = (uint64_t)(uintptr_t)pcs[i];

		if (!fpcheck_obj_of(pc, &o))
			continue;
		if (o.phdr == own.phdr) {
			outer = true;
			continue;
		}
		if (outer && o.build_id[0])
			fpcheck_add_site(fc, o.build_id, pc - o.bias);
	}
}

static void *learn_thread(void *arg)
{
	learn_stack(arg);
	return NULL;
}

int fpcheck_learn(struct fpcheck *fc)
{
	pthread_t t;

	if (!fc)
		return 0;
	learn_stack(fc);
	if (pthread_create(&t, NULL, learn_thread, fc) == 0)
		pthread_join(t, NULL);
	return (int)fc->nsites;
}

/* ---- classifying ---- */

static int classify(struct fpcheck *fc, const struct pm_map *m, pid_t pid,
		    uint64_t pc, uint64_t addr, bool *cache)
{
	size_t i;
	int kind, err;

	*cache = true;
	if (m->build_id[0] && m->vaddr_known)
		for (i = 0; i < fc->nsites; i++)
			if (fc->sites[i].vaddr == addr &&
			    strcmp(fc->sites[i].build_id, m->build_id) == 0)
				return FPCHECK_OUTERMOST;
	fc->lookups++;
	err = unwinder_fp_frame(fc->uw, pid, pc, false,
				m->build_id[0] ? m->build_id : NULL, &kind);
	if (err) {
		/* The unwinder lacks this mapping (it could not open the
		 * file, or it already has the mappings of an exec that came
		 * after the sample): nothing known about the file itself. */
		*cache = false;
		return FPCHECK_UNKNOWN;
	}
	switch (kind) {
	case UNWIND_FP_FRAME:
		return FPCHECK_FRAME;
	case UNWIND_FP_OUTERMOST:
		return FPCHECK_OUTERMOST;
	case UNWIND_FP_KEPT:
	case UNWIND_FP_SAVED:
	case UNWIND_FP_SIGNAL:
		return FPCHECK_NOFRAME;
	default:
		return FPCHECK_UNKNOWN;
	}
}

int fpcheck_ret(struct fpcheck *fc, const struct pm_map *m, pid_t pid,
		uint64_t pc)
{
	uint64_t mod, addr;
	bool cache;
	int cls;

	if (!fc || !m || (m->kind != PM_FILE && m->kind != PM_VDSO))
		return FPCHECK_UNKNOWN;
	addr = pc - m->start + m->vaddr;
	mod = pm_map_key(m);
	if (addrcache_get(&fc->cache, mod, addr, &cls))
		return cls;
	cls = classify(fc, m, pid, pc, addr, &cache);
	if (cache)
		addrcache_put(&fc->cache, mod, addr, cls);
	return cls;
}

void fpcheck_stats(const struct fpcheck *fc, struct fpcheck_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!fc)
		return;
	st->sites = fc->nsites;
	st->lookups = fc->lookups;
	st->hits = fc->cache.hits;
}
