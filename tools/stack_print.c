/*
 * stack_print.c - symbolize the PCs of a `sym stack` snapshot and print
 * them, eu-stack's style or JSON (docs/crash.md, sym(1)).
 *
 * A return address is looked up at PC - 1 (the call instruction), an
 * exact PC (the leaf, a frame a signal interrupted) as it is; the
 * "build-ID+offset" printed is that lookup address as an ELF address, the
 * input `sym lookup BUILDID ADDR` takes.  Functions are named as
 * eu-stack names them (show_name()), so that the two can be compared.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "stack.h"
#include "tools.h"
#include "base.h"

/* symd: how long a cold build ID may take, and a stalled answer. */
#define STACK_WAIT_MS 10000
#define STACK_STALL_S 20

struct pr {
	struct stack_snap *s;
	struct sym_store *store;
	/* --server's symd, NULL without it. */
	struct client *client;
	const char **dpath;
	bool inlines, json;
	/* The frame being printed. */
	struct stack_thread *t;
	struct stack_mod *m;
	size_t idx;
	unsigned num;
	uint64_t pc, addr;
	bool first_frame;
};

static const char *mod_name(const struct stack_mod *m)
{
	const char *b;

	if (m->name)
		return m->name;
	b = strrchr(m->path, '/');
	return b ? b + 1 : m->path;
}

/* Whether frame pointers found the PC being printed. */
static bool frame_fp(const struct pr *p)
{
	return p->t->fp && p->t->by_fp[p->idx];
}

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/* The name eu-stack and eu-addr2line give a frame: DWARF's, the linkage
 * name first (of gas's aliases of one range the first, eu_name), else the
 * symbol's; demangled when it is a C++ name.  Owned by the caller when
 * *own is set. */
static const char *show_name(const struct sym_frame *f, char **own)
{
	const char *n = NULL;

	*own = NULL;
	if (f->eu_name)
		n = f->eu_name;
	else if (f->flags & SYM_FRAME_NAME_SYMTAB)
		n = f->name;
	else if (!(f->flags & SYM_FRAME_SYMTAB))
		n = f->linkage_name ? f->linkage_name : f->name;
	if (!n)
		n = f->symbol;
	if (n && n[0] == '_' && n[1] == 'Z') {
		*own = sym_demangle(n);
		if (*own)
			return *own;
	}
	return n;
}

static void print_one(struct pr *p, const struct sym_frame *f, bool inl)
{
	char *own;
	const char *name = f ? show_name(f, &own) : NULL;
	/* A file from the symbol table (the STT_FILE of the local symbol
	 * naming a frame the line table does not cover, such as glibc's
	 * __restore_rt) is no source line: eu-stack prints none. */
	const char *file = f && !(f->flags & SYM_FRAME_FILE_SYMTAB) ?
			   f->file : NULL;

	own = f ? own : NULL;
	if (p->json) {
		printf("%s\n      {\"pc\": \"0x%" PRIx64 "\", \"function\": ",
		       p->first_frame ? "" : ",", p->pc);
		p->first_frame = false;
		if (name)
			json_str(name);
		else
			printf("null");
		printf(", \"file\": ");
		if (file)
			json_str(file);
		else
			printf("null");
		printf(", \"line\": %u, \"column\": %u, \"inlined\": %s, "
		       "\"unwind\": \"%s\"",
		       f ? f->line : 0, f ? f->column : 0,
		       inl ? "true" : "false", frame_fp(p) ? "fp" : "cfi");
		if (p->m) {
			printf(", \"module\": ");
			json_str(mod_name(p->m));
			printf(", \"build_id\": \"%s\", \"offset\": \"0x%" PRIx64
			       "\"", p->m->build_id, p->addr - p->m->bias);
		}
		printf("}");
	} else {
		printf("#%-2u 0x%016" PRIx64 " %s", p->num, p->pc,
		       name ? name : "??");
		if (file) {
			printf(" %s:%u", file, f->line);
			if (f->column)
				printf(":%u", f->column);
		}
		if (inl)
			printf(" (inlined)");
		if (p->m)
			printf(" - %s %s+0x%" PRIx64, mod_name(p->m),
			       p->m->build_id[0] ? p->m->build_id : "?",
			       p->addr - p->m->bias);
		if (frame_fp(p))
			printf(" [fp]");
		putchar('\n');
	}
	free(own);
	p->num++;
}

