/*
 * sym.h - libsym: exact symbolization of ELF addresses.
 *
 * libsym turns an address inside an ELF file into the function, the chain
 * of inlined calls and file:line:column for every frame.  It reads DWARF
 * (2 to 5) with libdw and the symbol tables (.symtab, .dynsym and
 * MiniDebugInfo) with libelf, once, into one compact, immutable lookup table
 * per module.  Every lookup afterwards is a binary search over that table.
 *
 * The typical life of a module:
 *
 *	struct sym_module *mod = NULL;
 *	SYM_OPTS(sym_module_opts, opts, .debuginfo_path = dirs);
 *	err = sym_module_open("/usr/lib/x86_64-linux-gnu/libc.so.6", &opts,
 *			      &mod);
 *	...
 *	struct sym_frame fr[SYM_MAX_FRAMES];
 *	size_t n;
 *	err = sym_module_lookup(mod, 0x29d90, fr, SYM_MAX_FRAMES, &n);
 *	...
 *	sym_module_close(mod);
 *
 * Addresses.  Every address given to or returned by libsym is an ELF
 * virtual address of the module's file as linked (the p_vaddr space), never
 * a runtime address.  A caller frame's return address must be decremented
 * by one by the caller before the lookup, so that the call's line comes out.
 *
 * The table.  sym_module_table() returns the module's table: one
 * position-independent byte buffer (docs/table-format.md) that can be
 * written to disk or to LMDB and read in place again with sym_table_open().
 * Lookups never touch DWARF.
 *
 * Caveats:
 *  - A struct sym_module is used by one thread at a time.  A struct
 *    sym_table is immutable: any number of threads may look up in it at
 *    once.  Distinct objects are independent.
 *  - libsym holds file descriptors and memory maps of the files it opened
 *    until sym_module_close().  After fork(), use modules in one process
 *    only.
 *  - A module whose code spans 4 GiB or more cannot be represented in a
 *    table (offsets are 32 bits); it fails with -SYM_E_TOOBIG.
 *  - libsym never exits and never prints, except through the log callback
 *    (sym_set_log()).  By default warnings go to stderr.
 *
 * Errors.  Calls that can fail return 0 or a negative error code:
 * -errno for system failures (-ENOMEM, -ENOENT, ...) and -SYM_E_* for
 * library failures.  sym_strerror() describes both.  An address without an
 * answer is not an error: the lookup succeeds with zero frames.
 */
#ifndef SYM_H
#define SYM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SYM_API __attribute__((visibility("default")))

/** Library version, as a string and as numbers. */
#define SYM_VERSION_MAJOR 0
#define SYM_VERSION_MINOR 1
#define SYM_VERSION_PATCH 0
#define SYM_VERSION "0.1.0"

/**
 * Library error codes.  They are returned negated, like -errno, and they
 * sit above the errno range so that the two never collide.
 */
enum sym_error {
	SYM_E_BASE = 4096,
	/** The file is not an ELF file. */
	SYM_E_NOTELF,
	/** The ELF file is truncated or its headers are inconsistent. */
	SYM_E_BADELF,
	/** The DWARF data is corrupt or uses forms libdw cannot read. */
	SYM_E_BADDWARF,
	/** The buffer is not a valid lookup table, or from another format. */
	SYM_E_BADTABLE,
	/** The module spans 4 GiB or more of addresses. */
	SYM_E_TOOBIG,
	/** Something that was looked for does not exist. */
	SYM_E_NOTFOUND,
	/** The file is valid but of a kind libsym does not handle. */
	SYM_E_UNSUPPORTED,
	/** A compressed section could not be decompressed. */
	SYM_E_DECOMPRESS,
	/** The directory is not a symd store, or of a newer layout. */
	SYM_E_BADSTORE,
	/** A stored table was built by another format or converter. */
	SYM_E_STALE,
	/** A profile (raw stack format or pprof) is malformed. */
	SYM_E_BADPROFILE,
	SYM_E_MAX,
};

/**
 * sym_strerror() - describe an error code returned by libsym.
 * @param err   0, -errno or -SYM_E_* (the sign is ignored)
 * @param buf   caller's buffer, filled with a NUL-terminated message
 * @param len   size of @buf; the message is truncated to fit
 * @return @buf
 * Thread-safety: safe.
 */
SYM_API const char *sym_strerror(int err, char *buf, size_t len);

/** Log levels for sym_set_log(). */
enum sym_log_level {
	SYM_LOG_WARN = 1,
	SYM_LOG_INFO = 2,
	SYM_LOG_DEBUG = 3,
};

/** A log sink: @msg is one line without the trailing newline. */
typedef void (*sym_log_fn)(void *ctx, int level, const char *msg);

/**
 * sym_set_log() - route libsym's messages.
 * @param fn     the sink; NULL restores the default (stderr)
 * @param ctx    passed to @fn unchanged
 * @param level  the most verbose level to emit; 0 keeps the current one.
 *               The default is SYM_LOG_WARN, or $SYM_LOG_LEVEL (1 to 3)
 *               when it is set.
 * Thread-safety: call it before other threads use libsym.
 */
SYM_API void sym_set_log(sym_log_fn fn, void *ctx, int level);

/** Flags of struct sym_frame. */
enum sym_frame_flags {
	/** The frame is an inlined call, inside the next frame's function. */
	SYM_FRAME_INLINED = (1 << 0),
	/** The function name comes from the symbol table (no DWARF). */
	SYM_FRAME_SYMTAB = (1 << 1),
	/** The chain was longer than the caller's array and was cut. */
	SYM_FRAME_TRUNCATED = (1 << 2),
	/** @symbol is a data object (STT_OBJECT, STT_TLS, STT_COMMON), not
	 *  a function: GNU addr2line does not name code after those. */
	SYM_FRAME_SYMBOL_OBJECT = (1 << 3),
};

/** The most frames one lookup can return; deeper chains are cut. */
#define SYM_MAX_FRAMES 128

/**
 * One frame of a lookup.  All strings are borrowed from the table the
 * frame came from and stay valid until that table (or its module) is
 * closed.  A string that is unknown is NULL, never "".
 */
struct sym_frame {
	/** DW_AT_name of the function (of its abstract origin for inlined
	 *  frames), or the symbol's name when there is no DWARF. */
	const char *name;
	/** Raw linkage (mangled) name, or NULL when there is none. */
	const char *linkage_name;
	/** Demangled linkage name (C++, Rust, D), NULL when not mangled. */
	const char *demangled;
	/** Source file, as GNU addr2line, eu-addr2line and llvm-symbolizer
	 *  print it: a relative directory of the line table joined to the
	 *  CU's DW_AT_comp_dir, nothing normalized
	 *  ("./build-debug/../Parser/pegen.c"). */
	const char *file;
	/** Where the function is declared (DW_AT_decl_file/line). */
	const char *decl_file;
	/** Line; 0 when unknown. */
	uint32_t line;
	/** Column; 0 when unknown. */
	uint32_t column;
	/** Line-table discriminator; 0 when none. */
	uint32_t discriminator;
	/** DW_AT_decl_line of the function; 0 when unknown. */
	uint32_t decl_line;
	/** Entry address of the function (of the inlined instance for
	 *  inlined frames); 0 when unknown.  addr - entry is the offset
	 *  into the function. */
	uint64_t entry;
	/** Symbol-table entry covering the address: outermost frame only,
	 *  NULL when no symbol covers it.  May differ from @name, e.g.
	 *  "foo.cold" or "nftw64@GLIBC_2.2.5"-style versioned names. */
	const char *symbol;
	/** Address of @symbol; 0 when @symbol is NULL. */
	uint64_t symbol_addr;
	/** Size of @symbol; 0 when unknown. */
	uint64_t symbol_size;
	/** enum sym_frame_flags. */
	uint32_t flags;
	/** Bytes of @file before its path relative to the compilation
	 *  directory: @file + @file_rel is what llvm-symbolizer
	 *  --relativenames prints (DW_AT_comp_dir, and DWARF 5's directory
	 *  0, left out).  0 when @file is relative to nothing, is NULL, or
	 *  that part is longer than 65,535 bytes. */
	uint16_t file_rel;
	/** The same for @decl_file. */
	uint16_t decl_file_rel;
};

