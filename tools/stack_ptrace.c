/*
 * stack_ptrace.c - the live input of `sym stack -p PID`: a snapshot of a
 * running process.
 *
 * Each thread of /proc/PID/task is seized (PTRACE_SEIZE: no signal is
 * sent, so a process stopped by SIGSTOP stays stopped and one running
 * carries on as if nothing happened) and interrupted (PTRACE_INTERRUPT);
 * once it reports the stop its registers (PTRACE_GETREGS) and up to
 * STACK_COPY bytes of stack above SP (process_vm_readv(), cut at the end
 * of the mapping) are copied.  Every thread seized is detached before
 * stack_ptrace() returns, on every path, errors included.  Should this
 * process die meanwhile (a signal), the kernel detaches the tracees
 * itself and resumes them: a seized thread is never left stopped.
 *
 * Modules come from /proc/PID/maps: every file mapping, opened through
 * /proc/PID/map_files/ would need CAP_SYS_ADMIN, so the path as mapped,
 * under /proc/PID/root/ (containers); their build IDs are read from the
 * files, which the unwinder checks again when it opens them.  The vDSO's
 * image is copied from the process into a memfd, as a core's is.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "core.h"
#include "stack.h"
#include "tools.h"
#include "grow.h"
#include "base.h"

/* Stack bytes copied per thread at most. */
#define STACK_COPY (512 * 1024)
/* Threads snapshot at most. */
#define MAX_THREADS 4096

/* The end of the mapping that holds @addr, from the maps text. */
static uint64_t map_end(const char *maps, uint64_t addr)
{
	const char *l = maps;

	while (l && *l) {
		uint64_t s, e;

		if (sscanf(l, "%" SCNx64 "-%" SCNx64, &s, &e) == 2 &&
		    addr >= s && addr < e)
			return e;
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	return addr;
}

/* The vDSO's image, read from the process (it needs no stop). */
static int live_vdso(struct stack_snap *s, int pid, uint64_t start,
		     uint64_t end)
{
	struct iovec local, remote;
	ssize_t got;
	void *img;
	int err;

	if (end - start > (1 << 20))
		return 0;
	img = malloc(end - start);
	if (!img)
		return -ENOMEM;
	local.iov_base = img;
	local.iov_len = end - start;
	remote.iov_base = (void *)(uintptr_t)start;
	remote.iov_len = end - start;
	got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	err = got == (ssize_t)(end - start)
		      ? stack_add_vdso(s, img, (size_t)got, start)
		      : 0;
	free(img);
	return err;
}

static int read_maps(struct stack_snap *s, int pid, char **text)
{
	char path[64], line[4096 + 128], file[4096];
	struct stack_mod *m;
	size_t len = 0, cap = 0;
	FILE *f;
	int err = 0;

	*text = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uint64_t st, en, off;
		char perm[8];
		size_t ll = strlen(line);
		int n;

		if (tool_grow(text, &cap, len + ll + 1, 1, 65536)) {
			err = -ENOMEM;
			break;
		}
		memcpy(*text + len, line, ll + 1);
		len += ll;
		n = sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64
			   " %*s %*s %4095[^\n]", &st, &en, perm, &off, file);
		if (n == 5 && strcmp(file, "[vdso]") == 0) {
			err = live_vdso(s, pid, st, en);
			if (err)
				break;
		}
		if (n < 5 || file[0] != '/')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root", pid);
		snprintf(line, sizeof(line), "%s%s", path, file);
		err = stack_add_mod(s, line, st, en, &m);
		if (err)
			break;
		if (off == 0 && !m->base)
			m->base = st;
		if (perm[2] == 'x' && !m->exec_end) {
			m->exec_start = st;
			m->exec_end = en;
			m->exec_pgoff = off;
		}
	}
	fclose(f);
	return err;
}

