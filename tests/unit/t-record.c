/*
 * t-record.c - unit tests of sym record's modules that need no perf
 * events: the mapping table over time (tools/agent/procmaps.c), with its
 * generations and the times its answers hold from (pm_gen(),
 * pm_find_from(): what the off-CPU event memo keys on), the ELF reader,
 * the call-instruction test of return addresses (tools/agent/retcheck.c),
 * the event memo itself (tools/agent/evmemo.c) and the MMAP2 decoder
 * (tools/agent/perf.c), through their headers; the test links the
 * agent's archive.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/fs.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "agent/evmemo.h"
#include "agent/perf.h"
#include "agent/procmaps.h"
#include "agent/retcheck.h"
#include "kallsyms.h"
#include "base.h"

static int nmap, nunmap, nforget;

static void h_map(void *ctx, const struct pm_map *m)
{
	(void)ctx;
	(void)m;
	nmap++;
}

static void h_unmap(void *ctx, int32_t pid, uint64_t s, uint64_t e)
{
	(void)ctx;
	(void)pid;
	(void)s;
	(void)e;
	nunmap++;
}

static void h_forget(void *ctx, int32_t pid)
{
	(void)ctx;
	(void)pid;
	nforget++;
}

static void test_retcheck(void)
{
	unsigned char b[RETCHECK_BEFORE], at[RETCHECK_AT];
	static const unsigned char sr[RETCHECK_AT] = {
		0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

	memset(at, 0x90, sizeof(at));
#define ENDS(...) do {							\
		static const unsigned char t_[] = { __VA_ARGS__ };	\
		memset(b, 0x90, sizeof(b));				\
		memcpy(b + sizeof(b) - sizeof(t_), t_, sizeof(t_));	\
	} while (0)
	ENDS(0xe8, 0x10, 0x20, 0x00, 0x00);		/* call rel32 */
	CHECK(retcheck_decode(b, at));
	ENDS(0xff, 0xd0);				/* call *%rax */
	CHECK(retcheck_decode(b, at));
	ENDS(0x41, 0xff, 0xd0);				/* call *%r8 */
	CHECK(retcheck_decode(b, at));
	ENDS(0xff, 0x15, 1, 2, 3, 4);			/* call *x(%rip) */
	CHECK(retcheck_decode(b, at));
	ENDS(0xff, 0x54, 0x24, 0x08);			/* call *8(%rsp) */
	CHECK(retcheck_decode(b, at));
	ENDS(0xff, 0x14, 0x25, 1, 2, 3, 4);		/* call *abs32 */
	CHECK(retcheck_decode(b, at));
	ENDS(0xff, 0x90, 1, 2, 3, 4);			/* call *x(%rax) */
	CHECK(retcheck_decode(b, at));
	ENDS(0xff, 0xe0);				/* jmp *%rax */
	CHECK(!retcheck_decode(b, at));
	ENDS(0xc3);					/* ret */
	CHECK(!retcheck_decode(b, at));
	ENDS(0x90);
	CHECK(!retcheck_decode(b, at));
	memcpy(at, sr, sizeof(at));			/* __restore_rt */
	CHECK(retcheck_decode(b, at));
	/* Go's goexit + 1: nop | call goexit1; nop (Go 1.19's bytes). */
	ENDS(0x90);
	memcpy(at, (const unsigned char[]){ 0xe8, 0x1a, 0x27, 0x00, 0x00,
					    0x90, 0xcc, 0xcc, 0xcc }, 9);
	CHECK(retcheck_decode(b, at));
	at[5] = 0xc3;					/* not goexit */
	CHECK(!retcheck_decode(b, at));
#undef ENDS
}

/* A build ID only in an SHT_NOTE section (Go's -ldflags=-B): this
 * program's image with its PT_NOTE segments made PT_NULL. */
static void test_elf_shnote(const char *want)
{
	struct pm_elf e;
	unsigned char *img;
	Elf64_Ehdr *eh;
	size_t len = 0, cap = 1 << 20;
	ssize_t got;
	int fd, nnotes = 0;

	img = malloc(cap);
	CHECK(img != NULL);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	while ((got = read(fd, img + len, cap - len)) > 0) {
		len += (size_t)got;
		if (len == cap) {
			cap *= 2;
			img = realloc(img, cap);
			CHECK(img != NULL);
		}
	}
	close(fd);
	eh = (Elf64_Ehdr *)img;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff +
						i * eh->e_phentsize);

		if (ph->p_type == PT_NOTE) {
			ph->p_type = PT_NULL;
			nnotes++;
		}
	}
	CHECK(nnotes > 0);
	CHECK_ERR(pm_elf_read_mem(img, len, &e), 0);
	CHECK(strcmp(e.build_id, want) == 0);
	/* Without section headers too, the GNU build ID is not found: the
	 * map is named by the image's file ID (libsym/modid.h, checked
	 * against outside vectors in t-modid). */
	eh->e_shoff = 0;
	CHECK_ERR(pm_elf_read_mem(img, len, &e), 0);
	{
		uint8_t id[SYMI_MODID_LEN];
		char hex[2 * SYMI_MODID_LEN + 1];
		size_t n = len < SYMI_MODID_PART ? len : SYMI_MODID_PART;

		symi_modid_file(img, n, img + len - n, n, len, id);
		for (size_t i = 0; i < sizeof(id); i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
		CHECK(strcmp(e.build_id, hex) == 0);
	}
	free(img);
}

