/*
 * procmaps.c - processes, threads and executable mappings (procmaps.h).
 *
 * Layout: processes and threads sit in chained hash tables keyed by PID
 * and TID.  A process keeps its live mappings in an array sorted by start
 * and never overlapping (a new mapping cuts the old ones it covers), so a
 * sample's PC is found by binary search; mappings that died wait in a
 * second, unsorted array until pm_gc() passes their end.
 *
 * The ELF cache holds at most ELF_CACHE_MAX files and is emptied when it
 * fills (a recording rarely meets that many distinct files; emptying costs
 * only re-reads).  ELF headers are read with pread(), bounded: at most
 * MAX_PHNUM program headers and NOTE_MAX bytes of notes per file.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "procmaps.h"
#include "perfmap.h"
#include "sym.h"
#include "vdso.h"
#include "base.h"

#define HASH_BUCKETS 4096
#define ELF_CACHE_MAX 4096
#define MAX_PHNUM 4096
#define MAX_SHNUM 65536
#define NOTE_MAX (1 << 20)
#define COMM_LEN 16

struct proc {
	int32_t pid;
	/* pm_gen(): changed (from pm->next_gen) by every change to @live or
	 * @dead, never the same for two states, even of a pid seen again. */
	uint64_t gen;
	bool exited;
	uint64_t t_exit;
	uint64_t pidns;
	int32_t nspid;
	/* Wall-clock start (ns since 1970), 0 when unknown; the owner. */
	int64_t start_ns;
	uint32_t uid;
	char comm[COMM_LEN + 1];
	/* The jitdump its runtime mapped (jit-N.dump), or NULL; owned. */
	char *jitdump;
	int32_t jitdump_pid;
	struct pm_map **live;	/* sorted by start, disjoint */
	size_t nlive, caplive;
	struct pm_map **dead;
	size_t ndead, capdead;
	struct proc *next;
};

struct thread {
	int32_t pid, tid;
	bool exited;
	uint64_t t_exit;
	char comm[COMM_LEN + 1];
	struct thread *next;
};

struct elf_key {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_sec, mtime_nsec;
};

struct elf_ent {
	struct elf_key key;
	struct pm_elf elf;
	char *path;			/* a path that opened it; owned */
	struct elf_ent *next_key, *next_bid;
};

struct pm {
	struct pm_hooks hooks;
	struct proc *procs[HASH_BUCKETS];
	struct thread *threads[HASH_BUCKETS];
	struct elf_ent *by_key[HASH_BUCKETS];
	struct elf_ent *by_bid[HASH_BUCKETS];
	size_t nelf;
	/* The agent's own vDSO (same kernel: same image for 64-bit
	 * processes), used when a process's one cannot be read any more. */
	struct pm_elf self_vdso;
	size_t self_vdso_len;
	bool self_vdso_ok;
	struct pm_stats st;
	uint64_t next_gen;		/* proc.gen source */
};

/* ---- ELF ---- */

struct rd {
	int fd;
	const unsigned char *buf;
	size_t len;
};

static int rd_read(const struct rd *r, uint64_t off, void *out, size_t n)
{
	ssize_t got;
	size_t done = 0;

	if (r->buf) {
		if (off > r->len || n > r->len - off)
			return -SYM_E_BADELF;
		memcpy(out, r->buf + off, n);
		return 0;
	}
	while (done < n) {
		got = pread(r->fd, (char *)out + done, n - done,
			    (off_t)(off + done));
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got == 0)
			return -SYM_E_BADELF;
		done += (size_t)got;
	}
	return 0;
}

