/*
 * kallsyms.c - the kallsyms snapshot: taken, parsed, looked up
 * (kallsyms.h says the format).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sym.h"
#include "grow.h"
#include "kallsyms.h"
#include "tools.h"
#include "base.h"

/*
 * Parsing.
 */

struct kparse {
	struct ksnap *ks;
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
	struct ksnap *ks = k->ks;

	for (size_t i = ks->nmods; i > 0; i--)
		if (!strcmp(ks->mods[i - 1].name, name)) {
			*idx = (uint32_t)i;
			return 0;
		}
	*idx = 0;
	if (!add)
		return 0;
	if (ks->nmods >= KSNAP_MAX_MODULES)
		return bad(k, "too many modules");
	if (tool_grow(&ks->mods, &k->capmods, ks->nmods + 1,
		      sizeof(*ks->mods), 64))
		return -ENOMEM;
	ks->mods[ks->nmods++] = (struct ksnap_module){ .name = name,
						       .build_id = "" };
	*idx = (uint32_t)ks->nmods;
	return 0;
}

static int parse_module(struct kparse *k, char **f, int n)
{
	struct ksnap_module m = { .name = f[1], .build_id = "" };
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
	struct ksnap *ks = k->ks;
	struct ksnap_sym s = { 0 };
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
	if (ks->nsyms >= KSNAP_MAX_SYMS)
		return bad(k, "too many symbols");
	s.seq = (uint32_t)ks->nsyms;
	if (tool_grow(&ks->syms, &k->capsyms, ks->nsyms + 1, sizeof(*ks->syms),
		      4096))
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
	const struct ksnap_sym *x = a, *y = b;

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
		if ((size_t)(nl - l) > KSNAP_MAX_LINE)
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
static int make_index(struct ksnap *ks)
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
	ks->first = malloc((ks->nbuckets + 1) * sizeof(*ks->first));
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

int ksnap_parse(const char *buf, size_t len, struct ksnap **out, char *why,
		size_t whylen)
{
	struct kparse k = { .why = why, .whylen = whylen };
	int err;

	*out = NULL;
	if (whylen)
		why[0] = '\0';
	if (len > KSNAP_MAX_BYTES) {
		snprintf(why, whylen, "kallsyms snapshot: over %u bytes",
			 KSNAP_MAX_BYTES);
		return -EINVAL;
	}
	k.ks = calloc(1, sizeof(*k.ks));
	if (!k.ks)
		return -ENOMEM;
	k.ks->release = "";
	k.ks->text = malloc(len + 1);
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
	ksnap_free(k.ks);
	return err;
}

void ksnap_free(struct ksnap *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->first);
	free(ks->mods);
	free(ks->text);
	free(ks);
}

bool ksnap_lookup(const struct ksnap *ks, uint64_t addr,
		  struct ksnap_hit *hit)
{
	const struct ksnap_sym *s;
	const struct ksnap_module *m = NULL;
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
 * Taking one.
 */

/* Up to @cap bytes of a small file; -errno. */
static ssize_t read_small(const char *path, void *buf, size_t cap)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

static void module_build_id(const char *name, char *hex, size_t len)
{
	unsigned char notes[1024];
	char path[512];
	ssize_t n;

	hex[0] = '\0';
	snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id",
		 name);
	n = read_small(path, notes, sizeof(notes));
	if (n <= 0 || sym_notes_build_id(notes, (size_t)n, 4, hex, len))
		hex[0] = '\0';
}

/* The .text load address of module @name, "-" when unknown. */
static void module_text(const char *name, char *out, size_t len)
{
	char path[512], buf[64];
	uint64_t v;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/module/%s/sections/.text", name);
	n = read_small(path, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (n > 0 && !strncmp(buf, "0x", 2) && hex64(buf + 2, &v) && v)
		snprintf(out, len, "%" PRIx64, v);
	else
		snprintf(out, len, "-");
}

/* The `module` lines, from /proc/modules ("NAME SIZE REFS DEPS STATE
 * ADDR"); none when the kernel has no modules. */
static void take_modules(FILE *out)
{
	char line[4096], name[256], hex[2 * 64 + 1], text[24];
	unsigned long long size, addr;
	FILE *f = fopen("/proc/modules", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %llu %*s %*s %*s %llx", name, &size,
			   &addr) != 3 || !addr)
			continue;
		module_build_id(name, hex, sizeof(hex));
		module_text(name, text, sizeof(text));
		fprintf(out, "module %s %llx %llx %s %s\n", name, addr, size,
			hex[0] ? hex : "-", text);
	}
	fclose(f);
}

/* /proc/kallsyms's text symbols; -EPERM when every address is 0. */
static int take_symbols(FILE *out)
{
	char line[KSNAP_MAX_LINE];
	size_t n = 0, zero = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char addr[17], type, name[KSNAP_MAX_LINE], mod[256];
		int k = sscanf(line, "%16s %c %4095s [%255[^]]]", addr, &type,
			       name, mod);

		/* (a line the parser would refuse: none in practice, names
		 * are at most KSYM_NAME_LEN, 512) */
		if (k < 3 || !strchr("tTwW", type) ||
		    strlen(name) + (k == 4 ? strlen(mod) : 0) > 2048)
			continue;
		if (strspn(addr, "0") == strlen(addr)) {
			zero++;
			continue;
		}
		n++;
		if (k == 4)
			fprintf(out, "%s %c %s [%s]\n", addr, type, name, mod);
		else
			fprintf(out, "%s %c %s\n", addr, type, name);
	}
	fclose(f);
	return !n && zero ? -EPERM : 0;
}

int ksnap_take(char **out, size_t *len)
{
	char bid[2 * 64 + 1] = "";
	unsigned char notes[4096];
	struct utsname u;
	char *buf = NULL;
	size_t blen = 0;
	ssize_t n;
	FILE *f;
	int err;

	*out = NULL;
	*len = 0;
	f = open_memstream(&buf, &blen);
	if (!f)
		return -ENOMEM;
	fputs("sym-kallsyms 2\n", f);
	n = read_small("/sys/kernel/notes", notes, sizeof(notes));
	if (n > 0 && sym_notes_build_id(notes, (size_t)n, 4, bid,
					sizeof(bid)) == 0)
		fprintf(f, "kernel %s\n", bid);
	if (uname(&u) == 0 && u.release[0] && !strchr(u.release, ' '))
		fprintf(f, "release %s\n", u.release);
	take_modules(f);
	err = take_symbols(f);
	fputs("end\n", f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = blen;
	return 0;
}

int ksnap_load(const char *path, struct ksnap **out)
{
	char why[256] = "";
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n = 0;
	int fd, err = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > KSNAP_MAX_BYTES) {
		err = -EINVAL;
		snprintf(why, sizeof(why), "not a regular file of at most "
			 "%u bytes", KSNAP_MAX_BYTES);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size &&
	       (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	if (n < 0) {
		err = -errno;
		goto out;
	}
	err = ksnap_parse(buf, got, out, why, sizeof(why));
out:
	if (why[0])
		tool_err("'%s': %s", path, why);
	else if (err)
		tool_err_code(path, err);
	free(buf);
	if (fd >= 0)
		close(fd);
	return err;
}
