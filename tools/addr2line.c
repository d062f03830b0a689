/*
 * addr2line.c - `sym addr2line`: addresses to functions, files and lines,
 * with the options and the output of the addr2line programs people know.
 *
 * It takes GNU addr2line's options (-e -a -f -i -C -p -s), eu-addr2line's
 * (--debuginfo-path, --pretty-print, -S, -x, -A, grouped flags such as
 * -Cfi) and prints in one of four styles (--output-style):
 *
 *   GNU       binutils 2.40 addr2line, byte for byte (the default);
 *   elfutils  eu-addr2line 0.188, as Debian 12 ships it;
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
 * The table of a file with a build ID is kept in the store (sym.h,
 * "Stores"): a later run answers from the stored table without reading
 * DWARF; sym_module_open() reads only the ELF headers and notes.  The
 * store is an optimization and never a reason to fail: when it cannot be
 * opened or written, one warning is printed and the answers come from the
 * file.  Answers from the store arrive through a callback inside a read
 * transaction, so every style prints from frames handed to it (emit())
 * and never keeps them.  Hex inputs are answered in batches (one
 * sym_store_lookup() per batch); a symbol name needs the module's table,
 * which is then built.
 *
 * `sym lookup BUILDID ADDR...` (tools/lookup.c) is this code with no file:
 * the store is the only source, or with --server URL a symd server
 * (tools/client.c), whose JSON frames are printed by the same styles.
 *
 * Each style copies its peer's format and quirks on purpose, because
 * scripts parse them; they are listed in docs/sym.1, and "Whose name"
 * below says how each peer names a frame (bfd's names depend on earlier
 * lookups in the same run, so the GNU style answers in input order).
 */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "addr2line.h"
#include "client.h"
#include "grow.h"
#include "pool.h"
#include "gnutext.h"
#include "put.h"
#include "stack.h"
#include "tools.h"
#include "base.h"

/* A command of llvm-symbolizer's input (A2L_INPUT_LLVM). */
enum llvm_cmd {
	CMD_CODE,
	CMD_DATA,
	CMD_FRAME,
};

struct a2l_file;
struct a2l;

/* --lazy: when a file without a stored table is answered by the lazy
 * path (sym_module_table_for()) rather than by building its table. */
enum a2l_lazy {
	LAZY_AUTO,	/* up to LAZY_MAX addresses in the run */
	LAZY_ALWAYS,
	LAZY_NEVER,
};

/*
 * The lazy path's limit: a run answers its first LAZY_MAX addresses
 * without building the table, and builds (and stores) the full table
 * for more.  Measured on libjvm's debug file (openjdk-17-dbg, cold,
 * unsorted random addresses of its text, 2 cores): the lazy table of
 * 10,000 addresses costs about 0.6 times the full build, and the two
 * cross near 30,000 to 50,000; see docs/design.md, "Lazy first answers".
 */
#define LAZY_MAX 10000

/*
 * ... and only when the file holding the DWARF is at least this large:
 * below it the whole build takes a few tens of milliseconds, and storing
 * its table makes every later run warm, where a lazy run stores nothing
 * and leaves the next one cold again.  libc's debug file (4 MB: 0.25 s
 * of CPU to build, 0.06 s lazy), python3.11d (24 MB, DWARF inside) and
 * libjvm's (156 MB) are above it; the test fixtures are below.
 */
#define LAZY_MIN_SIZE ((off_t)1 << 20)

/*
 * A file without DWARF whose Go function table (.gopclntab, or
 * .data.rel.ro.gopclntab in a PIE) is at least this large is lazy too:
 * the lazy table reads only the functions of the addresses asked
 * (symi_gopcln_read()), 0.2 ms for one address of the 1.3 MB test
 * program against 23 ms for the whole table, so a lazy run costs what a
 * warm one does.  A table found only by its magic (no section) is built
 * whole.
 */
#define LAZY_GO_MIN ((uint64_t)64 << 10)

/* The size of @path's Go function table section, 0 when none. */
static uint64_t go_table_size(const char *path)
{
	uint64_t off, size;

	if (sym_file_section(path, ".gopclntab", &off, &size) == 0 ||
	    sym_file_section(path, ".data.rel.ro.gopclntab", &off,
			     &size) == 0)
		return size;
	return 0;
}

/*
 * ... and for at most this many batches: each lazy table pays again for
 * the symbols, the unit index and the sweeps (0.5 s on libjvm after the
 * first, which also decompresses), so a co-process fed one line at a
 * time builds the whole table at its fourth batch.
 */
#define LAZY_BATCHES 3

static void emit(struct a2l *a, uint64_t addr, const struct sym_frame *fr,
		 size_t n);
static const char *llvm_demangle(struct a2l *a, const char *raw);
static int handle_llvm(struct a2l *a, const char *input);
static int handle_gnu(struct a2l *a, const char *input);
static int open_module(struct a2l *a);

struct a2l {
	/* Options. */
	const char *exe;		/* the file being answered */
	const char *obj;		/* llvm --obj: every input's file;
					 * NULL: each input names its own */
	size_t obj_len;			/* strlen(obj) */
	const char *debug_file;
	enum a2l_style style;
	bool addresses, functions, inlines, demangle, pretty, basenames;
	bool relnames;			/* --relativenames */
	bool symbols, sections;
	bool plt;			/* name PLT stubs NAME@plt (default) */
	bool no_cache, stats;
	enum a2l_lazy lazy_when;	/* --lazy */
	/* The programs imitated by name (addr2line.h, tools/compat.c). */
	enum a2l_input input;
	bool llvm;			/* llvm-symbolizer's rules */
	bool short_names;		/* --functions=short */
	uint64_t adjust;		/* printed address - looked-up address
					 * (--adjust-vma, -j) */
	uint64_t ktext;			/* the file is a kernel: its _text,
					 * which its table's addresses are
					 * offsets from (kernel_text()) */
	bool section;			/* -j: inputs are offsets */
	uint64_t section_vma, section_size;
	const char *store_dir;		/* --store, NULL for the default */
	const char *rt_pid, *rt_core;	/* --pid, --core (stack_a2l.c) */
	struct tool_dirs dirs;		/* --debuginfo-path */

	/* What is being symbolized. */
	bool lookup;			/* sym lookup: the store alone */
	const char *server;		/* sym lookup --server URL; NULL */
	unsigned wait_ms;		/* --wait-ms */
	bool partial;			/* --partial */
	struct client *client;		/* client_free(); NULL without
					 * --server */
	const char *build_id;		/* borrowed from argv or mod; NULL */
	const char *module_name;	/* JSON "ModuleName": exe or build ID */

	/* State. */
	struct sym_module *mod;		/* close with sym_module_close() */
	const struct sym_table *tab;	/* borrowed from mod; NULL until built */
	struct sym_store *store;	/* close with sym_store_close(); NULL
					 * when not used */
	bool store_failed;		/* open_store() failed: not again */
	char store_path[4096];		/* its directory, for messages */
	bool from_cache;		/* answers come from the store */
	const char *not_cached;		/* why the table is not stored */
	bool lazy;			/* no table yet: answer batches with
					 * sym_module_table_for() */
	size_t lazy_done;		/* addresses answered so */
	unsigned lazy_builds;		/* tables built so, for --stats */
	struct sym_table_stat lazy_stat; /* the last of them's, for --stats */
	struct sym_module_info info;
	int width;			/* hex digits of an address: 8, 16 */
	bool from_stdin;
	size_t nout;			/* answers printed, for JSON commas */
	struct obuf *ob;		/* where answers go: &stdout_ob, or a
					 * job's (see "Parallel answers") */
	unsigned threads;		/* --threads */
	struct pool *pool;		/* pool_free(); NULL when everything
					 * is answered on this thread */
	struct job *spare;		/* jobs to reuse; job_free() each */
	char *dm;			/* last demangled name; free() */
	struct gnu_seen *seen;		/* free() each .name, .as; then it */
	size_t nseen, seen_cap;		/* see gnu_name() */

	/* Hex addresses waiting to be answered in one batch, in input
	 * order (see flush_batch()). */
	uint64_t *batch;		/* free() */
	size_t nbatch, batch_cap;
	const uint64_t *batch_addrs;	/* the batch being looked up */
	size_t batch_done;		/* answered by store_frames() */
	bool fatal;			/* stop reading input */

	/* --stats: milliseconds per step. */
	double t_open, t_store, t_build, t_put, t_lookup;
	double t_wait;			/* for another process's conversion */
	double t_fetch;			/* asking debuginfod servers */
	bool fetched;			/* the debug file came from them */
	size_t naddrs;
	bool rebuilt;			/* a stored table was unusable */

	/* llvm-symbolizer's input: the files inputs named, the one being
	 * answered (its state is in the fields above while it is), and
	 * what the answer is. */
	struct a2l_file *files;		/* free with files_free() */
	size_t nfiles;
	struct a2l_file *cur;		/* in files[], or NULL */
	uint64_t file_clock;		/* for least-recently-used */
	enum llvm_cmd cmd;		/* of the input being answered */
	bool no_module;			/* its file could not be read */
	bool frame_warned;		/* FRAME's one warning is out */
	struct obuf *json_tmp;		/* --pretty-print JSON (llvm): an
					 * answer before it is indented; its
					 * p and itself free()d; else NULL */
	struct obuf *json_out;		/* a->ob while json_tmp is */
};

enum {
	OPT_DEBUGINFO_PATH = 0x100,
	OPT_OUTPUT_STYLE,
	OPT_PRETTY,
	OPT_RELATIVE,
	OPT_RELATIVENAMES,
	OPT_NO_DEMANGLE,
	OPT_DEBUG_FILE,
	OPT_VERSION,
	OPT_STORE,
	OPT_NO_CACHE,
	OPT_STATS,
	OPT_LAZY,
	OPT_SERVER,
	OPT_WAIT_MS,
	OPT_THREADS,
	OPT_NO_PLT_NAMES,
	OPT_PID,
	OPT_CORE,
	OPT_PARTIAL,
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
	{ "relativenames", no_argument, NULL, OPT_RELATIVENAMES },
	{ "section", required_argument, NULL, 'j' },
	{ "target", required_argument, NULL, 'b' },
	{ "recurse-limit", no_argument, NULL, 'R' },
	{ "no-recurse-limit", no_argument, NULL, 'r' },
	{ "debuginfo-path", required_argument, NULL, OPT_DEBUGINFO_PATH },
	{ "debug-file", required_argument, NULL, OPT_DEBUG_FILE },
	{ "output-style", required_argument, NULL, OPT_OUTPUT_STYLE },
	{ "store", required_argument, NULL, OPT_STORE },
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "lazy", required_argument, NULL, OPT_LAZY },
	{ "server", required_argument, NULL, OPT_SERVER },
	{ "wait-ms", required_argument, NULL, OPT_WAIT_MS },
	{ "partial", no_argument, NULL, OPT_PARTIAL },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "no-plt-names", no_argument, NULL, OPT_NO_PLT_NAMES },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "core", required_argument, NULL, OPT_CORE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static const char usage_styles[] =
	"  -a, --addresses         print each address first\n"
	"  -f, --functions         print function names\n"
	"  -i, --inlines           print the inlined-call chain\n"
	"  -C, --demangle[=STYLE]  demangle names (STYLE is ignored)\n"
	"  -p, --pretty-print      one line per frame\n"
	"  -s, --basenames         strip directories from file names\n"
	"      --relativenames     file names without the compilation\n"
	"                          directory (llvm-symbolizer's)\n"
	"  -S, --symbols           print symbol+offset (elfutils)\n"
	"  -x, --symbols-sections  like -S (section names are not "
	"printed)\n"
	"      --output-style=GNU|LLVM|JSON|elfutils\n"
	"                          whose output to copy (default GNU)\n"
	"      --no-plt-names      name PLT stubs as the peer does (?? or\n"
	"                          llvm's _init), not NAME@plt\n"
	"      --store=DIR         the store (default $SYM_STORE, else\n"
	"                          $XDG_CACHE_HOME/sym or ~/.cache/sym)\n"
	"      --stats             say on stderr where the table came from\n"
	"                          and how long each step took\n"
	"      --threads=N         answer addresses read from stdin on N\n"
	"                          threads (default: one per CPU; 1: none)\n";