static void hex_of(const unsigned char *b, size_t n, char *out)
{
	static const char dig[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = dig[b[i] >> 4];
		out[2 * i + 1] = dig[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The GNU build ID of the notes at [@off, @off + @size) into @out, when
 * they hold one.  A block that cannot be read leaves it unknown; only
 * -ENOMEM is an error. */
static int notes_read(const struct rd *r, uint64_t off, uint64_t size,
		      uint64_t align, struct pm_elf *out)
{
	unsigned char *notes;

	if (size == 0 || size > NOTE_MAX)
		return 0;
	notes = malloc(size);
	if (!notes)
		return -ENOMEM;
	/* The file is checked to be ELFDATA2LSB, so its notes are in the
	 * host's byte order. */
	if (rd_read(r, off, notes, size) == 0) {
		const uint8_t *d;
		uint8_t id[SYMI_MODID_LEN];
		size_t dn;

		sym_notes_build_id(notes, size, align, out->build_id,
				   sizeof(out->build_id));
		if (!out->go_id[0] &&
		    symi_notes_find(notes, size, align, "Go\0\0", 4,
				    SYMI_NT_GO_BUILDID, SYMI_GO_BUILD_ID_MAX,
				    &d, &dn) == 0) {
			symi_modid_go(d, dn, id);
			hex_of(id, sizeof(id), out->go_id);
		}
	}
	free(notes);
	return 0;
}

/*
 * The build ID from the section headers, when no PT_NOTE segment held
 * one: Go's linker puts .note.gnu.build-id (-ldflags=-B) in the text
 * segment but only .note.go.buildid in a PT_NOTE, while `sym buildid`,
 * the store and symd read the SHT_NOTE sections.  @shnum0 is sh_size of
 * section 0 (the count when e_shnum is 0).  Section headers that cannot
 * be read leave the build ID unknown.
 */
static int shnotes_read(const struct rd *r, const Elf64_Ehdr *eh,
			uint64_t shnum0, struct pm_elf *out)
{
	uint64_t shnum = eh->e_shnum ? eh->e_shnum : shnum0;
	Elf64_Shdr sh;
	int err;

	if (!eh->e_shoff || eh->e_shentsize < sizeof(Elf64_Shdr) ||
	    shnum > MAX_SHNUM)
		return 0;
	for (uint64_t i = 0; i < shnum && !out->build_id[0]; i++) {
		if (rd_read(r, eh->e_shoff + i * eh->e_shentsize, &sh,
			    sizeof(sh)) != 0)
			return 0;
		if (sh.sh_type != SHT_NOTE)
			continue;
		err = notes_read(r, sh.sh_offset, sh.sh_size, sh.sh_addralign,
				 out);
		if (err)
			return err;
	}
	return 0;
}

/*
 * No GNU build ID: the module ID libsym derives (modid.h), from the Go
 * build ID note the notes held, else from the file's first and last
 * 4 KiB and its size.  A file that cannot be read leaves it unknown.
 */
static void derived_id(const struct rd *r, struct pm_elf *out)
{
	uint8_t id[SYMI_MODID_LEN];
	struct stat st;
	size_t n;

	if (out->go_id[0]) {
		snprintf(out->build_id, sizeof(out->build_id), "%s",
			 out->go_id);
		return;
	}
	if (r->buf) {
		n = r->len < SYMI_MODID_PART ? r->len : SYMI_MODID_PART;
		symi_modid_file(r->buf, n, r->buf + r->len - n, n, r->len, id);
	} else if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		   symi_modid_fd(r->fd, (uint64_t)st.st_size, id) != 0) {
		return;
	}
	hex_of(id, sizeof(id), out->build_id);
}

static int elf_read(const struct rd *r, struct pm_elf *out)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr sh0 = { 0 };
	size_t phnum, i;
	int err;

	memset(out, 0, sizeof(*out));
	err = rd_read(r, 0, &eh, sizeof(eh));
	if (err == -SYM_E_BADELF)
		return -SYM_E_NOTELF;
	if (err)
		return err;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return -SYM_E_NOTELF;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -SYM_E_UNSUPPORTED;
	if (eh.e_phentsize < sizeof(Elf64_Phdr))
		return -SYM_E_BADELF;
	phnum = eh.e_phnum;
	if (phnum == PN_XNUM || (eh.e_shoff && eh.e_shnum == 0)) {
		err = rd_read(r, eh.e_shoff, &sh0, sizeof(sh0));
		if (err && phnum == PN_XNUM)
			return err;
		if (phnum == PN_XNUM)
			phnum = sh0.sh_info;
	}
	if (phnum > MAX_PHNUM)
		return -SYM_E_BADELF;
	for (i = 0; i < phnum; i++) {
		err = rd_read(r, eh.e_phoff + (uint64_t)i * eh.e_phentsize,
			      &ph, sizeof(ph));
		if (err)
			return err;
		if (ph.p_type == PT_LOAD && out->nloads < PM_MAX_LOADS) {
			out->loads[out->nloads].offset = ph.p_offset;
			out->loads[out->nloads].vaddr = ph.p_vaddr;
			out->loads[out->nloads].filesz = ph.p_filesz;
			out->loads[out->nloads].exec = !!(ph.p_flags & PF_X);
			out->nloads++;
		} else if (ph.p_type == PT_NOTE && !out->build_id[0]) {
			/* A bad note segment leaves the build ID unknown. */
			err = notes_read(r, ph.p_offset, ph.p_filesz,
					 ph.p_align, out);
			if (err)
				return err;
		}
	}
	if (out->nloads == 0)
		return -SYM_E_BADELF;
	if (!out->build_id[0])
		err = shnotes_read(r, &eh, sh0.sh_size, out);
	if (!err && !out->build_id[0])
		derived_id(r, out);
	return err;
}

int pm_elf_read_fd(int fd, struct pm_elf *out)
{
	struct rd r = { fd, NULL, 0 };

	return elf_read(&r, out);
}

int pm_elf_read_mem(const void *buf, size_t len, struct pm_elf *out)
{
	struct rd r = { -1, buf, len };

	return elf_read(&r, out);
}

int pm_elf_vaddr(const struct pm_elf *e, uint64_t off, uint64_t *vaddr)
{
	int best = -1;
	unsigned i;
	uint64_t lo, hi;

	for (i = 0; i < e->nloads; i++) {
		/* The segment's pages: mappings start page-aligned. */
		lo = e->loads[i].offset & ~(uint64_t)0xfff;
		hi = e->loads[i].offset + e->loads[i].filesz;
		if (off < lo || off >= hi)
			continue;
		if (best < 0 || (e->loads[i].exec && !e->loads[best].exec))
			best = (int)i;
	}
	if (best < 0)
		return -SYM_E_NOTFOUND;
	*vaddr = off - e->loads[best].offset + e->loads[best].vaddr;
	return 0;
}

/* ---- tables ---- */

static unsigned hash_u32(uint32_t v)
{
	return (v * 2654435761u) >> 20 & (HASH_BUCKETS - 1);
}

static unsigned hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h & (HASH_BUCKETS - 1);
}

