/*
 * views.c - the input layer of the profile views (views.h): inputs of any
 * format in, named stacks out; and the atomic output file.
 *
 * Storage: every stack's name ids sit in one array (ids), each stack
 * holds its offset into it while the array may still move, and the
 * stacks' frame pointers are set once an input is complete.  Names are
 * interned as the children of the root of a private stacktree: stacktree
 * keeps each distinct name once and finds a child by a hash of its name,
 * which is exactly an interning table, and a child's node id is the
 * name's id (1 and up; the root, 0, is no name).
 *
 * Frames are named through the profile's symbolization
 * (sym_prof_location(), O(1)); an input that has none is symbolized
 * first by tool_prof_load() (tools/symbolize.c), the same code as `sym
 * symbolize`.
 *
 * stdin: telling a format needs its first bytes and reading needs all of
 * them, so stdin that is not a regular file is copied into a memfd,
 * which then becomes fd 0: /dev/stdin opens it again from its start (up
 * to 1 GiB, what the profile readers take).
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "views.h"
#include "base.h"

/* Bytes of an input looked at to tell its format: the longest folded
 * line, and more. */
#define SNIFF_BYTES (STACKTREE_LINE_MAX + 4096)
/* Most bytes of stdin kept in memory. */
#define STDIN_MAX (1ull << 30)
/* Digits of a build ID that name a module without a path. */
#define BUILD_ID_DIGITS 8

/* The filters, in struct views' re[]: --focus, --ignore, --hide. */
enum { F_FOCUS, F_IGNORE, F_HIDE, NFILTERS };
/* Bits of views.match[id]: known, then one per filter that matches. */
#define MATCH_KNOWN 1u
#define MATCH_BIT(f) (2u << (f))

struct vstack {
	struct views_stack pub;
	size_t off;		/* of pub.frames in views.ids */
};

/*
 * The names of each distinct frame of the profile being read, so that a
 * frame met again (a profile of N unique frames has many stacks over
 * them) costs a hash probe and a copy, not a location lookup, name
 * building and interning per line.  Open addressing, at most half full.
 */
struct fslot {
	uint64_t addr;
	uint32_t map, flags;	/* the frame's key, with @addr */
	uint32_t off, n;	/* its names in fcache.ids; n = 0: empty */
};

struct fcache {
	struct fslot *slots;	/* cap a power of 2 */
	size_t cap, used;
	uint32_t *ids;
	size_t nids, ids_cap;
};

struct views {
	uint32_t flags;			/* enum views_flags */
	struct stacktree *names;	/* names: the root's children */
	struct vstack *stacks;
	size_t nstacks, stacks_cap;
	uint32_t *ids;			/* frames of every stack */
	size_t nids, ids_cap;
	struct views_input *inputs;
	size_t ninputs, inputs_cap;
	uint64_t total;
	char *buf;			/* a name being built */
	size_t buf_cap;
	char **hosts;			/* of sources: free() each */
	size_t nhosts, hosts_cap;
	/* The filters (views_set_filters()); re[i] compiled when has[i]. */
	regex_t re[NFILTERS];
	bool has[NFILTERS];
	uint8_t *match;			/* per name id: MATCH_* bits */
	size_t match_cap;
	uint64_t filtered;		/* samples dropped */
	/* --value TYPE: the type's unit in the first input; free() */
	char *vunit;
};

int views_new(uint32_t flags, struct views **out)
{
	struct views *v = calloc(1, sizeof(*v));

	*out = NULL;
	if (!v || stacktree_new(&v->names)) {
		free(v);
		return -ENOMEM;
	}
	v->flags = flags;
	*out = v;
	return 0;
}

static void input_release(struct views_input *in)
{
	free(in->host);
	free(in->weight_unit);
	free(in->event);
	free(in->tool);
	free(in->mode);
}

void views_free(struct views *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->ninputs; i++)
		input_release(&v->inputs[i]);
	free(v->inputs);
	stacktree_free(v->names);
	free(v->stacks);
	free(v->ids);
	free(v->buf);
	for (size_t i = 0; i < v->nhosts; i++)
		free(v->hosts[i]);
	free(v->hosts);
	for (int f = 0; f < NFILTERS; f++)
		if (v->has[f])
			regfree(&v->re[f]);
	free(v->match);
	free(v->vunit);
	free(v);
}

int views_set_filters(struct views *v, const struct views_opts *o)
{
	static const char *const names[NFILTERS] = { "focus", "ignore",
						     "hide" };
	const char *res[NFILTERS] = { o->focus, o->ignore, o->hide };
	char msg[256];
	int rc;

	for (int f = 0; f < NFILTERS; f++) {
		if (!res[f] || v->has[f])
			continue;
		rc = regcomp(&v->re[f], res[f], REG_EXTENDED | REG_NOSUB);
		if (rc) {
			regerror(rc, &v->re[f], msg, sizeof(msg));
			tool_err("--%s: '%s': %s", names[f], res[f], msg);
			return rc == REG_ESPACE ? -ENOMEM : -EINVAL;
		}
		v->has[f] = true;
	}
	return 0;
}

uint64_t views_filtered(const struct views *v)
{
	return v->filtered;
}

size_t views_nstacks(const struct views *v)
{
	return v->nstacks;
}

const struct views_stack *views_stack(const struct views *v, size_t i)
{
	return i < v->nstacks ? &v->stacks[i].pub : NULL;
}

size_t views_nnames(const struct views *v)
{
	return stacktree_size(v->names);
}

const char *views_name(const struct views *v, uint32_t id, size_t *len)
{
	if (id == 0 || id >= stacktree_size(v->names)) {
		if (len)
			*len = 0;
		return "";
	}
	return stacktree_name(v->names, id, len);
}

uint64_t views_total(const struct views *v)
{
	return v->total;
}

size_t views_ninputs(const struct views *v)
{
	return v->ninputs;
}

const struct views_input *views_input(const struct views *v, size_t i)
{
	return i < v->ninputs ? &v->inputs[i] : NULL;
}