/*
 * Tables.
 */

/** An immutable lookup table over a caller's buffer.  Opaque. */
struct sym_table;

/** Format version of the tables this library builds and reads. */
#define SYM_TABLE_FORMAT 3

/**
 * sym_table_open() - view a table buffer for lookups.
 * @param buf    the table bytes, as sym_table_data() gave them; borrowed:
 *               it must stay valid and unchanged until sym_table_close().
 *               It must be 8-byte aligned.
 * @param len    size of @buf
 * @param[out] out  caller owns, free with sym_table_close()
 * @return 0, -EINVAL (NULL or misaligned), -ENOMEM, -SYM_E_BADTABLE (not a
 *         table, another format version, or inconsistent sizes)
 * The check is O(1): every index a lookup follows is bounds-checked again
 * at lookup time, so a corrupt buffer gives wrong answers, never a crash.
 */
SYM_API int sym_table_open(const void *buf, size_t len,
			   struct sym_table **out);

/**
 * sym_table_close() - free a table view (not its buffer).  NULL is a no-op.
 * Tables returned by sym_module_table() belong to their module: do not
 * close them.
 */
SYM_API void sym_table_close(struct sym_table *t);

/**
 * sym_table_data() - the table's bytes, for storing.
 * @param[out] buf  borrowed from @t, valid until it is closed
 * @param[out] len  size in bytes
 */
SYM_API void sym_table_data(const struct sym_table *t, const void **buf,
			    size_t *len);

/** Counts of what a table holds, from sym_table_stat(). */
struct sym_table_stat {
	size_t size;		/**< bytes */
	uint64_t base;		/**< base address of all offsets */
	uint64_t start, end;	/**< address range covered, [start, end) */
	uint32_t ranges;	/**< address ranges */
	uint32_t scopes;	/**< functions and inlined instances */
	uint32_t funcs;		/**< distinct function names */
	uint32_t files;		/**< distinct source files */
	uint32_t symbols;	/**< symbol-table entries */
	uint32_t strings_size;	/**< bytes of deduplicated strings */
	uint32_t flags;		/**< enum sym_table_flags */
	uint32_t converter;	/**< libsym converter version that built it */
	uint32_t elfutils;	/**< elfutils version that built it, e.g. 188 */
};

/**
 * The version of libsym's converter (DWARF and symbol reading, table
 * building).  It changes whenever a fix changes what a table says for the
 * same input; a stored table whose sym_table_stat() converter differs
 * should be rebuilt.
 */
SYM_API uint32_t sym_converter_version(void);

/** Flags of struct sym_table_stat. */
enum sym_table_flags {
	/** The table was built from DWARF. */
	SYM_TABLE_DWARF = (1 << 0),
	/** The table has symbols (.symtab, .dynsym or MiniDebugInfo). */
	SYM_TABLE_SYMBOLS = (1 << 1),
};

/** sym_table_stat() - fill @st with what @t holds. */
SYM_API void sym_table_stat(const struct sym_table *t,
			    struct sym_table_stat *st);

/**
 * sym_table_verify() - check a table completely: its checksum, and that
 * every array is ordered and every index points inside its array (scope
 * parents only to earlier scopes, so chains cannot loop).
 * @return 0, -SYM_E_BADTABLE (the reason is logged at SYM_LOG_WARN)
 * O(size of the table).  sym_table_open() only checks the header, so call
 * this on tables read back from storage that may have been damaged.
 * Thread-safety: any number of threads at once.
 */
SYM_API int sym_table_verify(const struct sym_table *t);

/**
 * sym_table_lookup() - symbolize one address.
 * @param t       a table
 * @param addr    ELF virtual address (see the top of this file)
 * @param[out] frames  filled innermost first; strings borrowed from @t
 * @param max     room in @frames; SYM_MAX_FRAMES is always enough
 * @param[out] n  frames written: 0 when nothing is known about @addr
 * @return 0, -EINVAL when an argument is NULL or @max is 0
 * The outermost frame has @symbol set when a symbol covers @addr.  When
 * the table has no DWARF for @addr but a symbol covers it, one frame with
 * SYM_FRAME_SYMTAB is returned.
 * Thread-safety: any number of threads at once.
 */
SYM_API int sym_table_lookup(const struct sym_table *t, uint64_t addr,
			     struct sym_frame *frames, size_t max, size_t *n);

/**
 * The callback of sym_table_lookup_batch(): the frames of addrs[idx].
 * @frames is valid only during the call.  Return 0 to go on, anything
 * else to stop the batch with that value.
 */
typedef int (*sym_frames_fn)(void *ctx, size_t idx,
			     const struct sym_frame *frames, size_t n);

/**
 * sym_table_lookup_batch() - symbolize many addresses.
 * @param addrs  the addresses; any order, but sorted input is faster (each
 *               search starts where the previous one ended)
 * @param count  number of addresses
 * @param fn     called once per address, in the order of @addrs
 * @return 0, -EINVAL, or the first non-zero value @fn returned
 */
SYM_API int sym_table_lookup_batch(const struct sym_table *t,
				   const uint64_t *addrs, size_t count,
				   sym_frames_fn fn, void *ctx);

/**
 * sym_table_find_symbol() - the address of a symbol, by name.
 * @param name   a symbol name as the symbol table spells it
 * @param[out] addr  its address
 * @param[out] size  its size (0 when unknown); may be NULL
 * @return 0, -SYM_E_NOTFOUND
 * When several symbols share the name, the preferred one is returned
 * (global over weak over local, sized over sizeless).  Linear in the
 * number of symbols.
 */
SYM_API int sym_table_find_symbol(const struct sym_table *t, const char *name,
				  uint64_t *addr, uint64_t *size);

/*
 * Modules.
 */

/** An ELF file, its separate debug files and its table.  Opaque. */
struct sym_module;

/** Flags of struct sym_module_opts. */
enum sym_module_flags {
	/** Do not read DWARF: symbols only. */
	SYM_MODULE_NO_DWARF = (1 << 0),
	/** Do not look for a separate debug file. */
	SYM_MODULE_NO_SEARCH = (1 << 1),
};

/**
 * Options of sym_module_open().  Declare them with SYM_OPTS(), which sets
 * @sz, so that newer fields can be added without breaking callers.
 */