static unsigned hash_key(const struct elf_key *k)
{
	uint64_t v = (uint64_t)k->dev * 31 + (uint64_t)k->ino;

	v = v * 31 + (uint64_t)k->mtime_nsec + (uint64_t)k->size;
	return hash_u32((uint32_t)(v ^ (v >> 32)));
}

int pm_new(const struct pm_hooks *hooks, struct pm **out)
{
	struct pm *pm;
	const void *vdso;

	*out = NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	if (hooks)
		pm->hooks = *hooks;
	vdso = agent_self_vdso(&pm->self_vdso_len);
	if (vdso && pm_elf_read_mem(vdso, pm->self_vdso_len,
				    &pm->self_vdso) == 0)
		pm->self_vdso_ok = true;
	*out = pm;
	return 0;
}

static void map_free(struct pm_map *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->open_path);
	free(m);
}

static void proc_free(struct proc *p)
{
	size_t i;

	for (i = 0; i < p->nlive; i++)
		map_free(p->live[i]);
	for (i = 0; i < p->ndead; i++)
		map_free(p->dead[i]);
	free(p->live);
	free(p->dead);
	free(p->jitdump);
	free(p);
}

static void elf_cache_clear(struct pm *pm)
{
	struct elf_ent *e, *next;
	size_t i;

	for (i = 0; i < HASH_BUCKETS; i++) {
		for (e = pm->by_key[i]; e; e = next) {
			next = e->next_key;
			free(e->path);
			free(e);
		}
		pm->by_key[i] = NULL;
		pm->by_bid[i] = NULL;
	}
	pm->nelf = 0;
}

void pm_free(struct pm *pm)
{
	struct proc *p, *pn;
	struct thread *t, *tn;
	size_t i;

	if (!pm)
		return;
	for (i = 0; i < HASH_BUCKETS; i++) {
		for (p = pm->procs[i]; p; p = pn) {
			pn = p->next;
			proc_free(p);
		}
		for (t = pm->threads[i]; t; t = tn) {
			tn = t->next;
			free(t);
		}
	}
	elf_cache_clear(pm);
	free(pm);
}

static struct proc *proc_get(struct pm *pm, int32_t pid)
{
	struct proc *p;