const char *views_unit(const struct views *v)
{
	const char *u = NULL;

	if (!(v->flags & VIEWS_WEIGHT))
		return "samples";
	if (v->vunit)
		return v->vunit;
	for (size_t i = 0; i < v->ninputs; i++)
		if (v->inputs[i].weight_unit)
			u = v->inputs[i].weight_unit;
	return u ? u : "weight";
}

/* ---- names ---- */

/* Make room for @n more bytes in the name buffer. */
static int buf_room(struct views *v, size_t used, size_t n)
{
	if (n > SIZE_MAX - used - 1)
		return -ENOMEM;
	return tool_grow(&v->buf, &v->buf_cap, used + n + 1, 1, 16);
}

/*
 * Append @s to the name being built at v->buf + *len, made safe for the
 * folded format: ';' becomes ':', line ends spaces.
 */
static int buf_put(struct views *v, size_t *len, const char *s, size_t n)
{
	int err = buf_room(v, *len, n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		v->buf[*len + i] = c == ';' ? ':' :
				   c == '\n' || c == '\r' ? ' ' : c;
	}
	*len += n;
	v->buf[*len] = '\0';
	return 0;
}

/* Append a name, from the buffer, to the current stack. */
static int push_buf(struct views *v, size_t len)
{
	uint32_t id;
	int err = stacktree_child(v->names, STACKTREE_ROOT, v->buf, len, &id);

	if (!err)
		err = tool_grow(&v->ids, &v->ids_cap, v->nids + 1,
				sizeof(*v->ids), 16);
	if (!err)
		v->ids[v->nids++] = id;
	return err;
}

/* Append the name @s (@n bytes) with @suffix (may be NULL). */
static int push_name(struct views *v, const char *s, size_t n,
		     const char *suffix)
{
	size_t len = 0;
	int err = buf_put(v, &len, s, n);

	if (!err && suffix)
		err = buf_put(v, &len, suffix, strlen(suffix));
	return err ? err : push_buf(v, len);
}

/* ---- profiles ---- */

const char *views_module_name(const struct sym_prof_map *m, size_t *len)
{
	const char *s = "[unknown]", *slash;

	if (m && m->path) {
		slash = strrchr(m->path, '/');
		s = slash && slash[1] ? slash + 1 : m->path;
	} else if (m && m->build_id) {
		*len = strnlen(m->build_id, BUILD_ID_DIGITS);
		return m->build_id;
	} else if (m && m->kind == SYM_PROF_MAP_ANON) {
		/* where its names came from, when a recorder said so */
		s = m->flags & SYM_PROF_MAP_PERFMAP_STALE ? "[perf-map-stale]" :
		    m->flags & SYM_PROF_MAP_PERFMAP	  ? "[perf-map]" :
							    "[anon]";
	}
	*len = strlen(s);
	return s;
}

/* The module part of "module+0xADDR" for map @m (NULL: no map). */
static void module_name(const struct sym_prof_map *m, char *out, size_t len)
{
	size_t n;
	const char *s = views_module_name(m, &n);

	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), s);
}

/* The annotation of a frame of map @m that is not an inlined call. */
static const char *map_suffix(const struct views *v,
			      const struct sym_prof_map *m)
{
	if (!m)
		return NULL;
	if (m->kind == SYM_PROF_MAP_KERNEL && (v->flags & VIEWS_KERNEL))
		return "_[k]";
	if (m->kind == SYM_PROF_MAP_ANON && (v->flags & VIEWS_JIT))
		return "_[j]";
	return NULL;
}

/*
 * Append the name of one line @l of a chain at the granularity of @v:
 * its function, "function file:line", or its file; @unres (the frame's
 * unresolved name) when the line lacks what is asked.  *prev is the id
 * pushed before in this chain: --granularity=files does not repeat a
 * file within one chain.
 */
static int push_line(struct views *v, const struct sym_prof_line *l,
		     const char *unres, const char *sfx, uint32_t *prev)
{
	const char *s = l->function ? l->function : unres;
	size_t len = 0;
	char num[16];
	int err;

	if (v->flags & VIEWS_GRAN_FILES) {
		s = l->file ? l->file : unres;
		err = buf_put(v, &len, s, strlen(s));
		if (err)
			return err;
		err = push_buf(v, len);
		if (!err && *prev && v->ids[v->nids - 1] == *prev)
			v->nids--;	/* the same file again */
		if (!err)
			*prev = v->ids[v->nids - 1];
		return err;
	}
	err = buf_put(v, &len, s, strlen(s));
	if (!err && (v->flags & VIEWS_GRAN_LINES) && l->file) {
		snprintf(num, sizeof(num), ":%u", l->line);
		err = buf_put(v, &len, " ", 1);
		if (!err)
			err = buf_put(v, &len, l->file, strlen(l->file));
		if (!err)
			err = buf_put(v, &len, num, strlen(num));
	}
	if (!err && sfx)
		err = buf_put(v, &len, sfx, strlen(sfx));
	return err ? err : push_buf(v, len);
}

/* Append the names of frame @f: its inline chain, real function first. */
static int push_frame(struct views *v, const struct sym_prof *p,
		      const struct sym_prof_frame *f)
{
	const struct sym_prof_map *m =
		f->map == SYM_PROF_NOMAP ? NULL : sym_prof_map(p, f->map);
	const char *suffix = map_suffix(v, m);
	const struct sym_prof_line *lines = NULL;
	uint32_t status = SYM_PROF_LOC_ERROR, prev = 0;
	size_t n = 0, j, last;
	char mod[256], name[300];
	int err;

	if (sym_prof_location(p, f, &status, &lines, &n) != 0 ||
	    status != SYM_PROF_LOC_OK)
		n = 0;
	/* A line without a function (rare) is named like an unresolved
	 * frame, so that no frame of the chain is lost.  Unresolved frames
	 * are one per module ("module+?", as pprof's habit of grouping
	 * what it cannot name), or per address with VIEWS_GRAN_ADDRESSES. */
	module_name(m, mod, sizeof(mod));
	if (v->flags & VIEWS_GRAN_MODULES)
		return push_name(v, mod, strlen(mod), suffix);
	if (v->flags & VIEWS_GRAN_ADDRESSES)
		snprintf(name, sizeof(name), "%s+0x%llx", mod,
			 (unsigned long long)f->addr);
	else
		snprintf(name, sizeof(name), "%s+?", mod);
	if (n == 0)
		return push_name(v, name, strlen(name), suffix);
	last = v->flags & VIEWS_INLINE_NONE ? n - 1 : 0;
	for (j = n; j-- > last;) {
		const struct sym_prof_line *l = &lines[j];
		const char *sfx = suffix;

		if ((l->flags & SYM_PROF_LINE_INLINED) &&
		    !(v->flags & VIEWS_INLINE_PLAIN))
			sfx = "_[i]";
		err = push_line(v, l, name, sfx, &prev);
		if (err)
			return err;
	}
	return 0;
}