static void test_elf(void)
{
	struct pm_elf e;
	char hex[2 * PM_BUILD_ID_MAX + 1];
	uint64_t va;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_ERR(pm_elf_read_fd(fd, &e), 0);
	close(fd);
	CHECK(e.nloads >= 2);
	CHECK_ERR(sym_file_build_id("/proc/self/exe", hex, sizeof(hex)), 0);
	CHECK(strcmp(e.build_id, hex) == 0);

	memset(&e, 0, sizeof(e));
	e.nloads = 2;
	e.loads[0].offset = 0;
	e.loads[0].vaddr = 0x400000;
	e.loads[0].filesz = 0x548;
	e.loads[1].offset = 0x1000;
	e.loads[1].vaddr = 0x401000;
	e.loads[1].filesz = 0x291;
	e.loads[1].exec = true;
	CHECK_ERR(pm_elf_vaddr(&e, 0x1000, &va), 0);
	CHECK(va == 0x401000);
	CHECK_ERR(pm_elf_vaddr(&e, 0x1100, &va), 0);
	CHECK(va == 0x401100);
	CHECK_ERR(pm_elf_vaddr(&e, 0x9000, &va), -SYM_E_NOTFOUND);
	CHECK_ERR(pm_elf_read_mem("\177ELF", 4, &e), -SYM_E_NOTELF);
	test_elf_shnote(hex);
	CHECK_ERR(pm_elf_read_mem("not an elf file at all, really not",
				  34, &e), -SYM_E_NOTELF);
}

/* A PID that does not exist: /proc has nothing, files are never read. */
#define PID 2147483000
#define KID 2147483001

/*
 * The module key a mapping keeps for the address caches (cache_key, hashed
 * once by the table) is the one hashed at each use before it: of the build
 * ID when there is one, else of the path; after a split too; and a mapping
 * made outside the table (no key) gets the same from pm_map_key().
 */
static void test_map_keys(void)
{
	static const unsigned char bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2 };
	struct pm_hooks h = { NULL, NULL, NULL, NULL };
	struct pm *pm = NULL;
	struct pm_map *m, copy;

	CHECK_ERR(pm_new(&h, &pm), 0);
	CHECK_ERR(pm_mmap(pm, PID, 10, 0x1000, 0x4000, 0, NULL, 0,
			  NULL, "/nonexistent/a"), 0);
	CHECK_ERR(pm_mmap(pm, PID, 11, 0x10000, 0x1000, 0, bid, sizeof(bid),
			  NULL, "/nonexistent/b"), 0);
	CHECK_ERR(pm_mmap(pm, PID, 12, 0x2000, 0x1000, 0, NULL, 0,
			  NULL, "/nonexistent/c"), 0);
	m = pm_find(pm, PID, 0x1500, 20);
	CHECK(m && m->cache_key == addrcache_mod("/nonexistent/a"));
	m = pm_find(pm, PID, 0x3500, 20);	/* the part of a after c */
	CHECK(m && m->start == 0x3000 &&
	      m->cache_key == addrcache_mod("/nonexistent/a"));
	m = pm_find(pm, PID, 0x10500, 20);
	CHECK(m && strcmp(m->build_id,
			  "deadbeef01020000000000000000000000000000") == 0 &&
	      m->cache_key == addrcache_mod(m->build_id));
	if (m) {
		copy = *m;
		copy.cache_key = 0;
		CHECK(pm_map_key(&copy) == m->cache_key &&
		      pm_map_key(m) == m->cache_key);
	}
	pm_free(pm);
}

/*
 * A process gone before its mapping is read, whose file has no build ID
 * the kernel could give: the file at the path is taken only when it is the
 * inode the kernel named (device, number, generation).
 */
/*
 * A mapping read after the process went on: the range now holds another
 * file (a library closed and another opened at its address, as
 * fixtures/src/prof_remap.c does).  Here: this process's libc text
 * range, recorded as mapping this test's executable, by the kernel's
 * inode.  map_files names libc; the mapping must get the executable's
 * build ID (its path, vouched for by the inode), not libc's.
 */
static void test_later_mapping(void)
{
	unsigned long long lo = 0, hi = 0, a, b;
	char path[PATH_MAX], line[PATH_MAX + 128], perms[8];
	struct pm *pm = NULL;
	struct pm_inode ino;
	struct pm_elf want;
	struct pm_map *m;
	struct stat st;
	ssize_t n;
	FILE *f;
	int fd;

	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	f = fopen("/proc/self/maps", "re");
	CHECK(n > 0 && f);
	if (n <= 0 || !f)
		return;
	path[n] = '\0';
	while (!lo && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s", &a, &b, perms) == 3 &&
		    perms[2] == 'x' && strstr(line, "/libc.so"))
			lo = a, hi = b;
	fclose(f);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(lo && fd >= 0 && fstat(fd, &st) == 0);
	if (!lo || fd < 0)
		return;
	CHECK_ERR(pm_elf_read_fd(fd, &want), 0);
	close(fd);
	ino = (struct pm_inode){ .dev = st.st_dev, .ino = st.st_ino };
	CHECK_ERR(pm_new(NULL, &pm), 0);
	CHECK_ERR(pm_mmap(pm, (int32_t)getpid(), 10, lo, hi - lo, 0, NULL, 0,
			  &ino, path), 0);
	m = pm_find(pm, (int32_t)getpid(), lo, 11);
	CHECK(m && strcmp(m->build_id, want.build_id) == 0);
	pm_free(pm);
}

