/*
 * core.c - the ELF core reader of core.h: program headers, then the notes
 * of every PT_NOTE segment.
 *
 * Every size and offset read from the file is checked against the file's
 * length with 64-bit sums that cannot wrap (lengths stay far below 2^63),
 * so a truncated or corrupt core reads as less, never out of bounds.
 * Layouts are the kernel's for x86-64 (include/uapi/linux/elfcore.h):
 * struct elf_prstatus is 336 bytes with pr_cursig at 12, pr_pid at 32 and
 * pr_reg (struct user_regs_struct, 27 words) at 112; struct elf_prpsinfo
 * has pr_fname[16] at 40 and pr_pid at 24.
 */
#include <elf.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "grow.h"
#include "sym.h"
#include "base.h"

#define PRSTATUS_SIZE 336
#define PRSTATUS_CURSIG 12
#define PRSTATUS_PID 32
#define PRSTATUS_REG 112
#define PRPSINFO_PID 24
#define PRPSINFO_FNAME 40
#define USER_REGS_WORDS 27

/* The note types of a core, from elf.h where it has them. */
#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

struct core_caps {
	size_t threads, files;
};

void core_regs_from_user(const uint64_t *u, uint64_t *r)
{
	/* struct user_regs_struct: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8
	 * rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ... */
	r[0] = u[10];	/* ax */
	r[1] = u[5];	/* bx */
	r[2] = u[11];	/* cx */
	r[3] = u[12];	/* dx */
	r[4] = u[13];	/* si */
	r[5] = u[14];	/* di */
	r[UNWIND_REG_BP] = u[4];
	r[UNWIND_REG_SP] = u[19];
	r[UNWIND_REG_IP] = u[16];
	r[9] = u[9];	/* r8 */
	r[10] = u[8];
	r[11] = u[7];
	r[12] = u[6];
	r[13] = u[3];
	r[14] = u[2];
	r[15] = u[1];
	r[16] = u[0];	/* r15 */
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static int note_prstatus(struct core *c, struct core_caps *cap,
			 const unsigned char *d, uint64_t n)
{
	struct core_thread *t;
	uint64_t user[USER_REGS_WORDS];
	int16_t sig;

	if (n < PRSTATUS_REG + sizeof(user)) {
		c->damage |= CORE_DAMAGE_NOTES;
		return 0;
	}
	if (tool_grow(&c->threads, &cap->threads, c->nthreads + 1,
		      sizeof(*c->threads), 16))
		return -ENOMEM;
	t = &c->threads[c->nthreads++];
	memcpy(&sig, d + PRSTATUS_CURSIG, 2);
	t->signo = sig;
	t->tid = (int)rd32(d + PRSTATUS_PID);
	memcpy(user, d + PRSTATUS_REG, sizeof(user));
	core_regs_from_user(user, t->regs);
	return 0;
}

static void note_prpsinfo(struct core *c, const unsigned char *d, uint64_t n)
{
	if (n < PRPSINFO_FNAME + 16) {
		c->damage |= CORE_DAMAGE_NOTES;
		return;
	}
	memcpy(c->comm, d + PRPSINFO_FNAME, 16);
	c->comm[16] = '\0';
	c->pid = (int)rd32(d + PRPSINFO_PID);
}

static void note_auxv(struct core *c, const unsigned char *d, uint64_t n)
{
	uint64_t i;

	for (i = 0; i + 16 <= n; i += 16)
		if (rd64(d + i) == AT_SYSINFO_EHDR)
			c->vdso = rd64(d + i + 8);
}

/* NT_FILE: count, page size, count * (start, end, page offset), then the
 * count NUL-terminated names. */
static int note_file(struct core *c, struct core_caps *cap,
		     const unsigned char *d, uint64_t n)
{
	uint64_t count, page, i, names;
	const unsigned char *s, *end = d + n;

	if (n < 16)
		goto bad;
	count = rd64(d);
	page = rd64(d + 8);
	if (count > (n - 16) / 24)
		goto bad;
	names = 16 + count * 24;
	s = d + names;
	for (i = 0; i < count; i++) {
		const unsigned char *e = memchr(s, '\0', (size_t)(end - s));
		struct core_file *f;
		const unsigned char *ent = d + 16 + i * 24;

		if (!e)
			goto bad;
		if (tool_grow(&c->files, &cap->files, c->nfiles + 1,
			      sizeof(*c->files), 64))
			return -ENOMEM;
		f = &c->files[c->nfiles++];
		f->start = rd64(ent);
		f->end = rd64(ent + 8);
		if (__builtin_mul_overflow(rd64(ent + 16), page, &f->pgoff) ||
		    f->end < f->start)
			c->nfiles--;
		else
			f->path = (const char *)s;
		s = e + 1;
	}
	return 0;
bad:
	c->damage |= CORE_DAMAGE_NOTES;
	return 0;
}

static int note_one(struct core *c, struct core_caps *cap, uint32_t type,
		    const unsigned char *name, uint32_t namesz,
		    const unsigned char *d, uint64_t n)
{
	/* "CORE" owns the kernel's notes ("LINUX" the extended register
	 * sets, which a stack does not need). */
	if (namesz != 5 || memcmp(name, "CORE", 5) != 0)
		return 0;
	switch (type) {
	case NT_PRSTATUS:
		return note_prstatus(c, cap, d, n);
	case NT_PRPSINFO:
		note_prpsinfo(c, d, n);
		return 0;
	case NT_AUXV:
		note_auxv(c, d, n);
		return 0;
	case NT_FILE:
		return note_file(c, cap, d, n);
	}
	return 0;
}

/* The notes of one PT_NOTE segment, 4-byte aligned as Linux writes them. */
static int read_notes(struct core *c, struct core_caps *cap,
		      const unsigned char *p, uint64_t len)
{
	uint64_t pos = 0;
	int err;

	while (pos + 12 <= len) {
		uint32_t namesz = rd32(p + pos), descsz = rd32(p + pos + 4);
		uint32_t type = rd32(p + pos + 8);
		uint64_t name = pos + 12;
		uint64_t desc = (name + namesz + 3) & ~3ULL;
		uint64_t next = (desc + descsz + 3) & ~3ULL;

		if (desc + descsz > len) {
			c->damage |= CORE_DAMAGE_NOTES;
			return 0;
		}
		err = note_one(c, cap, type, p + name, namesz, p + desc,
			       descsz);
		if (err)
			return err;
		pos = next;
	}
	if (pos < len && pos + 12 > len && len - pos >= 4)
		c->damage |= CORE_DAMAGE_NOTES;
	return 0;
}

static int read_phdr(struct core *c, struct core_caps *cap,
		     const Elf64_Phdr *ph)
{
	struct core_seg *s;

	if (ph->p_type == PT_NOTE) {
		uint64_t len = ph->p_filesz;

		if (ph->p_offset > c->len)
			len = 0;
		else if (len > c->len - ph->p_offset)
			len = c->len - ph->p_offset;
		if (len < ph->p_filesz)
			c->damage |= CORE_DAMAGE_TRUNCATED | CORE_DAMAGE_NOTES;
		return read_notes(c, cap, c->buf + ph->p_offset * !!len, len);
	}
	if (ph->p_type != PT_LOAD)
		return 0;
	s = &c->segs[c->nsegs++];
	s->vaddr = ph->p_vaddr;
	s->memsz = ph->p_memsz;
	s->offset = ph->p_offset;
	s->flags = ph->p_flags;
	s->filesz = ph->p_filesz;
	if (s->filesz > s->memsz)
		s->filesz = s->memsz;
	if (s->offset > c->len || s->filesz > c->len - s->offset) {
		c->damage |= CORE_DAMAGE_TRUNCATED;
		s->filesz = s->offset > c->len ? 0 : c->len - s->offset;
	}
	return 0;
}

int core_parse(const void *buf, size_t len, struct core *c)
{
	struct core_caps cap = { 0, 0 };
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint64_t i;
	int err;

	memset(c, 0, sizeof(*c));
	c->buf = buf;
	c->len = len;
	if (len < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, buf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_CORE ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(ph))
		return -ENOEXEC;
	c->segs = calloc(eh.e_phnum ? eh.e_phnum : 1, sizeof(*c->segs));
	if (!c->segs)
		return -ENOMEM;
	for (i = 0; i < eh.e_phnum; i++) {
		uint64_t off = eh.e_phoff + i * sizeof(ph);

		if (eh.e_phoff > len || off > len - sizeof(ph)) {
			c->damage |= CORE_DAMAGE_PHDRS;
			break;
		}
		memcpy(&ph, c->buf + off, sizeof(ph));
		err = read_phdr(c, &cap, &ph);
		if (err)
			return err;
	}
	return 0;
}

void core_release(struct core *c)
{
	free(c->segs);
	free(c->threads);
	free(c->files);
	memset(c, 0, sizeof(*c));
}

const void *core_mem(const struct core *c, uint64_t addr, size_t *avail)
{
	size_t i;

	for (i = 0; i < c->nsegs; i++) {
		const struct core_seg *s = &c->segs[i];

		if (addr < s->vaddr || addr - s->vaddr >= s->filesz)
			continue;
		*avail = (size_t)(s->filesz - (addr - s->vaddr));
		return c->buf + s->offset + (addr - s->vaddr);
	}
	*avail = 0;
	return NULL;
}

int core_elf_bias(const void *hdr, size_t len, uint64_t start,
		  uint64_t *bias, char *hex, size_t hexlen)
{
	const unsigned char *p = hdr;
	bool have_load = false;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint64_t i;

	hex[0] = '\0';
	if (len < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, p, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phoff > len)
		return -ENOEXEC;
	for (i = 0; i < eh.e_phnum; i++) {
		uint64_t off = eh.e_phoff + i * sizeof(ph);

		if (off > len - sizeof(ph))
			break;
		memcpy(&ph, p + off, sizeof(ph));
		if (ph.p_type == PT_LOAD && !have_load) {
			*bias = start - (ph.p_vaddr & ~0xfffULL);
			have_load = true;
		}
		/* In a file's first page, the note's offset is where it is;
		 * in memory its p_vaddr minus the first segment's. */
		if (ph.p_type == PT_NOTE && !hex[0] && ph.p_offset < len &&
		    ph.p_filesz <= len - ph.p_offset)
			sym_notes_build_id(p + ph.p_offset, ph.p_filesz,
					   ph.p_align, hex, hexlen);
	}
	return have_load ? 0 : -ENOEXEC;
}
