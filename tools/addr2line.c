/*
 * addr2line.c - `sym addr2line`: addresses to functions, files and lines,
 * with the options and the output of the addr2line programs people know.
 *
 * It takes GNU addr2line's options (-e -a -f -i -C -p -s), eu-addr2line's
 * (--debuginfo-path, --pretty-print, -S, -x, -A, grouped flags such as
 * -Cfi) and prints in one of four styles (--output-style):
 *
 *   GNU       binutils 2.40 addr2line, byte for byte (the default);
 *   elfutils  eu-addr2line as of elfutils 0.189 and later;
 *   LLVM      llvm-symbolizer's default output;
 *   JSON      llvm-symbolizer --output-style=JSON.
 *
 * The flags mean the same in every style, as in llvm-addr2line: without
 * -f no function names, without -i only the innermost location, without
 * -C raw linkage names.  So `--output-style=LLVM -f -i -C` prints what a
 * plain `llvm-symbolizer` prints.
 *
 * Addresses come from argv, or from stdin one per line; each answer is
 * flushed as soon as its line is read, so the command works as a
 * co-process.  An input is hex (0x optional), a symbol name, or
 * symbol+offset / symbol-offset.
 *
 * Each style copies its peer's format and quirks on purpose, because
 * scripts parse them; they are listed in docs/sym.1.  One GNU quirk is
 * not copied: bfd sometimes names an inlined innermost frame that has no
 * linkage name after the symbol covering the address (it depends on the
 * order of the inline's ranges and on earlier lookups in the same run),
 * so an inlined C function can print as its caller.  We print the DWARF
 * name, which is what GNU prints in the other cases.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"

enum a2l_style {
	STYLE_GNU,
	STYLE_LLVM,
	STYLE_JSON,
	STYLE_ELFUTILS,
};

/* The most --debuginfo-path directories kept; more is a usage error. */
#define MAX_DIRS 32

struct a2l {
	/* Options. */
	const char *exe;
	const char *debug_file;
	enum a2l_style style;
	bool addresses, functions, inlines, demangle, pretty, basenames;
	bool symbols, sections;
	const char *dirs[MAX_DIRS + 1];	/* NULL-terminated */
	size_t ndirs;
	char *dirs_buf[MAX_DIRS];	/* strdup'ed --debuginfo-path parts */
	size_t ndirs_buf;

	/* State. */
	struct sym_module *mod;		/* close with sym_module_close() */
	const struct sym_table *tab;	/* borrowed from mod */
	struct sym_module_info info;
	int width;			/* hex digits of an address: 8, 16 */
	bool from_stdin;
	size_t nout;			/* answers printed, for JSON commas */
	char *dm;			/* last demangled name; free() */
	struct sym_frame frames[SYM_MAX_FRAMES];
};

enum {
	OPT_DEBUGINFO_PATH = 0x100,
	OPT_OUTPUT_STYLE,
	OPT_PRETTY,
	OPT_RELATIVE,
	OPT_NO_DEMANGLE,
	OPT_DEBUG_FILE,
	OPT_VERSION,
};

