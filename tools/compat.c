/*
 * compat.c - `sym` started under the name of another symbolizer: a drop-in
 * for LLVM 14's llvm-symbolizer and for binutils 2.40's addr2line, for
 * the programs that run one by name and talk to it over a pipe
 * (AddressSanitizer's runtime through ASAN_SYMBOLIZER_PATH, LLVM's
 * asan_symbolize, Go's pprof through PPROF_TOOLS).
 *
 * The build makes bin/compat/llvm-symbolizer and bin/compat/addr2line,
 * links to ../sym; `make install` puts them in $(libexecdir)/sym/, out of
 * PATH, so that they replace the real tools only where asked to.
 * tools/sym.c calls compat_main() when argv[0]'s base name is one of
 * them.
 *
 * This file is the peers' command lines only: each is parsed as the peer
 * parses it (LLVM's OptTable rules, GNU getopt_long()) into a struct
 * a2l_opts, and tools/addr2line.c answers, with the peer's input grammar
 * and output (A2L_INPUT_LLVM, A2L_INPUT_GNU).  An option the peer has and
 * sym cannot honour is refused with a message and status 1, never
 * ignored; the list is in docs/conformance.md ("The compat programs").
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libiberty/demangle.h>

#include "addr2line.h"
#include "tools.h"
#include "base.h"

/* libiberty's, declared here: its libiberty.h redeclares basename(). */
void expandargv(int *argcp, char ***argvp);
char **buildargv(const char *input);
void freeargv(char **vector);

/*
 * llvm-symbolizer 14.
 */

/* What an option of llvm-symbolizer 14 does here. */
enum lopt {
	L_ADDRESSES,
	L_BASENAMES,
	L_RELATIVENAMES,
	L_DEMANGLE,
	L_NO_DEMANGLE,
	L_FUNCTIONS,		/* --functions, -f: linkage names, always */
	L_FUNCTIONS_EQ,
	L_HELP,
	L_INLINES,
	L_NO_INLINES,
	L_PRETTY,
	L_VERSION,
	L_NO_EFFECT,		/* the same answers with it and without */
	L_ADJUST_VMA,
	L_DEBUG_DIR,		/* searched for debug files */
	L_OBJ,
	L_OUTPUT_STYLE,
	L_REFUSED,		/* LLVM has it, sym does not */
};

/* How an option takes its value (llvm::opt::Option kinds). */
enum lkind {
	FLAG,			/* the whole argument */
	JOINED,			/* --name=VALUE */
	SEPARATE,		/* --name VALUE */
	JOINED_OR_SEPARATE,	/* -eVALUE or -e VALUE */
};

struct lspec {
	const char *name;	/* with its dashes, as LLVM spells it */
	enum lkind kind;
	enum lopt id;
	const char *why;	/* L_NO_EFFECT and L_REFUSED: the reason */
};

/* An option with a value, as LLVM's Eq<> class in Opts.td: --name=VALUE
 * and --name VALUE. */
#define EQ(name, id, why) \
	{ name "=", JOINED, id, why }, { name, SEPARATE, id, why }

/* LLVM 14's llvm/tools/llvm-symbolizer/Opts.td, spelling by spelling:
 * the double-dash names take no single dash, and the few single-dash
 * spellings are listed as such. */
