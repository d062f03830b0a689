/*
 * stack_a2l.c - runtime addresses for `sym addr2line --pid PID` and
 * `--core CORE`, as eu-addr2line's --pid and --core take them.
 *
 * The process's modules (its /proc/PID/maps, or the core's NT_FILE notes
 * and dumped headers) say which file maps each address and with which
 * load bias; each address becomes that file's ELF address, and each run
 * of consecutive addresses in one file is answered by `sym addr2line -e
 * FILE` with the options given (the caller's @answer), so the output is
 * the command's own.  -a prints the ELF address, the one `-e FILE`
 * answers take.  An address in no mapped file is one line on stderr
 * and exit status 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core.h"
#include "stack.h"
#include "tools.h"
#include "base.h"

/* One address as the module's ELF address, in @buf; NULL with the error
 * printed when it is in no mapped ELF file. */
static struct stack_mod *translate(struct stack_snap *s, const char *in,
				   char *buf, size_t len)
{
	struct stack_mod *m;
	uint64_t addr;

	if (tool_parse_hex(in, &addr) != 0) {
		tool_err("'%s' is not a hexadecimal address", in);
		return NULL;
	}
	m = stack_mod_find(s, addr);
	if (!m || !m->have_bias) {
		tool_err("0x%" PRIx64 " is in no mapped ELF file", addr);
		return NULL;
	}
	snprintf(buf, len, "0x%" PRIx64, addr - m->bias);
	return m;
}

static int answer_all(struct stack_snap *s, int n, char **addrs,
		      stack_answer_fn answer, void *ctx)
{
	struct stack_mod *cur = NULL, *m;
	char **run;
	int i, nrun = 0, status = TOOL_EXIT_OK, st;

	run = calloc((size_t)n, sizeof(*run));
	if (!run)
		return TOOL_EXIT_FAIL;
	for (i = 0; i <= n; i++) {
		char buf[32];

		m = i < n ? translate(s, addrs[i], buf, sizeof(buf)) : NULL;
		if (i < n && !m)
			status = TOOL_EXIT_FAIL;
		if (nrun && (m != cur || i == n)) {
			st = answer(ctx, cur->path, nrun, run);
			if (st != TOOL_EXIT_OK)
				status = st;
			while (nrun)
				free(run[--nrun]);
		}
		cur = m;
		if (m) {
			run[nrun] = strdup(buf);
			if (!run[nrun]) {
				status = TOOL_EXIT_FAIL;
				break;
			}
			nrun++;
		}
	}
	while (nrun)
		free(run[--nrun]);
	free(run);
	return status;
}

int stack_addr2line(const char *core, const char *pid, int n, char **addrs,
		    stack_answer_fn answer, void *ctx)
{
	struct stack_snap s = { .vdso_fd = -1 };
	struct core c = { 0 };
	void *map = NULL;
	size_t maplen = 0;
	int err, status, p;

	if (n == 0 || (core && pid)) {
		tool_err("--pid and --core take addresses on the command "
			 "line, and only one of them");
		return TOOL_EXIT_USAGE;
	}
	if (pid) {
		p = stack_parse_pid(pid);
		if (p < 0) {
			tool_err("bad pid '%s'", pid);
			return TOOL_EXIT_USAGE;
		}
		err = stack_maps(&s, p);
	} else {
		err = stack_load_core(&s, core, NULL, &c, &map, &maplen);
	}
	status = err ? TOOL_EXIT_FAIL : answer_all(&s, n, addrs, answer, ctx);
	stack_snap_release(&s);
	core_release(&c);
	if (map)
		munmap(map, maplen);
	return status;
}