static void usage(FILE *f, bool lookup)
{
	if (lookup) {
		fprintf(f,
			"usage: sym lookup [options] BUILDID [ADDR...]\n\n"
			"Translate addresses of the module with build ID "
			"BUILDID using the table\nin the store only.  ADDR is "
			"hex (0x optional); with no ADDR they are\nread from "
			"stdin, one per line.  Exit status 1 when the store "
			"has no\ntable for BUILDID.\n\n%s"
			"      --server=URL        ask symd at URL instead of "
			"the store\n"
			"      --wait-ms=N         how long symd may fetch or "
			"convert (default\n"
			"                          10000)\n"
			"      --partial           take symd's partial answers "
			"(function+offset\n"
			"                          from the symbols) of a build ID "
			"it still converts\n\nSee sym(1).\n",
			usage_styles);
		return;
	}
	fprintf(f,
		"usage: sym addr2line [options] [-e FILE] [ADDR...]\n\n"
		"Translate addresses of FILE (default a.out) into function "
		"names and\nsource locations.  ADDR is hex (0x optional), "
		"SYMBOL, SYMBOL+OFF or\nSYMBOL-OFF; with no ADDR they are read "
		"from stdin, one per line.\nThe table of FILE is kept in the "
		"store, by build ID, for the next run.\n\n"
		"  -e, --exe=FILE          the ELF file\n"
		"      --pid=PID, --core=CORE  ADDRs are runtime addresses of "
		"process PID\n"
		"                          or of a core file: each is looked "
		"up in the\n"
		"                          file mapped there\n%s"
		"      --no-cache          neither read nor write the store\n"
		"      --lazy=WHEN         answer without building the whole "
		"table:\n"
		"                          auto (few addresses), always, never\n"
		"      --debuginfo-path=DIR[:DIR...]  also search DIR for "
		"debug files\n"
		"      --debug-file=FILE   use FILE as the separate debug "
		"file\n\nSee sym(1).\n", usage_styles);
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
 * llvm-symbolizer's names are demangled by LLVM 14's own Itanium
 * demangler, llvm::itaniumDemangle() from llvm-14-dev's
 * libLLVMDemangle.a (linked into sym), so that they are its bytes:
 * libiberty, which libsym uses, spells lambdas, unnamed types, clone
 * suffixes, "operator< <", functions as template arguments and more its
 * own way, and demangles names LLVM 14 cannot (gcc's "sr St..."), which
 * llvm-symbolizer prints mangled.  Only names that start with "_Z" are
 * tried (LLVMSymbolizer::DemangleName()).
 *
 * Demangling is done when an answer is printed, so each thread keeps
 * the names it demangled in a cache (libjvm: 263,000 frames of 100,000
 * addresses have 19,400 distinct mangled names; about 0.5 us each to
 * demangle).  A name is found by its address, the string the table
 * lends, and the copy kept beside it says whether the string there is
 * still that name (a table closed, a store page reused): a name is never
 * hashed, and a hit costs one strcmp().
 */
char *llvm_itanium_demangle(const char *mangled, char *buf, size_t *n,
			    int *status)
	__asm__("_ZN4llvm15itaniumDemangleEPKcPcPmPi");

#define DCACHE_SIZE 32768	/* a power of two */

struct llvm_dcache {
	struct {
		const char *key;	/* the string looked up; borrowed */
		/* "RAW\0OUT\0", one allocation (free()); OUT is "" when
		 * LLVM cannot demangle RAW */
		char *raw;
		char *out;		/* into raw */
	} e[DCACHE_SIZE];
};

static void dcache_free(void *arg)
{
	struct llvm_dcache *c = arg;
	size_t i;

	if (!c)
		return;
	for (i = 0; i < DCACHE_SIZE; i++)
		free(c->e[i].raw);
	free(c);
}

/* Each thread's cache, freed when it exits (or by a2l_free() for this
 * one). */
static pthread_key_t dcache_key;
static bool dcache_key_ok;
static pthread_once_t dcache_once = PTHREAD_ONCE_INIT;

static void dcache_key_init(void)
{
	dcache_key_ok = pthread_key_create(&dcache_key, dcache_free) == 0;
}

static struct llvm_dcache *dcache_get(void)
{
	struct llvm_dcache *c;

	pthread_once(&dcache_once, dcache_key_init);
	if (!dcache_key_ok)
		return NULL;
	c = pthread_getspecific(dcache_key);
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (c && pthread_setspecific(dcache_key, c)) {
			free(c);
			c = NULL;
		}
	}
	return c;
}

/* llvm_demangle() - @raw as llvm-symbolizer 14 prints it demangled.
 * @return borrowed from this thread's cache (valid until its next
 *         call) or a->dm (the same), or @raw */
static const char *llvm_demangle(struct a2l *a, const char *raw)
{
	struct llvm_dcache *c;
	size_t i, len, olen;
	uintptr_t k;
	int status = -1;
	char *out;

	if (strncmp(raw, "_Z", 2) != 0)
		return raw;
	c = dcache_get();
	k = (uintptr_t)raw;
	i = (size_t)((k ^ (k >> 15)) * 0x9e3779b97f4a7c15ull >> 49) &
	    (DCACHE_SIZE - 1);
	if (c && c->e[i].key == raw && strcmp(c->e[i].raw, raw) == 0)
		return *c->e[i].out ? c->e[i].out : raw;
	out = llvm_itanium_demangle(raw, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		out = NULL;
	}
	len = strlen(raw);
	olen = out ? strlen(out) : 0;
	if (c) {
		free(c->e[i].raw);
		c->e[i].key = raw;
		c->e[i].raw = malloc(len + olen + 2);
	}
	if (!c || !c->e[i].raw) {
		/* No room to keep it: this once, uncached. */
		free(a->dm);
		a->dm = out;
		return out ? out : raw;
	}
	memcpy(c->e[i].raw, raw, len + 1);
	c->e[i].out = c->e[i].raw + len + 1;
	memcpy(c->e[i].out, out ? out : "", olen + 1);
	free(out);
	return olen ? c->e[i].out : raw;
}

int a2l_spelling(const char *mangled, const char *demangled, void *ctx)
{
	int status = -1, same;
	char *out;

	(void)ctx;
	if (strncmp(mangled, "_Z", 2) != 0)
		return 0;
	out = llvm_itanium_demangle(mangled, NULL, NULL, &status);
	same = status == 0 && out && strcmp(out, demangled) == 0;
	free(out);
	return same;
}

/*
 * show() - the name to print for @raw: itself, or demangled with -C.
 * The result is valid until the next call (a->dm is reused).  With
 * @z_only, only "_Z" names are demangled, as eu-addr2line does.
 * Inline for its first test (no -C: a frame's name as it is).
 */
static const char *show_demangled(struct a2l *a, const char *raw,
				  const struct sym_frame *f, bool z_only);

/* show() with -C as @demangle says (the GNU printer's constant). */
static inline __attribute__((always_inline)) const char *
show_as(struct a2l *a, bool demangle, const char *raw,
	const struct sym_frame *f, bool z_only)
{
	if (!raw || !demangle)
		return raw;
	return show_demangled(a, raw, f, z_only);
}

static inline const char *show(struct a2l *a, const char *raw,
			       const struct sym_frame *f, bool z_only)
{
	return show_as(a, a->demangle, raw, f, z_only);
}

static const char *show_demangled(struct a2l *a, const char *raw,
				  const struct sym_frame *f, bool z_only)
{
	bool llvm = a->llvm || a->style == STYLE_LLVM ||
		    a->style == STYLE_JSON;

	/* llvm-symbolizer's bytes: its styles demangle as LLVM 14; the
	 * table says which names LLVM spells as libiberty does
	 * (a2l_spelling(): "_Z" names only), so such a name is not read at
	 * all, which spares a cache miss a frame on a big table. */
	if (llvm && f && f->demangled && raw == f->linkage_name &&
	    (f->flags & SYM_FRAME_SPELLING))
		return f->demangled;
	if (z_only && strncmp(raw, "_Z", 2) != 0)
		return raw;
	if (llvm)
		return llvm_demangle(a, raw);
	if (f && f->demangled && raw == f->linkage_name)
		return f->demangled;
	free(a->dm);
	a->dm = sym_demangle(raw);
	return a->dm ? a->dm : raw;
}

/*
 * Whose name.  Every peer names inlined frames from DWARF (the linkage
 * name, else DW_AT_name); they differ on the frame that holds the
 * address's function:
 *  - GNU (bfd) names the innermost frame after its symbol table when
 *    DWARF has no function there, or a function without a linkage name
 *    in a language that mangles names (fr->gnu_symbol);
 *  - llvm-symbolizer 14 names the outermost frame after its own symbol
 *    table whenever that has a symbol there (fr->llvm_symbol);
 *  - eu-addr2line names from DWARF only, and after the symbol table
 *    (fr->symbol) where DWARF has no function.
 * libsym's own name for the outermost frame (linkage_name, see
 * SYM_FRAME_NAME_SYMTAB) is GNU's rule applied there: dwarf_name()
 * undoes it.  A PLT stub name is dropped with --no-plt-names.
 */

/* The DWARF function name, preferring the linkage name, as GNU, eu and
 * LLVM all do without -C; NULL for a frame named from symbols. */
static const char *dwarf_name(const struct sym_frame *f)
{
	if (f->flags & SYM_FRAME_SYMTAB)
		return NULL;
	if (f->flags & SYM_FRAME_NAME_SYMTAB)
		return f->name;
	return f->linkage_name ? f->linkage_name : f->name;
}

/* Whether @sym is one of libsym's made-up PLT names: NAME@plt, or .plt
 * for the entries that jump through no GOT slot. */
static bool plt_made_up(const char *sym)
{
	return sym && (strstr(sym, "@plt") || strcmp(sym, ".plt") == 0);
}

/* A symbol of the outermost frame @o, or NULL when it is a PLT stub
 * name and those are off. */
static const char *plt_ok(const struct a2l *a, const struct sym_frame *o,
			  const char *sym)
{
	return !a->plt && (o->flags & SYM_FRAME_PLT) && plt_made_up(sym) ?
	       NULL : sym;
}

/* The ELF symbol covering the address, as eu-addr2line chooses it. */
static const char *outer_symbol(const struct a2l *a,
				const struct sym_frame *fr, size_t n)
{
	return n ? plt_ok(a, &fr[n - 1], fr[n - 1].symbol) : NULL;
}

/*
 * bfd remembers, per function instance, what it learnt naming one
 * (_bfd_dwarf2_find_nearest_line()): the first time a function without
 * a linkage name is the innermost frame, it is named after the symbol
 * there, and from then on after that symbol if the symbol starts where
 * the function does, else after its DWARF name, whatever the address.
 * So GNU's answers depend on the order of the addresses, and the GNU
 * style answers in input order on one thread, keeping what bfd keeps:
 * the function instance (entry, inlined or not, and DWARF name: an
 * inlined "area" and the "area" it is inlined into may share an entry)
 * and the name it goes by.
 */
struct gnu_seen {
	uint64_t entry;
	bool inlined;
	char *name;		/* the DWARF name; NULL: an empty slot */
	char *as;		/* the symbol it goes by, or NULL */
};

/* The name is left out of the hash: it is compared on a hit (the
 * function instances that share an entry are few), and hashing it too
 * read it twice. */
static uint64_t seen_hash(uint64_t entry, bool inlined)
{
	uint64_t h = (entry * 2 + inlined) * 0x9e3779b97f4a7c15ULL;

	return h ^ h >> 29;
}

/* The slot of (@entry, @inlined, @name): its entry, or the empty one
 * to fill. */
static struct gnu_seen *seen_slot(struct a2l *a, uint64_t entry,
				  bool inlined, const char *name)
{
	size_t j = seen_hash(entry, inlined) & (a->seen_cap - 1);

	while (a->seen[j].name && (a->seen[j].entry != entry ||
				   a->seen[j].inlined != inlined ||
				   strcmp(a->seen[j].name, name) != 0))
		j = (j + 1) & (a->seen_cap - 1);
	return &a->seen[j];
}

static int seen_grow(struct a2l *a)
{
	struct gnu_seen *old = a->seen;
	size_t cap = a->seen_cap ? a->seen_cap * 2 : 256, ocap = a->seen_cap;

	a->seen = calloc(cap, sizeof(*a->seen));
	if (!a->seen) {
		a->seen = old;
		return -ENOMEM;
	}
	a->seen_cap = cap;
	for (size_t i = 0; i < ocap; i++) {
		if (old[i].name)
			*seen_slot(a, old[i].entry, old[i].inlined,
				   old[i].name) = old[i];
	}
	free(old);
	return 0;
}

static void seen_free(struct a2l *a)
{
	for (size_t i = 0; i < a->seen_cap; i++) {
		free(a->seen[i].name);
		free(a->seen[i].as);
	}
	free(a->seen);
	a->seen = NULL;
	a->seen_cap = a->nseen = 0;
}

/* gnu_name() of a function without a linkage name in a language that
 * mangles names: what bfd remembers of it (see struct gnu_seen). */
static const char *gnu_seen_name(struct a2l *a, const struct sym_frame *fr,
				 size_t n, size_t i)
{
	const struct sym_frame *o = &fr[n - 1], *f = &fr[i];
	const char *gs = plt_ok(a, o, o->gnu_symbol);
	struct gnu_seen *st;
	bool inl = f->flags & SYM_FRAME_INLINED;

	if (a->seen_cap && (st = seen_slot(a, f->entry, inl, f->name))->name)
		return st->as ? st->as : f->name;
	if (i > 0)
		return f->name;
	/* The first time as the innermost frame: remember it. */
	if (((a->nseen + 1) * 2 > a->seen_cap && seen_grow(a)) ||
	    !(st = seen_slot(a, f->entry, inl, f->name)) ||
	    !(st->name = strdup(f->name)))
		return gs ? gs : f->name;	/* out of memory: forget */
	a->nseen++;
	st->entry = f->entry;
	st->inlined = inl;
	if (gs && o->gnu_symbol_addr == f->entry)
		st->as = strdup(gs);
	return gs ? gs : f->name;
}

/* GNU's name for frame @i of @fr[@n] (see struct gnu_seen); inline for
 * the frames bfd names without remembering anything. */
static inline const char *gnu_name(struct a2l *a, const struct sym_frame *fr,
				   size_t n, size_t i)
{
	const struct sym_frame *f = &fr[i];

	if (i == 0 && (f->flags & SYM_FRAME_SYMTAB))
		return plt_ok(a, &fr[n - 1], fr[n - 1].gnu_symbol);
	if (!(f->flags & SYM_FRAME_NO_LINKAGE) || !f->name)
		return dwarf_name(f);
	return gnu_seen_name(a, fr, n, i);
}

/* llvm-symbolizer's name for a frame named from DWARF by @dw, which is
 * the one holding the address's function when @o (the outermost frame)
 * is given: that one is named after llvm's symbol, if it has one. */
static inline const char *llvm_name(const struct a2l *a,
				    const struct sym_frame *o,
				    const struct sym_frame *dw)
{
	/* --functions=short: DW_AT_name, and no symbol names a frame. */
	if (a->short_names)
		return dw && !(dw->flags & SYM_FRAME_SYMTAB) ? dw->name : NULL;
	if (o && a->plt && (o->flags & SYM_FRAME_PLT))
		return o->symbol ? o->symbol : o->gnu_symbol;
	if (o && o->llvm_symbol)
		return o->llvm_symbol;
	return dw ? dwarf_name(dw) : NULL;
}

/*
 * The path to print for @file, whose first @rel bytes are the compilation
 * directory (struct sym_frame's file_rel): whole, its base name with -s,
 * or without the compilation directory with --relativenames, as
 * llvm-symbolizer's --basenames and --relativenames (the first wins).
 */
static inline __attribute__((always_inline)) const char *
path_shown(bool basenames, bool relnames, const char *file, uint16_t rel)
{
	const char *slash;

	if (!file)
		return file;
	if (basenames) {
		slash = strrchr(file, '/');
		return slash ? slash + 1 : file;
	}
	return relnames ? file + rel : file;
}

static const char *file_name(struct a2l *a, const char *file, uint16_t rel)
{
	return path_shown(a->basenames, a->relnames, file, rel);
}

/*
 * Output.  A warm run prints tens of MB (libjvm: 40 MB for 100,000
 * addresses), so every style writes into a struct obuf: appends to
 * memory, no stdio call per string.  The main thread's obuf is capped at
 * OB_SINK_SIZE and goes to stdout whenever it is full (ob_flush()); a
 * job's (see "Parallel answers") grows, up to OB_JOB_MAX, and is written
 * out by the main thread in input order.
 */
struct obuf {
	struct symi_buf b;	/* the bytes; ob_release() */
	bool slab;		/* b.p is from symi_malloc_slab(b.alloc) */
	FILE *sink;		/* where full buffers go; NULL: a job's */
	bool err;		/* out of memory, over the cap, or the sink
				 * failed: sticky */
};

/* stdout's buffer: big enough that writes are few. */
#define OB_SINK_SIZE (1 << 18)
/* A job's buffer: 4,096 answers are about 1.6 MB on libjvm.  A job that
 * needs more is answered again on the main thread (job_done()), where
 * the answers stream to stdout. */
#define OB_JOB_MAX ((size_t)64 << 20)

/* stdout's obuf when it is not a job's. */
static struct obuf stdout_ob;

/* ob_flush() - write what @o holds to its sink.  0 or -EIO. */
static int ob_flush(struct obuf *o)
{
	if (o->sink && o->b.len) {
		if (fwrite(o->b.p, 1, o->b.len, o->sink) != o->b.len)
			o->err = true;
		symi_buf_reset(&o->b);
	}
	return o->err ? -EIO : 0;
}

/* Append @n bytes.  When a job's buffer cannot take them, o->err is set
 * (the bytes are dropped); stdout's is flushed first, and what it still
 * cannot take (more than its whole size) is written directly.  The bytes
 * that fit are copied inline: a frame is about six appends. */
static void ob_write_slow(struct obuf *o, const char *s, size_t n);

static inline __attribute__((always_inline)) void
ob_write(struct obuf *o, const char *s, size_t n)
{
	struct symi_buf *b = &o->b;

	if (n < b->alloc - b->len) {
		put(b->p + b->len, s, n);
		b->len += n;
		b->p[b->len] = '\0';
		return;
	}
	ob_write_slow(o, s, n);
}

/* A sink's buffer past this grows to its whole size at once. */
#define OB_SINK_STEP 4096

/* The sink's buffer at its whole size, in the slab of huge pages the
 * table's records and strings were decoded into (libsym/base.h,
 * symi_malloc_slab()): its 256 KiB were 64 page faults of 4 KiB, about
 * 85 us of a warm lookup of 100,000 addresses, where they now mostly
 * fall in a huge page already made.  0 or -ENOMEM. */
static int ob_sink_whole(struct obuf *o)
{
	struct symi_buf *b = &o->b;
	size_t alloc = b->max + 1;
	char *p = symi_malloc_slab(alloc);

	if (!p)
		return -ENOMEM;
	memcpy(p, b->p, b->len + 1);	/* past OB_SINK_STEP: p is set */
	free(b->p);
	b->p = p;
	b->alloc = alloc;
	o->slab = true;
	return 0;
}

/* ob_grow() - room for @need more bytes in @o's buffer, as
 * symi_buf_grow().  A sink's buffer, once past OB_SINK_STEP, takes all
 * of its cap: grown by doubling up to it, it was copied, and faulted in,
 * twice over (a warm lookup of 100,000 addresses: 60 page faults of
 * 4 KiB), and an answer or two still take a page. */
static int ob_grow(struct obuf *o, size_t need)
{
	struct symi_buf *b = &o->b;

	if (o->sink && !o->slab && b->alloc >= OB_SINK_STEP &&
	    need <= b->max - b->len && ob_sink_whole(o) == 0)
		return 0;
	return symi_buf_grow(b, need);
}

/* Free @o's bytes. */
static void ob_release(struct obuf *o)
{
	if (o->slab)
		symi_free_slab(o->b.p, o->b.alloc);
	else
		free(o->b.p);
	o->b.p = NULL;
	o->b.len = o->b.alloc = 0;
	o->slab = false;
}

static void ob_write_slow(struct obuf *o, const char *s, size_t n)
{
	if (ob_grow(o, n) == 0) {
		(void)symi_buf_add(&o->b, s, n);	/* room made: 0 */
		return;
	}
	if (!o->sink) {
		o->err = true;
		return;
	}
	ob_flush(o);
	if (symi_buf_add(&o->b, s, n) == 0)
		return;
	if (!o->err && fwrite(s, 1, n, o->sink) != n)
		o->err = true;
}

/* Inline, so that a literal's length is known when compiling. */
static inline __attribute__((always_inline)) void ob_s(struct obuf *o,
							 const char *s)
{
	ob_write(o, s, strlen(s));
}

static inline __attribute__((always_inline)) void ob_c(struct obuf *o,
							 char c)
{
	if (symi_buf_addc(&o->b, c))
		ob_write_slow(o, &c, 1);
}

/*
 * Room for @need bytes (and the NUL) at the end of @o's buffer, for a
 * writer that knows the most it will write (a GNU frame: its name, its
 * file and a few numbers): one test instead of one an append.  The
 * bytes go in at the pointer returned, and ob_done() ends them.  Where
 * the buffer cannot make the room (the sink's is smaller than @need),
 * *@tmp is set to a malloc()ed block of @need bytes that ob_done()
 * appends piecewise (ob_write_slow(): straight to the sink) and frees.
 * NULL when neither can be had: o->err is set, the bytes are dropped.
 */
static char *ob_room_slow(struct obuf *o, size_t need, char **tmp);

static inline __attribute__((always_inline)) char *
ob_room(struct obuf *o, size_t need, char **tmp)
{
	struct symi_buf *b = &o->b;

	*tmp = NULL;
	if (need < b->alloc - b->len)
		return b->p + b->len;
	return ob_room_slow(o, need, tmp);
}

static char *ob_room_slow(struct obuf *o, size_t need, char **tmp)
{
	if (ob_grow(o, need) == 0)
		return o->b.p + o->b.len;
	if (o->sink) {
		ob_flush(o);
		if (symi_buf_grow(&o->b, need) == 0)
			return o->b.p + o->b.len;
		*tmp = malloc(need);
		if (*tmp)
			return *tmp;
	}
	/* A job's over its cap (answered again, see job_done()), or out
	 * of memory. */
	o->err = true;
	return NULL;
}

/* ob_done() - the bytes written from ob_room()'s pointer up to @end are
 * the buffer's. */
static inline __attribute__((always_inline)) void
ob_done(struct obuf *o, char *end, char *tmp)
{
	if (tmp) {
		ob_write(o, tmp, (size_t)(end - tmp));
		free(tmp);
		return;
	}
	o->b.len = (size_t)(end - o->b.p);
	*end = '\0';
}

/* @v in decimal. */
static void ob_u32(struct obuf *o, uint32_t v)
{
	struct symi_buf *b = &o->b;
	char buf[10], *w;

	if (b->alloc - b->len > sizeof(buf)) {
		w = put_u32(b->p + b->len, v);
		b->len = (size_t)(w - b->p);
		*w = '\0';
		return;
	}
	ob_write(o, buf, (size_t)(put_u32(buf, v) - buf));
}

/* "000102...feff" */
static const char hex_pairs[513] = {
#define HEX_ROW(h)                                                    \
	h, '0', h, '1', h, '2', h, '3', h, '4', h, '5', h, '6', h, '7', \
	h, '8', h, '9', h, 'a', h, 'b', h, 'c', h, 'd', h, 'e', h, 'f'
	HEX_ROW('0'), HEX_ROW('1'), HEX_ROW('2'), HEX_ROW('3'),
	HEX_ROW('4'), HEX_ROW('5'), HEX_ROW('6'), HEX_ROW('7'),
	HEX_ROW('8'), HEX_ROW('9'), HEX_ROW('a'), HEX_ROW('b'),
	HEX_ROW('c'), HEX_ROW('d'), HEX_ROW('e'), HEX_ROW('f'),
#undef HEX_ROW
};

/* 0x, then at least @width (at most 64) lowercase hex digits. */
static void ob_hex(struct obuf *o, uint64_t v, int width)
{
	struct symi_buf *b = &o->b;
	char buf[2 + 64], *w = buf, *p;
	/* The digits of @v: 1 for 0 to 15, ... 16 */
	size_t n = (size_t)(67 - __builtin_clzll(v | 1)) / 4;

	if (width > 0 && (size_t)width > n)
		n = width > 64 ? 64 : (size_t)width;
	if (b->alloc - b->len > n + 2)
		w = b->p + b->len;
	w[0] = '0';
	w[1] = 'x';
	/* Two digits a step. */
	for (p = w + 2 + n; p > w + 3; v >>= 8) {
		p -= 2;
		memcpy(p, hex_pairs + 2 * (v & 0xff), 2);
	}
	if (p > w + 2)
		*--p = hex_pairs[2 * (v & 15) + 1];
	if (w == buf) {
		ob_write(o, buf, n + 2);
		return;
	}
	b->len += n + 2;
	b->p[b->len] = '\0';
}

/* printf() into @o, for the styles that are not hot. */
static __attribute__((format(printf, 2, 3))) void
ob_printf(struct obuf *o, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = symi_buf_vaddf(&o->b, fmt, ap);
	va_end(ap);
	if (err && o->sink && err != -EINVAL) {
		ob_flush(o);
		va_start(ap, fmt);
		err = symi_buf_vaddf(&o->b, fmt, ap);
		va_end(ap);
	}
	if (err == -E2BIG && o->sink) {
		/* Longer than the sink's whole buffer: on its own. */
		struct symi_buf t = SYMI_BUF_INIT(OB_JOB_MAX);

		va_start(ap, fmt);
		err = symi_buf_vaddf(&t, fmt, ap);
		va_end(ap);
		if (!err)
			ob_write(o, t.p, t.len);
		symi_buf_release(&t);
	}
	/* A job's out of room (answered again, see job_done()), or out of
	 * memory. */
	if (err)
		o->err = true;
}

/*
 * GNU style (binutils 2.40 addr2line.c, translate_addresses()).
 */

/* The options the GNU style tests for every frame, a's; print_gnu() is
 * given them as the constant gnu_fi for sym lookup's -f -i, so that the
 * tests fold away when it is compiled (python3.11d's 100,000 warm
 * addresses: 2 M instructions fewer). */
struct gnu_opts {
	bool addresses, functions, inlines, pretty, demangle, basenames,
	     relnames;
};
static const struct gnu_opts gnu_fi = { .functions = true, .inlines = true };

static struct gnu_opts gnu_opts_of(const struct a2l *a)
{
	return (struct gnu_opts){
		.addresses = a->addresses, .functions = a->functions,
		.inlines = a->inlines, .pretty = a->pretty,
		.demangle = a->demangle, .basenames = a->basenames,
		.relnames = a->relnames,
	};
}

static bool gnu_is_fi(const struct a2l *a)
{
	struct gnu_opts o = gnu_opts_of(a);

	return !memcmp(&o, &gnu_fi, sizeof(o));
}

/* gnu_frame() when the buffer has no room for @t yet, or a string is
 * longer than the room it had: room made for the strings' lengths. */
static __attribute__((noinline)) void gnu_put_slow(struct a2l *a,
						   struct gnu_opts o,
						   struct gnu_text t)
{
	size_t need = (t.name ? strlen(t.name) : 0) + strlen(t.file) +
		      GNU_FAST_ROOM;
	char *tmp, *w = ob_room(a->ob, need, &tmp);

	if (w)
		ob_done(a->ob, gnu_put(w, w + need, o.pretty, &t), tmp);
}

/* Frame @i of @fr[@n]; @more: an inliner follows. */
static inline __attribute__((always_inline)) void
gnu_frame(struct a2l *a, const struct gnu_opts *o,
	  const struct sym_frame *fr, size_t n, size_t i, bool more)
{
	struct symi_buf *b = &a->ob->b;
	struct gnu_text t = {
		.line = fr[i].line,
		.disc = fr[0].discriminator,
		.more = more,
	};
	char *w;

	if (o->functions) {
		/* Test the name printed, not the raw one: with -C a C++
		 * frame prints its demangled name, and the linkage name is
		 * never read (a cache miss per frame on big tables). */
		t.name = gnu_name(a, fr, n, i);
		t.name = show_as(a, o->demangle, t.name,
				 t.name == fr[n - 1].linkage_name ?
				 &fr[n - 1] : &fr[i], false);
		if (!t.name || !*t.name)
			t.name = "??";
	}
	t.file = path_shown(o->basenames, o->relnames, fr[i].file,
			    fr[i].file_rel);
	if (!t.file)
		t.file = "??";
	if (b->alloc - b->len > GNU_FAST_ROOM) {
		w = gnu_put(b->p + b->len, b->p + b->alloc, o->pretty, &t);
		if (w) {
			b->len = (size_t)(w - b->p);
			*w = '\0';
			return;
		}
	}
	gnu_put_slow(a, *o, t);
}

/* The GNU style's answer for @addr, with @a's options @o (gnu_opts_of(),
 * or a constant that equals it). */
static inline __attribute__((always_inline)) void
print_gnu(struct a2l *a, const struct gnu_opts *o, uint64_t addr,
	  const struct sym_frame *fr, size_t n)
{
	size_t i, last;

	if (o->addresses) {
		ob_hex(a->ob, addr, a->width);
		ob_s(a->ob, o->pretty ? ": " : "\n");
	}
	/* bfd found neither a line nor a name: a frame only another
	 * peer's symbols name. */
	if (n == 1 && !fr[0].line && !gnu_name(a, fr, n, 0) &&
	    (!fr[0].file || (fr[0].flags & SYM_FRAME_FILE_SYMTAB)))
		n = 0;
	if (n == 0) {
		if (o->functions)
			ob_s(a->ob, o->pretty ? "?? " : "??\n");
		ob_s(a->ob, "??:0\n");
		return;
	}
	last = o->inlines ? n - 1 : 0;
	for (i = 0; i <= last; i++)
		gnu_frame(a, o, fr, n, i, i < last);
}

/* print_gnu() with @a's options, for the answers not in a batch. */
static void print_gnu_any(struct a2l *a, uint64_t addr,
			  const struct sym_frame *fr, size_t n)
{
	struct gnu_opts o = gnu_opts_of(a);

	print_gnu(a, &o, addr, fr, n);
}

/*
 * LLVM and JSON styles: the name of a frame, and the "StartAddress"
 * printed beside it.  @f is the frame whose DWARF function names it, @o
 * the frame whose covering symbol may name it instead, or NULL.
 *
 * `sym addr2line` prints the DWARF name, linkage name first, and the
 * symbol's name only where the table has no DWARF function.
 *
 * llvm-symbolizer 14 (a->llvm) asks DWARF for the kind of name chosen
 * (--functions=short: DW_AT_name; linkage: DW_AT_linkage_name, else
 * DW_AT_name), and its StartAddress is the DIE's DW_AT_low_pc.  With
 * linkage names, the symbol covering the address then names the
 * outermost frame (SymbolizableObjectFile::symbolizeInlinedCode() and
 * symbolizeCode()), which is why a .cold part prints as "foo.cold"; its
 * address becomes the StartAddress.  LLVMSymbolizer::DemangleName()
 * demangles only names that start with "_Z".
 * @param[out] start  0 when there is none
 * @return borrowed (a->dm may hold it: valid until the next call), NULL
 */
/* Whether llvm-symbolizer names the outermost frame after its symbol
 * table: with linkage names only (symbolizeCode()); `sym addr2line`
 * always does. */
static bool llvm_symtab(const struct a2l *a)
{
	return !a->llvm || (a->functions && !a->short_names);
}

/* The file llvm-symbolizer prints for @loc, as printed (file_name()):
 * the line table's, else the STT_FILE of the symbol it names @o (the
 * outermost frame, or NULL) after. */
static inline const char *llvm_file(struct a2l *a,
				    const struct sym_frame *loc,
				    const struct sym_frame *o)
{
	if (loc && loc->file && !(loc->flags & SYM_FRAME_FILE_SYMTAB))
		return file_name(a, loc->file, loc->file_rel);
	return o && o->llvm_symbol && llvm_symtab(a) ?
	       file_name(a, o->llvm_symbol_file, 0) : NULL;
}

/* The "StartAddress" beside llvm_name(@o, @dw): the symbol's address
 * where llvm names the frame after it, else the DIE's DW_AT_low_pc;
 * 0 when there is none (a DIE with DW_AT_ranges only,
 * SYM_FRAME_NO_LOW_PC). */
static uint64_t llvm_start(const struct a2l *a, const struct sym_frame *o,
			   const struct sym_frame *dw)
{
	if (o && a->plt && (o->flags & SYM_FRAME_PLT))
		return o->symbol_addr;
	if (o && o->llvm_symbol && llvm_symtab(a))
		return o->llvm_symbol_addr;
	if (dw && !(dw->flags & (SYM_FRAME_SYMTAB | SYM_FRAME_NO_LOW_PC)))
		return dw->entry;
	return 0;
}

/* llvm_name() printed: demangled as llvm-symbolizer does (_Z names
 * only). */
static inline const char *llvm_shown(struct a2l *a,
				     const struct sym_frame *o,
				     const struct sym_frame *dw)
{
	const char *name = llvm_name(a, o, dw);

	if (!name)
		return NULL;
	return show(a, name, o && name == o->linkage_name ? o : dw, true);
}

/* The most bytes print_llvm_frame() writes besides the name and the
 * file. */
#define LLVM_FRAME_FIXED 80

/*
 * LLVM style (llvm-symbolizer's default output), and with a->llvm also
 * llvm-symbolizer's own GNU style (its GNUPrinter: no column, a
 * discriminator per frame, no blank line after each answer).  One
 * frame: named by llvm_name(@o, @dw), at @loc (NULL: none).
 */
static void print_llvm_frame(struct a2l *a, const struct sym_frame *o,
			     const struct sym_frame *dw,
			     const struct sym_frame *loc, bool first)
{
	const char *name = NULL, *file = NULL;
	size_t nlen = 0, flen;
	char *w, *tmp;

	if (loc)
		file = llvm_file(a, loc, o);
	if (!file)
		file = "??";
	if (a->functions) {
		name = llvm_shown(a, o, dw);
		if (!name || !*name)
			name = "??";
		nlen = strlen(name);
	}
	flen = strlen(file);
	/* In one piece, as gnu_frame(). */
	w = ob_room(a->ob, nlen + flen + LLVM_FRAME_FIXED, &tmp);
	if (!w)
		return;
	/* llvm: the prefix belongs to the name (with no name printed,
	 * none); sym addr2line always printed it. */
	if (!first && a->pretty && (a->functions || !a->llvm))
		w = PUT_LIT(w, " (inlined by) ");
	if (name) {
		w = put(w, name, nlen);
		w = a->pretty ? PUT_LIT(w, " at ") : PUT_LIT(w, "\n");
	}
	w = put(w, file, flen);
	*w++ = ':';
	w = put_u32(w, loc ? loc->line : 0);
	if (a->style == STYLE_GNU) {
		if (loc && loc->discriminator) {
			w = PUT_LIT(w, " (discriminator ");
			w = put_u32(w, loc->discriminator);
			*w++ = ')';
		}
	} else {
		*w++ = ':';
		w = put_u32(w, loc ? loc->column : 0);
	}
	*w++ = '\n';
	ob_done(a->ob, w, tmp);
}

/*
 * Without -i, llvm-symbolizer prints one frame: the innermost location,
 * named after the symbol of the outermost function, else after the
 * innermost function (DWARFContext's getLineInfoForAddress()).
 */
static void print_llvm(struct a2l *a, uint64_t addr,
		       const struct sym_frame *fr, size_t n)
{
	size_t i;

	if (a->addresses) {
		ob_hex(a->ob, addr, 0);
		ob_s(a->ob, a->pretty ? ": " : "\n");
	}
	if (n == 0) {
		print_llvm_frame(a, NULL, NULL, NULL, true);
	} else if (a->inlines) {
		for (i = 0; i < n; i++)
			print_llvm_frame(a, i == n - 1 ? &fr[i] : NULL, &fr[i],
					 &fr[i], i == 0);
	} else if (a->llvm && a->style == STYLE_GNU) {
		/* The innermost frame of the chain, as llvm-addr2line
		 * prints it: the symbol names it only when it is the
		 * outermost too. */
		print_llvm_frame(a, n == 1 ? &fr[0] : NULL, &fr[0], &fr[0],
				 true);
	} else {
		print_llvm_frame(a, &fr[n - 1], &fr[0], &fr[0], true);
	}
	if (a->style != STYLE_GNU)
		ob_c(a->ob, '\n');
}

/*
 * JSON style (llvm-symbolizer --output-style=JSON, LLVM 14): the keys in
 * its order (sorted, as llvm::json::Object prints them), "" for unknown
 * strings, control characters escaped as llvm::json does.  Addresses
 * from argv make one array, each stdin line one object.  With
 * --pretty-print (llvm's rules only) the object is written compact into
 * a->json_tmp, then indented by json_indent().
 */

/* Whether any of the 8 bytes of @x needs an escape: a control character
 * (below 0x20), '"' or '\\'.  Exact: the tests for a zero byte and for
 * a byte below n, each true when one byte is. */
static inline bool json_word_escapes(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t high = 0x8080808080808080ULL;
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');

	return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) |
		((b - ones) & ~b)) & high;
}

