/*
 * stacklearn.c - per-process stack copy sizes learned from unwinds
 * (stacklearn.h).
 *
 * The processes are an open-addressing table (linear probing, deletion
 * by backward shift) of twice OFFCPU_LEARN_PROCS slots, so it is never
 * more than half full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacklearn.h"
#include <linux/types.h>

#include "bpf/offcpu_event.h"
#include "base.h"

#define NSLOTS (2 * OFFCPU_LEARN_PROCS)

struct sl_proc {
	int32_t pid;		/* 0: empty */
	uint32_t size;		/* given to the BPF program */
	uint32_t whole;		/* whole unwinds since the last (re)start */
	uint64_t need;		/* the most bytes a stack needed */
};

struct stacklearn {
	uint32_t floor, ceiling;
	size_t n;
	struct stacklearn_stats st;
	struct sl_proc slot[NSLOTS];
};

int stacklearn_new(uint32_t floor, uint32_t ceiling, struct stacklearn **out)
{
	struct stacklearn *l;

	*out = NULL;
	if (ceiling == 0 || floor > ceiling)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->floor = floor;
	l->ceiling = ceiling;
	*out = l;
	return 0;
}

void stacklearn_free(struct stacklearn *l)
{
	free(l);
}

uint32_t stacklearn_fit(const struct stacklearn *l, uint64_t used)
{
	uint64_t s = used + used / 2 + 256;

	s = (s + 255) & ~(uint64_t)255;
	if (s < l->floor)
		s = l->floor;
	return s > l->ceiling ? l->ceiling : (uint32_t)s;
}

static size_t home(int32_t pid)
{
	return (size_t)(((uint32_t)pid * 2654435761u) % NSLOTS);
}

/* Process @pid's slot, or the empty one where it would go. */
static struct sl_proc *find(const struct stacklearn *l, int32_t pid)
{
	size_t i = home(pid);

	while (l->slot[i].pid && l->slot[i].pid != pid)
		i = (i + 1) % NSLOTS;
	return (struct sl_proc *)&l->slot[i];
}

uint32_t stacklearn_size(const struct stacklearn *l, int32_t pid)
{
	const struct sl_proc *p = find(l, pid);

	return p->pid ? p->size : l->ceiling;
}

/* A cut event of @p, copied with @cap bytes: the bytes it had are
 * needed, and more; unless it is already back at the ceiling, the size
 * goes back there, to be learned again.  (Even when the size was raised
 * since the copy: the cut says only that the stack needs more than @cap,
 * not whether the raised size holds it.)  Returns the new size or 0. */
static uint32_t on_cut(struct stacklearn *l, struct sl_proc *p, uint32_t cap)
{
	l->st.cut++;
	if (cap > p->need)
		p->need = cap;
	if (p->size == l->ceiling)
		return 0;	/* grown already, learning again */
	l->st.grown++;
	p->size = l->ceiling;
	p->whole = 0;
	return p->size;
}

/* A whole unwind of @p that needed @used bytes.  Returns the new size or
 * 0. */
static uint32_t on_whole(struct stacklearn *l, struct sl_proc *p,
			 uint64_t used)
{
	uint32_t fit;

	if (used > p->need)
		p->need = used;
	if (p->whole < STACKLEARN_EVENTS)
		p->whole++;
	fit = stacklearn_fit(l, p->need);
	if (p->size == l->ceiling) {
		if (p->whole < STACKLEARN_EVENTS || fit == p->size)
			return 0;
	} else if (fit <= p->size) {
		return 0;
	} else {
		l->st.raised++;
	}
	p->size = fit;
	return fit;
}

uint32_t stacklearn_seen(struct stacklearn *l, int32_t pid, uint32_t cap,
			 uint32_t len, bool whole, uint64_t used,
			 bool ran_off, bool *cut)
{
	struct sl_proc *p;

	*cut = false;
	l->st.events++;
	l->st.bytes += len;
	if (pid <= 0)
		return 0;
	p = find(l, pid);
	if (!p->pid) {
		if (l->n >= OFFCPU_LEARN_PROCS) {
			l->st.untracked++;
			return 0;
		}
		p->pid = pid;
		p->size = l->ceiling;
		l->n++;
	}
	/* Cut by a learned size: it ran off a copy as long as allowed,
	 * and allowed less than the ceiling. */
	if (!whole && ran_off && cap && len >= cap && cap < l->ceiling) {
		*cut = true;
		return on_cut(l, p, cap);
	}
	return whole ? on_whole(l, p, used) : 0;
}

void stacklearn_forget(struct stacklearn *l, int32_t pid)
{
	size_t i, j, h;
	struct sl_proc *p;

	if (pid <= 0)
		return;
	p = find(l, pid);
	if (!p->pid)
		return;
	i = (size_t)(p - l->slot);
	l->slot[i].pid = 0;
	l->n--;
	/* Backward shift: move up every later entry of the run whose home
	 * is not between the hole and it. */
	for (j = (i + 1) % NSLOTS; l->slot[j].pid; j = (j + 1) % NSLOTS) {
		h = home(l->slot[j].pid);
		if ((j > i && (h <= i || h > j)) ||
		    (j < i && (h <= i && h > j))) {
			l->slot[i] = l->slot[j];
			l->slot[j].pid = 0;
			i = j;
		}
	}
}

void stacklearn_stats(const struct stacklearn *l, struct stacklearn_stats *st)
{
	*st = l->st;
	st->procs = l->n;
	st->learned = 0;
	st->min_size = st->max_size = 0;
	for (size_t i = 0; i < NSLOTS; i++) {
		const struct sl_proc *p = &l->slot[i];

		if (!p->pid || p->size >= l->ceiling)
			continue;
		st->learned++;
		if (!st->min_size || p->size < st->min_size)
			st->min_size = p->size;
		if (p->size > st->max_size)
			st->max_size = p->size;
	}
}
