/*
 * kallsyms.h - the kallsyms snapshot: what a kernel's frames need to be
 * named on another host (docs/record.md, "The kallsyms snapshot").
 *
 * `sym record` takes one with ksnap_take() when its profile has kernel
 * frames, and writes it beside the profile as PROFILE.kallsyms;
 * `sym symbolize` (and the views) read it back with ksnap_load() and
 * name kernel frames with symi_ksnap_lookup() when the snapshot's kernel build
 * ID is the profile's kernel map's.  The running kernel's /proc/kallsyms
 * goes through the same two calls.
 *
 * The format, its reader (symi_ksnap_parse(), symi_ksnap_lookup()) and
 * the tables made from a snapshot are libsym's (libsym/ksnap.h), which
 * the store shares: `sym upload --kallsyms` sends a snapshot to symd.
 *
 * Caveats: addresses are runtime ones (KASLR included), as the
 * recorder's kernel frames are; a snapshot taken without root has them
 * all 0, and ksnap_take() refuses to make one.
 */
#ifndef SYM_TOOLS_KALLSYMS_H
#define SYM_TOOLS_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ksnap.h"
#include "sym_prof.h"

/**
 * ksnap_take() - a snapshot of the running kernel: /sys/kernel/notes,
 * /proc/sys/kernel/osrelease (uname -r), /proc/modules with each module's
 * /sys/module/NAME/notes/.note.gnu.build-id and
 * /sys/module/NAME/sections/.text, and /proc/kallsyms's text
 * symbols.
 * @param root  where /proc and /sys are: NULL or "/" for this host's;
 *              another directory reads ROOT/proc/kallsyms,
 *              ROOT/sys/module/..., as they would be there (a recorded
 *              snapshot of another machine, a host's /proc and /sys
 *              mounted in a container; `sym kallsyms --root`)
 * @param[out] out   caller owns: free(); the snapshot's bytes
 * @param[out] len   their count
 * @return 0, -EPERM (the addresses are hidden: not root, or
 *         kernel.kptr_restrict), -ENOENT (no /proc/kallsyms), -errno,
 *         -ENOMEM
 */
int ksnap_take(const char *root, char **out, size_t *len);

/** A loaded module, as /proc/modules and /sys/module/NAME show it. */
struct ksnap_kmod {
	char name[56];		/* MODULE_NAME_LEN */
	uint64_t start, size;	/* /proc/modules's address and size */
	uint64_t text;		/* sections/.text; 0 unknown */
	char build_id[2 * 64 + 1];	/* notes/.note.gnu.build-id; "" */
};

/**
 * ksnap_kmods_take() - the loaded modules under @root (as ksnap_take()),
 * sorted by address; none when there is no ROOT/proc/modules (a kernel
 * without module support).  Lines ksnap_kmod_line() refuses (an address
 * hidden: not root) are left out; at most SYMI_KSNAP_MAX_MODULES.
 * @param[out] out  caller owns: free(); NULL when none
 * @return 0, -ENOMEM, -errno (opening /proc/modules)
 */
int ksnap_kmods_take(const char *root, struct ksnap_kmod **out, size_t *n);

/**
 * ksnap_kmod_line() - one line of /proc/modules ("NAME SIZE REFS DEPS
 * STATE 0xADDR [TAINTS]") into @m: its name (at most 55 bytes, no '/'),
 * start and size; the rest of @m zeroed.
 * @return 0, -EINVAL (not such a line, an address of 0 (hidden), a range
 *         past 2^64, a name that is not a file name)
 */
int ksnap_kmod_line(const char *line, struct ksnap_kmod *m);

/** ksnap_kmod_text() - a sections/.text file's @len bytes ("0xHEX" and
 *  an optional newline) into *@text; false (and 0) for anything else. */
bool ksnap_kmod_text(const char *buf, size_t len, uint64_t *text);

/** ksnap_kmods_sort() - @mods by start address, as ksnap_kmod_find()
 *  wants them. */
void ksnap_kmods_sort(struct ksnap_kmod *mods, size_t n);

/** ksnap_kmod_find() - the module of @mods (@n, sorted) whose
 *  [start, start + size) holds @addr, or NULL. */
const struct ksnap_kmod *ksnap_kmod_find(const struct ksnap_kmod *mods,
					 size_t n, uint64_t addr);

/**
 * ksnap_kmod_map() - the profile map of module @m, which `sym record`
 * gives the frames inside it (docs/raw-format.md): kind kernel, pid -1,
 * START..END its range, VADDR = START (runtime addresses, as the
 * kernel's), PGOFF its .text load address (ADDR - PGOFF is the offset
 * into .text that its .ko's table and its snapshot part hold), its build
 * ID, path "[NAME]" (written into @path, @len bytes; borrowed by @pm).
 * @return false when @m has no build ID or no .text inside its range:
 *         its frames stay in the kernel's map
 */
bool ksnap_kmod_map(const struct ksnap_kmod *m, struct sym_prof_map *pm,
		    char *path, size_t len);

/**
 * ksnap_load() - symi_ksnap_load() of the file at @path, with a message
 * (tool_err()) on failure.
 * @return 0, -errno, -EINVAL, -ENOMEM
 */
int ksnap_load(const char *path, struct symi_ksnap **out);

/**
 * ksnap_text_here() - the running kernel's `_text` address, from the
 * first lines of /proc/kallsyms (it is the third), for a profile's
 * kernel map (docs/raw-format.md: a `kernel` map's PGOFF).
 * @return 0, -EPERM (hidden: not root, or kernel.kptr_restrict),
 *         -SYM_E_NOTFOUND (no such line), -errno
 */
int ksnap_text_here(uint64_t *text);

/**
 * ksnap_write_part() - the part of @ks about module @mod (its index + 1;
 * 0: the kernel itself), as a snapshot of its own: the header lines, the
 * module's line, and its symbols (the kernel's: those without a [tag]),
 * by address.  What `sym upload --kallsyms` sends under each build ID.
 * @return 0, -EIO (writing @f)
 */
int ksnap_write_part(FILE *f, const struct symi_ksnap *ks, uint32_t mod);

/** ksnap_hex64() - 1 to 16 hex digits, the whole of @s. */
bool ksnap_hex64(const char *s, uint64_t *v);

#endif