static const struct option longopts[] = {
	{ "addresses", no_argument, NULL, 'a' },
	{ "basenames", no_argument, NULL, 's' },
	{ "exe", required_argument, NULL, 'e' },
	{ "executable", required_argument, NULL, 'e' },
	{ "functions", no_argument, NULL, 'f' },
	{ "inlines", no_argument, NULL, 'i' },
	{ "demangle", optional_argument, NULL, 'C' },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "pretty-print", no_argument, NULL, OPT_PRETTY },
	{ "symbols", no_argument, NULL, 'S' },
	{ "symbols-sections", no_argument, NULL, 'x' },
	{ "absolute", no_argument, NULL, 'A' },
	{ "relative", no_argument, NULL, OPT_RELATIVE },
	{ "section", required_argument, NULL, 'j' },
	{ "target", required_argument, NULL, 'b' },
	{ "recurse-limit", no_argument, NULL, 'R' },
	{ "no-recurse-limit", no_argument, NULL, 'r' },
	{ "debuginfo-path", required_argument, NULL, OPT_DEBUGINFO_PATH },
	{ "debug-file", required_argument, NULL, OPT_DEBUG_FILE },
	{ "output-style", required_argument, NULL, OPT_OUTPUT_STYLE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym addr2line [options] [-e FILE] [ADDR...]\n\n"
		"Translate addresses of FILE (default a.out) into function "
		"names and\nsource locations.  ADDR is hex (0x optional), "
		"SYMBOL, SYMBOL+OFF or\nSYMBOL-OFF; with no ADDR they are read "
		"from stdin, one per line.\n\n"
		"  -e, --exe=FILE          the ELF file\n"
		"  -a, --addresses         print each address first\n"
		"  -f, --functions         print function names\n"
		"  -i, --inlines           print the inlined-call chain\n"
		"  -C, --demangle[=STYLE]  demangle names (STYLE is ignored)\n"
		"  -p, --pretty-print      one line per frame\n"
		"  -s, --basenames         strip directories from file names\n"
		"  -S, --symbols           print symbol+offset (elfutils)\n"
		"  -x, --symbols-sections  like -S (section names are not "
		"printed)\n"
		"      --debuginfo-path=DIR[:DIR...]  also search DIR for "
		"debug files\n"
		"      --debug-file=FILE   use FILE as the separate debug "
		"file\n"
		"      --output-style=GNU|LLVM|JSON|elfutils\n"
		"                          whose output to copy (default "
		"GNU)\n\nSee sym(1).\n");
}

/*
 * libsym's messages.  While the module opens they are held back: on
 * failure the last one completes the one-line error, on success they are
 * printed as warnings.  Afterwards they go straight to stderr.
 */
#define MAX_HELD 8

static struct {
	bool hold;
	size_t n, dropped;
	char msg[MAX_HELD][256];
} held;

static void log_fn(void *ctx, int level, const char *msg)
{
	if (!held.hold) {
		tool_err("%s", msg);
		return;
	}
	if (held.n == MAX_HELD) {
		held.dropped++;
		/* Keep the last message: it is the one an error quotes. */
		snprintf(held.msg[MAX_HELD - 1], sizeof(held.msg[0]), "%s",
			 msg);
		return;
	}
	snprintf(held.msg[held.n++], sizeof(held.msg[0]), "%s", msg);
}

static void release_held(void)
{
	size_t i;

	held.hold = false;
	for (i = 0; i < held.n; i++)
		tool_err("%s", held.msg[i]);
	if (held.dropped)
		tool_err("(%zu more messages)", held.dropped);
	held.n = 0;
	held.dropped = 0;
}

static int add_dirs(struct a2l *a, const char *arg)
{
	char *copy, *p, *next;

	if (a->ndirs_buf == MAX_DIRS)
		return -E2BIG;
	copy = strdup(arg);
	if (!copy)
		return -ENOMEM;
	a->dirs_buf[a->ndirs_buf++] = copy;
	/* eu-addr2line's path syntax: DIR:DIR..., a leading + or - on an
	 * element only switches CRC checking in libdwfl. */
	for (p = copy; p; p = next) {
		next = strchr(p, ':');
		if (next)
			*next++ = '\0';
		if (*p == '+' || *p == '-')
			p++;
		if (*p == '\0')
			continue;
		if (a->ndirs == MAX_DIRS)
			return -E2BIG;
		a->dirs[a->ndirs++] = p;
	}
	a->dirs[a->ndirs] = NULL;
	return 0;
}

static int parse_style(const char *s, enum a2l_style *out)
{
	if (strcasecmp(s, "GNU") == 0)
		*out = STYLE_GNU;
	else if (strcasecmp(s, "LLVM") == 0)
		*out = STYLE_LLVM;
	else if (strcasecmp(s, "JSON") == 0)
		*out = STYLE_JSON;
	else if (strcasecmp(s, "elfutils") == 0 || strcasecmp(s, "eu") == 0)
		*out = STYLE_ELFUTILS;
	else
		return -EINVAL;
	return 0;
}