static const struct lspec llvm_opts[] = {
	{ "--addresses", FLAG, L_ADDRESSES, NULL },
	{ "--print-address", FLAG, L_ADDRESSES, NULL },
	{ "-a", FLAG, L_ADDRESSES, NULL },
	{ "--basenames", FLAG, L_BASENAMES, NULL },
	{ "-s", FLAG, L_BASENAMES, NULL },
	{ "--relativenames", FLAG, L_RELATIVENAMES, NULL },
	{ "--demangle", FLAG, L_DEMANGLE, NULL },
	{ "-C", FLAG, L_DEMANGLE, NULL },
	{ "-demangle=true", FLAG, L_DEMANGLE, NULL },
	{ "--no-demangle", FLAG, L_NO_DEMANGLE, NULL },
	{ "-demangle=false", FLAG, L_NO_DEMANGLE, NULL },
	{ "--functions", FLAG, L_FUNCTIONS, NULL },
	{ "-f", FLAG, L_FUNCTIONS, NULL },
	{ "--functions=", JOINED, L_FUNCTIONS_EQ, NULL },
	{ "-f=", JOINED, L_FUNCTIONS_EQ, NULL },
	{ "--help", FLAG, L_HELP, NULL },
	{ "-h", FLAG, L_HELP, NULL },
	{ "--inlines", FLAG, L_INLINES, NULL },
	{ "--inlining", FLAG, L_INLINES, NULL },
	{ "--inlining=true", FLAG, L_INLINES, NULL },
	{ "-i", FLAG, L_INLINES, NULL },
	{ "--no-inlines", FLAG, L_NO_INLINES, NULL },
	{ "--inlining=false", FLAG, L_NO_INLINES, NULL },
	{ "--pretty-print", FLAG, L_PRETTY, NULL },
	{ "-p", FLAG, L_PRETTY, NULL },
	{ "--version", FLAG, L_VERSION, NULL },
	{ "-v", FLAG, L_VERSION, NULL },
	{ "--relative-address", FLAG, L_NO_EFFECT,
	  "the image base of an ELF file is 0 for LLVM" },
	{ "--untag-addresses", FLAG, L_NO_EFFECT, "AArch64 tags only" },
	{ "--no-untag-addresses", FLAG, L_NO_EFFECT, "AArch64 tags only" },
	{ "--use-symbol-table=true", FLAG, L_NO_EFFECT,
	  "a no-op in LLVM too" },
	EQ("--default-arch", L_NO_EFFECT,
	   "it picks a slice of a Mach-O universal file"),
	EQ("--adjust-vma", L_ADJUST_VMA, NULL),
	EQ("--debug-file-directory", L_DEBUG_DIR, NULL),
	EQ("--fallback-debug-path", L_DEBUG_DIR, NULL),
	EQ("--obj", L_OBJ, NULL),
	EQ("--exe", L_OBJ, NULL),
	{ "-e=", JOINED, L_OBJ, NULL },
	{ "-e", JOINED_OR_SEPARATE, L_OBJ, NULL },
	EQ("--output-style", L_OUTPUT_STYLE, NULL),
	{ "--verbose", FLAG, L_REFUSED,
	  "its per-frame details are not implemented" },
	EQ("--print-source-context-lines", L_REFUSED,
	   "sym does not read source files"),
	EQ("--dwp", L_REFUSED, "no .dwp support (elfutils 0.188)"),
	EQ("--dsym-hint", L_REFUSED, "Mach-O only"),
	{ "--dia", FLAG, L_REFUSED, "Windows PDB only" },
};

#define NLLVM_OPTS (sizeof(llvm_opts) / sizeof(llvm_opts[0]))

/* The most problems reported for one command line (LLVM reports all). */
#define MAX_ERRORS 16

/* The command line of llvm-symbolizer, parsed. */
struct llvm_cmdline {
	struct a2l_opts o;
	bool help, version;
	bool functions_flag;		/* --functions, -f: linkage */
	const char *functions_eq;	/* the last --functions=VALUE */
	const char *adjust_vma;		/* the last --adjust-vma */
	const char *dirs[TOOL_DIRS_MAX + 1];
	size_t ndirs;
	char **inputs;			/* free(); strings borrowed */
	int ninputs;
	int nerrors;
	char errors[MAX_ERRORS][160];
};

static __attribute__((format(printf, 2, 3))) void
llvm_error(struct llvm_cmdline *c, const char *fmt, ...)
{
	va_list ap;

	if (c->nerrors < MAX_ERRORS) {
		va_start(ap, fmt);
		vsnprintf(c->errors[c->nerrors], sizeof(c->errors[0]), fmt, ap);
		va_end(ap);
	}
	c->nerrors++;
}

/* llvm_match() - the longest spelling @arg is, or starts with as a
 * JOINED or JOINED_OR_SEPARATE option does; NULL when none. */
static const struct lspec *llvm_match(const char *arg)
{
	const struct lspec *best = NULL;
	size_t i, len, best_len = 0;

	for (i = 0; i < NLLVM_OPTS; i++) {
		const struct lspec *s = &llvm_opts[i];

		len = strlen(s->name);
		if (strncmp(arg, s->name, len) != 0)
			continue;
		if ((s->kind == FLAG || s->kind == SEPARATE) && arg[len])
			continue;
		if (len > best_len) {
			best = s;
			best_len = len;
		}
	}
	return best;
}

