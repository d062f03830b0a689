/*
 * internal.h - libsym's private declarations, shared between its files.
 *
 * Nothing here is installed or exported.  Cross-file internals are named
 * symi_*; everything else in libsym is static.
 *
 * Module map (the .c files of libsym/; the profile model is libsym/prof/,
 * a library of its own, with its map in libsym/prof/internal.h):
 *   error.c    sym_strerror(), sym_version(), logging (symi_log*), the
 *              options check (symi_opts_check()), the clock
 *   alloc.c    allocation with fault injection, symi_grow() (base.h;
 *              also compiled into libsymprofile)
 *   buf.c      struct symi_buf, the capped growable buffer (base.h; also
 *              compiled into libsymprofile, and used by symd and the
 *              tools through the static archives)
 *   elf.c      opening ELF files (path or memory), zstd decompression,
 *              build IDs, .gnu_debuglink, finding separate debug files
 *   reloc.c    a kernel module's relocations applied to its DWARF
 *   sections.c readying debug sections for libdw: skip unused ones,
 *              inflate zlib ones with libdeflate
 *   symtab.c   .symtab/.dynsym/MiniDebugInfo symbols into the builder
 *   dwarf.c    the one-pass DWARF walk (libdw) into the builder
 *   gopclntab.c Go's function table (.gopclntab: names, lines, inline
 *              trees) into the builder, for modules without DWARF
 *   lines.c    a direct reader of DWARF line programs (versions 2 to 5)
 *   path.c     source paths as the peers spell them (comp_dir joined)
 *   build.c    the table builder: dedup, sort, sweep
 *   pack.c     the table format writer: prune, renumber, bit-pack
 *   table.c    the table format reader: open, lookups, unpacking
 *   zstr.c     a string blob as zstd frames (the strings, the demangled
 *              names), inflated a frame at a time and shared by the
 *              process; the same registry keeps records built back
 *              from columns
 *   cols.c     packed arrays stored as compressed columns (format 9),
 *              and built back into records
 *   batch.c    many lookups at once (sym_table_lookup_batch())
 *   split.c    cutting a table into self-contained parts
 *   module.c   struct sym_module: glue of the above
 *   demangle.c libiberty wrapper
 *   store.c    the store (sym_store_*): tables per build ID in LMDB; the
 *              only file that sees LMDB
 *   files.c    the store's file area: debug files and executables by
 *              build ID
 *   convert.c  building a stored table from the store's own files
 *              (sym_store_convert())
 *   sources.c  the source files a debug file's line tables name, and
 *              the store's copies of them (sym_file_sources(),
 *              sym_store_put_source())
 *   modid.c    module IDs of files without a GNU build ID, and the note
 *              walker (modid.h; also compiled into libsymprof)
 *   perfmap.c  the perf map reader (/tmp/perf-PID.map: JIT code's names;
 *              perfmap.h; also compiled into libsymprof)
 *   jitdump.c  the jitdump reader (jit-PID.dump: JIT code's loads and
 *              moves; jitdump.h)
 *   ksnap.c    kallsyms snapshots: read, looked up, made into tables of a
 *              kernel or module (ksnap.h; the tools' too), and
 *              sym_kallsyms_check() (files.c) for the store's uploads
 */
#ifndef SYM_INTERNAL_H
#define SYM_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

#include "sym.h"
#include "modid.h"
#include "base.h"
#include "format.h"

/*
 * Logging.  symi_log() checks the level before formatting.
 */