/* How many of the @n bytes at @s need no escape before one that does,
 * one at a time. */
static size_t json_plain_bytes(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == '"' || c == '\\')
			break;
	}
	return i;
}

/* json_plain_bytes(), eight at a time. */
static size_t json_plain(const char *s, size_t n)
{
	size_t i = 0;
	uint64_t x;

	for (; i + 8 <= n; i += 8) {
		memcpy(&x, s + i, 8);
		if (json_word_escapes(x))
			return i + json_plain_bytes(s + i, 8);
	}
	/* The last 8 bytes hold the rest. */
	if (i < n && n >= 8) {
		memcpy(&x, s + n - 8, 8);
		if (!json_word_escapes(x))
			return n;
	}
	return i + json_plain_bytes(s + i, n - i);
}

static void json_body(struct obuf *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = s ? strlen(s) : 0, k;
	char u[6] = { '\\', 'u', '0', '0' };

	/* The bytes between escapes in one piece each. */
	while (n) {
		k = json_plain(s, n);
		ob_write(f, s, k);
		if (k == n)
			break;
		switch (s[k]) {
		case '"':
			ob_s(f, "\\\"");
			break;
		case '\\':
			ob_s(f, "\\\\");
			break;
		case '\n':
			ob_s(f, "\\n");
			break;
		case '\r':
			ob_s(f, "\\r");
			break;
		case '\t':
			ob_s(f, "\\t");
			break;
		default:
			/* "\u%04x" of a control character */
			u[4] = hex[(unsigned char)s[k] >> 4];
			u[5] = hex[s[k] & 15];
			ob_write(f, u, sizeof(u));
		}
		s += k + 1;
		n -= k + 1;
	}
}

static void json_str(struct obuf *f, const char *s)
{
	ob_c(f, '"');
	json_body(f, s);
	ob_c(f, '"');
}

/* A new line and @depth levels of llvm::json's indent (2 spaces). */
static void json_newline(struct obuf *o, int depth)
{
	ob_c(o, '\n');
	while (depth-- > 0)
		ob_s(o, "  ");
}

/*
 * json_indent() - write the compact object in a->json_tmp to a->ob as
 * llvm's formatv("{0:2}") prints a json::Value: a member or element per
 * line, "key": value, and empty containers as {} and [].  An element of
 * the argv list is indented one level more, after "[" or ",".
 */
static void json_indent(struct a2l *a)
{
	const struct obuf *t = a->json_tmp;
	bool in_str = false, esc = false;
	int depth = 0;
	size_t i;
	char c;

	if (!a->from_stdin) {
		ob_s(a->ob, a->nout == 1 ? "[" : ",");
		json_newline(a->ob, ++depth);
	}
	for (i = 0; i < t->b.len; i++) {
		c = t->b.p[i];
		if (in_str) {
			ob_c(a->ob, c);
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
			continue;
		}
		switch (c) {
		case '"':
			in_str = true;
			ob_c(a->ob, c);
			break;
		case '{':
		case '[':
			ob_c(a->ob, c);
			if (i + 1 < t->b.len &&
			    t->b.p[i + 1] == (c == '{' ? '}' : ']'))
				ob_c(a->ob, t->b.p[++i]);
			else
				json_newline(a->ob, ++depth);
			break;
		case '}':
		case ']':
			json_newline(a->ob, --depth);
			ob_c(a->ob, c);
			break;
		case ',':
			ob_c(a->ob, c);
			json_newline(a->ob, depth);
			break;
		case ':':
			ob_s(a->ob, ": ");
			break;
		default:
			ob_c(a->ob, c);
		}
	}
	if (t->err)
		a->ob->err = true;
	if (a->from_stdin)
		ob_c(a->ob, '\n');
}

