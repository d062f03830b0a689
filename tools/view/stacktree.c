/*
 * stacktree.c - the trie of call stacks (stacktree.h) and the folded-stack
 * reader.
 *
 * Storage: one array of nodes, one pool of NUL-terminated names (each
 * distinct name once), and two open-addressing hash tables: names by their
 * bytes, and nodes by (parent id, name id), which is how a child is found.
 * Both tables stay at most half full and hold ids (STACKTREE_NONE marks an
 * empty slot), so a lookup hashes once and probes a few slots.
 *
 * Invariants: node 0 is the root, named by name 0 (""); a node's parent
 * has a smaller id; total = self + the sum of the children's totals; the
 * root's total is the largest, so checking it alone for overflow covers
 * every node on the way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "stacktree.h"
#include "banned.h"

struct node {
	uint64_t self, total;
	uint32_t parent;	/* STACKTREE_NONE for the root */
	uint32_t name;		/* index into names */
	uint32_t first, last;	/* children, in insertion order */
	uint32_t next;		/* next sibling */
};

struct name {
	size_t off;		/* into pool */
	size_t len;
};

/* A child in child_ht, with its key, so that probing never touches the
 * (big, randomly accessed) node array. */
struct slot {
	uint32_t parent, name;
	uint32_t id;		/* STACKTREE_NONE: empty */
};

struct stacktree {
	struct node *nodes;
	size_t nnodes, nodes_cap;
	struct name *names;
	size_t nnames, names_cap;
	char *pool;
	size_t pool_len, pool_cap;
	uint32_t *name_ht;	/* name ids; size name_ht_cap, a power of 2 */
	size_t name_ht_cap;
	struct slot *child_ht;	/* size child_ht_cap, a power of 2 */
	size_t child_ht_cap;
};

