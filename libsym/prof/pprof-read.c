/*
 * pprof-read.c - profiles from pprof's profile.proto:
 * sym_prof_read_pprof(), and sym_prof_read_file(), which tells pprof
 * from the raw format (the mapping: pprof.h, docs/pprof.md).
 *
 * Reading trusts nothing: every string index, id and reference is checked
 * before use, input and decoded sizes are capped (PPROF_MAX_INPUT,
 * PPROF_MAX_DECODED) and an error says what is wrong where, e.g.
 * "location 7 (id 9): mapping_id 4 does not exist".  The "#sym-*" comments
 * are believed only where they can be checked against the file: a map's
 * comment must name its id and range, the list of exact PCs must come with
 * the checksum of the location table it was written for.  A profile that
 * pprof rewrote (pprof -proto) may renumber both; what no longer matches
 * falls back to the defaults of a foreign profile.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "pprof.h"
#include "base.h"

static void set_msg(char *msg, size_t msglen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_msg(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	if (!msg || !msglen)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
}


/*
 * Reader.
 */

/*
 * protobuf-c's allocator while decoding: an arena.  protobuf-c allocates
 * each message, string and repeated array on its own (millions of small
 * blocks for a big profile) and frees them one by one; here small blocks
 * are carved out of 1 MiB chunks and their free is a no-op: the arena
 * goes at once.  Big blocks (arrays, and the scratch space protobuf-c
 * frees at the end of unpack) are malloc()ed and freed on their own, so
 * that the scratch space is reused by the model.  Decoding fails past
 * @cap bytes in all.
 */
struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	max_align_t data[];
};

#define ARENA_CHUNK (1u << 20)
#define ARENA_BIG (ARENA_CHUNK / 4)

struct big_block {
	void *p;
	size_t size;
};

struct dec_alloc {
	ProtobufCAllocator a;
	struct arena_chunk *head;	/* the chunk being filled */
	struct big_block *big;		/* live big blocks (few) */
	size_t nbig, capbig;
	size_t used, cap;
	bool over, nomem;
};

static void *dec_alloc_big(struct dec_alloc *d, size_t n)
{
	void *p;

	if (symi_grow((void **)&d->big, &d->capbig, d->nbig + 1,
		      sizeof(*d->big))) {
		d->nomem = true;
		return NULL;
	}
	p = symi_malloc(n);
	if (!p) {
		d->nomem = true;
		return NULL;
	}
	d->big[d->nbig++] = (struct big_block){ p, n };
	d->used += n;
	return p;
}

static void *dec_alloc(void *ctx, size_t n)
{
	struct dec_alloc *d = ctx;
	struct arena_chunk *c = d->head;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (n > d->cap - d->used) {
		d->over = true;
		return NULL;
	}
	if (n > ARENA_BIG)
		return dec_alloc_big(d, n);
	if (c && c->size - c->used >= n) {
		p = (char *)c->data + c->used;
		c->used += n;
		return p;
	}
	if (ARENA_CHUNK > d->cap - d->used) {
		d->over = true;
		return NULL;
	}
	c = symi_malloc(sizeof(*c) + ARENA_CHUNK);
	if (!c) {
		d->nomem = true;
		return NULL;
	}
	d->used += ARENA_CHUNK;
	c->size = ARENA_CHUNK;
	c->used = n;
	c->next = d->head;
	d->head = c;
	return c->data;
}

static void dec_free(void *ctx, void *p)
{
	struct dec_alloc *d = ctx;
	size_t i;

	/* Newest first: protobuf-c frees its scratch space soon. */
	for (i = d->nbig; i-- > 0;) {
		if (d->big[i].p != p)
			continue;
		free(p);
		d->used -= d->big[i].size;
		d->big[i] = d->big[--d->nbig];
		return;
	}
	/* A small block: goes with its chunk. */
}

static void arena_release(struct dec_alloc *d)
{
	struct arena_chunk *c, *next;
	size_t i;

	for (c = d->head; c; c = next) {
		next = c->next;
		free(c);
	}
	for (i = 0; i < d->nbig; i++)
		free(d->big[i].p);
	free(d->big);
	d->head = NULL;
	d->big = NULL;
	d->nbig = d->capbig = 0;
}

/*
 * Gunzip @len bytes (one or more gzip members) into a new buffer of at
 * most PPROF_MAX_INPUT bytes.
 * @return 0, -SYM_E_BADPROFILE, -E2BIG, -ENOMEM; *out is the caller's.
 */
static int gunzip(const uint8_t *in, size_t len, uint8_t **out,
		  size_t *outlen, char *msg, size_t msglen)
{
	z_stream zs;
	uint8_t *buf = NULL;
	size_t cap = 0, have = 0, left = len, want;
	int zr, err = 0;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in;
	for (;;) {
		if (zs.avail_in == 0 && left) {
			zs.avail_in = left > (1u << 30) ? (1u << 30) :
				      (uInt)left;
			left -= zs.avail_in;
		}
		if (have == cap) {
			if (cap >= PPROF_MAX_INPUT) {
				set_msg(msg, msglen, "gzip: more than %llu "
					"bytes decompressed",
					(unsigned long long)PPROF_MAX_INPUT);
				err = -E2BIG;
				goto out;
			}
			want = cap ? 2 * cap : (len < (1u << 14) ? (1u << 16) :
						4 * len);
			if (want > PPROF_MAX_INPUT)
				want = PPROF_MAX_INPUT;
			err = symi_grow((void **)&buf, &cap, want, 1);
			if (err)
				goto out;
		}
		zs.next_out = buf + have;
		want = cap - have;
		zs.avail_out = want > (1u << 30) ? (1u << 30) : (uInt)want;
		want = zs.avail_out;
		zr = inflate(&zs, Z_NO_FLUSH);
		have += want - zs.avail_out;
		if (zr == Z_STREAM_END) {
			size_t rest = zs.avail_in + left;

			if (rest == 0)
				break;
			/* Another member follows (as gzip and Go read);
			 * next_in points into @in, which is contiguous. */
			if (rest >= 2 && zs.next_in[0] == 0x1f &&
			    zs.next_in[1] == 0x8b) {
				inflateReset(&zs);
				continue;
			}
			set_msg(msg, msglen, "gzip: %zu bytes of junk after "
				"the compressed data", rest);
			err = -SYM_E_BADPROFILE;
			goto out;
		}
		if (zr == Z_MEM_ERROR) {
			err = -ENOMEM;
			goto out;
		}
		if (zr == Z_NEED_DICT || zr == Z_DATA_ERROR) {
			set_msg(msg, msglen, "gzip: %s",
				zs.msg ? zs.msg : "corrupt data");
			err = -SYM_E_BADPROFILE;
			goto out;
		}
		if (zr == Z_BUF_ERROR && zs.avail_in == 0 && left == 0 &&
		    zs.avail_out != 0) {
			set_msg(msg, msglen, "gzip: data cut short");
			err = -SYM_E_BADPROFILE;
			goto out;
		}
	}
	*out = buf;
	*outlen = have;
	buf = NULL;
out:
	inflateEnd(&zs);
	free(buf);
	return err;
}

