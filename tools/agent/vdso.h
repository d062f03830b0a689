/*
 * vdso.h - a process's vDSO image read from /proc/PID/mem, and this
 * process's, the stand-in when that read fails.
 *
 * The kernel maps one vDSO image into every 64-bit process, so when a
 * process's own copy can no longer be read (it exited, or exec'ed into
 * another image, before the recorder read /proc/PID/mem) the recorder's
 * is the same bytes; perf takes its own vDSO for every process the same
 * way (tools/perf/util/vdso.c).  Callers still check what they take: the
 * size of the process's mapping, and the build ID when the kernel gave
 * one.
 */
#ifndef SYM_TOOLS_AGENT_VDSO_H
#define SYM_TOOLS_AGENT_VDSO_H

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/types.h>
#include <unistd.h>

/** The largest vDSO image taken (today's are 8 KiB). */
#define AGENT_VDSO_MAX ((size_t)1 << 20)

/**
 * agent_self_vdso - this process's vDSO: its ELF image, which ends with
 * its section headers, and (through @len) that image's size.  NULL when
 * there is none, or it is not a 64-bit ELF image of at most
 * AGENT_VDSO_MAX bytes.  The image is the kernel's, mapped for the
 * process's life: never freed.
 */
static inline const void *agent_self_vdso(size_t *len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	size_t n;

	*len = 0;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	n = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (n < sizeof(*eh) || n > AGENT_VDSO_MAX)
		return NULL;
	*len = n;
	return eh;
}

/**
 * agent_vdso_read - read @len bytes of process @pid's memory at @start
 * (its vDSO image) into @buf, from /proc/PID/mem.
 * @return 0; -errno (the process is gone: -ENOENT, -ESRCH); -EIO (the
 *         range is not mapped whole)
 */
static inline int agent_vdso_read(pid_t pid, uint64_t start, void *buf,
				  size_t len)
{
	char path[64];
	ssize_t got;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, buf, len, (off_t)start);
	if (got < 0)
		err = -errno;
	else if ((size_t)got != len)
		err = -EIO;
	close(fd);
	return err;
}

/**
 * agent_vdso_fits - whether an image of @img_len bytes can be what a
 * [vdso] mapping of @map_len bytes holds: the mapping is the image
 * rounded up to whole pages.
 */
static inline int agent_vdso_fits(size_t img_len, size_t map_len)
{
	return img_len && map_len >= img_len && map_len - img_len < 4096;
}

#endif /* SYM_TOOLS_AGENT_VDSO_H */