extern int symi_log_level;
void symi_log_(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define symi_log(level, ...)                                                 \
	do {                                                                 \
		if ((level) <= symi_log_level)                               \
			symi_log_((level), __VA_ARGS__);                     \
	} while (0)
#define symi_warn(...) symi_log(SYM_LOG_WARN, __VA_ARGS__)
#define symi_info(...) symi_log(SYM_LOG_INFO, __VA_ARGS__)
#define symi_debug(...) symi_log(SYM_LOG_DEBUG, __VA_ARGS__)

/*
 * Options structs (sym.h, "ABI").  Each public function that takes one
 * calls SYMI_OPTS_CHECK() first and reads its fields with SYMI_OPT() only.
 *
 * symi_opts_check() - may libsym use @opts, a caller's options struct
 * whose first field is its size_t sz, and of which this library knows the
 * bytes below @known (the end of its last field)?  NULL is accepted (the
 * defaults).  Returns 0, or -EINVAL, logged with @type, when sz is below
 * sizeof(size_t) (0: not declared with SYM_OPTS()), a byte from @known to
 * sz is not zero (a newer caller asks for an option this libsym lacks), or
 * @flags (its flags field) has a bit outside @known_flags.
 */
int symi_opts_check(const void *opts, size_t known, const char *type,
		    uint64_t flags, uint64_t known_flags);
#define SYMI_OFFSETOFEND(type, f)                                            \
	(offsetof(type, f) + sizeof(((type *)0)->f))
/* Every options struct has a flags field; @last is its last field. */
#define SYMI_OPTS_CHECK(o, type, last, known_flags)                          \
	symi_opts_check((o), SYMI_OFFSETOFEND(struct type, last), #type,     \
			SYMI_OPT(o, flags), (known_flags))
/* Field @f of the options @o, or 0 when @o is NULL or its sz ends before
 * @f does (a caller built against an older sym.h). */
#define SYMI_OPT(o, f)                                                       \
	((o) && (o)->sz >= SYMI_OFFSETOFEND(__typeof__(*(o)), f) ? (o)->f : 0)

/*
 * The version of the converter (the DWARF and symbol reading and the
 * builder).  Bump it whenever a fix changes what a table says for the
 * same input: stored tables from an older converter are then rebuilt.
 */
#define SYMI_CONVERTER_VERSION 8

/* CRC of a table buffer with its header's crc field taken as zero.  A
 * buffer of 8 MiB or more is checked in two halves, the second on a
 * thread of its own (joined before the return). */
uint32_t symi_table_crc(const void *buf, size_t len);

/* The CRC-32 of A followed by B, from A's (@crc1), B's (@crc2) and B's
 * length, as zlib's crc32_combine(). */
uint32_t symi_crc32_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

/* The CRC check of sym_table_verify() alone: 0, or -SYM_E_BADTABLE with
 * the same warning.  For a table whose structure was verified before
 * (the store's STORE_VERIFIED entries). */
int symi_table_check_crc(const struct sym_table *t);

/*
 * The revision of sym_table_verify()'s checks.  Bump it whenever it
 * checks more: the store's entries verified by an older revision are
 * then verified again (store.c, STORE_VERIFIED).
 */
#define SYMI_VERIFY_VERSION 1

/* Parse a lowercase hex build ID (2 to 128 digits) into @id (64 bytes).
 * Returns 0 or -EINVAL (store.c). */
int symi_build_id_parse(const char *hex, uint8_t *id, size_t *len);

/* The store's directory and mode, for files.c (store.c keeps LMDB). */
const char *symi_store_dir(const struct sym_store *st);
bool symi_store_rdonly(const struct sym_store *st);
/* Each build ID of the file area with its files' bytes and newest
 * mtime (files.c); a non-zero return of @fn stops the scan. */
typedef int (*symi_files_fn)(void *ctx, const char *hex, uint64_t bytes,
			     int64_t mtime);
int symi_files_scan(struct sym_store *st, symi_files_fn fn, void *ctx);
/* Delete the files of @build_id from the file area (files.c); true when
 * there was one. */
bool symi_files_remove(struct sym_store *st, const char *build_id);
/* The source files kept for @build_id (sources.c): delete them and the
 * list of names, and their bytes (for sym_store_gc()). */
void symi_sources_remove(struct sym_store *st, const char *build_id);
uint64_t symi_sources_bytes(struct sym_store *st, const char *build_id);

/*
 * symi_store_verified() - is @build_id's entry recorded as verified whole
 * (store.c, STORE_VERIFIED: its reads check the CRC alone)?  1, 0, or
 * -SYM_E_NOTFOUND, -SYM_E_STALE, -EINVAL.  For tests.
 */
int symi_store_verified(struct sym_store *st, const char *build_id);

/*
 * Tickets (store.c, docs/store.md "Writing without tearing"): a put of a
 * build ID holds one from before it reads its input until it commits,
 * and sym_store_remove() of the build ID deletes it, which makes the put
 * fail with -ECANCELED.  sym_store_put() takes its own; sym_store_convert()
 * takes one before it opens the files, so that a remove that deleted
 * them also cancels a conversion that had opened them already.
 * symi_store_ticket(): 0 and *@ticket (never 0), or -errno.
 * symi_store_put_ticket(), symi_store_put_negative_ticket(): as
 * sym_store_put() and sym_store_put_negative(), plus -ECANCELED; they use
 * the ticket up, whatever they return (a @ticket of 0 for a negative
 * entry: none).  symi_store_ticket_drop(): a ticket not used after all.
 */
int symi_store_ticket(struct sym_store *st, const char *build_id,
		      uint32_t *ticket);
int symi_store_put_ticket(struct sym_store *st, const char *build_id,
			  const struct sym_table *t, const char *source,
			  uint32_t ticket);
int symi_store_put_negative_ticket(struct sym_store *st,
				   const char *build_id, int kind,
				   const char *reason, uint32_t ticket);
void symi_store_ticket_drop(struct sym_store *st, const char *build_id,
			    uint32_t ticket);

/*
 * ELF files (elf.c).
 */

/* The longest build ID taken, in bytes (a longer note is skipped). */
#define SYMI_BUILD_ID_MAX 64

/** An open ELF file.  Zeroed means closed. */
struct symi_elf {
	Elf *elf;		/* elf_end() */
	int fd;			/* close if path != NULL */
	void *image;		/* free(): memory image for elf_memory() */
	char *path;		/* free(); NULL for memory images */
	void **bufs;		/* free() each: decompressed section data */
	size_t nbufs, capbufs;
	/* Decompressed bytes declared by the sections taken so far, for
	 * the per-file limit (symi_inflate_check()). */
	uint64_t inflated;
	GElf_Ehdr ehdr;
	/* Build ID, raw bytes; id_len 0 when there is none. */
	uint8_t build_id[SYMI_BUILD_ID_MAX];
	size_t build_id_len;
	/* The module ID's kind (enum sym_modid_kind, modid.h's rule) and,
	 * for SYM_MODID_GO and SYM_MODID_FILE, its bytes; SYM_MODID_GNU is
	 * build_id. */
	int modid_kind;
	uint8_t modid[SYMI_MODID_LEN];
	/* A Linux kernel module (ET_REL with .modinfo): the index of its
	 * .text section, whose offsets are the module's addresses
	 * (docs/design.md, "Kernel modules"); 0 for any other file. */
	size_t ko_text;
	/* Its .debug_* sections were relocated (symi_elf_relocate_debug()). */
	bool relocated;
};

/*
 * symi_elf_open() - open an ELF file read-only.
 * @return 0, -errno, -SYM_E_NOTELF, -SYM_E_BADELF
 * On success the ELF header and build ID are read and every
 * zstd-compressed section has been decompressed in memory (elfutils 0.188
 * cannot), so libdw sees plain or zlib sections only.  @e must be zeroed;
 * it is zeroed again on failure.
 */
int symi_elf_open(const char *path, struct symi_elf *e);

/* symi_elf_open_mem() - the same over a copy of @buf. */
int symi_elf_open_mem(const void *buf, size_t len, struct symi_elf *e);

/* symi_elf_module_id() - @e's module ID in hex into @hex (2 *
 * SYMI_BUILD_ID_MAX + 1 bytes); "" when it has none (elf.c). */
void symi_elf_module_id(const struct symi_elf *e, char *hex);

/* symi_elf_close() - release everything; @e is zeroed.  NULL-safe. */
void symi_elf_close(struct symi_elf *e);

/* Remember a decompressed buffer of @e, freed in symi_elf_close(); takes
 * ownership of @buf, even on failure.  Returns 0 or -ENOMEM. */
int symi_elf_keep_buf(struct symi_elf *e, void *buf);

/*
 * symi_elf_set_plain() - make a (compressed) section look plain to libelf
 * and libdw: its cached Elf_Data points at @buf (@len bytes) and its
 * header loses SHF_COMPRESSED.  @buf must outlive the ELF (use
 * symi_elf_keep_buf()).  Returns false when libelf refuses.
 */
bool symi_elf_set_plain(Elf_Scn *scn, Elf_Data *data, void *buf, size_t len,
			uint64_t align);

/*
 * symi_elf_prepare_dwarf() - before libdw opens @e (sections.c): empty
 * the compressed debug sections the builder never reads and decompress
 * the zlib ones it reads with libdeflate.  Returns 0, -ENOMEM, or
 * -SYM_E_INFLATE_LIMIT (symi_inflate_check(): a zlib or .zdebug_
 * section over the limits); other problems leave the section for libdw.
 * A kernel module's .debug_* sections are then relocated
 * (symi_elf_relocate_debug(), with its errors).
 */
int symi_elf_prepare_dwarf(struct symi_elf *e);

/*
 * symi_elf_relocate_debug() - for a kernel module (@e->ko_text), apply
 * its relocations to the .debug_* sections the builder reads, in copies
 * libelf then returns (reloc.c); once per @e; nothing for other files.
 * Called by symi_elf_prepare_dwarf(), after the inflation.  Returns 0,
 * -ENOMEM, -SYM_E_BADDWARF (a corrupt relocation, logged),
 * -SYM_E_UNSUPPORTED (a compressed section to relocate).
 */
int symi_elf_relocate_debug(struct symi_elf *e);

/* Is .debug_* section @name one the builder never reads (sections.c)? */
bool symi_debug_section_unused(const char *name);

/*
 * symi_xz_inflate() - decompress the xz stream @src (@srclen bytes) into
 * a new buffer of at most @max bytes, grown with the output (elf.c).
 * @param[out] out, outlen  caller owns @out, free()
 * @return 0, -ENOMEM, -E2BIG (more than @max), -SYM_E_DECOMPRESS
 */
int symi_xz_inflate(const void *src, size_t srclen, size_t max, void **out,
		    size_t *outlen);

/*
 * symi_inflate_check() - may section @name (index @ndx) of @e, @in
 * compressed bytes declaring @out decompressed ones, be decompressed
 * under the limits of sym_set_inflate_limits()?  On success @out is
 * added to e->inflated.  Call it before allocating anything for the
 * section.  Returns 0 or -SYM_E_INFLATE_LIMIT (logged at WARN with the
 * limit that was hit and the variable that sets it).  sections.c.
 */
int symi_inflate_check(struct symi_elf *e, const char *name, size_t ndx,
		       uint64_t in, uint64_t out);

/*
 * symi_inflate_check_file() - symi_inflate_check() for every compressed
 * .debug_* section (zlib, zstd or any other ch_type) and .zdebug_*
 * section of @e, counted in e->inflated; nothing is decompressed.  For a
 * file libdw will open and decompress whole by itself (a .dwo file).
 * Returns 0 or -SYM_E_INFLATE_LIMIT.  sections.c.
 */
int symi_inflate_check_file(struct symi_elf *e);

/*
 * symi_dwo_check() - before libdw looks for the split unit of a skeleton
 * unit of @e (DW_AT_dwo_name @dwo_name, DW_AT_comp_dir @comp_dir, may be
 * NULL): each file libdw may open for it (libdw_find_split_unit.c:
 * DWO_NAME in the directory of @e's file, then COMP_DIR/DWO_NAME; one
 * file counted once) has its compressed sections checked by
 * symi_inflate_check_file(), counted in e->inflated with @e's own, since
 * libdw keeps the split files it takes until the end.  A candidate that
 * is missing or not ELF is libdw's to skip; one that is a FIFO, a device
 * or a socket is refused (libdw's open() of a FIFO would block forever,
 * and an uploaded file can name any path).  Returns 0, -ENOMEM,
 * -SYM_E_NOTREG or -SYM_E_INFLATE_LIMIT.  elf.c.
 */
int symi_dwo_check(struct symi_elf *e, const char *dwo_name,
		   const char *comp_dir);

/* symi_elf_has_dwarf() - the file has a .debug_info section with data. */
bool symi_elf_has_dwarf(const struct symi_elf *e);

/* Lowercase hex of @id into @hex (2 * len + 1 bytes). */
void symi_hex(const uint8_t *id, size_t len, char *hex);

/*
 * symi_notes_build_id() - sym_notes_build_id() with the raw bytes:
 * *id points into @notes (borrowed, as long as they are), *idlen is 1 to
 * SYMI_BUILD_ID_MAX.  @notes may be NULL only with @len 0.
 * @return 0, -SYM_E_NOTFOUND
 */
int symi_notes_build_id(const void *notes, size_t len, size_t align,
			const uint8_t **id, size_t *idlen);

/*
 * symi_find_debug_file() - find the separate debug file of @e.
 * @param e      the opened module (its path and build ID are used)
 * @param opts   debuginfo_path and debug_dir; NULL for defaults
 * @param[out] dbg  on success the opened debug file
 * @return 0, -SYM_E_NOTFOUND
 * Order: build ID under each debuginfo_path dir and the debug dir
 * (DIR/.build-id/xx/rest.debug); then .gnu_debuglink next to the file,
 * in DIR/.debug/ beside it, under each debuginfo_path dir (DIR/name and
 * DIR/<dirname of file>/name) and under the debug dir
 * (DEBUGDIR/<dirname of file>/name).  A debuglink candidate must match
 * the CRC; a build-ID candidate must match the build ID.
 */
int symi_find_debug_file(const struct symi_elf *e,
			 const struct sym_module_opts *opts,
			 struct symi_elf *dbg);

/*
 * symi_find_alt_file() - find the dwz alt file named by @e's
 * .gnu_debugaltlink: the path it gives (relative to @e's directory) and
 * the build ID under the debug dirs.  alt->inflated starts at
 * e->inflated: the alt file's zstd sections are checked against the
 * per-file decompression limit together with @e's (symi_dwarf_read()
 * goes on counting both).
 * @return 0, -SYM_E_NOTFOUND (also when @e has no such section), -ENOMEM,
 *         -SYM_E_INFLATE_LIMIT
 */
int symi_find_alt_file(const struct symi_elf *e,
		       const struct sym_module_opts *opts,
		       struct symi_elf *alt);

/* An address range [lo, hi). */
struct symi_span {
	uint64_t lo, hi;
};

/* Sort spans by start (build.c). */
void symi_span_sort(struct symi_span *v, size_t n);

/* Index of the span of the sorted array @v holding @addr, or -1 when
 * none does.  Spans must not overlap. */
long symi_span_find(const struct symi_span *v, size_t n, uint64_t addr);

/*
 * The table builder (build.c).  The DWARF walker and the symbol reader
 * feed it; symi_builder_finish() turns it into a table buffer.
 */
struct symi_builder;

#define SYMI_NONE UINT32_MAX

int symi_builder_new(struct symi_builder **out);

/* The table @b finishes is thrown away after a few lookups
 * (sym_module_table_for()): pack it for speed, not size. */
void symi_builder_quick(struct symi_builder *b);

/*
 * The table @b finishes need answer only the @n ascending link-time
 * addresses @addrs (copied), as the full table would; nothing else is
 * promised (sym_module_table_for()).  Line rows that hold none of them
 * are not kept, symbols that answer none are left out of the table, and
 * dwarf.c skips the subtrees of functions whose code holds none.
 * Returns 0 or -ENOMEM.
 */
int symi_builder_only(struct symi_builder *b, const uint64_t *addrs,
		      size_t n);

/* Must @b's table answer an address of [@lo, @hi)?  Always, without
 * symi_builder_only().  Not const: it keeps where it found the last
 * @lo, as ascending calls (a line program's rows) are answered from
 * there. */
bool symi_builder_wants(struct symi_builder *b, uint64_t lo, uint64_t hi);

/* Does [@lo, @hi) hold one of the @n ascending addresses @a? */
bool symi_addrs_hold(const uint64_t *a, size_t n, uint64_t lo, uint64_t hi);

/* Ask @fn (may be NULL) about each demangled name, with @ctx (struct
 * sym_module_opts .spelling). */
void symi_builder_spelling(struct symi_builder *b, sym_spelling_fn fn,
			   void *ctx);
void symi_builder_free(struct symi_builder *b);

/* Intern a string; returns its offset in the string blob, 0 for NULL/"".
 * Returns SYMI_NONE on -ENOMEM. */
uint32_t symi_builder_str(struct symi_builder *b, const char *s);

/* Set the address window: anything outside [lo, hi) is dropped (tombstones,
 * discarded sections).  Called once, before adding. */
void symi_builder_window(struct symi_builder *b, uint64_t lo, uint64_t hi);

/* An executable section [lo, hi): rows and scopes outside every one are
 * dropped (tombstones).  Returns 0 or -ENOMEM.  symi_builder_in_text()
 * tells whether @addr is in one. */
int symi_builder_add_text(struct symi_builder *b, uint64_t lo, uint64_t hi);
bool symi_builder_in_text(const struct symi_builder *b, uint64_t addr);

/* Symbol binding/type as stored (enum symi_sym_kind). */
enum symi_sym_flags {
	SYMI_SYM_GLOBAL = 1 << 0,
	SYMI_SYM_WEAK = 1 << 1,
	SYMI_SYM_FUNC = 1 << 2,   /* STT_FUNC / STT_GNU_IFUNC */
	SYMI_SYM_OBJECT = 1 << 3, /* STT_OBJECT / STT_TLS / STT_COMMON */
	SYMI_SYM_SIZED = 1 << 4,
	SYMI_SYM_ABS = 1 << 5,    /* SHN_ABS and other reserved indices */
	SYMI_SYM_PLT = 1 << 6,    /* a PLT stub named NAME@plt, made up */
	SYMI_SYM_NOTYPE = 1 << 7, /* STT_NOTYPE */
	SYMI_SYM_HIDDEN = 1 << 8, /* STV_HIDDEN or STV_INTERNAL */
	/* Where it was read: the module's own file or its debug file,
	 * .dynsym (else .symtab), MiniDebugInfo.  The peers each read one
	 * table (build.c, "Whose symbols"); a symbol with none of these
	 * (added by a test) counts for all of them. */
	SYMI_SYM_MAIN = 1 << 9,
	SYMI_SYM_DEBUG = 1 << 10,
	SYMI_SYM_DYNSYM = 1 << 11,
	SYMI_SYM_MINI = 1 << 12,
	/* The builder's spelling callback accepted the demangled name
	 * (SYM_FRAME_SPELLING). */
	SYMI_SYM_SPELLING = 1 << 13,
};
/* The bits that say where a symbol was read, not what it is. */
#define SYMI_SYM_ORIGIN (SYMI_SYM_MAIN | SYMI_SYM_DEBUG | SYMI_SYM_DYNSYM | \
			 SYMI_SYM_MINI)