/* id -> index in a file's table, sorted by id. */
struct idx {
	uint64_t id;
	uint32_t i;
};

static int cmp_idx(const void *a, const void *b)
{
	const struct idx *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The index of id @id in a table of @n (sorted in @ix), or -1.  Most
 * writers number 1..n in order: that is tried first. */
static int64_t idx_find(const struct idx *ix, size_t n, uint64_t id,
			uint64_t (*id_at)(const void *, size_t),
			const void *tab)
{
	size_t lo = 0, hi = n, mid;

	if (id >= 1 && id <= n && id_at(tab, id - 1) == id)
		return (int64_t)(id - 1);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ix[mid].id == id)
			return ix[mid].i;
		if (ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static uint64_t mapping_id_at(const void *tab, size_t i)
{
	return ((PbMapping *const *)tab)[i]->id;
}

static uint64_t location_id_at(const void *tab, size_t i)
{
	return ((PbLocation *const *)tab)[i]->id;
}

static uint64_t function_id_at(const void *tab, size_t i)
{
	return ((PbFunction *const *)tab)[i]->id;
}

/* A "#sym-map" comment. */
struct map_note {
	uint64_t id, start, limit, offset, vaddr;
	uint32_t kind, flags;
	int32_t pid;
};

static int cmp_note(const void *a, const void *b)
{
	const struct map_note *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->limit != y->limit)
		return x->limit < y->limit ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Everything one read builds; freed at once. */
struct dec {
	const PbProfile *pb;
	char *msg;
	size_t msglen;
	struct sym_prof *p;
	struct idx *mix, *lix, *fix;	/* sorted ids */
	uint32_t *map_model;	/* model map id of each Mapping */
	uint32_t *loc_map;	/* per Location: model map id or NOMAP */
	uint64_t *loc_addr;	/* per Location: the frame's address */
	uint8_t *loc_pc;	/* per Location: 1 exact PC, 2 return,
				 * 0 by position (leaf or not) */
	bool ours;		/* a "#sym-pprof 1" comment */
	int vt_col;		/* first column of the value types, or -1 */
	bool pc_trusted;	/* its location checksum matched */
	bool symbolized;	/* ours, with "#sym-symbolized 1" */
	uint8_t *loc_status;	/* per Location: "#sym-loc" status + 1 */
	uint8_t *loc_symtab;	/* per Location: in "#sym-symtab" */
	uint8_t *loc_done;	/* per Location: 1 set as an exact PC, 2 as
				 * a return address */
	struct sym_prof_line *lines;	/* SYM_PROF_MAX_LINES */
	struct map_note *notes;
	size_t nnotes, capnotes;
	struct sym_prof_header h;
	char *hstr[7];		/* decoded header strings (free): strs[] of
				 * note_header(), tool and its version, then
				 * the release */
	const char *release;	/* hstr[6] or NULL */
	int count_col, weight_col;
};

static void dec_release(struct dec *d)
{
	size_t i;

	free(d->mix);
	free(d->lix);
	free(d->fix);
	free(d->map_model);
	free(d->loc_map);
	free(d->loc_addr);
	free(d->loc_pc);
	free(d->loc_status);
	free(d->loc_symtab);
	free(d->loc_done);
	free(d->lines);
	free(d->notes);
	for (i = 0; i < sizeof(d->hstr) / sizeof(d->hstr[0]); i++)
		free(d->hstr[i]);
}

#define BAD(d, ...)                                                          \
	do {                                                                 \
		set_msg((d)->msg, (d)->msglen, __VA_ARGS__);                 \
		err = -SYM_E_BADPROFILE;                                     \
		goto out;                                                    \
	} while (0)

/* A string index: valid when in the table. */
static bool str_ok(const PbProfile *pb, int64_t i)
{
	return i >= 0 && (uint64_t)i < pb->n_string_table;
}

static const char *str_at(const PbProfile *pb, int64_t i)
{
	return pb->string_table[i];
}

/* Sort (id, index) of a table and refuse ids 0 and duplicates. */
static int index_ids(struct dec *d, const char *what, size_t n,
		     uint64_t (*id_at)(const void *, size_t), const void *tab,
		     struct idx **out)
{
	struct idx *ix;
	size_t i;
	int err = 0;

	if (n > UINT32_MAX) {
		set_msg(d->msg, d->msglen, "more than 2^32 %ss", what);
		return -E2BIG;
	}
	ix = symi_calloc(n ? n : 1, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ix[i].id = id_at(tab, i);
		ix[i].i = (uint32_t)i;
		if (ix[i].id == 0)
			BAD(d, "%s %zu: id 0 (ids must be non-zero)", what, i);
	}
	/* Writers mostly number 1..n in order: no sort needed then. */
	for (i = 1; i < n && ix[i - 1].id < ix[i].id; i++)
		;
	if (i < n)
		qsort(ix, n, sizeof(*ix), cmp_idx);
	for (i = 1; i < n; i++)
		if (ix[i].id == ix[i - 1].id)
			BAD(d, "%ss %u and %u: duplicate id %llu", what,
			    ix[i - 1].i, ix[i].i,
			    (unsigned long long)ix[i].id);
out:
	if (err) {
		free(ix);
		return err;
	}
	*out = ix;
	return 0;
}

/* Check every string index and id of the file, before anything uses
 * them. */
static int dec_validate(struct dec *d)
{
	const PbProfile *pb = d->pb;
	size_t i, j;
	int64_t k;
	int err = 0;

	if (pb->n_string_table == 0)
		BAD(d, "empty string table (not a pprof profile?)");
	if (pb->string_table[0][0] != '\0')
		BAD(d, "string_table[0] is not \"\" (not a pprof profile?)");
	if (!str_ok(pb, pb->drop_frames) || !str_ok(pb, pb->keep_frames))
		BAD(d, "drop_frames or keep_frames: bad string index");
	for (i = 0; i < pb->n_comment; i++)
		if (!str_ok(pb, pb->comment[i]))
			BAD(d, "comment %zu: string index %lld out of range",
			    i, (long long)pb->comment[i]);
	if (pb->period_type && (!str_ok(pb, pb->period_type->type) ||
				!str_ok(pb, pb->period_type->unit)))
		BAD(d, "period_type: bad string index");
	if (pb->period < 0)
		BAD(d, "negative period %lld", (long long)pb->period);
	if (pb->duration_nanos < 0)
		BAD(d, "negative duration_nanos %lld",
		    (long long)pb->duration_nanos);
	if (!str_ok(pb, pb->default_sample_type))
		BAD(d, "default_sample_type: bad string index");
	for (i = 0; i < pb->n_sample_type; i++)
		if (!str_ok(pb, pb->sample_type[i]->type) ||
		    !str_ok(pb, pb->sample_type[i]->unit))
			BAD(d, "sample_type %zu: bad string index", i);
	if (pb->n_sample && !pb->n_sample_type)
		BAD(d, "samples but no sample_type");

	for (i = 0; i < pb->n_mapping; i++) {
		const PbMapping *m = pb->mapping[i];

		if (!str_ok(pb, m->filename) || !str_ok(pb, m->build_id))
			BAD(d, "mapping %zu (id %llu): bad string index", i,
			    (unsigned long long)m->id);
		if (m->memory_start > m->memory_limit)
			BAD(d, "mapping %zu (id %llu): memory_start %#llx "
			    "above memory_limit %#llx", i,
			    (unsigned long long)m->id,
			    (unsigned long long)m->memory_start,
			    (unsigned long long)m->memory_limit);
	}
	for (i = 0; i < pb->n_function; i++) {
		const PbFunction *f = pb->function[i];

		if (!str_ok(pb, f->name) || !str_ok(pb, f->system_name) ||
		    !str_ok(pb, f->filename))
			BAD(d, "function %zu (id %llu): bad string index", i,
			    (unsigned long long)f->id);
	}
	err = index_ids(d, "mapping", pb->n_mapping, mapping_id_at,
			pb->mapping, &d->mix);
	if (!err)
		err = index_ids(d, "location", pb->n_location, location_id_at,
				pb->location, &d->lix);
	if (!err)
		err = index_ids(d, "function", pb->n_function, function_id_at,
				pb->function, &d->fix);
	if (err)
		return err;

	for (i = 0; i < pb->n_location; i++) {
		const PbLocation *l = pb->location[i];

		if (l->mapping_id &&
		    idx_find(d->mix, pb->n_mapping, l->mapping_id,
			     mapping_id_at, pb->mapping) < 0)
			BAD(d, "location %zu (id %llu): mapping_id %llu does "
			    "not exist", i, (unsigned long long)l->id,
			    (unsigned long long)l->mapping_id);
		for (j = 0; j < l->n_line; j++) {
			uint64_t fid = l->line[j]->function_id;

			if (idx_find(d->fix, pb->n_function, fid,
				     function_id_at, pb->function) < 0)
				BAD(d, "location %zu (id %llu): line %zu: "
				    "function_id %llu does not exist", i,
				    (unsigned long long)l->id, j,
				    (unsigned long long)fid);
		}
	}
	for (i = 0; i < pb->n_sample; i++) {
		const PbSample *s = pb->sample[i];

		if (s->n_value != pb->n_sample_type)
			BAD(d, "sample %zu: %zu values for %zu sample types",
			    i, s->n_value, pb->n_sample_type);
		for (j = 0; j < s->n_value; j++)
			if (s->value[j] < 0)
				BAD(d, "sample %zu: negative value %lld", i,
				    (long long)s->value[j]);
		for (j = 0; j < s->n_location_id; j++) {
			k = idx_find(d->lix, pb->n_location,
				     s->location_id[j], location_id_at,
				     pb->location);
			if (k < 0)
				BAD(d, "sample %zu: location_id %llu does "
				    "not exist", i,
				    (unsigned long long)s->location_id[j]);
		}
		for (j = 0; j < s->n_label; j++) {
			const PbLabel *l = s->label[j];

			if (!str_ok(pb, l->key) || !str_ok(pb, l->str) ||
			    !str_ok(pb, l->num_unit))
				BAD(d, "sample %zu: label %zu: bad string "
				    "index", i, j);
			if (l->key == 0)
				BAD(d, "sample %zu: label %zu: empty key", i,
				    j);
		}
	}
out:
	return err;
}

/*
 * Comment parsing.  A comment is split into space-separated words, at
 * most MAX_WORDS of them; words point into a copy.
 */
#define MAX_WORDS 12

static size_t split_words(char *s, char **w)
{
	size_t n = 0;

	while (*s && n < MAX_WORDS) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		w[n++] = s;
		while (*s && *s != ' ')
			s++;
		if (*s)
			*s++ = '\0';
	}
	return *s ? MAX_WORDS + 1 : n;
}

static bool parse_u64(const char *s, int base, uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (!((s[0] >= '0' && s[0] <= '9') ||
	      (base == 16 && ((s[0] >= 'a' && s[0] <= 'f') ||
			      (s[0] >= 'A' && s[0] <= 'F')))))
		return false;
	errno = 0;
	x = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

static bool parse_i32(const char *s, int32_t *v)
{
	long long x;
	char *end;

	if (!((s[0] >= '0' && s[0] <= '9') || s[0] == '-'))
		return false;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || *end || x < INT32_MIN || x > INT32_MAX)
		return false;
	*v = (int32_t)x;
	return true;
}

/* "key=value" with @key: the value, or NULL. */
static const char *kv(const char *w, const char *key)
{
	size_t n = strlen(key);

	return strncmp(w, key, n) == 0 && w[n] == '=' ? w + n + 1 : NULL;
}

/* Percent-decode @s in place; "-" is NULL.  false on a bad escape. */
static bool pct_decode(char *s, char **out)
{
	return symi_pct_decode(s, out) == 0;
}

/* Keep a decoded header string: d->hstr[slot] owns a copy. */
static int keep_str(struct dec *d, int slot, const char *s, const char **dst)
{
	free(d->hstr[slot]);
	d->hstr[slot] = NULL;
	*dst = NULL;
	if (!s)
		return 0;
	d->hstr[slot] = symi_strdup(s);
	if (!d->hstr[slot])
		return -ENOMEM;
	*dst = d->hstr[slot];
	return 0;
}

static int note_header(struct dec *d, size_t ci, char **w, size_t n)
{
	struct sym_prof_header *h = &d->h;
	static const struct {
		const char *key;
		size_t off;
	} nums[] = {
		{ "frequency", offsetof(struct sym_prof_header, frequency) },
		{ "period", offsetof(struct sym_prof_header, period) },
		{ "duration-ns", offsetof(struct sym_prof_header, duration_ns) },
		{ "samples", offsetof(struct sym_prof_header, samples) },
		{ "lost", offsetof(struct sym_prof_header, lost) },
		{ "throttled", offsetof(struct sym_prof_header, throttled) },
		{ "dropped", offsetof(struct sym_prof_header, dropped) },
		{ "pidns", offsetof(struct sym_prof_header, pidns) },
	};
	static const struct {
		const char *key;
		size_t off;
	} strs[] = {
		{ "host", offsetof(struct sym_prof_header, host) },
		{ "event", offsetof(struct sym_prof_header, event) },
		{ "mode", offsetof(struct sym_prof_header, mode) },
		{ "weight-unit", offsetof(struct sym_prof_header, weight_unit) },
	};
	char *s1, *s2;
	uint64_t v;
	size_t i;
	int err = 0;

	if (n < 3)
		BAD(d, "comment %zu: sym-header without a value", ci);
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (strcmp(w[1], nums[i].key) != 0)
			continue;
		if (n != 3 || !parse_u64(w[2], 10, &v))
			BAD(d, "comment %zu: bad sym-header %s", ci, w[1]);
		*(uint64_t *)((char *)h + nums[i].off) = v;
		return 0;
	}
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		if (strcmp(w[1], strs[i].key) != 0)
			continue;
		if (n != 3 || !pct_decode(w[2], &s1))
			BAD(d, "comment %zu: bad sym-header %s", ci, w[1]);
		return keep_str(d, (int)i, s1,
				(const char **)((char *)h + strs[i].off));
	}
	if (strcmp(w[1], "tool") == 0) {
		if (n != 4 || !pct_decode(w[2], &s1) || !pct_decode(w[3], &s2))
			BAD(d, "comment %zu: bad sym-header tool", ci);
		err = keep_str(d, 4, s1, &h->tool);
		return err ? err : keep_str(d, 5, s2, &h->tool_version);
	}
	if (strcmp(w[1], "release") == 0) {
		if (n != 3 || !pct_decode(w[2], &s1))
			BAD(d, "comment %zu: bad sym-header release", ci);
		return keep_str(d, 6, s1, &d->release);
	}
	if (strcmp(w[1], "flagged") == 0) {
		int bit;

		if (n != 4 || !parse_u64(w[3], 10, &v))
			BAD(d, "comment %zu: bad sym-header flagged", ci);
		bit = symi_prof_flag_bit(w[2]);
		if (bit >= 0)
			h->flagged[bit] = v;
		return 0;
	}
	/* A header line of a later minor version: ignored. */