/* The root frame of a stack: comm, comm-PID or comm-PID/TID. */
static int push_process(struct views *v, const struct sym_prof *p,
			const struct sym_prof_stack *s)
{
	const char *pcomm = s->pid ? sym_prof_process(p, s->pid, NULL, NULL)
				   : NULL;
	const char *tcomm = s->tid ? sym_prof_thread(p, s->tid) : NULL;
	const char *comm;
	char id[48] = "";
	size_t len = 0, i, start;
	int err;

	/* A thread frame names the thread; a process frame the process. */
	if (v->flags & VIEWS_TID)
		comm = tcomm ? tcomm : pcomm;
	else
		comm = pcomm ? pcomm : tcomm;
	if (!comm)
		comm = "[unknown]";
	err = buf_put(v, &len, comm, strlen(comm));
	if (err)
		return err;
	for (i = 0; i < len; i++)
		if (v->buf[i] == ' ' || v->buf[i] == '\t')
			v->buf[i] = '_';
	if (v->flags & (VIEWS_PID | VIEWS_TID)) {
		start = 0;
		if (s->pid)
			start = (size_t)snprintf(id, sizeof(id), "-%d", s->pid);
		else
			start = (size_t)snprintf(id, sizeof(id), "-?");
		if (v->flags & VIEWS_TID) {
			if (s->tid)
				snprintf(id + start, sizeof(id) - start, "/%d",
					 s->tid);
			else
				snprintf(id + start, sizeof(id) - start, "/?");
		}
		err = buf_put(v, &len, id, strlen(id));
		if (err)
			return err;
	}
	return push_buf(v, len);
}

/*
 * Start a stack: "[broken stack]" when it is flagged, then the process or
 * thread when asked for (@p and @s are NULL for folded stacks, which
 * have neither).  *start is its offset.
 */
static int stack_begin(struct views *v, const struct sym_prof *p,
		       const struct sym_prof_stack *s, size_t *start)
{
	int err;

	*start = v->nids;
	if (s && s->flags && !(v->flags & VIEWS_BROKEN_PLAIN)) {
		err = push_name(v, BROKEN_FRAME, strlen(BROKEN_FRAME), NULL);
		if (err)
			return err;
	}
	if (p && (v->flags & (VIEWS_COMM | VIEWS_PID | VIEWS_TID)))
		return push_process(v, p, s);
	return 0;
}

/* The MATCH_* bits of name @id, computed once. */
static int name_match(struct views *v, uint32_t id, uint8_t *out)
{
	size_t old = v->match_cap;
	int err;

	if (id >= v->match_cap) {
		err = tool_grow(&v->match, &v->match_cap, (size_t)id + 1,
				sizeof(*v->match), 256);
		if (err)
			return err;
		memset(v->match + old, 0, v->match_cap - old);
	}
	if (!v->match[id]) {
		const char *s = views_name(v, id, NULL);

		v->match[id] = MATCH_KNOWN;
		for (int f = 0; f < NFILTERS; f++)
			if (v->has[f] && regexec(&v->re[f], s, 0, NULL, 0) == 0)
				v->match[id] |= (uint8_t)MATCH_BIT(f);
	}
	*out = v->match[id];
	return 0;
}

/*
 * Apply the filters to the frames from @start on: pprof's focus (keep a
 * stack with a frame that matches), ignore (drop it) and hide (remove the
 * frames that match).  @return 1 when the stack is dropped, 0 when kept,
 * or an error.
 */
static int filter(struct views *v, size_t start)
{
	bool focus = !v->has[F_FOCUS], ignore = false;
	size_t j, k;
	uint8_t m;
	int err;

	if (!v->has[F_FOCUS] && !v->has[F_IGNORE] && !v->has[F_HIDE])
		return 0;
	for (j = start; j < v->nids; j++) {
		err = name_match(v, v->ids[j], &m);
		if (err)
			return err;
		focus |= (m & MATCH_BIT(F_FOCUS)) != 0;
		ignore |= (m & MATCH_BIT(F_IGNORE)) != 0;
	}
	if (!focus || ignore)
		return 1;
	if (!v->has[F_HIDE])
		return 0;
	for (j = k = start; j < v->nids; j++)
		if (!(v->match[v->ids[j]] & MATCH_BIT(F_HIDE)))
			v->ids[k++] = v->ids[j];
	/* Only hidden frames: nothing left to show it under. */
	if (k == start && v->nids > start)
		return 1;
	v->nids = k;
	return 0;
}

/* Finish the stack begun at @start with its numbers: 0, 1 when the
 * filters dropped it (nothing added), or an error. */