/*
 * Names.
 */

/*
 * show() - the name to print for @raw: itself, or demangled with -C.
 * The result is valid until the next call (a->dm is reused).  With
 * @z_only, only "_Z" names are demangled, as eu-addr2line does.
 */
static const char *show(struct a2l *a, const char *raw,
			const struct sym_frame *f, bool z_only)
{
	if (!raw || !a->demangle)
		return raw;
	if (z_only && strncmp(raw, "_Z", 2) != 0)
		return raw;
	if (f && f->demangled && raw == f->linkage_name)
		return f->demangled;
	free(a->dm);
	a->dm = sym_demangle(raw);
	return a->dm ? a->dm : raw;
}

/* DWARF function name preferring the linkage name, as GNU, eu and LLVM
 * all do without -C. */
static const char *raw_name(const struct sym_frame *f)
{
	return f->linkage_name ? f->linkage_name : f->name;
}

/* The ELF symbol covering the address: on the outermost frame. */
static const char *outer_symbol(const struct sym_frame *fr, size_t n)
{
	const struct sym_frame *o;

	if (n == 0)
		return NULL;
	o = &fr[n - 1];
	if (o->symbol)
		return o->symbol;
	if (o->flags & SYM_FRAME_SYMTAB)
		return o->name;
	return NULL;
}

static const char *file_name(struct a2l *a, const char *file)
{
	const char *slash;

	if (!file || !a->basenames)
		return file;
	slash = strrchr(file, '/');
	return slash ? slash + 1 : file;
}

/*
 * GNU style (binutils 2.40 addr2line.c, translate_addresses()).
 */
static void print_gnu(struct a2l *a, uint64_t addr, size_t n)
{
	const struct sym_frame *fr = a->frames;
	const char *name, *file;
	size_t i, last;

	if (a->addresses)
		printf("0x%0*" PRIx64 "%s", a->width, addr,
		       a->pretty ? ": " : "\n");
	if (n == 0) {
		if (a->functions)
			fputs(a->pretty ? "?? " : "??\n", stdout);
		puts("??:0");
		return;
	}
	last = a->inlines ? n - 1 : 0;
	for (i = 0; i <= last; i++) {
		if (a->functions) {
			/* A line without a DWARF function: bfd names it
			 * after the covering symbol. */
			name = raw_name(&fr[i]);
			if (!name && i == 0)
				name = outer_symbol(fr, n);
			if (!name || !*name)
				name = "??";
			else
				name = show(a, name, &fr[i], false);
			fputs(name, stdout);
			fputs(a->pretty ? " at " : "\n", stdout);
		}
		file = file_name(a, fr[i].file);
		printf("%s:", file ? file : "??");
		/* bfd keeps the first discriminator for the inliners. */
		if (fr[i].line && fr[0].discriminator)
			printf("%u (discriminator %u)\n", fr[i].line,
			       fr[0].discriminator);
		else if (fr[i].line)
			printf("%u\n", fr[i].line);
		else
			puts("?");
		if (i < last && a->pretty)
			fputs(" (inlined by) ", stdout);
	}
}

/*
 * LLVM style (llvm-symbolizer's default output).  Without -i only one
 * frame is printed: the outermost function with the innermost location.
 */
static void print_llvm_frame(struct a2l *a, const struct sym_frame *name_fr,
			     const struct sym_frame *loc, bool first)
{
	const char *name = NULL, *file = NULL;
	uint32_t line = 0, col = 0;

	if (!first && a->pretty)
		fputs(" (inlined by) ", stdout);
	if (a->functions) {
		if (name_fr)
			name = show(a, raw_name(name_fr), name_fr, false);
		fputs(name && *name ? name : "??", stdout);
		fputs(a->pretty ? " at " : "\n", stdout);
	}
	if (loc) {
		file = file_name(a, loc->file);
		line = loc->line;
		col = loc->column;
	}
	printf("%s:%u:%u\n", file ? file : "??", line, col);
}