/* llvm_take() - act on option @s with @value (NULL for a flag). */
static void llvm_take(struct llvm_cmdline *c, const struct lspec *s,
		      const char *value)
{
	switch (s->id) {
	case L_ADDRESSES:
		c->o.addresses = true;
		break;
	case L_BASENAMES:
	case L_RELATIVENAMES:
		/* The last of the two wins. */
		c->o.basenames = s->id == L_BASENAMES;
		c->o.relative_names = s->id == L_RELATIVENAMES;
		break;
	case L_DEMANGLE:
	case L_NO_DEMANGLE:
		c->o.demangle = s->id == L_DEMANGLE;
		break;
	case L_FUNCTIONS:
		c->functions_flag = true;
		break;
	case L_FUNCTIONS_EQ:
		c->functions_eq = value;
		break;
	case L_HELP:
		c->help = true;
		break;
	case L_INLINES:
	case L_NO_INLINES:
		c->o.inlines = s->id == L_INLINES;
		break;
	case L_PRETTY:
		c->o.pretty = true;
		break;
	case L_VERSION:
		c->version = true;
		break;
	case L_NO_EFFECT:
		break;
	case L_ADJUST_VMA:
		c->adjust_vma = value;
		break;
	case L_DEBUG_DIR:
		if (c->ndirs == TOOL_DIRS_MAX)
			llvm_error(c, "too many debug file directories");
		else
			c->dirs[c->ndirs++] = value;
		break;
	case L_OBJ:
		c->o.exe = value;
		break;
	case L_OUTPUT_STYLE:
		/* LLVM compares the case too, and takes anything else
		 * for LLVM. */
		c->o.style = strcmp(value, "GNU") == 0 ? STYLE_GNU :
			     strcmp(value, "JSON") == 0 ? STYLE_JSON :
			     STYLE_LLVM;
		break;
	case L_REFUSED:
		llvm_error(c, "%.*s is not supported by sym's llvm-symbolizer "
			   "(%s)", (int)strcspn(s->name, "="), s->name, s->why);
		break;
	}
}

/*
 * llvm_arg() - parse argv[*i] as LLVM 14's OptTable does with grouped
 * short options: an option spelled exactly (or joined to its value), else
 * for a single dash "-xyz" the one-letter flag -x and then "-yz", else an
 * unknown argument.  Anything not starting with '-', and "-", is an
 * input.
 */
static void llvm_arg(struct llvm_cmdline *c, int argc, char **argv, int *i)
{
	const char *arg = argv[*i];
	const struct lspec *s;
	char group[3] = "-?";

	if (arg[0] != '-' || arg[1] == '\0') {
		c->inputs[c->ninputs++] = argv[*i];
		return;
	}
	while (arg) {
		s = llvm_match(arg);
		if (s) {
			size_t len = strlen(s->name);

			if (s->kind == FLAG) {
				llvm_take(c, s, NULL);
			} else if (s->kind == JOINED ||
				   (s->kind == JOINED_OR_SEPARATE &&
				    arg[len])) {
				llvm_take(c, s, arg + len);
			} else if (*i + 1 < argc) {
				llvm_take(c, s, argv[++*i]);
			} else {
				llvm_error(c, "argument to '%s' is missing "
					   "(expected 1 value)", s->name);
			}
			return;
		}
		if (arg[1] == '-' || arg[1] == '\0') {
			llvm_error(c, "unknown argument '%s'", arg);
			return;
		}
		/* A group: its first letter, then the rest as "-rest". */
		group[1] = arg[1];
		s = llvm_match(group);
		if (s && s->kind == FLAG)
			llvm_take(c, s, NULL);
		else
			llvm_error(c, "unknown argument '%s'", group);
		if (arg[2] == '\0')
			return;
		/* The strings are ours to change: copies (llvm_argv()). */
		((char *)arg)[1] = '-';
		arg++;
	}
}

/*
 * llvm_argv() - the arguments LLVM parses: LLVM_SYMBOLIZER_OPTS split as
 * a shell would (its initial options), then argv, then @FILE arguments
 * replaced by the file's arguments (cl::expandResponseFiles() with GNU
 * tokenizing; libiberty's expandargv() is the same rules).  Each string
 * is a copy the parser may change.
 * @return caller owns, freeargv(); NULL when out of memory
 */