out:
	return err;
}

/* The SYM_PROF_MAP_SRC_* flag of a sym-map comment's source=@v; 0 for a
 * value a later minor version writes. */
static uint32_t map_source_flag(const char *v)
{
	static const struct {
		const char *name;
		uint32_t flag;
	} src[] = {
		{ "dwarf", SYM_PROF_MAP_SRC_DWARF },
		{ "gopclntab", SYM_PROF_MAP_SRC_GOPCLNTAB },
		{ "symtab", SYM_PROF_MAP_SRC_SYMTAB },
		{ "kallsyms", SYM_PROF_MAP_SRC_KALLSYMS },
	};

	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++)
		if (strcmp(v, src[i].name) == 0)
			return src[i].flag;
	return 0;
}

static int note_map(struct dec *d, size_t ci, char **w, size_t n)
{
	struct map_note m = { 0 };
	const char *v;
	size_t i;
	bool have[7] = { false };
	int err = 0;

	if (n < 2 || !parse_u64(w[1], 10, &m.id))
		BAD(d, "comment %zu: bad sym-map id", ci);
	for (i = 2; i < n; i++) {
		if ((v = kv(w[i], "start")) && parse_u64(v, 16, &m.start)) {
			have[0] = true;
		} else if ((v = kv(w[i], "limit")) &&
			   parse_u64(v, 16, &m.limit)) {
			have[1] = true;
		} else if ((v = kv(w[i], "offset")) &&
			   parse_u64(v, 16, &m.offset)) {
			have[2] = true;
		} else if ((v = kv(w[i], "vaddr")) &&
			   parse_u64(v, 16, &m.vaddr)) {
			have[3] = true;
		} else if ((v = kv(w[i], "pid")) && parse_i32(v, &m.pid)) {
			have[4] = true;
		} else if ((v = kv(w[i], "kind"))) {
			int k = symi_prof_kind(v);

			if (k < 0)
				BAD(d, "comment %zu: sym-map: unknown kind "
				    "'%s'", ci, v);
			m.kind = (uint32_t)k;
			have[5] = true;
		} else if (strcmp(w[i], "vaddr-guessed") == 0) {
			m.flags |= SYM_PROF_MAP_VADDR_GUESSED;
		} else if (strcmp(w[i], "perf-map") == 0) {
			m.flags |= SYM_PROF_MAP_PERFMAP;
		} else if (strcmp(w[i], "perf-map-stale") == 0) {
			m.flags |= SYM_PROF_MAP_PERFMAP_STALE;
		} else if ((v = kv(w[i], "source"))) {
			m.flags |= map_source_flag(v);
		} else if (!strchr(w[i], '=')) {
			BAD(d, "comment %zu: sym-map: bad word '%s'", ci,
			    w[i]);
		}
		/* Other key=value words: a later minor version's. */
	}
	for (i = 0; i < 6; i++)
		if (!have[i])
			BAD(d, "comment %zu: sym-map %llu lacks a field", ci,
			    (unsigned long long)m.id);
	err = symi_grow((void **)&d->notes, &d->capnotes, d->nnotes + 1,
			sizeof(*d->notes));
	if (!err)
		d->notes[d->nnotes++] = m;
out:
	return err;
}

