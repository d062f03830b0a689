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
 *    (sym_set_log()).  By default warnings go to stderr.  The exception is
 *    libdw (elfutils), which libsym calls to read DWARF: when one of its
 *    own allocations fails, its out-of-memory handler ends the process
 *    (exit status 1, "cannot allocate memory").  Such allocations are out
 *    of libsym's reach, and out of scope of its fault injection
 *    (SYM_TEST_FAIL_ALLOC fails libsym's own allocations only).  A
 *    failed allocation of libsym's own is returned as -ENOMEM.
 *
 * Errors.  Calls that can fail return 0 or a negative error code:
 * -errno for system failures (-ENOMEM, -EACCES, ...) and -SYM_E_* for
 * library failures.  sym_strerror() describes both.  An address without an
 * answer is not an error: the lookup succeeds with zero frames.  Something
 * asked for that does not exist (a build ID in a store, a section, a
 * symbol, a file's build ID, an environment variable) is -SYM_E_NOTFOUND,
 * always; -ENOENT only ever comes from the system, for a path that does
 * not exist.
 *
 * NULL.  Every function checks its pointer parameters (callback contexts
 * excepted: they are passed on unread), with one rule:
 *  - a function returning int returns -EINVAL when its object or a
 *    parameter not marked "may be NULL" is NULL.  An object out-parameter
 *    (struct sym_x **out) that is not NULL itself is set to NULL on every
 *    failure, so cleanup code can always call the matching close;
 *  - a getter returning a pointer returns NULL for a NULL object, one
 *    returning a count, a version or a yes/no returns 0;
 *  - a void getter that fills a caller's struct fills it with zeros for a
 *    NULL object, and does nothing when the struct pointer is NULL;
 *  - *_close(), *_unlock() and *_free() of NULL do nothing.
 * Each function's @return says which of these applies.  The profile
 * model (sym_prof_*, libsymprofile) states its own contract in
 * libsym/prof/sym_prof.h.
 *
 * ABI.  The shared library's SONAME is libsym.so.SYM_VERSION_MAJOR.
 * Within one SONAME a program built against an older libsym runs against a
 * newer one: functions are only added, each in the version node of
 * libsym.map named for the release that added it (LIBSYM_1.0, LIBSYM_1.1,
 * ...), and never removed or changed in signature or meaning.  Anything
 * else raises SYM_VERSION_MAJOR, and the SONAME with it: 1.0.0 did, when
 * the profile model's sym_prof_* functions left libsym.so.0 for
 * libsymprofile.so.1 (sym_prof.h), so its version nodes restarted with
 * LIBSYM_1.0, which holds every function of 1.0.0, sym_version()
 * included.  sym_version() tells the version that is running.  Structs:
 *  - opaque ones (struct sym_table, sym_module, sym_store,
 *    sym_store_lock) are allocated by libsym and may change freely;
 *  - options structs (struct sym_module_opts, struct sym_store_opts) are
 *    the only caller-allocated structs that may grow.  Their first field,
 *    size_t sz, is the size of the struct the caller was compiled with:
 *    declare them with SYM_OPTS(), which sets it and zeroes the rest.  New
 *    fields are only appended, and zero always means the behaviour from
 *    before the field existed.  libsym reads only the fields that fit in
 *    sz, so an older caller gets the defaults of newer fields.  A newer
 *    caller's larger struct is accepted when every byte past the fields
 *    this libsym knows is zero, and refused with -EINVAL otherwise: an
 *    option this library cannot honour is an error, never ignored.  So
 *    are flag bits it does not name, and an sz below sizeof(size_t)
 *    (sz == 0 means a struct not declared with SYM_OPTS(): -EINVAL, not
 *    the defaults).  A NULL options pointer means all defaults;
 *  - every other struct in this header that the caller allocates (struct
 *    sym_frame, sym_table_stat, sym_module_info, sym_module_stats,
 *    sym_store_entry, sym_store_gc_stats, ...) is fixed: its size and
 *    layout are part of the ABI, and a new field means a new struct and
 *    a new function.  Enums may gain values, and output flags new bits:
 *    callers ignore bits they do not know.
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
#define SYM_VERSION_MAJOR 1
#define SYM_VERSION_MINOR 8
#define SYM_VERSION_PATCH 0
#define SYM_VERSION "1.8.0"

/**
 * sym_version() - the version of the libsym that is running, which may be
 * newer than the SYM_VERSION a caller was compiled with (see "ABI" above).
 * @param[out] major, minor, patch  its numbers; each may be NULL
 * @return "MAJOR.MINOR.PATCH", a static string; never NULL
 * Thread-safety: safe.
 */
SYM_API const char *sym_version(int *major, int *minor, int *patch);

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
	/** Something that was looked for does not exist: the one "not
	 *  found" code of libsym (-ENOENT is only the system's). */
	SYM_E_NOTFOUND,
	/** The file is valid but of a kind libsym does not handle. */
	SYM_E_UNSUPPORTED,
	/** A compressed section, or a file compressed whole (.ko.xz,
	 *  .ko.zst, .ko.gz), could not be decompressed. */
	SYM_E_DECOMPRESS,
	/** The directory is not a symd store, or of a newer layout. */
	SYM_E_BADSTORE,
	/** A stored table was built by another format or converter. */
	SYM_E_STALE,
	/** A profile (raw stack format or pprof) is malformed (libsymprofile,
	 *  sym_prof.h). */
	SYM_E_BADPROFILE,
	/** The path names a FIFO, a device or a socket, not a regular file
	 *  (a directory is -EISDIR).  libsym opens files with O_NONBLOCK
	 *  and checks before reading, so a FIFO never blocks. */
	SYM_E_NOTREG,
	/** A compressed section declares more decompressed bytes than the
	 *  limits allow (sym_set_inflate_limits()); nothing was
	 *  decompressed.  The limit and the section are logged. */
	SYM_E_INFLATE_LIMIT,
	/** A Go function table (.gopclntab) is truncated, has an unknown
	 *  magic or holds no readable function. */
	SYM_E_BADGOPCLNTAB,
	SYM_E_MAX,
};

/**
 * sym_strerror() - describe an error code returned by libsym.
 * @param err   0, -errno or -SYM_E_* (the sign is ignored)
 * @param buf   caller's buffer, filled with a NUL-terminated message
 * @param len   size of @buf; the message is truncated to fit
 * @return @buf; when @buf is NULL or @len is 0, @buf untouched
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

/**
 * Decompression limits, checked against the sizes that each compressed
 * section's header declares (Elf*_Chdr ch_size, or the size of a
 * .zdebug_* section), before anything is decompressed: a file over them
 * fails with -SYM_E_INFLATE_LIMIT and memory never grows.  They are
 * counted per ELF file (the main file and its debug file each get the
 * whole budget), over the sections libsym decompresses (every zstd
 * section; zlib .debug_* sections the table reads).  The dwz alt file
 * and the split-DWARF .dwo files the DWARF is read with count with the
 * file that names them, in its per-file budget; a .dwo, which libdw
 * opens and decompresses whole itself, has every compressed section
 * counted, checked before libdw looks for its unit.  A file compressed
 * whole, as kernel modules are installed (NAME.ko.xz, NAME.ko.zst,
 * NAME.ko.gz, read as the module they hold), may decompress to the
 * per-file limit and to no more than ratio x its size + 1 MiB: refused
 * at once when it declares a larger size (xz's index, zstd's frame
 * header, gzip's ISIZE), else checked as it decompresses, the buffer
 * grown with the output (memory stays under the limit, whatever the
 * declaration says); a gzip file is decompressed into a buffer of its
 * ISIZE, and one that does not fill it exactly is corrupt.  A
 * field of 0 means its default, which the environment can set (sizes
 * in bytes, with an optional K, M or G suffix, powers of 1024):
 *
 *	field    default   environment
 *	section  1 GiB     SYM_MAX_INFLATE_SECTION
 *	file     2 GiB     SYM_MAX_INFLATE_FILE
 *	ratio    256       SYM_MAX_INFLATE_RATIO
 *
 * The defaults fit real files with room to spare: libjvm's debug file
 * (156 MB compressed) holds 368 MB of DWARF, 257 MB of it in one
 * .debug_info; real sections compress 3 to 12 times, 83 at most among
 * Debian 12's debug packages (a small .debug_abbrev).
 * This struct is fixed (see "ABI" at the top of this file).
 */
struct sym_inflate_limits {
	/** Most bytes one section may decompress to. */
	uint64_t section;
	/** Most bytes all the sections of one file may decompress to. */
	uint64_t file;
	/** Most decompressed bytes per compressed byte of a section; the
	 *  first 1 MiB of every section is exempt, so small sections of
	 *  repetitive data never trip it. */
	uint32_t ratio;
};

/**
 * sym_set_inflate_limits() - set the decompression limits of the process.
 * @param lim  copied; NULL, or a field of 0, restores the default (which
 *             the environment may set, see struct sym_inflate_limits)
 * @return 0
 * Thread-safety: safe; a file opened at the same time sees the old or
 * the new value of each field.  symd calls it from its --max-inflate
 * option at startup.
 */
SYM_API int sym_set_inflate_limits(const struct sym_inflate_limits *lim);

/**
 * sym_get_inflate_limits() - the decompression limits in force, defaults
 * and environment applied (no field is 0).
 * @param[out] lim  filled; NULL is a no-op
 * Thread-safety: safe.
 */
SYM_API void sym_get_inflate_limits(struct sym_inflate_limits *lim);

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
	/** The address is in a PLT stub: @symbol (and, with
	 *  SYM_FRAME_SYMTAB, @name) is a made-up "NAME@plt", as objdump,
	 *  perf and gdb name stubs (a stub calling the file's own IFUNC is
	 *  named after the IFUNC, as perf does), or ".plt" for the entries
	 *  of .plt that jump through no GOT slot (PLT0), as perf names them.  No peer's symbol table has it: an
	 *  output that must copy GNU addr2line or eu-addr2line takes the
	 *  frame as unknown, one that copies llvm-symbolizer uses
	 *  @llvm_symbol (libsym never puts a stub there). */
	SYM_FRAME_PLT = (1 << 4),
	/** Outermost frame of a function whose DWARF gives no linkage
	 *  name, in a language that mangles names (C++ main(), functions
	 *  of local lambda types): @linkage_name and @demangled are the
	 *  covering symbol's, as GNU addr2line and llvm-symbolizer name
	 *  it; @name keeps DW_AT_name. */
	SYM_FRAME_NAME_SYMTAB = (1 << 5),
	/** With SYM_FRAME_SYMTAB: the symbol table GNU addr2line reads (the
	 *  .symtab of the file with the DWARF) has no symbol for the
	 *  address; @name is @symbol (e.g. from .dynsym of a stripped
	 *  file, which GNU addr2line ignores). */
	SYM_FRAME_NAME_OTHER = (1 << 6),
	/** The frame's DWARF function has no linkage name and its language
	 *  mangles names: GNU addr2line names it after the symbol table
	 *  when it is the innermost frame. */
	SYM_FRAME_NO_LINKAGE = (1 << 7),
	/** @file is not from the line table: it is the STT_FILE name of
	 *  the local symbol that names the frame (SYM_FRAME_SYMTAB). */
	SYM_FRAME_FILE_SYMTAB = (1 << 8),
	/** The frame's DWARF function instance has no DW_AT_low_pc (only
	 *  DW_AT_ranges); @entry is then its first range's start.
	 *  llvm-symbolizer 14 gives such a frame no "StartAddress". */
	SYM_FRAME_NO_LOW_PC = (1 << 9),
	/** The function's DW_AT_decl_file is a DW_FORM_implicit_const
	 *  (gcc 12's form for functions declared in a class), which
	 *  llvm-symbolizer 14 does not read: it gives no "StartFileName".
	 *  @decl_file is still set. */
	SYM_FRAME_DECL_CONST = (1 << 10),
	/** The module was opened with a struct sym_module_opts .spelling
	 *  callback, and it said that its demangler spells @linkage_name
	 *  exactly as @demangled: a caller that must print that
	 *  demangler's bytes can print @demangled. */
	SYM_FRAME_SPELLING = (1 << 11),
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
	/** Raw linkage (mangled) name, or NULL when there is none.  The
	 *  name to show is this one, demangled (@demangled), else @name:
	 *  on the outermost frame that is what GNU addr2line prints (see
	 *  SYM_FRAME_NAME_SYMTAB and SYM_FRAME_SYMTAB). */
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
	 *  NULL when no symbol covers it.  Chosen as eu-addr2line chooses
	 *  (libdwfl's dwfl_module_addrsym() over the one table it reads).
	 *  May differ from @name, e.g. "foo.cold". */
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
	/** The symbol llvm-symbolizer 14 names the outermost frame after
	 *  (from the file's own .symtab, else its .dynsym, by its rules: a
	 *  sizeless symbol runs on to the next one), NULL when none or on
	 *  other frames.  Never a PLT stub name. */
	const char *llvm_symbol;
	/** Address of @llvm_symbol; 0 when it is NULL. */
	uint64_t llvm_symbol_addr;
	/** The STT_FILE name of @llvm_symbol when it is a local symbol. */
	const char *llvm_symbol_file;
	/** The symbol GNU addr2line (bfd) names the address after, from
	 *  the .symtab of the file with the DWARF: in the address's
	 *  section, the nearest at or below it, reaching it or not; NULL
	 *  when none or on inner frames.  May be a PLT stub name
	 *  (SYM_FRAME_PLT). */
	const char *gnu_symbol;
	/** Address of @gnu_symbol; 0 when it is NULL. */
	uint64_t gnu_symbol_addr;
	/** The function whose definition holds this frame's function (a
	 *  lambda's operator() is held by the function that defines the
	 *  lambda), by its linkage name, else its name; NULL when the
	 *  function is defined at namespace scope.  eu-addr2line names an
	 *  inlined innermost frame after it. */
	const char *outer;
	/** The name eu-addr2line 0.188 prints for this frame's function
	 *  where it is not the linkage name (else @name): gas 2.40 writes a
	 *  DW_TAG_subprogram per alias of an assembler function, all with
	 *  one range, and eu takes the first in DIE order where GNU
	 *  addr2line takes the last, the one this frame is (libc's dup:
	 *  eu's "__dup", GNU's "__GI_dup").  NULL when eu's is the same. */
	const char *eu_name;
};

/**
 * sym_frame_name() - the name to show for a frame: the demangled linkage
 * name, else the raw one where it names the frame from the symbol table
 * (SYM_FRAME_NAME_SYMTAB), else DW_AT_name (C: "__libc_malloc", not its
 * asm linkage name "__GI___libc_malloc"), else the linkage name.  A
 * frame with no DWARF function (SYM_FRAME_SYMTAB) is named only when a
 * symbol covers the address (@symbol): GNU addr2line's nearest symbol
 * below it, which may end before it (the padding after a function),
 * names nothing here, as llvm-symbolizer and eu-addr2line name nothing.
 * @param f   a frame; not NULL
 * @return borrowed from @f's strings; NULL when the frame has no name
 * Thread-safety: pure.
 */
SYM_API const char *sym_frame_name(const struct sym_frame *f);

/*
 * Tables.
 */

/** An immutable lookup table over a caller's buffer.  Opaque. */
struct sym_table;

/** Format version of the tables this library builds and reads. */
#define SYM_TABLE_FORMAT 10

/**
 * sym_table_open() - view a table buffer for lookups.
 * @param buf    the table bytes, as sym_table_data() gave them; borrowed:
 *               it must stay valid and unchanged until sym_table_close().
 *               It must be 8-byte aligned.
 * @param len    size of @buf
 * @param[out] out  caller owns, free with sym_table_close(); NULL on error
 * @return 0, -EINVAL (@buf or @out NULL, or @buf misaligned), -ENOMEM,
 *         -SYM_E_BADTABLE (not a table, another format version, or
 *         inconsistent sizes)
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
 * @param[out] buf  borrowed from @t, valid until it is closed; NULL when
 *                  @t is NULL.  May be NULL.
 * @param[out] len  size in bytes; 0 when @t is NULL.  May be NULL.
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
 * sym_converter_version() - the version of libsym's converter (DWARF and
 * symbol reading, table building).  It changes whenever a fix changes
 * what a table says for the same input; a stored table whose
 * sym_table_stat() converter differs should be rebuilt.
 * @return the version, a positive number
 * Thread-safety: safe.
 */
SYM_API uint32_t sym_converter_version(void);

/** Flags of struct sym_table_stat. */
enum sym_table_flags {
	/** The table was built from DWARF. */
	SYM_TABLE_DWARF = (1 << 0),
	/** The table has symbols (.symtab, .dynsym or MiniDebugInfo). */
	SYM_TABLE_SYMBOLS = (1 << 1),
	/** The table was built from Go's function table (.gopclntab): the
	 *  module has no DWARF, and its functions, lines and inline
	 *  chains come from there. */
	SYM_TABLE_GOPCLNTAB = (1 << 2),
	/** The table was built from a kallsyms snapshot (a kernel's, or
	 *  one of its modules', file kind SYM_STORE_KALLSYMS): function
	 *  names, no lines, at addresses relative to the kernel's `_text`
	 *  or the module's .text (docs/design.md, "Kernel addresses").
	 *  Since 1.6.0. */
	SYM_TABLE_KALLSYMS = (1 << 3),
	/** The table is a Linux kernel's (a vmlinux): its addresses are
	 *  offsets from the kernel's _text symbol (link-time address minus
	 *  _text's), the same on every boot whatever KASLR chose.  Since 1.6.0. */
	SYM_TABLE_KERNEL = (1 << 4),
};

/**
 * sym_table_source_name() - which source a table with sym_table_stat()
 * @flags was built from, as one word: "dwarf" (SYM_TABLE_DWARF: it wins
 * when both exist), "gopclntab" (SYM_TABLE_GOPCLNTAB), "kallsyms"
 * (SYM_TABLE_KALLSYMS, since 1.6.0), "symtab"
 * (SYM_TABLE_SYMBOLS alone: names, no lines) or "none" (an empty table).
 * @return a static string, never NULL
 * Thread-safety: safe.  Since 1.5.0 (LIBSYM_1.5).
 */
SYM_API const char *sym_table_source_name(uint32_t flags);

/**
 * sym_table_stat() - fill @st with what @t holds.
 * @param[out] st  filled; with zeros when @t is NULL; may be NULL (then
 *                 nothing is done)
 */
SYM_API void sym_table_stat(const struct sym_table *t,
			    struct sym_table_stat *st);

/**
 * sym_table_verify() - check a table completely: its checksum, and that
 * every array is ordered and every index points inside its array (scope
 * parents only to earlier scopes, so chains cannot loop).
 * @return 0, -SYM_E_BADTABLE (the reason is logged at SYM_LOG_WARN),
 *         -EINVAL (@t NULL), -ENOMEM (no memory to inflate the
 *         compressed demangled names: no verdict)
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
 * @return 0, -EINVAL (@t or @fn NULL, or @addrs NULL with @count > 0), or
 *         the first non-zero value @fn returned
 */
SYM_API int sym_table_lookup_batch(const struct sym_table *t,
				   const uint64_t *addrs, size_t count,
				   sym_frames_fn fn, void *ctx);

/**
 * Fields of struct sym_frame a batch may leave out, for callers that
 * print only some (sym_table_lookup_batch_omit(),
 * sym_store_lookup_omit()): each costs a few table reads a frame, which
 * on a warm answer of many inlined frames is a few percent of the time.
 * A field left out is NULL or 0, as for a frame that has none.
 */
enum sym_frame_omit {
	/** @decl_file, @decl_file_rel, @decl_line and the
	 *  SYM_FRAME_DECL_CONST flag (llvm-symbolizer's JSON and --verbose
	 *  print them; its other outputs do not). */
	SYM_OMIT_DECL = (1 << 0),
	/** @outer and @eu_name, the names only eu-addr2line and GNU
	 *  addr2line's outputs use. */
	SYM_OMIT_PEER_NAMES = (1 << 1),
	/** @demangled, for callers that print raw names (addr2line
	 *  without -C): a table stores its demangled names compressed
	 *  (docs/table-format.md), and reading one inflates its frame.
	 *  Since 1.8.0 also the SYM_FRAME_SPELLING flag, which only says
	 *  how @demangled is spelled. */
	SYM_OMIT_DEMANGLED = (1 << 2),
	/** The symbols of an answer whose frames are all named from DWARF
	 *  as GNU addr2line names them: every function has a linkage name
	 *  or is of a language that does not mangle names (no frame has
	 *  SYM_FRAME_NO_LINKAGE), and the outermost frame has a DWARF
	 *  function.  Its outermost frame then has no @symbol,
	 *  @symbol_addr, @symbol_size, @llvm_symbol, @llvm_symbol_addr,
	 *  @llvm_symbol_file, @gnu_symbol or @gnu_symbol_addr, and neither
	 *  SYM_FRAME_SYMBOL_OBJECT nor SYM_FRAME_PLT: GNU addr2line's output
	 *  reads them only in the other answers, which keep them.  Since
	 *  1.7.0: a library before it refuses the bit (-EINVAL). */
	SYM_OMIT_SYMBOLS = (1 << 3),
	/** @column, @entry, @file_rel and the SYM_FRAME_NO_LOW_PC flag:
	 *  what llvm-symbolizer's outputs print (columns, "StartAddress",
	 *  paths relative to the compilation directory) and GNU
	 *  addr2line's do not.  @entry stays on a frame with
	 *  SYM_FRAME_NO_LINKAGE: GNU addr2line knows such a function
	 *  again by it.  Since 1.8.0: a library before it refuses the bit
	 *  (-EINVAL). */
	SYM_OMIT_LLVM_ONLY = (1 << 4),
};

/**
 * sym_table_lookup_batch_omit() - sym_table_lookup_batch() without the
 * fields @omit names.
 * @param omit  enum sym_frame_omit bits; 0 is sym_table_lookup_batch()
 * @return as sym_table_lookup_batch(); -EINVAL also for a bit of @omit
 *         this library does not name
 */
SYM_API int sym_table_lookup_batch_omit(const struct sym_table *t,
					const uint64_t *addrs, size_t count,
					unsigned omit, sym_frames_fn fn,
					void *ctx);

/**
 * sym_table_find_symbol() - the address of a symbol, by name.
 * @param name   a symbol name as the symbol table spells it
 * @param[out] addr  its address
 * @param[out] size  its size (0 when unknown); may be NULL
 * @return 0, -SYM_E_NOTFOUND (no symbol of that name), -EINVAL (@t,
 *         @name or @addr NULL)
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
 * sym_spelling_fn - does the caller's own demangler spell @mangled
 * exactly as @demangled (libsym's demangling, libiberty's)?  See struct
 * sym_module_opts .spelling.
 * @param ctx  the .spelling_ctx given with it
 * @return non-zero when it does
 * Called on the thread that builds the table, once per distinct
 * demangled name.
 */
typedef int (*sym_spelling_fn)(const char *mangled, const char *demangled,
			       void *ctx);

/**
 * Options of sym_module_open().  Declare them with SYM_OPTS(), which sets
 * @sz, so that newer fields can be added without breaking callers (see
 * "ABI" at the top of this file).
 */
struct sym_module_opts {
	/** sizeof(struct sym_module_opts) as the caller was compiled;
	 *  SYM_OPTS() sets it. */
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
	/** NULL, or asked while the module's table is built whether the
	 *  caller's demangler spells each demangled name as libsym does;
	 *  the frames of the names it accepts carry SYM_FRAME_SPELLING, so
	 *  a caller that prints another demangler's bytes (bin/compat/
	 *  llvm-symbolizer: LLVM's) demangles at lookup time only the
	 *  names spelled otherwise.  A table from the store keeps the
	 *  answers of whoever built it (none for symd's). */
	sym_spelling_fn spelling;
	/** Passed to @spelling; borrowed. */
	void *spelling_ctx;
};

/**
 * Declare an options struct NAME of type struct TYPE with sz set, the
 * fields given set, and every other byte zero, padding included: libsym
 * refuses non-zero bytes it does not know (see "ABI" at the top of this
 * file), and an initializer alone leaves padding unspecified.  It is
 * libbpf's LIBBPF_OPTS() (a GNU C statement expression).
 */
#define SYM_OPTS(TYPE, NAME, ...)                                            \
	struct TYPE NAME = ({                                                \
		__builtin_memset(&NAME, 0, sizeof(struct TYPE));             \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };     \
	})