static int stack_end(struct views *v, size_t start, uint64_t count,
		     uint64_t weight, uint64_t value, int32_t pid, int32_t tid,
		     uint32_t flags)
{
	struct vstack *vs;
	int err;

	err = filter(v, start);
	if (err) {
		if (err > 0) {
			v->nids = start;
			v->filtered += count;
		}
		return err;
	}
	if (v->nids == start) {
		err = push_name(v, "[no stack]", strlen("[no stack]"), NULL);
		if (err)
			return err;
	}
	if (v->nids - start > UINT32_MAX)
		return -E2BIG;
	if (value > UINT64_MAX - v->total)
		return -ERANGE;
	err = tool_grow(&v->stacks, &v->stacks_cap, v->nstacks + 1,
			sizeof(*v->stacks), 16);
	if (err)
		return err;
	vs = &v->stacks[v->nstacks++];
	*vs = (struct vstack){
		.pub = { .nframes = (uint32_t)(v->nids - start),
			 .flags = flags, .count = count, .weight = weight,
			 .value = value, .pid = pid, .tid = tid,
			 .input = (uint32_t)v->ninputs },
		.off = start,
	};
	v->total += value;
	return 0;
}

static size_t fslot_of(const struct fcache *c, const struct sym_prof_frame *f)
{
	uint64_t h = (f->addr ^ ((uint64_t)f->map << 40) ^ f->flags) *
		     0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h ^ (h >> 31)) & (c->cap - 1);

	while (c->slots[i].n && (c->slots[i].addr != f->addr ||
				 c->slots[i].map != f->map ||
				 c->slots[i].flags != f->flags))
		i = (i + 1) & (c->cap - 1);
	return i;
}

/* Double the table (or make the first one). */
static int fcache_grow(struct fcache *c)
{
	struct fcache old = *c;
	size_t cap = c->cap ? 2 * c->cap : 1024;

	c->slots = calloc(cap, sizeof(*c->slots));
	if (!c->slots) {
		c->slots = old.slots;
		return -ENOMEM;
	}
	c->cap = cap;
	for (size_t i = 0; i < old.cap; i++) {
		struct sym_prof_frame f = { old.slots[i].addr, old.slots[i].map,
					    old.slots[i].flags };

		if (old.slots[i].n)
			c->slots[fslot_of(c, &f)] = old.slots[i];
	}
	free(old.slots);
	return 0;
}

/* Append the names of frame @f, from the cache or by push_frame(). */
static int push_frame_cached(struct views *v, struct fcache *c,
			     const struct sym_prof *p,
			     const struct sym_prof_frame *f)
{
	struct fslot *sl;
	size_t start = v->nids, n;
	int err;

	if ((c->used + 1) * 2 > c->cap) {
		err = fcache_grow(c);
		if (err)
			return err;
	}
	sl = &c->slots[fslot_of(c, f)];
	if (sl->n) {
		err = tool_grow(&v->ids, &v->ids_cap, v->nids + sl->n,
				sizeof(*v->ids), 16);
		if (err)
			return err;
		memcpy(v->ids + v->nids, c->ids + sl->off,
		       sl->n * sizeof(*v->ids));
		v->nids += sl->n;
		return 0;
	}
	err = push_frame(v, p, f);
	n = v->nids - start;
	if (err || n > SYM_PROF_MAX_LINES || c->nids + n > UINT32_MAX)
		return err;	/* (never more than a chain: not cached) */
	err = tool_grow(&c->ids, &c->ids_cap, c->nids + n, sizeof(*c->ids), 16);
	if (err)
		return err;
	memcpy(c->ids + c->nids, v->ids + start, n * sizeof(*c->ids));
	*sl = (struct fslot){ f->addr, f->map, f->flags, (uint32_t)c->nids,
			      (uint32_t)n };
	c->nids += n;
	c->used++;
	return 0;
}

