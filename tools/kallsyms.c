/*
 * kallsyms.c - the kallsyms snapshot taken from the running kernel, and
 * read from a file (kallsyms.h; the reader is libsym's, ksnap.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sym.h"
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
	if (n > 0 && !strncmp(buf, "0x", 2) && ksnap_hex64(buf + 2, &v) && v)
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
	char line[SYMI_KSNAP_MAX_LINE];
	size_t n = 0, zero = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

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