struct sym_module_opts {
	size_t sz;
	/** Separate debug file to use; no search is done when it is set. */
	const char *debug_file;
	/** NULL-terminated list of extra directories searched for debug
	 *  files (like eu-addr2line's --debuginfo-path): by build ID under
	 *  DIR/.build-id/xx/rest.debug and by debuglink under DIR and
	 *  DIR/<dir of the file>.  Borrowed during the call only. */
	const char *const *debuginfo_path;
	/** The global debug directory; NULL means /usr/lib/debug. */
	const char *debug_dir;
	/** enum sym_module_flags. */
	uint32_t flags;
};

/** Declare a zeroed options struct NAME of type struct TYPE with sz set. */
#define SYM_OPTS(TYPE, NAME, ...)                                            \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

/**
 * sym_module_open() - open an ELF file and find its debug information.
 * @param path   the ELF file (an executable, shared object or debug file)
 * @param opts   NULL for the defaults
 * @param[out] out  caller owns, free with sym_module_close(); NULL on error
 * @return 0, -ENOENT/-EACCES/... (cannot open @path), -SYM_E_NOTELF,
 *         -SYM_E_BADELF, -SYM_E_UNSUPPORTED (relocatable or core file)
 * The separate debug file is searched like gdb and eu-addr2line do: the
 * build ID under .build-id/ of each debuginfo_path directory and of the
 * debug directory, then .gnu_debuglink (CRC checked) next to the file, in
 * its .debug/ directory and under the debug directory.  A missing debug
 * file is not an error: the module then has symbols only.
 */
SYM_API int sym_module_open(const char *path,
			    const struct sym_module_opts *opts,
			    struct sym_module **out);

/**
 * sym_module_open_mem() - open an ELF image held in memory.
 * @param buf   the image; copied, so the caller may free it on return
 * @param len   its size
 * @param opts  as for sym_module_open(); only @debug_file and @flags
 *              apply, since a memory image has no directory to search
 * Same returns as sym_module_open().  Used by the fuzzers.
 */
SYM_API int sym_module_open_mem(const void *buf, size_t len,
				const struct sym_module_opts *opts,
				struct sym_module **out);

/** sym_module_close() - free a module and its table.  NULL is a no-op. */
SYM_API void sym_module_close(struct sym_module *mod);

/**
 * sym_module_build_id() - the module's GNU build ID in lowercase hex.
 * @return borrowed from @mod; NULL when the file has no NT_GNU_BUILD_ID
 */
SYM_API const char *sym_module_build_id(const struct sym_module *mod);

/** What sym_module_info() tells about the module's ELF file. */
struct sym_module_info {
	/** 32 or 64 (ELFCLASS32/64): addresses print with 8 or 16 digits. */
	int elf_class;
	/** e_type: ET_EXEC (2) or ET_DYN (3). */
	int elf_type;
	/** e_machine, e.g. EM_X86_64 (62) or EM_386 (3). */
	int machine;
};

/**
 * sym_module_info() - the ELF class, type and machine of the module.
 * @param[out] info  filled; the module keeps no reference
 * Thread-safety: as for the module.
 */
SYM_API void sym_module_info(const struct sym_module *mod,
			     struct sym_module_info *info);

/**
 * sym_module_debug_file() - where the DWARF came from.
 * @return borrowed path: the separate debug file, the module itself when
 *         the DWARF is inside it, or NULL when there is no DWARF
 */
SYM_API const char *sym_module_debug_file(const struct sym_module *mod);

/**
 * sym_module_table() - the module's lookup table, built on first call.
 * @param[out] out  borrowed from @mod, valid until sym_module_close()
 * @return 0, -ENOMEM, -SYM_E_BADDWARF (the DWARF is corrupt; the
 *         message is logged), -SYM_E_TOOBIG, -SYM_E_DECOMPRESS
 * The table is built in one pass over each compilation unit.  A module
 * with no usable DWARF still gets a table of its symbols.  A failure is
 * remembered: later calls return the same error at once.
 */
SYM_API int sym_module_table(struct sym_module *mod,
			     const struct sym_table **out);

/** Where the time of building a module's table went, in seconds. */
struct sym_module_stats {
	double symbols;	/**< sections and symbol tables */
	double inflate;	/**< decompressing debug sections, opening libdw */
	double lines;	/**< line programs */
	double dies;	/**< the walk over the DIEs */
	double build;	/**< the builder's sweeps and serialization */
};

/**
 * sym_module_stats() - the phases of the table build; all zero before
 * sym_module_table() has built it.
 */
SYM_API void sym_module_stats(const struct sym_module *mod,
			      struct sym_module_stats *st);

/**
 * sym_module_lookup() - sym_module_table() followed by sym_table_lookup().
 * Same parameters and returns as those two.
 */
SYM_API int sym_module_lookup(struct sym_module *mod, uint64_t addr,
			      struct sym_frame *frames, size_t max,
			      size_t *n);

/**
 * sym_file_build_id() - read the GNU build ID of a file without opening a
 * module (only the notes are read).
 * @param path   an ELF file
 * @param hex    caller's buffer for the lowercase hex ID
 * @param len    size of @hex; 2 * 64 + 1 is always enough
 * @return 0, -SYM_E_NOTFOUND (no build ID), -SYM_E_NOTELF, -SYM_E_BADELF,
 *         -ERANGE (@hex too small), -errno
 */
SYM_API int sym_file_build_id(const char *path, char *hex, size_t len);

/**
 * sym_file_section() - where the bytes of section @name are in @path, as
 * debuginfod's /buildid/<id>/section/<name> serves them (raw, compressed
 * or not).
 * @param[out] off, size  the section's file offset and size
 * @return 0, -SYM_E_NOTFOUND (no such section, or SHT_NOBITS: a debug
 *         file's .text), -SYM_E_NOTELF, -SYM_E_BADELF, -errno
 */
SYM_API int sym_file_section(const char *path, const char *name,
			     uint64_t *off, uint64_t *size);

/**
 * sym_demangle() - demangle a C++, Rust (legacy and v0) or D name, as the
 * table builder does.
 * @return caller owns, free(); NULL when @name is not a mangled name
 */
SYM_API char *sym_demangle(const char *name);

/*
 * Stores.
 *
 * A store is a directory: an LMDB environment (data.mdb) holding the
 * table of each build ID, its metadata and negative entries.  Tables are
 * stored exactly as built, in address-ordered chunks of at most
 * opts.chunk_size bytes each, and read in place inside a read
 * transaction: nothing is re-parsed on the warm path.  See
 * docs/store.md.
 */

/** A store.  Opaque. */
struct sym_store;

/** Flags of struct sym_store_opts. */
enum sym_store_flags {
	/** Open read-only: puts, removals and gc fail with -EROFS. */
	SYM_STORE_RDONLY = (1 << 0),
	/** Lookups never write: access times wait in memory for
	 *  sym_store_maintain() (a server's latency-critical thread must
	 *  never wait for LMDB's single writer). */
	SYM_STORE_NO_READER_WRITES = (1 << 1),
};