/* Copy @s (NULL stays NULL) into *out. */
static int dup_str(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

/*
 * The index of value type @name (--value TYPE) in @p, its unit checked
 * against the inputs' before; -1 when @name is NULL (samples or weight).
 * @return 0, -EINVAL (printed: no such type, another unit), -ENOMEM
 */
static int value_index(struct views *v, const struct sym_prof *p,
		       const char *path, const char *name, int *out)
{
	const char *unit;
	int vi;

	*out = -1;
	if (!name)
		return 0;
	vi = sym_prof_value_index(p, name);
	if (vi < 0) {
		char types[SYM_PROF_MAX_VALUES * 66 + 1] = "";
		size_t len = 0;

		for (uint32_t k = 0; k < sym_prof_nvalue_types(p); k++)
			len += (size_t)snprintf(types + len, sizeof(types) - len,
						", %s",
						sym_prof_value_type(p, k, NULL));
		tool_err("'%s' has no value type '%s' (--value samples, "
			 "weight%s)", path, name, types);
		return -EINVAL;
	}
	sym_prof_value_type(p, (uint32_t)vi, &unit);
	if (v->vunit && strcmp(v->vunit, unit) != 0) {
		tool_err("'%s': value '%s' in '%s', the inputs' before in "
			 "'%s': they do not add up", path, name, unit, v->vunit);
		return -EINVAL;
	}
	if (!v->vunit && !(v->vunit = strdup(unit)))
		return -ENOMEM;
	*out = vi;
	return 0;
}

static const char *const source_names[VIEWS_NSOURCES] = {
	"dwarf", "gopclntab", "symtab", "kallsyms", "perf-map", "none",
};

const char *views_source_name(size_t k)
{
	return k < VIEWS_NSOURCES ? source_names[k] : NULL;
}

struct mod_key {
	const char *key;	/* build ID, else path, else "" */
	size_t src;		/* index in source_names */
};

static int cmp_mod_key(const void *a, const void *b)
{
	return strcmp(((const struct mod_key *)a)->key,
		      ((const struct mod_key *)b)->key);
}

/* Count @p's modules by source into @in->modules: a module is its maps
 * with one build ID (else path); a source any of them has wins. */
static int tally_sources(const struct sym_prof *p, struct views_input *in)
{
	size_t n = sym_prof_nmaps(p), k;
	struct mod_key *keys = calloc(n ? n : 1, sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct sym_prof_map *m = sym_prof_map(p, (uint32_t)i);
		const char *name = tool_map_source(m->flags);

		keys[i].key = m->build_id ? m->build_id :
			      m->path ? m->path : "";
		for (k = 0; k < VIEWS_NSOURCES - 1 &&
			    strcmp(source_names[k], name); k++)
			;
		keys[i].src = k;
	}
	qsort(keys, n, sizeof(*keys), cmp_mod_key);
	for (size_t i = 0; i < n; i = k) {
		size_t src = keys[i].src;

		for (k = i + 1; k < n && !strcmp(keys[k].key, keys[i].key);
		     k++)
			if (keys[k].src < src)
				src = keys[k].src;
		in->modules[src]++;
	}
	free(keys);
	return 0;
}

/* Append every stack of profile @p, as input @in: their value is the
 * count, the weight (VIEWS_WEIGHT) or value type @vtype. */
static int add_profile(struct views *v, const struct sym_prof *p,
		       struct views_input *in, const char *vtype)
{
	const struct sym_prof_header *h = sym_prof_header(p);
	struct fcache c = { 0 };
	size_t i, start, nsrc = sym_prof_nsources(p);
	const char **hostof = NULL;
	uint32_t j;
	int vi, err;

	err = value_index(v, p, in->path, vtype, &vi);
	if (err)
		return err == -EINVAL ? -SYM_E_BADPROFILE : err;

	if (dup_str(h->host, &in->host) ||
	    dup_str(h->weight_unit, &in->weight_unit) ||
	    dup_str(h->event, &in->event) || dup_str(h->tool, &in->tool) ||
	    dup_str(h->mode, &in->mode) ||
	    broken_tally_prof(p, &in->broken) || tally_sources(p, in)) {
		err = -ENOMEM;
		goto out;
	}
	/* The tally's strings are the profile's: point them at the copies. */
	in->broken.tool = in->tool;
	in->broken.mode = in->mode;
	in->flagged = in->broken.flagged;
	/* The host of each source (index 0: no source, the header's). */
	hostof = calloc(nsrc + 1, sizeof(*hostof));
	if (!hostof) {
		err = -ENOMEM;
		goto out;
	}
	hostof[0] = in->host;
	for (uint32_t k = 1; k <= nsrc; k++) {
		const char *name = sym_prof_source(p, k)->host;

		if (!name)
			continue;
		err = tool_grow(&v->hosts, &v->hosts_cap, v->nhosts + 1,
				sizeof(*v->hosts), 16);
		if (!err)
			err = dup_str(name, &v->hosts[v->nhosts]);
		if (err)
			goto out;
		hostof[k] = v->hosts[v->nhosts++];
	}
	in->period = h->period;
	in->frequency = h->frequency;
	in->duration_ns = h->duration_ns;
	in->lost = h->lost;
	in->dropped = h->dropped;
	for (i = 0; i < sym_prof_nstacks(p); i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);

		err = stack_begin(v, p, s, &start);
		for (j = s->nframes; !err && j-- > 0;)
			err = push_frame_cached(v, &c, p, &s->frames[j]);
		if (!err)
			err = stack_end(v, start, s->count, s->weight,
					vi >= 0 ? sym_prof_stack_values(p, i)[vi] :
					v->flags & VIEWS_WEIGHT ? s->weight :
					s->count, s->pid, s->tid, s->flags);
		/* Below the total, which did not overflow. */
		in->samples += s->count;
		in->stacks++;
		if (err > 0) {
			err = 0;	/* filtered out */
			continue;
		}
		if (err)
			goto out;
		v->stacks[v->nstacks - 1].pub.source =
			sym_prof_stack_source(p, i);
		v->stacks[v->nstacks - 1].pub.host =
			hostof[v->stacks[v->nstacks - 1].pub.source];
	}
out:
	free(hostof);
	free(c.slots);
	free(c.ids);
	return err;
}

/* ---- folded stacks ---- */

/* Append the stacks of a folded file, read into the tree @t. */
static int add_tree(struct views *v, const struct stacktree *t,
		    struct views_input *in)
{
	uint32_t *path = NULL;
	size_t cap = 0, depth, start, nn = stacktree_size(t);
	int err = 0;

	for (uint32_t id = 0; !err && id < nn; id++) {
		uint64_t self = stacktree_self(t, id);
		uint32_t up;

		if (!self)
			continue;
		depth = 0;
		for (up = id; up != STACKTREE_ROOT && !err;
		     up = stacktree_parent(t, up)) {
			err = tool_grow(&path, &cap, depth + 1, sizeof(*path),
					16);
			if (!err)
				path[depth++] = up;
		}
		err = err ? err : stack_begin(v, NULL, NULL, &start);
		while (!err && depth-- > 0) {
			size_t len;
			const char *s = stacktree_name(t, path[depth], &len);

			err = push_name(v, s, len, NULL);
		}
		if (!err)
			err = stack_end(v, start, self, self, self, 0, 0, 0);
		if (err > 0)
			err = 0;	/* filtered out */
		in->samples += self;
		in->stacks++;
	}
	free(path);
	return err;
}

/* Read the folded file @path into @v. */
static int load_folded(struct views *v, const char *path,
		       struct views_input *in)
{
	bool is_stdin = strcmp(path, "-") == 0;
	struct stacktree *t = NULL;
	char msg[512];
	FILE *f;
	int err;

	f = fopen(is_stdin ? "/dev/stdin" : path, "r");
	if (!f) {
		err = -errno;
		tool_err_code(path, err);
		return err;
	}
	err = stacktree_new(&t);
	if (!err) {
		err = stacktree_read_folded(t, NULL, f,
					    is_stdin ? "<stdin>" : path, msg,
					    sizeof(msg));
		if (err)
			tool_err("%s", msg);
	} else {
		tool_err_code(path, err);
	}
	fclose(f);
	if (!err) {
		err = add_tree(v, t, in);
		if (err)
			tool_err_code(path, err);
	}
	stacktree_free(t);
	return err;
}

/* ---- telling formats apart ---- */