	for (p = pm->procs[hash_u32((uint32_t)pid)]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

static struct proc *proc_add(struct pm *pm, int32_t pid)
{
	unsigned h = hash_u32((uint32_t)pid);
	struct proc *p;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->gen = ++pm->next_gen;
	p->next = pm->procs[h];
	pm->procs[h] = p;
	pm->st.processes++;
	return p;
}

static struct thread *thread_get(struct pm *pm, int32_t tid)
{
	struct thread *t;

	for (t = pm->threads[hash_u32((uint32_t)tid)]; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static struct thread *thread_set(struct pm *pm, int32_t pid, int32_t tid,
				 const char *comm)
{
	unsigned h = hash_u32((uint32_t)tid);
	struct thread *t = thread_get(pm, tid);

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		t->tid = tid;
		t->next = pm->threads[h];
		pm->threads[h] = t;
	}
	t->pid = pid;
	t->exited = false;
	if (comm)
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return t;
}

bool pm_known(struct pm *pm, int32_t pid)
{
	return proc_get(pm, pid) != NULL;
}

/* ---- the ELF cache ---- */

static struct elf_ent *cache_by_bid(struct pm *pm, const char *bid)
{
	struct elf_ent *e;

	for (e = pm->by_bid[hash_str(bid)]; e; e = e->next_bid)
		if (strcmp(e->elf.build_id, bid) == 0)
			return e;
	return NULL;
}

static struct elf_ent *cache_by_key(struct pm *pm, const struct elf_key *k)
{
	struct elf_ent *e;

	for (e = pm->by_key[hash_key(k)]; e; e = e->next_key)
		if (e->key.dev == k->dev && e->key.ino == k->ino &&
		    e->key.size == k->size &&
		    e->key.mtime_sec == k->mtime_sec &&
		    e->key.mtime_nsec == k->mtime_nsec)
			return e;
	return NULL;
}

static void key_of(const struct stat *st, struct elf_key *k)
{
	memset(k, 0, sizeof(*k));
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->size = st->st_size;
	k->mtime_sec = st->st_mtim.tv_sec;
	k->mtime_nsec = st->st_mtim.tv_nsec;
}

/* The ELF facts of the open file @fd (cached); NULL when not ELF. */
static struct elf_ent *cache_fd(struct pm *pm, int fd, const char *path)
{
	struct stat st;
	struct elf_key k;
	struct elf_ent *e;
	unsigned h;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	key_of(&st, &k);
	e = cache_by_key(pm, &k);
	if (e) {
		pm->st.elf_cache_hits++;
		return e;
	}
	if (pm->nelf >= ELF_CACHE_MAX)
		elf_cache_clear(pm);
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	pm->st.elf_reads++;
	if (pm_elf_read_fd(fd, &e->elf) != 0) {
		free(e);
		return NULL;
	}
	e->key = k;
	e->path = strdup(path);
	if (!e->path) {
		free(e);
		return NULL;
	}
	h = hash_key(&k);
	e->next_key = pm->by_key[h];
	pm->by_key[h] = e;
	if (e->elf.build_id[0] && !cache_by_bid(pm, e->elf.build_id)) {
		h = hash_str(e->elf.build_id);
		e->next_bid = pm->by_bid[h];
		pm->by_bid[h] = e;
	}
	pm->nelf++;
	return e;
}

/*
 * Whether open file @fd is inode @want: the device and inode number, and
 * the generation where the file system tells it (FS_IOC_GETVERSION: ext4,
 * xfs, btrfs).  Without it (tmpfs) the number alone counts: tmpfs does
 * not reuse inode numbers, and a reused number elsewhere has a new
 * generation.
 */
static bool same_inode(int fd, const struct pm_inode *want)
{
	struct stat st;
	int gen;

	if (fstat(fd, &st) < 0 || (uint64_t)st.st_dev != want->dev ||
	    (uint64_t)st.st_ino != want->ino)
		return false;
	if (want->gen && ioctl(fd, FS_IOC_GETVERSION, &gen) == 0 &&
	    (uint32_t)gen != (uint32_t)want->gen)
		return false;
	return true;
}

/* The ELF facts of the file at @path, when it is inode @must_be (if
 * given); NULL when it cannot be read, is not ELF or is another inode. */
static struct elf_ent *cache_path(struct pm *pm, const char *path,
				  const struct pm_inode *must_be)
{
	struct elf_ent *e;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (must_be && !same_inode(fd, must_be)) {
		close(fd);
		return NULL;
	}
	e = cache_fd(pm, fd, path);
	close(fd);
	return e;
}

/* Fill the build ID, vaddr and open_path of file mapping @m, whose
 * kernel-given build ID (hex) is @kbid or "", and inode @kino or NULL. */
static void resolve_file(struct pm *pm, struct pm_map *m, const char *kbid,
			 const struct pm_inode *kino)
{
	char mf[64], root[PATH_MAX + 64];
	struct pm_inode mino = { 0 };
	struct stat mst;
	bool have_mst;
	struct elf_ent *e = NULL;
	const char *how = NULL;

	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)m->pid, m->start, m->end);
	snprintf(root, sizeof(root), "/proc/%d/root%s", (int)m->pid, m->path);
	if (kbid[0]) {
		e = cache_by_bid(pm, kbid);
		if (e) {
			pm->st.bid_hits++;
			how = access(root, R_OK) == 0 ? root : e->path;
			goto found;
		}
	}
	/* The file at the path must be the inode that is mapped. */
	have_mst = stat(mf, &mst) == 0;
	if (have_mst) {
		mino.dev = mst.st_dev;
		mino.ino = mst.st_ino;
	}
	/* The record is read after the process went on: its range may hold
	 * a later mapping by now (a library closed, another opened at its
	 * address), which map_files names instead.  The kernel's inode says
	 * which: another one there is not this mapping's file (the libraries
	 * of prof_remap.c got each other's build IDs). */
	if (have_mst && kino &&
	    (mino.dev != kino->dev || mino.ino != kino->ino))
		have_mst = false;
	if (m->path[0] == '/') {
		e = cache_path(pm, root, have_mst ? &mino : kino);
		how = root;
	}
	if (e && kbid[0] && strcmp(e->elf.build_id, kbid) != 0) {
		pm->st.bid_mismatch++;
		e = NULL;
	}
	if (!e && have_mst) {
		e = cache_path(pm, mf, NULL);
		how = mf;
		if (e && kbid[0] && strcmp(e->elf.build_id, kbid) != 0) {
			pm->st.bid_mismatch++;
			e = NULL;
		}
	}
	/* The process is gone: the plain path is trusted only when the
	 * kernel vouches for it, by the build ID or by the inode. */
	if (!e && (kbid[0] || kino) && m->path[0] == '/') {
		e = cache_path(pm, m->path, kbid[0] ? NULL : kino);
		how = m->path;
		if (e && kbid[0] && strcmp(e->elf.build_id, kbid) != 0) {
			pm->st.bid_mismatch++;
			e = NULL;
		}
	}
found:
	if (!e) {
		pm->st.no_file++;
		snprintf(m->build_id, sizeof(m->build_id), "%s", kbid);
		m->vaddr = m->pgoff;
		m->vaddr_known = false;
		return;
	}
	snprintf(m->build_id, sizeof(m->build_id), "%s",
		 kbid[0] ? kbid : e->elf.build_id);
	m->vaddr_known = pm_elf_vaddr(&e->elf, m->pgoff, &m->vaddr) == 0;
	if (!m->vaddr_known)
		m->vaddr = m->pgoff;
	m->open_path = strdup(how);
}

static void resolve_vdso(struct pm *pm, struct pm_map *m)
{
	struct pm_elf e;
	unsigned char *buf = NULL;
	size_t len = m->end - m->start;
	bool ok = false;

	if (len <= AGENT_VDSO_MAX) {
		buf = malloc(len);
		ok = buf && agent_vdso_read(m->pid, m->start, buf, len) == 0 &&
		     pm_elf_read_mem(buf, len, &e) == 0;
		free(buf);
	}
	if (!ok && pm->self_vdso_ok &&
	    agent_vdso_fits(pm->self_vdso_len, len)) {
		e = pm->self_vdso;
		ok = true;
	}
	m->vaddr = m->pgoff;
	m->vaddr_known = false;
	if (!ok)
		return;
	snprintf(m->build_id, sizeof(m->build_id), "%s", e.build_id);
	m->vaddr_known = pm_elf_vaddr(&e, m->pgoff, &m->vaddr) == 0;
	if (!m->vaddr_known)
		m->vaddr = m->pgoff;
}

static uint32_t kind_of(const char *path)
{
	if (strcmp(path, "[vdso]") == 0)
		return PM_VDSO;
	if (path[0] == '/' && strncmp(path, "//anon", 6) != 0)
		return PM_FILE;
	return PM_ANON;
}

/* ---- mapping arrays ---- */

static int push(struct pm_map ***arr, size_t *n, size_t *cap,
		struct pm_map *m)
{
	int err = tool_grow(arr, cap, *n + 1, sizeof(**arr), 8);