static int note_task(struct dec *d, size_t ci, char **w, size_t n)
{
	uint64_t pidns = 0;
	int32_t pid, tid;
	char *comm;
	int err = 0;

	if (strcmp(w[0], "#sym-process") == 0) {
		if (n != 5 || !parse_i32(w[1], &pid) ||
		    !parse_u64(w[2], 10, &pidns) || !parse_i32(w[3], &tid) ||
		    !pct_decode(w[4], &comm))
			BAD(d, "comment %zu: bad sym-process", ci);
		err = sym_prof_add_process(d->p, pid, pidns, tid, comm);
	} else {
		if (n != 4 || !parse_i32(w[1], &pid) ||
		    !parse_i32(w[2], &tid) || !pct_decode(w[3], &comm))
			BAD(d, "comment %zu: bad sym-thread", ci);
		err = sym_prof_add_thread(d->p, pid, tid, comm);
	}
	if (err == -EINVAL)
		BAD(d, "comment %zu: %s: negative pid or tid", ci, w[0]);
	if (err == -E2BIG)
		set_msg(d->msg, d->msglen, "comment %zu: too many %s", ci,
			w[0] + 5);
out:
	return err;
}

/* Set @arr[k] = @val for each location of the id list that follows the
 * first @skip words of comment @ci, @s: the exact PCs of "#sym-pc" (1),
 * the return addresses of "#sym-ret" (2), the statuses of "#sym-loc", the
 * symbol-table names of "#sym-symtab". */
static int note_list(struct dec *d, size_t ci, const char *s, int skip,
		     uint8_t *arr, uint8_t val)
{
	const PbProfile *pb = d->pb;
	uint64_t id;
	int64_t k;
	char *end;
	int err = 0;

	while (skip--) {
		s += strcspn(s, " ");
		s += *s == ' ' && skip;
	}
	while (*s) {
		if (*s != ' ')
			BAD(d, "comment %zu: bad location list", ci);
		s++;
		if (*s < '0' || *s > '9')
			BAD(d, "comment %zu: bad location list", ci);
		errno = 0;
		id = strtoull(s, &end, 10);
		if (errno)
			BAD(d, "comment %zu: bad location list", ci);
		s = end;
		k = idx_find(d->lix, pb->n_location, id, location_id_at,
			     pb->location);
		if (k < 0)
			BAD(d, "comment %zu: location %llu does not exist", ci,
			    (unsigned long long)id);
		arr[k] = val;
	}
out:
	return err;
}

