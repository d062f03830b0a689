/*
 * symbolize_log.c - `sym symbolize-log [--server URL|--store DIR] [FILE]`:
 * rewrite the addresses of a crash log in place (docs/symbolize-log.md).
 *
 * Two passes over the input, so that each module is looked up once for
 * the whole log, whatever its size, and memory grows with the frames,
 * not with the text:
 *
 *  1. Every line is parsed (tools/logline.c).  Each frame becomes a
 *     frame of a profile (sym_prof.h) in the map of its module, found by
 *     the build ID the line gives, else by opening the file it names and
 *     reading its build ID.  Stdin (or any input that cannot be read
 *     twice) is copied to an unlinked temporary file on the way.
 *  2. tool_prof_symbolize() (tools/symbolize.c) answers the profile, one
 *     batch per build ID, from the local store (a table built when it is
 *     missing and the file is here) or from symd with --server.
 *  3. The input is read again and written out: a frame that resolved is
 *     rewritten, every other byte is copied as it was.
 *
 * A sym-raw stack block in the log (`sym-raw 1` to `end`) is read whole
 * in pass 1 (sym_prof_read()), symbolized as its own profile, and written
 * in its symbolized form in place of its lines in step 3.
 *
 * Lines are read in pieces of at most LINE_CAP bytes: a longer line (a
 * megabyte of base64, binary junk) is copied through piece by piece and
 * never parsed, so memory stays bounded.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elf.h>

#include "agent/procmaps.h"
#include "grow.h"
#include "logline.h"
#include "tools.h"
#include "base.h"

/* Longest line that is parsed; longer ones are passed through. */
#define LINE_CAP 4096

/* Largest sym-raw block read; a larger one is passed through. */
#define RAW_MAX (64 << 20)

/* A buffered reader that hands out lines of at most LINE_CAP bytes. */
struct rd {
	FILE *f;
	char buf[2 * LINE_CAP];
	size_t start, end;
	bool eof;
};

/* A module of the log, by the build ID or the path its lines give. */
struct lmod {
	char *key;		/* "b:<id>" or "p:<path>"; free() */
	uint32_t map;		/* SYM_PROF_NOMAP: it cannot be placed */
	struct pm_elf *elf;	/* found by path: its segments; free() */
	char *path;		/* found by path: the file; free() */
	/* Found by path, once a line names a symbol: the file's symbols
	 * (sym_module_close()); NULL when they cannot be read. */
	struct sym_module *syms;
	bool syms_tried;
};

/* An executable file mapping of --maps. */
struct lmap {
	uint64_t start, end, pgoff;
	char *path;		/* free() */
};

/* The mappings of --maps, sorted by start. */
struct lmaps {
	struct lmap *v;
	size_t n, cap;
};

struct lctx {
	struct sym_prof *p;
	struct lmod *mods;
	size_t nmods, capmods;
	size_t last;		/* index of the last module found */
	struct lmaps maps;	/* --maps; empty without it */
	/* sym-raw blocks: pass 1 keeps each one's bytes in @raw and its
	 * profile in @blocks (NULL: it did not read); pass 2 writes them
	 * symbolized, block @next_block being the next. */
	struct sym_prof **blocks;	/* sym_prof_free() each, free() */
	size_t nblocks, capblocks, next_block;
	struct symi_buf raw;		/* symi_buf_release() */
	bool in_raw;		/* between `sym-raw 1` and `end` */
	bool raw_ok;		/* this block read (pass 1) / is replaced */
	uint64_t frames, placed;
	/* Inlined frames written so far in the sanitizer stack being
	 * rewritten: later frames' numbers move on by as many. */
	uint64_t shift;
	FILE *out;
};

/*
 * rd_next() - the next piece of input: a whole line with its newline, or
 * LINE_CAP bytes of a longer one (*whole false).
 * @return 1, 0 at end of input, -errno
 */
static int rd_next(struct rd *r, const char **s, size_t *n, bool *whole)
{
	for (;;) {
		char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		size_t have = r->end - r->start;

		if (nl || have >= LINE_CAP || (r->eof && have)) {
			size_t k = nl ? (size_t)(nl - (r->buf + r->start)) + 1 :
					have < LINE_CAP ? have : LINE_CAP;

			*s = r->buf + r->start;
			*n = k;
			*whole = nl || r->eof;
			r->start += k;
			return 1;
		}
		if (r->eof)
			return 0;
		memmove(r->buf, r->buf + r->start, have);
		r->start = 0;
		r->end = have;
		r->end += fread(r->buf + r->end, 1, sizeof(r->buf) - r->end,
				r->f);
		if (ferror(r->f))
			return -EIO;
		if (r->end == have)
			r->eof = true;
	}
}