/* FNV-1a, then a final mix so that the low bits depend on every byte. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

/* splitmix64's finalizer: every input bit reaches every output bit. */
static uint64_t hash_child(uint32_t parent, uint32_t name)
{
	uint64_t h = (uint64_t)parent << 32 | name;

	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static uint32_t *table_new(size_t cap)
{
	uint32_t *t = malloc(cap * sizeof(*t));

	if (t)
		memset(t, 0xff, cap * sizeof(*t));	/* STACKTREE_NONE */
	return t;
}

static const char *name_str(const struct stacktree *t, uint32_t id)
{
	return t->pool + t->names[id].off;
}

static int names_rehash(struct stacktree *t)
{
	size_t cap = t->name_ht_cap ? t->name_ht_cap * 2 : 64;
	uint32_t *ht = table_new(cap);
	size_t i, j;

	if (!ht)
		return -ENOMEM;
	for (i = 0; i < t->nnames; i++) {
		const struct name *nm = &t->names[i];

		j = hash_bytes(t->pool + nm->off, nm->len) & (cap - 1);
		while (ht[j] != STACKTREE_NONE)
			j = (j + 1) & (cap - 1);
		ht[j] = (uint32_t)i;
	}
	free(t->name_ht);
	t->name_ht = ht;
	t->name_ht_cap = cap;
	return 0;
}

/* The slot of the name @s in name_ht: holding it, or empty. */
static size_t name_slot(const struct stacktree *t, const char *s, size_t len)
{
	size_t mask = t->name_ht_cap - 1;
	size_t j = hash_bytes(s, len) & mask;
	uint32_t id;

	while ((id = t->name_ht[j]) != STACKTREE_NONE) {
		if (t->names[id].len == len &&
		    memcmp(name_str(t, id), s, len) == 0)
			break;
		j = (j + 1) & mask;
	}
	return j;
}

/* The id of the name @s, interned if new. */
static int name_intern(struct stacktree *t, const char *s, size_t len,
		       uint32_t *out)
{
	size_t j;
	int err;

	j = name_slot(t, s, len);
	if (t->name_ht[j] != STACKTREE_NONE) {
		*out = t->name_ht[j];
		return 0;
	}
	if (t->nnames >= STACKTREE_NODES_MAX)
		return -E2BIG;
	if (len > SIZE_MAX - 1 - t->pool_len)
		return -ENOMEM;
	err = tool_grow(&t->pool, &t->pool_cap, t->pool_len + len + 1, 1, 16);
	if (!err)
		err = tool_grow(&t->names, &t->names_cap, t->nnames + 1,
				sizeof(*t->names), 16);
	if (err)
		return err;
	memcpy(t->pool + t->pool_len, s, len);
	t->pool[t->pool_len + len] = '\0';
	t->names[t->nnames].off = t->pool_len;
	t->names[t->nnames].len = len;
	t->pool_len += len + 1;
	t->name_ht[j] = (uint32_t)t->nnames;
	*out = (uint32_t)t->nnames++;
	if (t->nnames * 2 > t->name_ht_cap)
		return names_rehash(t);
	return 0;
}

static struct slot *slots_new(size_t cap)
{
	struct slot *t = malloc(cap * sizeof(*t));
	size_t i;

	if (t)
		for (i = 0; i < cap; i++)
			t[i].id = STACKTREE_NONE;
	return t;
}

static int children_rehash(struct stacktree *t)
{
	size_t cap = t->child_ht_cap * 2, i, j;
	struct slot *ht = slots_new(cap);

	if (!ht)
		return -ENOMEM;
	for (i = 0; i < t->child_ht_cap; i++) {
		const struct slot *sl = &t->child_ht[i];

		if (sl->id == STACKTREE_NONE)
			continue;
		j = hash_child(sl->parent, sl->name) & (cap - 1);
		while (ht[j].id != STACKTREE_NONE)
			j = (j + 1) & (cap - 1);
		ht[j] = *sl;
	}
	free(t->child_ht);
	t->child_ht = ht;
	t->child_ht_cap = cap;
	return 0;
}

/* The slot of (parent, name) in child_ht: holding it, or empty. */
static size_t child_slot(const struct stacktree *t, uint32_t parent,
			 uint32_t name)
{
	size_t mask = t->child_ht_cap - 1;
	size_t j = hash_child(parent, name) & mask;
	const struct slot *sl;

	for (;;) {
		sl = &t->child_ht[j];
		if (sl->id == STACKTREE_NONE ||
		    (sl->parent == parent && sl->name == name))
			return j;
		j = (j + 1) & mask;
	}
}

int stacktree_new(struct stacktree **out)
{
	struct stacktree *t = calloc(1, sizeof(*t));
	uint32_t root_name;
	int err = -ENOMEM;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->name_ht = table_new(64);
	t->child_ht = slots_new(64);
	if (!t->name_ht || !t->child_ht)
		goto fail;
	t->name_ht_cap = t->child_ht_cap = 64;
	err = name_intern(t, "", 0, &root_name);
	if (!err)
		err = tool_grow(&t->nodes, &t->nodes_cap, 1, sizeof(*t->nodes),
				16);
	if (err)
		goto fail;
	t->nodes[0] = (struct node){
		.parent = STACKTREE_NONE, .name = root_name,
		.first = STACKTREE_NONE, .last = STACKTREE_NONE,
		.next = STACKTREE_NONE,
	};
	t->nnodes = 1;
	*out = t;
	return 0;
fail:
	stacktree_free(t);
	return err;
}

void stacktree_free(struct stacktree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->names);
	free(t->pool);
	free(t->name_ht);
	free(t->child_ht);
	free(t);
}

uint32_t stacktree_find(const struct stacktree *t, uint32_t parent,
			const char *name, size_t len)
{
	uint32_t id;
	size_t j;

	if (parent >= t->nnodes)
		return STACKTREE_NONE;
	id = t->name_ht[name_slot(t, name, len)];
	if (id == STACKTREE_NONE)
		return STACKTREE_NONE;
	j = child_slot(t, parent, id);
	return t->child_ht[j].id;
}

int stacktree_child(struct stacktree *t, uint32_t parent, const char *name,
		    size_t len, uint32_t *out)
{
	struct node *p;
	uint32_t nm, id;
	size_t j;
	int err;

	if (parent >= t->nnodes)
		return -EINVAL;
	err = name_intern(t, name, len, &nm);
	if (err)
		return err;
	j = child_slot(t, parent, nm);
	if (t->child_ht[j].id != STACKTREE_NONE) {
		*out = t->child_ht[j].id;
		return 0;
	}
	if (t->nnodes >= STACKTREE_NODES_MAX)
		return -E2BIG;
	err = tool_grow(&t->nodes, &t->nodes_cap, t->nnodes + 1,
			sizeof(*t->nodes), 16);
	if (err)
		return err;
	id = (uint32_t)t->nnodes++;
	t->nodes[id] = (struct node){
		.parent = parent, .name = nm, .first = STACKTREE_NONE,
		.last = STACKTREE_NONE, .next = STACKTREE_NONE,
	};
	p = &t->nodes[parent];
	if (p->last == STACKTREE_NONE)
		p->first = id;
	else
		t->nodes[p->last].next = id;
	p->last = id;
	t->child_ht[j] = (struct slot){ parent, nm, id };
	*out = id;
	if (t->nnodes * 2 > t->child_ht_cap)
		return children_rehash(t);
	return 0;
}