static void print_llvm(struct a2l *a, uint64_t addr, size_t n)
{
	const struct sym_frame *fr = a->frames;
	size_t i;

	if (a->addresses)
		printf("0x%" PRIx64 "%s", addr, a->pretty ? ": " : "\n");
	if (n == 0)
		print_llvm_frame(a, NULL, NULL, true);
	else if (!a->inlines)
		print_llvm_frame(a, &fr[n - 1], &fr[0], true);
	else
		for (i = 0; i < n; i++)
			print_llvm_frame(a, &fr[i], &fr[i], i == 0);
	putchar('\n');
}

/*
 * JSON style (llvm-symbolizer --output-style=JSON, LLVM 14): the keys in
 * its order, "" for unknown strings.  Addresses from argv make one array,
 * each stdin line one object.
 */
static void json_body(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", stdout);
			break;
		case '\\':
			fputs("\\\\", stdout);
			break;
		case '\n':
			fputs("\\n", stdout);
			break;
		case '\t':
			fputs("\\t", stdout);
			break;
		default:
			if (*p < 0x20)
				printf("\\u%04x", *p);
			else
				putchar(*p);
		}
	}
}

static void json_str(const char *s)
{
	putchar('"');
	json_body(s);
	putchar('"');
}

static void json_begin(struct a2l *a)
{
	if (a->from_stdin)
		return;
	fputs(a->nout ? "," : "[", stdout);
}

static void json_end(struct a2l *a)
{
	a->nout++;
	if (a->from_stdin)
		putchar('\n');
}

static void print_json_frame(struct a2l *a, const struct sym_frame *name_fr,
			     const struct sym_frame *loc)
{
	const char *name = NULL;

	printf("{\"Column\":%u,\"Discriminator\":%u,\"FileName\":",
	       loc ? loc->column : 0, loc ? loc->discriminator : 0);
	json_str(loc ? file_name(a, loc->file) : NULL);
	fputs(",\"FunctionName\":", stdout);
	if (a->functions && name_fr)
		name = show(a, raw_name(name_fr), name_fr, false);
	json_str(name);
	printf(",\"Line\":%u,\"StartAddress\":", loc ? loc->line : 0);
	if (name_fr && (name_fr->entry || name_fr->symbol_addr))
		printf("\"0x%" PRIx64 "\"", name_fr->entry ?
		       name_fr->entry : name_fr->symbol_addr);
	else
		fputs("\"\"", stdout);
	fputs(",\"StartFileName\":", stdout);
	json_str(loc ? file_name(a, loc->decl_file) : NULL);
	printf(",\"StartLine\":%u}", loc ? loc->decl_line : 0);
}

static void print_json(struct a2l *a, uint64_t addr, size_t n)
{
	const struct sym_frame *fr = a->frames;
	size_t i;

	json_begin(a);
	printf("{\"Address\":\"0x%" PRIx64 "\",\"ModuleName\":", addr);
	json_str(a->exe);
	fputs(",\"Symbol\":[", stdout);
	if (n == 0) {
		print_json_frame(a, NULL, NULL);
	} else if (!a->inlines) {
		print_json_frame(a, &fr[n - 1], &fr[0]);
	} else {
		for (i = 0; i < n; i++) {
			if (i)
				putchar(',');
			print_json_frame(a, &fr[i], &fr[i]);
		}
	}
	fputs("]}", stdout);
	json_end(a);
}

static void print_json_error(struct a2l *a, const char *input)
{
	json_begin(a);
	fputs("{\"Error\":{\"Message\":\"unable to parse arguments: ",
	      stdout);
	json_body(input);
	fputs("\"},\"ModuleName\":", stdout);
	json_str(a->exe);
	putchar('}');
	json_end(a);
}

/*
 * elfutils style (src/addr2line.c of elfutils 0.189+).
 */

