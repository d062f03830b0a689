/*
 * ksnap.h - the kallsyms snapshot: what a kernel's frames need to be
 * named on another host (docs/record.md, "The kallsyms snapshot"): the
 * reader (libsym/ksnap.c; not installed).  Shared by the tools
 * (tools/kallsyms.h: `sym record` takes a snapshot, `sym symbolize` and
 * the views name kernel frames from it, `sym upload --kallsyms` sends
 * it) and by the store, which builds the table of the kernel, or of one
 * of its modules, from a stored snapshot (sym_store_convert(), the file
 * kind SYM_STORE_KALLSYMS), so that symd names kernel frames recorded
 * on other hosts.
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
 * whose module lines have no TEXT, are read too.  symi_ksnap_parse()
 * does no I/O, so it is fuzzed as it is (tests/fuzz/fuzz-kallsyms.c).
 *
 * Addresses are runtime ones (KASLR included), as the recorder's kernel
 * frames are.  A table made from a snapshot (symi_ksnap_table()) has
 * them relative to the boot's own anchor, so that it is the same on
 * every boot of the build (docs/design.md, "Kernel addresses"): the
 * kernel's relative to its `_text` symbol, a module's relative to its
 * TEXT.
 */
#ifndef SYM_KSNAP_H
#define SYM_KSNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits symi_ksnap_parse() enforces. */
#define SYMI_KSNAP_MAX_BYTES (256u << 20)
#define SYMI_KSNAP_MAX_LINE 4096
#define SYMI_KSNAP_MAX_SYMS (1u << 22)
#define SYMI_KSNAP_MAX_MODULES (1u << 16)

/** A loaded module: a `module` line, or a [tag] without one (start and
 *  size 0: not bounded). */
struct symi_ksnap_module {
	const char *name;	/* in the snapshot's text */
	uint64_t start, size;	/* /proc/modules's base and size */
	const char *build_id;	/* lowercase hex; "" unknown */
	uint64_t text;		/* its .text load address; 0 unknown */
};

struct symi_ksnap_sym {
	uint64_t addr;
	const char *name;	/* in the snapshot's text */
	uint32_t module;	/* index + 1 in mods; 0: the kernel's */
	uint32_t seq;		/* its line's rank among the symbols */
	char type;		/* t T w W */
};

struct symi_ksnap {
	char build_id[2 * 64 + 1];	/* the kernel's; "" unknown */
	const char *release;		/* "" unknown */
	struct symi_ksnap_sym *syms;		/* sorted by address, then seq */
	size_t nsyms;
	struct symi_ksnap_module *mods;
	size_t nmods;
	char *text;			/* owned: the names */
	/* The lookup index: the first symbol at or past each bucket of
	 * 2^shift bytes from syms[0].addr, nbuckets + 1 entries. */
	uint32_t *first;
	size_t nbuckets;
	unsigned shift;
};

/** What symi_ksnap_lookup() found. */
struct symi_ksnap_hit {
	const char *name;	/* borrowed from the snapshot */
	const char *module;	/* NULL: the kernel itself */
	const struct symi_ksnap_module *mod;	/* its module's line; NULL too */
	uint64_t offset;	/* address - symbol */
};

/**
 * symi_ksnap_parse() - read a snapshot from @buf (@len bytes, not
 * NUL-terminated).
 * @param[out] out  caller owns: symi_ksnap_free(); NULL on error
 * @param[out] why  the reason of a -EINVAL, with its line number
 * @return 0, -EINVAL (not a snapshot, a bad line, a limit passed, no
 *         `end`), -ENOMEM
 */
int symi_ksnap_parse(const char *buf, size_t len, struct symi_ksnap **out, char *why,
		size_t whylen);

/** symi_ksnap_free() - a no-op on NULL. */
void symi_ksnap_free(struct symi_ksnap *ks);

/**
 * symi_ksnap_lookup() - the symbol covering @addr: the last one at or below
 * it, of several at one address the one perf names (the last listed),
 * and for a module's symbol only while @addr is inside the module.
 * @return true when one covers @addr (@hit set)
 */
bool symi_ksnap_lookup(const struct symi_ksnap *ks, uint64_t addr,
		  struct symi_ksnap_hit *hit);

/**
 * symi_ksnap_text() - the runtime address of the kernel's `_text` in @ks
 * (the last symbol of that name, as the lookups take it).
 * @return true when @ks has one
 */
bool symi_ksnap_text(const struct symi_ksnap *ks, uint64_t *text);

/** symi_ksnap_has_module() - has @ks a module of @build_id with a TEXT
 *  (whose table symi_ksnap_table() can make)? */
bool symi_ksnap_has_module(const struct symi_ksnap *ks, const char *build_id);

/** symi_ksnap_module() - the module of @build_id with a TEXT in @ks, or
 *  NULL. */
const struct symi_ksnap_module *symi_ksnap_module(const struct symi_ksnap *ks,
						  const char *build_id);

/*
 * symi_ksnap_table() - the table of @build_id from @ks: the kernel's
 * (@build_id is the `kernel` line's) at addresses relative to its `_text`,
 * or a module's (a `module` line with that build ID and a TEXT) at
 * offsets into its .text.  Each symbol covers up to the next one of its
 * kernel or module (of several at one address, the last listed, as
 * symi_ksnap_lookup() answers), a module's no further than the module's
 * end; the kernel's last, and a module's last when its size is unknown,
 * cover SYMI_KSNAP_LAST_SIZE bytes (symi_ksnap_lookup() lets the
 * kernel's last cover everything above it, module space included, where
 * no kernel code is).  The kernel's
 * symbols below `_text` are left out (none in a real kernel), as are the
 * symbols of [tags] without a module line ([bpf], [__builtin__ftrace]:
 * code of one boot, not of the build).  The table's flags are
 * SYM_TABLE_KALLSYMS | SYM_TABLE_SYMBOLS.
 * @param[out] buf  caller owns, free(); 8-byte aligned
 * @param[out] len  its size
 * @return 0, -SYM_E_NOTFOUND (@ks has no kernel or module of that build
 *         ID, or not what its addresses are relative to: no `_text`, no
 *         TEXT), -ENOMEM, -SYM_E_TOOBIG
 */
int symi_ksnap_table(const struct symi_ksnap *ks, const char *build_id,
		     void **buf, size_t *len);

#define SYMI_KSNAP_LAST_SIZE 4096

/**
 * symi_ksnap_load() - symi_ksnap_parse() of the file at @path, a regular
 * file of at most SYMI_KSNAP_MAX_BYTES (opened with O_NONBLOCK: a FIFO
 * is refused, never waited on).
 * @param[out] why  the reason of a -EINVAL
 * @return 0, -errno (opening, reading), -EINVAL, -ENOMEM
 */
int symi_ksnap_load(const char *path, struct symi_ksnap **out, char *why,
		    size_t whylen);

#endif