static char **llvm_argv(int argc, char **argv, int *out_argc)
{
	const char *env = getenv("LLVM_SYMBOLIZER_OPTS");
	char **envv = NULL, **v;
	int n = 0, i, nv;

	if (env && env[strspn(env, " \t\n")])
		envv = buildargv(env);
	while (envv && envv[n])
		n++;
	v = calloc((size_t)(argc + n + 1), sizeof(*v));
	if (!v) {
		freeargv(envv);
		return NULL;
	}
	nv = 0;
	v[nv++] = strdup(argv[0]);
	for (i = 0; i < n; i++)
		v[nv++] = strdup(envv[i]);
	for (i = 1; i < argc; i++)
		v[nv++] = strdup(argv[i]);
	freeargv(envv);
	for (i = 0; i < nv; i++)
		if (!v[i]) {
			freeargv(v);
			return NULL;
		}
	/* expandargv() replaces v when it expands something, and keeps
	 * the strings it does not expand. */
	{
		char **before = v;

		expandargv(&nv, &v);
		if (v != before)
			freeargv(before);
	}
	*out_argc = nv;
	return v;
}

static void llvm_usage(void)
{
	printf("OVERVIEW: llvm-symbolizer (sym %s): a drop-in for LLVM 14's "
	       "llvm-symbolizer\n\n"
	       "USAGE: llvm-symbolizer [options] addresses...\n\n"
	       "With no addresses, each line of standard input is one: "
	       "[CODE |DATA |FRAME ]\n"
	       "[\"FILE\" |FILE ]ADDR, the file left out with --obj.  Each "
	       "answer is flushed.\n\nOPTIONS:\n"
	       "  --obj=<file>, --exe=<file>, -e <file>  the object file\n"
	       "  --addresses, --print-address, -a       print each address "
	       "first\n"
	       "  --functions[=none|short|linkage], -f   function names "
	       "(default linkage)\n"
	       "  --inlines, --inlining, -i, --no-inlines  inlined frames "
	       "(default on)\n"
	       "  --demangle, -C, --no-demangle, -demangle=false  (default "
	       "on)\n"
	       "  --basenames, -s                        file names without "
	       "directories\n"
	       "  --relativenames                        file names without "
	       "the compilation directory\n"
	       "  --pretty-print, -p                     one line per frame\n"
	       "  --output-style=LLVM|GNU|JSON           whose format\n"
	       "  --adjust-vma=<offset>                  subtract from each "
	       "address\n"
	       "  --debug-file-directory=<dir>, --fallback-debug-path=<dir>\n"
	       "                                         also search <dir> "
	       "for debug files\n"
	       "  --default-arch, --relative-address, --untag-addresses,\n"
	       "  --no-untag-addresses, --use-symbol-table=true  accepted: "
	       "no effect on ELF\n"
	       "  --help, --version\n\n"
	       "Refused: --verbose, --print-source-context-lines, --dwp, "
	       "--dsym-hint, --dia.\n"
	       "Pass @FILE as argument to read options from FILE; "
	       "LLVM_SYMBOLIZER_OPTS is read\nfirst.  See sym(1) and "
	       "docs/conformance.md.\n", SYM_VERSION);
}

static int llvm_symbolizer(int argc, char **argv)
{
	struct llvm_cmdline *c;
	char **v = NULL;
	int n, i, status = TOOL_EXIT_FAIL;

	tool_set_prog("llvm-symbolizer");
	c = calloc(1, sizeof(*c));
	if (c)
		v = llvm_argv(argc, argv, &n);
	if (c && v)
		c->inputs = calloc((size_t)n, sizeof(*c->inputs));
	if (!c || !v || !c->inputs) {
		tool_err("out of memory");
		goto out;
	}
	c->o.style = STYLE_LLVM;
	c->o.input = A2L_INPUT_LLVM;
	c->o.inlines = true;
	c->o.demangle = true;
	for (i = 1; i < n; i++)
		llvm_arg(c, n, v, &i);
	for (i = 0; i < c->nerrors && i < MAX_ERRORS; i++)
		fprintf(stderr, "error: %s\n", c->errors[i]);
	if (c->nerrors)
		goto out;
	if (c->help) {
		llvm_usage();
		status = TOOL_EXIT_OK;
		goto out;
	}
	if (c->version) {
		printf("llvm-symbolizer (sym) %s: a drop-in for LLVM 14's "
		       "llvm-symbolizer\n", SYM_VERSION);
		status = TOOL_EXIT_OK;
		goto out;
	}
	if (c->adjust_vma &&
	    !a2l_llvm_uint(c->adjust_vma, strlen(c->adjust_vma),
			   &c->o.adjust_vma)) {
		fprintf(stderr, "--adjust-vma=: expected a non-negative "
			"integer, but got '%s'\n", c->adjust_vma);
		goto out;
	}
	/* decideHowToPrintFunctions(): the flag wins wherever it is. */
	c->o.names = A2L_NAMES_LINKAGE;
	if (!c->functions_flag && c->functions_eq) {
		if (strcmp(c->functions_eq, "none") == 0)
			c->o.names = A2L_NAMES_NONE;
		else if (strcmp(c->functions_eq, "short") == 0)
			c->o.names = A2L_NAMES_SHORT;
	}
	c->o.debuginfo_path = c->ndirs ? c->dirs : NULL;
	status = a2l_run(&c->o, c->ninputs, c->inputs);
out:
	if (c)
		free(c->inputs);
	free(c);
	freeargv(v);
	return status;
}