/* @c is keyword @kw, alone or followed by a space. */
static bool is_list(const char *c, const char *kw)
{
	size_t n = strlen(kw);

	return strncmp(c, kw, n) == 0 && (c[n] == ' ' || c[n] == '\0');
}

/* Is this profile ours, and is its location table as we wrote it? */
static void find_marker(struct dec *d)
{
	const PbProfile *pb = d->pb;
	char want[96];
	const char *c;
	size_t i;

	snprintf(want, sizeof(want), "#sym-pprof %d locations=%zu crc=%08x",
		 SYM_PPROF_VERSION, pb->n_location,
		 locations_crc(pb->location, pb->n_location));
	for (i = 0; i < pb->n_comment; i++) {
		c = str_at(pb, pb->comment[i]);
		if (strncmp(c, "#sym-pprof 1 ", 13) != 0 &&
		    strcmp(c, "#sym-pprof 1") != 0)
			continue;
		d->ours = true;
		if (strcmp(c, want) == 0)
			d->pc_trusted = true;
	}
}

/* The comments dec_comments() reads. */
static bool is_known(const char *kw)
{
	return strcmp(kw, "#sym-header") == 0 || strcmp(kw, "#sym-map") == 0 ||
	       strcmp(kw, "#sym-process") == 0 ||
	       strcmp(kw, "#sym-thread") == 0;
}

/* Read the "#sym-*" comments of one of our files. */
static int dec_comments(struct dec *d)
{
	const PbProfile *pb = d->pb;
	char *copy = NULL, *w[MAX_WORDS];
	const char *c;
	size_t i, n;
	int err = 0;

	for (i = 0; i < pb->n_comment && !err; i++) {
		c = str_at(pb, pb->comment[i]);
		if (strncmp(c, "#sym-", 5) != 0)
			continue;
		if (is_list(c, "#sym-pc") || is_list(c, "#sym-ret") ||
		    is_list(c, "#sym-loc") || is_list(c, "#sym-symtab"))
			continue;	/* dec_pcs(), once locations are read */
		if (strcmp(c, "#sym-symbolized 1") == 0) {
			d->symbolized = true;
			continue;
		}
		free(copy);
		copy = symi_strdup(c);
		if (!copy) {
			err = -ENOMEM;
			break;
		}
		n = split_words(copy, w);
		if (n > MAX_WORDS && is_known(w[0]))
			BAD(d, "comment %zu: too many words", i);
		if (n > MAX_WORDS)
			continue;	/* a later minor version's */
		if (strcmp(w[0], "#sym-header") == 0)
			err = note_header(d, i, w, n);
		else if (strcmp(w[0], "#sym-map") == 0)
			err = note_map(d, i, w, n);
		else if (strcmp(w[0], "#sym-process") == 0 ||
			 strcmp(w[0], "#sym-thread") == 0)
			err = note_task(d, i, w, n);
		/* sym-pprof, and keywords of later minor versions. */
	}
	if (!err && d->nnotes)
		qsort(d->notes, d->nnotes, sizeof(*d->notes), cmp_note);
out:
	free(copy);
	return err;
}

/* "#sym-loc STATUS ID...": the status of locations without lines.  A
 * status this reader does not know (a later minor version's) is
 * skipped. */
static int note_status(struct dec *d, size_t ci, const char *c)
{
	const char *w = c + strlen("#sym-loc");
	size_t len;
	uint8_t st;

	w += *w == ' ';
	len = strcspn(w, " ");
	for (st = 1; st < SYM_PROF_LOC_NSTATUS; st++)
		if (strlen(symi_prof_status_names[st]) == len &&
		    !strncmp(w, symi_prof_status_names[st], len))
			return note_list(d, ci, c, 2, d->loc_status, st + 1);
	return 0;
}

/*
 * The "#sym-pc" and "#sym-ret" comments, when the location table is the
 * one they were written for: they name the locations where pprof's rule
 * (leaf exact, the rest return addresses) is wrong.
 */
static int dec_pcs(struct dec *d)
{
	const PbProfile *pb = d->pb;
	const char *c;
	size_t i;
	int err = 0;

	for (i = 0; i < pb->n_comment && !err; i++) {
		c = str_at(pb, pb->comment[i]);
		if (is_list(c, "#sym-pc"))
			err = note_list(d, i, c, 1, d->loc_pc, 1);
		else if (is_list(c, "#sym-ret"))
			err = note_list(d, i, c, 1, d->loc_pc, 2);
		else if (is_list(c, "#sym-symtab"))
			err = note_list(d, i, c, 1, d->loc_symtab, 1);
		else if (is_list(c, "#sym-loc"))
			err = note_status(d, i, c);
	}
	return err;
}

/* Same mapped range (start, limit, offset)? */
static bool same_range(const struct map_note *a, const struct map_note *b)
{
	return a->start == b->start && a->limit == b->limit &&
	       a->offset == b->offset;
}

/*
 * The sym-map note for Mapping @pm: the one with its id and range, else
 * (a profile pprof renumbered) the notes with its range if they agree on
 * vaddr, kind and flags; pid is kept only if they agree on it too.
 */
static bool find_note(const struct dec *d, const PbMapping *pm,
		      struct map_note *out)
{
	struct map_note key = {
		.start = pm->memory_start,
		.limit = pm->memory_limit,
		.offset = pm->file_offset,
	};
	size_t lo = 0, hi = d->nnotes, mid, i;