/**
 * sym_module_open() - open an ELF file and find its debug information.
 * @param path   the ELF file (an executable, shared object or debug file)
 * @param opts   NULL for the defaults
 * @param[out] out  caller owns, free with sym_module_close(); NULL on error
 * @return 0, -ENOENT/-EACCES/... (cannot open @path), -EISDIR,
 *         -SYM_E_NOTREG (a FIFO, device or socket: refused at once, never
 *         read), -SYM_E_NOTELF, -SYM_E_BADELF, -SYM_E_UNSUPPORTED
 *         (a relocatable file other than a kernel module, or a core
 *         file), -SYM_E_INFLATE_LIMIT (a zstd
 *         section of @path or of its debug file over the decompression
 *         limits), -ENOMEM, -EINVAL (@path or @out NULL; @opts with an sz below
 *         sizeof(size_t), a non-zero byte past the fields this libsym
 *         knows, or a flag enum sym_module_flags does not name: see
 *         "ABI" at the top of this file)
 * The separate debug file is searched like gdb and eu-addr2line do: the
 * build ID under .build-id/ of each debuginfo_path directory and of the
 * debug directory, then .gnu_debuglink (CRC checked) next to the file, in
 * its .debug/ directory and under the debug directory.  A missing debug
 * file is not an error: the module then has symbols only.
 * A Linux kernel module (.ko: ET_REL with a .modinfo section) opens with
 * the symbols of its .text only, at their offsets in .text (its
 * addresses), and no DWARF, searched or not (docs/design.md, "Kernel
 * modules").
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
 * @param[out] out  caller owns, free with sym_module_close(); NULL on error
 * @return as sym_module_open(); -EINVAL also when @buf is NULL
 * Used by the fuzzers.
 */
