/*
 * ksnap.c - the kallsyms snapshot: parsed, looked up, and made into a
 * table of the kernel or of one of its modules (ksnap.h says the
 * format).  The snapshot is outside bytes (a recorder's, an upload):
 * every limit of ksnap.h is kept, and tests/fuzz/fuzz-kallsyms.c
 * fuzzes all of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "ksnap.h"
#include "base.h"

/*
 * Parsing.
 */

struct kparse {
	struct symi_ksnap *ks;
	size_t capsyms, capmods;
	unsigned line;
	char *why;
	size_t whylen;
	int version;		/* the first line's: 1 or 2 */
};

static int bad(struct kparse *k, const char *what)
{
	snprintf(k->why, k->whylen, "kallsyms snapshot: line %u: %s", k->line,
		 what);
	return -EINVAL;
}

/* Split @s (NUL-terminated) at single spaces into at most @max fields;
 * the count, or -1 for an empty field. */
static int split(char *s, char **f, int max)
{
	int n = 0;

	for (;;) {
		char *sp = strchr(s, ' ');

		if (n == max || !*s || *s == ' ')
			return -1;
		f[n++] = s;
		if (!sp)
			return n;
		*sp = '\0';
		s = sp + 1;
	}
}

static bool hex64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s || strlen(s) > 16)
		return false;
	for (; *s; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
			*s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;

		if (d < 0)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return true;
}

static bool build_id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 2 || n > 128 || n % 2)
		return false;
	return strspn(s, "0123456789abcdef") == n;
}

/* The module named @name, added (unbounded) when @add and unknown; 0
 * when absent, else index + 1. */
static int module_of(struct kparse *k, const char *name, bool add,
		     uint32_t *idx)
{
	struct symi_ksnap *ks = k->ks;

	for (size_t i = ks->nmods; i > 0; i--)
		if (!strcmp(ks->mods[i - 1].name, name)) {
			*idx = (uint32_t)i;
			return 0;
		}
	*idx = 0;
	if (!add)
		return 0;
	if (ks->nmods >= SYMI_KSNAP_MAX_MODULES)
		return bad(k, "too many modules");
	if (symi_grow((void **)&ks->mods, &k->capmods, ks->nmods + 1,
		      sizeof(*ks->mods)))
		return -ENOMEM;
	ks->mods[ks->nmods++] = (struct symi_ksnap_module){ .name = name,
						       .build_id = "" };
	*idx = (uint32_t)ks->nmods;
	return 0;
}

static int parse_module(struct kparse *k, char **f, int n)
{
	struct symi_ksnap_module m = { .name = f[1], .build_id = "" };
	uint32_t idx;
	int err;

	if (n != 4 + k->version || !hex64(f[2], &m.start) ||
	    !hex64(f[3], &m.size) || m.start + m.size < m.start ||
	    (strcmp(f[4], "-") && !build_id_ok(f[4])) ||
	    (n == 6 && strcmp(f[5], "-") && !hex64(f[5], &m.text)))
		return bad(k, "bad module line");
	if (strcmp(f[4], "-"))
		m.build_id = f[4];
	err = module_of(k, f[1], false, &idx);
	if (err)
		return err;
	if (idx)
		return bad(k, "module named twice");
	err = module_of(k, f[1], true, &idx);
	if (!err)
		k->ks->mods[idx - 1] = m;
	return err;
}

static int parse_sym(struct kparse *k, char **f, int n)
{
	struct symi_ksnap *ks = k->ks;
	struct symi_ksnap_sym s = { 0 };
	size_t tl;
	int err;

	if (n < 3 || n > 4 || !hex64(f[0], &s.addr) || strlen(f[1]) != 1 ||
	    !strchr("tTwW", f[1][0]))
		return bad(k, "not a text symbol line");
	s.type = f[1][0];
	s.name = f[2];
	if (n == 4) {
		tl = strlen(f[3]);
		if (tl < 3 || f[3][0] != '[' || f[3][tl - 1] != ']')
			return bad(k, "bad module tag");
		f[3][tl - 1] = '\0';
		err = module_of(k, f[3] + 1, true, &s.module);
		if (err)
			return err;
	}
	if (ks->nsyms >= SYMI_KSNAP_MAX_SYMS)
		return bad(k, "too many symbols");
	s.seq = (uint32_t)ks->nsyms;
	if (symi_grow((void **)&ks->syms, &k->capsyms, ks->nsyms + 1,
		      sizeof(*ks->syms)))
		return -ENOMEM;
	ks->syms[ks->nsyms++] = s;
	return 0;
}