static int cmp_lmap(const void *a, const void *b)
{
	const struct lmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The mapping of @m that holds @pc, or NULL. */
static const struct lmap *maps_find(const struct lmaps *m, uint64_t pc)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc < m->v[mid].start)
			hi = mid;
		else if (pc >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

static void maps_release(struct lmaps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* One line of a /proc/PID/maps dump: kept when it maps a file
 * executable. */
static int maps_line(struct lmaps *m, char *line)
{
	struct lmap e = { 0 };
	char perms[5], *path;
	int pos = -1, err;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %*s %n",
		   &e.start, &e.end, perms, &e.pgoff, &pos) < 4 || pos < 0 ||
	    strlen(perms) != 4 || perms[2] != 'x' || e.start >= e.end)
		return 0;
	path = tool_trim(line + pos);
	if (path[0] != '/')
		return 0;
	err = tool_grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v), 32);
	if (err)
		return err;
	e.path = strdup(path);
	if (!e.path)
		return -ENOMEM;
	m->v[m->n++] = e;
	return 0;
}

/* Read --maps @path; overlapping mappings keep the first. */
static int maps_load(struct lmaps *m, const char *path)
{
	char line[PATH_MAX + 256];
	FILE *f = fopen(path, "re");
	size_t k = 0;
	int err = 0;

	if (!f) {
		err = -errno;
		tool_err("cannot open '%s': %s", path, strerror(errno));
		return err;
	}
	while (!err && fgets(line, sizeof(line), f))
		err = maps_line(m, line);
	fclose(f);
	if (err)
		return err;
	qsort(m->v, m->n, sizeof(*m->v), cmp_lmap);
	for (size_t i = 0; i < m->n; i++) {
		if (k && m->v[i].start < m->v[k - 1].end) {
			free(m->v[i].path);
			continue;
		}
		m->v[k++] = m->v[i];
	}
	m->n = k;
	if (!m->n)
		tool_err("'%s': no executable file mapping", path);
	return m->n ? 0 : -EINVAL;
}

/* The ELF address of a segfault's ip in the file @e: the 6.x form gives
 * the ip's file offset; the older one the start of the executable
 * mapping, which starts at the page of the executable PT_LOAD. */
static bool segv_vaddr(const struct pm_elf *e, const struct logline *l,
		       uint64_t *vaddr)
{
	if (l->has_fileoff)
		return pm_elf_vaddr(e, l->fileoff, vaddr) == 0;
	if (l->addr < l->base || l->addr - l->base >= l->size)
		return false;
	for (unsigned i = 0; i < e->nloads; i++)
		if (e->loads[i].exec) {
			*vaddr = l->addr - l->base +
				 (e->loads[i].vaddr & ~0xfffULL);
			return true;
		}
	return false;
}

/* The build ID and segments of @path; false when it cannot be read. */
static bool read_elf(const char *path, struct pm_elf *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return false;
	err = pm_elf_read_fd(fd, e);
	close(fd);
	return err == 0 && e->build_id[0];
}

/* Add a module (build ID @bid, or NULL to read it from @path) to the
 * profile; one that cannot be placed gets SYM_PROF_NOMAP. */
static int mod_new(struct lctx *c, const char *key, const char *bid,
		   const char *path)
{
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .end = UINT64_MAX };
	char real[PATH_MAX];
	struct lmod *md;
	int err;

	err = tool_grow(&c->mods, &c->capmods, c->nmods + 1,
			sizeof(*c->mods), 16);
	if (err)
		return err;
	md = &c->mods[c->nmods];
	memset(md, 0, sizeof(*md));
	md->map = SYM_PROF_NOMAP;
	md->key = strdup(key);
	if (!md->key)
		return -ENOMEM;
	c->last = c->nmods++;
	if (!bid) {
		/* Found by path: a file that is not here is not placed. */
		md->elf = malloc(sizeof(*md->elf));
		if (!md->elf)
			return -ENOMEM;
		if (!realpath(path, real) || !read_elf(real, md->elf))
			return 0;
		path = real;
		md->path = strdup(real);
		if (!md->path)
			return -ENOMEM;
		bid = md->elf->build_id;
	}
	m.build_id = bid;
	m.path = path;
	err = sym_prof_add_map(c->p, &m, &md->map);
	return err == -EINVAL ? 0 : err;
}