/** Options of sym_store_open(); declare with SYM_OPTS(). */
struct sym_store_opts {
	size_t sz;
	/** Bound on the logical bytes of live tables and of the files in
	 *  the file area, evicted least recently used first (a build ID's
	 *  table and files go together) by sym_store_gc(); 0 for none. */
	uint64_t max_size;
	/** Largest the LMDB map may grow to; 0 for 64 GiB. */
	uint64_t map_max;
	/** Largest chunk of a table in one LMDB value; 0 for 64 MiB. */
	uint64_t chunk_size;
	/** Seconds a "no debug info exists" entry lasts; 0 for 7 days. */
	uint32_t ttl_absent;
	/** Seconds a "fetch failed" entry lasts; 0 for 60. */
	uint32_t ttl_failed;
	/** enum sym_store_flags. */
	uint32_t flags;
};

/**
 * sym_store_default_dir() - where a store lives when none is given:
 * $SYM_STORE, else $XDG_CACHE_HOME/sym, else $HOME/.cache/sym.
 * @return 0, -ERANGE (@buf too small), -ENOENT (no HOME either)
 */
SYM_API int sym_store_default_dir(char *buf, size_t len);

/**
 * sym_store_open() - open (creating when needed) the store in @dir.
 * @param dir   the store directory; created with its parents if missing
 * @param opts  NULL for the defaults
 * @param[out] out  caller owns, free with sym_store_close()
 * @return 0, -errno, -SYM_E_BADSTORE (not a store, or a newer layout)
 * Stale reader slots of killed processes are cleared (mdb_reader_check).
 * Thread-safety: a store may be used by several threads at once; each
 * call runs its own LMDB transaction.  Use a store in the process that
 * opened it only (not after fork()).
 */
SYM_API int sym_store_open(const char *dir, const struct sym_store_opts *opts,
			   struct sym_store **out);

/** sym_store_close() - flush pending access times and close.  NULL-safe. */
SYM_API void sym_store_close(struct sym_store *st);

/**
 * sym_store_maintain() - write the access times noted in memory, and
 * clear the reader slots of processes that died without closing (their
 * stale slots keep old pages from being reused).  Long-running users call
 * it now and then (symd: every few seconds, on a worker).
 * @return the number of stale readers cleared, -EINVAL
 */
SYM_API int sym_store_maintain(struct sym_store *st);

/**
 * sym_store_put() - store the table of @build_id, replacing any entry.
 * @param build_id  lowercase hex, 2 to 128 digits
 * @param t         the table; copied
 * @param source    where its debug info came from (a path, "upload", a
 *                  URL); copied; may be NULL
 * @return 0, -EINVAL, -EROFS, -ENOSPC (disk full or the map bound
 *         reached; nothing already stored is lost), -ENOMEM, -errno
 * Each chunk is written in its own write transaction and the metadata
 * last, so a crash mid-way leaves the old entry (or none), never a
 * half-written one; readers are never blocked.
 */
SYM_API int sym_store_put(struct sym_store *st, const char *build_id,
			  const struct sym_table *t, const char *source);

/** Kinds of negative entries (sym_store_put_negative()). */
enum sym_store_negative {
	/** No source has debug info for the build ID (long TTL). */
	SYM_STORE_ABSENT = 1,
	/** A fetch failed transiently (short backoff). */
	SYM_STORE_FAILED = 2,
	/** Conversion failed: remembered until the converter changes. */
	SYM_STORE_BADCONV = 3,
};

/**
 * sym_store_put_negative() - remember that @build_id has no table, and
 * why.  An existing table is kept (and the call fails with -EEXIST).
 * @param kind    enum sym_store_negative
 * @param reason  one line for humans; copied; may be NULL
 * @return 0, -EEXIST, -EINVAL, -EROFS, -ENOSPC, -errno
 */
SYM_API int sym_store_put_negative(struct sym_store *st, const char *build_id,
				   int kind, const char *reason);

/** What the store knows of one build ID (sym_store_stat_entry()). */
struct sym_store_entry {
	/** 0 for a table, else enum sym_store_negative. */
	int negative;
	/** Logical size of the table in bytes; 0 for negative entries. */
	uint64_t size;
	/** Number of chunks the table is stored in. */
	uint32_t chunks;
	/** Format and converter versions of the stored table. */
	uint32_t format, converter;
	/** Unix times: stored, last used, and (negative) expiry. */
	int64_t created, last_access, expires;
	/** Source or reason; borrowed until the next call on the store
	 *  from this thread. */
	char text[512];
};

/**
 * sym_store_stat_entry() - what the store holds for @build_id.
 * @param[out] e  filled
 * @return 0, -SYM_E_NOTFOUND (nothing, or an expired negative entry)
 */
SYM_API int sym_store_stat_entry(struct sym_store *st, const char *build_id,
				 struct sym_store_entry *e);

/**
 * sym_store_has_table() - does the store hold a table for @build_id that
 * this library can read (its format and converter version)?
 * @return 1 or 0 (also for a negative entry, a stale table, a bad ID)
 */
SYM_API int sym_store_has_table(struct sym_store *st, const char *build_id);

/**
 * sym_store_lookup() - symbolize addresses with the stored table.
 * @param addrs  any order; sorted is faster
 * @param fn     called once per address, in order, inside a read
 *               transaction: the frames' strings point into the mapped
 *               store and are valid only during the call
 * @return 0, the first non-zero value of @fn, -SYM_E_NOTFOUND (no table;
 *         a negative entry also gives -SYM_E_NOTFOUND, see
 *         sym_store_stat_entry()), -SYM_E_STALE (built by another format
 *         or converter: rebuild and put it again), -SYM_E_BADTABLE (a
 *         chunk failed its checksum: the entry was removed; rebuild it)
 * Each chunk's checksum is verified once per process, the first time it
 * is read; threads reading it at that moment wait for that one check
 * (all get -SYM_E_BADTABLE when it fails, and one logs it).  The access
 * time is recorded in memory and written in batches.
 */
SYM_API int sym_store_lookup(struct sym_store *st, const char *build_id,
			     const uint64_t *addrs, size_t count,
			     sym_frames_fn fn, void *ctx);

/**
 * sym_store_remove() - delete the entry (table or negative) of @build_id.
 * @return 0, -SYM_E_NOTFOUND, -EROFS, -errno
 * Readers inside a transaction keep seeing the old pages (LMDB MVCC).
 */
SYM_API int sym_store_remove(struct sym_store *st, const char *build_id);

/** Called by sym_store_list() for each entry; non-zero stops. */
typedef int (*sym_store_list_fn)(void *ctx, const char *build_id,
				 const struct sym_store_entry *e);

/** sym_store_list() - every entry, in build-ID order. */
SYM_API int sym_store_list(struct sym_store *st, sym_store_list_fn fn,
			   void *ctx);

/** What sym_store_gc() did. */
struct sym_store_gc_stats {
	uint64_t live_bytes;	/**< logical bytes of tables and files kept */
	uint32_t evicted;	/**< tables removed to meet max_size */
	uint32_t expired;	/**< negative entries past their TTL */
	uint32_t orphans;	/**< chunks without metadata (a crash) */
	uint64_t file_before, file_after;	/**< data.mdb bytes */
};

/**
 * sym_store_gc() - drop expired negative entries and orphan chunks, and
 * evict least recently used tables until the live bytes fit max_size.
 * @param compact  also rewrite data.mdb without free pages
 *                 (mdb_env_copy2(MDB_CP_COMPACT) to a temporary file,
 *                 then rename): data.mdb never shrinks by itself
 * @param[out] stats  may be NULL
 */