/* Which symbol tables the inputs have (symi_builder_note_tables()). */
enum symi_tables {
	SYMI_TAB_MAIN_SYMTAB = 1 << 0,	/* the module's file has .symtab */
	SYMI_TAB_DBG_SYMTAB = 1 << 1,	/* its debug file has .symtab */
	SYMI_TAB_DWARF_DBG = 1 << 2,	/* the DWARF is in the debug file */
};
void symi_builder_note_tables(struct symi_builder *b, uint32_t tables);

/* An allocated section [lo, hi): a sizeless symbol covers addresses of
 * its own section only, as in eu-addr2line.  Returns 0 or -ENOMEM. */
int symi_builder_add_section(struct symi_builder *b, uint64_t lo,
			     uint64_t hi);

/* Add one symbol.  @name is copied (interned).  @file is the STT_FILE
 * name a local symbol belongs to (the source file when there is no
 * DWARF, as llvm-symbolizer and GNU addr2line print it), or NULL.
 * Returns 0 or -ENOMEM. */
int symi_builder_add_symbol(struct symi_builder *b, uint64_t addr,
			    uint64_t size, const char *name, const char *file,
			    uint32_t flags);

/* A function: name, linkage name (may be NULL), declaration (a file from
 * symi_builder_file() or SYMI_NONE).  Returns the function index or
 * SYMI_NONE on -ENOMEM.  Deduplicated. */
uint32_t symi_builder_func(struct symi_builder *b, const char *name,
			   const char *linkage, uint32_t decl_file,
			   uint32_t decl_line);