/* Read from @fd until @cap bytes or the end: the bytes read, or -errno. */
static ssize_t read_some(int fd, void *buf, size_t cap)
{
	size_t len = 0;
	ssize_t r;

	while (len < cap) {
		r = read(fd, (char *)buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		len += (size_t)r;
	}
	return (ssize_t)len;
}

/* Keep stdin in memory (once) unless it is a regular file. */
static int keep_stdin(void)
{
	static bool kept;
	char *buf = NULL;
	struct stat st;
	size_t total = 0;
	ssize_t r;
	int fd = -1, err = 0;

	if (kept)
		return 0;
	kept = true;
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	buf = malloc(1 << 16);
	fd = memfd_create("sym-stdin", MFD_CLOEXEC);
	if (!buf || fd < 0) {
		err = buf ? -errno : -ENOMEM;
		goto out;
	}
	for (;;) {
		r = read_some(STDIN_FILENO, buf, 1 << 16);
		if (r < 0) {
			err = (int)r;
			goto out;
		}
		if (r == 0)
			break;
		total += (size_t)r;
		if (total > STDIN_MAX) {
			err = -E2BIG;
			goto out;
		}
		for (ssize_t w, done = 0; done < r; done += w) {
			w = write(fd, buf + done, (size_t)(r - done));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0) {
				err = -errno;
				goto out;
			}
		}
	}
	if (dup2(fd, STDIN_FILENO) < 0)
		err = -errno;
out:
	if (err == -E2BIG)
		tool_err("'-': stdin is over 1 GiB: give the profile as a file");
	else if (err)
		tool_err_code("-", err);
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

/* Is @b (@len bytes) binary: a byte no text holds? */
static bool binary(const unsigned char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((b[i] < 0x20 && b[i] != '\t' && b[i] != '\n' &&
		     b[i] != '\r') || b[i] == 0x7f)
			return true;
	return false;
}

/* Does text @b look like `perf script` output: a frame line, a tab,
 * blanks, a hex address and a blank? */
static bool perf_script_like(const unsigned char *b, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		size_t j = i + 1, hex = 0;

		if (b[i] != '\n' || b[j] != '\t')
			continue;
		for (j++; j < len && b[j] == ' '; j++)
			;
		for (; j < len && strchr("0123456789abcdef", b[j]) && b[j];
		     j++)
			hex++;
		if (hex && j < len && b[j] == ' ')
			return true;
	}
	return false;
}

/*
 * Tell the format of an input from its first @len bytes: gzip or
 * "sym-raw " is a profile; so is binary data (pprof's protobuf) unless its
 * first line that is not blank is a folded line (folded names may hold
 * any byte but ';' and line ends); other text is folded stacks, and the
 * folded reader then says what is wrong with it, line by line.
 */
static uint32_t classify(const unsigned char *b, size_t len)
{
	const char *line = (const char *)b, *end = line + len, *nl;
	struct stacktree_folded fl;
	const char *why;

	if ((len >= 2 && b[0] == 0x1f && b[1] == 0x8b) ||
	    (len >= 8 && memcmp(b, "sym-raw ", 8) == 0))
		return VIEWS_FROM_PROFILE;
	for (; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;
		if (stacktree_parse_folded(line, (size_t)(nl - line), 1, &fl,
					   &why) != 0)
			break;
		if (fl.stack_len)
			return VIEWS_FROM_FOLDED;
	}
	return binary(b, len) ? VIEWS_FROM_PROFILE : VIEWS_FROM_FOLDED;
}

/* views_sniff(), and whether folded text looks like perf script. */
static int sniff(const char *path, uint32_t *fmt, bool *perf_like)
{
	bool is_stdin = strcmp(path, "-") == 0;
	unsigned char *b = NULL;
	size_t len = 0;
	ssize_t r;
	int fd = -1, err = 0;

	if (is_stdin) {
		err = keep_stdin();
		if (err)
			return err;
	}
	fd = open(is_stdin ? "/dev/stdin" : path, O_RDONLY | O_CLOEXEC);
	b = malloc(SNIFF_BYTES);
	if (fd < 0 || !b) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	r = read_some(fd, b, SNIFF_BYTES);
	if (r < 0) {
		err = (int)r;
		goto out;
	}
	len = (size_t)r;
	*fmt = classify(b, len);
	*perf_like = *fmt == VIEWS_FROM_FOLDED && perf_script_like(b, len);
out:
	if (err)
		tool_err_code(path, err);
	if (fd >= 0)
		close(fd);
	free(b);
	return err;
}

int views_sniff(const char *path, uint32_t *fmt)
{
	bool perf_like;

	return sniff(path, fmt, &perf_like);
}

int views_load(struct views *v, const char *path, const struct views_opts *o)
{
	size_t nstacks = v->nstacks, nids = v->nids;
	uint64_t total = v->total;
	struct views_input in = { .path = path };
	struct sym_prof *p = NULL;
	uint32_t fmt = o->from;
	bool perf_like = false;
	int err;

	if (fmt == VIEWS_FROM_AUTO) {
		err = sniff(path, &fmt, &perf_like);
		if (err)
			return err;
	}
	in.format = fmt;
	if (fmt == VIEWS_FROM_FOLDED && o->value_type) {
		tool_err("'%s': folded stacks have no value types (--value "
			 "%s)", path, o->value_type);
		return -EINVAL;
	}
	if (fmt == VIEWS_FROM_FOLDED && o->no_folded) {
		tool_err("'%s': folded stacks are not read here: their counts "
			 "may be periods rather than samples; give the raw or "
			 "pprof profile", path);
		return -EINVAL;
	}
	err = tool_grow(&v->inputs, &v->inputs_cap, v->ninputs + 1,
			sizeof(*v->inputs), 16);
	if (err) {
		tool_err_code(path, err);
		return err;
	}
	if (fmt == VIEWS_FROM_FOLDED) {
		err = load_folded(v, path, &in);
		if (err == -EINVAL && perf_like)
			tool_err("'%s' looks like perf script text: `sym fold "
				 "--from perf-script` reads it", path);
	} else {
		err = tool_prof_load(path, &o->sym, &p);
		if (!err) {
			err = add_profile(v, p, &in, o->value_type);
			if (err == -ERANGE)
				tool_err("'%s': the sum of the values passes "
					 "2^64 - 1", path);
			else if (err == -SYM_E_BADPROFILE)
				err = -EINVAL;	/* printed */
			else if (err)
				tool_err_code(path, err);
		}
		sym_prof_free(p);
	}
	if (!err && (v->flags & VIEWS_WEIGHT) && !o->value_type &&
	    in.weight_unit) {
		for (size_t i = 0; i < v->ninputs; i++) {
			const char *u = v->inputs[i].weight_unit;

			if (u && strcmp(u, in.weight_unit) != 0) {
				tool_err("'%s': weights in '%s', those of "
					 "'%s' in '%s': they do not add up "
					 "(use --value samples)", path,
					 in.weight_unit, v->inputs[i].path, u);
				err = -EINVAL;
				break;
			}
		}
	}
	if (err) {
		input_release(&in);
		v->nstacks = nstacks;
		v->nids = nids;
		v->total = total;
		return err;
	}
	v->inputs[v->ninputs++] = in;
	/* ids may have moved: point every stack at its frames again. */
	for (size_t i = 0; i < v->nstacks; i++)
		v->stacks[i].pub.frames = v->ids + v->stacks[i].off;
	return 0;
}