static void test_gone_inode(void)
{
	struct pm_hooks h = { NULL, NULL, NULL, NULL };
	struct pm *pm = NULL;
	struct pm_inode ino, bad;
	struct pm_elf want;
	struct pm_map *m;
	struct stat st;
	char path[PATH_MAX];
	ssize_t n;
	int fd, gen = 0;

	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	CHECK(n > 0);
	if (n <= 0)
		return;
	path[n] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	CHECK_ERR(pm_elf_read_fd(fd, &want), 0);
	if (ioctl(fd, FS_IOC_GETVERSION, &gen) != 0)
		gen = 0;
	close(fd);
	ino.dev = st.st_dev;
	ino.ino = st.st_ino;
	ino.gen = (uint32_t)gen;
	CHECK(want.build_id[0] != '\0');

	CHECK_ERR(pm_new(&h, &pm), 0);
	CHECK_ERR(pm_mmap(pm, PID, 10, 0x1000, 0x1000, 0, NULL, 0, &ino,
			  path), 0);
	m = pm_find(pm, PID, 0x1500, 11);
	CHECK(m && strcmp(m->build_id, want.build_id) == 0 &&
	      m->open_path && strcmp(m->open_path, path) == 0);
	/* Another inode number, or (where the file system tells it) another
	 * generation: a file that replaced the mapped one. */
	bad = ino;
	bad.ino++;
	CHECK_ERR(pm_mmap(pm, PID, 12, 0x1000, 0x1000, 0, NULL, 0, &bad,
			  path), 0);
	m = pm_find(pm, PID, 0x1500, 13);
	CHECK(m && m->build_id[0] == '\0' && !m->open_path);
	if (gen) {
		bad = ino;
		bad.gen = (uint32_t)gen + 1;
		CHECK_ERR(pm_mmap(pm, PID, 14, 0x1000, 0x1000, 0, NULL, 0,
				  &bad, path), 0);
		m = pm_find(pm, PID, 0x1500, 15);
		CHECK(m && m->build_id[0] == '\0');
	}
	/* No inode and no build ID: the path is not trusted. */
	CHECK_ERR(pm_mmap(pm, PID, 16, 0x1000, 0x1000, 0, NULL, 0, NULL,
			  path), 0);
	m = pm_find(pm, PID, 0x1500, 17);
	CHECK(m && m->build_id[0] == '\0');
	pm_free(pm);
}

static void test_maps(void)
{
	struct pm_hooks h = { NULL, h_map, h_unmap, h_forget };
	struct pm *pm = NULL;
	struct pm_map *m;

	CHECK_ERR(pm_new(&h, &pm), 0);
	CHECK(pm_find(pm, PID, 0x1500, 5) == NULL);
	/* A [1000, 5000) at t 10; B [2000, 3000) over it at t 20. */
	CHECK_ERR(pm_mmap(pm, PID, 10, 0x1000, 0x4000, 0, NULL, 0,
			  NULL, "/nonexistent/a"), 0);
	CHECK_ERR(pm_mmap(pm, PID, 20, 0x2000, 0x1000, 0x7000, NULL, 0,
			  NULL, "/nonexistent/b"), 0);
	CHECK(nmap == 2 && nunmap == 1);
	m = pm_find(pm, PID, 0x1500, 25);
	CHECK(m && strcmp(m->path, "/nonexistent/a") == 0 && m->start == 0x1000);
	m = pm_find(pm, PID, 0x3500, 25);
	CHECK(m && strcmp(m->path, "/nonexistent/a") == 0);
	/* The part after B keeps A's addresses (A has no file: its vaddr is
	 * its pgoff, 0 at 0x1000): pc - start + vaddr. */
	CHECK(m && m->start == 0x3000 && m->pgoff == 0x2000 &&
	      0x3500 - m->start + m->vaddr == 0x2500);
	m = pm_find(pm, PID, 0x2500, 25);
	CHECK(m && strcmp(m->path, "/nonexistent/b") == 0);
	CHECK(m && m->vaddr == 0x7000 && !m->vaddr_known);
	/* Before t 20 that address was A's. */
	m = pm_find(pm, PID, 0x2500, 15);
	CHECK(m && strcmp(m->path, "/nonexistent/a") == 0 &&
	      0x2500 - m->start + m->vaddr == 0x1500);
	CHECK(pm_find(pm, PID, 0x5000, 25) == NULL);

	/* fork at 22: the child has the parent's mappings. */
	CHECK_ERR(pm_fork(pm, KID, PID, KID, 22), 0);
	m = pm_find(pm, KID, 0x2500, 23);
	CHECK(m && strcmp(m->path, "/nonexistent/b") == 0 && m->pid == KID);

	/* exec at 30: nothing is live, but a sample inside execve() still
	 * resolves to the old image. */
	pm_exec(pm, PID, 30);
	CHECK(nforget == 1);
	m = pm_find(pm, PID, 0x2500, 25);
	CHECK(m && strcmp(m->path, "/nonexistent/b") == 0);
	m = pm_find(pm, PID, 0x2500, 31);
	CHECK(m && strcmp(m->path, "/nonexistent/b") == 0);
	CHECK_ERR(pm_mmap(pm, PID, 32, 0x2000, 0x1000, 0, NULL, 0,
			  NULL, "/nonexistent/c"), 0);
	m = pm_find(pm, PID, 0x2500, 33);
	CHECK(m && strcmp(m->path, "/nonexistent/c") == 0);

	/* An exec whose record comes after the new image's first mapping
	 * (written on another CPU, read a round later): that mapping, of t
	 * 36, outlives the exec of t 35, and is given to the hooks again
	 * after the forget; c, of t 32, dies. */
	CHECK_ERR(pm_mmap(pm, PID, 36, 0x8000, 0x1000, 0, NULL, 0,
			  NULL, "/nonexistent/d"), 0);
	{
		int maps0 = nmap, forgets0 = nforget;

		pm_exec(pm, PID, 35);
		CHECK(nforget == forgets0 + 1 && nmap == maps0 + 1);
	}
	m = pm_find(pm, PID, 0x8500, 37);
	CHECK(m && strcmp(m->path, "/nonexistent/d") == 0);
	m = pm_find(pm, PID, 0x2500, 34);
	CHECK(m && strcmp(m->path, "/nonexistent/c") == 0);
	m = pm_find(pm, PID, 0x2500, 37);	/* (the last that held it) */
	CHECK(m && m->t_end == 35);

	/* Threads and names. */
	CHECK_ERR(pm_comm(pm, PID, PID, "main"), 0);
	CHECK_ERR(pm_fork(pm, PID, PID, PID + 5, 34), 0);
	CHECK(pm_thread(pm, PID + 5) && strcmp(pm_thread(pm, PID + 5),
					       "main") == 0);
	CHECK_ERR(pm_comm(pm, PID, PID + 5, "worker"), 0);
	CHECK(strcmp(pm_thread(pm, PID + 5), "worker") == 0);

	/* exit, then gc past it: the process and its mappings go. */
	pm_exit(pm, KID, KID, 40);
	pm_gc(pm, 39);
	CHECK(pm_known(pm, KID));
	pm_gc(pm, 41);
	CHECK(!pm_known(pm, KID));
	CHECK(nforget == 3);
	/* PID's dead mappings ended at 30 and 35: gone after gc(41); the
	 * live one stays. */
	CHECK(pm_find(pm, PID, 0x1500, 25) == NULL);
	CHECK(pm_find(pm, PID, 0x2500, 34) == NULL);
	CHECK(pm_find(pm, PID, 0x8500, 42) != NULL);
	pm_free(pm);
	pm_free(NULL);
}