/* The module of build ID @bid ("" for none) or file @path: found, or
 * added. */
static int mod_find(struct lctx *c, const char *bid, const char *path,
		    struct lmod **out)
{
	char key[PATH_MAX + 3];
	int err;

	snprintf(key, sizeof(key), "%c:%s", bid[0] ? 'b' : 'p',
		 bid[0] ? bid : path);
	if (c->nmods && !strcmp(c->mods[c->last].key, key)) {
		*out = &c->mods[c->last];
		return 0;
	}
	for (size_t i = 0; i < c->nmods; i++)
		if (!strcmp(c->mods[i].key, key)) {
			c->last = i;
			*out = &c->mods[i];
			return 0;
		}
	err = mod_new(c, key, bid[0] ? bid : NULL, path);
	*out = err ? NULL : &c->mods[c->last];
	return err;
}

/* The module @l names in line @s. */
static int line_mod(struct lctx *c, const char *s, const struct logline *l,
		    struct lmod **out)
{
	char bid[2 * 64 + 1], path[PATH_MAX];

	*out = NULL;
	if (l->module.len >= sizeof(path) || l->build_id.len >= sizeof(bid))
		return 0;
	memcpy(path, s + l->module.off, l->module.len);
	path[l->module.len] = '\0';
	memcpy(bid, s + l->build_id.off, l->build_id.len);
	bid[l->build_id.len] = '\0';
	if (bid[0] && !tool_valid_build_id(bid))
		bid[0] = '\0';
	return mod_find(c, bid, path, out);
}

/* A `0xPC` line through --maps: the module of the mapping that holds
 * PC, and PC's ELF address in it. */
static int pc_frame(struct lctx *c, const struct logline *l,
		    struct lmod **md, uint64_t *vaddr)
{
	const struct lmap *m = maps_find(&c->maps, l->addr);
	int err;

	*md = NULL;
	if (!m)
		return 0;
	err = mod_find(c, "", m->path, md);
	if (err || !*md || (*md)->map == SYM_PROF_NOMAP)
		return err;
	if (pm_elf_vaddr((*md)->elf, l->addr - m->start + m->pgoff, vaddr))
		*md = NULL;
	return 0;
}

/*
 * sym_vaddr() - a backtrace line's `NAME+0xOFF`: the address of NAME in
 * the symbol table (.symtab, else .dynsym) of the file the line names,
 * read here when the module was found by that path (so its build ID is
 * the file's, the one looked up), plus OFF.
 * @return true with *vaddr set; false when the file or the name is not
 *         there
 */
static bool sym_vaddr(struct lmod *md, const char *s,
		      const struct logline *l, uint64_t *vaddr)
{
	const struct sym_table *tab;
	char name[1024];
	uint64_t value;

	if (!md->path || l->symbol.len >= sizeof(name))
		return false;
	if (!md->syms_tried) {
		SYM_OPTS(sym_module_opts, o, .flags = SYM_MODULE_NO_DWARF |
						      SYM_MODULE_NO_SEARCH);
		const char *bid;

		md->syms_tried = true;
		if (sym_module_open(md->path, &o, &md->syms) != 0)
			md->syms = NULL;
		bid = md->syms ? sym_module_build_id(md->syms) : NULL;
		if (md->syms && (!bid || strcmp(bid, md->elf->build_id))) {
			sym_module_close(md->syms);
			md->syms = NULL;
		}
	}
	if (!md->syms || sym_module_table(md->syms, &tab) != 0)
		return false;
	memcpy(name, s + l->symbol.off, l->symbol.len);
	name[l->symbol.len] = '\0';
	if (sym_table_find_symbol(tab, name, &value, NULL) != 0)
		return false;
	*vaddr = value + l->addr;
	return true;
}

/*
 * line_frame() - parse line @s (without its newline) into @l and, when
 * it is a frame that can be placed, its profile frame @f.
 * @return 1 (placed), 0 (not a frame, or l->kind set but not placed),
 *         -ENOMEM
 */
static int line_frame(struct lctx *c, const char *s, size_t n,
		      struct logline *l, struct sym_prof_frame *f)
{
	struct lmod *md;
	int err;