/* The same with all of struct symt_func: also the name of the subprogram
 * holding the definition (its outer; may be NULL), enum symt_func_flags
 * and the name eu-addr2line prints where it is another (eu; NULL for
 * none; part of what deduplicates functions).  With unique, the function
 * is merged with no other: its outer is set later
 * (symi_builder_func_outer()), and two lambdas' operator() (no linkage
 * name, no declaration) differ only by it. */
struct symi_func_in {
	const char *name, *linkage, *outer, *eu;
	uint32_t decl_file, decl_line, flags;
	bool unique;
};
uint32_t symi_builder_func_in(struct symi_builder *b,
			      const struct symi_func_in *in);

/* Set the outer name of function @f (see struct symt_func) if it has
 * none; it is not part of what deduplicates functions.  Returns 0 or
 * -ENOMEM. */
int symi_builder_func_outer(struct symi_builder *b, uint32_t f,
			    const char *outer);

/* A source file by its whole path (copied), whose first @rel bytes come
 * before the path relative to the compilation directory (0: all of it is;
 * values past the path count as 0).  Returns the file index or
 * SYMI_NONE.  Deduplicated on both. */
uint32_t symi_builder_file(struct symi_builder *b, const char *path,
			   uint32_t rel);

/* Say that an allocation made for @b's input failed, so that
 * symi_builder_finish() fails with -ENOMEM.  Returns SYMI_NONE. */
uint32_t symi_builder_oom(struct symi_builder *b);

/*
 * Source paths (path.c).  A line table's file: the CU's DW_AT_comp_dir,
 * the file's include directory entry and its name, joined as
 * llvm-symbolizer 14 joins them (a relative directory after comp_dir,
 * nothing normalized).
 */
struct symi_path {
	const char *comp_dir;	/* DW_AT_comp_dir, or NULL */
	const char *dir;	/* the include directory, or NULL for none */
	const char *name;	/* the file name entry; not NULL */
	bool dir_rel;		/* @dir belongs to the relative path: false
				 * for DWARF 5's directory 0 (comp_dir as
				 * the line table spells it) */
};

/* Intern the whole path of @f, with the length of its comp_dir part, as
 * symi_builder_file() does.  Returns the file index or SYMI_NONE
 * (-ENOMEM, recorded in @b). */
uint32_t symi_path_intern(struct symi_builder *b, const struct symi_path *f);

/* A scope: a subprogram (parent SYMI_NONE) or an inlined instance;
 * @flags: enum symt_scope_flags.  Returns the scope index or SYMI_NONE
 * on -ENOMEM. */
uint32_t symi_builder_scope(struct symi_builder *b, uint32_t parent,
			    uint32_t func, uint32_t call_file,
			    uint32_t call_line, uint32_t call_column,
			    uint64_t entry, uint32_t flags);

/* An address range [lo, hi) of @scope at nesting @depth (0 for a
 * subprogram).  Returns 0 or -ENOMEM. */
int symi_builder_scope_range(struct symi_builder *b, uint32_t scope,
			     uint32_t depth, uint64_t lo, uint64_t hi);

/*
 * symi_builder_lines_mark(), symi_builder_lines_undo() - the rows added
 * so far, and dropping every row added after such a mark: lines.c takes
 * back the rows of a line program it could not follow to the end, so
 * that libdw's rows for that CU replace them (dwarf.c).
 */
size_t symi_builder_lines_mark(const struct symi_builder *b);
void symi_builder_lines_undo(struct symi_builder *b, size_t mark);

/* A line-table row range [lo, hi).  Where rows of different sequences
 * overlap, the one added first wins.  Returns 0 or -ENOMEM. */
int symi_builder_line(struct symi_builder *b, uint64_t lo, uint64_t hi,
		      uint32_t file, uint32_t line, uint32_t column,
		      uint32_t discriminator);

/* Mark that DWARF contributed to the table. */
void symi_builder_set_dwarf(struct symi_builder *b);

/*
 * symi_builder_kernel() - the module is a Linux kernel (vmlinux) whose
 * _text symbol is at @text: the table's addresses are offsets from it
 * (docs/design.md, "The kernel"), and it is flagged SYM_TABLE_KERNEL.
 * symi_builder_finish() then fails with -SYM_E_UNSUPPORTED when the code
 * window starts below @text.
 */
void symi_builder_kernel(struct symi_builder *b, uint64_t text);

/* Is @b a kernel's?  Then its _text's link-time address into *@text. */
bool symi_builder_kernel_text(const struct symi_builder *b, uint64_t *text);

/* Mark that Go's function table (.gopclntab) contributed to it. */
void symi_builder_set_gopclntab(struct symi_builder *b);

/* Mark that the symbols are a kallsyms snapshot's (kallsyms.c). */
void symi_builder_set_kallsyms(struct symi_builder *b);

/*
 * symi_builder_finish() - sort, sweep and serialize; the builder is used
 * up (only symi_builder_free() may follow).  An adding call above that
 * failed makes it fail with the same error, even when its caller went on
 * without what it added (an index of SYMI_NONE).
 * @param[out] buf  caller owns, free(); 8-byte aligned
 * @param[out] len  its size
 * @return 0, -ENOMEM, -SYM_E_TOOBIG
 */
int symi_builder_finish(struct symi_builder *b, void **buf, size_t *len);

/*
 * Symbols (symtab.c): read .symtab, .dynsym and MiniDebugInfo
 * (.gnu_debugdata, xz) of @e into @b, and for @main (the module's own
 * file, not its debug file) name the PLT stubs NAME@plt.  Returns 0 or
 * -ENOMEM; unreadable tables are logged and skipped.
 */
int symi_symtab_read(struct symi_builder *b, const struct symi_elf *e,
		     bool main);

/* The executable sections of @e into symi_builder_add_text().  Returns 0
 * or -ENOMEM. */
int symi_text_read(struct symi_builder *b, const struct symi_elf *e);

/*
 * symi_elf_kernel_text() - is @e a Linux kernel by the rule that flags a
 * table SYM_TABLE_KERNEL (symi_symtab_read(): an executable whose .symtab
 * has _text and linux_banner)?  Then _text's link-time address into
 * *@text.
 */
bool symi_elf_kernel_text(const struct symi_elf *e, uint64_t *text);

/*
 * DWARF (dwarf.c): walk every CU of @dbg (with its dwz alt file @alt, may
 * be NULL, found by symi_find_alt_file(@dbg)) into @b.  @dbg, @alt and
 * the .dwo files of @dbg's skeleton units share @dbg's per-file
 * decompression budget (dbg->inflated).  Returns 0, -ENOMEM,
 * -SYM_E_BADDWARF, -SYM_E_INFLATE_LIMIT.
 */
struct symi_dwarf_only {
	const uint64_t *addrs;	/* ascending; borrowed */
	size_t n;
};

/* With @only not NULL, only the units that can answer its addresses are
 * walked (the lazy path, see dwarf.c): a table of them answers those
 * addresses as the full one does, and nothing else is promised. */
int symi_dwarf_read(struct symi_builder *b, struct symi_elf *dbg,
		    struct symi_elf *alt, const struct symi_dwarf_only *only,
		    struct sym_module_stats *ph);

/*
 * Go's function table (gopclntab.c, whose top comment describes the
 * format).  The table is read from @tab; the inline trees and the
 * runtime's moduledata lie elsewhere in the module's memory, which @mem
 * gives as the file bytes of its segments.
 */
struct symi_goseg {
	uint64_t addr;		/* its address */
	const uint8_t *p;	/* len bytes; borrowed */
	size_t len;
	bool writable, exec;
};
struct symi_gomem {
	const struct symi_goseg *segs;	/* borrowed */
	size_t n;
};
struct symi_gopcln_in {
	const uint8_t *tab;	/* the table, len bytes; borrowed */
	size_t len;		/* to the end of its section or segment */
	uint64_t addr;		/* its address */
	uint64_t text;		/* textStart when a 1.18+ header has 0 */
	const struct symi_gomem *mem;	/* may be NULL: no inline trees */
	/* The lazy path (sym_module_table_for()): only the functions that
	 * hold one of these addresses are read, which answers them as the
	 * whole table would (a function's lines and inline scopes are its
	 * own).  NULL: every function. */
	const struct symi_dwarf_only *only;
};
/* What was read, for tests and the log. */
struct symi_gopcln_stats {
	int version;		/* 12, 116, 118 or 120: the magic's */
	uint64_t funcs;		/* functions added */
	uint64_t bad_funcs;	/* entries skipped: out of bounds, unsorted */
	uint64_t lines;		/* line rows added */
	uint64_t inlined;	/* inline scopes added */
	uint64_t gofunc;	/* 1.18+: go:func.*, 0 when not found */
	uint64_t skipped;	/* functions not read: no address of @only */
};