	/* The first note of the range: id 0 sorts before any real id. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cmp_note(&d->notes[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < d->nnotes && same_range(&d->notes[hi], &key); hi++)
		if (d->notes[hi].id == pm->id) {
			*out = d->notes[hi];
			return true;
		}
	if (hi == lo)
		return false;
	*out = d->notes[lo];
	for (i = lo + 1; i < hi; i++) {
		if (d->notes[i].vaddr != out->vaddr ||
		    d->notes[i].kind != out->kind ||
		    d->notes[i].flags != out->flags)
			return false;
		if (d->notes[i].pid != out->pid)
			out->pid = 0;
	}
	return true;
}

/* Lowercase @s into @buf when it is a build ID (2 to 128 hex digits, an
 * even number); else NULL: the model holds only hex build IDs. */
static const char *norm_build_id(const char *s, char *buf)
{
	size_t n;

	for (n = 0; s[n]; n++) {
		if (n >= 128 || symi_hexval(s[n]) < 0)
			return NULL;
		buf[n] = (char)(s[n] >= 'A' && s[n] <= 'F' ? s[n] + 32 : s[n]);
	}
	buf[n] = '\0';
	return n >= 2 && n % 2 == 0 ? buf : NULL;
}

/* The kind a foreign mapping most likely is, from its name. */
static uint32_t guess_kind(const char *file, const char *build_id)
{
	if (strcmp(file, "[vdso]") == 0)
		return SYM_PROF_MAP_VDSO;
	if (strncmp(file, "[kernel", 7) == 0)
		return SYM_PROF_MAP_KERNEL;
	if ((!*file && !*build_id) || strncmp(file, "[anon", 5) == 0 ||
	    strcmp(file, "//anon") == 0 || strcmp(file, "[heap]") == 0 ||
	    strcmp(file, "[stack]") == 0)
		return SYM_PROF_MAP_ANON;
	return SYM_PROF_MAP_FILE;
}

static int dec_mappings(struct dec *d)
{
	const PbProfile *pb = d->pb;
	char idbuf[130];
	size_t i;
	int err = 0;

	d->map_model = symi_calloc(pb->n_mapping + 1, sizeof(*d->map_model));
	if (!d->map_model)
		return -ENOMEM;
	for (i = 0; i < pb->n_mapping; i++) {
		const PbMapping *pm = pb->mapping[i];
		const char *file = str_at(pb, pm->filename);
		const char *bid = str_at(pb, pm->build_id);
		struct sym_prof_map m = { 0 };
		struct map_note note;

		m.start = pm->memory_start;
		m.end = pm->memory_limit;
		m.pgoff = pm->file_offset;
		m.path = *file ? file : NULL;
		m.build_id = norm_build_id(bid, idbuf);
		if (d->ours && find_note(d, pm, &note)) {
			m.kind = note.kind;
			m.pid = note.pid;
			m.vaddr = note.vaddr;
			m.flags = note.flags;
		} else {
			m.kind = guess_kind(file, bid);
			m.pid = m.kind == SYM_PROF_MAP_KERNEL ? -1 : 0;
			/* Kernel frames are runtime addresses: no guess. */
			if (m.kind == SYM_PROF_MAP_KERNEL) {
				m.vaddr = m.start;
			} else {
				m.vaddr = m.pgoff;
				m.flags = SYM_PROF_MAP_VADDR_GUESSED;
			}
		}
		err = sym_prof_add_map(d->p, &m, &d->map_model[i]);
		if (err == -E2BIG)
			set_msg(d->msg, d->msglen, "more than 2^20 mappings");
		else if (err == -EINVAL)
			BAD(d, "mapping %zu (id %llu): refused", i,
			    (unsigned long long)pm->id);
		if (err)
			goto out;
	}
out:
	return err;
}

/* Each Location as a frame: its map and address. */
static int dec_locations(struct dec *d)
{
	const PbProfile *pb = d->pb;
	size_t i, n = pb->n_location ? pb->n_location : 1;
	int64_t k;

	d->loc_map = symi_calloc(n, sizeof(*d->loc_map));
	d->loc_addr = symi_calloc(n, sizeof(*d->loc_addr));
	d->loc_pc = symi_calloc(n, sizeof(*d->loc_pc));
	d->loc_status = symi_calloc(n, 1);
	d->loc_symtab = symi_calloc(n, 1);
	d->loc_done = symi_calloc(n, 1);
	d->lines = symi_calloc(SYM_PROF_MAX_LINES, sizeof(*d->lines));
	if (!d->loc_map || !d->loc_addr || !d->loc_pc || !d->loc_status ||
	    !d->loc_symtab || !d->loc_done || !d->lines)
		return -ENOMEM;
	for (i = 0; i < pb->n_location; i++) {
		const PbLocation *l = pb->location[i];
		const struct sym_prof_map *m;

		if (!l->mapping_id) {
			d->loc_map[i] = SYM_PROF_NOMAP;
			d->loc_addr[i] = l->address;
			continue;
		}
		/* Validated: the mapping exists. */
		k = idx_find(d->mix, pb->n_mapping, l->mapping_id,
			     mapping_id_at, pb->mapping);
		d->loc_map[i] = d->map_model[k];
		m = sym_prof_map(d->p, d->loc_map[i]);
		/* Wraps for an address below the map's start; the writer
		 * wraps back, so such a file still round-trips. */
		d->loc_addr[i] = l->address - m->start + m->vaddr;
	}
	return 0;
}

/* A sample type's name or unit that a value type can take: 1 to 64 of
 * [A-Za-z0-9_.-] (sym_prof_set_value_types()). */
static bool vt_word_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_.-") == n;
}

/*
 * Value types (sym_prof_set_value_types()) from the sample types: ours
 * are the columns after samples/count and the weight; a foreign profile
 * with more than two (Go's heap profile: alloc_objects, alloc_space,
 * inuse_objects, inuse_space) gets every column as one, unless a name
 * or unit cannot be one or a name repeats.  Sets d->vt_col.
 */
static int pick_value_types(struct dec *d)
{
	const PbProfile *pb = d->pb;
	const char *names[SYM_PROF_MAX_VALUES], *units[SYM_PROF_MAX_VALUES];
	size_t n = pb->n_sample_type, first = d->ours ? 2 : 0, k;
	int err;

	d->vt_col = -1;
	if (n <= 2 || n - first > SYM_PROF_MAX_VALUES)
		return 0;
	for (k = first; k < n; k++) {
		names[k - first] = str_at(pb, pb->sample_type[k]->type);
		units[k - first] = str_at(pb, pb->sample_type[k]->unit);
		if (!vt_word_ok(names[k - first]) ||
		    !vt_word_ok(units[k - first]))
			return 0;
		for (size_t j = first; j < k; j++)
			if (!strcmp(names[j - first], names[k - first]))
				return 0;
	}
	err = sym_prof_set_value_types(d->p, names, units,
				       (uint32_t)(n - first));
	if (!err)
		d->vt_col = (int)first;
	return err;
}

/* Which values are the count and the weight (docs/pprof.md). */
static void pick_columns(struct dec *d)
{
	const PbProfile *pb = d->pb;
	const char *def = str_at(pb, pb->default_sample_type);
	int i, n = (int)pb->n_sample_type;

	d->count_col = d->weight_col = -1;
	if (d->ours && n > 2) {
		/* samples/count, the weight, then value types. */
		d->count_col = 0;
		d->weight_col = 1;
		return;
	}
	for (i = 0; i < n && d->count_col < 0; i++)
		if (strcmp(str_at(pb, pb->sample_type[i]->unit), "count") == 0 &&
		    strcmp(str_at(pb, pb->sample_type[i]->type), "samples") == 0)
			d->count_col = i;
	for (i = 0; i < n && d->count_col < 0; i++)
		if (strcmp(str_at(pb, pb->sample_type[i]->unit), "count") == 0)
			d->count_col = i;
	if (*def)
		for (i = 0; i < n; i++)
			if (i != d->count_col &&
			    strcmp(str_at(pb, pb->sample_type[i]->type),
				   def) == 0)
				d->weight_col = i;
	for (i = n - 1; i >= 0 && d->weight_col < 0; i--)
		if (i != d->count_col)
			d->weight_col = i;
}

