/*
 * maps.c - libsymprof's mapping table: the executable segments of the
 * loaded objects, found with dl_iterate_phdr() on the drain thread (never
 * in the signal handler), with each object's module ID (its GNU build ID,
 * else derived from its Go build ID note, both read from its PT_NOTE
 * segments in memory, else from its file's head, tail and size:
 * libsym/modid.c, compiled in) and the ELF address conversion taken from
 * its program headers, and where its CFI lies (PT_GNU_EH_FRAME and the
 * segment holding .eh_frame, which cfi.c reads).
 *
 * No libelf: everything comes from the program headers and sections the
 * dynamic loader mapped.  All reads of an object's memory are bounded by
 * the segment they belong to, and happen under sp_drain_lock, which
 * dlclose() holds while it unmaps (symprof.c), so the object cannot go
 * away underneath.
 *
 * Address conversion (docs/raw-format.md, PRODUCT.md): a segment mapped
 * at runtime START with file offset PGOFF has ELF vaddr VADDR at START
 * (all page-aligned), so vaddr(pc) = pc - START + VADDR = pc - load bias.
 *
 * Map ids are stable for the life of the process: an object loaded again
 * (at another address) gets a new id; an unloaded one keeps its line in
 * the file, so that earlier stacks still resolve.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modid.h"
#include "symprof.h"

#define SP_MAX_MAPS 65536

static struct sp_map **all;		/* every map ever seen, by id */
static size_t nall, capall;
static const struct sp_map **live;	/* live maps sorted by start */
static size_t nlive, caplive;
static char exe_path[PATH_MAX];
/* Bumped at every change of the table (refresh, reset): what the unwind
 * memo's entries were made from (unwmemo.c). */
static unsigned epoch = 1;

unsigned sp_maps_epoch(void)
{
	return epoch;
}

size_t sp_maps_count(void)
{
	return nall;
}

const struct sp_map *sp_maps_get(size_t i)
{
	return i < nall ? all[i] : NULL;
}

void sp_maps_reset(void)
{
	all = NULL;
	live = NULL;
	nall = capall = nlive = caplive = 0;
	epoch++;
}

const struct sp_map *sp_maps_find(uint64_t pc)
{
	size_t lo = 0, hi = nlive;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc < live[mid]->start)
			hi = mid;
		else if (pc >= live[mid]->end)
			lo = mid + 1;
		else
			return live[mid];
	}
	return NULL;
}

static void hex(char *out, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = 0;
}

/* Is [vaddr, vaddr + size) inside a readable PT_LOAD, so mapped? */
static bool loaded(const struct dl_phdr_info *info, uint64_t vaddr,
		   uint64_t size)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) &&
		    vaddr >= ph->p_vaddr && size <= ph->p_filesz &&
		    vaddr - ph->p_vaddr <= ph->p_filesz - size)
			return true;
	}
	return false;
}

/* The module ID of a file that has no GNU build ID and no Go note:
 * the file ID of its head, tail and size (libsym/modid.h), read from
 * @path; "" when it cannot be read.  On the drain thread only. */
static void file_id(const char *path, char *out)
{
	unsigned char id[SYMI_MODID_LEN];
	struct stat st;
	int fd;

	if (!path || path[0] != '/')
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    symi_modid_fd(fd, (uint64_t)st.st_size, id) == 0)
		hex(out, id, sizeof(id));
	close(fd);
}

/*
 * The module ID of a loaded object (libsym/modid.h's rule, as libsym and
 * the recorder derive it): its NT_GNU_BUILD_ID note, else the one derived
 * from its Go build ID note, both from its PT_NOTE segments in memory
 * (only those a PT_LOAD maps), else the file ID of the file at @path.
 */