	if (err)
		return err;
	(*arr)[(*n)++] = m;
	return 0;
}

static struct pm_map *map_dup(const struct pm_map *m)
{
	struct pm_map *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *m;
	c->user_id = 0;
	c->user_gen = 0;
	c->path = strdup(m->path);
	c->open_path = m->open_path ? strdup(m->open_path) : NULL;
	if (!c->path || (m->open_path && !c->open_path)) {
		map_free(c);
		return NULL;
	}
	return c;
}

/* First live index with end > addr. */
static size_t live_lower(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nlive, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->live[mid]->end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void kill_map(struct pm *pm, struct proc *p, struct pm_map *m,
		     uint64_t t)
{
	p->gen = ++pm->next_gen;
	m->t_end = t;
	if (pm->hooks.unmap)
		pm->hooks.unmap(pm->hooks.ctx, p->pid, m->start, m->end);
	if (push(&p->dead, &p->ndead, &p->capdead, m) != 0)
		map_free(m);	/* no memory: the old mapping is forgotten */
}

/* Move [start, end) of @o's range forward to begin at @start. */
static void clip_front(struct pm_map *o, uint64_t start)
{
	uint64_t d = start - o->start;

	o->start = start;
	o->pgoff += d;
	o->vaddr += d;
}

/* Insert @m (owned) into @p's live maps at time @t: the parts of older
 * mappings it covers die, the parts before and after it stay live.  On
 * failure @m is freed and nothing has changed. */
static int insert_live(struct pm *pm, struct proc *p, struct pm_map *m,
		       uint64_t t)
{
	struct pm_map *before = NULL, *after = NULL;
	size_t i, k, j, need, nc;

	i = live_lower(p, m->start);
	for (k = i; k < p->nlive && p->live[k]->start < m->end; k++)
		;
	if (k > i && p->live[i]->start < m->start) {
		before = map_dup(p->live[i]);
		if (!before)
			goto nomem;
		before->end = m->start;
	}
	if (k > i && p->live[k - 1]->end > m->end) {
		after = map_dup(p->live[k - 1]);
		if (!after)
			goto nomem;
		clip_front(after, m->end);
	}
	need = p->nlive - (k - i) + 1 + !!before + !!after;
	if (tool_grow(&p->live, &p->caplive, need, sizeof(*p->live), 8))
		goto nomem;
	p->gen = ++pm->next_gen;
	/* The covered parts die. */
	for (j = i; j < k; j++) {
		struct pm_map *o = p->live[j];

		if (o->start < m->start)
			clip_front(o, m->start);
		if (o->end > m->end)
			o->end = m->end;
		kill_map(pm, p, o, t);
	}
	nc = !!before + 1 + !!after;	/* entries replacing [i, k) */
	memmove(&p->live[i + nc], &p->live[k],
		(p->nlive - k) * sizeof(*p->live));
	p->nlive = p->nlive - (k - i) + nc;
	j = i;
	if (before)
		p->live[j++] = before;
	p->live[j++] = m;
	if (after)
		p->live[j] = after;
	pm->st.maps++;
	if (pm->hooks.map)
		pm->hooks.map(pm->hooks.ctx, m);
	return 0;
nomem:
	map_free(before);
	map_free(after);
	map_free(m);
	return -ENOMEM;
}

/* The N of a path whose last component is jit-N.dump (perf's jitdump
 * name), or 0. */
static int32_t jitdump_pid(const char *path)
{
	const char *b = strrchr(path, '/');
	char *end;
	long n;

	b = b ? b + 1 : path;
	if (strncmp(b, "jit-", 4) != 0 || b[4] < '1' || b[4] > '9')
		return 0;
	errno = 0;
	n = strtol(b + 4, &end, 10);
	if (errno || n <= 0 || n > INT32_MAX || strcmp(end, ".dump") != 0)
		return 0;
	return (int32_t)n;
}

/* Note @path as @p's jitdump when it is one. */
static void note_jitdump(struct proc *p, const char *path)
{
	int32_t n = jitdump_pid(path);
	char *copy;

	if (!n || (p->jitdump && strcmp(p->jitdump, path) == 0))
		return;
	copy = strdup(path);
	if (!copy)
		return;	/* the perf map is tried instead */
	free(p->jitdump);
	p->jitdump = copy;
	p->jitdump_pid = n;
}

static int add_map(struct pm *pm, struct proc *p, uint64_t t, uint64_t start,
		   uint64_t end, uint64_t pgoff, const char *kbid,
		   const struct pm_inode *kino, const char *path)
{
	struct pm_map *m;

	if (end <= start)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->pid = p->pid;
	m->t_start = t;
	m->t_end = UINT64_MAX;
	m->kind = kind_of(path);
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		return -ENOMEM;
	}
	if (m->kind == PM_FILE) {
		note_jitdump(p, path);
		resolve_file(pm, m, kbid, kino);
	} else if (m->kind == PM_VDSO) {
		resolve_vdso(pm, m);
	} else {
		m->vaddr = start;
		m->vaddr_known = true;
	}
	m->cache_key = addrcache_mod(m->build_id[0] ? m->build_id : m->path);
	return insert_live(pm, p, m, t);
}

/* ---- /proc ---- */

/* The start of @p in wall-clock ns: field 22 of /proc/PID/stat is its
 * start in clock ticks since boot (CLOCK_BOOTTIME), to which the wall
 * clock of the boot is added; exact to a tick. */
static void read_start(struct proc *p)
{
	char path[64], buf[1024];
	struct timespec rt, bt;
	uint64_t ticks;
	long hz = sysconf(_SC_CLK_TCK);
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d", (int)p->pid);
	if (stat(path, &st) == 0)
		p->uid = (uint32_t)st.st_uid;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || hz <= 0)
		return;
	if (symi_proc_starttime(buf, (size_t)n, &ticks) ||
	    clock_gettime(CLOCK_REALTIME, &rt) ||
	    clock_gettime(CLOCK_BOOTTIME, &bt))
		return;
	p->start_ns = (rt.tv_sec - bt.tv_sec) * 1000000000LL +
		      (rt.tv_nsec - bt.tv_nsec) +
		      (int64_t)(ticks * (1000000000ULL / (unsigned long)hz));
}