/* The frames of one address, innermost first. */
static int print_frames(void *ctx, size_t idx, const struct sym_frame *fr,
			size_t n)
{
	struct pr *p = ctx;
	size_t i;

	(void)idx;
	if (n == 0) {
		print_one(p, NULL, false);
		return 0;
	}
	if (!p->inlines) {
		/* The line of the address, the name of the function that
		 * holds it. */
		struct sym_frame f = fr[n - 1];

		f.file = fr[0].file;
		f.line = fr[0].line;
		f.column = fr[0].column;
		print_one(p, &f, false);
		return 0;
	}
	for (i = 0; i < n; i++)
		print_one(p, &fr[i], i + 1 < n);
	return 0;
}

/* A table built from a file's DWARF goes into the store, as `sym
 * addr2line` leaves it, so that the next stack of the same build ID is
 * warm.  A store that cannot take it is no error. */
static void keep_table(struct pr *p, struct stack_mod *m)
{
	const struct sym_table *tab;

	if (!p->store || m->no_dwarf || !m->build_id[0] ||
	    tool_module_table(m->mod, p->store, m->build_id, &tab) != 0)
		return;
	tool_store_put_module(p->store, m->build_id, m->mod, m->path, tab);
}

/* The store's table, else the file with its own or a searched debug
 * file; m->no_dwarf when neither has DWARF. */
static void open_mod(struct pr *p, struct stack_mod *m)
{
	SYM_OPTS(sym_module_opts, mo, .debuginfo_path = p->dpath);

	m->tried = true;
	if (p->store && m->build_id[0] &&
	    sym_store_has_table(p->store, m->build_id)) {
		m->in_store = true;
		return;
	}
	if (sym_module_open(m->path, &mo, &m->mod) != 0)
		m->mod = NULL;
	m->no_dwarf = !m->mod || !sym_module_debug_file(m->mod);
	keep_table(p, m);
}

/* The debug file from debuginfod, after symd had nothing. */
static void open_debuginfod(struct pr *p, struct stack_mod *m)
{
	char why[256], *dbg = NULL;
	struct sym_module *dm = NULL;

	m->dbgd_tried = true;
	if (!m->build_id[0] || !tool_debuginfod_enabled() ||
	    tool_debuginfod_find(m->build_id, &dbg, why, sizeof(why)) != 0)
		return;
	SYM_OPTS(sym_module_opts, dopts, .debug_file = dbg);
	if (sym_module_open(m->path, &dopts, &dm) == 0) {
		sym_module_close(m->mod);
		m->mod = dm;
	}
	free(dbg);
	m->no_dwarf = !m->mod || !sym_module_debug_file(m->mod);
	keep_table(p, m);
}

static void print_pc(struct pr *p)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	struct stack_mod *m = p->m;
	uint64_t faddr;
	size_t n = 0;

	if (!m || !m->have_bias) {
		print_frames(p, 0, fr, 0);
		return;
	}
	if (!m->tried)
		open_mod(p, m);
	m->used = true;
	faddr = p->addr - m->bias;
	if (m->in_store &&
	    sym_store_lookup(p->store, m->build_id, &faddr, 1, print_frames,
			     p) == 0)
		return;
	if (m->no_dwarf && p->client && m->build_id[0] && !m->server_failed) {
		if (client_symbolize(p->client, m->build_id, &faddr, 1,
				     STACK_WAIT_MS, print_frames, p) == 0) {
			m->via_server = true;
			return;
		}
		m->server_failed = true;
	}
	if (m->no_dwarf && !m->dbgd_tried)
		open_debuginfod(p, m);
	if (!m->mod || sym_module_lookup(m->mod, faddr, fr, SYM_MAX_FRAMES,
					 &n) != 0)
		n = 0;
	print_frames(p, 0, fr, n);
}