static void build_id(const struct dl_phdr_info *info, const char *path,
		     char *out)
{
	unsigned char go[SYMI_MODID_LEN];
	const unsigned char *d;
	bool have_go = false;
	size_t dn;
	int i;

	out[0] = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const void *p;

		if (ph->p_type != PT_NOTE || ph->p_memsz > (1u << 20) ||
		    !loaded(info, ph->p_vaddr, ph->p_memsz))
			continue;
		p = (const void *)(info->dlpi_addr + ph->p_vaddr);
		if (symi_notes_find(p, ph->p_memsz, ph->p_align, "GNU", 4,
				    SYMI_NT_GNU_BUILD_ID, 64, &d, &dn) == 0) {
			hex(out, d, dn);
			return;
		}
		if (!have_go &&
		    symi_notes_find(p, ph->p_memsz, ph->p_align, "Go\0\0", 4,
				    SYMI_NT_GO_BUILDID, SYMI_GO_BUILD_ID_MAX,
				    &d, &dn) == 0) {
			symi_modid_go(d, dn, go);
			have_go = true;
		}
	}
	if (have_go)
		hex(out, go, sizeof(go));
	else
		file_id(path, out);
}

/* Where the object's CFI is: its PT_GNU_EH_FRAME segment (.eh_frame_hdr)
 * and the PT_LOAD segment that holds the .eh_frame it names.  Zeros when
 * either is missing. */
static void find_eh(const struct dl_phdr_info *info, struct sp_eh *eh)
{
	uintptr_t frame;
	int i;

	memset(eh, 0, sizeof(*eh));
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_EH_FRAME &&
		    loaded(info, ph->p_vaddr, ph->p_memsz)) {
			eh->hdr = info->dlpi_addr + ph->p_vaddr;
			eh->hdr_end = eh->hdr + ph->p_memsz;
		}
	}
	if (!eh->hdr || sp_eh_frame_ptr(eh->hdr, eh->hdr_end, &frame))
		goto none;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) &&
		    frame >= s && frame < s + ph->p_filesz) {
			eh->seg_lo = s;
			eh->seg_hi = s + ph->p_filesz;
			return;
		}
	}
none:
	memset(eh, 0, sizeof(*eh));
}

/* The object's entry point at runtime, from the ELF header the first
 * PT_LOAD maps (file offset 0); 0 when it is not there. */
static uint64_t entry_point(const struct dl_phdr_info *info)
{
	const ElfW(Ehdr) *eh;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || ph->p_offset != 0 ||
		    !loaded(info, ph->p_vaddr, sizeof(*eh)))
			continue;
		eh = (const ElfW(Ehdr) *)(info->dlpi_addr + ph->p_vaddr);
		if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || !eh->e_entry)
			return 0;
		return info->dlpi_addr + eh->e_entry;
	}
	return 0;
}

struct refresh_ctx {
	unsigned long vdso;
	int index;
	int err;
};

static struct sp_map *find_existing(uint64_t start, uint64_t end,
				    uint64_t bias, const char *path)
{
	size_t i;

	for (i = 0; i < nall; i++) {
		struct sp_map *m = all[i];

		if (m->start == start && m->end == end && m->bias == bias &&
		    strcmp(m->path, path) == 0)
			return m;
	}
	return NULL;
}

