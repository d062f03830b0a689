/*
 * kallsyms.c - the kallsyms snapshot taken from the running kernel, and
 * read from a file (kallsyms.h; the reader is libsym's, ksnap.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym.h"
#include "grow.h"
#include "kallsyms.h"
#include "tools.h"
#include "base.h"

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

/* @root's @rel ("/proc/kallsyms") into @buf; false when too long. */
static bool at_root(char *buf, size_t len, const char *root, const char *rel)
{
	if (!root || !strcmp(root, "/"))
		root = "";
	return (size_t)snprintf(buf, len, "%s%s", root, rel) < len;
}

/* Module @name's file @what under /sys/module, into @buf; the byte count,
 * -errno. */
static ssize_t module_file(const char *root, const char *name,
			   const char *what, void *buf, size_t cap)
{
	char rel[512], path[4096];

	snprintf(rel, sizeof(rel), "/sys/module/%s/%s", name, what);
	if (!at_root(path, sizeof(path), root, rel))
		return -ENAMETOOLONG;
	return read_small(path, buf, cap);
}

static void module_build_id(const char *root, struct ksnap_kmod *m)
{
	unsigned char notes[1024];
	ssize_t n = module_file(root, m->name, "notes/.note.gnu.build-id",
				notes, sizeof(notes));

	if (n <= 0 || sym_notes_build_id(notes, (size_t)n, 4, m->build_id,
					 sizeof(m->build_id)))
		m->build_id[0] = '\0';
}

static int cmp_kmod(const void *a, const void *b)
{
	const struct ksnap_kmod *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

bool ksnap_kmod_text(const char *buf, size_t len, uint64_t *text)
{
	char s[24];
	size_t n = 0;

	*text = 0;
	while (n < len && buf[n] != '\n' && n < sizeof(s) - 1) {
		s[n] = buf[n];
		n++;
	}
	s[n] = '\0';
	if ((n < len && buf[n] != '\n') || strncmp(s, "0x", 2) ||
	    !ksnap_hex64(s + 2, text)) {
		*text = 0;
		return false;
	}
	return true;
}

/* The .text load address of module @m, 0 when unknown. */
static void module_text(const char *root, struct ksnap_kmod *m)
{
	char buf[64];
	ssize_t n = module_file(root, m->name, "sections/.text", buf,
				sizeof(buf));

	ksnap_kmod_text(buf, n > 0 ? (size_t)n : 0, &m->text);
}

int ksnap_kmod_line(const char *line, struct ksnap_kmod *m)
{
	unsigned long long size, addr;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%55s %llu %*s %*s %*s %llx", m->name, &size,
		   &addr) != 3 || !addr || addr + size < addr ||
	    strchr(m->name, '/') || !strcmp(m->name, ".") ||
	    !strcmp(m->name, "..")) {
		memset(m, 0, sizeof(*m));
		return -EINVAL;
	}
	m->start = addr;
	m->size = size;
	return 0;
}

void ksnap_kmods_sort(struct ksnap_kmod *mods, size_t n)
{
	if (n > 1)
		qsort(mods, n, sizeof(*mods), cmp_kmod);
}

int ksnap_kmods_take(const char *root, struct ksnap_kmod **out, size_t *n)
{
	char line[4096], path[4096];
	struct ksnap_kmod m, *v = NULL;
	size_t cap = 0;
	FILE *f;

	*out = NULL;
	*n = 0;
	if (!at_root(path, sizeof(path), root, "/proc/modules"))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (*n < SYMI_KSNAP_MAX_MODULES && fgets(line, sizeof(line), f)) {
		if (ksnap_kmod_line(line, &m))
			continue;
		module_build_id(root, &m);
		module_text(root, &m);
		if (tool_grow(&v, &cap, *n + 1, sizeof(*v), 64)) {
			fclose(f);
			free(v);
			*n = 0;
			return -ENOMEM;
		}
		v[(*n)++] = m;
	}
	fclose(f);
	ksnap_kmods_sort(v, *n);
	*out = v;
	return 0;
}