/*
 * symi_gopcln_read() - add the functions, lines and inline scopes of the
 * table @in to @b.  Every read is bounded by @in->len and @mem's segments.
 * @param[out] st  may be NULL; zeroed first
 * @return 0, -ENOMEM, -SYM_E_BADGOPCLNTAB (not a table of a known
 *         version, its header does not fit, or no function could be
 *         read; what was added stays in @b)
 */
int symi_gopcln_read(struct symi_builder *b, const struct symi_gopcln_in *in,
		     struct symi_gopcln_stats *st);

/*
 * symi_gopcln_elf() - find the table of @e (.gopclntab,
 * .data.rel.ro.gopclntab, else by its magic in a segment) and read it
 * (only the functions of @only's addresses when not NULL).
 * @return as symi_gopcln_read(), or -SYM_E_NOTFOUND (no table)
 */
int symi_gopcln_elf(struct symi_builder *b, const struct symi_elf *e,
		    const struct symi_dwarf_only *only,
		    struct symi_gopcln_stats *st);

/*
 * symi_gofuncs_new() - sym_gofuncs_open_mem() from the table @in (only
 * tab, len, addr and text are read; the table is copied), for the fuzz
 * target.
 * @return 0, -SYM_E_BADGOPCLNTAB, -ENOMEM
 */
int symi_gofuncs_new(const struct symi_gopcln_in *in,
		     struct sym_gofuncs **out);

/* Seconds on a monotonic clock (error.c). */
double symi_now(void);

/*
 * Lookups (table.c, batch.c).  A cursor carries the search hints of one
 * table from one lookup to the next: a lookup at an address >= the
 * previous one starts where that one ended.
 */
struct symi_block {
	uint32_t b;		/* block index; UINT32_MAX: none decoded */
	uint32_t k;		/* ranges in it; 0 if it is broken */
	uint64_t start, next;	/* [bstart[b], bstart[b + 1]) (or 2^64) */
	const uint8_t *p;	/* its bits */
	uint32_t addr_at;	/* bit of the first address field */
	uint64_t leaf_at;	/* bit of the first leaf record */
	uint32_t lbits;		/* bits per leaf record */
	uint8_t w[6];		/* enum symt_block_field widths */
	uint64_t m[6];		/* and their masks */
	uint32_t sbase, fbase, cbase, dbase;
	int64_t lbase;
	uint64_t slope;		/* address slope, SYMT_BK_SLOPE_SHIFT fraction
				 * bits */
	uint64_t abase;		/* address base R, as a two's complement */
};
struct symi_cursor {
	struct symi_block blk;
	/* The range of the last lookup in blk (UINT32_MAX: none) and the
	 * offsets it covers, [jlo, jhi). */
	uint32_t j;
	uint64_t jlo, jhi;
	/* The symbol range of the last lookup (UINT32_MAX: none), the
	 * offsets it covers, [slo, shi), and its symbol's index (sym_i,
	 * when have_sym: one of them is inside the symbol array). */
	uint32_t si;
	uint64_t slo, shi;
	bool have_sym;
	uint32_t sym_i[SYMT_CH_N];
};
#define SYMI_CURSOR_INIT { .blk = { .b = UINT32_MAX }, .j = UINT32_MAX, \
			   .si = UINT32_MAX }

/* The frames of @addr in @t into @fr[@max], without the fields @omit
 * names (enum sym_frame_omit); returns how many.  @cur must have been
 * used with @t only (or be fresh).  It is symi_table_locate() then
 * symi_table_frames(). */
size_t symi_table_lookup(const struct sym_table *t, uint64_t addr,
			 struct sym_frame *fr, size_t max, unsigned omit,
			 struct symi_cursor *cur);

/* The enum sym_frame_omit bits this library names. */
#define SYMI_OMIT_ALL (SYM_OMIT_DECL | SYM_OMIT_PEER_NAMES | \
		       SYM_OMIT_DEMANGLED | SYM_OMIT_SYMBOLS | \
		       SYM_OMIT_LLVM_ONLY)
/* What the LLVM style leaves out (the GNU style's is SYMI_OMIT_ALL): the
 * two frames_of() is compiled for with @omit a constant. */
#define SYMI_OMIT_LLVM (SYMI_OMIT_ALL & ~(SYM_OMIT_SYMBOLS | \
					  SYM_OMIT_LLVM_ONLY))

/*
 * A lookup in two halves, so that a batch can do the first, which the
 * cursor speeds up, in address order, and the second, which follows
 * indices through the table, in input order with prefetches ahead
 * (batch.c).  struct symi_hit is what the first half finds: the leaf and
 * the symbol, as far as they decode without the scope and function
 * records (which the second half reads).  Indices are unchecked here;
 * UINT32_MAX is none.
 */
enum symi_hit_flags {
	SYMI_HIT_LEAF = (1 << 0),	/* a leaf: scope..disc are set */
	SYMI_HIT_DECL_FILE = (1 << 1),	/* file: the function's decl_file */
	SYMI_HIT_SYM = (1 << 2),	/* symbol indices: symi_hit_syms() */
	/* A leaf whose symbol is not looked up yet (@omit had
	 * SYM_OMIT_SYMBOLS): symi_table_frames() looks it up, at the
	 * address it is given, when its frames need it (not all named
	 * from DWARF). */
	SYMI_HIT_SYM_LATER = (1 << 3),
	/* A leaf made ready for GNU's text (symi_table_locate_keys() with
	 * @gnu): its chain is one frame, named from DWARF as bfd names it;
	 * column is that name's string offset (0: none; GNU's style,
	 * SYMI_OMIT_ALL, prints no column), line is whole (the function's
	 * decl_line added), and with SYMI_HIT_DECL_FILE file is the
	 * function's decl_file.  symi_table_hit_plain() makes it a plain
	 * hit again, for the frames. */
	SYMI_HIT_GNU = (1 << 4),
	/* The same for a leaf whose chain has inlined frames, all named
	 * so: column is where its chain's frames start in the batch's
	 * struct symi_gnu_chains. */
	SYMI_HIT_GNU_CHAIN = (1 << 5),
};
/* flags' bits from this one up are the caller's (batch.c: the table's
 * number in its window). */
#define SYMI_HIT_TAB_SHIFT 8
/*
 * 24 bytes: a batch keeps one for each of its addresses (100,000
 * addresses: 2.4 MB, one huge page less than the 40 bytes of format 10's
 * first batches, which held the symbols too).  A leaf's symbol indices,
 * which only the styles that print symbols ask for at every address,
 * are the caller's: SYMT_CH_N words beside the hit, which GNU's style
 * (SYM_OMIT_SYMBOLS) never writes.  A hole (no leaf) keeps its own in
 * the leaf fields it does not use.
 */
struct symi_hit {
	union {
		struct {
			uint32_t scope;	/* the leaf's scope, or UINT32_MAX */
			uint32_t file;	/* file index, or UINT32_MAX */
			uint32_t line;	/* less the function's decl_line,
					 * mod 2^32 */
		};
		uint32_t hole_sym[SYMT_CH_N];	/* a hole's symbols */
	};
	uint32_t column, disc;
	uint32_t flags;		/* enum symi_hit_flags, and the caller's
				 * bits from SYMI_HIT_TAB_SHIFT; 0: no
				 * answer */
};
_Static_assert(SYMT_CH_N == 3 && sizeof(struct symi_hit) == 24,
	       "struct symi_hit: a hole's symbols in scope, file, line");

/* The symbol indices of @hit (SYMI_HIT_SYM): a hole's own, a leaf's in
 * @syms, the caller's words for it.  Each may be UINT32_MAX (that peer's
 * none). */
static inline const uint32_t *symi_hit_syms(const struct symi_hit *hit,
					    const uint32_t *syms)
{
	return hit->flags & SYMI_HIT_LEAF ? syms : hit->hole_sym;
}