/*
 * GNU addr2line 2.40.
 */

static const struct option gnu_longopts[] = {
	{ "addresses", no_argument, NULL, 'a' },
	{ "basenames", no_argument, NULL, 's' },
	{ "demangle", optional_argument, NULL, 'C' },
	{ "exe", required_argument, NULL, 'e' },
	{ "functions", no_argument, NULL, 'f' },
	{ "inlines", no_argument, NULL, 'i' },
	{ "pretty-print", no_argument, NULL, 'p' },
	{ "recurse-limit", no_argument, NULL, 'R' },
	{ "recursion-limit", no_argument, NULL, 'R' },
	{ "no-recurse-limit", no_argument, NULL, 'r' },
	{ "no-recursion-limit", no_argument, NULL, 'r' },
	{ "section", required_argument, NULL, 'j' },
	{ "target", required_argument, NULL, 'b' },
	{ "help", no_argument, NULL, 'H' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void gnu_usage(FILE *f)
{
	fprintf(f, "Usage: %s [option(s)] [addr(s)]\n"
		" Convert addresses into line number/file name pairs.\n"
		" If no addresses are specified on the command line, they "
		"will be read from stdin\n"
		" The options are:\n"
		"  @<file>                Read options from <file>\n"
		"  -a --addresses         Show addresses\n"
		"  -b --target=<bfdname>  Set the binary file format (ELF "
		"targets only)\n"
		"  -e --exe=<executable>  Set the input file name (default is "
		"a.out)\n"
		"  -i --inlines           Unwind inlined functions\n"
		"  -j --section=<name>    Read section-relative offsets "
		"instead of addresses\n"
		"  -p --pretty-print      Make the output easier to read for "
		"humans\n"
		"  -s --basenames         Strip directory names\n"
		"  -f --functions         Show function names\n"
		"  -C --demangle[=style]  Demangle function names (auto, "
		"gnu-v3, none)\n"
		"  -R --recurse-limit     Enable a limit on recursion whilst "
		"demangling.  [Default]\n"
		"  -r --no-recurse-limit  Disable a limit on recursion whilst "
		"demangling\n"
		"  -h --help              Display this information\n"
		"  -v --version           Display the program's version\n\n"
		"sym's drop-in for GNU addr2line 2.40: see sym(1) and "
		"docs/conformance.md.\n", tool_prog());
}

/*
 * gnu_file_ok() - get_file_size() of binutils: the file must be a
 * regular file, and not empty (which is refused without a word).
 */
static bool gnu_file_ok(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			tool_err("'%s': No such file", path);
		else
			tool_err("Warning: could not locate '%s'.  reason: %s",
				 path, strerror(errno));
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		tool_err("Warning: '%s' is a directory", path);
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		tool_err("Warning: '%s' is not an ordinary file", path);
		return false;
	}
	return st.st_size > 0;
}

/*
 * gnu_target() - -b TARGET: bfd reads an ELF file under any target name
 * it knows, falling back from the one named to the file's own, except
 * "binary" (the file as raw bytes: no symbols, no lines), which is
 * refused here; an unknown name is bfd's "invalid bfd target".
 * @return true when the file is read as without -b
 */
static bool gnu_target(const char *path, const char *target)
{
	/* binutils 2.40's `addr2line --help` list for x86-64, and
	 * bfd's "default". */
	static const char *const known[] = {
		"elf64-x86-64", "elf32-i386", "elf32-iamcu", "elf32-x86-64",
		"pei-i386", "pe-x86-64", "pei-x86-64", "elf64-little",
		"elf64-big", "elf32-little", "elf32-big", "pe-bigobj-x86-64",
		"pe-i386", "pdb", "srec", "symbolsrec", "verilog", "tekhex",
		"ihex", "plugin", "default",
	};
	size_t i;

	if (strcmp(target, "binary") == 0) {
		tool_err("-b binary: sym reads ELF files only");
		return false;
	}
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(target, known[i]) == 0)
			return true;
	tool_err("%s: invalid bfd target", path);
	return false;
}