SYM_API int sym_store_gc(struct sym_store *st, int compact,
			 struct sym_store_gc_stats *stats);

/** Called by sym_store_verify() for each problem found. */
typedef void (*sym_store_problem_fn)(void *ctx, const char *build_id,
				     const char *what);

/**
 * sym_store_verify() - check every entry: metadata, chunk coverage and
 * every chunk's checksum and structure (sym_table_verify()).
 * @param fn  called per problem; may be NULL
 * @return 0 when all is well, else the number of problems (positive),
 *         or -errno
 */
SYM_API int sym_store_verify(struct sym_store *st, sym_store_problem_fn fn,
			     void *ctx);

/** Kinds of files in the store's file area. */
enum sym_store_file_kind {
	/** The separate debug file (debuginfod's "debuginfo"). */
	SYM_STORE_DEBUGINFO = 1,
	/** The executable or shared object ("executable"). */
	SYM_STORE_EXECUTABLE = 2,
};

/**
 * sym_store_put_file() - copy a file into the store's file area, laid out
 * as debuginfod serves it: DIR/files/<build-id>/debuginfo or
 * .../executable.
 * @param kind  enum sym_store_file_kind
 * @param path  the file; its GNU build ID must be @build_id
 * @return 0, -EINVAL (bad ID or kind), -SYM_E_NOTFOUND (the file has no
 *         build ID), -EXDEV (its build ID is another one), -EROFS,
 *         -errno (copy, fsync, rename)
 * The file is written to a temporary name in the same directory, fsynced
 * and renamed, so a crash never leaves a half-written file under the real
 * name.  An existing file of the same size is kept as it is.
 */
SYM_API int sym_store_put_file(struct sym_store *st, const char *build_id,
			       int kind, const char *path);

/**
 * sym_store_file_path() - where the store keeps a file, if it has it.
 * @param[out] buf  the path
 * @return 0, -SYM_E_NOTFOUND, -ERANGE (@buf too small), -EINVAL
 */
SYM_API int sym_store_file_path(struct sym_store *st, const char *build_id,
				int kind, char *buf, size_t len);

/**
 * sym_store_take_file() - like sym_store_put_file(), but @path is moved:
 * renamed into place when it is on the store's file system (after an
 * fsync), else copied and then unlinked.  For files written into the
 * store directory itself (uploads, downloads), so none is kept twice.
 * @return as sym_store_put_file(); on error @path is left where it was
 */
SYM_API int sym_store_take_file(struct sym_store *st, const char *build_id,
				int kind, const char *path);

/**
 * sym_store_warm() - verify every chunk of the table of @build_id now
 * (each chunk's checksum is checked once per process), so that later
 * sym_store_lookup() calls never pay for it.  A server calls this from a
 * worker before it answers from a table on a latency-critical thread.
 * @return 0, -SYM_E_NOTFOUND, -SYM_E_STALE, -SYM_E_BADTABLE (the entry was
 *         removed; rebuild it), -ENOMEM, -errno
 */
SYM_API int sym_store_warm(struct sym_store *st, const char *build_id);

/** A held conversion lock (sym_store_lock()).  Opaque. */
struct sym_store_lock;

/**
 * sym_store_lock() - claim the conversion of @build_id, so that processes
 * sharing a store do not all build the same table: the first converts,
 * the others wait and then read what it stored.
 * @param wait_ms  how long to wait for another holder
 * @param[out] out     the lock; release with sym_store_unlock()
 * @param[out] waited  set to 1 when another process held it first (then
 *                     look in the store again before converting); may be
 *                     NULL
 * @return 0, -ETIMEDOUT (still held after @wait_ms: convert anyway or
 *         give up; tables are written atomically either way), -EROFS,
 *         -EINVAL, -errno
 * The lock is a flock() on DIR/locks/<build-id>: a holder that dies
 * releases it, so there are no stale markers to time out.
 */
SYM_API int sym_store_lock(struct sym_store *st, const char *build_id,
			   unsigned wait_ms, struct sym_store_lock **out,
			   int *waited);

/** sym_store_unlock() - release a conversion lock.  NULL-safe. */
SYM_API void sym_store_unlock(struct sym_store_lock *l);

/**
 * sym_store_convert() - build the table of @build_id from the files the
 * store holds for it and store it.
 * The executable is opened with the stored debug file as its debug file;
 * with only a debug file, that alone; with only an executable, its debug
 * file is searched as sym_module_open() does.
 * @param source  recorded as the table's source (an URL, "upload"); NULL
 *                for the path of the debug file used
 * @param[out] stats  the build phases; may be NULL
 * @return 0, -SYM_E_NOTFOUND (no file), the errors of sym_module_open(),
 *         sym_module_table() and sym_store_put()
 * A file that cannot be converted (not ELF, bad ELF or DWARF, too big,
 * undecompressable, unsupported) leaves a SYM_STORE_BADCONV negative
 * entry with the reason, so it is not tried again with this converter.
 * Thread-safety: as sym_store_put(); it takes seconds to minutes on big
 * modules, so call it off any latency-critical thread.
 */
SYM_API int sym_store_convert(struct sym_store *st, const char *build_id,
			      const char *source,
			      struct sym_module_stats *stats);

/**
 * sym_table_split() - cut a table into self-contained tables of at most
 * about @max_bytes each, in address order (each holds the ranges,
 * scopes, functions, files, strings and symbols its addresses need).
 * @param[out] parts  caller owns: sym_table_close() each, free() the array
 * @param[out] n      number of parts (1 when the table already fits)
 * @return 0, -ENOMEM, -EINVAL
 */
SYM_API int sym_table_split(const struct sym_table *t, size_t max_bytes,
			    struct sym_table ***parts, size_t *n);

/*
 * Profiles: the raw stack format (docs/raw-format.md) and pprof.
 *
 * A struct sym_prof is one profile in memory: a header, a table of
 * mappings, processes and threads, and unique stacks of unsymbolized
 * frames with a count and a weight each.  sym record and the views build,
 * read and write it; it owns every string and array it holds.
 *
 *	struct sym_prof *p = NULL;
 *	char msg[256];
 *	err = sym_prof_read_file("cpu.raw", &p, msg, sizeof(msg));
 *	for (size_t i = 0; i < sym_prof_nstacks(p); i++) {
 *		const struct sym_prof_stack *s = sym_prof_stack(p, i);
 *		...
 *	}
 *	sym_prof_free(p);
 *
 * Thread-safety: a profile is used by one thread at a time; distinct
 * profiles are independent.
 */

/** An in-memory profile.  Opaque. */
struct sym_prof;

/** Kinds of struct sym_prof_map. */
enum sym_prof_map_kind {
	SYM_PROF_MAP_FILE = 0,	/**< a mapped ELF file */
	SYM_PROF_MAP_VDSO,	/**< the vDSO, named by its in-memory build ID */
	SYM_PROF_MAP_KERNEL,	/**< the kernel: addresses are runtime ones */
	SYM_PROF_MAP_ANON,	/**< anonymous executable memory (JIT) */
};