/* Where symi_table_ahead() found an address's block (UINT32_MAX:
 * unknown). */
struct symi_ahead {
	uint32_t b;
};
#define SYMI_AHEAD_INIT { .b = UINT32_MAX }

/* The first half: find @addr's range and symbol range, with @hint (NULL,
 * or from symi_table_ahead() for @addr on @t) saving the block's search;
 * a leaf's symbol indices go to @syms (SYMT_CH_N words).  Returns false
 * (and hit->flags 0) when the table has nothing for @addr. */
bool symi_table_locate(const struct sym_table *t, uint64_t addr,
		       struct symi_cursor *cur, const struct symi_ahead *hint,
		       struct symi_hit *hit, uint32_t *syms);

/* symi_table_locate() of the ascending addresses min + (@keys[k] >>
 * @ibits), k < @n, up to the first >= @end, each into @hits[i], i =
 * @keys[k] & (2^@ibits - 1), with @tab in its flags' caller's bits when
 * found, a leaf's symbols into @syms[SYMT_CH_N * i] (NULL with
 * SYM_OMIT_SYMBOLS in @omit, which writes none); no hints (for a table
 * too small to prefetch).  Returns how many it looked up.  One call for
 * a sorted run in one table saves a call and the batch's bookkeeping
 * per address (libc: about 65 instructions of 1,430).  With
 * SYM_OMIT_SYMBOLS in @omit (which symi_table_frames() must then be given
 * too), a leaf's symbol range is left for later (SYMI_HIT_SYM_LATER): on
 * a small table, the rare frames that need it find it at little cost.
 * Adds to *@runs the runs of found keys with the same leaf scope (or
 * none): about how many scopes the keys fall in. */
/* ... With @gnu (GNU's text: @omit SYMI_OMIT_ALL), each leaf whose GNU
 * text needs nothing but its hit is made SYMI_HIT_GNU: in a sorted run
 * the scope and function records are read once a scope, in address
 * order, where the answers, in input order, would read them once a hit,
 * at random.  With @chains as well, a leaf with inlined frames, all
 * named from DWARF, is made SYMI_HIT_GNU_CHAIN, its chain's frames
 * written once a run into @chains while they fit. */

/*
 * The frames of GNU_CHAIN hits' chains: at v[c] (a hit's column), the
 * number of frames k >= 2, the innermost frame's name (a string offset,
 * 0: none; its file and line are the hit's), then for each of the k - 1
 * outer frames its name, call file and call line.  A batch's, for one
 * window (cap words, n made).
 */
struct symi_gnu_chains {
	uint32_t *v;
	uint32_t n, cap;
};
size_t symi_table_locate_keys(const struct sym_table *t,
			      struct symi_cursor *cur, const uint64_t *keys,
			      size_t n, unsigned ibits, uint64_t min,
			      uint64_t end, uint32_t tab, unsigned omit,
			      struct symi_hit *hits, uint32_t *syms,
			      size_t *runs, bool gnu,
			      struct symi_gnu_chains *chains);

/* *@out: @hit (of @t) as symi_table_locate() makes it, without
 * SYMI_HIT_GNU or SYMI_HIT_GNU_CHAIN; @out may be @hit. */
void symi_table_hit_plain(const struct sym_table *t,
			  const struct symi_hit *hit, struct symi_hit *out);

/* Prefetch the block symi_table_locate(@addr) will read, a few addresses
 * ahead of it in a sorted batch, and say which it is: *@a is where the
 * previous call ended (the search gallops forward from it) and becomes
 * where this one did. */
void symi_table_ahead(const struct sym_table *t, uint64_t addr,
		      struct symi_ahead *a);

/* The second half: the frames of @hit (from symi_table_locate() of
 * @addr on @t, its leaf's symbols in @syms) into @fr[@max], without the
 * fields @omit names; returns how many. */
size_t symi_table_frames(const struct sym_table *t,
			 const struct symi_hit *hit, const uint32_t *syms,
			 uint64_t addr, struct sym_frame *fr, size_t max,
			 unsigned omit);

/*
 * symi_table_frames() of each of @hits[0, @n) of @t in turn (hit i of
 * @addrs[i], its leaf's symbols at @syms + SYMT_CH_N * i), handed to
 * @fn(@ctx, @lo + i, @fr, frames) before the next is made in @fr[@max]:
 * the second half of a batch's run of one table in cache, without a
 * call per hit.  The scope record of the hit SYMI_RUN_AHEAD on is
 * prefetched.  With @text (gnutext.h) and @omit SYMI_OMIT_ALL, a hit
 * whose GNU text table.c's gnu_text() can write goes to @text, and
 * text->done is set past it, instead of to @fn.  Returns 0, or the first
 * non-zero @fn returned (the rest are not made).
 */
struct symi_gnu_text;
#define SYMI_RUN_AHEAD 16
int symi_table_frames_run(const struct sym_table *t,
			  const struct symi_hit *hits, const uint32_t *syms,
			  const uint64_t *addrs, size_t n, unsigned omit,
			  struct sym_frame *fr, size_t max, sym_frames_fn fn,
			  void *ctx, size_t lo, struct symi_gnu_text *text,
			  const struct symi_gnu_chains *chains);

/*
 * A frame cache: what symi_table_frames() made of recent hits, by their
 * scope and symbols (table.c says why that is exact), for a batch where
 * many addresses fall in the same function (libc's 100,000 addresses:
 * 6,422 scopes).  A slot holds up to SYMI_FCACHE_FRAMES frames; 2^(32 -
 * shift) slots, direct-mapped.  One cache serves one @omit; each slot's
 * string pointers stay valid while its table is open (the batch's
 * tables stay open for the whole batch).
 */
#define SYMI_FCACHE_FRAMES 2
struct symi_fcache_key {
	const struct sym_table *t;	/* NULL: empty */
	uint32_t scope, sym[SYMT_CH_N];	/* sym[]: UINT32_MAX without */
	uint32_t flags;		/* the hit's SYMI_HIT_SYM, _DECL_FILE,
				 * _SYM_LATER */
	uint32_t decl_line;	/* the innermost function's */
	uint32_t n;		/* frames, < the @max they were made for */
};
struct symi_fcache {
	struct symi_fcache_key *key;	/* zeroed at first; NULL: off */
	struct sym_frame *fr;	/* SYMI_FCACHE_FRAMES a slot */
	unsigned shift;		/* 32 - log2(slots) */
	unsigned omit;
	size_t hits, misses;
};

/* The slot of @hit (its leaf's symbols in @syms) in @c. */
static inline uint32_t symi_fcache_slot(const struct symi_fcache *c,
					const struct symi_hit *hit,
					const uint32_t *syms)
{
	uint32_t s0 = hit->flags & SYMI_HIT_SYM ?
		      symi_hit_syms(hit, syms)[0] : UINT32_MAX;

	return (hit->scope * 0x9e3779b1u ^ s0 * 0x85ebca6bu) >> c->shift;
}

/* symi_table_frames() through the cache @c: the same frames. */
size_t symi_table_frames_cached(const struct sym_table *t,
				const struct symi_hit *hit,
				const uint32_t *syms, uint64_t addr,
				struct sym_frame *fr, size_t max,
				unsigned omit, struct symi_fcache *c);

/* The table that holds @addr, for symi_batch_lookup(): sets *@t (NULL:
 * none) and the address range [*@start, *@end) it answers for, which must
 * contain @addr when *@t is set.  Every table it gives must stay open, and
 * its strings valid, until symi_batch_lookup() returns: a batch answers
 * from several tables at once.  Returns 0 or a negative error that ends
 * the batch. */
typedef int (*symi_table_at_fn)(void *ctx, uint64_t addr,
				const struct sym_table **t, uint64_t *start,
				uint64_t *end);

/* Tables of at least this many bytes are prefetched in batches
 * (batch.c); the tests lower it to cover prefetching on small tables. */
extern size_t symi_prefetch_min;
/* Batches of at least this many addresses use a frame cache (batch.c);
 * the tests set it to 0 and to SIZE_MAX to compare with it on and off.
 * symi_fcache_hits counts the frames it answered (all threads). */
extern size_t symi_fcache_min;
extern size_t symi_fcache_hits;