int stacktree_count(struct stacktree *t, uint32_t node, uint64_t count)
{
	uint32_t n;

	if (node >= t->nnodes)
		return -EINVAL;
	if (count > UINT64_MAX - t->nodes[0].total)
		return -ERANGE;
	t->nodes[node].self += count;
	for (n = node; n != STACKTREE_NONE; n = t->nodes[n].parent)
		t->nodes[n].total += count;
	return 0;
}

int stacktree_insert(struct stacktree *t, const struct stacktree_frame *frames,
		     size_t n, uint64_t count)
{
	uint32_t node = STACKTREE_ROOT;
	size_t i;
	int err;

	if (count > UINT64_MAX - t->nodes[0].total)
		return -ERANGE;
	for (i = 0; i < n; i++) {
		err = stacktree_child(t, node, frames[i].name, frames[i].len,
				      &node);
		if (err)
			return err;
	}
	return stacktree_count(t, node, count);
}

size_t stacktree_size(const struct stacktree *t)
{
	return t->nnodes;
}

const char *stacktree_name(const struct stacktree *t, uint32_t node,
			   size_t *len)
{
	uint32_t nm = t->nodes[node].name;

	if (len)
		*len = t->names[nm].len;
	return name_str(t, nm);
}

uint64_t stacktree_self(const struct stacktree *t, uint32_t node)
{
	return t->nodes[node].self;
}

uint64_t stacktree_total(const struct stacktree *t, uint32_t node)
{
	return t->nodes[node].total;
}

uint32_t stacktree_parent(const struct stacktree *t, uint32_t node)
{
	return t->nodes[node].parent;
}

uint32_t stacktree_first_child(const struct stacktree *t, uint32_t node)
{
	return t->nodes[node].first;
}

uint32_t stacktree_next_sibling(const struct stacktree *t, uint32_t node)
{
	return t->nodes[node].next;
}

/* ---- folded stacks ---- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char no_count[] = "no count at the end of the line";
static const char no_blank[] = "no blank between the stack and its count";

/* Parse the decimal whole number that ends at s[*end - 1], moving *end to
 * its first digit. */
static int parse_count_back(const char *s, size_t *end, uint64_t *out,
			    const char **why)
{
	size_t e = *end, b = e, i;
	uint64_t v = 0;

	while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9')
		b--;
	if (b == e) {
		/* Say why, for the forms FlameGraph takes and we do not. */
		if (e > 0 && (s[e - 1] == '.' ||
			      (e > 1 && s[e - 2] == '.' &&
			       s[e - 1] >= '0' && s[e - 1] <= '9')))
			*why = "the count is not a whole number";
		else
			*why = no_count;
		return -EINVAL;
	}
	if (b > 0 && (s[b - 1] == '.' || s[b - 1] == '-' || s[b - 1] == '+')) {
		*why = s[b - 1] == '.' ? "the count is not a whole number" :
					 "the count must be a plain number";
		return -EINVAL;
	}
	if (b == 0) {
		*why = "no stack before the count";
		return -EINVAL;
	}
	if (!is_blank(s[b - 1])) {
		*why = no_blank;
		return -EINVAL;
	}
	for (i = b; i < e; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10) {
			*why = "the count is too large";
			return -EINVAL;
		}
		v = v * 10 + d;
	}
	*out = v;
	*end = b;
	return 0;
}

int stacktree_parse_folded(const char *line, size_t len, int ncounts,
			   struct stacktree_folded *out, const char **why)
{
	size_t end = len, i, start;
	int k, err;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (len > STACKTREE_LINE_MAX) {
		*why = "line longer than 65536 bytes";
		return -EINVAL;
	}
	if (memchr(line, '\0', len)) {
		*why = "NUL byte in the line";
		return -EINVAL;
	}
	if (end > 0 && line[end - 1] == '\r')
		end--;
	while (end > 0 && is_blank(line[end - 1]))
		end--;
	if (end == 0)
		return 0;			/* blank line */
	for (k = ncounts - 1; k >= 0; k--) {
		err = parse_count_back(line, &end, &out->count[k], why);
		if (err && k < ncounts - 1 &&
		    (*why == no_count || *why == no_blank))
			*why = "two counts expected (before and after), "
			       "found one";
		if (err)
			return err;
		while (end > 0 && is_blank(line[end - 1]))
			end--;
	}
	/* Leading blanks are layout too (FlameGraph's regexes allow them
	 * before nothing else, but indented files exist). */
	for (start = 0; start < end && is_blank(line[start]); start++)
		;
	if (start == end) {
		*why = "no stack before the count";
		return -EINVAL;
	}
	out->stack = line + start;
	out->stack_len = end - start;
	/* Every frame must have a name: ";;", a leading or a trailing ';'
	 * would draw a nameless frame. */
	for (i = 0; i <= out->stack_len; i++) {
		bool sep_here = i == out->stack_len || out->stack[i] == ';';
		bool sep_before = i == 0 || out->stack[i - 1] == ';';

		if (sep_here && sep_before) {
			*why = "empty frame name in the stack";
			memset(out, 0, sizeof(*out));
			return -EINVAL;
		}
	}
	return 0;
}