/* The header of a foreign profile, from what pprof has. */
static void foreign_header(struct dec *d)
{
	const PbProfile *pb = d->pb;
	struct sym_prof_header *h = &d->h;
	const char *type, *unit;

	h->weight_unit = "samples";
	if (d->weight_col >= 0) {
		type = str_at(pb, pb->sample_type[d->weight_col]->type);
		unit = str_at(pb, pb->sample_type[d->weight_col]->unit);
		if (strcmp(unit, "nanoseconds") == 0)
			h->weight_unit = "ns";
		else if (strcmp(unit, "count") != 0)
			/* Any other unit as it is ("bytes"); an empty one
			 * as "unknown", since the raw format needs one. */
			h->weight_unit = *unit ? unit : "unknown";
		if (strcmp(type, "cpu") == 0)
			h->event = "cpu-clock";
		else
			h->event = *type ? type : NULL;
	}
	h->period = (uint64_t)pb->period;
	if (h->weight_unit && strcmp(h->weight_unit, "ns") == 0 &&
	    pb->period > 0)
		h->frequency = (1000000000ULL + (uint64_t)pb->period / 2) /
			       (uint64_t)pb->period;
	h->duration_ns = (uint64_t)pb->duration_nanos;
}

/* A Line's number as the model's: negative is unknown (0), and larger
 * than 2^32 - 1 is clamped. */