/* ---- generations and the times answers hold from ---- */

static const uint64_t grid_pc[] = {
	0x500, 0x1500, 0x2500, 0x3500, 0x4500, 0x5500, 0x8500, 0x9500,
};
#define GRID_T 60

/* Whether every answer of pm_find_from() over the grid holds as it says:
 * for every later time of the grid at or after its from, pm_find() gives
 * the same mapping.  *@stable: answers that hold from some time. */
static bool from_holds(struct pm *pm, int32_t pid, size_t *stable)
{
	for (size_t i = 0; i < sizeof(grid_pc) / sizeof(*grid_pc); i++) {
		for (uint64_t t = 0; t < GRID_T; t++) {
			uint64_t from;
			struct pm_map *m = pm_find_from(pm, pid, grid_pc[i], t,
							&from);

			if (m != pm_find(pm, pid, grid_pc[i], t))
				return false;
			if (from == UINT64_MAX)
				continue;
			if (from > t)
				return false;
			++*stable;
			for (uint64_t u = from; u < GRID_T; u++)
				if (pm_find(pm, pid, grid_pc[i], u) != m)
					return false;
		}
	}
	return true;
}

/* After each change to the mappings of test_maps()'s story, the process's
 * generation is new (never one seen before), the answers hold from the
 * times they say; what changes nothing keeps it. */