static void read_status(struct proc *p)
{
	char path[64], line[256], *v, *last;
	FILE *f;
	struct stat st;

	read_start(p);
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)p->pid);
	if (stat(path, &st) == 0)
		p->pidns = st.st_ino;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)p->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "Name:", 5) == 0) {
			v = line + 5;
			v += strspn(v, " \t");
			snprintf(p->comm, sizeof(p->comm), "%s", v);
		} else if (strncmp(line, "NSpid:", 6) == 0) {
			/* The last field is the PID in the innermost
			 * namespace, the process's own. */
			last = strrchr(line, '\t');
			if (!last)
				last = strrchr(line, ' ');
			if (last)
				p->nspid = (int32_t)strtol(last + 1, NULL, 10);
		}
	}
	fclose(f);
}

static int scan_maps(struct pm *pm, struct proc *p)
{
	char path[64], line[PATH_MAX + 256], perms[8], *fname;
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	int n, err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	pm->st.scans++;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		n = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start,
			   &end, perms, &off, &maj, &min, &ino, &n) < 7)
			continue;
		if (!strchr(perms, 'x'))
			continue;
		/* [vsyscall] lives in kernel space and never gets MMAP2. */
		if (start >= 0xffff800000000000ULL)
			continue;
		fname = line + n;
		err = add_map(pm, p, 0, start, end, off, "", NULL,
			      *fname ? fname : "//anon");
		if (err)
			break;
	}
	fclose(f);
	return err;
}

int pm_scan(struct pm *pm, int32_t pid)
{
	struct proc *p;
	int err;

	if (proc_get(pm, pid))
		return 0;
	p = proc_add(pm, pid);
	if (!p)
		return -ENOMEM;
	read_status(p);
	err = scan_maps(pm, p);
	if (p->comm[0] && !thread_get(pm, pid))
		thread_set(pm, pid, pid, p->comm);
	return err;
}

int pm_scan_threads(struct pm *pm, int32_t pid)
{
	char path[64], comm[64];
	struct dirent *de;
	DIR *d;
	FILE *f;
	long tid;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		tid = strtol(de->d_name, NULL, 10);
		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/comm",
			 (int)pid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			thread_set(pm, pid, (int32_t)tid, comm);
		}
		fclose(f);
	}
	closedir(d);
	return 0;
}

/* ---- side-band ---- */