static uint32_t line_num(int64_t v)
{
	return v < 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/*
 * The symbolization of frame @f, location @k, the first time the location
 * is used as such a frame (exact PC or return address): its lines, ok,
 * or the status of a trusted "#sym-loc" comment.  A chain deeper than
 * SYM_PROF_MAX_LINES keeps its innermost lines and the outermost one.
 */
static int dec_frame_location(struct dec *d, int64_t k,
			      const struct sym_prof_frame *f)
{
	const PbProfile *pb = d->pb;
	const PbLocation *l = pb->location[k];
	uint8_t bit = f->flags & SYM_PROF_FRAME_RETURN ? 2 : 1;
	size_t n = l->n_line, j;
	int err;

	if (d->loc_done[k] & bit)
		return 0;
	d->loc_done[k] |= bit;
	if (!n)
		return d->loc_status[k] ?
		       sym_prof_set_location(d->p, f, d->loc_status[k] - 1U,
					     NULL, 0) : 0;
	if (n > SYM_PROF_MAX_LINES)
		n = SYM_PROF_MAX_LINES;
	for (j = 0; j < n; j++) {
		const PbLine *pl = l->line[j == n - 1 ? l->n_line - 1 : j];
		/* Validated: the function exists. */
		const PbFunction *fn = pb->function[idx_find(
			d->fix, pb->n_function, pl->function_id,
			function_id_at, pb->function)];
		const char *name = str_at(pb, fn->name);

		d->lines[j] = (struct sym_prof_line){
			.function = *name ? name : str_at(pb, fn->system_name),
			.file = str_at(pb, fn->filename),
			.line = line_num(pl->line),
			.column = line_num(pl->column),
			.flags = j < n - 1 ? SYM_PROF_LINE_INLINED :
				 d->loc_symtab[k] ? SYM_PROF_LINE_SYMTAB : 0,
		};
	}
	err = sym_prof_set_location(d->p, f, SYM_PROF_LOC_OK, d->lines, n);
	if (err == -E2BIG)
		set_msg(d->msg, d->msglen, "location %lld: more than 2^26 "
			"symbolized frames", (long long)k);
	return err;
}

/* The stack flags of a "sym_flags" label. */
static uint32_t parse_flags(const char *s)
{
	uint32_t flags = 0;
	size_t len;
	int i;

	while (*s) {
		len = strcspn(s, ",");
		for (i = 0; i < SYM_PROF_NFLAGS; i++)
			if (strlen(symi_prof_flag_names[i]) == len &&
			    strncmp(s, symi_prof_flag_names[i], len) == 0)
				break;
		if (len)
			flags |= i < SYM_PROF_NFLAGS ? 1u << i :
				 (uint32_t)SYM_PROF_UNKNOWN_FLAG;
		s += len;
		if (*s == ',')
			s++;
	}
	return flags;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static int dec_samples(struct dec *d)
{
	const PbProfile *pb = d->pb;
	uint64_t vals[SYM_PROF_MAX_VALUES];
	struct sym_prof_frame *fr;
	size_t i, j, n;
	int64_t k;
	int err = 0;

	fr = symi_calloc(SYM_PROF_MAX_FRAMES, sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	for (i = 0; i < pb->n_sample; i++) {
		const PbSample *ps = pb->sample[i];
		struct sym_prof_stack s = { 0 };
		bool seen_pid = false, seen_tid = false, seen_flags = false;

		n = ps->n_location_id;
		if (n > SYM_PROF_MAX_FRAMES) {
			n = SYM_PROF_MAX_FRAMES;
			s.flags |= SYM_PROF_TRUNCATED;
		}
		for (j = 0; j < n; j++) {
			k = idx_find(d->lix, pb->n_location,
				     ps->location_id[j], location_id_at,
				     pb->location);
			fr[j].map = d->loc_map[k];
			fr[j].addr = d->loc_addr[k];
			if (d->loc_pc[k])
				fr[j].flags = d->loc_pc[k] == 1 ? 0 :
					      SYM_PROF_FRAME_RETURN;
			else
				fr[j].flags = j ? SYM_PROF_FRAME_RETURN : 0;
			err = dec_frame_location(d, k, &fr[j]);
			if (err)
				goto out;
		}
		s.count = d->count_col >= 0 ?
			  (uint64_t)ps->value[d->count_col] : 1;
		s.weight = d->weight_col >= 0 ?
			   (uint64_t)ps->value[d->weight_col] : s.count;
		for (j = 0; j < ps->n_label; j++) {
			const PbLabel *l = ps->label[j];
			const char *key = str_at(pb, l->key);
			bool is_pid = strcmp(key, "pid") == 0;

			if (is_pid || strcmp(key, "tid") == 0) {
				if (l->str || l->num < INT32_MIN ||
				    l->num > INT32_MAX)
					BAD(d, "sample %zu: label %s is not "
					    "a 32-bit number", i, key);
				if (is_pid ? seen_pid : seen_tid)
					BAD(d, "sample %zu: two %s labels", i,
					    key);
				if (is_pid) {
					s.pid = (int32_t)l->num;
					seen_pid = true;
				} else {
					s.tid = (int32_t)l->num;
					seen_tid = true;
				}
			} else if (strcmp(key, "sym_flags") == 0) {
				if (seen_flags)
					BAD(d, "sample %zu: two sym_flags "
					    "labels", i);
				s.flags |= parse_flags(str_at(pb, l->str));
				seen_flags = true;
			}
		}
		s.nframes = (uint32_t)n;
		s.frames = fr;
		if (s.pid < 0 || s.tid < 0)
			BAD(d, "sample %zu: negative pid or tid label", i);
		for (j = 0; d->vt_col >= 0 && j < pb->n_sample_type -
						   (size_t)d->vt_col; j++)
			vals[j] = (uint64_t)ps->value[d->vt_col + (int)j];
		err = sym_prof_add_stack_values(d->p, &s, 0,
						d->vt_col >= 0 ? vals : NULL);
		if (err == -E2BIG) {
			set_msg(d->msg, d->msglen, "sample %zu: more than "
				"2^24 unique stacks", i);
			goto out;
		}
		if (err == -EOVERFLOW)
			BAD(d, "sample %zu: the count or weight of its stack "
			    "sums past 2^64 - 1", i);
		if (err == -EINVAL)
			BAD(d, "sample %zu: refused by the model", i);
		if (err)
			goto out;
		if (!d->ours) {
			d->h.samples = sat_add(d->h.samples, s.count);
			for (j = 0; j < SYM_PROF_NFLAGS; j++)
				if (s.flags & (1u << j))
					d->h.flagged[j] =
						sat_add(d->h.flagged[j],
							s.count);
		}
	}
out:
	free(fr);
	return err;
}

/* Decode a plain (not gzipped) protobuf profile. */
static int read_plain(const uint8_t *buf, size_t len, struct sym_prof **out,
		      char *msg, size_t msglen)
{
	struct dec_alloc da = {
		.a = { .alloc = dec_alloc, .free = dec_free },
		.cap = PPROF_MAX_DECODED,
	};
	PbProfile *pb = NULL;
	struct dec d;
	int err = 0;

	memset(&d, 0, sizeof(d));
	d.msg = msg;
	d.msglen = msglen;
	da.a.allocator_data = &da;
	if (len > PPROF_MAX_INPUT) {
		set_msg(msg, msglen, "pprof: %zu bytes of protobuf, more than "
			"%llu", len, (unsigned long long)PPROF_MAX_INPUT);
		return -E2BIG;
	}
	if (len == 0) {
		set_msg(msg, msglen, "empty input");
		return -SYM_E_BADPROFILE;
	}
	pb = perftools__profiles__profile__unpack(&da.a, len, buf);
	if (!pb) {
		if (da.nomem) {
			err = -ENOMEM;
		} else if (da.over) {
			set_msg(msg, msglen, "pprof: decoding needs more than "
				"%llu bytes of memory",
				(unsigned long long)PPROF_MAX_DECODED);
			err = -E2BIG;
		} else {
			set_msg(msg, msglen, "not a pprof profile (protobuf "
				"decoding failed)");
			err = -SYM_E_BADPROFILE;
		}
		arena_release(&da);
		return err;
	}
	d.pb = pb;
	err = dec_validate(&d);
	if (err)
		goto out;
	err = sym_prof_new(&d.p);
	if (err)
		goto out;
	/* The header from pprof's fields; our own comments override it. */
	find_marker(&d);
	pick_columns(&d);
	foreign_header(&d);
	d.h.start_ns = pb->time_nanos;
	err = pick_value_types(&d);
	if (err)
		goto out;
	if (d.ours) {
		err = dec_comments(&d);
		if (err)
			goto out;
	}
	err = dec_mappings(&d);
	if (!err)
		err = dec_locations(&d);
	if (!err && d.ours && d.pc_trusted)
		err = dec_pcs(&d);
	if (!err)
		err = dec_samples(&d);
	if (!err && d.symbolized)
		symi_prof_set_symbolized(d.p);
	if (!err)
		err = sym_prof_set_header(d.p, &d.h);
	if (!err)
		err = sym_prof_set_release(d.p, d.release);
	if (err)
		goto out;
	*out = d.p;
	d.p = NULL;
out:
	if (err == -ENOMEM)
		set_msg(msg, msglen, "out of memory");
	sym_prof_free(d.p);
	dec_release(&d);
	arena_release(&da);	/* all of pb */
	return err;
}

int sym_prof_read_pprof(const void *buf, size_t len, struct sym_prof **out,
			char *msg, size_t msglen)
{
	const uint8_t *b = buf ? buf : (const void *)"";
	uint8_t *plain = NULL;
	size_t plen = 0;
	int err;

	if (out)
		*out = NULL;
	if (!out || (!buf && len)) {
		set_msg(msg, msglen, "a NULL %s",
			out ? "buffer" : "out-pointer");
		return -EINVAL;
	}
	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		err = gunzip(b, len, &plain, &plen, msg, msglen);
		if (!err)
			err = read_plain(plain, plen, out, msg, msglen);
		free(plain);
		return err;
	}
	return read_plain(b, len, out, msg, msglen);
}

/* Read all of @fd, at most PROF_FILE_MAX bytes. */
static int read_all(int fd, uint8_t **out, size_t *outlen)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0;
	ssize_t n;
	int err = 0;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > PROF_FILE_MAX)
			return -E2BIG;
		cap = (size_t)st.st_size + 1;
		buf = symi_malloc(cap);
		if (!buf)
			return -ENOMEM;
	}
	for (;;) {
		if (len == cap) {
			if (cap > PROF_FILE_MAX) {
				err = -E2BIG;
				goto out;
			}
			err = symi_grow((void **)&buf, &cap, len + 65536, 1);
			if (err)
				goto out;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*out = buf;
	*outlen = len;
	buf = NULL;
out:
	free(buf);
	return err;
}

static bool is_raw(const uint8_t *b, size_t len)
{
	return len >= 8 && memcmp(b, "sym-raw ", 8) == 0;
}

int sym_prof_read_file(const char *path, struct sym_prof **out, char *msg,
		       size_t msglen)
{
	uint8_t *buf = NULL, *plain = NULL;
	size_t len = 0, plen = 0;
	int fd, err;

	if (out)
		*out = NULL;
	if (!out || !path) {
		set_msg(msg, msglen, "a NULL %s", out ? "path" : "out-pointer");
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		set_msg(msg, msglen, "cannot open '%s': %s", path,
			strerror(-err));
		return err;
	}
	err = read_all(fd, &buf, &len);
	close(fd);
	if (err) {
		if (err == -E2BIG)
			set_msg(msg, msglen, "'%s' is over %llu bytes", path,
				(unsigned long long)PROF_FILE_MAX);
		else
			set_msg(msg, msglen, "cannot read '%s': %s", path,
				strerror(-err));
		goto out;
	}
	if (is_raw(buf, len)) {
		err = sym_prof_read(buf, len, out, msg, msglen);
	} else if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		/* Gzipped: a raw file or a pprof profile. */
		err = gunzip(buf, len, &plain, &plen, msg, msglen);
		free(buf);
		buf = NULL;
		if (!err && is_raw(plain, plen))
			err = sym_prof_read(plain, plen, out, msg, msglen);
		else if (!err)
			err = read_plain(plain, plen, out, msg, msglen);
	} else {
		err = read_plain(buf, len, out, msg, msglen);
	}
out:
	free(buf);
	free(plain);
	return err;
}
