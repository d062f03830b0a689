/*
 * evmemo.c - the resolved frames of off-CPU events, by key (evmemo.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/evmemo.h"
#include "base.h"

/* One result and its key, in one buffer: the key's words, then the
 * frames.  buf NULL: an empty slot. */
struct evmemo_ent {
	uint64_t tick;		/* m->tick at its last use: LRU */
	uint64_t hash, from;
	uint32_t nkey, nframes;
	size_t cap;		/* bytes at buf */
	uint32_t flags, aux[EVMEMO_NAUX];
	unsigned char *buf;	/* free() */
};

_Static_assert(EVMEMO_SETS * EVMEMO_WAYS < 65536, "evmemo.last is 16 bits");

struct evmemo {
	struct evmemo_ent ents[EVMEMO_SETS * EVMEMO_WAYS];
	/* By tag: 1 + the index of the entry it found or stored last, or 0
	 * (a hint: the entry is compared as keyed() does). */
	uint16_t last[EVMEMO_TAGS];
	bool off;
	uint64_t tick;
	struct evmemo_stats st;
};

int evmemo_new(struct evmemo **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void evmemo_free(struct evmemo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < EVMEMO_SETS * EVMEMO_WAYS; i++)
		free(m->ents[i].buf);
	free(m);
}

void evmemo_set(struct evmemo *m, bool on)
{
	m->off = !on;
}

void evmemo_key(struct evmemo_key *k, const uint64_t *w, size_t n,
		uint32_t tag)
{
	k->w = w;
	k->n = n;
	k->tag = tag;
	k->hashed = false;
}

/* (Two lanes of multiply-add, folded: a few instructions a word.  The
 * hash only picks the set; keys are compared whole.) */
static uint64_t hash_of(struct evmemo_key *k)
{
	uint64_t a = k->n, b = 0x6a09e667f3bcc909ULL;
	const uint64_t *w = k->w;
	size_t i;

	if (k->hashed)
		return k->hash;
	for (i = 0; i + 1 < k->n; i += 2) {
		a = (a + w[i]) * 0x9e3779b97f4a7c15ULL;
		b = (b + w[i + 1]) * 0xbf58476d1ce4e5b9ULL;
	}
	if (i < k->n)
		a = (a + w[i]) * 0x9e3779b97f4a7c15ULL;
	a ^= (b ^ (b >> 29)) * 0x94d049bb133111ebULL;
	k->hash = a ^ (a >> 32);
	k->hashed = true;
	return k->hash;
}

static struct evmemo_ent *set_of(struct evmemo *m, uint64_t hash)
{
	return &m->ents[(size_t)(hash >> 58) % EVMEMO_SETS * EVMEMO_WAYS];
}

/* Whether entry @e holds key @k (its hash need not be made: equal keys
 * have equal hashes). */
static bool holds(const struct evmemo_ent *e, const struct evmemo_key *k)
{
	return e->buf && e->nkey == k->n &&
	       memcmp(e->buf, k->w, k->n * sizeof(*k->w)) == 0;
}

/* The entry holding key @k, or NULL: the one its tag had last, else the
 * one of its set. */
static struct evmemo_ent *keyed(struct evmemo *m, struct evmemo_key *k)
{
	uint16_t last = m->last[k->tag & (EVMEMO_TAGS - 1)];
	struct evmemo_ent *set;
	uint64_t h;

	if (last && holds(&m->ents[last - 1], k))
		return &m->ents[last - 1];
	h = hash_of(k);
	set = set_of(m, h);
	for (int w = 0; w < EVMEMO_WAYS; w++)
		if (set[w].buf && set[w].hash == h && holds(&set[w], k))
			return &set[w];
	return NULL;
}

/* Remember @e as the last of @k's tag. */
static void tag_last(struct evmemo *m, const struct evmemo_key *k,
		     const struct evmemo_ent *e)
{
	m->last[k->tag & (EVMEMO_TAGS - 1)] = (uint16_t)(e - m->ents + 1);
}

bool evmemo_find(struct evmemo *m, struct evmemo_key *k, uint64_t t,
		 struct evmemo_res *out)
{
	struct evmemo_ent *e = m->off ? NULL : keyed(m, k);

	if (!e || t < e->from) {
		m->st.misses++;
		return false;
	}
	e->tick = ++m->tick;
	tag_last(m, k, e);
	out->frames = (const struct sym_prof_frame *)
		      (e->buf + e->nkey * sizeof(uint64_t));
	out->nframes = e->nframes;
	out->flags = e->flags;
	memcpy(out->aux, e->aux, sizeof(out->aux));
	m->st.hits++;
	return true;
}

/* The entry to store key @k in: its own, else an empty one, else the
 * least recently used of its set. */
static struct evmemo_ent *slot_for(struct evmemo *m, struct evmemo_key *k)
{
	struct evmemo_ent *e = keyed(m, k), *set = set_of(m, hash_of(k));
	int lru = 0;

	for (int w = 0; !e && w < EVMEMO_WAYS; w++) {
		if (!set[w].buf)
			e = &set[w];
		else if (set[w].tick < set[lru].tick)
			lru = w;
	}
	return e ? e : &set[lru];
}

int evmemo_put(struct evmemo *m, struct evmemo_key *k, uint64_t from,
	       const struct evmemo_res *r)
{
	size_t kb = k->n * sizeof(*k->w),
	       need = kb + r->nframes * sizeof(*r->frames);
	struct evmemo_ent *e;

	if (m->off || from == UINT64_MAX || k->n > EVMEMO_KEY_MAX ||
	    r->nframes > EVMEMO_FRAMES_MAX)
		return 0;
	e = slot_for(m, k);
	if (e->cap < need) {
		unsigned char *b = realloc(e->buf, need);

		if (!b)
			return -ENOMEM;	/* (the old entry stays whole) */
		e->buf = b;
		e->cap = need;
	}
	memcpy(e->buf, k->w, kb);
	memcpy(e->buf + kb, r->frames, r->nframes * sizeof(*r->frames));
	e->tick = ++m->tick;
	e->hash = hash_of(k);
	e->from = from;
	e->nkey = (uint32_t)k->n;
	e->nframes = r->nframes;
	e->flags = r->flags;
	memcpy(e->aux, r->aux, sizeof(e->aux));
	tag_last(m, k, e);
	m->st.stores++;
	return 0;
}

void evmemo_stats(const struct evmemo *m, struct evmemo_stats *out)
{
	*out = m->st;
}