size_t views_warn_broken(const struct views *v)
{
	bool marked = !(v->flags & VIEWS_BROKEN_PLAIN);
	size_t n = 0;

	for (size_t i = 0; i < v->ninputs; i++)
		if (broken_warn(stderr, &v->inputs[i].broken,
				v->inputs[i].path, marked ?
				"they are under " BROKEN_FRAME : NULL))
			n++;
	return n;
}

void views_broken(const struct views *v, struct broken_tally *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < v->ninputs; i++)
		broken_add(out, &v->inputs[i].broken);
}

int views_tree(const struct views *v, bool inverted, struct stacktree *t)
{
	for (size_t i = 0; i < v->nstacks; i++) {
		const struct views_stack *s = &v->stacks[i].pub;
		uint32_t node = STACKTREE_ROOT;
		int err;

		for (uint32_t j = 0; j < s->nframes; j++) {
			uint32_t id = s->frames[inverted ? s->nframes - 1 - j
							 : j];
			size_t len;
			const char *name = views_name(v, id, &len);

			err = stacktree_child(t, node, name, len, &node);
			if (err)
				return err;
		}
		err = stacktree_count(t, node, s->value);
		if (err)
			return err;
	}
	return 0;
}

/* ---- options ---- */

/* The options that only set flags. */
static const struct {
	int opt;
	uint32_t flags;
} flag_opts[] = {
	{ VIEWS_OPT_COMM, VIEWS_COMM },
	{ VIEWS_OPT_PID, VIEWS_PID },
	{ VIEWS_OPT_TID, VIEWS_TID },
	{ VIEWS_OPT_KERNEL, VIEWS_KERNEL },
	{ VIEWS_OPT_JIT, VIEWS_JIT },
	{ VIEWS_OPT_ALL, VIEWS_KERNEL | VIEWS_JIT },
};

/* The options with two values, one setting a flag, the other clearing it. */
static const struct {
	int opt;
	const char *set, *clear;
	uint32_t flag;
} toggle_opts[] = {
	{ VIEWS_OPT_BROKEN, "plain", "mark", VIEWS_BROKEN_PLAIN },
};

/* A value type's name: 1 to 64 of [A-Za-z0-9_.-]. */
static bool value_type_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_.-") == n;
}

/* The message for a bad value @arg of option @opt. */
static int bad_value(int opt, const char *arg)
{
	tool_err("unknown value '%s' for --%s", arg,
		 opt == VIEWS_OPT_FROM ? "from (profile, folded)" :
		 opt == VIEWS_OPT_INLINE ? "inline (mark, plain, none)" :
		 opt == VIEWS_OPT_BROKEN ? "broken (mark, plain)" :
					   "value (samples, weight, or a value "
					   "type: 1 to 64 of [A-Za-z0-9_.-])");
	return -1;
}

/* A filter's expression @arg, tried now so that a bad one is a usage
 * error; views_set_filters() compiles it for good. */
static int check_re(const char *opt, const char *arg, const char **out)
{
	regex_t re;
	char msg[256];
	int rc = regcomp(&re, arg, REG_EXTENDED | REG_NOSUB);

	if (rc) {
		regerror(rc, &re, msg, sizeof(msg));
		tool_err("--%s: '%s': %s", opt, arg, msg);
		return -1;
	}
	regfree(&re);
	*out = arg;
	return 1;
}

/* --granularity=@arg into o->flags. */
static int granularity(const char *arg, struct views_opts *o)
{
	static const struct {
		const char *name;
		uint32_t flag;
	} grans[] = {
		{ "functions", 0 },
		{ "addresses", VIEWS_GRAN_ADDRESSES },
		{ "lines", VIEWS_GRAN_LINES },
		{ "files", VIEWS_GRAN_FILES },
		{ "modules", VIEWS_GRAN_MODULES },
	};

	for (size_t i = 0; i < sizeof(grans) / sizeof(grans[0]); i++) {
		if (strcmp(arg, grans[i].name) == 0) {
			o->flags = (o->flags & ~(uint32_t)VIEWS_GRAN_MASK) |
				   grans[i].flag;
			return 1;
		}
	}
	tool_err("unknown value '%s' for --granularity (functions, "
		 "addresses, lines, files, modules)", arg);
	return -1;
}