SYM_API int sym_module_open_mem(const void *buf, size_t len,
				const struct sym_module_opts *opts,
				struct sym_module **out);

/** sym_module_close() - free a module and its table.  NULL is a no-op. */
SYM_API void sym_module_close(struct sym_module *mod);

/**
 * sym_module_build_id() - the module's GNU build ID in lowercase hex.
 * @return borrowed from @mod; NULL when the file has no NT_GNU_BUILD_ID
 *         or @mod is NULL
 */
SYM_API const char *sym_module_build_id(const struct sym_module *mod);

/** What sym_module_info() tells about the module's ELF file. */
struct sym_module_info {
	/** 32 or 64 (ELFCLASS32/64): addresses print with 8 or 16 digits. */
	int elf_class;
	/** e_type: ET_EXEC (2), ET_DYN (3), or ET_REL (1) for a kernel
	 *  module. */
	int elf_type;
	/** e_machine, e.g. EM_X86_64 (62) or EM_386 (3). */
	int machine;
};

/**
 * sym_module_info() - the ELF class, type and machine of the module.
 * @param[out] info  filled; with zeros when @mod is NULL; may be NULL
 *                   (then nothing is done).  The module keeps no
 *                   reference.
 * Thread-safety: as for the module.
 */
SYM_API void sym_module_info(const struct sym_module *mod,
			     struct sym_module_info *info);