static void test_gen_from(void)
{
	struct pm_hooks h = { NULL, NULL, NULL, NULL };
	uint64_t gens[32], g;
	size_t ngens = 0, stable = 0;
	struct pm *pm = NULL;
	bool fresh = true, holds = true;

#define STEP(call) do {							\
		call;							\
		g = pm_gen(pm, PID);					\
		for (size_t i_ = 0; i_ < ngens; i_++)			\
			fresh &= gens[i_] != g;				\
		gens[ngens++] = g;					\
		holds &= from_holds(pm, PID, &stable);			\
	} while (0)

	CHECK_ERR(pm_new(&h, &pm), 0);
	CHECK(pm_gen(pm, PID) == 0);
	STEP(pm_mmap(pm, PID, 10, 0x1000, 0x4000, 0, NULL, 0, NULL,
		     "/nonexistent/a"));
	STEP(pm_mmap(pm, PID, 20, 0x2000, 0x1000, 0x7000, NULL, 0, NULL,
		     "/nonexistent/b"));
	STEP(pm_exec(pm, PID, 30));
	STEP(pm_mmap(pm, PID, 32, 0x2000, 0x1000, 0, NULL, 0, NULL,
		     "/nonexistent/c"));
	STEP(pm_mmap(pm, PID, 36, 0x8000, 0x2000, 0, NULL, 0, NULL,
		     "/nonexistent/d"));
	STEP(pm_exec(pm, PID, 35));
	{
		uint64_t from;

		/* c, dead at 35: an answer that depends on the time */
		CHECK(pm_find_from(pm, PID, 0x2500, 33, &from) != NULL &&
		      from == UINT64_MAX);
	}
	STEP(pm_mmap(pm, PID, 40, 0x9000, 0x1000, 0, NULL, 0, NULL,
		     "/nonexistent/e"));
	STEP(pm_gc(pm, 31));
	STEP(pm_gc(pm, 50));
	CHECK(fresh && ngens == 9);
	CHECK(holds && stable > 0);
	/* (a live mapping's holds from its start; a dead one's never) */
	{
		uint64_t from;

		CHECK(pm_find_from(pm, PID, 0x8500, 45, &from) != NULL &&
		      from == 36);
		CHECK(pm_find_from(pm, PID, 0x2500, 33, &from) == NULL &&
		      from == 0);	/* (collected: none ever held it) */
	}
	/* Nothing that leaves the mappings as they are changes it. */
	g = pm_gen(pm, PID);
	pm_find(pm, PID, 0x2500, 45);
	pm_comm(pm, PID, PID, "x");
	pm_exit(pm, PID, PID + 1, 46);
	pm_gc(pm, 51);
	CHECK(pm_gen(pm, PID) == g);
	/* A fork over a reused pid: the child's new generation. */
	CHECK_ERR(pm_fork(pm, KID, PID, KID, 47), 0);
	g = pm_gen(pm, KID);
	CHECK(g != 0 && g > gens[ngens - 1]);
	pm_exit(pm, KID, KID, 48);
	CHECK_ERR(pm_fork(pm, KID, PID, KID, 49), 0);
	CHECK(pm_gen(pm, KID) > g);
	holds = from_holds(pm, KID, &stable);
	CHECK(holds);
	/* A process forgotten and seen again: a generation never seen. */
	pm_exit(pm, KID, KID, 52);
	pm_gc(pm, 53);
	CHECK(!pm_known(pm, KID) && pm_gen(pm, KID) == 0);
	CHECK_ERR(pm_fork(pm, KID, PID, KID, 54), 0);
	CHECK(pm_gen(pm, KID) > g);
	pm_free(pm);
#undef STEP
}

/* This process's own mappings (pm_scan(), t_start 0): the PCs of its
 * code hold from 0 on, with the mapping pm_find() gives at any time. */
static void test_gen_self(void)
{
	uint64_t pcs[] = { (uint64_t)(uintptr_t)test_gen_self,
			   (uint64_t)(uintptr_t)printf,
			   (uint64_t)(uintptr_t)memcmp,
			   (uint64_t)(uintptr_t)&pcs, 8 };
	int32_t self = (int32_t)getpid();
	struct pm *pm = NULL;
	bool ok = true;
	uint64_t g;

	CHECK_ERR(pm_new(NULL, &pm), 0);
	CHECK_ERR(pm_scan(pm, self), 0);
	g = pm_gen(pm, self);
	CHECK(g != 0);
	for (size_t i = 0; i < sizeof(pcs) / sizeof(*pcs); i++) {
		uint64_t from;
		struct pm_map *m = pm_find_from(pm, self, pcs[i], 1000, &from);

		/* code: a live mapping from 0; a stack or null address: in
		 * no mapping, ever (NULL from 0) */
		ok &= from == 0 && (i >= 3 ? m == NULL : m != NULL);
		for (uint64_t t = 0; t < 2000000000000ULL; t += 99999999999ULL)
			ok &= pm_find(pm, self, pcs[i], t) == m;
	}
	CHECK(ok);
	CHECK(pm_gen(pm, self) == g);
	pm_free(pm);
}

/* ---- the event memo ---- */

/* A result of @n frames made from @seed. */
static void memo_res(struct sym_prof_frame *f, uint32_t n, uint64_t seed,
		     struct evmemo_res *r)
{
	for (uint32_t i = 0; i < n; i++) {
		f[i].addr = seed * 7919 + i;
		f[i].map = (uint32_t)(seed + i) % 5;
		f[i].flags = i > 0;
	}
	*r = (struct evmemo_res){ .frames = f, .nframes = n,
				  .flags = (uint32_t)seed & 3,
				  .aux = { (uint32_t)seed, 1 } };
}

static bool res_eq(const struct evmemo_res *a, const struct evmemo_res *b)
{
	return a->nframes == b->nframes && a->flags == b->flags &&
	       memcmp(a->aux, b->aux, sizeof(a->aux)) == 0 &&
	       memcmp(a->frames, b->frames,
		      a->nframes * sizeof(*a->frames)) == 0;
}

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/*
 * The memo's mechanics: an answer only for the very key stored (any word
 * changed, or one fewer, misses), only at or after its time, nothing when
 * off or for a result not to be kept; then a model: thousands of puts
 * and finds over 600 keys, each answer the last result put for its key
 * at a time it holds for, and no more answers than the memo's slots.
 */