int stacktree_add_folded(struct stacktree *t, struct stacktree *t2,
			 const struct stacktree_folded *f)
{
	uint32_t node = STACKTREE_ROOT, node2 = STACKTREE_ROOT;
	const char *s = f->stack, *semi;
	size_t left = f->stack_len;
	int err;

	if (f->stack_len == 0)
		return 0;
	if (f->count[0] > UINT64_MAX - stacktree_total(t, STACKTREE_ROOT) ||
	    (t2 && f->count[1] >
		   UINT64_MAX - stacktree_total(t2, STACKTREE_ROOT)))
		return -ERANGE;
	for (;;) {
		size_t n;

		semi = memchr(s, ';', left);
		n = semi ? (size_t)(semi - s) : left;
		err = stacktree_child(t, node, s, n, &node);
		if (!err && t2)
			err = stacktree_child(t2, node2, s, n, &node2);
		if (err)
			return err;
		if (!semi)
			break;
		left -= n + 1;
		s = semi + 1;
	}
	err = stacktree_count(t, node, f->count[0]);
	if (!err && t2)
		err = stacktree_count(t2, node2, f->count[1]);
	return err;
}

static void set_msg(char *msg, size_t msglen, const char *name,
		    unsigned long lineno, const char *what)
{
	if (!msg || !msglen)
		return;
	if (lineno)
		snprintf(msg, msglen, "'%s':%lu: %s", name, lineno, what);
	else
		snprintf(msg, msglen, "'%s': %s", name, what);
}

static const char *err_what(int err)
{
	switch (err) {
	case -ERANGE:
		return "the sum of the counts overflows 64 bits";
	case -E2BIG:
		return "too many distinct frames";
	case -ENOMEM:
		return "out of memory";
	default:
		return "cannot add the stack";
	}
}

int stacktree_read_folded(struct stacktree *t, struct stacktree *t2, FILE *f,
			  const char *name, char *msg, size_t msglen)
{
	/* One line at most, its newline and one byte to see it is too long. */
	size_t cap = STACKTREE_LINE_MAX + 2, len = 0, start = 0;
	char *buf = malloc(cap);
	unsigned long lineno = 0;
	struct stacktree_folded fl;
	const char *why;
	bool eof = false;
	int err = 0;

	if (msg && msglen)
		msg[0] = '\0';
	if (!buf) {
		set_msg(msg, msglen, name, 0, "out of memory");
		return -ENOMEM;
	}
	for (;;) {
		char *nl = memchr(buf + start, '\n', len - start);
		size_t n;

		if (!nl && !eof) {
			size_t got;

			/* Keep the partial line; read more after it. */
			memmove(buf, buf + start, len - start);
			len -= start;
			start = 0;
			if (len > STACKTREE_LINE_MAX) {
				err = -EINVAL;
				set_msg(msg, msglen, name, lineno + 1,
					"line longer than 65536 bytes");
				goto out;
			}
			got = fread(buf + len, 1, cap - len, f);
			len += got;
			if (got == 0) {
				if (ferror(f)) {
					err = -EIO;
					set_msg(msg, msglen, name, 0,
						"read error");
					goto out;
				}
				eof = true;
			}
			continue;
		}
		if (!nl && start == len)
			break;			/* EOF after a newline */
		n = nl ? (size_t)(nl - (buf + start)) : len - start;
		lineno++;
		err = stacktree_parse_folded(buf + start, n, t2 ? 2 : 1, &fl,
					     &why);
		if (err) {
			set_msg(msg, msglen, name, lineno, why);
			goto out;
		}
		err = stacktree_add_folded(t, t2, &fl);
		if (err) {
			set_msg(msg, msglen, name, lineno, err_what(err));
			goto out;
		}
		start += n + (nl ? 1 : 0);
		if (!nl)
			break;
	}
out:
	free(buf);
	return err;
}