static void json_begin(struct a2l *a)
{
	if (a->json_tmp) {
		/* --pretty-print: compact into json_tmp, indented at the
		 * end (json_end()). */
		symi_buf_reset(&a->json_tmp->b);
		a->json_out = a->ob;
		a->ob = a->json_tmp;
		return;
	}
	if (a->from_stdin)
		return;
	ob_s(a->ob, a->nout ? "," : "[");
}

static void json_end(struct a2l *a)
{
	a->nout++;
	if (a->json_tmp) {
		a->ob = a->json_out;
		json_indent(a);
		return;
	}
	if (a->from_stdin)
		ob_c(a->ob, '\n');
}

/* The end of the argv list. */
static void json_list_end(struct a2l *a)
{
	if (a->nout)
		ob_s(a->ob, a->json_tmp ? "\n]\n" : "]\n");
}

/* One frame, as print_llvm_frame(). */
static void print_json_frame(struct a2l *a, const struct sym_frame *o,
			     const struct sym_frame *dw,
			     const struct sym_frame *loc)
{
	uint64_t start = llvm_start(a, o, dw);

	/* Numbers by ob_u32() and ob_hex(), not ob_printf(): vsnprintf()
	 * was half of a JSON answer's instructions. */
	ob_s(a->ob, "{\"Column\":");
	ob_u32(a->ob, loc ? loc->column : 0);
	ob_s(a->ob, ",\"Discriminator\":");
	ob_u32(a->ob, loc ? loc->discriminator : 0);
	ob_s(a->ob, ",\"FileName\":");
	json_str(a->ob, loc ? llvm_file(a, loc, o) : NULL);
	ob_s(a->ob, ",\"FunctionName\":");
	json_str(a->ob, a->functions ? llvm_shown(a, o, dw) : NULL);
	ob_s(a->ob, ",\"Line\":");
	ob_u32(a->ob, loc ? loc->line : 0);
	ob_s(a->ob, ",\"StartAddress\":");
	if (start) {
		ob_c(a->ob, '"');
		ob_hex(a->ob, start, 0);
		ob_c(a->ob, '"');
	} else {
		ob_s(a->ob, "\"\"");
	}
	/* llvm 14 reads no DW_FORM_implicit_const DW_AT_decl_file
	 * (SYM_FRAME_DECL_CONST). */
	ob_s(a->ob, ",\"StartFileName\":");
	json_str(a->ob, loc && !(loc->flags & SYM_FRAME_DECL_CONST) ?
			file_name(a, loc->decl_file, loc->decl_file_rel) :
			NULL);
	ob_s(a->ob, ",\"StartLine\":");
	ob_u32(a->ob, loc ? loc->decl_line : 0);
	ob_c(a->ob, '}');
}

/* {"Address":"0x..", and, after the rest, "ModuleName":..} */
static void json_head(struct a2l *a, uint64_t addr)
{
	json_begin(a);
	ob_s(a->ob, "{\"Address\":\"");
	ob_hex(a->ob, addr, 0);
	ob_s(a->ob, "\",");
}

static void json_module(struct a2l *a)
{
	ob_s(a->ob, "\"ModuleName\":");
	json_str(a->ob, a->module_name);
}

static __attribute__((noinline)) void
print_json(struct a2l *a, uint64_t addr,
	   const struct sym_frame *fr, size_t n)
{
	size_t i;

	json_head(a, addr);
	json_module(a);
	ob_s(a->ob, ",\"Symbol\":[");
	if (a->no_module && a->inlines) {
		/* llvm: a file that could not be read has no frame (its
		 * empty DIInliningInfo); without -i, its empty DILineInfo
		 * is one frame. */
	} else if (n == 0) {
		print_json_frame(a, NULL, NULL, NULL);
	} else if (!a->inlines) {
		print_json_frame(a, &fr[n - 1], &fr[0], &fr[0]);
	} else {
		for (i = 0; i < n; i++) {
			if (i)
				ob_c(a->ob, ',');
			print_json_frame(a, i == n - 1 ? &fr[i] : NULL, &fr[i],
					 &fr[i]);
		}
	}
	ob_s(a->ob, "]}");
	json_end(a);
}

static void print_json_error(struct a2l *a, const char *input,
			     const char *module)
{
	json_begin(a);
	ob_s(a->ob, "{\"Error\":{\"Message\":\"unable to parse "
		  "arguments: ");
	json_body(a->ob, input);
	ob_s(a->ob, "\"},\"ModuleName\":");
	json_str(a->ob, module);
	ob_c(a->ob, '}');
	json_end(a);
}

/*
 * llvm-symbolizer's other answers (a->llvm): DATA, FRAME, an input it
 * cannot parse, a file it cannot read.  Its plain printers (LLVM and
 * GNU) differ only in the blank line that ends an LLVM answer.
 */

/* The "0x...: " or "0x...\n" before an answer, with -a. */
static void llvm_header(struct a2l *a, uint64_t addr)
{
	if (a->addresses) {
		ob_hex(a->ob, addr, 0);
		ob_s(a->ob, a->pretty ? ": " : "\n");
	}
}

static void llvm_footer(struct a2l *a)
{
	if (a->style == STYLE_LLVM)
		ob_c(a->ob, '\n');
}

/*
 * print_data() - the answer to a DATA input: the symbol covering the
 * address (SymbolizableObjectFile::symbolizeData(): the symbol table
 * only), its start and size in decimal, or "??" and "0 0".
 */
static __attribute__((noinline)) void
print_data(struct a2l *a, uint64_t addr,
	   const struct sym_frame *fr, size_t n)
{
	const struct sym_frame *o = n ? &fr[n - 1] : NULL;
	const char *name = o ? o->symbol : NULL;
	uint64_t start = name ? o->symbol_addr : 0;
	uint64_t size = name ? o->symbol_size : 0;

	if (name)
		name = show(a, name, (o->flags & SYM_FRAME_SYMTAB) ? o : NULL,
			    true);
	if (a->style == STYLE_JSON) {
		json_head(a, addr);
		ob_s(a->ob, "\"Data\":{\"Name\":");
		json_str(a->ob, name);
		ob_printf(a->ob, ",\"Size\":\"0x%" PRIx64 "\",\"Start\":\"0x%"
			  PRIx64 "\"},", size, start);
		json_module(a);
		ob_c(a->ob, '}');
		json_end(a);
		return;
	}
	llvm_header(a, addr);
	ob_s(a->ob, name ? name : "??");
	ob_printf(a->ob, "\n%" PRIu64 " %" PRIu64 "\n", start, size);
	llvm_footer(a);
}

/*
 * print_frame_none() - the answer to a FRAME input (the local variables
 * of the function at the address) when there are none: the table keeps
 * no variables, so it is the only one given (a warning says so once).
 */
static void print_frame_none(struct a2l *a, uint64_t addr)
{
	if (a->style == STYLE_JSON) {
		json_head(a, addr);
		ob_s(a->ob, "\"Frame\":[],");
		json_module(a);
		ob_c(a->ob, '}');
		json_end(a);
		return;
	}
	llvm_header(a, addr);
	ob_s(a->ob, "??\n");
	llvm_footer(a);
}

/*
 * print_invalid() - an input llvm-symbolizer cannot parse: echoed as it
 * was read (PlainPrinterBase::printInvalidCommand()).  JSON has an error
 * object instead (print_json_error()).
 */
static void print_invalid(struct a2l *a, const char *input)
{
	ob_s(a->ob, input);
	ob_c(a->ob, '\n');
}

/*
 * print_file_error() - the first answer for a file that cannot be read:
 * the reason on stderr and the empty answer of the command, or in JSON
 * an error object instead (JSONPrinter::printError()).
 */
static void print_file_error(struct a2l *a, uint64_t addr, const char *msg)
{
	if (a->style == STYLE_JSON) {
		json_head(a, addr);
		ob_s(a->ob, "\"Error\":{\"Message\":");
		json_str(a->ob, msg);
		ob_s(a->ob, "},");
		json_module(a);
		ob_c(a->ob, '}');
		json_end(a);
		return;
	}
	/* Answers so far first: stderr and stdout may be one pipe. */
	ob_flush(a->ob);
	fflush(stdout);
	fprintf(stderr, "LLVMSymbolizer: error reading file: %s\n", msg);
	if (a->cmd == CMD_FRAME)
		print_frame_none(a, addr);
	else
		emit(a, addr, NULL, 0);
}

/*
 * elfutils style (src/addr2line.c of elfutils 0.188, as Debian 12 ships
 * it; docs/conformance.md says where later ones differ).
 */

/* print_src(): file:line, and :column when known. */
static void eu_src(struct a2l *a, const struct sym_frame *f)
{
	ob_printf(a->ob, "%s:%u", file_name(a, f->file, f->file_rel), f->line);
	if (f->column)
		ob_printf(a->ob, ":%u", f->column);
}

/*
 * print_dwarf_function(): returns whether a name was printed with its
 * separator.  An inlined innermost frame prints "NAME inlined at
 * FILE:LINE in ", then the name of the subprogram dwarf_getscopes()
 * finds around the inlined function's definition (fr[0].outer: a
 * lambda's is the function that holds it); with none, it returns false,
 * so that the caller completes the line with the symbol name.
 */
static bool eu_dwarf_function(struct a2l *a, const struct sym_frame *fr,
			      size_t n)
{
	const char *name, *file;

	if (n == 0 || !dwarf_name(&fr[0]))
		return false;
	/* Of gas's aliases of one range, eu names the first (eu_name). */
	name = fr[0].eu_name ? show(a, fr[0].eu_name, NULL, true) :
			       show(a, dwarf_name(&fr[0]), &fr[0], true);
	if (n == 1 || !(fr[0].flags & SYM_FRAME_INLINED)) {
		ob_printf(a->ob, "%s%c", name, a->pretty ? ' ' : '\n');
		return true;
	}
	if (a->pretty) {
		ob_printf(a->ob, "%s ", name);
		return true;
	}
	ob_printf(a->ob, "%s inlined", name);
	/* The call site of fr[0] is the location in fr[1]. */
	file = file_name(a, fr[1].file, fr[1].file_rel);
	if (file) {
		if (fr[1].line == 0)
			ob_printf(a->ob, " from %s", file);
		else if (fr[1].column == 0)
			ob_printf(a->ob, " at %s:%u", file, fr[1].line);
		else
			ob_printf(a->ob, " at %s:%u:%u", file, fr[1].line,
			       fr[1].column);
	}
	ob_s(a->ob, " in ");
	if (!fr[0].outer)
		return false;
	ob_printf(a->ob, "%s\n", show(a, fr[0].outer, NULL, true));
	return true;
}

/* print_addrsym(): SYMBOL[+OFF], or a section-relative form. */
static void eu_addrsym(struct a2l *a, uint64_t addr,
		       const struct sym_frame *fr, size_t n)
{
	const struct sym_frame *o = n ? &fr[n - 1] : NULL;
	const char *sym = outer_symbol(a, fr, n);
	char sep = a->pretty ? ' ' : '\n';
	uint64_t base;

	if (!sym) {
		/* libdwfl names no section outside ET_REL files: "()"
		 * relative to the load base (0 here) for ET_DYN, "??"
		 * for ET_EXEC. */
		if (a->info.elf_type == 3)
			ob_printf(a->ob, "()+%#" PRIx64 "%c", addr, sep);
		else
			ob_printf(a->ob, "??%c", sep);
		return;
	}
	base = o->symbol_addr;
	ob_s(a->ob, show(a, sym, NULL, true));
	if (addr != base)
		ob_printf(a->ob, "+%#" PRIx64, addr - base);
	ob_c(a->ob, sep);
}

static __attribute__((noinline)) void
print_eu(struct a2l *a, uint64_t addr,
	 const struct sym_frame *fr, size_t n)
{
	const char *name;
	size_t i;

	if (a->addresses)
		ob_printf(a->ob, "0x%.*" PRIx64 "%s", a->width, addr,
		       a->pretty ? ": " : "\n");
	if (a->functions && !eu_dwarf_function(a, fr, n) && !a->symbols) {
		name = outer_symbol(a, fr, n);
		ob_printf(a->ob, "%s%c", name ? show(a, name, NULL, true) : "??",
		       a->pretty ? ' ' : '\n');
	}
	if (a->symbols)
		eu_addrsym(a, addr, fr, n);
	if ((a->functions || a->symbols) && a->pretty)
		ob_s(a->ob, "at ");
	if (n && fr[0].file && !(fr[0].flags & SYM_FRAME_FILE_SYMTAB)) {
		eu_src(a, &fr[0]);
		ob_c(a->ob, '\n');
	} else {
		ob_s(a->ob, "??:0\n");
	}
	if (!a->inlines || n < 2 || (fr[0].flags & SYM_FRAME_SYMTAB))
		return;
	/* One line per inlined frame: its caller's name and call site. */
	for (i = 0; i + 1 < n; i++) {
		if (!(fr[i].flags & SYM_FRAME_INLINED))
			continue;
		if (a->pretty)
			ob_s(a->ob, " (inlined by) ");
		if (a->functions) {
			name = dwarf_name(&fr[i + 1]);
			name = name ? show(a, name, &fr[i + 1], true) : "??";
			ob_printf(a->ob, "%s%s", name, a->pretty ? " at " : "\n");
		}
		if (fr[i + 1].file) {
			eu_src(a, &fr[i + 1]);
			ob_c(a->ob, '\n');
		} else {
			ob_s(a->ob, "??:0\n");
		}
	}
}

/*
 * Answers.
 */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* emit() - print the answer for @addr in the chosen style: a jump to
 * its printer.  (print_json(), print_eu() and print_data() are
 * noinline: inlined here, their registers were saved and restored for
 * every answer, about 30 instructions.) */
static void emit(struct a2l *a, uint64_t addr, const struct sym_frame *fr,
		 size_t n)
{
	if (a->cmd == CMD_DATA) {
		print_data(a, addr, fr, n);
		return;
	}
	switch (a->style) {
	case STYLE_GNU:
		if (a->llvm)
			print_llvm(a, addr, fr, n);
		else
			print_gnu_any(a, addr, fr, n);
		break;
	case STYLE_LLVM:
		print_llvm(a, addr, fr, n);
		break;
	case STYLE_JSON:
		print_json(a, addr, fr, n);
		break;
	case STYLE_ELFUTILS:
		print_eu(a, addr, fr, n);
		break;
	}
}

/*
 * emit_unknown() - the answer to an input that names no address: nothing
 * in elfutils style (as eu-addr2line), "??" in the other styles, so that a
 * co-process reading answers stays in step.
 */
static void emit_unknown(struct a2l *a, const char *input)
{
	switch (a->style) {
	case STYLE_ELFUTILS:
		break;
	case STYLE_JSON:
		print_json_error(a, input, a->module_name);
		break;
	case STYLE_LLVM:
		print_llvm(a, 0, NULL, 0);
		break;
	case STYLE_GNU:
		print_gnu_any(a, 0, NULL, 0);
		break;
	}
}

/*
 * The store.  It is an optimization for `sym addr2line`: when it cannot
 * be opened or written, one warning says so and the answers come from the
 * file, as with --no-cache.  For `sym lookup` it is the only source.
 */
static bool store_warned;

static void store_warn(struct a2l *a, const char *what, int err)
{
	char buf[256];

	if (store_warned)
		return;
	store_warned = true;
	tool_err("warning: %s '%s': %s; going on without it", what,
		 a->store_path, sym_strerror(err, buf, sizeof(buf)));
}

/*
 * open_store() - open the store for @a->build_id and decide whether the
 * answers come from it.  Messages libsym logs while the store opens are
 * dropped: the one warning (or error) printed here says it all.
 * @return 0, or the error of sym_store_open() (already printed)
 */
static int open_store(struct a2l *a)
{
	size_t held_before = held.n;
	bool was_holding = held.hold;
	double t0 = now_ms();
	int err;

	held.hold = true;
	err = tool_store_open(a->store_dir, 0, NULL, a->store_path,
			      sizeof(a->store_path), &a->store);
	if (err == -EROFS || err == -EACCES || err == -EPERM)
		err = tool_store_open(a->store_dir, SYM_STORE_RDONLY, NULL,
				      a->store_path, sizeof(a->store_path),
				      &a->store);
	a->t_store = now_ms() - t0;
	if (err && held.n > held_before && !a->lookup) {
		/* Quote libsym's reason once, inside the warning. */
		char buf[256], msg[256];

		snprintf(msg, sizeof(msg), "%s", held.msg[held.n - 1]);
		held.n = held_before;
		held.hold = was_holding;
		store_warned = true;
		a->store_failed = true;
		tool_err("warning: cannot open the store '%s': %s (%s); going "
			 "on without it", a->store_path,
			 sym_strerror(err, buf, sizeof(buf)), msg);
		return err;
	}
	held.n = held_before;
	held.hold = was_holding;
	if (err && !a->lookup)
		store_warn(a, "cannot open the store", err);
	a->store_failed = err != 0;
	return err;
}

/* Does the store hold a current table for a->build_id? */
static bool store_has_table(struct a2l *a)
{
	return sym_store_has_table(a->store, a->build_id);
}

