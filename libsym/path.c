/*
 * path.c - source file paths as the peers spell them.
 *
 * A line table names a file by a name and a directory entry; the CU
 * gives DW_AT_comp_dir.  GNU addr2line 2.40, eu-addr2line 0.188 and
 * llvm-symbolizer 14 all print a relative directory joined to the
 * compilation directory, and none of them normalizes the result:
 *
 *   python3.11d: comp_dir "./build-debug", directory "../Parser",
 *                name "pegen.c"     -> ./build-debug/../Parser/pegen.c
 *   libc (DWARF 5, directory 0 "./libio" = comp_dir)
 *                                   -> ./libio/./libio/fputc.c
 *
 * The rule here is llvm-symbolizer's (DWARFDebugLine::Prologue::
 * getFileNameByIndex() with AbsoluteFilePath, LLVM 14), which the other
 * two follow except in the corner cases docs/oracle.md lists ("Paths"):
 *
 *   - an absolute name is the path;
 *   - the include directory is entry DirIdx for DWARF 5, where entry 0
 *     is the compilation directory as the line table spells it; before
 *     DWARF 5 it is entry DirIdx - 1, and none for DirIdx 0 (the
 *     compilation directory itself);
 *   - the path is comp_dir / dir / name, without comp_dir when it is
 *     missing or the directory is absolute, where "/" is
 *     sys::path::append(): a component is added after a '/' unless the
 *     path so far ends in one (then the component's own leading '/' are
 *     dropped) or the component starts with one.
 *
 * llvm-symbolizer --relativenames (RelativeFilePath) prints the same
 * without comp_dir, and without DWARF 5's directory 0.  That is always a
 * tail of the whole path, so a file is kept as the whole path and the
 * number of bytes before that tail (symi_path_intern()).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base.h"

/* Absolute for POSIX or Windows, as llvm's isPathAbsoluteOnWindowsOrPosix()
 * says for the paths compilers write: "/x", "C:/x", "C:\x". */
static bool absolute(const char *p)
{
	if (p[0] == '/')
		return true;
	return ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) &&
	       p[1] == ':' && (p[2] == '/' || p[2] == '\\');
}

/* A path being built: @p (@len bytes), or only its length when @p is
 * NULL; @last is its last byte. */
struct pbuf {
	char *p;
	size_t len;
	char last;
};

static void put(struct pbuf *b, const char *s, size_t n)
{
	if (!n)
		return;
	if (b->p)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->last = s[n - 1];
}

/* sys::path::append(path, @c) for the POSIX style. */
static void append(struct pbuf *b, const char *c)
{
	if (b->len && b->last == '/') {
		while (*c == '/')
			c++;
	} else if (b->len && *c != '/') {
		put(b, "/", 1);
	}
	put(b, c, strlen(c));
}

/* The whole path of @f into @b (b->p NULL: only its length). */
static void join(struct pbuf *b, const struct symi_path *f)
{
	const char *dir = f->dir ? f->dir : "";

	if (absolute(f->name)) {
		put(b, f->name, strlen(f->name));
		return;
	}
	if (f->comp_dir && *f->comp_dir && !absolute(dir))
		append(b, f->comp_dir);
	if (*dir)
		append(b, dir);
	append(b, f->name);
}

/* The length of the relative path of @f (see the top of the file): dir,
 * unless it is directory 0 of DWARF 5, then name, joined as join() joins
 * them, so that it is the tail of the whole path. */
static size_t rel_len(const struct symi_path *f)
{
	struct pbuf b = { 0 };

	if (absolute(f->name))
		return strlen(f->name);
	if (f->dir && *f->dir && f->dir_rel)
		append(&b, f->dir);
	append(&b, f->name);
	return b.len;
}

uint32_t symi_path_intern(struct symi_builder *b, const struct symi_path *f)
{
	char stack[1024], *buf = stack;
	struct pbuf pb = { 0 };
	size_t rel, n;
	uint32_t id;

	join(&pb, f);
	n = pb.len;
	if (n + 1 > sizeof(stack)) {
		buf = symi_malloc(n + 1);
		if (!buf)
			return symi_builder_oom(b);
	}
	pb = (struct pbuf){ .p = buf };
	join(&pb, f);
	buf[n] = '\0';
	rel = rel_len(f);
	/* A tail by construction; anything else would be a bug here, and
	 * the whole path is the safe answer. */
	rel = rel <= n ? n - rel : 0;
	id = symi_builder_file(b, buf, rel > UINT32_MAX ? 0 : (uint32_t)rel);
	if (buf != stack)
		free(buf);
	return id;
}