/** Flags of struct sym_prof_map. */
enum sym_prof_map_flags {
	/** @vaddr was not known (a pprof mapping has no field for it) and
	 *  was set to @pgoff, which is right when the PT_LOAD segment has
	 *  p_vaddr == p_offset (usual for PIE and shared objects).  The
	 *  raw format carries it as a `mapflags ID vaddr-guessed` line. */
	SYM_PROF_MAP_VADDR_GUESSED = (1 << 0),
};

/** One executable mapping of one process. */
struct sym_prof_map {
	/** Index in the profile's map table; set by sym_prof_add_map(). */
	uint32_t id;
	/** enum sym_prof_map_kind. */
	uint32_t kind;
	/** Host PID; -1 for the kernel. */
	int32_t pid;
	/** enum sym_prof_map_flags. */
	uint32_t flags;
	/** Runtime range [start, end). */
	uint64_t start, end;
	/** File offset mapped at @start. */
	uint64_t pgoff;
	/** ELF virtual address of @start: vaddr(pc) = pc - start + vaddr. */
	uint64_t vaddr;
	/** Lowercase hex GNU build ID, or NULL when unknown. */
	const char *build_id;
	/** Path as the process saw it, "[vdso]", "[kernel.kallsyms]", or
	 *  NULL. */
	const char *path;
};

/** Frame has no mapping: sym_prof_frame.addr is a runtime address. */
#define SYM_PROF_NOMAP UINT32_MAX

/** Flags of struct sym_prof_frame. */
enum sym_prof_frame_flags {
	/** @addr is a return address: look up addr - 1. */
	SYM_PROF_FRAME_RETURN = (1 << 0),
};

/** One unsymbolized frame. */
struct sym_prof_frame {
	/** ELF virtual address in map @map (runtime address for the kernel
	 *  and for SYM_PROF_NOMAP). */
	uint64_t addr;
	/** Map id, or SYM_PROF_NOMAP. */
	uint32_t map;
	/** enum sym_prof_frame_flags. */
	uint32_t flags;
};

/** Problems of a stack (docs/raw-format.md, "Stacks"). */
enum sym_prof_stack_flags {
	SYM_PROF_TRUNCATED = (1 << 0),	/**< hit the depth limit */
	SYM_PROF_BADRETURN = (1 << 1),	/**< return address outside mappings */
	SYM_PROF_LEAF = (1 << 2),	/**< leaf's caller may be missing */
	SYM_PROF_UNWIND = (1 << 3),	/**< CFI unwind stopped early */
	SYM_PROF_KERNEL = (1 << 4),	/**< only kernel frames captured */
	/** a flag this reader does not know (written back as "unknown") */
	SYM_PROF_UNKNOWN_FLAG = (1 << 31),
};

/** Number of named stack flags (bits 0 to SYM_PROF_NFLAGS - 1). */
#define SYM_PROF_NFLAGS 5

/** Most frames in one stack. */
#define SYM_PROF_MAX_FRAMES 1024

/** One unique stack. */
struct sym_prof_stack {
	/** Samples, and the sum of their weights (header's weight_unit). */
	uint64_t count, weight;
	/** Host PID and TID; 0 when unknown. */
	int32_t pid, tid;
	/** enum sym_prof_stack_flags. */
	uint32_t flags;
	/** Number of @frames. */
	uint32_t nframes;
	/** Leaf (innermost) first; owned by the profile. */
	const struct sym_prof_frame *frames;
};

/** A profile's header (docs/raw-format.md, "Header lines").  Strings are
 *  NULL when unknown. */
struct sym_prof_header {
	const char *host;
	/** Writer name and version, e.g. "sym-record", "0.1.0". */
	const char *tool, *tool_version;
	/** Wall-clock start, nanoseconds since the Unix epoch; 0 when
	 *  unknown. */
	int64_t start_ns;
	/** Wall-clock length of the recording. */
	uint64_t duration_ns;
	/** "cpu-clock", "task-clock", "wall". */
	const char *event;
	/** "fp", "dwarf", "thread-timer", "process-timer", "wall". */
	const char *mode;
	/** Requested Hz; 0 for a fixed period. */
	uint64_t frequency;
	/** Nominal weight of one sample, in @weight_unit. */
	uint64_t period;
	/** "ns" or "samples". */
	const char *weight_unit;
	/** Samples written, lost by the kernel, throttle events, dropped by
	 *  the writer. */
	uint64_t samples, lost, throttled, dropped;
	/** Samples whose stack carries flag bit i. */
	uint64_t flagged[SYM_PROF_NFLAGS];
	/** Inode of the recorder's PID namespace; 0 when unknown. */
	uint64_t pidns;
};

/**
 * sym_prof_new() - an empty profile.
 * @param[out] out  caller owns: sym_prof_free()
 * @return 0 or -ENOMEM
 */
SYM_API int sym_prof_new(struct sym_prof **out);

/**
 * sym_prof_free() - free a profile and everything it owns.
 * @param p  may be NULL
 */
SYM_API void sym_prof_free(struct sym_prof *p);

/**
 * sym_prof_set_header() - replace the header; strings are copied ("" is
 * stored as NULL: the formats cannot tell them apart).
 * @return 0 or -ENOMEM (the old header is kept)
 */
SYM_API int sym_prof_set_header(struct sym_prof *p,
				const struct sym_prof_header *h);

/**
 * sym_prof_header() - the header.
 * @return borrowed, valid until the next call that changes @p
 */
SYM_API const struct sym_prof_header *sym_prof_header(const struct sym_prof *p);

/**
 * sym_prof_add_map() - append a mapping; strings are copied ("" is stored
 * as NULL).
 * @param[out] id  the new map's id (may be NULL); m->id is ignored
 * @return 0, -ENOMEM, -E2BIG (2^20 maps already), -EINVAL (start > end,
 *         an unknown kind or flag, pid below -1, or a build ID that is not
 *         2 to 128 lowercase hex digits of an even count: normalize it or
 *         pass NULL)
 */
SYM_API int sym_prof_add_map(struct sym_prof *p, const struct sym_prof_map *m,
			     uint32_t *id);

/**
 * sym_prof_add_process() - record a process's PID namespace and name.
 * @param pidns  namespace inode, 0 when unknown
 * @param nspid  PID inside that namespace, 0 when unknown
 * @param comm   may be NULL; copied ("" is stored as NULL)
 * @return 0, -ENOMEM, -EINVAL (@pid or @nspid negative), -E2BIG (2^22
 *         processes already); a second call for one @pid replaces the
 *         first
 */
SYM_API int sym_prof_add_process(struct sym_prof *p, int32_t pid,
				 uint64_t pidns, int32_t nspid,
				 const char *comm);

/**
 * sym_prof_add_thread() - record a thread's name and process.
 * @param comm  may be NULL; copied ("" is stored as NULL)
 * @return 0, -ENOMEM, -EINVAL (@pid or @tid negative), -E2BIG (2^22
 *         threads already); a second call for one @tid replaces the
 *         first
 */
SYM_API int sym_prof_add_thread(struct sym_prof *p, int32_t pid, int32_t tid,
				const char *comm);