int views_getopt(int opt, const char *arg, struct views_opts *o)
{
	for (size_t i = 0; i < sizeof(flag_opts) / sizeof(flag_opts[0]); i++) {
		if (flag_opts[i].opt == opt) {
			o->flags |= flag_opts[i].flags;
			return 1;
		}
	}
	for (size_t i = 0; i < sizeof(toggle_opts) / sizeof(toggle_opts[0]);
	     i++) {
		if (toggle_opts[i].opt != opt)
			continue;
		if (strcmp(arg, toggle_opts[i].set) == 0)
			o->flags |= toggle_opts[i].flag;
		else if (strcmp(arg, toggle_opts[i].clear) == 0)
			o->flags &= ~toggle_opts[i].flag;
		else
			return bad_value(opt, arg);
		return 1;
	}
	switch (opt) {
	case VIEWS_OPT_VALUE:
		/* samples, weight, or a value type (weighted like weight),
		 * which views_load() looks up in each input. */
		o->value_type = NULL;
		o->flags &= ~(uint32_t)VIEWS_WEIGHT;
		if (strcmp(arg, "samples") == 0)
			return 1;
		o->flags |= VIEWS_WEIGHT;
		if (strcmp(arg, "weight") == 0)
			return 1;
		if (!value_type_ok(arg))
			break;
		o->value_type = arg;
		return 1;
	case VIEWS_OPT_FROM:
		/* A view that reads profiles only has nothing to choose:
		 * its help does not list --from, and it takes none. */
		if (o->no_folded) {
			tool_err("unrecognized option '--from': this command "
				 "reads profiles only");
			return 0;
		}
		if (strcmp(arg, "auto") == 0)
			o->from = VIEWS_FROM_AUTO;
		else if (strcmp(arg, "profile") == 0 ||
			 strcmp(arg, "raw") == 0 || strcmp(arg, "pprof") == 0)
			o->from = VIEWS_FROM_PROFILE;
		else if (strcmp(arg, "folded") == 0)
			o->from = VIEWS_FROM_FOLDED;
		else
			break;
		return 1;
	case VIEWS_OPT_INLINE:
		o->flags &= ~(uint32_t)(VIEWS_INLINE_PLAIN | VIEWS_INLINE_NONE);
		if (strcmp(arg, "plain") == 0)
			o->flags |= VIEWS_INLINE_PLAIN;
		else if (strcmp(arg, "none") == 0)
			o->flags |= VIEWS_INLINE_NONE;
		else if (strcmp(arg, "mark") != 0)
			break;
		return 1;
	case VIEWS_OPT_QUIET:
	case 'q':
		o->sym.quiet = true;
		return 1;
	case VIEWS_OPT_VERBOSE:
	case 'v':
		o->sym.verbose = true;
		return 1;
	case VIEWS_OPT_FOCUS:
		return check_re("focus", arg, &o->focus);
	case VIEWS_OPT_IGNORE:
		return check_re("ignore", arg, &o->ignore);
	case VIEWS_OPT_HIDE:
		return check_re("hide", arg, &o->hide);
	case VIEWS_OPT_GRANULARITY:
		return granularity(arg, o);
	default:
		return tool_symbolize_getopt(opt, arg, &o->sym);
	}
	return bad_value(opt, arg);
}

int views_option(int opt, const char *arg, struct views_opts *o,
		 const char **output, views_usage_fn usage)
{
	int taken;

	switch (opt) {
	case 'o':
		*output = arg;
		return -1;
	case 'h':
		usage(stdout);
		return TOOL_EXIT_OK;
	default:
		taken = views_getopt(opt, arg, o);
		if (taken > 0)
			return -1;
		if (taken == 0)
			usage(stderr);
		return TOOL_EXIT_USAGE;
	}
}

int views_read(char *const *paths, size_t n, const struct views_opts *o,
	       struct views **out)
{
	static char *const stdin_only[] = { (char *)"-" };
	int err;

	if (n == 0) {
		paths = stdin_only;
		n = 1;
	}
	err = views_new(o->flags, out);
	if (err)
		tool_err("out of memory");
	else
		err = views_set_filters(*out, o);
	for (size_t i = 0; !err && i < n; i++)
		err = views_load(*out, paths[i], o);
	if (!err && o->need_samples && views_total(*out) == 0) {
		tool_err("no samples in the input");
		err = -ENODATA;
	}
	if (!err)
		views_warn_broken(*out);
	if (err) {
		views_free(*out);
		*out = NULL;
	}
	return err;
}

int views_parse_number(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= lo && v <= hi))
		return -EINVAL;
	*out = v;
	return 0;
}

/* ---- output ---- */

int views_out_open(struct views_out *o, const char *path)
{
	struct stat sb;
	mode_t mask;
	int fd, err;

	o->f = stdout;
	o->path = NULL;
	o->tmp[0] = '\0';
	if (!path || strcmp(path, "-") == 0)
		return 0;
	o->path = path;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		o->f = fopen(path, "w");
		err = o->f ? 0 : -errno;
		goto out;
	}
	if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%s.XXXXXX", path) >=
	    sizeof(o->tmp)) {
		o->tmp[0] = '\0';
		o->f = NULL;
		err = -ENAMETOOLONG;
		goto out;
	}
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		o->tmp[0] = '\0';
		o->f = NULL;
		goto out;
	}
	/* mkostemp() makes it 0600; give it what open(O_CREAT) would.
	 * Should this fail, the file is merely private. */
	mask = umask(0);
	umask(mask);
	(void)fchmod(fd, 0666 & ~mask);
	o->f = fdopen(fd, "w");
	err = o->f ? 0 : -errno;
	if (!o->f) {
		close(fd);
		unlink(o->tmp);
		o->tmp[0] = '\0';
	}
out:
	if (err)
		tool_err_code(path, err);
	return err;
}

int views_out_close(struct views_out *o, bool ok)
{
	const char *name = o->path ? o->path : "<stdout>";
	int err = 0;

	if (!o->f)
		return 0;
	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f))
		err = -(errno ? errno : EIO);
	if (o->f != stdout && fclose(o->f) != 0 && !err)
		err = -(errno ? errno : EIO);
	o->f = NULL;
	if (ok && !err && o->tmp[0] && rename(o->tmp, o->path) != 0)
		err = -errno;
	if (o->tmp[0] && (!ok || err))
		unlink(o->tmp);
	o->tmp[0] = '\0';
	if (ok && err)
		tool_err_code(name, err);
	return ok ? err : 0;
}