/*
 * build_table() - parse the module into its table and store it.  A table
 * that cannot be stored is still used.
 * @return 0, or the error of sym_module_table() (not printed)
 */
static int build_table(struct a2l *a)
{
	double t0 = now_ms();
	int err;

	err = tool_module_table(a->mod, a->store, a->build_id, &a->tab);
	a->t_build += now_ms() - t0;
	if (!a->store || !a->build_id || err)
		return err;
	/* A table of symbols only is not stored: under the build ID it
	 * would hide the debug file from a later run that finds it (another
	 * --debuginfo-path, a debug package installed since).  Reading
	 * symbols again is cheap.  One from Go's function table is stored:
	 * it has every function, line and inline chain, and Go programs
	 * seldom have debug files. */
	if (!tool_table_has_lines(a->tab)) {
		a->not_cached = "no DWARF found, symbols only";
		return 0;
	}
	t0 = now_ms();
	err = tool_store_put_module(a->store, a->build_id, a->mod, a->exe,
				    a->tab);
	a->t_put += now_ms() - t0;
	if (err == -EROFS) {
		a->not_cached = "the store is read-only";
	} else if (err) {
		a->not_cached = "the store could not be written";
		store_warn(a, "cannot store the table in", err);
	}
	return 0;
}

/* The callback of sym_store_lookup(), sym_table_lookup_batch() and
 * client_symbolize(): print right here, since the frames' strings live
 * only as long as the read transaction (the reply). */
static int store_frames(void *ctx, size_t idx, const struct sym_frame *fr,
			size_t n)
{
	struct a2l *a = ctx;

	emit(a, a->batch_addrs[idx] + a->adjust + a->ktext, fr, n);
	a->batch_done = idx + 1;
	return 0;
}

/* store_frames() of the GNU style, print_gnu() inlined: no emit() and
 * no call for each answer (python3.11d's 100,000 addresses: 2.4 M
 * instructions fewer, -1%); and for -f -i alone, with its options
 * constant. */
static inline __attribute__((always_inline)) int
store_gnu(struct a2l *a, const struct gnu_opts *o, size_t idx,
	  const struct sym_frame *fr, size_t n)
{
	print_gnu(a, o, a->batch_addrs[idx] + a->adjust + a->ktext, fr, n);
	a->batch_done = idx + 1;
	return 0;
}

static int store_frames_gnu(void *ctx, size_t idx,
			    const struct sym_frame *fr, size_t n)
{
	struct a2l *a = ctx;
	struct gnu_opts o = gnu_opts_of(a);

	return store_gnu(a, &o, idx, fr, n);
}

static int store_frames_gnu_fi(void *ctx, size_t idx,
			       const struct sym_frame *fr, size_t n)
{
	return store_gnu(ctx, &gnu_fi, idx, fr, n);
}

/* The callback that prints @a's answers: emit()'s choice made once. */
static sym_frames_fn frames_fn(const struct a2l *a)
{
	if (a->style != STYLE_GNU || a->llvm || a->cmd == CMD_DATA)
		return store_frames;
	return gnu_is_fi(a) ? store_frames_gnu_fi : store_frames_gnu;
}

/*
 * cache_failed() - the store could not answer (its table is gone, stale
 * or corrupt).  `sym addr2line` rebuilds the table from the file and
 * stores it again; `sym lookup` can only say so.
 * @return 0 when the answers can go on from the rebuilt table
 */
static int cache_failed(struct a2l *a, int err)
{
	char buf[256];

	a->from_cache = false;
	a->fatal = a->lookup;
	if (a->lookup) {
		if (err == -SYM_E_BADTABLE)
			tool_err("the table of build ID %s in store '%s' is "
				 "corrupt and was removed; add its file again "
				 "with 'sym store add FILE'", a->build_id,
				 a->store_path);
		else if (err == -SYM_E_STALE)
			tool_err("the table of build ID %s in store '%s' was "
				 "built by another version of sym; add its "
				 "file again with 'sym store add FILE'",
				 a->build_id, a->store_path);
		else if (err == -SYM_E_NOTFOUND)
			tool_err("no table for build ID %s in store '%s'",
				 a->build_id, a->store_path);
		else
			tool_err("store '%s': %s", a->store_path,
				 sym_strerror(err, buf, sizeof(buf)));
		return err;
	}
	a->rebuilt = true;
	if (err == -SYM_E_BADTABLE)
		tool_err("warning: the stored table of build ID %s is corrupt "
			 "(it was removed); rebuilding it from '%s'",
			 a->build_id, a->exe);
	else if (err != -SYM_E_STALE && err != -SYM_E_NOTFOUND)
		store_warn(a, "cannot read the table from", err);
	err = build_table(a);
	if (err) {
		tool_err_code(a->exe, err);
		a->fatal = true;
	}
	return err;
}

/* Whether the answers print the symbols only where a frame is named
 * after one (SYM_OMIT_SYMBOLS): GNU's style, as bfd (print_gnu()), not
 * llvm-symbolizer's answers in it, nor their DATA inputs. */
static bool gnu_symbols_unread(const struct a2l *a)
{
	return a->style == STYLE_GNU && !a->llvm &&
	       a->input != A2L_INPUT_LLVM;
}

/* The frame fields the style never prints (enum sym_frame_omit): the
 * declaration is JSON's StartFileName and StartLine, the peer names
 * eu-addr2line's, the symbols of answers named from DWARF GNU's, and
 * columns, start addresses and relative paths llvm-symbolizer's (and
 * --relativenames').  Not decoding the first two is 3% of a warm libjvm
 * answer; the symbols are 4% (libc) to 10% (python3.11d) of the
 * instructions of a warm lookup of 100,000 addresses, the last bit 5%
 * (docs/bench.md). */
static unsigned a2l_omit(const struct a2l *a)
{
	return (a->style == STYLE_JSON ? 0 : SYM_OMIT_DECL) |
	       (a->style == STYLE_ELFUTILS ? 0 : SYM_OMIT_PEER_NAMES) |
	       (a->demangle ? 0 : SYM_OMIT_DEMANGLED) |
	       (gnu_symbols_unread(a) ? SYM_OMIT_SYMBOLS : 0) |
	       (gnu_symbols_unread(a) && !a->relnames ?
		SYM_OMIT_LLVM_ONLY : 0);
}

/*
 * gnu_text() - where libsym writes the text of sym lookup's default
 * style, -f -i alone, for the answers it can (libsym/gnutext.h): @a's
 * output buffer, in @t; NULL for any other style or option, or when the
 * output has failed.  The callback prints the others into the same
 * buffer, in input order with them.
 */
static struct symi_gnu_text *gnu_text(struct a2l *a, struct symi_gnu_text *t)
{
	if (frames_fn(a) != store_frames_gnu_fi || a->ob->err)
		return NULL;
	*t = (struct symi_gnu_text){ .buf = &a->ob->b };
	return t;
}

/* sym_store_lookup_omit() of @a's batch @addrs[@n] (with gnu_text()'s
 * text); a->batch_done says how many were answered. */
static int lookup_store(struct a2l *a, const uint64_t *addrs, size_t n)
{
	struct symi_gnu_text text = { 0 };
	int err;

	a->batch_addrs = addrs;
	a->batch_done = 0;
	err = symi_store_lookup_gnu(a->store, a->build_id, addrs, n,
				    a2l_omit(a), gnu_text(a, &text),
				    frames_fn(a), a);
	if (text.done > a->batch_done)
		a->batch_done = text.done;
	return err;
}

/* answer_table() - answer @n addresses from the table in memory, in one
 * batch (sorted and pipelined by libsym, as the store's are). */
static void answer_table(struct a2l *a, const uint64_t *addrs, size_t n)
{
	struct symi_gnu_text text = { 0 };

	a->batch_addrs = addrs;
	a->batch_done = 0;
	/* store_frames() never stops it, and the arguments are valid. */
	(void)symi_table_lookup_batch_gnu(a->tab, addrs, n, a2l_omit(a),
					  gnu_text(a, &text), frames_fn(a),
					  a);
}

/*
 * answer_rest() - the store failed with @err: answer the @n addresses it
 * did not from the rebuilt table (sym addr2line), or stop (sym lookup).
 * Answered so far stays answered.
 */
static int answer_rest(struct a2l *a, const uint64_t *addrs, size_t n,
		       int err)
{
	double t0;

	if (a->from_cache) {
		err = cache_failed(a, err);
		if (err)
			return err;
	}
	if (a->fatal || !a->tab)
		return a->fatal ? -ECANCELED : err;
	t0 = now_ms();
	answer_table(a, addrs, n);
	a->t_lookup += now_ms() - t0;
	return 0;
}

static int answer(struct a2l *a, const uint64_t *addrs, size_t n);

/*
 * lazy_table() - the module's table once the lazy path stops: built (and
 * stored) now.  Its error is printed and ends the input.
 */
static int lazy_table(struct a2l *a)
{
	int err;

	a->lazy = false;
	err = build_table(a);
	if (err) {
		tool_err_code(a->exe, err);
		a->fatal = true;
	}
	return err;
}

/*
 * answer_lazy() - answer @n addresses of a file without a table: from a
 * table of only the units that cover them (sym_module_table_for(),
 * thrown away after), while the run has asked at most LAZY_MAX
 * addresses in at most LAZY_BATCHES batches; then, or when that fails, from the full table, built and
 * stored as without --lazy.  Both give the same answers.
 */
static int answer_lazy(struct a2l *a, const uint64_t *addrs, size_t n)
{
	struct sym_table *t = NULL;
	double t0 = now_ms();
	int err;

	if (a->lazy_when == LAZY_AUTO &&
	    (a->lazy_done + n > LAZY_MAX || a->lazy_builds >= LAZY_BATCHES))
		goto full;
	err = sym_module_table_for(a->mod, addrs, n, &t);
	a->t_build += now_ms() - t0;
	if (err)
		goto full;
	a->lazy_done += n;
	a->lazy_builds++;
	sym_table_stat(t, &a->lazy_stat);
	a->tab = t;
	t0 = now_ms();
	answer_table(a, addrs, n);
	a->t_lookup += now_ms() - t0;
	a->tab = NULL;
	sym_table_close(t);
	return 0;
full:
	a->naddrs -= n;		/* answer() counts them again */
	return lazy_table(a) ?: answer(a, addrs, n);
}

/*
 * answer() - print the answers for @n addresses, from the store when it
 * has the table, else from the module's table.
 * @return 0, or an error after which no more can be answered (printed)
 */
static int answer(struct a2l *a, const uint64_t *addrs, size_t n)
{
	double t0 = now_ms();
	int err;

	a->naddrs += n;
	if (a->client) {
		/* Nothing to fall back on: an error ends the input. */
		a->batch_addrs = addrs;
		err = client_symbolize(a->client, a->build_id, addrs, n,
				       a->wait_ms, frames_fn(a), a);
		a->t_lookup += now_ms() - t0;
		a->fatal = err != 0;
		return err;
	}
	if (a->from_cache) {
		err = lookup_store(a, addrs, n);
		a->t_lookup += now_ms() - t0;
		if (!err)
			return 0;
		return answer_rest(a, addrs + a->batch_done,
				   n - a->batch_done, err);
	}
	if (a->lazy)
		return answer_lazy(a, addrs, n);
	answer_table(a, addrs, n);
	a->t_lookup += now_ms() - t0;
	return 0;
}

/*
 * Parallel answers.  Addresses read from stdin with a table to answer
 * from (the store's, or one in memory) are answered by a pool of worker
 * threads (pool.h), a batch per job: the worker prints the batch's
 * answers into a memory stream of its own, and this thread reads on and
 * writes the jobs' text in input order.  So the output is byte for byte
 * the sequential output, and the co-process contract holds: before each
 * blocking read every job is written (pool_drain() from stdin_flush()).
 * A job whose store lookup fails is finished here, as answer() would
 * finish it (answer_rest()).  `sym lookup --server`, small batches and
 * anything that is not a hex address are answered on this thread, after
 * the jobs before them.
 */

/* The largest batch of addresses a worker answers by one
 * sym_store_lookup() (a job).  Measured on python3.11d and libjvm
 * (100,000 unsorted addresses, warm store) when batches left their
 * frames in a buffer: 2,048 to 4,096 was fastest for a whole process
 * (16,384: +10%; 65,536: +80%). */
#define BATCH_MAX 4096

/* ... and answered on this thread (--threads=1, or no pool), where
 * batches now keep 32-byte hits, not frames (libsym/batch.c): at least
 * libsym's whole sorted window (65,536 then, 131,072 now), so that
 * sorted lookups land closer together (fewer blocks decoded, shorter
 * gallops).  Measured
 * with callgrind and alternating runs, 100,000 unsorted addresses, warm
 * store (docs/bench.md, "Warm lookups, lean"): 65,536 against 4,096,
 * libc -16% instructions and -24% CPU, python3.11d -18% and -10%, libjvm
 * -8% and the same CPU.  Two windows: a lookup of up to 262,144
 * addresses is one libsym call, which makes its arrays and its frame
 * cache once, the cache warm for the later windows (docs/bench.md,
 * "Fewer page faults": 16,384 and 32,768 were slower, 131,072 and more
 * the same).  The batch is 2 MiB, one huge page (batch_grow()). */
#define BATCH_ONE_MAX 262144
/* ... after a first step of this many (a few addresses touch a page). */
#define BATCH_ONE_FIRST 4096

/* Batches smaller than this are answered on this thread. */
#define POOL_MIN_BATCH 256
/* Jobs waiting per worker before this thread waits: bounds the memory
 * held in answers (libjvm: about 1.6 MB per 4,096 addresses). */
#define POOL_QUEUED 1

struct job {
	/* A copy of the main a2l for the worker: it borrows what the main
	 * one has (options, store, table, which live until every job is
	 * back) and owns only w.dm; w.ob is &ob. */
	struct a2l w;
	uint64_t *addrs;	/* owned; room for addrs_cap */
	size_t n, addrs_cap;
	struct obuf ob;		/* the answers; ob.b is kept, with its
				 * room, when the job is reused */
	int err;		/* of sym_store_lookup(): the answers before
				 * w.batch_done are in ob */
	struct job *next;	/* a->spare's list */
};

static void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->addrs);
	symi_buf_release(&j->ob.b);
	free(j->w.dm);
	free(j);
}

/* The pool's function, on a worker thread. */
static void run_job(void *arg)
{
	struct job *j = arg;
	struct a2l *w = &j->w;
	double t0 = now_ms();

	symi_buf_reset(&j->ob.b);
	j->ob.err = false;
	j->err = 0;
	w->ob = &j->ob;
	if (w->from_cache)
		j->err = lookup_store(w, j->addrs, j->n);
	else
		answer_table(w, j->addrs, j->n);
	w->t_lookup = now_ms() - t0;
}

/* job_done() - print job @j's answers (this thread, in input order). */
static int job_done(struct a2l *a, struct job *j)
{
	int err;

	/* Out of memory, the answers are cut: do them all again here. */
	if (j->ob.err)
		return answer(a, j->addrs, j->n);
	a->naddrs += j->n;
	a->t_lookup += j->w.t_lookup;
	/* Straight to stdout, after what this thread holds. */
	err = ob_flush(a->ob);
	if (!err && j->ob.b.len &&
	    fwrite(j->ob.b.p, 1, j->ob.b.len, a->ob->sink) != j->ob.b.len) {
		a->ob->err = true;
		err = -EIO;
	}
	if (err || !j->err)
		return err;
	return answer_rest(a, j->addrs + j->w.batch_done,
			   j->n - j->w.batch_done, j->err);
}

/*
 * pool_collect() - print the jobs that are done, oldest first; wait for
 * the oldest while too many are queued, or, with @all, for every job.
 * After a fatal error the jobs still queued are dropped unprinted, as the
 * sequential run would never have answered them.  Printed jobs go to
 * a->spare for reuse, with their buffers.
 */
static int pool_collect(struct a2l *a, bool all)
{
	struct job *j;
	int err = 0;

	if (!a->pool)
		return 0;
	for (;;) {
		bool wait = all ||
			    pool_pending(a->pool) > POOL_QUEUED * a->threads;

		j = pool_next(a->pool, wait);
		if (!j)
			break;
		if (!err && !a->fatal)
			err = job_done(a, j);
		free(j->w.dm);
		j->w.dm = NULL;
		j->next = a->spare;
		a->spare = j;
	}
	return err;
}

static int pool_drain(struct a2l *a)
{
	return pool_collect(a, true);
}

/*
 * submit() - hand the queued batch of @n addresses to the pool; the job
 * takes a->batch and gives its own address buffer in exchange.
 * @return 1 when the pool cannot take it (answer it here), 0, or an error
 *         of printing earlier jobs
 */
static int submit(struct a2l *a, size_t n)
{
	struct job *j = a->spare;
	uint64_t *addrs;
	size_t cap;

	if (j) {
		a->spare = j->next;
	} else {
		j = calloc(1, sizeof(*j));
		if (!j)
			return 1;
		symi_buf_init(&j->ob.b, OB_JOB_MAX);
	}
	if (j->addrs_cap < BATCH_MAX) {
		free(j->addrs);
		j->addrs_cap = 0;
		j->addrs = malloc(BATCH_MAX * sizeof(*j->addrs));
		if (!j->addrs) {
			job_free(j);
			return 1;
		}
		j->addrs_cap = BATCH_MAX;
	}
	j->w = *a;
	j->w.dm = NULL;
	j->w.pool = NULL;
	j->w.spare = NULL;
	j->w.batch = NULL;
	j->w.ob = NULL;
	addrs = j->addrs;
	cap = j->addrs_cap;
	j->addrs = a->batch;
	j->addrs_cap = a->batch_cap;
	j->n = n;
	if (pool_submit(a->pool, j)) {
		j->addrs = addrs;
		j->addrs_cap = cap;
		job_free(j);
		return 1;
	}
	a->batch = addrs;
	a->batch_cap = cap;
	return pool_collect(a, false);
}