/* print_src(): file:line, and :column when known. */
static void eu_src(struct a2l *a, const struct sym_frame *f)
{
	printf("%s:%u", file_name(a, f->file), f->line);
	if (f->column)
		printf(":%u", f->column);
}

/*
 * print_dwarf_function(): returns whether a name was printed with its
 * separator.  An inlined innermost frame prints "NAME inlined at
 * FILE:LINE in " and returns false, so that the caller completes the line
 * with the symbol name.
 */
static bool eu_dwarf_function(struct a2l *a, size_t n)
{
	const struct sym_frame *fr = a->frames;
	const char *name, *file;

	if (n == 0 || (fr[0].flags & SYM_FRAME_SYMTAB) || !raw_name(&fr[0]))
		return false;
	name = show(a, raw_name(&fr[0]), &fr[0], true);
	if (n == 1 || !(fr[0].flags & SYM_FRAME_INLINED)) {
		printf("%s%c", name, a->pretty ? ' ' : '\n');
		return true;
	}
	if (a->pretty) {
		printf("%s ", name);
		return true;
	}
	printf("%s inlined", name);
	/* The call site of fr[0] is the location in fr[1]. */
	file = file_name(a, fr[1].file);
	if (file) {
		if (fr[1].line == 0)
			printf(" from %s", file);
		else if (fr[1].column == 0)
			printf(" at %s:%u", file, fr[1].line);
		else
			printf(" at %s:%u:%u", file, fr[1].line,
			       fr[1].column);
	}
	fputs(" in ", stdout);
	return false;
}

/* print_addrsym(): SYMBOL[+OFF], or a section-relative form. */
static void eu_addrsym(struct a2l *a, uint64_t addr, size_t n)
{
	const struct sym_frame *o = n ? &a->frames[n - 1] : NULL;
	const char *sym = outer_symbol(a->frames, n);
	char sep = a->pretty ? ' ' : '\n';
	uint64_t base;

	if (!sym) {
		/* libdwfl names no section outside ET_REL files: "()"
		 * relative to the load base (0 here) for ET_DYN, "??"
		 * for ET_EXEC. */
		if (a->info.elf_type == 3)
			printf("()+%#" PRIx64 "%c", addr, sep);
		else
			printf("??%c", sep);
		return;
	}
	base = o->symbol ? o->symbol_addr : o->entry;
	fputs(show(a, sym, NULL, true), stdout);
	if (addr != base)
		printf("+%#" PRIx64, addr - base);
	putchar(sep);
}

static void print_eu(struct a2l *a, uint64_t addr, size_t n)
{
	const struct sym_frame *fr = a->frames;
	const char *name;
	size_t i;

	if (a->addresses)
		printf("0x%.*" PRIx64 "%s", a->width, addr,
		       a->pretty ? ": " : "\n");
	if (a->functions && !eu_dwarf_function(a, n) && !a->symbols) {
		name = outer_symbol(fr, n);
		printf("%s%c", name ? show(a, name, NULL, true) : "??",
		       a->pretty ? ' ' : '\n');
	}
	if (a->symbols)
		eu_addrsym(a, addr, n);
	if ((a->functions || a->symbols) && a->pretty)
		fputs("at ", stdout);
	if (n && !(fr[0].flags & SYM_FRAME_SYMTAB) && fr[0].file) {
		eu_src(a, &fr[0]);
		putchar('\n');
	} else {
		puts("??:0");
	}
	if (!a->inlines || n < 2 || (fr[0].flags & SYM_FRAME_SYMTAB))
		return;
	/* One line per inlined frame: its caller's name and call site. */
	for (i = 0; i + 1 < n; i++) {
		if (!(fr[i].flags & SYM_FRAME_INLINED))
			continue;
		if (a->pretty)
			fputs(" (inlined by) ", stdout);
		if (a->functions) {
			name = raw_name(&fr[i + 1]);
			name = name ? show(a, name, &fr[i + 1], true) : "??";
			printf("%s%s", name, a->pretty ? " at " : "\n");
		}
		if (fr[i + 1].file) {
			eu_src(a, &fr[i + 1]);
			putchar('\n');
		} else {
			puts("??:0");
		}
	}
}