/**
 * sym_module_debug_file() - where the DWARF came from.
 * @return borrowed path, valid until sym_module_close(): the separate
 *         debug file, the module itself when the DWARF is inside it, or
 *         NULL when there is no DWARF or @mod is NULL
 */
SYM_API const char *sym_module_debug_file(const struct sym_module *mod);

/**
 * sym_module_table() - the module's lookup table, built on first call.
 * @param[out] out  borrowed from @mod, valid until sym_module_close();
 *                  NULL on error
 * @return 0, -ENOMEM, -SYM_E_BADDWARF (the DWARF is corrupt; the
 *         message is logged), -SYM_E_TOOBIG, -SYM_E_DECOMPRESS,
 *         -SYM_E_INFLATE_LIMIT (a compressed debug section over the
 *         decompression limits, see struct sym_inflate_limits; the
 *         limit is logged), -EINVAL (@mod or @out NULL)
 * The table is built in one pass over each compilation unit.  A module
 * with no usable DWARF still gets a table of its symbols.  A failure is
 * remembered: later calls return the same error at once.
 */
SYM_API int sym_module_table(struct sym_module *mod,
			     const struct sym_table **out);

/**
 * sym_module_table_for() - a table that answers @addrs, built without
 * reading all of the module's DWARF (since 1.5.0): the lazy path for a
 * module whose full table is not at hand (a cold build ID).
 * @param mod    not NULL; its full table not built yet
 * @param addrs  ELF virtual addresses, any order, duplicates allowed;
 *               copied.  May be NULL when @n is 0.
 * @param n      how many
 * @param[out] out  caller owns, free with sym_table_close(); NULL on
 *                  error
 * @return 0, -EINVAL (@mod or @out NULL, @addrs NULL with @n > 0),
 *         -EALREADY (sym_module_table() has built the full table, which
 *         answers as well: use it), that build's error when it failed,
 *         or an error of sym_module_table() (the same causes)
 * Only the compilation units that cover one of @addrs are read (their
 * address ranges come from each unit's top DIE; a unit without ranges
 * is always read), with the walk and builder of the full table, so for
 * each of @addrs sym_table_lookup() on @out gives exactly the frames
 * the full table gives, symbol-table answers included.  Other addresses
 * may be answered differently (by symbols alone): never store @out as
 * the module's table.  The debug sections are still decompressed whole
 * (zlib streams cannot be entered midway and the unit index needs every
 * unit header), so the saving is in the DIE walk, the line programs and
 * the table's sweeps: on libjvm's debug file one address takes 2.0 s
 * and 494 MB against the full build's 7.0 s and 658 MB.  The module
 * keeps its decompressed sections for later calls until
 * sym_module_table() or sym_module_close().  Failures are not
 * remembered.
 * Thread-safety: as for the module.
 */
SYM_API int sym_module_table_for(struct sym_module *mod,
				 const uint64_t *addrs, size_t n,
				 struct sym_table **out);

/**
 * sym_module_table_symbols() - a table of the module's symbols alone
 * (since 1.5.0): its text sections and the symbol tables of its file and
 * its debug file (.symtab, .dynsym, MiniDebugInfo), no DWARF and no Go
 * function table.  Milliseconds where the full table takes seconds: a
 * server answers a cold build ID with function+offset from it while the
 * full table is built.
 * @param mod  not NULL; its full table not built yet
 * @param[out] out  caller owns, free with sym_table_close(); NULL on
 *                  error
 * @return 0, -EINVAL (@mod or @out NULL), -EALREADY (sym_module_table()
 *         has built the full table), that build's error when it failed,
 *         -ENOMEM, -SYM_E_BADELF
 * Its answers are those of the full table of the same files with their
 * DWARF stripped (objcopy --strip-debug).  The module's DWARF is not
 * read, so a later sym_module_table_for() or sym_module_table() pays
 * for it as before.
 * Thread-safety: as for the module.
 */
SYM_API int sym_module_table_symbols(struct sym_module *mod,
				     struct sym_table **out);

/** Where the time of building a module's table went, in seconds. */
struct sym_module_stats {
	double symbols;	/**< sections and symbol tables */
	double inflate;	/**< decompressing debug sections, opening libdw */
	double lines;	/**< line programs */
	double dies;	/**< the walk over the DIEs, or the read of Go's
			 *   function table (.gopclntab) */
	double build;	/**< the builder's sweeps and serialization */
};

/**
 * sym_module_stats() - the phases of the table build; all zero before
 * sym_module_table() has built it.
 * @param[out] st  filled; with zeros when @mod is NULL; may be NULL (then
 *                 nothing is done)
 */
SYM_API void sym_module_stats(const struct sym_module *mod,
			      struct sym_module_stats *st);

/**
 * sym_module_lookup() - sym_module_table() followed by sym_table_lookup().
 * Same parameters as those two.
 * @return 0, or an error of sym_module_table() or sym_table_lookup()
 *         (-EINVAL for a NULL @mod, @frames or @n)
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
 *         -SYM_E_NOTREG (a FIFO, device or socket), -ERANGE (@hex too
 *         small), -EINVAL (@path or @hex NULL), -errno (-ENOENT: no such
 *         file, -EISDIR)
 */
SYM_API int sym_file_build_id(const char *path, char *hex, size_t len);

/**
 * sym_file_kernel_text() - is the file a Linux kernel (a vmlinux), by the
 * rule that makes its table SYM_TABLE_KERNEL (an executable whose .symtab
 * has _text and linux_banner)?  Then the link-time address of its _text,
 * which the table's addresses are offsets from: a link-time address A
 * (what nm, eu-addr2line and llvm-symbolizer take) is looked up as
 * A - *@text.
 * @param[out] text  set only on success
 * @return 0, -SYM_E_NOTFOUND (not a kernel, or no .symtab), -EINVAL
 *         (@path or @text NULL), or an error of sym_file_build_id()'s
 * Cost: one pass over .symtab (vmlinux: about 150,000 symbols).
 * Since 1.6.0 (LIBSYM_1.6).
 */
SYM_API int sym_file_kernel_text(const char *path, uint64_t *text);