static int add_map(struct sp_map *m)
{
	if (nall == capall) {
		size_t ncap = capall ? capall * 2 : 64;
		struct sp_map **na;

		if (ncap > SP_MAX_MAPS)
			return -E2BIG;
		na = sp_arena_alloc(ncap * sizeof(*na));
		if (!na)
			return -ENOMEM;
		if (nall)
			memcpy(na, all, nall * sizeof(*na));
		all = na;
		capall = ncap;
	}
	m->id = (uint32_t)nall;
	all[nall++] = m;
	return 0;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct refresh_ctx *ctx = data;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t mask = (uint64_t)(pg > 0 ? pg : 4096) - 1;
	struct sp_eh eh;
	const char *path = info->dlpi_name;
	char bid[2 * 64 + 1];
	bool vdso = false, have_bid = false;
	int i;

	(void)size;
	if (ctx->vdso &&
	    (unsigned long)info->dlpi_phdr ==
		    ctx->vdso + ((const ElfW(Ehdr) *)ctx->vdso)->e_phoff) {
		vdso = true;
		path = "[vdso]";
	} else if (!path || !path[0]) {
		/* The first object is the executable, named "". */
		path = ctx->index == 0 ? exe_path : "";
	}
	ctx->index++;
	find_eh(info, &eh);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start, end;
		struct sp_map *m;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    !ph->p_memsz)
			continue;
		start = (info->dlpi_addr + ph->p_vaddr) & ~mask;
		end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + mask) &
		      ~mask;
		m = find_existing(start, end, info->dlpi_addr, path);
		if (m) {
			m->live = true;
			continue;
		}
		if (!have_bid) {
			build_id(info, vdso ? NULL : path, bid);
			have_bid = true;
		}
		m = sp_arena_alloc(sizeof(*m));
		if (!m || !(m->path = sp_arena_strdup(path))) {
			ctx->err = -ENOMEM;
			return 1;
		}
		m->kind = vdso ? 1 : 0;
		m->live = true;
		m->readable = (ph->p_flags & PF_R) != 0;
		m->start = start;
		m->end = end;
		m->pgoff = ph->p_offset & ~mask;
		m->vaddr = ph->p_vaddr & ~mask;
		m->bias = info->dlpi_addr;
		memcpy(m->build_id, bid, sizeof(bid));
		m->eh = eh;
		m->entry = vdso ? 0 : entry_point(info);
		if (add_map(m)) {
			ctx->err = -ENOMEM;
			return 1;
		}
	}
	return 0;
}

int sp_maps_refresh(void)
{
	struct refresh_ctx ctx = { getauxval(AT_SYSINFO_EHDR), 0, 0 };
	size_t i, j;

	if (!exe_path[0]) {
		ssize_t n = readlink("/proc/self/exe", exe_path,
				     sizeof(exe_path) - 1);

		exe_path[n > 0 ? n : 0] = 0;
	}
	epoch++;
	for (i = 0; i < nall; i++)
		all[i]->live = false;
	dl_iterate_phdr(phdr_cb, &ctx);
	if (nall > caplive) {
		const struct sp_map **nl = sp_arena_alloc(capall * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		live = nl;
		caplive = capall;
	}
	/* Insertion sort by start: a few dozen objects, and no qsort (it
	 * may malloc). */
	nlive = 0;
	for (i = 0; i < nall; i++) {
		const struct sp_map *m = all[i];

		if (!m->live)
			continue;
		for (j = nlive; j > 0 && live[j - 1]->start > m->start; j--)
			live[j] = live[j - 1];
		live[j] = m;
		nlive++;
	}
	return ctx.err;
}

/* ---- is there a call before this return address? ---------------------- */

/* The bytes of the x86-64 signal-return trampoline (__restore_rt):
 * mov $15, %rax; syscall.  A signal frame's return address points at it
 * without a call before it. */
static const unsigned char restore_rt[] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
};

bool sp_call_precedes(const struct sp_map *m, uint64_t ra)
{
	const unsigned char *p = (const unsigned char *)ra;
	uint64_t avail = ra - m->start;
	int k;

	if (ra >= m->end)
		return false;
	if (!m->readable)
		return true;	/* execute-only code: cannot check */
	if (m->end - ra >= sizeof(restore_rt) &&
	    memcmp(p, restore_rt, sizeof(restore_rt)) == 0)
		return true;
	/* call rel32 */
	if (avail >= 5 && p[-5] == 0xe8)
		return true;
	/* call *r/m64: ff /2, 2 to 7 bytes, after an optional REX or
	 * notrack (3e) prefix */
	for (k = 2; k <= 8 && (uint64_t)k <= avail; k++) {
		const unsigned char *q = p - k;
		unsigned modrm, mod, rm, len;

		if (q[0] != 0xff)
			continue;
		modrm = q[1];
		if (((modrm >> 3) & 7) != 2)
			continue;
		mod = modrm >> 6;
		rm = modrm & 7;
		len = 2;
		if (mod != 3 && rm == 4) {
			len++;
			if (mod == 0 && (q[2] & 7) == 5)
				len += 4;
		}
		if (mod == 1)
			len += 1;
		else if (mod == 2)
			len += 4;
		else if (mod == 0 && rm == 5)
			len += 4;
		if (len == (unsigned)k)
			return true;
	}
	return false;
}