/*
 * Input.
 */

/*
 * resolve() - the address an input line names: hex, SYMBOL, SYMBOL+OFF
 * or SYMBOL-OFF (eu-addr2line's forms).
 * @return 0, -EINVAL (not parseable), -SYM_E_NOTFOUND (no such symbol);
 *         the reason is printed
 */
static int resolve(struct a2l *a, const char *s, uint64_t *addr)
{
	char name[512];
	uint64_t value, size;
	int64_t off = 0;
	size_t len;
	int err;

	if (tool_parse_hex(s, addr) == 0)
		return 0;
	len = strcspn(s, "+-");
	if (len == 0 || len >= sizeof(name))
		goto bad;
	if (s[len] && tool_parse_offset(s + len, &off) != 0)
		goto bad;
	memcpy(name, s, len);
	name[len] = '\0';
	err = sym_table_find_symbol(a->tab, name, &value, &size);
	if (err) {
		tool_err("cannot find symbol '%s'", name);
		return err;
	}
	if (size && (uint64_t)off >= size)
		tool_err("offset %#" PRIx64 " lies outside contents of '%s'",
			 (uint64_t)off, name);
	*addr = value + (uint64_t)off;
	return 0;
bad:
	if (a->style != STYLE_JSON)
		tool_err("cannot parse address '%s'", s);
	return -EINVAL;
}

/*
 * handle() - answer one input.  An input that names no address prints
 * nothing in elfutils style (as eu-addr2line) and "??" in the other
 * styles, so that a co-process reading answers stays in step.
 * @return 0, or a negative error when the input was not understood
 */
static int handle(struct a2l *a, const char *input)
{
	uint64_t addr = 0;
	size_t n = 0;
	int err;

	err = resolve(a, input, &addr);
	if (err) {
		switch (a->style) {
		case STYLE_ELFUTILS:
			break;
		case STYLE_JSON:
			print_json_error(a, input);
			break;
		case STYLE_LLVM:
			print_llvm(a, 0, 0);
			break;
		case STYLE_GNU:
			print_gnu(a, 0, 0);
			break;
		}
		return err;
	}
	if (sym_table_lookup(a->tab, addr, a->frames, SYM_MAX_FRAMES, &n))
		n = 0;
	switch (a->style) {
	case STYLE_GNU:
		print_gnu(a, addr, n);
		break;
	case STYLE_LLVM:
		print_llvm(a, addr, n);
		break;
	case STYLE_JSON:
		print_json(a, addr, n);
		break;
	case STYLE_ELFUTILS:
		print_eu(a, addr, n);
		break;
	}
	return 0;
}