static void test_evmemo(void)
{
	static struct sym_prof_frame f[EVMEMO_FRAMES_MAX + 1], g[64], w[64];
	static uint64_t keys[600][40], kw[EVMEMO_KEY_MAX + 1];
	static uint64_t model_seed[600], model_from[600];
	static uint32_t klen[600];
	struct evmemo_res r, got, want;
	struct evmemo_key k;
	struct evmemo_stats st;
	struct evmemo *m = NULL;
	bool ok = true, any_miss = false;
	size_t hits = 0;

	CHECK_ERR(evmemo_new(&m), 0);
	for (size_t i = 0; i < 12; i++)
		kw[i] = 0xffffffff81000000ULL + i * 0x1234;
	evmemo_key(&k, kw, 12, 7);
	CHECK(!evmemo_find(m, &k, 5, &got));
	memo_res(f, 9, 42, &r);
	CHECK_ERR(evmemo_put(m, &k, 100, &r), 0);
	CHECK(!evmemo_find(m, &k, 99, &got));
	CHECK(evmemo_find(m, &k, 100, &got) && res_eq(&got, &r));
	CHECK(evmemo_find(m, &k, 5000, &got) && res_eq(&got, &r));
	for (size_t i = 0; i < 12; i++) {
		kw[i] ^= 1;
		evmemo_key(&k, kw, 12, 7);
		any_miss |= evmemo_find(m, &k, 200, &got);
		kw[i] ^= 1;
	}
	CHECK(!any_miss);	/* (none of the changed keys answered) */
	evmemo_key(&k, kw, 11, 7);
	CHECK(!evmemo_find(m, &k, 200, &got));
	evmemo_key(&k, kw, 12, 7);
	evmemo_set(m, false);
	CHECK(!evmemo_find(m, &k, 200, &got));
	memo_res(f, 3, 43, &r);
	CHECK_ERR(evmemo_put(m, &k, 0, &r), 0);
	evmemo_set(m, true);
	memo_res(w, 9, 42, &want);
	CHECK(evmemo_find(m, &k, 200, &got) && res_eq(&got, &want));
	/* Not kept: a time it never holds from, too long a key or result;
	 * the entry kept for the key stays. */
	memo_res(f, 3, 44, &r);
	CHECK_ERR(evmemo_put(m, &k, UINT64_MAX, &r), 0);
	CHECK(evmemo_find(m, &k, 200, &got) && res_eq(&got, &want));
	memo_res(f, EVMEMO_FRAMES_MAX + 1, 45, &r);
	CHECK_ERR(evmemo_put(m, &k, 0, &r), 0);
	CHECK(evmemo_find(m, &k, 200, &got) && res_eq(&got, &want));
	evmemo_key(&k, kw, EVMEMO_KEY_MAX + 1, 7);
	memo_res(f, 2, 46, &r);
	CHECK_ERR(evmemo_put(m, &k, 0, &r), 0);
	CHECK(!evmemo_find(m, &k, 200, &got));
	evmemo_stats(m, &st);
	CHECK(st.stores == 1 && st.hits == 5);
	evmemo_free(m);
	evmemo_free(NULL);

	/* The model. */
	CHECK_ERR(evmemo_new(&m), 0);
	for (size_t i = 0; i < 600; i++) {
		klen[i] = 1 + (uint32_t)(rnd() % 40);
		for (uint32_t j = 0; j < klen[i]; j++)
			keys[i][j] = rnd() % 4;	/* (many alike) */
		keys[i][0] = i;			/* (but each its own) */
		model_from[i] = UINT64_MAX;
	}
	for (int op = 0; op < 40000; op++) {
		size_t i = (size_t)(rnd() % 600);
		uint64_t t = rnd() % 1000;

		/* (tags: a key's entry is tried first by its tag, often
		 * another key's since) */
		evmemo_key(&k, keys[i], klen[i], (uint32_t)(rnd() % 8));
		if (rnd() % 3 == 0) {
			model_seed[i] = rnd() % 1000;
			model_from[i] = t;
			memo_res(g, (uint32_t)(model_seed[i] % 64),
				 model_seed[i], &r);
			ok &= evmemo_put(m, &k, t, &r) == 0;
			continue;
		}
		if (!evmemo_find(m, &k, t, &got))
			continue;
		hits++;
		memo_res(w, (uint32_t)(model_seed[i] % 64), model_seed[i],
			 &want);
		ok &= t >= model_from[i] && res_eq(&got, &want);
	}
	CHECK(ok && hits > 1000);
	hits = 0;
	for (size_t i = 0; i < 600; i++) {
		evmemo_key(&k, keys[i], klen[i], (uint32_t)i);
		hits += evmemo_find(m, &k, UINT64_MAX - 1, &got);
	}
	CHECK(hits <= EVMEMO_SETS * EVMEMO_WAYS);
	evmemo_free(m);
}

static void test_kernel(void)
{
	char hex[2 * PM_BUILD_ID_MAX + 1];

	pm_kernel_build_id(hex, sizeof(hex));
	/* Not every machine exposes /sys/kernel/notes: "" is allowed. */
	CHECK(hex[0] == '\0' || strlen(hex) >= 16);
	CHECK(pm_pidns(0) != 0);
}

/* @data into @root/@rel, its directories made. */
static void put(const char *root, const char *rel, const void *data,
		size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	CHECK(f && fwrite(data, 1, len, f) == len && fclose(f) == 0);
}