const struct ksnap_kmod *ksnap_kmod_find(const struct ksnap_kmod *mods,
					 size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	/* The last module starting at or below @addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mods[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - mods[lo - 1].start >= mods[lo - 1].size)
		return NULL;
	return &mods[lo - 1];
}

bool ksnap_kmod_map(const struct ksnap_kmod *m, struct sym_prof_map *pm,
		    char *path, size_t len)
{
	if (!m->build_id[0] || !m->text || m->text < m->start ||
	    m->text - m->start >= m->size)
		return false;
	memset(pm, 0, sizeof(*pm));
	pm->kind = SYM_PROF_MAP_KERNEL;
	pm->pid = -1;
	pm->start = m->start;
	pm->end = m->start + m->size;
	pm->vaddr = m->start;
	pm->pgoff = m->text;
	pm->build_id = m->build_id;
	snprintf(path, len, "[%s]", m->name);
	pm->path = path;
	return true;
}

/* The `module` lines, from /proc/modules; none when the kernel has no
 * modules. */
static int take_modules(FILE *out, const char *root)
{
	struct ksnap_kmod *mods;
	size_t n;
	int err = ksnap_kmods_take(root, &mods, &n);

	for (size_t i = 0; i < n; i++) {
		const struct ksnap_kmod *m = &mods[i];

		fprintf(out, "module %s %" PRIx64 " %" PRIx64 " %s ", m->name,
			m->start, m->size, m->build_id[0] ? m->build_id : "-");
		if (m->text)
			fprintf(out, "%" PRIx64 "\n", m->text);
		else
			fputs("-\n", out);
	}
	free(mods);
	return err;
}

/* /proc/kallsyms's text symbols; -EPERM when every address is 0. */
static int take_symbols(FILE *out, const char *root)
{
	char line[SYMI_KSNAP_MAX_LINE], path[4096];
	size_t n = 0, zero = 0;
	FILE *f;

	if (!at_root(path, sizeof(path), root, "/proc/kallsyms"))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char addr[17], type, name[SYMI_KSNAP_MAX_LINE], mod[256];
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

/* The kernel's release: ROOT/proc/sys/kernel/osrelease (uname -r's),
 * into @buf; "" when unknown or not one word. */
static void take_release(const char *root, char *buf, size_t len)
{
	char path[4096];
	ssize_t n = -1;

	if (at_root(path, sizeof(path), root, "/proc/sys/kernel/osrelease"))
		n = read_small(path, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (const char *p = buf; *p; p++)
		if (*p <= ' ' || *p > '~')
			buf[0] = '\0';
}

int ksnap_take(const char *root, char **out, size_t *len)
{
	char bid[2 * 64 + 1] = "", rel[256], path[4096];
	unsigned char notes[4096];
	char *buf = NULL;
	size_t blen = 0;
	ssize_t n = -1;
	FILE *f;
	int err, merr;

	*out = NULL;
	*len = 0;
	f = open_memstream(&buf, &blen);
	if (!f)
		return -ENOMEM;
	fputs("sym-kallsyms 2\n", f);
	if (at_root(path, sizeof(path), root, "/sys/kernel/notes"))
		n = read_small(path, notes, sizeof(notes));
	if (n > 0 && sym_notes_build_id(notes, (size_t)n, 4, bid,
					sizeof(bid)) == 0)
		fprintf(f, "kernel %s\n", bid);
	take_release(root, rel, sizeof(rel));
	if (rel[0])
		fprintf(f, "release %s\n", rel);
	merr = take_modules(f, root);
	err = take_symbols(f, root);
	if (!err && merr == -ENOMEM)
		err = merr;
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

int ksnap_load(const char *path, struct symi_ksnap **out)
{
	char why[256] = "";
	int err = symi_ksnap_load(path, out, why, sizeof(why));

	if (why[0])
		tool_err("'%s': %s", path, why);
	else if (err)
		tool_err_code(path, err);
	return err;
}

int ksnap_text_here(uint64_t *text)
{
	char line[SYMI_KSNAP_MAX_LINE];
	FILE *f = fopen("/proc/kallsyms", "re");
	int err = -SYM_E_NOTFOUND;

	*text = 0;
	if (!f)
		return -errno;
	while (err == -SYM_E_NOTFOUND && fgets(line, sizeof(line), f)) {
		char addr[17], type, name[64];

		if (sscanf(line, "%16s %c %63s", addr, &type, name) == 3 &&
		    !strcmp(name, "_text") && strchr("tT", type) &&
		    ksnap_hex64(addr, text))
			err = *text ? 0 : -EPERM;
	}
	fclose(f);
	return err;
}

bool ksnap_hex64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s || strlen(s) > 16)
		return false;
	for (; *s; s++) {
		int d = symi_hexval(*s);

		if (d < 0)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return true;
}

int ksnap_write_part(FILE *f, const struct symi_ksnap *ks, uint32_t mod)
{
	const struct symi_ksnap_module *m = mod ? &ks->mods[mod - 1] : NULL;

	fprintf(f, "sym-kallsyms 2\n");
	if (ks->build_id[0])
		fprintf(f, "kernel %s\n", ks->build_id);
	if (ks->release[0])
		fprintf(f, "release %s\n", ks->release);
	if (m)
		fprintf(f, "module %s %" PRIx64 " %" PRIx64 " %s %" PRIx64 "\n",
			m->name, m->start, m->size,
			m->build_id[0] ? m->build_id : "-", m->text);
	for (size_t i = 0; i < ks->nsyms; i++) {
		const struct symi_ksnap_sym *s = &ks->syms[i];

		if (s->module != mod)
			continue;
		if (m)
			fprintf(f, "%016" PRIx64 " %c %s [%s]\n", s->addr,
				s->type, s->name, m->name);
		else
			fprintf(f, "%016" PRIx64 " %c %s\n", s->addr, s->type,
				s->name);
	}
	fprintf(f, "end\n");
	return fflush(f) || ferror(f) ? -EIO : 0;
}

/*
 * `sym kallsyms [--root DIR] [-o FILE]`: take a snapshot (ksnap_take())
 * and write it.
 */

static void kallsyms_usage(FILE *f)
{
	fprintf(f,
"usage: sym kallsyms [--root DIR] [-o FILE]\n\n"
"Write a kallsyms snapshot of the running kernel (docs/record.md, \"The\n"
"kallsyms snapshot\"): its build ID, release, loaded modules (address,\n"
"size, build ID, .text address) and text symbols, what `sym record`\n"
"writes beside a profile with kernel frames.  Needs root (the kernel\n"
"hides its addresses otherwise).\n\n"
"      --root DIR     read DIR/proc/kallsyms, DIR/proc/modules,\n"
"                     DIR/proc/sys/kernel/osrelease, DIR/sys/kernel/notes\n"
"                     and DIR/sys/module/NAME/{notes,sections} instead of\n"
"                     this host's (another machine's, copied; a host's\n"
"                     /proc and /sys mounted in a container)\n"
"  -o, --output FILE  write FILE atomically (default stdout)\n"
"  -h, --help         this text\n\n"
"Exit status 0, 1 when no snapshot can be taken, 2 for bad usage.\n");
}

/* @len bytes of @buf to @path atomically, or to stdout when NULL. */
static int kallsyms_write(const char *path, const char *buf, size_t len)
{
	char tmp[4096];
	FILE *f = stdout;
	int err = 0;

	if (path) {
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path,
				     (int)getpid()) >= sizeof(tmp))
			return -ENAMETOOLONG;
		f = fopen(tmp, "we");
		if (!f)
			return -errno;
	}
	if (fwrite(buf, 1, len, f) != len || fflush(f))
		err = -EIO;
	if (path) {
		if (!err && fsync(fileno(f)))
			err = -errno;
		if (fclose(f) && !err)
			err = -EIO;
		if (!err && rename(tmp, path))
			err = -errno;
		if (err)
			unlink(tmp);
	}
	return err;
}

int cmd_kallsyms(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *out = NULL;
	char *buf = NULL;
	size_t len;
	int c, err;

	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		if (c == 'r') {
			root = optarg;
		} else if (c == 'o') {
			out = optarg;
		} else if (c == 'h') {
			kallsyms_usage(stdout);
			return TOOL_EXIT_OK;
		} else {
			kallsyms_usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		tool_err("unexpected argument '%s'", argv[optind]);
		kallsyms_usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	err = ksnap_take(root, &buf, &len);
	if (err == -EPERM)
		tool_err("the kernel hides its addresses (not root, or "
			 "kernel.kptr_restrict): no snapshot");
	else if (err)
		tool_err_code(root ? root : "/proc/kallsyms", err);
	if (!err) {
		err = kallsyms_write(out, buf, len);
		if (err)
			tool_err_code(out ? out : "stdout", err);
	}
	free(buf);
	return err ? TOOL_EXIT_FAIL : TOOL_EXIT_OK;
}