	logline_parse(s, n, l);
	/* 0xPC means something only with --maps. */
	if (l->kind == LOGLINE_PC && !c->maps.n)
		l->kind = LOGLINE_NONE;
	if (l->kind == LOGLINE_NONE)
		return 0;
	f->addr = l->addr;
	f->flags = l->kind == LOGLINE_BACKTRACE ? SYM_PROF_FRAME_RETURN : 0;
	if (l->kind == LOGLINE_PC)
		err = pc_frame(c, l, &md, &f->addr);
	else
		err = line_mod(c, s, l, &md);
	if (err || !md || md->map == SYM_PROF_NOMAP)
		return err;
	f->map = md->map;
	if (l->kind == LOGLINE_SEGFAULT && !segv_vaddr(md->elf, l, &f->addr))
		return 0;
	/* NAME+0xOFF: NAME from the file's own symbols (symd serves no
	 * symbol tables), so only where the file is here. */
	if (l->symbol.len && !sym_vaddr(md, s, l, &f->addr))
		return 0;
	return 1;
}

/* Strip the newline (and a '\r' before it) off a whole line. */
static size_t body_len(const char *s, size_t n)
{
	if (n && s[n - 1] == '\n')
		n--;
	return n;
}

/* " FILE:LINE:COL", LINE and COL left out when 0; @skip bytes of the
 * file's name are not written. */
static void put_loc(FILE *o, const struct sym_prof_line *ln, size_t skip)
{
	if (!ln->file)
		return;
	fprintf(o, " %s", ln->file + skip);
	if (ln->line) {
		fprintf(o, ":%" PRIu32, ln->line);
		if (ln->column)
			fprintf(o, ":%" PRIu32, ln->column);
	}
}

/* A sanitizer line's head, "    #N 0xPC", with frame number @no. */
static void put_head(FILE *o, const char *s, const struct logline *l,
		     uint64_t no)
{
	size_t after = l->frame_no.off + l->frame_no.len;

	fwrite(s, 1, l->frame_no.off, o);
	fprintf(o, "%" PRIu64, no);
	fwrite(s + after, 1, l->cut - after, o);
}

/*
 * A sanitizer frame as the runtime prints it once llvm-symbolizer has
 * answered: one "#N 0xPC in FUNC FILE:LINE:COL" per function of the
 * inline chain, innermost first, numbered on from @no (the runtime
 * numbers inlined frames as frames), FILE without a leading "./" (the
 * runtime's StripPathPrefix() drops it), and "(MODULE+0xOFF) (BuildId:
 * ...)" as the line had it where there is no file.
 */
static void put_sanitizer(FILE *o, const char *s, size_t n, const char *eol,
			  const struct logline *l, uint64_t no,
			  const struct sym_prof_line *ln, size_t nl)
{
	size_t tail = l->module.off - 2;	/* at " (MODULE+0xOFF)" */

	for (size_t i = 0; i < nl; i++) {
		/* The runtime's "    #%n %p %F %L": %F is empty without
		 * a function, the blanks stay. */
		put_head(o, s, l, no + i);
		fputs(" ", o);
		if (ln[i].function)
			fprintf(o, "in %s", ln[i].function);
		if (ln[i].file)
			put_loc(o, &ln[i], strncmp(ln[i].file, "./", 2) ? 0 : 2);
		else
			fwrite(s + tail, 1, n - tail, o);
		fputs(eol, o);
	}
}

/*
 * A sanitizer's summary line as ReportErrorSummary() writes it for a
 * symbolized frame, "%L %F" of the innermost function: "KIND
 * FILE:LINE:COL in FUNC", or "KIND (MODULE+0xOFF) (BuildId: ...) in
 * FUNC" without a file.
 */
static void put_summary(FILE *o, const char *s, size_t n, const char *eol,
			const struct logline *l, const struct sym_prof_line *ln)
{
	fwrite(s, 1, l->cut, o);
	if (ln->file)
		put_loc(o, ln, strncmp(ln->file, "./", 2) ? 0 : 2);
	else
		fwrite(s + l->cut, 1, n - 1 - l->cut, o);
	fputs(" ", o);
	if (ln->function)
		fprintf(o, "in %s", ln->function);
	fputs(eol, o);
}

/* Other lines: the line, then " at FUNC FILE:LINE:COL", and one
 * " (inlined by) FUNC FILE:LINE:COL" line per caller it was inlined in. */