/**
 * What a module ID is made of (since 1.4.0).  Every module is named by its
 * module ID: in raw profiles, in the store and in symd's routes.  The rule
 * (docs/store.md, "Module IDs"), the first that applies:
 *  - SYM_MODID_GNU: the GNU build ID (NT_GNU_BUILD_ID), unchanged;
 *  - SYM_MODID_GO: a Go binary built without one (Go's default) has a Go
 *    build ID note (owner "Go", type 4, section .note.go.buildid): the
 *    first 16 bytes of SHA-256 over "symd-go-build-id", a NUL byte and
 *    the note's descriptor;
 *  - SYM_MODID_FILE: any other file (a C program linked with
 *    --build-id=none): the OpenTelemetry profiler's FileID, the first 16
 *    bytes of SHA-256 over the file's first 4 KiB, its last 4 KiB (both
 *    cut to the file's size) and its size as 8 bytes big-endian.  It
 *    names the exact file: its separate debug file has another one.
 * Derived IDs print as 32 lowercase hex digits.
 */
enum sym_modid_kind {
	SYM_MODID_NONE = 0,	/**< no ID could be derived */
	SYM_MODID_GNU = 1,
	SYM_MODID_GO = 2,
	SYM_MODID_FILE = 3,
};

/**
 * sym_file_module_id() - the module ID of a file (enum sym_modid_kind's
 * rule), from its notes, or its first and last 4 KiB and its size (since
 * 1.4.0).
 * @param path   an ELF file
 * @param hex    caller's buffer for the lowercase hex ID
 * @param len    size of @hex; 2 * 64 + 1 is always enough
 * @param[out] kind  SYM_MODID_GNU, _GO or _FILE; may be NULL; untouched
 *                   on failure
 * @return 0, -SYM_E_NOTELF, -SYM_E_BADELF, -SYM_E_NOTREG, -ERANGE (@hex
 *         too small), -EINVAL (@path or @hex NULL), -EIO (the file's
 *         head or tail cannot be read), -errno
 * Thread-safety: safe.
 */
SYM_API int sym_file_module_id(const char *path, char *hex, size_t len,
			       int *kind);

/**
 * sym_module_id() - the module ID of a module's file, by the same rule as
 * sym_file_module_id() (since 1.4.0): its GNU build ID when it has one,
 * as sym_module_build_id(), else the derived one.
 * @param[out] kind  as for sym_file_module_id(); SYM_MODID_NONE when
 *                   there is none; may be NULL
 * @return borrowed from @mod, valid until sym_module_close(); NULL when
 *         no ID could be derived or @mod is NULL
 */
SYM_API const char *sym_module_id(const struct sym_module *mod, int *kind);

/**
 * sym_modid_kind_name() - "gnu", "go" or "file" for a kind, "none" for
 * SYM_MODID_NONE and any other value (since 1.4.0).
 * @return a static string; never NULL.  Thread-safety: safe.
 */
SYM_API const char *sym_modid_kind_name(int kind);

/**
 * sym_notes_build_id() - find the GNU build ID (an NT_GNU_BUILD_ID note
 * of owner "GNU") in a block of ELF notes: the bytes of one SHT_NOTE
 * section or PT_NOTE segment, read from a file or from a loaded object's
 * memory (dl_iterate_phdr()), or /sys/kernel/notes.  The one parser
 * behind sym_file_build_id() and sym_module_build_id().
 * @param notes   the notes, in the host's byte order (those of a file of
 *                the other byte order must be converted first, as
 *                libelf's elf_getdata() does); borrowed, only read during
 *                the call; may be NULL only when @len is 0
 * @param len     their size in bytes
 * @param align   the section's or segment's alignment (sh_addralign,
 *                p_align): 8 means the gABI's 8-byte notes (descriptors
 *                and notes padded to 8, headers still 12 bytes, as
 *                glibc and libelf read them), any other value the usual
 *                4-byte notes
 * @param[out] hex    the ID in lowercase hex, NUL-terminated; untouched
 *                    on failure
 * @param hexlen  size of @hex; 2 * 64 + 1 is always enough
 * @return 0 (the first build ID note, of 1 to 64 bytes: a longer one is
 *         skipped), -SYM_E_NOTFOUND (none before the end, or before the
 *         first note whose sizes run past @len: the rest is not read),
 *         -ERANGE (@hexlen too small for the ID found), -EINVAL (@hex
 *         NULL, or @notes NULL with @len > 0)
 * Thread-safety: safe; no state, no allocation.
 */
SYM_API int sym_notes_build_id(const void *notes, size_t len, size_t align,
			       char *hex, size_t hexlen);

/**
 * Go's function table read for unwinding: what the Go runtime's own
 * traceback (runtime/traceback.go) reads to find a frame's caller, for
 * Go binaries, which have no .eh_frame (and with -ldflags=-w no
 * .debug_frame either).  Opened from an ELF image with
 * sym_gofuncs_open_mem() (since 1.3.0, LIBSYM_1.3).
 */
struct sym_gofuncs;

/** What Go's table says about the function at one PC (sym_gofuncs_find()).
 * This struct is fixed (see "ABI" at the top of this file). */
struct sym_gofunc {
	/** The function: [entry, end), ELF virtual addresses. */
	uint64_t entry, end;
	/** Its pcsp value at the PC: the bytes it has taken from the stack
	 *  since its entry, the return address its caller pushed not
	 *  counted.  On x86-64 the frame's CFA, its caller's SP, is SP +
	 *  sp_delta + 8, and the return address is at CFA - 8. */
	int64_t sp_delta;
	/** enum sym_gofunc_flags */
	uint32_t flags;
};

/** Flags of struct sym_gofunc. */
enum sym_gofunc_flags {
	/** The outermost frame of a stack (the runtime's TOPFRAME flag, Go
	 *  1.17 and later: runtime.goexit, runtime.mstart, runtime.rt0_go,
	 *  runtime.sigtramp; before 1.17 the first three, by name), and Go's
	 *  entry code that the kernel jumps to (_rt0_<arch>_<os>,
	 *  _rt0_<arch>; not the _lib variants a C runtime calls): a stack
	 *  that reaches it is whole. */
	SYM_GOFUNC_TOPFRAME = (1 << 0),
	/** The function writes SP in a way pcsp cannot say (the SPWRITE
	 *  flag, Go 1.17 and later: runtime.systemstack, gogo, mcall, ...):
	 *  its caller cannot be found, and Go's own traceback stops there
	 *  as incomplete. */
	SYM_GOFUNC_SPWRITE = (1 << 1),
	/** The runtime injects calls to it into an interrupted goroutine
	 *  (runtime.asyncPreempt, runtime.sigpanic, runtime.debugCall*): its
	 *  return address is the exact PC of an instruction that did not
	 *  complete, to be looked up as is, not as PC - 1. */
	SYM_GOFUNC_INJECTED = (1 << 2),
	/** The runtime's signal return trampoline, its sa_restorer
	 *  (runtime.sigreturn; runtime.sigreturn__sigaction in later Go):
	 *  the kernel's ucontext is at SP, with the interrupted frame's
	 *  registers, and that frame's PC is exact. */
	SYM_GOFUNC_SIGRETURN = (1 << 3),
};

/**
 * sym_gofuncs_open_mem() - find Go's function table (.gopclntab, or by its
 * magic when the section headers are gone) in an ELF image and read its
 * header.  The table (Go 1.2 and later formats) is copied; the rest of the
 * image is not kept.
 * @param buf   the whole ELF file; only read during the call
 * @param len   its size in bytes
 * @param[out] out  caller owns, free with sym_gofuncs_close()
 * @return 0, -SYM_E_NOTFOUND (no Go function table), -SYM_E_BADGOPCLNTAB
 *         (a table of no known version, or whose header does not fit),
 *         -SYM_E_NOTELF, -SYM_E_BADELF, -EINVAL (@buf or @out NULL),
 *         -ENOMEM
 * Thread-safety: distinct tables are independent; sym_gofuncs_find() may
 * be called from any number of threads on one table.
 */
SYM_API int sym_gofuncs_open_mem(const void *buf, size_t len,
				 struct sym_gofuncs **out);

/** sym_gofuncs_close() - free a table; NULL is a no-op. */
SYM_API void sym_gofuncs_close(struct sym_gofuncs *t);