int pm_mmap(struct pm *pm, int32_t pid, uint64_t t, uint64_t start,
	    uint64_t len, uint64_t pgoff, const unsigned char *build_id,
	    size_t build_id_len, const struct pm_inode *inode,
	    const char *path)
{
	char kbid[2 * PM_BUILD_ID_MAX + 1] = "";
	struct proc *p;

	if (start + len < start)
		return 0;
	p = proc_get(pm, pid);
	if (!p) {
		/* A process we never met: take what /proc knows first. */
		pm_scan(pm, pid);
		p = proc_get(pm, pid);
		if (!p)
			return -ENOMEM;
	}
	if (build_id && build_id_len > 0 && build_id_len <= PM_BUILD_ID_MAX)
		hex_of(build_id, build_id_len, kbid);
	return add_map(pm, p, t, start, start + len, pgoff, kbid,
		       kbid[0] ? NULL : inode, path);
}

/* A forked child's copy of a file mapping: the child's own root when it
 * can still be opened, else the parent's path. */
static void set_child_path(struct pm_map *c)
{
	char root[PATH_MAX + 64];
	char *dup;

	snprintf(root, sizeof(root), "/proc/%d/root%s", (int)c->pid, c->path);
	if (access(root, R_OK) != 0)
		return;
	dup = strdup(root);
	if (!dup)
		return;
	free(c->open_path);
	c->open_path = dup;
}

int pm_fork(struct pm *pm, int32_t pid, int32_t ppid, int32_t tid,
	    uint64_t t)
{
	struct proc *parent, *p;
	struct thread *pt;
	struct pm_map *c;
	size_t i;
	int err;

	pt = thread_get(pm, ppid);
	if (pid == ppid) {
		/* A new thread: named like its process until a COMM. */
		parent = proc_get(pm, pid);
		thread_set(pm, pid, tid, parent ? parent->comm :
					 pt ? pt->comm : NULL);
		return 0;
	}
	parent = proc_get(pm, ppid);
	if (!parent && ppid > 0) {
		/* A parent we never met (-a): what /proc knows of it now. */
		pm_scan(pm, ppid);
		parent = proc_get(pm, ppid);
	}
	p = proc_get(pm, pid);
	if (p) {
		/* A PID reused before we collected the old process. */
		if (!p->exited)
			return 0;
		for (i = 0; i < p->nlive; i++)
			kill_map(pm, p, p->live[i], t);
		p->nlive = 0;
		p->exited = false;
	} else {
		p = proc_add(pm, pid);
		if (!p)
			return -ENOMEM;
	}
	read_status(p);
	if (parent) {
		if (!p->comm[0])
			snprintf(p->comm, sizeof(p->comm), "%s",
				 parent->comm);
		for (i = 0; i < parent->nlive; i++) {
			if (parent->live[i]->t_start > t)
				continue;
			c = map_dup(parent->live[i]);
			if (!c)
				return -ENOMEM;
			c->pid = pid;
			if (c->kind == PM_FILE)
				set_child_path(c);
			err = insert_live(pm, p, c, c->t_start);
			if (err)
				return err;
		}
	}
	thread_set(pm, pid, tid, p->comm[0] ? p->comm : NULL);
	return 0;
}

/*
 * An exec at @t ends the old image's mappings.  Those mapped after @t are
 * the new image's, applied before the exec's record: the rings are read
 * one after another, so a record written on one CPU after its ring was
 * read comes a round after a later one of another CPU's (the new program
 * mapped on a CPU it moved to).  They stay live, and are given to the
 * hooks again after the forget: without that, every stack of the new
 * program stopped at its leaf (t3112 under ASan on a loaded machine, once:
 * 1,287 of 1,292 stacks stopping in the fixture).
 */
void pm_exec(struct pm *pm, int32_t pid, uint64_t t)
{
	struct proc *p = proc_get(pm, pid);
	size_t i, j;

	if (!p)
		return;
	p->gen = ++pm->next_gen;
	for (i = j = 0; i < p->nlive; i++) {
		struct pm_map *m = p->live[i];

		if (m->t_start > t) {
			p->live[j++] = m;
			continue;
		}
		m->t_end = t;
		if (push(&p->dead, &p->ndead, &p->capdead, m) != 0)
			map_free(m);
	}
	p->nlive = j;
	free(p->jitdump);	/* the old program's */
	p->jitdump = NULL;
	if (pm->hooks.forget)
		pm->hooks.forget(pm->hooks.ctx, pid);
	for (i = 0; pm->hooks.map && i < p->nlive; i++)
		pm->hooks.map(pm->hooks.ctx, p->live[i]);
	/* The new program's name and namespace facts. */
	read_status(p);
}

int pm_comm(struct pm *pm, int32_t pid, int32_t tid, const char *comm)
{
	struct proc *p = proc_get(pm, pid);

	if (p && pid == tid)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	return thread_set(pm, pid, tid, comm) ? 0 : -ENOMEM;
}

void pm_exit(struct pm *pm, int32_t pid, int32_t tid, uint64_t t)
{
	struct thread *th = thread_get(pm, tid);
	struct proc *p;

	if (th) {
		th->exited = true;
		th->t_exit = t;
	}
	if (pid != tid)
		return;
	p = proc_get(pm, pid);
	if (p) {
		p->exited = true;
		p->t_exit = t;
	}
}