static void put_appended(FILE *o, const char *s, size_t n, const char *eol,
			 const struct sym_prof_line *ln, size_t nl)
{
	fwrite(s, 1, n, o);
	for (size_t i = 0; i < nl; i++) {
		fputs(i ? " (inlined by) " : " at ", o);
		fputs(ln[i].function ? ln[i].function : "??", o);
		put_loc(o, &ln[i], 0);
		if (i + 1 < nl)
			fputs(eol, o);
	}
	fputs(eol, o);
}

/* A line left as it was, but for a sanitizer frame's number when
 * inlined frames were added above it in its stack. */
static void put_unplaced(struct lctx *c, const char *s, size_t n,
			 const struct logline *l)
{
	if (l->kind != LOGLINE_SANITIZER || !c->shift) {
		fwrite(s, 1, n, c->out);
		return;
	}
	put_head(c->out, s, l, l->frame + c->shift);
	fwrite(s + l->cut, 1, n - l->cut, c->out);
}

/* Pass 2 for one whole line: rewrite it, or copy it. */
static int rewrite(struct lctx *c, const char *s, size_t n)
{
	const struct sym_prof_line *ln = NULL;
	struct sym_prof_frame f;
	struct logline l = { .kind = LOGLINE_NONE };
	size_t body = body_len(s, n), nl = 0, b = body;
	const char *eol = body < n ? "\n" : "";
	uint32_t st = 0;
	int r;

	r = body > LINE_CAP - 1 ? 0 : line_frame(c, s, body, &l, &f);
	if (r < 0)
		return r;
	if (l.kind == LOGLINE_NONE) {
		fwrite(s, 1, n, c->out);
		return 0;
	}
	c->frames++;
	if (l.kind == LOGLINE_SANITIZER && l.frame == 0)
		c->shift = 0;
	if (r != 1 || sym_prof_location(c->p, &f, &st, &ln, &nl) != 0 ||
	    st != SYM_PROF_LOC_OK || !nl) {
		put_unplaced(c, s, n, &l);
		return 0;
	}
	c->placed++;
	if (b && s[b - 1] == '\r') {
		b--;
		eol = body < n ? "\r\n" : "\r";
	}
	if (l.kind == LOGLINE_SANITIZER) {
		put_sanitizer(c->out, s, b, eol, &l, l.frame + c->shift, ln,
			      nl);
		c->shift += nl - 1;
	} else if (l.kind == LOGLINE_SUMMARY) {
		put_summary(c->out, s, b, eol, &l, ln);
	} else {
		put_appended(c->out, s, b, eol, ln, nl);
	}
	return 0;
}

/* Is the whole line @s[0..@n) (its newline aside) @w? */
static bool is_line(const char *s, size_t n, const char *w)
{
	n = body_len(s, n);
	return n == strlen(w) && memcmp(s, w, n) == 0;
}

/* The sym-raw block just read: parsed and kept (NULL when it does not
 * read, or was over RAW_MAX), in input order. */
static int raw_done(struct lctx *c)
{
	struct sym_prof *p = NULL;
	char msg[256];
	int err;

	err = tool_grow(&c->blocks, &c->capblocks, c->nblocks + 1,
			sizeof(*c->blocks), 4);
	if (err)
		return err;
	if (c->raw_ok) {
		err = sym_prof_read(c->raw.p, c->raw.len, &p, msg,
				    sizeof(msg));
		if (err == -ENOMEM)
			return err;
		if (err)
			tool_err("sym-raw block %zu: %s: left as it is",
				 c->nblocks + 1, msg);
	}
	c->blocks[c->nblocks++] = p;
	symi_buf_release(&c->raw);
	c->in_raw = false;
	return 0;
}

/* Pass 1 of a sym-raw stack block, `sym-raw 1` to `end` (@line: @s is a
 * whole line, not a piece of a long one): its bytes are kept. */
static int raw_collect(struct lctx *c, const char *s, size_t n, bool line)
{
	int err;

	if (!c->in_raw) {
		if (!line || !is_line(s, n, "sym-raw 1"))
			return 0;
		c->in_raw = true;
		c->raw_ok = true;
		symi_buf_init(&c->raw, RAW_MAX);
	}
	if (c->raw_ok) {
		err = symi_buf_add(&c->raw, s, n);
		if (err == -ENOMEM)
			return err;
		c->raw_ok = !err;
	}
	return line && is_line(s, n, "end") ? raw_done(c) : 0;
}