/**
 * sym_gofuncs_find() - the function that covers ELF address @addr, and its
 * pcsp value there.  Each call decodes the function's pcsp table up to
 * @addr (a few hundred bytes at most in real code): cache the answers.
 * @param[out] out  set on success
 * @return 0, -SYM_E_NOTFOUND (no function covers @addr),
 *         -SYM_E_BADGOPCLNTAB (the function's record or its pcsp table is
 *         damaged or does not reach @addr), -EINVAL (@t or @out NULL)
 */
SYM_API int sym_gofuncs_find(const struct sym_gofuncs *t, uint64_t addr,
			     struct sym_gofunc *out);

/**
 * How much a file can tell a symbolizer (sym_file_quality()), worst first:
 * an upload is an improvement only when its quality is higher.
 */
enum sym_quality {
	/** Dynamic symbols (.dynsym) at most: exported functions only. */
	SYM_QUALITY_NONE = 0,
	/** A symbol table (.symtab, or MiniDebugInfo's in .gnu_debugdata):
	 *  every function's name, no lines. */
	SYM_QUALITY_SYMTAB = 1,
	/** Go's function table (.gopclntab): functions, lines and inline
	 *  chains, no columns or parameters. */
	SYM_QUALITY_GOPCLNTAB = 2,
	/** DWARF (.debug_info with bytes): everything a frame can say. */
	SYM_QUALITY_DWARF = 3,
};

/**
 * sym_file_quality() - the enum sym_quality of an ELF file, from its
 * section headers alone (nothing is decompressed or parsed): DWARF when
 * .debug_info (or .zdebug_info) has bytes, else gopclntab when
 * .gopclntab (or .data.rel.ro.gopclntab) has, else symtab when .symtab
 * or .gnu_debugdata has, else none.  A separate debug file of
 * objcopy --only-keep-debug has the quality of its binary.
 * @param path  any ELF file (executable, shared object, debug file)
 * @param[out] quality  enum sym_quality; SYM_QUALITY_NONE on error
 * @return 0, -SYM_E_NOTELF, -SYM_E_BADELF, -SYM_E_NOTREG, -EINVAL (@path
 *         or @quality NULL), -errno (-ENOENT: no such file)
 * Thread-safety: safe.
 */
SYM_API int sym_file_quality(const char *path, int *quality);

/**
 * sym_quality_name() - the name of an enum sym_quality, as symd's
 * X-Sym-Quality header gives it: "none", "symtab", "gopclntab", "dwarf".
 * @return a static string; NULL for a value enum sym_quality does not
 *         name
 */
SYM_API const char *sym_quality_name(int quality);

/**
 * sym_file_section() - where the bytes of section @name are in @path, as
 * debuginfod's /buildid/<id>/section/<name> serves them (raw, compressed
 * or not).
 * @param[out] off, size  the section's file offset and size
 * @return 0, -SYM_E_NOTFOUND (no such section, or SHT_NOBITS: a debug
 *         file's .text), -SYM_E_NOTELF, -SYM_E_BADELF, -EINVAL (a NULL
 *         argument), -errno (-ENOENT: no such file)
 */
SYM_API int sym_file_section(const char *path, const char *name,
			     uint64_t *off, uint64_t *size);

/**
 * sym_path_normalize() - a source path in debuginfod's spelling: "." and
 * empty components dropped, ".." taken lexically (it removes the component
 * before it; at the root it is dropped).  Nothing is looked up on disk.
 * @param in   an absolute path
 * @param out  caller's buffer; may be @in's storage only if distinct
 * @param len  size of @out
 * @return 0, -EINVAL (@in relative or NULL, @out NULL, a component over
 *         255 bytes), -ERANGE (@out too small)
 * Since 1.4.0 (LIBSYM_1.4).  Thread-safety: safe.
 */
SYM_API int sym_path_normalize(const char *in, char *out, size_t len);

/** Called by sym_file_sources() for each path; non-zero stops. */
typedef int (*sym_source_fn)(void *ctx, const char *path);

/**
 * sym_file_sources() - the source files the line tables of @path name:
 * each file of each unit's line table joined to the unit's
 * DW_AT_comp_dir and normalized (sym_path_normalize()), in strcmp()
 * order, each once.  Paths that stay relative (no absolute comp_dir) are
 * left out: a debuginfod client cannot ask for them.
 * @param path  an ELF file with DWARF (a debug file, an unstripped binary)
 * @param fn    called per path; the string is valid during the call only
 * @return 0, the first non-zero value of @fn, -SYM_E_NOTFOUND (no DWARF),
 *         -SYM_E_NOTELF, -SYM_E_BADELF, -SYM_E_BADDWARF, -ENOMEM,
 *         -EINVAL (@path or @fn NULL), -errno
 * The line tables' file lists are read (not their programs): about a
 * second for libc's 4,126 units.  Since 1.4.0 (LIBSYM_1.4).
 */
SYM_API int sym_file_sources(const char *path, sym_source_fn fn, void *ctx);

/**
 * sym_demangle() - demangle a C++, Rust (legacy and v0) or D name, as the
 * table builder does.
 * @return caller owns, free(); NULL when @name is not a mangled name, is
 *         NULL, or memory ran out
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

/**
 * Options of sym_store_open(); declare with SYM_OPTS() (see "ABI" at the
 * top of this file).
 */
struct sym_store_opts {
	/** sizeof(struct sym_store_opts) as the caller was compiled;
	 *  SYM_OPTS() sets it. */
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
 * @param[out] buf  the directory, NUL-terminated
 * @param len       size of @buf
 * @return 0, -ERANGE (@buf too small), -SYM_E_NOTFOUND (none of the
 *         three variables is set), -EINVAL (@buf NULL)
 */
SYM_API int sym_store_default_dir(char *buf, size_t len);

/**
 * sym_store_open() - open (creating when needed) the store in @dir.
 * @param dir   the store directory; created with its parents if missing
 * @param opts  NULL for the defaults
 * @param[out] out  caller owns, free with sym_store_close(); NULL on error
 * @return 0, -errno, -SYM_E_BADSTORE (not a store, or a newer layout),
 *         -SYM_E_NOTFOUND (opened read-only and never written), -EINVAL
 *         (@dir NULL or "", @out NULL; @opts with an sz below
 *         sizeof(size_t), a non-zero byte past the fields this libsym
 *         knows, or a flag enum sym_store_flags does not name: see "ABI"
 *         at the top of this file)
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
 * @return the number of stale readers cleared (0 or more), -EINVAL (@st
 *         NULL)
 */
SYM_API int sym_store_maintain(struct sym_store *st);

/**
 * sym_store_put() - store the table of @build_id, replacing any entry.
 * @param build_id  lowercase hex, 2 to 128 digits
 * @param t         the table; copied
 * @param source    where its debug info came from (a path, "upload", a
 *                  URL); copied; may be NULL
 * @return 0, -EINVAL (@st or @t NULL, @build_id NULL or not 2 to 128 hex
 *         digits), -EROFS, -ENOSPC (disk full or the map bound reached;
 *         nothing already stored is lost), -ECANCELED (a
 *         sym_store_remove() of @build_id, from any thread or process,
 *         came while the put was under way: nothing was stored), -ENOMEM,
 *         -errno
 * Each chunk is written in its own write transaction and the metadata
 * last, so a crash mid-way leaves the old entry (or none), never a
 * half-written one; readers are never blocked.  Writes of one build ID
 * are linearizable: of two puts at once the last to commit wins, whole;
 * a remove either comes first (the put then stores its table) or
 * cancels the put; a table never appears after the remove that answered
 * 0 (docs/store.md, "Writing without tearing").
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
 * @return 0, -EEXIST, -EINVAL (@st NULL, a bad @build_id or @kind),
 *         -EROFS, -ENOSPC, -errno
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
	/** Source or reason, NUL-terminated ("" when none); copied into
	 *  the struct, cut to 511 bytes.  The caller's, like the rest. */
	char text[512];
};

/**
 * sym_store_stat_entry() - what the store holds for @build_id.
 * @param[out] e  filled (strings included: the store keeps no reference)
 * @return 0, -SYM_E_NOTFOUND (nothing, or an expired negative entry),
 *         -EINVAL (@st or @e NULL, a bad @build_id), -errno
 */
SYM_API int sym_store_stat_entry(struct sym_store *st, const char *build_id,
				 struct sym_store_entry *e);

/**
 * sym_store_has_table() - does the store hold a table for @build_id that
 * this library can read (its format and converter version)?
 * @return 1 or 0 (also for a negative entry, a stale table, a bad ID, a
 *         NULL @st or @build_id)
 */
SYM_API int sym_store_has_table(struct sym_store *st, const char *build_id);