/* Whether a mapping of @p, live or dead, ever held @pc. */
static bool ever_held(const struct proc *p, uint64_t pc)
{
	size_t i = live_lower(p, pc);

	if (i < p->nlive && p->live[i]->start <= pc)
		return true;
	for (i = 0; i < p->ndead; i++)
		if (p->dead[i]->start <= pc && pc < p->dead[i]->end)
			return true;
	return false;
}

/* pm_find_from() after the live mappings missed: the dead ones. */
static struct pm_map *find_dead(const struct proc *p, uint64_t pc,
				uint64_t t, uint64_t *from)
{
	struct pm_map *m, *best;
	size_t i;

	/* The answer below depends on @t, unless no mapping ever held @pc
	 * (NULL at any time). */
	*from = ever_held(p, pc) ? UINT64_MAX : 0;
	/* Newest dead mapping that held @pc at @t. */
	for (i = p->ndead; i-- > 0;) {
		m = p->dead[i];
		if (m->start <= pc && pc < m->end && m->t_start <= t &&
		    t < m->t_end)
			return m;
	}
	/* A sample taken inside execve() after the exec's COMM record still
	 * has the user registers of the old image: the mapping that held
	 * @pc last, if nothing holds it now. */
	best = NULL;
	for (i = 0; i < p->ndead; i++) {
		m = p->dead[i];
		if (m->start <= pc && pc < m->end && m->t_end <= t &&
		    (!best || m->t_end > best->t_end))
			best = m;
	}
	return best;
}

struct pm_map *pm_find_from(struct pm *pm, int32_t pid, uint64_t pc,
			    uint64_t t, uint64_t *from)
{
	struct proc *p = proc_get(pm, pid);
	size_t i;

	*from = UINT64_MAX;
	if (!p)
		return NULL;
	i = live_lower(p, pc);
	if (i < p->nlive && p->live[i]->start <= pc &&
	    p->live[i]->t_start <= t) {
		*from = p->live[i]->t_start;
		return p->live[i];
	}
	return find_dead(p, pc, t, from);
}

struct pm_map *pm_find(struct pm *pm, int32_t pid, uint64_t pc, uint64_t t)
{
	uint64_t from;

	return pm_find_from(pm, pid, pc, t, &from);
}

uint64_t pm_gen(struct pm *pm, int32_t pid)
{
	struct proc *p = proc_get(pm, pid);

	return p ? p->gen : 0;
}

const char *pm_process(struct pm *pm, int32_t pid, uint64_t *pidns,
		       int32_t *nspid)
{
	struct proc *p = proc_get(pm, pid);

	*pidns = p ? p->pidns : 0;
	*nspid = p ? p->nspid : 0;
	if (!p)
		return NULL;
	return p->comm;
}

int pm_process_start(struct pm *pm, int32_t pid, int64_t *start_ns,
		     uint32_t *uid)
{
	struct proc *p = proc_get(pm, pid);

	if (!p || !p->start_ns)
		return -ENOENT;
	*start_ns = p->start_ns;
	*uid = p->uid;
	return 0;
}

const char *pm_jitdump(struct pm *pm, int32_t pid, int32_t *dump_pid)
{
	struct proc *p = proc_get(pm, pid);

	if (!p || !p->jitdump)
		return NULL;
	*dump_pid = p->jitdump_pid;
	return p->jitdump;
}

const char *pm_thread(struct pm *pm, int32_t tid)
{
	struct thread *t = thread_get(pm, tid);

	return t && t->comm[0] ? t->comm : NULL;
}

void pm_gc(struct pm *pm, uint64_t horizon)
{
	struct proc **pp, *p;
	struct thread **tp, *t;
	size_t b, i, j;

	for (b = 0; b < HASH_BUCKETS; b++) {
		for (pp = &pm->procs[b]; (p = *pp);) {
			if (p->exited && p->t_exit < horizon) {
				*pp = p->next;
				if (pm->hooks.forget)
					pm->hooks.forget(pm->hooks.ctx,
							 p->pid);
				proc_free(p);
				continue;
			}
			for (i = j = 0; i < p->ndead; i++) {
				if (p->dead[i]->t_end < horizon)
					map_free(p->dead[i]);
				else
					p->dead[j++] = p->dead[i];
			}
			if (j != p->ndead)
				p->gen = ++pm->next_gen;
			p->ndead = j;
			pp = &p->next;
		}
		for (tp = &pm->threads[b]; (t = *tp);) {
			if (t->exited && t->t_exit < horizon) {
				*tp = t->next;
				free(t);
				continue;
			}
			tp = &t->next;
		}
	}
}

void pm_get_stats(const struct pm *pm, struct pm_stats *out)
{
	*out = pm->st;
}

uint64_t pm_pidns(int32_t pid)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/pid");
	if (stat(path, &st) != 0)
		return 0;
	return st.st_ino;
}

void pm_kernel_build_id(char *hex, size_t len)
{
	unsigned char buf[4096];
	char tmp[2 * PM_BUILD_ID_MAX + 1] = "";
	ssize_t n;
	int fd;

	if (len)
		hex[0] = '\0';
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return;
	if (sym_notes_build_id(buf, (size_t)n, 4, tmp, sizeof(tmp)) == 0)
		snprintf(hex, len, "%s", tmp);
}