/* Pass 2 of a sym-raw block: one that read is written symbolized in
 * place of its lines.  @return 1 when @s is not to be written, 0, or
 * -errno */
static int raw_emit(struct lctx *c, const char *s, size_t n, bool line)
{
	size_t k;
	int err;

	if (!c->in_raw) {
		if (!line || !is_line(s, n, "sym-raw 1"))
			return 0;
		k = c->next_block++;
		c->in_raw = true;
		c->raw_ok = k < c->nblocks && c->blocks[k];
		if (!c->raw_ok)
			return 0;
		if (fflush(c->out) != 0)
			return -errno;
		err = sym_prof_write(c->blocks[k], fileno(c->out));
		return err ? err : 1;
	}
	if (line && is_line(s, n, "end"))
		c->in_raw = false;
	return c->raw_ok;
}

/*
 * Pass 1: every frame of @r into the profile, every sym-raw block read,
 * the input copied to @spool when it is not NULL.
 */
static int collect(struct lctx *c, struct rd *r, FILE *spool)
{
	const char *s;
	size_t n;
	bool whole, cont = false;
	int err;

	while ((err = rd_next(r, &s, &n, &whole)) == 1) {
		struct sym_prof_frame f;
		struct sym_prof_stack st = { .count = 1, .nframes = 1,
					     .frames = &f };
		struct logline l;
		bool line = !cont && whole;

		if (spool && fwrite(s, 1, n, spool) != n)
			return -errno ? -errno : -EIO;
		cont = !whole;
		err = raw_collect(c, s, n, line);
		if (err || !line)
			goto next;
		err = line_frame(c, s, body_len(s, n), &l, &f);
		if (err == 1)
			err = sym_prof_add_stack(c->p, &st);
next:
		if (err < 0)
			return err;
	}
	if (c->in_raw)		/* cut short: left as it is */
		symi_buf_release(&c->raw);
	c->in_raw = false;
	return err;
}

/* Pass 2: the input again, rewritten to c->out. */
static int emit(struct lctx *c, struct rd *r)
{
	const char *s;
	size_t n;
	bool whole, cont = false;
	int err;

	while ((err = rd_next(r, &s, &n, &whole)) == 1) {
		bool line = !cont && whole;

		cont = !whole;
		err = raw_emit(c, s, n, line);
		if (err == 0 && line)
			err = rewrite(c, s, n);
		else if (err == 0)
			fwrite(s, 1, n, c->out);
		if (err < 0)
			return err;
	}
	return err;
}

/* Symbolize the sym-raw blocks, each as `sym symbolize` would. */
static int raw_symbolize(struct lctx *c, const struct tool_symbolize_opts *o)
{
	for (size_t i = 0; i < c->nblocks; i++) {
		int err = c->blocks[i] ? tool_prof_symbolize(c->blocks[i], o) :
					 0;

		if (err)
			return err;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: sym symbolize-log [--server URL | --store DIR] [--maps MAPS] [-v]\n"
"                         [FILE]\n"
"\n"
"Copy FILE (or stdin) to stdout with the frames of crash logs it holds\n"
"symbolized in place: sanitizer frames (#N 0xPC ... (MODULE+0xOFF)),\n"
"glibc backtrace_symbols() lines (MODULE(+0xOFF) [0xPC]) and the\n"
"kernel's segfault lines (... ip PC ... in FILE[...]), sym-raw stack\n"
"blocks, and with --maps lines of one runtime address (0xPC).  Everything\n"
"else is copied byte for byte.  See docs/symbolize-log.md.\n"
"\n"
"  --server URL   ask symd at URL (POST /v1/symbolize)\n"
"  --store DIR    the local store to use (default: $SYM_STORE, ...)\n"
"  --wait-ms MS   how long a build ID may stay pending on the server\n"
"  --maps MAPS    a /proc/PID/maps dump: places 0xPC lines\n"
"  -v             print the per-module summary of the lookups\n"
"  -h, --help     this help\n");
}

static void lctx_release(struct lctx *c)
{
	for (size_t i = 0; i < c->nmods; i++) {
		free(c->mods[i].key);
		free(c->mods[i].elf);
		free(c->mods[i].path);
		sym_module_close(c->mods[i].syms);
	}
	free(c->mods);
	for (size_t i = 0; i < c->nblocks; i++)
		sym_prof_free(c->blocks[i]);
	free(c->blocks);
	symi_buf_release(&c->raw);
	maps_release(&c->maps);
	sym_prof_free(c->p);
}