/* One seized, stopped thread: its registers and stack. */
static int grab(struct stack_thread *t, int pid, const char *maps)
{
	struct user_regs_struct r;
	struct iovec local, remote;
	uint64_t sp, end;
	ssize_t got;

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) != 0)
		return -errno;
	core_regs_from_user((const uint64_t *)&r, t->regs);
	sp = t->regs[UNWIND_REG_SP];
	end = map_end(maps, sp);
	if (end - sp > STACK_COPY)
		end = sp + STACK_COPY;
	if (end <= sp)
		return 0;
	t->stack_own = malloc(end - sp);
	if (!t->stack_own)
		return -ENOMEM;
	local.iov_base = t->stack_own;
	local.iov_len = end - sp;
	remote.iov_base = (void *)(uintptr_t)sp;
	remote.iov_len = end - sp;
	got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	t->stack = t->stack_own;
	t->stack_len = got > 0 ? (size_t)got : 0;
	return 0;
}

/* Seize and interrupt @tid, wait for its stop. */
static int seize(int tid)
{
	int st;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0)
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0 ||
	    waitpid(tid, &st, __WALL) != tid) {
		int err = -errno;

		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return err;
	}
	if (!WIFSTOPPED(st))
		return -ESRCH; /* it died meanwhile: nothing to detach */
	return 0;
}

static void thread_name(struct stack_thread *t, int pid)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, t->tid);
	f = fopen(path, "re");
	if (f && fgets(t->name, sizeof(t->name), f))
		t->name[strcspn(t->name, "\n")] = '\0';
	if (f)
		fclose(f);
}

static int seize_all(struct stack_snap *s, int pid, const char *maps)
{
	char path[64];
	struct dirent *de;
	size_t cap = 0, i, nseized = 0;
	int err = 0, e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d)) && s->nthreads < MAX_THREADS) {
		struct stack_thread *t;
		int tid = stack_parse_pid(de->d_name);

		if (tid <= 0)
			continue;
		if (tool_grow(&s->threads, &cap, s->nthreads + 1,
			      sizeof(*t), 16)) {
			err = -ENOMEM;
			break;
		}
		t = &s->threads[s->nthreads];
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		e = seize(tid);
		if (e == -ESRCH)
			continue; /* the thread exited */
		if (e) {
			err = e;
			break;
		}
		s->nthreads++;
		nseized = s->nthreads;
		thread_name(t, pid);
		err = grab(t, pid, maps);
	}
	closedir(d);
	for (i = 0; i < nseized; i++)
		ptrace(PTRACE_DETACH, s->threads[i].tid, NULL, NULL);
	return err;
}

int stack_maps(struct stack_snap *s, int pid)
{
	char *maps = NULL;
	size_t i;
	int err;

	s->pid = pid;
	err = read_maps(s, pid, &maps);
	free(maps);
	if (err == -ENOENT)
		tool_err("no process %d", pid);
	else if (err)
		tool_err("cannot read the maps of process %d: %s", pid,
			 strerror(-err));
	for (i = 0; !err && i < s->nmods; i++)
		stack_mod_ident(&s->mods[i], NULL, 0);
	return err;
}

int stack_ptrace(struct stack_snap *s, int pid)
{
	char *maps = NULL, path[64];
	FILE *f;
	size_t i;
	int err;

	s->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		if (err == -ENOENT)
			tool_err("no process %d", pid);
		else
			tool_err("cannot read process %d: %s", pid,
				 strerror(-err));
		return err;
	}
	if (fgets(s->comm, sizeof(s->comm), f))
		s->comm[strcspn(s->comm, "\n")] = '\0';
	fclose(f);
	err = read_maps(s, pid, &maps);
	if (err)
		tool_err("cannot read the maps of process %d: %s", pid,
			 strerror(-err));
	else
		err = seize_all(s, pid, maps ? maps : "");
	free(maps);
	if (err == -EPERM)
		tool_err("process %d may not be traced (ptrace: %s): "
			 "already traced, a kernel thread, or see "
			 "kernel.yama.ptrace_scope", pid, strerror(-err));
	else if (err)
		tool_err("cannot stop process %d: %s", pid, strerror(-err));
	if (!err && s->nthreads == 0) {
		tool_err("process %d has gone", pid);
		err = -ESRCH;
	}
	for (i = 0; !err && i < s->nmods; i++)
		stack_mod_ident(&s->mods[i], NULL, 0);
	return err;
}