/*
 * The modules under a root directory, and the maps the recorder gives
 * their frames (ksnap_kmods_take(), ksnap_kmod_find(), ksnap_kmod_map()):
 * a module with a build ID and a .text inside it gets one (kind kernel,
 * its range, PGOFF its .text, its build ID, "[NAME]"); one without a
 * build ID, or with its .text outside it, none; a hidden address (0, not
 * root) is left out; the list is by address whatever /proc/modules's
 * order.
 */
static void test_kmods(void)
{
	/* A GNU build-ID note: namesz 4, descsz 4, type 3, "GNU", ID. */
	static const unsigned char note[] = {
		4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
		0xde, 0xad, 0xbe, 0xef };
	static const char modules[] =
		"e1000 12288 0 - Live 0xffffffffc0500000\n"
		"hidden 4096 0 - Live 0x0000000000000000\n"
		"nobid 8192 1 e1000, Live 0xffffffffc0400000 (O)\n"
		"outside 4096 0 - Live 0xffffffffc0600000\n";
	char root[] = "/tmp/t-record-kmods.XXXXXX", path[64];
	struct ksnap_kmod *m = NULL;
	struct sym_prof_map pm;
	size_t n = 99;

	CHECK(mkdtemp(root) != NULL);
	CHECK_ERR(ksnap_kmods_take(root, &m, &n), 0);
	CHECK(n == 0 && m == NULL);	/* no proc/modules: no modules */
	put(root, "proc/modules", modules, strlen(modules));
	put(root, "sys/module/e1000/notes/.note.gnu.build-id", note,
	    sizeof(note));
	put(root, "sys/module/e1000/sections/.text", "0xffffffffc0501000\n",
	    19);
	put(root, "sys/module/outside/notes/.note.gnu.build-id", note,
	    sizeof(note));
	put(root, "sys/module/outside/sections/.text", "0xffffffffc0700000\n",
	    19);
	CHECK_ERR(ksnap_kmods_take(root, &m, &n), 0);
	CHECK(n == 3);
	if (n != 3) {
		free(m);
		return;
	}
	CHECK(!strcmp(m[0].name, "nobid") && !m[0].build_id[0] && !m[0].text);
	CHECK(!strcmp(m[1].name, "e1000") && m[1].start == 0xffffffffc0500000 &&
	      m[1].size == 12288 && m[1].text == 0xffffffffc0501000 &&
	      !strcmp(m[1].build_id, "deadbeef"));
	CHECK(ksnap_kmod_find(m, n, 0xffffffffc0500000) == &m[1]);
	CHECK(ksnap_kmod_find(m, n, 0xffffffffc0502fff) == &m[1]);
	CHECK(ksnap_kmod_find(m, n, 0xffffffffc0503000) == NULL);
	CHECK(ksnap_kmod_find(m, n, 0xffffffffc0401fff) == &m[0]);
	CHECK(ksnap_kmod_find(m, n, 0xffffffff81000000) == NULL);
	CHECK(ksnap_kmod_map(&m[1], &pm, path, sizeof(path)));
	CHECK(pm.kind == SYM_PROF_MAP_KERNEL && pm.pid == -1 &&
	      pm.start == 0xffffffffc0500000 && pm.end == 0xffffffffc0503000 &&
	      pm.vaddr == pm.start && pm.pgoff == 0xffffffffc0501000 &&
	      !strcmp(pm.build_id, "deadbeef") && !strcmp(pm.path, "[e1000]"));
	CHECK(!ksnap_kmod_map(&m[0], &pm, path, sizeof(path)));
	CHECK(!ksnap_kmod_map(&m[2], &pm, path, sizeof(path)));
	free(m);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	CHECK(system(path) == 0);
}

/* An MMAP2 record as the kernel writes it: @body_bid says whether the
 * body is a build ID (size, 3 reserved bytes, 20 bytes) or device/inode
 * (maj, min, ino, ino_generation). */
struct mmap2_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	unsigned char body[24];
	uint32_t prot, flags;
	char name[16];
};

static void mmap2_make(struct mmap2_rec *r, uint16_t misc, const void *body)
{
	memset(r, 0, sizeof(*r));
	r->h.type = PERF_RECORD_MMAP2;
	r->h.misc = misc;
	r->h.size = sizeof(*r);
	r->pid = 7;
	r->tid = 8;
	r->addr = 0x400000;
	r->len = 0x1000;
	r->pgoff = 0x2000;
	memcpy(r->body, body, sizeof(r->body));
	r->prot = 5;
	memcpy(r->name, "/usr/bin/dd", sizeof("/usr/bin/dd"));
}

/* perf_parse_mmap2(): the body is a build ID only when the event asked
 * for one and the flag says so; a flag leaked onto a device/inode body
 * (perf_build_id_leaks()) is not taken for a build ID. */