/* Open @path (stdin for NULL or "-") for two passes: @spool is set when
 * the first pass must copy it to a temporary file. */
static int open_input(const char *path, FILE **in, FILE **spool)
{
	struct stat sb;

	*spool = NULL;
	*in = !path || !strcmp(path, "-") ? stdin : fopen(path, "re");
	if (!*in) {
		tool_err("cannot open '%s': %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fileno(*in), &sb) == 0 && S_ISREG(sb.st_mode) &&
	    lseek(fileno(*in), 0, SEEK_CUR) == 0)
		return 0;
	*spool = tmpfile();
	if (!*spool) {
		tool_err("cannot create a temporary file: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* Both passes over @r's file; errors of reading and writing are
 * printed here, tool_prof_symbolize()'s by it. */
static int passes(struct lctx *c, struct rd *r, FILE *in, FILE *spool,
		  const char *name, const struct tool_symbolize_opts *o)
{
	int err, serr = 0;

	memset(r, 0, sizeof(*r));
	r->f = in;
	err = collect(c, r, spool);
	if (err) {
		tool_err_code(name, err);
		return err;
	}
	/* A lookup that failed (symd not reachable) leaves frames
	 * unplaced: the log is still written, and the status says so. */
	if (sym_prof_nstacks(c->p))
		serr = tool_prof_symbolize(c->p, o);
	if (serr != -ENOMEM)
		serr = serr ? serr : raw_symbolize(c, o);
	if (serr == -ENOMEM)
		return serr;
	memset(r, 0, sizeof(*r));
	r->f = spool ? spool : in;
	err = fseeko(r->f, 0, SEEK_SET) ? -errno : emit(c, r);
	if (!err && fflush(stdout) != 0)
		err = -errno;
	if (err)
		tool_err_code(name, err);
	return err ? err : serr;
}

static int run(const char *path, const char *maps,
	       const struct tool_symbolize_opts *o)
{
	struct lctx c = { .out = stdout };
	static struct rd r;
	FILE *in = NULL, *spool = NULL;
	int err;

	err = sym_prof_new(&c.p);
	if (err) {
		tool_err_code("profile", err);
		goto out;
	}
	if (maps) {
		err = maps_load(&c.maps, maps);
		if (err)
			goto out;
	}
	err = open_input(path, &in, &spool);
	if (!err)
		err = passes(&c, &r, in, spool, path ? path : "stdin", o);
	if (err != -ENOMEM && c.placed < c.frames)
		tool_err("%" PRIu64 " of %" PRIu64 " frame lines placed, %"
			 PRIu64 " left as they were", c.placed, c.frames,
			 c.frames - c.placed);
out:
	if (in && in != stdin)
		fclose(in);
	if (spool)
		fclose(spool);
	lctx_release(&c);
	return err;
}

int cmd_symbolize_log(int argc, char **argv)
{
	static const struct option longopts[] = {
		TOOL_SYMBOLIZE_OPTIONS,
		{ "maps", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tool_symbolize_opts o = { .wait_ms = 10000, .quiet = true,
					 .llvm_names = true };
	static char buf[1 << 16];
	const char *maps = NULL;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
		r = tool_symbolize_getopt(opt, optarg, &o);
		if (r < 0)
			return TOOL_EXIT_USAGE;
		if (r > 0)
			continue;
		if (opt == 'h') {
			usage(stdout);
			return TOOL_EXIT_OK;
		}
		if (opt == 'v') {
			/* the whole summary, its table too, as before the
			 * views turned quiet */
			o.quiet = false;
			o.verbose = true;
			continue;
		}
		if (opt == 'm') {
			maps = optarg;
			continue;
		}
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (o.kallsyms) {
		tool_err("--kallsyms names a profile's kernel frames; a log "
			 "has none");
		return TOOL_EXIT_USAGE;
	}
	if (argc - optind > 1) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (o.server && o.store_dir) {
		tool_err("--server and --store exclude each other");
		return TOOL_EXIT_USAGE;
	}
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	return run(argc > optind ? argv[optind] : NULL, maps, &o) ?
		       TOOL_EXIT_FAIL : TOOL_EXIT_OK;
}