/**
 * sym_prof_add_stack() - add samples of a stack; an identical stack (pid,
 * tid, flags, frames, and no source: see sym_prof_add_stack_from())
 * already present gets @s's count and weight added, so the profile holds
 * each unique stack once.  The frames are copied.
 * Header counts (samples, flagged) are not touched: the writer of the
 * profile keeps them.  O(1) amortized; adding a stack already present
 * allocates nothing.
 * @return 0, -ENOMEM, -E2BIG (more than SYM_PROF_MAX_FRAMES frames, or
 *         2^24 unique stacks already), -EINVAL (a frame names a map that
 *         does not exist, pid or tid negative, or a flag bit that enum
 *         sym_prof_stack_flags or enum sym_prof_frame_flags does not
 *         name), -EOVERFLOW (the summed count or weight would pass
 *         2^64 - 1; the profile is unchanged)
 */
SYM_API int sym_prof_add_stack(struct sym_prof *p,
			       const struct sym_prof_stack *s);

/** sym_prof_nmaps() - number of mappings; ids are 0 to n - 1. */
SYM_API size_t sym_prof_nmaps(const struct sym_prof *p);

/**
 * sym_prof_map() - mapping @id.
 * @return borrowed until @p changes or is freed; NULL when out of range
 */
SYM_API const struct sym_prof_map *sym_prof_map(const struct sym_prof *p,
						uint32_t id);

/** sym_prof_nstacks() - number of unique stacks. */
SYM_API size_t sym_prof_nstacks(const struct sym_prof *p);

/**
 * sym_prof_stack() - stack @i, in the order they were first added.
 * @return borrowed until @p changes or is freed; NULL when out of range
 */
SYM_API const struct sym_prof_stack *sym_prof_stack(const struct sym_prof *p,
						    size_t i);

/**
 * sym_prof_process() - what sym_prof_add_process() recorded for @pid.
 * @param[out] pidns, nspid  may be NULL
 * @return the comm (borrowed, may be NULL), or NULL with *nspid = 0 when
 *         @pid is unknown
 */
SYM_API const char *sym_prof_process(const struct sym_prof *p, int32_t pid,
				     uint64_t *pidns, int32_t *nspid);

/**
 * sym_prof_thread() - the comm of thread @tid.
 * @return borrowed, or NULL when unknown
 */
SYM_API const char *sym_prof_thread(const struct sym_prof *p, int32_t tid);

/*
 * Sources of merged profiles (docs/raw-format.md, "Sources").
 *
 * `sym merge` keeps a row per recording it merged (host, time, period,
 * samples), and, with --spread, which recording each stack came from, so
 * that a report can weigh hosts and show a function's share on each one.
 * A stack's source is part of its identity: the same frames from two
 * sources are two stacks.  Profiles that are not merges have no sources,
 * and their stacks have source 0.  pprof has no place for sources: the
 * pprof writer leaves them out (stacks that differ only by source are
 * then summed by a reader).
 */

/** One recording that a merged profile was made of. */
struct sym_prof_source {
	/** 1 to sym_prof_nsources(); set by sym_prof_add_source(). */
	uint32_t id;
	/** Host name of the recording; NULL when unknown. */
	const char *host;
	/** Wall-clock start, ns since the Unix epoch; 0 when unknown. */
	int64_t start_ns;
	/** Wall-clock length of the recording; 0 when unknown. */
	uint64_t duration_ns;
	/** The recording's nominal weight of one sample, in @weight_unit. */
	uint64_t period;
	/** The recording's weight unit ("ns"); NULL when unknown. */
	const char *weight_unit;
	/** Samples the recording wrote, and the kernel lost. */
	uint64_t samples, lost;
};

/**
 * sym_prof_add_source() - append a source; strings are copied ("" is
 * stored as NULL).
 * @param s       s->id is ignored
 * @param[out] id the new source's id, 1 to n (may be NULL)
 * @return 0, -ENOMEM, -E2BIG (2^20 sources already)
 */
SYM_API int sym_prof_add_source(struct sym_prof *p,
				const struct sym_prof_source *s, uint32_t *id);

/** sym_prof_nsources() - number of sources; ids are 1 to n. */
SYM_API size_t sym_prof_nsources(const struct sym_prof *p);

/**
 * sym_prof_source() - source @id.
 * @return borrowed until @p changes or is freed; NULL when @id is 0 or
 *         larger than sym_prof_nsources()
 */
SYM_API const struct sym_prof_source *sym_prof_source(const struct sym_prof *p,
						      uint32_t id);

/**
 * sym_prof_add_stack_from() - sym_prof_add_stack() for the samples of
 * one source: the stack is summed only into an identical stack of the
 * same @source.  sym_prof_add_stack(p, s) is sym_prof_add_stack_from(p,
 * s, 0).
 * @param source  0 (none), or an id from sym_prof_add_source()
 * @return as sym_prof_add_stack(); -EINVAL also for a @source that does
 *         not exist
 */
SYM_API int sym_prof_add_stack_from(struct sym_prof *p,
				    const struct sym_prof_stack *s,
				    uint32_t source);

/**
 * sym_prof_stack_source() - the source of stack @i.
 * @return its source id, 0 when it has none or @i is out of range
 */
SYM_API uint32_t sym_prof_stack_source(const struct sym_prof *p, size_t i);

/*
 * Symbolized profiles (docs/raw-format.md, "The symbolized form").
 *
 * A profile may carry the symbolization of its frames: for each unique
 * frame (map, address, return flag) a status and, when it resolved, the
 * chain of functions at that address, innermost first.  `sym symbolize`
 * fills it; the raw writer writes it as `symbolized 1`, `fn`, `src` and
 * `loc` lines, the pprof writer as Function and Line entries, and both
 * readers read it back.  Frames are keyed exactly as in stacks: a return
 * address and an exact PC at the same address are two locations.
 */

/** Status of a symbolized location. */
enum sym_prof_loc_status {
	/** Frames found (DWARF or symbol table). */
	SYM_PROF_LOC_OK = 0,
	/** The module is known but nothing covers the address. */
	SYM_PROF_LOC_NOSYMBOL,
	/** No debug info or symbol table for the build ID anywhere. */
	SYM_PROF_LOC_MISSING,
	/** The mapping has no build ID. */
	SYM_PROF_LOC_NOBUILDID,
	/** The frame is outside any mapping (SYM_PROF_NOMAP) or in an
	 *  anonymous (JIT) mapping. */
	SYM_PROF_LOC_UNMAPPED,
	/** The lookup failed (server error, conversion failed). */
	SYM_PROF_LOC_ERROR,
};

/** Number of enum sym_prof_loc_status values. */
#define SYM_PROF_LOC_NSTATUS 6

/** Flags of struct sym_prof_line. */
enum sym_prof_line_flags {
	/** An inlined call, inside the next line's function. */
	SYM_PROF_LINE_INLINED = (1 << 0),
	/** The name comes from the symbol table: no DWARF. */
	SYM_PROF_LINE_SYMTAB = (1 << 1),
};

/** Most lines (inline chain) of one location; deeper chains are cut. */
#define SYM_PROF_MAX_LINES 128

/** One function of a location's inline chain. */
struct sym_prof_line {
	/** Function name, demangled when mangled; NULL when unknown. */
	const char *function;
	/** Source file; NULL when unknown. */
	const char *file;
	/** Line and column; 0 when unknown. */
	uint32_t line, column;
	/** enum sym_prof_line_flags. */
	uint32_t flags;
};

