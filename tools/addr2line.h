/*
 * addr2line.h - the engine of `sym addr2line` (tools/addr2line.c), for the
 * programs that imitate other symbolizers by the name they are started
 * under (tools/compat.c: `llvm-symbolizer`, `addr2line`).
 *
 * `sym addr2line` parses its own command line; an imitation parses its
 * peer's command line into a struct a2l_opts and hands it to a2l_run(),
 * so that every program answers with the same lookups, store and output
 * styles.  Only the grammar of the command line is the imitation's; what
 * an input line means and how an answer is printed is the engine's,
 * chosen by @input and @style.
 */
#ifndef SYM_ADDR2LINE_H
#define SYM_ADDR2LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Whose output to print. */
enum a2l_style {
	/** binutils 2.40 addr2line; with A2L_INPUT_LLVM, llvm-symbolizer's
	 *  --output-style=GNU (which differs: see docs/conformance.md). */
	STYLE_GNU,
	/** llvm-symbolizer's default output. */
	STYLE_LLVM,
	/** llvm-symbolizer --output-style=JSON. */
	STYLE_JSON,
	/** eu-addr2line. */
	STYLE_ELFUTILS,
};

/** Whose input grammar, and whose rules for names and errors. */
enum a2l_input {
	/** `sym addr2line`: hex (0x optional), SYMBOL, SYMBOL+OFF or
	 *  SYMBOL-OFF; blank lines are skipped. */
	A2L_INPUT_SYM,
	/** GNU addr2line 2.40: hex as strtoul(, 16) reads it, or
	 *  SYMBOL[+OFF]; stdin is read 99 bytes at a time, as its fgets()
	 *  does, and every piece is answered, blank ones too. */
	A2L_INPUT_GNU,
	/** llvm-symbolizer 14: [CODE |DATA |FRAME ]["FILE"|FILE ]ADDR, the
	 *  file optional with an object (@exe); ADDR as LLVM reads an
	 *  integer (0x hex, 0 octal, 0b binary, else decimal).  Each input
	 *  may name another file; a file that cannot be read is reported
	 *  once and answered "??".  Names follow llvm-symbolizer too: the
	 *  symbol table names the outermost frame, and only _Z names are
	 *  demangled. */
	A2L_INPUT_LLVM,
};

/** Which function names (llvm-symbolizer --functions=). */
enum a2l_names {
	A2L_NAMES_NONE,
	/** DW_AT_name */
	A2L_NAMES_SHORT,
	/** the linkage name, else DW_AT_name; with A2L_INPUT_LLVM the
	 *  symbol table's name for the outermost frame */
	A2L_NAMES_LINKAGE,
};

/** What a2l_run() is asked to do.  Zero it, then set what applies. */
struct a2l_opts {
	/** The ELF file; NULL: "a.out", or with A2L_INPUT_LLVM each input
	 *  names its file.  Borrowed. */
	const char *exe;
	/** Used as the separate debug file of @exe; NULL to search. */
	const char *debug_file;
	/** NULL-terminated directories to search for debug files as well;
	 *  NULL for none.  Borrowed. */
	const char *const *debuginfo_path;
	enum a2l_style style;
	enum a2l_input input;
	enum a2l_names names;
	/** Print each address first (-a). */
	bool addresses;
	/** Print the inlined-call chain (-i). */
	bool inlines;
	/** Demangle (-C). */
	bool demangle;
	/** One line per frame (-p; indented JSON). */
	bool pretty;
	/** File names without their directory (-s). */
	bool basenames;
	/** File names without the compilation directory (llvm-symbolizer
	 *  --relativenames: struct sym_frame's file_rel); -s wins. */
	bool relative_names;
	/** Subtracted from each input address before the lookup; the
	 *  address is printed as it was given (llvm --adjust-vma). */
	uint64_t adjust_vma;
	/** Addresses are offsets into a section (GNU -j): each is looked
	 *  up at @section_vma + offset, and an offset not below
	 *  @section_size has no answer ("??"); the offset is printed. */
	bool section;
	uint64_t section_vma, section_size;
};

/**
 * a2l_run() - answer @inputs (or stdin, one per line, when @ninputs is 0)
 * with @o, as `sym addr2line` does with its own options.  Messages start
 * with tool_prog().
 * @param inputs  borrowed
 * @return the exit status (enum tool_exit)
 */
int a2l_run(const struct a2l_opts *o, int ninputs, char **inputs);

/**
 * a2l_llvm_uint() - @s[0..@len) as LLVM's StringRef::getAsInteger(0)
 * reads an integer, which is how llvm-symbolizer reads addresses and
 * --adjust-vma: 0x or 0X hex, 0b or 0B binary, 0o octal, 0 and a digit
 * octal, else decimal; every character a digit below the radix; no sign.
 * @return false when it is not one, or too large (as LLVM checks it)
 */
bool a2l_llvm_uint(const char *s, size_t len, uint64_t *out);

/**
 * a2l_spelling() - a sym_spelling_fn: whether LLVM 14's demangler, the one
 * llvm-symbolizer's output needs, spells @mangled as libsym's @demangled
 * (only "_Z" names, as llvm-symbolizer demangles).  Given to every
 * sym_module_open() that may build a table, so that a warm lookup
 * through the llvm styles demangles only the names spelled otherwise.
 */
int a2l_spelling(const char *mangled, const char *demangled, void *ctx);

#endif /* SYM_ADDR2LINE_H */