static int parse_args(struct a2l *a, int argc, char **argv)
{
	int c, err;

	/* Options may follow addresses, as with GNU getopt in both peers.
	 * -C takes no argument in its short form, so -Cfi is -C -f -i
	 * (elfutils 0.189). */
	while ((c = getopt_long(argc, argv, "ab:e:fhij:psCSxARrV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			a->addresses = true;
			break;
		case 'b':
		case 'R':
		case 'r':
		case 'A':
		case OPT_RELATIVE:
			/* Accepted for compatibility; nothing to change. */
			break;
		case 'e':
			a->exe = optarg;
			break;
		case 'f':
			a->functions = true;
			break;
		case 'i':
			a->inlines = true;
			break;
		case 'C':
			a->demangle = true;
			break;
		case OPT_NO_DEMANGLE:
			a->demangle = false;
			break;
		case 'p':
		case OPT_PRETTY:
			a->pretty = true;
			break;
		case 's':
			a->basenames = true;
			break;
		case 'x':
			a->sections = true;
			a->symbols = true;
			break;
		case 'S':
			a->symbols = true;
			break;
		case 'j':
			tool_err("-j/--section is not supported");
			return -EINVAL;
		case OPT_DEBUGINFO_PATH:
			err = add_dirs(a, optarg);
			if (err) {
				tool_err("--debuginfo-path: %s",
					 err == -ENOMEM ? "out of memory" :
					 "too many directories");
				return err;
			}
			break;
		case OPT_DEBUG_FILE:
			a->debug_file = optarg;
			break;
		case OPT_OUTPUT_STYLE:
			if (parse_style(optarg, &a->style)) {
				tool_err("unknown output style '%s' (GNU, "
					 "LLVM, JSON or elfutils)", optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
		case OPT_VERSION:
			printf("sym addr2line (symd) %s\n", SYM_VERSION);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * open_module() - open -e FILE and build its table, or print one line
 * "sym addr2line: 'FILE': <what> (<libsym's last message>)".
 */
static int open_module(struct a2l *a)
{
	SYM_OPTS(sym_module_opts, opts, .debug_file = a->debug_file,
		 .debuginfo_path = a->ndirs ? a->dirs : NULL);
	char buf[256];
	int err;

	held.hold = true;
	err = sym_module_open(a->exe, &opts, &a->mod);
	if (err)
		goto out;
	sym_module_info(a->mod, &a->info);
	a->width = a->info.elf_class == 32 ? 8 : 16;
	err = sym_module_table(a->mod, &a->tab);
out:
	if (!err) {
		release_held();
		return 0;
	}
	sym_strerror(err, buf, sizeof(buf));
	if (held.n)
		tool_err("'%s': %s (%s)", a->exe, buf, held.msg[held.n - 1]);
	else
		tool_err("'%s': %s", a->exe, buf);
	held.hold = false;
	held.n = 0;
	return err;
}

struct stdin_ctx {
	struct a2l *a;
	int status;
};

static int stdin_line(void *ctx, char *line)
{
	struct stdin_ctx *c = ctx;
	char *s = tool_trim(line);

	if (*s == '\0')
		return 0;
	if (handle(c->a, s))
		c->status = TOOL_EXIT_FAIL;
	return 0;
}

/*
 * The co-process contract: one answer per line, out before the next line
 * is waited for.  tool_read_lines() flushes before each blocking read, so
 * a pipe full of addresses is still answered in large writes.
 */
static int run_stdin(struct a2l *a)
{
	struct stdin_ctx c = { .a = a, .status = TOOL_EXIT_OK };
	int err;

	a->from_stdin = true;
	err = tool_read_lines(STDIN_FILENO, stdin_line, &c);
	if (err) {
		tool_err("reading standard input: %s", strerror(-err));
		c.status = TOOL_EXIT_FAIL;
	}
	return c.status;
}

int cmd_addr2line(int argc, char **argv)
{
	struct a2l *a;
	int status = TOOL_EXIT_OK;
	int err, i;

	a = calloc(1, sizeof(*a));
	if (!a) {
		tool_err("out of memory");
		return TOOL_EXIT_FAIL;
	}
	a->exe = "a.out";
	a->width = 16;
	err = parse_args(a, argc, argv);
	if (err) {
		status = err > 0 ? TOOL_EXIT_OK : TOOL_EXIT_USAGE;
		goto out;
	}
	sym_set_log(log_fn, NULL, 0);
	if (open_module(a)) {
		status = TOOL_EXIT_FAIL;
		goto out;
	}
	if (optind == argc) {
		status = run_stdin(a);
	} else {
		for (i = optind; i < argc; i++)
			if (handle(a, argv[i]))
				status = TOOL_EXIT_FAIL;
		if (a->style == STYLE_JSON && a->nout)
			puts("]");
	}
	if (fflush(stdout) != 0)
		status = TOOL_EXIT_FAIL;
out:
	sym_module_close(a->mod);
	for (i = 0; i < (int)a->ndirs_buf; i++)
		free(a->dirs_buf[i]);
	free(a->dm);
	free(a);
	return status;
}