/*
 * gnu_section() - -j NAME: the section's address and size, for
 * A2L_INPUT_GNU's offsets; a section that is not allocated has size 0
 * (no offset is in it, as find_offset_in_section() says).
 * @return 0, -SYM_E_NOTFOUND (printed as binutils prints it), or
 *         -SYM_E_NOTELF for a file that is not ELF (left for a2l_run()
 *         to report as it reports the file)
 */
static int gnu_section(const char *path, const char *name,
		       struct a2l_opts *o)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *e = NULL;
	int fd, err = -SYM_E_NOTELF;

	/* gnu_file_ok() saw a regular file; O_NONBLOCK keeps a FIFO put
	 * there since from blocking the open. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		goto out;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF ||
	    elf_getshdrstrndx(e, &shstrndx) != 0)
		goto out;
	err = -SYM_E_NOTFOUND;
	while ((scn = elf_nextscn(e, scn))) {
		const char *sname;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = elf_strptr(e, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, name) != 0)
			continue;
		o->section = true;
		o->section_vma = sh.sh_addr;
		o->section_size = (sh.sh_flags & SHF_ALLOC) ? sh.sh_size : 0;
		err = 0;
		break;
	}
	if (err)
		tool_err("%s: cannot find section %s", path, name);
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return err;
}

static int gnu_addr2line(int argc, char **argv)
{
	struct a2l_opts o = {
		.style = STYLE_GNU,
		.input = A2L_INPUT_GNU,
		.names = A2L_NAMES_NONE,
	};
	const char *section = NULL, *target = NULL;
	int c, err;

	/* Messages start with the name it was run as, as binutils'
	 * program_name. */
	tool_set_prog(argv[0]);
	expandargv(&argc, &argv);
	optind = 1;
	while ((c = getopt_long(argc, argv, "ab:Ce:rRsfHhij:pVv",
				gnu_longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			o.addresses = true;
			break;
		case 'b':
			target = optarg;
			break;
		case 'C':
			o.demangle = true;
			if (!optarg)
				break;
			/* cplus_demangle_set_style(); libsym demangles as
			 * "auto" does (and gnu-v3 for C++). */
			if (cplus_demangle_name_to_style(optarg) ==
			    unknown_demangling) {
				tool_err("unknown demangling style `%s'",
					 optarg);
				return TOOL_EXIT_FAIL;
			}
			if (strcmp(optarg, "none") == 0) {
				o.demangle = false;
			} else if (strcmp(optarg, "auto") != 0 &&
				   strcmp(optarg, "gnu-v3") != 0) {
				tool_err("--demangle=%s is not supported "
					 "(auto, gnu-v3 and none are)", optarg);
				return TOOL_EXIT_FAIL;
			}
			break;
		case 'r':
		case 'R':
			/* The recursion limit of the demangler: libsym
			 * demangles with it, as -R (the default). */
			break;
		case 'e':
			o.exe = optarg;
			break;
		case 's':
			o.basenames = true;
			break;
		case 'f':
			o.names = A2L_NAMES_LINKAGE;
			break;
		case 'p':
			o.pretty = true;
			break;
		case 'v':
		case 'V':
			printf("addr2line (sym) %s: a drop-in for GNU "
			       "addr2line 2.40\n", SYM_VERSION);
			return TOOL_EXIT_OK;
		case 'h':
		case 'H':
			gnu_usage(stdout);
			return TOOL_EXIT_OK;
		case 'i':
			o.inlines = true;
			break;
		case 'j':
			section = optarg;
			break;
		default:
			gnu_usage(stderr);
			return TOOL_EXIT_FAIL;
		}
	}
	if (!o.exe)
		o.exe = "a.out";
	if (!gnu_file_ok(o.exe))
		return TOOL_EXIT_FAIL;
	if (target && !gnu_target(o.exe, target))
		return TOOL_EXIT_FAIL;
	if (section) {
		err = gnu_section(o.exe, section, &o);
		if (err == -SYM_E_NOTFOUND)
			return TOOL_EXIT_FAIL;
	}
	return a2l_run(&o, argc - optind, argv + optind);
}

int compat_main(const char *name, int argc, char **argv)
{
	if (strcmp(name, "llvm-symbolizer") == 0)
		return llvm_symbolizer(argc, argv);
	if (strcmp(name, "addr2line") == 0)
		return gnu_addr2line(argc, argv);
	return -1;
}