/**
 * sym_store_table_flags() - the sym_table_stat() flags of the table
 * stored for @build_id (enum sym_table_flags; sym_table_source_name()
 * names its source), read from the header of its first chunk: no
 * lookup, no access time, no checksum of the whole table.
 * @param[out] flags  set; 0 on failure
 * @return 0, -SYM_E_NOTFOUND (no table, or a negative entry),
 *         -SYM_E_STALE (built by another format or converter),
 *         -SYM_E_BADTABLE (the chunk's header is not a table's),
 *         -EINVAL (@st or @flags NULL, a bad @build_id), -ENOMEM, -errno
 * Thread-safety: any number of threads at once.  Since 1.5.0 (LIBSYM_1.5).
 */
SYM_API int sym_store_table_flags(struct sym_store *st, const char *build_id,
				  uint32_t *flags);

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
 *         chunk failed its checksum: the entry was removed; rebuild it;
 *         a lookup through the same @st that misses the entry because
 *         of that removal gets it too, until the build ID is put again),
 *         -EINVAL (@st or @fn NULL, @addrs NULL with @count > 0, a bad
 *         @build_id), -errno
 * Each chunk's checksum is verified once per process, the first time it
 * is read; threads reading it at that moment wait for that one check
 * (all get -SYM_E_BADTABLE when it fails, and one logs it).  The access
 * time is recorded in memory and written in batches.
 */
SYM_API int sym_store_lookup(struct sym_store *st, const char *build_id,
			     const uint64_t *addrs, size_t count,
			     sym_frames_fn fn, void *ctx);

/**
 * sym_store_lookup_omit() - sym_store_lookup() without the fields @omit
 * names (enum sym_frame_omit).
 * @param omit  enum sym_frame_omit bits; 0 is sym_store_lookup()
 * @return as sym_store_lookup(); -EINVAL also for a bit of @omit this
 *         library does not name
 */
SYM_API int sym_store_lookup_omit(struct sym_store *st, const char *build_id,
				  const uint64_t *addrs, size_t count,
				  unsigned omit, sym_frames_fn fn, void *ctx);

/**
 * sym_store_remove() - delete the entry (table or negative) of @build_id,
 * its files in the file area, and cancel the puts and conversions of it
 * under way (they fail with -ECANCELED and store nothing).
 * @return 0 (there was a table, a negative entry, a file or a put under
 *         way), -SYM_E_NOTFOUND (none of them), -EROFS, -EINVAL (@st
 *         NULL, a bad @build_id), -errno
 * Readers inside a transaction keep seeing the old pages (LMDB MVCC).
 * Once it returned 0 the build ID stays gone until a put, a conversion
 * or a file store that begins after it.
 */
SYM_API int sym_store_remove(struct sym_store *st, const char *build_id);

/**
 * Called by sym_store_list() for each entry; non-zero stops.  @build_id
 * and @e are valid only during the call.
 */
typedef int (*sym_store_list_fn)(void *ctx, const char *build_id,
				 const struct sym_store_entry *e);

/**
 * sym_store_list() - every entry, in build-ID order; expired negative
 * entries are left out, as sym_store_stat_entry() does.
 * @param fn  called once per entry, inside a read transaction
 * @return 0, the first non-zero value @fn returned, -EINVAL (@st or @fn
 *         NULL), -errno
 */
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
 * @return 0, -EROFS, -ENOSPC, -ENOMEM, -EINVAL (@st NULL), -errno
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
 *         -EINVAL (@st NULL), or -errno
 */
SYM_API int sym_store_verify(struct sym_store *st, sym_store_problem_fn fn,
			     void *ctx);

/** Kinds of files in the store's file area. */
enum sym_store_file_kind {
	/** The separate debug file (debuginfod's "debuginfo"). */
	SYM_STORE_DEBUGINFO = 1,
	/** The executable or shared object ("executable"). */
	SYM_STORE_EXECUTABLE = 2,
	/** A kallsyms snapshot (docs/record.md, "The kallsyms snapshot")
	 *  that holds the build ID: its kernel's, or a module's with the
	 *  module's .text address ("kallsyms").  sym_store_convert() builds
	 *  the table from it when the store has no ELF file of the build
	 *  ID.  Since 1.6.0. */
	SYM_STORE_KALLSYMS = 3,
};

/**
 * sym_store_put_file() - copy a file into the store's file area, laid out
 * as debuginfod serves it: DIR/files/<build-id>/debuginfo or
 * .../executable.
 * @param kind  enum sym_store_file_kind
 * @param path  the file; its GNU build ID must be @build_id (a
 *              SYM_STORE_KALLSYMS snapshot: it must hold a table of
 *              @build_id, see the kind)
 * @return 0, -EINVAL (@st or @path NULL, a bad ID or kind),
 *         -SYM_E_NOTFOUND (the file has no build ID), -EXDEV (its build
 *         ID is another one; a snapshot without @build_id),
 *         -SYM_E_BADTABLE (SYM_STORE_KALLSYMS: not a snapshot, or over
 *         its limits; the reason is logged), -EROFS, -errno (copy,
 *         fsync, rename)
 * The file is written to a temporary name in the same directory, fsynced
 * and renamed, so a crash never leaves a half-written file under the real
 * name.  An existing file of the same size is kept as it is.
 */
SYM_API int sym_store_put_file(struct sym_store *st, const char *build_id,
			       int kind, const char *path);

/**
 * sym_kallsyms_check() - is the file at @path a kallsyms snapshot
 * (docs/record.md, "The kallsyms snapshot") that the store can make a
 * table of @build_id from (SYM_STORE_KALLSYMS): its kernel's, with a
 * `_text` symbol, or a module's, with the module's .text address?
 * @param[out] why  the reason of a refusal; "" otherwise
 * @return 0, -SYM_E_BADTABLE (not a snapshot, or over its limits: 256
 *         MiB, 4 M symbols, 64 K modules, 4 KiB lines), -EXDEV (no table
 *         of @build_id), -EINVAL (a NULL argument, a bad @build_id),
 *         -ENOMEM, -errno (-ENOENT: no such file)
 * The whole file is read and parsed; nothing but the file is touched.
 * Since 1.6.0 (LIBSYM_1.6).  Thread-safety: safe.
 */
SYM_API int sym_kallsyms_check(const char *path, const char *build_id,
			       char *why, size_t len);

/**
 * sym_store_file_path() - where the store keeps a file, if it has it.
 * @param[out] buf  the path
 * @return 0, -SYM_E_NOTFOUND (the store has no such file), -ERANGE (@buf
 *         too small), -EINVAL (@st or @buf NULL, a bad ID or kind)
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
 * sym_store_put_source() - keep a copy of a source file of @build_id in
 * the store's file area (debuginfod's /buildid/<id>/source/<path>), when
 * the line tables of the build ID's debug file name it.
 * @param src   the source's path as sym_file_sources() gives it
 *              (normalized, absolute)
 * @param path  the file holding its bytes; copied (left alone)
 * @param max_bytes  bound on the bytes kept for the build ID's sources,
 *              this one included; 0 for none
 * @return 0, -SYM_E_NOTFOUND (the line tables do not name @src),
 *         -ENODATA (the store has no debug file of @build_id, nor an
 *         executable whose debug file this host has), -EFBIG (over
 *         @max_bytes: nothing kept), -EINVAL (a NULL argument, a bad ID,
 *         @src not normalized), -ENAMETOOLONG, -EROFS, -SYM_E_NOTREG,
 *         -errno; the errors of sym_file_sources()
 * The debug file decides: the stored one, else the stored executable's own
 * DWARF or the debug file its search finds (as sym_store_convert() uses).
 * Its list of names is read once and kept as files/<id>/sources.list.
 * A source goes in under a temporary name and is renamed, as
 * sym_store_put_file() does; sym_store_remove() and sym_store_gc() take
 * the sources with the build ID's files.  Since 1.4.0 (LIBSYM_1.4).
 * Thread-safety: as sym_store_put_file().
 */
SYM_API int sym_store_put_source(struct sym_store *st, const char *build_id,
				 const char *src, const char *path,
				 uint64_t max_bytes);

/**
 * sym_store_source_path() - where the store keeps the source @src of
 * @build_id: its bytes are those of the file @buf from offset @off to the
 * end (a line with the path comes first).
 * @param[out] buf  the file's path
 * @param[out] off  where the source's bytes begin
 * @return 0, -SYM_E_NOTFOUND, -ERANGE (@buf too small), -EINVAL (a NULL
 *         argument, a bad ID), -errno.  Since 1.4.0 (LIBSYM_1.4).
 */