static void test_mmap2(void)
{
	const uint16_t F = PERF_RECORD_MISC_MMAP_BUILD_ID;
	unsigned char bid_body[24] = { 20, 0, 0, 0 };
	/* maj 8 (sda), min 1, ino 0x1234, generation 9 */
	unsigned char ino_body[24] = { 8, 0, 0, 0, 1, 0, 0, 0,
				       0x34, 0x12, 0, 0, 0, 0, 0, 0,
				       9, 0, 0, 0, 0, 0, 0, 0 };
	unsigned char big_body[24] = { 254, 0, 0, 0 };
	struct perf_mmap2 m;
	struct mmap2_rec r;
	int i;

	for (i = 0; i < 20; i++)
		bid_body[4 + i] = (unsigned char)(0xa0 + i);
	mmap2_make(&r, F, bid_body);
	CHECK_ERR(perf_parse_mmap2(&r.h, true, &m), 0);
	CHECK(m.build_id_size == 20 && m.build_id[0] == 0xa0 &&
	      m.build_id[19] == 0xb3 && m.ino == 0);
	CHECK(m.pid == 7 && m.tid == 8 && m.addr == 0x400000 &&
	      m.len == 0x1000 && m.pgoff == 0x2000 && m.prot == 5 &&
	      strcmp(m.filename, "/usr/bin/dd") == 0);

	/* The leak: an event without attr.build_id, the flag set. */
	mmap2_make(&r, F, ino_body);
	CHECK_ERR(perf_parse_mmap2(&r.h, false, &m), 0);
	CHECK(m.build_id_size == 0 && m.maj == 8 && m.min == 1 &&
	      m.ino == 0x1234 && m.ino_generation == 9);
	mmap2_make(&r, 0, ino_body);
	CHECK_ERR(perf_parse_mmap2(&r.h, true, &m), 0);
	CHECK(m.build_id_size == 0 && m.ino == 0x1234);

	/* A build ID body longer than its field: neither. */
	mmap2_make(&r, F, big_body);
	CHECK_ERR(perf_parse_mmap2(&r.h, true, &m), 0);
	CHECK(m.build_id_size == 0 && m.ino == 0 &&
	      strcmp(m.filename, "/usr/bin/dd") == 0);

	/* Malformed: no NUL in the name, cut short, another type. */
	mmap2_make(&r, 0, ino_body);
	memset(r.name, 'x', sizeof(r.name));
	CHECK_ERR(perf_parse_mmap2(&r.h, false, &m), -EINVAL);
	mmap2_make(&r, 0, ino_body);
	r.h.size = (uint16_t)offsetof(struct mmap2_rec, prot);
	CHECK_ERR(perf_parse_mmap2(&r.h, false, &m), -EINVAL);
	mmap2_make(&r, 0, ino_body);
	r.h.type = PERF_RECORD_MMAP;
	CHECK_ERR(perf_parse_mmap2(&r.h, false, &m), -EINVAL);
}

/* Write @n bytes at ring position @pos of @r, across the wrap. */
static void ring_put(struct perf_ring *r, uint64_t pos, const void *b,
		     size_t n)
{
	for (size_t i = 0; i < n; i++)
		r->data[(pos + i) & (r->size - 1)] = ((const unsigned char *)b)[i];
}

static int count_rec(void *ctx, const struct perf_event_header *h)
{
	(void)h;
	(*(int *)ctx)++;
	return 0;
}

/*
 * perf_ring_cut(): the snapshot ends at the first record of the horizon
 * or later, by a sample's TIME or a side-band record's sample_id; the
 * second record wraps around the ring's end (its time after the wrap).
 */
static void test_ring_cut(void)
{
	const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			    PERF_SAMPLE_TIME;
	struct perf_ring *r = calloc(1, sizeof(*r));
	static unsigned char data[256];
	struct perf_event_header h;
	uint64_t v[4], pos, start = 200;
	int n = 0;

	if (!r)
		return;
	r->data = data;
	r->size = sizeof(data);
	pos = start;
	/* a sample of t 100: ip, pid/tid, time */
	h = (struct perf_event_header){ PERF_RECORD_SAMPLE, 0, 32 };
	v[0] = 0x1234, v[1] = 7, v[2] = 100;
	ring_put(r, pos, &h, 8);
	ring_put(r, pos + 8, v, 24);
	pos += 32;
	/* an MMAP2-like record of t 200 at 232: 16 bytes, then pid/tid,
	 * time (at 264, 8 after the wrap) */
	h = (struct perf_event_header){ PERF_RECORD_MMAP2, 0, 40 };
	v[0] = 1, v[1] = 2, v[2] = 7, v[3] = 200;
	ring_put(r, pos, &h, 8);
	ring_put(r, pos + 8, v, 32);
	pos += 40;
	/* a sample of t 300 */
	h = (struct perf_event_header){ PERF_RECORD_SAMPLE, 0, 32 };
	v[0] = 0x5678, v[1] = 7, v[2] = 300;
	ring_put(r, pos, &h, 8);
	ring_put(r, pos + 8, v, 24);
	pos += 32;
	r->tail = start;
	r->head = pos;
	CHECK(perf_ring_cut(r, st, 1000) == 104);
	CHECK(perf_ring_cut(r, st, 250) == 72);
	CHECK(perf_ring_walk(r, count_rec, &n) == 0 && n == 2);
	CHECK(perf_ring_cut(r, st, 200) == 32);
	CHECK(perf_ring_cut(r, st, 100) == 0 && r->head == start);
	/* A record with no time is before any horizon. */
	r->head = pos;
	CHECK(perf_ring_cut(r, PERF_SAMPLE_IP | PERF_SAMPLE_TID, 1) == 104);
	free(r);
}

int main(void)
{
	test_retcheck();
	test_elf();
	test_maps();
	test_gen_from();
	test_gen_self();
	test_evmemo();
	test_gone_inode();
	test_later_mapping();
	test_map_keys();
	test_kernel();
	test_kmods();
	test_mmap2();
	test_ring_cut();
	return tap_done();
}