/* One line, NUL-terminated, not the first. */
static int parse_line(struct kparse *k, char *l, bool *end)
{
	char *f[6];
	int n;

	for (const char *p = l; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			return bad(k, "a byte that is not printable ASCII");
	n = split(l, f, 6);
	if (n < 0)
		return bad(k, "an empty field or too many fields");
	if (!strcmp(f[0], "end") && n == 1) {
		*end = true;
		return 0;
	}
	if (!strcmp(f[0], "kernel")) {
		if (n != 2 || !build_id_ok(f[1]) || k->ks->build_id[0])
			return bad(k, "bad or second kernel line");
		snprintf(k->ks->build_id, sizeof(k->ks->build_id), "%s", f[1]);
		return 0;
	}
	if (!strcmp(f[0], "release")) {
		if (n != 2)
			return bad(k, "bad release line");
		k->ks->release = f[1];
		return 0;
	}
	if (!strcmp(f[0], "module"))
		return parse_module(k, f, n);
	return parse_sym(k, f, n);
}

/* By address, then in the snapshot's order (kallsyms's own). */
static int cmp_sym(const void *a, const void *b)
{
	const struct symi_ksnap_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "sym-kallsyms 1" or "sym-kallsyms 2" (module lines with TEXT). */
static int first_line(struct kparse *k, const char *l)
{
	if (!strcmp(l, "sym-kallsyms 1") || !strcmp(l, "sym-kallsyms 2")) {
		k->version = l[13] - '0';
		return 0;
	}
	return bad(k, "not a kallsyms snapshot (want 'sym-kallsyms 2' or "
		   "'sym-kallsyms 1')");
}

static int parse_all(struct kparse *k, char *t, size_t len)
{
	bool end = false;
	size_t pos = 0;
	int err = 0;

	while (pos < len && !err) {
		char *nl = memchr(t + pos, '\n', len - pos);
		char *l = t + pos;

		k->line++;
		if (!nl)
			return bad(k, "no newline at the end");
		if ((size_t)(nl - l) > SYMI_KSNAP_MAX_LINE)
			return bad(k, "line too long");
		*nl = '\0';
		pos = (size_t)(nl - t) + 1;
		if (end)
			return bad(k, "a line after end");
		if (k->line == 1)
			err = first_line(k, l);
		else if (*l != '#')
			err = parse_line(k, l, &end);
	}
	if (!err && !end)
		return bad(k, "cut short: no end line");
	return err;
}

/*
 * The index: at most 2 buckets a symbol, each holding the rank of the
 * first symbol at or past its start, so that a lookup searches one
 * bucket's few symbols (a binary search over all of them took 0.8 s for
 * 1,000,000 random addresses: a cache miss at each of its 17 steps).
 */
static int make_index(struct symi_ksnap *ks)
{
	uint64_t base, span;
	size_t i = 0;

	if (!ks->nsyms)
		return 0;
	base = ks->syms[0].addr;
	span = ks->syms[ks->nsyms - 1].addr - base;
	while (ks->shift < 63 && (span >> ks->shift) >= 2 * ks->nsyms)
		ks->shift++;
	ks->nbuckets = (size_t)(span >> ks->shift) + 1;
	ks->first = symi_malloc((ks->nbuckets + 1) * sizeof(*ks->first));
	if (!ks->first)
		return -ENOMEM;
	for (size_t b = 0; b <= ks->nbuckets; b++) {
		while (i < ks->nsyms &&
		       (ks->syms[i].addr - base) >> ks->shift < b)
			i++;
		ks->first[b] = (uint32_t)i;
	}
	return 0;
}

int symi_ksnap_parse(const char *buf, size_t len, struct symi_ksnap **out, char *why,
		size_t whylen)
{
	struct kparse k = { .why = why, .whylen = whylen };
	int err;

	*out = NULL;
	if (whylen)
		why[0] = '\0';
	if (len > SYMI_KSNAP_MAX_BYTES) {
		snprintf(why, whylen, "kallsyms snapshot: over %u bytes",
			 SYMI_KSNAP_MAX_BYTES);
		return -EINVAL;
	}
	k.ks = symi_calloc(1, sizeof(*k.ks));
	if (!k.ks)
		return -ENOMEM;
	k.ks->release = "";
	k.ks->text = symi_malloc(len + 1);
	if (!k.ks->text) {
		err = -ENOMEM;
		goto fail;
	}
	if (len)
		memcpy(k.ks->text, buf, len);
	k.ks->text[len] = '\0';
	err = parse_all(&k, k.ks->text, len);
	if (err)
		goto fail;
	/* kallsyms lists the kernel's symbols in order: sort only when
	 * needed (modules', or a snapshot from elsewhere). */
	for (size_t i = 1; i < k.ks->nsyms; i++)
		if (cmp_sym(&k.ks->syms[i - 1], &k.ks->syms[i]) > 0) {
			qsort(k.ks->syms, k.ks->nsyms, sizeof(*k.ks->syms),
			      cmp_sym);
			break;
		}
	err = make_index(k.ks);
	if (err)
		goto fail;
	*out = k.ks;
	return 0;
fail:
	if (err == -ENOMEM)
		snprintf(why, whylen, "kallsyms snapshot: out of memory");
	symi_ksnap_free(k.ks);
	return err;
}

void symi_ksnap_free(struct symi_ksnap *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->first);
	free(ks->mods);
	free(ks->text);
	free(ks);
}

bool symi_ksnap_lookup(const struct symi_ksnap *ks, uint64_t addr,
		  struct symi_ksnap_hit *hit)
{
	const struct symi_ksnap_sym *s;
	const struct symi_ksnap_module *m = NULL;
	size_t lo = 0, hi = 0, b;

	/* lo..hi: the symbols from the bucket's start to the next's; the
	 * answer is the last at or below @addr, in them or just before. */
	if (ks->nsyms && addr >= ks->syms[0].addr) {
		b = (size_t)((addr - ks->syms[0].addr) >> ks->shift);
		if (b >= ks->nbuckets)
			b = ks->nbuckets - 1;
		lo = ks->first[b];
		hi = ks->first[b + 1];
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	/* Of several at one address, the last: perf's choice, whose
	 * symbols__fixup_end() gives all the others a length of 0 and
	 * whose choose_best_symbol() then prefers the one with a length. */
	s = &ks->syms[lo - 1];
	if (s->module) {
		m = &ks->mods[s->module - 1];
		if (m->size && addr - m->start >= m->size)
			return false;
	}
	hit->name = s->name;
	hit->module = m ? m->name : NULL;
	hit->mod = m;
	hit->offset = addr - s->addr;
	return true;
}


/*
 * Tables.
 */

bool symi_ksnap_text(const struct symi_ksnap *ks, uint64_t *text)
{
	bool found = false;

	for (size_t i = 0; i < ks->nsyms; i++)
		if (!ks->syms[i].module && !strcmp(ks->syms[i].name, "_text")) {
			*text = ks->syms[i].addr;
			found = true;
		}
	return found;
}

/* The module of @build_id with a TEXT: its index + 1; 0 when none. */
static uint32_t module_by_id(const struct symi_ksnap *ks, const char *build_id)
{
	for (size_t i = 0; i < ks->nmods; i++)
		if (ks->mods[i].text && !strcmp(ks->mods[i].build_id, build_id))
			return (uint32_t)i + 1;
	return 0;
}

static uint32_t sym_flags(char type)
{
	return SYMI_SYM_FUNC | (type == 'T' ? SYMI_SYM_GLOBAL :
				type == 'w' || type == 'W' ? SYMI_SYM_WEAK : 0);
}

/* The symbols of module @mod (0: the kernel) into @b, at their address
 * minus @base, each up to the next, the last up to @end (0: unknown);
 * what they cover is the table's text (its window: a table's reaches
 * only the last symbol's start otherwise). */
static int add_syms(struct symi_builder *b, const struct symi_ksnap *ks,
		    uint32_t mod, uint64_t base, uint64_t end)
{
	const struct symi_ksnap_sym *prev = NULL;
	uint64_t lo = UINT64_MAX, hi = 0;
	int err;

	/* syms are by address, then in listed order: of several at one
	 * address the last listed is the one added. */
	for (size_t i = 0; i <= ks->nsyms; i++) {
		const struct symi_ksnap_sym *s = i < ks->nsyms ? &ks->syms[i] :
								 NULL;
		uint64_t size;

		if (s && (s->module != mod || s->addr < base))
			continue;
		if (prev && (!s || s->addr != prev->addr)) {
			size = s ? s->addr - prev->addr :
			       end > prev->addr ? end - prev->addr :
						  SYMI_KSNAP_LAST_SIZE;
			if (end && prev->addr + size > end)
				size = end > prev->addr ? end - prev->addr : 0;
			if (size) {
				err = symi_builder_add_symbol(
					b, prev->addr - base, size, prev->name,
					NULL, sym_flags(prev->type));
				if (err)
					return err;
				lo = lo < prev->addr - base ? lo :
							      prev->addr - base;
				hi = prev->addr - base + size;
			}
		}
		prev = s;
	}
	return hi ? symi_builder_add_text(b, lo, hi) : 0;
}

int symi_ksnap_table(const struct symi_ksnap *ks, const char *build_id,
		     void **buf, size_t *len)
{
	struct symi_builder *b = NULL;
	uint32_t mod = 0;
	uint64_t base = 0, end = 0;
	int err;

	*buf = NULL;
	*len = 0;
	if (ks->build_id[0] && !strcmp(ks->build_id, build_id)) {
		if (!symi_ksnap_text(ks, &base))
			return -SYM_E_NOTFOUND;
	} else {
		const struct symi_ksnap_module *m;

		mod = module_by_id(ks, build_id);
		if (!mod)
			return -SYM_E_NOTFOUND;
		m = &ks->mods[mod - 1];
		base = m->text;
		if (m->size && m->start + m->size > base)
			end = m->start + m->size;
	}
	err = symi_builder_new(&b);
	if (err)
		return err;
	symi_builder_set_kallsyms(b);
	err = add_syms(b, ks, mod, base, end);
	if (!err)
		err = symi_builder_finish(b, buf, len);
	symi_builder_free(b);
	return err;
}

int symi_ksnap_load(const char *path, struct symi_ksnap **out, char *why,
		    size_t whylen)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n = 0;
	int fd, err = 0;

	*out = NULL;
	if (whylen)
		why[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > SYMI_KSNAP_MAX_BYTES) {
		snprintf(why, whylen, "not a regular file of at most %u bytes",
			 SYMI_KSNAP_MAX_BYTES);
		err = -EINVAL;
		goto out;
	}
	buf = symi_malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size &&
	       (n = read(fd, buf + got, (size_t)st.st_size - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		got += (size_t)n;
	}
	err = symi_ksnap_parse(buf, got, out, why, whylen);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return err;
}

bool symi_ksnap_has_module(const struct symi_ksnap *ks, const char *build_id)
{
	return module_by_id(ks, build_id) != 0;
}

const struct symi_ksnap_module *symi_ksnap_module(const struct symi_ksnap *ks,
						  const char *build_id)
{
	uint32_t i = module_by_id(ks, build_id);

	return i ? &ks->mods[i - 1] : NULL;
}