/* sym lookup --server: seconds without an answer, beyond --wait-ms,
 * before the server is given up on. */
#define LOOKUP_STALL 20

static int flush_batch(struct a2l *a)
{
	size_t n = a->nbatch;

	int err;

	a->nbatch = 0;
	if (n == 0 || a->fatal)
		return 0;
	if (a->pool && n >= POOL_MIN_BATCH && !a->client &&
	    (a->from_cache || a->tab)) {
		err = submit(a, n);
		if (err <= 0)
			return err;
	}
	/* Here, after the jobs before it. */
	err = pool_drain(a);
	return err ? err : answer(a, a->batch, n);
}

/* The most addresses a batch holds (see BATCH_MAX). */
static size_t batch_max(const struct a2l *a)
{
	/* A worker's job, or symd's request (--server), stays small. */
	return a->pool || a->client ? BATCH_MAX : BATCH_ONE_MAX;
}

/* batch_grow() - room for one more address in a->batch.  On one thread
 * it grows once, from BATCH_ONE_FIRST addresses to all of BATCH_ONE_MAX,
 * in huge pages (symi_malloc_huge()): grown by doubling it was copied,
 * and faulted in, many times over, and its 512 KiB in 4 KiB pages took
 * 128 page faults, each dearer than a whole huge page's 1/16.
 * @return 0 or -ENOMEM (the batch as it was) */
static int batch_grow(struct a2l *a)
{
	uint64_t *p;

	if (a->pool || a->client)
		return tool_grow(&a->batch, &a->batch_cap, a->nbatch + 1,
				 sizeof(*a->batch), 256);
	if (a->batch_cap < BATCH_ONE_FIRST)
		return tool_grow(&a->batch, &a->batch_cap, a->nbatch + 1,
				 sizeof(*a->batch), BATCH_ONE_FIRST);
	p = symi_malloc_huge(BATCH_ONE_MAX * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memcpy(p, a->batch, a->nbatch * sizeof(*p));
	free(a->batch);
	a->batch = p;
	a->batch_cap = BATCH_ONE_MAX;
	return 0;
}

/* queue()'s slow path: the batch is full, or has no room yet. */
static int queue_slow(struct a2l *a, uint64_t addr)
{
	int err;

	if (a->nbatch >= batch_max(a)) {
		err = flush_batch(a);
		if (err)
			return err;
	}
	if (a->nbatch == a->batch_cap && batch_grow(a)) {
		err = flush_batch(a);
		return err ? err : answer(a, &addr, 1);
	}
	a->batch[a->nbatch++] = addr;
	return 0;
}

/* queue() - answer @addr, an address as the input gives it (a kernel's
 * link-time one: made its table's _text offset here, kernel_text()),
 * with the next batch, or at once.  Inline for the input loop. */
/* Whether the batch has room for @n more addresses before queue_slow(). */
static inline bool queue_room(const struct a2l *a, size_t n)
{
	return a->nbatch + n <= a->batch_cap &&
	       a->nbatch + n <= batch_max(a);
}

static inline int queue(struct a2l *a, uint64_t addr)
{
	/* (one below _text wraps past every address of the table: no
	 * answer, as the peers give) */
	addr -= a->ktext;
	if (queue_room(a, 1)) {
		a->batch[a->nbatch++] = addr;
		return 0;
	}
	return queue_slow(a, addr);
}

/*
 * Input.
 */

/*
 * need_table() - build the module's table when the answers come from the
 * store: looking up a symbol by name needs it.
 * @return 0, or the error of sym_module_table() (printed)
 */
static int need_table(struct a2l *a)
{
	double t0;
	int err;

	if (a->tab)
		return 0;
	if (a->lazy)
		return lazy_table(a);
	t0 = now_ms();
	err = sym_module_table(a->mod, &a->tab);
	a->t_build += now_ms() - t0;
	if (err)
		tool_err_code(a->exe, err);
	return err;
}

/*
 * resolve_symbol() - the address of SYMBOL, SYMBOL+OFF or SYMBOL-OFF
 * (eu-addr2line's forms).  Symbol names need the module's table: when the
 * answers come from the store, the table is built for them.
 * @return 0, -EINVAL (not parseable), -SYM_E_NOTFOUND (no such symbol);
 *         the reason is printed
 */
static int resolve_symbol(struct a2l *a, const char *s, uint64_t *addr)
{
	char name[512];
	uint64_t value, size;
	int64_t off = 0;
	size_t len;
	int err;

	if (a->lookup) {
		if (a->style != STYLE_JSON)
			tool_err("cannot parse address '%s' (sym lookup takes "
				 "hex addresses only)", s);
		return -EINVAL;
	}
	len = strcspn(s, "+-");
	if (len == 0 || len >= sizeof(name))
		goto bad;
	if (s[len] && tool_parse_offset(s + len, &off) != 0)
		goto bad;
	memcpy(name, s, len);
	name[len] = '\0';
	err = need_table(a);
	if (err)
		return err;
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

/* flush() - answer what is queued, before an answer that is not. */
static int flush(struct a2l *a)
{
	int err = flush_batch(a);

	return err ? err : pool_drain(a);
}

/*
 * GNU addr2line's input (A2L_INPUT_GNU), as binutils 2.40
 * translate_addresses() reads it.
 */

/*
 * gnu_address() - the address in @s (is_symbol(), lookup_symbol(),
 * bfd_scan_vma()): hex as strtoul(s, NULL, 16) reads it (blanks and 0x
 * skipped, trailing junk ignored, too large is all ones) when @s starts
 * with a digit, or with a letter A-F and holds no '+'; else SYMBOL, up to
 * a blank or '+', and an offset after a '+' as strtoul(, 0) reads it: the
 * symbol's address plus the offset, or 0 when no symbol has the name.
 * Where binutils takes the first symbol of the name in its symbol table,
 * then tries demangled names, libsym takes its preferred one
 * (sym_table_find_symbol()) and matches raw names only.
 * @return 0, or an error of building the table (printed)
 */
static int gnu_address(struct a2l *a, const char *s, uint64_t *addr)
{
	const char *p = s, *name;
	uint64_t value, off = 0;
	char buf[512];
	size_t len;
	int err, c;

	while (isspace((unsigned char)*p))
		p++;
	c = toupper((unsigned char)*p);
	if (!c || isdigit(c) || (c >= 'A' && c <= 'F' && !strchr(p, '+'))) {
		*addr = strtoull(s, NULL, 16);
		return 0;
	}
	name = p;
	while (*p && !isspace((unsigned char)*p) && *p != '+')
		p++;
	len = (size_t)(p - name);
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '+')
		off = strtoull(p + 1, NULL, 0);
	*addr = 0;
	if (len == 0) {
		/* "+N": binutils finds the symbol with no name, the empty
		 * STT_FILE (value 0) GNU ld writes into .symtab. */
		*addr = off;
		return 0;
	}
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, name, len);
	buf[len] = '\0';
	err = need_table(a);
	if (err)
		return err;
	/* (a kernel's table holds _text offsets: made link-time) */
	if (sym_table_find_symbol(a->tab, buf, &value, NULL) == 0)
		*addr = value + a->ktext + off;
	return 0;
}

/* handle_gnu() - answer one input of GNU addr2line; every input has an
 * answer ("??" for what is not an address). */
static int handle_gnu(struct a2l *a, const char *input)
{
	uint64_t addr;
	int err;

	err = gnu_address(a, input, &addr);
	if (err)
		return err;
	/* bfd keeps the address to the file's width. */
	if (a->info.elf_class == 32)
		addr &= UINT32_MAX;
	if (!a->section)
		return queue(a, addr);
	/* -j: an offset into the section (find_offset_in_section()). */
	if (addr < a->section_size)
		return queue(a, addr + a->section_vma);
	err = flush(a);
	if (!err)
		emit(a, addr, NULL, 0);
	return err;
}

/*
 * llvm-symbolizer's input (A2L_INPUT_LLVM), as LLVM 14's
 * llvm-symbolizer.cpp parseCommand() and LLVMSymbolizer read it.
 */

/* A character's value as a digit of radix up to 36, plus one (LLVM's
 * consumeUnsignedInteger()); 0 for one that is none, which
 * digit_value[c] - 1 turns into UINT_MAX, past every radix. */
