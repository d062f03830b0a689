/*
 * kallsyms.h - the kallsyms snapshot: what a kernel's frames need to be
 * named on another host (docs/record.md, "The kallsyms snapshot").
 *
 * `sym record` takes one with ksnap_take() when its profile has kernel
 * frames, and writes it beside the profile as PROFILE.kallsyms;
 * `sym symbolize` (and the views) read it back with ksnap_parse() and
 * name kernel frames with ksnap_lookup() when the snapshot's kernel build
 * ID is the profile's kernel map's.  The running kernel's /proc/kallsyms
 * goes through the same two calls.
 *
 * The format, text, one fact a line:
 *
 *     sym-kallsyms 2
 *     kernel BUILDID
 *     release UNAME-R
 *     module NAME START SIZE BUILDID|- TEXT|-
 *     ADDR TYPE NAME [MODULE]
 *     end
 *
 * Symbol lines are /proc/kallsyms's (text symbols only: types t T w W),
 * the module tag separated by a space.  TEXT is the module's .text load
 * address (/sys/module/NAME/sections/.text), where offset 0 of its .ko's
 * .text lies (docs/design.md, "Kernel modules").  Version 1 snapshots,
 * whose module lines have no TEXT, are read too.  ksnap_parse() does no
 * I/O, so it
 * is fuzzed as it is (tests/fuzz/fuzz-kallsyms.c).
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

/* Limits ksnap_parse() enforces. */
#define KSNAP_MAX_BYTES (256u << 20)
#define KSNAP_MAX_LINE 4096
#define KSNAP_MAX_SYMS (1u << 22)
#define KSNAP_MAX_MODULES (1u << 16)

/** A loaded module: a `module` line, or a [tag] without one (start and
 *  size 0: not bounded). */
struct ksnap_module {
	const char *name;	/* in the snapshot's text */
	uint64_t start, size;	/* /proc/modules's base and size */
	const char *build_id;	/* lowercase hex; "" unknown */
	uint64_t text;		/* its .text load address; 0 unknown */
};

struct ksnap_sym {
	uint64_t addr;
	const char *name;	/* in the snapshot's text */
	uint32_t module;	/* index + 1 in mods; 0: the kernel's */
	uint32_t seq;		/* its line's rank among the symbols */
	char type;		/* t T w W */
};

struct ksnap {
	char build_id[2 * 64 + 1];	/* the kernel's; "" unknown */
	const char *release;		/* "" unknown */
	struct ksnap_sym *syms;		/* sorted by address, then seq */
	size_t nsyms;
	struct ksnap_module *mods;
	size_t nmods;
	char *text;			/* owned: the names */
	/* The lookup index: the first symbol at or past each bucket of
	 * 2^shift bytes from syms[0].addr, nbuckets + 1 entries. */
	uint32_t *first;
	size_t nbuckets;
	unsigned shift;
};

/** What ksnap_lookup() found. */
struct ksnap_hit {
	const char *name;	/* borrowed from the snapshot */
	const char *module;	/* NULL: the kernel itself */
	const struct ksnap_module *mod;	/* its module's line; NULL too */
	uint64_t offset;	/* address - symbol */
};

/**
 * ksnap_parse() - read a snapshot from @buf (@len bytes, not
 * NUL-terminated).
 * @param[out] out  caller owns: ksnap_free(); NULL on error
 * @param[out] why  the reason of a -EINVAL, with its line number
 * @return 0, -EINVAL (not a snapshot, a bad line, a limit passed, no
 *         `end`), -ENOMEM
 */
int ksnap_parse(const char *buf, size_t len, struct ksnap **out, char *why,
		size_t whylen);

/** ksnap_free() - a no-op on NULL. */
void ksnap_free(struct ksnap *ks);

/**
 * ksnap_lookup() - the symbol covering @addr: the last one at or below
 * it, of several at one address the one perf names (the last listed),
 * and for a module's symbol only while @addr is inside the module.
 * @return true when one covers @addr (@hit set)
 */
bool ksnap_lookup(const struct ksnap *ks, uint64_t addr,
		  struct ksnap_hit *hit);

/**
 * ksnap_take() - a snapshot of the running kernel: /sys/kernel/notes,
 * uname's release, /proc/modules with each module's
 * /sys/module/NAME/notes/.note.gnu.build-id and
 * /sys/module/NAME/sections/.text, and /proc/kallsyms's text
 * symbols.
 * @param[out] out   caller owns: free(); the snapshot's bytes
 * @param[out] len   their count
 * @return 0, -EPERM (the addresses are hidden: not root, or
 *         kernel.kptr_restrict), -ENOENT (no /proc/kallsyms), -errno,
 *         -ENOMEM
 */
int ksnap_take(char **out, size_t *len);

/**
 * ksnap_load() - ksnap_parse() of the file at @path, with a message
 * (tool_err()) on failure.
 * @return 0, -errno, -EINVAL, -ENOMEM
 */
int ksnap_load(const char *path, struct ksnap **out);

#endif