/**
 * sym_prof_set_location() - attach the symbolization of one frame.
 * @param f       the frame: its map (or SYM_PROF_NOMAP), address and
 *                SYM_PROF_FRAME_RETURN bit are the key; it need not occur
 *                in a stack
 * @param status  enum sym_prof_loc_status
 * @param lines   innermost first (lines[n - 1] is the real, non-inlined
 *                function); copied, strings interned (each distinct
 *                string is kept once; "" is stored as NULL)
 * @param n       at least 1 when @status is SYM_PROF_LOC_OK, else 0
 * @return 0, -ENOMEM, -EINVAL (a map that does not exist, an unknown
 *         frame or line flag or status, a line both inlined and from the
 *         symbol table, lines with a status other than OK, no line with
 *         OK), -E2BIG (more than SYM_PROF_MAX_LINES
 *         lines, or 2^26 locations already)
 * An earlier answer for the same frame is replaced (its location keeps
 * its place in sym_prof_location_at()'s order).  On success the profile
 * is symbolized (sym_prof_symbolized()); on failure it is unchanged.
 */
SYM_API int sym_prof_set_location(struct sym_prof *p,
				  const struct sym_prof_frame *f,
				  uint32_t status,
				  const struct sym_prof_line *lines, size_t n);

/**
 * sym_prof_location() - the symbolization of frame @f.
 * @param[out] status  enum sym_prof_loc_status
 * @param[out] lines   innermost first; borrowed, valid until @p changes
 *                     or is freed (NULL when *n is 0)
 * @param[out] n       number of @lines
 * @return 0, -ENOENT when @f has none (the outputs are then 0 / NULL)
 * O(1).  Any of the out-parameters may be NULL.
 */
SYM_API int sym_prof_location(const struct sym_prof *p,
			      const struct sym_prof_frame *f,
			      uint32_t *status,
			      const struct sym_prof_line **lines, size_t *n);

/**
 * sym_prof_symbolized() - does @p carry symbolization (read from a
 * symbolized file, or sym_prof_set_location() called)?
 * @return 1 or 0
 */
SYM_API int sym_prof_symbolized(const struct sym_prof *p);

/** sym_prof_nlocations() - number of symbolized locations. */
SYM_API size_t sym_prof_nlocations(const struct sym_prof *p);

/**
 * sym_prof_location_at() - location @i, in the order they were first
 * set (a file's order of `loc` lines).
 * @param[out] f  its frame; may be NULL
 * @param status, lines, n  as sym_prof_location()
 * @return 0, -ENOENT when @i is out of range
 */
SYM_API int sym_prof_location_at(const struct sym_prof *p, size_t i,
				 struct sym_prof_frame *f, uint32_t *status,
				 const struct sym_prof_line **lines,
				 size_t *n);

/**
 * sym_prof_write() - write @p in the raw stack format, every header line
 * included, in one write(2) per 64 KiB.  The output depends on @p only:
 * header, processes and threads in the order they were first added, maps,
 * sources, the symbolization, stacks in their order (with a `from` line
 * where the source changes), "end".
 * @param fd  written with write(2), not closed
 * @return 0, -errno of write(2), -ENOMEM, -EINVAL (the header has no
 *         weight_unit: the file could not be read back)
 */
SYM_API int sym_prof_write(const struct sym_prof *p, int fd);

/**
 * sym_prof_read() - parse the raw stack format, strictly: the first
 * problem fails the whole file (docs/raw-format.md, "libsym").  Map ids
 * are renumbered 0 to n - 1 in file order, source ids 1 to n; identical
 * stacks of one source are summed.
 * @param buf, len  the whole file
 * @param[out] out  caller owns: sym_prof_free()
 * @param msg, msglen  filled on error with "line N: what is wrong"; may
 *                     be NULL
 * @return 0, -SYM_E_BADPROFILE (malformed: see @msg), -ENOMEM, -E2BIG (a
 *         limit of docs/raw-format.md exceeded: a line over 1 MiB, over
 *         SYM_PROF_MAX_FRAMES frames, 2^20 maps or sources, 2^24 unique
 *         stacks, 2^22 processes or threads); @msg is set for each, *out
 *         is NULL
 */
SYM_API int sym_prof_read(const void *buf, size_t len, struct sym_prof **out,
			  char *msg, size_t msglen);

/**
 * sym_prof_write_pprof() - write @p as a gzipped pprof profile
 * (profile.proto): locations hold runtime addresses (vaddr - map.vaddr +
 * map.start), mappings their start, limit, file offset, path and build
 * ID.  When @p is symbolized (sym_prof_symbolized()), each ok location
 * gets its lines, innermost first, with one Function per (function,
 * file), and its mapping the has_* flags; other statuses go into
 * comments.  Sample values are [samples/count,
 * cpu/nanoseconds] (or [samples/count] when weight_unit is "samples");
 * pid, tid and the stack flags go into sample labels.
 * What pprof has no field for (map.vaddr, kind and pid, which frames are
 * exact PCs, the header, processes and threads) goes into "sym-*"
 * Profile.comment strings, so that sym_prof_read_pprof() gives back an
 * equal profile (docs/pprof.md), except for sources: they are left out,
 * and stacks that differ only by source become samples that a reader
 * sums.
 * @param fd  written with write(2), not closed
 * @return 0, -errno, -ENOMEM, -ERANGE (a count or weight over INT64_MAX)
 */
SYM_API int sym_prof_write_pprof(const struct sym_prof *p, int fd);

/**
 * sym_prof_read_pprof() - parse a pprof profile, gzipped or not.
 * Locations become frames (the first of several lines' address), with
 * every frame but the leaf marked SYM_PROF_FRAME_RETURN; mappings get
 * SYM_PROF_MAP_VADDR_GUESSED unless the file came from
 * sym_prof_write_pprof().  Locations with lines become ok locations
 * (sym_prof_set_location()), and a profile with any is symbolized.
 * Every index and id is checked; stacks deeper than SYM_PROF_MAX_FRAMES
 * keep their innermost frames and get SYM_PROF_TRUNCATED.  Limits: 1 GiB
 * of protobuf (after gunzip), 2 GiB of decoded messages.
 * @param buf, len  the whole file
 * @param[out] out  caller owns: sym_prof_free()
 * @param msg, msglen  filled on error with what is wrong; may be NULL
 * @return 0, -SYM_E_BADPROFILE (see @msg), -ENOMEM, -E2BIG
 */
SYM_API int sym_prof_read_pprof(const void *buf, size_t len,
				struct sym_prof **out, char *msg,
				size_t msglen);

/**
 * sym_prof_read_file() - read a raw or pprof file, telling them apart by
 * their first bytes ("sym-raw " for the raw format, a gzipped raw file
 * too; anything else is read as pprof).
 * @param path  the file; at most 1 GiB (-E2BIG)
 * @param[out] out  caller owns: sym_prof_free()
 * @param msg, msglen  as sym_prof_read(); may be NULL
 * @return as sym_prof_read(), or -errno when @path cannot be read
 */
SYM_API int sym_prof_read_file(const char *path, struct sym_prof **out,
			       char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif /* SYM_H */