static const uint8_t digit_value[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6,
	['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['g'] = 17,
	['h'] = 18, ['i'] = 19, ['j'] = 20, ['k'] = 21, ['l'] = 22,
	['m'] = 23, ['n'] = 24, ['o'] = 25, ['p'] = 26, ['q'] = 27,
	['r'] = 28, ['s'] = 29, ['t'] = 30, ['u'] = 31, ['v'] = 32,
	['w'] = 33, ['x'] = 34, ['y'] = 35, ['z'] = 36, ['A'] = 11,
	['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
	['G'] = 17, ['H'] = 18, ['I'] = 19, ['J'] = 20, ['K'] = 21,
	['L'] = 22, ['M'] = 23, ['N'] = 24, ['O'] = 25, ['P'] = 26,
	['Q'] = 27, ['R'] = 28, ['S'] = 29, ['T'] = 30, ['U'] = 31,
	['V'] = 32, ['W'] = 33, ['X'] = 34, ['Y'] = 35, ['Z'] = 36,
};

bool a2l_llvm_uint(const char *s, size_t len, uint64_t *out)
{
	unsigned radix = 10, d;
	uint64_t v = 0, prev;
	size_t i = 0;

	/* GetAutoSenseRadix() */
	if (len >= 2 && s[0] == '0') {
		if (s[1] == 'x' || s[1] == 'X') {
			radix = 16;
			i = 2;
		} else if (s[1] == 'b' || s[1] == 'B') {
			radix = 2;
			i = 2;
		} else if (s[1] == 'o') {
			radix = 8;
			i = 2;
		} else if (isdigit((unsigned char)s[1])) {
			radix = 8;
			i = 1;
		}
	}
	if (i == len)
		return false;
	/* consumeUnsignedInteger(), which must take it all.  In hex, its
	 * overflow test below holds exactly when v reaches 2^60 first. */
	for (; radix == 16 && i < len; i++) {
		d = digit_value[(unsigned char)s[i]] - 1u;
		if (d >= 16 || v >> 60)
			return false;
		v = v << 4 | d;
	}
	for (; i < len; i++) {
		d = digit_value[(unsigned char)s[i]] - 1u;
		if (d >= radix)
			return false;
		prev = v;
		v = v * radix + d;
		/* LLVM's overflow test; below 2^58 nothing can wrap (radix
		 * <= 36) and it holds, so the division is skipped. */
		if (prev >= (uint64_t)1 << 58 && v / radix < prev)
			return false;
	}
	*out = v;
	return true;
}

/*
 * llvm_hex() - a2l_llvm_uint()'s answer for hex digits @s that run to a
 * delimiter or the end, in one pass; false (nothing read) when there is
 * no digit, a digit ends otherwise, or the value overflows, where the
 * caller asks a2l_llvm_uint().
 */
static inline bool llvm_hex(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned d;
	size_t i;

	for (i = 0;; i++) {
		d = digit_value[(unsigned char)s[i]] - 1u;
		if (d >= 16)
			break;
		if (v >> 60)
			return false;
		v = v << 4 | d;
	}
	if (i == 0 || (s[i] && s[i] != ' ' && s[i] != '\n' && s[i] != '\r'))
		return false;
	*out = v;
	return true;
}

/* One parsed input. */
struct llvm_input {
	enum llvm_cmd cmd;
	const char *file;	/* into the input or a->obj; not terminated */
	size_t file_len;
	uint64_t addr;
};

/*
 * llvm_parse() - parseCommand(): "CODE ", "DATA " or "FRAME " (else
 * CODE); unless --obj names the file, the file: "quoted", 'quoted' or up
 * to a delimiter; then the address (a2l_llvm_uint()).  The delimiters are
 * ' ', '\n' and '\r' (not tabs); what follows the address is ignored.
 * @return false when the input cannot be parsed; @in->file is then what
 *         was read of the file ("" when nothing), which JSON names
 */
static bool llvm_parse(struct a2l *a, const char *s, struct llvm_input *in)
{
	static const char delim[] = " \n\r";
	const char *p = s, *end;
	size_t n;

	in->cmd = CMD_CODE;
	/* The first letter first: most lines are a bare address. */
	if (*p == 'C' && strncmp(p, "CODE ", 5) == 0) {
		p += 5;
	} else if (*p == 'D' && strncmp(p, "DATA ", 5) == 0) {
		in->cmd = CMD_DATA;
		p += 5;
	} else if (*p == 'F' && strncmp(p, "FRAME ", 6) == 0) {
		in->cmd = CMD_FRAME;
		p += 6;
	}
	in->file = "";
	in->file_len = 0;
	if (a->obj) {
		in->file = a->obj;
		in->file_len = a->obj_len;
	} else {
		p += strspn(p, delim);
		if (*p == '"' || *p == '\'') {
			end = strchr(p + 1, *p);
			if (!end)
				return false;
			in->file = p + 1;
			in->file_len = (size_t)(end - p - 1);
			p = end + 1;
		} else {
			n = strcspn(p, delim);
			in->file = p;
			in->file_len = n;
			p += n;
		}
	}
	while (*p == ' ' || *p == '\n' || *p == '\r')
		p++;
	/* The usual input, "0x" and hex digits up to a delimiter, read in
	 * the same pass that finds its end; anything else is scanned, then
	 * read by a2l_llvm_uint(). */
	if (p[0] == '0' && p[1] == 'x' && llvm_hex(p + 2, &in->addr))
		return true;
	for (n = 0; p[n] && p[n] != ' ' && p[n] != '\n' && p[n] != '\r'; n++)
		;
	return a2l_llvm_uint(p, n, &in->addr);
}

/*
 * llvm_arch() - is @s (up to a '-') an architecture name LLVM 14's
 * Triple::parseArch() knows?  A module name "FILE:ARCH" names FILE then
 * (LLVMSymbolizer::getOrCreateModuleInfo()); for an ELF file the
 * architecture changes nothing.  The common names are listed; LLVM's
 * own list has some forty more, for targets that have no ELF here.
 */
static bool llvm_arch(const char *s, size_t len)
{
	static const char *const names[] = {
		"i386", "i486", "i586", "i686", "i786", "i886", "i986",
		"amd64", "x86_64", "x86_64h", "aarch64", "aarch64_be",
		"aarch64_32", "arm64", "arm64e", "arm64_32", "arm", "armeb",
		"thumb", "thumbeb", "powerpc", "ppc", "ppc32", "powerpc64",
		"ppc64", "powerpc64le", "ppc64le", "mips", "mipsel", "mips64",
		"mips64el", "riscv32", "riscv64", "s390x", "systemz",
		"sparc", "sparcv9", "sparc64", "wasm32", "wasm64", "bpf",
		"bpfel", "bpfeb", "m68k", "hexagon", "ve", "csky",
	};
	const char *dash = memchr(s, '-', len);
	size_t i;

	if (dash)
		len = (size_t)(dash - s);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
			return true;
	/* parseARMArch(): armv7, thumbv7m, aarch64 variants ... */
	return len > 3 && (strncmp(s, "armv", 4) == 0 ||
			   (len > 6 && strncmp(s, "thumbv", 6) == 0));
}

/*
 * The files llvm-symbolizer's inputs name: each is opened on its first
 * input and kept, as LLVMSymbolizer keeps its modules (at most
 * A2L_FILES_MAX; then the one unused longest is closed).  A file that
 * cannot be read is remembered too: its error is printed on its first
 * input only, and later inputs get the empty answer, as in LLVM.
 *
 * The file answering has its state in struct a2l's module fields (exe,
 * module_name, mod, tab, ...), where the rest of this file expects it;
 * file_use() saves them into its struct a2l_file and loads another's.
 */
#define A2L_FILES_MAX 64

struct a2l_file {
	char *name;		/* as the inputs spell it; free() */
	size_t name_len;	/* strlen(name) */
	bool is_obj;		/* it is a->obj (--obj): every input's */
	char *path;		/* without a ":ARCH" suffix; free() */
	int err;		/* opening failed: the error; else 0 */
	bool reported;		/* its error was printed */
	uint64_t used;		/* a->file_clock at its last input */
	/* struct a2l's module fields while another file answers. */
	struct sym_module *mod;	/* sym_module_close() */
	const struct sym_table *tab;
	const char *build_id, *not_cached;
	struct sym_module_info info;
	int width;
	uint64_t ktext;
	bool from_cache, rebuilt;
};

static void file_save(struct a2l *a, struct a2l_file *f)
{
	f->mod = a->mod;
	f->tab = a->tab;
	f->build_id = a->build_id;
	f->not_cached = a->not_cached;
	f->info = a->info;
	f->width = a->width;
	f->ktext = a->ktext;
	f->from_cache = a->from_cache;
	f->rebuilt = a->rebuilt;
}

static void file_load(struct a2l *a, const struct a2l_file *f)
{
	a->exe = f->path;
	a->module_name = f->name;
	a->mod = f->mod;
	a->tab = f->tab;
	a->build_id = f->build_id;
	a->not_cached = f->not_cached;
	a->info = f->info;
	a->width = f->width;
	a->ktext = f->ktext;
	a->from_cache = f->from_cache;
	a->rebuilt = f->rebuilt;
}

static void file_release(struct a2l_file *f)
{
	sym_module_close(f->mod);
	free(f->name);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

static void files_free(struct a2l *a)
{
	size_t i;

	/* Without llvm-symbolizer's inputs, a->mod is the one file's. */
	if (!a->files)
		return;
	if (a->cur)
		file_save(a, a->cur);
	for (i = 0; i < a->nfiles; i++)
		file_release(&a->files[i]);
	free(a->files);
	a->files = NULL;
	a->nfiles = 0;
	a->cur = NULL;
	a->mod = NULL;
	a->tab = NULL;
}

/* file_slot() - room for one more file: a new slot, or the one unused
 * longest, closed. */
static struct a2l_file *file_slot(struct a2l *a)
{
	struct a2l_file *f;
	size_t i;

	if (!a->files) {
		a->files = calloc(A2L_FILES_MAX, sizeof(*a->files));
		if (!a->files)
			return NULL;
	}
	if (a->nfiles < A2L_FILES_MAX)
		return &a->files[a->nfiles++];
	f = &a->files[0];
	for (i = 1; i < a->nfiles; i++)
		if (a->files[i].used < f->used)
			f = &a->files[i];
	file_release(f);
	return f;
}

/*
 * file_use() - make the file an input names (@name, @len) the one that
 * answers: after the answers queued for the one before, its state is
 * saved and the other's loaded, or the other is opened (open_module()).
 * @return 0 (a file that cannot be read is not an error here: see
 *         a->cur->err), -ENOMEM, or an error of the answers queued
 */
static int file_use(struct a2l *a, const char *name, size_t len)
{
	struct a2l_file *f = a->cur;
	const char *colon;
	size_t i, plen;
	int err;

	/* With --obj, every input names the same string. */
	if (f && ((f->is_obj && name == a->obj) ||
		  (f->name_len == len && memcmp(f->name, name, len) == 0))) {
		f->used = ++a->file_clock;
		return 0;
	}
	err = flush(a);
	if (err)
		return err;
	if (f)
		file_save(a, f);
	a->cur = NULL;
	a->mod = NULL;
	a->tab = NULL;
	for (i = 0; i < a->nfiles; i++) {
		f = &a->files[i];
		if (f->name_len == len && memcmp(f->name, name, len) == 0) {
			file_load(a, f);
			goto found;
		}
	}
	f = file_slot(a);
	if (!f)
		return -ENOMEM;
	plen = len;
	colon = memrchr(name, ':', len);
	if (colon && llvm_arch(colon + 1, len - (size_t)(colon + 1 - name)))
		plen = (size_t)(colon - name);
	f->name = strndup(name, len);
	f->name_len = f->name ? strlen(f->name) : 0;
	f->is_obj = name == a->obj;
	f->path = strndup(name, plen);
	if (!f->name || !f->path) {
		free(f->name);
		free(f->path);
		memset(f, 0, sizeof(*f));
		a->nfiles--;	/* file_slot() gave the last one */
		return -ENOMEM;
	}
	a->exe = f->path;
	a->module_name = f->name;
	a->from_cache = false;
	a->not_cached = NULL;
	a->rebuilt = false;
	a->build_id = NULL;
	a->ktext = 0;
	f->err = open_module(a);
	if (f->err) {
		sym_module_close(a->mod);
		a->mod = NULL;
		a->tab = NULL;
	}
found:
	a->cur = f;
	f->used = ++a->file_clock;
	return 0;
}

/* llvm_strerror() - why a file cannot be read, in LLVM's words where
 * they are known (its object reader's "not recognized", which is what
 * llvm-symbolizer 14 says of /dev/null; a FIFO it would wait on, where
 * sym refuses it at once with the same words). */
static const char *llvm_strerror(int err, char *buf, size_t len)
{
	if (err == -SYM_E_NOTELF || err == -SYM_E_BADELF ||
	    err == -SYM_E_NOTREG)
		return "The file was not recognized as a valid object file";
	if (err < 0 && err > -SYM_E_BASE)
		return strerror(-err);
	return sym_strerror(err, buf, len);
}

/*
 * handle_llvm() - answer one input of llvm-symbolizer: every input has
 * an answer, and none ends the input.
 * @return 0, or an error after which nothing can be answered
 */
static int handle_llvm(struct a2l *a, const char *input)
{
	struct llvm_input in;
	char buf[256], *name;
	uint64_t addr;
	int err;

	if (!llvm_parse(a, input, &in)) {
		err = flush(a);
		if (err)
			return err;
		name = strndup(in.file, in.file_len);
		if (!name)
			return -ENOMEM;
		if (a->style == STYLE_JSON)
			print_json_error(a, input, name);
		else
			print_invalid(a, input);
		free(name);
		return 0;
	}
	err = file_use(a, in.file, in.file_len);
	if (err)
		return err;
	if (in.cmd != CMD_CODE || a->cur->err) {
		err = flush(a);
		if (err)
			return err;
	}
	a->cmd = in.cmd;
	addr = in.addr - a->adjust;
	if (a->cur->err) {
		if (!a->cur->reported) {
			a->cur->reported = true;
			print_file_error(a, in.addr, llvm_strerror(a->cur->err,
							buf, sizeof(buf)));
		} else {
			a->no_module = true;
			if (in.cmd == CMD_FRAME)
				print_frame_none(a, in.addr);
			else
				emit(a, in.addr, NULL, 0);
			a->no_module = false;
		}
	} else if (in.cmd == CMD_CODE) {
		err = queue(a, addr);
	} else if (in.cmd == CMD_DATA) {
		addr -= a->ktext;	/* (as queue() does) */
		err = answer(a, &addr, 1);
	} else {
		if (!a->frame_warned)
			tool_err("FRAME: sym keeps no local variables; each "
				 "FRAME input is answered as for a function "
				 "without any");
		a->frame_warned = true;
		print_frame_none(a, in.addr);
	}
	a->cmd = CMD_CODE;
	return err;
}

/*
 * handle() - answer one input.  Hex addresses are queued and answered in
 * batches (flush_batch()); anything else first answers the queue, so the
 * answers and messages stay in input order.
 * @return 0, or a negative error when the input was not understood or
 *         could not be answered
 */
static int handle(struct a2l *a, const char *input)
{
	uint64_t addr = 0;
	int err;

	if (a->fatal)
		return -ECANCELED;
	if (a->input == A2L_INPUT_LLVM)
		return handle_llvm(a, input);
	if (a->input == A2L_INPUT_GNU)
		return handle_gnu(a, input);
	if (tool_parse_hex(input, &addr) == 0)
		return queue(a, addr);
	err = flush_batch(a);
	if (!err)
		err = pool_drain(a);
	if (err)
		return err;
	err = resolve_symbol(a, input, &addr);
	if (err) {
		emit_unknown(a, input);
		return err;
	}
	return answer(a, &addr, 1);
}

/* parse_uint() - @s as a decimal number up to @max.  0 or -EINVAL. */
static int parse_uint(const char *s, unsigned long max, unsigned *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/* --threads N: 1 to POOL_MAX_WORKERS; a message and -EINVAL else (out of
 * parse_args() to keep it short). */
static int parse_threads(struct a2l *a, const char *arg)
{
	if (parse_uint(arg, POOL_MAX_WORKERS, &a->threads) || a->threads < 1) {
		tool_err("--threads: '%s' is not a number from 1 to %d", arg,
			 POOL_MAX_WORKERS);
		return -EINVAL;
	}
	return 0;
}

/* --server, --wait-ms, --partial (sym lookup only).  Returns 0, or
 * -EINVAL (printed). */
static int parse_server_opt(struct a2l *a, int c, const char *arg)
{
	if (!a->lookup) {
		tool_err("--server, --wait-ms, --partial: only sym lookup "
			 "asks a server");
		return -EINVAL;
	}
	if (c == OPT_SERVER) {
		a->server = arg;
	} else if (c == OPT_PARTIAL) {
		a->partial = true;
	} else if (parse_uint(arg, 9999999, &a->wait_ms)) {
		tool_err("--wait-ms: '%s' is not a number of milliseconds",
			 arg);
		return -EINVAL;
	}
	return 0;
}

/* --lazy=WHEN.  Returns 0, or -EINVAL (printed). */
static int parse_lazy(struct a2l *a, const char *s)
{
	if (strcmp(s, "auto") == 0) {
		a->lazy_when = LAZY_AUTO;
	} else if (strcmp(s, "always") == 0) {
		a->lazy_when = LAZY_ALWAYS;
	} else if (strcmp(s, "never") == 0) {
		a->lazy_when = LAZY_NEVER;
	} else {
		tool_err("--lazy: '%s' is not auto, always or never", s);
		return -EINVAL;
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
			/* Accepted for compatibility; nothing to change (-A is
			 * what sym prints anyway). */
			break;
		case OPT_RELATIVE:
			tool_err("--relative (eu-addr2line's) is not supported: "
				 "--relativenames prints file names without the "
				 "compilation directory, as llvm-symbolizer does");
			return -EINVAL;
		case 'e':
			a->exe = optarg;
			if (a->lookup)
				goto file_opt;
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
		case OPT_NO_PLT_NAMES:
			a->plt = false;
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
		case OPT_RELATIVENAMES:
			a->relnames = true;
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
			if (a->lookup)
				goto file_opt;
			err = tool_dirs_add(&a->dirs, optarg);
			if (err) {
				tool_err("--debuginfo-path: %s",
					 err == -ENOMEM ? "out of memory" :
					 "too many directories");
				return err;
			}
			break;
		case OPT_DEBUG_FILE:
			if (a->lookup)
				goto file_opt;
			a->debug_file = optarg;
			break;
		case OPT_OUTPUT_STYLE:
			if (parse_style(optarg, &a->style)) {
				tool_err("unknown output style '%s' (GNU, "
					 "LLVM, JSON or elfutils)", optarg);
				return -EINVAL;
			}
			break;
		case OPT_PID:
		case OPT_CORE:
			*(c == OPT_PID ? &a->rt_pid : &a->rt_core) = optarg;
			break;
		case OPT_STORE:
			a->store_dir = optarg;
			break;
		case OPT_NO_CACHE:
			if (a->lookup) {
				tool_err("--no-cache: sym lookup answers from "
					 "the store only");
				return -EINVAL;
			}
			a->no_cache = true;
			break;
		case OPT_STATS:
			a->stats = true;
			break;
		case OPT_THREADS:
		case OPT_LAZY:
			if (c == OPT_LAZY ? parse_lazy(a, optarg) :
					    parse_threads(a, optarg))
				return -EINVAL;
			break;
		case OPT_SERVER:
		case OPT_WAIT_MS:
		case OPT_PARTIAL:
			if (parse_server_opt(a, c, optarg))
				return -EINVAL;
			break;
		case 'h':
			usage(stdout, a->lookup);
			return 1;
		case 'V':
		case OPT_VERSION:
			printf("sym %s (symd) %s\n",
			       a->lookup ? "lookup" : "addr2line",
			       SYM_VERSION);
			return 1;
		default:
			usage(stderr, a->lookup);
			return -EINVAL;
		}
	}
	return 0;
file_opt:
	tool_err("sym lookup takes no file (-e, --debug-file, "
		 "--debuginfo-path): it answers from the store; see "
		 "'sym addr2line'");
	return -EINVAL;
}

/*
 * gnu_file_error() - why binutils 2.40 addr2line cannot read @path, as it
 * says it once the file is known to be a regular file (tools/compat.c
 * checks that first, as get_file_size() does): bfd's "file format not
 * recognized", else the system's reason.
 */
static void gnu_file_error(const char *path, int err)
{
	char buf[256];

	if (err == -SYM_E_NOTELF || err == -SYM_E_BADELF)
		tool_err("%s: file format not recognized", path);
	else if (err < 0 && err > -SYM_E_BASE)
		tool_err("%s: %s", path, strerror(-err));
	else
		tool_err("%s: %s", path, sym_strerror(err, buf, sizeof(buf)));
}

/*
 * fetch_debuginfo() - no debug file was found for the module: ask the
 * debuginfod servers of $DEBUGINFOD_URLS for it, as eu-addr2line does
 * (tools/debuginfod.c), after the store's file area, which keeps the
 * files fetched before.  A fetched file is put into the file area, and
 * the module is opened again with it, before any table is built: the
 * table is built once, with its DWARF, and stored.  On failure the
 * answers come from the symbols, as eu-addr2line's do (its exit status
 * stays 0 too), after one line saying why.
 */
static void fetch_debuginfo(struct a2l *a)
{
	SYM_OPTS(sym_module_opts, opts, .debuginfo_path = a->dirs.n ?
					  a->dirs.dirs : NULL,
		 .spelling = a2l_spelling);
	char stored[4096], why[512];
	struct sym_module *mod = NULL;
	char *fetched = NULL;
	double t0 = now_ms();
	int err;

	if (a->debug_file || sym_module_debug_file(a->mod) || !a->build_id ||
	    !tool_debuginfod_enabled())
		return;
	if (a->store && sym_store_file_path(a->store, a->build_id,
					    SYM_STORE_DEBUGINFO, stored,
					    sizeof(stored)) == 0) {
		opts.debug_file = stored;
	} else {
		err = tool_debuginfod_find(a->build_id, &fetched, why,
					   sizeof(why));
		a->t_fetch = now_ms() - t0;
		if (!err && (sym_file_build_id(fetched, stored,
					       sizeof(stored)) != 0 ||
			     strcmp(stored, a->build_id) != 0)) {
			snprintf(why, sizeof(why), "the file a server sent for "
				 "build ID %s has another build ID", a->build_id);
			err = -EXDEV;
		}
		if (err) {
			tool_err("'%s': no debug info, here or from "
				 "DEBUGINFOD_URLS: %s", a->exe, why);
			free(fetched);
			return;
		}
		opts.debug_file = fetched;
		if (a->store && sym_store_put_file(a->store, a->build_id,
						   SYM_STORE_DEBUGINFO,
						   fetched) == 0 &&
		    sym_store_file_path(a->store, a->build_id,
					SYM_STORE_DEBUGINFO, stored,
					sizeof(stored)) == 0)
			opts.debug_file = stored;
		a->fetched = true;
	}
	err = sym_module_open(a->exe, &opts, &mod);
	if (err) {
		tool_err("'%s': cannot use the debug file '%s': %s", a->exe,
			 opts.debug_file, sym_strerror(err, why, sizeof(why)));
	} else {
		sym_module_close(a->mod);
		a->mod = mod;
		a->build_id = sym_module_build_id(mod);
	}
	free(fetched);
}

/* Is the lazy path worth it for a->mod (see LAZY_MAX)? */
static bool want_lazy(const struct a2l *a)
{
	const char *dbg = sym_module_debug_file(a->mod);
	struct stat st;

	/* llvm-symbolizer's input switches files, each with its table
	 * (file_save()): those build them. */
	if (a->lazy_when == LAZY_NEVER || a->input == A2L_INPUT_LLVM)
		return false;
	if (a->lazy_when == LAZY_ALWAYS)
		return true;
	if (dbg)
		return stat(dbg, &st) == 0 && st.st_size >= LAZY_MIN_SIZE;
	return go_table_size(a->exe) >= LAZY_GO_MIN;
}

/*
 * open_module() - open -e FILE and get its table: from the store when it
 * has a current one for the file's build ID (then no DWARF is read),
 * else built and stored.  On failure one line is printed:
 * "sym addr2line: 'FILE': <what> (<libsym's last message>)".
 */
/* How long to wait for another process converting the same build ID. */
#define LOCK_WAIT_MS (10 * 60 * 1000)

/*
 * kernel_text() - a Linux kernel's table holds offsets from its _text
 * (docs/design.md, "The kernel"), but its addresses are given as every
 * peer takes them, link-time (nm's, eu-addr2line's, llvm-symbolizer's):
 * a->ktext is subtracted from each input and added back to the printed
 * address.  0 for any other file.
 */
static void kernel_text(struct a2l *a)
{
	a->ktext = 0;
	/* (ET_DYN too: an arm64 vmlinux is linked -pie) */
	if ((a->info.elf_type == ET_EXEC || a->info.elf_type == ET_DYN) &&
	    sym_file_kernel_text(a->exe, &a->ktext) != 0)
		a->ktext = 0;
}

static int open_module(struct a2l *a)
{
	SYM_OPTS(sym_module_opts, opts, .debug_file = a->debug_file,
		 .debuginfo_path = a->dirs.n ? a->dirs.dirs : NULL,
		 .spelling = a2l_spelling);
	struct sym_store_lock *lock = NULL;
	char buf[256];
	double t0;
	int err;

	held.hold = true;
	t0 = now_ms();
	err = sym_module_open(a->exe, &opts, &a->mod);
	a->t_open = now_ms() - t0;
	if (err)
		goto out;
	sym_module_info(a->mod, &a->info);
	a->width = a->info.elf_class == 32 ? 8 : 16;
	kernel_text(a);
	a->build_id = sym_module_build_id(a->mod);
	if (a->no_cache)
		a->not_cached = "--no-cache";
	else if (!a->build_id)
		a->not_cached = "the file has no build ID";
	else if (!a->store && (a->store_failed || open_store(a)))
		a->not_cached = "the store could not be opened";
	else
		a->from_cache = store_has_table(a);
	if (!a->from_cache && a->store && a->build_id) {
		/* Another sym converting the same file: wait for its table
		 * rather than build it twice. */
		int waited = 0;

		t0 = now_ms();
		if (sym_store_lock(a->store, a->build_id, LOCK_WAIT_MS,
				   &lock, &waited) == 0 && waited)
			a->from_cache = store_has_table(a);
		a->t_wait = waited ? now_ms() - t0 : 0;
	}
	if (!a->from_cache) {
		fetch_debuginfo(a);
		a->lazy = want_lazy(a);
		if (!a->lazy)
			err = build_table(a);
	}
	sym_store_unlock(lock);
out:
	if (!err) {
		release_held();
		return 0;
	}
	if (a->input != A2L_INPUT_SYM) {
		/* The imitations say it their peer's way. */
		held.hold = false;
		held.n = 0;
		if (a->input == A2L_INPUT_GNU)
			gnu_file_error(a->exe, err);
		return err;
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

/*
 * open_lookup() - `sym lookup`: the store must have a current table for
 * the build ID, or the command says why not and fails.
 */
static int open_lookup(struct a2l *a)
{
	struct sym_store_entry e;
	char buf[256];
	int err;

	err = open_store(a);
	if (err) {
		release_held();
		tool_err("cannot open the store '%s': %s", a->store_path,
			 sym_strerror(err, buf, sizeof(buf)));
		return err;
	}
	release_held();
	err = sym_store_stat_entry(a->store, a->build_id, &e);
	if (err == -SYM_E_NOTFOUND) {
		tool_err("no table for build ID %s in store '%s'", a->build_id,
			 a->store_path);
		return err;
	}
	if (err) {
		tool_err("store '%s': %s", a->store_path,
			 sym_strerror(err, buf, sizeof(buf)));
		return err;
	}
	if (e.negative) {
		tool_err("no table for build ID %s in store '%s' (%s%s%s)",
			 a->build_id, a->store_path, tool_negative_name(e.negative),
			 e.text[0] ? ": " : "", e.text);
		return -SYM_E_NOTFOUND;
	}
	if (e.format != SYM_TABLE_FORMAT ||
	    e.converter != sym_converter_version())
		return cache_failed(a, -SYM_E_STALE);
	a->from_cache = true;
	return 0;
}

static void print_stats(struct a2l *a)
{
	if (a->t_wait > 0)
		tool_err("stats: waited %.3f ms for another process converting "
			 "build ID %s", a->t_wait, a->build_id);
	if (a->from_cache) {
		tool_err("stats: table from cache (build ID %s, store '%s')",
			 a->build_id, a->store_path);
		tool_err("stats: open %.3f ms, store open %.3f ms, cache read "
			 "and lookups %.3f ms for %zu addresses", a->t_open,
			 a->t_store, a->t_lookup, a->naddrs);
		return;
	}
	if (a->lookup)
		return;
	if (a->t_fetch > 0)
		tool_err("stats: %s from DEBUGINFOD_URLS in %.3f ms",
			 a->fetched ? "debug file fetched" : "no debug file",
			 a->t_fetch);
	if (a->lazy)
		tool_err("stats: lazy tables, %u for %zu addresses (not cached: "
			 "the whole table was not built)", a->lazy_builds,
			 a->lazy_done);
	else if (a->not_cached)
		tool_err("stats: table from parsing (not cached: %s)",
			 a->not_cached);
	else
		tool_err("stats: table from parsing (%sstored as build ID %s "
			 "in '%s')", a->rebuilt ? "the stored one was "
			 "unusable; " : "", a->build_id, a->store_path);
	if (a->tab || a->lazy_builds) {
		/* (a lazy run's: its last lazy table's) */
		struct sym_table_stat ts = a->lazy_stat;

		if (a->tab)
			sym_table_stat(a->tab, &ts);
		tool_err("stats: table source: %s",
			 ts.flags & SYM_TABLE_DWARF ? "DWARF" :
			 ts.flags & SYM_TABLE_GOPCLNTAB ? "gopclntab" :
			 ts.flags & SYM_TABLE_SYMBOLS ? "symbols" : "none");
	}
	tool_err("stats: open %.3f ms, store open %.3f ms, build %.3f ms, "
		 "put %.3f ms, lookups %.3f ms for %zu addresses", a->t_open,
		 a->t_store, a->t_build, a->t_put, a->t_lookup, a->naddrs);
	if (a->mod) {
		struct sym_module_stats ms;

		sym_module_stats(a->mod, &ms);
		tool_err("stats: build phases: symbols %.3f ms, inflate %.3f "
			 "ms, lines %.3f ms, DIE walk (or gopclntab) %.3f ms, "
			 "table %.3f ms",
			 ms.symbols * 1e3, ms.inflate * 1e3, ms.lines * 1e3,
			 ms.dies * 1e3, ms.build * 1e3);
	}
}

struct stdin_ctx {
	struct a2l *a;
	int status;
};

/*
 * stdin_pieces() - the inputs GNU addr2line and llvm-symbolizer make of
 * one line: they read stdin with fgets() into a buffer of 100 and 1024
 * bytes, so a longer line is several inputs, each answered (the newline
 * alone, too, when the line fills the last piece).  llvm-symbolizer then
 * removes every '\r' and '\n'.  (A last line without a newline is read
 * as if it had one; lines beyond TOOL_LINE_MAX are cut.)
 */
static int stdin_pieces(struct a2l *a, const char *line)
{
	/* Its end, or for llvm its first '\r', in one pass. */
	const char *cr = a->input == A2L_INPUT_GNU ? line + strlen(line) :
			 strchrnul(line, '\r');
	size_t len = (size_t)(cr - line), piece, i, j, k;
	char buf[1024];
	int err = 0;

	piece = a->input == A2L_INPUT_GNU ? 99 : sizeof(buf) - 1;
	/* One piece with nothing to remove, the usual line: as it is. */
	if (len < piece && !*cr)
		return handle(a, line);
	len += strlen(cr);
	for (i = 0; i <= len && !err; i += piece) {
		for (j = i, k = 0; j < len && j < i + piece; j++)
			if (a->input == A2L_INPUT_GNU || line[j] != '\r')
				buf[k++] = line[j];
		buf[k] = '\0';
		err = handle(a, buf);
	}
	return err;
}

static int stdin_line(void *ctx, char *line)
{
	struct stdin_ctx *c = ctx;
	uint64_t addr;
	char *s;
	int err;

	if (c->a->input != A2L_INPUT_SYM) {
		err = stdin_pieces(c->a, line);
	} else if (!c->a->fatal && tool_parse_hex(line, &addr) == 0) {
		/* A bare hex address: no trimming, and straight to the
		 * batch, as handle() would queue it. */
		err = queue(c->a, addr);
	} else {
		s = tool_trim(line);
		if (*s == '\0')
			return 0;
		err = handle(c->a, s);
	}
	if (err)
		c->status = TOOL_EXIT_FAIL;
	return c->a->fatal;
}

/*
 * stdin_lines() - the lines of one read(2).  The usual line, a bare hex
 * address and its newline, is queued straight from the buffer, as
 * stdin_line() would queue it, without a search for its newline or a
 * call of its own; every other line is stdin_line()'s.
 */
static int stdin_lines(void *ctx, char *lines, size_t len)
{
	struct stdin_ctx *c = ctx;
	struct a2l *a = c->a;
	char *end = lines + len, *next;
	const char *e;
	uint64_t addr;
	int rc;

	if (a->input != A2L_INPUT_SYM)
		return tool_each_line(lines, len, stdin_line, ctx);
	while (lines < end) {
		const char *cl = lines;
		uint64_t got[64];
		size_t n;

		/* Lines of digits, the common case, a block at a time while
		 * the chunk has the bytes tool_hex_lines() reads; the rest
		 * one by one. */
		while (!a->fatal && end - lines >= TOOL_HEX_LINES_READ) {
			if (queue_room(a, 64)) {
				/* Into the batch itself. */
				uint64_t *d = a->batch + a->nbatch;

				n = tool_hex_lines(&cl, d);
				for (size_t i = 0; a->ktext && i < n; i++)
					d[i] -= a->ktext;
				a->nbatch += n;
			} else {
				n = tool_hex_lines(&cl, got);
				for (size_t i = 0; i < n && !a->fatal; i++) {
					if (queue(a, got[i]))
						c->status = TOOL_EXIT_FAIL;
				}
				if (a->fatal)
					return 1;
			}
			lines = (char *)cl;
			if (!n)
				break;
		}
		if (lines >= end)
			break;
		if (!a->fatal && tool_scan_hex(lines, &addr, &e) == 0 &&
		    *e == '\n') {
			if (queue(a, addr))
				c->status = TOOL_EXIT_FAIL;
			if (a->fatal)
				return 1;
			lines = (char *)e + 1;
			continue;
		}
		next = tool_line_cut(lines, end);
		rc = stdin_line(ctx, lines);
		if (rc)
			return rc;
		lines = next;
	}
	return 0;
}

static int stdin_flush(void *ctx)
{
	struct stdin_ctx *c = ctx;

	if (flush_batch(c->a) || pool_drain(c->a) || ob_flush(c->a->ob))
		c->status = TOOL_EXIT_FAIL;
	return c->a->fatal;
}

/*
 * The co-process contract: one answer per line, out before the next line
 * is waited for.  tool_read_lines_batch() answers the queued lines and
 * flushes before each blocking read, so a pipe full of addresses is still
 * answered in large batches and large writes.
 */
static int run_stdin(struct a2l *a)
{
	struct stdin_ctx c = { .a = a, .status = TOOL_EXIT_OK };
	int err;

	a->from_stdin = true;
	/* GNU's names depend on the order of the lookups (gnu_name()). */
	if (a->style == STYLE_GNU && a->functions)
		a->threads = 1;
	if (a->threads > 1 && !a->client &&
	    pool_new(a->threads, run_job, &a->pool))
		a->pool = NULL;		/* answer on this thread */
	err = tool_read_lines_batch(STDIN_FILENO, stdin_lines, stdin_flush,
				    &c);
	/* Input that ended on an error still gets the answers queued. */
	if (pool_drain(a))
		c.status = TOOL_EXIT_FAIL;
	pool_free(a->pool);
	a->pool = NULL;
	while (a->spare) {
		struct job *j = a->spare;

		a->spare = j->next;
		job_free(j);
	}
	if (err < 0) {
		tool_err("reading standard input: %s", strerror(-err));
		c.status = TOOL_EXIT_FAIL;
	}
	if (a->fatal)
		c.status = TOOL_EXIT_FAIL;
	return c.status;
}

/* a2l_new() - a struct a2l with the defaults; NULL when out of memory. */
static struct a2l *a2l_new(bool lookup)
{
	struct a2l *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->lookup = lookup;
	a->wait_ms = 10000;
	a->plt = true;
	a->exe = "a.out";
	a->width = 16;
	/* Answers go out in writes of up to OB_SINK_SIZE, and before
	 * every blocking read (co-process use). */
	symi_buf_init(&stdout_ob.b, OB_SINK_SIZE);
	stdout_ob.slab = false;
	stdout_ob.sink = stdout;
	stdout_ob.err = false;
	a->ob = &stdout_ob;
	a->threads = pool_default_workers();
	return a;
}

static void a2l_free(struct a2l *a)
{
	files_free(a);
	client_free(a->client);
	sym_store_close(a->store);
	sym_module_close(a->mod);
	tool_dirs_release(&a->dirs);
	free(a->batch);
	free(a->dm);
	seen_free(a);
	if (dcache_key_ok) {
		dcache_free(pthread_getspecific(dcache_key));
		pthread_setspecific(dcache_key, NULL);
	}
	if (a->json_tmp)
		symi_buf_release(&a->json_tmp->b);
	free(a->json_tmp);
	ob_release(&stdout_ob);
	free(a);
}

/*
 * a2l_inputs() - answer @inputs, or stdin when there are none, once the
 * file is open (or, for llvm-symbolizer's inputs, each input opens its
 * own); then the --stats.
 * @return the exit status
 */
static int a2l_inputs(struct a2l *a, int n, char **inputs)
{
	int status = TOOL_EXIT_OK, i;

	if (n == 0) {
		status = run_stdin(a);
	} else {
		for (i = 0; i < n && !a->fatal; i++)
			if (handle(a, inputs[i]))
				status = TOOL_EXIT_FAIL;
		if (flush_batch(a) || a->fatal)
			status = TOOL_EXIT_FAIL;
		if (a->style == STYLE_JSON)
			json_list_end(a);
	}
	if (ob_flush(a->ob) || fflush(stdout) != 0)
		status = TOOL_EXIT_FAIL;
	if (a->stats)
		print_stats(a);
	return status;
}

int a2l_run(const struct a2l_opts *o, int ninputs, char **inputs)
{
	struct a2l *a;
	int status = TOOL_EXIT_FAIL;
	size_t i;

	a = a2l_new(false);
	if (!a) {
		tool_err("out of memory");
		return TOOL_EXIT_FAIL;
	}
	a->input = o->input;
	a->llvm = o->input == A2L_INPUT_LLVM;
	/* The peers' own answer for a PLT stub: ?? for GNU, llvm's symbol
	 * (_init) for llvm-symbolizer. */
	a->plt = false;
	a->style = o->style;
	a->functions = o->names != A2L_NAMES_NONE;
	a->short_names = o->names == A2L_NAMES_SHORT;
	a->addresses = o->addresses;
	a->inlines = o->inlines;
	a->demangle = o->demangle;
	a->pretty = o->pretty;
	a->basenames = o->basenames;
	a->relnames = o->relative_names;
	a->debug_file = o->debug_file;
	a->adjust = o->adjust_vma;
	a->section = o->section;
	a->section_vma = o->section_vma;
	a->section_size = o->section_size;
	if (o->section)
		a->adjust = 0 - o->section_vma;
	for (i = 0; o->debuginfo_path && o->debuginfo_path[i]; i++)
		if (tool_dirs_add(&a->dirs, o->debuginfo_path[i])) {
			tool_err("too many debug file directories");
			goto out;
		}
	if (a->llvm && a->style == STYLE_JSON && a->pretty) {
		/* Indented JSON is rare: its answers are written on this
		 * thread, through a buffer of their own. */
		a->threads = 1;
		a->json_tmp = calloc(1, sizeof(*a->json_tmp));
		if (!a->json_tmp) {
			tool_err("out of memory");
			goto out;
		}
		symi_buf_init(&a->json_tmp->b, OB_JOB_MAX);
	}
	sym_set_log(log_fn, NULL, 0);
	if (a->llvm) {
		a->obj = o->exe && *o->exe ? o->exe : NULL;
		a->obj_len = a->obj ? strlen(a->obj) : 0;
	} else {
		if (o->exe)
			a->exe = o->exe;
		a->module_name = a->exe;
		if (open_module(a))
			goto out;
	}
	status = a2l_inputs(a, ninputs, inputs);
out:
	a2l_free(a);
	return status;
}

/* Runtime addresses (--pid, --core): each run of them in one file is
 * answered by a fresh engine parsed from the same command line, with the
 * file as -e (stack_a2l.c). */
struct rt_args {
	int argc;
	char **argv;
};

static int rt_answer(void *ctx, const char *path, int n, char **addrs)
{
	const struct rt_args *r = ctx;
	struct a2l *a = a2l_new(false);
	int status = TOOL_EXIT_FAIL;

	if (!a)
		return TOOL_EXIT_FAIL;
	optind = 0;
	if (parse_args(a, r->argc, r->argv) == 0) {
		a->exe = path;
		a->module_name = path;
		status = open_module(a) ? TOOL_EXIT_FAIL
					: a2l_inputs(a, n, addrs);
	}
	a2l_free(a);
	return status;
}

int tool_addr2line(int argc, char **argv, bool lookup)
{
	struct rt_args rt = { argc, argv };
	struct a2l *a;
	int status = TOOL_EXIT_OK;
	int err;

	a = a2l_new(lookup);
	if (!a) {
		tool_err("out of memory");
		return TOOL_EXIT_FAIL;
	}
	err = parse_args(a, argc, argv);
	if (err) {
		status = err > 0 ? TOOL_EXIT_OK : TOOL_EXIT_USAGE;
		goto out;
	}
	sym_set_log(log_fn, NULL, 0);
	if (lookup) {
		if (optind == argc) {
			usage(stderr, true);
			status = TOOL_EXIT_USAGE;
			goto out;
		}
		if (!tool_valid_build_id(argv[optind])) {
			tool_err("'%s' is not a build ID (2 to 128 hex "
				 "digits)", argv[optind]);
			status = TOOL_EXIT_USAGE;
			goto out;
		}
		a->build_id = argv[optind++];
		a->module_name = a->build_id;
		/* No file, so no ELF header: print addresses with 16
		 * digits, and name an address without a symbol as
		 * libdwfl does in a shared object or PIE. */
		a->info.elf_class = 64;
		a->info.elf_type = 3;
		a->server = client_env_server(a->server, a->store_dir);
		if (!a->server) {
			err = open_lookup(a);
		} else if (a->store_dir) {
			tool_err("--store, --server: sym lookup answers from "
				 "one of them");
			status = TOOL_EXIT_USAGE;
			goto out;
		} else if ((err = client_new(a->server, LOOKUP_STALL,
					     &a->client)) == -EINVAL) {
			tool_err("%s: '%s' is not an http:// or https:// "
				 "URL", a->server == getenv("SYM_SERVER") ?
				 "SYM_SERVER" : "--server", a->server);
			status = TOOL_EXIT_USAGE;
			goto out;
		} else if (err) {
			tool_err("out of memory");
		} else {
			client_accept_partial(a->client, a->partial);
		}
	} else if (a->rt_pid || a->rt_core) {
		status = stack_addr2line(a->rt_core, a->rt_pid, argc - optind,
					 argv + optind, rt_answer, &rt);
		goto out;
	} else {
		a->module_name = a->exe;
		err = open_module(a);
	}
	if (err) {
		status = TOOL_EXIT_FAIL;
		goto out;
	}
	status = a2l_inputs(a, argc - optind, argv + optind);
out:
	a2l_free(a);
	return status;
}

int cmd_addr2line(int argc, char **argv)
{
	return tool_addr2line(argc, argv, false);
}