/* Look @addrs[@count] up (in address order when that pays) and call @fn
 * once per address in input order, with frames without the fields @omit
 * names (enum sym_frame_omit); with @text (gnutext.h, and @omit
 * SYMI_OMIT_ALL), the answers it can take go there instead, in a run of
 * one small table (symi_table_frames_run()).  Returns 0, the first
 * non-zero value of @fn, or the first error of @at. */
int symi_batch_lookup(const uint64_t *addrs, size_t count,
		      symi_table_at_fn at, void *actx, unsigned omit,
		      struct symi_gnu_text *text, sym_frames_fn fn, void *ctx);

/* The table takes ownership of @buf, a malloc()ed table buffer, and frees
 * it in sym_table_close() (table.c). */
void symi_table_adopt(struct sym_table *t, void *buf);

/*
 * symi_table_open_known() - sym_table_open() of a buffer whose bytes the
 * caller has already checked under the key @known (not 0): the store's
 * chunk, whose CRC it verified once in this process and whose (CRC,
 * start, size) it trusts after (store.c).  Its compressed areas met again
 * at the same address under the same key are found in the registry
 * without being read (a symd request opens the table anew each time).
 * @known 0 is sym_table_open().
 */
int symi_table_open_known(const void *buf, size_t len, uint64_t known,
			  struct sym_table **out);

/*
 * symi_table_header_flags() - the flags (struct sym_table_stat's) of the
 * table in @buf[@len], read from its header alone, which must be this
 * format's: nothing else is checked or opened, and @buf need not be
 * aligned (sym_store_table_flags(), which symd calls for every answer).
 * @return 0, -SYM_E_BADTABLE
 */
int symi_table_header_flags(const void *buf, size_t len, uint32_t *flags);

/*
 * A string blob stored as zstd frames (zstr.c; a table's strings and
 * demangled names, format 8), inflated a frame at a time on first use
 * and shared by every table of the process whose compressed area has the
 * same bytes.
 */
struct symi_zstr {
	char *blob;		/* size bytes and a NUL, zeroed; mapped by the
				 * first fill (symi_map_zeroed(); read it
				 * after a ready) */
	uint32_t size;
	uint32_t nframes;	/* ceil(size / 2^shift) */
	unsigned shift;
	uint8_t *ready;		/* [nframes], atomic: 1 once its strings are
				 * whole in blob */
	uint32_t bad;		/* frames that did not inflate (left zero) */
	uint32_t nready;	/* frames ready: written under the entry's
				 * lock, read atomically */
	char *whole;		/* atomic: blob once every frame is ready */
	/* Records of a chunked column area (symi_zrec_get()): frames are
	 * its chunks of 2^shift records, ready[] 1 once built and 2 when
	 * bad (left zero), and area the entry's copy of it, for the
	 * chunks' first keys (symi_cols_first()).  NULL otherwise. */
	const uint8_t *area;
};

/*
 * symi_zstr_get() - the shared blob of the compressed area @area
 * (@zbytes bytes, format.h's layout) that inflates to @size bytes in
 * frames of 2^@shift; a reference the caller drops with
 * symi_zstr_put().  @area need not outlive the call (it is copied once).
 * An entry is found by comparing the area with its copy, or, when
 * @known is not 0, by @known and @area's address where the same key
 * found it before (symi_table_open_known()).
 * Returns 0, -ENOMEM, or -SYM_E_BADTABLE (the frame index is not sane).
 */
int symi_zstr_get(const void *area, uint32_t zbytes, uint32_t size,
		  unsigned shift, uint64_t known, struct symi_zstr **out);
void symi_zstr_put(struct symi_zstr *z);
/* symi_zstr_put() of each of @z[@n] not NULL, under one lock. */
void symi_zstr_put_many(struct symi_zstr *const *z, size_t n);
/*
 * symi_zreg_hold(), symi_zreg_release() - keep the registry's lock across
 * the symi_zstr_get() and symi_zrec_get() calls of one table's open, so
 * that an open that finds every area takes it once (symd opens a table
 * for every request).  A get that must build an entry releases it
 * first: nothing is built under the lock.  Nothing else may be called
 * between the two (symi_zstr_put() would wait for itself).
 */
void symi_zreg_hold(void);
void symi_zreg_release(void);
/* Whether an area of @zbytes may inflate to @size bytes: the bound that
 * keeps a table from outside from filling memory (zstr.c); the writer
 * stores a blob plain rather than outside it. */
bool symi_zstr_bounded(uint64_t size, uint64_t zbytes);
/* The slow path of symi_zstr_at(): inflate the frame of @off (and the
 * frames its string runs on into); "" when out of memory. */
const char *symi_zstr_fill(struct symi_zstr *z, uint32_t off);
/* Inflate every frame: z->bad, or -ENOMEM (some frame not tried). */
int symi_zstr_fill_all(struct symi_zstr *z);
/* The whole string at blob offset @off (< size). */
static inline const char *symi_zstr_at(struct symi_zstr *z, uint32_t off)
{
	if (__atomic_load_n(&z->ready[off >> z->shift], __ATOMIC_ACQUIRE))
		return z->blob + off;
	return symi_zstr_fill(z, off);
}
/* The slow path of symi_blob_at(): symi_zstr_at() on @b's shared blob,
 * and once that is whole, @b->plain aimed at it (a cache in a table that
 * is otherwise read-only: any thread may set it, all to the same). */
const char *symi_blob_fill(const struct symt_blob *b, uint32_t off);
/* The string at @off of the table blob @b (format.h), inflating its frame
 * first when compressed; NULL for offset 0 or one outside the blob. */
static inline const char *symi_blob_at(const struct symt_blob *b,
				       uint32_t off)
{
	const char *p;

	/* 0 < off < n, in one unsigned compare. */
	if (off - 1 >= b->n - 1)
		return NULL;
	p = __atomic_load_n(&b->plain, __ATOMIC_ACQUIRE);
	return p ? p + off : symi_blob_fill(b, off);
}
/* The calling thread's zstd decompression context (zstr.c): made at its
 * first use, freed when the thread ends; NULL when it cannot be made.
 * Not for a caller that is already using it (none nests). */
struct ZSTD_DCtx_s *symi_zstd_dctx(void);

/*
 * symi_zstr_pack() - the compressed area of @blob[@len] in frames of
 * 2^@shift bytes at zstd level @level.  *@out: caller frees.
 * Returns 0, -ENOMEM or -SYM_E_TOOBIG.
 */
int symi_zstr_pack(const char *blob, size_t len, unsigned shift, int level,
		   uint8_t **out, size_t *outlen);

/*
 * Packed arrays stored as compressed columns (cols.c; format 9,
 * docs/table-format.md "Compressed records").  A table builds its records
 * back once per process (symi_zrec_get()) and reads them as plain ones.
 */
/* What an area is built back into. */
enum symi_cols_out {
	SYMI_COLS_ROWS,	/* packed records, format.h's layout */
	SYMI_COLS_U32,	/* one uint32_t array per field, one after another
			 * (the block index: bstart[], then boff[]) */
};
/* Field @f of record @i, for symi_cols_pack(). */
typedef uint32_t (*symi_cols_get_fn)(const void *src, uint32_t i,
				     unsigned f);
/* Bytes of what an area of @count records of @nf fields @w[] builds back
 * into, the padding included. */
size_t symi_cols_out_bytes(enum symi_cols_out kind, uint32_t count,
			   unsigned nf, const uint8_t *w);
/*
 * symi_cols_pack() - the area of @count records of @nf fields of @w[]
 * bits, their values from @get(@src, i, f), at zstd level @level with
 * the literals stored raw (no Huffman stage: the planes' literals are
 * few, and decoding them cost a reader more than their bytes save); in
 * chunks of 2^@shift records when @shift is not 0 and the array has more
 * (SYMI_COLS_SHIFT_MIN to _MAX).  *@out: caller frees.  Returns 0, -ENOMEM or -SYM_E_TOOBIG.
 */
int symi_cols_pack(uint32_t count, unsigned nf, const uint8_t *w,
		   symi_cols_get_fn get, const void *src, int level,
		   unsigned shift, uint8_t **out, size_t *outlen);
/* The chunk shifts an area may have (cols.c: chunks of 2^shift records,
 * each its own frame, built back on demand). */