static void print_thread(struct pr *p, struct stack_thread *t, bool first)
{
	size_t i;

	p->t = t;
	p->num = 0;
	p->first_frame = true;
	if (p->json) {
		printf("%s\n    {\"tid\": %d, \"name\": ", first ? "" : ",",
		       t->tid);
		json_str(t->name);
		printf(", \"signal\": ");
		if (t->signo)
			json_str(sigabbrev_np(t->signo));
		else
			printf("null");
		printf(", \"complete\": %s, \"frames\": [",
		       t->stop == UNWIND_STOP_NONE ? "true" : "false");
	} else {
		printf("TID %d: %s", t->tid, t->name);
		if (t->signo)
			printf(" (SIG%s)",
			       sigabbrev_np(t->signo) ? sigabbrev_np(t->signo)
						      : "?");
		putchar('\n');
	}
	for (i = 0; i < t->npcs; i++) {
		p->idx = i;
		p->pc = t->pcs[i];
		p->addr = t->exact[i] ? p->pc : p->pc - 1;
		p->m = stack_mod_find(p->s, p->addr);
		print_pc(p);
	}
	if (p->json)
		printf("]}");
	else if (t->stop != UNWIND_STOP_NONE)
		printf("   (unwind stopped: %s)\n",
		       t->stop == UNWIND_STOP_NOMAP ? "pc in no mapped file"
		       : t->stop == UNWIND_STOP_NOCFI ? "no CFI"
		       : t->stop == UNWIND_STOP_READ ? "stack not dumped"
		       : t->stop == UNWIND_STOP_DEPTH ? "too deep"
						      : "bad CFI");
}

/* A module's path as its process sees it: without the /proc/PID/root
 * that reaches into its mount namespace. */
static const char *own_path(const char *path)
{
	const char *r;

	if (strncmp(path, "/proc/", 6) != 0)
		return path;
	r = strchr(path + 6, '/');
	return r && strncmp(r, "/root/", 6) == 0 ? r + 5 : path;
}

static int print_missing(struct pr *p)
{
	size_t i, nmiss = 0;

	for (i = 0; i < p->s->nmods; i++) {
		struct stack_mod *m = &p->s->mods[i];

		if (!m->used || !m->no_dwarf || m->via_server || m->name)
			continue;
		if (p->json) {
			printf("%s\n    {\"module\": ", nmiss ? "," : "");
			json_str(own_path(m->path));
			printf(", \"build_id\": \"%s\"}", m->build_id);
		} else {
			if (!nmiss)
				fprintf(stderr, "%s: no debug information "
					"for:\n", tool_prog());
			fprintf(stderr, "  %s %s\n    fix: sym upload "
				"--server=URL --token-file=FILE %s "
				"<its debug file>\n", own_path(m->path),
				m->build_id[0] ? m->build_id : "(no build ID)",
				own_path(m->path));
		}
		nmiss++;
	}
	return 0;
}

int stack_print(struct stack_snap *s, bool inlines, bool json,
		const char *store, const char *server, const char **dpath)
{
	struct pr p = { .s = s, .dpath = dpath, .inlines = inlines,
			.json = json };
	char path[4096];
	size_t i;

	/* The store, created when missing, as sym addr2line does; one
	 * that cannot be opened (read-only, no $HOME) is left out. */
	if (tool_store_open(store, 0, NULL, path, sizeof(path),
			    &p.store) != 0)
		p.store = NULL;
	if (client_env_server(server, NULL) &&
	    client_new(client_env_server(server, NULL), STACK_STALL_S,
		       &p.client) != 0) {
		tool_err("%s: '%s' is not an http:// or https:// URL",
			 server ? "--server" : "SYM_SERVER",
			 client_env_server(server, NULL));
		sym_store_close(p.store);
		return TOOL_EXIT_USAGE;
	}
	if (json) {
		printf("{\"pid\": %d, \"name\": ", s->pid);
		json_str(s->comm);
		printf(", \"partial\": %s, \"threads\": [",
		       s->damage ? "true" : "false");
	} else {
		printf("PID %d - %s\n", s->pid, s->comm);
	}
	for (i = 0; i < s->nthreads; i++)
		print_thread(&p, &s->threads[i], i == 0);
	if (json) {
		printf("\n  ], \"missing\": [");
		print_missing(&p);
		printf("]}\n");
	} else {
		print_missing(&p);
	}
	sym_store_close(p.store);
	client_free(p.client);
	return fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_FAIL;
}