SYM_API int sym_store_source_path(struct sym_store *st, const char *build_id,
				  const char *src, char *buf, size_t len,
				  uint64_t *off);

/**
 * sym_store_warm() - verify every chunk of the table of @build_id now
 * (each chunk's checksum is checked once per process), so that later
 * sym_store_lookup() calls never pay for it.  A server calls this from a
 * worker before it answers from a table on a latency-critical thread.
 * @return 0, -SYM_E_NOTFOUND, -SYM_E_STALE, -SYM_E_BADTABLE (the entry was
 *         removed; rebuild it), -ENOMEM, -EINVAL (@st NULL, a bad
 *         @build_id), -errno
 */
SYM_API int sym_store_warm(struct sym_store *st, const char *build_id);

/** A held conversion lock (sym_store_lock()).  Opaque. */
struct sym_store_lock;

/**
 * sym_store_lock() - claim the conversion of @build_id, so that processes
 * sharing a store do not all build the same table: the first converts,
 * the others wait and then read what it stored.
 * @param wait_ms  how long to wait for another holder
 * @param[out] out     the lock; release with sym_store_unlock(); NULL on
 *                     error
 * @param[out] waited  set to 1 when another process held it first (then
 *                     look in the store again before converting); may be
 *                     NULL
 * @return 0, -ETIMEDOUT (still held after @wait_ms: convert anyway or
 *         give up; tables are written atomically either way), -EROFS,
 *         -EINVAL (@st or @out NULL, a bad @build_id), -errno
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
 * file is searched as sym_module_open() does; with neither, the stored
 * kallsyms snapshot (SYM_STORE_KALLSYMS) gives a table of names
 * (SYM_TABLE_KALLSYMS), so an ELF file stored later replaces it at its
 * next conversion.
 * @param source  recorded as the table's source (an URL, "upload"); NULL
 *                for the path of the debug file used
 * @param[out] stats  the build phases; may be NULL
 * @return 0, -SYM_E_NOTFOUND (no file), -EINVAL (@st NULL, a bad
 *         @build_id), the errors of sym_module_open(), sym_module_table()
 *         and sym_store_put(), -ECANCELED (a sym_store_remove() of
 *         @build_id came after the conversion began: nothing stored, no
 *         negative entry either)
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
 * A conversion in steps (since 1.5.0): sym_store_convert() cut in two, so
 * that a server can answer from quick tables of the same module while the
 * full table is built, and the files are opened and read once.  Opaque.
 */
struct sym_conversion;

/**
 * sym_conversion_open() - claim the conversion of @build_id (as
 * sym_store_convert() does: its lock, waiting for another process) and
 * open the files the store holds for it as a module.
 * @param source  as for sym_store_convert(); copied
 * @param[out] out  caller owns: end it with sym_conversion_finish() or
 *                  sym_conversion_close(); NULL on error
 * @return 0, -EEXIST (another process stored the table while this one
 *         waited for the lock, or the store holds no ELF file of
 *         @build_id but a kallsyms snapshot, whose table of names was
 *         stored now: nothing to do), -SYM_E_NOTFOUND (no file), -EINVAL (@st, @build_id or @out NULL, a bad @build_id),
 *         -ECANCELED, the errors of sym_module_open(); a file that
 *         cannot be converted leaves a SYM_STORE_BADCONV entry, as
 *         sym_store_convert() does
 */
SYM_API int sym_conversion_open(struct sym_store *st, const char *build_id,
				const char *source,
				struct sym_conversion **out);

/**
 * sym_conversion_module() - the conversion's module, for
 * sym_module_table_symbols() and sym_module_table_for() before
 * sym_conversion_finish() builds the full table from it (the sections
 * those calls decompressed are used again, not read twice).
 * @return borrowed from @c, valid until it ends; NULL when @c is NULL
 * Do not close it, nor call sym_module_table() on it.
 */
SYM_API struct sym_module *sym_conversion_module(struct sym_conversion *c);

/**
 * sym_conversion_table_symbols() - the table of @c's symbols alone (as
 * sym_module_table_symbols() builds it), from a module of its own opened
 * on the same files (since 1.6.0, LIBSYM_1.6).  That is what makes it
 * the one call on @c that another thread may make while @c's module
 * builds a table: a server answers "partial" from it while the lazy
 * table is built on another core, instead of after it.
 * @param[out] out  caller owns, free with sym_table_close(); NULL on
 *                  error
 * @return 0, -EINVAL (@c or @out NULL), the errors of sym_module_open()
 *         and sym_module_table_symbols()
 * Thread-safety: safe against @c's other calls but sym_conversion_finish()
 * and sym_conversion_close(), which must come after it returns.
 */
SYM_API int sym_conversion_table_symbols(struct sym_conversion *c,
					 struct sym_table **out);

/**
 * sym_conversion_finish() - build the full table, store it (or the
 * SYM_STORE_BADCONV entry that says why it cannot be built), release the
 * lock and free @c.
 * @param[out] stats  the build phases; may be NULL
 * @return as sym_store_convert(); -EINVAL when @c is NULL
 */
SYM_API int sym_conversion_finish(struct sym_conversion *c,
				  struct sym_module_stats *stats);

/**
 * sym_conversion_close() - give the conversion up: nothing is stored, the
 * lock is released, @c freed.  NULL-safe.
 */
SYM_API void sym_conversion_close(struct sym_conversion *c);

/**
 * sym_store_export() - write the stored table of @build_id to @fd, for a
 * shared object store: its chunks in address order, each a whole table
 * (sym_table_open() reads the first; each header's size leads to the
 * next).  sym_store_import() takes the bytes back.
 * @param fd        a descriptor open for writing (a local file: the read
 *                  transaction stays open while it is written)
 * @param[out] size bytes written; 0 on error; may be NULL
 * @return 0, -SYM_E_NOTFOUND (no table), -SYM_E_STALE (another format or
 *         converter), -SYM_E_BADTABLE (a chunk failed its checks: nothing
 *         is removed here, sym_store_warm() does that), -ENOMEM, -EINVAL
 *         (@st NULL, @fd < 0, a bad @build_id), -errno (of write(); what
 *         was written before is the caller's to discard)
 * Every chunk is checked (as the first lookup would) before it is
 * written, so a damaged table is never handed on.  Since 1.5.0
 * (LIBSYM_1.5).  Thread-safety: as sym_store_lookup().
 */
SYM_API int sym_store_export(struct sym_store *st, const char *build_id,
			     int fd, uint64_t *size);

/**
 * sym_store_import() - store as the table of @build_id the bytes
 * sym_store_export() wrote (on this host or another), replacing any
 * entry.
 * @param buf     the bytes; borrowed for the call; 8-byte aligned
 * @param len     their size
 * @param source  recorded as the table's source (e.g. the object's URL);
 *                copied; may be NULL
 * @return 0, -SYM_E_BADTABLE (a part is cut short, not a table, or fails
 *         sym_table_verify(): its checksum or structure; nothing stored),
 *         -SYM_E_STALE (built by another converter: nothing stored;
 *         convert instead), -EINVAL (@st or @buf NULL, @buf misaligned, a
 *         bad @build_id), -EROFS, -ENOSPC, -ECANCELED (as sym_store_put()),
 *         -ENOMEM, -errno
 * Each part is checked completely before anything is written, then
 * stored as one chunk, the metadata last, as sym_store_put() does (a
 * crash leaves the old entry or none).  The entry counts as verified: a
 * lookup checks only the checksums.  Since 1.5.0 (LIBSYM_1.5).
 * Thread-safety: as sym_store_put().
 */
SYM_API int sym_store_import(struct sym_store *st, const char *build_id,
			     const void *buf, size_t len, const char *source);

/**
 * sym_table_split() - cut a table into self-contained tables of at most
 * about @max_bytes each, in address order (each holds the ranges,
 * scopes, functions, files, strings and symbols its addresses need).
 * @param[out] parts  caller owns: sym_table_close() each, free() the array;
 *                    NULL on error
 * @param[out] n      number of parts (1 when the table already fits); 0
 *                    on error
 * @return 0, -ENOMEM, -EINVAL (@t, @parts or @n NULL, @max_bytes 0)
 */
SYM_API int sym_table_split(const struct sym_table *t, size_t max_bytes,
			    struct sym_table ***parts, size_t *n);

#ifdef __cplusplus
}
#endif

#endif /* SYM_H */