#define SYMI_COLS_SHIFT_MIN 2
#define SYMI_COLS_SHIFT_MAX 16
/*
 * symi_cols_chunks() - check the head and chunk index of the area
 * @area[@zbytes] of @count records of @nf fields @w[]: *@shift and
 * *@nchunks are 0 for an area of one frame, else its chunks (at least 2),
 * whose frames lie in the area and declare their planes' bytes.  Returns
 * 0 or -SYM_E_BADTABLE.
 */
int symi_cols_chunks(const uint8_t *area, uint32_t zbytes, uint32_t count,
		     unsigned nf, const uint8_t *w, unsigned *shift,
		     uint32_t *nchunks);
/* Field 0's value in the first record of chunk @k of a checked area. */
uint32_t symi_cols_first(const uint8_t *area, uint32_t nchunks, uint32_t k);
/*
 * symi_cols_unpack_chunk() - build chunk @k of a checked chunked area
 * (symi_cols_chunks()) into its records of @out, the whole array's
 * (symi_cols_out_bytes() bytes), writing no byte of any other chunk's.
 * Returns 0, -ENOMEM or -SYM_E_BADTABLE (the chunk's records untouched).
 */
int symi_cols_unpack_chunk(const uint8_t *area, uint32_t count,
			   unsigned nf, const uint8_t *w, unsigned shift,
			   uint32_t nchunks, uint32_t k, uint8_t *out);
/*
 * symi_cols_unpack() - build the area @area[@zbytes] back into @out
 * (zeroed, symi_cols_out_bytes() bytes).  Returns 0, -ENOMEM, or
 * -SYM_E_BADTABLE: the area is not one of @count records of these
 * widths (@out is then partly written).
 */
int symi_cols_unpack(const uint8_t *area, uint32_t zbytes, uint32_t count,
		     unsigned nf, const uint8_t *w, enum symi_cols_out kind,
		     uint8_t *out);
/* The writer stores a table's packed arrays as columns when they are at
 * most this many bytes together (pack.c); the tests set 0 to write them
 * plain. */
extern size_t symi_zrec_max;
/* Of them, the scopes, functions and files only when those are at most
 * this many bytes together (pack.c's ZREC_HOT_MAX); the tests set
 * SIZE_MAX to compress them whatever their size. */
extern size_t symi_zrec_hot_max;
/* The chunk shift of the symbols' arrays stored as columns (pack.c); the
 * tests and the fuzz seeds lower it to chunk small tables' too, 0 writes
 * one frame. */
extern unsigned symi_zrec_sym_shift;
/* The writer stores the strings blob (not the demangled names) plain
 * when it is more than this many bytes (pack.c); the tests lower it. */
extern size_t symi_zstr_plain_from;
/*
 * symi_zrec_get() - the records of the column area @area[@zbytes]
 * (symi_cols_unpack()), built once per process and shared like a string
 * blob (found as symi_zstr_get() finds one, @known alike): *@out's blob
 * holds them, whole, or for a chunked area (symi_cols_chunks()) zeroed
 * until each chunk is built by symi_zrec_fill() (*@out's area set); drop
 * the reference with symi_zstr_put().  @area need not outlive the call.
 * Returns 0, -ENOMEM or -SYM_E_BADTABLE (as symi_cols_unpack() or
 * symi_cols_chunks(), or the records would exceed symi_zstr_bounded()).
 */
int symi_zrec_get(const void *area, uint32_t zbytes, uint32_t count,
		  unsigned nf, const uint8_t *w, enum symi_cols_out kind,
		  uint64_t known, struct symi_zstr **out);
/*
 * symi_zrec_fill() - build chunk @k of a chunked entry's records unless
 * it is: 1 once its records are in the blob (published: read them after
 * this, or after a ready[@k] of 1 read with acquire), 2 when it is bad
 * (its records stay zero, z->bad counts it), 0 out of memory (tried again
 * by the next call).
 */
unsigned symi_zrec_fill(struct symi_zstr *z, uint32_t k);
/* symi_zrec_fill() of every chunk: the bad ones' count, or -ENOMEM. */
int symi_zrec_fill_all(struct symi_zstr *z);

/*
 * A table's content, decoded: what build.c collects, what split.c cuts
 * and what symi_table_pack() encodes.  The records are format.h's decoded
 * ones (struct symt_leaf, ...); indices are SYMT_NONE for none, string
 * fields offsets into @str.  Ranges: @addrs ascending, range i is
 * [addrs[i], addrs[i + 1]) with @leaves[i], the last one a terminator.
 * Symbol ranges: @saddrs ascending, @sidx[c] their symbols by each
 * peer's choice c (enum symt_choice).  All borrowed.
 */
struct symi_tab {
	uint64_t base, start, end;
	uint32_t flags, converter, elfutils;
	const uint32_t *addrs;
	const struct symt_leaf *leaves;
	size_t n_ranges;
	const struct symt_scope *scopes;
	size_t n_scopes;
	const struct symt_func *funcs;
	size_t n_funcs;
	const struct symt_file *files;
	size_t n_files;
	const struct symt_sym *syms;
	size_t n_syms;
	const uint32_t *saddrs, *sidx[SYMT_CH_N];
	size_t n_sranges;
	const char *str;
	size_t str_len;		/* str[0] and str[str_len - 1] are NUL */
	/* The blob the `demangled` fields point into (the builder's is
	 * str; an unpacked table's is its own), NUL first and last too. */
	const char *dstr;
	size_t dstr_len;
	bool prune_syms;	/* keep only symbols a symbol range names */
	bool no_tails;		/* strings do not share tails: quicker, for a
				 * table that is not kept (the lazy path) */
};

/*
 * Encode @in as a table (pack.c).  Scopes no range reaches are dropped,
 * and so are the functions, files and strings nothing kept uses; the rest
 * is renumbered in first-use (address) order, strings share tails.  Every
 * lookup answers as it would from @in.  Indices out of range in @in are
 * taken as none.  *@buf: caller owns, free(); 8-byte aligned.
 * Returns 0, -ENOMEM, -SYM_E_TOOBIG (4 GiB or more).
 */
int symi_table_pack(const struct symi_tab *in, void **buf, size_t *len);

/*
 * Decode all of @t (table.c) into @out, whose arrays are allocated (free
 * them with symi_tab_free()) and whose strings are borrowed from @t.
 * Returns 0 or -ENOMEM.  A corrupt table decodes to garbage, safely.
 */
int symi_table_unpack(const struct sym_table *t, struct symi_tab *out);
void symi_tab_free(struct symi_tab *tab);

/*
 * Line programs (lines.c): a direct reader of .debug_line, faster than
 * dwarf_getsrclines() and exact about sequence boundaries.
 */
struct symi_sec {
	const unsigned char *data;	/* borrowed; NULL when absent */
	size_t size;
};

struct symi_lines_in {
	struct symi_sec line, line_str, str;
	uint64_t off;		/* DW_AT_stmt_list */
	const char *comp_dir;	/* DW_AT_comp_dir, may be NULL */
	unsigned addr_size;	/* of the CU, for versions before 5 */
	/* The CU's address ranges, sorted; rows are clipped to them (none:
	 * no clipping).  llvm-symbolizer only asks a CU's line table about
	 * addresses inside the CU, so padding between CUs has no line. */
	const struct symi_span *ranges;
	size_t nranges;
	bool files_only;	/* read the file table, add no rows */
	/* Keep the rows before damage in the program and return 0: for a
	 * program libdw could not read either. */
	bool keep_partial;
};

struct symi_lines_out {
	uint32_t *files;	/* free(): file index -> builder file */
	size_t nfiles;
};

/*
 * symi_lines_read() - add the rows of one line program to @b.
 * @return 0, -ENOMEM, -SYM_E_BADDWARF when the header is not understood
 *         or the program cannot be followed to its end (no row of it is
 *         left in @b then: fall back to libdw; with @in->keep_partial,
 *         the rows before the damage stay and 0 is returned instead).
 */
int symi_lines_read(struct symi_builder *b, const struct symi_lines_in *in,
		    struct symi_lines_out *out);

/* Demangle (demangle.c); caller frees; NULL when not mangled. */
char *symi_demangle(const char *name);

#endif /* SYM_INTERNAL_H */
